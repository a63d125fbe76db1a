// Wav2Vec2 (Hugging Face transformers' Wav2Vec2Model, modeling_wav2vec2.py, eval mode) ported to
// onemodel as a user ports it: the same modules, names and operations, so a checkpoint's state
// dict (`feature_extractor.conv_layers.0.conv.weight`, `feature_projection.projection.weight`,
// `encoder.pos_conv_embed.conv.weight_g` / `weight_v` (the weight-normed conv, as
// nn.utils.weight_norm stores it), `encoder.layers.0.attention.q_proj.weight`, ...,
// `masked_spec_embed`) loads with a strict loadStateDict. The feature encoder's strided Conv1d
// layers take any audio length from the least their kernels need (a graph's `samples` axis starts
// there, where the eager model fails too); the positional conv embedding is a grouped Conv1d
// padded by kernel // 2 that drops its last frame when the kernel is even (Wav2Vec2SamePadLayer).
// Inference without a padding mask or SpecAugment (masked_spec_embed is loaded and unused).
// forward(input_values [batch, samples] float32) -> [last_hidden_state [batch, frames, hidden_size],
// extract_features [batch, frames, conv_dim[-1]]].
import * as om from 'onemodel';
import { portConfig } from './modeling_utils.mjs';
import { WhisperAttention } from './whisper.mjs';

const nn = om.nn;

/** Wav2Vec2Config's defaults (wav2vec2-base) for the fields this port reads. */
export const WAV2VEC2_DEFAULTS = {
  hidden_size: 768, num_hidden_layers: 12, num_attention_heads: 12, intermediate_size: 3072, hidden_act: 'gelu',
  feat_extract_activation: 'gelu', feat_extract_norm: 'group', layer_norm_eps: 1e-5,
  conv_dim: [512, 512, 512, 512, 512, 512, 512], conv_stride: [5, 2, 2, 2, 2, 2, 2], conv_kernel: [10, 3, 3, 3, 3, 2, 2],
  conv_bias: false, num_conv_pos_embeddings: 128, num_conv_pos_embedding_groups: 16, do_stable_layer_norm: false,
  mask_time_prob: 0.05, mask_feature_prob: 0.0,
};

/**
 * One layer of the feature encoder: Wav2Vec2NoLayerNormConvLayer (norm null),
 * Wav2Vec2GroupNormConvLayer ('group': a GroupNorm of one channel per group) or
 * Wav2Vec2LayerNormConvLayer ('layer': a LayerNorm over each frame's channels).
 */
export class Wav2Vec2ConvLayer extends nn.Module {
  constructor(config, layerId, norm) {
    super();
    const inConvDim = layerId > 0 ? config.conv_dim[layerId - 1] : 1;
    const outConvDim = config.conv_dim[layerId];
    this.conv = new nn.Conv1d(inConvDim, outConvDim, config.conv_kernel[layerId], { stride: config.conv_stride[layerId], bias: config.conv_bias });
    this.norm = norm;
    if (norm === 'group') this.layer_norm = new nn.GroupNorm(outConvDim, outConvDim, { affine: true });
    else if (norm === 'layer') this.layer_norm = new nn.LayerNorm(outConvDim);
  }

  forward(hiddenStates) {
    let h = this.conv.forward(hiddenStates);
    if (this.norm === 'group') h = this.layer_norm.forward(h);
    else if (this.norm === 'layer') h = this.layer_norm.forward(h.transpose(-2, -1)).transpose(-2, -1);
    return nn.functional.gelu(h);
  }
}

export class Wav2Vec2FeatureEncoder extends nn.Module {
  constructor(config) {
    super();
    const n = config.conv_dim.length;
    let layers;
    if (config.feat_extract_norm === 'group') {
      layers = [new Wav2Vec2ConvLayer(config, 0, 'group'), ...Array.from({ length: n - 1 }, (_, i) => new Wav2Vec2ConvLayer(config, i + 1, null))];
    } else if (config.feat_extract_norm === 'layer') {
      layers = Array.from({ length: n }, (_, i) => new Wav2Vec2ConvLayer(config, i, 'layer'));
    } else {
      throw new Error(`Wav2Vec2FeatureEncoder: feat_extract_norm is ${JSON.stringify(config.feat_extract_norm)}, but has to be one of ['group', 'layer']`);
    }
    this.conv_layers = new nn.ModuleList(layers);
  }

  forward(inputValues) {
    let h = inputValues.unsqueeze(1); // input_values[:, None]
    for (const convLayer of this.conv_layers) h = convLayer.forward(h);
    return h;
  }
}

export class Wav2Vec2FeatureProjection extends nn.Module {
  constructor(config) {
    super();
    const convOut = config.conv_dim[config.conv_dim.length - 1];
    this.layer_norm = new nn.LayerNorm(convOut, { eps: config.layer_norm_eps });
    this.projection = new nn.Linear(convOut, config.hidden_size);
  }

  /** [projected, normed]: the normed features are the model's extract_features. */
  forward(hiddenStates) {
    const normHiddenStates = this.layer_norm.forward(hiddenStates);
    return [this.projection.forward(normHiddenStates), normHiddenStates];
  }
}

/**
 * nn.utils.weight_norm(nn.Conv1d(...), name='weight', dim=2) as its state dict holds it: bias,
 * weight_g [1, 1, k] and weight_v [out, in / groups, k]; the conv's weight is
 * weight_v * weight_g / ||weight_v|| (the norm over all but the kernel axis), made in forward.
 */
