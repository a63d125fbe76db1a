// A/B of two builds of the package in one Node process: this checkout's (new) against another
// checkout's (old: e.g. `git worktree add /tmp/base <commit>` built with `bash tools/build.sh`),
// alternating samples on this process's CPU time, both on one thread. For kernel work: whether a
// change is faster, on the same inputs, and whether it kept the bits.
//
//   node tools/bench_ab.mjs <old checkout> [case ...]
//
// Cases (default: all): tanh, sigmoid, erf, gelu, pow3, softmax (64 x 1024 values each), layernorm32,
// layernorm128 (4096 rows), and a zoo model's .onnx (out/<name>.onnx, written by `npm start`) in
// the Session at batch 1 and 8: mlp, lenet, resnet, unet, lstm, gpt. Eager (`eager` picks them
// all): eager-<op>, 100 calls of a small op under om.noGrad, each on the last one's result
// (relu, add, add-number, linear, view (100 pairs), conv2d, Conv2d: tiny tensors, the per-op
// cost), and
// eager-<model>-b1/-b8, a forward under om.noGrad in eval mode of each zoo model (its file's
// example inputs at that batch) and of each of the test suite's model families
// (eager-fam-<family>: tests/js/families.mjs, PyTorch's weights), each checkout its own copy.
// Prints per case the median of 11 samples (each at least 30 ms of CPU, after a warm-up of
// at least 3 s, until neither build gets faster) of both, old / new
// (above 1: the change is faster), and whether the outputs have the same bits.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const [base, ...picked] = process.argv.slice(2);
if (!base || !existsSync(join(base, 'js/index.js'))) {
  console.error('usage: node tools/bench_ab.mjs <old checkout, built> [case ...]');
  process.exit(2);
}
const roots = [ROOT, resolve(base)];
const builds = await Promise.all(roots.map((r) => import(join(r, 'js/index.js'))));
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
  pow3: unary((om, x) => x.pow(3)),
  softmax: unary((om, x) => x.softmax(-1)),
  layernorm32: layerNorm(32),
  layernorm128: layerNorm(128),
};
for (const name of Object.keys(INPUTS)) for (const n of [1, 8]) CASES[`${name}-b${n}`] = session(name, n);

// eager: small ops 100 at a time, then whole models (each checkout's zoo files and families)
const eagerOps = (f, start) => (om) => {
  const x = start(om), w = om.randn([8, 8], { seed: 2 }), k = om.randn([2, 2, 3, 3], { seed: 3 });
  const conv = new om.nn.Conv2d(2, 2, 3, { padding: 1 });
  return () => om.tidy(() => om.noGrad(() => {
    let y = x;
    for (let i = 0; i < 100; i++) y = f(om, y, { x, w, k, conv });
    return y;
  }));
};
const row = (om) => om.randn([1, 8], { seed: 1 }), image = (om) => om.randn([1, 2, 4, 4], { seed: 1 });
Object.assign(CASES, {
  'eager-relu': eagerOps((om, y) => y.relu(), row),
  'eager-add': eagerOps((om, y, { x }) => y.add(x), row),
  'eager-add-number': eagerOps((om, y) => y.add(1), row),
  'eager-linear': eagerOps((om, y, { w }) => om.nn.functional.linear(y, w), row),
  'eager-view': eagerOps((om, y) => y.view(8, 1).view(1, 8), row),
  'eager-conv2d': eagerOps((om, y, { k }) => om.nn.functional.conv2d(y, k, null, { padding: 1 }), image),
  'eager-Conv2d': eagerOps((om, y, { conv }) => conv.forward(y), image),
});
const eagerZoo = (name, n) => async (om, root) => {
  const wf = await import(join(root, 'examples/lib/workflow.mjs'));
  const file = wf.checkModelFile(await import(join(root, `examples/zoo/${name}.mjs`)), name);
  file.model.eval?.();
  const specs = wf.describeInputs(file.inputs).map((i) => ({ ...i, shape: [n, ...i.shape.slice(1)] }));
  const xs = Object.values(wf.makeInputs(file, specs, 11)).map((v) => v[0]);
  return () => om.tidy(() => om.noGrad(() => [wf.runModel(file, xs)].flat()[0]));
};
const eagerFamily = (name, n) => async (om, root) => {
  const fam = await import(join(root, 'tests/js/families.mjs'));
  const fx = fam.loadFixture(name);
  const model = fam.buildLoaded(name, fx); // eval mode
  const examples = fam.caseInputs(fx.cases[fx.trace_case]);
  const xs = om.tidy(() => Object.values(examples).map((t) => t.slice(0, 0, 1).expand(n, ...t.shape.slice(1)).contiguous()));
  return () => om.tidy(() => om.noGrad(() => model.forward(...xs)));
};
const FAMILIES = ['rnn_classifier', 'gpt', 'resnet', 'unet', 'mobilenet', 'gpt2'];
for (const n of [1, 8]) {
  for (const name of Object.keys(INPUTS)) CASES[`eager-${name}-b${n}`] = eagerZoo(name, n);
  for (const name of FAMILIES) CASES[`eager-fam-${name}-b${n}`] = eagerFamily(name, n);
}

const want = (picked.length ? picked : Object.keys(CASES)).flatMap((c) => (INPUTS[c] ? [`${c}-b1`, `${c}-b8`]
  : c === 'eager' ? Object.keys(CASES).filter((k) => k.startsWith('eager-')) : [c]));
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
  const runs = await Promise.all(builds.map((om, k) => make(om, roots[k])));
  const [a, b] = runs.map((run) => {
    const y = run(), arr = y.toArray();
    y.dispose();
    return arr;
  });
  const same = a.length === b.length && a.every((v, i) => Object.is(v, b[i]));
  const timed = runs.map((run) => () => run().dispose());
  // V8 tiers up the JS and wasm functions a case runs for seconds of CPU under load: at least
  // 3 s, then rounds of both until neither got faster than its best before (up to 6 s; a fixed
  // second left the first eager case of a run unsettled, at 2 to 4 times its time, and 20 runs
  // of a session case left it at 1.3 to 3 times)
  const warm = cpuMs();
  for (let i = 0; i < 20 || cpuMs() - warm < 3000; i++) timed.forEach((t) => t());
  for (let best = [Infinity, Infinity]; cpuMs() - warm < 6000;) {
    const now = timed.map(perRun);
    if (now.every((v, k) => v >= best[k])) break;
    best = best.map((v, k) => Math.min(v, now[k]));
  }
  const samples = [[], []];
  for (let s = 0; s < 11; s++) timed.forEach((t, k) => samples[k].push(perRun(t)));
  const [tn, to] = samples.map((v) => v.sort((x, y) => x - y)[5]);
  console.log(`${name.padEnd(14)} new ${tn.toFixed(4)} ms  old ${to.toFixed(4)} ms  old/new ${(to / tn).toFixed(2)}  ${same ? 'same bits' : 'BITS DIFFER'}`);
}
