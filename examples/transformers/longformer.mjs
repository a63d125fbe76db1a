// Longformer (Hugging Face transformers' LongformerModel, modeling_longformer.py) ported to onemodel
// as a user ports it: the same modules, names and operations, so a checkpoint's state dict
// (`embeddings.word_embeddings.weight`, `encoder.layer.0.attention.self.query.weight`,
// `encoder.layer.0.attention.self.query_global.weight`, ..., `pooler.dense.weight`) loads with a
// strict loadStateDict. The input is padded to a multiple of `attention_window`
// (`_pad_to_window_size`) and the output sliced back; each token attends to the
// `attention_window / 2` tokens on either side, computed over overlapping chunks as upstream. Upstream
// makes the chunks with `as_strided` views; here they are `unfold` views of the same elements (every
// window of 2w rows at a step of w is `x.unfold(1, 2w, w)` with its last two dims swapped). Tokens
// whose `global_attention_mask` is 1 attend to, and are attended by, every token through the
// `*_global` projections (eager only: upstream finds them with `nonzero` and sizes tensors by their
// count, values a graph cannot hold as sizes; and under om.noGrad, as its in-place writes into views
// of tracked scores are refused with grad on). Upstream writes the local scores into slices of a
// `new_empty` tensor, which onemodel's autograd does not follow: the forward is right, a backward
// through it fails loudly (inference only). Dropout is the identity in eval mode.
// forward(input_ids [batch, seq] int64, attention_mask [batch, seq] (1 keep, 0 pad; default all
// ones), global_attention_mask [batch, seq] (1 global; default none)) ->
// [last_hidden_state [batch, seq, hidden], pooler_output [batch, hidden]].
import * as om from 'onemodel';
import { FLOAT32_MIN, extendedAttentionMask, portConfig } from './modeling_utils.mjs';
import { BertIntermediate, BertPooler, BertSelfOutput } from './bert.mjs';
import { createPositionIdsFromInputIds } from './roberta.mjs';

const nn = om.nn;

/** LongformerConfig's defaults (longformer-base-4096's layout) for the fields this port reads. */
export const LONGFORMER_DEFAULTS = {
  vocab_size: 30522, hidden_size: 768, num_hidden_layers: 12, num_attention_heads: 12, intermediate_size: 3072,
  hidden_act: 'gelu', max_position_embeddings: 512, type_vocab_size: 2, layer_norm_eps: 1e-12, pad_token_id: 1,
  attention_window: 512,
};

/**
 * torch.nonzero(mask, as_tuple=True) of a 2-D bool mask: [rows, cols] int64, in row-major order.
 * The count is a value of the mask, so this reads it (a trace refuses the read, DataDependent).
 */
export function nonzeroAsTuple(mask) {
  const [, n] = mask.shape;
  const at = [...mask.reshape(-1).toArray()].flatMap((v, i) => (v ? [i] : []));
  return [at.map((i) => Math.floor(i / n)), at.map((i) => i % n)].map((v) => om.tensor(v, { dtype: 'int64' }));
}

/** RoBERTa's embeddings: positions from the ids (padding_idx + 1 on), token types; no buffers. */
export class LongformerEmbeddings extends nn.Module {
  constructor(config) {
    super();
    this.word_embeddings = new nn.Embedding(config.vocab_size, config.hidden_size, { paddingIdx: config.pad_token_id });
    this.token_type_embeddings = new nn.Embedding(config.type_vocab_size, config.hidden_size);
    this.LayerNorm = new nn.LayerNorm(config.hidden_size, { eps: config.layer_norm_eps });
    this.dropout = new nn.Dropout(0.1);
    this.padding_idx = config.pad_token_id;
    this.position_embeddings = new nn.Embedding(config.max_position_embeddings, config.hidden_size, { paddingIdx: this.padding_idx });
  }

  forward(inputIds, tokenTypeIds) {
    const positionIds = createPositionIdsFromInputIds(inputIds, this.padding_idx);
    let embeddings = this.word_embeddings.forward(inputIds).add(this.position_embeddings.forward(positionIds));
    embeddings = embeddings.add(this.token_type_embeddings.forward(tokenTypeIds));
    return this.dropout.forward(this.LayerNorm.forward(embeddings));
  }
}

