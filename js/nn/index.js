// om.nn: modules (module.js) and om.nn.functional (functional.js).
export { Module, Linear } from './module.js';
export { Embedding, Upsample } from './embedding.js';
export * as functional from './functional.js';
