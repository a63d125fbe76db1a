// torchvision 0.14's EfficientNet (models/efficientnet.py) ported to om.nn: MBConvConfig,
// FusedMBConvConfig, MBConv, FusedMBConv and EfficientNet (V1 and V2) with torchvision's
// constructor arguments and field names (its state dicts load as they are), the config builder
// efficientnetConf (_efficientnet_conf) and the builders efficientnet_b0 ... b7, efficientnet_v2_s/m/l.
//
//   const net = efficientnet_b0({ numClasses: 10 }).eval();
//
// Weights start from om.nn's default initialisation, not torchvision's init schemes.
import * as om from 'onemodel';
import { invalidConfig, makeDivisible, makeLayer, optionsOf } from './_utils.mjs';

const nn = om.nn;

/** What MBConvConfig and FusedMBConvConfig share (torchvision's _MBConvConfig); block is the block's class. */
class BlockConfig {
  constructor(expandRatio, kernel, stride, inputChannels, outChannels, numLayers, block) {
    Object.assign(this, { expandRatio, kernel, stride, inputChannels, outChannels, numLayers, block });
  }

  static adjustChannels(channels, widthMult, minValue = null) {
    return makeDivisible(channels * widthMult, 8, minValue);
  }

  /** A copy of this config (copy.copy) with some fields changed. */
  with(fields) {
    return Object.assign(Object.create(Object.getPrototypeOf(this)), this, fields);
  }
}

/** An MBConv stage: channels scaled by widthMult, the layer count by depthMult (rounded up). */
export class MBConvConfig extends BlockConfig {
  constructor(expandRatio, kernel, stride, inputChannels, outChannels, numLayers, widthMult = 1.0, depthMult = 1.0, block = null) {
    super(expandRatio, kernel, stride, BlockConfig.adjustChannels(inputChannels, widthMult),
      BlockConfig.adjustChannels(outChannels, widthMult), MBConvConfig.adjustDepth(numLayers, depthMult), block ?? MBConv);
  }

  static adjustDepth(numLayers, depthMult) {
    return Math.ceil(numLayers * depthMult);
  }
}

/** A FusedMBConv stage (EfficientNetV2's first stages). */
export class FusedMBConvConfig extends BlockConfig {
  constructor(expandRatio, kernel, stride, inputChannels, outChannels, numLayers, block = null) {
    super(expandRatio, kernel, stride, inputChannels, outChannels, numLayers, block ?? FusedMBConv);
  }
}

/** cnf's expanded channels, after torchvision's check of its stride. */
function expandedChannelsOf(cnf) {
  if (!(cnf.stride >= 1 && cnf.stride <= 2)) throw invalidConfig('illegal stride value');
  return BlockConfig.adjustChannels(cnf.inputChannels, cnf.expandRatio);
}

/**
 * What MBConv and FusedMBConv share: their layers as `block`, and the residual (the stochastic
 * depth of the block's result plus the input) where the stride and the channels keep the shape.
 */
class ResidualBlock extends nn.Module {
  constructor(cnf, stochasticDepthProb, layers) {
    super();
    this.useResConnect = cnf.stride === 1 && cnf.inputChannels === cnf.outChannels;
    this.block = new nn.Sequential(...layers);
    this.stochastic_depth = new nn.StochasticDepth(stochasticDepthProb, 'row');
    this.outChannels = cnf.outChannels;
  }

  forward(input) {
    const result = this.block.forward(input);
    return this.useResConnect ? this.stochastic_depth.forward(result).add(input) : result;
  }
}

export class MBConv extends ResidualBlock {
  constructor(cnf, stochasticDepthProb, normLayer, seLayer = nn.SqueezeExcitation) {
    const expandedChannels = expandedChannelsOf(cnf);
    const activationLayer = nn.SiLU;
    const layers = [];
    if (expandedChannels !== cnf.inputChannels) { // expand
      layers.push(new nn.Conv2dNormActivation(cnf.inputChannels, expandedChannels, 1, { normLayer, activationLayer }));
    }
    layers.push(new nn.Conv2dNormActivation(expandedChannels, expandedChannels, cnf.kernel, { // depthwise
      stride: cnf.stride, groups: expandedChannels, normLayer, activationLayer,
    }));
    const squeezeChannels = Math.max(1, Math.floor(cnf.inputChannels / 4));
    layers.push(makeLayer(seLayer, expandedChannels, squeezeChannels, { activation: nn.SiLU }));
    layers.push(new nn.Conv2dNormActivation(expandedChannels, cnf.outChannels, 1, { normLayer, activationLayer: null })); // project
    super(cnf, stochasticDepthProb, layers);
  }
}

