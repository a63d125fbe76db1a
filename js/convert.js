// Checking and converting JS arguments before they reach C: integers for int64/int32
// parameters, shapes, dims, and the nested-array / typed-array data of om.tensor(). Every
// rejection is an OmError (InvalidArgument) naming the function and the problem; nothing
// here lets a bad value reach C as a silently wrapped or truncated number.
import { OmError, invalid } from './errors.js';

const INT64_MAX = (1n << 63n) - 1n;
const INT64_MIN = -(1n << 63n);

/** A short description of a value for error messages. */
export function describe(x) {
  if (x === null) return 'null';
  if (x === undefined) return 'undefined';
  if (typeof x === 'string') return `a string (${JSON.stringify(x.length > 20 ? x.slice(0, 20) + '...' : x)})`;
  if (typeof x === 'number') return Number.isNaN(x) ? 'NaN' : String(x);
  if (typeof x === 'bigint') return `${x}n`;
  if (typeof x === 'boolean') return String(x);
  if (typeof x === 'function') return 'a function';
  if (Array.isArray(x)) return `an array of length ${x.length}`;
  if (ArrayBuffer.isView(x)) return `a ${x.constructor.name}`;
  const name = x?.constructor?.name;
  return name && name !== 'Object' ? `a ${name}` : 'an object';
}

/** BigInt(v) of the small integers attributes mostly are (dims, sizes, flags), made once:
 *  BigInt() allocates, and an eager op converts several per call. */
const SMALL = Array.from({ length: 1024 + 16 }, (_, i) => BigInt(i - 16));

/**
 * An integer argument as a BigInt for an int64 slot; ±Infinity clamp to the int64 range. `what`
 * names it in a refusal, as `what[index]` when index is given (the name is only built then).
 */
export function toI64(x, who, what, index) {
  if (typeof x === 'number') {
    if (Number.isInteger(x)) {
      if (x >= -16 && x < 1024) return SMALL[x + 16];
      if (x >= 2 ** 63) return INT64_MAX;
      if (x < -(2 ** 63)) return INT64_MIN;
      return BigInt(x);
    }
    if (x === Infinity) return INT64_MAX;
    if (x === -Infinity) return INT64_MIN;
  }
  const name = index === undefined ? what : `${what}[${index}]`;
  if (typeof x === 'bigint') {
    if (x <= INT64_MAX && x >= INT64_MIN) return x;
    throw invalid(`${who}: ${name} ${x}n does not fit in int64`);
  }
  throw invalid(`${who}: ${name} must be an integer, got ${describe(x)}`);
}

/** Each integer of a list (an array or typed array) as a BigInt, checked as toI64 does. */
function i64List(list, who, what) {
  const out = new Array(list.length);
  for (let i = 0; i < list.length; i++) out[i] = toI64(list[i], who, what, i);
  return out;
}

/** An integer argument for an int32 slot (dims, counts). */
export function toI32(x, who, what) {
  if (typeof x === 'bigint') x = Number(x);
  if (typeof x !== 'number' || !Number.isInteger(x)) {
    throw invalid(`${who}: ${what} must be an integer, got ${describe(x)}`);
  }
  if (x < -(2 ** 31) || x >= 2 ** 31) throw invalid(`${who}: ${what} ${x} is out of range`);
  return x;
}

/** An optional boolean flag (undefined -> fallback). */
export function toBool(x, who, what, fallback = false) {
  if (x === undefined || x === null) return fallback;
  if (typeof x !== 'boolean') throw invalid(`${who}: ${what} must be a boolean, got ${describe(x)}`);
  return x;
}

/** A list of integers given as one array or as separate arguments, as BigInts. */
export function intList(args, who, what) {
  const list = args.length === 1 && (Array.isArray(args[0]) || ArrayBuffer.isView(args[0])) ? args[0] : args;
  return i64List(list, who, what);
}

/** A shape argument: an array of integers or a single integer. Signs are C's to check. */
export function shapeArg(shape, who) {
  if (typeof shape === 'number' || typeof shape === 'bigint') shape = [shape];
  if (!Array.isArray(shape) && !(ArrayBuffer.isView(shape) && !(shape instanceof DataView))) {
    throw invalid(`${who}: shape must be an array of integers, got ${describe(shape)}`);
  }
  return i64List(shape, who, 'shape');
}

