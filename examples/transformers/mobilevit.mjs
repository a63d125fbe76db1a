// MobileViT (Hugging Face transformers' MobileViTModel and MobileViTForImageClassification,
// modeling_mobilevit.py, eval mode) ported to onemodel as a user ports it: the same modules, names
// and operations, so a checkpoint's state dict (`conv_stem.convolution.weight`,
// `conv_stem.normalization.running_mean`, `encoder.layer.1.layer.0.expand_1x1.convolution.weight`,
// `encoder.layer.2.downsampling_layer.conv_3x3.normalization.weight`,
// `encoder.layer.2.transformer.layer.0.attention.attention.query.weight`, `encoder.layer.2.fusion...`,
// `conv_1x1_exp...`; a classifier's under `mobilevit.` beside `classifier.weight`) loads with a strict
// loadStateDict.
//
// MobileNetV2 inverted residuals, then three MobileViT blocks: each unfolds its feature map into
// patch_size x patch_size patches, runs a transformer over the patches at each of the patch_area
// positions, and folds them back. Where a side is no multiple of the patch size, the map is first
// resized to the next multiple (bilinear `interpolate` to `ceil(side / patch) * patch`) and resized
// back after folding, as upstream (`if new_width != orig_width or new_height != orig_height`).
// Every size comes from the image's, so a traced graph takes symbolic batch, height and width from 1.
//
//   const net = new MobileViTModel({ neck_hidden_sizes: [8, 8, 8, 16, 16, 24, 32], hidden_sizes: [8, 16, 16] }).eval();
//   const [lastHiddenState, pooled] = net.forward(pixelValues);   // [batch, 32, ceil(H / 32), ceil(W / 32)], [batch, 32]
import * as om from 'onemodel';
import { portConfig } from './modeling_utils.mjs';

const nn = om.nn;
const F = nn.functional;

/** MobileViTConfig's defaults (mobilevit-small) for the fields this port reads. */
export const MOBILEVIT_DEFAULTS = {
  num_channels: 3, image_size: 256, patch_size: 2, hidden_sizes: [144, 192, 240], neck_hidden_sizes: [16, 32, 64, 96, 128, 160, 640],
  num_attention_heads: 4, mlp_ratio: 2.0, expand_ratio: 4.0, hidden_act: 'silu', conv_kernel_size: 3, output_stride: 32,
  qkv_bias: true, layer_norm_eps: 1e-5, num_labels: 2,
};

function mobilevitConfig(model, config) {
  const c = portConfig(model, MOBILEVIT_DEFAULTS, config, 'hidden_act', 'silu');
  // 8 and 16 dilate the last stages for segmentation heads; only the classification backbone is ported
  if (c.output_stride !== 32) throw new Error(`${model}: output_stride ${c.output_stride} is not ported (only 32)`);
  return c;
}

