// The loaded WASM module and the plumbing every call into it goes through: loading (ready, on
// js/load.js), the op/dtype/error-kind tables read from C, the argument scratch buffer, turning
// C's last error into an OmError, scopes and the release of collected tensors. Nothing here is public API except
// what js/index.js re-exports.
import { OmError, TraceError, inJsTerms } from './errors.js';
import { isNode, loadModule, nodeBuiltin, readOptions } from './load.js';

/** The JS package version; ready() checks that the loaded wasm reports the same. */
export const VERSION = '0.1.0';

/** The Emscripten module once ready() resolved, else null. A live binding for importers. */
export let M = null;

/** Op name -> op-table index, from omw_op_name (never hard-coded). */
const opIds = new Map();
/** dtype name -> code and code -> name, from omw_dtype_name. */
export const dtypeCodes = new Map();
export const dtypeNames = [];
/** Error kind code -> [name, isTrace], from omw_error_kind_name / omw_error_kind_is_trace. */
const kinds = [];

let loading = null;

async function load(options) {
  const mod = await loadModule(options);
  // om_traced_write_onnx's chunks arrive here (wasm/api.c, omw_js_sink): ctx names the sink.
  mod.omSink = dispatchSink;
  // om_trace_run's model runs arrive here (wasm/api.c, omw_js_trace_fn): ctx names the model.
  mod.omTraceRun = dispatchTraceRun;
  if (isNode) nodeFs = await nodeBuiltin('node:fs');
  const str = (p) => (p >>> 0 ? mod.UTF8ToString(p >>> 0) : null);

  const cVersion = str(mod._omw_version());
  if (cVersion !== VERSION) {
    throw new OmError('Load', `onemodel: the loaded onemodel.wasm is version ${cVersion} but the JS package is ${VERSION}: `
      + 'serve the .wasm of the same package (in a checkout of onemodel, rebuild with `npm run build`)');
  }
  // the kernels' default thread count is the cap ready() chose (js/load.js): the C default counts
  // the cores another way in Node.js (os.cpus(): every core online, where the process may be
  // allowed fewer)
  mod._omw_set_num_threads(mod.omThreadCap);
  opIds.clear();
  for (let i = 0, n = mod._omw_op_count(); i < n; i++) opIds.set(str(mod._omw_op_name(i)), i);
  dtypeCodes.clear();
  dtypeNames.length = 0;
  for (let i = 0; i < 64; i++) {
    const name = str(mod._omw_dtype_name(i));
    if (name === null) break;
    dtypeCodes.set(name, i);
    dtypeNames[i] = name;
  }
  kinds.length = 0;
  for (let i = 0, n = mod._omw_error_kind_count(); i < n; i++) {
    kinds[i] = [str(mod._omw_error_kind_name(i)), !!mod._omw_error_kind_is_trace(i)];
  }
  maxDims = mod._omw_max_dims();
  scratchCap = 4096;
  scratchPtr = mod._malloc(scratchCap) >>> 0;
  if (!scratchPtr) throw new Error('onemodel: could not allocate the argument buffer');
  freshViews(mod);
  M = mod;
}

/**
 * In the threaded build a pool worker that grows the memory leaves this thread's M.HEAP* views on
 * the old, shorter buffer (Emscripten refreshes them only inside its own calls), and a read past
 * their end throws RangeError. So each view is read through a getter that makes it again when the
 * memory's buffer is not the one it views; Emscripten's own assignments go through the setter.
 */
function freshViews(mod) {
  const memory = mod.wasmMemory;
  if (!memory) return; // single-threaded: only this thread grows the memory, and Emscripten refreshes then
  for (const name of ['HEAP8', 'HEAPU8', 'HEAP16', 'HEAPU16', 'HEAP32', 'HEAPU32', 'HEAPF32', 'HEAPF64', 'HEAP64', 'HEAPU64']) {
    let view = mod[name];
    if (!view) continue;
    const View = view.constructor;
    Object.defineProperty(mod, name, {
      configurable: true,
      get() {
        if (view.buffer !== memory.buffer) view = new View(memory.buffer);
        return view;
      },
      set(v) { view = v; },
    });
  }
}

/**
 * Loads the WASM module once (options: js/load.js, docs/api.md); later and concurrent calls share
 * the same promise (their options are checked, not used).
 */
