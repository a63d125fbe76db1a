// Indexing and resampling (src/ops/index.c, src/ops/resize.c) in PyTorch's names: embedding,
// index, indexPut, maskedScatter, interpolate (the plain ones, indexSelect, gather, indexAdd and
// scatterAdd, are rows of js/ops/table.js). The table installs indexPut and maskedScatter as
// Tensor methods and om.* functions; om.nn.functional has embedding and interpolate.
//
//   const ids = om.tensor([[1, 4], [2, 0]], { dtype: 'int64' });
//   const e = om.nn.functional.embedding(ids, weight, { paddingIdx: 0 });     // [2, 2, dim]
//   const up = om.nn.functional.interpolate(img, { scaleFactor: 2, mode: 'bilinear' });
import { OmError, invalid } from '../errors.js';
import { omw, requireReady, checkHandle, dtypeCodes, marshal } from '../runtime.js';
import { describe, toI64, toBool, scalarValue } from '../convert.js';
import { Tensor, handle, wrap, applyOp, optionsArg, scalarHandle, tidy, where, zeros, ones, full, arange } from '../tensor.js';
import { bucketize } from './sort.js';
import { adaptiveAvgPool1d, adaptiveAvgPool2d } from './conv.js';

function unsupported(opts, who, names) {
  for (const name of names) {
    const v = opts[name];
    if (v !== undefined && v !== null && v !== false) throw invalid(`${who}: ${name} is not supported (got ${describe(v)})`);
  }
}

/**
 * Rows of weight [num, dim] picked by int64 indices of any shape -> [..., dim], as
 * F.embedding(input, weight, padding_idx). Row paddingIdx (negative counts from the end) gets
 * no gradient. Indices outside [0, num) throw IndexOutOfRange.
 */
export function embedding(input, weight, opts) {
  const who = 'embedding';
  requireReady(who);
  const o = optionsArg(opts, who);
  unsupported(o, who, ['maxNorm', 'scaleGradByFreq', 'sparse']);
  const hs = [handle(weight, who, 'weight'), handle(input, who, 'input')];
  const pad = o.paddingIdx === undefined || o.paddingIdx === null ? null : toI64(o.paddingIdx, who, 'paddingIdx');
  return applyOp(who, 'embedding', hs, [pad === null ? 0n : 1n, pad ?? 0n]);
}

/**
 * F.embedding_bag(input, weight, offsets = null, { mode = 'mean', perSampleWeights, includeLastOffset =
 * false, paddingIdx }): each bag's rows of weight [num, dim] summed, averaged or maxed -> [bags, dim].
 * A 2-D input [B, N] is B bags of N indices (offsets null); a 1-D input [N] is cut into bags
 * where offsets [B] (int64, offsets[0] 0; [B + 1] ending at N with includeLastOffset) start them.
 * perSampleWeights (input's shape, mode 'sum' only) scales each row; indices equal to paddingIdx
 * count for nothing (nor in a mean's count); an empty bag is zeros. Composed of embedding,
 * bucketize (each index's bag), index_add and scatter_reduce (amax), so traced with the offsets
 * as values.
 */
