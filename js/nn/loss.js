// Losses in PyTorch's shape: the functions of om.nn.functional (mseLoss, nllLoss, crossEntropy,
// ctcLoss, l1Loss, smoothL1Loss, huberLoss, binaryCrossEntropy, binaryCrossEntropyWithLogits,
// klDiv, cosineSimilarity, marginRankingLoss, hingeEmbeddingLoss, softMarginLoss,
// cosineEmbeddingLoss, tripletMarginLoss, multilabelSoftMarginLoss, multilabelMarginLoss,
// multiMarginLoss, poissonNllLoss, gaussianNllLoss) and the modules of om.nn (MSELoss, NLLLoss,
// CrossEntropyLoss, CTCLoss, L1Loss, SmoothL1Loss, HuberLoss, BCELoss, BCEWithLogitsLoss,
// KLDivLoss, CosineSimilarity, MarginRankingLoss, HingeEmbeddingLoss, SoftMarginLoss,
// CosineEmbeddingLoss, TripletMarginLoss, MultiLabelSoftMarginLoss, MultiLabelMarginLoss,
// MultiMarginLoss, PoissonNLLLoss, GaussianNLLLoss).
// mseLoss, nllLoss, crossEntropy and ctcLoss are one C op each (src/ops/loss.c); mseLoss traces to
// ONNX (Sub, Mul, ReduceMean/ReduceSum); nllLoss, crossEntropy and ctcLoss are refused while
// tracing (UnsupportedOperation: losses are not part of an inference graph) and compute eagerly,
// with gradients, for training. The others are PyTorch's formulas written with the library's ops
// (differentiable through them, and traced as those ops).
//
//   const lossFn = new om.nn.CrossEntropyLoss({ labelSmoothing: 0.1 });
//   const loss = lossFn.forward(logits, target);   // logits [N, C] float32, target [N] int64
import { OmError, TraceError, invalid } from '../errors.js';
import { requireReady } from '../runtime.js';
import { Tensor, handle, applyOp, tensor, optionsArg, tidy, where, arange } from '../tensor.js';
import { logsigmoid } from '../ops/act.js';
import { describe, toI64 } from '../convert.js';
import { Module } from './module.js';

const REDUCTIONS = new Map([['none', 0n], ['mean', 1n], ['sum', 2n]]);

function reductionCode(reduction, who) {
  if (!REDUCTIONS.has(reduction)) {
    throw invalid(`${who}: reduction must be 'none', 'mean' or 'sum', got ${describe(reduction)}`);
  }
  return REDUCTIONS.get(reduction);
}

function number(x, who, what) {
  if (typeof x !== 'number' || Number.isNaN(x)) throw invalid(`${who}: ${what} must be a number, got ${describe(x)}`);
  return x;
}

/** A Tensor argument, or an int64 tensor made from an array of integers (freed by the caller). */
function lengthsArg(x, who, what, temps) {
  if (x instanceof Tensor) return handle(x, who, what);
  if (!Array.isArray(x)) throw invalid(`${who}: ${what} must be a Tensor or an array of integers, got ${describe(x)}`);
  const t = tensor(x.map((v, i) => toI64(v, who, what, i)), { dtype: 'int64' });
  temps.push(t);
  return handle(t, who, what);
}

/** (input - target)^2, broadcast, reduced: PyTorch's F.mse_loss(input, target, reduction='mean'). */
export function mseLoss(input, target, options) {
  requireReady('mseLoss');
  const { reduction = 'mean' } = optionsArg(options, 'mseLoss');
  const hs = [handle(input, 'mseLoss', 'input'), handle(target, 'mseLoss', 'target')];
  return applyOp('mseLoss', 'mse_loss', hs, [reductionCode(reduction, 'mseLoss')]);
}

/**
 * PyTorch's F.nll_loss(input, target, weight=None, ignore_index=-100, reduction='mean'):
 * input [N, C, d...] (or [C]) log-probabilities, target [N, d...] int64 class indices.
 */
export function nllLoss(input, target, options) {
  requireReady('nllLoss');
  const { weight = null, ignoreIndex = -100, reduction = 'mean' } = optionsArg(options, 'nllLoss');
  const hs = [handle(input, 'nllLoss', 'input'), handle(target, 'nllLoss', 'target')];
  if (weight !== null) hs.push(handle(weight, 'nllLoss', 'weight'));
  return applyOp('nllLoss', 'nll_loss', hs, [reductionCode(reduction, 'nllLoss'), toI64(ignoreIndex, 'nllLoss', 'ignoreIndex')]);
}

