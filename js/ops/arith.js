// PyTorch's arithmetic helpers that are compositions of the library's ops (so their gradients
// and traced graphs are the ops'), and the small functions PyTorch ports reach for by name:
//
//   const y = om.addcmul(x, t1, t2, { value: 0.5 });   // x + 0.5 * t1 * t2 (an optimizer's step)
//   const z = om.lerp(a, b, 0.25);                      // a + 0.25 * (b - a), PyTorch's two forms
//   const s = om.bitwiseRightShift(codes, 4);           // int64 >> 4, arithmetic (sign kept)
//
// Each follows PyTorch's formula step by step, so the values are PyTorch's bits where its kernel
// rounds as written (lerp's vectorised kernel may fuse a multiply-add: an ulp apart there).
import { OmError, invalid } from '../errors.js';
import { describe, toI64 } from '../convert.js';
import { Tensor, handle, tidy, where, tensor, optionsArg, isOptions, cat, elementwise, namedTuple, dtypeCode, wrapChecked } from '../tensor.js';
import { omw } from '../runtime.js';
import { flip } from './shape.js';

const isTensor = (x) => x instanceof Tensor;
const dtypeError = (message) => new OmError('DtypeMismatch', message);

/** A `value` keyword (a trailing options object { value }) or the default 1. */
function valueOption(options, who) {
  const v = optionsArg(options, who, ['value']).value ?? 1;
  if (typeof v !== 'number' && typeof v !== 'bigint' && typeof v !== 'boolean') throw invalid(`${who}: value must be a number, got ${describe(v)}`);
  return v;
}

/** The tensor operands of a composite, checked (disposed, not a Tensor) under their names. */
function tensors(who, named) {
  for (const [name, t] of Object.entries(named)) handle(t, who, name);
}

/**
 * torch.addcmul(input, tensor1, tensor2, { value = 1 }): input + value * tensor1 * tensor2, the
 * product in PyTorch's order ((value * tensor1) * tensor2; value 1 skips its multiply, which is exact).
 */
export function addcmul(input, tensor1, tensor2, options) {
  const who = 'addcmul';
  tensors(who, { input, tensor1, tensor2 });
  const value = valueOption(options, who);
  return tidy(() => input.add((value === 1 ? tensor1 : tensor1.mul(value)).mul(tensor2)));
}

/**
 * torch.addcdiv(input, tensor1, tensor2, { value = 1 }): input + value * tensor1 / tensor2 (as
 * PyTorch: (value * tensor1) / tensor2). Two integer tensors are refused, as PyTorch refuses them
 * (its integer addcdiv was floor division once; use div with a roundingMode).
 */
export function addcdiv(input, tensor1, tensor2, options) {
  const who = 'addcdiv';
  tensors(who, { input, tensor1, tensor2 });
  const value = valueOption(options, who);
  const ints = (t) => t.dtype === 'int64' || t.dtype === 'bool';
  if (ints(tensor1) && ints(tensor2)) {
    throw dtypeError(`${who}: Integer division with addcdiv is no longer supported, and in a future release addcdiv will perform a true division of tensor1 and tensor2. `
      + 'The historic addcdiv behavior can be implemented as (input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as '
      + '(input + value * tensor1 / tensor2) for float inputs. The future addcdiv behavior is just the latter implementation: (input + value * tensor1 / tensor2), for all dtypes.');
  }
  return tidy(() => input.add((value === 1 ? tensor1 : tensor1.mul(value)).div(tensor2)));
}

/**
 * torch.lerp(input, end, weight): input + weight * (end - input) where |weight| < 0.5, else
 * end - (end - input) * (1 - weight) (PyTorch's two forms, each exact at its end). weight is a
 * number or a tensor (broadcast); the inputs are floating (PyTorch refuses integers).
 */
