// Convolutions, pooling, unfold and fold as functions (om.nn.functional), in PyTorch's names and
// argument order; keyword arguments go in a trailing options object:
//
//   om.nn.functional.conv2d(x, weight, bias, { stride: 2, padding: [1, 0], groups: 2 })
//   om.nn.functional.maxPool2d(x, 2)                       // stride defaults to the kernel size
//   om.nn.functional.avgPool2d(x, 3, { stride: 2, padding: 1, ceilMode: true, countIncludePad: false })
//   om.nn.functional.unfold(x, 3, { padding: 1 })          // im2col: [N, C * 9, H * W]
//
// Sizes are an integer or one per spatial dim. The C ops (src/ops/conv.c) check everything
// else (shapes, channels, groups, block sizes) and name the op and the values when they refuse.
import { OmError, invalid } from '../errors.js';
import { requireReady } from '../runtime.js';
import { Tensor, handle, applyOp, applyAll, optionsArg, tidy } from '../tensor.js';
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

/** A transposed convolution over n spatial dims (the conv_transpose2d / 3d op). */
function convTranspose(who, op, n, input, weight, bias, options) {
  requireReady(who);
  [bias, options] = splitBias(bias, options);
  const o = optionsArg(options, who, ['stride', 'padding', 'outputPadding', 'groups', 'dilation']);
  const attrs = [
    ...sizes(o.stride ?? 1, n, who, 'stride'), ...sizes(o.padding ?? 0, n, who, 'padding'),
    ...sizes(o.outputPadding ?? 0, n, who, 'outputPadding'), ...sizes(o.dilation ?? 1, n, who, 'dilation'),
    toI64(o.groups ?? 1, who, 'groups'),
  ];
  return maybeUnbatched(input, n + 2, (x) => applyOp(who, op, inputs(who, x, weight, bias), attrs));
}

/** F.conv_transpose2d(input [N, C, H, W], weight [C, O/groups, kH, kW], bias [O] | null,
 *  { stride, padding, outputPadding, groups, dilation }). */
export function convTranspose2d(input, weight, bias = null, options = undefined) {
  return convTranspose('convTranspose2d', 'conv_transpose2d', 2, input, weight, bias, options);
}

/**
 * F.conv_transpose1d(input [N, C, L] (or [C, L]), weight [C, O/groups, k], bias [O] | null,
 * { stride, padding, outputPadding, groups, dilation }): the conv_transpose2d op over [N, C, 1, L]
 * with the weight [C, O/groups, 1, k], as conv1d is conv2d on a unit height (its gradients and
 * its ONNX lowering are that op's; a trace holds Unsqueeze, ConvTranspose, Squeeze).
 */
export function convTranspose1d(input, weight, bias = null, options = undefined) {
  const who = 'convTranspose1d';
  requireReady(who);
  [bias, options] = splitBias(bias, options);
  const o = optionsArg(options, who, ['stride', 'padding', 'outputPadding', 'groups', 'dilation']);
  handle(weight, who, 'weight');
  if (weight.ndim !== 3) throw invalid(`${who}: weight must be [C, O/groups, k], got [${weight.shape}]`);
  const row = { stride: 1, padding: 0, outputPadding: 0, dilation: 1 }; // the unit height's settings, and the defaults
  const settings = { groups: o.groups };
  for (const [k, fixed] of Object.entries(row)) settings[k] = oneD(o[k] ?? fixed, fixed, who, k);
  return asRow(input, who, (x) => convTranspose(who, 'conv_transpose2d', 2, x, weight.unsqueeze(2), bias, settings));
}

/** F.conv_transpose3d(input [N, C, D, H, W], weight [C, O/groups, kD, kH, kW], bias [O] | null,
 *  { stride, padding, outputPadding, groups, dilation }). */
export function convTranspose3d(input, weight, bias = null, options = undefined) {
  return convTranspose('convTranspose3d', 'conv_transpose3d', 3, input, weight, bias, options);
}

