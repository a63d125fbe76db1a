// om.nn.init: PyTorch's torch.nn.init, the in-place initialisers that model code calls on its
// parameters (torchvision's _init_weights, Hugging Face's _init_weights), in camelCase:
//
//   om.nn.init.kaimingNormal_(conv.weight, { mode: 'fan_out', nonlinearity: 'relu' });
//   om.nn.init.truncNormal_(linear.weight, { std: 0.02 });
//   om.nn.init.zeros_(linear.bias);
//
// Each writes into its tensor without recording for autograd (as torch.no_grad) and returns it.
// Arguments are PyTorch's, positional or as one options object after the tensor. The values come
// from om's generator (om.manualSeed), so they follow PyTorch's distributions, not its numbers.
import { invalid } from '../errors.js';
import { Tensor, rand, randn, noGrad, tidy, where } from '../tensor.js';
import { describe } from '../convert.js';

/** The arguments after the tensor: positional values or one options object (keys among names), over defaults. */
function args(who, values, names, defaults) {
  const out = { ...defaults };
  if (values.length === 1 && values[0] !== null && typeof values[0] === 'object') {
    for (const [k, v] of Object.entries(values[0])) {
      if (!names.includes(k)) throw invalid(`${who}: unknown option '${k}' (expected ${names.map((n) => `'${n}'`).join(', ')})`);
      if (v !== undefined) out[k] = v;
    }
  } else {
    if (values.length > names.length) throw invalid(`${who}: takes at most ${names.length + 1} arguments, got ${values.length + 1}`);
    values.forEach((v, i) => { if (v !== undefined) out[names[i]] = v; });
  }
  for (const n of names) {
    if (typeof defaults[n] === 'number' && typeof out[n] !== 'number') throw invalid(`${who}: ${n} must be a number, got ${describe(out[n])}`);
  }
  return out;
}

/** tensor, checked to be a float32 Tensor. */
function floatTensor(who, tensor) {
  if (!(tensor instanceof Tensor)) throw invalid(`${who}: tensor must be an om.Tensor, got ${describe(tensor)}`);
  if (tensor.dtype !== 'float32') throw invalid(`${who}: tensor must be float32, got ${tensor.dtype}`);
  return tensor;
}

/** Writes make() (a tensor of tensor's shape) into tensor, unrecorded; returns tensor. */
function write(tensor, make) {
  noGrad(() => tidy(() => { tensor.copy_(make()); }));
  return tensor;
}

/** torch.nn.init.calculate_gain(nonlinearity, param): the recommended gain for that nonlinearity. */
export function calculateGain(nonlinearity, param = null) {
  const linear = ['linear', 'conv1d', 'conv2d', 'conv3d', 'conv_transpose1d', 'conv_transpose2d', 'conv_transpose3d', 'sigmoid'];
  if (linear.includes(nonlinearity)) return 1;
  if (nonlinearity === 'tanh') return 5.0 / 3;
  if (nonlinearity === 'relu') return Math.sqrt(2.0);
  if (nonlinearity === 'selu') return 3.0 / 4;
  if (nonlinearity === 'leaky_relu') {
    const slope = param ?? 0.01;
    if (typeof slope !== 'number' || typeof slope === 'boolean') throw invalid(`calculateGain: negative_slope ${describe(slope)} not a valid number`);
    return Math.sqrt(2.0 / (1 + slope ** 2));
  }
  throw invalid(`calculateGain: Unsupported nonlinearity ${String(nonlinearity)}`);
}

/** [fan_in, fan_out] of a weight [out, in, ...kernel] (PyTorch's _calculate_fan_in_and_fan_out). */
function fans(who, tensor) {
  const s = tensor.shape;
  if (s.length < 2) throw invalid(`${who}: Fan in and fan out can not be computed for tensor with fewer than 2 dimensions`);
  const receptive = s.slice(2).reduce((a, b) => a * b, 1);
  return [s[1] * receptive, s[0] * receptive];
}

/** torch.nn.init.uniform_(tensor, a = 0, b = 1). */
export function uniform_(tensor, ...rest) {
  const who = 'uniform_';
  const { a, b } = args(who, rest, ['a', 'b'], { a: 0, b: 1 });
  return write(floatTensor(who, tensor), () => rand(tensor.shape).mul(b - a).add(a));
}

/** torch.nn.init.normal_(tensor, mean = 0, std = 1). */
export function normal_(tensor, ...rest) {
  const who = 'normal_';
  const { mean, std } = args(who, rest, ['mean', 'std'], { mean: 0, std: 1 });
  return write(floatTensor(who, tensor), () => randn(tensor.shape).mul(std).add(mean));
}

