// Reductions (src/ops/reduce.c) as functions of the tensor first: sum, mean, amax, amin, max,
// min, argmax, argmin; and composed of them: var, std, all, any, logsumexp. js/ops/table.js
// installs them as Tensor methods (x.sum(1, true)).
import { OmError, invalid } from '../errors.js';
import { omw, checkHandle, lastError, marshal, dtypeCodes } from '../runtime.js';
import { describe, toI64, toI32, toBool } from '../convert.js';
import { Tensor, handle, wrap, applyOp, applyAll, valuesIndices, dimsArg, isOptions, tidy, where, elementwise } from '../tensor.js';

/**
 * A reduction over dim (undefined/null: all dims; a number or an array of numbers). boolAs: the
 * dtype a bool input is cast to first (sum's int64: PyTorch counts the trues), else none; back:
 * the result cast back to bool (amax and amin of bool are PyTorch's any and all).
 */
const reduction = (who, boolAs = null, back = false) => (input, dim, keepdim) => {
  const h = handle(input, who, 'input');
  const k = toBool(keepdim, who, 'keepdim');
  const attrs = [k ? 1n : 0n, ...dimsArg(dim, who)];
  if (boolAs === null || input.dtype !== 'bool') return applyOp(who, who, [h], attrs);
  const c = checkHandle(omw.cast(h, dtypeCodes.get(boolAs)), who);
  try {
    if (!back) return applyOp(who, who, [c], attrs);
    return tidy(() => applyOp(who, who, [c], attrs).to('bool'));
  } finally {
    omw.release(c);
  }
};

export const sum = reduction('sum', 'int64');
export const mean = reduction('mean');
export const amax = reduction('amax', 'int64', true);
export const amin = reduction('amin', 'int64', true);
/** torch.prod over dim (none: all; a bool input counts as int64, as PyTorch's). */
export const prod = reduction('prod', 'int64');

/** max/min: over everything (one tensor), along dim ([values, indices], also .values and
 *  .indices), or, given a tensor (torch.max(input, other)), elementwise: maximum/minimum. Of
 *  bool (PyTorch's any and all, and where): computed as int64, the values cast back. */
const extreme = (who, allOp, dimOp) => function ext(input, dim, keepdim) {
  if (dim instanceof Tensor) return elementwise(who, who === 'max' ? 'maximum' : 'minimum', ['input', 'other'], [input, dim]);
  if (input instanceof Tensor && input.dtype === 'bool') {
    return tidy(() => {
      const r = ext(input.to('int64'), dim, keepdim);
      return r instanceof Tensor ? r.to('bool') : valuesIndices([r[0].to('bool'), r[1]]);
    });
  }
  const h = handle(input, who, 'input');
  const k = toBool(keepdim, who, 'keepdim');
  if (dim === undefined || dim === null) return applyOp(who, allOp, [h], [k ? 1n : 0n]);
  return valuesIndices(applyAll(who, dimOp, [h], [toI64(dim, who, 'dim'), k ? 1n : 0n], [], 2));
};

export const max = extreme('max', 'amax', 'max_dim');
export const min = extreme('min', 'amin', 'min_dim');

/**
 * argmax/argmin along dim, or (no dim) the index into the flattened tensor (all-ones shape with
 * keepdim). C computes them with max_dim/min_dim, whose errors (JS: max/min) are renamed.
 */
const position = (who, c) => (input, dim, keepdim) => {
  const base = who.slice(3);
  const fn = (hh, d, kk) => {
    const r = c(hh, d, kk) >>> 0;
    if (r) return r;
    const e = lastError(who);
    throw e.message.startsWith(`${base}: `) ? new OmError(e.kind, `${who}: ${e.message.slice(base.length + 2)}`) : e;
  };
  const h = handle(input, who, 'input');
  const k = toBool(keepdim, who, 'keepdim');
  if (dim !== undefined && dim !== null) {
    return wrap(checkHandle(fn(h, toI32(dim, who, 'dim'), k ? 1 : 0), who));
  }
  const [ps] = marshal(['i64', [-1n]]);
  const flat = checkHandle(omw.reshape(h, ps, 1), who);
  let r;
  try {
    r = checkHandle(fn(flat, 0, 0), who);
  } finally {
    omw.release(flat);
  }
  if (!k) return wrap(r);
  try {
    const [pk] = marshal(['i64', input.shape.map(() => 1n)]);
    return wrap(checkHandle(omw.reshape(r, pk, input.ndim), who));
  } finally {
    omw.release(r);
  }
};

export const argmax = position('argmax', (h, d, k) => omw.argmax(h, d, k));
export const argmin = position('argmin', (h, d, k) => omw.argmin(h, d, k));

