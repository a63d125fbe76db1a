// torchvision 0.14's Inception v3 (models/inception.py) ported to om.nn: BasicConv2d, InceptionA
// ... InceptionE, InceptionAux and Inception3 with torchvision's constructor arguments and field
// names (its state dicts load as they are), and the builder inception_v3.
//
//   const net = inception_v3({ numClasses: 10, auxLogits: false }).eval();   // inputs from 75 x 75 (299 x 299 for its weights)
//   const logits = net.forward(images);   // eval: the logits; training with auxLogits: { logits, aux_logits } (InceptionOutputs)
//
// Weights start from om.nn's default initialisation, not torchvision's truncated normal.
import * as om from 'onemodel';
import { invalidConfig, makeLayer, optionsOf } from './_utils.mjs';
import { BasicConv2d, transformImageNetInput } from './googlenet.mjs';

export { BasicConv2d }; // the same block as GoogLeNet's (Conv2d without bias, BatchNorm2d eps 0.001, ReLU), as is _transform_input

const nn = om.nn;
const F = nn.functional;

/** convBlock(inChannels, outChannels, { kernelSize, ...rest }) through makeLayer: Python's conv_block(in, out, kernel_size=k, **rest). */
const convOf = (convBlock) => (i, o, kernelSize, rest = {}) => makeLayer(convBlock ?? BasicConv2d, i, o, { kernelSize, ...rest });

/** 35 x 35 blocks: 1x1; 1x1 then 5x5; 1x1 then two 3x3; a 3x3 average pool then 1x1 (poolFeatures). */
export class InceptionA extends nn.Module {
  constructor(inChannels, poolFeatures, convBlock = null) {
    super();
    const conv = convOf(convBlock);
    this.branch1x1 = conv(inChannels, 64, 1);
    this.branch5x5_1 = conv(inChannels, 48, 1);
    this.branch5x5_2 = conv(48, 64, 5, { padding: 2 });
    this.branch3x3dbl_1 = conv(inChannels, 64, 1);
    this.branch3x3dbl_2 = conv(64, 96, 3, { padding: 1 });
    this.branch3x3dbl_3 = conv(96, 96, 3, { padding: 1 });
    this.branch_pool = conv(inChannels, poolFeatures, 1);
  }

  forward(x) {
    const branch1x1 = this.branch1x1.forward(x);
    const branch5x5 = this.branch5x5_2.forward(this.branch5x5_1.forward(x));
    const branch3x3dbl = this.branch3x3dbl_3.forward(this.branch3x3dbl_2.forward(this.branch3x3dbl_1.forward(x)));
    const branchPool = this.branch_pool.forward(F.avgPool2d(x, 3, { stride: 1, padding: 1 }));
    return om.cat([branch1x1, branch5x5, branch3x3dbl, branchPool], 1);
  }
}

/** The 35 -> 17 reduction: a strided 3x3; 1x1, 3x3, strided 3x3; a strided 3x3 max pool. */
export class InceptionB extends nn.Module {
  constructor(inChannels, convBlock = null) {
    super();
    const conv = convOf(convBlock);
    this.branch3x3 = conv(inChannels, 384, 3, { stride: 2 });
    this.branch3x3dbl_1 = conv(inChannels, 64, 1);
    this.branch3x3dbl_2 = conv(64, 96, 3, { padding: 1 });
    this.branch3x3dbl_3 = conv(96, 96, 3, { stride: 2 });
  }

  forward(x) {
    const branch3x3 = this.branch3x3.forward(x);
    const branch3x3dbl = this.branch3x3dbl_3.forward(this.branch3x3dbl_2.forward(this.branch3x3dbl_1.forward(x)));
    const branchPool = F.maxPool2d(x, 3, { stride: 2 });
    return om.cat([branch3x3, branch3x3dbl, branchPool], 1);
  }
}

/** 17 x 17 blocks: factorised 7x7 convolutions (1x7 and 7x1) of channels7x7 channels. */
export class InceptionC extends nn.Module {
  constructor(inChannels, channels7x7, convBlock = null) {
    super();
    const conv = convOf(convBlock);
    this.branch1x1 = conv(inChannels, 192, 1);
    const c7 = channels7x7;
    this.branch7x7_1 = conv(inChannels, c7, 1);
    this.branch7x7_2 = conv(c7, c7, [1, 7], { padding: [0, 3] });
    this.branch7x7_3 = conv(c7, 192, [7, 1], { padding: [3, 0] });
    this.branch7x7dbl_1 = conv(inChannels, c7, 1);
    this.branch7x7dbl_2 = conv(c7, c7, [7, 1], { padding: [3, 0] });
    this.branch7x7dbl_3 = conv(c7, c7, [1, 7], { padding: [0, 3] });
    this.branch7x7dbl_4 = conv(c7, c7, [7, 1], { padding: [3, 0] });
    this.branch7x7dbl_5 = conv(c7, 192, [1, 7], { padding: [0, 3] });
    this.branch_pool = conv(inChannels, 192, 1);
  }

