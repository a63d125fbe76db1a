// Shared helpers of the JS tests (not a test file: node --test runs tests/js/*.test.mjs).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { before, beforeEach, afterEach } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import * as om from 'onemodel';
import { checkTraced, otherShapes, tracedChecks } from '../../examples/lib/oracle.mjs';

let gc = null;

/**
 * Collects garbage until the collector's callbacks have released every dropped tensor: the live
 * count stops falling (the callbacks run in a task after the collection, so each round yields).
 * Returns the live tensor count. No --expose-gc needed: the flag set at run time exposes gc() to
 * contexts made after it.
 */
export async function collectGarbage() {
  if (!gc) {
    setFlagsFromString('--expose-gc');
    gc = runInNewContext('gc');
  }
  // V8 runs a FinalizationRegistry's callbacks in a task of their own after a collection, which a
  // loaded machine may schedule after the next timer: the count is taken as settled only when three
  // rounds in a row agree (two agreeing rounds let a late cleanup through under load).
  let prev = -1, same = 0;
  for (let round = 0; round < 50; round++) {
    gc();
    await new Promise((r) => setTimeout(r, 0));
    const now = om.memory().tensors;
    same = now === prev ? same + 1 : 0;
    if (same === 2) return now;
    prev = now;
  }
  return prev;
}

/** A fixture's number: "NaN", "Infinity", "-Infinity" and "-0" as the numbers they name. */
export const fixtureNumber = (v) => ({ NaN, Infinity, '-Infinity': -Infinity, '-0': -0 })[v] ?? v;

/**
 * t equals a fixture tensor { dtype, shape, data }: int64 (data numbers or decimal strings) and
 * bool exactly, float32 within rel (relative, at least 1 in magnitude) with -0 and NaN as they are,
 * or, where rel is a function (got, expected) -> bool, as it says.
 */
export function expectFixture(t, want, what, rel) {
  assert.equal(t.dtype, want.dtype, `${what}: dtype`);
  assert.deepEqual(t.shape, want.shape, `${what}: shape`);
  const g = [...t.toArray()];
  if (want.dtype === 'int64') return assert.deepEqual(g, want.data.map(BigInt), `${what}: values`);
  if (want.dtype === 'bool') return assert.deepEqual(g, want.data.map(Number), `${what}: values`);
  const w = want.data.map(fixtureNumber);
  const close = typeof rel === 'function' ? rel
    : (x, y) => Object.is(x, y) || (x === y && x !== 0) || Math.abs(x - y) <= rel * Math.max(1, Math.abs(y));
  const bad = g.findIndex((x, i) => !close(x, w[i]));
  return assert.equal(bad, -1, `${what}: element ${bad}: expected ${String(w[bad])} got ${String(g[bad])}\n  expected [${w.map(String)}]\n  got      [${g.map(String)}]`);
}

/** A tensor's elements as plain numbers (bigints and bool bytes converted). */
export function vals(t) {
  return Array.from(t.toArray(), Number);
}

/** Elementwise |actual - expected| <= tol (so -0 equals 0), with both arrays in the message. */
export function near(actual, expected, tol = 1e-5, what = '') {
  const a = Array.from(actual, Number);
  const e = Array.from(expected, Number);
  const bad = a.length !== e.length || a.some((v, i) => !(Math.abs(v - e[i]) <= tol || (Number.isNaN(v) && Number.isNaN(e[i]))));
  if (bad) assert.fail(`${what ? what + ': ' : ''}expected [${e}] got [${a}] (tol ${tol})`);
}

/**
 * One case of a PyTorch fixture ({ inputs: [{ shape, data }], g, output, grads: [{ shape, data } |
 * null] }, tools/pytorch_composites.py's): the inputs as tensors (those with a gradient requiring
 * one), y = call(xs) against output and, where an input has a gradient, the gradients of
 * (y * g).sum(); each value within its tolerance relative to 1 + |PyTorch's|. Call inside om.tidy.
 */