/** kernel, stride (null/undefined: the kernel) and padding of a pool over n spatial dims. */
function poolSizes(kernelSize, o, who, n) {
  const kernel = sizes(kernelSize, n, who, 'kernelSize');
  const stride = o.stride === undefined || o.stride === null ? kernel : sizes(o.stride, n, who, 'stride');
  return [...kernel, ...stride, ...sizes(o.padding ?? 0, n, who, 'padding')];
}

/**
 * A max pool over n spatial dims (the max_pool2d / 3d op); with returnIndices [values, indices],
 * the indices from the op's _indices twin (each maximum's place in its flattened plane / volume).
 */
function maxPool(who, op, n, input, kernelSize, options) {
  requireReady(who);
  const o = optionsArg(options, who, ['stride', 'padding', 'dilation', 'ceilMode', 'returnIndices']);
  handle(input, who, 'input');
  const attrs = [...poolSizes(kernelSize, o, who, n), ...sizes(o.dilation ?? 1, n, who, 'dilation'),
    flag(o.ceilMode, false, who, 'ceilMode') ? 1n : 0n];
  const values = (x) => applyOp(who, op, [handle(x, who, 'input')], attrs);
  if (!flag(o.returnIndices, false, who, 'returnIndices')) return maybeUnbatched(input, n + 2, values);
  return tidy(() => {
    const one = input.ndim === n + 1, x = one ? input.unsqueeze(0) : input;
    const pair = [values(x), applyOp(who, `${op}_indices`, [handle(x, who, 'input')], attrs)];
    return one ? pair.map((t) => t.squeeze(0)) : pair;
  });
}

/** An average pool over n spatial dims (the avg_pool2d / 3d op). */
function avgPool(who, op, n, input, kernelSize, options) {
  requireReady(who);
  const o = optionsArg(options, who, ['stride', 'padding', 'ceilMode', 'countIncludePad', 'divisorOverride']);
  if (o.divisorOverride !== undefined && o.divisorOverride !== null) throw invalid(`${who}: divisorOverride is not supported`);
  handle(input, who, 'input');
  const attrs = [...poolSizes(kernelSize, o, who, n), flag(o.ceilMode, false, who, 'ceilMode') ? 1n : 0n,
    flag(o.countIncludePad, true, who, 'countIncludePad') ? 1n : 0n];
  return maybeUnbatched(input, n + 2, (x) => applyOp(who, op, [handle(x, who, 'input')], attrs));
}

/** F.max_pool2d(input [N, C, H, W], kernelSize, { stride = kernelSize, padding = 0, dilation = 1, ceilMode = false,
 *  returnIndices = false }); with returnIndices [values, indices] (int64, places in the flattened H x W plane). */
export function maxPool2d(input, kernelSize, options = undefined) {
  return maxPool('maxPool2d', 'max_pool2d', 2, input, kernelSize, options);
}

/** F.avg_pool2d(input [N, C, H, W], kernelSize, { stride = kernelSize, padding = 0, ceilMode = false, countIncludePad = true }). */
export function avgPool2d(input, kernelSize, options = undefined) {
  return avgPool('avgPool2d', 'avg_pool2d', 2, input, kernelSize, options);
}

/** An adaptive pool's outputSize, an integer or n of them ([oH, oW]; [oD, oH, oW]), as n BigInts (-1n: null, the input's size). */
function adaptiveSizes(outputSize, who, n = 2) {
  const pair = Array.isArray(outputSize) ? outputSize : Array(n).fill(outputSize);
  if (pair.length !== n) throw invalid(`${who}: outputSize must be an integer or ${n} of them, got ${pair.length}`);
  return pair.map((v, i) => {
    if (v === null) return -1n;
    const k = toI64(v, who, `outputSize[${i}]`);
    if (k < 1n) throw invalid(`${who}: outputSize must be positive (or null), got ${k}`);
    return k;
  });
}

