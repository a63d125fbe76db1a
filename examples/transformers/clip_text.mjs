// CLIP's text tower (Hugging Face transformers' CLIPTextModel, modeling_clip.py, eager attention)
// ported to onemodel as a user ports it: the same modules, names and operations, so a checkpoint's
// state dict (`text_model.embeddings.token_embedding.weight`,
// `text_model.encoder.layers.0.self_attn.q_proj.weight`, ..., `text_model.final_layer_norm.weight`)
// loads with a strict loadStateDict; `text_model.embeddings.position_ids` is a non-persistent
// buffer, as upstream. A causal mask made in place (fill_, triu_) plus the padding mask, quick_gelu,
// and the pooled output read at each row's end-of-text token: a gather at an index computed from
// the input ids. forward(input_ids [batch, seq] int64, attention_mask [batch, seq] (1 keep, 0 pad;
// default all ones)) -> [last_hidden_state [batch, seq, hidden], pooler_output [batch, hidden]].
import * as om from 'onemodel';
import { FLOAT32_MIN, expandMask, portConfig } from './modeling_utils.mjs';

const nn = om.nn;

/** CLIPTextConfig's defaults (openai/clip-vit-base-patch32's text model) for the fields this port reads. */
export const CLIP_TEXT_DEFAULTS = {
  vocab_size: 49408, hidden_size: 512, intermediate_size: 2048, num_hidden_layers: 12, num_attention_heads: 8,
  max_position_embeddings: 77, hidden_act: 'quick_gelu', layer_norm_eps: 1e-5, eos_token_id: 2,
};

export class CLIPTextEmbeddings extends nn.Module {
  constructor(config) {
    super();
    this.token_embedding = new nn.Embedding(config.vocab_size, config.hidden_size);
    this.position_embedding = new nn.Embedding(config.max_position_embeddings, config.hidden_size);
    const positionIds = om.tidy(() => om.arange(0, config.max_position_embeddings, { dtype: 'int64' }).expand(1, -1));
    this.registerBuffer('position_ids', positionIds, { persistent: false });
  }

  forward(inputIds) {
    const seqLength = inputIds.shape[inputIds.shape.length - 1];
    const positionIds = this.position_ids.slice(1, 0, seqLength);
    return this.token_embedding.forward(inputIds).add(this.position_embedding.forward(positionIds));
  }
}

export class CLIPAttention extends nn.Module {
  constructor(config) {
    super();
    this.embed_dim = config.hidden_size;
    this.num_heads = config.num_attention_heads;
    this.head_dim = this.embed_dim / this.num_heads;
    this.scale = this.head_dim ** -0.5;
    this.k_proj = new nn.Linear(this.embed_dim, this.embed_dim);
    this.v_proj = new nn.Linear(this.embed_dim, this.embed_dim);
    this.q_proj = new nn.Linear(this.embed_dim, this.embed_dim);
    this.out_proj = new nn.Linear(this.embed_dim, this.embed_dim);
  }

  shape(tensor, seqLen, bsz) {
    return tensor.view(bsz, seqLen, this.num_heads, this.head_dim).transpose(1, 2).contiguous();
  }

  forward(hiddenStates, attentionMask, causalAttentionMask) {
    const [bsz, tgtLen, embedDim] = hiddenStates.shape;
    const queryStates0 = this.q_proj.forward(hiddenStates).mul(this.scale);
    const projShape = [bsz * this.num_heads, -1, this.head_dim];
    const queryStates = this.shape(queryStates0, tgtLen, bsz).view(projShape);
    const keyStates = this.shape(this.k_proj.forward(hiddenStates), -1, bsz).view(projShape);
    const valueStates = this.shape(this.v_proj.forward(hiddenStates), -1, bsz).view(projShape);
    const srcLen = keyStates.shape[1];
    // torch.bmm is om.matmul of 3-D tensors
    let attnWeights = queryStates.matmul(keyStates.transpose(1, 2));
    attnWeights = attnWeights.view(bsz, this.num_heads, tgtLen, srcLen).add(causalAttentionMask);
    attnWeights = attnWeights.view(bsz * this.num_heads, tgtLen, srcLen);
    attnWeights = attnWeights.view(bsz, this.num_heads, tgtLen, srcLen).add(attentionMask);
    attnWeights = attnWeights.view(bsz * this.num_heads, tgtLen, srcLen).softmax(-1);
    const attnOutput = attnWeights.matmul(valueStates).view(bsz, this.num_heads, tgtLen, this.head_dim).transpose(1, 2);
    return this.out_proj.forward(attnOutput.reshape(bsz, tgtLen, embedDim));
  }
}

