// Depth Anything (Hugging Face transformers' DepthAnythingForDepthEstimation,
// modeling_depth_anything.py, eval mode; Depth Anything V2's checkpoints use the same code) ported to
// onemodel as a user ports it: a DINOv2 backbone (examples/transformers/dinov2.mjs's
// Dinov2Backbone), the DPT-style neck and the depth head, with upstream's module names, so a
// checkpoint's state dict (`backbone.embeddings.position_embeddings`,
// `backbone.encoder.layer.0.attention.attention.query.weight`, `backbone.layernorm.weight`,
// `neck.reassemble_stage.layers.0.projection.weight`, `neck.reassemble_stage.layers.0.resize.weight`,
// `neck.convs.0.weight`, `neck.fusion_stage.layers.0.residual_layer1.convolution1.weight`,
// `head.conv1.weight` ...) loads with a strict loadStateDict.
//
// The backbone returns the tokens of the layers out_indices names, through its final layernorm. The
// neck's reassemble stage drops each one's CLS token, reshapes the patch tokens to a map
// [batch, channels, H // patch, W // patch], projects it (1 x 1 conv) and resizes it by its factor
// (a ConvTranspose2d of kernel and stride factor above 1, the identity at 1, a 3 x 3 conv of stride
// int(1 / factor) below); a 3 x 3 conv brings each to fusion_hidden_size. The fusion stage starts
// from the deepest map: residual conv units, a bilinear interpolate (align_corners=True) to the next
// map's size, or by scale_factor 2 after the last, and a 1 x 1 conv, each layer adding the next map
// (through its first residual unit). The head convolves the last fused map, interpolates it
// bilinearly to (H // patch * patch, W // patch * patch) and ends in ReLU (relative depth) or a
// sigmoid times max_depth (metric). Every size comes from the image's, so a traced graph takes
// symbolic batch, height and width (from one patch up).
//
//   const net = new DepthAnythingForDepthEstimation(config).eval();   // config.json's fields
//   const depth = net.forward(pixelValues);    // [batch, 3, H, W] -> [batch, H // 14 * 14, W // 14 * 14]
import * as om from 'onemodel';
import { Dinov2Backbone } from './dinov2.mjs';

const nn = om.nn;

/**
 * DepthAnythingConfig's defaults (depth-anything-small): the backbone a DINOv2 of image_size 518,
 * hidden 384, 6 heads, out_indices [9, 10, 11, 12], layernorm applied, tokens not reshaped.
 */
export const DEPTH_ANYTHING_DEFAULTS = {
  backbone_config: { model_type: 'dinov2', image_size: 518, hidden_size: 384, num_attention_heads: 6, out_indices: [9, 10, 11, 12], apply_layernorm: true, reshape_hidden_states: false },
  patch_size: 14, reassemble_hidden_size: 384, reassemble_factors: [4, 2, 1, 0.5], neck_hidden_sizes: [48, 96, 192, 384],
  fusion_hidden_size: 64, head_in_index: -1, head_hidden_size: 32, depth_estimation_type: 'relative', max_depth: null,
};

/** A 1 x 1 projection to `channels`, then resized by `factor`: forward([batch, reassemble_hidden_size, h, w]). */
export class DepthAnythingReassembleLayer extends nn.Module {
  constructor(config, channels, factor) {
    super();
    this.projection = new nn.Conv2d(config.reassemble_hidden_size, channels, 1);
    // up/down sampling depending on factor
    if (factor > 1) this.resize = new nn.ConvTranspose2d(channels, channels, factor, { stride: factor, padding: 0 });
    else if (factor === 1) this.resize = new nn.Identity();
    else this.resize = new nn.Conv2d(channels, channels, 3, { stride: Math.trunc(1 / factor), padding: 1 });
  }

  forward(hiddenState) {
    return this.resize.forward(this.projection.forward(hiddenState));
  }
}

/** The backbone's token states [batch, 1 + ph * pw, hidden] -> maps [batch, channels_i, ...] at each layer's resolution. */
export class DepthAnythingReassembleStage extends nn.Module {
  constructor(config) {
    super();
    this.layers = new nn.ModuleList(config.neck_hidden_sizes.map((channels, i) => new DepthAnythingReassembleLayer(config, channels, config.reassemble_factors[i])));
  }

