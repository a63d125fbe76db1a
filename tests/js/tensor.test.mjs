// Tensor creation, reading, and every method's values on small hand-checked examples.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as om from 'onemodel';
import { vals, near, check, memoryHooks, refMatmul, withTraced } from './helpers.mjs';

memoryHooks();

const T = (fn) => () => { om.tidy(fn); };

describe('creation', () => {
  test('nested arrays: shape and dtype inferred', T(() => {
    const t = om.tensor([[1, 2, 3], [4, 5, 6]]);
    assert.deepEqual(t.shape, [2, 3]);
    assert.equal(t.dtype, 'float32');
    assert.equal(t.ndim, 2);
    assert.equal(t.numel(), 6);
    assert.ok(t.toArray() instanceof Float32Array);
    assert.deepEqual(vals(t), [1, 2, 3, 4, 5, 6]);
  }));

  test('scalars make 0-d tensors', T(() => {
    const t = om.tensor(2.5);
    assert.deepEqual(t.shape, []);
    assert.equal(t.ndim, 0);
    assert.equal(t.numel(), 1);
    assert.equal(t.item(), 2.5);
    assert.equal(om.tensor(7n).dtype, 'int64');
    assert.equal(om.tensor(7n).item(), 7);
    assert.equal(om.tensor(true).dtype, 'bool');
    assert.equal(om.tensor(true).item(), 1);
  }));

  test('dtype inference: bigint -> int64, boolean -> bool, typed arrays', T(() => {
    const i = om.tensor([[1n, -2n], [3n, 4n]]);
    assert.equal(i.dtype, 'int64');
    assert.ok(i.toArray() instanceof BigInt64Array);
    assert.deepEqual(Array.from(i.toArray()), [1n, -2n, 3n, 4n]);
    const b = om.tensor([true, false, true]);
    assert.equal(b.dtype, 'bool');
    assert.ok(b.toArray() instanceof Uint8Array);
    assert.deepEqual(Array.from(b.toArray()), [1, 0, 1]);
    assert.equal(om.tensor(new Float64Array([1.5, 2])).dtype, 'float32');
    assert.equal(om.tensor(new Float32Array([1.5, 2])).dtype, 'float32');
    const i32 = om.tensor(new Int32Array([5, -6]));
    assert.equal(i32.dtype, 'int64');
    assert.deepEqual(vals(i32), [5, -6]);
    const bi = om.tensor(new BigInt64Array([9n, 10n]));
    assert.equal(bi.dtype, 'int64');
    assert.deepEqual(vals(bi), [9, 10]);
    const nested = om.tensor([new Float32Array([1, 2]), new Float32Array([3, 4])]);
    check(nested, [2, 2], [1, 2, 3, 4]);
  }));

  test('explicit dtype and shape', T(() => {
    check(om.tensor([1, 2, 3, 4, 5, 6], { shape: [2, 3] }), [2, 3], [1, 2, 3, 4, 5, 6]);
    check(om.tensor(new Float32Array([1, 2, 3, 4]), { shape: [2, 1, 2] }), [2, 1, 2], [1, 2, 3, 4]);
    const l = om.tensor([1.9, -1.9, 3], { dtype: 'int64' });
    assert.equal(l.dtype, 'int64');
    assert.deepEqual(Array.from(l.toArray()), [1n, -1n, 3n]);
    const b = om.tensor([0, 2, -1], { dtype: 'bool' });
    assert.deepEqual(Array.from(b.toArray()), [0, 1, 1]);
    const f = om.tensor([1n, 2n], { dtype: 'float32' });
    assert.equal(f.dtype, 'float32');
    assert.deepEqual(vals(f), [1, 2]);
    check(om.tensor([[1, 2]], { shape: [2] }), [2], [1, 2]);
    check(om.tensor(5, { shape: [1, 1] }), [1, 1], [5]);
  }));

  test('empty tensors', T(() => {
    const e = om.tensor([]);
    assert.deepEqual(e.shape, [0]);
    assert.equal(e.dtype, 'float32');
    assert.equal(e.toArray().length, 0);
    assert.deepEqual(om.tensor([[], []]).shape, [2, 0]);
    assert.deepEqual(om.zeros([3, 0]).shape, [3, 0]);
  }));

  test('toArray returns a fresh copy that survives memory growth', T(() => {
    const t = om.tensor([1, 2, 3]);
    const a = t.toArray();
    a[0] = 100;
    assert.deepEqual(vals(t), [1, 2, 3]);
    const b = t.toArray();
    assert.notEqual(a.buffer, b.buffer);
    // grow the wasm heap (80 MB); arrays read before must stay attached and unchanged
    const big = om.zeros([20_000_000]);
    assert.equal(b.length, 3);
    assert.deepEqual(Array.from(b), [1, 2, 3]);
    big.dispose();
    assert.deepEqual(vals(t), [1, 2, 3]);
  }));

  test('zeros, ones, full', T(() => {
    check(om.zeros([2, 2]), [2, 2], [0, 0, 0, 0]);
    check(om.zeros(3), [3], [0, 0, 0]);
    check(om.ones([1, 3]), [1, 3], [1, 1, 1]);
    assert.equal(om.zeros([2], { dtype: 'int64' }).dtype, 'int64');
    assert.equal(om.ones([2], { dtype: 'bool' }).dtype, 'bool');
    check(om.full([2], 3.5), [2], [3.5, 3.5]);
    assert.equal(om.full([2], true).dtype, 'bool');
    assert.equal(om.full([2], 4n).dtype, 'int64');
    assert.deepEqual(Array.from(om.full([2], 4n).toArray()), [4n, 4n]);
    check(om.full([], 2), [], [2]);
  }));

  test('arange', T(() => {
    // integers give int64, as torch.arange of Python ints; a fractional argument or a dtype gives float32
    check(om.arange(5), [5], [0, 1, 2, 3, 4]);
    assert.equal(om.arange(5).dtype, 'int64');
    assert.equal(om.arange(-3, 4, 2).dtype, 'int64');
    check(om.arange(1, 4), [3], [1, 2, 3]);
    check(om.arange(0, 1, 0.25), [4], [0, 0.25, 0.5, 0.75]);
    assert.equal(om.arange(0, 1, 0.25).dtype, 'float32');
    assert.equal(om.arange(0.5, 3).dtype, 'float32');
    assert.equal(om.arange(5, { dtype: 'float32' }).dtype, 'float32');
    check(om.arange(5, 0, -2), [3], [5, 3, 1]);
    // PyTorch's promotion then makes the ramp float: torch.arange(4) * 0.5
    const half = om.arange(4).mul(0.5);
    assert.equal(half.dtype, 'float32');
    check(half, [4], [0, 0.5, 1, 1.5]);
    // positions straight into an embedding, as ported code writes them (torch.arange(seq_len))
    const emb = om.tensor([[1, 2], [3, 4], [5, 6]]);
    check(om.nn.functional.embedding(om.arange(3), emb), [3, 2], [1, 2, 3, 4, 5, 6]);
    const l = om.arange(3n);
    assert.equal(l.dtype, 'int64');
    assert.deepEqual(Array.from(l.toArray()), [0n, 1n, 2n]);
    assert.equal(om.arange(0, 3, { dtype: 'int64' }).dtype, 'int64');
  }));

  test('arange(T) of a symbolic length traces as PyTorch code writes it: int64 positions, a float ramp by promotion', () => withTraced((keep, trace) => {
    const table = om.randn([16, 4], { seed: 2 });
    // torch: pos = torch.arange(T); x + wpe(pos) + torch.arange(T)[:, None] * 0.5 + torch.arange(0, T, 2).sum()
    const fn = (x) => {
      const T = x.shape[0];
      const pos = om.arange(T);
      assert.equal(pos.dtype, 'int64');
      const ramp = om.arange(T).unsqueeze(1).mul(0.5);
      assert.equal(ramp.dtype, 'float32');
      return x.add(om.nn.functional.embedding(pos, table)).add(ramp).add(om.arange(0, T, 2).sum());
    };
    trace(fn, { x: [om.randn([6, 4], { seed: 3 }), ['t', null]] });
  }));

  test('rand and randn are deterministic with a seed', T(() => {
    const a = om.rand([100], { seed: 42 }).toArray();
    const b = om.rand([100], { seed: 42 }).toArray();
    const c = om.rand([100], { seed: 43 }).toArray();
    assert.deepEqual(a, b);
    assert.notDeepEqual(a, c);
    assert.ok(a.every((v) => v >= 0 && v < 1), 'rand in [0, 1)');
    assert.deepEqual(om.randn([3, 4], { seed: 7n }).toArray(), om.randn([3, 4], { seed: 7 }).toArray());
    // element i depends only on (seed, i): a longer draw starts with the shorter one
    near(om.rand([5], { seed: 9 }).toArray(), om.rand([10], { seed: 9 }).toArray().slice(0, 5), 0);
  }));

  test('manualSeed drives the default generator', T(() => {
    om.manualSeed(7);
    const r1 = om.rand([5]).toArray();
    const r2 = om.rand([5]).toArray();
    om.manualSeed(7);
    const r3 = om.rand([5]).toArray();
    assert.deepEqual(r1, r3);
    assert.notDeepEqual(r1, r2, 'the generator advances');
  }));

  test('randn distribution: mean ~ 0, std ~ 1 over 10k values', T(() => {
    const v = om.randn([10000], { seed: 1 }).toArray();
    const mean = v.reduce((s, x) => s + x, 0) / v.length;
    const std = Math.sqrt(v.reduce((s, x) => s + (x - mean) ** 2, 0) / v.length);
    assert.ok(Math.abs(mean) < 0.05, `mean ${mean}`);
    assert.ok(Math.abs(std - 1) < 0.05, `std ${std}`);
    const u = om.rand([10000], { seed: 2 }).toArray();
    const um = u.reduce((s, x) => s + x, 0) / u.length;
    assert.ok(Math.abs(um - 0.5) < 0.02, `rand mean ${um}`);
    // same numbers via the tensor ops
    const t = om.randn([10000], { seed: 1 });
    near([t.mean().item()], [mean], 1e-4);
  }));

  test('toString', T(() => {
    assert.equal(om.tensor([[1, 2.5]]).toString(), 'tensor([[1., 2.5]], dtype=float32)');
    assert.equal(om.tensor([1n, 2n]).toString(), 'tensor([1, 2], dtype=int64)');
    assert.equal(om.tensor([true, false]).toString(), 'tensor([true, false], dtype=bool)');
    assert.equal(om.tensor(3).toString(), 'tensor(3., dtype=float32)');
    const t = om.zeros([1]);
    t.dispose();
    assert.equal(String(t), 'tensor(<disposed>)');
  }));
});

