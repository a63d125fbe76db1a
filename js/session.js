// The graph layer's Session in JS (docs/graph-runtime.md): runs a traced model or an .onnx file
// with the library's own kernels. Shaped like onnxruntime-web's InferenceSession, so a page
// that used it switches with one line:
//
//   const session = await om.InferenceSession.create(bytes);   // or traced.session()
//   const { y } = session.run({ x });                          // om.Tensors in and out
//   session.dispose();
//
// run() is synchronous (awaiting it as onnxruntime-web's works the same); its outputs are new
// Tensors the caller disposes (an om.tidy scope takes them too). Feeds are om.Tensors, or
// { data, dims } with a typed array (onnxruntime-web's Tensors have that shape). Strings (ONNX's
// STRING element type, which no om.Tensor holds) go in and come out as { type: 'string', dims,
// data } with data an array of JS strings (UTF-8 in the graph).
import { OmError, invalid } from './errors.js';
import { M, omw, requireReady, checkHandle, lastError, marshal, readU32, readF64, leakAlarm, cString, heapAlloc, dtypeNames } from './runtime.js';
import { Tensor, wrap, handle, tensor, optionsArg } from './tensor.js';
import { describe } from './convert.js';

const TOKEN = Symbol('onemodel.session');
const MODES = { fast: 0, exact: 1 };
const MAX_DIMS = 8;
const NONE = -2; // a count of omw_session_run: an optional holding nothing (C's OM_SESSION_NONE)
const STRINGS = -3; // a count of omw_session_run: a tensor of strings (C's OM_SESSION_STRINGS)
const DEFAULT = -4; // a count of omw_session_run: the input's default, its initializer (C's OM_SESSION_DEFAULT)
const utf8 = new TextEncoder(), fromUtf8 = new TextDecoder();
// onnxruntime-web's session options that mean nothing here (one backend, our own kernels):
// accepted so that its create() calls carry over unchanged.
const ORT_OPTIONS = ['executionProviders', 'graphOptimizationLevel', 'logSeverityLevel', 'logVerbosityLevel', 'intraOpNumThreads', 'interOpNumThreads', 'enableCpuMemArena', 'enableMemPattern', 'executionMode'];
// ONNX's element types (TensorProto.DataType) the Session takes: each one's typed array (float16,
// bfloat16 and the float8 types as their bits, as onnxruntime-web's Tensors hold them) and the
// library dtype that holds its values exactly while the graph runs (docs/graph-runtime.md,
// "Element types").
const ELEM = {
  1: ['float32', Float32Array, 'float32'], 2: ['uint8', Uint8Array, 'int64'], 3: ['int8', Int8Array, 'int64'],
  4: ['uint16', Uint16Array, 'int64'], 5: ['int16', Int16Array, 'int64'], 6: ['int32', Int32Array, 'int64'],
  7: ['int64', BigInt64Array, 'int64'], 9: ['bool', Uint8Array, 'bool'], 10: ['float16', Uint16Array, 'float32'],
  11: ['float64', Float64Array, 'float64'], 12: ['uint32', Uint32Array, 'int64'], 13: ['uint64', BigUint64Array, 'int64'], 16: ['bfloat16', Uint16Array, 'float32'],
  17: ['float8e4m3fn', Uint8Array, 'float32'], 18: ['float8e4m3fnuz', Uint8Array, 'float32'], 19: ['float8e5m2', Uint8Array, 'float32'],
  20: ['float8e5m2fnuz', Uint8Array, 'float32'], 8: ['string', Array, null],
};
const TYPED = Object.fromEntries(Object.values(ELEM).map(([name, T, dtype]) => [name, { T, dtype }]));
// A feed's typed array whose constructor names its type (Uint8Array and Uint16Array name two each: give `type`).
const TYPE_OF = new Map([[Float32Array, 'float32'], [Float64Array, 'float64'], [BigInt64Array, 'int64'], [Int8Array, 'int8'], [Int16Array, 'int16'], [Int32Array, 'int32'], [Uint32Array, 'uint32'], [BigUint64Array, 'uint64']]);

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** A float16's bits as a number (exact). */
function fromHalf(h) {
  const e = (h >> 10) & 0x1f, f = h & 0x3ff, sign = h & 0x8000 ? -1 : 1;
  if (e === 0x1f) return f ? NaN : sign * Infinity;
  return sign * (e ? (1024 + f) * 2 ** (e - 25) : f * 2 ** -24);
}

