// Random models for the tracer's differential test (fuzz.mjs, ../random-models.test.mjs).
//
//   import { generate, render } from './generator.mjs';
//   const c = generate(1, 17);      // model 17 of seed 1: a plain, JSON-able object
//   console.log(render(c));         // its JS source: the model and its inputs, as a user writes them
//
// A model is built shape-aware, one statement at a time: every value's sizes are tracked (their
// example value, a canonical form that tells sizes equal at every input size apart from sizes
// equal only at the example, and the JS text the model computes them with), so each model runs
// eagerly at its example sizes, and size arithmetic is written the way users write it:
// `const [B, T, C] = x.shape`, `x.select(1, T - 1)`, `x.reshape(B * T, C)`, `x.sum(1).div(T)`,
// `om.arange(T)`, `om.ones([T, T]).tril()`. The case is data (inputs, declarations, statements),
// so the shrinker (shrink.mjs) can drop statements and render again.
//
// Pure JS, no onemodel import: the same (seed, index) gives the same model on every machine (an
// own PRNG on 32-bit integer arithmetic; floats only as exact ratios of integers).

// ---- PRNG: sfc32, seeded by hashing (seed, index) --------------------------------------------

function mix32(x) {
  x = Math.imul(x ^ (x >>> 16), 0x7feb352d);
  x = Math.imul(x ^ (x >>> 15), 0x846ca68b);
  return (x ^ (x >>> 16)) >>> 0;
}

export class Rng {
  /** keys: non-negative integers below 2^53 (a seed and an index). */
  constructor(...keys) {
    let h = 0x9e3779b9;
    const s = [];
    for (let i = 0; i < 4; i++) {
      for (const k of keys) h = mix32(h ^ mix32((k >>> 0) ^ Math.imul(i + 1, 0x85ebca6b)) ^ mix32(Math.floor(k / 2 ** 32) + i));
      s.push(h);
    }
    this.s = s;
    for (let i = 0; i < 12; i++) this.u32();
  }

  u32() {
    let [a, b, c, d] = this.s;
    const t = (a + b + d) >>> 0;
    d = (d + 1) >>> 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) >>> 0;
    c = (((c << 21) | (c >>> 11)) + t) >>> 0;
    this.s = [a, b, c, d];
    return t;
  }

  /** An integer in [lo, hi]. */
  int(lo, hi) { return lo + (this.u32() % (hi - lo + 1)); }
  chance(p) { return this.u32() < p * 4294967296; }
  pick(list) { return list[this.int(0, list.length - 1)]; }
  /** One item of [[weight, item], ...] (weights > 0). */
  weighted(list) {
    const total = list.reduce((s, [w]) => s + w, 0);
    let u = (this.u32() / 4294967296) * total;
    for (const [w, item] of list) { if ((u -= w) < 0) return item; }
    return list[list.length - 1][1];
  }
  /** A permutation of 0..n-1. */
  perm(n) {
    const p = Array.from({ length: n }, (_, i) => i);
    for (let i = n - 1; i > 0; i--) { const j = this.int(0, i); [p[i], p[j]] = [p[j], p[i]]; }
    return p;
  }
}

// ---- sizes ------------------------------------------------------------------------------------
//
// A size's canonical form is a polynomial over atoms: the declared symbols, and derived atoms
// such as the floor term ⌊(H + b) / s⌋ of a strided window (the registry of a model gives equal
// terms one atom, so a 3x3 stride-2 conv with padding 1 and a 1x1 stride-2 downsample get the
// same height, as they do at every size). Polynomials are Maps monomial -> coefficient, a
// monomial the sorted atom ids joined by '*' ('' for the constant term).

const poly = {
  of(c) { return c ? new Map([['', c]]) : new Map(); },
  atom(id) { return new Map([[id, 1]]); },
  add(p, q, k = 1) {
    const r = new Map(p);
    for (const [m, c] of q) {
      const v = (r.get(m) ?? 0) + k * c;
      if (v) r.set(m, v); else r.delete(m);
    }
    return r;
  },
  mul(p, q) {
    let r = new Map();
    for (const [m1, c1] of p) {
      for (const [m2, c2] of q) {
        const m = [...(m1 ? m1.split('*') : []), ...(m2 ? m2.split('*') : [])].sort().join('*');
        r = poly.add(r, new Map([[m, c1 * c2]]));
      }
    }
    return r;
  },
  divExact(p, k) {
    const r = new Map();
    for (const [m, c] of p) { if (c % k) return null; r.set(m, c / k); }
    return r;
  },
  constant(p) { return p.size === 0 ? 0 : p.size === 1 && p.has('') ? p.get('') : null; },
  key(p) {
    return [...p].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([m, c]) => (m ? `${c}*${m}` : `${c}`)).join('+') || '0';
  },
};

/**
 * One axis length as the model sees it. v: the example value; p: the canonical polynomial; e:
 * the JS text computing it in the model, or make: a function that writes that text when a rule
 * first needs it (so a size no argument uses emits nothing); with neither, the text is a name
 * read off the shape of src, the first value that has the size. prec: the text's precedence (0
 * atom, 1 product, 2 sum). factors: [a, b] when the model formed it as a product (a flatten), so
 * it can be split back.
 */
class Size {
  constructor(v, p, e = null, prec = 0, make = null) {
    this.v = v;
    this.p = p;
    this.e = e;
    this.prec = prec;
    this.make = make;
    this.src = null;
    this.factors = null;
  }
  get key() { return poly.key(this.p); }
  get fixed() { return poly.constant(this.p) !== null; }
}

const sameSize = (a, b) => a.key === b.key;
const isOne = (s) => s.fixed && s.v === 1;
const numel = (shape) => shape.reduce((n, s) => n * s.v, 1);
/** The example numel past which a rule does not grow a value (the runner also runs at 2s + 1). */
const MAX_NUMEL = 3000;

/** Right-aligned broadcast of two shapes whose sizes agree at every size (or are fixed 1), else null. */
function broadcast(a, b) {
  const n = Math.max(a.length, b.length);
  const out = [];
  for (let i = 0; i < n; i++) {
    const x = a[a.length - n + i], y = b[b.length - n + i];
    if (!x) out.push(y);
    else if (!y) out.push(x);
    else if (sameSize(x, y) || isOne(y)) out.push(x);
    else if (isOne(x)) out.push(y);
    else return null;
  }
  return out;
}

// ---- the model being built ---------------------------------------------------------------------

// Fixed widths, and the sizes symbols take at their examples: disjoint, so a fixed size equals a
// symbol's example size only where a model does it on purpose (width(), the 'coincide' tag).
const FIXED_POOL = [2, 4, 6, 8];

class Builder {
  constructor(rng, family) {
    this.r = rng;
    this.family = family;
    this.inputs = [];       // { name, dtype, shape: number[], axes: (string|null)[], high? }
    this.decls = [];        // { name, code }: modules and constants, made before the model runs
    this.body = [];         // { code, defs }: the forward's statements
    this.pool = [];         // values a rule may take: { name, dtype, shape: Size[] }
    this.symbols = [];      // { name, v }
    this.named = [];        // sizes with a text in scope (input sizes, and sizes the model computed)
    this.atoms = new Map(); // derived atom signature -> id
    this.atomSyms = new Map(); // atom id -> symbol names it depends on
    this.n = 0;
    this.textLog = [];      // [size, its make] for each size given a text (undone by restore)
    this.fixedSeen = new Set(); // fixed sizes >= 2 the model uses (for the coincidence tag)
    this.tags = new Set();
    this.zeroChecks = [];   // symbols the runner also checks at size 0
    this.multiples = {};    // symbol -> k: declared om.Dim(symbol, { multipleOf: k })
    this.maxes = {};        // symbol -> c: declared om.Dim(symbol, { max: c })
    this.farChecks = [];    // assignments ({ symbol: size }) the runner also checks: both sides of a threshold
    this.types = {};        // value name -> 'float32[5,7,4]' (its dtype and example shape, for the shrinker)
  }

  fresh(prefix) { return `${prefix}${++this.n}`; }

  // -- sizes
  fixed(n, e = String(n)) {
    if (n >= 2) this.fixedSeen.add(n);
    return new Size(n, poly.of(n), e);
  }
  symbol(name, v) {
    this.atomSyms.set(name, [name]);
    this.symbols.push({ name, v });
    return new Size(v, poly.atom(name), name);
  }
  /** A derived atom of example value v: the same signature gives the same atom (null: a new one). */
  atom(v, signature, syms) {
    const sig = signature ?? `#${this.atoms.size}`;
    if (!this.atoms.has(sig)) {
      const id = `d${this.atoms.size + 1}`;
      this.atoms.set(sig, id);
      this.atomSyms.set(id, syms);
    }
    return new Size(v, poly.atom(this.atoms.get(sig)));
  }
  symsOf(s) {
    const out = new Set();
    for (const m of s.p.keys()) for (const a of m ? m.split('*') : []) for (const x of this.atomSyms.get(a) ?? []) out.add(x);
    return [...out].sort();
  }
  symbolic(s) { return !s.fixed; }

  /** The text computing size s in the model (written now, at the statement being built). */
  ex(s) {
    if (s.e !== null) return s.e;
    this.textLog.push([s, s.make]);
    if (s.make) {
      s.e = s.make();
      s.make = null;
    } else if (s.fixed) {
      s.e = String(s.v);
    } else {
      const syms = this.symsOf(s);
      const name = this.fresh((syms[0] ?? 's').toLowerCase());
      this.emit(`const ${name} = ${s.src.value.name}.shape[${s.src.axis}];`, [name]);
      s.e = name;
      s.prec = 0;
      this.named.push(s);
    }
    return s.e;
  }
  txt(s, level) {
    const t = this.ex(s);
    return s.prec > level ? `(${t})` : t;
  }
  plus(a, k) {
    if (!k) return a;
    return new Size(a.v + k, poly.add(a.p, poly.of(k)), null, 2, () => `${this.txt(a, 2)} ${k < 0 ? '-' : '+'} ${Math.abs(k)}`);
  }
  times(a, b) {
    if (isOne(a)) return b;
    if (isOne(b)) return a;
    const s = new Size(a.v * b.v, poly.mul(a.p, b.p), null, 1, () => `${this.txt(a, 1)} * ${this.txt(b, 1)}`);
    s.factors = [a, b];
    return s;
  }
  scaled(k, a) {
    if (k === 1) return a;
    return new Size(k * a.v, poly.mul(poly.of(k), a.p), null, 1, () => `${k} * ${this.txt(a, 1)}`);
  }
  /** a / k as the model writes it (the example divides; other sizes may not). */
  divided(a, k) {
    const p = poly.divExact(a.p, k);
    const s = p ? new Size(a.v / k, p) : this.atom(a.v / k, `(${a.key})/${k}`, this.symsOf(a));
    s.make = () => `${this.txt(a, 1)} / ${k}`;
    s.prec = 1;
    return s;
  }
  /** The same length, its text read off the shape of the value that will have it (not the formula). */
  unnamed(s) {
    return new Size(s.v, s.p);
  }
  /** ⌊(a + b) / s⌋ (s >= 1), canonical: the signature is the polynomial a + b and s. */
  floorOf(a, b, s) {
    const v = Math.floor((a.v + b) / s);
    if (s === 1) return new Size(v, poly.add(a.p, poly.of(b)));
    if (a.fixed) return this.fixed(v, null);
    return this.atom(v, `⌊(${poly.key(poly.add(a.p, poly.of(b)))})/${s}⌋`, this.symsOf(a));
  }
  /** Output length of a window op: ⌊(a + 2p - d(k-1) - 1) / s⌋ + 1. */
  window(a, k, s, p, d = 1) {
    return this.floorOf(a, 2 * p - d * (k - 1) - 1 + s, s);
  }
  /** A size that is no polynomial of the others, of example value v (new atom, or fixed). */
  opaque(a, v) {
    return a.fixed ? this.fixed(v, null) : this.atom(v, null, this.symsOf(a));
  }
  sum(a, b) {
    return new Size(a.v + b.v, poly.add(a.p, b.p), null, 2, () => `${this.txt(a, 2)} + ${this.txt(b, 2)}`);
  }

