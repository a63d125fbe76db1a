/* Symbolic sizes (docs/symbolic-axes.md): every extent of a traced value, and every integer a
 * model computes from sizes, is an expression over the declared symbols, kept canonical so
 * that two expressions equal at every size are, as far as the rules below reach, one id.
 *
 * Symbol k of size s_k = m_k * v_k (m_k its declared multiple, 1 by default) is written over its
 * free variable v_k. An expression is a polynomial with integer coefficients in *factors*: the
 * variables, floor(N / d) of a canonical expression N and an integer d >= 2, min(N, c), and
 * floor(double(N) * s) as IEEE double computes it (an extent an op rounds from a double: ATen's
 * floor(H * 0.7) is 62 at H = 90, where 7H / 10 is 63; exact while N is below 2^53, where the
 * conversion to double is). floor(N / d)
 * is normalised (x_floor) by pulling out the multiples of d, dividing out a common factor and
 * folding a nested floor of coefficient 1 (floor((floor(A / a) + B) / b) = floor((A + aB) / ab)),
 * so a conv's floor((h - 1) / 2) + 1 and a strided 1x1's are both floor((h + 1) / 2), a pool of
 * a pool is floor(h / 4), and with h a multiple of 4 floor(h / 2) is just 2*v. What the rules do
 * not reach is decided by om__x_same: two quasi-polynomials agree everywhere exactly when they
 * agree on a grid of (degree + 1) points in every residue class of their period.
 *
 * Expressions and factors are interned on the trace (ids into tr->xs, tr->fs): equal canonical
 * forms are one id, so extents compare by id. Their storage is the graph's arena. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace/trace.h"

/* ---- polynomials (the working form) ---- */

/* Orders two terms by their factor lists (shorter prefix first); equal lists are one term. */
static int term_cmp(const om_xterm *a, const om_xterm *b) {
  for (int i = 0; i < a->n && i < b->n; i++)
    if (a->f[i] != b->f[i]) return a->f[i] < b->f[i] ? -1 : 1;
  return a->n - b->n;
}

/* Too large or too deep to keep: SymbolicShape, which ends the trace. */
static bool too_complex(const char *what) {
  return om__trace_fail(OM_ERR_TRACE_SYMBOLIC_SHAPE, "a size expression grows too large to write in the graph (%s)", what);
}

/* Adds coef * (the factors f[0..n), sorted) to p, keeping p canonical. false when p is full. */
static bool poly_add_term(om_poly *p, int64_t coef, const int32_t *f, int n) {
  if (!coef) return true;
  if (!n) {
    if (__builtin_add_overflow(p->c0, coef, &p->c0)) return too_complex("a coefficient overflows");
    return true;
  }
  om_xterm t = {.coef = coef, .n = n};
  memcpy(t.f, f, sizeof(int32_t) * (size_t)n);
  int lo = 0, hi = p->n;
  while (lo < hi) { /* the first term not below t */
    int mid = (lo + hi) / 2;
    if (term_cmp(&p->t[mid], &t) < 0) lo = mid + 1;
    else hi = mid;
  }
  if (lo < p->n && term_cmp(&p->t[lo], &t) == 0) {
    if (__builtin_add_overflow(p->t[lo].coef, coef, &p->t[lo].coef)) return too_complex("a coefficient overflows");
    if (!p->t[lo].coef) {
      memmove(&p->t[lo], &p->t[lo + 1], sizeof t * (size_t)(p->n - lo - 1));
      p->n--;
    }
    return true;
  }
  if (p->n == OM_X_MAX_TERMS) return too_complex("more than 16 terms");
  memmove(&p->t[lo + 1], &p->t[lo], sizeof t * (size_t)(p->n - lo));
  p->t[lo] = t;
  p->n++;
  return true;
}

/* p += c * q. */
static bool poly_axpy(om_poly *p, int64_t c, const om_poly *q) {
  int64_t v;
  if (__builtin_mul_overflow(c, q->c0, &v) || !poly_add_term(p, v, NULL, 0)) return too_complex("a coefficient overflows");
  for (int i = 0; i < q->n; i++)
    if (__builtin_mul_overflow(c, q->t[i].coef, &v) || !poly_add_term(p, v, q->t[i].f, q->t[i].n))
      return too_complex("a coefficient overflows");
  return true;
}

/* ---- the tables ---- */