/** The bits of a float32 that a float16 holds exactly (the session rounded it so). */
function toHalf(x) {
  f32[0] = x;
  const u = u32[0], sign = (u >>> 16) & 0x8000, a = u & 0x7fffffff;
  if (a >= 0x7f800000) return sign | 0x7c00 | (a > 0x7f800000 ? 0x200 : 0); /* infinities, NaN */
  if (a >= 0x38800000) return sign | (((a >>> 23) - 112) << 10) | ((a >>> 13) & 0x3ff); /* normal */
  return sign | Math.abs(f32[0]) * 2 ** 24; /* zero, subnormal: a whole number of 2^-24 */
}

// Each float8 type: fraction bits, exponent bias, whether it is FNUZ (one zero, one NaN: 0x80) and
// whether it has infinities (E5M2); the value of each of its 256 bit patterns (exact in float32),
// and the bits of each value, made on first use.
const F8 = { float8e4m3fn: [3, 7, false, false], float8e4m3fnuz: [3, 8, true, false], float8e5m2: [2, 15, false, true], float8e5m2fnuz: [2, 16, true, false] };
const f8Tables = {};
function f8Table(type) {
  if (f8Tables[type]) return f8Tables[type];
  const [m, bias, fnuz, inf] = F8[type], top = (1 << (7 - m)) - 1;
  const values = Float32Array.from({ length: 256 }, (_, b) => {
    const e = (b & 0x7f) >> m, f = b & ((1 << m) - 1), sign = b & 0x80 ? -1 : 1;
    if (fnuz ? b === 0x80 : inf ? e === top && f : (b & 0x7f) === 0x7f) return NaN;
    if (inf && e === top) return sign * Infinity;
    return sign * (e ? (1 + f / 2 ** m) * 2 ** (e - bias) : f * 2 ** (1 - bias - m));
  });
  const bits = new Map();
  values.forEach((v, b) => { if (!bits.has(v) && !Object.is(v, -0)) bits.set(v, b); });
  return (f8Tables[type] = { values, bits, nan: fnuz ? 0x80 : 0x7f, negZero: fnuz ? 0 : 0x80 });
}

/** A feed's typed array of ONNX type `type` as the library dtype's (a copy where they differ). */
function toCarrier(type, data) {
  if (F8[type]) return Float32Array.from(data, (b) => f8Table(type).values[b]);
  if (type === 'float16') return Float32Array.from(data, fromHalf);
  if (type === 'bfloat16') return new Float32Array(Uint32Array.from(data, (b) => b << 16).buffer);
  if (type === 'uint64') return new BigInt64Array(data.buffer, data.byteOffset, data.length); /* its bits */
  if (TYPED[type].dtype === 'int64' && type !== 'int64') return BigInt64Array.from(data, (v) => BigInt(v));
  return data;
}

/** A library dtype's array as ONNX type `type`'s typed array. */
function fromCarrier(type, data) {
  const { T } = TYPED[type];
  if (data instanceof T) return data;
  if (F8[type]) { /* the session rounded each value to the type: its bits are found, not rounded */
    const t = f8Table(type);
    return Uint8Array.from(data, (v) => (Number.isNaN(v) ? t.nan : Object.is(v, -0) ? t.negZero : t.bits.get(v)));
  }
  if (type === 'float16') return Uint16Array.from(data, toHalf);
  if (type === 'bfloat16') return Uint16Array.from(new Uint32Array(data.buffer, data.byteOffset, data.length), (b) => b >>> 16);
  if (type === 'uint64') return new BigUint64Array(data.buffer, data.byteOffset, data.length);
  return T.from(data, Number);
}

