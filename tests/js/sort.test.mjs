// Sorting, searching and rearranging: topk, sort, argsort, searchsorted, bucketize, oneHot,
// repeatInterleave, trilIndices / triuIndices, pixelShuffle / pixelUnshuffle. Values against
// tests/js/fixtures/pytorch/ops/sort.json (written by tools/pytorch_composites.py: ties, NaN,
// k = 1 and k = n, negative dims), gradients by finite differences, the errors (kind and
// message), and models traced with symbolic axes run in onnxruntime-web and the Session against
// eager at other sizes.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as om from 'onemodel';
import { memoryHooks, vals, gradcheck, throwsKind, moduleOf, withTraced } from './helpers.mjs';

memoryHooks();

const fx = JSON.parse(readFileSync(new URL('./fixtures/pytorch/ops/sort.json', import.meta.url), 'utf8'));

const F = om.nn.functional;
const input = (x) => om.tensor(x.data.map((v) => (v === null ? NaN : v)), { dtype: x.dtype, shape: x.shape });

/** The op of a fixture case on its inputs (Tensors), with the case's arguments. */
const RUN = {
  topk: ([x], [k, dim, largest]) => om.topk(x, k, dim, largest),
  sort: ([x], [dim, descending]) => x.sort({ dim, descending, stable: true }),
  argsort: ([x], [dim, descending]) => om.argsort(x, dim, descending),
  bucketize: ([x, b], [right]) => om.bucketize(x, b, { right }),
  searchsorted: ([s, v], [right]) => om.searchsorted(s, v, { side: right ? 'right' : 'left' }),
  one_hot: ([c], [n]) => F.oneHot(c, n),
  repeat_interleave: ([x, r], [reps, dim]) => x.repeatInterleave(r ?? reps, dim ?? undefined),
  tril_indices: (_, [row, col, off]) => om.trilIndices(row, col, off),
  triu_indices: (_, [row, col, off]) => om.triuIndices(row, col, off),
  pixel_shuffle: ([x], [r]) => F.pixelShuffle(x, r),
  pixel_unshuffle: ([x], [r]) => F.pixelUnshuffle(x, r),
};

