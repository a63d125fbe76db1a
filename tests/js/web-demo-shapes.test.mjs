// The shapes of an opened file's values (docs/web-demo.md, "Opened files"): session.inferShapes
// (the Session's own shape inference, the one it plans with) on a file that declares no shape but
// its inputs', as torch.onnx.export writes them, its errors; and web-demo/src/shapes.js naming the
// dims it gives by the symbols (n*t, 2*t, t+1), '?' for an axis the file leaves unnamed, the file's
// own shapes kept, and the reason given where the Session cannot plan.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import * as om from 'onemodel';
import { onnxBytes } from '../../tools/onnx_bytes.mjs';
import { readGraph, withoutWeights } from '../../web-demo/src/graphfile.js';
import { defaultSizes } from '../../web-demo/src/feeds.js';
import { inferredShapes, withInferred } from '../../web-demo/src/shapes.js';
import { memoryHooks } from './helpers.mjs';

memoryHooks();
before(() => om.ready());

const ints = (name, values) => ({ name, dtype: 'int64', dims: [values.length], values });
/** x [n, t, 4] -> flat [n*t, 4] -> m [n*t, 6] -> y; c [n, 2t, 4]; first [n, 1, 4]; e [n, t+1, 4]. */
function model({ input = ['n', 't', 4] } = {}) {
  return onnxBytes({
    inputs: [{ name: 'x', dims: input }],
    inits: [ints('flat_shape', [-1, 4]), { name: 'w', dtype: 'float32', dims: [4, 6], values: Array.from({ length: 24 }, (_, i) => i / 24) },
      ints('s0', [0]), ints('s1', [1]), ints('axis1', [1])],
    nodes: [
      { op: 'Reshape', inputs: ['x', 'flat_shape'], outputs: ['flat'] },
      { op: 'MatMul', inputs: ['flat', 'w'], outputs: ['m'] },
      { op: 'Concat', inputs: ['x', 'x'], outputs: ['c'], ints: { axis: 1 } },
      { op: 'Slice', inputs: ['x', 's0', 's1', 'axis1'], outputs: ['first'] },
      { op: 'Concat', inputs: ['x', 'first'], outputs: ['e'], ints: { axis: 1 } },
      { op: 'Relu', inputs: ['m'], outputs: ['y'] },
    ],
    outputs: ['y', 'c', 'e'],
  });
}

/** A run of fn on a session of bytes, disposed after. */
async function withSession(bytes, fn) {
  const session = await om.InferenceSession.create(bytes);
  try {
    return await fn(session);
  } finally {
    session.dispose();
  }
}

describe('session.inferShapes', () => {
  test('gives every value its shape and element type at the feeds, as a run then has them', async () => {
    await withSession(model(), (s) => {
      const x = { data: new Float32Array(3 * 5 * 4), dims: [3, 5, 4] };
      const shapes = s.inferShapes({ x });
      assert.deepEqual(shapes.x, { type: 'float32', dims: [3, 5, 4] });
      assert.deepEqual(shapes.flat, { type: 'float32', dims: [15, 4] });
      assert.deepEqual(shapes.m, { type: 'float32', dims: [15, 6] });
      assert.deepEqual(shapes.c, { type: 'float32', dims: [3, 10, 4] });
      assert.deepEqual(shapes.first, { type: 'float32', dims: [3, 1, 4] });
      assert.deepEqual(shapes.e, { type: 'float32', dims: [3, 6, 4] });
      assert.deepEqual(shapes.w, { type: 'float32', dims: [4, 6] });
      assert.deepEqual(shapes.flat_shape, { type: 'int64', dims: [2] });
      assert.equal(s.planBytes, 0, 'no plan kept, no buffer allocated');
      const out = s.run({ x });
      try {
        for (const [name, t] of Object.entries(out)) assert.deepEqual(t.shape, shapes[name].dims, name);
      } finally {
        for (const t of Object.values(out)) t.dispose();
      }
    });
  });

  test('refuses feeds as run() does, by its own name', async () => {
    await withSession(model(), (s) => {
      const check = (feeds, kind, message) => assert.throws(() => s.inferShapes(feeds), (e) => e instanceof om.OmError && e.kind === kind && e.message === message);
      check({}, 'InvalidArgument', 'inferShapes: feed "x" is missing (inputs: x)');
      check({ y: 1 }, 'InvalidArgument', 'inferShapes: no graph input is named "y" (inputs: x)');
      check(null, 'InvalidArgument', 'inferShapes: feeds must be an object of inputs by name, got null');
      check({ x: { data: new Float32Array(6), dims: [1, 2, 3] } }, 'ShapeMismatch', "inferShapes: input 'x' has size 3 at dim 2, the graph takes 4 (shape [1,2,3])");
      check({ x: { data: new BigInt64Array(4), dims: [1, 1, 4] } }, 'DtypeMismatch', 'inferShapes: feed "x" is int64, the graph takes float32');
      s.dispose();
      check({ x: { data: new Float32Array(4), dims: [1, 1, 4] } }, 'Disposed', 'inferShapes: the session was disposed');
    });
  });
});

