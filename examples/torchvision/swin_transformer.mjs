// torchvision 0.14's Swin Transformer (models/swin_transformer.py) ported to om.nn, V1 and V2:
// shiftedWindowAttention, ShiftedWindowAttention, PatchMerging, SwinTransformerBlock and
// SwinTransformer with torchvision's constructor arguments and field names (its state dicts load
// as they are, relative_position_index included), the builders swin_t / swin_s / swin_b, and V2's
// classes beside them as torchvision writes them, sharing V1's code where it does:
// ShiftedWindowAttentionV2 (cosine attention scaled by exp(logit_scale) clamped at log(100), the
// bias from the continuous position bias MLP cpb_mlp over the log-spaced relative_coords_table,
// 16 * sigmoid; the key's third of the qkv bias zeroed), PatchMergingV2 (the norm after the
// reduction), SwinTransformerBlockV2 (post-norm residuals) and swin_v2_t / swin_v2_s / swin_v2_b.
//
//   const net = swin_t({ numClasses: 10 }).eval();
//   const net2 = swin_v2_t({ numClasses: 10 }).eval();
//
// Written as torchvision writes it, the attention mask filled in place and the size branches
// included. It traces with symbolic batch, H and W, H and W declared from where every stage shifts
// its windows (om.Dim('h', { min: 60 }) for the test's two stages of window 7): below, a stage
// does not shift along that side, a size branch; see
// examples/torchvision/README.md. Weights start from om.nn's default initialisation.
import * as om from 'onemodel';
import { invalidConfig, makeLayer, optionsOf } from './_utils.mjs';

const nn = om.nn;
const F = nn.functional;

/** [..., H, W, C] -> [..., ceil(H / 2), ceil(W / 2), 4C]: each 2x2 patch's four pixels side by side (odd sizes padded). */
function patchMergingPad(x) {
  const [H, W] = x.shape.slice(-3, -1);
  const p = F.pad(x, [0, 0, 0, W % 2, 0, H % 2]);
  const x0 = p.slice(-3, 0, null, 2).slice(-2, 0, null, 2); // ... H/2 W/2 C
  const x1 = p.slice(-3, 1, null, 2).slice(-2, 0, null, 2);
  const x2 = p.slice(-3, 0, null, 2).slice(-2, 1, null, 2);
  const x3 = p.slice(-3, 1, null, 2).slice(-2, 1, null, 2);
  return om.cat([x0, x1, x2, x3], -1);
}

/** The relative position bias [1, heads, N, N] of a window of N = Wh * Ww tokens, from the table by the index. */
function getRelativePositionBias(table, index, windowSize) {
  const N = windowSize[0] * windowSize[1];
  return table.indexSelect(0, index).view(N, N, -1).permute(2, 0, 1).contiguous().unsqueeze(0);
}

/** Patch merging: [..., H, W, C] -> [..., H/2, W/2, 2C] (norm over the 4C merged, then a linear reduction). */
export class PatchMerging extends nn.Module {
  constructor(dim, normLayer = nn.LayerNorm) {
    super();
    this.dim = dim;
    this.reduction = new nn.Linear(4 * dim, 2 * dim, { bias: false });
    this.norm = makeLayer(normLayer, 4 * dim);
  }

  forward(x) {
    return this.reduction.forward(this.norm.forward(patchMergingPad(x)));
  }
}

/** V2's patch merging: [..., H, W, C] -> [..., H/2, W/2, 2C], the linear reduction first, then the norm over its 2C. */
export class PatchMergingV2 extends nn.Module {
  constructor(dim, normLayer = nn.LayerNorm) {
    super();
    this.dim = dim;
    this.reduction = new nn.Linear(4 * dim, 2 * dim, { bias: false });
    this.norm = makeLayer(normLayer, 2 * dim);
  }

  forward(x) {
    return this.norm.forward(this.reduction.forward(patchMergingPad(x)));
  }
}

/**
 * torchvision's shifted_window_attention: window multi-head self-attention with a relative
 * position bias over input [B, H, W, C], padded to whole windows, the windows shifted (rolled) by
 * shiftSize where a padded side spans more than one window, with the mask that keeps tokens from
 * attending across the roll's seams. options: { attentionDropout = 0, dropout = 0, qkvBias, projBias,
 * logitScale }: with logitScale ([heads, 1, 1], V2's), cosine attention scaled by
 * exp(min(logitScale, log 100)) instead of scaled dot products, and the key's third of qkvBias zeroed.
 */
