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

test('graph outputs declared of another element type, sizes or rank: Format when planned, naming the node; symbolic sizes take any', async () => {
  const relu = (out) => onnxBytes({ nodes: [{ op: 'Relu', inputs: ['x'], outputs: ['y'], name: 'r' }], inputs: [x], outputs: [out] });
  const cases = [
    [{ name: 'y', dtype: 'int64', dims: ['n', 2] }, /node 'r' \(Relu\): output 0 \('y'\) is FLOAT, and the graph declares it INT64/],
    [{ name: 'y', dims: [2, 3] }, /node 'r' \(Relu\): output 0 \('y'\) has shape \[3,2\], and the graph declares \[2,3\]/],
    [{ name: 'y', dims: [3, 2, 1] }, /node 'r' \(Relu\): output 0 \('y'\) has shape \[3,2\], and the graph declares \[3,2,1\]/],
  ];
  for (const [out, re] of cases) {
    await ortRefuses(relu(out));
    await sessionRefuses(relu(out), re, feed32, true);
  }
  const bytes = relu({ name: 'y', dims: ['m', 2] });
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
