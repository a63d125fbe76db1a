// Every version (src/runtime/versions.c) and values that decide shapes (src/runtime/session.c), on
// graphs written by hand: each runs in the Session and in onnxruntime-web on the same bytes and
// feeds, and must agree by ONNX's rule; what the graph layer does not take is refused with its
// kind and a message naming it. ONNX 1.12's node tests (onnx-conformance.test.mjs) stop at opset
// 17, so the opset 18 to 20 changes are here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as om from 'onemodel';
import * as ort from 'onnxruntime-web';
import { onnxBytes } from '../../tools/onnx_bytes.mjs';
import { mismatch } from './onnx-backend.mjs';

await om.ready({ threads: false });
ort.env.wasm.numThreads = 1;
ort.env.logLevel = 'fatal';

const x234 = { data: Float32Array.from({ length: 24 }, (_, k) => ((k * 7) % 11) - 5), dims: [2, 3, 4], type: 'float32' };
const i64 = (...v) => ({ data: BigInt64Array.from(v.map(BigInt)), dims: [v.length], type: 'int64' });
const inputOf = (name, f) => ({ name, dims: f.dims, dtype: f.type });
const anySize = (name, f) => ({ name, dims: f.dims.map((_, d) => `${name}${d}`), dtype: f.type }); /* an operand fed with other lengths */

/** The model of one node y = op(inputs) at opset (y declared of dtype out), fed by feeds (named as the node's inputs). */
function model({ op, inputs = ['x'], attrs, opset, ir, inits, domain, imports, out = 'float32' }, feeds) {
  const declared = Object.entries(feeds).map(([n, f]) => (n === 'x' ? inputOf : anySize)(n, f));
  return onnxBytes({ nodes: [{ op, inputs, outputs: ['y'], attrs, domain }], inputs: declared, inits, outputs: [{ name: 'y', dtype: out }], opset, ir, imports });
}

/** Runs bytes on feeds in the Session and in onnxruntime-web, and checks they agree; twin: the
 * bytes onnxruntime-web runs instead (the same graph at a later opset, where it has no kernel of
 * the file's). */
async function agrees(bytes, feeds, twin = bytes) {
  const s = await om.InferenceSession.create(bytes);
  const o = await ort.InferenceSession.create(twin, { executionProviders: ['wasm'] });
  try {
    const ours = s.run(feeds).y;
    const got = { dtype: ours.dtype, dims: ours.shape, data: ours.toArray() };
    ours.dispose();
    const theirs = (await o.run(Object.fromEntries(Object.entries(feeds).map(([n, f]) => [n, new ort.Tensor(f.type, f.data, f.dims)])))).y;
    assert.equal(mismatch(got, { dtype: theirs.type, dims: theirs.dims, data: theirs.data }), null);
  } finally {
    s.dispose();
    await o.release();
  }
}

/** Checks that the Session refuses bytes (at create, or at the run on feeds) with kind and a message matching re. */
async function refuses(bytes, feeds, kind, re) {
  let s;
  try {
    s = await om.InferenceSession.create(bytes);
    s.run(feeds);
  } catch (e) {
    assert.ok(e instanceof om.OmError, String(e));
    assert.equal(e.kind, kind, e.message);
    assert.match(e.message, re);
    return;
  } finally {
    s?.dispose();
  }
  assert.fail('ran');
}

