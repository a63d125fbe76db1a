// GPT-J (Hugging Face transformers' GPTJForCausalLM, modeling_gptj.py, eager attention) ported to
// onemodel as a user ports it: the same modules, names and operations, so a checkpoint's state dict
// (`transformer.wte.weight`, `transformer.h.0.ln_1.weight`, `transformer.h.0.attn.q_proj.weight`,
// ..., `transformer.h.0.mlp.fc_in.weight`, `transformer.ln_f.weight`, `lm_head.weight`,
// `lm_head.bias`) loads with a strict loadStateDict. GPT-J's rotary embedding turns only the first
// `rotary_dim` channels of each head, and turns them in interleaved pairs (rotate_every_two: channels
// 0 and 1, 2 and 3, ...), not in halves as LLaMA's; the angles come from a sin/cos table of
// `n_positions` rows read by `gather` at the position ids. Attention and the MLP run in parallel on
// one LayerNorm's output. Inference without a key-value cache; dropout is the identity in eval mode.
// forward(input_ids [batch, seq] int64, attention_mask [batch, seq] (1 keep, 0 pad; default all
// ones)) -> logits [batch, seq, vocab_size]. The length ends at `n_positions`, the table's rows, as
// upstream (where the gather fails).
import * as om from 'onemodel';
import { portConfig } from './modeling_utils.mjs';
import { prepare4dCausalAttentionMaskWithCachePosition } from './bloom.mjs';
import { geluNew } from './gpt2.mjs';

const nn = om.nn;

/** GPTJConfig's defaults (gpt-j-6b's sizes) for the fields this port reads. */
export const GPTJ_DEFAULTS = {
  vocab_size: 50400, n_positions: 2048, n_embd: 4096, n_layer: 28, n_head: 16, rotary_dim: 64, n_inner: null,
  activation_function: 'gelu_new', layer_norm_epsilon: 1e-5, tie_word_embeddings: false,
};

/** create_sinusoidal_positions: [numPos, dim], sin of each position's dim / 2 angles, then their cos. */
export function createSinusoidalPositions(numPos, dim) {
  // 1.0 / (10000 ** (arange(0, dim, 2) / dim)), in float32 as upstream (int64 / int is a float32 division)
  const invFreq = om.ones([]).div(om.full([], 10000).pow(om.arange(0, dim, 2, { dtype: 'int64' }).div(dim)));
  const sinusoidInp = om.einsum('i,j->ij', om.arange(0, numPos, { dtype: 'int64' }).float(), invFreq);
  return om.cat([sinusoidInp.sin(), sinusoidInp.cos()], 1);
}

/** The interleaved rotation: pairs (x0, x1), (x2, x3), ... of the last dim -> (-x1, x0), (-x3, x2), ... */
export function rotateEveryTwo(x) {
  const x1 = x.slice(3, 0, Infinity, 2); // x[:, :, :, ::2]
  const x2 = x.slice(3, 1, Infinity, 2); // x[:, :, :, 1::2]
  return om.stack([x2.neg(), x1], -1).flatten(-2); // rearrange(x, '... d j -> ... (d j)')
}

/** tensor [batch, seq, heads, rot] turned by sin and cos [batch, seq, rot / 2], each angle used for a pair. */
export function applyRotaryPosEmb(tensor, sin, cos) {
  const s = sin.unsqueeze(2).repeatInterleave(2, 3); // torch.repeat_interleave(sin[:, :, None, :], 2, 3)
  const c = cos.unsqueeze(2).repeatInterleave(2, 3);
  return tensor.mul(c).add(rotateEveryTwo(tensor).mul(s));
}

export class GPTJAttention extends nn.Module {
  constructor(config) {
    super();
    this.embed_dim = config.n_embd;
    this.num_attention_heads = config.n_head;
    this.head_dim = Math.floor(this.embed_dim / this.num_attention_heads);
    if (this.head_dim * this.num_attention_heads !== this.embed_dim) {
      throw new Error(`GPTJAttention: embed_dim must be divisible by num_attention_heads (got \`embed_dim\`: ${this.embed_dim} and \`num_attention_heads\`: ${this.num_attention_heads}).`);
    }
    this.scale_attn = Math.fround(Math.sqrt(this.head_dim)); // torch.sqrt(torch.tensor(head_dim, float32))
    this.k_proj = new nn.Linear(this.embed_dim, this.embed_dim, { bias: false });
    this.v_proj = new nn.Linear(this.embed_dim, this.embed_dim, { bias: false });
    this.q_proj = new nn.Linear(this.embed_dim, this.embed_dim, { bias: false });
    this.out_proj = new nn.Linear(this.embed_dim, this.embed_dim, { bias: false });
    this.rotary_dim = config.rotary_dim;
    // upstream keeps the table as a plain attribute (not in the state dict); a Tensor field of an
    // om.nn.Module is a parameter, so it is a non-persistent buffer here
    const table = om.tidy(() => createSinusoidalPositions(config.n_positions, this.rotary_dim ?? this.embed_dim));
    this.registerBuffer('embed_positions', table, { persistent: false });
  }

