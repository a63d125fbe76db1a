// OPT (Hugging Face transformers' OPTForCausalLM, modeling_opt.py, eager attention) ported to
// onemodel as a user ports it: the same modules, names and operations, so a checkpoint's state dict
// (`model.decoder.embed_tokens.weight`, `model.decoder.embed_positions.weight`,
// `model.decoder.layers.0.self_attn.q_proj.weight`, ..., `lm_head.weight` tied to the token
// embedding) loads with a strict loadStateDict. Positions come from the padding mask
// (`cumsum(mask) * mask - 1`, read at an offset of 2 in the position table), the layers norm before
// (125m, 1.3b, ...) or after (350m) attention and MLP as `do_layer_norm_before` says, and
// `word_embed_proj_dim` may differ from `hidden_size` (350m: `project_in` and `project_out`).
// Inference without a key-value cache; dropout is the identity in eval mode.
// forward(input_ids [batch, seq] int64, attention_mask [batch, seq] (1 keep, 0 pad; default all
// ones)) -> logits [batch, seq, vocab_size].
import * as om from 'onemodel';
import { portConfig } from './modeling_utils.mjs';
import { prepare4dCausalAttentionMaskWithCachePosition } from './bloom.mjs';

const nn = om.nn;

/** OPTConfig's defaults (opt-125m's sizes) for the fields this port reads. */
export const OPT_DEFAULTS = {
  vocab_size: 50272, hidden_size: 768, num_hidden_layers: 12, ffn_dim: 3072, max_position_embeddings: 2048,
  do_layer_norm_before: true, _remove_final_layer_norm: false, word_embed_proj_dim: null, num_attention_heads: 12,
  activation_function: 'relu', enable_bias: true, layer_norm_elementwise_affine: true, pad_token_id: 1,
};

/**
 * OPTLearnedPositionalEmbedding: a table of num_embeddings + 2 rows. OPT was trained with the
 * fairseq convention of positions starting after the padding index, so position p reads row p + 2
 * (a padded token, position -1, reads row 1).
 */
export class OPTLearnedPositionalEmbedding extends nn.Embedding {
  constructor(numEmbeddings, embeddingDim) {
    super(numEmbeddings + 2, embeddingDim);
    this.offset = 2;
  }

  /** attention_mask [batch, seq] -> [batch, seq, embeddingDim]; positionIds, if given, replace the mask's. */
  forward(attentionMask, pastKeyValuesLength = 0, positionIds = null) {
    let ids = positionIds;
    if (ids === null) {
      ids = attentionMask.cumsum(1).mul(attentionMask).sub(1).long();
      ids = ids.slice(1, pastKeyValuesLength); // cut positions if past_key_values_length > 0
    }
    return super.forward(ids.add(this.offset));
  }
}

export class OPTAttention extends nn.Module {
  constructor(config) {
    super();
    this.embed_dim = config.hidden_size;
    this.num_heads = config.num_attention_heads;
    this.head_dim = Math.floor(this.embed_dim / this.num_heads);
    if (this.head_dim * this.num_heads !== this.embed_dim) {
      throw new Error(`OPTAttention: embed_dim must be divisible by num_heads (got \`embed_dim\`: ${this.embed_dim} and \`num_heads\`: ${this.num_heads}).`);
    }
    this.scaling = this.head_dim ** -0.5;
    const bias = config.enable_bias;
    this.k_proj = new nn.Linear(this.embed_dim, this.embed_dim, { bias });
    this.v_proj = new nn.Linear(this.embed_dim, this.embed_dim, { bias });
    this.q_proj = new nn.Linear(this.embed_dim, this.embed_dim, { bias });
    this.out_proj = new nn.Linear(this.embed_dim, this.embed_dim, { bias });
  }

  /** [bsz, len, embed_dim] -> [bsz, heads, len, head_dim]. */
  heads(x, bsz) {
    return x.view(bsz, -1, this.num_heads, this.head_dim).transpose(1, 2);
  }

  forward(hiddenStates, attentionMask) {
    const [bsz, tgtLen] = hiddenStates.shape;
    // upstream scales the query before the product (the original order of rounding), then runs
    // eager_attention_forward with scaling 1.0
    const queryStates = this.heads(this.q_proj.forward(hiddenStates).mul(this.scaling), bsz);
    const keyStates = this.heads(this.k_proj.forward(hiddenStates), bsz);
    const valueStates = this.heads(this.v_proj.forward(hiddenStates), bsz);
    const attnWeights = queryStates.matmul(keyStates.transpose(-1, -2)).add(attentionMask).softmax(-1);
    const attnOutput = attnWeights.matmul(valueStates).transpose(1, 2).contiguous();
    return this.out_proj.forward(attnOutput.reshape(bsz, tgtLen, -1));
  }
}

