// DistilBERT (Hugging Face transformers' DistilBertModel, modeling_distilbert.py, eager attention)
// ported to onemodel as a user ports it: the same modules, names and operations, so a checkpoint's
// state dict (`embeddings.word_embeddings.weight`, `transformer.layer.0.attention.q_lin.weight`,
// ..., `transformer.layer.1.output_layer_norm.bias`) loads with a strict loadStateDict;
// `embeddings.position_ids` is a non-persistent buffer, as upstream. With `sinusoidal_pos_embds`
// the position table is made as upstream makes it (fixed sines and cosines, no gradient), else it is
// learned; a checkpoint holds it either way. No token types. Dropout is the identity in eval mode.
// forward(input_ids [batch, seq] int64, attention_mask [batch, seq] (1 keep, 0 pad; default all
// ones)) -> last_hidden_state [batch, seq, dim].
import * as om from 'onemodel';
import { FLOAT32_MIN, portConfig } from './modeling_utils.mjs';

const nn = om.nn;

/** DistilBertConfig's defaults (distilbert-base-uncased) for the fields this port reads. */
export const DISTILBERT_DEFAULTS = {
  vocab_size: 30522, max_position_embeddings: 512, sinusoidal_pos_embds: false, n_layers: 6, n_heads: 12, dim: 768,
  hidden_dim: 3072, dropout: 0.1, attention_dropout: 0.1, activation: 'gelu', pad_token_id: 0,
};

/**
 * create_sinusoidal_embeddings: writes into out [nPos, dim] (a parameter, then fixed: no gradient)
 * sin(pos / 10000^(2 * (j // 2) / dim)) at even j and cos at odd j; the angles in float64, as
 * upstream's numpy computes them, each value rounded once to float32.
 */
export function createSinusoidalEmbeddings(nPos, dim, out) {
  const positionEnc = Array.from({ length: nPos }, (_, pos) => Array.from({ length: dim }, (_, j) => pos / 10000 ** ((2 * Math.floor(j / 2)) / dim)));
  const columns = (parity, fn) => om.tensor(positionEnc.map((row) => row.filter((_, j) => j % 2 === parity).map(fn)));
  out.requiresGrad = false;
  om.tidy(() => om.noGrad(() => {
    out.slice(1, 0, null, 2).copy_(columns(0, Math.sin)); // out[:, 0::2] = sin(position_enc[:, 0::2])
    out.slice(1, 1, null, 2).copy_(columns(1, Math.cos)); // out[:, 1::2] = cos(position_enc[:, 1::2])
  }));
}

/** Upstream's `Embeddings`. */
export class DistilBertEmbeddings extends nn.Module {
  constructor(config) {
    super();
    this.word_embeddings = new nn.Embedding(config.vocab_size, config.dim, { paddingIdx: config.pad_token_id });
    this.position_embeddings = new nn.Embedding(config.max_position_embeddings, config.dim);
    if (config.sinusoidal_pos_embds) createSinusoidalEmbeddings(config.max_position_embeddings, config.dim, this.position_embeddings.weight);
    this.LayerNorm = new nn.LayerNorm(config.dim, { eps: 1e-12 });
    this.dropout = new nn.Dropout(config.dropout);
    const positionIds = om.tidy(() => om.arange(0, config.max_position_embeddings, { dtype: 'int64' }).expand(1, -1)); // om.tidy: no forward scope here
    this.registerBuffer('position_ids', positionIds, { persistent: false });
  }

  forward(inputIds) {
    const inputEmbeds = this.word_embeddings.forward(inputIds); // (bs, max_seq_length, dim)
    const seqLength = inputEmbeds.shape[1];
    const positionIds = this.position_ids.slice(1, 0, seqLength); // position_ids[:, :seq_length]
    const embeddings = inputEmbeds.add(this.position_embeddings.forward(positionIds));
    return this.dropout.forward(this.LayerNorm.forward(embeddings));
  }
}