export function ready(options) {
  let checked;
  try {
    checked = readOptions(options);
  } catch (e) {
    return Promise.reject(e);
  }
  if (!loading) {
    loading = load(checked).catch((e) => {
      loading = null; // a failed load may be retried
      throw e;
    });
  }
  return loading.then(() => undefined);
}

/** Throws unless ready() has resolved; `who` names the function called. */
export function requireReady(who) {
  if (!M) {
    throw new OmError('InvalidArgument',
      `${who}: onemodel is not loaded yet; call \`await om.ready()\` once before using it`);
  }
}

/** Whether a C message's word names an op (or one of the tracer's tensor-making calls: full, from_data). */
const isOpName = (name) => opIds.has(name) || name === 'full' || name === 'from_data';

/** A message from C (an error's, a symbol's narrowedBy) in the JS API's terms (errors.js inJsTerms). */
export const jsMessage = (message) => inJsTerms(message, isOpName);

/** The op-table index of an op, by name. */
export function opId(name) {
  const id = opIds.get(name);
  if (id === undefined) throw new OmError('InvalidArgument', `${name}: this op is not in the loaded onemodel build`);
  return id;
}

// ---- errors -------------------------------------------------------------------------------

/** Reads and clears C's last error and returns it as an OmError/TraceError (to be thrown). */
export function lastError(who) {
  const code = M._omw_error_kind();
  const p = M._omw_error_message() >>> 0;
  const message = p ? M.UTF8ToString(p) : '';
  M._omw_clear_error();
  const [kind, trace] = kinds[code] ?? [`Unknown${code}`, false];
  if (code === 0) {
    return new OmError('InvalidArgument', `${who}: the C call failed without setting an error (a bug in onemodel)`);
  }
  const msg = message ? jsMessage(message) : `${who}: failed (${kind})`;
  return trace ? new TraceError(kind, msg) : new OmError(kind, msg);
}

/** A handle (pointer) returned by C, checked: throws C's error when it is 0. */
export function checkHandle(h, who) {
  h = h >>> 0;
  if (!h) throw lastError(who);
  return h;
}

/** A status returned by C (0 = failure), checked. */
export function checkStatus(rc, who) {
  if (!rc) throw lastError(who);
}

/**
 * malloc for JS's own buffers (tensor data in, toArray out): sizes are checked before they
 * reach the i32 parameter, where anything >= 4 GiB would silently wrap.
 */
export function heapAlloc(bytes, who) {
  if (!(bytes <= 0xffff0000)) {
    throw new OmError('OutOfMemory', `${who}: ${bytes} bytes do not fit in WebAssembly memory (4 GiB at most)`);
  }
  const p = M._malloc(Math.max(bytes, 8)) >>> 0;
  if (!p) throw new OmError('OutOfMemory', `${who}: out of memory allocating ${bytes} bytes`);
  return p;
}

// ---- strings and byte streams from C ------------------------------------------------------

/**
 * Copies strings (or null, which becomes a 0 pointer) into one malloc'd block as NUL-terminated
 * UTF-8, calls fn(pointers) and frees the block afterwards, also when fn throws.
 */
export function withStrings(strings, fn) {
  let total = 0;
  const sizes = strings.map((s) => (s === null ? 0 : M.lengthBytesUTF8(s) + 1));
  for (const n of sizes) total += n;
  const base = total ? heapAlloc(total, 'strings') : 0;
  try {
    let at = base;
    const ptrs = strings.map((s, i) => {
      if (s === null) return 0;
      const p = at;
      M.stringToUTF8(s, p, sizes[i]);
      at += sizes[i];
      return p;
    });
    return fn(ptrs);
  } finally {
    if (base) M._free(base);
  }
}

/** A C string (borrowed pointer) copied into JS, or null for 0. */
export function cString(p) {
  p = p >>> 0;
  return p ? M.UTF8ToString(p) : null;
}

/** node:fs in Node.js (loaded by ready()), null in browsers. */
export let nodeFs = null;

const sinks = new Map();
let nextSink = 1;

function dispatchSink(ctx, ptr, len) {
  const s = sinks.get(ctx);
  if (!s || s.error) return 0;
  try {
    return s.fn(ptr >>> 0, len >>> 0) === false ? 0 : 1;
  } catch (e) {
    s.error = e; // rethrown by stream() once C has unwound
    return 0;
  }
}

