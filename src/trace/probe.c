/* The outputs' extents (docs/symbolic-axes.md, "How an output's extents are found"). Each
 * output axis has candidates: the op's own (its extents rule: sizes from its arguments, cat's
 * sum), the fixed size, every input axis's extent, for ops that derive extents a function of
 * one input axis found from infer (floor((a x + b) / k): a conv's, a pool's, an upsampling's),
 * and the sizes the other runs saw, fitted. The probe runs the op's infer (pure shape
 * arithmetic) at many assignments of the symbols (the runs', near and far ones, each symbol
 * alone and all together, below the example, and all at their minimum) and takes, per axis, the first candidate that
 * gives infer's size at every one. Where the call only works for some sizes it narrows a
 * symbol's range when that is what the model needs (a slice of a 64-row table to the sequence
 * length works up to 64; a 3x3 conv without padding from 3), and otherwise refuses with the
 * sizes where it fails and, when one makes it hold, the multiple to declare (UNet skips: h a
 * multiple of 4). Two different expressions that agree at every probe are proven equal
 * everywhere (om__x_same) or the point where they differ becomes a probe. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace/trace.h"

#define MAX_EXTRA 16 /* probes a call adds: points where two of its extents differ */

/* ---- the probe's assignments ---- */

static bool add_probe(om_trace *tr, const int64_t *v, bool small) {
  if (tr->n_probes == tr->cap_probes) {
    int cap = tr->cap_probes ? 2 * tr->cap_probes : 32;
    int64_t(*p)[64] = realloc(tr->probes, sizeof *p * (size_t)cap);
    if (p) tr->probes = p;
    bool *s = p ? realloc(tr->probe_small, sizeof *s * (size_t)cap) : NULL;
    if (s) tr->probe_small = s;
    if (!p || !s) return om__fail(OM_ERR_OUT_OF_MEMORY, "trace_run: out of memory");
    tr->cap_probes = cap;
  }
  memcpy(tr->probes[tr->n_probes], v, sizeof(int64_t) * 64);
  tr->probe_small[tr->n_probes++] = small;
  return true;
}

bool om__probe_init(om_trace *tr) {
  int n = tr->symbols.n;
  int64_t v0[64], v[64];
  om__run_example(tr, v0);
  for (int r = 0; r < tr->runs.n; r++) { /* a run below the example: only its small symbols move, so a failure there narrows them */
    bool small = false;
    for (int k = 0; k < n; k++) small |= tr->runs.v[r].v[k] < v0[k];
    for (int k = 0; k < n; k++) v[k] = small && tr->runs.v[r].v[k] >= v0[k] ? v0[k] : tr->runs.v[r].v[k];
    if (!add_probe(tr, v, small)) return false;
  }
  for (int k = 0; k < n; k++) {
    const om_symbol *s = &tr->symbols.v[k];
    int64_t at[] = {v0[k] + 1, v0[k] + 2, v0[k] + 3, v0[k] + 5, 2 * v0[k] + 7, 64 * v0[k] + 7, s->vmin, s->vmin + 1};
    for (int i = 0; i < (int)(sizeof at / sizeof at[0]); i++) {
      bool small = i >= 6;
      if (at[i] < s->vmin || at[i] > s->vmax || (small && at[i] >= v0[k])) continue;
      memcpy(v, v0, sizeof v);
      v[k] = at[i];
      if (!add_probe(tr, v, small)) return false;
    }
  }
  for (int i = 0; n > 1 && i < 2; i++) { /* all symbols at once */
    for (int k = 0; k < n; k++) {
      v[k] = i ? 2 * v0[k] + 3 : v0[k] + 1;
      if (v[k] > tr->symbols.v[k].vmax) v[k] = v0[k];
    }
    if (!add_probe(tr, v, false)) return false;
  }
  /* and all at their smallest: an extent of a product (x.reshape(N, -1)[:, 12:24] is
   * min(4hw - 12, 12)) can leave its fixed size only where every symbol is small */
  for (int i = 0; n > 1 && i < 2; i++) {
    bool below = false;
    for (int k = 0; k < n; k++) {
      v[k] = tr->symbols.v[k].vmin + i;
      if (v[k] > v0[k]) v[k] = v0[k];
      below |= v[k] < v0[k];
    }
    if (below && !add_probe(tr, v, true)) return false;
  }
  return true;
}

/* ---- infer at an assignment ---- */

typedef struct shapes {
  bool ok;
  bool other_rank; /* infer works, and gives an output of another rank (x.squeeze() at a batch of 1) */
  int64_t shape[OM_MAX_OUTPUTS][OM_MAX_DIMS];
} shapes;

typedef struct probe {
  om_lower *l;
  const om_op_def *def;
  om_tensor *fake, **fake_in;
  uint64_t used;            /* the symbols the call depends on */
  int64_t extra[MAX_EXTRA][64];
  int n_extra;
  char why[sizeof om__state()->err_msg]; /* infer's message at the last failure */
} probe;

/* The op's infer on the call's inputs and attrs evaluated at the variables v; with over_i >= 0,
 * input over_i's axis over_e at over_size instead. */
