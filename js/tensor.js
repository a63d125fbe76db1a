// The Tensor class (a handle to a C om_tensor), the plumbing every op goes through (handles,
// apply, PyTorch's weak scalars, options), the creation functions, cat/stack/where and the
// scopes (tidy, keep, noGrad). The ops themselves are rows of js/ops/table.js, which installs
// them as Tensor methods and builds the om.* functions; this module imports no op family, so
// js/ops/*.js import it without a cycle.
import { OmError, invalid } from './errors.js';
import {
  M, omw, requireReady, opId, dtypeCodes, dtypeNames, checkHandle, checkStatus, lastError, marshal,
  readU32, readF64, scopes, collector, collectorPressure, heapAlloc, callOp, applied, scratch,
} from './runtime.js';
import {
  describe, toI32, scalarValue, flattenData, toTypedArray, explicitShape, shapeArg, toI64, toBool,
} from './convert.js';

const TOKEN = Symbol('onemodel.Tensor');
const MAX_INFO = 6 + 16; // [dtype, ndim, requires_grad, is_leaf, numel, version, shape...]

/** omw_info of a live handle. */
function info(h) {
  const [p] = marshal(['f64', MAX_INFO]);
  omw.info(h, p);
  const v = readF64(p, 6);
  return {
    dtype: v[0], ndim: v[1], requiresGrad: v[2] !== 0, isLeaf: v[3] !== 0, numel: v[4], version: v[5],
    shape: v[1] ? readF64(p + 48, v[1]) : [],
  };
}

let handleOf; // (t, who, name) -> handle, checked (set in Tensor's static block)

/** The C handle of a Tensor argument, checked (InvalidArgument / Disposed naming who and name). */
export function handle(t, who, name) {
  return handleOf(t, who, name);
}
let selfOf; // (t, who) -> handle, checked (set in Tensor's static block)

/** The handle of a method's own tensor, checked (Disposed: "who: the tensor was disposed"). */
export function self(t, who) {
  return selfOf(t, who);
}
let dtypeOf; // (t) -> dtype name, unchecked (set in Tensor's static block)
let watch; // (t) -> registers t with the collector (set in Tensor's static block)
let keptOf; // (t) -> true once om.keep(t) took it out of every scope (set in Tensor's static block)
let markKept; // (t) -> marks t kept (set in Tensor's static block)

/**
 * A Tensor for a new C reference of known dtype (code) and shape, tracked by the innermost scope
 * (om.tidy or a Module's forward). Only a tensor outside every scope is watched by the collector
 * (released when the garbage collector takes it): one in a scope is disposed or kept by it (and
 * watched once kept past the outermost), so the eager path's intermediates cost no
 * FinalizationRegistry entry.
 */
function adopt(h, dtype, shape) {
  const t = new Tensor(TOKEN, h, dtype, shape);
  if (scopes.length) scopes[scopes.length - 1].push(t);
  else watch(t);
  return t;
}

/** Wraps a new C reference in a Tensor tracked by the innermost tidy scope. */
export function wrap(h) {
  const p = scratch(8 * MAX_INFO);
  omw.info(h, p);
  const f64 = M.HEAPF64, at = p >>> 3, shape = new Array(f64[at + 1]);
  for (let k = 0; k < shape.length; k++) shape[k] = f64[at + 6 + k];
  return adopt(h, f64[at], shape);
}

/** A new Tensor for a new reference to t's C tensor (the same values, shape and dtype), tracked
 *  by the innermost tidy scope; t is checked (Disposed naming who). */
export function retained(t, who, name) {
  const h = handleOf(t, who, name);
  return adopt(omw.retain(h), dtypeCodes.get(dtypeOf(t)), t.shape);
}

/** wrap(checkHandle(h, who)): a handle C returned, checked, as a new Tensor. */
export function wrapChecked(h, who) {
  return wrap(checkHandle(h, who));
}

/** The dtype code of a dtype name (InvalidArgument naming who and the known names otherwise). */
export function dtypeCode(name, who) {
  const code = dtypeCodes.get(name);
  if (code === undefined) {
    throw invalid(`${who}: unknown dtype ${typeof name === 'string' ? JSON.stringify(name) : describe(name)}; expected one of ${[...dtypeCodes.keys()].map((k) => `'${k}'`).join(', ')}`);
  }
  return code;
}

/** A 0-d C tensor (raw handle, caller releases) holding value in the given dtype. */
export function scalarHandle(value, dtype, who) {
  return checkHandle(omw.full(0, 0, dtype, value), who);
}

