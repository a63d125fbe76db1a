// torchvision 0.14's GoogLeNet (models/googlenet.py) ported to om.nn: BasicConv2d, Inception,
// InceptionAux and GoogLeNet with torchvision's constructor arguments and field names (its state
// dicts load as they are), and the builder googlenet.
//
//   const net = googlenet({ numClasses: 10, auxLogits: false, transformInput: true }).eval();
//   const logits = net.forward(images);                         // eval: the logits; training with auxLogits: { logits, aux_logits2, aux_logits1 }
//
// GoogLeNetOutputs (a namedtuple) is a plain object { logits, aux_logits2, aux_logits1 }.
// Weights start from om.nn's default initialisation, not torchvision's truncated normal.
import * as om from 'onemodel';
import { invalidConfig, makeLayer, optionsOf } from './_utils.mjs';

const nn = om.nn;
const F = nn.functional;

/**
 * GoogLeNet's and Inception v3's _transform_input: images normalised with ImageNet's mean and std
 * renormalised per channel to the (x - 0.5) / 0.5 the original weights expect.
 */
export function transformImageNetInput(x) {
  const xCh0 = om.unsqueeze(x.select(1, 0), 1).mul(0.229 / 0.5).add((0.485 - 0.5) / 0.5);
  const xCh1 = om.unsqueeze(x.select(1, 1), 1).mul(0.224 / 0.5).add((0.456 - 0.5) / 0.5);
  const xCh2 = om.unsqueeze(x.select(1, 2), 1).mul(0.225 / 0.5).add((0.406 - 0.5) / 0.5);
  return om.cat([xCh0, xCh1, xCh2], 1);
}

/** Conv2d (no bias), BatchNorm2d (eps 0.001), ReLU. options: Conv2d's (stride, padding, ...). */
export class BasicConv2d extends nn.Module {
  constructor(inChannels, outChannels, options = {}) {
    super();
    this.conv = new nn.Conv2d(inChannels, outChannels, options.kernelSize, { bias: false, ...withoutKernel(options) });
    this.bn = new nn.BatchNorm2d(outChannels, { eps: 0.001 });
  }

  forward(x) {
    return F.relu(this.bn.forward(this.conv.forward(x)));
  }
}

/** Python's conv_block(in, out, kernel_size=k, **kwargs) takes the kernel size by keyword: the other options. */
function withoutKernel({ kernelSize, ...rest }) {
  return rest;
}

/** Four branches concatenated along the channels: 1x1; 1x1 then 3x3; 1x1 then 3x3 (torchvision's "5x5"); a 3x3 max pool then 1x1. */
export class Inception extends nn.Module {
  constructor(inChannels, ch1x1, ch3x3red, ch3x3, ch5x5red, ch5x5, poolProj, convBlock = null) {
    super();
    convBlock ??= BasicConv2d;
    this.branch1 = makeLayer(convBlock, inChannels, ch1x1, { kernelSize: 1 });
    this.branch2 = new nn.Sequential(
      makeLayer(convBlock, inChannels, ch3x3red, { kernelSize: 1 }), makeLayer(convBlock, ch3x3red, ch3x3, { kernelSize: 3, padding: 1 }),
    );
    // torchvision's 5x5 branch has a 3x3 kernel (a known bug of the original port, kept for its weights)
    this.branch3 = new nn.Sequential(
      makeLayer(convBlock, inChannels, ch5x5red, { kernelSize: 1 }), makeLayer(convBlock, ch5x5red, ch5x5, { kernelSize: 3, padding: 1 }),
    );
    this.branch4 = new nn.Sequential(
      new nn.MaxPool2d(3, { stride: 1, padding: 1, ceilMode: true }),
      makeLayer(convBlock, inChannels, poolProj, { kernelSize: 1 }),
    );
  }

  forward(x) {
    const outputs = [this.branch1.forward(x), this.branch2.forward(x), this.branch3.forward(x), this.branch4.forward(x)];
    return om.cat(outputs, 1);
  }
}

/** The auxiliary classifier (training only): pool to 4x4, 1x1 conv to 128, two linears. */
export class InceptionAux extends nn.Module {
  constructor(inChannels, numClasses, convBlock = null, dropout = 0.7) {
    super();
    convBlock ??= BasicConv2d;
    this.conv = makeLayer(convBlock, inChannels, 128, { kernelSize: 1 });
    this.fc1 = new nn.Linear(2048, 1024);
    this.fc2 = new nn.Linear(1024, numClasses);
    this.dropout = new nn.Dropout(dropout);
  }

  forward(x) {
    x = F.adaptiveAvgPool2d(x, [4, 4]); // N x 512 x 14 x 14 (4a) or N x 528 x 14 x 14 (4d) -> N x C x 4 x 4
    x = om.flatten(this.conv.forward(x), 1);
    x = F.relu(this.fc1.forward(x));
    return this.fc2.forward(this.dropout.forward(x));
  }
}