/** F.adaptive_avg_pool2d(input [N, C, H, W], outputSize): an integer or [oH, oW], null keeping the input's size. */
export function adaptiveAvgPool2d(input, outputSize) {
  const who = 'adaptiveAvgPool2d';
  requireReady(who);
  handle(input, who, 'input');
  const attrs = adaptiveSizes(outputSize, who);
  return maybeUnbatched(input, 4, (x) => applyOp(who, 'adaptive_avg_pool2d', [handle(x, who, 'input')], attrs));
}

// ---- adaptive max pools: the C ops adaptive_max_pool2d and adaptive_max_pool3d ----

/** returnIndices given as PyTorch's third argument (a boolean) or as { returnIndices }. */
function returnIndicesArg(options, who) {
  if (typeof options === 'boolean') return options;
  return flag(optionsArg(options, who, ['returnIndices']).returnIndices, false, who, 'returnIndices');
}

/** The op's values (with indices: [values, int64 indices]) on input [N, C, ...] (dims of them) or without N. */
function adaptiveMax(who, op, dims, input, attrs, indices) {
  return tidy(() => {
    const one = input.ndim === dims - 1, x = one ? input.unsqueeze(0) : input;
    const pair = applyAll(who, op, [handle(x, who, 'input')], attrs, [], 2);
    const out = one ? pair.map((t) => t.squeeze(0)) : pair;
    return indices ? out : out[0];
  });
}

/**
 * F.adaptive_max_pool2d(input [N, C, H, W] (or [C, H, W]), outputSize, returnIndices = false):
 * the maximum of each of PyTorch's adaptive windows (outputSize an integer or [oH, oW], null
 * keeping the input's size), with returnIndices also its index into the flattened H x W plane
 * (the first in row-major order where the window has the maximum twice; of several NaN the last,
 * as PyTorch's kernel).
 */
export function adaptiveMaxPool2d(input, outputSize, options = undefined) {
  const who = 'adaptiveMaxPool2d';
  requireReady(who);
  handle(input, who, 'input');
  const attrs = adaptiveSizes(outputSize, who);
  const indices = returnIndicesArg(options, who);
  if (input.ndim !== 3 && input.ndim !== 4) throw invalid(`${who}: takes [N, C, H, W] or [C, H, W], got [${input.shape}]`);
  const [h, w] = input.shape.slice(-2);
  if (!h || !w) throw invalid(`${who}: the input's H and W must be positive, got [${input.shape}]`);
  return adaptiveMax(who, 'adaptive_max_pool2d', 4, input, attrs, indices);
}

/**
 * F.adaptive_max_pool3d(input [N, C, D, H, W] (or [C, D, H, W]), outputSize, returnIndices = false):
 * as the 2-D pool, one more axis; returnIndices gives the index into the flattened D x H x W
 * volume of the first maximum in row-major order (PyTorch's).
 */
export function adaptiveMaxPool3d(input, outputSize, options = undefined) {
  const who = 'adaptiveMaxPool3d';
  requireReady(who);
  handle(input, who, 'input');
  const attrs = adaptiveSizes(outputSize, who, 3);
  const indices = returnIndicesArg(options, who);
  if (input.ndim !== 4 && input.ndim !== 5) throw invalid(`${who}: takes [N, C, D, H, W] or [C, D, H, W], got [${input.shape}]`);
  const [d, h, w] = input.shape.slice(-3);
  if (!d || !h || !w) throw invalid(`${who}: the input's D, H and W must be positive, got [${input.shape}]`);
  return adaptiveMax(who, 'adaptive_max_pool3d', 5, input, attrs, indices);
}