/**
 * PyTorch's F.cross_entropy(input, target, weight=None, ignore_index=-100, reduction='mean',
 * label_smoothing=0.0): log_softmax over dim 1 and nll_loss, fused. target is int64 class
 * indices [N, d...] or float32 class probabilities of the input's shape.
 */
export function crossEntropy(input, target, options) {
  requireReady('crossEntropy');
  const who = 'crossEntropy';
  const { weight = null, ignoreIndex = -100, reduction = 'mean', labelSmoothing = 0 } = optionsArg(options, who);
  const hs = [handle(input, who, 'input'), handle(target, who, 'target')];
  if (weight !== null) hs.push(handle(weight, who, 'weight'));
  return applyOp(who, 'cross_entropy', hs, [reductionCode(reduction, who), toI64(ignoreIndex, who, 'ignoreIndex')],
    [number(labelSmoothing, who, 'labelSmoothing')]);
}

/**
 * PyTorch's F.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0,
 * reduction='mean', zero_infinity=False): logProbs [T, N, C], targets [N, S] or concatenated
 * 1-D, lengths as int64 tensors or arrays of integers. 'mean' divides each sample's loss by its
 * target length, then averages over the batch.
 */
export function ctcLoss(logProbs, targets, inputLengths, targetLengths, options) {
  requireReady('ctcLoss');
  const who = 'ctcLoss';
  const { blank = 0, reduction = 'mean', zeroInfinity = false } = optionsArg(options, who);
  if (typeof zeroInfinity !== 'boolean') throw invalid(`${who}: zeroInfinity must be a boolean, got ${describe(zeroInfinity)}`);
  const temps = [];
  try {
    const hs = [handle(logProbs, who, 'logProbs'), handle(targets, who, 'targets'),
      lengthsArg(inputLengths, who, 'inputLengths', temps), lengthsArg(targetLengths, who, 'targetLengths', temps)];
    return applyOp(who, 'ctc_loss', hs, [toI64(blank, who, 'blank'), reductionCode(reduction, who), zeroInfinity ? 1n : 0n]);
  } finally {
    for (const t of temps) t.dispose();
  }
}

/** nn.MSELoss({ reduction }). */
export class MSELoss extends Module {
  constructor(options) {
    super();
    const { reduction = 'mean' } = optionsArg(options, 'MSELoss');
    reductionCode(reduction, 'MSELoss');
    this.reduction = reduction;
  }

  forward(input, target) {
    return mseLoss(input, target, { reduction: this.reduction });
  }
}

/** Shared options of NLLLoss and CrossEntropyLoss; the weight is a buffer (PyTorch's too). */
function classOptions(self, options, who) {
  const { weight = null, ignoreIndex = -100, reduction = 'mean' } = optionsArg(options, who);
  reductionCode(reduction, who);
  toI64(ignoreIndex, who, 'ignoreIndex');
  if (weight !== null && !(weight instanceof Tensor)) throw invalid(`${who}: weight must be a Tensor or null, got ${describe(weight)}`);
  if (weight !== null) self.registerBuffer('weight', weight);
  else self.weight = null;
  self.ignoreIndex = ignoreIndex;
  self.reduction = reduction;
}

/** nn.NLLLoss({ weight, ignoreIndex, reduction }); the module owns weight (dispose() frees it). */
export class NLLLoss extends Module {
  constructor(options) {
    super();
    classOptions(this, options, 'NLLLoss');
  }

  forward(input, target) {
    return nllLoss(input, target, { weight: this.weight, ignoreIndex: this.ignoreIndex, reduction: this.reduction });
  }
}

/** nn.CrossEntropyLoss({ weight, ignoreIndex, reduction, labelSmoothing }). */
export class CrossEntropyLoss extends Module {
  constructor(options) {
    super();
    classOptions(this, options, 'CrossEntropyLoss');
    const { labelSmoothing = 0 } = optionsArg(options, 'CrossEntropyLoss');
    this.labelSmoothing = number(labelSmoothing, 'CrossEntropyLoss', 'labelSmoothing');
  }

  forward(input, target) {
    return crossEntropy(input, target, {
      weight: this.weight, ignoreIndex: this.ignoreIndex, reduction: this.reduction, labelSmoothing: this.labelSmoothing,
    });
  }
}

/** nn.CTCLoss({ blank, reduction, zeroInfinity }). */
export class CTCLoss extends Module {
  constructor(options) {
    super();
    const { blank = 0, reduction = 'mean', zeroInfinity = false } = optionsArg(options, 'CTCLoss');
    reductionCode(reduction, 'CTCLoss');
    toI64(blank, 'CTCLoss', 'blank');
    if (typeof zeroInfinity !== 'boolean') throw invalid(`CTCLoss: zeroInfinity must be a boolean, got ${describe(zeroInfinity)}`);
    this.blank = blank;
    this.reduction = reduction;
    this.zeroInfinity = zeroInfinity;
  }

