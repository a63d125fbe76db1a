// Hugging Face transformers' ViT (modeling_vit.py: ViTEmbeddings, ViTModel,
// ViTForImageClassification, eval mode) ported to onemodel as a user ports it, with
// `interpolate_pos_encoding`: the learned position table is made for the config's image_size; for
// another image size, its patch rows are bicubic-interpolated to the image's patch grid (height //
// patch_size by width // patch_size) and the class row kept. The state dict's keys are upstream's
// (`cls_token`, `position_embeddings`, `patch_embeddings.projection.weight` / `.bias`; a ViTModel's
// under `embeddings.`, `encoder.layer.0.attention.attention.query.weight`, `layernorm.weight`; a
// classifier's under `vit.` beside `classifier.weight`).
// ViTEmbeddings.forward(pixel_values [batch, num_channels, H, W], interpolatePosEncoding = true) ->
// [batch, 1 + (H // patch_size) * (W // patch_size), hidden_size].
//
// transformers has written interpolate_pos_encoding two ways: today's (ViTEmbeddings) resizes to
// size=(H // p, W // p); the first (DINO's code, ViTEmbeddingsScaleFactor) by scale_factor
// ((h0 + 0.1) / sqrt(N), (w0 + 0.1) / sqrt(N)), which gives the same output size but samples at
// other coordinates (PyTorch resamples by the scale given, 1 / scale, not by in / out). A model
// takes either: `new ViTForImageClassification(config, { Embeddings: ViTEmbeddingsScaleFactor })`.
import * as om from 'onemodel';
import { portConfig } from './modeling_utils.mjs';

const nn = om.nn;

/** ViTConfig's defaults (vit-base-patch16-224) for the fields this port reads. */
export const VIT_DEFAULTS = {
  image_size: 224, patch_size: 16, num_channels: 3, hidden_size: 768, num_hidden_layers: 12, num_attention_heads: 12,
  intermediate_size: 3072, hidden_act: 'gelu', layer_norm_eps: 1e-12, qkv_bias: true, num_labels: 2,
};

export class ViTPatchEmbeddings extends nn.Module {
  constructor(config) {
    super();
    this.image_size = config.image_size;
    this.num_channels = config.num_channels;
    this.num_patches = Math.floor(config.image_size / config.patch_size) ** 2;
    this.projection = new nn.Conv2d(config.num_channels, config.hidden_size, config.patch_size, { stride: config.patch_size });
  }

  forward(pixelValues, interpolatePosEncoding = false) {
    const [, numChannels, height, width] = pixelValues.shape;
    if (numChannels !== this.num_channels) {
      throw new Error('ViTPatchEmbeddings: Make sure that the channel dimension of the pixel values match with the one set in the configuration.');
    }
    if (!interpolatePosEncoding && (height !== this.image_size || width !== this.image_size)) {
      throw new Error(`ViTPatchEmbeddings: Input image size (${height}*${width}) doesn't match model (${this.image_size}*${this.image_size}).`);
    }
    return this.projection.forward(pixelValues).flatten(2).transpose(1, 2);
  }
}

export class ViTEmbeddings extends nn.Module {
  constructor(config = {}) {
    super();
    const c = { ...VIT_DEFAULTS, ...config };
    this.cls_token = om.randn([1, 1, c.hidden_size]);
    this.cls_token.requiresGrad = true;
    this.patch_embeddings = new ViTPatchEmbeddings(c);
    this.position_embeddings = om.randn([1, this.patch_embeddings.num_patches + 1, c.hidden_size]);
    this.position_embeddings.requiresGrad = true;
    this.patch_size = c.patch_size;
  }

  /** The position table for embeddings [batch, 1 + patches, dim] of an image height x width. */
  interpolatePosEncoding(embeddings, height, width) {
    const numPatches = embeddings.shape[1] - 1;
    const numPositions = this.position_embeddings.shape[1] - 1;
    // upstream interpolates under torch.jit.is_tracing() too, so that an exported graph holds at
    // other sizes: so does the port while om.Tracer.active (the tracer would otherwise find the
    // square native sizes, where the model takes the table as it is, and refuse the trace)
    if (!om.Tracer.active && numPatches === numPositions && height === width) return this.position_embeddings;
    const classPosEmbed = this.position_embeddings.slice(1, 0, 1);
    let patchPosEmbed = this.position_embeddings.slice(1, 1);
    const dim = embeddings.shape[embeddings.shape.length - 1];
    const newHeight = Math.floor(height / this.patch_size);
    const newWidth = Math.floor(width / this.patch_size);
    const sqrtNumPositions = Math.trunc(numPositions ** 0.5);
    patchPosEmbed = patchPosEmbed.reshape(1, sqrtNumPositions, sqrtNumPositions, dim).permute(0, 3, 1, 2);
    patchPosEmbed = nn.functional.interpolate(patchPosEmbed, { size: [newHeight, newWidth], mode: 'bicubic', alignCorners: false });
    patchPosEmbed = patchPosEmbed.permute(0, 2, 3, 1).view(1, -1, dim);
    return om.cat([classPosEmbed, patchPosEmbed], 1);
  }

