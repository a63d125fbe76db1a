// Products: matmul, linear and addmm, and torch.einsum and torch.cdist as composites of the
// library's ops (permute, reshape, matmul, sum; sub, abs, pow, amax), so their gradients and
// traced graphs are those of the ops:
//
//   const scores = om.einsum('bhqd,bhkd->bhqk', q, k);   // a permute and a batched matmul
//   const d = om.cdist(points, centres);                   // [..., P, R] Euclidean distances
import { OmError, invalid } from '../errors.js';
import { omw, requireReady, checkHandle, callOp, opId, applied } from '../runtime.js';
import { describe } from '../convert.js';
import { handle, wrap, apply1, optionsArg, tidy, where, cat } from '../tensor.js';

/** a @ b: the matmul op when both have 2 or more dims (one call into wasm, the result's shape with
 *  it), else om_matmul, which adds PyTorch's rules for vectors. */
export function matmul(input, other) {
  const ha = handle(input, 'matmul', 'input'), hb = handle(other, 'matmul', 'other');
  if (input.ndim >= 2 && other.ndim >= 2) return apply1('matmul', 'matmul', [ha, hb]);
  return wrap(checkHandle(omw.matmul(ha, hb), 'matmul'));
}

/** input W^T + bias, as PyTorch's F.linear: input [..., in], weight [out, in], bias [out] or null. */
export function linear(input, weight, bias = null) {
  requireReady('linear');
  const hs = [handle(input, 'linear', 'input'), handle(weight, 'linear', 'weight')];
  if (bias !== null && bias !== undefined) hs.push(handle(bias, 'linear', 'bias'));
  return apply1('linear', 'linear', hs);
}

/**
 * torch.addmm(input, mat1, mat2, { beta = 1, alpha = 1 }): beta * input + alpha * (mat1 @ mat2)
 * for matrices mat1 [n, k] and mat2 [k, m], input broadcast to [n, m] (Hugging Face's GPT-2
 * Conv1D: addmm(bias, x, weight)). A matmul and an add (a Mul for a beta or alpha other than 1);
 * beta 0 ignores input, as PyTorch (its NaN and infinities do not propagate).
 */
export function addmm(input, mat1, mat2, options) {
  requireReady('addmm');
  const who = 'addmm';
  const o = optionsArg(options, who, ['beta', 'alpha']);
  const scale = (k) => {
    const v = o[k] ?? 1;
    if (typeof v !== 'number') throw invalid(`${who}: ${k} must be a number, got ${describe(v)}`);
    return v;
  };
  const beta = scale('beta'), alpha = scale('alpha');
  const hi = handle(input, who, 'input');
  const hs = [mat1, mat2].map((m, k) => {
    const h = handle(m, who, k ? 'mat2' : 'mat1'), nd = m.ndim;
    if (nd !== 2) throw new OmError('ShapeMismatch', `${who}: ${k ? 'mat2' : 'mat1'} must be a matrix, got a ${nd}-D tensor`);
    return h;
  });
  if (alpha === 1 && beta === 1) { // Conv1D's: the product, then the sum, with no scope or Tensor for the product
    callOp('matmul', opId('matmul'), hs, [], [], 1);
    const p = applied.handles[0];
    try {
      return apply1(who, 'add', [p, hi]);
    } finally {
      omw.release(p);
    }
  }
  return tidy(() => {
    const p = alpha === 1 ? matmul(mat1, mat2) : matmul(mat1, mat2).mul(alpha);
    if (beta === 0) return p;
    return p.add(beta === 1 ? input : input.mul(beta));
  });
}

const shapeError = (message) => new OmError('ShapeMismatch', message);

// ---- einsum ----
// Labels are letters; an operand's '...' stands for its dims no letter names, right-aligned across
// operands as broadcasting does, and is kept as the labels ELL + k (k = 0 the outermost).
const ELL = 0x100;

/** One side of the equation: the labels of its dims, '...' expanded for an operand of nd dims. */
function labelsOf(subs, nd, nEll, where) {
  const out = [];
  let dots = false;
  for (let i = 0; i < subs.length; i++) {
    const ch = subs[i];
    if (ch === '.') {
      if (dots || subs.slice(i, i + 3) !== '...') throw invalid(`einsum: ${where} has a '.' that is not one '...'`);
      dots = true;
      i += 2;
      const e = nd === null ? nEll : nd - (subs.replace('...', '').length);
      if (e < 0) throw shapeError(`einsum: ${where} names ${subs.replace('...', '').length} dims but has ${nd}`);
      for (let k = nEll - e; k < nEll; k++) out.push(ELL + k);
    } else if (/[a-zA-Z]/.test(ch)) {
      out.push(ch.charCodeAt(0));
    } else {
      throw invalid(`einsum: invalid subscript ${JSON.stringify(ch)} in ${where} (letters and '...' only)`);
    }
  }
  if (nd !== null && out.length !== nd) throw shapeError(`einsum: ${where} names ${out.length} dims but has ${nd}`);
  return out;
}