/**
 * Runs call(ctx) with ctx registered as a byte sink: every chunk C writes to it reaches
 * onChunk(ptr, len) (a region of wasm memory valid during that call only; read it through a
 * fresh M.HEAPU8). Returns call's result; an exception thrown by onChunk stops the stream and is
 * rethrown here (C's resulting error is cleared).
 */
export function stream(onChunk, call) {
  const ctx = nextSink;
  nextSink = nextSink >= 0x7fffffff ? 1 : nextSink + 1; // ctx crosses as an i32
  const s = { fn: onChunk, error: null };
  sinks.set(ctx, s);
  try {
    const rc = call(ctx);
    if (s.error) {
      M._omw_clear_error();
      throw s.error;
    }
    return rc;
  } finally {
    sinks.delete(ctx);
  }
}

// ---- models C runs (om_trace_run) ----------------------------------------------------------

const runs = new Map();
let nextRun = 1;

/** The kind code of an error thrown in JS (OmError's kind; anything else InvalidArgument). */
function kindCode(e) {
  const k = kinds.findIndex(([name]) => name === e?.kind);
  return k > 0 ? k : kinds.findIndex(([name]) => name === 'InvalidArgument');
}

/** The message C keeps for an exception a run threw (an OmError's own; "Name: message" else). */
export const runMessage = (e) => (e instanceof Error ? (e instanceof OmError ? e.message : `${e.name}: ${e.message}`) : String(e));

function dispatchTraceRun(ctx, inPtr, n, outPtr, max) {
  const r = runs.get(ctx);
  if (!r) return -1;
  r.error = null;
  try {
    return r.fn(readU32(inPtr >>> 0, n), outPtr >>> 0, max);
  } catch (e) {
    r.error = e; // the record run's is rethrown by withRuns() once C has unwound
    if (r.thrown.push(e) > 8) r.thrown.shift(); // the latest few, for a refusal that quotes one (withRuns)
    withStrings([runMessage(e)], ([p]) => M._omw_set_error(kindCode(e), p));
    return -1;
  }
}

/**
 * Runs call(ctx) with ctx registered as a model C may run (om_trace_run): each run calls
 * fn(inputHandles, outPtr, max), which returns how many output handles it wrote at outPtr. A
 * JS exception in a run is C's error for that run (its message); when the last run threw and
 * call failed, that exception is rethrown here unchanged. The latest exceptions the runs threw
 * go to thrown (an array), so that a refusal C makes of one (it quotes runMessage(e)) can be
 * placed where it was thrown. Returns call's result.
 */
export function withRuns(fn, call, thrown = []) {
  const ctx = nextRun;
  nextRun = nextRun >= 0x7fffffff ? 1 : nextRun + 1;
  const r = { fn, error: null, thrown };
  runs.set(ctx, r);
  try {
    const rc = call(ctx);
    // the run's own exception, unless C made another error of it (a piece of a trace cut at a
    // size threshold where the model fails or is refused: src/trace/branch.c names the threshold,
    // the piece's error and the declaration that holds)
    const p = M._omw_error_message() >>> 0, kept = p ? M.UTF8ToString(p) : '';
    const rewritten = r.error && kinds[M._omw_error_kind()]?.[0] === 'SymbolicShape' &&
      !(kept && runMessage(r.error).startsWith(kept)); // C keeps a long one cut short
    if (rc < 0 && r.error && !rewritten) {
      M._omw_clear_error();
      throw r.error;
    }
    return rc;
  } finally {
    runs.delete(ctx);
  }
}

// ---- the argument scratch buffer ------------------------------------------------------------

let scratchPtr = 0;
let scratchCap = 0;
let maxDims = 0; // OM_MAX_DIMS, from omw_max_dims

/** The argument buffer, grown to at least `bytes` (its address; valid until the next call that lays out arguments). */
export function scratch(bytes) {
  if (bytes > scratchCap) {
    let cap = scratchCap * 2;
    while (cap < bytes) cap *= 2;
    const p = M._malloc(cap) >>> 0;
    if (!p) throw new OmError('OutOfMemory', `onemodel: could not grow the argument buffer to ${cap} bytes`);
    M._free(scratchPtr);
    scratchPtr = p;
    scratchCap = cap;
  }
  return scratchPtr;
}

