// LLaMA (Hugging Face transformers' LlamaForCausalLM, modeling_llama.py, eager attention) ported to
// onemodel as a user ports it: the same modules, names and operations, so a checkpoint's state dict
// (`model.embed_tokens.weight`, `model.layers.0.self_attn.q_proj.weight`, ..., `lm_head.weight`)
// loads with a strict loadStateDict; `model.rotary_emb.inv_freq` is a non-persistent buffer, as
// upstream. The rotary embedding is computed from the positions (cos and sin of inv_freq x
// position) at every length, not read from a table, so a traced graph holds no maximum length.
// Inference without a key-value cache. input_ids [batch, seq] (int64) -> logits [batch, seq, vocab_size].
import * as om from 'onemodel';
import { FLOAT32_MIN, RMSNorm, portConfig } from './modeling_utils.mjs';

const nn = om.nn;

/** LlamaConfig's defaults (Llama 2 7B) for the fields this port reads. */
export const LLAMA_DEFAULTS = {
  vocab_size: 32000, hidden_size: 4096, intermediate_size: 11008, num_hidden_layers: 32, num_attention_heads: 32,
  num_key_value_heads: null, hidden_act: 'silu', rms_norm_eps: 1e-6, rope_theta: 10000.0, tie_word_embeddings: false,
};

/** LLaMA's RMS norm (the same as T5's for float32 inputs). */
export class LlamaRMSNorm extends RMSNorm {}

export class LlamaRotaryEmbedding extends nn.Module {
  constructor(config) {
    super();
    const dim = config.head_dim ?? config.hidden_size / config.num_attention_heads; // upstream: getattr(config, 'head_dim', None) or ...
    // 1 / base ** (arange(0, dim, 2) / dim), computed as upstream computes it (float32)
    // (om.tidy frees the temporaries: a constructor is no forward scope)
    const invFreq = om.tidy(() => {
      const exponents = om.arange(0, dim, 2, { dtype: 'int64' }).float().div(dim);
      return om.ones([]).div(om.full([], config.rope_theta).pow(exponents));
    });
    this.registerBuffer('inv_freq', invFreq, { persistent: false });
  }

  /** [cos, sin] of the positions' angles: each [batch, seq, head_dim]. */
  forward(x, positionIds) {
    const invFreqExpanded = this.inv_freq.view(1, -1, 1).expand(positionIds.shape[0], -1, 1);
    const positionIdsExpanded = positionIds.unsqueeze(1).float();
    const freqs = invFreqExpanded.matmul(positionIdsExpanded).transpose(1, 2);
    const emb = om.cat([freqs, freqs], -1);
    return [emb.cos(), emb.sin()];
  }
}

/** The last dim's halves swapped, the second negated: cat(-x2, x1). */
export function rotateHalf(x) {
  const half = x.shape[x.shape.length - 1] / 2;
  const x1 = x.slice(-1, 0, half);
  const x2 = x.slice(-1, half);
  return om.cat([x2.neg(), x1], -1);
}

export function applyRotaryPosEmb(q, k, cos, sin, unsqueezeDim = 1) {
  const c = cos.unsqueeze(unsqueezeDim);
  const s = sin.unsqueeze(unsqueezeDim);
  return [q.mul(c).add(rotateHalf(q).mul(s)), k.mul(c).add(rotateHalf(k).mul(s))];
}

/** The key-value heads each repeated nRep times: [b, kvHeads, s, d] -> [b, kvHeads * nRep, s, d]. */
export function repeatKv(hiddenStates, nRep) {
  const [batch, numKeyValueHeads, slen, headDim] = hiddenStates.shape;
  if (nRep === 1) return hiddenStates;
  const expanded = hiddenStates.unsqueeze(2).expand(batch, numKeyValueHeads, nRep, slen, headDim);
  return expanded.reshape(batch, numKeyValueHeads * nRep, slen, headDim);
}

export class LlamaAttention extends nn.Module {
  constructor(config) {
    super();
    this.num_heads = config.num_attention_heads;
    this.head_dim = config.hidden_size / this.num_heads;
    this.num_key_value_heads = config.num_key_value_heads;
    this.num_key_value_groups = this.num_heads / this.num_key_value_heads;
    this.q_proj = new nn.Linear(config.hidden_size, this.num_heads * this.head_dim, { bias: false });
    this.k_proj = new nn.Linear(config.hidden_size, this.num_key_value_heads * this.head_dim, { bias: false });
    this.v_proj = new nn.Linear(config.hidden_size, this.num_key_value_heads * this.head_dim, { bias: false });
    this.o_proj = new nn.Linear(this.num_heads * this.head_dim, config.hidden_size, { bias: false });
  }