export function checkPyTorchCase(c, call, { value = 2e-6, grad = 2e-5 } = {}) {
  const rel = (got, want, tol, what) => {
    assert.equal(got.length, want.length, `${what}: length`);
    for (let i = 0; i < want.length; i++) {
      assert.ok(Math.abs(got[i] - want[i]) <= tol * (1 + Math.abs(want[i])), `${what}[${i}]: ${got[i]} vs PyTorch ${want[i]}`);
    }
  };
  const xs = c.inputs.map((x, i) => {
    const t = om.tensor(x.data, { shape: x.shape, dtype: x.dtype ?? 'float32' }); // int64 indices, offsets
    if (c.grads[i]) t.requiresGrad = true;
    return t;
  });
  const y = call(xs);
  assert.deepEqual(y.shape, c.output.shape);
  rel(vals(y), c.output.data, value, 'value');
  if (!c.grads.some((g) => g)) return;
  y.mul(om.tensor(c.g.data, { shape: c.g.shape })).sum().backward();
  c.grads.forEach((g, i) => { if (g) rel(vals(xs[i].grad), g.data, grad, `gradient of input ${i}`); });
}

/** A tensor's values and shape, checked together. */
export function check(t, shape, expected, tol = 1e-5) {
  assert.deepEqual(t.shape, shape, 'shape');
  near(t.toArray(), expected, tol, `values of shape [${shape}]`);
}

/** fn throws, inside om.tidy, an OmError of kind with a message matching re. */
export function throwsKind(fn, kind, re) {
  assert.throws(() => om.tidy(fn), (e) => e instanceof om.OmError && e.kind === kind && re.test(e.message));
}

/** A module whose forward is f. */
export const moduleOf = (f) => new (class extends om.nn.Module { forward(...xs) { return f(...xs); } })();

/** Backward of sum(f(...ts) * w) against central differences in every element of every input. */
export function gradcheck(f, ...ts) {
  const w = om.rand(om.tidy(() => f(...ts)).shape, { seed: 7 });
  const loss = () => om.noGrad(() => Number(f(...ts).mul(w).sum().item()));
  for (const t of ts) t.requiresGrad = true;
  f(...ts).mul(w).sum().backward();
  for (const t of ts) {
    const g = vals(t.grad);
    const n = t.shape.reduce((p, q) => p * q, 1);
    for (let k = 0; k < n; k++) {
      const idx = [];
      for (let d = t.shape.length - 1, r = k; d >= 0; d--) { idx.unshift(r % t.shape[d]); r = Math.floor(r / t.shape[d]); }
      const x0 = vals(t)[k];
      om.noGrad(() => t.set_(idx, x0 + 1e-2));
      const up = loss();
      om.noGrad(() => t.set_(idx, x0 - 1e-2));
      const down = loss();
      om.noGrad(() => t.set_(idx, x0));
      near([g[k]], [(up - down) / 2e-2], 2e-3, `d/d [${idx}]`);
    }
  }
}

/** The test file's hooks: load once, and om.memory() back to its baseline after every test. */
export function memoryHooks() {
  let base;
  before(() => om.ready());
  beforeEach(() => {
    base = om.memory();
  });
  afterEach(() => {
    const m = om.memory();
    assert.equal(m.tensors, base.tensors, `live tensors after the test: ${m.tensors} (baseline ${base.tensors})`);
    assert.equal(m.bytes, base.bytes, `live bytes after the test: ${m.bytes} (baseline ${base.bytes})`);
  });
}

/** A reference matmul for [..., n, k] @ [..., k, m] with broadcast batch dims, on flat arrays. */
export function refMatmul(a, as, b, bs) {
  const n = as[as.length - 2], k = as[as.length - 1], m = bs[bs.length - 1];
  const ab = as.slice(0, -2), bb = bs.slice(0, -2);
  const nb = Math.max(ab.length, bb.length);
  const pad = (s) => [...Array(nb - s.length).fill(1), ...s];
  const pa = pad(ab), pb = pad(bb);
  const batch = pa.map((v, i) => Math.max(v, pb[i]));
  const total = batch.reduce((x, y) => x * y, 1);
  const out = [];
  for (let idx = 0; idx < total; idx++) {
    let r = idx, oa = 0, ob = 0, sa = 1, sb = 1;
    for (let d = nb - 1; d >= 0; d--) {
      const i = r % batch[d];
      r = Math.floor(r / batch[d]);
      oa += (pa[d] === 1 ? 0 : i) * sa;
      ob += (pb[d] === 1 ? 0 : i) * sb;
      sa *= pa[d];
      sb *= pb[d];
    }
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < m; j++) {
        let s = 0;
        for (let q = 0; q < k; q++) s += a[oa * n * k + i * k + q] * b[ob * k * m + q * m + j];
        out.push(s);
      }
    }
  }
  return { shape: [...batch, n, m], values: out };
}

