// Threads: the speed-up of 2 threads over 1 (docs/performance.md, "Threads"), through the npm
// package in Node (the threaded build), in wall time, since using more cores is the point, next to
// what this machine gives two cores at that moment.
//
//   npm run bench:threads                  bootstrap + build + this script
//   node tools/bench_threads.mjs           env OM_BENCH_SAMPLES=9 OM_BENCH_MIN_MS=150
//
// Cases: matmul 512 and 1024 square; conv2d 3x3 64 -> 64 channels at 56x56, batch 1 (the product
// in bands of output rows) and 8 (padding 1: the windows-in-place path) and stride 2 (im2col);
// whole models, eager forward under om.noGrad: the zoo's GPT at d 128 (batch 8 of 32 tokens) and
// UNet (batch 8, 64x64).
// Each case first checks that 1 and 2 threads give the same bits, warms up, then takes SAMPLES
// rounds of three alternating arms, each repeating the call for at least MIN_MS:
//   1 thread    this process's instance on om.setNumThreads(1);
//   2 threads   the same on om.setNumThreads(2);
//   ceiling     two worker_threads, each with an instance of its own on 1 thread and the same case
//               built from the same seeds, running it at the same time: nothing shared, so
//               2 x (1 thread) / (their time per call) is the most two threads can give on this
//               machine at that moment (a 2-vCPU VM whose host is busy gives less than 2, and its
//               speed drifts by up to 2x within a run).
// It prints the medians, the speed-up (the median over rounds of 1 thread / 2 threads), the
// ceiling (the median of 2 x 1 thread / the instances' mean time) and the efficiency (the median
// of each round's speed-up over its ceiling: 1 is all the machine gave), and the load average
// before and after (os.loadavg) to judge how busy the machine was. tools/bench.mjs runs the same
// (runThreads) for the rows of its summary table.
import { pathToFileURL } from 'node:url';
import { Worker, isMainThread, parentPort } from 'node:worker_threads';
import { availableParallelism, cpus, loadavg } from 'node:os';
import * as om from 'onemodel';

const SAMPLES = Number(process.env.OM_BENCH_SAMPLES) || 9;
const MIN_MS = Number(process.env.OM_BENCH_MIN_MS) || 150;

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b), h = s.length >> 1;
  return s.length % 2 ? s[h] : (s[h - 1] + s[h]) / 2;
};

/** ms per call of fn, repeated for at least MIN_MS (and at least twice). */
function sample(fn) {
  let reps = 0;
  const t0 = performance.now();
  let t;
  do {
    fn();
    reps++;
    t = performance.now() - t0;
  } while (t < MIN_MS || reps < 2);
  return t / reps;
}

/** The cases on this thread's instance, from fixed seeds: [{ name, fn }] (fn returns a tensor
 *  the caller disposes), and dispose() for their inputs and models. */
async function makeCases() {
  const [{ GPT }, { UNet }] = [await import('../examples/zoo/gpt.mjs'), await import('../examples/zoo/unet.mjs')];
  const keep = [], cases = [];
  const randn = (shape, seed) => {
    const t = om.randn(shape, { seed });
    keep.push(t);
    return t;
  };
  for (const n of [512, 1024]) {
    const a = randn([n, n], 1), b = randn([n, n], 2);
    cases.push({ name: `matmul ${n} x ${n} @ ${n} x ${n}`, fn: () => a.matmul(b) });
  }
  const F = om.nn.functional;
  const w = randn([64, 64, 3, 3], 3), bias = randn([64], 4);
  for (const [batch, stride] of [[1, 1], [8, 1], [8, 2]]) {
    const x = randn([batch, 64, 56, 56], 5);
    cases.push({ name: `conv2d 3x3 64->64, 56x56, batch ${batch}, stride ${stride}`, fn: () => F.conv2d(x, w, bias, { stride, padding: 1 }) });
  }
  om.manualSeed(6);
  const gpt = new GPT({ vocab: 256, d: 128, heads: 4, maxLen: 64 });
  gpt.eval();
  const ids = om.tidy(() => om.rand([8, 32], { seed: 6 }).mul(256).long());
  keep.push(ids);
  cases.push({ name: 'zoo GPT d 128, batch 8 x 32 tokens (forward)', fn: () => om.noGrad(() => gpt.forward(ids)) });
  const unet = new UNet();
  const img = randn([8, 2, 64, 64], 7);
  cases.push({ name: 'zoo UNet, batch 8 x 2 x 64 x 64 (forward)', fn: () => om.noGrad(() => unet.forward(img)) });
  return { cases, dispose: () => (om.dispose(keep), gpt.dispose(), unet.dispose()) };
}

