/* Fitting the numbers a model computes from sizes (docs/symbolic-axes.md, "Arguments that move
 * with the sizes"). An integer argument (a slice bound, a reshape size, a created tensor's size,
 * an index) or a scalar that differs between the runs at other sizes was computed from sizes:
 * it is written as the expression that gives its value in every run, tried in this order, each
 * over the *pool* of sizes the model can read (the call's inputs' extents first, then every
 * symbol, then every extent of a value the trace has made; the first two forms over the first
 * two of those before the rest):
 *   c * E + b;  m * floor((c * E + b) / k) + d, k <= 16 (the only such form that fits, else
 *   the runs cannot tell which); k * floor((E + b) / k) for a k > 16 that divides every value
 *   (a split's last piece by 26 starts there); min(E + b, k) (a split's piece, whole at larger sizes),
 *   and c * E plus such a minimum or maximum (Math.max(T, B) - T);  c * (a product of input axes) + b;
 *   c * E1 * E2 + b;  c1 * E1 + c2 * E2 + b;  floor((c * E + b) / k) of a symbol E for a divisor
 *   16 < k <= 256 and any numerator (Math.floor(L * 0.55), ViTMAE's kept length, is floor(11L / 20)):
 *   every such form with k from 2 up that fits is counted, one is taken only where it is the only
 *   one (or all equal over the range), else the runs go where they differ most (far_floor: 2k sizes
 *   of every residue would take more runs than a trace makes);  periodic forms by any divisor (steps of k every k
 *   sizes where the step the points show leaves no one form: a window's padding);  a floor division of
 *   a remainder by w <= 16 from a table of every residue (half a split's last piece);  last, E * (any of
 *   these forms), up to three factors (B * floor((H + 6) / 7)); last, over a range the runs saw
 *   whole, the steps the values take (step_table). 
 * With 7 runs (the record run and 6 at other sizes, runs.c; fewer where a run has no such call)
 * an affine form is checked at more sizes than determine it, a floor division must have seen
 * every residue of its divisor at twice as many sizes as the divisor (else the record run asks
 * for more runs; not where E takes a few values only, each seen twice: covered()), and no two
 * symbols move alike; sizes count once however many runs repeat
 * them; where the runs saw every size of a symbol's range (a piece of two sizes), any form that
 * fits them holds (whole_range). What
 * fits none is refused by the caller, naming the values seen. A float scalar is fitted as
 * a * f(E) + b, f one of x, 1 / x, sqrt(x), 1 / sqrt(x) (x.div(T), x.mul(1 / Math.sqrt(d))), else
 * as f(N) of an integer N of any form above (x.div(B * T * C)), or N over 2, 4, 8 or 16. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace/trace.h"

#define POOL_MAX 192
#define RUNS_MAX OM_RUNS_MAX

/* The points a fit sees: the example and each run with a partner call (l->rc), whose indices
 * are ix; and the pool's values there. */
typedef struct pool {
  int n, runs, near; /* near: the first of them are the call's inputs' extents and the symbols */
  int ix[RUNS_MAX];
  int x[POOL_MAX];
  int64_t e[POOL_MAX][RUNS_MAX + 1]; /* [0] the example's value, [1 + i] run ix[i]'s */
} pool;

/* Adds expression x (not a constant, not yet there) with its values. */
static void pool_add(const om_trace *tr, pool *p, int x) {
  if (x < 0 || p->n == POOL_MAX || om__x_is_const(tr, x, NULL)) return;
  for (int i = 0; i < p->n; i++)
    if (p->x[i] == x) return;
  int64_t v[64];
  om__run_example(tr, v);
  if (!om__x_eval(tr, x, v, &p->e[p->n][0])) return;
  for (int i = 0; i < p->runs; i++)
    if (!om__x_eval(tr, x, tr->runs.v[p->ix[i]].v, &p->e[p->n][1 + i])) return;
  p->x[p->n++] = x;
}

/* The runs with a partner call, into p (no pool yet). */
static void pool_runs(om_lower *l, pool *p) {
  p->n = p->runs = 0;
  for (int r = 0; r < l->tr->runs.n && r < RUNS_MAX; r++)
    if (l->rc[r]) p->ix[p->runs++] = r;
}

static void pool_make(om_lower *l, pool *p) {
  om_trace *tr = l->tr;
  pool_runs(l, p);
  for (int i = 0; l->in && i < l->c->n_in; i++)
    for (int d = 0; d < l->c->in[i]->ndim; d++) pool_add(tr, p, om__lower_in_ext(l, i, d));
  for (int k = 0; k < tr->symbols.n; k++) { /* each symbol, and its variable when it is a multiple (seq / 2) */
    int x = om__x_sym(tr, k);
    pool_add(tr, p, x);
    if (tr->symbols.v[k].multiple > 1) pool_add(tr, p, om__x_divexact(tr, x, om__x_const(tr, tr->symbols.v[k].multiple)));
  }
  p->near = p->n;
  for (int k = 0; k < tr->extents.n; k++) pool_add(tr, p, tr->extents.v[k]);
}

/* Whether the values e take every residue mod 2 and mod 3: an affine fit over values that are
 * all odd (a model's fixed sizes can push every run's size to one parity) cannot tell B - 1
 * from 2 * floor((B - 1) / 2). */
static bool residues_seen(const int64_t *e, int n) {
  bool two[2] = {0}, three[3] = {0};
  for (int r = 0; r < n; r++) two[((e[r] % 2) + 2) % 2] = three[((e[r] % 3) + 3) % 3] = true;
  return two[0] && two[1] && three[0] && three[1] && three[2];
}

/* How many different values e takes (runs that move another symbol repeat a size: a point
 * seen twice checks nothing). */
static int distinct(const int64_t *e, int n) {
  int d = 0;
  for (int r = 0; r < n; r++) {
    int q = 0;
    while (q < r && e[q] != e[r]) q++;
    d += q == r;
  }
  return d;
}

/* Whether e takes odd and even values. */
static bool both_parities(const int64_t *e, int n) {
  bool seen[2] = {0};
  for (int r = 0; r < n; r++) seen[e[r] & 1] = true;
  return seen[0] && seen[1];
}

/* c from two runs where e moves, and b, such that a = c * e + b in every run: at three sizes
 * at least, as two determine it, but for a itself (a size the model reads off a shape: E at
 * every run) or where e is bounded (every value it takes seen, covered()). */
static bool affine(const int64_t *a, const int64_t *e, int n, bool bounded, int64_t *c, int64_t *b) {
  int sizes = distinct(e, n);
  if (sizes < 2) return false;
  int r = 1;
  while (r < n && e[r] == e[0]) r++;
  if (r == n || (a[r] - a[0]) % (e[r] - e[0])) return false;
  *c = (a[r] - a[0]) / (e[r] - e[0]);
  if (!*c) return false;
  *b = a[0] - *c * e[0];
  for (int k = 0; k < n; k++)
    if (a[k] != *c * e[k] + *b) return false;
  return sizes >= 3 || bounded || (*c == 1 && *b == 0);
}

static int64_t fdiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

#define K_MAX 16 /* the largest divisor of a floor division fitted */

/* The b with k a <= c e + b < k a + k in every run, [lo, hi]; false when there is none. */
static bool b_range(const int64_t *a, const int64_t *e, int n, int64_t c, int64_t k, int64_t *lo, int64_t *hi) {
  *lo = INT64_MIN, *hi = INT64_MAX;
  for (int r = 0; r < n; r++) {
    int64_t l, h;
    if (__builtin_mul_overflow(k, a[r], &l) || __builtin_mul_overflow(c, e[r], &h) || __builtin_sub_overflow(l, h, &l)) return false;
    h = l + k - 1;
    if (l > *lo) *lo = l;
    if (h < *hi) *hi = h;
  }
  return *lo <= *hi;
}

/* b such that a = floor((c * e + b) / k) in every run: true when the runs see every residue of
 * c * e mod k (then b is unique) at 2k sizes (as many again to check it: with fewer, a form like
 * floor((3B + 14) / 16) fits what 5 * floor((B - 2) / 5) gives at 21 sizes). A form the points agree
 * with that they cannot pin down so (too few of them, a residue missing) sets *weak: 1, or 2
 * when c * e takes one residue only. */
static bool floor_form(const int64_t *a, const int64_t *e, int n, int64_t c, int64_t k, int64_t *b, int *weak) {
  int64_t lo, hi;
  if (!b_range(a, e, n, c, k, &lo, &hi)) return false;
  *b = lo;
  for (int r = 0; r < n; r++)
    if (fdiv(c * e[r] + *b, k) != a[r]) return false;
  bool seen[K_MAX] = {0};
  for (int r = 0; r < n; r++) seen[((c * e[r]) % k + k) % k] = true;
  int residues = 0;
  for (int64_t m = 0; m < k; m++) residues += seen[m];
  if (residues == k && distinct(e, n) >= 2 * k) return true; /* b is unique, and checked at as many sizes again */
  *weak = residues > 1 ? 1 : 2; /* 2: one residue only, where the floor may be a polynomial */
  return false;
}

/* The numerator coefficients c a floor division floor((c * E + b) / k) of values a is tried with,
 * into cs (their count): every c below 2k, and those near k times the values' slope over the runs
 * where that is 2 or more (Math.ceil(T * 2.5) is floor((5T + 1) / 2), Math.floor(T / 0.3) is
 * floor((10T) / 3)): over sizes D apart the floor moves c * D / k give or take 1, so c is within k
 * / D + 1 of k times the slope. */
static int numerators(const int64_t *a, const int64_t *e, int n, int64_t k, int64_t *cs) {
  int m = 0;
  for (int64_t c = 1; c < 2 * k; c++) cs[m++] = c;
  int lo = 0, hi = 0;
  for (int r = 1; r < n; r++) lo = e[r] < e[lo] ? r : lo, hi = e[r] > e[hi] ? r : hi;
  int64_t d = e[hi] - e[lo], rise = a[hi] - a[lo];
  if (d < 2 || rise < 2 * d || rise > (int64_t)1 << 20) return m;
  /* c in [k (rise - 1) / d, k (rise + 1) / d], the part above 2k - 1, at most K_MAX + 2 of them */
  int64_t from = k * (rise - 1) / d, to = (k * (rise + 1) + d - 1) / d;
  if (from < 2 * k) from = 2 * k;
  for (int64_t c = from; c <= to && m < 2 * K_MAX + K_MAX + 2; c++) cs[m++] = c;
  return m;
}

/* Whether expression x has no floor in it: a polynomial of the sizes. */
static bool floor_free(const om_trace *tr, int x) {
  const om_xexpr *e = &tr->xs.v[x];
  for (int t = 0; t < e->n; t++)
    for (int f = 0; f < e->t[t].n; f++)
      if (tr->fs.v[e->t[t].f[f]].var < 0) return false;
  return true;
}

#define BOUNDED_MAX 16 /* the most values of a bounded size a fit takes as a table */

/* Whether pool entry i takes finitely many values at every size (om__x_values: a remainder, a
 * split's last piece B - 3 * floor((B - 1) / 3)) and the points saw each of them at two sizes of
 * its symbols or more: a form that fits a function of it at the points then holds everywhere
 * (Math.ceil of half that piece, 1, 1, 2, is floor((E + 1) / 2), seen at E = 1, 2, 3 only, where
 * a floor division otherwise needs 2k sizes), and a value seen twice checks that it is one. */
static bool covered(const om_trace *tr, const pool *p, int i, int n) {
  int64_t vals[BOUNDED_MAX], v0[64];
  int nv = om__x_values(tr, p->x[i], vals, BOUNDED_MAX);
  if (!nv) return false;
  om__run_example(tr, v0);
  uint64_t syms = tr->xs.v[p->x[i]].syms;
  for (int u = 0; u < nv; u++) {
    const int64_t *first = NULL;
    bool twice = false;
    for (int r = 0; r < n && !twice; r++) {
      if (p->e[i][r] != vals[u]) continue;
      const int64_t *v = r ? tr->runs.v[p->ix[r - 1]].v : v0;
      for (int k = 0; first && k < tr->symbols.n && !twice; k++) twice = (syms >> k & 1) && v[k] != first[k];
      if (!first) first = v;
    }
    if (!twice) return false;
  }
  return true;
}