/** Bytes of n values of a marshal() section type ('ptr' 4, 'i64' and 'f64' 8), rounded up to 8. */
const sectionBytes = (type, n) => ((type === 'ptr' ? 4 : 8) * n + 7) & ~7;

// Writers of arrays at a byte address, through the module's current views (Emscripten replaces
// them when memory grows; a view made per call costs more than a small op).
/** BigInt values as int64 at p. */
export function writeI64(p, v) {
  const h = M.HEAP64, at = p >>> 3;
  for (let k = 0; k < v.length; k++) h[at + k] = v[k];
}
/** Numbers as f64 at p. */
function writeF64(p, v) {
  const h = M.HEAPF64, at = p >>> 3;
  for (let k = 0; k < v.length; k++) h[at + k] = v[k];
}
/** u32 numbers (handles, pointers) at p. */
function writeU32(p, v) {
  const h = M.HEAPU32, at = p >>> 2;
  for (let k = 0; k < v.length; k++) h[at + k] = v[k];
}
const writers = { i64: writeI64, f64: writeF64, ptr: writeU32 };

/**
 * Lays out argument arrays in the scratch buffer and returns their addresses. Each section is
 * [type, values] (written) or [type, count] (reserved, for outputs); type is 'i64' (BigInt
 * values), 'f64' (numbers) or 'ptr' (u32 numbers). The addresses stay valid until the next
 * marshal() or callOp() call.
 */
export function marshal(...sections) {
  let total = 0;
  for (const [type, v] of sections) total += sectionBytes(type, typeof v === 'number' ? v : v.length);
  let p = scratch(Math.max(total, 8));
  const ptrs = [];
  for (const [type, v] of sections) {
    ptrs.push(p);
    if (typeof v === 'number') {
      p += sectionBytes(type, v);
    } else {
      writers[type](p, v);
      p += sectionBytes(type, v.length);
    }
  }
  return ptrs;
}

/** n u32 values at p (read after a call), copied out. */
export function readU32(p, n) {
  const h = M.HEAPU32, at = p >>> 2, out = new Array(n);
  for (let k = 0; k < n; k++) out[k] = h[at + k];
  return out;
}

/** n f64 values at p, copied out. */
export function readF64(p, n) {
  const h = M.HEAPF64, at = p >>> 3, out = new Array(n);
  for (let k = 0; k < n; k++) out[k] = h[at + k];
  return out;
}

/** The outputs of the last callOp(): handles (new references), dtype codes and shapes. Read them
 *  at once: the next callOp() overwrites them (reused, so an op allocates no arrays for them). */
export const applied = { handles: [], dtypes: [], shapes: [] };

/**
 * omw_apply: op (an op-table index) on input handles with integer attributes (BigInts) and
 * float attributes (numbers), room for nOut outputs. Returns the number of outputs, which are
 * in `applied`, or throws C's error naming who. One call into wasm: the outputs' dtypes and
 * shapes come back with their handles.
 */
export function callOp(who, op, inHandles, iattrs, fattrs, nOut) {
  const nIn = inHandles.length, nI = iattrs.length, nF = fattrs.length;
  // [int attrs][float attrs][output handles][output descriptions][input handles]: 8-aligned,
  // the inputs last (their count is the only one not bounded by the op table)
  const pi = scratch(8 * (nI + nF + nOut * (3 + maxDims)) + 4 * nIn);
  const pf = pi + 8 * nI;
  const pout = pf + 8 * nF;
  const pdesc = pout + 8 * nOut;
  const pin = pdesc + 8 * nOut * (2 + maxDims);
  writeI64(pi, iattrs);
  writeF64(pf, fattrs);
  writeU32(pin, inHandles);
  const n = M._omw_apply(op, pin, nIn, pi, nI, pf, nF, pout, nOut, pdesc);
  if (n < 0) throw lastError(who);
  const u32 = M.HEAPU32, f64 = M.HEAPF64;
  for (let j = 0, d = pdesc >>> 3; j < n; j++) {
    const nd = f64[d + 1], shape = new Array(nd);
    for (let k = 0; k < nd; k++) shape[k] = f64[d + 2 + k];
    applied.handles[j] = u32[(pout >>> 2) + j];
    applied.dtypes[j] = f64[d];
    applied.shapes[j] = shape;
    d += 2 + nd;
  }
  return n;
}

