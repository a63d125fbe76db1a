// Graphs ONNX's checker and onnxruntime-web refuse when a model is loaded (an attribute the op does
// not define, one of another type, a required one left out, a value written twice, a graph output
// declared of another type or shape than its node gives): the Session refuses each with a Format
// error naming the node, never a silent default. onnxruntime-web is checked to refuse each too, so
// the cases stay the oracle's. Nodes out of topological order, which ONNX's checker refuses and
// onnxruntime-web sorts and runs, the Session runs too (never refuse what onnxruntime-web runs).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as om from 'onemodel';
import * as ort from 'onnxruntime-web';
import { onnxBytes } from '../../tools/onnx_bytes.mjs';
import { mismatch } from './onnx-backend.mjs';

await om.ready();
ort.env.wasm.numThreads = 1;

const x = { name: 'x', dims: ['n', 2] };
const x4 = { name: 'x', dims: [1, 1, 3, 3] };
const feed32 = { data: Float32Array.from({ length: 6 }, (_, k) => k - 2.5), dims: [3, 2], type: 'float32' };
const feed4 = { data: Float32Array.from({ length: 9 }, (_, k) => k), dims: [1, 1, 3, 3], type: 'float32' };
const w = { name: 'w', dtype: 'float32', dims: [1, 1, 2, 2], values: [1, 2, 3, 4] };

/** Checks that onnxruntime-web refuses bytes when the session is made. */
async function ortRefuses(bytes) {
  await assert.rejects(ort.InferenceSession.create(bytes, { executionProviders: ['wasm'] }));
}

/** Checks that the Session refuses bytes with a Format error matching re: at create, or (atRun)
 * when the first run on feed plans, the session staying usable (the same error again). */
async function sessionRefuses(bytes, re, feed, atRun = false) {
  let s;
  try {
    s = await om.InferenceSession.create(bytes);
  } catch (e) {
    assert.ok(!atRun, `refused at create: ${e.message}`);
    assert.ok(e instanceof om.OmError, String(e));
    assert.equal(e.kind, 'Format', e.message);
    assert.match(e.message, re);
    return;
  }
  try {
    assert.ok(atRun, 'created');
    for (let k = 0; k < 2; k++) {
      assert.throws(() => s.run({ x: feed }), (e) => e instanceof om.OmError && e.kind === 'Format' && re.test(e.message));
    }
  } finally {
    s.dispose();
  }
}

test('attributes: one the op does not define, of another type, a required one missing: Format at create, naming the node', async () => {
  const cases = [
    [{ op: 'Relu', inputs: ['x'], attrs: { alpha: { f: 0.5 } } }, x, feed32, /node 'n' \(Relu\) has attribute alpha, which Relu does not take \(it takes none\)/],
    [{ op: 'Conv', inputs: ['x', 'w'], attrs: { kernel_shpe: [2, 2] } }, x4, feed4,
      /node 'n' \(Conv\) has attribute kernel_shpe, which Conv does not take \(it takes auto_pad, dilations, group, kernel_shape, pads, strides\)/],
    [{ op: 'Flatten', inputs: ['x'], attrs: { axis: [1] } }, x, feed32, /node 'n' \(Flatten\): attribute axis must be an int, it is ints/],
    [{ op: 'Gemm', inputs: ['x', 'x'], attrs: { alpha: 2, transB: 1 } }, x, feed32, /node 'n' \(Gemm\): attribute alpha must be a float, it is an int/],
    [{ op: 'Cast', inputs: ['x'] }, x, feed32, /node 'n' \(Cast\) has no attribute to, which Cast requires/],
    [{ op: 'LRN', inputs: ['x'], attrs: { alpha: { f: 1e-4 } } }, x4, feed4, /node 'n' \(LRN\) has no attribute size, which LRN requires/],
  ];
  for (const [node, input, , re] of cases) {
    const bytes = onnxBytes({ nodes: [{ ...node, name: 'n', outputs: ['y'] }], inputs: [input], outputs: ['y'], inits: node.inputs.includes('w') ? [w] : [] });
    await ortRefuses(bytes);
    await sessionRefuses(bytes, re);
  }
  // in a subgraph: an If branch's Relu with alpha
  const branch = (op, out) => ({ graph: { nodes: [{ op, inputs: ['x'], outputs: [out], name: `${op}_in_branch`, attrs: op === 'Relu' ? { alpha: { f: 1 } } : undefined }], outputs: [out] } });
  const bytes = onnxBytes({ nodes: [{ op: 'If', inputs: ['c'], outputs: ['y'], name: 'if', attrs: { then_branch: branch('Relu', 'r'), else_branch: branch('Neg', 'm') } }],
                            inputs: [x], outputs: ['y'], inits: [{ name: 'c', dtype: 'bool', dims: [], values: [true] }] });
  await ortRefuses(bytes);
  await sessionRefuses(bytes, /node 'Relu_in_branch' \(Relu\) has attribute alpha, which Relu does not take/);
});

test('values: one written by two nodes is Format at create, naming the node; nodes out of order run as onnxruntime-web runs them', async () => {
  const twice = onnxBytes({ nodes: [{ op: 'Relu', inputs: ['x'], outputs: ['y'], name: 'a' }, { op: 'Neg', inputs: ['x'], outputs: ['y'], name: 'b' }], inputs: [x], outputs: ['y'] });
  await ortRefuses(twice);
  await sessionRefuses(twice, /value 'y' is defined twice \(output 0 of node 'b'\)/);
  const backwards = onnxBytes({ nodes: [{ op: 'Neg', inputs: ['t'], outputs: ['y'], name: 'second' }, { op: 'Relu', inputs: ['x'], outputs: ['t'], name: 'first' }],
                                inputs: [x], outputs: ['y'] });
  const f = { data: Float32Array.from([1, -2, 3, -4, 5, -6]), dims: [3, 2], type: 'float32' };
  const o = await ort.InferenceSession.create(backwards, { executionProviders: ['wasm'] }); /* onnxruntime-web sorts it */
  const theirs = (await o.run({ x: new ort.Tensor('float32', f.data, f.dims) })).y;
  await o.release();
  const s = await om.InferenceSession.create(backwards);
  try {
    const ours = s.run({ x: f }).y;
    const got = { dtype: ours.dtype, dims: ours.shape, data: ours.toArray() };
    ours.dispose();
    assert.equal(mismatch(got, { dtype: theirs.type, dims: theirs.dims, data: theirs.data }), null);
    assert.deepEqual(Array.from(theirs.data), [-1, -0, -3, -0, -5, -0]);
  } finally {
    s.dispose();
  }
});

test('graph outputs declared of another element type, sizes or rank: Format at create where the inputs fix every size, naming the node', async () => {
  const fixed = { name: 'x', dims: [3, 2] };
  const graph = (out) => onnxBytes({ nodes: [{ op: 'Relu', inputs: ['x'], outputs: ['h'], name: 'r' }, { op: 'MatMul', inputs: ['h', 'w'], outputs: ['y'], name: 'mm' }],
                                     inputs: [fixed], outputs: [out], inits: [{ name: 'w', dtype: 'float32', dims: [2, 4], values: [1, 2, 3, 4, 5, 6, 7, 8] }] });
  const cases = [
    [{ name: 'y', dtype: 'int64', dims: [3, 4] }, /node 'mm' \(MatMul\): output 0 \('y'\) is FLOAT, and the graph declares it INT64/],
    [{ name: 'y', dims: [3, 5] }, /node 'mm' \(MatMul\): output 0 \('y'\) has shape \[3,4\], and the graph declares \[3,5\]/],
    [{ name: 'y', dims: [3, 4, 1] }, /node 'mm' \(MatMul\): output 0 \('y'\) has shape \[3,4\], and the graph declares \[3,4,1\]/],
    [{ name: 'y', dims: ['a', 5] }, /node 'mm' \(MatMul\): output 0 \('y'\) has shape \[3,4\], and the graph declares \[-1,5\]/],
  ];
  for (const [out, re] of cases) {
    await ortRefuses(graph(out));
    await sessionRefuses(graph(out), re);
  }
  // declared as computed: made, and the plan made then is the first run's; values as onnxruntime-web's
  const bytes = graph({ name: 'y', dims: ['a', 4] });
  const s = await om.InferenceSession.create(bytes);
  const o = await ort.InferenceSession.create(bytes, { executionProviders: ['wasm'] });
  try {
    const made = s.planBytes;
    assert.ok(made > 0, 'planned at create');
    const f = { data: Float32Array.from({ length: 6 }, (_, k) => k - 2.5), dims: [3, 2], type: 'float32' };
    const ours = s.run({ x: f }).y;
    const got = { dtype: ours.dtype, dims: ours.shape, data: ours.toArray() };
    ours.dispose();
    const theirs = (await o.run({ x: new ort.Tensor('float32', f.data, f.dims) })).y;
    assert.equal(mismatch(got, { dtype: theirs.type, dims: theirs.dims, data: theirs.data }), null);
    assert.equal(s.planBytes, made);
  } finally {
    s.dispose();
    await o.release();
  }
  // a size that depends on an input's values (a Reshape's shape fed as an input) is not known at
  // create: made, and the first run at such values refuses
  const reshape = onnxBytes({ nodes: [{ op: 'Reshape', inputs: ['x', 'shape'], outputs: ['y'], name: 'rs' }],
                              inputs: [{ name: 'x', dims: [6] }, { name: 'shape', dims: [2], dtype: 'int64' }], outputs: [{ name: 'y', dims: [2, 3] }] });
  const r = await om.InferenceSession.create(reshape);
  try {
    const x6 = { data: Float32Array.from([1, 2, 3, 4, 5, 6]), dims: [6], type: 'float32' };
    for (let k = 0; k < 2; k++) {
      assert.throws(() => r.run({ x: x6, shape: { data: BigInt64Array.from([3n, 2n]), dims: [2], type: 'int64' } }),
                    (e) => e instanceof om.OmError && e.kind === 'Format' && /node 'rs' \(Reshape\): output 0 \('y'\) has shape \[3,2\], and the graph declares \[2,3\]/.test(e.message));
    }
    const y = r.run({ x: x6, shape: { data: BigInt64Array.from([2n, 3n]), dims: [2], type: 'int64' } }).y;
    assert.deepEqual(y.shape, [2, 3]);
    y.dispose();
  } finally {
    r.dispose();
  }
});