static void infer_at(probe *p, const int64_t *v, int over_i, int over_e, int64_t over_size, shapes *out) {
  om_lower *l = p->l;
  const om_call *c = l->c;
  om_trace *tr = l->tr;
  out->ok = out->other_rank = false;
  for (int i = 0; i < c->n_in; i++) {
    p->fake[i] = *c->in[i];
    for (int d = 0; d < c->in[i]->ndim; d++) {
      int x = om__lower_in_ext(l, i, d);
      if (i == over_i && d == over_e) p->fake[i].shape[d] = over_size;
      else if (x >= 0 && !om__x_eval(tr, x, v, &p->fake[i].shape[d]))
        return (void)snprintf(p->why, sizeof p->why, "a size overflows");
    }
    om__contiguous_strides(p->fake[i].shape, p->fake[i].ndim, p->fake[i].strides);
    p->fake[i].offset = 0;
    p->fake_in[i] = &p->fake[i];
  }
  om_call pc = {.op = c->op, .n_in = c->n_in, .n_out = c->n_out, .in = p->fake_in, .attrs = *l->given};
  for (int k = 0; k < pc.attrs.n_i; k++)
    if (!om__x_eval(tr, l->arg[k], v, &pc.attrs.i[k])) return (void)snprintf(p->why, sizeof p->why, "a size overflows");
  /* a float argument that moves (fit_args' fmoves: interpolate's scale factor (h0 + 0.1) / 4) is
   * the one the model passes at v, not the record run's: an extent the op derives from it
   * (floor(4 * scale) = h0) would otherwise be the traced one at every probe */
  for (int k = 0; k < pc.attrs.n_f; k++)
    if (l->fmoves >> k & 1 && !om__xfloat_eval(tr, &l->farg[k], v, &pc.attrs.f[k]))
      return (void)snprintf(p->why, sizeof p->why, "a size overflows");
  om_thread_state *st = om__state();
  om_error_kind kind = st->err_kind;
  char msg[sizeof st->err_msg];
  memcpy(msg, st->err_msg, sizeof msg);
  st->err_kind = OM_ERR_OK;
  bool ok = p->def->infer(&pc);
  out->other_rank = false;
  for (int j = 0; ok && j < c->n_out; j++) ok = !(out->other_rank = pc.out_meta[j].ndim != c->out_meta[j].ndim);
  if (!ok) snprintf(p->why, sizeof p->why, "%s", st->err_kind ? st->err_msg : "the output has another rank");
  st->err_kind = kind;
  memcpy(st->err_msg, msg, sizeof msg);
  out->ok = ok;
  for (int j = 0; ok && j < c->n_out; j++) memcpy(out->shape[j], pc.out_meta[j].shape, sizeof out->shape[j]);
}

/* ---- candidates ---- */

void om__probe_candidate(om_lower *l, int j, int d, int x) {
  if (x == -1) x = om__x_const(l->tr, l->c->out_meta[j].shape[d]);
  if (x < 0 || l->n_cand[j][d] == (int)(sizeof l->cand[j][d] / sizeof(int))) return;
  int64_t v[64], at;
  om__run_example(l->tr, v);
  if (!om__x_eval(l->tr, x, v, &at) || at != l->c->out_meta[j].shape[d]) return; /* not even the traced size */
  for (int k = 0; k < l->n_cand[j][d]; k++)
    if (l->cand[j][d][k] == x) return;
  l->cand[j][d][l->n_cand[j][d]++] = x;
}

/* For an op that derives extents: output axes as functions of input i's axis e alone, found by
 * running infer with that axis at 48 consecutive sizes from the example's: f(x + P) = f(x) + A
 * for the smallest period P <= 24 (a stride, an upsampling's denominator: 20 for a scale factor
 * of 0.35) gives f(x) = floor((A x + b) / P), b from the first P + 1 samples (unique, since they
 * cover every residue). For an op given a double, and an axis that is one symbol's size, f may
 * also be off at one of the samples (two steps): an extent it rounds from the double
 * (interpolate by 0.7: floor(H * 0.7) is 62 at H = 90, where floor(7H / 10) is 63); the sizes
 * where f is off become probes, which rule it out and name where it is off. Each such f of the
 * axis's extent is a candidate; the probe checks it far beyond the samples. */
/* floor(a / b) for b > 0. */
static int64_t floordiv(int64_t a, int64_t b) { return a / b - (a % b != 0 && a < 0); }

static void derived_candidates(probe *p, int i, int e) {
  om_lower *l = p->l;
  const om_call *c = l->c;
  enum { N = 48, MAX_PERIOD = 24, MAX_MISS = 2 };
  static _Thread_local int64_t f[OM_MAX_OUTPUTS][OM_MAX_DIMS][N];
  int64_t x0 = c->in[i]->shape[e], v[64];
  om__run_example(l->tr, v);
  for (int t = 0; t < N; t++) {
    shapes s;
    infer_at(p, v, i, e, x0 + t, &s);
    if (!s.ok) return;
    for (int j = 0; j < c->n_out; j++)
      for (int d = 0; d < c->out_meta[j].ndim; d++) f[j][d][t] = s.shape[j][d];
  }
  int x = om__lower_in_ext(l, i, e), sym = -1;
  for (int q = 0; c->attrs.n_f > 0 && q < l->tr->symbols.n; q++) /* the symbol whose size the axis is */
    if (x == om__x_sym(l->tr, q) && l->tr->symbols.v[q].multiple == 1) sym = q;
  for (int j = 0; j < c->n_out; j++)
    for (int d = 0; d < c->out_meta[j].ndim; d++) {
      const int64_t *y = f[j][d];
      /* exact steps first, at any period; then with two steps off (one size rounded otherwise) */
      for (int64_t k = 0, period = 1; k < (sym >= 0 ? 2 : 1) * MAX_PERIOD; k++, period = k % MAX_PERIOD + 1) {
        int64_t a = y[period] - y[0];
        int miss = 0;
        for (int t = 0; a != 0 && t + period < N; t++) miss += y[t + period] - y[t] != a;
        if (a == 0 || miss > (k < MAX_PERIOD ? 0 : MAX_MISS)) continue;
        int64_t lo = INT64_MIN, hi = INT64_MAX; /* period y <= a x + b < period y + period */
        for (int t = 0; t <= period; t++) {
          int64_t xv = x0 + t, b0 = period * y[t] - a * xv;
          if (b0 > lo) lo = b0;
          if (b0 + period - 1 < hi) hi = b0 + period - 1;
        }
        if (lo > hi) break;
        for (int t = 0; miss && t < N && p->n_extra < MAX_EXTRA; t++) /* where it is off: probes */
          if (floordiv(a * (x0 + t) + lo, period) != y[t]) {
            memcpy(p->extra[p->n_extra], v, sizeof v);
            p->extra[p->n_extra++][sym] = x0 + t;
          }
        int num = om__x_lin(l->tr, a, x, 0, -1, lo);
        if (num >= 0) om__probe_candidate(l, j, d, om__x_floordiv(l->tr, num, period));
        break;
      }
    }
}

