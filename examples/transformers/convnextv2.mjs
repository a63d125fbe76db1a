// ConvNeXt V2 (Hugging Face transformers' ConvNextV2Model and ConvNextV2ForImageClassification,
// modeling_convnextv2.py, eval mode) ported to onemodel as a user ports it: the same modules, names
// and operations, so a checkpoint's state dict (`embeddings.patch_embeddings.weight`,
// `embeddings.layernorm.weight`, `encoder.stages.0.layers.0.dwconv.weight`,
// `...layers.0.layernorm.weight`, `...layers.0.pwconv1.weight`, `...layers.0.grn.weight` [1, 1, 1, 4C],
// `...layers.0.pwconv2.weight`, `encoder.stages.1.downsampling_layer.0.weight` (its LayerNorm),
// `encoder.stages.1.downsampling_layer.1.weight` (its conv), `layernorm.weight`; a classifier's under
// `convnextv2.` beside `classifier.weight`) loads with a strict loadStateDict.
//
// A block is a depthwise 7 x 7 conv, then channels-last: LayerNorm, pwconv1 (a Linear), gelu, GRN,
// pwconv2, back to channels-first and the residual. GRN (global response normalization) divides each
// channel's 2-norm over height and width by the mean of those norms over the channels (+ 1e-6), and
// returns weight * (x * that) + bias + x. Stochastic depth (drop path) is the identity in eval mode,
// the only mode ported. Every size comes from the image's, so a traced graph takes symbolic batch,
// height and width (from the least size the convolutions take: patch_size * 2 ** (stages - 1)).
//
//   const net = new ConvNextV2ForImageClassification({ hidden_sizes: [8, 16], depths: [1, 2], num_labels: 3 }).eval();
//   const logits = net.forward(pixelValues);   // [batch, 3]
import * as om from 'onemodel';
import { portConfig } from './modeling_utils.mjs';

const nn = om.nn;

/** ConvNextV2Config's defaults (convnextv2-tiny) for the fields this port reads. */
export const CONVNEXTV2_DEFAULTS = {
  num_channels: 3, patch_size: 4, hidden_sizes: [96, 192, 384, 768], depths: [3, 3, 9, 3], hidden_act: 'gelu',
  layer_norm_eps: 1e-12, drop_path_rate: 0.0, num_labels: 2,
};

/** Global response normalization: weight, bias [1, 1, 1, dim] (zeros at init) on channels-last input. */
export class ConvNextV2GRN extends nn.Module {
  constructor(dim) {
    super();
    this.weight = om.zeros([1, 1, 1, dim]);
    this.weight.requiresGrad = true;
    this.bias = om.zeros([1, 1, 1, dim]);
    this.bias.requiresGrad = true;
  }

  forward(hiddenStates) {
    // torch.linalg.vector_norm(x, ord=2, dim=(1, 2), keepdim=True): each channel's norm over height and width
    const globalFeatures = hiddenStates.norm(2, [1, 2], true);
    const normFeatures = globalFeatures.div(globalFeatures.mean(-1, true).add(1e-6));
    return this.weight.mul(hiddenStates.mul(normFeatures)).add(this.bias).add(hiddenStates);
  }
}

/** nn.LayerNorm over channels, on channels-last input or (channels_first) [B, C, H, W] permuted to it and back. */
export class ConvNextV2LayerNorm extends nn.LayerNorm {
  constructor(normalizedShape, { eps = 1e-6, dataFormat = 'channels_last' } = {}) {
    super(normalizedShape, { eps });
    if (dataFormat !== 'channels_last' && dataFormat !== 'channels_first') throw new Error(`Unsupported data format: ${dataFormat}`);
    this.data_format = dataFormat;
  }

  forward(features) {
    if (this.data_format === 'channels_first') return super.forward(features.permute(0, 2, 3, 1)).permute(0, 3, 1, 2);
    return super.forward(features);
  }
}

/** The patchify stem: a patch_size / patch_size conv and a channels-first LayerNorm. */
export class ConvNextV2Embeddings extends nn.Module {
  constructor(config) {
    super();
    this.patch_embeddings = new nn.Conv2d(config.num_channels, config.hidden_sizes[0], config.patch_size, { stride: config.patch_size });
    this.layernorm = new ConvNextV2LayerNorm(config.hidden_sizes[0], { eps: 1e-6, dataFormat: 'channels_first' });
    this.num_channels = config.num_channels;
  }

  forward(pixelValues) {
    if (pixelValues.shape[1] !== this.num_channels) {
      throw new Error('Make sure that the channel dimension of the pixel values match with the one set in the configuration.');
    }
    return this.layernorm.forward(this.patch_embeddings.forward(pixelValues));
  }
}