static uint64_t fnv(uint64_t h, const void *p, size_t n) {
  const unsigned char *b = p;
  for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 0x100000001b3u;
  return h;
}

static uint64_t poly_hash(const om_poly *p) {
  uint64_t h = fnv(0xcbf29ce484222325u, &p->c0, sizeof p->c0);
  for (int i = 0; i < p->n; i++) {
    h = fnv(h, &p->t[i].coef, sizeof p->t[i].coef);
    h = fnv(h, &p->t[i].n, sizeof p->t[i].n);
    h = fnv(h, p->t[i].f, sizeof(int32_t) * (size_t)p->t[i].n);
  }
  return h;
}

static bool poly_eq(const om_poly *p, const om_xexpr *x) {
  if (p->c0 != x->c0 || p->n != x->n) return false;
  for (int i = 0; i < p->n; i++)
    if (p->t[i].coef != x->t[i].coef || term_cmp(&p->t[i], &x->t[i])) return false;
  return true;
}

void om__x_get(const om_trace *tr, int id, om_poly *p) {
  const om_xexpr *x = &tr->xs.v[id];
  p->c0 = x->c0;
  p->n = x->n;
  if (x->n) memcpy(p->t, x->t, sizeof(om_xterm) * (size_t)x->n);
}

/* Re-hashes every expression into a table of cap slots. */
static bool rehash(om_trace *tr, size_t cap) {
  int *slot = om__alloc(sizeof(int) * cap, "trace");
  if (!slot) return false;
  memset(slot, 0, sizeof(int) * cap);
  for (int k = 0; k < tr->xs.n; k++) {
    size_t i = tr->xs.v[k].hash & (cap - 1);
    while (slot[i]) i = (i + 1) & (cap - 1);
    slot[i] = k + 1;
  }
  free(tr->xindex);
  tr->xindex = slot;
  tr->xindex_cap = cap;
  return true;
}

/* The symbols (bit k: symbol k) and the degree of the factors f[0..n). */
static void factors_info(const om_trace *tr, const int32_t *f, int n, uint64_t *syms, int *deg) {
  for (int i = 0; i < n; i++) {
    *syms |= tr->fs.v[f[i]].syms;
    *deg += tr->fs.v[f[i]].deg;
  }
}

/* The id of canonical p, interning it when new. -1 on error (the trace has ended). */
static int intern(om_trace *tr, const om_poly *p) {
  uint64_t h = poly_hash(p);
  if (tr->xindex_cap) {
    for (size_t i = h & (tr->xindex_cap - 1); tr->xindex[i]; i = (i + 1) & (tr->xindex_cap - 1)) {
      const om_xexpr *x = &tr->xs.v[tr->xindex[i] - 1];
      if (x->hash == h && poly_eq(p, x)) return tr->xindex[i] - 1;
    }
  }
  size_t cap = tr->xindex_cap ? tr->xindex_cap : 256;
  while ((size_t)(tr->xs.n + 1) * 2 > cap) cap *= 2;
  if (cap != tr->xindex_cap && !rehash(tr, cap)) return om__trace_fail(OM_ERR_OUT_OF_MEMORY, "trace: out of memory"), -1;
  om_xterm *t = p->n ? om__arena_alloc(&tr->g.arena, sizeof *t * (size_t)p->n) : NULL;
  om_xexpr *x = (t || !p->n) ? OM_VEC_PUSH_SLOT(tr->xs) : NULL;
  if (!x) return om__trace_fail(OM_ERR_OUT_OF_MEMORY, "trace: out of memory"), -1;
  if (p->n) memcpy(t, p->t, sizeof *t * (size_t)p->n);
  *x = (om_xexpr){.c0 = p->c0, .n = p->n, .t = t, .hash = h};
  for (int i = 0; i < p->n; i++) {
    int deg = 0;
    factors_info(tr, t[i].f, t[i].n, &x->syms, &deg);
    if (deg > x->deg) x->deg = deg;
  }
  size_t i = h & (tr->xindex_cap - 1);
  while (tr->xindex[i]) i = (i + 1) & (tr->xindex_cap - 1);
  tr->xindex[i] = tr->xs.n;
  return tr->xs.n - 1;
}

/* The factor floor(num / den), min(num, den), floor(double(num) * scale) or variable var (docs
 * at om_xfactor), interned (scale compared by its bits). -1 on error. */
