// GPT-style decoder: token + learned position embeddings, two pre-norm blocks of causal
// self-attention and a GELU MLP, a final LayerNorm, and an LM head tied to the token embedding
// (one initializer): ids [N, 10] (int64) -> logits [N, 10, 40]. The batch is symbolic; the
// sequence length is fixed (the positions om.arange(l) are a constant of the traced length).
// A model file (docs/demo.md). Training data: counting sequences (s, s+1, s+2, ...), so the
// next token is learnable.
import * as om from 'onemodel';

await om.ready();
om.manualSeed(4);
const nn = om.nn;
const F = om.nn.functional;

/** Causal self-attention: one qkv Linear, heads, scaled dot-product attention, projection. */
export class CausalSelfAttention extends nn.Module {
  constructor(d, heads) {
    super();
    this.heads = heads;
    this.qkv = new nn.Linear(d, 3 * d);
    this.proj = new nn.Linear(d, d);
  }

  forward(x) {
    return om.tidy(() => {
      const [n, l, d] = x.shape;
      const h = this.heads;
      const [q, k, v] = this.qkv.forward(x).split(d, 2).map((t) => t.reshape(n, l, h, d / h).transpose(1, 2));
      const y = F.scaledDotProductAttention(q, k, v, { isCausal: true });
      return this.proj.forward(y.transpose(1, 2).reshape(n, l, d));
    });
  }
}

/** The same with nn.MultiheadAttention and a causal bool mask. */
export class CausalMHA extends nn.Module {
  constructor(d, heads, maxLen) {
    super();
    this.attn = new nn.MultiheadAttention(d, heads, { batchFirst: true });
    this.registerBuffer('mask', om.tidy(() => om.ones([maxLen, maxLen], { dtype: 'bool' }).triu(1)));
  }

  forward(x) {
    const l = x.shape[1];
    return om.tidy(() => {
      const m = this.mask.slice(0, 0, l).slice(1, 0, l);
      return this.attn.forward(x, x, x, { attnMask: m, isCausal: true, needWeights: false })[0];
    });
  }
}

export class Block extends nn.Module {
  constructor(d, heads, maxLen, kind) {
    super();
    this.ln_1 = new nn.LayerNorm([d]);
    this.attn = kind === 'sdpa' ? new CausalSelfAttention(d, heads) : new CausalMHA(d, heads, maxLen);
    this.ln_2 = new nn.LayerNorm([d]);
    this.mlp = new nn.Sequential(new nn.Linear(d, 4 * d), new nn.GELU(), new nn.Linear(4 * d, d));
  }

  forward(x) {
    return om.tidy(() => {
      const h = x.add(this.attn.forward(this.ln_1.forward(x)));
      return h.add(this.mlp.forward(this.ln_2.forward(h)));
    });
  }
}

export class GPT extends nn.Module {
  constructor({ vocab, d, heads, maxLen }) {
    super();
    this.wte = new nn.Embedding(vocab, d);
    this.wpe = new nn.Embedding(maxLen, d);
    // block 0 attends with F.scaledDotProductAttention(isCausal), block 1 with nn.MultiheadAttention and a causal mask
    this.h = new nn.ModuleList([new Block(d, heads, maxLen, 'sdpa'), new Block(d, heads, maxLen, 'mha')]);
    this.ln_f = new nn.LayerNorm([d]);
    this.lm_head = new nn.Linear(d, vocab, { bias: false });
    this.lm_head.weight.dispose();
    this.lm_head.weight = this.wte.weight; // tied: the same tensor
  }

  forward(ids) {
    return om.tidy(() => {
      const l = ids.shape[1];
      const pos = om.arange(0n, BigInt(l)); // int64 positions
      let x = this.wte.forward(ids).add(this.wpe.forward(pos));
      for (const block of this.h) x = block.forward(x);
      return this.lm_head.forward(this.ln_f.forward(x));
    });
  }
}

const VOCAB = 40, LENGTH = 10;

/** 16 counting sequences of LENGTH + 1 tokens from random starts: inputs all but the last, targets all but the first. */
function batch(step) {
  const start = om.rand([16, 1], { seed: step }).mul(VOCAB - LENGTH).long();
  const seq = start.add(om.arange(0n, BigInt(LENGTH + 1)));
  return { inputs: [seq.slice(1, 0, LENGTH)], target: seq.slice(1, 1) };
}

export default {
  title: 'GPT-style decoder',
  model: new GPT({ vocab: VOCAB, d: 32, heads: 4, maxLen: 16 }),
  inputs: { ids: [om.tidy(() => om.rand([3, LENGTH], { seed: 1 }).mul(VOCAB).long()), ['batch', null]] },
  outputNames: ['logits'],
  train: {
    steps: 40,
    optimizer: (params) => new om.optim.AdamW(params, { lr: 1e-2 }),
    batch,
    loss: (logits, target) => F.crossEntropy(logits.reshape(-1, VOCAB), target.reshape(-1)),
  },
};
