// Swin Transformer (Hugging Face transformers' SwinModel and SwinForImageClassification,
// modeling_swin.py, eval mode) ported to onemodel as a user ports it: the same modules, names and
// operations, so a checkpoint's state dict (`embeddings.patch_embeddings.projection.weight`,
// `embeddings.norm.weight`, `encoder.layers.0.blocks.1.attention.self.relative_position_bias_table`,
// `...attention.self.relative_position_index` (a persistent buffer), `...attention.self.query.weight`,
// `...attention.output.dense.weight`, `...intermediate.dense.weight`, `...output.dense.weight`,
// `encoder.layers.0.downsample.reduction.weight`, `layernorm.weight`; a classifier's under `swin.`
// beside `classifier.weight`) loads with a strict loadStateDict.
//
// Every size branch of upstream is kept, decided from the sizes of the call:
// - SwinPatchEmbeddings.maybe_pad pads the image on the right and the bottom to a multiple of the
//   patch size (only where it is not one);
// - SwinLayer.set_shift_and_window_size: where the stage's smaller side is at most window_size, the
//   layer does not shift and its window is that side (the attention's bias table stays window_size's,
//   so a side below window_size fails, eagerly as upstream);
// - SwinLayer.maybe_pad pads the tokens to whole windows, `(window - width % window) % window`;
// - the shifted layers' attention mask is made in place (`img_mask[:, h, w, :] = count`);
// - SwinPatchMerging.maybe_pad pads an odd height or width by one.
// Upstream's set_shift_and_window_size writes the layer's shift_size and window_size, so a model that
// once saw a small image keeps the unshifted window for larger ones (its outputs depend on what it saw
// before). The port decides per call, as a freshly loaded upstream model does.
//
//   const net = new SwinModel({ embed_dim: 16, depths: [2, 2], num_heads: [2, 4], window_size: 3, patch_size: 2 }).eval();
//   const [lastHiddenState, pooled] = net.forward(pixelValues);   // [batch, tokens, 32], [batch, 32]
import * as om from 'onemodel';
import { portConfig } from './modeling_utils.mjs';

const nn = om.nn;
const F = nn.functional;

/** SwinConfig's defaults (swin-tiny-patch4-window7-224) for the fields this port reads. */
export const SWIN_DEFAULTS = {
  image_size: 224, patch_size: 4, num_channels: 3, embed_dim: 96, depths: [2, 2, 6, 2], num_heads: [3, 6, 12, 24],
  window_size: 7, mlp_ratio: 4.0, qkv_bias: true, hidden_act: 'gelu', drop_path_rate: 0.1, use_absolute_embeddings: false,
  layer_norm_eps: 1e-5, num_labels: 2,
};

/** The config with Swin's defaults; what the port does not implement is refused by name. */
function swinConfig(model, config) {
  const c = portConfig(model, SWIN_DEFAULTS, config, 'hidden_act', 'gelu');
  // drop_path_rate is read by nothing: stochastic depth is the identity in eval mode, the only mode ported
  if (c.use_absolute_embeddings) throw new Error(`${model}: use_absolute_embeddings true is not ported (only false)`);
  return c;
}

/** [B, H, W, C] -> [B * H/ws * W/ws, ws, ws, C]: the windows side by side (window_partition). */
export function windowPartition(inputFeature, windowSize) {
  const [batchSize, height, width, numChannels] = inputFeature.shape;
  const x = inputFeature.view(batchSize, height / windowSize, windowSize, width / windowSize, windowSize, numChannels);
  return x.permute(0, 1, 3, 2, 4, 5).contiguous().view(-1, windowSize, windowSize, numChannels);
}

/** windowPartition's inverse (window_reverse): [B * nW, ws, ws, C] -> [B, height, width, C]. */
export function windowReverse(windows, windowSize, height, width) {
  const numChannels = windows.shape[windows.shape.length - 1];
  const x = windows.view(-1, height / windowSize, width / windowSize, windowSize, windowSize, numChannels);
  return x.permute(0, 1, 3, 2, 4, 5).contiguous().view(-1, height, width, numChannels);
}

/** The patch projection (Conv2d patch/patch) after padding the image to whole patches. */
export class SwinPatchEmbeddings extends nn.Module {
  constructor(config) {
    super();
    this.patch_size = [config.patch_size, config.patch_size];
    this.projection = new nn.Conv2d(config.num_channels, config.embed_dim, this.patch_size, { stride: this.patch_size });
  }

  maybePad(pixelValues, height, width) {
    let x = pixelValues;
    if (width % this.patch_size[1] !== 0) x = F.pad(x, [0, this.patch_size[1] - width % this.patch_size[1]]);
    if (height % this.patch_size[0] !== 0) x = F.pad(x, [0, 0, 0, this.patch_size[0] - height % this.patch_size[0]]);
    return x;
  }