test('graph outputs declared against their nodes with symbolic input sizes: Format at create where they contradict at every size, as onnxruntime-web', async () => {
  const relu = (out) => onnxBytes({ nodes: [{ op: 'Relu', inputs: ['x'], outputs: ['y'], name: 'r' }], inputs: [x], outputs: [out] });
  const k = (name, dims, dtype = 'float32') => ({ name, dtype, dims, values: Array.from({ length: dims.reduce((a, b) => a * b, 1) }, (_, i) => (dtype === 'int64' ? 1 : 0.1 * i)) });
  const one = (op, out, { inputs = [x], ins = ['x'], inits = [], ints, strings } = {}) =>
    onnxBytes({ nodes: [{ op, inputs: ins, outputs: ['y'], name: 'n', ...(ints ? { ints } : {}), ...(strings ? { strings } : {}) }], inputs, inits, outputs: [out] });
  const xhw = { name: 'x', dims: ['n', 2, 'h', 8] };
  const cases = [
    // a type, a rank, a fixed size
    [relu({ name: 'y', dtype: 'int64', dims: ['n', 2] }), /node 'r' \(Relu\): output 0 \('y'\) is FLOAT at every size, and the graph declares it INT64/],
    [relu({ name: 'y', dims: [3, 2, 1] }), /node 'r' \(Relu\): output 0 \('y'\) has shape \[n,2\] at every size, and the graph declares \[3,2,1\]/],
    [relu({ name: 'y', dims: ['n', 3] }), /node 'r' \(Relu\): output 0 \('y'\) has shape \[n,2\] at every size, and the graph declares \[-1,3\]/],
    [one('Cast', { name: 'y', dims: ['n', 2] }, { ints: { to: 7 } }), /node 'n' \(Cast\): output 0 \('y'\) is INT64 at every size, and the graph declares it FLOAT/],
    // the sizes a node computes from fixed ones: a product's columns, a concatenation's sum, a
    // reshape's free size, a broadcast against a fixed size, a convolution's channels and its
    // floor formula along a fixed axis (the other symbolic), a pool's, the rank NonZero gives
    [one('MatMul', { name: 'y', dims: ['n', 5] }, { ins: ['x', 'w'], inits: [k('w', [2, 4])] }), /\(MatMul\): output 0 \('y'\) has shape \[n,4\] at every size, and the graph declares \[-1,5\]/],
    [one('Concat', { name: 'y', dims: ['n', 5] }, { ins: ['x', 'x'], ints: { axis: 1 } }), /\(Concat\): output 0 \('y'\) has shape \[n,4\] at every size/],
    [one('Reshape', { name: 'y', dims: ['a', 3] }, { inputs: [{ name: 'x', dims: ['n', 4] }], ins: ['x', 's'], inits: [{ name: 's', dtype: 'int64', dims: [2], values: [-1, 2] }] }),
      /\(Reshape\): output 0 \('y'\) has shape \[\?,2\] at every size, and the graph declares \[-1,3\]/],
    [one('Add', { name: 'y', dims: ['n', 5] }, { inputs: [{ name: 'x', dims: ['n', 'c'] }], ins: ['x', 'b'], inits: [k('b', [4])] }), /\(Add\): output 0 \('y'\) has shape \[n,4\] at every size/],
    [one('Conv', { name: 'y', dims: ['n', 6, 'a', 'b'] }, { inputs: [xhw], ins: ['x', 'w'], inits: [k('w', [5, 2, 3, 3])], ints: { kernel_shape: [3, 3] } }),
      /\(Conv\): output 0 \('y'\) has shape \[n,5,\?,6\] at every size, and the graph declares \[-1,6,-1,-1\]/],
    [one('Conv', { name: 'y', dims: ['n', 5, 'a', 7] }, { inputs: [xhw], ins: ['x', 'w'], inits: [k('w', [5, 2, 3, 3])], ints: { kernel_shape: [3, 3], pads: [1, 1, 1, 1] } }),
      /\(Conv\): output 0 \('y'\) has shape \[n,5,\?,8\] at every size, and the graph declares \[-1,5,-1,7\]/],
    [one('MaxPool', { name: 'y', dims: ['n', 2, 'a', 3] }, { inputs: [xhw], ints: { kernel_shape: [2, 2], strides: [2, 2], ceil_mode: 0 } }),
      /\(MaxPool\): output 0 \('y'\) has shape \[n,2,\?,4\] at every size/],
    [one('NonZero', { name: 'y', dtype: 'int64', dims: [3, 'k'] }), /\(NonZero\): output 0 \('y'\) has shape \[2,\?\] at every size, and the graph declares \[3,-1\]/],
  ];
  for (const [bytes, re] of cases) {
    await ortRefuses(bytes);
    await sessionRefuses(bytes, re);
  }
  // the Conv that fits (7 with its one pad) is made, as onnxruntime-web makes it
  const fits = one('Conv', { name: 'y', dims: ['n', 5, 'a', 7] }, { inputs: [xhw], ins: ['x', 'w'], inits: [k('w', [5, 2, 3, 3])], ints: { kernel_shape: [3, 3], pads: [1, 0, 1, 1] } });
  (await om.InferenceSession.create(fits)).dispose();
  await (await ort.InferenceSession.create(fits, { executionProviders: ['wasm'] })).release();
});

test('graph outputs declared against symbolic sizes that fit at some size: made, as onnxruntime-web makes them; Format at a run where they do not', async () => {
  const relu = (out) => onnxBytes({ nodes: [{ op: 'Relu', inputs: ['x'], outputs: ['y'], name: 'r' }], inputs: [x], outputs: [out] });
  const twice = onnxBytes({ nodes: [{ op: 'Concat', inputs: ['x', 'x'], outputs: ['y'], name: 'c', ints: { axis: 0 } }], inputs: [x], outputs: [{ name: 'y', dims: [6, 2] }] });
  const cases = [ // a fixed size where the node computes n (or 2 n): that size fits at n = 2 (or 3)
    [relu({ name: 'y', dims: [2, 2] }), 2, /node 'r' \(Relu\): output 0 \('y'\) has shape \[3,2\], and the graph declares \[2,2\]/],
    [twice, 3, /node 'c' \(Concat\): output 0 \('y'\) has shape \[4,2\], and the graph declares \[6,2\]/],
  ];
  for (const [bytes, fit, re] of cases) {
    const o = await ort.InferenceSession.create(bytes, { executionProviders: ['wasm'] });
    await o.release();
    const s = await om.InferenceSession.create(bytes);
    try {
      const at = (n) => ({ data: Float32Array.from({ length: 2 * n }, (_, i) => i - n), dims: [n, 2], type: 'float32' });
      const y = s.run({ x: at(fit) }).y;
      y.dispose();
      const other = fit === 2 ? 3 : 2;
      for (let r = 0; r < 2; r++) assert.throws(() => s.run({ x: at(other) }), (e) => e instanceof om.OmError && e.kind === 'Format' && re.test(e.message));
    } finally {
      s.dispose();
    }
  }
  // a symbol declared for a size the node computes: any
  const bytes = relu({ name: 'y', dims: ['m', 'm'] });
  const s = await om.InferenceSession.create(bytes);
  const o = await ort.InferenceSession.create(bytes, { executionProviders: ['wasm'] });
  try {
    for (const n of [3, 5]) {
      const f = { data: Float32Array.from({ length: 2 * n }, (_, k) => k - n), dims: [n, 2], type: 'float32' };
      const ours = s.run({ x: f }).y;
      const got = { dtype: ours.dtype, dims: ours.shape, data: ours.toArray() };
      ours.dispose();
      const theirs = (await o.run({ x: new ort.Tensor('float32', f.data, f.dims) })).y;
      assert.equal(mismatch(got, { dtype: theirs.type, dims: theirs.dims, data: theirs.data }), null);
    }
  } finally {
    s.dispose();
    await o.release();
  }
});

// Graphs that contradict themselves at the shapes their inputs declare, each beside its valid twin:
// { what, bad: [op, x's dims, node inputs, initializers, node fields, outputs], good: the same
// written as it fits, fixed: what the Session says at create where every size is fixed, symbolic:
// what it says at create when x's first size is a symbol (null: made, and refused by the first
// run), ortAtCreate: whether onnxruntime-web refuses the bad one at create (else its first run
// fails) }. ONNX's checker (1.12, with strict shape inference) refuses all but the Conv, Gather (of
// an index out of range), Gemm and Reshape (to another count) ones; onnxruntime-web at create all
// but the Conv, Gather and Reshape ones.
const f32 = (name, dims) => ({ name, dtype: 'float32', dims, values: Array.from({ length: dims.reduce((a, b) => a * b, 1) }, (_, k) => k / 4 - 1) });
const i64 = (name, dims, values) => ({ name, dtype: 'int64', dims, values });
const atEvery = (why) => new RegExp(`^session: node 'bad' \\(\\w+\\) fails at every size the graph's inputs declare: ${why}$`);
const invalidAt = (kind, op, why) => new RegExp(`^session: the graph is invalid at the input shapes it declares \\(${kind}\\): bad \\(${op}\\): ${why}`);
/** Slice's starts, ends, axes and steps (the last two left out when not given). */
const slices = (starts, ends, axes, steps) => [i64('s', [starts.length], starts), i64('e', [ends.length], ends),
                                               ...(axes ? [i64('a', [axes.length], axes)] : []), ...(steps ? [i64('t', [steps.length], steps)] : [])];