describe('the page names the dims the Session infers', () => {
  test('by the symbols they follow: a product, a multiple, a sum', async () => {
    const bytes = model(), graph = readGraph(bytes);
    assert.equal(graph.values.m, undefined, 'the file gives no shape for m');
    await withSession(bytes, (s) => {
      const { values, error } = inferredShapes(s, graph, { n: 3, t: 5 });
      assert.equal(error, null);
      assert.deepEqual(values.flat.shape, ['n*t', 4]);
      assert.deepEqual(values.m, { dtype: 'float32', shape: ['n*t', 6] });
      assert.deepEqual(values.c.shape, ['n', '2*t', 4]);
      assert.deepEqual(values.e.shape, ['n', 't+1', 4]);
      assert.deepEqual(values.first.shape, ['n', 1, 4]);
      const all = withInferred(graph, values);
      for (const n of graph.nodes) for (const v of n.outputs) assert.ok(all.values[v]?.shape.every((d) => d !== '?'), `${v}: ${all.values[v]?.shape}`);
      assert.equal(all.values.x, graph.values.x, 'a shape the file gives whole stays');
      assert.deepEqual(graph.outputs.map((v) => v.shape), [[], [], []], 'the file gives its outputs no shape');
      assert.deepEqual(all.outputs.map((v) => [v.name, v.dtype, v.shape]), [['y', 'float32', ['n*t', 6]], ['c', 'float32', ['n', '2*t', 4]], ['e', 'float32', ['n', 't+1', 4]]]);
    });
  });

  test("'?' for a dim that follows an axis the file leaves unnamed, never a number", async () => {
    const bytes = model({ input: ['?', 't', 4] }), graph = readGraph(bytes);
    await withSession(bytes, (s) => {
      const { values } = inferredShapes(s, graph, defaultSizes(graph.inputs));
      assert.deepEqual(values.m.shape, ['?', 6]);
      assert.deepEqual(values.c.shape, ['?', '2*t', 4]);
      // and the file's own '?' is filled only where the Session names it
      const filled = withInferred({ ...graph, values: { ...graph.values, c: { dtype: 'float32', shape: ['?', 't', 4] } } }, values);
      assert.deepEqual(filled.values.c.shape, ['?', 't', 4], "a dim the file gives stays, and '?' where the Session cannot name it");
      const named = withInferred({ ...graph, values: { ...graph.values, c: { dtype: 'float32', shape: ['?', '?', 4] } } }, values);
      assert.deepEqual(named.values.c.shape, ['?', '2*t', 4]);
    });
  });

  /** The dim named `form` (q*floor((s+c)/d)+e as shapes.js writes it) at s = n. */
  const evaluate = (form, sym, n) => Function(sym, 'floor', `return ${form};`)(n, Math.floor);

  test('a strided conv\'s or pool\'s output named floor((h+c)/d), and a chain of them, as the Session gives it at every size', async () => {
    // y: a 1x1 conv of stride 2 (floor((h+1)/2)); z: a 3x3 conv of stride 2, pads 1, on y
    // (floor((h+3)/4)); p: a max pool of 3, stride 2, pads 1, on z (floor((h+7)/8)); u: p's rows
    // repeated twice (2*floor((h+7)/8)); m: x beside y on the rows (h+floor((h+1)/2): no form of
    // one step, '?')
    const conv = onnxBytes({ inputs: [{ name: 'x', dims: ['n', 1, 'h', 4] }],
      inits: [{ name: 'k', dtype: 'float32', dims: [2, 1, 1, 1], values: [1, 2] }, { name: 'k3', dtype: 'float32', dims: [1, 2, 3, 3], values: Array(18).fill(0.5) },
        { name: 'k1', dtype: 'float32', dims: [1, 2, 1, 1], values: [1, 1] }, ints('rep', [1, 1, 2, 1])],
      nodes: [{ op: 'Conv', inputs: ['x', 'k'], outputs: ['y'], ints: { strides: [2, 2] } },
        { op: 'Conv', inputs: ['y', 'k3'], outputs: ['z'], ints: { strides: [2, 2], pads: [1, 1, 1, 1] } },
        { op: 'MaxPool', inputs: ['z'], outputs: ['p'], ints: { kernel_shape: [3, 3], strides: [2, 2], pads: [1, 1, 1, 1] } },
        { op: 'Tile', inputs: ['p', 'rep'], outputs: ['u'] },
        { op: 'Conv', inputs: ['x', 'k'], outputs: ['yr'], ints: { strides: [2, 1] } },
        { op: 'Conv', inputs: ['yr', 'k1'], outputs: ['y1'] },
        { op: 'Concat', inputs: ['x', 'y1'], outputs: ['m'], ints: { axis: 2 } }],
      outputs: ['u', 'm'] });
    await withSession(conv, (s) => {
      const { values, error } = inferredShapes(s, readGraph(conv), { n: 1, h: 1 });
      assert.equal(error, null);
      assert.deepEqual(values.y.shape, ['n', 2, 'floor((h+1)/2)', 2], 'the fixed width stays a number');
      assert.deepEqual(values.z.shape, ['n', 1, 'floor((h+3)/4)', 1]);
      assert.deepEqual(values.p.shape, ['n', 1, 'floor((h+7)/8)', 1]);
      assert.deepEqual(values.u.shape, ['n', 1, '2*floor((h+7)/8)', 1]);
      assert.deepEqual(values.m.shape, ['n', 1, '?', 4], 'h+floor((h+1)/2) steps by 1 and by 2: not one form, so not named');
      // each form gives the size the Session binds at sizes none of the fits tried
      for (const h of [5, 31, 100, 257, 301]) {
        const at = s.inferShapes({ x: { data: new Float32Array(h * 4), dims: [1, 1, h, 4] } });
        for (const v of ['y', 'z', 'p', 'u']) assert.equal(evaluate(values[v].shape[2], 'h', h), at[v].dims[2], `${v} at h = ${h}`);
      }
    });
  });

  test("'?' where the sizes cannot tell: every unmoved dim when no far size plans", async () => {
    // positions for at most 8 steps: t plans at 1 to 4, no far size does, so 4 is not claimed fixed
    const pos = onnxBytes({ inputs: [{ name: 'x', dims: ['t', 4] }],
      inits: [{ name: 'pos', dtype: 'float32', dims: [8, 4], values: Array.from({ length: 32 }, (_, i) => i) }, ints('s0', [0]), ints('s1', [1])],
      nodes: [{ op: 'Shape', inputs: ['x'], outputs: ['shp'] }, { op: 'Slice', inputs: ['shp', 's0', 's1'], outputs: ['len'] },
        { op: 'Slice', inputs: ['pos', 's0', 'len', 's0'], outputs: ['p'] }, { op: 'Add', inputs: ['x', 'p'], outputs: ['y'] }],
      outputs: ['y'] });
    await withSession(pos, (s) => {
      const { values, error } = inferredShapes(s, readGraph(pos), { t: 1 });
      assert.equal(error, null);
      assert.deepEqual(values.y.shape, ['t', '?']);
      assert.deepEqual(values.p.shape, ['t', '?']);
    });
  });

  test('the reason, and no shapes, where the Session cannot plan at the sizes', async () => {
    const bytes = onnxBytes({ inputs: [{ name: 'x', dims: ['n', 4] }], inits: [ints('shape', [12])],
      nodes: [{ op: 'Reshape', inputs: ['x', 'shape'], outputs: ['y'] }], outputs: ['y'] });
    const graph = readGraph(bytes);
    await withSession(bytes, (s) => {
      // n = 3 plans (12 elements), the next sizes (4, or the multiple 6) cannot: nothing is named from one plan alone
      const { values, error } = inferredShapes(s, graph, { n: 3 });
      assert.deepEqual(values, {});
      assert.equal(error, 'the Session could not plan it at n = 4: ShapeMismatch: Reshape_0 (Reshape): element counts differ, cannot reshape [4,4] to [12]');
      const bad = inferredShapes(s, graph, { n: 0 });
      assert.equal(bad.error, 'the Session could not plan it at n = 0: InvalidArgument: run: the size of n must be a positive integer, got 0');
    });
  });
});

