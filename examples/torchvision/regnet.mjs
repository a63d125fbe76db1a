// torchvision 0.14's RegNet (models/regnet.py) ported to om.nn: SimpleStemIN, BottleneckTransform,
// ResBottleneckBlock, AnyStage, BlockParams (with from_init_params as fromInitParams) and RegNet,
// with torchvision's constructor arguments and field names (its state dicts load as they are: the
// stages are `trunk_output.block1.block1-0.f.b.0.weight`, ...), and the builders regnet_y_400mf ...
// regnet_y_128gf, regnet_x_400mf ... regnet_x_32gf. RegNetY's blocks have a squeeze-and-excitation
// layer (`f.se`); every block's 3x3 convolution is grouped.
//
//   const net = regnet_y_400mf({ numClasses: 10 }).eval();
//
// Weights start from om.nn's default initialisation, not torchvision's init schemes.
import * as om from 'onemodel';
import { invalidConfig, makeDivisible, makeLayer, optionsOf } from './_utils.mjs';

const nn = om.nn;

/** Python's round() of a float: to the nearest integer, halves to the even one. */
const pyRound = (v) => {
  const r = Math.round(v); // halves up
  return r - v === 0.5 && r % 2 !== 0 ? r - 1 : r;
};

/** The stem: a 3x3 convolution at stride 2, the norm and the activation. */
export class SimpleStemIN extends nn.Conv2dNormActivation {
  constructor(widthIn, widthOut, normLayer, activationLayer) {
    super(widthIn, widthOut, 3, { stride: 2, normLayer, activationLayer });
  }
}

/** The block's transform: a (1x1), b (3x3, grouped, strided), se (RegNetY), c (1x1, no activation). */
export class BottleneckTransform extends nn.Sequential {
  constructor(widthIn, widthOut, stride, normLayer, activationLayer, groupWidth, bottleneckMultiplier, seRatio) {
    const wB = pyRound(widthOut * bottleneckMultiplier);
    const g = Math.floor(wB / groupWidth);
    const layers = new Map();
    layers.set('a', new nn.Conv2dNormActivation(widthIn, wB, 1, { stride: 1, normLayer, activationLayer }));
    layers.set('b', new nn.Conv2dNormActivation(wB, wB, 3, { stride, groups: g, normLayer, activationLayer }));
    if (seRatio) {
      // The SE reduction ratio is defined with respect to the beginning of the block.
      const widthSeOut = pyRound(seRatio * widthIn);
      layers.set('se', new nn.SqueezeExcitation(wB, widthSeOut, { activation: activationLayer }));
    }
    layers.set('c', new nn.Conv2dNormActivation(wB, widthOut, 1, { stride: 1, normLayer, activationLayer: null }));
    super(layers);
  }
}

/** The residual block: activation(proj(x) + f(x)), proj a strided 1x1 convolution where the shape changes. */
export class ResBottleneckBlock extends nn.Module {
  constructor(widthIn, widthOut, stride, normLayer, activationLayer, groupWidth = 1, bottleneckMultiplier = 1.0, seRatio = null) {
    super();
    // Use skip connection with projection if shape changes
    this.proj = null;
    if (widthIn !== widthOut || stride !== 1) {
      this.proj = new nn.Conv2dNormActivation(widthIn, widthOut, 1, { stride, normLayer, activationLayer: null });
    }
    this.f = new BottleneckTransform(widthIn, widthOut, stride, normLayer, activationLayer, groupWidth, bottleneckMultiplier, seRatio);
    this.activation = makeLayer(activationLayer);
  }

  forward(x) {
    const y = this.proj !== null ? this.proj.forward(x).add(this.f.forward(x)) : x.add(this.f.forward(x));
    return this.activation.forward(y);
  }
}

