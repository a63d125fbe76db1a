// nn.MultiheadAttention in PyTorch's shape: in_proj_weight [3E, E] (or, when kdim or vdim is not
// E, q_proj_weight [E, E], k_proj_weight [E, kdim] and v_proj_weight [E, vdim]), in_proj_bias [3E],
// out_proj (a Linear), so a PyTorch state dict loads as it is. Dropout on the attention
// weights while training, as PyTorch.
import { invalid } from '../errors.js';
import { describe, toI32, toBool } from '../convert.js';
import { Tensor, rand, zeros, where, tidy, optionsArg } from '../tensor.js';
import { linear } from '../ops/linalg.js';
import { Module, Linear } from './module.js';
import { scaledDotProductAttention, toF64 } from '../ops/norm.js';
import { dropout } from '../ops/act.js';

/** A mask as an additive float mask: bool true (not allowed) -> -inf, false -> 0; float as is. */
function additive(mask, who, what) {
  if (!(mask instanceof Tensor)) throw invalid(`${who}: ${what} must be a Tensor, got ${describe(mask)}`);
  if (mask.dtype === 'float32') return mask;
  if (mask.dtype !== 'bool') throw invalid(`${who}: ${what} must be bool or float32, got ${mask.dtype}`);
  return where(mask, -Infinity, 0);
}

const OPTIONS = ['dropout', 'bias', 'batchFirst', 'kdim', 'vdim', 'addBiasKV', 'addZeroAttn'];

/** A weight of shape [rows, cols] uniform in xavier_uniform_'s bound, a parameter. */
function xavier(rows, cols) {
  const bound = Math.sqrt(6 / (rows + cols));
  const w = tidy(() => rand([rows, cols]).mul(2 * bound).sub(bound));
  w.requiresGrad = true;
  return w;
}

/**
 * nn.MultiheadAttention(embedDim, numHeads, { dropout = 0, batchFirst = false, bias = true,
 * kdim = embedDim, vdim = embedDim }). addBiasKV and addZeroAttn are refused (InvalidArgument).
 * forward(query, key, value, { keyPaddingMask, needWeights = true, attnMask,
 * averageAttnWeights = true, isCausal = false }) -> [output, attnWeights or null], as PyTorch:
 * inputs [L, N, E] ([N, L, E] with batchFirst, or unbatched [L, E]); attnMask [L, S] or
 * [N * numHeads, L, S] and keyPaddingMask [N, S], bool (true: not allowed to attend) or float
 * (added). isCausal is PyTorch's hint: it needs attnMask, which is then used as given.
 */
export class MultiheadAttention extends Module {
  constructor(embedDim, numHeads, options) {
    super();
    const who = 'MultiheadAttention';
    const o = optionsArg(options, who, OPTIONS);
    for (const k of ['addBiasKV', 'addZeroAttn']) {
      if (toBool(o[k], who, k, false)) throw invalid(`${who}: ${k} is not supported`);
    }
    const e = toI32(embedDim, who, 'embedDim');
    const h = toI32(numHeads, who, 'numHeads');
    if (e < 1 || h < 1) throw invalid(`${who}: embedDim and numHeads must be positive, got ${e} and ${h}`);
    if (e % h) throw invalid(`${who}: embedDim must be divisible by numHeads, got ${e} and ${h}`);
    const p = toF64(o.dropout, who, 'dropout', 0);
    if (!(p >= 0 && p <= 1)) throw invalid(`${who}: dropout probability has to be between 0 and 1, but got ${p}`);
    this.embedDim = e;
    this.numHeads = h;
    this.headDim = e / h;
    /** The probability of zeroing an attention weight while training (PyTorch's float field). */
    this.dropout = p;
    this.batchFirst = toBool(o.batchFirst, who, 'batchFirst', false);
    const bias = toBool(o.bias, who, 'bias', true);
    const kdim = toI32(o.kdim ?? e, who, 'kdim'), vdim = toI32(o.vdim ?? e, who, 'vdim');
    if (kdim < 1 || vdim < 1) throw invalid(`${who}: kdim and vdim must be positive, got ${kdim} and ${vdim}`);
    this.kdim = kdim;
    this.vdim = vdim;
    if (kdim === e && vdim === e) {
      this.in_proj_weight = xavier(3 * e, e); // xavier_uniform_ on [3E, E]
    } else { // PyTorch's separate projections (in_proj_weight None), each xavier_uniform_
      this.in_proj_weight = null;
      this.q_proj_weight = xavier(e, e);
      this.k_proj_weight = xavier(e, kdim);
      this.v_proj_weight = xavier(e, vdim);
    }
    this.in_proj_bias = bias ? zeros([3 * e]) : null;
    if (this.in_proj_bias) this.in_proj_bias.requiresGrad = true;
    this.out_proj = new Linear(e, e, { bias });
    if (bias) { // PyTorch zeroes out_proj.bias
      this.out_proj.bias.dispose();
      this.out_proj.bias = zeros([e]);
      this.out_proj.bias.requiresGrad = true;
    }
  }