  forward(logProbs, targets, inputLengths, targetLengths) {
    return ctcLoss(logProbs, targets, inputLengths, targetLengths,
      { blank: this.blank, reduction: this.reduction, zeroInfinity: this.zeroInfinity });
  }
}

// ---- losses written with the library's ops ----

/** The reduction of a pointwise loss as PyTorch's: 'none' as it is, 'mean', 'sum'. */
function reduce(loss, reduction, who) {
  reductionCode(reduction, who);
  return reduction === 'none' ? loss : reduction === 'sum' ? loss.sum() : loss.mean();
}

/** A Tensor argument or null. */
function optionalTensor(x, who, what) {
  if (x === null || x === undefined) return null;
  if (!(x instanceof Tensor)) throw invalid(`${who}: ${what} must be a Tensor or null, got ${describe(x)}`);
  handle(x, who, what);
  return x;
}

/** A number >= 0. */
function nonNegative(x, who, what) {
  if (typeof x !== 'number' || !(x >= 0)) throw invalid(`${who}: ${what} must be a number >= 0, got ${describe(x)}`);
  return x;
}

/** input and target of one shape (PyTorch's pointwise losses warn and broadcast; here a mismatch is an error). */
function sameShape(input, target, who) {
  handle(input, who, 'input');
  handle(target, who, 'target');
  if (input.shape.join() !== target.shape.join()) {
    throw invalid(`${who}: target [${target.shape}] must have the input's shape [${input.shape}]`);
  }
}

/** |input - target|, reduced: F.l1_loss(input, target, reduction='mean'). */
export function l1Loss(input, target, options) {
  const who = 'l1Loss';
  requireReady(who);
  const { reduction = 'mean' } = optionsArg(options, who, ['reduction']);
  sameShape(input, target, who);
  return tidy(() => reduce(input.sub(target).abs(), reduction, who));
}

/**
 * F.smooth_l1_loss(input, target, reduction='mean', beta=1.0): 0.5 d^2 / beta where d = |input -
 * target| < beta, else d - 0.5 beta (beta 0: the L1 loss).
 */
export function smoothL1Loss(input, target, options) {
  const who = 'smoothL1Loss';
  requireReady(who);
  const { reduction = 'mean', beta = 1 } = optionsArg(options, who, ['reduction', 'beta']);
  nonNegative(beta, who, 'beta');
  sameShape(input, target, who);
  return tidy(() => {
    const d = input.sub(target).abs();
    if (beta === 0) return reduce(d, reduction, who);
    return reduce(where(d.lt(beta), d.mul(d).mul(0.5).div(beta), d.sub(0.5 * beta)), reduction, who);
  });
}

/** F.huber_loss(input, target, reduction='mean', delta=1.0): 0.5 d^2 where d < delta, else delta (d - 0.5 delta). */
export function huberLoss(input, target, options) {
  const who = 'huberLoss';
  requireReady(who);
  const { reduction = 'mean', delta = 1 } = optionsArg(options, who, ['reduction', 'delta']);
  if (typeof delta !== 'number' || !(delta > 0)) throw invalid(`${who}: delta must be a number > 0, got ${describe(delta)}`);
  sameShape(input, target, who);
  return tidy(() => {
    const d = input.sub(target).abs();
    return reduce(where(d.lt(delta), d.mul(d).mul(0.5), d.sub(0.5 * delta).mul(delta)), reduction, who);
  });
}

/**
 * F.binary_cross_entropy(input, target, weight=None, reduction='mean'): -(t log(x) + (1 - t)
 * log(1 - x)) with each log clamped at -100 (PyTorch's), times weight (broadcast); input
 * probabilities in [0, 1].
 */
export function binaryCrossEntropy(input, target, options) {
  const who = 'binaryCrossEntropy';
  requireReady(who);
  const { weight = null, reduction = 'mean' } = optionsArg(options, who, ['weight', 'reduction']);
  sameShape(input, target, who);
  const w = optionalTensor(weight, who, 'weight');
  return tidy(() => {
    const lx = input.log().clamp(-100), l1x = input.neg().add(1).log().clamp(-100);
    let loss = target.mul(lx).add(target.neg().add(1).mul(l1x)).neg();
    if (w) loss = loss.mul(w);
    return reduce(loss, reduction, who);
  });
}

