// BLOOM (Hugging Face transformers' BloomForCausalLM, modeling_bloom.py, eager attention) ported to
// onemodel as a user ports it: the same modules, names and operations, so a checkpoint's state dict
// (`transformer.word_embeddings.weight`, `transformer.h.0.self_attention.query_key_value.weight`,
// ..., `lm_head.weight` tied to the word embeddings) loads with a strict loadStateDict. BLOOM has no
// position embeddings: ALiBi adds to every head's scores its own slope times each key's position,
// counted over the tokens the padding mask keeps (a cumsum of the mask), so a traced graph holds
// for every length. Inference without a key-value cache; dropout is the identity in eval mode.
// forward(input_ids [batch, seq] int64, attention_mask [batch, seq] (1 keep, 0 pad; default all
// ones)) -> logits [batch, seq, vocab_size].
import * as om from 'onemodel';
import { FLOAT32_MIN } from './modeling_utils.mjs';

const nn = om.nn;

/** BloomConfig's defaults for the fields this port reads. */
export const BLOOM_DEFAULTS = {
  vocab_size: 250880, hidden_size: 64, n_layer: 2, n_head: 8, layer_norm_epsilon: 1e-5,
  apply_residual_connection_post_layernorm: false, pretraining_tp: 1, slow_but_exact: false, tie_word_embeddings: true,
};

/**
 * build_alibi_tensor: [batch * numHeads, 1, seq] float32, each head's slope times each key's
 * position among the kept tokens ((cumsum(mask) - 1) * mask). The slopes are powers of
 * 2 ** -(8 / p), p the largest power of 2 up to numHeads; the heads past p take the odd powers of
 * 2 ** -(4 / p).
 */
export function buildAlibiTensor(attentionMask, numHeads) {
  const [batchSize, seqLength] = attentionMask.shape;
  const closestPowerOf2 = 2 ** Math.floor(Math.log2(numHeads));
  const base = om.full([], 2 ** -(2 ** -(Math.log2(closestPowerOf2) - 3)));
  let slopes = base.pow(om.arange(1, 1 + closestPowerOf2, { dtype: 'int64' }));
  if (closestPowerOf2 !== numHeads) {
    const extraBase = om.full([], 2 ** -(2 ** -(Math.log2(2 * closestPowerOf2) - 3)));
    const numRemainingHeads = Math.min(closestPowerOf2, numHeads - closestPowerOf2);
    const extraPowers = om.arange(1, 1 + 2 * numRemainingHeads, 2, { dtype: 'int64' });
    slopes = om.cat([slopes, extraBase.pow(extraPowers)], 0);
  }
  const arangeTensor = attentionMask.cumsum(-1).sub(1).mul(attentionMask).unsqueeze(1); // [:, None, :]
  const alibi = slopes.unsqueeze(-1).mul(arangeTensor);
  return alibi.reshape(batchSize * numHeads, 1, seqLength).float();
}

/** bloom_gelu_forward: the tanh approximation of gelu with BLOOM's constants, as upstream writes it. */
export function bloomGelu(x) {
  return x.mul(0.5).mul(x.mul(0.79788456).mul(x.mul(0.044715).mul(x).add(1)).tanh().add(1));
}

/**
 * GPT-J's _prepare_4d_causal_attention_mask_with_cache_position (BLOOM's copy, no cache) of a
 * padding mask [batch, target]: [batch, 1, seq, target] float32, finfo.min above the diagonal
 * and at padded keys. Upstream skips the triu at length 1, where the multiplication after it
 * masks the same; onemodel's tracer refuses a branch on a symbolic length, so it is made always.
 */
export function prepare4dCausalAttentionMaskWithCachePosition(attentionMask, sequenceLength, targetLength, cachePosition, batchSize) {
  let causalMask = om.full([sequenceLength, targetLength], FLOAT32_MIN).triu(1);
  causalMask.mul_(om.arange(0, targetLength, { dtype: 'int64' }).gt(cachePosition.reshape(-1, 1)));
  causalMask = causalMask.unsqueeze(0).unsqueeze(0).expand(batchSize, 1, -1, -1);
  causalMask = causalMask.clone(); // copy to contiguous memory for in-place edit
  const maskLength = attentionMask.shape[attentionMask.shape.length - 1];
  const paddingMask = causalMask.slice(3, 0, maskLength).add(attentionMask.unsqueeze(1).unsqueeze(2)).eq(0);
  // causal_mask[:, :, :, :mask_length] = causal_mask[:, :, :, :mask_length].masked_fill(padding_mask, min)
  causalMask.slice(3, 0, maskLength).copy_(causalMask.slice(3, 0, maskLength).maskedFill(paddingMask, FLOAT32_MIN));
  return causalMask;
}

export class BloomAttention extends nn.Module {
  constructor(config) {
    super();
    this.hidden_size = config.hidden_size;
    this.num_heads = config.n_head;
    this.head_dim = this.hidden_size / this.num_heads;
    if (this.head_dim * this.num_heads !== this.hidden_size) {
      throw new Error(`BloomAttention: hidden_size must be divisible by num_heads (got hidden_size: ${this.hidden_size} and num_heads: ${this.num_heads})`);
    }
    this.inv_norm_factor = 1.0 / Math.sqrt(this.head_dim);
    this.query_key_value = new nn.Linear(this.hidden_size, 3 * this.hidden_size);
    this.dense = new nn.Linear(this.hidden_size, this.hidden_size);
  }

  /** [batch, seq, heads * 3 * head_dim] -> query, key, value, each [batch, heads, seq, head_dim] (views). */
  reshape(fusedQkv) {
    const [batchSize, seqLength] = fusedQkv.shape;
    const v = fusedQkv.view(batchSize, seqLength, this.num_heads, 3, this.head_dim);
    return [0, 1, 2].map((i) => v.select(3, i).transpose(1, 2)); // fused_qkv[..., i, :].transpose(1, 2)
  }