/**
 * The dtype code of a number operand beside tensors of dtype `beside` (null: none), as PyTorch's
 * weak scalars: a Python float is float32 (float64 beside float64), an int int64, a bool bool, and the op promotes. JS
 * cannot tell 2 from 2.0, so a number is an int when it is an integer beside an int64 or bool
 * tensor (x + 1 keeps int64 indices int64), else a float; a bigint is an int, a boolean a bool.
 */
function scalarDtype(v, beside) {
  if (typeof v === 'boolean') return dtypeCodes.get('bool');
  if (beside === 'float32' || beside === 'float64') return dtypeCodes.get(beside);
  if (typeof v === 'bigint' || (beside !== null && Number.isInteger(v))) return dtypeCodes.get('int64');
  return dtypeCodes.get('float32');
}

/**
 * Resolves operands that may be numbers: tensors give their handles; numbers (booleans,
 * bigints) become 0-d tensors of scalarDtype beside the first tensor operand, in temps too:
 * the caller releases them (releaseAll).
 */
function operands(who, names, values) {
  let beside = null;
  for (let i = 0; i < values.length; i++) {
    if (!(values[i] instanceof Tensor)) continue;
    handleOf(values[i], who, names[i]); // throws Disposed before anything is made
    beside ??= dtypeOf(values[i]);
  }
  const temps = [];
  const handles = [];
  try {
    for (let i = 0; i < values.length; i++) {
      const v = values[i];
      if (v instanceof Tensor) {
        handles.push(handleOf(v, who, names[i]));
        continue;
      }
      const s = scalarValue(v);
      if (s === undefined) throw invalid(`${who}: ${names[i]} must be a Tensor or a number, got ${describe(v)}`);
      const h = scalarHandle(s, scalarDtype(v, beside), who);
      temps.push(h);
      handles.push(h);
    }
  } catch (e) {
    releaseAll(temps);
    throw e;
  }
  return { handles, temps };
}

function releaseAll(handles) {
  for (const h of handles) omw.release(h);
}

/** omw_apply by op name (int attrs as BigInts, float attrs as numbers): every output as a new Tensor. */
export function applyAll(who, opName, inHandles, iattrs = [], fattrs = [], nOut = 1) {
  const n = callOp(who, opId(opName), inHandles, iattrs, fattrs, nOut);
  const outs = new Array(n);
  for (let j = 0; j < n; j++) outs[j] = adopt(applied.handles[j], applied.dtypes[j], applied.shapes[j]);
  return outs;
}

/**
 * A PyTorch named tuple: the array of tensors, which also reads by names (`x.topk(3).values`,
 * `om.aminmax(x).max`); the names are not enumerable, so code walking the array (tidy, dispose)
 * sees each tensor once.
 */
export function namedTuple(items, names) {
  return Object.defineProperties(items, Object.fromEntries(names.map((n, i) => [n, { value: items[i] }])));
}

/** PyTorch's (values, indices) named tuple of topk, sort, max and min along a dim. */
export const valuesIndices = (pair) => namedTuple(pair, ['values', 'indices']);

/** omw_apply by op name, for an op of one output: it as a new Tensor. */
export function apply1(who, opName, inHandles, iattrs = [], fattrs = []) {
  callOp(who, opId(opName), inHandles, iattrs, fattrs, 1);
  return adopt(applied.handles[0], applied.dtypes[0], applied.shapes[0]);
}

/**
 * An op by name for the op-family modules (js/ops/*.js, js/nn/*.js): handles in, its first
 * output as a Tensor; an op with nOut outputs has the others released (layer_norm's mean and rstd).
 */
export function applyOp(who, opName, inHandles, iattrs = [], fattrs = [], nOut = 1) {
  const n = callOp(who, opId(opName), inHandles, iattrs, fattrs, nOut);
  for (let j = 1; j < n; j++) omw.release(applied.handles[j]);
  return adopt(applied.handles[0], applied.dtypes[0], applied.shapes[0]);
}

/** The function of an op of one tensor, `input` (js/ops/table.js's unary rows, js/ops/act.js). */
export function unaryOp(who, opName) {
  return (input) => apply1(who, opName, [handleOf(input, who, 'input')]);
}

/**
 * The function of a float op of one tensor (exp, sqrt, sigmoid, ...): an int64 or bool input is
 * cast to float32 first, as PyTorch promotes it (traced, the graph has the Cast); a float64 one
 * goes as it is (the op computes it in double or refuses it, never through float32).
 */
export function floatOp(who, opName) {
  return (input) => {
    const h = handleOf(input, who, 'input');
    if (dtypeOf(input) === 'float32' || dtypeOf(input) === 'float64') return apply1(who, opName, [h]);
    const f = checkHandle(omw.cast(h, dtypeCodes.get('float32')), who);
    try {
      return apply1(who, opName, [f]);
    } finally {
      omw.release(f);
    }
  };
}