test('opset 18: Reduce* axes as an input, Split num_outputs, Pad axes', async () => {
  const f = { x: x234 };
  for (const op of ['ReduceMean', 'ReduceMax', 'ReduceMin', 'ReduceL2', 'ReduceSumSquare']) {
    await agrees(model({ op, attrs: { axes: [1], keepdims: 0 }, opset: 17 }, f), f);
    await agrees(model({ op, inputs: ['x', 'axes'], attrs: { keepdims: 0 }, opset: 18, inits: [{ name: 'axes', dtype: 'int64', dims: [1], values: [-1] }] }, f), f);
  }
  const seven = { x: { data: Float32Array.from({ length: 14 }, (_, k) => k), dims: [2, 7], type: 'float32' } };
  const split = onnxBytes({ nodes: [{ op: 'Split', inputs: ['x'], outputs: ['a', 'b', 'y'], attrs: { axis: 1, num_outputs: 3 } }], inputs: [inputOf('x', seven.x)], outputs: ['y'], opset: 18 });
  await agrees(split, seven); // the last piece is the smaller: [3, 3, 1]
  const pad = { x: x234, pads: i64(1, 2), axes: i64(-1) };
  await agrees(model({ op: 'Pad', inputs: ['x', 'pads', '', 'axes'], opset: 18 }, pad), pad);
});

test('opset 18 to 20: half_pixel_symmetric runs; what the graph layer does not take is Unsupported, naming it', async () => {
  const img = { x: { data: new Float32Array(32), dims: [1, 2, 4, 4], type: 'float32' } };
  await agrees(model({ op: 'AveragePool', attrs: { kernel_shape: [2, 2], dilations: [2, 2] }, opset: 19 }, img), img);
  await agrees(model({ op: 'Pad', inputs: ['x', 'pads'], attrs: { mode: 'wrap' }, opset: 19, inits: [{ name: 'pads', dtype: 'int64', dims: [8], values: [0, 0, 1, 1, 0, 0, 1, 1] }] }, img), img);
  const scales = [{ name: 'sizes', dtype: 'int64', dims: [4], values: [1, 2, 8, 8] }];
  const ramp = { x: { ...img.x, data: Float32Array.from({ length: 32 }, (_, k) => (k * 7) % 11) } };
  await agrees(model({ op: 'Resize', inputs: ['x', '', '', 'sizes'], attrs: { mode: 'linear', coordinate_transformation_mode: 'half_pixel_symmetric' }, opset: 19, inits: scales }, ramp), ramp);
  await agrees(model({ op: 'Resize', inputs: ['x', '', '', 'sizes'], attrs: { mode: 'linear', antialias: 1 }, opset: 18, inits: [{ name: 'sizes', dtype: 'int64', dims: [4], values: [1, 2, 3, 2] }] }, ramp), ramp);
  const sc = { x: x234, i: { data: new BigInt64Array(24), dims: [2, 3, 4], type: 'int64' }, u: x234 };
  await agrees(model({ op: 'ScatterElements', inputs: ['x', 'i', 'u'], attrs: { reduction: 'max' }, opset: 18 }, sc), sc);
  await refuses(model({ op: 'MaxRoiPool', opset: 20 }, { x: x234 }), { x: x234 }, 'Unsupported', /MaxRoiPool, which the graph layer has no kernel for/);
});

test('opset 20: Gelu, and ConstantOfShape of a shape fed when the graph runs', async () => {
  // from -2.5 to 2.5: further out 1 + erf(x / sqrt 2) cancels, and both sides lose the relative precision there
  const half = { x: { ...x234, data: x234.data.map((v) => v / 2) } };
  for (const approximate of ['none', 'tanh']) await agrees(model({ op: 'Gelu', attrs: { approximate }, opset: 20 }, half), half);
  for (const shape of [[2, 3], [4, 1, 2]]) {
    const f = { s: i64(...shape) };
    await agrees(model({ op: 'ConstantOfShape', inputs: ['s'], opset: 20 }, f), f);
  }
});

