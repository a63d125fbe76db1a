// om.nn modules of the indexing and resampling family: Embedding (a lookup table of rows),
// EmbeddingBag (its rows summed, averaged or maxed per bag) and Upsample (interpolate as a module), PixelShuffle and PixelUnshuffle, in PyTorch's shape and names.
import { invalid } from '../errors.js';
import { randn, tensor, optionsArg } from '../tensor.js';
import { describe, toI32, toBool } from '../convert.js';
import { Module } from './module.js';
import { embedding, embeddingBag, interpolate } from '../ops/index.js';
import { pixelShuffle, pixelUnshuffle } from '../ops/sort.js';


/**
 * A table of numEmbeddings rows of embeddingDim values, read by int64 indices, as PyTorch's
 * nn.Embedding: weight [numEmbeddings, embeddingDim] from the standard normal (om.manualSeed),
 * with row paddingIdx (negative counts from the end) zeroed and kept out of the gradient.
 */
export class Embedding extends Module {
  constructor(numEmbeddings, embeddingDim, options = {}) {
    super();
    const { paddingIdx = null, ...rest } = optionsArg(options, 'Embedding');
    table(this, 'Embedding', numEmbeddings, embeddingDim, paddingIdx, rest);
  }

  /** int64 indices [...] -> [..., embeddingDim]; traces to one Gather on the weight. */
  forward(input) {
    return embedding(input, this.weight, { paddingIdx: this.paddingIdx });
  }
}

/**
 * The fields of Embedding and EmbeddingBag: numEmbeddings, embeddingDim, paddingIdx (non-negative
 * or null) and weight [numEmbeddings, embeddingDim] from the standard normal, its padding row 0.
 * The other options (rest) are PyTorch's unsupported ones: given, they are an error.
 */
function table(m, who, numEmbeddings, embeddingDim, paddingIdx, rest) {
  const num = toI32(numEmbeddings, who, 'numEmbeddings');
  const dim = toI32(embeddingDim, who, 'embeddingDim');
  if (num < 1 || dim < 1) throw invalid(`${who}: numEmbeddings and embeddingDim must be positive, got ${num} and ${dim}`);
  for (const [k, v] of Object.entries(rest)) {
    if (v !== undefined && v !== null && v !== false) throw invalid(`${who}: option ${k} is not supported (got ${describe(v)})`);
  }
  let pad = null;
  if (paddingIdx !== null && paddingIdx !== undefined) {
    pad = toI32(paddingIdx, who, 'paddingIdx');
    if (pad < -num || pad >= num) throw invalid(`${who}: paddingIdx ${pad} must be within [${-num}, ${num - 1}]`);
    if (pad < 0) pad += num;
  }
  m.numEmbeddings = num;
  m.embeddingDim = dim;
  /** The padding row (non-negative), or null. */
  m.paddingIdx = pad;
  /** [numEmbeddings, embeddingDim]. */
  m.weight = initWeight(num, dim, pad);
}

/**
 * PyTorch's nn.EmbeddingBag(numEmbeddings, embeddingDim, { mode = 'mean', includeLastOffset = false,
 * paddingIdx }): weight as Embedding's; forward(input, offsets = null, perSampleWeights = null) is
 * F.embeddingBag: the rows of each bag summed, averaged or maxed -> [bags, embeddingDim].
 */
export class EmbeddingBag extends Module {
  constructor(numEmbeddings, embeddingDim, options = {}) {
    super();
    const who = 'EmbeddingBag';
    const { paddingIdx = null, mode = 'mean', includeLastOffset = false, ...rest } = optionsArg(options, who);
    table(this, who, numEmbeddings, embeddingDim, paddingIdx, rest);
    if (!['sum', 'mean', 'max'].includes(mode)) throw invalid(`${who}: mode has to be one of sum, mean or max, got ${describe(mode)}`);
    this.mode = mode;
    this.includeLastOffset = toBool(includeLastOffset, who, 'includeLastOffset');
  }

  /** input [B, N] (offsets null) or [N] with offsets [B] -> [B, embeddingDim]. */
  forward(input, offsets = null, perSampleWeights = null) {
    return embeddingBag(input, this.weight, offsets, {
      mode: this.mode, perSampleWeights, includeLastOffset: this.includeLastOffset, paddingIdx: this.paddingIdx,
    });
  }
}

function initWeight(num, dim, pad) {
  const r = randn([num, dim]);
  let w = r;
  if (pad !== null) { // PyTorch fills the padding row with (+)0 after the normal init
    try {
      const data = r.toArray();
      data.fill(0, pad * dim, (pad + 1) * dim);
      w = tensor(data, { shape: [num, dim] });
    } finally {
      r.dispose();
    }
  }
  w.requiresGrad = true;
  return w;
}

/** interpolate as a module (PyTorch's nn.Upsample): options { size, scaleFactor, mode, alignCorners, recomputeScaleFactor }. */
export class Upsample extends Module {
  constructor(options = {}) {
    super();
    const o = optionsArg(options, 'Upsample');
    this.size = o.size ?? null;
    this.scaleFactor = o.scaleFactor ?? null;
    this.mode = o.mode ?? 'nearest';
    this.alignCorners = o.alignCorners ?? null;
    this.recomputeScaleFactor = o.recomputeScaleFactor ?? null;
    if ((this.size === null) === (this.scaleFactor === null)) throw invalid('Upsample: give exactly one of size and scaleFactor');
  }

  /** input [N, C, H, W] -> resampled. */
  forward(input) {
    return interpolate(input, {
      size: this.size, scaleFactor: this.scaleFactor, mode: this.mode, alignCorners: this.alignCorners,
      recomputeScaleFactor: this.recomputeScaleFactor,
    });
  }
}

/** pixelShuffle as a module (PyTorch's nn.PixelShuffle): [..., C r^2, H, W] -> [..., C, H r, W r]. */
export class PixelShuffle extends Module {
  constructor(upscaleFactor) {
    super();
    this.upscaleFactor = upscaleFactor;
  }

  forward(input) { return pixelShuffle(input, this.upscaleFactor); }
}

/** pixelUnshuffle as a module (PyTorch's nn.PixelUnshuffle): [..., C, H r, W r] -> [..., C r^2, H, W]. */
export class PixelUnshuffle extends Module {
  constructor(downscaleFactor) {
    super();
    this.downscaleFactor = downscaleFactor;
  }

  forward(input) { return pixelUnshuffle(input, this.downscaleFactor); }
}
