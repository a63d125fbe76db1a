// Normalisation modules in PyTorch's shape: LayerNorm, GroupNorm, BatchNorm1d, BatchNorm2d, BatchNorm3d,
// Softmax, LogSoftmax, Softmin. Parameter and buffer names are PyTorch's (weight, bias, running_mean,
// running_var, num_batches_tracked), so a PyTorch state dict loads as it is.
import { invalid } from '../errors.js';
import { describe, toI32, toBool, shapeArg } from '../convert.js';
import { ones, zeros, tensor, tidy, optionsArg } from '../tensor.js';
import { Module } from './module.js';
import { softmax, logSoftmax, layerNorm, groupNorm, batchNorm, instanceNorm, toF64 } from '../ops/norm.js';
import { softmin } from '../ops/act.js';

/** A leaf parameter (requiresGrad) made by fn inside tidy. */
function param(fn) {
  const t = tidy(fn);
  t.requiresGrad = true;
  return t;
}

function positive(x, who, what) {
  const n = toI32(x, who, what);
  if (n < 1) throw invalid(`${who}: ${what} must be positive, got ${n}`);
  return n;
}

/**
 * nn.LayerNorm(normalizedShape, { eps = 1e-5, elementwiseAffine = true, bias = true }): weight
 * ones and bias zeros of normalizedShape; normalises over the trailing dims.
 */
export class LayerNorm extends Module {
  constructor(normalizedShape, options) {
    super();
    const who = 'LayerNorm';
    const o = optionsArg(options, who, ['eps', 'elementwiseAffine', 'bias']);
    const shape = shapeArg(normalizedShape, who).map(Number);
    if (!shape.length || shape.some((s) => s < 1)) throw invalid(`${who}: normalizedShape must be non-empty and positive, got [${shape}]`);
    this.normalizedShape = shape;
    this.eps = toF64(o.eps, who, 'eps', 1e-5);
    this.elementwiseAffine = toBool(o.elementwiseAffine, who, 'elementwiseAffine', true);
    const withBias = toBool(o.bias, who, 'bias', true);
    this.weight = this.elementwiseAffine ? param(() => ones(shape)) : null;
    this.bias = this.elementwiseAffine && withBias ? param(() => zeros(shape)) : null;
  }

  forward(x) {
    return layerNorm(x, this.normalizedShape, { weight: this.weight, bias: this.bias, eps: this.eps });
  }
}

/** nn.GroupNorm(numGroups, numChannels, { eps = 1e-5, affine = true }): weight ones, bias zeros [C]. */
export class GroupNorm extends Module {
  constructor(numGroups, numChannels, options) {
    super();
    const who = 'GroupNorm';
    const o = optionsArg(options, who, ['eps', 'affine']);
    this.numGroups = positive(numGroups, who, 'numGroups');
    this.numChannels = positive(numChannels, who, 'numChannels');
    if (this.numChannels % this.numGroups) {
      throw invalid(`${who}: numChannels must be divisible by numGroups, got ${this.numChannels} and ${this.numGroups}`);
    }
    this.eps = toF64(o.eps, who, 'eps', 1e-5);
    this.affine = toBool(o.affine, who, 'affine', true);
    this.weight = this.affine ? param(() => ones([this.numChannels])) : null;
    this.bias = this.affine ? param(() => zeros([this.numChannels])) : null;
  }

  forward(x) {
    return groupNorm(x, this.numGroups, { weight: this.weight, bias: this.bias, eps: this.eps });
  }
}

/**
 * nn.InstanceNorm1d / InstanceNorm2d (numFeatures, { eps = 1e-5, affine = false }): each sample's
 * channel normalised over its own positions, then weight and bias per channel when affine. A
 * group norm with one channel a group (the same statistics). Running statistics
 * (trackRunningStats: true) are not supported.
 */
class InstanceNorm extends Module {
  constructor(who, dims, numFeatures, options) {
    super();
    const o = optionsArg(options, who, ['eps', 'momentum', 'affine', 'trackRunningStats']);
    if (toBool(o.trackRunningStats, who, 'trackRunningStats', false)) {
      throw invalid(`${who}: trackRunningStats is not supported (each sample's own statistics are used, as in PyTorch's default)`);
    }
    this.dims = dims;
    this.numFeatures = positive(numFeatures, who, 'numFeatures');
    this.eps = toF64(o.eps, who, 'eps', 1e-5);
    this.affine = toBool(o.affine, who, 'affine', false);
    this.weight = this.affine ? param(() => ones([this.numFeatures])) : null;
    this.bias = this.affine ? param(() => zeros([this.numFeatures])) : null;
    this.who = who;
  }

  forward(x) {
    const c = x.shape[x.shape.length - this.dims - 1];
    if (this.affine && c !== this.numFeatures) { // PyTorch raises too (without affine it warns and goes on)
      throw invalid(`${this.who}: the input has ${c} channels, the module ${this.numFeatures} (numFeatures)`);
    }
    return instanceNorm(x, { weight: this.weight, bias: this.bias, eps: this.eps, dims: this.dims, who: this.who });
  }
}

