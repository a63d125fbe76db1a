// ONNX files exported by PyTorch (tools/pytorch_onnx.py: torch.onnx.export, opset 17, dynamic
// batch and sequence or spatial axes) run in the library's Session at every shape PyTorch ran
// them at, against PyTorch's outputs; onnxruntime-web on the same files is the peer. Graphs that
// did not come from onemodel's tracer: other node patterns (BatchNorm folded into Conv, Gemm with
// and without transB, GELU as arithmetic, LSTM and GRU with their Transpose/Squeeze scaffolding,
// Resize, Shape chains).
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import * as om from 'onemodel';
import { runOnnx, compareOutputs } from '../../examples/lib/oracle.mjs';
import { memoryHooks } from './helpers.mjs';

memoryHooks();

const dir = new URL('./fixtures/pytorch/onnx/', import.meta.url);
const names = readdirSync(dir).filter((f) => f.endsWith('.onnx')).map((f) => f.slice(0, -5)).sort();

/** A fixture tensor as an om.Tensor. */
function tensorOf(e) {
  const data = e.dtype === 'int64' ? e.data.map(BigInt) : e.data;
  return om.tensor(data, { dtype: e.dtype, shape: e.shape });
}

describe('PyTorch-exported ONNX files in the Session', () => {
  test('there are fixtures', () => assert.ok(names.length >= 9, names.join(', ')));
  for (const name of names) {
    const fx = JSON.parse(readFileSync(new URL(`${name}.json`, dir), 'utf8'));
    test(`${name}: ${fx.model}`, async () => {
      const bytes = readFileSync(new URL(`${name}.onnx`, dir));
      const session = await om.InferenceSession.create(bytes);
      const exact = await om.InferenceSession.create(bytes, { mode: 'exact' });
      try {
        const outNames = fx.cases[0].outputs.map((o) => o.name);
        assert.deepEqual(session.outputNames, outNames);
        for (const c of fx.cases) {
          const at = c.inputs.map((i) => `${i.name} [${i.shape}]`).join(', ');
          const expected = c.outputs.map((o) => ({ dtype: o.dtype, shape: o.shape, data: o.data.map(Number) }));
          const got = om.tidy(() => {
            const outs = session.run(Object.fromEntries(c.inputs.map((i) => [i.name, tensorOf(i)])));
            return Object.fromEntries(Object.entries(outs).map(([k, t]) => [k, { dtype: t.dtype, dims: t.shape, data: Array.from(t.toArray(), Number) }]));
          });
          const mine = compareOutputs(outNames, expected, got, 1e-5);
          assert.deepEqual(mine.problems, [], `the Session at ${at}`);
          const same = om.tidy(() => { // fast mode's rewrites (attention, BatchNorm folding) against exact mode
            const outs = exact.run(Object.fromEntries(c.inputs.map((i) => [i.name, tensorOf(i)])));
            return Object.fromEntries(Object.entries(outs).map(([k, t]) => [k, { dtype: t.dtype, dims: t.shape, data: Array.from(t.toArray(), Number) }]));
          });
          assert.deepEqual(compareOutputs(outNames, expected, same, 1e-5).problems, [], `exact mode at ${at}`);
          if (/TransformerEncoderLayer|GPT-2/.test(fx.model)) { // the exporters' attention, GELU and Linear nodes: fast mode's fused kernels (tests/js/session-passes.test.mjs)
            const kernels = session.planKernels;
            for (const op of ['attention', 'gelu', 'linear']) assert.ok(kernels.includes(op), `${op} in ${kernels.join(' ')}`);
            assert.deepEqual(kernels.filter((k) => ['softmax', 'matmul', 'erf', 'tanh'].includes(k)), [], kernels.join(' '));
          }
          const feeds = Object.fromEntries(c.inputs.map((i) => [i.name, { dtype: i.dtype, data: i.dtype === 'int64' ? BigInt64Array.from(i.data.map(BigInt)) : Float32Array.from(i.data), dims: i.shape }]));
          const ort = compareOutputs(outNames, expected, await runOnnx(bytes, feeds), 1e-5);
          assert.deepEqual(ort.problems, [], `onnxruntime-web at ${at}`);
        }
      } finally {
        session.dispose();
        exact.dispose();
      }
    });
  }
});
