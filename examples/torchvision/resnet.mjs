// torchvision 0.14's ResNet (models/resnet.py) ported to om.nn: BasicBlock, Bottleneck and ResNet
// with torchvision's constructor arguments and field names, so its state dicts load as they are
// (strict loadStateDict), and the builders resnet18 ... wide_resnet101_2.
//
//   import { resnet18 } from './examples/torchvision/resnet.mjs';
//   const net = resnet18({ numClasses: 10 }).eval();
//   net.loadStateDict(om.safetensors.load(bytes).tensors);
//
// Weights start from om.nn's default initialisation, not torchvision's kaiming schemes: the port is
// for running and fine-tuning trained weights. A layer option (normLayer) is a Module class or a
// function returning a Module, as in om.nn's blocks.
import * as om from 'onemodel';
import { invalidConfig, makeLayer, optionsOf } from './_utils.mjs';

const nn = om.nn;

/** 3x3 convolution with padding (torchvision's conv3x3). */
export function conv3x3(inPlanes, outPlanes, stride = 1, groups = 1, dilation = 1) {
  return new nn.Conv2d(inPlanes, outPlanes, 3, { stride, padding: dilation, groups, bias: false, dilation });
}

/** 1x1 convolution (torchvision's conv1x1). */
export function conv1x1(inPlanes, outPlanes, stride = 1) {
  return new nn.Conv2d(inPlanes, outPlanes, 1, { stride, bias: false });
}

export class BasicBlock extends nn.Module {
  static expansion = 1;

  constructor(inplanes, planes, stride = 1, downsample = null, groups = 1, baseWidth = 64, dilation = 1, normLayer = null) {
    super();
    normLayer ??= nn.BatchNorm2d;
    if (groups !== 1 || baseWidth !== 64) throw invalidConfig('BasicBlock only supports groups=1 and base_width=64');
    if (dilation > 1) throw invalidConfig('Dilation > 1 not supported in BasicBlock');
    this.conv1 = conv3x3(inplanes, planes, stride);
    this.bn1 = makeLayer(normLayer, planes);
    this.relu = new nn.ReLU();
    this.conv2 = conv3x3(planes, planes);
    this.bn2 = makeLayer(normLayer, planes);
    this.downsample = downsample;
    this.stride = stride;
  }

  forward(x) {
    let out = this.relu.forward(this.bn1.forward(this.conv1.forward(x)));
    out = this.bn2.forward(this.conv2.forward(out));
    const identity = this.downsample ? this.downsample.forward(x) : x;
    return this.relu.forward(out.add(identity));
  }
}

/** ResNet V1.5's bottleneck: the stride on the 3x3 convolution (conv2), as torchvision. */
export class Bottleneck extends nn.Module {
  static expansion = 4;

  constructor(inplanes, planes, stride = 1, downsample = null, groups = 1, baseWidth = 64, dilation = 1, normLayer = null) {
    super();
    normLayer ??= nn.BatchNorm2d;
    const width = Math.trunc(planes * (baseWidth / 64)) * groups;
    this.conv1 = conv1x1(inplanes, width);
    this.bn1 = makeLayer(normLayer, width);
    this.conv2 = conv3x3(width, width, stride, groups, dilation);
    this.bn2 = makeLayer(normLayer, width);
    this.conv3 = conv1x1(width, planes * Bottleneck.expansion);
    this.bn3 = makeLayer(normLayer, planes * Bottleneck.expansion);
    this.relu = new nn.ReLU();
    this.downsample = downsample;
    this.stride = stride;
  }

  forward(x) {
    let out = this.relu.forward(this.bn1.forward(this.conv1.forward(x)));
    out = this.relu.forward(this.bn2.forward(this.conv2.forward(out)));
    out = this.bn3.forward(this.conv3.forward(out));
    const identity = this.downsample ? this.downsample.forward(x) : x;
    return this.relu.forward(out.add(identity));
  }
}

/**
 * torchvision's ResNet(block, layers, num_classes, zero_init_residual, groups, width_per_group,
 * replace_stride_with_dilation, norm_layer): new ResNet(block, layers, { numClasses = 1000,
 * zeroInitResidual = false, groups = 1, widthPerGroup = 64, replaceStrideWithDilation = null,
 * normLayer = null }). [N, 3, H, W] -> [N, numClasses] at any H and W.
 */
