// PyTorch's Tensor methods and torch functions composed of the library's ops (js/ops/like.js,
// reduce.js, act.js, linalg.js): values on inputs whose results are known exactly, gradients
// against central differences, traced graphs with symbolic axes in onnxruntime-web and the
// Session at other sizes, and each error's kind and message.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as om from 'onemodel';
import { check, near, vals, throwsKind, gradcheck, memoryHooks, moduleOf, withTraced } from './helpers.mjs';

memoryHooks();
const F = om.nn.functional;

describe('shape and dtype from another tensor, new tensors of its dtype', () => {
  test('expandAs, viewAs, reshapeAs, typeAs', () => om.tidy(() => {
    const x = om.tensor([[1, 2, 3, 4], [5, 6, 7, 8]]);
    check(om.tensor([[1], [2]]).expandAs(x), [2, 4], [1, 1, 1, 1, 2, 2, 2, 2]);
    check(x.viewAs(om.zeros([4, 2])), [4, 2], [1, 2, 3, 4, 5, 6, 7, 8]);
    check(x.t().reshapeAs(om.zeros([8])), [8], [1, 5, 2, 6, 3, 7, 4, 8]);
    const i = x.typeAs(om.tensor([1n]));
    assert.equal(i.dtype, 'int64');
    assert.deepEqual(vals(i), [1, 2, 3, 4, 5, 6, 7, 8]);
  }));

  test('newZeros, newOnes, newFull, newTensor: this dtype unless the options say another', () => om.tidy(() => {
    const f = om.zeros([1]), l = om.tensor([1n]);
    assert.equal(f.newZeros([2, 3]).dtype, 'float32');
    check(l.newOnes([2]), [2], [1, 1]);
    assert.equal(l.newOnes([2]).dtype, 'int64');
    check(f.newFull([2], 7), [2], [7, 7]);
    assert.equal(f.newFull([1], 1, { dtype: 'bool' }).dtype, 'bool');
    assert.equal(l.newTensor([3, 4]).dtype, 'int64');
    assert.equal(f.dim(), 1);
    assert.equal(om.zeros([2, 3]).numel(), 6);
  }));

  test('errors: other not a tensor, options not an object', () => {
    throwsKind(() => om.zeros([2]).expandAs([2]), 'InvalidArgument', /^expandAs: other must be a Tensor/);
    throwsKind(() => om.zeros([2]).typeAs('int64'), 'InvalidArgument', /^typeAs: other must be a Tensor/);
    throwsKind(() => om.zeros([2]).newZeros([2], 'int64'), 'InvalidArgument', /^newZeros: options must be an object, got a string/);
    throwsKind(() => om.zeros([2, 3]).viewAs(om.zeros([5])), 'ShapeMismatch', /element counts differ, cannot reshape \[2,3\] to \[5\]/);
  });

  test("Swin's attn_mask = x.new_zeros((Hp, Wp)) filled in place, traced with symbolic H: right at other sizes", async () => {
    await withTraced((keep) => {
      const model = moduleOf((x) => {
        const H = x.shape[1];
        const m = x.newZeros([H, 4]);
        m.slice(0, -2).fill_(1);
        return x.add(m).add(om.ones([1, 4]).expandAs(x));
      });
      const x = om.randn([2, 7, 4], { seed: 1 });
      keep(om.trace(model, { x: [x, ['b', 'H', null]] }), { x }, model.forward(x), undefined, model);
    });
  });
});