describe('elementwise', () => {
  test('add with broadcasting, number operands', T(() => {
    const a = om.tensor([[1, 2, 3], [4, 5, 6]]);
    check(a.add(om.tensor([10, 20, 30])), [2, 3], [11, 22, 33, 14, 25, 36]);
    check(a.add(om.tensor([[1], [2]])), [2, 3], [2, 3, 4, 6, 7, 8]);
    check(a.add(1), [2, 3], [2, 3, 4, 5, 6, 7]);
    check(om.tensor([1]).add(om.tensor([[1], [2]])), [2, 1], [2, 3]);
    check(om.tensor(1).add(om.zeros([2, 2])), [2, 2], [1, 1, 1, 1]);
  }));

  test('sub, mul, div, pow', T(() => {
    const a = om.tensor([[1, 2, 3], [4, 5, 6]]);
    check(a.sub(1), [2, 3], [0, 1, 2, 3, 4, 5]);
    check(a.sub(om.tensor([1, 1, 1])), [2, 3], [0, 1, 2, 3, 4, 5]);
    check(a.mul(om.tensor([[2], [3]])), [2, 3], [2, 4, 6, 12, 15, 18]);
    check(a.div(2), [2, 3], [0.5, 1, 1.5, 2, 2.5, 3]);
    check(a.div(a), [2, 3], [1, 1, 1, 1, 1, 1]);
    check(a.pow(2), [2, 3], [1, 4, 9, 16, 25, 36]);
    check(om.tensor([4, 9]).pow(0.5), [2], [2, 3]);
    check(om.tensor([2, 3]).pow(om.tensor([3, 2])), [2], [8, 9]);
  }));

  test('int64 arithmetic stays int64', T(() => {
    const i = om.tensor([1n, 2n, 3n]);
    const r = i.add(3).mul(om.tensor([2n, 2n, 2n])).sub(1n);
    assert.equal(r.dtype, 'int64');
    assert.deepEqual(Array.from(r.toArray()), [7n, 9n, 11n]);
    assert.deepEqual(Array.from(i.neg().toArray()), [-1n, -2n, -3n]);
  }));

  test('unary math', T(() => {
    const x = om.tensor([-2, 0, 3]);
    near(x.neg().toArray(), [2, 0, -3]);
    near(x.abs().toArray(), [2, 0, 3]);
    near(x.sign().toArray(), [-1, 0, 1]);
    near(x.relu().toArray(), [0, 0, 3]);
    near(om.tensor([0, 1]).exp().toArray(), [1, Math.E], 1e-6);
    near(om.tensor([1, Math.E]).log().toArray(), [0, 1], 1e-6);
    near(om.tensor([4, 2]).sqrt().toArray(), [2, Math.SQRT2], 1e-6);
    near(om.tensor([4, 0.25]).rsqrt().toArray(), [0.5, 2], 1e-6);
    near(om.tensor([0, 2, -2]).sigmoid().toArray(), [0.5, 1 / (1 + Math.exp(-2)), 1 / (1 + Math.exp(2))], 1e-6);
    near(om.tensor([0, 1, -1]).tanh().toArray(), [0, Math.tanh(1), -Math.tanh(1)], 1e-6);
  }));

  test('comparisons give bool', T(() => {
    const a = om.tensor([1, 2, 3]);
    const cmp = (t) => { assert.equal(t.dtype, 'bool'); return Array.from(t.toArray()); };
    assert.deepEqual(cmp(a.eq(2)), [0, 1, 0]);
    assert.deepEqual(cmp(a.ne(2)), [1, 0, 1]);
    assert.deepEqual(cmp(a.lt(2)), [1, 0, 0]);
    assert.deepEqual(cmp(a.le(2)), [1, 1, 0]);
    assert.deepEqual(cmp(a.gt(2)), [0, 0, 1]);
    assert.deepEqual(cmp(a.ge(2)), [0, 1, 1]);
    assert.deepEqual(cmp(a.lt(om.tensor([[2], [3]]))), [1, 0, 0, 1, 1, 0]);
    assert.deepEqual(cmp(om.tensor([1n, 5n]).gt(2)), [0, 1]);
  }));

  test('where', T(() => {
    const a = om.tensor([1, 2, 3]);
    check(om.where(a.gt(1), a, 0), [3], [0, 2, 3]);
    check(om.where(a.gt(1), -1, a), [3], [1, -1, -1]);
    check(om.where(om.tensor([[true], [false]]), a, om.tensor([7, 8, 9])), [2, 3], [1, 2, 3, 7, 8, 9]);
    check(om.where(om.tensor([true, false]), 1, 2), [2], [1, 2]);
  }));

  test('casts: to, float, long, bool', T(() => {
    const x = om.tensor([1.7, -1.2, 0]);
    assert.deepEqual(Array.from(x.long().toArray()), [1n, -1n, 0n]);
    assert.deepEqual(Array.from(x.bool().toArray()), [1, 1, 0]);
    assert.equal(x.to('int64').dtype, 'int64');
    check(om.tensor([true, false]).float(), [2], [1, 0]);
    check(om.tensor([3n]).to('float32'), [1], [3]);
    const same = x.float();
    assert.equal(same.dtype, 'float32');
    assert.notEqual(same, x);
  }));
});

