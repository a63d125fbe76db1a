// Views, copies, casts and splits (src/ops/shape.c) as functions of the tensor first: reshape,
// view, permute, transpose, expand, slice, narrow, select, sliceScatter, selectScatter, squeeze,
// unsqueeze, contiguous, detach, t, flatten, split, chunk, unbind, roll, to (float, long, bool).
// js/ops/table.js installs them as Tensor methods (x.reshape(2, 3)) and, for some, om.* functions.
import { OmError, invalid } from '../errors.js';
import { omw, checkHandle, lastError, marshal, readU32 } from '../runtime.js';
import { describe, toI64, toI32, intList } from '../convert.js';
import { handle, wrap, applyOp, dimsArg, dtypeCode, tidy, where, arange } from '../tensor.js';
import { pad } from './act.js';

const wrapChecked = (h, who) => wrap(checkHandle(h, who));

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

/** The size of dim d when it is in range and ok (C reports the error otherwise), else null. */
function dimSize(shape, d, ok) {
  const nd = shape.length;
  return ok && d >= -nd && d < nd ? shape[d < 0 ? d + nd : d] : null;
}

function reshapeAs(who, input, args) {
  const h = handle(input, who, 'input');
  const s = intList(args, who, 'shape');
  const [ps] = marshal(['i64', s]);
  return wrapChecked(omw.reshape(h, ps, s.length), who);
}

export function reshape(input, ...shape) { return reshapeAs('reshape', input, shape); }
export function view(input, ...shape) { return reshapeAs('view', input, shape); }

export function permute(input, ...dims) {
  return applyOp('permute', 'permute', [handle(input, 'permute', 'input')], intList(dims, 'permute', 'dims'));
}

export function transpose(input, dim0, dim1) {
  const h = handle(input, 'transpose', 'input');
  return wrapChecked(omw.transpose(h, toI32(dim0, 'transpose', 'dim0'), toI32(dim1, 'transpose', 'dim1')), 'transpose');
}

export function expand(input, ...shape) {
  return applyOp('expand', 'expand', [handle(input, 'expand', 'input')], intList(shape, 'expand', 'shape'));
}

export function slice(input, dim, start = 0, end = Infinity, step = 1) {
  const h = handle(input, 'slice', 'input');
  return applyOp('slice', 'slice', [h], [
    toI64(dim, 'slice', 'dim'),
    toI64(start ?? 0, 'slice', 'start'),
    toI64(end ?? Infinity, 'slice', 'end'),
    toI64(step ?? 1, 'slice', 'step'),
  ]);
}

export function narrow(input, dim, start, length) {
  handle(input, 'narrow', 'input');
  const shape = input.shape;
  const d = wrapDim(Number(toI64(dim, 'narrow', 'dim')), shape.length, 'narrow');
  const size = BigInt(shape[d]);
  let s = toI64(start, 'narrow', 'start');
  const n = toI64(length, 'narrow', 'length');
  if (s < 0n) s += size;
  if (s < 0n || s > size) throw new OmError('IndexOutOfRange', `narrow: start ${start} is out of range for dim ${d} of size ${size}`);
  if (n < 0n || s + n > size) throw invalid(`narrow: start (${s}) + length (${n}) exceeds dimension size (${size})`);
  return slice(input, d, s, s + n);
}

/** torch.slice_scatter: a copy with src written into input[start:end:step] along dim (the
 *  in-place form: x.slice(dim, start, end, step).copy_(src)). */
export function sliceScatter(input, src, dim = 0, start = 0, end = Infinity, step = 1) {
  const w = 'sliceScatter';
  const h = handle(input, w, 'input');
  const [pa] = marshal(['i64', [toI64(dim, w, 'dim'), toI64(start ?? 0, w, 'start'), toI64(end ?? Infinity, w, 'end'), toI64(step ?? 1, w, 'step')]]);
  return wrapChecked(omw.slice_scatter(h, handle(src, w, 'src'), pa), w);
}