  forward(x) {
    const branch1x1 = this.branch1x1.forward(x);
    let branch7x7 = this.branch7x7_1.forward(x);
    branch7x7 = this.branch7x7_3.forward(this.branch7x7_2.forward(branch7x7));
    let branch7x7dbl = this.branch7x7dbl_1.forward(x);
    for (const k of [2, 3, 4, 5]) branch7x7dbl = this[`branch7x7dbl_${k}`].forward(branch7x7dbl);
    const branchPool = this.branch_pool.forward(F.avgPool2d(x, 3, { stride: 1, padding: 1 }));
    return om.cat([branch1x1, branch7x7, branch7x7dbl, branchPool], 1);
  }
}

/** The 17 -> 8 reduction: 1x1 then a strided 3x3; 1x1, 1x7, 7x1, a strided 3x3; a strided 3x3 max pool. */
export class InceptionD extends nn.Module {
  constructor(inChannels, convBlock = null) {
    super();
    const conv = convOf(convBlock);
    this.branch3x3_1 = conv(inChannels, 192, 1);
    this.branch3x3_2 = conv(192, 320, 3, { stride: 2 });
    this.branch7x7x3_1 = conv(inChannels, 192, 1);
    this.branch7x7x3_2 = conv(192, 192, [1, 7], { padding: [0, 3] });
    this.branch7x7x3_3 = conv(192, 192, [7, 1], { padding: [3, 0] });
    this.branch7x7x3_4 = conv(192, 192, 3, { stride: 2 });
  }

  forward(x) {
    const branch3x3 = this.branch3x3_2.forward(this.branch3x3_1.forward(x));
    let branch7x7x3 = this.branch7x7x3_1.forward(x);
    for (const k of [2, 3, 4]) branch7x7x3 = this[`branch7x7x3_${k}`].forward(branch7x7x3);
    const branchPool = F.maxPool2d(x, 3, { stride: 2 });
    return om.cat([branch3x3, branch7x7x3, branchPool], 1);
  }
}

/** 8 x 8 blocks: 1x1; 1x1 then 1x3 and 3x1 side by side; 1x1, 3x3, then 1x3 and 3x1 side by side; average pool then 1x1. */
export class InceptionE extends nn.Module {
  constructor(inChannels, convBlock = null) {
    super();
    const conv = convOf(convBlock);
    this.branch1x1 = conv(inChannels, 320, 1);
    this.branch3x3_1 = conv(inChannels, 384, 1);
    this.branch3x3_2a = conv(384, 384, [1, 3], { padding: [0, 1] });
    this.branch3x3_2b = conv(384, 384, [3, 1], { padding: [1, 0] });
    this.branch3x3dbl_1 = conv(inChannels, 448, 1);
    this.branch3x3dbl_2 = conv(448, 384, 3, { padding: 1 });
    this.branch3x3dbl_3a = conv(384, 384, [1, 3], { padding: [0, 1] });
    this.branch3x3dbl_3b = conv(384, 384, [3, 1], { padding: [1, 0] });
    this.branch_pool = conv(inChannels, 192, 1);
  }

  forward(x) {
    const branch1x1 = this.branch1x1.forward(x);
    const b3 = this.branch3x3_1.forward(x);
    const branch3x3 = om.cat([this.branch3x3_2a.forward(b3), this.branch3x3_2b.forward(b3)], 1);
    const b3dbl = this.branch3x3dbl_2.forward(this.branch3x3dbl_1.forward(x));
    const branch3x3dbl = om.cat([this.branch3x3dbl_3a.forward(b3dbl), this.branch3x3dbl_3b.forward(b3dbl)], 1);
    const branchPool = this.branch_pool.forward(F.avgPool2d(x, 3, { stride: 1, padding: 1 }));
    return om.cat([branch1x1, branch3x3, branch3x3dbl, branchPool], 1);
  }
}

/** The auxiliary classifier (training only): a 5x5 average pool (stride 3), 1x1 to 128, 5x5 to 768, pooled, a linear. */
export class InceptionAux extends nn.Module {
  constructor(inChannels, numClasses, convBlock = null) {
    super();
    const conv = convOf(convBlock);
    this.conv0 = conv(inChannels, 128, 1);
    this.conv1 = conv(128, 768, 5);
    this.fc = new nn.Linear(768, numClasses);
  }