export function embeddingBag(input, weight, offsets = null, options = undefined) {
  const who = 'embeddingBag';
  requireReady(who);
  const o = optionsArg(options, who, ['mode', 'perSampleWeights', 'includeLastOffset', 'paddingIdx', 'maxNorm', 'normType', 'scaleGradByFreq', 'sparse']);
  unsupported(o, who, ['maxNorm', 'scaleGradByFreq', 'sparse']);
  handle(input, who, 'input');
  handle(weight, who, 'weight');
  const mode = o.mode ?? 'mean';
  if (!['sum', 'mean', 'max'].includes(mode)) throw invalid(`${who}: mode has to be one of sum, mean or max, got ${describe(mode)}`);
  const psw = o.perSampleWeights ?? null;
  if (psw !== null) {
    handle(psw, who, 'perSampleWeights');
    if (mode !== 'sum') throw invalid(`${who}: perSampleWeights is only supported for mode 'sum' (got mode '${mode}')`);
    if (psw.shape.join() !== input.shape.join()) throw new OmError('ShapeMismatch', `${who}: perSampleWeights [${psw.shape}] must have the input's shape [${input.shape}]`);
  }
  const pad = o.paddingIdx === undefined || o.paddingIdx === null ? null : toI64(o.paddingIdx, who, 'paddingIdx');
  const last = toBool(o.includeLastOffset ?? false, who, 'includeLastOffset');
  if (input.ndim === 2) {
    if (offsets !== null) throw invalid(`${who}: if input is 2-D, offsets must be null (each row is a bag)`);
  } else if (input.ndim === 1) {
    if (offsets === null) throw invalid(`${who}: offsets has to be a 1-D Tensor but got null`);
    handle(offsets, who, 'offsets');
    if (offsets.ndim !== 1 || offsets.dtype !== 'int64') throw invalid(`${who}: offsets has to be a 1-D int64 Tensor, got [${offsets.shape}] ${offsets.dtype}`);
    if (last && offsets.shape[0] < 1) throw invalid(`${who}: with includeLastOffset, offsets needs at least one element`);
  } else {
    throw invalid(`${who}: input has to be a 1-D or 2-D Tensor, but got a Tensor of ${input.ndim} dims`);
  }
  return tidy(() => {
    const rows = embedding(input, weight, pad === null ? undefined : { paddingIdx: pad });
    // the weight of each row: perSampleWeights, 0 for padding (a float of the input's shape or null)
    const keep = pad === null ? null : input.ne(pad < 0n ? pad + BigInt(weight.shape[0]) : pad).to('float32');
    const scale = psw === null ? keep : keep === null ? psw : psw.mul(keep);
    if (input.ndim === 2) {
      const count = keep === null ? null : keep.sum(1, true);
      if (mode === 'max') {
        const m = (keep === null ? rows : where(keep.unsqueeze(-1).to('bool'), rows, -Infinity)).amax(1);
        return count === null ? m : where(count.gt(0), m, 0);
      }
      const sum = (scale === null ? rows : rows.mul(scale.unsqueeze(-1))).sum(1);
      if (mode === 'sum') return sum;
      return sum.div(count === null ? Math.max(input.shape[1], 1) : count.clamp({ min: 1 }));
    }
    const bags = offsets.shape[0] - (last ? 1 : 0), d = weight.shape[1];
    const bag = bucketize(arange(input.shape[0]), last ? offsets.narrow(0, 0, bags) : offsets, { right: true }).sub(1);
    const count = zeros([bags]).indexAdd(0, bag, keep ?? ones([input.shape[0]]));
    if (mode === 'max') {
      const src = keep === null ? rows : where(keep.unsqueeze(-1).to('bool'), rows, -Infinity);
      const index = bag.unsqueeze(1).expand([input.shape[0], d]);
      const m = applyOp(who, 'scatter_reduce', [handle(full([bags, d], -Infinity), who, 'input'), handle(index, who, 'index'), handle(src, who, 'src')], [0n, 2n]);
      return where(count.gt(0).unsqueeze(1), m, 0);
    }
    const sum = zeros([bags, d]).indexAdd(0, bag, scale === null ? rows : rows.mul(scale.unsqueeze(-1)));
    return mode === 'sum' ? sum : sum.div(count.clamp({ min: 1 }).unsqueeze(1));
  });
}

const MODES = new Map([['nearest', 0n], ['bilinear', 1n], ['bicubic', 2n]]);
// A 3-D input [N, C, L] is resampled as the one row of [N, C, 1, L] (a row of one pixel is copied:
// one tap of weight 1), 'linear' as 'bilinear' there; 'area' is adaptive average pooling, as in PyTorch.
const ROW_MODES = new Map([['nearest', 'nearest'], ['linear', 'bilinear']]);
const ALL_MODES = "'nearest', 'linear' (3-D), 'bilinear', 'bicubic' (4-D) or 'area'";

/** A size or scale argument: one value for both spatial axes, or a pair. */
function pair(v, who, what, conv) {
  if (Array.isArray(v)) {
    if (v.length !== 2) throw invalid(`${who}: ${what} must be a number or 2 numbers (H, W), got ${describe(v)}`);
    return v.map((x, i) => conv(x, `${what}[${i}]`));
  }
  const one = conv(v, what);
  return [one, one];
}

function scaleValue(who) {
  return (x, what) => {
    if (typeof x !== 'number' || !Number.isFinite(x) || x <= 0) {
      throw invalid(`${who}: ${what} must be a positive finite number, got ${describe(x)}`);
    }
    return x;
  };
}

/** A 3-D input's size or scale: a number or [one number]. */
function single(v, who, what) {
  if (!Array.isArray(v)) return v;
  if (v.length !== 1) throw invalid(`${who}: ${what} of a 3-D input must be a number or 1 number (L), got ${describe(v)}`);
  return v[0];
}

/** mode 'area': adaptive average pooling to size, or to floor(in * scale) (PyTorch's output size). */
function area(input, o, who) {
  const hasSize = o.size !== undefined && o.size !== null, hasScale = o.scaleFactor !== undefined && o.scaleFactor !== null;
  if (hasSize === hasScale) throw invalid(`${who}: give exactly one of size and scaleFactor`);
  const rank = input.shape.length, spatial = input.shape.slice(2);
  const given = rank === 3 ? [single(hasSize ? o.size : o.scaleFactor, who, hasSize ? 'size' : 'scaleFactor')]
    : pair(hasSize ? o.size : o.scaleFactor, who, hasSize ? 'size' : 'scaleFactor', (x) => x);
  const size = hasSize ? given : given.map((s, k) => Math.floor(spatial[k] * scaleValue(who)(s, `scaleFactor[${k}]`)));
  return rank === 3 ? adaptiveAvgPool1d(input, size[0]) : adaptiveAvgPool2d(input, size);
}