describe('sorting and rearranging against PyTorch', () => {
  test('every fixture case: values, dtypes and shapes, or an error where PyTorch raises', () => om.tidy(() => {
    const seen = new Set();
    for (const c of fx.cases) {
      const what = `${c.op}(${c.inputs.map((x) => `[${x.shape}] ${x.dtype}`).join(', ')}; ${JSON.stringify(c.args)})`;
      const run = () => om.tidy(() => RUN[c.op](c.inputs.map(input), c.args));
      seen.add(c.op);
      if (c.error) {
        assert.throws(run, (e) => e instanceof om.OmError, `${what} should fail as PyTorch's "${c.error}"`);
        continue;
      }
      const out = run();
      const outs = Array.isArray(out) ? out : [out];
      assert.equal(outs.length, c.outputs.length, what);
      if (c.op === 'topk') { // PyTorch's topk leaves equal values in no defined order: its indices must pick its values
        const picked = input(c.inputs[0]).gather(c.args[1], outs[1]);
        assert.deepEqual(vals(picked), c.outputs[0].data.map((v) => (v === null ? NaN : v)), `${what} indices pick the values`);
      }
      outs.forEach((o, j) => {
        const e = c.outputs[j];
        if (c.op === 'topk' && j === 1) return assert.deepEqual(o.shape, e.shape, `${what} indices' shape`);
        assert.equal(o.dtype, e.dtype === 'float32' || e.dtype === 'int64' ? e.dtype : o.dtype, `${what} output ${j} dtype`);
        assert.deepEqual(o.shape, e.shape, `${what} output ${j} shape`);
        assert.deepEqual(vals(o), e.data.map((v) => (v === null ? NaN : v)), `${what} output ${j}`);
      });
    }
    assert.deepEqual([...seen].sort(), Object.keys(RUN).sort());
  }));

  test('ties keep index order both ways; a NaN is the largest', () => om.tidy(() => {
    const x = om.tensor([2, NaN, 1, 2, 1, NaN]);
    const [v, i] = x.topk(6);
    assert.deepEqual(vals(i), [1, 5, 0, 3, 2, 4]);
    assert.deepEqual(vals(v), [NaN, NaN, 2, 2, 1, 1]);
    assert.deepEqual(vals(x.topk(3, { largest: false })[1]), [2, 4, 0]);
    assert.deepEqual(vals(x.argsort()), [2, 4, 0, 3, 1, 5]);
    const big = om.tensor([2n ** 62n + 1n, 2n ** 62n, -5n], { dtype: 'int64' });
    assert.deepEqual(big.sort()[0].toArray(), BigInt64Array.from([-5n, 2n ** 62n, 2n ** 62n + 1n])); // every bit kept
  }));

  test('topk, sort and max/min along a dim read as PyTorch\'s named tuple: .values and .indices, two tensors when walked', () => {
    const x = om.tensor([[3, 9, 1], [4, 0, 8]]);
    om.tidy(() => {
      for (const [what, pair, v, i] of [
        ['topk', x.topk(2), [9, 3, 8, 4], [1, 0, 2, 0]],
        ['sort', om.sort(x, 1, true), [9, 3, 1, 8, 4, 0], [1, 0, 2, 2, 0, 1]],
        ['max', x.max(1), [9, 8], [1, 2]],
        ['min', x.min(0, true), [3, 0, 1], [0, 1, 0]],
      ]) {
        assert.ok(Array.isArray(pair) && pair.length === 2, what);
        assert.equal(pair.values, pair[0], `${what}: .values is the first`);
        assert.equal(pair.indices, pair[1], `${what}: .indices is the second`);
        assert.deepEqual([vals(pair.values), vals(pair.indices), pair.indices.dtype], [v, i, 'int64'], what);
        assert.deepEqual(Object.keys(pair), ['0', '1'], `${what}: the names are not enumerable`);
        assert.deepEqual([...pair], [pair[0], pair[1]], `${what}: iterates as two tensors`);
      }
    });
    // tidy keeps a returned pair's two tensors, once each, and frees the rest
    const before = om.memory().tensors;
    const kept = om.tidy(() => x.add(1).topk(1));
    assert.equal(om.memory().tensors, before + 2);
    om.dispose(kept);
    assert.equal(om.memory().tensors, before);
    x.dispose();
  });

  test('a 0-d tensor, k = 0 and empty tensors', () => om.tidy(() => {
    const [v, i] = om.tensor(4).topk(1);
    assert.deepEqual([v.shape, vals(v), i.shape, vals(i)], [[], [4], [], [0]]);
    assert.deepEqual(om.zeros([3, 4]).topk(0, 0)[0].shape, [0, 4]);
    assert.deepEqual(om.zeros([0, 4]).sort({ dim: 0 })[1].shape, [0, 4]);
    assert.deepEqual(om.bucketize(om.zeros([2, 0]), om.tensor([1, 2])).shape, [2, 0]);
    assert.deepEqual(vals(om.bucketize(om.tensor([3, -1]), om.zeros([0]))), [0, 0]);
    assert.deepEqual(om.repeatInterleave(om.zeros([2, 3]), 0, 1).shape, [2, 0]);
    assert.deepEqual(vals(om.tensor(7).repeatInterleave(3)), [7, 7, 7]);
  }));

  test('repeatInterleave(repeats) alone: each index repeated its count, as torch.repeat_interleave(repeats)', () => om.tidy(() => {
    const counts = om.tensor([2n, 0n, 3n, 1n]);
    for (const r of [om.repeatInterleave(counts), counts.repeatInterleave()]) {
      assert.equal(r.dtype, 'int64');
      assert.deepEqual([...r.toArray()], [0n, 0n, 2n, 2n, 2n, 3n]);
    }
    assert.deepEqual(om.repeatInterleave(om.zeros([0], { dtype: 'int64' })).shape, [0]);
    throwsKind(() => om.repeatInterleave(om.tensor(3n)), 'ShapeMismatch', /^repeatInterleave: repeat_interleave only accept 1D vector as repeat, got \[\]$/);
    throwsKind(() => om.repeatInterleave(om.tensor([1, 2])), 'DtypeMismatch', /^repeatInterleave: repeats must be int64, not float32$/);
    throwsKind(() => om.repeatInterleave(om.tensor([1n, -1n])), 'InvalidArgument', /^repeatInterleave: repeats can not be negative, got -1 \(at 1\)$/);
  }));
});