/* The generic candidates, after the op's own: fixed, each input axis's extent, functions of
 * one input axis (ops that derive extents), the sizes the other runs saw, fitted. */
static void generic_candidates(probe *p) {
  om_lower *l = p->l;
  const om_call *c = l->c;
  for (int j = 0; j < c->n_out; j++)
    for (int d = 0; d < c->out_meta[j].ndim; d++) {
      om__probe_candidate(l, j, d, -1);
      for (int i = 0; i < c->n_in; i++)
        for (int e = 0; e < c->in[i]->ndim; e++)
          if (om__lower_in_ext(l, i, e) >= 0 && c->in[i]->shape[e] == c->out_meta[j].shape[d])
            om__probe_candidate(l, j, d, om__lower_in_ext(l, i, e));
    }
  for (int i = 0; p->def->derives_extents && i < c->n_in; i++)
    for (int e = 0; e < c->in[i]->ndim; e++)
      if (om__lower_in_ext(l, i, e) >= 0) derived_candidates(p, i, e);
  int runs = l->tr->runs.n;
  for (int j = 0; j < c->n_out; j++)
    for (int d = 0; d < c->out_meta[j].ndim; d++) {
      int64_t seen[OM_RUNS_MAX] = {0};
      bool all = runs > 0;
      for (int r = 0; all && r < runs; r++) {
        int nd;
        int64_t sh[OM_MAX_DIMS];
        if (!l->rc[r]) continue;
        all = om__runcall_output(&l->tr->runs.v[r], l->rc[r], j, &nd, sh) && nd == c->out_meta[j].ndim;
        if (all) seen[r] = sh[d];
      }
      for (int q = 0; all && q < l->n_cand[j][d]; q++) { /* a candidate already gives what the runs saw */
        bool same = true;
        for (int r = 0; r < runs && same; r++) {
          int64_t v;
          same = !l->rc[r] || (om__x_eval(l->tr, l->cand[j][d][q], l->tr->runs.v[r].v, &v) && v == seen[r]);
        }
        if (same) all = false;
      }
      bool floored;
      int64_t at[OM_AT_MAX][64];
      int n_at;
      int x = all ? om__fit_int(l, c->out_meta[j].shape[d], seen, &floored, at, &n_at) : OM_FIT_NONE;
      if (x >= 0) om__probe_candidate(l, j, d, x);
    }
}

/* ---- choosing ---- */

/* The probe's assignments for this call: the trace's (those that move a symbol the call uses)
 * and the call's extra ones; none from where a run took a loop's more steps (om__run_loop_end:
 * the record run's fixed count of steps there is no size the model computes, and the range check
 * rolls the loop), so that a call after the loop (the stacked steps added to the input) is not
 * taken to fail there. */
static int probe_list(const probe *p, const int64_t **list, bool *small, int cap) {
  const om_trace *tr = p->l->tr;
  int64_t v0[64], end[64];
  om__run_example(tr, v0);
  for (int q = 0; q < tr->symbols.n; q++) end[q] = om__run_loop_end(tr, q);
  int n = 0;
  for (int k = 0; k < tr->n_probes && n < cap; k++) {
    const om_symbol *s = tr->symbols.v;
    bool moves = false, inside = true;
    for (int q = 0; q < tr->symbols.n; q++) {
      moves |= (p->used >> q & 1) && tr->probes[k][q] != v0[q];
      inside &= tr->probes[k][q] >= s[q].vmin && tr->probes[k][q] <= end[q];
    }
    if (moves && inside) small[n] = tr->probe_small[k], list[n++] = tr->probes[k];
  }
  for (int k = 0; k < p->n_extra && n < cap; k++) small[n] = false, list[n++] = p->extra[k];
  return n;
}

/* Whether candidate x of output j's axis d gives infer's size at probes idx[0..n) that worked. */
static bool fits(const om_trace *tr, int x, int j, int d, const int64_t *const *list, const shapes *s, const int *idx,
                 int n) {
  for (int q = 0; q < n; q++) {
    int k = idx[q];
    int64_t val;
    if (s[k].ok && (!om__x_eval(tr, x, list[k], &val) || val != s[k].shape[j][d])) return false;
  }
  return true;
}

/* The first candidate of each output axis that fits probes idx[0..n) into choice; false (with
 * the first axis that has none in *bad_j, *bad_d) when an axis has none. */
static bool choose(om_lower *l, const int64_t *const *list, const shapes *s, const int *idx, int n, int *choice,
                   int *bad_j, int *bad_d) {
  for (int j = 0; j < l->c->n_out; j++)
    for (int d = 0; d < l->c->out_meta[j].ndim; d++) {
      int q = 0;
      while (q < l->n_cand[j][d] && !fits(l->tr, l->cand[j][d][q], j, d, list, s, idx, n)) q++;
      choice[j * OM_MAX_DIMS + d] = q;
      if (q == l->n_cand[j][d]) {
        *bad_j = j, *bad_d = d;
        return false;
      }
    }
  return true;
}

/* Whether probe k works with the chosen candidates: infer succeeds and gives their sizes. */
static bool works(om_lower *l, const int64_t *const *list, const shapes *s, int k, const int *choice) {
  if (!s[k].ok) return false;
  for (int j = 0; j < l->c->n_out; j++)
    for (int d = 0; d < l->c->out_meta[j].ndim; d++)
      if (!fits(l->tr, l->cand[j][d][choice[j * OM_MAX_DIMS + d]], j, d, list, s, &k, 1)) return false;
  return true;
}

/* Whether the call works (infer, and a candidate for each axis) at 8 assignments where the
 * symbols in mask are multiples of m and every other symbol the call uses moves freely. */