/** Python's round(): halves to even (make_divisible's callers round a float channel count). */
function roundHalfEven(x) {
  const r = Math.round(x);
  return Math.abs(x % 1) === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

/** make_divisible: value rounded to a multiple of divisor (at least min_value), never more than 10% below value. */
export function makeDivisible(value, divisor = 8, minValue = null) {
  let newValue = Math.max(minValue ?? divisor, Math.trunc(Math.trunc(value + divisor / 2) / divisor) * divisor);
  if (newValue < 0.9 * value) newValue += divisor;
  return newValue;
}

/** Conv2d (no bias, padding (k - 1) / 2), BatchNorm2d, the config's activation (silu), each optional. */
export class MobileViTConvLayer extends nn.Module {
  constructor(config, inChannels, outChannels, kernelSize, { stride = 1, groups = 1, useNormalization = true, useActivation = true } = {}) {
    super();
    const padding = Math.trunc((kernelSize - 1) / 2);
    if (inChannels % groups !== 0) throw new Error(`MobileViTConvLayer: Input channels (${inChannels}) are not divisible by ${groups} groups.`);
    if (outChannels % groups !== 0) throw new Error(`MobileViTConvLayer: Output channels (${outChannels}) are not divisible by ${groups} groups.`);
    this.convolution = new nn.Conv2d(inChannels, outChannels, kernelSize, { stride, padding, groups, bias: false });
    this.normalization = useNormalization ? new nn.BatchNorm2d(outChannels, { eps: 1e-5, momentum: 0.1 }) : null;
    this.activation = useActivation ? new nn.SiLU() : null;
  }

  forward(features) {
    let x = this.convolution.forward(features);
    if (this.normalization !== null) x = this.normalization.forward(x);
    if (this.activation !== null) x = this.activation.forward(x);
    return x;
  }
}

/** MobileNetV2's inverted residual: 1x1 expand, 3x3 depthwise (stride), 1x1 reduce; a residual where the shape stays. */
export class MobileViTInvertedResidual extends nn.Module {
  constructor(config, inChannels, outChannels, stride) {
    super();
    const expandedChannels = makeDivisible(roundHalfEven(inChannels * config.expand_ratio), 8);
    if (stride !== 1 && stride !== 2) throw new Error(`MobileViTInvertedResidual: Invalid stride ${stride}.`);
    this.use_residual = stride === 1 && inChannels === outChannels;
    this.expand_1x1 = new MobileViTConvLayer(config, inChannels, expandedChannels, 1);
    this.conv_3x3 = new MobileViTConvLayer(config, expandedChannels, expandedChannels, 3, { stride, groups: expandedChannels });
    this.reduce_1x1 = new MobileViTConvLayer(config, expandedChannels, outChannels, 1, { useActivation: false });
  }

  forward(features) {
    const x = this.reduce_1x1.forward(this.conv_3x3.forward(this.expand_1x1.forward(features)));
    return this.use_residual ? features.add(x) : x;
  }
}

export class MobileViTMobileNetLayer extends nn.Module {
  constructor(config, inChannels, outChannels, stride = 1, numStages = 1) {
    super();
    this.layer = new nn.ModuleList(Array.from({ length: numStages }, (_, i) =>
      new MobileViTInvertedResidual(config, i === 0 ? inChannels : outChannels, outChannels, i === 0 ? stride : 1)));
  }

  forward(features) {
    let x = features;
    for (const layer of this.layer) x = layer.forward(x);
    return x;
  }
}

/** Multi-head self-attention over [batch * patch_area, patches, hidden]. */
export class MobileViTSelfAttention extends nn.Module {
  constructor(config, hiddenSize) {
    super();
    if (hiddenSize % config.num_attention_heads !== 0) {
      throw new Error(`MobileViTSelfAttention: The hidden size ${hiddenSize} is not a multiple of the number of attention heads ${config.num_attention_heads}.`);
    }
    this.num_attention_heads = config.num_attention_heads;
    this.attention_head_size = Math.trunc(hiddenSize / config.num_attention_heads);
    this.all_head_size = this.num_attention_heads * this.attention_head_size;
    this.query = new nn.Linear(hiddenSize, this.all_head_size, { bias: config.qkv_bias });
    this.key = new nn.Linear(hiddenSize, this.all_head_size, { bias: config.qkv_bias });
    this.value = new nn.Linear(hiddenSize, this.all_head_size, { bias: config.qkv_bias });
  }

  transposeForScores(x) {
    return x.view(...x.shape.slice(0, -1), this.num_attention_heads, this.attention_head_size).permute(0, 2, 1, 3);
  }

  forward(hiddenStates) {
    const mixedQueryLayer = this.query.forward(hiddenStates);
    const keyLayer = this.transposeForScores(this.key.forward(hiddenStates));
    const valueLayer = this.transposeForScores(this.value.forward(hiddenStates));
    const queryLayer = this.transposeForScores(mixedQueryLayer);
    const scores = queryLayer.matmul(keyLayer.transpose(-1, -2)).div(Math.sqrt(this.attention_head_size));
    const context = F.softmax(scores, -1).matmul(valueLayer).permute(0, 2, 1, 3).contiguous();
    return context.view(...context.shape.slice(0, -2), this.all_head_size);
  }
}

export class MobileViTSelfOutput extends nn.Module {
  constructor(config, hiddenSize) {
    super();
    this.dense = new nn.Linear(hiddenSize, hiddenSize);
  }

  forward(hiddenStates) {
    return this.dense.forward(hiddenStates);
  }
}

export class MobileViTAttention extends nn.Module {
  constructor(config, hiddenSize) {
    super();
    this.attention = new MobileViTSelfAttention(config, hiddenSize);
    this.output = new MobileViTSelfOutput(config, hiddenSize);
  }

  forward(hiddenStates) {
    return this.output.forward(this.attention.forward(hiddenStates));
  }
}

export class MobileViTIntermediate extends nn.Module {
  constructor(config, hiddenSize, intermediateSize) {
    super();
    this.dense = new nn.Linear(hiddenSize, intermediateSize);
  }

  forward(hiddenStates) {
    return F.silu(this.dense.forward(hiddenStates));
  }
}

/** The MLP's second linear and the residual (upstream adds it here, not in the layer). */
export class MobileViTOutput extends nn.Module {
  constructor(config, hiddenSize, intermediateSize) {
    super();
    this.dense = new nn.Linear(intermediateSize, hiddenSize);
  }

  forward(hiddenStates, inputTensor) {
    return this.dense.forward(hiddenStates).add(inputTensor);
  }
}

export class MobileViTTransformerLayer extends nn.Module {
  constructor(config, hiddenSize, intermediateSize) {
    super();
    this.attention = new MobileViTAttention(config, hiddenSize);
    this.intermediate = new MobileViTIntermediate(config, hiddenSize, intermediateSize);
    this.output = new MobileViTOutput(config, hiddenSize, intermediateSize);
    this.layernorm_before = new nn.LayerNorm(hiddenSize, { eps: config.layer_norm_eps });
    this.layernorm_after = new nn.LayerNorm(hiddenSize, { eps: config.layer_norm_eps });
  }

  forward(hiddenStates) {
    const h = this.attention.forward(this.layernorm_before.forward(hiddenStates)).add(hiddenStates);
    return this.output.forward(this.intermediate.forward(this.layernorm_after.forward(h)), h);
  }
}

export class MobileViTTransformer extends nn.Module {
  constructor(config, hiddenSize, numStages) {
    super();
    this.layer = new nn.ModuleList(Array.from({ length: numStages }, () =>
      new MobileViTTransformerLayer(config, hiddenSize, Math.trunc(hiddenSize * config.mlp_ratio))));
  }

  forward(hiddenStates) {
    let h = hiddenStates;
    for (const layer of this.layer) h = layer.forward(h);
    return h;
  }
}

/** A MobileViT block: (downsampling,) local convs, unfold to patches, transformer, fold back, project, fuse with the input. */
export class MobileViTLayer extends nn.Module {
  constructor(config, inChannels, outChannels, stride, hiddenSize, numStages) {
    super();
    this.patch_width = config.patch_size;
    this.patch_height = config.patch_size;
    let channels = inChannels;
    if (stride === 2) {
      this.downsampling_layer = new MobileViTInvertedResidual(config, inChannels, outChannels, stride);
      channels = outChannels;
    } else {
      this.downsampling_layer = null;
    }
    this.conv_kxk = new MobileViTConvLayer(config, channels, channels, config.conv_kernel_size);
    this.conv_1x1 = new MobileViTConvLayer(config, channels, hiddenSize, 1, { useNormalization: false, useActivation: false });
    this.transformer = new MobileViTTransformer(config, hiddenSize, numStages);
    this.layernorm = new nn.LayerNorm(hiddenSize, { eps: config.layer_norm_eps });
    this.conv_projection = new MobileViTConvLayer(config, hiddenSize, channels, 1);
    this.fusion = new MobileViTConvLayer(config, 2 * channels, channels, config.conv_kernel_size);
  }

  /** [batch, channels, H, W] -> [[batch * patch_area, patches, channels], infoDict]; resized to whole patches first where needed. */
  unfolding(features) {
    const [patchWidth, patchHeight] = [this.patch_width, this.patch_height];
    const patchArea = patchWidth * patchHeight;
    const [batchSize, channels, origHeight, origWidth] = features.shape;
    const newHeight = Math.ceil(origHeight / patchHeight) * patchHeight;
    const newWidth = Math.ceil(origWidth / patchWidth) * patchWidth;
    let x = features;
    let interpolate = false;
    if (newWidth !== origWidth || newHeight !== origHeight) {
      // upstream: padding could do, but the attention would then need a mask
      x = F.interpolate(x, { size: [newHeight, newWidth], mode: 'bilinear', alignCorners: false });
      interpolate = true;
    }
    const numPatchWidth = Math.floor(newWidth / patchWidth);
    const numPatchHeight = Math.floor(newHeight / patchHeight);
    const numPatches = numPatchHeight * numPatchWidth;
    let patches = x.reshape(batchSize * channels * numPatchHeight, patchHeight, numPatchWidth, patchWidth);
    patches = patches.transpose(1, 2).reshape(batchSize, channels, numPatches, patchArea);
    patches = patches.transpose(1, 3).reshape(batchSize * patchArea, numPatches, -1);
    const infoDict = {
      orig_size: [origHeight, origWidth], batch_size: batchSize, channels, interpolate, num_patches: numPatches,
      num_patches_width: numPatchWidth, num_patches_height: numPatchHeight,
    };
    return [patches, infoDict];
  }

  /** unfolding's inverse: [batch * patch_area, patches, channels] -> [batch, channels, H, W] (resized back to the original size). */
  folding(patches, infoDict) {
    const [patchWidth, patchHeight] = [this.patch_width, this.patch_height];
    const patchArea = patchWidth * patchHeight;
    const { batch_size: batchSize, channels, num_patches: numPatches, num_patches_height: numPatchHeight, num_patches_width: numPatchWidth } = infoDict;
    let features = patches.contiguous().view(batchSize, patchArea, numPatches, -1).transpose(1, 3);
    features = features.reshape(batchSize * channels * numPatchHeight, numPatchWidth, patchHeight, patchWidth).transpose(1, 2);
    features = features.reshape(batchSize, channels, numPatchHeight * patchHeight, numPatchWidth * patchWidth);
    if (infoDict.interpolate) features = F.interpolate(features, { size: infoDict.orig_size, mode: 'bilinear', alignCorners: false });
    return features;
  }

  forward(features) {
    let x = this.downsampling_layer !== null ? this.downsampling_layer.forward(features) : features;
    const residual = x;
    x = this.conv_1x1.forward(this.conv_kxk.forward(x));
    const [patches, infoDict] = this.unfolding(x);
    const learned = this.layernorm.forward(this.transformer.forward(patches));
    x = this.conv_projection.forward(this.folding(learned, infoDict));
    return this.fusion.forward(om.cat([residual, x], 1));
  }
}

/** Two MobileNet stages, then three MobileViT blocks of 2, 4 and 3 transformer layers, each halving the size. */
export class MobileViTEncoder extends nn.Module {
  constructor(config) {
    super();
    const n = config.neck_hidden_sizes;
    const h = config.hidden_sizes;
    this.layer = new nn.ModuleList([
      new MobileViTMobileNetLayer(config, n[0], n[1], 1, 1),
      new MobileViTMobileNetLayer(config, n[1], n[2], 2, 3),
      new MobileViTLayer(config, n[2], n[3], 2, h[0], 2),
      new MobileViTLayer(config, n[3], n[4], 2, h[1], 4),
      new MobileViTLayer(config, n[4], n[5], 2, h[2], 3),
    ]);
  }

  forward(hiddenStates) {
    let x = hiddenStates;
    for (const layer of this.layer) x = layer.forward(x);
    return x;
  }
}

/** MobileViTModel (expand_output true): pixel_values [B, C, H, W] -> [last_hidden_state [B, C', ceil(H/32), ceil(W/32)], pooler_output [B, C']]. */
export class MobileViTModel extends nn.Module {
  constructor(config = {}) {
    super();
    const c = mobilevitConfig('MobileViTModel', config);
    this.config = c;
    this.conv_stem = new MobileViTConvLayer(c, c.num_channels, c.neck_hidden_sizes[0], 3, { stride: 2 });
    this.encoder = new MobileViTEncoder(c);
    this.conv_1x1_exp = new MobileViTConvLayer(c, c.neck_hidden_sizes[5], c.neck_hidden_sizes[6], 1);
  }

  forward(pixelValues) {
    const lastHiddenState = this.conv_1x1_exp.forward(this.encoder.forward(this.conv_stem.forward(pixelValues)));
    return [lastHiddenState, lastHiddenState.mean([-2, -1])];
  }
}

/** MobileViTForImageClassification: the classifier over MobileViTModel's pooler_output (dropout the identity in eval mode). */
export class MobileViTForImageClassification extends nn.Module {
  constructor(config = {}) {
    super();
    const c = mobilevitConfig('MobileViTForImageClassification', config);
    this.mobilevit = new MobileViTModel(c);
    this.classifier = new nn.Linear(c.neck_hidden_sizes[c.neck_hidden_sizes.length - 1], c.num_labels);
  }

  forward(pixelValues) {
    return this.classifier.forward(this.mobilevit.forward(pixelValues)[1]);
  }
}