  /** What a rule may change, to undo a rule that gave up half-way. */
  snapshot() {
    return [this.body.length, this.decls.length, this.pool.length, this.named.length, this.textLog.length];
  }
  restore([body, decls, pool, named, text]) {
    this.body.length = body;
    this.decls.length = decls;
    this.pool.length = pool;
    this.named.length = named;
    for (const [s, make] of this.textLog.splice(text).reverse()) { s.e = null; s.make = make; }
  }

  /** A fixed width for a layer: usually from the pool, sometimes a symbol's example size on purpose. */
  width(pool = FIXED_POOL) {
    if (this.symbols.length && this.r.chance(0.06)) {
      const s = this.r.pick(this.symbols);
      if (s.v >= 2 && s.v <= 12) { this.tags.add('width=symbol'); return s.v; }
    }
    return this.r.pick(pool);
  }

  // -- values and statements
  value(dtype, shape, dep = true) {
    const v = { name: this.fresh('v'), dtype, shape };
    this.types[v.name] = `${dtype}[${shape.map((s) => s.v)}]`;
    shape.forEach((s, axis) => { if (!s.src && !s.fixed) s.src = { value: v, axis }; });
    for (const s of shape) if (s.fixed && s.v >= 2) this.fixedSeen.add(s.v);
    if (dep) this.pool.push(v);
    return v;
  }
  emit(code, defs = []) { this.body.push({ code, defs }); }
  /** const <v> = code; v of the given dtype and shape. */
  assign(code, shape, dtype = 'float32', tag = null) {
    const v = this.value(dtype, shape);
    this.emit(`const ${v.name} = ${code};`, [v.name]);
    if (tag) this.tags.add(tag);
    return v;
  }
  /** A module or constant made before the model runs; returns its placeholder (@name). */
  decl(prefix, code) {
    const name = this.fresh(prefix);
    this.decls.push({ name, code });
    return `@${name}`;
  }
  /** A constant tensor of the given sizes (standard normal times scale), seeded. */
  constant(sizes, scale = 1) {
    const seed = this.r.int(1, 9999);
    for (const n of sizes) if (n >= 2) this.fixedSeen.add(n);
    return this.decl('w', `om.randn([${sizes.join(', ')}], { seed: ${seed} })${scale === 1 ? '' : `.mul(${scale})`}`);
  }
  input(name, dtype, sizes, extra = {}) {
    const v = { name, dtype, shape: sizes };
    this.types[name] = `${dtype}[${sizes.map((s) => s.v)}]`;
    this.inputs.push({
      name, dtype, shape: sizes.map((s) => s.v), axes: sizes.map((s) => (s.fixed ? null : s.e)), ...extra,
    });
    // const [B, T, C] = x.shape: sizes not yet in scope get their names
    const fresh = sizes.map((s) => (s.e !== null && !this.named.includes(s) && /^[A-Z]\w*$/.test(s.e) ? s.e : null));
    if (fresh.some((n) => n)) {
      if (fresh.filter((n) => n).length === 1) {
        const i = fresh.findIndex((n) => n);
        this.emit(`const ${fresh[i]} = ${name}.shape[${i}];`, [fresh[i]]);
      } else {
        const last = fresh.length - 1 - [...fresh].reverse().findIndex((n) => n);
        this.emit(`const [${fresh.slice(0, last + 1).map((n) => n ?? '').join(', ')}] = ${name}.shape;`, fresh.filter((n) => n));
      }
      sizes.forEach((s, i) => { if (fresh[i]) this.named.push(s); });
    }
    for (const s of sizes) if (s.fixed && s.v >= 2) this.fixedSeen.add(s.v);
    if (dtype === 'float32') this.pool.push(v);
    return v;
  }

  /** A pool value, recent ones more often; with a predicate, only those that satisfy it. */
  pickValue(pred = () => true) {
    const ok = this.pool.filter((v) => v.dtype === 'float32' && pred(v));
    if (!ok.length) return null;
    if (this.r.chance(0.7)) return ok[Math.max(0, ok.length - 1 - this.r.int(0, 2))];
    return this.r.pick(ok);
  }
  /** A pool value other than v with a shape that broadcasts with v's (at every size). */
  partnerOf(v, pred = (w) => broadcast(v.shape, w.shape)) {
    const ok = this.pool.filter((w) => w !== v && w.dtype === 'float32' && pred(w));
    return ok.length ? this.r.pick(ok) : null;
  }
  axis(v, pred = () => true) {
    const axes = v.shape.map((_, i) => i).filter((i) => pred(v.shape[i], i));
    if (!axes.length) return null;
    const sym = axes.filter((i) => this.symbolic(v.shape[i]));
    return sym.length && this.r.chance(0.45) ? this.r.pick(sym) : this.r.pick(axes);
  }
  /** A dim argument for axis i of a rank-r value: i or, sometimes, i - r. */
  dim(i, r) { return this.r.chance(0.3) ? i - r : i; }
}

// ---- rules: each takes the builder and a value, and returns the new value or null -------------

const UNARY = [
  '$.relu()', '$.sigmoid()', '$.tanh()', '$.neg()', '$.abs()', '$.tanh().exp()', '$.abs().add(1).log()',
  '$.abs().sqrt()', '$.abs().add(1).rsqrt()', '$.erf()', 'F.gelu($)', "F.gelu($, { approximate: 'tanh' })",
  'F.silu($)', 'F.elu($)', 'F.leakyRelu($, 0.2)', 'F.softplus($)', 'F.hardswish($)', '$.clamp(-0.5, 0.5)',
  '$.clamp({ min: 0 })', '$.pow(2)', '$.mul(0.5)', '$.add(1)', '$.sub(0.25)', '$.div(2)',
  'F.dropout($, { training: false })', '$.sigmoid().mul($)', '$.contiguous()', '$.clone()', '$.sign()',
];
const ACTIVATIONS = [
  'new om.nn.ReLU()', 'new om.nn.GELU()', 'new om.nn.SiLU()', 'new om.nn.Tanh()', 'new om.nn.LeakyReLU(0.1)',
  'new om.nn.ELU()', 'new om.nn.Softplus()', 'new om.nn.Hardswish()', 'new om.nn.Sigmoid()', 'new om.nn.Dropout(0.2)',
  'new om.nn.Identity()',
];
const fill = (template, v) => template.replaceAll('$', v.name);

/** Sizes as reshape arguments: each its text, sometimes one of them -1 (not with an empty one: -1 is ambiguous there). */
function sizeArgs(g, sizes) {
  const args = sizes.map((s) => g.ex(s));
  if (sizes.every((s) => s.v > 0) && sizes.length && g.r.chance(0.3)) args[g.r.int(0, sizes.length - 1)] = '-1';
  return args.join(', ');
}