export function lerp(input, end, weight) {
  const who = 'lerp';
  tensors(who, { input, end });
  if (isTensor(weight)) handle(weight, who, 'weight');
  else if (typeof weight !== 'number') throw invalid(`${who}: weight must be a Tensor or a number, got ${describe(weight)}`);
  for (const [name, t] of [['input', input], ['end', end], ...(isTensor(weight) ? [['weight', weight]] : [])]) {
    if (t.dtype !== 'float32' && t.dtype !== 'float64') throw dtypeError(`${who}: ${name} must be floating point (float32 or float64), not ${t.dtype}`);
  }
  if (end.dtype !== input.dtype) throw dtypeError(`${who}: expected dtype ${input.dtype} for \`end\` but got dtype ${end.dtype}`);
  return tidy(() => {
    const diff = end.sub(input);
    if (!isTensor(weight)) return Math.abs(weight) < 0.5 ? input.add(diff.mul(weight)) : end.sub(diff.mul(1 - weight));
    const small = weight.abs().lt(0.5);
    return where(small, input.add(weight.mul(diff)), end.sub(diff.mul(weight.neg().add(1))));
  });
}

// ---- shifts ----

/** 2^k for k = 0..63 as int64 (2^63 wraps to -2^63, as a shift into the sign bit does). */
let powersOfTwo = null;
const powers = () => (powersOfTwo ??= Array.from({ length: 64 }, (_, k) => BigInt.asIntN(64, 1n << BigInt(k))));

/**
 * An int64 shift: a tensor or number (integer; bigint) `input` by `other` bits, both promoted to
 * int64 as PyTorch promotes them first: a bool tensor (or true/false) beside an int64 tensor or an
 * integer is 0/1 in int64; where the result type is bool (both bool) or float32 the shift is
 * DtypeMismatch, as PyTorch's kernels have none for those types.
 * The shift is a multiply by (left) or a floor division by (right) 2^other, taken from a table
 * of 64 powers with other clamped into it, so every step is exact int64 arithmetic: a left shift
 * wraps as C's unsigned one, a right shift keeps the sign (arithmetic); other < 0 or >= 64 gives
 * 0 (left) or the sign's fill, 0 or -1 (right), as PyTorch's kernels.
 */
const shift = (who, left) => (input, other) => {
  if (isTensor(input)) handle(input, who, 'input');
  if (isTensor(other)) handle(other, who, 'other');
  const integer = (x) => (isTensor(x) ? x.dtype === 'int64' : typeof x === 'bigint' || (typeof x === 'number' && Number.isInteger(x)));
  const intResult = integer(input) || integer(other); // else bool or float: no kernel
  const asTensor = (x, name) => {
    if (isTensor(x)) {
      if (x.dtype === 'bool' && intResult) return x.to('int64');
      if (x.dtype !== 'int64') throw dtypeError(`${who}: ${name} must be int64, not ${x.dtype} (PyTorch shifts integers only, bool beside an integer as 0/1)`);
      return x;
    }
    if (typeof x === 'boolean' && intResult) return tensor(x ? 1n : 0n, { dtype: 'int64' });
    if (typeof x === 'bigint' || (typeof x === 'number' && Number.isInteger(x))) return tensor(toI64(x, who, name), { dtype: 'int64' });
    throw invalid(`${who}: ${name} must be an int64 Tensor or an integer, got ${describe(x)}`);
  };
  if (!isTensor(input) && !isTensor(other)) throw invalid(`${who}: input or other must be a Tensor`);
  return tidy(() => {
    const a = asTensor(input, 'input'), b = asTensor(other, 'other');
    const table = tensor(powers(), { dtype: 'int64' });
    const inRange = b.ge(0).logicalAnd(b.lt(64));
    const k = b.clamp(0, 63);
    const p = table.indexSelect(0, k.reshape(-1)).reshape(k.shape); // 2^k
    if (left) return where(inRange, a.mul(p), 0);
    // a >> 63 and the out-of-range shifts fill with the sign; below 63, floor division is exact
    const fill = where(a.lt(0), -1n, 0n);
    const q = a.div(where(k.eq(63), 1, p), { roundingMode: 'floor' });
    return where(inRange.logicalAnd(k.lt(63)), q, fill);
  });
};
export const bitwiseLeftShift = shift('bitwiseLeftShift', true);
export const bitwiseRightShift = shift('bitwiseRightShift', false);

// ---- small functions by their PyTorch names ----

