// Activations and the misc ops (cumsum, pad, maskedFill, dropout) as functions: om.nn.functional
// re-exports them, and js/ops/table.js installs some as Tensor methods (relu, clamp, cumsum,
// maskedFill, erf). Arguments follow PyTorch's names and defaults; parameters may be given
// positionally, as in PyTorch, or as one trailing options object: leakyRelu(x, 0.2) or
// leakyRelu(x, { negativeSlope: 0.2 }).
import { OmError, invalid } from '../errors.js';
import { omw, checkHandle, requireReady, dtypeCodes } from '../runtime.js';
import { describe, toI64 } from '../convert.js';
import { Tensor, wrap, handle, applyOp, applyAll, valuesIndices, retained, unaryOp, floatOp, isOptions, tidy, where, elementwise } from '../tensor.js';

const apply1 = (who, opName, hs, iattrs = [], fattrs = []) => applyOp(who, opName, hs, iattrs, fattrs);

/**
 * The parameters after the input: positional values, or one options object whose keys must be
 * among names. Returns { name: value } with defaults for what is not given.
 */
function params(who, args, names, defaults) {
  const out = { ...defaults };
  if (args.length === 1 && isOptions(args[0])) {
    const opts = args[0];
    for (const k of Object.keys(opts)) {
      if (!names.includes(k)) throw invalid(`${who}: unknown option '${k}' (expected ${names.map((n) => `'${n}'`).join(', ')})`);
      if (opts[k] !== undefined) out[k] = opts[k];
    }
    return out;
  }
  if (args.length > names.length) throw invalid(`${who}: takes at most ${names.length + 1} arguments, got ${args.length + 1}`);
  for (let i = 0; i < args.length; i++) if (args[i] !== undefined) out[names[i]] = args[i];
  return out;
}

/** A real number argument (NaN and ±Infinity pass; C checks ranges). */
function num(x, who, what) {
  if (typeof x !== 'number') throw invalid(`${who}: ${what} must be a number, got ${describe(x)}`);
  return x;
}

function bool(x, who, what) {
  if (typeof x !== 'boolean') throw invalid(`${who}: ${what} must be a boolean, got ${describe(x)}`);
  return x;
}

// ---- activations ----------------------------------------------------------------------------

export const relu = unaryOp('relu', 'relu');
export const sigmoid = floatOp('sigmoid', 'sigmoid'); // int64 and bool promoted to float32, as PyTorch
export const tanh = floatOp('tanh', 'tanh');
export const silu = unaryOp('silu', 'silu');
export const hardswish = unaryOp('hardswish', 'hardswish');
/** min(max(input + 3, 0), 6) / 6 (PyTorch's kernel); the gradient is 1/6 strictly inside (-3, 3). */
export const hardsigmoid = unaryOp('hardsigmoid', 'hardsigmoid');
export const erf = floatOp('erf', 'erf');

/**
 * min(max(input, minVal), maxVal) (defaults -1, 1): the values of clamp, but PyTorch's gradient,
 * 0 at the bounds themselves (clamp passes it there).
 */
export function hardtanh(input, ...args) {
  const h = handle(input, 'hardtanh', 'input');
  const { minVal, maxVal } = params('hardtanh', args, ['minVal', 'maxVal'], { minVal: -1, maxVal: 1 });
  return apply1('hardtanh', 'hardtanh', [h], [], [num(minVal, 'hardtanh', 'minVal'), num(maxVal, 'hardtanh', 'maxVal')]);
}

/** hardtanh(input, 0, 6), as PyTorch's relu6. */
export function relu6(input) { return apply1('relu6', 'hardtanh', [handle(input, 'relu6', 'input')], [], [0, 6]); }

/** input > 0 ? input : input * negativeSlope (default 0.01). */
export function leakyRelu(input, ...args) {
  const h = handle(input, 'leakyRelu', 'input');
  const { negativeSlope } = params('leakyRelu', args, ['negativeSlope'], { negativeSlope: 0.01 });
  return apply1('leakyRelu', 'leaky_relu', [h], [], [num(negativeSlope, 'leakyRelu', 'negativeSlope')]);
}

/** input > 0 ? input : alpha * (exp(input) - 1) (default alpha 1). */
export function elu(input, ...args) {
  const h = handle(input, 'elu', 'input');
  const { alpha } = params('elu', args, ['alpha'], { alpha: 1 });
  return apply1('elu', 'elu', [h], [], [num(alpha, 'elu', 'alpha')]);
}