/** How many elements a reduction over dims (dimsArg's list; empty: all) of shape takes together. */
function reducedCount(shape, dims, who) {
  if (!dims.length) return shape.reduce((a, b) => a * b, 1);
  const nd = shape.length, seen = new Set();
  for (const d of dims.map(Number)) {
    if (d < -Math.max(nd, 1) || d >= Math.max(nd, 1)) throw new OmError('IndexOutOfRange', `${who}: dim ${d} is out of range for a tensor of ${nd} dims`);
    seen.add(d < 0 ? d + nd : d);
  }
  return [...seen].reduce((a, d) => a * (nd ? shape[d] : 1), 1);
}

/**
 * var/std as PyTorch's torch.var(input, dim, unbiased = true, keepdim = false) or
 * torch.var(input, dim, { correction = 1 (or unbiased), keepdim = false }): the sum of squared deviations from
 * the mean over dim, divided by N - correction (N the elements reduced together; 0 or less gives
 * inf or NaN, as PyTorch). float32 only.
 */
const spread = (who, root) => (input, dim, unbiased, keepdim) => {
  handle(input, who, 'input');
  let correction = 1, keep = keepdim;
  if (isOptions(unbiased)) {
    if (keepdim !== undefined) throw invalid(`${who}: keepdim goes in the options object ({ correction, keepdim }), not after it`);
    const extra = Object.keys(unbiased).filter((k) => k !== 'correction' && k !== 'keepdim' && k !== 'unbiased');
    if (extra.length) throw invalid(`${who}: unknown option '${extra[0]}' (correction, unbiased, keepdim)`);
    // PyTorch's keyword unbiased (x.var(-1, keepdim=True, unbiased=False) in ports) is correction 1 or 0
    if (unbiased.unbiased !== undefined && unbiased.correction !== undefined) throw invalid(`${who}: give correction or unbiased, not both`);
    correction = unbiased.unbiased !== undefined ? (toBool(unbiased.unbiased, who, 'unbiased') ? 1 : 0) : unbiased.correction ?? 1;
    keep = unbiased.keepdim;
    if (typeof correction !== 'number' || !Number.isFinite(correction)) throw invalid(`${who}: correction must be a finite number, got ${describe(correction)}`);
  } else if (unbiased !== undefined) {
    correction = toBool(unbiased, who, 'unbiased') ? 1 : 0;
  }
  if (input.dtype !== 'float32') throw new OmError('DtypeMismatch', `${who}: input must be float32, not ${input.dtype} (call .float() first)`);
  const k = toBool(keep, who, 'keepdim');
  const dims = dimsArg(dim, who);
  const n = reducedCount(input.shape, dims, who);
  const list = dims.length ? dims.map(Number) : undefined;
  return tidy(() => {
    const d = input.sub(mean(input, list, true));
    const v = sum(d.mul(d), list, k).div(n === 0 ? NaN : n - correction); // nothing reduced: NaN, as PyTorch
    return root ? v.sqrt() : v;
  });
};

export const variance = spread('var', false);
export const std = spread('std', true);

/** all/any as PyTorch: whether every (any) element over dim is nonzero, as bool (true over none for all). */
const truth = (who, every) => (input, dim, keepdim) => {
  handle(input, who, 'input');
  const k = toBool(keepdim, who, 'keepdim');
  const list = dim === undefined || dim === null ? undefined : Array.isArray(dim) ? dim : [dim];
  return tidy(() => {
    const count = sum(every ? input.eq(0) : input.ne(0), list, k);
    return every ? count.eq(0) : count.gt(0);
  });
};

export const all = truth('all', true);
export const any = truth('any', false);

/** torch.logsumexp(input, dim, keepdim): log(sum(exp(x))) over dim, shifted by the max (which is
 * taken as 0 where it is infinite, so all -inf gives -inf and +inf gives +inf, as PyTorch). */
export function logsumexp(input, dim, keepdim) {
  const who = 'logsumexp';
  handle(input, who, 'input');
  if (dim === undefined || dim === null) throw invalid(`${who}: dim is required (a dim or an array of dims), as torch.logsumexp`);
  const k = toBool(keepdim, who, 'keepdim');
  const list = Array.isArray(dim) ? dim : [dim];
  const empty = reducedCount(input.shape, dimsArg(list, who), who) === 0;
  return tidy(() => {
    const x = input.dtype === 'float32' ? input : input.float();
    if (empty) return sum(x, list, k).add(-Infinity); // the log of an empty sum, as PyTorch (amax has no value there)
    const m = amax(x, list, true).detach();
    const shift = where(m.abs().eq(Infinity), 0, m);
    const r = sum(x.sub(shift).exp(), list, true).log().add(shift);
    return k ? r : r.squeeze(list);
  });
}
