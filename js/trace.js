// Tracing to ONNX (docs/tracing.md). A trace is a recorded eager run: Tracer.begin(), declare
// the inputs, run the model on them, name weights if you like, finish() with the outputs. C does the recording (om_trace_* in src/onemodel.h); this
// file checks JS arguments, moves names and handles across, and wraps the traced model.
//
//   const tracer = om.Tracer.begin();
//   const x = tracer.input('x', example, ['batch', null]);
//   tracer.parameter('fc.weight', w);
//   const traced = tracer.finish({ logits: x.matmul(w.t()) });
//   const bytes = traced.toOnnx();           // Uint8Array, deterministic
//   traced.dispose();
//
// or in one call, which also frees every tensor it made: om.trace(model, { x: [example, ['batch', null]] }).
import { OmError, TraceError, invalid } from './errors.js';
import {
  M, omw, requireReady, checkHandle, checkStatus, lastError, marshal, readU32, readF64, leakAlarm,
  withStrings, cString, stream, nodeFs, dtypeNames, withRuns, runMessage, heapAlloc, jsMessage,
} from './runtime.js';
import { Tensor, wrap, handle, tidy, optionsArg } from './tensor.js';
import { describe } from './convert.js';
import { InferenceSession } from './session.js';

const TOKEN = Symbol('onemodel.trace');

// om_traced_part (src/onemodel.h): which list of a traced model om_traced_count/_name/_info read.
const PART_INPUT = 0;
const PART_OUTPUT = 1;
const PART_INITIALIZER = 2;
const PART_NODE = 3;
const MAX_DIMS = 8;
const MAX_BRANCHES = 16; // the pieces of a symbol's range traced.symbols reads (a trace makes at most 4)
// The most bytes of wasm memory one piece of a written model hands on (a weight larger than
// this comes in several): onProgress moves within a large weight, and no one copy is large. For
// toBlob it also bounds what Chromium's page holds: a larger Blob part stays in the page until
// the browser process fetches it, a small one is sent at once. Writing a 475 MiB model with
// toBlob grew the renderer by 125 MiB with 4 MiB pieces, 43 MiB with 1 MiB, 8 MiB with 256 KiB
// (tools/bench_export.mjs; docs/performance-log.md).
const PIECE_BYTES = 256 * 1024;

/** The index of the first lone (unpaired) surrogate in s, or -1 when s is well-formed UTF-16. */
function loneSurrogate(s) {
  if (typeof s.isWellFormed === 'function' && s.isWellFormed()) return -1;
  const m = /\p{Surrogate}/u.exec(s); // with the u flag a pair is one code point: only lone ones match
  return m ? m.index : -1;
}

/**
 * A graph name: a non-empty string without NUL (C reads names as NUL-terminated) and without
 * lone surrogates (UTF-8 cannot encode them: the name would change on the way to C, and the
 * graph input could not be fed by the name given).
 */
function nameArg(name, who, what = 'name') {
  if (typeof name !== 'string') throw invalid(`${who}: ${what} must be a string, got ${describe(name)}`);
  if (name === '') throw invalid(`${who}: ${what} must not be empty`);
  if (name.includes('\0')) throw invalid(`${who}: ${what} ${JSON.stringify(name)} contains a NUL character`);
  const bad = loneSurrogate(name);
  if (bad >= 0) {
    const unit = name.charCodeAt(bad).toString(16);
    throw invalid(`${who}: ${what} ${JSON.stringify(name)} contains a lone surrogate (\\u${unit} at index ${bad}), which UTF-8 cannot encode`);
  }
  return name;
}

/**
 * A symbolic axis with its sizes declared: om.Dim('h', { multipleOf: 4, min: 8, max: 1024 }).
 * Use it in an input's axis names where a plain name ('h') would be any size from 1.
 */
export class Dim {
  /**
   * @param {string} name
   * @param {{ multipleOf?: number, min?: number, max?: number }} [options]
   */
  constructor(name, options) {
    const who = 'Dim';
    nameArg(name, who);
    const o = optionsArg(options, who, ['multipleOf', 'min', 'max']);
    const int = (v, what, lo) => {
      if (v === undefined || v === null) return undefined;
      if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < lo) throw invalid(`${who}: ${what} must be an integer >= ${lo}, got ${describe(v)}`);
      return v;
    };
    this.name = name;
    this.multipleOf = int(o.multipleOf, 'multipleOf', 1) ?? 1;
    this.min = int(o.min, 'min', 0) ?? 1;
    this.max = o.max === Infinity ? Infinity : int(o.max, 'max', 1) ?? Infinity;
    if (this.max < this.min) throw invalid(`${who}: max ${this.max} is below min ${this.min}`);
    Object.freeze(this);
  }
}

/** om.Dim(name, options): a Dim, with or without `new`. */
export function makeDim(name, options) {
  return new Dim(name, options);
}

