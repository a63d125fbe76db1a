// The LongT5 encoder (Hugging Face transformers' LongT5EncoderModel, modeling_longt5.py) ported to
// onemodel as a user ports it, with both encoder attention kinds: `local` (LongT5LocalAttention:
// each query block of block_len = local_radius + 1 tokens attends to its own and the two
// neighbouring blocks) and `transient-global` (LongT5TransientGlobalAttention: also to
// seq_len // global_block_size global tokens, each the sum of a fixed block of tokens, made anew in
// every layer). The same modules, names and operations as upstream, so a checkpoint's state dict
// (`shared.weight`, `encoder.embed_tokens.weight` (the same table), `encoder.block.0.layer.0.
// LocalSelfAttention.q.weight` or `...TransientGlobalSelfAttention.global_relative_attention_bias.
// weight`, ..., `encoder.final_layer_norm.weight`) loads with a strict loadStateDict. The layer
// norm, the feed-forward layer and the relative position buckets are T5's (upstream copies them
// from modeling_t5.py; here they are imported from t5.mjs). Dropout is the identity in eval mode.
// forward(input_ids [batch, seq] int64, attention_mask [batch, seq] (1 keep, 0 pad; default all
// ones)) -> last_hidden_state [batch, seq, d_model].
import * as om from 'onemodel';
import { portConfig } from './modeling_utils.mjs';
import { T5LayerFF, T5LayerNorm, relativePositionBucket } from './t5.mjs';

const nn = om.nn;
const F = nn.functional;

/** LongT5Config's defaults for the fields this port reads. */
export const LONGT5_DEFAULTS = {
  vocab_size: 32128, d_model: 512, d_kv: 64, d_ff: 2048, num_layers: 6, num_heads: 8, local_radius: 127, global_block_size: 16,
  relative_attention_num_buckets: 32, relative_attention_max_distance: 128, layer_norm_epsilon: 1e-6, feed_forward_proj: 'relu',
  encoder_attention_type: 'local',
};

/** Python's a % b for a positive b: never negative. */
const pyMod = (a, b) => ((a % b) + b) % b;

/** F.pad's list for padding dim (negative counts from the end) by [before, after] in an n-dim tensor: pairs from the last dim back. */
function padPairs(ndim, dim, before, after) {
  const pad = Array.from({ length: ndim }, () => [0, 0]);
  pad.at(dim)[0] = before;
  pad.at(dim)[1] = after;
  return pad.reverse().flat(); // sum(pad[::-1], ())
}

/** _pad_to_multiple: x padded with pad_value at the end of dim to a multiple of block_len. */
export function padToMultiple(x, blockLen, dim, padValue = 0) {
  const padLen = pyMod(-x.shape.at(dim), blockLen);
  // Handle cases when an empty input sequence is given
  if (!x.shape.every((s) => s !== 0)) {
    const newShape = [...x.shape];
    newShape[dim < 0 ? newShape.length + dim : dim] += padLen;
    return om.zeros(newShape, { dtype: x.dtype });
  }
  return F.pad(x, padPairs(x.shape.length, dim, 0, padLen), { mode: 'constant', value: padValue });
}

/** _split_into_blocks: [..., len, ...] -> [..., num_blocks, block_len, ...] along dim, padded first when len is not a multiple. */
export function splitIntoBlocks(x, blockLen, dim) {
  if (x.shape.at(dim) % blockLen !== 0) x = padToMultiple(x, blockLen, dim, 0);
  const d = dim < 0 ? x.shape.length + dim : dim;
  const numBlocks = Math.floor(x.shape[d] / blockLen);
  const outputShape = [...x.shape.slice(0, d), numBlocks, blockLen, ...x.shape.slice(d + 1)];
  // If 0 is in output_shape, we cannot apply reshape because of incompatibility with ONNX conversion
  if (outputShape.includes(0)) return om.empty(outputShape, { dtype: x.dtype });
  return x.reshape(outputShape);
}

/** _concatenate_3_blocks: each block with the one before and after it (zeros past the ends), cat along sequenceDim. */
export function concatenate3Blocks(x, blockDim, sequenceDim, padValue = 0) {
  const numBlocks = x.shape[blockDim];
  // [batch_size, num_blocks, block_len] -> [batch_size, num_blocks + 2, block_len]
  x = F.pad(x, padPairs(x.shape.length, blockDim, 1, 1), { mode: 'constant', value: padValue });
  const blocksList = [];
  for (let i = 0; i < 3; i++) blocksList.push(x.slice(blockDim, i, i + numBlocks)); // x[..., i:i + num_blocks, ...]
  return om.cat(blocksList, sequenceDim);
}