/**
 * torchvision's GoogLeNet(num_classes, aux_logits, transform_input, init_weights, blocks, dropout,
 * dropout_aux): new GoogLeNet({ numClasses = 1000, auxLogits = true, transformInput = false,
 * initWeights, blocks = [BasicConv2d, Inception, InceptionAux], dropout = 0.2, dropoutAux = 0.7 })
 * (initWeights is accepted and ignored: om.nn's initialisation).
 */
export class GoogLeNet extends nn.Module {
  constructor(options) {
    super();
    const o = optionsOf(options, 'GoogLeNet', ['numClasses', 'auxLogits', 'transformInput', 'initWeights', 'blocks', 'dropout', 'dropoutAux']);
    const { numClasses = 1000, auxLogits = true, transformInput = false, dropout = 0.2, dropoutAux = 0.7 } = o;
    const blocks = o.blocks ?? [BasicConv2d, Inception, InceptionAux];
    if (blocks.length !== 3) throw invalidConfig(`blocks length should be 3 instead of ${blocks.length}`);
    const [convBlock, inceptionBlock, inceptionAuxBlock] = blocks;
    this.auxLogits = auxLogits;
    this.transformInput = transformInput;
    const conv = (i, out, kernelSize, rest = {}) => makeLayer(convBlock, i, out, { kernelSize, ...rest });
    const inception = (...args) => makeLayer(inceptionBlock, ...args);
    this.conv1 = conv(3, 64, 7, { stride: 2, padding: 3 });
    this.maxpool1 = new nn.MaxPool2d(3, { stride: 2, ceilMode: true });
    this.conv2 = conv(64, 64, 1);
    this.conv3 = conv(64, 192, 3, { padding: 1 });
    this.maxpool2 = new nn.MaxPool2d(3, { stride: 2, ceilMode: true });
    this.inception3a = inception(192, 64, 96, 128, 16, 32, 32);
    this.inception3b = inception(256, 128, 128, 192, 32, 96, 64);
    this.maxpool3 = new nn.MaxPool2d(3, { stride: 2, ceilMode: true });
    this.inception4a = inception(480, 192, 96, 208, 16, 48, 64);
    this.inception4b = inception(512, 160, 112, 224, 24, 64, 64);
    this.inception4c = inception(512, 128, 128, 256, 24, 64, 64);
    this.inception4d = inception(512, 112, 144, 288, 32, 64, 64);
    this.inception4e = inception(528, 256, 160, 320, 32, 128, 128);
    this.maxpool4 = new nn.MaxPool2d(2, { stride: 2, ceilMode: true });
    this.inception5a = inception(832, 256, 160, 320, 32, 128, 128);
    this.inception5b = inception(832, 384, 192, 384, 48, 128, 128);
    if (auxLogits) {
      this.aux1 = makeLayer(inceptionAuxBlock, 512, numClasses, null, dropoutAux);
      this.aux2 = makeLayer(inceptionAuxBlock, 528, numClasses, null, dropoutAux);
    } else {
      this.aux1 = null;
      this.aux2 = null;
    }
    this.avgpool = new nn.AdaptiveAvgPool2d([1, 1]);
    this.dropout = new nn.Dropout({ p: dropout });
    this.fc = new nn.Linear(1024, numClasses);
  }

  forward(x) {
    if (this.transformInput) x = transformImageNetInput(x);
    x = this.maxpool1.forward(this.conv1.forward(x)); // N x 64 x 56 x 56 at 224
    x = this.maxpool2.forward(this.conv3.forward(this.conv2.forward(x))); // N x 192 x 28 x 28
    x = this.maxpool3.forward(this.inception3b.forward(this.inception3a.forward(x))); // N x 480 x 14 x 14
    x = this.inception4a.forward(x);
    const aux1 = this.aux1 !== null && this.training ? this.aux1.forward(x) : null;
    x = this.inception4d.forward(this.inception4c.forward(this.inception4b.forward(x)));
    const aux2 = this.aux2 !== null && this.training ? this.aux2.forward(x) : null;
    x = this.maxpool4.forward(this.inception4e.forward(x)); // N x 832 x 7 x 7
    x = this.inception5b.forward(this.inception5a.forward(x));
    x = om.flatten(this.avgpool.forward(x), 1); // N x 1024
    x = this.fc.forward(this.dropout.forward(x));
    return this.training && this.auxLogits ? { logits: x, aux_logits2: aux2, aux_logits1: aux1 } : x;
  }
}

/**
 * torchvision's googlenet(weights=None, **kwargs): GoogLeNet(options) (its auxiliary heads included
 * unless auxLogits is false: the builder drops them only when it loads pretrained weights).
 */
export function googlenet(options) {
  return new GoogLeNet(options);
}