export class WeightNormConv1d extends nn.Module {
  constructor(inChannels, outChannels, kernelSize, { padding = 0, groups = 1 } = {}) {
    super();
    const conv = new nn.Conv1d(inChannels, outChannels, kernelSize, { padding, groups });
    this.options = { padding, groups };
    this.bias = conv.bias;
    this.weight_g = om.tidy(() => conv.weight.detach().norm(2, [0, 1], true));
    this.weight_g.requiresGrad = true;
    this.weight_v = conv.weight;
  }

  forward(x) {
    const weight = this.weight_v.mul(this.weight_g.div(this.weight_v.norm(2, [0, 1], true))); // torch._weight_norm(v, g, 2)
    return nn.functional.conv1d(x, weight, this.bias, this.options);
  }
}

export class Wav2Vec2PositionalConvEmbedding extends nn.Module {
  constructor(config) {
    super();
    const k = config.num_conv_pos_embeddings;
    this.conv = new WeightNormConv1d(config.hidden_size, config.hidden_size, k, { padding: Math.floor(k / 2), groups: config.num_conv_pos_embedding_groups });
    this.num_pad_remove = k % 2 === 0 ? 1 : 0; // Wav2Vec2SamePadLayer
  }

  forward(hiddenStates) {
    let h = this.conv.forward(hiddenStates.transpose(1, 2));
    if (this.num_pad_remove > 0) h = h.slice(2, 0, -this.num_pad_remove); // hidden_states[:, :, :-num_pad_remove]
    return nn.functional.gelu(h).transpose(1, 2);
  }
}

/**
 * BartAttention as Wav2Vec2's encoder uses it (self-attention without a mask or cache): Whisper's
 * (upstream copies both from BART), with a bias on k_proj, which Whisper's drops.
 */
export class Wav2Vec2Attention extends WhisperAttention {
  constructor(embedDim, numHeads) {
    super({ d_model: embedDim }, numHeads);
    this.k_proj.dispose();
    this.k_proj = new nn.Linear(embedDim, embedDim);
  }
}

export class Wav2Vec2FeedForward extends nn.Module {
  constructor(config) {
    super();
    this.intermediate_dense = new nn.Linear(config.hidden_size, config.intermediate_size);
    this.output_dense = new nn.Linear(config.intermediate_size, config.hidden_size);
  }

  forward(hiddenStates) {
    return this.output_dense.forward(nn.functional.gelu(this.intermediate_dense.forward(hiddenStates)));
  }
}

/** The post-norm layer (do_stable_layer_norm false). */
export class Wav2Vec2EncoderLayer extends nn.Module {
  constructor(config) {
    super();
    this.attention = new Wav2Vec2Attention(config.hidden_size, config.num_attention_heads);
    this.layer_norm = new nn.LayerNorm(config.hidden_size, { eps: config.layer_norm_eps });
    this.feed_forward = new Wav2Vec2FeedForward(config);
    this.final_layer_norm = new nn.LayerNorm(config.hidden_size, { eps: config.layer_norm_eps });
  }

  forward(hiddenStates) {
    const h = this.layer_norm.forward(hiddenStates.add(this.attention.forward(hiddenStates)));
    return this.final_layer_norm.forward(h.add(this.feed_forward.forward(h)));
  }
}

export class Wav2Vec2Encoder extends nn.Module {
  constructor(config) {
    super();
    this.pos_conv_embed = new Wav2Vec2PositionalConvEmbedding(config);
    this.layer_norm = new nn.LayerNorm(config.hidden_size, { eps: config.layer_norm_eps });
    this.layers = new nn.ModuleList(Array.from({ length: config.num_hidden_layers }, () => new Wav2Vec2EncoderLayer(config)));
  }

  forward(hiddenStates) {
    let h = this.layer_norm.forward(hiddenStates.add(this.pos_conv_embed.forward(hiddenStates)));
    for (const layer of this.layers) h = layer.forward(h);
    return h;
  }
}

export class Wav2Vec2Model extends nn.Module {
  constructor(config = {}) {
    super();
    const c = portConfig('Wav2Vec2Model', WAV2VEC2_DEFAULTS, config, 'hidden_act', 'gelu');
    if (c.feat_extract_activation !== 'gelu') throw new Error(`Wav2Vec2Model: feat_extract_activation ${JSON.stringify(c.feat_extract_activation)} is not ported (only gelu)`);
    if (c.do_stable_layer_norm) throw new Error('Wav2Vec2Model: do_stable_layer_norm (the pre-norm encoder) is not ported');
    this.config = c;
    this.feature_extractor = new Wav2Vec2FeatureEncoder(c);
    this.feature_projection = new Wav2Vec2FeatureProjection(c);
    if (c.mask_time_prob > 0 || c.mask_feature_prob > 0) {
      this.masked_spec_embed = om.rand([c.hidden_size]);
      this.masked_spec_embed.requiresGrad = true;
    }
    this.encoder = new Wav2Vec2Encoder(c);
  }

  forward(inputValues) {
    const extractFeatures = this.feature_extractor.forward(inputValues).transpose(1, 2);
    const [hiddenStates, normed] = this.feature_projection.forward(extractFeatures);
    return [this.encoder.forward(hiddenStates), normed];
  }
}
