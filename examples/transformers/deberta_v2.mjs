// DeBERTa-v2 (Hugging Face transformers' DebertaV2Model, modeling_deberta_v2.py; also DeBERTa-v3's
// checkpoints) ported to onemodel as a user ports it: the same modules, names and operations, so a
// checkpoint's state dict (`embeddings.word_embeddings.weight`, `encoder.rel_embeddings.weight`,
// `encoder.layer.0.attention.self.query_proj.weight`, ...) loads with a strict loadStateDict.
// Disentangled attention: besides content-to-content scores, each query scores each key's relative
// position (c2p) and each key the query's (p2c), read from the relative-position embeddings by a
// gather at the relative position's bucket (log buckets past position_buckets / 2). Inference only;
// dropout (StableDropout) is the identity in eval mode.
// forward(input_ids [batch, seq] int64, attention_mask [batch, seq] (1 keep, 0 pad; default all
// ones), token_type_ids (default zeros)) -> last_hidden_state [batch, seq, hidden_size].
import * as om from 'onemodel';
import { FLOAT32_MIN, portConfig } from './modeling_utils.mjs';

const nn = om.nn;

/** DebertaV2Config's defaults (deberta-v2-xlarge's sizes) for the fields this port reads. */
export const DEBERTA_V2_DEFAULTS = {
  vocab_size: 128100, hidden_size: 1536, num_hidden_layers: 24, num_attention_heads: 24, intermediate_size: 6144,
  hidden_act: 'gelu', max_position_embeddings: 512, type_vocab_size: 0, layer_norm_eps: 1e-7,
  relative_attention: false, max_relative_positions: -1, position_buckets: -1, pos_att_type: null,
  share_att_key: false, norm_rel_ebd: 'none', position_biased_input: true, pad_token_id: 0, embedding_size: null,
  conv_kernel_size: 0,
};

/**
 * make_log_bucket_position: relative positions [q, k] int64 -> float32 buckets, the position
 * itself where |position| <= bucketSize / 2 and sign * (ceil(log(|p| / mid) / log((maxPosition - 1) / mid)
 * * (mid - 1)) + mid) beyond (mid = bucketSize // 2).
 */
export function makeLogBucketPosition(relativePos, bucketSize, maxPosition) {
  const sign = relativePos.sign();
  const mid = Math.floor(bucketSize / 2);
  const absPos = om.where(relativePos.lt(mid).logicalAnd(relativePos.gt(-mid)), om.tensor(mid - 1).typeAs(relativePos), relativePos.abs());
  const logPos = absPos.div(mid).log().div(om.tensor((maxPosition - 1) / mid).log()).mul(mid - 1).ceil().add(mid);
  return om.where(absPos.le(mid), relativePos.typeAs(logPos), logPos.mul(sign));
}

/**
 * build_relative_position: [1, querySize, keySize] int64, query position minus key position, in
 * log buckets when bucketSize and maxPosition are positive.
 */
export function buildRelativePosition(querySize, keySize, bucketSize = -1, maxPosition = -1) {
  const qIds = om.arange(0, querySize, { dtype: 'int64' });
  const kIds = om.arange(0, keySize, { dtype: 'int64' });
  let relPosIds = qIds.unsqueeze(1).sub(kIds.unsqueeze(0)); // q_ids[:, None] - k_ids[None, :]
  if (bucketSize > 0 && maxPosition > 0) relPosIds = makeLogBucketPosition(relPosIds, bucketSize, maxPosition);
  relPosIds = relPosIds.long();
  relPosIds = relPosIds.slice(0, 0, querySize);
  return relPosIds.unsqueeze(0);
}

/** XSoftmax.forward: softmax over the positions mask keeps; the masked positions get 0. */
export function xSoftmax(input, mask, dim) {
  const rmask = mask.bool().logicalNot();
  const output = input.maskedFill(rmask, FLOAT32_MIN).softmax(dim);
  output.maskedFill_(rmask, 0);
  return output;
}

