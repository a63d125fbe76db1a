// Phi (Hugging Face transformers' PhiForCausalLM, modeling_phi.py, eager attention: phi-1, phi-1.5,
// phi-2) ported to onemodel as a user ports it: the same modules, names and operations, so a
// checkpoint's state dict (`model.embed_tokens.weight`, `model.layers.0.self_attn.q_proj.weight`,
// ..., `model.layers.0.self_attn.dense.weight`, `model.final_layernorm.weight`, `lm_head.bias`)
// loads with a strict loadStateDict; each attention's `rotary_emb.inv_freq`, `cos_cached` and
// `sin_cached` are non-persistent buffers, as upstream. Partial rotary embedding (the first
// partial_rotary_factor * head_dim channels of each head turn, the rest pass), attention and MLP in
// parallel on one LayerNorm's output, gelu_new. Inference without a key-value cache.
// forward(input_ids [batch, seq] int64, attention_mask [batch, seq] (1 keep, 0 pad; default all
// ones)) -> logits [batch, seq, vocab_size].
import * as om from 'onemodel';
import { portConfig, prepare4dCausalAttentionMask } from './modeling_utils.mjs';
import { geluNew } from './gpt2.mjs';
import { repeatKv, rotateHalf } from './llama.mjs';

const nn = om.nn;

/** PhiConfig's defaults (phi-2) for the fields this port reads. */
export const PHI_DEFAULTS = {
  vocab_size: 51200, hidden_size: 2048, intermediate_size: 8192, num_hidden_layers: 24, num_attention_heads: 32,
  num_key_value_heads: null, hidden_act: 'gelu_new', max_position_embeddings: 2048, layer_norm_eps: 1e-5,
  rope_theta: 10000.0, partial_rotary_factor: 0.5, qk_layernorm: false,
};

/**
 * The rotary tables of the first `dim` channels: cos and sin of position x inv_freq cached to
 * maxPositionEmbeddings rows, rebuilt longer when a longer sequence comes (as upstream).
 */
export class PhiRotaryEmbedding extends nn.Module {
  constructor(dim, maxPositionEmbeddings, base) {
    super();
    this.dim = dim;
    // om.tidy frees the temporaries (a constructor is no forward scope)
    const invFreq = om.tidy(() => om.ones([]).div(om.full([], base).pow(om.arange(0, dim, 2, { dtype: 'int64' }).float().div(dim))));
    this.registerBuffer('inv_freq', invFreq, { persistent: false });
    this.setCosSinCache(maxPositionEmbeddings);
  }

  setCosSinCache(seqLen) {
    this.max_seq_len_cached = seqLen;
    const [cos, sin] = om.tidy(() => {
      const t = om.arange(0, seqLen, { dtype: 'int64' }).float();
      const freqs = om.einsum('i,j->ij', t, this.inv_freq); // torch.outer(t, inv_freq)
      const emb = om.cat([freqs, freqs], -1);
      return [emb.cos(), emb.sin()];
    });
    // the tables replaced are freed now (in PyTorch, when the last reference goes), not when the collector finds them
    this.cos_cached?.dispose();
    this.sin_cached?.dispose();
    this.registerBuffer('cos_cached', cos, { persistent: false });
    this.registerBuffer('sin_cached', sin, { persistent: false });
  }

  /** [cos, sin]: the tables' first seqLen rows, each [seqLen, dim]. */
  forward(x, seqLen) {
    if (seqLen > this.max_seq_len_cached) this.setCosSinCache(seqLen);
    return [this.cos_cached.slice(0, 0, seqLen), this.sin_cached.slice(0, 0, seqLen)];
  }
}

/** Phi's apply_rotary_pos_emb: the tables' rows at positionIds (cos[position_ids]), then LLaMA's rotation. */
export function applyRotaryPosEmb(q, k, cos, sin, positionIds, unsqueezeDim = 1) {
  const c = cos.index([positionIds]).unsqueeze(unsqueezeDim);
  const s = sin.index([positionIds]).unsqueeze(unsqueezeDim);
  return [q.mul(c).add(rotateHalf(q).mul(s)), k.mul(c).add(rotateHalf(k).mul(s))];
}

export class PhiMLP extends nn.Module {
  constructor(config) {
    super();
    this.fc1 = new nn.Linear(config.hidden_size, config.intermediate_size);
    this.fc2 = new nn.Linear(config.intermediate_size, config.hidden_size);
  }

  forward(hiddenStates) {
    return this.fc2.forward(geluNew(this.fc1.forward(hiddenStates)));
  }
}

