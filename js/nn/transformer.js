// nn.TransformerEncoderLayer, TransformerDecoderLayer, TransformerEncoder, TransformerDecoder and
// Transformer in PyTorch's shape: the same submodules under the same names (self_attn,
// multihead_attn, linear1, norm1, ...; layers.0..., encoder.norm, ...), so a PyTorch state dict
// loads as it is.
//
//   const layer = new om.nn.TransformerEncoderLayer(64, 4, { dimFeedforward: 256, batchFirst: true });
//   layer.eval();                                    // dropout off (and traceable)
//   const y = layer.forward(x);                      // x [N, L, 64] -> [N, L, 64]
//   const model = new om.nn.Transformer({ dModel: 64, nhead: 4, numEncoderLayers: 2, numDecoderLayers: 2 });
//   const out = model.forward(src, tgt, { tgtMask: om.nn.Transformer.generateSquareSubsequentMask(tgt.shape[0]) });
import { invalid } from '../errors.js';
import { describe, toI32, toBool } from '../convert.js';
import { Tensor, tidy, optionsArg, noGrad, full } from '../tensor.js';
import { Module, Linear } from './module.js';
import { ModuleList } from './container.js';
import { xavierUniform_ } from './init.js';
import { MultiheadAttention } from './attention.js';
import { LayerNorm } from './norm.js';
import { Dropout } from './activation.js';
import { relu, gelu } from '../ops/act.js';
import { toF64 } from '../ops/norm.js';

const ACTIVATIONS = { relu, gelu };
const LAYER_OPTIONS = ['dimFeedforward', 'dropout', 'activation', 'layerNormEps', 'batchFirst', 'normFirst', 'bias'];
/** A layer's constructor arguments, kept for the copies TransformerEncoder and TransformerDecoder make (a symbol: no field). */
const ARGS = Symbol('arguments');

/** Throws unless every key of o is among names. */
function known(o, names, who, what = 'option') {
  for (const k of Object.keys(o)) {
    if (!names.includes(k)) throw invalid(`${who}: unknown ${what} '${k}' (expected ${names.map((n) => `'${n}'`).join(', ')})`);
  }
}

/** The options both layers take, checked, with PyTorch's defaults. */
function layerOptions(who, dModel, nhead, options) {
  const o = optionsArg(options, who);
  known(o, LAYER_OPTIONS, who);
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
  return {
    d, h, ff, p, act, eps: toF64(o.layerNormEps, who, 'layerNormEps', 1e-5), batchFirst: toBool(o.batchFirst, who, 'batchFirst', false),
    normFirst: toBool(o.normFirst, who, 'normFirst', false), bias: toBool(o.bias, who, 'bias', true),
  };
}

/**
 * The fields both layers start with, in PyTorch's registration order: self_attn (and, for the
 * decoder, multihead_attn), linear1, dropout, linear2, normFirst, norm1..normN. The caller adds
 * the dropouts and the activation after them, as PyTorch does.
 */
function layerParts(layer, o, attentions, norms) {
  for (const name of attentions) layer[name] = new MultiheadAttention(o.d, o.h, { dropout: o.p, bias: o.bias, batchFirst: o.batchFirst });
  layer.linear1 = new Linear(o.d, o.ff, { bias: o.bias });
  layer.dropout = new Dropout(o.p);
  layer.linear2 = new Linear(o.ff, o.d, { bias: o.bias });
  layer.normFirst = o.normFirst;
  for (let i = 1; i <= norms; i++) layer[`norm${i}`] = new LayerNorm([o.d], { eps: o.eps, bias: o.bias });
  for (let i = 1; i <= norms; i++) layer[`dropout${i}`] = new Dropout(o.p);
  /** 'relu', 'gelu', or the function or Module given (a Module is a submodule, as in PyTorch). */
  layer.activation = o.act;
  layer.batchFirst = o.batchFirst;
}

/** linear2(dropout(activation(linear1(x)))): the feed-forward block of both layers. */
function feedForward(layer, x) {
  const a = layer.activation;
  const act = typeof a === 'string' ? ACTIVATIONS[a] : a instanceof Module ? (h) => a.forward(h) : a;
  return layer.linear2.forward(layer.dropout.forward(act(layer.linear1.forward(x))));
}

/** attention(x, kv, kv) without weights, then dropout: the attention blocks of both layers. */
function attend(attention, dropout, x, kv, attnMask, keyPaddingMask, isCausal) {
  return dropout.forward(attention.forward(x, kv, kv, { attnMask, keyPaddingMask, needWeights: false, isCausal })[0]);
}