static int factor(om_trace *tr, int num, int64_t den, double scale, int var) {
  for (int k = 0; k < tr->fs.n; k++)
    if (tr->fs.v[k].num == num && tr->fs.v[k].den == den && tr->fs.v[k].var == var &&
        !memcmp(&tr->fs.v[k].scale, &scale, sizeof scale))
      return k;
  om_xfactor *f = OM_VEC_PUSH_SLOT(tr->fs);
  if (!f) return om__trace_fail(OM_ERR_OUT_OF_MEMORY, "trace: out of memory"), -1;
  *f = (om_xfactor){.num = num, .den = den, .scale = scale, .var = var, .deg = 1, .period = 1};
  if (var >= 0) {
    f->syms = (uint64_t)1 << var;
  } else if (var == OM_XF_MIN || var == OM_XF_FMUL) {
    /* piecewise, or a double's rounding: no period makes it a polynomial (om__x_same cannot
     * decide it; equal forms are one id) */
    f->syms = tr->xs.v[num].syms;
    f->deg = tr->xs.v[num].deg;
    f->period = OM_X_MAX_PERIOD + 1;
  } else {
    const om_xexpr *n = &tr->xs.v[num];
    f->syms = n->syms;
    f->deg = n->deg;
    int64_t period = 1; /* the inner expression's period, times den (docs at om__x_same) */
    for (int i = 0; i < n->n; i++)
      for (int j = 0; j < n->t[i].n; j++) {
        int64_t q = tr->fs.v[n->t[i].f[j]].period, a = period, b = q;
        while (b) { int64_t r = a % b; a = b; b = r; }
        period = period / a * q;
        if (period > OM_X_MAX_PERIOD) period = OM_X_MAX_PERIOD + 1;
      }
    f->period = period * den > OM_X_MAX_PERIOD ? OM_X_MAX_PERIOD + 1 : period * den;
  }
  return tr->fs.n - 1;
}

/* ---- construction ---- */

int om__x_poly(om_trace *tr, const om_poly *p) { return intern(tr, p); }

int om__x_const(om_trace *tr, int64_t c) { return intern(tr, &(om_poly){.c0 = c}); }

int om__x_sym(om_trace *tr, int k) {
  om_symbol *s = &tr->symbols.v[k];
  if (s->var_factor < 0 && (s->var_factor = factor(tr, -1, 1, 0, k)) < 0) return -1;
  om_poly p = {0};
  int32_t f = s->var_factor;
  if (!poly_add_term(&p, s->multiple, &f, 1)) return -1;
  return intern(tr, &p);
}

bool om__x_is_const(const om_trace *tr, int a, int64_t *c) {
  if (tr->xs.v[a].n) return false;
  if (c) *c = tr->xs.v[a].c0;
  return true;
}

int om__x_lin(om_trace *tr, int64_t ca, int a, int64_t cb, int b, int64_t c) {
  om_poly p = {.c0 = 0}, q;
  if (a >= 0) {
    om__x_get(tr, a, &q);
    if (!poly_axpy(&p, ca, &q)) return -1;
  }
  if (b >= 0) {
    om__x_get(tr, b, &q);
    if (!poly_axpy(&p, cb, &q)) return -1;
  }
  if (!poly_add_term(&p, c, NULL, 0)) return -1;
  return intern(tr, &p);
}

int om__x_mul(om_trace *tr, int a, int b) {
  om_poly p = {0}, x, y;
  om__x_get(tr, a, &x);
  om__x_get(tr, b, &y);
  om_xterm one = {.coef = 1};
  for (int i = -1; i < x.n; i++)
    for (int j = -1; j < y.n; j++) {
      const om_xterm *s = i < 0 ? &one : &x.t[i], *t = j < 0 ? &one : &y.t[j];
      int64_t cs = i < 0 ? x.c0 : s->coef, ct = j < 0 ? y.c0 : t->coef, coef;
      if (__builtin_mul_overflow(cs, ct, &coef)) return too_complex("a coefficient overflows"), -1;
      if (s->n + t->n > OM_X_MAX_DEG) return too_complex("a product of more than 6 sizes"), -1;
      int32_t f[OM_X_MAX_DEG]; /* the two sorted factor lists merged */
      int n = 0;
      for (int u = 0, v = 0; u < s->n || v < t->n;)
        f[n++] = v >= t->n || (u < s->n && s->f[u] <= t->f[v]) ? s->f[u++] : t->f[v++];
      if (!poly_add_term(&p, coef, f, n)) return -1;
    }
  return intern(tr, &p);
}