/** BatchNormalization's scale, B, input_mean and input_var of those shapes (the variances positive). */
const stats = (...shapes) => ['s', 'b', 'm', 'v'].map((n, k) => {
  const t = f32(n, shapes[k]);
  return n === 'v' ? { ...t, values: t.values.map((_, j) => j + 1) } : t;
});
const selfContradicting = [
  { what: 'Squeeze of a size-2 axis', bad: ['Squeeze', [3, 2], ['x', 'a'], [i64('a', [1], [1])]], good: ['Squeeze', [3, 1], ['x', 'a'], [i64('a', [1], [1])]],
    fixed: invalidAt('Format', 'Squeeze', 'axis 1 has size 2, not 1$'), symbolic: atEvery('axis 1 has size 2, not 1'), ortAtCreate: true },
  { what: 'Conv whose kernel_shape is not its weight\'s', bad: ['Conv', [1, 1, 4, 4], ['x', 'w'], [f32('w', [1, 1, 2, 2])], { ints: { kernel_shape: [3, 3] } }],
    good: ['Conv', [1, 1, 4, 4], ['x', 'w'], [f32('w', [1, 1, 2, 2])], { ints: { kernel_shape: [2, 2] } }],
    fixed: invalidAt('Format', 'Conv', 'kernel_shape does not match the weight\'s shape \\(dim 0: 3, the weight has 2\\)$'),
    symbolic: atEvery('kernel_shape and the weight\'s spatial size differ: 3 and 2'), ortAtCreate: false },
  { what: 'Conv of other channels than its weight\'s', bad: ['Conv', [1, 2, 4, 4], ['x', 'w'], [f32('w', [1, 3, 2, 2])]], good: ['Conv', [1, 3, 4, 4], ['x', 'w'], [f32('w', [1, 3, 2, 2])]],
    fixed: invalidAt('ShapeMismatch', 'Conv', 'input \\[1,2,4,4\\] has 2 channels, weight \\[1,3,2,2\\] expects 3'),
    symbolic: atEvery('the input has 2 channels, and the weight takes 3 \\(3 a group, 1 groups\\)'), ortAtCreate: false },
  { what: 'Reshape to a shape of another size', bad: ['Reshape', [3, 2], ['x', 's'], [i64('s', [2], [4, 2])]], good: ['Reshape', [4, 2], ['x', 's'], [i64('s', [2], [2, 4])]],
    fixed: invalidAt('ShapeMismatch', 'Reshape', 'element counts differ, cannot reshape \\[3,2\\] to \\[4,2\\]$'), symbolic: null, ortAtCreate: false },
  { what: 'Gather of constant indices out of range', bad: ['Gather', [3, 2], ['x', 'i'], [i64('i', [2], [0, 5])]], good: ['Gather', [3, 2], ['x', 'i'], [i64('i', [2], [0, -3])]],
    fixed: invalidAt('IndexOutOfRange', 'Gather', 'index 5 is out of range for axis 0 of size 3$'), symbolic: null, ortAtCreate: false },
  { what: 'Concat of other sizes off its axis', bad: ['Concat', [3, 2], ['x', 'c'], [f32('c', [2, 3])], { ints: { axis: 0 } }],
    good: ['Concat', [3, 2], ['x', 'c'], [f32('c', [2, 2])], { ints: { axis: 0 } }],
    fixed: invalidAt('ShapeMismatch', 'Concat', 'input 1 has shape \\[2,3\\], input 0 has \\[3,2\\] \\(only dim 0 may differ\\)$'),
    symbolic: atEvery('input 1 has size 3 at axis 1, where the others have 2'), ortAtCreate: true },
  { what: 'MatMul of unequal inner sizes', bad: ['MatMul', [3, 2], ['x', 'w'], [f32('w', [3, 4])]], good: ['MatMul', [3, 3], ['x', 'w'], [f32('w', [3, 4])]],
    fixed: invalidAt('ShapeMismatch', 'MatMul', 'shapes \\[3,2\\] and \\[3,4\\] do not match \\(2 != 3\\)$'), symbolic: atEvery('the inner sizes of the product differ: 2 and 3'), ortAtCreate: true },
  { what: 'Gemm of unequal inner sizes', bad: ['Gemm', [3, 2], ['x', 'w'], [f32('w', [3, 4])]], good: ['Gemm', [3, 3], ['x', 'w'], [f32('w', [3, 4])]],
    fixed: invalidAt('ShapeMismatch', 'Gemm', 'shapes \\[3,2\\] and \\[3,4\\] do not match \\(2 != 3\\)$'), symbolic: atEvery('the inner sizes of the product differ: 2 and 3'), ortAtCreate: true },
  { what: 'Add of sizes that do not broadcast', bad: ['Add', [3, 2], ['x', 'b'], [f32('b', [3])]], good: ['Add', [3, 2], ['x', 'b'], [f32('b', [2])]],
    fixed: invalidAt('ShapeMismatch', 'Add', 'shapes \\[3,2\\] and \\[3\\] do not broadcast \\(2 vs 3 at dim 1\\)$'),
    symbolic: atEvery('inputs 0 and 1 do not broadcast: sizes 2 and 3 at axis -1'), ortAtCreate: true },
  { what: 'Transpose naming an axis twice', bad: ['Transpose', [3, 2], ['x'], [], { ints: { perm: [0, 0] } }], good: ['Transpose', [3, 2], ['x'], [], { ints: { perm: [1, 0] } }],
    fixed: invalidAt('InvalidArgument', 'Transpose', 'dim 0 appears twice$'), symbolic: atEvery('perm names axis 0 twice'), ortAtCreate: true },
  { what: 'Split into sizes that do not sum to the axis', bad: ['Split', [3, 4], ['x', 's'], [i64('s', [2], [1, 2])], { ints: { axis: 1 } }, ['y', 'z']],
    good: ['Split', [3, 4], ['x', 's'], [i64('s', [2], [1, 3])], { ints: { axis: 1 } }, ['y', 'z']],
    fixed: invalidAt('ShapeMismatch', 'Split', '2 sizes summing to 3 for 2 outputs of an axis of 4$'), symbolic: atEvery('the split sizes sum to 3, and axis 1 has size 4'), ortAtCreate: true },
  { what: 'Softmax of an axis past the rank', bad: ['Softmax', [3, 2], ['x'], [], { ints: { axis: 4 } }], good: ['Softmax', [3, 2], ['x'], [], { ints: { axis: -2 } }],
    fixed: invalidAt('IndexOutOfRange', 'Softmax', 'axis 4 is out of range for 2 dims$'), symbolic: atEvery('axis 4 is outside \\[-2, 1\\] for an input of rank 2'), ortAtCreate: true },
  { what: 'BatchNormalization of other channels than its statistics\'', bad: ['BatchNormalization', [1, 2, 2, 2], ['x', 's', 'b', 'm', 'v'], ['s', 'b', 'm', 'v'].map((n) => f32(n, [3]))],
    good: ['BatchNormalization', [1, 3, 2, 2], ['x', 's', 'b', 'm', 'v'], ['s', 'b', 'm', 'v'].map((n) => (n === 'v' ? { ...f32(n, [3]), values: [1, 2, 3] } : f32(n, [3])))],
    fixed: invalidAt('ShapeMismatch', 'BatchNormalization', 'running_mean has shape \\[3\\], expected \\[2\\]$'),
    symbolic: atEvery('scale \\(input 1\\) has size 3, and the input has 2 channels'), ortAtCreate: true },
  { what: 'Squeeze of an axis past the rank', bad: ['Squeeze', [3, 1], ['x', 'a'], [i64('a', [1], [2])]], good: ['Squeeze', [3, 1], ['x', 'a'], [i64('a', [1], [-1])]],
    fixed: invalidAt('IndexOutOfRange', 'Squeeze', 'axis 2 is out of range for 2 dims$'), symbolic: atEvery('axis 2 is outside \\[-2, 1\\] for an input of rank 2'), ortAtCreate: true },
  { what: 'Unsqueeze naming an axis twice', bad: ['Unsqueeze', [3, 2], ['x', 'a'], [i64('a', [2], [1, -3])]], good: ['Unsqueeze', [3, 2], ['x', 'a'], [i64('a', [2], [1, -1])]],
    fixed: invalidAt('Format', 'Unsqueeze', 'axis 1 given twice$'), symbolic: atEvery('axes name one axis twice'), ortAtCreate: true },
  { what: 'Slice naming an axis twice', bad: ['Slice', [3, 4], ['x', 's', 'e', 'a'], slices([0, 1], [1, 3], [1, -1])], good: ['Slice', [3, 4], ['x', 's', 'e', 'a'], slices([0, 1], [1, 3], [0, -1])],
    fixed: invalidAt('Format', 'Slice', 'axis 1 is given twice$'), symbolic: atEvery('axes name one axis twice'), ortAtCreate: true },
  { what: 'Slice of an axis past the rank', bad: ['Slice', [3, 4], ['x', 's', 'e', 'a'], slices([1], [3], [2])],
    good: ['Slice', [3, 4], ['x', 's', 'e', 'a'], slices([1], [9223372036854775807n], [-1])], // INT64_MAX, exporters' "to the end"
    fixed: invalidAt('IndexOutOfRange', 'Slice', 'axis 2 is out of range for 2 dims$'), symbolic: atEvery('axis 2 is outside \\[-2, 1\\] for an input of rank 2'), ortAtCreate: true },
  { what: 'Slice with a step of 0', bad: ['Slice', [3, 4], ['x', 's', 'e', 'a', 't'], slices([0], [4], [1], [0])], good: ['Slice', [3, 4], ['x', 's', 'e', 'a', 't'], slices([-1], [-9], [1], [-2])],
    fixed: invalidAt('Format', 'Slice', 'step 0$'), symbolic: atEvery('steps\' entry 0 is 0'), ortAtCreate: true },
  { what: 'Reshape to a count no size fills', bad: ['Reshape', [3, 3], ['x', 's'], [i64('s', [2], [4, 2])]], good: ['Reshape', [3, 3], ['x', 's'], [i64('s', [1], [9])]],
    fixed: invalidAt('ShapeMismatch', 'Reshape', 'element counts differ, cannot reshape \\[3,3\\] to \\[4,2\\]$'),
    symbolic: atEvery('the input\'s \\[n,3\\] elements fill \\[4,2\\] at no size'), ortAtCreate: false },
  { what: 'Reshape with two -1', bad: ['Reshape', [3, 2], ['x', 's'], [i64('s', [2], [-1, -1])]], good: ['Reshape', [3, 2], ['x', 's'], [i64('s', [2], [-1, 3])]],
    fixed: invalidAt('ShapeMismatch', 'Reshape', 'cannot reshape \\[3,2\\] to \\[-1,-1\\]$'), symbolic: atEvery('shape has -1 at dims 0 and 1 \\(one size at most is inferred\\)'), ortAtCreate: true },
  { what: 'Reshape with a size below -1', bad: ['Reshape', [3, 2], ['x', 's'], [i64('s', [2], [-2, 3])]], good: ['Reshape', [3, 2], ['x', 's'], [i64('s', [2], [2, 3])]],
    fixed: invalidAt('ShapeMismatch', 'Reshape', 'cannot reshape \\[3,2\\] to \\[-2,3\\]$'), symbolic: atEvery('shape\'s size -2 at dim 0 is below -1'), ortAtCreate: true },
  { what: 'Reshape whose -1 no count fills', bad: ['Reshape', [3, 3], ['x', 's'], [i64('s', [3], [0, -1, 2])]], good: ['Reshape', [3, 3], ['x', 's'], [i64('s', [3], [0, -1, 3])]],
    fixed: invalidAt('ShapeMismatch', 'Reshape', 'cannot reshape \\[3,3\\] to \\[3,-1,2\\]$'), symbolic: atEvery('the input\'s \\[n,3\\] elements fill \\[n,\\?,2\\] at no size'), ortAtCreate: true },
  { what: 'Reshape of a 0 and a -1 under allowzero', bad: ['Reshape', [3, 2], ['x', 's'], [i64('s', [2], [0, -1])], { ints: { allowzero: 1 } }],
    good: ['Reshape', [3, 2], ['x', 's'], [i64('s', [2], [3, -1])], { ints: { allowzero: 1 } }],
    fixed: invalidAt('ShapeMismatch', 'Reshape', 'cannot reshape \\[3,2\\] to \\[0,-1\\]$'), symbolic: atEvery('shape has a 0 \\(allowzero 1: a size of 0\\) and a -1, which no count fits'), ortAtCreate: true },
  { what: 'Reshape of a 0 past the input\'s rank', bad: ['Reshape', [3, 2], ['x', 's'], [i64('s', [3], [0, 0, 0])]], good: ['Reshape', [3, 2], ['x', 's'], [i64('s', [3], [0, 0, 1])]],
    fixed: invalidAt('ShapeMismatch', 'Reshape', 'a 0 at dim 2, past the input\'s 2 dims$'), symbolic: atEvery('shape\'s 0 at dim 2 copies the input\'s size there, and the input has rank 2'), ortAtCreate: true },
  { what: 'Gather along an axis past the rank', bad: ['Gather', [3, 2], ['x', 'i'], [i64('i', [1], [0])], { ints: { axis: 2 } }], good: ['Gather', [3, 2], ['x', 'i'], [i64('i', [1], [0])], { ints: { axis: -1 } }],
    fixed: invalidAt('IndexOutOfRange', 'Gather', 'axis 2 is out of range for 2 dims$'), symbolic: atEvery('axis 2 is outside \\[-2, 1\\] for an input of rank 2'), ortAtCreate: true },
  { what: 'Gather of constant indices out of range along a fixed axis', bad: ['Gather', [2, 3], ['x', 'i'], [i64('i', [2], [0, 5])], { ints: { axis: 1 } }],
    good: ['Gather', [2, 3], ['x', 'i'], [i64('i', [2, 2], [0, -3, 2, 1])], { ints: { axis: 1 } }],
    fixed: invalidAt('IndexOutOfRange', 'Gather', 'index 5 is out of range for axis 1 of size 3$'), symbolic: atEvery('index 5 is out of range for axis 1 of size 3'), ortAtCreate: false },
  { what: 'Split into more sizes than outputs', bad: ['Split', [3, 4], ['x', 's'], [i64('s', [3], [1, 2, 1])], { ints: { axis: 1 } }, ['y', 'z']],
    good: ['Split', [3, 4], ['x', 's'], [i64('s', [2], [3, 1])], { ints: { axis: -1 } }, ['y', 'z']],
    fixed: invalidAt('ShapeMismatch', 'Split', '3 sizes summing to 4 for 2 outputs of an axis of 4$'), symbolic: atEvery('3 split sizes for 2 outputs'), ortAtCreate: true },
  // one axis named twice is reduced once (ONNX's shape inference and onnxruntime-web take it): the valid twin
  { what: 'ReduceSum of an axis past the rank', bad: ['ReduceSum', [3, 4], ['x', 'a'], [i64('a', [1], [2])]], good: ['ReduceSum', [3, 4], ['x', 'a'], [i64('a', [2], [1, -1])]],
    fixed: invalidAt('IndexOutOfRange', 'ReduceSum', 'axis 2 is out of range for 2 dims$'), symbolic: atEvery('axis 2 is outside \\[-2, 1\\] for an input of rank 2'), ortAtCreate: true },
  { what: 'ReduceMean (axes an attribute at opset 17) of an axis past the rank', bad: ['ReduceMean', [3, 4], ['x'], [], { ints: { axes: [-3] } }],
    good: ['ReduceMean', [3, 4], ['x'], [], { ints: { axes: [0, 0], keepdims: 0 } }],
    fixed: invalidAt('IndexOutOfRange', 'ReduceMean', 'axis -3 is out of range for 2 dims$'), symbolic: atEvery('axis -3 is outside \\[-2, 1\\] for an input of rank 2'), ortAtCreate: true },
  { what: 'ArgMax along an axis past the rank', bad: ['ArgMax', [3, 4], ['x'], [], { ints: { axis: 2 } }], good: ['ArgMax', [3, 4], ['x'], [], { ints: { axis: -1, keepdims: 0 } }],
    fixed: invalidAt('IndexOutOfRange', 'ArgMax', 'axis 2 is out of range for 2 dims$'), symbolic: atEvery('axis 2 is outside \\[-2, 1\\] for an input of rank 2'), ortAtCreate: true },
  { what: 'Hardmax along an axis past the rank', bad: ['Hardmax', [3, 4], ['x'], [], { ints: { axis: -3 } }], good: ['Hardmax', [3, 4], ['x'], [], { ints: { axis: 0 } }],
    fixed: invalidAt('IndexOutOfRange', 'Hardmax', 'axis -3 is out of range for 2 dims$'), symbolic: atEvery('axis -3 is outside \\[-2, 1\\] for an input of rank 2'), ortAtCreate: true },
  { what: 'BatchNormalization of a statistic of rank 2', bad: ['BatchNormalization', [1, 3, 2, 2], ['x', 's', 'b', 'm', 'v'], stats([3], [3], [3], [3, 1])],
    good: ['BatchNormalization', [1, 3, 2, 2], ['x', 's', 'b', 'm', 'v'], stats([3], [3], [3], [3])],
    fixed: invalidAt('ShapeMismatch', 'BatchNormalization', 'running_var has shape \\[3,1\\], expected \\[3\\]$'), symbolic: atEvery('input_var \\(input 4\\) has rank 2, not 1'), ortAtCreate: true },
  { what: 'Tile by another count of repeats than axes', bad: ['Tile', [3, 2], ['x', 'r'], [i64('r', [3], [1, 2, 1])]], good: ['Tile', [3, 2], ['x', 'r'], [i64('r', [2], [2, 1])]],
    fixed: invalidAt('Format', 'Tile', '3 repeats for 2 dims$'), symbolic: atEvery('repeats has 3 values for an input of rank 2'), ortAtCreate: true },
  { what: 'Pad by another count of pads than two per axis', bad: ['Pad', [3, 2], ['x', 'p'], [i64('p', [2], [1, 1])]], good: ['Pad', [3, 2], ['x', 'p'], [i64('p', [4], [0, 1, 0, 1])]],
    fixed: invalidAt('Format', 'Pad', '2 pads for 2 axes$'), symbolic: atEvery('pads has 2 values for 2 axes \\(two each\\)'), ortAtCreate: true },
  { what: 'TopK along an axis past the rank', bad: ['TopK', [3, 4], ['x', 'k'], [i64('k', [1], [1])], { ints: { axis: 2 } }, ['y', 'i']],
    good: ['TopK', [3, 4], ['x', 'k'], [i64('k', [1], [1])], { ints: { axis: -1 } }, ['y', 'i']],
    fixed: invalidAt('IndexOutOfRange', 'TopK', 'axis 2 is out of range for 2 dims$'), symbolic: atEvery('axis 2 is outside \\[-2, 1\\] for an input of rank 2'), ortAtCreate: true },
  { what: 'TopK of more than a fixed axis holds', bad: ['TopK', [3, 4], ['x', 'k'], [i64('k', [1], [5])], { ints: { axis: 1 } }, ['y', 'i']],
    good: ['TopK', [3, 4], ['x', 'k'], [i64('k', [1], [4])], { ints: { axis: 1 } }, ['y', 'i']],
    fixed: invalidAt('InvalidArgument', 'TopK', 'k \\(5\\) is out of range for dim 1 of size 4$'), symbolic: atEvery('k 5 is more than axis 1\'s size 4'), ortAtCreate: true },
  // Einsum, GatherElements, ScatterElements, LayerNormalization, InstanceNormalization: rows of src/runtime/shapes.c
  { what: 'Einsum of a label of two sizes', bad: ['Einsum', [3, 2], ['x', 'w'], [f32('w', [3, 4])], { strings: { equation: 'ij,jk->ik' } }],
    good: ['Einsum', [3, 3], ['x', 'w'], [f32('w', [3, 4])], { strings: { equation: 'ij,jk->ik' } }],
    fixed: invalidAt('ShapeMismatch', 'Einsum', 'shapes \\[3,2\\] and \\[3,4\\] do not match \\(2 != 3\\)$'), symbolic: atEvery('label \'j\' has sizes 2 and 3'), ortAtCreate: false },
  { what: 'Einsum of another count of operands than inputs', bad: ['Einsum', [3, 2], ['x', 'w'], [f32('w', [3, 4])], { strings: { equation: 'ij->i' } }],
    good: ['Einsum', [3, 2], ['x', 'w'], [f32('w', [4, 2])], { strings: { equation: 'ij,kj->ik' } }],
    fixed: invalidAt('Format', 'Einsum', 'equation \'ij->i\' has 1 operands, the node 2$'), symbolic: atEvery('the equation \'ij->i\' has 1 operands, and the node 2 inputs'), ortAtCreate: true },
  { what: 'Einsum naming more dims than its operand has', bad: ['Einsum', [3, 2], ['x'], [], { strings: { equation: 'ijk->i' } }], good: ['Einsum', [3, 2], ['x'], [], { strings: { equation: '...j->...' } }],
    fixed: invalidAt('ShapeMismatch', 'Einsum', '\'ijk\' names 3 dims, the operand has 2$'), symbolic: atEvery('\'ijk\' names 3 dims, and input 0 has 2'), ortAtCreate: true },
  { what: 'Einsum of an output label in no operand', bad: ['Einsum', [3, 2], ['x'], [], { strings: { equation: 'ij->ik' } }], good: ['Einsum', [3, 2], ['x'], [], { strings: { equation: 'ij->ji' } }],
    fixed: invalidAt('Format', 'Einsum', 'output subscript 1 of \'ij->ik\' is in no operand or repeated$'), symbolic: atEvery('output label \'k\' is in no operand'), ortAtCreate: false },
  { what: 'Einsum of a diagonal of two sizes', bad: ['Einsum', [2, 2, 3], ['x'], [], { strings: { equation: 'ijj->i' } }], good: ['Einsum', [2, 3, 3], ['x'], [], { strings: { equation: 'ijj->ij' } }],
    fixed: invalidAt('ShapeMismatch', 'Einsum', 'a repeated subscript has sizes 2 and 3 in one operand$'), symbolic: atEvery('label \'j\' has sizes 2 and 3 in one operand'), ortAtCreate: false },
  { what: 'GatherElements of indices of another rank', bad: ['GatherElements', [3, 2], ['x', 'i'], [i64('i', [2], [0, 1])]], good: ['GatherElements', [3, 2], ['x', 'i'], [i64('i', [1, 2], [0, -1])]],
    fixed: invalidAt('ShapeMismatch', 'GatherElements', 'index \\[2\\] must have the rank of input \\[3,2\\] and no larger size off dim 0$'),
    symbolic: atEvery('indices \\(input 1\\) has rank 1, and the data rank 2'), ortAtCreate: false },
  { what: 'GatherElements of indices larger than the data off the axis', bad: ['GatherElements', [3, 2], ['x', 'i'], [i64('i', [2, 3], [0, 1, 2, 0, 1, 2])]],
    good: ['GatherElements', [3, 2], ['x', 'i'], [i64('i', [4, 2], [0, 1, 2, 0, 1, 2, -1, -3])]],
    fixed: invalidAt('ShapeMismatch', 'GatherElements', 'index \\[2,3\\] must have the rank of input \\[3,2\\] and no larger size off dim 0$'),
    symbolic: atEvery('indices have size 3 at axis 1, more than the data\'s 2'), ortAtCreate: false },
  { what: 'GatherElements of constant indices out of range along a fixed axis', bad: ['GatherElements', [3, 2], ['x', 'i'], [i64('i', [1, 2], [0, 2])], { ints: { axis: 1 } }],
    good: ['GatherElements', [3, 2], ['x', 'i'], [i64('i', [2, 2], [0, 1, -1, 0])], { ints: { axis: 1 } }],
    fixed: null, symbolic: atEvery('index 2 is out of range for axis 1 of size 2'), ortAtCreate: false },
  { what: 'ScatterElements of updates of another shape than its indices', bad: ['ScatterElements', [3, 2], ['x', 'i', 'u'], [i64('i', [1, 2], [0, 1]), f32('u', [2, 2])]],
    good: ['ScatterElements', [3, 2], ['x', 'i', 'u'], [i64('i', [1, 2], [2, 1]), f32('u', [1, 2])]],
    fixed: invalidAt('ShapeMismatch', 'ScatterElements', 'src \\[2,2\\] must have index\'s shape \\[1,2\\]$'), symbolic: atEvery('updates and indices differ in size: 1 and 2'), ortAtCreate: false },
  { what: 'LayerNormalization of a Scale that does not broadcast to the normalised shape', bad: ['LayerNormalization', [3, 4], ['x', 's'], [f32('s', [3])]],
    good: ['LayerNormalization', [3, 4], ['x', 's'], [f32('s', [1])]], // broadcast, as onnxruntime-web takes it
    fixed: invalidAt('ShapeMismatch', 'LayerNormalization', 'Scale \\[3\\] does not broadcast to the normalised shape \\[4\\]$'),
    symbolic: atEvery('Scale \\(input 1\\) has size 3 at axis -1, and the input 4'), ortAtCreate: false },
  { what: 'LayerNormalization of a B of more dims than the normalised shape', bad: ['LayerNormalization', [3, 4], ['x', 's', 'b'], [f32('s', [4]), f32('b', [2, 4])]],
    good: ['LayerNormalization', [3, 4], ['x', 's', 'b'], [f32('s', [4]), f32('b', [1, 4])], { ints: { axis: -2 } }],
    fixed: invalidAt('ShapeMismatch', 'LayerNormalization', 'B \\[2,4\\] does not broadcast to the normalised shape \\[4\\]$'),
    symbolic: atEvery('B \\(input 2\\) has rank 2, and the normalised shape \\(axis 1 on\\) rank 1'), ortAtCreate: false },
  { what: 'LayerNormalization along an axis past the rank', bad: ['LayerNormalization', [3, 4], ['x', 's'], [f32('s', [4])], { ints: { axis: 2 } }],
    good: ['LayerNormalization', [3, 4], ['x', 's'], [f32('s', [4])], { ints: { axis: 1 } }],
    fixed: invalidAt('IndexOutOfRange', 'LayerNormalization', 'axis 2 is out of range for 2 dims$'), symbolic: atEvery('axis 2 is outside \\[-2, 1\\] for an input of rank 2'), ortAtCreate: false },
  { what: 'InstanceNormalization of other channels than its scale\'s', bad: ['InstanceNormalization', [1, 2, 3], ['x', 's', 'b'], [f32('s', [3]), f32('b', [3])]],
    good: ['InstanceNormalization', [1, 3, 2], ['x', 's', 'b'], [f32('s', [3]), f32('b', [3])]],
    fixed: invalidAt('ShapeMismatch', 'InstanceNormalization', 'weight has shape \\[3\\], expected \\[2\\]$'), symbolic: atEvery('scale \\(input 1\\) has size 3, and the input has 2 channels'), ortAtCreate: false },
  // ConvTranspose, GatherND, ScatterND, Resize, LSTM, GRU: rows of src/runtime/shapes.c
  { what: 'ConvTranspose of other channels than its weight\'s', bad: ['ConvTranspose', [1, 2, 3, 3], ['x', 'w'], [f32('w', [3, 1, 2, 2])]],
    good: ['ConvTranspose', [1, 3, 3, 3], ['x', 'w'], [f32('w', [3, 1, 2, 2])]],
    fixed: invalidAt('ShapeMismatch', 'ConvTranspose', 'input \\[1,2,3,3\\] has 2 channels, weight \\[3,1,2,2\\] expects 3 \\(weight.shape\\[0\\]\\)$'), symbolic: atEvery('the input has 2 channels, and the weight takes 3'), ortAtCreate: false },
  { what: 'ConvTranspose whose kernel_shape is not its weight\'s', bad: ['ConvTranspose', [1, 1, 3, 3], ['x', 'w'], [f32('w', [1, 1, 2, 2])], { ints: { kernel_shape: [3, 3] } }],
    good: ['ConvTranspose', [1, 1, 3, 3], ['x', 'w'], [f32('w', [1, 1, 2, 2])], { ints: { kernel_shape: [2, 2], strides: [2, 2] } }],
    fixed: invalidAt('Format', 'ConvTranspose', 'kernel_shape does not match the weight\'s shape \\(dim 0: 3, the weight has 2\\)$'), symbolic: atEvery('kernel_shape and the weight\'s spatial size differ: 3 and 2'), ortAtCreate: false },
  { what: 'ConvTranspose of a bias of other than its output channels', bad: ['ConvTranspose', [1, 1, 3, 3], ['x', 'w', 'b'], [f32('w', [1, 2, 2, 2]), f32('b', [3])]],
    good: ['ConvTranspose', [1, 2, 3, 3], ['x', 'w', 'b'], [f32('w', [2, 1, 2, 2]), f32('b', [2])], { ints: { group: 2, pads: [0, 1, 0, 1] } }],
    fixed: invalidAt('ShapeMismatch', 'ConvTranspose', 'bias \\[3\\] must be \\[2\\]$'), symbolic: atEvery('B \\(input 2\\) and the output channels \\(the weight\'s size at axis 1 times group\\) differ: 3 and 2'), ortAtCreate: false },
  { what: 'GatherND of indices ending in more axes than the data has', bad: ['GatherND', [3, 2], ['x', 'i'], [i64('i', [1, 3], [0, 1, 0])]],
    good: ['GatherND', [3, 2], ['x', 'i'], [i64('i', [2, 2], [0, 1, 2, 0])]],
    fixed: invalidAt('ShapeMismatch', 'GatherND', 'indices of 2 dims \\(the last 3\\) for data of 2 dims with batch_dims 0$'), symbolic: atEvery('the indices\' last axis has size 3, more than the data\'s 2 axes after batch_dims'), ortAtCreate: true },
  { what: 'GatherND of batch_dims not below the indices\' rank', bad: ['GatherND', [3, 2], ['x', 'i'], [i64('i', [3, 1], [0, 1, 0])], { ints: { batch_dims: 2 } }],
    good: ['GatherND', [3, 2], ['x', 'i'], [i64('i', [3, 1], [0, 1, -1])], { ints: { batch_dims: 1 } }],
    fixed: invalidAt('ShapeMismatch', 'GatherND', 'indices of 2 dims \\(the last 1\\) for data of 2 dims with batch_dims 2$'), symbolic: atEvery('batch_dims 2 for indices of rank 2 and data of rank 2 \\(it is below both\\)'), ortAtCreate: true },
  { what: 'ScatterND of updates of another shape than its indices and data give', bad: ['ScatterND', [3, 2], ['x', 'i', 'u'], [i64('i', [2, 1], [0, 2]), f32('u', [2, 3])]],
    good: ['ScatterND', [3, 2], ['x', 'i', 'u'], [i64('i', [2, 1], [0, 2]), f32('u', [2, 2])]],
    fixed: invalidAt('ShapeMismatch', 'ScatterND', 'cannot expand \\[2,3\\] to \\[2,2\\]$'), symbolic: atEvery('updates and the indices\' and data\'s sizes differ: 3 and 2'), ortAtCreate: false },
  { what: 'ScatterND of indices ending in more axes than the data has', bad: ['ScatterND', [3, 2], ['x', 'i', 'u'], [i64('i', [1, 3], [0, 1, 0]), f32('u', [1])]],
    good: ['ScatterND', [3, 2], ['x', 'i', 'u'], [i64('i', [1, 2], [2, 1]), f32('u', [1])]],
    fixed: invalidAt('Format', 'ScatterND', 'indices must end in an axis of 1 to data\'s 2 dims, not 3$'), symbolic: atEvery('indices of rank 2 ending in an axis of 3 for data of rank 2'), ortAtCreate: false },
  { what: 'Resize of another count of scales than axes', bad: ['Resize', [1, 1, 2, 2], ['x', '', 's'], [f32('s', [3])]],
    good: ['Resize', [1, 1, 2, 2], ['x', '', 's'], [{ name: 's', dtype: 'float32', dims: [4], values: [1, 1, 2, 1.5] }]],
    fixed: invalidAt('Format', 'Resize', '3 scales for 4 axes$'), symbolic: atEvery('scales \\(input 2\\) has 3 values for 4 axes'), ortAtCreate: true },
  { what: 'Resize of another count of sizes than axes', bad: ['Resize', [1, 1, 2, 2], ['x', '', '', 'z'], [i64('z', [2], [3, 3])]],
    good: ['Resize', [1, 1, 2, 2], ['x', '', '', 'z'], [i64('z', [4], [1, 1, 3, 3])], { strings: { mode: 'linear' } }],
    fixed: invalidAt('Format', 'Resize', '2 sizes for 4 axes$'), symbolic: atEvery('sizes \\(input 3\\) has 2 values for 4 axes'), ortAtCreate: true },
  { what: 'LSTM of a W of another input size than X\'s', bad: ['LSTM', [2, 1, 2], ['x', 'w', 'r'], [f32('w', [1, 8, 3]), f32('r', [1, 8, 2])], { ints: { hidden_size: 2 } }, ['y', 'h', 'c']],
    good: ['LSTM', [2, 1, 3], ['x', 'w', 'r'], [f32('w', [1, 8, 3]), f32('r', [1, 8, 2])], { ints: { hidden_size: 2 } }, ['y', 'h', 'c']],
    fixed: invalidAt('ShapeMismatch', 'LSTM', 'x \\[2,1,2\\] has input size 2, w_ih \\[8,3\\] expects 3$'), symbolic: atEvery('W \\(input 1\\) has size 3 at axis 2, and the input\'s size takes 2 \\(hidden_size 2, 1 directions\\)'), ortAtCreate: false },
  { what: 'LSTM bidirectional of a W of one direction', bad: ['LSTM', [2, 1, 2], ['x', 'w', 'r'], [f32('w', [1, 8, 2]), f32('r', [1, 8, 2])], { ints: { hidden_size: 2 }, strings: { direction: 'bidirectional' } }, ['y', 'h', 'c']],
    good: ['LSTM', [2, 1, 2], ['x', 'w', 'r'], [f32('w', [2, 8, 2]), f32('r', [2, 8, 2])], { ints: { hidden_size: 2 }, strings: { direction: 'bidirectional' } }, ['y', 'h', 'c']],
    fixed: invalidAt('ShapeMismatch', 'LSTM', 'X, W and R do not fit hidden_size 2 and direction bidirectional$'), symbolic: atEvery('W \\(input 1\\) has size 1 at axis 0, and the node takes 2 \\(hidden_size 2, 2 directions\\)'), ortAtCreate: false },
  { what: 'GRU of a W of other gates than hidden_size gives', bad: ['GRU', [2, 1, 2], ['x', 'w', 'r'], [f32('w', [1, 8, 2]), f32('r', [1, 8, 2])], { ints: { hidden_size: 2 } }, ['y', 'h']],
    good: ['GRU', [2, 1, 2], ['x', 'w', 'r'], [f32('w', [1, 6, 2]), f32('r', [1, 6, 2])], { ints: { hidden_size: 2, layout: 0 } }, ['y', 'h']],
    fixed: invalidAt('ShapeMismatch', 'GRU', 'X, W, R and B do not fit hidden_size 2 and direction forward$'), symbolic: atEvery('W \\(input 1\\) has size 8 at axis 1, and the node takes 6 \\(hidden_size 2, 1 directions\\)'), ortAtCreate: false },
  { what: 'RNN of an R of another size than hidden_size', bad: ['RNN', [2, 1, 2], ['x', 'w', 'r'], [f32('w', [1, 2, 2]), f32('r', [1, 2, 3])], { ints: { hidden_size: 2 } }, ['y', 'h']],
    good: ['RNN', [2, 1, 2], ['x', 'w', 'r'], [f32('w', [1, 2, 2]), f32('r', [1, 2, 2])], { ints: { hidden_size: 2 } }, ['y', 'h']],
    fixed: invalidAt('ShapeMismatch', 'RNN', 'X, W, R and B do not fit hidden_size 2 and direction forward$'), symbolic: atEvery('R \\(input 2\\) has size 3 at axis 2, and the node takes 2 \\(hidden_size 2, 1 directions\\)'), ortAtCreate: false },
  { what: 'GroupNormalization of groups that do not divide the channels', bad: ['GroupNormalization', [1, 4, 2], ['x', 's', 'b'], [f32('s', [3]), f32('b', [3])], { ints: { num_groups: 3 } }, ['y'], 18],
    good: ['GroupNormalization', [1, 6, 2], ['x', 's', 'b'], [f32('s', [3]), f32('b', [3])], { ints: { num_groups: 3 } }, ['y'], 18],
    fixed: invalidAt('ShapeMismatch', 'GroupNormalization', '3 groups for the input\'s channels$'), symbolic: atEvery('num_groups 3 does not divide the input\'s 4 channels'), ortAtCreate: false },
  { what: 'GroupNormalization of a scale neither per group nor per channel', bad: ['GroupNormalization', [1, 4, 2], ['x', 's', 'b'], [f32('s', [3]), f32('b', [2])], { ints: { num_groups: 2 } }, ['y'], 18],
    good: ['GroupNormalization', [1, 4, 2], ['x', 's', 'b'], [f32('s', [2]), f32('b', [2])], { ints: { num_groups: 2 } }, ['y'], 18],
    fixed: invalidAt('ShapeMismatch', 'GroupNormalization', 'scale has 3 values$'), symbolic: atEvery('scale \\(input 1\\) has 3 values, neither num_groups 2 nor the input\'s 4 channels'), ortAtCreate: true },
  // a pool window larger than its input is no contradiction: ONNX's length is 0, and both give an empty result
  { what: 'MaxPool of a window larger than its input', good: ['MaxPool', [1, 1, 2, 2], ['x'], [], { ints: { kernel_shape: [3, 3] } }, ['y', 'i']] },
];

