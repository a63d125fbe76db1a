// Sorting and searching, one-hot, repeats, triangle indices and pixel shuffles in PyTorch's names
// (src/ops/sort.c, shape.c, index.c): topk, sort, argsort, searchsorted, bucketize, oneHot,
// repeatInterleave, trilIndices, triuIndices, pixelShuffle, pixelUnshuffle. The Tensor methods of
// the same names and om.nn.functional call these.
//
//   const [values, indices] = om.topk(scores, 5);            // the 5 largest along the last dim
//   const [sorted, order] = x.sort({ dim: 0, descending: true });
//   const buckets = om.bucketize(x, om.tensor([0, 1, 4]));  // int64 bucket of each element
//   const up = om.nn.functional.pixelShuffle(feat, 2);       // [N, 4C, H, W] -> [N, C, 2H, 2W]
import { OmError, TraceError, invalid } from '../errors.js';
import { omw, requireReady, marshal, readU32, checkHandle } from '../runtime.js';
import { describe, toI64, toI32, toBool } from '../convert.js';
import { Tensor, handle, wrap, applyAll, valuesIndices, optionsArg, tidy, arange, tensor, rand, where } from '../tensor.js';

/** Options given positionally (PyTorch's order) or as one trailing object of those names. */
function named(args, names, who) {
  const last = args[args.length - 1];
  if (args.length && last !== null && typeof last === 'object' && !Array.isArray(last) && !(last instanceof Tensor)) {
    const o = optionsArg(last, who, names);
    return names.map((n, i) => (i < args.length - 1 ? args[i] : o[n]));
  }
  return names.map((_, i) => args[i]);
}

/**
 * torch.topk(input, k, dim = -1, largest = true, sorted = true): [values, indices (int64)] (also .values and .indices), always
 * sorted, a NaN the largest, equal values in index order. Also topk(input, k, { dim, largest, sorted }).
 */
export function topk(input, k, ...rest) {
  const who = 'topk';
  requireReady(who);
  const [dim, largest, sorted] = named(rest, ['dim', 'largest', 'sorted'], who);
  const h = handle(input, who, 'input');
  toBool(sorted, who, 'sorted', true); // any order is allowed for sorted: false, and sorted is one
  return valuesIndices(applyAll(who, 'topk', [h], [toI64(k, who, 'k'), toI64(dim ?? -1, who, 'dim'), toBool(largest, who, 'largest', true) ? 1n : 0n], [], 2));
}

/** torch.sort(input, dim = -1, descending = false) (stable): [values, indices] (also .values, .indices); or { dim, descending, stable }. */
export function sort(input, ...rest) {
  const who = 'sort';
  requireReady(who);
  const [dim, descending, stable] = named(rest, ['dim', 'descending', 'stable'], who);
  const h = handle(input, who, 'input');
  toBool(stable, who, 'stable'); // always stable, which stable: false allows
  const [pi] = marshal(['ptr', 1]);
  const v = checkHandle(omw.sort(h, toI32(dim ?? -1, who, 'dim'), toBool(descending, who, 'descending') ? 1 : 0, pi), who);
  const indices = readU32(pi, 1)[0]; // before wrap, which takes the scratch buffer
  return valuesIndices([wrap(v), wrap(indices)]);
}

/** torch.argsort(input, dim = -1, descending = false) (stable): the int64 indices of sort. */
export function argsort(input, ...rest) {
  const [values, indices] = sort(input, ...rest);
  values.dispose();
  return indices;
}

/**
 * PyTorch's out_int32 (outInt32): false or absent keeps int64; true asks for int32, a dtype the
 * library does not have, so it is refused rather than answered in another dtype.
 */
function int64Only(o, who) {
  if (toBool(o.outInt32, who, 'outInt32')) {
    throw new OmError('DtypeMismatch', `${who}: outInt32 asks for int32 indices, which the library has no dtype for; leave it false for int64 (the same values)`);
  }
}

/**
 * torch.searchsorted(sortedSequence, values, { right, side, outInt32 }): for each value, the int64
 * index in the sorted sequence (1-D, or the values' leading dims and one more) where it would go;
 * right (or side 'right') puts it after its equals.
 */