/**
 * F.binary_cross_entropy_with_logits(input, target, weight=None, reduction='mean',
 * pos_weight=None), PyTorch's stable form: (1 - t) x + l (log(exp(-m) + exp(-x - m)) + m) with
 * m = max(-x, 0) and l = 1 + (pos_weight - 1) t (1 without pos_weight), times weight.
 */
export function binaryCrossEntropyWithLogits(input, target, options) {
  const who = 'binaryCrossEntropyWithLogits';
  requireReady(who);
  const { weight = null, reduction = 'mean', posWeight = null } = optionsArg(options, who, ['weight', 'reduction', 'posWeight']);
  sameShape(input, target, who);
  const w = optionalTensor(weight, who, 'weight'), pw = optionalTensor(posWeight, who, 'posWeight');
  return tidy(() => {
    const m = input.neg().clamp(0);
    const soft = m.neg().exp().add(input.neg().sub(m).exp()).log().add(m);
    const scaled = pw ? soft.mul(pw.sub(1).mul(target).add(1)) : soft;
    let loss = target.neg().add(1).mul(input).add(scaled);
    if (w) loss = loss.mul(w);
    return reduce(loss, reduction, who);
  });
}

/**
 * F.kl_div(input, target, reduction='mean', log_target=False): input log-probabilities; target
 * probabilities (t log t - t x, 0 where t is 0) or, with logTarget, log-probabilities (exp(t) (t
 * - x)). 'batchmean' divides the sum by the first dim (PyTorch's advice; 'mean' averages every
 * element, as PyTorch's default does).
 */
export function klDiv(input, target, options) {
  const who = 'klDiv';
  requireReady(who);
  const { reduction = 'mean', logTarget = false } = optionsArg(options, who, ['reduction', 'logTarget']);
  if (typeof logTarget !== 'boolean') throw invalid(`${who}: logTarget must be a boolean, got ${describe(logTarget)}`);
  if (reduction !== 'batchmean') reductionCode(reduction, who);
  sameShape(input, target, who);
  return tidy(() => {
    const loss = logTarget ? target.exp().mul(target.sub(input))
      : where(target.gt(0), target.mul(where(target.gt(0), target, 1).log()), 0).sub(target.mul(input));
    if (reduction !== 'batchmean') return reduce(loss, reduction, who);
    return loss.sum().div(input.shape.length ? input.shape[0] : 1);
  });
}

/**
 * F.cosine_similarity(x1, x2, dim=1, eps=1e-8), as PyTorch 1.13 computes it: the sum over dim of
 * (x1 / max(|x1|, eps)) (x2 / max(|x2|, eps)), the norms over dim; x1 and x2 broadcast.
 */
export function cosineSimilarity(x1, x2, options) {
  const who = 'cosineSimilarity';
  requireReady(who);
  const { dim = 1, eps = 1e-8 } = optionsArg(options, who, ['dim', 'eps']);
  handle(x1, who, 'x1');
  handle(x2, who, 'x2');
  nonNegative(eps, who, 'eps');
  return tidy(() => x1.div(x1.norm(2, dim, true).clamp(eps)).mul(x2.div(x2.norm(2, dim, true).clamp(eps))).sum(dim));
}

/** A number (NaN and the infinities pass, as PyTorch's float margins). */
function margin(x, who) {
  if (typeof x !== 'number') throw invalid(`${who}: margin must be a number, got ${describe(x)}`);
  return x;
}

/** Tensors of one number of dims (PyTorch's check; sizes then broadcast as its ops do). */
function sameDims(who, named) {
  const entries = Object.entries(named);
  for (const [name, t] of entries) handle(t, who, name);
  if (entries.some(([, t]) => t.ndim !== entries[0][1].ndim)) {
    throw invalid(`${who}: All input tensors should have same dimension but got sizes: ${entries.map(([n, t]) => `${n}: [${t.shape}]`).join(', ')}`);
  }
}

/**
 * F.margin_ranking_loss(input1, input2, target, margin=0, reduction='mean'): max(0, -target *
 * (input1 - input2) + margin), target 1 where input1 should rank higher and -1 where lower.
 */
export function marginRankingLoss(input1, input2, target, options) {
  const who = 'marginRankingLoss';
  requireReady(who);
  const o = optionsArg(options, who, ['margin', 'reduction']);
  const m = margin(o.margin ?? 0, who), reduction = o.reduction ?? 'mean';
  sameDims(who, { input1, input2, target });
  return tidy(() => reduce(target.neg().mul(input1.sub(input2)).add(m).clampMin(0), reduction, who));
}

/**
 * F.hinge_embedding_loss(input, target, margin=1, reduction='mean'), PyTorch's steps: max(0,
 * margin - input) where target is not 1, plus input where target is not -1 (so a target of 1
 * gives input, -1 the hinge, and any other value both).
 */
