// om.nn activation and dropout modules, in PyTorch's shape: each holds its parameters as plain
// fields (no tensors, so nothing in the state dict) and forward calls om.nn.functional.
// Constructors take PyTorch's arguments positionally or as one options object:
// new om.nn.LeakyReLU(0.2), new om.nn.GELU({ approximate: 'tanh' }), new om.nn.Dropout(0.1).
import { Module } from './module.js';
import { omw, checkHandle } from '../runtime.js';
import { wrap, handle, full, tidy } from '../tensor.js';
import { describe, toI32, intList } from '../convert.js';
import { invalid } from '../errors.js';
import {
  relu, sigmoid, tanh, silu, hardswish, hardsigmoid, hardtanh, relu6, leakyRelu, elu, gelu, softplus, dropout,
  glu, prelu, mish, softsign, tanhshrink, hardshrink, softshrink, selu, celu, logsigmoid,
} from '../ops/act.js';

/**
 * The module class `who` of an activation with no settings: forward(x) is fn(x) (the computed key
 * names the class `who`, as a class statement would).
 */
const unary = (who, fn) => ({ [who]: class extends Module {
  forward(x) { return fn(x); }
} })[who];

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

export const ReLU = unary('ReLU', relu);

export const Sigmoid = unary('Sigmoid', sigmoid);

export const Tanh = unary('Tanh', tanh);

export const SiLU = unary('SiLU', silu);

export const Hardswish = unary('Hardswish', hardswish);

/** min(max(x + 3, 0), 6) / 6 (MobileNetV3's squeeze-excitation gate). */
export const Hardsigmoid = unary('Hardsigmoid', hardsigmoid);

/** min(max(x, 0), 6) (MobileNetV2's activation); gradient 0 at 0 and 6, as PyTorch's. */
export const ReLU6 = unary('ReLU6', relu6);

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

/** F.glu along dim (default -1): the first half times sigmoid of the second. */
export class GLU extends Module {
  constructor(...args) {
    super();
    this.dim = toI32(options('GLU', args, ['dim'], { dim: -1 }).dim, 'GLU', 'dim');
  }

  forward(x) { return glu(x, this.dim); }
}

/**
 * x > 0 ? x : weight * x with a learned weight of numParameters elements (1, or the input's
 * channel count), each init (default 0.25): its state-dict key is 'weight', as PyTorch's.
 */
export class PReLU extends Module {
  constructor(...args) {
    super();
    const o = options('PReLU', args, ['numParameters', 'init'], { numParameters: 1, init: 0.25 });
    const n = toI32(o.numParameters, 'PReLU', 'numParameters');
    if (n < 1) throw invalid(`PReLU: numParameters must be at least 1, got ${n}`);
    const init = number('PReLU', 'init', o.init);
    this.numParameters = n;
    this.weight = tidy(() => full([n], init));
    this.weight.requiresGrad = true;
  }

  forward(x) { return prelu(x, this.weight); }
}

/** x * tanh(softplus(x)). */
export const Mish = unary('Mish', mish);

/** x / (1 + |x|). */
export const Softsign = unary('Softsign', softsign);

/** x - tanh(x). */
export const Tanhshrink = unary('Tanhshrink', tanhshrink);

/** x where |x| > lambd (default 0.5), else 0. */
export class Hardshrink extends Module {
  constructor(...args) {
    super();
    this.lambd = number('Hardshrink', 'lambd', options('Hardshrink', args, ['lambd'], { lambd: 0.5 }).lambd);
  }

  forward(x) { return hardshrink(x, this.lambd); }
}

/** x - lambd above lambd (default 0.5), x + lambd below -lambd, else 0. */
export class Softshrink extends Module {
  constructor(...args) {
    super();
    this.lambd = number('Softshrink', 'lambd', options('Softshrink', args, ['lambd'], { lambd: 0.5 }).lambd);
  }

  forward(x) { return softshrink(x, this.lambd); }
}

/** nn.Unflatten(dim, unflattenedSize): dim reshaped to the sizes (one may be -1), the other dims kept. */
export class Unflatten extends Module {
  constructor(...args) {
    super();
    const o = options('Unflatten', args, ['dim', 'unflattenedSize'], {});
    if (o.dim === undefined || o.unflattenedSize === undefined) throw invalid('Unflatten: takes dim and unflattenedSize');
    this.dim = toI32(o.dim, 'Unflatten', 'dim');
    this.unflattenedSize = intList([o.unflattenedSize], 'Unflatten', 'unflattenedSize').map(Number);
  }

  forward(x) {
    handle(x, 'Unflatten', 'input');
    const d = this.dim < 0 ? this.dim + x.ndim : this.dim;
    if (d < 0 || d >= x.ndim) throw invalid(`Unflatten: dim ${this.dim} is out of range for ${x.ndim} dims`);
    return x.reshape([...x.shape.slice(0, d), ...this.unflattenedSize, ...x.shape.slice(d + 1)]);
  }
}

/** F.selu; PyTorch's inplace flag is accepted and ignored. */
export class SELU extends Module {
  constructor(...args) {
    super();
    options('SELU', args, [], {}, true);
  }

  forward(x) { return selu(x); }
}

/** F.celu with alpha (default 1, not 0). */
export class CELU extends Module {
  constructor(...args) {
    super();
    this.alpha = number('CELU', 'alpha', options('CELU', args, ['alpha'], { alpha: 1 }, true).alpha);
  }

  forward(x) { return celu(x, this.alpha); }
}

/** F.logsigmoid: log(sigmoid(x)). */
export const LogSigmoid = unary('LogSigmoid', logsigmoid);
