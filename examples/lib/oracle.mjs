// The trace oracle: runs a traced model's .onnx in onnxruntime-web (Node, or a browser / Web
// Worker: wasm backend, one thread) and its graph in the library's own Session, and compares every
// output of both with the eager run (spec section 5: equal to 1e-5 scaled), and makes the inputs at other sizes a symbolic model is checked at. No
// Node APIs, so the demo page's worker uses it as the tests and the Node scripts do:
//   import { runOnnx, checkTraced } from './oracle.mjs';
//   const report = await checkTraced(traced, { x: example }, { logits: eagerLogits });
// withSession runs one model at many sizes in one session, and compareOutputs is checkTraced's
// rule on plain arrays (the random model runner, tests/js/random/, uses both). The command that
// checks a model file is tools/trace_oracle.mjs.
import * as om from 'onemodel';

let ortPromise = null;

/** onnxruntime-web, loaded once: Node build, wasm backend, one thread. */
function loadOrt() {
  ortPromise ??= import('onnxruntime-web').then((ort) => {
    ort.env.wasm.numThreads = 1;
    ort.env.logLevel = 'error';
    return ort;
  });
  return ortPromise;
}

const ORT_TYPES = { float32: 'float32', int64: 'int64', bool: 'bool' };

/** A feed value as [ort type, data, dims]: an om.Tensor, or { dtype, data, dims }. */
function feedOf(name, v) {
  if (v instanceof om.Tensor) return [ORT_TYPES[v.dtype], v.toArray(), v.shape];
  if (v && typeof v === 'object' && 'data' in v && 'dims' in v) return [v.dtype ?? v.type, v.data, Array.from(v.dims)];
  throw new Error(`runOnnx: feed ${JSON.stringify(name)} must be an om.Tensor or { dtype, data, dims }`);
}

/** The end of the chain of runs: onnxruntime-web's wasm backend runs one session at a time. */
let lastRun = Promise.resolve();

/** Feeds copied out of their tensors: [[name, ort type, data, dims], ...]. */
function copyFeeds(feeds) {
  return Object.entries(feeds).map(([name, v]) => [name, ...feedOf(name, v)]);
}

/** One run of an open session on copied feeds: every graph output as { dtype, dims, data }. */
async function runSession(ort, session, copied, runOptions) {
  const ortFeeds = {};
  for (const [name, type, data, dims] of copied) ortFeeds[name] = new ort.Tensor(type, data, dims);
  const results = await session.run(ortFeeds, runOptions);
  const out = {};
  for (const name of session.outputNames) {
    const t = results[name];
    out[name] = { dtype: t.type, dims: Array.from(t.dims, Number), data: Array.from(t.data, Number) };
  }
  return out;
}

/**
 * Opens one onnxruntime-web session on ONNX bytes and calls fn(run), where run(feeds) runs it as
 * runOnnx does (feeds read when run is called); the session is released when fn's promise
 * settles. Queued with runOnnx's runs. Resolves to fn's result; rejects with the error of
 * creating the session (before fn is called) or fn's. For many runs of one model (the random
 * model runner checks each at a dozen sizes). logSeverityLevel (ORT's: 0 verbose .. 4 fatal)
 * applies to the session and its runs: 4 keeps ORT from logging errors the caller handles.
 * graphOptimizationLevel ('disabled', 'basic', 'extended', 'all'; ORT's default 'all') tells
 * a bug of ORT's graph optimizer from one of the file.
 */
export function withSession(bytes, fn, { logSeverityLevel, graphOptimizationLevel } = {}) {
  const job = lastRun.then(async () => {
    const ort = await loadOrt();
    const log = logSeverityLevel === undefined ? {} : { logSeverityLevel };
    const level = graphOptimizationLevel === undefined ? {} : { graphOptimizationLevel };
    const session = await ort.InferenceSession.create(bytes, { ...log, ...level, executionProviders: ['wasm'] });
    try {
      return await fn((feeds) => runSession(ort, session, copyFeeds(feeds), log));
    } finally {
      await session.release();
    }
  });
  lastRun = job.catch(() => {});
  return job;
}

