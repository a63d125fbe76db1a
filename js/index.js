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
// convert.js (argument checks, om.tensor data), tensor.js (Tensor and the functions),
// trace.js (Tracer, TracedModel, om.trace), session.js (InferenceSession), safetensors.js
// (om.safetensors), nn/module.js (om.nn), errors.js.
import { VERSION } from './runtime.js';

export { ready, memory, setNumThreads, numThreads } from './runtime.js';
export { OmError, TraceError } from './errors.js';
export {
  Tensor, tensor, zeros, ones, full, arange, rand, randn, manualSeed, cat, stack, roll, indexPut, meshgrid, where, matmul,
  split, chunk, unbind, tril, triu, flatten, addmm, noGrad, tidy, keep, dispose,
} from './tensor.js';
export {
  sin, cos, tan, asin, acos, atan, sinh, cosh, asinh, acosh, atanh, atan2, minimum, maximum, fmod, remainder,
  logicalAnd, logicalOr, logicalXor, logicalNot, bitwiseAnd, bitwiseOr, bitwiseXor, bitwiseNot,
} from './ops/math.js';
export { einsum, cdist } from './ops/linalg.js';
export { maskedScatter } from './ops/index.js';
export {
  topk, sort, argsort, searchsorted, bucketize, repeatInterleave, trilIndices, triuIndices,
} from './ops/sort.js';
export { Tracer, TracedModel, trace, makeDim as Dim } from './trace.js';
export { InferenceSession } from './session.js';
export * as safetensors from './safetensors.js';
export * as nn from './nn/index.js';
export * as optim from './optim/index.js';

/** The package version (the loaded wasm must report the same; ready() checks it). */
export const version = VERSION;
