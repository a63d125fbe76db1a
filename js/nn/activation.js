// om.nn activation and dropout modules, in PyTorch's shape: each holds its parameters as plain
// fields (no tensors, so nothing in the state dict) and forward calls om.nn.functional.
// Constructors take PyTorch's arguments positionally or as one options object:
// new om.nn.LeakyReLU(0.2), new om.nn.GELU({ approximate: 'tanh' }), new om.nn.Dropout(0.1).
import { Module } from './module.js';
import { omw, checkHandle } from '../runtime.js';
import { wrap, handle } from '../tensor.js';
import { describe } from '../convert.js';
import { invalid } from '../errors.js';
import {
  relu, sigmoid, tanh, silu, hardswish, hardsigmoid, hardtanh, relu6, leakyRelu, elu, gelu, softplus, dropout,
} from '../ops/act.js';

/**
 * Reads a constructor's arguments: positional values or one options object (keys among names).
 * PyTorch's in-place flag is accepted and ignored (results here are always new tensors): as an
 * option of any module, and positionally after names where PyTorch's constructor takes it there
 * (withInplace: nn.Dropout(0.5, True), nn.LeakyReLU(0.2, True), ...), where it must be a boolean.
 */
function options(who, args, names, defaults, withInplace = false) {
  const out = { ...defaults };
  if (args.length === 1 && args[0] !== null && typeof args[0] === 'object' && !Array.isArray(args[0])) {
    for (const [k, v] of Object.entries(args[0])) {
      if (k === 'inplace') continue;
      if (!names.includes(k)) throw invalid(`${who}: unknown option '${k}' (expected ${names.map((n) => `'${n}'`).join(', ')})`);
      if (v !== undefined) out[k] = v;
    }
    return out;
  }
  const positional = withInplace ? [...names, 'inplace'] : names;
  if (args.length > positional.length) throw invalid(`${who}: takes at most ${positional.length} arguments, got ${args.length}`);
  args.forEach((v, i) => { if (v !== undefined) out[positional[i]] = v; });
  if ('inplace' in out && typeof out.inplace !== 'boolean') throw invalid(`${who}: inplace must be a boolean, got ${describe(out.inplace)}`);
  delete out.inplace;
  return out;
}

function number(who, name, v) {
  if (typeof v !== 'number') throw invalid(`${who}: ${name} must be a number, got ${describe(v)}`);
  return v;
}

export class ReLU extends Module {
  forward(x) { return relu(x); }
}

export class Sigmoid extends Module {
  forward(x) { return sigmoid(x); }
}

export class Tanh extends Module {
  forward(x) { return tanh(x); }
}

export class SiLU extends Module {
  forward(x) { return silu(x); }
}

export class Hardswish extends Module {
  forward(x) { return hardswish(x); }
}

/** min(max(x + 3, 0), 6) / 6 (MobileNetV3's squeeze-excitation gate). */
export class Hardsigmoid extends Module {
  forward(x) { return hardsigmoid(x); }
}

/** min(max(x, 0), 6) (MobileNetV2's activation); gradient 0 at 0 and 6, as PyTorch's. */
export class ReLU6 extends Module {
  forward(x) { return relu6(x); }
}

/** min(max(x, minVal), maxVal) (defaults -1, 1); gradient 0 at the bounds, as PyTorch's. */
export class Hardtanh extends Module {
  constructor(...args) {
    super();
    const o = options('Hardtanh', args, ['minVal', 'maxVal'], { minVal: -1, maxVal: 1 }, true);
    this.minVal = number('Hardtanh', 'minVal', o.minVal);
    this.maxVal = number('Hardtanh', 'maxVal', o.maxVal);
    if (!(this.maxVal > this.minVal)) throw invalid(`Hardtanh: maxVal ${this.maxVal} must be greater than minVal ${this.minVal}`);
  }

  forward(x) { return hardtanh(x, this.minVal, this.maxVal); }
}

/** x > 0 ? x : negativeSlope * x (default 0.01). */
export class LeakyReLU extends Module {
  constructor(...args) {
    super();
    this.negativeSlope = number('LeakyReLU', 'negativeSlope', options('LeakyReLU', args, ['negativeSlope'], { negativeSlope: 0.01 }, true).negativeSlope);
  }

  forward(x) { return leakyRelu(x, this.negativeSlope); }
}

/** x > 0 ? x : alpha * (exp(x) - 1) (default alpha 1). */
export class ELU extends Module {
  constructor(...args) {
    super();
    this.alpha = number('ELU', 'alpha', options('ELU', args, ['alpha'], { alpha: 1 }, true).alpha);
  }

  forward(x) { return elu(x, this.alpha); }
}

/** x * Phi(x), approximate 'none' (default) or 'tanh'. */
export class GELU extends Module {
  constructor(...args) {
    super();
    const { approximate } = options('GELU', args, ['approximate'], { approximate: 'none' });
    if (approximate !== 'none' && approximate !== 'tanh') {
      throw invalid(`GELU: approximate must be 'none' or 'tanh', got ${describe(approximate)}`);
    }
    this.approximate = approximate;
  }

  forward(x) { return gelu(x, { approximate: this.approximate }); }
}

/** log(1 + exp(beta x)) / beta, x where beta x > threshold (defaults 1, 20). */
export class Softplus extends Module {
  constructor(...args) {
    super();
    const o = options('Softplus', args, ['beta', 'threshold'], { beta: 1, threshold: 20 });
    this.beta = number('Softplus', 'beta', o.beta);
    this.threshold = number('Softplus', 'threshold', o.threshold);
  }

  forward(x) { return softplus(x, this.beta, this.threshold); }
}

/** Returns its input (a new handle to the same tensor); constructor arguments are ignored, as PyTorch's. */
export class Identity extends Module {
  forward(x) { return wrap(checkHandle(omw.retain(handle(x, 'Identity', 'input')), 'Identity')); }
}

/** Flattens dims startDim..endDim (default 1..-1, keeping the batch), as PyTorch's nn.Flatten. */
export class Flatten extends Module {
  constructor(...args) {
    super();
    const { startDim, endDim } = options('Flatten', args, ['startDim', 'endDim'], { startDim: 1, endDim: -1 });
    this.startDim = startDim;
    this.endDim = endDim;
  }

  forward(x) {
    handle(x, 'Flatten', 'input');
    return x.flatten(this.startDim, this.endDim);
  }
}

/**
 * Zeroes elements with probability p (default 0.5) and scales the rest by 1 / (1 - p) while
 * training; in eval mode (module.eval()) returns its input (a new handle to the same tensor).
 */
export class Dropout extends Module {
  constructor(...args) {
    super();
    const { p } = options('Dropout', args, ['p'], { p: 0.5 }, true);
    if (typeof p !== 'number' || !(p >= 0 && p <= 1)) {
      throw invalid(`Dropout: dropout probability has to be between 0 and 1, but got ${describe(p)}`);
    }
    this.p = p;
  }

  forward(x) { return dropout(x, { p: this.p, training: this.training }); }
}