/* The largest variable of symbol k up to which the record run holds where a run above the example
 * took another path (parts, runs.c: dropped, and tr->far_parted set, so the trace is cut there by
 * the range check or refused at its end): one less than the least such run's, the other symbols at
 * their examples; the symbol's maximum otherwise. A fit need hold up to there only: the model
 * contiguous()'s a view at floor(T / 4) = 1, traced at T = 5, calls other ops from T = 8. */
static int64_t path_max(const om_trace *tr, int k) {
  int64_t end = tr->symbols.v[k].vmax, v0[64];
  if (!tr->far_parted) return end;
  om__run_example(tr, v0);
  for (int r = 0; r < tr->runs.n; r++) {
    const int64_t *v = tr->runs.v[r].v;
    bool alone = tr->runs.v[r].dropped && v[k] > v0[k];
    for (int j = 0; j < tr->symbols.n && alone; j++) alone = j == k || v[j] == v0[j];
    if (alone && v[k] - 1 < end) end = v[k] - 1;
  }
  return end;
}

/* Whether pool entry i is a size of one symbol whose whole range (a piece's: T = 18 and 19 between
 * a window's step and where the model fails) the points have run: a form that fits there holds
 * at every size, however few they are. */
static bool whole_range(const om_trace *tr, const pool *p, int i, int n) {
  uint64_t syms = tr->xs.v[p->x[i]].syms;
  if (__builtin_popcountll(syms) != 1) return false;
  int k = __builtin_ctzll(syms);
  const om_symbol *s = &tr->symbols.v[k];
  int64_t end = path_max(tr, k);
  if (end - s->vmin >= n) return false;
  int64_t v0[64];
  om__run_example(tr, v0);
  for (int64_t x = s->vmin; x <= end; x++) {
    int r = 0;
    while (r < n && (r ? tr->runs.v[p->ix[r - 1]].v : v0)[k] != x) r++;
    if (r == n) return false;
  }
  return true;
}

/* Where forms a and b that fit differ at at: 1 when they differ only above a maximum where the
 * model fails (one that fails above T = 19, where a floor division by 2 and one by 15 that fit
 * agree up to 19: they are one), 0 with a point inside the ranges in at, -1 when the ranges are
 * too large to go through (at is outside them, where no run can be made: undecided). */
static int in_range(om_trace *tr, int a, int b, int64_t *at) {
  uint64_t syms = tr->xs.v[a].syms | tr->xs.v[b].syms;
  bool inside = true;
  int64_t total = 1;
  for (int k = 0; k < tr->symbols.n; k++) {
    const om_symbol *s = &tr->symbols.v[k];
    if (!(syms >> k & 1)) continue;
    /* above a maximum: outside where the model's failure set it, where the user declared it or
     * a branch's piece ends (the graph answers for that range only: om.Dim('T', { max: 10 }) run
     * at every size has seen all there is), or where the model takes another path (path_max) */
    int64_t end = path_max(tr, k);
    bool bound = s->max_why || s->vmax == s->decl_vmax || end < s->vmax;
    inside &= at[k] >= s->vmin && (at[k] <= end || !bound);
    if (total <= OM_X_MAX_GRID) total = end - s->vmin >= OM_X_MAX_GRID ? OM_X_MAX_GRID + 1 : total * (end - s->vmin + 1);
  }
  if (inside) return 0;
  if (total > OM_X_MAX_GRID) return -1;
  for (int64_t p = 0; p < total; p++) { /* every point of the ranges, the other symbols at the example */
    int64_t v[64], q = p, va, vb;
    om__run_example(tr, v);
    for (int k = 0; k < tr->symbols.n; k++) {
      const om_symbol *s = &tr->symbols.v[k];
      if (!(syms >> k & 1)) continue;
      int64_t width = path_max(tr, k) - s->vmin + 1;
      v[k] = s->vmin + q % width;
      q /= width;
    }
    if (!om__x_eval(tr, a, v, &va) || !om__x_eval(tr, b, v, &vb)) return -1;
    if (va != vb) return memcpy(at, v, sizeof(int64_t) * (size_t)tr->symbols.n), 0;
  }
  return 1;
}

#define LINE_SCAN (2 * OM_X_MAX_PERIOD) /* the sizes from a symbol's minimum scanned by on_lines */

/* Whether expression x holds a minimum, nested ones too. */
static bool has_minimum(const om_trace *tr, int x) {
  const om_xexpr *e = &tr->xs.v[x];
  for (int i = 0; i < e->n; i++)
    for (int j = 0; j < e->t[i].n; j++) {
      const om_xfactor *f = &tr->fs.v[e->t[i].f[j]];
      if (f->var == OM_XF_MIN || (f->var < 0 && has_minimum(tr, f->num))) return true;
    }
  return false;
}

/* Whether a and b, one of them over a minimum, differ on the line of one of their symbols, the
 * others at the example, within LINE_SCAN sizes from its minimum (the point into at): where
 * om__x_same cannot decide, as such a form has no period (the pad of max(3, T) up to windows of
 * 49, whose forms that fit differ at some T below 4096). Not for others: a step the runs see once
 * may be a threshold (a slice of 1 row, of 2 from T = 100), which the range's runs cut into pieces. */
static bool on_lines(om_trace *tr, int a, int b, int64_t *at) {
  uint64_t syms = tr->xs.v[a].syms | tr->xs.v[b].syms;
  int64_t v[64], va, vb;
  if (!has_minimum(tr, a) && !has_minimum(tr, b)) return false;
  for (int k = 0; k < tr->symbols.n; k++) {
    const om_symbol *s = &tr->symbols.v[k];
    om__run_example(tr, v);
    for (int64_t t = s->vmin; (syms >> k & 1) && t <= s->vmax && t < s->vmin + LINE_SCAN; t++) {
      v[k] = t;
      if (!om__x_eval(tr, a, v, &va) || !om__x_eval(tr, b, v, &vb)) break;
      if (va != vb) return memcpy(at, v, sizeof(int64_t) * (size_t)tr->symbols.n), true;
    }
  }
  return false;
}

/* Moves at, where a and b differ, to the middle of the sizes from it up a symbol's line where they
 * differ too: the forms that place a step anywhere between two runs (a window of 31 between T = 21
 * and 32) differ from the first at a run of sizes, and a run at its middle rules out half of them,
 * where one at its start rules out one. */
static void to_middle(om_trace *tr, int a, int b, int64_t *at) {
  uint64_t syms = tr->xs.v[a].syms | tr->xs.v[b].syms;
  int64_t v[64], va, vb;
  for (int k = 0; k < tr->symbols.n; k++) {
    if (!(syms >> k & 1)) continue;
    memcpy(v, at, sizeof(int64_t) * (size_t)tr->symbols.n);
    int64_t hi = at[k];
    for (; hi - at[k] < LINE_SCAN && hi < tr->symbols.v[k].vmax; hi++) {
      v[k] = hi + 1;
      if (!om__x_eval(tr, a, v, &va) || !om__x_eval(tr, b, v, &vb) || va == vb) break;
    }
    if (hi > at[k]) {
      at[k] += (hi - at[k]) / 2;
      return;
    }
  }
}

/* om__x_same of two forms that fit, over the sizes the symbols' ranges hold (in_range); where
 * neither decides, a point on a symbol's line where they differ (on_lines). Where they differ,
 * at is in the middle of such sizes (to_middle). */
static int same_in_range(om_trace *tr, int a, int b, int64_t *at) {
  int same = om__x_same(tr, a, b, NULL, at);
  same = same ? same : in_range(tr, a, b, at);
  if (same < 0 && on_lines(tr, a, b, at)) same = 0;
  if (!same) to_middle(tr, a, b, at);
  return same;
}

/* ---- periodic forms: any divisor ---- */

#define K_FAR OM_X_MAX_PERIOD /* the largest divisor of a periodic form (om__x_same decides up to it) */
#define SPREAD 16             /* the forms that fit, at most, that the runs tell apart in one go */

/* The points (E, a) of pool entry e sorted by E, one per size, into pe, pa; their count, or 0
 * when one size has two values (a is no function of E alone). */
static int sorted_points(const int64_t *a, const int64_t *e, int n, int64_t *pe, int64_t *pa) {
  int np = 0;
  for (int r = 0; r < n; r++) {
    int at = 0;
    while (at < np && pe[at] < e[r]) at++;
    if (at < np && pe[at] == e[r]) {
      if (pa[at] != a[r]) return 0;
      continue;
    }
    memmove(pe + at + 1, pe + at, sizeof *pe * (size_t)(np - at));
    memmove(pa + at + 1, pa + at, sizeof *pa * (size_t)(np - at));
    pe[at] = e[r], pa[at] = a[r], np++;
  }
  return np;
}

static int64_t gcd64(int64_t a, int64_t b) {
  a = a < 0 ? -a : a, b = b < 0 ? -b : b;
  while (b) { int64_t t = a % b; a = b; b = t; }
  return a;
}

/* The steps q of staircase r (at sizes pe, np points) of step m, (r - r[0]) / m, and the divisors
 * [*klo, *khi] that place them: every two points bound k, (q' - q - 1) k < E' - E < (q' - q + 1) k.
 * false when some r is no whole number of steps. */
static bool steps_of(const int64_t *r, const int64_t *pe, int np, int64_t m, int64_t *q, int64_t *klo, int64_t *khi) {
  for (int j = 0; j < np; j++) {
    if ((r[j] - r[0]) % m) return false;
    q[j] = (r[j] - r[0]) / m;
  }
  *klo = 2, *khi = K_FAR;
  for (int j = 0; j < np; j++)
    for (int t = j + 1; t < np; t++) {
      int64_t de = pe[t] - pe[j], dq = q[t] - q[j];
      if ((de + 1 + dq) / (dq + 1) > *klo) *klo = (de + 1 + dq) / (dq + 1); /* k >= (de + 1) / (dq + 1), rounded up */
      if (dq >= 2 && (de - 1) / (dq - 1) < *khi) *khi = (de - 1) / (dq - 1);
    }
  return true;
}

/* The form c1 * E + m * floor((E + b) / k) + d, -1 on error. */
static int periodic_x(om_trace *tr, int e, int64_t c1, int64_t m, int64_t k, int64_t b, int64_t d) {
  int num = om__x_lin(tr, 1, e, 0, -1, b), f = num < 0 ? -1 : om__x_floordiv(tr, num, k);
  return f < 0 ? -1 : om__x_lin(tr, m, f, c1, e, d);
}

/* c1 * E + m * floor((E + b) / k) + d of pool entry i, for any divisor k up to K_FAR: T % 19,
 * Math.floor(T / 23), a window's padding (w - T % w) % w, which is w * floor((T + w - 1) / w) - T.
 * c1 is 0, 1 or -1; the rest a - c1 * E is then a staircase of equal steps m, and the divisors
 * k and offsets b that put its steps between the sizes where the points have them are the forms
 * that fit (k between the bounds each two points set). One: it. More: OM_FIT_AMBIGUOUS, with
 * points where some differ from the first (at, *n_at), so that the runs there rule them out;
 * OM_FIT_NONE when none fits or no such point can be run. */