static bool holds_for_multiples(probe *p, uint64_t mask, int64_t m) {
  om_lower *l = p->l;
  om_trace *tr = l->tr;
  enum { N = 8 };
  int64_t v0[64], pts[N][64];
  const int64_t *list[N];
  static _Thread_local shapes s[N];
  int idx[N], choice[OM_MAX_OUTPUTS * OM_MAX_DIMS], bj, bd;
  om__run_example(tr, v0);
  for (int t = 0; t < N; t++) {
    memcpy(pts[t], v0, sizeof pts[t]);
    for (int q = 0; q < tr->symbols.n; q++)
      if (mask >> q & 1) pts[t][q] = m * ((v0[q] + m - 1) / m + (t + 3 * q) % N);
      else if (p->used >> q & 1) pts[t][q] = v0[q] + (t + q) % N;
    list[t] = pts[t];
    idx[t] = t;
    infer_at(p, pts[t], -1, 0, 0, &s[t]);
    if (!s[t].ok) return false;
  }
  return choose(l, list, s, idx, N, choice, &bj, &bd);
}

/* The declaration that makes the call hold: the smallest m (<= 64) such that it works when the
 * symbols in *mask are multiples of m (those it needs: each one dropped where it still works);
 * 0 when none does. */
static int64_t multiple_that_holds(probe *p, uint64_t *mask) {
  for (int64_t m = 2; m <= 64; m++) {
    if (!holds_for_multiples(p, p->used, m)) continue;
    *mask = p->used;
    for (int q = 0; q < 64; q++)
      if ((*mask >> q & 1) && holds_for_multiples(p, *mask & ~((uint64_t)1 << q), m)) *mask &= ~((uint64_t)1 << q);
    return m;
  }
  return 0;
}

#define LINE_STEPS 256 /* how far along a symbol's line range_that_holds looks */

/* Whether the call works (its infer) at the example with symbol k's variable at x. */
static bool works_on_line(probe *p, int k, int64_t x) {
  static _Thread_local shapes s;
  int64_t v[64];
  om__run_example(p->l->tr, v);
  v[k] = x;
  infer_at(p, v, -1, 0, 0, &s);
  return s.ok;
}

/* Where no multiple holds: the sizes the call works at around the example, each symbol it reads
 * along its own line (the others at the example), as the declaration of that box, written into
 * hint ("; it holds for the sizes om.Dim('h', { min: 16, max: 19 }), ... declare"), when the call
 * works at the box's corners too (a position table that fits one patch grid: ViT's at its native
 * size); a symbol it works at along its whole line (a batch) is left out. false when a symbol
 * reaches LINE_STEPS sizes from the example on one side only, or a corner fails. */
static bool range_that_holds(probe *p, char *hint, size_t cap) {
  om_trace *tr = p->l->tr;
  int64_t v0[64], lo[64], hi[64];
  int ks[4], n = 0;
  om__run_example(tr, v0);
  for (int k = 0; k < tr->symbols.n; k++) {
    if (!(p->used >> k & 1)) continue;
    const om_symbol *s = &tr->symbols.v[k];
    lo[k] = hi[k] = v0[k];
    while (lo[k] > s->vmin && v0[k] - lo[k] < LINE_STEPS && works_on_line(p, k, lo[k] - 1)) lo[k]--;
    while (hi[k] < s->vmax && hi[k] - v0[k] < LINE_STEPS && works_on_line(p, k, hi[k] + 1)) hi[k]++;
    if (lo[k] == s->vmin && hi[k] - v0[k] == LINE_STEPS) continue; /* works along its whole line: no bound (a batch) */
    if (n == 4 || s->multiple != 1 || v0[k] - lo[k] == LINE_STEPS || hi[k] - v0[k] == LINE_STEPS) return false;
    ks[n++] = k;
  }
  if (!n) return false;
  for (int corner = 0; corner < 1 << n; corner++) {
    static _Thread_local shapes s;
    int64_t v[64];
    memcpy(v, v0, sizeof v);
    for (int q = 0; q < n; q++) v[ks[q]] = corner >> q & 1 ? hi[ks[q]] : lo[ks[q]];
    infer_at(p, v, -1, 0, 0, &s);
    if (!s.ok) return false;
  }
  size_t used = (size_t)snprintf(hint, cap, "; it holds for the sizes ");
  for (int q = 0; q < n && used < cap; q++)
    used += (size_t)snprintf(hint + used, cap - used, "%som.Dim('%s', { min: %lld, max: %lld })", q ? ", " : "",
                             tr->symbols.v[ks[q]].name, (long long)lo[ks[q]], (long long)hi[ks[q]]);
  if (used < cap) snprintf(hint + used, cap - used, " declare (om_trace_dim in C)");
  return true;
}

#define SCAN_STEPS (1 << 16) /* how far along a symbol's line candidate_range looks */

/* Where candidate x of output j's axis d, taken at the example, gives infer's size along symbol
 * k's line (the others at the example) up to the sizes v, where it does not: the first size above
 * or below the example where it does not (*first) and the declaration of the range around the
 * example where it does, written into hint ("; it holds for the sizes om.Dim('h', { max: 89 }):
 * declare it"). Sizes where infer fails bound no range (the model fails there too, and the trace
 * narrows to it). false when the scan finds no such size within SCAN_STEPS. */