describe('views and shapes', () => {
  test('transpose then add (non-contiguous input)', T(() => {
    const x = om.arange(6).reshape(2, 3);
    const xt = x.transpose(0, 1);
    check(xt, [3, 2], [0, 3, 1, 4, 2, 5]);
    check(xt.add(om.ones([3, 2])), [3, 2], [1, 4, 2, 5, 3, 6]);
    check(xt.add(om.tensor([10, 20])), [3, 2], [10, 23, 11, 24, 12, 25]);
    check(xt.contiguous(), [3, 2], [0, 3, 1, 4, 2, 5]);
    check(xt.reshape(6), [6], [0, 3, 1, 4, 2, 5]);
    check(xt.view([2, 3]), [2, 3], [0, 3, 1, 4, 2, 5]);
    check(xt.mul(xt), [3, 2], [0, 9, 1, 16, 4, 25]);
    check(x.transpose(-1, -2), [3, 2], [0, 3, 1, 4, 2, 5]);
  }));

  test('PyTorch\'s other names and function forms of the view ops: swapaxes, swapdims, om.permute, om.transpose, om.unsqueeze', T(() => {
    const x = om.arange(6).reshape(1, 2, 3);
    check(x.swapaxes(-1, -2), [1, 3, 2], [0, 3, 1, 4, 2, 5]);
    check(om.swapaxes(x, 2, 1), [1, 3, 2], [0, 3, 1, 4, 2, 5]);
    check(x.swapdims(0, 2), [3, 2, 1], [0, 3, 1, 4, 2, 5]);
    check(om.swapdims(x, 0, 1), [2, 1, 3], [0, 1, 2, 3, 4, 5]);
    check(om.transpose(x, 1, 2), [1, 3, 2], [0, 3, 1, 4, 2, 5]);
    check(om.permute(x, [2, 0, 1]), [3, 1, 2], [0, 3, 1, 4, 2, 5]);
    check(om.permute(x, 2, 1, 0), [3, 2, 1], [0, 3, 1, 4, 2, 5]);
    check(om.unsqueeze(x, -1), [1, 2, 3, 1], [0, 1, 2, 3, 4, 5]);
    assert.throws(() => x.swapaxes(0, 3), (e) => e.kind === 'IndexOutOfRange' && /^transpose: dim 3 is out of range for 3 dims$/.test(e.message));
    assert.throws(() => om.swapdims(x, -4, 0), (e) => e.kind === 'IndexOutOfRange' && /^transpose: dim -4 is out of range for 3 dims$/.test(e.message));
    assert.throws(() => om.unsqueeze(x, 4), (e) => e.kind === 'IndexOutOfRange' && /unsqueeze/.test(e.message));
    assert.throws(() => om.permute(x, [0, 1]), (e) => e.kind === 'InvalidArgument' && /permute/.test(e.message));
  }));

  test('slice with start, end, step and negatives', T(() => {
    const a = om.arange(10);
    check(a.slice(0, 1, 8, 3), [3], [1, 4, 7]);
    check(a.slice(0, 1, 8, 3).mul(2), [3], [2, 8, 14]);
    check(a.slice(0, -3), [3], [7, 8, 9]);
    check(a.slice(0, 2, 4), [2], [2, 3]);
    check(a.slice(0, 8, 100), [2], [8, 9]);
    check(a.slice(0, null, null, 4), [3], [0, 4, 8]);
    const x = om.arange(6).reshape(2, 3);
    check(x.slice(1, 1), [2, 2], [1, 2, 4, 5]);
    check(x.slice(1, 0, 3, 2).add(x.slice(1, 1, 3)), [2, 2], [1, 4, 7, 10]);
  }));

  test('select', T(() => {
    const x = om.arange(6).reshape(2, 3);
    check(x.select(0, 1), [3], [3, 4, 5]);
    check(x.select(1, -1), [2], [2, 5]);
    check(x.select(0, 0).select(0, 2), [], [2]);
  }));

  test('permute', T(() => {
    const x = om.arange(24).reshape(2, 3, 4);
    const p = x.permute(2, 0, 1);
    assert.deepEqual(p.shape, [4, 2, 3]);
    const expected = [];
    for (let i = 0; i < 4; i++) for (let j = 0; j < 2; j++) for (let k = 0; k < 3; k++) expected.push(j * 12 + k * 4 + i);
    near(p.toArray(), expected, 0);
    near(x.permute([0, 2, 1]).contiguous().toArray(), x.transpose(1, 2).toArray(), 0);
  }));

  test('expand', T(() => {
    const c = om.tensor([[1], [2]]);
    check(c.expand(2, 3), [2, 3], [1, 1, 1, 2, 2, 2]);
    check(c.expand([-1, 3]), [2, 3], [1, 1, 1, 2, 2, 2]);
    check(c.expand(2, 2, 3), [2, 2, 3], [1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2]);
    check(om.tensor(5).expand(2), [2], [5, 5]);
  }));

  test('squeeze and unsqueeze', T(() => {
    const z = om.zeros([1, 3, 1]);
    assert.deepEqual(z.squeeze().shape, [3]);
    assert.deepEqual(z.squeeze(0).shape, [3, 1]);
    assert.deepEqual(z.squeeze([0, 2]).shape, [3]);
    assert.deepEqual(z.squeeze(-1).shape, [1, 3]);
    const v = om.tensor([1, 2, 3]);
    check(v.unsqueeze(0), [1, 3], [1, 2, 3]);
    check(v.unsqueeze(1), [3, 1], [1, 2, 3]);
    check(v.unsqueeze(-1), [3, 1], [1, 2, 3]);
  }));

  test('reshape and view', T(() => {
    const a = om.arange(6);
    check(a.reshape([3, -1]), [3, 2], [0, 1, 2, 3, 4, 5]);
    check(a.reshape(-1, 2, 1), [3, 2, 1], [0, 1, 2, 3, 4, 5]);
    check(a.view(2, 3), [2, 3], [0, 1, 2, 3, 4, 5]);
    check(om.tensor([5]).reshape([]), [], [5]);
    check(om.tensor(5).view(1, 1), [1, 1], [5]);
  }));

  test('flatten', T(() => {
    const z = om.zeros([2, 3, 4]);
    assert.deepEqual(z.flatten().shape, [24]);
    assert.deepEqual(z.flatten(1).shape, [2, 12]);
    assert.deepEqual(z.flatten(0, 1).shape, [6, 4]);
    assert.deepEqual(z.flatten(-2, -1).shape, [2, 12]);
    assert.deepEqual(om.tensor(3).flatten().shape, [1]);
    check(om.arange(6).reshape(2, 3).transpose(0, 1).flatten(), [6], [0, 3, 1, 4, 2, 5]);
  }));

  test('clone copies, detach shares storage', T(() => {
    const x = om.tensor([[1, 2], [3, 4]]);
    const c = x.clone();
    c.fill_(0);
    check(x, [2, 2], [1, 2, 3, 4]);
    const d = x.detach();
    d.set_([0, 0], 100);
    check(x, [2, 2], [100, 2, 3, 4]);
    const v = x.transpose(0, 1);
    x.set_([0, 1], -5);
    check(v, [2, 2], [100, 3, -5, 4]);
  }));

  test('split, cat, stack', T(() => {
    const parts = om.arange(5).split(2);
    assert.equal(parts.length, 3);
    check(parts[0], [2], [0, 1]);
    check(parts[1], [2], [2, 3]);
    check(parts[2], [1], [4]);
    const x = om.arange(6).reshape(2, 3);
    const [l, r] = x.split(2, 1);
    check(l, [2, 2], [0, 1, 3, 4]);
    check(r, [2, 1], [2, 5]);
    assert.equal(x.split(5, -1).length, 1);
    check(om.cat([l, r], 1), [2, 3], [0, 1, 2, 3, 4, 5]);
    const a = om.tensor([[1, 2]]), b = om.tensor([[3, 4], [5, 6]]);
    check(om.cat([a, b]), [3, 2], [1, 2, 3, 4, 5, 6]);
    check(om.cat([a, a, a], -1), [1, 6], [1, 2, 1, 2, 1, 2]);
    const u = om.tensor([1, 2]), w = om.tensor([3, 4]);
    check(om.stack([u, w]), [2, 2], [1, 2, 3, 4]);
    check(om.stack([u, w], 1), [2, 2], [1, 3, 2, 4]);
    check(om.stack([u, w], -1), [2, 2], [1, 3, 2, 4]);
  }));

  test('split by a list of sizes, chunk (PyTorch\'s ceil(n / chunks) rule), unbind, and their function forms', T(() => {
    const x = om.arange(10).reshape(2, 5);
    const [a, e, b] = x.split([2, 0, 3], 1); // torch.split(x, [2, 0, 3], 1): an empty piece is kept
    check(a, [2, 2], [0, 1, 5, 6]);
    assert.deepEqual(e.shape, [2, 0]);
    check(b, [2, 3], [2, 3, 4, 7, 8, 9]);
    assert.deepEqual(om.split(x, [1n, 4n], -1).map((t) => t.shape), [[2, 1], [2, 4]]); // bigints too
    assert.deepEqual(om.split(x, 2, 1).map((t) => t.shape), [[2, 2], [2, 2], [2, 1]]);
    // chunk: ceil(5 / 3) = 2 per piece; 5 in 4 chunks is also 2, 2, 1 (fewer pieces than asked);
    // 6 in 4 is 2, 2, 2; an empty dim gives that many empty pieces
    assert.deepEqual(x.chunk(3, 1).map((t) => t.shape[1]), [2, 2, 1]);
    assert.deepEqual(x.chunk(4, 1).map((t) => t.shape[1]), [2, 2, 1]);
    assert.deepEqual(om.arange(6).chunk(4).map((t) => t.shape[0]), [2, 2, 2]);
    assert.deepEqual(om.chunk(x, 5).map((t) => t.shape), [[1, 5], [1, 5]]);
    assert.deepEqual(om.zeros([0, 3]).chunk(3).map((t) => t.shape), [[0, 3], [0, 3], [0, 3]]);
    check(x.chunk(3, 1)[2], [2, 1], [4, 9]);
    const rows = x.unbind();
    assert.equal(rows.length, 2);
    check(rows[1], [5], [5, 6, 7, 8, 9]);
    assert.deepEqual(om.unbind(x, -1).map((t) => vals(t)), [[0, 5], [1, 6], [2, 7], [3, 8], [4, 9]]);
    // views: a write through the piece shows in x
    const [first] = x.split([1, 1]);
    first.set_([0, 0], 42);
    assert.equal(vals(x)[0], 42);
    // gradients flow back into the parts the pieces cover
    const w = om.ones([6]);
    w.requiresGrad = true;
    const [p, q, r] = w.split([1, 2, 3]);
    const [c0, c1] = w.chunk(2);
    p.mul(2).sum().add(q.mul(3).sum()).add(r.sum()).add(c0.sum()).add(c1.mul(-1).sum()).backward();
    check(w.grad, [6], [3, 4, 4, -0, 0, 0]);
    const [u0, u1] = w.reshape(3, 2).unbind(1);
    u0.sum().add(u1.mul(5).sum()).backward();
    check(w.grad, [6], [4, 9, 5, 5, 1, 5]);
    // the functions torch.tril / triu / flatten
    check(om.tril(om.ones([3, 3])), [3, 3], [1, 0, 0, 1, 1, 0, 1, 1, 1]);
    check(om.triu(om.ones([2, 3]), 1), [2, 3], [0, 1, 1, 0, 0, 1]);
    assert.deepEqual(om.flatten(om.zeros([2, 3, 4]), 1).shape, [2, 12]);
  }));

  test('addmm: beta * input + alpha * (mat1 @ mat2), as torch.addmm (Hugging Face\'s Conv1D)', T(() => {
    const m1 = om.tensor([[1, 2], [3, 4], [5, 6]]), m2 = om.tensor([[1, 0, 2], [0, 1, 3]]), bias = om.tensor([10, 20, 30]);
    check(om.addmm(bias, m1, m2), [3, 3], [11, 22, 38, 13, 24, 48, 15, 26, 58]);
    check(om.addmm(bias, m1, m2, { beta: 0.5, alpha: 2 }), [3, 3], [7, 14, 31, 11, 18, 51, 15, 22, 71]);
    check(om.addmm(om.tensor([NaN]), m1, m2, { beta: 0 }), [3, 3], [1, 2, 8, 3, 4, 18, 5, 6, 28]); // beta 0 ignores input
    const w = om.randn([2, 3], { seed: 1 });
    w.requiresGrad = true;
    om.addmm(bias, m1, w).sum().backward();
    check(w.grad, [2, 3], [9, 9, 9, 12, 12, 12]);
    const bad = (fn, kind, re) => assert.throws(fn, (err) => err instanceof om.OmError && err.kind === kind && re.test(err.message));
    bad(() => om.addmm(bias, om.ones([3]), m2), 'ShapeMismatch', /^addmm: mat1 must be a matrix, got a 1-D tensor/);
    bad(() => om.addmm(bias, m1, om.ones([2, 3, 1])), 'ShapeMismatch', /^addmm: mat2 must be a matrix, got a 3-D tensor/);
    bad(() => om.addmm(bias, m1, m1), 'ShapeMismatch', /^matmul: shapes \[3,2\] and \[3,2\] do not match/);
    bad(() => om.addmm(om.ones([2]), m1, m2), 'ShapeMismatch', /^add: /);
    bad(() => om.addmm(bias, m1, m2, { beta: '1' }), 'InvalidArgument', /^addmm: beta must be a number/);
    bad(() => om.addmm(bias, m1, m2, { gamma: 1 }), 'InvalidArgument', /^addmm: unknown option 'gamma'/);
    bad(() => om.addmm(null, m1, m2), 'InvalidArgument', /^addmm: input must be a Tensor/);
  }));

  test('tril and triu', T(() => {
    const m = om.arange(9).reshape(3, 3);
    check(m.tril(), [3, 3], [0, 0, 0, 3, 4, 0, 6, 7, 8]);
    check(m.tril(-1), [3, 3], [0, 0, 0, 3, 0, 0, 6, 7, 0]);
    check(m.tril(1), [3, 3], [0, 1, 0, 3, 4, 5, 6, 7, 8]);
    check(m.triu(), [3, 3], [0, 1, 2, 0, 4, 5, 0, 0, 8]);
    check(m.triu(1), [3, 3], [0, 1, 2, 0, 0, 5, 0, 0, 0]);
    check(om.ones([2, 2, 3]).triu(), [2, 2, 3], [1, 1, 1, 0, 1, 1, 1, 1, 1, 0, 1, 1]);
  }));
});

