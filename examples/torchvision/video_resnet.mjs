// torchvision 0.14's video ResNets (models/video/resnet.py) ported to om.nn: Conv3DSimple,
// Conv2Plus1D, Conv3DNoTemporal, BasicBlock, Bottleneck, BasicStem, R2Plus1dStem and VideoResNet
// with torchvision's constructor arguments and field names, so its state dicts load as they are,
// and the builders r3d_18, mc3_18 and r2plus1d_18.
//
//   const net = r3d_18({ numClasses: 400 }).eval();
//   const logits = net.forward(clips);       // [N, 3, T, H, W] -> [N, numClasses]
//
// Weights start from om.nn's default initialisation, not torchvision's kaiming schemes.
import * as om from 'onemodel';
import { invalidConfig, optionsOf } from './_utils.mjs';

const nn = om.nn;

/** A 3x3x3 convolution (torchvision's Conv3DSimple); midplanes is unused, as torchvision's. */
export class Conv3DSimple extends nn.Conv3d {
  constructor(inPlanes, outPlanes, midplanes = null, stride = 1, padding = 1) {
    super(inPlanes, outPlanes, [3, 3, 3], { stride, padding, bias: false });
  }

  static getDownsampleStride(stride) {
    return [stride, stride, stride];
  }
}

/** A (2+1)-D convolution: a spatial 1x3x3 convolution to midplanes, BatchNorm, ReLU, then a temporal 3x1x1 one. */
export class Conv2Plus1D extends nn.Sequential {
  constructor(inPlanes, outPlanes, midplanes, stride = 1, padding = 1) {
    super(
      new nn.Conv3d(inPlanes, midplanes, [1, 3, 3], { stride: [1, stride, stride], padding: [0, padding, padding], bias: false }),
      new nn.BatchNorm3d(midplanes),
      new nn.ReLU(true),
      new nn.Conv3d(midplanes, outPlanes, [3, 1, 1], { stride: [stride, 1, 1], padding: [padding, 0, 0], bias: false }),
    );
  }

  static getDownsampleStride(stride) {
    return [stride, stride, stride];
  }
}

/** A 1x3x3 convolution, no temporal extent (torchvision's Conv3DNoTemporal, MC3's later stages). */
export class Conv3DNoTemporal extends nn.Conv3d {
  constructor(inPlanes, outPlanes, midplanes = null, stride = 1, padding = 1) {
    super(inPlanes, outPlanes, [1, 3, 3], { stride: [1, stride, stride], padding: [0, padding, padding], bias: false });
  }

  static getDownsampleStride(stride) {
    return [1, stride, stride];
  }
}

/** midplanes of a (2+1)-D block: the 3x3x3 convolution's parameter count split between its two halves. */
const midplanesOf = (inplanes, planes) => Math.floor((inplanes * planes * 3 * 3 * 3) / (inplanes * 3 * 3 + 3 * planes));

export class BasicBlock extends nn.Module {
  static expansion = 1;

  constructor(inplanes, planes, convBuilder, stride = 1, downsample = null) {
    const midplanes = midplanesOf(inplanes, planes);
    super();
    this.conv1 = new nn.Sequential(new convBuilder(inplanes, planes, midplanes, stride), new nn.BatchNorm3d(planes), new nn.ReLU(true));
    this.conv2 = new nn.Sequential(new convBuilder(planes, planes, midplanes), new nn.BatchNorm3d(planes));
    this.relu = new nn.ReLU(true);
    this.downsample = downsample;
    this.stride = stride;
  }

  forward(x) {
    const out = this.conv2.forward(this.conv1.forward(x));
    const residual = this.downsample ? this.downsample.forward(x) : x;
    return this.relu.forward(out.add(residual));
  }
}

export class Bottleneck extends nn.Module {
  static expansion = 4;

  constructor(inplanes, planes, convBuilder, stride = 1, downsample = null) {
    super();
    const midplanes = midplanesOf(inplanes, planes);
    this.conv1 = new nn.Sequential(new nn.Conv3d(inplanes, planes, 1, { bias: false }), new nn.BatchNorm3d(planes), new nn.ReLU(true));
    this.conv2 = new nn.Sequential(new convBuilder(planes, planes, midplanes, stride), new nn.BatchNorm3d(planes), new nn.ReLU(true));
    this.conv3 = new nn.Sequential(new nn.Conv3d(planes, planes * Bottleneck.expansion, 1, { bias: false }),
      new nn.BatchNorm3d(planes * Bottleneck.expansion));
    this.relu = new nn.ReLU(true);
    this.downsample = downsample;
    this.stride = stride;
  }

  forward(x) {
    const out = this.conv3.forward(this.conv2.forward(this.conv1.forward(x)));
    const residual = this.downsample ? this.downsample.forward(x) : x;
    return this.relu.forward(out.add(residual));
  }
}