export function shiftedWindowAttention(input, qkvWeight, projWeight, relativePositionBias, windowSize, numHeads, shiftSize, options = {}) {
  const { attentionDropout = 0.0, dropout = 0.0, projBias = null, logitScale = null } = options;
  let { qkvBias = null } = options;
  const [B, H, W, C] = input.shape;
  // pad feature maps to multiples of window size
  const padR = (windowSize[1] - W % windowSize[1]) % windowSize[1];
  const padB = (windowSize[0] - H % windowSize[0]) % windowSize[0];
  let x = F.pad(input, [0, 0, 0, padR, 0, padB]);
  const [, padH, padW] = x.shape;
  const shift = shiftSize.slice();
  // If window size is larger than feature size, there is no need to shift window
  if (windowSize[0] >= padH) shift[0] = 0;
  if (windowSize[1] >= padW) shift[1] = 0;
  const shifted = shift[0] + shift[1] > 0;
  if (shifted) x = x.roll([-shift[0], -shift[1]], [1, 2]);
  // partition windows
  const [nH, nW] = [Math.floor(padH / windowSize[0]), Math.floor(padW / windowSize[1])];
  const numWindows = nH * nW;
  x = x.view(B, nH, windowSize[0], nW, windowSize[1], C);
  x = x.permute(0, 1, 3, 2, 4, 5).reshape(B * numWindows, windowSize[0] * windowSize[1], C); // B*nW, Ws*Ws, C
  // multi-head attention
  if (logitScale !== null && qkvBias !== null) {
    // V2 keeps no key bias (a bias on k shifts every score of a query equally). torchvision zeroes
    // the key's third of a clone in place (qkv_bias[length:2 * length].zero_()); om refuses an
    // in-place write into a view of a tensor autograd tracks, so the same values are put together
    // (the key's third's gradient 0, as PyTorch's).
    const length = Math.floor(qkvBias.numel() / 3);
    qkvBias = om.cat([qkvBias.slice(0, 0, length), om.zeros([length]), qkvBias.slice(0, 2 * length)]);
  }
  const qkv = F.linear(x, qkvWeight, qkvBias).reshape(x.shape[0], x.shape[1], 3, numHeads, C / numHeads).permute(2, 0, 3, 1, 4);
  const [q, k, v] = [qkv.select(0, 0), qkv.select(0, 1), qkv.select(0, 2)];
  let attn;
  if (logitScale !== null) {
    // cosine attention: the scores are cosines in [-1, 1], scaled by a learned temperature capped at 100
    attn = F.normalize(q, { dim: -1 }).matmul(F.normalize(k, { dim: -1 }).transpose(-2, -1));
    attn = attn.mul(om.clamp(logitScale, { max: Math.log(100.0) }).exp());
  } else {
    attn = q.mul(Math.floor(C / numHeads) ** -0.5).matmul(k.transpose(-2, -1));
  }
  // add relative position bias
  attn = attn.add(relativePositionBias);
  if (shifted) {
    // generate attention mask
    let attnMask = om.zeros([padH, padW]);
    const hSlices = [[0, -windowSize[0]], [-windowSize[0], -shift[0]], [-shift[0], null]];
    const wSlices = [[0, -windowSize[1]], [-windowSize[1], -shift[1]], [-shift[1], null]];
    let count = 0;
    for (const h of hSlices) {
      for (const w of wSlices) {
        attnMask.slice(0, h[0], h[1]).slice(1, w[0], w[1]).fill_(count);
        count += 1;
      }
    }
    attnMask = attnMask.view(nH, windowSize[0], nW, windowSize[1]);
    attnMask = attnMask.permute(0, 2, 1, 3).reshape(numWindows, windowSize[0] * windowSize[1]);
    attnMask = attnMask.unsqueeze(1).sub(attnMask.unsqueeze(2));
    attnMask = attnMask.maskedFill(attnMask.ne(0), -100.0).maskedFill(attnMask.eq(0), 0.0);
    attn = attn.view(x.shape[0] / numWindows, numWindows, numHeads, x.shape[1], x.shape[1]);
    attn = attn.add(attnMask.unsqueeze(1).unsqueeze(0));
    attn = attn.view(-1, numHeads, x.shape[1], x.shape[1]);
  }
  attn = F.softmax(attn, -1);
  // F.dropout with its default training = true, as torchvision calls it (a no-op at p = 0)
  attn = F.dropout(attn, { p: attentionDropout });
  x = attn.matmul(v).transpose(1, 2).reshape(x.shape[0], x.shape[1], C);
  x = F.dropout(F.linear(x, projWeight, projBias), { p: dropout });
  // reverse windows
  x = x.view(B, nH, nW, windowSize[0], windowSize[1], C);
  x = x.permute(0, 1, 3, 2, 4, 5).reshape(B, padH, padW, C);
  // reverse cyclic shift
  if (shifted) x = x.roll([shift[0], shift[1]], [1, 2]);
  // unpad features
  return x.slice(1, 0, H).slice(2, 0, W).contiguous();
}

