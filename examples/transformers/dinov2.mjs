// DINOv2 (Hugging Face transformers' Dinov2Model and Dinov2ForImageClassification,
// modeling_dinov2.py, eval mode) ported to onemodel as a user ports it: the same modules, names
// and operations, so a checkpoint's state dict (`embeddings.cls_token`, `embeddings.mask_token`,
// `embeddings.position_embeddings`, `embeddings.patch_embeddings.projection.weight`,
// `encoder.layer.0.attention.attention.query.weight`, `encoder.layer.0.layer_scale1.lambda1`,
// `encoder.layer.0.mlp.fc1.weight` or `.mlp.weights_in.weight`, `layernorm.weight`; a classifier's
// under `dinov2.` beside `classifier.weight`) loads with a strict loadStateDict.
//
// The embeddings are ViT's (examples/transformers/vit.mjs) with DINOv2's mask_token: the position
// table, made for image_size, is bicubic-interpolated to the image's patch grid (height // patch
// by width // patch, passed as size, in float32), and used as it is where the grid is the table's
// and the image square. Pre-norm layers scale the attention's and the FFN's outputs per channel
// (layer scale, lambda1) before each residual; the FFN is a gelu MLP or, with use_swiglu_ffn,
// SwiGLU (silu(x1) * x2 of one projection's two halves). Dinov2Model returns
// [last_hidden_state, pooler_output] (the final layernorm's CLS row); the classifier takes the CLS
// token beside the mean of the patch tokens. Every size comes from the image's, so a traced graph
// takes symbolic batch, height and width (from one patch up).
//
//   const net = new Dinov2Model({ hidden_size: 32, num_hidden_layers: 2, num_attention_heads: 4 }).eval();
//   const [lastHiddenState, pooled] = net.forward(pixelValues);   // [batch, 1 + patches, 32], [batch, 32]
import * as om from 'onemodel';
import { portConfig } from './modeling_utils.mjs';
import { ViTEmbeddings } from './vit.mjs';

const nn = om.nn;

/** Dinov2Config's defaults (dinov2-base) for the fields this port reads. */
export const DINOV2_DEFAULTS = {
  hidden_size: 768, num_hidden_layers: 12, num_attention_heads: 12, mlp_ratio: 4, hidden_act: 'gelu', layer_norm_eps: 1e-6,
  image_size: 224, patch_size: 14, num_channels: 3, qkv_bias: true, layerscale_value: 1.0, drop_path_rate: 0.0,
  use_swiglu_ffn: false, use_mask_token: true, num_labels: 2,
};

/**
 * ViT's embeddings and interpolate_pos_encoding (upstream's is ViT's, adapted from DINO's), with
 * DINOv2's mask_token ([1, hidden], unused without bool_masked_pos, which this port does not take).
 */
export class Dinov2Embeddings extends ViTEmbeddings {
  constructor(config) {
    super(config);
    if (config.use_mask_token) {
      // upstream registers it between cls_token and position_embeddings: moved so the state dict's order is PyTorch's
      const positionEmbeddings = this.position_embeddings;
      delete this.position_embeddings;
      this.mask_token = om.zeros([1, config.hidden_size]);
      this.mask_token.requiresGrad = true;
      this.position_embeddings = positionEmbeddings;
    }
  }
}

/** ViT's self-attention as DINOv2 copies it: q, k, v [batch, heads, seq, head_size], softmax(q k^T * head_size^-0.5) v. */
export class Dinov2SelfAttention extends nn.Module {
  constructor(config) {
    super();
    this.num_attention_heads = config.num_attention_heads;
    this.attention_head_size = Math.trunc(config.hidden_size / config.num_attention_heads);
    this.all_head_size = this.num_attention_heads * this.attention_head_size;
    this.scaling = this.attention_head_size ** -0.5;
    this.query = new nn.Linear(config.hidden_size, this.all_head_size, { bias: config.qkv_bias });
    this.key = new nn.Linear(config.hidden_size, this.all_head_size, { bias: config.qkv_bias });
    this.value = new nn.Linear(config.hidden_size, this.all_head_size, { bias: config.qkv_bias });
  }

  forward(hiddenStates) {
    const newShape = [hiddenStates.shape[0], -1, this.num_attention_heads, this.attention_head_size];
    const key = this.key.forward(hiddenStates).view(newShape).transpose(1, 2);
    const value = this.value.forward(hiddenStates).view(newShape).transpose(1, 2);
    const query = this.query.forward(hiddenStates).view(newShape).transpose(1, 2);
    // eager_attention_forward: scores scaled after the product, softmax in float32
    const attnWeights = query.matmul(key.transpose(-1, -2)).mul(this.scaling).softmax(-1);
    const context = attnWeights.matmul(value).transpose(1, 2).contiguous();
    return context.reshape([...context.shape.slice(0, -2), this.all_head_size]);
  }
}