/** The bytes of a one-node graph [op, dims, inputs, inits, fields, outputs, opset] (x's first size named n when symbolic). */
const graphOf = ([op, dims, ins, inits, fields = {}, outs = ['y'], opset = 17], symbolic) =>
  onnxBytes({ nodes: [{ op, inputs: ins, outputs: outs, name: 'bad', ...fields }], inputs: [{ name: 'x', dims: symbolic ? ['n', ...dims.slice(1)] : dims }], inits, outputs: outs, opset });
/** x of those dims, as the Session and onnxruntime-web take it. */
function feedOf(dims) {
  const data = Float32Array.from({ length: dims.reduce((a, b) => a * b, 1) }, (_, k) => (k % 7) - 3);
  return [{ data, dims, type: 'float32' }, new ort.Tensor('float32', data, dims)];
}

test('graphs that contradict themselves at the shapes their inputs declare: Format at create naming the node and the mismatch; each valid twin made and run as onnxruntime-web runs it', async () => {
  for (const symbolic of [false, true]) {
    for (const { what, bad, fixed, symbolic: atCreate, ortAtCreate } of selfContradicting.filter((c) => c.bad)) {
      const label = `${what}${symbolic ? ' (x\'s first size a symbol)' : ''}`;
      const bytes = graphOf(bad, symbolic), [ours, theirs] = feedOf(bad[1]);
      // the oracle: onnxruntime-web refuses it, at create or at its first run
      const o = await ort.InferenceSession.create(bytes, { executionProviders: ['wasm'] }).catch(() => null);
      assert.equal(o === null, ortAtCreate, `${label}: onnxruntime-web ${o ? 'made' : 'refused'} it at create`);
      if (o) {
        await assert.rejects(o.run({ x: theirs }), `${label}: onnxruntime-web ran it`);
        await o.release();
      }
      const re = symbolic ? atCreate : fixed;
      if (re) {
        await sessionRefuses(bytes, re);
        continue;
      }
      // a graph that fits at some size of its symbols (Reshape [n, 2] to [4, 2] at n = 4, Gather of
      // index 5 along n): made, and refused by the first run at a size where it does not
      const s = await om.InferenceSession.create(bytes);
      try {
        for (let k = 0; k < 2; k++) assert.throws(() => s.run({ x: ours }), (e) => e instanceof om.OmError && /\bbad \(\w+\)/.test(e.message), label);
      } finally {
        s.dispose();
      }
    }
    // the valid twins: made by both, the same results
    for (const { what, good } of selfContradicting) await runsAsOnnxruntime(graphOf(good, symbolic), good[1], what);
  }
});

