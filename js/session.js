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
// { data, dims } with a typed array (onnxruntime-web's Tensors have that shape).
import { OmError, invalid } from './errors.js';
import { M, omw, requireReady, checkHandle, lastError, marshal, readU32, readF64, leakAlarm, cString, heapAlloc, dtypeNames } from './runtime.js';
import { Tensor, wrap, handle, tensor, optionsArg } from './tensor.js';
import { describe } from './convert.js';

const TOKEN = Symbol('onemodel.session');
const MODES = { fast: 0, exact: 1 };
const MAX_DIMS = 8;
// onnxruntime-web's session options that mean nothing here (one backend, our own kernels):
// accepted so that its create() calls carry over unchanged.
const ORT_OPTIONS = ['executionProviders', 'graphOptimizationLevel', 'logSeverityLevel', 'logVerbosityLevel', 'intraOpNumThreads', 'interOpNumThreads', 'enableCpuMemArena', 'enableMemPattern', 'executionMode'];
const TYPED = { float32: Float32Array, int64: BigInt64Array, bool: Uint8Array };

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
function feedHandle(name, v, who) {
  if (v instanceof Tensor) return [handle(v, who, `feed ${JSON.stringify(name)}`), null];
  if (v && typeof v === 'object' && ArrayBuffer.isView(v.data) && v.dims !== undefined) {
    const dtype = v.type ?? v.dtype ?? (v.data instanceof BigInt64Array ? 'int64' : v.data instanceof Float32Array ? 'float32' : undefined);
    if (!(dtype in TYPED)) throw invalid(`${who}: feed ${JSON.stringify(name)} has type ${describe(dtype)}; the graph layer takes float32, int64 and bool`);
    if (!(v.data instanceof TYPED[dtype])) throw invalid(`${who}: feed ${JSON.stringify(name)} is ${dtype} but its data is a ${v.data.constructor.name}`);
    const t = tensor(v.data, { dtype, shape: Array.from(v.dims, Number) });
    return [handle(t, who), t];
  }
  throw invalid(`${who}: feed ${JSON.stringify(name)} must be an om.Tensor or { data: TypedArray, dims }, got ${describe(v)}`);
}

/** Runs graphs on the library's kernels; made by InferenceSession.create() or traced.session(). */
export class InferenceSession {
  #s;
  #inputNames;
  #outputNames;
  #inputs = null;

  constructor(token, s) {
    if (token !== TOKEN) throw invalid('InferenceSession: made by InferenceSession.create() or traced.session()');
    this.#s = s;
    const names = (outputs) => Array.from({ length: omw.session_count(s, outputs) }, (_, i) => cString(omw.session_name(s, outputs, i)));
    this.#inputNames = names(0);
    this.#outputNames = names(1);
    leakAlarm?.register(this, undefined, this);
  }

  /**
   * A session on ONNX bytes (a ModelProto, IR 3 to 9, opset 1 to 20), the library format v1 (traced.save())
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
  /** The graph inputs' names, in the order the graph declares them. */
  get inputNames() { this.#use('inputNames'); return this.#inputNames.slice(); }
  /** The graph outputs' names. */
  get outputNames() { this.#use('outputNames'); return this.#outputNames.slice(); }

  /** The graph inputs: { name, dtype, shape }, a named axis as its name ('?' when unnamed). */
  get inputs() {
    const s = this.#use('inputs');
    this.#inputs ??= this.#inputNames.map((name, i) => {
      const [pv, pd] = marshal(['f64', 2 + MAX_DIMS], ['ptr', MAX_DIMS]);
      if (!omw.session_input_info(s, i, pv, pd)) throw lastError('inputs');
      const [dtype, ndim] = readF64(pv, 2);
      const sizes = readF64(pv + 16, ndim);
      const params = readU32(pd, ndim);
      return { name, dtype: dtypeNames[dtype], shape: sizes.map((v, d) => (params[d] ? cString(params[d]) : v)) };
    });
    return this.#inputs.map((v) => ({ ...v, shape: v.shape.slice() }));
  }

  /** The bytes of the buffers of the plan it ran last (0 before the first run). */
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
   * Runs the graph: feeds has one value per input name; returns { outputName: Tensor } (new
   * Tensors). A plan is made for each new set of input shapes and kept.
   * @param {Record<string, Tensor | { data: ArrayBufferView, dims: readonly number[], type?: string }>} feeds
   * @returns {Record<string, Tensor>}
   */
  run(feeds) {
    const who = 'run';
    const s = this.#use(who);
    if (!feeds || typeof feeds !== 'object') throw invalid(`${who}: feeds must be an object of inputs by name, got ${describe(feeds)}`);
    for (const k of Object.keys(feeds)) {
      if (!this.#inputNames.includes(k)) throw invalid(`${who}: no graph input is named ${JSON.stringify(k)} (inputs: ${this.#inputNames.join(', ')})`);
    }
    const made = [];
    try {
      const handles = this.#inputNames.map((name) => {
        if (!(name in feeds)) throw invalid(`${who}: feed ${JSON.stringify(name)} is missing (inputs: ${this.#inputNames.join(', ')})`);
        const [h, t] = feedHandle(name, feeds[name], who);
        if (t) made.push(t);
        return h;
      });
      const nOut = this.#outputNames.length;
      const [pin, pout] = marshal(['ptr', handles], ['ptr', nOut]);
      const n = omw.session_run(s, pin, handles.length, pout, nOut);
      if (n < 0) throw lastError(who);
      const outs = readU32(pout, n);
      const result = {};
      this.#outputNames.forEach((name, j) => { result[name] = wrap(outs[j]); });
      return result;
    } finally {
      for (const t of made) t.dispose();
    }
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
