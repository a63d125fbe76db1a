// Falcon (Hugging Face transformers' FalconForCausalLM, modeling_falcon.py, eager attention) ported
// to onemodel as a user ports it: the same modules, names and operations, so a checkpoint's state
// dict (`transformer.word_embeddings.weight`, `transformer.h.0.self_attention.query_key_value.weight`,
// `transformer.h.0.self_attention.dense.weight`, `transformer.h.0.mlp.dense_h_to_4h.weight`,
// `transformer.h.0.ln_attn.weight` and `ln_mlp` (the new decoder architecture) or `input_layernorm`
// (and `post_attention_layernorm` without parallel attention), `transformer.ln_f.weight`,
// `lm_head.weight` tied to the word embeddings) loads with a strict loadStateDict; the rotary
// embedding's `inv_freq` is non-persistent, as upstream's.
//
// The three layouts of upstream's checkpoints, chosen by the config as upstream chooses them:
// - new_decoder_architecture (falcon-40b, -180b): grouped key-value heads, the fused projection
//   viewed [batch, seq, num_kv_heads, heads / num_kv_heads + 2, head_dim], each group's key and value
//   broadcast to its queries; parallel attention and MLP, each with its own LayerNorm (ln_attn,
//   ln_mlp) unless num_ln_in_parallel_attn is 1;
// - multi_query (falcon-7b): one key-value head for all queries (matmul broadcasts it), parallel
//   attention and MLP on one input_layernorm;
// - neither (falcon-rw): a key and value per head, [batch, seq, heads, 3, head_dim].
// Rotary positions are LLaMA's (examples/transformers/llama.mjs), computed in the graph from the
// positions, so lengths are unbounded. With `alibi`, the scores get BLOOM's ALiBi instead, as upstream
// writes it: the slopes and positions in bfloat16 (onemodel has no bfloat16 tensors: `toBfloat16`
// rounds float32 values to bfloat16's 8 significant bits, halves to even, as the cast does), the
// alibi divided by sqrt(head_dim) written into the causal mask where it keeps a key, and added to the
// scores again before they are scaled. The causal mask is GPT-J's with the padding mask written in by
// slice assignment (bloom.mjs). Inference only: no key-value cache, dropout is the identity in eval
// mode, no head_mask.
//
//   const net = new FalconForCausalLM({ vocab_size: 32, hidden_size: 32, num_hidden_layers: 2, num_attention_heads: 4,
//     num_kv_heads: 2, new_decoder_architecture: true }).eval();
//   const logits = net.forward(inputIds, attentionMask);   // [batch, seq, 32]
import * as om from 'onemodel';
import { FLOAT32_MIN, portConfig } from './modeling_utils.mjs';
import { LlamaRotaryEmbedding, applyRotaryPosEmb } from './llama.mjs';
import { prepare4dCausalAttentionMaskWithCachePosition } from './bloom.mjs';

const nn = om.nn;

/** FalconConfig's defaults (falcon-7b) for the fields this port reads. */
export const FALCON_DEFAULTS = {
  vocab_size: 65024, hidden_size: 4544, num_hidden_layers: 32, num_attention_heads: 71, num_ln_in_parallel_attn: null,
  layer_norm_epsilon: 1e-5, num_kv_heads: null, alibi: false, new_decoder_architecture: false, multi_query: true,
  parallel_attn: true, bias: false, max_position_embeddings: 2048, rope_theta: 10000.0, rope_scaling: null,
  activation: 'gelu', ffn_hidden_size: null, tie_word_embeddings: true,
};

/**
 * x.bfloat16().float(): float32 values rounded to bfloat16 (8 significant bits, halves to even), as
 * the cast rounds finite values. The step is 2 ** (floor(log2 |x|) - 7); where log2 rounds up just
 * below a power of two the doubled step rounds to that power, as the cast does.
 */
export function toBfloat16(x) {
  const magnitude = x.abs();
  const step = magnitude.log2().floor().sub(7).exp2();
  return om.where(magnitude.eq(0), x, magnitude.div(step).round().mul(step).mul(x.sign()));
}

/**
 * Falcon's build_alibi_tensor: [batch * numHeads, 1, seq] float32. BLOOM's slopes (bloom.mjs) and
 * positions among the kept tokens ((cumsum(mask) - 1) * mask), multiplied in bfloat16 as upstream's
 * `slopes[..., None].bfloat16() * arange_tensor` (both operands rounded, then the product).
 */
