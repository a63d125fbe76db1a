// Planning time: a chain of N Relu nodes (tools/onnx_bytes.mjs) opened by om.InferenceSession in
// WASM, then its first run (which makes the plan) and a second (which reuses it).
//
//   npm run bench:plan            100,000 and 200,000 nodes
//   node tools/bench_plan.mjs N   N nodes
import * as om from 'onemodel';
import { reluChain } from './onnx_bytes.mjs';

await om.ready();
const sizes = process.argv.length > 2 ? process.argv.slice(2).map(Number) : [100000, 200000];
for (const n of sizes) {
  const bytes = reluChain(n);
  const t0 = performance.now();
  const s = await om.InferenceSession.create(bytes);
  const t1 = performance.now();
  const x = om.randn([2, 2], { seed: 1 });
  s.run({ x }).y.dispose();
  const t2 = performance.now();
  s.run({ x }).y.dispose();
  const t3 = performance.now();
  console.log(`relu chain n=${n} bytes=${bytes.length} create_ms=${(t1 - t0).toFixed(0)} first_run_ms=${(t2 - t1).toFixed(0)} ` +
              `second_run_ms=${(t3 - t2).toFixed(1)} plan_kernels=${s.planKernels.length} plan_bytes=${s.planBytes}`);
  x.dispose();
  s.dispose();
}
