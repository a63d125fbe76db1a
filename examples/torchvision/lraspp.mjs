// torchvision 0.14's Lite R-ASPP segmentation model (models/segmentation/lraspp.py) ported to
// om.nn: LRASPP, LRASPPHead and lrasppMobilenetV3 (_lraspp_mobilenetv3: a MobileNetV3's features
// as the backbone, through IntermediateLayerGetter) with torchvision's arguments and field names
// (its state dicts load as they are), and the builder lraspp_mobilenet_v3_large.
//
//   const net = lraspp_mobilenet_v3_large({ numClasses: 21 }).eval();
//   const { out } = net.forward(images);       // [N, numClasses, H, W]
//
// Weights start from om.nn's default initialisation.
import * as om from 'onemodel';
import { IntermediateLayerGetter, optionsOf } from './_utils.mjs';
import { MobileNetV3, mobilenetV3Conf } from './mobilenetv3.mjs';

const nn = om.nn;
const F = nn.functional;

/** The head: the high features gated by their global average (a sigmoid per channel), upsampled to the low ones' size, each classified and summed. */
export class LRASPPHead extends nn.Module {
  constructor(lowChannels, highChannels, numClasses, interChannels) {
    super();
    this.cbr = new nn.Sequential(new nn.Conv2d(highChannels, interChannels, 1, { bias: false }), new nn.BatchNorm2d(interChannels), new nn.ReLU());
    this.scale = new nn.Sequential(new nn.AdaptiveAvgPool2d(1), new nn.Conv2d(highChannels, interChannels, 1, { bias: false }), new nn.Sigmoid());
    this.low_classifier = new nn.Conv2d(lowChannels, numClasses, 1);
    this.high_classifier = new nn.Conv2d(interChannels, numClasses, 1);
  }

  /** input: { low, high } feature maps. */
  forward(input) {
    const { low, high } = input;
    let x = this.cbr.forward(high).mul(this.scale.forward(high));
    x = F.interpolate(x, { size: low.shape.slice(-2), mode: 'bilinear', alignCorners: false });
    return this.low_classifier.forward(low).add(this.high_classifier.forward(x));
  }
}

/**
 * torchvision's LRASPP(backbone, low_channels, high_channels, num_classes, inter_channels = 128):
 * backbone returns { low, high }; forward(input) -> { out: [N, numClasses, H, W] } at the input's size.
 */
export class LRASPP extends nn.Module {
  constructor(backbone, lowChannels, highChannels, numClasses, interChannels = 128) {
    super();
    this.backbone = backbone;
    this.classifier = new LRASPPHead(lowChannels, highChannels, numClasses, interChannels);
  }

  forward(input) {
    const out = this.classifier.forward(this.backbone.forward(input));
    return { out: F.interpolate(out, { size: input.shape.slice(-2), mode: 'bilinear', alignCorners: false }) };
  }
}

/**
 * torchvision's _lraspp_mobilenetv3(backbone, num_classes): LRASPP on backbone's features, the
 * low features from the stage of output stride 8, the high ones from its last layer. The
 * MobileNetV3's classifier, which LRASPP does not use, is disposed (Python's collector frees it).
 */
export function lrasppMobilenetV3(backbone, numClasses) {
  const features = backbone.features;
  const blocks = [...features];
  const stageIndices = [0, ...blocks.flatMap((b, i) => (b.isCn ? [i] : [])), blocks.length - 1];
  const lowPos = stageIndices[stageIndices.length - 4]; // C2, output stride 8
  const highPos = stageIndices[stageIndices.length - 1]; // C5, output stride 16
  const lowChannels = blocks[lowPos].outChannels;
  const highChannels = blocks[highPos].outChannels;
  backbone.classifier.dispose();
  const getter = new IntermediateLayerGetter(features, { [lowPos]: 'low', [highPos]: 'high' });
  return new LRASPP(getter, lowChannels, highChannels, numClasses);
}

/** torchvision's lraspp_mobilenet_v3_large: a dilated MobileNetV3-Large backbone; options { numClasses = 21 }. */
export function lraspp_mobilenet_v3_large(options) {
  const { numClasses = 21 } = optionsOf(options, 'lraspp_mobilenet_v3_large', ['numClasses']);
  return lrasppMobilenetV3(new MobileNetV3(...mobilenetV3Conf('mobilenet_v3_large', { dilated: true })), numClasses);
}
