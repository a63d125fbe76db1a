// Order statistics in PyTorch's names, written with the library's ops (sort, gather, lerp), so
// their gradients and traced graphs are those ops': median, nanmedian, quantile, nanquantile.
//
//   const m = x.median();                                  // the lower middle of all elements, 0-d
//   const [v, i] = x.median(1, true);                      // per row, with its index, dim kept
//   const q = om.quantile(x, om.tensor([0.25, 0.75]), { dim: 0, interpolation: 'midpoint' });
//
// A sort puts NaNs last (and keeps equal values in index order), so a row's numbers are its first
// m = (count of non-NaN) sorted elements. Every position below is computed from m and the NaN
// count as tensors, never from a JS size, so an axis traced as symbolic stays symbolic.
import { OmError, invalid } from '../errors.js';
import { describe, toI64 } from '../convert.js';
import { Tensor, handle, tidy, where, tensor, optionsArg, valuesIndices } from '../tensor.js';
import { wrapDim } from './arith.js';

const dtypeError = (message) => new OmError('DtypeMismatch', message);

/**
 * The lower middle of input along dim d (a wrapped dim of an input with at least one dim) and its
 * index: [values, indices] with d kept (size 1). With ignoreNan the middle of the numbers (NaN when
 * there are none), else NaN at the first NaN's index when the row holds one.
 */
function middle(input, d, ignoreNan) {
  const [sorted, order] = input.sort({ dim: d });
  const nan = input.isnan();
  const m = nan.logicalNot().sum(d, true); // int64 counts
  const lower = m.sub(1).floorDivide(2); // (m - 1) // 2: -1 for no numbers
  const at = ignoreNan ? lower.clampMin(0) : where(nan.any(d, true), m, lower);
  return [sorted.gather(d, at), order.gather(d, at)];
}

/** The median family's checks: input a float32 or int64 Tensor (PyTorch: no bool). */
function orderInput(who, input) {
  handle(input, who, 'input');
  if (input.dtype === 'bool') throw dtypeError(`${who}: "${who}" not implemented for 'Bool'`);
}

function medianOf(who, ignoreNan) {
  return (input, dim, keepdim) => {
    orderInput(who, input);
    if ((dim === undefined || dim === null) && keepdim === undefined) {
      // the whole tensor: its flattened median as 0-d; of nothing, NaN (PyTorch's)
      return tidy(() => {
        const flat = input.reshape([-1]);
        // of nothing: NaN, still from input (an empty gradient, as PyTorch's)
        if (flat.shape[0] === 0) return input.dtype === 'int64' ? tensor(NaN) : flat.sum().mul(NaN);
        return middle(flat, 0, ignoreNan)[0].reshape([]);
      });
    }
    // keepdim alone is PyTorch's median(input, dim=-1, keepdim)
    const d = wrapDim(Number(toI64(dim ?? -1, who, 'dim')), input.ndim, who);
    if (input.ndim && input.shape[d] === 0) {
      throw new OmError('IndexOutOfRange', `${who}: median(): Expected reduction dim ${d} to have non-zero size.`);
    }
    return tidy(() => {
      const x = input.ndim ? input : input.reshape([1]);
      const [v, i] = middle(x, d, ignoreNan);
      const keep = keepdim === true || (keepdim !== undefined && keepdim !== false && Boolean(keepdim));
      const shape = keep ? input.shape.map((s, k) => (k === d ? 1 : s)) : input.shape.filter((_, k) => k !== d);
      return valuesIndices([v.reshape(shape), i.reshape(shape)]);
    });
  };
}

/**
 * torch.median(input): the lower of the two middle values of all elements (NaN if any is NaN), 0-d.
 * torch.median(input, dim = -1, keepdim = false) (or { dim, keepdim }; keepdim alone: dim -1):
 * [values, indices] along dim.
 * Equal values: the index of the one a stable sort puts in the middle. The gradient goes to that
 * element (PyTorch's median(input) without a dim spreads it over every element equal to the
 * median instead; the sums agree).
 */
export const median = medianOf('median', false);
/** torch.nanmedian: median of the numbers only (NaNs ignored; NaN where a row has none). */
export const nanmedian = medianOf('nanmedian', true);

const INTERPOLATIONS = ['linear', 'lower', 'higher', 'midpoint', 'nearest'];

/**
 * PyTorch's quantile_impl step by step: the sorted row, ranks q * (n - 1) in float32 (NaN in the
 * row: the last rank, so NaN; ignoring NaN: q * (m - 1) over its m numbers, at least 0), rounded
 * down, up or to the nearest even for lower, higher and nearest, then the values at the ranks
 * below and above lerped by the rank's fraction (midpoint: by 0.5).
 */