static bool candidate_range(probe *p, int x, int j, int d, int k, const int64_t *v, int64_t *first, char *hint,
                            size_t cap) {
  om_trace *tr = p->l->tr;
  const om_symbol *s = &tr->symbols.v[k];
  int64_t v0[64], at[64], lo = s->decl_vmin, hi = s->decl_vmax; /* the declared range: a probe may have narrowed it */
  om__run_example(tr, v0);
  bool up = v[k] > v0[k];
  for (int side = 0; side < 2; side++) { /* the side of v first: its first size is the one named */
    bool upward = side ? !up : up;
    memcpy(at, v0, sizeof at);
    for (int64_t step = 1; step <= SCAN_STEPS; step++) {
      at[k] = upward ? v0[k] + step : v0[k] - step;
      if (at[k] < s->decl_vmin || at[k] > s->decl_vmax) break;
      static _Thread_local shapes sh;
      const int64_t *one = at;
      int zero = 0;
      infer_at(p, at, -1, 0, 0, &sh);
      if (!sh.ok || fits(tr, x, j, d, &one, &sh, &zero, 1)) continue;
      if (upward) hi = at[k] - 1;
      else lo = at[k] + 1;
      if (!side) *first = at[k];
      break;
    }
    if (!side && (upward ? hi : lo) == (upward ? s->decl_vmax : s->decl_vmin)) return false;
  }
  size_t n = (size_t)snprintf(hint, cap, "; it holds for the sizes om.Dim('%s', { ", s->name);
  if (lo > s->decl_vmin) n += (size_t)snprintf(hint + n, n < cap ? cap - n : 0, "min: %lld%s", (long long)(lo * s->multiple), hi < s->decl_vmax ? ", " : "");
  if (hi < s->decl_vmax) n += (size_t)snprintf(hint + n, n < cap ? cap - n : 0, "max: %lld", (long long)(hi * s->multiple));
  if (s->multiple > 1) n += (size_t)snprintf(hint + n, n < cap ? cap - n : 0, ", multipleOf: %lld", (long long)s->multiple);
  if (n < cap) snprintf(hint + n, cap - n, " }): declare it (om_trace_dim in C)");
  return true;
}

/* Refuses the call: at the sizes v it fails (why, j < 0) or its output j's axis d is got, which
 * no candidate gives; x: the candidate that holds farthest from the example (-1: none). */
static bool refuse(probe *p, const int64_t *v, const char *why, int j, int d, int64_t got, int x) {
  om_lower *l = p->l;
  om_trace *tr = l->tr;
  char sizes[160], hint[600] = "";
  om__run_sizes(tr, v, p->used, sizes, sizeof sizes);
  uint64_t mask = 0;
  int64_t m = multiple_that_holds(p, &mask);
  if (!mask) m = 0; /* a multiple of no symbol is no hint */
  size_t n = 0;
  for (int pass = 0; m && pass < 2; pass++) { /* "; it holds when 'h' is a multiple of 4 and 'w' a multiple of 4: declare..." */
    n += (size_t)snprintf(hint + n, sizeof hint - n, pass ? ": declare " : "; it holds when ");
    for (int k = 0, first = 1; k < tr->symbols.n && n < sizeof hint; k++) {
      if (!(mask >> k & 1)) continue;
      long long mm = (long long)(m * tr->symbols.v[k].multiple);
      const char *name = tr->symbols.v[k].name;
      n += pass ? (size_t)snprintf(hint + n, sizeof hint - n, "%som.Dim('%s', { multipleOf: %lld })", first ? "" : ", ", name, mm)
                : (size_t)snprintf(hint + n, sizeof hint - n, first ? "'%s' is a multiple of %lld" : " and '%s' a multiple of %lld",
                                   name, mm);
      first = 0;
    }
  }
  if (m && n < sizeof hint) snprintf(hint + n, sizeof hint - n, " (om_trace_dim in C) and trace with example sizes that are");
  if (!m && j < 0) range_that_holds(p, hint, sizeof hint);
  int k = -1, moved = 0;
  int64_t v0[64], first = 0;
  om__run_example(tr, v0);
  for (int q = 0; q < tr->symbols.n; q++)
    if (v[q] != v0[q]) k = q, moved++;
  if (!m && j >= 0 && x >= 0 && moved == 1 && candidate_range(p, x, j, d, k, v, &first, hint, sizeof hint)) {
    /* the first size where the formula the graph would take is wrong, and the range where it is right */
    int64_t at[64], want = 0;
    memcpy(at, v, sizeof at);
    at[k] = first;
    static _Thread_local shapes sh;
    infer_at(p, at, -1, 0, 0, &sh);
    om__x_eval(tr, x, at, &want);
    return om__trace_fail(OM_ERR_TRACE_SYMBOLIC_SHAPE, "%s: output axis %d has size %lld at the traced sizes and %lld at "
                          "%s, where %s, the size the graph would compute, is %lld (the op rounds a number the graph "
                          "cannot follow at every size)%s", l->who, d, (long long)l->c->out_meta[j].shape[d],
                          (long long)sh.shape[j][d], om__run_sizes(tr, at, p->used, sizes, sizeof sizes),
                          om__x_name(tr, x), (long long)want, hint);
  }
  if (j < 0)
    return om__run_fails_at(tr, v, tr->calls - 1, om__arena_printf(&tr->g.arena, "%s (call %lld): at %s the call fails (%s)",
                                                                   l->who, (long long)tr->calls, sizes, why),
                            "%s: at %s the call fails (%s), so the graph would only hold at the traced sizes%s", l->who, sizes,
                            why, hint);
  return om__trace_fail(OM_ERR_TRACE_SYMBOLIC_SHAPE, "%s: output axis %d has size %lld at the traced sizes and %lld "
                        "at %s, which the graph cannot compute from the sizes of its inputs%s", l->who, d,
                        (long long)l->c->out_meta[j].shape[d], (long long)got, sizes, hint);
}

/* Moves symbol k's maximum (up) or minimum down to the last size where the call works with the
 * chosen candidates, bisecting between pass (works) and fail with the other symbols at the
 * example's sizes (base NULL) or at base's; the symbol's range records why. */
