// Counting and distinct values in PyTorch's names: bincount, unique, uniqueConsecutive, and
// Tensor.type (PyTorch's type strings). bincount's and unique's result sizes are decided by the
// input's values, so they read them: with a traced input that is TraceError DataDependent (as
// nonzero, tests/js/nonzero.test.mjs), never a size baked into a graph; a constant input traces
// (its result is a constant, and bincount's traced float32 weights are summed by index_add).
//
//   const counts = om.bincount(labels, { minlength: 10 });           // int64 [10]
//   const [values, inverse, counts] = om.unique(x, { returnInverse: true, returnCounts: true });
//   const rows = om.unique(pairs, { dim: 0 });                          // the distinct rows, ascending
import { OmError, TraceError, invalid } from '../errors.js';
import { describe } from '../convert.js';
import { Tensor, handle, tidy, tensor, zeros, optionsArg } from '../tensor.js';
import { to } from './shape.js';
import { wrapDim } from './arith.js';

/** input's values (a copy), or the DataDependent refusal naming who when input is traced. */
function valuesOf(input, who) {
  try {
    return input.toArray();
  } catch (e) {
    if (e instanceof TraceError) throw new TraceError(e.kind, `${who}: its result's size is decided by the input's values; ${e.message}`);
    throw e;
  }
}

/** A non-negative integer option (minlength). */
function count(v, who, name) {
  const n = typeof v === 'bigint' ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isSafeInteger(n)) throw invalid(`${who}: ${name} must be an integer, got ${describe(v)}`);
  return n;
}

/**
 * torch.bincount(input, weights = null, minlength = 0), also bincount(input, { weights, minlength }):
 * how often each value 0..max of a 1-D non-negative int64 input occurs (int64), or the sum of the
 * weights at each (float32 weights: float32, summed in index order as PyTorch's kernel; int64 or
 * bool weights: float64, as PyTorch), at least minlength long. Not differentiable (PyTorch's is not).
 */
export function bincount(input, ...rest) {
  const who = 'bincount';
  handle(input, who, 'input');
  let [weights, minlength] = rest;
  if (rest.length && rest[rest.length - 1] !== null && typeof rest[rest.length - 1] === 'object' && !(rest[rest.length - 1] instanceof Tensor)) {
    const o = optionsArg(rest[rest.length - 1], who, ['weights', 'minlength']);
    [weights, minlength] = [rest.length > 1 ? rest[0] : o.weights, o.minlength];
  }
  const min = count(minlength ?? 0, who, 'minlength');
  if (min < 0) throw invalid(`${who}: minlength should be >= 0`);
  if (input.dtype !== 'int64') throw new OmError('DtypeMismatch', `${who}: "bincount_cpu" not implemented for '${input.dtype}' (takes int64)`);
  if (input.ndim !== 1) throw invalid(`${who}: bincount only supports 1-d non-negative integral inputs.`);
  if (weights !== undefined && weights !== null) {
    handle(weights, who, 'weights');
    if (weights.ndim !== 1 || weights.shape[0] !== input.shape[0]) throw invalid(`${who}: weights should be 1-d and have the same length as input`);
  }
  const values = valuesOf(input, who);
  let size = min;
  for (const v of values) {
    if (v < 0n) throw invalid(`${who}: bincount only supports 1-d non-negative integral inputs.`);
    if (Number(v) + 1 > size) size = Number(v) + 1;
  }
  // float32 weights: index_add (in index order; traced weights trace); else counted here
  if (weights?.dtype === 'float32') return tidy(() => zeros([size]).indexAdd(0, input, weights));
  const w = weights === undefined || weights === null ? null : valuesOf(weights, who);
  const sums = w ? new Float64Array(size) : new BigInt64Array(size); // int64 or bool weights: float64, as PyTorch
  values.forEach((v, i) => { sums[Number(v)] += w ? Number(w[i]) : 1n; });
  return tensor(sums, { dtype: w ? 'float64' : 'int64', shape: [size] });
}

/** PyTorch's order of two values: NaN after every number (two NaNs tie, so a stable sort keeps them in order). */
function order(x, y) {
  const nx = typeof x === 'number' && x !== x, ny = typeof y === 'number' && y !== y;
  if (nx || ny) return nx - ny;
  return x < y ? -1 : x > y ? 1 : 0;
}

/**
 * The distinct slices of input along dim (dim null: its elements, row-major, each a slice of one)
 * and, for each slice, the index of its value among them and each value's count: sorted
 * (consecutive false; slices compared lexicographically, their elements in row-major order) or
 * runs of equal neighbours (consecutive true). Equal compares numbers (-0 equals 0: the first of a
 * run stays); each NaN is its own value (NaN equals nothing), sorted after every number.
 * Returns [first slice of each value, inverse, counts] with slice positions along dim.
 */
function distinct(flat, [outer, n, inner], consecutive) {
  const at = (k, j) => flat[(Math.floor(j / inner) * n + k) * inner + (j % inner)]; // slice k's j-th element
  const width = outer * inner;
  const compare = (a, b) => {
    for (let j = 0; j < width; j++) {
      const c = order(at(a, j), at(b, j));
      if (c) return c;
    }
    return 0;
  };
  const same = (a, b) => {
    for (let j = 0; j < width; j++) if (!(at(a, j) === at(b, j))) return false;
    return true;
  };
  const sorted = Array.from({ length: n }, (_, k) => k);
  if (!consecutive) sorted.sort(compare); // stable: equal slices keep their order
  const firsts = [], inverse = new BigInt64Array(n), counts = [];
  sorted.forEach((k, m) => {
    if (!m || !same(k, sorted[m - 1])) { firsts.push(k); counts.push(0n); }
    inverse[k] = BigInt(firsts.length - 1);
    counts[counts.length - 1]++;
  });
  return [firsts, inverse, BigInt64Array.from(counts)];
}

