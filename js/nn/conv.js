// Convolution and pooling modules in PyTorch's shape: the same constructor arguments (keyword
// arguments in an options object), the same parameter names (weight, bias) and layouts, and
// PyTorch's default initialisation, so a PyTorch state dict loads as it is.
//
//   const conv = new om.nn.Conv2d(1, 6, 5, { padding: 2 });   // weight [6, 1, 5, 5], bias [6]
//   const pool = new om.nn.MaxPool2d(2);
//   const y = pool.forward(conv.forward(x).relu());
import { invalid } from '../errors.js';
import { rand, tidy, optionsArg, isOptions } from '../tensor.js';
import { describe, toI32 } from '../convert.js';
import { Module } from './module.js';
import {
  conv1d, conv2d, conv3d, convTranspose1d, convTranspose2d, convTranspose3d, maxPool2d, avgPool2d, adaptiveAvgPool2d, unfold, fold, sizes, maxPool1d,
  avgPool1d, adaptiveAvgPool1d, maxPool3d, avgPool3d, adaptiveAvgPool3d, adaptiveMaxPool1d, adaptiveMaxPool2d,
  adaptiveMaxPool3d, maxUnpool1d, maxUnpool2d, maxUnpool3d,
} from '../ops/conv.js';

/** A leaf parameter uniform in ±bound (om.manualSeed makes it reproducible). */
function uniformParameter(shape, bound) {
  const t = tidy(() => rand(shape).mul(2 * bound).sub(bound));
  t.requiresGrad = true;
  return t;
}

const asNumbers = (list) => list.map(Number);

/**
 * The module class `who` of an Nd base at rank n: the user's arguments after (who, n, fn), the
 * functional op forward calls (the computed key names the class `who`, as a class statement would).
 */
const atRank = (Base, who, n, fn) => ({ [who]: class extends Base {
  constructor(...args) {
    super(who, n, fn, ...args);
  }
} })[who];

/**
 * The shared part of Conv1d, Conv2d, Conv3d and ConvTranspose1d, 2d and 3d (PyTorch's
 * _ConvNd); a class that extends ConvTransposeNd is transposed.
 */
class ConvNd extends Module {
  #fn; // the functional op forward calls
  #keys; // the options forward passes to it

  constructor(who, n, fn, inChannels, outChannels, kernelSize, options) {
    super();
    const transposed = new.target.transposed === true;
    const extra = transposed ? ['outputPadding'] : [];
    // kernelSize by name too, as torchvision's BasicConv2d passes it (nn.Conv2d(in, out,
    // bias=False, **kwargs) with kernel_size in kwargs): new nn.Conv2d(i, o, { kernelSize: 3, bias: false })
    if (isOptions(kernelSize) && options === undefined) {
      const { kernelSize: k, ...rest } = kernelSize;
      if (k === undefined) throw invalid(`${who}: kernelSize is required (as the third argument or an option)`);
      [kernelSize, options] = [k, rest];
    }
    const o = optionsArg(options, who, ['stride', 'padding', 'dilation', 'groups', 'bias', 'paddingMode', ...extra]);
    const cin = toI32(inChannels, who, 'inChannels');
    const cout = toI32(outChannels, who, 'outChannels');
    const groups = toI32(o.groups ?? 1, who, 'groups');
    if (cin < 1 || cout < 1) throw invalid(`${who}: inChannels and outChannels must be positive, got ${cin} and ${cout}`);
    if (groups < 1 || cin % groups || cout % groups) {
      throw invalid(`${who}: groups ${groups} must be positive and divide inChannels ${cin} and outChannels ${cout}`);
    }
    if ((o.paddingMode ?? 'zeros') !== 'zeros') throw invalid(`${who}: paddingMode ${describe(o.paddingMode)} is not supported (only 'zeros')`);
    const bias = o.bias ?? true;
    if (typeof bias !== 'boolean') throw invalid(`${who}: bias must be a boolean, got ${describe(bias)}`);
    const kernel = asNumbers(sizes(kernelSize, n, who, 'kernelSize'));
    if (kernel.some((k) => k < 1)) throw invalid(`${who}: kernelSize must be positive, got [${kernel}]`);
    this.inChannels = cin;
    this.outChannels = cout;
    this.kernelSize = kernel;
    this.stride = asNumbers(sizes(o.stride ?? 1, n, who, 'stride'));
    this.padding = typeof o.padding === 'string' && !transposed ? o.padding : asNumbers(sizes(o.padding ?? 0, n, who, 'padding'));
    if (transposed) this.outputPadding = asNumbers(sizes(o.outputPadding ?? 0, n, who, 'outputPadding'));
    this.dilation = asNumbers(sizes(o.dilation ?? 1, n, who, 'dilation'));
    this.groups = groups;
    this.#fn = fn;
    this.#keys = ['stride', 'padding', ...extra, 'dilation', 'groups'];
    // PyTorch's reset_parameters: kaiming_uniform_(a = sqrt(5)) is uniform in ±1/sqrt(fan_in),
    // fan_in = weight.shape[1] * kernel elements (for a transposed conv that is outChannels/groups).
    const shape = transposed ? [cin, cout / groups, ...kernel] : [cout, cin / groups, ...kernel];
    const fanIn = shape[1] * kernel.reduce((a, b) => a * b, 1);
    const bound = 1 / Math.sqrt(fanIn);
    /** [outChannels, inChannels/groups, ...kernelSize] ([inChannels, outChannels/groups, ...] transposed). */
    this.weight = uniformParameter(shape, bound);
    /** [outChannels], or null without bias. */
    this.bias = bias ? uniformParameter([cout], bound) : null;
  }