const labelName = (l) => (l >= ELL ? '...' : String.fromCharCode(l));

/** x with labels ls reduced to one dim per label: a repeated label's dims become their diagonal
 *  (the two dims moved last, merged, and every (n + 1)-th element taken). Returns [x, labels]. */
function diagonals(x, ls, who) {
  for (;;) {
    const i = ls.findIndex((l, k) => ls.indexOf(l) !== k);
    if (i < 0) return [x, ls];
    const j = ls.indexOf(ls[i]), n = x.shape[j];
    if (x.shape[i] !== n) throw shapeError(`einsum: subscript ${labelName(ls[i])} is repeated in ${who} with sizes ${n} and ${x.shape[i]}`);
    const rest = ls.map((_, k) => k).filter((k) => k !== i && k !== j);
    x = x.permute(...rest, j, i).reshape(...rest.map((k) => x.shape[k]), n * n).slice(-1, 0, n * n, n + 1);
    ls = [...rest.map((k) => ls[k]), ls[j]];
  }
}

/** x with the dims of the labels that nothing later needs summed out. */
function sumUnneeded(x, ls, needed) {
  const gone = ls.map((l, k) => (needed.has(l) ? -1 : k)).filter((k) => k >= 0);
  if (!gone.length) return [x, ls];
  return [x.sum(gone), ls.filter((l) => needed.has(l))];
}

/** x's dims in the order of labels `to` (a permute, skipped when already in order). */
function arrange(x, ls, to) {
  const perm = to.map((l) => ls.indexOf(l));
  return perm.every((p, k) => p === k) ? x : x.permute(...perm);
}

/** x's dims from `at` on merged into one (a new size-1 dim when there are none). */
function merged(x, at, count) {
  if (count === 1) return x;
  if (count === 0) return x.unsqueeze(at);
  return x.flatten(at, at + count - 1);
}

/** Contracts a [la] with b [lb] keeping the labels in `keep`: batch labels (in both, kept) lead,
 *  then a's own, then b's own; the shared labels not kept are summed by one batched matmul (none,
 *  or integers: a broadcast mul, summed). */
function contract(a, la, b, lb, keep) {
  const batch = la.filter((l) => lb.includes(l) && keep.has(l));
  const inner = la.filter((l) => lb.includes(l) && !keep.has(l));
  const left = la.filter((l) => !lb.includes(l)), right = lb.filter((l) => !la.includes(l));
  // a size-1 shared dim broadcasts against the other operand's: that one is summed first
  for (const l of inner) {
    const sa = a.shape[la.indexOf(l)], sb = b.shape[lb.indexOf(l)];
    if (sa === 1 && sb !== 1) b = b.sum(lb.indexOf(l), true);
    else if (sb === 1 && sa !== 1) a = a.sum(la.indexOf(l), true);
  }
  const nb = batch.length;
  if (!inner.length || a.dtype !== 'float32' || b.dtype !== 'float32') {
    // nothing to sum (PyTorch's broadcast product: zeros keep their signs), or integers (exact and
    // of their dtype, where matmul is float32): [batch, left, right, inner] products, summed
    let x = arrange(a, la, [...batch, ...left, ...inner]), y = arrange(b, lb, [...batch, ...right, ...inner]);
    for (let k = 0; k < right.length; k++) x = x.unsqueeze(nb + left.length);
    for (let k = 0; k < left.length; k++) y = y.unsqueeze(nb);
    const r = x.mul(y), sums = inner.map((_, k) => r.shape.length - 1 - k);
    return [sums.length ? r.sum(sums) : r, [...batch, ...left, ...right]];
  }
  const am = merged(merged(arrange(a, la, [...batch, ...left, ...inner]), nb + left.length, inner.length), nb, left.length);
  const bm = merged(merged(arrange(b, lb, [...batch, ...inner, ...right]), nb + inner.length, right.length), nb, inner.length);
  let r = am.matmul(bm);
  const sizeOf = (l) => (la.includes(l) ? a.shape[la.indexOf(l)] : b.shape[lb.indexOf(l)]);
  if (left.length !== 1 || right.length !== 1) r = r.reshape(...r.shape.slice(0, -2), ...left.map(sizeOf), ...right.map(sizeOf));
  return [r, [...batch, ...left, ...right]];
}

