// An audit of issue 28's ops against PyTorch (tests/js/fixtures/pytorch/ops/audit-ops28.json,
// written by tools/pytorch_audit.py) with the arguments ports use and tests rarely do: domain
// edges of the trigonometric functions, fmod/remainder with negative operands and zero divisors,
// scalars as weak types, where with scalar branches, int64 and bool operands of the logical,
// bitwise and shift ops, sorts with ties, 0-d and empty tensors, bucketize(right), repeat_interleave
// with a tensor of repeats, one_hot(-1), tril/triu_indices with offsets, cdist p = 0, 1, inf,
// roll over several dims, im2col with dilation/padding/stride, pixel_(un)shuffle, meshgrid 'xy',
// masked_scatter, index_put with accumulate and masks, slices (negative steps refused), einsum.
// Dtypes and shapes exactly; values bit for bit, except the functions PyTorch computes with its own
// approximations (within 2 ulps of float32); PyTorch's refusals as an OmError with a kind and a
// message naming the op.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as om from 'onemodel';
import { memoryHooks, fixtureNumber, expectFixture, withTraced } from './helpers.mjs';

memoryHooks();
const fx = JSON.parse(readFileSync(new URL('./fixtures/pytorch/ops/audit-ops28.json', import.meta.url), 'utf8'));
const F = om.nn.functional;

const input = (x) => om.tensor(
  x.dtype === 'int64' ? x.data.map(BigInt) : x.dtype === 'float32' ? x.data.map(fixtureNumber) : x.data,
  { dtype: x.dtype, shape: x.shape },
);
const camel = (s) => s.replace(/_(\w)/g, (_, ch) => ch.toUpperCase());
const vi = (r) => [r.values, r.indices];