/** _make_3block_relative_position_ids: [block_len, 3 * block_len], key position minus the centre block's query position. */
export function make3blockRelativePositionIds(blockLen) {
  const positionIds = om.arange(0, 3 * blockLen, { dtype: 'int64' }); // int32 upstream; the values are small
  const centerPositionIds = positionIds.slice(0, blockLen, -blockLen);
  return positionIds.unsqueeze(0).sub(centerPositionIds.unsqueeze(1));
}

/** _mask_local_attention_mask: tokens attend to no key farther than local_radius. */
export function maskLocalAttentionMask(localAttentionMask, blockLen) {
  const relativePositionIds = make3blockRelativePositionIds(blockLen);
  const localityMask = relativePositionIds.abs().lt(blockLen).unsqueeze(0).unsqueeze(0); // [None, None, :, :]
  return om.logicalAnd(localAttentionMask, localityMask);
}

/** _get_local_attention_mask: [batch, seq] -> [batch, 1, num_blocks, block_len, 3 * block_len] bool. */
export function getLocalAttentionMask(attentionMask, blockLen) {
  let blockedAttentionMask = splitIntoBlocks(attentionMask, blockLen, 1);
  let threeBlockedAttentionMask = concatenate3Blocks(blockedAttentionMask, 1, 2);
  blockedAttentionMask = blockedAttentionMask.unsqueeze(-1);
  threeBlockedAttentionMask = threeBlockedAttentionMask.unsqueeze(-2);
  let localAttentionMask = om.logicalAnd(blockedAttentionMask, threeBlockedAttentionMask);
  localAttentionMask = maskLocalAttentionMask(localAttentionMask, blockLen);
  return localAttentionMask.unsqueeze(1);
}

/**
 * _make_global_fixed_block_ids: [block_ids [batch, seq] (the global block of each token; -1 where
 * padded; orphan tokens after the last full block join it), global_segment_ids [batch, seq //
 * global_block_size] (1 for a block the row fills, else 0)], int64 (int32 upstream).
 */
export function makeGlobalFixedBlockIds(attentionMask, globalBlockSize) {
  const [batchSize, seqLen] = attentionMask.shape;

  const handleOrphanTokens = (blockIds) => {
    const blockEnds = om.arange(0, seqLen, { dtype: 'int64' }).remainder(globalBlockSize).eq(globalBlockSize - 1);
    const trueBlockEnds = om.logicalAnd(blockEnds, blockIds.ge(0));
    const fullBlocks = trueBlockEnds.sum(-1).unsqueeze(-1).to(blockIds.dtype).sub(1);
    return om.where(blockIds.lt(fullBlocks), blockIds, fullBlocks);
  };

  let fixedBlockMask = om.onesLike(attentionMask).div(globalBlockSize);
  fixedBlockMask = fixedBlockMask.cumsum(1).sub(fixedBlockMask);
  const mask = om.where(attentionMask.ne(0), 1, -1000).to(attentionMask.dtype);
  let globalBlockIds = mask.add(fixedBlockMask).sub(1).floor().to(attentionMask.dtype);
  const globalBlockIdsLowerBound = om.tensor(-1, { dtype: globalBlockIds.dtype });
  globalBlockIds = om.where(globalBlockIds.gt(globalBlockIdsLowerBound), globalBlockIds, globalBlockIdsLowerBound);
  // set padding tokens to -1
  globalBlockIds = globalBlockIds.mul(attentionMask).add(attentionMask.sub(1));
  globalBlockIds = handleOrphanTokens(globalBlockIds);
  const numGlobals = Math.floor(seqLen / globalBlockSize);
  const sequenceBlockIdsMax = numGlobals > 0
    ? globalBlockIds.max(-1).values.repeat(numGlobals, 1).transpose(0, 1)
    : om.zeros([batchSize, 0], { dtype: globalBlockIds.dtype });
  let globalSegmentIds = om.ones([batchSize, numGlobals]).cumsum(-1).sub(1);
  globalSegmentIds = om.where(globalSegmentIds.le(sequenceBlockIdsMax), 1, 0);
  return [globalBlockIds.long(), globalSegmentIds.long()];
}

