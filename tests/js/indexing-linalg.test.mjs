// einsum, cdist, F.unfold / F.fold, maskedScatter and indexPut (x[i, j] = v): values against
// tests/js/fixtures/pytorch/ops/indexing_linalg.json (written by tools/pytorch_composites.py),
// gradients by finite differences, the errors, in-place forms recorded while a trace records, and
// models using them traced and run in onnxruntime-web and the Session at other sizes, against
// eager runs.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as om from 'onemodel';
import { memoryHooks, vals, near, gradcheck, withTraced, throwsKind, moduleOf } from './helpers.mjs';

memoryHooks();

const fx = JSON.parse(readFileSync(new URL('./fixtures/pytorch/ops/indexing_linalg.json', import.meta.url), 'utf8'));
const F = om.nn.functional;
const input = ({ shape, data }, dtype = 'float32') => om.tensor(data.map((v) => (dtype === 'bool' ? Boolean(v) : v)), { dtype }).reshape(shape);
const ints = (t) => input(t, 'int64');

/** r has the fixture output's shape and values (exactly, or within tol). */
function same(r, output, what, tol = 0) {
  assert.deepEqual(r.shape, output.shape, what);
  if (tol) near(vals(r), output.data, tol, what);
  else assert.deepEqual(vals(r), output.data.map(Number), what);
}

describe('einsum', () => {
  test('matches PyTorch: batched matmuls, outer products, transposes, traces, diagonals, sums, ..., three operands', () => om.tidy(() => {
    for (const c of fx.einsum) same(om.einsum(c.args.equation, ...c.inputs.map((t) => input(t))), c.output, c.args.equation);
    assert.ok(fx.einsum.length >= 12);
  }));

  test('int64 operands: exact int64 results', () => om.tidy(() => {
    const a = om.tensor([[3, -1], [2 ** 26, 5]], { dtype: 'int64' }), b = om.tensor([[1, 1], [1, 3]], { dtype: 'int64' });
    const r = om.einsum('ij,jk->ik', a, b);
    assert.equal(r.dtype, 'int64');
    assert.deepEqual(vals(r), [2, 0, 2 ** 26 + 5, 2 ** 26 + 15]);
  }));

  test('operands as an array, and the results are new tensors', () => om.tidy(() => {
    const a = om.randn([2, 3], { seed: 1 });
    const t = om.einsum('ij->ij', [a]);
    assert.notEqual(t, a);
    assert.deepEqual(vals(t), vals(a));
  }));

  test('gradients by finite differences', () => om.tidy(() => {
    gradcheck((a, b) => om.einsum('bij,bkj->bik', a, b), om.randn([2, 3, 2], { seed: 1 }), om.randn([2, 4, 2], { seed: 2 }));
    gradcheck((a) => om.einsum('ii->i', a), om.randn([3, 3], { seed: 3 }));
    gradcheck((a, b, c) => om.einsum('i,ij,j->', a, b, c), om.randn([2], { seed: 4 }), om.randn([2, 3], { seed: 5 }), om.randn([3], { seed: 6 }));
  }));

  test('errors name the op, the subscript and the sizes', () => om.tidy(() => {
    const a = om.zeros([2, 3]), b = om.zeros([4, 5]);
    throwsKind(() => om.einsum('ij,jk->ik', a, b), 'ShapeMismatch', /^einsum: subscript j has size 4 in operand 1 and 3 before it$/);
    throwsKind(() => om.einsum('ij,jk->ik', a), 'InvalidArgument', /^einsum: equation "ij,jk->ik" has 2 operands, 1 given$/);
    throwsKind(() => om.einsum('ijk', a), 'ShapeMismatch', /^einsum: operand 0 \("ijk"\) names 3 dims but has 2$/);
    throwsKind(() => om.einsum('i1', a), 'InvalidArgument', /^einsum: invalid subscript "1" in operand 0/);
    throwsKind(() => om.einsum('ij->ik', a), 'InvalidArgument', /^einsum: output subscript k does not appear in any operand$/);
    throwsKind(() => om.einsum('ij->ii', a), 'InvalidArgument', /^einsum: output subscript i appears more than once$/);
    throwsKind(() => om.einsum('ii', a), 'ShapeMismatch', /^einsum: subscript i is repeated in operand 0 with sizes 2 and 3$/);
    throwsKind(() => om.einsum('i..j', a), 'InvalidArgument', /^einsum: operand 0 \("i\.\.j"\) has a '\.' that is not one '\.\.\.'$/);
    throwsKind(() => om.einsum('i->i->i', a), 'InvalidArgument', /more than one '->'/);
    throwsKind(() => om.einsum(3, a), 'InvalidArgument', /^einsum: equation must be a string/);
    throwsKind(() => om.einsum('ij', 'x'), 'InvalidArgument', /einsum: operands\[0\]/);
  }));
});

