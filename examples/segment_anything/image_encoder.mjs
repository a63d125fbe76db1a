// Segment Anything's image encoder (segment_anything/modeling/image_encoder.py's ImageEncoderViT,
// with common.py's MLPBlock and LayerNorm2d) ported to onemodel as a user ports it: the same
// modules, names and operations, so a checkpoint's state dict (`patch_embed.proj.weight`,
// `pos_embed`, `blocks.0.norm1.weight`, `blocks.0.attn.qkv.weight`, `blocks.0.attn.rel_pos_h`,
// `blocks.0.mlp.lin1.weight`, `neck.0.weight` ... `neck.3.bias`) loads with a strict loadStateDict.
//
// Every size branch of upstream is kept, decided from the sizes of the call:
// - window_partition pads the tokens on the bottom and the right to whole windows,
//   `(window - H % window) % window`, only where a pad is not 0; window_unpartition crops it back
//   off, only where there was some;
// - get_rel_pos linear-interpolates a relative-position table whose length is not
//   2 * max(q, k) - 1 (a global block at another grid than img_size / patch_size) and indexes it at
//   the coordinate differences;
// - the absolute position table is added as it is (no resizing, as upstream): with use_abs_pos the
//   patch grid must be img_size / patch_size, eagerly as upstream.
//
//   const enc = new ImageEncoderViT({ img_size: 64, patch_size: 8, embed_dim: 64, depth: 4, num_heads: 4,
//     out_chans: 16, use_rel_pos: true, window_size: 3, global_attn_indexes: [1, 3] }).eval();
//   const embeddings = enc.forward(image);   // [batch, 3, 64, 64] -> [batch, 16, 8, 8]
import * as om from 'onemodel';

const nn = om.nn;
const F = nn.functional;

/** ImageEncoderViT's defaults (its constructor's keyword arguments), with SAM's LayerNorm eps (build_sam's partial(nn.LayerNorm, eps=1e-6)). */
export const SAM_ENCODER_DEFAULTS = {
  img_size: 1024, patch_size: 16, in_chans: 3, embed_dim: 768, depth: 12, num_heads: 12, mlp_ratio: 4.0, out_chans: 256,
  qkv_bias: true, norm_eps: 1e-6, use_abs_pos: true, use_rel_pos: false, window_size: 0, global_attn_indexes: [],
};

/** MLPBlock: lin1, GELU, lin2. */
export class MLPBlock extends nn.Module {
  constructor(embeddingDim, mlpDim) {
    super();
    this.lin1 = new nn.Linear(embeddingDim, mlpDim);
    this.lin2 = new nn.Linear(mlpDim, embeddingDim);
    this.act = new nn.GELU();
  }

  forward(x) {
    return this.lin2.forward(this.act.forward(this.lin1.forward(x)));
  }
}

/** common.py's LayerNorm2d: over the channels of [B, C, H, W], mean and variance written out as upstream does. */
export class LayerNorm2d extends nn.Module {
  constructor(numChannels, eps = 1e-6) {
    super();
    this.weight = om.ones([numChannels]);
    this.weight.requiresGrad = true;
    this.bias = om.zeros([numChannels]);
    this.bias.requiresGrad = true;
    this.eps = eps;
  }

  forward(x) {
    const u = x.mean(1, true);
    const s = x.sub(u).pow(2).mean(1, true);
    const normed = x.sub(u).div(s.add(this.eps).sqrt());
    return this.weight.view(-1, 1, 1).mul(normed).add(this.bias.view(-1, 1, 1));
  }
}

/** [B, H, W, C] -> [[B * windows, ws, ws, C], [Hp, Wp]]: padded on the bottom and right to whole windows first. */
export function windowPartition(x, windowSize) {
  const [B, H, W, C] = x.shape;
  const padH = (windowSize - (H % windowSize)) % windowSize;
  const padW = (windowSize - (W % windowSize)) % windowSize;
  let padded = x;
  if (padH > 0 || padW > 0) padded = F.pad(x, [0, 0, 0, padW, 0, padH]);
  const [Hp, Wp] = [H + padH, W + padW];
  const windows = padded.view(B, Hp / windowSize, windowSize, Wp / windowSize, windowSize, C);
  return [windows.permute(0, 1, 3, 2, 4, 5).contiguous().view(-1, windowSize, windowSize, C), [Hp, Wp]];
}