/**
 * The einsum op's attributes (src/ops/matmul.c: operand count, then each side's rank and labels
 * renamed 0.. in order of first appearance, 6 bits each) when the equation is one ONNX's Einsum
 * node takes as it is: float32 operands (at most 4), letters only, no label twice in an operand,
 * a label one size wherever it appears (no size-1 broadcast), at most 26 labels; else null. Only a
 * trace uses it (one node in the graph); eager keeps the matmul composition below.
 */
function einsumNode(operands, ls, out) {
  if (operands.length > 4 || operands.some((t) => t.dtype !== 'float32')) return null;
  const names = new Map(), size = new Map();
  for (const [i, l] of ls.entries()) {
    if (new Set(l).size !== l.length) return null;
    for (const [d, x] of l.entries()) {
      if (x >= ELL || (size.has(x) && size.get(x) !== operands[i].shape[d])) return null;
      size.set(x, operands[i].shape[d]);
      if (!names.has(x)) names.set(x, names.size);
    }
  }
  if (names.size > 26 || out.some((x) => x >= ELL)) return null;
  const side = (l) => l.reduce((v, x, d) => v | (BigInt(names.get(x) + 1) << BigInt(4 + 6 * d)), BigInt(l.length));
  return [BigInt(operands.length), ...ls.map(side), side(out)];
}

/**
 * torch.einsum(equation, *operands): letters name dims, '...' the dims no letter names (broadcast
 * across operands), '->' the output (omitted: the labels used once, in alphabetical order, after
 * '...'). Labels missing from the output are summed; a label repeated in one operand takes its
 * diagonal. Operands are contracted left to right, each pair with one batched matmul (a broadcast
 * mul when the pair shares nothing summed).
 */
export function einsum(equation, ...operands) {
  const who = 'einsum';
  requireReady(who);
  if (operands.length === 1 && Array.isArray(operands[0])) operands = operands[0];
  if (typeof equation !== 'string') throw invalid(`${who}: equation must be a string, got ${describe(equation)}`);
  operands.forEach((t, i) => handle(t, who, `operands[${i}]`));
  const eq = equation.replace(/\s+/g, '');
  const arrow = eq.indexOf('->');
  if (arrow !== eq.lastIndexOf('->')) throw invalid(`${who}: equation ${JSON.stringify(equation)} has more than one '->'`);
  const lhs = arrow < 0 ? eq : eq.slice(0, arrow);
  const inputs = lhs.split(',');
  if (inputs.length !== operands.length) {
    throw invalid(`${who}: equation ${JSON.stringify(equation)} has ${inputs.length} operands, ${operands.length} given`);
  }
  const nEll = Math.max(0, ...inputs.map((s, i) => (s.includes('...') ? operands[i].shape.length - s.replace('...', '').length : 0)));
  const ls = inputs.map((s, i) => labelsOf(s, operands[i].shape.length, nEll, `operand ${i} (${JSON.stringify(s)})`));
  // each label's size, checked across operands (1 broadcasts)
  const size = new Map();
  ls.forEach((l, i) => l.forEach((x, d) => {
    const n = operands[i].shape[d], seen = size.get(x);
    if (seen !== undefined && seen !== n && seen !== 1 && n !== 1 && l.indexOf(x) === d) {
      throw shapeError(`${who}: subscript ${labelName(x)} has size ${n} in operand ${i} and ${seen} before it`);
    }
    if (seen === undefined || seen === 1) size.set(x, n);
  }));
  let out;
  if (arrow < 0) {
    const all = ls.flat(), once = [...new Set(all.filter((l) => l < ELL && all.indexOf(l) === all.lastIndexOf(l)))].sort((p, q) => p - q);
    out = [...[...Array(nEll).keys()].map((k) => ELL + k), ...once];
  } else {
    out = labelsOf(eq.slice(arrow + 2), null, nEll, `the output (${JSON.stringify(eq.slice(arrow + 2))})`);
    for (const l of out) {
      if (l < ELL && !size.has(l)) throw invalid(`${who}: output subscript ${labelName(l)} does not appear in any operand`);
      if (out.indexOf(l) !== out.lastIndexOf(l)) throw invalid(`${who}: output subscript ${labelName(l)} appears more than once`);
    }
  }
  if (omw.trace_active()) {
    const packed = einsumNode(operands, ls, out);
    if (packed) return apply1(who, 'einsum', operands.map((t, i) => handle(t, who, `operands[${i}]`)), packed);
  }
  return tidy(() => {
    const neededAfter = (i) => new Set([...out, ...ls.slice(i + 1).flat()]);
    let [x, lx] = sumUnneeded(...diagonals(operands[0], ls[0], 'operand 0'), neededAfter(0));
    for (let i = 1; i < operands.length; i++) {
      const later = neededAfter(i);
      const [y, ly] = sumUnneeded(...diagonals(operands[i], ls[i], `operand ${i}`), new Set([...later, ...lx]));
      [x, lx] = sumUnneeded(x, lx, new Set([...later, ...ly]));
      [x, lx] = contract(x, lx, y, ly, later);
    }
    [x, lx] = sumUnneeded(x, lx, new Set(out));
    x = arrange(x, lx, out);
    return x === operands[0] ? x.reshape(...x.shape) : x; // a new view, as PyTorch's, never the input itself
  });
}

