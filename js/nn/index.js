// om.nn: modules (module.js, container.js, blocks.js, recurrent.js, norm.js, attention.js, transformer.js, embedding.js,
// loss.js, activation.js, padding.js), om.nn.functional (functional.js), om.nn.init (init.js) and om.nn.utils (utils.js).
export { Module, Linear } from './module.js';
export { Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict } from './container.js';
export { RNNBase, LSTM, GRU } from './recurrent.js';
export {
  LayerNorm, GroupNorm, BatchNorm1d, BatchNorm2d, BatchNorm3d, InstanceNorm1d, InstanceNorm2d, Softmax, LogSoftmax, Softmin,
} from './norm.js';
export { MultiheadAttention } from './attention.js';
export { Embedding, EmbeddingBag, Upsample, PixelShuffle, PixelUnshuffle } from './embedding.js';
export {
  MSELoss, NLLLoss, CrossEntropyLoss, CTCLoss, L1Loss, SmoothL1Loss, HuberLoss, BCELoss, BCEWithLogitsLoss, KLDivLoss, CosineSimilarity,
  MarginRankingLoss, HingeEmbeddingLoss, SoftMarginLoss, CosineEmbeddingLoss, TripletMarginLoss,
  MultiLabelSoftMarginLoss, MultiLabelMarginLoss, MultiMarginLoss, PoissonNLLLoss, GaussianNLLLoss,
} from './loss.js';
export {
  ReLU, ReLU6, LeakyReLU, ELU, GELU, SiLU, Softplus, Hardswish, Hardsigmoid, Hardtanh, Sigmoid, Tanh, Identity, Flatten, Dropout,
  GLU, PReLU, Mish, Softsign, Tanhshrink, Hardshrink, Softshrink, Unflatten, SELU, CELU, LogSigmoid,
} from './activation.js';
export {
  ZeroPad2d, ConstantPad1d, ConstantPad2d, ConstantPad3d, ReflectionPad1d, ReflectionPad2d, ReplicationPad1d, ReplicationPad2d,
} from './padding.js';
export * as functional from './functional.js';
export * as init from './init.js';
export * as utils from './utils.js';
export {
  Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d, MaxPool1d, MaxPool2d, MaxPool3d, AvgPool1d, AvgPool2d, AvgPool3d,
  AdaptiveAvgPool1d, AdaptiveAvgPool2d, AdaptiveAvgPool3d, Unfold, Fold, AdaptiveMaxPool1d, AdaptiveMaxPool2d, AdaptiveMaxPool3d,
  MaxUnpool1d, MaxUnpool2d, MaxUnpool3d,
} from './conv.js';
export {
  TransformerEncoderLayer, TransformerDecoderLayer, TransformerEncoder, TransformerDecoder, Transformer,
} from './transformer.js';
export { Conv2dNormActivation, SqueezeExcitation, MLP, Permute, StochasticDepth, LayerNorm2d } from './blocks.js';
