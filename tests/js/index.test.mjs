// Indexing and resampling from JS: embedding / indexSelect / gather / indexAdd / scatterAdd and
// interpolate (values hand-computed in the comments, gradients, errors as OmError kinds),
// nn.Embedding and nn.Upsample (PyTorch's init and names), and traced models through the
// onnxruntime-web oracle, including the SymbolicShape refusal of a symbolic spatial axis.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as om from 'onemodel';
import { check, near, vals, memoryHooks, withTraced } from './helpers.mjs';

memoryHooks();

const i64 = (data) => om.tensor(data, { dtype: 'int64' });
const throwsKind = (fn, kind, re) => assert.throws(fn, (e) => {
  assert.ok(e instanceof om.OmError, `expected an OmError, got ${e}`);
  assert.equal(e.kind, kind, e.message);
  assert.match(e.message, re);
  return true;
});

describe('embedding', () => {
  test('rows by index; repeated indices accumulate in the backward; the padding row gets none', () => om.tidy(() => {
    const w = om.tensor([[1, 2], [3, 4], [5, 6]]);
    w.requiresGrad = true;
    const ids = i64([[0, 2], [0, 0]]);
    const y = om.nn.functional.embedding(ids, w);
    check(y, [2, 2, 2], [1, 2, 5, 6, 1, 2, 1, 2]);
    const g = om.tensor([[[1, 10], [100, 1000]], [[2, 20], [3, 30]]]);
    y.backward(g);
    check(w.grad, [3, 2], [6, 60, 0, 0, 100, 1000]); // row 0: g0 + g2 + g3; row 2: g1
    w.zeroGrad();
    om.nn.functional.embedding(ids, w, { paddingIdx: 0 }).backward(g);
    check(w.grad, [3, 2], [0, 0, 0, 0, 100, 1000]);
    w.zeroGrad();
    om.nn.functional.embedding(ids, w, { paddingIdx: -1 }).backward(g); // -1 is row 2
    check(w.grad, [3, 2], [6, 60, 0, 0, 0, 0]);
    w.zeroGrad();
  }));

  test('indices out of range name the index and the bound', () => om.tidy(() => {
    const w = om.ones([3, 2]);
    throwsKind(() => om.nn.functional.embedding(i64([0, 3]), w), 'IndexOutOfRange',
      /^embedding: index 3 is out of range for a weight of 3 rows \(valid: 0 to 2\)$/);
    throwsKind(() => om.nn.functional.embedding(i64([-1]), w), 'IndexOutOfRange', /index -1 is out of range/);
    throwsKind(() => om.nn.functional.embedding(om.tensor([0]), w), 'DtypeMismatch', /embedding: index must be int64, not float32/);
    throwsKind(() => om.nn.functional.embedding([0, 1], w), 'InvalidArgument', /embedding: input must be a Tensor/);
    throwsKind(() => om.nn.functional.embedding(i64([0]), w, { paddingIdx: 3 }), 'IndexOutOfRange', /padding_idx 3 is out of range/);
    throwsKind(() => om.nn.functional.embedding(i64([0]), w, { paddingIdx: 0.5 }), 'InvalidArgument', /paddingIdx must be an integer/);
    throwsKind(() => om.nn.functional.embedding(i64([0]), w, { maxNorm: 1 }), 'InvalidArgument', /maxNorm is not supported/);
    throwsKind(() => om.nn.functional.embedding(i64([0]), w, 3), 'InvalidArgument', /options must be an object/);
    const gone = om.ones([3, 2]);
    gone.dispose();
    throwsKind(() => om.nn.functional.embedding(i64([0]), gone), 'Disposed', /embedding: .*disposed/);
  }));

  test('nn.Embedding: PyTorch init (standard normal, padding row +0) and the name weight', () => {
    om.manualSeed(3);
    const e = new om.nn.Embedding(200, 16, { paddingIdx: -2 });
    try {
      assert.deepEqual(Object.keys(e.stateDict()), ['weight']);
      assert.deepEqual(e.weight.shape, [200, 16]);
      assert.equal(e.paddingIdx, 198);
      assert.equal(e.weight.requiresGrad, true);
      const v = vals(e.weight);
      const pad = v.slice(198 * 16, 199 * 16);
      assert.ok(pad.every((x) => Object.is(x, 0)), 'padding row is +0');
      const rest = v.filter((_, i) => Math.floor(i / 16) !== 198);
      const mean = rest.reduce((a, b) => a + b, 0) / rest.length;
      const std = Math.sqrt(rest.reduce((a, b) => a + (b - mean) ** 2, 0) / rest.length);
      assert.ok(Math.abs(mean) < 0.05 && Math.abs(std - 1) < 0.05, `mean ${mean} std ${std}`);
      om.manualSeed(3);
      const again = new om.nn.Embedding(200, 16, { paddingIdx: -2 });
      assert.deepEqual(vals(again.weight), v, 'reproducible from the seed');
      again.dispose();
      om.tidy(() => check(e.forward(i64([198, 0])).sum(1), [2], [0, vals(e.weight).slice(0, 16).reduce((a, b) => a + b, 0)], 1e-4));
    } finally {
      e.dispose();
    }
    throwsKind(() => new om.nn.Embedding(0, 4), 'InvalidArgument', /numEmbeddings and embeddingDim must be positive/);
    throwsKind(() => new om.nn.Embedding(4, 4, { paddingIdx: 4 }), 'InvalidArgument', /paddingIdx 4 must be within \[-4, 3\]/);
    throwsKind(() => new om.nn.Embedding(4, 4, { sparse: true }), 'InvalidArgument', /option sparse is not supported/);
  });
});