export function buildAlibiTensor(attentionMask, numHeads) {
  const [batchSize, seqLength] = attentionMask.shape;
  const closestPowerOf2 = 2 ** Math.floor(Math.log2(numHeads));
  const base = om.full([], 2 ** -(2 ** -(Math.log2(closestPowerOf2) - 3)));
  let slopes = base.pow(om.arange(1, 1 + closestPowerOf2, { dtype: 'int64' }));
  if (closestPowerOf2 !== numHeads) {
    const extraBase = om.full([], 2 ** -(2 ** -(Math.log2(2 * closestPowerOf2) - 3)));
    const numRemainingHeads = Math.min(closestPowerOf2, numHeads - closestPowerOf2);
    slopes = om.cat([slopes, extraBase.pow(om.arange(1, 1 + 2 * numRemainingHeads, 2, { dtype: 'int64' }))], 0);
  }
  const arangeTensor = attentionMask.cumsum(-1).sub(1).mul(attentionMask).unsqueeze(1); // [:, None, :]
  const alibi = toBfloat16(toBfloat16(slopes.unsqueeze(-1)).mul(toBfloat16(arangeTensor.float())));
  return alibi.reshape(batchSize * numHeads, 1, seqLength);
}

/** nn.Linear as Falcon computes it: input @ weight.T, then + bias (not fused, as upstream keeps it). */
export class FalconLinear extends nn.Linear {
  forward(input) {
    const hiddenStates = input.matmul(this.weight.t());
    return this.bias ? hiddenStates.add(this.bias) : hiddenStates;
  }
}

export class FalconAttention extends nn.Module {
  constructor(config) {
    super();
    this.hidden_size = config.hidden_size;
    this.num_heads = config.num_attention_heads;
    this.head_dim = Math.floor(this.hidden_size / this.num_heads);
    if (this.head_dim * this.num_heads !== this.hidden_size) {
      throw new Error(`\`hidden_size\` must be divisible by num_heads (got \`hidden_size\`: ${this.hidden_size} and \`num_heads\`: ${this.num_heads}).`);
    }
    this.inv_norm_factor = 1.0 / Math.sqrt(this.head_dim);
    let qkvOutDim = 3 * this.hidden_size;
    if (config.new_decoder_architecture) qkvOutDim = (config.num_kv_heads * 2 + config.num_attention_heads) * this.head_dim;
    else if (config.multi_query) qkvOutDim = this.hidden_size + 2 * this.head_dim;
    this.query_key_value = new FalconLinear(this.hidden_size, qkvOutDim, { bias: config.bias });
    this.new_decoder_architecture = config.new_decoder_architecture;
    this.multi_query = config.multi_query;
    this.dense = new FalconLinear(this.hidden_size, this.hidden_size, { bias: config.bias });
    this.num_kv_heads = this.new_decoder_architecture || !this.multi_query ? config.num_kv_heads : 1;
  }

  /** fused [batch, seq, qkvOutDim] -> query, key, value [batch, seq, heads (or kv heads), head_dim]. */
  splitHeads(fusedQkv) {
    const [batch, seqLen] = fusedQkv.shape;
    if (this.new_decoder_architecture) {
      const qkv = fusedQkv.view(batch, seqLen, -1, Math.floor(this.num_heads / this.num_kv_heads) + 2, this.head_dim);
      const query = qkv.slice(3, 0, -2);
      const key = qkv.slice(3, -2, -1).broadcastTo(query.shape); // qkv[:, :, :, [-2]]
      const value = qkv.slice(3, -1).broadcastTo(query.shape); // qkv[:, :, :, [-1]]
      return [query, key, value].map((x) => x.flatten(2, 3));
    }
    if (!this.multi_query) {
      const qkv = fusedQkv.view(batch, seqLen, this.num_heads, 3, this.head_dim);
      return [0, 1, 2].map((i) => qkv.select(3, i)); // fused_qkv[..., i, :]
    }
    const qkv = fusedQkv.view(batch, seqLen, this.num_heads + 2, this.head_dim);
    return [qkv.slice(2, 0, -2), qkv.slice(2, -2, -1), qkv.slice(2, -1)];
  }