export function searchsorted(sortedSequence, values, options) {
  const who = 'searchsorted';
  requireReady(who);
  const o = optionsArg(options, who, ['right', 'side', 'outInt32']);
  if (o.side !== undefined && o.side !== null && o.side !== 'left' && o.side !== 'right') {
    throw invalid(`${who}: side must be 'left' or 'right', got ${describe(o.side)}`);
  }
  if (o.side === 'left' && o.right === true) throw invalid(`${who}: side 'left' and right true are opposites`);
  const right = o.side === 'right' || toBool(o.right, who, 'right');
  int64Only(o, who);
  const hs = handle(sortedSequence, who, 'sortedSequence'), hv = handle(values, who, 'values');
  return wrap(checkHandle(omw.searchsorted(hs, hv, right ? 1 : 0, 0), who));
}

/**
 * torch.bucketize(input, boundaries, { right, outInt32 }): searchsorted(boundaries, input) with
 * 1-D boundaries. input may be a number (bigint) for a 0-d result, as PyTorch's Python scalar,
 * and a bool tensor counts as 0/1 (PyTorch compares its values).
 */
export function bucketize(input, boundaries, options) {
  const who = 'bucketize';
  requireReady(who);
  const o = optionsArg(options, who, ['right', 'outInt32']);
  int64Only(o, who);
  const hb = handle(boundaries, who, 'boundaries');
  return tidy(() => {
    // an integer as int64 (float32 would round one above 2^24), any other number as float32
    let x = typeof input === 'number' || typeof input === 'bigint'
      ? tensor(typeof input === 'bigint' || Number.isSafeInteger(input) ? BigInt(input) : input) : input;
    const hi = handle(x, who, 'input');
    if (x.dtype === 'bool') x = x.to('int64');
    return wrap(checkHandle(omw.searchsorted(hb, x === input ? hi : handle(x, who, 'input'), toBool(o.right, who, 'right') ? 1 : 0, 1), who));
  });
}

/** F.one_hot(tensor, numClasses = -1): int64 classes -> int64 [..., numClasses] (-1: the largest + 1). */
export function oneHot(tensor, numClasses = -1) {
  const who = 'oneHot';
  requireReady(who);
  const h = handle(tensor, who, 'tensor');
  const [p] = marshal(['i64', [toI64(numClasses, who, 'numClasses')]]);
  return wrap(checkHandle(omw.one_hot(h, p), who));
}

/**
 * torch.repeat_interleave(input, repeats, dim): each element along dim repeated `repeats` times
 * (a number, or an int64 tensor of one count per element); dim omitted: the flattened input.
 * torch.repeat_interleave(repeats) alone (a 1-D int64 tensor of counts): index i repeated
 * repeats[i] times, the indices of a ragged batch's rows.
 */
export function repeatInterleave(input, repeats, dim) {
  const who = 'repeatInterleave';
  requireReady(who);
  const h = handle(input, who, 'input');
  if (repeats === undefined && dim === undefined) {
    // PyTorch's words: a 0-d count has no index to repeat
    if (input.dtype !== 'int64') throw new OmError('DtypeMismatch', `${who}: repeats must be int64, not ${input.dtype}`);
    if (input.ndim !== 1) throw new OmError('ShapeMismatch', `${who}: repeat_interleave only accept 1D vector as repeat, got [${input.shape}]`);
    return tidy(() => repeatInterleave(arange(input.shape[0]), input, 0));
  }
  const hasDim = dim !== undefined && dim !== null;
  const counts = repeats instanceof Tensor ? handle(repeats, who, 'repeats') : 0;
  const at = [counts ? 0n : toI64(repeats, who, 'repeats'), hasDim ? toI64(dim, who, 'dim') : 0n, hasDim ? 1n : 0n];
  const [p] = marshal(['i64', at]);
  return wrap(checkHandle(omw.repeat_interleave(h, counts, p), who));
}

function triIndices(who, upper, row, col, offset) {
  requireReady(who);
  const [p] = marshal(['i64', [toI64(row, who, 'row'), toI64(col, who, 'col'), toI64(offset, who, 'offset')]]);
  return wrap(checkHandle(omw.tri_indices(p, upper ? 1 : 0), who));
}

/** torch.tril_indices(row, col, offset = 0): int64 [2, n], the lower triangle's rows and columns, row by row. */
export function trilIndices(row, col, offset = 0) { return triIndices('trilIndices', false, row, col, offset); }
/** torch.triu_indices(row, col, offset = 0): int64 [2, n], the upper triangle's rows and columns, row by row. */
export function triuIndices(row, col, offset = 0) { return triIndices('triuIndices', true, row, col, offset); }

