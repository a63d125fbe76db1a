// torchvision 0.14's MobileNetV3 (models/mobilenetv3.py) ported to om.nn: InvertedResidualConfig,
// InvertedResidual, MobileNetV3 with torchvision's constructor arguments and field names (its state
// dicts load as they are), the config builder mobilenetV3Conf (_mobilenet_v3_conf) and the builders
// mobilenet_v3_large / mobilenet_v3_small.
//
//   const net = mobilenet_v3_small({ widthMult: 0.5, numClasses: 10 }).eval();
//
// Weights start from om.nn's default initialisation, not torchvision's init schemes.
import * as om from 'onemodel';
import { invalidConfig, makeDivisible, makeLayer, optionsOf } from './_utils.mjs';

const nn = om.nn;

/** One inverted-residual block's settings, channels scaled by widthMult (torchvision's InvertedResidualConfig). */
export class InvertedResidualConfig {
  constructor(inputChannels, kernel, expandedChannels, outChannels, useSe, activation, stride, dilation, widthMult) {
    this.inputChannels = InvertedResidualConfig.adjustChannels(inputChannels, widthMult);
    this.kernel = kernel;
    this.expandedChannels = InvertedResidualConfig.adjustChannels(expandedChannels, widthMult);
    this.outChannels = InvertedResidualConfig.adjustChannels(outChannels, widthMult);
    this.useSe = useSe;
    this.useHs = activation === 'HS';
    this.stride = stride;
    this.dilation = dilation;
  }

  static adjustChannels(channels, widthMult) {
    return makeDivisible(channels * widthMult, 8);
  }
}

/** torchvision's default se_layer: SqueezeExcitation with a Hardsigmoid scale. */
const hardSqueezeExcitation = (channels, squeeze) => new nn.SqueezeExcitation(channels, squeeze, { scaleActivation: nn.Hardsigmoid });

export class InvertedResidual extends nn.Module {
  constructor(cnf, normLayer, seLayer = hardSqueezeExcitation) {
    super();
    if (!(cnf.stride >= 1 && cnf.stride <= 2)) throw invalidConfig('illegal stride value');
    this.useResConnect = cnf.stride === 1 && cnf.inputChannels === cnf.outChannels;
    const layers = [];
    const activationLayer = cnf.useHs ? nn.Hardswish : nn.ReLU;
    if (cnf.expandedChannels !== cnf.inputChannels) { // expand
      layers.push(new nn.Conv2dNormActivation(cnf.inputChannels, cnf.expandedChannels, 1, { normLayer, activationLayer }));
    }
    const stride = cnf.dilation > 1 ? 1 : cnf.stride; // depthwise
    layers.push(new nn.Conv2dNormActivation(cnf.expandedChannels, cnf.expandedChannels, cnf.kernel, {
      stride, dilation: cnf.dilation, groups: cnf.expandedChannels, normLayer, activationLayer,
    }));
    if (cnf.useSe) layers.push(makeLayer(seLayer, cnf.expandedChannels, makeDivisible(Math.floor(cnf.expandedChannels / 4), 8)));
    layers.push(new nn.Conv2dNormActivation(cnf.expandedChannels, cnf.outChannels, 1, { normLayer, activationLayer: null })); // project
    this.block = new nn.Sequential(...layers);
    this.outChannels = cnf.outChannels;
    this.isCn = cnf.stride > 1;
  }

  forward(input) {
    const result = this.block.forward(input);
    return this.useResConnect ? result.add(input) : result;
  }
}

/**
 * torchvision's MobileNetV3(inverted_residual_setting, last_channel, num_classes, block,
 * norm_layer, dropout): new MobileNetV3(invertedResidualSetting, lastChannel, { numClasses = 1000,
 * block = InvertedResidual, normLayer = BatchNorm2d(eps 1e-3, momentum 0.01), dropout = 0.2 }).
 */
export class MobileNetV3 extends nn.Module {
  constructor(invertedResidualSetting, lastChannel, options) {
    super();
    const o = optionsOf(options, 'MobileNetV3', ['numClasses', 'block', 'normLayer', 'dropout']);
    const { numClasses = 1000, dropout = 0.2 } = o;
    if (!Array.isArray(invertedResidualSetting) || !invertedResidualSetting.length) {
      throw invalidConfig('The inverted_residual_setting should not be empty');
    }
    if (!invertedResidualSetting.every((s) => s instanceof InvertedResidualConfig)) {
      throw invalidConfig('The inverted_residual_setting should be List[InvertedResidualConfig]');
    }
    const block = o.block ?? InvertedResidual;
    const normLayer = o.normLayer ?? ((c) => new nn.BatchNorm2d(c, { eps: 0.001, momentum: 0.01 }));
    const firstconvOutputChannels = invertedResidualSetting[0].inputChannels;
    const layers = [new nn.Conv2dNormActivation(3, firstconvOutputChannels, 3, { stride: 2, normLayer, activationLayer: nn.Hardswish })];
    for (const cnf of invertedResidualSetting) layers.push(makeLayer(block, cnf, normLayer));
    const lastconvInputChannels = invertedResidualSetting[invertedResidualSetting.length - 1].outChannels;
    const lastconvOutputChannels = 6 * lastconvInputChannels;
    layers.push(new nn.Conv2dNormActivation(lastconvInputChannels, lastconvOutputChannels, 1, { normLayer, activationLayer: nn.Hardswish }));
    this.features = new nn.Sequential(...layers);
    this.avgpool = new nn.AdaptiveAvgPool2d(1);
    this.classifier = new nn.Sequential(
      new nn.Linear(lastconvOutputChannels, lastChannel), new nn.Hardswish(), new nn.Dropout(dropout), new nn.Linear(lastChannel, numClasses));
  }

