// DETR's sine position embedding (Hugging Face transformers' DetrSinePositionEmbedding,
// modeling_detr.py) ported to onemodel as a user ports it: the position of every pixel of a feature
// map computed at run time from its pixel mask (1 where the image is, 0 where the batch padded it),
// so the embedding holds for any height and width and any padding, with no table.
//
// y and x are the running counts of kept pixels down and across (`cumsum` of the mask), normalized
// by the last row's / column's count (`y_embed / (y_embed[:, -1:, :] + 1e-6) * scale`), divided by
// `temperature ** (2 * floor(i / 2) / embedding_dim)` for channel i, then sin on the even channels
// and cos on the odd ones, interleaved (`stack(..., dim=4).flatten(3)`); y's channels first.
//
//   const pos = new DetrSinePositionEmbedding(16, 10000, true);   // DETR builds it with d_model / 2, normalize
//   const p = pos.forward(featureMap, pixelMask);                   // [batch, 32, height, width]
import * as om from 'onemodel';

const nn = om.nn;

/** DetrSinePositionEmbedding(embedding_dim = 64, temperature = 10000, normalize = false, scale = null): no parameters. */
export class DetrSinePositionEmbedding extends nn.Module {
  constructor(embeddingDim = 64, temperature = 10000, normalize = false, scale = null) {
    super();
    this.embedding_dim = embeddingDim;
    this.temperature = temperature;
    this.normalize = normalize;
    if (scale !== null && normalize === false) throw new Error('DetrSinePositionEmbedding: normalize should be True if scale is passed');
    this.scale = scale ?? 2 * Math.PI;
  }

  /** pixel_values [batch, channels, height, width] (unused: upstream reads its device), pixel_mask [batch, height, width] -> [batch, 2 * embedding_dim, height, width]. */
  forward(pixelValues, pixelMask) {
    if (pixelMask === null || pixelMask === undefined) throw new Error('DetrSinePositionEmbedding: No pixel mask provided');
    // cumsum(1, dtype=torch.float32): counts of 0/1 are exact integers either way, so summed then cast
    let yEmbed = pixelMask.cumsum(1).float();
    let xEmbed = pixelMask.cumsum(2).float();
    if (this.normalize) {
      yEmbed = yEmbed.div(yEmbed.slice(1, -1).add(1e-6)).mul(this.scale);
      xEmbed = xEmbed.div(xEmbed.slice(2, -1).add(1e-6)).mul(this.scale);
    }
    // temperature ** (2 * floor(i / 2) / embedding_dim), in float32 as upstream's tensor power
    let dimT = om.arange(this.embedding_dim, { dtype: 'int64' }).float();
    dimT = om.pow(this.temperature, om.div(dimT, 2, { roundingMode: 'floor' }).mul(2).div(this.embedding_dim));
    const interleave = (pos) => om.stack([pos.slice(3, 0, null, 2).sin(), pos.slice(3, 1, null, 2).cos()], 4).flatten(3);
    const posX = interleave(xEmbed.unsqueeze(3).div(dimT));
    const posY = interleave(yEmbed.unsqueeze(3).div(dimT));
    return om.cat([posY, posX], 3).permute(0, 3, 1, 2);
  }
}
