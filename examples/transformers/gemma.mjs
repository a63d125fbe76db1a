// Gemma (Hugging Face transformers' GemmaForCausalLM, modeling_gemma.py, eager attention) ported to
// onemodel as a user ports it: the same modules, names and operations, so a checkpoint's state dict
// (`model.embed_tokens.weight`, `model.layers.0.self_attn.q_proj.weight`, ..., `model.norm.weight`;
// `lm_head.weight` tied to the embedding) loads with a strict loadStateDict; each attention's
// `rotary_emb.inv_freq` is a non-persistent buffer, as upstream. What sets it apart from LLaMA: the
// embeddings are scaled by sqrt(hidden_size), the RMS norm multiplies by (1 + weight), the MLP is
// GeGLU with the tanh gelu, and head_dim is its own config field (num_heads * head_dim need not be
// hidden_size). Inference without a key-value cache. forward(input_ids [batch, seq] int64,
// attention_mask [batch, seq] (1 keep, 0 pad; default all ones)) -> logits [batch, seq, vocab_size].
import * as om from 'onemodel';
import { FLOAT32_MIN, portConfig } from './modeling_utils.mjs';
import { LlamaRotaryEmbedding, applyRotaryPosEmb, repeatKv } from './llama.mjs';

const nn = om.nn;

/** GemmaConfig's defaults (Gemma 7B) for the fields this port reads. */
export const GEMMA_DEFAULTS = {
  vocab_size: 256000, hidden_size: 3072, intermediate_size: 24576, num_hidden_layers: 28, num_attention_heads: 16,
  num_key_value_heads: 16, head_dim: 256, hidden_activation: 'gelu_pytorch_tanh', rms_norm_eps: 1e-6,
  rope_theta: 10000.0, attention_bias: false, pad_token_id: 0, tie_word_embeddings: true,
};

/** x / rms(x) * (1 + weight); the weight is stored as the offset from 1 (zeros at init). */
export class GemmaRMSNorm extends nn.Module {
  constructor(dim, eps = 1e-6) {
    super();
    this.eps = eps;
    this.weight = om.zeros([dim]);
    this.weight.requiresGrad = true;
  }

  norm(x) {
    return x.mul(x.pow(2).mean(-1, true).add(this.eps).rsqrt());
  }

  forward(x) {
    const output = this.norm(x.float());
    return output.mul(this.weight.float().add(1)); // output * (1.0 + self.weight.float())
  }
}

/** LLaMA's rotary embedding, of config.head_dim channels (Gemma's head_dim is its own field). */
export class GemmaRotaryEmbedding extends LlamaRotaryEmbedding {}

export class GemmaMLP extends nn.Module {
  constructor(config) {
    super();
    this.gate_proj = new nn.Linear(config.hidden_size, config.intermediate_size, { bias: false });
    this.up_proj = new nn.Linear(config.hidden_size, config.intermediate_size, { bias: false });
    this.down_proj = new nn.Linear(config.intermediate_size, config.hidden_size, { bias: false });
  }

  forward(x) {
    const act = nn.functional.gelu(this.gate_proj.forward(x), { approximate: 'tanh' }); // ACT2FN['gelu_pytorch_tanh']
    return this.down_proj.forward(act.mul(this.up_proj.forward(x)));
  }
}

export class GemmaAttention extends nn.Module {
  constructor(config) {
    super();
    this.num_heads = config.num_attention_heads;
    this.head_dim = config.head_dim;
    this.num_key_value_heads = config.num_key_value_heads;
    this.num_key_value_groups = this.num_heads / this.num_key_value_heads;
    const bias = config.attention_bias;
    this.q_proj = new nn.Linear(config.hidden_size, this.num_heads * this.head_dim, { bias });
    this.k_proj = new nn.Linear(config.hidden_size, this.num_key_value_heads * this.head_dim, { bias });
    this.v_proj = new nn.Linear(config.hidden_size, this.num_key_value_heads * this.head_dim, { bias });
    this.o_proj = new nn.Linear(this.num_heads * this.head_dim, config.hidden_size, { bias });
    this.rotary_emb = new GemmaRotaryEmbedding(config);
  }

  forward(hiddenStates, attentionMask, positionIds) {
    const [bsz, qLen] = hiddenStates.shape;
    const heads = (proj, n) => proj.forward(hiddenStates).view(bsz, qLen, n, this.head_dim).transpose(1, 2);
    const valueStates0 = heads(this.v_proj, this.num_key_value_heads);
    const [cos, sin] = this.rotary_emb.forward(valueStates0, positionIds);
    let [queryStates, keyStates] = applyRotaryPosEmb(heads(this.q_proj, this.num_heads), heads(this.k_proj, this.num_key_value_heads), cos, sin);
    keyStates = repeatKv(keyStates, this.num_key_value_groups);
    const valueStates = repeatKv(valueStates0, this.num_key_value_groups);
    let attnWeights = queryStates.matmul(keyStates.transpose(2, 3)).div(Math.sqrt(this.head_dim));
    attnWeights = attnWeights.add(attentionMask.slice(3, 0, keyStates.shape[2])).softmax(-1);
    const attnOutput = attnWeights.matmul(valueStates).transpose(1, 2).contiguous();
    return this.o_proj.forward(attnOutput.view(bsz, qLen, -1));
  }
}