export class MultiHeadSelfAttention extends nn.Module {
  constructor(config) {
    super();
    this.n_heads = config.n_heads;
    this.dim = config.dim;
    this.dropout = new nn.Dropout(config.attention_dropout);
    this.q_lin = new nn.Linear(config.dim, config.dim);
    this.k_lin = new nn.Linear(config.dim, config.dim);
    this.v_lin = new nn.Linear(config.dim, config.dim);
    this.out_lin = new nn.Linear(config.dim, config.dim);
  }

  /** query, key, value [bs, length, dim], mask [bs, kLength] (0 where padded) -> [context [bs, qLength, dim]]. */
  forward(query, key, value, mask) {
    const [bs] = query.shape;
    const kLength = key.shape[1];
    const dimPerHead = Math.floor(this.dim / this.n_heads);
    const maskReshp = [bs, 1, 1, kLength];
    const shape = (x) => x.view(bs, -1, this.n_heads, dimPerHead).transpose(1, 2);
    const unshape = (x) => x.transpose(1, 2).contiguous().view(bs, -1, this.n_heads * dimPerHead);
    let q = shape(this.q_lin.forward(query)); // (bs, n_heads, q_length, dim_per_head)
    const k = shape(this.k_lin.forward(key));
    const v = shape(this.v_lin.forward(value));
    q = q.div(Math.sqrt(dimPerHead));
    let scores = q.matmul(k.transpose(2, 3)); // (bs, n_heads, q_length, k_length)
    const m = mask.eq(0).view(maskReshp).expandAs(scores); // (mask == 0).view(mask_reshp).expand_as(scores)
    scores = scores.maskedFill(m, FLOAT32_MIN); // torch.tensor(torch.finfo(scores.dtype).min)
    const weights = this.dropout.forward(scores.softmax(-1));
    return [this.out_lin.forward(unshape(weights.matmul(v)))];
  }
}

export class FFN extends nn.Module {
  constructor(config) {
    super();
    this.dropout = new nn.Dropout(config.dropout);
    this.lin1 = new nn.Linear(config.dim, config.hidden_dim);
    this.lin2 = new nn.Linear(config.hidden_dim, config.dim);
  }

  forward(input) {
    // apply_chunking_to_forward(ff_chunk, ...) without chunks (chunk_size_feed_forward 0)
    return this.dropout.forward(this.lin2.forward(nn.functional.gelu(this.lin1.forward(input))));
  }
}

export class TransformerBlock extends nn.Module {
  constructor(config) {
    super();
    this.attention = new MultiHeadSelfAttention(config);
    this.sa_layer_norm = new nn.LayerNorm(config.dim, { eps: 1e-12 });
    this.ffn = new FFN(config);
    this.output_layer_norm = new nn.LayerNorm(config.dim, { eps: 1e-12 });
  }

  forward(x, attnMask) {
    const saOutput = this.sa_layer_norm.forward(this.attention.forward(x, x, x, attnMask)[0].add(x));
    return [this.output_layer_norm.forward(this.ffn.forward(saOutput).add(saOutput))];
  }
}

/** Upstream's `Transformer`. */
export class DistilBertTransformer extends nn.Module {
  constructor(config) {
    super();
    this.n_layers = config.n_layers;
    this.layer = new nn.ModuleList(Array.from({ length: config.n_layers }, () => new TransformerBlock(config)));
  }

  forward(x, attnMask) {
    let hiddenState = x;
    for (const layerModule of this.layer) hiddenState = layerModule.forward(hiddenState, attnMask).at(-1);
    return hiddenState;
  }
}

export class DistilBertModel extends nn.Module {
  constructor(config = {}) {
    super();
    const c = portConfig('DistilBertModel', DISTILBERT_DEFAULTS, config, 'activation', 'gelu');
    this.config = c;
    this.embeddings = new DistilBertEmbeddings(c);
    this.transformer = new DistilBertTransformer(c);
  }

  forward(inputIds, attentionMask = null) {
    const embeddings = this.embeddings.forward(inputIds); // (bs, seq_length, dim)
    const mask = attentionMask ?? om.ones(inputIds.shape); // torch.ones(input_shape)
    return this.transformer.forward(embeddings, mask);
  }
}