export function hingeEmbeddingLoss(input, target, options) {
  const who = 'hingeEmbeddingLoss';
  requireReady(who);
  const o = optionsArg(options, who, ['margin', 'reduction']);
  const m = margin(o.margin ?? 1, who), reduction = o.reduction ?? 'mean';
  sameDims(who, { input, target });
  return tidy(() => {
    const hinge = where(target.ne(1), input.neg().add(m).clampMin(0), 0);
    return reduce(hinge.add(where(target.ne(-1), input, 0)), reduction, who);
  });
}

/** F.soft_margin_loss(input, target, reduction='mean'): log(1 + exp(-input * target)), target 1 or -1. */
export function softMarginLoss(input, target, options) {
  const who = 'softMarginLoss';
  requireReady(who);
  const { reduction = 'mean' } = optionsArg(options, who, ['reduction']);
  sameShape(input, target, who);
  return tidy(() => reduce(input.neg().mul(target).exp().log1p(), reduction, who));
}

/**
 * F.cosine_embedding_loss(input1, input2, target, margin=0, reduction='mean'), PyTorch's steps:
 * cos = sum(x1 x2) / sqrt((sum(x1^2) + 1e-12) (sum(x2^2) + 1e-12)) over the last dim, then 1 - cos
 * where target is 1, max(0, cos - margin) where it is -1, 0 elsewhere. Inputs [N, D] with target
 * [N], or [D] with a 0-d target.
 */
export function cosineEmbeddingLoss(input1, input2, target, options) {
  const who = 'cosineEmbeddingLoss';
  requireReady(who);
  const o = optionsArg(options, who, ['margin', 'reduction']);
  const m = margin(o.margin ?? 0, who), reduction = o.reduction ?? 'mean';
  for (const [name, t] of Object.entries({ input1, input2, target })) handle(t, who, name);
  if (target.ndim > 1) throw invalid(`${who}: Expected 1D or 0D target tensor, but got ${target.ndim}D target tensor`);
  const want = target.ndim + 1;
  if (input1.ndim !== want || input2.ndim !== want) {
    throw invalid(`${who}: ${target.ndim}D target tensor expects ${want}D input tensors, but found inputs with sizes [${input1.shape}] and [${input2.shape}]`);
  }
  return tidy(() => {
    const d = want - 1;
    const dot = input1.mul(input2).sum(d);
    const mag1 = input1.mul(input1).sum(d).add(1e-12), mag2 = input2.mul(input2).sum(d).add(1e-12);
    const cos = dot.div(mag1.mul(mag2).sqrt());
    const loss = where(target.eq(1), cos.neg().add(1), 0).add(where(target.eq(-1), cos.sub(m).clampMin(0), 0));
    return reduce(loss, reduction, who);
  });
}

/**
 * F.triplet_margin_loss(anchor, positive, negative, margin=1, p=2, eps=1e-6, swap=False,
 * reduction='mean'): max(0, margin + d(anchor, positive) - d(anchor, negative)) with d(a, b) =
 * norm(a - b + eps, p) over the last dim (PyTorch's pairwise_distance); swap uses the smaller of
 * d(anchor, negative) and d(positive, negative).
 */
export function tripletMarginLoss(anchor, positive, negative, options) {
  const who = 'tripletMarginLoss';
  requireReady(who);
  const o = optionsArg(options, who, ['margin', 'p', 'eps', 'swap', 'reduction']);
  const m = margin(o.margin ?? 1, who), reduction = o.reduction ?? 'mean';
  const p = o.p ?? 2, eps = nonNegative(o.eps ?? 1e-6, who, 'eps'), swap = o.swap ?? false;
  if (typeof p !== 'number' || !(p > 0)) throw invalid(`${who}: p must be a number > 0, got ${describe(p)}`);
  if (typeof swap !== 'boolean') throw invalid(`${who}: swap must be a boolean, got ${describe(swap)}`);
  sameDims(who, { anchor, positive, negative });
  if (anchor.ndim < 1 || anchor.ndim > 2) throw invalid(`${who}: takes 1-D or 2-D inputs ([D] or [N, D]), got ${anchor.ndim} dims`);
  return tidy(() => {
    const dist = (a, b) => a.sub(b).add(eps).norm(p, -1);
    const dPos = dist(anchor, positive);
    const dNeg = swap ? dist(anchor, negative).minimum(dist(positive, negative)) : dist(anchor, negative);
    return reduce(dPos.sub(dNeg).add(m).clampMin(0), reduction, who);
  });
}