/**
 * Runs ONNX bytes on feeds ({ name: om.Tensor | { dtype, data, dims } }) and returns every graph
 * output as { name: { dtype, dims, data } } (copies; dtype 'float32' | 'int64' | 'bool' | ...).
 * om.Tensor feeds are read before this returns. Calls may overlap: the runs are queued, one after the
 * other (sessions run concurrently in one onnxruntime-web wasm instance fail inside ORT).
 */
export function runOnnx(bytes, feeds) {
  let copied;
  try {
    copied = copyFeeds(feeds);
  } catch (e) {
    return Promise.reject(e);
  }
  return withSession(bytes, (run) => run(Object.fromEntries(copied.map(([name, dtype, data, dims]) => [name, { dtype, data, dims }]))));
}

/** The example tensor of an om.trace-style input ([example, axisNames] or a Tensor). */
function exampleOf(v) {
  return Array.isArray(v) ? v[0] : v;
}

/** Eager outputs in the order of names: an object by name, an array in order, or one Tensor. */
function eagerList(eager, names) {
  if (eager instanceof om.Tensor) return [eager];
  if (Array.isArray(eager)) return eager;
  return names.map((n) => {
    if (!(n in eager)) throw new Error(`checkTraced: no eager value for output ${JSON.stringify(n)} (have ${Object.keys(eager).join(', ')})`);
    return eager[n];
  });
}

/** A number to 3 significant digits ("1e-5", "0.00123", "42.5"). */
export function fmt(x) {
  if (!Number.isFinite(x) || x === 0) return String(x);
  const r = Number(x.toPrecision(3));
  return Math.abs(r) < 1e-3 || Math.abs(r) >= 1e6 ? r.toExponential() : String(r);
}

/**
 * Compares ONNX outputs (got: as runOnnx gives them) with the expected ones (expected[i] =
 * { dtype, shape, data } for names[i]): the same dtype and shape, and
 * max|onnx - eager| <= tol * max(1, max|eager|). Returns { outputs: [{ name, dtype, shape,
 * maxError, bound }], problems: [message, ...] } (no problems: they agree).
 */
export function compareOutputs(names, expected, got, tol = 1e-5) {
  const outputs = [];
  const problems = [];
  names.forEach((name, i) => {
    const e = expected[i];
    const o = got[name];
    const row = { name, dtype: e.dtype, shape: e.shape, maxError: NaN, bound: NaN };
    outputs.push(row);
    if (!o) { problems.push(`${name}: missing from the ONNX outputs (${Object.keys(got).join(', ')})`); return; }
    if (o.dtype !== ORT_TYPES[e.dtype]) { problems.push(`${name}: dtype ${o.dtype} in ONNX, ${e.dtype} eager`); return; }
    if (o.dims.length !== e.shape.length || o.dims.some((d, k) => d !== e.shape[k])) {
      problems.push(`${name}: shape [${o.dims}] in ONNX, [${e.shape}] eager`);
      return;
    }
    let maxAbs = 0;
    let maxErr = 0;
    let worst = -1;
    for (let k = 0; k < e.data.length; k++) {
      const a = o.data[k];
      const b = e.data[k];
      if (Number.isNaN(a) && Number.isNaN(b)) continue;
      if (Number.isFinite(b)) maxAbs = Math.max(maxAbs, Math.abs(b));
      const err = a === b ? 0 : Number.isNaN(a - b) ? Infinity : Math.abs(a - b);
      if (!(err <= maxErr)) { maxErr = err; worst = k; }
    }
    row.maxError = maxErr;
    row.bound = tol * Math.max(1, maxAbs);
    if (!(maxErr <= row.bound)) {
      problems.push(`${name}: max |onnx - eager| = ${fmt(maxErr)} > ${fmt(row.bound)} at element ${worst} (onnx ${o.data[worst]}, eager ${e.data[worst]})`);
    }
  });
  return { outputs, problems };
}