static int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

static int64_t gcd(int64_t a, int64_t b) {
  if (a < 0) a = -a;
  if (b < 0) b = -b;
  while (b) {
    int64_t r = a % b;
    a = b;
    b = r;
  }
  return a;
}

/* floor(p / d) into out, canonical (see the top of the file). false on error. */
static bool poly_floor(om_trace *tr, const om_poly *p, int64_t d, om_poly *out) {
  *out = (om_poly){.c0 = floor_div(p->c0, d)};
  om_poly r = {.c0 = p->c0 - out->c0 * d};
  for (int i = 0; i < p->n; i++) { /* p = d * q + r, every coefficient of r in [0, d) */
    int64_t q = floor_div(p->t[i].coef, d);
    if (!poly_add_term(out, q, p->t[i].f, p->t[i].n) || !poly_add_term(&r, p->t[i].coef - q * d, p->t[i].f, p->t[i].n))
      return false;
  }
  if (!r.n) return true; /* floor(r0 / d) is 0 */
  int64_t g = d;
  for (int i = 0; i < r.n; i++) g = gcd(g, r.t[i].coef);
  if (g > 1) { /* floor((g R + r0) / (g d')) = floor((R + floor(r0 / g)) / d') */
    for (int i = 0; i < r.n; i++) r.t[i].coef /= g;
    r.c0 /= g;
    d /= g;
  }
  for (int i = 0; i < r.n; i++) { /* a nested floor of coefficient 1: floor((floor(A / a) + B) / d) = floor((A + aB) / ad) */
    const om_xfactor *f = r.t[i].n == 1 ? &tr->fs.v[r.t[i].f[0]] : NULL;
    if (!f || f->var != OM_XF_FLOOR || r.t[i].coef != 1) continue;
    int64_t ad;
    if (__builtin_mul_overflow(f->den, d, &ad)) return too_complex("a divisor overflows");
    om_poly a, n = {0};
    om__x_get(tr, f->num, &a);
    om_poly rest = r;
    memmove(&rest.t[i], &rest.t[i + 1], sizeof(om_xterm) * (size_t)(rest.n - i - 1));
    rest.n--;
    if (!poly_axpy(&n, 1, &a) || !poly_axpy(&n, f->den, &rest)) return false;
    om_poly inner;
    if (!poly_floor(tr, &n, ad, &inner)) return false;
    return poly_axpy(out, 1, &inner);
  }
  if (d == 1) return poly_axpy(out, 1, &r);
  int num = intern(tr, &r);
  int fid = num >= 0 ? factor(tr, num, d, 0, -1) : -1;
  if (fid < 0) return false;
  if (tr->fs.v[fid].deg > OM_X_MAX_DEG) return too_complex("a product of more than 6 sizes");
  int32_t f = fid;
  return poly_add_term(out, 1, &f, 1);
}

int om__x_floordiv(om_trace *tr, int a, int64_t d) {
  if (d < 1) return om__trace_fail(OM_ERR_TRACE_SYMBOLIC_SHAPE, "a size is divided by %lld", (long long)d), -1;
  om_poly p, q;
  om__x_get(tr, a, &p);
  return poly_floor(tr, &p, d, &q) ? intern(tr, &q) : -1;
}

int om__x_minc(om_trace *tr, int a, int64_t c) {
  int64_t lo, v, c0 = tr->xs.v[a].c0, cc;
  if (om__x_is_const(tr, a, &v)) return om__x_const(tr, v < c ? v : c);
  if (om__x_min(tr, a, &lo) && lo >= c) return om__x_const(tr, c);
  const om_xexpr *x = &tr->xs.v[a];
  if (!c0 && x->n == 1 && x->t[0].coef == 1 && x->t[0].n == 1 && tr->fs.v[x->t[0].f[0]].var == OM_XF_MIN) { /* min(min(N, d), c) */
    const om_xfactor *f = &tr->fs.v[x->t[0].f[0]];
    return om__x_minc(tr, f->num, f->den < c ? f->den : c);
  }
  if (c0 && !__builtin_sub_overflow(c, c0, &cc)) { /* min(N + c0, c) = min(N, c - c0) + c0: one factor for both */
    int n = om__x_lin(tr, 1, a, 0, -1, -c0), m = n < 0 ? -1 : om__x_minc(tr, n, cc);
    return m < 0 ? -1 : om__x_lin(tr, 1, m, 0, -1, c0);
  }
  int fid = factor(tr, a, c, 0, OM_XF_MIN);
  if (fid < 0) return -1;
  if (tr->fs.v[fid].deg > OM_X_MAX_DEG) return too_complex("a product of more than 6 sizes"), -1;
  om_poly p = {0};
  int32_t f = fid;
  return poly_add_term(&p, 1, &f, 1) ? intern(tr, &p) : -1;
}

