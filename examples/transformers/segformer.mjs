// SegFormer (Hugging Face transformers' SegformerForSemanticSegmentation, modeling_segformer.py,
// eval mode) ported to onemodel as a user ports it: the same modules, names and operations, so a
// checkpoint's state dict (`segformer.encoder.patch_embeddings.0.proj.weight`,
// `segformer.encoder.block.0.0.attention.self.sr.weight`, ..., `decode_head.linear_c.0.proj.weight`,
// `decode_head.batch_norm.running_mean`, `decode_head.classifier.weight`) loads with a strict
// loadStateDict. The Mix Transformer encoder: per stage, overlapping patch embeddings (a strided
// Conv2d padded by patch_size // 2), efficient self-attention whose keys and values come from the
// tokens reshaped to [batch, channels, height, width] and reduced by a strided conv (sr_ratio),
// a Mix-FFN with a depthwise 3 x 3 conv, and the stage's output reshaped back to
// [batch, channels, height, width]; the all-MLP decode head brings every stage to the first
// stage's size (bilinear interpolate) and classifies there. Every reshape takes the stage's height
// and width, so a traced graph takes symbolic image sizes; they start where the spatial
// reductions first have a pixel to reduce (29 for the mit-b0 layout), as eagerly.
// forward(pixel_values [batch, num_channels, H, W]) -> logits [batch, num_labels, h1, w1], the
// first stage's size (H / 4 and W / 4 rounded up for the default strides).
import * as om from 'onemodel';
import { portConfig } from './modeling_utils.mjs';

const nn = om.nn;

/** SegformerConfig's defaults (mit-b0) for the fields this port reads. */
export const SEGFORMER_DEFAULTS = {
  num_channels: 3, num_encoder_blocks: 4, depths: [2, 2, 2, 2], sr_ratios: [8, 4, 2, 1], hidden_sizes: [32, 64, 160, 256],
  patch_sizes: [7, 3, 3, 3], strides: [4, 2, 2, 2], num_attention_heads: [1, 2, 5, 8], mlp_ratios: [4, 4, 4, 4],
  hidden_act: 'gelu', layer_norm_eps: 1e-6, decoder_hidden_size: 256, num_labels: 2, reshape_last_stage: true,
};

export class SegformerOverlapPatchEmbeddings extends nn.Module {
  constructor(patchSize, stride, numChannels, hiddenSize) {
    super();
    this.proj = new nn.Conv2d(numChannels, hiddenSize, patchSize, { stride, padding: Math.floor(patchSize / 2) });
    this.layer_norm = new nn.LayerNorm(hiddenSize);
  }

  /** [embeddings [batch, height * width, hidden], height, width]. */
  forward(pixelValues) {
    const embeddings = this.proj.forward(pixelValues);
    const [, , height, width] = embeddings.shape;
    return [this.layer_norm.forward(embeddings.flatten(2).transpose(1, 2)), height, width];
  }
}

export class SegformerEfficientSelfAttention extends nn.Module {
  constructor(hiddenSize, numAttentionHeads, sequenceReductionRatio) {
    super();
    if (hiddenSize % numAttentionHeads !== 0) {
      throw new Error(`SegformerEfficientSelfAttention: the hidden size (${hiddenSize}) is not a multiple of the number of attention heads (${numAttentionHeads})`);
    }
    this.num_attention_heads = numAttentionHeads;
    this.attention_head_size = hiddenSize / numAttentionHeads;
    this.all_head_size = this.num_attention_heads * this.attention_head_size;
    this.query = new nn.Linear(hiddenSize, this.all_head_size);
    this.key = new nn.Linear(hiddenSize, this.all_head_size);
    this.value = new nn.Linear(hiddenSize, this.all_head_size);
    this.sr_ratio = sequenceReductionRatio;
    if (sequenceReductionRatio > 1) {
      this.sr = new nn.Conv2d(hiddenSize, hiddenSize, sequenceReductionRatio, { stride: sequenceReductionRatio });
      this.layer_norm = new nn.LayerNorm(hiddenSize);
    }
  }

  transposeForScores(hiddenStates) {
    const newShape = [...hiddenStates.shape.slice(0, -1), this.num_attention_heads, this.attention_head_size];
    return hiddenStates.view(newShape).permute(0, 2, 1, 3);
  }

