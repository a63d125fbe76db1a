// Position grids over a traced size (DETR-like and NeRF-style code): om.linspace(a, b, T) and
// om.arange(T).div(T - 1), with T an input's symbolic extent. linspace is one C creation call
// (om_linspace), so the trace sees T as its length and writes PyTorch's two halves as graph
// nodes, computed in double and rounded once to float32 (docs/symbolic-axes.md, "Tensors created
// at a size that changes"). Each model is traced at one size and run at other sizes, 1, 2, odd,
// far above, in onnxruntime-web and the Session, compared with eager bit for bit; eager itself is
// compared with the two-half formula; what the graph cannot hold is refused at the call.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as om from 'onemodel';
import { withSession } from '../../examples/lib/oracle.mjs';
import { memoryHooks, traceRefusal } from './helpers.mjs';

memoryHooks();

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);
/** The bits of a float32 (NaN as one value), to compare outputs exactly. */
const bits = (v) => (Number.isNaN(v) ? 'NaN' : ((f32[0] = v), u32[0]));
const SIZES = [1, 2, 3, 5, 7, 8, 13, 64, 101, 1000];

/**
 * Traces fn on x [2, T] (T symbolic, traced at 6), then at each size T: eager, the .onnx in
 * onnxruntime-web and the traced model's Session give the same bits. Returns the graph's ops and
 * the symbol's range.
 */
async function sameBits(fn) {
  const x0 = om.randn([2, 6], { seed: 3 });
  const tm = om.trace(fn, { x: [x0, [null, 'T']] });
  const session = tm.session();
  try {
    const name = tm.outputs[0].name;
    await withSession(tm.toOnnx(), async (run) => {
      for (const t of SIZES) {
        const x = om.randn([2, t], { seed: 100 + t });
        const want = om.tidy(() => Array.from(fn(x).toArray(), bits));
        const got = om.tidy(() => Array.from(session.run({ x })[name].toArray(), bits));
        const ort = await run({ x: { dtype: 'float32', data: x.toArray(), dims: x.shape } });
        x.dispose();
        assert.deepEqual(ort[name].dims.at(-1), t, `onnxruntime-web's length at T=${t}`);
        assert.deepEqual(Array.from(ort[name].data, bits), want, `onnxruntime-web at T=${t}`);
        assert.deepEqual(got, want, `the Session at T=${t}`);
      }
    });
    const [s] = tm.symbols;
    return { ops: tm.graph().nodes.map((n) => n.opType), range: [s.min, s.max] };
  } finally {
    session.dispose();
    tm.dispose();
    x0.dispose();
  }
}

/** PyTorch's linspace in float32 (docs/api.md): the first n / 2 from start, the rest from end, each rounded once. */
function twoHalves(start, end, n) {
  const f = Math.fround, s = f(start), e = f(end), step = n > 1 ? f(f(e - s) / (n - 1)) : 0;
  return Array.from({ length: n }, (_, i) => (n === 1 ? s : i < Math.floor(n / 2) ? f(s + step * i) : f(e - step * (n - 1 - i))));
}

// x * 0 is +-0, and v + -0 is v: the output is the grid's own bits, broadcast over the rows
for (const [a, b] of [[0, 1], [-2.3, 7.1], [1, 0], [-1e-3, 3e4]]) {
  test(`om.linspace(${a}, ${b}, T) of a symbolic T is a graph computation: eager's bits at every T, 1 and far above included`, async () => {
    const fn = (x) => om.linspace(a, b, x.shape[1]).add(x.mul(0));
    const { ops, range } = await sameBits(fn);
    assert.deepEqual(range, [1, Infinity]);
    assert.ok(ops.includes('Range') && ops.includes('Where'), `${ops}`);
    assert.deepEqual(ops.filter((o) => o === 'Cast').length, 5, `the index and the count to double, the step through float32, the result to float32: ${ops}`);
    for (const n of [0, ...SIZES]) {
      const got = om.tidy(() => Array.from(om.linspace(a, b, n).toArray(), bits));
      assert.deepEqual(got, twoHalves(a, b, n).map(bits), `eager at ${n}`);
    }
  });
}

test('om.linspace(0, 1, T, { dtype: \'int64\' }) is the float32 grid cast (truncated), in the graph too', async () => {
  const fn = (x) => om.linspace(-3, 4, x.shape[1], { dtype: 'int64' }).float().add(x.mul(0));
  const { ops } = await sameBits(fn);
  assert.deepEqual(om.tidy(() => Array.from(om.linspace(-3, 4, 5, { dtype: 'int64' }).toArray(), Number)), [-3, -1, 0, 2, 4]);
  assert.ok(ops.includes('Range'), `${ops}`);
});

test('om.arange(T).div(T - 1), the hand-written grid: the divisor computed from the size (0 / 0 at T = 1, as eager)', async () => {
  const fn = (x) => om.arange(0, x.shape[1], { dtype: 'float32' }).div(x.shape[1] - 1).add(x.mul(0));
  const { ops, range } = await sameBits(fn);
  assert.deepEqual(range, [1, Infinity]);
  assert.ok(ops.includes('Range') && ops.includes('Div'), `${ops}`);
});

test('a linspace the graph cannot hold is refused at the call: an end that moves with the size, a float64 grid', () => {
  const x = om.randn([2, 6]);
  try {
    const end = traceRefusal((v) => om.linspace(0, v.shape[1], v.shape[1]).add(v), { x: [x, [null, 'T']] }, 'SymbolicShape');
    assert.match(end.message, /^linspace: a start or end that changes with the sizes cannot be written in the graph \(only the number of steps may change\)/);
    const f64 = traceRefusal((v) => om.linspace(0, 1, v.shape[1], { dtype: 'float64' }).float().add(v), { x: [x, [null, 'T']] }, 'SymbolicShape');
    assert.match(f64.message, /^linspace: a float64 linspace of a length that changes with the sizes cannot be written in the graph/);
  } finally {
    x.dispose();
  }
});
