// The shapes of an opened file's values that the file does not give (torch.onnx.export writes no
// value_info for intermediates; an .om leaves a dim made inside one call unknown): the library's
// Session infers them, as it does to plan a run (session.inferShapes), and this module only
// names what it gives. Sizes alone cannot say which dims follow a symbol, so the graph is bound
// at the symbols' sizes and again with one symbol moved at a time, to the next three sizes and to
// a far one (a stride-32 network's last feature map moves only past 32): a dim that never moves is
// fixed; one that moves with one symbol is `a*s+c` where that gives its size at every size tried,
// one that moves with several is a product of them (`batch*seq`), and anything else is '?' (a
// strided conv's floor((h+1)/2): a few sizes cannot tell its divisor and offset apart from
// others'), as is a dim that moves with an axis the file leaves unnamed. A symbol
// that takes only multiples of its size (an .om's declared `multiple`) moves by multiples. Where
// no far size plans, a dim that did not move is '?' too: it may move further out. Where even the
// next sizes do not plan, nothing is named and the reason is given.
import { feedsFor } from './feeds.js';

const NEAR = (b) => [[b + 1, b + 2, b + 3], [2 * b, 3 * b, 4 * b]];   // the next sizes, or the next multiples
const FAR = (b, multiples) => (multiples ? [17 * b, 9 * b, 5 * b] : [b + 64, b + 32, b + 16, b + 8]);

/** The inputs with each unnamed axis ('?') given a name of its own, so that it can be moved. */
function namedInputs(inputs) {
  return inputs.map((v, i) => ({ ...v, shape: v.shape.map((d, k) => (d === '?' ? `?${i}.${k}` : d)) }));
}

const unnamed = (sym) => sym.startsWith('?');
const message = (e) => `${e?.kind ? `${e.kind}: ` : ''}${e?.message ?? e}`;

/** The expression a*sym+c through points [[s, d]...] (a >= 1), or null. */
function fitOne(sym, points) {
  const [[s0, d0], [s1, d1]] = points;
  const a = (d1 - d0) / (s1 - s0), c = d0 - a * s0;
  if (Number.isInteger(a) && a >= 1 && Number.isInteger(c) && points.every(([s, d]) => a * s + c === d)) {
    const term = a === 1 ? sym : `${a}*${sym}`;
    return c === 0 ? term : `${term}${c > 0 ? '+' : '-'}${Math.abs(c)}`;
  }
  return null;
}

/**
 * A dim as a number, an expression of the symbols, or '?': base its size in the base plan,
 * moves[sym] its [[size of sym, dim]...] in the plans that moved sym (the base's first).
 */
function nameDim(base, moves, far) {
  const moved = Object.keys(moves).filter((s) => moves[s].some(([, d]) => d !== base));
  if (!moved.length) return Object.keys(moves).every((s) => far[s]) ? base : '?';
  if (moved.some(unnamed)) return '?';
  if (moved.length === 1) return fitOne(moved[0], moves[moved[0]]) ?? '?';
  // k times the product of the symbols that move it: each one's sizes scale it alone
  const at0 = Object.fromEntries(moved.map((s) => [s, moves[s][0][0]]));
  const k = base / moved.reduce((p, s) => p * at0[s], 1);
  const fits = Number.isInteger(k) && k > 0 && moved.every((s) => moves[s].every(([size, d]) => d === (base / at0[s]) * size));
  return fits ? [...(k === 1 ? [] : [k]), ...moved].join('*') : '?';
}

/**
 * Every value's { dtype, shape } as the Session infers them for `graph` (graphfile.js's) at the
 * symbols' `sizes` ({ symbol: size }), its dims named as above: { values, error }. `session` is an
 * om.InferenceSession on the file. error (a message) where the base sizes or a symbol's next
 * sizes do not plan; values then holds nothing.
 */
export function inferredShapes(session, graph, sizes) {
  const inputs = namedInputs(graph.inputs);
  const base = { ...sizes };
  for (const v of inputs) for (const d of v.shape) if (typeof d === 'string' && unnamed(d)) base[d] = 1;
  const where = (sz) => Object.entries(sz).filter(([s]) => !unnamed(s)).map(([s, n]) => `${s} = ${n}`).join(', ');
  const plan = (sz) => session.inferShapes(Object.fromEntries(Object.entries(feedsFor(inputs, sz))
    .map(([name, f]) => [name, { type: f.dtype, dims: f.dims, data: f.data }])));
  let at0;
  try {
    at0 = plan(base);
  } catch (e) {
    return { values: {}, error: `the Session could not plan it${where(base) ? ` at ${where(base)}` : ''}: ${message(e)}` };
  }
  const runs = {}, far = {};   // per symbol: [[its size, shapes]...] (the base's first); whether a far size planned
  for (const sym of Object.keys(base)) {
    const b = base[sym];
    let failure = null;
    for (const [i, near] of NEAR(b).entries()) {
      try {
        runs[sym] = [[b, at0], ...near.map((n) => [n, plan({ ...base, [sym]: n })])];
      } catch (e) {
        failure ??= `the Session could not plan it at ${where({ ...base, [sym]: near[0] }) || `${near[0]}`}: ${message(e)}`;
        continue;
      }
      for (const n of FAR(b, i === 1)) {
        try {
          runs[sym].push([n, plan({ ...base, [sym]: n })]);
          far[sym] = true;
          break;
        } catch {
          // too far for this model (positions, memory): a nearer one, else unmoved dims are '?'
        }
      }
      break;
    }
    if (!runs[sym]) return { values: {}, error: failure };
  }
  const values = {};
  for (const [name, { type, dims }] of Object.entries(at0)) {
    const all = Object.values(runs).flatMap((r) => r.map(([, p]) => p[name]));
    if (all.some((v) => v?.dims.length !== dims.length)) continue;   // a rank that moves: no shape to show
    values[name] = {
      dtype: type ?? 'unknown',
      shape: dims.map((d, k) => nameDim(d, Object.fromEntries(Object.entries(runs).map(([s, r]) => [s, r.map(([n, p]) => [n, p[name].dims[k]])])), far)),
    };
  }
  return { values, error: null };
}

/**
 * The graph with the inferred shapes filled in where the file gives none, or gives a dim as
 * unknown ('?'): in its values, and on its outputs (the boxes the graph ends in). A dim the file
 * names or fixes stays as the file has it.
 */
export function withInferred(graph, inferred) {
  const values = { ...graph.values };
  for (const [name, v] of Object.entries(inferred)) {
    const own = values[name];
    if (!own) values[name] = v;
    else if (own.shape.length === v.shape.length && own.shape.includes('?')) values[name] = { ...own, shape: own.shape.map((d, k) => (d === '?' ? v.shape[k] : d)) };
  }
  // an output the file gives no shape for reads [] (graphfile.js): the inferred one replaces it
  const outputs = graph.outputs.map((v) => (!graph.values[v.name] && inferred[v.name] ? { ...v, dtype: inferred[v.name].dtype, shape: inferred[v.name].shape }
    : values[v.name] && v.shape.length === values[v.name].shape.length ? { ...v, shape: values[v.name].shape } : v));
  return { ...graph, values, outputs };
}