/**
 * An elementwise op with tensor-or-number operands, promoted as PyTorch's torch.result_type
 * with numbers as weak scalars (js/ops/table.js's binary rows); iattrs are the op's int
 * attributes (div's rounding mode).
 */
export function elementwise(who, opName, names, values, iattrs = []) {
  // the common cases without operands()'s lists: two tensors, a tensor and a number
  if (values.length === 2 && values[0] instanceof Tensor) {
    const h = handleOf(values[0], who, names[0]), b = values[1];
    if (b instanceof Tensor) return apply1(who, opName, [h, handleOf(b, who, names[1])], iattrs);
    if (typeof b === 'number') {
      const s = scalarHandle(b, scalarDtype(b, dtypeOf(values[0])), who);
      try {
        return apply1(who, opName, [h, s], iattrs);
      } finally {
        omw.release(s);
      }
    }
  }
  const { handles, temps } = operands(who, names, values);
  try {
    return apply1(who, opName, handles, iattrs);
  } finally {
    releaseAll(temps);
  }
}

/** Reductions' dim argument: undefined/null (all dims), a number, or an array of numbers. */
export function dimsArg(dim, who) {
  if (dim === undefined || dim === null) return [];
  if (Array.isArray(dim)) return dim.map((d, i) => toI64(d, who, `dim[${i}]`));
  return [toI64(dim, who, 'dim')];
}

/** Whether x is an options object (a plain object, not an array, typed array or Tensor). */
export function isOptions(x) {
  return x !== null && typeof x === 'object' && !Array.isArray(x) && !ArrayBuffer.isView(x) && !(x instanceof Tensor);
}

/**
 * A trailing options object (PyTorch's keyword arguments): undefined or null give {}; anything
 * but a plain object is InvalidArgument; with `allowed`, an unknown key is too.
 */
export function optionsArg(options, who, allowed = null) {
  if (options === undefined || options === null) return {};
  if (!isOptions(options)) throw invalid(`${who}: options must be an object, got ${describe(options)}`);
  for (const k of allowed ? Object.keys(options) : []) {
    if (!allowed.includes(k)) throw invalid(`${who}: unknown option '${k}' (expected ${allowed.join(', ')})`);
  }
  return options;
}

function formatValue(v, dtype) {
  if (dtype === 'bool') return v ? 'true' : 'false';
  if (dtype === 'int64') return String(v);
  if (Number.isInteger(v)) return `${v}.`;
  return String(Number(v.toPrecision(6)));
}

/**
 * A handle to a C tensor. Make tensors with om.tensor(), om.zeros(), ... and free them with
 * dispose() or inside om.tidy(). Methods follow PyTorch's semantics (camelCase names).
 */
/**
 * x.size as PyTorch's method (see Tensor's size): size() the shape, size(dim) one size. Its
 * Symbol.toPrimitive throws, so code written for the old element-count getter fails loudly.
 */
function sizeMethod(t) {
  const size = (dim) => {
    const shape = t.shape;
    if (dim === undefined) return shape;
    if (!Number.isInteger(dim)) throw invalid(`size: dim must be an integer, got ${describe(dim)}`);
    const n = shape.length;
    if (dim < -n || dim >= n) {
      throw new OmError('IndexOutOfRange', n === 0 ? `size: dim ${dim} is out of range for a 0-d tensor (it has no dims)`
        : `size: dim ${dim} is out of range for ${n} dims (valid: ${-n} to ${n - 1})`);
    }
    return shape[dim < 0 ? dim + n : dim];
  };
  size[Symbol.toPrimitive] = () => {
    throw invalid('size: x.size is a method, as PyTorch\'s: x.size() is the shape, x.size(dim) one size, x.numel() the number of elements');
  };
  return size;
}

export class Tensor {
  #h;
  #dtype;
  #shape;
  #grad = null; // the cached wrapper of the C grad (owned by this tensor)
  #watched = false; // registered with the collector
  #pressure = null; // an ArrayBuffer sized to the C memory this tensor came with (runtime.js collectorPressure)
  #kept = false; // om.keep(): no scope disposes it