export class GemmaDecoderLayer extends nn.Module {
  constructor(config) {
    super();
    this.self_attn = new GemmaAttention(config);
    this.mlp = new GemmaMLP(config);
    this.input_layernorm = new GemmaRMSNorm(config.hidden_size, config.rms_norm_eps);
    this.post_attention_layernorm = new GemmaRMSNorm(config.hidden_size, config.rms_norm_eps);
  }

  forward(hiddenStates, attentionMask, positionIds) {
    const h = hiddenStates.add(this.self_attn.forward(this.input_layernorm.forward(hiddenStates), attentionMask, positionIds));
    return h.add(this.mlp.forward(this.post_attention_layernorm.forward(h)));
  }
}

export class GemmaModel extends nn.Module {
  constructor(config) {
    super();
    this.hidden_size = config.hidden_size;
    this.embed_tokens = new nn.Embedding(config.vocab_size, config.hidden_size, { paddingIdx: config.pad_token_id });
    this.layers = new nn.ModuleList(Array.from({ length: config.num_hidden_layers }, () => new GemmaDecoderLayer(config)));
    this.norm = new GemmaRMSNorm(config.hidden_size, config.rms_norm_eps);
  }

  /**
   * _update_causal_mask (eager, no cache) of a padding mask [batch, seq]: [batch, 1, seq, seq],
   * finfo.min above the diagonal and at padded keys, the padding written in by slice assignment.
   */
  updateCausalMask(attentionMask, inputTensor, cachePosition) {
    const sequenceLength = inputTensor.shape[1];
    const targetLength = attentionMask.shape[attentionMask.shape.length - 1];
    let causalMask = om.full([sequenceLength, targetLength], FLOAT32_MIN);
    // Upstream skips the triu at length 1 (`if sequence_length != 1`), where the mask
    // multiplication below zeroes the one element anyway; onemodel's tracer refuses a branch on a
    // symbolic length (SymbolicShape), so the port makes the triu at every length, as llama.mjs.
    causalMask = causalMask.triu(1);
    causalMask.mul_(om.arange(0, targetLength, { dtype: 'int64' }).gt(cachePosition.reshape(-1, 1)));
    causalMask = causalMask.unsqueeze(0).unsqueeze(0).expand(inputTensor.shape[0], 1, -1, -1);
    causalMask = causalMask.clone(); // copy to contiguous memory for in-place edit
    const maskLength = attentionMask.shape[attentionMask.shape.length - 1];
    const paddingMask = causalMask.slice(3, 0, maskLength).eq(0.0).mul(attentionMask.unsqueeze(1).unsqueeze(2).eq(0.0));
    // causal_mask[..., :mask_length] = causal_mask[..., :mask_length].masked_fill(padding_mask, min_dtype)
    causalMask.slice(3, 0, maskLength).copy_(causalMask.slice(3, 0, maskLength).maskedFill(paddingMask, FLOAT32_MIN));
    return causalMask;
  }

  forward(inputIds, attentionMask = null) {
    const inputsEmbeds = this.embed_tokens.forward(inputIds);
    const cachePosition = om.arange(0, inputsEmbeds.shape[1], { dtype: 'int64' });
    const positionIds = cachePosition.unsqueeze(0);
    const mask = attentionMask ?? om.ones(inputIds.shape, { dtype: 'int64' });
    const causalMask = this.updateCausalMask(mask, inputsEmbeds, cachePosition);
    // normalized: the embeddings scaled by sqrt(hidden_size), rounded to the hidden states' dtype
    const normalizer = om.tensor(this.hidden_size ** 0.5);
    let h = inputsEmbeds.mul(normalizer);
    for (const layer of this.layers) h = layer.forward(h, causalMask, positionIds);
    return this.norm.forward(h);
  }
}

export class GemmaForCausalLM extends nn.Module {
  constructor(config = {}) {
    super();
    const c = portConfig('GemmaForCausalLM', GEMMA_DEFAULTS, config, 'hidden_activation', 'gelu_pytorch_tanh');
    this.config = c;
    this.model = new GemmaModel(c);
    this.lm_head = new nn.Linear(c.hidden_size, c.vocab_size, { bias: false });
    if (c.tie_word_embeddings) {
      this.lm_head.weight.dispose();
      this.lm_head.weight = this.model.embed_tokens.weight;
    }
  }

  forward(inputIds, attentionMask = null) {
    return this.lm_head.forward(this.model.forward(inputIds, attentionMask));
  }
}