// ---- traced models: every one a test keeps goes through the oracle ---------------------------

/**
 * Starts the onnxruntime-web oracle (examples/lib/oracle.mjs checkTraced) on a traced model and
 * returns its promise. inputs ({ name: example Tensor }) and eager (the eager outputs: an object
 * by output name, an array in output order, or one Tensor) are required; both are read, and the
 * .onnx written, before this returns, so they may be freed (and the model disposed) right after.
 * After finish(), a traced output tensor holds the values of the eager run, so it can serve as
 * its own eager value.
 */
export function startOracle(tm, inputs, eager, options) {
  oracleArguments(tm, inputs, eager);
  const p = checkTraced(tm, inputs, eager, options);
  p.catch(() => {}); // the caller awaits it; this only keeps an early failure from counting as unhandled
  return p;
}

/** Throws unless startOracle's arguments are a TracedModel, its example inputs and its eager outputs. */
function oracleArguments(tm, inputs, eager) {
  if (!(tm instanceof om.TracedModel)) throw new Error(`oracle: expected a TracedModel, got ${tm}`);
  if (inputs === null || typeof inputs !== 'object' || Array.isArray(inputs) || !Object.keys(inputs).length) {
    throw new Error('oracle: every traced model needs its example inputs ({ name: Tensor }) to run in onnxruntime-web');
  }
  if (!(eager instanceof om.Tensor) && (eager === null || typeof eager !== 'object')) {
    throw new Error('oracle: every traced model needs its eager outputs to compare the .onnx with');
  }
}

/** The example tensors of om.trace-style inputs ({ name: Tensor | [Tensor, axisNames] }). */
export function examplesOf(inputs) {
  return Object.fromEntries(Object.entries(inputs).map(([k, v]) => [k, Array.isArray(v) ? v[0] : v]));
}

/** True when a graph input of tm has a symbolic axis (a dim_param name). */
function isSymbolic(tm) {
  return tm.inputs.some((i) => i.shape.some((d) => typeof d === 'string'));
}

/** model (a function or an nn.Module) run eagerly on feeds ({ name: Tensor }) in tm's input order. */
function runEager(tm, model, feeds) {
  const xs = tm.inputs.map((i) => feeds[i.name]);
  return typeof model === 'function' ? model(...xs) : model.forward(...xs);
}

/**
 * The harness of the trace tests: runs fn(keep, trace) inside om.tidy, then awaits the oracle on
 * every model kept, and disposes them all (also when something throws).
 *   keep(tm, inputs, eager, label, model): registers tm and starts the oracle on it (see
 *     startOracle; inputs and eager are required, so no kept model skips the oracle). When tm
 *     has symbolic axes, the first keep of it also needs model (the function or nn.Module
 *     traced, taking the inputs in tm's input order): it runs model eagerly, synchronously,
 *     at three other sizes of every symbol, smaller and larger, within the sizes tm holds for
 *     (examples/lib/oracle.mjs otherShapes with tm.symbols) and checks the .onnx at those too,
 *     so no symbolic model is only checked at its traced shape. Returns tm.
 *   trace(model, inputs, options): om.trace, then eager runs of model on the examples (outside
 *     the trace) and at the other sizes, then keep. Returns the TracedModel.
 * The checks of one tm share one Session and one onnxruntime-web session (oracle.mjs
 * tracedChecks), which run them once fn has returned; keep reads inputs and eager at once.
 * Resolves to what fn returned. With options.onReport, keep(tm, inputs, eager, label) also
 * calls onReport(label, report) with the oracle's report ({ ok, outputs: [{ name, maxError,
 * bound, ... }] }) once that model has passed (at the other sizes: 'at ' and the inputs' shapes).
 * Every check runs to its end; when some fail, it rejects with the first one's error, its
 * message prefixed by the check's label (when it has one) and followed by the other failures'.
 */