test('older opsets: attributes that became inputs, renamed ops, coerced softmax', async () => {
  const f = { x: x234 };
  await agrees(model({ op: 'Slice', attrs: { starts: [1, 0], ends: [3, -1], axes: [1, 2] }, opset: 9 }, f), f);
  const one = { x: { data: Float32Array.of(1, 2, 3, 4, 5, 6), dims: [2, 1, 3], type: 'float32' } };
  await agrees(model({ op: 'Squeeze', attrs: { axes: [1] }, opset: 11 }, one), one);
  await agrees(model({ op: 'Unsqueeze', attrs: { axes: [0, 3] }, opset: 12 }, f), f);
  await agrees(model({ op: 'ReduceSum', attrs: { axes: [0, 2] }, opset: 12 }, f), f);
  await agrees(model({ op: 'Pad', attrs: { pads: [0, 1, 0, 0, 2, 1], value: { f: 1.5 } }, opset: 10 }, f), f);
  await agrees(model({ op: 'Clip', attrs: { min: { f: -1 }, max: { f: 2 } }, opset: 6 }, f), f);
  await agrees(model({ op: 'Clip', attrs: { max: { f: 2 } }, opset: 10 }, f), f);
  for (const op of ['Softmax', 'LogSoftmax']) {
    for (const axis of [0, 1, 2, -1]) await agrees(model({ op, attrs: { axis }, opset: 11 }, f), f); // over the dims from axis on, flattened
    await agrees(model({ op, opset: 12 }, f), f); // axis 1 by default
  }
  const img = { x: { data: Float32Array.from({ length: 8 }, (_, k) => k), dims: [1, 2, 2, 2], type: 'float32' } };
  await agrees(model({ op: 'Upsample', attrs: { scales: { fs: [1, 1, 2, 3] } }, opset: 7 }, img), img);
  const split = onnxBytes({ nodes: [{ op: 'Split', inputs: ['x'], outputs: ['a', 'y'], attrs: { axis: 2, split: [1, 3] } }], inputs: [inputOf('x', x234)], outputs: ['y'], opset: 12 });
  await agrees(split, f);
  const b = { x: x234, b: { data: Float32Array.of(1, 2, 3, 4), dims: [4], type: 'float32' } };
  await agrees(model({ op: 'Add', inputs: ['x', 'b'], attrs: { broadcast: 1 }, opset: 6 }, b), b, model({ op: 'Add', inputs: ['x', 'b'], opset: 7 }, b));
  // broadcast with an axis: B's dims are A's from the axis on (the twin: B unsqueezed after its dims, numpy's broadcast)
  const mid = { x: x234, b: { data: Float32Array.of(1, 2, 3), dims: [3], type: 'float32' } };
  const unsqueezed = onnxBytes({ nodes: [{ op: 'Unsqueeze', inputs: ['b', 'ax'], outputs: ['bu'] }, { op: 'Sub', inputs: ['x', 'bu'], outputs: ['y'] }],
                                 inputs: [inputOf('x', x234), anySize('b', mid.b)], inits: [{ name: 'ax', dtype: 'int64', dims: [1], values: [1] }],
                                 outputs: [{ name: 'y', dtype: 'float32' }], opset: 13 });
  await agrees(model({ op: 'Sub', inputs: ['x', 'b'], attrs: { broadcast: 1, axis: 1 }, opset: 6 }, mid), mid, unsqueezed);
  // PRelu before opset 7: a slope per channel (axis 1)
  const slope = { x: x234, b: { data: Float32Array.of(0.5, -2, 3), dims: [3], type: 'float32' } };
  const perChannel = onnxBytes({ nodes: [{ op: 'Unsqueeze', inputs: ['b', 'ax'], outputs: ['bu'] }, { op: 'PRelu', inputs: ['x', 'bu'], outputs: ['y'] }],
                                 inputs: [inputOf('x', x234), anySize('b', slope.b)], inits: [{ name: 'ax', dtype: 'int64', dims: [1], values: [1] }],
                                 outputs: [{ name: 'y', dtype: 'float32' }], opset: 13 });
  await agrees(model({ op: 'PRelu', inputs: ['x', 'b'], opset: 6 }, slope), slope, perChannel);
  const tail = { x: x234, b: { data: Float32Array.from({ length: 12 }, (_, k) => k), dims: [3, 4], type: 'float32' } };
  await agrees(model({ op: 'Mul', inputs: ['x', 'b'], attrs: { broadcast: 1, axis: -2 }, opset: 6 }, tail), tail, model({ op: 'Mul', inputs: ['x', 'b'], opset: 7 }, tail));
  await agrees(model({ op: 'Reshape', attrs: { shape: [4, 0, -1] }, opset: 4, ir: 3 }, f), f);
});

