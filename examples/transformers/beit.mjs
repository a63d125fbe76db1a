// BEiT (Hugging Face transformers' BeitModel and BeitForImageClassification, modeling_beit.py, eval
// mode) ported to onemodel as a user ports it: the same modules, names and operations, so a
// checkpoint's state dict (`embeddings.cls_token`, `embeddings.mask_token` (with use_mask_token),
// `embeddings.position_embeddings` (with use_absolute_position_embeddings),
// `embeddings.patch_embeddings.projection.weight`, `encoder.relative_position_bias.relative_position_bias_table`
// (shared) or `encoder.layer.0.attention.attention.relative_position_bias.relative_position_bias_table`,
// `encoder.layer.0.attention.attention.query.weight` (the key has no bias), `encoder.layer.0.lambda_1`,
// `encoder.layer.0.layernorm_before.weight`, `pooler.layernorm.weight` or `layernorm.weight`; a
// classifier's under `beit.` beside `classifier.weight`) loads with a strict loadStateDict.
//
// Any image size: upstream's version with MiDaS v3.1's arbitrary windows. The relative position bias
// table, made for the image_size / patch_size window, is bilinear-interpolated to the window of the
// image (its (2h - 1) x (2w - 1) distances, h x w the patch grid) and indexed by the relative position
// index made for that window (meshgrid of aranges, shifted and scaled in place, written into a zeros
// matrix by slice assignment, the CLS rows and column filled). As upstream, the index is cached per
// window in `relative_position_indices` (a plain object: not state; freed by dispose()), except while a
// trace records (`om.Tracer.active`, as PyTorch code tests `torch.jit.is_tracing()`): the tracer runs
// the model at other sizes, and an index one run cached read by another is state it refuses. Absolute positions, where used,
// are bicubic-interpolated to the patch grid by the patch embeddings. Pre-norm layers scale the
// attention's and the MLP's outputs by lambda_1 and lambda_2 (layer scale) before each residual.
// The pooler is the mean of the patch tokens under a LayerNorm (use_mean_pooling), or the CLS row of
// the final LayerNorm. Upstream's `interpolate_pos_encoding` argument is not ported (the bias already
// follows the image; with absolute positions upstream's interpolated table would be added to the CLS
// token only, at another length than the patches). Every size comes from the image's, so a traced
// graph takes symbolic batch, height and width.
//
//   const net = new BeitForImageClassification({ image_size: 16, patch_size: 4, hidden_size: 32,
//     num_hidden_layers: 2, num_attention_heads: 4, intermediate_size: 64, use_relative_position_bias: true, num_labels: 3 }).eval();
//   const logits = net.forward(pixelValues);   // [batch, 3]
import * as om from 'onemodel';
import { portConfig } from './modeling_utils.mjs';

const nn = om.nn;
const F = nn.functional;

/** BeitConfig's defaults (beit-base) for the fields this port reads. */
export const BEIT_DEFAULTS = {
  hidden_size: 768, num_hidden_layers: 12, num_attention_heads: 12, intermediate_size: 3072, hidden_act: 'gelu',
  layer_norm_eps: 1e-12, image_size: 224, patch_size: 16, num_channels: 3, use_mask_token: false,
  use_absolute_position_embeddings: false, use_relative_position_bias: false, use_shared_relative_position_bias: false,
  layer_scale_init_value: 0.1, drop_path_rate: 0.1, use_mean_pooling: true, num_labels: 2,
};

/** A learned parameter of `shape` filled with `value`. */
function parameter(shape, value = 0) {
  const p = om.full(shape, value);
  p.requiresGrad = true;
  return p;
}

/** The patch projection (Conv2d patch/patch), plus the absolute position table interpolated to the patch grid. */
export class BeitPatchEmbeddings extends nn.Module {
  constructor(config) {
    super();
    const { image_size: imageSize, patch_size: patchSize } = config;
    this.patch_shape = [Math.trunc(imageSize / patchSize), Math.trunc(imageSize / patchSize)];
    this.num_patches = this.patch_shape[0] * this.patch_shape[1];
    this.num_channels = config.num_channels;
    this.projection = new nn.Conv2d(config.num_channels, config.hidden_size, patchSize, { stride: patchSize });
  }

  /** pixel_values [B, C, H, W], the patch rows of the position table [1, patches, hidden] or null -> [[B, h * w, hidden], [h, w]]. */
  forward(pixelValues, positionEmbedding = null) {
    if (pixelValues.shape[1] !== this.num_channels) {
      throw new Error('Make sure that the channel dimension of the pixel values match with the one set in the configuration.');
    }
    let embeddings = this.projection.forward(pixelValues);
    const [, , patchHeight, patchWidth] = embeddings.shape;
    if (positionEmbedding !== null) {
      const table = positionEmbedding.view(1, this.patch_shape[0], this.patch_shape[1], -1).permute(0, 3, 1, 2);
      embeddings = embeddings.add(F.interpolate(table, { size: [patchHeight, patchWidth], mode: 'bicubic' }));
    }
    return [embeddings.flatten(2).transpose(1, 2), [patchHeight, patchWidth]];
  }
}

