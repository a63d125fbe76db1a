// torch.flip, Tensor.repeat, torch.tile, torch.diagonal, torch.diag, torch.prod, torch.cumprod,
// torch.log1p and torch.expm1:
// values, dtypes, gradients (zeros in a product included) and errors against PyTorch's
// (tests/js/fixtures/pytorch/ops/copies_products.json, written by tools/pytorch_copies_products.py),
// gradients against central differences, log1p and expm1 exact near 0 eagerly, in onnxruntime-web
// and in the Session, and every op traced with a symbolic axis and run in both at other sizes
// (1 and odd ones among them).
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as om from 'onemodel';
import { near, vals, throwsKind, gradcheck, memoryHooks, withTraced } from './helpers.mjs';
import { runOnnx, runSessionOf } from '../../examples/lib/oracle.mjs';

memoryHooks();
const fx = JSON.parse(readFileSync(new URL('./fixtures/pytorch/ops/copies_products.json', import.meta.url), 'utf8'));

const tensorOf = ({ dtype, shape, data }) =>
  om.tensor(dtype === 'int64' ? data.map(BigInt) : dtype === 'bool' ? data.map(Boolean) : data, { dtype }).reshape(shape);

/** The op called as a Tensor method with the fixture's arguments (prod's keepdim as its second). */
const call = (op, x, args) => x[op](...args);

/** PyTorch's message (its first words) -> the library's kind and message for the same mistake. */
const ERRORS = [
  [/^dim \d+ appears multiple times/, 'InvalidArgument', /^flip: dim 0 appears twice/],
  [/^Dimension out of range/, 'IndexOutOfRange', /: dim [13] is out of range for (a tensor of )?[13] dims/],
  [/^diagonal dimensions cannot be identical/, 'InvalidArgument', /^diagonal: dim1 and dim2 cannot be the same dim \(1\)/],
  [/^matrix or a vector expected/, 'InvalidArgument', /^diag: takes a 1-D or 2-D input, got 3 dims/],
  [/^Number of dimensions of repeat dims can not be smaller/, 'InvalidArgument', /^repeat: 2 sizes for a tensor of 3 dims/],
  [/^Trying to create tensor with negative dimension/, 'InvalidArgument', /^tile: repeat -1 of dim 1 is negative/],
];

describe("flip, repeat, tile, prod and cumprod: PyTorch's values, dtypes, gradients and errors", () => {
  for (const c of fx.cases) {
    const what = `${c.op}(${c.input.dtype}[${c.input.shape}], ${JSON.stringify(c.args).slice(1, -1)})`;
    test(c.error ? `${what} fails as PyTorch's "${c.error.slice(0, 50)}"` : what, () => om.tidy(() => {
      const x = tensorOf(c.input);
      if (c.error) {
        const [, kind, re] = ERRORS.find(([torch]) => torch.test(c.error));
        throwsKind(() => call(c.op, x, c.args), kind, re);
        return;
      }
      if (c.grad) x.requiresGrad = true;
      const y = call(c.op, x, c.args);
      assert.equal(y.dtype, c.output.dtype);
      assert.deepEqual(y.shape, c.output.shape);
      assert.deepEqual(vals(y), c.output.data.map(Number)); // halves of small integers: exact in any order; bool as 0, 1
      if (!c.grad) return;
      const w = om.arange(y.numel()).mul(0.5).add(0.5).reshape(y.shape);
      y.mul(w).sum().backward();
      near(vals(x.grad), c.grad, 1e-6, `${what}: gradient`);
    }));
  }
});

describe('gradients against central differences, zeros in the products included', () => {
  const withZeros = () => om.tensor([[0.5, 0, -1.5, 2], [1.25, -0.75, 0, 0], [0.3, 1.1, -0.9, 1.7]]);
  test('prod over a dim, over all, keepdim', () => om.tidy(() => {
    gradcheck((t) => t.prod(1), withZeros());
    gradcheck((t) => om.prod(t, 0, true), withZeros());
    gradcheck((t) => t.prod().reshape([1]), om.tensor([[0.5, 1.5], [-2, 0]]));
  }));
  test('cumprod forwards along either dim', () => om.tidy(() => {
    gradcheck((t) => t.cumprod(1), withZeros());
    gradcheck((t) => om.cumprod(t, 0), withZeros());
  }));
  test('flip, repeat, tile, diagonal, diag, log1p, expm1', () => om.tidy(() => {
    const x = () => om.tensor([[0.5, -0.25, 1.5], [2, -0.6, 0.75]]); // above log1p's -1
    gradcheck((t) => t.flip(0, 1), x());
    gradcheck((t) => t.repeat(2, 1, 3), x());
    gradcheck((t) => om.tile(t, [2]), x());
    gradcheck((t) => t.diagonal(-1, 1, 0), x());
    gradcheck((t) => om.diag(t.flatten(), 2), x());
    gradcheck((t) => t.log1p(), x());
    gradcheck((t) => om.expm1(t), x());
  }));
});

