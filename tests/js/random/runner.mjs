// Runs one random model (its source, as generator.mjs renders it) through the tracer and
// onnxruntime-web, and classifies it:
//
//   agree    the .onnx agrees with the eager model (examples/lib/oracle.mjs compareOutputs: same
//            dtype and shape, max|onnx - eager| <= 1e-5 * max(1, max|eager|)) at the traced sizes
//            and at every other assignment of the symbols where eager runs (sizes where eager
//            throws an OmError are skipped and counted) inside the sizes the traced model says
//            it holds for (traced.symbols: min, max, multipleOf, and the call that narrowed them;
//            assignments outside are skipped and counted, and the narrowing is reported, so a
//            tracer cannot pass by narrowing);
//   refused  om.trace threw a TraceError (its kind and message are kept);
//   wrong    at some assignment where eager runs, ORT disagrees in values, dtype or shape, or ORT
//            cannot load or run the file (then it runs again without ORT's graph optimizations,
//            and the record notes when that agrees, "ORT optimizer": the file is right, ORT's
//            optimizer rewrites it wrongly; still wrong, since users run ORT with its defaults); or
//            ORT agrees and the library's own Session (traced.session()) does not, or cannot run
//            the graph (engine: 'session');
//            a wrong record where the Session agrees and ORT agrees once each Sigmoid is written out
//            notes "ORT Sigmoid" (ortSigmoid: ORT's Sigmoid kernel's absolute error, amplified), or
//            once each Gelu's tail is written from erfc "ORT Gelu" (ortGelu: its 1 + erf cancels),
//            or once each Softmax is written out "ORT Softmax" (ortSoftmax: subnormals flushed), or
//            once each tanh-approximate Gelu is written as eager computes it "ORT Gelu tanh" (ortGeluTanh: its
//            1 + tanh cancels), or once each Elu is "ORT Elu" (ortElu: its exp(x) - 1 cancels near 0);
//   crash    anything else: a non-TraceError from om.trace (eager ran at the example, so the
//            trace changed what the model does), a WebAssembly RuntimeError anywhere (also in an
//            eager run); pool.mjs adds hangs and dead workers;
//   invalid  the model itself fails eagerly at its example sizes: a generator bug, not the
//            tracer's (the generator promises a valid model).
//
// Everything on the om side runs synchronously inside one om.tidy (so a case frees what it made,
// and a leak shows in om.memory()); then the file runs in one ORT session at every assignment.
import vm from 'node:vm';
import * as om from 'onemodel';
import { withSession, compareOutputs } from '../../../examples/lib/oracle.mjs';
import { ORT_KERNELS } from './written-out.mjs';

/** The URL a case's source has in stack traces: its file, or file:///random-model/<id>.js. */
const sourceUrl = (meta) => meta.file ?? `file:///random-model/${String(meta.id ?? 'model').replace(/[^\w.:-]/g, '_')}.js`;

/**
 * Evaluates a case's source (the body of a function of om) to { model, inputs, zeroChecks, farChecks }.
 * url names it in stack traces, with the source's own line numbers, so a TraceError's "(at ...)"
 * points at the model's line as printed.
 */
export function loadCase(source, url = sourceUrl({})) {
  const fn = vm.compileFunction(source, ['om'], { filename: url });
  const made = fn(om);
  return { zeroChecks: [], farChecks: [], ...made };
}

/** The symbol an axis entry names (a name, or an om.Dim), or null for a fixed axis. */
const symbolOf = (a) => (a instanceof om.Dim ? a.name : a || null);

/** The symbols of an input spec ({ name: { shape, axes } }) and their example sizes. */
export function symbolsOf(spec) {
  const symbols = new Map();
  for (const { shape, axes } of Object.values(spec)) axes.forEach((a, d) => { if (symbolOf(a)) symbols.set(symbolOf(a), shape[d]); });
  return symbols;
}

/** The ranges the spec declares, in rangesOf's form: an om.Dim's, any size from 1 for a name. */
function declaredOf(spec) {
  const ranges = new Map();
  for (const { axes } of Object.values(spec)) {
    for (const a of axes) {
      if (a instanceof om.Dim) ranges.set(a.name, { name: a.name, min: a.min, max: a.max, multipleOf: a.multipleOf });
      else if (a && !ranges.has(a)) ranges.set(a, { name: a, min: 1, max: Infinity, multipleOf: 1 });
    }
  }
  return [...ranges.values()];
}