/** One block (upstream's second form: dwconv, channels-last LayerNorm and Linears, GRN). */
export class ConvNextV2Layer extends nn.Module {
  constructor(config, dim) {
    super();
    this.dwconv = new nn.Conv2d(dim, dim, 7, { padding: 3, groups: dim });
    this.layernorm = new ConvNextV2LayerNorm(dim, { eps: 1e-6 });
    this.pwconv1 = new nn.Linear(dim, 4 * dim);
    this.act = new nn.GELU();
    this.grn = new ConvNextV2GRN(4 * dim);
    this.pwconv2 = new nn.Linear(4 * dim, dim);
  }

  forward(features) {
    const residual = features;
    let x = this.dwconv.forward(features).permute(0, 2, 3, 1); // (b, c, h, w) -> (b, h, w, c)
    x = this.pwconv2.forward(this.grn.forward(this.act.forward(this.pwconv1.forward(this.layernorm.forward(x)))));
    return residual.add(x.permute(0, 3, 1, 2)); // drop_path: the identity in eval mode
  }
}

/** A stage: a LayerNorm and a 2 x 2 conv downsampling where the width or the stride changes, then its blocks. */
export class ConvNextV2Stage extends nn.Module {
  constructor(config, inChannels, outChannels, { kernelSize = 2, stride = 2, depth = 2 } = {}) {
    super();
    this.downsampling_layer = new nn.ModuleList(inChannels !== outChannels || stride > 1
      ? [new ConvNextV2LayerNorm(inChannels, { eps: 1e-6, dataFormat: 'channels_first' }),
        new nn.Conv2d(inChannels, outChannels, kernelSize, { stride })]
      : []);
    this.layers = new nn.ModuleList(Array.from({ length: depth }, () => new ConvNextV2Layer(config, outChannels)));
  }

  forward(features) {
    let x = features;
    for (const layer of this.downsampling_layer) x = layer.forward(x);
    for (const layer of this.layers) x = layer.forward(x);
    return x;
  }
}

export class ConvNextV2Encoder extends nn.Module {
  constructor(config) {
    super();
    let prevChs = config.hidden_sizes[0];
    this.stages = new nn.ModuleList(config.hidden_sizes.map((outChs, i) => {
      const stage = new ConvNextV2Stage(config, prevChs, outChs, { stride: i > 0 ? 2 : 1, depth: config.depths[i] });
      prevChs = outChs;
      return stage;
    }));
  }

  forward(hiddenStates) {
    let x = hiddenStates;
    for (const stage of this.stages) x = stage.forward(x);
    return x;
  }
}

/** The config with ConvNeXt V2's defaults; what the port does not implement is refused by name. */
function convNextV2Config(model, config) {
  const c = portConfig(model, CONVNEXTV2_DEFAULTS, config, 'hidden_act', 'gelu');
  if (c.depths.length !== c.hidden_sizes.length) throw new Error(`${model}: depths and hidden_sizes differ in length (${c.depths.length} != ${c.hidden_sizes.length})`);
  return c;
}

/** forward(pixel_values [batch, C, H, W]) -> [last_hidden_state [batch, C', h, w], pooler_output [batch, C']]. */
export class ConvNextV2Model extends nn.Module {
  constructor(config) {
    super();
    const c = convNextV2Config('ConvNextV2Model', config);
    this.embeddings = new ConvNextV2Embeddings(c);
    this.encoder = new ConvNextV2Encoder(c);
    this.layernorm = new nn.LayerNorm(c.hidden_sizes[c.hidden_sizes.length - 1], { eps: c.layer_norm_eps });
  }

  forward(pixelValues) {
    const lastHiddenState = this.encoder.forward(this.embeddings.forward(pixelValues));
    // global average pooling, (N, C, H, W) -> (N, C)
    return [lastHiddenState, this.layernorm.forward(lastHiddenState.mean([-2, -1]))];
  }
}

/** forward(pixel_values) -> logits [batch, num_labels] of the pooled features. */
export class ConvNextV2ForImageClassification extends nn.Module {
  constructor(config) {
    super();
    const c = convNextV2Config('ConvNextV2ForImageClassification', config);
    this.convnextv2 = new ConvNextV2Model(c);
    this.classifier = c.num_labels > 0 ? new nn.Linear(c.hidden_sizes[c.hidden_sizes.length - 1], c.num_labels) : new nn.Identity();
  }

  forward(pixelValues) {
    return this.classifier.forward(this.convnextv2.forward(pixelValues)[1]);
  }
}