export class LongformerSelfAttention extends nn.Module {
  constructor(config, layerId) {
    super();
    if (config.hidden_size % config.num_attention_heads !== 0) {
      throw new Error(`LongformerSelfAttention: The hidden size (${config.hidden_size}) is not a multiple of the number of attention heads (${config.num_attention_heads})`);
    }
    this.num_heads = config.num_attention_heads;
    this.head_dim = Math.floor(config.hidden_size / config.num_attention_heads);
    this.embed_dim = config.hidden_size;
    this.query = new nn.Linear(config.hidden_size, this.embed_dim);
    this.key = new nn.Linear(config.hidden_size, this.embed_dim);
    this.value = new nn.Linear(config.hidden_size, this.embed_dim);
    // separate projection layers for tokens with global attention
    this.query_global = new nn.Linear(config.hidden_size, this.embed_dim);
    this.key_global = new nn.Linear(config.hidden_size, this.embed_dim);
    this.value_global = new nn.Linear(config.hidden_size, this.embed_dim);
    this.layer_id = layerId;
    const attentionWindow = config.attention_window[layerId];
    if (attentionWindow % 2 !== 0) throw new Error(`LongformerSelfAttention: \`attention_window\` for layer ${layerId} has to be an even value. Given ${attentionWindow}`);
    if (!(attentionWindow > 0)) throw new Error(`LongformerSelfAttention: \`attention_window\` for layer ${layerId} has to be positive. Given ${attentionWindow}`);
    this.one_sided_attn_window_size = attentionWindow / 2;
  }

  /**
   * hiddenStates [batch, seq, hidden] with seq a multiple of the window; attentionMask [batch, seq]:
   * finfo.min where padded, 0 local, positive global.
   */
  forward(hiddenStates, attentionMask, isIndexMasked, isIndexGlobalAttn, isGlobalAttn) {
    const hidden = hiddenStates.transpose(0, 1);
    let queryVectors = this.query.forward(hidden);
    let keyVectors = this.key.forward(hidden);
    let valueVectors = this.value.forward(hidden);
    const [seqLen, batchSize, embedDim] = hidden.shape;
    queryVectors.div_(Math.sqrt(this.head_dim)); // normalize query
    queryVectors = queryVectors.view(seqLen, batchSize, this.num_heads, this.head_dim).transpose(0, 1);
    keyVectors = keyVectors.view(seqLen, batchSize, this.num_heads, this.head_dim).transpose(0, 1);
    const w = this.one_sided_attn_window_size;
    let attnScores = this.slidingChunksQueryKeyMatmul(queryVectors, keyVectors, w);
    // values to pad for attention probs: finfo.min at the padded keys, through the same chunking
    const removeFromWindowedAttentionMask = attentionMask.ne(0).unsqueeze(2).unsqueeze(3);
    const floatMask = removeFromWindowedAttentionMask.typeAs(queryVectors).maskedFill(removeFromWindowedAttentionMask, FLOAT32_MIN);
    const diagonalMask = this.slidingChunksQueryKeyMatmul(floatMask.newOnes(floatMask.shape), floatMask, w);
    attnScores.add_(diagonalMask);
    let g = null;
    if (isGlobalAttn) {
      g = LongformerSelfAttention.getGlobalAttnIndices(isIndexGlobalAttn);
      const globalKeyAttnScores = this.concatWithGlobalKeyAttnProbs(keyVectors, queryVectors, g);
      attnScores = om.cat([globalKeyAttnScores, attnScores], -1);
    }
    let attnProbs = attnScores.softmax(-1);
    // softmax gives NaN where every position is masked (the padded queries): those rows become 0
    attnProbs = attnProbs.maskedFill(isIndexMasked.unsqueeze(2).unsqueeze(3), 0);
    valueVectors = valueVectors.view(seqLen, batchSize, this.num_heads, this.head_dim).transpose(0, 1);
    let attnOutput = isGlobalAttn
      ? this.computeAttnOutputWithGlobalIndices(valueVectors, attnProbs, g)
      : this.slidingChunksMatmulAttnProbsValue(attnProbs, valueVectors, w);
    attnOutput = attnOutput.transpose(0, 1).reshape(seqLen, batchSize, embedDim).contiguous();
    if (isGlobalAttn) {
      // the global tokens' rows are overwritten with their attention over every token
      const globalAttnOutput = this.computeGlobalAttnOutputFromHidden(hidden, g, isIndexMasked);
      const nonzeroGlobalAttnOutput = globalAttnOutput.transpose(1, 2).index(g.isLocalIndexGlobalAttnNonzero);
      attnOutput.indexPut_([...g.isIndexGlobalAttnNonzero].reverse(), nonzeroGlobalAttnOutput.view(g.isLocalIndexGlobalAttnNonzero[0].shape[0], -1));
    }
    return attnOutput.transpose(0, 1);
  }