/** The multiples the spec's om.Dim axes declare: symbol -> k. */
function multiplesOf(spec) {
  const m = new Map();
  for (const { axes } of Object.values(spec)) for (const a of axes) if (a instanceof om.Dim && a.multipleOf > 1) m.set(a.name, a.multipleOf);
  return m;
}

/**
 * The assignments a case is checked at: the example first; then each symbol alone at 1, 2,
 * s - 1, s + 1, 2s, 2s + 1 and far above, 8s + 1 (others at their examples: past a window or a
 * threshold the runs of the tracer reach only as far runs); all symbols together at s + 1, at
 * 2s + 1 and at 2 (a graph that confuses two symbols fails there); 0 for the symbols in zero;
 * and the assignments in far (the case's farChecks: both sides of a threshold it has, { T: c }
 * and { T: c + 1 }), the others at their examples. A symbol declared a multiple of m (multiples:
 * symbol -> m) steps by m instead of 1: m, 2m, s - m, s + m, 2s, 2s + m, 8s + m.
 */
export function assignments(symbols, zero = [], multiples = new Map(), far = []) {
  const example = Object.fromEntries(symbols);
  const list = [example];
  const seen = new Set([JSON.stringify(example)]);
  const add = (a) => {
    const k = JSON.stringify(a);
    if (!seen.has(k) && Object.values(a).every((n) => n >= 0)) { seen.add(k); list.push(a); }
  };
  const step = (name) => multiples.get(name) ?? 1;
  for (const [name, s] of symbols) {
    const m = step(name);
    for (const n of [m, 2 * m, s - m, s + m, 2 * s, 2 * s + m, 8 * s + m]) if (n >= 1) add({ ...example, [name]: n });
  }
  if (symbols.size > 1) {
    for (const f of [(s, m) => s + m, (s, m) => 2 * s + m, (s, m) => 2 * m]) add(Object.fromEntries([...symbols].map(([k, s]) => [k, f(s, step(k))])));
  }
  for (const name of zero) add({ ...example, [name]: 0 });
  for (const a of far) if (Object.keys(a).every((k) => symbols.has(k))) add({ ...example, ...a });
  return list;
}

/**
 * The declaration a SymbolicShape refusal suggests (the last run of om.Dim(...)s after "declare "
 * or "holds for the sizes "): { declared (its text), dims (a Map from each symbol it names to its
 * om.Dim) }, or null when it suggests none.
 */