// ---- the C API ----------------------------------------------------------------------------

/**
 * The wasm exports (wasm/api.c's omw_* functions, same names without the prefix) as thin
 * wrappers: the rest of js/ calls C through these, never through M directly, so every crossing
 * into C is named here. Arguments and results are the C ones (handles and pointers as numbers).
 */
export const omw = Object.freeze({
  arange: (start, end, step, dtype) => M._omw_arange(start, end, step, dtype),
  linspace: (start, end, steps, dtype) => M._omw_linspace(start, end, steps, dtype),
  argmax: (a, dim, keepdim) => M._omw_argmax(a, dim, keepdim),
  argmin: (a, dim, keepdim) => M._omw_argmin(a, dim, keepdim),
  backward: (root, grad) => M._omw_backward(root, grad),
  cast: (a, dtype) => M._omw_cast(a, dtype),
  cat: (ts, n, dim) => M._omw_cat(ts, n, dim),
  chunk: (a, chunks, dim, out, maxOut) => M._omw_chunk(a, chunks, dim, out, maxOut),
  clear_error: () => M._omw_clear_error(),
  contiguous: (a) => M._omw_contiguous(a),
  copy_from: (dst, src) => M._omw_copy_from(dst, src),
  data: (t) => M._omw_data(t),
  detach: (t) => M._omw_detach(t),
  dropout: (a, p, training) => M._omw_dropout(a, p, training),
  fill: (t, value) => M._omw_fill(t, value),
  free_graph: (t) => M._omw_free_graph(t),
  from_data: (data, shape, ndim, dtype) => M._omw_from_data(data, shape, ndim, dtype),
  full: (shape, ndim, dtype, value) => M._omw_full(shape, ndim, dtype, value),
  grad: (t) => M._omw_grad(t),
  gru: (x, h0, params, nParams, numLayers, bias, batchFirst, bidirectional, out) =>
    M._omw_gru(x, h0, params, nParams, numLayers, bias, batchFirst, bidirectional, out),
  index_put: (a, indices, n, values, accumulate) => M._omw_index_put(a, indices, n, values, accumulate),
  info: (t, out) => M._omw_info(t, out),
  item: (t, out) => M._omw_item(t, out),
  lstm: (x, h0, c0, params, nParams, numLayers, bias, batchFirst, bidirectional, out) =>
    M._omw_lstm(x, h0, c0, params, nParams, numLayers, bias, batchFirst, bidirectional, out),
  manual_seed: (seedLo, seedHi) => M._omw_manual_seed(seedLo, seedHi),
  matmul: (a, b) => M._omw_matmul(a, b),
  meshgrid: (ts, n, xy, out) => M._omw_meshgrid(ts, n, xy, out),
  one_hot: (classes, at) => M._omw_one_hot(classes, at),
  pixel_shuffle: (a, r, up) => M._omw_pixel_shuffle(a, r, up),
  random: (shape, ndim, seedLo, seedHi, hasSeed, normal) =>
    M._omw_random(shape, ndim, seedLo, seedHi, hasSeed, normal),
  read: (t, dst) => M._omw_read(t, dst),
  release: (t) => M._omw_release(t),
  repeat: (a, sizes, n, tile) => M._omw_repeat(a, sizes, n, tile),
  repeat_interleave: (a, counts, at) => M._omw_repeat_interleave(a, counts, at),
  reshape: (a, shape, ndim) => M._omw_reshape(a, shape, ndim),
  retain: (t) => M._omw_retain(t),
  roll: (a, shifts, nShifts, dims, nDims) => M._omw_roll(a, shifts, nShifts, dims, nDims),
  scaled_dot_product_attention: (q, k, v, mask, isCausal, scale, hasScale) =>
    M._omw_scaled_dot_product_attention(q, k, v, mask, isCausal, scale, hasScale),
  searchsorted: (sorted, values, right, bucketize) => M._omw_searchsorted(sorted, values, right, bucketize),
  select_scatter: (a, src, at) => M._omw_select_scatter(a, src, at),
  session_count: (s, outputs) => M._omw_session_count(s, outputs),
  session_create: (m, mode) => M._omw_session_create(m, mode),
  session_elem_type: (s, outputs, i) => M._omw_session_elem_type(s, outputs, i),
  session_input_default: (s, i) => M._omw_session_input_default(s, i),
  session_input_info: (s, i, out, dimParams) => M._omw_session_input_info(s, i, out, dimParams),
  session_name: (s, outputs, i) => M._omw_session_name(s, outputs, i),
  session_open: (bytes, n, mode) => M._omw_session_open(bytes, n, mode),
  session_plan: (s, inputs, counts, strings, n) => M._omw_session_plan(s, inputs, counts, strings, n),
  session_plan_bytes: (s) => M._omw_session_plan_bytes(s),
  session_plan_kernels: (s, names, max) => M._omw_session_plan_kernels(s, names, max),
  session_release: (s) => M._omw_session_release(s),
  session_value_count: (s) => M._omw_session_value_count(s),
  session_value_info: (s, i, out) => M._omw_session_value_info(s, i, out),
  strings_bytes: (t, lens) => M._omw_strings_bytes(t, lens),
  strings_info: (t, out) => M._omw_strings_info(t, out),
  strings_new: (ndim, shape, bytes, lens, total) => M._omw_strings_new(ndim, shape, bytes, lens, total),
  strings_release: (t) => M._omw_strings_release(t),
  session_run: (s, inputs, counts, strings, n, out, max, outCounts, outStrings) => M._omw_session_run(s, inputs, counts, strings, n, out, max, outCounts, outStrings),
  set: (t, index, value) => M._omw_set(t, index, value),
  set_grad_enabled: (enabled) => M._omw_set_grad_enabled(enabled),
  set_requires_grad: (t, flag) => M._omw_set_requires_grad(t, flag),
  slice_scatter: (a, src, at) => M._omw_slice_scatter(a, src, at),
  sort: (a, dim, descending, indices) => M._omw_sort(a, dim, descending, indices),
  split: (a, splitSize, dim, out, maxOut) => M._omw_split(a, splitSize, dim, out, maxOut),
  split_sizes: (a, sizes, n, dim, out) => M._omw_split_sizes(a, sizes, n, dim, out),
  stack: (ts, n, dim) => M._omw_stack(ts, n, dim),
  trace_abort: () => M._omw_trace_abort(),
  trace_active: () => M._omw_trace_active(),
  trace_begin: () => M._omw_trace_begin(),
  trace_dim: (name, multipleOf, min, max) => M._omw_trace_dim(name, multipleOf, min, max),
  trace_finish: (outputs, names, n) => M._omw_trace_finish(outputs, names, n),
  trace_input: (name, example, axisNames) => M._omw_trace_input(name, example, axisNames),
  trace_parameter: (name, t) => M._omw_trace_parameter(name, t),
  trace_run: (ctx, out, max) => M._omw_trace_run(ctx, out, max),
  traced_count: (m, part) => M._omw_traced_count(m, part),
  traced_info: (m, part, i, out, dimParams) => M._omw_traced_info(m, part, i, out, dimParams),
  traced_name: (m, part, i) => M._omw_traced_name(m, part, i),
  traced_node_values: (m, i, outputs, names, max) => M._omw_traced_node_values(m, i, outputs, names, max),
  traced_aliases: (m, i, names, max) => M._omw_traced_aliases(m, i, names, max),
  traced_onnx_size: (m) => M._omw_traced_onnx_size(m),
  traced_release: (m) => M._omw_traced_release(m),
  traced_save: (m, ctx) => M._omw_traced_save(m, ctx),
  traced_save_size: (m) => M._omw_traced_save_size(m),
  traced_symbol: (m, i, out, strs) => M._omw_traced_symbol(m, i, out, strs),
  traced_symbol_count: (m) => M._omw_traced_symbol_count(m),
  traced_symbol_branches: (m, i, out, max) => M._omw_traced_symbol_branches(m, i, out, max),
  traced_write: (m, ctx) => M._omw_traced_write(m, ctx),
  transpose: (a, d0, d1) => M._omw_transpose(a, d0, d1),
  tri_indices: (at, upper) => M._omw_tri_indices(at, upper),
  zero_grad: (t) => M._omw_zero_grad(t),
});