/** F.adaptive_max_pool1d(input [N, C, L] (or [C, L]), outputSize, returnIndices = false): the 2-D pool over [N, C, 1, L]. */
export function adaptiveMaxPool1d(input, outputSize, options = undefined) {
  const who = 'adaptiveMaxPool1d';
  requireReady(who);
  handle(input, who, 'input');
  const out = Array.isArray(outputSize) && outputSize.length === 1 ? outputSize[0] : outputSize;
  if (Array.isArray(out) || out === null) throw invalid(`${who}: outputSize must be an integer, got ${describe(outputSize)}`);
  const [, n] = adaptiveSizes(out, who);
  const indices = returnIndicesArg(options, who);
  if (input.ndim !== 2 && input.ndim !== 3) throw invalid(`${who}: takes [N, C, L] or [C, L], got [${input.shape}]`);
  if (!input.shape.at(-1)) throw invalid(`${who}: the input's L must be positive, got [${input.shape}]`);
  return tidy(() => {
    // a row's place h W + w is w: the 1-D indices as they are
    const r = adaptiveMax(who, 'adaptive_max_pool2d', 4, input.unsqueeze(-2), [1n, n], indices);
    return indices ? r.map((t) => t.squeeze(-2)) : r.squeeze(-2);
  });
}

// ---- 1-D pools: the 2-D ops over [N, C, 1, L] ----

/** An integer (or a 1-array) of a 1-D pool as its 2-D pair [fixed, n] (fixed: 1 or 0). */
function oneD(value, fixed, who, what) {
  if (value === undefined || value === null) return value;
  const v = Array.isArray(value) ? (value.length === 1 ? value[0] : value) : value;
  if (Array.isArray(v)) throw invalid(`${who}: ${what} must be an integer or 1 integer, got ${v.length}`);
  return [fixed, v];
}

/** fn(x) on input [N, C, L] (or [C, L]) viewed as [N, C, 1, L], the result (or each of a list) viewed back. */
function asRow(input, who, fn) {
  handle(input, who, 'input');
  if (input.shape.length !== 2 && input.shape.length !== 3) {
    throw invalid(`${who}: takes [N, C, L] or [C, L], got [${input.shape}]`);
  }
  return tidy(() => {
    const r = fn(input.unsqueeze(-2));
    return Array.isArray(r) ? r.map((t) => t.squeeze(-2)) : r.squeeze(-2);
  });
}

/**
 * F.max_pool1d(input [N, C, L], kernelSize, { stride = kernelSize, padding = 0, dilation = 1, ceilMode = false,
 * returnIndices = false }): the 2-D pool over [N, C, 1, L] (a place h W + w in a row of one is w, PyTorch's).
 */
export function maxPool1d(input, kernelSize, options = undefined) {
  const who = 'maxPool1d';
  requireReady(who);
  const o = optionsArg(options, who, ['stride', 'padding', 'dilation', 'ceilMode', 'returnIndices']);
  return asRow(input, who, (x) => maxPool('maxPool1d', 'max_pool2d', 2, x, oneD(kernelSize, 1, who, 'kernelSize'), {
    stride: oneD(o.stride, 1, who, 'stride'), padding: oneD(o.padding ?? 0, 0, who, 'padding'),
    dilation: oneD(o.dilation ?? 1, 1, who, 'dilation'), ceilMode: o.ceilMode, returnIndices: o.returnIndices,
  }));
}

/** F.avg_pool1d(input [N, C, L], kernelSize, { stride = kernelSize, padding = 0, ceilMode = false, countIncludePad = true }). */
export function avgPool1d(input, kernelSize, options = undefined) {
  const who = 'avgPool1d';
  requireReady(who);
  const o = optionsArg(options, who, ['stride', 'padding', 'ceilMode', 'countIncludePad']);
  return asRow(input, who, (x) => avgPool2d(x, oneD(kernelSize, 1, who, 'kernelSize'), {
    stride: oneD(o.stride, 1, who, 'stride'), padding: oneD(o.padding ?? 0, 0, who, 'padding'),
    ceilMode: o.ceilMode, countIncludePad: o.countIncludePad,
  }));
}

