// The T5 encoder (Hugging Face transformers' T5EncoderModel, modeling_t5.py) ported to onemodel as
// a user ports it: the same modules, names and operations, so a checkpoint's state dict
// (`shared.weight`, `encoder.embed_tokens.weight` (the same table), `encoder.block.0.layer.0.
// SelfAttention.q.weight`, ..., `encoder.final_layer_norm.weight`) loads with a strict
// loadStateDict. The relative position buckets are computed from the lengths (abs, log, minimum,
// where), so a traced graph is right at every length, across max_distance too. Dropout is the
// identity in eval mode. forward(input_ids [batch, seq] int64, attention_mask [batch, seq] (1 keep,
// 0 pad)) -> last_hidden_state [batch, seq, d_model].
import * as om from 'onemodel';
import { RMSNorm, extendedAttentionMask, portConfig } from './modeling_utils.mjs';

const nn = om.nn;

/** T5Config's defaults (t5-small) for the fields this port reads. */
export const T5_DEFAULTS = {
  vocab_size: 32128, d_model: 512, d_kv: 64, d_ff: 2048, num_layers: 6, num_heads: 8,
  relative_attention_num_buckets: 32, relative_attention_max_distance: 128, layer_norm_epsilon: 1e-6, feed_forward_proj: 'relu',
};

/** T5's layer norm: an RMS norm, no mean subtracted, no bias. */
export class T5LayerNorm extends RMSNorm {}

/**
 * The bucket of each relative position (int64, memory - context): exact below max_exact, then
 * logarithmic up to max_distance, the last bucket beyond; bidirectional: positive offsets in the
 * upper half of the buckets.
 */
export function relativePositionBucket(relativePosition, bidirectional = true, numBuckets = 32, maxDistance = 128) {
  let relativeBuckets = null;
  let position = relativePosition;
  let buckets = numBuckets;
  if (bidirectional) {
    buckets = Math.floor(buckets / 2);
    relativeBuckets = position.gt(0).long().mul(buckets);
    position = position.abs();
  } else {
    position = om.minimum(position, om.zeros(position.shape, { dtype: position.dtype })).neg();
  }
  const maxExact = Math.floor(buckets / 2);
  const isSmall = position.lt(maxExact);
  const scaled = position.float().div(maxExact).log().div(Math.log(maxDistance / maxExact)).mul(buckets - maxExact);
  let positionIfLarge = scaled.long().add(maxExact);
  // torch.min(x, torch.full_like(x, num_buckets - 1)): onemodel has no full_like, full of x's shape and dtype is the same
  positionIfLarge = om.minimum(positionIfLarge, om.full(positionIfLarge.shape, BigInt(buckets - 1)));
  const chosen = om.where(isSmall, position, positionIfLarge);
  return relativeBuckets === null ? chosen : relativeBuckets.add_(chosen);
}

export class T5Attention extends nn.Module {
  constructor(config, hasRelativeAttentionBias) {
    super();
    this.has_relative_attention_bias = hasRelativeAttentionBias;
    this.relative_attention_num_buckets = config.relative_attention_num_buckets;
    this.relative_attention_max_distance = config.relative_attention_max_distance;
    this.n_heads = config.num_heads;
    this.key_value_proj_dim = config.d_kv;
    this.inner_dim = this.n_heads * this.key_value_proj_dim;
    this.q = new nn.Linear(config.d_model, this.inner_dim, { bias: false });
    this.k = new nn.Linear(config.d_model, this.inner_dim, { bias: false });
    this.v = new nn.Linear(config.d_model, this.inner_dim, { bias: false });
    this.o = new nn.Linear(this.inner_dim, config.d_model, { bias: false });
    if (hasRelativeAttentionBias) this.relative_attention_bias = new nn.Embedding(this.relative_attention_num_buckets, this.n_heads);
  }

  /** The position bias [1, heads, query_length, key_length]. */
  computeBias(queryLength, keyLength) {
    const contextPosition = om.arange(0, queryLength, { dtype: 'int64' }).unsqueeze(1);
    const memoryPosition = om.arange(0, keyLength, { dtype: 'int64' }).unsqueeze(0);
    const relativePosition = memoryPosition.sub(contextPosition);
    const bucket = relativePositionBucket(relativePosition, true, this.relative_attention_num_buckets, this.relative_attention_max_distance);
    return this.relative_attention_bias.forward(bucket).permute(2, 0, 1).unsqueeze(0);
  }