test('older opsets: what they meant that the graph layer does not run is Unsupported, naming it', async () => {
  const f = { x: x234 };
  const b = { x: x234, b: { data: Float32Array.of(1, 2, 3), dims: [3], type: 'float32' } };
  const computed = onnxBytes({ nodes: [{ op: 'Neg', inputs: ['b'], outputs: ['nb'] }, { op: 'Add', inputs: ['x', 'nb'], outputs: ['y'], attrs: { broadcast: 1, axis: 1 } }],
                               inputs: [inputOf('x', x234), inputOf('b', b.b)], outputs: ['y'], opset: 6 });
  await refuses(computed, b, 'Unsupported', /^onnx: node 'Add_1' \(Add\): broadcast with an axis \(opset 6 and before\) of a value computed by a node is not supported$/);
  const wide = { x: x234, b: { data: Float32Array.from({ length: 12 }, (_, k) => k), dims: [3, 4, 1], type: 'float32' } };
  await refuses(model({ op: 'Add', inputs: ['x', 'b'], attrs: { broadcast: 1, axis: 1 }, opset: 6 }, wide), wide, 'Format', /^onnx: node 'Add_0' \(Add\): B of 3 dims does not fit at axis 1 of A's 3$/);
  await refuses(model({ op: 'Dropout', opset: 6 }, f), f, 'Unsupported', /Dropout_0' \(Dropout\): training mode \(is_test 0/);
  await refuses(model({ op: 'Squeeze', inputs: ['x', 'axes'], attrs: { axes: [0] }, opset: 11, inits: [{ name: 'axes', dtype: 'int64', dims: [1], values: [0] }] }, f), f,
    'Format', /node 'Squeeze_0' \(Squeeze\) has input 1 and the attribute that older opsets gave it as/);
  await refuses(model({ op: 'Relu', opset: 21 }, f), f, 'Unsupported', /default-domain opset 21; the reader takes 1 to 20/);
  await refuses(model({ op: 'Relu', opset: 17, ir: 2 }, f), f, 'Unsupported', /IR version 2; the reader takes 3 to 9/);
});

test('other domains are Unsupported, naming the domain and the op; ai.onnx.ml\'s ops without a row likewise', async () => {
  const f = { x: x234 }, ml = [{ domain: 'ai.onnx.ml', version: 4 }];
  await refuses(model({ op: 'SVMClassifier', domain: 'ai.onnx.ml', opset: 17, imports: ml }, f), f, 'Unsupported', /node 'SVMClassifier_0' is ai\.onnx\.ml\.SVMClassifier, which the graph layer has no kernel for/);
  await refuses(model({ op: 'Binarizer', domain: 'ai.onnx.ml', opset: 17 }, f), f, 'Format', /node 'Binarizer_0' is Binarizer of domain ai\.onnx\.ml, whose opset the model does not import/);
  await refuses(model({ op: 'FusedMatMul', inputs: ['x', 'x'], domain: 'com.microsoft', opset: 17 }, f), f, 'Unsupported', /is FusedMatMul of domain 'com.microsoft'/);
});

test('values that decide shapes, fed or computed when the graph runs: a plan per value', async () => {
  const cases = [
    [{ op: 'Reshape', inputs: ['x', 's'] }, [{ s: i64(4, 6) }, { s: i64(-1, 2, 3) }]],
    [{ op: 'Expand', inputs: ['x', 's'] }, [{ s: i64(2, 2, 3, 4) }, { s: i64(3, 1, 1, 1) }]],
    [{ op: 'Slice', inputs: ['x', 'a', 'b', 'axes'] }, [{ a: i64(1, 0), b: i64(2, 3), axes: i64(0, 2) }, { a: i64(-1), b: i64(-4), axes: i64(2) }]],
    [{ op: 'ReduceSum', inputs: ['x', 'axes'], attrs: { keepdims: 0 } }, [{ axes: i64(1) }, { axes: i64(0, 2) }]],
    [{ op: 'Pad', inputs: ['x', 'pads'] }, [{ pads: i64(0, 1, 0, 1, 0, 2) }, { pads: i64(1, 0, 0, 0, 0, 0) }]],
    [{ op: 'Trilu', inputs: ['x', 'k'], attrs: { upper: 0 } }, [{ k: { data: BigInt64Array.of(1n), dims: [], type: 'int64' } }, { k: { data: BigInt64Array.of(-1n), dims: [], type: 'int64' } }]],
    [{ op: 'Tile', inputs: ['x', 'r'] }, [{ r: i64(1, 2, 1) }, { r: i64(2, 1, 3) }]],
  ];
  for (const [node, runs] of cases) {
    const bytes = model({ ...node, opset: 18 }, { x: x234, ...runs[0] });
    const s = await om.InferenceSession.create(bytes);
    for (const r of runs) await agrees(bytes, { x: x234, ...r });
    for (const r of runs) s.run({ x: x234, ...r }).y.dispose(); // one session, new values: each its plan
    s.dispose();
  }
  // a shape computed from a float input's values: plans then take every input by value
  const nodes = [{ op: 'Cast', inputs: ['v'], outputs: ['s'], attrs: { to: 7 } }, { op: 'Reshape', inputs: ['x', 's'], outputs: ['y'] }];
  const bytes = onnxBytes({ nodes, inputs: [inputOf('x', x234), { name: 'v', dims: [2] }], outputs: ['y'], opset: 18 });
  for (const v of [[4, 6], [12, 2]]) await agrees(bytes, { x: x234, v: { data: Float32Array.from(v), dims: [2], type: 'float32' } });
});

test('ArgMax and ArgMin select_last_index, pools with pads above half the kernel (also with ceil_mode)', async () => {
  const f = { x: { ...x234, data: x234.data.map((v) => Math.abs(v) % 3) } }; // ties along every axis
  for (const op of ['ArgMax', 'ArgMin'])
    for (const axis of [0, 1, 2]) await agrees(model({ op, attrs: { axis, select_last_index: 1 }, opset: 13, out: 'int64' }, f), f);
  const img = { x: { data: Float32Array.from({ length: 50 }, (_, k) => ((k * 5) % 13) - 6), dims: [1, 2, 5, 5], type: 'float32' } };
  for (const pads of [[2, 2, 2, 2], [0, 2, 1, 0]]) {
    await agrees(model({ op: 'MaxPool', attrs: { kernel_shape: [3, 3], pads }, opset: 12 }, img), img);
    for (const count_include_pad of [0, 1]) await agrees(model({ op: 'AveragePool', attrs: { kernel_shape: [3, 3], pads, count_include_pad }, opset: 11 }, img), img);
  }
  // with ceil_mode too: the input padded first, then the library's ceil_mode that gives ONNX's size
  for (const [pads, strides] of [[[2, 2, 2, 2], [2, 2]], [[2, 0, 1, 2], [2, 3]]]) {
    await agrees(model({ op: 'MaxPool', attrs: { kernel_shape: [3, 3], pads, strides, ceil_mode: 1 }, opset: 12 }, img), img);
    for (const count_include_pad of [0, 1]) await agrees(model({ op: 'AveragePool', attrs: { kernel_shape: [3, 3], pads, strides, ceil_mode: 1, count_include_pad }, opset: 11 }, img), img);
  }
});