  forward(pixelValues, interpolatePosEncoding = true) {
    const [batchSize, , height, width] = pixelValues.shape;
    let embeddings = this.patch_embeddings.forward(pixelValues, interpolatePosEncoding);
    const clsTokens = this.cls_token.expand(batchSize, -1, -1);
    embeddings = om.cat([clsTokens, embeddings], 1);
    if (interpolatePosEncoding) return embeddings.add(this.interpolatePosEncoding(embeddings, height, width));
    return embeddings.add(this.position_embeddings);
  }
}

/**
 * interpolate_pos_encoding as transformers first wrote it (from DINO): the patch rows resized by
 * scale_factor ((h0 + 0.1) / sqrt(N), (w0 + 0.1) / sqrt(N)) ("we add a small number to avoid
 * floating point error in the interpolation"), so the output is h0 x w0 and PyTorch samples the
 * table at (dst + 0.5) * sqrt(N) / (h0 + 0.1) - 0.5. At the native grid of a non-square image it
 * resamples too (by sqrt(N) / (sqrt(N) + 0.1)), where size= is the identity.
 */
export class ViTEmbeddingsScaleFactor extends ViTEmbeddings {
  interpolatePosEncoding(embeddings, height, width) {
    const npatch = embeddings.shape[1] - 1;
    const N = this.position_embeddings.shape[1] - 1;
    if (npatch === N && height === width) return this.position_embeddings;
    // upstream: class_pos_embed = self.position_embeddings[:, 0] (then .unsqueeze(0) in the cat)
    const classPosEmbed = this.position_embeddings.select(1, 0);
    let patchPosEmbed = this.position_embeddings.slice(1, 1);
    const dim = embeddings.shape[embeddings.shape.length - 1];
    let h0 = Math.floor(height / this.patch_size);
    let w0 = Math.floor(width / this.patch_size);
    [h0, w0] = [h0 + 0.1, w0 + 0.1];
    const side = Math.trunc(Math.sqrt(N));
    patchPosEmbed = nn.functional.interpolate(patchPosEmbed.reshape(1, side, side, dim).permute(0, 3, 1, 2), {
      scaleFactor: [h0 / Math.sqrt(N), w0 / Math.sqrt(N)], mode: 'bicubic', alignCorners: false,
    });
    if (Math.trunc(h0) !== patchPosEmbed.shape[2] || Math.trunc(w0) !== patchPosEmbed.shape[3]) {
      throw new Error(`ViTEmbeddings: the interpolated table is ${patchPosEmbed.shape.slice(2).join(' x ')}, not ${Math.trunc(h0)} x ${Math.trunc(w0)}`);
    }
    patchPosEmbed = patchPosEmbed.permute(0, 2, 3, 1).view(1, -1, dim);
    return om.cat([classPosEmbed.unsqueeze(0), patchPosEmbed], 1);
  }
}

/** q, k, v [batch, heads, seq, head_size]; softmax(q k^T / sqrt(head_size)) v, as ViTSelfAttention before eager_attention_forward. */
export class ViTSelfAttention extends nn.Module {
  constructor(config) {
    super();
    this.num_attention_heads = config.num_attention_heads;
    this.attention_head_size = Math.trunc(config.hidden_size / config.num_attention_heads);
    this.all_head_size = this.num_attention_heads * this.attention_head_size;
    this.query = new nn.Linear(config.hidden_size, this.all_head_size, { bias: config.qkv_bias });
    this.key = new nn.Linear(config.hidden_size, this.all_head_size, { bias: config.qkv_bias });
    this.value = new nn.Linear(config.hidden_size, this.all_head_size, { bias: config.qkv_bias });
  }

  transposeForScores(x) {
    return x.view([...x.shape.slice(0, -1), this.num_attention_heads, this.attention_head_size]).permute(0, 2, 1, 3);
  }

  forward(hiddenStates) {
    const mixedQueryLayer = this.query.forward(hiddenStates);
    const keyLayer = this.transposeForScores(this.key.forward(hiddenStates));
    const valueLayer = this.transposeForScores(this.value.forward(hiddenStates));
    const queryLayer = this.transposeForScores(mixedQueryLayer);
    const attentionProbs = queryLayer.matmul(keyLayer.transpose(-1, -2)).div(Math.sqrt(this.attention_head_size)).softmax(-1);
    const contextLayer = attentionProbs.matmul(valueLayer).permute(0, 2, 1, 3).contiguous();
    return contextLayer.view([...contextLayer.shape.slice(0, -2), this.all_head_size]);
  }
}

