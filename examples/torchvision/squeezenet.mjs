// torchvision 0.14's SqueezeNet (models/squeezenet.py) ported to om.nn: Fire and SqueezeNet with
// torchvision's constructor arguments and field names, so its state dicts load as they are, and
// the builders squeezenet1_0 and squeezenet1_1.
//
//   const net = squeezenet1_1({ numClasses: 10 }).eval();
//   const logits = net.forward(images);      // [N, 3, H, W] -> [N, numClasses]
//
// Weights start from om.nn's default initialisation, not torchvision's kaiming scheme.
import * as om from 'onemodel';
import { invalidConfig, optionsOf } from './_utils.mjs';

const nn = om.nn;

/** A Fire module: a 1x1 squeeze, then 1x1 and 3x3 expands side by side (concatenated on the channels). */
export class Fire extends nn.Module {
  constructor(inplanes, squeezePlanes, expand1x1Planes, expand3x3Planes) {
    super();
    this.inplanes = inplanes;
    this.squeeze = new nn.Conv2d(inplanes, squeezePlanes, 1);
    this.squeeze_activation = new nn.ReLU(true);
    this.expand1x1 = new nn.Conv2d(squeezePlanes, expand1x1Planes, 1);
    this.expand1x1_activation = new nn.ReLU(true);
    this.expand3x3 = new nn.Conv2d(squeezePlanes, expand3x3Planes, 3, { padding: 1 });
    this.expand3x3_activation = new nn.ReLU(true);
  }

  forward(x) {
    const s = this.squeeze_activation.forward(this.squeeze.forward(x));
    return om.cat([this.expand1x1_activation.forward(this.expand1x1.forward(s)), this.expand3x3_activation.forward(this.expand3x3.forward(s))], 1);
  }
}

/**
 * torchvision's SqueezeNet(version = '1_0', num_classes = 1000, dropout = 0.5): new SqueezeNet(version,
 * { numClasses, dropout }). [N, 3, H, W] -> [N, numClasses]; the classifier is a 1x1 convolution,
 * a ReLU and a global average pool (H and W from 17 for 1_1, 21 for 1_0, as PyTorch: below, a
 * ceil-mode pool's window starts past the input).
 */
export class SqueezeNet extends nn.Module {
  constructor(version = '1_0', options) {
    const { numClasses = 1000, dropout = 0.5 } = optionsOf(options, 'SqueezeNet', ['numClasses', 'dropout']);
    if (version !== '1_0' && version !== '1_1') throw invalidConfig(`Unsupported SqueezeNet version ${version}: 1_0 or 1_1 expected`);
    super();
    this.numClasses = numClasses;
    const pool = () => new nn.MaxPool2d(3, { stride: 2, ceilMode: true });
    this.features = version === '1_0'
      ? new nn.Sequential(
        new nn.Conv2d(3, 96, 7, { stride: 2 }), new nn.ReLU(true), pool(),
        new Fire(96, 16, 64, 64), new Fire(128, 16, 64, 64), new Fire(128, 32, 128, 128), pool(),
        new Fire(256, 32, 128, 128), new Fire(256, 48, 192, 192), new Fire(384, 48, 192, 192), new Fire(384, 64, 256, 256), pool(),
        new Fire(512, 64, 256, 256))
      : new nn.Sequential(
        new nn.Conv2d(3, 64, 3, { stride: 2 }), new nn.ReLU(true), pool(),
        new Fire(64, 16, 64, 64), new Fire(128, 16, 64, 64), pool(),
        new Fire(128, 32, 128, 128), new Fire(256, 32, 128, 128), pool(),
        new Fire(256, 48, 192, 192), new Fire(384, 48, 192, 192), new Fire(384, 64, 256, 256), new Fire(512, 64, 256, 256));
    const finalConv = new nn.Conv2d(512, this.numClasses, 1);
    this.classifier = new nn.Sequential(new nn.Dropout({ p: dropout }), finalConv, new nn.ReLU(true), new nn.AdaptiveAvgPool2d([1, 1]));
  }

  forward(x) {
    return this.classifier.forward(this.features.forward(x)).flatten(1);
  }
}

/** torchvision's squeezenet1_0; options { numClasses = 1000, dropout = 0.5 }. */
export const squeezenet1_0 = (options) => new SqueezeNet('1_0', options);
/** torchvision's squeezenet1_1: 2.4x less computation than 1_0, the same accuracy; options { numClasses = 1000, dropout = 0.5 }. */
export const squeezenet1_1 = (options) => new SqueezeNet('1_1', options);