/**
 * The options of unique and uniqueConsecutive, checked, as [dim (wrapped) or null, returnInverse,
 * returnCounts]. A dim needs every other size nonzero (PyTorch cannot compare empty slices).
 */
function uniqueOptions(input, who, options, names) {
  const o = optionsArg(options, who, names);
  if (o.sorted !== undefined && typeof o.sorted !== 'boolean') throw invalid(`${who}: sorted must be a boolean, got ${describe(o.sorted)}`);
  let dim = null;
  if (o.dim !== undefined && o.dim !== null) {
    const d = count(o.dim, who, 'dim'), shape = input.shape;
    if (!shape.length) throw new OmError('IndexOutOfRange', `${who}: dim ${d} is out of range for a tensor of 0 dims (a 0-d tensor has no slices)`);
    dim = wrapDim(d, shape.length, who);
    const empty = shape.filter((s) => s === 0).length;
    if (empty > 1) throw invalid(`${who}: Number of zero sized dimensions is more than one, so unique cannot be applied (shape [${shape}])`);
    if (empty && shape[dim] !== 0) throw invalid(`${who}: There are 0 sized dimensions, and they aren't selected, so unique cannot be applied (shape [${shape}], dim ${d})`);
  }
  return [dim, o.returnInverse === true, o.returnCounts === true];
}

/**
 * unique's and uniqueConsecutive's results: the distinct values (dim null: 1-D) or slices along dim
 * (input's shape with dim's size their count), and the inverse (input's shape, or [size of dim])
 * and counts the options ask for: values alone, or an array.
 */
function uniqueOf(input, who, options, names, consecutive) {
  handle(input, who, 'input');
  const [dim, returnInverse, returnCounts] = uniqueOptions(input, who, options, names);
  const flat = valuesOf(input, who), shape = input.shape;
  const sizes = dim === null ? [1, flat.length, 1]
    : [shape.slice(0, dim).reduce((a, b) => a * b, 1), shape[dim], shape.slice(dim + 1).reduce((a, b) => a * b, 1)];
  const [firsts, inverse, counts] = distinct(flat, sizes, consecutive);
  const [outer, n, inner] = sizes, out = new flat.constructor(outer * firsts.length * inner);
  for (let o = 0; o < outer; o++) {
    firsts.forEach((k, m) => {
      for (let i = 0; i < inner; i++) out[(o * firsts.length + m) * inner + i] = flat[(o * n + k) * inner + i];
    });
  }
  const v = tensor(out, { dtype: input.dtype, shape: dim === null ? [firsts.length] : shape.map((s, d) => (d === dim ? firsts.length : s)) });
  if (!returnInverse && !returnCounts) return v;
  const results = [v];
  if (returnInverse) results.push(tensor(inverse, { dtype: 'int64', shape: dim === null ? shape : [n] }));
  if (returnCounts) results.push(tensor(counts, { dtype: 'int64', shape: [counts.length] }));
  return results;
}

/**
 * torch.unique(input, { sorted = true, returnInverse = false, returnCounts = false, dim = null }):
 * the distinct values of the flattened input, ascending (sorted: false allows any order, so
 * ascending too); with a dim, the distinct slices along it (rows for dim 0), ascending as PyTorch
 * compares them (lexicographically, in row-major order). With returnInverse and/or returnCounts,
 * [values, inverse (input's shape; with a dim [input.shape[dim]]), counts] in that order. Each NaN
 * is its own value, after every number (PyTorch 1.13's CPU kernel gives NaNs zero counts; NumPy's
 * unique merges them by default).
 */
export function unique(input, options) {
  return uniqueOf(input, 'unique', options, ['sorted', 'returnInverse', 'returnCounts', 'dim'], false);
}

/**
 * torch.unique_consecutive(input, { returnInverse = false, returnCounts = false, dim = null }): each
 * run of equal neighbours of the flattened input (with a dim, of equal slices along it) as one
 * value, in order; the same results as unique.
 */
export function uniqueConsecutive(input, options) {
  return uniqueOf(input, 'uniqueConsecutive', options, ['returnInverse', 'returnCounts', 'dim'], true);
}

const TYPE_NAMES = { float32: 'torch.FloatTensor', int64: 'torch.LongTensor', bool: 'torch.BoolTensor', float64: 'torch.DoubleTensor' };
const BY_TYPE_NAME = Object.fromEntries(Object.entries(TYPE_NAMES).map(([d, n]) => [n, d]));

/**
 * Tensor.type(): PyTorch's type string ('torch.FloatTensor', 'torch.LongTensor',
 * 'torch.BoolTensor', 'torch.DoubleTensor'); type(dtype): the tensor converted to dtype (a dtype
 * name as to() takes, or one of those type strings), itself when it has that dtype already.
 */
export function type(input, dtype) {
  const who = 'type';
  handle(input, who, 'input');
  if (dtype === undefined || dtype === null) return TYPE_NAMES[input.dtype];
  const d = typeof dtype === 'string' && Object.hasOwn(BY_TYPE_NAME, dtype) ? BY_TYPE_NAME[dtype] : dtype;
  if (typeof d === 'string' && d.startsWith('torch.')) {
    throw invalid(`${who}: invalid type: '${dtype}' (the library has ${Object.values(TYPE_NAMES).join(', ')})`);
  }
  return d === input.dtype ? input : to(input, d);
}
