// torchvision 0.14's MobileNetV2 (models/mobilenetv2.py) ported to om.nn: InvertedResidual,
// MobileNetV2 and the builder mobilenet_v2, with torchvision's constructor arguments and field
// names (its state dicts load as they are).
//
//   const net = mobilenet_v2({ widthMult: 0.35, numClasses: 10 }).eval();   // any H, W from 1
//
// Weights start from om.nn's default initialisation, not torchvision's init scheme.
import * as om from 'onemodel';
import { invalidConfig, makeDivisible, makeLayer, optionsOf } from './_utils.mjs';

const nn = om.nn;
const F = nn.functional;

/** Python's round() of a number: to the nearest integer, ties to the even one (Math.round sends 2.5 to 3, Python to 2). */
function roundHalfEven(v) {
  const f = Math.floor(v);
  return v - f !== 0.5 ? Math.round(v) : f + (f % 2 !== 0 ? 1 : 0);
}

/**
 * torchvision's InvertedResidual(inp, oup, stride, expand_ratio, norm_layer): a 1x1 expansion to
 * round(inp * expandRatio) channels with ReLU6 (none when expandRatio is 1), a 3x3 depthwise
 * convolution of that stride with ReLU6, a linear 1x1 projection to oup and its norm; the input is
 * added where the stride is 1 and the widths match.
 */
export class InvertedResidual extends nn.Module {
  constructor(inp, oup, stride, expandRatio, normLayer = null) {
    super();
    this.stride = stride;
    if (stride !== 1 && stride !== 2) throw invalidConfig(`stride should be 1 or 2 insted of ${stride}`); // torchvision's spelling
    normLayer ??= nn.BatchNorm2d;
    const hiddenDim = roundHalfEven(inp * expandRatio);
    this.useResConnect = stride === 1 && inp === oup;
    const layers = [];
    if (expandRatio !== 1) layers.push(new nn.Conv2dNormActivation(inp, hiddenDim, 1, { normLayer, activationLayer: nn.ReLU6 })); // pw
    layers.push(
      new nn.Conv2dNormActivation(hiddenDim, hiddenDim, 3, { stride, groups: hiddenDim, normLayer, activationLayer: nn.ReLU6 }), // dw
      new nn.Conv2d(hiddenDim, oup, 1, { stride: 1, padding: 0, bias: false }), // pw-linear
      makeLayer(normLayer, oup),
    );
    this.conv = new nn.Sequential(...layers);
    this.outChannels = oup;
    this.isCn = stride > 1;
  }

  forward(x) {
    return this.useResConnect ? x.add(this.conv.forward(x)) : this.conv.forward(x);
  }
}

/** torchvision's default inverted_residual_setting: [t (expansion), c (channels), n (repeats), s (first stride)] per stage. */
const DEFAULT_SETTING = [[1, 16, 1, 1], [6, 24, 2, 2], [6, 32, 3, 2], [6, 64, 4, 2], [6, 96, 3, 1], [6, 160, 3, 2], [6, 320, 1, 1]];

/**
 * torchvision's MobileNetV2(num_classes, width_mult, inverted_residual_setting, round_nearest,
 * block, norm_layer, dropout): new MobileNetV2({ numClasses = 1000, widthMult = 1.0,
 * invertedResidualSetting, roundNearest = 8, block = InvertedResidual, normLayer = BatchNorm2d,
 * dropout = 0.2 }). Channels are c * widthMult made divisible by roundNearest; the last 1x1
 * convolution has 1280 * max(1, widthMult) (so at least 1280).
 */
export class MobileNetV2 extends nn.Module {
  constructor(options) {
    super();
    const o = optionsOf(options, 'MobileNetV2',
      ['numClasses', 'widthMult', 'invertedResidualSetting', 'roundNearest', 'block', 'normLayer', 'dropout']);
    const { numClasses = 1000, widthMult = 1.0, roundNearest = 8, dropout = 0.2 } = o;
    const block = o.block ?? InvertedResidual;
    const normLayer = o.normLayer ?? nn.BatchNorm2d;
    const setting = o.invertedResidualSetting ?? DEFAULT_SETTING;
    // torchvision checks only the first entry's length, as here
    if (!Array.isArray(setting) || !setting.length || !Array.isArray(setting[0]) || setting[0].length !== 4) {
      throw invalidConfig(`inverted_residual_setting should be non-empty or a 4-element list, got ${JSON.stringify(setting)?.replaceAll(',', ', ')}`); // Python's list repr
    }
    let inputChannel = makeDivisible(32 * widthMult, roundNearest);
    this.lastChannel = makeDivisible(1280 * Math.max(1.0, widthMult), roundNearest);
    const features = [new nn.Conv2dNormActivation(3, inputChannel, 3, { stride: 2, normLayer, activationLayer: nn.ReLU6 })];
    for (const [t, c, n, s] of setting) {
      const outputChannel = makeDivisible(c * widthMult, roundNearest);
      for (let i = 0; i < n; i++) {
        features.push(makeLayer(block, inputChannel, outputChannel, i === 0 ? s : 1, t, normLayer));
        inputChannel = outputChannel;
      }
    }
    features.push(new nn.Conv2dNormActivation(inputChannel, this.lastChannel, 1, { normLayer, activationLayer: nn.ReLU6 }));
    this.features = new nn.Sequential(...features);
    this.classifier = new nn.Sequential(new nn.Dropout({ p: dropout }), new nn.Linear(this.lastChannel, numClasses));
  }

  forward(x) {
    x = this.features.forward(x);
    x = F.adaptiveAvgPool2d(x, [1, 1]); // torchvision: not squeeze, as the batch can be 1
    x = om.flatten(x, 1);
    return this.classifier.forward(x);
  }
}

/** torchvision's mobilenet_v2 (options: MobileNetV2's). */
export const mobilenet_v2 = (options) => new MobileNetV2(options);
