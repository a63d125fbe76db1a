// BigBird (Hugging Face transformers' BigBirdModel, modeling_big_bird.py) ported to onemodel as a
// user ports it: the same modules, names and operations, so a checkpoint's state dict
// (`embeddings.word_embeddings.weight`, `encoder.layer.0.attention.self.query.weight`, ...,
// `pooler.weight`) loads with a strict loadStateDict; `embeddings.position_ids` and
// `embeddings.token_type_ids` are non-persistent buffers, as upstream.
//
// attention_type "block_sparse" needs more tokens than one query block attends to: upstream's
// forward switches to "original_full" (BERT's attention over every token) when
// seq_length <= max_tokens_to_attend = (5 + 2 * num_random_blocks) * block_size, a branch on the
// length. Above it, _pad_to_block_size pads ids and mask to a multiple of block_size,
// create_masks_for_block_sparse_attn makes the band, from and to masks, and
// bigbird_block_sparse_attention computes its five parts; the output is sliced back. The random
// key blocks are what eval mode makes them: upstream's _bigbird_block_rand_mask_with_head returns
// zeros when not training, so every random block is block 0 (as upstream, built from the length
// as a constant, expanded to every batch row, gathered by torch_gather_b2's flattened index_select;
// upstream's two loops over the batch written as an expand and a gather, so a trace holds at every batch).
// One difference, deliberate: upstream's switch is sticky (set_attention_type replaces every
// layer's attention module, so a model that once saw a short input keeps full attention for long
// ones); here the choice is made per call, as a freshly loaded upstream model makes it, and
// setAttentionType('original_full') still switches the model for good. Dropout is the identity in
// eval mode. forward(input_ids [batch, seq] int64, attention_mask [batch, seq] (1 keep, 0 pad;
// default all ones)) -> [last_hidden_state [batch, seq, hidden], pooler_output [batch, hidden]].
import * as om from 'onemodel';
import { extendedAttentionMask, portConfig } from './modeling_utils.mjs';
import { BertEmbeddings, BertSelfOutput } from './bert.mjs';
import { geluNew } from './gpt2.mjs';

const nn = om.nn;

/** BigBirdConfig's defaults (bigbird-roberta-base's layout) for the fields this port reads. */
export const BIG_BIRD_DEFAULTS = {
  vocab_size: 50358, hidden_size: 768, num_hidden_layers: 12, num_attention_heads: 12, intermediate_size: 3072,
  hidden_act: 'gelu_new', max_position_embeddings: 4096, type_vocab_size: 2, layer_norm_eps: 1e-12, pad_token_id: 0,
  attention_type: 'block_sparse', use_bias: true, rescale_embeddings: false, block_size: 64, num_random_blocks: 3,
};

const ATTENTION_TYPES = ['original_full', 'block_sparse'];

/** BERT's embeddings; rescale_embeddings multiplies the word embeddings by sqrt(hidden) first. */
export class BigBirdEmbeddings extends BertEmbeddings {
  constructor(config) {
    super(config);
    this.rescale_embeddings = config.rescale_embeddings;
    this.hidden_size = config.hidden_size;
  }

  forward(inputIds, tokenTypeIds) {
    const seqLength = inputIds.shape[1];
    const positionIds = this.position_ids.slice(1, 0, seqLength);
    let inputsEmbeds = this.word_embeddings.forward(inputIds);
    if (this.rescale_embeddings) inputsEmbeds = inputsEmbeds.mul(this.hidden_size ** 0.5);
    let embeddings = inputsEmbeds.add(this.token_type_embeddings.forward(tokenTypeIds));
    embeddings = embeddings.add(this.position_embeddings.forward(positionIds));
    // upstream drops out before the norm (BERT after)
    return this.LayerNorm.forward(this.dropout.forward(embeddings));
  }
}

/** original_full: BERT's attention over every token, with an additive mask [batch, 1, 1, seq]. */
export class BigBirdSelfAttention extends nn.Module {
  constructor(config) {
    super();
    if (config.hidden_size % config.num_attention_heads !== 0) {
      throw new Error(`${new.target.name}: The hidden size ${config.hidden_size} is not a multiple of the number of attention heads ${config.num_attention_heads}.`);
    }
    this.num_attention_heads = config.num_attention_heads;
    this.attention_head_size = config.hidden_size / config.num_attention_heads;
    this.all_head_size = this.num_attention_heads * this.attention_head_size;
    const bias = config.use_bias;
    this.query = new nn.Linear(config.hidden_size, this.all_head_size, { bias });
    this.key = new nn.Linear(config.hidden_size, this.all_head_size, { bias });
    this.value = new nn.Linear(config.hidden_size, this.all_head_size, { bias });
    this.dropout = new nn.Dropout(0.1);
  }

