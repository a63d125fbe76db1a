// BERT (Hugging Face transformers' BertModel, modeling_bert.py, eager attention) ported to
// onemodel as a user ports it: the same modules, names and operations, so a checkpoint's state
// dict (`embeddings.word_embeddings.weight`, `encoder.layer.0.attention.self.query.weight`, ...,
// `pooler.dense.weight`) loads with a strict loadStateDict; `embeddings.position_ids` and
// `embeddings.token_type_ids` are non-persistent buffers, as upstream. Dropout is the identity
// in eval mode. forward(input_ids [batch, seq] int64, attention_mask [batch, seq] (1 keep, 0 pad),
// token_type_ids = zeros) -> [last_hidden_state [batch, seq, hidden], pooler_output [batch, hidden]].
import * as om from 'onemodel';
import { extendedAttentionMask, portConfig } from './modeling_utils.mjs';

const nn = om.nn;

/** BertConfig's defaults (bert-base) for the fields this port reads. */
export const BERT_DEFAULTS = {
  vocab_size: 30522, hidden_size: 768, num_hidden_layers: 12, num_attention_heads: 12, intermediate_size: 3072,
  hidden_act: 'gelu', max_position_embeddings: 512, type_vocab_size: 2, layer_norm_eps: 1e-12, pad_token_id: 0,
};

export class BertEmbeddings extends nn.Module {
  constructor(config) {
    super();
    this.word_embeddings = new nn.Embedding(config.vocab_size, config.hidden_size, { paddingIdx: config.pad_token_id });
    this.position_embeddings = new nn.Embedding(config.max_position_embeddings, config.hidden_size);
    this.token_type_embeddings = new nn.Embedding(config.type_vocab_size, config.hidden_size);
    this.LayerNorm = new nn.LayerNorm(config.hidden_size, { eps: config.layer_norm_eps });
    this.dropout = new nn.Dropout(0.1);
    const n = config.max_position_embeddings;
    const positionIds = om.tidy(() => om.arange(0, n, { dtype: 'int64' }).expand(1, -1)); // om.tidy: no forward scope here
    this.registerBuffer('position_ids', positionIds, { persistent: false });
    this.registerBuffer('token_type_ids', om.zeros([1, n], { dtype: 'int64' }), { persistent: false });
  }

  forward(inputIds, tokenTypeIds = null) {
    const [batch, seqLength] = inputIds.shape;
    const positionIds = this.position_ids.slice(1, 0, seqLength);
    const types = tokenTypeIds ?? this.token_type_ids.slice(1, 0, seqLength).expand(batch, seqLength);
    let embeddings = this.word_embeddings.forward(inputIds).add(this.token_type_embeddings.forward(types));
    embeddings = embeddings.add(this.position_embeddings.forward(positionIds));
    return this.dropout.forward(this.LayerNorm.forward(embeddings));
  }
}

export class BertSelfAttention extends nn.Module {
  constructor(config) {
    super();
    this.num_attention_heads = config.num_attention_heads;
    this.attention_head_size = config.hidden_size / config.num_attention_heads;
    this.all_head_size = this.num_attention_heads * this.attention_head_size;
    this.query = new nn.Linear(config.hidden_size, this.all_head_size);
    this.key = new nn.Linear(config.hidden_size, this.all_head_size);
    this.value = new nn.Linear(config.hidden_size, this.all_head_size);
    this.dropout = new nn.Dropout(0.1);
  }

  transposeForScores(x) {
    return x.view([...x.shape.slice(0, -1), this.num_attention_heads, this.attention_head_size]).permute(0, 2, 1, 3);
  }

  forward(hiddenStates, attentionMask) {
    const keyLayer = this.transposeForScores(this.key.forward(hiddenStates));
    const valueLayer = this.transposeForScores(this.value.forward(hiddenStates));
    const queryLayer = this.transposeForScores(this.query.forward(hiddenStates));
    let attentionScores = queryLayer.matmul(keyLayer.transpose(-1, -2));
    attentionScores = attentionScores.div(Math.sqrt(this.attention_head_size)).add(attentionMask);
    const attentionProbs = this.dropout.forward(attentionScores.softmax(-1));
    const contextLayer = attentionProbs.matmul(valueLayer).permute(0, 2, 1, 3).contiguous();
    return contextLayer.view([...contextLayer.shape.slice(0, -2), this.all_head_size]);
  }
}

/** BertSelfOutput and BertOutput (the same code upstream): dense, dropout, LayerNorm of the sum with the input. */
export class BertSelfOutput extends nn.Module {
  constructor(config, inner) {
    super();
    this.dense = new nn.Linear(inner, config.hidden_size);
    this.LayerNorm = new nn.LayerNorm(config.hidden_size, { eps: config.layer_norm_eps });
    this.dropout = new nn.Dropout(0.1);
  }

  forward(hiddenStates, inputTensor) {
    return this.LayerNorm.forward(this.dropout.forward(this.dense.forward(hiddenStates)).add(inputTensor));
  }
}

export class BertAttention extends nn.Module {
  constructor(config) {
    super();
    this.self = new BertSelfAttention(config);
    this.output = new BertSelfOutput(config, config.hidden_size);
  }

  forward(hiddenStates, attentionMask) {
    return this.output.forward(this.self.forward(hiddenStates, attentionMask), hiddenStates);
  }
}

export class BertIntermediate extends nn.Module {
  constructor(config) {
    super();
    this.dense = new nn.Linear(config.hidden_size, config.intermediate_size);
  }

  forward(hiddenStates) {
    return nn.functional.gelu(this.dense.forward(hiddenStates));
  }
}

export class BertLayer extends nn.Module {
  constructor(config) {
    super();
    this.attention = new BertAttention(config);
    this.intermediate = new BertIntermediate(config);
    this.output = new BertSelfOutput(config, config.intermediate_size);
  }

  forward(hiddenStates, attentionMask) {
    const attentionOutput = this.attention.forward(hiddenStates, attentionMask);
    return this.output.forward(this.intermediate.forward(attentionOutput), attentionOutput);
  }
}

export class BertEncoder extends nn.Module {
  constructor(config) {
    super();
    this.layer = new nn.ModuleList(Array.from({ length: config.num_hidden_layers }, () => new BertLayer(config)));
  }

  forward(hiddenStates, attentionMask) {
    let h = hiddenStates;
    for (const layer of this.layer) h = layer.forward(h, attentionMask);
    return h;
  }
}

export class BertPooler extends nn.Module {
  constructor(config) {
    super();
    this.dense = new nn.Linear(config.hidden_size, config.hidden_size);
    this.activation = new nn.Tanh();
  }

  forward(hiddenStates) {
    return this.activation.forward(this.dense.forward(hiddenStates.select(1, 0))); // hidden_states[:, 0]
  }
}

export class BertModel extends nn.Module {
  constructor(config = {}) {
    super();
    const c = portConfig('BertModel', BERT_DEFAULTS, config, 'hidden_act', 'gelu');
    this.config = c;
    this.embeddings = new BertEmbeddings(c);
    this.encoder = new BertEncoder(c);
    this.pooler = new BertPooler(c);
  }

  forward(inputIds, attentionMask = null, tokenTypeIds = null) {
    const mask = attentionMask ?? om.ones(inputIds.shape, { dtype: 'int64' });
    const sequenceOutput = this.encoder.forward(this.embeddings.forward(inputIds, tokenTypeIds), extendedAttentionMask(mask));
    return [sequenceOutput, this.pooler.forward(sequenceOutput)];
  }
}
