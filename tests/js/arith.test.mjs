// div's rounding modes, floorDivide, the int64 shifts, addcmul, addcdiv, lerp and the small
// functions ports call by name (js/ops/arith.js, js/ops/table.js): values against
// tests/js/fixtures/pytorch/ops/arith.json (written by tools/pytorch_arith.py), PyTorch's refusals
// as OmError kinds, in-place forms, gradients by finite differences, and traced models run in
// onnxruntime-web and the Session at other sizes against eager runs; diff, takeAlongDim, indexFill
// and indexCopy too.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as om from 'onemodel';
import { memoryHooks, vals, gradcheck, throwsKind, moduleOf, withTraced, expectFixture, fixtureNumber } from './helpers.mjs';

memoryHooks();

const fx = JSON.parse(readFileSync(new URL('./fixtures/pytorch/ops/arith.json', import.meta.url), 'utf8'));

/** A fixture operand: a tensor, or a Python scalar as a JS number. */
function operand(a) {
  if (a === null) return null; // an optional argument left out
  if (Array.isArray(a)) return a.map(operand); // a list argument (dims, indices)
  if ('scalar' in a) return fixtureNumber(a.scalar);
  const data = a.dtype === 'int64' ? a.data.map((v) => BigInt(v)) : a.data.map(fixtureNumber);
  return om.tensor(data, { dtype: a.dtype, shape: a.shape });
}

// PyTorch's op names and keyword arguments as the library's calls
const CALLS = {
  div: (a, b, kw) => om.div(a, b, { roundingMode: kw.rounding_mode ?? null }),
  floor_divide: (a, b) => om.floorDivide(a, b),
  bitwise_left_shift: (a, b) => om.bitwiseLeftShift(a, b),
  bitwise_right_shift: (a, b) => om.bitwiseRightShift(a, b),
  addcmul: (x, t1, t2, kw) => om.addcmul(x, t1, t2, kw),
  addcdiv: (x, t1, t2, kw) => om.addcdiv(x, t1, t2, kw),
  lerp: (a, e, w) => om.lerp(a, e, w),
  xlogy: (a, b) => om.xlogy(a, b),
  nan_to_num: (x, kw) => om.nanToNum(x, kw),
  count_nonzero: (x, kw) => om.countNonzero(x, kw.dim),
  aminmax: (x, kw) => {
    const r = om.aminmax(x, kw);
    assert.deepEqual([r.min, r.max], [...r], 'a named tuple: [min, max], also .min and .max');
    return [r.min, r.max];
  },
  logcumsumexp: (x, d) => om.logcumsumexp(x, d),
  trunc: (x) => om.trunc(x),
  fix: (x) => om.fix(x),
  sgn: (x) => om.sgn(x),
  fliplr: (x) => om.fliplr(x),
  flipud: (x) => om.flipud(x),
  rot90: (x, ...rest) => om.rot90(x, ...rest.slice(0, -1)), // k and dims as given (the last is the kwargs)
  movedim: (x, s, d) => om.movedim(x, s, d),
  moveaxis: (x, s, d) => om.moveaxis(x, s, d),
  narrow_copy: (x, d, s, n) => om.narrowCopy(x, d, s, n),
  tensor_split: (x, s, kw) => om.tensorSplit(x, s, kw.dim),
  hsplit: (x, s) => om.hsplit(x, s),
  vsplit: (x, s) => om.vsplit(x, s),
  dsplit: (x, s) => om.dsplit(x, s),
  linspace: (a, b, n) => om.linspace(a, b, n),
  eye: (n, m) => om.eye(n, m),
  baddbmm: (x, b1, b2, kw) => om.baddbmm(x, b1, b2, kw),
  mm: (a, b) => om.mm(a, b),
  mv: (a, b) => a.mv(b),
  hstack: (ts) => om.hstack(ts),
  vstack: (ts) => om.vstack(ts),
  exp2: (x) => om.exp2(x),
  log2: (x) => x.log2(),
  log10: (x) => om.log10(x),
  reciprocal: (x) => om.reciprocal(x),
  frac: (x) => x.frac(),
  deg2rad: (x) => om.deg2rad(x),
  rad2deg: (x) => x.rad2deg(),
  clamp_min: (x, v) => om.clampMin(x, v),
  clamp_max: (x, v) => x.clampMax(v),
  hypot: (a, b) => om.hypot(a, b),
  logaddexp: (a, b) => a.logaddexp(b),
  fmax: (a, b) => om.fmax(a, b),
  fmin: (a, b) => a.fmin(b),
  isclose: (a, b, kw) => om.isclose(a, b, { rtol: kw.rtol, atol: kw.atol, equalNan: kw.equal_nan }),
  logit: (x, ...rest) => om.logit(x, ...rest.slice(0, -1)),
  nansum: (x, ...rest) => om.nansum(x, ...rest.slice(0, -1)),
  nanmean: (x, d) => x.nanmean(d),
  trace: (x) => x.trace(), // a method only: om.trace is the tracer
  diff: (x, ...rest) => (rest.length > 2 ? om.diff(x, ...rest.slice(0, -1)) : x.diff(...rest.slice(0, -1))),
  index_fill: (x, d, i, v) => x.indexFill(d, i, v),
  index_copy: (x, d, i, src) => om.indexCopy(x, d, i, src),
  take_along_dim: (x, i, ...rest) => (rest.length > 1 ? x.takeAlongDim(i, ...rest.slice(0, -1)) : om.takeAlongDim(x, i)),
};