describe('reductions', () => {
  const X = () => om.tensor([[1, 2, 3], [4, 5, 6]]);

  test('sum of a bool tensor counts its trues, as int64 (PyTorch\'s); traced, a Cast before the ReduceSum', () => withTraced((keep) => {
    const m = om.tensor([[true, false, true], [false, false, true]]);
    for (const [y, shape, want] of [[m.sum(), [], [3n]], [m.sum(1), [2], [2n, 1n]], [m.sum(0, true), [1, 3], [1n, 0n, 2n]]]) {
      assert.equal(y.dtype, 'int64');
      assert.deepEqual([y.shape, [...y.toArray()]], [shape, want]);
    }
    const count = (x) => x.gt(0).sum(1);
    const x = om.tensor([[1, -1, 2, 3, -4], [0, 1, 1, 1, 1]]);
    const tm = om.trace(count, { x: [x, ['batch', 'n']] });
    assert.deepEqual(tm.graph().nodes.map((n) => n.opType), ['Greater', 'Cast', 'ReduceSum']);
    keep(tm, { x }, count(x), 'the count', count);
  }));

  test('sum with dims and keepdim', T(() => {
    const x = X();
    check(x.sum(), [], [21]);
    check(x.sum(0), [3], [5, 7, 9]);
    check(x.sum(1), [2], [6, 15]);
    check(x.sum(-1, true), [2, 1], [6, 15]);
    check(x.sum(0, true), [1, 3], [5, 7, 9]);
    check(x.sum([0, 1]), [], [21]);
    check(x.sum([0, 1], true), [1, 1], [21]);
    check(x.sum(null, true), [1, 1], [21]);
    check(x.transpose(0, 1).sum(1), [3], [5, 7, 9]);
    assert.deepEqual(Array.from(om.tensor([[1n, 2n], [3n, 4n]]).sum(0).toArray()), [4n, 6n]);
  }));

  test('mean, amax, amin', T(() => {
    const x = X();
    check(x.mean(), [], [3.5]);
    check(x.mean(0), [3], [2.5, 3.5, 4.5]);
    check(x.mean(1, true), [2, 1], [2, 5]);
    check(x.amax(), [], [6]);
    check(x.amax(1), [2], [3, 6]);
    check(x.amax(0, true), [1, 3], [4, 5, 6]);
    check(x.amin(0), [3], [1, 2, 3]);
    check(x.amin([0, 1]), [], [1]);
  }));

  test('max and min: all dims, or [values, indices] along a dim', T(() => {
    const x = om.tensor([[1, 5, 2], [7, 0, 3]]);
    check(x.max(), [], [7]);
    check(x.min(), [], [0]);
    const [v, i] = x.max(1);
    check(v, [2], [5, 7]);
    assert.equal(i.dtype, 'int64');
    assert.deepEqual(Array.from(i.toArray()), [1n, 0n]);
    const [mv, mi] = x.min(0, true);
    check(mv, [1, 3], [1, 0, 2]);
    assert.deepEqual(mi.shape, [1, 3]);
    assert.deepEqual(Array.from(mi.toArray()), [0n, 1n, 0n]);
    const [tv, ti] = om.tensor([1, 3, 3]).max(0);
    check(tv, [], [3]);
    assert.equal(ti.item(), 1, 'first maximum');
  }));

  test('argmax and argmin', T(() => {
    const x = om.tensor([[1, 5, 2], [7, 0, 3]]);
    assert.deepEqual(Array.from(x.argmax(1).toArray()), [1n, 0n]);
    assert.deepEqual(Array.from(x.argmin(0).toArray()), [0n, 1n, 0n]);
    assert.deepEqual(x.argmax(1, true).shape, [2, 1]);
    const flat = x.argmax();
    assert.deepEqual(flat.shape, []);
    assert.equal(flat.item(), 3);
    assert.equal(x.argmin().item(), 4);
    assert.deepEqual(x.argmax(null, true).shape, [1, 1]);
  }));
});