  /** [batch, seq, all_head_size] -> [batch, heads, seq, head_size]. */
  heads(x, batchSize) {
    return x.view(batchSize, -1, this.num_attention_heads, this.attention_head_size).transpose(1, 2);
  }

  /** Full attention; the block-sparse module runs it too on its own query, key and value (upstream moves them into a BigBirdSelfAttention). */
  fullAttention(hiddenStates, attentionMask) {
    const batchSize = hiddenStates.shape[0];
    const queryLayer = this.heads(this.query.forward(hiddenStates), batchSize);
    const keyLayer = this.heads(this.key.forward(hiddenStates), batchSize);
    const valueLayer = this.heads(this.value.forward(hiddenStates), batchSize);
    const scores = queryLayer.matmul(keyLayer.transpose(-1, -2)).div(Math.sqrt(this.attention_head_size)).add(attentionMask);
    const probs = this.dropout.forward(scores.softmax(-1));
    const context = probs.matmul(valueLayer).permute(0, 2, 1, 3).contiguous();
    return context.view(...context.shape.slice(0, -2), this.all_head_size);
  }

  forward(hiddenStates, attentionMask) {
    return this.fullAttention(hiddenStates, attentionMask);
  }
}

/**
 * block_sparse: each query block attends to the first and last blocks (global), its neighbour
 * blocks (sliding: 3 blocks) and num_random_blocks random blocks; the first and last query blocks
 * attend to every key. A subclass of BigBirdSelfAttention here for the shared projections (upstream
 * writes them twice).
 */
export class BigBirdBlockSparseAttention extends BigBirdSelfAttention {
  constructor(config) {
    super(config);
    this.max_seqlen = config.max_position_embeddings;
    this.num_random_blocks = config.num_random_blocks;
    this.block_size = config.block_size;
  }

  /** torch_bmm_nd: a [..., m, k] by b [..., k, n] as one bmm. */
  static bmmNd(a, b, ndim) {
    const out = om.bmm(a.reshape(-1, ...a.shape.slice(-2)), b.reshape(-1, ...b.shape.slice(-2)));
    return out.view(...a.shape.slice(0, ndim - 2), a.shape[ndim - 2], b.shape[ndim - 1]);
  }

  /** torch_bmm_nd_transpose: a [..., m, k] by b [..., n, k] transposed. */
  static bmmNdTranspose(a, b, ndim) {
    const out = om.bmm(a.reshape(-1, ...a.shape.slice(-2)), b.reshape(-1, ...b.shape.slice(-2)).transpose(1, 2));
    return out.view(...a.shape.slice(0, ndim - 2), a.shape[ndim - 2], b.shape[ndim - 2]);
  }

  /** torch_gather_b2: the blocks of params [b, h, nb, bs, d] at indices [b, h, l, r] -> [b, h, l * r, bs, d]. */
  static torchGatherB2(params, indices) {
    if (params.shape[0] !== indices.shape[0] || params.shape[1] !== indices.shape[1]) {
      throw new Error(`BigBirdBlockSparseAttention: Make sure that the first two dimensions of params and indices are identical, but they are params: [${params.shape.slice(0, 2)}] vs. indices: [${indices.shape.slice(0, 2)}]`);
    }
    const numIndicesToGather = indices.shape.at(-2) * indices.shape.at(-1);
    const numIndicesToPickFrom = params.shape[2];
    const shift = om.arange(0, indices.shape[0] * indices.shape[1] * numIndicesToGather, { dtype: 'int64' });
    const indicesShift = shift.div(numIndicesToGather, { roundingMode: 'floor' }).mul(numIndicesToPickFrom);
    const flattenedIndices = indices.view(-1).add(indicesShift);
    const flattenedParams = params.reshape(-1, params.shape.at(-2), params.shape.at(-1));
    const outFlattened = flattenedParams.indexSelect(0, flattenedIndices);
    return outFlattened.reshape(...params.shape.slice(0, 2), numIndicesToGather, ...params.shape.slice(3));
  }