// What each PyTorch refusal is here: the kind, and the message's start
const REFUSALS = {
  'div trunc int64 by zero': ['InvalidArgument', /^div: integer division by zero \(element 1 of the divisor\)$/],
  'div floor int64 by zero': ['InvalidArgument', /^div: integer division by zero \(element 1 of the divisor\)$/],
  'div trunc bool': ['DtypeMismatch', /^div: takes float32, int64 or float64, not bool$/],
  'div floor bool': ['DtypeMismatch', /^div: takes float32, int64 or float64, not bool$/],
  'bitwise_left_shift of floats': ['DtypeMismatch', /^bitwiseLeftShift: input must be int64, not float32/],
  'addcdiv int64': ['DtypeMismatch', /^addcdiv: Integer division with addcdiv is no longer supported/],
  'lerp int64': ['DtypeMismatch', /^lerp: input must be floating point \(float32 or float64\), not int64$/],
  'aminmax empty': ['InvalidArgument', /^aminmax: aminmax\(\): cannot compute aminmax over an empty dimension/],
  'fliplr 1-D': ['InvalidArgument', /^fliplr: Input must be >= 2-d\.$/],
  'rot90 same dims': ['InvalidArgument', /^rot90: expected rotation dims to be different, but got dim0 = 1 and dim1 = 1$/],
  'hsplit not divisible': ['InvalidArgument', /^hsplit: torch\.hsplit attempted to split along dimension 1, but the size of the dimension 10 is not divisible by the split_size 3!$/],
  'dsplit 2-D': ['InvalidArgument', /^dsplit: torch\.dsplit requires a tensor with at least 3 dimension, but got a tensor with 2 dimensions!$/],
  'diff 0-d': ['InvalidArgument', /^diff: diff expects input to be at least one-dimensional$/],
  'diff prepend of fewer dims': ['InvalidArgument', /^diff: diff expects prepend or append to be the same dimension as input \(prepend has 1 dims, input 2\)$/],
  'take_along_dim rank': ['InvalidArgument', /^takeAlongDim: input and indices should have the same number of dimensions, but got 2 dimensions for input, and 1 dimensions for indices$/],
  'take_along_dim float indices': ['DtypeMismatch', /^takeAlongDim: dtype of indices should be int64 \(Long\) but got float32$/],
  'take_along_dim out of range': ['IndexOutOfRange', /^gather: index 4 is out of range for dim 1 of size 4/],
  'index_fill out of range': ['IndexOutOfRange', /^indexFill: index 3 is out of bounds for dimension 1 with size 3$/],
  'index_fill 2-D index': ['ShapeMismatch', /^indexFill: Index has to be a vector\/scalar, got 2 dims$/],
  'index_fill 1-D value': ['ShapeMismatch', /^indexFill: only supports a 0-dimensional value tensor, but got tensor with 1 dimension\(s\)$/],
  'index_copy negative index': ['IndexOutOfRange', /^indexCopy: index -1 is out of bounds for dimension 1 with size 3$/],
  'index_copy dtypes': ['DtypeMismatch', /^indexCopy: self and source expected to have the same dtype, but got \(self\) float32 and \(source\) int64$/],
  'index_copy slice shapes': ['ShapeMismatch', /^indexCopy: source \[2,2,3\] must be input \[2,3,4\] with the number of indices \(2\) at dim 1, i\.e\. \[2,2,4\]$/],
  'index_copy float index': ['DtypeMismatch', /^indexCopy: Expected an int64 \(long\) tensor for index, but got float32$/],
};