/** windowPartition's inverse: [B * windows, ws, ws, C] -> [B, H, W, C], the padding cropped off. */
export function windowUnpartition(windows, windowSize, [Hp, Wp], [H, W]) {
  const B = Math.floor(windows.shape[0] / Math.floor(Math.floor((Hp * Wp) / windowSize) / windowSize));
  let x = windows.view(B, Hp / windowSize, Wp / windowSize, windowSize, windowSize, -1);
  x = x.permute(0, 1, 3, 2, 4, 5).contiguous().view(B, Hp, Wp, -1);
  if (Hp > H || Wp > W) x = x.slice(1, 0, H).slice(2, 0, W).contiguous();
  return x;
}

/** The table's rows at every (query, key) coordinate offset: [q, k, C]; a table not 2 max(q, k) - 1 long is resized first (linear). */
export function getRelPos(qSize, kSize, relPos) {
  const maxRelDist = 2 * Math.max(qSize, kSize) - 1;
  let resized = relPos;
  if (relPos.shape[0] !== maxRelDist) {
    const rows = F.interpolate(relPos.reshape(1, relPos.shape[0], -1).permute(0, 2, 1), { size: maxRelDist, mode: 'linear' });
    resized = rows.reshape(-1, maxRelDist).permute(1, 0);
  }
  // the shorter side's coordinates scaled to the longer's (1 when q and k are the same size)
  const qCoords = om.arange(qSize).unsqueeze(1).mul(Math.max(kSize / qSize, 1.0));
  const kCoords = om.arange(kSize).unsqueeze(0).mul(Math.max(qSize / kSize, 1.0));
  const relativeCoords = qCoords.sub(kCoords).add((kSize - 1) * Math.max(qSize / kSize, 1.0));
  return resized.index([relativeCoords.long()]);
}

/** attn [B, qh * qw, kh * kw] plus the decomposed height and width terms of q [B, qh * qw, C] (MViTv2's). */
export function addDecomposedRelPos(attn, q, relPosH, relPosW, [qH, qW], [kH, kW]) {
  const Rh = getRelPos(qH, kH, relPosH);
  const Rw = getRelPos(qW, kW, relPosW);
  const [B, , dim] = q.shape;
  const rQ = q.reshape(B, qH, qW, dim);
  const relH = rQ.matmul(Rh.permute(0, 2, 1));
  const relW = rQ.permute(0, 2, 1, 3).matmul(Rw.permute(0, 2, 1)).permute(0, 2, 1, 3);
  const sum = attn.view(B, qH, qW, kH, kW).add(relH.unsqueeze(4)).add(relW.unsqueeze(3));
  return sum.view(B, qH * qW, kH * kW);
}

/** Multi-head attention over [B, H, W, dim] with the decomposed relative positions of an input_size grid. */
export class Attention extends nn.Module {
  constructor(dim, { numHeads = 8, qkvBias = true, useRelPos = false, inputSize = null } = {}) {
    super();
    if (dim % numHeads !== 0) throw new Error(`Attention: dim ${dim} is not a multiple of num_heads ${numHeads}`);
    this.num_heads = numHeads;
    const headDim = dim / numHeads;
    this.scale = headDim ** -0.5;
    this.qkv = new nn.Linear(dim, dim * 3, { bias: qkvBias });
    this.proj = new nn.Linear(dim, dim);
    this.use_rel_pos = useRelPos;
    if (useRelPos) {
      if (inputSize === null) throw new Error('Attention: Input size must be provided if using relative positional encoding.');
      this.rel_pos_h = om.zeros([2 * inputSize[0] - 1, headDim]);
      this.rel_pos_h.requiresGrad = true;
      this.rel_pos_w = om.zeros([2 * inputSize[1] - 1, headDim]);
      this.rel_pos_w.requiresGrad = true;
    }
  }

