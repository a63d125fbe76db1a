// An audit of type promotion against PyTorch (tests/js/fixtures/pytorch/ops/audit.json, written by
// tools/pytorch_audit.py), with operands the other fixtures do not use: -0.0, NaN, infinities,
// int64 values near 2^62 (whose sums and products wrap), zero divisors, 0-d tensors, negative and
// positive integer scalars. Every binary op on every pair, the in-place forms (PyTorch's "result
// type Float can't be cast to the desired output type Long"), where with tensor and scalar
// branches, maskedFill and clamp: PyTorch's dtype, shape and values (int64 exactly, floats to an
// ulp, signed zeros and NaN as they are) or its refusal. Then the same calls traced: the graph's
// Casts run in onnxruntime-web and the Session.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as om from 'onemodel';
import { memoryHooks, withTraced, fixtureNumber as num, expectFixture } from './helpers.mjs';

memoryHooks();
const fx = JSON.parse(readFileSync(new URL('./fixtures/pytorch/ops/audit.json', import.meta.url), 'utf8'));

/** A fixture tensor ({ dtype, shape, data }) as a Tensor. */
function tensorOf(o) {
  const data = o.data.map((v) => (o.dtype === 'int64' ? BigInt(v) : o.dtype === 'bool' ? Boolean(v) : num(v)));
  return om.tensor(data, { dtype: o.dtype, shape: o.shape });
}

/** PyTorch's scalar kinds in JS: an int is a bigint or an integer number (both are tried), a float a number with a fraction. */
function scalarForms(kind) {
  const v = fx.operands[kind].scalar;
  return typeof v === 'number' && Number.isInteger(v) ? [v, BigInt(v)] : [v];
}

const camel = (op) => op.replace(/_(\w)/g, (_, c) => c.toUpperCase());
const COND = [true, false, true, false, false, true];

function call(c, a, b) {
  if (c.op === 'where') return om.where(om.tensor(COND), a, b);
  if (c.op === 'masked_fill') return a.maskedFill(om.tensor(COND), b);
  if (c.op === 'clamp') return a.clamp(b, c.cValue);
  if (c.op.endsWith('_')) return a.clone()[`${camel(c.op.slice(0, -1))}_`](b);
  return a[camel(c.op)](b);
}

/** got equals the fixture's result: floats within an ulp or two (pow and atan2 round their own double results). */
const expectLike = (got, want, what) => expectFixture(got, want, what, 2.5e-7);

/**
 * The library's documented departure from PyTorch (docs/api.md): where with scalars only, one a
 * JS number, gives float32 (JS cannot tell 3 from 3.0, and a number is an int only beside an
 * int64 or bool Tensor; bigints give PyTorch's int64).
 */
function documented(c, a, b) {
  if (c.op === 'where' && c.dtype === 'int64' && [a, b].some((v) => typeof v === 'number') && ![a, b].some((v) => v instanceof om.Tensor)) {
    return { ...c, dtype: 'float32', data: c.data.map(Number) };
  }
  return c;
}

function label(c) {
  const args = [c.a, c.b, ...(c.op === 'clamp' ? [c.c] : [])].map(String).join(', ');
  return c.error ? `${c.op}(${args}) fails, as PyTorch's "${c.error.slice(0, 70)}"` : `${c.op}(${args}) -> ${c.dtype}`;
}

function operandForms(kind) {
  if (kind === null || kind === undefined) return [null];
  return kind in fx.operands && 'scalar' in fx.operands[kind] ? scalarForms(kind) : [kind];
}