  /** Pads rows and then flips rows and columns (a view of the other shape, not a transpose). */
  static padAndTransposeLastTwoDims(hiddenStatesPadded, padding) {
    const p = nn.functional.pad(hiddenStatesPadded, padding); // the padding value is overwritten later
    const s = p.shape;
    return p.view(...s.slice(0, -2), s[s.length - 1], s[s.length - 2]);
  }

  /** Shifts every row one step right, turning columns into diagonals. */
  static padAndDiagonalize(chunkedHiddenStates) {
    const [totalNumHeads, numChunks, windowOverlap, hiddenDim] = chunkedHiddenStates.shape;
    let c = nn.functional.pad(chunkedHiddenStates, [0, windowOverlap + 1]);
    c = c.view(totalNumHeads, numChunks, -1).slice(2, 0, -windowOverlap);
    return c.view(totalNumHeads, numChunks, windowOverlap, windowOverlap + hiddenDim).slice(3, 0, -1);
  }

  /**
   * Overlapping chunks of 2w rows, overlapping by w: upstream views [B, L, D] as [B, L / 2w, 2w, D]
   * and as_strided it to [B, L / w - 1, 2w, D] with the chunk stride halved; the same windows are
   * x.unfold(1, 2w, w) ([B, L / w - 1, D, 2w]) with the last two dims swapped.
   */
  static chunk(hiddenStates, windowOverlap) {
    return hiddenStates.unfold(1, windowOverlap * 2, windowOverlap).transpose(-1, -2);
  }

  /** -inf where a window reaches before the sequence's start or past its end (in place). */
  static maskInvalidLocations(inputTensor, affectedSeqLen) {
    const beginningMask2d = inputTensor.newOnes([affectedSeqLen, affectedSeqLen + 1]).tril().flip(0);
    let beginningMask = beginningMask2d.unsqueeze(0).unsqueeze(2); // [None, :, None, :]
    let endingMask = beginningMask.flip(1, 3);
    const beginningInput = inputTensor.slice(1, 0, affectedSeqLen).slice(3, 0, affectedSeqLen + 1);
    beginningMask = beginningMask.expand(beginningInput.shape);
    beginningInput.maskedFill_(beginningMask.eq(1), -Infinity);
    const endingInput = inputTensor.slice(1, -affectedSeqLen).slice(3, -(affectedSeqLen + 1));
    endingMask = endingMask.expand(endingInput.shape);
    endingInput.maskedFill_(endingMask.eq(1), -Infinity);
  }

  /** query, key [batch, seq, heads, headDim] -> scores [batch, seq, heads, 2w + 1] of each query with its 2w + 1 neighbours. */
  slidingChunksQueryKeyMatmul(query, key, windowOverlap) {
    const [batchSize, seqLen, numHeads, headDim] = query.shape;
    if (seqLen % (windowOverlap * 2) !== 0) throw new Error(`LongformerSelfAttention: Sequence length should be multiple of ${windowOverlap * 2}. Given ${seqLen}`);
    const chunksCount = seqLen / windowOverlap - 1;
    // batch and heads into one dim, seq into chunks of 2w
    const q = LongformerSelfAttention.chunk(query.transpose(1, 2).reshape(batchSize * numHeads, seqLen, headDim), windowOverlap);
    const k = LongformerSelfAttention.chunk(key.transpose(1, 2).reshape(batchSize * numHeads, seqLen, headDim), windowOverlap);
    let diagonalChunked = om.einsum('bcxd,bcyd->bcxy', q, k);
    // convert diagonals into columns
    diagonalChunked = LongformerSelfAttention.padAndTransposeLastTwoDims(diagonalChunked, [0, 0, 0, 1]);
    // the w columns before the token, itself, the w after, per chunk of w queries
    let d = diagonalChunked.newEmpty([batchSize * numHeads, chunksCount + 1, windowOverlap, windowOverlap * 2 + 1]);
    const w = windowOverlap;
    // the main diagonal and the upper triangle
    d.slice(1, 0, -1).slice(3, w).copy_(diagonalChunked.slice(2, 0, w).slice(3, 0, w + 1));
    d.select(1, -1).slice(2, w).copy_(diagonalChunked.select(1, -1).slice(1, w).slice(2, 0, w + 1));
    // the lower triangle
    d.slice(1, 1).slice(3, 0, w).copy_(diagonalChunked.slice(2, -(w + 1), -1).slice(3, w + 1));
    d.select(1, 0).slice(1, 1, w).slice(2, 1, w).copy_(diagonalChunked.select(1, 0).slice(1, 0, w - 1).slice(2, 1 - w));
    d = d.view(batchSize, numHeads, seqLen, 2 * w + 1).transpose(2, 1);
    LongformerSelfAttention.maskInvalidLocations(d, w);
    return d;
  }

