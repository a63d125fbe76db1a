// Hugging Face transformers' ViTMAE (modeling_vit_mae.py: ViTMAEModel, ViTMAEDecoder,
// ViTMAEForPreTraining, eval mode) ported to onemodel as a user ports it. Its embeddings and layers
// are upstream's copies of ViT's, so they are vit.mjs's; what is new is the masking: the patches
// (plus the fixed 2-D sincos table, bicubic-interpolated to the image's patch grid with
// interpolatePosEncoding) are shuffled by the argsort of a noise [batch, L], the first
// int(L * (1 - mask_ratio)) kept; the decoder appends mask tokens, unshuffles by a gather at
// ids_restore and adds its own table (interpolated along the sequence to L).
// The state dict's keys are upstream's (`vit.embeddings.cls_token`, `vit.embeddings.position_embeddings`,
// `vit.encoder.layer.0.attention.attention.query.weight`, `decoder.mask_token`,
// `decoder.decoder_pos_embed`, `decoder.decoder_layers.0.*`, `decoder.decoder_pred.weight` ...).
// ViTMAEForPreTraining.forward(pixel_values [batch, num_channels, H, W], noise [batch, L] (default
// uniform random), interpolatePosEncoding = false) -> [loss (0-d), logits [batch, L, patch_size^2
// num_channels], mask [batch, L] (1 removed), ids_restore [batch, L] int64], L = (H // p) (W // p).
import * as om from 'onemodel';
import { ViTEmbeddings, ViTEncoder, ViTLayer, VIT_DEFAULTS, vitConfig } from './vit.mjs';

const nn = om.nn;

/** ViTMAEConfig's defaults (vit-mae-base) for the fields this port reads. */
export const VIT_MAE_DEFAULTS = {
  ...VIT_DEFAULTS, qkv_bias: true, decoder_num_attention_heads: 16, decoder_hidden_size: 512, decoder_num_hidden_layers: 8,
  decoder_intermediate_size: 2048, mask_ratio: 0.75, norm_pix_loss: false,
};

/** ViT's embeddings with random_masking: forward -> [embeddings [batch, 1 + len_keep, hidden], mask, ids_restore]. */
export class ViTMAEEmbeddings extends ViTEmbeddings {
  constructor(config) {
    super(config);
    this.position_embeddings.requiresGrad = false; // the fixed sin-cos table
    this.mask_ratio = config.mask_ratio;
  }

  /**
   * Per-sample shuffling by argsort of noise [batch, L]: [the kept rows [batch, len_keep, dim], the
   * mask [batch, L] (0 kept, 1 removed), ids_restore [batch, L]].
   */
  randomMasking(sequence, noise = null) {
    const [batchSize, seqLength, dim] = sequence.shape;
    const lenKeep = Math.trunc(seqLength * (1 - this.mask_ratio));
    const idsShuffle = om.argsort(noise ?? om.rand([batchSize, seqLength]), 1); // ascend: small is keep, large is remove
    const idsRestore = om.argsort(idsShuffle, 1);
    const idsKeep = idsShuffle.slice(1, 0, lenKeep);
    const sequenceUnmasked = om.gather(sequence, 1, idsKeep.unsqueeze(-1).repeat(1, 1, dim));
    const mask = om.ones([batchSize, seqLength]);
    mask.slice(1, 0, lenKeep).fill_(0);
    return [sequenceUnmasked, om.gather(mask, 1, idsRestore), idsRestore];
  }

  forward(pixelValues, noise = null, interpolatePosEncoding = false) {
    const [, , height, width] = pixelValues.shape;
    let embeddings = this.patch_embeddings.forward(pixelValues, interpolatePosEncoding);
    // upstream passes the patches without the CLS row, so the table is interpolated at the native size too
    const positionEmbeddings = interpolatePosEncoding ? this.interpolatePosEncoding(embeddings, height, width) : this.position_embeddings;
    embeddings = embeddings.add(positionEmbeddings.slice(1, 1));
    const [kept, mask, idsRestore] = this.randomMasking(embeddings, noise);
    const clsToken = this.cls_token.add(positionEmbeddings.slice(1, 0, 1));
    const clsTokens = clsToken.expand(kept.shape[0], -1, -1);
    return [om.cat([clsTokens, kept], 1), mask, idsRestore];
  }
}

/** The config a ViTMAE port reads (ViT's checks, ViTMAEConfig's defaults). */
function vitMAEConfig(model, config) {
  return vitConfig(model, { ...VIT_MAE_DEFAULTS, ...config });
}

/** forward(pixel_values, noise, interpolatePosEncoding) -> [last_hidden_state [batch, 1 + len_keep, hidden], mask, ids_restore]. */
export class ViTMAEModel extends nn.Module {
  constructor(config = {}) {
    super();
    const c = vitMAEConfig('ViTMAEModel', config);
    this.embeddings = new ViTMAEEmbeddings(c);
    this.encoder = new ViTEncoder(c);
    this.layernorm = new nn.LayerNorm(c.hidden_size, { eps: c.layer_norm_eps });
  }

  forward(pixelValues, noise = null, interpolatePosEncoding = false) {
    const [embeddingOutput, mask, idsRestore] = this.embeddings.forward(pixelValues, noise, interpolatePosEncoding);
    return [this.layernorm.forward(this.encoder.forward(embeddingOutput)), mask, idsRestore];
  }
}