// ops whose steps PyTorch's kernels may round differently (a fused multiply-add, a running sum)
const TOLERANCE = {
  lerp: 4e-7, logcumsumexp: 1e-6, addcmul: 2.4e-7, addcdiv: 2.4e-7, baddbmm: 1e-6, mm: 1e-6, mv: 1e-6,
  // libm's exp2, log2, log10, hypot, log1p in PyTorch against the library's compositions
  exp2: 4e-7, log2: 4e-7, log10: 4e-7, hypot: 4e-7, logaddexp: 4e-7, logit: 4e-7, deg2rad: 2.4e-7, rad2deg: 2.4e-7,
};

describe('arithmetic against PyTorch', () => {
  test('every fixture case: values and dtypes (exact but where noted), or the refusal', () => {
    const refused = new Set();
    for (const c of fx.cases) {
      om.tidy(() => {
        const call = CALLS[c.op];
        assert.ok(call, `no call for ${c.op}`);
        const args = c.args.map(operand);
        if (c.error) {
          const [kind, re] = REFUSALS[c.name] ?? [];
          assert.ok(kind, `${c.name}: PyTorch refuses (${c.error}); say how the library does`);
          throwsKind(() => call(...args, c.kwargs), kind, re);
          refused.add(c.name);
          return;
        }
        const got = call(...args, c.kwargs);
        const outs = Array.isArray(c.out) ? c.out : [c.out];
        const gots = Array.isArray(got) ? got : [got];
        assert.equal(gots.length, outs.length, `${c.name}: outputs`);
        outs.forEach((w, i) => expectFixture(gots[i], w, `${c.name} [${i}]`, TOLERANCE[c.op] ?? 0));
      });
    }
    assert.deepEqual([...refused].sort(), Object.keys(REFUSALS).sort());
  });

  test('floor division is not floor(a / b): a quotient just below an integer stays below', () => om.tidy(() => {
    // 1 / 0.1 is 10 in float32 but the exact quotient is below 10: Python's 1 // 0.1 is 9
    assert.deepEqual(vals(om.div(om.tensor([1, -1]), 0.1, { roundingMode: 'floor' })), [9, -10]);
    assert.deepEqual(vals(om.floor(om.div(om.tensor([1]), 0.1))), [10]);
    assert.deepEqual(vals(om.tensor([7, -7]).floorDivide(2)), [3, -4]);
    assert.equal(om.tensor([7n]).floorDivide(2).dtype, 'int64');
    assert.equal(om.tensor([7n]).div(2).dtype, 'float32');
    assert.ok(Object.is(vals(om.div(om.tensor([-0.5]), 3, { roundingMode: 'floor' }))[0], -1));
    assert.ok(Object.is(vals(om.div(om.tensor([0.5]), -3, { roundingMode: 'trunc' }))[0], -0));
  }));

  test('in-place forms: div_ with a rounding mode keeps int64, the others write through', () => om.tidy(() => {
    const i = om.tensor([7n, -7n, 9n]);
    i.div_(2, { roundingMode: 'floor' });
    assert.deepEqual(vals(i), [3, -4, 4]);
    i.floorDivide_(om.tensor([2n, 3n, -2n]));
    assert.deepEqual(vals(i), [1, -2, -2]);
    i.bitwiseLeftShift_(3);
    assert.deepEqual(vals(i), [8, -16, -16]);
    i.bitwiseRightShift_(om.tensor([1n, 2n, 5n]));
    assert.deepEqual(vals(i), [4, -4, -1]);
    throwsKind(() => i.div_(2), 'DtypeMismatch', /^div_: result type Float can't be cast to the desired output type Long$/);
    const x = om.tensor([1, 2]);
    x.addcmul_(om.tensor([3, 4]), om.tensor([2, 2]), { value: 0.5 });
    assert.deepEqual(vals(x), [4, 6]);
    x.addcdiv_(om.tensor([3, 4]), om.tensor([2, 8]));
    assert.deepEqual(vals(x), [5.5, 6.5]);
    x.lerp_(om.tensor([7.5, 8.5]), 0.5);
    assert.deepEqual(vals(x), [6.5, 7.5]);
    x.multiply_(2).subtract_(1);
    assert.deepEqual(vals(x), [12, 14]);
    const n = om.tensor([NaN, Infinity]);
    n.nanToNum_(1, 2);
    assert.deepEqual(vals(n), [1, 2]);
  }));

  test('the other names are the same ops', () => om.tidy(() => {
    const a = om.tensor([-1.5, 2, 0]), b = om.tensor([2, 2, -1]);
    for (const [alias, op] of [['absolute', 'abs'], ['negative', 'neg'], ['sgn', 'sign'], ['fix', 'trunc']]) {
      assert.deepEqual(vals(om[alias](a)), vals(om[op](a)), alias);
      assert.deepEqual(vals(a[alias]()), vals(a[op]()), alias);
    }
    for (const [alias, op] of [['multiply', 'mul'], ['subtract', 'sub'], ['greater', 'gt'], ['greaterEqual', 'ge'], ['less', 'lt'],
      ['lessEqual', 'le'], ['notEqual', 'ne'], ['divide', 'div'], ['trueDivide', 'div']]) {
      assert.deepEqual(vals(om[alias](a, b)), vals(om[op](a, b)), alias);
      assert.deepEqual(vals(a[alias](b)), vals(a[op](b)), alias);
    }
    assert.deepEqual(vals(om.max(a, b)), [2, 2, 0]);
    assert.deepEqual(vals(om.min(a, b)), [-1.5, 2, -1]);
    assert.deepEqual(vals(om.exp(om.tensor([0]))), [1]);
    assert.deepEqual(vals(om.sum(om.tensor([[1, 2], [3, 4]]), 1)), [3, 7]);
  }));

  test('errors name the function and the argument', () => om.tidy(() => {
    const x = om.tensor([1, 2]);
    throwsKind(() => om.div(x, 2, { roundingMode: 'round' }), 'InvalidArgument', /^div: roundingMode must be 'trunc', 'floor' or null, got a string \("round"\)$/);
    throwsKind(() => x.div(2, { rounding_mode: 'floor' }), 'InvalidArgument', /^div: unknown option 'rounding_mode' \(expected roundingMode\)$/);
    throwsKind(() => om.addcmul(x, x, x, { value: 'a' }), 'InvalidArgument', /^addcmul: value must be a number, got a string/);
    throwsKind(() => om.addcmul(x, x, 'x'), 'InvalidArgument', /^addcmul: tensor2 must be a Tensor/);
    throwsKind(() => om.lerp(x, x, 'w'), 'InvalidArgument', /^lerp: weight must be a Tensor or a number, got a string/);
    throwsKind(() => om.lerp(x, x.to('float64'), 0.5), 'DtypeMismatch', /^lerp: expected dtype float32 for `end` but got dtype float64$/);
    throwsKind(() => om.bitwiseLeftShift(1, 2), 'InvalidArgument', /^bitwiseLeftShift: input or other must be a Tensor$/);
    throwsKind(() => om.bitwiseRightShift(om.tensor([1n]), 1.5), 'InvalidArgument', /^bitwiseRightShift: other must be an int64 Tensor or an integer, got .*1\.5/);
    throwsKind(() => om.movedim(om.zeros([2, 3]), [0, 1], [1]), 'InvalidArgument', /^movedim: Invalid source or destination dims/);
    throwsKind(() => om.movedim(om.zeros([2, 3]), 2, 0), 'IndexOutOfRange', /^movedim: dim 2 is out of range for a tensor of 2 dims$/);
    throwsKind(() => om.movedim(om.zeros([2, 3]), [0, 0], [0, 1]), 'InvalidArgument', /^movedim: repeated dim in `source`/);
    throwsKind(() => om.rot90(om.zeros([2, 3]), 1, [0, 2]), 'IndexOutOfRange', /^rot90: dims \[0, 2\] are out of range for a tensor of 2 dims$/);
    throwsKind(() => om.tensorSplit(om.zeros([4]), 0), 'InvalidArgument', /^tensorSplit: number of sections must be larger than 0, got 0$/);
    throwsKind(() => om.tensorSplit(om.zeros([]), 2), 'InvalidArgument', /^tensorSplit: tensor_split expected at least a 1-dimensional tensor/);
    throwsKind(() => om.logcumsumexp(om.tensor([1n]), 0), 'DtypeMismatch', /^logcumsumexp: takes float32 or float64, not int64$/);
    throwsKind(() => om.nanToNum(x, 'a'), 'InvalidArgument', /^nanToNum: nan must be a number, got a string/);
  }));
});

describe("more of torch's functions by name", () => {
  test('errors name the function and the argument', () => om.tidy(() => {
    const m = om.zeros([2, 3]), b = om.zeros([2, 3, 4]);
    throwsKind(() => om.baddbmm(b, m, b), 'ShapeMismatch', /^baddbmm: batch1 must be a 3D tensor, got 2 dims$/);
    throwsKind(() => om.baddbmm(b, b, b, { beta: '1' }), 'InvalidArgument', /^baddbmm: beta must be a number, got a string/);
    throwsKind(() => om.baddbmm(b, b, b, { gamma: 1 }), 'InvalidArgument', /^baddbmm: unknown option 'gamma'/);
    throwsKind(() => om.mm(b, m), 'ShapeMismatch', /^mm: self must be a matrix, got 3 dims$/);
    throwsKind(() => om.mm(m, b), 'ShapeMismatch', /^mm: mat2 must be a matrix, got 3 dims$/);
    throwsKind(() => om.mv(m, m), 'ShapeMismatch', /^mv: expected a matrix and a vector, got 2 and 2 dims$/);
    throwsKind(() => om.hstack([]), 'InvalidArgument', /^hstack: expects a non-empty list of Tensors$/);
    throwsKind(() => om.vstack(m), 'InvalidArgument', /^vstack: expects a non-empty list of Tensors$/);
    throwsKind(() => om.frac(om.tensor([1n])), 'DtypeMismatch', /^frac: takes float32 or float64, not int64$/);
    throwsKind(() => om.logit(m, '0.1'), 'InvalidArgument', /^logit: eps must be a number, got a string/);
    throwsKind(() => om.linspace(0, 1, -1), 'InvalidArgument', /^linspace: number of steps must be non-negative$/);
    throwsKind(() => om.linspace('0', 1, 2), 'InvalidArgument', /^linspace: start must be a number, got a string/);
    throwsKind(() => om.eye(-1), 'InvalidArgument', /^eye: n and m must be greater or equal to 0, got -1 and -1$/);
    throwsKind(() => b.trace(), 'InvalidArgument', /^trace: expected a matrix, but got tensor with dim 3$/);
  }));

  test('allclose and equal answer booleans; allclose reads values, so a trace refuses it', () => om.tidy(() => {
    const a = om.tensor([1, 2, NaN]), c = om.tensor([1, 2.000001, NaN]);
    assert.equal(om.allclose(a, c), false);
    assert.equal(a.allclose(c, { equalNan: true }), true);
    assert.equal(om.equal(a.narrow(0, 0, 2), c.narrow(0, 0, 2)), false);
    assert.equal(om.equal(a.narrow(0, 0, 2), a.narrow(0, 0, 2).clone()), true);
    assert.equal(om.equal(a, a.reshape(3, 1)), false);
    assert.throws(() => om.trace((x) => (om.allclose(x, x) ? x.add(1) : x), { x: om.ones([2]) }),
      (e) => e instanceof om.TraceError && e.kind === 'DataDependent');
  }));

  test('gradients by finite differences: baddbmm, hypot, logaddexp, fmax, reciprocal, frac', () => om.tidy(() => {
    gradcheck((x, p, q) => om.baddbmm(x, p, q, { beta: 0.5, alpha: -2 }), om.randn([2, 3, 4], { seed: 8 }), om.randn([2, 3, 2], { seed: 9 }), om.randn([2, 2, 4], { seed: 10 }));
    gradcheck((a, b) => om.hypot(a, b).add(om.logaddexp(a, b)).add(om.fmax(a, b)), om.randn([5], { seed: 11 }), om.randn([5], { seed: 12 }));
    gradcheck((a) => a.reciprocal().add(a.mul(3).frac()), om.tensor([0.6, 0.75, 1.1, 1.4])); // 3a away from integers (frac's steps)
  }));
});

describe('diff and takeAlongDim', () => {
  test('keywords, and the errors PyTorch 1.13 does not raise', () => om.tidy(() => {
    const x = om.tensor([[1, 4, 9], [2, 3, 5]]);
    assert.deepEqual(vals(x.diff({ dim: 0 })), vals(om.diff(x, 1, 0)));
    assert.deepEqual(vals(om.diff(x, { n: 2, append: om.tensor([[0], [1]]) })), [2, -14, 1, -6]);
    assert.deepEqual(vals(x.takeAlongDim(om.tensor([[2n], [0n]]), { dim: 1 })), [9, 2]);
    // PyTorch 2 refuses a negative order (1.13 returned the input): so does the library
    throwsKind(() => x.diff(-1), 'InvalidArgument', /^diff: order must be non-negative but got -1$/);
    throwsKind(() => x.diff(1, 2), 'IndexOutOfRange', /^diff: dim 2 is out of range for a tensor of 2 dims$/);
    throwsKind(() => x.diff(1, 0, 'a'), 'InvalidArgument', /^diff: prepend must be a Tensor/);
    throwsKind(() => x.diff({ order: 1 }), 'InvalidArgument', /^diff: unknown option 'order' \(expected n, dim, prepend, append\)$/);
    throwsKind(() => x.takeAlongDim(om.tensor([[0n]]), -3), 'IndexOutOfRange', /^takeAlongDim: dim -3 is out of range for a tensor of 2 dims$/);
    throwsKind(() => x.takeAlongDim(om.tensor([[0n, 1n]]), 0), 'ShapeMismatch', /^takeAlongDim: input \[2,3\] and indices \[1,2\] do not broadcast off dim 0 \(3 and 2 at dim 1\)$/);
    throwsKind(() => om.takeAlongDim(x, [0]), 'InvalidArgument', /^takeAlongDim: indices must be a Tensor/);
  }));

  test('gradients by finite differences', () => om.tidy(() => {
    gradcheck((a, p) => om.diff(a, 2, 1, p), om.randn([2, 5], { seed: 13 }), om.randn([2, 1], { seed: 14 }));
    const idx = om.tensor([[[0n, 2n, 2n]], [[1n, 0n, 1n]]]); // a repeated index: its gradients add
    gradcheck((a) => om.takeAlongDim(a, idx, 2), om.randn([2, 3, 4], { seed: 15 }).narrow(2, 0, 3).contiguous());
  }));

  test('traced over a symbolic axis: diff along it (slices to the end and to -1), takeAlongDim of argsort, broadcast', () => withTraced((keep, trace) => {
    // one output, so the trace fits one output's extents at the other sizes
    const model = moduleOf((x, i) => om.diff(x, 2, 0).sum(0).add(x.takeAlongDim(x.argsort(1), 1).mul(x.diff(1, 0, x.narrow(0, 0, 1))).sum(0))
      .add(x.unsqueeze(1).takeAlongDim(i.unsqueeze(0), 2).sum([0, 1])));
    trace(model, { x: [om.randn([4, 6], { seed: 16 }), ['n', null]], i: om.tensor([[0n], [2n]]) });
  }));
});

describe('indexFill and indexCopy', () => {
  test('in place, keywords, errors', () => om.tidy(() => {
    const x = om.zeros([2, 3]);
    assert.equal(x.indexFill_(1, om.tensor([0n, -1n]), 4), x);
    x.indexCopy_({ dim: 0, index: om.tensor([1n]), source: om.tensor([[7, 8, 9]]) });
    assert.deepEqual(vals(x), [4, 0, 4, 7, 8, 9]);
    assert.deepEqual(vals(om.indexFill(x, { dim: 0, index: om.tensor(0n), value: -1 })), [-1, -1, -1, 7, 8, 9]);
    // a 0-d value tensor is read as PyTorch's Scalar: cast to the input's dtype (1.5 into int64 is 1)
    assert.deepEqual(vals(om.zeros([2], { dtype: 'int64' }).indexFill_(0, om.tensor([0n]), om.tensor(1.5))), [1, 0]);
    throwsKind(() => x.indexFill(2, om.tensor([0n]), 1), 'IndexOutOfRange', /^indexFill: dim 2 is out of range for a tensor of 2 dims$/);
    throwsKind(() => x.indexFill(0, om.tensor([0n]), 'a'), 'InvalidArgument', /^indexFill: value must be a number or a 0-d Tensor, got a string/);
    throwsKind(() => x.indexFill(0, [0], 1), 'InvalidArgument', /^indexFill: index must be a Tensor/);
    throwsKind(() => x.indexCopy(0, om.tensor([0n]), [1, 2, 3]), 'InvalidArgument', /^indexCopy: source must be a Tensor/);
    throwsKind(() => x.indexCopy(0, om.tensor([2n]), om.ones([1, 3])), 'IndexOutOfRange', /^indexCopy: index 2 is out of bounds for dimension 0 with size 2$/);
  }));

  test('gradients by finite differences: input (zero at the written slices), value, source', () => om.tidy(() => {
    gradcheck((a, v) => a.indexFill(1, om.tensor([2n, -4n]), v), om.randn([2, 4, 3], { seed: 17 }), om.tensor(0.3));
    gradcheck((a, s) => om.indexCopy(a, 2, om.tensor([2n, 0n]), s), om.randn([2, 4, 3], { seed: 18 }), om.randn([2, 4, 2], { seed: 19 }));
  }));

  test('traced over a symbolic axis (negative indices wrapped in the graph)', () => withTraced((keep, trace) => {
    const model = moduleOf((x, s) => x.indexFill(1, om.tensor([-1n, 0n]), -2.5).add(x.indexCopy(1, om.tensor([1n, 2n]), s.mul(3))));
    trace(model, { x: [om.randn([3, 4], { seed: 20 }), ['n', null]], s: [om.randn([3, 2], { seed: 21 }), ['n', null]] });
  }));
});

describe('arithmetic gradients', () => {
  test('addcmul, addcdiv, lerp (both forms, tensor weight), xlogy, logcumsumexp by finite differences', () => om.tidy(() => {
    // fresh leaves for each check (gradcheck accumulates into .grad)
    const x = () => om.randn([2, 3], { seed: 1 }), t1 = () => om.randn([2, 3], { seed: 2 }), t2 = () => om.rand([3], { seed: 3 }).add(0.5);
    gradcheck((a, b, c) => om.addcmul(a, b, c, { value: 0.7 }), x(), t1(), t2());
    gradcheck((a, b, c) => a.addcdiv(b, c, { value: -1.3 }), x(), t1(), t2());
    gradcheck((a, b) => om.lerp(a, b, 0.3).add(om.lerp(a, b, 0.8)), x(), t1());
    gradcheck((a, b, w) => om.lerp(a, b, w), x(), t1(), om.tensor([-0.4, 0.45, 0.9]));
    gradcheck((a, b) => om.xlogy(a, b), x(), t2());
    gradcheck((a) => om.logcumsumexp(a, 1), x());
  }));

  test('a rounded quotient has a zero gradient (as PyTorch)', () => om.tidy(() => {
    const a = om.randn([2, 3], { seed: 4 }), b = om.rand([3], { seed: 5 }).add(0.5);
    a.requiresGrad = true;
    b.requiresGrad = true;
    om.div(a, b, { roundingMode: 'floor' }).add(om.div(a, b, { roundingMode: 'trunc' })).sum().backward();
    assert.deepEqual(vals(a.grad), [0, 0, 0, 0, 0, 0]);
    assert.deepEqual(vals(b.grad), [0, 0, 0]);
  }));
});

describe('arithmetic traced', () => {
  test('float floor and trunc division, lerp (a tensor weight), addcdiv over a symbolic axis', () => withTraced((keep, trace) => {
    // one sum, so the trace fits one output's extents at the other sizes (a few seconds)
    const model = moduleOf((a, b) => om.div(a, b, { roundingMode: 'floor' }).add(a.div(b, { roundingMode: 'trunc' }).mul(100))
      .add(om.lerp(a, b, b.sigmoid())).add(om.addcdiv(a, a, b, { value: 0.5 })));
    const a = om.tensor([[1, -1, 7.5, -7.5, 0.3, 6], [5, -5, 1e-30, -0.3, 2, 9]]);
    const b = om.tensor([0.1, 0.1, -2, 2, -0.1, 3]);
    trace(model, { a: [a, ['n', null]], b });
  }));

  test('int64 floor and trunc division and shifts (values past 2^53) over a symbolic axis', () => withTraced((keep) => {
    const model = moduleOf((a, b) => om.div(a, b, { roundingMode: 'floor' }).add(om.div(a, b, { roundingMode: 'trunc' }).mul(3))
      .add(om.bitwiseRightShift(a, b.abs())).add(om.bitwiseLeftShift(a, b.abs().add(40))));
    const big = 2n ** 60n + 12345n;
    const a = om.tensor([[7n, -7n, big, -big], [-9n, 9n, 1n, -1n], [0n, 5n, -5n, big]]);
    const b = om.tensor([2n, -3n, 7n, -5n]);
    const tm = om.trace(model, { a: [a, ['n', null]], b });
    keep(tm, { a, b }, model.forward(a, b), undefined, model);
    for (const n of [1, 2, 5]) {
      const an = om.tensor(Array.from({ length: n * 4 }, (_, k) => BigInt(k * 7919 - 20000) * (k % 3 ? 1n : 2n ** 40n)), { shape: [n, 4], dtype: 'int64' });
      keep(tm, { a: an, b }, model.forward(an, b), `n=${n}`);
    }
  }));

  test('the small functions traced: rot90, movedim, fliplr, nanToNum, xlogy, trunc, countNonzero, logcumsumexp', () => withTraced((keep, trace) => {
    const model = moduleOf((x) => om.rot90(x, 1, [1, 2]).movedim(0, 2).fliplr().flipud().sum([1, 2])
      .add(om.nanToNum(x.log()).sum([0, 1])).add(om.xlogy(x.abs(), x.abs()).sum([0, 1])).add(om.trunc(x.mul(3)).sum([0, 1]))
      .add(om.countNonzero(x.gt(0), [0, 1])).add(om.logcumsumexp(x, 2).sum([0, 1])));
    trace(model, { x: [om.randn([2, 3, 4], { seed: 6 }), ['b', null, null]] });
  }));
});