describe('promotion audit: every op, dtype pair and scalar kind, as PyTorch 1.13', () => {
  for (const c of fx.promotion) {
    test(label(c), () => om.tidy(() => {
      const as = operandForms(c.a).map((k) => (typeof k === 'string' ? tensorOf(fx.operands[k]) : k));
      const bs = operandForms(c.b).map((k) => (typeof k === 'string' ? tensorOf(fx.operands[k]) : k));
      const cs = operandForms(c.c).map((k) => (typeof k === 'string' ? tensorOf(fx.operands[k]) : k));
      for (const a of as) {
        for (const b of bs) {
          for (const hi of cs) {
            const what = `${c.op}(${c.a}=${a}, ${c.b}=${b}${c.op === 'clamp' ? `, ${hi}` : ''})`;
            const cc = { ...documented(c, a, b), cValue: hi };
            if (cc.error) {
              assert.throws(() => call(cc, a, b), (e) => {
                assert.ok(e instanceof om.OmError, `${what}: ${e}`);
                const zero = c.error === 'ZeroDivisionError'; // an integer fmod or remainder by 0
                assert.equal(e.kind, zero || c.error.startsWith('Integers to negative') ? 'InvalidArgument' : 'DtypeMismatch', `${what}: ${e.message}`);
                if (zero) assert.match(e.message, new RegExp(`^${c.op}: integer division by zero \\(element \\d+ of the divisor\\)$`), what);
                if (c.error.startsWith('Integers to negative')) assert.match(e.message, /^pow: Integers to negative integer powers are not allowed/, what);
                if (c.error.includes("can't be cast to the desired output type")) assert.match(e.message, /result type \w+ can't be cast to the desired output type \w+/, what);
                return true;
              }, what);
            } else {
              expectLike(call(cc, a, b), cc, what);
            }
          }
        }
      }
    }));
  }

  test("an in-place op whose other operand broadcasts the tensor fails with PyTorch's words; bad maskedFill values", () => om.tidy(() => {
    const x = om.tensor([1, 2]);
    assert.throws(() => x.add_(om.ones([2, 2])), (e) => e.kind === 'ShapeMismatch' && e.message === "add_: output with shape [2] doesn't match the broadcast shape [2,2]");
    assert.throws(() => x.bitwiseOr_(om.ones([3, 1], { dtype: 'bool' })), (e) => e.kind === 'DtypeMismatch' && /^bitwiseOr: /.test(e.message));
    assert.deepEqual([...x.toArray()], [1, 2], 'nothing written');
    assert.throws(() => x.maskedFill(om.tensor([true, false]), om.tensor([3])), (e) => e.kind === 'InvalidArgument' && e.message === 'maskedFill: value must be a 0-d Tensor, got one of 1 dims');
    assert.throws(() => x.maskedFill(om.tensor([1n, 0n]), om.tensor(3)), (e) => e.kind === 'DtypeMismatch' && e.message === 'maskedFill: mask must be bool, got int64');
    assert.throws(() => om.tensor([2n]).pow(-2n), (e) => e.kind === 'InvalidArgument' && /^pow: Integers to negative integer powers are not allowed \(got -2 for a int64 tensor/.test(e.message));
  }));

  test('the fixture covers every op the JS API promotes, its in-place forms, where, maskedFill and clamp', () => {
    const ops = new Set(fx.promotion.map((c) => c.op));
    for (const op of ['add', 'div', 'pow', 'fmod', 'remainder', 'atan2', 'minimum', 'maximum', 'ge', 'logical_xor', 'bitwise_xor', 'add_', 'div_', 'bitwise_or_', 'where', 'masked_fill', 'clamp']) {
      assert.ok(ops.has(op), op);
    }
    assert.ok(fx.promotion.filter((c) => c.error).length > 50);
  });
});

describe('promotion audit, traced: the graph of every mix runs in onnxruntime-web and the Session', () => {
  // the audit's operands as graph inputs; the scalars as constants. Integer fmod and remainder by
  // a zero (PyTorch raises) and anything that fails eagerly are left out.
  const OPS = ['add', 'sub', 'mul', 'div', 'pow', 'atan2', 'minimum', 'maximum', 'fmod', 'remainder', 'eq', 'lt', 'ge', 'logical_and', 'logical_xor', 'bitwise_and', 'bitwise_or'];
  for (const op of OPS) {
    test(`${op} of tensors and scalars`, () => withTraced((keep, trace) => {
      const f = (x, i, m) => {
        const named = { f: x, i, b: m };
        const out = {};
        for (const c of fx.promotion) {
          if (c.op !== op || c.error || !(c.a in named) || (c.b in fx.operands && c.b.endsWith('0'))) continue; // the 0-d tensors are not inputs
          if ((op === 'fmod' || op === 'remainder') && c.dtype === 'int64' && (c.b === 'i' || c.b === 'b')) continue; // a zero divisor
          if (op === 'pow' && c.a === 'i' && c.b === 'i') continue; // overflows: onnxruntime's int64 Pow saturates (docs/api.md)
          out[`${c.a}_${c.b}`] = call(c, named[c.a], c.b in named ? named[c.b] : scalarForms(c.b)[0]);
        }
        return out;
      };
      trace(f, { x: tensorOf(fx.operands.f), i: tensorOf(fx.operands.i), m: tensorOf(fx.operands.b) });
    }));
  }
  test('int64 fmod and remainder past 2^53, each operand broadcast, at other sizes too', () => withTraced((keep, trace) => {
    const big = 2n ** 60n + 11n;
    const a = om.tensor([big, -big, 7n, -7n, big - 1n, 5n]), b = om.tensor([[3n], [-5n], [big]]);
    trace((p, q) => ({ fmod: p.fmod(q), remainder: p.remainder(q), back: q.fmod(p.abs().add(1n)), mixed: p.fmod(-3) }), { a: [a, ['n']], b: [b, ['m', null]] });
    // C's and Python's remainders, exactly
    const got = [...a.fmod(b).toArray()], want = [3n, -5n, big].flatMap((q) => [...a.toArray()].map((p) => p % q));
    assert.deepEqual(got, want);
  }));
  test('where, clamp and maskedFill with scalars and tensors', () => withTraced((keep, trace) => {
    const f = (x, i, m) => ({
      where: om.where(m, x, -4), where2: om.where(m, i, -1.5), where3: om.where(m, i, true), clampi: i.clamp(-4, 3),
      clampf: i.clamp(null, -1.5), clampb: m.clamp(-4, 3), clampt: x.clamp(i, om.tensor(2n)), fill: i.maskedFill(m, true), fill2: x.maskedFill(m, om.tensor(-5n)),
    });
    trace(f, { x: tensorOf(fx.operands.f), i: tensorOf(fx.operands.i), m: tensorOf(fx.operands.b) });
  }));
});