  /** attnProbs [batch, seq, heads, 2w + 1], value [batch, seq, heads, headDim] -> [batch, seq, heads, headDim]. */
  slidingChunksMatmulAttnProbsValue(attnProbs, value, windowOverlap) {
    const [batchSize, seqLen, numHeads, headDim] = value.shape;
    const w = windowOverlap;
    const chunkedAttnProbs = attnProbs.transpose(1, 2).reshape(batchSize * numHeads, seqLen / w, w, 2 * w + 1);
    const v = value.transpose(1, 2).reshape(batchSize * numHeads, seqLen, headDim);
    // w rows of -1 before and after the sequence (multiplied by probabilities of 0)
    const paddedValue = nn.functional.pad(v, [0, 0, w, w], { value: -1 });
    // chunks of 3w rows at a step of w (upstream's as_strided: size [BH, L / w, 3w, D], chunk stride w * D)
    const chunkedValue = paddedValue.unfold(1, 3 * w, w).transpose(-1, -2);
    const context = om.einsum('bcwd,bcdh->bcwh', LongformerSelfAttention.padAndDiagonalize(chunkedAttnProbs), chunkedValue);
    return context.view(batchSize, numHeads, seqLen, headDim).transpose(1, 2);
  }

  /** The global tokens' positions, their count per row, and the places of a [batch, max count] table. */
  static getGlobalAttnIndices(isIndexGlobalAttn) {
    const numGlobalAttnIndices = isIndexGlobalAttn.long().sum(1);
    const maxNumGlobalAttnIndices = numGlobalAttnIndices.max().item();
    const isIndexGlobalAttnNonzero = nonzeroAsTuple(isIndexGlobalAttn);
    const isLocalIndexGlobalAttn = om.arange(0, maxNumGlobalAttnIndices, { dtype: 'int64' }).lt(numGlobalAttnIndices.unsqueeze(-1));
    return {
      maxNumGlobalAttnIndices,
      isIndexGlobalAttnNonzero,
      isLocalIndexGlobalAttnNonzero: nonzeroAsTuple(isLocalIndexGlobalAttn),
      isLocalIndexNoGlobalAttnNonzero: nonzeroAsTuple(isLocalIndexGlobalAttn.eq(0)),
    };
  }

  concatWithGlobalKeyAttnProbs(keyVectors, queryVectors, g) {
    const batchSize = keyVectors.shape[0];
    const keyVectorsOnlyGlobal = keyVectors.newZeros([batchSize, g.maxNumGlobalAttnIndices, this.num_heads, this.head_dim]);
    keyVectorsOnlyGlobal.indexPut_(g.isLocalIndexGlobalAttnNonzero, keyVectors.index(g.isIndexGlobalAttnNonzero));
    const attnProbsFromGlobalKey = om.einsum('blhd,bshd->blhs', queryVectors, keyVectorsOnlyGlobal);
    // [i0, :, :, i1] = finfo.min: the slots of rows with fewer global tokens
    attnProbsFromGlobalKey.permute(0, 3, 1, 2).indexPut_(g.isLocalIndexNoGlobalAttnNonzero, FLOAT32_MIN);
    return attnProbsFromGlobalKey;
  }

