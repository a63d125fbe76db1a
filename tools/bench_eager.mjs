// Eager speed of two copies of the package side by side in one Node process: what an eager
// change did (docs/performance.md, "Eager per-op overhead").
//
//   node tools/bench_eager.mjs OLD [NEW]    OLD, NEW: package roots (a directory holding
//                                            package.json, js/ with js/dist built, examples/ and
//                                            tests/js/), NEW by default this checkout
//   env OM_BENCH_SAMPLES=7 OM_BENCH_MIN_MS=40 OM_BENCH_WARM_MS=800 OM_BENCH_MODELS=lenet,fam:gpt2
//
// For each root: small single ops on tiny tensors (per-op cost: 100 calls of each under
// om.noGrad in om.tidy), then the zoo's models (eval mode) and the test suite's model families
// (PyTorch's weights, eval mode) at batch 1 and 8, their forward under om.noGrad, one thread
// (om.setNumThreads(1) where the build has it). Each case warms both copies up (alternating,
// OM_BENCH_WARM_MS), then takes OM_BENCH_SAMPLES alternating samples of each (OLD, NEW, OLD,
// ...), a sample repeating the call for OM_BENCH_MIN_MS of this process's CPU time; medians.
// An old copy: `git archive <commit> package.json js examples tests | tar x -C DIR`, its wasm
// built from the same commit (or copied from a build of it) into DIR/js/dist, node_modules linked.
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const roots = process.argv.slice(2).map((r) => resolve(r));
if (roots.length < 1 || roots.length > 2) {
  console.error('usage: node tools/bench_eager.mjs OLD [NEW]   (package roots; NEW defaults to this checkout)');
  process.exit(2);
}
if (roots.length === 1) roots.push(ROOT);
const SAMPLES = Number(process.env.OM_BENCH_SAMPLES) || 7;
const MIN_MS = Number(process.env.OM_BENCH_MIN_MS) || 40;
const WARM_MS = Number(process.env.OM_BENCH_WARM_MS) || 800;
const only = process.env.OM_BENCH_MODELS?.split(',');
const BATCHES = [1, 8];

const cpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

/** One root's cases: [name, fn, per] (per: calls of the op in one fn call, for per-op figures). */
async function cases(root) {
  const om = await import(join(root, 'js/index.js'));
  await om.ready();
  om.setNumThreads?.(1);
  const F = om.nn.functional;
  const x = om.randn([1, 8]), w = om.randn([8, 8]), img = om.randn([1, 2, 4, 4]), k = om.randn([2, 2, 3, 3]);
  const conv = new om.nn.Conv2d(2, 2, 3, { padding: 1 });
  const ops = (f) => () => om.tidy(() => { om.noGrad(() => { let y = x; for (let i = 0; i < 100; i++) y = f(y); }); });
  const out = [
    ['op: x.relu()', ops((y) => y.relu()), 100],
    ['op: x.add(y)', ops((y) => y.add(x)), 100],
    ['op: x.add(1) (a number)', ops((y) => y.add(1)), 100],
    ['op: F.linear(x, w)', ops((y) => F.linear(y, w)), 100],
    ['op: x.view(8, 1)', ops((y) => y.view(8, 1).view(1, 8)), 200],
    ['op: F.conv2d [1,2,4,4] 3x3', () => om.tidy(() => { om.noGrad(() => { let y = img; for (let i = 0; i < 100; i++) y = F.conv2d(y, k, null, { padding: 1 }); }); }), 100],
    ['op: nn.Conv2d, the same', () => om.tidy(() => { om.noGrad(() => { let y = img; for (let i = 0; i < 100; i++) y = conv.forward(y); }); }), 100],
  ];
  const wf = await import(join(root, 'examples/lib/workflow.mjs'));
  for (const name of wf.ZOO.filter((m) => !only || only.includes(m))) {
    const file = wf.checkModelFile(await import(join(root, `examples/zoo/${name}.mjs`)), name);
    if (typeof file.model.eval === 'function') file.model.eval();
    for (const batch of BATCHES) {
      const specs = wf.describeInputs(file.inputs).map((i) => ({ ...i, shape: [batch, ...i.shape.slice(1)] }));
      const xs = Object.values(wf.makeInputs(file, specs, 11)).map((v) => v[0]);
      out.push([`${name} b${batch}`, () => om.tidy(() => { om.noGrad(() => wf.runModel(file, xs)); }), 1]);
    }
  }
  const fam = await import(join(root, 'tests/js/families.mjs'));
  for (const name of Object.keys(fam.FAMILIES).filter((f) => !only || only.includes(`fam:${f}`))) {
    const fx = fam.loadFixture(name);
    const model = fam.buildLoaded(name, fx); // eval mode
    const examples = fam.caseInputs(fx.cases[fx.trace_case]);
    for (const batch of BATCHES) {
      const xs = om.tidy(() => Object.values(examples).map((t) => t.slice(0, 0, 1).expand(batch, ...t.shape.slice(1)).contiguous()));
      out.push([`family ${name} b${batch}`, () => om.tidy(() => { om.noGrad(() => model.forward(...xs)); }), 1]);
    }
  }
  return out;
}

const all = [];
for (const r of roots) all.push(await cases(r));
const time = (fn, reps) => {
  const t0 = cpu();
  for (let i = 0; i < reps; i++) fn();
  return (cpu() - t0) / reps;
};
console.log(`eager, one thread, CPU time, median of ${SAMPLES} alternating samples; OLD ${roots[0]}, NEW ${roots[1]}`);
console.log('| case | OLD | NEW | OLD / NEW |\n|---|---:|---:|---:|');
for (let c = 0; c < all[0].length; c++) {
  const [name, , per] = all[0][c];
  const fns = all.map((cs) => cs[c][1]);
  for (const t0 = cpu(); cpu() - t0 < WARM_MS;) for (const fn of fns) fn();
  const reps = fns.map((fn) => Math.max(1, Math.ceil(MIN_MS / Math.max(time(fn, 3), 1e-3))));
  const ms = fns.map(() => []);
  for (let s = 0; s < SAMPLES; s++) fns.forEach((fn, i) => ms[i].push(time(fn, reps[i])));
  const [a, b] = ms.map(median);
  const show = (m) => (per > 1 ? `${((m / per) * 1000).toFixed(2)} µs/op` : `${m.toFixed(3)} ms`);
  console.log(`| ${name} | ${show(a)} | ${show(b)} | ${(a / b).toFixed(2)} |`);
}
process.exit(0);