/** The CLS token before the patch tokens (and the absolute positions, where the config has them). */
export class BeitEmbeddings extends nn.Module {
  constructor(config) {
    super();
    this.cls_token = parameter([1, 1, config.hidden_size]);
    this.mask_token = config.use_mask_token ? parameter([1, 1, config.hidden_size]) : null;
    this.patch_embeddings = new BeitPatchEmbeddings(config);
    this.position_embeddings = config.use_absolute_position_embeddings
      ? parameter([1, this.patch_embeddings.num_patches + 1, config.hidden_size]) : null;
  }

  /** pixel_values -> [B, 1 + h * w, hidden] (bool_masked_pos, which would use mask_token, is not taken). */
  forward(pixelValues) {
    const table = this.position_embeddings;
    const [embeddings] = this.patch_embeddings.forward(pixelValues, table === null ? null : table.slice(1, 1));
    let clsTokens = this.cls_token.expand(embeddings.shape[0], -1, -1);
    if (table !== null) clsTokens = clsTokens.add(table.slice(1, 0, 1));
    return om.cat([clsTokens, embeddings], 1);
  }
}

/**
 * The relative position bias of one window: a table [(2 Wh - 1) (2 Ww - 1) + 3, heads] (the last 3
 * rows: CLS to token, token to CLS, CLS to CLS) for the config's window, resized to any other.
 */
export class BeitRelativePositionBias extends nn.Module {
  constructor(config, windowSize) {
    super();
    this.window_size = windowSize;
    this.num_relative_distance = (2 * windowSize[0] - 1) * (2 * windowSize[1] - 1) + 3;
    this.relative_position_bias_table = parameter([this.num_relative_distance, config.num_attention_heads]);
    this.relative_position_indices = {}; // upstream's dict: one index per window seen, not state
  }

  /** [Wh Ww + 1, Wh Ww + 1] int64: each (query, key) pair's row of the table (MiDaS v3.1's, any window). */
  generateRelativePositionIndex(windowSize) {
    const numRelativeDistance = (2 * windowSize[0] - 1) * (2 * windowSize[1] - 1) + 3;
    const windowArea = windowSize[0] * windowSize[1];
    const grid = om.meshgrid([om.arange(windowSize[0], { dtype: 'int64' }), om.arange(windowSize[1], { dtype: 'int64' })], { indexing: 'ij' });
    const coordsFlatten = om.stack(grid).flatten(1); // 2, Wh*Ww
    // coords_flatten[:, :, None] - coords_flatten[:, None, :], then Wh*Ww, Wh*Ww, 2 (upstream's .contiguous(): a copy
    // except for a 1 x 1 window, where the permuted tensor is contiguous already and the writes below go through the
    // view into the difference, which nothing reads again; clone() copies at every window, so the writes are the same
    // calls at every size and a trace holds from one patch up; with contiguous() it is refused below 8 x 8 pixels)
    const relativeCoords = coordsFlatten.unsqueeze(2).sub(coordsFlatten.unsqueeze(1)).permute(1, 2, 0).clone();
    relativeCoords.select(2, 0).add_(windowSize[0] - 1); // shift to start from 0
    relativeCoords.select(2, 1).add_(windowSize[1] - 1);
    relativeCoords.select(2, 0).mul_(2 * windowSize[1] - 1);
    const relativePositionIndex = om.zeros([windowArea + 1, windowArea + 1], { dtype: relativeCoords.dtype });
    relativePositionIndex.slice(0, 1).slice(1, 1).copy_(relativeCoords.sum(-1)); // [1:, 1:] = ...
    relativePositionIndex.select(0, 0).fill_(numRelativeDistance - 3); // [0, 0:]
    relativePositionIndex.select(1, 0).fill_(numRelativeDistance - 2); // [0:, 0]
    relativePositionIndex.select(0, 0).select(0, 0).fill_(numRelativeDistance - 1); // [0, 0]
    return relativePositionIndex;
  }

