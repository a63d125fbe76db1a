// om.nn: modules (module.js) and om.nn.functional (functional.js).
export { Module, Linear } from './module.js';
export * as functional from './functional.js';
export { Conv1d, Conv2d, ConvTranspose2d, MaxPool2d, AvgPool2d, AdaptiveAvgPool2d } from './conv.js';