/** input * Phi(input); { approximate: 'none' | 'tanh' } (default 'none'). */
export function gelu(input, ...args) {
  const h = handle(input, 'gelu', 'input');
  const { approximate } = params('gelu', args, ['approximate'], { approximate: 'none' });
  if (approximate !== 'none' && approximate !== 'tanh') {
    throw invalid(`gelu: approximate must be 'none' or 'tanh', got ${describe(approximate)}`);
  }
  return apply1('gelu', 'gelu', [h], [approximate === 'tanh' ? 1n : 0n]);
}

/** log(1 + exp(beta * input)) / beta, or input where beta * input > threshold (defaults 1, 20). */
export function softplus(input, ...args) {
  const h = handle(input, 'softplus', 'input');
  const { beta, threshold } = params('softplus', args, ['beta', 'threshold'], { beta: 1, threshold: 20 });
  return apply1('softplus', 'softplus', [h], [], [num(beta, 'softplus', 'beta'), num(threshold, 'softplus', 'threshold')]);
}

// Activations composed of the ops above (PyTorch's definitions, so differentiable and traced as
// their ops): glu, softsign, tanhshrink, hardshrink, softshrink; prelu and mish are ops of their own.

/** F.glu: the first half of input along dim (default -1) times sigmoid of the second half. */
export function glu(input, dim = -1) {
  handle(input, 'glu', 'input');
  const d = Number(toI64(dim, 'glu', 'dim'));
  const n = input.ndim ? input.shape[d < 0 ? d + input.ndim : d] : undefined;
  if (n === undefined) throw new OmError('IndexOutOfRange', `glu: dim ${dim} is out of range for ${input.ndim} dims`);
  if (n % 2) throw invalid(`glu: halving dimension must be even, but dimension ${d < 0 ? d + input.ndim : d} is size ${n}`);
  return tidy(() => {
    const [a, b] = input.chunk(2, d);
    return a.mul(b.sigmoid());
  });
}

/**
 * F.prelu: input > 0 ? input : weight * input, weight of one element or of input's channel count
 * (dim 1; a 1-D input's only dim), as PyTorch's (one op: traced, one PRelu node).
 */
export function prelu(input, weight) {
  return apply1('prelu', 'prelu', [handle(input, 'prelu', 'input'), handle(weight, 'prelu', 'weight')]);
}

/** F.mish: input * tanh(softplus(input)) (one op: traced, one Mish node). */
export const mish = unaryOp('mish', 'mish');

/** F.softsign: input / (1 + |input|). */
export function softsign(input) {
  handle(input, 'softsign', 'input');
  return tidy(() => input.div(input.abs().add(1)));
}

/** F.tanhshrink: input - tanh(input). */
export function tanhshrink(input) {
  handle(input, 'tanhshrink', 'input');
  return tidy(() => input.sub(tanh(input)));
}

/** F.hardshrink: input where |input| > lambd (default 0.5), else 0. */
export function hardshrink(input, ...args) {
  handle(input, 'hardshrink', 'input');
  const l = num(params('hardshrink', args, ['lambd'], { lambd: 0.5 }).lambd, 'hardshrink', 'lambd');
  return tidy(() => where(input.abs().gt(l), input, 0));
}

/** F.softshrink: input - lambd above lambd (default 0.5), input + lambd below -lambd, else 0. */
export function softshrink(input, ...args) {
  handle(input, 'softshrink', 'input');
  const l = num(params('softshrink', args, ['lambd'], { lambd: 0.5 }).lambd, 'softshrink', 'lambd');
  if (!(l >= 0)) throw invalid(`softshrink: lambda must be greater or equal to 0, but found to be ${l}`);
  return tidy(() => where(input.gt(l), input.sub(l), where(input.lt(-l), input.add(l), 0)));
}

// SELU's constants (PyTorch's, from Klambauer et al.): the fixed point of mean 0, variance 1.
const SELU_ALPHA = 1.6732632423543772848170429916717;
const SELU_SCALE = 1.0507009873554804934193349852946;

/** Refuses a non-float32 input as the op a composite wraps would, but under the composite's name. */
function float32Only(input, who) {
  handle(input, who, 'input');
  if (input.dtype !== 'float32') throw new OmError('DtypeMismatch', `${who}: takes float32, not ${input.dtype}`);
}

/** F.selu: SELU_SCALE * elu(input, SELU_ALPHA) (the elu op under selu's name, then one Mul). */
export function selu(input) {
  float32Only(input, 'selu');
  return tidy(() => apply1('selu', 'elu', [handle(input, 'selu', 'input')], [], [SELU_ALPHA]).mul(SELU_SCALE));
}

/**
 * F.celu: max(0, input) + min(0, alpha * (exp(input / alpha) - 1)) (default alpha 1), PyTorch's
 * formula. The exponential reads min(input, 0), so a large positive input cannot overflow it and
 * poison the gradient with inf * 0; at 0 the gradient is 1, as PyTorch's.
 */
