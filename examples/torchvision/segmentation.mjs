// torchvision 0.14's DeepLabV3 and FCN segmentation models (models/segmentation/deeplabv3.py,
// fcn.py, _utils.py) ported to om.nn: SimpleSegmentationModel (_SimpleSegmentationModel), DeepLabV3,
// DeepLabHead, ASPP with its ASPPConv and ASPPPooling branches, FCN, FCNHead, the backbone helpers
// deeplabv3Resnet, deeplabv3MobilenetV3 and fcnResnet (torchvision's _deeplabv3_resnet, ...), with
// torchvision's arguments and field names (its state dicts load as they are), and the builders
// deeplabv3_resnet50, deeplabv3_resnet101, deeplabv3_mobilenet_v3_large, fcn_resnet50, fcn_resnet101.
//
//   const net = deeplabv3_mobilenet_v3_large({ numClasses: 21, auxLoss: true }).eval();
//   const { out, aux } = net.forward(images);      // each [N, numClasses, H, W]
//
// Weights start from om.nn's default initialisation.
import * as om from 'onemodel';
import { IntermediateLayerGetter, optionsOf } from './_utils.mjs';
import { MobileNetV3, mobilenetV3Conf } from './mobilenetv3.mjs';
import { resnet50, resnet101 } from './resnet.mjs';

const nn = om.nn;
const F = nn.functional;

/** x resized (bilinear, align_corners false) to size [H, W], as every head's output is. */
const upsample = (x, size) => F.interpolate(x, { size, mode: 'bilinear', alignCorners: false });

/**
 * torchvision's _SimpleSegmentationModel(backbone, classifier, aux_classifier = None): backbone
 * returns { out, aux? } feature maps; forward(x) -> { out } (and { aux } with an aux classifier),
 * each classified and upsampled to x's height and width.
 */
export class SimpleSegmentationModel extends nn.Module {
  constructor(backbone, classifier, auxClassifier = null) {
    super();
    this.backbone = backbone;
    this.classifier = classifier;
    this.aux_classifier = auxClassifier;
  }

  forward(x) {
    const inputShape = x.shape.slice(-2);
    const features = this.backbone.forward(x);
    const result = { out: upsample(this.classifier.forward(features.out), inputShape) };
    if (this.aux_classifier) result.aux = upsample(this.aux_classifier.forward(features.aux), inputShape);
    return result;
  }
}

/** DeepLabV3 ("Rethinking Atrous Convolution for Semantic Image Segmentation"): a SimpleSegmentationModel. */
export class DeepLabV3 extends SimpleSegmentationModel {}

/** FCN ("Fully Convolutional Networks for Semantic Segmentation"): a SimpleSegmentationModel. */
export class FCN extends SimpleSegmentationModel {}

/** DeepLabV3's head: ASPP (rates 12, 24, 36) to 256 channels, a 3x3 convolution, BatchNorm, ReLU, the 1x1 classifier. */
export class DeepLabHead extends nn.Sequential {
  constructor(inChannels, numClasses) {
    super(new ASPP(inChannels, [12, 24, 36]), new nn.Conv2d(256, 256, 3, { padding: 1, bias: false }), new nn.BatchNorm2d(256), new nn.ReLU(),
      new nn.Conv2d(256, numClasses, 1));
  }
}

/** An atrous branch: a 3x3 convolution dilated (and padded) by `dilation`, BatchNorm, ReLU. */
export class ASPPConv extends nn.Sequential {
  constructor(inChannels, outChannels, dilation) {
    super(new nn.Conv2d(inChannels, outChannels, 3, { padding: dilation, dilation, bias: false }), new nn.BatchNorm2d(outChannels), new nn.ReLU());
  }
}

/** The image-level branch: a global average, a 1x1 convolution, BatchNorm, ReLU, upsampled back to the input's size. */
export class ASPPPooling extends nn.Sequential {
  constructor(inChannels, outChannels) {
    super(new nn.AdaptiveAvgPool2d(1), new nn.Conv2d(inChannels, outChannels, 1, { bias: false }), new nn.BatchNorm2d(outChannels), new nn.ReLU());
  }

  forward(x) {
    const size = x.shape.slice(-2);
    for (const mod of this) x = mod.forward(x);
    return upsample(x, size);
  }
}

/**
 * Atrous spatial pyramid pooling, torchvision's ASPP(in_channels, atrous_rates, out_channels = 256):
 * a 1x1 branch, an ASPPConv per rate and an ASPPPooling side by side (convs), concatenated and
 * projected back to outChannels (1x1 convolution, BatchNorm, ReLU, dropout 0.5).
 */
export class ASPP extends nn.Module {
  constructor(inChannels, atrousRates, outChannels = 256) {
    super();
    const modules = [new nn.Sequential(new nn.Conv2d(inChannels, outChannels, 1, { bias: false }), new nn.BatchNorm2d(outChannels), new nn.ReLU())];
    for (const rate of atrousRates) modules.push(new ASPPConv(inChannels, outChannels, rate));
    modules.push(new ASPPPooling(inChannels, outChannels));
    this.convs = new nn.ModuleList(modules);
    this.project = new nn.Sequential(new nn.Conv2d(modules.length * outChannels, outChannels, 1, { bias: false }), new nn.BatchNorm2d(outChannels),
      new nn.ReLU(), new nn.Dropout({ p: 0.5 }));
  }

