// torchvision's building blocks (torchvision 0.14: ops.misc, ops.stochastic_depth,
// models.convnext), written from their semantics with the same submodules and field names, so
// a torchvision state dict loads as it is:
//
//   const stem = new om.nn.Conv2dNormActivation(3, 16, 3, { stride: 2, activationLayer: om.nn.Hardswish });
//   stem.stateDict();        // { '0.weight', '1.weight', '1.bias', '1.running_mean', ... } (no conv bias: it has a norm)
//   const se = new om.nn.SqueezeExcitation(16, 8);   // avgpool, fc1, fc2, activation, scale_activation
//
// A layer option (normLayer, activationLayer, ...) is a Module class, constructed with `new` and
// torchvision's arguments, or a function returning a Module (torchvision's
// functools.partial(nn.BatchNorm2d, eps=0.001) is `(c) => new om.nn.BatchNorm2d(c, { eps: 1e-3 })`),
// or null for none where torchvision allows None.
import { invalid } from '../errors.js';
import { rand, optionsArg } from '../tensor.js';
import { describe, toI32 } from '../convert.js';
import { Module, Linear } from './module.js';
import { Sequential } from './container.js';
import { Conv2d, AdaptiveAvgPool2d } from './conv.js';
import { BatchNorm2d, LayerNorm } from './norm.js';
import { ReLU, Sigmoid, Dropout } from './activation.js';
import { layerNorm } from '../ops/norm.js';

/** A layer from a layer option: new f(...args) for a Module class, else f(...args), checked to be a Module. */
function makeLayer(f, args, who, what) {
  if (typeof f !== 'function') throw invalid(`${who}: ${what} must be a Module class, a function returning a Module, or null, got ${describe(f)}`);
  const m = f.prototype instanceof Module ? new f(...args) : f(...args);
  if (!(m instanceof Module)) throw invalid(`${who}: ${what} returned ${describe(m)}, not an om.nn.Module`);
  return m;
}

/** The modules build(layers) pushes; when it throws, those already made are disposed. */
function layersOf(build) {
  const layers = [];
  try {
    build(layers);
  } catch (e) {
    for (const m of layers) m.dispose();
    throw e;
  }
  return layers;
}

/** An int or a list of them (kernelSize, dilation) as a list of n numbers. */
function pairOf(v, n, who, what) {
  const list = Array.isArray(v) ? v : Array(n).fill(v);
  if (list.length !== n) throw invalid(`${who}: ${what} must be an integer or ${n} of them, got ${describe(v)}`);
  return list.map((x, i) => toI32(x, who, `${what}[${i}]`));
}

/**
 * torchvision.ops.Conv2dNormActivation: Conv2d ('0'), then the norm ('1') and the activation
 * unless null. padding defaults to (kernelSize - 1) / 2 * dilation (floored, per dim); bias
 * defaults to true only without a norm layer.
 */
export class Conv2dNormActivation extends Sequential {
  constructor(inChannels, outChannels, kernelSize = 3, options = {}) {
    const who = 'Conv2dNormActivation';
    const o = optionsArg(options, who, ['stride', 'padding', 'groups', 'normLayer', 'activationLayer', 'dilation', 'inplace', 'bias']);
    const { stride = 1, groups = 1, dilation = 1, normLayer = BatchNorm2d, activationLayer = ReLU } = o;
    let { padding = null, bias = null } = o;
    if (padding === null) {
      const k = pairOf(kernelSize, 2, who, 'kernelSize'), d = pairOf(dilation, 2, who, 'dilation');
      padding = Array.isArray(kernelSize) || Array.isArray(dilation) ? k.map((ki, i) => Math.floor((ki - 1) / 2) * d[i]) : Math.floor((k[0] - 1) / 2) * d[0];
    }
    if (bias === null) bias = normLayer === null;
    super(...layersOf((layers) => {
      layers.push(new Conv2d(inChannels, outChannels, kernelSize, { stride, padding, dilation, groups, bias }));
      if (normLayer !== null) layers.push(makeLayer(normLayer, [outChannels], who, 'normLayer'));
      if (activationLayer !== null) layers.push(makeLayer(activationLayer, [], who, 'activationLayer'));
    }));
    this.outChannels = outChannels;
  }
}

/**
 * torchvision.ops.SqueezeExcitation: input * scaleActivation(fc2(activation(fc1(avgpool(input))))),
 * fc1 and fc2 1x1 convolutions to squeezeChannels and back.
 */
