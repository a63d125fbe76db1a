// torchvision 0.14's ConvNeXt (models/convnext.py) ported to om.nn: CNBlock, CNBlockConfig and
// ConvNeXt with torchvision's constructor arguments and field names (its state dicts load as they
// are), and the builders convnext_tiny / small / base / large. LayerNorm2d is om.nn's.
//
//   const net = convnext_tiny({ numClasses: 10 }).eval();
//
// Weights start from om.nn's default initialisation, not torchvision's trunc_normal_.
import * as om from 'onemodel';
import { invalidConfig, makeLayer, optionsOf } from './_utils.mjs';

const nn = om.nn;

/** A depthwise 7x7 convolution, then LayerNorm and a 4x MLP over the channels, scaled by layer_scale, plus the input. */
export class CNBlock extends nn.Module {
  constructor(dim, layerScale, stochasticDepthProb, normLayer = null) {
    super();
    normLayer ??= (c) => new nn.LayerNorm(c, { eps: 1e-6 });
    this.block = new nn.Sequential(
      new nn.Conv2d(dim, dim, 7, { padding: 3, groups: dim, bias: true }),
      new nn.Permute([0, 2, 3, 1]),
      makeLayer(normLayer, dim),
      new nn.Linear(dim, 4 * dim, { bias: true }),
      new nn.GELU(),
      new nn.Linear(4 * dim, dim, { bias: true }),
      new nn.Permute([0, 3, 1, 2]),
    );
    this.layer_scale = om.full([dim, 1, 1], layerScale);
    this.layer_scale.requiresGrad = true;
    this.stochastic_depth = new nn.StochasticDepth(stochasticDepthProb, 'row');
  }

  forward(input) {
    const result = this.stochastic_depth.forward(this.layer_scale.mul(this.block.forward(input)));
    return result.add(input);
  }
}

/** A stage: numLayers blocks at inputChannels, then (unless outChannels is null) a downsampling to outChannels. */
export class CNBlockConfig {
  constructor(inputChannels, outChannels, numLayers) {
    Object.assign(this, { inputChannels, outChannels, numLayers });
  }
}

/**
 * torchvision's ConvNeXt(block_setting, stochastic_depth_prob, layer_scale, num_classes, block,
 * norm_layer): new ConvNeXt(blockSetting, { stochasticDepthProb = 0, layerScale = 1e-6,
 * numClasses = 1000, block = CNBlock, normLayer = LayerNorm2d(eps 1e-6) }).
 */
export class ConvNeXt extends nn.Module {
  constructor(blockSetting, options) {
    super();
    const o = optionsOf(options, 'ConvNeXt', ['stochasticDepthProb', 'layerScale', 'numClasses', 'block', 'normLayer']);
    const { stochasticDepthProb = 0.0, layerScale = 1e-6, numClasses = 1000 } = o;
    if (!Array.isArray(blockSetting) || !blockSetting.length) throw invalidConfig('The block_setting should not be empty');
    if (!blockSetting.every((s) => s instanceof CNBlockConfig)) throw invalidConfig('The block_setting should be List[CNBlockConfig]');
    const block = o.block ?? CNBlock;
    const normLayer = o.normLayer ?? ((c) => new nn.LayerNorm2d(c, { eps: 1e-6 }));
    const layers = [new nn.Conv2dNormActivation(3, blockSetting[0].inputChannels, 4, { // stem
      stride: 4, padding: 0, normLayer, activationLayer: null, bias: true,
    })];
    const totalStageBlocks = blockSetting.reduce((s, cnf) => s + cnf.numLayers, 0);
    let stageBlockId = 0;
    for (const cnf of blockSetting) {
      const stage = [];
      for (let i = 0; i < cnf.numLayers; i++) {
        const sdProb = stochasticDepthProb * stageBlockId / (totalStageBlocks - 1.0); // linear in the block's depth
        stage.push(makeLayer(block, cnf.inputChannels, layerScale, sdProb));
        stageBlockId++;
      }
      layers.push(new nn.Sequential(...stage));
      if (cnf.outChannels !== null) { // downsampling
        layers.push(new nn.Sequential(makeLayer(normLayer, cnf.inputChannels), new nn.Conv2d(cnf.inputChannels, cnf.outChannels, 2, { stride: 2 })));
      }
    }
    this.features = new nn.Sequential(...layers);
    this.avgpool = new nn.AdaptiveAvgPool2d(1);
    const lastblock = blockSetting[blockSetting.length - 1];
    const lastconvOutputChannels = lastblock.outChannels ?? lastblock.inputChannels;
    this.classifier = new nn.Sequential(makeLayer(normLayer, lastconvOutputChannels), new nn.Flatten(1), new nn.Linear(lastconvOutputChannels, numClasses));
  }

  forward(x) {
    return this.classifier.forward(this.avgpool.forward(this.features.forward(x)));
  }
}

/** torchvision's builders: the stages of each size and its default stochastic depth; options as ConvNeXt's. */
const builder = (stages, stochasticDepthProb) => (options = {}) =>
  new ConvNeXt(stages.map((s) => new CNBlockConfig(...s)), { stochasticDepthProb, ...options });

export const convnext_tiny = builder([[96, 192, 3], [192, 384, 3], [384, 768, 9], [768, null, 3]], 0.1);
export const convnext_small = builder([[96, 192, 3], [192, 384, 3], [384, 768, 27], [768, null, 3]], 0.4);
export const convnext_base = builder([[128, 256, 3], [256, 512, 3], [512, 1024, 27], [1024, null, 3]], 0.5);
export const convnext_large = builder([[192, 384, 3], [384, 768, 3], [768, 1536, 27], [1536, null, 3]], 0.5);