/** A stage: depth blocks named `block<stageIndex>-<i>`, the first taking widthIn at the stride. */
export class AnyStage extends nn.Sequential {
  constructor(widthIn, widthOut, stride, depth, blockConstructor, normLayer, activationLayer, groupWidth,
    bottleneckMultiplier, seRatio = null, stageIndex = 0) {
    super();
    for (let i = 0; i < depth; i++) {
      const block = makeLayer(blockConstructor, i === 0 ? widthIn : widthOut, widthOut, i === 0 ? stride : 1,
        normLayer, activationLayer, groupWidth, bottleneckMultiplier, seRatio);
      this.addModule(`block${stageIndex}-${i}`, block);
    }
  }
}

/** The per-stage settings of a RegNet: depths, widths, group widths, bottleneck multipliers, strides, seRatio. */
export class BlockParams {
  constructor(depths, widths, groupWidths, bottleneckMultipliers, strides, seRatio = null) {
    Object.assign(this, { depths, widths, groupWidths, bottleneckMultipliers, strides, seRatio });
  }

  /**
   * torchvision's BlockParams.from_init_params(depth, w_0, w_a, w_m, group_width,
   * bottleneck_multiplier, se_ratio): the block widths w_0 * w_m ** round(log(1 + i w_a / w_0) /
   * log(w_m)) quantized to multiples of 8 (computed in float32 as torch computes them), grouped
   * into stages of equal width.
   */
  static fromInitParams(depth, w0, wA, wM, groupWidth, options) {
    const o = optionsOf(options, 'BlockParams.fromInitParams', ['bottleneckMultiplier', 'seRatio']);
    const { bottleneckMultiplier = 1.0, seRatio = null } = o;
    const QUANT = 8;
    const STRIDE = 2;
    if (wA < 0 || w0 <= 0 || wM <= 1 || w0 % 8 !== 0) throw invalidConfig('Invalid RegNet settings');
    // Compute the block widths. Each stage has one unique block width
    const blockWidths = Array.from(om.tidy(() => {
      const widthsCont = om.arange(0, depth, { dtype: 'int64' }).mul(wA).add(w0);
      const blockCapacity = widthsCont.div(w0).log().div(Math.log(wM)).round();
      return om.full([], wM).pow(blockCapacity).mul(w0).div(QUANT).round().mul(QUANT).long().toArray();
    }), Number);
    const numStages = new Set(blockWidths).size;
    // Convert to per stage parameters: a stage starts where the width changes
    const splits = [...blockWidths, 0].map((w, i) => w !== ([0, ...blockWidths][i]));
    const stageWidths = blockWidths.filter((w, i) => splits[i]);
    const starts = splits.flatMap((t, d) => (t ? [d] : []));
    const stageDepths = starts.slice(1).map((d, i) => d - starts[i]);
    const [widths, groupWidths] = BlockParams.adjustWidthsGroupsCompatibilty(stageWidths,
      Array(numStages).fill(bottleneckMultiplier), Array(numStages).fill(groupWidth));
    return new BlockParams(stageDepths, widths, groupWidths, Array(numStages).fill(bottleneckMultiplier),
      Array(numStages).fill(STRIDE), seRatio);
  }

  /** [width, stride, depth, groupWidth, bottleneckMultiplier] of each stage (_get_expanded_params). */
  expandedParams() {
    return this.widths.map((w, i) => [w, this.strides[i], this.depths[i], this.groupWidths[i], this.bottleneckMultipliers[i]]);
  }

  /** The stage widths and group widths adjusted so that each bottleneck width is a multiple of its group width. */
  static adjustWidthsGroupsCompatibilty(stageWidths, bottleneckRatios, groupWidths) {
    const widths = stageWidths.map((w, i) => Math.trunc(w * bottleneckRatios[i]));
    const groupWidthsMin = groupWidths.map((g, i) => Math.min(g, widths[i]));
    const wsBot = widths.map((wBot, i) => makeDivisible(wBot, groupWidthsMin[i]));
    return [wsBot.map((wBot, i) => Math.trunc(wBot / bottleneckRatios[i])), groupWidthsMin];
  }
}

