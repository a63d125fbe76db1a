// ALBERT (Hugging Face transformers' AlbertModel, modeling_albert.py, eager attention) ported to
// onemodel as a user ports it: the same modules, names and operations, so a checkpoint's state dict
// (`embeddings.word_embeddings.weight`, `encoder.embedding_hidden_mapping_in.weight`,
// `encoder.albert_layer_groups.0.albert_layers.0.attention.query.weight`, ..., `pooler.weight`)
// loads with a strict loadStateDict; `embeddings.position_ids` and `embeddings.token_type_ids` are
// non-persistent buffers, as upstream. What sets it apart from BERT: the embeddings are
// embedding_size wide and mapped to hidden_size by a Linear, and the encoder holds
// num_hidden_groups layer groups (one, usually) that serve all num_hidden_layers layers: the same
// weights are called again and again. Dropout is the identity in eval mode.
// forward(input_ids [batch, seq] int64, attention_mask [batch, seq] (1 keep, 0 pad; default all
// ones), token_type_ids = zeros) -> [last_hidden_state [batch, seq, hidden], pooler_output [batch, hidden]].
import * as om from 'onemodel';
import { BertEmbeddings, BertSelfAttention } from './bert.mjs';
import { geluNew } from './gpt2.mjs';
import { extendedAttentionMask, portConfig } from './modeling_utils.mjs';

const nn = om.nn;

/** AlbertConfig's defaults (albert-xxlarge) for the fields this port reads. */
export const ALBERT_DEFAULTS = {
  vocab_size: 30000, embedding_size: 128, hidden_size: 4096, num_hidden_layers: 12, num_hidden_groups: 1,
  num_attention_heads: 64, intermediate_size: 16384, inner_group_num: 1, hidden_act: 'gelu_new',
  max_position_embeddings: 512, type_vocab_size: 2, layer_norm_eps: 1e-12, pad_token_id: 0,
};

/** BERT's embeddings (upstream copies their forward) of embedding_size channels. */
export class AlbertEmbeddings extends BertEmbeddings {
  constructor(config) {
    super({ ...config, hidden_size: config.embedding_size });
  }
}

/**
 * BERT's self-attention (upstream's AlbertAttention subclassed BertSelfAttention, as here; later
 * versions copy its code), then dense, dropout and the LayerNorm of the sum with the input.
 */
export class AlbertAttention extends BertSelfAttention {
  constructor(config) {
    super(config);
    this.output_dropout = new nn.Dropout(0);
    this.dense = new nn.Linear(config.hidden_size, config.hidden_size);
    this.LayerNorm = new nn.LayerNorm(config.hidden_size, { eps: config.layer_norm_eps });
  }

  forward(hiddenStates, attentionMask) {
    const contextLayer = super.forward(hiddenStates, attentionMask);
    const projectedContextLayer = this.output_dropout.forward(this.dense.forward(contextLayer));
    return [this.LayerNorm.forward(hiddenStates.add(projectedContextLayer))];
  }
}

export class AlbertLayer extends nn.Module {
  constructor(config) {
    super();
    this.full_layer_layer_norm = new nn.LayerNorm(config.hidden_size, { eps: config.layer_norm_eps });
    this.attention = new AlbertAttention(config);
    this.ffn = new nn.Linear(config.hidden_size, config.intermediate_size);
    this.ffn_output = new nn.Linear(config.intermediate_size, config.hidden_size);
    this.dropout = new nn.Dropout(0);
  }

  forward(hiddenStates, attentionMask) {
    const attentionOutput = this.attention.forward(hiddenStates, attentionMask);
    const ffnOutput = this.ffChunk(attentionOutput[0]); // apply_chunking_to_forward without chunks
    return [this.full_layer_layer_norm.forward(ffnOutput.add(attentionOutput[0])), ...attentionOutput.slice(1)];
  }

  ffChunk(attentionOutput) {
    return this.ffn_output.forward(geluNew(this.ffn.forward(attentionOutput))); // ACT2FN['gelu_new']
  }
}

export class AlbertLayerGroup extends nn.Module {
  constructor(config) {
    super();
    this.albert_layers = new nn.ModuleList(Array.from({ length: config.inner_group_num }, () => new AlbertLayer(config)));
  }

  forward(hiddenStates, attentionMask) {
    let h = hiddenStates;
    for (const albertLayer of this.albert_layers) h = albertLayer.forward(h, attentionMask)[0];
    return [h];
  }
}

export class AlbertTransformer extends nn.Module {
  constructor(config) {
    super();
    this.config = config;
    this.embedding_hidden_mapping_in = new nn.Linear(config.embedding_size, config.hidden_size);
    this.albert_layer_groups = new nn.ModuleList(Array.from({ length: config.num_hidden_groups }, () => new AlbertLayerGroup(config)));
  }

  forward(hiddenStates, attentionMask) {
    let h = this.embedding_hidden_mapping_in.forward(hiddenStates);
    const { num_hidden_layers: layers, num_hidden_groups: groups } = this.config;
    for (let i = 0; i < layers; i++) {
      // the index of the hidden group: each group's weights serve layers / groups layers in turn
      const groupIdx = Math.trunc(i / (layers / groups));
      h = this.albert_layer_groups.at(groupIdx).forward(h, attentionMask)[0];
    }
    return h;
  }
}

export class AlbertModel extends nn.Module {
  constructor(config = {}) {
    super();
    const c = portConfig('AlbertModel', ALBERT_DEFAULTS, config, 'hidden_act', 'gelu_new');
    this.config = c;
    this.embeddings = new AlbertEmbeddings(c);
    this.encoder = new AlbertTransformer(c);
    this.pooler = new nn.Linear(c.hidden_size, c.hidden_size);
    this.pooler_activation = new nn.Tanh();
  }

  forward(inputIds, attentionMask = null, tokenTypeIds = null) {
    const [batchSize, seqLength] = inputIds.shape;
    const mask = attentionMask ?? om.ones([batchSize, seqLength]);
    // token_type_ids default: the buffer's first seq_length entries, expanded to the batch
    const types = tokenTypeIds ?? this.embeddings.token_type_ids.slice(1, 0, seqLength).expand(batchSize, seqLength);
    const embeddingOutput = this.embeddings.forward(inputIds, types);
    const sequenceOutput = this.encoder.forward(embeddingOutput, extendedAttentionMask(mask));
    const pooledOutput = this.pooler_activation.forward(this.pooler.forward(sequenceOutput.select(1, 0))); // sequence_output[:, 0]
    return [sequenceOutput, pooledOutput];
  }
}
