// om.nn: modules (module.js, recurrent.js, norm.js, attention.js, activation.js) and om.nn.functional (functional.js).
export { Module, Linear } from './module.js';
export { LSTM, GRU } from './recurrent.js';
export { LayerNorm, GroupNorm, BatchNorm1d, BatchNorm2d, Softmax, LogSoftmax } from './norm.js';
export { MultiheadAttention } from './attention.js';
export {
  ReLU, LeakyReLU, ELU, GELU, SiLU, Softplus, Hardswish, Sigmoid, Tanh, Identity, Dropout,
} from './activation.js';
export * as functional from './functional.js';
