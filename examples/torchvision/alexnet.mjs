// torchvision 0.14's AlexNet (models/alexnet.py) ported to om.nn: AlexNet and the builder alexnet,
// with torchvision's constructor arguments and field names (its state dicts load as they are).
//
//   const net = alexnet({ numClasses: 10 }).eval();   // images [N, 3, H, W], H and W from 63
//
// Weights start from om.nn's default initialisation.
import * as om from 'onemodel';
import { optionsOf } from './_utils.mjs';

const nn = om.nn;

/**
 * torchvision's AlexNet(num_classes, dropout): new AlexNet({ numClasses = 1000, dropout = 0.5 }).
 * Five convolutions (the first 11x11 with stride 4) and three 3x3 max pools of stride 2 leave a
 * [N, 256, H', W'] map with H' = floor((floor((floor((H - 7) / 4) + 1 - 3) / 2) + 1 - 3) / 2 ...):
 * at least 1 from H = 63 (torchvision's min_size); it is pooled to 6 x 6 adaptively from any size
 * (cell i's window rows floor(i * H' / 6) to ceil((i + 1) * H' / 6), so a map under 6 repeats rows).
 */
export class AlexNet extends nn.Module {
  constructor(options) {
    super();
    const { numClasses = 1000, dropout = 0.5 } = optionsOf(options, 'AlexNet', ['numClasses', 'dropout']);
    this.features = this.makeFeatures();
    this.avgpool = new nn.AdaptiveAvgPool2d([6, 6]);
    this.classifier = this.makeClassifier(numClasses, dropout);
  }

  /**
   * The feature layers torchvision's __init__ builds (64, 192, 384, 256, 256 channels); a method,
   * as makeClassifier, so a subclass can build narrower ones without making these (2.5M weights).
   */
  makeFeatures() {
    return new nn.Sequential(
      new nn.Conv2d(3, 64, 11, { stride: 4, padding: 2 }),
      new nn.ReLU(true),
      new nn.MaxPool2d(3, { stride: 2 }),
      new nn.Conv2d(64, 192, 5, { padding: 2 }),
      new nn.ReLU(true),
      new nn.MaxPool2d(3, { stride: 2 }),
      new nn.Conv2d(192, 384, 3, { padding: 1 }),
      new nn.ReLU(true),
      new nn.Conv2d(384, 256, 3, { padding: 1 }),
      new nn.ReLU(true),
      new nn.Conv2d(256, 256, 3, { padding: 1 }),
      new nn.ReLU(true),
      new nn.MaxPool2d(3, { stride: 2 }),
    );
  }

  /** The classifier: Dropout, 256 * 6 * 6 -> 4096, ReLU, Dropout, 4096 -> 4096, ReLU, 4096 -> numClasses (58.6M weights). */
  makeClassifier(numClasses, dropout) {
    return new nn.Sequential(
      new nn.Dropout({ p: dropout }),
      new nn.Linear(256 * 6 * 6, 4096),
      new nn.ReLU(true),
      new nn.Dropout({ p: dropout }),
      new nn.Linear(4096, 4096),
      new nn.ReLU(true),
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

/** torchvision's alexnet (options: numClasses, dropout). */
export const alexnet = (options) => new AlexNet(options);