static int periodic(om_lower *l, const pool *p, int i, const int64_t *a, int n, int64_t (*at)[64], int *n_at) {
  om_trace *tr = l->tr;
  int64_t pe[RUNS_MAX + 1], pa[RUNS_MAX + 1], r[RUNS_MAX + 1], q[RUNS_MAX + 1];
  int np = sorted_points(a, p->e[i], n, pe, pa);
  if (np < 5) return OM_FIT_NONE; /* five numbers at least, checked at more points than place the steps */
  static const int64_t c1s[3] = {0, 1, -1};
  for (int u = 0; u < 3; u++) {
    int64_t c1 = c1s[u], g = 0;
    bool up = true, down = true;
    for (int j = 0; j < np; j++) {
      r[j] = pa[j] - c1 * pe[j];
      g = gcd64(g, r[j] - r[0]);
      if (j) up &= r[j] >= r[j - 1], down &= r[j] <= r[j - 1];
    }
    if (!g || !(up || down)) continue;
    /* free: steps of g, as the points show them; where that leaves no one form, tied: steps of k
     * every k sizes (a window's padding, Math.ceil(T / 49) * 49, T % 49), k a divisor of g, as one
     * step the points see may be several (a run at 205 past windows of 49 seen up to 29: g is 196),
     * taken where one of them fits */
    int64_t free_at[OM_AT_MAX][64];
    int free_res = OM_FIT_NONE, free_n = 0;
    bool free_fits = false;
    for (int tied = 0; tied < 2; tied++) {
      /* the forms that fit, counted, then SPREAD of them spread over the count */
      int64_t total = 0, ks[SPREAD], bs[SPREAD], ms[SPREAD];
      int nf = 0;
      int64_t klo = 2, khi = K_FAR;
      if (!tied && !steps_of(r, pe, np, up ? g : -g, q, &klo, &khi)) continue;
      for (int pass = 0; pass < 2; pass++)
        for (int64_t k = klo, seen = 0; k <= khi; k++) {
          int64_t m = tied ? k : g, lo, hi, tlo, thi;
          if (tied && (g % k || !steps_of(r, pe, np, up ? m : -m, q, &tlo, &thi) || k < tlo || k > thi)) continue;
          if (!b_range(q, pe, np, 1, k, &lo, &hi)) continue;
          if (!pass) total += hi - lo + 1;
          for (int64_t b = lo; pass && b <= hi && nf < SPREAD; b++, seen++)
            if (seen == (total <= SPREAD ? nf : nf * total / SPREAD)) ks[nf] = k, bs[nf] = b, ms[nf++] = up ? m : -m;
        }
      if (!nf) continue;
      int x0 = periodic_x(tr, p->x[i], c1, ms[0], ks[0], bs[0], r[0]);
      if (x0 < 0) return -1;
      if (total == 1) return x0;
      /* several fit: points where others differ from the first (the runs there rule out one side);
       * none, when each is the first at every size (E only even: floor((E - 2) / 12) and
       * floor((E - 1) / 12) of E = 2B are both floor((B + 5) / 6) - 1) */
      *n_at = 0;
      bool undecided = total > nf;
      for (int f = 1; f < nf && *n_at < OM_AT_MAX; f++) {
        int x = periodic_x(tr, p->x[i], c1, ms[f], ks[f], bs[f], r[0]), same = x < 0 ? -1 : same_in_range(tr, x0, x, at[*n_at]);
        if (x < 0) return -1;
        if (same == 0) ++*n_at;
        undecided |= same < 0;
      }
      int res = *n_at ? OM_FIT_AMBIGUOUS : undecided ? OM_FIT_NONE : x0;
      if (res >= 0 || (tied && !free_fits)) return res;
      if (tied) { /* the tied forms leave several too: runs where they differ after the free forms' */
        int64_t tied_at[OM_AT_MAX][64];
        int tied_n = *n_at;
        memcpy(tied_at, at, sizeof tied_at[0] * (size_t)tied_n);
        for (int t = 0; t < tied_n && free_n < OM_AT_MAX; t++) memcpy(free_at[free_n++], tied_at[t], sizeof tied_at[0]);
        if (free_res == OM_FIT_NONE && free_n) free_res = OM_FIT_AMBIGUOUS;
        break;
      }
      free_fits = true, free_res = res, free_n = *n_at; /* the free forms', should no tied one fit */
      memcpy(free_at, at, sizeof free_at[0] * (size_t)free_n);
    }
    if (free_fits) {
      memcpy(at, free_at, sizeof free_at[0] * (size_t)free_n);
      *n_at = free_n;
      return free_res;
    }
  }
  return OM_FIT_NONE;
}

/* ---- functions of a remainder: any period up to K_MAX ---- */

#define TABLE_PAIRS 3 /* the residues seen twice, at least, before the runs are asked for the others */

static bool seen_at(const om_trace *tr, const int64_t *v, const int64_t (*at)[64], int n);

/* c1 * E + g(R) of a symbol's size E where R = (E + s) mod w (E + s - w * floor((E + s) / w)) and
 * g is m * floor((c * R + b) / k) + d: the nested forms real code writes after a remainder, half or
 * a third of a split's last piece ((T - 1) % 8 + 1) / 2, the two halves of a window's padding
 * ((w - T % w) % w) >> 1 and its rest, Math.ceil(((T + 2) % 5) / 3); and with a slope c1 (the
 * difference of two points at one residue over their distance, an integer), sums of floor
 * divisions by divisors of w, Funnel's relative positions ceil(T / 2) + 2 * ceil(T / 4), which is
 * T + (0, 2, 1, 1)[T mod 4]. The points less c1 * E must be a function of E mod w (the smallest
 * such w), and every residue must have been seen at two sizes or more (a table of w values, each
 * checked once): then any g that gives the table gives every size, as the value less c1 * E
 * depends on the residue alone; g is searched over the table. Where the points are such a function
 * at TABLE_PAIRS residues seen twice (with a slope, at one: its line is checked by the points of
 * that residue) and some residues are missing, sizes near the example with them are asked for
 * (OM_FIT_AMBIGUOUS, at); OM_FIT_NONE when no w fits or no g gives the table. E is a symbol, or of
 * a multiple (om.Dim's multipleOf, a range narrowed to even sizes) its variable seq / m, so that a
 * point is a run's variables. */
static int residue_table(om_lower *l, const pool *p, const int64_t *a, int n, int64_t (*at)[64], int *n_at) {
  om_trace *tr = l->tr;
  int64_t v0[64];
  om__run_example(tr, v0);
  for (int k = 0; k < tr->symbols.n; k++) {
    const om_symbol *sym = &tr->symbols.v[k];
    int e = om__x_sym(tr, k), i = 0; /* of a multiple (seq / 2), its variable: a run's v[k] */
    if (e >= 0 && sym->multiple > 1) e = om__x_divexact(tr, e, om__x_const(tr, sym->multiple));
    if (e < 0) return OM_FIT_ERROR;
    while (i < p->near && p->x[i] != e) i++;
    if (i == p->near) continue;
    const int64_t *E = p->e[i];
    for (int64_t w = 2; w <= K_MAX; w++) {
      int64_t t[K_MAX] = {0}, first[K_MAX] = {0}, c1 = 0;
      int seen[K_MAX] = {0}, pairs = 0, all = 0;
      bool ok = true;
      /* the slope: the first two points at one residue (0 where they differ by no multiple of their distance) */
      for (int r = 1; r < n && !c1; r++)
        for (int q = 0; q < r && !c1; q++)
          if (E[q] != E[r] && (((E[r] - E[q]) % w) + w) % w == 0 && (a[r] - a[q]) % (E[r] - E[q]) == 0)
            c1 = (a[r] - a[q]) / (E[r] - E[q]);
      for (int r = 0; r < n && ok; r++) {
        int64_t rho = ((E[r] % w) + w) % w, v = a[r] - c1 * E[r];
        if (!seen[rho]) t[rho] = v, first[rho] = E[r], seen[rho] = 1;
        else if (t[rho] != v) ok = false;
        else if (E[r] != first[rho] && seen[rho] == 1) seen[rho] = 2, pairs++;
      }
      if (!ok) continue;
      for (int64_t rho = 0; rho < w; rho++) all += seen[rho] == 2;
      if (all < w) { /* the smallest w the points are a function of the residue of: the sizes missing */
        if (pairs < (c1 ? 1 : TABLE_PAIRS) || !at) return OM_FIT_NONE;
        *n_at = 0;
        for (int64_t rho = 0; rho < w && *n_at < OM_AT_MAX; rho++)
          for (int64_t x = v0[k] + 1; seen[rho] < 2 && x <= sym->vmax && x < v0[k] + 1 + 4 * w && *n_at < OM_AT_MAX; x++) {
            int64_t v[64];
            memcpy(v, v0, sizeof v);
            v[k] = x;
            if (x % w != rho || x == first[rho] || seen_at(tr, v, (const int64_t(*)[64])at, *n_at)) continue;
            memcpy(at[(*n_at)++], v, sizeof at[0]);
            seen[rho]++;
          }
        return *n_at ? OM_FIT_AMBIGUOUS : OM_FIT_NONE;
      }
      /* every residue twice: g over the table, the fewest terms first (k = 1 is +-R + d) */
      for (int64_t q = 1; q <= w; q++)
        for (int64_t s = 0; s < w; s++)
          for (int c = 1; c >= -1; c -= 2)
            for (int64_t b = q == 1 ? 0 : -w - q; b <= (q == 1 ? 0 : w + q); b++)
              for (int m = 1; m >= -1; m -= 2) {
                int64_t d = t[0] - m * fdiv(c * (s % w) + b, q);
                bool fits = true;
                for (int64_t rho = 1; rho < w && fits; rho++) fits = t[rho] == m * fdiv(c * ((rho + s) % w) + b, q) + d;
                if (!fits) continue;
                int sh = om__x_lin(tr, 1, e, 0, -1, s), f = sh < 0 ? -1 : om__x_floordiv(tr, sh, w);
                int R = f < 0 ? -1 : om__x_lin(tr, 1, sh, -w, f, 0);
                int num = R < 0 ? -1 : om__x_lin(tr, c, R, 0, -1, b), g = num < 0 ? -1 : om__x_floordiv(tr, num, q);
                return g < 0 ? OM_FIT_ERROR : om__x_lin(tr, m, g, c1, c1 ? e : -1, d);
              }
      return OM_FIT_NONE;
    }
  }
  return OM_FIT_NONE;
}

/* residue_table() where nothing else fits: a floor division (*floored), or the sizes that may pin one down. */
static int remainder_fit(om_lower *l, const pool *p, const int64_t *a, int n, bool *floored, int64_t (*at)[64], int *n_at) {
  *n_at = 0;
  int x = residue_table(l, p, a, n, at, n_at);
  if (x >= 0) *floored = true;
  return x;
}

/* periodic() over the pool: the first entry with one form (a floor division, which *floored
 * marks), else the points that tell the forms of the first entry with several apart
 * (OM_FIT_AMBIGUOUS). */
static int periodic_fit(om_lower *l, const pool *p, const int64_t *a, int n, bool *floored, int64_t (*at)[64], int *n_at) {
  int ambiguous = -1;
  for (int i = 0; i < p->n; i++) {
    int64_t at_i[OM_AT_MAX][64];
    int n_i = 0, x = periodic(l, p, i, a, n, at_i, &n_i);
    if (x >= 0) return *floored = true, *n_at = 0, x;
    if (x == OM_FIT_ERROR) return OM_FIT_ERROR;
    if (x == OM_FIT_AMBIGUOUS && ambiguous < 0) {
      ambiguous = i;
      memcpy(at, at_i, sizeof at_i[0] * (size_t)n_i);
      *n_at = n_i;
    }
  }
  return ambiguous >= 0 ? OM_FIT_AMBIGUOUS : OM_FIT_NONE;
}

/* min(E + b, k) (max: max(E + b, k)) of an entry of the pool: a split's last piece at the example
 * and a whole one further on, Math.min(T - 1, 6), Math.max(T - 2, 1); each side seen at two sizes
 * or more (one only fixes it), or a minimum's below k at one next to a size at k. OM_FIT_NONE when
 * none fits. */
/* Whether points r1 and r2 of pool p (0 the example, 1 + i run ix[i]) are a step apart in every
 * symbol of syms: no size of them lies between. */
static bool adjacent(const om_trace *tr, const pool *p, int r1, int r2, uint64_t syms) {
  int64_t v0[64];
  om__run_example(tr, v0);
  const int64_t *a = r1 ? tr->runs.v[p->ix[r1 - 1]].v : v0, *b = r2 ? tr->runs.v[p->ix[r2 - 1]].v : v0;
  for (int k = 0; k < tr->symbols.n; k++)
    if ((syms >> k & 1) && (a[k] - b[k] > 1 || b[k] - a[k] > 1)) return false;
  return true;
}