/** size and stride (arrays of one length) and an optional storage offset as as_strided's attrs. */
function stridedArgs(size, stride, storageOffset, w) {
  const sz = intList([size], w, 'size'), st = intList([stride], w, 'stride');
  if (sz.length !== st.length) throw invalid(`${w}: mismatch in length of strides and shape (${sz.length} sizes, ${st.length} strides)`);
  return storageOffset === undefined || storageOffset === null ? [...sz, ...st] : [...sz, ...st, toI64(storageOffset, w, 'storageOffset')];
}

/** torch.as_strided: a view of input's storage (size, stride and storageOffset in its elements;
 *  no offset: input's own), differentiable; traced at fixed sizes as a Gather. */
export function asStrided(input, size, stride, storageOffset = undefined) {
  const w = 'asStrided';
  const h = handle(input, w, 'input');
  return applyOp(w, 'as_strided', [h], stridedArgs(size, stride, storageOffset, w));
}

/** torch.as_strided_scatter: a copy of input with src written where size, stride and
 *  storageOffset (default 0) pick input's elements, counted in row-major order. */
export function asStridedScatter(input, src, size, stride, storageOffset = 0) {
  const w = 'asStridedScatter';
  const hs = [handle(input, w, 'input'), handle(src, w, 'src')];
  return applyOp(w, 'as_strided_scatter', hs, stridedArgs(size, stride, storageOffset ?? 0, w));
}

/** torch.select_scatter: a copy with src written at index along dim (in place:
 *  x.select(dim, index).copy_(src)). */
export function selectScatter(input, src, dim, index) {
  const w = 'selectScatter';
  const h = handle(input, w, 'input');
  const [pa] = marshal(['i64', [toI64(dim, w, 'dim'), toI64(index, w, 'index')]]);
  return wrapChecked(omw.select_scatter(h, handle(src, w, 'src'), pa), w);
}

export function squeeze(input, dims) {
  return applyOp('squeeze', 'squeeze', [handle(input, 'squeeze', 'input')], dimsArg(dims, 'squeeze'));
}

export function contiguous(input) {
  return wrapChecked(omw.contiguous(handle(input, 'contiguous', 'input')), 'contiguous');
}

/**
 * Normally a new tensor over the same storage. While a trace records, C returns the traced
 * tensor itself (a new reference, spec: Detach of a traced tensor returns it): the result is
 * then a second handle to the same C tensor, and each handle releases its own reference.
 */
export function detach(input) {
  return wrapChecked(omw.detach(handle(input, 'detach', 'input')), 'detach');
}

/** The transpose of a 2-D tensor (a view); a 0-d or 1-D tensor gives a new handle to itself. */
export function t(input) {
  const h = handle(input, 't', 'input');
  const nd = input.ndim;
  if (nd > 2) throw invalid(`t: expects a tensor with at most 2 dims, got ${nd}; use transpose(dim0, dim1)`);
  if (nd < 2) return wrapChecked(omw.retain(h), 't');
  return wrapChecked(omw.transpose(h, 0, 1), 't');
}

/** torch.flatten(input, startDim, endDim): dims startDim..endDim merged into one (a view). */
export function flatten(input, startDim = 0, endDim = -1) {
  const h = handle(input, 'flatten', 'input');
  const shape = input.shape;
  const s = wrapDim(toI32(startDim, 'flatten', 'startDim'), shape.length, 'flatten');
  const e = wrapDim(toI32(endDim, 'flatten', 'endDim'), shape.length, 'flatten');
  if (s > e) throw invalid(`flatten: startDim ${startDim} comes after endDim ${endDim}`);
  const out = shape.length === 0 ? [1]
    : [...shape.slice(0, s), shape.slice(s, e + 1).reduce((a, b) => a * b, 1), ...shape.slice(e + 1)];
  const [ps] = marshal(['i64', out.map(BigInt)]);
  return wrapChecked(omw.reshape(h, ps, out.length), 'flatten');
}