/* 2^53: every integer of magnitude up to it converts to double exactly, so double(N) * s rounds
 * once and floor(double(N) * s) is one IEEE computation, the same in C, JS and the graph. */
#define EXACT_IN_DOUBLE ((int64_t)1 << 53)

/* s's shortest decimal that reads back as s ("0.7", not 0.69999999999999996), into buf[32]. */
static const char *shortest(double s, char *buf) {
  for (int digits = 1; digits <= 17; digits++)
    if (snprintf(buf, 32, "%.*g", digits, s), strtod(buf, NULL) == s) break;
  return buf;
}

int om__x_fmul(om_trace *tr, int a, double s, const char *who) {
  if (!(s > 0) || !isfinite(s)) return om__trace_fail(OM_ERR_TRACE_SYMBOLIC_SHAPE, "%s: a size is scaled by %g", who, s), -1;
  int64_t c, v[64];
  if (om__x_is_const(tr, a, &c)) {
    double p = floor((double)c * s);
    if (c > EXACT_IN_DOUBLE || c < -EXACT_IN_DOUBLE || !(p < 0x1p63 && p >= -0x1p63))
      return too_complex("a scaled size overflows"), -1;
    return om__x_const(tr, (int64_t)p);
  }
  /* a declared maximum that lets a reach 2^53: the graph's Cast to double would round a there
   * (an undeclared symbol cannot: an axis of 2^53 elements is 2^55 bytes of float32 at least) */
  int64_t top = INT64_MAX; /* where a overflows at the maxima */
  bool declared = false;
  for (int k = 0; k < tr->symbols.n; k++) {
    const om_symbol *sym = &tr->symbols.v[k];
    bool bounded = sym->decl_vmax < INT64_MAX / sym->multiple; /* om_trace_dim's max 0: none */
    v[k] = bounded ? sym->decl_vmax : sym->vmin;
    declared |= bounded && (tr->xs.v[a].syms >> k & 1);
  }
  if (declared && (!om__x_eval(tr, a, v, &top) || top > EXACT_IN_DOUBLE || top < -EXACT_IN_DOUBLE))
    return om__trace_fail(OM_ERR_TRACE_SYMBOLIC_SHAPE, "%s: the size %s, scaled by %s and rounded down in double, may reach "
                          "2^53 at the declared maxima (%lld), where double no longer holds every integer: declare "
                          "maxima that keep it below", who, om__x_name(tr, a), shortest(s, (char[32]){0}), (long long)top), -1;
  int fid = factor(tr, a, 0, s, OM_XF_FMUL);
  if (fid < 0) return -1;
  if (tr->fs.v[fid].deg > OM_X_MAX_DEG) return too_complex("a product of more than 6 sizes"), -1;
  om_poly p = {0};
  int32_t f = fid;
  return poly_add_term(&p, 1, &f, 1) ? intern(tr, &p) : -1;
}

int om__x_divexact(om_trace *tr, int a, int b) {
  om_poly p, q, out = {0};
  om__x_get(tr, a, &p);
  om__x_get(tr, b, &q);
  if (q.n == 0) { /* by a constant */
    if (!q.c0 || p.c0 % q.c0) return -1;
    out.c0 = p.c0 / q.c0;
    for (int i = 0; i < p.n; i++) {
      if (p.t[i].coef % q.c0) return -1;
      out.t[out.n] = p.t[i];
      out.t[out.n++].coef /= q.c0;
    }
    return intern(tr, &out);
  }
  if (q.n != 1 || q.c0 || p.c0) return -1; /* by one monomial: each term must hold its factors */
  for (int i = 0; i < p.n; i++) {
    const om_xterm *t = &p.t[i], *m = &q.t[0];
    if (t->coef % m->coef) return -1;
    int32_t f[OM_X_MAX_DEG];
    int n = 0, j = 0;
    for (int u = 0; u < t->n; u++) {
      if (j < m->n && t->f[u] == m->f[j]) j++;
      else f[n++] = t->f[u];
    }
    if (j < m->n || !poly_add_term(&out, t->coef / m->coef, f, n)) return -1;
  }
  return intern(tr, &out);
}