  /** _create_rand_mask_from_inputs: [b, h, nb - 2, bs, r * bs], 1 where a query and its random key are both real tokens. */
  static createRandMaskFromInputs(fromBlockedMask, toBlockedMask, randAttn, numAttentionHeads, numRandBlocks, batchSize, fromSeqLength, fromBlockSize) {
    const numWindows = Math.floor(fromSeqLength / fromBlockSize) - 2;
    // torch.stack([p1[i1.flatten()] for p1, i1 in zip(to_blocked_mask, rand_attn)]): row b's blocks
    // at row b's indices, written as one gather along the blocks (a loop over the batch would make
    // the traced graph hold at the traced batch only; the gather holds at every batch)
    const index = randAttn.reshape(batchSize, -1, 1).expand(-1, -1, toBlockedMask.shape[2]);
    let randMask = toBlockedMask.gather(1, index);
    randMask = randMask.view(batchSize, numAttentionHeads, numWindows, numRandBlocks * fromBlockSize);
    return om.einsum('blq,bhlk->bhlqk', fromBlockedMask.slice(1, 1, -1), randMask);
  }

  /** _get_rand_attn_plan: where the random blocks go (the plan only fixes their count in eval mode). */
  static getRandAttnPlan(fromSeqLength, fromBlockSize, numRandBlocks) {
    const nb = Math.floor(fromSeqLength / fromBlockSize);
    if (2 * numRandBlocks + 5 < nb) return [[(2 * numRandBlocks + 5) * fromBlockSize, fromSeqLength], [numRandBlocks, 0]];
    if (numRandBlocks + 5 < nb) return [[(numRandBlocks + 5) * fromBlockSize, fromSeqLength], [Math.floor(numRandBlocks / 2), numRandBlocks - Math.floor(numRandBlocks / 2)]];
    return [[fromSeqLength], [numRandBlocks]];
  }

  /**
   * _bigbird_block_rand_mask_with_head in eval mode: per head, a [nb - 2, sum of the plan's random
   * blocks] table of zeros (upstream: "During inference (eval) no randomness"). Training mode
   * draws blocks with numpy's generator, which this port does not reproduce: it refuses.
   */
  bigbirdBlockRandMaskWithHead(fromSeqLength, toSeqLength, fromBlockSize, toBlockSize, numHeads, planFromLength, planNumRandBlocks) {
    if (Math.floor(fromSeqLength / fromBlockSize) !== Math.floor(toSeqLength / toBlockSize)) throw new Error('BigBirdBlockSparseAttention: Error the number of blocks needs to be same!');
    if (!planFromLength.includes(fromSeqLength)) throw new Error('BigBirdBlockSparseAttention: Error from sequence length not in plan!');
    if (this.training) throw new Error('BigBirdBlockSparseAttention: random attention blocks in training mode are not ported (numpy\'s generator); use eval()');
    const numBlocks = Math.floor(fromSeqLength / fromBlockSize);
    const maxPlanIdx = planFromLength.indexOf(fromSeqLength);
    const r = planNumRandBlocks.slice(0, maxPlanIdx + 1).reduce((a, b) => a + b, 0);
    // global_block_top = global_block_bottom = 1: the first and last rows are dropped
    return Array.from({ length: numHeads }, () => om.zeros([numBlocks - 2, r], { dtype: 'int64' }));
  }

  forward(hiddenStates, bandMask, fromMask, toMask, fromBlockedMask, toBlockedMask) {
    const [batchSize, seqlen] = hiddenStates.shape;
    const bs = this.block_size;
    if (seqlen % bs !== 0) throw new Error('BigBirdBlockSparseAttention: Query sided sequence length must be multiple of block size');
    const queryLayer = this.heads(this.query.forward(hiddenStates), batchSize);
    const keyLayer = this.heads(this.key.forward(hiddenStates), batchSize);
    const valueLayer = this.heads(this.value.forward(hiddenStates), batchSize);
    const context = this.bigbirdBlockSparseAttention(queryLayer, keyLayer, valueLayer, bandMask, fromMask, toMask, fromBlockedMask, toBlockedMask, batchSize, seqlen);
    return context.contiguous().view(batchSize, seqlen, -1);
  }