/** A scalar operand (number, boolean or bigint) as a double, or undefined if x is not one. */
export function scalarValue(x) {
  if (typeof x === 'number') return x;
  if (typeof x === 'boolean') return x ? 1 : 0;
  if (typeof x === 'bigint') return Number(x);
  return undefined;
}

// ---- om.tensor data -----------------------------------------------------------------------

const FLOAT_ARRAYS = [Float32Array, Float64Array];
const MAX_NESTING = 64;

function isArrayLike(x) {
  return Array.isArray(x) || (ArrayBuffer.isView(x) && !(x instanceof DataView));
}

function pathStr(path) {
  return path.map((i) => `[${i}]`).join('');
}

/**
 * Flattens tensor data (a scalar, nested arrays, typed arrays, or arrays of typed arrays) into
 * row-major leaves. Returns { shape, leaves, kind } where kind is the inferred dtype
 * ('float32' | 'int64' | 'bool'). A top-level typed array comes back as is (leaves === data).
 */
export function flattenData(data, who) {
  // fast path: one flat typed array
  if (ArrayBuffer.isView(data) && !(data instanceof DataView)) {
    const kind = FLOAT_ARRAYS.some((T) => data instanceof T) ? 'float32' : 'int64';
    return { shape: [data.length], leaves: data, kind };
  }
  if (!Array.isArray(data)) {
    const k = leafKind(data);
    if (!k) throw invalid(`${who}: data must be a number, bigint, boolean, array or typed array, got ${describe(data)}`);
    return { shape: [], leaves: [data], kind: k === 'float' ? 'float32' : k === 'bool' ? 'bool' : 'int64' };
  }
  // the shape follows the first element at every depth
  const shape = [];
  for (let cur = data; isArrayLike(cur); cur = cur[0]) {
    // a guard against cyclic or absurdly deep arrays (C's own limit on dims is far lower)
    if (shape.length === MAX_NESTING) throw invalid(`${who}: data is nested more than ${MAX_NESTING} levels deep`);
    shape.push(cur.length);
    if (cur.length === 0) break;
  }
  const ndim = shape.length;
  const leaves = [];
  const seen = { float: false, int: false, bool: false };
  const path = [];
  const walk = (x, depth) => {
    if (depth === ndim) {
      const k = leafKind(x);
      if (!k) {
        const what = isArrayLike(x) ? `${describe(x)} (ragged: expected a scalar at depth ${depth})` : describe(x);
        throw invalid(`${who}: element ${pathStr(path)} is ${what}; expected a number, bigint or boolean`);
      }
      seen[k === 'bigint' ? 'int' : k] = true;
      leaves.push(x);
      return;
    }
    if (!isArrayLike(x)) {
      throw invalid(`${who}: ragged data: element ${pathStr(path)} is ${describe(x)} but an array of length ${shape[depth]} was expected (shape [${shape}])`);
    }
    if (x.length !== shape[depth]) {
      throw invalid(`${who}: ragged data: element ${pathStr(path)} has length ${x.length} but ${shape[depth]} was expected (shape [${shape}])`);
    }
    if (!Array.isArray(x) && depth === ndim - 1) {
      // a typed array as the innermost level
      seen[FLOAT_ARRAYS.some((T) => x instanceof T) ? 'float' : 'int'] = true;
      for (let i = 0; i < x.length; i++) leaves.push(x[i]);
      return;
    }
    for (let i = 0; i < x.length; i++) {
      path.push(i);
      walk(x[i], depth + 1);
      path.pop();
    }
  };
  walk(data, 0);
  const kind = seen.float ? 'float32' : seen.int ? 'int64' : seen.bool ? 'bool' : 'float32';
  return { shape, leaves, kind };
}

function leafKind(x) {
  switch (typeof x) {
    case 'number': return 'float';
    case 'bigint': return 'bigint';
    case 'boolean': return 'bool';
    default: return null;
  }
}