const rules = {
  unary(g, v) {
    return g.assign(fill(g.r.pick(UNARY), v), v.shape);
  },
  activation(g, v) {
    return g.assign(`${g.decl('act', g.r.pick(ACTIVATIONS))}.forward(${v.name})`, v.shape);
  },
  along(g, v) { // softmax-like ops along one axis
    if (!v.shape.length) return null;
    const i = g.axis(v);
    const d = g.dim(i, v.shape.length);
    const op = g.r.pick([`$.softmax(${d})`, `$.logSoftmax(${d})`, `F.softmax($, ${d})`, `$.cumsum(${d})`, `F.logSoftmax($, ${d})`,
      `${g.decl('sm', `new om.nn.${g.r.pick(['Softmax', 'LogSoftmax'])}(${d})`)}.forward($)`]);
    return g.assign(fill(op, v), v.shape, 'float32', op.includes('cumsum') ? 'cumsum' : 'softmax');
  },
  sizeScalar(g, v) { // x.div(T), x.mul(1 / Math.sqrt(C)), x.sum(1).div(T)
    if (!v.shape.length) return null;
    const i = g.axis(v, (s) => s.v > 0);
    if (i === null) return null;
    const s = v.shape[i];
    const form = g.r.int(0, 3);
    const tag = g.symbolic(s) ? 'scalar-of-symbol' : 'scalar-of-fixed';
    if (form === 0) return g.assign(`${v.name}.mul(1 / Math.sqrt(${g.ex(s)}))`, v.shape, 'float32', tag);
    if (form === 1) return g.assign(`${v.name}.div(${g.ex(s)})`, v.shape, 'float32', tag);
    const keep = form === 3;
    const shape = keep ? v.shape.map((x, k) => (k === i ? g.fixed(1) : x)) : v.shape.filter((_, k) => k !== i);
    return g.assign(`${v.name}.sum(${g.dim(i, v.shape.length)}${keep ? ', true' : ''}).div(${g.ex(s)})`, shape, 'float32', tag);
  },
  selfBinary(g, v) {
    if (!v.shape.length || v.shape.some((s) => s.v === 0)) return null;
    const d = g.dim(g.axis(v), v.shape.length);
    const op = g.r.pick([`$.sub($.mean(${d}, true))`, `$.div($.abs().amax(${d}, true).add(1))`, `$.sub($.amax(${d}, true)).exp()`,
      '$.mul($)', `$.mul($.sum(${d}, true).sigmoid())`]);
    return g.assign(fill(op, v), v.shape);
  },
  partnerBinary(g, v) {
    const w = g.partnerOf(v);
    if (!w) return null;
    const shape = broadcast(v.shape, w.shape);
    if (numel(shape) > MAX_NUMEL) return null;
    const [a, b] = g.r.chance(0.5) ? [v, w] : [w, v];
    const op = g.r.pick(['add', 'sub', 'mul', 'div', 'where']);
    const code = op === 'div' ? `${a.name}.div(${b.name}.abs().add(1))`
      : op === 'where' ? `om.where(${a.name}.gt(${b.name}), ${a.name}, ${b.name})` : `${a.name}.${op}(${b.name})`;
    return g.assign(code, shape, 'float32', 'broadcast');
  },
  constBinary(g, v) { // x.add(w) with a constant that broadcasts: symbolic axes get 1 (rarely the example size: refused)
    if (!v.shape.length) return null;
    const k = g.r.int(1, v.shape.length);
    let trap = false;
    const sizes = v.shape.slice(v.shape.length - k).map((s) => {
      if (g.symbolic(s)) { if (g.r.chance(0.03)) { trap = true; return s.v; } return 1; }
      return g.r.chance(0.8) ? s.v : 1;
    });
    const w = g.constant(sizes);
    return g.assign(`${v.name}.${g.r.pick(['add', 'mul', 'sub'])}(${w})`, v.shape, 'float32', trap ? 'constant-of-symbol-size' : null);
  },
  compare(g, v) { // thresholds away from the values compared: x >= mean(x) ties exactly where x is constant along d,
    // and float32 and double then round the mean to different sides (a false alarm); none at 1 / n (a mean of a
    // softmax over n is 1 / n: 0.5 at n = 2) nor at 1 (a saturated tanh), where one rounding or another decides
    if (!v.shape.length || v.shape.some((s) => s.v === 0)) return null;
    const d = g.dim(g.axis(v), v.shape.length);
    const op = g.r.pick(['om.where($.gt(0), $, $.mul(0.1))', '$.maskedFill($.lt(-0.5), 0)', '$.gt(0).float()',
      `$.ge($.mean(${d}, true).add(0.1)).float().mul($)`, 'om.where($.abs().lt(0.95), $, 0)', '$.le(0.45).float().add($)']);
    return g.assign(fill(op, v), v.shape, 'float32', 'bool');
  },
  reduce(g, v) {
    if (!v.shape.length) return null;
    const r = v.shape.length;
    const i = g.axis(v, (s) => s.v > 0);
    if (i === null) return null;
    const keep = g.r.chance(0.4);
    const drop = (axes) => (keep ? v.shape.map((s, k) => (axes.includes(k) ? g.fixed(1) : s)) : v.shape.filter((_, k) => !axes.includes(k)));
    const form = g.r.int(0, 9);
    const d = g.dim(i, r);
    if (form <= 4) {
      const op = g.r.pick(['sum', 'mean', 'amax', 'amin', 'mean']);
      let axes = [i];
      if (r >= 2 && g.r.chance(0.25)) {
        const j = g.axis(v, (s, k) => k !== i && s.v > 0);
        if (j !== null) axes = [i, j];
      }
      const arg = axes.length === 1 ? d : `[${axes.map((a) => g.dim(a, r)).join(', ')}]`;
      return g.assign(`${v.name}.${op}(${arg}${keep ? ', true' : ''})`, drop(axes), 'float32', 'reduce');
    }
    if (form === 5 && r <= 3 && g.r.chance(0.3)) { // an extreme of nothing does not exist: amax only of a non-empty tensor
      const ops = v.shape.every((s) => s.v > 0) ? ['sum', 'mean', 'amax'] : ['sum', 'mean'];
      return g.assign(`${v.name}.${g.r.pick(ops)}()`, []);
    }
    const kd = keep ? ', true' : '';
    const op = g.r.pick([`$.max(${d}${kd})[0]`, `$.min(${d}${kd})[0]`, `$.argmax(${d}${kd}).float()`, `$.max(${d}${kd})[1].float()`,
      `$.argmin(${d}${kd}).float()`]);
    if (!op.includes('arg') && !op.includes('[1]')) return g.assign(fill(op, v), drop([i]), 'float32', 'reduce');
    // an index of the extreme: values the model computed can tie exactly (a masked softmax's
    // zeros), and then onnxruntime's last bits pick another index than eager's. A ramp of
    // 1e-3 along the axis (om.arange of its size, as a model writes it) separates them.
    const ramp = `om.arange(${g.ex(v.shape[i])}, { dtype: 'float32' }).mul(0.001).reshape(${v.shape.map((_, k) => (k === i ? -1 : 1)).join(', ')})`;
    return g.assign(fill(op, v).replace(/^([a-z0-9_]+)\./, `$1.add(${ramp}).`), drop([i]), 'float32', 'int64');
  },
  linear(g, v) { // nn.Linear, F.linear or matmul with a constant, on the last (fixed) axis
    const last = v.shape[v.shape.length - 1];
    if (!last || !last.fixed || last.v === 0) return null;
    const k = last.v;
    const m = g.width();
    const scale = Number((1 / Math.sqrt(k)).toFixed(3));
    const out = [...v.shape.slice(0, -1), g.fixed(m)];
    const form = g.r.int(0, 5);
    if (form <= 1) return g.assign(`${g.decl('lin', `new om.nn.Linear(${k}, ${m}${g.r.chance(0.2) ? ', { bias: false }' : ''})`)}.forward(${v.name})`, out, 'float32', 'linear');
    if (form === 2) return g.assign(`F.linear(${v.name}, ${g.constant([m, k], scale)}, ${g.constant([m])})`, out, 'float32', 'linear');
    if (form === 3 && g.r.chance(0.3)) return g.assign(`${v.name}.matmul(${g.constant([k], scale)})`, v.shape.slice(0, -1), 'float32', 'matmul');
    if (form === 4) {
      const h = g.width();
      const mlp = `new om.nn.Sequential(new om.nn.Linear(${k}, ${h}), ${g.r.pick(ACTIVATIONS)}, new om.nn.Linear(${h}, ${m}))`;
      return g.assign(`${g.decl('mlp', mlp)}.forward(${v.name})`, out, 'float32', 'linear');
    }
    return g.assign(`${v.name}.matmul(${g.constant([k, m], scale)})`, out, 'float32', 'matmul');
  },
  matmulPair(g, v) { // x @ x^T, x @ y^T, x @ y: batch axes must agree
    const r = v.shape.length;
    if (r < 2) return null;
    const [n, k] = v.shape.slice(-2);
    const batch = v.shape.slice(0, -2);
    const sameBatch = (w) => w.shape.length === r && w.shape.slice(0, -2).every((s, i) => sameSize(s, batch[i]));
    const form = g.r.int(0, 2);
    let code, out;
    if (form === 0) {
      code = `${v.name}.matmul(${v.name}.transpose(-2, -1))`;
      out = [...batch, n, n];
    } else {
      const w = form === 1 ? g.partnerOf(v, (x) => sameBatch(x) && sameSize(x.shape[r - 1], k))
        : g.partnerOf(v, (x) => sameBatch(x) && sameSize(x.shape[r - 2], k));
      if (!w) return null;
      code = form === 1 ? `${v.name}.matmul(${w.name}.transpose(-2, -1))` : `om.matmul(${v.name}, ${w.name})`;
      out = [...batch, n, w.shape[form === 1 ? r - 2 : r - 1]];
    }
    if (numel(out) > MAX_NUMEL || k.v === 0) return null;
    if (g.r.chance(0.5)) code += `.mul(1 / Math.sqrt(${g.ex(k)}))`;
    return g.assign(code, out, 'float32', 'matmul');
  },
  reshapeMerge(g, v) { // [.., a, b, ..] -> [.., a * b, ..] by reshape / view / flatten
    const r = v.shape.length;
    if (r < 2) return null;
    const i = g.r.int(0, r - 2);
    const merged = g.times(v.shape[i], v.shape[i + 1]);
    const out = [...v.shape.slice(0, i), merged, ...v.shape.slice(i + 2)];
    const form = g.r.int(0, 2);
    const code = form === 0 ? `${v.name}.flatten(${i}, ${i + 1})`
      : `${v.name}.${form === 1 ? 'reshape' : 'view'}(${sizeArgs(g, out)})`;
    return g.assign(code, out, 'float32', 'reshape');
  },
  reshapeSplit(g, v) { // [.., a * b, ..] -> [.., a, b, ..]; a fixed C -> (h, C / h); rarely T -> (T / 2, 2)
    const r = v.shape.length;
    if (r < 1 || r > 5) return null;
    const cands = v.shape.map((s, i) => i).filter((i) => {
      const s = v.shape[i];
      return s.factors || (s.fixed && s.v >= 4 && s.v % 2 === 0) || (!s.fixed && s.v % 2 === 0 && s.v >= 4);
    });
    if (!cands.length) return null;
    const i = g.r.pick(cands);
    const s = v.shape[i];
    let parts;
    let tag = 'reshape';
    if (s.factors) parts = s.factors;
    else if (s.fixed) {
      const divs = [2, 3, 4].filter((h) => s.v % h === 0 && h < s.v);
      const h = g.r.pick(divs);
      parts = g.r.chance(0.7) ? [g.fixed(h), g.divided(s, h)] : [g.divided(s, h), g.fixed(h)];
    } else {
      if (!g.r.chance(0.3)) return null;
      parts = [g.divided(s, 2), g.fixed(2)];
      tag = 'reshape-halve-symbol';
      // mostly as a user does once the refusal suggests it: the symbol declared a multiple of 2
      if (g.symbols.some((y) => y.name === s.e) && g.r.chance(0.7)) {
        g.multiples[s.e] = 2;
        tag = 'reshape-halve-declared';
      }
    }
    const out = [...v.shape.slice(0, i), ...parts, ...v.shape.slice(i + 1)];
    return g.assign(`${v.name}.reshape(${sizeArgs(g, out)})`, out, 'float32', tag);
  },
  reshapeFlat(g, v) { // reshape(-1), reshape(B, -1), flatten(1)
    const r = v.shape.length;
    if (r < 2 || v.shape.some((s) => s.v === 0)) return null;
    const form = g.r.int(0, 3);
    const all = v.shape.reduce((a, s) => g.times(a, s));
    if (form === 0) return g.assign(`${v.name}.reshape(-1)`, [all], 'float32', 'reshape');
    const rest = v.shape.slice(1).reduce((a, s) => g.times(a, s));
    const out = [v.shape[0], rest];
    if (form === 1) return g.assign(`${v.name}.reshape(${g.ex(v.shape[0])}, -1)`, out, 'float32', 'reshape');
    if (form === 2) return g.assign(`${v.name}.flatten(1)`, out, 'float32', 'reshape');
    return g.assign(`${g.decl('flat', 'new om.nn.Flatten()')}.forward(${v.name})`, out, 'float32', 'reshape');
  },
  permute(g, v) {
    const r = v.shape.length;
    if (r < 2) return null;
    const form = g.r.int(0, 2);
    if (form === 0 && r >= 3) {
      let p = g.r.perm(r);
      if (p.every((x, i) => x === i)) p = [1, 0, ...p.slice(2)];
      return g.assign(`${v.name}.permute(${p.join(', ')})`, p.map((i) => v.shape[i]), 'float32', 'permute');
    }
    if (r === 2 && g.r.chance(0.4)) return g.assign(`${v.name}.t()`, [v.shape[1], v.shape[0]], 'float32', 'permute');
    const i = g.r.int(0, r - 1);
    let j = g.r.int(0, r - 2);
    if (j >= i) j++;
    const out = v.shape.slice();
    [out[i], out[j]] = [out[j], out[i]];
    return g.assign(`${v.name}.transpose(${g.dim(i, r)}, ${g.dim(j, r)})`, out, 'float32', 'permute');
  },
  unsqueeze(g, v) {
    const r = v.shape.length;
    const ones = v.shape.map((s, i) => i).filter((i) => isOne(v.shape[i]));
    if (ones.length && g.r.chance(0.6)) {
      const i = g.r.pick(ones);
      return g.assign(`${v.name}.squeeze(${g.dim(i, r)})`, v.shape.filter((_, k) => k !== i), 'float32', 'squeeze');
    }
    if (ones.length && g.r.chance(0.3)) {
      return g.assign(`${v.name}.squeeze()`, v.shape.filter((s) => s.v !== 1), 'float32', 'squeeze-all');
    }
    if (r >= 6) return null;
    const i = g.r.int(0, r);
    const out = [...v.shape.slice(0, i), g.fixed(1), ...v.shape.slice(i)];
    return g.assign(`${v.name}.unsqueeze(${g.r.chance(0.3) ? i - r - 1 : i})`, out, 'float32', 'unsqueeze');
  },
  slice(g, v) {
    const r = v.shape.length;
    const i = g.axis(v, (s) => s.v >= 2);
    if (i === null) return null;
    const s = v.shape[i];
    const d = g.dim(i, r);
    const E = () => g.ex(s);
    let code, size, tag = g.symbolic(s) ? 'slice-symbolic' : 'slice-fixed';
    const k = g.r.int(1, Math.min(2, s.v - 1));
    switch (g.r.int(0, g.symbolic(s) ? 9 : 3)) {
      case 0: { const a = g.r.int(0, s.v - 1); const b = g.r.int(a + 1, s.v); code = `slice(${d}, ${a}, ${b})`; size = g.fixed(b - a); break; }
      case 1: code = `slice(${d}, ${k})`; size = g.plus(s, -k); break;
      case 2: code = `slice(${d}, 0, -${k})`; size = g.plus(s, -k); break;
      case 3: code = `slice(${d}, -${k})`; size = g.fixed(k); break;
      case 4: code = `slice(${d}, 0, ${E()} - ${k})`; size = g.plus(s, -k); break;
      case 5: if (s.v < 3) return null; code = `slice(${d}, 1, ${E()} - 1)`; size = g.plus(s, -2); break;
      case 6: code = `slice(${d}, 0, ${E()}, 2)`; size = g.floorOf(s, 1, 2); tag = 'slice-step'; break;
      case 7: code = `slice(${d}, 0, ${E()})`; size = s; tag = 'slice-full'; break;
      case 8:
        return g.assign(`${v.name}.narrow(${d}, ${k}, ${E()} - ${k})`, v.shape.map((x, j) => (j === i ? g.plus(s, -k) : x)), 'float32', 'narrow');
      default: code = `slice(${d}, ${k}, ${E()})`; size = g.plus(s, -k); break;
    }
    return g.assign(`${v.name}.${code}`, v.shape.map((x, j) => (j === i ? size : x)), 'float32', tag);
  },
  select(g, v) {
    const r = v.shape.length;
    const i = g.axis(v, (s) => s.v >= 1);
    if (i === null) return null;
    const s = v.shape[i];
    const out = v.shape.filter((_, j) => j !== i);
    const d = g.dim(i, r);
    const idx = g.symbolic(s)
      ? g.r.pick([`${g.ex(s)} - 1`, '-1', '0', ...(s.v >= 2 ? [`${g.ex(s)} - 2`, '1'] : [])])
      : String(g.r.chance(0.3) ? -g.r.int(1, s.v) : g.r.int(0, s.v - 1));
    return g.assign(`${v.name}.select(${d}, ${idx})`, out, 'float32', g.symbolic(s) ? (idx.includes('-') ? 'select-last' : 'select-symbolic') : 'select');
  },
  split(g, v) { // a piece of split(k) or of chunk(n) (om has no chunk: a helper splits by ceil(size / n))
    const r = v.shape.length;
    const i = g.axis(v, (s) => s.v >= 2);
    if (i === null) return null;
    const s = v.shape[i];
    const d = g.dim(i, r);
    const form = g.r.int(0, 3);
    let code, size;
    if (form === 2) {
      const n = g.r.int(2, Math.min(3, s.v));
      const piece = Math.ceil(s.v / n);
      code = `chunk(${v.name}, ${n}, ${d})[0]`;
      size = g.symbolic(s) ? g.floorOf(s, n - 1, n) : g.fixed(piece, null);
    } else {
      const k = g.r.int(1, s.v - 1);
      if (form === 0) { code = `${v.name}.split(${k}, ${d})[0]`; size = g.fixed(k); }
      else if (form === 1) { code = `${v.name}.split(${k}, ${d})[1]`; size = g.opaque(s, Math.min(k, s.v - k)); }
      else { code = `${v.name}.split(${k}, ${d}).at(-1)`; size = g.opaque(s, s.v % k || k); }
    }
    return g.assign(code, v.shape.map((x, j) => (j === i ? size : x)), 'float32', g.symbolic(s) ? 'split-symbolic' : 'split');
  },
  cat(g, v) {
    const r = v.shape.length;
    if (!r) return null;
    const i = g.axis(v);
    const s = v.shape[i];
    const d = g.dim(i, r);
    const sameBut = (w) => w.shape.length === r && w.shape.every((x, k) => k === i || sameSize(x, v.shape[k]));
    const at = (size) => v.shape.map((x, k) => (k === i ? size : x));
    switch (g.r.int(0, 5)) {
      case 0: return g.assign(`om.cat([${v.name}, ${v.name}.tanh()], ${d})`, at(g.scaled(2, s)), 'float32', 'cat-self');
      case 1: return s.v >= 1 ? g.assign(`om.cat([${v.name}.slice(${d}, 1), ${v.name}.slice(${d}, 0, 1)], ${d})`, at(s), 'float32', 'cat-roll') : null;
      case 2: {
        const w = g.partnerOf(v, sameBut);
        return w ? g.assign(`om.cat([${v.name}, ${w.name}], ${d})`, at(g.sum(s, w.shape[i])), 'float32', 'cat') : null;
      }
      case 3: { // an empty piece: a zero-size slice, or zeros of size 0 made in the model
        const piece = g.r.chance(0.5) ? `${v.name}.slice(${d}, 0, 0)` : `om.zeros([${v.shape.map((x, k) => (k === i ? '0' : g.ex(x))).join(', ')}])`;
        return g.assign(`om.cat([${v.name}, ${piece}], ${d})`, v.shape, 'float32', 'empty');
      }
      case 4: {
        const at2 = g.r.int(0, r);
        return g.assign(`om.stack([${v.name}, ${v.name}.neg()], ${at2})`, [...v.shape.slice(0, at2), g.fixed(2), ...v.shape.slice(at2)], 'float32', 'stack');
      }
      default: return s.v >= 1 ? g.assign(`om.cat([${v.name}, ${v.name}.slice(${d}, 0, 1)], ${d})`, at(g.plus(s, 1)), 'float32', 'cat') : null;
    }
  },
  pad(g, v) {
    const r = v.shape.length;
    if (r < 1) return null;
    const empty = v.shape.some((s) => s.v === 0); // reflect and replicate take no empty dim
    const mode = r >= 2 && r <= 4 && !empty && g.r.chance(0.35) ? g.r.pick(['reflect', 'replicate']) : 'constant';
    // reflect / replicate pad the last 1 or 2 dims of an input with 1 or 2 more dims (PyTorch's rule)
    const dims = mode === 'constant' ? g.r.int(1, Math.min(2, r)) : g.r.int(Math.max(1, r - 2), Math.min(2, r - 1));
    const pads = [];
    const out = v.shape.slice();
    for (let k = 0; k < dims; k++) {
      const s = v.shape[r - 1 - k];
      const max = mode === 'reflect' ? Math.min(2, s.v - 1) : mode === 'replicate' ? (s.v > 0 ? 2 : 0) : 2;
      if (max < 0) return null;
      let a = g.r.int(0, max), b = g.r.int(0, max);
      if (mode === 'constant' && s.v >= 2 && g.r.chance(0.1)) a = -1; // negative pads crop
      pads.push(a, b);
      out[r - 1 - k] = g.plus(s, a + b);
    }
    const extra = mode === 'constant' ? (g.r.chance(0.3) ? ", 'constant', 0.5" : '') : `, '${mode}'`;
    return g.assign(`F.pad(${v.name}, [${pads.join(', ')}]${extra})`, out, 'float32', `pad-${mode}`);
  },
  windowPad(g, v) { // pad a symbolic axis up to a multiple of a window (Longformer's _pad_to_window_size, Swin's
    // pad_r = (window - W % window) % window), sometimes then into windows: [.., T, ..] -> [.., T / w, w, ..] summed
    const r = v.shape.length;
    const i = g.axis(v, (s) => g.symbolic(s) && s.v >= 1);
    if (i === null || !g.symbolic(v.shape[i])) return null;
    const s = v.shape[i], w = g.r.pick([3, 5, 7, 12, 17, 32, 49]);
    const windows = g.floorOf(s, w - 1, w), padded = g.scaled(w, windows);
    windows.make ??= () => `Math.ceil(${g.txt(s, 1)} / ${w})`;
    const out = v.shape.map((x, j) => (j === i ? padded : x));
    if (numel(out) > MAX_NUMEL) return null;
    const amount = g.r.chance(0.7) ? `(${w} - ${g.txt(s, 0)} % ${w}) % ${w}` : `Math.ceil(${g.txt(s, 1)} / ${w}) * ${w} - ${g.txt(s, 1)}`;
    const pads = Array(2 * (r - i)).fill('0');
    pads[2 * (r - 1 - i) + 1] = amount;
    const p = g.assign(`F.pad(${v.name}, [${pads.join(', ')}])`, out, 'float32', 'window-pad');
    if (g.r.chance(0.5) || numel(v.shape) === 0) return p; // -1 has nothing to divide an empty tensor by
    const split = [...v.shape.slice(0, i).map((x) => g.ex(x)), '-1', String(w), ...v.shape.slice(i + 1).map((x) => g.ex(x))];
    return g.assign(`${p.name}.reshape(${split.join(', ')}).sum(${i + 1})`, v.shape.map((x, j) => (j === i ? windows : x)), 'float32', 'windows');
  },
  minMax(g, v) { // a size the model caps or raises: Math.min(T, S), Math.min(T, 3), Math.max(T, S), Math.max(4, T)
    const r = v.shape.length;
    const i = g.axis(v, (s) => g.symbolic(s) && s.v >= 1);
    if (i === null || !g.symbolic(v.shape[i])) return null;
    const s = v.shape[i], d = g.dim(i, r), E = g.ex(s);
    const others = g.named.filter((x) => g.symbolic(x) && x.key !== s.key);
    const o = others.length && g.r.chance(0.6) ? g.r.pick(others) : null;
    const c = g.r.int(1, 6), O = o ? g.ex(o) : String(c), ov = o ? o.v : c;
    const [a, b] = g.r.chance(0.5) ? [E, O] : [O, E];
    const atom = (value, fn) => Object.assign(g.atom(value, null, [...new Set([...g.symsOf(s), ...(o ? g.symsOf(o) : [])])]),
      { make: () => `Math.${fn}(${a}, ${b})` });
    if (g.r.chance(0.5)) { // the first min(T, S) along the axis
      return g.assign(`${v.name}.narrow(${d}, 0, Math.min(${a}, ${b}))`, v.shape.map((x, j) => (j === i ? atom(Math.min(s.v, ov), 'min') : x)), 'float32', 'min-size');
    }
    const out = v.shape.map((x, j) => (j === i ? atom(Math.max(s.v, ov), 'max') : x)); // zeros after it, up to max(T, S)
    if (numel(out) > MAX_NUMEL) return null;
    const pads = Array(2 * (r - i)).fill('0');
    pads[2 * (r - 1 - i) + 1] = `Math.max(${a}, ${b}) - ${g.txt(s, 1)}`;
    return g.assign(`F.pad(${v.name}, [${pads.join(', ')}])`, out, 'float32', 'max-size');
  },
  threshold(g, v) { // a branch on a length far above the example (BigBird's attention type by length, Swin's
    // `if window_size >= pad_H`): T > c ? a : b, c 3 to 40 times the example; a symbol, as a user does
    // once the refusal names the declaration, often declared om.Dim('T', { max: c }); checked on both sides
    const i = g.axis(v, (s) => g.symbolic(s) && s.v >= 1);
    if (i === null || !g.symbolic(v.shape[i])) return null;
    const s = v.shape[i];
    const sym = g.symbols.find((y) => s.key === poly.key(poly.atom(y.name)));
    const c = s.v * g.r.int(3, 40) + g.r.int(0, 5);
    const [a, b] = g.r.pick([['$.relu()', '$.neg()'], ['$.mul(2)', '$.tanh()'], ['$.sigmoid()', '$.abs()']]);
    const declare = sym && !(sym.name in g.maxes) && g.r.chance(0.6);
    if (declare) g.maxes[sym.name] = c;
    if (sym) g.farChecks.push({ [sym.name]: c }, { [sym.name]: c + 1 });
    return g.assign(`${g.txt(s, 2)} > ${c} ? ${fill(b, v)} : ${fill(a, v)}`, v.shape, 'float32', declare ? 'threshold-declared' : 'threshold');
  },
  maskInPlace(g, v) { // a mask made at a size the model reads, written in slices, then used (Swin's attn_mask =
    // x.new_zeros(...); attn_mask[h0:h1] = count; m = zeros(T); m[-k:] = 1): x + m along that axis
    const r = v.shape.length;
    const i = g.axis(v, (s) => g.symbolic(s));
    if (i === null || !g.symbolic(v.shape[i])) return null;
    const s = v.shape[i], m = g.fresh('m'), k = g.r.int(1, 4);
    const writes = [
      () => [`${m}.slice(0, -${k}).fill_(1);`],
      () => [`${m}.slice(0, 0, ${k}).fill_(${g.r.pick([2, -1, 0.5])});`],
      () => [`${m}.slice(0, 0, -${k + 1}).fill_(1);`, `${m}.slice(0, -${k + 1}, -1).fill_(2);`, `${m}.slice(0, -1).fill_(3);`],
      () => [`${m}.slice(0, 1).copy_(om.arange(${g.txt(s, 2)} - 1).float().mul(0.1));`],
      () => [`${m}.slice(0, 0, ${g.txt(s, 2)} - ${k}).add_(${g.r.pick([1, -2])});`],
    ];
    g.emit([`const ${m} = om.zeros([${g.ex(s)}]);`, ...g.r.pick(writes)()].join('\n'), [m]);
    const shape = v.shape.map((_, j) => (j === i ? '-1' : '1'));
    return g.assign(`${v.name}.add(${m}.reshape(${shape.join(', ')}))`, v.shape, 'float32', 'mask-in-place');
  },
  expand(g, v) { // a size-1 axis (or a new leading one) stretched to a size the model has: B, T, 2 * T, 4
    const r = v.shape.length;
    if (r >= 5) return null;
    const targets = g.named.filter((s) => !s.fixed);
    const target = () => {
      const pick = targets.length && g.r.chance(0.75) ? g.r.pick(targets) : g.fixed(g.width([2, 4]));
      return g.r.chance(0.15) && !pick.fixed ? g.scaled(2, pick) : pick;
    };
    const ones = v.shape.map((s, i) => i).filter((i) => isOne(v.shape[i]));
    const lead = !ones.length || g.r.chance(0.3) ? [target()] : [];
    const out = [...lead, ...v.shape.map((s, i) => (ones.includes(i) && g.r.chance(0.8) ? target() : s))];
    if (numel(out) > MAX_NUMEL) return null;
    const args = out.map((s, k) => (k >= lead.length && s === v.shape[k - lead.length] && g.r.chance(0.4) ? '-1' : g.ex(s)));
    return g.assign(`${v.name}.expand(${args.join(', ')})`, out, 'float32', 'expand');
  },
  create(g, v) { // tensors made in the model at sizes read off a shape: arange, ones, zeros, full
    const r = v.shape.length;
    if (!r) return null;
    const i = g.axis(v);
    const s = v.shape[i];
    const form = g.r.int(0, 4);
    const E = g.ex(s);
    const trail = r - 1 - i; // arange along axis i, reshaped to broadcast against v
    const shaped = (t) => (trail === 0 ? t : g.r.chance(0.5) ? `${t}.reshape(${[E, ...Array(trail).fill(1)].join(', ')})` : `${t}${'.unsqueeze(-1)'.repeat(trail)}`);
    if (form === 0) return g.assign(`${v.name}.add(${shaped(`om.arange(${E}, { dtype: 'float32' })`)}.mul(0.1))`, v.shape, 'float32', 'arange');
    if (form === 1) return g.assign(`${v.name}.add(${shaped(`om.arange(0n, BigInt(${E})).float()`)}.mul(0.1))`, v.shape, 'float32', 'arange-int64');
    if (form === 2) return g.assign(`${v.name}.mul(${shaped(`om.arange(1, ${E} + 1, { dtype: 'float32' })`)}.rsqrt())`, v.shape, 'float32', 'arange');
    const sizes = v.shape.map((x, k) => (k === i || g.r.chance(0.5) ? g.ex(x) : '1'));
    const made = form === 3 ? `om.${g.r.pick(['ones', 'zeros'])}([${sizes.join(', ')}])` : `om.full([${sizes.join(', ')}], 0.5)`;
    return g.assign(`${v.name}.${form === 3 ? 'add' : 'mul'}(${made})`, v.shape, 'float32', 'full');
  },
  trilu(g, v) {
    if (v.shape.length < 2) return null;
    return g.assign(`${v.name}.${g.r.pick(['tril()', 'triu()', 'tril(-1)', 'triu(1)'])}`, v.shape, 'float32', 'trilu');
  },
  causal(g, v) { // a causal mask from ones(...).tril() or from two aranges, then a softmax
    const r = v.shape.length;
    if (r < 2) return null;
    const [n, m] = v.shape.slice(-2);
    if (n.v === 0 || m.v === 0) return null;
    const N = g.ex(n), M = g.ex(m);
    const mask = g.r.chance(0.5) ? `om.ones([${N}, ${M}]).tril().eq(0)` : `om.arange(${M}, { dtype: 'float32' }).unsqueeze(0).gt(om.arange(${N}, { dtype: 'float32' }).unsqueeze(1))`;
    return g.assign(`${v.name}.maskedFill(${mask}, ${g.r.pick(['-1e9', '-Infinity'])}).softmax(-1)`, v.shape, 'float32', 'causal-mask');
  },
  gather(g, v) {
    const r = v.shape.length;
    const i = g.axis(v, (s) => s.v >= 2);
    if (i === null) return null;
    const s = v.shape[i];
    const d = g.dim(i, r);
    const at = (size) => v.shape.map((x, k) => (k === i ? size : x));
    const E = g.ex(s);
    switch (g.r.int(0, 5)) {
      case 0: return g.assign(`${v.name}.gather(${d}, ${v.name}.argmax(${d}, true))`, at(g.fixed(1)), 'float32', 'gather');
      case 1: return g.assign(`${v.name}.indexSelect(${d}, om.tensor([1n, 0n]))`, at(g.fixed(2)), 'float32', 'index-select');
      case 2: return g.assign(`${v.name}.indexSelect(${d}, om.arange(0n, BigInt(${E}), 2n))`, at(g.floorOf(s, 1, 2)), 'float32', 'index-select-arange');
      case 3: return g.assign(`${v.name}.indexSelect(${d}, om.arange(BigInt(${E}) - 1n, -1n, -1n))`, at(s), 'float32', 'index-select-reverse');
      case 4: {
        const sizes = v.shape.map((x, k) => (k === i ? '2' : g.ex(x)));
        return g.assign(`${v.name}.gather(${d}, om.zeros([${sizes.join(', ')}], { dtype: 'int64' }))`, at(g.fixed(2)), 'float32', 'gather');
      }
      default: return g.assign(`${v.name}.indexAdd(${d}, om.tensor([0n, 1n]), ${v.name}.slice(${d}, 0, 2).mul(2))`, v.shape, 'float32', 'index-add');
    }
  },
  embedArgmax(g, v) { // an embedding of int64 ids computed in the graph (argmax over a fixed axis)
    const last = v.shape[v.shape.length - 1];
    if (!last || !last.fixed || last.v < 2) return null;
    const dim = g.width();
    // (the ramp keeps exact ties apart, as in reduce)
    return g.assign(`${g.decl('emb', `new om.nn.Embedding(${last.v}, ${dim})`)}.forward(${v.name}.add(om.arange(${last.v}, { dtype: 'float32' }).mul(0.001)).argmax(-1))`,
      [...v.shape.slice(0, -1), g.fixed(dim)], 'float32', 'embedding');
  },
  norm(g, v) { // normalising over at least 4 elements at every size: fewer are ill-conditioned (float32 vs double)
    const r = v.shape.length;
    const last = v.shape[r - 1];
    const form = g.r.int(0, 3);
    if (form <= 1 && last && last.fixed && last.v >= 4) {
      return form === 0 ? g.assign(`${g.decl('ln', `new om.nn.LayerNorm([${last.v}])`)}.forward(${v.name})`, v.shape, 'float32', 'layer-norm')
        : g.assign(`F.layerNorm(${v.name}, [${last.v}])`, v.shape, 'float32', 'layer-norm');
    }
    const c = v.shape[1];
    if (r < 2 || !c.fixed || c.v === 0 || v.shape[0].v === 0) return null;
    // a group of 4 to 200 elements at the example: ORT's InstanceNormalization sums in float32,
    // and at 2s + 1 on two spatial axes a larger group drifts past the oracle's bound
    const groupSizes = [1, 2, 4].filter((k) => c.v % k === 0 && c.v / k >= 4 && (c.v / k) * numel(v.shape.slice(2)) <= 200);
    if (form === 2 && r >= 3 && groupSizes.length) {
      const groups = g.r.pick(groupSizes);
      return g.assign(`${g.decl('gn', `new om.nn.GroupNorm(${groups}, ${c.v})`)}.forward(${v.name})`, v.shape, 'float32', 'group-norm');
    }
    if (r > 4) return null;
    return g.assign(`${g.decl('bn', `new om.nn.BatchNorm${r === 4 ? 2 : 1}d(${c.v})`)}.forward(${v.name})`, v.shape, 'float32', 'batch-norm');
  },
  recurrent(g, v) { // LSTM / GRU over [B, T, C] (batchFirst) or [T, B, C]; often the last step
    if (v.shape.length !== 3 || !v.shape[2].fixed || v.shape[2].v === 0 || v.shape.some((s) => s.v === 0)) return null;
    const lstm = g.r.chance(0.5);
    const hidden = g.width([2, 4, 6]);
    const layers = g.r.chance(0.25) ? 2 : 1;
    const bi = g.r.chance(0.25);
    const first = g.r.chance(0.6);
    const [b, t] = first ? [v.shape[0], v.shape[1]] : [v.shape[1], v.shape[0]];
    const opts = [first ? 'batchFirst: true' : null, layers > 1 ? `numLayers: ${layers}` : null, bi ? 'bidirectional: true' : null].filter(Boolean);
    const m = g.decl(lstm ? 'lstm' : 'gru', `new om.nn.${lstm ? 'LSTM' : 'GRU'}(${v.shape[2].v}, ${hidden}${opts.length ? `, { ${opts.join(', ')} }` : ''})`);
    const dirs = bi ? 2 : 1;
    let init = '';
    if (g.r.chance(0.25)) {
      const z = `om.zeros([${layers * dirs}, ${g.ex(b)}, ${hidden}])`;
      init = lstm ? `, [${z}, ${z}]` : `, ${z}`;
    }
    const out = g.value('float32', [v.shape[0], v.shape[1], g.fixed(hidden * dirs)]);
    const h = g.value('float32', [g.fixed(layers * dirs), b, g.fixed(hidden)]);
    const c = lstm ? g.value('float32', h.shape, false) : null;
    g.emit(`const [${out.name}, ${lstm ? `[${h.name}, ${c.name}]` : h.name}] = ${m}.forward(${v.name}${init});`, [out.name, h.name, ...(c ? [c.name] : [])]);
    g.tags.add(lstm ? 'lstm' : 'gru');
    if (g.r.chance(0.6)) {
      const tAxis = first ? 1 : 0;
      const idx = g.symbolic(t) && g.r.chance(0.6) ? `${g.ex(t)} - 1` : '-1';
      g.tags.add('rnn-last-step');
      return g.assign(`${out.name}.select(${tAxis}, ${idx})`, out.shape.filter((_, k) => k !== tAxis));
    }
    return out;
  },
  attention(g, v) { // nn.MultiheadAttention: self or cross, with a causal mask, sometimes its weights too
    if (v.shape.length !== 3 || !v.shape[2].fixed || v.shape.some((s) => s.v === 0)) return null;
    const e = v.shape[2].v;
    const heads = g.r.pick([1, 2, 3, 4].filter((h) => e % h === 0));
    const first = g.r.chance(0.6);
    const seqAxis = first ? 1 : 0, batchAxis = first ? 0 : 1;
    const kv = g.r.chance(0.3) ? g.partnerOf(v, (w) => w.shape.length === 3 && sameSize(w.shape[batchAxis], v.shape[batchAxis]) && sameSize(w.shape[2], v.shape[2])) : null;
    const k = kv ?? v;
    const l = v.shape[seqAxis], s = k.shape[seqAxis];
    const m = g.decl('mha', `new om.nn.MultiheadAttention(${e}, ${heads}${first ? ', { batchFirst: true }' : ''})`);
    const opts = [];
    const causal = !kv && g.r.chance(0.5);
    if (causal) opts.push(`attnMask: om.ones([${g.ex(l)}, ${g.ex(s)}]).tril().eq(0)`);
    const weights = g.r.chance(0.3);
    if (!weights) opts.push('needWeights: false');
    const call = `${m}.forward(${v.name}, ${k.name}, ${k.name}${opts.length ? `, { ${opts.join(', ')} }` : ''})`;
    g.tags.add(causal ? 'mha-causal' : kv ? 'mha-cross' : 'mha');
    if (!weights) return g.assign(`${call}[0]`, v.shape);
    const out = g.value('float32', v.shape);
    const w = g.value('float32', [v.shape[batchAxis], l, s]);
    g.emit(`const [${out.name}, ${w.name}] = ${call};`, [out.name, w.name]);
    return out;
  },
  attentionBlock(g, v) { // self-attention written by hand: heads by reshape, scores scaled, causal mask
    if (v.shape.length !== 3 || !v.shape[2].fixed || v.shape.some((s) => s.v === 0)) return null;
    const [b, t, c] = v.shape;
    const heads = g.r.pick([1, 2, 3, 4].filter((h) => c.v % h === 0));
    const B = g.ex(b), T = g.ex(t), C = g.ex(c), headDim = `${g.txt(c, 1)} / ${heads}`;
    const qkv = g.decl('qkv', `new om.nn.Linear(${c.v}, ${3 * c.v})`);
    const headShape = [b, g.fixed(heads), t, g.divided(c, heads)];
    const parts = ['q', 'k', 'v'].map(() => g.value('float32', [b, t, c], false));
    g.emit(`const [${parts.map((p) => p.name).join(', ')}] = ${qkv}.forward(${v.name}).split(${C}, -1);`, parts.map((p) => p.name));
    const heads3 = parts.map((p) => {
      const h = g.value('float32', headShape, false);
      g.emit(`const ${h.name} = ${p.name}.reshape(${B}, ${T}, ${heads}, ${headDim}).transpose(1, 2);`, [h.name]);
      return h;
    });
    const scores = g.value('float32', [b, g.fixed(heads), t, t], false);
    const mask = g.r.chance(0.7);
    g.emit(`const ${scores.name} = ${heads3[0].name}.matmul(${heads3[1].name}.transpose(-2, -1)).mul(1 / Math.sqrt(${headDim}))`
      + `${mask ? `.maskedFill(om.ones([${T}, ${T}]).tril().eq(0), -1e9)` : ''}.softmax(-1);`, [scores.name]);
    g.tags.add(mask ? 'attention-block-causal' : 'attention-block');
    return g.assign(`${scores.name}.matmul(${heads3[2].name}).transpose(1, 2).reshape(${B}, ${T}, ${C})`, v.shape);
  },
  sdpa(g, v) {
    const r = v.shape.length;
    if (r < 3 || v.shape.some((s) => s.v === 0)) return null;
    const causal = g.r.chance(0.6);
    return g.assign(`F.scaledDotProductAttention(${v.name}, ${v.name}.tanh(), ${v.name}${causal ? ', { isCausal: true }' : ''})`, v.shape, 'float32', causal ? 'sdpa-causal' : 'sdpa');
  },
  transformer(g, v) { // 6 features or more and heads of 2 or more: smaller ones are ill-conditioned (see norm)
    if (v.shape.length !== 3 || !v.shape[2].fixed || v.shape[2].v < 6 || v.shape.some((s) => s.v === 0)) return null;
    const e = v.shape[2].v;
    const heads = g.r.pick([1, 2, 4].filter((h) => e % h === 0 && e / h >= 2));
    const first = g.r.chance(0.6);
    const opts = [`dimFeedforward: ${2 * e}`, first ? 'batchFirst: true' : null, g.r.chance(0.4) ? 'normFirst: true' : null,
      g.r.chance(0.3) ? "activation: 'gelu'" : null].filter(Boolean);
    const m = g.decl('enc', `new om.nn.TransformerEncoderLayer(${e}, ${heads}, { ${opts.join(', ')} })`);
    const l = v.shape[first ? 1 : 0];
    const causal = g.r.chance(0.4);
    const arg = causal ? `, { srcMask: om.ones([${g.ex(l)}, ${g.ex(l)}]).tril().eq(0) }` : '';
    return g.assign(`${m}.forward(${v.name}${arg})`, v.shape, 'float32', causal ? 'transformer-causal' : 'transformer');
  },
  loop(g, v) { // a loop over a size: over a symbolic one, an ONNX Loop (docs/symbolic-axes.md, "Loops over a size")
    const i = g.axis(v, (s) => s.v >= 1 && s.v <= 12);
    if (i === null) return null;
    const s = v.shape[i];
    const d = g.dim(i, v.shape.length);
    const acc = g.value('float32', v.shape.filter((_, k) => k !== i));
    g.emit(`let ${acc.name} = ${v.name}.select(${d}, 0);\n` + `for (let i = 1; i < ${g.ex(s)}; i++) ${acc.name} = ${acc.name}.mul(0.5).add(${v.name}.select(${d}, i));`, [acc.name]);
    g.tags.add(g.symbolic(s) ? 'loop-over-symbol' : 'loop');
    return acc;
  },

  // -- images [N, C, H, W] and signals [N, C, L]
  conv(g, v) {
    const r = v.shape.length;
    if ((r !== 4 && r !== 3) || !v.shape[1].fixed || v.shape[1].v === 0 || v.shape[0].v === 0) return null;
    const two = r === 4;
    const c = v.shape[1].v;
    const o = g.width();
    const k = g.r.pick([1, 2, 3, 3, 5]);
    const s = g.r.pick([1, 1, 2, 2, 3]);
    const dil = g.r.chance(0.15) ? 2 : 1;
    const groups = g.r.chance(0.2) ? g.r.pick([1, 2, c].filter((x) => c % x === 0 && o % x === 0)) : 1;
    const same = s === 1 && (dil * (k - 1)) % 2 === 0 && g.r.chance(0.3);
    const p = same ? 0 : g.r.int(0, Math.floor(k / 2));
    const spatial = v.shape.slice(2).map((x) => (same ? x : g.window(x, k, s, p, dil)));
    if (spatial.some((x) => x.v < 1)) return null;
    const opts = [s > 1 ? `stride: ${s}` : null, same ? "padding: 'same'" : p ? `padding: ${p}` : null,
      dil > 1 ? `dilation: ${dil}` : null, groups > 1 ? `groups: ${groups}` : null].filter(Boolean);
    const o2 = opts.length ? `, { ${opts.join(', ')} }` : '';
    const out = [v.shape[0], g.fixed(o), ...spatial];
    const tag = `conv${two ? '2d' : '1d'}${s > 1 ? '-strided' : ''}`;
    if (g.r.chance(0.25)) {
      const w = g.constant([o, c / groups, ...(two ? [k, k] : [k])], Number((1 / Math.sqrt((c / groups) * k * (two ? k : 1))).toFixed(3)));
      return g.assign(`F.conv${two ? '2d' : '1d'}(${v.name}, ${w}${o2 ? `, null${o2}` : ''})`, out, 'float32', tag);
    }
    return g.assign(`${g.decl('conv', `new om.nn.Conv${two ? '2d' : '1d'}(${c}, ${o}, ${k}${o2})`)}.forward(${v.name})`, out, 'float32', tag);
  },
  convTranspose(g, v) {
    if (v.shape.length !== 4 || !v.shape[1].fixed || v.shape[1].v === 0 || v.shape[0].v === 0) return null;
    const c = v.shape[1].v, o = g.width();
    const [k, s, p, op] = g.r.pick([[2, 2, 0, 0], [3, 2, 1, 1], [3, 1, 1, 0], [4, 2, 1, 0], [3, 2, 0, 0]]);
    // out = (in - 1) s - 2p + (k - 1) + op + 1
    const spatial = v.shape.slice(2).map((x) => g.unnamed(g.plus(g.scaled(s, x), -s - 2 * p + k + op)));
    if (numel([v.shape[0], g.fixed(o), ...spatial]) > MAX_NUMEL) return null;
    const opts = [`stride: ${s}`, p ? `padding: ${p}` : null, op ? `outputPadding: ${op}` : null].filter(Boolean);
    return g.assign(`${g.decl('up', `new om.nn.ConvTranspose2d(${c}, ${o}, ${k}, { ${opts.join(', ')} })`)}.forward(${v.name})`,
      [v.shape[0], g.fixed(o), ...spatial], 'float32', 'conv-transpose');
  },
  pool(g, v) {
    if (v.shape.length !== 4 || v.shape.some((s) => s.v === 0)) return null;
    const max = g.r.chance(0.6);
    const k = g.r.pick([2, 2, 3]);
    const s = g.r.pick([k, k, 1, 2]);
    const p = g.r.int(0, Math.floor(k / 2));
    const ceil = g.r.chance(0.15);
    const out = v.shape.slice(2).map((x) => {
      if (!ceil) return g.window(x, k, s, p);
      let n = Math.ceil((x.v + 2 * p - k) / s) + 1;
      if ((n - 1) * s >= x.v + p) n--;
      return g.opaque(x, n);
    });
    if (out.some((x) => x.v < 1)) return null;
    const opts = [s !== k ? `stride: ${s}` : null, p ? `padding: ${p}` : null, ceil ? 'ceilMode: true' : null,
      !max && p && g.r.chance(0.5) ? 'countIncludePad: false' : null].filter(Boolean);
    const o = opts.length ? `, { ${opts.join(', ')} }` : '';
    const code = g.r.chance(0.5) ? `F.${max ? 'maxPool2d' : 'avgPool2d'}(${v.name}, ${k}${o})`
      : `${g.decl('pool', `new om.nn.${max ? 'MaxPool2d' : 'AvgPool2d'}(${k}${o})`)}.forward(${v.name})`;
    return g.assign(code, [v.shape[0], v.shape[1], ...out], 'float32', ceil ? 'pool-ceil' : max ? 'max-pool' : 'avg-pool');
  },
  adaptivePool(g, v) {
    if (v.shape.length !== 4 || v.shape.some((s) => s.v === 0)) return null;
    const form = g.r.int(0, 3);
    const [n, c, h, w] = v.shape;
    if (form <= 1) return g.assign(`F.adaptiveAvgPool2d(${v.name}, 1)${form === 1 ? '.flatten(1)' : ''}`, form === 1 ? [n, c] : [n, c, g.fixed(1), g.fixed(1)], 'float32', 'global-pool');
    if (form === 2) return g.assign(`${g.decl('gap', 'new om.nn.AdaptiveAvgPool2d([null, 1])')}.forward(${v.name})`, [n, c, h, g.fixed(1)], 'float32', 'adaptive-pool');
    return g.assign(`F.adaptiveAvgPool2d(${v.name}, 2)`, [n, c, g.fixed(2), g.fixed(2)], 'float32', 'adaptive-pool-2');
  },
  upsample(g, v) {
    if (v.shape.length !== 4 || v.shape.some((s) => s.v === 0)) return null;
    const [n, c, h, w] = v.shape;
    if (numel(v.shape) * 4 > MAX_NUMEL) return null;
    const twice = [n, c, g.unnamed(g.scaled(2, h)), g.unnamed(g.scaled(2, w))];
    switch (g.r.int(0, 3)) {
      case 0: return g.assign(`F.interpolate(${v.name}, { scaleFactor: 2 })`, twice, 'float32', 'interpolate');
      case 1: return g.assign(`F.interpolate(${v.name}, { scaleFactor: 2, mode: 'bilinear'${g.r.chance(0.5) ? ', alignCorners: true' : ''} })`, twice, 'float32', 'interpolate');
      case 2: {
        const size = [g.scaled(2, h), g.scaled(2, w)];
        return g.assign(`F.interpolate(${v.name}, { size: [${size.map((s) => g.ex(s)).join(', ')}] })`, [n, c, ...size], 'float32', 'interpolate-size');
      }
      default: return g.assign(`${g.decl('ups', "new om.nn.Upsample({ scaleFactor: 2, mode: 'nearest' })")}.forward(${v.name})`, twice, 'float32', 'interpolate');
    }
  },
  residual(g, v) { // a ResNet block: 3x3 stride-2 conv path plus a 1x1 stride-2 downsample (or identity)
    if (v.shape.length !== 4 || !v.shape[1].fixed || v.shape.some((s) => s.v === 0)) return null;
    const [n, c, h, w] = v.shape;
    const o = g.width([2, 4, 6, 8]);
    const down = g.r.chance(0.7);
    const s = down ? 2 : 1;
    const spatial = [h, w].map((x) => (down ? g.window(x, 3, 2, 1) : x));
    const a = g.value('float32', [n, g.fixed(o), ...spatial], false);
    g.emit(`const ${a.name} = ${g.decl('conv', `new om.nn.Conv2d(${c.v}, ${o}, 3, { ${down ? 'stride: 2, ' : ''}padding: 1 })`)}.forward(${v.name}).relu();`, [a.name]);
    const b = g.value('float32', a.shape, false);
    const bn = g.r.chance(0.5) ? `${g.decl('bn', `new om.nn.BatchNorm2d(${o})`)}.forward(` : '';
    g.emit(`const ${b.name} = ${bn}${g.decl('conv', `new om.nn.Conv2d(${o}, ${o}, 3, { padding: 1 })`)}.forward(${a.name})${bn ? ')' : ''};`, [b.name]);
    // the skip path's sizes: a 1x1 stride-2 window has the canonical form of the 3x3 one's
    const skip = down || o !== c.v
      ? `${g.decl('down', `new om.nn.Conv2d(${c.v}, ${o}, 1${down ? ', { stride: 2 }' : ''})`)}.forward(${v.name})` : v.name;
    return g.assign(`${b.name}.add(${skip}).relu()`, a.shape, 'float32', down ? 'residual-strided' : 'residual');
  },
  unet(g, v) { // encoder conv, pool, conv, upsample by 2, concat with the skip (crop/pad to the skip's size sometimes)
    if (v.shape.length !== 4 || !v.shape[1].fixed || v.shape.some((s) => s.v < 2)) return null;
    const [n, c, h, w] = v.shape;
    if (numel(v.shape) * 6 > MAX_NUMEL * 2) return null;
    const o = g.width([2, 4]);
    const e = g.value('float32', [n, g.fixed(o), h, w], false);
    g.emit(`const ${e.name} = ${g.decl('conv', `new om.nn.Conv2d(${c.v}, ${o}, 3, { padding: 1 })`)}.forward(${v.name}).relu();`, [e.name]);
    const half = [h, w].map((x) => g.window(x, 2, 2, 0));
    const p = g.value('float32', [n, g.fixed(o), ...half], false);
    g.emit(`const ${p.name} = F.maxPool2d(${e.name}, 2);`, [p.name]);
    const up = g.r.chance(0.5)
      ? `F.interpolate(${g.decl('conv', `new om.nn.Conv2d(${o}, ${o}, 3, { padding: 1 })`)}.forward(${p.name}).relu(), { scaleFactor: 2 })`
      : `${g.decl('up', `new om.nn.ConvTranspose2d(${o}, ${o}, 2, { stride: 2 })`)}.forward(${p.name})`;
    const u = g.value('float32', [n, g.fixed(o), ...half.map((x) => g.scaled(2, x))], false);
    g.emit(`const ${u.name} = ${up};`, [u.name]);
    const even = h.v % 2 === 0 && w.v % 2 === 0;
    if (!even || g.r.chance(0.3)) { // pad the upsampled map to the skip's size, amounts read off the shapes
      const padded = g.value('float32', [n, g.fixed(o), h, w], false);
      g.emit(`const ${padded.name} = F.pad(${u.name}, [0, ${g.ex(w)} - ${u.name}.shape[3], 0, ${g.ex(h)} - ${u.name}.shape[2]]);`, [padded.name]);
      g.tags.add('unet-pad-from-sizes');
      return g.assign(`om.cat([${padded.name}, ${e.name}], 1)`, [n, g.fixed(2 * o), h, w], 'float32', 'unet');
    }
    return g.assign(`om.cat([${u.name}, ${e.name}], 1)`, [n, g.fixed(2 * o), h, w], 'float32', 'unet');
  },
  squeezeExcite(g, v) {
    if (v.shape.length !== 4 || !v.shape[1].fixed || v.shape.some((s) => s.v === 0)) return null;
    const c = v.shape[1].v;
    return g.assign(`${v.name}.mul(${g.decl('conv', `new om.nn.Conv2d(${c}, ${c}, 1)`)}.forward(${v.name}.mean([2, 3], true)).sigmoid())`, v.shape, 'float32', 'squeeze-excite');
  },
  tokens(g, v) { // [N, C, H, W] -> [N, H * W, C] (a ViT's tokens), and sometimes back
    if (v.shape.length !== 4 || !v.shape[1].fixed) return null;
    const [n, c, h, w] = v.shape;
    const hw = g.times(h, w);
    const t = g.assign(`${v.name}.flatten(2).transpose(1, 2)`, [n, hw, c], 'float32', 'tokens');
    if (!g.r.chance(0.4)) return t;
    return g.assign(`${t.name}.transpose(1, 2).reshape(${g.ex(n)}, ${c.v}, ${g.ex(h)}, ${g.ex(w)})`, v.shape, 'float32', 'tokens-back');
  },
};