  /** The five parts: q[0], q[1], q[2:-2], q[-2], q[-1]; [b, h, n, d] -> [b, n, h, d]. */
  bigbirdBlockSparseAttention(queryLayer, keyLayer, valueLayer, bandMask, fromMask, toMask, fromBlockedMask, toBlockedMask, bsz, seqLen) {
    const nHeads = this.num_attention_heads;
    const r = this.num_random_blocks;
    const bs = this.block_size;
    const nb = Math.floor(seqLen / bs);
    const rsqrtD = 1 / Math.sqrt(this.attention_head_size);
    const penalty = -10000.0;
    const { bmmNd, bmmNdTranspose, torchGatherB2 } = BigBirdBlockSparseAttention;
    // the random blocks (upstream's lengths 1024, 3072, 4096 use the paper's plan, also zeros in eval)
    const [planFromLength, planNumRandBlocks] = BigBirdBlockSparseAttention.getRandAttnPlan(seqLen, bs, r);
    let randAttn = om.stack(this.bigbirdBlockRandMaskWithHead(seqLen, seqLen, bs, bs, nHeads, planFromLength, planNumRandBlocks), 0);
    // torch.cat([rand_attn for _ in range(batch_size)], dim=0): one copy per batch row, written as
    // an expand of the batch-independent table (a list as long as the batch holds at one batch only)
    randAttn = randAttn.unsqueeze(0).expand(bsz, -1, -1, -1).contiguous();
    const randMask = BigBirdBlockSparseAttention.createRandMaskFromInputs(fromBlockedMask, toBlockedMask, randAttn, nHeads, r, bsz, seqLen, bs);

    const bq = queryLayer.view(bsz, nHeads, nb, bs, -1);
    const bk = keyLayer.view(bsz, nHeads, nb, bs, -1);
    const bv = valueLayer.view(bsz, nHeads, nb, bs, -1);
    const gatheredKey = torchGatherB2(bk, randAttn).view(bsz, nHeads, nb - 2, r * bs, -1);
    const gatheredValue = torchGatherB2(bv, randAttn).view(bsz, nHeads, nb - 2, r * bs, -1);
    const block = (t, i) => t.select(2, i); // x[:, :, i]

    // 1st and 5th parts: a global query block against every key
    const globalRows = (q) => {
      const product = bmmNdTranspose(q, keyLayer, 4).mul(rsqrtD).add(toMask.neg().add(1).mul(penalty));
      return bmmNd(product.softmax(-1), valueLayer, 4).unsqueeze(2);
    };
    // 2nd and 4th parts: the first (global), three sliding, the last (global) and the random key blocks
    const onesSeq = toMask.newOnes([bsz, 1, 1, r * bs]);
    const onesRand = randMask.newOnes([bsz, nHeads, bs, 4 * bs]);
    const edgeRows = (q, at, randAt, seqPad) => {
      const keyMat = om.cat([...at.map((i) => block(bk, i)), block(gatheredKey, randAt)], 2);
      const valueMat = om.cat([...at.map((i) => block(bv, i)), block(gatheredValue, randAt)], 2);
      const randPad = om.cat([onesRand, block(randMask, randAt)], 3);
      const product = bmmNdTranspose(q, keyMat, 4).mul(rsqrtD).add(om.minimum(seqPad, randPad).neg().add(1).mul(penalty));
      return bmmNd(product.softmax(-1), valueMat, 4).unsqueeze(2);
    };
    const firstContextLayer = globalRows(block(bq, 0));
    const secondContextLayer = edgeRows(block(bq, 1), [0, 1, 2, -1], 0,
      om.cat([toMask.slice(3, 0, 3 * bs), toMask.slice(3, -bs), onesSeq], 3));

    // 3rd part: the middle query blocks against shifted key blocks (sliding), the random blocks and the global ones
    const expBlockedKey = om.cat([bk.slice(2, 1, -3), bk.slice(2, 2, -2), bk.slice(2, 3, -1)], 3);
    const expBlockedValue = om.cat([bv.slice(2, 1, -3), bv.slice(2, 2, -2), bv.slice(2, 3, -1)], 3);
    const middleQuery = bq.slice(2, 2, -2);
    const innerBand = bmmNdTranspose(middleQuery, expBlockedKey, 5).mul(rsqrtD).add(bandMask.neg().add(1).mul(penalty));
    const randBand = bmmNdTranspose(middleQuery, gatheredKey.slice(2, 1, -1), 5).mul(rsqrtD)
      .add(randMask.slice(2, 1, -1).neg().add(1).mul(penalty));
    const firstBand = om.einsum('bhlqd,bhkd->bhlqk', middleQuery, block(bk, 0)).mul(rsqrtD)
      .add(toMask.slice(3, 0, bs).unsqueeze(3).neg().add(1).mul(penalty));
    const lastBand = om.einsum('bhlqd,bhkd->bhlqk', middleQuery, block(bk, -1)).mul(rsqrtD)
      .add(toMask.slice(3, -bs).unsqueeze(3).neg().add(1).mul(penalty));
    const attnWeights = om.cat([firstBand, innerBand, randBand, lastBand], -1).softmax(-1);
    let contextLayer = bmmNd(attnWeights.slice(4, bs, 4 * bs), expBlockedValue, 5);
    contextLayer = contextLayer.add(bmmNd(attnWeights.slice(4, 4 * bs, -bs), gatheredValue.slice(2, 1, -1), 5));
    contextLayer = contextLayer.add(om.einsum('bhlqk,bhkd->bhlqd', attnWeights.slice(4, 0, bs), block(bv, 0)));
    contextLayer = contextLayer.add(om.einsum('bhlqk,bhkd->bhlqd', attnWeights.slice(4, -bs), block(bv, -1)));

    const secondLastContextLayer = edgeRows(block(bq, -2), [0, -3, -2, -1], -1,
      om.cat([toMask.slice(3, 0, bs), toMask.slice(3, -3 * bs), onesSeq], 3));
    const lastContextLayer = globalRows(block(bq, -1));
    const all = om.cat([firstContextLayer, secondContextLayer, contextLayer, secondLastContextLayer, lastContextLayer], 2);
    return all.view(bsz, nHeads, seqLen, -1).mul(fromMask).transpose(1, 2);
  }
}