describe('indexSelect, gather, indexAdd, scatterAdd', () => {
  test('values and gradients', () => om.tidy(() => {
    const x = om.tensor([[1, 2, 3], [4, 5, 6]]);
    x.requiresGrad = true;
    const s = x.indexSelect(1, i64([2, 0, 2]));
    check(s, [2, 3], [3, 1, 3, 6, 4, 6]);
    s.backward(om.ones([2, 3]));
    check(x.grad, [2, 3], [1, 0, 2, 1, 0, 2]);
    x.zeroGrad();
    check(x.indexSelect(-2, i64([1])), [1, 3], [4, 5, 6]);
    const g = x.gather(1, i64([[0, 0], [1, 0]]));
    check(g, [2, 2], [1, 1, 5, 4]);
    g.backward(om.ones([2, 2]));
    check(x.grad, [2, 3], [2, 0, 0, 1, 1, 0]);
    x.zeroGrad();
    check(om.zeros([3]).indexAdd(0, i64([0, 0, 2]), om.tensor([1, 2, 3])), [3], [3, 0, 3]);
    check(om.ones([2, 2]).scatterAdd(1, i64([[1, 1], [0, 1]]), om.tensor([[1, 2], [3, 4]])), [2, 2], [1, 4, 4, 5]);
  }));

  test('negative and too-large indices are refused, as in PyTorch', () => om.tidy(() => {
    const x = om.ones([2, 3]);
    throwsKind(() => x.indexSelect(1, i64([0, -1])), 'IndexOutOfRange',
      /^indexSelect: index -1 is out of range for dim 1 of size 3 \(valid: 0 to 2; negative indices are not accepted, as in PyTorch\)$/);
    throwsKind(() => x.gather(0, i64([[2, 0, 0]])), 'IndexOutOfRange', /^gather: index 2 is out of range for dim 0 of size 2/);
    throwsKind(() => x.gather(0, i64([0, 1])), 'ShapeMismatch', /gather: index \[2\] must have the rank of input \[2,3\]/);
    throwsKind(() => x.indexSelect(2, i64([0])), 'IndexOutOfRange', /^indexSelect: dim 2 is out of range/);
    throwsKind(() => x.indexSelect(1.5, i64([0])), 'InvalidArgument', /indexSelect: dim must be an integer/);
    throwsKind(() => x.gather(0, 'abc'), 'InvalidArgument', /gather: index must be a Tensor/);
    throwsKind(() => x.indexAdd(0, i64([5]), om.ones([1, 3])), 'IndexOutOfRange', /indexAdd: index 5 is out of range for dim 0 of size 2/);
    throwsKind(() => x.scatterAdd(0, i64([[0]]), om.ones([2, 2])), 'ShapeMismatch', /scatterAdd: src \[2,2\] must have index's shape \[1,1\]/);
  }));
});

describe('interpolate', () => {
  const F = () => om.nn.functional;
  test('nearest: 2x and odd sizes (src = floor(dst * in / out))', () => om.tidy(() => {
    const x = om.tensor([[[[1, 2], [3, 4]]]]);
    check(F().interpolate(x, { scaleFactor: 2 }), [1, 1, 4, 4], [1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4]);
    check(F().interpolate(x, { size: [3, 1] }), [1, 1, 3, 1], [1, 1, 3]); // rows floor(0, .67, 1.33)
    const r = om.tensor([[[[10, 20, 30]]]]);
    check(F().interpolate(r, { size: [1, 5] }), [1, 1, 1, 5], [10, 10, 20, 20, 30]);
  }));

  test('bilinear with alignCorners false (half pixel, clamped at 0) and true', () => om.tidy(() => {
    const a = om.tensor([[[[0, 4]]]]);
    check(F().interpolate(a, { size: [1, 4], mode: 'bilinear' }), [1, 1, 1, 4], [0, 1, 3, 4]);
    check(F().interpolate(a, { size: [1, 4], mode: 'bilinear', alignCorners: true }), [1, 1, 1, 4], [0, 4 / 3, 8 / 3, 4]);
    const b = om.tensor([[[[0, 3, 6]]]]);
    check(F().interpolate(b, { size: [1, 5], mode: 'bilinear' }), [1, 1, 1, 5], [0, 1.2, 3, 4.8, 6]);
    // a scale factor of 1.7 gives 5 outputs whose coordinates use 1/1.7, unless recomputed (then 3/5)
    const s = 1 / 1.7;
    check(F().interpolate(b, { scaleFactor: [1, 1.7], mode: 'bilinear' }), [1, 1, 1, 5],
      [0, 3 * (1.5 * s - 0.5), 3 * (2.5 * s - 0.5), 3 * (3.5 * s - 0.5), 6]);
    check(F().interpolate(b, { scaleFactor: [1, 1.7], mode: 'bilinear', recomputeScaleFactor: true }), [1, 1, 1, 5],
      [0, 1.2, 3, 4.8, 6]);
    // backward: output weights (1,0) (.75,.25) (.25,.75) (0,1) sum to 2 per input
    a.requiresGrad = true;
    F().interpolate(a, { size: [1, 4], mode: 'bilinear' }).sum().backward();
    check(a.grad, [1, 1, 1, 2], [2, 2]);
  }));

  test('nn.Upsample and argument errors', () => om.tidy(() => {
    const x = om.tensor([[[[1, 2], [3, 4]]]]);
    const up = new om.nn.Upsample({ scaleFactor: 2, mode: 'bilinear', alignCorners: true });
    assert.deepEqual(Object.keys(up.stateDict()), []);
    check(up.forward(x), [1, 1, 4, 4], [1, 4 / 3, 5 / 3, 2, 5 / 3, 2, 7 / 3, 8 / 3, 7 / 3, 8 / 3, 3, 10 / 3, 3, 10 / 3, 11 / 3, 4]);
    throwsKind(() => F().interpolate(x, { size: 4, scaleFactor: 2 }), 'InvalidArgument', /give exactly one of size and scaleFactor/);
    throwsKind(() => F().interpolate(x, {}), 'InvalidArgument', /give exactly one of size and scaleFactor/);
    throwsKind(() => F().interpolate(x, { size: 4, mode: 'nearest-exact' }), 'InvalidArgument', /mode must be 'nearest', 'linear' \(3-D\), 'bilinear', 'bicubic' \(4-D\) or 'area'/);
    throwsKind(() => F().interpolate(x, { size: 4, alignCorners: true }), 'InvalidArgument', /alignCorners can only be set with mode 'linear', 'bilinear' or 'bicubic'/);
    throwsKind(() => F().interpolate(x, { scaleFactor: -1 }), 'InvalidArgument', /scaleFactor must be a positive finite number/);
    throwsKind(() => F().interpolate(x, { scaleFactor: [1, 2, 3] }), 'InvalidArgument', /scaleFactor must be a number or 2 numbers/);
    throwsKind(() => F().interpolate(x, { size: 0 }), 'InvalidArgument', /input and output sizes must be greater than 0/);
    throwsKind(() => F().interpolate(om.ones([2, 2]), { size: 4 }), 'ShapeMismatch', /takes a 3-D input \[N, C, L\] or a 4-D input \[N, C, H, W\], got \[2,2\]/);
    throwsKind(() => F().interpolate(x, { size: 4, antialias: true }), 'InvalidArgument', /antialias is not supported/);
    throwsKind(() => new om.nn.Upsample({}), 'InvalidArgument', /Upsample: give exactly one of size and scaleFactor/);
  }));
});

describe('traced through onnxruntime-web', () => {
  test('every interpolate form and the index ops match the eager run', () => withTraced((keep, trace) => {
    const img = om.randn([2, 3, 5, 7], { seed: 4 });
    const forms = [
      { size: [10, 14] }, { size: [3, 4] }, { size: [9, 2] }, { scaleFactor: 2 }, { scaleFactor: [1.5, 0.5] },
      { size: [11, 13], mode: 'bilinear' }, { size: [4, 3], mode: 'bilinear' }, { scaleFactor: [1.7, 2.5], mode: 'bilinear' },
      { size: [8, 9], mode: 'bilinear', alignCorners: true }, { size: [1, 1], mode: 'bilinear', alignCorners: true },
      { scaleFactor: 3, mode: 'bilinear', alignCorners: true }, { scaleFactor: 1.7, recomputeScaleFactor: true },
    ];
    for (const f of forms) trace((x) => om.nn.functional.interpolate(x, f), { x: [img, ['batch', null, null, null]] });
    const x = om.randn([4, 6], { seed: 5 });
    const idx = i64([3, 0, 3]);
    // the indices reach row 3: the table has at least 4 rows at every size the graph is run at
    trace((t, i) => t.indexSelect(0, i), { t: [x, [om.Dim('n', { min: 4 }), null]], i: [idx, ['k']] });
    trace((t, i) => t.gather(1, i), { t: x, i: i64([[5, 0], [1, 1], [2, 3], [0, 0]]) });
    trace((t, i) => om.zeros([5, 6]).indexAdd(0, i, t), { t: x, i: i64([3, 0, 3, 1]) });
    trace((t, i) => om.zeros([4, 6]).scatterAdd(1, i, t), { t: x, i: i64([[5, 0, 1, 1, 2, 2], [0, 0, 0, 0, 0, 0], [1, 2, 3, 4, 5, 0], [3, 3, 3, 3, 3, 3]]) });
  }));

  test('embedding + mean-pool + linear classifier with symbolic batch and sequence', () => withTraced((keep, trace) => {
    class Classifier extends om.nn.Module {
      constructor() {
        super();
        this.embed = new om.nn.Embedding(50, 8, { paddingIdx: 0 });
        this.head = new om.nn.Linear(8, 3);
      }
      forward(ids) { return this.head.forward(this.embed.forward(ids).mean(1)); }
    }
    om.manualSeed(11);
    const net = new Classifier().eval();
    try {
      const ids = i64([[1, 4, 49, 0, 0], [7, 7, 2, 30, 0], [0, 0, 0, 0, 0]]);
      const tm = trace(net, { ids: [ids, ['batch', 'seq']] });
      assert.deepEqual(tm.graph().nodes.map((n) => n.opType).slice(0, 1), ['Gather']);
      assert.ok(tm.graph().initializers.some((i) => i.name === 'embed.weight'), 'the table is named by its state-dict path');
      assert.deepEqual(tm.inputs[0].shape, ['batch', 'seq']);
      assert.deepEqual(tm.outputs[0].shape, ['batch', 3]);
      // the .onnx runs at other sizes too: compare with eager at batch 2, sequence 7
      const other = i64([[3, 3, 3, 3, 3, 3, 3], [1, 2, 3, 4, 5, 6, 7]]);
      keep(tm, { ids: other }, net.forward(other));
    } finally {
      net.dispose();
    }
  }));

  test('a UNet-style block: downsample, upsample, skip concat, linear on channels', () => withTraced((keep, trace) => {
    class Block extends om.nn.Module {
      constructor() {
        super();
        this.mix = new om.nn.Linear(8, 4);
        this.up = new om.nn.Upsample({ scaleFactor: 2, mode: 'bilinear' });
      }
      forward(x) {
        const down = om.nn.functional.interpolate(x, { scaleFactor: 0.5, mode: 'bilinear' });
        const skip = om.cat([x, this.up.forward(down)], 1); // [N, 8, H, W]
        return this.mix.forward(skip.permute(0, 2, 3, 1)).permute(0, 3, 1, 2).relu();
      }
    }
    om.manualSeed(12);
    const net = new Block().eval();
    try {
      const tm = trace(net, { x: [om.randn([2, 4, 6, 8], { seed: 6 }), ['batch', null, null, null]] });
      const ops = tm.graph().nodes.map((n) => n.opType);
      assert.equal(ops.filter((o) => o === 'Resize').length, 2, ops.join(','));
      keep(tm, { x: om.randn([3, 4, 6, 8], { seed: 7 }) }, net.forward(om.randn([3, 4, 6, 8], { seed: 7 })));
    } finally {
      net.dispose();
    }
  }));

  test("PyTorch's nearest special cases and the scales ONNX cannot reproduce", () => withTraced((keep, trace) => {
    const x = om.randn([1, 2, 3, 4], { seed: 9 });
    // H: 3 * 2.3 -> 6 = 2 * 3, which PyTorch samples as dst >> 1 (not floor(dst / 2.3)); W: 4 * 1.1 -> 4, a copy
    const tm = trace((t) => om.nn.functional.interpolate(t, { scaleFactor: [2.3, 1.1] }), { x });
    const y = om.nn.functional.interpolate(x, { scaleFactor: [2.3, 1.1] });
    near(vals(y.select(0, 0).select(0, 0).select(0, 2)), vals(x.select(0, 0).select(0, 0).select(0, 1)), 0, 'output row 2 is input row 1');
    assert.deepEqual(tm.graph().nodes.map((n) => n.opType), ['Gather']); // W is kept: a copy, no node
    // keeping the size by a scale factor (4 by 1.1 is 4): ONNX Resize would copy, PyTorch resamples
    // with 1 / 1.1; 10 * 0.7 is 7 in double but 6.99999988 with the float scale ONNX stores (a
    // Resize would make 6 rows). Bilinear and bicubic sum the eager taps in the graph instead of a
    // Resize, nearest gathers the eager indices: all trace, with eager's numbers
    const ten = om.randn([1, 1, 10, 10], { seed: 1 });
    for (const mode of ['bilinear', 'bicubic']) {
      const keeps = trace((t) => om.nn.functional.interpolate(t, { scaleFactor: 1.1, mode }), { x });
      assert.ok(!keeps.graph().nodes.some((n) => n.opType === 'Resize'), mode);
      const seven = trace((t) => om.nn.functional.interpolate(t, { scaleFactor: 0.7, mode }), { x: ten });
      assert.deepEqual(seven.outputs[0].shape, [1, 1, 7, 7]);
      assert.ok(!seven.graph().nodes.some((n) => n.opType === 'Resize'), mode);
    }
    trace((t) => om.nn.functional.interpolate(t, { scaleFactor: 0.7, mode: 'bicubic', recomputeScaleFactor: true }), { x: ten });
    assert.deepEqual(trace((t) => om.nn.functional.interpolate(t, { scaleFactor: 0.7 }), { x: ten }).outputs[0].shape, [1, 1, 7, 7]);
  }));

  // Found by a sweep (inputs 1-100 to outputs 1-130, scales k/10, k/8, k/3, k/7): ONNX Resize's
  // asymmetric/floor source is dst / (out / in) (or dst / scale) in float, PyTorch's is
  // dst * (in / out) (or dst * (float)(1 / scale)), and they floor to different pixels at 473 of
  // 13000 sizes and 937 of 9044 scales. Each case below picked another row in onnxruntime-web
  // when nearest was lowered to Resize; the Gather of the eager indices picks the same ones.
  test('nearest picks the eager source pixels where ONNX Resize floors differently', () => withTraced((keep, trace) => {
    const cases = [
      [[21, 4], { size: [3, 4] }, 'row 1: 1 * (21 / 3) = 7, Resize 1 / (3 / 21) = 6.9999995'],
      [[20, 3], { size: [12, 3] }, 'row 9: 9 * (20 / 12) = 15, Resize 14'],
      [[5, 16], { size: [5, 94] }, 'column 47: 47 * (16 / 94) = 7.9999995 so 7, Resize 47 / (94 / 16) = 8'],
      [[18, 18], { size: [78, 111] }, 'row 65 and column 37 both'],
      [[9, 4], { scaleFactor: [4 / 7, 1] }, 'row 4 of 5: 4 * (float)(7 / 4) = 7, Resize 4 / (4 / 7) = 6'],
      [[8, 3], { scaleFactor: [8 / 7, 2.5] }, 'row 8 of 9'],
      [[3, 9], { scaleFactor: [1, 5.125] }, 'column 41 of 46: 41 * (float)(1 / 5.125) floors to 7, Resize 41 / 5.125 = 8'],
    ];
    for (const [[h, w], opts, why] of cases) {
      const x = om.randn([2, 3, h, w], { seed: h * 100 + w }); // a symbolic batch and channel axis carry over
      const tm = trace((t) => om.nn.functional.interpolate(t, opts), { x: [x, ['batch', 'channels', null, null]] });
      assert.ok(tm.graph().nodes.every((n) => n.opType === 'Gather'), `${why}: ${tm.graph().nodes.map((n) => n.opType)}`);
    }
  }));

  test('interpolate on symbolic spatial axes: by a scale factor, by a size; bicubic by 1.5 on one symbolic axis', () => withTraced((keep, trace) => {
    const F = om.nn.functional, img = om.randn([2, 2, 5, 6], { seed: 8 }), ops = (tm) => tm.graph().nodes.map((n) => n.opType);
    const HW = ['batch', null, 'h', 'w'];
    // bilinear by 2: Resize with scales, the output 2*h by 2*w; nothing computed from Shape
    const up = trace((x) => F.interpolate(x, { scaleFactor: 2, mode: 'bilinear' }), { x: [img, HW] });
    assert.deepEqual(up.outputs[0].shape, ['batch', 2, '2*h', '2*w']);
    assert.deepEqual(ops(up).filter((o) => o !== 'Constant'), ['Resize']);
    // nearest by a whole scale factor or 1 / 2^j: one Resize too (tests/js/graph-economy.test.mjs)
    const near = trace((x) => F.interpolate(x, { scaleFactor: [3, 0.5] }), { x: [img, HW] });
    assert.deepEqual(near.outputs[0].shape, ['batch', 2, '3*h', 'floor(w/2)']);
    assert.deepEqual(ops(near).filter((o) => o !== 'Constant'), ['Resize']);
    // by another: the eager kernel's source indices computed from the size
    const other = trace((x) => F.interpolate(x, { scaleFactor: [2.5, 0.75] }), { x: [img, HW] });
    assert.deepEqual(other.outputs[0].shape, ['batch', 2, '2*h+floor(h/2)', 'floor(3*w/4)']);
    assert.equal(ops(other).filter((o) => o === 'Gather').length, 2);
    // a fixed size from a symbolic one: the output is fixed
    const fixed = trace((x) => F.interpolate(x, { size: [8, 3], mode: 'bilinear' }), { x: [img, HW] });
    assert.deepEqual(fixed.outputs[0].shape, ['batch', 2, 8, 3]);
    // a size computed from the input's (as a user writes it): the output follows the symbols
    const half = trace((x) => F.interpolate(x, { size: [x.shape[2] * 2 + 1, x.shape[3]], mode: 'bilinear', alignCorners: true }), { x: [img, HW] });
    assert.deepEqual(half.outputs[0].shape, ['batch', 2, '2*h+1', 'w']);
    // bilinear by 1.5: the eager taps computed from the sizes, right at every size (trace checks them)
    const by15 = trace((x) => F.interpolate(x, { scaleFactor: 1.5, mode: 'bilinear' }), { x: [img, HW] });
    assert.deepEqual(by15.outputs[0].shape, ['batch', 2, 'h+floor(h/2)', 'w+floor(w/2)']);
    assert.equal(ops(by15).filter((o) => o === 'Gather').length, 4);
    // bicubic by 1.5 (where a Resize would copy a kept size at small sizes, and its coordinates
    // round otherwise): four Gathers an axis, the taps computed on the symbolic axis, constants on
    // the fixed one
    for (const [axes, out] of [[[null, null, 'h', null], ['h+floor(h/2)', 9]], [[null, null, null, 'w'], [7, 'w+floor(w/2)']]]) {
      const cubic = trace((x) => F.interpolate(x, { scaleFactor: 1.5, mode: 'bicubic' }), { x: [img, axes] });
      assert.deepEqual(cubic.outputs[0].shape, [2, 2, ...out]);
      const count = (op) => ops(cubic).filter((o) => o === op).length;
      assert.deepEqual([count('Gather'), count('Range'), count('Resize')], [8, 1, 0]);
    }
  }));
});

test('gradients flow through embedding and interpolate in a small training step', () => om.tidy(() => {
  om.manualSeed(2);
  const e = new om.nn.Embedding(6, 4);
  const ids = i64([[1, 2], [2, 5]]);
  const img = e.forward(ids).reshape([1, 1, 4, 4]);
  const loss = om.nn.functional.interpolate(img, { size: [7, 5], mode: 'bilinear' }).pow(2).mean();
  loss.backward();
  const g = vals(e.weight.grad);
  near(g.slice(0, 4), [0, 0, 0, 0], 0, 'unused row 0');
  near(g.slice(12, 16), [0, 0, 0, 0], 0, 'unused row 3');
  assert.ok(g.slice(8, 12).some((v) => v !== 0), 'row 2 (used twice) has a gradient');
  e.dispose();
}));