/**
 * Resamples input [N, C, H, W] (or [N, C, L]) as F.interpolate(input, size, scale_factor, mode, align_corners,
 * recompute_scale_factor): exactly one of size and scaleFactor; mode 'nearest' (PyTorch's
 * legacy nearest), 'bilinear' or 'bicubic' (a = -0.75, edges repeated, values not clamped),
 * 'linear' for [N, C, L], 'area' (adaptive average pooling);
 * alignCorners only with 'linear', 'bilinear' and 'bicubic'. With a scale factor the
 * output is floor(in * scale) and the scale drives the coordinates, unless recomputeScaleFactor
 * is true (then it acts like the size it gives).
 */
export function interpolate(input, opts) {
  const who = 'interpolate';
  requireReady(who);
  const o = optionsArg(opts, who);
  unsupported(o, who, ['antialias']);
  const h = handle(input, who, 'input');
  const mode = o.mode ?? 'nearest';
  if (!MODES.has(mode) && !ROW_MODES.has(mode) && mode !== 'area') throw invalid(`${who}: mode must be ${ALL_MODES}, got ${describe(mode)}`);
  if (o.alignCorners !== undefined && o.alignCorners !== null && (mode === 'nearest' || mode === 'area')) {
    throw invalid(`${who}: alignCorners can only be set with mode 'linear', 'bilinear' or 'bicubic', not '${mode}'`);
  }
  const rank = input.shape.length;
  if (rank === 3 && mode !== 'area') {
    if (!ROW_MODES.has(mode)) throw invalid(`${who}: a 3-D input [N, C, L] takes mode 'nearest', 'linear' or 'area', not '${mode}'`);
    const row = (v, what) => (v === undefined || v === null ? v : [1, single(v, who, what)]);
    return tidy(() => interpolate(input.unsqueeze(2), { ...o, mode: ROW_MODES.get(mode), size: row(o.size, 'size'), scaleFactor: row(o.scaleFactor, 'scaleFactor') }).squeeze(2));
  }
  if (rank !== 3 && rank !== 4) throw new OmError('ShapeMismatch', `${who}: takes a 3-D input [N, C, L] or a 4-D input [N, C, H, W], got [${input.shape}]`);
  if (mode === 'linear') throw invalid(`${who}: mode 'linear' takes a 3-D input [N, C, L], got [${input.shape}] (use 'bilinear')`);
  if (mode === 'area') return area(input, o, who);
  const alignCorners = toBool(o.alignCorners, who, 'alignCorners');
  const recompute = toBool(o.recomputeScaleFactor, who, 'recomputeScaleFactor');
  const hasSize = o.size !== undefined && o.size !== null;
  const hasScale = o.scaleFactor !== undefined && o.scaleFactor !== null;
  if (hasSize === hasScale) throw invalid(`${who}: give exactly one of size and scaleFactor`);
  if (hasSize && recompute) throw invalid(`${who}: recomputeScaleFactor needs scaleFactor, not size`);
  let size = [0n, 0n];
  let scale = [0, 0];
  if (hasSize) {
    size = pair(o.size, who, 'size', (x, what) => toI64(x, who, what));
  } else {
    scale = pair(o.scaleFactor, who, 'scaleFactor', scaleValue(who));
  }
  // has_scale 2 (recomputeScaleFactor): the op computes PyTorch's size floor(in * scale) in double
  // and then samples as if given that size; the trace keeps the size as that double computation
  const hasScaleAttr = !hasScale ? 0n : recompute ? 2n : 1n;
  return applyOp(who, 'interpolate', [h], [MODES.get(mode), alignCorners ? 1n : 0n, size[0], size[1], hasScaleAttr], scale);
}

/**
 * torch.masked_scatter: a copy of input whose places where mask (bool, broadcast with input) is
 * true take source's elements in row-major order; source (input's dtype) needs at least as many
 * elements as mask has true places. Written as where(mask, source.flatten()[cumsum(mask) - 1],
 * input): fixed shapes, so it traces at every size.
 */
export function maskedScatter(input, mask, source) {
  const who = 'maskedScatter';
  requireReady(who);
  handle(input, who, 'input');
  handle(mask, who, 'mask');
  handle(source, who, 'source');
  if (mask.dtype !== 'bool') throw new OmError('DtypeMismatch', `${who}: mask must be bool, not ${mask.dtype}`);
  if (source.dtype !== input.dtype) {
    throw new OmError('DtypeMismatch', `${who}: source is ${source.dtype}, input ${input.dtype} (they must match)`);
  }
  return tidy(() => {
    const same = mask.shape.length === input.shape.length && mask.shape.every((n, d) => n === input.shape[d]);
    const m = same ? mask : where(mask, true, input.ne(input).logicalAnd(false)); // mask broadcast with input
    const flat = m.flatten();
    // each true place's position among the true places; the false places read element 0
    const at = flat.cumsum(0).sub(1).clamp(0);
    const src = source.flatten();
    if (src.shape[0] === 0) { // nothing to read: no place may be true (reading that is DataDependent in a trace)
      if (m.to('int64').sum().item() > 0) throw new OmError('IndexOutOfRange', `${who}: mask has more true places than source's 0 elements`);
      return where(m, input, input);
    }
    let picked;
    try {
      picked = src.indexSelect(0, at);
    } catch (e) {
      if (!(e instanceof OmError) || e.kind !== 'IndexOutOfRange') throw e;
      throw new OmError('IndexOutOfRange', `${who}: mask has more true places than source's ${src.shape[0]} elements`);
    }
    return where(m, picked.reshape(...m.shape), input);
  });
}