/**
 * Runs traced's .onnx in onnxruntime-web, and its graph in the library's own Session, on inputs
 * ({ name: Tensor | [Tensor, axisNames] }, any sizes the graph accepts) and compares each output
 * of both with eager (an object by output name, an array in output order, or one Tensor): the
 * same dtype and shape, and max|got - eager| <= tol * max(1, max|eager|). Returns { ok: true,
 * outputs: [{ name, dtype, shape, maxError, bound }] (onnxruntime-web's), session: [...] (the
 * Session's) }; throws an Error naming every disagreeing output otherwise.
 */
export async function checkTraced(traced, inputs, eager, { tol = 1e-5 } = {}) {
  // Everything is read from the tensors before the first await.
  const check = readCheck(traced, inputs, eager, tol, (feeds) => runSessionOf(traced, feeds));
  const got = await runOnnx(traced.toOnnx(), check.feeds);
  return concludeCheck(check, got);
}

/**
 * checkTraced for many inputs of one traced model, with the .onnx written once, one Session and
 * one onnxruntime-web session (creating an ORT session costs more than running it: about half a
 * second for a 450-node transformer, against milliseconds per run). Returns { check(inputs, eager)
 * -> Promise of checkTraced's report, run() -> Promise, dispose() }: check reads the tensors and
 * runs the Session at once, as checkTraced does before its first await, and its promise settles
 * once run() has run the .onnx on it (run() runs every check made since the last run, in order,
 * in one onnxruntime-web session; a session that cannot be created fails each of them with its
 * error). dispose() frees the Session (after run() has settled, or when the checks are dropped).
 */
export function tracedChecks(traced, { tol = 1e-5 } = {}) {
  let session = null;
  let bytes = null;
  let pending = [];
  const runSession = (feeds) => {
    session ??= traced.session(); // kept only once made: a Session that cannot be made fails each check, as checkTraced's
    return runSessionIn(session, feeds);
  };
  return {
    check(inputs, eager) {
      let check;
      try {
        check = readCheck(traced, inputs, eager, tol, runSession);
        bytes ??= traced.toOnnx();
      } catch (e) {
        return Promise.reject(e);
      }
      return new Promise((resolve, reject) => pending.push({ check, resolve, reject }));
    },
    run() {
      const jobs = pending;
      pending = [];
      if (!jobs.length) return Promise.resolve();
      const done = withSession(bytes, async (run) => {
        for (const job of jobs) {
          try {
            job.resolve(concludeCheck(job.check, await run(job.check.feeds)));
          } catch (e) {
            job.reject(e);
          }
        }
      });
      return done.catch((e) => { for (const job of jobs) job.reject(e); });
    },
    dispose() {
      session?.dispose();
      session = null;
    },
  };
}

/** checkTraced's reading part: { names, expected, feeds, mine (the Session's comparison), tol }. */
function readCheck(traced, inputs, eager, tol, runSession) {
  const names = traced.outputs.map((o) => o.name);
  const want = eagerList(eager, names);
  if (want.length !== names.length) {
    throw new Error(`checkTraced: ${want.length} eager outputs for ${names.length} traced outputs (${names.join(', ')})`);
  }
  const expected = want.map((t, i) => {
    if (!(t instanceof om.Tensor)) throw new Error(`checkTraced: eager output ${names[i]} is not a Tensor`);
    return { dtype: t.dtype, shape: t.shape, data: Array.from(t.toArray(), Number) };
  });
  const feeds = {};
  for (const [name, v] of Object.entries(inputs)) {
    const t = exampleOf(v);
    feeds[name] = { dtype: ORT_TYPES[t.dtype], data: t.toArray(), dims: t.shape };
  }
  const mine = compareOutputs(names, expected, runSession(inputs), tol);
  return { names, expected, feeds, mine, tol };
}

/** checkTraced's report from a read check and onnxruntime-web's outputs; throws when either engine disagrees. */
function concludeCheck({ names, expected, mine, tol }, got) {
  const { outputs, problems } = compareOutputs(names, expected, got, tol);
  const report = { ok: !problems.length && !mine.problems.length, outputs, session: mine.outputs };
  if (!report.ok) {
    const err = new Error([
      problems.length ? `trace oracle: the .onnx disagrees with the eager run:\n  ${problems.join('\n  ')}` : '',
      mine.problems.length ? `trace oracle: the Session disagrees with the eager run:\n  ${mine.problems.join('\n  ')}` : '',
    ].filter(Boolean).join('\n'));
    err.report = report;
    throw err;
  }
  return report;
}