/**
 * torch.split: pieces of splitSize along dim (the last may be shorter), or, given a list of
 * sizes (non-negative, summing to the dim's size), pieces of those sizes. Views.
 */
export function split(input, splitSizeOrSections, dim = 0) {
  const h = handle(input, 'split', 'input');
  const d = toI32(dim, 'split', 'dim');
  if (Array.isArray(splitSizeOrSections)) {
    const sizes = splitSizeOrSections.map((v, i) => toI64(v, 'split', `sizes[${i}]`));
    const [ps, pout] = marshal(['i64', sizes], ['ptr', sizes.length]);
    const n = omw.split_sizes(h, ps, sizes.length, d, pout);
    if (n < 0) throw lastError('split');
    return readU32(pout, n).map(wrap);
  }
  const splitSize = count(splitSizeOrSections, 'split', 'splitSize');
  const n = dimSize(input.shape, d, splitSize > 0);
  const maxOut = n === null ? 1 : Math.max(1, Math.ceil(n / splitSize));
  const [pout] = marshal(['ptr', maxOut]);
  const got = omw.split(h, splitSize, d, pout, maxOut);
  if (got < 0) throw lastError('split');
  return readU32(pout, got).map(wrap);
}

/**
 * torch.chunk: pieces of ceil(size / chunks) along dim, so possibly fewer than chunks (5 in 4
 * chunks is 2, 2, 1); an empty dim gives chunks empty pieces. Views.
 */
export function chunk(input, chunks, dim = 0) {
  const h = handle(input, 'chunk', 'input');
  const d = toI32(dim, 'chunk', 'dim');
  const c = count(chunks, 'chunk', 'chunks');
  const n = dimSize(input.shape, d, c > 0);
  const maxOut = n === null ? 1 : n > 0 ? Math.min(c, n) : c;
  const [pout] = marshal(['ptr', maxOut]);
  const got = omw.chunk(h, c, d, pout, maxOut);
  if (got < 0) throw lastError('chunk');
  return readU32(pout, got).map(wrap);
}

/** torch.unbind: the slices along dim (default 0), each without that dim (select views). */
export function unbind(input, dim = 0) {
  handle(input, 'unbind', 'input');
  const shape = input.shape;
  const d = wrapDim(toI32(dim, 'unbind', 'dim'), shape.length, 'unbind');
  if (!shape.length) throw new OmError('IndexOutOfRange', `unbind: dim ${dim} is out of range for a tensor of 0 dims`);
  const out = [];
  try {
    for (let i = 0; i < shape[d]; i++) out.push(input.select(d, i));
  } catch (e) {
    for (const x of out) x.dispose();
    throw e;
  }
  return out;
}

/** torch.roll: each dims[k] rotated by shifts[k]; with no dims, the flattened tensor by one shift. */
export function roll(input, shifts, dims) {
  const h = handle(input, 'roll', 'input');
  const s = Array.isArray(shifts) ? shifts.map((v, i) => toI64(v, 'roll', `shifts[${i}]`)) : [toI64(shifts, 'roll', 'shifts')];
  const d = dimsArg(dims, 'roll');
  const [ps, pd] = marshal(['i64', s], ['i64', d]);
  return wrapChecked(omw.roll(h, ps, s.length, pd, d.length), 'roll');
}

/** torch.flip: a copy with each of dims read backwards; flip(x, [0, 1]) or x.flip(0, 1). */
export function flip(input, ...dims) {
  return applyOp('flip', 'flip', [handle(input, 'flip', 'input')], intList(dims, 'flip', 'dims'));
}

/** The repeat counts (sizes or dims) of repeat and tile, given as varargs or one array. */
const repeats = (who, tile) => (input, ...sizes) => {
  const h = handle(input, who, 'input');
  const s = intList(sizes, who, tile ? 'dims' : 'sizes');
  const [ps] = marshal(['i64', s]);
  return wrapChecked(omw.repeat(h, ps, s.length, tile ? 1 : 0), who);
};