/** _make_side_relative_position_ids: [batch, seq, global_seq_len] int64, each global token's index minus the token's block. */
export function makeSideRelativePositionIds(attentionMask, globalBlockSize) {
  const [blockIds, globalSegmentIds] = makeGlobalFixedBlockIds(attentionMask, globalBlockSize);
  const globalSeqLen = globalSegmentIds.shape.at(-1);
  const globalPositions = om.arange(0, globalSeqLen, { dtype: 'int64' });
  return globalPositions.sub(blockIds.unsqueeze(-1)).long();
}

/** _create_global_aggregates: [batch, global_seq_len, d] sums of each block's hidden states (padding in no block). */
export function createGlobalAggregates(hiddenStates, blockIds, globalSeqLen) {
  blockIds = blockIds.where(blockIds.ge(0), om.tensor(globalSeqLen, { dtype: blockIds.dtype }));
  const oneHotBlockIds = F.oneHot(blockIds.long(), globalSeqLen + 1).slice(2, 0, -1); // [:, :, :-1]
  return om.einsum('...nd,...ng->...gd', hiddenStates, oneHotBlockIds.to(hiddenStates.dtype));
}

/** LongT5LocalAttention: local attention over 3 blocks with the relative bias of the 3-block positions. */
export class LongT5LocalAttention extends nn.Module {
  constructor(config, hasRelativeAttentionBias = false) {
    super();
    this.has_relative_attention_bias = hasRelativeAttentionBias;
    this.relative_attention_num_buckets = config.relative_attention_num_buckets;
    this.relative_attention_max_distance = config.relative_attention_max_distance;
    this.d_model = config.d_model;
    this.key_value_proj_dim = config.d_kv;
    this.n_heads = config.num_heads;
    this.local_radius = config.local_radius;
    this.block_len = this.local_radius + 1;
    this.inner_dim = this.n_heads * this.key_value_proj_dim;
    this.q = new nn.Linear(this.d_model, this.inner_dim, { bias: false });
    this.k = new nn.Linear(this.d_model, this.inner_dim, { bias: false });
    this.v = new nn.Linear(this.d_model, this.inner_dim, { bias: false });
    this.o = new nn.Linear(this.inner_dim, this.d_model, { bias: false });
    if (hasRelativeAttentionBias) this.relative_attention_bias = new nn.Embedding(this.relative_attention_num_buckets, this.n_heads);
  }

  /** The bucket of each relative position (the encoder's: bidirectional). */
  relativePositionBucket(relativePosition) {
    return relativePositionBucket(relativePosition, true, this.relative_attention_num_buckets, this.relative_attention_max_distance);
  }

  /** compute_bias: [1, 1, heads, block_len, 3 * block_len], the centre block's queries against the 3 blocks' keys. */
  computeBias(blockLength) {
    const memoryPosition = om.arange(0, 3 * blockLength, { dtype: 'int64' });
    const contextPosition = memoryPosition.slice(0, blockLength, -blockLength);
    // (block_length, 3 * block_length)
    const relativePosition = memoryPosition.unsqueeze(0).sub(contextPosition.unsqueeze(1));
    const values = this.relative_attention_bias.forward(this.relativePositionBucket(relativePosition));
    return values.permute(2, 0, 1).unsqueeze(0).unsqueeze(0);
  }

  /** (batch_size, seq_length, n_heads, dim_per_head): states.view(batch_size, -1, n_heads, key_value_proj_dim). */
  shape(states, batchSize) {
    return states.view(batchSize, -1, this.n_heads, this.key_value_proj_dim);
  }

  /** The projections split into blocks: [query [b, blocks, block_len, h, d], key and value [b, blocks, 3 * block_len, h, d]]. */
  blockedStates(hiddenStates, batchSize) {
    const blocks = (proj) => splitIntoBlocks(this.shape(proj.forward(hiddenStates), batchSize), this.block_len, 1);
    const three = (proj) => concatenate3Blocks(blocks(proj), 1, 2);
    return [blocks(this.q), three(this.k), three(this.v)];
  }

  /** scores += position_bias, softmax, the values, unshape and slice back to seq_length, o. */
  attend(scores, positionBias, valueStates, batchSize, seqLength) {
    scores.add_(positionBias);
    const attnWeights = scores.float().softmax(-1);
    const attnOutput = om.einsum('...hqk,...khd->...qhd', attnWeights, valueStates).contiguous().view(batchSize, -1, this.inner_dim);
    return this.o.forward(attnOutput.slice(1, 0, seqLength)); // attn_output[:, :seq_length, :]
  }