  /** pixel_values [B, C, H, W] -> [[B, h * w, embed_dim], [h, w]]. */
  forward(pixelValues) {
    const [, , height, width] = pixelValues.shape;
    const embeddings = this.projection.forward(this.maybePad(pixelValues, height, width));
    const [, , h, w] = embeddings.shape;
    return [embeddings.flatten(2).transpose(1, 2), [h, w]];
  }
}

/** Patch embeddings and their LayerNorm (no position table: use_absolute_embeddings is false). */
export class SwinEmbeddings extends nn.Module {
  constructor(config) {
    super();
    this.patch_embeddings = new SwinPatchEmbeddings(config);
    this.norm = new nn.LayerNorm(config.embed_dim); // upstream's default eps 1e-5, not layer_norm_eps
  }

  forward(pixelValues) {
    const [embeddings, outputDimensions] = this.patch_embeddings.forward(pixelValues);
    return [this.norm.forward(embeddings), outputDimensions];
  }
}

/** [B, h * w, C] -> [B, ceil(h/2) * ceil(w/2), 2C]: each 2 x 2 patch's tokens side by side (odd sides padded), norm, reduction. */
export class SwinPatchMerging extends nn.Module {
  constructor(dim) {
    super();
    this.dim = dim;
    this.reduction = new nn.Linear(4 * dim, 2 * dim, { bias: false });
    this.norm = new nn.LayerNorm(4 * dim);
  }

  maybePad(inputFeature, height, width) {
    if (height % 2 === 1 || width % 2 === 1) return F.pad(inputFeature, [0, 0, 0, width % 2, 0, height % 2]);
    return inputFeature;
  }

  forward(inputFeature, [height, width]) {
    const [batchSize, , numChannels] = inputFeature.shape;
    const x = this.maybePad(inputFeature.view(batchSize, height, width, numChannels), height, width);
    const x0 = x.slice(1, 0, null, 2).slice(2, 0, null, 2);
    const x1 = x.slice(1, 1, null, 2).slice(2, 0, null, 2);
    const x2 = x.slice(1, 0, null, 2).slice(2, 1, null, 2);
    const x3 = x.slice(1, 1, null, 2).slice(2, 1, null, 2);
    const merged = om.cat([x0, x1, x2, x3], -1).view(batchSize, -1, 4 * numChannels);
    return this.reduction.forward(this.norm.forward(merged));
  }
}

/** Window attention with the relative position bias of a window_size window; the shifted layers' mask added per window. */
export class SwinSelfAttention extends nn.Module {
  constructor(config, dim, numHeads, windowSize) {
    super();
    if (dim % numHeads !== 0) throw new Error(`SwinSelfAttention: The hidden size (${dim}) is not a multiple of the number of attention heads (${numHeads})`);
    this.num_attention_heads = numHeads;
    this.attention_head_size = Math.trunc(dim / numHeads);
    this.all_head_size = this.num_attention_heads * this.attention_head_size;
    this.window_size = [windowSize, windowSize];
    const [wh, ww] = this.window_size;
    this.relative_position_bias_table = om.zeros([(2 * wh - 1) * (2 * ww - 1), numHeads]);
    this.relative_position_bias_table.requiresGrad = true;
    // each pair of a window's tokens: the table row of their offset (dy, dx)
    const index = om.tidy(() => {
      const coords = om.stack(om.meshgrid([om.arange(wh), om.arange(ww)], { indexing: 'ij' }));
      const coordsFlatten = coords.flatten(1);
      const relativeCoords = coordsFlatten.unsqueeze(2).sub(coordsFlatten.unsqueeze(1)).permute(1, 2, 0).contiguous();
      relativeCoords.select(2, 0).add_(wh - 1);
      relativeCoords.select(2, 1).add_(ww - 1);
      relativeCoords.select(2, 0).mul_(2 * ww - 1);
      return relativeCoords.sum(-1);
    });
    this.registerBuffer('relative_position_index', index);
    this.query = new nn.Linear(this.all_head_size, this.all_head_size, { bias: config.qkv_bias });
    this.key = new nn.Linear(this.all_head_size, this.all_head_size, { bias: config.qkv_bias });
    this.value = new nn.Linear(this.all_head_size, this.all_head_size, { bias: config.qkv_bias });
  }

  transposeForScores(x) {
    return x.view(...x.shape.slice(0, -1), this.num_attention_heads, this.attention_head_size).permute(0, 2, 1, 3);
  }