/** See shiftedWindowAttention: qkv and proj linears, the bias table and its (persistent) index. */
export class ShiftedWindowAttention extends nn.Module {
  constructor(dim, windowSize, shiftSize, numHeads, options) {
    super();
    const o = optionsOf(options, 'ShiftedWindowAttention', ['qkvBias', 'projBias', 'attentionDropout', 'dropout']);
    const { qkvBias = true, projBias = true, attentionDropout = 0.0, dropout = 0.0 } = o;
    if (windowSize.length !== 2 || shiftSize.length !== 2) throw invalidConfig('window_size and shift_size must be of length 2');
    this.windowSize = windowSize;
    this.shiftSize = shiftSize;
    this.numHeads = numHeads;
    this.attentionDropout = attentionDropout;
    this.dropout = dropout;
    this.qkv = new nn.Linear(dim, dim * 3, { bias: qkvBias });
    this.proj = new nn.Linear(dim, dim, { bias: projBias });
    this.defineRelativePositionBiasTable();
    this.defineRelativePositionIndex();
  }

  defineRelativePositionBiasTable() {
    const [wh, ww] = this.windowSize;
    this.relative_position_bias_table = om.tidy(() => om.randn([(2 * wh - 1) * (2 * ww - 1), this.numHeads]).mul(0.02)); // 2*Wh-1 * 2*Ww-1, nH
    this.relative_position_bias_table.requiresGrad = true;
  }

  /** For each pair of a window's tokens, the row of the bias table for their offset (dy, dx). */
  defineRelativePositionIndex() {
    const [wh, ww] = this.windowSize;
    const index = om.tidy(() => {
      const coordsH = om.arange(wh); // int64, as torch.arange of ints
      const coordsW = om.arange(ww);
      const coords = om.stack(om.meshgrid([coordsH, coordsW], { indexing: 'ij' })); // 2, Wh, Ww
      const coordsFlatten = coords.flatten(1); // 2, Wh*Ww
      const relativeCoords = coordsFlatten.unsqueeze(2).sub(coordsFlatten.unsqueeze(1)).permute(1, 2, 0).contiguous(); // Wh*Ww, Wh*Ww, 2
      relativeCoords.select(2, 0).add_(wh - 1); // shift to start from 0
      relativeCoords.select(2, 1).add_(ww - 1);
      relativeCoords.select(2, 0).mul_(2 * ww - 1);
      return relativeCoords.sum(-1).flatten(); // Wh*Ww*Wh*Ww
    });
    this.registerBuffer('relative_position_index', index);
  }

  getRelativePositionBias() {
    return getRelativePositionBias(this.relative_position_bias_table, this.relative_position_index, this.windowSize);
  }

  /** x [B, H, W, C] -> [B, H, W, C]. */
  forward(x) {
    return shiftedWindowAttention(x, this.qkv.weight, this.proj.weight, this.getRelativePositionBias(), this.windowSize, this.numHeads,
      this.shiftSize, { attentionDropout: this.attentionDropout, dropout: this.dropout, qkvBias: this.qkv.bias, projBias: this.proj.bias });
  }
}

/**
 * V2's window attention: ShiftedWindowAttention's arguments and fields, the bias table replaced by
 * cpb_mlp (Linear(2, 512), ReLU, Linear(512, heads)) over relative_coords_table (a persistent
 * buffer [1, 2Wh-1, 2Ww-1, 2]: each offset scaled to [-8, 8], then sign * log2(1 + |.|) / 3), and
 * logit_scale [heads, 1, 1] (log 10) for the cosine attention.
 */
export class ShiftedWindowAttentionV2 extends ShiftedWindowAttention {
  constructor(dim, windowSize, shiftSize, numHeads, options) {
    super(dim, windowSize, shiftSize, numHeads, options);
    this.logit_scale = om.tidy(() => om.full([numHeads, 1, 1], 10).log());
    this.logit_scale.requiresGrad = true;
    // mlp to generate continuous relative position bias
    this.cpb_mlp = new nn.Sequential(new nn.Linear(2, 512, { bias: true }), new nn.ReLU(), new nn.Linear(512, numHeads, { bias: false }));
    const bias = this.qkv.bias;
    if (bias) {
      const length = Math.floor(bias.numel() / 3);
      om.tidy(() => { // the view freed (tidy keeps what its function returns: nothing here)
        om.noGrad(() => { bias.slice(0, length, 2 * length).zero_(); });
      });
    }
  }