static void near_points(const om_trace *tr, const pool *p, int r, uint64_t syms, int64_t (*at)[64], int *n_at);

/* With at: no form, but where a minimum (maximum) fits every point with its free side seen at one
 * size only, below the example and not next to one at k (Math.min(2, L) seen at L = 1 and from 19
 * on), the sizes next to that point into at (near_points), where runs may see that side again.
 * Not above the example: a step the far runs see once may be a threshold (runs.c cuts there). */
static int clamped(om_trace *tr, const pool *p, const int64_t *a, int n, bool max, int64_t (*at)[64], int *n_at) {
  for (int i = 0; i < p->n; i++) {
    int64_t k = a[0], b = 0, eb[RUNS_MAX + 1], ek[RUNS_MAX + 1];
    int rb = 0, rk[RUNS_MAX + 1]; /* the points of eb[0] and of ek */
    for (int r = 1; r < n; r++) k = (max ? a[r] < k : a[r] > k) ? a[r] : k;
    int free = 0, at_k = 0;
    bool ok = true;
    for (int r = 0; r < n && ok; r++) {
      if (a[r] == k) { rk[at_k] = r, ek[at_k++] = p->e[i][r]; continue; }
      if (!free) b = a[r] - p->e[i][r], rb = r;
      eb[free++] = p->e[i][r];
      ok = a[r] == p->e[i][r] + b;
    }
    for (int r = 0; r < n && ok; r++) ok = max ? a[r] > k || p->e[i][r] + b <= k : a[r] < k || p->e[i][r] + b >= k;
    /* a minimum's free side seen at one size only is pinned where the next size is k already:
     * Math.min(B, 2) is B at 1 and 2 from 2 on, and no size lies between (of the symbols: an
     * extent L - min(L, 3) is 0 at L = 1 and 1 at L = 4, where Math.min(L, 2) is 1 and 2, and
     * min of it plus one and 2 gives 1 at L = 2 and 3, where the model computes 2) */
    bool next = false;
    for (int r = 0; r < at_k && !max && free; r++)
      next |= ek[r] == eb[0] + 1 && adjacent(tr, p, rb, rk[r], tr->xs.v[p->x[i]].syms);
    if (at && ok && free && distinct(eb, free) == 1 && !next && distinct(ek, at_k) >= 2 && rb && om__run_small(tr, p->ix[rb - 1]))
      near_points(tr, p, rb, tr->xs.v[p->x[i]].syms, at, n_at);
    if (at || !ok || (distinct(eb, free) < 2 && !(free && next)) || distinct(ek, at_k) < 2) continue;
    int x = om__x_lin(tr, 1, p->x[i], 0, -1, b), mn = x < 0 ? -1 : om__x_minc(tr, x, k);
    return mn < 0 || !max ? mn : om__x_lin(tr, 1, x, -1, mn, k); /* max: E + b + k - min(E + b, k) */
  }
  return OM_FIT_NONE;
}

static bool seen_at(const om_trace *tr, const int64_t *v, const int64_t (*at)[64], int n);

/* Adds to at (from *n_at, OM_AT_MAX at most) the sizes of point r of pool p (0 the example, 1 + i
 * run ix[i]) with one symbol of syms moved by 1 or 2 either way, inside its range, where no run
 * has been. */
static void near_points(const om_trace *tr, const pool *p, int r, uint64_t syms, int64_t (*at)[64], int *n_at) {
  static const int64_t steps[4] = {1, -1, 2, -2};
  int64_t v0[64], v[64];
  om__run_example(tr, v0);
  for (int k = 0; k < tr->symbols.n; k++)
    for (int u = 0; (syms >> k & 1) && u < 4 && *n_at < OM_AT_MAX; u++) {
      memcpy(v, r ? tr->runs.v[p->ix[r - 1]].v : v0, sizeof v);
      v[k] += steps[u];
      if (v[k] >= tr->symbols.v[k].vmin && v[k] <= tr->symbols.v[k].vmax && !seen_at(tr, v, (const int64_t(*)[64])at, *n_at))
        memcpy(at[(*n_at)++], v, sizeof at[0]);
    }
}

/* min(E1 + b1, E2 + b2) (max: true, the max), of two entries of the pool (one of them entry
 * `with` when it is >= 0): Math.min(T, S), with each side the smaller at two sizes or more. b1 is
 * the largest a - E1 (the smallest for a max). With at: no form, but where a minimum fits every
 * point with one side the smaller at one size only (Math.min(h * w, H) of a conv's output, the
 * product below H only at W = 1), the sizes next to that point, where runs may see that side
 * again (near_points; more are needed where its value repeats there), into at. */
static int min_of_two(om_lower *l, const pool *p, const int64_t *a, int n, bool max, int with, int64_t (*at)[64], int *n_at) {
  om_trace *tr = l->tr;
  for (int i = 0; i < p->n; i++)
    for (int j = i + 1; j < p->n; j++) {
      if (with >= 0 && i != with && j != with) continue;
      int64_t b1 = a[0] - p->e[i][0], b2 = a[0] - p->e[j][0], e1[RUNS_MAX + 1], e2[RUNS_MAX + 1];
      for (int r = 1; r < n; r++) {
        int64_t d1 = a[r] - p->e[i][r], d2 = a[r] - p->e[j][r];
        if (max ? d1 < b1 : d1 > b1) b1 = d1;
        if (max ? d2 < b2 : d2 > b2) b2 = d2;
      }
      int n1 = 0, n2 = 0, r1 = -1, r2 = -1; /* r1, r2: a point where that side gives it */
      bool ok = true;
      for (int r = 0; r < n && ok; r++) {
        int64_t s1 = p->e[i][r] + b1, s2 = p->e[j][r] + b2, want = (s1 < s2) != max ? s1 : s2;
        ok = a[r] == want;
        if (s1 != s2) { /* the side that gives it */
          if (want == s1) e1[n1++] = p->e[i][r], r1 = r;
          else e2[n2++] = p->e[j][r], r2 = r;
        }
      }
      int d1 = distinct(e1, n1), d2 = distinct(e2, n2);
      if (at && ok && d1 + d2 >= 3 && (d1 == 1 || d2 == 1))
        near_points(tr, p, d1 == 1 ? r1 : r2, tr->xs.v[p->x[d1 == 1 ? i : j]].syms, at, n_at);
      if (at || !ok || d1 < 2 || d2 < 2) continue;
      /* min(A, B) = B + min(A - B, 0); max(A, B) = A - min(A - B, 0) */
      int xa = om__x_lin(tr, 1, p->x[i], 0, -1, b1), xb = xa < 0 ? -1 : om__x_lin(tr, 1, p->x[j], 0, -1, b2);
      int diff = xb < 0 ? -1 : om__x_lin(tr, 1, xa, -1, xb, 0), mn = diff < 0 ? -1 : om__x_minc(tr, diff, 0);
      return mn < 0 ? -1 : max ? om__x_lin(tr, 1, xa, -1, mn, 0) : om__x_lin(tr, 1, xb, 1, mn, 0);
    }
  return OM_FIT_NONE;
}

/* The minima and maxima: min(E + b, k), max(E + b, k), and each negated (Math.max(N, 5) - N is
 * 5 - min(N, 5)); then min and max of two sizes (one of them entry `with` when it is >= 0).
 * OM_FIT_NONE when none fits, OM_FIT_ERROR. With at: no form, the sizes that may pin down one
 * with a side seen at one size only into at (clamped, min_of_two). */
static int clamps(om_lower *l, const pool *p, const int64_t *a, int n, int with, int64_t (*at)[64], int *n_at) {
  for (int neg = 0; neg < 2; neg++)
    for (int max = 0; max < 2; max++) {
      int64_t s[RUNS_MAX + 1];
      for (int r = 0; r < n; r++) s[r] = neg ? -a[r] : a[r];
      int x = clamped(l->tr, p, s, n, max, at, n_at);
      if (x != OM_FIT_NONE) return x < 0 ? OM_FIT_ERROR : neg ? om__x_lin(l->tr, -1, x, 0, -1, 0) : x;
    }
  for (int max = 0; max < 2; max++) {
    int x = min_of_two(l, p, a, n, max, with, at, n_at);
    if (x != OM_FIT_NONE) return x;
  }
  return OM_FIT_NONE;
}

/* Where no form fits: the sizes that may pin down a minimum or maximum with one side seen at one
 * size only (clamps), OM_FIT_AMBIGUOUS with them in at; else OM_FIT_NONE. */
static int one_sided(om_lower *l, const pool *p, const int64_t *a, int n, int64_t (*at)[64], int *n_at) {
  *n_at = 0;
  clamps(l, p, a, n, -1, at, n_at);
  return *n_at ? OM_FIT_AMBIGUOUS : OM_FIT_NONE;
}

/* clamps(), else c * E plus one of them, c 1 or -1 and E an entry of the pool (a minimum or
 * maximum of two sizes then has E as one side): Math.max(T, B) - T (a pad up to the larger) is
 * max(T, B) less T, Math.min(H, 8) + H. What is fitted later over such an extent is checked at
 * sizes either side of its switch (om__fit_switches), and its floors with Mod (emit.c). */
static int clamp_forms(om_lower *l, const pool *p, const int64_t *a, int n) {
  int x = clamps(l, p, a, n, -1, NULL, NULL);
  for (int i = 0; i < p->n && x == OM_FIT_NONE; i++)
    for (int64_t c = 1; c >= -1 && x == OM_FIT_NONE; c -= 2) {
      int64_t s[RUNS_MAX + 1];
      for (int r = 0; r < n; r++) s[r] = a[r] - c * p->e[i][r];
      if ((x = clamps(l, p, s, n, i, NULL, NULL)) >= 0) return om__x_lin(l->tr, 1, x, c, p->x[i], 0);
    }
  return x;
}

static int fit_values(om_lower *l, const pool *p, const int64_t *a, int n, bool *floored, int64_t (*at)[64], int *n_at, int depth);

/* The quotients one factored() has fitted (len of them, n values each). Another divisor that
 * gives the same quotient fits it the same way (fit_values reads only the values and the pool),
 * so it is fitted once: a value that is 0 at most runs (a pad of max(4, L) - L) is divided by
 * every floor((S + b) / d) that is 1 where it is not 0, and each such fit is a whole fit_values
 * with a factored() of its own; fitted anew each time, one call's fit took seconds. */
typedef struct quotients {
  int64_t *v;
  int len, cap;
} quotients;

/* Whether quotient q (n values) is in qs; when not, it is added (where memory allows). */
static bool fitted_before(quotients *qs, const int64_t *q, int n) {
  for (int j = 0; j < qs->len; j++)
    if (!memcmp(qs->v + (size_t)j * (size_t)n, q, sizeof *q * (size_t)n)) return true;
  if (qs->len == qs->cap) {
    int cap = qs->cap ? 2 * qs->cap : 16;
    int64_t *v = realloc(qs->v, sizeof *v * (size_t)cap * (size_t)n);
    if (!v) return false; /* fitted again: slower, the same */
    qs->v = v, qs->cap = cap;
  }
  memcpy(qs->v + (size_t)qs->len++ * (size_t)n, q, sizeof *q * (size_t)n);
  return false;
}

/* E * Q where size E (expression ex, values e) divides a in every run and the quotient Q fits
 * (fit_values, one factor deeper); OM_FIT_NONE otherwise (also for a quotient qs has: its fit
 * gave that, or set *miss already), keeping in *miss the first quotient that more runs may pin
 * down (and its points in at). */