export function suggestedDims(message) {
  const runs = [...message.matchAll(/(?:declare |holds for the sizes )((?:om\.Dim\('[^']+', \{ [^}]* \}\)(?:, )?)+)/g)];
  if (!runs.length) return null;
  const declared = runs[runs.length - 1][1].replace(/, $/, '');
  const dims = new Map();
  for (const [, name, body] of declared.matchAll(/om\.Dim\('([^']+)', \{ ([^}]*) \}\)/g)) {
    dims.set(name, om.Dim(name, Object.fromEntries(body.split(', ').map((kv) => kv.split(': ')).map(([k, v]) => [k, Number(v)]))));
  }
  return { declared, dims };
}

/**
 * Whether the declaration a SymbolicShape refusal suggests (the last run of om.Dim(...)s after
 * "declare " or "holds for the sizes ") makes the trace hold: the model traced again, each symbol
 * it names declared so, on inputs at the example sizes (moved up to the next multiple where the
 * refusal says to trace with example sizes that are multiples). { holds: true, declared } |
 * { holds: false, declared, message } (the new error) | null when the refusal suggests none.
 */
export function checkSuggestion(model, spec, message) {
  const { declared, dims } = suggestedDims(message) ?? {};
  if (!declared) return null;
  const sizes = Object.fromEntries(symbolsOf(spec));
  const moveToMultiple = /trace with example sizes that are/.test(message);
  for (const [name, d] of dims) if (moveToMultiple && name in sizes) sizes[name] = Math.ceil(sizes[name] / d.multipleOf) * d.multipleOf;
  const names = Object.keys(spec);
  const axes = (n) => spec[n].axes.map((a) => (symbolOf(a) && dims.has(symbolOf(a)) ? dims.get(symbolOf(a)) : a));
  const xs = makeInputs(spec, sizes, 1);
  try {
    om.trace(model, Object.fromEntries(names.map((n, i) => [n, [xs[i], axes(n)]]))).dispose();
    return { holds: true, declared };
  } catch (e) {
    return { holds: false, declared, message: errorText(e) };
  }
}

/** Input tensors for spec at an assignment: standard normal floats, int64 in [0, high). */
function makeInputs(spec, sizes, seed) {
  return Object.entries(spec).map(([name, { shape, axes, dtype = 'float32', high = 2 }], i) => {
    const dims = shape.map((n, d) => (symbolOf(axes[d]) ? sizes[symbolOf(axes[d])] : n));
    if (dtype === 'float32') return om.randn(dims, { seed: seed + i });
    const u = om.rand(dims, { seed: seed + i });
    const ints = BigInt64Array.from(u.toArray(), (x) => BigInt(Math.min(high - 1, Math.floor(x * high))));
    u.dispose();
    return om.tensor(ints, { dtype, shape: dims });
  });
}

const call = (model, xs) => (typeof model === 'function' ? model(...xs) : model.forward(...xs));
/** A model's result as a list of tensors, in the order om.trace names them. */
function outputList(y) {
  const list = y instanceof om.Tensor ? [y] : Array.isArray(y) ? y : Object.values(y ?? {});
  if (!list.length || !list.every((t) => t instanceof om.Tensor)) throw new Error(`the model returned ${y}, not tensors`);
  return list;
}
const plain = (t) => ({ dtype: t.dtype, shape: t.shape, data: Array.from(t.toArray(), Number) });

/**
 * The most output elements (all outputs together) an assignment is compared at. Past it the
 * assignment is skipped, its reason in the record: case 22:463 returns x expanded to [B, B, B,
 * 12] and is checked at B = 161, 50 million elements, whose copies into plain arrays for the
 * comparisons took over a minute under load (the worker was stopped as hung, with no result).
 */
export const CHECK_ELEMENTS = 1 << 23;
const feedOf = (t) => ({ dtype: t.dtype, data: t.toArray(), dims: t.shape });
const errorText = (e) => (e instanceof om.OmError ? `${e.name} ${e.kind}: ${e.message}` : `${e?.name ?? 'Error'}: ${e?.message ?? e}`);
const isWasmTrap = (e) => e instanceof WebAssembly.RuntimeError || /Aborted\(|RuntimeError|unreachable/.test(String(e?.message));
/** The sizes of an assignment as text: "B=3 T=7". */
export const sizesText = (a) => Object.entries(a).map(([k, v]) => `${k}=${v}`).join(' ') || '(no symbols)';

/**
 * The sizes the traced model holds for, per symbol: [{ name, min, max, multipleOf, narrowedBy }]
 * (traced.symbols; a tracer that reports none holds for every size, 0 included).
 */
function rangesOf(traced) {
  const symbols = 'symbols' in traced ? traced.symbols : [];
  return symbols.map(({ name, min, max, multipleOf, narrowedBy }) => ({ name, min, max, multipleOf, narrowedBy }));
}
/** Whether range s holds for fewer sizes than declared range d (none: any size from 1; a multiple
 * of m from 1 to 30 is one from m to 30 - 30 % m). */
export const narrowerThan = (s, d = { min: 1, max: Infinity, multipleOf: 1 }) => s.multipleOf > d.multipleOf
  || s.min > Math.ceil(d.min / d.multipleOf) * d.multipleOf || s.max < d.max - (d.max % d.multipleOf || 0);
/** Ranges narrower than any size from 1 (what a plain symbol name declares). */
const narrower = (ranges) => ranges.filter((s) => s.min > 1 || s.max < Infinity || s.multipleOf > 1);

/** Whether every size of assignment a is inside the ranges. */
const inRange = (a, ranges) => ranges.every((s) => !(s.name in a) || (a[s.name] >= s.min && a[s.name] <= s.max && a[s.name] % s.multipleOf === 0));
const rangeText = (s) => `${s.name} in [${s.min}, ${s.max}]${s.multipleOf > 1 ? ` x${s.multipleOf}` : ''}${s.narrowedBy ? ` (${s.narrowedBy})` : ''}`;

/**
 * The synchronous part of a case: evaluate, run eagerly at the example, trace, write the .onnx,
 * and run eagerly at every assignment. Returns a finished record (refused, crash, invalid) or
 * { bytes, names, checks: [{ sizes, feeds, expected }], skipped } for the ORT part.
 */
function prepare(source, record, options) {
  let made;
  try {
    made = loadCase(source, sourceUrl(record));
  } catch (e) {
    return { ...record, class: 'invalid', message: `the source does not evaluate: ${errorText(e)}` };
  }
  const { model, inputs: spec, zeroChecks, farChecks } = made;
  const symbols = symbolsOf(spec);
  const sizes = assignments(symbols, zeroChecks, multiplesOf(spec), farChecks);
  const declared = declaredOf(spec);
  const examples = makeInputs(spec, sizes[0], 1);
  let expected0;
  try {
    expected0 = outputList(call(model, examples)).map(plain);
  } catch (e) {
    return { ...record, class: isWasmTrap(e) ? 'crash' : 'invalid', at: sizesText(sizes[0]), message: `eager fails at the example sizes: ${errorText(e)}` };
  }
  const names = Object.keys(spec);
  let traced;
  try {
    traced = om.trace(model, Object.fromEntries(names.map((n, i) => [n, [examples[i], spec[n].axes]])));
  } catch (e) {
    if (!(e instanceof om.TraceError)) return { ...record, class: 'crash', at: 'om.trace', message: errorText(e) };
    const suggestion = options.checkSuggestions && e.kind === 'SymbolicShape' ? { suggestion: checkSuggestion(model, spec, e.message) } : {};
    return { ...record, class: 'refused', kind: e.kind, message: e.message, ...suggestion };
  }
  let bytes, outNames, ranges, session;
  try {
    bytes = traced.toOnnx();
    outNames = traced.outputs.map((o) => o.name);
    record.nodes = traced.graph().nodes.length;
    ranges = rangesOf(traced);
    session = traced.session();
  } catch (e) {
    if (e instanceof om.OmError && bytes && ranges) { // the Session refused the graph at create
      record.sessionFailures = [`create: ${errorText(e)}`];
    } else {
      return { ...record, class: 'crash', at: 'toOnnx', message: errorText(e) };
    }
  } finally {
    traced.dispose();
  }
  try {
    return checkAll();
  } finally {
    session?.dispose();
  }

  /** The eager runs at every assignment, and the Session's at each that eager runs. */
  function checkAll() {
  const checks = [{ sizes: sizes[0], feeds: Object.fromEntries(names.map((n, i) => [n, feedOf(examples[i])])), expected: expected0 }];
  const skipped = [];
  const trap = session && sessionCheck(sizes[0], examples, expected0);
  if (trap) return trap;
  if (narrower(ranges).length) record.narrowed = narrower(ranges).map(rangeText);
  // a range narrower than its declaration with no reason: the tracer must report every narrowing
  const silent = ranges.filter((s) => !s.narrowedBy && narrowerThan(s, declared.find((d) => d.name === s.name)));
  if (silent.length) record.unexplained = silent.map(rangeText);
  record.outOfRange = sizes.filter((a) => !inRange(a, ranges)).length; // with sizes 0 when the minimum is 1
  for (let k = 1; k < sizes.length; k++) {
    const xs = makeInputs(spec, sizes[k], 1 + 16 * k);
    if (!inRange(sizes[k], ranges)) { // not promised: counted in outOfRange; unless the tracer narrowed it where eager answers
      const by = ranges.filter((s) => !inRange(sizes[k], [s])); // with a reason or without: a size the declaration holds
      if (by.length && inRange(sizes[k], declared) && Object.values(sizes[k]).every((n) => n > 0) && answers(xs)) {
        (record.narrowedAnswers ??= []).push(`${sizesText(sizes[k])} (${by.map(rangeText).join(', ')})`);
      }
      continue;
    }
    try {
      const outs = outputList(call(model, xs));
      const elements = outs.reduce((sum, t) => sum + t.shape.reduce((a, b) => a * b, 1), 0);
      if (elements > (options.checkElements ?? CHECK_ELEMENTS)) {
        skipped.push(`${sizesText(sizes[k])}: outputs of ${elements} elements, more than a check compares (${options.checkElements ?? CHECK_ELEMENTS})`);
        continue;
      }
      const expected = outs.map(plain);
      checks.push({ sizes: sizes[k], feeds: Object.fromEntries(names.map((n, i) => [n, feedOf(xs[i])])), expected });
    } catch (e) {
      if (isWasmTrap(e)) return { ...record, class: 'crash', at: sizesText(sizes[k]), message: `eager: ${errorText(e)}` };
      skipped.push(`${sizesText(sizes[k])}: ${errorText(e)}`);
      continue;
    }
    const bad = session && sessionCheck(sizes[k], xs, checks[checks.length - 1].expected);
    if (bad) return bad;
  }
  return { bytes, names: outNames, checks, skipped };
  }

  /** Whether the eager model gives an answer on inputs xs. */
  function answers(xs) {
    try {
      outputList(call(model, xs));
      return true;
    } catch {
      return false;
    }
  }

  /** The Session on inputs xs against expected: a failure goes to record.sessionFailures; a
   *  WebAssembly trap is a crash record (returned). */
  function sessionCheck(at, xs, expected) {
    let problems;
    try {
      const outs = session.run(Object.fromEntries(names.map((n, i) => [n, xs[i]])));
      const got = Object.fromEntries(Object.entries(outs).map(([k, t]) => [k, { dtype: t.dtype, dims: t.shape, data: Array.from(t.toArray(), Number) }]));
      problems = compareOutputs(outNames, expected, got).problems;
    } catch (e) {
      if (isWasmTrap(e)) return { ...record, class: 'crash', at: sizesText(at), message: `the Session: ${errorText(e)}` };
      problems = [`the Session fails: ${errorText(e)}`];
    }
    if (problems.length) (record.sessionFailures ??= []).push(`${sizesText(at)}: ${problems.join('; ')}`);
    return null;
  }
}

/**
 * Runs the .onnx in one onnxruntime-web session at every check (graphOptimizationLevel: ORT's,
 * default all) and compares. Resolves to { failures: [{ at, message, ratio?, ort? }], checked,
 * margin, aborted?, crash? } (ort: ORT could not load or run it; aborted: ORT's wasm instance
 * aborted, so nothing more runs in this worker; crash: an error outside the runs).
 */
async function runChecks(bytes, names, checks, graphOptimizationLevel) {
  const out = { failures: [], checked: 0, margin: 0 };
  let opened = false;
  try {
    await withSession(bytes, async (run) => {
      opened = true;
      for (const c of checks) {
        let got;
        try {
          got = await run(c.feeds);
        } catch (e) {
          out.failures.push({ at: sizesText(c.sizes), message: `onnxruntime cannot run it: ${errorText(e)}`, ort: true });
          if (/Aborted\(/.test(String(e?.message))) { out.aborted = true; return; } // ORT's instance is gone
          continue;
        }
        out.checked++;
        const { outputs, problems } = compareOutputs(names, c.expected, got);
        // ratio: the worst error over its bound (Infinity for a shape or dtype): a value a few
        // times the bound may be float32 rounding, one far above it is not
        const ratio = Math.max(...outputs.map((o) => (o.bound ? o.maxError / o.bound : Infinity)));
        if (problems.length) out.failures.push({ at: sizesText(c.sizes), message: problems.join('; '), ratio });
        else for (const o of outputs) out.margin = Math.max(out.margin, o.bound ? o.maxError / o.bound : 0);
      }
    }, { logSeverityLevel: 4, graphOptimizationLevel }); // its errors reach the record; ORT's log would only repeat them
  } catch (e) {
    // after an abort, releasing the session fails too: the abort is the failure
    if (opened && !out.aborted) out.crash = `during the onnxruntime runs: ${errorText(e)}`;
    else if (!opened) {
      out.failures.push({ at: 'load', message: `onnxruntime cannot load it: ${errorText(e)}`, ort: true });
      if (/Aborted\(/.test(String(e?.message))) out.aborted = true;
    }
  }
  return out;
}

/**
 * Runs one case (source text as generator.mjs renders it) and resolves to its record:
 * { id, class, kind?, message?, at?, failures?, ratio?, checked, skipped, narrowed?, outOfRange?,
 * narrowedAnswers?, unexplained?, nodes, margin, ms, leaked } (see the classes above; at: the assignment that
 * failed first, failures: all of them; ratio: the first failure's worst error over its bound;
 * narrowed: the symbols the traced model holds for fewer sizes, as text, and outOfRange: the
 * assignments left out for it; narrowedAnswers: those of them outside a range the tracer
 * narrowed (not one declared; with a reason or without), inside the declared ones, where the eager
 * model gives an answer, which it must not do; unexplained: the ranges narrower than declared
 * whose narrowedBy is null (every narrowing has its reason); ortOptimizer: ORT failed (to load, run or agree) only with its graph optimizations on; margin: the largest
 * maxError / bound of an agreeing case; suggestion: with options.checkSuggestions, whether the
 * declaration a SymbolicShape refusal suggests makes the trace hold, checkSuggestion's). meta
 * (id, family, tags) is copied in; meta.file, when the source is a file's, names it in
 * TraceErrors' locations.
 */
export async function runCase(source, meta = {}, options = {}) {
  const t0 = performance.now();
  const record = { ...meta, class: null, checked: 0, skipped: 0, nodes: null, margin: 0 };
  const base = om.memory().tensors;
  let prepared;
  try {
    prepared = om.tidy(() => prepare(source, record, options));
  } catch (e) {
    prepared = { ...record, class: 'crash', message: `outside the model: ${errorText(e)}` };
  }
  const leaked = om.memory().tensors - base;
  const finish = (r) => ({ ...r, leaked, ms: Math.round(performance.now() - t0) });
  if (prepared.class) return finish(prepared);
  const { bytes, names, checks, skipped } = prepared;
  record.skipped = skipped.length;
  record.skipReasons = skipped.slice(0, 3);
  const out = await runChecks(bytes, names, checks);
  if (out.crash) return finish({ ...record, class: 'crash', message: out.crash });
  Object.assign(record, { checked: out.checked, margin: out.margin, ...(out.aborted ? { ortAborted: true } : {}) });
  const { failures } = out;
  // A file ORT cannot load or run, or runs to other values, may still be right: ORT's graph
  // optimizations have bugs of their own. Run it again without them; the model stays wrong (ORT
  // with its defaults is what users run: the graph must avoid what it mis-optimises), and the
  // note and the report's "ORT optimizer" line say where to look.
  if (failures.length && !out.aborted) {
    const plain = await runChecks(bytes, names, checks, 'disabled');
    if (!plain.crash && !plain.failures.length) {
      record.ortOptimizer = true;
      failures[0].message += ` [ORT optimizer: with onnxruntime's graph optimizations disabled it ${failures.some((f) => f.ort) ? 'loads, runs and ' : ''}`
        + 'agrees at every size; the graph must still avoid what the optimizer gets wrong]';
    }
  }
  // onnxruntime-web's Sigmoid is accurate to about 6e-8 absolute (0 below about -16.6), its
  // Gelu's tail cancels (0 below about -5.9, where eager's is from erfc), and its Softmax gives 0
  // for subnormal probabilities, its tanh-approximate Gelu's 1 + tanh and its Elu's exp(x) - 1
  // cancel (an ulp of 1 off), which a model that takes a root of it or compares it with 0
  // amplifies (written-out.mjs). Where the library's Session agreed at every size and ORT
  // disagrees in values only, the same file with every Sigmoid (then every Gelu, and so on
  // through ORT_KERNELS) written as eager computes it runs again: where that agrees, the graph is right and
  // the record says the difference is that ORT kernel's. It stays wrong (users run ORT's kernels);
  // the note and the report's line say where it comes from.
  for (const { key, label, writeOut, how } of ORT_KERNELS) {
    if (!failures.length || out.aborted || record.ortOptimizer || record.sessionFailures || !failures.every((f) => !f.ort && Number.isFinite(f.ratio))) break;
    const spelled = writeOut(bytes);
    const again = spelled && await runChecks(spelled, names, checks);
    if (again && !again.crash && !again.failures.length) {
      record[key] = true;
      failures[0].message += ` [ORT ${label}: the Session agrees at every size, and onnxruntime-web agrees too with ${how}]`;
      break;
    }
  }
  if (!failures.length && record.sessionFailures) {
    return finish({ ...record, class: 'wrong', engine: 'session', at: record.sessionFailures[0].split(':')[0], message: `the Session: ${record.sessionFailures[0]}`, ratio: Infinity });
  }
  if (!failures.length) return finish({ ...record, class: 'agree' });
  return finish({ ...record, class: 'wrong', at: failures[0].at, message: failures[0].message, ratio: failures[0].ratio ?? Infinity, failures: failures.map((f) => f.at) });
}