export class FusedMBConv extends ResidualBlock {
  constructor(cnf, stochasticDepthProb, normLayer) {
    const expandedChannels = expandedChannelsOf(cnf);
    const activationLayer = nn.SiLU;
    const layers = expandedChannels !== cnf.inputChannels
      ? [ // fused expand, then project
        new nn.Conv2dNormActivation(cnf.inputChannels, expandedChannels, cnf.kernel, { stride: cnf.stride, normLayer, activationLayer }),
        new nn.Conv2dNormActivation(expandedChannels, cnf.outChannels, 1, { normLayer, activationLayer: null }),
      ]
      : [new nn.Conv2dNormActivation(cnf.inputChannels, cnf.outChannels, cnf.kernel, { stride: cnf.stride, normLayer, activationLayer })];
    super(cnf, stochasticDepthProb, layers);
  }
}

/**
 * torchvision's EfficientNet(inverted_residual_setting, dropout, stochastic_depth_prob, num_classes,
 * norm_layer, last_channel): new EfficientNet(invertedResidualSetting, dropout,
 * { stochasticDepthProb = 0.2, numClasses = 1000, normLayer = BatchNorm2d, lastChannel = null }).
 */
export class EfficientNet extends nn.Module {
  constructor(invertedResidualSetting, dropout, options) {
    super();
    const o = optionsOf(options, 'EfficientNet', ['stochasticDepthProb', 'numClasses', 'normLayer', 'lastChannel']);
    const { stochasticDepthProb = 0.2, numClasses = 1000, lastChannel = null } = o;
    const normLayer = o.normLayer ?? nn.BatchNorm2d;
    if (!Array.isArray(invertedResidualSetting) || !invertedResidualSetting.length) {
      throw invalidConfig('The inverted_residual_setting should not be empty');
    }
    if (!invertedResidualSetting.every((s) => s instanceof BlockConfig)) {
      throw invalidConfig('The inverted_residual_setting should be List[MBConvConfig]');
    }
    const layers = [new nn.Conv2dNormActivation(3, invertedResidualSetting[0].inputChannels, 3, { stride: 2, normLayer, activationLayer: nn.SiLU })];
    const totalStageBlocks = invertedResidualSetting.reduce((s, cnf) => s + cnf.numLayers, 0);
    let stageBlockId = 0;
    for (const cnf of invertedResidualSetting) {
      const stage = [];
      for (let i = 0; i < cnf.numLayers; i++) {
        // Blocks after a stage's first take its output channels, at stride 1.
        const blockCnf = stage.length ? cnf.with({ inputChannels: cnf.outChannels, stride: 1 }) : cnf;
        const sdProb = stochasticDepthProb * stageBlockId / totalStageBlocks; // linear in the block's depth
        stage.push(new blockCnf.block(blockCnf, sdProb, normLayer));
        stageBlockId++;
      }
      layers.push(new nn.Sequential(...stage));
    }
    const lastconvInputChannels = invertedResidualSetting[invertedResidualSetting.length - 1].outChannels;
    const lastconvOutputChannels = lastChannel ?? 4 * lastconvInputChannels;
    layers.push(new nn.Conv2dNormActivation(lastconvInputChannels, lastconvOutputChannels, 1, { normLayer, activationLayer: nn.SiLU }));
    this.features = new nn.Sequential(...layers);
    this.avgpool = new nn.AdaptiveAvgPool2d(1);
    this.classifier = new nn.Sequential(new nn.Dropout(dropout), new nn.Linear(lastconvOutputChannels, numClasses));
  }

  forward(x) {
    return this.classifier.forward(this.avgpool.forward(this.features.forward(x)).flatten(1));
  }
}

/**
 * torchvision's _efficientnet_conf(arch, width_mult, depth_mult): [setting, lastChannel] for
 * 'efficientnet_b*' (options widthMult and depthMult) or 'efficientnet_v2_s/m/l'.
 */
