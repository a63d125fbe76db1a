// om.nn: modules (module.js, container.js, loss.js) and om.nn.functional (functional.js).
export { Module, Linear } from './module.js';
export { Sequential, ModuleList } from './container.js';
export { MSELoss, NLLLoss, CrossEntropyLoss, CTCLoss } from './loss.js';
export * as functional from './functional.js';