export class OPTDecoderLayer extends nn.Module {
  constructor(config) {
    super();
    this.embed_dim = config.hidden_size;
    this.self_attn = new OPTAttention(config);
    this.do_layer_norm_before = config.do_layer_norm_before;
    const affine = { elementwiseAffine: config.layer_norm_elementwise_affine };
    this.self_attn_layer_norm = new nn.LayerNorm(this.embed_dim, affine);
    this.fc1 = new nn.Linear(this.embed_dim, config.ffn_dim, { bias: config.enable_bias });
    this.fc2 = new nn.Linear(config.ffn_dim, this.embed_dim, { bias: config.enable_bias });
    this.final_layer_norm = new nn.LayerNorm(this.embed_dim, affine);
  }

  forward(hiddenStates, attentionMask) {
    let residual = hiddenStates;
    let h = hiddenStates;
    if (this.do_layer_norm_before) h = this.self_attn_layer_norm.forward(h); // 125m, 1.7B, ...: norm before
    h = residual.add(this.self_attn.forward(h, attentionMask));
    if (!this.do_layer_norm_before) h = this.self_attn_layer_norm.forward(h); // 350m: norm after

    // the MLP runs on [batch * seq, hidden], as upstream's
    const hiddenStatesShape = h.shape;
    h = h.reshape(-1, h.shape[h.shape.length - 1]);
    residual = h;
    if (this.do_layer_norm_before) h = this.final_layer_norm.forward(h);
    h = this.fc2.forward(this.fc1.forward(h).relu());
    h = residual.add(h).view(hiddenStatesShape);
    if (!this.do_layer_norm_before) h = this.final_layer_norm.forward(h);
    return h;
  }
}

export class OPTDecoder extends nn.Module {
  constructor(config) {
    super();
    this.padding_idx = config.pad_token_id;
    this.embed_tokens = new nn.Embedding(config.vocab_size, config.word_embed_proj_dim, { paddingIdx: this.padding_idx });
    this.embed_positions = new OPTLearnedPositionalEmbedding(config.max_position_embeddings, config.hidden_size);
    const projected = config.word_embed_proj_dim !== config.hidden_size;
    this.project_out = projected ? new nn.Linear(config.hidden_size, config.word_embed_proj_dim, { bias: false }) : null;
    this.project_in = projected ? new nn.Linear(config.word_embed_proj_dim, config.hidden_size, { bias: false }) : null;
    // _remove_final_layer_norm keeps checkpoints fine-tuned before transformers 4.20.1 loading
    this.final_layer_norm = config.do_layer_norm_before && !config._remove_final_layer_norm
      ? new nn.LayerNorm(config.hidden_size, { elementwiseAffine: config.layer_norm_elementwise_affine }) : null;
    this.layers = new nn.ModuleList(Array.from({ length: config.num_hidden_layers }, () => new OPTDecoderLayer(config)));
  }

  forward(inputIds, attentionMask = null) {
    const ids = inputIds.view(-1, inputIds.shape[inputIds.shape.length - 1]);
    let inputsEmbeds = this.embed_tokens.forward(ids);
    const [batchSize, seqLength] = inputsEmbeds.shape;
    const cachePosition = om.arange(0, seqLength, { dtype: 'int64' });
    const mask = attentionMask ?? om.ones([batchSize, seqLength]);
    const causalMask = prepare4dCausalAttentionMaskWithCachePosition(mask, seqLength, mask.shape[mask.shape.length - 1], cachePosition, batchSize);
    const positionIds = mask.cumsum(1).mul(mask).sub(1).long();
    const posEmbeds = this.embed_positions.forward(mask, 0, positionIds);
    if (this.project_in !== null) inputsEmbeds = this.project_in.forward(inputsEmbeds);
    let hiddenStates = inputsEmbeds.add(posEmbeds);
    for (const layer of this.layers) hiddenStates = layer.forward(hiddenStates, causalMask);
    if (this.final_layer_norm !== null) hiddenStates = this.final_layer_norm.forward(hiddenStates);
    if (this.project_out !== null) hiddenStates = this.project_out.forward(hiddenStates);
    return hiddenStates;
  }
}

export class OPTModel extends nn.Module {
  constructor(config) {
    super();
    this.decoder = new OPTDecoder(config);
  }

  forward(inputIds, attentionMask = null) {
    return this.decoder.forward(inputIds, attentionMask);
  }
}

/** OPTForCausalLM: the decoder and a bias-free head tied to the token embedding. */
export class OPTForCausalLM extends nn.Module {
  constructor(config = {}) {
    super();
    const c = portConfig('OPTForCausalLM', OPT_DEFAULTS, config, 'activation_function', 'relu');
    c.word_embed_proj_dim ??= c.hidden_size; // OPTConfig: word_embed_proj_dim defaults to hidden_size
    this.config = c;
    this.model = new OPTModel(c);
    this.lm_head = new nn.Linear(c.word_embed_proj_dim, c.vocab_size, { bias: false });
    this.lm_head.weight.dispose();
    this.lm_head.weight = this.model.decoder.embed_tokens.weight; // tied, as tie_weights() does
  }

  forward(inputIds, attentionMask = null) {
    return this.lm_head.forward(this.model.forward(inputIds, attentionMask));
  }
}