function shuffle(who, up, input, r) {
  requireReady(who);
  const h = handle(input, who, 'input');
  const [p] = marshal(['i64', [toI64(r, who, up ? 'upscaleFactor' : 'downscaleFactor')]]);
  return wrap(checkHandle(omw.pixel_shuffle(h, p, up ? 1 : 0), who));
}

/** F.pixel_shuffle(input, upscaleFactor): [..., C r^2, H, W] -> [..., C, H r, W r]. */
export function pixelShuffle(input, upscaleFactor) { return shuffle('pixelShuffle', true, input, upscaleFactor); }
/** F.pixel_unshuffle(input, downscaleFactor): [..., C, H r, W r] -> [..., C r^2, H, W]. */
export function pixelUnshuffle(input, downscaleFactor) { return shuffle('pixelUnshuffle', false, input, downscaleFactor); }

/**
 * torch.multinomial(input, numSamples, replacement = false), also (input, numSamples,
 * { replacement, seed }): numSamples int64 category indices per row of input (1-D [C] or 2-D
 * [B, C] non-negative weights, each row with a positive sum), each drawn with probability
 * proportional to its weight. With replacement: the inverse of the running sum at uniforms
 * (searchsorted, right: a zero weight is never drawn); without: the Gumbel-top-k rule, the
 * numSamples largest of log(w) - log(-log(u)) (a draw without replacement, each index at most once;
 * numSamples at most the row's nonzero weights). The uniforms come from om.rand (om.manualSeed, or
 * seed as torch.Generator): PyTorch's distribution, not its numbers. Eager only: a graph would
 * repeat this run's draws, so a traced input is TraceError UnsupportedOperation.
 */
export function multinomial(input, numSamples, ...rest) {
  const who = 'multinomial';
  requireReady(who);
  handle(input, who, 'input');
  const [replacement, seed] = named(rest, ['replacement', 'seed'], who);
  const withReplacement = toBool(replacement, who, 'replacement');
  const n = Number(toI64(numSamples, who, 'numSamples'));
  if (omw.trace_active()) {
    throw new TraceError('UnsupportedOperation', `${who}: random draws are not traced (the graph would repeat this run's draws for every input)`);
  }
  if (input.ndim !== 1 && input.ndim !== 2) throw new OmError('ShapeMismatch', `${who}: takes a 1-D or 2-D tensor of weights, got [${input.shape}]`);
  if (input.dtype !== 'float32') throw new OmError('DtypeMismatch', `${who}: takes float32 weights, not ${input.dtype}`);
  const c = input.shape.at(-1);
  if (n < 1) throw invalid(`${who}: numSamples must be positive, got ${n}`);
  if (!withReplacement && n > c) throw invalid(`${who}: cannot draw ${n} samples from ${c} categories without replacement`);
  return tidy(() => {
    const w = input.ndim === 1 ? input.unsqueeze(0) : input;
    if (w.lt(0).logicalOr(w.isnan()).logicalOr(w.isinf()).any().item()) {
      throw invalid(`${who}: the weights hold a negative, infinite or NaN value`);
    }
    const sums = w.sum(-1, true);
    if (w.shape[0] && sums.le(0).any().item()) throw invalid(`${who}: a row of weights sums to 0 (no category to draw)`);
    if (!withReplacement && w.shape[0] && w.gt(0).sum(-1).lt(n).any().item()) {
      throw invalid(`${who}: a row has fewer than ${n} nonzero weights to draw without replacement`);
    }
    // uniforms: one per draw with replacement, one per category without (its Gumbel key)
    const u = rand([w.shape[0], withReplacement ? n : c], seed === undefined ? undefined : { seed });
    let out;
    if (withReplacement) {
      // the first category whose running sum exceeds u * total; clamped for a u * total rounding to the end
      const cdf = w.cumsum(-1);
      out = searchsorted(cdf, u.mul(sums), { right: true }).clampMax(c - 1);
    } else {
      // u kept inside (0, 1) so every positive weight's key is finite; a zero weight's is -inf
      const gumbel = u.clamp(2 ** -25, 1 - 2 ** -24).log().neg().log().neg();
      const [, picked] = where(w.gt(0), w.log().add(gumbel), -Infinity).topk(n, -1);
      out = picked;
    }
    return input.ndim === 1 ? out.squeeze(0) : out;
  });
}
