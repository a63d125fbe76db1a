// Reductions (src/ops/reduce.c) as functions of the tensor first: sum, mean, amax, amin, max,
// min, argmax, argmin. js/ops/table.js installs them as Tensor methods (x.sum(1, true)).
import { omw, checkHandle, marshal, dtypeCodes } from '../runtime.js';
import { toI64, toI32, toBool } from '../convert.js';
import { handle, wrap, applyOp, applyAll, dimsArg } from '../tensor.js';

/**
 * A reduction over dim (undefined/null: all dims; a number or an array of numbers). boolAs: the
 * dtype a bool input is cast to first (sum's int64: PyTorch counts the trues), else none.
 */
const reduction = (who, boolAs = null) => (input, dim, keepdim) => {
  const h = handle(input, who, 'input');
  const k = toBool(keepdim, who, 'keepdim');
  const attrs = [k ? 1n : 0n, ...dimsArg(dim, who)];
  if (boolAs === null || input.dtype !== 'bool') return applyOp(who, who, [h], attrs);
  const c = checkHandle(omw.cast(h, dtypeCodes.get(boolAs)), who);
  try {
    return applyOp(who, who, [c], attrs);
  } finally {
    omw.release(c);
  }
};

export const sum = reduction('sum', 'int64');
export const mean = reduction('mean');
export const amax = reduction('amax');
export const amin = reduction('amin');

/** max/min: over everything (one tensor), or along dim ([values, indices]). */
const extreme = (who, allOp, dimOp) => (input, dim, keepdim) => {
  const h = handle(input, who, 'input');
  const k = toBool(keepdim, who, 'keepdim');
  if (dim === undefined || dim === null) return applyOp(who, allOp, [h], [k ? 1n : 0n]);
  return applyAll(who, dimOp, [h], [toI64(dim, who, 'dim'), k ? 1n : 0n], [], 2);
};

export const max = extreme('max', 'amax', 'max_dim');
export const min = extreme('min', 'amin', 'min_dim');

/** argmax/argmin along dim, or (no dim) the index into the flattened tensor (all-ones shape with keepdim). */
const position = (who, fn) => (input, dim, keepdim) => {
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