/** torch.xlogy(input, other): input * log(other), 0 where input is 0 (unless other is NaN). */
export function xlogy(input, other) {
  const who = 'xlogy';
  if (!isTensor(input) && !isTensor(other)) throw invalid(`${who}: input or other must be a Tensor`);
  if (isTensor(input)) handle(input, who, 'input');
  if (isTensor(other)) handle(other, who, 'other');
  return tidy(() => {
    const x = isTensor(input) ? input : tensor(input, { dtype: 'float32' });
    const y = isTensor(other) ? other : tensor(other, { dtype: 'float32' });
    const xf = x.dtype === 'float64' || x.dtype === 'float32' ? x : x.float();
    const yf = y.dtype === 'float64' || y.dtype === 'float32' ? y : y.float();
    return where(yf.isnan(), NaN, where(xf.eq(0), 0, xf.mul(yf.log())));
  });
}

/** torch.trunc / torch.fix: toward zero (Ceil of negatives, else Floor; -0 and NaN kept); int64 as it is. */
export function trunc(input) {
  handle(input, 'trunc', 'input');
  if (input.dtype === 'int64' || input.dtype === 'bool') return input.clone();
  return tidy(() => where(input.lt(0), input.ceil(), input.floor()));
}

/**
 * torch.nan_to_num(input, nan = 0, posinf, neginf): NaN, +Infinity and -Infinity replaced (the
 * infinities by the dtype's largest and lowest finite values unless given); integers unchanged.
 */
export function nanToNum(input, ...args) {
  const who = 'nanToNum';
  handle(input, who, 'input');
  let o;
  if (args.length === 1 && isOptions(args[0])) o = optionsArg(args[0], who, ['nan', 'posinf', 'neginf']);
  else o = { nan: args[0], posinf: args[1], neginf: args[2] };
  for (const k of ['nan', 'posinf', 'neginf']) {
    if (o[k] !== undefined && o[k] !== null && typeof o[k] !== 'number') throw invalid(`${who}: ${k} must be a number, got ${describe(o[k])}`);
  }
  if (input.dtype === 'int64' || input.dtype === 'bool') return input.clone();
  const big = input.dtype === 'float64' ? Number.MAX_VALUE : 3.4028234663852886e38;
  const nan = o.nan ?? 0, posinf = o.posinf ?? big, neginf = o.neginf ?? -big;
  return tidy(() => where(input.isnan(), nan, where(input.eq(Infinity), posinf, where(input.eq(-Infinity), neginf, input))));
}

/** torch.count_nonzero(input, dim): the nonzero elements (over dim, one or several; none: all), int64. */
export function countNonzero(input, dim) {
  handle(input, 'countNonzero', 'input');
  return tidy(() => input.ne(0).sum(dim ?? undefined));
}

/** torch.aminmax(input, { dim, keepdim }): [min, max] over dim (none: over all), also .min and .max. */
export function aminmax(input, options) {
  const who = 'aminmax';
  handle(input, who, 'input');
  const o = optionsArg(options, who, ['dim', 'keepdim']);
  if (!input.numel() && (o.dim === undefined || o.dim === null)) {
    throw invalid(`${who}: aminmax(): cannot compute aminmax over an empty dimension as the operation has no identity.`);
  }
  const keep = o.keepdim ?? false;
  const min = input.amin(o.dim ?? undefined, keep);
  try {
    return namedTuple([min, input.amax(o.dim ?? undefined, keep)], ['min', 'max']);
  } catch (e) {
    min.dispose();
    throw e;
  }
}

/**
 * torch.logcumsumexp(input, dim): log of the running sum of exp along dim, computed as
 * m + log(cumsum(exp(x - m))) with m the dim's finite maximum (no overflow; an all -Infinity
 * prefix stays -Infinity).
 */
export function logcumsumexp(input, dim) {
  const who = 'logcumsumexp';
  handle(input, who, 'input');
  if (input.dtype !== 'float32' && input.dtype !== 'float64') throw dtypeError(`${who}: takes float32 or float64, not ${input.dtype}`);
  const d = Number(toI64(dim, who, 'dim'));
  return tidy(() => {
    const m0 = input.amax(d, true).detach();
    const m = where(m0.isfinite(), m0, 0);
    return input.sub(m).exp().cumsum(d).log().add(m);
  });
}

/** torch.fliplr: dim 1 read backwards (at least 2 dims). */
export function fliplr(input) {
  handle(input, 'fliplr', 'input');
  if (input.ndim < 2) throw invalid('fliplr: Input must be >= 2-d.');
  return flip(input, 1);
}

/** torch.flipud: dim 0 read backwards (at least 1 dim). */
export function flipud(input) {
  handle(input, 'flipud', 'input');
  if (input.ndim < 1) throw invalid('flipud: Input must be >= 1-d.');
  return flip(input, 0);
}