/** The mode option as C's number. */
function modeArg(options, who) {
  const o = optionsArg(options, who, ['mode', ...ORT_OPTIONS]);
  const mode = o.mode ?? 'fast';
  if (!(mode in MODES)) throw invalid(`${who}: mode must be 'fast' or 'exact', got ${describe(mode)}`);
  return MODES[mode];
}

/** ONNX bytes as a Uint8Array view (no copy). */
function bytesArg(source, who) {
  if (source instanceof Uint8Array) return source;
  if (source instanceof ArrayBuffer) return new Uint8Array(source);
  if (ArrayBuffer.isView(source)) return new Uint8Array(source.buffer, source.byteOffset, source.byteLength);
  throw invalid(`${who}: the model must be bytes (ONNX or traced.save()'s, as a Uint8Array or ArrayBuffer) or a TracedModel, got ${describe(source)}`);
}

/** A feed as a Tensor handle, and a Tensor to dispose after the run when this made one. */
function feedHandle(name, v, want, who) {
  if (v instanceof Tensor) return [handle(v, who, `feed ${JSON.stringify(name)}`), null];
  if (v?.type === 'string') throw new OmError('DtypeMismatch', `${who}: feed ${JSON.stringify(name)} is string, the graph takes ${want}`);
  if (v && typeof v === 'object' && ArrayBuffer.isView(v.data) && v.dims !== undefined) {
    const type = v.type ?? v.dtype ?? TYPE_OF.get(v.data.constructor);
    if (!Object.hasOwn(TYPED, type ?? '')) throw invalid(`${who}: feed ${JSON.stringify(name)} has type ${describe(type)}; the graph layer takes ${Object.keys(TYPED).join(', ')}`);
    if (!(v.data instanceof TYPED[type].T)) throw invalid(`${who}: feed ${JSON.stringify(name)} is ${type} but its data is a ${v.data.constructor.name}`);
    if (want && type !== want) throw new OmError('DtypeMismatch', `${who}: feed ${JSON.stringify(name)} is ${type}, the graph takes ${want}`);
    const t = tensor(toCarrier(type, v.data), { dtype: TYPED[type].dtype, shape: Array.from(v.dims, Number) });
    return [handle(t, who), t];
  }
  throw invalid(`${who}: feed ${JSON.stringify(name)} must be an om.Tensor or { data: TypedArray, dims }, got ${describe(v)}`);
}

/** A { type: 'string', data, dims } feed as a handle of C strings (the caller releases it). */
function stringsHandle(name, v, who) {
  if (!v || typeof v !== 'object' || !Array.isArray(v.data) || v.dims === undefined || !v.data.every((e) => typeof e === 'string')) {
    throw invalid(`${who}: feed ${JSON.stringify(name)} takes strings: { type: 'string', data: string[], dims }, got ${describe(v)}`);
  }
  const dims = Array.from(v.dims, Number);
  if (dims.length > MAX_DIMS || dims.some((d) => !Number.isSafeInteger(d) || d < 0)) throw invalid(`${who}: feed ${JSON.stringify(name)} has dims [${dims}]`);
  if (dims.reduce((a, b) => a * b, 1) !== v.data.length) throw invalid(`${who}: feed ${JSON.stringify(name)} has ${v.data.length} strings for dims [${dims}]`);
  const bytes = v.data.map((e) => utf8.encode(e)), total = bytes.reduce((a, b) => a + b.length, 0);
  const p = heapAlloc(total, who);
  try {
    let at = p;
    for (const b of bytes) M.HEAPU8.set(b, at), (at += b.length);
    const [ps, pl] = marshal(['f64', dims], ['ptr', bytes.map((b) => b.length)]);
    return checkHandle(omw.strings_new(dims.length, ps, p, pl, total), who);
  } finally {
    M._free(p);
  }
}

/** A C strings handle (released here) as { type: 'string', dims, data }. */
function stringsValue(h) {
  try {
    const [pi] = marshal(['f64', 3 + MAX_DIMS]);
    omw.strings_info(h, pi);
    const [ndim, n] = readF64(pi, 2), dims = readF64(pi + 24, ndim);
    const [pl] = marshal(['ptr', Math.max(n, 1)]);
    let at = omw.strings_bytes(h, pl) >>> 0;
    const lens = readU32(pl, n), data = lens.map((len) => {
      const e = fromUtf8.decode(M.HEAPU8.subarray(at, at + len));
      at += len + 1; /* each element's NUL */
      return e;
    });
    return { type: 'string', dims, data };
  } finally {
    omw.strings_release(h);
  }
}

