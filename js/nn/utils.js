// om.nn.utils: PyTorch's torch.nn.utils gradient clipping and parameter/vector conversions.
//
//   loss.backward();
//   const total = om.nn.utils.clipGradNorm_(net.parameters(), 1.0);   // the norm before clipping
//   opt.step();
import { OmError, invalid } from '../errors.js';
import { describe } from '../convert.js';
import { Tensor, noGrad, tidy, zeros, ones, cat, stack } from '../tensor.js';
import { norm } from '../ops/linalg.js';

/** A Tensor or an iterable of Tensors (module.parameters()), as a checked array. */
function tensorList(params, who) {
  let list;
  if (params instanceof Tensor) list = [params];
  else if (params !== null && typeof params === 'object' && typeof params[Symbol.iterator] === 'function') list = Array.from(params);
  else throw invalid(`${who}: parameters must be a Tensor or an array of Tensors (module.parameters()), got ${describe(params)}`);
  list.forEach((p, i) => {
    if (!(p instanceof Tensor)) throw invalid(`${who}: parameters[${i}] must be a Tensor, got ${describe(p)}`);
    if (p.isDisposed) throw new OmError('Disposed', `${who}: parameters[${i}] was disposed`);
  });
  return list;
}

function finiteNumber(v, who, what, ok, rule) {
  if (typeof v !== 'number' || Number.isNaN(v) || !ok(v)) throw invalid(`${who}: ${what} must be ${rule}, got ${describe(v)}`);
  return v;
}

/**
 * torch.nn.utils.clip_grad_norm_(parameters, maxNorm, normType = 2, { errorIfNonfinite = false }):
 * the normType-norm of all the gradients together (the norm of the per-parameter norms; Infinity or
 * 'inf' for the largest magnitude), and every gradient scaled in place by
 * min(1, maxNorm / (total + 1e-6)), PyTorch's rule. Parameters without a gradient are skipped.
 * Returns the total norm before clipping as a 0-d float32 Tensor (0 when no parameter has a gradient).
 * With errorIfNonfinite, a NaN or infinite total is an InvalidArgument error and nothing is scaled.
 */
export function clipGradNorm_(parameters, maxNorm, normType = 2, options) {
  const who = 'clipGradNorm_';
  const list = tensorList(parameters, who);
  finiteNumber(maxNorm, who, 'maxNorm', () => true, 'a number');
  const p = normType === 'inf' ? Infinity : normType;
  finiteNumber(p, who, 'normType', (x) => x >= 0 || x === -Infinity, "a number >= 0, Infinity, -Infinity or 'inf'");
  if (options !== undefined && (options === null || typeof options !== 'object' || Array.isArray(options))) throw invalid(`${who}: options must be an object, got ${describe(options)}`);
  const { errorIfNonfinite = false, ...rest } = options ?? {};
  for (const k of Object.keys(rest)) throw invalid(`${who}: unknown option '${k}' (expected errorIfNonfinite)`);
  if (typeof errorIfNonfinite !== 'boolean') throw invalid(`${who}: errorIfNonfinite must be a boolean, got ${describe(errorIfNonfinite)}`);
  const grads = list.map((t) => t.grad).filter((g) => g !== null);
  if (grads.length === 0) return zeros([]);
  return noGrad(() => {
    const total = tidy(() => norm(stack(grads.map((g) => norm(g, p))), p));
    const value = total.item();
    if (errorIfNonfinite && !Number.isFinite(value)) {
      total.dispose();
      throw invalid(`${who}: the total norm of order ${p} for gradients from parameters is non-finite (${value}), so it cannot be clipped; ` +
        'to scale the gradients by the non-finite norm anyway, pass { errorIfNonfinite: false }');
    }
    // the coefficient as PyTorch computes it (max_norm / t is t.reciprocal() * max_norm there): in float32
    tidy(() => {
      const coef = ones([]).div(total.add(1e-6)).mul(maxNorm).clamp({ max: 1 });
      for (const g of grads) g.copy_(g.mul(coef));
    });
    return total;
  });
}

/** torch.nn.utils.clip_grad_value_(parameters, clipValue): every gradient clamped in place to [-clipValue, clipValue]. */
export function clipGradValue_(parameters, clipValue) {
  const who = 'clipGradValue_';
  const list = tensorList(parameters, who);
  finiteNumber(clipValue, who, 'clipValue', () => true, 'a number');
  noGrad(() => tidy(() => {
    for (const t of list) {
      const g = t.grad;
      if (g !== null) g.copy_(g.clamp(-clipValue, clipValue));
    }
  }));
}

/** torch.nn.utils.parameters_to_vector(parameters): one 1-D tensor of every parameter's values, flattened, in order (a copy). */
export function parametersToVector(parameters) {
  const who = 'parametersToVector';
  const list = tensorList(parameters, who);
  if (list.length === 0) throw invalid(`${who}: got no parameters`);
  const dtype = list[0].dtype;
  list.forEach((t, i) => {
    if (t.dtype !== dtype) throw new OmError('DtypeMismatch', `${who}: parameters[${i}] is ${t.dtype}, parameters[0] ${dtype}`);
  });
  return tidy(() => cat(list.map((t) => t.reshape(-1))));
}

/**
 * torch.nn.utils.vector_to_parameters(vec, parameters): each parameter's values from the next slice of
 * the 1-D vec, in order (copied in place under no-grad; vec must have exactly their element count).
 */
export function vectorToParameters(vec, parameters) {
  const who = 'vectorToParameters';
  if (!(vec instanceof Tensor)) throw invalid(`${who}: vec must be a Tensor, got ${describe(vec)}`);
  if (vec.isDisposed) throw new OmError('Disposed', `${who}: vec was disposed`);
  if (vec.ndim !== 1) throw invalid(`${who}: vec must be 1-D, got ${vec.ndim} dims`);
  const list = tensorList(parameters, who);
  const total = list.reduce((n, t) => n + t.numel(), 0);
  if (total !== vec.shape[0]) throw new OmError('ShapeMismatch', `${who}: vec has ${vec.shape[0]} elements, the parameters ${total}`);
  list.forEach((t, i) => {
    if (t.dtype !== vec.dtype) throw new OmError('DtypeMismatch', `${who}: parameters[${i}] is ${t.dtype}, vec ${vec.dtype}`);
  });
  noGrad(() => tidy(() => {
    let at = 0;
    for (const t of list) {
      const n = t.numel();
      t.copy_(vec.narrow(0, at, n).reshape(t.shape));
      at += n;
    }
  }));
}
