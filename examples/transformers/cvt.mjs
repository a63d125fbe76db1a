// CvT (Hugging Face transformers' CvtModel and CvtForImageClassification, modeling_cvt.py, eval
// mode) ported to onemodel as a user ports it: the same modules, names and operations, so a
// checkpoint's state dict (`cvt.encoder.stages.0.embedding.convolution_embeddings.projection.weight`,
// `cvt.encoder.stages.0.layers.0.attention.attention.convolution_projection_key.convolution_projection.convolution.weight`,
// its `.normalization.running_mean`, `cvt.encoder.stages.2.cls_token`, `layernorm.weight`,
// `classifier.weight`) loads with a strict loadStateDict.
//
// Each stage embeds its input with a strided convolution and a LayerNorm over the tokens, then its
// layers take the tokens [batch, height * width (+ 1), channels] and, for attention, view them back
// as an image [batch, channels, height, width] from the sizes the stage read off its embedding's
// output: the query, key and value are depthwise convolutions with a BatchNorm of that image (the
// key's and value's strided), flattened to tokens again (the last stage's class token split off
// first by `torch.split([1, height * width])` and put back in front of each). Every size comes from
// the image's, so a traced graph takes symbolic batch, height and width.
//
//   const net = new CvtForImageClassification(config).eval();
//   const logits = net.forward(pixelValues);   // [batch, num_labels]
import * as om from 'onemodel';

const nn = om.nn;

/** CvtConfig's defaults (cvt-13) for the fields this port reads. */
export const CVT_DEFAULTS = {
  num_channels: 3, patch_sizes: [7, 3, 3], patch_stride: [4, 2, 2], patch_padding: [2, 1, 1], embed_dim: [64, 192, 384],
  num_heads: [1, 3, 6], depth: [1, 2, 10], mlp_ratio: [4.0, 4.0, 4.0], qkv_bias: [true, true, true],
  cls_token: [false, false, true], qkv_projection_method: ['dw_bn', 'dw_bn', 'dw_bn'], kernel_qkv: [3, 3, 3],
  padding_kv: [1, 1, 1], stride_kv: [2, 2, 2], padding_q: [1, 1, 1], stride_q: [1, 1, 1], drop_path_rate: [0.0, 0.0, 0.1],
  num_labels: 1000,
};

/** The strided projection, then a LayerNorm over each token's channels ("b c h w -> b (h w) c" and back). */
export class CvtConvEmbeddings extends nn.Module {
  constructor(patchSize, numChannels, embedDim, stride, padding) {
    super();
    this.projection = new nn.Conv2d(numChannels, embedDim, patchSize, { stride, padding });
    this.normalization = new nn.LayerNorm(embedDim);
  }

  forward(pixelValues) {
    let x = this.projection.forward(pixelValues);
    const [batchSize, numChannels, height, width] = x.shape;
    x = x.view(batchSize, numChannels, height * width).permute(0, 2, 1);
    x = this.normalization.forward(x);
    return x.permute(0, 2, 1).view(batchSize, numChannels, height, width);
  }
}

export class CvtEmbeddings extends nn.Module {
  constructor(patchSize, numChannels, embedDim, stride, padding) {
    super();
    this.convolution_embeddings = new CvtConvEmbeddings(patchSize, numChannels, embedDim, stride, padding);
  }

  forward(pixelValues) {
    return this.convolution_embeddings.forward(pixelValues); // dropout: the identity in eval
  }
}

/** 'dw_bn': a depthwise convolution without bias, then a BatchNorm (its running statistics in eval). */
export class CvtSelfAttentionConvProjection extends nn.Module {
  constructor(embedDim, kernelSize, padding, stride) {
    super();
    this.convolution = new nn.Conv2d(embedDim, embedDim, kernelSize, { padding, stride, bias: false, groups: embedDim });
    this.normalization = new nn.BatchNorm2d(embedDim);
  }

  forward(hiddenState) {
    return this.normalization.forward(this.convolution.forward(hiddenState));
  }
}

/** "b c h w -> b (h w) c" (no parameters). */
export class CvtSelfAttentionLinearProjection extends nn.Module {
  forward(hiddenState) {
    const [batchSize, numChannels, height, width] = hiddenState.shape;
    return hiddenState.view(batchSize, numChannels, height * width).permute(0, 2, 1);
  }
}

export class CvtSelfAttentionProjection extends nn.Module {
  constructor(embedDim, kernelSize, padding, stride, projectionMethod) {
    super();
    // upstream makes the convolution only for 'dw_bn' and calls it whatever the method: no other one runs
    if (projectionMethod !== 'dw_bn') throw new Error(`CvtSelfAttentionProjection: qkv_projection_method "${projectionMethod}" is not ported (only dw_bn)`);
    this.convolution_projection = new CvtSelfAttentionConvProjection(embedDim, kernelSize, padding, stride);
    this.linear_projection = new CvtSelfAttentionLinearProjection();
  }

  forward(hiddenState) {
    return this.linear_projection.forward(this.convolution_projection.forward(hiddenState));
  }
}

