// PyTorch's keyword arguments as a trailing options object on the reductions, split and chunk
// (x.sum(dim=-1, keepdim=True) is x.sum({ dim: -1, keepdim: true })), torch.scatter, and
// torch.finfo / iinfo, as Hugging Face's and torchvision's code calls them. Values against PyTorch:
// tests/js/audit-ops28.test.mjs (reduce_kw, split_kw, chunk_kw, scatter cases of
// tools/pytorch_audit.py); here the error paths, gradients, the traced graph in onnxruntime-web and
// the Session, and finfo's limits.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as om from 'onemodel';
import { memoryHooks, vals, throwsKind, withTraced, gradcheck, moduleOf } from './helpers.mjs';

memoryHooks();
const i64 = (a, shape) => om.tensor(a, { dtype: 'int64', shape });

describe('keyword arguments', () => {
  test('by name, by position or both give the same values; a method and its function agree', () => om.tidy(() => {
    const x = om.randn([3, 4, 2], { seed: 1 });
    const same = (a, b, what) => assert.deepEqual(vals(a), vals(b), what);
    for (const fn of ['sum', 'mean', 'amax', 'amin', 'prod', 'logsumexp']) {
      same(x[fn]({ dim: [0, -1], keepdim: true }), x[fn]([0, -1], true), `${fn} by name`);
      same(x[fn](1, { keepdim: true }), x[fn](1, true), `${fn} keepdim by name`);
      same(om[fn](x, { keepdim: false, dim: -2 }), x[fn](-2), `om.${fn} by name`);
    }
    for (const fn of ['max', 'min']) {
      const [v, i] = x[fn]({ dim: 1, keepdim: true }), [w, j] = x[fn](1, true);
      same(v, w, `${fn} values`);
      same(i, j, `${fn} indices`);
    }
    same(x.argmax({ dim: -1 }), x.argmax(-1), 'argmax');
    same(om.argmin(x, { dim: 0, keepdim: true }), x.argmin(0, true), 'argmin');
    const b = x.gt(0);
    same(b.all({ dim: 1 }), b.all(1), 'all');
    same(om.any(b, { dim: [0, 2], keepdim: true }), b.any([0, 2], true), 'any');
    same(x.sum({}), x.sum(), 'no keywords: all dims');
    const p = x.split(3, { dim: 1 }), q = x.split(3, 1);
    assert.equal(p.length, q.length);
    p.forEach((t, k) => same(t, q[k], `split piece ${k}`));
    same(om.chunk(x, 2, { dim: -1 })[1], x.chunk(2, -1)[1], 'chunk');
    const g = om.randn([3, 4], { seed: 2 });
    gradcheck((a) => a.sum({ dim: -1, keepdim: true }).mul(a).sum({ dim: 0 }), g);
  }));

  test('a name the op lacks, one given twice, too many arguments: InvalidArgument naming the op', () => om.tidy(() => {
    const x = om.randn([2, 3], { seed: 3 });
    throwsKind(() => x.sum({ dims: 1 }), 'InvalidArgument', /^sum: unknown option 'dims' \(expected dim, keepdim\)$/);
    throwsKind(() => x.mean(1, { dim: 0 }), 'InvalidArgument', /^mean: got dim twice, as argument 1 after the tensor and as an option$/);
    throwsKind(() => om.amax(x, 1, true, 0, {}), 'InvalidArgument', /^amax: takes dim, keepdim after the tensor, got 3 arguments and options$/);
    throwsKind(() => om.amax(x, 1, true, { keepdim: true }), 'InvalidArgument', /^amax: got keepdim twice, as argument 2 after the tensor and as an option$/);
    throwsKind(() => x.split(2, { axis: 1 }), 'InvalidArgument', /^split: unknown option 'axis' \(expected splitSizeOrSections, dim\)$/);
    throwsKind(() => x.chunk(2, 1, { dim: 1 }), 'InvalidArgument', /^chunk: got dim twice/);
    throwsKind(() => x.max({ dim: 'a' }), 'InvalidArgument', /^max: dim must be an integer/);
    throwsKind(() => x.sum({ dim: 5 }), 'IndexOutOfRange', /sum/);
  }));
});