describe('gradients', () => {
  // values at least 0.25 apart, so the finite differences never reorder them
  const spaced = (shape, seed) => om.tidy(() => om.randn(shape, { seed }).argsort(-1).argsort(-1).mul(0.25).add(om.randn(shape, { seed: seed + 1 }).mul(0.01)));

  test('topk and sort scatter the gradient back to where the values came from', () => om.tidy(() => {
    gradcheck((a) => a.topk(2, 1)[0], spaced([3, 5], 1));
    gradcheck((a) => a.topk(3, { dim: -1, largest: false })[0], spaced([2, 4], 3));
    gradcheck((a) => a.sort({ dim: 1, descending: true })[0].mul(om.arange(4)), spaced([2, 4], 5));
  }));

  test('repeatInterleave sums each run; pixel shuffles permute', () => om.tidy(() => {
    gradcheck((a) => a.repeatInterleave(3, 1), om.randn([2, 3], { seed: 7 }));
    gradcheck((a) => a.repeatInterleave(om.tensor([2, 0, 1], { dtype: 'int64' }), 1), om.randn([2, 3], { seed: 8 }));
    gradcheck((a) => om.repeatInterleave(a, 2), om.randn([2, 2], { seed: 9 }));
    gradcheck((a) => F.pixelShuffle(a, 2), om.randn([1, 8, 2, 1], { seed: 10 }));
    gradcheck((a) => F.pixelUnshuffle(a, 2), om.randn([1, 2, 2, 4], { seed: 11 }));
  }));

  test('bucketize, searchsorted and oneHot give int64 without gradients', () => om.tidy(() => {
    const x = om.randn([3], { seed: 12 });
    x.requiresGrad = true;
    const b = om.bucketize(x, om.tensor([0, 1]));
    assert.equal(b.dtype, 'int64');
    assert.equal(b.requiresGrad, false);
  }));
});