  forward(hiddenStates, patchHeight, patchWidth) {
    return hiddenStates.map((hiddenState, i) => {
      // reshape to (batch_size, num_channels, height, width)
      const h = hiddenState.slice(1, 1);
      const [batchSize, , numChannels] = h.shape;
      return this.layers[i].forward(h.reshape(batchSize, patchHeight, patchWidth, numChannels).permute(0, 3, 1, 2).contiguous());
    });
  }
}

/** ResidualConvUnit, pre-activated: x + conv2(relu(conv1(relu(x)))), 3 x 3 convs of fusion_hidden_size. */
export class DepthAnythingPreActResidualLayer extends nn.Module {
  constructor(config) {
    super();
    const f = config.fusion_hidden_size;
    this.activation1 = new nn.ReLU();
    this.convolution1 = new nn.Conv2d(f, f, 3, { stride: 1, padding: 1, bias: true });
    this.activation2 = new nn.ReLU();
    this.convolution2 = new nn.Conv2d(f, f, 3, { stride: 1, padding: 1, bias: true });
  }

  forward(hiddenState) {
    const residual = hiddenState;
    let h = this.convolution1.forward(this.activation1.forward(hiddenState));
    h = this.convolution2.forward(this.activation2.forward(h));
    return h.add(residual);
  }
}

/**
 * forward(hidden_state, residual = null, size = null): adds residual_layer1(residual) (the residual
 * resized to hidden_state's size first where their shapes differ), residual_layer2, then a bilinear
 * interpolate (align_corners=True) to size, or by 2 without one, and a 1 x 1 projection.
 */
export class DepthAnythingFeatureFusionLayer extends nn.Module {
  constructor(config) {
    super();
    const f = config.fusion_hidden_size;
    this.projection = new nn.Conv2d(f, f, 1, { bias: true });
    this.residual_layer1 = new DepthAnythingPreActResidualLayer(config);
    this.residual_layer2 = new DepthAnythingPreActResidualLayer(config);
  }

  forward(hiddenState, residual = null, size = null) {
    let h = hiddenState;
    if (residual !== null) {
      let r = residual;
      if (h.shape.join() !== r.shape.join()) { // hidden_state.shape != residual.shape
        r = nn.functional.interpolate(r, { size: [h.shape[2], h.shape[3]], mode: 'bilinear', alignCorners: false });
      }
      h = h.add(this.residual_layer1.forward(r));
    }
    h = this.residual_layer2.forward(h);
    const modifier = size === null ? { scaleFactor: 2 } : { size };
    h = nn.functional.interpolate(h, { ...modifier, mode: 'bilinear', alignCorners: true });
    return this.projection.forward(h);
  }
}

/** One fusion layer per map, from the deepest (the last) up: forward(maps) -> the fused maps, the finest last. */
export class DepthAnythingFeatureFusionStage extends nn.Module {
  constructor(config) {
    super();
    this.layers = new nn.ModuleList(config.neck_hidden_sizes.map(() => new DepthAnythingFeatureFusionLayer(config)));
  }

  forward(hiddenStates) {
    // reversing the hidden_states, we start from the last
    const reversed = [...hiddenStates].reverse();
    const fusedHiddenStates = [];
    let fused = null;
    for (const [idx, hiddenState] of reversed.entries()) {
      const size = idx !== reversed.length - 1 ? reversed[idx + 1].shape.slice(2) : null;
      // the first layer only uses the last hidden state
      fused = fused === null ? this.layers[idx].forward(hiddenState, null, size) : this.layers[idx].forward(fused, hiddenState, size);
      fusedHiddenStates.push(fused);
    }
    return fusedHiddenStates;
  }
}

/** The reassemble stage, a 3 x 3 conv per map to fusion_hidden_size (no bias), the fusion stage. */
export class DepthAnythingNeck extends nn.Module {
  constructor(config) {
    super();
    this.reassemble_stage = new DepthAnythingReassembleStage(config);
    this.convs = new nn.ModuleList(config.neck_hidden_sizes.map((channels) => new nn.Conv2d(channels, config.fusion_hidden_size, 3, { padding: 1, bias: false })));
    this.fusion_stage = new DepthAnythingFeatureFusionStage(config);
  }

  forward(hiddenStates, patchHeight, patchWidth) {
    if (hiddenStates.length !== this.convs.length) throw new Error('DepthAnythingNeck: The number of hidden states should be equal to the number of neck hidden sizes.');
    const maps = this.reassemble_stage.forward(hiddenStates, patchHeight, patchWidth);
    const features = maps.map((feature, i) => this.convs[i].forward(feature));
    return this.fusion_stage.forward(features);
  }
}