  /** [attention output, position bias (the mask added)]: the first layer computes the bias, the others reuse it. */
  forward(hiddenStates, mask = null, positionBias = null) {
    const [batchSize, seqLength] = hiddenStates.shape;
    const [queryStates, keyStates, valueStates] = this.blockedStates(hiddenStates, batchSize);
    // (batch_size, num_block, n_heads, block_len, 3 * block_len)
    const scores = om.einsum('...qhd,...khd->...hqk', queryStates, keyStates);
    if (positionBias === null) {
      positionBias = this.has_relative_attention_bias ? this.computeBias(this.block_len)
        : om.zeros([1, 1, this.n_heads, this.block_len, 3 * this.block_len], { dtype: scores.dtype });
      if (mask !== null) {
        // Replace masked positions with -1e10 (according to the original implementation)
        mask = om.where(mask.gt(0), 0, -1e10);
        positionBias = positionBias.add(mask.transpose(1, 2));
      }
    }
    return [this.attend(scores, positionBias, valueStates, batchSize, seqLength), positionBias];
  }
}

/** LongT5TransientGlobalAttention: local attention, and every query attends to the global tokens too. */
export class LongT5TransientGlobalAttention extends LongT5LocalAttention {
  constructor(config, hasRelativeAttentionBias = false) {
    super(config, hasRelativeAttentionBias);
    this.global_block_size = config.global_block_size;
    if (hasRelativeAttentionBias) this.global_relative_attention_bias = new nn.Embedding(this.relative_attention_num_buckets, this.n_heads);
    this.global_input_layer_norm = new T5LayerNorm(config.d_model, config.layer_norm_epsilon);
  }

  /** compute_side_bias: [batch, heads, seq, global_seq_len], -1e10 where the mask differs from the segment id, plus the side relative bias. */
  computeSideBias(mask, globalSegmentIds) {
    const sideAttentionMask = om.eq(mask.unsqueeze(-1), globalSegmentIds.unsqueeze(1)).unsqueeze(1);
    const attentionSideBias = om.where(sideAttentionMask.gt(0), 0, -1e10);
    const sideRelativePosition = makeSideRelativePositionIds(mask, this.global_block_size);
    // (batch_size, seq_len, global_seq_len, num_heads) -> (batch_size, num_heads, seq_len, global_seq_len)
    const sideBias = this.global_relative_attention_bias.forward(this.relativePositionBucket(sideRelativePosition)).permute(0, 3, 1, 2);
    return attentionSideBias.add(sideBias);
  }

  forward(hiddenStates, mask = null, positionBias = null) {
    const [batchSize, seqLength] = hiddenStates.shape;
    // global_seq_len := seq_len // self.global_block_size
    const [blockIds, globalSegmentIds] = makeGlobalFixedBlockIds(mask ?? om.ones(hiddenStates.shape.slice(0, -1)), this.global_block_size);
    const globalSeqLen = globalSegmentIds.shape.at(-1);
    const globalInputs = this.global_input_layer_norm.forward(createGlobalAggregates(hiddenStates, blockIds, globalSeqLen));
    let [queryStates, keyStates, valueStates] = this.blockedStates(hiddenStates, batchSize);
    // Tile side inputs across local key/value blocks: (batch_size, num_blocks, global_seq_len, n_heads, dim_per_head)
    const reps = [1, keyStates.shape[1], 1, 1, 1];
    const side = (proj) => this.shape(proj.forward(globalInputs), batchSize).unsqueeze(1).repeat(reps);
    keyStates = om.cat([keyStates, side(this.k)], 2);
    valueStates = om.cat([valueStates, side(this.v)], 2);
    // (batch_size, num_block, n_heads, block_len, 3 * block_len + global_seq_len)
    const scores = om.einsum('...qhd,...khd->...hqk', queryStates, keyStates);
    const localAttentionMask = mask === null ? null : om.where(getLocalAttentionMask(mask, this.block_len).gt(0), 0, -1e10);
    if (positionBias === null) {
      positionBias = this.has_relative_attention_bias ? this.computeBias(this.block_len)
        : om.zeros([1, 1, this.n_heads, this.block_len, 3 * this.block_len], { dtype: scores.dtype });
      // (batch_size, 1, n_heads, block_len, 3 * block_len)
      if (localAttentionMask !== null) positionBias = positionBias.add(localAttentionMask.transpose(1, 2));
      positionBias = positionBias.to(scores.dtype);
      // (batch_size, num_heads, seq_len, global_seq_len) -> (batch_size, num_blocks, num_heads, block_len, global_seq_len)
      const sidePositionBias = splitIntoBlocks(this.computeSideBias(mask ?? om.ones([batchSize, seqLength]), globalSegmentIds), this.block_len, -2).transpose(1, 2);
      positionBias = om.cat([positionBias, sidePositionBias.to(scores.dtype)], -1);
    }
    return [this.attend(scores, positionBias, valueStates, batchSize, seqLength), positionBias];
  }
}