  forward(x) {
    return this.project.forward(om.cat([...this.convs].map((conv) => conv.forward(x)), 1));
  }
}

/** FCN's head (and the aux classifier of both models): a 3x3 convolution to inChannels / 4, BatchNorm, ReLU, dropout 0.1, the 1x1 classifier. */
export class FCNHead extends nn.Sequential {
  constructor(inChannels, channels) {
    const interChannels = Math.floor(inChannels / 4);
    super(new nn.Conv2d(inChannels, interChannels, 3, { padding: 1, bias: false }), new nn.BatchNorm2d(interChannels), new nn.ReLU(),
      new nn.Dropout({ p: 0.1 }), new nn.Conv2d(interChannels, channels, 1));
  }
}

/** IntermediateLayerGetter(model, returnLayers), the children of model it leaves (after the last returned) disposed, as Python's collector frees them. */
function layerGetter(model, returnLayers) {
  const getter = new IntermediateLayerGetter(model, returnLayers);
  const kept = new Set(getter.values());
  for (const [, child] of model.namedChildren()) if (!kept.has(child)) child.dispose();
  return getter;
}

/** torchvision's _deeplabv3_resnet(backbone, num_classes, aux): layer4 (2048 channels) to DeepLabHead, layer3 (1024) to an FCNHead with aux. */
export function deeplabv3Resnet(backbone, numClasses, aux) {
  const returnLayers = { layer4: 'out', ...(aux ? { layer3: 'aux' } : {}) };
  return new DeepLabV3(layerGetter(backbone, returnLayers), new DeepLabHead(2048, numClasses), aux ? new FCNHead(1024, numClasses) : null);
}

/** torchvision's _fcn_resnet(backbone, num_classes, aux): layer4 (2048 channels) to an FCNHead, layer3 (1024) to another with aux. */
export function fcnResnet(backbone, numClasses, aux) {
  const returnLayers = { layer4: 'out', ...(aux ? { layer3: 'aux' } : {}) };
  return new FCN(layerGetter(backbone, returnLayers), new FCNHead(2048, numClasses), aux ? new FCNHead(1024, numClasses) : null);
}

/**
 * torchvision's _deeplabv3_mobilenetv3(backbone, num_classes, aux): the MobileNetV3's features,
 * C5 (its last layer, output stride 16) to DeepLabHead, C2 (output stride 8) to an FCNHead with
 * aux. The MobileNetV3's classifier, which DeepLabV3 does not use, is disposed.
 */
export function deeplabv3MobilenetV3(backbone, numClasses, aux) {
  const blocks = [...backbone.features];
  const stageIndices = [0, ...blocks.flatMap((b, i) => (b.isCn ? [i] : [])), blocks.length - 1];
  const outPos = stageIndices[stageIndices.length - 1]; // C5, output stride 16
  const auxPos = stageIndices[stageIndices.length - 4]; // C2, output stride 8
  const outInplanes = blocks[outPos].outChannels, auxInplanes = blocks[auxPos].outChannels;
  backbone.classifier.dispose();
  const getter = new IntermediateLayerGetter(backbone.features, { [outPos]: 'out', ...(aux ? { [auxPos]: 'aux' } : {}) });
  return new DeepLabV3(getter, new DeepLabHead(outInplanes, numClasses), aux ? new FCNHead(auxInplanes, numClasses) : null);
}

/** A torchvision builder of options { numClasses = 21, auxLoss = false }: make(numClasses, auxLoss). */
const builder = (who, make) => (options) => {
  const { numClasses = 21, auxLoss = false } = optionsOf(options, who, ['numClasses', 'auxLoss']);
  return make(numClasses, auxLoss);
};
/** torchvision's ResNet backbones for segmentation: the last two stages dilated, not strided (output stride 8). */
const dilated = (resnet) => resnet({ replaceStrideWithDilation: [false, true, true] });

export const deeplabv3_resnet50 = builder('deeplabv3_resnet50', (n, aux) => deeplabv3Resnet(dilated(resnet50), n, aux));
export const deeplabv3_resnet101 = builder('deeplabv3_resnet101', (n, aux) => deeplabv3Resnet(dilated(resnet101), n, aux));
/** A dilated MobileNetV3-Large backbone. */
export const deeplabv3_mobilenet_v3_large = builder('deeplabv3_mobilenet_v3_large',
  (n, aux) => deeplabv3MobilenetV3(new MobileNetV3(...mobilenetV3Conf('mobilenet_v3_large', { dilated: true })), n, aux));
export const fcn_resnet50 = builder('fcn_resnet50', (n, aux) => fcnResnet(dilated(resnet50), n, aux));
export const fcn_resnet101 = builder('fcn_resnet101', (n, aux) => fcnResnet(dilated(resnet101), n, aux));