static void narrow(probe *p, int k, int64_t pass, int64_t fail, bool up, const int *choice, const int64_t *base) {
  om_lower *l = p->l;
  om_trace *tr = l->tr;
  int64_t v[64];
  if (base) memcpy(v, base, sizeof v); /* the other symbols where the failing probe had them */
  else om__run_example(tr, v);
  while (up ? fail - pass > 1 : pass - fail > 1) {
    int64_t mid = pass + (fail - pass) / 2;
    const int64_t *one = v;
    shapes s;
    v[k] = mid;
    infer_at(p, v, -1, 0, 0, &s);
    if (works(l, &one, &s, 0, choice)) pass = mid;
    else fail = mid;
  }
  om_symbol *s = &tr->symbols.v[k];
  const char *why = om__arena_printf(&tr->g.arena, "%s (call %lld)", l->who, (long long)tr->calls);
  const om_site *site = om__run_site(tr, NULL, tr->calls - 1);
  if (up && pass < s->vmax) s->vmax = pass, s->max = pass * s->multiple, s->max_why = why, s->max_site = site; /* ranges only narrow */
  else if (!up && pass > s->vmin) s->vmin = pass, s->min = pass * s->multiple, s->min_why = why, s->min_site = site;
}

/* Whether a failure of the call at the probe v (below the example) is left to the range check
 * (runs.c check_range): where several symbols are below their examples at once, no one symbol's
 * minimum can leave out v without leaving out sizes where the model answers (a conv of a
 * flattened H * W at H = W = 1, fine at H = 1 alone), and the call's failure may be the
 * graph's arguments', not the model's (a fitted 6 where the model computes min(B * T, 6)). The
 * range check runs the model itself there: where it fails, the ranges stay; where it does
 * another thing, the trace is refused. Only when that check runs (the model runs shape only). */
static bool left_to_range(const om_trace *tr, const int64_t *v, const int64_t *v0) {
  int moved = 0;
  for (int q = 0; q < tr->symbols.n; q++) moved += v[q] != v0[q];
  return moved > 1 && tr->base.n_outputs >= 0;
}

/* Whether the call works at a probe of list (n, infer's shapes s) below the example where only
 * symbol k moves, below k's minimum. */
static bool works_below(probe *p, const int64_t *const *list, const shapes *s, int n, int k, const int *choice) {
  const om_trace *tr = p->l->tr;
  int64_t v0[64];
  om__run_example(tr, v0);
  for (int q = 0; q < n; q++) {
    bool alone = list[q][k] < tr->symbols.v[k].vmin;
    for (int i = 0; alone && i < tr->symbols.n; i++) alone = i == k || list[q][i] == v0[i];
    if (alone && works(p->l, list, s, q, choice)) return true;
  }
  return false;
}

/* Whether v is one of list[0..n). */
static bool in_list(const int64_t *const *list, int n, const int64_t *v) {
  for (int q = 0; q < n; q++)
    if (list[q] == v) return true;
  return false;
}

/* Checks that the chosen extents are those the other runs logged: they ran the op itself. A
 * run outside the symbols' ranges (narrowed) is not checked; one below the example that
 * disagrees narrows them instead (om__run_drop; refused at the end where the model works there). */
static bool check_runs(probe *p) {
  om_lower *l = p->l;
  om_trace *tr = l->tr;
  for (int r = 0; r < tr->runs.n; r++) {
    bool inside = true;
    for (int k = 0; k < tr->symbols.n; k++)
      inside &= tr->runs.v[r].v[k] >= tr->symbols.v[k].vmin && tr->runs.v[r].v[k] <= tr->symbols.v[k].vmax;
    for (int j = 0; inside && l->rc[r] && j < l->c->n_out; j++) {
      int nd;
      int64_t sh[OM_MAX_DIMS];
      if (!om__runcall_output(&tr->runs.v[r], l->rc[r], j, &nd, sh)) continue;
      for (int d = 0; d < nd; d++) {
        int x = l->out_ext[j][d];
        int64_t want = l->c->out_meta[j].shape[d];
        if (x >= 0 && !om__x_eval(tr, x, tr->runs.v[r].v, &want)) continue;
        if (nd == l->c->out_meta[j].ndim && want == sh[d]) continue;
        char sizes[160];
        om__run_sizes(tr, tr->runs.v[r].v, ~(uint64_t)0, sizes, sizeof sizes);
        if (om__run_drop(tr, r, om__arena_printf(&tr->g.arena, "%s (call %lld): at %s its output axis %d has the size "
                                                  "%lld, the graph %lld", l->who, (long long)tr->calls, sizes, d,
                                                  (long long)sh[d], (long long)want))) {
          l->rc[r] = NULL;
          break;
        }
        return om__trace_fail(OM_ERR_TRACE_SYMBOLIC_SHAPE, "%s: at %s the model's call gives output axis %d the size "
                              "%lld, the graph %lld (a size the graph cannot follow)", l->who,
                              om__run_sizes(tr, tr->runs.v[r].v, ~(uint64_t)0, sizes, sizeof sizes), d,
                              (long long)sh[d], (long long)want);
      }
    }
  }
  return true;
}

/* Two different extents of the call's inputs that agree at every probe: proven equal (and
 * remembered), or the point where they differ becomes a probe (true: probe again). */
static bool differ_somewhere(probe *p, const int64_t *const *list, int n) {
  om_lower *l = p->l;
  om_trace *tr = l->tr;
  const om_call *c = l->c;
  int xs[64], nx = 0;
  for (int i = 0; i < c->n_in; i++)
    for (int d = 0; d < c->in[i]->ndim && nx < 64; d++) {
      int x = om__lower_in_ext(l, i, d);
      bool seen = x < 0;
      for (int k = 0; k < nx && !seen; k++) seen = xs[k] == x;
      if (!seen) xs[nx++] = x;
    }
  for (int a = 0; a < nx; a++)
    for (int b = a + 1; b < nx; b++) {
      bool agree = true;
      for (int k = 0; k < n && agree; k++) {
        int64_t va, vb;
        agree = om__x_eval(tr, xs[a], list[k], &va) && om__x_eval(tr, xs[b], list[k], &vb) && va == vb;
      }
      if (!agree) continue;
      int64_t key = (int64_t)xs[a] << 32 | xs[b], at[64];
      bool known = false;
      for (int k = 0; k < tr->same.n && !known; k++) known = tr->same.v[k] == key;
      if (known) continue;
      int same = om__x_same(tr, xs[a], xs[b], NULL, at);
      if (same == 1) {
        int64_t *slot = OM_VEC_PUSH_SLOT(tr->same);
        if (slot) *slot = key;
      } else if (same == 0 && p->n_extra < MAX_EXTRA) {
        memcpy(p->extra[p->n_extra++], at, sizeof at);
        return true;
      }
    }
  return false;
}