describe('var, std, all, any, logsumexp', () => {
  const x = () => om.tensor([[1, 2, 3, 4], [2, 2, 2, 10]]);

  test("PyTorch's keyword unbiased in the options is correction 1 or 0 (x.var(-1, keepdim=True, unbiased=False) in ports)", () => om.tidy(() => {
    for (const [u, c] of [[false, 0], [true, 1]]) {
      assert.deepEqual([...x().var(-1, { unbiased: u, keepdim: true }).toArray()], [...x().var(-1, { correction: c, keepdim: true }).toArray()]);
      assert.deepEqual([...x().std(0, { unbiased: u }).toArray()], [...x().std(0, u).toArray()]);
    }
  }));
  test('var and std: unbiased by default, correction and keepdim as options, over all dims', () => om.tidy(() => {
    near(vals(x().var(1)), [5 / 3, 16], 1e-6);
    near(vals(om.var(x(), 1, false)), [1.25, 12], 1e-6);
    check(x().var(1, { correction: 0, keepdim: true }), [2, 1], [1.25, 12]);
    near(vals(x().var()), [57.5 / 7], 1e-5); // mean 3.25; squared deviations sum to 57.5
    const all = x().var([0, 1]);
    assert.deepEqual(all.shape, []);
    near(vals(all), [57.5 / 7], 1e-5);
    near(vals(x().std(1, false)), [Math.sqrt(1.25), Math.sqrt(12)], 1e-6);
    near(vals(om.tensor([5]).var()), [NaN]); // N - 1 = 0: NaN, as PyTorch
  }));

  test('all and any: bool over dims, true and false over nothing', () => om.tidy(() => {
    assert.deepEqual(vals(x().gt(2).any(1)), [1, 1]);
    assert.deepEqual(vals(x().gt(1).all(1)), [0, 1]);
    assert.deepEqual(vals(om.all(x(), 0, true)), [1, 1, 1, 1]);
    assert.equal(x().all().dtype, 'bool');
    assert.deepEqual(vals(om.zeros([0]).all()), [1]);
    assert.deepEqual(vals(om.zeros([0]).any()), [0]);
    assert.deepEqual(vals(om.tensor([0n, 3n]).any()), [1]);
  }));

  test('logsumexp: shifted by the max, -inf rows stay -inf, +inf gives +inf', () => om.tidy(() => {
    const big = om.tensor([[1000, 1000], [-Infinity, -Infinity], [Infinity, 0]]);
    const r = vals(big.logsumexp(1));
    near([r[0]], [1000 + Math.log(2)], 1e-4);
    assert.deepEqual(r.slice(1), [-Infinity, Infinity]);
    near(vals(x().logsumexp(1)), [Math.log(Math.E + Math.E ** 2 + Math.E ** 3 + Math.E ** 4), Math.log(3 * Math.E ** 2 + Math.E ** 10)], 1e-4);
    assert.deepEqual(x().logsumexp([0, 1], true).shape, [1, 1]);
  }));

  test('gradients against central differences', () => om.tidy(() => {
    gradcheck((t) => t.var(1), om.randn([3, 4], { seed: 3 }));
    gradcheck((t) => t.std(0, { correction: 0 }), om.randn([3, 4], { seed: 4 }));
    gradcheck((t) => t.logsumexp(1), om.randn([3, 4], { seed: 5 }));
  }));

  test('errors', () => {
    throwsKind(() => x().var(1, { ddof: 1 }), 'InvalidArgument', /^var: unknown option 'ddof' \(correction, unbiased, keepdim\)/);
    throwsKind(() => x().std(1, { unbiased: false, correction: 0 }), 'InvalidArgument', /^std: give correction or unbiased, not both/);
    throwsKind(() => x().var(1, { unbiased: 'no' }), 'InvalidArgument', /^var: unbiased must be/);
    throwsKind(() => x().var(1, { correction: 1 }, true), 'InvalidArgument', /^var: keepdim goes in the options object/);
    throwsKind(() => om.tensor([1n]).std(), 'DtypeMismatch', /^std: input must be float32, not int64 \(call \.float\(\) first\)/);
    throwsKind(() => x().var(2), 'IndexOutOfRange', /^var: dim 2 is out of range for a tensor of 2 dims/);
    throwsKind(() => x().logsumexp(), 'InvalidArgument', /^logsumexp: dim is required/);
  });
});