/** The attention's output projection (the residual is the layer's). */
export class Dinov2SelfOutput extends nn.Module {
  constructor(config) {
    super();
    this.dense = new nn.Linear(config.hidden_size, config.hidden_size);
  }

  forward(hiddenStates) {
    return this.dense.forward(hiddenStates);
  }
}

export class Dinov2Attention extends nn.Module {
  constructor(config) {
    super();
    this.attention = new Dinov2SelfAttention(config);
    this.output = new Dinov2SelfOutput(config);
  }

  forward(hiddenStates) {
    return this.output.forward(this.attention.forward(hiddenStates));
  }
}

/** Layer scale: the input times lambda1 [hidden] (layerscale_value at init). */
export class Dinov2LayerScale extends nn.Module {
  constructor(config) {
    super();
    this.lambda1 = om.full([config.hidden_size], config.layerscale_value);
    this.lambda1.requiresGrad = true;
  }

  forward(hiddenState) {
    return hiddenState.mul(this.lambda1);
  }
}

/** fc1, gelu (the erf form: ACT2FN['gelu']), fc2; hidden int(hidden_size * mlp_ratio). */
export class Dinov2MLP extends nn.Module {
  constructor(config) {
    super();
    const hiddenFeatures = Math.trunc(config.hidden_size * config.mlp_ratio);
    this.fc1 = new nn.Linear(config.hidden_size, hiddenFeatures);
    this.activation = new nn.GELU();
    this.fc2 = new nn.Linear(hiddenFeatures, config.hidden_size);
  }

  forward(hiddenState) {
    return this.fc2.forward(this.activation.forward(this.fc1.forward(hiddenState)));
  }
}

/** SwiGLU: weights_in to two halves of (int(2/3 of hidden_size * mlp_ratio) + 7) // 8 * 8, silu(x1) * x2, weights_out. */
export class Dinov2SwiGLUFFN extends nn.Module {
  constructor(config) {
    super();
    let hiddenFeatures = Math.trunc(config.hidden_size * config.mlp_ratio);
    hiddenFeatures = Math.floor((Math.trunc(hiddenFeatures * 2 / 3) + 7) / 8) * 8;
    this.weights_in = new nn.Linear(config.hidden_size, 2 * hiddenFeatures);
    this.weights_out = new nn.Linear(hiddenFeatures, config.hidden_size);
  }

  forward(hiddenState) {
    const [x1, x2] = this.weights_in.forward(hiddenState).chunk(2, -1);
    return this.weights_out.forward(nn.functional.silu(x1).mul(x2));
  }
}

/**
 * Pre-norm attention and FFN, each output scaled by its layer scale before the residual. Upstream's
 * drop_path is the identity in eval mode (and an nn.Identity at drop_path_rate 0): not ported.
 */
export class Dinov2Layer extends nn.Module {
  constructor(config) {
    super();
    this.norm1 = new nn.LayerNorm(config.hidden_size, { eps: config.layer_norm_eps });
    this.attention = new Dinov2Attention(config);
    this.layer_scale1 = new Dinov2LayerScale(config);
    this.norm2 = new nn.LayerNorm(config.hidden_size, { eps: config.layer_norm_eps });
    this.mlp = config.use_swiglu_ffn ? new Dinov2SwiGLUFFN(config) : new Dinov2MLP(config);
    this.layer_scale2 = new Dinov2LayerScale(config);
  }

  forward(hiddenStates) {
    const h = this.layer_scale1.forward(this.attention.forward(this.norm1.forward(hiddenStates))).add(hiddenStates);
    return this.layer_scale2.forward(this.mlp.forward(this.norm2.forward(h))).add(h);
  }
}

/**
 * forward(hidden_states, outputHiddenStates = false) -> { last_hidden_state, hidden_states } (upstream's
 * BaseModelOutput): hidden_states the input and every layer's output when outputHiddenStates, else null.
 */
export class Dinov2Encoder extends nn.Module {
  constructor(config) {
    super();
    this.layer = new nn.ModuleList(Array.from({ length: config.num_hidden_layers }, () => new Dinov2Layer(config)));
  }

  forward(hiddenStates, outputHiddenStates = false) {
    const allHiddenStates = outputHiddenStates ? [hiddenStates] : null;
    let h = hiddenStates;
    for (const layer of this.layer) {
      h = layer.forward(h);
      allHiddenStates?.push(h);
    }
    return { last_hidden_state: h, hidden_states: allHiddenStates };
  }
}