/** Converts leaves to the typed array C reads for dtype (float32, float64, int64, bool as one byte). */
export function toTypedArray(leaves, dtype, who) {
  const n = leaves.length;
  if (dtype === 'float32' || dtype === 'float64') {
    const T = dtype === 'float32' ? Float32Array : Float64Array;
    if (leaves instanceof T) return leaves;
    const out = new T(n);
    for (let i = 0; i < n; i++) {
      const v = leaves[i];
      out[i] = typeof v === 'bigint' ? Number(v) : +v;
    }
    return out;
  }
  if (dtype === 'int64') {
    if (leaves instanceof BigInt64Array) return leaves;
    const out = new BigInt64Array(n);
    for (let i = 0; i < n; i++) {
      const v = leaves[i];
      if (typeof v === 'bigint') {
        if (v > INT64_MAX || v < INT64_MIN) throw invalid(`${who}: element ${i} (${v}n) does not fit in int64`);
        out[i] = v;
      } else if (typeof v === 'boolean') {
        out[i] = v ? 1n : 0n;
      } else {
        if (!Number.isFinite(v)) throw invalid(`${who}: element ${i} (${v}) cannot be converted to int64`);
        const t = Math.trunc(v);
        if (t >= 2 ** 63 || t < -(2 ** 63)) throw invalid(`${who}: element ${i} (${v}) does not fit in int64`);
        out[i] = BigInt(t);
      }
    }
    return out;
  }
  if (dtype === 'bool') {
    const out = new Uint8Array(n);
    for (let i = 0; i < n; i++) {
      const v = leaves[i];
      out[i] = typeof v === 'bigint' ? (v !== 0n ? 1 : 0) : (v !== 0 && v !== false ? 1 : 0);
    }
    return out;
  }
  throw new OmError('InvalidArgument', `${who}: unknown dtype ${describe(dtype)}`);
}

/** Checks an explicit shape option for om.tensor: non-negative integers. Returns numbers. */
export function explicitShape(shape, who) {
  if (typeof shape === 'number') shape = [shape];
  if (!isArrayLike(shape)) throw invalid(`${who}: shape must be an array of integers, got ${describe(shape)}`);
  return Array.from(shape, (v, i) => {
    if (typeof v === 'bigint') v = Number(v);
    if (typeof v !== 'number' || !Number.isInteger(v)) {
      throw invalid(`${who}: shape[${i}] must be a non-negative integer, got ${describe(v)}`);
    }
    if (v < 0) throw invalid(`${who}: shape[${i}] is negative (${v}); sizes must be >= 0`);
    return v;
  });
}


/**
 * torch.finfo(dtype): the limits of a float dtype ('float32', the default, or 'float64'), as
 * PyTorch's fields: bits, eps (the gap above 1), max, min (-max, the mask value Hugging Face
 * models write as torch.finfo(dtype).min), tiny and smallestNormal (the smallest positive normal),
 * resolution (10^-digits) and dtype. Frozen; another dtype is InvalidArgument.
 */
export function finfo(dtype = 'float32') {
  const f32 = dtype === 'float32';
  if (!f32 && dtype !== 'float64') throw invalid(`finfo: takes 'float32' or 'float64', got ${describe(dtype)}`);
  // mantissa bits m and exponent bias b: eps 2^-m, max (2 - 2^-m) 2^b, tiny 2^(1 - b)
  const [bits, m, b, digits] = f32 ? [32, 23, 127, 6] : [64, 52, 1023, 15];
  const max = (2 - 2 ** -m) * 2 ** b;
  return Object.freeze({
    bits, eps: 2 ** -m, max, min: -max, tiny: 2 ** (1 - b), smallestNormal: 2 ** (1 - b), resolution: 10 ** -digits, dtype: f32 ? 'float32' : 'float64',
  });
}

/** torch.iinfo(dtype): bits, min and max (BigInt) of 'int64' (the one integer dtype), and dtype. */
export function iinfo(dtype) {
  if (dtype !== 'int64') throw invalid(`iinfo: takes 'int64', got ${describe(dtype)}`);
  return Object.freeze({ bits: 64, min: INT64_MIN, max: INT64_MAX, dtype });
}
