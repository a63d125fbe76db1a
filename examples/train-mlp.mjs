// Train a 2 -> 16 -> 1 MLP (ReLU) by hand with onemodel tensors and autograd, trace the
// trained model to ONNX with a symbolic batch axis, save it, and check it with onnxruntime-web
// at the traced batch and at another one.
//
//   node examples/train-mlp.mjs [out.onnx]  (after `npm run build`; default out/mlp.onnx)
//
// The data is made here: 128 points x in [-1, 1]^2 with target y = x0^2 + x0*x1 - 0.5*x1.
// Each step runs inside om.tidy(), so everything a step makes is freed when it ends; the
// parameters live outside and are updated in place under om.noGrad().
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import * as om from 'onemodel';
import { checkTraced } from '../tools/trace_oracle.mjs';

await om.ready();

const N = 128, HIDDEN = 16, STEPS = 50, LR = 0.1;

// ---- data ----
const [x, y] = om.tidy(() => {
  const x = om.rand([N, 2], { seed: 11 }).mul(2).sub(1);              // uniform in [-1, 1)
  const x0 = x.select(1, 0), x1 = x.select(1, 1);
  const y = x0.mul(x0).add(x0.mul(x1)).sub(x1.mul(0.5)).unsqueeze(1); // [N, 1]
  return [x, y];
});

// ---- parameters (He-style scaling) ----
const params = om.tidy(() => ({
  w1: om.randn([2, HIDDEN], { seed: 1 }).mul(Math.sqrt(2 / 2)),
  b1: om.zeros([HIDDEN]),
  w2: om.randn([HIDDEN, 1], { seed: 2 }).mul(Math.sqrt(2 / HIDDEN)),
  b2: om.zeros([1]),
}));
for (const p of Object.values(params)) p.requiresGrad = true;

const forward = (input) => {
  const { w1, b1, w2, b2 } = params;
  return input.matmul(w1).add(b1).relu().matmul(w2).add(b2);
};

// ---- training: full-batch SGD on the mean squared error ----
let first = NaN, last = NaN;
for (let step = 0; step <= STEPS; step++) {
  const loss = om.tidy(() => {
    const l = forward(x).sub(y).pow(2).mean();
    if (step === STEPS) return l.item(); // evaluate only after the last update
    l.backward();
    om.noGrad(() => {
      for (const p of Object.values(params)) p.copy_(p.sub(p.grad.mul(LR)));
    });
    for (const p of Object.values(params)) p.zeroGrad();
    return l.item();
  });
  if (step === 0) first = loss;
  last = loss;
  if (step % 10 === 0) console.log(`step ${String(step).padStart(2)}  loss ${loss.toFixed(5)}`);
}

console.log(`trained: loss ${first.toFixed(5)} -> ${last.toFixed(5)} after ${STEPS} steps` +
  ` (${(100 * (1 - last / first)).toFixed(1)}% lower)`);

// ---- trace: one eager run on the training inputs, the batch axis symbolic ----
const traced = om.tidy(() => {
  const tracer = om.Tracer.begin();
  const input = tracer.input('x', x, ['batch', null]);
  for (const [name, p] of Object.entries(params)) tracer.parameter(name, p);
  return tracer.finish({ y: forward(input) });
});
const path = process.argv[2] ?? 'out/mlp.onnx';
mkdirSync(dirname(path), { recursive: true });
const graph = traced.graph();
console.log(`traced: ${graph.nodes.map((n) => n.opType).join(' -> ')}; initializers ` +
  `${graph.initializers.map((i) => i.name).join(', ')}; input [${traced.inputs[0].shape}] -> output [${traced.outputs[0].shape}]`);
console.log(`saved ${path} (${traced.saveOnnx(path)} bytes)`);

// ---- verify: onnxruntime-web runs the file and agrees with eager, at two batch sizes ----
for (const batch of [N, 5]) {
  const xs = om.rand([batch, 2], { seed: 100 + batch });
  const eager = om.tidy(() => om.noGrad(() => forward(xs)));
  const report = await checkTraced(traced, { x: xs }, { y: eager });
  console.log(`onnxruntime-web at batch ${batch}: max |onnx - eager| = ${report.outputs[0].maxError.toExponential(2)}`);
  om.dispose([xs, eager]);
}

traced.dispose();
om.dispose([x, y, params]);
const mem = om.memory();
console.log(`done: live tensors ${mem.tensors}, bytes ${mem.bytes}`);
