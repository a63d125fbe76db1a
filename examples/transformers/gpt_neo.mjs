// GPT-Neo (Hugging Face transformers' GPTNeoForCausalLM, modeling_gpt_neo.py, eager attention)
// ported to onemodel as a user ports it: the same modules, names and operations, so a checkpoint's
// state dict (`transformer.wte.weight`, `transformer.h.0.attn.attention.q_proj.weight`, ...,
// `lm_head.weight` tied to `transformer.wte.weight`) loads with a strict loadStateDict. Its layers
// alternate global and local attention (`attention_types`): a local layer sees only the last
// `window_size` tokens, through a causal buffer `tril(ones) ^ tril(ones, -window_size)` sliced to the
// length as GPT-2's. The scores are not scaled. Inference without a key-value cache; dropout is the
// identity in eval mode. forward(input_ids [batch, seq] int64, attention_mask [batch, seq] (1 keep,
// 0 pad; default all ones)) -> logits [batch, seq, vocab_size].
import * as om from 'onemodel';
import { FLOAT32_MIN, portConfig } from './modeling_utils.mjs';
import { geluNew } from './gpt2.mjs';
import { prepare4dCausalAttentionMaskWithCachePosition } from './bloom.mjs';

const nn = om.nn;

/** GPTNeoConfig's defaults (gpt-neo-1.3B's layout at upstream's default sizes) for the fields this port reads. */
export const GPT_NEO_DEFAULTS = {
  vocab_size: 50257, max_position_embeddings: 2048, hidden_size: 2048, num_layers: 24,
  attention_types: [[['global', 'local'], 12]], num_heads: 16, intermediate_size: null, window_size: 256,
  activation_function: 'gelu_new', layer_norm_epsilon: 1e-5,
};

/** GPTNeoConfig.expand_attention_types_params: [[['global', 'local'], 2]] -> ['global', 'local', 'global', 'local']. */
export function expandAttentionTypes(attentionTypes) {
  return attentionTypes.flatMap(([types, n]) => Array.from({ length: n }, () => types).flat());
}

export class GPTNeoSelfAttention extends nn.Module {
  constructor(config, attentionType) {
    super();
    const n = config.max_position_embeddings;
    const bias = om.tidy(() => {
      const causal = om.ones([n, n], { dtype: 'bool' }).tril().view(1, 1, n, n);
      // local causal self attention is a sliding window where each token can only attend to the
      // previous window_size tokens: the causal mask without what lies window_size or more back
      return attentionType === 'local' ? causal.bitwiseXor(causal.tril(-config.window_size)) : causal;
    });
    this.registerBuffer('bias', bias, { persistent: false });
    this.registerBuffer('masked_bias', om.tensor(-1e9), { persistent: false });
    this.embed_dim = config.hidden_size;
    this.num_heads = config.num_heads;
    this.head_dim = Math.floor(this.embed_dim / this.num_heads);
    if (this.head_dim * this.num_heads !== this.embed_dim) {
      throw new Error(`GPTNeoSelfAttention: embed_dim must be divisible by num_heads (got \`embed_dim\`: ${this.embed_dim} and \`num_heads\`: ${this.num_heads}).`);
    }
    this.k_proj = new nn.Linear(this.embed_dim, this.embed_dim, { bias: false });
    this.v_proj = new nn.Linear(this.embed_dim, this.embed_dim, { bias: false });
    this.q_proj = new nn.Linear(this.embed_dim, this.embed_dim, { bias: false });
    this.out_proj = new nn.Linear(this.embed_dim, this.embed_dim, { bias: true });
  }

  splitHeads(tensor) {
    return tensor.view([...tensor.shape.slice(0, -1), this.num_heads, this.head_dim]).permute(0, 2, 1, 3);
  }

  mergeHeads(tensor) {
    const t = tensor.permute(0, 2, 1, 3).contiguous();
    return t.view([...t.shape.slice(0, -2), this.num_heads * this.head_dim]);
  }

  attn(query, key, value, attentionMask) {
    let attnWeights = query.matmul(key.transpose(-1, -2));
    // the local layers' window lives in the buffer: slicing it to the length applies it
    const queryLength = query.shape[query.shape.length - 2];
    const keyLength = key.shape[key.shape.length - 2];
    const causalMask = this.bias.slice(2, keyLength - queryLength, keyLength).slice(3, 0, keyLength);
    attnWeights = om.where(causalMask, attnWeights, om.full([], FLOAT32_MIN));
    attnWeights = attnWeights.add(attentionMask.slice(3, 0, keyLength)); // no matter the length, we just slice it
    return attnWeights.softmax(-1).matmul(value);
  }