describe('norm, normalize, square, isnan, isinf, isfinite', () => {
  test('norm: 2 and fro, 1, inf, -inf, 0 and p = 3 over dims', () => om.tidy(() => {
    const x = om.tensor([[3, -4, 0], [1, 2, 2]]);
    near(vals(x.norm(2, 1)), [5, 3]);
    near(vals(x.norm()), [Math.sqrt(34)], 1e-5);
    near(vals(om.norm(x, 1, 1)), [7, 5]);
    check(x.norm(Infinity, 1, true), [2, 1], [4, 2]);
    near(vals(x.norm(-Infinity, 0)), [1, 2, 0]);
    near(vals(x.norm(0, 1)), [2, 3]);
    near(vals(x.norm(3, 1)), [Math.cbrt(91), Math.cbrt(17)], 1e-5);
  }));

  test('a zero norm has a zero gradient (as PyTorch), others against central differences', () => om.tidy(() => {
    const z = om.zeros([2, 3]);
    z.requiresGrad = true;
    z.norm(2, 1).sum().backward();
    assert.deepEqual(vals(z.grad), [0, 0, 0, 0, 0, 0]);
    gradcheck((t) => t.norm(2, 1), om.randn([2, 3], { seed: 5 }));
    gradcheck((t) => F.normalize(t, { dim: 1 }), om.randn([2, 3], { seed: 6 }));
  }));

  test('F.normalize divides by max(norm, eps)', () => om.tidy(() => {
    check(F.normalize(om.tensor([[3, 4], [0, 0]]), { dim: 1 }), [2, 2], [0.6, 0.8, 0, 0]);
    check(F.normalize(om.tensor([[1, 1], [1, 1]]), { p: 1, dim: 0 }), [2, 2], [0.5, 0.5, 0.5, 0.5]);
  }));

  test('square, isnan, isinf, isfinite', () => om.tidy(() => {
    const x = om.tensor([1.5, NaN, Infinity, -Infinity, -2]);
    assert.deepEqual(vals(x.square()), [2.25, NaN, Infinity, Infinity, 4]);
    assert.deepEqual(vals(om.isnan(x)), [0, 1, 0, 0, 0]);
    assert.deepEqual(vals(x.isinf()), [0, 0, 1, 1, 0]);
    assert.deepEqual(vals(x.isfinite()), [1, 0, 0, 0, 1]);
    assert.deepEqual(vals(om.tensor([1n]).isinf()), [0]);
    assert.deepEqual(vals(om.tensor([1n]).isfinite()), [1]);
  }));

  test('errors', () => {
    throwsKind(() => om.zeros([2]).norm(-1), 'InvalidArgument', /^norm: p must be 'fro', a number >= 0, Infinity or -Infinity, got -1/);
    throwsKind(() => om.zeros([2]).norm(2, 0, 1), 'InvalidArgument', /^norm: keepdim must be a boolean, got 1/);
    throwsKind(() => om.tensor([1n]).norm(), 'DtypeMismatch', /^norm: input must be float32, not int64/);
    throwsKind(() => F.normalize(om.zeros([2, 2]), { eps: -1 }), 'InvalidArgument', /^normalize: eps must be a number >= 0, got -1/);
    throwsKind(() => F.normalize(om.zeros([2, 2]), { axis: 1 }), 'InvalidArgument', /^normalize: unknown option 'axis'/);
  });
});

describe('bmm, outer, dot', () => {
  test('values', () => om.tidy(() => {
    check(om.bmm(om.ones([2, 2, 3]), om.arange(6).float().reshape(2, 3, 1)), [2, 2, 1], [3, 3, 12, 12]);
    check(om.outer(om.arange(3).float(), om.tensor([1, 10])), [3, 2], [0, 0, 1, 10, 2, 20]);
    check(om.tensor([1, 2]).dot(om.tensor([3, 4])), [], [11]);
  }));

  test('errors: ranks and sizes', () => {
    throwsKind(() => om.bmm(om.ones([2, 2, 3]), om.ones([3, 3, 1])), 'ShapeMismatch', /^bmm: batch sizes differ: \[2,2,3\] and \[3,3,1\] \(bmm does not broadcast; matmul does\)/);
    throwsKind(() => om.bmm(om.ones([2, 3]), om.ones([3, 1])), 'ShapeMismatch', /^bmm: input and mat2 must be 3-D/);
    throwsKind(() => om.outer(om.ones([2, 1]), om.ones([2])), 'ShapeMismatch', /^outer: both must be 1-D/);
    throwsKind(() => om.dot(om.ones([2]), om.ones([3])), 'ShapeMismatch', /^dot: two 1-D tensors of one size/);
  });
});

test('traced with symbolic axes: the composites right at other sizes in onnxruntime-web and the Session', async () => {
  await withTraced((keep) => {
    const model = moduleOf((x) => {
      const [B, T] = x.shape;
      const pos = om.arange(T).float();
      const ang = om.outer(pos, om.tensor([1, 0.5, 0.25, 0.125])); // [T, 4], rotary angles
      const v = x.var(1, true, true).add(x.std(-1, { correction: 0, keepdim: true }).mean(1, true));
      const n = F.normalize(x.add(ang), { dim: -1 });
      const s = om.bmm(n, n.transpose(1, 2)).logsumexp(-1, true); // [B, T, 1]
      const flags = x.isfinite().all(-1, true).float().add(x.gt(1).any(-1, true).float());
      return n.mul(v).add(s).add(flags).add(x.square().norm(2, -1, true)).reshape(B, T * 4);
    });
    const x = om.randn([2, 5, 4], { seed: 2 });
    keep(om.trace(model, { x: [x, ['b', 'T', null]] }), { x }, model.forward(x), undefined, model);
  });
});