function quantileOf(who, ignoreNan) {
  return (input, q, ...rest) => {
    handle(input, who, 'input');
    let [dim, keepdim, interpolation] = rest;
    if (rest.length && rest[rest.length - 1] !== null && typeof rest[rest.length - 1] === 'object' && !(rest[rest.length - 1] instanceof Tensor)) {
      const o = optionsArg(rest[rest.length - 1], who, ['dim', 'keepdim', 'interpolation']);
      [dim, keepdim, interpolation] = [rest.length > 1 ? rest[0] : o.dim, rest.length > 2 ? rest[1] : o.keepdim, o.interpolation];
    }
    const mode = interpolation ?? 'linear';
    if (!INTERPOLATIONS.includes(mode)) {
      throw invalid(`${who}: interpolation must be one of linear, lower, higher, midpoint or nearest, got ${describe(mode)}`);
    }
    if (input.dtype !== 'float32') throw dtypeError(`${who}: quantile() input tensor must be either float or double dtype, not ${input.dtype}`);
    if (q instanceof Tensor) {
      handle(q, who, 'q');
      if (q.ndim > 1) throw new OmError('ShapeMismatch', `${who}: quantile() q must be a scalar or 1D tensor, got [${q.shape}]`);
      if (q.dtype !== input.dtype) throw dtypeError(`${who}: quantile() q tensor must be same dtype as the input tensor (${input.dtype}), not ${q.dtype}`);
    } else if (typeof q !== 'number') {
      throw invalid(`${who}: q must be a number or a Tensor, got ${describe(q)}`);
    }
    const qs = q instanceof Tensor ? null : Math.fround(q);
    if (qs !== null && !(qs >= 0 && qs <= 1)) throw invalid(`${who}: quantile() q must be in the range [0, 1] but got ${q}`);
    const d = dim === undefined || dim === null ? null : wrapDim(Number(toI64(dim, who, 'dim')), input.ndim, who);
    if (input.numel() === 0) throw invalid(`${who}: quantile() input tensor must be non-empty`);
    return tidy(() => {
      if (q instanceof Tensor && q.lt(0).logicalOr(q.gt(1)).logicalOr(q.isnan()).any().item()) {
        throw invalid(`${who}: quantile() q values must be in the range [0, 1]`);
      }
      // the reduced axis last: [..., n]
      const x = d === null ? input.reshape([-1]) : (input.ndim ? input.movedim(d, -1) : input.reshape([1]));
      const sorted = x.sort({ dim: -1 }).values;
      const nan = sorted.isnan();
      const m = nan.logicalNot().sum(-1, true); // [..., 1] int64
      const qv = (q instanceof Tensor ? q : tensor(qs)).reshape([-1]); // [Q]
      let ranks;
      if (ignoreNan) {
        ranks = qv.mul(m.sub(1)).clampMin(0); // all NaN: rank 0, a NaN
      } else {
        const last = m.add(nan.sum(-1, true)).sub(1); // n - 1, from the tensor (a symbolic n stays one)
        ranks = where(nan.any(-1, true), last.float(), qv.mul(last));
      }
      if (mode === 'lower') ranks = ranks.floor();
      else if (mode === 'higher') ranks = ranks.ceil();
      else if (mode === 'nearest') ranks = ranks.round();
      const below = ranks.long();
      let out = sorted.gather(-1, below); // [..., Q]
      if (mode === 'linear' || mode === 'midpoint') {
        const above = sorted.gather(-1, ranks.ceil().long());
        out = out.lerp(above, mode === 'midpoint' ? 0.5 : ranks.sub(below));
      }
      // [Q, ...] (a scalar q: no Q axis), the reduced dim kept as 1 with keepdim
      out = q instanceof Tensor && q.ndim === 1 ? out.movedim(-1, 0) : out.squeeze(-1);
      const lead = q instanceof Tensor && q.ndim === 1 ? [q.shape[0]] : [];
      const kept = keepdim === true ? input.shape.map((s, k) => (d === null || k === d ? 1 : s)) : input.shape.filter((_, k) => d !== null && k !== d);
      return out.reshape([...lead, ...kept]);
    });
  };
}

/**
 * torch.quantile(input, q, dim = null, keepdim = false, { interpolation = 'linear' }) (float32;
 * q a number or a 0-d or 1-D float32 tensor in [0, 1]); a 1-D q puts its axis first. Also
 * quantile(input, q, { dim, keepdim, interpolation }). A row holding a NaN gives NaN.
 */
export const quantile = quantileOf('quantile', false);
/** torch.nanquantile: quantile of the numbers only (NaNs ignored; NaN where a row has none). */
export const nanquantile = quantileOf('nanquantile', true);