/* ---- evaluation ---- */

/* Factor f at the variables v (per symbol). false on overflow. */
static bool eval_factor(const om_trace *tr, int f, const int64_t *v, int64_t *out) {
  const om_xfactor *x = &tr->fs.v[f];
  if (x->var >= 0) {
    *out = v[x->var];
    return true;
  }
  int64_t n;
  if (!om__x_eval(tr, x->num, v, &n)) return false;
  if (x->var == OM_XF_FMUL) { /* beyond 2^53 the conversion would round: not this factor's value */
    double p = floor((double)n * x->scale);
    if (n > EXACT_IN_DOUBLE || n < -EXACT_IN_DOUBLE || !(p < 0x1p63 && p >= -0x1p63)) return false;
    *out = (int64_t)p;
    return true;
  }
  *out = x->var == OM_XF_MIN ? (n < x->den ? n : x->den) : floor_div(n, x->den);
  return true;
}

bool om__x_eval(const om_trace *tr, int a, const int64_t *v, int64_t *out) {
  const om_xexpr *x = &tr->xs.v[a];
  int64_t sum = x->c0;
  for (int i = 0; i < x->n; i++) {
    int64_t t = x->t[i].coef, f;
    for (int j = 0; j < x->t[i].n; j++)
      if (!eval_factor(tr, x->t[i].f[j], v, &f) || __builtin_mul_overflow(t, f, &t)) return false;
    if (__builtin_add_overflow(sum, t, &sum)) return false;
  }
  *out = sum;
  return true;
}

/* Whether a never decreases as any variable grows, from its form: every term has a positive
 * coefficient and factors that never decrease (a variable; a floor of such a numerator), and a
 * product's factors are not negative at the variables' smallest values v (so it only grows). */
static bool nondecreasing(const om_trace *tr, int a, const int64_t *v) {
  const om_xexpr *x = &tr->xs.v[a];
  for (int i = 0; i < x->n; i++) {
    if (x->t[i].coef <= 0) return false;
    for (int j = 0; j < x->t[i].n; j++) {
      const om_xfactor *f = &tr->fs.v[x->t[i].f[j]];
      int64_t at;
      if (f->var < 0 && !nondecreasing(tr, f->num, v)) return false;
      if (x->t[i].n > 1 && (!eval_factor(tr, x->t[i].f[j], v, &at) || at < 0)) return false;
    }
  }
  return true;
}

bool om__x_min(const om_trace *tr, int a, int64_t *out) {
  int64_t v[64];
  for (int k = 0; k < tr->symbols.n; k++) v[k] = tr->symbols.v[k].vmin;
  return nondecreasing(tr, a, v) && om__x_eval(tr, a, v, out);
}

/* ---- equality everywhere ---- */

/* The period of expression x in every variable (the least common multiple of its factors'),
 * or 0 when it is above OM_X_MAX_PERIOD (a minimum has none). */
static int64_t expr_period(const om_trace *tr, const om_xexpr *x) {
  int64_t period = 1;
  for (int i = 0; i < x->n; i++)
    for (int j = 0; j < x->t[i].n; j++) {
      int64_t q = tr->fs.v[x->t[i].f[j]].period;
      period = period / gcd(period, q) * q;
      if (period > OM_X_MAX_PERIOD) return 0;
    }
  return period;
}

/* a - b is a quasi-polynomial: on each residue class of its period L in every variable it is a
 * polynomial of degree at most its degree D, so it is zero everywhere exactly when it is zero
 * at D + 1 points of each of the L classes in each variable (the grid below). The period of
 * floor(N / d) is d times N's. Returns 1 (equal everywhere), 0 (differ: the variables of a
 * point where they do are in at, per symbol), -1 (the grid is too large to decide). mult
 * (per symbol, or NULL for all 1) restricts the variables to multiples of mult[k]. */