/** The default conv-batchnorm-relu stem: a 3x7x7 convolution, stride 1x2x2. */
export class BasicStem extends nn.Sequential {
  constructor() {
    super(new nn.Conv3d(3, 64, [3, 7, 7], { stride: [1, 2, 2], padding: [1, 3, 3], bias: false }), new nn.BatchNorm3d(64), new nn.ReLU(true));
  }
}

/** R(2+1)D's stem: the 3x7x7 convolution separated into a spatial 1x7x7 (to 45 channels) and a temporal 3x1x1 one. */
export class R2Plus1dStem extends nn.Sequential {
  constructor() {
    super(
      new nn.Conv3d(3, 45, [1, 7, 7], { stride: [1, 2, 2], padding: [0, 3, 3], bias: false }),
      new nn.BatchNorm3d(45),
      new nn.ReLU(true),
      new nn.Conv3d(45, 64, [3, 1, 1], { stride: [1, 1, 1], padding: [1, 0, 0], bias: false }),
      new nn.BatchNorm3d(64),
      new nn.ReLU(true),
    );
  }
}

/**
 * torchvision's VideoResNet(block, conv_makers, layers, stem, num_classes = 400, zero_init_residual
 * = false): new VideoResNet(block, convMakers, layers, stem, { numClasses, zeroInitResidual }), stem
 * a Module class (or a function returning a Module). [N, 3, T, H, W] -> [N, numClasses].
 */
export class VideoResNet extends nn.Module {
  constructor(block, convMakers, layers, stem, options) {
    super();
    const { numClasses = 400, zeroInitResidual = false } = optionsOf(options, 'VideoResNet', ['numClasses', 'zeroInitResidual']);
    // torchvision zeroes the `bn3` of each Bottleneck, a field its video Bottleneck does not have
    // (its last BatchNorm is conv3[1]): it fails there, and with BasicBlock the flag does nothing.
    if (zeroInitResidual && block === Bottleneck) throw invalidConfig("'Bottleneck' object has no attribute 'bn3'");
    this.inplanes = 64;
    this.stem = stem.prototype instanceof nn.Module ? new stem() : stem();
    this.layer1 = this._makeLayer(block, convMakers[0], 64, layers[0], 1);
    this.layer2 = this._makeLayer(block, convMakers[1], 128, layers[1], 2);
    this.layer3 = this._makeLayer(block, convMakers[2], 256, layers[2], 2);
    this.layer4 = this._makeLayer(block, convMakers[3], 512, layers[3], 2);
    this.avgpool = new nn.AdaptiveAvgPool3d([1, 1, 1]);
    this.fc = new nn.Linear(512 * block.expansion, numClasses);
  }

  /** A stage of `blocks` blocks; the first strides and gets a downsample branch where the shape changes. */
  _makeLayer(block, convBuilder, planes, blocks, stride = 1) {
    let downsample = null;
    if (stride !== 1 || this.inplanes !== planes * block.expansion) {
      const dsStride = convBuilder.getDownsampleStride(stride);
      downsample = new nn.Sequential(new nn.Conv3d(this.inplanes, planes * block.expansion, 1, { stride: dsStride, bias: false }),
        new nn.BatchNorm3d(planes * block.expansion));
    }
    const layers = [new block(this.inplanes, planes, convBuilder, stride, downsample)];
    this.inplanes = planes * block.expansion;
    for (let i = 1; i < blocks; i++) layers.push(new block(this.inplanes, planes, convBuilder));
    return new nn.Sequential(...layers);
  }

  forward(x) {
    let h = this.stem.forward(x);
    h = this.layer4.forward(this.layer3.forward(this.layer2.forward(this.layer1.forward(h))));
    return this.fc.forward(this.avgpool.forward(h).flatten(1));
  }
}

/** torchvision's r3d_18: 3-D convolutions throughout; options { numClasses = 400 }. */
export const r3d_18 = (options) => new VideoResNet(BasicBlock, Array(4).fill(Conv3DSimple), [2, 2, 2, 2], BasicStem, options);
/** torchvision's mc3_18: 3-D convolutions in the first stage, 2-D (1x3x3) ones after. */
export const mc3_18 = (options) => new VideoResNet(BasicBlock, [Conv3DSimple, ...Array(3).fill(Conv3DNoTemporal)], [2, 2, 2, 2], BasicStem, options);
/** torchvision's r2plus1d_18: (2+1)-D convolutions and their stem. */
export const r2plus1d_18 = (options) => new VideoResNet(BasicBlock, Array(4).fill(Conv2Plus1D), [2, 2, 2, 2], R2Plus1dStem, options);