/**
 * Runs traced's graph in the library's own Session (om.InferenceSession) on inputs (as
 * checkTraced takes them): every output as { name: { dtype, dims, data } }, as runOnnx gives
 * them. Synchronous, so it reads the inputs before checkTraced's first await.
 */
export function runSessionOf(traced, inputs) {
  const session = traced.session();
  try {
    return runSessionIn(session, inputs);
  } finally {
    session.dispose();
  }
}

/** runSessionOf in an open Session. */
function runSessionIn(session, inputs) {
  const feeds = Object.fromEntries(Object.entries(inputs).map(([k, v]) => [k, exampleOf(v)]));
  return om.tidy(() => {
    const outs = session.run(feeds);
    return Object.fromEntries(Object.entries(outs).map(([name, t]) => [name, { dtype: ORT_TYPES[t.dtype], dims: t.shape, data: Array.from(t.toArray(), Number) }]));
  });
}

// ---- inputs at other shapes ------------------------------------------------------------------

/**
 * A new tensor of the given shape with values like example's: a float32 example gives standard
 * normal values (seeded), an int64 or bool example gives values drawn from its own elements (so
 * token ids and indices stay in range). The caller disposes it.
 */
export function drawLike(example, shape, seed) {
  if (example.dtype === 'float32') return om.randn(shape, { seed });
  const pool = example.toArray();
  if (!pool.length) throw new om.OmError('InvalidArgument', `drawLike: the ${example.dtype} example is empty; there are no values to draw from`);
  const n = shape.reduce((a, b) => a * b, 1);
  const u = om.rand([n], { seed });
  const pick = u.toArray();
  u.dispose();
  const data = new pool.constructor(n);
  for (let j = 0; j < n; j++) data[j] = pool[Math.min(pool.length - 1, Math.floor(pick[j] * pool.length))];
  return om.tensor(example.dtype === 'bool' ? Array.from(data, Boolean) : data, { dtype: example.dtype, shape });
}

/** The size of every symbolic axis in inputs (om.trace form), from the examples: Map name -> size. */
export function symbolSizes(inputs) {
  const symbols = new Map();
  for (const v of Object.values(inputs)) {
    if (!Array.isArray(v) || !v[1]) continue;
    Array.from(v[1]).forEach((a, d) => { if (a) symbols.set(typeof a === 'string' ? a : a.name, v[0].shape[d]); });
  }
  return symbols;
}

/**
 * Three other assignments of the symbolic axes of inputs (om.trace form), inside the sizes the
 * traced model holds for (symbols: traced.symbols, [{ name, multipleOf, min, max }]; a symbol not
 * there is any size from 1): every symbol at its smallest size, at s + m and at 2s + m (m its
 * multiple, s its example size), each capped at its maximum, so that a graph right only at the
 * traced shape fails and both smaller and larger sizes are seen. Values are drawn by drawLike.
 * Returns [] when nothing is symbolic. The caller disposes the tensors.
 */
export function otherShapes(inputs, symbols = [], seed = 1000) {
  const sizes = symbolSizes(inputs);
  if (!sizes.size) return [];
  const info = new Map(symbols.map((s) => [s.name, s]));
  const size = (name, k) => {
    const s = sizes.get(name);
    const { multipleOf: m = 1, min = 1, max = Infinity } = info.get(name) ?? {};
    const want = [Math.ceil(Math.max(min, 1) / m) * m, s + m, 2 * s + m][k];
    return Math.min(want, Math.floor(max / m) * m);
  };
  return [0, 1, 2].map((k) => {
    const feeds = {};
    Object.entries(inputs).forEach(([name, v], i) => {
      const [example, axes] = Array.isArray(v) ? v : [v, null];
      const shape = example.shape.map((n, d) => (axes?.[d] ? size(typeof axes[d] === 'string' ? axes[d] : axes[d].name, k) : n));
      feeds[name] = drawLike(example, shape, seed + 16 * k + i);
    });
    return feeds;
  });
}