// ---- families: inputs, and which rules, how often ----------------------------------------------

const GENERIC = {
  unary: 3, activation: 1, along: 2, sizeScalar: 1, selfBinary: 1.5, partnerBinary: 2, constBinary: 1.5, compare: 1,
  reduce: 2, linear: 2, matmulPair: 1, reshapeMerge: 2, reshapeSplit: 1.5, reshapeFlat: 1, permute: 2, unsqueeze: 1,
  slice: 2.5, select: 1.5, split: 1.5, cat: 2, pad: 1.5, windowPad: 0.8, minMax: 0.8, threshold: 0.3, maskInPlace: 0.6,
  expand: 1.5, create: 2, trilu: 0.7,
  causal: 0.7, gather: 1.5, embedArgmax: 0.4, norm: 1.5, loop: 0.3,
};
const SEQUENCE = { recurrent: 2, attention: 2, attentionBlock: 1, sdpa: 0.7, transformer: 1 };
const IMAGE = {
  conv: 6, convTranspose: 1.5, pool: 3, adaptivePool: 1.5, upsample: 1.5, residual: 2, unet: 1.5, squeezeExcite: 0.7,
  tokens: 1, norm: 2,
};

/** Distinct example sizes for symbols, each from its list (>= 2, none in FIXED_POOL). */
function exampleSizes(r, lists) {
  const used = new Set();
  return lists.map((list) => {
    let v;
    do v = r.pick(list); while (used.has(v));
    used.add(v);
    return v;
  });
}

