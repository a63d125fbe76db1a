// Convolutions, pooling, unfold and fold as functions (om.nn.functional), in PyTorch's names and
// argument order; keyword arguments go in a trailing options object:
//
//   om.nn.functional.conv2d(x, weight, bias, { stride: 2, padding: [1, 0], groups: 2 })
//   om.nn.functional.maxPool2d(x, 2)                       // stride defaults to the kernel size
//   om.nn.functional.avgPool2d(x, 3, { stride: 2, padding: 1, ceilMode: true, countIncludePad: false })
//   om.nn.functional.unfold(x, 3, { padding: 1 })          // im2col: [N, C * 9, H * W]
//
// Sizes are an integer or one per spatial dim. The C ops (src/ops/conv.c) check everything
// else (shapes, channels, groups) and name the op and the values when they refuse; unfold and
// fold, composites of other ops, check their own.
import { OmError, invalid } from '../errors.js';
import { requireReady } from '../runtime.js';
import { Tensor, handle, applyOp, optionsArg, tidy, stack } from '../tensor.js';
import { pad } from './act.js';
import { describe, toI64 } from '../convert.js';

/** A size given as one integer or n of them, as n BigInts (PyTorch's _pair / _single). */
export function sizes(value, n, who, what) {
  if (Array.isArray(value)) {
    if (value.length !== n) throw invalid(`${who}: ${what} must be an integer or ${n} integers, got ${value.length}`);
    return value.map((v, i) => toI64(v, who, what, i));
  }
  const v = toI64(value, who, what);
  const out = []; // pushed: Array(n).fill(v) costs more than the rest of a small convolution's call
  for (let i = 0; i < n; i++) out.push(v);
  return out;
}

function flag(value, fallback, who, what) {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') throw invalid(`${who}: ${what} must be a boolean, got ${describe(value)}`);
  return value;
}

/** The bias argument may be a Tensor, null/undefined, or (skipped) the options object itself. */
function splitBias(bias, options) {
  const isOpts = bias !== null && bias !== undefined && !(bias instanceof Tensor) && typeof bias === 'object' && !Array.isArray(bias);
  return isOpts && options === undefined ? [null, bias] : [bias, options];
}

/** PyTorch's unbatched form: an input with one dim fewer than `dims` gets a batch of one
 *  (unsqueeze), which run's result loses again (squeeze). */
function maybeUnbatched(input, dims, run) {
  if (!(input instanceof Tensor) || input.isDisposed || input.ndim !== dims - 1) return run(input);
  const x = input.unsqueeze(0);
  try {
    const y = run(x);
    try {
      return y.squeeze(0);
    } finally {
      y.dispose();
    }
  } finally {
    x.dispose();
  }
}

function inputs(who, input, weight, bias) {
  const hs = [handle(input, who, 'input'), handle(weight, who, 'weight')];
  if (bias !== null && bias !== undefined) hs.push(handle(bias, who, 'bias'));
  return hs;
}

/**
 * padding: integers, 'valid' (0) or 'same' (stride 1), as [padding, endPad]. 'same' pads
 * dilation * (k - 1) in all along each dim; where that is odd PyTorch pads the input by the extra
 * one at the end first and convolves with the symmetric rest, as here: endPad is then F.pad's
 * list for that (null when every dim pads evenly).
 */
function convPadding(padding, weight, n, stride, dilation, who) {
  if (padding === 'valid') return [Array(n).fill(0n), null];
  if (padding !== 'same') return [sizes(padding, n, who, 'padding'), null];
  if (stride.some((s) => s !== 1n)) throw invalid(`${who}: padding 'same' needs stride 1, got stride [${stride}]`);
  const total = weight.shape.slice(-n).map((k, i) => dilation[i] * BigInt(k - 1));
  const endPad = total.map((t) => [0, Number(t % 2n)]).reverse().flat(); // F.pad lists the last dim first
  return [total.map((t) => t / 2n), endPad.some((p) => p) ? endPad : null];
}