/** Checks that the Session and onnxruntime-web both make bytes and give the same outputs for x of dims. */
async function runsAsOnnxruntime(bytes, dims, what) {
  const [ours, theirs] = feedOf(dims);
  const s = await om.InferenceSession.create(bytes);
  const o = await ort.InferenceSession.create(bytes, { executionProviders: ['wasm'] });
  try {
    const got = s.runData({ x: ours }), want = await o.run({ x: theirs });
    for (const name of s.outputNames) {
      const g = got[name], w = want[name];
      assert.equal(mismatch({ dtype: g.type, dims: g.dims, data: g.data }, { dtype: w.type, dims: w.dims, data: w.data }), null, `${what}: ${name}`);
    }
  } finally {
    s.dispose();
    await o.release();
  }
}

// Symbolic sizes: a symbol may be 0, 1 or any size, and two symbols may be equal. A graph that fits
// at some size of its symbols is made, as onnxruntime-web makes it, and runs where it fits with
// onnxruntime-web's results; one that fits at none is Format at create naming the node, as
// onnxruntime-web refuses it. { what, g: [op, x's dims, inputs, initializers, fields, outputs], at:
// x's shape where it fits, or why: the Session's words where it fits nowhere }.
const atSomeSize = [
  { what: 'Squeeze of a symbol\'s axis (1 at some size)', g: ['Squeeze', ['n', 2], ['x', 'a'], [i64('a', [1], [0])]], at: [1, 2] },
  { what: 'Squeeze of every axis of size 1, a symbol\'s among them', g: ['Squeeze', ['n', 1, 2], ['x'], []], at: [3, 1, 2] },
  { what: 'Reshape of [n, 2] to [4, 2] (n = 4)', g: ['Reshape', ['n', 2], ['x', 's'], [i64('s', [2], [4, 2])]], at: [4, 2] },
  { what: 'Reshape of [n, 3] to [n, 4] (n = 0)', g: ['Reshape', ['n', 3], ['x', 's'], [i64('s', [2], [0, 4])]], at: [0, 3] },
  { what: 'Reshape of [n, m] to [2, -1] (n m even)', g: ['Reshape', ['n', 'm'], ['x', 's'], [i64('s', [2], [2, -1])]], at: [3, 4] },
  { what: 'Reshape of [n, 3] to [n, -1, 2]', g: ['Reshape', ['n', 3], ['x', 's'], [i64('s', [3], [0, -1, 2])]], why: 'the input\'s \\[n,3\\] elements fill \\[n,\\?,2\\] at no size' },
  { what: 'Gather of index 5 along a symbol\'s axis', g: ['Gather', ['n', 2], ['x', 'i'], [i64('i', [2], [0, 5])]], at: [6, 2] },
  { what: 'Split along a symbol\'s axis', g: ['Split', ['n', 4], ['x', 's'], [i64('s', [2], [1, 2])], {}, ['y', 'z']], at: [3, 4] },
  { what: 'Slice of a symbol\'s axis to INT64_MAX', g: ['Slice', ['n', 4], ['x', 's', 'e', 'a'], slices([1], [9223372036854775807n], [0])], at: [3, 4] },
  { what: 'ReduceSum of one axis named twice', g: ['ReduceSum', ['n', 4], ['x', 'a'], [i64('a', [2], [0, -2])], { ints: { keepdims: 0 } }], at: [3, 4] },
  { what: 'GatherElements of index 5 along a symbol\'s axis', g: ['GatherElements', ['n', 2], ['x', 'i'], [i64('i', [1, 2], [5, 0])]], at: [6, 2] },
  { what: 'Einsum of a label of a symbol\'s size and a fixed one', g: ['Einsum', ['n', 2], ['x', 'w'], [f32('w', [3, 4])], { strings: { equation: 'ji,jk->ik' } }], at: [3, 2] },
  { what: 'LayerNormalization over a symbol\'s axis with a fixed Scale', g: ['LayerNormalization', ['n', 4], ['x', 's'], [f32('s', [3, 4])], { ints: { axis: 0 } }], at: [3, 4] },
  { what: 'ConvTranspose of a symbol\'s channels', g: ['ConvTranspose', [1, 'c', 3, 3], ['x', 'w'], [f32('w', [2, 1, 2, 2])], { ints: { strides: [2, 2] } }], at: [1, 2, 3, 3] },
  { what: 'GatherND of index 5 along a symbol\'s axis', g: ['GatherND', ['n', 2], ['x', 'i'], [i64('i', [1, 2], [5, 1])]], at: [6, 2] },
  { what: 'ScatterND of updates of a symbol\'s size', g: ['ScatterND', [3, 'm'], ['x', 'i', 'u'], [i64('i', [2, 1], [0, 2]), f32('u', [2, 2])]], at: [3, 2] },
  { what: 'Resize of a symbol\'s axis by a constant scale', g: ['Resize', [1, 1, 'h', 2], ['x', '', 's'], [{ name: 's', dtype: 'float32', dims: [4], values: [1, 1, 2, 1.5] }]], at: [1, 1, 3, 2] },
  { what: 'LSTM of a symbol\'s input size', g: ['LSTM', ['t', 1, 'i'], ['x', 'w', 'r'], [f32('w', [1, 8, 2]), f32('r', [1, 8, 2])], { ints: { hidden_size: 2 } }, ['y', 'h', 'c']], at: [3, 1, 2] },
  { what: 'GroupNormalization of a symbol\'s channels', g: ['GroupNormalization', [1, 'c', 2], ['x', 's', 'b'], [f32('s', [2]), f32('b', [2])], { ints: { num_groups: 2 } }, ['y'], 18], at: [1, 4, 2] },
  { what: 'BatchNormalization of a symbol\'s channels', g: ['BatchNormalization', ['n', 'c', 2, 2], ['x', 's', 'b', 'm', 'v'], stats([3], [3], [3], [3])], at: [2, 3, 2, 2] },
  { what: 'BatchNormalization of a symbol\'s channels and statistics of two sizes', g: ['BatchNormalization', ['n', 'c', 2, 2], ['x', 's', 'b', 'm', 'v'], stats([3], [3], [2], [3])],
    why: 'input_mean \\(input 3\\) has size 2, and scale \\(input 1\\) has size 3' },
];