export class SqueezeExcitation extends Module {
  constructor(inputChannels, squeezeChannels, options = {}) {
    super();
    const who = 'SqueezeExcitation';
    const { activation = ReLU, scaleActivation = Sigmoid } = optionsArg(options, who, ['activation', 'scaleActivation']);
    try {
      this.avgpool = new AdaptiveAvgPool2d(1);
      this.fc1 = new Conv2d(inputChannels, squeezeChannels, 1);
      this.fc2 = new Conv2d(squeezeChannels, inputChannels, 1);
      this.activation = makeLayer(activation, [], who, 'activation');
      this.scale_activation = makeLayer(scaleActivation, [], who, 'scaleActivation');
    } catch (e) {
      this.dispose(); // what was made before the failure
      throw e;
    }
  }

  forward(input) {
    const scale = this.scale_activation.forward(this.fc2.forward(this.activation.forward(this.fc1.forward(this.avgpool.forward(input)))));
    return scale.mul(input);
  }
}

/**
 * torchvision.ops.MLP: for each hidden size but the last Linear, the norm (unless null), the
 * activation and Dropout(dropout); then Linear to the last size and Dropout(dropout).
 */
export class MLP extends Sequential {
  constructor(inChannels, hiddenChannels, options = {}) {
    const who = 'MLP';
    const o = optionsArg(options, who, ['normLayer', 'activationLayer', 'inplace', 'bias', 'dropout']);
    const { normLayer = null, activationLayer = ReLU, bias = true, dropout = 0 } = o;
    if (!Array.isArray(hiddenChannels) || !hiddenChannels.length) {
      throw invalid(`${who}: hiddenChannels must be a non-empty array of sizes, got ${describe(hiddenChannels)}`);
    }
    super(...layersOf((layers) => {
      let inDim = inChannels;
      for (const hidden of hiddenChannels.slice(0, -1)) {
        layers.push(new Linear(inDim, hidden, { bias }));
        if (normLayer !== null) layers.push(makeLayer(normLayer, [hidden], who, 'normLayer'));
        layers.push(makeLayer(activationLayer, [], who, 'activationLayer'), new Dropout(dropout));
        inDim = hidden;
      }
      layers.push(new Linear(inDim, hiddenChannels[hiddenChannels.length - 1], { bias }), new Dropout(dropout));
    }));
  }
}

/** torchvision.ops.Permute(dims): x.permute(dims). */
export class Permute extends Module {
  constructor(dims) {
    super();
    if (!Array.isArray(dims)) throw invalid(`Permute: dims must be an array of dims, got ${describe(dims)}`);
    this.dims = dims;
  }

  forward(x) {
    return x.permute(...this.dims);
  }
}

/**
 * torchvision.ops.stochastic_depth(input, p, mode, training = true): in training with p > 0,
 * input times noise of Bernoulli(1 - p) divided by 1 - p (unless 0), one value per row
 * (input.shape[0]) in mode 'row', one for the whole batch in mode 'batch'; else input itself.
 */
export function stochasticDepth(input, p, mode, training = true) {
  const who = 'stochasticDepth';
  if (typeof p !== 'number' || !(p >= 0 && p <= 1)) throw invalid(`${who}: drop probability has to be between 0 and 1, but got ${describe(p)}`);
  if (mode !== 'batch' && mode !== 'row') throw invalid(`${who}: mode has to be either 'batch' or 'row', but got ${describe(mode)}`);
  if (typeof training !== 'boolean') throw invalid(`${who}: training must be a boolean, got ${describe(training)}`);
  if (!training || p === 0) return input;
  const survival = 1 - p;
  const size = input.shape.map((n, d) => (mode === 'row' && d === 0 ? n : 1));
  let noise = rand(size).lt(survival).float();
  if (survival > 0) noise = noise.div(survival);
  return input.mul(noise);
}

/** torchvision.ops.StochasticDepth(p, mode): stochasticDepth(x, p, mode, this.training); identity in eval. */
export class StochasticDepth extends Module {
  constructor(p, mode) {
    super();
    stochasticDepth(null, p, mode, false); // checks p and mode
    this.p = p;
    this.mode = mode;
  }

  forward(input) {
    return stochasticDepth(input, this.p, this.mode, this.training);
  }
}

/** torchvision's ConvNeXt LayerNorm2d: LayerNorm over the channels of [N, C, H, W] (normalizedShape C). */
export class LayerNorm2d extends LayerNorm {
  forward(x) {
    const y = layerNorm(x.permute(0, 2, 3, 1), this.normalizedShape, { weight: this.weight, bias: this.bias, eps: this.eps });
    return y.permute(0, 3, 1, 2);
  }
}