describe('scatter', () => {
  test('gradients: the input\'s where nothing is written, src\'s gathered at index', () => om.tidy(() => {
    const idx = i64([2, 0, 1, 1, 2, 0], [2, 3]);
    gradcheck((x, s) => x.scatter(1, idx, s), om.randn([3, 3], { seed: 4 }), om.randn([2, 4], { seed: 5 }));
    gradcheck((x, s) => om.scatter(x, 0, i64([0, 0, 2], [1, 3]), s, { reduce: 'add' }), om.randn([3, 3], { seed: 6 }), om.randn([2, 3], { seed: 7 }));
  }));

  test('in place, and the errors PyTorch raises, with kinds', () => om.tidy(() => {
    const x = om.zeros([3, 5]), s = om.randn([2, 5], { seed: 8 });
    const y = x.scatter(1, i64([4, 0], [1, 2]), s);
    assert.equal(x.scatter_(1, i64([4, 0], [1, 2]), s), x);
    assert.deepEqual(vals(x), vals(y));
    throwsKind(() => x.scatter(1, i64([0, 5], [1, 2]), s), 'IndexOutOfRange', /^scatter: index 5 is out of range for dim 1 of size 5 \(valid: 0 to 4\)$/);
    throwsKind(() => x.scatter(0, i64([-1], [1, 1]), s), 'IndexOutOfRange', /^scatter: index -1 is out of range for dim 0 of size 3/);
    throwsKind(() => x.scatter(2, i64([0], [1, 1]), s), 'IndexOutOfRange', /^scatter: dim 2 is out of range for a tensor of 2 dims$/);
    throwsKind(() => x.scatter(1, i64([0], [1]), s), 'ShapeMismatch', /^scatter: index \[1\] must have input \[3,5\]'s 2 dims$/);
    throwsKind(() => x.scatter(1, i64([0, 1, 2, 3, 4, 0], [1, 6]), s), 'ShapeMismatch', /^scatter: index \[1,6\] is larger than src \[2,5\] in dim 1$/);
    throwsKind(() => om.zeros([1, 2]).scatter(1, i64([0, 1, 1, 1], [2, 2]), s), 'ShapeMismatch', /^scatter: index \[2,2\] is larger than input \[1,2\] in dim 0 \(only dim 1 may differ\)$/);
    throwsKind(() => x.scatter(1, i64([0], [1, 1]), s.long()), 'DtypeMismatch', /^scatter: src is int64, input float32/);
    throwsKind(() => x.scatter(1, om.zeros([1, 1]), s), 'DtypeMismatch', /^scatter: index must be int64, got float32$/);
    throwsKind(() => x.scatter(1, i64([0], [1, 1]), 'a'), 'InvalidArgument', /^scatter: src must be a Tensor or a number/);
    throwsKind(() => x.scatter(1, i64([0], [1, 1]), s, { reduce: 'multiply' }), 'InvalidArgument', /^scatter: reduce must be 'add' or null/);
    throwsKind(() => x.scatter(1, i64([0], [1, 1]), s, { reduction: 'add' }), 'InvalidArgument', /^scatter: unknown option 'reduction'/);
  }));

  test('traced (Hugging Face\'s top-p filtering: a mask sorted back with scatter), in onnxruntime-web and the Session at other sizes', () => withTraced((keep, trace) => {
    const topP = moduleOf((logits) => {
      const [sorted, order] = logits.sort({ descending: true });
      const remove = sorted.softmax(-1).cumsum(-1).gt(0.8);
      const keepFirst = remove.scatter(-1, om.zeros([remove.shape[0], 1], { dtype: 'int64' }), false); // always keep the best
      const mask = keepFirst.scatter(1, order, keepFirst);
      return logits.maskedFill(mask, om.finfo().min);
    });
    trace(topP, { logits: [om.randn([3, 7], { seed: 9 }), ['batch', 'vocab']] });
    const add = moduleOf((x, s) => x.scatter(0, i64([1, 0, 1, 1, 2, 1], [2, 3]), s, { reduce: 'add' }));
    trace(add, { x: [om.randn([3, 3], { seed: 10 }), [null, null]], s: [om.randn([2, 3], { seed: 11 }), [null, null]] });
  }));
});

describe('finfo and iinfo', () => {
  test('float32\'s limits are float32 values at the edges; float64\'s are JS numbers\' own; int64\'s are the BigInt range', () => om.tidy(() => {
    const f = om.finfo(), d = om.finfo('float64');
    assert.equal(f.dtype, 'float32');
    assert.equal(Math.fround(f.max), f.max);
    assert.equal(Math.fround(f.max * (1 + f.eps / 2)), Infinity); // the next float32 up overflows
    assert.equal(f.min, -f.max);
    assert.ok(Math.fround(1 + f.eps) > 1 && Math.fround(1 + f.eps / 2) === 1);
    assert.equal(Math.fround(f.tiny), f.tiny);
    assert.equal(Math.fround(f.tiny * (1 - f.eps)) < f.tiny, true); // below it: subnormal
    assert.deepEqual(vals(om.tensor([f.min, f.max])), [f.min, f.max]);
    assert.equal(d.max, Number.MAX_VALUE);
    assert.equal(d.eps, Number.EPSILON);
    assert.equal(d.tiny, 2 ** -1022);
    const l = om.iinfo('int64');
    assert.equal(l.max, 2n ** 63n - 1n);
    assert.equal(l.min, -(2n ** 63n));
    // Hugging Face's additive mask: finfo.min where masked, so softmax gives those places 0
    const p = om.randn([2, 4], { seed: 12 }).maskedFill(om.tensor([[false, true, false, true], [true, true, true, false]]), f.min).softmax(-1);
    assert.deepEqual(vals(p).filter((_, k) => [1, 3, 4, 5, 6].includes(k)), [0, 0, 0, 0, 0]);
    throwsKind(() => om.finfo('int64'), 'InvalidArgument', /^finfo: takes 'float32' or 'float64', got a string \("int64"\)$/);
    throwsKind(() => om.iinfo('float32'), 'InvalidArgument', /^iinfo: takes 'int64', got a string \("float32"\)$/);
  }));
});

describe('multinomial', () => {
  // the chance of a draw: weight / total; of an ordered pair without replacement: w_a / total * w_b / (total - w_a)
  const W = [0.1, 0, 0.6, 0.3];
  const total = W.reduce((a, b) => a + b);
  // within 5 standard deviations of the binomial count: fails only when the draws are wrong
  const close = (count, n, p, what) => assert.ok(Math.abs(count - n * p) <= 5 * Math.sqrt(n * p * (1 - p)) + 1, `${what}: ${count} of ${n}, expected ${n * p}`);

  test('with replacement: each category as often as its weight says; a zero weight never', () => om.tidy(() => {
    om.manualSeed(5);
    const n = 20000, s = om.multinomial(om.tensor(W), n, true);
    assert.deepEqual([s.dtype, s.shape], ['int64', [n]]);
    const counts = W.map(() => 0);
    for (const v of s.toArray()) counts[Number(v)]++;
    W.forEach((w, k) => close(counts[k], n, w / total, `category ${k}`));
    assert.equal(counts[1], 0);
    const rows = om.tensor([W, [1, 1, 1, 1]]).multinomial(3, { replacement: true, seed: 7 });
    assert.deepEqual(rows.shape, [2, 3]);
    assert.deepEqual(vals(om.tensor([W, [1, 1, 1, 1]]).multinomial(3, { replacement: true, seed: 7 })), vals(rows), 'a seed repeats the draws');
  }));

  test('without replacement: distinct indices in draw order, pairs as often as sequential draws give them', () => om.tidy(() => {
    om.manualSeed(6);
    const n = 4000, s = om.multinomial(om.tensor(W).expand(n, 4), 2);
    const pairs = new Map();
    const v = [...s.toArray()].map(Number);
    for (let k = 0; k < n; k++) {
      assert.notEqual(v[2 * k], v[2 * k + 1]);
      pairs.set(`${v[2 * k]},${v[2 * k + 1]}`, (pairs.get(`${v[2 * k]},${v[2 * k + 1]}`) ?? 0) + 1);
    }
    for (const a of [0, 2, 3]) {
      for (const b of [0, 2, 3]) if (a !== b) close(pairs.get(`${a},${b}`) ?? 0, n, (W[a] / total) * (W[b] / (total - W[a])), `pair ${a},${b}`);
    }
    assert.equal([...pairs.keys()].some((k) => k.includes('1')), false);
    const all = om.multinomial(om.tensor([2, 5, 1]), 3); // every index once
    assert.deepEqual([...all.toArray()].map(Number).sort(), [0, 1, 2]);
  }));

  test('errors, with kinds; refused in a trace', () => om.tidy(() => {
    throwsKind(() => om.multinomial(om.tensor(W), 4), 'InvalidArgument', /^multinomial: a row has fewer than 4 nonzero weights to draw without replacement$/);
    throwsKind(() => om.multinomial(om.tensor(W), 5), 'InvalidArgument', /^multinomial: cannot draw 5 samples from 4 categories without replacement$/);
    throwsKind(() => om.multinomial(om.tensor([1, -1]), 1), 'InvalidArgument', /^multinomial: the weights hold a negative, infinite or NaN value$/);
    throwsKind(() => om.multinomial(om.tensor([1, NaN]), 1, true), 'InvalidArgument', /^multinomial: the weights hold a negative/);
    throwsKind(() => om.multinomial(om.tensor([[0, 0], [1, 0]]), 1), 'InvalidArgument', /^multinomial: a row of weights sums to 0 \(no category to draw\)$/);
    throwsKind(() => om.multinomial(om.tensor(W), 0), 'InvalidArgument', /^multinomial: numSamples must be positive, got 0$/);
    throwsKind(() => om.multinomial(om.ones([2, 2, 2]), 1), 'ShapeMismatch', /^multinomial: takes a 1-D or 2-D tensor of weights, got \[2,2,2\]$/);
    throwsKind(() => om.multinomial(om.tensor([1, 2], { dtype: 'int64' }), 1), 'DtypeMismatch', /^multinomial: takes float32 weights, not int64$/);
    throwsKind(() => om.multinomial(om.tensor(W), 1, { replace: true }), 'InvalidArgument', /^multinomial: unknown option 'replace'/);
    assert.throws(() => om.trace(moduleOf((p) => p.softmax(-1).multinomial(1)), { p: om.randn([2, 5], { seed: 1 }) }),
      (e) => e instanceof om.TraceError && e.kind === 'UnsupportedOperation' && /^multinomial: random draws are not traced/.test(e.message));
  }));
});

describe('Tensor attributes and methods ports reach for: T, mT, data, tolist, normal_, uniform_', () => {
  test('T reverses the dims, mT swaps the last two, data shares storage outside autograd', () => om.tidy(() => {
    const x = om.randn([2, 3, 4], { seed: 13 });
    assert.deepEqual(vals(x.T), vals(x.permute(2, 1, 0)));
    assert.deepEqual(x.T.shape, [4, 3, 2]);
    assert.deepEqual(vals(x.mT), vals(x.transpose(-2, -1)));
    assert.deepEqual(x.mT.shape, [2, 4, 3]);
    throwsKind(() => om.randn([3]).mT, 'ShapeMismatch', /^mT: takes a matrix or a batch of them, got 1 dims$/);
    const w = om.randn([2, 2], { seed: 14 });
    w.requiresGrad = true;
    const d = w.data;
    assert.equal(d.requiresGrad, false);
    d.fill_(0.5); // writes w, as PyTorch's w.data.fill_
    assert.deepEqual(vals(w), [0.5, 0.5, 0.5, 0.5]);
  }));

  test('tolist: nested arrays of numbers or booleans; an int64 a number cannot hold is refused', () => om.tidy(() => {
    const x = om.randn([2, 3], { seed: 15 });
    const flat = [...x.toArray()];
    assert.deepEqual(x.tolist(), [flat.slice(0, 3), flat.slice(3)]);
    assert.deepEqual(om.tensor([[1, -2]], { dtype: 'int64' }).tolist(), [[1, -2]]);
    assert.deepEqual(om.tensor([true, false]).tolist(), [true, false]);
    assert.equal(om.tensor(2.5).tolist(), 2.5);
    throwsKind(() => om.tensor([2n ** 60n]).tolist(), 'InvalidArgument', /^tolist: 1152921504606846976 is not exact as a JS number/);
  }));

  test('normal_ and uniform_: the distributions asked for, keywords as PyTorch\'s, written as copy_ writes', () => om.tidy(() => {
    om.manualSeed(16);
    const n = 4000, w = om.zeros([n]);
    assert.equal(w.normal_({ mean: 1, std: 0.02 }), w);
    // the sample mean within 5 standard errors, the sample std within 10 %
    assert.ok(Math.abs(w.mean().item() - 1) < 5 * 0.02 / Math.sqrt(n), `mean ${w.mean().item()}`);
    assert.ok(Math.abs(w.std().item() / 0.02 - 1) < 0.1, `std ${w.std().item()}`);
    w.uniform_(-2, 3);
    assert.ok(w.amin().item() >= -2 && w.amax().item() < 3);
    assert.ok(Math.abs(w.mean().item() - 0.5) < 5 * 5 / Math.sqrt(12 * n), `uniform mean ${w.mean().item()}`);
    const p = new om.nn.Linear(3, 2);
    try {
      p.weight.data.normal_(0, 0.02); // Hugging Face's _init_weights
      assert.ok(p.weight.abs().amax().item() < 0.2);
      throwsKind(() => p.weight.normal_(), 'Autograd', /a leaf Variable that requires grad is being used in an in-place operation/);
    } finally {
      p.dispose();
    }
    throwsKind(() => om.zeros([2], { dtype: 'int64' }).normal_(), 'InvalidArgument', /^normal_: takes a float32 tensor, got int64$/);
    throwsKind(() => om.zeros([2]).normal_({ std: -1 }), 'InvalidArgument', /^normal_: std must be >= 0, got -1$/);
    throwsKind(() => om.zeros([2]).normal_({ sd: 1 }), 'InvalidArgument', /^normal_: unknown option 'sd' \(expected mean, std\)$/);
    throwsKind(() => om.zeros([2]).uniform_(2, 1), 'InvalidArgument', /^uniform_: expects from <= to, got from=2 > to=1$/);
    throwsKind(() => om.zeros([2]).uniform_({ from: 'a' }), 'InvalidArgument', /^uniform_: from must be a finite number/);
  }));
});

describe('modules: kernelSize by name', () => {
  test('nn.Conv2d(i, o, { kernelSize, ... }) as torchvision\'s BasicConv2d writes nn.Conv2d(in, out, bias=False, **kwargs)', () => om.tidy(() => {
    const mods = [];
    try {
      om.manualSeed(21);
      const a = new om.nn.Conv2d(3, 4, { kernelSize: [3, 1], padding: [1, 0], bias: false });
      om.manualSeed(21);
      const b = new om.nn.Conv2d(3, 4, [3, 1], { padding: [1, 0], bias: false });
      om.manualSeed(22);
      const t = new om.nn.ConvTranspose2d(3, 2, { kernelSize: 2, stride: 2 });
      mods.push(a, b, t);
      assert.deepEqual(a.kernelSize, [3, 1]);
      assert.deepEqual(Object.keys(a.stateDict()), ['weight']);
      const x = om.randn([1, 3, 5, 4], { seed: 23 });
      assert.deepEqual(vals(a.forward(x)), vals(b.forward(x)));
      assert.deepEqual(t.forward(x).shape, [1, 2, 10, 8]);
      throwsKind(() => new om.nn.Conv2d(3, 4, { padding: 1 }), 'InvalidArgument', /^Conv2d: kernelSize is required \(as the third argument or an option\)$/);
      throwsKind(() => new om.nn.Conv1d(3, 4, { kernelSize: 3, strides: 2 }), 'InvalidArgument', /^Conv1d: unknown option 'strides'/);
    } finally {
      for (const m of mods) m.dispose();
    }
  }));
});

describe('keywords of the shape, softmax and indexing ops', () => {
  test('softmax\'s dtype casts first; unknown names and bad values are InvalidArgument', () => om.tidy(() => {
    const x = om.randn([2, 3], { seed: 31 });
    assert.deepEqual(vals(om.nn.functional.softmax(x, { dim: -1, dtype: 'float32' })), vals(x.softmax(-1)));
    assert.deepEqual(vals(om.tensor([[1, 2, 3]], { dtype: 'int64' }).logSoftmax({ dim: 1, dtype: 'float32' })), vals(om.tensor([[1, 2, 3]]).logSoftmax(1)));
    throwsKind(() => x.softmax({ dim: -1, dtype: 5 }), 'InvalidArgument', /^softmax: dtype must be a dtype name, got 5$/);
    throwsKind(() => x.softmax({ axis: -1 }), 'InvalidArgument', /^softmax: unknown option 'axis' \(expected dim, dtype\)$/);
    throwsKind(() => x.gather(1, { dim: 1 }), 'InvalidArgument', /^gather: got dim twice/);
    throwsKind(() => om.cat([x, x], { axis: 0 }), 'InvalidArgument', /^cat: unknown option 'axis' \(expected dim\)$/);
    throwsKind(() => x.flatten({ start_dim: 1 }), 'InvalidArgument', /^flatten: unknown option 'start_dim' \(expected startDim, endDim\)$/);
  }));
});

test('double(): to(\'float64\'), as PyTorch\'s', () => om.tidy(() => {
  const x = om.tensor([1.5, -2], { dtype: 'float32' });
  const d = x.double();
  assert.equal(d.dtype, 'float64');
  assert.deepEqual([...d.toArray()], [...x.to('float64').toArray()]);
}));