/** Each block f_i(x) added to x: norm_i(x + f_i(x)) (post-norm) or x + f_i(norm_i(x)) (normFirst). */
function residuals(layer, x, blocks) {
  blocks.forEach((f, i) => {
    const norm = layer[`norm${i + 1}`];
    x = layer.normFirst ? x.add(f(norm.forward(x))) : norm.forward(x.add(f(x)));
  });
  return x;
}

/** A 2-D (unbatched) or 3-D Tensor, or InvalidArgument naming it. */
function sequence(x, who, what) {
  if (!(x instanceof Tensor) || (x.ndim !== 2 && x.ndim !== 3)) {
    throw invalid(`${who}: ${what} must be a 2-D (unbatched) or 3-D Tensor, got ${x instanceof Tensor ? `${x.ndim}-D` : describe(x)}`);
  }
  return x;
}

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
    layerParts(this, layerOptions('TransformerEncoderLayer', dModel, nhead, options), ['self_attn'], 2);
    this[ARGS] = [dModel, nhead, options];
  }

  /** src [L, N, E] ([N, L, E] with batchFirst, or unbatched [L, E]) -> the same shape. */
  forward(src, options) {
    const who = 'TransformerEncoderLayer';
    const o = optionsArg(options, who);
    known(o, ['srcMask', 'srcKeyPaddingMask', 'isCausal'], who, 'forward option');
    const isCausal = toBool(o.isCausal, who, 'isCausal', false);
    if (isCausal && (o.srcMask === undefined || o.srcMask === null)) {
      throw invalid(`${who}: need srcMask if specifying the isCausal hint`);
    }
    sequence(src, who, 'src');
    return tidy(() => residuals(this, src, [
      (x) => attend(this.self_attn, this.dropout1, x, x, o.srcMask, o.srcKeyPaddingMask, isCausal),
      (x) => this.dropout2.forward(feedForward(this, x)),
    ]));
  }
}

/**
 * nn.TransformerDecoderLayer(dModel, nhead, options): the encoder layer's options, and PyTorch's
 * submodules self_attn, multihead_attn, linear1, dropout, linear2, norm1..3, dropout1..3.
 * forward(tgt, memory, { tgtMask, memoryMask, tgtKeyPaddingMask, memoryKeyPaddingMask,
 * tgtIsCausal = false, memoryIsCausal = false }) computes, as PyTorch,
 *   post-norm: x = norm1(x + sa(x)); x = norm2(x + mha(x, memory)); x = norm3(x + ff(x))
 *   normFirst: x = x + sa(norm1(x)); x = x + mha(norm2(x), memory); x = x + ff(norm3(x))
 * with sa self-attention (tgtMask, tgtKeyPaddingMask) then dropout1, mha attention to memory
 * (memoryMask, memoryKeyPaddingMask) then dropout2, ff as the encoder layer's then dropout3.
 */
export class TransformerDecoderLayer extends Module {
  constructor(dModel, nhead, options) {
    super();
    layerParts(this, layerOptions('TransformerDecoderLayer', dModel, nhead, options), ['self_attn', 'multihead_attn'], 3);
    this[ARGS] = [dModel, nhead, options];
  }

  /** tgt [T, N, E], memory [S, N, E] ([N, T, E] and [N, S, E] with batchFirst; unbatched [T, E], [S, E]) -> tgt's shape. */
  forward(tgt, memory, options) {
    const who = 'TransformerDecoderLayer';
    const o = optionsArg(options, who);
    known(o, ['tgtMask', 'memoryMask', 'tgtKeyPaddingMask', 'memoryKeyPaddingMask', 'tgtIsCausal', 'memoryIsCausal'], who, 'forward option');
    const tgtIsCausal = toBool(o.tgtIsCausal, who, 'tgtIsCausal', false);
    const memoryIsCausal = toBool(o.memoryIsCausal, who, 'memoryIsCausal', false);
    sequence(tgt, who, 'tgt');
    sequence(memory, who, 'memory');
    return tidy(() => residuals(this, tgt, [
      (x) => attend(this.self_attn, this.dropout1, x, x, o.tgtMask, o.tgtKeyPaddingMask, tgtIsCausal),
      (x) => attend(this.multihead_attn, this.dropout2, x, memory, o.memoryMask, o.memoryKeyPaddingMask, memoryIsCausal),
      (x) => this.dropout3.forward(feedForward(this, x)),
    ]));
  }
}