test('symbolic sizes: a graph that fits at some size is made and runs there as onnxruntime-web runs it; one that fits at none is Format at create', async () => {
  for (const { what, g, at, why } of atSomeSize) {
    const bytes = graphOf(g, false);
    if (at) {
      await runsAsOnnxruntime(bytes, at, what);
      continue;
    }
    await ortRefuses(bytes);
    await sessionRefuses(bytes, atEvery(why));
  }
});

// String attributes outside the values ONNX defines for them: Format at create naming the node, the
// attribute and the values (the op table lists them), at fixed sizes and with a symbol, where a rule
// would meet them only when a plan reads it; onnxruntime-web refuses them at create too, but
// Gelu's approximate and the reductions of ScatterElements and NegativeLogLikelihoodLoss (its
// first run). { op, x's dims, inputs,
// initializers, fields of the bad value, fields of a valid one, the values, ortAtCreate, opset }.
const scales = { name: 's', dtype: 'float32', dims: [4], values: [1, 1, 2, 2] };
const enumerated = [
  ['MaxPool', [1, 1, 4, 4], ['x'], [], { ints: { kernel_shape: [2, 2] }, strings: { auto_pad: 'NOTWET' } }, { ints: { kernel_shape: [2, 2] }, strings: { auto_pad: 'SAME_UPPER' } },
    'NOTSET\\|SAME_UPPER\\|SAME_LOWER\\|VALID', true],
  ['Conv', [1, 1, 4, 4], ['x', 'w'], [f32('w', [1, 1, 2, 2])], { strings: { auto_pad: 'VALLID' } }, { strings: { auto_pad: 'VALID' } }, 'NOTSET\\|SAME_UPPER\\|SAME_LOWER\\|VALID', true],
  ['Resize', [1, 1, 2, 2], ['x', '', 's'], [scales], { strings: { mode: 'lineOr' } }, { strings: { mode: 'linear' } },
    'nearest\\|linear\\|cubic', true],
  ['Resize', [1, 1, 2, 2], ['x', '', 's'], [scales], { strings: { nearest_mode: 'up' } }, { strings: { nearest_mode: 'floor' } },
    'round_prefer_floor\\|round_prefer_ceil\\|floor\\|ceil', true],
  ['LSTM', [2, 1, 2], ['x', 'w', 'r'], [f32('w', [1, 8, 2]), f32('r', [1, 8, 2])], { ints: { hidden_size: 2 }, strings: { direction: 'forwarN' } },
    { ints: { hidden_size: 2 }, strings: { direction: 'reverse' } }, 'forward\\|reverse\\|bidirectional', true, ['y', 'h', 'c']],
  ['Pad', [2, 2], ['x', 'p'], [i64('p', [4], [0, 1, 0, 1])], { strings: { mode: 'wrapp' } }, { strings: { mode: 'edge' } }, 'constant\\|reflect\\|edge\\|wrap', true],
  ['GridSample', [1, 1, 2, 2], ['x', 'g'], [f32('g', [1, 2, 2, 2])], { strings: { mode: 'bilinearr' } }, { strings: { mode: 'bilinear' } },
    'linear\\|nearest\\|cubic\\|bilinear\\|bicubic', true],
  ['DepthToSpace', [1, 4, 1, 1], ['x'], [], { ints: { blocksize: 2 }, strings: { mode: 'dcr' } }, { ints: { blocksize: 2 }, strings: { mode: 'CRD' } }, 'DCR\\|CRD', true],
  ['NegativeLogLikelihoodLoss', [2, 3], ['x', 't'], [i64('t', [2], [0, 2])], { strings: { reduction: 'max' } }, { strings: { reduction: 'sum' } }, 'none\\|sum\\|mean', false],
  ['ScatterElements', [2, 3], ['x', 'i', 'u'], [i64('i', [1, 3], [0, 1, 0]), f32('u', [1, 3])], { strings: { reduction: 'adds' } }, { strings: { reduction: 'add' } },
    'none\\|add\\|mul\\|max\\|min', false],
  ['Gelu', [2, 3], ['x'], [], { strings: { approximate: 'tanhh' } }, { strings: { approximate: 'tanh' } }, 'none\\|tanh', false, ['y'], 20],
];