static int divided(om_lower *l, const pool *p, const int64_t *a, int n, int ex, const int64_t *e, bool *floored,
                   int64_t (*at)[64], int *n_at, int depth, int *miss, quotients *qs) {
  int64_t q[RUNS_MAX + 1], at_i[OM_AT_MAX][64];
  bool ok = distinct(e, n) >= 2, fl = false;
  for (int r = 0; r < n && ok; r++) ok = e[r] != 0 && a[r] % e[r] == 0, q[r] = ok ? a[r] / e[r] : 0;
  if (!ok || distinct(q, n) < 2) return OM_FIT_NONE; /* a constant quotient is c * E, affine above */
  if (fitted_before(qs, q, n)) return OM_FIT_NONE;
  int n_i = 0, x = fit_values(l, p, q, n, &fl, at_i, &n_i, depth + 1);
  if (x >= 0) return *floored = fl, om__x_mul(l->tr, ex, x);
  if (x == OM_FIT_ERROR) return x;
  if (x != OM_FIT_NONE && *miss == OM_FIT_NONE) { /* the first quotient more runs may tell: its points */
    *miss = x;
    memcpy(at, at_i, sizeof at_i[0] * (size_t)n_i);
    *n_at = n_i;
  }
  return OM_FIT_NONE;
}

/* The products: c * (a product of an input's axes) + b, c * (a product of symbols) + b,
 * c * E1 * E2 + b (factored, below, the rest). OM_FIT_NONE when none fits. */
static int products(om_lower *l, const pool *p, const int64_t *a, int n) {
  om_trace *tr = l->tr;
  int64_t c, b;
  int64_t prod[RUNS_MAX + 1];
  for (int i = 0; l->in && i < l->c->n_in; i++) { /* c * (a product of input i's symbolic axes) + b */
    int axes[OM_MAX_DIMS], na = 0;
    for (int d = 0; d < l->c->in[i]->ndim; d++)
      if (om__lower_in_ext(l, i, d) >= 0) axes[na++] = d;
    for (unsigned set = 3; na >= 2 && set < (1u << na); set++) {
      if (!(set & (set - 1))) continue; /* one axis: done above */
      bool ok = true;
      for (int r = 0; r < n; r++) prod[r] = 1;
      for (int u = 0; u < na && ok; u++) {
        if (!(set >> u & 1)) continue;
        int x = om__lower_in_ext(l, i, axes[u]), at = 0;
        while (at < p->n && p->x[at] != x) at++;
        for (int r = 0; r < n && (ok = at < p->n); r++) ok = !__builtin_mul_overflow(prod[r], p->e[at][r], &prod[r]);
      }
      if (!ok || !affine(a, prod, n, false, &c, &b)) continue;
      int x = -1;
      for (int u = 0; u < na; u++)
        if (set >> u & 1) {
          int e = om__lower_in_ext(l, i, axes[u]);
          if ((x = x < 0 ? e : om__x_mul(tr, x, e)) < 0) return -1;
        }
      return om__x_lin(tr, c, x, 0, -1, b);
    }
  }
  for (uint64_t set = 3; tr->symbols.n <= 10 && set < ((uint64_t)1 << tr->symbols.n); set++) { /* c * (a product of symbols) + b: B * H * W */
    if (!(set & (set - 1))) continue; /* one symbol: done above */
    int64_t v0[64];
    om__run_example(tr, v0);
    bool ok = true;
    for (int r = 0; r < n && ok; r++) {
      const int64_t *v = r ? tr->runs.v[p->ix[r - 1]].v : v0;
      prod[r] = 1;
      for (int k = 0; k < tr->symbols.n && ok; k++)
        if (set >> k & 1) ok = !__builtin_mul_overflow(prod[r], v[k] * tr->symbols.v[k].multiple, &prod[r]);
    }
    if (!ok || !affine(a, prod, n, false, &c, &b)) continue;
    int x = om__x_const(tr, 1);
    for (int k = 0; k < tr->symbols.n && x >= 0; k++)
      if (set >> k & 1) x = om__x_mul(tr, x, om__x_sym(tr, k));
    return x < 0 ? -1 : om__x_lin(tr, c, x, 0, -1, b);
  }
  for (int i = 0; i < p->n; i++) /* c * E1 * E2 + b */
    for (int j = i; j < p->n; j++) {
      bool ok = true;
      for (int r = 0; r < n && ok; r++) ok = !__builtin_mul_overflow(p->e[i][r], p->e[j][r], &prod[r]);
      if (!ok || !affine(a, prod, n, false, &c, &b)) continue;
      int x = om__x_mul(tr, p->x[i], p->x[j]);
      return x < 0 ? -1 : om__x_lin(tr, c, x, 0, -1, b);
    }
  return OM_FIT_NONE;
}


int om__fit_int(om_lower *l, int64_t a0, const int64_t *vals, bool *floored, int64_t (*at)[64], int *n_at) {
  static _Thread_local pool p;
  pool_runs(l, &p);
  int n = 1 + p.runs;
  bool moves = false;
  for (int i = 0; i < p.runs; i++) moves |= vals[p.ix[i]] != a0;
  *floored = false;
  *n_at = 0;
  if (!moves) return om__x_const(l->tr, a0);
  if (n < 3) return OM_FIT_NONE; /* every form is checked at a point beyond those that determine it */
  pool_make(l, &p);
  int64_t a[RUNS_MAX + 1];
  a[0] = a0;
  for (int i = 0; i < p.runs; i++) a[1 + i] = vals[p.ix[i]];
  return fit_values(l, &p, a, n, floored, at, n_at, 0);
}

/* (trace.h) A floor division of a size that moves once every k sizes needs 2k values of it at the
 * points (floor_form), which consecutive runs give only where k is small: Swin's second-stage
 * window count reads the stage's height, ceil(H / 6), which 16 consecutive image heights move
 * through 3 or 4 values. A pool entry the values are a function of with fewer distinct values
 * than points is such a size; its symbols are moved alone, 1 to 64 K_MAX sizes either way, to
 * where it takes new values. */
int om__fit_new_values(om_lower *l, int64_t a0, const int64_t *vals, int64_t (*at)[64]) {
  om_trace *tr = l->tr;
  static _Thread_local pool p;
  pool_make(l, &p);
  int n = 1 + p.runs, best = -1, fewest = 0;
  int64_t a[RUNS_MAX + 1];
  a[0] = a0;
  for (int i = 0; i < p.runs; i++) a[1 + i] = vals[p.ix[i]];
  for (int i = 0; i < p.n; i++) { /* the coarsest entry the values are a function of */
    int d = distinct(p.e[i], n);
    bool function = d >= 2 && d < n;
    for (int r = 0; r < n && function; r++)
      for (int q = 0; q < r && function; q++) function = p.e[i][q] != p.e[i][r] || a[q] == a[r];
    if (function && (best < 0 || d < fewest)) best = i, fewest = d;
  }
  if (best < 0) return 0;
  int64_t v0[64], seen[RUNS_MAX + 1 + OM_AT_MAX];
  int n_seen = n, n_at = 0;
  memcpy(seen, p.e[best], sizeof(int64_t) * (size_t)n);
  om__run_example(tr, v0);
  uint64_t syms = tr->xs.v[p.x[best]].syms;
  for (int k = 0; k < tr->symbols.n; k++) {
    const om_symbol *s = &tr->symbols.v[k];
    for (int dir = 1; (syms >> k & 1) && dir >= -1; dir -= 2)
      for (int64_t step = 1; step <= 64 * K_MAX && n_at < OM_AT_MAX; step++) {
        int64_t v[64], e;
        memcpy(v, v0, sizeof v);
        v[k] = v0[k] + dir * step;
        if (v[k] < s->vmin || v[k] > s->vmax) break;
        if (!om__x_eval(tr, p.x[best], v, &e)) continue;
        int q = 0;
        while (q < n_seen && seen[q] != e) q++;
        if (q < n_seen || seen_at(tr, v, (const int64_t(*)[64])at, n_at)) continue;
        seen[n_seen++] = e;
        memcpy(at[n_at++], v, sizeof at[0]);
      }
  }
  return n_at;
}

/* E * Q for an entry E of the pool that divides a at every run and a quotient Q of any form, a
 * product again up to three factors in all (B * floor((H + 6) / 7) * floor((W + 6) / 7): Swin's
 * window count times the batch); then with E a floor division of a symbol no tensor has as an
 * extent, floor((S + b) / k), k <= K_MAX, where S took every residue of k at 2k sizes (as a floor
 * form must): B * ceil(H / 5) * floor((W + 1) / 3). Tried last, when no other form fits: a
 * divisor of a small value (a pad of W % 7) fits a quotient too easily. */
static int factored(om_lower *l, const pool *p, const int64_t *a, int n, bool *floored, int64_t (*at)[64], int *n_at, int depth) {
  om_trace *tr = l->tr;
  int miss = OM_FIT_NONE;
  quotients qs = {0};
  for (int i = 0; i < p->n && depth < 2; i++) {
    int x = divided(l, p, a, n, p->x[i], p->e[i], floored, at, n_at, depth, &miss, &qs);
    if (x != OM_FIT_NONE) return free(qs.v), x;
  }
  for (int k = 0; k < tr->symbols.n && depth < 2; k++) {
    int s = 0, sym = om__x_sym(tr, k);
    while (s < p->near && p->x[s] != sym) s++;
    for (int64_t d = 2; s < p->near && d <= K_MAX; d++) {
      bool seen[K_MAX] = {0};
      int residues = 0;
      for (int r = 0; r < n; r++) seen[((p->e[s][r] % d) + d) % d] = true;
      for (int64_t m = 0; m < d; m++) residues += seen[m];
      for (int64_t b0 = 0; residues == d && distinct(p->e[s], n) >= 2 * d && b0 < d; b0++) {
        int64_t f[RUNS_MAX + 1];
        bool divides = true; /* before the expression is made: most candidates do not */
        for (int r = 0; r < n; r++) f[r] = fdiv(p->e[s][r] + b0, d), divides &= f[r] != 0 && a[r] % f[r] == 0;
        if (!divides) continue;
        int num = om__x_lin(tr, 1, sym, 0, -1, b0), fx = num < 0 ? -1 : om__x_floordiv(tr, num, d);
        int x = fx < 0 ? OM_FIT_ERROR : divided(l, p, a, n, fx, f, floored, at, n_at, depth, &miss, &qs);
        if (x != OM_FIT_NONE) return free(qs.v), x;
      }
    }
  }
  free(qs.v);
  return miss;
}

/* ---- floor divisions by a divisor above K_MAX, any numerator ---- */

#define FAR_K 256       /* the largest divisor floor((c * E + b) / k) takes with any numerator c */
#define FAR_PAIRS 2048  /* the most numerator-divisor pairs that fit kept at once */
#define FAR_FORMS 1024  /* the most forms (c, k, b) the sizes to run next are scored over */
#define FAR_PROBES (FAR_K + 24) /* the sizes scored */
#define FAR_END 32768   /* the largest size run to tell them apart */

/* A numerator c and divisor k, gcd(c, k) = 1, with each offset b in [lo, hi] fitting the points. */
typedef struct far_pair {
  int64_t c, k, lo, hi;
} far_pair;

/* The forms that fit, as pairs, and how many forms (offsets) they hold in all. */
typedef struct far_fits {
  far_pair v[FAR_PAIRS];
  int n;
  int64_t total;
  bool far; /* one of them has k > K_MAX and c > 1 */
} far_fits;

/* Every floor((c * E + b) / k), 2 <= k <= FAR_K, c >= 1 and gcd(c, k) = 1 (any other is one of
 * these: floor((g c E + b) / (g k)) is floor((c E + floor(b / g)) / k)), that gives each point (pe,
 * pa, np of them, E increasing) into f; false when more pairs fit than f holds. Over sizes D apart
 * the values rise R, so c D / k is within 1 of R: c in (k (R - 1) / D, k (R + 1) / D). */
static bool far_enumerate(const int64_t *pe, const int64_t *pa, int np, far_fits *f) {
  int64_t d = pe[np - 1] - pe[0], rise = pa[np - 1] - pa[0];
  f->n = 0, f->total = 0, f->far = false;
  for (int64_t k = 2; k <= FAR_K; k++) {
    int64_t from = fdiv(k * (rise - 1), d) + 1, to = fdiv(k * (rise + 1) - 1, d);
    for (int64_t c = from < 1 ? 1 : from, lo, hi; c <= to; c++) {
      if (gcd64(c, k) != 1 || !b_range(pa, pe, np, c, k, &lo, &hi)) continue;
      if (f->n == FAR_PAIRS) return false;
      f->v[f->n++] = (far_pair){c, k, lo, hi};
      f->total += hi - lo + 1;
      f->far |= k > K_MAX && c > 1;
    }
  }
  return true;
}