  forward(x) {
    return this.classifier.forward(this.avgpool.forward(this.features.forward(x)).flatten(1));
  }
}

/**
 * torchvision's _mobilenet_v3_conf(arch, width_mult, reduced_tail, dilated): [setting, lastChannel]
 * for arch 'mobilenet_v3_large' or 'mobilenet_v3_small'.
 */
export function mobilenetV3Conf(arch, options) {
  const { widthMult = 1.0, reducedTail = false, dilated = false } = optionsOf(options, 'mobilenetV3Conf', ['widthMult', 'reducedTail', 'dilated']);
  const r = reducedTail ? 2 : 1; // reduce_divider
  const d = dilated ? 2 : 1;
  const bneck = (...a) => new InvertedResidualConfig(...a, widthMult);
  const div = (c) => Math.floor(c / r);
  if (arch === 'mobilenet_v3_large') {
    return [[
      bneck(16, 3, 16, 16, false, 'RE', 1, 1),
      bneck(16, 3, 64, 24, false, 'RE', 2, 1), // C1
      bneck(24, 3, 72, 24, false, 'RE', 1, 1),
      bneck(24, 5, 72, 40, true, 'RE', 2, 1), // C2
      bneck(40, 5, 120, 40, true, 'RE', 1, 1),
      bneck(40, 5, 120, 40, true, 'RE', 1, 1),
      bneck(40, 3, 240, 80, false, 'HS', 2, 1), // C3
      bneck(80, 3, 200, 80, false, 'HS', 1, 1),
      bneck(80, 3, 184, 80, false, 'HS', 1, 1),
      bneck(80, 3, 184, 80, false, 'HS', 1, 1),
      bneck(80, 3, 480, 112, true, 'HS', 1, 1),
      bneck(112, 3, 672, 112, true, 'HS', 1, 1),
      bneck(112, 5, 672, div(160), true, 'HS', 2, d), // C4
      bneck(div(160), 5, div(960), div(160), true, 'HS', 1, d),
      bneck(div(160), 5, div(960), div(160), true, 'HS', 1, d),
    ], InvertedResidualConfig.adjustChannels(div(1280), widthMult)]; // C5
  }
  if (arch === 'mobilenet_v3_small') {
    return [[
      bneck(16, 3, 16, 16, true, 'RE', 2, 1), // C1
      bneck(16, 3, 72, 24, false, 'RE', 2, 1), // C2
      bneck(24, 3, 88, 24, false, 'RE', 1, 1),
      bneck(24, 5, 96, 40, true, 'HS', 2, 1), // C3
      bneck(40, 5, 240, 40, true, 'HS', 1, 1),
      bneck(40, 5, 240, 40, true, 'HS', 1, 1),
      bneck(40, 5, 120, 48, true, 'HS', 1, 1),
      bneck(48, 5, 144, 48, true, 'HS', 1, 1),
      bneck(48, 5, 288, div(96), true, 'HS', 2, d), // C4
      bneck(div(96), 5, div(576), div(96), true, 'HS', 1, d),
      bneck(div(96), 5, div(576), div(96), true, 'HS', 1, d),
    ], InvertedResidualConfig.adjustChannels(div(1024), widthMult)]; // C5
  }
  throw invalidConfig(`Unsupported model type ${arch}`);
}

/** The conf's options (widthMult, reducedTail, dilated) and the model's (numClasses, ...) in one object. */
function mobilenetV3(arch, options = {}) {
  const { widthMult, reducedTail, dilated, ...rest } = options;
  const [setting, lastChannel] = mobilenetV3Conf(arch, { widthMult, reducedTail, dilated });
  return new MobileNetV3(setting, lastChannel, rest);
}

export const mobilenet_v3_large = (options) => mobilenetV3('mobilenet_v3_large', options);
export const mobilenet_v3_small = (options) => mobilenetV3('mobilenet_v3_small', options);