  /** The convolution of x with this module's weight, bias and settings. */
  forward(x) {
    const options = {}; // a loop: Object.fromEntries would cost more than the convolution at batch 1
    for (const k of this.#keys) options[k] = this[k];
    return this.#fn(x, this.weight, this.bias, options);
  }
}

/** The transposed convolutions' base: ConvNd with the weight [inChannels, outChannels/groups, ...] and outputPadding. */
class ConvTransposeNd extends ConvNd {
  static transposed = true;
}

/** PyTorch's nn.Conv1d: x [N, inChannels, L] -> [N, outChannels, OL]. */
export const Conv1d = atRank(ConvNd, 'Conv1d', 1, conv1d);

/** PyTorch's nn.Conv2d: x [N, inChannels, H, W] -> [N, outChannels, OH, OW]. */
export const Conv2d = atRank(ConvNd, 'Conv2d', 2, conv2d);

/** PyTorch's nn.Conv3d: x [N, inChannels, D, H, W] -> [N, outChannels, OD, OH, OW]. */
export const Conv3d = atRank(ConvNd, 'Conv3d', 3, conv3d);

/** PyTorch's nn.ConvTranspose1d: x [N, inChannels, L] -> [N, outChannels, OL]; weight [inChannels, outChannels/groups, k]. */
export const ConvTranspose1d = atRank(ConvTransposeNd, 'ConvTranspose1d', 1, convTranspose1d);

/** PyTorch's nn.ConvTranspose2d: x [N, inChannels, H, W] -> [N, outChannels, OH, OW]. */
export const ConvTranspose2d = atRank(ConvTransposeNd, 'ConvTranspose2d', 2, convTranspose2d);

/** PyTorch's nn.ConvTranspose3d: x [N, inChannels, D, H, W] -> [N, outChannels, OD, OH, OW]. */
export const ConvTranspose3d = atRank(ConvTransposeNd, 'ConvTranspose3d', 3, convTranspose3d);

/** The pools' settings after kernelSize and stride, and their defaults (the booleans are flags, the rest sizes). */
const POOL_DEFAULTS = { padding: 0, dilation: 1, ceilMode: false, countIncludePad: true, returnIndices: false };

/**
 * The shared part of the max and average pools (PyTorch's _MaxPoolNd and _AvgPoolNd): keys are the
 * settings after kernelSize and stride that fn(x, kernelSize, options) takes; `refused` an option
 * that is refused when set (the average pools' divisorOverride), or null.
 */
class PoolNd extends Module {
  #fn;
  #keys;

  constructor(who, n, fn, keys, refused, kernelSize, options) {
    super();
    const o = optionsArg(options, who, ['stride', ...keys, ...(refused ? [refused] : [])]);
    if (refused && o[refused] !== undefined && o[refused] !== null && o[refused] !== false) throw invalid(`${who}: ${refused} is not supported`);
    this.kernelSize = kernelSize;
    this.stride = o.stride ?? kernelSize;
    for (const k of keys) this[k] = o[k] ?? POOL_DEFAULTS[k];
    for (const k of ['kernelSize', 'stride', ...keys]) {
      if (typeof POOL_DEFAULTS[k] !== 'boolean') sizes(this[k], n, who, k);
      else if (typeof this[k] !== 'boolean') throw invalid(`${who}: ${k} must be a boolean, got ${describe(this[k])}`);
    }
    this.#fn = fn;
    this.#keys = ['stride', ...keys];
  }