const CONV_OPTIONS = ['stride', 'padding', 'dilation', 'groups'];

function conv(who, op, n, input, weight, bias, options) {
  requireReady(who);
  [bias, options] = splitBias(bias, options);
  const o = optionsArg(options, who, CONV_OPTIONS);
  handle(input, who, 'input');
  handle(weight, who, 'weight');
  const stride = sizes(o.stride ?? 1, n, who, 'stride');
  const dilation = sizes(o.dilation ?? 1, n, who, 'dilation');
  const [padding, endPad] = convPadding(o.padding ?? 0, weight, n, stride, dilation, who);
  const attrs = [...stride, ...padding, ...dilation, toI64(o.groups ?? 1, who, 'groups')];
  const run = (x) => applyOp(who, op, inputs(who, x, weight, bias), attrs);
  return maybeUnbatched(input, n + 2, endPad ? (x) => tidy(() => run(pad(x, endPad))) : run);
}

/** F.conv1d(input [N, C, L], weight [O, C/groups, k], bias [O] | null, { stride, padding, dilation, groups }). */
export function conv1d(input, weight, bias = null, options = undefined) {
  return conv('conv1d', 'conv1d', 1, input, weight, bias, options);
}

/** F.conv2d(input [N, C, H, W], weight [O, C/groups, kH, kW], bias [O] | null, { stride, padding, dilation, groups }). */
export function conv2d(input, weight, bias = null, options = undefined) {
  return conv('conv2d', 'conv2d', 2, input, weight, bias, options);
}

/** F.conv_transpose2d(input [N, C, H, W], weight [C, O/groups, kH, kW], bias [O] | null,
 *  { stride, padding, outputPadding, groups, dilation }). */
export function convTranspose2d(input, weight, bias = null, options = undefined) {
  const who = 'convTranspose2d';
  requireReady(who);
  [bias, options] = splitBias(bias, options);
  const o = optionsArg(options, who, ['stride', 'padding', 'outputPadding', 'groups', 'dilation']);
  const attrs = [
    ...sizes(o.stride ?? 1, 2, who, 'stride'), ...sizes(o.padding ?? 0, 2, who, 'padding'),
    ...sizes(o.outputPadding ?? 0, 2, who, 'outputPadding'), ...sizes(o.dilation ?? 1, 2, who, 'dilation'),
    toI64(o.groups ?? 1, who, 'groups'),
  ];
  return maybeUnbatched(input, 4, (x) => applyOp(who, 'conv_transpose2d', inputs(who, x, weight, bias), attrs));
}

/** kernel, stride (null/undefined: the kernel) and padding of a pool. */
function poolSizes(kernelSize, o, who) {
  const kernel = sizes(kernelSize, 2, who, 'kernelSize');
  const stride = o.stride === undefined || o.stride === null ? kernel : sizes(o.stride, 2, who, 'stride');
  return [...kernel, ...stride, ...sizes(o.padding ?? 0, 2, who, 'padding')];
}

/** F.max_pool2d(input [N, C, H, W], kernelSize, { stride = kernelSize, padding = 0, dilation = 1, ceilMode = false }). */
export function maxPool2d(input, kernelSize, options = undefined) {
  const who = 'maxPool2d';
  requireReady(who);
  const o = optionsArg(options, who, ['stride', 'padding', 'dilation', 'ceilMode', 'returnIndices']);
  if (o.returnIndices) throw invalid(`${who}: returnIndices is not supported`);
  handle(input, who, 'input');
  const attrs = [...poolSizes(kernelSize, o, who), ...sizes(o.dilation ?? 1, 2, who, 'dilation'),
    flag(o.ceilMode, false, who, 'ceilMode') ? 1n : 0n];
  return maybeUnbatched(input, 4, (x) => applyOp(who, 'max_pool2d', [handle(x, who, 'input')], attrs));
}