  /** [batch * heads, seq, head_dim] -> [batch, seq, heads * head_dim]. */
  mergeHeads(x) {
    const [batchSizeAndNumHeads, seqLength] = x.shape;
    const batchSize = Math.floor(batchSizeAndNumHeads / this.num_heads);
    return x.view(batchSize, this.num_heads, seqLength, this.head_dim).permute(0, 2, 1, 3).reshape(batchSize, seqLength, this.num_heads * this.head_dim);
  }

  forward(hiddenStates, residual, alibi, attentionMask) {
    const [batchSize, qLength] = hiddenStates.shape;
    let [queryLayer, keyLayer, valueLayer] = this.reshape(this.query_key_value.forward(hiddenStates));
    queryLayer = queryLayer.reshape(batchSize * this.num_heads, -1, this.head_dim);
    keyLayer = keyLayer.reshape(batchSize * this.num_heads, -1, this.head_dim).transpose(-1, -2);
    valueLayer = valueLayer.reshape(batchSize * this.num_heads, -1, this.head_dim);
    // alibi.baddbmm(q, k, beta=1, alpha=inv_norm_factor): alibi + inv_norm_factor * (q @ k)
    const attentionScores = alibi.add(queryLayer.bmm(keyLayer).mul(this.inv_norm_factor));
    let attnWeights = attentionScores.view(batchSize, this.num_heads, qLength, -1);
    attnWeights = attnWeights.add(attentionMask.slice(3, 0, keyLayer.shape[keyLayer.shape.length - 1]));
    const attentionProbs = attnWeights.softmax(-1);
    const contextLayer = this.mergeHeads(attentionProbs.view(batchSize * this.num_heads, qLength, -1).bmm(valueLayer));
    return residual.add(this.dense.forward(contextLayer)); // dropout_add
  }
}

export class BloomMLP extends nn.Module {
  constructor(config) {
    super();
    this.dense_h_to_4h = new nn.Linear(config.hidden_size, 4 * config.hidden_size);
    this.dense_4h_to_h = new nn.Linear(4 * config.hidden_size, config.hidden_size);
  }

  forward(hiddenStates, residual) {
    return residual.add(this.dense_4h_to_h.forward(bloomGelu(this.dense_h_to_4h.forward(hiddenStates))));
  }
}

export class BloomBlock extends nn.Module {
  constructor(config) {
    super();
    this.input_layernorm = new nn.LayerNorm(config.hidden_size, { eps: config.layer_norm_epsilon });
    this.self_attention = new BloomAttention(config);
    this.post_attention_layernorm = new nn.LayerNorm(config.hidden_size, { eps: config.layer_norm_epsilon });
    this.mlp = new BloomMLP(config);
    this.apply_residual_connection_post_layernorm = config.apply_residual_connection_post_layernorm;
  }

  forward(hiddenStates, alibi, attentionMask) {
    let layernormOutput = this.input_layernorm.forward(hiddenStates);
    let residual = this.apply_residual_connection_post_layernorm ? layernormOutput : hiddenStates;
    const attentionOutput = this.self_attention.forward(layernormOutput, residual, alibi, attentionMask);
    layernormOutput = this.post_attention_layernorm.forward(attentionOutput);
    residual = this.apply_residual_connection_post_layernorm ? layernormOutput : attentionOutput;
    return this.mlp.forward(layernormOutput, residual);
  }
}

export class BloomModel extends nn.Module {
  constructor(config) {
    super();
    this.num_heads = config.n_head;
    this.word_embeddings = new nn.Embedding(config.vocab_size, config.hidden_size);
    this.word_embeddings_layernorm = new nn.LayerNorm(config.hidden_size, { eps: config.layer_norm_epsilon });
    this.h = new nn.ModuleList(Array.from({ length: config.n_layer }, () => new BloomBlock(config)));
    this.ln_f = new nn.LayerNorm(config.hidden_size, { eps: config.layer_norm_epsilon });
  }

  forward(inputIds, attentionMask = null) {
    const inputsEmbeds = this.word_embeddings.forward(inputIds);
    const [batchSize, seqLength] = inputsEmbeds.shape;
    const cachePosition = om.arange(0, seqLength, { dtype: 'int64' });
    let hiddenStates = this.word_embeddings_layernorm.forward(inputsEmbeds);
    const mask = attentionMask ?? om.ones([batchSize, seqLength]);
    const alibi = buildAlibiTensor(mask, this.num_heads);
    const causalMask = prepare4dCausalAttentionMaskWithCachePosition(mask, seqLength, mask.shape[1], cachePosition, batchSize);
    for (const block of this.h) hiddenStates = block.forward(hiddenStates, alibi, causalMask);
    return this.ln_f.forward(hiddenStates);
  }
}

export class BloomForCausalLM extends nn.Module {
  constructor(config = {}) {
    super();
    const c = { ...BLOOM_DEFAULTS, ...config };
    if (c.pretraining_tp > 1 && c.slow_but_exact) throw new Error('BloomForCausalLM: slow_but_exact with pretraining_tp > 1 is not ported');
    this.config = c;
    this.transformer = new BloomModel(c);
    this.lm_head = new nn.Linear(c.hidden_size, c.vocab_size, { bias: false });
    if (c.tie_word_embeddings) {
      this.lm_head.weight.dispose();
      this.lm_head.weight = this.transformer.word_embeddings.weight;
    }
  }

  forward(inputIds, attentionMask = null) {
    return this.lm_head.forward(this.transformer.forward(inputIds, attentionMask));
  }
}