int om__x_same(om_trace *tr, int a, int b, const int64_t *mult, int64_t *at) {
  if (a == b && !mult) return 1;
  int d = om__x_lin(tr, 1, a, -1, b, 0);
  if (d < 0) return -1;
  const om_xexpr *x = &tr->xs.v[d];
  if (!x->n) {
    if (!x->c0) return 1;
    for (int k = 0; k < tr->symbols.n; k++) at[k] = tr->symbols.v[k].size / tr->symbols.v[k].multiple;
    return 0;
  }
  int64_t period = expr_period(tr, x);
  if (!period) return -1;
  int vars[64], nv = 0;
  for (int k = 0; k < tr->symbols.n; k++)
    if (x->syms >> k & 1) vars[nv++] = k;
  int64_t per = period * (x->deg + 1), total = 1; /* points per variable */
  for (int i = 0; i < nv; i++)
    if ((total *= per) > OM_X_MAX_GRID) return -1;
  int64_t v[64];
  for (int64_t p = 0; p < total; p++) {
    int64_t q = p;
    for (int k = 0; k < tr->symbols.n; k++) v[k] = tr->symbols.v[k].size / tr->symbols.v[k].multiple;
    for (int i = 0; i < nv; i++) { /* the p-th grid point: base + the class + period * the step */
      int k = vars[i];
      int64_t r = q % per, base = tr->symbols.v[k].vmin;
      q /= per;
      v[k] = base + r;
      if (mult && mult[k] > 1) v[k] = ((base + mult[k] - 1) / mult[k] + r) * mult[k];
    }
    int64_t val;
    if (!om__x_eval(tr, d, v, &val)) return -1;
    if (val) {
      memcpy(at, v, sizeof(int64_t) * (size_t)tr->symbols.n);
      return 0;
    }
  }
  return 1;
}

/* a takes finitely many values exactly when it is periodic: on each residue class of its period
 * L it is a polynomial of degree at most D in each variable, so it is constant there when it is
 * at D + 1 points of the class in each variable (the grid of om__x_same, compared with the
 * class's first point); its values are then those at one period from the smallest sizes. */
int om__x_values(const om_trace *tr, int a, int64_t *vals, int cap) {
  const om_xexpr *x = &tr->xs.v[a];
  int64_t period = expr_period(tr, x);
  if (!x->n || !period || period == 1) return 0; /* a constant, no period, or a polynomial that moves */
  int vars[64], nv = 0;
  for (int k = 0; k < tr->symbols.n; k++)
    if (x->syms >> k & 1) vars[nv++] = k;
  int64_t per = period * (x->deg + 1), total = 1;
  for (int i = 0; i < nv; i++)
    if ((total *= per) > OM_X_MAX_GRID) return 0;
  int n = 0;
  for (int64_t p = 0; p < total; p++) {
    int64_t v[64], first[64], q = p, val, val0;
    for (int k = 0; k < tr->symbols.n; k++) v[k] = first[k] = tr->symbols.v[k].vmin;
    for (int i = 0; i < nv; i++) { /* the p-th grid point, and the first point of its class */
      int64_t r = q % per;
      q /= per;
      v[vars[i]] += r, first[vars[i]] += r % period;
    }
    if (!om__x_eval(tr, a, v, &val) || !om__x_eval(tr, a, first, &val0) || val != val0) return 0;
    int at = 0;
    while (at < n && vals[at] < val) at++;
    if (at < n && vals[at] == val) continue;
    if (n == cap) return 0;
    memmove(vals + at + 1, vals + at, sizeof *vals * (size_t)(n - at));
    vals[at] = val, n++;
  }
  return n;
}

/* ---- names ---- */

