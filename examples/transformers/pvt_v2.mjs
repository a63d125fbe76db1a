// PVT v2 (Hugging Face transformers' PvtV2Model and PvtV2ForImageClassification,
// modeling_pvt_v2.py, eval mode) ported to onemodel as a user ports it: the same modules, names and
// operations, so a checkpoint's state dict (`pvt_v2.encoder.layers.0.patch_embedding.proj.weight`,
// `pvt_v2.encoder.layers.0.blocks.0.attention.spatial_reduction.weight`,
// `pvt_v2.encoder.layers.0.blocks.0.mlp.dwconv.dwconv.weight`, `pvt_v2.encoder.layers.0.layer_norm.weight`,
// `classifier.weight`) loads with a strict loadStateDict.
//
// Each stage embeds its input with an overlapping strided convolution and reads its height and width
// off the result; the attention's keys and values come from the tokens reshaped to [batch, channels,
// height, width] by those sizes and reduced by a strided convolution (sr_ratio), or, with
// linear_attention, adaptive-average-pooled to 7 x 7 whatever the image; the FFN runs a depthwise
// convolution on the tokens reshaped so too. Every size comes from the image's, so a traced graph
// takes symbolic batch, height and width.
//
//   const net = new PvtV2ForImageClassification(config).eval();
//   const logits = net.forward(pixelValues);   // [batch, num_labels]
import * as om from 'onemodel';
import { portConfig } from './modeling_utils.mjs';

const nn = om.nn;

/** PvtV2Config's defaults (pvt_v2_b0) for the fields this port reads. */
export const PVT_V2_DEFAULTS = {
  num_channels: 3, num_encoder_blocks: 4, depths: [2, 2, 2, 2], sr_ratios: [8, 4, 2, 1], hidden_sizes: [32, 64, 160, 256],
  patch_sizes: [7, 3, 3, 3], strides: [4, 2, 2, 2], num_attention_heads: [1, 2, 5, 8], mlp_ratios: [8, 8, 4, 4],
  hidden_act: 'gelu', layer_norm_eps: 1e-6, qkv_bias: true, linear_attention: false, num_labels: 1000,
};

/** The overlapping strided projection (padding patch // 2), a LayerNorm over the tokens: [embeddings, height, width]. */
export class PvtV2OverlapPatchEmbeddings extends nn.Module {
  constructor(config, layerIdx) {
    super();
    const patchSize = config.patch_sizes[layerIdx];
    const numChannels = layerIdx === 0 ? config.num_channels : config.hidden_sizes[layerIdx - 1];
    this.proj = new nn.Conv2d(numChannels, config.hidden_sizes[layerIdx], patchSize,
      { stride: config.strides[layerIdx], padding: Math.floor(patchSize / 2) });
    this.layer_norm = new nn.LayerNorm(config.hidden_sizes[layerIdx], { eps: config.layer_norm_eps });
  }

  forward(pixelValues) {
    const embeddings = this.proj.forward(pixelValues);
    const [, , height, width] = embeddings.shape;
    return [this.layer_norm.forward(embeddings.flatten(2).transpose(1, 2)), height, width];
  }
}

/** A depthwise 3 x 3 convolution of the tokens seen as an image height x width. */
export class PvtV2DepthWiseConv extends nn.Module {
  constructor(dim) {
    super();
    this.dwconv = new nn.Conv2d(dim, dim, 3, { stride: 1, padding: 1, bias: true, groups: dim });
  }

  forward(hiddenStates, height, width) {
    const [batchSize, , numChannels] = hiddenStates.shape;
    const h = hiddenStates.transpose(1, 2).view(batchSize, numChannels, height, width);
    return this.dwconv.forward(h).flatten(2).transpose(1, 2);
  }
}