/**
 * torch.nn.init.trunc_normal_(tensor, mean = 0, std = 1, a = -2, b = 2): normal values redrawn
 * until each lies in [a, b].
 */
export function truncNormal_(tensor, ...rest) {
  const who = 'truncNormal_';
  const { mean, std, a, b } = args(who, rest, ['mean', 'std', 'a', 'b'], { mean: 0, std: 1, a: -2, b: 2 });
  if (!(a < b)) throw invalid(`${who}: the bounds must satisfy a < b, got a = ${a}, b = ${b}`);
  if (!(std >= 0)) throw invalid(`${who}: std must be at least 0, got ${std}`);
  return write(floatTensor(who, tensor), () => {
    let x = randn(tensor.shape).mul(std).add(mean);
    // Each round keeps the values inside and redraws the rest; a bound within a few std of the
    // mean keeps the rounds few (PyTorch's inverse-CDF method needs erfinv, which om has not).
    for (let round = 0; round < 1000; round++) {
      const out = x.lt(a).logicalOr(x.gt(b));
      if (out.sum().item() === 0) return x;
      x = where(out, randn(tensor.shape).mul(std).add(mean), x);
    }
    throw invalid(`${who}: [${a}, ${b}] holds too little of normal(${mean}, ${std}) to draw from`);
  });
}

/** torch.nn.init.constant_(tensor, val). */
export function constant_(tensor, val) {
  const who = 'constant_';
  floatTensor(who, tensor);
  if (typeof val !== 'number') throw invalid(`${who}: val must be a number, got ${describe(val)}`);
  noGrad(() => tensor.fill_(val));
  return tensor;
}

/** torch.nn.init.zeros_(tensor). */
export const zeros_ = (tensor) => constant_(tensor, 0);

/** torch.nn.init.ones_(tensor). */
export const ones_ = (tensor) => constant_(tensor, 1);

/** The std of kaiming init: gain / sqrt(fan), fan by mode. */
function kaimingStd(who, tensor, { a, mode, nonlinearity }) {
  floatTensor(who, tensor);
  if (mode !== 'fan_in' && mode !== 'fan_out') throw invalid(`${who}: Mode ${String(mode)} not supported, please use one of fan_in, fan_out`);
  const [fanIn, fanOut] = fans(who, tensor);
  return calculateGain(nonlinearity, a) / Math.sqrt(mode === 'fan_in' ? fanIn : fanOut);
}

const KAIMING = [['a', 'mode', 'nonlinearity'], { a: 0, mode: 'fan_in', nonlinearity: 'leaky_relu' }];

/** torch.nn.init.kaiming_uniform_(tensor, a = 0, mode = 'fan_in', nonlinearity = 'leaky_relu'): uniform in ±sqrt(3) * gain / sqrt(fan). */
export function kaimingUniform_(tensor, ...rest) {
  const who = 'kaimingUniform_';
  const bound = Math.sqrt(3.0) * kaimingStd(who, tensor, args(who, rest, ...KAIMING));
  return uniform_(tensor, -bound, bound);
}

/** torch.nn.init.kaiming_normal_(tensor, a = 0, mode = 'fan_in', nonlinearity = 'leaky_relu'): normal with std gain / sqrt(fan). */
export function kaimingNormal_(tensor, ...rest) {
  const who = 'kaimingNormal_';
  return normal_(tensor, 0, kaimingStd(who, tensor, args(who, rest, ...KAIMING)));
}

/** The std of xavier init: gain * sqrt(2 / (fan_in + fan_out)). */
function xavierStd(who, tensor, rest) {
  const { gain } = args(who, rest, ['gain'], { gain: 1 });
  const [fanIn, fanOut] = fans(who, floatTensor(who, tensor));
  return gain * Math.sqrt(2.0 / (fanIn + fanOut));
}

/** torch.nn.init.xavier_uniform_(tensor, gain = 1): uniform in ±sqrt(3) * gain * sqrt(2 / (fan_in + fan_out)). */
export function xavierUniform_(tensor, ...rest) {
  const bound = Math.sqrt(3.0) * xavierStd('xavierUniform_', tensor, rest);
  return uniform_(tensor, -bound, bound);
}

/** torch.nn.init.xavier_normal_(tensor, gain = 1): normal with std gain * sqrt(2 / (fan_in + fan_out)). */
export function xavierNormal_(tensor, ...rest) {
  return normal_(tensor, 0, xavierStd('xavierNormal_', tensor, rest));
}