  forward(hiddenStates, height, width) {
    const queryLayer = this.transposeForScores(this.query.forward(hiddenStates));
    let kv = hiddenStates;
    if (this.sr_ratio > 1) {
      const [batchSize, , numChannels] = hiddenStates.shape;
      kv = hiddenStates.permute(0, 2, 1).reshape(batchSize, numChannels, height, width); // to [batch, channels, height, width]
      kv = this.sr.forward(kv); // the sequence reduction
      kv = this.layer_norm.forward(kv.reshape(batchSize, numChannels, -1).permute(0, 2, 1));
    }
    const keyLayer = this.transposeForScores(this.key.forward(kv));
    const valueLayer = this.transposeForScores(this.value.forward(kv));
    const attentionScores = queryLayer.matmul(keyLayer.transpose(-1, -2)).div(Math.sqrt(this.attention_head_size));
    const contextLayer = attentionScores.softmax(-1).matmul(valueLayer).permute(0, 2, 1, 3).contiguous();
    return contextLayer.view([...contextLayer.shape.slice(0, -2), this.all_head_size]);
  }
}

export class SegformerSelfOutput extends nn.Module {
  constructor(hiddenSize) {
    super();
    this.dense = new nn.Linear(hiddenSize, hiddenSize);
  }

  forward(hiddenStates) {
    return this.dense.forward(hiddenStates);
  }
}

export class SegformerAttention extends nn.Module {
  constructor(hiddenSize, numAttentionHeads, sequenceReductionRatio) {
    super();
    this.self = new SegformerEfficientSelfAttention(hiddenSize, numAttentionHeads, sequenceReductionRatio);
    this.output = new SegformerSelfOutput(hiddenSize);
  }

  forward(hiddenStates, height, width) {
    return this.output.forward(this.self.forward(hiddenStates, height, width));
  }
}

export class SegformerDWConv extends nn.Module {
  constructor(dim = 768) {
    super();
    this.dwconv = new nn.Conv2d(dim, dim, 3, { stride: 1, padding: 1, groups: dim });
  }

  forward(hiddenStates, height, width) {
    const [batchSize, , numChannels] = hiddenStates.shape;
    const h = hiddenStates.transpose(1, 2).view(batchSize, numChannels, height, width);
    return this.dwconv.forward(h).flatten(2).transpose(1, 2);
  }
}

export class SegformerMixFFN extends nn.Module {
  constructor(inFeatures, hiddenFeatures) {
    super();
    this.dense1 = new nn.Linear(inFeatures, hiddenFeatures);
    this.dwconv = new SegformerDWConv(hiddenFeatures);
    this.dense2 = new nn.Linear(hiddenFeatures, inFeatures);
  }

  forward(hiddenStates, height, width) {
    const h = this.dwconv.forward(this.dense1.forward(hiddenStates), height, width);
    return this.dense2.forward(nn.functional.gelu(h));
  }
}

export class SegformerLayer extends nn.Module {
  constructor(hiddenSize, numAttentionHeads, sequenceReductionRatio, mlpRatio) {
    super();
    this.layer_norm_1 = new nn.LayerNorm(hiddenSize);
    this.attention = new SegformerAttention(hiddenSize, numAttentionHeads, sequenceReductionRatio);
    this.layer_norm_2 = new nn.LayerNorm(hiddenSize);
    this.mlp = new SegformerMixFFN(hiddenSize, Math.trunc(hiddenSize * mlpRatio));
  }

  forward(hiddenStates, height, width) {
    // in Segformer, layernorm is applied before self-attention (drop_path is the identity in eval mode)
    const h = this.attention.forward(this.layer_norm_1.forward(hiddenStates), height, width).add(hiddenStates);
    return this.mlp.forward(this.layer_norm_2.forward(h), height, width).add(h);
  }
}