export class DisentangledSelfAttention extends nn.Module {
  constructor(config) {
    super();
    if (config.hidden_size % config.num_attention_heads !== 0) {
      throw new Error(`DisentangledSelfAttention: The hidden size (${config.hidden_size}) is not a multiple of the number of attention heads (${config.num_attention_heads})`);
    }
    this.num_attention_heads = config.num_attention_heads;
    this.attention_head_size = config.attention_head_size ?? config.hidden_size / config.num_attention_heads;
    this.all_head_size = this.num_attention_heads * this.attention_head_size;
    this.query_proj = new nn.Linear(config.hidden_size, this.all_head_size);
    this.key_proj = new nn.Linear(config.hidden_size, this.all_head_size);
    this.value_proj = new nn.Linear(config.hidden_size, this.all_head_size);
    this.share_att_key = config.share_att_key;
    this.pos_att_type = config.pos_att_type;
    this.relative_attention = config.relative_attention;
    if (this.relative_attention) {
      this.position_buckets = config.position_buckets;
      this.max_relative_positions = config.max_relative_positions < 1 ? config.max_position_embeddings : config.max_relative_positions;
      this.pos_ebd_size = this.position_buckets > 0 ? this.position_buckets : this.max_relative_positions;
      if (!this.share_att_key) {
        if (this.pos_att_type.includes('c2p')) this.pos_key_proj = new nn.Linear(config.hidden_size, this.all_head_size);
        if (this.pos_att_type.includes('p2c')) this.pos_query_proj = new nn.Linear(config.hidden_size, this.all_head_size);
      }
    }
  }

  /** [batch, len, heads * d] -> [batch * heads, len, d]. */
  transposeForScores(x, attentionHeads) {
    const v = x.view([...x.shape.slice(0, -1), attentionHeads, -1]);
    return v.permute(0, 2, 1, 3).contiguous().view(-1, v.shape[1], v.shape[v.shape.length - 1]);
  }

  forward(hiddenStates, attentionMask, relativePos, relEmbeddings) {
    const queryLayer = this.transposeForScores(this.query_proj.forward(hiddenStates), this.num_attention_heads);
    const keyLayer = this.transposeForScores(this.key_proj.forward(hiddenStates), this.num_attention_heads);
    const valueLayer = this.transposeForScores(this.value_proj.forward(hiddenStates), this.num_attention_heads);
    const scaleFactor = 1 + (this.pos_att_type.includes('c2p') ? 1 : 0) + (this.pos_att_type.includes('p2c') ? 1 : 0);
    const scale = om.tensor(queryLayer.shape[queryLayer.shape.length - 1]).mul(scaleFactor).sqrt();
    let attentionScores = queryLayer.bmm(keyLayer.transpose(-1, -2).div(scale));
    if (this.relative_attention) {
      attentionScores = attentionScores.add(this.disentangledAttentionBias(queryLayer, keyLayer, relativePos, relEmbeddings, scaleFactor));
    }
    const [, q, k] = attentionScores.shape;
    attentionScores = attentionScores.view(-1, this.num_attention_heads, q, k);
    const attentionProbs = xSoftmax(attentionScores, attentionMask, -1);
    let contextLayer = attentionProbs.view(-1, q, k).bmm(valueLayer);
    contextLayer = contextLayer.view(-1, this.num_attention_heads, contextLayer.shape[1], contextLayer.shape[2]).permute(0, 2, 1, 3).contiguous();
    return contextLayer.view([...contextLayer.shape.slice(0, -2), -1]);
  }

