// PyTorch's type promotion and the elementwise ops' values, against tests/js/fixtures/pytorch/ops/
// elementwise.json (written by tools/pytorch_elementwise.py from PyTorch itself): every binary op
// on every pair of a tensor (float32, int64, bool) and a tensor or scalar gives PyTorch's dtype and
// values, or fails where PyTorch raises; where with tensor and scalar branches (both scalars too);
// the trigonometric and hyperbolic functions on float32 and int64 inputs. Then the same mixes
// traced: Cast nodes make the graph run in onnxruntime-web and in the Session at other sizes.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as om from 'onemodel';
import { memoryHooks, vals, withTraced } from './helpers.mjs';

memoryHooks();
const fx = JSON.parse(readFileSync(new URL('./fixtures/pytorch/ops/elementwise.json', import.meta.url), 'utf8'));
const num = (v) => (v === 'NaN' ? NaN : v === 'Infinity' ? Infinity : v === '-Infinity' ? -Infinity : Number(v));

/** PyTorch's scalars in JS: a float is a number with a fraction, an int a bigint, a bool a boolean. */
const SCALARS = { py_float: 2.5, py_int: 2n, py_bool: true };
function operand(kind) {
  if (kind in SCALARS) return SCALARS[kind];
  const o = fx.operands[kind];
  return om.tensor(o.data.map(num).map((v) => (o.dtype === 'int64' ? BigInt(v) : o.dtype === 'bool' ? Boolean(v) : v)), { dtype: o.dtype });
}
const camel = (op) => op.replace(/_(\w)/g, (_, c) => c.toUpperCase());
const call = (c, a, b) => (c.op === 'where' ? om.where(operand('cond'), a, b) : a[camel(c.op)](b));

/** Floats within 2.5e-7 relative (an ulp or two: pow, atan2 and the trigonometric functions
 *  round their own double results, PyTorch's libm may differ by an ulp), NaN as NaN; others exact. */
function expectLike(t, c, what) {
  assert.equal(t.dtype, c.dtype, `${what}: dtype`);
  const want = c.data.map(num), got = vals(t);
  if (c.dtype !== 'float32') return assert.deepEqual(got, want, `${what}: values`);
  const close = (g, w) => g === w || (Number.isNaN(g) && Number.isNaN(w)) || Math.abs(g - w) <= 2.5e-7 * Math.max(1, Math.abs(w));
  assert.ok(got.length === want.length && got.every((g, i) => close(g, want[i])), `${what}: expected [${want}] got [${got}]`);
}

describe('type promotion: every binary op on every pair of dtypes and scalar kinds, as PyTorch', () => {
  for (const c of fx.cases) {
    const what = c.op === 'where' ? `where(cond, ${c.a}, ${c.b})` : `${c.op}(${c.a}, ${c.b})`;
    test(c.error ? `${what} fails, as PyTorch's "${c.error.slice(0, 60)}"` : `${what} -> ${c.dtype}`, () => {
      om.tidy(() => {
        const a = operand(c.a), b = operand(c.b);
        if (c.error) {
          assert.throws(() => call(c, a, b), (e) => e instanceof om.OmError && e.kind === 'DtypeMismatch' && e.message.startsWith(c.op === 'where' ? 'where' : `${camel(c.op)}: `));
          return;
        }
        expectLike(call(c, a, b), c, what);
        // a JS number that is an integer is an int beside int64 and bool tensors, a float beside float32
        if (c.b === 'py_int' && a instanceof om.Tensor) expectLike(call(c, a, 2), c, `${what} with the number 2`);
      });
    });
  }
  test('the fixture covers every op, dtype pair and scalar kind', () => {
    const ops = new Set(fx.cases.map((c) => c.op));
    assert.equal(ops.size, 23);
    assert.ok(fx.cases.filter((c) => c.op === 'where' && c.a in SCALARS && c.b in SCALARS).length === 9, 'where with both scalars');
  });
});

describe("trigonometric and hyperbolic functions: PyTorch's values, integers promoted to float32", () => {
  for (const c of fx.unary) {
    test(`${c.op} of ${c.input.dtype}`, () => {
      om.tidy(() => {
        const x = om.tensor(c.input.dtype === 'int64' ? c.input.data.map(BigInt) : c.input.data.map(num), { dtype: c.input.dtype });
        expectLike(x[c.op](), c, `${c.op}(${c.input.dtype})`);
        expectLike(om[c.op](x), c, `om.${c.op}(${c.input.dtype})`);
      });
    });
  }
});