export class BigBirdAttention extends nn.Module {
  constructor(config) {
    super();
    if (!ATTENTION_TYPES.includes(config.attention_type)) throw new Error(`BigBirdAttention: attention_type can either be original_full or block_sparse, but is ${config.attention_type}`);
    this.attention_type = config.attention_type;
    this.config = config;
    this.self = config.attention_type === 'original_full' ? new BigBirdSelfAttention(config) : new BigBirdBlockSparseAttention(config);
    this.output = new BertSelfOutput(config, config.hidden_size);
  }

  /** Upstream moves query, key and value into a module of the other class; the keys stay the same. */
  setAttentionType(value) {
    if (!ATTENTION_TYPES.includes(value)) throw new Error(`BigBirdAttention: attention_type can only be set to either 'original_full' or 'block_sparse', but is ${value}`);
    if (value === this.attention_type) return;
    this.attention_type = value;
    const old = this.self;
    const next = value === 'original_full' ? new BigBirdSelfAttention(this.config) : new BigBirdBlockSparseAttention(this.config);
    for (const name of ['query', 'key', 'value']) {
      next[name].dispose();
      next[name] = old[name];
    }
    this.self = this.training ? next : next.eval();
  }

  /** attentionType: the model's choice for this call (full attention on a block-sparse module at short lengths). */
  forward(hiddenStates, attentionType, attentionMask, bandMask, fromMask, toMask, blockedEncoderMask) {
    let out;
    if (attentionType === 'original_full') {
      out = this.self.fullAttention(hiddenStates, attentionMask);
    } else {
      const dtype = hiddenStates.dtype; // fp16 compatibility upstream: the masks in the hidden states' dtype
      out = this.self.forward(hiddenStates, bandMask.to(dtype), fromMask.to(dtype), toMask.to(dtype), blockedEncoderMask, blockedEncoderMask);
    }
    return this.output.forward(out, hiddenStates);
  }
}

export class BigBirdIntermediate extends nn.Module {
  constructor(config) {
    super();
    this.dense = new nn.Linear(config.hidden_size, config.intermediate_size);
  }

  forward(hiddenStates) {
    return geluNew(this.dense.forward(hiddenStates));
  }
}

export class BigBirdLayer extends nn.Module {
  constructor(config) {
    super();
    this.attention = new BigBirdAttention(config);
    this.intermediate = new BigBirdIntermediate(config);
    this.output = new BertSelfOutput(config, config.intermediate_size);
  }

  forward(hiddenStates, ...args) {
    const attentionOutput = this.attention.forward(hiddenStates, ...args);
    return this.output.forward(this.intermediate.forward(attentionOutput), attentionOutput);
  }
}

export class BigBirdEncoder extends nn.Module {
  constructor(config) {
    super();
    this.layer = new nn.ModuleList(Array.from({ length: config.num_hidden_layers }, () => new BigBirdLayer(config)));
  }

  forward(hiddenStates, ...args) {
    let h = hiddenStates;
    for (const layer of this.layer) h = layer.forward(h, ...args);
    return h;
  }
}