  forward(hiddenStates, attentionMask, [cos, sin]) {
    const [bsz, qLen] = hiddenStates.shape;
    const heads = (proj, n) => proj.forward(hiddenStates).view(bsz, qLen, n, this.head_dim).transpose(1, 2);
    let [queryStates, keyStates] = applyRotaryPosEmb(heads(this.q_proj, this.num_heads), heads(this.k_proj, this.num_key_value_heads), cos, sin);
    keyStates = repeatKv(keyStates, this.num_key_value_groups);
    const valueStates = repeatKv(heads(this.v_proj, this.num_key_value_heads), this.num_key_value_groups);
    let attnWeights = queryStates.matmul(keyStates.transpose(2, 3)).div(Math.sqrt(this.head_dim));
    attnWeights = attnWeights.add(attentionMask.slice(3, 0, keyStates.shape[2]));
    attnWeights = attnWeights.softmax(-1);
    const attnOutput = attnWeights.matmul(valueStates).transpose(1, 2).contiguous();
    return this.o_proj.forward(attnOutput.reshape(bsz, qLen, -1));
  }
}

export class LlamaMLP extends nn.Module {
  constructor(config) {
    super();
    this.gate_proj = new nn.Linear(config.hidden_size, config.intermediate_size, { bias: false });
    this.up_proj = new nn.Linear(config.hidden_size, config.intermediate_size, { bias: false });
    this.down_proj = new nn.Linear(config.intermediate_size, config.hidden_size, { bias: false });
  }

  forward(x) {
    return this.down_proj.forward(nn.functional.silu(this.gate_proj.forward(x)).mul(this.up_proj.forward(x)));
  }
}

export class LlamaDecoderLayer extends nn.Module {
  /** The attention class (a subclass, as Qwen2's, names its own; upstream's modular files subclass the same way). */
  static Attention = LlamaAttention;

  constructor(config, layerIdx) {
    super();
    this.self_attn = new this.constructor.Attention(config, layerIdx);
    this.mlp = new LlamaMLP(config);
    this.input_layernorm = new LlamaRMSNorm(config.hidden_size, config.rms_norm_eps);
    this.post_attention_layernorm = new LlamaRMSNorm(config.hidden_size, config.rms_norm_eps);
  }

  forward(hiddenStates, attentionMask, positionEmbeddings) {
    const h = hiddenStates.add(this.self_attn.forward(this.input_layernorm.forward(hiddenStates), attentionMask, positionEmbeddings));
    return h.add(this.mlp.forward(this.post_attention_layernorm.forward(h)));
  }
}

export class LlamaModel extends nn.Module {
  /** The decoder layer class (a subclass, as Qwen2's, names its own). */
  static Layer = LlamaDecoderLayer;

  constructor(config) {
    super();
    this.embed_tokens = new nn.Embedding(config.vocab_size, config.hidden_size);
    this.layers = new nn.ModuleList(Array.from({ length: config.num_hidden_layers }, (_, i) => new this.constructor.Layer(config, i)));
    this.norm = new LlamaRMSNorm(config.hidden_size, config.rms_norm_eps);
    this.rotary_emb = new LlamaRotaryEmbedding(config);
  }

  /** _update_causal_mask without a padding mask or a cache: [batch, 1, seq, seq], finfo.min above the diagonal. */
  causalMask(attentionMask, inputTensor, cachePosition) {
    if (attentionMask !== null) throw new Error('LlamaModel: attention_mask is not ported (no padding mask)');
    const sequenceLength = inputTensor.shape[1];
    const targetLength = sequenceLength;
    // Upstream skips the triu at length 1 (`if sequence_length != 1`), where it changes nothing
    // the mask multiplication below keeps; onemodel's trace refuses that branch on the length
    // (SymbolicShape: "triu (call 5): at batch=4, seq=1 the model calls arange here ... the graph
    // holds for the sizes om.Dim('seq', { min: 2 }) declares"), so the port makes the triu always.
    const causalMask = om.full([sequenceLength, targetLength], FLOAT32_MIN).triu(1);
    causalMask.mul_(om.arange(0, targetLength, { dtype: 'int64' }).gt(cachePosition.reshape(-1, 1)));
    return causalMask.unsqueeze(0).unsqueeze(0).expand(inputTensor.shape[0], 1, -1, -1);
  }

  forward(inputIds, attentionMask = null) {
    const inputsEmbeds = this.embed_tokens.forward(inputIds);
    const cachePosition = om.arange(0, inputsEmbeds.shape[1], { dtype: 'int64' });
    const positionIds = cachePosition.unsqueeze(0);
    const causalMask = this.causalMask(attentionMask, inputsEmbeds, cachePosition);
    const positionEmbeddings = this.rotary_emb.forward(inputsEmbeds, positionIds);
    let h = inputsEmbeds;
    for (const layer of this.layers) h = layer.forward(h, causalMask, positionEmbeddings);
    return this.norm.forward(h);
  }
}

export class LlamaForCausalLM extends nn.Module {
  /** The config's defaults and the model class (a subclass, as Mistral's, names its own). */
  static defaults = LLAMA_DEFAULTS;
  static Model = LlamaModel;

  constructor(config = {}) {
    super();
    const c = portConfig(this.constructor.name, this.constructor.defaults, config, 'hidden_act', 'silu');
    c.num_key_value_heads ??= c.num_attention_heads;
    this.config = c;
    this.model = new this.constructor.Model(c);
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