  disentangledAttentionBias(queryLayer, keyLayer, relativePos, relEmbeddings, scaleFactor) {
    const relPos = relativePos.unsqueeze(1).long(); // [1, q, k] -> bsz x height x query x key
    const attSpan = this.pos_ebd_size;
    const relEmb = relEmbeddings.slice(0, 0, attSpan * 2).unsqueeze(0);
    // the position projections, one copy per batch row (query_layer.size(0) // num_attention_heads)
    const repeats = Math.floor(queryLayer.shape[0] / this.num_attention_heads);
    const positions = (proj) => this.transposeForScores(proj.forward(relEmb), this.num_attention_heads).repeat(repeats, 1, 1);
    const c2p = this.pos_att_type.includes('c2p');
    const p2c = this.pos_att_type.includes('p2c');
    const posKeyLayer = c2p ? positions(this.share_att_key ? this.key_proj : this.pos_key_proj) : null;
    const posQueryLayer = p2c ? positions(this.share_att_key ? this.query_proj : this.pos_query_proj) : null;

    let score = null;
    const accumulate = (t) => { score = score === null ? t : score.add(t); };
    const [bh, qLen] = queryLayer.shape;
    const kLen = keyLayer.shape[keyLayer.shape.length - 2];
    if (c2p) { // content->position
      const scale = om.tensor(posKeyLayer.shape[posKeyLayer.shape.length - 1]).mul(scaleFactor).sqrt();
      const c2pPos = relPos.add(attSpan).clamp(0, attSpan * 2 - 1);
      const c2pAtt = queryLayer.bmm(posKeyLayer.transpose(-1, -2))
        .gather(-1, c2pPos.squeeze(0).expand([bh, qLen, relPos.shape[relPos.shape.length - 1]]));
      accumulate(c2pAtt.div(scale));
    }
    if (p2c) { // position->content
      const scale = om.tensor(posQueryLayer.shape[posQueryLayer.shape.length - 1]).mul(scaleFactor).sqrt();
      const rPos = kLen !== qLen ? buildRelativePosition(kLen, kLen, this.position_buckets, this.max_relative_positions).unsqueeze(0) : relPos;
      const p2cPos = rPos.neg().add(attSpan).clamp(0, attSpan * 2 - 1);
      const p2cAtt = keyLayer.bmm(posQueryLayer.transpose(-1, -2))
        .gather(-1, p2cPos.squeeze(0).expand([bh, kLen, kLen])).transpose(-1, -2);
      accumulate(p2cAtt.div(scale));
    }
    return score;
  }
}

/** DebertaV2SelfOutput (and, with intermediate_size inputs, DebertaV2Output): LayerNorm(dense(h) + input). */
export class DebertaV2SelfOutput extends nn.Module {
  constructor(config, inFeatures = config.hidden_size) {
    super();
    this.dense = new nn.Linear(inFeatures, config.hidden_size);
    this.LayerNorm = new nn.LayerNorm(config.hidden_size, { eps: config.layer_norm_eps });
  }

  forward(hiddenStates, inputTensor) {
    return this.LayerNorm.forward(this.dense.forward(hiddenStates).add(inputTensor));
  }
}

export class DebertaV2Attention extends nn.Module {
  constructor(config) {
    super();
    this.self = new DisentangledSelfAttention(config);
    this.output = new DebertaV2SelfOutput(config);
  }

  forward(hiddenStates, attentionMask, relativePos, relEmbeddings) {
    return this.output.forward(this.self.forward(hiddenStates, attentionMask, relativePos, relEmbeddings), hiddenStates);
  }
}

export class DebertaV2Intermediate extends nn.Module {
  constructor(config) {
    super();
    this.dense = new nn.Linear(config.hidden_size, config.intermediate_size);
  }

  forward(hiddenStates) {
    return nn.functional.gelu(this.dense.forward(hiddenStates));
  }
}

export class DebertaV2Layer extends nn.Module {
  constructor(config) {
    super();
    this.attention = new DebertaV2Attention(config);
    this.intermediate = new DebertaV2Intermediate(config);
    this.output = new DebertaV2SelfOutput(config, config.intermediate_size); // DebertaV2Output
  }

  forward(hiddenStates, attentionMask, relativePos, relEmbeddings) {
    const attentionOutput = this.attention.forward(hiddenStates, attentionMask, relativePos, relEmbeddings);
    return this.output.forward(this.intermediate.forward(attentionOutput), attentionOutput);
  }
}

export class DebertaV2Encoder extends nn.Module {
  constructor(config) {
    super();
    this.layer = new nn.ModuleList(Array.from({ length: config.num_hidden_layers }, () => new DebertaV2Layer(config)));
    this.relative_attention = config.relative_attention;
    if (this.relative_attention) {
      this.max_relative_positions = config.max_relative_positions < 1 ? config.max_position_embeddings : config.max_relative_positions;
      this.position_buckets = config.position_buckets;
      const posEbdSize = (this.position_buckets > 0 ? this.position_buckets : this.max_relative_positions) * 2;
      this.rel_embeddings = new nn.Embedding(posEbdSize, config.hidden_size);
    }
    this.norm_rel_ebd = config.norm_rel_ebd.toLowerCase().split('|').map((x) => x.trim());
    if (this.norm_rel_ebd.includes('layer_norm')) this.LayerNorm = new nn.LayerNorm(config.hidden_size, { eps: config.layer_norm_eps });
  }

