// M2M100's encoder (Hugging Face transformers' M2M100Encoder, modeling_m2m_100.py, eager attention)
// ported to onemodel as a user ports it: the same modules, names and operations, so the encoder's
// part of a checkpoint's state dict (`embed_tokens.weight`, `layers.0.self_attn.k_proj.weight`, ...,
// `layers.0.final_layer_norm.weight`, `layer_norm.bias`) loads with a strict loadStateDict. The
// positions come from the input ids (`create_position_ids_from_input_ids`: a cumsum of
// `input_ids != pad_token_id`, the padding at `padding_idx`) and read a sinusoidal table, a
// non-persistent buffer of `max_position_embeddings + 4` rows that forward makes again, longer, when
// a sequence needs more rows, as upstream; so the length is unbounded. The layers are MBart's
// pre-norm ones (BartAttention, relu FFN). Dropout and LayerDrop are the identity in eval mode.
// forward(input_ids [batch, seq] int64 (pad_token_id where padded), attention_mask [batch, seq] (1
// keep, 0 pad; default none)) -> last_hidden_state [batch, seq, d_model].
import * as om from 'onemodel';
import { expandMask, portConfig } from './modeling_utils.mjs';
import { createPositionIdsFromInputIds } from './roberta.mjs';
import { Wav2Vec2Attention } from './wav2vec2.mjs';

const nn = om.nn;

/** M2M100Config's defaults (m2m100_418M's sizes) for the encoder fields this port reads. */
export const M2M100_DEFAULTS = {
  vocab_size: 128112, d_model: 1024, encoder_layers: 12, encoder_attention_heads: 16, encoder_ffn_dim: 4096,
  max_position_embeddings: 1024, scale_embedding: true, pad_token_id: 1, activation_function: 'relu',
};

/** M2M100ScaledWordEmbedding: an embedding whose rows are multiplied by embedScale (sqrt(d_model)). */
export class M2M100ScaledWordEmbedding extends nn.Embedding {
  constructor(numEmbeddings, embeddingDim, paddingIdx, embedScale = 1.0) {
    super(numEmbeddings, embeddingDim, { paddingIdx });
    this.embed_scale = embedScale;
  }

  forward(inputIds) {
    return super.forward(inputIds).mul(this.embed_scale);
  }
}

/**
 * Sinusoidal positions of any length (Speech2Text's copy is the same): the table `weights` is a
 * non-persistent buffer, made in the constructor for numPositions + offset rows (makeWeights adds
 * the offset again) and made again in forward, longer, when a sequence needs more rows.
 */
export class M2M100SinusoidalPositionalEmbedding extends nn.Module {
  constructor(numPositions, embeddingDim, paddingIdx = null) {
    super();
    this.offset = 2;
    this.embedding_dim = embeddingDim;
    this.padding_idx = paddingIdx;
    this.makeWeights(numPositions + this.offset, embeddingDim, paddingIdx);
  }

  makeWeights(numEmbeddings, embeddingDim, paddingIdx = null) {
    // om.tidy frees the temporaries (makeWeights runs in the constructor, no forward scope)
    const embWeights = om.tidy(() => M2M100SinusoidalPositionalEmbedding.getEmbedding(numEmbeddings + this.offset, embeddingDim, paddingIdx));
    // the table replaced is freed now (in PyTorch, when the last reference goes)
    this.weights?.dispose();
    this.registerBuffer('weights', embWeights, { persistent: false });
  }

  /** [numEmbeddings, embeddingDim]: sin of each position's angles, then cos (tensor2tensor's order), the row paddingIdx zeros. */
  static getEmbedding(numEmbeddings, embeddingDim, paddingIdx = null) {
    const halfDim = Math.floor(embeddingDim / 2);
    const step = Math.log(10000) / (halfDim - 1);
    let emb = om.arange(0, halfDim, { dtype: 'int64' }).float().mul(-step).exp();
    emb = om.arange(0, numEmbeddings, { dtype: 'int64' }).float().unsqueeze(1).mul(emb.unsqueeze(0));
    emb = om.cat([emb.sin(), emb.cos()], 1).view(numEmbeddings, -1);
    if (embeddingDim % 2 === 1) emb = om.cat([emb, om.zeros([numEmbeddings, 1])], 1); // zero pad
    if (paddingIdx !== null) emb.select(0, paddingIdx).fill_(0); // emb[padding_idx, :] = 0
    return emb;
  }

