// Ops that take a shape or a dtype from another tensor, as PyTorch's Tensor methods do:
// expandAs, viewAs, reshapeAs, typeAs, and newZeros, newOnes, newFull, newTensor (a tensor of
// this one's dtype). js/ops/table.js installs them as methods.
//
//   const mask = attentionMask.unsqueeze(1).expandAs(scores);   // [B, 1, T] -> scores' shape
//   const m = x.newZeros([H, W]);                               // Swin's attn_mask = x.new_zeros(...)
import { invalid } from '../errors.js';
import { describe } from '../convert.js';
import { handle, isOptions, zeros, ones, full, empty, tensor } from '../tensor.js';
import { expand, view, reshape, to } from './shape.js';

/** The shape of other, which must be a Tensor (who: the method, for messages). */
function shapeOf(other, who) {
  handle(other, who, 'other');
  return other.shape;
}

export const expandAs = (input, other) => expand(input, shapeOf(other, 'expandAs'));
export const viewAs = (input, other) => view(input, shapeOf(other, 'viewAs'));
export const reshapeAs = (input, other) => reshape(input, shapeOf(other, 'reshapeAs'));
export function typeAs(input, other) {
  handle(other, 'typeAs', 'other');
  return to(input, other.dtype);
}

/** options for a new tensor: input's dtype unless options say another. */
function newOptions(input, options, who) {
  handle(input, who, 'input');
  if (options !== undefined && !isOptions(options)) throw invalid(`${who}: options must be an object, got ${describe(options)}`);
  return { dtype: input.dtype, ...options };
}

export const newZeros = (input, shape, options) => zeros(shape, newOptions(input, options, 'newZeros'));
export const newOnes = (input, shape, options) => ones(shape, newOptions(input, options, 'newOnes'));
export const newEmpty = (input, shape, options) => empty(shape, newOptions(input, options, 'newEmpty'));
export const newFull = (input, shape, value, options) => full(shape, value, newOptions(input, options, 'newFull'));
export const newTensor = (input, data, options) => tensor(data, newOptions(input, options, 'newTensor'));
