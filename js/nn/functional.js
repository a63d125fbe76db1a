// om.nn.functional: the ops as functions, in PyTorch's names (torch.nn.functional).
export { linear } from '../tensor.js';
export { embedding, interpolate } from '../ops/index.js';