  static {
    dtypeOf = (t) => t.#dtype;
    watch = (t) => {
      if (!collector || t.#watched || !t.#h) return;
      collector.register(t, t.#h, t);
      t.#watched = true;
      t.#pressure = collectorPressure(t.#h);
    };
    selfOf = (t, who) => t.#use(who);
    keptOf = (t) => t.#kept;
    markKept = (t) => { t.#kept = true; };
    handleOf = (t, who, name) => {
      if (!(t instanceof Tensor)) throw invalid(`${who}: ${name} must be a Tensor, got ${describe(t)}`);
      if (!t.#h) throw new OmError('Disposed', `${who}: ${name} was disposed`);
      return t.#h;
    };
  }

  constructor(token, h, dtype, shape) {
    if (token !== TOKEN) {
      throw invalid('Tensor: do not construct tensors directly; use om.tensor(), om.zeros(), ...');
    }
    this.#h = h;
    this.#dtype = dtypeNames[dtype];
    this.#shape = shape;
  }

  /** The handle, checked: throws Disposed naming the method when disposed. */
  #use(who) {
    if (!this.#h) throw new OmError('Disposed', `${who}: the tensor was disposed`);
    return this.#h;
  }

  // ---- metadata ----
  get shape() { this.#use('shape'); return this.#shape.slice(); }
  get dtype() { this.#use('dtype'); return this.#dtype; }
  get ndim() { this.#use('ndim'); return this.#shape.length; }
  /** PyTorch's x.T: the dims reversed (a matrix's transpose), a view. */
  get T() { this.#use('T'); return this.permute([...this.#shape.keys()].reverse()); }
  /** PyTorch's x.mT: the last two dims swapped (a batch of matrices transposed), a view; fewer than 2 dims is ShapeMismatch. */
  get mT() {
    this.#use('mT');
    if (this.#shape.length < 2) throw new OmError('ShapeMismatch', `mT: takes a matrix or a batch of them, got ${this.#shape.length} dims`);
    return this.transpose(-2, -1);
  }
  /** PyTorch's x.data: the values outside autograd, sharing storage (detach()), so x.data.normal_(...) writes a parameter. */
  get data() { this.#use('data'); return this.detach(); }
  /**
   * PyTorch's x.size(): the shape (a fresh array); x.size(dim): the size of dim (negative counts
   * from the end), a plain number, read while tracing as x.shape[dim] is. The getter hands out the
   * method with a guard: `size` was once the element count, and arithmetic on the method
   * (`x.size * 2`, `${x.size}`) throws, naming numel(), instead of giving NaN.
   */
  get size() { this.#use('size'); return sizeMethod(this); }
  /** PyTorch's x.dim() and x.numel(): the number of dims and of elements. */
  dim() { return this.ndim; }
  numel() { this.#use('numel'); return this.#shape.reduce((a, b) => a * b, 1); }
  get isDisposed() { return !this.#h; }
  get isLeaf() { return info(this.#use('isLeaf')).isLeaf; }
  get version() { return info(this.#use('version')).version; }

  get requiresGrad() { return info(this.#use('requiresGrad')).requiresGrad; }
  set requiresGrad(flag) {
    const h = this.#use('requiresGrad');
    if (typeof flag !== 'boolean') throw invalid(`requiresGrad: must be set to a boolean, got ${describe(flag)}`);
    checkStatus(omw.set_requires_grad(h, flag ? 1 : 0), 'requiresGrad');
  }

  /**
   * The accumulated gradient, or null. The returned tensor is owned by this one: it stays the
   * same object while C keeps the same gradient tensor, is replaced (the old one disposed) when
   * C's gradient changes, and is disposed by zeroGrad() and dispose(). Do not dispose it.
   */
  get grad() {
    const h = this.#use('grad');
    const g = omw.grad(h) >>> 0;
    if (!g) {
      this.#dropGrad();
      return null;
    }
    if (this.#grad && !this.#grad.isDisposed && this.#grad.#h === g) {
      omw.release(g); // the same C tensor: keep the cached wrapper's reference
      return this.#grad;
    }
    this.#dropGrad();
    const i = info(g);
    this.#grad = new Tensor(TOKEN, g, i.dtype, i.shape); // not tracked by scopes: owned here
    watch(this.#grad); // collected with this tensor when it is
    return this.#grad;
  }

  #dropGrad() {
    if (this.#grad) {
      this.#grad.dispose();
      this.#grad = null;
    }
  }

  // ---- reading ----
  /** A fresh copy of the elements, row-major: Float32Array, BigInt64Array, Uint8Array (bool) or Float64Array. */
  toArray() {
    const h = this.#use('toArray');
    const n = this.#shape.reduce((a, b) => a * b, 1);
    const T = { float32: Float32Array, int64: BigInt64Array, bool: Uint8Array, float64: Float64Array }[this.#dtype];
    const p = heapAlloc(n * T.BYTES_PER_ELEMENT, 'toArray');
    try {
      checkStatus(omw.read(h, p), 'toArray');
      return new T(M.HEAPU8.buffer, p, n).slice();
    } finally {
      M._free(p);
    }
  }

  /**
   * PyTorch's x.tolist(): the values as nested arrays of the shape (a 0-d tensor: its value), numbers
   * for float32, float64 and int64 (an int64 past 2^53, which a number cannot hold exactly, is
   * InvalidArgument: read it with toArray()), booleans for bool.
   */
  tolist() {
    this.#use('tolist');
    const flat = this.toArray(), shape = this.#shape;
    const value = this.#dtype === 'bool' ? (v) => v !== 0 : this.#dtype === 'int64' ? (v) => {
      if (v > 9007199254740991n || v < -9007199254740991n) throw invalid(`tolist: ${v} is not exact as a JS number (read it with toArray())`);
      return Number(v);
    } : (v) => v;
    let k = 0;
    const nest = (d) => (d === shape.length ? value(flat[k++]) : Array.from({ length: shape[d] }, () => nest(d + 1)));
    return nest(0);
  }

  /** The value of a one-element tensor as a number (int64 and bool too: bool gives 0 or 1). */
  item() {
    const h = this.#use('item');
    const [p] = marshal(['f64', 1]);
    checkStatus(omw.item(h, p), 'item');
    return readF64(p, 1)[0];
  }

  /** "tensor([[1., 2.], [3., 4.]], dtype=float32)" (values elided beyond 1000 elements). */
  toString() {
    if (!this.#h) return 'tensor(<disposed>)';
    const shape = this.#shape;
    const n = shape.reduce((a, b) => a * b, 1);
    if (n > 1000) return `tensor(<${n} values>, shape=[${shape.join(', ')}], dtype=${this.#dtype})`;
    const flat = this.toArray();
    let k = 0;
    const fmt = (d) => {
      if (d === shape.length) return formatValue(flat[k++], this.#dtype);
      const parts = [];
      for (let i = 0; i < shape[d]; i++) parts.push(fmt(d + 1));
      return `[${parts.join(', ')}]`;
    };
    return `tensor(${fmt(0)}, dtype=${this.#dtype})`;
  }

  [Symbol.for('nodejs.util.inspect.custom')]() {
    return this.toString();
  }

  // ---- autograd ----
  /**
   * Back-propagates into the leaves' grad, then frees the graph it ran (its saved values), as
   * PyTorch does; { retainGraph: true } keeps it for another backward. backward(options) omits grad.
   */
  backward(grad, options) {
    const h = this.#use('backward');
    if (isOptions(grad)) [grad, options] = [undefined, grad];
    const { retainGraph = false } = optionsArg(options, 'backward', ['retainGraph']);
    if (typeof retainGraph !== 'boolean') throw invalid(`backward: retainGraph must be a boolean, got ${describe(retainGraph)}`);
    const g = grad === undefined || grad === null ? 0 : handleOf(grad, 'backward', 'grad');
    checkStatus(omw.backward(h, g), 'backward');
    if (!retainGraph) checkStatus(omw.free_graph(h), 'backward');
  }

  zeroGrad() {
    const h = this.#use('zeroGrad');
    this.#dropGrad();
    omw.zero_grad(h);
  }

  // ---- in place ----
  fill_(value) {
    const h = this.#use('fill_');
    const v = scalarValue(value);
    if (v === undefined) throw invalid(`fill_: value must be a number, got ${describe(value)}`);
    checkStatus(omw.fill(h, v), 'fill_');
    return this;
  }

  copy_(src) {
    const h = this.#use('copy_');
    if (!(src instanceof Tensor)) {
      if (scalarValue(src) === undefined) throw invalid(`copy_: src must be a Tensor or a number, got ${describe(src)}`);
      return this.fill_(src);
    }
    checkStatus(omw.copy_from(h, handleOf(src, 'copy_', 'src')), 'copy_');
    return this;
  }

  zero_() { return this.fill_(0); }

  set_(index, value) {
    const h = this.#use('set_');
    if (!Array.isArray(index)) throw invalid(`set_: index must be an array of ${this.#shape.length} integers, got ${describe(index)}`);
    if (index.length !== this.#shape.length) {
      throw invalid(`set_: index has ${index.length} entries but the tensor has ${this.#shape.length} dims`);
    }
    const idx = index.map((v, i) => toI64(v, 'set_', `index[${i}]`));
    const v = scalarValue(value);
    if (v === undefined) throw invalid(`set_: value must be a number, got ${describe(value)}`);
    const [pi] = marshal(['i64', idx]);
    checkStatus(omw.set(h, pi, v), 'set_');
    return this;
  }

  // ---- lifetime ----
  /** Frees the C tensor (and its cached grad). Idempotent; later use throws Disposed. */
  dispose() {
    if (!this.#h) return;
    this.#dropGrad();
    omw.release(this.#h);
    this.#h = 0;
    this.#pressure = null;
    if (this.#watched) collector.unregister(this);
  }
}

// ---- creation -------------------------------------------------------------------------------

/** om.tensor(data, { dtype, shape }). */
export function tensor(data, options = {}) {
  requireReady('tensor');
  creationOptions(options, 'tensor', ['dtype', 'shape', 'requiresGrad']);
  if (data instanceof Tensor) throw invalid('tensor: data is already a Tensor; use clone() or to()');
  const { shape: inferred, leaves, kind } = flattenData(data, 'tensor');
  const dtype = options.dtype === undefined ? kind : options.dtype;
  const code = dtypeCode(dtype, 'tensor');
  let shape = inferred;
  if (options.shape !== undefined) {
    shape = explicitShape(options.shape, 'tensor');
    const need = shape.reduce((a, b) => a * b, 1);
    if (need !== leaves.length) {
      throw invalid(`tensor: data has ${leaves.length} elements but shape [${shape.join(', ')}] needs ${need}`);
    }
  }
  const typed = toTypedArray(leaves, dtype, 'tensor');
  const bytes = typed.byteLength;
  const p = heapAlloc(bytes, 'tensor');
  try {
    new Uint8Array(M.HEAPU8.buffer, p, bytes).set(new Uint8Array(typed.buffer, typed.byteOffset, bytes));
    const [ps] = marshal(['i64', shape.map(BigInt)]);
    return created(wrapChecked(omw.from_data(p, ps, shape.length, code), 'tensor'), options, 'tensor');
  } finally {
    M._free(p);
  }
}

/**
 * A creation function's options, checked: an object whose keys are among `names` (a misspelt
 * { dtpye } would otherwise give float32 silently; PyTorch raises on an unknown keyword).
 */
function creationOptions(options, who, names) {
  if (options === undefined) return {};
  if (!isOptions(options)) throw invalid(`${who}: options must be an object, got ${describe(options)}`);
  const unknown = Object.keys(options).find((k) => !names.includes(k));
  if (unknown !== undefined) throw invalid(`${who}: unknown option '${unknown}' (${names.join(', ')})`);
  return options;
}

/** t with requiresGrad set as the options ask (torch.tensor(..., requires_grad=True)); t is disposed if that fails. */
function created(t, opts, who) {
  if (opts.requiresGrad === undefined) return t;
  try {
    if (toBool(opts.requiresGrad, who, 'requiresGrad')) t.requiresGrad = true;
  } catch (e) {
    t.dispose();
    throw e;
  }
  return t;
}

function fullOf(who, shape, value, options) {
  requireReady(who);
  const opts = creationOptions(options, who, ['dtype', 'requiresGrad']);
  const s = shapeArg(shape, who);
  const v = scalarValue(value);
  if (v === undefined) throw invalid(`${who}: value must be a number, bigint or boolean, got ${describe(value)}`);
  const inferred = typeof value === 'boolean' ? 'bool' : typeof value === 'bigint' ? 'int64' : 'float32';
  const code = dtypeCode(opts.dtype ?? inferred, who);
  const [ps] = marshal(['i64', s]);
  return created(wrapChecked(omw.full(ps, s.length, code, v), who), opts, who);
}

export function zeros(shape, options) { return fullOf('zeros', shape, 0, options); }
export function ones(shape, options) { return fullOf('ones', shape, 1, options); }
export function full(shape, value, options) { return fullOf('full', shape, value, options); }
/** torch.empty: zeros here (memory is always initialised, so no value is left unspecified). */
export function empty(shape, options) { return fullOf('empty', shape, 0, options); }

/**
 * arange(end), arange(start, end), arange(start, end, step), each with an optional options object.
 * int64 when every argument is an integer (a bigint or an integer-valued number), as torch.arange of
 * Python ints; float32 when one is fractional or { dtype } says so. (JS has no 5.0 apart from 5, so
 * torch.arange(5.0) is arange(5, { dtype: 'float32' }).)
 */
export function arange(...args) {
  requireReady('arange');
  const opts = args.length && isOptions(args[args.length - 1]) ? creationOptions(args.pop(), 'arange', ['dtype', 'requiresGrad']) : {};
  if (args.length < 1 || args.length > 3) throw invalid(`arange: expected 1 to 3 numbers, got ${args.length}`);
  for (const [i, a] of args.entries()) {
    if (typeof a !== 'number' && typeof a !== 'bigint') throw invalid(`arange: argument ${i} must be a number, got ${describe(a)}`);
  }
  const integral = args.every((a) => typeof a === 'bigint' || Number.isInteger(a));
  const nums = args.map(Number);
  const [start, end, step] = nums.length === 1 ? [0, nums[0], 1] : [nums[0], nums[1], nums[2] ?? 1];
  const code = dtypeCode(opts.dtype ?? (integral ? 'int64' : 'float32'), 'arange');
  return created(wrapChecked(omw.arange(start, end, step, code), 'arange'), opts, 'arange');
}

function seedHalves(seed, who) {
  let s;
  if (typeof seed === 'bigint') s = seed;
  else if (typeof seed === 'number' && Number.isInteger(seed)) s = BigInt(seed);
  else throw invalid(`${who}: seed must be an integer, got ${describe(seed)}`);
  s = BigInt.asUintN(64, s);
  return [Number(s & 0xffffffffn), Number(s >> 32n)];
}

function random(who, normal, shape, options) {
  requireReady(who);
  const opts = creationOptions(options, who, ['dtype', 'seed', 'requiresGrad']);
  const s = shapeArg(shape, who);
  if (opts.dtype !== undefined && opts.dtype !== 'float32') {
    throw invalid(`${who}: dtype must be 'float32', got ${describe(opts.dtype)}`);
  }
  const hasSeed = opts.seed !== undefined && opts.seed !== null;
  const [lo, hi] = hasSeed ? seedHalves(opts.seed, who) : [0, 0];
  const [ps] = marshal(['i64', s]);
  return created(wrapChecked(omw.random(ps, s.length, lo, hi, hasSeed ? 1 : 0, normal ? 1 : 0), who), opts, who);
}

export function rand(shape, options) { return random('rand', false, shape, options); }
export function randn(shape, options) { return random('randn', true, shape, options); }

/**
 * The *Like functions' arguments: input's shape, and the options with input's dtype unless they
 * give one (torch.zeros_like(input, dtype=...)).
 */
function likeOf(who, input, options) {
  requireReady(who);
  handleOf(input, who, 'input');
  const opts = creationOptions(options, who, ['dtype', 'seed', 'requiresGrad']); // seed: randLike's
  return [input.shape, { ...opts, dtype: opts.dtype ?? input.dtype }];
}

/** torch.zeros_like: zeros of input's shape and dtype (options.dtype another). */
export function zerosLike(input, options) {
  const [shape, opts] = likeOf('zerosLike', input, options);
  return fullOf('zerosLike', shape, 0, opts);
}

/** torch.ones_like. */
export function onesLike(input, options) {
  const [shape, opts] = likeOf('onesLike', input, options);
  return fullOf('onesLike', shape, 1, opts);
}

/** torch.full_like(input, fillValue): fillValue in input's dtype (or options.dtype). */
export function fullLike(input, fillValue, options) {
  const [shape, opts] = likeOf('fullLike', input, options);
  return fullOf('fullLike', shape, fillValue, opts);
}

/** torch.empty_like: here zeros (memory is always initialised). */
export function emptyLike(input, options) {
  const [shape, opts] = likeOf('emptyLike', input, options);
  return fullOf('emptyLike', shape, 0, opts);
}

/** torch.rand_like: uniform in [0, 1) at input's shape; float32 only (options.seed as rand). */
export function randLike(input, options) {
  const [shape, opts] = likeOf('randLike', input, options);
  return random('randLike', false, shape, opts);
}

/** torch.randn_like: standard normal at input's shape; float32 only (options.seed as randn). */
export function randnLike(input, options) {
  const [shape, opts] = likeOf('randnLike', input, options);
  return random('randnLike', true, shape, opts);
}

export function manualSeed(seed) {
  requireReady('manualSeed');
  const [lo, hi] = seedHalves(seed, 'manualSeed');
  omw.manual_seed(lo, hi);
}

// ---- functions of several tensors ------------------------------------------------------------

function tensorList(list, who) {
  if (!Array.isArray(list)) throw invalid(`${who}: expected an array of tensors, got ${describe(list)}`);
  return list.map((t, i) => handleOf(t, who, `tensors[${i}]`));
}

/** Calls omw_cat or omw_stack (`who`) on a list of tensors along dim. */
function joinAlong(who, tensors, dim) {
  requireReady(who);
  const hs = tensorList(tensors, who);
  const d = toI32(dim, who, 'dim');
  const [p] = marshal(['ptr', hs]);
  return wrapChecked(omw[who](p, hs.length, d), who);
}

export function cat(tensors, dim = 0) {
  return joinAlong('cat', tensors, dim);
}

export function stack(tensors, dim = 0) {
  return joinAlong('stack', tensors, dim);
}

/** torch.meshgrid: the grid's coordinates, one view per input; options.indexing 'ij' (default) or 'xy'. */
export function meshgrid(tensors, options) {
  requireReady('meshgrid');
  const hs = tensorList(tensors, 'meshgrid');
  const indexing = options?.indexing ?? 'ij';
  if (indexing !== 'ij' && indexing !== 'xy') throw invalid(`meshgrid: indexing must be 'ij' or 'xy', got ${describe(indexing)}`);
  const [p, pout] = marshal(['ptr', hs], ['ptr', hs.length]);
  const n = omw.meshgrid(p, hs.length, indexing === 'xy' ? 1 : 0, pout);
  if (n < 0) throw lastError('meshgrid');
  return readU32(pout, n).map(wrap);
}

export function where(condition, input, other) {
  requireReady('where');
  const hc = handleOf(condition, 'where', 'condition');
  const { handles, temps } = operands('where', ['input', 'other'], [input, other]);
  try {
    return apply1('where', 'where', [hc, ...handles]);
  } finally {
    releaseAll(temps);
  }
}

// ---- scopes ---------------------------------------------------------------------------------

/**
 * Runs fn with recording off. While a trace records this throws TraceError NoGradInTrace (C
 * refuses to turn grad off, ends the trace and reports it: results computed inside would be
 * frozen into the graph as constants).
 */
export function noGrad(fn) {
  requireReady('noGrad');
  if (typeof fn !== 'function') throw invalid(`noGrad: expected a function, got ${describe(fn)}`);
  const prev = omw.set_grad_enabled(0);
  if (prev < 0) throw lastError('noGrad');
  let result;
  try {
    result = fn();
  } catch (e) {
    if (omw.set_grad_enabled(prev) < 0) omw.clear_error(); // fn's exception comes first
    throw e;
  }
  // Restoring "off" fails only when fn began a trace inside the scope (NoGradInTrace).
  if (omw.set_grad_enabled(prev) < 0) throw lastError('noGrad');
  return result;
}

/** Collects the tensors in a tidy result: a Tensor, or arrays / plain objects holding them. */
function collect(x, out, seen = new Set()) {
  if (x instanceof Tensor) { out.add(x); return; }
  if (x === null || typeof x !== 'object' || seen.has(x)) return;
  seen.add(x);
  if (Array.isArray(x)) { for (const v of x) collect(v, out, seen); return; }
  const proto = Object.getPrototypeOf(x);
  if (proto === Object.prototype || proto === null) for (const v of Object.values(x)) collect(v, out, seen);
}

/**
 * Runs fn in a new scope (om.tidy, a Module's forward call). When it ends, the tensors made
 * inside are disposed except those in keep(result, made) (a Tensor or a Set; asked only when
 * something was made) and those om.keep() took: kept ones move to the enclosing scope, or, past
 * the outermost, to the collector. When fn throws, everything it made is disposed.
 */
export function inScope(fn, keep) {
  const scope = [];
  scopes.push(scope);
  let result;
  let kept = null; // the one Tensor kept, or a Set of them (null: none)
  try {
    result = fn();
    if (scope.length) kept = keep(result, scope);
  } finally {
    scopes.pop();
    const parent = scopes.length ? scopes[scopes.length - 1] : null;
    for (const t of scope) {
      if (keptOf(t)) watch(t); // om.keep: out of every scope
      else if (!(kept === t || (kept instanceof Set && kept.has(t)))) t.dispose();
      else if (parent) parent.push(t);
      else watch(t); // leaves the last scope: from now on dispose() or the collector frees it
    }
  }
  return result;
}

export function tidy(fn) {
  requireReady('tidy');
  if (typeof fn !== 'function') throw invalid(`tidy: expected a function, got ${describe(fn)}`);
  return inScope(() => {
    const result = fn();
    if (!(result instanceof Tensor) && result && typeof result.then === 'function') {
      throw invalid('tidy: the function returned a Promise; tidy only scopes synchronous code');
    }
    return result;
  }, (result) => {
    if (result instanceof Tensor) return result; // the common case, without a Set
    const kept = new Set();
    collect(result, kept);
    return kept;
  });
}

/**
 * Takes t out of every scope: no om.tidy or forward call that made it disposes it; from now on
 * dispose() or the collector frees it (tf.keep's role). Returns t.
 */
export function keep(t) {
  handle(t, 'keep', 'tensor');
  markKept(t);
  return t;
}

/** Disposes a Tensor, or every Tensor in an array / plain object (nested). */
export function dispose(x) {
  const all = new Set();
  collect(x, all);
  for (const t of all) t.dispose();
}