export class PhiAttention extends nn.Module {
  constructor(config) {
    super();
    this.hidden_size = config.hidden_size;
    this.num_heads = config.num_attention_heads;
    this.head_dim = this.hidden_size / this.num_heads;
    this.num_key_value_heads = config.num_key_value_heads;
    this.num_key_value_groups = this.num_heads / this.num_key_value_heads;
    this.q_proj = new nn.Linear(this.hidden_size, this.num_heads * this.head_dim);
    this.k_proj = new nn.Linear(this.hidden_size, this.num_key_value_heads * this.head_dim);
    this.v_proj = new nn.Linear(this.hidden_size, this.num_key_value_heads * this.head_dim);
    this.dense = new nn.Linear(this.num_heads * this.head_dim, this.hidden_size);
    this.rotary_emb = new PhiRotaryEmbedding(Math.trunc(config.partial_rotary_factor * this.head_dim), config.max_position_embeddings, config.rope_theta);
  }

  forward(hiddenStates, attentionMask, positionIds) {
    const [bsz, qLen] = hiddenStates.shape;
    const heads = (proj, n) => proj.forward(hiddenStates).view(bsz, qLen, n, this.head_dim).transpose(1, 2);
    let queryStates = heads(this.q_proj, this.num_heads);
    let keyStates = heads(this.k_proj, this.num_key_value_heads);
    let valueStates = heads(this.v_proj, this.num_key_value_heads);
    const kvSeqLen = keyStates.shape[keyStates.shape.length - 2];
    const [cos, sin] = this.rotary_emb.forward(valueStates, kvSeqLen);
    // partial rotary embedding: query_states[..., :dim] turns, query_states[..., dim:] passes
    const dim = this.rotary_emb.dim;
    let [queryRot, keyRot] = [queryStates.slice(-1, 0, dim), keyStates.slice(-1, 0, dim)];
    [queryRot, keyRot] = applyRotaryPosEmb(queryRot, keyRot, cos, sin, positionIds);
    queryStates = om.cat([queryRot, queryStates.slice(-1, dim)], -1);
    keyStates = om.cat([keyRot, keyStates.slice(-1, dim)], -1);
    keyStates = repeatKv(keyStates, this.num_key_value_groups);
    valueStates = repeatKv(valueStates, this.num_key_value_groups);
    // upstream upcasts queries and keys to float32 (Phi-2 overflows in float16); they are float32 here
    let attnWeights = queryStates.matmul(keyStates.transpose(2, 3)).div(Math.sqrt(this.head_dim));
    attnWeights = attnWeights.add(attentionMask).softmax(-1);
    const attnOutput = attnWeights.matmul(valueStates).transpose(1, 2).contiguous();
    return this.dense.forward(attnOutput.reshape(bsz, qLen, this.hidden_size));
  }
}

export class PhiDecoderLayer extends nn.Module {
  constructor(config) {
    super();
    this.self_attn = new PhiAttention(config);
    this.mlp = new PhiMLP(config);
    this.input_layernorm = new nn.LayerNorm(config.hidden_size, { eps: config.layer_norm_eps });
    this.resid_dropout = new nn.Dropout(0.1);
  }

  /** Attention and MLP in parallel on one LayerNorm's output, both added to the residual. */
  forward(hiddenStates, attentionMask, positionIds) {
    const residual = hiddenStates;
    const h = this.input_layernorm.forward(hiddenStates);
    const attnOutputs = this.resid_dropout.forward(this.self_attn.forward(h, attentionMask, positionIds));
    const feedForwardHiddenStates = this.resid_dropout.forward(this.mlp.forward(h));
    return attnOutputs.add(feedForwardHiddenStates).add(residual);
  }
}

export class PhiModel extends nn.Module {
  constructor(config) {
    super();
    this.embed_tokens = new nn.Embedding(config.vocab_size, config.hidden_size);
    this.embed_dropout = new nn.Dropout(0.0);
    this.layers = new nn.ModuleList(Array.from({ length: config.num_hidden_layers }, () => new PhiDecoderLayer(config)));
    this.final_layernorm = new nn.LayerNorm(config.hidden_size, { eps: config.layer_norm_eps });
  }

  forward(inputIds, attentionMask = null) {
    const [batchSize, seqLength] = inputIds.shape;
    const positionIds = om.arange(0, seqLength, { dtype: 'int64' }).unsqueeze(0);
    const inputsEmbeds = this.embed_dropout.forward(this.embed_tokens.forward(inputIds));
    const mask = prepare4dCausalAttentionMask(attentionMask ?? om.ones([batchSize, seqLength], { dtype: 'bool' }), [batchSize, seqLength]);
    let h = inputsEmbeds;
    for (const layer of this.layers) h = layer.forward(h, mask, positionIds);
    return this.final_layernorm.forward(h);
  }
}

export class PhiForCausalLM extends nn.Module {
  constructor(config = {}) {
    super();
    const c = portConfig('PhiForCausalLM', PHI_DEFAULTS, config, 'hidden_act', 'gelu_new');
    if (c.qk_layernorm) throw new Error('PhiForCausalLM: qk_layernorm is not ported');
    c.num_key_value_heads ??= c.num_attention_heads;
    this.config = c;
    this.model = new PhiModel(c);
    this.lm_head = new nn.Linear(c.hidden_size, c.vocab_size);
  }

  forward(inputIds, attentionMask = null) {
    return this.lm_head.forward(this.model.forward(inputIds, attentionMask));
  }
}