const families = {
  sequence(g) { // x [B, T, C] (or ids [B, T] into an Embedding), sometimes y [B, S, C]
    const r = g.r;
    const [bv, tv, sv] = exampleSizes(r, [[3, 5, 7], [5, 7, 9, 10, 11], [3, 5, 7, 9]]);
    const symB = r.chance(0.8), symT = r.chance(0.85) || !symB;
    let cv = g.width();
    if (r.chance(0.08)) { cv = tv; g.tags.add('width=symbol'); }
    const B = symB ? g.symbol('B', bv) : g.fixed(bv, 'B');
    const T = symT ? g.symbol('T', tv) : g.fixed(tv, 'T');
    let x;
    if (r.chance(0.2)) { // token ids, an embedding, and learned or arange positions
      const vocab = r.int(5, 12);
      const ids = g.input('ids', 'int64', [B, T], { high: vocab });
      const C = g.fixed(cv, null);
      x = g.assign(`${g.decl('tok', `new om.nn.Embedding(${vocab}, ${cv})`)}.forward(${ids.name})`, [B, T, C], 'float32', 'embedding');
      if (r.chance(0.6)) {
        const pos = g.decl('pos', `new om.nn.Embedding(${tv + 8}, ${cv})`);
        x = g.assign(`${x.name}.add(${pos}.forward(om.arange(0n, BigInt(${g.ex(T)}))))`, x.shape, 'float32', 'positions');
      }
    } else {
      x = g.input('x', 'float32', [B, T, g.fixed(cv, 'C')]);
      if (r.chance(0.08)) { // an input with an empty fixed axis, joined to x
        g.input('z', 'float32', [B, g.fixed(0), g.fixed(cv, null)]);
        g.tags.add('empty-input');
        x = g.assign(`om.cat([${x.name}, z], 1)`, x.shape);
      }
    }
    if (r.chance(0.25)) {
      const S = r.chance(0.5) ? g.symbol('S', sv) : T;
      g.input('y', 'float32', [B, S, x.shape[2]]);
    }
    if (symB && r.chance(0.1)) g.zeroChecks.push('B');
    return { ...GENERIC, ...SEQUENCE };
  },
  image(g) { // x [N, C, H, W]
    const r = g.r;
    const [nv, hv, wv] = exampleSizes(r, [[3, 5], [7, 9, 10, 11, 12, 13, 14, 15, 16], [7, 9, 10, 11, 12, 13, 14, 15, 16]]);
    const symN = r.chance(0.7), symHW = r.chance(0.8) || !symN;
    const cv = r.pick([1, 2, 4]);
    const N = symN ? g.symbol('N', nv) : g.fixed(nv, 'N');
    const H = symHW ? g.symbol('H', hv) : g.fixed(hv, 'H');
    const W = symHW ? g.symbol('W', wv) : g.fixed(wv, 'W');
    g.input('x', 'float32', [N, g.fixed(cv, 'C'), H, W]);
    if (symN && r.chance(0.1)) g.zeroChecks.push('N');
    return { ...GENERIC, ...IMAGE, linear: 1, matmulPair: 0.3, loop: 0.1, embedArgmax: 0.1 };
  },
  signal(g) { // x [N, C, L]: conv1d, and RNNs / attention over L after a transpose
    const r = g.r;
    const [nv, lv] = exampleSizes(r, [[3, 5, 7], [9, 10, 11, 12, 13, 14, 15, 17, 19]]);
    const symN = r.chance(0.6);
    const N = symN ? g.symbol('N', nv) : g.fixed(nv, 'N');
    g.input('x', 'float32', [N, g.fixed(r.pick([1, 2, 4]), 'C'), g.symbol('L', lv)]);
    return { ...GENERIC, ...SEQUENCE, conv: 5, norm: 2 };
  },
  flat(g) { // x [B, F]: MLPs, reshapes of the features
    const r = g.r;
    const [bv] = exampleSizes(r, [[3, 5, 7, 9]]);
    g.input('x', 'float32', [g.symbol('B', bv), g.fixed(r.pick([4, 6, 8, 12]), 'D')]);
    return { ...GENERIC, linear: 4, reshapeSplit: 3 };
  },
};
const FAMILIES = [[4, 'sequence'], [3, 'image'], [1.5, 'signal'], [1.5, 'flat']];