export class ResNet extends nn.Module {
  constructor(block, layers, options) {
    super();
    const o = optionsOf(options, 'ResNet', ['numClasses', 'zeroInitResidual', 'groups', 'widthPerGroup', 'replaceStrideWithDilation', 'normLayer']);
    const { numClasses = 1000, zeroInitResidual = false, groups = 1, widthPerGroup = 64, normLayer = null } = o;
    let { replaceStrideWithDilation = null } = o;
    this._normLayer = normLayer ?? nn.BatchNorm2d;
    this.inplanes = 64;
    this.dilation = 1;
    replaceStrideWithDilation ??= [false, false, false];
    if (replaceStrideWithDilation.length !== 3) {
      throw invalidConfig(`replace_stride_with_dilation should be None or a 3-element tuple, got ${replaceStrideWithDilation}`);
    }
    this.groups = groups;
    this.baseWidth = widthPerGroup;
    this.conv1 = new nn.Conv2d(3, this.inplanes, 7, { stride: 2, padding: 3, bias: false });
    this.bn1 = makeLayer(this._normLayer, this.inplanes);
    this.relu = new nn.ReLU();
    this.maxpool = new nn.MaxPool2d(3, { stride: 2, padding: 1 });
    this.layer1 = this._makeLayer(block, 64, layers[0]);
    this.layer2 = this._makeLayer(block, 128, layers[1], 2, replaceStrideWithDilation[0]);
    this.layer3 = this._makeLayer(block, 256, layers[2], 2, replaceStrideWithDilation[1]);
    this.layer4 = this._makeLayer(block, 512, layers[3], 2, replaceStrideWithDilation[2]);
    this.avgpool = new nn.AdaptiveAvgPool2d([1, 1]);
    this.fc = new nn.Linear(512 * block.expansion, numClasses);
    if (zeroInitResidual) {
      // The last BatchNorm of each residual branch starts at zero: every block starts as the identity.
      om.noGrad(() => {
        for (const m of this.modules()) {
          if (m instanceof Bottleneck) m.bn3.weight.fill_(0);
          else if (m instanceof BasicBlock) m.bn2.weight.fill_(0);
        }
      });
    }
  }

  /** A stage of `blocks` blocks; the first strides (or dilates) and gets a downsample branch where the shape changes. */
  _makeLayer(block, planes, blocks, stride = 1, dilate = false) {
    const normLayer = this._normLayer;
    let downsample = null;
    const previousDilation = this.dilation;
    if (dilate) {
      this.dilation *= stride;
      stride = 1;
    }
    if (stride !== 1 || this.inplanes !== planes * block.expansion) {
      downsample = new nn.Sequential(conv1x1(this.inplanes, planes * block.expansion, stride), makeLayer(normLayer, planes * block.expansion));
    }
    const layers = [new block(this.inplanes, planes, stride, downsample, this.groups, this.baseWidth, previousDilation, normLayer)];
    this.inplanes = planes * block.expansion;
    for (let i = 1; i < blocks; i++) {
      layers.push(new block(this.inplanes, planes, 1, null, this.groups, this.baseWidth, this.dilation, normLayer));
    }
    return new nn.Sequential(...layers);
  }

  forward(x) {
    let h = this.maxpool.forward(this.relu.forward(this.bn1.forward(this.conv1.forward(x))));
    h = this.layer4.forward(this.layer3.forward(this.layer2.forward(this.layer1.forward(h))));
    return this.fc.forward(this.avgpool.forward(h).flatten(1));
  }
}

export const resnet18 = (options) => new ResNet(BasicBlock, [2, 2, 2, 2], options);
export const resnet34 = (options) => new ResNet(BasicBlock, [3, 4, 6, 3], options);
export const resnet50 = (options) => new ResNet(Bottleneck, [3, 4, 6, 3], options);
export const resnet101 = (options) => new ResNet(Bottleneck, [3, 4, 23, 3], options);
export const resnet152 = (options) => new ResNet(Bottleneck, [3, 8, 36, 3], options);
export const resnext50_32x4d = (options) => new ResNet(Bottleneck, [3, 4, 6, 3], { ...options, groups: 32, widthPerGroup: 4 });
export const resnext101_32x8d = (options) => new ResNet(Bottleneck, [3, 4, 23, 3], { ...options, groups: 32, widthPerGroup: 8 });
export const resnext101_64x4d = (options) => new ResNet(Bottleneck, [3, 4, 23, 3], { ...options, groups: 64, widthPerGroup: 4 });
export const wide_resnet50_2 = (options) => new ResNet(Bottleneck, [3, 4, 6, 3], { ...options, widthPerGroup: 128 });
export const wide_resnet101_2 = (options) => new ResNet(Bottleneck, [3, 4, 23, 3], { ...options, widthPerGroup: 128 });
