// GPT-2 (Hugging Face transformers' GPT2LMHeadModel, modeling_gpt2.py) ported to onemodel as a
// user ports it: the same modules, names and operations, so the state dict of a checkpoint
// (`transformer.h.0.attn.c_attn.weight`, ..., `lm_head.weight` tied to `transformer.wte.weight`)
// loads with a strict loadStateDict. Inference without a key-value cache; dropout is the identity
// in eval mode. input_ids [batch, seq] (int64) -> logits [batch, seq, vocab_size].
//
//   import { GPT2LMHeadModel } from 'onemodel/examples/transformers/gpt2.mjs';  (or a relative path)
//   const model = new GPT2LMHeadModel({ vocab_size: 50257, n_positions: 1024, n_embd: 768, n_layer: 12, n_head: 12 }).eval();
//   model.loadStateDict(om.safetensors.load(bytes).tensors);
import * as om from 'onemodel';
import { FLOAT32_MIN, portConfig } from './modeling_utils.mjs';

const nn = om.nn;

/** GPT2Config's defaults (GPT-2 small) for the fields this port reads. */
export const GPT2_DEFAULTS = {
  vocab_size: 50257, n_positions: 1024, n_embd: 768, n_layer: 12, n_head: 12, n_inner: null,
  activation_function: 'gelu_new', layer_norm_epsilon: 1e-5,
};

/** transformers' Conv1D: a Linear whose weight is stored [in, out], applied by addmm. */
export class Conv1D extends nn.Module {
  constructor(nf, nx) {
    super();
    this.nf = nf;
    // nn.init.normal_(std=0.02); om.tidy frees the temporaries (a constructor is no forward scope)
    this.weight = om.tidy(() => om.randn([nx, nf]).mul(0.02));
    this.bias = om.zeros([nf]);
    this.weight.requiresGrad = true;
    this.bias.requiresGrad = true;
  }

  forward(x) {
    const sizeOut = [...x.shape.slice(0, -1), this.nf];
    const y = om.addmm(this.bias, x.view(-1, x.shape[x.shape.length - 1]), this.weight);
    return y.view(sizeOut);
  }
}

/** ACT2FN['gelu_new']: GPT-2's tanh approximation of gelu, written out as upstream writes it. */
export function geluNew(x) {
  const inner = x.add(x.pow(3).mul(0.044715)).mul(Math.sqrt(2 / Math.PI));
  return x.mul(0.5).mul(inner.tanh().add(1));
}

export class GPT2Attention extends nn.Module {
  constructor(config) {
    super();
    const n = config.n_positions;
    const causal = om.tidy(() => om.ones([n, n], { dtype: 'bool' }).tril().view(1, 1, n, n));
    this.registerBuffer('bias', causal, { persistent: false });
    this.embed_dim = config.n_embd;
    this.num_heads = config.n_head;
    this.head_dim = this.embed_dim / this.num_heads;
    this.split_size = this.embed_dim;
    this.c_attn = new Conv1D(3 * this.embed_dim, this.embed_dim);
    this.c_proj = new Conv1D(this.embed_dim, this.embed_dim);
    this.attn_dropout = new nn.Dropout(0.1);
    this.resid_dropout = new nn.Dropout(0.1);
  }

  splitHeads(tensor) {
    return tensor.view([...tensor.shape.slice(0, -1), this.num_heads, this.head_dim]).permute(0, 2, 1, 3);
  }

  mergeHeads(tensor) {
    const t = tensor.permute(0, 2, 1, 3).contiguous();
    return t.view([...t.shape.slice(0, -2), this.num_heads * this.head_dim]);
  }

  attn(query, key, value) {
    let attnWeights = query.matmul(key.transpose(-1, -2));
    attnWeights = attnWeights.div(om.full([], Math.sqrt(value.shape[value.shape.length - 1])));
    const queryLength = query.shape[query.shape.length - 2];
    const keyLength = key.shape[key.shape.length - 2];
    const causalMask = this.bias.slice(2, keyLength - queryLength, keyLength).slice(3, 0, keyLength);
    attnWeights = om.where(causalMask, attnWeights, om.full([], FLOAT32_MIN));
    attnWeights = this.attn_dropout.forward(attnWeights.softmax(-1));
    return attnWeights.matmul(value);
  }

  forward(hiddenStates) {
    const [query, key, value] = this.c_attn.forward(hiddenStates).split(this.split_size, 2).map((t) => this.splitHeads(t));
    const attnOutput = this.mergeHeads(this.attn(query, key, value));
    return this.resid_dropout.forward(this.c_proj.forward(attnOutput));
  }
}

export class GPT2MLP extends nn.Module {
  constructor(intermediateSize, config) {
    super();
    this.c_fc = new Conv1D(intermediateSize, config.n_embd);
    this.c_proj = new Conv1D(config.n_embd, intermediateSize);
    this.dropout = new nn.Dropout(0.1);
  }

  forward(hiddenStates) {
    return this.dropout.forward(this.c_proj.forward(geluNew(this.c_fc.forward(hiddenStates))));
  }
}

export class GPT2Block extends nn.Module {
  constructor(config) {
    super();
    const d = config.n_embd;
    this.ln_1 = new nn.LayerNorm(d, { eps: config.layer_norm_epsilon });
    this.attn = new GPT2Attention(config);
    this.ln_2 = new nn.LayerNorm(d, { eps: config.layer_norm_epsilon });
    this.mlp = new GPT2MLP(config.n_inner ?? 4 * d, config);
  }

  forward(hiddenStates) {
    const h = this.attn.forward(this.ln_1.forward(hiddenStates)).add(hiddenStates);
    return h.add(this.mlp.forward(this.ln_2.forward(h)));
  }
}

export class GPT2Model extends nn.Module {
  constructor(config) {
    super();
    this.wte = new nn.Embedding(config.vocab_size, config.n_embd);
    this.wpe = new nn.Embedding(config.n_positions, config.n_embd);
    this.drop = new nn.Dropout(0.1);
    this.h = new nn.ModuleList(Array.from({ length: config.n_layer }, () => new GPT2Block(config)));
    this.ln_f = new nn.LayerNorm(config.n_embd, { eps: config.layer_norm_epsilon });
  }

  forward(inputIds) {
    const inputShape = inputIds.shape;
    const T = inputShape[inputShape.length - 1];
    const ids = inputIds.view(-1, T);
    const positionIds = om.arange(0, T, { dtype: 'int64' }).unsqueeze(0);
    let hiddenStates = this.drop.forward(this.wte.forward(ids).add(this.wpe.forward(positionIds)));
    for (const block of this.h) hiddenStates = block.forward(hiddenStates);
    hiddenStates = this.ln_f.forward(hiddenStates);
    return hiddenStates.view([...inputShape, hiddenStates.shape[hiddenStates.shape.length - 1]]);
  }
}

/** GPT2LMHeadModel: the decoder and a bias-free head tied to the token embedding. */
export class GPT2LMHeadModel extends nn.Module {
  constructor(config = {}) {
    super();
    const c = portConfig('GPT2LMHeadModel', GPT2_DEFAULTS, config, 'activation_function', 'gelu_new');
    this.config = c;
    this.transformer = new GPT2Model(c);
    this.lm_head = new nn.Linear(c.n_embd, c.vocab_size, { bias: false });
    this.lm_head.weight.dispose();
    this.lm_head.weight = this.transformer.wte.weight; // tied, as tie_weights() does
  }

  forward(inputIds) {
    return this.lm_head.forward(this.transformer.forward(inputIds));
  }
}