/** Attention over tokens whose q, k, v come from convolutions of the tokens seen as an image height x width. */
export class CvtSelfAttention extends nn.Module {
  constructor(numHeads, embedDim, kernelSize, paddingQ, paddingKv, strideQ, strideKv, qkvProjectionMethod, qkvBias, withClsToken) {
    super();
    this.scale = embedDim ** -0.5;
    this.with_cls_token = withClsToken;
    this.embed_dim = embedDim;
    this.num_heads = numHeads;
    this.convolution_projection_query = new CvtSelfAttentionProjection(embedDim, kernelSize, paddingQ, strideQ, qkvProjectionMethod);
    this.convolution_projection_key = new CvtSelfAttentionProjection(embedDim, kernelSize, paddingKv, strideKv, qkvProjectionMethod);
    this.convolution_projection_value = new CvtSelfAttentionProjection(embedDim, kernelSize, paddingKv, strideKv, qkvProjectionMethod);
    this.projection_query = new nn.Linear(embedDim, embedDim, { bias: qkvBias });
    this.projection_key = new nn.Linear(embedDim, embedDim, { bias: qkvBias });
    this.projection_value = new nn.Linear(embedDim, embedDim, { bias: qkvBias });
  }

  /** 'b t (h d) -> b h t d' */
  rearrangeForMultiHeadAttention(hiddenState) {
    const [batchSize, hiddenSize] = hiddenState.shape;
    const headDim = Math.floor(this.embed_dim / this.num_heads);
    return hiddenState.view(batchSize, hiddenSize, this.num_heads, headDim).permute(0, 2, 1, 3);
  }

  forward(hiddenState, height, width) {
    let clsToken = null;
    if (this.with_cls_token) [clsToken, hiddenState] = om.split(hiddenState, [1, height * width], 1);
    const [batchSize, , numChannels] = hiddenState.shape;
    // "b (h w) c -> b c h w"
    hiddenState = hiddenState.permute(0, 2, 1).view(batchSize, numChannels, height, width);
    let key = this.convolution_projection_key.forward(hiddenState);
    let query = this.convolution_projection_query.forward(hiddenState);
    let value = this.convolution_projection_value.forward(hiddenState);
    if (this.with_cls_token) {
      query = om.cat([clsToken, query], 1);
      key = om.cat([clsToken, key], 1);
      value = om.cat([clsToken, value], 1);
    }
    const headDim = Math.floor(this.embed_dim / this.num_heads);
    query = this.rearrangeForMultiHeadAttention(this.projection_query.forward(query));
    key = this.rearrangeForMultiHeadAttention(this.projection_key.forward(key));
    value = this.rearrangeForMultiHeadAttention(this.projection_value.forward(value));
    const attentionScore = om.einsum('bhlk,bhtk->bhlt', [query, key]).mul(this.scale);
    const attentionProbs = attentionScore.softmax(-1);
    const context = om.einsum('bhlt,bhtv->bhlv', [attentionProbs, value]);
    // "b h t d -> b t (h d)"
    const hiddenSize = context.shape[2];
    return context.permute(0, 2, 1, 3).contiguous().view(batchSize, hiddenSize, this.num_heads * headDim);
  }
}

/** The attention's output projection (the residual is the layer's, as upstream notes). */
export class CvtSelfOutput extends nn.Module {
  constructor(embedDim) {
    super();
    this.dense = new nn.Linear(embedDim, embedDim);
  }

  forward(hiddenState) {
    return this.dense.forward(hiddenState);
  }
}

export class CvtAttention extends nn.Module {
  constructor(numHeads, embedDim, ...rest) {
    super();
    this.attention = new CvtSelfAttention(numHeads, embedDim, ...rest);
    this.output = new CvtSelfOutput(embedDim);
  }

  forward(hiddenState, height, width) {
    return this.output.forward(this.attention.forward(hiddenState, height, width));
  }
}

export class CvtIntermediate extends nn.Module {
  constructor(embedDim, mlpRatio) {
    super();
    this.dense = new nn.Linear(embedDim, Math.trunc(embedDim * mlpRatio));
    this.activation = new nn.GELU();
  }

  forward(hiddenState) {
    return this.activation.forward(this.dense.forward(hiddenState));
  }
}

export class CvtOutput extends nn.Module {
  constructor(embedDim, mlpRatio) {
    super();
    this.dense = new nn.Linear(Math.trunc(embedDim * mlpRatio), embedDim);
  }

  forward(hiddenState, inputTensor) {
    return this.dense.forward(hiddenState).add(inputTensor);
  }
}

/** LayerNorm, attention, residual; LayerNorm, MLP, residual (drop_path: the identity in eval). */
export class CvtLayer extends nn.Module {
  constructor(numHeads, embedDim, kernelSize, paddingQ, paddingKv, strideQ, strideKv, qkvProjectionMethod, qkvBias, mlpRatio, withClsToken) {
    super();
    this.attention = new CvtAttention(numHeads, embedDim, kernelSize, paddingQ, paddingKv, strideQ, strideKv, qkvProjectionMethod, qkvBias, withClsToken);
    this.intermediate = new CvtIntermediate(embedDim, mlpRatio);
    this.output = new CvtOutput(embedDim, mlpRatio);
    this.layernorm_before = new nn.LayerNorm(embedDim);
    this.layernorm_after = new nn.LayerNorm(embedDim);
  }

