// DeiT (Hugging Face transformers' DeiTForImageClassificationWithTeacher, modeling_deit.py, eval
// mode) ported to onemodel as a user ports it. Upstream copies ViT's layers ("Copied from
// transformers.models.vit.modeling_vit.ViTLayer with ViT->DeiT"), so the port takes them from
// examples/transformers/vit.mjs and writes DeiT's own parts: the embeddings, which put a
// distillation token after the class token (so the position table has two token rows before its
// patch rows), and the two heads (the class token's and the distillation token's logits,
// averaged). The state dict's keys are upstream's (`deit.embeddings.cls_token`,
// `deit.embeddings.distillation_token`, `deit.embeddings.position_embeddings`,
// `deit.encoder.layer.0.attention.attention.query.weight`, `deit.layernorm.weight`,
// `cls_classifier.weight`, `distillation_classifier.weight`).
//
// With interpolate_pos_encoding the table's patch rows are bicubic-interpolated to size=(H // p,
// W // p); upstream returns the table itself at the native square grid "unless torch.jit traces",
// so that an exported graph holds at every size: the port tests `om.Tracer.active` the same way.
//
//   const net = new DeiTForImageClassificationWithTeacher(config).eval();
//   const logits = net.forward(pixelValues);   // [batch, num_labels], any H, W from one patch up
import * as om from 'onemodel';
import { ViTEncoder, ViTPatchEmbeddings, vitConfig } from './vit.mjs';

const nn = om.nn;

/** A parameter of shape made of zeros, as upstream's nn.Parameter(torch.zeros(...)). */
function zerosParameter(shape) {
  const t = om.zeros(shape);
  t.requiresGrad = true;
  return t;
}

/** The class and distillation tokens before the patch tokens, plus the (interpolated) position table. */
export class DeiTEmbeddings extends nn.Module {
  constructor(config) {
    super();
    this.cls_token = zerosParameter([1, 1, config.hidden_size]);
    this.distillation_token = zerosParameter([1, 1, config.hidden_size]);
    this.patch_embeddings = new ViTPatchEmbeddings(config);
    this.position_embeddings = zerosParameter([1, this.patch_embeddings.num_patches + 2, config.hidden_size]);
    this.patch_size = config.patch_size;
  }

  /** The table for embeddings [batch, 2 + patches, dim] of an image height x width. */
  interpolatePosEncoding(embeddings, height, width) {
    const numPatches = embeddings.shape[1] - 2;
    const numPositions = this.position_embeddings.shape[1] - 2;
    // always interpolate when tracing to ensure the exported model works for dynamic input shapes (upstream)
    if (!om.Tracer.active && numPatches === numPositions && height === width) return this.position_embeddings;
    const classAndDistPosEmbed = this.position_embeddings.slice(1, 0, 2);
    let patchPosEmbed = this.position_embeddings.slice(1, 2);
    const dim = embeddings.shape[embeddings.shape.length - 1];
    const newHeight = Math.floor(height / this.patch_size);
    const newWidth = Math.floor(width / this.patch_size);
    const sqrtNumPositions = Math.trunc(numPositions ** 0.5);
    patchPosEmbed = patchPosEmbed.reshape(1, sqrtNumPositions, sqrtNumPositions, dim).permute(0, 3, 1, 2);
    patchPosEmbed = nn.functional.interpolate(patchPosEmbed, { size: [newHeight, newWidth], mode: 'bicubic', alignCorners: false });
    patchPosEmbed = patchPosEmbed.permute(0, 2, 3, 1).view(1, -1, dim);
    return om.cat([classAndDistPosEmbed, patchPosEmbed], 1);
  }

  forward(pixelValues, interpolatePosEncoding = true) {
    const [, , height, width] = pixelValues.shape;
    let embeddings = this.patch_embeddings.forward(pixelValues, interpolatePosEncoding);
    const [batchSize] = embeddings.shape;
    const clsTokens = this.cls_token.expand(batchSize, -1, -1);
    const distillationTokens = this.distillation_token.expand(batchSize, -1, -1);
    embeddings = om.cat([clsTokens, distillationTokens, embeddings], 1);
    const positionEmbedding = interpolatePosEncoding ? this.interpolatePosEncoding(embeddings, height, width) : this.position_embeddings;
    return embeddings.add(positionEmbedding);
  }
}

/** DeiTModel without its pooler (add_pooling_layer=False): forward(pixel_values) -> last_hidden_state [batch, 2 + patches, hidden]. */
export class DeiTModel extends nn.Module {
  constructor(config = {}) {
    super();
    const c = vitConfig('DeiTModel', config);
    this.embeddings = new DeiTEmbeddings(c);
    this.encoder = new ViTEncoder(c);
    this.layernorm = new nn.LayerNorm(c.hidden_size, { eps: c.layer_norm_eps });
  }

  forward(pixelValues) {
    return this.layernorm.forward(this.encoder.forward(this.embeddings.forward(pixelValues, true)));
  }
}

/** forward(pixel_values) -> logits [batch, num_labels]: (cls_logits + distillation_logits) / 2. */
export class DeiTForImageClassificationWithTeacher extends nn.Module {
  constructor(config = {}) {
    super();
    const c = vitConfig('DeiTForImageClassificationWithTeacher', config);
    this.deit = new DeiTModel(c);
    this.cls_classifier = new nn.Linear(c.hidden_size, c.num_labels);
    this.distillation_classifier = new nn.Linear(c.hidden_size, c.num_labels);
  }

  forward(pixelValues) {
    const sequenceOutput = this.deit.forward(pixelValues);
    const clsLogits = this.cls_classifier.forward(sequenceOutput.select(1, 0));
    const distillationLogits = this.distillation_classifier.forward(sequenceOutput.select(1, 1));
    return clsLogits.add(distillationLogits).div(2);
  }
}