/** The class dim's size and a check that input is [C] or [N, C] (the multi-label and multi-class margin losses). */
function classes(input, who) {
  if (input.ndim !== 1 && input.ndim !== 2) throw invalid(`${who}: takes a 1-D or 2-D input ([C] or [N, C]), got [${input.shape}]`);
  return input.shape[input.ndim - 1];
}

/**
 * F.multilabel_soft_margin_loss(input, target, weight=None, reduction='mean'), PyTorch's steps:
 * -(t logsigmoid(x) + (1 - t) logsigmoid(-x)), times weight, summed over the class (last) dim and
 * divided by C, then reduced over the samples.
 */
export function multilabelSoftMarginLoss(input, target, options) {
  const who = 'multilabelSoftMarginLoss';
  requireReady(who);
  const { weight = null, reduction = 'mean' } = optionsArg(options, who, ['weight', 'reduction']);
  sameShape(input, target, who);
  const w = optionalTensor(weight, who, 'weight');
  return tidy(() => {
    const d = Math.max(input.ndim - 1, 0);
    let loss = target.mul(logsigmoid(input)).add(target.neg().add(1).mul(logsigmoid(input.neg()))).neg();
    if (w) loss = loss.mul(w);
    return reduce(loss.sum(d).div(input.ndim ? input.shape[d] : 1), reduction, who);
  });
}

/**
 * F.multilabel_margin_loss(input, target, reduction='mean'): input [C] or [N, C]; target int64 of
 * its shape holding each sample's classes, ended by the first -1. Per sample, the sum over its
 * classes j and the classes i that are not among them of max(0, 1 - (x[j] - x[i])), divided by C
 * (a class listed twice counts twice, as PyTorch's kernel). Written as masks over [.., C (j), C (i)].
 */
export function multilabelMarginLoss(input, target, options) {
  const who = 'multilabelMarginLoss';
  requireReady(who);
  const { reduction = 'mean' } = optionsArg(options, who, ['reduction']);
  sameShape(input, target, who);
  const c = classes(input, who);
  if (target.dtype !== 'int64') throw new OmError('DtypeMismatch', `${who}: target must be int64 class indices, not ${target.dtype}`);
  return tidy(() => {
    const listed = target.ne(-1).long().cumprod(-1).bool(); // before the first -1
    const y = where(listed, target, 0);
    const hit = y.unsqueeze(-1).eq(arange(c)).logicalAnd(listed.unsqueeze(-1)); // [.., j, class]
    const isTarget = hit.any(-2); // [.., class]
    const xy = input.gather(-1, y); // x[y_j]
    const terms = xy.unsqueeze(-1).neg().add(input.unsqueeze(-2)).add(1).clampMin(0); // 1 - x[y_j] + x[i]
    const kept = listed.unsqueeze(-1).logicalAnd(isTarget.logicalNot().unsqueeze(-2));
    return reduce(where(kept, terms, 0).sum([-2, -1]).div(c), reduction, who);
  });
}

/**
 * F.multi_margin_loss(input, target, p=1, margin=1, weight=None, reduction='mean'): input [C] or
 * [N, C], target int64 [N] (or 0-d); per sample the sum over i != y of max(0, margin - x[y] +
 * x[i])^p (p 1 or 2), each term times weight[y], divided by C.
 */
export function multiMarginLoss(input, target, options) {
  const who = 'multiMarginLoss';
  requireReady(who);
  const o = optionsArg(options, who, ['p', 'margin', 'weight', 'reduction']);
  const p = o.p ?? 1, m = margin(o.margin ?? 1, who), reduction = o.reduction ?? 'mean';
  if (p !== 1 && p !== 2) throw invalid(`${who}: only p == 1 and p == 2 supported, got ${describe(p)}`);
  handle(input, who, 'input');
  handle(target, who, 'target');
  const c = classes(input, who);
  if (target.dtype !== 'int64') throw new OmError('DtypeMismatch', `${who}: target must be int64 class indices, not ${target.dtype}`);
  if (target.ndim !== input.ndim - 1 || (target.ndim && target.shape[0] !== input.shape[0])) {
    throw invalid(`${who}: inconsistent target size: got [${target.shape}] for input [${input.shape}]`);
  }
  const w = optionalTensor(o.weight, who, 'weight');
  if (w && (w.ndim !== 1 || w.shape[0] !== c)) throw invalid(`${who}: weight must be 1-D of the ${c} classes, got [${w.shape}]`);
  return tidy(() => {
    const y = target.unsqueeze(-1);
    let terms = input.sub(input.gather(-1, y)).add(m).clampMin(0); // margin - x[y] + x[i]
    if (p === 2) terms = terms.mul(terms);
    if (w) terms = terms.mul(w.gather(0, target.reshape([-1])).reshape(y.shape));
    return reduce(where(arange(c).eq(y), 0, terms).sum(-1).div(c), reduction, who);
  });
}