  forward(hiddenState, height, width) {
    const h = this.attention.forward(this.layernorm_before.forward(hiddenState), height, width).add(hiddenState);
    return this.output.forward(this.intermediate.forward(this.layernorm_after.forward(h)), h);
  }
}

export class CvtStage extends nn.Module {
  constructor(config, stage) {
    super();
    const c = config;
    this.config = c;
    this.stage = stage;
    if (c.cls_token[stage]) {
      this.cls_token = om.randn([1, 1, c.embed_dim[c.embed_dim.length - 1]]);
      this.cls_token.requiresGrad = true;
    }
    this.embedding = new CvtEmbeddings(c.patch_sizes[stage], stage === 0 ? c.num_channels : c.embed_dim[stage - 1], c.embed_dim[stage],
      c.patch_stride[stage], c.patch_padding[stage]);
    this.layers = new nn.Sequential(...Array.from({ length: c.depth[stage] }, () => new CvtLayer(c.num_heads[stage], c.embed_dim[stage],
      c.kernel_qkv[stage], c.padding_q[stage], c.padding_kv[stage], c.stride_q[stage], c.stride_kv[stage], c.qkv_projection_method[stage],
      c.qkv_bias[stage], c.mlp_ratio[stage], c.cls_token[stage])));
  }

  /** hidden_state [batch, c, h, w] -> [hidden_state [batch, embed_dim, h', w'], cls_token [batch, 1, embed_dim] or null]. */
  forward(hiddenState) {
    let clsToken = null;
    let h = this.embedding.forward(hiddenState);
    const [batchSize, numChannels, height, width] = h.shape;
    // "b c h w -> b (h w) c"
    h = h.view(batchSize, numChannels, height * width).permute(0, 2, 1);
    if (this.config.cls_token[this.stage]) {
      clsToken = this.cls_token.expand(batchSize, -1, -1);
      h = om.cat([clsToken, h], 1);
    }
    // upstream iterates the Sequential's layers, passing the sizes: not its forward
    for (const layer of this.layers) h = layer.forward(h, height, width);
    if (this.config.cls_token[this.stage]) [clsToken, h] = om.split(h, [1, height * width], 1);
    h = h.permute(0, 2, 1).view(batchSize, numChannels, height, width);
    return [h, clsToken];
  }
}

export class CvtEncoder extends nn.Module {
  constructor(config) {
    super();
    this.stages = new nn.ModuleList(config.depth.map((_, i) => new CvtStage(config, i)));
  }

  forward(pixelValues) {
    let hiddenState = pixelValues;
    let clsToken = null;
    for (const stage of this.stages) [hiddenState, clsToken] = stage.forward(hiddenState);
    return [hiddenState, clsToken];
  }
}

/** The config a CvT port reads: CvtConfig's defaults overridden by config; what it does not port refused before anything is made. */
function cvtConfig(model, config) {
  const c = { ...CVT_DEFAULTS, ...config };
  for (const m of c.qkv_projection_method) {
    if (m !== 'dw_bn') throw new Error(`${model}: qkv_projection_method "${m}" is not ported (only dw_bn)`);
  }
  return c;
}

/** forward(pixel_values [batch, 3, H, W]) -> [last_hidden_state [batch, C, h, w], cls_token_value [batch, 1, C] or null]. */
export class CvtModel extends nn.Module {
  constructor(config = {}) {
    super();
    this.config = cvtConfig('CvtModel', config);
    this.encoder = new CvtEncoder(this.config);
  }

  forward(pixelValues) {
    return this.encoder.forward(pixelValues);
  }
}

/** forward(pixel_values) -> logits [batch, num_labels]: the last stage's class token (or its tokens' mean) through a LayerNorm. */
export class CvtForImageClassification extends nn.Module {
  constructor(config = {}) {
    super();
    const c = cvtConfig('CvtForImageClassification', config);
    this.config = c;
    this.cvt = new CvtModel(c);
    this.layernorm = new nn.LayerNorm(c.embed_dim[c.embed_dim.length - 1]);
    this.classifier = new nn.Linear(c.embed_dim[c.embed_dim.length - 1], c.num_labels);
  }

  forward(pixelValues) {
    let [sequenceOutput, clsToken] = this.cvt.forward(pixelValues);
    if (this.config.cls_token[this.config.cls_token.length - 1]) {
      sequenceOutput = this.layernorm.forward(clsToken);
    } else {
      const [batchSize, numChannels, height, width] = sequenceOutput.shape;
      sequenceOutput = this.layernorm.forward(sequenceOutput.view(batchSize, numChannels, height * width).permute(0, 2, 1));
    }
    return this.classifier.forward(sequenceOutput.mean(1));
  }
}