/** F.avg_pool2d(input [N, C, H, W], kernelSize, { stride = kernelSize, padding = 0, ceilMode = false, countIncludePad = true }). */
export function avgPool2d(input, kernelSize, options = undefined) {
  const who = 'avgPool2d';
  requireReady(who);
  const o = optionsArg(options, who, ['stride', 'padding', 'ceilMode', 'countIncludePad', 'divisorOverride']);
  if (o.divisorOverride !== undefined && o.divisorOverride !== null) throw invalid(`${who}: divisorOverride is not supported`);
  handle(input, who, 'input');
  const attrs = [...poolSizes(kernelSize, o, who), flag(o.ceilMode, false, who, 'ceilMode') ? 1n : 0n,
    flag(o.countIncludePad, true, who, 'countIncludePad') ? 1n : 0n];
  return maybeUnbatched(input, 4, (x) => applyOp(who, 'avg_pool2d', [handle(x, who, 'input')], attrs));
}

/** F.adaptive_avg_pool2d(input [N, C, H, W], outputSize): an integer or [oH, oW], null keeping the input's size. */
export function adaptiveAvgPool2d(input, outputSize) {
  const who = 'adaptiveAvgPool2d';
  requireReady(who);
  handle(input, who, 'input');
  const pair = Array.isArray(outputSize) ? outputSize : [outputSize, outputSize];
  if (pair.length !== 2) throw invalid(`${who}: outputSize must be an integer or 2 of them, got ${pair.length}`);
  const attrs = pair.map((v, i) => {
    if (v === null) return -1n;
    const k = toI64(v, who, `outputSize[${i}]`);
    if (k < 1n) throw invalid(`${who}: outputSize must be positive (or null), got ${k}`);
    return k;
  });
  return maybeUnbatched(input, 4, (x) => applyOp(who, 'adaptive_avg_pool2d', [handle(x, who, 'input')], attrs));
}

// ---- unfold (im2col) and fold (col2im), composites of pad, slice and stack ----

/** kernel, dilation, padding and stride of unfold / fold as numbers [h, w], checked. */
function blockSizes(who, kernelSize, o) {
  const b = {};
  for (const [name, v, min] of [['kernelSize', kernelSize, 1], ['dilation', o.dilation ?? 1, 1], ['padding', o.padding ?? 0, 0], ['stride', o.stride ?? 1, 1]]) {
    b[name] = sizes(v, 2, who, name).map(Number);
    if (b[name].some((x) => x < min)) throw invalid(`${who}: ${name} must be ${min ? 'positive' : 'non-negative'}, got [${b[name]}]`);
  }
  return b;
}

/** How many blocks fit along each spatial dim of a size [h, w] padded; at least one each. */
function blockCounts(who, hw, { kernelSize: k, dilation: d, padding: p, stride: s }) {
  const n = hw.map((h, i) => Math.floor((h + 2 * p[i] - d[i] * (k[i] - 1) - 1) / s[i]) + 1);
  if (n.some((v) => v < 1)) {
    throw new OmError('ShapeMismatch', `${who}: no ${k[0]}x${k[1]} block (dilation [${d}]) fits in a [${hw}] input padded by [${p}]`);
  }
  return n;
}

/**
 * F.unfold(input [N, C, H, W] (or [C, H, W]), kernelSize, { dilation = 1, padding = 0, stride = 1 }):
 * every kernel-sized block as a column, [N, C * kH * kW, L] (L blocks, row-major). Per kernel
 * offset one strided slice of the padded input, stacked: exact, and the slices' ends are counted
 * from the end, so a trace keeps H and W symbolic.
 */