// ---- generate and render ------------------------------------------------------------------------

/** The rules' names (generate's `without` takes some of them). */
export const RULES = Object.keys(rules);

/**
 * Model `index` of `seed`: { id, family, form ('module' | 'function'), weightSeed, inputs (the
 * om.trace spec: [{ name, dtype, shape, axes, high? }]), decls ([{ name, code }]: modules and
 * constants), body ([{ code, defs }]: statements, `@name` for a declaration), result (value
 * names: an array, or an object output name -> value), types (value name -> dtype and example
 * shape), tags (what the model does: 'slice-symbolic', 'coincide', ...), zeroChecks }.
 * without: rules not to use (to see past a failure or refusal that dominates); the models then
 * differ from those of the same (seed, index) without it.
 */
export function generate(seed, index, { without = [] } = {}) {
  const unknown = without.filter((n) => !RULES.includes(n));
  if (unknown.length) throw new Error(`generate: no rule ${unknown.join(', ')} (the rules: ${RULES.join(', ')})`);
  const r = new Rng(seed, index);
  const family = r.weighted(FAMILIES);
  const g = new Builder(r, family);
  const weights = Object.entries(families[family](g)).filter(([name]) => !without.includes(name)).map(([name, w]) => [w, name]);
  const steps = r.int(2, 9);
  let made = 0;
  for (let tries = 0; made < steps && tries < 60; tries++) {
    const v = g.pickValue();
    const rule = r.weighted(weights);
    const snap = g.snapshot();
    const out = rules[rule](g, v);
    if (!out || numel(out.shape) > MAX_NUMEL * 2) { g.restore(snap); continue; } // a rule that gave up leaves nothing
    made++;
  }
  const last = g.pool[g.pool.length - 1];
  const result = [last.name];
  if (g.pool.length > 2 && r.chance(0.3)) {
    const other = r.pick(g.pool.slice(0, -1).filter((v) => !g.inputs.some((i) => i.name === v.name)));
    if (other) result.push(other.name);
  }
  const sizes = new Set(g.symbols.map((s) => s.v));
  if ([...g.fixedSeen].some((n) => sizes.has(n))) g.tags.add('coincide');
  const hasModules = g.decls.some((d) => d.code.startsWith('new '));
  return {
    id: `${seed}:${index}`,
    family,
    form: hasModules && r.chance(0.6) ? 'module' : 'function',
    weightSeed: r.int(0, 99999),
    inputs: g.inputs,
    decls: g.decls,
    body: g.body,
    result: result.length > 1 && r.chance(0.3) ? { [`out_${result[0]}`]: result[0], [`out_${result[1]}`]: result[1] } : result,
    types: g.types,
    tags: [...g.tags].sort(),
    zeroChecks: g.zeroChecks,
    multiples: g.multiples,
    maxes: g.maxes,
    farChecks: g.farChecks,
  };
}