/* Form t of f (the offsets of each pair in turn): its pair into *pr, its offset into *b. */
static void far_form(const far_fits *f, int64_t t, far_pair *pr, int64_t *b) {
  int j = 0;
  while (t > f->v[j].hi - f->v[j].lo) t -= f->v[j].hi - f->v[j].lo + 1, j++;
  *pr = f->v[j], *b = f->v[j].lo + t;
}

static int cmp_u64(const void *x, const void *y) {
  uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
  return (a > b) - (a < b);
}

/* Groups g of forms, each group's count squared summed: what a set of sizes leaves to tell apart
 * (n forms, tmp n slots). */
static int64_t far_spread(const uint64_t *g, uint64_t *tmp, int n) {
  memcpy(tmp, g, sizeof *g * (size_t)n);
  qsort(tmp, (size_t)n, sizeof *tmp, cmp_u64);
  int64_t sum = 0;
  for (int i = 0, j; i < n; i = j) {
    for (j = i; j < n && tmp[j] == tmp[i]; j++) {}
    sum += (int64_t)(j - i) * (j - i);
  }
  return sum;
}

/* The sizes of symbol k (its variable) to run next that tell the forms of f apart best, into at
 * from n_at (its new count, OM_AT_MAX at most): of FAR_PROBES sizes (the next FAR_K above the
 * example, which hold every residue of each divisor that fits, so two offsets of one numerator
 * and divisor differ at one of them, and sizes spread geometrically up to end,
 * which pin the slope c / k), each taken in turn where it leaves the fewest forms agreeing with
 * each other and at the sizes taken before it (the groups of forms that give one value at each,
 * count squared, summed; over up to FAR_FORMS forms spread over all). None where no size tells
 * two of those apart. */
static int far_probes(om_trace *tr, int k, const far_fits *f, int64_t end, int64_t (*at)[64], int n_at) {
  static _Thread_local uint64_t group[FAR_FORMS], next[FAR_FORMS], tmp[FAR_FORMS];
  static _Thread_local int64_t pc[FAR_FORMS], pk[FAR_FORMS], pb[FAR_FORMS];
  int64_t probes[FAR_PROBES], v0[64], v[64];
  int nt = f->total < FAR_FORMS ? (int)f->total : FAR_FORMS, np = 0;
  om__run_example(tr, v0);
  for (int t = 0; t < nt; t++) {
    far_pair pr;
    far_form(f, (int64_t)t * f->total / nt, &pr, &pb[t]);
    pc[t] = pr.c, pk[t] = pr.k, group[t] = 0;
  }
  for (int64_t x = v0[k] + 1; x <= end && np < FAR_K; x++) probes[np++] = x;
  for (int64_t x = v0[k] * 3 / 2 + 40; x <= end && x <= FAR_END && np < FAR_PROBES; x = x * 3 / 2 + 40) probes[np++] = x;
  if (np < FAR_PROBES && end > v0[k] && end <= FAR_END) probes[np++] = end;
  int64_t left = far_spread(group, tmp, nt);
  while (n_at < OM_AT_MAX) {
    int best = -1;
    int64_t best_left = left;
    for (int q = 0; q < np; q++) {
      memcpy(v, v0, sizeof v);
      v[k] = probes[q];
      if (seen_at(tr, v, (const int64_t(*)[64])at, n_at)) continue;
      for (int t = 0; t < nt; t++) next[t] = (group[t] ^ (uint64_t)fdiv(pc[t] * probes[q] + pb[t], pk[t])) * 0x9E3779B97F4A7C15u;
      int64_t l = far_spread(next, tmp, nt);
      if (l < best_left) best = q, best_left = l;
    }
    if (best < 0) break;
    for (int t = 0; t < nt; t++) group[t] = (group[t] ^ (uint64_t)fdiv(pc[t] * probes[best] + pb[t], pk[t])) * 0x9E3779B97F4A7C15u;
    left = best_left;
    memcpy(at[n_at], v0, sizeof at[0]);
    at[n_at++][k] = probes[best];
  }
  return n_at;
}

/* floor((c * E + b) / k) of a symbol E (of a multiple, its variable) for a divisor k up to FAR_K
 * with any numerator: Math.floor(L * 11 / 20) (ViTMAE's kept length at a mask ratio of 0.45),
 * Math.floor((3 * T + 5) / 40), Math.ceil(T / 20). Every such form that fits the points is
 * counted (far_enumerate, every k from 2 on: a floor division by k <= K_MAX the points only
 * weakly fit is one of them); one that is the only one, or that every other one equals over the
 * symbol's range, is taken. Where several are left, the sizes that tell them apart best are run
 * next (OM_FIT_AMBIGUOUS, at: far_probes), so the far sizes pin the slope and the sizes at the
 * steps the offset, where 2k consecutive sizes would take more runs than a trace makes for k of 20
 * and more. OM_FIT_NONE where no form with a divisor above K_MAX and a numerator above 1 fits (those
 * with numerator 1 are the periodic forms', by any divisor up to K_FAR: Math.floor(T / 300) fits
 * floor((T + b) / 256) at the first runs), or too many fit to count (runs at more sizes, fit_int's,
 * come first). */
static int far_floor(om_lower *l, const pool *p, const int64_t *a, int n, int64_t (*at)[64], int *n_at) {
  om_trace *tr = l->tr;
  static _Thread_local far_fits f;
  int64_t v0[64];
  om__run_example(tr, v0);
  *n_at = 0;
  for (int k = 0; k < tr->symbols.n; k++) {
    const om_symbol *sym = &tr->symbols.v[k];
    int e = om__x_sym(tr, k), i = 0;
    if (e >= 0 && sym->multiple > 1) e = om__x_divexact(tr, e, om__x_const(tr, sym->multiple));
    if (e < 0) return OM_FIT_ERROR;
    while (i < p->near && p->x[i] != e) i++;
    if (i == p->near) continue;
    int64_t pe[RUNS_MAX + 1], pa[RUNS_MAX + 1];
    int np = sorted_points(a, p->e[i], n, pe, pa);
    /* values and sizes bounded so that c * E + b cannot overflow at any size scored (c < k (R + 1)) */
    if (np < 5 || pa[np - 1] <= pa[0] || pa[np - 1] - pa[0] > (int64_t)1 << 20 || pe[np - 1] > (int64_t)1 << 30 || pa[0] < -((int64_t)1 << 30) || pa[0] > (int64_t)1 << 30) continue;
    if (!far_enumerate(pe, pa, np, &f) || !f.far) continue;
    far_pair pr;
    int64_t b;
    far_form(&f, 0, &pr, &b);
    int num = om__x_lin(tr, pr.c, e, 0, -1, b), x0 = num < 0 ? -1 : om__x_floordiv(tr, num, pr.k);
    if (x0 < 0) return OM_FIT_ERROR;
    if (f.total == 1) return x0;
    /* several: one where each other equals it over the range (a declared maximum), else runs */
    bool one = f.total <= OM_AT_MAX;
    for (int64_t t = 1; t < f.total && one; t++) {
      far_form(&f, t, &pr, &b);
      int nt = om__x_lin(tr, pr.c, e, 0, -1, b), x = nt < 0 ? -1 : om__x_floordiv(tr, nt, pr.k);
      if (x < 0) return OM_FIT_ERROR;
      one = same_in_range(tr, x0, x, at[0]) == 1;
    }
    if (one) return x0;
    *n_at = far_probes(tr, k, &f, path_max(tr, k), at, 0);
    return *n_at ? OM_FIT_AMBIGUOUS : OM_FIT_NONE;
  }
  return OM_FIT_NONE;
}

#define STEPS_MAX (OM_X_MAX_TERMS - 1) /* the most steps a table of a whole range is written with (a term each) */

/* Where the runs saw every size of one symbol's range (whole_range: a declared om.Dim('T', { max:
 * 10 }), run at each size) and no form above fits, the values as the steps they take over it: a
 * at the least size E0, plus each change d at the size t where it happens times [E >= t], which
 * is floor((E - t + M) / M) for the width M of the range (0 below t, 1 from t, at every size of
 * it): (T % 7) * 2 + 2 * Math.floor(T / 3) over 1..10. Exact over the range and only there, which
 * is all the trace answers for. OM_FIT_NONE when no entry is such a size or the steps are many. */
static int step_table(om_lower *l, const pool *p, const int64_t *a, int n) {
  om_trace *tr = l->tr;
  /* one symbol only: with more, the runs that move one alone leave the others at their examples,
   * and a table of one would not show what the others do to the value */
  for (int i = 0; i < p->near && tr->symbols.n == 1; i++) {
    int64_t pe[RUNS_MAX + 1], pa[RUNS_MAX + 1];
    int np = whole_range(tr, p, i, n) ? sorted_points(a, p->e[i], n, pe, pa) : 0;
    int steps = 0;
    for (int j = 1; j < np; j++) steps += pa[j] != pa[j - 1];
    if (np < 2 || steps > STEPS_MAX) continue;
    int64_t width = pe[np - 1] - pe[0] + 1;
    int x = om__x_const(tr, pa[0]);
    for (int j = 1; j < np && x >= 0; j++) {
      if (pa[j] == pa[j - 1]) continue;
      int num = om__x_lin(tr, 1, p->x[i], 0, -1, width - pe[j]), at = num < 0 ? -1 : om__x_floordiv(tr, num, width);
      x = at < 0 ? -1 : om__x_lin(tr, 1, x, pa[j] - pa[j - 1], at, 0);
    }
    if (x < 0) return OM_FIT_ERROR;
    int64_t v0[64], got; /* the table gives every point's value (as it must: checked, not assumed) */
    om__run_example(tr, v0);
    bool ok = true;
    for (int r = 0; r < n && ok; r++) ok = om__x_eval(tr, x, r ? tr->runs.v[p->ix[r - 1]].v : v0, &got) && got == a[r];
    if (ok) return x;
  }
  return OM_FIT_NONE;
}

/* The forms, in order, of the values a (a[0] the example's, a[1 + i] run p->ix[i]'s) over pool p;
 * depth: the factors a product form has divided out already (factored()). */