/** torch.rot90(input, k = 1, dims = [0, 1]): k quarter turns from dims[0] towards dims[1] (PyTorch's flips and transpose). */
export function rot90(input, k = 1, dims = [0, 1]) {
  const who = 'rot90';
  handle(input, who, 'input');
  if (!Array.isArray(dims) || dims.length !== 2) throw invalid(`${who}: expected total rotation dims == 2, but got dims = ${describe(dims)}`);
  const nd = input.ndim;
  if (nd < 2) throw invalid(`${who}: expected total dims >= 2, but got total dims = ${nd}`);
  const [d0, d1] = dims.map((d, i) => Number(toI64(d, who, `dims[${i}]`)));
  const w0 = d0 < 0 ? d0 + nd : d0, w1 = d1 < 0 ? d1 + nd : d1;
  if (w0 < 0 || w0 >= nd || w1 < 0 || w1 >= nd) throw new OmError('IndexOutOfRange', `${who}: dims [${d0}, ${d1}] are out of range for a tensor of ${nd} dims`);
  if (w0 === w1) throw invalid(`${who}: expected rotation dims to be different, but got dim0 = ${d0} and dim1 = ${d1}`);
  const turns = ((Number(toI64(k, who, 'k')) % 4) + 4) % 4;
  if (turns === 0) return input.clone();
  if (turns === 2) return flip(input, w0, w1);
  return tidy(() => flip(input, turns === 1 ? w1 : w0).transpose(w0, w1));
}

/** torch.movedim / moveaxis(input, source, destination): dims moved (ints or equal-length lists), the others in order. */
export function movedim(input, source, destination) {
  const who = 'movedim';
  handle(input, who, 'input');
  const list = (x, name) => (Array.isArray(x) ? x : [x]).map((d, i) => Number(toI64(d, who, Array.isArray(x) ? `${name}[${i}]` : name)));
  const src = list(source, 'source'), dst = list(destination, 'destination'), nd = input.ndim;
  if (src.length !== dst.length) {
    throw invalid(`${who}: Invalid source or destination dims: source (${describe(source)} dims) should contain the same number of dims as destination (${describe(destination)} dims)`);
  }
  const wrap = (d) => {
    const w = d < 0 ? d + Math.max(nd, 1) : d;
    if (w < 0 || w >= Math.max(nd, 1)) throw new OmError('IndexOutOfRange', `${who}: dim ${d} is out of range for a tensor of ${nd} dims`);
    return w;
  };
  const s = src.map(wrap), t = dst.map(wrap);
  if (new Set(s).size !== s.length) throw invalid(`${who}: repeated dim in \`source\` (${describe(source)})`);
  if (new Set(t).size !== t.length) throw invalid(`${who}: repeated dim in \`destination\` (${describe(destination)})`);
  if (!nd) return input.reshape([]);
  const perm = new Array(nd).fill(-1);
  s.forEach((d, i) => { perm[t[i]] = d; });
  const rest = [...Array(nd).keys()].filter((d) => !s.includes(d));
  for (let i = 0, r = 0; i < nd; i++) if (perm[i] < 0) perm[i] = rest[r++];
  return input.permute(...perm);
}

/** torch.narrow_copy: narrow's elements as a new tensor. */
export function narrowCopy(input, dim, start, length) {
  handle(input, 'narrowCopy', 'input');
  return tidy(() => input.narrow(dim, start, length).clone());
}

/**
 * torch.tensor_split(input, indicesOrSections, dim = 0): n sections (the first size % n one
 * longer), or pieces cut at the given indices (clamped into the dim; empty pieces kept). Views.
 */
export function tensorSplit(input, indicesOrSections, dim = 0) { return splitAt('tensorSplit', input, indicesOrSections, dim); }