describe('an opened file\'s shapes without its weights (withoutWeights)', () => {
  test('the Session gives every value the shape and type the whole file gives, and the weights are not in the bytes', async () => {
    // w (64x32 float32: 8 kB) and the conv's k2 (16x1x3x3: 576 B) and k (kept: small); x also read by a Reshape of a small shape
    const weights = (n) => Array.from({ length: n }, (_, i) => Math.sin(i));
    const bytes = onnxBytes({ inputs: [{ name: 'x', dims: ['n', 1, 'h', 64] }, { name: 'big', dims: [32, 128] }],
      inits: [{ name: 'w', dtype: 'float32', dims: [64, 32], values: weights(64 * 32) }, { name: 'big', dtype: 'float32', dims: [32, 128], values: weights(128 * 32) },
        { name: 'k', dtype: 'float32', dims: [16, 1, 3, 3], values: weights(144) }, ints('flat', [0, -1, 32])],
      nodes: [{ op: 'MatMul', inputs: ['x', 'w'], outputs: ['m'] }, { op: 'Conv', inputs: ['m', 'k'], outputs: ['c'], ints: { strides: [2, 2] } },
        { op: 'Reshape', inputs: ['c', 'flat'], outputs: ['r'] }, { op: 'MatMul', inputs: ['r', 'big'], outputs: ['y'], ints: {} }],
      outputs: ['y'], ir: 3 });
    const graph = readGraph(bytes), light = withoutWeights(bytes, graph);
    assert.ok(light.length < bytes.length - 64 * 32 * 4 + 200, `${bytes.length} bytes -> ${light.length}`);
    const lg = readGraph(light);
    assert.deepEqual(lg.initializers.map((i) => i.name).sort(), ['big', 'flat', 'k', 'w.shape', 'zero'],
      'w is made, not stored; k is small; big is also a graph input (a file of IR 3), so it stays');
    assert.deepEqual(lg.nodes.filter((n) => n.opType === 'Expand').map((n) => [n.inputs, n.outputs]), [[['zero', 'w.shape'], ['w']]]);
    const x = { data: new Float32Array(2 * 9 * 64), dims: [2, 1, 9, 64] };
    const whole = await withSession(bytes, (s) => s.inferShapes({ x }));
    const without = await withSession(light, (s) => s.inferShapes({ x }));
    for (const [name, v] of Object.entries(whole)) assert.deepEqual(without[name], v, name);
    assert.deepEqual(whole.y, { type: 'float32', dims: [2, 30, 128] }, 'the shapes at hand are those of a real run');
    // nothing to leave out: the same bytes; an .om as it is
    const small = model();
    assert.equal(withoutWeights(small, readGraph(small)), small);
    const om_ = { format: 'om' };
    assert.equal(withoutWeights(bytes, om_), bytes);
  });
});
