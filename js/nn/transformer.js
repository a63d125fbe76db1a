// nn.TransformerEncoderLayer in PyTorch's shape: self_attn (MultiheadAttention), linear1,
// dropout, linear2, norm1, norm2, dropout1, dropout2, so a PyTorch state dict
// (self_attn.in_proj_weight, self_attn.out_proj.weight, linear1.weight, norm1.bias, ...) loads
// as it is.
//
//   const layer = new om.nn.TransformerEncoderLayer(64, 4, { dimFeedforward: 256, batchFirst: true });
//   layer.eval();                                    // dropout off (and traceable)
//   const y = layer.forward(x);                      // x [N, L, 64] -> [N, L, 64]
import { invalid } from '../errors.js';
import { describe, toI32, toBool } from '../convert.js';
import { Tensor, tidy, optionsArg } from '../tensor.js';
import { Module, Linear } from './module.js';
import { MultiheadAttention } from './attention.js';
import { LayerNorm } from './norm.js';
import { Dropout } from './activation.js';
import { relu, gelu } from '../ops/act.js';
import { toF64 } from '../ops/norm.js';

const ACTIVATIONS = { relu, gelu };

/**
 * nn.TransformerEncoderLayer(dModel, nhead, { dimFeedforward = 2048, dropout = 0.1,
 * activation = 'relu', layerNormEps = 1e-5, batchFirst = false, normFirst = false, bias = true }).
 * activation is 'relu', 'gelu' (exact), a function Tensor -> Tensor or a Module. forward(src, { srcMask,
 * srcKeyPaddingMask, isCausal = false }) computes, as PyTorch,
 *   post-norm: x = norm1(x + sa(x)); x = norm2(x + ff(x))
 *   normFirst: x = x + sa(norm1(x)); x = x + ff(norm2(x))
 * with sa(x) = dropout1(self_attn(x, x, x, srcMask, srcKeyPaddingMask)) and
 * ff(x) = dropout2(linear2(dropout(activation(linear1(x))))). Masks as MultiheadAttention's;
 * isCausal is PyTorch's hint and needs srcMask (the causal mask), which is used as given.
 */
export class TransformerEncoderLayer extends Module {
  constructor(dModel, nhead, options) {
    super();
    const who = 'TransformerEncoderLayer';
    const o = optionsArg(options, who);
    const known = ['dimFeedforward', 'dropout', 'activation', 'layerNormEps', 'batchFirst', 'normFirst', 'bias'];
    for (const k of Object.keys(o)) {
      if (!known.includes(k)) throw invalid(`${who}: unknown option '${k}' (expected ${known.map((n) => `'${n}'`).join(', ')})`);
    }
    const d = toI32(dModel, who, 'dModel');
    const h = toI32(nhead, who, 'nhead');
    const ff = o.dimFeedforward === undefined ? 2048 : toI32(o.dimFeedforward, who, 'dimFeedforward');
    if (d < 1 || h < 1 || ff < 1) throw invalid(`${who}: dModel, nhead and dimFeedforward must be positive, got ${d}, ${h} and ${ff}`);
    if (d % h) throw invalid(`${who}: dModel must be divisible by nhead, got ${d} and ${h}`);
    const p = toF64(o.dropout, who, 'dropout', 0.1);
    if (!(p >= 0 && p <= 1)) throw invalid(`${who}: dropout probability has to be between 0 and 1, but got ${p}`);
    const act = o.activation ?? 'relu';
    if (typeof act === 'string' ? !Object.hasOwn(ACTIVATIONS, act) : typeof act !== 'function' && !(act instanceof Module)) {
      throw invalid(`${who}: activation must be 'relu', 'gelu', a function or a Module, got ${describe(act)}`);
    }
    const eps = toF64(o.layerNormEps, who, 'layerNormEps', 1e-5);
    const batchFirst = toBool(o.batchFirst, who, 'batchFirst', false);
    const normFirst = toBool(o.normFirst, who, 'normFirst', false);
    const bias = toBool(o.bias, who, 'bias', true);
    // fields in PyTorch's registration order, so the state dict's keys come in its order
    this.self_attn = new MultiheadAttention(d, h, { dropout: p, bias, batchFirst });
    this.linear1 = new Linear(d, ff, { bias });
    this.dropout = new Dropout(p);
    this.linear2 = new Linear(ff, d, { bias });
    this.normFirst = normFirst;
    this.norm1 = new LayerNorm([d], { eps, bias });
    this.norm2 = new LayerNorm([d], { eps, bias });
    this.dropout1 = new Dropout(p);
    this.dropout2 = new Dropout(p);
    /** 'relu', 'gelu', or the function or Module given (a Module is a submodule, as in PyTorch). */
    this.activation = act;
    this.batchFirst = batchFirst;
  }

  /** src [L, N, E] ([N, L, E] with batchFirst, or unbatched [L, E]) -> the same shape. */
  forward(src, options) {
    const who = 'TransformerEncoderLayer';
    const o = optionsArg(options, who);
    for (const k of Object.keys(o)) {
      if (!['srcMask', 'srcKeyPaddingMask', 'isCausal'].includes(k)) {
        throw invalid(`${who}: unknown forward option '${k}' (expected 'srcMask', 'srcKeyPaddingMask', 'isCausal')`);
      }
    }
    const isCausal = toBool(o.isCausal, who, 'isCausal', false);
    if (isCausal && (o.srcMask === undefined || o.srcMask === null)) {
      throw invalid(`${who}: need srcMask if specifying the isCausal hint`);
    }
    if (!(src instanceof Tensor) || (src.ndim !== 2 && src.ndim !== 3)) {
      throw invalid(`${who}: src must be a 2-D (unbatched) or 3-D Tensor, got ${src instanceof Tensor ? `${src.ndim}-D` : describe(src)}`);
    }
    const a = this.activation;
    const act = typeof a === 'string' ? ACTIVATIONS[a] : a instanceof Module ? (x) => a.forward(x) : a;
    return tidy(() => {
      const sa = (x) => this.dropout1.forward(this.self_attn.forward(x, x, x, {
        attnMask: o.srcMask, keyPaddingMask: o.srcKeyPaddingMask, needWeights: false, isCausal,
      })[0]);
      const ffn = (x) => this.dropout2.forward(this.linear2.forward(this.dropout.forward(act(this.linear1.forward(x)))));
      let x = src;
      if (this.normFirst) {
        x = x.add(sa(this.norm1.forward(x)));
        x = x.add(ffn(this.norm2.forward(x)));
      } else {
        x = this.norm1.forward(x.add(sa(x)));
        x = this.norm2.forward(x.add(ffn(x)));
      }
      return x;
    });
  }
}