export function celu(input, ...args) {
  float32Only(input, 'celu');
  const alpha = num(params('celu', args, ['alpha'], { alpha: 1 }).alpha, 'celu', 'alpha');
  if (alpha === 0) throw invalid('celu: alpha cannot be 0 for CELU');
  return tidy(() => input.relu().add(input.clampMax(0).div(alpha).expm1().mul(alpha)));
}

/**
 * F.logsigmoid: log(1 / (1 + exp(-input))) = -softplus(-input), so it stays finite for large
 * |input| and its gradient is sigmoid(-input) (0.5 at 0).
 */
export function logsigmoid(input) {
  float32Only(input, 'logsigmoid');
  return tidy(() => apply1('logsigmoid', 'softplus', [handle(input.neg(), 'logsigmoid', 'input')], [], [1, 20]).neg());
}

/**
 * F.softmin(input, dim, dtype): softmax(-input) along dim, as PyTorch's (-input).softmax(dim,
 * dtype); dim and dtype may be given as { dim, dtype }. The softmax op runs under softmin's name.
 */
export function softmin(input, ...args) {
  const { dim, dtype } = params('softmin', args, ['dim', 'dtype'], {});
  handle(input, 'softmin', 'input');
  if (dim === undefined) throw invalid('softmin: takes dim (PyTorch\'s implicit dim is deprecated)');
  const d = toI64(dim, 'softmin', 'dim');
  // checked here so the message names softmin, not the softmax op it runs (a 0-d tensor has dims 0 and -1)
  const n = Math.max(input.ndim, 1);
  if (d < -n || d >= n) throw new OmError('IndexOutOfRange', `softmin: dim ${d} is out of range for ${input.ndim} dims`);
  return tidy(() => {
    const neg = input.neg();
    const x = dtype === undefined || dtype === null ? neg : neg.to(dtype);
    return apply1('softmin', 'softmax', [handle(x, 'softmin', 'input')], [d]);
  });
}

/**
 * torch.clamp: min(max(input, min), max), either bound null/undefined for none (not both).
 * Bounds are numbers or bigints (the C op, after PyTorch's promotion with the bounds as weak
 * scalars: an int64 or bool input with a fractional bound is clamped as float32, a bool input
 * with integer bounds as int64), or Tensors (maximum, then minimum, which broadcast and promote
 * as every binary op).
 */
export function clamp(input, ...args) {
  const h = handle(input, 'clamp', 'input');
  const { min, max } = params('clamp', args, ['min', 'max'], { min: null, max: null });
  const given = [min, max].map((v) => v !== null && v !== undefined);
  if (!given[0] && !given[1]) throw invalid('clamp: at least one of min or max must be given');
  if ((given[0] && min instanceof Tensor) || (given[1] && max instanceof Tensor)) {
    return tidy(() => {
      const low = given[0] ? elementwise('clamp', 'maximum', ['input', 'min'], [input, min]) : input;
      return given[1] ? elementwise('clamp', 'minimum', ['input', 'max'], [low, max]) : low;
    });
  }
  [min, max].forEach((v, k) => {
    if (given[k] && typeof v !== 'bigint') num(v, 'clamp', k ? 'max' : 'min');
  });
  const fraction = [min, max].some((v, k) => given[k] && typeof v === 'number' && !Number.isInteger(v));
  const dtype = input.dtype === 'float32' || input.dtype === 'float64' ? input.dtype : fraction ? 'float32' : 'int64';
  const ints = dtype === 'int64';
  const i = [given[0] ? 1n : 0n, given[1] ? 1n : 0n];
  const f = [0, 0];
  [min, max].forEach((v, k) => {
    if (!given[k]) { if (ints) i.push(0n); return; }
    if (ints) i.push(toI64(v, 'clamp', k ? 'max' : 'min'));
    else f[k] = Number(v);
  });
  if (dtype === input.dtype) return apply1('clamp', 'clamp', [h], i, f);
  const c = checkHandle(omw.cast(h, dtypeCodes.get(dtype)), 'clamp');
  try {
    return apply1('clamp', 'clamp', [c], i, f);
  } finally {
    omw.release(c);
  }
}

// ---- misc -----------------------------------------------------------------------------------

/** A running sum or product along dim (float32; int64; bool counted or multiplied into int64). */
const running = (who) => (input, dim) => {
  const h = handle(input, who, 'input');
  if (dim === undefined) throw invalid(`${who}: dim is required`);
  return apply1(who, who, [h], [toI64(dim, who, 'dim')]);
};

export const cumsum = running('cumsum');
export const cumprod = running('cumprod');

/**
 * torch.cummax(input, dim) / torch.cummin: [values, indices (int64)] (also .values and .indices),
 * the running maximum (minimum) along dim by PyTorch's rule: equal values move the index to the
 * later one, and from a NaN on the value is NaN at the last NaN's index.
 */
