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
// both alike, each repeating the call for at least MIN_MS; it prints the medians and their ratio,
// and the load average before and after (os.loadavg) to judge how busy the machine was.
import { availableParallelism, cpus, loadavg } from 'node:os';
import * as om from 'onemodel';
import { GPT } from '../examples/zoo/gpt.mjs';
import { UNet } from '../examples/zoo/unet.mjs';

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
  const [one, two] = [median(ms[1]), median(ms[2])];
  console.log(`${name.padEnd(44)} ${one.toFixed(2).padStart(9)} ${two.toFixed(2).padStart(9)} ${(one / two).toFixed(2).padStart(7)}x`);
}

await om.ready();
const load = () => loadavg().map((l) => l.toFixed(2)).join(' ');
console.log(`threads benchmark: ${availableParallelism()} cores, ${cpus()[0]?.model ?? 'unknown CPU'}; Node ${process.version}`);
console.log(`load average before: ${load()}; wall ms per call, median of ${SAMPLES} alternating samples of >= ${MIN_MS} ms\n`);
console.log(`${'case'.padEnd(44)} ${'1 thread'.padStart(9)} ${'2 threads'.padStart(9)} ${'speed-up'.padStart(8)}`);

const keep = [];
const randn = (shape, seed) => {
  const t = om.randn(shape, { seed });
  keep.push(t);
  return t;
};
for (const n of [512, 1024]) {
  const a = randn([n, n], 1), b = randn([n, n], 2);
  run(`matmul ${n} x ${n} @ ${n} x ${n}`, () => a.matmul(b));
}
const F = om.nn.functional;
const w = randn([64, 64, 3, 3], 3), bias = randn([64], 4);
for (const [batch, stride] of [[1, 1], [8, 1], [8, 2]]) {
  const x = randn([batch, 64, 56, 56], 5);
  run(`conv2d 3x3 64->64, 56x56, batch ${batch}, stride ${stride}`, () => F.conv2d(x, w, bias, { stride, padding: 1 }));
}
const gpt = new GPT({ vocab: 256, d: 128, heads: 4, maxLen: 64 });
gpt.eval();
const ids = om.tidy(() => om.rand([8, 32], { seed: 6 }).mul(256).long());
run('zoo GPT d 128, batch 8 x 32 tokens (forward)', () => om.noGrad(() => gpt.forward(ids)));
const unet = new UNet();
const img = randn([8, 2, 64, 64], 7);
run('zoo UNet, batch 8 x 2 x 64 x 64 (forward)', () => om.noGrad(() => unet.forward(img)));
console.log(`\nload average after: ${load()}`);
om.dispose(keep);
ids.dispose();
gpt.dispose();
unet.dispose();