/** A ceiling worker: builds the cases on its own instance at 1 thread, then for each message
 *  (a case's index) answers with that case's ms per call (one sample). */
async function serveCeiling() {
  await om.ready();
  om.setNumThreads(1);
  const { cases } = await makeCases();
  parentPort.on('message', (i) => parentPort.postMessage(sample(() => cases[i].fn().dispose())));
  parentPort.postMessage('ready');
}

/** Two ceiling workers, each with an instance of its own; run(i) is their mean ms per call of
 *  case i, run by both at the same time. */
async function ceilingPair() {
  const workers = [0, 1].map(() => new Worker(new URL(import.meta.url)));
  await Promise.all(workers.map((w) => new Promise((resolve, reject) => {
    w.once('message', resolve);
    w.once('error', reject);
  })));
  const run = async (i) => {
    const ms = await Promise.all(workers.map((w) => new Promise((resolve) => {
      w.once('message', resolve);
      w.postMessage(i);
    })));
    return (ms[0] + ms[1]) / 2;
  };
  return { run, close: () => Promise.all(workers.map((w) => w.terminate())) };
}

/** fn's output bits on n threads. */
function bits(fn, n) {
  om.setNumThreads(n);
  const y = fn();
  const b = Buffer.from(y.toArray().buffer);
  y.dispose();
  return b;
}

/** Every case: [{ name, one, two, pair, speedup, ceiling, efficiency }] (wall ms per call: 1
 *  thread, 2 threads, each of the two 1-thread instances at once); checks the bits first; leaves
 *  the thread count at what it found. */
export async function runThreads() {
  const before = om.numThreads();
  const { cases, dispose } = await makeCases();
  const ceiling = await ceilingPair();
  const out = [];
  for (const [i, { name, fn }] of cases.entries()) {
    if (!bits(fn, 1).equals(bits(fn, 2))) throw new Error(`${name}: 1 and 2 threads differ`);
    const call = () => fn().dispose();
    const ms = { 1: [], 2: [], pair: [] };
    const round = async (keep) => {
      for (const n of [1, 2]) {
        om.setNumThreads(n);
        const t = sample(call);
        if (keep) ms[n].push(t);
      }
      const t = await ceiling.run(i);
      if (keep) ms.pair.push(t);
    };
    await round(false); // warm-up
    for (let s = 0; s < SAMPLES; s++) await round(true);
    const speedups = ms[1].map((v, s) => v / ms[2][s]), ceilings = ms[1].map((v, s) => (2 * v) / ms.pair[s]);
    out.push({
      name, one: median(ms[1]), two: median(ms[2]), pair: median(ms.pair), speedup: median(speedups), ceiling: median(ceilings),
      efficiency: median(speedups.map((v, s) => v / ceilings[s])),
    });
  }
  await ceiling.close();
  dispose();
  om.setNumThreads(before);
  return out;
}

if (!isMainThread) {
  await serveCeiling();
} else if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  await om.ready();
  const load = () => loadavg().map((l) => l.toFixed(2)).join(' ');
  console.log(`threads benchmark: ${availableParallelism()} cores, ${cpus()[0]?.model ?? 'unknown CPU'}; Node ${process.version}`);
  console.log(`load average before: ${load()}; wall ms per call, median of ${SAMPLES} rounds of alternating samples of >= ${MIN_MS} ms`);
  console.log(`speed-up: 1 thread / 2 threads; ceiling: 2 x 1 thread / two 1-thread instances at once; efficiency: speed-up / ceiling (medians over rounds)\n`);
  const cases = await runThreads();
  console.log(`${'case'.padEnd(44)} ${'1 thread'.padStart(9)} ${'2 threads'.padStart(9)} ${'2 inst.'.padStart(9)} ${'speed-up'.padStart(8)} ${'ceiling'.padStart(8)} ${'effic.'.padStart(7)}`);
  for (const c of cases)
    console.log(`${c.name.padEnd(44)} ${c.one.toFixed(2).padStart(9)} ${c.two.toFixed(2).padStart(9)} ${c.pair.toFixed(2).padStart(9)} ` +
      `${c.speedup.toFixed(2).padStart(7)}x ${c.ceiling.toFixed(2).padStart(7)}x ${c.efficiency.toFixed(2).padStart(7)}`);
  console.log(`\nload average after: ${load()}`);
}
