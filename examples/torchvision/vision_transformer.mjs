// torchvision 0.14's Vision Transformer (models/vision_transformer.py) ported to om.nn: MLPBlock,
// EncoderBlock, Encoder, ConvStemConfig and VisionTransformer with torchvision's constructor
// arguments and field names (its state dicts load as they are: named Sequentials for the encoder
// layers and the heads), and the builders vit_b_16 ... vit_h_14 (image size 224 by default).
//
//   const net = vit_b_16({ numClasses: 10 }).eval();
//
// torchvision asserts the image size, so a trace has a symbolic batch only. Weights start from
// om.nn's default initialisation. (MLPBlock's loading of version-1 checkpoints, with keys
// linear_1 / linear_2, is not ported: checkpoints torchvision 0.12 and later write load as they are.)
import * as om from 'onemodel';
import { invalidConfig, makeLayer, optionsOf } from './_utils.mjs';

const nn = om.nn;

/** Transformer MLP block: Linear, GELU, Dropout, Linear, Dropout (torchvision.ops.MLP). */
export class MLPBlock extends nn.MLP {
  constructor(inDim, mlpDim, dropout) {
    super(inDim, [mlpDim, inDim], { activationLayer: nn.GELU, dropout });
  }
}

/** torchvision's default norm_layer: LayerNorm with eps 1e-6. */
const layerNorm6 = (c) => new nn.LayerNorm(c, { eps: 1e-6 });

/** Pre-norm self-attention and MLP, each with a residual. */
export class EncoderBlock extends nn.Module {
  constructor(numHeads, hiddenDim, mlpDim, dropout, attentionDropout, normLayer = layerNorm6) {
    super();
    this.numHeads = numHeads;
    this.ln_1 = makeLayer(normLayer, hiddenDim); // attention block
    this.self_attention = new nn.MultiheadAttention(hiddenDim, numHeads, { dropout: attentionDropout, batchFirst: true });
    this.dropout = new nn.Dropout(dropout);
    this.ln_2 = makeLayer(normLayer, hiddenDim); // MLP block
    this.mlp = new MLPBlock(hiddenDim, mlpDim, dropout);
  }

  forward(input) {
    if (input.shape.length !== 3) throw invalidConfig(`Expected (batch_size, seq_length, hidden_dim) got [${input.shape}]`);
    let x = this.ln_1.forward(input);
    [x] = this.self_attention.forward(x, x, x, { needWeights: false });
    x = this.dropout.forward(x).add(input);
    return x.add(this.mlp.forward(this.ln_2.forward(x)));
  }
}

/** The learned position embedding, the encoder blocks (named encoder_layer_0, ...) and a final LayerNorm. */
export class Encoder extends nn.Module {
  constructor(seqLength, numLayers, numHeads, hiddenDim, mlpDim, dropout, attentionDropout, normLayer = layerNorm6) {
    super();
    this.pos_embedding = om.tidy(() => om.randn([1, seqLength, hiddenDim]).mul(0.02)); // from BERT
    this.pos_embedding.requiresGrad = true;
    this.dropout = new nn.Dropout(dropout);
    const layers = new Map();
    for (let i = 0; i < numLayers; i++) {
      layers.set(`encoder_layer_${i}`, new EncoderBlock(numHeads, hiddenDim, mlpDim, dropout, attentionDropout, normLayer));
    }
    this.layers = new nn.Sequential(layers);
    this.ln = makeLayer(normLayer, hiddenDim);
  }

  forward(input) {
    if (input.shape.length !== 3) throw invalidConfig(`Expected (batch_size, seq_length, hidden_dim) got [${input.shape}]`);
    return this.ln.forward(this.layers.forward(this.dropout.forward(input.add(this.pos_embedding))));
  }
}

/** One convolution of a convolutional stem (torchvision's ConvStemConfig). */
export class ConvStemConfig {
  constructor(outChannels, kernelSize, stride, normLayer = nn.BatchNorm2d, activationLayer = nn.ReLU) {
    Object.assign(this, { outChannels, kernelSize, stride, normLayer, activationLayer });
  }
}

/**
 * torchvision's VisionTransformer(image_size, patch_size, num_layers, num_heads, hidden_dim,
 * mlp_dim, dropout, attention_dropout, num_classes, representation_size, norm_layer,
 * conv_stem_configs): new VisionTransformer(imageSize, patchSize, numLayers, numHeads, hiddenDim,
 * mlpDim, { dropout = 0, attentionDropout = 0, numClasses = 1000, representationSize = null,
 * normLayer = LayerNorm(eps 1e-6), convStemConfigs = null }). [N, 3, imageSize, imageSize] -> [N, numClasses].
 */