/** torch.Tensor.repeat: x.repeat(2, 3) copies x 2 x 3 times; more sizes than dims add leading dims. */
export const repeat = repeats('repeat', false);
/** torch.tile: repeat, with 1s in front of dims when it has fewer than the tensor's dims. */
export const tile = repeats('tile', true);

/**
 * torch.diagonal: the elements [i, i + offset] of dims dim1 and dim2 (defaults 0, 1), as a last
 * dim: a view, as PyTorch's (x.diagonal().fill_(0) writes into x).
 */
export function diagonal(input, offset = 0, dim1 = 0, dim2 = 1) {
  const who = 'diagonal';
  const h = handle(input, who, 'input');
  return applyOp(who, who, [h], [toI64(offset, who, 'offset'), toI64(dim1, who, 'dim1'), toI64(dim2, who, 'dim2')]);
}

/**
 * Tensor.fill_diagonal_(fillValue, wrap = false): the main diagonal (i, i, ..., i) set to fillValue,
 * in place, through diagonal views. The dims must have one size, but for a matrix; wrap = true
 * restarts a tall matrix's diagonal every columns + 1 rows, as PyTorch (one whose elements are one run).
 */
export function fillDiagonal_(input, fillValue, wrap = false) {
  const who = 'fillDiagonal_';
  handle(input, who, 'input');
  const nd = input.ndim, shape = input.shape;
  if (nd < 2) throw invalid(`${who}: dimensions must larger than 1`);
  if (nd > 2 && shape.some((n) => n !== shape[0])) throw invalid(`${who}: all dimensions of input must be of equal length`);
  if (typeof wrap !== 'boolean') throw invalid(`${who}: wrap must be a boolean, got ${describe(wrap)}`);
  const [rows, cols] = shape;
  tidy(() => {
    if (nd === 2 && wrap && rows > cols + 1) {
      // every (cols + 1)-th element of the flattened matrix (view refuses one whose elements are not one run)
      input.view(-1).slice(0, 0, rows * cols, cols + 1).fill_(fillValue);
      return;
    }
    let d = input.diagonal(0, 0, 1); // [n, ..., n, n]: the first two dims' diagonal last
    for (let k = 2; k < nd; k++) d = d.diagonal(0, 0, -1);
    d.fill_(fillValue);
  });
  return input;
}

/**
 * torch.diag: of a 1-D input, the square matrix with it on diagonal k (size n + |k|, zeros elsewhere);
 * of a 2-D input, its diagonal k (diagonal(input, k)).
 */
export function diag(input, k = 0) {
  handle(input, 'diag', 'input');
  const o = Number(toI64(k, 'diag', 'diagonal'));
  if (input.ndim === 2) return tidy(() => diagonal(input, o).clone()); // a copy, as torch.diag's
  if (input.ndim !== 1) throw invalid(`diag: takes a 1-D or 2-D input, got ${input.ndim} dims`);
  return tidy(() => {
    const n = input.shape[0] + Math.abs(o), i = arange(n);
    const x = input.dtype === 'bool' ? input.long() : input; // pad takes no bool
    const padded = o ? pad(x, [0, Math.abs(o)]) : x; // x_r at row r (k >= 0) or column r (k < 0)
    const m = where(i.unsqueeze(0).sub(i.unsqueeze(1)).eq(o), o >= 0 ? padded.unsqueeze(1) : padded.unsqueeze(0), 0);
    return input.dtype === 'bool' ? m.to('bool') : m;
  });
}

/** A copy in another dtype ('float32', 'int64', 'bool'); float to int truncates toward zero. */
export function to(input, dtype) {
  const h = handle(input, 'to', 'input');
  return wrapChecked(omw.cast(h, dtypeCode(dtype, 'to')), 'to');
}