describe('empty tensors (PyTorch): what a zero-size axis reduces to', () => {
  const throwsKind = (fn, kind, re) => assert.throws(fn, (e) => e instanceof om.OmError && e.kind === kind && re.test(e.message));
  const leaf = (t) => { t.requiresGrad = true; return t; };

  test('a sum of nothing is 0, a mean NaN, an extreme has none; gradients of the right shapes', T(() => {
    const x = leaf(om.zeros([2, 0, 3]));
    check(x.sum(1), [2, 3], [0, 0, 0, 0, 0, 0]);
    check(x.sum(), [], [0]);
    assert.deepEqual(vals(x.mean(1)), Array(6).fill(NaN));
    assert.ok(Number.isNaN(x.mean().item()));
    check(x.sum(2), [2, 0], []); // reducing a non-empty axis of an empty tensor: empty
    check(x.amax(2), [2, 0], []);
    throwsKind(() => x.amax(1), 'InvalidArgument', /amax: dim 1 has size 0 and no maximum/);
    throwsKind(() => x.amin(), 'InvalidArgument', /amin: dim 1 has size 0 and no minimum/);
    throwsKind(() => x.max(1), 'InvalidArgument', /max: dim 1 has size 0 and no maximum/);
    x.sum(1).mul(om.ones([2, 3])).sum().add(x.mean(2).sum()).backward();
    assert.deepEqual(x.grad.shape, [2, 0, 3]);
  }));

  test('a product over 0 terms is 0; a linear layer of 0 input features gives its bias, with gradients', T(() => {
    const a = om.zeros([3, 0]), b = om.zeros([0, 2]);
    check(a.matmul(b), [3, 2], [0, 0, 0, 0, 0, 0]);
    const w = leaf(om.zeros([2, 0])), bias = leaf(om.tensor([1.5, -2]));
    const y = om.nn.functional.linear(om.zeros([2, 3, 0]), w, bias);
    check(y, [2, 3, 2], [1.5, -2, 1.5, -2, 1.5, -2, 1.5, -2, 1.5, -2, 1.5, -2]);
    y.sum().backward();
    check(bias.grad, [2], [6, 6]);
    assert.deepEqual(w.grad.shape, [2, 0]);
    check(om.nn.functional.linear(om.zeros([0, 4]), om.ones([3, 4]), bias.detach().slice(0, 0, 1).expand(3)), [0, 3], []);
  }));
});