// ---- scopes and the garbage collector ------------------------------------------------------

/** Open scopes (om.tidy and Module forward calls), innermost last; each is an array of the
 *  tensors made inside it. */
export const scopes = [];

let leaked = 0;
/** Counts models and sessions that were garbage-collected without dispose(); it frees nothing. */
export const leakAlarm = typeof FinalizationRegistry === 'function'
  ? new FinalizationRegistry(() => { leaked++; })
  : null;

/**
 * Releases the C reference (the held value) of a Tensor that was garbage-collected without
 * dispose(), and counts it with the models' leak count. Its callbacks run between tasks, once the
 * engine has collected the wrapper: never inside a synchronous loop.
 */
export const collector = typeof FinalizationRegistry === 'function'
  ? new FinalizationRegistry((h) => { leaked++; M._omw_release(h); })
  : null;

/*
 * The collector's pressure. V8 collects when its own heap grows or when memory it is told about
 * does (an ArrayBuffer's bytes count); the wasm heap's tensors are neither. A result that holds
 * an autograd graph (an inference loop without noGrad drops one each call, with megabytes of
 * saved activations behind it) looks like a few bytes to V8, and such a loop ran the wasm heap
 * to OutOfMemory, even yielding, before V8 ever collected one. So a tensor with a graph, handed to
 * the collector, carries an ArrayBuffer (never written) as large as the bytes the library
 * allocated since the last tensor was handed over (at least PRESSURE_MIN, summed over smaller
 * ones), and V8 weighs it as it weighs a Buffer. A leaf (a weight, a loaded or created tensor,
 * usually kept) takes what came before it and carries nothing, so long-lived tensors cost no
 * extra memory; tensors disposed or scoped (om.tidy, a forward's intermediates) never get one.
 * Below PRESSURE_FLOOR live bytes nothing is carried: the buffers cost a PyTorch-style training
 * loop of a small GPT 13% of its CPU time and 57 MB of RSS (farm-bench, 9 pairs), and a heap that
 * small needs no collection to go on.
 */