  /** Called by ShiftedWindowAttention's constructor: the log-spaced coordinates of every offset (dy, dx) in a window. */
  defineRelativePositionBiasTable() {
    const [wh, ww] = this.windowSize;
    const table = om.tidy(() => {
      const relativeCoordsH = om.arange(-(wh - 1), wh, { dtype: 'float32' });
      const relativeCoordsW = om.arange(-(ww - 1), ww, { dtype: 'float32' });
      let t = om.stack(om.meshgrid([relativeCoordsH, relativeCoordsW], { indexing: 'ij' }));
      t = t.permute(1, 2, 0).contiguous().unsqueeze(0); // 1, 2*Wh-1, 2*Ww-1, 2
      t.select(3, 0).div_(wh - 1);
      t.select(3, 1).div_(ww - 1);
      t.mul_(8); // normalize to -8, 8
      return t.sign().mul(t.abs().add(1.0).log2()).div(3.0);
    });
    this.registerBuffer('relative_coords_table', table);
  }

  getRelativePositionBias() {
    const table = this.cpb_mlp.forward(this.relative_coords_table).view(-1, this.numHeads);
    return getRelativePositionBias(table, this.relative_position_index, this.windowSize).sigmoid().mul(16);
  }

  /** x [B, H, W, C] -> [B, H, W, C]. */
  forward(x) {
    return shiftedWindowAttention(x, this.qkv.weight, this.proj.weight, this.getRelativePositionBias(), this.windowSize, this.numHeads,
      this.shiftSize, {
        attentionDropout: this.attentionDropout, dropout: this.dropout, qkvBias: this.qkv.bias, projBias: this.proj.bias, logitScale: this.logit_scale,
      });
  }
}

/** Pre-norm window attention and MLP, each with stochastic depth and a residual. */
export class SwinTransformerBlock extends nn.Module {
  constructor(dim, numHeads, windowSize, shiftSize, options) {
    super();
    const o = optionsOf(options, 'SwinTransformerBlock',
      ['mlpRatio', 'dropout', 'attentionDropout', 'stochasticDepthProb', 'normLayer', 'attnLayer']);
    const { mlpRatio = 4.0, dropout = 0.0, attentionDropout = 0.0, stochasticDepthProb = 0.0 } = o;
    const normLayer = o.normLayer ?? nn.LayerNorm;
    const attnLayer = o.attnLayer ?? ShiftedWindowAttention;
    this.norm1 = makeLayer(normLayer, dim);
    this.attn = makeLayer(attnLayer, dim, windowSize, shiftSize, numHeads, { attentionDropout, dropout });
    this.stochastic_depth = new nn.StochasticDepth(stochasticDepthProb, 'row');
    this.norm2 = makeLayer(normLayer, dim);
    this.mlp = new nn.MLP(dim, [Math.trunc(dim * mlpRatio), dim], { activationLayer: nn.GELU, dropout });
  }

  forward(x) {
    const h = x.add(this.stochastic_depth.forward(this.attn.forward(this.norm1.forward(x))));
    return h.add(this.stochastic_depth.forward(this.mlp.forward(this.norm2.forward(h))));
  }
}

/** V2's block: SwinTransformerBlock's layers (attnLayer ShiftedWindowAttentionV2 by default), the norms after attention and MLP (res-post-norm). */
export class SwinTransformerBlockV2 extends SwinTransformerBlock {
  constructor(dim, numHeads, windowSize, shiftSize, options) {
    const o = optionsOf(options, 'SwinTransformerBlockV2',
      ['mlpRatio', 'dropout', 'attentionDropout', 'stochasticDepthProb', 'normLayer', 'attnLayer']);
    super(dim, numHeads, windowSize, shiftSize, { ...o, attnLayer: o.attnLayer ?? ShiftedWindowAttentionV2 });
  }

  forward(x) {
    const h = x.add(this.stochastic_depth.forward(this.norm1.forward(this.attn.forward(x))));
    return h.add(this.stochastic_depth.forward(this.norm2.forward(this.mlp.forward(h))));
  }
}