describe('cdist', () => {
  test('matches PyTorch: p = 2 (exact and the matmul form above 25 rows), 1, infinity, 0, 1.5, batched', () => om.tidy(() => {
    for (const c of fx.cdist) {
      const p = c.args.p === 'inf' ? Infinity : c.args.p;
      same(om.cdist(...c.inputs.map((t) => input(t)), p), c.output, `p=${p} [${c.inputs[0].shape}]`, 2e-5);
    }
  }));

  test('no features: every distance 0, as PyTorch', () => om.tidy(() => {
    for (const p of [0, 1, 2, 3, Infinity]) assert.deepEqual(vals(om.cdist(om.zeros([2, 0]), om.zeros([3, 0]), p)), [0, 0, 0, 0, 0, 0], `p=${p}`);
  }));

  test('a NaN feature makes the distance NaN for every p (p = 0 counted it as 1); an infinite one differs', () => withTraced((keep, trace) => {
    const a = om.tensor([[NaN, 1], [Infinity, 0], [2, 0]]), b = om.tensor([[0, 0], [2, 0]]);
    const want = { 0: [NaN, NaN, 1, 1, 1, 0], 1: [NaN, NaN, Infinity, Infinity, 2, 0], 2: [NaN, NaN, Infinity, Infinity, 2, 0] };
    for (const [p, w] of Object.entries(want)) assert.deepEqual(vals(om.cdist(a, b, Number(p))), w, `p=${p}`);
    // PyTorch 1.13's p = infinity kernel skips a NaN (gives 1 for the first pair); the library keeps it (docs/api.md)
    assert.deepEqual(vals(om.cdist(a, b, Infinity)), [NaN, NaN, Infinity, Infinity, 2, 0]);
    // the graph (IsNaN, Where) gives the same at other row counts
    const b4 = om.tensor([[0, 0], [2, 0], [1, NaN], [-1, 1]]); // 4 rows: no symbol's size equals the 2 features
    trace((x, y) => ({ d0: om.cdist(x, y, 0), d1: om.cdist(x, y, 1) }), { x: [a, ['p', null]], y: [b4, ['r', null]] });
  }));

  test('the compute modes: the matmul form and the exact differences agree', () => om.tidy(() => {
    const a = om.randn([3, 4], { seed: 1 }), b = om.randn([5, 4], { seed: 2 });
    const mm = om.cdist(a, b, 2, { computeMode: 'use_mm_for_euclid_dist' });
    const exact = om.cdist(a, b, 2, { computeMode: 'donot_use_mm_for_euclid_dist' });
    near(vals(mm), vals(exact), 1e-5);
  }));

  test('gradients by finite differences, and none that is NaN at a zero distance', () => om.tidy(() => {
    for (const p of [2, 1, 3, Infinity]) gradcheck((a, b) => om.cdist(a, b, p), om.randn([3, 2], { seed: 1 }), om.randn([2, 2], { seed: 2 }));
    gradcheck((a, b) => om.cdist(a, b, 2, { computeMode: 'use_mm_for_euclid_dist' }), om.randn([2, 3], { seed: 3 }), om.randn([3, 3], { seed: 4 }));
    for (const computeMode of ['use_mm_for_euclid_dist', 'donot_use_mm_for_euclid_dist']) {
      const a = om.tensor([[1, 2], [3, 4]]);
      a.requiresGrad = true;
      om.cdist(a, a, 2, { computeMode }).sum().backward();
      assert.ok(vals(a.grad).every(Number.isFinite), computeMode);
    }
  }));

  test('errors', () => om.tidy(() => {
    const a = om.zeros([2, 3]);
    throwsKind(() => om.cdist(a, om.zeros([2, 4])), 'ShapeMismatch', /^cdist: x1 \[2,3\] and x2 \[2,4\] must have the same number of features \(3 != 4\)$/);
    throwsKind(() => om.cdist(om.zeros([3]), a), 'ShapeMismatch', /^cdist: x1 must have at least 2 dims/);
    throwsKind(() => om.cdist(a, a.to('int64')), 'DtypeMismatch', /^cdist: x2 must be float32, not int64$/);
    throwsKind(() => om.cdist(a, a, -1), 'InvalidArgument', /^cdist: p must be a number >= 0/);
    throwsKind(() => om.cdist(a, a, 2, { computeMode: 'fast' }), 'InvalidArgument', /^cdist: computeMode must be one of/);
  }));
});