export class SegformerEncoder extends nn.Module {
  constructor(config) {
    super();
    const c = config;
    const stages = Array.from({ length: c.num_encoder_blocks }, (_, i) => i);
    this.patch_embeddings = new nn.ModuleList(stages.map((i) => new SegformerOverlapPatchEmbeddings(
      c.patch_sizes[i], c.strides[i], i === 0 ? c.num_channels : c.hidden_sizes[i - 1], c.hidden_sizes[i])));
    this.block = new nn.ModuleList(stages.map((i) => new nn.ModuleList(Array.from({ length: c.depths[i] },
      () => new SegformerLayer(c.hidden_sizes[i], c.num_attention_heads[i], c.sr_ratios[i], c.mlp_ratios[i])))));
    this.layer_norm = new nn.ModuleList(stages.map((i) => new nn.LayerNorm(c.hidden_sizes[i])));
  }

  /** Every stage's output [batch, hidden_sizes[i], h_i, w_i] (output_hidden_states with reshape_last_stage). */
  forward(pixelValues) {
    const allHiddenStates = [];
    const batchSize = pixelValues.shape[0];
    let hiddenStates = pixelValues;
    for (let idx = 0; idx < this.patch_embeddings.length; idx++) {
      let height;
      let width;
      [hiddenStates, height, width] = this.patch_embeddings.at(idx).forward(hiddenStates);
      for (const blk of this.block.at(idx)) hiddenStates = blk.forward(hiddenStates, height, width);
      hiddenStates = this.layer_norm.at(idx).forward(hiddenStates);
      hiddenStates = hiddenStates.reshape(batchSize, height, width, -1).permute(0, 3, 1, 2).contiguous();
      allHiddenStates.push(hiddenStates);
    }
    return allHiddenStates;
  }
}

export class SegformerModel extends nn.Module {
  constructor(config) {
    super();
    this.encoder = new SegformerEncoder(config);
  }

  /** The last stage's output (BaseModelOutput.last_hidden_state). */
  forward(pixelValues) {
    return this.encoder.forward(pixelValues).at(-1);
  }
}

/** Linear Embedding: [batch, channels, h, w] -> [batch, h * w, decoder_hidden_size]. */
export class SegformerMLP extends nn.Module {
  constructor(config, inputDim) {
    super();
    this.proj = new nn.Linear(inputDim, config.decoder_hidden_size);
  }

  forward(hiddenStates) {
    return this.proj.forward(hiddenStates.flatten(2).transpose(1, 2));
  }
}

export class SegformerDecodeHead extends nn.Module {
  constructor(config) {
    super();
    const c = config;
    this.linear_c = new nn.ModuleList(c.hidden_sizes.slice(0, c.num_encoder_blocks).map((dim) => new SegformerMLP(c, dim)));
    this.linear_fuse = new nn.Conv2d(c.decoder_hidden_size * c.num_encoder_blocks, c.decoder_hidden_size, 1, { bias: false });
    this.batch_norm = new nn.BatchNorm2d(c.decoder_hidden_size);
    this.activation = new nn.ReLU();
    this.classifier = new nn.Conv2d(c.decoder_hidden_size, c.num_labels, 1);
  }

  forward(encoderHiddenStates) {
    const batchSize = encoderHiddenStates.at(-1).shape[0];
    const [, , firstHeight, firstWidth] = encoderHiddenStates[0].shape;
    const allHiddenStates = encoderHiddenStates.map((state, i) => {
      const [, , height, width] = state.shape;
      const h = this.linear_c.at(i).forward(state).permute(0, 2, 1).reshape(batchSize, -1, height, width); // unify the channels
      return nn.functional.interpolate(h, { size: [firstHeight, firstWidth], mode: 'bilinear', alignCorners: false }); // upsample
    });
    const h = this.linear_fuse.forward(om.cat(allHiddenStates.reverse(), 1));
    return this.classifier.forward(this.activation.forward(this.batch_norm.forward(h)));
  }
}

export class SegformerForSemanticSegmentation extends nn.Module {
  constructor(config = {}) {
    super();
    const c = portConfig('SegformerForSemanticSegmentation', SEGFORMER_DEFAULTS, config, 'hidden_act', 'gelu');
    if (!c.reshape_last_stage) throw new Error('SegformerForSemanticSegmentation: reshape_last_stage false is not ported');
    this.config = c;
    this.segformer = new SegformerModel(c);
    this.decode_head = new SegformerDecodeHead(c);
  }

  /** Logits [batch, num_labels, h1, w1] at the first stage's size (upstream upsamples them only for the loss). */
  forward(pixelValues) {
    return this.decode_head.forward(this.segformer.encoder.forward(pixelValues));
  }
}