describe('where(condition) alone: torch.nonzero(condition, as_tuple=True)', () => {
  test('the indices per dim of the nonzero elements, NaN included, -0 not; 0-d and empty conditions; traced is DataDependent', () => om.tidy(() => {
    const idx = (ts) => ts.map((t) => [t.dtype, t.shape, [...t.toArray()]]);
    assert.deepEqual(idx(om.where(om.tensor([[0, NaN, -0], [2, 0, -1]]))), [['int64', [3], [0n, 1n, 1n]], ['int64', [3], [1n, 0n, 2n]]]);
    assert.deepEqual(idx(om.where(om.tensor([3n, 0n, -2n]))), [['int64', [2], [0n, 2n]]]);
    assert.deepEqual(idx(om.where(om.tensor(true))), [['int64', [1], [0n]]]);
    assert.deepEqual(idx(om.where(om.tensor(0))), [['int64', [0], []]]);
    assert.deepEqual(idx(om.where(om.zeros([0, 2], { dtype: 'bool' }))), [['int64', [0], []], ['int64', [0], []]]);
    assert.throws(() => om.where([true]), (e) => e.kind === 'InvalidArgument' && /^where: condition must be a Tensor/.test(e.message));
    const m = om.tensor([true, false, true]);
    assert.throws(() => om.trace((c) => om.where(c)[0], { c: m }), (e) => e instanceof om.TraceError && e.kind === 'DataDependent');
  }));
});

describe('promotion in traced graphs: Cast nodes run in onnxruntime-web and the Session, at other sizes too', () => {
  test('float32, int64 and bool inputs mixed with each other and with scalars of each kind', () =>
    withTraced((keep, trace) => {
      const f = (x, i, m) => ({
        sum: x.add(i), // float32 + int64 -> float32
        ratio: i.div(2), // true division of integers -> float32
        picked: om.where(m, x, 0.5), // a scalar branch
        constants: om.where(m, 1.5, -2.5), // both branches scalars
        count: m.add(i), // bool + int64 -> int64
        either: m.add(m.logicalNot()), // bool + bool -> bool (or)
        scaled: m.mul(2.5), // bool * float -> float32
        bits: i.bitwiseAnd(m).bitwiseXor(i.bitwiseNot()), // int64 & bool -> int64
        angle: om.atan2(x, i),
        low: om.minimum(x, i).maximum(m),
        floorMod: i.remainder(-3),
        truncMod: x.fmod(2),
        truth: om.logicalOr(x, m).logicalXor(i),
        below: i.lt(x),
        wave: i.sin().add(x.cos()),
        boolOrder: m.lt(m.logicalNot()).logicalOr(m.ge(true)), // bool comparisons: Cast to int64
        boolMinMax: om.maximum(m, m.logicalNot()).mul(om.minimum(m, true)), // Or, And
        boolBits: m.bitwiseAnd(m.bitwiseNot()).bitwiseOr(m), // And, Not, Or
        intPow: i.pow(2).add(i.abs().pow(i.abs())),
      });
      const x = om.tensor([-2.5, -0.5, 0, 1.25, 3]);
      const i = om.tensor([-3n, 0n, 2n, 5n, -1n]);
      const m = om.tensor([true, false, true, true, false]);
      trace(f, { x: [x, ['n']], i: [i, ['n']], m: [m, ['n']] });
    }));
});

describe('atan2, fmod and remainder lowered by compositions: the quadrants, signed zeros, infinities and signs', () => {
  test('every pair of y and x from zeros of both signs, infinities and both signs, traced and run', () =>
    withTraced((keep, trace) => {
      const v = [-Infinity, -3, -1.5, -0, 0, 0.75, 2, Infinity];
      const y = om.tensor(v.flatMap((a) => v.map(() => a)));
      const x = om.tensor(v.flatMap(() => v));
      const f = (a, b) => ({ angle: om.atan2(a, b) });
      trace(f, { y, x });
      const want = v.flatMap((a) => v.map((b) => Math.fround(Math.atan2(a, b))));
      const got = vals(om.atan2(y, x));
      got.forEach((g, i) => assert.ok(Object.is(g, want[i]) || Math.abs(g - want[i]) <= 2.5e-7 * Math.abs(want[i]), `atan2 #${i}: ${g} vs ${want[i]}`));
    }));
  test('fmod truncates and remainder floors, for every sign of either operand, traced and run', () =>
    withTraced((keep, trace) => {
      const v = [-7.5, -3, -1.25, -0, 0.5, 2, 5.5];
      const a = om.tensor(v.flatMap((p) => v.map(() => p)));
      const b = om.tensor(v.flatMap(() => v.map((q) => (q === -0 ? 1.5 : q))));
      const ia = om.tensor([-7n, -7n, 7n, 7n, 6n, -6n]), ib = om.tensor([2n, -2n, 2n, -2n, 3n, -3n]);
      trace((p, q) => ({ fmod: p.fmod(q), remainder: p.remainder(q) }), { a, b });
      trace((p, q) => ({ fmod: p.fmod(q), remainder: p.remainder(q) }), { ia, ib });
      assert.deepEqual(vals(ia.fmod(ib)), [-1, -1, 1, 1, 0, 0]);
      assert.deepEqual(vals(ia.remainder(ib)), [1, -1, 1, -1, 0, 0]);
      assert.deepEqual(vals(om.tensor([-7.5, 7.5]).fmod(2)), [-1.5, 1.5]);
      assert.deepEqual(vals(om.tensor([-7.5, 7.5]).remainder(-2)), [-1.5, -0.5]);
    }));
});

