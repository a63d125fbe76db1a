// torch.scatter_reduce as scatterReduce (js/ops/index.js; the C op scatter_reduce of
// src/ops/index.c for prod, amax and amin, scatter_add for sum and mean): values and gradients
// against tests/js/fixtures/pytorch/ops/scatter_reduce.json (recorded by
// tools/pytorch_scatter_reduce.py: every reduce with includeSelf true and false, repeated places,
// ties, zeros, odd sizes, a size 1, a 0-d input, an empty index), gradients by finite
// differences, the method, function, keyword and in-place forms, the errors (kind and message),
// and models traced with symbolic axes run in onnxruntime-web and the Session against eager.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as om from 'onemodel';
import { memoryHooks, vals, near, gradcheck, throwsKind, moduleOf, withTraced, checkPyTorchCase } from './helpers.mjs';

memoryHooks();

const fx = JSON.parse(readFileSync(new URL('./fixtures/pytorch/ops/scatter_reduce.json', import.meta.url), 'utf8'));
const REDUCES = ['sum', 'prod', 'mean', 'amax', 'amin'];
const i64 = (rows) => om.tensor(rows, { dtype: 'int64' });

describe('against PyTorch', () => {
  for (const [k, c] of fx.cases.entries()) {
    const { dim, reduce, includeSelf } = c.args;
    const call = ([x, index, src]) => x.scatterReduce(dim, index, src, reduce, { includeSelf });
    test(`${JSON.stringify(c.args)} on [${c.inputs.map((x) => `${x.shape}`).join('], [')}] ${c.inputs[0].dtype} (case ${k})`, () => om.tidy(() => {
      if (c.output.dtype !== 'int64') return checkPyTorchCase(c, call, { value: 1e-6, grad: 1e-5 });
      const y = call(c.inputs.map((x) => om.tensor(x.data, { shape: x.shape, dtype: x.dtype }))); // int64: the same integers
      assert.equal(y.dtype, 'int64');
      assert.deepEqual(y.shape, c.output.shape);
      assert.deepEqual(Array.from(y.toArray(), Number), c.output.data);
    }));
  }

  test('the fixture has every reduce both ways, mostly with gradients', () => {
    assert.equal(new Set(fx.cases.map((c) => `${c.args.reduce} ${c.args.includeSelf}`)).size, 10);
    assert.equal(new Set(fx.cases.filter((c) => c.output.dtype === 'int64').map((c) => `${c.args.reduce} ${c.args.includeSelf}`)).size, 10);
    assert.ok(fx.cases.filter((c) => c.grads.some((g) => g)).length >= 60);
  });

  test('gradients by finite differences, every reduce, with and without the input', () => om.tidy(() => {
    // values 0.25 apart at least (no ties move under the step), none zero (prod divides)
    const x = () => om.tensor([[0.5, -1.25, 2], [1.5, 0.75, -0.5], [-2, 1, 2.5], [3, -0.75, 1.75]]);
    const s = () => om.tensor([[1.25, -2.5, 0.25], [2.75, 0.5, -1.5], [-3, 3.5, 1.25], [-0.25, 2.25, -1.75], [4, -3.25, 0.75]]);
    const index = i64([[0, 2, 1], [3, 2, 1], [0, 0, 3], [1, 2, 1], [3, 0, 0]]);
    for (const reduce of REDUCES) {
      for (const includeSelf of [true, false]) gradcheck((a, b) => a.scatterReduce(0, index, b, reduce, { includeSelf }), x(), s());
    }
  }));
});

