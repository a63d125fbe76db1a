// Speech2Text's encoder (Hugging Face transformers' Speech2TextEncoder, modeling_speech_to_text.py,
// eager attention) ported to onemodel as a user ports it: the same modules, names and operations,
// so the encoder's part of a checkpoint's state dict (`conv.conv_layers.0.weight`,
// `layers.0.self_attn.q_proj.weight`, ..., `layer_norm.bias`) loads with a strict loadStateDict.
// The front end (Conv1dSubsampler) halves the frames at each stride-2 conv, (T - 1) // 2 + 1 per
// layer, each conv followed by a GLU over the channels. The frames' attention mask is made from the
// input mask's lengths as upstream makes it (a 1 written at each row's last frame into zeros, then
// flip, cumsum, flip), and the positions are M2M100's sinusoidal table read at
// `create_position_ids_from_input_ids(attention_mask.ne(1))`: the kept frames count from
// `pad_token_id + 1`, the padded ones read the padding row (zeros); the table grows in forward as
// M2M100's does, so the frames are unbounded. The layers are M2M100's (MBart's pre-norm ones).
// forward(input_features [batch, frames, input_feat_per_channel * input_channels] float32,
// attention_mask [batch, frames] (1 keep, 0 pad; default all ones)) -> last_hidden_state
// [batch, frames', d_model], frames' the subsampled count.
import * as om from 'onemodel';
import { expandMask, portConfig } from './modeling_utils.mjs';
import { M2M100EncoderLayer, M2M100SinusoidalPositionalEmbedding } from './m2m100.mjs';

const nn = om.nn;

/** Speech2TextConfig's defaults (s2t-small-librispeech-asr's sizes) for the encoder fields this port reads. */
export const SPEECH2TEXT_DEFAULTS = {
  d_model: 256, encoder_layers: 12, encoder_attention_heads: 4, encoder_ffn_dim: 2048, max_source_positions: 6000,
  scale_embedding: true, pad_token_id: 1, num_conv_layers: 2, conv_kernel_sizes: [5, 5], conv_channels: 1024,
  input_feat_per_channel: 80, input_channels: 1, activation_function: 'relu',
};

/** Convolutional subsampler: Conv1d layers of stride 2 along the frames, each followed by a GLU over the channels. */
export class Conv1dSubsampler extends nn.Module {
  constructor(config) {
    super();
    this.num_layers = config.num_conv_layers;
    this.in_channels = config.input_feat_per_channel * config.input_channels;
    this.mid_channels = config.conv_channels;
    this.out_channels = config.d_model;
    this.kernel_sizes = config.conv_kernel_sizes;
    this.conv_layers = new nn.ModuleList(this.kernel_sizes.map((k, i) => new nn.Conv1d(
      i === 0 ? this.in_channels : Math.floor(this.mid_channels / 2),
      i < this.num_layers - 1 ? this.mid_channels : this.out_channels * 2,
      k, { stride: 2, padding: Math.floor(k / 2) })));
  }

  forward(inputFeatures) {
    let hiddenStates = inputFeatures.transpose(1, 2).contiguous(); // -> B x (C x D) x T
    for (const conv of this.conv_layers) hiddenStates = nn.functional.glu(conv.forward(hiddenStates), 1);
    return hiddenStates.transpose(1, 2).contiguous(); // -> B x T x (C x D)
  }
}

export class Speech2TextEncoder extends nn.Module {
  constructor(config = {}) {
    super();
    const c = portConfig('Speech2TextEncoder', SPEECH2TEXT_DEFAULTS, config, 'activation_function', 'relu');
    if (c.conv_kernel_sizes.length !== c.num_conv_layers) {
      throw new Error(`Speech2TextEncoder: conv_kernel_sizes has ${c.conv_kernel_sizes.length} sizes for num_conv_layers ${c.num_conv_layers}`);
    }
    this.config = c;
    this.padding_idx = c.pad_token_id;
    this.embed_scale = c.scale_embedding ? Math.sqrt(c.d_model) : 1.0;
    this.conv = new Conv1dSubsampler(c);
    this.embed_positions = new M2M100SinusoidalPositionalEmbedding(c.max_source_positions, c.d_model, this.padding_idx);
    this.layers = new nn.ModuleList(Array.from({ length: c.encoder_layers }, () => new M2M100EncoderLayer(c)));
    this.layer_norm = new nn.LayerNorm(c.d_model);
  }

  /** The frames each stride-2 conv leaves: (L - 1) // 2 + 1 per layer (numbers or int64 tensors). */
  getFeatExtractOutputLengths(inputLengths) {
    let lengths = inputLengths;
    for (let i = 0; i < this.config.num_conv_layers; i++) {
      lengths = typeof lengths === 'number' ? Math.floor((lengths - 1) / 2) + 1 : lengths.sub(1).floorDivide(2).add(1);
    }
    return lengths;
  }

  /** The frames' mask [bsz, featureVectorLength] (int64): 1 for each row's first subsampled-length frames, 0 after. */
  getFeatureVectorAttentionMask(featureVectorLength, attentionMask) {
    // generate creates a 3D attention mask because of the shape of input_features; take the last feature
    const mask2d = attentionMask.dim() > 2 ? attentionMask.select(2, -1) : attentionMask;
    const subsampledLengths = this.getFeatExtractOutputLengths(mask2d.sum(-1));
    const bsz = mask2d.shape[0];
    const mask = om.zeros([bsz, featureVectorLength], { dtype: mask2d.dtype });
    // these two operations make sure that all values before the output lengths' indices are attended to
    mask.indexPut_([om.arange(0, bsz, { dtype: 'int64' }), subsampledLengths.sub(1)], 1); // attention_mask[(arange(bsz), lengths - 1)] = 1
    return mask.flip(-1).cumsum(-1).flip(-1).long();
  }

  forward(inputFeatures, attentionMask = null) {
    const inputsEmbeds = this.conv.forward(inputFeatures).mul(this.embed_scale);
    const [bsz, frames] = inputsEmbeds.shape;
    let mask = null;
    let paddingMask;
    if (attentionMask !== null) {
      mask = this.getFeatureVectorAttentionMask(frames, attentionMask);
      paddingMask = mask.ne(1).long();
    } else {
      paddingMask = om.zeros([bsz, frames], { dtype: 'int64' });
    }
    const embedPos = this.embed_positions.forward(paddingMask);
    let hiddenStates = inputsEmbeds.add(embedPos);
    const expanded = mask === null ? null : expandMask(mask);
    for (const layer of this.layers) hiddenStates = layer.forward(hiddenStates, expanded);
    return this.layer_norm.forward(hiddenStates);
  }
}