/** Runs graphs on the library's kernels; made by InferenceSession.create() or traced.session(). */
export class InferenceSession {
  #s;
  #inputNames; /* every graph input, C's order: those with a default too */
  #defaults;   /* each input's: whether it has a default (an initializer the file also lists as an input) */
  #outputNames;
  #inputs = null;

  constructor(token, s) {
    if (token !== TOKEN) throw invalid('InferenceSession: made by InferenceSession.create() or traced.session()');
    this.#s = s;
    const names = (outputs) => Array.from({ length: omw.session_count(s, outputs) }, (_, i) => cString(omw.session_name(s, outputs, i)));
    this.#inputNames = names(0);
    this.#defaults = this.#inputNames.map((_, i) => omw.session_input_default(s, i) === 1);
    this.#outputNames = names(1);
    leakAlarm?.register(this, undefined, this);
  }

  /**
   * A session on ONNX bytes (a ModelProto, IR 3 to 9, opset 1 to 20), the library format (traced.save())
   * or a TracedModel, in mode 'fast' (the default) or 'exact' (the same bits natively and in WASM
   * on any machine; today both modes are). Rejects with OmError Format for bytes it cannot read,
   * Unsupported naming an op it cannot run.
   * @param {Uint8Array | ArrayBuffer | import('./trace.js').TracedModel} source
   * @param {{ mode?: 'fast' | 'exact' }} [options]
   */
  static async create(source, options) {
    const who = 'InferenceSession.create';
    requireReady(who);
    if (source && typeof source === 'object' && typeof source.session === 'function' && !ArrayBuffer.isView(source)) {
      return source.session(options);
    }
    const mode = modeArg(options, who);
    const bytes = bytesArg(source, who);
    const p = heapAlloc(bytes.byteLength, who);
    try {
      M.HEAPU8.set(bytes, p);
      return new InferenceSession(TOKEN, checkHandle(omw.session_open(p, bytes.byteLength, mode), who));
    } finally {
      M._free(p);
    }
  }

  /** @internal A session on a traced model's C handle (traced.session()). */
  static fromTraced(m, options) {
    const who = 'session';
    const mode = modeArg(options, who);
    return new InferenceSession(TOKEN, checkHandle(omw.session_create(m, mode), who));
  }

  #use(who) {
    if (!this.#s) throw new OmError('Disposed', `${who}: the session was disposed`);
    return this.#s;
  }

  get isDisposed() { return !this.#s; }
  /** The graph inputs' names, in the order the graph declares them, as onnxruntime-web lists them:
   * without those that have a default (an initializer the file also lists as an input, IR 4 on),
   * which run() takes by name too (a feed overrides the initializer) but never needs. */
  get inputNames() { this.#use('inputNames'); return this.#inputNames.filter((_, i) => !this.#defaults[i]); }
  /** The graph outputs' names. */
  get outputNames() { this.#use('outputNames'); return this.#outputNames.slice(); }

  /** The graph inputs: { name, dtype, type, shape }, a named axis as its name ('?' when unnamed);
   * those with a default (see inputNames) too, marked hasDefault: true. */
  get inputs() {
    const s = this.#use('inputs');
    this.#inputs ??= this.#inputNames.map((name, i) => {
      const [pv, pd] = marshal(['f64', 2 + MAX_DIMS], ['ptr', MAX_DIMS]);
      if (!omw.session_input_info(s, i, pv, pd)) throw lastError('inputs');
      const [dtype, ndim] = readF64(pv, 2);
      const sizes = readF64(pv + 16, ndim);
      const params = readU32(pd, ndim);
      const info = { name, dtype: dtypeNames[dtype], type: this.#types(0)[i], shape: sizes.map((v, d) => (params[d] ? cString(params[d]) : v)) };
      return this.#defaults[i] ? { ...info, hasDefault: true } : info;
    });
    return this.#inputs.map((v) => ({ ...v, shape: v.shape.slice() }));
  }

  /** Each input's (outputs 0) or output's (1) ONNX element type name (an output's is null before
   * the first run, unless the file declares it). */
  #types(outputs) {
    const s = this.#use('types');
    return (outputs ? this.#outputNames : this.#inputNames).map((_, i) => {
      const t = omw.session_elem_type(s, outputs, i);
      if (t < 0) throw lastError('types');
      return ELEM[t]?.[0] ?? null;
    });
  }