  /** hidden_states [B * windows, tokens, dim], attention_mask [windows, tokens, tokens] or null. */
  forward(hiddenStates, attentionMask = null) {
    const [batchSize, dim] = hiddenStates.shape;
    const mixedQueryLayer = this.query.forward(hiddenStates);
    const keyLayer = this.transposeForScores(this.key.forward(hiddenStates));
    const valueLayer = this.transposeForScores(this.value.forward(hiddenStates));
    const queryLayer = this.transposeForScores(mixedQueryLayer);
    let scores = queryLayer.matmul(keyLayer.transpose(-1, -2)).div(Math.sqrt(this.attention_head_size));
    const n = this.window_size[0] * this.window_size[1];
    const bias = this.relative_position_bias_table.index([this.relative_position_index.view(-1)]).view(n, n, -1);
    scores = scores.add(bias.permute(2, 0, 1).contiguous().unsqueeze(0));
    if (attentionMask !== null) {
      const maskShape = attentionMask.shape[0];
      scores = scores.view(batchSize / maskShape, maskShape, this.num_attention_heads, dim, dim);
      scores = scores.add(attentionMask.unsqueeze(1).unsqueeze(0)).view(-1, this.num_attention_heads, dim, dim);
    }
    const context = F.softmax(scores, -1).matmul(valueLayer).permute(0, 2, 1, 3).contiguous();
    return context.view(...context.shape.slice(0, -2), this.all_head_size);
  }
}

export class SwinSelfOutput extends nn.Module {
  constructor(config, dim) {
    super();
    this.dense = new nn.Linear(dim, dim);
  }

  forward(hiddenStates) {
    return this.dense.forward(hiddenStates);
  }
}

export class SwinAttention extends nn.Module {
  constructor(config, dim, numHeads, windowSize) {
    super();
    this.self = new SwinSelfAttention(config, dim, numHeads, windowSize);
    this.output = new SwinSelfOutput(config, dim);
  }

  forward(hiddenStates, attentionMask = null) {
    return this.output.forward(this.self.forward(hiddenStates, attentionMask));
  }
}

export class SwinIntermediate extends nn.Module {
  constructor(config, dim) {
    super();
    this.dense = new nn.Linear(dim, Math.trunc(config.mlp_ratio * dim));
  }

  forward(hiddenStates) {
    return F.gelu(this.dense.forward(hiddenStates));
  }
}

export class SwinOutput extends nn.Module {
  constructor(config, dim) {
    super();
    this.dense = new nn.Linear(Math.trunc(config.mlp_ratio * dim), dim);
  }

  forward(hiddenStates) {
    return this.dense.forward(hiddenStates);
  }
}

/** A Swin block: pre-norm (shifted) window attention and MLP, each with a residual. */
export class SwinLayer extends nn.Module {
  constructor(config, dim, inputResolution, numHeads, shiftSize = 0) {
    super();
    this.shift_size = shiftSize;
    this.window_size = config.window_size;
    this.layernorm_before = new nn.LayerNorm(dim, { eps: config.layer_norm_eps });
    this.attention = new SwinAttention(config, dim, numHeads, this.window_size);
    this.layernorm_after = new nn.LayerNorm(dim, { eps: config.layer_norm_eps });
    this.intermediate = new SwinIntermediate(config, dim);
    this.output = new SwinOutput(config, dim);
  }

  /**
   * set_shift_and_window_size, returned instead of written into the layer (see the file's head):
   * a side at most window_size is one window, unshifted.
   */
  shiftAndWindowSize(inputResolution) {
    if (Math.min(...inputResolution) <= this.window_size) return [0, Math.min(...inputResolution)];
    return [this.shift_size, this.window_size];
  }

  /** The mask of a shifted layer's windows [windows, ws * ws, ws * ws]: -100 between tokens the roll brought from different regions. */
  getAttnMask(height, width, shiftSize, windowSize) {
    if (shiftSize <= 0) return null;
    const imgMask = om.zeros([1, height, width, 1]);
    const slices = [[0, -windowSize], [-windowSize, -shiftSize], [-shiftSize, null]];
    let count = 0;
    for (const [h0, h1] of slices) {
      for (const [w0, w1] of slices) {
        imgMask.slice(1, h0, h1).slice(2, w0, w1).fill_(count); // img_mask[:, h, w, :] = count
        count += 1;
      }
    }
    const maskWindows = windowPartition(imgMask, windowSize).view(-1, windowSize * windowSize);
    const attnMask = maskWindows.unsqueeze(1).sub(maskWindows.unsqueeze(2));
    return attnMask.maskedFill(attnMask.ne(0), -100.0).maskedFill(attnMask.eq(0), 0.0);
  }

  maybePad(hiddenStates, height, width, windowSize) {
    const padRight = (windowSize - width % windowSize) % windowSize;
    const padBottom = (windowSize - height % windowSize) % windowSize;
    const padValues = [0, 0, 0, padRight, 0, padBottom];
    return [F.pad(hiddenStates, padValues), padValues];
  }