/** F.adaptive_avg_pool1d(input [N, C, L], outputSize): an integer (null keeps L). */
export function adaptiveAvgPool1d(input, outputSize) {
  const who = 'adaptiveAvgPool1d';
  requireReady(who);
  const out = Array.isArray(outputSize) && outputSize.length === 1 ? outputSize[0] : outputSize;
  if (out !== null && Array.isArray(out)) throw invalid(`${who}: outputSize must be an integer, got ${out.length} of them`);
  return asRow(input, who, (x) => adaptiveAvgPool2d(x, [1, out]));
}

// ---- unfold (im2col) and fold (col2im): the C ops unfold and fold ----

/** kernel, dilation, padding and stride of unfold / fold as BigInt pairs, in the ops' order. */
function blockSizes(who, kernelSize, o) {
  return [sizes(kernelSize, 2, who, 'kernelSize'), sizes(o.dilation ?? 1, 2, who, 'dilation'),
    sizes(o.padding ?? 0, 2, who, 'padding'), sizes(o.stride ?? 1, 2, who, 'stride')].flat();
}

/**
 * F.unfold(input [N, C, H, W] (or [C, H, W]), kernelSize, { dilation = 1, padding = 0, stride = 1 }):
 * every kernel-sized block as a column, [N, C * kH * kW, L] (L blocks, row-major). The unfold op:
 * im2col eagerly, a Slice per kernel offset in a graph (exact, H and W kept symbolic).
 */
export function unfold(input, kernelSize, options = undefined) {
  const who = 'unfold';
  requireReady(who);
  const o = optionsArg(options, who, ['dilation', 'padding', 'stride']);
  handle(input, who, 'input');
  const attrs = blockSizes(who, kernelSize, o);
  return maybeUnbatched(input, 4, (x) => applyOp(who, 'unfold', [handle(x, who, 'input')], attrs));
}

/**
 * F.fold(input [N, C * kH * kW, L] (or [C * kH * kW, L]), outputSize, kernelSize, { dilation = 1,
 * padding = 0, stride = 1 }): unfold's adjoint, each column summed back where its block lies,
 * [N, C, H, W], in PyTorch's order (its bits). The fold op: col2im eagerly, Col2Im in a graph.
 */
export function fold(input, outputSize, kernelSize, options = undefined) {
  const who = 'fold';
  requireReady(who);
  const o = optionsArg(options, who, ['dilation', 'padding', 'stride']);
  handle(input, who, 'input');
  const attrs = [...sizes(outputSize, 2, who, 'outputSize'), ...blockSizes(who, kernelSize, o)];
  return maybeUnbatched(input, 3, (x) => applyOp(who, 'fold', [handle(x, who, 'input')], attrs));
}

// ---- 3-D convolution and pools: the conv3d, max_pool3d and avg_pool3d ops ----

/** F.conv3d(input [N, C, D, H, W], weight [O, C/groups, kD, kH, kW], bias [O] | null, { stride, padding, dilation, groups }). */
export function conv3d(input, weight, bias = null, options = undefined) {
  return conv('conv3d', 'conv3d', 3, input, weight, bias, options);
}

/** F.max_pool3d(input [N, C, D, H, W], kernelSize, { stride = kernelSize, padding = 0, dilation = 1, ceilMode = false,
 *  returnIndices = false }); with returnIndices [values, indices] (places in the flattened D x H x W volume). */
export function maxPool3d(input, kernelSize, options = undefined) {
  return maxPool('maxPool3d', 'max_pool3d', 3, input, kernelSize, options);
}

/** F.avg_pool3d(input [N, C, D, H, W], kernelSize, { stride = kernelSize, padding = 0, ceilMode = false, countIncludePad = true }). */
export function avgPool3d(input, kernelSize, options = undefined) {
  return avgPool('avgPool3d', 'avg_pool3d', 3, input, kernelSize, options);
}