/**
 * axisNames: undefined/null (all fixed) or one entry per dim, each a name or a Dim (symbolic)
 * or null/undefined (fixed); a hole of a sparse array counts as null. Returns the entries as
 * names, and the Dims among them.
 */
function axesArg(axisNames, ndim, who) {
  if (axisNames === undefined || axisNames === null) return { names: null, dims: [] };
  if (!Array.isArray(axisNames)) {
    throw invalid(`${who}: axisNames must be an array with one entry per dim (a name or om.Dim, or null for a fixed axis), got ${describe(axisNames)}`);
  }
  if (axisNames.length !== ndim) {
    throw invalid(`${who}: axisNames has ${axisNames.length} entries but the example has ${ndim} dims`);
  }
  const dims = [];
  const names = Array.from(axisNames, (a, d) => {
    if (a === null || a === undefined) return null;
    if (a instanceof Dim) {
      dims.push(a);
      return a.name;
    }
    return nameArg(a, who, `axisNames[${d}]`);
  });
  return { names, dims };
}

/** Declares a Dim's sizes in the recording (C checks the example against them). */
function declareDim(dim, who) {
  withStrings([dim.name], ([p]) => checkStatus(omw.trace_dim(p, dim.multipleOf, dim.min,
    dim.max === Infinity ? 0 : dim.max), who));
}

/** The Tracer whose recording was begun last (its C recording may have ended on an error). */
let current = null;

/**
 * One recording. Make it with Tracer.begin(); it ends with finish() (a TracedModel), abort(), or
 * the first trace error (then finish() reports that error).
 */
export class Tracer {
  #state = 'recording'; // 'recording' | 'finished' | 'aborted' | 'replaced'

  constructor(token) {
    if (token !== TOKEN) throw invalid('Tracer: use om.Tracer.begin()');
  }