function splitAt(who, input, indicesOrSections, dim) {
  handle(input, who, 'input');
  const nd = input.ndim, d0 = Number(toI64(dim, who, 'dim')), d = d0 < 0 ? d0 + nd : d0;
  if (nd === 0) throw invalid(`${who}: tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims`);
  if (d < 0 || d >= nd) throw new OmError('IndexOutOfRange', `${who}: dim ${d0} is out of range for a tensor of ${nd} dims`);
  const n = input.shape[d];
  let cuts;
  if (Array.isArray(indicesOrSections)) {
    cuts = indicesOrSections.map((v, i) => Number(toI64(v, who, `indices[${i}]`)));
  } else {
    const sections = Number(toI64(indicesOrSections, who, 'sections'));
    if (sections <= 0) throw invalid(`${who}: number of sections must be larger than 0, got ${sections}`);
    const base = Math.floor(n / sections), extra = n % sections;
    cuts = [];
    for (let i = 1, at = 0; i < sections; i++) cuts.push((at += base + (i <= extra ? 1 : 0)));
  }
  const out = [];
  try {
    let start = 0;
    for (const c of [...cuts, n]) {
      const s = Math.min(Math.max(start, 0), n), e = Math.min(Math.max(c < 0 ? c + n : c, s), n);
      out.push(input.narrow(d, s, e - s));
      start = c < 0 ? c + n : c;
    }
  } catch (e) {
    for (const x of out) x.dispose();
    throw e;
  }
  return out;
}

/** torch.hsplit / vsplit / dsplit: tensorSplit along dim 1 (dim 0 of a 1-D input), 0 and 2. */
const splitAlong = (who, dim, minDims) => (input, indicesOrSections) => {
  handle(input, who, 'input');
  if (input.ndim < minDims) {
    throw invalid(`${who}: torch.${who} requires a tensor with at least ${minDims} dimension, but got a tensor with ${input.ndim} dimensions!`);
  }
  const d = who === 'hsplit' && input.ndim === 1 ? 0 : dim;
  if (!Array.isArray(indicesOrSections)) {
    const s = Number(toI64(indicesOrSections, who, 'sections'));
    if (s <= 0 || input.shape[d] % s) {
      throw invalid(`${who}: torch.${who} attempted to split along dimension ${d}, but the size of the dimension ${input.shape[d]} is not divisible by the split_size ${s}!`);
    }
  }
  return splitAt(who, input, indicesOrSections, d);
};
export const hsplit = splitAlong('hsplit', 1, 1);
export const vsplit = splitAlong('vsplit', 0, 2);
export const dsplit = splitAlong('dsplit', 2, 3);

// ---- more of torch's functions by name (compositions; values as PyTorch's kernels step them) ----

/** A float of a tensor: float32 and float64 as they are, others to float32 (PyTorch's promotion of float functions). */
const floating = (t) => (t.dtype === 'float32' || t.dtype === 'float64' ? t : t.float());

/**
 * torch.linspace(start, end, steps, { dtype = 'float32' }): PyTorch's steps in float32: start + step * i
 * for the first half, end - step * (steps - 1 - i) for the rest, step = (end - start) / (steps - 1),
 * each a fused multiply-add.
 */
export function linspace(start, end, steps, options) {
  const who = 'linspace';
  for (const [k, v] of [['start', start], ['end', end]]) if (typeof v !== 'number') throw invalid(`${who}: ${k} must be a number, got ${describe(v)}`);
  const n = Number(toI64(steps, who, 'steps'));
  if (n < 0) throw invalid(`${who}: number of steps must be non-negative`);
  const o = optionsArg(options, who, ['dtype']);
  // one C call (om_linspace: PyTorch's two halves in float32 steps), so that a trace sees the
  // number of steps as a size and writes the values as a graph computation where it changes
  return wrapChecked(omw.linspace(start, end, n, dtypeCode(o.dtype ?? 'float32', who)), who);
}

/** torch.eye(n, m = n, { dtype = 'float32' }): ones on the main diagonal. */
export function eye(n, m, options) {
  const who = 'eye';
  if (isOptions(m)) [m, options] = [undefined, m];
  const rows = Number(toI64(n, who, 'n')), cols = m === undefined || m === null ? rows : Number(toI64(m, who, 'm'));
  if (rows < 0 || cols < 0) throw invalid(`${who}: n and m must be greater or equal to 0, got ${rows} and ${cols}`);
  const o = optionsArg(options, who, ['dtype']);
  const v = Array.from({ length: rows * cols }, (_, k) => (k % cols === Math.floor(k / cols) ? 1 : 0));
  return tensor(v, { dtype: o.dtype ?? 'float32', shape: [rows, cols] });
}