  computeAttnOutputWithGlobalIndices(valueVectors, attnProbs, g) {
    const batchSize = attnProbs.shape[0];
    const n = g.maxNumGlobalAttnIndices;
    const attnProbsOnlyGlobal = attnProbs.narrow(-1, 0, n);
    const valueVectorsOnlyGlobal = valueVectors.newZeros([batchSize, n, this.num_heads, this.head_dim]);
    valueVectorsOnlyGlobal.indexPut_(g.isLocalIndexGlobalAttnNonzero, valueVectors.index(g.isIndexGlobalAttnNonzero));
    const attnOutputOnlyGlobal = attnProbsOnlyGlobal.transpose(1, 2).clone().matmul(valueVectorsOnlyGlobal.transpose(1, 2).clone()).transpose(1, 2);
    const attnProbsWithoutGlobal = attnProbs.narrow(-1, n, attnProbs.shape[3] - n).contiguous();
    const attnOutputWithoutGlobal = this.slidingChunksMatmulAttnProbsValue(attnProbsWithoutGlobal, valueVectors, this.one_sided_attn_window_size);
    return attnOutputOnlyGlobal.add(attnOutputWithoutGlobal);
  }

  computeGlobalAttnOutputFromHidden(hiddenStates, g, isIndexMasked) {
    const [seqLen, batchSize] = hiddenStates.shape;
    const n = g.maxNumGlobalAttnIndices;
    const globalAttnHiddenStates = hiddenStates.newZeros([n, batchSize, this.embed_dim]);
    globalAttnHiddenStates.indexPut_([...g.isLocalIndexGlobalAttnNonzero].reverse(), hiddenStates.index([...g.isIndexGlobalAttnNonzero].reverse()));
    let globalQueryVectorsOnlyGlobal = this.query_global.forward(globalAttnHiddenStates);
    let globalKeyVectors = this.key_global.forward(hiddenStates);
    let globalValueVectors = this.value_global.forward(hiddenStates);
    globalQueryVectorsOnlyGlobal.div_(Math.sqrt(this.head_dim));
    globalQueryVectorsOnlyGlobal = globalQueryVectorsOnlyGlobal.contiguous().view(n, batchSize * this.num_heads, this.head_dim).transpose(0, 1);
    globalKeyVectors = globalKeyVectors.contiguous().view(-1, batchSize * this.num_heads, this.head_dim).transpose(0, 1);
    globalValueVectors = globalValueVectors.contiguous().view(-1, batchSize * this.num_heads, this.head_dim).transpose(0, 1);
    let globalAttnScores = om.bmm(globalQueryVectorsOnlyGlobal, globalKeyVectors.transpose(1, 2));
    globalAttnScores = globalAttnScores.view(batchSize, this.num_heads, n, seqLen);
    globalAttnScores.transpose(1, 2).indexPut_(g.isLocalIndexNoGlobalAttnNonzero, FLOAT32_MIN); // [i0, :, i1, :]
    globalAttnScores = globalAttnScores.maskedFill(isIndexMasked.unsqueeze(1).unsqueeze(2), FLOAT32_MIN);
    globalAttnScores = globalAttnScores.view(batchSize * this.num_heads, n, seqLen);
    const globalAttnOutput = om.bmm(globalAttnScores.softmax(-1), globalValueVectors);
    return globalAttnOutput.view(batchSize, this.num_heads, n, this.head_dim);
  }
}

export class LongformerAttention extends nn.Module {
  constructor(config, layerId = 0) {
    super();
    this.self = new LongformerSelfAttention(config, layerId);
    this.output = new BertSelfOutput(config, config.hidden_size);
  }

  forward(hiddenStates, ...masks) {
    return this.output.forward(this.self.forward(hiddenStates, ...masks), hiddenStates);
  }
}

export class LongformerLayer extends nn.Module {
  constructor(config, layerId = 0) {
    super();
    this.attention = new LongformerAttention(config, layerId);
    this.intermediate = new BertIntermediate(config);
    this.output = new BertSelfOutput(config, config.intermediate_size);
  }

  forward(hiddenStates, ...masks) {
    const attnOutput = this.attention.forward(hiddenStates, ...masks);
    return this.output.forward(this.intermediate.forward(attnOutput), attnOutput);
  }
}