  forward(x) {
    const options = {};
    for (const k of this.#keys) options[k] = this[k];
    return this.#fn(x, this.kernelSize, options);
  }
}

/** PyTorch's _MaxPoolNd: kernelSize, { stride = kernelSize, padding = 0, dilation = 1, ceilMode = false,
 *  returnIndices = false } (forward then gives [values, indices]). */
class MaxPoolNd extends PoolNd {
  constructor(who, n, fn, kernelSize, options) {
    super(who, n, fn, ['padding', 'dilation', 'ceilMode', 'returnIndices'], null, kernelSize, options);
  }
}

/** PyTorch's nn.MaxPool1d(kernelSize, { stride = kernelSize, padding, dilation, ceilMode, returnIndices }) on [N, C, L]: F.maxPool1d. */
export const MaxPool1d = atRank(MaxPoolNd, 'MaxPool1d', 1, maxPool1d);

/** PyTorch's nn.MaxPool2d(kernelSize, { stride = kernelSize, padding, dilation, ceilMode, returnIndices }) on [N, C, H, W]. */
export const MaxPool2d = atRank(MaxPoolNd, 'MaxPool2d', 2, maxPool2d);

/** PyTorch's nn.MaxPool3d(kernelSize, { stride = kernelSize, padding, dilation, ceilMode, returnIndices }) on [N, C, D, H, W]: F.maxPool3d. */
export const MaxPool3d = atRank(MaxPoolNd, 'MaxPool3d', 3, maxPool3d);

/** PyTorch's _AvgPoolNd: kernelSize, { stride = kernelSize, padding = 0, ceilMode = false, countIncludePad = true }. */
class AvgPoolNd extends PoolNd {
  constructor(who, n, fn, kernelSize, options) {
    super(who, n, fn, ['padding', 'ceilMode', 'countIncludePad'], 'divisorOverride', kernelSize, options);
  }
}

/** PyTorch's nn.AvgPool1d(kernelSize, { stride = kernelSize, padding, ceilMode, countIncludePad = true }) on [N, C, L]: F.avgPool1d. */
export const AvgPool1d = atRank(AvgPoolNd, 'AvgPool1d', 1, avgPool1d);

/** PyTorch's nn.AvgPool2d(kernelSize, { stride = kernelSize, padding, ceilMode, countIncludePad = true }) on [N, C, H, W]. */
export const AvgPool2d = atRank(AvgPoolNd, 'AvgPool2d', 2, avgPool2d);

/** PyTorch's nn.AvgPool3d(kernelSize, { stride = kernelSize, padding, ceilMode, countIncludePad = true }) on [N, C, D, H, W]: F.avgPool3d. */
export const AvgPool3d = atRank(AvgPoolNd, 'AvgPool3d', 3, avgPool3d);

/** The shared part of AdaptiveAvgPool1d, 2d and 3d: outputSize a positive integer or n of them, null keeping the input's size. */
class AdaptiveAvgPoolNd extends Module {
  #fn;

  constructor(who, n, fn, outputSize) {
    super();
    const list = Array.isArray(outputSize) && n > 1 ? outputSize : [outputSize];
    if ((list.length !== 1 && list.length !== n) || list.some((v) => v !== null && (!Number.isInteger(v) || v < 1))) {
      throw invalid(`${who}: outputSize must be a positive integer${n > 1 ? ` or ${n} of them` : ''} (null keeps the input's), got ${describe(outputSize)}`);
    }
    this.outputSize = outputSize;
    this.#fn = fn;
  }