/* The largest distance of the sizes v from the example's (in variables). */
static int64_t distance(const om_trace *tr, const int64_t *v, const int64_t *v0) {
  int64_t far = 0;
  for (int q = 0; q < tr->symbols.n; q++) {
    int64_t dq = v[q] > v0[q] ? v[q] - v0[q] : v0[q] - v[q];
    if (dq > far) far = dq;
  }
  return far;
}

/* Where no candidate of output j's axis d gives infer's size at every probe of big[0..nb): the
 * probe where the candidate that holds farthest from the example first fails (the one the graph
 * would be taken with on the range that holds: interpolate by 0.7's floor(7H / 10), off first at
 * H = 90, not the fixed size, off at H = 10), so that the refusal names the first size where that
 * formula is wrong and the range around the example where it is right (narrow, then the range
 * check's declaration). bad: the probe chosen so far, kept when no candidate holds farther;
 * *cand: that candidate (-1 then). */
static int farthest_failure(om_lower *l, const int64_t *const *list, const shapes *s, const int *big, int nb, int j,
                            int d, int bad, int *cand) {
  const om_trace *tr = l->tr;
  int64_t v0[64];
  om__run_example(tr, v0);
  int64_t best = bad >= 0 ? distance(tr, list[bad], v0) : -1;
  for (int q = 0; q < l->n_cand[j][d]; q++) {
    int first = -1;
    int64_t near = INT64_MAX;
    for (int t = 0; t < nb; t++) {
      int64_t dist = distance(tr, list[big[t]], v0);
      if (s[big[t]].ok && dist < near && !fits(tr, l->cand[j][d][q], j, d, list, s, &big[t], 1)) first = big[t], near = dist;
    }
    if (first >= 0 && near > best) best = near, bad = first, *cand = l->cand[j][d][q];
  }
  return bad;
}