static int fit_values(om_lower *l, const pool *p, const int64_t *a, int n, bool *floored, int64_t (*at)[64], int *n_at, int depth) {
  om_trace *tr = l->tr;
  int64_t c, b;
  *floored = false;
  *n_at = 0;
  if (distinct(a, n) == 1) return om__x_const(tr, a[0]); /* a quotient factored() divided out */
  /* the sizes the call reads and the symbols first, then every extent: an affine form in a far
   * extent that takes few values (floor((W+8)/9)) can fit what a floor of the call's own input
   * gives at every run */
  int found = -1;
  bool weak = false; /* a floor division the points agree with but cannot pin down */
  int weak_x = -1;   /* the first such form */
  *n_at = 0;
  for (int tier = 0; tier < 2 && found < 0 && !weak; tier++) {
    int lo = tier ? p->near : 0, hi = tier ? p->n : p->near;
    for (int i = lo; i < hi; i++) /* c * E + b */
      if (affine(a, p->e[i], n, covered(tr, p, i, n) || whole_range(tr, p, i, n), &c, &b))
        return *floored = !residues_seen(p->e[i], n), om__x_lin(tr, c, p->x[i], 0, -1, b);
    /* m * floor((c * E + b) / k) + d (m 1: a floor division; m = k: a multiple of k below E, the
     * start of a split's last piece). The first form that fits, unless another one fits too and
     * differs from it at some size: then the runs cannot tell them apart (OM_FIT_AMBIGUOUS, at:
     * where). */
    for (int pass = 0; pass < 2; pass++) /* 1: a weak form that fits too and differs from the found one */
    for (int i = lo; i < hi && (pass == 0 || (found >= 0 && weak)); i++)
      for (int64_t m = 1; m <= K_MAX; m++) {
        int64_t q[RUNS_MAX + 1], d = ((a[0] % m) + m) % m;
        bool ok = true;
        for (int r = 0; r < n && ok; r++) ok = ((a[r] - d) % m) == 0, q[r] = (a[r] - d) / m;
        for (int64_t k = 2; ok && k <= K_MAX; k++) {
          int64_t cs[3 * K_MAX + 2];
          int n_cs = numerators(q, p->e[i], n, k, cs);
          for (int u = 0; u < n_cs; u++) {
            int64_t cc = cs[u];
            int weak_here = 0;
            if (!(cc % k) || (!floor_form(q, p->e[i], n, cc, k, &b, &weak_here) && !weak_here)) continue;
            if (weak_here && (covered(tr, p, i, n) || whole_range(tr, p, i, n))) weak_here = 0; /* it holds at every value E takes */
            if (weak_here == 1 && pass == 0) {
              weak = true;
              if (weak_x < 0) { /* the first weak form, with the least offset the points leave */
                int num = om__x_lin(tr, cc, p->x[i], 0, -1, b), f = num < 0 ? -1 : om__x_floordiv(tr, num, k);
                weak_x = f < 0 ? -1 : om__x_lin(tr, m, f, 0, -1, d);
              }
              continue;
            }
            int num = om__x_lin(tr, cc, p->x[i], 0, -1, b), f = num < 0 ? -1 : om__x_floordiv(tr, num, k);
            int x = f < 0 ? -1 : om__x_lin(tr, m, f, 0, -1, d);
            if (x < 0) return -1;
            /* a form the points cannot pin down is weak, unless it is a polynomial once normalised
             * (floor(2 * B * T / 2) is B * T): the residues it misses are ones E never takes */
            bool is_weak = weak_here && !floor_free(tr, x);
            if (pass == 0 && is_weak) weak = true;
            if (pass == 0 ? is_weak : !is_weak) continue;
            int same = found < 0 || x == found ? 1 : same_in_range(tr, x, found, at[*n_at]);
            if (found < 0) found = x;
            else if (same < 0) return OM_FIT_UNDECIDED; /* undecided: more runs, or refused */
            /* two that differ somewhere: the runs at more sizes of E's symbols tell most apart (a weak
             * form among them: a residue the runs never took), then runs where they differ, a run
             * for each of the first OM_AT_MAX that differ */
            else if (same == 0 && pass == 1 && (tr->xs.v[p->x[i]].syms & ~tr->extended)) return OM_FIT_UNDECIDED;
            else if (same == 0 && ++*n_at == OM_AT_MAX) return OM_FIT_AMBIGUOUS;
          }
        }
      }
  }
  if (*n_at) return OM_FIT_AMBIGUOUS;
  if (found >= 0) return *floored = !floor_free(tr, found), found;
  if (weak) { /* more runs may tell; no other form is taken over it but one they pin down: a
               * minimum seen on both sides (a floor of an extent min(B,3), which takes three
               * values, fits Math.min(B, 2) too, and cannot be pinned down) or a periodic one */
    int x = clamp_forms(l, p, a, n);
    if (x == OM_FIT_NONE) x = products(l, p, a, n);
    /* ...unless it differs from the weak form somewhere: then a run there tells which (SegFormer's
     * decode head reads its third stage's height ceil(W / 16), which the points also fit as a
     * minimum of far extents, floor((W+3)/32) + floor((W+31)/32) - min(floor((W+3)/32), 2) + 2,
     * 4 where the model reads 3 at W = 48) */
    if (x >= 0 && weak_x >= 0 && x != weak_x && same_in_range(tr, x, weak_x, at[0]) == 0) return *n_at = 1, OM_FIT_AMBIGUOUS;
    if (x == OM_FIT_NONE) x = periodic_fit(l, p, a, n, floored, at, n_at);
    if (x == OM_FIT_NONE && (x = far_floor(l, p, a, n, at, n_at)) >= 0) { /* the weak form counted among its forms where its m is 1 */
      *floored = true;
      if (weak_x >= 0 && x != weak_x && same_in_range(tr, x, weak_x, at[0]) == 0) return *n_at = 1, OM_FIT_AMBIGUOUS;
    }
    if (x == OM_FIT_NONE) x = remainder_fit(l, p, a, n, floored, at, n_at);
    if (x == OM_FIT_NONE) x = factored(l, p, a, n, floored, at, n_at, depth);
    return x == OM_FIT_NONE ? OM_FIT_UNDECIDED : x;
  }
  int64_t m = 0; /* k * floor((E + b) / k), k > K_MAX: the start of a split's last piece, split(26).at(-1) */
  for (int r = 0; r < n; r++) {
    int64_t u = a[r] < 0 ? -a[r] : a[r], v = m;
    while (v) { int64_t t = u % v; u = v; v = t; }
    m = u;
  }
  for (int i = 0; i < p->n && m > K_MAX && distinct(a, n) >= 3; i++) {
    int64_t q[RUNS_MAX + 1], lo, hi;
    for (int r = 0; r < n; r++) q[r] = a[r] / m;
    if (distinct(p->e[i], n) < 4 || !b_range(q, p->e[i], n, 1, m, &lo, &hi)) continue;
    /* the runs bound b, and a split's last piece is the one that ends at E (b = -1); where
     * another b fits too, a run where the two differ tells */
    int64_t b1 = lo <= -1 && -1 <= hi ? -1 : lo, b2 = b1 == hi ? lo : hi;
    int num = om__x_lin(tr, 1, p->x[i], 0, -1, b1), f = num < 0 ? -1 : om__x_floordiv(tr, num, m);
    int x = f < 0 ? -1 : om__x_lin(tr, m, f, 0, -1, 0);
    if (x < 0) return -1;
    if (b2 != b1) {
      int num2 = om__x_lin(tr, 1, p->x[i], 0, -1, b2), f2 = num2 < 0 ? -1 : om__x_floordiv(tr, num2, m);
      int x2 = f2 < 0 ? -1 : om__x_lin(tr, m, f2, 0, -1, 0);
      if (x2 < 0) return -1;
      int same = same_in_range(tr, x, x2, at[0]);
      if (same < 0) return OM_FIT_UNDECIDED;
      if (same == 0) return *n_at = 1, OM_FIT_AMBIGUOUS;
    }
    return *floored = true, x;
  }
  int x = clamp_forms(l, p, a, n);
  if (x != OM_FIT_NONE) return x;
  x = products(l, p, a, n);
  if (x != OM_FIT_NONE) return x;
  static const int64_t cs[4] = {1, -1, 2, -2};
  for (int i = 0; i < p->n && n >= 6; i++) /* c1 * E1 + c2 * E2 + b: three numbers, checked at three more points */
    for (int j = i + 1; j < p->n; j++) {
      int pairs = 0;
      for (int r = 0; r < n; r++) {
        int q = 0;
        while (q < r && (p->e[i][q] != p->e[i][r] || p->e[j][q] != p->e[j][r])) q++;
        pairs += q == r;
      }
      for (int u = 0; pairs >= 6 && u < 4; u++)
        for (int w = 0; w < 4; w++) {
          b = a[0] - cs[u] * p->e[i][0] - cs[w] * p->e[j][0];
          bool ok = true;
          for (int r = 1; r < n && ok; r++) ok = a[r] == cs[u] * p->e[i][r] + cs[w] * p->e[j][r] + b;
          if (ok) return om__x_lin(tr, cs[u], p->x[i], cs[w], p->x[j], b);
        }
    }
  /* any numerator before the periodic forms' 1: a floor division by 36 that is the only one of
   * those that fits the first runs is floor(7T / 255) at more sizes */
  if ((x = far_floor(l, p, a, n, at, n_at)) >= 0) *floored = true;
  if (x == OM_FIT_NONE) x = periodic_fit(l, p, a, n, floored, at, n_at);
  if (x == OM_FIT_NONE) x = remainder_fit(l, p, a, n, floored, at, n_at);
  if (x == OM_FIT_NONE) x = factored(l, p, a, n, floored, at, n_at, depth);
  if (x == OM_FIT_NONE && !depth) x = step_table(l, p, a, n);
  return x == OM_FIT_NONE && !depth ? one_sided(l, p, a, n, at, n_at) : x;
}

/* Whether the variables v are a run's, the example's, or already in at[0..n). */
static bool seen_at(const om_trace *tr, const int64_t *v, const int64_t (*at)[64], int n) {
  int64_t v0[64];
  size_t bytes = sizeof(int64_t) * (size_t)tr->symbols.n;
  om__run_example(tr, v0);
  if (!memcmp(v, v0, bytes)) return true;
  for (int r = 0; r < tr->runs.n; r++)
    if (!memcmp(v, tr->runs.v[r].v, bytes)) return true;
  for (int q = 0; q < n; q++)
    if (!memcmp(v, at[q], bytes)) return true;
  return false;
}

#define SWITCH_SCAN 4096 /* the sizes from a symbol's minimum scanned for a minimum's switch */
#define SWITCH_SIDE 3    /* the sizes on each side of it that the runs must have seen */

/* Marks in mark (per factor) the factors of kind (OM_XF_MIN, OM_XF_FLOOR) expression x holds,
 * nested ones too. */
static void mark_factors(const om_trace *tr, int x, int kind, bool *mark) {
  const om_xexpr *e = &tr->xs.v[x];
  for (int i = 0; i < e->n; i++)
    for (int j = 0; j < e->t[i].n; j++) {
      const om_xfactor *f = &tr->fs.v[e->t[i].f[j]];
      if (f->var >= 0) continue;
      if (f->var == kind) mark[e->t[i].f[j]] = true;
      mark_factors(tr, f->num, kind, mark);
    }
}

int om__fit_switches(om_lower *l, int x, int64_t (*at)[64]) {
  const om_trace *tr = l->tr;
  int n = 0;
  bool *mark = om__arena_alloc(&l->tr->g.arena, (size_t)tr->fs.n + 1); /* the minima that matter */
  if (!mark) return 0;
  memset(mark, 0, (size_t)tr->fs.n + 1);
  mark_factors(tr, x, OM_XF_MIN, mark);
  for (int i = 0; l->in && i < l->c->n_in; i++) /* and the sizes the call reads */
    for (int d = 0; d < l->c->in[i]->ndim; d++)
      if (om__lower_in_ext(l, i, d) >= 0) mark_factors(tr, om__lower_in_ext(l, i, d), OM_XF_MIN, mark);
  for (int f = 0; f < tr->fs.n && n < OM_AT_MAX; f++) {
    const om_xfactor *m = &tr->fs.v[f];
    if (m->var != OM_XF_MIN || !mark[f]) continue;
    for (int k = 0; k < tr->symbols.n && n < OM_AT_MAX; k++) {
      const om_symbol *s = &tr->symbols.v[k];
      if (!(m->syms >> k & 1)) continue;
      int64_t v[64], e, below = -1; /* below: the side of the constant N is on at the previous size */
      om__run_example(tr, v);
      for (int64_t x = s->vmin; x <= s->vmax && x < s->vmin + SWITCH_SCAN && n < OM_AT_MAX; x++) {
        v[k] = x;
        if (!om__x_eval(tr, m->num, v, &e)) break;
        if (below >= 0 && below != (e < m->den)) /* the switch is between x - 1 and x */
          for (int64_t y = x - SWITCH_SIDE; y < x + SWITCH_SIDE && n < OM_AT_MAX; y++) {
            v[k] = y;
            if (y >= s->vmin && y <= s->vmax && !seen_at(tr, v, (const int64_t(*)[64])at, n)) memcpy(at[n++], v, sizeof at[0]);
          }
        v[k] = x;
        below = e < m->den;
      }
    }
  }
  return n;
}

#define EDGE_SCAN 32768 /* the sizes from a symbol's minimum scanned for a float product's edges */
#define EDGE_EACH 2      /* the edges of each kind (an integer, a half) the runs must have seen */
#define EDGE_FORMS 5     /* the float computations of c * S / k tried (edge_product) */