/**
 * torchvision's RegNet(block_params, num_classes, stem_width, stem_type, block_type, norm_layer,
 * activation): new RegNet(blockParams, { numClasses = 1000, stemWidth = 32, stemType = SimpleStemIN,
 * blockType = ResBottleneckBlock, normLayer = BatchNorm2d, activation = ReLU }).
 */
export class RegNet extends nn.Module {
  constructor(blockParams, options) {
    super();
    const o = optionsOf(options, 'RegNet', ['numClasses', 'stemWidth', 'stemType', 'blockType', 'normLayer', 'activation']);
    const { numClasses = 1000, stemWidth = 32 } = o;
    const stemType = o.stemType ?? SimpleStemIN;
    const normLayer = o.normLayer ?? nn.BatchNorm2d;
    const blockType = o.blockType ?? ResBottleneckBlock;
    const activation = o.activation ?? nn.ReLU;
    if (!(blockParams instanceof BlockParams)) throw invalidConfig('RegNet: block_params must be a BlockParams');
    // Ad hoc stem
    this.stem = makeLayer(stemType, 3, stemWidth, normLayer, activation);
    let currentWidth = stemWidth;
    const blocks = new Map();
    blockParams.expandedParams().forEach(([widthOut, stride, depth, groupWidth, bottleneckMultiplier], i) => {
      blocks.set(`block${i + 1}`, new AnyStage(currentWidth, widthOut, stride, depth, blockType, normLayer, activation,
        groupWidth, bottleneckMultiplier, blockParams.seRatio, i + 1));
      currentWidth = widthOut;
    });
    this.trunk_output = new nn.Sequential(blocks);
    this.avgpool = new nn.AdaptiveAvgPool2d([1, 1]);
    this.fc = new nn.Linear(currentWidth, numClasses);
  }

  forward(x) {
    let h = this.stem.forward(x);
    h = this.trunk_output.forward(h);
    h = this.avgpool.forward(h);
    return this.fc.forward(h.flatten(1));
  }
}

/** torchvision's builder: BlockParams.fromInitParams(depth, w0, wA, wM, groupWidth, { seRatio }), then RegNet with options. */
const builder = (depth, w0, wA, wM, groupWidth, seRatio = null) => (options = {}) => {
  const params = BlockParams.fromInitParams(depth, w0, wA, wM, groupWidth, { seRatio });
  return new RegNet(params, options);
};

export const regnet_y_400mf = builder(16, 48, 27.89, 2.09, 8, 0.25);
export const regnet_y_800mf = builder(14, 56, 38.84, 2.4, 16, 0.25);
export const regnet_y_1_6gf = builder(27, 48, 20.71, 2.65, 24, 0.25);
export const regnet_y_3_2gf = builder(21, 80, 42.63, 2.66, 24, 0.25);
export const regnet_y_8gf = builder(17, 192, 76.82, 2.19, 56, 0.25);
export const regnet_y_16gf = builder(18, 200, 106.23, 2.48, 112, 0.25);
export const regnet_y_32gf = builder(20, 232, 115.89, 2.53, 232, 0.25);
export const regnet_y_128gf = builder(27, 456, 160.83, 2.52, 264, 0.25);
export const regnet_x_400mf = builder(22, 24, 24.48, 2.54, 16);
export const regnet_x_800mf = builder(16, 56, 35.73, 2.28, 16);
export const regnet_x_1_6gf = builder(18, 80, 34.01, 2.25, 24);
export const regnet_x_3_2gf = builder(25, 88, 26.31, 2.25, 48);
export const regnet_x_8gf = builder(23, 80, 49.56, 2.88, 120);
export const regnet_x_16gf = builder(22, 216, 55.59, 2.1, 128);
export const regnet_x_32gf = builder(23, 320, 69.86, 2.0, 168);