/** The JS call of each fixture op, as a port writes PyTorch's (tools/pytorch_audit.py call28). */
const CALLS = {
  ...Object.fromEntries(['sin', 'cos', 'tan', 'asin', 'acos', 'atan', 'sinh', 'cosh', 'asinh', 'acosh', 'atanh', 'logical_not', 'bitwise_not']
    .map((op) => [op, ([x]) => x[camel(op)]()])),
  ...Object.fromEntries(['atan2', 'fmod', 'remainder', 'add', 'sub', 'mul', 'div', 'pow', 'minimum', 'maximum', 'logical_and', 'logical_or',
    'logical_xor', 'bitwise_and', 'bitwise_or', 'bitwise_xor', 'bitwise_left_shift', 'bitwise_right_shift']
    .map((op) => [op, ([x, y], a) => om[camel(op)](x, y ?? a.other)])),
  rpow: ([x], a) => om.pow(a.other, x),
  scalar_first: ([x], a) => om[camel(a.fn)](a.other, x),
  inplace: ([x], a) => {
    const y = x.clone();
    return a.other === null ? y[`${camel(a.fn)}_`]() : y[`${camel(a.fn)}_`](fixtureNumber(a.other));
  },
  ...Object.fromEntries(['arcsin', 'arccos', 'arctan', 'arcsinh', 'arccosh', 'arctanh'].map((op) => [op, ([x]) => om[op](x)])),
  arctan2: ([y, x]) => y.arctan2(x),
  where_method: ([x, c, y]) => x.where(c, y),
  bucketize_scalar: ([b], a) => om.bucketize(a.value, b, { right: a.right }),
  where_scalars: ([c], a) => om.where(c, a.a, a.b),
  where: ([c, x], a) => om.where(c, x, a.b),
  sort: ([x], a) => vi(x.sort({ dim: a.dim, descending: a.descending, stable: a.stable })),
  topk: ([x], a) => vi(x.topk(a.k, { dim: a.dim, largest: a.largest })),
  bucketize: ([x, b], a) => om.bucketize(x, b, { right: a.right }),
  repeat_interleave: ([x, r], a) => om.repeatInterleave(x, r ?? a.repeats, a.dim),
  one_hot: ([x], a) => F.oneHot(x, a.num_classes),
  tril_indices: (_, a) => om.trilIndices(a.row, a.col, a.offset),
  triu_indices: (_, a) => om.triuIndices(a.row, a.col, a.offset),
  cdist: ([x1, x2], a) => om.cdist(x1, x2, fixtureNumber(a.p)),
  roll: ([x], a) => x.roll(a.shifts, a.dims ?? undefined),
  F_unfold: ([x], a) => F.unfold(x, a.kernel_size, { dilation: a.dilation, padding: a.padding, stride: a.stride }),
  F_fold: ([x], a) => F.fold(x, a.output_size, a.kernel_size, { dilation: a.dilation, padding: a.padding, stride: a.stride }),
  Tensor_unfold: ([x], a) => x.unfold(a.dimension, a.size, a.step),
  pixel_shuffle: ([x], a) => om.pixelShuffle(x, a.upscale_factor), // torch.pixel_shuffle (F's: tests/js/sort.test.mjs)
  pixel_unshuffle: ([x], a) => F.pixelUnshuffle(x, a.downscale_factor),
  meshgrid: (xs, a) => om.meshgrid(xs, { indexing: a.indexing }),
  masked_scatter: ([x, m, s]) => x.maskedScatter(m, s),
  index_put: (xs, a) => xs[0].clone().indexPut_(xs.slice(1, -1), xs.at(-1), a.accumulate),
  slice: ([x], a) => x.slice(a.dim, a.start, a.end, a.step),
  slice_scatter: ([x, s], a) => om.sliceScatter(x, s, a.dim, a.start, a.end, a.step), // the method: tests/js/inplace.test.mjs
  slice_assign: ([x, v], a) => {
    const y = x.clone();
    y.slice(a.dim, a.start, a.end, a.step).copy_(v);
    return y;
  },
  select_add: ([x, v], a) => {
    const y = x.clone();
    y.select(a.dim, a.index).add_(v);
    return y;
  },
  einsum: (xs, a) => om.einsum(a.equation, ...xs),
  reduce: ([x], a) => {
    const fn = camel(a.fn);
    if (a.dim === null) return x[fn]();
    if (['cumsum', 'cumprod'].includes(a.fn)) return x[fn](a.dim[0]);
    if (['max', 'min'].includes(a.fn)) return vi(x[fn](a.dim[0], a.keepdim));
    return ['argmax', 'argmin', 'prod', 'all', 'any'].includes(a.fn) ? x[fn](a.dim[0], a.keepdim) : x[fn](a.dim, a.keepdim);
  },
  // PyTorch's keyword arguments as a trailing options object: x.sum({ dim: -1, keepdim: true }), om.max(x, { dim: 1 })
  reduce_kw: ([x], a) => {
    const kw = { dim: a.dim.length > 1 ? a.dim : a.dim[0], keepdim: a.keepdim };
    const r = a.method ? x[camel(a.fn)](kw) : om[camel(a.fn)](x, kw);
    return ['max', 'min'].includes(a.fn) ? vi(r) : r;
  },
  split_kw: ([x], a) => x.split(a.size, { dim: a.dim }),
  method_kw: (xs, a) => {
    const kw = Object.fromEntries(Object.entries(a.kw).map(([k, v]) => [camel(k), v]));
    (a.tensors ?? []).forEach((n, k) => { kw[camel(n)] = xs[1 + k]; });
    if (['cat', 'stack'].includes(a.fn)) return om[a.fn](xs, kw);
    return xs[0][camel(a.fn)](kw);
  },
  chunk_kw: ([x], a) => om.chunk(x, a.chunks, { dim: a.dim }),
  scatter: ([x, i, src], a) => x.scatter(a.dim, i, src ?? fixtureNumber(a.value), a.reduce ? { reduce: a.reduce } : undefined),
};

// PyTorch computes these with its own approximations (or vectorised libm): the library's are
// within an ulp of the exact value (src/core/math.c), so the two agree within 2 ulps.
const APPROX = new Set(['sin', 'cos', 'tan', 'asin', 'acos', 'atan', 'sinh', 'cosh', 'asinh', 'acosh', 'atanh', 'atan2', 'cdist', 'pow', 'rpow',
  'arcsin', 'arccos', 'arctan', 'arcsinh', 'arccosh', 'arctanh', 'arctan2', 'inplace']);
// the keyword cases' ops that compute with exp, log or sqrt (PyTorch's vectorised ones): within 2 ulps as those
const APPROX_KW = new Set(['softmax', 'log_softmax', 'norm']);

const f32 = new Float32Array(1);
const i32 = new Int32Array(f32.buffer);
/** The float32 ulps between a and b (both finite): their bit patterns on one monotone integer line. */
function ulps(a, b) {
  const ord = (x) => { f32[0] = x; const i = i32[0]; return i < 0 ? -2147483648 - i : i; };
  return Math.abs(ord(a) - ord(b));
}