/* The product c * S / k (S a size, k > 1 the divisor's quotient as a size ratio) as a model may
 * compute it with JS numbers, form f of EDGE_FORMS: S * 0.7 (the double nearest c / k), S / (10 /
 * 7), S * 0.1 * 7, S * 7 * 0.1, S / 10 * 7. Each rounds off the exact value at its own sizes;
 * a double further from c / k than the nearest (1 - 0.3 is 0.7000000000000001) is off at the
 * first edges already, which every check runs at (om__fit_float_edges). */
static double edge_product(int f, double s, double c, double k) {
  switch (f) {
    case 0: return s * (c / k);
    case 1: return s / (k / c);
    case 2: return s * (1 / k) * c;
    case 3: return s * c * (1 / k);
    default: return s / k * c;
  }
}

/* The shift s (|s| <= den / 2, the smallest) with c * s = b - d (mod den): the model's product is
 * of E + s where the floor division floor((c * E + b) / den) is a floor (d = 0), a ceil (d = den -
 * 1) or a round (d = den / 2) of it; normalised, floor((7T - 7) / 10) is floor((7T + 3) / 10) - 1,
 * (T - 1) * 0.7. INT64_MIN when none is. */
static int64_t edge_shift(int64_t c, int64_t b, int64_t d, int64_t den) {
  for (int64_t a = 0; a <= den / 2; a++)
    for (int64_t s = a; s >= -a; s -= a > 0 ? 2 * a : 1)
      if ((((c * s - b + d) % den) + den) % den == 0) return s;
  return INT64_MIN;
}

int om__fit_float_edges(om_lower *l, int x, int64_t (*at)[64]) {
  const om_trace *tr = l->tr;
  int n = 0;
  bool *mark = om__arena_alloc(&l->tr->g.arena, (size_t)tr->fs.n + 1);
  if (!mark) return 0;
  memset(mark, 0, (size_t)tr->fs.n + 1);
  mark_factors(tr, x, OM_XF_FLOOR, mark);
  for (int f = 0; f < tr->fs.n && n < OM_AT_MAX; f++) {
    const om_xfactor *m = &tr->fs.v[f];
    if (!mark[f] || m->den < 3 || !(m->den & (m->den - 1)) || __builtin_popcountll(m->syms) != 1) continue;
    int k = __builtin_ctzll(m->syms);
    const om_symbol *s = &tr->symbols.v[k];
    int64_t v[64], e[3];
    om__run_example(tr, v);
    bool linear = true; /* the numerator c * E + b, E the variable */
    for (int t = 0; t < 3 && linear; t++) v[k] = s->vmin + t, linear = om__x_eval(tr, m->num, v, &e[t]);
    int64_t c = linear ? e[1] - e[0] : 0, b = e[0] - c * s->vmin, whole = 0;
    if (!linear || e[2] - e[1] != c || !c || c % m->den == 0 || c > (1 << 20) || c < -(1 << 20)) continue;
    /* the ratio the model multiplies by may hold a whole part that x writes outside the floor
     * division: floor(1.4 T) is T + floor(2T / 5), and 45 * 1.4 rounds off where 45 * 0.4 does
     * not; x's step over den sizes of E tells it (the others at the example) */
    int64_t x0, x1;
    v[k] = s->vmin + 1;
    if (om__x_eval(tr, x, v, &x0) && (v[k] += m->den, om__x_eval(tr, x, v, &x1)) && (x1 - x0 - c) % m->den == 0)
      whole = (x1 - x0 - c) / m->den;
    int64_t ratios[2] = {c, c + whole * m->den};
    /* the product is of the size itself or of it plus a constant: the shifts of a floor, a round
     * and a ceil of it */
    int64_t shifts[3], n_shift = 0;
    for (int64_t d = 0; d < 3; d++) {
      int64_t sh = edge_shift(c, b, d == 0 ? 0 : d == 1 ? m->den / 2 : m->den - 1, m->den);
      bool again = sh == INT64_MIN;
      for (int64_t q = 0; q < n_shift; q++) again |= shifts[q] == sh;
      if (!again) shifts[n_shift++] = sh;
    }
    /* at every shift, the first edges of each kind (an integer, a half: c * S / k whole or half)
     * and the first where each form rounds off the exact value. A size divided by an integer (c
     * of 1 or -1: a stride, a kernel, a window's T % w, Math.floor(T / 7)) is integer arithmetic,
     * exact in doubles too, so it has no edges of its own: only sizes where a product by the
     * reciprocal (T * (1 / 7)) rounds off, which edge_product computes (none below 32,768 for
     * 3 <= k <= 40), are run; else a Swin or a Wav2Vec2 spends a run per edge of every window and
     * stride */
    bool own = c != 1 && c != -1;
    for (int64_t sh = 0; sh < n_shift && n < OM_AT_MAX; sh++) {
      int got[2 * EDGE_FORMS + 1][2] = {{0}}, full = own ? 0 : 2; /* full: the (form, kind) pairs at EDGE_EACH */
      for (int64_t var = s->vmin; var <= s->vmax && var < s->vmin + EDGE_SCAN && n < OM_AT_MAX; var++) {
        int64_t num = c * (var + shifts[sh]), kind = num % m->den != 0;
        if ((2 * num) % m->den || num <= 0) continue;
        bool want = false;
        double size = (double)((var + shifts[sh]) * s->multiple), exact = (double)num / (double)m->den;
        /* g: form g % EDGE_FORMS of ratio g / EDGE_FORMS; the last, the edge itself */
        for (int g = 0; g <= 2 * EDGE_FORMS; g++) {
          if (got[g][kind] == EDGE_EACH || (g == 2 * EDGE_FORMS && !own)) continue;
          if (g < 2 * EDGE_FORMS) {
            int64_t r = ratios[g / EDGE_FORMS];
            double p = edge_product(g % EDGE_FORMS, size, (double)r, (double)(m->den * s->multiple));
            if (p == exact + (double)(whole * (var + shifts[sh])) * (double)(g / EDGE_FORMS)) continue;
          }
          want = true;
          full += ++got[g][kind] == EDGE_EACH;
        }
        v[k] = var;
        if (want && !seen_at(tr, v, (const int64_t(*)[64])at, n)) memcpy(at[n++], v, sizeof at[0]);
        if (full == 2 * (2 * EDGE_FORMS + 1)) break;
      }
    }
  }
  return n;
}

bool om__seen_append(char *buf, size_t cap, size_t *n, int *shown, const char *piece) {
  /* whole pieces only, six at most, with room kept for ", ...": a list cut inside a size would show
   * a wrong size, and one longer than its buffer would cut the message it goes into */
  size_t len = strlen(piece);
  if (*shown < 6 && *n + len + sizeof ", ..." <= cap) {
    memcpy(buf + *n, piece, len + 1);
    *n += len;
    ++*shown;
    return true;
  }
  if (*n + sizeof ", ..." <= cap) *n += (size_t)snprintf(buf + *n, cap - *n, ", ...");
  return false;
}

const char *om__fit_seen(om_lower *l, int64_t a0, const int64_t *vals, char *buf, size_t cap) {
  const om_trace *tr = l->tr;
  size_t n = (size_t)snprintf(buf, cap, "%lld at the traced sizes", (long long)a0);
  for (int r = 0, shown = 0; r < tr->runs.n && n < cap; r++) {
    char sizes[160], piece[200];
    if (!l->rc[r]) continue;
    om__run_sizes(tr, tr->runs.v[r].v, ~(uint64_t)0, sizes, sizeof sizes);
    snprintf(piece, sizeof piece, ", %lld at %s", (long long)vals[r], sizes);
    if (!om__seen_append(buf, cap, &n, &shown, piece)) break;
  }
  return buf;
}

/* ---- float scalars ---- */

static double apply_fn(int fn, double x) {
  switch (fn) {
    case 1: return 1 / x;
    case 2: return sqrt(x);
    case 3: return 1 / sqrt(x);
    default: return x;
  }
}

bool om__xfloat_eval(const om_trace *tr, const om_xfloat *f, const int64_t *v, double *out) {
  int64_t x;
  if (!om__x_eval(tr, f->x, v, &x)) return false;
  *out = f->a * apply_fn(f->fn, (double)x) + f->b;
  return true;
}

static bool close_to(double a, double b) { return fabs(a - b) <= 1e-9 * fmax(1, fabs(b)); }

/* f(N) of an integer N of any form the integer fit finds (fit_values), f one of x, 1 / x,
 * sqrt(x), 1 / sqrt(x), where f's inverse takes every value v to an integer that f takes back to
 * v's very bits: x.div(B * T * C) (a Cast of B*T*C), 3 * T + 1, 1 / Math.sqrt(2 * B * D - 2).
 * N is taken where its form is pinned down (a floor division only once the runs moved its
 * symbols through more sizes). */
static bool of_int_form(om_lower *l, const pool *p, const double *v, int n, om_xfloat *out) {
  /* fn 4 to 7: N / 2, N / 4, N / 8, N / 16, a multiple of a half the model adds to a size ((T % 7)
   * * 0.5 + Math.floor(T / 3)): scaling by a power of two is exact in double and float32 alike */
  for (int fn = 0; fn < 8; fn++) {
    int64_t a[RUNS_MAX + 1];
    double scale = fn < 4 ? 1 : (double)(2 << (fn - 4));
    bool ok = true;
    for (int r = 0; r < n && ok; r++) {
      double x = fn == 0 ? v[r] : fn == 1 ? 1 / v[r] : fn == 2 ? v[r] * v[r] : fn == 3 ? 1 / (v[r] * v[r]) : v[r] * scale;
      ok = fabs(x) < (fn < 4 ? 0x1p53 : 0x1p24) && (fn == 0 || fn >= 4 || x >= 0.5);
      a[r] = ok ? (int64_t)llround(x) : 0;
      double back = fn < 4 ? apply_fn(fn, (double)a[r]) : (double)a[r] / scale;
      ok = ok && !memcmp(&back, &v[r], sizeof back);
    }
    if (!ok || distinct(a, n) < 2) continue;
    bool floored;
    int64_t at[OM_AT_MAX][64];
    int n_at, x = fit_values(l, p, a, n, &floored, at, &n_at, 0);
    if (x >= 0 && (!floored || !(l->tr->xs.v[x].syms & ~l->tr->extended))) {
      *out = (om_xfloat){.x = x, .fn = fn < 4 ? fn : 0, .a = 1 / scale};
      return true;
    }
  }
  return false;
}

bool om__fit_float(om_lower *l, double v0, const double *vals, om_xfloat *out) {
  static _Thread_local pool p;
  pool_make(l, &p);
  int n = 1 + p.runs;
  double v[RUNS_MAX + 1];
  if (n < 3) return false; /* a and b from two runs, checked at a third */
  v[0] = v0;
  for (int i = 0; i < p.runs; i++) v[1 + i] = vals[p.ix[i]];
  for (int i = 0; i < p.n; i++)
    for (int fn = 0; fn < 4 && distinct(p.e[i], n) >= 3 && both_parities(p.e[i], n); fn++) {
      /* two numbers from two sizes, checked at a third at least; at sizes of one parity only,
       * a / (H + 1) fits what a / floor((H + 1) / 2) gives (fit_float asks for more runs) */
      double f[RUNS_MAX + 1] = {0};
      bool ok = true;
      for (int r = 0; r < n; r++) ok &= p.e[i][r] > 0, f[r] = apply_fn(fn, (double)p.e[i][r]);
      int r = 1;
      while (ok && r < n && f[r] == f[0]) r++;
      if (!ok || r == n) continue;
      double a = (v[r] - v[0]) / (f[r] - f[0]), b = v[0] - a * f[0];
      if (close_to(b, 0)) b = 0;
      for (int k = 0; k < n && ok; k++) ok = close_to(a * f[k] + b, v[k]);
      if (!ok || a == 0) continue;
      *out = (om_xfloat){.x = p.x[i], .fn = fn, .a = a, .b = b};
      return true;
    }
  return of_int_form(l, &p, v, n, out);
}