/** ACT2FN['quick_gelu']: x * sigmoid(1.702 x). */
export function quickGelu(x) {
  return x.mul(x.mul(1.702).sigmoid());
}

export class CLIPMLP extends nn.Module {
  constructor(config) {
    super();
    this.fc1 = new nn.Linear(config.hidden_size, config.intermediate_size);
    this.fc2 = new nn.Linear(config.intermediate_size, config.hidden_size);
  }

  forward(hiddenStates) {
    return this.fc2.forward(quickGelu(this.fc1.forward(hiddenStates)));
  }
}

export class CLIPEncoderLayer extends nn.Module {
  constructor(config) {
    super();
    this.self_attn = new CLIPAttention(config);
    this.layer_norm1 = new nn.LayerNorm(config.hidden_size, { eps: config.layer_norm_eps });
    this.mlp = new CLIPMLP(config);
    this.layer_norm2 = new nn.LayerNorm(config.hidden_size, { eps: config.layer_norm_eps });
  }

  forward(hiddenStates, attentionMask, causalAttentionMask) {
    const h = hiddenStates.add(this.self_attn.forward(this.layer_norm1.forward(hiddenStates), attentionMask, causalAttentionMask));
    return h.add(this.mlp.forward(this.layer_norm2.forward(h)));
  }
}

export class CLIPEncoder extends nn.Module {
  constructor(config) {
    super();
    this.layers = new nn.ModuleList(Array.from({ length: config.num_hidden_layers }, () => new CLIPEncoderLayer(config)));
  }

  forward(inputsEmbeds, attentionMask, causalAttentionMask) {
    let h = inputsEmbeds;
    for (const layer of this.layers) h = layer.forward(h, attentionMask, causalAttentionMask);
    return h;
  }
}

export class CLIPTextTransformer extends nn.Module {
  constructor(config) {
    super();
    this.embeddings = new CLIPTextEmbeddings(config);
    this.encoder = new CLIPEncoder(config);
    this.final_layer_norm = new nn.LayerNorm(config.hidden_size, { eps: config.layer_norm_eps });
    this.eos_token_id = config.eos_token_id;
  }

  /** [bsz, 1, seqLen, seqLen]: finfo.min above the diagonal, 0 on and below it. */
  buildCausalAttentionMask(bsz, seqLen) {
    const mask = om.zeros([bsz, seqLen, seqLen]); // torch.empty: every element is written next
    mask.fill_(FLOAT32_MIN);
    mask.triu_(1); // zero out the lower diagonal
    return mask.unsqueeze(1);
  }

  forward(inputIds, attentionMask = null) {
    const inputShape = inputIds.shape;
    const ids = inputIds.view(-1, inputShape[inputShape.length - 1]);
    const hiddenStates = this.embeddings.forward(ids);
    const causalAttentionMask = this.buildCausalAttentionMask(inputShape[0], inputShape[1]);
    const mask = expandMask(attentionMask ?? om.ones(ids.shape, { dtype: 'int64' }));
    const lastHiddenState = this.final_layer_norm.forward(this.encoder.forward(hiddenStates, mask, causalAttentionMask));
    // last_hidden_state[arange(batch), eos_index]: the legacy configs (eos_token_id 2) take the
    // argmax of the ids (the end-of-text token has the highest id), the others the first eos_token_id
    const eosIndex = this.eos_token_id === 2 ? ids.argmax(-1) : ids.eq(this.eos_token_id).long().argmax(-1);
    const pooledOutput = lastHiddenState.index([om.arange(0, lastHiddenState.shape[0], { dtype: 'int64' }), eosIndex]);
    return [lastHiddenState, pooledOutput];
  }
}

export class CLIPTextModel extends nn.Module {
  constructor(config = {}) {
    super();
    const c = portConfig('CLIPTextModel', CLIP_TEXT_DEFAULTS, config, 'hidden_act', 'quick_gelu');
    this.config = c;
    this.text_model = new CLIPTextTransformer(c);
  }

  forward(inputIds, attentionMask = null) {
    return this.text_model.forward(inputIds, attentionMask);
  }
}