  forward(x) {
    x = F.avgPool2d(x, 5, { stride: 3 });
    x = this.conv1.forward(this.conv0.forward(x));
    x = om.flatten(F.adaptiveAvgPool2d(x, [1, 1]), 1);
    return this.fc.forward(x);
  }
}

/**
 * torchvision's Inception3(num_classes, aux_logits, transform_input, inception_blocks, init_weights,
 * dropout): new Inception3({ numClasses = 1000, auxLogits = true, transformInput = false,
 * inceptionBlocks = [BasicConv2d, InceptionA, ..., InceptionE, InceptionAux], initWeights (accepted,
 * ignored), dropout = 0.5 }).
 */
export class Inception3 extends nn.Module {
  constructor(options) {
    super();
    const o = optionsOf(options, 'Inception3', ['numClasses', 'auxLogits', 'transformInput', 'inceptionBlocks', 'initWeights', 'dropout']);
    const { numClasses = 1000, auxLogits = true, transformInput = false, dropout = 0.5 } = o;
    const inceptionBlocks = o.inceptionBlocks ?? [BasicConv2d, InceptionA, InceptionB, InceptionC, InceptionD, InceptionE, InceptionAux];
    if (inceptionBlocks.length !== 7) throw invalidConfig(`lenght of inception_blocks should be 7 instead of ${inceptionBlocks.length}`);
    const [convBlock, inceptionA, inceptionB, inceptionC, inceptionD, inceptionE, inceptionAux] = inceptionBlocks;
    const conv = convOf(convBlock);
    this.auxLogits = auxLogits;
    this.transformInput = transformInput;
    this.Conv2d_1a_3x3 = conv(3, 32, 3, { stride: 2 });
    this.Conv2d_2a_3x3 = conv(32, 32, 3);
    this.Conv2d_2b_3x3 = conv(32, 64, 3, { padding: 1 });
    this.maxpool1 = new nn.MaxPool2d(3, { stride: 2 });
    this.Conv2d_3b_1x1 = conv(64, 80, 1);
    this.Conv2d_4a_3x3 = conv(80, 192, 3);
    this.maxpool2 = new nn.MaxPool2d(3, { stride: 2 });
    this.Mixed_5b = makeLayer(inceptionA, 192, 32);
    this.Mixed_5c = makeLayer(inceptionA, 256, 64);
    this.Mixed_5d = makeLayer(inceptionA, 288, 64);
    this.Mixed_6a = makeLayer(inceptionB, 288);
    this.Mixed_6b = makeLayer(inceptionC, 768, 128);
    this.Mixed_6c = makeLayer(inceptionC, 768, 160);
    this.Mixed_6d = makeLayer(inceptionC, 768, 160);
    this.Mixed_6e = makeLayer(inceptionC, 768, 192);
    this.AuxLogits = auxLogits ? makeLayer(inceptionAux, 768, numClasses) : null;
    this.Mixed_7a = makeLayer(inceptionD, 768);
    this.Mixed_7b = makeLayer(inceptionE, 1280);
    this.Mixed_7c = makeLayer(inceptionE, 2048);
    this.avgpool = new nn.AdaptiveAvgPool2d([1, 1]);
    this.dropout = new nn.Dropout({ p: dropout });
    this.fc = new nn.Linear(2048, numClasses);
  }

  forward(x) {
    if (this.transformInput) x = transformImageNetInput(x);
    for (const name of ['Conv2d_1a_3x3', 'Conv2d_2a_3x3', 'Conv2d_2b_3x3', 'maxpool1', 'Conv2d_3b_1x1', 'Conv2d_4a_3x3', 'maxpool2',
      'Mixed_5b', 'Mixed_5c', 'Mixed_5d', 'Mixed_6a', 'Mixed_6b', 'Mixed_6c', 'Mixed_6d', 'Mixed_6e']) x = this[name].forward(x);
    const aux = this.AuxLogits !== null && this.training ? this.AuxLogits.forward(x) : null;
    x = this.Mixed_7c.forward(this.Mixed_7b.forward(this.Mixed_7a.forward(x)));
    x = om.flatten(this.dropout.forward(this.avgpool.forward(x)), 1);
    x = this.fc.forward(x);
    return this.training && this.auxLogits ? { logits: x, aux_logits: aux } : x;
  }
}

/** torchvision's inception_v3(weights=None, **kwargs): Inception3(options). */
export function inception_v3(options) {
  return new Inception3(options);
}