/** Spatial-reduction attention: keys and values from the reduced (or pooled) image of the tokens. */
export class PvtV2SelfAttention extends nn.Module {
  constructor(config, hiddenSize, numAttentionHeads, spatialReductionRatio) {
    super();
    this.linear_attention = config.linear_attention;
    this.num_attention_heads = numAttentionHeads;
    this.attention_head_size = Math.trunc(hiddenSize / numAttentionHeads);
    this.all_head_size = this.num_attention_heads * this.attention_head_size;
    this.query = new nn.Linear(hiddenSize, this.all_head_size, { bias: config.qkv_bias });
    this.key = new nn.Linear(hiddenSize, this.all_head_size, { bias: config.qkv_bias });
    this.value = new nn.Linear(hiddenSize, this.all_head_size, { bias: config.qkv_bias });
    this.proj = new nn.Linear(hiddenSize, hiddenSize);
    this.spatial_reduction_ratio = spatialReductionRatio;
    if (this.linear_attention) {
      this.pool = new nn.AdaptiveAvgPool2d(7);
      this.spatial_reduction = new nn.Conv2d(hiddenSize, hiddenSize, 1, { stride: 1 });
      this.layer_norm = new nn.LayerNorm(hiddenSize, { eps: config.layer_norm_eps });
      this.act = new nn.GELU();
    } else if (spatialReductionRatio > 1) {
      this.spatial_reduction = new nn.Conv2d(hiddenSize, hiddenSize, spatialReductionRatio, { stride: spatialReductionRatio });
      this.layer_norm = new nn.LayerNorm(hiddenSize, { eps: config.layer_norm_eps });
    }
  }

  transposeForScores(hiddenStates) {
    return hiddenStates.view([...hiddenStates.shape.slice(0, -1), this.num_attention_heads, this.attention_head_size]).permute(0, 2, 1, 3);
  }

  forward(hiddenStates, height, width) {
    const [batchSize, seqLen, numChannels] = hiddenStates.shape;
    const queryLayer = this.transposeForScores(this.query.forward(hiddenStates));
    let h = hiddenStates;
    if (this.linear_attention) {
      h = h.permute(0, 2, 1).reshape(batchSize, numChannels, height, width);
      h = this.spatial_reduction.forward(this.pool.forward(h)).reshape(batchSize, numChannels, -1).permute(0, 2, 1);
      h = this.act.forward(this.layer_norm.forward(h));
    } else if (this.spatial_reduction_ratio > 1) {
      h = h.permute(0, 2, 1).reshape(batchSize, numChannels, height, width);
      h = this.spatial_reduction.forward(h).reshape(batchSize, numChannels, -1).permute(0, 2, 1);
      h = this.layer_norm.forward(h);
    }
    const keyLayer = this.transposeForScores(this.key.forward(h));
    const valueLayer = this.transposeForScores(this.value.forward(h));
    const attentionProbs = queryLayer.matmul(keyLayer.transpose(-1, -2)).div(Math.sqrt(this.attention_head_size)).softmax(-1);
    const contextLayer = attentionProbs.matmul(valueLayer).transpose(1, 2).reshape(batchSize, seqLen, numChannels);
    return this.proj.forward(contextLayer);
  }
}

/** dense1, (ReLU with linear_attention,) the depthwise conv, gelu, dense2. */
export class PvtV2ConvFeedForwardNetwork extends nn.Module {
  constructor(config, inFeatures, hiddenFeatures) {
    super();
    this.dense1 = new nn.Linear(inFeatures, hiddenFeatures);
    this.dwconv = new PvtV2DepthWiseConv(hiddenFeatures);
    this.dense2 = new nn.Linear(hiddenFeatures, inFeatures);
    this.relu = config.linear_attention ? new nn.ReLU() : new nn.Identity();
  }

  forward(hiddenStates, height, width) {
    const h = this.relu.forward(this.dense1.forward(hiddenStates));
    return this.dense2.forward(nn.functional.gelu(this.dwconv.forward(h, height, width)));
  }
}