/** torch.baddbmm(input, batch1, batch2, { beta = 1, alpha = 1 }): beta * input + alpha * (batch1 @ batch2), 3-D batches; beta 0 ignores input (BLOOM's attention scores). */
export function baddbmm(input, batch1, batch2, options) {
  const who = 'baddbmm';
  tensors(who, { input, batch1, batch2 });
  const o = optionsArg(options, who, ['beta', 'alpha']);
  const beta = o.beta ?? 1, alpha = o.alpha ?? 1;
  for (const [k, v] of [['beta', beta], ['alpha', alpha]]) if (typeof v !== 'number') throw invalid(`${who}: ${k} must be a number, got ${describe(v)}`);
  for (const [k, t] of [['batch1', batch1], ['batch2', batch2]]) if (t.ndim !== 3) throw new OmError('ShapeMismatch', `${who}: ${k} must be a 3D tensor, got ${t.ndim} dims`);
  return tidy(() => {
    const p = batch1.matmul(batch2), scaled = alpha === 1 ? p : p.mul(alpha);
    if (beta === 0) return scaled;
    return scaled.add(beta === 1 ? input : input.mul(beta));
  });
}

/** torch.mm: the product of two matrices (2-D each). */
export function mm(input, mat2) {
  tensors('mm', { input, mat2 });
  if (input.ndim !== 2) throw new OmError('ShapeMismatch', `mm: self must be a matrix, got ${input.ndim} dims`);
  if (mat2.ndim !== 2) throw new OmError('ShapeMismatch', `mm: mat2 must be a matrix, got ${mat2.ndim} dims`);
  return input.matmul(mat2);
}

/** torch.mv: a matrix times a vector. */
export function mv(input, vec) {
  tensors('mv', { input, vec });
  if (input.ndim !== 2 || vec.ndim !== 1) throw new OmError('ShapeMismatch', `mv: expected a matrix and a vector, got ${input.ndim} and ${vec.ndim} dims`);
  return input.matmul(vec);
}

/** torch.hstack: cat along dim 1 (dim 0 when the tensors are 1-D). */
export function hstack(tensorList) {
  if (!Array.isArray(tensorList) || !tensorList.length) throw invalid('hstack: expects a non-empty list of Tensors');
  tensorList.forEach((t, i) => handle(t, 'hstack', `tensors[${i}]`));
  return tidy(() => {
    const ts = tensorList.map((t) => (t.ndim === 0 ? t.reshape([1]) : t));
    return cat(ts, ts[0].ndim === 1 ? 0 : 1);
  });
}

/** torch.vstack: cat along dim 0 of the tensors made at least 2-D (a 1-D [n] as [1, n]). */
export function vstack(tensorList) {
  if (!Array.isArray(tensorList) || !tensorList.length) throw invalid('vstack: expects a non-empty list of Tensors');
  tensorList.forEach((t, i) => handle(t, 'vstack', `tensors[${i}]`));
  return tidy(() => cat(tensorList.map((t) => (t.ndim >= 2 ? t : t.reshape([1, -1]))), 0));
}