  /** windowSize [h, w] (the image's patch grid) -> the bias [1, heads, h w + 1, h w + 1]. */
  forward(windowSize) {
    const oldHeight = 2 * this.window_size[0] - 1;
    const oldWidth = 2 * this.window_size[1] - 1;
    const newHeight = 2 * windowSize[0] - 1;
    const newWidth = 2 * windowSize[1] - 1;
    const oldTable = this.relative_position_bias_table;
    const oldNum = this.num_relative_distance;
    const newNum = newHeight * newWidth + 3;
    // upstream reshapes the distances (height-major) as [width, height]: the same for a square window
    const oldSubTable = oldTable.slice(0, 0, oldNum - 3).reshape(1, oldWidth, oldHeight, -1).permute(0, 3, 1, 2);
    const newSubTable = F.interpolate(oldSubTable, { size: [newHeight, newWidth], mode: 'bilinear' })
      .permute(0, 2, 3, 1).reshape(newNum - 3, -1);
    const newTable = om.cat([newSubTable, oldTable.slice(0, oldNum - 3)], 0);
    // upstream caches the index per window; while a trace records (om.Tracer.active, torch.jit.is_tracing()) it is
    // made afresh: the tracer runs the model at other sizes, and an index cached by one of those runs, read by another
    // at the same window, is state the tracer refuses (SymbolicShape)
    const key = windowSize.join(',');
    let index = this.relative_position_indices[key];
    if (om.Tracer.active) index = this.generateRelativePositionIndex(windowSize);
    else if (index === undefined) index = this.relative_position_indices[key] = this.generateRelativePositionIndex(windowSize);
    const area = windowSize[0] * windowSize[1] + 1;
    const bias = newTable.index([index.view(-1)]).view(area, area, -1);
    return bias.permute(2, 0, 1).contiguous().unsqueeze(0);
  }
}

export class BeitSelfAttention extends nn.Module {
  constructor(config, windowSize = null) {
    super();
    if (config.hidden_size % config.num_attention_heads !== 0) {
      throw new Error(`The hidden size ${config.hidden_size} is not a multiple of the number of attention heads ${config.num_attention_heads}.`);
    }
    this.patch_size = config.patch_size;
    this.num_attention_heads = config.num_attention_heads;
    this.attention_head_size = Math.trunc(config.hidden_size / config.num_attention_heads);
    this.all_head_size = this.num_attention_heads * this.attention_head_size;
    this.query = new nn.Linear(config.hidden_size, this.all_head_size);
    this.key = new nn.Linear(config.hidden_size, this.all_head_size, { bias: false });
    this.value = new nn.Linear(config.hidden_size, this.all_head_size);
    this.relative_position_bias = windowSize ? new BeitRelativePositionBias(config, windowSize) : null;
  }

  transposeForScores(x) {
    return x.view(...x.shape.slice(0, -1), this.num_attention_heads, this.attention_head_size).permute(0, 2, 1, 3);
  }

  /** hidden [B, S, hidden], the shared bias or null, resolution [H, W] (the image's) -> [B, S, hidden]. */
  forward(hiddenStates, relativePositionBias, resolution) {
    const mixedQueryLayer = this.query.forward(hiddenStates);
    const keyLayer = this.transposeForScores(this.key.forward(hiddenStates));
    const valueLayer = this.transposeForScores(this.value.forward(hiddenStates));
    const queryLayer = this.transposeForScores(mixedQueryLayer);
    let scores = queryLayer.matmul(keyLayer.transpose(-1, -2)).div(Math.sqrt(this.attention_head_size));
    if (this.relative_position_bias !== null) {
      const [height, width] = resolution;
      const windowSize = [Math.floor(height / this.patch_size), Math.floor(width / this.patch_size)];
      scores = scores.add(this.relative_position_bias.forward(windowSize));
    }
    if (relativePositionBias !== null) scores = scores.add(relativePositionBias);
    const context = scores.softmax(-1).matmul(valueLayer).permute(0, 2, 1, 3).contiguous();
    return context.view(...context.shape.slice(0, -2), this.all_head_size);
  }
}

/** The attention's output projection (the residual is the layer's, after layer scale). */
export class BeitSelfOutput extends nn.Module {
  constructor(config) {
    super();
    this.dense = new nn.Linear(config.hidden_size, config.hidden_size);
  }

  forward(hiddenStates) {
    return this.dense.forward(hiddenStates);
  }
}

export class BeitAttention extends nn.Module {
  constructor(config, windowSize = null) {
    super();
    this.attention = new BeitSelfAttention(config, windowSize);
    this.output = new BeitSelfOutput(config);
  }

  forward(hiddenStates, relativePositionBias, resolution) {
    return this.output.forward(this.attention.forward(hiddenStates, relativePositionBias, resolution));
  }
}

export class BeitIntermediate extends nn.Module {
  constructor(config) {
    super();
    this.dense = new nn.Linear(config.hidden_size, config.intermediate_size);
    this.intermediate_act_fn = new nn.GELU();
  }

  forward(hiddenStates) {
    return this.intermediate_act_fn.forward(this.dense.forward(hiddenStates));
  }
}

export class BeitOutput extends nn.Module {
  constructor(config) {
    super();
    this.dense = new nn.Linear(config.intermediate_size, config.hidden_size);
  }

  forward(hiddenStates) {
    return this.dense.forward(hiddenStates);
  }
}