export function unfold(input, kernelSize, options = undefined) {
  const who = 'unfold';
  requireReady(who);
  const o = optionsArg(options, who, ['dilation', 'padding', 'stride']);
  handle(input, who, 'input');
  const b = blockSizes(who, kernelSize, o);
  const { kernelSize: k, dilation: d, padding: p, stride: s } = b;
  return maybeUnbatched(input, 4, (x) => {
    if (x.ndim !== 4) throw new OmError('ShapeMismatch', `${who}: input must be [N, C, H, W] or [C, H, W], got [${x.shape}]`);
    blockCounts(who, x.shape.slice(2), b);
    return tidy(() => {
      const xp = p[0] || p[1] ? pad(x, [p[1], p[1], p[0], p[0]]) : x;
      const end = (i, a) => (i === k[a] - 1 ? Infinity : -(k[a] - 1 - i) * d[a]);
      const pieces = [];
      for (let i = 0; i < k[0]; i++) {
        for (let j = 0; j < k[1]; j++) pieces.push(xp.slice(2, i * d[0], end(i, 0), s[0]).slice(3, j * d[1], end(j, 1), s[1]));
      }
      return stack(pieces, 2).flatten(3).flatten(1, 2);
    });
  });
}

/** x [N, C, h, w] with s - 1 zeros between neighbours along dim 2 + axis: [.., (h - 1) s + 1, ..]. */
function spread(x, axis, s) {
  if (s === 1) return x;
  const d = 2 + axis;
  return pad(x.unsqueeze(d + 1), axis ? [0, s - 1] : [0, 0, 0, s - 1]).flatten(d, d + 1).slice(d, 0, -(s - 1));
}

/**
 * F.fold(input [N, C * kH * kW, L] (or [C * kH * kW, L]), outputSize, kernelSize, { dilation = 1,
 * padding = 0, stride = 1 }): unfold's adjoint, each column summed back where its block lies,
 * [N, C, H, W]. Per kernel offset the columns are spread by the stride and padded into place, and
 * the offsets summed in order from zero, as PyTorch's col2im does, so the sums are its bits.
 */
export function fold(input, outputSize, kernelSize, options = undefined) {
  const who = 'fold';
  requireReady(who);
  const o = optionsArg(options, who, ['dilation', 'padding', 'stride']);
  handle(input, who, 'input');
  const out = sizes(outputSize, 2, who, 'outputSize').map(Number);
  const b = blockSizes(who, kernelSize, o);
  const { kernelSize: k, dilation: d, padding: p, stride: s } = b;
  return maybeUnbatched(input, 3, (x) => {
    if (x.ndim !== 3) throw new OmError('ShapeMismatch', `${who}: input must be [N, C * kH * kW, L] or [C * kH * kW, L], got [${x.shape}]`);
    const K = k[0] * k[1], [, ck, l] = x.shape;
    if (ck % K) throw new OmError('ShapeMismatch', `${who}: input's ${ck} rows are not a multiple of the kernel's ${K} elements`);
    const [bh, bw] = blockCounts(who, out, b);
    if (l !== bh * bw) throw new OmError('ShapeMismatch', `${who}: input has ${l} blocks; outputSize [${out}] gives ${bh * bw} (${bh} x ${bw})`);
    return tidy(() => {
      const hp = out[0] + 2 * p[0], wp = out[1] + 2 * p[1], hs = (bh - 1) * s[0] + 1, ws = (bw - 1) * s[1] + 1;
      const y = x.reshape(-1, ck / K, K, bh, bw);
      let acc = null;
      for (let i = 0; i < k[0]; i++) {
        for (let j = 0; j < k[1]; j++) {
          const placed = pad(spread(spread(y.select(2, i * k[1] + j), 0, s[0]), 1, s[1]),
            [j * d[1], wp - j * d[1] - ws, i * d[0], hp - i * d[0] - hs]);
          acc = acc ? acc.add(placed) : placed.add(0); // + 0: PyTorch's sum starts at 0 (-0 becomes 0)
        }
      }
      return acc.slice(2, p[0], hp - p[0]).slice(3, p[1], wp - p[1]);
    });
  });
}