/**
 * The config a DINOv2 port reads: Dinov2Config's defaults overridden by config; what it does not
 * port, and Dinov2SelfAttention's error, refused before anything is made.
 */
function dinov2Config(model, config) {
  const c = portConfig(model, DINOV2_DEFAULTS, config, 'hidden_act', 'gelu');
  if (c.hidden_size % c.num_attention_heads !== 0) {
    throw new Error(`${model}: The hidden size (${c.hidden_size}) is not a multiple of the number of attention heads (${c.num_attention_heads})`);
  }
  if (c.drop_path_rate !== 0) throw new Error(`${model}: drop_path_rate ${c.drop_path_rate} is not ported (only 0, as at inference)`);
  return c;
}

/** forward(pixel_values [batch, 3, H, W]) -> [last_hidden_state [batch, 1 + patches, hidden], pooler_output [batch, hidden]]. */
export class Dinov2Model extends nn.Module {
  constructor(config = {}) {
    super();
    const c = dinov2Config('Dinov2Model', config);
    this.embeddings = new Dinov2Embeddings(c);
    this.encoder = new Dinov2Encoder(c);
    this.layernorm = new nn.LayerNorm(c.hidden_size, { eps: c.layer_norm_eps });
  }

  forward(pixelValues) {
    const sequenceOutput = this.layernorm.forward(this.encoder.forward(this.embeddings.forward(pixelValues)).last_hidden_state);
    return [sequenceOutput, sequenceOutput.select(1, 0)];
  }
}

/**
 * Dinov2Backbone (upstream's, for DPT-style heads such as Depth Anything's): the hidden states of the
 * stages out_indices names (0 the embeddings' output, "stem"; i layer i's, "stage<i>"), each through
 * the final layernorm when apply_layernorm, and with reshape_hidden_states the patch tokens as a
 * map [batch, hidden, H // patch, W // patch], else the tokens [batch, 1 + patches, hidden] as they
 * are. forward(pixel_values) -> feature_maps (an array, in stage order).
 */
export class Dinov2Backbone extends nn.Module {
  constructor(config = {}) {
    super();
    const c = dinov2Config('Dinov2Backbone', { apply_layernorm: true, reshape_hidden_states: true, ...config });
    const stages = c.num_hidden_layers + 1;
    this.out_indices = c.out_indices ?? [stages - 1]; // BackboneMixin: the last stage by default
    for (const i of this.out_indices) {
      if (!Number.isInteger(i) || i < -stages || i >= stages) throw new Error(`Dinov2Backbone: out_indices ${JSON.stringify(c.out_indices)} must be stages 0 to ${stages - 1}`);
    }
    this.apply_layernorm = c.apply_layernorm;
    this.reshape_hidden_states = c.reshape_hidden_states;
    this.patch_size = c.patch_size;
    this.embeddings = new Dinov2Embeddings(c);
    this.encoder = new Dinov2Encoder(c);
    this.layernorm = new nn.LayerNorm(c.hidden_size, { eps: c.layer_norm_eps });
  }

  forward(pixelValues) {
    const hiddenStates = this.encoder.forward(this.embeddings.forward(pixelValues), true).hidden_states;
    const stages = new Set(this.out_indices.map((i) => (i < 0 ? i + hiddenStates.length : i)));
    const featureMaps = [];
    for (const [stage, hiddenState] of hiddenStates.entries()) {
      if (!stages.has(stage)) continue;
      let h = this.apply_layernorm ? this.layernorm.forward(hiddenState) : hiddenState;
      if (this.reshape_hidden_states) {
        const [batchSize, , height, width] = pixelValues.shape;
        h = h.slice(1, 1).reshape(batchSize, Math.floor(height / this.patch_size), Math.floor(width / this.patch_size), -1);
        h = h.permute(0, 3, 1, 2).contiguous();
      }
      featureMaps.push(h);
    }
    return featureMaps;
  }
}

/** forward(pixel_values) -> logits [batch, num_labels]: a linear layer over the CLS token beside the patch tokens' mean. */
export class Dinov2ForImageClassification extends nn.Module {
  constructor(config = {}) {
    super();
    const c = dinov2Config('Dinov2ForImageClassification', config);
    this.dinov2 = new Dinov2Model(c);
    this.classifier = new nn.Linear(c.hidden_size * 2, c.num_labels);
  }

  forward(pixelValues) {
    const [sequenceOutput] = this.dinov2.forward(pixelValues);
    const clsToken = sequenceOutput.select(1, 0);
    const patchTokens = sequenceOutput.slice(1, 1);
    return this.classifier.forward(om.cat([clsToken, patchTokens.mean(1)], 1));
  }
}