  /** [b, s, embed_dim] -> [b, s, heads, head_dim] (rotary: as is, to be turned) or [b, heads, s, head_dim]. */
  splitHeads(tensor, rotary) {
    const t = tensor.view(...tensor.shape.slice(0, -1), this.num_attention_heads, this.head_dim);
    return rotary ? t : t.permute(0, 2, 1, 3);
  }

  forward(hiddenStates, attentionMask, positionIds) {
    let query = this.splitHeads(this.q_proj.forward(hiddenStates), true);
    let key = this.splitHeads(this.k_proj.forward(hiddenStates), true);
    const value = this.splitHeads(this.v_proj.forward(hiddenStates), false);

    const embedPositions = this.embed_positions.repeat(positionIds.shape[0], 1, 1);
    const repeatedPositionIds = positionIds.unsqueeze(-1).repeat(1, 1, embedPositions.shape[2]);
    const sincos = embedPositions.gather(1, repeatedPositionIds);
    const [sin, cos] = sincos.split(sincos.shape[2] / 2, -1);

    if (this.rotary_dim !== null) {
      const r = this.rotary_dim;
      key = om.cat([applyRotaryPosEmb(key.slice(3, 0, r), sin, cos), key.slice(3, r)], -1);
      query = om.cat([applyRotaryPosEmb(query.slice(3, 0, r), sin, cos), query.slice(3, r)], -1);
    } else {
      key = applyRotaryPosEmb(key, sin, cos);
      query = applyRotaryPosEmb(query, sin, cos);
    }
    key = key.permute(0, 2, 1, 3);
    query = query.permute(0, 2, 1, 3);

    // _attn: the scores divided by sqrt(head_dim), the mask sliced to the keys' length
    let attnWeights = query.matmul(key.transpose(-1, -2)).div(this.scale_attn);
    attnWeights = attnWeights.add(attentionMask.slice(3, 0, key.shape[2]));
    const attnOutput = attnWeights.softmax(-1).matmul(value).permute(0, 2, 1, 3).contiguous();
    return this.out_proj.forward(attnOutput.view(...attnOutput.shape.slice(0, -2), this.embed_dim));
  }
}

export class GPTJMLP extends nn.Module {
  constructor(intermediateSize, config) {
    super();
    this.fc_in = new nn.Linear(config.n_embd, intermediateSize);
    this.fc_out = new nn.Linear(intermediateSize, config.n_embd);
  }

  forward(hiddenStates) {
    return this.fc_out.forward(geluNew(this.fc_in.forward(hiddenStates)));
  }
}

/** Attention and MLP in parallel on ln_1's output, both added to the residual. */
export class GPTJBlock extends nn.Module {
  constructor(config) {
    super();
    const innerDim = config.n_inner ?? 4 * config.n_embd;
    this.ln_1 = new nn.LayerNorm(config.n_embd, { eps: config.layer_norm_epsilon });
    this.attn = new GPTJAttention(config);
    this.mlp = new GPTJMLP(innerDim, config);
  }

  forward(hiddenStates, attentionMask, positionIds) {
    const residual = hiddenStates;
    const h = this.ln_1.forward(hiddenStates);
    const attnOutputs = this.attn.forward(h, attentionMask, positionIds);
    const feedForwardHiddenStates = this.mlp.forward(h);
    return attnOutputs.add(feedForwardHiddenStates).add(residual);
  }
}

export class GPTJModel extends nn.Module {
  constructor(config) {
    super();
    this.wte = new nn.Embedding(config.vocab_size, config.n_embd);
    this.h = new nn.ModuleList(Array.from({ length: config.n_layer }, () => new GPTJBlock(config)));
    this.ln_f = new nn.LayerNorm(config.n_embd, { eps: config.layer_norm_epsilon });
  }

  forward(inputIds, attentionMask = null) {
    const inputsEmbeds = this.wte.forward(inputIds);
    const [batchSize, seqLength] = inputIds.shape;
    const cachePosition = om.arange(0, seqLength, { dtype: 'int64' });
    const positionIds = cachePosition.unsqueeze(0);
    const mask = attentionMask ?? om.ones([batchSize, seqLength]);
    const causalMask = prepare4dCausalAttentionMaskWithCachePosition(mask, seqLength, mask.shape[1], cachePosition, batchSize);
    let hiddenStates = inputsEmbeds;
    for (const block of this.h) hiddenStates = block.forward(hiddenStates, causalMask, positionIds);
    return this.ln_f.forward(hiddenStates);
  }
}

/** GPTJForCausalLM: the model and an lm_head of its own (with a bias; GPT-J does not tie it). */
export class GPTJForCausalLM extends nn.Module {
  constructor(config = {}) {
    super();
    const c = portConfig('GPTJForCausalLM', GPTJ_DEFAULTS, config, 'activation_function', 'gelu_new');
    if (c.tie_word_embeddings) throw new Error('GPTJForCausalLM: tie_word_embeddings true is not ported (only false)');
    this.config = c;
    this.transformer = new GPTJModel(c);
    this.lm_head = new nn.Linear(c.n_embd, c.vocab_size);
  }

  forward(inputIds, attentionMask = null) {
    return this.lm_head.forward(this.transformer.forward(inputIds, attentionMask));
  }
}
