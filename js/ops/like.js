// Ops that take a shape or a dtype from another tensor, as PyTorch's Tensor methods do:
// expandAs, viewAs, reshapeAs, typeAs, and newZeros, newOnes, newFull, newTensor (a tensor of
// this one's dtype). js/ops/table.js installs them as methods.
//
//   const mask = attentionMask.unsqueeze(1).expandAs(scores);   // [B, 1, T] -> scores' shape
//   const m = x.newZeros([H, W]);                               // Swin's attn_mask = x.new_zeros(...)
import { invalid } from '../errors.js';
import { describe } from '../convert.js';
import { handle, isOptions, zeros, ones, full, empty, tensor, rand, randn, tidy } from '../tensor.js';
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

/** A finite number argument (who: the method). */
function finite(v, who, what) {
  if (typeof v !== 'number' || !Number.isFinite(v)) throw invalid(`${who}: ${what} must be a finite number, got ${describe(v)}`);
  return v;
}

/**
 * Tensor.normal_(mean = 0, std = 1): this (float32) filled with normal values, written as copy_
 * writes (a leaf that requires grad is refused outside om.noGrad, as PyTorch's; Hugging Face's
 * module.weight.data.normal_(mean=0.0, std=0.02) writes the parameter through .data). The values
 * come from om's generator (om.manualSeed): PyTorch's distribution, not its numbers.
 */
export function normal_(input, mean = 0, std = 1) {
  const who = 'normal_';
  handle(input, who, 'input');
  if (input.dtype !== 'float32') throw invalid(`${who}: takes a float32 tensor, got ${input.dtype}`);
  finite(mean, who, 'mean');
  if (finite(std, who, 'std') < 0) throw invalid(`${who}: std must be >= 0, got ${std}`);
  return tidy(() => input.copy_(randn(input.shape).mul(std).add(mean)));
}

/** Tensor.uniform_(from = 0, to = 1): this (float32) filled with values uniform in [from, to), as normal_ writes. */
export function uniform_(input, from = 0, to = 1) {
  const who = 'uniform_';
  handle(input, who, 'input');
  if (input.dtype !== 'float32') throw invalid(`${who}: takes a float32 tensor, got ${input.dtype}`);
  if (finite(from, who, 'from') > finite(to, who, 'to')) throw invalid(`${who}: expects from <= to, got from=${from} > to=${to}`);
  return tidy(() => input.copy_(rand(input.shape).mul(to - from).add(from)));
}