  forward(hiddenStates, inputDimensions) {
    const [shiftSize, windowSize] = this.shiftAndWindowSize(inputDimensions);
    const [height, width] = inputDimensions;
    const [batchSize, , channels] = hiddenStates.shape;
    const shortcut = hiddenStates;
    let h = this.layernorm_before.forward(hiddenStates).view(batchSize, height, width, channels);
    const [padded, padValues] = this.maybePad(h, height, width, windowSize);
    const [, heightPad, widthPad] = padded.shape;
    const shifted = shiftSize > 0 ? padded.roll([-shiftSize, -shiftSize], [1, 2]) : padded;
    const windows = windowPartition(shifted, windowSize).view(-1, windowSize * windowSize, channels);
    const attnMask = this.getAttnMask(heightPad, widthPad, shiftSize, windowSize);
    const attentionOutput = this.attention.forward(windows, attnMask);
    const shiftedWindows = windowReverse(attentionOutput.view(-1, windowSize, windowSize, channels), windowSize, heightPad, widthPad);
    let attentionWindows = shiftSize > 0 ? shiftedWindows.roll([shiftSize, shiftSize], [1, 2]) : shiftedWindows;
    if (padValues[3] > 0 || padValues[5] > 0) attentionWindows = attentionWindows.slice(1, 0, height).slice(2, 0, width).contiguous();
    h = shortcut.add(attentionWindows.view(batchSize, height * width, channels));
    const layerOutput = this.intermediate.forward(this.layernorm_after.forward(h));
    return h.add(this.output.forward(layerOutput));
  }
}

/** depth blocks (every other one shifted by window_size // 2), then patch merging except in the last stage. */
export class SwinStage extends nn.Module {
  constructor(config, dim, inputResolution, depth, numHeads, downsample) {
    super();
    this.dim = dim;
    this.blocks = new nn.ModuleList(Array.from({ length: depth }, (_, i) =>
      new SwinLayer(config, dim, inputResolution, numHeads, i % 2 === 0 ? 0 : Math.floor(config.window_size / 2))));
    this.downsample = downsample ? new SwinPatchMerging(dim) : null;
  }

  /** -> [hidden_states, [height, width] after downsampling]. */
  forward(hiddenStates, inputDimensions) {
    const [height, width] = inputDimensions;
    let h = hiddenStates;
    for (const layer of this.blocks) h = layer.forward(h, inputDimensions);
    if (this.downsample === null) return [h, [height, width]];
    return [this.downsample.forward(h, inputDimensions), [Math.floor((height + 1) / 2), Math.floor((width + 1) / 2)]];
  }
}

export class SwinEncoder extends nn.Module {
  constructor(config, gridSize) {
    super();
    const n = config.depths.length;
    this.layers = new nn.ModuleList(config.depths.map((depth, i) => new SwinStage(config, Math.trunc(config.embed_dim * 2 ** i),
      [Math.floor(gridSize[0] / 2 ** i), Math.floor(gridSize[1] / 2 ** i)], depth, config.num_heads[i], i < n - 1)));
  }

  forward(hiddenStates, inputDimensions) {
    let h = hiddenStates;
    let dims = inputDimensions;
    for (const stage of this.layers) [h, dims] = stage.forward(h, dims);
    return h;
  }
}

/** SwinModel (add_pooling_layer true): pixel_values [B, C, H, W] -> [last_hidden_state [B, tokens, features], pooler_output [B, features]]. */
export class SwinModel extends nn.Module {
  constructor(config = {}) {
    super();
    const c = swinConfig('SwinModel', config);
    this.config = c;
    this.num_features = Math.trunc(c.embed_dim * 2 ** (c.depths.length - 1));
    this.embeddings = new SwinEmbeddings(c);
    const grid = [Math.floor(c.image_size / c.patch_size), Math.floor(c.image_size / c.patch_size)];
    this.encoder = new SwinEncoder(c, grid);
    this.layernorm = new nn.LayerNorm(this.num_features, { eps: c.layer_norm_eps });
    this.pooler = new nn.AdaptiveAvgPool1d(1);
  }

  forward(pixelValues) {
    const [embeddingOutput, inputDimensions] = this.embeddings.forward(pixelValues);
    const sequenceOutput = this.layernorm.forward(this.encoder.forward(embeddingOutput, inputDimensions));
    const pooledOutput = this.pooler.forward(sequenceOutput.transpose(1, 2)).flatten(1);
    return [sequenceOutput, pooledOutput];
  }
}

/** SwinForImageClassification: the classifier over SwinModel's pooler_output -> logits [B, num_labels]. */
export class SwinForImageClassification extends nn.Module {
  constructor(config = {}) {
    super();
    const c = swinConfig('SwinForImageClassification', config);
    this.swin = new SwinModel(c);
    this.classifier = new nn.Linear(this.swin.num_features, c.num_labels);
  }

  forward(pixelValues) {
    return this.classifier.forward(this.swin.forward(pixelValues)[1]);
  }
}