describe('log1p and expm1: exact near 0, eagerly, in onnxruntime-web and in the Session', () => {
  // tiny values (where Log(1 + x) and Exp(x) - 1 are 0 or lose most digits), moderate ones, and the ends
  const v = [-0.9, -0.5, -1e-3, -3e-6, -1e-10, -0, 0, 1e-30, 2e-8, 5e-5, 1e-3, 0.25, 1, 3, 20, -20, -90, 80];
  const want = { log1p: v.map((a) => Math.fround(Math.log1p(Math.fround(a)))), expm1: v.map((a) => Math.fround(Math.expm1(Math.fround(a)))) };
  /** got within 4 ulps (1 ulp of float32 is 2^-23 relative) of want, element by element. */
  const close = (got, name, where) => got.forEach((g, i) => {
    const w = want[name][i];
    assert.ok(Object.is(g, w) || Math.abs(g - w) <= 4 * 2 ** -23 * Math.abs(w), `${where} ${name}(${v[i]}): ${g}, want ${w}`);
  });
  test('eager: the correctly rounded value (of the float input) to an ulp', () => om.tidy(() => {
    const x = om.tensor(v);
    for (const name of ['log1p', 'expm1']) {
      vals(x[name]()).forEach((g, i) => {
        const w = want[name][i];
        assert.ok(Object.is(g, w) || Math.abs(g - w) <= 2 ** -23 * Math.abs(w), `${name}(${v[i]}): ${g}, want ${w}`);
      });
    }
    assert.deepEqual(vals(om.tensor([-1, -2, Infinity, -Infinity]).log1p()), [-Infinity, NaN, Infinity, NaN]);
    assert.deepEqual(vals(om.tensor([Infinity, -Infinity, 100]).expm1()), [Infinity, -1, Infinity]);
    assert.equal(om.tensor([1n, 2n]).log1p().dtype, 'float32'); // integers promoted, as PyTorch
  }));
  test("the traced graph's Kahan forms: to a few ulps in both engines, ends and infinities too", async () => {
    const x = om.tensor([...v, -1, Infinity, -Infinity, 100]);
    want.log1p.push(-Infinity, Infinity, NaN, Math.fround(Math.log1p(100)));
    want.expm1.push(Math.fround(Math.expm1(-1)), Infinity, -1, Infinity);
    const traced = om.trace((t) => ({ log1p: t.log1p(), expm1: t.expm1() }), { x: [x, ['n']] });
    try {
      const [ort, mine] = [await runOnnx(traced.toOnnx(), { x }), runSessionOf(traced, { x })];
      for (const name of ['log1p', 'expm1']) {
        close(ort[name].data, name, 'onnxruntime-web');
        close(mine[name].data, name, 'Session');
      }
    } finally {
      traced.dispose();
      x.dispose();
    }
  });
});

describe('traced with a symbolic axis: onnxruntime-web and the Session agree with eager, at other sizes too', () => {
  test('flip, repeat (leading dims added), tile, prod, cumprod, log1p, expm1, diagonal, diag of [n, 3]', () =>
    withTraced((keep, trace) => {
      const f = (t) => ({
        flipped: t.flip(0, -1),
        repeated: t.repeat(2, 1, 2),
        tiled: om.tile(t, [3]),
        rows: t.prod(1),
        cols: om.prod(t, 0, true),
        all: t.prod(),
        running: t.cumprod(0),
        across: om.cumprod(t, 1),
        logs: t.abs().log1p(),
        exps: t.expm1(),
        diagonal: t.narrow(0, 0, 2).diagonal(1),
        diag: om.diag(t.select(1, 0), -1),
      });
      trace(f, { x: [om.tensor([[0.5, -1.5, 2], [0, 1.25, -0.75], [1.5, 0.5, 0], [-2, 1, 1.5]]), ['n', null]] });
    }));
  test('int64 and bool: prod and cumprod as int64, flip and tile keep the dtype', () =>
    withTraced((keep, trace) => {
      trace((i, m) => ({ p: i.prod(0), c: i.cumprod(0), f: m.flip(0), t: i.tile([2, 1]), mp: m.prod(0), mc: m.cumprod(0) }),
        { i: [om.tensor([[3n, -2n], [1n, 0n], [2n, 5n]]), ['n', null]], m: [om.tensor([[true, false], [true, true], [true, true]]), ['n', null]] });
    }));
});

describe('errors', () => {
  test('each mistake names the call and what is wrong', () => {
    const x = om.zeros([2, 3]);
    try {
      throwsKind(() => x.flip(0, -2), 'InvalidArgument', /^flip: dim 0 appears twice/);
      throwsKind(() => x.repeat(2), 'InvalidArgument', /^repeat: 1 sizes for a tensor of 2 dims \(at least as many, at most 8\)/);
      throwsKind(() => x.repeat(1, -2), 'InvalidArgument', /^tile: repeat -2 of dim 1 is negative/);
      throwsKind(() => x.repeat(1, 2 ** 62), 'InvalidArgument', /^tile: dim 1 of size 3 repeated 4611686018427387904 times overflows/);
      throwsKind(() => om.tile(x, 1, 2, 3, 4, 5, 6, 7, 8, 9), 'InvalidArgument', /^tile: 9 dims \(at most 8\)/);
      throwsKind(() => x.repeat('2'), 'InvalidArgument', /^repeat: /);
      throwsKind(() => x.cumprod(), 'InvalidArgument', /^cumprod: dim is required/);
      throwsKind(() => x.cumprod(2), 'IndexOutOfRange', /^cumprod: dim 2 is out of range for 2 dims/);
    } finally {
      x.dispose();
    }
  });
});