/** The attention's output projection (the residual is the layer's). */
export class ViTSelfOutput extends nn.Module {
  constructor(config) {
    super();
    this.dense = new nn.Linear(config.hidden_size, config.hidden_size);
  }

  forward(hiddenStates) {
    return this.dense.forward(hiddenStates);
  }
}

export class ViTAttention extends nn.Module {
  constructor(config) {
    super();
    this.attention = new ViTSelfAttention(config);
    this.output = new ViTSelfOutput(config);
  }

  forward(hiddenStates) {
    return this.output.forward(this.attention.forward(hiddenStates));
  }
}

/** dense to intermediate_size, gelu (the erf form: ACT2FN['gelu']). */
export class ViTIntermediate extends nn.Module {
  constructor(config) {
    super();
    this.dense = new nn.Linear(config.hidden_size, config.intermediate_size);
  }

  forward(hiddenStates) {
    return nn.functional.gelu(this.dense.forward(hiddenStates));
  }
}

/** dense back to hidden_size, plus the residual. */
export class ViTOutput extends nn.Module {
  constructor(config) {
    super();
    this.dense = new nn.Linear(config.intermediate_size, config.hidden_size);
  }

  forward(hiddenStates, inputTensor) {
    return this.dense.forward(hiddenStates).add(inputTensor);
  }
}

/** Pre-norm attention and MLP, each with its residual. */
export class ViTLayer extends nn.Module {
  constructor(config) {
    super();
    this.attention = new ViTAttention(config);
    this.intermediate = new ViTIntermediate(config);
    this.output = new ViTOutput(config);
    this.layernorm_before = new nn.LayerNorm(config.hidden_size, { eps: config.layer_norm_eps });
    this.layernorm_after = new nn.LayerNorm(config.hidden_size, { eps: config.layer_norm_eps });
  }

  forward(hiddenStates) {
    const h = this.attention.forward(this.layernorm_before.forward(hiddenStates)).add(hiddenStates);
    return this.output.forward(this.intermediate.forward(this.layernorm_after.forward(h)), h);
  }
}

export class ViTEncoder extends nn.Module {
  constructor(config) {
    super();
    this.layer = new nn.ModuleList(Array.from({ length: config.num_hidden_layers }, () => new ViTLayer(config)));
  }

  forward(hiddenStates) {
    let h = hiddenStates;
    for (const layer of this.layer) h = layer.forward(h);
    return h;
  }
}

/**
 * The config a ViT port reads: ViTConfig's defaults overridden by config; what it does not port,
 * and ViTSelfAttention's error, refused before anything is made.
 */
export function vitConfig(model, config) {
  const c = portConfig(model, VIT_DEFAULTS, config, 'hidden_act', 'gelu');
  if (c.hidden_size % c.num_attention_heads !== 0) {
    throw new Error(`${model}: The hidden size (${c.hidden_size}) is not a multiple of the number of attention heads (${c.num_attention_heads})`);
  }
  return c;
}

/**
 * ViTModel without its pooler (add_pooling_layer=False, as the classifier builds it):
 * forward(pixel_values [batch, 3, H, W]) -> last_hidden_state [batch, 1 + patches, hidden].
 * options.Embeddings: the embeddings class (ViTEmbeddings, or ViTEmbeddingsScaleFactor for the
 * first interpolate_pos_encoding).
 */
export class ViTModel extends nn.Module {
  constructor(config = {}, { Embeddings = ViTEmbeddings } = {}) {
    super();
    const c = vitConfig('ViTModel', config);
    this.embeddings = new Embeddings(c);
    this.encoder = new ViTEncoder(c);
    this.layernorm = new nn.LayerNorm(c.hidden_size, { eps: c.layer_norm_eps });
  }

  forward(pixelValues) {
    return this.layernorm.forward(this.encoder.forward(this.embeddings.forward(pixelValues, true)));
  }
}

/** forward(pixel_values) -> logits [batch, num_labels]: the classifier over the CLS row. */
export class ViTForImageClassification extends nn.Module {
  constructor(config = {}, options = {}) {
    super();
    const c = vitConfig('ViTForImageClassification', config);
    this.vit = new ViTModel(c, options);
    this.classifier = new nn.Linear(c.hidden_size, c.num_labels);
  }

  forward(pixelValues) {
    return this.classifier.forward(this.vit.forward(pixelValues).select(1, 0));
  }
}