  /** Starts recording on this thread. TraceError InvalidUsage when one already records. */
  static begin() {
    requireReady('Tracer.begin');
    checkStatus(omw.trace_begin(), 'Tracer.begin');
    if (current && current.#state === 'recording') current.#state = 'replaced'; // its C recording had ended
    current = new Tracer(TOKEN);
    return current;
  }

  /** True while a trace records (begun and not yet finished, aborted or ended by an error). */
  static get active() {
    requireReady('Tracer.active');
    return !!omw.trace_active();
  }

  /** True while this tracer's recording is on. */
  get recording() {
    return this.#state === 'recording' && current === this && !!omw.trace_active();
  }

  #check(who) {
    if (this.#state === 'recording') return;
    const why = this.#state === 'finished' ? 'has already finished'
      : this.#state === 'aborted' ? 'was aborted' : 'ended, and a later Tracer.begin() started another recording';
    throw new TraceError('InvalidUsage', `${who}: this tracer ${why}`);
  }

  /**
   * Declares graph input `name` with example's values and shape and returns the traced tensor to
   * run the model on (it shares example's storage). axisNames: one entry per dim, a string for a
   * symbolic axis (ONNX dim_param), null for a fixed one; omitted means all fixed.
   */
  input(name, example, axisNames) {
    const who = 'input';
    this.#check(who);
    nameArg(name, who);
    const h = handle(example, who, 'example');
    const { names, dims } = axesArg(axisNames, example.ndim, who);
    for (const dim of dims) declareDim(dim, who);
    return withStrings([name, ...(names ?? [])], ([pn, ...pa]) => {
      const [pAxes] = names ? marshal(['ptr', pa]) : [0];
      return wrap(checkHandle(omw.trace_input(pn, h, pAxes), who));
    });
  }

  /**
   * Names a constant (a weight or buffer) in the graph; views of it with other strides become
   * `<name>.view_<n>`. A second name for the same tensor (tied weights) is kept as an
   * alias of the first, which names the one initializer.
   */
  parameter(name, tensor) {
    const who = 'parameter';
    this.#check(who);
    nameArg(name, who);
    const h = handle(tensor, who, 'tensor');
    withStrings([name], ([pn]) => checkStatus(omw.trace_parameter(pn, h), who));
  }

  /**
   * Runs model (a function of the traced inputs, in declaration order) the way om.trace does:
   * at three other sizes of the symbols first (shape only), then on the inputs, recording; each
   * call is checked against the other runs and the integers the model computed from sizes are
   * written as what they are. Returns what the recorded run returned, as { name: Tensor } (the
   * names as om.trace gives them), ready for finish(). Call it once, right after the inputs and
   * parameters; it is the only way to trace with symbolic axes.
   */
  run(model, outputNames = null) {
    const who = 'run';
    this.#check(who);
    if (typeof model !== 'function') throw invalid(`${who}: model must be a function of the traced inputs, got ${describe(model)}`);
    const MAX_OUT = 256;
    const outPtr = heapAlloc(4 * MAX_OUT, who); // not the argument buffer: the model's own calls use that
    let names = null;
    const thrown = []; // what the runs threw: a refusal that quotes one is placed where it was thrown
    const limit = Error.stackTraceLimit; // deep enough to reach the model's own code (withLocation)
    Error.stackTraceLimit = Math.max(limit, 64);
    try {
      const n = withRuns((inputs, at, max) => {
        const hs = tidy(() => { // frees every tensor the run made; C keeps the outputs
          const result = model(...inputs.map((h) => wrap(omw.retain(h))));
          const named = namedOutputs(result, outputNames, 'trace');
          names = Object.keys(named);
          if (names.length > max) throw invalid(`trace: the model returned ${names.length} outputs (at most ${max})`);
          const handles = names.map((k) => handle(named[k], 'trace', `output ${JSON.stringify(k)}`));
          return handles.map((h) => omw.retain(h));
        });
        new Uint32Array(M.HEAPU8.buffer, at, hs.length).set(hs);
        return hs.length;
      }, (ctx) => omw.trace_run(ctx, outPtr, MAX_OUT), thrown);
      if (n < 0) throw withLocation(lastError(who), thrown);
      const hs = readU32(outPtr, n);
      return Object.fromEntries(names.map((k, i) => [k, wrap(hs[i])]));
    } catch (e) {
      throw withLocation(e);
    } finally {
      Error.stackTraceLimit = limit;
      M._free(outPtr);
    }
  }

  /**
   * Ends the recording and returns the TracedModel whose outputs are the given tensors, named by
   * the object's keys in that order. The recording ends whether or not this succeeds (after a
   * trace error, this reports that first error); a JS argument error leaves it recording.
   */
  finish(outputs) {
    const who = 'finish';
    this.#check(who);
    const proto = outputs === null || typeof outputs !== 'object' ? undefined : Object.getPrototypeOf(outputs);
    if (!(proto === Object.prototype || proto === null)) {
      throw invalid(`${who}: outputs must be a plain object of name -> Tensor (e.g. { logits: y }), got ${describe(outputs)}`);
    }
    const names = Object.keys(outputs);
    if (!names.length) throw invalid(`${who}: outputs is empty; name at least one output tensor`);
    const handles = names.map((n) => {
      nameArg(n, who, 'output name');
      const t = outputs[n];
      if (!(t instanceof Tensor)) throw invalid(`${who}: output ${JSON.stringify(n)} must be a Tensor, got ${describe(t)}`);
      return handle(t, who, `output ${JSON.stringify(n)}`);
    });
    return withStrings(names, (pn) => {
      const [ph, pnames] = marshal(['ptr', handles], ['ptr', pn]);
      const m = omw.trace_finish(ph, pnames, names.length) >>> 0;
      this.#state = 'finished';
      if (!m) throw lastError(who);
      return new TracedModel(TOKEN, m);
    });
  }

  /** Ends the recording without a model. Does nothing when it has already ended. */
  abort() {
    if (this.#state !== 'recording') return;
    this.#state = 'aborted';
    if (current === this && M) omw.trace_abort();
  }
}

// ---- the traced model -----------------------------------------------------------------------

/** Reads [name, dtype, shape] of item i of a part (symbolic axes as their names). */
function valueInfo(m, part, i) {
  const name = cString(omw.traced_name(m, part, i));
  const [pv, pd] = marshal(['f64', 2 + MAX_DIMS], ['ptr', MAX_DIMS]);
  if (!omw.traced_info(m, part, i, pv, pd)) throw lastError('TracedModel');
  const [dtype, ndim] = readF64(pv, 2);
  const sizes = readF64(pv + 16, ndim);
  const params = readU32(pd, ndim);
  const shape = sizes.map((s, d) => (params[d] ? cString(params[d]) : s));
  return { name, dtype: dtypeNames[dtype], shape };
}

function count(m, part) {
  const n = omw.traced_count(m, part);
  if (n < 0) throw lastError('TracedModel');
  return n;
}

/** The names list(p, max) writes (it returns how many there are, -1 on error), '' for an omitted one. */
function nameList(list) {
  let max = 8;
  for (;;) {
    const [p] = marshal(['ptr', max]);
    const n = list(p, max);
    if (n < 0) throw lastError('graph');
    if (n <= max) return readU32(p, n).map((q) => cString(q) ?? '');
    max = n;
  }
}

const nodeValues = (m, i, outputs) => nameList((p, max) => omw.traced_node_values(m, i, outputs ? 1 : 0, p, max));

/** options.onProgress (a function or undefined); the keys of options checked against allowed (null: not checked). */
function progressOption(options, who, allowed = ['onProgress']) {
  const { onProgress } = optionsArg(options, who, allowed);
  if (onProgress !== undefined && typeof onProgress !== 'function') {
    throw invalid(`${who}: onProgress must be a function, got ${describe(onProgress)}`);
  }
  return onProgress;
}

/**
 * A finished trace: an ONNX graph (opset 20, IR 9) whose weights live in C memory. Free it with
 * dispose(); the garbage collector does not (it only counts a leak, like tensors).
 */
export class TracedModel {
  #m;
  #inputs = null;
  #outputs = null;

  constructor(token, m) {
    if (token !== TOKEN) throw invalid('TracedModel: made by tracer.finish() or om.trace()');
    this.#m = m;
    leakAlarm?.register(this, undefined, this);
  }

  #use(who) {
    if (!this.#m) throw new OmError('Disposed', `${who}: the traced model was disposed`);
    return this.#m;
  }

  get isDisposed() { return !this.#m; }

  /** The graph inputs in declaration order: { name, dtype, shape }, a symbolic axis as its name. */
  get inputs() {
    const m = this.#use('inputs');
    this.#inputs ??= Array.from({ length: count(m, PART_INPUT) }, (_, i) => valueInfo(m, PART_INPUT, i));
    return this.#inputs.map((v) => ({ ...v, shape: v.shape.slice() }));
  }

  /** The graph outputs in the order finish() was given them. */
  get outputs() {
    const m = this.#use('outputs');
    this.#outputs ??= Array.from({ length: count(m, PART_OUTPUT) }, (_, i) => valueInfo(m, PART_OUTPUT, i));
    return this.#outputs.map((v) => ({ ...v, shape: v.shape.slice() }));
  }

  /**
   * The symbolic axes and the sizes the graph is exact for: [{ name, multipleOf, min, max,
   * narrowedBy, checked }], max Infinity when unbounded; narrowedBy names the call that needed a
   * range narrower than declared (e.g. a slice of a 64-row table to the sequence length: max 64),
   * else null; checked: { min, max }, the sizes the tracer checked the graph over (shape only:
   * the whole range, to 32768 or 4 times the example when max is Infinity); branches (only where
   * the graph is an If on the symbol's size): the pieces of its range, [{ min, max }, ...], which
   * may leave sizes out between them (1 and n: the sizes admitted).
   */
  get symbols() {
    const m = this.#use('symbols');
    const n = omw.traced_symbol_count(m);
    if (n < 0) throw lastError('symbols');
    return Array.from({ length: n }, (_, i) => {
      const [pv, ps] = marshal(['f64', 5], ['ptr', 2]);
      if (!omw.traced_symbol(m, i, pv, ps)) throw lastError('symbols');
      const [multipleOf, min, max, checkedMin, checkedMax] = readF64(pv, 5);
      const [name, why] = readU32(ps, 2).map(cString);
      const symbol = { name, multipleOf, min, max: max < 0 ? Infinity : max, narrowedBy: why && jsMessage(why), checked: { min: checkedMin, max: checkedMax } };
      const [pb] = marshal(['f64', 2 * MAX_BRANCHES]);
      const nb = omw.traced_symbol_branches(m, i, pb, MAX_BRANCHES);
      if (nb < 0) throw lastError('symbols');
      const b = readF64(pb, 2 * Math.min(nb, MAX_BRANCHES));
      if (nb) symbol.branches = Array.from({ length: b.length / 2 }, (_, q) => ({ min: b[2 * q], max: b[2 * q + 1] < 0 ? Infinity : b[2 * q + 1] }));
      return symbol;
    });
  }

  /** The recorded graph, for inspection: nodes in execution order and the initializers. */
  graph() {
    const m = this.#use('graph');
    const nodes = Array.from({ length: count(m, PART_NODE) }, (_, i) => ({
      opType: cString(omw.traced_name(m, PART_NODE, i)),
      inputs: nodeValues(m, i, false),
      outputs: nodeValues(m, i, true),
    }));
    const initializers = Array.from({ length: count(m, PART_INITIALIZER) }, (_, i) =>
      ({ ...valueInfo(m, PART_INITIALIZER, i), aliases: nameList((p, max) => omw.traced_aliases(m, i, p, max)) }));
    return { nodes, initializers };
  }

  /**
   * The .onnx bytes (a ModelProto; equal graphs give equal bytes) as one Uint8Array, copied once,
   * chunk by chunk. options: { onProgress } (see toBlob). For a large model in a browser prefer
   * toBlob(), which holds no copy of the file in JS memory.
   */
  toOnnx(options) {
    return this.#bytes('toOnnx', omw.traced_onnx_size, omw.traced_write, options);
  }

  /**
   * The .onnx bytes as a Blob (type application/octet-stream), for a download link or an upload.
   * Each piece C writes goes from wasm memory straight into a Blob of its own (a Blob copies
   * the bytes it is made of), and the result is the Blob of those pieces, so the page holds no
   * copy of the file: a browser moves a Blob's bytes to its blob storage, outside the page (and
   * to disk when large); Node.js keeps them in the process. options: { onProgress({ written, total }) },
   * called as the bytes are written, at most about 100 times, the last time with written === total.
   */
  toBlob(options) {
    const who = 'toBlob';
    if (typeof Blob !== 'function') throw new OmError('InvalidArgument', `${who}: this JavaScript environment has no Blob`);
    const parts = [];
    this.#stream(who, omw.traced_onnx_size, omw.traced_write, options, (ptr, len) => {
      // a Blob takes no view of shared memory (the threaded build's): that chunk is copied first
      const chunk = M.HEAPU8.subarray(ptr, ptr + len);
      parts.push(new Blob([chunk.buffer instanceof ArrayBuffer ? chunk : chunk.slice()]));
    });
    return new Blob(parts, { type: 'application/octet-stream' });
  }

  /**
   * The library format v3 bytes (docs/format.md): the graph as recorded, the ranges of its
   * symbols, the weights 64-byte aligned; equal graphs give equal bytes, natively and in WASM.
   * om.InferenceSession.create() runs them.
   */
  save() {
    return this.#bytes('save', omw.traced_save_size, omw.traced_save);
  }

  /** The bytes C streams with write(m, ctx), of the size size(m) announces, copied once. */
  #bytes(who, size, write, options) {
    let out = null;
    this.#stream(who, size, write, options, (ptr, len, at, total) => {
      out ??= new Uint8Array(total);
      out.set(M.HEAPU8.subarray(ptr, ptr + len), at);
    });
    return out;
  }

  /**
   * Streams the bytes C writes with write(m, ctx) to onPiece(ptr, len, at, total): pieces of at
   * most PIECE_BYTES of wasm memory (valid during the call), at their offset; C must write
   * exactly the size(m) it announces. options.onProgress gets { written, total } after the
   * pieces that pass each hundredth of the total, and once at the end. Returns the total.
   */
  #stream(who, size, write, options, onPiece) {
    const m = this.#use(who);
    const onProgress = progressOption(options, who);
    const total = size(m);
    if (!total) throw lastError(who);
    const step = Math.max(1, Math.ceil(total / 100));
    let at = 0;
    let next = step;
    const ok = stream((ptr, len) => {
      if (at + len > total) {
        throw new OmError('InvalidArgument', `${who}: C wrote more than the ${total} bytes it announced (a bug in onemodel)`);
      }
      for (let off = 0; off < len;) {
        const n = Math.min(PIECE_BYTES, len - off);
        onPiece(ptr + off, n, at, total);
        off += n;
        at += n;
        if (onProgress && at >= next && at < total) {
          next = (Math.floor(at / step) + 1) * step;
          onProgress({ written: at, total });
        }
      }
    }, (ctx) => write(m, ctx));
    if (!ok) throw lastError(who);
    if (at !== total) throw new OmError('InvalidArgument', `${who}: C wrote ${at} of the ${total} bytes it announced (a bug in onemodel)`);
    onProgress?.({ written: at, total });
    return total;
  }

  /**
   * Node.js only: writes the .onnx file at path (a string or file: URL), streaming each chunk
   * from wasm memory to the file (no copy of the whole model). Returns the bytes written.
   * options: { onProgress } (see toBlob).
   */
  saveOnnx(path, options) {
    const who = 'saveOnnx';
    this.#use(who);
    if (!nodeFs) {
      throw new OmError('InvalidArgument', `${who}: writing files needs Node.js; in a browser use toBlob() (e.g. for a download link)`);
    }
    if (typeof path !== 'string' && !(path instanceof URL)) throw invalid(`${who}: path must be a string or a URL, got ${describe(path)}`);
    progressOption(options, who); // before the file is made
    const ioError = (e, what) => new OmError('InvalidArgument', `${who}: cannot ${what} ${path}: ${e?.message ?? e}`);
    let fd;
    try {
      fd = nodeFs.openSync(path, 'w');
    } catch (e) {
      throw ioError(e, 'open');
    }
    let done = false;
    try {
      const total = this.#stream(who, omw.traced_onnx_size, omw.traced_write, options, (ptr, len) => {
        try {
          for (let off = 0; off < len;) off += nodeFs.writeSync(fd, M.HEAPU8, ptr + off, len - off);
        } catch (e) {
          throw ioError(e, 'write');
        }
      });
      done = true;
      return total;
    } finally {
      try { nodeFs.closeSync(fd); } catch { /* the write error, if any, is the one to report */ }
      if (!done) try { nodeFs.unlinkSync(path); } catch { /* nothing to remove */ }
    }
  }

  /**
   * A Session that runs this graph on the library's kernels (docs/graph-runtime.md); it keeps its
   * own copy, so it outlives dispose(). options: { mode: 'fast' | 'exact' }.
   */
  session(options) {
    return InferenceSession.fromTraced(this.#use('session'), options);
  }

  /** Frees the C model. Idempotent; any later use throws OmError Disposed. */
  dispose() {
    if (!this.#m) return;
    omw.traced_release(this.#m);
    this.#m = 0;
    leakAlarm?.unregister(this);
  }
}

// ---- om.trace -------------------------------------------------------------------------------

/** The traced outputs of a model's result, named: { name: Tensor } in order. */
function namedOutputs(result, outputNames, who) {
  let list;
  let names;
  if (result instanceof Tensor) {
    list = [result];
    names = outputNames ?? ['output'];
  } else if (Array.isArray(result)) {
    list = result;
    names = outputNames ?? result.map((_, i) => `output_${i}`);
  } else if (result !== null && typeof result === 'object'
    && (Object.getPrototypeOf(result) === Object.prototype || Object.getPrototypeOf(result) === null)) {
    names = Object.keys(result);
    list = names.map((k) => result[k]);
    if (outputNames && (outputNames.length !== names.length || outputNames.some((n, i) => n !== names[i]))) {
      throw invalid(`${who}: the model returned an object, whose keys (${names.join(', ')}) name the outputs; outputNames (${outputNames.join(', ')}) differs`);
    }
  } else {
    throw invalid(`${who}: the model must return a Tensor, an array of Tensors or an object of Tensors, got ${describe(result)}`);
  }
  if (names.length !== list.length) {
    throw invalid(`${who}: outputNames has ${names.length} names but the model returned ${list.length} outputs`);
  }
  const out = Object.create(null);
  list.forEach((t, i) => {
    if (!(t instanceof Tensor)) throw invalid(`${who}: output ${i} (${JSON.stringify(names[i])}) must be a Tensor, got ${describe(t)}`);
    if (names[i] in out) throw new TraceError('InvalidUsage', `${who}: output name ${JSON.stringify(names[i])} is used twice`);
    out[names[i]] = t;
  });
  return out;
}

/**
 * Traces one run of model (a function, or an object with forward(), e.g. an nn.Module) on the
 * example inputs and returns the TracedModel. inputs maps each graph input's name to an example
 * Tensor or to [example, axisNames]; the model gets the traced inputs positionally, in key order.
 * With a stateDict() (nn.Module), every parameter and buffer is named by its state-dict path.
 * Every tensor made on the way (traced inputs included) is freed, and the recording never
 * outlives the call, also when the model throws.
 */
export function trace(model, inputs, options = {}) {
  const who = 'trace';
  requireReady(who);
  const isFn = typeof model === 'function';
  if (!isFn && !(model !== null && typeof model === 'object' && typeof model.forward === 'function')) {
    throw invalid(`${who}: model must be a function or an object with a forward() method (an nn.Module), got ${describe(model)}`);
  }
  if (inputs === null || typeof inputs !== 'object' || Array.isArray(inputs)) {
    throw invalid(`${who}: inputs must be an object of name -> Tensor or [Tensor, axisNames], got ${describe(inputs)}`);
  }
  const { outputNames: given } = optionsArg(options, who);
  const onProgress = progressOption(options, who, null);
  const specs = Object.entries(inputs).map(([name, spec]) => {
    let example = spec;
    let axes = null;
    if (Array.isArray(spec)) {
      if (spec.length < 1 || spec.length > 2) {
        throw invalid(`${who}: input ${JSON.stringify(name)} must be a Tensor or [Tensor, axisNames], got an array of length ${spec.length}`);
      }
      [example, axes = null] = spec;
    }
    if (!(example instanceof Tensor)) throw invalid(`${who}: input ${JSON.stringify(name)} must be a Tensor or [Tensor, axisNames], got ${describe(example)}`);
    return [name, example, axes];
  });
  let outputNames = given;
  if (outputNames !== undefined && outputNames !== null) {
    if (typeof outputNames === 'string') outputNames = [outputNames];
    if (!Array.isArray(outputNames)) throw invalid(`${who}: outputNames must be an array of strings, got ${describe(outputNames)}`);
    for (let i = 0; i < outputNames.length; i++) {
      if (!(i in outputNames)) throw invalid(`${who}: outputNames[${i}] is missing (a hole in a sparse array); give every output a name`);
      nameArg(outputNames[i], who, `outputNames[${i}]`);
    }
  } else {
    outputNames = null;
  }
  const stateDict = !isFn && typeof model.stateDict === 'function';
  const state = !isFn && typeof model.namedModules === 'function' ? new ModuleState(model) : null;
  const forward = isFn ? model : state ? (...xs) => state.run(xs, () => model.forward(...xs)) : (...xs) => model.forward(...xs);
  return tidy(() => {
    const tracer = Tracer.begin();
    let progress = null;
    try {
      const traced = specs.map(([name, example, axes]) => tracer.input(name, example, axes));
      state?.inputs(traced);
      if (stateDict) {
        for (const [path, t] of Object.entries(model.stateDict())) tracer.parameter(path, t);
      }
      progress = onProgress ? new TraceProgress(isFn ? null : model, traced, onProgress) : null;
      const tm = tracer.finish(tracer.run(progress ? progress.wrap(forward) : forward, outputNames));
      progress?.end();
      return tm;
    } finally {
      progress?.restore();
      state?.end();
      tracer.abort(); // still recording only when something above threw
      // The model may have begun a recording of its own (after catching the error of a nested
      // Tracer.begin(), which ended ours): it ends here too. Any recording active now was begun
      // during this call, since ours could only begin when none was.
      if (omw.trace_active()) {
        current?.abort();
        if (omw.trace_active()) omw.trace_abort();
      }
    }
  });
}

/**
 * The fields of an nn.Module's tree as om.trace found them, put back before each run. The tracer
 * runs the model at other sizes besides the recording run (the one given the traced inputs); a
 * model that replaces a field in its forward (a table of positions made again, longer, for a longer
 * sequence, as M2M100's sinusoidal embedding and Phi's rotary cache do) would otherwise start a run
 * with the state a run at another size left, and the graph would read a table no call at its own
 * size makes. So each run starts from the model as given (one eager call's state), and after the
 * trace the model is as the recording run left it. The tensors a field held when the trace began,
 * and those the recording run stored, are kept alive through the trace (a dispose() of one by the
 * model, as it replaces it, waits for the end, where it goes through unless a field holds it); a
 * tensor another run stored in a field is freed when its field is put back. What is put back is
 * each module's own fields (a field set to another value, added or removed), not the inside of an
 * object or array a field holds (a Map filled in place stays filled: a model that caches that way
 * skips the cache while om.Tracer.active, as BEiT's port does).
 */
class ModuleState {
  #modules = []; // the modules of the tree
  #initial = []; // per module: Map(field -> value) when the trace began
  #after = null; // the same after the recording run
  #inputs = null; // the traced inputs' handles: the recording run's
  #pinned = new Map(); // Tensor -> its own dispose property (undefined: the prototype's)
  #released = new Set(); // pinned tensors the model disposed during the trace
  #recorded = new Set(); // tensors the recording run stored

  constructor(model) {
    this.#modules = model.namedModules().map(([, m]) => m).filter((m) => m !== null && typeof m === 'object');
    this.#initial = this.#snapshot();
    for (const fields of this.#initial) for (const v of fields.values()) if (v instanceof Tensor) this.#pin(v);
  }

  /** The traced inputs, which tell the recording run. */
  inputs(traced) {
    this.#inputs = traced.map((t) => handle(t, 'trace', 'input'));
  }

  #snapshot() {
    return this.#modules.map((m) => new Map(Object.entries(m)));
  }

  /** Defers t.dispose() to end(). */
  #pin(t) {
    if (this.#pinned.has(t)) return;
    this.#pinned.set(t, Object.getOwnPropertyDescriptor(t, 'dispose'));
    const released = this.#released;
    Object.defineProperty(t, 'dispose', { configurable: true, writable: true, enumerable: false, value() { released.add(t); } });
  }

  /** Sets every module's fields to state (a snapshot), freeing the unpinned tensors it drops. */
  #put(state) {
    this.#modules.forEach((m, i) => {
      const fields = state[i];
      for (const [k, v] of Object.entries(m)) {
        if (fields.has(k) && fields.get(k) === v) continue;
        if (v instanceof Tensor && !this.#pinned.has(v)) v.dispose(); // a tensor a run at another size stored
        if (!fields.has(k)) delete m[k];
      }
      for (const [k, v] of fields) if (m[k] !== v) m[k] = v;
    });
  }

  /** Runs fn (the model on xs) on the model's fields as they were when the trace began. */
  run(xs, fn) {
    this.#put(this.#initial);
    const result = fn();
    if (this.#inputs && xs.length === this.#inputs.length && xs.every((x, i) => handle(x, 'trace', 'input') === this.#inputs[i])) {
      this.#after = this.#snapshot();
      for (const fields of this.#after) {
        for (const v of fields.values()) {
          if (!(v instanceof Tensor) || this.#pinned.has(v)) continue;
          this.#recorded.add(v);
          this.#pin(v);
        }
      }
    }
    return result;
  }

  /** The model as the recording run left it (as given, if none ran); the deferred disposes go through. */
  end() {
    this.#put(this.#after ?? this.#initial);
    const held = new Set();
    for (const m of this.#modules) for (const v of Object.values(m)) if (v instanceof Tensor) held.add(v);
    for (const [t, own] of this.#pinned) {
      if (own) Object.defineProperty(t, 'dispose', own);
      else delete t.dispose;
      if ((this.#released.has(t) || this.#recorded.has(t)) && !held.has(t)) t.dispose();
    }
    this.#pinned.clear();
    this.#released.clear();
    this.#recorded.clear();
  }
}

/**
 * om.trace's onProgress. The recording run (the one given the traced inputs themselves; the
 * runs at other sizes before it compute shapes only, and are quick) reports { done, total }: done
 * counts the returns of its submodules' forward (each wrapped for the call), total is how many
 * the last run at other sizes made (the same calls), else the number of submodules. Reported at
 * the run's start, after each hundredth of total, and { done: total, total } once finish is
 * through. A model that is a function has no steps: only the first and last reports.
 */
class TraceProgress {
  #report;
  #handles;
  #saved = [];
  #total;
  #count = 0;
  #record = false;
  #next = 0;

  constructor(model, traced, onProgress) {
    this.#report = onProgress;
    this.#handles = traced.map((t) => handle(t, 'trace', 'input'));
    const modules = typeof model?.namedModules === 'function' ? model.namedModules().slice(1).map(([, m]) => m) : [];
    this.#total = Math.max(1, modules.length);
    for (const m of modules) {
      const f = m.forward;
      if (typeof f !== 'function') continue;
      this.#saved.push([m, Object.getOwnPropertyDescriptor(m, 'forward')]);
      const self = this;
      Object.defineProperty(m, 'forward', {
        configurable: true, writable: true, enumerable: false,
        value: function forward(...args) { const y = f.apply(this, args); self.#step(); return y; },
      });
    }
  }

  /** forward, counting its steps: a recording run reports, a run at other sizes sets the total. */
  wrap(forward) {
    return (...xs) => {
      this.#record = xs.length === this.#handles.length && xs.every((x, i) => handle(x, 'trace', 'input') === this.#handles[i]);
      this.#count = 0;
      if (this.#record) {
        this.#next = Math.ceil(this.#total / 100);
        this.#report({ done: 0, total: this.#total });
      }
      const result = forward(...xs);
      if (!this.#record) this.#total = Math.max(1, this.#count);
      return result;
    };
  }

  #step() {
    this.#count++;
    if (!this.#record || this.#count < this.#next || this.#count >= this.#total) return;
    this.#next = this.#count + Math.ceil(this.#total / 100);
    this.#report({ done: this.#count, total: this.#total });
  }

  end() {
    this.#report({ done: this.#total, total: this.#total });
  }

  /** Puts every wrapped forward back as it was. */
  restore() {
    for (const [m, own] of this.#saved) {
      if (own) Object.defineProperty(m, 'forward', own);
      else delete m.forward;
    }
    this.#saved = [];
  }
}

// ---- where in the user's code ------------------------------------------------------------------

const PACKAGE = new URL('./', import.meta.url).href;
/** Where a refusal's advice begins (the markers of without_advice in src/trace/branch.c). */
const ADVICE = /: the graph holds for the sizes |\. It holds |; it holds when |; the trace holds on |; declare |: declare /;

/**
 * A TraceError of kind SymbolicShape with the place in the model's code it was raised at (the
 * first stack frame outside this package) added to its message, once: a size the model computes
 * is where the user has to look. A refusal that quotes an exception one of the runs threw (a
 * piece of a threshold, a run below the example: thrown, runMessage) is placed where that one was
 * thrown, in the model, not where om.trace was called; a piece's refusal is quoted without its
 * advice (src/trace/branch.c, without_advice: the declarations are the piece's) and perhaps cut
 * short, so only the start of the part before the advice must match. Other errors are returned
 * unchanged.
 */
function withLocation(e, thrown = []) {
  if (!(e instanceof TraceError) || e.kind !== 'SymbolicShape' || e.located || typeof e.stack !== 'string') return e;
  // a message quoted in a piece's refusal may be cut short, ending in "..." (C keeps 512 bytes)
  const quotes = (t) => {
    const m = runMessage(t).split(ADVICE)[0], at = m.length > 8 ? e.message.indexOf(m.slice(0, 40)) : -1;
    if (at < 0) return false;
    const rest = e.message.slice(at), cut = rest.indexOf('...');
    return rest.startsWith(m.slice(0, 120)) || (cut > 0 && m.startsWith(rest.slice(0, cut)));
  };
  const quoted = thrown.findLast((t) => t !== e && typeof t?.stack === 'string' && quotes(t));
  const at = (quoted && placeOf(quoted.stack)) ?? placeOf(e.stack);
  if (at) e.message += ` (at ${at})`;
  Object.defineProperty(e, 'located', { value: true });
  return e;
}

/** The first frame of a stack outside this package (and node's own): "file:///...:line:column". */
function placeOf(stack) {
  for (const line of stack.split('\n').slice(1)) {
    const m = /\(?((?:file|https?|blob:[a-z]+):\/\/[^\s)]+|\/[^\s):]+(?::\d+){1,2})\)?\s*$/.exec(line.trim());
    if (!m || m[1].startsWith(PACKAGE) || m[1].startsWith(PACKAGE.replace(/^file:\/\//, '')) || m[1].startsWith('node:')) continue;
    return m[1];
  }
  return null;
}
makeDim.prototype = Dim.prototype; // x instanceof om.Dim