export class VisionTransformer extends nn.Module {
  constructor(imageSize, patchSize, numLayers, numHeads, hiddenDim, mlpDim, options) {
    super();
    const o = optionsOf(options, 'VisionTransformer',
      ['dropout', 'attentionDropout', 'numClasses', 'representationSize', 'normLayer', 'convStemConfigs']);
    const { dropout = 0.0, attentionDropout = 0.0, numClasses = 1000, representationSize = null, convStemConfigs = null } = o;
    const normLayer = o.normLayer ?? layerNorm6;
    if (imageSize % patchSize !== 0) throw invalidConfig('Input shape indivisible by patch size!');
    Object.assign(this, { imageSize, patchSize, hiddenDim, mlpDim, attentionDropout, dropout, numClasses, representationSize });
    if (convStemConfigs !== null) {
      // As per https://arxiv.org/abs/2106.14881
      const seqProj = new nn.Sequential();
      let prevChannels = 3;
      convStemConfigs.forEach((cfg, i) => {
        seqProj.addModule(`conv_bn_relu_${i}`, new nn.Conv2dNormActivation(prevChannels, cfg.outChannels, cfg.kernelSize, {
          stride: cfg.stride, normLayer: cfg.normLayer, activationLayer: cfg.activationLayer,
        }));
        prevChannels = cfg.outChannels;
      });
      seqProj.addModule('conv_last', new nn.Conv2d(prevChannels, hiddenDim, 1));
      this.conv_proj = seqProj;
    } else {
      this.conv_proj = new nn.Conv2d(3, hiddenDim, patchSize, { stride: patchSize });
    }
    let seqLength = (imageSize / patchSize) ** 2;
    this.class_token = om.zeros([1, 1, hiddenDim]); // add a class token
    this.class_token.requiresGrad = true;
    seqLength += 1;
    this.encoder = new Encoder(seqLength, numLayers, numHeads, hiddenDim, mlpDim, dropout, attentionDropout, normLayer);
    this.seqLength = seqLength;
    const heads = representationSize === null
      ? [['head', new nn.Linear(hiddenDim, numClasses)]]
      : [['pre_logits', new nn.Linear(hiddenDim, representationSize)], ['act', new nn.Tanh()], ['head', new nn.Linear(representationSize, numClasses)]];
    this.heads = new nn.Sequential(new Map(heads));
  }

  /** [N, 3, H, W] -> [N, (H / p) * (W / p), hiddenDim]: the patches' embeddings. */
  _processInput(x) {
    const [n, , h, w] = x.shape;
    const p = this.patchSize;
    if (h !== this.imageSize) throw invalidConfig(`Wrong image height! Expected ${this.imageSize} but got ${h}!`);
    if (w !== this.imageSize) throw invalidConfig(`Wrong image width! Expected ${this.imageSize} but got ${w}!`);
    const nH = Math.floor(h / p), nW = Math.floor(w / p);
    // (n, c, h, w) -> (n, hidden_dim, n_h, n_w) -> (n, hidden_dim, (n_h * n_w)) -> (n, (n_h * n_w), hidden_dim)
    return this.conv_proj.forward(x).reshape(n, this.hiddenDim, nH * nW).permute(0, 2, 1);
  }

  forward(input) {
    const x = this._processInput(input);
    const n = x.shape[0];
    const batchClassToken = this.class_token.expand(n, -1, -1); // expand the class token to the full batch
    const y = this.encoder.forward(om.cat([batchClassToken, x], 1));
    return this.heads.forward(y.select(1, 0)); // classifier "token" as used by standard language architectures
  }
}

/** torchvision's builders (image size 224 unless options.imageSize); the other options as VisionTransformer's. */
const builder = (patchSize, numLayers, numHeads, hiddenDim, mlpDim) => ({ imageSize = 224, ...options } = {}) =>
  new VisionTransformer(imageSize, patchSize, numLayers, numHeads, hiddenDim, mlpDim, options);

export const vit_b_16 = builder(16, 12, 12, 768, 3072);
export const vit_b_32 = builder(32, 12, 12, 768, 3072);
export const vit_l_16 = builder(16, 24, 16, 1024, 4096);
export const vit_l_32 = builder(32, 24, 16, 1024, 4096);
export const vit_h_14 = builder(14, 32, 16, 1280, 5120);