export class LongformerEncoder extends nn.Module {
  constructor(config) {
    super();
    this.layer = new nn.ModuleList(Array.from({ length: config.num_hidden_layers }, (_, i) => new LongformerLayer(config, i)));
  }

  /**
   * hasGlobal: whether a global_attention_mask came. Upstream reads `is_index_global_attn.any()`
   * always; without a global mask the attention mask holds no positive value (1 keep, 0 pad), so
   * the answer is known and the read (which a trace refuses) is left out.
   */
  forward(hiddenStates, attentionMask, paddingLen, hasGlobal) {
    const isIndexMasked = attentionMask.lt(0);
    const isIndexGlobalAttn = attentionMask.gt(0);
    const isGlobalAttn = hasGlobal && isIndexGlobalAttn.flatten().any().item() !== 0;
    let h = hiddenStates;
    for (const layer of this.layer) h = layer.forward(h, attentionMask, isIndexMasked, isIndexGlobalAttn, isGlobalAttn);
    // undo padding: the caller expects input_ids' length
    if (paddingLen > 0) h = h.slice(1, 0, -paddingLen);
    return h;
  }
}

export class LongformerModel extends nn.Module {
  constructor(config = {}) {
    super();
    const c = portConfig('LongformerModel', LONGFORMER_DEFAULTS, config, 'hidden_act', 'gelu');
    if (typeof c.attention_window === 'number') {
      if (c.attention_window % 2 !== 0) throw new Error('LongformerModel: `config.attention_window` has to be an even value');
      if (!(c.attention_window > 0)) throw new Error('LongformerModel: `config.attention_window` has to be positive');
      c.attention_window = Array.from({ length: c.num_hidden_layers }, () => c.attention_window); // one value per layer
    } else if (c.attention_window.length !== c.num_hidden_layers) {
      throw new Error(`LongformerModel: \`len(config.attention_window)\` should equal \`config.num_hidden_layers\`. Expected ${c.num_hidden_layers}, given ${c.attention_window.length}`);
    }
    this.config = c;
    this.embeddings = new LongformerEmbeddings(c);
    this.encoder = new LongformerEncoder(c);
    this.pooler = new BertPooler(c);
  }

  /** Pads ids, mask and token types to a multiple of the largest window (the padding attends to nothing). */
  padToWindowSize(inputIds, attentionMask, tokenTypeIds, padTokenId) {
    const attentionWindow = Math.max(...this.config.attention_window);
    const seqLen = inputIds.shape[1];
    const paddingLen = (attentionWindow - (seqLen % attentionWindow)) % attentionWindow;
    if (paddingLen > 0) {
      inputIds = nn.functional.pad(inputIds, [0, paddingLen], { value: padTokenId });
      attentionMask = nn.functional.pad(attentionMask, [0, paddingLen], { value: 0 }); // no attention on the padding tokens
      tokenTypeIds = nn.functional.pad(tokenTypeIds, [0, paddingLen], { value: 0 });
    }
    return [paddingLen, inputIds, attentionMask, tokenTypeIds];
  }

  /** 0 no attention, 1 local, 2 global. */
  mergeToAttentionMask(attentionMask, globalAttentionMask) {
    return attentionMask.mul(globalAttentionMask.add(1));
  }

  forward(inputIds, attentionMask = null, globalAttentionMask = null) {
    const inputShape = inputIds.shape;
    let mask = attentionMask ?? om.ones(inputShape);
    let tokenTypeIds = om.zeros(inputShape, { dtype: 'int64' });
    if (globalAttentionMask !== null) mask = this.mergeToAttentionMask(mask, globalAttentionMask);
    let paddingLen;
    [paddingLen, inputIds, mask, tokenTypeIds] = this.padToWindowSize(inputIds, mask, tokenTypeIds, this.config.pad_token_id);
    // [:, 0, 0, :] of the additive mask: finfo.min padded, 0 local, -finfo.min (positive) global
    const extended = extendedAttentionMask(mask).select(1, 0).select(1, 0);
    const embeddingOutput = this.embeddings.forward(inputIds, tokenTypeIds);
    const sequenceOutput = this.encoder.forward(embeddingOutput, extended, paddingLen, globalAttentionMask !== null);
    return [sequenceOutput, this.pooler.forward(sequenceOutput)];
  }
}