  /** The outputs' ONNX element types by name ('int8', 'float16', ...): what run() gives in
   * their library dtype (int64, float32) and runData() in their own typed arrays. */
  get outputTypes() { return Object.fromEntries(this.#types(1).map((t, j) => [this.#outputNames[j], t])); }

  /** The bytes of the buffers of the plan it ran last (0 before the first run, unless create made
   * that run's plan: a file whose inputs all have fixed shapes). */
  get planBytes() { return omw.session_plan_bytes(this.#use('planBytes')); }

  /** The library ops whose kernels that plan runs, in order ([] before the first run): fast
   * mode's fusions show here (an 'attention' where five nodes were). */
  get planKernels() {
    const s = this.#use('planKernels');
    const n = omw.session_plan_kernels(s, 0, 0);
    if (n < 0) throw lastError('planKernels');
    const [p] = marshal(['ptr', n]);
    if (omw.session_plan_kernels(s, p, n) !== n) throw lastError('planKernels');
    return readU32(p, n).map(cString);
  }

  /**
   * Runs the graph: feeds has one value per input name (an input with a default may be left out:
   * its initializer is used); returns { outputName: Tensor } (new
   * Tensors). A sequence input takes an array of them, an optional input null for nothing; a
   * sequence output is an array of Tensors, an optional holding nothing null. An input or output
   * of strings is { type: 'string', dims, data: string[] }. A plan is made for each new set of
   * input shapes (and sequence lengths, and strings: their values) and kept.
   * @param {Record<string, Feed | Feed[] | null>} feeds
   * @returns {Record<string, Tensor | Tensor[] | StringTensor | null>}
   */
  run(feeds) {
    const who = 'run';
    const s = this.#use(who);
    const f = this.#feeds(feeds, who);
    try {
      const nOut = this.#outputNames.length;
      for (let room = nOut; ;) {
        const [pin, pc, ps, pout, poc, pos] = marshal(['ptr', f.handles], ['ptr', f.counts], ['ptr', f.strings], ['ptr', room], ['ptr', nOut], ['ptr', nOut]);
        const n = omw.session_run(s, pin, pc, ps, f.counts.length, pout, room, poc, pos);
        if (n < 0) throw lastError(who);
        if (n > room) { room = n; continue; } /* nothing ran: the outputs' sequences hold more tensors */
        const handlesOut = readU32(pout, n), countsOut = readU32(poc, nOut), stringsOut = readU32(pos, nOut); /* read before wrap() reuses the scratch */
        const outs = handlesOut.map(wrap), result = {};
        countsOut.forEach((c, j) => {
          c |= 0;
          result[this.#outputNames[j]] = c === -1 ? outs.shift() : c === NONE ? null : c === STRINGS ? stringsValue(stringsOut[j]) : outs.splice(0, c);
        });
        return result;
      }
    } finally {
      f.free();
    }
  }

  /**
   * The shape of every value of the graph at these feeds, as the Session infers them to plan a
   * run (the nodes are bound as run() binds them, but no plan is kept, no buffer allocated and no
   * kernel runs): { valueName: { type, dims } } for
   * the inputs, the initializers and every node's outputs, type the ONNX element type's name. A
   * value that is not one tensor there (a sequence, an optional, strings) is left out. Feeds as
   * run()'s, and the same errors: only the values of inputs a Reshape's shape or a Slice's bounds
   * come from are read.
   * @param {Record<string, Feed | Feed[] | null>} feeds
   * @returns {Record<string, { type: string | null, dims: number[] }>}
   */
  inferShapes(feeds) {
    const who = 'inferShapes';
    const s = this.#use(who);
    const f = this.#feeds(feeds, who);
    try {
      const [pin, pc, ps] = marshal(['ptr', f.handles], ['ptr', f.counts], ['ptr', f.strings]);
      if (!omw.session_plan(s, pin, pc, ps, f.counts.length)) throw lastError(who);
    } finally {
      f.free();
    }
    const result = {};
    for (let i = 0, n = omw.session_value_count(s); i < n; i++) {
      const [pv] = marshal(['f64', 2 + MAX_DIMS]);
      const name = omw.session_value_info(s, i, pv);
      if (!name) throw lastError(who);
      const [type, ndim] = readF64(pv, 2);
      if (ndim >= 0) result[cString(name)] = { type: ELEM[type]?.[0] ?? null, dims: readF64(pv + 16, ndim) };
    }
    return result;
  }

  /** The feeds as C's inputs: each tensor's handle, each input's count (-1 one tensor), its strings'
   * handle; free() releases what this made. */
  #feeds(feeds, who) {
    if (!feeds || typeof feeds !== 'object') throw invalid(`${who}: feeds must be an object of inputs by name, got ${describe(feeds)}`);
    for (const k of Object.keys(feeds)) {
      if (!this.#inputNames.includes(k)) throw invalid(`${who}: no graph input is named ${JSON.stringify(k)} (inputs: ${this.#inputNames.join(', ')})`);
    }
    const made = [], handles = [], counts = [], strings = [];
    const free = () => {
      for (const t of made) t.dispose();
      for (const h of strings) if (h) omw.strings_release(h);
    };
    try {
      const types = this.#types(0);
      this.#inputNames.forEach((name, i) => {
        if (!(name in feeds) && this.#defaults[i]) return counts.push(DEFAULT), strings.push(0);
        if (!(name in feeds)) throw invalid(`${who}: feed ${JSON.stringify(name)} is missing (inputs: ${this.inputNames.join(', ')})`);
        strings.push(types[i] === 'string' ? stringsHandle(name, feeds[name], who) : 0);
        if (types[i] === 'string') return counts.push(STRINGS);
        const v = feeds[name], list = Array.isArray(v) ? v : v === null ? [] : [v];
        counts.push(Array.isArray(v) ? v.length : v === null ? NONE : -1);
        list.forEach((e, k) => {
          const [h, t] = feedHandle(Array.isArray(v) ? `${name}[${k}]` : name, e, types[i], who);
          if (t) made.push(t);
          handles.push(h);
        });
      });
    } catch (e) {
      free();
      throw e;
    }
    return { handles, counts, strings, free };
  }

  /**
   * Runs the graph as run() does, and returns each output as onnxruntime-web's Tensors hold it:
   * { type, dims, data } with data the type's typed array (Int8Array, Uint16Array for float16's
   * and bfloat16's bits, BigInt64Array for int64, Uint8Array for bool and uint8, ...); a
   * sequence as an array of those, an optional holding nothing as null.
   * @returns {Record<string, RunDataTensor | RunDataTensor[] | null>}
   */
  runData(feeds) {
    const outs = this.run(feeds), types = this.outputTypes, result = {};
    const all = Object.values(outs).flatMap((v) => (v === null ? [] : Array.isArray(v) ? v : [v])).filter((v) => v instanceof Tensor);
    try {
      for (const [name, v] of Object.entries(outs)) {
        const data = (t) => ({ type: types[name], dims: t.shape, data: fromCarrier(types[name], t.toArray()) });
        result[name] = v === null || !(Array.isArray(v) || v instanceof Tensor) ? v : Array.isArray(v) ? v.map(data) : data(v);
      }
    } finally {
      for (const t of all) t.dispose();
    }
    return result;
  }

  /** Frees the session and its plans. Idempotent; any later use throws OmError Disposed. */
  dispose() {
    if (!this.#s) return;
    omw.session_release(this.#s);
    this.#s = 0;
    leakAlarm?.unregister(this);
  }

  /** onnxruntime-web's name for dispose(), returning a promise as its does. */
  async release() { this.dispose(); }
}