  forward(x) {
    const [B, H, W] = x.shape;
    const qkv = this.qkv.forward(x).reshape(B, H * W, 3, this.num_heads, -1).permute(2, 0, 3, 1, 4);
    const [q, k, v] = qkv.reshape(3, B * this.num_heads, H * W, -1).unbind(0);
    let attn = q.mul(this.scale).matmul(k.transpose(-2, -1));
    if (this.use_rel_pos) attn = addDecomposedRelPos(attn, q, this.rel_pos_h, this.rel_pos_w, [H, W], [H, W]);
    attn = attn.softmax(-1);
    const out = attn.matmul(v).view(B, this.num_heads, H, W, -1).permute(0, 2, 3, 1, 4).reshape(B, H, W, -1);
    return this.proj.forward(out);
  }
}

/** A pre-norm transformer block: windowed attention (window_size > 0) or global, then the MLP. */
export class Block extends nn.Module {
  constructor(dim, numHeads, { mlpRatio = 4.0, qkvBias = true, normEps = 1e-5, useRelPos = false, windowSize = 0, inputSize = null } = {}) {
    super();
    this.norm1 = new nn.LayerNorm(dim, { eps: normEps });
    this.attn = new Attention(dim, { numHeads, qkvBias, useRelPos, inputSize: windowSize === 0 ? inputSize : [windowSize, windowSize] });
    this.norm2 = new nn.LayerNorm(dim, { eps: normEps });
    this.mlp = new MLPBlock(dim, Math.trunc(dim * mlpRatio));
    this.window_size = windowSize;
  }

  forward(x) {
    const shortcut = x;
    let h = this.norm1.forward(x);
    let padHW;
    let HW;
    if (this.window_size > 0) {
      HW = [h.shape[1], h.shape[2]];
      [h, padHW] = windowPartition(h, this.window_size);
    }
    h = this.attn.forward(h);
    if (this.window_size > 0) h = windowUnpartition(h, this.window_size, padHW, HW);
    const y = shortcut.add(h);
    return y.add(this.mlp.forward(this.norm2.forward(y)));
  }
}

/** Image to patch embedding: a patch x patch conv, channels last. */
export class PatchEmbed extends nn.Module {
  constructor(kernelSize, inChans, embedDim) {
    super();
    this.proj = new nn.Conv2d(inChans, embedDim, kernelSize, { stride: kernelSize });
  }

  forward(x) {
    return this.proj.forward(x).permute(0, 2, 3, 1); // B C H W -> B H W C
  }
}

/** ImageEncoderViT (ViTDet's backbone as SAM uses it): [B, in_chans, H, W] -> [B, out_chans, H / patch, W / patch]. */
export class ImageEncoderViT extends nn.Module {
  constructor(config = {}) {
    super();
    const c = { ...SAM_ENCODER_DEFAULTS, ...config };
    this.img_size = c.img_size;
    const grid = Math.floor(c.img_size / c.patch_size);
    this.patch_embed = new PatchEmbed(c.patch_size, c.in_chans, c.embed_dim);
    this.pos_embed = null;
    if (c.use_abs_pos) {
      this.pos_embed = om.zeros([1, grid, grid, c.embed_dim]);
      this.pos_embed.requiresGrad = true;
    }
    this.blocks = new nn.ModuleList(Array.from({ length: c.depth }, (_, i) => new Block(c.embed_dim, c.num_heads, {
      mlpRatio: c.mlp_ratio, qkvBias: c.qkv_bias, normEps: c.norm_eps, useRelPos: c.use_rel_pos,
      windowSize: c.global_attn_indexes.includes(i) ? 0 : c.window_size, inputSize: [grid, grid],
    })));
    this.neck = new nn.Sequential(
      new nn.Conv2d(c.embed_dim, c.out_chans, 1, { bias: false }),
      new LayerNorm2d(c.out_chans),
      new nn.Conv2d(c.out_chans, c.out_chans, 3, { padding: 1, bias: false }),
      new LayerNorm2d(c.out_chans),
    );
  }

  forward(x) {
    let h = this.patch_embed.forward(x);
    if (this.pos_embed !== null) h = h.add(this.pos_embed);
    for (const blk of this.blocks) h = blk.forward(h);
    return this.neck.forward(h.permute(0, 3, 1, 2));
  }
}
