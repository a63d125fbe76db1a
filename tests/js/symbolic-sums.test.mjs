// Sums along an axis that grows with a symbol (docs/symbolic-axes.md, "What each op writes"):
// eager sums float32 in double and rounds once, onnxruntime sums float32 in float32 in
// its own order, so a traced ReduceSum, ReduceMean or CumSum over a long symbolic axis drifts from
// eager by a rounding that grows with the length (random models 22:1562 and 22:2471 were 1.2 and
// 1.3 times the oracle's bound at 8 times their example). The tracer writes those sums in float64
// (Cast, the sum, Cast back), which gives eager's bits. Each model is traced at one size and run
// in onnxruntime-web and the Session at sizes far from it, odd and 1, and compared with eager
// bit for bit; a sum over a fixed axis stays float32 (no Cast).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as om from 'onemodel';
import { withSession } from '../../examples/lib/oracle.mjs';
import { memoryHooks } from './helpers.mjs';

memoryHooks();

const ops = (tm) => tm.graph().nodes.map((n) => n.opType);
const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);
/** The bits of a float32 (NaN as one value), to compare outputs exactly. */
const bits = (v) => (Number.isNaN(v) ? 'NaN' : ((f32[0] = v), u32[0]));

/**
 * Traces fn on x of shape(example) with axes symbolic, then at each size: eager, the .onnx in
 * onnxruntime-web and the traced model's Session give the same bits. Returns the graph's ops.
 */
async function sameBits(fn, shape, axes, example, sizes) {
  const x0 = om.randn(shape(example), { seed: 7 });
  const tm = om.trace(fn, { x: [x0, axes] });
  const session = tm.session();
  try {
    const name = tm.outputs[0].name;
    await withSession(tm.toOnnx(), async (run) => {
      for (const s of sizes) {
        const x = om.randn(shape(s), { seed: 300 + s });
        const want = om.tidy(() => fn(x));
        const e = Array.from(want.toArray(), bits);
        const got = om.tidy(() => Array.from(session.run({ x })[name].toArray(), bits));
        const ort = await run({ x: { dtype: 'float32', data: x.toArray(), dims: x.shape } });
        const dims = want.shape;
        x.dispose();
        want.dispose();
        assert.deepEqual(ort[name].dims, dims, `onnxruntime-web's shape at ${s}`);
        assert.deepEqual(Array.from(ort[name].data, bits), e, `onnxruntime-web at ${s}`);
        assert.deepEqual(got, e, `the Session at ${s}`);
      }
    });
    return ops(tm);
  } finally {
    session.dispose();
    tm.dispose();
    x0.dispose();
  }
}

// the shape of 22:1562 without its sigmoid, whose kernels differ in the last bit by themselves
test('a sum of every element scales the input (a sum over 3*T*7 values): eager bits', async () => {
  const fn = (x) => { const v = x.reshape(-1); return v.mul(v.sum(0, true)); };
  const seen = await sameBits(fn, (t) => [3, t, 7], [null, 'T', null], 9, [1, 2, 9, 13, 171, 1203]);
  assert.deepEqual(seen.filter((o) => o === 'Cast').length, 2, `${seen}`);
});

test('a running sum of centred values over a symbolic length: eager bits to the last, near-0 element', async () => {
  const fn = (x) => x.sub(x.mean(-1, true)).cumsum(-1);
  const seen = await sameBits(fn, (t) => [2, t], [null, 'L'], 11, [1, 3, 11, 89, 745]);
  assert.ok(seen.includes('CumSum') && seen.filter((o) => o === 'Cast').length === 4, `${seen}`);
});

test('a mean over a slice that can be empty (ReduceSum, Div by the count in float64): NaN at the empty size as eager', async () => {
  const fn = (x) => x.slice(1, 3).mean(1);
  const seen = await sameBits(fn, (t) => [4, t, 5], [null, 'T', null], 10, [3, 4, 10, 77, 1001]);
  assert.ok(seen.includes('Div') && seen.includes('ReduceSum'), `${seen}`);
});

// two values: float32's sum and mean of two round once, as eager's double ones do, so the bits agree
test('a sum over a fixed axis stays float32: no Cast, eager bits at other sizes', async () => {
  const fn = (x) => x.sum(2).add(x.mean(2));
  const seen = await sameBits(fn, (t) => [t, 3, 2], ['B', null, null], 5, [1, 5, 41]);
  assert.ok(!seen.includes('Cast'), `${seen}`);
});