/**
 * numLayers copies of layer (a TransformerEncoderLayer or TransformerDecoderLayer, made again
 * from its arguments, its parameters' values copied, its mode kept), as PyTorch's deep copies.
 */
function copies(layer, kind, numLayers, who) {
  if (!(layer instanceof kind)) throw invalid(`${who}: the layer must be an om.nn.${kind.name}, got ${describe(layer)}`);
  const n = toI32(numLayers, who, 'numLayers');
  if (n < 0) throw invalid(`${who}: numLayers must be non-negative, got ${n}`);
  const state = layer.stateDict();
  return new ModuleList(Array.from({ length: n }, () => {
    const copy = new layer.constructor(...layer[ARGS]);
    const own = copy.stateDict();
    noGrad(() => { for (const [k, t] of Object.entries(state)) own[k].copy_(t); });
    return copy.train(layer.training);
  }));
}

/** The norm option: a Module or null. */
function normOption(norm, who) {
  if (norm !== undefined && norm !== null && !(norm instanceof Module)) throw invalid(`${who}: norm must be an om.nn.Module or null, got ${describe(norm)}`);
  return norm ?? null;
}

/**
 * nn.TransformerEncoder(encoderLayer, numLayers, { norm = null, enableNestedTensor = true,
 * maskCheck = true }): layers (a ModuleList of numLayers copies of encoderLayer, as PyTorch's deep
 * copies) and norm (applied last when given). forward(src, { mask, srcKeyPaddingMask, isCausal })
 * runs src through each layer. enableNestedTensor and maskCheck are PyTorch's fast-path switches,
 * taken for its argument list (the values are computed the same way; PyTorch's nested-tensor path
 * returns 0 at padded positions in eval mode without gradients, this computes them).
 */
export class TransformerEncoder extends Module {
  constructor(encoderLayer, numLayers, options) {
    super();
    const who = 'TransformerEncoder';
    const o = optionsArg(options, who);
    known(o, ['norm', 'enableNestedTensor', 'maskCheck'], who);
    this.layers = copies(encoderLayer, TransformerEncoderLayer, numLayers, who);
    this.numLayers = this.layers.length;
    this.norm = normOption(o.norm, who);
    this.enableNestedTensor = toBool(o.enableNestedTensor, who, 'enableNestedTensor', true);
    this.maskCheck = toBool(o.maskCheck, who, 'maskCheck', true);
  }

  /** src as TransformerEncoderLayer's -> the same shape. */
  forward(src, options) {
    const who = 'TransformerEncoder';
    const o = optionsArg(options, who);
    known(o, ['mask', 'srcKeyPaddingMask', 'isCausal'], who, 'forward option');
    const isCausal = toBool(o.isCausal, who, 'isCausal', false);
    sequence(src, who, 'src');
    let x = src;
    for (const layer of this.layers) x = layer.forward(x, { srcMask: o.mask, srcKeyPaddingMask: o.srcKeyPaddingMask, isCausal });
    return this.norm ? this.norm.forward(x) : x;
  }
}

/**
 * nn.TransformerDecoder(decoderLayer, numLayers, { norm = null }): layers (numLayers copies of
 * decoderLayer) and norm (applied last when given). forward(tgt, memory, options) runs tgt
 * through each layer with TransformerDecoderLayer's options.
 */
export class TransformerDecoder extends Module {
  constructor(decoderLayer, numLayers, options) {
    super();
    const who = 'TransformerDecoder';
    const o = optionsArg(options, who);
    known(o, ['norm'], who);
    this.layers = copies(decoderLayer, TransformerDecoderLayer, numLayers, who);
    this.numLayers = this.layers.length;
    this.norm = normOption(o.norm, who);
  }

  /** tgt and memory as TransformerDecoderLayer's -> tgt's shape. */
  forward(tgt, memory, options) {
    let x = sequence(tgt, 'TransformerDecoder', 'tgt');
    for (const layer of this.layers) x = layer.forward(x, memory, options);
    return this.norm ? this.norm.forward(x) : x;
  }
}

