// The shapes of an opened file's values that the file does not give (torch.onnx.export writes no
// value_info for intermediates; an .om leaves a dim made inside one call unknown): the library's
// Session infers them, as it does to plan a run (session.inferShapes), and this module only
// names what it gives. Sizes alone cannot say which dims follow a symbol, so the graph is bound
// at the symbols' sizes and again with one symbol moved at a time, to the next three sizes and to
// a far one (a stride-32 network's last feature map moves only past 32): a dim that never moves is
// fixed; one that moves with one symbol is `a*s+c` where that gives its size at every size tried,
// one that moves with several is a product of them (`batch*seq`). A dim that moves with one
// symbol in steps (a strided conv's or pool's output, a chain of them) is `floor((s+c)/d)` (times
// q, plus e: `q*floor((s+c)/d)+e`) where the sizes pin that form: within it, the function is fixed
// by where it first steps up, by how much, and where it steps next, so those two steps are found by
// bisection between sizes already bound (the Session binds a size in a few milliseconds), and the
// form must then give the dim at every size bound and at the third step it predicts. Anything else
// is '?', as is a dim that moves with an axis the file leaves unnamed. A symbol
// that takes only multiples of its size (an .om's declared `multiple`) moves by multiples (no floor
// form: its steps fall between the sizes it takes). Where
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

/** q*floor((sym+c)/d)+e written as the tracer writes its dims: floor((h+1)/2), floor(h/4), 2*floor((h+3)/4)+1. */
function floorText(sym, q, c, d, e) {
  if (q === 1) [c, e] = [c + e * d, 0];   // floor((h-1)/2)+1 is floor((h+1)/2)
  const inner = c === 0 ? `floor(${sym}/${d})` : `floor((${sym}${c > 0 ? '+' : '-'}${Math.abs(c)})/${d})`;
  return `${q === 1 ? '' : `${q}*`}${inner}${e === 0 ? '' : `${e > 0 ? '+' : '-'}${Math.abs(e)}`}`;
}

/**
 * The form q*floor((sym+c)/d)+e (d >= 2) of a dim that moves with sym in steps, or null where the
 * sizes bound do not pin it. dimAt(n): the dim at sym = n (others at their base), binding the
 * graph there if needed, null where it does not bind; b: sym's base size; sizes: the sizes of sym
 * bound so far (b among them; at least one where the dim is above its size at b). Within the form
 * the dim never falls, so bisection finds the first size where it steps up from its value at b
 * (j1) and from its value at j1 (j2): d is j2 - j1, q the step, c puts the steps at j1 + k*d.
 */
function fitFloor(sym, b, sizes, dimAt) {
  const known = () => sizes().filter((n) => n >= b).sort((x, y) => x - y);
  /** The least n > from where the dim exceeds its size at from (null: none found, or it falls). */
  const step = (from) => {
    const v = dimAt(from);
    let lo = from, hi = null;
    for (const n of known()) {   // the tightest bracket the sizes bound so far give
      const d = dimAt(n);
      if (d === null || d < v && n > from) return null;
      if (n > from && d === v) lo = n;
      else if (n > from && d > v) { hi = n; break; }
    }
    for (const far of [from + 64, from + 256]) {   // past the sizes bound: a far size above the step
      if (hi !== null) break;
      const d = dimAt(far);
      if (d !== null && d > v) hi = far;
    }
    if (hi === null) return null;
    while (hi - lo > 1) {
      const mid = lo + Math.floor((hi - lo) / 2), d = dimAt(mid);
      if (d === null || d < v) return null;
      if (d === v) lo = mid;
      else hi = mid;
    }
    return hi;
  };
  const j1 = step(b);
  const j2 = j1 === null ? null : step(j1);
  if (j2 === null) return null;
  const d = j2 - j1, q = dimAt(j1) - dimAt(j1 - 1);
  if (d < 2 || dimAt(j2) - dimAt(j2 - 1) !== q) return null;   // d = 1 is a line, which fitOne names
  const c = ((-j1 % d) + d) % d, e = dimAt(j1) - q * ((j1 + c) / d);
  const form = (n) => q * Math.floor((n + c) / d) + e;
  // the third step where the form puts it, and every size bound
  for (const n of [j2 + d - 1, j2 + d]) if (dimAt(n) !== null && dimAt(n) !== form(n)) return null;
  if (known().some((n) => dimAt(n) !== form(n))) return null;
  return floorText(sym, q, c, d, e);
}

/**
 * A dim as a number, an expression of the symbols, or '?': base its size in the base plan,
 * moves[sym] its [[size of sym, dim]...] in the plans that moved sym (the base's first);
 * floorOf(sym): its floor form in sym (fitFloor), or null.
 */
function nameDim(base, moves, far, floorOf) {
  const moved = Object.keys(moves).filter((s) => moves[s].some(([, d]) => d !== base));
  if (!moved.length) return Object.keys(moves).every((s) => far[s]) ? base : '?';
  if (moved.some(unnamed)) return '?';
  if (moved.length === 1) return fitOne(moved[0], moves[moved[0]]) ?? floorOf(moved[0]) ?? '?';
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
  const runs = {}, far = {}, byOnes = {};   // per symbol: [[its size, shapes]...] (the base's first); whether a far size planned; whether it moved by ones
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
      byOnes[sym] = i === 0;
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
  // every plan of a symbol that moves by ones, by its size (null: it does not bind there), for
  // fitFloor to bind more: one plan serves every dim that asks for that size
  const bound = Object.fromEntries(Object.keys(runs).filter((sym) => byOnes[sym]).map((sym) => [sym, new Map(runs[sym])]));
  const planOf = (sym, n) => {
    if (!bound[sym].has(n)) {
      let p = null;
      try {
        p = plan({ ...base, [sym]: n });
      } catch {
        // not at this size: the form is not pinned there
      }
      bound[sym].set(n, p);
    }
    return bound[sym].get(n);
  };
  const floorOf = (name, k, rank) => (sym) => bound[sym] ? fitFloor(sym, base[sym], () => [...bound[sym].keys()], (n) => {
    const v = planOf(sym, n)?.[name];
    return v && v.dims.length === rank ? v.dims[k] : null;
  }) : null;
  const values = {};
  for (const [name, { type, dims }] of Object.entries(at0)) {
    const all = Object.values(runs).flatMap((r) => r.map(([, p]) => p[name]));
    if (all.some((v) => v?.dims.length !== dims.length)) continue;   // a rank that moves: no shape to show
    values[name] = {
      dtype: type ?? 'unknown',
      shape: dims.map((d, k) => nameDim(d, Object.fromEntries(Object.entries(runs).map(([s, r]) => [s, r.map(([n, p]) => [n, p[name].dims[k]])])), far,
        floorOf(name, k, dims.length))),
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
