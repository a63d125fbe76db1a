// om.nn.functional: the ops as functions, in PyTorch's names (torch.nn.functional).
export { linear } from '../tensor.js';
export { mseLoss, nllLoss, crossEntropy, ctcLoss } from './loss.js';