/** LongT5LayerLocalSelfAttention: pre-norm local self-attention with a residual. */
export class LongT5LayerLocalSelfAttention extends nn.Module {
  static Attention = LongT5LocalAttention;
  static attribute = 'LocalSelfAttention';

  constructor(config, hasRelativeAttentionBias = false) {
    super();
    this[this.constructor.attribute] = new this.constructor.Attention(config, hasRelativeAttentionBias);
    this.layer_norm = new T5LayerNorm(config.d_model, config.layer_norm_epsilon);
    this.dropout = new nn.Dropout(0.1);
  }

  forward(hiddenStates, attentionMask = null, positionBias = null) {
    const [attentionOutput, bias] = this[this.constructor.attribute].forward(this.layer_norm.forward(hiddenStates), attentionMask, positionBias);
    return [hiddenStates.add(this.dropout.forward(attentionOutput)), bias];
  }
}

/** LongT5LayerTransientGlobalSelfAttention: the same with transient-global attention. */
export class LongT5LayerTransientGlobalSelfAttention extends LongT5LayerLocalSelfAttention {
  static Attention = LongT5TransientGlobalAttention;
  static attribute = 'TransientGlobalSelfAttention';
}

const ATTENTION_LAYERS = { local: LongT5LayerLocalSelfAttention, 'transient-global': LongT5LayerTransientGlobalSelfAttention };

/** The encoder's attention layer class of config.encoder_attention_type; throws upstream's ValueError's message for another. */
function attentionLayer(config) {
  const AttentionLayer = ATTENTION_LAYERS[config.encoder_attention_type];
  if (!AttentionLayer) {
    throw new Error('For encoder attention mechanism, either `local` or `transient-global` attention type is expected, '
      + `but got ${config.encoder_attention_type}.`);
  }
  return AttentionLayer;
}

export class LongT5Block extends nn.Module {
  constructor(config, hasRelativeAttentionBias = false) {
    super();
    const AttentionLayer = attentionLayer(config);
    this.layer = new nn.ModuleList([new AttentionLayer(config, hasRelativeAttentionBias), new T5LayerFF(config)]);
  }

  forward(hiddenStates, attentionMask, positionBias) {
    const [h, bias] = this.layer[0].forward(hiddenStates, attentionMask, positionBias);
    return [this.layer[this.layer.length - 1].forward(h), bias];
  }
}

export class LongT5Stack extends nn.Module {
  constructor(config, embedTokens) {
    super();
    this.config = config;
    this.embed_tokens = embedTokens; // upstream ties a new Embedding's weight to it: the same table
    this.local_radius = config.local_radius;
    this.block_len = this.local_radius + 1;
    this.block = new nn.ModuleList(Array.from({ length: config.num_layers }, (_, i) => new LongT5Block(config, i === 0)));
    this.final_layer_norm = new T5LayerNorm(config.d_model, config.layer_norm_epsilon);
    this.dropout = new nn.Dropout(0.1);
  }

  forward(inputIds, attentionMask = null) {
    const [batchSize, seqLength] = inputIds.shape;
    const inputsEmbeds = this.embed_tokens.forward(inputIds);
    attentionMask ??= om.ones([batchSize, seqLength]);
    // local attention takes the blocked mask; transient-global makes its own from the 2-D mask
    const mask = this.config.encoder_attention_type === 'local' ? getLocalAttentionMask(attentionMask, this.block_len) : attentionMask;
    let positionBias = null;
    let h = this.dropout.forward(inputsEmbeds);
    for (const block of this.block) [h, positionBias] = block.forward(h, mask, positionBias);
    return this.dropout.forward(this.final_layer_norm.forward(h));
  }
}

export class LongT5EncoderModel extends nn.Module {
  constructor(config = {}) {
    super();
    const c = portConfig('LongT5EncoderModel', LONGT5_DEFAULTS, config, 'feed_forward_proj', 'relu');
    attentionLayer(c); // refused before any weight is made (upstream raises in LongT5Block)
    this.config = c;
    this.shared = new nn.Embedding(c.vocab_size, c.d_model);
    this.encoder = new LongT5Stack(c, this.shared);
  }

  forward(inputIds, attentionMask = null) {
    return this.encoder.forward(inputIds, attentionMask);
  }
}
