// Threads: the speed-up of 2 threads over 1 (docs/performance.md, "Threads"), through the npm
// package in Node (the threaded build), in wall time, since using more cores is the point.
//
//   npm run bench:threads                  bootstrap + build + this script
//   node tools/bench_threads.mjs           env OM_BENCH_SAMPLES=9 OM_BENCH_MIN_MS=150
//
// Cases: matmul 512 and 1024 square; conv2d 3x3 64 -> 64 channels at 56x56, batch 1 and 8
// (padding 1: the windows-in-place path) and stride 2 (im2col); whole models, eager forward
// under om.noGrad: the zoo's GPT at d 128 (batch 8 of 32 tokens) and UNet (batch 8, 64x64).
// Each case checks that 1 and 2 threads give the same bits, warms up, then takes SAMPLES
// alternating samples (1 thread, 2 threads, 1, ...) so that the load of a shared machine hits
// both alike, each repeating the call for at least MIN_MS; it prints the medians, and as the
// speed-up the median of the pairs' ratios (each 1-thread sample over the 2-thread sample taken
// right after it: this VM's speed drifts by up to 2x within a run, which a ratio of the two
// medians takes in whole), and the load average before and after (os.loadavg) to judge how busy
// the machine was.
// First the machine's own figure: a fixed scalar loop on one worker_thread, then the same loop on
// two at once (nothing shared), as wall time for the same work per thread: what 2 threads can
// give on this machine at this moment, the ceiling of the speed-ups below. tools/bench.mjs runs
// the same (runThreads) for the rows of its summary table.
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
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

/** fn's output bits on n threads. */
function bits(fn, n) {
  om.setNumThreads(n);
  const y = fn();
  const b = Buffer.from(y.toArray().buffer);
  y.dispose();
  return b;
}

/** Median wall ms per call of fn on 1 and on 2 threads, alternating samples, and the median of
 *  the paired samples' ratios (the speed-up); checks the bits first. */
function run(name, fn) {
  if (!bits(fn, 1).equals(bits(fn, 2))) throw new Error(`${name}: 1 and 2 threads differ`);
  const call = () => fn().dispose();
  for (const n of [1, 2]) {
    om.setNumThreads(n);
    sample(call);
  }
  const ms = { 1: [], 2: [] };
  for (let i = 0; i < SAMPLES; i++) {
    for (const n of [1, 2]) {
      om.setNumThreads(n);
      ms[n].push(sample(call));
    }
  }
  return { name, one: median(ms[1]), two: median(ms[2]), speedup: median(ms[1].map((v, i) => v / ms[2][i])) };
}

/** Wall ms for `threads` workers each running the same scalar loop at once. */
async function spin(threads) {
  const code = `let x = 0; for (let k = 0; k < 1e8; k++) x += k * 0.5; require('node:worker_threads').parentPort.postMessage(x);`;
  const t0 = performance.now();
  await Promise.all(Array.from({ length: threads }, () => new Promise((resolve, reject) => {
    const w = new Worker(code, { eval: true });
    w.once('message', () => w.terminate().then(resolve));
    w.once('error', reject);
  })));
  return performance.now() - t0;
}

/** The machine's own figure (how much more work 2 threads do than 1 in the same time), then every
 *  case: [{ name, one, two, speedup }] (wall ms); leaves the thread count at what it found. */
export async function runThreads() {
  const [{ GPT }, { UNet }] = [await import('../examples/zoo/gpt.mjs'), await import('../examples/zoo/unet.mjs')];
  const before = om.numThreads(), ms = { 1: [], 2: [] };
  for (let i = 0; i < 3; i++) for (const n of [1, 2]) ms[n].push(await spin(n));
  const machine = (2 * median(ms[1])) / median(ms[2]);
  const keep = [], cases = [];
  const randn = (shape, seed) => {
    const t = om.randn(shape, { seed });
    keep.push(t);
    return t;
  };
  for (const n of [512, 1024]) {
    const a = randn([n, n], 1), b = randn([n, n], 2);
    cases.push(run(`matmul ${n} x ${n} @ ${n} x ${n}`, () => a.matmul(b)));
  }
  const F = om.nn.functional;
  const w = randn([64, 64, 3, 3], 3), bias = randn([64], 4);
  for (const [batch, stride] of [[1, 1], [8, 1], [8, 2]]) {
    const x = randn([batch, 64, 56, 56], 5);
    cases.push(run(`conv2d 3x3 64->64, 56x56, batch ${batch}, stride ${stride}`, () => F.conv2d(x, w, bias, { stride, padding: 1 })));
  }
  const gpt = new GPT({ vocab: 256, d: 128, heads: 4, maxLen: 64 });
  gpt.eval();
  const ids = om.tidy(() => om.rand([8, 32], { seed: 6 }).mul(256).long());
  cases.push(run('zoo GPT d 128, batch 8 x 32 tokens (forward)', () => om.noGrad(() => gpt.forward(ids))));
  const unet = new UNet();
  const img = randn([8, 2, 64, 64], 7);
  cases.push(run('zoo UNet, batch 8 x 2 x 64 x 64 (forward)', () => om.noGrad(() => unet.forward(img))));
  om.dispose(keep);
  ids.dispose();
  gpt.dispose();
  unet.dispose();
  om.setNumThreads(before);
  return { machine, cases };
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  await om.ready();
  const load = () => loadavg().map((l) => l.toFixed(2)).join(' ');
  console.log(`threads benchmark: ${availableParallelism()} cores, ${cpus()[0]?.model ?? 'unknown CPU'}; Node ${process.version}`);
  console.log(`load average before: ${load()}; wall ms per call, median of ${SAMPLES} alternating samples of >= ${MIN_MS} ms; speed-up: the median of the paired samples' ratios\n`);
  const { machine, cases } = await runThreads();
  console.log(`the machine: the same scalar loop on 1 thread and on 2 at once: 2 threads do ${machine.toFixed(2)}x the work of 1 in the same time\n`);
  console.log(`${'case'.padEnd(44)} ${'1 thread'.padStart(9)} ${'2 threads'.padStart(9)} ${'speed-up'.padStart(8)}`);
  for (const { name, one, two, speedup } of cases)
    console.log(`${name.padEnd(44)} ${one.toFixed(2).padStart(9)} ${two.toFixed(2).padStart(9)} ${speedup.toFixed(2).padStart(7)}x`);
  console.log(`\nload average after: ${load()}`);
}