// ---- cdist ----

const MODES = ['use_mm_for_euclid_dist_if_necessary', 'use_mm_for_euclid_dist', 'donot_use_mm_for_euclid_dist'];

/** sqrt(s) (or s ** (1 / p)) with a zero gradient where s is 0, as PyTorch's cdist backward. */
function root(s, p) {
  const zero = s.eq(0), safe = where(zero, 1, s);
  return where(zero, 0, p === 2 ? safe.sqrt() : safe.pow(1 / p));
}

/**
 * torch.cdist(x1 [..., P, M], x2 [..., R, M], p = 2, { computeMode }): the p-norm distance of every
 * row pair, [..., P, R] (batch dims broadcast). p = 2 follows PyTorch's computeMode: by default,
 * with P or R above 25, the matmul form sqrt(max(|a|^2 - 2 a.b + |b|^2, 0)) PyTorch uses, else
 * the exact differences. p is any value >= 0 or Infinity (0 counts the differing elements).
 */
export function cdist(x1, x2, p = 2, options) {
  const who = 'cdist';
  requireReady(who);
  handle(x1, who, 'x1');
  handle(x2, who, 'x2');
  const computeMode = options?.computeMode ?? MODES[0];
  if (!MODES.includes(computeMode)) throw invalid(`${who}: computeMode must be one of ${MODES.map((m) => `'${m}'`).join(', ')}, got ${describe(computeMode)}`);
  if (typeof p !== 'number' || !(p >= 0)) throw invalid(`${who}: p must be a number >= 0 (or Infinity), got ${describe(p)}`);
  for (const [t, name] of [[x1, 'x1'], [x2, 'x2']]) {
    if (t.dtype !== 'float32') throw new OmError('DtypeMismatch', `${who}: ${name} must be float32, not ${t.dtype}`);
    if (t.shape.length < 2) throw shapeError(`${who}: ${name} must have at least 2 dims [..., rows, features], got [${t.shape}]`);
  }
  const m1 = x1.shape.at(-1), m2 = x2.shape.at(-1);
  if (m1 !== m2) throw shapeError(`${who}: x1 [${x1.shape}] and x2 [${x2.shape}] must have the same number of features (${m1} != ${m2})`);
  return tidy(() => {
    const mm = p === 2 && computeMode !== MODES[2] && (computeMode === MODES[1] || x1.shape.at(-2) > 25 || x2.shape.at(-2) > 25);
    if (mm) {
      const n1 = x1.pow(2).sum(-1, true), n2 = x2.pow(2).sum(-1, true);
      // the pads are ones of the norms' shape, made from them so a trace keeps their sizes
      const a = cat([x1.mul(-2), n1, n1.mul(0).add(1)], -1), b = cat([x2, n2.mul(0).add(1), n2], -1);
      return root(a.matmul(b.transpose(-2, -1)).clamp(0), 2);
    }
    const diff = x1.unsqueeze(-2).sub(x2.unsqueeze(-3)); // [..., P, R, M]
    // p = 0 counts the differing features; a NaN feature makes the count NaN, as PyTorch's
    // min(ceil(|d|), 1) does (a bare ne(0) would count it as 1)
    if (p === 0) return where(diff.isnan(), NaN, diff.ne(0).to('float32')).sum(-1);
    if (p === 1) return diff.abs().sum(-1);
    if (p === Infinity) return m1 ? diff.abs().amax(-1) : diff.sum(-1); // no features: 0, as PyTorch
    if (p === 2) return root(diff.mul(diff).sum(-1), 2);
    return root(diff.abs().pow(p).sum(-1), p);
  });
}

