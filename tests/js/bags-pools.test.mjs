// F.adaptiveMaxPool1d/2d/3d (with returnIndices) and F.embeddingBag against PyTorch
// (tests/js/fixtures/pytorch/ops/bags_pools.json, written by tools/pytorch_composites.py): values,
// indices and gradients; the modules (nn.AdaptiveMaxPool1d/2d/3d, nn.EmbeddingBag and its state dict);
// argument errors; traced and run in onnxruntime-web and the Session, also at other sizes.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as om from 'onemodel';
import { memoryHooks, vals, near, throwsKind, withTraced, checkPyTorchCase, gradcheck, fixtureNumber } from './helpers.mjs';

memoryHooks();
const F = () => om.nn.functional;
const FIXTURE = JSON.parse(readFileSync(new URL('./fixtures/pytorch/ops/bags_pools.json', import.meta.url), 'utf8'));

function call(c, xs) {
  const { outputSize, perSampleWeights, ...o } = c.args;
  switch (c.op) {
    case 'adaptiveMaxPool2d': case 'adaptiveMaxPool1d': case 'adaptiveMaxPool3d': return F()[c.op](xs[0], outputSize);
    case 'adaptiveMaxPool2dIndices': return F().adaptiveMaxPool2d(xs[0], outputSize, true)[1];
    case 'adaptiveMaxPool3dIndices': return F().adaptiveMaxPool3d(xs[0], outputSize, { returnIndices: true })[1];
    case 'adaptiveMaxPool1dIndices': return F().adaptiveMaxPool1d(xs[0], outputSize, { returnIndices: true })[1];
    default: { // embeddingBag: [input, weight, offsets (1-D input), perSampleWeights]
      const flat = xs[0].ndim === 1;
      const psw = perSampleWeights ? xs[flat ? 3 : 2] : undefined;
      return F().embeddingBag(xs[0], xs[1], flat ? xs[2] : null, { ...o, perSampleWeights: psw });
    }
  }
}

