// A/B of two builds of the package in one Node process: this checkout's (new) against another
// checkout's (old: e.g. `git worktree add /tmp/base <commit>` built with `bash tools/build.sh`),
// alternating samples on this process's CPU time, both on one thread. For kernel work: whether a
// change is faster, on the same inputs, and whether it kept the bits.
//
//   node tools/bench_ab.mjs <old checkout> [case ...]
//
// Cases (default: all): tanh, sigmoid, erf, gelu, softmax (64 x 1024 values each), layernorm32,
// layernorm128 (4096 rows), and a zoo model's .onnx (out/<name>.onnx, written by `npm start`) in
// the Session at batch 1 and 8: mlp, lenet, resnet, unet, lstm, gpt. Prints per case the median
// of 11 samples (each at least 30 ms of CPU) of both, old / new (above 1: the change is faster),
// and whether the outputs have the same bits.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const [base, ...picked] = process.argv.slice(2);
if (!base || !existsSync(join(base, 'js/index.js'))) {
  console.error('usage: node tools/bench_ab.mjs <old checkout, built> [case ...]');
  process.exit(2);
}
const builds = [await import(join(ROOT, 'js/index.js')), await import(join(resolve(base), 'js/index.js'))];
for (const om of builds) {
  await om.ready();
  om.setNumThreads?.(1);
}

const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const perRun = (run) => {
  let n = 0;
  const t0 = cpuMs();
  while (cpuMs() - t0 < 30) run(), n++;
  return (cpuMs() - t0) / n;
};

const values = (om) => om.randn([64, 1024], { seed: 1 });
const unary = (f) => (om) => {
  const x = values(om);
  return () => om.noGrad(() => f(om, x));
};
const layerNorm = (d) => (om) => {
  const x = om.randn([4096, d], { seed: 1 }), w = om.randn([d], { seed: 2 }), b = om.randn([d], { seed: 3 });
  return () => om.noGrad(() => om.nn.functional.layerNorm(x, [d], { weight: w, bias: b }));
};
const INPUTS = {
  mlp: (om, n) => om.randn([n, 2], { seed: 1 }),
  lenet: (om, n) => om.randn([n, 1, 28, 28], { seed: 1 }),
  resnet: (om, n) => om.randn([n, 3, 64, 64], { seed: 1 }),
  unet: (om, n) => om.randn([n, 2, 8, 12], { seed: 1 }),
  lstm: (om, n) => om.randn([n, 5, 6], { seed: 1 }),
  gpt: (om, n) => om.tidy(() => om.rand([n, 10], { seed: 1 }).mul(40).long()),
};
const session = (name, n) => async (om) => {
  const s = await om.InferenceSession.create(readFileSync(join(ROOT, 'out', `${name}.onnx`)));
  const feeds = { [s.inputNames[0]]: INPUTS[name](om, n) };
  return () => s.run(feeds)[s.outputNames[0]];
};
const CASES = {
  tanh: unary((om, x) => x.tanh()),
  sigmoid: unary((om, x) => x.sigmoid()),
  erf: unary((om, x) => x.erf()),
  gelu: unary((om, x) => om.nn.functional.gelu(x)),
  softmax: unary((om, x) => x.softmax(-1)),
  layernorm32: layerNorm(32),
  layernorm128: layerNorm(128),
};
for (const name of Object.keys(INPUTS)) for (const n of [1, 8]) CASES[`${name}-b${n}`] = session(name, n);

const want = (picked.length ? picked : Object.keys(CASES)).flatMap((c) => (INPUTS[c] ? [`${c}-b1`, `${c}-b8`] : [c]));
const unknown = want.filter((c) => !CASES[c]);
if (unknown.length) {
  console.error(`unknown case ${unknown.join(', ')} (cases: ${Object.keys(CASES).join(', ')})`);
  process.exit(2);
}
for (const name of want) {
  const make = CASES[name], model = name.split('-b')[0];
  if (INPUTS[model] && !existsSync(join(ROOT, 'out', `${model}.onnx`))) {
    console.log(`${name}: no out/${model}.onnx (run npm start first)`);
    continue;
  }
  const runs = await Promise.all(builds.map((om) => make(om)));
  const [a, b] = runs.map((run) => {
    const y = run(), arr = y.toArray();
    y.dispose();
    return arr;
  });
  const same = a.length === b.length && a.every((v, i) => Object.is(v, b[i]));
  const timed = runs.map((run) => () => run().dispose());
  for (let i = 0; i < 20; i++) timed.forEach((t) => t());
  const samples = [[], []];
  for (let s = 0; s < 11; s++) timed.forEach((t, k) => samples[k].push(perRun(t)));
  const [tn, to] = samples.map((v) => v.sort((x, y) => x - y)[5]);
  console.log(`${name.padEnd(14)} new ${tn.toFixed(4)} ms  old ${to.toFixed(4)} ms  old/new ${(to / tn).toFixed(2)}  ${same ? 'same bits' : 'BITS DIFFER'}`);
}