describe('unfold and fold', () => {
  test('match PyTorch: kernels, dilation, padding, stride, an unbatched input', () => om.tidy(() => {
    for (const c of fx.fold) {
      const { op, kernel_size: kernelSize, dilation, padding, stride } = c.args;
      const x = input(c.inputs[0]);
      const r = op === 'unfold' ? F.unfold(x, kernelSize, { dilation, padding, stride })
        : F.fold(x, c.args.output_size, kernelSize, { dilation, padding, stride });
      same(r, c.output, `${op} ${JSON.stringify(c.args)}`);
    }
  }));

  test('nn.Unfold and nn.Fold call the functions with their settings', () => om.tidy(() => {
    const x = om.randn([2, 3, 5, 6], { seed: 3 }), options = { dilation: [1, 2], padding: 1, stride: [2, 1] };
    const net = new om.nn.Sequential(new om.nn.Unfold([2, 3], options), new om.nn.Fold([5, 6], [2, 3], options));
    assert.deepEqual(vals(net.forward(x)), vals(F.fold(F.unfold(x, [2, 3], options), [5, 6], [2, 3], options)));
    assert.deepEqual(net.stateDict(), {});
    assert.throws(() => new om.nn.Unfold(2, { stride: 1.5 }), (e) => e.kind === 'InvalidArgument' && /Unfold: stride/.test(e.message));
    assert.throws(() => new om.nn.Fold(4, 2, { groups: 2 }), (e) => e.kind === 'InvalidArgument' && /Fold: .*groups/.test(e.message));
  }));

  test('gradients by finite differences', () => om.tidy(() => {
    gradcheck((x) => F.unfold(x, [2, 3], { padding: 1, stride: [2, 1], dilation: [1, 2] }), om.randn([1, 2, 4, 5], { seed: 1 }));
    gradcheck((x) => F.fold(x, [4, 5], 2, { padding: 1, stride: 2 }), om.randn([1, 8, 9], { seed: 2 }));
  }));

  test('errors', () => om.tidy(() => {
    const x = om.zeros([1, 2, 3, 3]);
    throwsKind(() => F.unfold(x, 4), 'ShapeMismatch', /^unfold: no 4x4 block \(dilation \[1,1\]\) fits in a \[3,3\] input padded by \[0,0\]$/);
    throwsKind(() => F.unfold(om.zeros([3, 3]), 2), 'ShapeMismatch', /^unfold: input must be \[N, C, H, W\] or \[C, H, W\], got \[3,3\]$/);
    throwsKind(() => F.unfold(x, 2, { stride: 0 }), 'InvalidArgument', /^unfold: stride must be positive, got \[0,0\]$/);
    throwsKind(() => F.unfold(x, 2, { padding: -1 }), 'InvalidArgument', /^unfold: padding must be non-negative/);
    throwsKind(() => F.fold(om.zeros([1, 7, 4]), 3, 2), 'ShapeMismatch', /^fold: input's 7 rows are not a multiple of the kernel's 4 elements$/);
    throwsKind(() => F.fold(om.zeros([1, 8, 5]), 3, 2), 'ShapeMismatch', /^fold: input has 5 blocks; output_size \[3,3\] gives 2 x 2$/);
    throwsKind(() => F.fold(om.zeros([1, 8, 4]), [0, 3], 2), 'InvalidArgument', /^fold: output_size must be positive \(and below 2\^31\), got \[0,3\]$/);
    throwsKind(() => F.fold(om.zeros([2, 0, 4]), 3, 2), 'ShapeMismatch',
      /^fold: input must be \[N, C \* kH \* kW, L\] or \[C \* kH \* kW, L\] with non-zero dimensions other than the batch, got \[2,0,4\]$/);
    throwsKind(() => F.unfold(om.zeros([1, 0, 3, 3]), 2), 'ShapeMismatch', /^unfold: input must be .* with non-zero dimensions other than the batch, got \[1,0,3,3\]$/);
    throwsKind(() => F.unfold(x.to('int64'), 2), 'DtypeMismatch', /^unfold: takes float32, not int64$/);
    throwsKind(() => F.unfold(x, [2, 0]), 'InvalidArgument', /^unfold: kernel_size must be positive, got \[2,0\]$/);
    throwsKind(() => F.unfold(x, 2, { dilation: 2 ** 31 }), 'InvalidArgument', /^unfold: dilation \[2147483648,2147483648\] is above 2\^31-1$/);
    assert.deepEqual(F.unfold(om.zeros([0, 2, 3, 3]), 2).shape, [0, 8, 4]); // only the batch may be empty, as PyTorch
    throwsKind(() => F.unfold(x, 2, { groups: 2 }), 'InvalidArgument', /unfold: .*groups/);
  }));
});