describe('forms and rules', () => {
  test('method, function, keywords and in place agree; ties share the gradient; a NaN wins', () => om.tidy(() => {
    const x = om.tensor([1, 5, 2]), index = i64([0, 0, 2, 2]), s = om.tensor([4, 1, 7, 2]);
    const want = [4, 5, 7];
    near(vals(x.scatterReduce(0, index, s, 'amax')), want);
    near(vals(om.scatterReduce(x, -1, index, s, 'amax')), want);
    near(vals(x.scatterReduce({ dim: 0, index, src: s, reduce: 'amax' })), want);
    near(vals(x.scatterReduce(0, index, s, { reduce: 'amin', includeSelf: false })), [1, 5, 2]);
    near(vals(x.scatterReduce(0, index, s, 'mean', { includeSelf: false })), [2.5, 5, 4.5]); // 5 no source reaches
    near(vals(x.scatterReduce(0, index, s, 'mean')), [2, 5, 11 / 3]);
    near(vals(x.scatterReduce(0, index, s, 'prod')), [4, 5, 28]);
    const y = om.tensor([1, 5, 2]);
    assert.equal(y.scatterReduce_(0, index, s, 'sum', { includeSelf: false }), y);
    near(vals(y), [5, 5, 9]);
    // the input and both sources tie for the maximum at place 0: a third of the gradient each
    const a = om.tensor([3, 0]), b = om.tensor([3, 3, 1]);
    a.requiresGrad = b.requiresGrad = true;
    a.scatterReduce(0, i64([0, 0, 1]), b, 'amax').sum().backward();
    near([...vals(a.grad), ...vals(b.grad)], [1 / 3, 0, 1 / 3, 1 / 3, 1]);
    assert.ok(Number.isNaN(vals(om.tensor([1]).scatterReduce(0, i64([0, 0]), om.tensor([NaN, 2]), 'amin'))[0]));
  }));

  test('errors name scatterReduce and the values', () => om.tidy(() => {
    const x = om.zeros([3, 2]), index = i64([[0, 1], [2, 0]]), s = om.ones([2, 2]);
    throwsKind(() => x.scatterReduce(0, index, s, 'max'), 'InvalidArgument',
      /^scatterReduce: reduce must be 'sum', 'prod', 'mean', 'amax' or 'amin', got a string \("max"\)$/);
    throwsKind(() => x.scatterReduce(0, index, s, 'sum', { includeSelf: 1 }), 'InvalidArgument', /^scatterReduce: includeSelf must be a boolean, got 1$/);
    throwsKind(() => x.scatterReduce(0, index, s, 'sum', { include_self: false }), 'InvalidArgument', /^scatterReduce: unknown option 'include_self'/);
    throwsKind(() => om.zeros([3], { dtype: 'bool' }).scatterReduce(0, i64([0]), om.ones([1], { dtype: 'bool' }), 'sum'), 'DtypeMismatch',
      /^scatterReduce: input must be float32 or int64, not bool$/);
    throwsKind(() => om.zeros([3], { dtype: 'int64' }).scatterReduce(0, i64([0]), om.ones([1]), 'amax'), 'DtypeMismatch',
      /^scatterReduce: src is float32, input int64 \(they must match, as PyTorch's\)$/);
    // the C ops' own check, for callers that reach them without scatterReduce's
    throwsKind(() => om.zeros([3], { dtype: 'int64' }).scatterAdd(0, i64([0]), om.ones([1])), 'DtypeMismatch',
      /^scatterAdd: src is float32, input int64 \(they must match, as PyTorch's\)$/);
    throwsKind(() => x.scatterReduce(0, index, s.to('float64'), 'amax'), 'DtypeMismatch', /^scatterReduce: src is float64, input float32/);
    throwsKind(() => x.scatterReduce(0, index.to('float32'), s, 'amax'), 'DtypeMismatch', /^scatterReduce: index must be int64, got float32$/);
    throwsKind(() => x.scatterReduce(2, index, s, 'prod'), 'IndexOutOfRange', /^scatterReduce: dim 2 is out of range for a tensor of 2 dims$/);
    throwsKind(() => x.scatterReduce(0, index, om.ones([1, 2]), 'mean'), 'ShapeMismatch', /^scatterReduce: index \[2,2\] is larger than src \[1,2\] in dim 0$/);
    throwsKind(() => x.scatterReduce(0, i64([0, 1]), s, 'mean'), 'ShapeMismatch', /^scatterReduce: index \[2\] must have input \[3,2\]'s 2 dims$/);
    throwsKind(() => x.scatterReduce(0, i64([[3, 0]]), s, 'amin'), 'IndexOutOfRange',
      /^scatterReduce: index 3 is out of range for dim 0 of size 3 \(valid: 0 to 2\)$/);
    throwsKind(() => x.scatterReduce(0, index, 2, 'sum'), 'InvalidArgument', /^scatterReduce: src must be a Tensor/);
  }));
});

test('int64: sums and products wrap around as PyTorch\'s (two\'s complement; /usr/bin/python3\'s torch gave these), the mean rounds down', () => om.tidy(() => {
  const big = 2n ** 62n, x = i64([big, 3n, -7n]), index = i64([0, 0, 1, 2, 2]), s = i64([big, big, 5n, 2n, 1n]);
  assert.deepEqual(Array.from(x.scatterReduce(0, index, s, 'sum').toArray()), [-(2n ** 62n), 8n, -4n]); // 3 * 2^62 wraps to -2^62
  assert.deepEqual(Array.from(x.scatterReduce(0, index, s, 'prod').toArray()), [0n, 15n, -14n]); // 2^186 wraps to 0
  assert.deepEqual(Array.from(x.scatterReduce(0, index, s, 'mean', { includeSelf: false }).toArray()), [-big, 5n, 1n]); // 2^63 wraps first
  assert.deepEqual(Array.from(i64([-7n, 7n]).scatterReduce(0, i64([0, 1]), i64([0n, 0n]), 'mean').toArray()), [-4n, 3n]); // -3.5 down to -4
  assert.deepEqual(Array.from(i64([1n, 2n]).scatterReduce(0, i64([0, 0]), i64([-(2n ** 63n), 2n ** 63n - 1n]), 'amax', { includeSelf: false }).toArray()),
    [2n ** 63n - 1n, 2n]);
}));

describe('traced', () => {
  test('int64 input and src, every reduce both ways: onnxruntime-web and the Session agree with eager at other sizes', () => withTraced((keep, trace) => {
    const model = moduleOf((x, index, s) => REDUCES.flatMap((reduce) => [true, false].map((includeSelf) => x.scatterReduce(1, index, s, reduce, { includeSelf }))));
    trace(model, {
      x: [i64([[5, -3, 8, 0, 2], [-9, 4, 4, 1, -2], [7, 0, -6, 3, 3]]), ['n', null]],
      index: [i64([[4, 0, 4, 1], [2, 2, 2, 0], [1, 3, 0, 3]]), ['n', null]],
      s: [i64([[-4, 9, 3, 2], [6, -5, -1, 7], [2, 2, -8, 0]]), ['n', null]],
    });
  }));

  test('every reduce with and without the input: onnxruntime-web and the Session agree with eager at other sizes', () => withTraced((keep, trace) => {
    const model = moduleOf((x, index, s) => REDUCES.flatMap((reduce) => [true, false].map((includeSelf) => x.scatterReduce(1, index, s, reduce, { includeSelf }))));
    trace(model, {
      x: [om.randn([3, 5], { seed: 45 }), ['n', null]],
      index: [i64([[4, 0, 4, 1], [2, 2, 2, 0], [1, 3, 0, 3]]), ['n', null]],
      s: [om.randn([3, 4], { seed: 46 }), ['n', null]],
    });
    // along dim 0 with the symbolic size off it, src larger than index
    const rows = moduleOf((x, index, s) => [x.scatterReduce(0, index, s, 'mean'), x.mul(2).scatterReduce(0, index, s, 'amin', { includeSelf: false })]);
    trace(rows, {
      x: [om.randn([4, 3], { seed: 47 }), [null, 'm']],
      index: [i64([[3, 0, 0], [3, 1, 2], [0, 0, 3], [2, 3, 3], [1, 1, 0]]), [null, 'm']],
      s: [om.randn([6, 3], { seed: 48 }), [null, 'm']],
    });
  }));
});