  /** [attention output, position bias (the mask added)]: the first layer computes the bias, the others reuse it. */
  forward(hiddenStates, mask, positionBias = null) {
    const [batchSize, seqLength] = hiddenStates.shape;
    const heads = (proj) => proj.forward(hiddenStates).view(batchSize, -1, this.n_heads, this.key_value_proj_dim).transpose(1, 2);
    const queryStates = heads(this.q);
    const keyStates = heads(this.k);
    const valueStates = heads(this.v);
    const scores = queryStates.matmul(keyStates.transpose(3, 2));
    let bias = positionBias;
    if (bias === null) {
      const keyLength = keyStates.shape[2];
      bias = this.computeBias(seqLength, keyLength).slice(2, -seqLength);
      bias = bias.add(mask.slice(3, 0, keyLength));
    }
    scores.add_(bias); // scores += position_bias
    const attnWeights = scores.float().softmax(-1);
    const attnOutput = attnWeights.matmul(valueStates).transpose(1, 2).contiguous();
    return [this.o.forward(attnOutput.view(batchSize, -1, this.inner_dim)), bias];
  }
}

export class T5LayerSelfAttention extends nn.Module {
  constructor(config, hasRelativeAttentionBias) {
    super();
    this.SelfAttention = new T5Attention(config, hasRelativeAttentionBias);
    this.layer_norm = new T5LayerNorm(config.d_model, config.layer_norm_epsilon);
    this.dropout = new nn.Dropout(0.1);
  }

  forward(hiddenStates, attentionMask, positionBias) {
    const [attentionOutput, bias] = this.SelfAttention.forward(this.layer_norm.forward(hiddenStates), attentionMask, positionBias);
    return [hiddenStates.add(this.dropout.forward(attentionOutput)), bias];
  }
}

export class T5DenseActDense extends nn.Module {
  constructor(config) {
    super();
    this.wi = new nn.Linear(config.d_model, config.d_ff, { bias: false });
    this.wo = new nn.Linear(config.d_ff, config.d_model, { bias: false });
    this.dropout = new nn.Dropout(0.1);
  }

  forward(hiddenStates) {
    return this.wo.forward(this.dropout.forward(this.wi.forward(hiddenStates).relu()));
  }
}

export class T5LayerFF extends nn.Module {
  constructor(config) {
    super();
    this.DenseReluDense = new T5DenseActDense(config);
    this.layer_norm = new T5LayerNorm(config.d_model, config.layer_norm_epsilon);
    this.dropout = new nn.Dropout(0.1);
  }

  forward(hiddenStates) {
    return hiddenStates.add(this.dropout.forward(this.DenseReluDense.forward(this.layer_norm.forward(hiddenStates))));
  }
}

export class T5Block extends nn.Module {
  constructor(config, hasRelativeAttentionBias) {
    super();
    this.layer = new nn.ModuleList([new T5LayerSelfAttention(config, hasRelativeAttentionBias), new T5LayerFF(config)]);
  }

  forward(hiddenStates, attentionMask, positionBias) {
    const [h, bias] = this.layer[0].forward(hiddenStates, attentionMask, positionBias);
    return [this.layer[this.layer.length - 1].forward(h), bias];
  }
}

export class T5Stack extends nn.Module {
  constructor(config, embedTokens) {
    super();
    this.embed_tokens = embedTokens;
    this.block = new nn.ModuleList(Array.from({ length: config.num_layers }, (_, i) => new T5Block(config, i === 0)));
    this.final_layer_norm = new T5LayerNorm(config.d_model, config.layer_norm_epsilon);
    this.dropout = new nn.Dropout(0.1);
  }

  forward(inputIds, attentionMask) {
    let h = this.dropout.forward(this.embed_tokens.forward(inputIds));
    const mask = extendedAttentionMask(attentionMask ?? om.ones(inputIds.shape, { dtype: 'int64' }));
    let positionBias = null;
    for (const block of this.block) [h, positionBias] = block.forward(h, mask, positionBias);
    return this.dropout.forward(this.final_layer_norm.forward(h));
  }
}

export class T5EncoderModel extends nn.Module {
  constructor(config = {}) {
    super();
    const c = portConfig('T5EncoderModel', T5_DEFAULTS, config, 'feed_forward_proj', 'relu');
    this.config = c;
    this.shared = new nn.Embedding(c.vocab_size, c.d_model);
    this.encoder = new T5Stack(c, this.shared);
  }

  forward(inputIds, attentionMask = null) {
    return this.encoder.forward(inputIds, attentionMask);
  }
}