  /** [batch * heads, seq, head_dim] -> [batch, seq, heads * head_dim]. */
  mergeHeads(x) {
    const [batchSizeAndNumHeads, seqLength] = x.shape;
    const batchSize = Math.floor(batchSizeAndNumHeads / this.num_heads);
    return x.view(batchSize, this.num_heads, seqLength, this.head_dim).permute(0, 2, 1, 3).reshape(batchSize, seqLength, this.num_heads * this.head_dim);
  }

  forward(hiddenStates, alibi, attentionMask, positionEmbeddings) {
    const numKvHeads = this.new_decoder_architecture ? this.num_heads : this.num_kv_heads;
    let [queryLayer, keyLayer, valueLayer] = this.splitHeads(this.query_key_value.forward(hiddenStates));
    const [batchSize, queryLength] = queryLayer.shape;
    queryLayer = queryLayer.transpose(1, 2).reshape(batchSize, this.num_heads, queryLength, this.head_dim);
    keyLayer = keyLayer.transpose(1, 2).reshape(batchSize, numKvHeads, queryLength, this.head_dim);
    valueLayer = valueLayer.transpose(1, 2).reshape(batchSize, numKvHeads, queryLength, this.head_dim);
    if (alibi === null) [queryLayer, keyLayer] = applyRotaryPosEmb(queryLayer, keyLayer, ...positionEmbeddings);
    const kvLength = keyLayer.shape[2];
    const mask = attentionMask.slice(3, 0, kvLength);
    if (alibi === null) {
      const scores = queryLayer.matmul(keyLayer.transpose(-1, -2)).div(Math.sqrt(this.head_dim));
      const attnOutput = scores.add(mask).softmax(-1).matmul(valueLayer)
        .view(batchSize, this.num_heads, queryLength, this.head_dim).permute(0, 2, 1, 3);
      return this.dense.forward(attnOutput.reshape(batchSize, queryLength, this.num_heads * this.head_dim));
    }
    const attentionScores = queryLayer.matmul(keyLayer.transpose(-1, -2)).view(batchSize, this.num_heads, queryLength, kvLength);
    const attentionLogits = attentionScores.add(alibi.view(batchSize, this.num_heads, 1, -1)).mul(this.inv_norm_factor);
    const attentionProbs = attentionLogits.add(mask).softmax(-1).view(batchSize, this.num_heads, queryLength, kvLength);
    return this.dense.forward(this.mergeHeads(attentionProbs.matmul(valueLayer).flatten(0, 1)));
  }
}

/** dense_h_to_4h, gelu (the erf form), dense_4h_to_h. */
export class FalconMLP extends nn.Module {
  constructor(config) {
    super();
    this.dense_h_to_4h = new FalconLinear(config.hidden_size, config.ffn_hidden_size, { bias: config.bias });
    this.act = new nn.GELU();
    this.dense_4h_to_h = new FalconLinear(config.ffn_hidden_size, config.hidden_size, { bias: config.bias });
  }

  forward(x) {
    return this.dense_4h_to_h.forward(this.act.forward(this.dense_h_to_4h.forward(x)));
  }
}

export class FalconDecoderLayer extends nn.Module {
  constructor(config) {
    super();
    this.config = config;
    this.self_attention = new FalconAttention(config);
    this.mlp = new FalconMLP(config);
    const ln = () => new nn.LayerNorm(config.hidden_size, { eps: config.layer_norm_epsilon });
    if (!config.parallel_attn) {
      this.post_attention_layernorm = ln();
      this.input_layernorm = ln();
    } else if (config.num_ln_in_parallel_attn === 2) {
      this.ln_attn = ln(); // the layer norm before self-attention
      this.ln_mlp = ln(); // the layer norm before the MLP
    } else {
      this.input_layernorm = ln();
    }
  }

