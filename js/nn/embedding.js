// om.nn modules of the indexing and resampling family: Embedding (a lookup table of rows) and
// Upsample (interpolate as a module), PixelShuffle and PixelUnshuffle, in PyTorch's shape and names.
import { invalid } from '../errors.js';
import { randn, tensor, optionsArg } from '../tensor.js';
import { describe, toI32 } from '../convert.js';
import { Module } from './module.js';
import { embedding, interpolate } from '../ops/index.js';
import { pixelShuffle, pixelUnshuffle } from '../ops/sort.js';


/**
 * A table of numEmbeddings rows of embeddingDim values, read by int64 indices, as PyTorch's
 * nn.Embedding: weight [numEmbeddings, embeddingDim] from the standard normal (om.manualSeed),
 * with row paddingIdx (negative counts from the end) zeroed and kept out of the gradient.
 */
export class Embedding extends Module {
  constructor(numEmbeddings, embeddingDim, options = {}) {
    super();
    const who = 'Embedding';
    const num = toI32(numEmbeddings, who, 'numEmbeddings');
    const dim = toI32(embeddingDim, who, 'embeddingDim');
    if (num < 1 || dim < 1) throw invalid(`${who}: numEmbeddings and embeddingDim must be positive, got ${num} and ${dim}`);
    const { paddingIdx = null, ...rest } = optionsArg(options, who);
    for (const [k, v] of Object.entries(rest)) {
      if (v !== undefined && v !== null && v !== false) throw invalid(`${who}: option ${k} is not supported (got ${describe(v)})`);
    }
    let pad = null;
    if (paddingIdx !== null && paddingIdx !== undefined) {
      pad = toI32(paddingIdx, who, 'paddingIdx');
      if (pad < -num || pad >= num) throw invalid(`${who}: paddingIdx ${pad} must be within [${-num}, ${num - 1}]`);
      if (pad < 0) pad += num;
    }
    this.numEmbeddings = num;
    this.embeddingDim = dim;
    /** The padding row (non-negative), or null. */
    this.paddingIdx = pad;
    /** [numEmbeddings, embeddingDim]. */
    this.weight = initWeight(num, dim, pad);
  }

  /** int64 indices [...] -> [..., embeddingDim]; traces to one Gather on the weight. */
  forward(input) {
    return embedding(input, this.weight, { paddingIdx: this.paddingIdx });
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