export class BigBirdModel extends nn.Module {
  constructor(config = {}) {
    super();
    const c = portConfig('BigBirdModel', BIG_BIRD_DEFAULTS, config, 'hidden_act', 'gelu_new');
    this.config = c;
    this.attention_type = c.attention_type;
    this.block_size = c.block_size;
    try {
      this.embeddings = new BigBirdEmbeddings(c);
      this.encoder = new BigBirdEncoder(c);
      this.pooler = new nn.Linear(c.hidden_size, c.hidden_size);
      this.activation = new nn.Tanh();
    } catch (e) {
      this.dispose(); // a layer refused the config (as upstream's constructors do): free what was made
      throw e;
    }
  }

  setAttentionType(value) {
    if (!ATTENTION_TYPES.includes(value)) throw new Error(`BigBirdModel: attention_type can only be set to either 'original_full' or 'block_sparse', but is ${value}`);
    if (value === this.attention_type) return;
    this.attention_type = value;
    for (const layer of this.encoder.layer) layer.attention.setAttentionType(value);
  }

  /** create_masks_for_block_sparse_attn: blocked [b, nb, bs], band [b, 1, nb - 4, bs, 3 bs], from [b, 1, n, 1], to [b, 1, 1, n]. */
  static createMasksForBlockSparseAttn(attentionMask, blockSize) {
    const [batchSize, seqLength] = attentionMask.shape;
    if (seqLength % blockSize !== 0) throw new Error(`BigBirdModel: Sequence length must be multiple of block size, but sequence length is ${seqLength}, while block size is ${blockSize}.`);
    const blockedEncoderMask = attentionMask.view(batchSize, Math.floor(seqLength / blockSize), blockSize);
    const b = blockedEncoderMask;
    const expBlockedToPad = om.cat([b.slice(1, 1, -3), b.slice(1, 2, -2), b.slice(1, 3, -1)], 2);
    const bandMask = om.einsum('blq,blk->blqk', b.slice(1, 2, -2), expBlockedToPad).unsqueeze(1);
    return [blockedEncoderMask, bandMask, attentionMask.view(batchSize, 1, seqLength, 1), attentionMask.view(batchSize, 1, 1, seqLength)];
  }

  /** _pad_to_block_size: ids with pad_token_id, the mask with 0 (no attention on the padding), token types with 0. */
  padToBlockSize(inputIds, attentionMask, tokenTypeIds) {
    const blockSize = this.config.block_size;
    const seqLen = inputIds.shape[1];
    const paddingLen = (blockSize - (seqLen % blockSize)) % blockSize;
    if (paddingLen > 0) {
      inputIds = nn.functional.pad(inputIds, [0, paddingLen], { value: this.config.pad_token_id });
      attentionMask = nn.functional.pad(attentionMask, [0, paddingLen], { value: 0 });
      tokenTypeIds = nn.functional.pad(tokenTypeIds, [0, paddingLen], { value: 0 });
    }
    return [paddingLen, inputIds, attentionMask, tokenTypeIds];
  }

  forward(inputIds, attentionMask = null) {
    const [batchSize, seqLength] = inputIds.shape;
    let mask = attentionMask ?? om.ones([batchSize, seqLength]);
    let tokenTypeIds = this.embeddings.token_type_ids.slice(1, 0, seqLength).expand(batchSize, seqLength);
    // block_sparse needs more tokens than a query block attends to: 2 global, 3 sliding and
    // 2 * num_random_blocks blocks (random ones and a buffer)
    const maxTokensToAttend = (5 + 2 * this.config.num_random_blocks) * this.config.block_size;
    const attentionType = this.attention_type === 'block_sparse' && seqLength <= maxTokensToAttend ? 'original_full' : this.attention_type;
    let paddingLen = 0;
    let masks;
    if (attentionType === 'block_sparse') {
      [paddingLen, inputIds, mask, tokenTypeIds] = this.padToBlockSize(inputIds, mask, tokenTypeIds);
      const [blockedEncoderMask, bandMask, fromMask, toMask] = BigBirdModel.createMasksForBlockSparseAttn(mask, this.block_size);
      masks = [null, bandMask, fromMask, toMask, blockedEncoderMask];
    } else {
      masks = [extendedAttentionMask(mask), null, null, null, null];
    }
    let sequenceOutput = this.encoder.forward(this.embeddings.forward(inputIds, tokenTypeIds), attentionType, ...masks);
    const poolerOutput = this.activation.forward(this.pooler.forward(sequenceOutput.select(1, 0)));
    // undo padding: the caller expects input_ids' length
    if (paddingLen > 0) sequenceOutput = sequenceOutput.slice(1, 0, -paddingLen);
    return [sequenceOutput, poolerOutput];
  }
}
