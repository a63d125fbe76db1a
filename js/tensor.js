// The Tensor class (a handle to a C om_tensor) and every function that makes or combines
// tensors. Each method checks its JS arguments, calls one omw_* function (src/onemodel.h has
// the semantics), turns a failure into an OmError and wraps the new reference it returns.
import { OmError, invalid } from './errors.js';
import {
  M, requireReady, opId, dtypeCodes, dtypeNames, checkHandle, checkStatus, lastError, marshal,
  readU32, readF64, scopes, collector, heapAlloc, callOp, applied, scratch, writeI64,
} from './runtime.js';
import {
  describe, toI64, toI32, toBool, intList, shapeArg, scalarValue, flattenData, toTypedArray,
  explicitShape,
} from './convert.js';
import * as indexing from './ops/index.js';
import * as act from './ops/act.js';
import * as math from './ops/math.js';
import * as sorting from './ops/sort.js';

const TOKEN = Symbol('onemodel.Tensor');
const MAX_INFO = 6 + 16; // [dtype, ndim, requires_grad, is_leaf, numel, version, shape...]

/** omw_info of a live handle. */
function info(h) {
  const [p] = marshal(['f64', MAX_INFO]);
  M._omw_info(h, p);
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
let dtypeOf; // (t) -> dtype name, unchecked (set in Tensor's static block)
let ndimOf; // (t) -> number of dims, unchecked (set in Tensor's static block)
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
  M._omw_info(h, p);
  const f64 = M.HEAPF64, at = p >>> 3, shape = new Array(f64[at + 1]);
  for (let k = 0; k < shape.length; k++) shape[k] = f64[at + 6 + k];
  return adopt(h, f64[at], shape);
}

/** A new Tensor for a new reference to t's C tensor (the same values, shape and dtype), tracked
 *  by the innermost tidy scope; t is checked (Disposed naming who). */
export function retained(t, who, name) {
  const h = handleOf(t, who, name);
  return adopt(M._omw_retain(h), dtypeCodes.get(dtypeOf(t)), t.shape);
}

function wrapChecked(h, who) {
  return wrap(checkHandle(h, who));
}

function dtypeCode(name, who) {
  const code = dtypeCodes.get(name);
  if (code === undefined) {
    throw invalid(`${who}: unknown dtype ${typeof name === 'string' ? JSON.stringify(name) : describe(name)}; expected one of ${[...dtypeCodes.keys()].map((k) => `'${k}'`).join(', ')}`);
  }
  return code;
}

/** A 0-d C tensor (raw handle, caller releases) holding value in the given dtype. */
function scalarHandle(value, dtype, who) {
  return checkHandle(M._omw_full(0, 0, dtype, value), who);
}

/**
 * The dtype code of a number operand beside tensors of dtype `beside` (null: none), as PyTorch's
 * weak scalars: a Python float is float32, an int int64, a bool bool, and the op promotes. JS
 * cannot tell 2 from 2.0, so a number is an int when it is an integer beside an int64 or bool
 * tensor (x + 1 keeps int64 indices int64), else a float; a bigint is an int, a boolean a bool.
 */
function scalarDtype(v, beside) {
  if (typeof v === 'boolean') return dtypeCodes.get('bool');
  if (beside === 'float32') return dtypeCodes.get('float32');
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
  for (const h of handles) M._omw_release(h);
}

/** omw_apply by op name (int attrs as BigInts, float attrs as numbers): every output as a new Tensor. */
export function applyAll(who, opName, inHandles, iattrs = [], fattrs = [], nOut = 1) {
  const n = callOp(who, opId(opName), inHandles, iattrs, fattrs, nOut);
  const outs = new Array(n);
  for (let j = 0; j < n; j++) outs[j] = adopt(applied.handles[j], applied.dtypes[j], applied.shapes[j]);
  return outs;
}

/** omw_apply by op name, for an op of one output: it as a new Tensor. */
function apply1(who, opName, inHandles, iattrs = [], fattrs = []) {
  callOp(who, opId(opName), inHandles, iattrs, fattrs, 1);
  return adopt(applied.handles[0], applied.dtypes[0], applied.shapes[0]);
}

/**
 * An op by name for the op-family modules (js/ops/*.js, js/nn/*.js): handles in, its first
 * output as a Tensor; an op with nOut outputs has the others released (layer_norm's mean and rstd).
 */
export function applyOp(who, opName, inHandles, iattrs = [], fattrs = [], nOut = 1) {
  const n = callOp(who, opId(opName), inHandles, iattrs, fattrs, nOut);
  for (let j = 1; j < n; j++) M._omw_release(applied.handles[j]);
  return adopt(applied.handles[0], applied.dtypes[0], applied.shapes[0]);
}

/** An elementwise op with tensor-or-number operands (for js/ops/math.js too). */
export function elementwise(who, opName, names, values) {
  // the common cases without operands()'s lists: two tensors, a tensor and a number
  if (values.length === 2 && values[0] instanceof Tensor) {
    const h = handleOf(values[0], who, names[0]), b = values[1];
    if (b instanceof Tensor) return apply1(who, opName, [h, handleOf(b, who, names[1])]);
    if (typeof b === 'number') {
      const s = scalarHandle(b, scalarDtype(b, dtypeOf(values[0])), who);
      try {
        return apply1(who, opName, [h, s]);
      } finally {
        M._omw_release(s);
      }
    }
  }
  const { handles, temps } = operands(who, names, values);
  try {
    return apply1(who, opName, handles);
  } finally {
    releaseAll(temps);
  }
}