/** torch.exp2, log2, log10 (float; integers to float32): 2 ** x, log(x) / log(2), log(x) / log(10) (within an ulp or two of PyTorch's libm). */
export const exp2 = (input) => { handle(input, 'exp2', 'input'); return tidy(() => elementwise('exp2', 'pow', ['base', 'input'], [2, floating(input)])); };
export const log2 = (input) => { handle(input, 'log2', 'input'); return tidy(() => floating(input).log().div(Math.LN2)); };
export const log10 = (input) => { handle(input, 'log10', 'input'); return tidy(() => floating(input).log().div(Math.LN10)); };
/** torch.reciprocal: 1 / x (integers to float32). */
export const reciprocal = (input) => { handle(input, 'reciprocal', 'input'); return tidy(() => floating(input).pow(-1)); };
/** torch.frac: x - trunc(x) (floats). */
export const frac = (input) => {
  handle(input, 'frac', 'input');
  if (input.dtype !== 'float32' && input.dtype !== 'float64') throw dtypeError(`frac: takes float32 or float64, not ${input.dtype}`);
  return tidy(() => input.sub(trunc(input)));
};
/** torch.clamp_min / clamp_max. */
export const clampMin = (input, min) => { handle(input, 'clampMin', 'input'); return input.clamp(min, null); };
export const clampMax = (input, max) => { handle(input, 'clampMax', 'input'); return input.clamp(null, max); };
/** torch.hypot: sqrt(a^2 + b^2) of floats, scaled by the larger magnitude (no overflow); infinities win over NaN. */
export function hypot(input, other) {
  tensors('hypot', { input, other });
  return tidy(() => {
    const a = floating(input).abs(), b = floating(other).abs();
    const m = a.maximum(b), n = a.minimum(b), safe = where(m.eq(0), 1, m), r = n.div(safe);
    const h = m.mul(r.mul(r).add(1).sqrt());
    return where(a.eq(Infinity).logicalOr(b.eq(Infinity)), Infinity, where(m.eq(0), 0, h));
  });
}
/** torch.logaddexp: log(e^a + e^b) as max + log1p(exp(-|a - b|)); equal infinities give themselves. */
export function logaddexp(input, other) {
  tensors('logaddexp', { input, other });
  return tidy(() => {
    const a = floating(input), b = floating(other), m = a.maximum(b);
    return where(a.isinf().logicalAnd(a.eq(b)), a, m.add(a.sub(b).abs().neg().exp().log1p()));
  });
}
/** torch.fmax / fmin: maximum / minimum where a NaN loses to a number. */
export const fmax = (input, other) => { tensors('fmax', { input, other }); return tidy(() => where(input.isnan(), other, where(other.isnan(), input, input.maximum(other)))); };
export const fmin = (input, other) => { tensors('fmin', { input, other }); return tidy(() => where(input.isnan(), other, where(other.isnan(), input, input.minimum(other)))); };
/** torch.isclose(input, other, { rtol = 1e-5, atol = 1e-8, equalNan = false }): |a - b| <= atol + rtol |b|, or equal (infinities). */
export function isclose(input, other, options) {
  const who = 'isclose';
  tensors(who, { input, other });
  const o = optionsArg(options, who, ['rtol', 'atol', 'equalNan']);
  const rtol = o.rtol ?? 1e-5, atol = o.atol ?? 1e-8;
  return tidy(() => {
    const a = floating(input), b = floating(other);
    const close = a.eq(b).logicalOr(a.sub(b).abs().le(b.abs().mul(rtol).add(atol)).logicalAnd(a.isfinite()).logicalAnd(b.isfinite()));
    return o.equalNan ? close.logicalOr(a.isnan().logicalAnd(b.isnan())) : close;
  });
}
/** torch.allclose: isclose everywhere, as a JS boolean (reads the values: not in a trace). */
export const allclose = (input, other, options) => om2bool(() => isclose(input, other, options).all());
/** torch.equal: the same shape and values, as a JS boolean. */
export function equal(input, other) {
  tensors('equal', { input, other });
  if (input.ndim !== other.ndim || input.shape.some((n, i) => n !== other.shape[i])) return false;
  return om2bool(() => input.eq(other).all());
}
const om2bool = (f) => tidy(() => Boolean(f().item()));
/** torch.broadcast_to: expand. */
export const broadcastTo = (input, shape) => { handle(input, 'broadcastTo', 'input'); return input.expand(shape); };
/** torch.logit(input, eps): log(p / (1 - p)), p clamped into [eps, 1 - eps] when eps is given. */
export function logit(input, eps = null) {
  handle(input, 'logit', 'input');
  if (eps !== null && eps !== undefined && typeof eps !== 'number') throw invalid(`logit: eps must be a number, got ${describe(eps)}`);
  return tidy(() => {
    const p = eps === null || eps === undefined ? floating(input) : floating(input).clamp(eps, 1 - eps);
    return p.div(p.neg().add(1)).log();
  });
}
/** torch.deg2rad / rad2deg: times pi / 180 and 180 / pi (floats). */
export const deg2rad = (input) => { handle(input, 'deg2rad', 'input'); return floating(input).mul(Math.PI / 180); };
export const rad2deg = (input) => { handle(input, 'rad2deg', 'input'); return floating(input).mul(180 / Math.PI); };
/** torch.nansum / nanmean over dim (none: all), NaN skipped (nanmean of only NaN is NaN). */
export function nansum(input, dim, keepdim = false) {
  handle(input, 'nansum', 'input');
  return tidy(() => where(input.isnan(), 0, input).sum(dim ?? undefined, keepdim));
}
export function nanmean(input, dim, keepdim = false) {
  handle(input, 'nanmean', 'input');
  return tidy(() => nansum(input, dim, keepdim).div(input.isnan().logicalNot().sum(dim ?? undefined, keepdim)));
}
/** torch.trace: the sum of a matrix's main diagonal. */
export function trace(input) {
  handle(input, 'trace', 'input');
  if (input.ndim !== 2) throw invalid(`trace: expected a matrix, but got tensor with dim ${input.ndim}`);
  return tidy(() => input.diagonal().sum());
}