describe('matmul', () => {
  test('2-D', T(() => {
    const a = om.tensor([[1, 2], [3, 4]]), b = om.tensor([[5, 6], [7, 8]]);
    check(a.matmul(b), [2, 2], [19, 22, 43, 50]);
    check(om.matmul(a, b), [2, 2], [19, 22, 43, 50]);
    check(om.tensor([[1, 2, 3]]).matmul(om.tensor([[1], [2], [3]])), [1, 1], [14]);
  }));

  test('1-D operands', T(() => {
    const m = om.tensor([[1, 2], [3, 4]]);
    check(om.tensor([1, 2]).matmul(om.tensor([3, 4])), [], [11]);
    check(m.matmul(om.tensor([1, 1])), [2], [3, 7]);
    check(om.tensor([1, 1]).matmul(m), [2], [4, 6]);
  }));

  test('batched with broadcasting', T(() => {
    const a = om.tensor([[[1, 0], [0, 1]], [[2, 0], [0, 2]]]);
    const b = om.tensor([[1, 2], [3, 4]]);
    check(a.matmul(b), [2, 2, 2], [1, 2, 3, 4, 2, 4, 6, 8]);
    const as = [2, 1, 2, 3], bs = [3, 3, 2];
    const av = Array.from({ length: 12 }, (_, i) => i - 5);
    const bv = Array.from({ length: 18 }, (_, i) => (i % 7) - 3);
    const ref = refMatmul(av, as, bv, bs);
    const r = om.tensor(av, { shape: as }).matmul(om.tensor(bv, { shape: bs }));
    check(r, ref.shape, ref.values);
    // non-contiguous operand
    const t = om.tensor(bv, { shape: [3, 2, 3] }).transpose(1, 2);
    const ref2 = refMatmul(av, as, vals(t.contiguous()), [3, 3, 2]);
    check(om.tensor(av, { shape: as }).matmul(t), ref2.shape, ref2.values);
  }));
});