/**
 * F.poisson_nll_loss(input, target, log_input=True, full=False, eps=1e-8, reduction='mean'):
 * exp(x) - t x (logInput), else x - t log(x + eps); full adds Stirling's t log(t) - t + 0.5
 * log(2 pi t) where t > 1.
 */
export function poissonNllLoss(input, target, options) {
  const who = 'poissonNllLoss';
  requireReady(who);
  const o = optionsArg(options, who, ['logInput', 'full', 'eps', 'reduction']);
  const logInput = o.logInput ?? true, full = o.full ?? false, eps = number(o.eps ?? 1e-8, who, 'eps'), reduction = o.reduction ?? 'mean';
  for (const [k, v] of [['logInput', logInput], ['full', full]]) if (typeof v !== 'boolean') throw invalid(`${who}: ${k} must be a boolean, got ${describe(v)}`);
  sameShape(input, target, who);
  return tidy(() => {
    let loss = logInput ? input.exp().sub(target.mul(input)) : input.sub(target.mul(input.add(eps).log()));
    if (full) {
      const stirling = target.mul(target.log()).sub(target).add(target.mul(2 * Math.PI).log().mul(0.5));
      loss = loss.add(where(target.le(1), 0, stirling));
    }
    return reduce(loss, reduction, who);
  });
}

/**
 * Whether var holds a negative entry, PyTorch's check; false for a traced var, whose values a
 * graph cannot check (the graph computes log of the clamped values, as for any other var).
 */
function negativeVariance(variance) {
  return tidy(() => {
    const any = variance.lt(0).any();
    try {
      return Boolean(any.item());
    } catch (e) {
      if (e instanceof TraceError) return false;
      throw e;
    }
  });
}

/**
 * F.gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction='mean'), PyTorch's
 * steps: var of input's shape, or without its last dim (unsqueezed), or with a last dim of 1; no
 * negative entry (not checked for a traced var); clamped at eps without changing its gradient (PyTorch clamps a copy under
 * no_grad); 0.5 (log(var) + (input - target)^2 / var), plus 0.5 log(2 pi) with full.
 */
export function gaussianNllLoss(input, target, variance, options) {
  const who = 'gaussianNllLoss';
  requireReady(who);
  const o = optionsArg(options, who, ['full', 'eps', 'reduction']);
  const full = o.full ?? false, eps = number(o.eps ?? 1e-6, who, 'eps'), reduction = o.reduction ?? 'mean';
  if (typeof full !== 'boolean') throw invalid(`${who}: full must be a boolean, got ${describe(full)}`);
  handle(input, who, 'input');
  handle(target, who, 'target');
  handle(variance, who, 'var');
  reductionCode(reduction, who);
  const shape = (t) => t.shape.join();
  const lead = (t) => t.shape.slice(0, -1).join();
  const unsqueeze = shape(variance) !== shape(input) && input.ndim && lead(input) === shape(variance);
  const heteroscedastic = shape(variance) !== shape(input) && input.ndim && variance.ndim && lead(input) === lead(variance) && variance.shape.at(-1) === 1;
  if (shape(variance) !== shape(input) && !unsqueeze && !heteroscedastic) throw invalid(`${who}: var is of incorrect size`);
  if (negativeVariance(variance)) throw invalid(`${who}: var has negative entry/entries`);
  return tidy(() => {
    const v0 = unsqueeze ? variance.unsqueeze(-1) : variance;
    const v = v0.detach().clamp(eps).add(v0.sub(v0.detach())); // the clamped values, v0's gradient
    let loss = v.log().add(input.sub(target).pow(2).div(v)).mul(0.5);
    if (full) loss = loss.add(0.5 * Math.log(2 * Math.PI));
    return reduce(loss, reduction, who);
  });
}

/** A module holding { reduction } and the options a pointwise loss takes, calling fn(input, target, options). */
function pointwiseLoss(name, fn, defaults, arity = 2) {
  return class extends Module {
    constructor(options) {
      super();
      const o = optionsArg(options, name, Object.keys(defaults));
      for (const [k, v] of Object.entries(defaults)) {
        const value = o[k] ?? v;
        if (value instanceof Tensor) this.registerBuffer(k, value); // weight, posWeight: buffers, as PyTorch's
        else this[k] = value;
      }
      if (this.reduction !== 'batchmean') reductionCode(this.reduction, name);
    }

    forward(...tensors) {
      // input and target, or three tensors (MarginRankingLoss, CosineEmbeddingLoss, TripletMarginLoss)
      if (tensors.length !== arity) throw invalid(`${name}: forward takes ${arity} tensors, got ${tensors.length}`);
      return fn(...tensors, Object.fromEntries(Object.keys(defaults).map((k) => [k, this[k]])));
    }
  };
}

