// onemodel: tensors with autograd, computed by the C library compiled to WebAssembly.
//
//   import * as om from 'onemodel';
//   await om.ready();                       // once; everything after is synchronous
//   const w = om.randn([2, 1], { seed: 1 });
//   w.requiresGrad = true;
//   const loss = om.tidy(() => om.tensor([[1, 2]]).matmul(w).pow(2).sum());
//   loss.backward();                        // w.grad is d loss / d w
//   loss.dispose(); w.dispose();
//
// Module map: runtime.js (loading, C calls, errors from C, scratch buffer, byte streams),
// convert.js (argument checks, om.tensor data), tensor.js (Tensor, its plumbing, creation,
// scopes), ops/table.js (the op table: Tensor methods and om.* functions), ops/<family>.js,
// trace.js (Tracer, TracedModel, om.trace), session.js (InferenceSession), safetensors.js
// (om.safetensors), nn/module.js (om.nn), errors.js.
import { VERSION } from './runtime.js';
import { functions } from './ops/table.js';

export { ready, memory, setNumThreads, numThreads } from './runtime.js';
export { OmError, TraceError } from './errors.js';
export { finfo, iinfo } from './convert.js';
export {
  Tensor, tensor, zeros, ones, full, empty, arange, rand, randn, manualSeed, noGrad, tidy, keep, dispose,
  zerosLike, onesLike, fullLike, emptyLike, randLike, randnLike,
} from './tensor.js';
// the op table's functions (js/ops/table.js; importing it installs the Tensor methods)
export const {
  cat, stack, meshgrid, where, flatten, split, chunk, unbind, roll, tril, triu, matmul, addmm, einsum, cdist,
  permute, transpose, swapaxes, swapdims, unsqueeze,
  sin, cos, tan, asin, acos, atan, sinh, cosh, asinh, acosh, atanh, atan2, minimum, maximum, fmod, remainder, floor, ceil, round,
  logicalAnd, logicalOr, logicalXor, logicalNot, bitwiseAnd, bitwiseOr, bitwiseXor, bitwiseNot,
  maskedScatter, index, indexPut, nonzero, argwhere, maskedSelect, topk, multinomial, sort, argsort, searchsorted, bucketize, repeatInterleave, trilIndices, triuIndices,
  square, isnan, isinf, isfinite, std, all, any, logsumexp, bmm, outer, dot, norm,
  log1p, expm1, flip, tile, prod, cumprod, cummax, cummin, median, nanmedian, quantile, nanquantile, bincount, unique, uniqueConsecutive, diagonal, diag, asStrided, asStridedScatter,
  add, sub, mul, div, divide, trueDivide, floorDivide, pow, eq, ne, lt, le, gt, ge, neg, abs, sign, exp, log, sqrt, rsqrt, clone,
  relu, sigmoid, tanh, erf, clamp, clip, cumsum, maskedFill, softmax, logSoftmax, reshape, narrow, select, squeeze, t, detach,
  sum, mean, amax, amin, max, min, argmax, argmin, indexSelect, gather, indexAdd, scatterAdd, scatter, scatterReduce,
  absolute, negative, sgn, multiply, subtract, greater, greaterEqual, less, lessEqual, notEqual, movedim, moveaxis,
  arcsin, arccos, arctan, arcsinh, arccosh, arctanh, arctan2, pixelShuffle, pixelUnshuffle, sliceScatter, selectScatter,
  addcmul, addcdiv, lerp, bitwiseLeftShift, bitwiseRightShift, trunc, fix, xlogy, nanToNum, countNonzero, aminmax, logcumsumexp,
  fliplr, flipud, rot90, narrowCopy, tensorSplit, hsplit, vsplit, dsplit,
  linspace, eye, baddbmm, mm, mv, concat, concatenate, hstack, vstack, exp2, log2, log10, reciprocal, frac, clampMin, clampMax,
  hypot, logaddexp, fmax, fmin, isclose, allclose, equal, broadcastTo, logit, deg2rad, rad2deg, nansum, nanmean,
  selu, celu, diff, takeAlongDim, indexFill, indexCopy,
} = functions;
const variance = functions.var;
export { variance as var }; // torch.var (a reserved word in JS, so exported by name)
export { Tracer, TracedModel, trace, makeDim as Dim } from './trace.js';
export { InferenceSession } from './session.js';
export * as safetensors from './safetensors.js';
export * as nn from './nn/index.js';
export * as optim from './optim/index.js';

/** The package version (the loaded wasm must report the same; ready() checks it). */
export const version = VERSION;