  forward(x) {
    return this.#fn(x, this.outputSize);
  }
}

/** PyTorch's nn.AdaptiveAvgPool1d(outputSize) on [N, C, L]: F.adaptiveAvgPool1d. */
export const AdaptiveAvgPool1d = atRank(AdaptiveAvgPoolNd, 'AdaptiveAvgPool1d', 1, adaptiveAvgPool1d);

/** PyTorch's nn.AdaptiveAvgPool2d(outputSize): an integer or [oH, oW] (null keeps that input size). */
export const AdaptiveAvgPool2d = atRank(AdaptiveAvgPoolNd, 'AdaptiveAvgPool2d', 2, adaptiveAvgPool2d);

/** PyTorch's nn.AdaptiveAvgPool3d(outputSize) on [N, C, D, H, W]: an integer or [oD, oH, oW] (null keeps that input size). */
export const AdaptiveAvgPool3d = atRank(AdaptiveAvgPoolNd, 'AdaptiveAvgPool3d', 3, adaptiveAvgPool3d);

/** The adaptive max pools' modules: outputSize as their function takes it, returnIndices a boolean or { returnIndices }. */
const adaptiveMax = (who, pool) => ({ [who]: class extends Module {
  constructor(outputSize, options = undefined) {
    super();
    this.outputSize = outputSize;
    this.returnIndices = typeof options === 'boolean' ? options : optionsArg(options, who, ['returnIndices']).returnIndices ?? false;
    if (typeof this.returnIndices !== 'boolean') throw invalid(`${who}: returnIndices must be a boolean, got ${describe(this.returnIndices)}`);
  }

  /** The pool's values, or [values, indices] with returnIndices. */
  forward(x) {
    return pool(x, this.outputSize, this.returnIndices);
  }
} })[who];

/** nn.AdaptiveMaxPool1d(outputSize, returnIndices = false) on [N, C, L]: F.adaptiveMaxPool1d. */
export const AdaptiveMaxPool1d = adaptiveMax('AdaptiveMaxPool1d', adaptiveMaxPool1d);
/** nn.AdaptiveMaxPool2d(outputSize, returnIndices = false) on [N, C, H, W]: F.adaptiveMaxPool2d. */
export const AdaptiveMaxPool2d = adaptiveMax('AdaptiveMaxPool2d', adaptiveMaxPool2d);
/** nn.AdaptiveMaxPool3d(outputSize, returnIndices = false) on [N, C, D, H, W]: F.adaptiveMaxPool3d. */
export const AdaptiveMaxPool3d = adaptiveMax('AdaptiveMaxPool3d', adaptiveMaxPool3d);

/** The max unpools' modules (PyTorch's _MaxUnpoolNd): kernelSize, { stride = kernelSize, padding = 0 };
 *  forward(input, indices, outputSize) as their function. */
const maxUnpoolAt = (who, n, unpool) => ({ [who]: class extends Module {
  constructor(kernelSize, options = undefined) {
    super();
    const o = optionsArg(options, who, ['stride', 'padding']);
    Object.assign(this, { kernelSize, stride: o.stride ?? kernelSize, padding: o.padding ?? 0 });
    for (const k of ['kernelSize', 'stride', 'padding']) sizes(this[k], n, who, k);
  }

  forward(input, indices, outputSize = undefined) {
    return unpool(input, indices, this.kernelSize, { stride: this.stride, padding: this.padding, outputSize });
  }
} })[who];

/** nn.MaxUnpool1d(kernelSize, { stride, padding }) on [N, C, L]: F.maxUnpool1d. */
export const MaxUnpool1d = maxUnpoolAt('MaxUnpool1d', 1, maxUnpool1d);
/** nn.MaxUnpool2d(kernelSize, { stride, padding }) on [N, C, H, W]: F.maxUnpool2d. */
export const MaxUnpool2d = maxUnpoolAt('MaxUnpool2d', 2, maxUnpool2d);
/** nn.MaxUnpool3d(kernelSize, { stride, padding }) on [N, C, D, H, W]: F.maxUnpool3d. */
export const MaxUnpool3d = maxUnpoolAt('MaxUnpool3d', 3, maxUnpool3d);

/** PyTorch's nn.Unfold(kernelSize, { dilation = 1, padding = 0, stride = 1 }): functional.unfold. */
export class Unfold extends Module {
  constructor(kernelSize, options = {}) {
    super();
    const o = optionsArg(options, 'Unfold', ['dilation', 'padding', 'stride']);
    Object.assign(this, { kernelSize, dilation: o.dilation ?? 1, padding: o.padding ?? 0, stride: o.stride ?? 1 });
    for (const k of ['kernelSize', 'dilation', 'padding', 'stride']) sizes(this[k], 2, 'Unfold', k);
  }

  forward(x) {
    const { dilation, padding, stride } = this;
    return unfold(x, this.kernelSize, { dilation, padding, stride });
  }
}

/** PyTorch's nn.Fold(outputSize, kernelSize, { dilation = 1, padding = 0, stride = 1 }): functional.fold. */
export class Fold extends Module {
  constructor(outputSize, kernelSize, options = {}) {
    super();
    const o = optionsArg(options, 'Fold', ['dilation', 'padding', 'stride']);
    Object.assign(this, { outputSize, kernelSize, dilation: o.dilation ?? 1, padding: o.padding ?? 0, stride: o.stride ?? 1 });
    for (const k of ['outputSize', 'kernelSize', 'dilation', 'padding', 'stride']) sizes(this[k], 2, 'Fold', k);
  }

  forward(x) {
    const { dilation, padding, stride } = this;
    return fold(x, this.outputSize, this.kernelSize, { dilation, padding, stride });
  }
}