  forward(query, key, value, options) {
    const who = 'MultiheadAttention';
    const o = optionsArg(options, who);
    const needWeights = toBool(o.needWeights, who, 'needWeights', true);
    const average = toBool(o.averageAttnWeights, who, 'averageAttnWeights', true);
    const causal = toBool(o.isCausal, who, 'isCausal', false);
    if (causal && (o.attnMask === undefined || o.attnMask === null)) {
      throw invalid(`${who}: need attnMask if specifying the isCausal hint`);
    }
    for (const [n, t] of [['query', query], ['key', key], ['value', value]]) {
      if (!(t instanceof Tensor)) throw invalid(`${who}: ${n} must be a Tensor, got ${describe(t)}`);
    }
    const batched = query.ndim === 3;
    if (!batched && query.ndim !== 2) throw invalid(`${who}: query must be 2-D (unbatched) or 3-D, got ${query.ndim}-D`);
    return tidy(() => {
      // to [N, L, E]
      const prep = (t) => (!batched ? t.unsqueeze(0) : this.batchFirst ? t : t.transpose(0, 1));
      const q0 = prep(query), k0 = prep(key), v0 = prep(value);
      const [n, l] = q0.shape;
      const s = k0.shape[1];
      const e = this.embedDim, h = this.numHeads, d = this.headDim;
      const w = this.in_proj_weight, b = this.in_proj_bias;
      const weight = (i) => (w ? w.slice(0, i * e, (i + 1) * e) : [this.q_proj_weight, this.k_proj_weight, this.v_proj_weight][i]);
      const part = (t, i) => linear(t, weight(i), b ? b.slice(0, i * e, (i + 1) * e) : null);
      const heads = (t, len) => t.reshape(n, len, h, d).transpose(1, 2); // [N, H, len, D]
      const q = heads(part(q0, 0), l), k = heads(part(k0, 1), s), v = heads(part(v0, 2), s);
      let mask = null;
      if (o.attnMask !== undefined && o.attnMask !== null) {
        const m = additive(o.attnMask, who, 'attnMask');
        mask = m.ndim === 3 ? m.reshape(n, h, l, s) : m;
      }
      if (o.keyPaddingMask !== undefined && o.keyPaddingMask !== null) {
        const m = additive(o.keyPaddingMask, who, 'keyPaddingMask').reshape(n, 1, 1, s);
        mask = mask ? mask.add(m) : m;
      }
      let out;
      let weights = null;
      const drop = this.training && this.dropout > 0;
      if (needWeights || drop) {
        let scores = q.matmul(k.transpose(-2, -1)).mul(1 / Math.sqrt(d));
        if (mask) scores = scores.add(mask);
        let p = scores.softmax(-1);
        if (drop) p = dropout(p, { p: this.dropout, training: true }); // the weights returned are the dropped ones, as PyTorch's
        out = p.matmul(v);
        if (needWeights) {
          weights = average ? p.mean(1) : p;
          if (!batched) weights = weights.squeeze(0);
        }
      } else {
        out = scaledDotProductAttention(q, k, v, { attnMask: mask });
      }
      out = this.out_proj.forward(out.transpose(1, 2).reshape(n, l, e));
      out = !batched ? out.squeeze(0) : this.batchFirst ? out : out.transpose(0, 1);
      return [out, weights];
    });
  }
}