/** nn.InstanceNorm1d on [N, C, L] (or [C, L]). */
export class InstanceNorm1d extends InstanceNorm {
  constructor(numFeatures, options) {
    super('InstanceNorm1d', 1, numFeatures, options);
  }
}

/** nn.InstanceNorm2d on [N, C, H, W] (or [C, H, W]). */
export class InstanceNorm2d extends InstanceNorm {
  constructor(numFeatures, options) {
    super('InstanceNorm2d', 2, numFeatures, options);
  }
}

/** PyTorch's _BatchNorm: the shared body of BatchNorm1d, BatchNorm2d and BatchNorm3d. */
class BatchNorm extends Module {
  #who;
  #ranks;

  constructor(who, ranks, numFeatures, options) {
    super();
    const o = optionsArg(options, who, ['eps', 'momentum', 'affine', 'trackRunningStats']);
    this.#who = who;
    this.#ranks = ranks;
    this.numFeatures = positive(numFeatures, who, 'numFeatures');
    this.eps = toF64(o.eps, who, 'eps', 1e-5);
    /** null: a cumulative moving average (1 / num_batches_tracked), as in PyTorch. */
    this.momentum = o.momentum === null ? null : toF64(o.momentum, who, 'momentum', 0.1);
    this.affine = toBool(o.affine, who, 'affine', true);
    this.trackRunningStats = toBool(o.trackRunningStats, who, 'trackRunningStats', true);
    const c = [this.numFeatures];
    this.weight = this.affine ? param(() => ones(c)) : null;
    this.bias = this.affine ? param(() => zeros(c)) : null;
    if (this.trackRunningStats) {
      this.registerBuffer('running_mean', zeros(c));
      this.registerBuffer('running_var', ones(c));
      this.registerBuffer('num_batches_tracked', tensor(0n, { dtype: 'int64' }));
    } else {
      this.running_mean = null;
      this.running_var = null;
      this.num_batches_tracked = null;
    }
  }

  /**
   * Training mode: batch statistics, and the running ones updated in place (momentum, or
   * 1 / num_batches_tracked when momentum is null), num_batches_tracked + 1. Evaluation mode:
   * the running statistics (batch ones without trackRunningStats). Traces only in eval mode.
   */
  forward(x) {
    const who = this.#who;
    if (!this.#ranks.includes(x?.ndim)) {
      throw invalid(`${who}: expected ${this.#ranks.map((r) => `${r}D`).join(' or ')} input (got ${x?.ndim === undefined ? describe(x) : `${x.ndim}D input`})`);
    }
    const updating = this.training && this.trackRunningStats;
    const count = updating ? this.num_batches_tracked.item() + 1 : 0;
    const factor = this.momentum === null ? (updating ? 1 / count : 0) : this.momentum;
    const bnTraining = this.training || !this.trackRunningStats;
    const y = batchNorm(x, this.trackRunningStats ? this.running_mean : null, this.trackRunningStats ? this.running_var : null, {
      weight: this.weight, bias: this.bias, training: bnTraining, momentum: factor, eps: this.eps,
    });
    if (updating) this.num_batches_tracked.fill_(count); // after the op: a refused call changes nothing
    return y;
  }
}

/** nn.BatchNorm1d(numFeatures, { eps, momentum, affine, trackRunningStats }) on [N, C] or [N, C, L]. */
export class BatchNorm1d extends BatchNorm {
  constructor(numFeatures, options) {
    super('BatchNorm1d', [2, 3], numFeatures, options);
  }
}

/** nn.BatchNorm2d(numFeatures, { eps = 1e-5, momentum = 0.1, affine = true, trackRunningStats = true }) on [N, C, H, W]. */
export class BatchNorm2d extends BatchNorm {
  constructor(numFeatures, options) {
    super('BatchNorm2d', [4], numFeatures, options);
  }
}

/** nn.BatchNorm3d(numFeatures, { eps = 1e-5, momentum = 0.1, affine = true, trackRunningStats = true }) on [N, C, D, H, W]. */
export class BatchNorm3d extends BatchNorm {
  constructor(numFeatures, options) {
    super('BatchNorm3d', [5], numFeatures, options);
  }
}

/** A module applying fn(x, dim) along a fixed dim (Softmax, LogSoftmax, Softmin). */
class AlongDim extends Module {
  #fn;

  constructor(who, fn, dim) {
    super();
    this.#fn = fn;
    this.dim = toI32(dim, who, 'dim');
  }

  forward(x) {
    return this.#fn(x, this.dim);
  }
}

/** nn.Softmax(dim). */
export class Softmax extends AlongDim {
  constructor(dim) {
    super('Softmax', softmax, dim);
  }
}

/** nn.LogSoftmax(dim). */
export class LogSoftmax extends AlongDim {
  constructor(dim) {
    super('LogSoftmax', logSoftmax, dim);
  }
}

/** nn.Softmin(dim): softmax of -x. */
export class Softmin extends AlongDim {
  constructor(dim) {
    super('Softmin', softmin, dim);
  }
}
