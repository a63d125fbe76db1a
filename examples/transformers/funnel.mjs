// Funnel Transformer's base model (Hugging Face transformers' FunnelBaseModel, modeling_funnel.py)
// ported to onemodel as a user ports it: the same modules, names and operations, so a checkpoint's
// state dict (`embeddings.word_embeddings.weight`, `encoder.blocks.0.0.attention.q_head.weight`,
// `encoder.blocks.0.0.attention.r_w_bias`, ..., `encoder.blocks.2.0.ffn.layer_norm.bias`) loads
// with a strict loadStateDict. Before each block after the first the encoder halves the sequence
// (T -> ceil(T / 2): a mean pool of stride 2 with ceil_mode), keeping the CLS token apart
// (`separate_cls`) and dropping the last token (`truncate_seq`), the queries only (`pool_q_only`);
// the attention is relative_shift: the position vectors R of every block are computed at the
// run's length (rows of a sinusoid table gathered at `arange(max_dist, min_dist - 1, -stride)`),
// and the positional scores are shifted into place by a reshape and two slices
// (`_relative_shift_gather`). Dropout is the identity in eval mode.
// forward(input_ids [batch, seq] int64, attention_mask [batch, seq] (1 keep, 0 pad; default all
// ones), token_type_ids [batch, seq] (2 for the CLS token; default zeros)) -> last_hidden_state
// [batch, pooled seq, d_model]. As upstream, the sequence needs at least 2 + 1 tokens per pooling
// block (5 with three blocks): below, the position vectors made for the pooled blocks do not fit.
import * as om from 'onemodel';
import { portConfig } from './modeling_utils.mjs';
import { geluNew } from './gpt2.mjs';

const nn = om.nn;
const F = nn.functional;

/** FunnelConfig's defaults (funnel-transformer/small's sizes) for the fields this port reads. */
export const FUNNEL_DEFAULTS = {
  vocab_size: 30522, block_sizes: [4, 4, 4], block_repeats: null, d_model: 768, n_head: 12, d_head: 64, d_inner: 3072,
  hidden_act: 'gelu_new', layer_norm_eps: 1e-9, pooling_type: 'mean', attention_type: 'relative_shift',
  separate_cls: true, truncate_seq: true, pool_q_only: true, pad_token_id: null,
};

/** The additive mask value upstream subtracts at padded keys. */
export const INF = 1e6;

export class FunnelEmbeddings extends nn.Module {
  constructor(config) {
    super();
    this.word_embeddings = new nn.Embedding(config.vocab_size, config.d_model, { paddingIdx: config.pad_token_id });
    this.layer_norm = new nn.LayerNorm(config.d_model, { eps: config.layer_norm_eps });
  }

  forward(inputIds) {
    return this.layer_norm.forward(this.word_embeddings.forward(inputIds));
  }
}

/** The attention's inputs (position vectors, token-type matrix, mask, cls mask) and their pooling. */
export class FunnelAttentionStructure extends nn.Module {
  static cls_token_type_id = 2;

  constructor(config) {
    super();
    this.config = config;
  }

  /** [positionEmbeds, tokenTypeMat, attentionMask, clsMask] of inputs_embeds [batch, seq, d_model]. */
  initAttentionInputs(inputsEmbeds, attentionMask, tokenTypeIds) {
    const seqLen = inputsEmbeds.shape[1];
    const positionEmbeds = this.getPositionEmbeds(seqLen);
    const tokenTypeMat = tokenTypeIds === null ? null : this.tokenTypeIdsToMat(tokenTypeIds);
    // F.pad(inputs_embeds.new_ones([seq_len - 1, seq_len - 1]), (1, 0, 1, 0)): 0 on the CLS row and column
    const clsMask = this.config.separate_cls ? F.pad(om.ones([seqLen - 1, seqLen - 1]), [1, 0, 1, 0]) : null;
    return [positionEmbeds, tokenTypeMat, attentionMask, clsMask];
  }