/** t equals PyTorch's output: bit for bit (NaN as NaN), or within 2 ulps where approx. */
function expectOutput(t, want, what, approx) {
  const same = (x, y) => Object.is(x, y) || (Number.isNaN(x) && Number.isNaN(y))
    || (approx && Number.isFinite(x) && Number.isFinite(y) && ulps(x, y) <= 2);
  expectFixture(t, want, what, same);
}

/**
 * The library's documented departure (docs/api.md, as tests/js/audit-promotion.test.mjs): where
 * with scalar branches only, one a JS number, gives float32 where PyTorch's Python ints give int64
 * (JS cannot tell 1 from 1.0); bigints give int64.
 */
function documented(c) {
  if (c.op === 'where_scalars' && c.outputs[0].dtype === 'int64') return [{ ...c.outputs[0], dtype: 'float32', data: c.outputs[0].data.map(Number) }];
  return c.outputs;
}

/**
 * topk: PyTorch leaves the order of equal values unspecified (its kernel's partial sort picks
 * any), the library takes them in index order (docs/api.md). So: the values as PyTorch's (-0 and 0
 * are one value there), each index within the dim and distinct, and the input at each index its value.
 */
function expectTopk(x, [values, indices], want, what) {
  assert.equal(values.dtype, want[0].dtype, `${what}: dtype`);
  assert.equal(indices.dtype, 'int64', `${what}: indices' dtype`);
  assert.deepEqual(values.shape, want[0].shape, `${what}: shape`);
  assert.deepEqual(indices.shape, want[1].shape, `${what}: indices' shape`);
  const got = [...values.toArray()].map(Number), w = want[0].data.map(fixtureNumber);
  assert.ok(got.every((v, i) => v === w[i] || (Number.isNaN(v) && Number.isNaN(w[i]))), `${what}: values [${got}] vs PyTorch [${w}]`);
  if (values.size === 0 || x.shape.length === 0) return;
  const dim = want.dim ?? -1;
  const picked = om.tidy(() => [...x.gather(dim, indices).toArray()].map(Number));
  assert.ok(picked.every((v, i) => Object.is(v, got[i]) || (Number.isNaN(v) && Number.isNaN(got[i]))), `${what}: x at the indices [${picked}] vs [${got}]`);
}

const label = (c) => `${c.op}(${c.inputs.map((x) => `${x.dtype}[${x.shape}]`).join(', ')}${Object.keys(c.args).length ? ', ' + JSON.stringify(c.args) : ''})`;

describe("issue 28's ops with the arguments ports use, as PyTorch's", () => {
  for (const c of fx.cases) {
    test(c.error ? `${label(c)} fails, as PyTorch's "${c.error.slice(0, 50)}"` : label(c), () => om.tidy(() => {
      const xs = c.inputs.map(input);
      if (c.error) {
        assert.throws(() => CALLS[c.op](xs, c.args), (e) => {
          assert.ok(e instanceof om.OmError, `${label(c)}: ${e}`);
          assert.ok(['IndexOutOfRange', 'InvalidArgument', 'ShapeMismatch', 'DtypeMismatch'].includes(e.kind), `${label(c)}: ${e.kind} ${e.message}`);
          // the op's name first, then ': ' or PyTorch's own words ('pixelShuffle expects ...')
          assert.match(e.message, /^[a-zA-Z_.]+(: | expects )\S/, `${label(c)}: ${e.message}`);
          return true;
        });
        return;
      }
      const out = [CALLS[c.op](xs, c.args)].flat();
      assert.equal(out.length, c.outputs.length);
      const want = documented(c);
      if (c.op === 'topk') return expectTopk(xs[0], out, Object.assign(want, { dim: c.args.dim }), label(c));
      const approx = APPROX.has(c.op) || (c.op === 'method_kw' && APPROX_KW.has(c.args.fn));
      out.forEach((t, i) => expectOutput(t, want[i], `${label(c)} output ${i}`, approx));
    }));
  }
});