// ---- bmm, outer, dot, norm, normalize ----

/** torch.bmm: matmul of two 3-D tensors [B, n, m] @ [B, m, p] (no broadcast, as PyTorch). */
export function bmm(input, mat2) {
  const who = 'bmm';
  handle(input, who, 'input');
  handle(mat2, who, 'mat2');
  if (input.ndim !== 3 || mat2.ndim !== 3) throw shapeError(`${who}: input and mat2 must be 3-D, got [${input.shape}] and [${mat2.shape}]`);
  if (input.shape[0] !== mat2.shape[0]) throw shapeError(`${who}: batch sizes differ: [${input.shape}] and [${mat2.shape}] (bmm does not broadcast; matmul does)`);
  return matmul(input, mat2);
}

/** torch.outer(a [n], b [m]): a[i] * b[j], [n, m] (LLaMA's rotary angles: outer(positions, invFreq)). */
export function outer(input, vec2) {
  const who = 'outer';
  handle(input, who, 'input');
  handle(vec2, who, 'vec2');
  if (input.ndim !== 1 || vec2.ndim !== 1) throw shapeError(`${who}: both must be 1-D, got [${input.shape}] and [${vec2.shape}]`);
  return tidy(() => input.unsqueeze(1).mul(vec2.unsqueeze(0)));
}

/** torch.dot(a [n], b [n]): the sum of a[i] * b[i], 0-d. */
export function dot(input, other) {
  const who = 'dot';
  handle(input, who, 'input');
  handle(other, who, 'other');
  if (input.ndim !== 1 || other.ndim !== 1 || input.shape[0] !== other.shape[0]) {
    throw shapeError(`${who}: two 1-D tensors of one size, got [${input.shape}] and [${other.shape}]`);
  }
  return matmul(input, other);
}

/**
 * torch.norm(input, p = 'fro', dim, keepdim): the p-norm over dim (all dims when none): p 2 or
 * 'fro' sqrt(sum(x^2)), 1 sum(|x|), Infinity max(|x|), -Infinity min(|x|), 0 the count of
 * nonzeros, any other p > 0 (sum |x|^p)^(1/p); the gradient at a zero norm is 0, as PyTorch's.
 */
export function norm(input, p = 'fro', dim, keepdim) {
  const who = 'norm';
  handle(input, who, 'input');
  if (input.dtype !== 'float32') throw new OmError('DtypeMismatch', `${who}: input must be float32, not ${input.dtype} (call .float() first)`);
  const q = p === 'fro' || p === null || p === undefined ? 2 : p;
  if (typeof q !== 'number' || Number.isNaN(q) || (q < 0 && q !== -Infinity)) {
    throw invalid(`${who}: p must be 'fro', a number >= 0, Infinity or -Infinity, got ${describe(p)}`);
  }
  const list = dim === undefined || dim === null ? undefined : Array.isArray(dim) ? dim : [dim];
  const k = keepdim === undefined ? false : keepdim;
  if (typeof k !== 'boolean') throw invalid(`${who}: keepdim must be a boolean, got ${describe(keepdim)}`);
  return tidy(() => {
    const a = input.abs();
    if (q === Infinity) return a.amax(list, k);
    if (q === -Infinity) return a.amin(list, k);
    if (q === 0) return input.ne(0).float().sum(list, k);
    if (q === 1) return a.sum(list, k);
    return root(q === 2 ? input.mul(input).sum(list, k) : a.pow(q).sum(list, k), q);
  });
}

/** F.normalize(input, { p = 2, dim = 1, eps = 1e-12 }): input / max(norm over dim, eps). */
export function normalize(input, options) {
  const who = 'normalize';
  handle(input, who, 'input');
  const { p, dim, eps } = optionsArg(options, who, ['p', 'dim', 'eps']);
  const e = eps ?? 1e-12;
  if (typeof e !== 'number' || !(e >= 0)) throw invalid(`${who}: eps must be a number >= 0, got ${describe(eps)}`);
  return tidy(() => input.div(norm(input, p ?? 2, dim ?? 1, true).clamp(e)));
}