const runningExtreme = (who) => (input, dim) => {
  const h = handle(input, who, 'input');
  if (dim === undefined) throw invalid(`${who}: dim is required`);
  return valuesIndices(applyAll(who, who, [h], [toI64(dim, who, 'dim')], [], 2));
};

export const cummax = runningExtreme('cummax');
export const cummin = runningExtreme('cummin');

const PAD_MODES = ['constant', 'reflect', 'replicate'];

/**
 * PyTorch's F.pad: pad lists (before, after) pairs from the last dim backwards; mode 'constant'
 * (fill with value; negative pads crop), 'reflect' or 'replicate'. pad(x, [1, 1], 'reflect'),
 * pad(x, [1, 2], 'constant', 0.5) or pad(x, [1, 2], { mode, value }).
 */
export function pad(input, padding, ...args) {
  const h = handle(input, 'pad', 'input');
  if (!Array.isArray(padding)) throw invalid(`pad: pad must be an array of integers, got ${describe(padding)}`);
  if (padding.length > 16) throw invalid(`pad: padding length ${padding.length} is over 16 (8 dims)`);
  const pads = padding.map((v, i) => toI64(v, 'pad', `pad[${i}]`));
  const { mode, value } = params('pad', args, ['mode', 'value'], { mode: 'constant', value: null });
  const m = PAD_MODES.indexOf(mode);
  if (m < 0) throw invalid(`pad: mode must be ${PAD_MODES.map((s) => `'${s}'`).join(', ')}, got ${describe(mode)}`);
  const v = value === null || value === undefined ? 0 : typeof value === 'bigint' ? Number(value) : num(value, 'pad', 'value');
  return apply1('pad', 'pad', [h], [BigInt(m), ...pads], [v]);
}

/**
 * mask ? value : input, mask bool broadcast with input (value converted to input's dtype, as
 * PyTorch's). value: a number, boolean or bigint, or a 0-d Tensor (then where(mask, value, input),
 * which autograd and the tracer follow into the value too).
 */
export function maskedFill(input, mask, value) {
  const h = handle(input, 'maskedFill', 'input');
  const hm = handle(mask, 'maskedFill', 'mask');
  if (value instanceof Tensor) {
    if (value.ndim !== 0) throw invalid(`maskedFill: value must be a 0-d Tensor, got one of ${value.ndim} dims`);
    if (mask.dtype !== 'bool') throw new OmError('DtypeMismatch', `maskedFill: mask must be bool, got ${mask.dtype}`);
    return tidy(() => where(mask, value.to(input.dtype), input));
  }
  let v = value;
  if (typeof v === 'bigint') v = Number(v);
  else if (typeof v === 'boolean') v = v ? 1 : 0;
  return apply1('maskedFill', 'masked_fill', [h, hm], [], [num(v, 'maskedFill', 'value')]);
}

/**
 * PyTorch's F.dropout: { p = 0.5, training = true }. Training mode zeroes elements with
 * probability p from the default generator (om.manualSeed) and scales the rest by 1 / (1 - p);
 * otherwise (or p = 0) the result is the input itself (a new handle to the same tensor). While
 * a trace records, training mode throws TraceError UnsupportedOperation: call eval() first.
 */
export function dropout(input, ...args) {
  requireReady('dropout');
  const h = handle(input, 'dropout', 'input');
  const o = params('dropout', args, ['p', 'training'], { p: 0.5, training: true });
  const p = num(o.p, 'dropout', 'p'), training = bool(o.training, 'dropout', 'training');
  // the input itself where C's om_dropout returns it, without the call (C checks a bad p)
  if ((!training || p === 0) && p >= 0 && p <= 1) return retained(input, 'dropout', 'input');
  return wrap(checkHandle(omw.dropout(h, p, training ? 1 : 0), 'dropout'));
}

/** x * x (torch.square: the same bits as pow(x, 2)). */
export function square(input) {
  handle(input, 'square', 'input');
  return input.mul(input);
}

/** Where input is NaN (x != x), as bool; false everywhere for int64 and bool. */
export function isnan(input) {
  handle(input, 'isnan', 'input');
  return input.ne(input);
}

/** Where input is +inf or -inf, as bool. */
export function isinf(input) {
  handle(input, 'isinf', 'input');
  if (input.dtype !== 'float32') return input.ne(input);
  return tidy(() => input.abs().eq(Infinity));
}

/** Where input is neither NaN nor infinite, as bool (x - x is 0 only for finite x). */
export function isfinite(input) {
  handle(input, 'isfinite', 'input');
  if (input.dtype !== 'float32') return input.eq(input);
  return tidy(() => input.sub(input).eq(0));
}