/**
 * PyTorch's advanced-indexing read x[i, j, ...] (torch's index.Tensor): int64 index tensors, one
 * per leading dim of input, broadcast together to a shape B; the result is B + input's remaining
 * dims, element p the input's at (i[p], j[p], ...). Negative indices count from the end; one
 * outside [-size, size) is IndexOutOfRange. `x[torch.arange(b), idx]` is
 * `x.index([om.arange(b), idx])`, `table[ids]` is `table.index([ids])`.
 * Written as one indexSelect of the leading dims flattened, at the row each index tuple names
 * (each index after the first checked by an indexSelect of its dim's positions), so it is
 * differentiable in input and traces with symbolic sizes (Gather nodes).
 */
export function index(input, indices) {
  const who = 'index';
  requireReady(who);
  handle(input, who, 'input');
  const list = indices instanceof Tensor ? [indices] : indices;
  if (!Array.isArray(list) || !list.length) throw invalid(`${who}: indices must be a Tensor or a non-empty array of tensors, got ${describe(indices)}`);
  if (list.length === 1 && list[0] instanceof Tensor && !list[0].isDisposed && list[0].dtype === 'bool') return maskRead(input, list[0]);
  list.forEach((t, i) => {
    handle(t, who, `indices[${i}]`);
    if (t.dtype !== 'int64') throw new OmError('DtypeMismatch', `${who}: indices[${i}] must be int64, not ${t.dtype}`);
  });
  if (list.length > input.shape.length) {
    throw new OmError('IndexOutOfRange', `${who}: ${list.length} index tensors for input [${input.shape}] of ${input.shape.length} dims`);
  }
  const lead = input.shape.slice(0, list.length), rest = input.shape.slice(list.length);
  // read(), an IndexOutOfRange from it reported as indices[d]'s, with the value outside dim d
  const checked = (d, read) => {
    try {
      return read();
    } catch (e) {
      if (!(e instanceof OmError) || e.kind !== 'IndexOutOfRange') throw e;
      const n = lead[d], bad = [...list[d].toArray()].find((v) => v < -n || v >= n);
      throw new OmError('IndexOutOfRange', `${who}: indices[${d}] holds ${bad}, outside [${-n}, ${n}) for dim ${d} of input [${input.shape}]`);
    }
  };
  return tidy(() => {
    // the row of the leading dims flattened, ((i * size1 + j) * size2 + k) ..., of the indices made
    // non-negative; each but the first read from arange(size) (which checks it: one out of its
    // dim could still land in range), the first checked by the final read
    let row = null;
    list.forEach((i, d) => {
      const n = lead[d], nonNegative = where(i.lt(0), i.add(n), i);
      const pos = d === 0 ? nonNegative : checked(d, () => arange(0, n, { dtype: 'int64' }).indexSelect(0, nonNegative.flatten()).view(i.shape));
      row = row === null ? pos : row.mul(n).add(pos);
    });
    return checked(0, () => input.reshape(-1, ...rest).indexSelect(0, row.flatten()).view(...row.shape, ...rest));
  });
}

/**
 * torch.index_put: a copy of input with values written (accumulate: added; bool: or-ed) at the positions the
 * int64 index tensors (broadcast together) pick in input's first dims; values is a Tensor of
 * input's dtype or a number. x[i, j] = v in PyTorch is x.indexPut_([i, j], v); one bool index,
 * x[mask] = v, is maskPut.
 */
export function indexPut(input, indices, values, accumulate = false) {
  const who = 'indexPut';
  requireReady(who);
  const h = handle(input, who, 'input');
  const list = indices instanceof Tensor ? [indices] : indices;
  if (!Array.isArray(list)) throw invalid(`${who}: indices must be a Tensor or an array of tensors, got ${describe(indices)}`);
  const hs = list.map((t, i) => handle(t, who, `indices[${i}]`));
  if (typeof accumulate !== 'boolean') throw invalid(`${who}: accumulate must be a boolean, got ${describe(accumulate)}`);
  const isTensor = values instanceof Tensor, v = isTensor ? undefined : scalarValue(values);
  if (!isTensor && v === undefined) throw invalid(`${who}: values must be a Tensor or a number, got ${describe(values)}`);
  if (list.length === 1 && list[0].dtype === 'bool') return maskPut(input, list[0], values, accumulate);
  const hv = isTensor ? handle(values, who, 'values') : scalarHandle(v, dtypeCodes.get(input.dtype), who);
  try {
    const [p] = marshal(['ptr', hs]);
    return wrap(checkHandle(omw.index_put(h, p, hs.length, hv, accumulate ? 1 : 0), who));
  } finally {
    if (!isTensor) omw.release(hv);
  }
}