test('a string attribute outside the values ONNX defines (auto_pad, mode, direction, reduction, ...): Format at create, as onnxruntime-web refuses it; a value it defines runs as onnxruntime-web runs it', async () => {
  for (const symbolic of [false, true]) {
    for (const [op, dims, ins, inits, bad, good, values, ortAtCreate, outs = ['y'], opset = 17] of enumerated) {
      const [name, value] = Object.entries(bad.strings).find(([k, v]) => good.strings[k] !== v);
      const bytes = graphOf([op, dims, ins, inits, bad, outs, opset], symbolic);
      const o = await ort.InferenceSession.create(bytes, { executionProviders: ['wasm'] }).catch(() => null);
      assert.equal(o === null, ortAtCreate, `${op} ${name} '${value}': onnxruntime-web ${o ? 'made' : 'refused'} it at create`);
      await o?.release();
      await sessionRefuses(bytes, new RegExp(`^session: node 'bad' \\(${op}\\): attribute ${name} is '${value}', which ONNX does not define \\(${values}\\)$`));
      await runsAsOnnxruntime(graphOf([op, dims, ins, inits, good, outs, opset], symbolic), dims, `${op} ${name} ${good.strings[name]}`);
    }
  }
});

test('an input the model\'s opset has as an attribute (ReduceMax\'s axes before opset 18): Format at create, as onnxruntime-web refuses it', async () => {
  const at = (opset) => onnxBytes({ nodes: [{ op: 'ReduceMax', inputs: ['x', 'a'], outputs: ['y'], name: 'bad' }], inputs: [{ name: 'x', dims: ['n', 2] }], outputs: ['y'],
                                    inits: [i64('a', [1], [1])], opset });
  await ortRefuses(at(17));
  await sessionRefuses(at(17), /^onnx: node 'bad' \(ReduceMax\) has 2 inputs; the model's opset takes 1 \(axes is an attribute there\)$/);
  await runsAsOnnxruntime(at(18), [3, 2], 'ReduceMax at opset 18');
});

test('an initializer also listed as a graph input: from IR 4 a default a run may leave out or override; before, a constant', async () => {
  const add = (ir, wInput, init = true) => onnxBytes({ nodes: [{ op: 'Add', inputs: ['x', 'w'], outputs: ['y'], name: 'add' }], ir, opset: ir < 4 ? 7 : 17,
                                                      inputs: [{ name: 'x', dims: ['n', 2] }, ...(wInput ? [wInput] : [])], outputs: ['y'],
                                                      inits: init ? [{ name: 'w', dtype: 'float32', dims: [2], values: [10, 20] }] : [] });
  const feed = (data, dims) => ({ data: Float32Array.from(data), dims, type: 'float32' });
  const x = feed([1, 2, 3, 4, 5, 6], [3, 2]);
  /** onnxruntime-web's y for bytes on feeds (its Tensors). */
  const theirs = async (bytes, feeds) => {
    const o = await ort.InferenceSession.create(bytes, { executionProviders: ['wasm'] });
    try {
      const t = (await o.run(Object.fromEntries(Object.entries(feeds).map(([k, f]) => [k, new ort.Tensor('float32', f.data, f.dims)])))).y;
      return { names: o.inputNames, y: { dtype: t.type, dims: t.dims, data: t.data } };
    } finally {
      await o.release();
    }
  };
  const ours = (s, feeds) => {
    const t = s.run(feeds).y;
    try { return { dtype: t.dtype, dims: t.shape, data: t.toArray() }; } finally { t.dispose(); }
  };
  for (const [ir, wInput] of [[8, { name: 'w', dims: [2] }], [4, { name: 'w', dims: ['k'] }]]) {
    const bytes = add(ir, wInput);
    const s = await om.InferenceSession.create(bytes);
    try {
      const left = await theirs(bytes, { x }); // onnxruntime-web lists only x, and uses the initializer
      assert.deepEqual(s.inputNames, left.names);
      assert.deepEqual(s.inputs.map((i) => [i.name, i.hasDefault ?? false]), [['x', false], ['w', true]]);
      // fed: the override's values are what the same graph with w a plain input gives (onnxruntime-web's
      // JS refuses a feed of a name outside its inputNames, while its C API overrides as here)
      const w = feed([100, 200], [2]);
      const plain = await theirs(add(ir, wInput, false), { x, w });
      for (let k = 0; k < 2; k++) { // left out, fed, left out again: a plan each, none mixed up
        assert.equal(mismatch(ours(s, { x }), left.y), null);
        assert.equal(mismatch(ours(s, { x, w }), plain.y), null);
      }
      if (wInput.dims[0] === 'k') { // a size the input leaves symbolic takes any: broadcast from 1
        const w1 = feed([7], [1]);
        assert.equal(mismatch(ours(s, { x, w: w1 }), (await theirs(add(ir, wInput, false), { x, w: w1 })).y), null);
      } else {
        assert.throws(() => s.run({ x, w: feed([1, 2, 3], [3]) }),
                      (e) => e instanceof om.OmError && e.kind === 'ShapeMismatch' && e.message === "run: input 'w' has size 3 at dim 0, the graph takes 2 (shape [3])");
        assert.throws(() => s.run({ x, w: { data: BigInt64Array.from([1n, 2n]), dims: [2], type: 'int64' } }),
                      (e) => e instanceof om.OmError && e.kind === 'DtypeMismatch' && e.message === 'run: feed "w" is int64, the graph takes float32');
      }
      assert.throws(() => s.run({ w }), (e) => e instanceof om.OmError && e.kind === 'InvalidArgument' && e.message === 'run: feed "x" is missing (inputs: x)');
    } finally {
      s.dispose();
    }
  }
  // IR 3: every initializer is listed as an input, and stays a constant (onnxruntime reads it so): not fed
  const bytes = add(3, { name: 'w', dims: [2] });
  const s = await om.InferenceSession.create(bytes);
  try {
    const left = await theirs(bytes, { x });
    assert.deepEqual(s.inputNames, left.names);
    assert.equal(mismatch(ours(s, { x }), left.y), null);
    assert.throws(() => s.run({ x, w: feed([1, 2], [2]) }),
                  (e) => e instanceof om.OmError && e.kind === 'InvalidArgument' && e.message === 'run: no graph input is named "w" (inputs: x)');
  } finally {
    s.dispose();
  }
});

test('an op the model\'s opset does not define yet: Format at create naming the node, as onnxruntime-web refuses it', async () => {
  // each op at the opset before the one that first defines it, and at that one (where it runs)
  const cases = [
    [{ op: 'Gelu', inputs: ['x'] }, 20],
    [{ op: 'Mish', inputs: ['x'] }, 18],
    [{ op: 'HardSwish', inputs: ['x'] }, 14],
    [{ op: 'Erf', inputs: ['x'] }, 9],
    [{ op: 'Sin', inputs: ['x'] }, 7],
  ];
  for (const [node, since] of cases) {
    const at = (opset) => onnxBytes({ nodes: [{ ...node, name: 'n', outputs: ['y'] }], inputs: [x], outputs: ['y'], opset, ir: opset < 9 ? 3 : 8 });
    const early = at(since - 1);
    await ortRefuses(early);
    await sessionRefuses(early, new RegExp(`^onnx: node 'n' \\(${node.op}\\): ${node.op} is defined from opset ${since}, and the model imports opset ${since - 1}$`));
    const o = await ort.InferenceSession.create(at(since), { executionProviders: ['wasm'] });
    const theirs = (await o.run({ x: new ort.Tensor('float32', feed32.data, feed32.dims) })).y;
    await o.release();
    const s = await om.InferenceSession.create(at(since));
    try {
      const ours = s.run({ x: feed32 }).y;
      const got = { dtype: ours.dtype, dims: ours.shape, data: ours.toArray() };
      ours.dispose();
      assert.equal(mismatch(got, { dtype: theirs.type, dims: theirs.dims, data: theirs.data }), null, `${node.op} at opset ${since}`);
    } finally {
      s.dispose();
    }
  }
});