describe('in place', () => {
  test('set_, fill_, copy_ and the version counter', T(() => {
    const z = om.zeros([2, 2]);
    const v0 = z.version;
    assert.equal(z.set_([0, 1], 5), z);
    check(z, [2, 2], [0, 5, 0, 0]);
    assert.ok(z.version > v0, 'set_ bumps the version');
    const v1 = z.version;
    z.fill_(2);
    check(z, [2, 2], [2, 2, 2, 2]);
    assert.ok(z.version > v1);
    z.copy_(om.tensor([1, 2]));
    check(z, [2, 2], [1, 2, 1, 2]);
    z.copy_(om.tensor([[7n, 8n], [9n, 10n]]));
    check(z, [2, 2], [7, 8, 9, 10]);
    z.copy_(3);
    check(z, [2, 2], [3, 3, 3, 3]);
    z.set_([1, 1], 1);
    check(z, [2, 2], [3, 3, 3, 1]);
    const b = om.zeros([2], { dtype: 'bool' });
    b.set_([1], true);
    assert.deepEqual(Array.from(b.toArray()), [0, 1]);
  }));
});

describe('creation options', () => {
  test('requiresGrad: true makes a leaf that records (torch.tensor(..., requires_grad=True)); int64 refuses it', () => om.tidy(() => {
    const x = om.tensor([0.5, -2], { requiresGrad: true }), r = om.randn([2], { seed: 3, requiresGrad: true });
    assert.deepEqual([x.requiresGrad, x.isLeaf, r.requiresGrad, om.zeros([2]).requiresGrad, om.ones([2], { requiresGrad: false }).requiresGrad], [true, true, true, false, false]);
    x.mul(x).sum().backward();
    assert.deepEqual(vals(x.grad), [1, -4]);
    assert.throws(() => om.arange(3, { requiresGrad: true }), (e) => e instanceof om.OmError && e.kind === 'DtypeMismatch' && /int64/.test(e.message));
  }));
  test('an unknown option is InvalidArgument naming it and the known ones, never ignored', () => {
    for (const [call, re] of [
      [() => om.tensor([1, 2], { dtpye: 'int64' }), /^tensor: unknown option 'dtpye' \(dtype, shape, requiresGrad\)/],
      [() => om.zeros([2], { requires_grad: true }), /^zeros: unknown option 'requires_grad' \(dtype, requiresGrad\)/],
      [() => om.full([2], 1, { device: 'cpu' }), /^full: unknown option 'device'/],
      [() => om.arange(0, 3, { dtpye: 'float32' }), /^arange: unknown option 'dtpye'/],
      [() => om.randn([2], { sed: 1 }), /^randn: unknown option 'sed' \(dtype, seed, requiresGrad\)/],
      [() => om.zerosLike(om.ones([2]), { seed: 1 }), /^zerosLike: unknown option 'seed' \(dtype, requiresGrad\)/],
    ]) assert.throws(() => om.tidy(call), (e) => e instanceof om.OmError && e.kind === 'InvalidArgument' && re.test(e.message), String(re));
  });
});