/** A pre-norm layer with layer scale: x + lambda_1 * attn(ln(x)), then + lambda_2 * mlp(ln(.)). */
export class BeitLayer extends nn.Module {
  constructor(config, windowSize = null) {
    super();
    this.attention = new BeitAttention(config, windowSize);
    this.intermediate = new BeitIntermediate(config);
    this.output = new BeitOutput(config);
    this.layernorm_before = new nn.LayerNorm(config.hidden_size, { eps: config.layer_norm_eps });
    this.layernorm_after = new nn.LayerNorm(config.hidden_size, { eps: config.layer_norm_eps });
    const initValues = config.layer_scale_init_value;
    this.lambda_1 = initValues > 0 ? parameter([config.hidden_size], initValues) : null;
    this.lambda_2 = initValues > 0 ? parameter([config.hidden_size], initValues) : null;
  }

  forward(hiddenStates, relativePositionBias, resolution) {
    let attentionOutput = this.attention.forward(this.layernorm_before.forward(hiddenStates), relativePositionBias, resolution);
    if (this.lambda_1 !== null) attentionOutput = this.lambda_1.mul(attentionOutput);
    const h = attentionOutput.add(hiddenStates); // drop_path: the identity in eval mode
    let layerOutput = this.output.forward(this.intermediate.forward(this.layernorm_after.forward(h)));
    if (this.lambda_2 !== null) layerOutput = this.lambda_2.mul(layerOutput);
    return layerOutput.add(h);
  }
}

export class BeitEncoder extends nn.Module {
  constructor(config, windowSize) {
    super();
    this.patch_size = config.patch_size;
    this.relative_position_bias = config.use_shared_relative_position_bias ? new BeitRelativePositionBias(config, windowSize) : null;
    this.layer = new nn.ModuleList(Array.from({ length: config.num_hidden_layers },
      () => new BeitLayer(config, config.use_relative_position_bias ? windowSize : null)));
  }

  forward(hiddenStates, resolution) {
    let h = hiddenStates;
    for (const layer of this.layer) {
      const [height, width] = resolution;
      const windowSize = [Math.floor(height / this.patch_size), Math.floor(width / this.patch_size)];
      const bias = this.relative_position_bias === null ? null : this.relative_position_bias.forward(windowSize);
      h = layer.forward(h, bias, resolution);
    }
    return h;
  }
}

/** The mean of the patch tokens under a LayerNorm (use_mean_pooling), else the CLS row. */
export class BeitPooler extends nn.Module {
  constructor(config) {
    super();
    this.layernorm = config.use_mean_pooling ? new nn.LayerNorm(config.hidden_size, { eps: config.layer_norm_eps }) : null;
  }

  forward(hiddenStates) {
    if (this.layernorm !== null) return this.layernorm.forward(hiddenStates.slice(1, 1).mean(1));
    return hiddenStates.select(1, 0);
  }
}

/** The config with BEiT's defaults; what the port does not implement is refused by name. */
function beitConfig(model, config) {
  // drop_path_rate is read by nothing: stochastic depth is the identity in eval mode, the only mode ported
  return portConfig(model, BEIT_DEFAULTS, config, 'hidden_act', 'gelu');
}

/** forward(pixel_values [B, C, H, W]) -> [last_hidden_state [B, 1 + h w, hidden], pooler_output [B, hidden] (or null)]. */
export class BeitModel extends nn.Module {
  constructor(config, addPoolingLayer = true) {
    super();
    const c = beitConfig('BeitModel', config);
    this.embeddings = new BeitEmbeddings(c);
    this.encoder = new BeitEncoder(c, this.embeddings.patch_embeddings.patch_shape);
    this.layernorm = c.use_mean_pooling ? new nn.Identity() : new nn.LayerNorm(c.hidden_size, { eps: c.layer_norm_eps });
    this.pooler = addPoolingLayer ? new BeitPooler(c) : null;
  }

  forward(pixelValues) {
    const embeddingOutput = this.embeddings.forward(pixelValues);
    const sequenceOutput = this.layernorm.forward(this.encoder.forward(embeddingOutput, pixelValues.shape.slice(2)));
    return [sequenceOutput, this.pooler === null ? null : this.pooler.forward(sequenceOutput)];
  }
}

/** forward(pixel_values) -> logits [B, num_labels] of the pooled output. */
export class BeitForImageClassification extends nn.Module {
  constructor(config) {
    super();
    const c = beitConfig('BeitForImageClassification', config);
    this.beit = new BeitModel(c, true);
    this.classifier = c.num_labels > 0 ? new nn.Linear(c.hidden_size, c.num_labels) : new nn.Identity();
  }

  forward(pixelValues) {
    return this.classifier.forward(this.beit.forward(pixelValues)[1]);
  }
}