  forward(hiddenStates, alibi, attentionMask, positionEmbeddings) {
    const c = this.config;
    let residual = hiddenStates;
    let attentionLayernormOut;
    let mlpLayernormOut;
    if (c.new_decoder_architecture && c.num_ln_in_parallel_attn === 2) {
      attentionLayernormOut = this.ln_attn.forward(hiddenStates);
      mlpLayernormOut = this.ln_mlp.forward(hiddenStates);
    } else {
      attentionLayernormOut = this.input_layernorm.forward(hiddenStates);
    }
    const attentionOutput = this.self_attention.forward(attentionLayernormOut, alibi, attentionMask, positionEmbeddings);
    if (!c.new_decoder_architecture) {
      if (c.parallel_attn) {
        mlpLayernormOut = attentionLayernormOut;
      } else {
        residual = residual.add(attentionOutput); // dropout_add
        mlpLayernormOut = this.post_attention_layernorm.forward(residual);
      }
    }
    if (c.new_decoder_architecture && c.parallel_attn && c.num_ln_in_parallel_attn === 1) mlpLayernormOut = attentionLayernormOut;
    let mlpOutput = this.mlp.forward(mlpLayernormOut);
    if (c.new_decoder_architecture || c.parallel_attn) mlpOutput = mlpOutput.add(attentionOutput);
    return residual.add(mlpOutput); // dropout_add
  }
}

/** The config with Falcon's defaults and FalconConfig's derived fields; what the port does not implement is refused by name. */
function falconConfig(model, config) {
  const c = portConfig(model, FALCON_DEFAULTS, config, 'activation', 'gelu');
  if (c.rope_scaling !== null) throw new Error(`${model}: rope_scaling ${JSON.stringify(c.rope_scaling)} is not ported (only null)`);
  c.num_kv_heads ??= c.num_attention_heads; // FalconConfig: num_kv_heads defaults to num_attention_heads
  c.ffn_hidden_size ??= 4 * c.hidden_size;
  if (c.num_ln_in_parallel_attn === null && c.new_decoder_architecture) c.num_ln_in_parallel_attn = 2; // as FalconDecoderLayer sets it
  return c;
}

/** forward(input_ids [batch, seq] int64, attention_mask [batch, seq] (1 keep, 0 pad; default all ones)) -> [batch, seq, hidden]. */
export class FalconModel extends nn.Module {
  constructor(config) {
    super();
    const c = falconConfig('FalconModel', config);
    this.config = c;
    this.num_heads = c.num_attention_heads;
    this.use_alibi = c.alibi;
    this.word_embeddings = new nn.Embedding(c.vocab_size, c.hidden_size);
    this.h = new nn.ModuleList(Array.from({ length: c.num_hidden_layers }, () => new FalconDecoderLayer(c)));
    this.ln_f = new nn.LayerNorm(c.hidden_size, { eps: c.layer_norm_epsilon });
    this.rotary_emb = new LlamaRotaryEmbedding(c);
  }

  forward(inputIds, attentionMask = null) {
    const inputsEmbeds = this.word_embeddings.forward(inputIds);
    const [batchSize, seqLength] = inputsEmbeds.shape;
    // without a mask upstream makes ones for ALiBi, and GPT-J's mask adds no padding: the same as all ones
    const mask = attentionMask ?? om.ones([batchSize, seqLength], { dtype: 'int64' });
    const alibi = this.use_alibi ? buildAlibiTensor(mask, this.num_heads) : null;
    const cachePosition = om.arange(0, seqLength, { dtype: 'int64' });
    const positionIds = cachePosition.unsqueeze(0);
    let causalMask = prepare4dCausalAttentionMaskWithCachePosition(mask, seqLength, mask.shape[1], cachePosition, batchSize);
    if (alibi !== null) {
      // _update_causal_mask: the scaled alibi where the causal mask keeps a key, finfo.min where it does not
      const scaled = alibi.reshape(batchSize, -1, ...alibi.shape.slice(1)).div(Math.sqrt(Math.floor(this.config.hidden_size / this.num_heads)));
      causalMask = om.maskedFill(scaled, causalMask.lt(-1), FLOAT32_MIN);
    }
    let hiddenStates = inputsEmbeds;
    const positionEmbeddings = this.rotary_emb.forward(hiddenStates, positionIds);
    for (const block of this.h) hiddenStates = block.forward(hiddenStates, alibi, causalMask, positionEmbeddings);
    return this.ln_f.forward(hiddenStates);
  }
}

/** forward(input_ids, attention_mask) -> logits [batch, seq, vocab_size]. */
export class FalconForCausalLM extends nn.Module {
  constructor(config = {}) {
    super();
    const c = falconConfig('FalconForCausalLM', config);
    this.transformer = new FalconModel(c);
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
