// om.nn: modules (module.js) and om.nn.functional (functional.js).
export { Module, Linear } from './module.js';
export { LSTM, GRU } from './recurrent.js';
export * as functional from './functional.js';
