// Normalisation and attention as functions (torch.nn.functional names, camelCased; keyword
// arguments as a trailing options object): softmax, logSoftmax, layerNorm, groupNorm, batchNorm,
// scaledDotProductAttention. The ops are src/ops/norm.c; PyTorch semantics, float32.
import { invalid } from '../errors.js';
import { omw, requireReady, checkHandle } from '../runtime.js';
import { describe, toI64, toBool, shapeArg } from '../convert.js';
import { applyOp, handle, wrap, optionsArg, tidy } from '../tensor.js';

/** A float argument (a finite number unless allowInf), or fallback when undefined / null. */
export function toF64(x, who, what, fallback) {
  if ((x === undefined || x === null) && fallback !== undefined) return fallback;
  if (typeof x !== 'number' || Number.isNaN(x)) throw invalid(`${who}: ${what} must be a number, got ${describe(x)}`);
  return x;
}

/** Handles of the optional weight / bias tensors (null or undefined: absent) and their flags. */
function optionalHandles(who, pairs) {
  const hs = [];
  const flags = [];
  for (const [name, t] of pairs) {
    const present = t !== undefined && t !== null;
    if (present) hs.push(handle(t, who, name));
    flags.push(present ? 1n : 0n);
  }
  return { hs, flags };
}

/** softmax(input, dim): exp(x - max) / sum along dim (row sums in double). */
export function softmax(input, dim, dtype) {
  requireReady('softmax');
  if (withDtype(input, dtype, 'softmax')) return tidy(() => softmax(input.to(dtype), dim));
  return applyOp('softmax', 'softmax', [handle(input, 'softmax', 'input')], [toI64(dim, 'softmax', 'dim')]);
}

/**
 * Whether PyTorch's dtype argument of softmax/logSoftmax (F.softmax(x, dim=-1, dtype=torch.float32),
 * as LLaMA and T5 write it) asks for a cast of input first: undefined, null or input's own dtype
 * do not; another dtype name does (the op then runs on input.to(dtype)).
 */
function withDtype(input, dtype, who) {
  if (dtype === undefined || dtype === null) return false;
  handle(input, who, 'input');
  if (typeof dtype !== 'string') throw invalid(`${who}: dtype must be a dtype name, got ${describe(dtype)}`);
  return dtype !== input.dtype;
}

/** logSoftmax(input, dim): (x - max) - log(sum(exp(x - max))) along dim. */
export function logSoftmax(input, dim, dtype) {
  requireReady('logSoftmax');
  if (withDtype(input, dtype, 'logSoftmax')) return tidy(() => logSoftmax(input.to(dtype), dim));
  return applyOp('logSoftmax', 'log_softmax', [handle(input, 'logSoftmax', 'input')], [toI64(dim, 'logSoftmax', 'dim')]);
}

/** F.layer_norm: layerNorm(input, normalizedShape, { weight, bias, eps = 1e-5 }). */
export function layerNorm(input, normalizedShape, options) {
  const who = 'layerNorm';
  requireReady(who);
  const o = optionsArg(options, who);
  const x = handle(input, who, 'input');
  const shape = shapeArg(normalizedShape, who);
  const { hs, flags } = optionalHandles(who, [['weight', o.weight], ['bias', o.bias]]);
  return applyOp(who, 'layer_norm', [x, ...hs], [...flags, ...shape], [toF64(o.eps, who, 'eps', 1e-5)], 3);
}

/** F.group_norm: groupNorm(input, numGroups, { weight, bias, eps = 1e-5 }), input [N, C, *]. */
export function groupNorm(input, numGroups, options) {
  const who = 'groupNorm';
  requireReady(who);
  const o = optionsArg(options, who);
  const x = handle(input, who, 'input');
  const g = toI64(numGroups, who, 'numGroups');
  const { hs, flags } = optionalHandles(who, [['weight', o.weight], ['bias', o.bias]]);
  return applyOp(who, 'group_norm', [x, ...hs], [g, ...flags], [toF64(o.eps, who, 'eps', 1e-5)]);
}