describe('what PyTorch 1.13 leaves undefined or refuses, as the library documents it', () => {
  test('shifts outside 0..63: 0 to the left, the sign to the right (PyTorch 2\'s rule)', () => om.tidy(() => {
    const a = om.tensor([7n, -7n, 7n, -7n, 1n]), s = om.tensor([64n, 64n, 100n, -1n, -1n]);
    assert.deepEqual([...om.bitwiseLeftShift(a, s).toArray()], [0n, 0n, 0n, 0n, 0n]);
    assert.deepEqual([...om.bitwiseRightShift(a, s).toArray()], [0n, -1n, 0n, -1n, 0n]);
  }));
  test('INT64_MIN fmod and remainder -1 are 0 (C leaves it undefined; PyTorch 1.13 traps); an empty fmod by 0 is empty', () => om.tidy(() => {
    const m = om.tensor([-(2n ** 63n), 5n]);
    assert.deepEqual([...m.fmod(-1).toArray()], [0n, 0n]);
    assert.deepEqual([...m.remainder(om.tensor([-1n, -1n])).toArray()], [0n, 0n]);
    // an empty output divides nothing, so a zero divisor is no error there (as PyTorch)
    const e = om.zeros([0, 2], { dtype: 'int64' }).fmod(0);
    assert.deepEqual([e.dtype, e.shape], ['int64', [0, 2]]);
  }));
  test('where with bigint scalar branches gives int64, as PyTorch\'s ints', () => om.tidy(() => {
    const w = om.where(om.tensor([true, false]), 1n, 0n);
    assert.equal(w.dtype, 'int64');
    assert.deepEqual([...w.toArray()], [1n, 0n]);
  }));
  test('bucketize and searchsorted refuse outInt32: true (no int32 dtype) and take false as int64', () => om.tidy(() => {
    const c = fx.cases.find((k) => k.op === 'bucketize' && k.args.right === true && k.inputs[0].shape.join() === '2,3');
    const [x, b] = c.inputs.map(input);
    expectOutput(om.bucketize(x, b, { right: true, outInt32: false }), c.outputs[0], 'bucketize outInt32: false');
    for (const call of [() => om.bucketize(x, b, { outInt32: true }), () => om.searchsorted(b, x, { outInt32: true })]) {
      assert.throws(call, (e) => e instanceof om.OmError && e.kind === 'DtypeMismatch' && /^(bucketize|searchsorted): outInt32 asks for int32/.test(e.message));
    }
  }));
  test('topk takes equal values in index order, largest or smallest first', () => om.tidy(() => {
    const [v, i] = om.tensor([3, 1, 3, 2, 1, 3]).topk(4, { largest: false });
    assert.deepEqual([...v.toArray()], [1, 1, 2, 3]);
    assert.deepEqual([...i.toArray()], [1n, 4n, 3n, 0n]);
  }));
});

describe('traced: onnxruntime-web and the Session agree with eager at other sizes', () => {
  test('sort, argsort, amax and amin of bool, topk smallest with ties, roll over two dims, bucketize(right)', () => withTraced((keep, trace) => {
    const m = om.tensor([[true, false, true, false, false], [false, true, true, false, true]]);
    const x = om.tensor([[3, 1, 3, 2, 1], [0, -0, 0, NaN, -1]]);
    const f = (b, t) => {
      const [v, i] = b.sort({ dim: -1 });
      return {
        v, i, desc: b.argsort({ dim: 0, descending: true }), small: t.topk(2, { largest: false })[1],
        rolled: t.roll([-1, 7], [0, -1]), buckets: om.bucketize(t, om.tensor([0, 1, 1, 3]), { right: true }),
        any: b.amax(0), all: b.amin(-1, true), bmax: b.max(), bmin: b.min(1, true).values,
      };
    };
    trace(f, { b: [m, [null, 'n']], t: [x, [null, 'n']] });
  }));
  test('shifts of bool beside integers, bucketize of bool, Tensor.where, the in-place sin_ and fmod_, arctan2', () => withTraced((keep, trace) => {
    const m = om.tensor([[true, false, true, false, false], [false, true, true, false, true]]);
    const x = om.tensor([[3, 1, -3, 2, 1], [0, -0, 0.5, -2.5, -1]]);
    const f = (b, t) => ({
      shl: b.bitwiseLeftShift(3), shr: om.bitwiseRightShift(-8n, b), buckets: om.bucketize(b, om.tensor([0n, 1n]), { right: true }),
      kept: t.where(b, -1), sin: t.clone().sin_(), mod: t.clone().fmod_(-2), angle: t.arctan2(b.float()),
    });
    trace(f, { b: [m, [null, 'n']], t: [x, [null, 'n']] });
  }));
});
