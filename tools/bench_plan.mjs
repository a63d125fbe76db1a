// Planning time: a chain of N nodes (tools/onnx_bytes.mjs) opened by om.InferenceSession in
// WASM, then its first run (which makes the plan) and a second (which reuses it); wall time, and
// this process's CPU time for the three (a shared machine's wall time is mostly waiting).
//
//   npm run bench:plan                     Relu chains of 100,000 and 200,000 nodes
//   node tools/bench_plan.mjs [KIND] N...  N nodes of KIND: relu (the default); mixed (Relu, Add and
//                                          Mul of a constant, Neg, Sigmoid in turn); skip (each node
//                                          an Add of the two values before it: two buffers alive);
//                                          fanin (N - 1 Relu branches of x and Concats of them all:
//                                          every branch alive until the end); web (the mixed chain,
//                                          every tenth node a branch off it that Concats gather with
//                                          the chain's end: a tenth of the values alive)
import * as om from 'onemodel';
import { onnxBytes, reluChain } from './onnx_bytes.mjs';

const KINDS = {
  mixed: (v, k, out) => [{ op: 'Relu', inputs: [v] }, { op: 'Add', inputs: [v, 'c'] }, { op: 'Mul', inputs: ['c', v] }, { op: 'Neg', inputs: [v] },
                         { op: 'Sigmoid', inputs: [v] }].map((n) => ({ ...n, outputs: [out] }))[k % 5],
  skip: (v, k, out, before) => ({ op: 'Add', inputs: [v, before], outputs: [out] }),
};

/** Concat nodes gathering names into out along axis 0, at most 4,000 inputs each (the op table
 * takes 4,096): one node, or a Concat of Concats. */
function gather(names, out) {
  if (names.length <= 4000) return [{ op: 'Concat', inputs: names, outputs: [out], ints: { axis: 0 } }];
  const parts = [];
  for (let k = 0; k < names.length; k += 4000) parts.push({ op: 'Concat', inputs: names.slice(k, k + 4000), outputs: [`${out}_${k / 4000}`], ints: { axis: 0 } });
  return [...parts, ...gather(parts.map((p) => p.outputs[0]), out)];
}

/** Graphs that are no chain: about n nodes, each branch a value alive until the Concats at the end read it. */
const FANS = {
  fanin: (n) => {
    const names = Array.from({ length: n - 1 }, (_, k) => `b${k}`);
    return [...names.map((b) => ({ op: 'Relu', inputs: ['x'], outputs: [b] })), ...gather(names, 'y')];
  },
  web: (n) => {
    const nodes = [], gathered = [];
    let v = 'x';
    for (let k = 0; k < n - 1; k++) {
      if (k % 10 === 9) {
        gathered.push(`b${k}`);
        nodes.push({ op: 'Sigmoid', inputs: [v], outputs: [`b${k}`] });
      } else {
        nodes.push({ ...KINDS.mixed(v, k, `v${k}`), outputs: [`v${k}`] });
        v = `v${k}`;
      }
    }
    return [...nodes, ...gather([v, ...gathered], 'y')];
  },
};

/** The file of n nodes of kind: node k reads v_k (x for the first) and writes v_{k+1} (y for the last). */
function chain(kind, n) {
  if (kind === 'relu') return reluChain(n);
  if (FANS[kind]) return onnxBytes({ nodes: FANS[kind](n), inputs: [{ name: 'x', dims: ['n', 2] }], outputs: ['y'],
                                     inits: [{ name: 'c', dtype: 'float32', dims: [2], values: [0.5, -0.25] }] });
  const name = (k) => (k <= 0 ? 'x' : k >= n ? 'y' : `v${k}`);
  const nodes = Array.from({ length: n }, (_, k) => KINDS[kind](name(k), k, name(k + 1), name(k - 1)));
  return onnxBytes({ nodes, inputs: [{ name: 'x', dims: ['n', 2] }], outputs: ['y'], inits: [{ name: 'c', dtype: 'float32', dims: [2], values: [0.5, -0.25] }] });
}

const args = process.argv.slice(2);
const kind = args.length && !/^\d+$/.test(args[0]) ? args.shift() : 'relu';
if (kind !== 'relu' && !KINDS[kind] && !FANS[kind]) throw new Error(`bench_plan: no kind ${kind} (relu, ${[...Object.keys(KINDS), ...Object.keys(FANS)].join(', ')})`);
await om.ready();
const sizes = args.length ? args.map(Number) : [100000, 200000];
const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };
for (const n of sizes) {
  const bytes = chain(kind, n);
  const c0 = cpu(), t0 = performance.now();
  const s = await om.InferenceSession.create(bytes);
  const t1 = performance.now();
  const x = om.randn([2, 2], { seed: 1 });
  s.run({ x }).y.dispose();
  const t2 = performance.now();
  s.run({ x }).y.dispose();
  const t3 = performance.now(), c1 = cpu();
  console.log(`${kind} chain n=${n} bytes=${bytes.length} create_ms=${(t1 - t0).toFixed(0)} first_run_ms=${(t2 - t1).toFixed(0)} ` +
              `second_run_ms=${(t3 - t2).toFixed(1)} cpu_ms=${(c1 - c0).toFixed(0)} plan_kernels=${s.planKernels.length} plan_bytes=${s.planBytes}`);
  x.dispose();
  s.dispose();
}
