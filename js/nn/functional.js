// om.nn.functional: the ops as functions, in PyTorch's names (torch.nn.functional).
export { linear, normalize } from '../ops/linalg.js';
import { functions } from '../ops/table.js';
// the op table's functions where they take PyTorch's keywords (F.softmax(x, { dim: -1 }), F.flatten(x, { startDim: 1 }))
export const { flatten, softmax, logSoftmax, gridSample } = functions;
export { layerNorm, groupNorm, batchNorm, instanceNorm, scaledDotProductAttention } from '../ops/norm.js';
export { embedding, embeddingBag, interpolate } from '../ops/index.js';
export { oneHot, pixelShuffle, pixelUnshuffle } from '../ops/sort.js';
export {
  mseLoss, nllLoss, crossEntropy, ctcLoss, l1Loss, smoothL1Loss, huberLoss, binaryCrossEntropy, binaryCrossEntropyWithLogits, klDiv,
  cosineSimilarity, marginRankingLoss, hingeEmbeddingLoss, softMarginLoss, cosineEmbeddingLoss, tripletMarginLoss,
  multilabelSoftMarginLoss, multilabelMarginLoss, multiMarginLoss, poissonNllLoss, gaussianNllLoss,
} from './loss.js';
export {
  relu, sigmoid, tanh, silu, hardswish, hardsigmoid, hardtanh, relu6, leakyRelu, elu, gelu, softplus, pad, dropout,
  glu, prelu, mish, softsign, tanhshrink, hardshrink, softshrink, selu, celu, logsigmoid, softmin,
} from '../ops/act.js';
export {
  conv1d, conv2d, conv3d, convTranspose1d, convTranspose2d, convTranspose3d, maxPool1d, maxPool2d, maxPool3d, avgPool1d, avgPool2d, avgPool3d,
  adaptiveAvgPool1d, adaptiveAvgPool2d, adaptiveAvgPool3d, unfold, fold, adaptiveMaxPool1d, adaptiveMaxPool2d, adaptiveMaxPool3d,
  maxUnpool1d, maxUnpool2d, maxUnpool3d,
} from '../ops/conv.js';
export { affineGrid } from '../ops/grid.js';
export { stochasticDepth } from './blocks.js';