/**
 * indexPut with one bool index, PyTorch's x[mask] = v (and x[mask] += v with accumulate): mask
 * has input's leading dims. values (a number, or a Tensor broadcasting to input's other dims)
 * goes to every true place; a Tensor with one dim more whose first is not 1 gives the true places
 * its rows in order (maskedScatter), one row per true place as PyTorch requires (checked eagerly:
 * ShapeMismatch; in a trace the count is data, and the graph reads the rows in order). Fixed
 * shapes, so it traces at every size.
 */
function maskPut(input, mask, values, accumulate) {
  const who = 'indexPut';
  const lead = mask.shape.length, rest = input.shape.slice(lead);
  if (lead > input.shape.length || mask.shape.some((n, d) => n !== input.shape[d])) {
    throw new OmError('ShapeMismatch', `${who}: a bool index [${mask.shape}] must have input [${input.shape}]'s leading sizes`);
  }
  return tidy(() => {
    const m = rest.length ? mask.reshape(...mask.shape, ...rest.map(() => 1)) : mask;
    if (values instanceof Tensor && values.shape.length === rest.length + 1 && values.shape[0] !== 1) {
      const count = omw.trace_active() ? values.shape[0] : Number(mask.to('int64').sum().item());
      if (count !== values.shape[0]) {
        throw new OmError('ShapeMismatch', `${who}: values of shape [${values.shape}] cannot be broadcast to the indexing result of shape [${[count, ...rest]}] (the mask has ${count} true place${count === 1 ? '' : 's'})`);
      }
      const placed = maskedScatter(accumulate ? zeros(input.shape, { dtype: input.dtype }) : input, m, values);
      return accumulate ? input.add(placed) : placed;
    }
    return where(m, accumulate ? input.add(values) : values, input);
  });
}

/**
 * torch.scatter(input, dim, index, src) and Tensor.scatter(dim, index, src) (src a Tensor of
 * input's dtype, or a number: PyTorch's value), { reduce: 'add' } also: a copy of input with
 * out[i_0 .. index[i] .. i_n-1] = src[i] (dim's coordinate taken from index) for every position
 * i of index, which has input's rank and sizes at most src's and, off dim, input's. Composed as an
 * indexPut of the positions (aranges off dim, index along it; one ScatterND traced): of repeated
 * places the last written stays (PyTorch calls it undefined), with reduce 'add' all add up;
 * gradients as PyTorch's (input's with the written places zeroed, src's gathered at index). An
 * index outside [0, size) is IndexOutOfRange, checked eagerly (in a trace the values are data).
 */
export function scatter(input, dim, index, src, options = undefined) {
  const who = 'scatter';
  requireReady(who);
  handle(input, who, 'input');
  handle(index, who, 'index');
  const { reduce = null } = optionsArg(options, who, ['reduce']);
  if (reduce !== null && reduce !== 'add') throw invalid(`${who}: reduce must be 'add' or null, got ${describe(reduce)} (multiply is not supported)`);
  const isTensor = src instanceof Tensor;
  if (!isTensor && scalarValue(src) === undefined) throw invalid(`${who}: src must be a Tensor or a number, got ${describe(src)}`);
  const d = scatterChecks(who, input, dim, index, src);
  const n = input.ndim;
  if (!n) return indexPut(input.reshape(1), [index.reshape(1)], isTensor ? src.reshape(1) : src, reduce === 'add').reshape([]);
  return tidy(() => {
    const places = index.shape.map((k, j) => (j === d ? index
      : arange(0, k, { dtype: 'int64' }).reshape(index.shape.map((_, m) => (m === j ? k : 1))).expand(index.shape)));
    return indexPut(input, places, srcAt(index, src), reduce === 'add');
  });
}

/** src (a Tensor) narrowed to index's shape, as scatter reads it; a number as it is. */
const srcAt = (index, src) => (src instanceof Tensor ? index.shape.reduce((t, k, j) => (t.shape[j] === k ? t : t.narrow(j, 0, k)), src) : src);

/**
 * The checks scatter and scatterReduce share: dim in range (wrapped, returned), an int64 index of
 * input's rank with sizes at most src's (a Tensor of input's dtype) and, off dim, input's, and,
 * eagerly, its values in [0, size).
 */