  forward(hiddenStates, attentionMask) {
    const query = this.splitHeads(this.q_proj.forward(hiddenStates));
    const key = this.splitHeads(this.k_proj.forward(hiddenStates));
    const value = this.splitHeads(this.v_proj.forward(hiddenStates));
    return this.out_proj.forward(this.mergeHeads(this.attn(query, key, value, attentionMask)));
  }
}

/** GPTNeoAttention: the layer's attention type from config.attention_layers, its self-attention as `attention`. */
export class GPTNeoAttention extends nn.Module {
  constructor(config, layerId) {
    super();
    this.attention_type = config.attention_layers[layerId];
    if (this.attention_type !== 'global' && this.attention_type !== 'local') {
      throw new Error(`GPTNeoAttention: Only attn layer types 'global' and 'local' exist, but got \`config.attention_layers\`: ${JSON.stringify(config.attention_layers)}. Select attn layer types from ['global', 'local'] only.`);
    }
    this.attention = new GPTNeoSelfAttention(config, this.attention_type);
  }

  forward(hiddenStates, attentionMask) {
    return this.attention.forward(hiddenStates, attentionMask);
  }
}

export class GPTNeoMLP extends nn.Module {
  constructor(intermediateSize, config) {
    super();
    this.c_fc = new nn.Linear(config.hidden_size, intermediateSize);
    this.c_proj = new nn.Linear(intermediateSize, config.hidden_size);
  }

  forward(hiddenStates) {
    return this.c_proj.forward(geluNew(this.c_fc.forward(hiddenStates)));
  }
}

export class GPTNeoBlock extends nn.Module {
  constructor(config, layerId) {
    super();
    const hiddenSize = config.hidden_size;
    this.ln_1 = new nn.LayerNorm(hiddenSize, { eps: config.layer_norm_epsilon });
    this.attn = new GPTNeoAttention(config, layerId);
    this.ln_2 = new nn.LayerNorm(hiddenSize, { eps: config.layer_norm_epsilon });
    this.mlp = new GPTNeoMLP(config.intermediate_size ?? 4 * hiddenSize, config);
  }

  forward(hiddenStates, attentionMask) {
    const h = this.attn.forward(this.ln_1.forward(hiddenStates), attentionMask).add(hiddenStates);
    return h.add(this.mlp.forward(this.ln_2.forward(h)));
  }
}

export class GPTNeoModel extends nn.Module {
  constructor(config) {
    super();
    this.wte = new nn.Embedding(config.vocab_size, config.hidden_size);
    this.wpe = new nn.Embedding(config.max_position_embeddings, config.hidden_size);
    this.h = new nn.ModuleList(Array.from({ length: config.num_layers }, (_, i) => new GPTNeoBlock(config, i)));
    this.ln_f = new nn.LayerNorm(config.hidden_size, { eps: config.layer_norm_epsilon });
  }

  forward(inputIds, attentionMask = null) {
    const inputsEmbeds = this.wte.forward(inputIds);
    const [batchSize, seqLength] = inputsEmbeds.shape;
    const cachePosition = om.arange(0, seqLength, { dtype: 'int64' });
    const positionIds = cachePosition.unsqueeze(0);
    // _update_causal_mask (eager, GPT-J's): the causal part and the padding mask, added to the scores
    const mask = attentionMask ?? om.ones([batchSize, seqLength]);
    const causalMask = prepare4dCausalAttentionMaskWithCachePosition(mask, seqLength, mask.shape[mask.shape.length - 1], cachePosition, batchSize);
    let hiddenStates = inputsEmbeds.add(this.wpe.forward(positionIds));
    for (const block of this.h) hiddenStates = block.forward(hiddenStates, causalMask);
    return this.ln_f.forward(hiddenStates);
  }
}

/** GPTNeoForCausalLM: the model and a bias-free head tied to the token embedding. */
export class GPTNeoForCausalLM extends nn.Module {
  constructor(config = {}) {
    super();
    const c = portConfig('GPTNeoForCausalLM', GPT_NEO_DEFAULTS, config, 'activation_function', 'gelu_new');
    c.attention_layers = expandAttentionTypes(c.attention_types);
    if (c.attention_layers.length !== c.num_layers) {
      throw new Error(`GPTNeoForCausalLM: Configuration for convolutional module is incorrect. It is required that \`len(config.attention_layers)\` == \`config.num_layers\` but is \`len(config.attention_layers) = ${c.attention_layers.length}\`, \`config.num_layers = ${c.num_layers}\`.`);
    }
    this.config = c;
    this.transformer = new GPTNeoModel(c);
    this.lm_head = new nn.Linear(c.hidden_size, c.vocab_size, { bias: false });
    this.lm_head.weight.dispose();
    this.lm_head.weight = this.transformer.wte.weight; // tied, as tie_weights() does
  }

  forward(inputIds, attentionMask = null) {
    return this.lm_head.forward(this.transformer.forward(inputIds, attentionMask));
  }
}
