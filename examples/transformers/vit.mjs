// The embeddings of Hugging Face transformers' ViT (ViTEmbeddings, modeling_vit.py) ported to
// onemodel as a user ports them, with `interpolate_pos_encoding`: the learned position table is
// made for the config's image_size; for another image size, its patch rows are bicubic-interpolated
// to the image's patch grid (height // patch_size by width // patch_size) and the class row kept.
// The state dict's keys are upstream's (`cls_token`, `position_embeddings`,
// `patch_embeddings.projection.weight` / `.bias`; a ViTModel's under `embeddings.`).
// forward(pixel_values [batch, num_channels, H, W], interpolatePosEncoding = true) ->
// [batch, 1 + (H // patch_size) * (W // patch_size), hidden_size].
import * as om from 'onemodel';

const nn = om.nn;

/** ViTConfig's defaults (vit-base-patch16-224) for the fields this port reads. */
export const VIT_DEFAULTS = { image_size: 224, patch_size: 16, num_channels: 3, hidden_size: 768 };

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
    // (upstream also interpolates under torch.jit.is_tracing(), so that an exported graph holds at other sizes)
    if (numPatches === numPositions && height === width) return this.position_embeddings;
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