/** Reductions' dim argument: undefined/null (all dims), a number, or an array of numbers. */
function dimsArg(dim, who) {
  if (dim === undefined || dim === null) return [];
  if (Array.isArray(dim)) return dim.map((d, i) => toI64(d, who, `dim[${i}]`));
  return [toI64(dim, who, 'dim')];
}

function isOptions(x) {
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

/** An integer count argument (number or bigint) as a number; C checks its range. */
function count(x, who, what) {
  const v = typeof x === 'bigint' ? Number(x) : x;
  if (typeof v !== 'number' || !Number.isInteger(v)) throw invalid(`${who}: ${what} must be an integer, got ${describe(x)}`);
  return v;
}

/** Wraps a possibly negative dim for a tensor of ndim dims (IndexOutOfRange like C otherwise). */
function wrapDim(dim, ndim, who) {
  const n = Math.max(ndim, 1);
  if (dim < -n || dim >= n) {
    throw new OmError('IndexOutOfRange', `${who}: dim ${dim} is out of range for a tensor of ${ndim} dims`);
  }
  return dim < 0 ? dim + n : dim;
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
export class Tensor {
  #h;
  #dtype;
  #shape;
  #grad = null; // the cached wrapper of the C grad (owned by this tensor)
  #watched = false; // registered with the collector
  #kept = false; // om.keep(): no scope disposes it

  static {
    dtypeOf = (t) => t.#dtype;
    ndimOf = (t) => t.#shape.length;
    watch = (t) => {
      if (!collector || t.#watched || !t.#h) return;
      collector.register(t, t.#h, t);
      t.#watched = true;
    };
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
  get size() { this.#use('size'); return this.#shape.reduce((a, b) => a * b, 1); }
  get isDisposed() { return !this.#h; }
  get isLeaf() { return info(this.#use('isLeaf')).isLeaf; }
  get version() { return info(this.#use('version')).version; }

  get requiresGrad() { return info(this.#use('requiresGrad')).requiresGrad; }
  set requiresGrad(flag) {
    const h = this.#use('requiresGrad');
    if (typeof flag !== 'boolean') throw invalid(`requiresGrad: must be set to a boolean, got ${describe(flag)}`);
    checkStatus(M._omw_set_requires_grad(h, flag ? 1 : 0), 'requiresGrad');
  }

  /**
   * The accumulated gradient, or null. The returned tensor is owned by this one: it stays the
   * same object while C keeps the same gradient tensor, is replaced (the old one disposed) when
   * C's gradient changes, and is disposed by zeroGrad() and dispose(). Do not dispose it.
   */
  get grad() {
    const h = this.#use('grad');
    const g = M._omw_grad(h) >>> 0;
    if (!g) {
      this.#dropGrad();
      return null;
    }
    if (this.#grad && !this.#grad.isDisposed && this.#grad.#h === g) {
      M._omw_release(g); // the same C tensor: keep the cached wrapper's reference
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
  /** A fresh copy of the elements, row-major: Float32Array, BigInt64Array or Uint8Array (bool). */
  toArray() {
    const h = this.#use('toArray');
    const n = this.#shape.reduce((a, b) => a * b, 1);
    const T = this.#dtype === 'float32' ? Float32Array : this.#dtype === 'int64' ? BigInt64Array : Uint8Array;
    const p = heapAlloc(n * T.BYTES_PER_ELEMENT, 'toArray');
    try {
      checkStatus(M._omw_read(h, p), 'toArray');
      return new T(M.HEAPU8.buffer, p, n).slice();
    } finally {
      M._free(p);
    }
  }

  /** The value of a one-element tensor as a number (int64 and bool too: bool gives 0 or 1). */
  item() {
    const h = this.#use('item');
    const [p] = marshal(['f64', 1]);
    checkStatus(M._omw_item(h, p), 'item');
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

  // ---- elementwise ----
  add(other) { this.#use('add'); return elementwise('add', 'add', ['self', 'other'], [this, other]); }
  sub(other) { this.#use('sub'); return elementwise('sub', 'sub', ['self', 'other'], [this, other]); }
  mul(other) { this.#use('mul'); return elementwise('mul', 'mul', ['self', 'other'], [this, other]); }
  div(other) { this.#use('div'); return elementwise('div', 'div', ['self', 'other'], [this, other]); }
  pow(exponent) { this.#use('pow'); return elementwise('pow', 'pow', ['self', 'exponent'], [this, exponent]); }
  eq(other) { this.#use('eq'); return elementwise('eq', 'eq', ['self', 'other'], [this, other]); }
  ne(other) { this.#use('ne'); return elementwise('ne', 'ne', ['self', 'other'], [this, other]); }
  lt(other) { this.#use('lt'); return elementwise('lt', 'lt', ['self', 'other'], [this, other]); }
  le(other) { this.#use('le'); return elementwise('le', 'le', ['self', 'other'], [this, other]); }
  gt(other) { this.#use('gt'); return elementwise('gt', 'gt', ['self', 'other'], [this, other]); }
  ge(other) { this.#use('ge'); return elementwise('ge', 'ge', ['self', 'other'], [this, other]); }

  // trigonometric, hyperbolic, logical and bitwise ops, minimum, maximum, fmod, remainder (js/ops/math.js)
  sin() { this.#use('sin'); return math.sin(this); }
  cos() { this.#use('cos'); return math.cos(this); }
  tan() { this.#use('tan'); return math.tan(this); }
  asin() { this.#use('asin'); return math.asin(this); }
  acos() { this.#use('acos'); return math.acos(this); }
  atan() { this.#use('atan'); return math.atan(this); }
  sinh() { this.#use('sinh'); return math.sinh(this); }
  cosh() { this.#use('cosh'); return math.cosh(this); }
  asinh() { this.#use('asinh'); return math.asinh(this); }
  acosh() { this.#use('acosh'); return math.acosh(this); }
  atanh() { this.#use('atanh'); return math.atanh(this); }
  atan2(other) { this.#use('atan2'); return math.atan2(this, other); }
  minimum(other) { this.#use('minimum'); return math.minimum(this, other); }
  maximum(other) { this.#use('maximum'); return math.maximum(this, other); }
  fmod(other) { this.#use('fmod'); return math.fmod(this, other); }
  remainder(other) { this.#use('remainder'); return math.remainder(this, other); }
  logicalAnd(other) { this.#use('logicalAnd'); return math.logicalAnd(this, other); }
  logicalOr(other) { this.#use('logicalOr'); return math.logicalOr(this, other); }
  logicalXor(other) { this.#use('logicalXor'); return math.logicalXor(this, other); }
  /** torch.logical_not (`~mask` on a bool mask): this == 0, as bool (NaN is not zero). */
  logicalNot() { this.#use('logicalNot'); return math.logicalNot(this); }
  bitwiseAnd(other) { this.#use('bitwiseAnd'); return math.bitwiseAnd(this, other); }
  bitwiseOr(other) { this.#use('bitwiseOr'); return math.bitwiseOr(this, other); }
  bitwiseXor(other) { this.#use('bitwiseXor'); return math.bitwiseXor(this, other); }
  bitwiseNot() { this.#use('bitwiseNot'); return math.bitwiseNot(this); }
  neg() { return apply1('neg', 'neg', [this.#use('neg')]); }
  abs() { return apply1('abs', 'abs', [this.#use('abs')]); }
  sign() { return apply1('sign', 'sign', [this.#use('sign')]); }
  exp() { return apply1('exp', 'exp', [this.#use('exp')]); }
  log() { return apply1('log', 'log', [this.#use('log')]); }
  sqrt() { return apply1('sqrt', 'sqrt', [this.#use('sqrt')]); }
  rsqrt() { return apply1('rsqrt', 'rsqrt', [this.#use('rsqrt')]); }
  relu() { return apply1('relu', 'relu', [this.#use('relu')]); }
  sigmoid() { return apply1('sigmoid', 'sigmoid', [this.#use('sigmoid')]); }
  tanh() { return apply1('tanh', 'tanh', [this.#use('tanh')]); }
  erf() { this.#use('erf'); return act.erf(this); }
  /** min(max(x, min), max); either bound null for none, or { min, max }. */
  clamp(...args) { this.#use('clamp'); return act.clamp(this, ...args); }
  clip(...args) { this.#use('clip'); return act.clamp(this, ...args); }
  cumsum(dim) { this.#use('cumsum'); return act.cumsum(this, dim); }
  maskedFill(mask, value) { this.#use('maskedFill'); return act.maskedFill(this, mask, value); }

  // ---- dtype ----
  to(dtype) {
    const h = this.#use('to');
    return wrapChecked(M._omw_cast(h, dtypeCode(dtype, 'to')), 'to');
  }
  float() { this.#use('float'); return this.to('float32'); }
  long() { this.#use('long'); return this.to('int64'); }
  bool() { this.#use('bool'); return this.to('bool'); }

  // ---- views and copies ----
  reshape(...shape) { return this.#reshape('reshape', shape); }
  view(...shape) { return this.#reshape('view', shape); }
  #reshape(who, args) {
    const h = this.#use(who);
    const s = intList(args, who, 'shape');
    const ps = scratch(8 * s.length);
    writeI64(ps, s);
    return wrapChecked(M._omw_reshape(h, ps, s.length), who);
  }

  permute(...dims) {
    const h = this.#use('permute');
    return apply1('permute', 'permute', [h], intList(dims, 'permute', 'dims'));
  }

  transpose(dim0, dim1) {
    const h = this.#use('transpose');
    return wrapChecked(M._omw_transpose(h, toI32(dim0, 'transpose', 'dim0'), toI32(dim1, 'transpose', 'dim1')), 'transpose');
  }

  expand(...shape) {
    const h = this.#use('expand');
    return apply1('expand', 'expand', [h], intList(shape, 'expand', 'shape'));
  }

  slice(dim, start = 0, end = Infinity, step = 1) {
    const h = this.#use('slice');
    return apply1('slice', 'slice', [h], [
      toI64(dim, 'slice', 'dim'),
      toI64(start ?? 0, 'slice', 'start'),
      toI64(end ?? Infinity, 'slice', 'end'),
      toI64(step ?? 1, 'slice', 'step'),
    ]);
  }

  narrow(dim, start, length) {
    this.#use('narrow');
    const d = wrapDim(Number(toI64(dim, 'narrow', 'dim')), this.#shape.length, 'narrow');
    const size = BigInt(this.#shape[d]);
    let s = toI64(start, 'narrow', 'start');
    const n = toI64(length, 'narrow', 'length');
    if (s < 0n) s += size;
    if (s < 0n || s > size) throw new OmError('IndexOutOfRange', `narrow: start ${start} is out of range for dim ${d} of size ${size}`);
    if (n < 0n || s + n > size) throw invalid(`narrow: start (${s}) + length (${n}) exceeds dimension size (${size})`);
    return this.slice(d, s, s + n);
  }

  select(dim, index) {
    const h = this.#use('select');
    return apply1('select', 'select', [h], [toI64(dim, 'select', 'dim'), toI64(index, 'select', 'index')]);
  }

  /** torch.slice_scatter: a copy with src written into this[start:end:step] along dim (the
   *  in-place form: this.slice(dim, start, end, step).copy_(src)). */
  sliceScatter(src, dim = 0, start = 0, end = Infinity, step = 1) {
    const h = this.#use('sliceScatter');
    const w = 'sliceScatter';
    const [pa] = marshal(['i64', [toI64(dim, w, 'dim'), toI64(start ?? 0, w, 'start'), toI64(end ?? Infinity, w, 'end'), toI64(step ?? 1, w, 'step')]]);
    return wrapChecked(M._omw_slice_scatter(h, handleOf(src, w, 'src'), pa), w);
  }

  /** torch.select_scatter: a copy with src written at index along dim (in place:
   *  this.select(dim, index).copy_(src)). */
  selectScatter(src, dim, index) {
    const h = this.#use('selectScatter');
    const w = 'selectScatter';
    const [pa] = marshal(['i64', [toI64(dim, w, 'dim'), toI64(index, w, 'index')]]);
    return wrapChecked(M._omw_select_scatter(h, handleOf(src, w, 'src'), pa), w);
  }

  // sorting and repeats (js/ops/sort.js)
  /** torch.topk: [values, indices] (om.topk). */
  topk(k, ...rest) { this.#use('topk'); return sorting.topk(this, k, ...rest); }
  /** torch.sort (stable): [values, indices] (om.sort). */
  sort(...rest) { this.#use('sort'); return sorting.sort(this, ...rest); }
  /** torch.argsort (stable) (om.argsort). */
  argsort(...rest) { this.#use('argsort'); return sorting.argsort(this, ...rest); }
  /** torch.repeat_interleave (om.repeatInterleave). */
  repeatInterleave(repeats, dim) { this.#use('repeatInterleave'); return sorting.repeatInterleave(this, repeats, dim); }

  /** torch.roll (om.roll). */
  roll(shifts, dims) { this.#use('roll'); return roll(this, shifts, dims); }

  squeeze(dims) {
    const h = this.#use('squeeze');
    return apply1('squeeze', 'squeeze', [h], dimsArg(dims, 'squeeze'));
  }

  unsqueeze(dim) {
    const h = this.#use('unsqueeze');
    return apply1('unsqueeze', 'unsqueeze', [h], [toI64(dim, 'unsqueeze', 'dim')]);
  }

  contiguous() { return wrapChecked(M._omw_contiguous(this.#use('contiguous')), 'contiguous'); }
  clone() { return apply1('clone', 'clone', [this.#use('clone')]); }

  /** Picks along dim by a 1-D int64 index (torch.index_select; js/ops/index.js). */
  indexSelect(dim, index) { return indexing.indexSelect(this, dim, index); }
  /** out[p] = this[p with p[dim] = index[p]] (torch.gather). */
  gather(dim, index) { return indexing.gather(this, dim, index); }
  /** A copy with source's slices added at index along dim (torch.index_add). */
  indexAdd(dim, index, source) { return indexing.indexAdd(this, dim, index, source); }
  /** A copy whose places where mask is true take source's elements in order (torch.masked_scatter). */
  maskedScatter(mask, source) { this.#use('maskedScatter'); return indexing.maskedScatter(this, mask, source); }
  /** A copy with values written (accumulate: added) where int64 indices point (torch.index_put). */
  indexPut(indices, values, accumulate) { this.#use('indexPut'); return indexPut(this, indices, values, accumulate); }
  /** A copy with src[p] added at p with p[dim] = index[p] (torch.scatter_add). */
  scatterAdd(dim, index, src) { return indexing.scatterAdd(this, dim, index, src); }
  /**
   * Normally a new tensor over the same storage. While a trace records, C returns the traced
   * tensor itself (a new reference, spec: Detach of a traced tensor returns it): the result is
   * then a second handle to the same C tensor, and each handle releases its own reference.
   */
  detach() { return wrapChecked(M._omw_detach(this.#use('detach')), 'detach'); }

  /** The transpose of a 2-D tensor (a view); a 0-d or 1-D tensor gives a new handle to itself. */
  t() {
    const h = this.#use('t');
    const nd = this.#shape.length;
    if (nd > 2) throw invalid(`t: expects a tensor with at most 2 dims, got ${nd}; use transpose(dim0, dim1)`);
    if (nd < 2) return wrapChecked(M._omw_retain(h), 't');
    return wrapChecked(M._omw_transpose(h, 0, 1), 't');
  }

  flatten(startDim = 0, endDim = -1) {
    const h = this.#use('flatten');
    const shape = this.#shape;
    const s = wrapDim(toI32(startDim, 'flatten', 'startDim'), shape.length, 'flatten');
    const e = wrapDim(toI32(endDim, 'flatten', 'endDim'), shape.length, 'flatten');
    if (s > e) throw invalid(`flatten: startDim ${startDim} comes after endDim ${endDim}`);
    const out = shape.length === 0 ? [1]
      : [...shape.slice(0, s), shape.slice(s, e + 1).reduce((a, b) => a * b, 1), ...shape.slice(e + 1)];
    const [ps] = marshal(['i64', out.map(BigInt)]);
    return wrapChecked(M._omw_reshape(h, ps, out.length), 'flatten');
  }

  /**
   * torch.split: pieces of splitSize along dim (the last may be shorter), or, given a list of
   * sizes (non-negative, summing to the dim's size), pieces of those sizes. Views.
   */
  split(splitSizeOrSections, dim = 0) {
    const h = this.#use('split');
    const d = toI32(dim, 'split', 'dim');
    if (Array.isArray(splitSizeOrSections)) {
      const sizes = splitSizeOrSections.map((v, i) => toI64(v, 'split', `sizes[${i}]`));
      const [ps, pout] = marshal(['i64', sizes], ['ptr', sizes.length]);
      const n = M._omw_split_sizes(h, ps, sizes.length, d, pout);
      if (n < 0) throw lastError('split');
      return readU32(pout, n).map(wrap);
    }
    const splitSize = count(splitSizeOrSections, 'split', 'splitSize');
    const n = this.#dimSize(d, splitSize > 0);
    const maxOut = n === null ? 1 : Math.max(1, Math.ceil(n / splitSize));
    const [pout] = marshal(['ptr', maxOut]);
    const got = M._omw_split(h, splitSize, d, pout, maxOut);
    if (got < 0) throw lastError('split');
    return readU32(pout, got).map(wrap);
  }

  /**
   * torch.chunk: pieces of ceil(size / chunks) along dim, so possibly fewer than chunks (5 in 4
   * chunks is 2, 2, 1); an empty dim gives chunks empty pieces. Views.
   */
  chunk(chunks, dim = 0) {
    const h = this.#use('chunk');
    const d = toI32(dim, 'chunk', 'dim');
    const c = count(chunks, 'chunk', 'chunks');
    const n = this.#dimSize(d, c > 0);
    const maxOut = n === null ? 1 : n > 0 ? Math.min(c, n) : c;
    const [pout] = marshal(['ptr', maxOut]);
    const got = M._omw_chunk(h, c, d, pout, maxOut);
    if (got < 0) throw lastError('chunk');
    return readU32(pout, got).map(wrap);
  }

  /** torch.unbind: the slices along dim (default 0), each without that dim (select views). */
  unbind(dim = 0) {
    this.#use('unbind');
    const d = wrapDim(toI32(dim, 'unbind', 'dim'), this.#shape.length, 'unbind');
    if (!this.#shape.length) throw new OmError('IndexOutOfRange', `unbind: dim ${dim} is out of range for a tensor of 0 dims`);
    const out = [];
    try {
      for (let i = 0; i < this.#shape[d]; i++) out.push(this.select(d, i));
    } catch (e) {
      for (const t of out) t.dispose();
      throw e;
    }
    return out;
  }

  /** The size of dim d when it is in range and ok (C reports the error otherwise), else null. */
  #dimSize(d, ok) {
    const nd = this.#shape.length;
    return ok && d >= -nd && d < nd ? this.#shape[d < 0 ? d + nd : d] : null;
  }

  tril(k = 0) { return apply1('tril', 'tril', [this.#use('tril')], [toI64(k, 'tril', 'k')]); }
  triu(k = 0) { return apply1('triu', 'triu', [this.#use('triu')], [toI64(k, 'triu', 'k')]); }

  // ---- reductions ----
  sum(dim, keepdim) { return this.#reduce('sum', dim, keepdim); }
  mean(dim, keepdim) { return this.#reduce('mean', dim, keepdim); }
  amax(dim, keepdim) { return this.#reduce('amax', dim, keepdim); }
  amin(dim, keepdim) { return this.#reduce('amin', dim, keepdim); }
  #reduce(who, dim, keepdim) {
    const h = this.#use(who);
    const k = toBool(keepdim, who, 'keepdim');
    return apply1(who, who, [h], [k ? 1n : 0n, ...dimsArg(dim, who)]);
  }

  max(dim, keepdim) { return this.#maxMin('max', 'amax', 'max_dim', dim, keepdim); }
  min(dim, keepdim) { return this.#maxMin('min', 'amin', 'min_dim', dim, keepdim); }
  #maxMin(who, allOp, dimOp, dim, keepdim) {
    const h = this.#use(who);
    const k = toBool(keepdim, who, 'keepdim');
    if (dim === undefined || dim === null) return apply1(who, allOp, [h], [k ? 1n : 0n]);
    return applyAll(who, dimOp, [h], [toI64(dim, who, 'dim'), k ? 1n : 0n], [], 2);
  }

  argmax(dim, keepdim) { return this.#arg('argmax', '_omw_argmax', dim, keepdim); }
  argmin(dim, keepdim) { return this.#arg('argmin', '_omw_argmin', dim, keepdim); }
  #arg(who, fn, dim, keepdim) {
    const h = this.#use(who);
    const k = toBool(keepdim, who, 'keepdim');
    if (dim !== undefined && dim !== null) {
      return wrapChecked(M[fn](h, toI32(dim, who, 'dim'), k ? 1 : 0), who);
    }
    // no dim: the index into the flattened tensor (all-ones shape with keepdim)
    const [ps] = marshal(['i64', [-1n]]);
    const flat = checkHandle(M._omw_reshape(h, ps, 1), who);
    let r;
    try {
      r = checkHandle(M[fn](flat, 0, 0), who);
    } finally {
      M._omw_release(flat);
    }
    if (!k) return wrap(r);
    try {
      const [pk] = marshal(['i64', this.#shape.map(() => 1n)]);
      return wrapChecked(M._omw_reshape(r, pk, this.#shape.length), who);
    } finally {
      M._omw_release(r);
    }
  }

  // ---- normalisation ----
  softmax(dim) { return apply1('softmax', 'softmax', [this.#use('softmax')], [toI64(dim, 'softmax', 'dim')]); }
  logSoftmax(dim) { return apply1('logSoftmax', 'log_softmax', [this.#use('logSoftmax')], [toI64(dim, 'logSoftmax', 'dim')]); }

  // ---- linear algebra ----
  matmul(other) { this.#use('matmul'); return product(this, other, 'matmul', 'self', 'other'); }

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
    checkStatus(M._omw_backward(h, g), 'backward');
    if (!retainGraph) checkStatus(M._omw_free_graph(h), 'backward');
  }

  zeroGrad() {
    const h = this.#use('zeroGrad');
    this.#dropGrad();
    M._omw_zero_grad(h);
  }

  // ---- in place ----
  fill_(value) {
    const h = this.#use('fill_');
    const v = scalarValue(value);
    if (v === undefined) throw invalid(`fill_: value must be a number, got ${describe(value)}`);
    checkStatus(M._omw_fill(h, v), 'fill_');
    return this;
  }

  copy_(src) {
    const h = this.#use('copy_');
    if (!(src instanceof Tensor)) {
      if (scalarValue(src) === undefined) throw invalid(`copy_: src must be a Tensor or a number, got ${describe(src)}`);
      return this.fill_(src);
    }
    checkStatus(M._omw_copy_from(h, handleOf(src, 'copy_', 'src')), 'copy_');
    return this;
  }

  zero_() { return this.fill_(0); }
  add_(other) { return this.#assign('add_', () => this.add(other)); }
  sub_(other) { return this.#assign('sub_', () => this.sub(other)); }
  mul_(other) { return this.#assign('mul_', () => this.mul(other)); }
  div_(other) { return this.#assign('div_', () => this.div(other)); }
  maskedFill_(mask, value) { return this.#assign('maskedFill_', () => this.maskedFill(mask, value)); }
  maskedScatter_(mask, source) { return this.#assign('maskedScatter_', () => this.maskedScatter(mask, source)); }
  /** torch.Tensor.index_put_ (x[i, j] = v): see {@link indexPut}. */
  indexPut_(indices, values, accumulate) { return this.#assign('indexPut_', () => this.indexPut(indices, values, accumulate)); }

  /** The in-place form of an op: its result (make()) copied into this (traced as a write). */
  #assign(who, make) {
    this.#use(who);
    const v = make();
    try {
      return this.copy_(v);
    } finally {
      v.dispose();
    }
  }

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
    checkStatus(M._omw_set(h, pi, v), 'set_');
    return this;
  }

  // ---- lifetime ----
  /** Frees the C tensor (and its cached grad). Idempotent; later use throws Disposed. */
  dispose() {
    if (!this.#h) return;
    this.#dropGrad();
    M._omw_release(this.#h);
    this.#h = 0;
    if (this.#watched) collector.unregister(this);
  }
}

// ---- creation -------------------------------------------------------------------------------

/** om.tensor(data, { dtype, shape }). */
export function tensor(data, options = {}) {
  requireReady('tensor');
  if (!isOptions(options)) throw invalid(`tensor: options must be an object, got ${describe(options)}`);
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
    return wrapChecked(M._omw_from_data(p, ps, shape.length, code), 'tensor');
  } finally {
    M._free(p);
  }
}

function creationOptions(options, who) {
  if (options === undefined) return {};
  if (!isOptions(options)) throw invalid(`${who}: options must be an object, got ${describe(options)}`);
  return options;
}

function fullOf(who, shape, value, options) {
  requireReady(who);
  const opts = creationOptions(options, who);
  const s = shapeArg(shape, who);
  const v = scalarValue(value);
  if (v === undefined) throw invalid(`${who}: value must be a number, bigint or boolean, got ${describe(value)}`);
  const inferred = typeof value === 'boolean' ? 'bool' : typeof value === 'bigint' ? 'int64' : 'float32';
  const code = dtypeCode(opts.dtype ?? inferred, who);
  const [ps] = marshal(['i64', s]);
  return wrapChecked(M._omw_full(ps, s.length, code, v), who);
}

export function zeros(shape, options) { return fullOf('zeros', shape, 0, options); }
export function ones(shape, options) { return fullOf('ones', shape, 1, options); }
export function full(shape, value, options) { return fullOf('full', shape, value, options); }

/** arange(end), arange(start, end), arange(start, end, step), each with an optional options object. */
export function arange(...args) {
  requireReady('arange');
  const opts = args.length && isOptions(args[args.length - 1]) ? args.pop() : {};
  if (args.length < 1 || args.length > 3) throw invalid(`arange: expected 1 to 3 numbers, got ${args.length}`);
  for (const [i, a] of args.entries()) {
    if (typeof a !== 'number' && typeof a !== 'bigint') throw invalid(`arange: argument ${i} must be a number, got ${describe(a)}`);
  }
  const allBig = args.every((a) => typeof a === 'bigint');
  const nums = args.map(Number);
  const [start, end, step] = nums.length === 1 ? [0, nums[0], 1] : [nums[0], nums[1], nums[2] ?? 1];
  const code = dtypeCode(opts.dtype ?? (allBig ? 'int64' : 'float32'), 'arange');
  return wrapChecked(M._omw_arange(start, end, step, code), 'arange');
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
  const opts = creationOptions(options, who);
  const s = shapeArg(shape, who);
  if (opts.dtype !== undefined && opts.dtype !== 'float32') {
    throw invalid(`${who}: dtype must be 'float32', got ${describe(opts.dtype)}`);
  }
  const hasSeed = opts.seed !== undefined && opts.seed !== null;
  const [lo, hi] = hasSeed ? seedHalves(opts.seed, who) : [0, 0];
  const [ps] = marshal(['i64', s]);
  return wrapChecked(M._omw_random(ps, s.length, lo, hi, hasSeed ? 1 : 0, normal ? 1 : 0), who);
}

export function rand(shape, options) { return random('rand', false, shape, options); }
export function randn(shape, options) { return random('randn', true, shape, options); }

export function manualSeed(seed) {
  requireReady('manualSeed');
  const [lo, hi] = seedHalves(seed, 'manualSeed');
  M._omw_manual_seed(lo, hi);
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
  return wrapChecked(M[`_omw_${who}`](p, hs.length, d), who);
}

export function cat(tensors, dim = 0) {
  return joinAlong('cat', tensors, dim);
}

export function stack(tensors, dim = 0) {
  return joinAlong('stack', tensors, dim);
}

/** torch.roll: each dims[k] rotated by shifts[k]; with no dims, the flattened tensor by one shift. */
export function roll(input, shifts, dims) {
  requireReady('roll');
  const h = handleOf(input, 'roll', 'input');
  const s = Array.isArray(shifts) ? shifts.map((v, i) => toI64(v, 'roll', `shifts[${i}]`)) : [toI64(shifts, 'roll', 'shifts')];
  const d = dimsArg(dims, 'roll');
  const [ps, pd] = marshal(['i64', s], ['i64', d]);
  return wrapChecked(M._omw_roll(h, ps, s.length, pd, d.length), 'roll');
}

/** torch.meshgrid: the grid's coordinates, one view per input; options.indexing 'ij' (default) or 'xy'. */
export function meshgrid(tensors, options) {
  requireReady('meshgrid');
  const hs = tensorList(tensors, 'meshgrid');
  const indexing = options?.indexing ?? 'ij';
  if (indexing !== 'ij' && indexing !== 'xy') throw invalid(`meshgrid: indexing must be 'ij' or 'xy', got ${describe(indexing)}`);
  const [p, pout] = marshal(['ptr', hs], ['ptr', hs.length]);
  const n = M._omw_meshgrid(p, hs.length, indexing === 'xy' ? 1 : 0, pout);
  if (n < 0) throw lastError('meshgrid');
  return readU32(pout, n).map(wrap);
}

/**
 * torch.index_put: a copy of input with values written (accumulate: added) at the positions the
 * int64 index tensors (broadcast together) pick in input's first dims; values is a Tensor of
 * input's dtype or a number. x[i, j] = v in PyTorch is x.indexPut_([i, j], v); one bool index,
 * x[mask] = v, is js/ops/index.js maskPut.
 */
export function indexPut(input, indices, values, accumulate = false) {
  const who = 'indexPut';
  requireReady(who);
  const h = handleOf(input, who, 'input');
  const list = indices instanceof Tensor ? [indices] : indices;
  if (!Array.isArray(list)) throw invalid(`${who}: indices must be a Tensor or an array of tensors, got ${describe(indices)}`);
  const hs = list.map((t, i) => handleOf(t, who, `indices[${i}]`));
  if (typeof accumulate !== 'boolean') throw invalid(`${who}: accumulate must be a boolean, got ${describe(accumulate)}`);
  const isTensor = values instanceof Tensor, v = isTensor ? undefined : scalarValue(values);
  if (!isTensor && v === undefined) throw invalid(`${who}: values must be a Tensor or a number, got ${describe(values)}`);
  if (list.length === 1 && dtypeOf(list[0]) === 'bool') return indexing.maskPut(input, list[0], values, accumulate);
  const hv = isTensor ? handleOf(values, who, 'values') : scalarHandle(v, dtypeCodes.get(dtypeOf(input)), who);
  try {
    const [p] = marshal(['ptr', hs]);
    return wrapChecked(M._omw_index_put(h, p, hs.length, hv, accumulate ? 1 : 0), who);
  } finally {
    if (!isTensor) M._omw_release(hv);
  }
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

/** torch.split(input, splitSizeOrSections, dim): input.split(...) as a function. */
export function split(input, splitSizeOrSections, dim = 0) {
  requireReady('split');
  handle(input, 'split', 'input');
  return input.split(splitSizeOrSections, dim);
}

/** torch.chunk(input, chunks, dim): input.chunk(chunks, dim) as a function. */
export function chunk(input, chunks, dim = 0) {
  requireReady('chunk');
  handle(input, 'chunk', 'input');
  return input.chunk(chunks, dim);
}

/** torch.unbind(input, dim): input.unbind(dim) as a function. */
export function unbind(input, dim = 0) {
  requireReady('unbind');
  handle(input, 'unbind', 'input');
  return input.unbind(dim);
}

/** torch.tril(input, k): input.tril(k) as a function (the causal mask: om.tril(om.ones([T, T]))). */
export function tril(input, k = 0) {
  requireReady('tril');
  handle(input, 'tril', 'input');
  return input.tril(k);
}

/** torch.triu(input, k): input.triu(k) as a function. */
export function triu(input, k = 0) {
  requireReady('triu');
  handle(input, 'triu', 'input');
  return input.triu(k);
}

/** torch.flatten(input, startDim, endDim): input.flatten(startDim, endDim) as a function. */
export function flatten(input, startDim = 0, endDim = -1) {
  requireReady('flatten');
  handle(input, 'flatten', 'input');
  return input.flatten(startDim, endDim);
}

/** input W^T + bias, as PyTorch's F.linear: input [..., in], weight [out, in], bias [out] or null. */
export function linear(input, weight, bias = null) {
  requireReady('linear');
  const hs = [handle(input, 'linear', 'input'), handle(weight, 'linear', 'weight')];
  if (bias !== null && bias !== undefined) hs.push(handle(bias, 'linear', 'bias'));
  return apply1('linear', 'linear', hs);
}

export function matmul(a, b) {
  requireReady('matmul');
  return product(a, b, 'matmul', 'a', 'b');
}

/** a @ b: the matmul op when both have 2 or more dims (one call into wasm, the result's shape with
 *  it), else om_matmul, which adds PyTorch's rules for vectors. */
function product(a, b, who, nameA, nameB) {
  const ha = handleOf(a, who, nameA), hb = handleOf(b, who, nameB);
  if (ndimOf(a) >= 2 && ndimOf(b) >= 2) return apply1(who, 'matmul', [ha, hb]);
  return wrapChecked(M._omw_matmul(ha, hb), who);
}

/**
 * torch.addmm(input, mat1, mat2, { beta = 1, alpha = 1 }): beta * input + alpha * (mat1 @ mat2)
 * for matrices mat1 [n, k] and mat2 [k, m], input broadcast to [n, m] (Hugging Face's GPT-2
 * Conv1D: addmm(bias, x, weight)). A matmul and an add (a Mul for a beta or alpha other than 1);
 * beta 0 ignores input, as PyTorch (its NaN and infinities do not propagate).
 */
export function addmm(input, mat1, mat2, options) {
  requireReady('addmm');
  const who = 'addmm';
  const o = optionsArg(options, who, ['beta', 'alpha']);
  const scale = (k) => {
    const v = o[k] ?? 1;
    if (typeof v !== 'number') throw invalid(`${who}: ${k} must be a number, got ${describe(v)}`);
    return v;
  };
  const beta = scale('beta'), alpha = scale('alpha');
  const hi = handleOf(input, who, 'input');
  const hs = [mat1, mat2].map((m, k) => {
    const h = handleOf(m, who, k ? 'mat2' : 'mat1'), nd = ndimOf(m);
    if (nd !== 2) throw new OmError('ShapeMismatch', `${who}: ${k ? 'mat2' : 'mat1'} must be a matrix, got a ${nd}-D tensor`);
    return h;
  });
  if (alpha === 1 && beta === 1) { // Conv1D's: the product, then the sum, with no scope or Tensor for the product
    callOp('matmul', opId('matmul'), hs, [], [], 1);
    const p = applied.handles[0];
    try {
      return apply1(who, 'add', [p, hi]);
    } finally {
      M._omw_release(p);
    }
  }
  return tidy(() => {
    const p = alpha === 1 ? matmul(mat1, mat2) : matmul(mat1, mat2).mul(alpha);
    if (beta === 0) return p;
    return p.add(beta === 1 ? input : input.mul(beta));
  });
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
  const prev = M._omw_set_grad_enabled(0);
  if (prev < 0) throw lastError('noGrad');
  let result;
  try {
    result = fn();
  } catch (e) {
    if (M._omw_set_grad_enabled(prev) < 0) M._omw_clear_error(); // fn's exception comes first
    throw e;
  }
  // Restoring "off" fails only when fn began a trace inside the scope (NoGradInTrace).
  if (M._omw_set_grad_enabled(prev) < 0) throw lastError('noGrad');
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