  /** [batch, seq, seq] bool: same segment, or either token the CLS (of both segments). */
  tokenTypeIdsToMat(tokenTypeIds) {
    const tokenTypeMat = tokenTypeIds.unsqueeze(2).eq(tokenTypeIds.unsqueeze(1));
    const clsIds = tokenTypeIds.eq(FunnelAttentionStructure.cls_token_type_id);
    const clsMat = clsIds.unsqueeze(2).logicalOr(clsIds.unsqueeze(1));
    return clsMat.logicalOr(tokenTypeMat);
  }

  /**
   * relative_shift's position vectors R: for each block, [noPooling, pooling] (the first block's
   * pooling one null), each [relative positions, d_model], rows of the sinusoid table of the
   * relative positions -2 seq .. 2 seq - 1.
   */
  getPositionEmbeds(seqLen) {
    const dModel = this.config.d_model;
    const freqSeq = om.arange(0, Math.floor(dModel / 2), 1, { dtype: 'int64' }).float();
    const invFreq = om.ones([]).div(om.full([], 10000).pow(freqSeq.div(Math.floor(dModel / 2))));
    // maximum relative positions for the first input
    const relPosId = om.arange(-seqLen * 2, seqLen * 2, 1, { dtype: 'int64' }).float();
    const zeroOffset = seqLen * 2;
    const sinusoid = relPosId.unsqueeze(1).mul(invFreq.unsqueeze(0));
    const posEmbed = om.cat([sinusoid.sin(), sinusoid.cos()], -1);

    let pos = om.arange(0, seqLen, { dtype: 'int64' }).float();
    let pooledPos = pos;
    const positionEmbedsList = [];
    for (let blockIndex = 0; blockIndex < this.config.block_sizes.length; blockIndex++) {
      // for each block after the first, two kinds: attention(pooled q, unpooled kv) and attention(pooled q, pooled kv)
      let positionEmbedsPooling = null;
      if (blockIndex > 0) {
        pooledPos = this.stridePoolPos(pos, blockIndex);
        const stride = 2 ** (blockIndex - 1);
        const relPos = this.relativePos(pos, stride, pooledPos, 2).unsqueeze(1).add(zeroOffset);
        positionEmbedsPooling = posEmbed.gather(0, relPos.expand(relPos.shape[0], dModel));
      }
      pos = pooledPos;
      const stride = 2 ** blockIndex;
      const relPos = this.relativePos(pos, stride).unsqueeze(1).add(zeroOffset);
      const positionEmbedsNoPooling = posEmbed.gather(0, relPos.expand(relPos.shape[0], dModel));
      positionEmbedsList.push([positionEmbedsNoPooling, positionEmbedsPooling]);
    }
    return positionEmbedsList;
  }

  /** Pools the positions keeping the CLS apart: it sits at 1 - 2 ** blockIndex, the block before the first real one. */
  stridePoolPos(posId, blockIndex) {
    if (this.config.separate_cls) {
      const clsPos = om.tensor([-(2 ** blockIndex) + 1]); // pos_id.new_tensor (pos_id is float32)
      const pooledPosId = this.config.truncate_seq ? posId.slice(0, 1, -1) : posId.slice(0, 1);
      return om.cat([clsPos, pooledPosId.slice(0, 0, Infinity, 2)], 0);
    }
    return posId.slice(0, 0, Infinity, 2);
  }

  /** The relative positions between pos and pooledPos: arange(max_dist, min_dist - 1, -stride) (int64). */
  relativePos(pos, stride, pooledPos = null, shift = 1) {
    const pooled = pooledPos ?? pos;
    // upstream keeps these as 0-dim tensors that torch.arange reads; .item() reads them here
    // (positions made from sizes, not from the input: no data-dependent read)
    const refPoint = pooled.select(0, 0).sub(pos.select(0, 0)).item();
    const numRemove = shift * pooled.shape[0];
    const maxDist = refPoint + numRemove * stride;
    const minDist = pooled.select(0, 0).sub(pos.select(0, -1)).item();
    return om.arange(maxDist, minDist - 1, -stride, { dtype: 'int64' });
  }