function scatterChecks(who, input, dim, index, src) {
  const isTensor = src instanceof Tensor;
  if (isTensor) handle(src, who, 'src');
  const n = input.ndim, d0 = Number(toI64(dim, who, 'dim')), d = d0 < 0 ? d0 + n : d0;
  if (d < 0 || d >= Math.max(n, 1)) throw new OmError('IndexOutOfRange', `${who}: dim ${d0} is out of range for a tensor of ${n} dims`);
  if (index.dtype !== 'int64') throw new OmError('DtypeMismatch', `${who}: index must be int64, got ${index.dtype}`);
  if (isTensor && src.dtype !== input.dtype) throw new OmError('DtypeMismatch', `${who}: src is ${src.dtype}, input ${input.dtype} (they must match, as PyTorch's)`);
  const bad = (msg) => new OmError('ShapeMismatch', `${who}: index [${index.shape}] ${msg}`);
  if (index.ndim !== n) throw bad(`must have input [${input.shape}]'s ${n} dims`);
  index.shape.forEach((k, j) => {
    if (isTensor && k > (src.shape[j] ?? 1)) throw bad(`is larger than src [${src.shape}] in dim ${j}`);
    if (j !== d && k > input.shape[j]) throw bad(`is larger than input [${input.shape}] in dim ${j} (only dim ${d} may differ)`);
  });
  if (isTensor && src.ndim !== n) throw new OmError('ShapeMismatch', `${who}: src [${src.shape}] must have input [${input.shape}]'s ${n} dims`);
  if (!omw.trace_active() && index.numel()) {
    const [lo, hi] = [index.amin().item(), index.amax().item()];
    const size = input.shape[d] ?? 1;
    if (lo < 0n || hi >= BigInt(size)) {
      const v = lo < 0n ? lo : hi;
      throw new OmError('IndexOutOfRange', `${who}: index ${v} is out of range for dim ${d} of size ${size} (valid: 0 to ${size - 1})`);
    }
  }
  return d;
}

// scatterReduce's reductions: the C op's reduce attribute (sum and mean are scatter_adds) and the
// value that leaves each unchanged, which replaces the input where sources land when includeSelf
// is false (so those places reduce the sources alone, and the input's gradient there is zero)
const REDUCE_CODE = { prod: 1n, amax: 2n, amin: 3n };
const REDUCE_IDENTITY = { sum: 0, mean: 0, prod: 1, amax: -Infinity, amin: Infinity };
const REDUCE_IDENTITY_INT64 = { sum: 0n, mean: 0n, prod: 1n };

/**
 * torch.scatter_reduce(input, dim, index, src, reduce, *, include_self=True) and
 * Tensor.scatter_reduce as scatterReduce(input, dim, index, src, reduce, { includeSelf }) (float32, or
 * int64 input and src: sums and products wrap around, mean rounds down as PyTorch's):
 * a copy of input where each src[p] at the positions p of index (input's rank; sizes at most src's
 * and, off dim, input's) is combined into out[p with p[dim] = index[p]] by reduce: 'sum', 'prod',
 * 'mean' (the sum over the count, the input counting as one when included), 'amax' or 'amin' (a
 * NaN wins); with includeSelf false the input's value at a place a source reaches takes no part.
 * Gradients as PyTorch's: amax and amin share the gradient evenly among the values equal to the
 * result (with includeSelf false a left-out input equal to it counts, as PyTorch's, and gets
 * none), prod divides the product (a single zero gets the product of the others). Traced:
 * ScatterElements with reduction add, mul, max or min; mean divides by the counts (a
 * ScatterElements add of ones). An index outside [0, size) is IndexOutOfRange (checked eagerly).
 */
export function scatterReduce(input, dim, index, src, reduce, includeSelf = true) {
  const who = 'scatterReduce';
  requireReady(who);
  handle(input, who, 'input');
  handle(index, who, 'index');
  handle(src, who, 'src');
  if (!Object.hasOwn(REDUCE_IDENTITY, reduce)) {
    throw invalid(`${who}: reduce must be 'sum', 'prod', 'mean', 'amax' or 'amin', got ${describe(reduce)}`);
  }
  if (typeof includeSelf !== 'boolean') throw invalid(`${who}: includeSelf must be a boolean, got ${describe(includeSelf)}`);
  if (input.dtype !== 'float32' && input.dtype !== 'int64') throw new OmError('DtypeMismatch', `${who}: input must be float32 or int64, not ${input.dtype}`);
  const d = scatterChecks(who, input, dim, index, src);
  if (!input.ndim) return tidy(() => scatterReduce(input.reshape(1), 0, index.reshape(1), src.reshape(1), reduce, includeSelf).reshape([]));
  const int = input.dtype === 'int64', identity = (int ? REDUCE_IDENTITY_INT64 : REDUCE_IDENTITY)[reduce];
  return tidy(() => {
    const s = srcAt(index, src);
    // how many sources reach each place (in the input's dtype), where the reduction needs it
    const dtype = input.dtype;
    const hits = includeSelf && reduce !== 'mean' ? null : zeros(input.shape, { dtype }).scatterAdd(d, index, ones(index.shape, { dtype }));
    const extreme = reduce === 'amax' || reduce === 'amin';
    // int64's amax and amin without the input start from one of the sources landing there (a
    // scatter: any of them leaves the extreme of them all unchanged), not from INT64_MIN or MAX,
    // which a number scalar cannot hold; they have no gradient to share
    let base = includeSelf ? input : int && extreme ? input.scatter(d, index, s) : where(hits.gt(0), identity, input);
    const combine = (x) => applyOp(who, 'scatter_reduce', [handle(x, who, 'input'), handle(index, who, 'index'), handle(s, who, 'src')], [BigInt(d), REDUCE_CODE[reduce]]);
    if (!includeSelf && extreme && !int) {
      // PyTorch counts a left-out input that equals the result among the ties sharing the
      // gradient (and then gives it none): such an input stays, detached (the result is the same)
      base = where(hits.gt(0), where(input.eq(combine(base)), input.detach(), identity), input);
    }
    if (Object.hasOwn(REDUCE_CODE, reduce)) return combine(base);
    const sum = base.scatterAdd(d, index, s);
    // int64's mean rounds down, as PyTorch's (floor division: -7 / 3 is -3)
    return reduce === 'sum' ? sum : sum.div(includeSelf ? hits.add(1) : hits.clamp(1), int ? { roundingMode: 'floor' } : undefined);
  });
}