describe('errors', () => {
  test('each names the op and the values', () => om.tidy(() => {
    const x = om.zeros([2, 3]);
    throwsKind(() => x.topk(4), 'InvalidArgument', /^topk: k \(4\) is out of range for dim 1 of size 3$/);
    throwsKind(() => x.topk(-1, 0), 'InvalidArgument', /^topk: k \(-1\) is out of range for dim 0 of size 2$/);
    throwsKind(() => x.topk(1, 2), 'IndexOutOfRange', /^topk: dim 2 is out of range/);
    throwsKind(() => om.tensor(1).topk(0), 'InvalidArgument', /^topk: k \(0\) must be 1 for a 0-d tensor$/);
    throwsKind(() => om.tensor([true]).topk(1), 'DtypeMismatch', /^topk: takes float32 or int64, not bool$/);
    throwsKind(() => x.sort({ dim: 0, order: 1 }), 'InvalidArgument', /^sort: unknown option 'order'/);
    throwsKind(() => x.sort(-3), 'IndexOutOfRange', /^sort: dim -3 is out of range/);
    throwsKind(() => F.oneHot(om.tensor([0, -1, 2], { dtype: 'int64' }), 3), 'IndexOutOfRange',
      /^oneHot: class -1 is out of range for 3 classes \(valid: 0 to 2\)$/);
    throwsKind(() => F.oneHot(om.tensor([0, 3], { dtype: 'int64' }), 3), 'IndexOutOfRange', /^oneHot: class 3 is out of range for 3 classes/);
    throwsKind(() => F.oneHot(om.tensor([0, 1])), 'DtypeMismatch', /^oneHot: is only applicable to an index tensor \(int64\), not float32$/);
    throwsKind(() => F.oneHot(om.zeros([0], { dtype: 'int64' })), 'InvalidArgument', /^oneHot: can not infer the number of classes from an empty tensor \(num_classes -1\)$/);
    // 0 classes of an empty tensor too, as PyTorch (its test is num_classes <= 0); a positive count gives [0, n]
    throwsKind(() => F.oneHot(om.zeros([0], { dtype: 'int64' }), 0), 'InvalidArgument', /^oneHot: can not infer the number of classes from an empty tensor \(num_classes 0\)$/);
    assert.deepEqual(F.oneHot(om.zeros([0, 2], { dtype: 'int64' }), 3).shape, [0, 2, 3]);
    throwsKind(() => F.oneHot(om.zeros([1], { dtype: 'int64' }), -2), 'InvalidArgument', /^oneHot: num_classes -2 must be positive, or -1/);
    throwsKind(() => F.pixelShuffle(om.zeros([1, 6, 2, 2]), 2), 'ShapeMismatch',
      /^pixelShuffle expects its input's 'channel' dimension to be divisible by the square of upscaleFactor, but input\.shape\.at\(-3\)=6 is not divisible by 2\^2$/);
    throwsKind(() => F.pixelShuffle(om.zeros([4, 2]), 2), 'ShapeMismatch', /^pixelShuffle expects input to have at least 3 dimensions, but got input with 2 dimension\(s\)$/);
    throwsKind(() => F.pixelShuffle(om.zeros([4, 2, 2]), 0), 'InvalidArgument', /^pixelShuffle expects a positive upscaleFactor, but got 0$/);
    throwsKind(() => F.pixelShuffle(om.zeros([4, 2, 2]), 2 ** 40), 'ShapeMismatch', /^pixelShuffle expects/);
    throwsKind(() => F.pixelUnshuffle(om.zeros([1, 2, 4, 3]), 2), 'ShapeMismatch',
      /^pixelUnshuffle expects width to be divisible by downscaleFactor, but input\.shape\.at\(-1\)=3 is not divisible by 2$/);
    throwsKind(() => F.pixelUnshuffle(om.zeros([1, 5, 0, 0]), 2 ** 40), 'ShapeMismatch', /^pixelUnshuffle: \[5, 0, 0\] by 1099511627776 does not fit in 64 bits$/);
    throwsKind(() => x.repeatInterleave(-1), 'InvalidArgument', /^repeatInterleave: repeats can not be negative, got -1$/);
    throwsKind(() => x.repeatInterleave(2 ** 62, 1), 'InvalidArgument', /^repeatInterleave: 3 x 4611686018427387904 elements along dim 1 do not fit in 64 bits$/);
    throwsKind(() => x.repeatInterleave(om.tensor([1, 2], { dtype: 'int64' }), 1), 'ShapeMismatch',
      /^repeatInterleave: repeats must have the same size as input along dim 1, but got 2 counts for size 3$/);
    throwsKind(() => x.repeatInterleave(om.tensor([1, -2, 0], { dtype: 'int64' }), 1), 'InvalidArgument', /^repeatInterleave: repeats can not be negative, got -2 \(at 1\)$/);
    throwsKind(() => x.repeatInterleave(om.tensor([1, 2, 0]), 1), 'DtypeMismatch', /^repeatInterleave: repeats must be int64, not float32$/);
    throwsKind(() => x.repeatInterleave(om.zeros([1, 1], { dtype: 'int64' }), 1), 'ShapeMismatch', /^repeatInterleave: repeats must be 0-d or 1-D, got 2 dims$/);
    throwsKind(() => x.repeatInterleave(1, 2), 'IndexOutOfRange', /^repeatInterleave: dim 2 is out of range/);
    throwsKind(() => om.zeros([1, 1, 1, 1, 1, 1, 1, 1]).repeatInterleave(2, 0), 'InvalidArgument', /^repeatInterleave: takes at most 7 dims$/);
    throwsKind(() => om.trilIndices(-1, 3), 'InvalidArgument', /^trilIndices: row \(-1\) and col \(3\) must be non-negative$/);
    throwsKind(() => om.triuIndices(3, 2 ** 31), 'InvalidArgument', /^triuIndices: row \(3\) and col \(2147483648\) must be below 2\^31$/);
    throwsKind(() => om.trilIndices(2 ** 31 - 1, 2 ** 31 - 1), 'OutOfMemory', /^trilIndices: 2147483647 x 2147483647 indices do not fit in memory$/);
    throwsKind(() => om.bucketize(om.zeros([2]), om.zeros([2, 2])), 'ShapeMismatch', /^bucketize: boundaries must be 1-D, got 2 dims$/);
    throwsKind(() => om.bucketize(om.zeros([2]), om.tensor([true])), 'DtypeMismatch', /^searchsorted: takes float32 or int64, not bool$/);
    throwsKind(() => om.searchsorted(om.zeros([3, 4]), om.zeros([2, 4])), 'ShapeMismatch',
      /^searchsorted: a sorted sequence of shape \[3,4\] needs values with the same leading dims \(all but the last\), got \[2,4\]$/);
    throwsKind(() => om.searchsorted(om.tensor(1), om.zeros([2])), 'ShapeMismatch', /^searchsorted: the sorted sequence must have at least 1 dim$/);
    throwsKind(() => om.searchsorted(om.zeros([2]), om.zeros([2]), { side: 'left', right: true }), 'InvalidArgument', /^searchsorted: side 'left' and right true are opposites$/);
    throwsKind(() => om.searchsorted(om.zeros([2]), om.zeros([2]), { side: 'up' }), 'InvalidArgument', /^searchsorted: side must be 'left' or 'right'/);
  }));
});

describe('traced', () => {
  test('topk, sort and argsort along a symbolic axis: onnxruntime-web and the Session agree with eager', () => withTraced((keep, trace) => {
    // k fixed along a symbolic axis of at least 3; a sort of the symbolic axis (k is its size)
    const topModel = moduleOf((x) => {
      const [v, i] = x.topk(3, { dim: 1 });
      const [s, si] = x.sort({ dim: -1, descending: true });
      return [v.mul(2), i, s.add(1), si, x.argsort(0), x.topk(1, { dim: -1, largest: false })[1]];
    });
    trace(topModel, { x: [om.randn([2, 5, 4], { seed: 20 }), ['b', om.Dim('n', { min: 3 }), 'm']] });
    // ties: values from a few integers, ONNX TopK's lower index first as the eager order
    const ties = moduleOf((x) => [x.sort({ dim: 1 })[1], x.topk(4, { dim: 1, largest: false })[1]]);
    trace(ties, { x: [om.tensor(Array.from({ length: 27 }, (_, i) => (i * 7) % 4), { shape: [3, 9] }), [null, 'n']] });
    // an axis a symbol can make empty (n - 2 from n = 2): onnxruntime's TopK fails on an empty input,
    // so the graph sorts one extra row there and drops it
    const short = moduleOf((x) => x.slice(1, 2).topk(2, { dim: 0, largest: false }));
    trace(short, { x: [om.randn([3, 6], { seed: 24 }), [null, om.Dim('n', { min: 2 })]] });
    // NaNs, infinities and -0 (onnxruntime's TopK alone places a NaN as its comparisons fall): the
    // graph's two passes give eager's order both ways
    const nans = moduleOf((x) => [...x.sort({ dim: 1 }), ...x.sort({ dim: 1, descending: true }), ...x.topk(3, { dim: 1 }), ...x.topk(2, { dim: 0, largest: false })]);
    trace(nans, { x: [om.tensor([[4, NaN, 1, Infinity, -0, 0], [NaN, 3, NaN, -1, Infinity, -Infinity], [2, 2, NaN, Infinity, 1, NaN]]), ['n', null]] });
    const ints = moduleOf((x) => x.topk(2, { dim: 0 }));
    trace(ints, { x: [om.tensor([[5, 1], [5, 7], [-2, 7], [3, 3]], { dtype: 'int64' }), ['n', null]] });
  }));

  test('bucketize, searchsorted, oneHot: exact counts and comparisons', () => withTraced((keep, trace) => {
    const bounds = om.tensor([-1, 0, 0.5, 2]);
    const model = moduleOf((x, c) => [
      om.bucketize(x, bounds), om.bucketize(x, bounds, { right: true }),
      om.searchsorted(x.sort({ dim: -1 })[0], x.mul(0.5)), F.oneHot(c, 5).mul(3),
    ]);
    const x = om.tensor([[-1, 0, 0.25, 3, 2], [0.5, -4, 2, 0, 1]]);
    trace(model, { x: [x, ['b', 'n']], c: [om.tensor([0, 4, 2], { dtype: 'int64' }), ['k']] });
  }));

  test('repeatInterleave, pixel shuffles and triangle indices at other sizes', () => withTraced((keep, trace) => {
    const model = moduleOf((x) => {
      const up = F.pixelShuffle(x, 2);
      const down = F.pixelUnshuffle(up.add(1), 2);
      const [r, c] = om.trilIndices(3, 4, 1).unbind(0);
      return [up, down, x.repeatInterleave(3, 2), x.repeatInterleave(om.tensor([2, 0, 1, 1, 3, 1, 0, 2], { dtype: 'int64' }), 1),
        x.select(0, 0).select(1, 0).indexSelect(0, r).add(c.unsqueeze(1))];
    });
    trace(model, { x: [om.randn([2, 8, 3, 2], { seed: 22 }), ['b', null, 'h', 'w']] });
    const flat = moduleOf((x) => om.repeatInterleave(x, 2));
    trace(flat, { x: [om.randn([3, 2], { seed: 23 }), ['n', null]] });
  }));

  test('what a graph cannot hold is refused: counts or classes read from a traced input', () => om.tidy(() => {
    const counts = moduleOf((x, r) => x.repeatInterleave(r, 0));
    assert.throws(() => om.trace(counts, { x: om.randn([3, 2]), r: om.tensor([1, 2, 0], { dtype: 'int64' }) }),
      (e) => e instanceof om.TraceError && e.kind === 'DataDependent' && /^repeatInterleave: reads the values of a traced tensor/.test(e.message));
    const emptySort = moduleOf((x) => x.slice(1, 2).sort({ dim: 1 })[0]);
    assert.throws(() => om.trace(emptySort, { x: [om.randn([3, 6]), [null, om.Dim('n', { min: 2 })]] }),
      (e) => e instanceof om.TraceError && e.kind === 'SymbolicShape' && /^topk: .*it can be empty, and onnxruntime's TopK fails on an empty axis/.test(e.message));
    const classes = moduleOf((c) => F.oneHot(c));
    assert.throws(() => om.trace(classes, { c: om.tensor([1, 0], { dtype: 'int64' }) }),
      (e) => e instanceof om.TraceError && e.kind === 'DataDependent' && /^oneHot: reads the values of a traced tensor/.test(e.message));
  }));
});