  getRelEmbedding() {
    const relEmbeddings = this.relative_attention ? this.rel_embeddings.weight : null;
    return relEmbeddings !== null && this.norm_rel_ebd.includes('layer_norm') ? this.LayerNorm.forward(relEmbeddings) : relEmbeddings;
  }

  /** A padding mask [batch, seq] -> [batch, 1, seq, seq]: 1 where both the query and the key are kept. */
  getAttentionMask(attentionMask) {
    const extended = attentionMask.unsqueeze(1).unsqueeze(2);
    return extended.mul(extended.squeeze(-2).unsqueeze(-1));
  }

  forward(hiddenStates, attentionMask) {
    const mask = this.getAttentionMask(attentionMask);
    const seq = hiddenStates.shape[hiddenStates.shape.length - 2];
    const relativePos = this.relative_attention ? buildRelativePosition(seq, seq, this.position_buckets, this.max_relative_positions) : null;
    const relEmbeddings = this.getRelEmbedding();
    let outputStates = hiddenStates;
    for (const layer of this.layer) outputStates = layer.forward(outputStates, mask, relativePos, relEmbeddings);
    return outputStates;
  }
}

export class DebertaV2Embeddings extends nn.Module {
  constructor(config) {
    super();
    this.embedding_size = config.embedding_size ?? config.hidden_size;
    this.word_embeddings = new nn.Embedding(config.vocab_size, this.embedding_size, { paddingIdx: config.pad_token_id });
    this.position_biased_input = config.position_biased_input;
    this.position_embeddings = this.position_biased_input ? new nn.Embedding(config.max_position_embeddings, this.embedding_size) : null;
    this.type_vocab_size = config.type_vocab_size;
    if (this.type_vocab_size > 0) this.token_type_embeddings = new nn.Embedding(config.type_vocab_size, this.embedding_size);
    if (this.embedding_size !== config.hidden_size) this.embed_proj = new nn.Linear(this.embedding_size, config.hidden_size, { bias: false });
    this.hidden_size = config.hidden_size;
    this.LayerNorm = new nn.LayerNorm(config.hidden_size, { eps: config.layer_norm_eps });
    const n = config.max_position_embeddings;
    this.registerBuffer('position_ids', om.tidy(() => om.arange(0, n, { dtype: 'int64' }).expand(1, -1).contiguous()), { persistent: false });
  }

  forward(inputIds, tokenTypeIds, mask) {
    const seqLength = inputIds.shape[1];
    const positionIds = this.position_ids.slice(1, 0, seqLength);
    let embeddings = this.word_embeddings.forward(inputIds);
    if (this.position_embeddings !== null) embeddings = embeddings.add(this.position_embeddings.forward(positionIds));
    if (this.type_vocab_size > 0) embeddings = embeddings.add(this.token_type_embeddings.forward(tokenTypeIds));
    if (this.embedding_size !== this.hidden_size) embeddings = this.embed_proj.forward(embeddings);
    embeddings = this.LayerNorm.forward(embeddings);
    return embeddings.mul(mask.unsqueeze(2).float());
  }
}

export class DebertaV2Model extends nn.Module {
  constructor(config = {}) {
    super();
    const c = portConfig('DebertaV2Model', DEBERTA_V2_DEFAULTS, config, 'hidden_act', 'gelu');
    // DebertaV2Config takes pos_att_type as a list or as upstream's older "p2c|c2p" string
    c.pos_att_type = typeof c.pos_att_type === 'string' ? c.pos_att_type.toLowerCase().split('|').map((x) => x.trim()) : (c.pos_att_type ?? []);
    if (c.conv_kernel_size > 0) throw new Error('DebertaV2Model: conv_kernel_size > 0 (the ConvLayer of deberta-v2-xlarge) is not ported');
    this.config = c;
    this.embeddings = new DebertaV2Embeddings(c);
    this.encoder = new DebertaV2Encoder(c);
  }

  forward(inputIds, attentionMask = null, tokenTypeIds = null) {
    const mask = attentionMask ?? om.ones(inputIds.shape);
    const typeIds = tokenTypeIds ?? om.zeros(inputIds.shape, { dtype: 'int64' });
    return this.encoder.forward(this.embeddings.forward(inputIds, typeIds, mask), mask);
  }
}
