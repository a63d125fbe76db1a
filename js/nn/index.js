// om.nn: modules (module.js, recurrent.js, norm.js, attention.js) and om.nn.functional (functional.js).
export { Module, Linear } from './module.js';
export { LSTM, GRU } from './recurrent.js';
export { LayerNorm, GroupNorm, BatchNorm1d, BatchNorm2d, Softmax, LogSoftmax } from './norm.js';
export { MultiheadAttention } from './attention.js';
export { Embedding, Upsample } from './embedding.js';
export * as functional from './functional.js';