/** A dim of a tensor of nd dims, wrapped (a 0-d tensor has dims 0 and -1), or IndexOutOfRange under who. */
export function wrapDim(d, nd, who) {
  const n = Math.max(nd, 1), w = d < 0 ? d + n : d;
  if (w < 0 || w >= n) throw new OmError('IndexOutOfRange', `${who}: dim ${d} is out of range for a tensor of ${nd} dims`);
  return w;
}

/**
 * torch.diff(input, n = 1, dim = -1, prepend, append): the n-th forward difference along dim,
 * x[1:] - x[:-1] applied n times (bool: x[1:] != x[:-1], PyTorch's logical_xor) after prepend
 * and append are concatenated there. Slices to the end and to -1, so a symbolic size traces.
 */
export function diff(input, n = 1, dim = -1, prepend = null, append = null) {
  const who = 'diff';
  handle(input, who, 'input');
  if (input.ndim === 0) throw invalid(`${who}: diff expects input to be at least one-dimensional`);
  const order = Number(toI64(n ?? 1, who, 'n'));
  if (order < 0) throw invalid(`${who}: order must be non-negative but got ${order}`);
  const d = wrapDim(Number(toI64(dim ?? -1, who, 'dim')), input.ndim, who);
  const ends = [['prepend', prepend], ['append', append]].filter(([, t]) => t !== null && t !== undefined);
  for (const [name, t] of ends) {
    handle(t, who, name);
    if (t.ndim !== input.ndim) {
      throw invalid(`${who}: diff expects prepend or append to be the same dimension as input (${name} has ${t.ndim} dims, input ${input.ndim})`);
    }
  }
  if (order === 0 && !ends.length) return input.clone();
  return tidy(() => {
    let x = ends.length ? cat([prepend, input, append].filter((t) => t !== null && t !== undefined), d) : input;
    for (let i = 0; i < order; i++) {
      const [hi, lo] = [x.slice(d, 1), x.slice(d, 0, -1)];
      x = x.dtype === 'bool' ? hi.ne(lo) : hi.sub(lo);
    }
    return x;
  });
}

/**
 * torch.take_along_dim(input, indices, dim): input.gather(dim, indices) after input and indices
 * are broadcast to each other off dim (PyTorch's helper); no dim takes the flattened input at the
 * flattened indices. Indices outside the dim are gather's IndexOutOfRange.
 */
export function takeAlongDim(input, indices, dim = null) {
  const who = 'takeAlongDim';
  tensors(who, { input, indices });
  if (indices.dtype !== 'int64') throw dtypeError(`${who}: dtype of indices should be int64 (Long) but got ${indices.dtype}`);
  if (dim === null || dim === undefined) return tidy(() => input.reshape([-1]).gather(0, indices.reshape([-1])));
  const nd = input.ndim;
  if (indices.ndim !== nd) {
    throw invalid(`${who}: input and indices should have the same number of dimensions, but got ${nd} dimensions for input, and ${indices.ndim} dimensions for indices`);
  }
  const d = wrapDim(Number(toI64(dim, who, 'dim')), nd, who);
  const [xs, is] = [input.shape, indices.shape];
  const common = xs.map((s, i) => {
    if (i === d) return 0;
    if (s !== is[i] && s !== 1 && is[i] !== 1) {
      throw new OmError('ShapeMismatch', `${who}: input [${xs}] and indices [${is}] do not broadcast off dim ${d} (${s} and ${is[i]} at dim ${i})`);
    }
    return s === 1 ? is[i] : s;
  });
  const to = (t, s) => {
    const shape = common.map((c, i) => (i === d ? s[d] : c));
    return shape.every((c, i) => c === s[i]) ? t : t.expand(shape);
  };
  return tidy(() => to(input, xs).gather(d, to(indices, is)));
}