bool om__probe_extents(om_lower *l) {
  om_trace *tr = l->tr;
  om_call *c = l->c;
  const om_op_def *def = om__ops[c->op];
  probe p = {.l = l, .def = def};
  for (int i = 0; i < c->n_in; i++)
    for (int d = 0; d < c->in[i]->ndim; d++) {
      int x = om__lower_in_ext(l, i, d);
      if (x >= 0) p.used |= tr->xs.v[x].syms;
    }
  for (int k = 0; k < l->given->n_i; k++) p.used |= tr->xs.v[l->arg[k]].syms;
  for (int k = 0; k < l->given->n_f; k++) /* a table resized by a scale the sizes give moves with them */
    if (l->fmoves >> k & 1) p.used |= tr->xs.v[l->farg[k].x].syms;
  for (int j = 0; j < c->n_out; j++)
    for (int d = 0; d < OM_MAX_DIMS; d++) l->out_ext[j][d] = -1;
  if (!p.used) return true; /* nothing here changes with the sizes */
  om_tensor small[8], *small_in[8];
  p.fake = c->n_in <= 8 ? small : om__alloc(sizeof *p.fake * (size_t)c->n_in, def->name);
  p.fake_in = c->n_in <= 8 ? small_in : om__alloc(sizeof *p.fake_in * (size_t)c->n_in, def->name);
  bool ok = p.fake && p.fake_in;
  if (ok) generic_candidates(&p);
  /* an extent the op rounds from a double (interpolate's floor(H * 0.7): 62 at H = 90, where
   * floor(7H / 10) is 63) is off a candidate's quotient at edges no run may have seen: the op's
   * infer runs there too, and rules the candidate out (in half the extra probes: the rest are
   * differ_somewhere's). Only an op given a double can: a convolution's or a pool's extents are
   * integer arithmetic, and a probe at their edges (a size below the kernel) would narrow a
   * range where the model answers */
  for (int j = 0; ok && c->attrs.n_f > 0 && j < c->n_out; j++)
    for (int d = 0; d < c->out_meta[j].ndim; d++)
      for (int q = 0; q < l->n_cand[j][d]; q++) {
        int64_t at[OM_AT_MAX][64];
        int n_at = om__fit_float_edges(l, l->cand[j][d][q], at);
        for (int k = 0; k < n_at && p.n_extra < MAX_EXTRA / 2; k++) memcpy(p.extra[p.n_extra++], at[k], sizeof at[k]);
      }
  ok = ok && om__state()->trace == tr;
  enum { CAP = 160 };
  const int64_t *list[CAP];
  bool is_small[CAP];
  static _Thread_local shapes s[CAP];
  int big[CAP], choice[OM_MAX_OUTPUTS * OM_MAX_DIMS], n_hole = 0;
  const int64_t *hole[CAP]; /* probes in a hole of the range (below a size where the call works) */
  int64_t v0[64];
  om__run_example(tr, v0);
  for (int round = 0; ok; round++) {
    int n = probe_list(&p, list, is_small, CAP), nb = 0;
    for (int k = 0; k < n; k++) {
      infer_at(&p, list[k], -1, 0, 0, &s[k]);
      if (!is_small[k]) big[nb++] = k;
    }
    /* 1. the candidates, from the probes at and above the example; one that fails there narrows
     * the symbol's maximum when everything up to the runs' sizes works (a slice of a 64-row table
     * to the sequence works up to 64), else the call is refused */
    int bad_j = -1, bad_d = 0, bad = -1, every[CAP], ne = 0;
    /* a candidate that also gives the sizes below the example where the call works is taken
     * over one that would narrow the symbol (min(seq-1,3) over a fixed 3 traced at seq 4) */
    for (int k = 0; k < n; k++)
      if (!is_small[k] || s[k].ok) every[ne++] = k;
    bool chosen = (ne > nb && choose(l, list, s, every, ne, choice, &bad_j, &bad_d)) ||
                  choose(l, list, s, big, nb, choice, &bad_j, &bad_d);
    /* where it fails, or where the axis's first candidate does: a probe that moves one symbol
     * first, which says which symbol's range to narrow */
    for (int one = 1; one >= 0 && bad < 0; one--)
      for (int q = 0, far = 0; q < nb; q++) { /* the nearest to the example: the size the message names */
        int moved = 0, dist = 0;
        for (int k = 0; k < tr->symbols.n; k++) {
          int64_t dk = list[big[q]][k] - v0[k];
          moved += dk != 0;
          if ((dk < 0 ? -dk : dk) > dist) dist = (int)(dk < 0 ? -dk : dk < INT32_MAX ? dk : INT32_MAX);
        }
        if ((moved == 1) != one || (bad >= 0 && dist >= far)) continue;
        if (!s[big[q]].ok || (!chosen && !fits(tr, l->cand[bad_j][bad_d][0], bad_j, bad_d, list, s, &big[q], 1))) bad = big[q], far = dist;
      }
    if (chosen && bad < 0) {
      /* 2. below the example: a size that fails raises the symbol's minimum */
      int low = -1;
      for (int k = 0; k < n && low < 0; k++)
        if (is_small[k] && !works(l, list, s, k, choice) && (s[k].ok || s[k].other_rank || !left_to_range(tr, list[k], v0)) &&
            !in_list(hole, n_hole, list[k]))
          low = k;
      if (low >= 0 && (s[low].ok || s[low].other_rank)) { /* the call works there, with another size than the graph's */
        char sizes[160];
        om__run_answers(tr, om__arena_printf(&tr->g.arena, "%s (call %lld): at %s its output has another size than the graph's",
                                             l->who, (long long)tr->calls, om__run_sizes(tr, list[low], p.used, sizes, sizeof sizes)), list[low],
                        om__run_site(tr, NULL, tr->calls - 1));
      }
      if (low >= 0) {
        int k = 0, moved = 0;
        while (list[low][k] == v0[k]) k++;
        for (int q = 0; q < tr->symbols.n; q++) moved += list[low][q] != v0[q];
        if (moved > 1) { /* all small at once (a product's extent): k's minimum rises with the others at theirs */
          int64_t at[64];
          memcpy(at, list[low], sizeof at);
          at[k] = v0[k];
          const int64_t *one = at;
          shapes sa;
          infer_at(&p, at, -1, 0, 0, &sa);
          if (!works(l, &one, &sa, 0, choice)) {
            char why[sizeof p.why];
            snprintf(why, sizeof why, "%s", p.why);
            ok = refuse(&p, list[low], s[low].ok ? "its output's size is not the graph's there" : why, -1, 0, 0, -1);
            break;
          }
          narrow(&p, k, v0[k], list[low][k], false, choice, list[low]);
        } else {
          om_symbol was = tr->symbols.v[k];
          narrow(&p, k, v0[k], list[low][k], false, choice, NULL);
          if (!s[low].ok && !s[low].other_rank && works_below(&p, list, s, n, k, choice)) {
            /* a hole: it fails here and works further down (min(S, 6) - 1 rows against 5 broadcast
             * at S = 2, fail from 3 to 5), so no minimum leaves out only sizes where the model
             * fails: the range stays (where the model has no answer, none is promised) */
            tr->symbols.v[k] = was;
            if (n_hole < CAP) hole[n_hole++] = list[low];
          }
        }
        continue;
      }
      /* 3. extents that agree at every probe but differ somewhere: probe there too */
      if (round < MAX_EXTRA && differ_somewhere(&p, list, n)) continue;
      for (int j = 0; j < c->n_out; j++)
        for (int d = 0; d < c->out_meta[j].ndim; d++) {
          int x = l->cand[j][d][choice[j * OM_MAX_DIMS + d]];
          l->out_ext[j][d] = om__x_is_const(tr, x, NULL) ? -1 : x;
        }
      ok = check_runs(&p);
      break;
    }
    int best = -1; /* the candidate that holds farthest, where none holds at every probe */
    if (!chosen && s[bad >= 0 ? bad : big[0]].ok) bad = farthest_failure(l, list, s, big, nb, bad_j, bad_d, bad, &best);
    if (bad < 0) bad = big[0];
    int k = -1, moved = 0;
    for (int q = 0; q < tr->symbols.n; q++)
      if (list[bad][q] != v0[q]) k = q, moved++;
    if (moved == 1 && round < 8 && list[bad][k] > v0[k] + 3) {
      int64_t pass = v0[k]; /* the largest size a run took below this one, where the call worked */
      for (int r = 0; r < tr->runs.n; r++)
        if (tr->runs.v[r].v[k] > pass && tr->runs.v[r].v[k] < list[bad][k] && l->rc[r] && !l->rc[r]->error) pass = tr->runs.v[r].v[k];
      int below[CAP], nl = 0, bj, bd;
      bool low_ok = true;
      for (int q = 0; q < nb; q++)
        if (list[big[q]][k] <= pass) below[nl++] = big[q], low_ok &= s[big[q]].ok;
      if (pass > v0[k] && low_ok && choose(l, list, s, below, nl, choice, &bj, &bd)) { /* works somewhere above the example */
        narrow(&p, k, pass, list[bad][k], true, choice, NULL);
        continue;
      }
    }
    char why[sizeof p.why];
    shapes at;
    infer_at(&p, list[bad], -1, 0, 0, &at);
    snprintf(why, sizeof why, "%s", p.why);
    if (!at.ok) ok = refuse(&p, list[bad], why, -1, 0, 0, -1);
    else ok = refuse(&p, list[bad], why, bad_j < 0 ? 0 : bad_j, bad_d, at.shape[bad_j < 0 ? 0 : bad_j][bad_d], best);
    break;
  }
  if (p.fake != small) free(p.fake);
  if (p.fake_in != small_in) free(p.fake_in);
  return ok && om__state()->trace == tr;
}