/** F.adaptive_avg_pool3d(input [N, C, D, H, W] (or [C, D, H, W]), outputSize): an integer or [oD, oH, oW], null keeping the input's size. */
export function adaptiveAvgPool3d(input, outputSize) {
  const who = 'adaptiveAvgPool3d';
  requireReady(who);
  handle(input, who, 'input');
  const attrs = adaptiveSizes(outputSize, who, 3);
  return maybeUnbatched(input, 5, (x) => applyOp(who, 'adaptive_avg_pool3d', [handle(x, who, 'input')], attrs));
}

// ---- max_unpool1d / 2d / 3d: the C op max_unpool ----

/**
 * PyTorch's _unpool_output_size: (in - 1) stride - 2 padding + kernel per spatial axis, or
 * outputSize (the n spatial sizes, or n + 2 with N and C first), each within a stride of that.
 */
function unpoolSize(who, input, n, kernel, stride, padding, outputSize) {
  const spatial = input.shape.slice(-n);
  const dflt = spatial.map((s, i) => (BigInt(s) - 1n) * stride[i] - 2n * padding[i] + kernel[i]);
  if (outputSize === undefined || outputSize === null) return dflt;
  let want = Array.isArray(outputSize) ? outputSize : [outputSize];
  if (want.length === n + 2) want = want.slice(2);
  if (want.length !== n) throw invalid(`${who}: outputSize must have ${n} or ${n + 2} elements, got ${want.length}`);
  return want.map((v, i) => {
    const k = toI64(v, who, `outputSize[${i}]`);
    if (k <= dflt[i] - stride[i] || k >= dflt[i] + stride[i]) {
      throw invalid(`${who}: outputSize[${i}] ${k} must lie between ${dflt[i] - stride[i]} and ${dflt[i] + stride[i]} (exclusive)`);
    }
    return k;
  });
}

/** A max unpool over n spatial dims: input [N, C, ...] (or without N) and its indices. */
function maxUnpool(who, n, input, indices, kernelSize, options) {
  requireReady(who);
  const o = optionsArg(options, who, ['stride', 'padding', 'outputSize']);
  handle(input, who, 'input');
  handle(indices, who, 'indices');
  const kernel = sizes(kernelSize, n, who, 'kernelSize');
  const stride = o.stride === undefined || o.stride === null ? kernel : sizes(o.stride, n, who, 'stride');
  const attrs = unpoolSize(who, input, n, kernel, stride, sizes(o.padding ?? 0, n, who, 'padding'), o.outputSize);
  if (input.ndim !== n + 1) return applyOp(who, 'max_unpool', [handle(input, who, 'input'), handle(indices, who, 'indices')], attrs);
  return tidy(() => applyOp(who, 'max_unpool', [input.unsqueeze(0), indices.unsqueeze(0)].map((t) => handle(t, who, 'input')), attrs).squeeze(0));
}

/**
 * F.max_unpool1d(input [N, C, L] (or [C, L]), indices (max_pool1d's), kernelSize, { stride = kernelSize,
 * padding = 0, outputSize }): zeros with each value at its index's place in the output row.
 */
export function maxUnpool1d(input, indices, kernelSize, options = undefined) {
  return maxUnpool('maxUnpool1d', 1, input, indices, kernelSize, options);
}

/** F.max_unpool2d(input [N, C, H, W] (or [C, H, W]), indices, kernelSize, { stride = kernelSize, padding = 0, outputSize }). */
export function maxUnpool2d(input, indices, kernelSize, options = undefined) {
  return maxUnpool('maxUnpool2d', 2, input, indices, kernelSize, options);
}

/** F.max_unpool3d(input [N, C, D, H, W] (or [C, D, H, W]), indices, kernelSize, { stride = kernelSize, padding = 0, outputSize }). */
export function maxUnpool3d(input, indices, kernelSize, options = undefined) {
  return maxUnpool('maxUnpool3d', 3, input, indices, kernelSize, options);
}