describe('adaptive max pools and embedding bags against PyTorch', () => {
  for (const [k, c] of FIXTURE.cases.entries()) {
    test(`${c.op} ${JSON.stringify(c.args)} on [${c.inputs[0].shape}] (case ${k})`, () => om.tidy(() => checkPyTorchCase(c, (xs) => call(c, xs))));
  }

  test('NaN in a window: the last NaN in row-major order wins, as PyTorch\'s kernel (values and indices)', () => om.tidy(() => {
    assert.ok(FIXTURE.nan.length >= 7);
    for (const c of FIXTURE.nan) {
      const x = om.tensor(c.input.data.map(fixtureNumber), { shape: c.input.shape });
      const pool = x.ndim === 5 ? F().adaptiveMaxPool3d : F().adaptiveMaxPool2d;
      const [v, i] = pool(x, c.outputSize, true);
      const what = `[${c.input.shape}] to ${JSON.stringify(c.outputSize)}`;
      assert.deepEqual(v.shape, c.values.shape, what);
      assert.deepEqual(vals(v).map((e) => (Number.isNaN(e) ? 'NaN' : e)), c.values.data, `${what}: values`);
      assert.deepEqual(vals(i), c.indices, `${what}: indices`);
    }
  }));

  test('gradients by finite differences (the pools away from ties, the bags in every mode)', () => om.tidy(() => {
    const x = om.tensor([0.3, -1.2, 2.5, 0.7, -0.4, 1.9, 0.1, -2.2, 1.1, 0.6, -0.9, 1.4], { shape: [1, 2, 2, 3] });
    gradcheck((a) => F().adaptiveMaxPool2d(a, [1, 2]), x);
    gradcheck((a) => F().adaptiveMaxPool1d(a, 2), om.tensor([0.5, -1, 2, 0.25, 1.5, -0.75], { shape: [2, 3] }));
    gradcheck((a) => F().adaptiveMaxPool3d(a, [2, 1, 2]), om.tensor([0.3, -1.2, 2.5, 0.7, -0.4, 1.9, 0.1, -2.2, 1.1, 0.6, -0.9, 1.4], { shape: [1, 1, 3, 2, 2] }));
    const ids = om.tensor([1, 3, 3, 0, 2], { dtype: 'int64' }), offsets = om.tensor([0, 2, 2], { dtype: 'int64' });
    for (const mode of ['sum', 'mean', 'max']) {
      gradcheck((w) => F().embeddingBag(ids, w, offsets, { mode }), om.randn([4, 3], { seed: 2 }));
    }
  }));

  test('the modules: PyTorch\'s names and defaults, returnIndices, EmbeddingBag\'s weight in the state dict', () => om.tidy(() => {
    const x = om.randn([2, 3, 6, 5], { seed: 1 });
    const same = (a, b) => near(vals(a), vals(b), 0, 'module');
    same(new om.nn.AdaptiveMaxPool2d([3, 2]).forward(x), F().adaptiveMaxPool2d(x, [3, 2]));
    const [v, i] = new om.nn.AdaptiveMaxPool2d(2, true).forward(x);
    same(v, F().adaptiveMaxPool2d(x, 2));
    same(i, F().adaptiveMaxPool2d(x, 2, true)[1]);
    assert.equal(i.dtype, 'int64');
    same(new om.nn.AdaptiveMaxPool2d([null, 1]).forward(x), x.amax(-1, true)); // null keeps H
    same(new om.nn.AdaptiveMaxPool1d(1, { returnIndices: true }).forward(x.flatten(2))[0], x.flatten(2).amax(-1, true));
    assert.deepEqual(F().adaptiveMaxPool2d(om.randn([3, 4, 4], { seed: 2 }), 2).shape, [3, 2, 2]); // unbatched
    const v3 = om.randn([2, 3, 4, 6, 5], { seed: 3 });
    const [m3, i3] = new om.nn.AdaptiveMaxPool3d([2, null, 1], true).forward(v3);
    same(m3, F().adaptiveMaxPool3d(v3, [2, 6, 1]));
    same(i3, F().adaptiveMaxPool3d(v3, [2, 6, 1], true)[1]);
    same(new om.nn.AdaptiveMaxPool3d(1).forward(v3), v3.flatten(2).amax(-1, true).unsqueeze(-1).unsqueeze(-1)); // global
    om.manualSeed(3);
    const bag = new om.nn.EmbeddingBag(6, 3, { mode: 'sum', paddingIdx: -1 });
    try {
      assert.deepEqual(Object.keys(bag.stateDict()), ['weight']);
      assert.deepEqual(bag.weight.shape, [6, 3]);
      assert.deepEqual(vals(bag.weight.select(0, 5)), [0, 0, 0]); // the padding row (5 = -1 + 6) is zeroed
      assert.equal(bag.paddingIdx, 5);
      assert.equal(bag.mode, 'sum');
      const ids = om.tensor([[0, 5, 2], [5, 5, 1]], { dtype: 'int64' });
      near(vals(bag.forward(ids)), [...vals(bag.weight.select(0, 0).add(bag.weight.select(0, 2))), ...vals(bag.weight.select(0, 1))], 1e-6);
      assert.equal(new om.nn.EmbeddingBag(4, 2).mode, 'mean');
    } finally {
      bag.dispose();
    }
  }));

  test('argument errors', () => om.tidy(() => {
    const x = om.randn([2, 3, 6, 5], { seed: 1 }), w = om.randn([5, 2], { seed: 1 });
    const flat = om.tensor([1, 2, 3], { dtype: 'int64' }), offsets = om.tensor([0, 1], { dtype: 'int64' });
    throwsKind(() => F().adaptiveMaxPool2d(x.flatten(1), 2), 'InvalidArgument', /adaptiveMaxPool2d: takes \[N, C, H, W\] or \[C, H, W\], got \[2,90\]/);
    throwsKind(() => F().adaptiveMaxPool2d(x, [2, 0]), 'InvalidArgument', /adaptiveMaxPool2d: outputSize must be positive \(or null\), got 0/);
    throwsKind(() => F().adaptiveMaxPool2d(x, 2, { returnIndex: true }), 'InvalidArgument', /adaptiveMaxPool2d: unknown option 'returnIndex'/);
    throwsKind(() => F().adaptiveMaxPool2d(om.zeros([1, 1, 0, 3]), 2), 'InvalidArgument', /adaptiveMaxPool2d: the input's H and W must be positive, got \[1,1,0,3\]/);
    throwsKind(() => F().adaptiveMaxPool3d(x.flatten(2), 2), 'InvalidArgument', /adaptiveMaxPool3d: takes \[N, C, D, H, W\] or \[C, D, H, W\], got \[2,3,30\]/);
    throwsKind(() => F().adaptiveMaxPool3d(x.unsqueeze(0), [2, 2]), 'InvalidArgument', /adaptiveMaxPool3d: outputSize must be an integer or 3 of them, got 2/);
    throwsKind(() => F().adaptiveMaxPool3d(x.unsqueeze(0), [2, -1, 2]), 'InvalidArgument', /adaptiveMaxPool3d: outputSize must be positive \(or null\), got -1/);
    throwsKind(() => F().adaptiveMaxPool3d(om.zeros([1, 1, 2, 0, 3]), 2), 'InvalidArgument', /adaptiveMaxPool3d: the input's D, H and W must be positive, got \[1,1,2,0,3\]/);
    throwsKind(() => new om.nn.AdaptiveMaxPool3d(2, { returnIndices: 1 }), 'InvalidArgument', /AdaptiveMaxPool3d: returnIndices must be a boolean, got 1/);
    throwsKind(() => F().adaptiveMaxPool1d(x, 2), 'InvalidArgument', /adaptiveMaxPool1d: takes \[N, C, L\] or \[C, L\], got \[2,3,6,5\]/);
    throwsKind(() => F().adaptiveMaxPool1d(x.flatten(2), [2, 3]), 'InvalidArgument', /adaptiveMaxPool1d: outputSize must be an integer, got an array of length 2/);
    throwsKind(() => new om.nn.AdaptiveMaxPool1d(2, { returnIndices: 'yes' }), 'InvalidArgument', /AdaptiveMaxPool1d: returnIndices must be a boolean, got a string/);
    throwsKind(() => F().embeddingBag(flat, w, offsets, { mode: 'min' }), 'InvalidArgument', /embeddingBag: mode has to be one of sum, mean or max, got a string \("min"\)/);
    throwsKind(() => F().embeddingBag(flat, w, offsets, { mode: 'mean', perSampleWeights: om.ones([3]) }), 'InvalidArgument',
      /embeddingBag: perSampleWeights is only supported for mode 'sum' \(got mode 'mean'\)/);
    throwsKind(() => F().embeddingBag(flat, w, offsets, { mode: 'sum', perSampleWeights: om.ones([2]) }), 'ShapeMismatch',
      /embeddingBag: perSampleWeights \[2\] must have the input's shape \[3\]/);
    throwsKind(() => F().embeddingBag(flat.reshape([1, 3]), w, offsets), 'InvalidArgument', /embeddingBag: if input is 2-D, offsets must be null/);
    throwsKind(() => F().embeddingBag(flat, w), 'InvalidArgument', /embeddingBag: offsets has to be a 1-D Tensor but got null/);
    throwsKind(() => F().embeddingBag(flat, w, offsets.to('float32')), 'InvalidArgument', /embeddingBag: offsets has to be a 1-D int64 Tensor, got \[2\] float32/);
    throwsKind(() => F().embeddingBag(flat.reshape([1, 1, 3]), w), 'InvalidArgument', /embeddingBag: input has to be a 1-D or 2-D Tensor, but got a Tensor of 3 dims/);
    throwsKind(() => F().embeddingBag(flat, w, offsets, { maxNorm: 1 }), 'InvalidArgument', /embeddingBag: maxNorm is not supported/);
    throwsKind(() => F().embeddingBag(om.tensor([1, 7], { dtype: 'int64' }), w, offsets), 'IndexOutOfRange', /embedding/);
    throwsKind(() => new om.nn.EmbeddingBag(4, 2, { mode: 'median' }), 'InvalidArgument', /EmbeddingBag: mode has to be one of sum, mean or max/);
    throwsKind(() => new om.nn.EmbeddingBag(4, 2, { sparse: true }), 'InvalidArgument', /EmbeddingBag: option sparse is not supported/);
  }));
});

describe('traced, run in onnxruntime-web and the Session', () => {
  test('adaptive max pools (values and indices) with a symbolic batch', () => withTraced((keep, trace) => {
    trace((x) => F().adaptiveMaxPool2d(x, [2, 3], true), { x: [om.randn([2, 3, 7, 9], { seed: 4 }), ['B', null, null, null]] });
    trace((x) => F().adaptiveMaxPool2d(x, 1), { x: [om.randn([2, 3, 5, 6], { seed: 5 }), ['B', null, 'H', 'W']] }); // global: no slice
    trace((x) => F().adaptiveMaxPool1d(x, 4, true), { x: [om.randn([2, 3, 10], { seed: 6 }), ['B', null, null]] });
    trace((x) => F().adaptiveMaxPool3d(x, [2, 3, 2], true), { x: [om.randn([2, 3, 5, 7, 4], { seed: 7 }), ['B', null, null, null, null]] });
    trace((x) => F().adaptiveMaxPool3d(x, 1), { x: [om.randn([2, 2, 3, 5, 6], { seed: 8 }), ['B', null, 'D', 'H', 'W']] }); // global
    // windows that move with the sizes: every cell has an element at every size from 1 (cells
    // overlap below the output's size), so the trace needs no declaration
    trace((x) => F().adaptiveMaxPool3d(x, [2, 3, 2], true), { x: [om.randn([2, 2, 5, 7, 6], { seed: 9 }), ['B', null, 'D', 'H', 'W']] });
  }));

  test('symbolic H and W, the output not dividing the input: cells computed from the sizes, run at odd sizes and below the output', () => withTraced((keep, trace) => {
    const opTypes = (tm) => tm.graph().nodes.map((n) => n.opType);
    const pool2 = (x) => F().adaptiveMaxPool2d(x, [3, 4], true);
    const t2 = trace(pool2, { x: [om.randn([2, 3, 7, 10], { seed: 11 }), ['B', null, 'H', 'W']] });
    assert.deepEqual(t2.outputs.map((o) => o.shape), [['B', 3, 3, 4], ['B', 3, 3, 4]]);
    assert.ok(!opTypes(t2).includes('MaxPool') && opTypes(t2).includes('ArgMax'), opTypes(t2).join(' '));
    [[1, 3, 1, 1], [2, 3, 2, 3], [1, 3, 5, 13], [3, 3, 9, 4], [1, 3, 12, 8]].forEach((shape, k) => {
      const x = om.randn(shape, { seed: 30 + k });
      keep(t2, { x }, pool2(x), `at [${shape}]`);
    });
    const pool3 = (x) => F().adaptiveMaxPool3d(x, [2, 3, 2], true);
    const t3 = trace(pool3, { x: [om.randn([2, 2, 5, 7, 6], { seed: 12 }), ['B', null, 'D', 'H', 'W']] });
    [[1, 2, 1, 2, 1], [2, 2, 3, 5, 7], [1, 2, 7, 4, 3]].forEach((shape, k) => {
      const x = om.randn(shape, { seed: 40 + k });
      keep(t3, { x }, pool3(x), `at [${shape}]`);
    });
    const pool1 = (x) => F().adaptiveMaxPool1d(x, 3, true);
    const t1 = trace(pool1, { x: [om.randn([2, 3, 8], { seed: 13 }), ['B', null, 'L']] });
    [[1, 3, 1], [2, 3, 5], [1, 3, 11]].forEach((shape, k) => {
      const x = om.randn(shape, { seed: 50 + k });
      keep(t1, { x }, pool1(x), `at [${shape}]`);
    });
    // a kept symbolic axis (null) beside a fixed output: the kept one's cells are its elements
    const keepW = (x) => F().adaptiveMaxPool2d(x, [2, null], true);
    trace(keepW, { x: [om.randn([2, 3, 5, 6], { seed: 14 }), ['B', null, 'H', 'W']] });
    // cells even at every size (fixed sizes that divide, or kept): MaxPool writes the values, and
    // without returnIndices nothing else is left in the graph
    const even = trace((x) => F().adaptiveMaxPool2d(x, [2, 3]), { x: [om.randn([2, 3, 6, 9], { seed: 15 }), ['B', null, null, null]] });
    assert.deepEqual(opTypes(even), ['MaxPool']);
    const even3 = trace((x) => F().adaptiveMaxPool3d(x, [1, 2, 3], true), { x: [om.randn([2, 2, 3, 6, 9], { seed: 16 }), ['B', null, null, null, null]] });
    assert.ok(opTypes(even3).includes('MaxPool'), opTypes(even3).join(' '));
  }));

  test('adaptive max pools of an empty batch (fixed sizes): the composition and MaxPool in both engines', () => withTraced((keep, trace) => {
    trace((x) => F().adaptiveMaxPool2d(x, [3, 4], true), { x: om.randn([0, 3, 7, 5], { seed: 1 }) });
    trace((x) => F().adaptiveMaxPool2d(x, [2, 5], true), { x: om.randn([0, 3, 4, 5], { seed: 2 }) });
    trace((x) => F().adaptiveMaxPool3d(x, [2, 3, 2], true), { x: om.randn([0, 2, 5, 7, 4], { seed: 3 }) });
  }));

  test('embedding bags: 2-D bags with a symbolic batch, 1-D bags of a symbolic length, the offsets an input', () => withTraced((keep, trace) => {
    const w = om.randn([7, 3], { seed: 7 }), offsets = om.tensor([0, 2, 2, 5], { dtype: 'int64' });
    for (const mode of ['sum', 'mean', 'max']) {
      trace((ids) => F().embeddingBag(ids, w, null, { mode, paddingIdx: 0 }), {
        ids: [om.tensor([[1, 0, 4], [6, 6, 2], [0, 0, 0]], { dtype: 'int64' }), ['B', null]],
      });
      trace((ids) => F().embeddingBag(ids, w, offsets, { mode }), { ids: [om.tensor([3, 1, 4, 1, 5, 2, 6], { dtype: 'int64' }), ['N']] });
      trace((ids, offs) => F().embeddingBag(ids, w, offs, { mode, includeLastOffset: true }), {
        ids: om.tensor([3, 1, 4, 1, 5, 2, 6], { dtype: 'int64' }), offs: om.tensor([0, 3, 3, 7], { dtype: 'int64' }),
      });
    }
  }));
});
