// The Whisper encoder and decoder (Hugging Face transformers' WhisperEncoder and WhisperDecoder,
// modeling_whisper.py; the decoder below the encoder) ported to onemodel as a user ports them:
// the same modules, names and operations, so the encoder's part of a checkpoint (`conv1.weight`,
// `embed_positions.weight`, `layers.0.self_attn.k_proj.weight`, ..., `layer_norm.bias`; a
// WhisperModel's keys under `encoder.`) loads with a strict loadStateDict.
// The positions are sinusoids (made here as upstream's init makes them, and stored in the state
// dict). forward(input_features [batch, num_mel_bins, frames]) -> [batch, ceil(frames / 2), d_model].
//
// One change from upstream: upstream requires exactly 2 * max_source_positions frames (a
// ValueError otherwise) and adds the whole position table; this port adds the table's first
// ceil(frames / 2) rows, so it runs on any length up to that (a shorter clip needs no padding to
// 30 s) and a traced graph takes the length as a symbolic axis.
import * as om from 'onemodel';
import { makeCausalMask, portConfig } from './modeling_utils.mjs';

const nn = om.nn;

/** WhisperConfig's defaults (whisper-tiny) for the fields this port reads. */
export const WHISPER_DEFAULTS = {
  num_mel_bins: 80, d_model: 384, encoder_layers: 4, encoder_attention_heads: 6, encoder_ffn_dim: 1536,
  max_source_positions: 1500, activation_function: 'gelu',
  vocab_size: 51865, decoder_layers: 4, decoder_attention_heads: 6, decoder_ffn_dim: 1536, max_target_positions: 448,
  pad_token_id: 50257,
};

/** Whisper's sinusoidal positions [length, channels]: sin of each position's angles, then cos. */
export function sinusoids(length, channels, maxTimescale = 10000) {
  const logTimescaleIncrement = Math.log(maxTimescale) / (channels / 2 - 1);
  const invTimescales = om.arange(0, channels / 2, { dtype: 'int64' }).mul(-logTimescaleIncrement).exp();
  const scaledTime = om.arange(0, length, { dtype: 'int64' }).view(-1, 1).mul(invTimescales.view(1, -1));
  return om.cat([scaledTime.sin(), scaledTime.cos()], 1);
}

export class WhisperAttention extends nn.Module {
  constructor(config, numHeads = config.encoder_attention_heads) {
    super();
    this.embed_dim = config.d_model;
    this.num_heads = numHeads;
    this.head_dim = this.embed_dim / this.num_heads;
    this.scaling = this.head_dim ** -0.5;
    this.k_proj = new nn.Linear(this.embed_dim, this.embed_dim, { bias: false });
    this.v_proj = new nn.Linear(this.embed_dim, this.embed_dim);
    this.q_proj = new nn.Linear(this.embed_dim, this.embed_dim);
    this.out_proj = new nn.Linear(this.embed_dim, this.embed_dim);
  }

  shape(tensor, seqLen, bsz) {
    return tensor.view(bsz, seqLen, this.num_heads, this.head_dim).transpose(1, 2).contiguous();
  }

  /** Self-attention, or cross-attention over keyValueStates [batch, srcLen, embed_dim] (the decoder's); attentionMask added to the scores. */
  forward(hiddenStates, keyValueStates = null, attentionMask = null) {
    const [bsz, tgtLen] = hiddenStates.shape;
    const kv = keyValueStates ?? hiddenStates;
    const projShape = [bsz * this.num_heads, -1, this.head_dim];
    const queryStates = this.shape(this.q_proj.forward(hiddenStates).mul(this.scaling), tgtLen, bsz).view(projShape);
    const keyStates = this.shape(this.k_proj.forward(kv), -1, bsz).reshape(projShape);
    const valueStates = this.shape(this.v_proj.forward(kv), -1, bsz).reshape(projShape);
    const srcLen = keyStates.shape[1];
    let attnWeights = queryStates.matmul(keyStates.transpose(1, 2)); // torch.bmm
    if (attentionMask !== null) {
      attnWeights = attnWeights.view(bsz, this.num_heads, tgtLen, srcLen).add(attentionMask).view(bsz * this.num_heads, tgtLen, srcLen);
    }
    const attnOutput = attnWeights.softmax(-1).matmul(valueStates).view(bsz, this.num_heads, tgtLen, this.head_dim).transpose(1, 2);
    return this.out_proj.forward(attnOutput.reshape(bsz, tgtLen, this.embed_dim));
  }
}

export class WhisperEncoderLayer extends nn.Module {
  constructor(config) {
    super();
    const d = config.d_model;
    this.self_attn = new WhisperAttention(config);
    this.self_attn_layer_norm = new nn.LayerNorm(d);
    this.fc1 = new nn.Linear(d, config.encoder_ffn_dim);
    this.fc2 = new nn.Linear(config.encoder_ffn_dim, d);
    this.final_layer_norm = new nn.LayerNorm(d);
  }

