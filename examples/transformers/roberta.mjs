// RoBERTa (Hugging Face transformers' RobertaModel, modeling_roberta.py, eager attention) ported to
// onemodel as a user ports it: upstream's encoder and pooler are BERT's ("Copied from"), so they
// are bert.mjs's; the embeddings are RoBERTa's own: the position ids come from the input ids
// (create_position_ids_from_input_ids: a cumsum of the non-padding mask, so padded tokens take
// padding_idx and the others padding_idx + 1, 2, ...), and the position embedding has that
// padding_idx. A checkpoint's state dict (`embeddings.word_embeddings.weight`, ...,
// `pooler.dense.weight`) loads with a strict loadStateDict; `embeddings.position_ids` and
// `embeddings.token_type_ids` are non-persistent buffers, as upstream. forward(input_ids [batch,
// seq] int64 (pad_token_id at padded positions), attention_mask, token_type_ids) ->
// [last_hidden_state, pooler_output].
import * as om from 'onemodel';
import { BertEmbeddings, BertModel } from './bert.mjs';

const nn = om.nn;

/** RobertaConfig's defaults (roberta-base) for the fields this port reads. */
export const ROBERTA_DEFAULTS = {
  vocab_size: 50265, hidden_size: 768, num_hidden_layers: 12, num_attention_heads: 12, intermediate_size: 3072,
  hidden_act: 'gelu', max_position_embeddings: 514, type_vocab_size: 1, layer_norm_eps: 1e-5, pad_token_id: 1,
};

/** Positions of the non-padding tokens, counted from paddingIdx + 1; padding tokens take paddingIdx. */
export function createPositionIdsFromInputIds(inputIds, paddingIdx, pastKeyValuesLength = 0) {
  const mask = inputIds.ne(paddingIdx).long(); // .int() upstream: onemodel's integers are int64
  const incrementalIndices = mask.cumsum(1).add(pastKeyValuesLength).mul(mask);
  return incrementalIndices.long().add(paddingIdx);
}

export class RobertaEmbeddings extends BertEmbeddings {
  constructor(config) {
    super(config);
    this.padding_idx = config.pad_token_id;
    this.position_embeddings.dispose();
    this.position_embeddings = new nn.Embedding(config.max_position_embeddings, config.hidden_size, { paddingIdx: this.padding_idx });
  }

  forward(inputIds, tokenTypeIds = null) {
    const positionIds = createPositionIdsFromInputIds(inputIds, this.padding_idx);
    const [batch, seqLength] = inputIds.shape;
    const types = tokenTypeIds ?? this.token_type_ids.slice(1, 0, seqLength).expand(batch, seqLength);
    let embeddings = this.word_embeddings.forward(inputIds).add(this.token_type_embeddings.forward(types));
    embeddings = embeddings.add(this.position_embeddings.forward(positionIds));
    return this.dropout.forward(this.LayerNorm.forward(embeddings));
  }
}

export class RobertaModel extends BertModel {
  constructor(config = {}) {
    super({ ...ROBERTA_DEFAULTS, ...config });
    this.embeddings.dispose();
    this.embeddings = new RobertaEmbeddings(this.config);
  }
}
