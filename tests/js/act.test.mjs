// Activations, clamp, cumsum, pad, maskedFill and dropout from JS: values against the formulas,
// PyTorch's argument forms and defaults, bad arguments as OmError, the nn modules, and traced
// models through onnxruntime-web (tests/js/helpers.mjs withTraced: every model goes through the
// oracle), including the edges of each activation, the dropout refusal in training mode and
// dropout in eval mode writing no node.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as om from 'onemodel';
import { memoryHooks, near, vals, check, withTraced } from './helpers.mjs';
import { runOnnx, checkTraced } from '../../examples/lib/oracle.mjs';

memoryHooks();
const F = om.nn.functional;

// erf to ~1e-9 (Abramowitz and Stegun 7.1.28 is too coarse; a series / continued fraction is exact enough)
function erf(x) {
  if (Number.isNaN(x)) return NaN;
  const s = Math.sign(x);
  const a = Math.abs(x);
  if (a > 6) return s;
  if (a < 2.5) { // Maclaurin series
    let sum = 0;
    let term = a;
    for (let n = 0; n < 80; n++) {
      sum += term / (2 * n + 1);
      term *= -a * a / (n + 1);
    }
    return s * 2 / Math.sqrt(Math.PI) * sum;
  }
  let f = 0; // erfc continued fraction
  for (let n = 60; n >= 1; n--) f = (n / 2) / (a + f);
  return s * (1 - Math.exp(-a * a) / Math.sqrt(Math.PI) / (a + f));
}

const X = [-30, -4, -3, -1.5, -1, -0.25, 0, 0.5, 1, 2, 3, 3.5, 30];
const ref = {
  leakyRelu: (x, k = 0.01) => (x > 0 ? x : x * k),
  elu: (x, a = 1) => (x <= 0 ? Math.expm1(x) * a : x),
  gelu: (x) => 0.5 * x * (1 + erf(x / Math.SQRT2)),
  geluTanh: (x) => 0.5 * x * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (x + 0.044715 * x ** 3))),
  silu: (x) => x / (1 + Math.exp(-x)),
  softplus: (x, b = 1, t = 20) => (x * b > t ? x : Math.log1p(Math.exp(x * b)) / b),
  hardswish: (x) => x * Math.min(Math.max(x + 3, 0), 6) / 6,
  hardsigmoid: (x) => Math.min(Math.max(x + 3, 0), 6) / 6,
  hardtanh: (x, lo = -1, hi = 1) => Math.min(Math.max(x, lo), hi),
};