/**
 * torchvision's SwinTransformer(patch_size, embed_dim, depths, num_heads, window_size, mlp_ratio,
 * dropout, attention_dropout, stochastic_depth_prob, num_classes, norm_layer, block,
 * downsample_layer): new SwinTransformer(patchSize, embedDim, depths, numHeads, windowSize,
 * { mlpRatio = 4, dropout = 0, attentionDropout = 0, stochasticDepthProb = 0.1, numClasses = 1000,
 * normLayer = LayerNorm(eps 1e-5), block = SwinTransformerBlock, downsampleLayer = PatchMerging }).
 */
export class SwinTransformer extends nn.Module {
  constructor(patchSize, embedDim, depths, numHeads, windowSize, options) {
    super();
    const o = optionsOf(options, 'SwinTransformer', ['mlpRatio', 'dropout', 'attentionDropout', 'stochasticDepthProb',
      'numClasses', 'normLayer', 'block', 'downsampleLayer']);
    const { mlpRatio = 4.0, dropout = 0.0, attentionDropout = 0.0, stochasticDepthProb = 0.1, numClasses = 1000 } = o;
    const block = o.block ?? SwinTransformerBlock;
    const normLayer = o.normLayer ?? ((c) => new nn.LayerNorm(c, { eps: 1e-5 }));
    const downsampleLayer = o.downsampleLayer ?? PatchMerging;
    this.numClasses = numClasses;
    const layers = [new nn.Sequential( // split image into non-overlapping patches
      new nn.Conv2d(3, embedDim, [patchSize[0], patchSize[1]], { stride: [patchSize[0], patchSize[1]] }),
      new nn.Permute([0, 2, 3, 1]),
      makeLayer(normLayer, embedDim),
    )];
    const totalStageBlocks = depths.reduce((a, b) => a + b, 0);
    let stageBlockId = 0;
    depths.forEach((depth, iStage) => {
      const stage = [];
      const dim = embedDim * 2 ** iStage;
      for (let iLayer = 0; iLayer < depth; iLayer++) {
        const sdProb = stochasticDepthProb * stageBlockId / (totalStageBlocks - 1); // linear in the block's depth
        stage.push(makeLayer(block, dim, numHeads[iStage], windowSize, windowSize.map((w) => (iLayer % 2 === 0 ? 0 : Math.floor(w / 2))), {
          mlpRatio, dropout, attentionDropout, stochasticDepthProb: sdProb, normLayer,
        }));
        stageBlockId++;
      }
      layers.push(new nn.Sequential(...stage));
      if (iStage < depths.length - 1) layers.push(makeLayer(downsampleLayer, dim, normLayer)); // patch merging
    });
    this.features = new nn.Sequential(...layers);
    const numFeatures = embedDim * 2 ** (depths.length - 1);
    this.norm = makeLayer(normLayer, numFeatures);
    this.permute = new nn.Permute([0, 3, 1, 2]);
    this.avgpool = new nn.AdaptiveAvgPool2d(1);
    this.flatten = new nn.Flatten(1);
    this.head = new nn.Linear(numFeatures, numClasses);
  }

  forward(x) {
    const h = this.permute.forward(this.norm.forward(this.features.forward(x)));
    return this.head.forward(this.flatten.forward(this.avgpool.forward(h)));
  }
}

/**
 * torchvision's builders: patch 4, the sizes of Swin-T, -S and -B and their stochastic depth; V1's
 * window 7, V2's window 8 with its block and patch merging; options as SwinTransformer's.
 */
const builder = (embedDim, depths, numHeads, stochasticDepthProb, v2 = false) => (options = {}) =>
  new SwinTransformer([4, 4], embedDim, depths, numHeads, v2 ? [8, 8] : [7, 7], {
    stochasticDepthProb, ...(v2 ? { block: SwinTransformerBlockV2, downsampleLayer: PatchMergingV2 } : {}), ...options,
  });

export const swin_t = builder(96, [2, 2, 6, 2], [3, 6, 12, 24], 0.2);
export const swin_s = builder(96, [2, 2, 18, 2], [3, 6, 12, 24], 0.3);
export const swin_b = builder(128, [2, 2, 18, 2], [4, 8, 16, 32], 0.5);
export const swin_v2_t = builder(96, [2, 2, 6, 2], [3, 6, 12, 24], 0.2, true);
export const swin_v2_s = builder(96, [2, 2, 18, 2], [3, 6, 12, 24], 0.3, true);
export const swin_v2_b = builder(128, [2, 2, 18, 2], [4, 8, 16, 32], 0.5, true);