  /** Pooling by stride slicing along axis (or each of axes), keeping the CLS apart. */
  stridePool(tensor, axis) {
    if (tensor === null) return null;
    if (Array.isArray(axis)) {
      let t = tensor;
      for (const ax of axis) t = this.stridePool(t, ax);
      return t;
    }
    const a = ((axis % tensor.dim()) + tensor.dim()) % tensor.dim();
    let t = tensor;
    if (this.config.separate_cls) t = om.cat([t.slice(a, 0, 1), t], a);
    // slice(None, -1, 2) with separate_cls and truncate_seq, else slice(None, None, 2)
    return this.config.separate_cls && this.config.truncate_seq ? t.slice(a, 0, -1, 2) : t.slice(a, 0, Infinity, 2);
  }

  /** 1-D pooling of [B, T] or [B, T, H] along T by stride (mean, max or min), ceil mode. */
  poolTensor(tensor, mode = 'mean', stride = 2) {
    if (tensor === null) return null;
    let t = tensor;
    if (this.config.separate_cls) {
      const suffix = this.config.truncate_seq ? t.slice(1, 0, -1) : t;
      t = om.cat([t.slice(1, 0, 1), suffix], 1);
    }
    const ndim = t.dim();
    t = ndim === 2 ? t.unsqueeze(1).unsqueeze(3) : t.unsqueeze(1); // [:, None, :, None] or [:, None, :, :]
    const options = { stride: [stride, 1], ceilMode: true }; // the stride applied on the second-to-last dimension
    if (mode === 'mean') t = F.avgPool2d(t, [stride, 1], options);
    else if (mode === 'max') t = F.maxPool2d(t, [stride, 1], options);
    else if (mode === 'min') t = F.maxPool2d(t.neg(), [stride, 1], options).neg();
    else throw new Error("The supported modes are 'mean', 'max' and 'min'.");
    return ndim === 2 ? t.select(3, 0).select(1, 0) : t.select(1, 0);
  }

  /** Pools output and the parts of the attention inputs the attention needs pooled before it. */
  preAttentionPooling(output, attentionInputs) {
    let [positionEmbeds, tokenTypeMat, attentionMask, clsMask] = attentionInputs;
    if (this.config.pool_q_only) {
      tokenTypeMat = this.stridePool(tokenTypeMat, 1);
      clsMask = this.stridePool(clsMask, 0);
    } else {
      tokenTypeMat = this.stridePool(tokenTypeMat, [1, 2]);
      clsMask = this.stridePool(clsMask, [1, 2]);
      attentionMask = this.poolTensor(attentionMask, 'min');
    }
    const pooled = this.poolTensor(output, this.config.pooling_type);
    return [pooled, [positionEmbeds, tokenTypeMat, attentionMask, clsMask]];
  }

  /** Pools the rest of the attention inputs after the attention (pool_q_only). */
  postAttentionPooling(attentionInputs) {
    let [positionEmbeds, tokenTypeMat, attentionMask, clsMask] = attentionInputs;
    if (this.config.pool_q_only) {
      tokenTypeMat = this.stridePool(tokenTypeMat, 2);
      clsMask = this.stridePool(clsMask, 1);
      attentionMask = this.poolTensor(attentionMask, 'min');
    }
    return [positionEmbeds, tokenTypeMat, attentionMask, clsMask];
  }
}

/**
 * The positional scores [b, n, seq, maxRelLen] shifted so that entry (i, j) holds relative position
 * i - j: the same as gathering at context_len + j - i, in reshapes and slices.
 */
export function relativeShiftGather(positionalAttn, contextLen, shift) {
  const [batchSize, nHead, seqLen, maxRelLen] = positionalAttn.shape;
  let p = positionalAttn.reshape(batchSize, nHead, maxRelLen, seqLen);
  p = p.slice(2, shift);
  p = p.reshape(batchSize, nHead, seqLen, maxRelLen - shift);
  return p.slice(3, 0, contextLen);
}