/**
 * nn.Transformer({ dModel = 512, nhead = 8, numEncoderLayers = 6, numDecoderLayers = 6,
 * dimFeedforward = 2048, dropout = 0.1, activation = 'relu', customEncoder, customDecoder,
 * layerNormEps = 1e-5, batchFirst = false, normFirst = false, bias = true }): encoder (a
 * TransformerEncoder with a final LayerNorm) and decoder (a TransformerDecoder with one), its
 * matrices Xavier-uniform as PyTorch's _reset_parameters. forward(src, tgt, { srcMask, tgtMask,
 * memoryMask, srcKeyPaddingMask, tgtKeyPaddingMask, memoryKeyPaddingMask, srcIsCausal,
 * tgtIsCausal, memoryIsCausal }) is decoder(tgt, encoder(src)).
 */
export class Transformer extends Module {
  constructor(options) {
    super();
    const who = 'Transformer';
    const o = optionsArg(options, who);
    known(o, ['dModel', 'nhead', 'numEncoderLayers', 'numDecoderLayers', 'customEncoder', 'customDecoder', ...LAYER_OPTIONS], who);
    const layer = Object.fromEntries(LAYER_OPTIONS.filter((k) => o[k] !== undefined).map((k) => [k, o[k]]));
    const d = o.dModel ?? 512, h = o.nhead ?? 8;
    const norm = () => new LayerNorm([toI32(d, who, 'dModel')], { eps: toF64(o.layerNormEps, who, 'layerNormEps', 1e-5), bias: toBool(o.bias, who, 'bias', true) });
    // the custom encoder or decoder, or n copies of a new layer with a final norm
    const stack = (custom, Layer, Stack, n) => {
      if (custom !== undefined && custom !== null) {
        if (!(custom instanceof Module)) throw invalid(`${who}: a custom encoder or decoder must be an om.nn.Module, got ${describe(custom)}`);
        return custom;
      }
      const one = new Layer(d, h, layer);
      try {
        return new Stack(one, n ?? 6, { norm: norm() });
      } finally {
        one.dispose();
      }
    };
    this.encoder = stack(o.customEncoder, TransformerEncoderLayer, TransformerEncoder, o.numEncoderLayers);
    this.decoder = stack(o.customDecoder, TransformerDecoderLayer, TransformerDecoder, o.numDecoderLayers);
    noGrad(() => { for (const p of this.parameters()) if (p.ndim > 1) xavierUniform_(p); });
    this.dModel = toI32(d, who, 'dModel');
    this.nhead = toI32(h, who, 'nhead');
    this.batchFirst = toBool(o.batchFirst, who, 'batchFirst', false);
  }

  /** src [S, N, E], tgt [T, N, E] ([N, S, E], [N, T, E] with batchFirst; unbatched [S, E], [T, E]) -> tgt's shape. */
  forward(src, tgt, options) {
    const who = 'Transformer';
    const o = optionsArg(options, who);
    known(o, ['srcMask', 'tgtMask', 'memoryMask', 'srcKeyPaddingMask', 'tgtKeyPaddingMask', 'memoryKeyPaddingMask',
      'srcIsCausal', 'tgtIsCausal', 'memoryIsCausal'], who, 'forward option');
    sequence(src, who, 'src');
    sequence(tgt, who, 'tgt');
    const b = this.batchFirst ? 0 : 1;
    if (src.ndim === 3 && (tgt.ndim !== 3 || src.shape[b] !== tgt.shape[b])) throw invalid(`${who}: the batch number of src and tgt must be equal`);
    if (src.shape.at(-1) !== this.dModel || tgt.shape.at(-1) !== this.dModel) {
      throw invalid(`${who}: the feature number of src and tgt must be equal to dModel (${this.dModel}), got ${src.shape.at(-1)} and ${tgt.shape.at(-1)}`);
    }
    return tidy(() => {
      const memory = this.encoder.forward(src, { mask: o.srcMask, srcKeyPaddingMask: o.srcKeyPaddingMask, isCausal: o.srcIsCausal });
      return this.decoder.forward(tgt, memory, {
        tgtMask: o.tgtMask, memoryMask: o.memoryMask, tgtKeyPaddingMask: o.tgtKeyPaddingMask,
        memoryKeyPaddingMask: o.memoryKeyPaddingMask, tgtIsCausal: o.tgtIsCausal, memoryIsCausal: o.memoryIsCausal,
      });
    });
  }

  /** The [sz, sz] float32 mask with -Infinity above the diagonal and 0 elsewhere (PyTorch's causal mask). */
  static generateSquareSubsequentMask(sz) {
    const n = toI32(sz, 'generateSquareSubsequentMask', 'sz');
    if (n < 0) throw invalid(`generateSquareSubsequentMask: sz must be non-negative, got ${n}`);
    return tidy(() => full([n, n], -Infinity).triu(1));
  }
}