const PRESSURE_FLOOR = 32 * 2 ** 20;
const PRESSURE_MIN = 64 * 1024;
const PRESSURE_MAX = 2 ** 30;
let pressureSeen = 0; // the library's live bytes when the last watched tensor was counted
let pressurePending = 0; // bytes allocated since, not yet carried by any tensor

/** An ArrayBuffer for tensor handle h, just handed to the collector, or null (see above). */
export function collectorPressure(h) {
  const graph = M._omw_has_graph(h) !== 0;
  const live = M._omw_live_bytes();
  if (live < PRESSURE_FLOOR) {
    pressureSeen = live;
    pressurePending = 0;
    return null;
  }
  pressurePending = graph ? Math.max(0, pressurePending + live - pressureSeen) : 0;
  pressureSeen = live;
  if (pressurePending < PRESSURE_MIN) return null;
  const bytes = Math.min(pressurePending, PRESSURE_MAX);
  pressurePending = 0;
  try {
    return new ArrayBuffer(bytes);
  } catch {
    return null; // the engine refused the size: no pressure rather than an error
  }
}

/**
 * Sets how many threads the kernels use, this one included (capped at the cores available and
 * at 4, and at 1 in the single-thread build); returns the count now in effect. Results are the same bits for any count.
 */
export function setNumThreads(n) {
  requireReady('setNumThreads');
  if (!Number.isInteger(n) || n < 1) {
    throw new OmError('InvalidArgument', `setNumThreads: expected an integer of at least 1, got ${typeof n === 'number' ? n : typeof n}`);
  }
  return M._omw_set_num_threads(Math.min(n, M.omThreadCap)); // no more than the pool's workers and this thread
}

/** How many threads the kernels use (1 in the single-thread build). */
export function numThreads() {
  requireReady('numThreads');
  return M._omw_get_num_threads();
}

/** Live tensors and storage bytes in C, how many JS tensors (and models) were collected undisposed,
 *  and the size of WebAssembly memory (it grows, never shrinks: the high-water mark). */
export function memory() {
  requireReady('memory');
  return { tensors: M._omw_live_tensors(), bytes: M._omw_live_bytes(), leaked, heapBytes: M.HEAPU8.length };
}