export function efficientnetConf(arch, options) {
  const { widthMult, depthMult } = optionsOf(options, 'efficientnetConf', ['widthMult', 'depthMult']);
  const M = MBConvConfig, F = FusedMBConvConfig;
  if (arch.startsWith('efficientnet_b')) {
    const bneck = (...a) => new MBConvConfig(...a, widthMult, depthMult);
    return [[
      bneck(1, 3, 1, 32, 16, 1), bneck(6, 3, 2, 16, 24, 2), bneck(6, 5, 2, 24, 40, 2), bneck(6, 3, 2, 40, 80, 3),
      bneck(6, 5, 1, 80, 112, 3), bneck(6, 5, 2, 112, 192, 4), bneck(6, 3, 1, 192, 320, 1),
    ], null];
  }
  if (arch.startsWith('efficientnet_v2_s')) {
    return [[
      new F(1, 3, 1, 24, 24, 2), new F(4, 3, 2, 24, 48, 4), new F(4, 3, 2, 48, 64, 4),
      new M(4, 3, 2, 64, 128, 6), new M(6, 3, 1, 128, 160, 9), new M(6, 3, 2, 160, 256, 15),
    ], 1280];
  }
  if (arch.startsWith('efficientnet_v2_m')) {
    return [[
      new F(1, 3, 1, 24, 24, 3), new F(4, 3, 2, 24, 48, 5), new F(4, 3, 2, 48, 80, 5),
      new M(4, 3, 2, 80, 160, 7), new M(6, 3, 1, 160, 176, 14), new M(6, 3, 2, 176, 304, 18), new M(6, 3, 1, 304, 512, 5),
    ], 1280];
  }
  if (arch.startsWith('efficientnet_v2_l')) {
    return [[
      new F(1, 3, 1, 32, 32, 4), new F(4, 3, 2, 32, 64, 7), new F(4, 3, 2, 64, 96, 7),
      new M(4, 3, 2, 96, 192, 10), new M(6, 3, 1, 192, 224, 19), new M(6, 3, 2, 224, 384, 25), new M(6, 3, 1, 384, 640, 7),
    ], 1280];
  }
  throw invalidConfig(`Unsupported model type ${arch}`);
}

/** BatchNorm2d with eps 1e-3 (and momentum 0.01 for b5 to b7), as torchvision's builders pass. */
const bn = (options) => (c) => new nn.BatchNorm2d(c, options);

/** torchvision's builder: the conf of arch, then EfficientNet(setting, dropout, ...) with options (numClasses, ...). */
const builder = (arch, conf, dropout, normLayer) => (options = {}) => {
  const [setting, lastChannel] = efficientnetConf(arch, conf);
  return new EfficientNet(setting, dropout, { normLayer, lastChannel, ...options });
};

export const efficientnet_b0 = builder('efficientnet_b0', { widthMult: 1.0, depthMult: 1.0 }, 0.2);
export const efficientnet_b1 = builder('efficientnet_b1', { widthMult: 1.0, depthMult: 1.1 }, 0.2);
export const efficientnet_b2 = builder('efficientnet_b2', { widthMult: 1.1, depthMult: 1.2 }, 0.3);
export const efficientnet_b3 = builder('efficientnet_b3', { widthMult: 1.2, depthMult: 1.4 }, 0.3);
export const efficientnet_b4 = builder('efficientnet_b4', { widthMult: 1.4, depthMult: 1.8 }, 0.4);
export const efficientnet_b5 = builder('efficientnet_b5', { widthMult: 1.6, depthMult: 2.2 }, 0.4, bn({ eps: 0.001, momentum: 0.01 }));
export const efficientnet_b6 = builder('efficientnet_b6', { widthMult: 1.8, depthMult: 2.6 }, 0.5, bn({ eps: 0.001, momentum: 0.01 }));
export const efficientnet_b7 = builder('efficientnet_b7', { widthMult: 2.0, depthMult: 3.1 }, 0.5, bn({ eps: 0.001, momentum: 0.01 }));
export const efficientnet_v2_s = builder('efficientnet_v2_s', {}, 0.2, bn({ eps: 1e-3 }));
export const efficientnet_v2_m = builder('efficientnet_v2_m', {}, 0.3, bn({ eps: 1e-3 }));
export const efficientnet_v2_l = builder('efficientnet_v2_l', {}, 0.4, bn({ eps: 1e-3 }));
