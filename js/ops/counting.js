// Counting and distinct values in PyTorch's names: bincount, unique, uniqueConsecutive, and
// Tensor.type (PyTorch's type strings). bincount's and unique's result sizes are decided by the
// input's values, so they read them: with a traced input that is TraceError DataDependent (as
// nonzero, tests/js/nonzero.test.mjs), never a size baked into a graph; a constant input traces
// (its result is a constant, and bincount's traced float32 weights are summed by index_add).
//
//   const counts = om.bincount(labels, { minlength: 10 });           // int64 [10]
//   const [values, inverse, counts] = om.unique(x, { returnInverse: true, returnCounts: true });
import { OmError, TraceError, invalid } from '../errors.js';
import { describe } from '../convert.js';
import { Tensor, handle, tidy, tensor, zeros, optionsArg } from '../tensor.js';
import { to } from './shape.js';

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

/**
 * The distinct values of input's elements (row-major) and, for each element, the index of its
 * value among them and each value's count: sorted (consecutive false) or runs of equal neighbours
 * (consecutive true). Equal compares numbers (-0 equals 0: the first of a run stays); each NaN is
 * its own value (NaN equals nothing), sorted after every number.
 */
function distinct(input, who, consecutive) {
  const flat = valuesOf(input, who), n = flat.length;
  const order = Array.from({ length: n }, (_, i) => i);
  const isNan = (v) => typeof v === 'number' && v !== v;
  if (!consecutive) {
    order.sort((a, b) => { // stable: equal values keep their order
      const x = flat[a], y = flat[b];
      if (isNan(x) || isNan(y)) return isNan(x) - isNan(y);
      return x < y ? -1 : x > y ? 1 : 0;
    });
  }
  const firsts = [], inverse = new BigInt64Array(n), counts = [];
  for (let k = 0; k < n; k++) {
    const i = order[k];
    if (!k || !(flat[i] === flat[order[k - 1]])) { firsts.push(i); counts.push(0n); }
    inverse[i] = BigInt(firsts.length - 1);
    counts[counts.length - 1]++;
  }
  const T = flat.constructor;
  return [T.from(firsts.map((i) => flat[i])), inverse, BigInt64Array.from(counts)];
}

/** The options of unique and uniqueConsecutive, checked, as [returnInverse, returnCounts]. */
function uniqueOptions(who, options, names) {
  const o = optionsArg(options, who, names);
  if (o.dim !== undefined && o.dim !== null) {
    throw invalid(`${who}: dim is not supported (the unique slices along a dim); leave it null for the flattened input's values`);
  }
  if (o.sorted !== undefined && typeof o.sorted !== 'boolean') throw invalid(`${who}: sorted must be a boolean, got ${describe(o.sorted)}`);
  return [o.returnInverse === true, o.returnCounts === true];
}

/** The tensors of a distinct() result that the options ask for: values alone, or an array. */
function uniqueResult(input, [values, inverse, counts], returnInverse, returnCounts) {
  const v = tensor(values, { dtype: input.dtype, shape: [values.length] });
  if (!returnInverse && !returnCounts) return v;
  const out = [v];
  if (returnInverse) out.push(tensor(inverse, { dtype: 'int64', shape: input.shape }));
  if (returnCounts) out.push(tensor(counts, { dtype: 'int64', shape: [counts.length] }));
  return out;
}

/**
 * torch.unique(input, { sorted = true, returnInverse = false, returnCounts = false, dim = null }):
 * the distinct values of the flattened input, ascending (sorted: false allows any order, so
 * ascending too); with returnInverse and/or returnCounts, [values, inverse (input's shape),
 * counts] in that order. Each NaN is its own value, after every number (PyTorch 1.13's CPU kernel
 * gives NaNs zero counts; NumPy's unique merges them by default).
 */
export function unique(input, options) {
  const who = 'unique';
  handle(input, who, 'input');
  const [inv, cnt] = uniqueOptions(who, options, ['sorted', 'returnInverse', 'returnCounts', 'dim']);
  return uniqueResult(input, distinct(input, who, false), inv, cnt);
}

/**
 * torch.unique_consecutive(input, { returnInverse = false, returnCounts = false, dim = null }): each
 * run of equal neighbours of the flattened input as one value, in order; the same results as unique.
 */
export function uniqueConsecutive(input, options) {
  const who = 'uniqueConsecutive';
  handle(input, who, 'input');
  const [inv, cnt] = uniqueOptions(who, options, ['returnInverse', 'returnCounts', 'dim']);
  return uniqueResult(input, distinct(input, who, true), inv, cnt);
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