describe('floor, ceil and round: integers of floats (round halves to even, as torch.round), int64 kept', () => {
  const v = [-Infinity, -2.5, -1.5, -0.5, -0.25, -0, 0, 0.25, 0.5, 1.5, 2.5, 2.4999998, 8388609.5, 16777217, Infinity, NaN];
  const jsRound = (a) => { // to nearest, halves to even
    const r = Math.round(a);
    return r - a === 0.5 && r % 2 !== 0 ? r - 1 : Object.is(a, -0) || (a < 0 && r === 0) ? -0 : r;
  };
  test('the values, signed zeros, infinities and NaN, traced and run in both engines', () =>
    withTraced((keep, trace) => {
      const x = om.tensor(v);
      trace((t) => ({ floor: t.floor(), ceil: om.ceil(t), round: t.round() }), { x });
      for (const [name, f] of [['floor', Math.floor], ['ceil', Math.ceil], ['round', jsRound]]) {
        const want = v.map((a) => f(Math.fround(a)));
        vals(x[name]()).forEach((g, i) => assert.ok(Object.is(g, want[i]), `${name}(${v[i]}) = ${g}, want ${want[i]}`));
      }
    }));
  test('int64 is kept (PyTorch\'s result), traced as the input; bool is refused', () =>
    withTraced((keep, trace) => {
      const i = om.tensor([-3n, 0n, 9007199254740993n]);
      for (const name of ['floor', 'ceil', 'round']) {
        const y = i[name]();
        assert.equal(y.dtype, 'int64');
        assert.deepEqual([...y.toArray()], [-3n, 0n, 9007199254740993n]);
        assert.throws(() => om[name](om.tensor([true])), (e) => e instanceof om.OmError && e.kind === 'DtypeMismatch' && e.message.startsWith(`${name}:`), name);
      }
      trace((t) => ({ f: t.floor().add(1), r: om.round(t) }), { i });
    }));
  test('not differentiable: a result does not require grad', () => om.tidy(() => {
    const x = om.tensor([0.3, 1.7]);
    x.requiresGrad = true;
    for (const name of ['floor', 'ceil', 'round']) assert.equal(x[name]().requiresGrad, false, name);
  }));
});

describe('in-place logical and bitwise forms (PyTorch\'s mask |= other, bitwise_or_, logical_and_)', () => {
  test('each writes its op\'s result into the tensor; traced, the write is in the graph', () =>
    withTraced((keep, trace) => {
      const m = om.tensor([true, false, false, true]);
      assert.equal(m.bitwiseOr_(om.tensor([false, false, true, true])), m);
      assert.deepEqual(vals(m), [1, 0, 1, 1]);
      m.logicalXor_(om.tensor([1, 1, 0, 0])); // any dtype's truth values
      assert.deepEqual(vals(m), [0, 1, 1, 1]);
      m.logicalAnd_(om.tensor([true, true, false, true]));
      assert.deepEqual(vals(m), [0, 1, 0, 1]);
      m.logicalOr_(om.tensor([true, false, false, false]));
      assert.deepEqual(vals(m), [1, 1, 0, 1]);
      const i = om.tensor([12n, 10n]);
      i.bitwiseAnd_(6n);
      assert.deepEqual([...i.toArray()], [4n, 2n]);
      i.bitwiseXor_(om.tensor([1n, 3n]));
      assert.deepEqual([...i.toArray()], [5n, 1n]);
      assert.throws(() => om.tensor([1.5]).bitwiseOr_(1n), (e) => e instanceof om.OmError && e.kind === 'DtypeMismatch' && /^bitwiseOr/.test(e.message));
      const x = om.tensor([-1, 0.5, 3, 1.5, -2]);
      trace((t) => { // a mask built in place from the input, as Hugging Face's sliding-window masks are
        const mask = t.gt(0);
        mask.bitwiseAnd_(t.lt(2));
        mask.logicalOr_(t.lt(-1.5));
        return { mask };
      }, { x });
    }));
});