describe('activations: values', () => {
  test('functions match their formulas, with PyTorch defaults and both argument forms', () => {
    om.tidy(() => {
      const x = om.tensor(X);
      const cases = [
        [F.leakyRelu(x), X.map((v) => ref.leakyRelu(v))],
        [F.leakyRelu(x, 0.2), X.map((v) => ref.leakyRelu(v, 0.2))],
        [F.leakyRelu(x, { negativeSlope: 0.3 }), X.map((v) => ref.leakyRelu(v, 0.3))],
        [F.elu(x), X.map((v) => ref.elu(v))],
        [F.elu(x, { alpha: 0.5 }), X.map((v) => ref.elu(v, 0.5))],
        [F.gelu(x), X.map(ref.gelu)],
        [F.gelu(x, { approximate: 'tanh' }), X.map(ref.geluTanh)],
        [F.silu(x), X.map(ref.silu)],
        [F.softplus(x), X.map((v) => ref.softplus(v))],
        [F.softplus(x, 2, 5), X.map((v) => ref.softplus(v, 2, 5))],
        [F.softplus(x, { threshold: 1 }), X.map((v) => ref.softplus(v, 1, 1))],
        [F.hardswish(x), X.map(ref.hardswish)],
        [F.hardsigmoid(x), X.map(ref.hardsigmoid)],
        [F.hardtanh(x), X.map((v) => ref.hardtanh(v))],
        [F.hardtanh(x, -2, 0.5), X.map((v) => ref.hardtanh(v, -2, 0.5))],
        [F.hardtanh(x, { maxVal: 3 }), X.map((v) => ref.hardtanh(v, -1, 3))],
        [F.relu6(x), X.map((v) => ref.hardtanh(v, 0, 6))],
        [x.erf(), X.map(erf)],
        [F.relu(x), X.map((v) => Math.max(v, 0))],
        [F.sigmoid(x), X.map((v) => 1 / (1 + Math.exp(-v)))],
        [F.tanh(x), X.map(Math.tanh)],
      ];
      cases.forEach(([t, want], i) => near(t.toArray(), want, 2e-6 * 30, `case ${i}`));
    });
  });

  test('clamp / clip: bounds, options, int64 with bigints, NaN kept, min > max gives max', () => {
    om.tidy(() => {
      const x = om.tensor([-2, -0.5, 0.5, 2, NaN]);
      check(x.clamp(-1, 1), [5], [-1, -0.5, 0.5, 1, NaN]);
      check(x.clamp({ min: 0 }), [5], [0, 0, 0.5, 2, NaN]);
      check(x.clip(null, 0), [5], [-2, -0.5, 0, 0, NaN]);
      check(x.clamp(1, -1), [5], [-1, -1, -1, -1, NaN]);
      const i = om.tensor([-5n, 0n, 9007199254740993n]);
      const c = i.clamp(-1n, 9007199254740992n + 0n);
      assert.equal(c.dtype, 'int64');
      assert.deepEqual(Array.from(c.toArray()), [-1n, 0n, 9007199254740992n]);
      assert.deepEqual(Array.from(i.clamp(0, 3).toArray()), [0n, 0n, 3n]);
      const f = i.clamp(0.5); // a fractional bound promotes to float32, as PyTorch's
      assert.equal(f.dtype, 'float32');
      assert.deepEqual(Array.from(f.toArray()), [0.5, 0.5, 9007199254740992]);
      assert.throws(() => x.clamp(), (e) => e.kind === 'InvalidArgument' && /at least one of min or max/.test(e.message));
      assert.throws(() => x.clamp('1'), (e) => e.kind === 'InvalidArgument' && /min must be a number/.test(e.message));
      assert.throws(() => x.clamp({ lo: 1 }), (e) => e.kind === 'InvalidArgument' && /unknown option 'lo'/.test(e.message));
      const b = x.gt(0).clamp(0, 3); // bool with integer bounds: int64
      assert.equal(b.dtype, 'int64');
      assert.deepEqual(Array.from(b.toArray()), [0n, 0n, 1n, 1n, 0n]);
    });
  });

  test('gradients flow through the activations (gelu, softplus against their derivatives)', () => {
    const x = om.tensor([-2, -0.5, 0.5, 2]);
    x.requiresGrad = true;
    try {
      om.tidy(() => F.gelu(x).sum().backward());
      const pdf = (v) => Math.exp(-v * v / 2) / Math.sqrt(2 * Math.PI);
      near(x.grad.toArray(), [-2, -0.5, 0.5, 2].map((v) => 0.5 * (1 + erf(v / Math.SQRT2)) + v * pdf(v)), 1e-5);
      x.zeroGrad();
      om.tidy(() => F.softplus(x, 2, 1.5).sum().backward()); // 2 * 2 > 1.5: the linear branch
      near(x.grad.toArray(), [-2, -0.5, 0.5].map((v) => 1 / (1 + Math.exp(-2 * v))).concat([1]), 1e-6);
    } finally {
      x.dispose();
    }
  });

  // 0.5 x (1 + erf(x / sqrt 2)) cancels for negative x (at -5 it was -1.49e-6 eagerly and
  // -1.19e-6 in the Session's fast mode for -1.43e-6; both 0 from -8, where a sign() after it
  // gave 0 for eager's -1: random models 27:38257, 27:53594): the tail is 0.5 x erfc(-x / sqrt 2)
  test('GELU\'s tail from erfc: eager, its gradient and the Session in both modes to float precision down to -14', async () => {
    const erfc = (a) => { // a >= 0: 1 - erf (no cancellation below 2.5), else erf's continued fraction
      if (a < 2.5) return 1 - erf(a);
      let f = 0;
      for (let n = 60; n >= 1; n--) f = (n / 2) / (a + f);
      return Math.exp(-a * a) / Math.sqrt(Math.PI) / (a + f);
    };
    const T = [-0.7071069, -0.75, -1, -2, -3.5, -5, -6, -8, -10, -12, -13, -13.5, -14];
    const exact = T.map((v) => 0.5 * v * erfc(-v / Math.SQRT2));
    const x = om.tensor(T);
    const traced = om.trace((v) => F.gelu(v), { x: [x, ['n']] }, { outputNames: ['y'] });
    const sessions = [traced.session(), await om.InferenceSession.create(traced.save(), { mode: 'exact' })];
    try {
      const eager = om.tidy(() => F.gelu(x).toArray());
      T.forEach((v, i) => { // within 1 ulp (-13.5 and -14 are subnormal: within 2^-149)
        const tol = Math.max(Math.abs(exact[i]) * 2 ** -23, 2 ** -149);
        assert.ok(Math.abs(eager[i] - exact[i]) <= tol, `gelu(${v}) = ${eager[i]}, not ${exact[i]}`);
      });
      for (const s of sessions) {
        const y = om.tidy(() => s.run({ x }).y.toArray());
        assert.deepEqual(Array.from(y), Array.from(eager), 'the Session\'s tail is eager\'s, bit for bit');
      }
      x.requiresGrad = true;
      om.tidy(() => F.gelu(x).sum().backward()); // cdf + x pdf, the cdf from the same erfc
      const pdf = (v) => Math.exp(-v * v / 2) / Math.sqrt(2 * Math.PI);
      const grad = x.grad.toArray(), want = T.map((v, i) => exact[i] / v + v * pdf(v));
      T.forEach((v, i) => { // to 1e-6 of its terms' size (they cancel near -0.75, where gelu' is 0)
        const size = Math.abs(exact[i] / v) + Math.abs(v * pdf(v));
        if (v >= -12) assert.ok(Math.abs(grad[i] - want[i]) <= 1e-6 * size, `gelu'(${v}) = ${grad[i]}, not ${want[i]}`);
      });
    } finally {
      for (const s of sessions) s.dispose();
      traced.dispose();
      x.dispose();
    }
  });

  test('hardtanh, relu6 and hardsigmoid: PyTorch\'s gradient, 0 at the bounds (clamp\'s passes there)', () => {
    om.tidy(() => {
      const at = [-4, -3, -1, 0, 0.5, 1, 3, 6, 7];
      const grad = (f) => {
        const x = om.tensor(at);
        x.requiresGrad = true;
        f(x).sum().backward();
        return Array.from(x.grad.toArray());
      };
      assert.deepEqual(grad((x) => F.hardtanh(x)), [0, 0, 0, 1, 1, 0, 0, 0, 0]);
      assert.deepEqual(grad((x) => x.clamp(-1, 1)), [0, 0, 1, 1, 1, 1, 0, 0, 0]);
      assert.deepEqual(grad((x) => F.relu6(x)), [0, 0, 0, 0, 1, 1, 1, 0, 0]);
      near(grad((x) => F.hardsigmoid(x)), [0, 0, 1, 1, 1, 1, 0, 0, 0].map((v) => v / 6), 1e-7);
    });
  });

  test('bad arguments are OmError, never a wasm abort', () => {
    om.tidy(() => {
      const x = om.tensor([1, 2]);
      const bad = [
        [() => F.gelu(x, { approximate: 'fast' }), 'InvalidArgument', /approximate must be 'none' or 'tanh'/],
        [() => F.leakyRelu(x, '0.1'), 'InvalidArgument', /negativeSlope must be a number/],
        [() => F.elu(x, 1, 2), 'InvalidArgument', /takes at most 2 arguments/],
        [() => F.softplus(x, { gamma: 1 }), 'InvalidArgument', /unknown option 'gamma'/],
        [() => F.silu(null), 'InvalidArgument', /silu: input must be a Tensor/],
        [() => F.gelu(om.tensor([1n])), 'DtypeMismatch', /gelu: takes float32, not int64/],
        [() => x.cumsum(), 'InvalidArgument', /dim is required/],
        [() => x.cumsum(3), 'IndexOutOfRange', /cumsum/],
        [() => x.maskedFill(x, 0), 'DtypeMismatch', /only supports boolean masks, but got mask with dtype float32/],
        [() => x.maskedFill(x.gt(0), 'a'), 'InvalidArgument', /value must be a number/],
      ];
      for (const [fn, kind, re] of bad) assert.throws(fn, (e) => e instanceof om.OmError && e.kind === kind && re.test(e.message), String(fn));
      const d = om.tensor([1]);
      d.dispose();
      assert.throws(() => F.elu(d), (e) => e.kind === 'Disposed');
      assert.throws(() => d.clamp(0), (e) => e.kind === 'Disposed');
    });
  });
});

