// om.nn padding modules (torch.nn.modules.padding): each holds its padding as PyTorch's (one
// number for every side, or (before, after) pairs from the last dim backwards) and forward calls
// om.nn.functional.pad with its mode: ZeroPad2d, ConstantPad1d/2d/3d (a fill value),
// ReflectionPad1d/2d and ReplicationPad1d/2d.
import { Module } from './module.js';
import { invalid } from '../errors.js';
import { describe } from '../convert.js';
import { pad } from '../ops/act.js';

/** A padding module named who over n dims in one mode; constant modes take the fill value after the padding. */
const padding = (who, n, mode, fixedValue) => ({ [who]: class extends Module {
  constructor(padding, value) {
    super();
    const sides = typeof padding === 'number' ? Array(2 * n).fill(padding) : padding;
    if (!Array.isArray(sides) || sides.length !== 2 * n || !sides.every(Number.isInteger)) {
      throw invalid(`${who}: padding must be an integer or ${2 * n} integers, got ${describe(padding)}`);
    }
    this.padding = [...sides];
    if (mode === 'constant') {
      this.value = fixedValue ?? value;
      if (typeof this.value !== 'number') throw invalid(`${who}: value must be a number, got ${describe(value)}`);
    }
  }

  forward(x) { return pad(x, this.padding, mode, mode === 'constant' ? this.value : undefined); }
} })[who];

export const ZeroPad2d = padding('ZeroPad2d', 2, 'constant', 0);
export const ConstantPad1d = padding('ConstantPad1d', 1, 'constant');
export const ConstantPad2d = padding('ConstantPad2d', 2, 'constant');
export const ConstantPad3d = padding('ConstantPad3d', 3, 'constant');
export const ReflectionPad1d = padding('ReflectionPad1d', 1, 'reflect');
export const ReflectionPad2d = padding('ReflectionPad2d', 2, 'reflect');
export const ReplicationPad1d = padding('ReplicationPad1d', 1, 'replicate');
export const ReplicationPad2d = padding('ReplicationPad2d', 2, 'replicate');