// ---- sizes the values decide: nonzero and what is written with it ----

/**
 * torch.nonzero(input, as_tuple=False) as nonzero(input, { asTuple }): the int64 index tuples
 * [count, ndim] of input's nonzero elements (NaN too; any dtype) in row-major order; asTuple:
 * one int64 [count] tensor per dim instead (a 0-d input gives one, as PyTorch). count is decided
 * by the values, so a traced input is TraceError DataDependent (docs/operators.md, nonzero).
 */
export function nonzero(input, options) {
  const who = 'nonzero';
  requireReady(who);
  const h = handle(input, who, 'input');
  const { asTuple = false } = optionsArg(options, who, ['asTuple']);
  if (typeof asTuple !== 'boolean') throw invalid(`${who}: asTuple must be a boolean, got ${describe(asTuple)}`);
  if (!asTuple) return applyOp(who, 'nonzero', [h]);
  return tidy(() => {
    const idx = nonzero(input.shape.length ? input : input.reshape(1));
    return idx.unbind(1).map((t) => t.contiguous());
  });
}

/** torch.argwhere: nonzero's [count, ndim] index tuples. */
export function argwhere(input) {
  handle(input, 'argwhere', 'input');
  return nonzero(input);
}

/**
 * torch.where(condition, input, other), and with condition alone torch.where(condition):
 * nonzero(condition, { asTuple: true }), the index tensors of the true places, one per dim.
 */
export function whereOrNonzero(...args) {
  if (args.length === 1) {
    handle(args[0], 'where', 'condition');
    return nonzero(args[0], { asTuple: true });
  }
  return where(...args);
}

/** The broadcast shape of a and b, or ShapeMismatch naming who. */
function broadcastShape(a, b, who) {
  const n = Math.max(a.length, b.length), out = [];
  for (let i = 0; i < n; i++) {
    const x = a[a.length - n + i] ?? 1, y = b[b.length - n + i] ?? 1;
    if (x !== y && x !== 1 && y !== 1) {
      throw new OmError('ShapeMismatch', `${who}: shapes [${a}] and [${b}] do not broadcast (${x} and ${y} at dim ${i})`);
    }
    out.push(x === 1 ? y : x);
  }
  return out;
}

/**
 * torch.masked_select(input, mask): the elements of input where mask (bool, broadcast with input)
 * is true, 1-D in row-major order of the broadcast shape. The positions are nonzero's of the mask
 * flattened, read with indexSelect, so input's gradient is the output's at the picked places (and
 * zero elsewhere, summed over broadcast dims), as PyTorch's. A mask that depends on a traced input
 * is TraceError DataDependent (nonzero); a constant mask of fixed size picks fixed places and traces.
 */
export function maskedSelect(input, mask) {
  const who = 'maskedSelect';
  requireReady(who);
  handle(input, who, 'input');
  handle(mask, who, 'mask');
  if (mask.dtype !== 'bool') throw new OmError('DtypeMismatch', `${who}: expected a bool mask, got ${mask.dtype}`);
  const shape = broadcastShape(input.shape, mask.shape, who);
  return tidy(() => {
    const at = nonzero(mask.expand(shape).reshape(-1)).reshape(-1);
    return input.expand(shape).reshape(-1).indexSelect(0, at);
  });
}

/**
 * x[mask], PyTorch's read with one bool index (index(input, mask)): mask has input's leading
 * sizes; the result is [count, ...input's other dims], the rows at the true places in row-major
 * order (index at nonzero(mask, { asTuple: true })), differentiable in input. A 0-d mask is
 * refused (PyTorch's x[True] adds a dim instead).
 */
function maskRead(input, mask) {
  const who = 'index';
  const lead = mask.shape.length;
  if (!lead) throw invalid(`${who}: a 0-d bool index is not supported (x[True] adds a dim in PyTorch: use unsqueeze(0))`);
  for (let d = 0; d < lead; d++) {
    if (d >= input.shape.length || mask.shape[d] !== input.shape[d]) {
      throw new OmError('IndexOutOfRange', `${who}: The shape of the mask [${mask.shape}] at index ${d} does not match the shape of the indexed tensor [${input.shape}] at index ${d}`);
    }
  }
  return tidy(() => index(input, nonzero(mask, { asTuple: true })));
}