/** The decoder: mask tokens, unshuffle, its table, ViT layers of the decoder's size, the pixel head; the CLS row dropped. */
export class ViTMAEDecoder extends nn.Module {
  constructor(config, numPatches) {
    super();
    this.decoder_embed = new nn.Linear(config.hidden_size, config.decoder_hidden_size);
    this.mask_token = om.zeros([1, 1, config.decoder_hidden_size]);
    this.mask_token.requiresGrad = true;
    this.decoder_pos_embed = om.zeros([1, numPatches + 1, config.decoder_hidden_size]); // fixed sin-cos embedding
    const decoderConfig = {
      ...config, hidden_size: config.decoder_hidden_size, num_hidden_layers: config.decoder_num_hidden_layers,
      num_attention_heads: config.decoder_num_attention_heads, intermediate_size: config.decoder_intermediate_size,
    };
    this.decoder_layers = new nn.ModuleList(Array.from({ length: config.decoder_num_hidden_layers }, () => new ViTLayer(decoderConfig)));
    this.decoder_norm = new nn.LayerNorm(config.decoder_hidden_size, { eps: config.layer_norm_eps });
    this.decoder_pred = new nn.Linear(config.decoder_hidden_size, config.patch_size ** 2 * config.num_channels);
  }

  /** The table's patch rows bicubic-interpolated along the sequence to embeddings' patches (the CLS row kept). */
  interpolatePosEncoding(embeddings) {
    const embeddingsPositions = embeddings.shape[1] - 1;
    const classPosEmbed = this.decoder_pos_embed.slice(1, 0, 1);
    let patchPosEmbed = this.decoder_pos_embed.slice(1, 1);
    const dim = this.decoder_pos_embed.shape[2];
    patchPosEmbed = patchPosEmbed.reshape(1, 1, -1, dim).permute(0, 3, 1, 2);
    patchPosEmbed = nn.functional.interpolate(patchPosEmbed, { size: [patchPosEmbed.shape[2], embeddingsPositions], mode: 'bicubic', alignCorners: false });
    patchPosEmbed = patchPosEmbed.permute(0, 2, 3, 1).view(1, -1, dim);
    return om.cat([classPosEmbed, patchPosEmbed], 1);
  }

  forward(hiddenStates, idsRestore, interpolatePosEncoding = false) {
    let x = this.decoder_embed.forward(hiddenStates);
    const maskTokens = this.mask_token.repeat(x.shape[0], idsRestore.shape[1] + 1 - x.shape[1], 1);
    let x_ = om.cat([x.slice(1, 1), maskTokens], 1); // no cls token
    x_ = om.gather(x_, 1, idsRestore.unsqueeze(-1).repeat(1, 1, x.shape[2])); // unshuffle
    x = om.cat([x.slice(1, 0, 1), x_], 1); // append cls token
    let h = x.add(interpolatePosEncoding ? this.interpolatePosEncoding(x) : this.decoder_pos_embed);
    for (const layer of this.decoder_layers) h = layer.forward(h);
    const logits = this.decoder_pred.forward(this.decoder_norm.forward(h));
    return logits.slice(1, 1);
  }
}

/** ViTMAEModel and the decoder, with the reconstruction loss of the removed patches. */
export class ViTMAEForPreTraining extends nn.Module {
  constructor(config = {}) {
    super();
    const c = vitMAEConfig('ViTMAEForPreTraining', config);
    this.patch_size = c.patch_size;
    this.num_channels = c.num_channels;
    this.norm_pix_loss = c.norm_pix_loss;
    this.vit = new ViTMAEModel(c);
    this.decoder = new ViTMAEDecoder(c, this.vit.embeddings.patch_embeddings.num_patches);
  }

  /** [batch, C, H, W] -> [batch, (H // p) (W // p), p^2 C], each patch's pixels in (row, column, channel) order. */
  patchify(pixelValues) {
    const p = this.patch_size;
    const [batchSize, , height, width] = pixelValues.shape;
    const numPatchesH = Math.floor(height / p);
    const numPatchesW = Math.floor(width / p);
    const x = om.einsum('nchpwq->nhwpqc', pixelValues.reshape(batchSize, this.num_channels, numPatchesH, p, numPatchesW, p));
    return x.reshape(batchSize, numPatchesH * numPatchesW, p ** 2 * this.num_channels);
  }

  /** The mean squared error per patch, averaged over the removed ones. */
  forwardLoss(pixelValues, pred, mask) {
    let target = this.patchify(pixelValues);
    if (this.norm_pix_loss) {
      const mean = target.mean(-1, true);
      const variance = target.var(-1, { keepdim: true });
      target = target.sub(mean).div(variance.add(1.0e-6).pow(0.5));
    }
    const loss = pred.sub(target).pow(2).mean(-1);
    return loss.mul(mask).sum().div(mask.sum());
  }

  forward(pixelValues, noise = null, interpolatePosEncoding = false) {
    const [latent, mask, idsRestore] = this.vit.forward(pixelValues, noise, interpolatePosEncoding);
    const logits = this.decoder.forward(latent, idsRestore, interpolatePosEncoding);
    return [this.forwardLoss(pixelValues, logits, mask), logits, mask, idsRestore];
  }
}