describe('cumsum, pad, maskedFill', () => {
  test('cumsum: float32, int64, bool counts into int64, negative dim', () => {
    om.tidy(() => {
      check(om.tensor([[1, 2, 3], [4, 5, 6]]).cumsum(-1), [2, 3], [1, 3, 6, 4, 9, 15]);
      check(om.tensor([[1, 2, 3], [4, 5, 6]]).cumsum(0), [2, 3], [1, 2, 3, 5, 7, 9]);
      const i = om.tensor([3n, -1n, 4n]).cumsum(0);
      assert.equal(i.dtype, 'int64');
      assert.deepEqual(vals(i), [3, 2, 6]);
      const b = om.tensor([true, false, true, true]).cumsum(0);
      assert.equal(b.dtype, 'int64');
      assert.deepEqual(vals(b), [1, 1, 2, 3]);
    });
  });

  test('pad: PyTorch argument forms, modes, negative pads crop, errors name the op and values', () => {
    om.tidy(() => {
      const x = om.tensor([[[1, 2, 3], [4, 5, 6]]]);
      check(F.pad(x, [1, 1]), [1, 2, 5], [0, 1, 2, 3, 0, 0, 4, 5, 6, 0]);
      check(F.pad(x, [1, 0], 'constant', 7), [1, 2, 4], [7, 1, 2, 3, 7, 4, 5, 6]);
      check(F.pad(x, [0, 0, 1, 0], { value: -1 }), [1, 3, 3], [-1, -1, -1, 1, 2, 3, 4, 5, 6]);
      check(F.pad(x, [-1, -1]), [1, 2, 1], [2, 5]);
      check(F.pad(x, [2, 2], 'reflect'), [1, 2, 7], [3, 2, 1, 2, 3, 2, 1, 6, 5, 4, 5, 6, 5, 4]);
      check(F.pad(x, [1, 1, 1, 0], { mode: 'replicate' }), [1, 3, 5], [1, 1, 2, 3, 3, 1, 1, 2, 3, 3, 4, 4, 5, 6, 6]);
      const i = F.pad(om.tensor([[1n, 2n]]), [1, 1], 'constant', 5);
      assert.deepEqual(Array.from(i.toArray()), [5n, 1n, 2n, 5n]);
      const errs = [
        [() => F.pad(x, [1]), /padding length must be divisible by 2, got 1/],
        [() => F.pad(x, [1, 1, 1, 1, 1, 1, 1, 1]), /padding length 8 and input of dimension 3/],
        [() => F.pad(x, [3, 0], 'reflect'), /padding \(3, 0\) at dimension 2 of input \[1,2,3\]/],
        [() => F.pad(x, [1, 1], 'reflect', 2), /doesn't take in value argument/],
        [() => F.pad(x, [1, 1], 'circular'), /mode must be 'constant', 'reflect', 'replicate'/],
        [() => F.pad(x, 1), /pad must be an array/],
        [() => F.pad(x, [1.5, 1]), /pad\[0\] must be an integer/],
      ];
      for (const [fn, re] of errs) assert.throws(fn, (e) => e.kind === 'InvalidArgument' && re.test(e.message), String(fn));
    });
  });

  test('maskedFill: broadcast mask, -Infinity, int64 and bool inputs', () => {
    om.tidy(() => {
      const x = om.tensor([[1, 2, 3], [4, 5, 6]]);
      const m = om.tensor([true, false, true]);
      assert.deepEqual(vals(x.maskedFill(m, -Infinity)), [-Infinity, 2, -Infinity, -Infinity, 5, -Infinity]);
      assert.deepEqual(Array.from(om.tensor([1n, 2n, 3n]).maskedFill(m, 7n).toArray()), [7n, 2n, 7n]);
      assert.deepEqual(vals(om.tensor([false, true, false]).maskedFill(m, true)), [1, 1, 1]);
      assert.deepEqual(vals(om.tensor([true, true, false]).maskedFill(m, false)), [0, 1, 0]);
    });
  });
});

describe('dropout', () => {
  test('training: the default generator (om.manualSeed) gives the same mask; kept values scaled by 1 / (1 - p)', () => {
    om.tidy(() => {
      const x = om.ones([32, 32]);
      om.manualSeed(7);
      const a = vals(F.dropout(x, { p: 0.25 }));
      om.manualSeed(7);
      const b = vals(F.dropout(x, 0.25, true));
      const c = vals(F.dropout(x, 0.25));
      assert.deepEqual(a, b);
      assert.notDeepEqual(a, c);
      assert.ok(a.every((v) => v === 0 || v === Math.fround(1 / 0.75)));
      const kept = a.filter((v) => v !== 0).length;
      assert.ok(kept > 0.7 * 1024 && kept < 0.8 * 1024, `${kept} kept`);
      assert.deepEqual(vals(F.dropout(x, { p: 1 })), new Array(1024).fill(0));
    });
  });

  test('the backward reads the same mask', () => {
    const x = om.ones([8, 8]);
    x.requiresGrad = true;
    try {
      om.manualSeed(3);
      const y = om.tidy(() => {
        const d = F.dropout(x, { p: 0.5 });
        d.sum().backward();
        return d;
      });
      assert.deepEqual(vals(x.grad), vals(y));
      y.dispose();
    } finally {
      x.dispose();
    }
  });

  test('eval mode and p = 0 give the input itself; bad p is refused', () => {
    om.tidy(() => {
      const x = om.tensor([1, 2, 3]);
      const v0 = x.version;
      const e = F.dropout(x, { training: false });
      const z = F.dropout(x, { p: 0 });
      assert.deepEqual(vals(e), [1, 2, 3]);
      x.fill_(5); // the same storage: the change shows through both handles
      assert.deepEqual(vals(e), [5, 5, 5]);
      assert.deepEqual(vals(z), [5, 5, 5]);
      assert.ok(x.version > v0);
      const m = new om.nn.Dropout(0.4);
      assert.equal(m.training, true);
      m.eval();
      assert.deepEqual(vals(m.forward(x)), [5, 5, 5]);
      assert.throws(() => F.dropout(x, { p: 1.5 }), (err) => err.kind === 'InvalidArgument' && /between 0 and 1, but got 1.5/.test(err.message));
      assert.throws(() => F.dropout(x, { p: 0.5, training: 1 }), (err) => err.kind === 'InvalidArgument' && /training must be a boolean/.test(err.message));
      assert.throws(() => new om.nn.Dropout(-0.1), (err) => err.kind === 'InvalidArgument' && /between 0 and 1/.test(err.message));
    });
  });
});

describe('nn modules', () => {
  test('each module computes its functional, holds no tensors, and takes PyTorch constructor arguments', () => {
    om.tidy(() => {
      const x = om.tensor(X);
      const pairs = [
        [new om.nn.ReLU(), F.relu(x)], [new om.nn.Sigmoid(), F.sigmoid(x)], [new om.nn.Tanh(), F.tanh(x)],
        [new om.nn.SiLU(), F.silu(x)], [new om.nn.Hardswish(), F.hardswish(x)],
        [new om.nn.Hardsigmoid({ inplace: true }), F.hardsigmoid(x)], [new om.nn.ReLU6({ inplace: true }), F.relu6(x)],
        [new om.nn.Hardtanh(), F.hardtanh(x)], [new om.nn.Hardtanh(-2, 3), F.hardtanh(x, -2, 3)],
        [new om.nn.Hardtanh({ minVal: 0, maxVal: 6 }), F.relu6(x)],
        [new om.nn.LeakyReLU(0.2), F.leakyRelu(x, 0.2)], [new om.nn.LeakyReLU({ negativeSlope: 0.3, inplace: true }), F.leakyRelu(x, 0.3)],
        [new om.nn.ELU({ alpha: 2 }), F.elu(x, 2)], [new om.nn.GELU('tanh'), F.gelu(x, { approximate: 'tanh' })],
        [new om.nn.GELU(), F.gelu(x)], [new om.nn.Softplus(2, 10), F.softplus(x, 2, 10)],
        [new om.nn.Identity(3, { any: 1 }), x], [new om.nn.Dropout(0.2).eval(), x],
        // PyTorch's positional inplace: nn.Dropout(0.5, True), nn.LeakyReLU(0.2, True), nn.ELU(1.0, True), nn.Hardtanh(0, 6, True)
        [new om.nn.Dropout(0.5, true).eval(), x], [new om.nn.LeakyReLU(0.2, true), F.leakyRelu(x, 0.2)],
        [new om.nn.ELU(2, false), F.elu(x, 2)], [new om.nn.Hardtanh(0, 6, true), F.relu6(x)],
      ];
      for (const [m, want] of pairs) {
        assert.deepEqual(vals(m.forward(x)), vals(want), m.constructor.name);
        assert.deepEqual(Object.keys(m.stateDict()), []);
      }
      assert.equal(new om.nn.LeakyReLU().negativeSlope, 0.01);
      assert.equal(new om.nn.Softplus().threshold, 20);
      assert.equal(new om.nn.Dropout().p, 0.5);
      assert.throws(() => new om.nn.GELU({ approximate: 'x' }), (e) => e.kind === 'InvalidArgument');
      assert.throws(() => new om.nn.ELU('1'), (e) => e.kind === 'InvalidArgument' && /alpha must be a number/.test(e.message));
      assert.throws(() => new om.nn.Dropout(0.5, 1), (e) => e.kind === 'InvalidArgument' && /^Dropout: inplace must be a boolean, got 1$/.test(e.message));
      assert.throws(() => new om.nn.LeakyReLU(0.2, true, 3), (e) => e.kind === 'InvalidArgument' && /^LeakyReLU: takes at most 2 arguments, got 3$/.test(e.message));
      assert.throws(() => new om.nn.GELU('none', true), (e) => e.kind === 'InvalidArgument' && /^GELU: takes at most 1 arguments, got 2$/.test(e.message));
      // PyTorch's nn.Hardtanh asserts max_val > min_val; F.hardtanh takes any bounds (clamp's values)
      assert.throws(() => new om.nn.Hardtanh(1, 1), (e) => e.kind === 'InvalidArgument' && /Hardtanh: maxVal 1 must be greater than minVal 1/.test(e.message));
      assert.throws(() => new om.nn.Hardtanh('0', 6), (e) => e.kind === 'InvalidArgument' && /Hardtanh: minVal must be a number/.test(e.message));
      assert.throws(() => F.hardtanh(x, { min: 0 }), (e) => e.kind === 'InvalidArgument' && /hardtanh: unknown option 'min'/.test(e.message));
      assert.throws(() => F.hardtanh(x, 0, '6'), (e) => e.kind === 'InvalidArgument' && /hardtanh: maxVal must be a number/.test(e.message));
      assert.throws(() => F.relu6(x.gt(0)), (e) => e.kind === 'DtypeMismatch' && /hardtanh: takes float32, not bool/.test(e.message));
    });
  });
});

// ---- traced through onnxruntime-web -------------------------------------------------------

class ActMLP extends om.nn.Module {
  constructor() {
    super();
    this.fc1 = new om.nn.Linear(6, 16);
    this.act1 = new om.nn.GELU();
    this.drop = new om.nn.Dropout(0.3);
    this.fc2 = new om.nn.Linear(16, 16);
    this.act2 = new om.nn.LeakyReLU(0.1);
    this.fc3 = new om.nn.Linear(16, 8);
    this.acts = [new om.nn.SiLU(), new om.nn.ELU(0.5), new om.nn.Softplus(2, 3), new om.nn.Hardswish(), new om.nn.Hardsigmoid(),
      new om.nn.ReLU6(), new om.nn.Hardtanh(-0.5, 2),
      new om.nn.GELU('tanh'), new om.nn.Tanh(), new om.nn.Sigmoid(), new om.nn.ReLU(), new om.nn.Identity()];
  }

  forward(x) {
    return om.tidy(() => {
      let h = this.drop.forward(this.act1.forward(this.fc1.forward(x)));
      h = this.fc3.forward(this.act2.forward(this.fc2.forward(h)));
      for (const a of this.acts) h = a.forward(h.mul(2));
      return h.clamp(0.1, 0.9);
    });
  }
}

describe('traced through onnxruntime-web', () => {
  test('an MLP using every activation module (dropout in eval), symbolic batch', async () => {
    om.manualSeed(11);
    const net = new ActMLP().eval();
    try {
      await withTraced((keep, trace) => {
        const tm = trace(net, { x: [om.randn([5, 6], { seed: 1 }), ['batch', null]] });
        const ops = tm.graph().nodes.map((n) => n.opType);
        for (const op of ['Gelu', 'LeakyRelu', 'Elu', 'Softplus', 'HardSwish', 'Sigmoid', 'Tanh', 'Relu', 'Clip']) assert.ok(ops.includes(op), op);
        assert.ok(!ops.some((o) => /Dropout|Random|Bernoulli/.test(o)), ops.join(','));
        assert.deepEqual(tm.inputs[0].shape, ['batch', 6]);
      });
    } finally {
      net.dispose();
    }
  });

  test('a model with pad, cumsum, maskedFill and int64 clamp; the mask and the ids are graph inputs', async () => {
    await withTraced((keep, trace) => {
      const x = om.randn([2, 4, 6], { seed: 2 });
      const mask = om.randn([4, 1], { seed: 3 }).gt(0);
      const ids = om.tensor([[1n, 5n, -2n, 9n]]);
      trace((v, m, n) => {
        const p1 = F.pad(v, [2, 1], 'reflect');
        const p2 = F.pad(p1, [1, 1, 0, 2], 'replicate');
        const p3 = F.pad(p2, [-1, 2, 1, -1], 'constant', 0.5);
        return {
          y: p3.cumsum(-1),
          z: v.maskedFill(m, -Infinity).exp(),
          w: v.maskedFill(m, 2.5).mul(2),
          c: n.cumsum(1).clamp(0n, 4n),
          cmax: n.clamp(null, 2n), // an int64 bound not given is an omitted Clip input
          bt: m.maskedFill(v.gt(0), true), // bool: Or
          bf: m.maskedFill(v.gt(0), false), // bool: Not, And
          ni: n.maskedFill(n.gt(2n), -1n),
          cb: m.cumsum(0),
          pi: F.pad(n, [1, 0], 'constant', 3),
        };
      }, { v: x, m: mask, n: ids });
    });
  });

  test('pad, cumsum (also along the symbolic axis), maskedFill and clamp keep a symbolic batch: run at other sizes', async () => {
    const f = (v) => ({
      a: F.pad(v, [2, 1], 'reflect').cumsum(-1),
      b: F.pad(v, [1, 1, 1, 0], 'replicate'),
      c: F.pad(v, [-1, 1], 'constant', 3).cumsum(1),
      d: v.maskedFill(v.gt(0.5), 0).clamp(null, 0.2),
      e: v.cumsum(0),
    });
    const x = om.randn([3, 4, 5], { seed: 1 });
    const tm = om.tidy(() => om.trace(f, { x: [x, ['batch', null, null]] }));
    try {
      assert.deepEqual(tm.outputs.map((o) => o.shape), [['batch', 4, 8], ['batch', 5, 7], ['batch', 4, 5], ['batch', 4, 5], ['batch', 4, 5]]);
      for (const n of [3, 2, 7]) {
        const y = om.randn([n, 4, 5], { seed: n });
        const eager = om.tidy(() => f(y));
        try {
          assert.equal((await checkTraced(tm, { x: y }, eager)).ok, true);
        } finally {
          om.dispose([y, eager]);
        }
      }
    } finally {
      tm.dispose();
      x.dispose();
    }
  });

  test('edges of every activation: large |x|, zeros of both signs, NaN, infinities (the -0 sign checked too)', async () => {
    const edge = [-1e30, -1e4, -100, -30, -3, -1, -1e-8, -0, 0, 1e-8, 1, 3, 19.99, 20.01, 30, 100, 1e4, 1e30, NaN, Infinity, -Infinity];
    const fns = {
      leaky: (v) => F.leakyRelu(v, 0.1), elu: (v) => F.elu(v, 0.7), gelu: (v) => F.gelu(v), gelut: (v) => F.gelu(v, { approximate: 'tanh' }),
      silu: (v) => F.silu(v), softplus: (v) => F.softplus(v), softplus2: (v) => F.softplus(v, 2, 5), hardswish: (v) => F.hardswish(v),
      hardsigmoid: (v) => F.hardsigmoid(v), relu6: (v) => F.relu6(v), hardtanh: (v) => F.hardtanh(v, -3, 0.5),
      erf: (v) => v.erf(), clamp: (v) => v.clamp(-1, 1), clampMin: (v) => v.clamp(0), clampInv: (v) => v.clamp(2, 1),
    };
    const x = om.tensor(edge);
    try {
      for (const [name, f] of Object.entries(fns)) {
        let bytes;
        let e;
        await withTraced((keep) => {
          const tm = keep(om.trace(f, { x }, { outputNames: [name] }), { x }, f(x));
          bytes = tm.toOnnx();
          e = f(x).toArray();
        });
        // the oracle's bound scales with the largest output (1e30 here), so each element is
        // checked on its own scale as well; where both are zero their signs must agree too
        // (silu's tiny negatives aside, which onnxruntime's Sigmoid flushes to zero)
        const o = Object.values(await runOnnx(bytes, { x }))[0].data;
        edge.forEach((v, i) => {
          const a = e[i];
          const b = o[i];
          const same = a === b || (Number.isNaN(a) && Number.isNaN(b)) ||
            (Number.isFinite(a) && Number.isFinite(b) && Math.abs(a - b) <= 1e-5 * Math.max(1, Math.abs(a)));
          assert.ok(same, `${name}(${v}): eager ${a}, onnx ${b}`);
          if (a === 0 && b === 0 && name !== 'silu') assert.equal(Object.is(a, -0), Object.is(b, -0), `${name}(${v}) sign`);
        });
      }
    } finally {
      x.dispose();
    }
  });

  test('dropout in training mode refuses to trace (UnsupportedOperation naming dropout and eval())', async () => {
    const net = new om.nn.Dropout(0.5);
    const x = om.randn([2, 3], { seed: 1 });
    try {
      for (const model of [net, (v) => F.dropout(v.mul(2), { p: 0.1 })]) {
        assert.throws(() => om.tidy(() => om.trace(model, { x })), (e) => e instanceof om.TraceError && e.kind === 'UnsupportedOperation' &&
          /dropout: cannot be traced: in training mode a random mask would be frozen into the graph; call eval\(\)/.test(e.message));
      }
      net.eval();
      await withTraced((keep, trace) => {
        const tm = trace((v) => net.forward(v).mul(3), { x });
        assert.deepEqual(tm.graph().nodes.map((n) => n.opType), ['Mul']); // no node for the dropout
        // a model that is only an eval-mode Dropout (or an Identity): the output is the input,
        // which the tracer writes as one Identity node
        for (const m of [net, new om.nn.Identity()]) assert.deepEqual(trace(m, { x }).graph().nodes.map((n) => n.opType), ['Identity']);
      });
    } finally {
      net.dispose();
      x.dispose();
    }
  });
});

describe('flatten', () => {
  test('nn.Flatten keeps the batch dim, F.flatten flattens all by default, and both trace with a symbolic batch', async () => {
    const x = om.randn([2, 3, 4], { seed: 5 });
    try {
      om.tidy(() => {
        assert.deepEqual(new om.nn.Flatten().forward(x).shape, [2, 12]);
        assert.deepEqual(new om.nn.Flatten({ startDim: 0, endDim: 1 }).forward(x).shape, [6, 4]);
        assert.deepEqual(F.flatten(x).shape, [24]);
        assert.deepEqual(vals(F.flatten(x, 1)), vals(x));
        assert.throws(() => F.flatten(42), (e) => e instanceof om.OmError && /flatten: input/.test(e.message));
      });
      await withTraced((keep, trace) => {
        const tm = trace((v) => new om.nn.Flatten().forward(v).relu(), { x: [x, ['batch', null, null]] });
        assert.deepEqual(tm.outputs[0].shape, ['batch', 12]);
      });
    } finally {
      x.dispose();
    }
  });
});