/** nn.L1Loss({ reduction }). */
export const L1Loss = pointwiseLoss('L1Loss', l1Loss, { reduction: 'mean' });
/** nn.SmoothL1Loss({ reduction, beta }). */
export const SmoothL1Loss = pointwiseLoss('SmoothL1Loss', smoothL1Loss, { reduction: 'mean', beta: 1 });
/** nn.HuberLoss({ reduction, delta }). */
export const HuberLoss = pointwiseLoss('HuberLoss', huberLoss, { reduction: 'mean', delta: 1 });
/** nn.MarginRankingLoss({ margin, reduction }): forward(input1, input2, target). */
export const MarginRankingLoss = pointwiseLoss('MarginRankingLoss', marginRankingLoss, { margin: 0, reduction: 'mean' }, 3);
/** nn.HingeEmbeddingLoss({ margin, reduction }). */
export const HingeEmbeddingLoss = pointwiseLoss('HingeEmbeddingLoss', hingeEmbeddingLoss, { margin: 1, reduction: 'mean' });
/** nn.SoftMarginLoss({ reduction }). */
export const SoftMarginLoss = pointwiseLoss('SoftMarginLoss', softMarginLoss, { reduction: 'mean' });
/** nn.CosineEmbeddingLoss({ margin, reduction }): forward(input1, input2, target). */
export const CosineEmbeddingLoss = pointwiseLoss('CosineEmbeddingLoss', cosineEmbeddingLoss, { margin: 0, reduction: 'mean' }, 3);
/** nn.TripletMarginLoss({ margin, p, eps, swap, reduction }): forward(anchor, positive, negative). */
export const TripletMarginLoss = pointwiseLoss('TripletMarginLoss', tripletMarginLoss, { margin: 1, p: 2, eps: 1e-6, swap: false, reduction: 'mean' }, 3);
/** nn.MultiLabelSoftMarginLoss({ weight, reduction }); the module owns weight. */
export const MultiLabelSoftMarginLoss = pointwiseLoss('MultiLabelSoftMarginLoss', multilabelSoftMarginLoss, { weight: null, reduction: 'mean' });
/** nn.MultiLabelMarginLoss({ reduction }). */
export const MultiLabelMarginLoss = pointwiseLoss('MultiLabelMarginLoss', multilabelMarginLoss, { reduction: 'mean' });
/** nn.MultiMarginLoss({ p, margin, weight, reduction }); the module owns weight. */
export const MultiMarginLoss = pointwiseLoss('MultiMarginLoss', multiMarginLoss, { p: 1, margin: 1, weight: null, reduction: 'mean' });
/** nn.PoissonNLLLoss({ logInput, full, eps, reduction }). */
export const PoissonNLLLoss = pointwiseLoss('PoissonNLLLoss', poissonNllLoss, { logInput: true, full: false, eps: 1e-8, reduction: 'mean' });
/** nn.GaussianNLLLoss({ full, eps, reduction }): forward(input, target, var). */
export const GaussianNLLLoss = pointwiseLoss('GaussianNLLLoss', gaussianNllLoss, { full: false, eps: 1e-6, reduction: 'mean' }, 3);
/** nn.BCELoss({ weight, reduction }); the module owns weight. */
export const BCELoss = pointwiseLoss('BCELoss', binaryCrossEntropy, { weight: null, reduction: 'mean' });
/** nn.BCEWithLogitsLoss({ weight, reduction, posWeight }); the module owns weight and posWeight. */
export const BCEWithLogitsLoss = pointwiseLoss('BCEWithLogitsLoss', binaryCrossEntropyWithLogits, { weight: null, reduction: 'mean', posWeight: null });
/** nn.KLDivLoss({ reduction, logTarget }). */
export const KLDivLoss = pointwiseLoss('KLDivLoss', klDiv, { reduction: 'mean', logTarget: false });

/** nn.CosineSimilarity({ dim, eps }). */
export class CosineSimilarity extends Module {
  constructor(options) {
    super();
    const { dim = 1, eps = 1e-8 } = optionsArg(options, 'CosineSimilarity', ['dim', 'eps']);
    this.dim = dim;
    this.eps = nonNegative(eps, 'CosineSimilarity', 'eps');
  }

  forward(x1, x2) {
    return cosineSimilarity(x1, x2, { dim: this.dim, eps: this.eps });
  }
}