/**
 * The checks index_fill and index_copy share (PyTorch's index_*_() checks): dim wrapped against
 * input, index int64 with at most one dim, its values in range (checked eagerly: in a trace they
 * are data); negatives count from the end where `negatives` (index_fill's rule), else are out of
 * range (index_copy's). Returns { d, size, k }: the dim, its size and the number of indices.
 */
function indexDimCheck(who, input, dim, index, negatives) {
  handle(input, who, 'input');
  handle(index, who, 'index');
  const n = input.ndim, d0 = Number(toI64(dim, who, 'dim')), d = d0 < 0 ? d0 + Math.max(n, 1) : d0;
  if (d < 0 || d >= Math.max(n, 1)) throw new OmError('IndexOutOfRange', `${who}: dim ${d0} is out of range for a tensor of ${n} dims`);
  if (index.dtype !== 'int64') throw new OmError('DtypeMismatch', `${who}: Expected an int64 (long) tensor for index, but got ${index.dtype}`);
  if (index.ndim > 1) throw new OmError('ShapeMismatch', `${who}: Index has to be a vector/scalar, got ${index.ndim} dims`);
  const size = n ? input.shape[d] : 1;
  if (!omw.trace_active() && index.numel()) {
    const [lo, hi] = [index.amin().item(), index.amax().item()];
    const bad = lo < (negatives ? -BigInt(size) : 0n) ? lo : hi >= BigInt(size) ? hi : null;
    if (bad !== null) throw new OmError('IndexOutOfRange', `${who}: index ${bad} is out of bounds for dimension ${d} with size ${size}`);
  }
  return { d, size, k: index.numel() };
}

/**
 * The shape of a scatter's index when k indices along dim d of input reach every position off d:
 * input's shape with k at d (a 0-d input is read as [1]).
 */
const alongDim = (input, d, k) => (input.ndim ? input.shape : [1]).map((s, i) => (i === d ? k : s));

/**
 * Tensor.index_fill(dim, index, value): a copy of input with the slices at index along dim set to
 * value (a number, or a 0-d tensor cast to input's dtype, which then gets the gradient); negative
 * indices count from the end, as PyTorch's. A scatter of value at the index expanded off dim, so
 * input's gradient is zero at the filled slices.
 */
export function indexFill(input, dim, index, value) {
  const who = 'indexFill';
  requireReady(who);
  const { d, size, k } = indexDimCheck(who, input, dim, index, true);
  const isTensor = value instanceof Tensor;
  if (isTensor) {
    handle(value, who, 'value');
    if (value.ndim) throw new OmError('ShapeMismatch', `${who}: only supports a 0-dimensional value tensor, but got tensor with ${value.ndim} dimension(s)`);
  } else if (scalarValue(value) === undefined) throw invalid(`${who}: value must be a number or a 0-d Tensor, got ${describe(value)}`);
  return tidy(() => {
    const x = input.ndim ? input : input.reshape([1]);
    const shape = alongDim(input, d, k);
    const flat = index.reshape([-1]);
    const wrapped = where(flat.lt(0), flat.add(size), flat); // in the graph: a trace's index is data
    const at = wrapped.reshape(shape.map((s, i) => (i === d ? k : 1))).expand(shape);
    const src = isTensor ? value.to(input.dtype).expand(shape) : value;
    const out = x.scatter(d, at, src);
    return input.ndim ? out : out.reshape([]);
  });
}

/**
 * Tensor.index_copy(dim, index, source): a copy of input with its slice index[i] along dim
 * replaced by source's slice i (source: input's shape with index's length at dim, same dtype).
 * A scatter of source at the index expanded off dim: exact copies (-0 and NaN kept), gradients as
 * PyTorch's (input's zero at the copied slices, source's passed through). Of a repeated index one
 * slice stays (PyTorch calls it undefined).
 */
export function indexCopy(input, dim, index, source) {
  const who = 'indexCopy';
  requireReady(who);
  const { d, k } = indexDimCheck(who, input, dim, index, false);
  handle(source, who, 'source');
  if (source.dtype !== input.dtype) {
    throw new OmError('DtypeMismatch', `${who}: self and source expected to have the same dtype, but got (self) ${input.dtype} and (source) ${source.dtype}`);
  }
  const shape = alongDim(input, d, k);
  const given = source.ndim ? source.shape : [1];
  if (given.length !== shape.length || given.some((s, i) => s !== shape[i])) {
    throw new OmError('ShapeMismatch', `${who}: source [${source.shape}] must be input [${input.shape}] with the number of indices (${k}) at dim ${d}, i.e. [${shape}]`);
  }
  return tidy(() => {
    const x = input.ndim ? input : input.reshape([1]);
    const at = index.reshape(shape.map((s, i) => (i === d ? k : 1))).expand(shape);
    const out = x.scatter(d, at, source.ndim ? source : source.reshape([1]));
    return input.ndim ? out : out.reshape([]);
  });
}
