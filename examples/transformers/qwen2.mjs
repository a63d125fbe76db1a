// Qwen2 (Hugging Face transformers' Qwen2ForCausalLM, modeling_qwen2.py / modular_qwen2.py, eager
// attention) ported to onemodel as a user ports it. Upstream's modular file writes Qwen2 as LLaMA's
// decoder layers whose attention has biases on q_proj, k_proj and v_proj (not o_proj) and Mistral's
// model (its causal mask, with the sliding-window branch); so do these: the MLP, RMS norm, rotary
// embedding and repeat_kv are llama.mjs's, the mask is mistral.mjs's. The state dict's keys are a
// Qwen2 checkpoint's (`model.embed_tokens.weight`, `model.layers.0.self_attn.q_proj.bias`, ...,
// `lm_head.weight`, tied to the embedding when the config says so, as Qwen2-0.5B's does), and
// `model.rotary_emb.inv_freq` is a non-persistent buffer. Inference without a key-value cache.
// forward(input_ids [batch, seq] int64, attention_mask [batch, seq] (1 keep, 0 pad; default all
// ones)) -> logits [batch, seq, vocab_size].
import * as om from 'onemodel';
import { LLAMA_DEFAULTS, LlamaDecoderLayer, LlamaForCausalLM, applyRotaryPosEmb, repeatKv } from './llama.mjs';
import { MistralModel } from './mistral.mjs';

const nn = om.nn;

/** Qwen2Config's defaults (Qwen2-7B-beta) for the fields this port reads. */
export const QWEN2_DEFAULTS = {
  ...LLAMA_DEFAULTS, vocab_size: 151936, intermediate_size: 22016, num_key_value_heads: 32, max_position_embeddings: 32768,
  use_sliding_window: false, sliding_window: 4096, max_window_layers: 28,
};

/**
 * eager_attention_forward (no dropout in eval): query [b, heads, s, d], key and value [b, kvHeads,
 * s, d] (repeated to the heads), the additive mask cut to the keys' length; returns [the output
 * [b, s, heads, d], the weights].
 */
export function eagerAttentionForward(module, query, key, value, attentionMask, scaling) {
  const keyStates = repeatKv(key, module.num_key_value_groups);
  const valueStates = repeatKv(value, module.num_key_value_groups);
  let attnWeights = query.matmul(keyStates.transpose(2, 3)).mul(scaling);
  if (attentionMask !== null) attnWeights = attnWeights.add(attentionMask.slice(3, 0, keyStates.shape[2]));
  attnWeights = attnWeights.softmax(-1);
  const attnOutput = attnWeights.matmul(valueStates).transpose(1, 2).contiguous();
  return [attnOutput, attnWeights];
}

export class Qwen2Attention extends nn.Module {
  constructor(config, layerIdx) {
    super();
    this.layer_idx = layerIdx;
    this.head_dim = config.head_dim ?? config.hidden_size / config.num_attention_heads;
    this.num_key_value_groups = config.num_attention_heads / config.num_key_value_heads;
    this.scaling = this.head_dim ** -0.5;
    this.q_proj = new nn.Linear(config.hidden_size, config.num_attention_heads * this.head_dim, { bias: true });
    this.k_proj = new nn.Linear(config.hidden_size, config.num_key_value_heads * this.head_dim, { bias: true });
    this.v_proj = new nn.Linear(config.hidden_size, config.num_key_value_heads * this.head_dim, { bias: true });
    this.o_proj = new nn.Linear(config.num_attention_heads * this.head_dim, config.hidden_size, { bias: false });
  }

  forward(hiddenStates, attentionMask, [cos, sin]) {
    const inputShape = hiddenStates.shape.slice(0, -1);
    const hiddenShape = [...inputShape, -1, this.head_dim];
    const queryStates = this.q_proj.forward(hiddenStates).view(hiddenShape).transpose(1, 2);
    const keyStates = this.k_proj.forward(hiddenStates).view(hiddenShape).transpose(1, 2);
    const valueStates = this.v_proj.forward(hiddenStates).view(hiddenShape).transpose(1, 2);
    const [q, k] = applyRotaryPosEmb(queryStates, keyStates, cos, sin);
    // upstream also picks the layer's sliding_window here (use_sliding_window and layer_idx >=
    // max_window_layers), read only by flash attention; the eager path masks with the model's mask
    const [attnOutput] = eagerAttentionForward(this, q, k, valueStates, attentionMask, this.scaling);
    return this.o_proj.forward(attnOutput.reshape([...inputShape, -1]).contiguous());
  }
}

/** LLaMA's decoder layer with Qwen2's attention. */
export class Qwen2DecoderLayer extends LlamaDecoderLayer {
  static Attention = Qwen2Attention;
}

/** Mistral's model (the causal mask with its sliding-window branch) of Qwen2's layers. */
export class Qwen2Model extends MistralModel {
  static Layer = Qwen2DecoderLayer;

  constructor(config) {
    super(config);
    // Qwen2Config: sliding_window = sliding_window if use_sliding_window else None (checkpoints
    // name a window they were not trained with, e.g. Qwen2-0.5B's 131072 with use_sliding_window false)
    this.sliding_window = config.use_sliding_window ? config.sliding_window : null;
  }
}

/** LlamaForCausalLM with Qwen2's defaults and model (lm_head tied to the embedding per tie_word_embeddings). */
export class Qwen2ForCausalLM extends LlamaForCausalLM {
  static defaults = QWEN2_DEFAULTS;
  static Model = Qwen2Model;
}