export async function withTraced(fn, { onReport } = {}) {
  const made = new Set();
  const resized = new Set(); // symbolic models already checked at other sizes
  const checks = [];
  // one oracle per traced model: its checks (the example, the other sizes, a fixture's cases) run
  // in one Session and one onnxruntime-web session once fn returns
  const oracles = new Map();
  const check = (tm, inputs, eager, label) => {
    oracleArguments(tm, inputs, eager);
    if (!oracles.has(tm)) oracles.set(tm, tracedChecks(tm));
    const p = oracles.get(tm).check(inputs, eager);
    p.catch(() => {}); // awaited below; see startOracle
    const q = (onReport ? p.then((r) => onReport(label, r)) : p).catch((e) => {
      if (label !== undefined && e instanceof Error) e.message = `${label}: ${e.message}`;
      throw e;
    });
    q.catch(() => {}); // awaited below; see startOracle
    checks.push(q);
  };
  const keep = (tm, inputs, eager, label, model) => {
    if (tm instanceof om.TracedModel) made.add(tm);
    check(tm, inputs, eager, label);
    if (!(tm instanceof om.TracedModel) || !isSymbolic(tm) || resized.has(tm)) return tm;
    if (model === undefined) {
      throw new Error('keep: a model traced with symbolic axes needs its model (5th argument) to be checked at other sizes');
    }
    resized.add(tm);
    const axes = Object.fromEntries(tm.inputs.map((i) => [i.name, [inputs[i.name], i.shape.map((d) => (typeof d === 'string' ? d : null))]]));
    for (const feeds of otherShapes(axes, tm.symbols)) {
      const sizes = tm.inputs.map((i) => `${i.name} [${feeds[i.name].shape}]`).join(', ');
      check(tm, feeds, runEager(tm, model, feeds), `at ${sizes}`);
    }
    return tm;
  };
  const trace = (model, inputs, options) => {
    const tm = om.trace(model, inputs, options);
    made.add(tm); // disposed also when the eager run throws
    const examples = examplesOf(inputs);
    return keep(tm, examples, runEager(tm, model, examples), undefined, model);
  };
  try {
    const result = om.tidy(() => fn(keep, trace));
    for (const o of oracles.values()) await o.run();
    const failed = (await Promise.allSettled(checks)).filter((r) => r.status === 'rejected').map((r) => r.reason);
    if (failed.length > 1 && failed[0] instanceof Error) {
      failed[0].message += `\n${failed.length - 1} more failing: ${failed.slice(1).map((e) => (e instanceof Error ? e.message : String(e))).join('\n')}`;
    }
    if (failed.length) throw failed[0];
    return result;
  } finally {
    for (const o of oracles.values()) o.dispose();
    for (const tm of made) tm.dispose();
  }
}

/** The ```js blocks of the README's "## Example" section, as written there (tests run them). */
export function readmeExamples() {
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
  const section = readme.split(/^## /m).find((s) => s.startsWith('Example\n'));
  assert.ok(section, 'README.md has a "## Example" section');
  return [...section.matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]);
}

/** The entries of a ModelProto's metadata_props (field 14: key 1, value 2) in .onnx bytes. */
export function metadataProps(bytes) {
  let at = 0;
  const varint = () => { let v = 0, s = 0, b; do { b = bytes[at++]; v += (b & 0x7f) * 2 ** s; s += 7; } while (b & 0x80); return v; };
  const fields = (end, fn) => {
    while (at < end) {
      const tag = varint(), type = tag & 7;
      if (type === 0) varint();
      else if (type === 2) { const n = varint(), stop = at + n; fn(tag >>> 3, stop); at = stop; }
      else if (type === 5) at += 4;
      else if (type === 1) at += 8;
      else throw new Error(`wire type ${type}`);
    }
  };
  const text = (stop) => new TextDecoder().decode(bytes.subarray(at, stop));
  const props = {};
  fields(bytes.length, (field, stop) => {
    if (field !== 14) return;
    let key, value;
    fields(stop, (f, s) => { if (f === 1) key = text(s); if (f === 2) value = text(s); });
    props[key] = value;
  });
  return props;
}

/** The error om.trace(model, inputs) throws, checked to be a TraceError of kind. */
export function traceRefusal(model, inputs, kind) {
  let err;
  assert.throws(() => om.trace(model, inputs), (e) => {
    assert.ok(e instanceof om.TraceError, String(e));
    assert.equal(e.kind, kind, e.message);
    err = e;
    return true;
  });
  return err;
}