/* Appends to buf (capacity cap, length *n). */
static void put(char *buf, size_t cap, size_t *n, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void put(char *buf, size_t cap, size_t *n, const char *fmt, ...) {
  if (*n >= cap) return;
  va_list ap;
  va_start(ap, fmt);
  int k = vsnprintf(buf + *n, cap - *n, fmt, ap);
  va_end(ap);
  *n += k > 0 ? (size_t)k : 0;
}

/* The product of the multiples of term t's variables (its size in the symbols' units). */
static int64_t term_scale(const om_trace *tr, const om_xterm *t) {
  int64_t m = 1;
  for (int j = 0; j < t->n; j++)
    if (tr->fs.v[t->f[j]].var >= 0) m *= tr->symbols.v[tr->fs.v[t->f[j]].var].multiple;
  return m;
}

static void print_expr(const om_trace *tr, const om_xexpr *x, int64_t scale, char *buf, size_t cap, size_t *n);

/* Writes x * scale in the symbols' names: each variable v_k as s_k / m_k, so a coefficient may
 * be a fraction ("h/2" for 2*v of h = 4*v); floor(N / d) as floor((L N) / (L d)), L making N's
 * coefficients whole in the symbols ("floor((h+4)/8)"). */
static void print_expr(const om_trace *tr, const om_xexpr *x, int64_t scale, char *buf, size_t cap, size_t *n) {
  size_t start = *n;
  for (int i = 0; i < x->n; i++) {
    const om_xterm *t = &x->t[i];
    int64_t num = t->coef * scale, den = term_scale(tr, t), g = gcd(num, den);
    num /= g;
    den /= g;
    if (*n > start) put(buf, cap, n, num < 0 ? "-" : "+");
    else if (num < 0) put(buf, cap, n, "-");
    bool first = true;
    if (num != 1 && num != -1) put(buf, cap, n, "%lld", (long long)(num < 0 ? -num : num)), first = false;
    for (int j = 0; j < t->n; j++) {
      const om_xfactor *f = &tr->fs.v[t->f[j]];
      if (!first) put(buf, cap, n, "*");
      first = false;
      if (f->var >= 0) {
        put(buf, cap, n, "%s", tr->symbols.v[f->var].name);
        continue;
      }
      const om_xexpr *inner = &tr->xs.v[f->num];
      if (f->var == OM_XF_MIN) {
        put(buf, cap, n, "min(");
        print_expr(tr, inner, 1, buf, cap, n);
        put(buf, cap, n, ",%lld)", (long long)f->den);
        continue;
      }
      if (f->var == OM_XF_FMUL) { /* floor(H*0.7), floor((H+1)*0.7): the double's shortest decimal */
        bool sum = inner->n + (inner->c0 != 0) > 1;
        char sd[32];
        put(buf, cap, n, sum ? "floor((" : "floor(");
        print_expr(tr, inner, 1, buf, cap, n);
        put(buf, cap, n, sum ? ")*%s)" : "*%s)", shortest(f->scale, sd));
        continue;
      }
      int64_t l = 1;
      for (int u = 0; u < inner->n; u++) {
        int64_t m = term_scale(tr, &inner->t[u]);
        l = l / gcd(l, m) * m;
      }
      bool sum = inner->n + (inner->c0 != 0) > 1; /* floor((h+1)/2), floor(h/2) */
      put(buf, cap, n, sum ? "floor((" : "floor(");
      print_expr(tr, inner, l, buf, cap, n);
      put(buf, cap, n, sum ? ")/%lld)" : "/%lld)", (long long)(f->den * l));
    }
    if (first) put(buf, cap, n, "1");
    if (den != 1) put(buf, cap, n, "/%lld", (long long)den);
  }
  if (x->c0 || *n == start) put(buf, cap, n, *n > start && x->c0 > 0 ? "+%lld" : "%lld", (long long)(x->c0 * scale));
}

const char *om__x_name(om_trace *tr, int a) {
  om_xexpr *x = &tr->xs.v[a];
  if (x->name) return x->name;
  char buf[512];
  size_t n = 0;
  print_expr(tr, x, 1, buf, sizeof buf, &n);
  if (n >= sizeof buf) snprintf(buf + sizeof buf - 4, 4, "...");
  return x->name = om__arena_strdup(&tr->g.arena, buf);
}

void om__x_reset(om_trace *tr) {
  tr->xs.n = tr->fs.n = tr->extents.n = tr->same.n = 0;
  if (tr->xindex) memset(tr->xindex, 0, sizeof *tr->xindex * tr->xindex_cap);
  for (int k = 0; k < tr->symbols.n; k++) tr->symbols.v[k].var_factor = -1;
}

void om__x_extent(om_trace *tr, int x) {
  if (x < 0 || tr->xs.v[x].extent) return;
  int *slot = OM_VEC_PUSH_SLOT(tr->extents);
  if (!slot) return; /* out of memory: the pool has one size fewer to fit with */
  *slot = x;
  tr->xs.v[x].extent = true;
}