/** Pre-norm attention and FFN, each with its residual (drop_path: the identity in eval). */
export class PvtV2BlockLayer extends nn.Module {
  constructor(config, layerIdx) {
    super();
    const hiddenSize = config.hidden_sizes[layerIdx];
    this.layer_norm_1 = new nn.LayerNorm(hiddenSize, { eps: config.layer_norm_eps });
    this.attention = new PvtV2SelfAttention(config, hiddenSize, config.num_attention_heads[layerIdx], config.sr_ratios[layerIdx]);
    this.layer_norm_2 = new nn.LayerNorm(hiddenSize, { eps: config.layer_norm_eps });
    this.mlp = new PvtV2ConvFeedForwardNetwork(config, hiddenSize, Math.trunc(hiddenSize * config.mlp_ratios[layerIdx]));
  }

  forward(hiddenStates, height, width) {
    const h = this.attention.forward(this.layer_norm_1.forward(hiddenStates), height, width).add(hiddenStates);
    return h.add(this.mlp.forward(this.layer_norm_2.forward(h), height, width));
  }
}

export class PvtV2EncoderLayer extends nn.Module {
  constructor(config, layerIdx) {
    super();
    this.patch_embedding = new PvtV2OverlapPatchEmbeddings(config, layerIdx);
    this.blocks = new nn.ModuleList(Array.from({ length: config.depths[layerIdx] }, () => new PvtV2BlockLayer(config, layerIdx)));
    this.layer_norm = new nn.LayerNorm(config.hidden_sizes[layerIdx], { eps: config.layer_norm_eps });
  }

  /** -> [hidden_states [batch, h * w, C], height, width] */
  forward(hiddenStates) {
    let [h, height, width] = this.patch_embedding.forward(hiddenStates);
    for (const block of this.blocks) h = block.forward(h, height, width);
    return [this.layer_norm.forward(h), height, width];
  }
}

export class PvtV2Encoder extends nn.Module {
  constructor(config) {
    super();
    this.layers = new nn.ModuleList(Array.from({ length: config.num_encoder_blocks }, (_, i) => new PvtV2EncoderLayer(config, i)));
  }

  forward(pixelValues) {
    const [batchSize] = pixelValues.shape;
    let hiddenStates = pixelValues;
    for (const layer of this.layers) {
      const [h, height, width] = layer.forward(hiddenStates);
      // reshape back to (batch_size, num_channels, height, width)
      hiddenStates = h.reshape(batchSize, height, width, -1).permute(0, 3, 1, 2).contiguous();
    }
    return hiddenStates;
  }
}

/** The config a PVT v2 port reads: PvtV2Config's defaults overridden by config; what it does not port refused before anything is made. */
function pvtV2Config(model, config) {
  const c = portConfig(model, PVT_V2_DEFAULTS, config, 'hidden_act', 'gelu');
  c.hidden_sizes.forEach((h, i) => {
    if (h % c.num_attention_heads[i] !== 0) {
      throw new Error(`${model}: The hidden size (${h}) is not a multiple of the number of attention heads (${c.num_attention_heads[i]})`);
    }
  });
  return c;
}

/** forward(pixel_values [batch, 3, H, W]) -> last_hidden_state [batch, C, h, w] (the last stage's). */
export class PvtV2Model extends nn.Module {
  constructor(config = {}) {
    super();
    this.encoder = new PvtV2Encoder(pvtV2Config('PvtV2Model', config));
  }

  forward(pixelValues) {
    return this.encoder.forward(pixelValues);
  }
}

/** forward(pixel_values) -> logits [batch, num_labels]: the classifier over the mean of the last stage's tokens. */
export class PvtV2ForImageClassification extends nn.Module {
  constructor(config = {}) {
    super();
    const c = pvtV2Config('PvtV2ForImageClassification', config);
    this.hidden_size = c.hidden_sizes[c.hidden_sizes.length - 1];
    this.pvt_v2 = new PvtV2Model(c);
    this.classifier = new nn.Linear(this.hidden_size, c.num_labels);
  }

  forward(pixelValues) {
    const sequenceOutput = this.pvt_v2.forward(pixelValues);
    const [batchSize] = sequenceOutput.shape;
    const tokens = sequenceOutput.permute(0, 2, 3, 1).reshape(batchSize, -1, this.hidden_size);
    return this.classifier.forward(tokens.mean(1));
  }
}
