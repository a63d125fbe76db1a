// torchvision 0.14's VGG (models/vgg.py) ported to om.nn: VGG, makeLayers (make_layers), the
// configurations cfgs (A, B, D, E) and the builders vgg11 ... vgg19_bn, with torchvision's
// constructor arguments and field names (its state dicts load as they are).
//
//   const net = vgg11_bn({ numClasses: 10 }).eval();
//
// Weights start from om.nn's default initialisation, not torchvision's init_weights scheme.
import * as om from 'onemodel';
import { optionsOf } from './_utils.mjs';

const nn = om.nn;

/**
 * torchvision's VGG(features, num_classes, init_weights, dropout): new VGG(features, { numClasses =
 * 1000, initWeights (accepted, ignored), dropout = 0.5 }). features [N, 512, H', W'] are pooled to
 * 7 x 7 (adaptively, from any size) before the classifier.
 */
export class VGG extends nn.Module {
  constructor(features, options) {
    super();
    const { numClasses = 1000, dropout = 0.5 } = optionsOf(options, 'VGG', ['numClasses', 'initWeights', 'dropout']);
    this.features = features;
    this.avgpool = new nn.AdaptiveAvgPool2d([7, 7]);
    this.classifier = this.makeClassifier(numClasses, dropout);
  }

  /**
   * The classifier torchvision's __init__ builds: 512 * 7 * 7 -> 4096 -> 4096 -> numClasses, ReLU
   * and Dropout between (a method, so a subclass can build another without making this one).
   */
  makeClassifier(numClasses, dropout) {
    return new nn.Sequential(
      new nn.Linear(512 * 7 * 7, 4096),
      new nn.ReLU(true),
      new nn.Dropout({ p: dropout }),
      new nn.Linear(4096, 4096),
      new nn.ReLU(true),
      new nn.Dropout({ p: dropout }),
      new nn.Linear(4096, numClasses),
    );
  }

  forward(x) {
    x = this.features.forward(x);
    x = this.avgpool.forward(x);
    x = om.flatten(x, 1);
    return this.classifier.forward(x);
  }
}

/** The feature layers of a configuration: 3x3 convolutions (padding 1) of the widths in cfg, each with BatchNorm if asked and ReLU; 'M' a 2x2 max pool. */
export function makeLayers(cfg, batchNorm = false) {
  const layers = [];
  let inChannels = 3;
  for (const v of cfg) {
    if (v === 'M') {
      layers.push(new nn.MaxPool2d(2, { stride: 2 }));
    } else {
      const conv2d = new nn.Conv2d(inChannels, v, 3, { padding: 1 });
      if (batchNorm) layers.push(conv2d, new nn.BatchNorm2d(v), new nn.ReLU({ inplace: true }));
      else layers.push(conv2d, new nn.ReLU({ inplace: true }));
      inChannels = v;
    }
  }
  return new nn.Sequential(...layers);
}

/** The configurations: VGG-11 (A), 13 (B), 16 (D), 19 (E). */
export const cfgs = {
  A: [64, 'M', 128, 'M', 256, 256, 'M', 512, 512, 'M', 512, 512, 'M'],
  B: [64, 64, 'M', 128, 128, 'M', 256, 256, 'M', 512, 512, 'M', 512, 512, 'M'],
  D: [64, 64, 'M', 128, 128, 'M', 256, 256, 256, 'M', 512, 512, 512, 'M', 512, 512, 512, 'M'],
  E: [64, 64, 'M', 128, 128, 'M', 256, 256, 256, 256, 'M', 512, 512, 512, 512, 'M', 512, 512, 512, 512, 'M'],
};

const builder = (cfg, batchNorm) => (options) => new VGG(makeLayers(cfgs[cfg], batchNorm), options);

/** torchvision's vgg11 ... vgg19_bn (options: numClasses, initWeights, dropout). */
export const vgg11 = builder('A', false);
export const vgg11_bn = builder('A', true);
export const vgg13 = builder('B', false);
export const vgg13_bn = builder('B', true);
export const vgg16 = builder('D', false);
export const vgg16_bn = builder('D', true);
export const vgg19 = builder('E', false);
export const vgg19_bn = builder('E', true);