/**
 * F.batch_norm: batchNorm(input, runningMean, runningVar, { weight, bias, training = false,
 * momentum = 0.1, eps = 1e-5 }). In training mode the running statistics (when given) are updated
 * in place; runningMean / runningVar may be null only in training mode.
 */
export function batchNorm(input, runningMean, runningVar, options) {
  const who = 'batchNorm';
  requireReady(who);
  const o = optionsArg(options, who);
  const x = handle(input, who, 'input');
  const hasRm = runningMean !== undefined && runningMean !== null;
  const hasRv = runningVar !== undefined && runningVar !== null;
  if (hasRm !== hasRv) throw invalid(`${who}: give both runningMean and runningVar, or neither`);
  const running = hasRm ? [handle(runningMean, who, 'runningMean'), handle(runningVar, who, 'runningVar')] : [];
  const { hs, flags } = optionalHandles(who, [['weight', o.weight], ['bias', o.bias]]);
  const training = toBool(o.training, who, 'training', false);
  return applyOp(who, 'batch_norm', [x, ...running, ...hs], [training ? 1n : 0n, hasRm ? 1n : 0n, ...flags],
    [toF64(o.momentum, who, 'momentum', 0.1), toF64(o.eps, who, 'eps', 1e-5)]);
}

/**
 * F.scaled_dot_product_attention (no dropout): softmax(q k^T * scale + mask) v for q [..., L, E],
 * k [..., S, E], v [..., S, Ev]. attnMask: bool (true takes part) or an additive float mask;
 * isCausal masks above the diagonal; scale defaults to 1/sqrt(E).
 */
export function scaledDotProductAttention(query, key, value, options) {
  const who = 'scaledDotProductAttention';
  requireReady(who);
  const o = optionsArg(options, who);
  const q = handle(query, who, 'query');
  const k = handle(key, who, 'key');
  const v = handle(value, who, 'value');
  const mask = o.attnMask === undefined || o.attnMask === null ? 0 : handle(o.attnMask, who, 'attnMask');
  const causal = toBool(o.isCausal, who, 'isCausal', false);
  const hasScale = o.scale !== undefined && o.scale !== null;
  const scale = hasScale ? toF64(o.scale, who, 'scale') : 0;
  return wrap(checkHandle(omw.scaled_dot_product_attention(q, k, v, mask, causal ? 1 : 0, scale, hasScale ? 1 : 0), who));
}

/**
 * F.instance_norm(input, { weight, bias, eps = 1e-5 }) on [N, C, ...] (at least one position dim):
 * groupNorm with C groups. runningMean / runningVar (PyTorch's use_input_stats false) are not
 * supported. dims and who: the module's expected rank and name.
 */
export function instanceNorm(input, options) {
  requireReady('instanceNorm');
  handle(input, options?.who ?? 'instanceNorm', 'input');
  const o = optionsArg(options, 'instanceNorm', ['weight', 'bias', 'eps', 'runningMean', 'runningVar', 'useInputStats', 'momentum', 'dims', 'who']);
  const who = o.who ?? 'instanceNorm';
  if (o.runningMean || o.runningVar || o.useInputStats === false) throw invalid(`${who}: running statistics are not supported`);
  const rank = input.shape.length;
  if (o.dims !== undefined && rank !== o.dims + 2 && rank !== o.dims + 1) {
    throw invalid(`${who}: takes ${o.dims + 2}-D input [N, C, ...] (or ${o.dims + 1}-D without the batch), got [${input.shape}]`);
  }
  if (rank < 3 && o.dims === undefined) throw invalid(`${who}: takes [N, C, ...] with at least one position dim, got [${input.shape}]`);
  const unbatched = o.dims !== undefined && rank === o.dims + 1;
  return tidy(() => {
    const x = unbatched ? input.unsqueeze(0) : input;
    const y = groupNorm(x, x.shape[1], { weight: o.weight, bias: o.bias, eps: o.eps });
    return unbatched ? y.squeeze(0) : y;
  });
}