export class FunnelRelMultiheadAttention extends nn.Module {
  constructor(config, blockIndex) {
    super();
    this.config = config;
    this.block_index = blockIndex;
    const { d_model: dModel, n_head: nHead, d_head: dHead } = config;
    this.q_head = new nn.Linear(dModel, nHead * dHead, { bias: false });
    this.k_head = new nn.Linear(dModel, nHead * dHead);
    this.v_head = new nn.Linear(dModel, nHead * dHead);
    const param = (shape) => {
      const p = om.zeros(shape);
      p.requiresGrad = true;
      return p;
    };
    this.r_w_bias = param([nHead, dHead]);
    this.r_r_bias = param([nHead, dHead]);
    this.r_kernel = param([dModel, nHead, dHead]);
    this.r_s_bias = param([nHead, dHead]);
    this.seg_embed = param([2, nHead, dHead]);
    this.post_proj = new nn.Linear(nHead * dHead, dModel);
    this.layer_norm = new nn.LayerNorm(dModel, { eps: config.layer_norm_eps });
    this.scale = 1.0 / dHead ** 0.5;
  }

  /** The positional scores [b, n, seq, context]. */
  relativePositionalAttention(positionEmbeds, qHead, contextLen, clsMask = null) {
    const shift = qHead.shape[1] !== contextLen ? 2 : 1;
    // the positional encodings of this block and shift, [maxRelLen, d_model]
    const r = positionEmbeds[this.block_index][shift - 1];
    const v = this.r_r_bias.mul(this.scale);
    const rHead = om.einsum('td,dnh->tnh', r, this.r_kernel);
    let positionalAttn = om.einsum('binh,tnh->bnit', qHead.add(v), rHead);
    positionalAttn = relativeShiftGather(positionalAttn, contextLen, shift);
    if (clsMask !== null) positionalAttn.mul_(clsMask);
    return positionalAttn;
  }

  /** The token-type scores [b, n, seq, context]: the same-segment or the other-segment bias of each query. */
  relativeTokenTypeAttention(tokenTypeMat, qHead, clsMask = null) {
    if (tokenTypeMat === null) return 0;
    const [batchSize, seqLen, contextLen] = tokenTypeMat.shape;
    const rSBias = this.r_s_bias.mul(this.scale);
    const tokenTypeBias = om.einsum('bind,snd->bnis', qHead.add(rSBias), this.seg_embed);
    const mat = tokenTypeMat.unsqueeze(1).expand(batchSize, qHead.shape[2], seqLen, contextLen);
    const [diffTokenType, sameTokenType] = tokenTypeBias.split(1, -1);
    const tokenTypeAttn = om.where(mat, sameTokenType.expand(mat.shape), diffTokenType.expand(mat.shape));
    if (clsMask !== null) tokenTypeAttn.mul_(clsMask);
    return tokenTypeAttn;
  }

  forward(query, key, value, attentionInputs) {
    const [positionEmbeds, tokenTypeMat, attentionMask, clsMask] = attentionInputs;
    const [batchSize, seqLen] = query.shape;
    const contextLen = key.shape[1];
    const { n_head: nHead, d_head: dHead } = this.config;
    let qHead = this.q_head.forward(query).view(batchSize, seqLen, nHead, dHead);
    const kHead = this.k_head.forward(key).view(batchSize, contextLen, nHead, dHead);
    const vHead = this.v_head.forward(value).view(batchSize, contextLen, nHead, dHead);
    qHead = qHead.mul(this.scale);
    const rWBias = this.r_w_bias.mul(this.scale);
    const contentScore = om.einsum('bind,bjnd->bnij', qHead.add(rWBias), kHead);
    const positionalAttn = this.relativePositionalAttention(positionEmbeds, qHead, contextLen, clsMask);
    const tokenTypeAttn = this.relativeTokenTypeAttention(tokenTypeMat, qHead, clsMask);
    let attnScore = contentScore.add(positionalAttn).add(tokenTypeAttn);
    if (attentionMask !== null) {
      // attn_score - INF * (1 - attention_mask[:, None, None].float())
      attnScore = attnScore.sub(attentionMask.unsqueeze(1).unsqueeze(2).float().neg().add(1).mul(INF));
    }
    const attnProb = attnScore.softmax(-1);
    const attnVec = om.einsum('bnij,bjnd->bind', attnProb, vHead);
    const attnOut = this.post_proj.forward(attnVec.reshape(batchSize, seqLen, nHead * dHead));
    return this.layer_norm.forward(query.add(attnOut));
  }
}