/**
 * conv1 (halving the channels), bilinear (align_corners=True) to the patch grid times patch_size,
 * conv2, ReLU, conv3 to one channel, ReLU (relative) or sigmoid (metric), times max_depth, squeezed:
 * forward(maps, patchHeight, patchWidth) -> [batch, patchHeight * patch_size, patchWidth * patch_size].
 */
export class DepthAnythingDepthEstimationHead extends nn.Module {
  constructor(config) {
    super();
    this.head_in_index = config.head_in_index;
    this.patch_size = config.patch_size;
    const features = config.fusion_hidden_size;
    this.conv1 = new nn.Conv2d(features, Math.floor(features / 2), 3, { stride: 1, padding: 1 });
    this.conv2 = new nn.Conv2d(Math.floor(features / 2), config.head_hidden_size, 3, { stride: 1, padding: 1 });
    this.activation1 = new nn.ReLU();
    this.conv3 = new nn.Conv2d(config.head_hidden_size, 1, 1, { stride: 1, padding: 0 });
    this.activation2 = config.depth_estimation_type === 'relative' ? new nn.ReLU() : new nn.Sigmoid();
    this.max_depth = config.max_depth || 1; // DepthAnythingConfig: max_depth if max_depth else 1
  }

  forward(hiddenStates, patchHeight, patchWidth) {
    let depth = this.conv1.forward(hiddenStates.at(this.head_in_index));
    depth = nn.functional.interpolate(depth, { size: [patchHeight * this.patch_size, patchWidth * this.patch_size], mode: 'bilinear', alignCorners: true });
    depth = this.conv3.forward(this.activation1.forward(this.conv2.forward(depth)));
    return this.activation2.forward(depth).mul(this.max_depth).squeeze(1);
  }
}

/**
 * The config a Depth Anything port reads: DepthAnythingConfig's defaults overridden by config (its
 * backbone_config a DINOv2's, merged over the default backbone's); what upstream or the port refuses,
 * refused before anything is made.
 */
function depthAnythingConfig(config) {
  const who = 'DepthAnythingForDepthEstimation';
  const c = { ...DEPTH_ANYTHING_DEFAULTS, ...config };
  if (config.backbone_config) c.backbone_config = { ...config.backbone_config };
  else c.backbone_config = { ...DEPTH_ANYTHING_DEFAULTS.backbone_config };
  if (c.backbone || c.use_timm_backbone) throw new Error(`${who}: only a backbone_config is ported (a backbone loaded by name or from timm is not)`);
  if (c.backbone_config.model_type !== 'dinov2') throw new Error(`${who}: backbone model_type ${JSON.stringify(c.backbone_config.model_type)} is not ported (only dinov2)`);
  if (!['relative', 'metric'].includes(c.depth_estimation_type)) throw new Error(`${who}: depth_estimation_type must be one of ['relative', 'metric'], got ${JSON.stringify(c.depth_estimation_type)}`);
  if (c.reassemble_factors.length !== c.neck_hidden_sizes.length) {
    throw new Error(`${who}: reassemble_factors (${c.reassemble_factors.length}) and neck_hidden_sizes (${c.neck_hidden_sizes.length}) must be as long as each other`);
  }
  return c;
}

/** forward(pixel_values [batch, num_channels, H, W]) -> predicted_depth [batch, H // patch_size * patch_size, W // patch_size * patch_size]. */
export class DepthAnythingForDepthEstimation extends nn.Module {
  constructor(config = {}) {
    super();
    const c = depthAnythingConfig(config);
    this.backbone = new Dinov2Backbone(c.backbone_config);
    this.neck = new DepthAnythingNeck(c);
    this.head = new DepthAnythingDepthEstimationHead(c);
    this.patch_size = c.patch_size;
  }

  forward(pixelValues) {
    const hiddenStates = this.backbone.forward(pixelValues);
    const [, , height, width] = pixelValues.shape;
    const patchHeight = Math.floor(height / this.patch_size);
    const patchWidth = Math.floor(width / this.patch_size);
    const maps = this.neck.forward(hiddenStates, patchHeight, patchWidth);
    return this.head.forward(maps, patchHeight, patchWidth);
  }
}
