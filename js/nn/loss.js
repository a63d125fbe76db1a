// Losses in PyTorch's shape: the functions of om.nn.functional (mseLoss, nllLoss, crossEntropy,
// ctcLoss) and the modules of om.nn (MSELoss, NLLLoss, CrossEntropyLoss, CTCLoss). Each is one
// C op (src/ops/loss.c). mseLoss traces to ONNX (Sub, Mul, ReduceMean/ReduceSum); nllLoss,
// crossEntropy and ctcLoss are refused while tracing (UnsupportedOperation: losses are not part
// of an inference graph) and compute eagerly, with gradients, for training.
//
//   const lossFn = new om.nn.CrossEntropyLoss({ labelSmoothing: 0.1 });
//   const loss = lossFn.forward(logits, target);   // logits [N, C] float32, target [N] int64
import { invalid } from '../errors.js';
import { requireReady } from '../runtime.js';
import { Tensor, handle, applyOp, tensor, optionsArg } from '../tensor.js';
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
