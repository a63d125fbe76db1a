// om.nn.functional: the ops as functions, in PyTorch's names (torch.nn.functional).
export { linear } from '../tensor.js';
export { conv1d, conv2d, convTranspose2d, maxPool2d, avgPool2d, adaptiveAvgPool2d } from '../ops/conv.js';