/** Helpers a model may call (om has no chunk): defined in the source when used. */
const HELPERS = {
  chunk: 'const chunk = (t, n, dim) => t.split(Math.ceil(t.shape.at(dim) / n), dim);',
};

/**
 * The case's source: the body of a function of `om` that returns { model, inputs }, model a
 * function or an nn.Module (in eval mode) and inputs the spec for om.trace (runner.mjs makes the
 * tensors). Printing it reproduces the model; runner.mjs runs such text (also hand-edited).
 */
export function render(c) {
  const mod = c.form === 'module';
  const ref = (code) => code.replace(/@(\w+)/g, mod ? 'this.$1' : '$1');
  const params = c.inputs.map((i) => i.name).join(', ');
  const out = Array.isArray(c.result) ? (c.result.length === 1 ? c.result[0] : `[${c.result.join(', ')}]`)
    : `{ ${Object.entries(c.result).map(([k, v]) => `${k}: ${v}`).join(', ')} }`;
  const indent = mod ? '    ' : '  ';
  const body = [...c.body.map((s) => ref(s.code)), `return ${out};`].flatMap((l) => l.split('\n').map((x) => indent + x));
  const text = [ref(c.decls.map((d) => d.code).join('\n')), ...c.body.map((s) => s.code)].join('\n');
  const lines = [`// random model ${c.id} (${c.family}${c.tags.length ? `: ${c.tags.join(', ')}` : ''})`];
  if (/\bF\./.test(text)) lines.push('const F = om.nn.functional;');
  for (const [name, code] of Object.entries(HELPERS)) if (new RegExp(`\\b${name}\\(`).test(text)) lines.push(code);
  lines.push(`om.manualSeed(${c.weightSeed});`);
  if (mod) {
    lines.push('class Model extends om.nn.Module {', '  constructor() {', '    super();');
    for (const d of c.decls) lines.push(`    this.${d.name} = ${d.code};`);
    lines.push('  }', `  forward(${params}) {`, ...body, '  }', '}', 'const model = new Model().eval();');
  } else {
    for (const d of c.decls) lines.push(`const ${d.name} = ${d.code}${d.code.startsWith('new ') ? '.eval()' : ''};`);
    lines.push(`const model = (${params}) => {`, ...body, '};');
  }
  const spec = c.inputs.map((i) => {
    const extra = [i.dtype !== 'float32' ? `dtype: '${i.dtype}'` : null, i.high ? `high: ${i.high}` : null].filter(Boolean);
    const axis = (a) => {
      const decl = [c.multiples?.[a] ? `multipleOf: ${c.multiples[a]}` : null, c.maxes?.[a] ? `max: ${c.maxes[a]}` : null].filter(Boolean);
      return !a ? 'null' : decl.length ? `om.Dim('${a}', { ${decl.join(', ')} })` : `'${a}'`;
    };
    return `  ${i.name}: { shape: [${i.shape.join(', ')}], axes: [${i.axes.map(axis).join(', ')}]${extra.length ? `, ${extra.join(', ')}` : ''} },`;
  });
  lines.push('const inputs = {', ...spec, '};');
  if (c.zeroChecks.length) lines.push(`const zeroChecks = [${c.zeroChecks.map((s) => `'${s}'`).join(', ')}];`);
  const far = (c.farChecks ?? []).filter((a) => c.inputs.some((i) => Object.keys(a).every((k) => i.axes.includes(k))));
  if (far.length) lines.push(`const farChecks = ${JSON.stringify(far).replace(/"(\w+)":/g, '$1: ').replace(/,/g, ', ')};`);
  const extra = [c.zeroChecks.length ? 'zeroChecks' : null, far.length ? 'farChecks' : null].filter(Boolean);
  lines.push(`return { model, inputs${extra.map((e) => `, ${e}`).join('')} };`);
  return lines.join('\n');
}