describe('maskedScatter', () => {
  test('matches PyTorch: a mask of the input\'s shape and broadcast masks', () => om.tidy(() => {
    for (const c of fx.masked_scatter) {
      const [x, mask, src] = c.inputs;
      same(input(x).maskedScatter(input(mask, 'bool'), input(src)), c.output, `mask [${mask.shape}]`);
      same(om.maskedScatter(input(x), input(mask, 'bool'), input(src)), c.output, `mask [${mask.shape}]`);
    }
  }));

  test('in place, int64, and an empty source with no true place', () => om.tidy(() => {
    const x = om.zeros([4], { dtype: 'int64' });
    assert.equal(x.maskedScatter_(om.tensor([false, true, false, true]), om.tensor([5, 6, 7], { dtype: 'int64' })), x);
    assert.deepEqual(vals(x), [0, 5, 0, 6]);
    assert.deepEqual(vals(om.ones([2]).maskedScatter(om.tensor([false, false]), om.zeros([0]))), [1, 1]);
  }));

  test('gradients by finite differences', () => om.tidy(() => {
    const mask = om.tensor([[true, false, true], [false, true, true]]);
    gradcheck((x, s) => x.maskedScatter(mask, s), om.randn([2, 3], { seed: 1 }), om.randn([5], { seed: 2 }));
  }));

  test('errors', () => om.tidy(() => {
    const x = om.zeros([2, 3]), mask = om.ones([2, 3]).gt(0);
    throwsKind(() => x.maskedScatter(mask, om.zeros([5])), 'IndexOutOfRange', /^maskedScatter: mask has more true places than source's 5 elements$/);
    throwsKind(() => x.maskedScatter(mask, om.zeros([0])), 'IndexOutOfRange', /^maskedScatter: mask has more true places than source's 0 elements$/);
    throwsKind(() => x.maskedScatter(om.ones([2, 3]), om.zeros([6])), 'DtypeMismatch', /^maskedScatter: mask must be bool, not float32$/);
    throwsKind(() => x.maskedScatter(mask, om.zeros([6], { dtype: 'int64' })), 'DtypeMismatch', /^maskedScatter: source is int64, input float32/);
    throwsKind(() => x.maskedScatter(om.ones([4]).gt(0), om.zeros([8])), 'ShapeMismatch', /where/);
  }));
});

describe('index (x[i, j] read)', () => {
  test('values: one and several index tensors, broadcast, negative, a lone Tensor, int64 and bool inputs', () => om.tidy(() => {
    const x = om.arange(0, 24).view(2, 3, 4);
    const i = om.tensor([1, 0], { dtype: 'int64' }), j = om.tensor([-1, 2], { dtype: 'int64' });
    assert.deepEqual(vals(x.index([i, j])), [20, 21, 22, 23, 8, 9, 10, 11]); // x[[1, 0], [-1, 2]]: [2, 4]
    assert.deepEqual(x.index([i.view(2, 1), j]).shape, [2, 2, 4]);
    assert.deepEqual(vals(x.index([i.view(2, 1), j])), [20, 21, 22, 23, 20, 21, 22, 23, 8, 9, 10, 11, 8, 9, 10, 11]);
    assert.deepEqual(vals(om.index(x, [i, j, om.tensor([3, -4], { dtype: 'int64' })])), [23, 8]);
    assert.deepEqual(x.index(om.tensor([[1], [0]], { dtype: 'int64' })).shape, [2, 1, 3, 4]);
    assert.deepEqual(vals(om.tensor([5, 6, 7], { dtype: 'int64' }).index([om.tensor([2, -3], { dtype: 'int64' })])), [7, 5]);
    assert.deepEqual(vals(om.tensor([true, false]).index([om.tensor([1, 1, 0], { dtype: 'int64' })])), [0, 0, 1]);
    assert.deepEqual(x.index([om.zeros([0], { dtype: 'int64' })]).shape, [0, 3, 4]);
  }));

  test('gradients by finite differences (a repeated index sums)', () => om.tidy(() => {
    const i = om.tensor([2, 0, 2], { dtype: 'int64' }), j = om.tensor([[1], [-1]], { dtype: 'int64' });
    gradcheck((x) => x.index([i]), om.randn([3, 4], { seed: 1 }));
    gradcheck((x) => x.index([i, j]), om.randn([3, 4], { seed: 2 }));
  }));

  test('errors name the op, the index tensor, the value and the dim', () => om.tidy(() => {
    const x = om.zeros([2, 3]);
    throwsKind(() => x.index([om.tensor([2], { dtype: 'int64' })]), 'IndexOutOfRange', /^index: indices\[0\] holds 2, outside \[-2, 2\) for dim 0 of input \[2,3\]$/);
    throwsKind(() => x.index([om.tensor([0], { dtype: 'int64' }), om.tensor([-4], { dtype: 'int64' })]), 'IndexOutOfRange', /^index: indices\[1\] holds -4, outside \[-3, 3\) for dim 1 of input \[2,3\]$/);
    throwsKind(() => x.index([om.tensor([1, -3], { dtype: 'int64' }), om.tensor([0], { dtype: 'int64' })]), 'IndexOutOfRange', /^index: indices\[0\] holds -3, outside \[-2, 2\) for dim 0 of input \[2,3\]$/);
    throwsKind(() => x.index([om.tensor([0], { dtype: 'int64' })].concat(Array(2).fill(om.tensor([0], { dtype: 'int64' })))), 'IndexOutOfRange', /^index: 3 index tensors for input \[2,3\] of 2 dims$/);
    // one bool tensor is x[mask] (tests/js/nonzero.test.mjs); beside other indices it is refused
    throwsKind(() => x.index([om.tensor([true, false]), om.tensor([0], { dtype: 'int64' })]), 'DtypeMismatch', /^index: indices\[0\] must be int64, not bool$/);
    throwsKind(() => x.index([]), 'InvalidArgument', /^index: indices must be a Tensor or a non-empty array of tensors, got/);
    throwsKind(() => x.index([om.tensor([0, 1], { dtype: 'int64' }), om.tensor([0, 1, 2], { dtype: 'int64' })]), 'ShapeMismatch', /./);
  }));
});

describe('indexPut', () => {
  test('matches PyTorch: one and several index tensors, broadcast, negative, repeated with accumulate, a bool mask', () => om.tidy(() => {
    for (const c of fx.index_put) {
      const [x, v, ...idx] = c.inputs;
      const what = JSON.stringify(c.args) + ` [${x.shape}] values [${v.shape}]`;
      const indices = idx.map((t) => (c.args.mask ? input(t, 'bool') : ints(t)));
      same(input(x).indexPut(indices, input(v), c.args.accumulate), c.output, what);
      const y = input(x);
      assert.equal(y.indexPut_(indices, input(v), c.args.accumulate), y);
      same(y, c.output, `in place ${what}`);
    }
    assert.ok(fx.index_put.some((c) => c.args.mask) && fx.index_put.some((c) => !c.args.mask));
  }));

  test('a number as values, int64 and bool inputs, a lone index tensor', () => om.tidy(() => {
    const i = om.tensor([2, 0], { dtype: 'int64' });
    assert.deepEqual(vals(om.indexPut(om.zeros([3], { dtype: 'int64' }), i, 7)), [7, 0, 7]);
    assert.deepEqual(vals(om.zeros([3], { dtype: 'bool' }).indexPut([i], true)), [1, 0, 1]);
    assert.deepEqual(vals(om.zeros([3]).indexPut([i], 2, true)), [2, 0, 2]);
  }));

  test('gradients by finite differences', () => om.tidy(() => {
    const i = om.tensor([2, 0], { dtype: 'int64' }), j = om.tensor([[1], [3]], { dtype: 'int64' });
    gradcheck((x, v) => x.indexPut([i], v), om.randn([3, 4], { seed: 1 }), om.randn([2, 4], { seed: 2 }));
    gradcheck((x, v) => x.indexPut([i, j], v), om.randn([3, 4], { seed: 3 }), om.randn([2, 2], { seed: 4 }));
    gradcheck((x, v) => x.indexPut([om.tensor([1, 1, 0], { dtype: 'int64' })], v, true), om.randn([2, 3], { seed: 5 }), om.randn([3, 3], { seed: 6 }));
  }));

  test('errors name the op, the index, the dim and the shapes', () => om.tidy(() => {
    const x = om.zeros([3, 4]), i = om.tensor([0, 3], { dtype: 'int64' });
    throwsKind(() => x.indexPut([i], om.zeros([2, 4])), 'IndexOutOfRange', /^indexPut: index 3 is out of range for dim 0 of size 3 \(valid: -3 to 2\)$/);
    throwsKind(() => x.indexPut([om.tensor([-4], { dtype: 'int64' })], 1), 'IndexOutOfRange', /^indexPut: index -4 is out of range for dim 0/);
    throwsKind(() => x.indexPut([i.to('float32')], 1), 'DtypeMismatch', /^indexPut: index 0 is float32; indices must be int64/);
    throwsKind(() => x.indexPut([i, i, i], 1), 'InvalidArgument', /^indexPut: 3 index tensors for an input of 2 dims \(1 to 2\)$/);
    throwsKind(() => x.indexPut([i, om.tensor([0, 1, 2], { dtype: 'int64' })], 1), 'ShapeMismatch', /indexPut/);
    throwsKind(() => x.indexPut([om.tensor([0, 1], { dtype: 'int64' })], om.zeros([2, 3])), 'ShapeMismatch', /expand/);
    throwsKind(() => x.indexPut([om.tensor([0], { dtype: 'int64' })], om.zeros([4], { dtype: 'int64' })), 'DtypeMismatch', /^indexPut: values are int64, input float32 \(they must match\)$/);
    throwsKind(() => om.zeros([2], { dtype: 'bool' }).indexPut([om.tensor([0], { dtype: 'int64' })], om.ones([1]), true), 'DtypeMismatch', /^indexPut: values are float32, input bool \(they must match\)$/);
    throwsKind(() => x.indexPut(i, 1, 'yes'), 'InvalidArgument', /^indexPut: accumulate must be a boolean/);
    throwsKind(() => x.indexPut('i', 1), 'InvalidArgument', /^indexPut: indices must be a Tensor or an array of tensors/);
    throwsKind(() => x.indexPut([i], 'v'), 'InvalidArgument', /^indexPut: values must be a Tensor or a number/);
    throwsKind(() => x.indexPut([om.ones([4]).gt(0)], 1), 'ShapeMismatch', /^indexPut: a bool index \[4\] must have input \[3,4\]'s leading sizes$/);
    throwsKind(() => x.indexPut([om.ones([3]).gt(0)], 'v'), 'InvalidArgument', /^indexPut: values must be a Tensor or a number/);
    // one row per true place, as PyTorch: more true places than rows, and fewer (which read the first rows before)
    throwsKind(() => x.indexPut([om.ones([3]).gt(0)], om.zeros([2, 4])), 'ShapeMismatch', /^indexPut: values of shape \[2,4\] cannot be broadcast to the indexing result of shape \[3,4\] \(the mask has 3 true places\)$/);
    throwsKind(() => x.indexPut([om.tensor([false, true, false])], om.zeros([2, 4]), true), 'ShapeMismatch', /^indexPut: values of shape \[2,4\] cannot be broadcast to the indexing result of shape \[1,4\] \(the mask has 1 true place\)$/);
  }));
});

describe('traced', () => {
  test('attention scores by einsum, cdist, unfold of symbolic sizes: onnxruntime-web and the Session agree with eager', () => withTraced((keep, trace) => {
    trace(moduleOf((q, k) => om.einsum('bhqd,bhkd->bhqk', q, k).softmax(-1)),
      { q: [om.randn([2, 2, 5, 4], { seed: 1 }), ['b', null, 'q', null]], k: [om.randn([2, 2, 6, 4], { seed: 2 }), ['b', null, 'k', null]] });
    trace(moduleOf((a, b) => om.einsum('ijk,ik->j', a, b)), // two summed letters merged into one matmul dim
      { a: [om.randn([3, 4, 5], { seed: 8 }), ['i', null, 'k']], b: [om.randn([3, 5], { seed: 9 }), ['i', 'k']] });
    trace(moduleOf((a) => om.einsum('...ij->...j', a).add(om.einsum('bii->bi', a.slice(2, 0, 3)))),
      { a: [om.randn([3, 3, 3], { seed: 3 }), ['n', null, null]] });
    const exact = { computeMode: 'donot_use_mm_for_euclid_dist' }, mm = { computeMode: 'use_mm_for_euclid_dist' };
    trace(moduleOf((a, b) => om.cdist(a, b, 2, exact).add(om.cdist(a, b, 2, mm)).add(om.cdist(a, b, 1)).add(om.cdist(a, b, Infinity))),
      { a: [om.randn([5, 3], { seed: 4 }), ['p', null]], b: [om.randn([4, 3], { seed: 5 }), ['r', null]] });
    trace(moduleOf((x) => F.unfold(x, [2, 3], { padding: 1, dilation: [2, 1] })), { x: [om.randn([2, 2, 6, 7], { seed: 6 }), ['n', null, 'h', 'w']] });
    // strides: the blocks' count is floor((h + 2 - 3) / 2 + 1) * floor((w - 2) / 1 + 1), computed in the graph
    trace(moduleOf((x) => F.unfold(x, [3, 2], { padding: [1, 0], stride: [2, 1] }).mul(2)), { x: [om.randn([2, 3, 7, 5], { seed: 10 }), ['n', null, 'h', 'w']] });
    trace(moduleOf((x) => F.fold(F.unfold(x, 3, { padding: 1, stride: 2 }), [5, 6], 3, { padding: 1, stride: 2 })),
      { x: [om.randn([2, 2, 5, 6], { seed: 7 }), ['n', null, null, null]] });
  }));

  test('einsum in a trace: one Einsum node where ONNX takes the equation as it is, the composition elsewhere; values in both engines at other sizes', () => withTraced((keep, trace) => {
    const ops = (tm) => tm.graph().nodes.map((n) => n.opType);
    const one = [
      ['bhid,bhjd->bhij', [2, 2, 5, 4], ['b', null, 'i', null], [2, 2, 6, 4], ['b', null, 'j', null]],
      ['bij,bjk->bik', [2, 3, 4], ['b', 'i', null], [2, 4, 5], ['b', null, 'k']],
      ['bqhd,bkhd->bhqk', [2, 5, 3, 4], ['b', 'q', null, null], [2, 6, 3, 4], ['b', 'k', null, null]],
      ['ijk,ik->j', [3, 4, 5], ['i', null, 'k'], [3, 5], ['i', 'k']], // two summed letters
      ['BiJ,BJ->iB', [2, 3, 4], ['n', null, null], [2, 4], ['n', null]], // capitals: renamed a, b, c
    ];
    for (const [eq, sa, aa, sb, ab] of one) {
      const tm = trace(moduleOf((a, b) => om.einsum(eq, a, b)), { a: [om.randn(sa, { seed: 1 }), aa], b: [om.randn(sb, { seed: 2 }), ab] });
      assert.deepEqual(ops(tm), ['Einsum'], eq);
    }
    // attention: two Einsum nodes, each keeping its own equation after the ops traced between them
    const att = trace(moduleOf((q, k, v) => om.einsum('bhij,bhjd->bhid', om.einsum('bhid,bhjd->bhij', q, k).mul(0.5).softmax(-1), v)),
      { q: [om.randn([2, 2, 5, 4], { seed: 11 }), ['b', null, 'i', null]], k: [om.randn([2, 2, 6, 4], { seed: 12 }), ['b', null, 'j', null]],
        v: [om.randn([2, 2, 6, 4], { seed: 13 }), ['b', null, 'j', null]] });
    assert.deepEqual(ops(att), ['Einsum', 'Mul', 'Softmax', 'Einsum']);
    const bytes = Buffer.from(att.toOnnx()); // the equations, letters renamed in order of first appearance
    for (const eq of ['abcd,abed->abce', 'abcd,abde->abce']) assert.ok(bytes.includes(eq), eq);
    // three operands, and one operand (a transpose and a sum)
    const tm3 = trace(moduleOf((a, b, c) => om.einsum('bn,anm,bm->ba', a, b, c)),
      { a: [om.randn([2, 3], { seed: 3 }), ['b', null]], b: om.randn([4, 3, 5], { seed: 4 }), c: [om.randn([2, 5], { seed: 5 }), ['b', null]] });
    assert.deepEqual(ops(tm3), ['Einsum']);
    const tm1 = trace(moduleOf((a) => om.einsum('ijk->ki', a)), { a: [om.randn([3, 4, 2], { seed: 6 }), ['i', null, null]] });
    assert.deepEqual(ops(tm1), ['Einsum']);
    // not one ONNX Einsum as written: '...', a diagonal, a size-1 broadcast, int64: the composition
    for (const [eq, xs] of [['...ij->...j', [[2, 3, 3]]], ['bii->bi', [[2, 3, 3]]], ['ij,ij->i', [[3, 1], [3, 4]]]]) {
      const tm = trace(moduleOf((...t) => om.einsum(eq, ...t).mul(2)), Object.fromEntries(xs.map((sh, i) => [`x${i}`, om.randn(sh, { seed: 7 + i })])));
      assert.ok(!ops(tm).includes('Einsum'), eq);
    }
    const ti = trace(moduleOf((a) => om.einsum('ij,jk->ik', a, om.tensor([[1n, 2n], [3n, 4n]]))), { a: om.tensor([[1n, 2n], [0n, 5n]]) });
    assert.ok(!ops(ti).includes('Einsum'), 'int64');
  }));

  test('index of symbolic sizes: x[arange(b), argmax(ids)] (CLIP\'s pooled output) and table[ids]', () => withTraced((keep, trace) => {
    const ids = om.tensor([[1, 5, 2, 0], [7, 1, 1, 1], [1, 2, 3, 9]], { dtype: 'int64' });
    trace(moduleOf((h, t) => h.index([om.arange(0, h.shape[0], { dtype: 'int64' }), t.argmax(-1)])),
      { h: [om.randn([3, 4, 5], { seed: 1 }), ['b', 's', null]], t: [ids, ['b', 's']] });
    trace(moduleOf((table, t) => table.index([t.remainder(table.shape[0]).neg()])), // negative indices, counted from the end
      { table: [om.randn([10, 3], { seed: 2 }), ['n', null]], t: [ids, ['b', 's']] });
  }));

  test('maskedScatter and indexPut of symbolic sizes, in place into a created tensor', () => withTraced((keep, trace) => {
    trace(moduleOf((x, m, s) => x.maskedScatter(m, s)),
      { x: [om.randn([3, 4], { seed: 1 }), ['n', null]], m: [om.randn([3, 4], { seed: 2 }).gt(0), ['n', null]], s: [om.randn([3, 4], { seed: 3 }), ['n', null]] });
    const i = om.tensor([0, 2, 1, 2], { dtype: 'int64' });
    trace(moduleOf((x, v, idx) => {
      const y = x.mul(2);
      y.indexPut_([idx], v, true); // a write into a tensor the model made: a graph op
      return y.indexPut([idx.slice(0, 2)], v.slice(0, 2));
    }), { x: [om.randn([3, 5], { seed: 4 }), [null, 'w']], v: [om.randn([4, 5], { seed: 5 }), ['k', 'w']], idx: [i, ['k']] });
    // x[mask] = 0 and x[mask] += rows, one row per true place as PyTorch requires (a mask true
    // everywhere, so its count is n at every size); one row would broadcast to every true place
    // instead, as in PyTorch, so the rows' count is declared at least 2
    const n = om.Dim('n', { min: 2 });
    trace(moduleOf((x, m, v) => x.indexPut([m], 0).indexPut([m.logicalOr(m.logicalNot())], v, true)),
      { x: [om.randn([4, 3], { seed: 7 }), [n, null]], m: [om.tensor([true, false, true, true]), [n]], v: [om.randn([4, 3], { seed: 8 }), [n, null]] });
    trace(moduleOf((x, idx) => { // a number broadcast to the indices' symbolic length
      const y = x.add(1);
      y.indexPut_([idx], 0);
      return y.indexPut([idx, idx.mul(0)], 5);
    }), { x: [om.randn([6, 3], { seed: 6 }), ['n', null]], idx: [om.tensor([0, 2, 4], { dtype: 'int64' }), ['k']] });
  }));

  test('indexPut with repeated places: accumulate sums them (bool: or, through int64 in the graph), without it the last written stays, in both engines', () => withTraced((keep, trace) => {
    // the places repeat within the indices, whose length k is symbolic (PyTorch: bool += is or)
    const put = (acc) => moduleOf((x, idx, v) => x.indexPut([idx], v, acc));
    const idx = om.tensor([1, 3, 1, 1, 0], { dtype: 'int64' });
    const b = om.tensor([true, false, false, false, false]), bv = om.tensor([false, true, false, true, false]);
    const tb = trace(put(true), { x: [b, [null]], idx: [idx, ['k']], v: [bv, ['k']] });
    assert.ok(tb.graph().nodes.some((n) => n.opType === 'Cast'), 'bool accumulate adds in int64');
    const f = om.randn([5, 2], { seed: 9 }), fv = om.randn([5, 2], { seed: 10 });
    trace(put(true), { x: [f, [null, null]], idx: [idx, ['k']], v: [fv, ['k', null]] });
    trace(put(false), { x: [f, [null, null]], idx: [idx, ['k']], v: [fv, ['k', null]] });
    const n = om.tensor([[1, 2], [3, 4], [5, 6], [7, 8], [9, 10]], { dtype: 'int64' }), nv = n.mul(10);
    trace(put(false), { x: [n, [null, null]], idx: [idx, ['k']], v: [nv, ['k', null]] });
    trace(put(true), { x: [n, [null, null]], idx: [idx, ['k']], v: [nv, ['k', null]] });
  }));

  test('cdist by default: the tracer finds the switch to the matmul form above 25 rows', () => om.tidy(() => {
    const model = moduleOf((a, b) => om.cdist(a, b));
    const a = om.randn([5, 3], { seed: 1 }), b = om.randn([4, 3], { seed: 2 });
    assert.throws(() => om.trace(model, { a: [a, ['p', null]], b: [b, ['r', null]] }),
      (e) => e instanceof om.TraceError && /the model changes at a size threshold: at p=26, r=26/.test(e.message));
  }));

  test('an in-place write into an input while tracing is InPlaceMutation', () => {
    const model = moduleOf((x) => x.indexPut_([om.tensor([0], { dtype: 'int64' })], 1).add(1));
    const x = om.randn([2, 3], { seed: 1 });
    try {
      assert.throws(() => om.trace(model, { x }), (e) => e instanceof om.TraceError && e.kind === 'InPlaceMutation');
      const m2 = moduleOf((x) => x.maskedScatter_(x.gt(0), x.flatten()).add(1));
      assert.throws(() => om.trace(m2, { x }), (e) => e instanceof om.TraceError && e.kind === 'InPlaceMutation');
    } finally {
      x.dispose();
    }
  });
});