export class FunnelPositionwiseFFN extends nn.Module {
  constructor(config) {
    super();
    this.linear_1 = new nn.Linear(config.d_model, config.d_inner);
    this.linear_2 = new nn.Linear(config.d_inner, config.d_model);
    this.layer_norm = new nn.LayerNorm(config.d_model, { eps: config.layer_norm_eps });
  }

  forward(hidden) {
    return this.layer_norm.forward(hidden.add(this.linear_2.forward(geluNew(this.linear_1.forward(hidden)))));
  }
}

export class FunnelLayer extends nn.Module {
  constructor(config, blockIndex) {
    super();
    this.attention = new FunnelRelMultiheadAttention(config, blockIndex);
    this.ffn = new FunnelPositionwiseFFN(config);
  }

  forward(query, key, value, attentionInputs) {
    return this.ffn.forward(this.attention.forward(query, key, value, attentionInputs));
  }
}

export class FunnelEncoder extends nn.Module {
  constructor(config) {
    super();
    this.config = config;
    this.attention_structure = new FunnelAttentionStructure(config);
    this.blocks = new nn.ModuleList(config.block_sizes.map((blockSize, blockIndex) =>
      new nn.ModuleList(Array.from({ length: blockSize }, () => new FunnelLayer(config, blockIndex)))));
  }

  forward(inputsEmbeds, attentionMask, tokenTypeIds) {
    const c = this.config;
    // the pooling is not implemented on long tensors, so the mask is made float
    const mask = attentionMask.float();
    let attentionInputs = this.attention_structure.initAttentionInputs(inputsEmbeds, mask, tokenTypeIds);
    let hidden = inputsEmbeds;
    const blockRepeats = c.block_repeats ?? c.block_sizes.map(() => 1);
    for (const [blockIndex, block] of [...this.blocks].entries()) {
      const poolingFlag = hidden.shape[1] > (c.separate_cls ? 2 : 1) && blockIndex > 0;
      let pooledHidden = null;
      if (poolingFlag) [pooledHidden, attentionInputs] = this.attention_structure.preAttentionPooling(hidden, attentionInputs);
      for (const [layerIndex, layer] of [...block].entries()) {
        for (let repeatIndex = 0; repeatIndex < blockRepeats[blockIndex]; repeatIndex++) {
          const doPooling = repeatIndex === 0 && layerIndex === 0 && poolingFlag;
          let query = hidden, key = hidden, value = hidden;
          if (doPooling) {
            query = pooledHidden;
            if (!c.pool_q_only) key = value = pooledHidden;
          }
          hidden = layer.forward(query, key, value, attentionInputs);
          if (doPooling) attentionInputs = this.attention_structure.postAttentionPooling(attentionInputs);
        }
      }
    }
    return hidden;
  }
}

/** FunnelBaseModel: the embeddings and the encoder, without the decoder's upsampling. */
export class FunnelBaseModel extends nn.Module {
  constructor(config = {}) {
    super();
    const c = portConfig('FunnelBaseModel', FUNNEL_DEFAULTS, config, 'attention_type', 'relative_shift');
    if (c.hidden_act !== 'gelu_new') throw new Error(`FunnelBaseModel: hidden_act ${JSON.stringify(c.hidden_act)} is not ported (only gelu_new)`);
    this.config = c;
    this.embeddings = new FunnelEmbeddings(c);
    this.encoder = new FunnelEncoder(c);
  }

  forward(inputIds, attentionMask = null, tokenTypeIds = null) {
    const mask = attentionMask ?? om.ones(inputIds.shape);
    const types = tokenTypeIds ?? om.zeros(inputIds.shape, { dtype: 'int64' });
    return this.encoder.forward(this.embeddings.forward(inputIds), mask, types);
  }
}