  /**
   * input_ids [bsz, seqLen] -> [bsz, seqLen, embedding_dim]. Upstream decorates it with
   * @torch.no_grad(); the table is no parameter and the result is detached, so no gradient reaches
   * it either way, and om.noGrad would be refused while tracing (NoGradInTrace).
   */
  forward(inputIds) {
    const [bsz, seqLen] = inputIds.shape;
    // create the position ids from the input token ids; any padded tokens remain padded
    const positionIds = createPositionIdsFromInputIds(inputIds, this.padding_idx);
    // expand embeddings if needed
    const maxPos = this.padding_idx + 1 + seqLen;
    if (maxPos > this.weights.shape[0]) this.makeWeights(maxPos + this.offset, this.embedding_dim, this.padding_idx);
    return this.weights.indexSelect(0, positionIds.view(-1)).view(bsz, seqLen, this.weights.shape[1]).detach();
  }
}

/** MBart's pre-norm encoder layer (M2M100's and Speech2Text's copy it): attention, then the relu FFN, each around a residual. */
export class M2M100EncoderLayer extends nn.Module {
  constructor(config) {
    super();
    this.embed_dim = config.d_model;
    this.self_attn = new Wav2Vec2Attention(this.embed_dim, config.encoder_attention_heads); // BartAttention
    this.self_attn_layer_norm = new nn.LayerNorm(this.embed_dim);
    this.fc1 = new nn.Linear(this.embed_dim, config.encoder_ffn_dim);
    this.fc2 = new nn.Linear(config.encoder_ffn_dim, this.embed_dim);
    this.final_layer_norm = new nn.LayerNorm(this.embed_dim);
  }

  forward(hiddenStates, attentionMask) {
    let residual = hiddenStates;
    let h = this.self_attn.forward(this.self_attn_layer_norm.forward(hiddenStates), null, attentionMask);
    h = residual.add(h);
    residual = h;
    h = this.fc2.forward(this.fc1.forward(this.final_layer_norm.forward(h)).relu());
    // upstream clamps float16 states to their finite range here; float32 states are left as they are
    return residual.add(h);
  }
}

export class M2M100Encoder extends nn.Module {
  constructor(config = {}) {
    super();
    const c = portConfig('M2M100Encoder', M2M100_DEFAULTS, config, 'activation_function', 'relu');
    this.config = c;
    this.padding_idx = c.pad_token_id;
    const embedScale = c.scale_embedding ? Math.sqrt(c.d_model) : 1.0;
    this.embed_tokens = new M2M100ScaledWordEmbedding(c.vocab_size, c.d_model, this.padding_idx, embedScale);
    this.embed_positions = new M2M100SinusoidalPositionalEmbedding(c.max_position_embeddings, c.d_model, this.padding_idx);
    this.layers = new nn.ModuleList(Array.from({ length: c.encoder_layers }, () => new M2M100EncoderLayer(c)));
    this.layer_norm = new nn.LayerNorm(c.d_model);
  }

  forward(inputIds, attentionMask = null) {
    const inputsEmbeds = this.embed_tokens.forward(inputIds);
    const embedPos = this.embed_positions.forward(inputIds);
    let hiddenStates = inputsEmbeds.add(embedPos);
    // _prepare_4d_attention_mask: [bsz, seq] -> [bsz, 1, seq, seq]
    const mask = attentionMask === null ? null : expandMask(attentionMask);
    for (const layer of this.layers) hiddenStates = layer.forward(hiddenStates, mask);
    return this.layer_norm.forward(hiddenStates);
  }
}