  forward(hiddenStates) {
    const h = hiddenStates.add(this.self_attn.forward(this.self_attn_layer_norm.forward(hiddenStates)));
    return h.add(this.fc2.forward(nn.functional.gelu(this.fc1.forward(this.final_layer_norm.forward(h)))));
  }
}

export class WhisperEncoder extends nn.Module {
  constructor(config = {}) {
    super();
    const c = portConfig('WhisperEncoder', WHISPER_DEFAULTS, config, 'activation_function', 'gelu');
    this.config = c;
    const d = c.d_model;
    this.conv1 = new nn.Conv1d(c.num_mel_bins, d, 3, { padding: 1 });
    this.conv2 = new nn.Conv1d(d, d, 3, { stride: 2, padding: 1 });
    this.embed_positions = new nn.Embedding(c.max_source_positions, d);
    this.embed_positions.weight.dispose();
    // frozen (no requiresGrad); om.tidy frees the temporaries (a constructor is no forward scope)
    this.embed_positions.weight = om.tidy(() => sinusoids(c.max_source_positions, d));
    this.layers = new nn.ModuleList(Array.from({ length: c.encoder_layers }, () => new WhisperEncoderLayer(c)));
    this.layer_norm = new nn.LayerNorm(d);
  }

  forward(inputFeatures) {
    let inputsEmbeds = nn.functional.gelu(this.conv1.forward(inputFeatures));
    inputsEmbeds = nn.functional.gelu(this.conv2.forward(inputsEmbeds)).permute(0, 2, 1);
    const embedPos = this.embed_positions.weight.slice(0, 0, inputsEmbeds.shape[1]); // upstream: the whole table
    let h = inputsEmbeds.add(embedPos);
    for (const layer of this.layers) h = layer.forward(h);
    return this.layer_norm.forward(h);
  }
}

export class WhisperDecoderLayer extends nn.Module {
  constructor(config) {
    super();
    const d = config.d_model;
    this.self_attn = new WhisperAttention(config, config.decoder_attention_heads);
    this.self_attn_layer_norm = new nn.LayerNorm(d);
    this.encoder_attn = new WhisperAttention(config, config.decoder_attention_heads);
    this.encoder_attn_layer_norm = new nn.LayerNorm(d);
    this.fc1 = new nn.Linear(d, config.decoder_ffn_dim);
    this.fc2 = new nn.Linear(config.decoder_ffn_dim, d);
    this.final_layer_norm = new nn.LayerNorm(d);
  }

  forward(hiddenStates, attentionMask, encoderHiddenStates) {
    let h = hiddenStates.add(this.self_attn.forward(this.self_attn_layer_norm.forward(hiddenStates), null, attentionMask));
    h = h.add(this.encoder_attn.forward(this.encoder_attn_layer_norm.forward(h), encoderHiddenStates));
    return h.add(this.fc2.forward(nn.functional.gelu(this.fc1.forward(this.final_layer_norm.forward(h)))));
  }
}

/**
 * The Whisper decoder (WhisperDecoder, no key-value cache): forward(input_ids [batch, decLen] int64,
 * encoder_hidden_states [batch, encLen, d_model]) -> last_hidden_state [batch, decLen, d_model].
 * Its keys are a WhisperModel's under `decoder.` (`embed_tokens.weight`, `embed_positions.weight`,
 * `layers.0.encoder_attn.k_proj.weight`, ...).
 */
export class WhisperDecoder extends nn.Module {
  constructor(config = {}) {
    super();
    const c = portConfig('WhisperDecoder', WHISPER_DEFAULTS, config, 'activation_function', 'gelu');
    this.config = c;
    const d = c.d_model;
    this.embed_tokens = new nn.Embedding(c.vocab_size, d, { paddingIdx: c.pad_token_id });
    this.embed_positions = new nn.Embedding(c.max_target_positions, d); // WhisperPositionalEmbedding
    this.layers = new nn.ModuleList(Array.from({ length: c.decoder_layers }, () => new WhisperDecoderLayer(c)));
    this.layer_norm = new nn.LayerNorm(d);
  }

  forward(inputIds, encoderHiddenStates) {
    const inputShape = inputIds.shape;
    const ids = inputIds.view(-1, inputShape[inputShape.length - 1]);
    const inputsEmbeds = this.embed_tokens.forward(ids);
    // _prepare_4d_causal_attention_mask(None, ...): upstream makes no mask at length 1 (it would
    // mask nothing there); onemodel's tracer refuses a branch on a symbolic length, so it is made always
    const attentionMask = makeCausalMask([inputShape[0], inputShape[inputShape.length - 1]]);
    // WhisperPositionalEmbedding.forward(input_ids, past_key_values_length = 0): the table's first rows
    const positions = this.embed_positions.weight.slice(0, 0, ids.shape[1]);
    let h = inputsEmbeds.add(positions);
    for (const layer of this.layers) h = layer.forward(h, attentionMask, encoderHiddenStates);
    return this.layer_norm.forward(h);
  }
}
