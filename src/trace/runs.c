/* The runs at other sizes (docs/symbolic-axes.md, "How the tracer sees sizes"). A model takes
 * sizes from shapes as plain integers (x.shape[1] - 1), so one run cannot tell a size it
 * computed from a literal. om_trace_run therefore runs the model first at other assignments of
 * the symbols, in a shape-only mode: the inputs are phantoms (shapes without data), a call on a
 * phantom runs only infer (and a view's strides), and every call is logged with its integer
 * arguments, the values it reads (which call made each) and its output shapes. A base run does
 * the same at the example's sizes. From the values each run's outputs read, a run knows its
 * *live* calls; calls nothing reads (the pieces of a split that the model drops, the more of
 * them at a longer sequence) are left out. Then it runs the model on the inputs, recording:
 * each live call is found in every other run as the same live call (the same op on the same
 * values, else the model's control flow depends on a size) and lowered with what they saw
 * (fit.c writes an argument that moves with the sizes as the expression it is); a dead call is
 * computed and not recorded. Constants are computed in every run, so what user code reads of
 * them is the same; the random generator restarts at the same place for every run. A run at a
 * size below the example where the model fails or takes another path narrows the symbol's
 * range instead (sizes 1 and 2 are where models end: a conv needs its kernel, a squeeze drops
 * an axis of 1); above the example that is a refusal. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace/trace.h"

#define OM_RUNS 6 /* runs at other sizes: with the record run, 7 sizes of each symbol */
#define OM_MORE 16 /* the runs the record run may ask for: a symbol at 16 more consecutive sizes */
#define OM_FAR_ALONE 4 /* far runs that move one symbol each (far_sizes) */

/* ---- sizes ---- */

void om__run_example(const om_trace *tr, int64_t *v) {
  for (int k = 0; k < tr->symbols.n; k++) v[k] = tr->symbols.v[k].size / tr->symbols.v[k].multiple;
}

const char *om__run_sizes(const om_trace *tr, const int64_t *v, uint64_t mask, char *buf, size_t cap) {
  size_t n = 0;
  buf[0] = '\0';
  for (int k = 0; k < tr->symbols.n && n < cap; k++)
    if (mask >> k & 1)
      n += (size_t)snprintf(buf + n, cap - n, "%s%s=%lld", n ? ", " : "", tr->symbols.v[k].name,
                            (long long)(v[k] * tr->symbols.v[k].multiple));
  return buf;
}

/* The model's fixed sizes the runs' sizes avoid (the inputs' fixed axes, the parameters'
 * axes), so that no symbol takes a size the model has anyway. */
bool om__run_fixed_size(const om_trace *tr, int64_t s) {
  const om_graph *g = &tr->g;
  for (int k = 0; k < g->inputs.n; k++) {
    const om_gvalue *v = &g->values.v[g->inputs.v[k]];
    for (int d = 0; d < v->ndim; d++)
      if (v->ext[d] < 0 && v->shape[d] == s) return true;
  }
  for (int k = 0; k < tr->params.n; k++)
    for (int d = 0; d < tr->params.v[k].view->ndim; d++)
      if (tr->params.v[k].view->shape[d] == s) return true;
  return false;
}

/* The variable a symbol of example variable v0 takes in a run of this kind: near sizes
 * (consecutive ones show a floor division every residue), far ones (a size read off a deep
 * layer may move only there: floor((L + 2) / 9) + 1 is 2 from 7 to 15), and the smallest (where
 * models end). */
enum { FAR_2 = 0, NEAR_1 = 1, SMALL = 2, NEAR_2 = 3, FAR_3 = 4, NEAR_3 = 5 }; /* in turn: a small one never next to a far one */

static int64_t kind_size(const om_symbol *s, int64_t v0, int kind) {
  switch (kind) {
    case FAR_2: return 2 * v0 + 1;
    case NEAR_1: return v0 + 1;
    case SMALL: return s->vmin + 1 < v0 ? s->vmin : v0 + 4;
    case NEAR_2: return v0 + 2;
    case FAR_3: return 3 * v0 + 2;
    default: return v0 + 3;
  }
}

/* The variables of run r (1-based) of OM_RUNS: each symbol takes the kinds of size in turn, the
 * symbols in different orders (symbol k's kind in run r is (r - 1 + k) mod OM_RUNS, a far one
 * near instead in the run where another is small), so that no two symbols move alike and each
 * moves in every run. A size that is one of the model's fixed
 * sizes, another symbol's example size or one a symbol before it took in this run moves on
 * (up; down for the smallest), within the symbol's range. */
static void run_sizes(const om_trace *tr, int r, int64_t *v) {
  int64_t v0[64];
  om__run_example(tr, v0);
  bool small = false; /* a run where a symbol is small has the others near, so an end there is the small one's */
  for (int k = 0; k < tr->symbols.n; k++) small |= (r - 1 + k) % OM_RUNS == SMALL && kind_size(&tr->symbols.v[k], v0[k], SMALL) < v0[k];
  for (int k = 0; k < tr->symbols.n; k++) {
    const om_symbol *s = &tr->symbols.v[k];
    int kind = (r - 1 + k) % OM_RUNS;
    if (small && (kind == FAR_2 || kind == FAR_3)) kind = kind == FAR_2 ? NEAR_1 : NEAR_3;
    int64_t want = kind_size(s, v0[k], kind);
    if (want > s->vmax) want = s->vmax - (r - 1) % 4;
    v[k] = v0[k]; /* a symbol with no other size (min = max) stays */
    for (int dir = 1, found = 0; dir >= -1 && !found; dir -= 2)
      for (int64_t x = dir > 0 ? want : want - 1, tries = 0; tries < 64 && x >= s->vmin && x <= s->vmax; x += dir, tries++) {
        bool clash = x == v0[k] || om__run_fixed_size(tr, x * s->multiple);
        for (int j = 0; j < tr->symbols.n && !clash; j++)
          clash = (j != k && tr->symbols.v[j].size == x * s->multiple) || (j < k && v[j] * tr->symbols.v[j].multiple == x * s->multiple);
        if (!clash) {
          v[k] = x, found = 1;
          break;
        }
      }
  }
}

/* The variables of a run of those the record run asked for (om__run_more): symbol k alone at its
 * i-th size of v0 + 4, v0 - 1, v0 + 5, v0 - 2, ... (up and down in turn, within its range as the
 * record run narrowed it: a table of 13 positions leaves 13 sizes; up past the model's fixed
 * sizes, and past the other symbols' examples; v0 + 1 to v0 + 3 are runs already), the others at their
 * examples, so that with those a floor division by up to 16 sees every residue, and a size the
 * model computes otherwise below the example (Math.min(T - 1, 3)) is seen there; a range of at
 * most 17 sizes is tried whole (there the fits are exact). false when k has no such size. */
static bool more_sizes(const om_trace *tr, int k, int i, int64_t *v) {
  om__run_example(tr, v);
  const om_symbol *s = &tr->symbols.v[k];
  int64_t v0 = v[k], seen = 0, up = v0 + 4, down = v0 - 1;
  bool all = s->vmax - s->vmin <= OM_MORE; /* a range this small is tried at every size, fixed ones too */
  if (all) up = v0 + 1;
  for (bool turn_up = true;; turn_up = !turn_up) {
    bool can_up = up <= s->vmax && up < v0 + 4 + 4 * OM_MORE, can_down = down >= s->vmin;
    if (!can_up && !can_down) return false;
    bool going_up = (turn_up && can_up) || !can_down;
    int64_t x = going_up ? up++ : down--;
    /* below the example a fixed size is taken too: that is where a size the model caps kinks
     * (Math.min(3, B) beside a fixed axis of 2 is seen at B = 1 and 2), and the first runs
     * already told the model's fixed sizes from the symbol */
    bool clash = !all && going_up && om__run_fixed_size(tr, x * s->multiple);
    for (int j = 0; j < tr->symbols.n && !clash && !all; j++) clash = j != k && tr->symbols.v[j].size == x * s->multiple;
    if (!clash && seen++ == i) {
      v[k] = x;
      return true;
    }
  }
}

/* The variables of far run i (after the OM_RUNS above): every symbol at 8 v0 + 5, then each of
 * the first OM_FAR_ALONE alone at 64 v0 + 13, within its range and past the model's fixed sizes,
 * so that a size the model computes with a period shows it to fit.c (a window's padding
 * (w - T % w) % w is w - T up to w, Math.floor(T / 23) is 0 below 23). false when the run would
 * move no symbol. */
static bool far_sizes(const om_trace *tr, int i, int64_t *v) {
  om__run_example(tr, v);
  bool moved = false;
  for (int k = 0; k < tr->symbols.n; k++) {
    const om_symbol *s = &tr->symbols.v[k];
    if (i > 0 && k != i - 1) continue;
    int64_t x = i ? 64 * v[k] + 13 : 8 * v[k] + 5 + 2 * k;
    while (x <= s->vmax && om__run_fixed_size(tr, x * s->multiple)) x++;
    if (x > s->vmax) x = s->vmax;
    moved |= x != v[k];
    v[k] = x;
  }
  return moved;
}

/* Whether the run's sizes are inside the symbols' ranges (narrowed as the record run goes). */
static bool inside(const om_trace *tr, const om_run *run) {
  for (int k = 0; k < tr->symbols.n; k++)
    if (run->v[k] < tr->symbols.v[k].vmin || run->v[k] > tr->symbols.v[k].vmax) return false;
  return true;
}

/* Whether the run has a symbol below its example size. */
static bool is_small(const om_trace *tr, const om_run *run) {
  int64_t v0[64];
  om__run_example(tr, v0);
  for (int k = 0; k < tr->symbols.n; k++)
    if (run->v[k] < v0[k]) return true;
  return false;
}

/* ---- the log ---- */

static void run_free(om_run *run);

/* Gives run (its variables set) the log of the spare run at its sizes, when there is one: what
 * the model did at some sizes is the same whatever the ranges the trace began again with (a run
 * outside them is left out where the runs are read), so only the runs at sizes new to the trace
 * are made again, not the far ones (whose large constants cost as much as an eager forward at
 * those sizes) nor the near ones above a raised minimum. false when there is none. */
static bool spare_take(om_trace *tr, om_run *run) {
  for (int q = 0; q < tr->spare.n; q++) {
    om_run *s = &tr->spare.v[q];
    bool same = true;
    for (int k = 0; k < tr->symbols.n && same; k++) same = s->v[k] == run->v[k] * tr->symbols.v[k].multiple;
    if (!same) continue;
    memcpy(s->v, run->v, sizeof s->v);
    *run = *s;
    run->dropped = run->looped = false; /* what the record run made of it is made again */
    *s = tr->spare.v[--tr->spare.n];
    return true;
  }
  return false;
}

static bool push(om_run *run, int64_t x) {
  int64_t *slot = OM_VEC_PUSH_SLOT(run->pool);
  if (!slot) return false;
  *slot = x;
  return true;
}

void om__runcall_attrs(const om_run *run, const om_runcall *rc, om_attrs *a) {
  const int64_t *p = run->pool.v + rc->at;
  *a = (om_attrs){.n_i = (int)p[0]};
  memcpy(a->i, p + 1, sizeof(int64_t) * (size_t)a->n_i);
  p += 1 + a->n_i;
  a->n_f = (int)p[0];
  memcpy(a->f, p + 1, sizeof(double) * (size_t)a->n_f);
}

bool om__runcall_output(const om_run *run, const om_runcall *rc, int j, int *ndim, int64_t *shape) {
  if (rc->out < 0) return false;
  const int64_t *p = run->pool.v + rc->out;
  if (j >= p[0]) return false;
  p++;
  for (int k = 0; k < j; k++) p += 1 + p[0];
  *ndim = (int)p[0];
  memcpy(shape, p + 1, sizeof(int64_t) * (size_t)*ndim);
  return true;
}

bool om__slice_end(int op, const om_attrs *a, int nd, const int64_t *out, int64_t *end) {
  if (op != OM_OP_slice || a->n_i != 4 || a->i[3] != 1 || a->i[1] < 0) return false;
  int64_t d = a->i[0] < 0 ? a->i[0] + nd : a->i[0];
  if (d < 0 || d >= nd) return false;
  *end = a->i[1] + out[d]; /* a start past the axis leaves it empty: its end is then past it too, as eager's */
  return true;
}

bool om__run_by_liveness(const om_trace *tr, const om_run *run) { return run->n_outputs >= 0 && tr->base.n_outputs >= 0; }

/* Where tensor t comes from in the run going on: kind 0 and its origin (a call's output, a model
 * input) when the run made it, else kind 1 and its address (a parameter, a constant made before
 * the trace: the same tensor in every run). */
static void origin_of(const om_trace *tr, const om_tensor *t, int64_t *kind, int64_t *value) {
  bool ours = t->trace_run && t->trace_run == tr->serial;
  *kind = ours ? 0 : 1;
  *value = ours ? t->trace_origin : (int64_t)(uintptr_t)t;
}

static bool push_origins(om_run *run, const om_trace *tr, om_tensor *const *t, int n) {
  bool ok = push(run, n);
  for (int i = 0; ok && i < n; i++) {
    int64_t kind, value;
    origin_of(tr, t[i], &kind, &value);
    ok = push(run, kind) && push(run, value);
  }
  return ok;
}

/* The name of logged kind op, for messages. */
static const char *kind_name(int op) {
  static const char *const created[] = {"full", "arange", "a random tensor", "from_data", "linspace"};
  _Static_assert(sizeof created / sizeof *created == OM_CREATED_LINSPACE + 1, "a name for every om_created kind");
  return op < OM_OP_COUNT ? om_op_name(op) : created[op - OM_OP_COUNT];
}

/* first[c]: the first call of the run that reads an output of call c (INT64_MAX: only the
 * run's outputs; -1: nothing). NULL on OutOfMemory. */
static int64_t *first_readers(const om_run *run) {
  int64_t *first = malloc(sizeof *first * ((size_t)run->calls.n + 1));
  if (!first) return NULL;
  for (int64_t c = 0; c < run->calls.n; c++) first[c] = -1;
  for (int64_t k = run->calls.n - 1; k >= 0; k--) {
    const int64_t *in = run->pool.v + run->calls.v[k].in;
    for (int i = 0; i < in[0]; i++)
      if (!in[1 + 2 * i] && in[2 + 2 * i] >= 0) first[in[2 + 2 * i] / OM_MAX_OUTPUTS] = k;
  }
  if (run->out >= 0) {
    const int64_t *o = run->pool.v + run->out;
    for (int j = 0; j < o[0]; j++)
      if (!o[1 + 2 * j] && o[2 + 2 * j] >= 0 && first[o[2 + 2 * j] / OM_MAX_OUTPUTS] < 0) first[o[2 + 2 * j] / OM_MAX_OUTPUTS] = INT64_MAX;
  }
  return first;
}

/* For a run that failed: how many of its first calls are the base run's, call by call: the same
 * op on the same values, whose outputs the same call reads first (a split's pieces are more at a
 * larger size, and the piece the model takes is another call there: where that begins, the calls
 * are no longer the same). A call the base run reads first past the run's end must have no
 * reader in the run. -1 on OutOfMemory. */
static int64_t common_prefix(const om_trace *tr, const om_run *run) {
  const om_run *base = &tr->base;
  int64_t *fa = first_readers(run), *fb = fa ? first_readers(base) : NULL, n = 0;
  if (!fb) return free(fa), -1;
  for (; n < run->calls.n && n < base->calls.n; n++) {
    const om_runcall *a = &run->calls.v[n], *b = &base->calls.v[n];
    const int64_t *ia = run->pool.v + a->in, *ib = base->pool.v + b->in;
    bool same = a->op == b->op && ia[0] == ib[0];
    for (int i = 0; same && i < 2 * ia[0]; i++) same = ia[1 + i] == ib[1 + i];
    if (same && !a->error) same = fb[n] < run->calls.n ? fa[n] == fb[n] : fa[n] < 0;
    if (!same) break;
  }
  free(fa);
  free(fb);
  return n;
}

/* Which calls of a run that returned outs (n) are live, from the last call back: those whose
 * outputs the outputs or a live call read. Logs the outputs' origins. false on OutOfMemory. */
static bool liveness(om_trace *tr, om_run *run, om_tensor *const *outs, int n) {
  run->out = run->pool.n;
  if (!push_origins(run, tr, outs, n)) return false;
  for (int64_t c = 0; c < run->calls.n; c++) run->calls.v[c].rank = -1;
  const int64_t *o = run->pool.v + run->out;
  for (int j = 0; j < n; j++)
    if (!o[1 + 2 * j] && o[2 + 2 * j] >= 0) run->calls.v[o[2 + 2 * j] / OM_MAX_OUTPUTS].rank = 0;
  for (int64_t c = run->calls.n - 1; c >= 0; c--) {
    if (run->calls.v[c].rank < 0) continue;
    const int64_t *in = run->pool.v + run->calls.v[c].in;
    for (int i = 0; i < in[0]; i++)
      if (!in[1 + 2 * i] && in[2 + 2 * i] >= 0) run->calls.v[in[2 + 2 * i] / OM_MAX_OUTPUTS].rank = 0;
  }
  run->live.n = 0;
  for (int64_t c = 0; c < run->calls.n; c++) {
    if (run->calls.v[c].rank < 0) continue;
    int *slot = OM_VEC_PUSH_SLOT(run->live);
    if (!slot) return false;
    run->calls.v[c].rank = run->live.n - 1;
    *slot = (int)c;
  }
  return true;
}

/* The call that made a logged origin (kind 0, value >= 0) in run's terms: its rank among the live
 * calls when matched by liveness, else its index; with the output. -1 for another origin. */
static int64_t maker(const om_trace *tr, const om_run *run, int64_t kind, int64_t value, int *j) {
  if (kind || value < 0) return -1;
  *j = (int)(value % OM_MAX_OUTPUTS);
  int64_t c = value / OM_MAX_OUTPUTS;
  return om__run_by_liveness(tr, run) ? run->calls.v[c].rank : c;
}

/* Whether values a (the record run's, at base's terms) and b (run's) are the same value: the same
 * model input or outside tensor, or the same output of the same call. */
static bool same_origin(const om_trace *tr, const om_run *run, int64_t ka, int64_t va, int64_t kb, int64_t vb) {
  if (ka != kb) return false;
  if (ka || va < 0 || vb < 0) return va == vb;
  int ja = 0, jb = 0;
  int64_t a = maker(tr, &tr->base, ka, va, &ja), b = maker(tr, run, kb, vb, &jb);
  if (!om__run_by_liveness(tr, run)) a = va / OM_MAX_OUTPUTS; /* matched by index: the record run's own index */
  return a == b && ja == jb;
}

/* A run at a size below the example that fails or parts from the record run narrows each
 * symbol it has below its example to the sizes above, and is not used further; why says where. */
static void drop_small(om_trace *tr, om_run *run, const char *why, const om_site *site) {
  int64_t v0[64];
  om__run_example(tr, v0);
  run->dropped = true;
  for (int k = 0; k < tr->symbols.n; k++) {
    om_symbol *s = &tr->symbols.v[k];
    if (run->v[k] < v0[k] && s->vmin <= run->v[k]) {
      s->vmin = run->v[k] + 1;
      s->min = s->vmin * s->multiple;
      s->min_why = why, s->min_site = site;
    }
  }
}

/* A run below the example that the graph would not follow (why: where and how) is dropped and
 * narrows the symbols it has below the example (drop_small); where the model returned there (it
 * gives an answer, which the graph would not), the trace is refused when the record run ends
 * (om__run_answers), with the declaration of the ranges: a range narrows only where the model
 * fails. Runs above the example that part from it refuse at once (control flow), first. */
static void below(om_trace *tr, om_run *run, const char *why, const om_site *site) {
  if (run->n_outputs >= 0) om__run_answers(tr, why, run->v, site);
  drop_small(tr, run, why, site);
}

const om_site *om__run_site(om_trace *tr, const int64_t *v, int64_t call) {
  om_site *site = call >= 0 ? om__arena_alloc(&tr->g.arena, sizeof *site) : NULL;
  if (!site) return NULL;
  site->call = call;
  if (v) memcpy(site->v, v, sizeof site->v);
  else om__run_example(tr, site->v);
  return site;
}

void om__run_answers(om_trace *tr, const char *why, const int64_t *v, const om_site *site) {
  int64_t v0[64];
  uint64_t below = 0;
  om__run_example(tr, v0);
  for (int k = 0; k < tr->symbols.n; k++)
    if (v[k] < v0[k]) below |= (uint64_t)1 << k;
  tr->answers_syms = tr->answers ? tr->answers_syms & below : below;
  tr->answers_any = tr->answers ? tr->answers_any | below : below;
  if (tr->answers) return;
  tr->answers = why, tr->answers_site = site;
  memcpy(tr->answers_v, v, sizeof(int64_t) * (size_t)tr->symbols.n);
}

/* Appends to buf (n of cap used) the declaration of symbol s from min to max (INT64_MAX: no
 * maximum), after a comma when n: "om.Dim('seq', { min: 1, max: 32 })" (multipleOf first when
 * the symbol has one). Returns the new length (snprintf's: at least cap when cut). */
static size_t dim_declaration(char *buf, size_t cap, size_t n, const om_symbol *s, int64_t min, int64_t max) {
  if (n < cap) n += (size_t)snprintf(buf + n, cap - n, "%som.Dim('%s', { ", n ? ", " : "", s->name);
  if (n < cap && s->multiple > 1) n += (size_t)snprintf(buf + n, cap - n, "multipleOf: %lld, ", (long long)s->multiple);
  if (n < cap) n += (size_t)snprintf(buf + n, cap - n, "min: %lld", (long long)min);
  if (n < cap && max != INT64_MAX) n += (size_t)snprintf(buf + n, cap - n, ", max: %lld", (long long)max);
  if (n < cap) n += (size_t)snprintf(buf + n, cap - n, " })");
  return n;
}

/* The multiple m (2 to 8) of symbol k's size that separates the runs: every run that returned
 * (at least three at other sizes, and the example) has k at a multiple of m, failing run r does
 * not; 0 when none does. */
static int64_t separating_multiple(const om_trace *tr, const om_run *run, int k) {
  const om_symbol *s = &tr->symbols.v[k];
  for (int64_t m = 2; m <= 8; m++) {
    if (s->multiple % m == 0 || (run->v[k] * s->multiple) % m == 0 || s->size % m) continue;
    int witnesses = 0; /* runs that returned at multiples: three at least, so it is no coincidence */
    bool all = true;
    for (int q = 0; q < tr->runs.n && all; q++) {
      const om_run *o = &tr->runs.v[q];
      if (o->n_outputs < 0 || o->dropped) continue;
      all = (o->v[k] * s->multiple) % m == 0;
      witnesses += o->v[k] != tr->symbols.v[k].size / s->multiple;
    }
    if (all && witnesses >= 3) return m;
  }
  return 0;
}

const char *om__run_hint(const om_trace *tr, int r, char *buf, size_t cap) {
  const om_run *run = &tr->runs.v[r];
  size_t n = 0;
  buf[0] = '\0';
  for (int pass = 0; pass < 2; pass++)
    for (int k = 0, first = 1; k < tr->symbols.n && n < cap; k++) {
      int64_t m = separating_multiple(tr, run, k);
      if (!m) continue;
      const char *name = tr->symbols.v[k].name;
      long long mm = (long long)(m * tr->symbols.v[k].multiple);
      if (first) n += (size_t)snprintf(buf + n, cap - n, pass ? ": declare " : "; it holds when ");
      n += pass ? (size_t)snprintf(buf + n, cap - n, "%som.Dim('%s', { multipleOf: %lld })", first ? "" : ", ", name, mm)
                : (size_t)snprintf(buf + n, cap - n, first ? "'%s' is a multiple of %lld" : " and '%s' a multiple of %lld", name, mm);
      first = 0;
    }
  if (n && n < cap) snprintf(buf + n, cap - n, " (om_trace_dim in C) and trace with example sizes that are");
  return buf;
}

bool om__run_failed(om_trace *tr, int r, const char *why, int64_t index) {
  om_run *run = &tr->runs.v[r];
  if (run->far) return run->dropped = true; /* far past any size the model was seen to work at: no range to narrow to */
  for (int k = 0; k < tr->symbols.n; k++) /* it fails at sizes that are not multiples: declare them (om__run_hint) */
    if (separating_multiple(tr, run, k)) return false;
  const om_site *site = om__run_site(tr, NULL, index);
  if (is_small(tr, run)) {
    drop_small(tr, run, why, site);
    return true;
  }
  int64_t v0[64], cap[64];
  om__run_example(tr, v0);
  bool any = false;
  for (int k = 0; k < tr->symbols.n; k++) {
    cap[k] = -1;
    if (run->v[k] <= v0[k]) continue;
    bool witness = false;
    int64_t below = v0[k];
    for (int q = 0; q < tr->runs.n && !witness; q++) {
      const om_run *o = &tr->runs.v[q];
      if (o->n_outputs < 0 || o->dropped) continue;
      if (o->v[k] >= run->v[k]) witness = true;
      else if (o->v[k] > below) below = o->v[k];
    }
    if (witness) continue;
    if (below == v0[k]) return false; /* no size above the example is known to work */
    cap[k] = below, any = true;
  }
  if (!any) return false;
  for (int k = 0; k < tr->symbols.n; k++) {
    om_symbol *s = &tr->symbols.v[k];
    if (cap[k] < 0 || s->vmax <= cap[k]) continue;
    s->vmax = cap[k];
    s->max = cap[k] * s->multiple;
    s->max_why = s->runs_max_why = why, s->max_site = site;
  }
  run->dropped = true;
  return true;
}

/* The runs and rounds of the fits' budget: all but the edges' (om__run_more_edge). */
static int fit_runs(const om_trace *tr) { return tr->runs.n - tr->edge_runs; }
static int fit_rounds(const om_trace *tr) { return tr->rounds - tr->edge_rounds; }

bool om__run_more(om_trace *tr, uint64_t syms) {
  uint64_t want = syms & ~tr->extended, two = 0; /* each symbol moves through more sizes once */
  for (int k = 0; k < tr->symbols.n && __builtin_popcountll(two) < 2; k++)
    if (want >> k & 1) two |= (uint64_t)1 << k;
  if (!two || tr->phase != OM_PHASE_RECORD || fit_runs(tr) + OM_MORE > OM_RUNS_FIT || fit_rounds(tr) >= OM_ROUNDS_FIT) return false;
  tr->more = true;
  tr->extended |= two;
  tr->more_syms = two;
  om__fail(OM_ERR_TRACE_INVALID_USAGE, "trace_run: the model is run at more sizes first (this is not an error of the model)");
  return true;
}

/* A run at v asked for by a fit (edge false) or for a float product's edge, each within its own
 * budget: the runs made and asked for of its kind, and the rounds (a round of the fits' and the
 * edges' runs together counts as the fits'). */
static bool more_at(om_trace *tr, const int64_t *v, bool edge) {
  int asked = 0;
  for (int q = 0; q < tr->more_at_n; q++) asked += tr->more_at_edge[q] == edge;
  bool room = edge ? tr->edge_runs + asked < OM_RUNS_EDGE && tr->edge_rounds < OM_ROUNDS_EDGE
                   : fit_runs(tr) + asked < OM_RUNS_FIT && fit_rounds(tr) < OM_ROUNDS_FIT;
  if (tr->phase != OM_PHASE_RECORD || !room) return false;
  for (int k = 0; k < tr->symbols.n; k++)
    if (v[k] < tr->symbols.v[k].vmin || v[k] > tr->symbols.v[k].vmax) return false;
  for (int r = 0; r < tr->runs.n; r++)
    if (!memcmp(tr->runs.v[r].v, v, sizeof(int64_t) * (size_t)tr->symbols.n)) return false;
  for (int q = 0; q < tr->more_at_n; q++)
    if (!memcmp(tr->more_at[q], v, sizeof(int64_t) * (size_t)tr->symbols.n)) return true;
  if (tr->more_at_n == OM_AT_MAX) return false;
  tr->more_at_edge[tr->more_at_n] = edge;
  memcpy(tr->more_at[tr->more_at_n++], v, sizeof tr->more_at[0]);
  tr->more = true;
  om__fail(OM_ERR_TRACE_INVALID_USAGE, "trace_run: the model is run at more sizes first (this is not an error of the model)");
  return true;
}

bool om__run_more_at(om_trace *tr, const int64_t *v) { return more_at(tr, v, false); }

bool om__run_more_edge(om_trace *tr, const int64_t *v) { return more_at(tr, v, true); }

bool om__run_small(const om_trace *tr, int r) { return is_small(tr, &tr->runs.v[r]); }

#define OM_NARROWINGS 4 /* how often a trace begins again with ranges narrowed where the model fails */

bool om__run_fails_at(om_trace *tr, const int64_t *v, int64_t index, const char *why, const char *fmt, ...) {
  char msg[sizeof om__state()->err_msg];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (tr->phase != OM_PHASE_RECORD || tr->base.n_outputs < 0 || tr->narrowings >= OM_NARROWINGS || tr->fail_msg)
    return om__trace_fail(OM_ERR_TRACE_SYMBOLIC_SHAPE, "%s", msg);
  if (!(tr->fail_msg = om__arena_strdup(&tr->g.arena, msg))) return om__trace_fail(OM_ERR_OUT_OF_MEMORY, "trace_run: out of memory");
  tr->fail_why = why;
  tr->fail_site = om__run_site(tr, v, index);
  memcpy(tr->fail_at, v, sizeof tr->fail_at);
  tr->more = true; /* the record run unwinds */
  return om__fail(OM_ERR_TRACE_INVALID_USAGE, "trace_run: the model is run at more sizes first (this is not an error of the model)");
}

static bool part_paths(om_trace *tr, bool small);

bool om__run_narrowed_again(om_trace *tr) {
  if (tr->phase != OM_PHASE_RECORD || tr->again || tr->more || tr->narrowings >= OM_NARROWINGS || !tr->again_from)
    return false;
  /* the runs below the example that take another path further on (Hugging Face Swin's unshifted
   * window, whose layer pad is another function of the width, before the roll it leaves out)
   * part now: they narrow the range (below) */
  part_paths(tr, true);
  if (!tr->answers) return false;
  bool narrowed = false; /* since the record run began: else the same runs again, for nothing */
  for (int k = 0; k < tr->symbols.n; k++)
    narrowed |= tr->symbols.v[k].vmin > tr->again_from[k].vmin || tr->symbols.v[k].vmax < tr->again_from[k].vmax;
  if (!narrowed) return false;
  tr->again = tr->more = true;
  om__fail(OM_ERR_TRACE_INVALID_USAGE, "trace_run: the model is run at more sizes first (this is not an error of the model)");
  return true;
}

void om__run_far_parted(om_trace *tr, const char *why, int64_t index) {
  if (tr->far_parted) return;
  tr->far_parted = why;
  tr->far_site = om__run_site(tr, NULL, index);
}

bool om__run_drop(om_trace *tr, int r, const char *why) {
  if (!is_small(tr, &tr->runs.v[r])) return false;
  below(tr, &tr->runs.v[r], why, om__run_site(tr, NULL, tr->calls - 1));
  return true;
}

/* The model parts from run r at record call index (what: the message after "the model takes
 * another path at other sizes: at <sizes> it "; who: the call): below the example the run is
 * dropped and narrows the range (below); above it, near or far, the run is dropped too and left
 * to the range check (check_whole_range), which finds the exact threshold and the declaration
 * that holds (a branch on T > 6 traced at T = 5 parts at the near run T = 6): the trace is
 * refused there, or with this message at the end when that check does not. true: the record
 * run goes on. */
static bool parts(om_trace *tr, int r, const char *who, int64_t index, const char *fmt, ...) {
  om_run *run = &tr->runs.v[r];
  char what[320], sizes[160];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  om__run_sizes(tr, run->v, ~(uint64_t)0, sizes, sizeof sizes);
  if (is_small(tr, run)) {
    below(tr, run, om__arena_printf(&tr->g.arena, "%s (call %lld): at %s the model %s", who, (long long)index + 1, sizes, what),
          om__run_site(tr, NULL, index));
    return true;
  }
  run->dropped = true;
  om__run_far_parted(tr, om__arena_printf(&tr->g.arena, "%s: the model takes another path at other sizes: at %s it %s; "
                                          "control flow that depends on a size cannot be written in the graph", who, sizes, what),
                     index);
  return true;
}

/* The op of run's live call at rank. */
static int live_op(const om_run *run, int rank) { return run->calls.v[run->live.v[rank]].op; }

/* Whether run's live calls from rank j on repeat the len before them, which repeat the len before
 * those (a block seen at least twice, as a loop's body over a size is in the base run too). */
static bool repeats_at(const om_run *run, int j, int len) {
  if (2 * len > j || j + len > run->live.n) return false;
  for (int i = j - len; i < j + len; i++)
    if (live_op(run, i) != live_op(run, i - len)) return false;
  return true;
}

/* Whether run's live calls are the base run's with whole repeats of blocks inserted, from rank p
 * where they first differ on (a loop over the size making more steps there, and the steps stacked
 * after it one more unsqueeze each: Mamba's scan): at each place where the two differ, the run
 * repeats a block that came at least twice right before (the shortest such), and after all of
 * them the two end alike. A size threshold (BigBird's attention type, a window's padding) calls
 * other ops there, and is not such a run. */
static bool by_repeats(const om_trace *tr, const om_run *run, int p) {
  const om_run *base = &tr->base;
  int i = p, j = p;
  while (j < run->live.n) {
    if (i < base->live.n && live_op(run, j) == live_op(base, i)) {
      i++, j++;
      continue;
    }
    int len = 1;
    while (2 * len <= j && !repeats_at(run, j, len)) len++;
    if (2 * len > j) return false;
    j += len;
  }
  return i == base->live.n && j > p;
}

int64_t om__run_loop_end(const om_trace *tr, int k) {
  int64_t end = tr->symbols.v[k].vmax, v0[64];
  om__run_example(tr, v0);
  /* the runs move several symbols at once: k is the loop's when every run that took its more
   * steps has k above the example, and no run above the example with k moved took the record
   * run's path (the batch moved alone makes no more calls) */
  for (int r = 0; r < tr->runs.n; r++) {
    const om_run *run = &tr->runs.v[r];
    bool above = run->v[k] > v0[k];
    if (run->looped && !above) return tr->symbols.v[k].vmax;
    if (!run->looped && above && !run->dropped && run->n_outputs >= 0 && !is_small(tr, run)) return tr->symbols.v[k].vmax;
    if (run->looped && run->v[k] - 1 < end) end = run->v[k] - 1;
  }
  return end;
}

/* Before the record run: each run above the example whose live calls are other ops than the
 * base run's (the model takes another path there: `T > 50 ? x.mul(2) : x.add(1)` at T = 69)
 * parts at the first such call now, not at the record run's first call that merely reads other
 * values there (the scalar made for mul's 2 against the one for add's 1), which would refuse
 * that value as one the sizes compute. Runs below the example are left to the record run (where
 * they part, they narrow the range as they always did); with small, they are the ones parted
 * (om__run_narrowed_again, where a fit their values confused comes before the call where they
 * part). false when refused. */
static bool part_paths(om_trace *tr, bool small) {
  const om_run *base = &tr->base;
  if (base->n_outputs < 0) return true;
  for (int r = 0; r < tr->runs.n; r++) {
    om_run *run = &tr->runs.v[r];
    if (run->dropped || !inside(tr, run) || !om__run_by_liveness(tr, run) || is_small(tr, run) != small) continue;
    for (int rank = 0; rank < base->live.n; rank++) {
      int64_t index = base->live.v[rank];
      int op = base->calls.v[index].op;
      if (rank >= run->live.n) {
        if (!parts(tr, r, kind_name(op), index, "returns after %d calls its outputs need, here it goes on (call %lld)",
                   run->live.n, (long long)index + 1))
          return false;
        break;
      }
      int other = run->calls.v[run->live.v[rank]].op;
      if (other != op) {
        run->looped = by_repeats(tr, run, rank);
        if (!parts(tr, r, kind_name(op), index, "calls %s here (call %lld)", kind_name(other), (long long)index + 1)) return false;
        break;
      }
    }
  }
  return true;
}

/* Whether the record run's call (index, in: its tensors) reads the values its partner p in run
 * r reads. */
static bool same_inputs(om_trace *tr, const om_run *run, const om_runcall *p, om_tensor *const *in, int n_in, int *which) {
  const int64_t *b = run->pool.v + p->in;
  if (b[0] != n_in) return *which = -1, false;
  for (int i = 0; i < n_in; i++) {
    int64_t kind, value;
    origin_of(tr, in[i], &kind, &value);
    if (!same_origin(tr, run, kind, value, b[1 + 2 * i], b[2 + 2 * i])) return *which = i, false;
  }
  return true;
}

/* Run r failed at the record run's call index (error: how): the range narrows past it
 * (om__run_failed), else SymbolicShape. false when refused. */
static bool failed_here(om_trace *tr, int r, int op, int64_t index, const char *error) {
  char sizes[160], hint[400];
  om__run_sizes(tr, tr->runs.v[r].v, ~(uint64_t)0, sizes, sizeof sizes);
  const char *why = om__arena_printf(&tr->g.arena, "%s (call %lld): at %s the model fails (%s)", kind_name(op),
                                     (long long)index + 1, sizes, error);
  if (om__run_failed(tr, r, why, index)) return true;
  return om__run_fails_at(tr, tr->runs.v[r].v, index, why, "%s: at %s the model fails here (%s), so the graph would only "
                          "hold at the traced sizes%s", kind_name(op), sizes, error, om__run_hint(tr, r, hint, sizeof hint));
}

/* A run of the range check stops after this many calls plus 64 for each call of the base run:
 * a split of a flattened 4 * H * H into pieces of 185 is 23 million pieces at H = 32768, each
 * one a call, which would take hours shape only; where a run stops, the line of sizes ends at
 * the last size checked (traced.symbols[k].checked says where). */
#define OM_RANGE_CALLS 65536

/* The model's call (op, index) reads a tensor that its run with serial made and the model kept
 * (module state it changed there: a table of positions cached to a size and made again, larger,
 * at a longer sequence): every run after that one sees the model as it left it, so no run says
 * where it begins to do that, and the record run would write a phantom of that run. Refused
 * here (SymbolicShape, -2), with the declaration that keeps each symbol below the sizes of that
 * run, at the largest size an earlier run took, where the model still had its state; where no run
 * before it is larger (a cache keyed by a size, filled by the traced run and read by a run at another
 * size with the same key), no maximum avoids it and the message says how the model can. */
static int64_t kept_from_run(om_trace *tr, int op, int64_t index, uint32_t serial) {
  const om_run *maker = tr->base.serial == serial ? &tr->base : NULL;
  for (int r = 0; r < tr->runs.n && !maker; r++)
    if (tr->runs.v[r].serial == serial) maker = &tr->runs.v[r];
  int64_t v0[64], before[64];
  om__run_example(tr, v0);
  memcpy(before, v0, sizeof(int64_t) * (size_t)tr->symbols.n);
  for (int r = -1; maker && r < tr->runs.n; r++) { /* the runs before it (the base run first) */
    const om_run *o = r < 0 ? &tr->base : &tr->runs.v[r];
    for (int k = 0; o->serial < serial && k < tr->symbols.n; k++)
      if (o->v[k] > before[k] && o->v[k] < maker->v[k]) before[k] = o->v[k];
  }
  char sizes[160] = "the traced sizes", decl[400] = "";
  size_t n = 0;
  if (maker) om__run_sizes(tr, maker->v, ~(uint64_t)0, sizes, sizeof sizes);
  for (int k = 0; maker && k < tr->symbols.n; k++) {
    const om_symbol *s = &tr->symbols.v[k];
    if (maker->v[k] > v0[k]) n = dim_declaration(decl, sizeof decl, n, s, s->min, before[k] * s->multiple);
  }
  tr->phase = OM_PHASE_RECORD; /* so that the error ends the trace */
  return om__trace_fail(OM_ERR_TRACE_SYMBOLIC_SHAPE, "%s (call %lld): the model reads a tensor it made in its run at %s and "
                        "kept (state it changes at some sizes, such as a table cached to a size and made again for a larger "
                        "one), so the runs cannot tell where it begins to; the trace holds where the model keeps its state%s%s%s",
                        kind_name(op), (long long)index + 1, sizes, n ? ": declare " : "", decl,
                        n ? " (om_trace_dim in C), up to the size its state holds"
                          : "; no declared maximum avoids it (a run no larger than the traced one made it): make that "
                            "tensor in every call while a trace records (om.Tracer.active in JS, as PyTorch code skips a "
                            "cache under torch.jit.is_tracing())"), -2;
}

int64_t om__run_call(om_trace *tr, int op, const om_attrs *attrs, om_tensor *const *in, int n_in, const om_runcall **rc) {
  if (tr->depth > 0 || tr->phase == OM_PHASE_MANUAL) return -1;
  int64_t index = tr->calls++;
  for (int i = 0; i < n_in; i++) /* a tensor an earlier run made, which the model kept */
    if (in[i] && in[i]->trace_run && in[i]->trace_run != tr->serial) return kept_from_run(tr, op, index, in[i]->trace_run);
  if (tr->phase == OM_PHASE_OTHER && tr->stop_msg && index == tr->stop_call) { /* a threshold, refused here */
    tr->phase = OM_PHASE_RECORD; /* so that the error ends the trace */
    return om__trace_fail(OM_ERR_TRACE_SYMBOLIC_SHAPE, "%s", tr->stop_msg), -2;
  }
  if (tr->phase == OM_PHASE_OTHER && tr->sweeping && index >= OM_RANGE_CALLS + 64 * (int64_t)tr->base.calls.n) {
    tr->over_budget = true; /* the run stops here: the range check goes no further this way */
    return om__fail(OM_ERR_TRACE_INVALID_USAGE, "trace_run: the model makes more calls at these sizes than the range "
                    "check runs (this is not an error of the model)"), -2;
  }
  if (tr->phase == OM_PHASE_OTHER) {
    om_run *run = tr->cur;
    om_runcall *c = OM_VEC_PUSH_SLOT(run->calls);
    if (!c) return om__trace_fail(OM_ERR_OUT_OF_MEMORY, "trace_run: out of memory logging the run"), -2;
    *c = (om_runcall){.op = op, .at = run->pool.n, .out = -1, .rank = -1};
    bool ok = push(run, attrs->n_i);
    for (int k = 0; ok && k < attrs->n_i; k++) ok = push(run, attrs->i[k]);
    ok = ok && push(run, attrs->n_f);
    for (int k = 0; ok && k < attrs->n_f; k++) {
      int64_t bits;
      memcpy(&bits, &attrs->f[k], sizeof bits);
      ok = push(run, bits);
    }
    c->in = run->pool.n;
    ok = ok && push_origins(run, tr, in, n_in);
    if (!ok) return om__trace_fail(OM_ERR_OUT_OF_MEMORY, "trace_run: out of memory logging the run"), -2;
    tr->depth++;
    return index;
  }
  /* the record run: the same call as the base run's, and its partner in every other run */
  if (tr->more) /* unwinding: the model runs at more sizes first */
    return om__fail(OM_ERR_TRACE_INVALID_USAGE, "trace_run: the model is run at more sizes first (this is not an error of the model)"), -2;
  tr->dead = false;
  for (int r = 0; r < OM_RUNS_MAX; r++) rc[r] = NULL;
  const om_run *base = &tr->base;
  const om_runcall *bc = index < base->calls.n ? &base->calls.v[index] : NULL;
  bool live = base->n_outputs >= 0;
  if (live && (!bc || bc->op != op))
    return om__trace_fail(OM_ERR_TRACE_SYMBOLIC_SHAPE, "%s: the model makes other calls when run again at the same sizes "
                          "(call %lld is %s there): a traced model must make the same calls at the same sizes",
                          kind_name(op), (long long)index + 1, bc ? kind_name(bc->op) : "none"), -2;
  if (live && bc->rank < 0) { /* nothing the outputs need: computed, not recorded */
    for (int r = 0; r < tr->runs.n; r++) { /* but a run that fails here (the model throws) fails here */
      const om_run *run = &tr->runs.v[r];
      if (run->dropped || !inside(tr, run) || om__run_by_liveness(tr, run)) continue;
      bool here = index < run->prefix ? run->calls.v[index].error != NULL
                  : index == run->calls.n && run->prefix == run->calls.n && (!run->calls.n || !run->calls.v[run->calls.n - 1].error);
      if (here && !failed_here(tr, r, op, index, index < run->prefix ? run->calls.v[index].error : run->error)) return -2;
    }
    tr->dead = true;
    tr->depth++;
    return index;
  }
  for (int r = 0; r < tr->runs.n; r++) {
    om_run *run = &tr->runs.v[r];
    if (run->dropped || !inside(tr, run)) continue; /* a run outside the symbols' ranges (narrowed) says nothing more */
    const om_runcall *p = NULL;
    if (om__run_by_liveness(tr, run)) {
      if (bc->rank >= run->live.n) {
        if (!parts(tr, r, kind_name(op), index, "returns after %d calls its outputs need, here it goes on (call %lld)", run->live.n,
                   (long long)index + 1))
          return -2;
        continue;
      }
      p = &run->calls.v[run->live.v[bc->rank]];
    } else if (!live) { /* the base run failed (it reads data, say): matched by index, all of it */
      if (index >= run->calls.n) {
        if (run->n_outputs >= 0 && !parts(tr, r, kind_name(op), index, "returns after %lld calls, here it goes on", (long long)run->calls.n))
          return -2;
        continue;
      }
      p = &run->calls.v[index];
    } else if (index < run->prefix) { /* a run that failed: the calls it has in common with the base run */
      p = &run->calls.v[index];
    } else {
      bool here = index == run->calls.n && run->prefix == run->calls.n &&
                  (!run->calls.n || !run->calls.v[run->calls.n - 1].error); /* it failed between its calls, before this one */
      if (here && !failed_here(tr, r, op, index, run->error)) return -2;
      continue;
    }
    int which;
    if (p->op != op) {
      if (!parts(tr, r, kind_name(op), index, "calls %s here (call %lld)", kind_name(p->op), (long long)index + 1)) return -2;
      continue;
    }
    if (!same_inputs(tr, run, p, in, n_in, &which)) {
      if (!parts(tr, r, kind_name(op), index, "reads other values here (call %lld, input %d)", (long long)index + 1, which)) return -2;
      continue;
    }
    rc[r] = p; /* one that failed here: the record run's probe may narrow the range past it, else om__run_failed */
  }
  tr->depth++;
  return index;
}

void om__run_call_done(om_trace *tr, int64_t index, om_tensor *const *out, int n_out, bool ok) {
  if (index < 0) return;
  tr->depth--;
  for (int j = 0; ok && j < n_out; j++) {
    out[j]->trace_run = tr->serial;
    out[j]->trace_origin = (int32_t)(index * OM_MAX_OUTPUTS + j);
  }
  if (tr->phase != OM_PHASE_OTHER) return;
  om_run *run = tr->cur;
  om_runcall *c = &run->calls.v[index];
  if (!ok) {
    c->error = om__arena_strdup(&tr->g.arena, om_last_error_message());
    if (!c->error) c->error = "out of memory";
    return;
  }
  int at = run->pool.n;
  bool fits = push(run, n_out);
  for (int j = 0; fits && j < n_out; j++) {
    fits = push(run, out[j]->ndim);
    for (int d = 0; fits && d < out[j]->ndim; d++) fits = push(run, out[j]->shape[d]);
  }
  if (fits) c->out = at; /* out of memory: no shapes to check against (the record run's probe still checks) */
}

/* ---- phantoms ---- */

om_tensor *om__phantom(om_trace *tr, const om_meta *meta) {
  if (!tr->phantom && !(tr->phantom = om__storage_new(0, false, "trace_run"))) return NULL;
  om_tensor *t = om__tensor_on(tr->phantom, meta, "trace_run");
  if (t) {
    t->trace_id = tr->id;
    t->trace_value = -1;
  }
  return t;
}

/* ---- om_trace_run ---- */

/* Checks, after the record run returned outs (n), that every other run ended as it did: as many
 * live calls (or calls), as many outputs, each the same value. */
static bool check_ends(om_trace *tr, om_tensor *const *outs, int n) {
  char sizes[160];
  int64_t last = tr->base.n_outputs >= 0 ? tr->base.live.n : tr->calls; /* what the record run made */
  for (int r = 0; r < tr->runs.n; r++) {
    om_run *run = &tr->runs.v[r];
    if (run->dropped || !inside(tr, run)) continue;
    om__run_sizes(tr, run->v, ~(uint64_t)0, sizes, sizeof sizes);
    bool live = om__run_by_liveness(tr, run);
    if (run->n_outputs >= 0 && (live ? run->live.n : run->calls.n) > last) {
      int64_t next = live ? run->live.v[last] : last;
      if (!parts(tr, r, "trace_run", tr->calls - 1, "goes on after its last call here (call %lld) and calls %s",
                 (long long)tr->calls, kind_name(run->calls.v[next].op)))
        return false;
      continue;
    }
    if (run->n_outputs < 0) { /* where the record run did not meet it (after its last call, at a call it computed only) */
      const char *why = om__arena_printf(&tr->g.arena, "trace_run: at %s the model fails (%s)", sizes, run->error);
      if (om__run_failed(tr, r, why, -1)) continue;
      char hint[400];
      int64_t c = 0; /* the run's call that failed: the refusal is raised there */
      while (c < run->calls.n && !run->calls.v[c].error) c++;
      return om__run_fails_at(tr, run->v, c < run->calls.n ? c : -1, why, "trace_run: at %s the model fails (%s), so the graph would only "
                              "hold at the traced sizes%s", sizes, run->error, om__run_hint(tr, r, hint, sizeof hint));
    }
    if (run->n_outputs != n) {
      if (is_small(tr, run)) {
        below(tr, run, om__arena_printf(&tr->g.arena, "trace_run: at %s the model returns %d outputs", sizes, run->n_outputs), NULL);
        continue;
      }
      return om__trace_fail(OM_ERR_TRACE_SYMBOLIC_SHAPE, "trace_run: the model returns %d outputs at %s and %d here",
                            run->n_outputs, sizes, n);
    }
    const int64_t *o = run->pool.v + run->out;
    for (int j = 0; j < n; j++) {
      int64_t kind, value;
      origin_of(tr, outs[j], &kind, &value);
      if (same_origin(tr, run, kind, value, o[1 + 2 * j], o[2 + 2 * j])) continue;
      if (!parts(tr, r, "trace_run", tr->calls - 1, "returns another value as output %d", j)) return false;
      break;
    }
  }
  return true;
}

/* Whether the recording with this id is still the one on this thread; when not (the model
 * ended it, say with a nested om_trace_begin, maybe beginning another), the error that ended
 * it is the thread's error. */
static bool still(uint32_t id) {
  om_thread_state *st = om__state();
  if (st->trace && st->trace->id == id) return true;
  if (st->trace && st->trace_end_kind == OM_ERR_OK) /* the error that ended ours was cleared by the new begin */
    om__fail(OM_ERR_TRACE_INVALID_USAGE, "trace_run: the model ended this recording and began another (tracers do "
             "not nest: a begin inside the model ends both)");
  else if (st->trace_end_kind != OM_ERR_OK) om__fail(st->trace_end_kind, "%s", st->trace_end_msg);
  else om__fail(OM_ERR_TRACE_INVALID_USAGE, "trace_run: the model ended the recording");
  return false;
}

/* Whether the recording with this id is still the one on this thread (no error set). */
static bool ours(uint32_t id) { return om__state()->trace && om__state()->trace->id == id; }

/* Stamps t as the model's input k in the run going on. */
static void stamp_input(om_trace *tr, om_tensor *t, int k) {
  t->trace_run = tr->serial;
  t->trace_origin = -1 - k;
}

/* Runs fn at run's sizes on phantom inputs; logs how it ended and, when it returned, which
 * calls are live. false when the trace ended. */
static bool run_other(om_trace *tr, om_run *run, om_trace_fn fn, void *ctx, om_tensor **outputs, int max_outputs) {
  om_graph *g = &tr->g;
  om_tensor *in[64] = {0};
  int n_in = g->inputs.n;
  bool made = true;
  run->serial = ++tr->serial;
  for (int k = 0; k < n_in && made; k++) {
    const om_gvalue *v = &g->values.v[g->inputs.v[k]];
    om_meta m = {.dtype = v->dtype, .ndim = v->ndim};
    memcpy(m.shape, v->shape, sizeof m.shape);
    for (int d = 0; d < v->ndim; d++)
      if (v->ext[d] >= 0) om__x_eval(tr, v->ext[d], run->v, &m.shape[d]);
    made = (in[k] = om__phantom(tr, &m)) != NULL;
    if (made) stamp_input(tr, in[k], k);
  }
  tr->phase = OM_PHASE_OTHER;
  tr->cur = run;
  tr->calls = 0;
  uint32_t id = tr->id;
  int n = made ? fn(ctx, in, n_in, outputs, max_outputs) : -1;
  if (n > 0 && ours(id) && !om__trace_sync_all(outputs, n < max_outputs ? n : max_outputs)) { /* as in the record run */
    om__release_all(outputs, n < max_outputs ? n : max_outputs);
    n = -1;
  }
  om__release_all(in, n_in);
  if (!still(id)) { /* the model ended the trace (a nested begin) */
    for (int j = 0; j < n && j < max_outputs; j++) om_tensor_release(outputs[j]);
    return false;
  }
  run->n_outputs = n > max_outputs ? -1 : n;
  run->out = -1;
  if (n < 0) snprintf(run->error, sizeof run->error, "%s", om_last_error_message());
  /* a read of values the graph would compute is no size the model fails at: it is the trace's
   * refusal, as the record run would raise it (left to the fits, a value computed from sizes
   * before the read finds no more runs to settle it and is refused there, naming the wrong call) */
  if (n < 0 && om_last_error() == OM_ERR_TRACE_DATA_DEPENDENT) {
    tr->phase = OM_PHASE_RECORD; /* so the failure ends the trace (the callers see it ended, as after a nested begin) */
    return om__trace_fail(OM_ERR_TRACE_DATA_DEPENDENT, "%s", run->error);
  }
  bool ok = n < 0 || n > max_outputs || liveness(tr, run, outputs, n);
  if (ok && n >= 0 && n <= max_outputs) om__run_neutral(tr, run); /* calls it lacks that are the identity there */
  for (int j = 0; j < n && j < max_outputs; j++) {
    om_tensor_release(outputs[j]);
    outputs[j] = NULL;
  }
  om_clear_error();
  return ok || om__trace_fail(OM_ERR_OUT_OF_MEMORY, "trace_run: out of memory");
}

/* Whether logged origins a (of run ra) and b (of run rb; both returned) are the same value: the
 * same model input or outside tensor, or the same output of the same live call. */
static bool same_logged(const om_run *ra, const int64_t *a, const om_run *rb, const int64_t *b) {
  if (a[0] != b[0]) return false;
  if (a[0] || a[1] < 0 || b[1] < 0) return a[1] == b[1];
  return ra->calls.v[a[1] / OM_MAX_OUTPUTS].rank == rb->calls.v[b[1] / OM_MAX_OUTPUTS].rank &&
         a[1] % OM_MAX_OUTPUTS == b[1] % OM_MAX_OUTPUTS;
}

/* Argument k (float: of the float ones) of the base run's call c as the graph gives it at the
 * variables v: its kept expression there, else the base run's value (want, or fwant). false
 * when an expression overflows there. */
static bool graph_arg(const om_trace *tr, int64_t c, int k, const int64_t *v, const om_attrs *base, int64_t *want,
                      bool *as_length) {
  *want = base->i[k];
  *as_length = false;
  for (int q = 0; q < tr->kept.n; q++)
    if (tr->kept.v[q].call == c && tr->kept.v[q].k == k) {
      *as_length = tr->kept.v[q].as_length;
      return om__x_eval(tr, tr->kept.v[q].x, v, want);
    }
  return true;
}
static bool graph_float(const om_trace *tr, int64_t c, int k, const int64_t *v, const om_attrs *base, double *want) {
  *want = base->f[k];
  for (int q = 0; q < tr->kept_f.n; q++)
    if (tr->kept_f.v[q].call == c && tr->kept_f.v[q].k == k) return om__xfloat_eval(tr, &tr->kept_f.v[q].f, v, want);
  return true;
}

/* The first output axis of the base run's call cb whose size in run (its call pr) is not the one
 * the graph has there (om_kept_ext: an extent at the run's sizes, or a fixed size): a candidate
 * that fitted every probe and not this size (a split's piece fixed at 5, which the model clamps
 * to H - 5 below H = 10). false when each is; else output *j's axis *d, its size *got, the
 * graph's *want. */
static bool other_extent(const om_trace *tr, int64_t cb, const om_run *run, const om_runcall *pr, int *j, int *d,
                         int64_t *got, int64_t *want) {
  int lo = 0, hi = tr->kept_ext.n; /* kept in call order: the first of cb's */
  while (lo < hi) {
    int mid = lo + (hi - lo) / 2;
    if (tr->kept_ext.v[mid].call < cb) lo = mid + 1;
    else hi = mid;
  }
  for (int q = lo; q < tr->kept_ext.n && tr->kept_ext.v[q].call == cb; q++) {
    const om_kept_ext *e = &tr->kept_ext.v[q];
    int nd;
    int64_t sh[OM_MAX_DIMS];
    *want = e->size;
    if (!om__runcall_output(run, pr, e->j, &nd, sh) || (e->x >= 0 && !om__x_eval(tr, e->x, run->v, want))) continue;
    *j = e->j, *d = e->d, *got = e->d < nd ? sh[e->d] : -1;
    if (*got != *want) return true;
  }
  return false;
}

/* What run (it returned) does otherwise than the trace: a live call of another op, or on other
 * values, or with integer or float arguments other than the graph gives it at the run's sizes
 * (om_kept_arg, om_kept_float: a size the model computes otherwise below the example, ceil(rows
 * / 2) of a min(B-2,3), which no run saw; a branch on a size far above the example), outputs
 * of other sizes than the graph's extents give there (other_extent), more or fewer live calls,
 * other outputs. NULL when it does what the trace does; else what it does
 * (into buf: "calls relu here (call 4), where the trace calls gelu") and, in *call, the run's
 * call that differs (-1: none). */
static const char *differs(om_trace *tr, const om_run *run, char *buf, size_t cap, int64_t *call) {
  const om_run *b = &tr->base;
  *call = -1;
  if (run->n_outputs != b->n_outputs)
    return snprintf(buf, cap, "returns %d outputs, the trace %d", run->n_outputs, b->n_outputs), buf;
  for (int i = 0; i < b->live.n && i < run->live.n; i++) {
    int64_t cb = b->live.v[i], cr = run->live.v[i];
    const om_runcall *pb = &b->calls.v[cb], *pr = &run->calls.v[cr];
    const char *name = kind_name(pr->op);
    *call = cr;
    if (pr->op != pb->op)
      return snprintf(buf, cap, "calls %s here (call %lld), where the trace calls %s", name, (long long)cr + 1,
                      kind_name(pb->op)), buf;
    const int64_t *ib = b->pool.v + pb->in, *ir = run->pool.v + pr->in;
    for (int j = 0; j < ib[0] || j < ir[0]; j++)
      if (j >= ib[0] || j >= ir[0] || !same_logged(b, ib + 1 + 2 * j, run, ir + 1 + 2 * j))
        return snprintf(buf, cap, "reads other values here (call %lld, input %d)", (long long)cr + 1, j), buf;
    om_attrs ab, ar;
    om__runcall_attrs(b, pb, &ab);
    om__runcall_attrs(run, pr, &ar);
    if (ab.n_i != ar.n_i || ab.n_f != ar.n_f)
      return snprintf(buf, cap, "passes other arguments here (call %lld)", (long long)cr + 1), buf;
    for (int k = 0; k < ab.n_i; k++) {
      int64_t want, got = ar.i[k], sh[OM_MAX_DIMS];
      bool as_length, known = graph_arg(tr, cb, k, run->v, &ab, &want, &as_length);
      int nd; /* a slice's end the graph has as its start plus its length: the run's taken so */
      if (known && as_length)
        known = om__runcall_output(run, pr, 0, &nd, sh) && om__slice_end(pr->op, &ar, nd, sh, &got);
      if (!known || got != want)
        return snprintf(buf, cap, "passes %lld as argument %d here (call %lld), where the graph computes %lld",
                        (long long)got, k, (long long)cr + 1, (long long)want), buf;
    }
    for (int k = 0; k < ab.n_f; k++) {
      double want;
      if (pr->op == OM_RUN_CREATED(OM_CREATED_ARANGE) && k == 1) continue; /* its end: the length, an int argument */
      bool known = graph_float(tr, cb, k, run->v, &ab, &want);
      bool same = !memcmp(&ar.f[k], &want, sizeof want) || fabs(ar.f[k] - want) <= 1e-6 * fmax(1, fabs(want)); /* -inf, NaN */
      if (!known || !same)
        return snprintf(buf, cap, "passes %g as float argument %d here (call %lld), where the graph computes %g",
                        ar.f[k], k, (long long)cr + 1, want), buf;
    }
    int j, d;
    int64_t got, want;
    if (other_extent(tr, cb, run, pr, &j, &d, &got, &want))
      return snprintf(buf, cap, "gives axis %d of output %d the size %lld here (call %lld), where the graph has %lld", d, j,
                      (long long)got, (long long)cr + 1, (long long)want), buf;
  }
  if (run->live.n != b->live.n) {
    *call = run->live.n > b->live.n ? run->live.v[b->live.n] : -1;
    return snprintf(buf, cap, "makes %d calls its outputs need, where the trace makes %d", run->live.n, b->live.n), buf;
  }
  *call = -1;
  for (int j = 0; j < b->n_outputs; j++)
    if (!same_logged(b, b->pool.v + b->out + 1 + 2 * j, run, run->pool.v + run->out + 1 + 2 * j))
      return snprintf(buf, cap, "returns another value as output %d", j), buf;
  return NULL;
}

/* A minimum the runs raised is where the runs below failed, not a size seen to work: the model
 * runs there (shape only, the others at their examples) and, where it fails or takes another
 * path, the minimum goes up by one and it runs again (a split's second piece exists from the
 * size a probe gives, but the model indexes a piece the split only has one size later).
 * declared: the symbols as declared. false when the trace ended. */
static bool check_minimums(om_trace *tr, const om_symbol *declared, om_trace_fn fn, void *ctx, int max_outputs) {
  om_thread_state *st = om__state();
  uint64_t seed = st->rng_seed, offset = st->rng_offset;
  om_tensor **scratch = NULL;
  int64_t v0[64];
  om__run_example(tr, v0);
  bool ok = true;
  for (int k = 0; ok && k < tr->symbols.n; k++) {
    om_symbol *s = &tr->symbols.v[k];
    for (int tries = 0; ok && s->vmin > declared[k].vmin && s->vmin < v0[k] && tries < OM_MORE; tries++) {
      if (!scratch && !(scratch = calloc((size_t)max_outputs, sizeof *scratch)))
        return om__trace_fail(OM_ERR_OUT_OF_MEMORY, "trace_run: out of memory");
      om_run run = {.n_outputs = -1};
      memcpy(run.v, v0, sizeof run.v);
      run.v[k] = s->vmin;
      st->rng_seed = seed, st->rng_offset = offset;
      ok = run_other(tr, &run, fn, ctx, scratch, max_outputs);
      char what[320];
      int64_t at;
      bool same = ok && run.n_outputs >= 0 && om__run_by_liveness(tr, &run) && !differs(tr, &run, what, sizeof what, &at);
      if (ok && !same) {
        char sizes[160];
        om__run_sizes(tr, run.v, ~(uint64_t)0, sizes, sizeof sizes);
        s->min_why = run.n_outputs < 0 ? om__arena_printf(&tr->g.arena, "trace_run: at %s the model fails (%s)", sizes, run.error)
                                       : om__arena_printf(&tr->g.arena, "trace_run: at %s the model takes another path or "
                                                          "computes a size otherwise", sizes);
        s->min_site = NULL; /* it names no call */
        if (run.n_outputs >= 0) om__run_answers(tr, s->min_why, run.v, NULL); /* it works there: refused at the end */
        s->vmin++;
        s->min = s->vmin * s->multiple;
      }
      free(run.calls.v);
      free(run.pool.v);
      free(run.live.v);
      if (same) break;
    }
  }
  free(scratch);
  st->rng_seed = seed, st->rng_offset = offset;
  return ok;
}

/* The sizes om__run_loop runs symbol k at, as offsets from its example: four in a row, then one
 * further on where the range has it (a loop bounded by a constant, min(T, 6), stops growing
 * there). */
static const int64_t loop_steps[OM_LOOP_SIZES] = {0, 1, 2, 3, 8};

/* The live calls of the model run with symbol k at variable v (the others at the example's,
 * v0); -1 when the run parts from the trace or is not matched by liveness, -2 when the trace
 * ended (the error set). */
static int64_t loop_calls(om_trace *tr, int k, int64_t v, const int64_t *v0, om_trace_fn fn, void *ctx, om_tensor **scratch,
                          int max_outputs, uint64_t seed, uint64_t offset) {
  om_thread_state *st = om__state();
  om_run run = {.n_outputs = -1};
  memcpy(run.v, v0, sizeof run.v);
  run.v[k] = v;
  st->rng_seed = seed, st->rng_offset = offset;
  int64_t calls = -1;
  if (!run_other(tr, &run, fn, ctx, scratch, max_outputs)) calls = -2;
  else if (run.n_outputs >= 0 && om__run_by_liveness(tr, &run)) calls = run.live.n;
  run_free(&run);
  return calls;
}

/* floor(a / b) for b > 0. */
static int64_t floor_by(int64_t a, int64_t b) { return a / b - (a % b != 0 && a < 0); }

/* How many more trips floor((per * v - c) / div) makes at v + 1 than at v. */
static int64_t trips_up(int64_t per, int64_t div, int64_t c, int64_t v) {
  return floor_by(per * (v + 1) - c, div) - floor_by(per * v - c, div);
}

/* A loop of floor((per * v - c) / div) trips, per / div not a whole number (Math.floor(T / 2)
 * pairwise steps, Math.ceil(T / 3), Math.floor(2 * T / 3), Math.ceil(3 * T / 4), a window of k
 * by s, Math.floor((T - k) / s) + 1): from one size to the next its calls grow by one of two
 * counts, lo or hi (hi - lo a trip's calls, lo a multiple of it: 0 where per < div), in a
 * pattern that repeats every div sizes. From the runs at offsets 0 to 3 of example v0
 * (calls[0..3]), runs at the next sizes in a row until the smallest period div (at most
 * OM_LOOP_DIV) of the growths is seen twice over and one more (every residue twice) and over
 * div + OM_LOOP_DIV - 1 growths, at most 2 * OM_LOOP_DIV + 2 sizes; a threshold (one jump, then none for OM_LOOP_DIV sizes) stops
 * early. per is the trips a period adds, and c, of the div that make that pattern, is the one
 * the growths show (per and div coprime: one does). Into trips: per, div and at = c modulo div.
 * 1 when so, 0 when not, -1 when the trace ended (the error set). A wrong fit (a pattern that
 * holds for the sizes run only) is caught where the rolled graph is checked: at sizes far above,
 * its count grows at another rate. */
static int loop_period(om_trace *tr, int k, const int64_t *v0, const int64_t *calls, om_trace_fn fn, void *ctx, om_tensor **scratch,
                       int max_outputs, uint64_t seed, uint64_t offset, om_loop_trips *trips) {
  const om_symbol *s = &tr->symbols.v[k];
  enum { MOST = 2 * OM_LOOP_DIV + 2 };
  int64_t up[MOST], prev = calls[3], lo = 0, hi = 0; /* up[j]: the growth from v0 + j to v0 + j + 1 */
  int n = 0, last_up;
  for (int o = 1; o <= 3; o++) up[n++] = calls[o] - calls[o - 1];
  if (!up[0] && !up[1] && !up[2]) { /* no growth in four sizes: one run OM_LOOP_DIV further tells whether one comes (most thresholds stop here) */
    int64_t c = v0[k] + OM_LOOP_DIV <= s->vmax ? loop_calls(tr, k, v0[k] + OM_LOOP_DIV, v0, fn, ctx, scratch, max_outputs, seed, offset) : -1;
    if (c == -2) return -1;
    if (c <= prev) return 0;
  }
  int div = 0;
  for (;;) {
    lo = INT64_MAX, hi = -1, last_up = -1;
    for (int j = 0; j < n; j++) {
      if (up[j] < 0) return 0;
      lo = up[j] < lo ? up[j] : lo, hi = up[j] > hi ? up[j] : hi;
      if (up[j] > 0) last_up = j;
    }
    for (int j = 0; j < n; j++) /* two counts of growth at most */
      if (up[j] != lo && up[j] != hi) return 0;
    if (hi > lo && lo % (hi - lo)) return 0; /* lo not a whole number of trips */
    /* the smallest period, seen twice and one more, and over d + OM_LOOP_DIV - 1 growths: a run
     * of growths with periods d and D that long has their gcd as a period too (Fine and Wilf),
     * so no other period up to OM_LOOP_DIV fits them (the growths of 2 * T / 5 from T = 9, 0 1 0
     * 1 0, have period 2 over five) */
    for (int d = 2; !div && d <= OM_LOOP_DIV && 2 * d + 1 <= n && d + OM_LOOP_DIV - 1 <= n; d++) {
      bool same = true, both = false;
      for (int j = d; same && j < n; j++) same = up[j] == up[j - d];
      for (int j = 1; j < d; j++) both |= up[j] != up[0];
      if (same && both) div = d;
    }
    if (div) break;
    if (n - 1 - last_up > OM_LOOP_DIV && last_up >= 0) return 0; /* no growth for longer than any period: a threshold */
    if (last_up < 0 && n > OM_LOOP_DIV) return 0;
    if (n == MOST || v0[k] + n + 1 > s->vmax) return 0;
    int64_t c = loop_calls(tr, k, v0[k] + n + 1, v0, fn, ctx, scratch, max_outputs, seed, offset);
    if (c == -2) return -1;
    if (c < 0) return 0;
    up[n++] = c - prev, prev = c;
  }
  int64_t unit = hi - lo, per = 0;
  for (int j = 0; j < div; j++) per += up[j] / unit; /* the trips a period adds */
  for (int64_t c = 0; c < div; c++) { /* the c of the pattern seen */
    bool fits = true;
    for (int j = 0; fits && j < n; j++) fits = trips_up(per, div, c, v0[k] + j) * unit == up[j];
    if (!fits) continue;
    *trips = (om_loop_trips){.per = per, .div = div, .at = c};
    return 1;
  }
  return 0;
}

static int64_t far_variable(const om_symbol *s, int64_t v0);

/* A loop that stops at a constant size (if (t >= maxLen) break, maxLen above the example): its
 * calls grow by one count a size, evenly at offsets 0 to 3 of example v0 (calls[0..3]), then
 * stop. Where the run at offset 8 (calls[4]) has grown less, the stop is between, at the size
 * the growth says; where it has grown as much, one run at the end of the range the trace checks
 * (far_variable: a decoder's maxLen of 1024 is far above any size the rolled graph is checked
 * at, and a Loop of T trips would be silently wrong from there) tells whether they stop before,
 * and a search between finds where (shape-only runs: about two at the end's size in all). The
 * stop is kept (trips->cap) only at offset 4 or above (the pieces roll_loop traces are below it)
 * and where the calls at the end are those at the stop (they stay). 1 where they grow as the
 * first four to the end, or stop (trips->cap); 2 where they grow otherwise (three trips every
 * four sizes, Math.floor(3 * T / 4), grows at four sizes in a row: loop_period may tell); -1
 * when the trace ended (the error set). */
static int loop_cap(om_trace *tr, int k, const int64_t *v0, const int64_t *calls, om_trace_fn fn, void *ctx, om_tensor **scratch,
                    int max_outputs, uint64_t seed, uint64_t offset, om_loop_trips *trips) {
  const om_symbol *s = &tr->symbols.v[k];
  int64_t step = calls[1] - calls[0], v = v0[k], end = far_variable(s, v), lo, hi;
  if (step <= 0 || calls[2] - calls[1] != step || calls[3] - calls[2] != step || calls[4] < 0) return 1;
#define OM_LINEAR(x) (calls[0] + step * ((x) - v))
  int64_t at_end = end > v + 8 ? loop_calls(tr, k, end, v0, fn, ctx, scratch, max_outputs, seed, offset) : -1;
  if (at_end == -2) return -1;
  if (calls[4] != OM_LINEAR(v + 8)) { /* it stopped between offsets 3 and 8 */
    if ((calls[4] - calls[3]) % step) return 2;
    lo = v + 3 + (calls[4] - calls[3]) / step;
  } else { /* did it stop before the end? the last size where the calls are as the first four had them */
    if (at_end < 0 || at_end == OM_LINEAR(end)) return 1;
    lo = v + 8, hi = end;
    while (hi - lo > 1) {
      int64_t mid = lo + (hi - lo) / 2, c = loop_calls(tr, k, mid, v0, fn, ctx, scratch, max_outputs, seed, offset);
      if (c == -2) return -1;
      if (c == OM_LINEAR(mid)) lo = mid;
      else hi = mid;
    }
  }
  if (lo < v + 4 || (at_end >= 0 && at_end != OM_LINEAR(lo))) return 2; /* not a stop the pieces are below, or it grows again */
#undef OM_LINEAR
  trips->cap = lo;
  return 1;
}

int om__run_loop(om_trace *tr, int k, om_trace_fn fn, void *ctx, int max_outputs, uint64_t seed, uint64_t offset,
                 int64_t *calls, int64_t *sizes, om_loop_trips *trips) {
  om_thread_state *st = om__state();
  uint64_t after = st->rng_seed, after_offset = st->rng_offset;
  const om_symbol *s = &tr->symbols.v[k];
  int64_t v0[64];
  om__run_example(tr, v0);
  for (int i = 0; i < OM_LOOP_SIZES; i++) calls[i] = -1;
  *trips = (om_loop_trips){.per = 1, .div = 1};
  if (v0[k] + loop_steps[3] > s->vmax) return 0; /* a range this short can be pieces */
  om_tensor **scratch = calloc((size_t)max_outputs, sizeof *scratch);
  if (!scratch) return om__trace_fail(OM_ERR_OUT_OF_MEMORY, "trace_run: out of memory"), -1;
  /* grows: 1 while the calls grow at every size, 2 once they have stayed at one (a loop of a
   * fraction of the size, or a threshold), 0 once they fall, -1 when the trace ended */
  int grows = 1;
  for (int i = 0; grows > 0 && i < OM_LOOP_SIZES && v0[k] + loop_steps[i] <= s->vmax; i++) {
    int64_t c = loop_calls(tr, k, sizes[i] = v0[k] + loop_steps[i], v0, fn, ctx, scratch, max_outputs, seed, offset);
    calls[i] = c < 0 ? -1 : c;
    if (c == -2) grows = -1; /* the trace ended */
    else if (c < 0 || (i && c < calls[i - 1])) grows = 0;
    else if (i && c == calls[i - 1]) grows = i < 4 ? 2 : 0;
    if (grows == 2 && i == 3) break; /* the periodic runs take it from here */
    bool uneven = i == 3 && (c - calls[2] != calls[2] - calls[1] || calls[2] - calls[1] != calls[1] - calls[0]);
    if (grows == 1 && uneven) { /* more than a trip a size, unevenly (Math.floor(3 * T / 2)): a period? else on as before */
      int p = loop_period(tr, k, v0, calls, fn, ctx, scratch, max_outputs, seed, offset, trips);
      if (p) {
        grows = p;
        break;
      }
    }
  }
  if (grows == 2) /* the calls stayed at some of the first four: do they grow in a pattern of every div sizes? */
    grows = loop_period(tr, k, v0, calls, fn, ctx, scratch, max_outputs, seed, offset, trips);
  else if (grows == 1 && trips->div == 1) { /* evenly: do they stop at a size, or grow in a pattern the first four hid? */
    grows = loop_cap(tr, k, v0, calls, fn, ctx, scratch, max_outputs, seed, offset, trips);
    if (grows == 2 && loop_period(tr, k, v0, calls, fn, ctx, scratch, max_outputs, seed, offset, trips) < 0) grows = -1;
    else if (grows == 2) grows = 1; /* a loop as before (the rolls it is checked by refuse it, naming the loop) */
  }
  free(scratch);
  st->rng_seed = after, st->rng_offset = after_offset;
  return grows;
}

/* ---- the declared range (docs/symbolic-axes.md, "The whole range") ---- */

#define OM_BOUND 32768 /* a symbol declared without a maximum is checked up to this size (or 4 times its example) */

/* The largest variable of symbol s the range's runs go to: its maximum (up to 2^30, so that the
 * lines below compute in int64), else OM_BOUND. */
static int64_t far_variable(const om_symbol *s, int64_t v0) {
  int64_t bound = (s->max == INT64_MAX ? OM_BOUND : (int64_t)1 << 30) / s->multiple;
  if (bound < 4 * v0) bound = 4 * v0;
  return s->vmax < bound ? s->vmax : bound;
}

/* The range check goes up only as far as every graph input holds at most this many elements
 * (64 Mi: 256 MiB of float32): past that the runs' phantoms still cost per piece (a split of a
 * flattened image into 560-wide pieces is millions of tensors at 32768 x 32768), while the model
 * could not run eagerly in a WebAssembly heap anyway. traced.symbols[k].checked says where it
 * stopped. */
#define OM_RANGE_INPUT_ELEMS ((double)(1 << 26))

/* The elements of the largest graph input at variables v. */
static double largest_input(const om_trace *tr, const int64_t *v) {
  double most = 0;
  for (int k = 0; k < tr->g.inputs.n; k++) {
    const om_gvalue *x = &tr->g.values.v[tr->g.inputs.v[k]];
    double e = 1;
    for (int d = 0; d < x->ndim; d++) {
      int64_t size = x->shape[d];
      if (x->ext[d] >= 0) om__x_eval(tr, x->ext[d], v, &size);
      e *= (double)size;
    }
    if (e > most) most = e;
  }
  return most;
}

/* Point p of the len steps from variables a to b: each symbol moves by at most one a step, so
 * two points a step apart where the model does two things are a threshold exactly. */
static void on_line(const om_trace *tr, const int64_t *a, const int64_t *b, int64_t len, int64_t p, int64_t *v) {
  for (int k = 0; k < tr->symbols.n; k++) v[k] = a[k] + (b[k] - a[k]) * p / len;
}

enum { RANGE_SAME, RANGE_FAILS, RANGE_DIFFERS, RANGE_ENDED, RANGE_BIG };

/* What the runs at other sizes share (om_trace_run's and the range's): the model, room for its
 * outputs, the random generator's state the runs start at. */
typedef struct run_ctx {
  om_trace *tr;
  const om_symbol *declared; /* the symbols as declared */
  om_trace_fn fn;
  void *ctx;
  om_tensor **scratch;
  int max_outputs;
  uint64_t seed, offset;
} run_ctx;

/* Runs the model at the variables v, shape only (its large constants too): RANGE_SAME when it
 * does what the trace does, RANGE_FAILS when it fails (why: the error, call: the run's call that
 * failed, -1 when none did), RANGE_DIFFERS (why: what it does, call: where: differs()), RANGE_BIG
 * when it made more calls than the check runs (OM_RANGE_CALLS),
 * RANGE_ENDED when the trace ended (a call stopped it: tr->stop_call); name: the call's. */
static int range_run(run_ctx *rc, const int64_t *v, char *why, size_t cap, int64_t *call, const char **name) {
  om_trace *tr = rc->tr;
  om_thread_state *st = om__state();
  om_run run = {.n_outputs = -1};
  memcpy(run.v, v, sizeof(int64_t) * (size_t)tr->symbols.n);
  st->rng_seed = rc->seed, st->rng_offset = rc->offset;
  tr->sweeping = true;
  tr->made_phantom = false;
  if (!run_other(tr, &run, rc->fn, rc->ctx, rc->scratch, rc->max_outputs)) {
    free(run.calls.v), free(run.pool.v), free(run.live.v);
    return RANGE_ENDED;
  }
  tr->sweeping = false;
  int verdict = RANGE_SAME;
  *call = -1;
  *name = "trace_run";
  if (tr->over_budget) {
    tr->over_budget = false;
    verdict = RANGE_BIG;
  } else if (run.n_outputs < 0) {
    verdict = RANGE_FAILS;
    for (int64_t c = 0; c < run.calls.n && *call < 0; c++)
      if (run.calls.v[c].error) *call = c;
    if (*call >= 0) snprintf(why, cap, "fails at %s (call %lld): %.250s", kind_name(run.calls.v[*call].op), (long long)*call + 1, run.error);
    else snprintf(why, cap, "fails: %.250s", run.error);
  } else if (differs(tr, &run, why, cap, call)) {
    verdict = RANGE_DIFFERS;
  }
  if (*call >= 0) *name = kind_name(run.calls.v[*call].op);
  free(run.calls.v), free(run.pool.v), free(run.live.v);
  return verdict;
}

/* range_run's verdict at the variables v, without its particulars. */
static int verdict_at(run_ctx *rc, const int64_t *v) {
  char why[320];
  int64_t call;
  const char *name;
  return range_run(rc, v, why, sizeof why, &call, &name);
}

/* The declaration that keeps the symbols of mask to the sizes where the model does what the
 * trace does: up to the variables good (up), or from them: "om.Dim('seq', { min: 1, max: 32 })". */
static const char *declaration(const om_trace *tr, uint64_t mask, const int64_t *good, bool up, char *buf, size_t cap) {
  size_t n = 0;
  buf[0] = '\0';
  for (int k = 0; k < tr->symbols.n && n < cap; k++) {
    const om_symbol *s = &tr->symbols.v[k];
    if (mask >> k & 1) n = dim_declaration(buf, cap, n, s, up ? s->min : good[k] * s->multiple, up ? good[k] * s->multiple : s->max);
  }
  return buf;
}

/* Ends the trace with SymbolicShape and msg (NULL: out of memory) at the model's call (call, -1:
 * none) of a run at the variables bad: the model runs there once more and the call ends the
 * trace, so that the error is raised at the model's own call (in JS it names its source line).
 * Returns false. */
static bool refuse_at_call(run_ctx *rc, const int64_t *bad, int64_t call, const char *msg) {
  om_trace *tr = rc->tr;
  if (!msg) return om__trace_fail(OM_ERR_OUT_OF_MEMORY, "trace_run: out of memory");
  if (call >= 0) {
    tr->stop_call = call, tr->stop_msg = msg;
    if (verdict_at(rc, bad) == RANGE_ENDED) return false;
    tr->stop_msg = NULL;
  }
  return om__trace_fail(OM_ERR_TRACE_SYMBOLIC_SHAPE, "%s", msg);
}

/* Refuses (SymbolicShape, false) a trace whose record run narrowed a range where the model works
 * (tr->answers says where first), with the declaration of the ranges it narrowed to (each symbol
 * whose range differs from the user's declaration), as torch.export names the constraints that
 * would hold; at the call it names (refuse_at_call). A minimum that rose where the model answers
 * (one below it, the others at their examples) is left out of the declaration when it is the only
 * such one and another symbol's is in it, one that rose where the model fails: a trace declared
 * so cuts that minimum itself (om__branch_below cuts one symbol), or refuses naming it; two such
 * stay, as no cut holds both (random model 24:20040's squeeze() of [N, 1, H], which drops
 * another axis at N = 1 and at H = 1, beside a reflect pad that needs W >= 3). So the
 * offset-4 form of random model 24:20939 (row 2 of B rows, its T - 4 columns reshaped to [1,
 * T - 4, 1, C]) names B's minimum alone: T rose to 4 because at T = 3 the reshape's -1 is
 * inferred from an empty tensor (0, not T - 4), and the model answers there, so declaring T from
 * 4 would narrow T where the model gives an answer. */
static bool refuse_answers(run_ctx *rc) {
  om_trace *tr = rc->tr;
  const om_site *site = tr->answers_site;
  char decl[600];
  size_t n = 0;
  decl[0] = '\0';
  uint64_t answered = 0; /* the narrowed symbols whose minimum rose where the model answers */
  bool failed = false;   /* a narrowed symbol that does not */
  int64_t v[64];
  for (int k = 0; k < tr->symbols.n; k++) {
    const om_symbol *s = &tr->symbols.v[k];
    if (s->vmin == s->decl_vmin && s->vmax == s->decl_vmax) continue;
    int r = RANGE_FAILS;
    if (s->vmin > s->decl_vmin && s->vmax == s->decl_vmax) {
      om__run_example(tr, v);
      v[k] = s->vmin - 1;
      if ((r = verdict_at(rc, v)) == RANGE_ENDED) return false;
    }
    if (r == RANGE_SAME || r == RANGE_DIFFERS) answered |= (uint64_t)1 << k;
    else failed = true;
  }
  for (int k = 0; k < tr->symbols.n && n < sizeof decl; k++) {
    const om_symbol *s = &tr->symbols.v[k];
    if ((s->vmin != s->decl_vmin || s->vmax != s->decl_vmax) && !(failed && answered == (uint64_t)1 << k))
      n = dim_declaration(decl, sizeof decl, n, s, s->min, s->max);
  }
  const char *msg = om__arena_printf(&tr->g.arena, "%s, where the model gives an answer that the graph would not: the graph "
                                     "holds for the sizes %s declares (om_trace_dim in C): declare them to trace it there",
                                     tr->answers, decl);
  return refuse_at_call(rc, site ? site->v : NULL, site ? site->call : -1, msg);
}

/* The model does at the variables bad (a step from good) what the trace does not (why, at the
 * run's call): the trace ends with SymbolicShape naming the threshold and the declaration that
 * keeps the symbols of mask to the sizes where it holds, at the model's call (refuse_at_call).
 * Returns false. */
static bool refuse_threshold(run_ctx *rc, uint64_t mask, const int64_t *good, const int64_t *bad, bool up, const char *why,
                             int64_t call, const char *name) {
  om_trace *tr = rc->tr;
  char at_bad[160], at_good[160], decl[400];
  om__run_sizes(tr, bad, mask, at_bad, sizeof at_bad);
  om__run_sizes(tr, good, mask, at_good, sizeof at_good);
  declaration(tr, mask, good, up, decl, sizeof decl);
  const char *msg = om__arena_printf(&tr->g.arena, "%s: the model changes at a size threshold: at %s it %s; at %s it does "
                                     "what the trace does, so the graph would be wrong %s %s. It holds %s there: declare %s "
                                     "(om_trace_dim in C)", name, at_bad, why, at_good, up ? "from" : "at", at_bad,
                                     up ? "up to" : "from", decl);
  return refuse_at_call(rc, bad, call, msg);
}

/* Where the model at the variables bad, a step from good (up: from the example), does another
 * thing than the trace (verdict, why, at the run's call, name): where it fails (eager has no
 * answer), the range of each symbol of mask ends at good; where it does what the trace does
 * not, SymbolicShape (refuse_threshold). false when the trace ended. */
/* Whether what the model does at symbol k's sizes (the others at their examples) is periodic
 * about bad, where it first does another thing: the same as the trace at every size but the
 * multiples of some m in 2..16 (or at the multiples only), the other thing there (Swin's
 * `if (W % 7 != 0)` around a call that is not the identity where it is left out). No pieces
 * hold that over a range, and om.Dim's multipleOf does: *m, and *at_multiples when the trace
 * does what the model does at the multiples. 0 when it is not so, 1 when it is, -1 when the
 * trace ended. */
static int periodic_change(run_ctx *rc, int k, const int64_t *bad, int64_t *m, bool *at_multiples) {
  om_trace *tr = rc->tr;
  const om_symbol *s = &tr->symbols.v[k];
  int64_t v[64], lo = bad[k] - 16 > s->vmin ? bad[k] - 16 : s->vmin;
  int same[49]; /* the verdicts at lo .. lo + 48: 1 the same as the trace, 0 another thing, -1 unknown */
  memcpy(v, bad, sizeof(int64_t) * (size_t)tr->symbols.n);
  int64_t v0[64];
  om__run_example(tr, v0);
  for (int j = 0; j < tr->symbols.n; j++)
    if (j != k) v[j] = v0[j];
  if (s->vmax - s->vmin < 2 * OM_BRANCH_PIECES) return 0; /* few sizes: pieces of one size each may hold it */
  bool back = false; /* first the sizes after bad: another thing at each of them is a threshold, not a period */
  for (int64_t x = bad[k] + 1; x <= bad[k] + 16 && x <= s->vmax && !back; x++) {
    v[k] = x;
    int r = verdict_at(rc, v);
    if (r == RANGE_ENDED) return -1;
    back = r == RANGE_SAME;
  }
  if (!back) return 0;
  int n = 0;
  for (int64_t x = lo; x <= lo + 48 && x <= s->vmax; x++, n++) {
    v[k] = x;
    int r = verdict_at(rc, v);
    if (r == RANGE_ENDED) return -1;
    same[n] = r == RANGE_SAME ? 1 : r == RANGE_DIFFERS ? 0 : -1;
  }
  for (int64_t q = 2; q <= 16; q++) {
    int at[2] = {-1, -1}, seen = 0; /* the verdict at the multiples of q, at the others */
    bool holds = true;
    for (int i = 0; i < n && holds; i++) {
      if (same[i] < 0) continue;
      int c = ((lo + i) * s->multiple) % (q * s->multiple) == 0;
      if (at[c] < 0) at[c] = same[i], seen++;
      holds = at[c] == same[i];
    }
    if (holds && seen == 2 && at[0] != at[1]) return *m = q * s->multiple, *at_multiples = at[1] == 1, 1;
  }
  return 0;
}

static bool settle(run_ctx *rc, uint64_t mask, const int64_t *good, const int64_t *bad, bool up, int verdict,
                   const char *why, int64_t call, const char *name) {
  om_trace *tr = rc->tr;
  if (verdict == RANGE_DIFFERS && __builtin_popcountll(mask) == 1) { /* periodic: refused, naming the multiple */
    int k = __builtin_ctzll(mask), p;
    int64_t m;
    bool at_multiples;
    if ((p = periodic_change(rc, k, bad, &m, &at_multiples)) < 0) return false;
    if (p) {
      const om_symbol *s = &tr->symbols.v[k];
      char at_bad[160], at_good[160];
      om__run_sizes(tr, bad, mask, at_bad, sizeof at_bad);
      om__run_sizes(tr, good, mask, at_good, sizeof at_good);
      return refuse_at_call(rc, bad, call, om__arena_printf(&tr->g.arena, "%s: the model does one thing where '%s' is a "
                            "multiple of %lld and another where it is not (at %s it %s; at %s it does what the trace does), which "
                            "neither one graph of these calls nor pieces of the range hold. It holds at the multiples: declare "
                            "om.Dim('%s', { multipleOf: %lld })%s (om_trace_dim in C)", name, s->name, (long long)m, at_bad,
                            why, at_good, s->name, (long long)m, at_multiples ? "" : " and trace with an example that is one"));
    }
  }
  if (verdict == RANGE_DIFFERS && om__branch_split(tr, mask, good, bad, up)) return true; /* written as an If (branch.c) */
  if (verdict == RANGE_DIFFERS) return refuse_threshold(rc, mask, good, bad, up, why, call, name);
  char sizes[160];
  om__run_sizes(tr, bad, ~(uint64_t)0, sizes, sizeof sizes);
  const char *because = om__arena_printf(&tr->g.arena, "trace_run: at %s the model %s", sizes, why);
  const om_site *site = om__run_site(tr, bad, call);
  for (int k = 0; k < tr->symbols.n; k++) {
    om_symbol *s = &tr->symbols.v[k];
    if (!(mask >> k & 1)) continue;
    if (up && good[k] < s->vmax) s->vmax = good[k], s->max = s->vmax * s->multiple, s->max_why = because, s->max_site = site;
    if (!up && good[k] > s->vmin) s->vmin = good[k], s->min = s->vmin * s->multiple, s->min_why = because, s->min_site = site;
  }
  return true;
}

/* Whether the model answers above the variables from on the line of symbol k alone (from: where
 * it first fails; far: k's end of the line): run at the 16 sizes after from (a piece split off
 * at a period is too small at one residue: split(8).at(-1) of 17 rows) and from there at sizes
 * spread to far. A run that made a constant shape only (om__trace_shape_only)
 * says nothing: a lookup past a table of positions fails nothing there. 1 with *at its variables
 * when it answers at one, 0 when not, -1 when the trace ended. */
static int answers_above(run_ctx *rc, int k, const int64_t *from, int64_t far, int64_t *at) {
  om_trace *tr = rc->tr;
  char why[320];
  int64_t call;
  const char *name;
  memcpy(at, from, sizeof(int64_t) * (size_t)tr->symbols.n);
  for (int64_t step = 1; from[k] + step <= far; step = step < 16 ? step + 1 : 2 * step) {
    at[k] = from[k] + step;
    int r = range_run(rc, at, why, sizeof why, &call, &name);
    if (r == RANGE_ENDED) return -1;
    if ((r == RANGE_SAME || r == RANGE_DIFFERS) && !tr->made_phantom) return 1;
  }
  return 0;
}

/* The model fails at the variables bad on the line of symbol k alone (from the example up; good:
 * a step before, where it does what the trace does; why, at its call, name), and answers again
 * at the variables at: no maximum leaves out only sizes where it fails, and one that leaves out
 * at would narrow the range where the model gives an answer. SymbolicShape at the model's call
 * (so that in JS it names the source line), with the declaration that keeps k up to good, where
 * the trace holds. Returns false. */
static bool refuse_hole_above(run_ctx *rc, int k, const int64_t *good, const int64_t *bad, const int64_t *at, const char *why,
                              int64_t call, const char *name) {
  om_trace *tr = rc->tr;
  char at_bad[160], at_answer[160], decl[400];
  uint64_t mask = (uint64_t)1 << k;
  om__run_sizes(tr, bad, mask, at_bad, sizeof at_bad);
  om__run_sizes(tr, at, mask, at_answer, sizeof at_answer);
  declaration(tr, mask, good, true, decl, sizeof decl);
  const char *msg = om__arena_printf(&tr->g.arena, "%s: at %s the model %s, and at %s it answers again: the sizes where it "
                                     "answers are no range om.Dim declares, and the graph would not give its answer at %s. "
                                     "It holds up to where the model first fails: declare %s (om_trace_dim in C)", name,
                                     at_bad, why, at_answer, at_answer, decl);
  return refuse_at_call(rc, bad, call, msg);
}

/* A threshold found where every symbol moves, left to the line of the one symbol that makes it
 * (exact there): acted on when that line does not find it. */
typedef struct range_pending {
  uint64_t mask;
  int64_t good[64], bad[64], call;
  int verdict;
  char why[320];
  const char *name;
} range_pending;

/* Checks the trace over the symbols' whole ranges, shape only: all symbols at once, then each
 * alone, from the example up to the far end of its range (far_variable) and down to its minimum,
 * at points spread geometrically along the line (1, 3, 7, 15, ... steps), and, where the model
 * does another thing, bisected to the step where it begins (settle). Where all move, the
 * symbols that make the difference are those whose return to the example undoes it (a product
 * B * T > 1000: both); one symbol alone is left to its own line. Records what was checked
 * (checked_min, checked_max). false when the trace ended. */
static bool check_range(run_ctx *rc) {
  om_trace *tr = rc->tr;
  int n = tr->symbols.n;
  int64_t v0[64], to[64], good_v[64], bad_v[64], v[64];
  range_pending pending;
  om__run_example(tr, v0);
  for (int up = 1; up >= 0; up--) {
    pending.mask = 0;
    for (int i = n < 2; i <= n && tr->split_sym < 0; i++) {
      int line = i ? i - 1 : n; /* n: all at once */
      uint64_t mask = line < n ? (uint64_t)1 << line : ~(uint64_t)0 >> (64 - n);
      int64_t len = 0;
      memcpy(to, v0, sizeof(int64_t) * (size_t)n);
      for (int k = 0; k < n; k++) {
        if (!(mask >> k & 1)) continue;
        /* a maximum the runs narrowed (the largest size a run returned at, below one that
         * failed) goes on to the declared one: the exact end */
        const om_symbol *s = &tr->symbols.v[k], *far = line < n && s->max_why && s->max_why == s->runs_max_why ? &rc->declared[k] : s;
        to[k] = up ? far_variable(far, v0[k]) : s->vmin;
      }
      while (up && largest_input(tr, to) > OM_RANGE_INPUT_ELEMS && memcmp(to, v0, sizeof(int64_t) * (size_t)n))
        for (int k = 0; k < n; k++) to[k] = v0[k] + (to[k] - v0[k]) / 2; /* back toward the example */
      for (int k = 0; k < n; k++) {
        int64_t d = to[k] > v0[k] ? to[k] - v0[k] : v0[k] - to[k];
        if (d > len) len = d;
      }
      int64_t good = 0, bad = -1, call = -1, c, end = len; /* end: the last step checked */
      char why[320], w[320];
      const char *name = NULL, *nm;
      int verdict = RANGE_SAME;
      for (int64_t step = 1; len && bad < 0; step = 2 * step + 1) {
        int64_t p = step < len ? step : len;
        on_line(tr, v0, to, len, p, v);
        verdict = range_run(rc, v, why, sizeof why, &call, &name);
        if (verdict == RANGE_ENDED) return false;
        if (verdict == RANGE_BIG) { /* too many calls to run: the line ends before */
          verdict = RANGE_SAME, end = good;
          break;
        }
        if (verdict == RANGE_SAME) good = p;
        else bad = p;
        if (p == len) break;
      }
      while (bad >= 0 && bad - good > 1) { /* bisected to the exact step */
        int64_t mid = good + (bad - good) / 2;
        on_line(tr, v0, to, len, mid, v);
        int r = range_run(rc, v, w, sizeof w, &c, &nm);
        if (r == RANGE_ENDED) return false;
        if (r == RANGE_BIG) { /* no threshold found within what runs: the line ends before */
          bad = -1, end = good, verdict = RANGE_SAME;
          break;
        }
        if (r == RANGE_SAME) {
          good = mid;
        } else {
          bad = mid, verdict = r, call = c, name = nm;
          memcpy(why, w, sizeof why);
        }
      }
      if (len) on_line(tr, v0, to, len, bad >= 0 ? good : end, good_v);
      for (int k = 0; line < n && len && k < n; k++) /* one symbol alone: checked to here */
        if (mask >> k & 1) *(up ? &tr->symbols.v[k].checked_max : &tr->symbols.v[k].checked_min) = good_v[k] * tr->symbols.v[k].multiple;
      if (bad < 0) continue;
      on_line(tr, v0, to, len, bad, bad_v);
      if (pending.mask == mask) pending.mask = 0; /* its own line found it */
      /* where the model fails, a range ends only on the line of one symbol alone (the others at
       * their examples), and only where it fails on to the line's end: a failure with every
       * symbol moved (a conv of a flattened H * W at H = W = 1, fine at H = 1 alone) or one with
       * sizes beyond it where the model answers again (a broadcast of min(B, 8) rows against 8
       * works at B = 1, fails from 2 to 7) has no range that leaves out only sizes where the
       * model fails: the ranges stay (where the model has no answer, none is promised) */
      if (verdict == RANGE_FAILS && line == n) continue;
      bool hole = false; /* going down, sizes spread from the line's end back to the failure (going up, a
                          * constant past 65536 elements is a phantom, whose values fail nothing) */
      for (int64_t back = 0; verdict == RANGE_FAILS && !up && !hole && len - back > bad; back = 2 * back + 1) {
        on_line(tr, v0, to, len, len - back, v);
        int r = range_run(rc, v, w, sizeof w, &c, &nm);
        if (r == RANGE_ENDED) return false;
        hole = r == RANGE_SAME;
      }
      if (hole) continue;
      if (verdict == RANGE_FAILS && up && line < n) { /* going up, where the model answers again past the failure */
        int64_t at[64];
        int r = answers_above(rc, line, bad_v, to[line], at);
        if (r < 0) return false;
        if (r) return refuse_hole_above(rc, line, good_v, bad_v, at, why, call, name);
      }
      if (line < n && up && bad_v[line] > tr->symbols.v[line].vmax) { /* past a maximum the runs narrowed */
        om_symbol *s = &tr->symbols.v[line];
        char sizes[160];
        om__run_sizes(tr, bad_v, ~(uint64_t)0, sizes, sizeof sizes);
        if (good_v[line] > s->vmax) /* the trace holds to good: the exact end, or a threshold there */
          s->vmax = good_v[line], s->max = s->vmax * s->multiple,
          s->max_why = om__arena_printf(&tr->g.arena, "trace_run: at %s the model %s", sizes, why),
          s->max_site = om__run_site(tr, bad_v, call);
        if (verdict == RANGE_FAILS) continue;
        /* where the model answers otherwise than the trace (a split's piece that is T - 6 up to
         * 12 and 6 from there, the runs' maximum at 10 below a failure at 23) the range would
         * narrow where the model gives an answer: a threshold, as inside the range */
      }
      uint64_t matter = 0; /* the symbols whose return to the example undoes it */
      for (int k = 0; line == n && k < n; k++) {
        memcpy(v, bad_v, sizeof(int64_t) * (size_t)n);
        v[k] = v0[k];
        int r = range_run(rc, v, w, sizeof w, &c, &nm);
        if (r == RANGE_ENDED) return false;
        if (r == RANGE_SAME) matter |= (uint64_t)1 << k;
      }
      if (line == n && __builtin_popcountll(matter) == 1) { /* one symbol's: its own line finds it exactly */
        pending = (range_pending){.mask = matter, .call = call, .verdict = verdict, .name = name};
        memcpy(pending.good, good_v, sizeof pending.good);
        memcpy(pending.bad, bad_v, sizeof pending.bad);
        memcpy(pending.why, why, sizeof pending.why);
        continue;
      }
      if (!settle(rc, matter ? matter : mask, good_v, bad_v, up, verdict, why, call, name)) return false;
    }
    if (tr->split_sym >= 0) return true; /* the pieces are checked as traces of their own */
    if (pending.mask && !settle(rc, pending.mask, pending.good, pending.bad, up, pending.verdict, pending.why, pending.call,
                                pending.name))
      return false;
  }
  return true;
}

/* The symbols' checked ranges: the sizes the runs that returned took, then check_range over the
 * whole range when the base run returned (its calls are what the runs compare with). The random
 * generator goes on from where the record run left it. false when the trace ended. */
/* Adds a run at the variables v (far: a far run, far_sizes) to the trace's runs and runs the
 * model there, or takes the run at those sizes the trace made before it began again (spare_take).
 * A run that fails goes on to the others all the same: the calls before the failure are fitted
 * with every run's values, and the record run finds where it fails (and whether it does there
 * too). false when the trace ended or memory ran out (the error set). */
static bool add_run(const run_ctx *rc, const int64_t *v, bool far) {
  om_trace *tr = rc->tr;
  om_run *run = OM_VEC_PUSH_SLOT(tr->runs);
  if (!run) return om__trace_fail(OM_ERR_OUT_OF_MEMORY, "trace_run: out of memory");
  memset(run, 0, sizeof *run);
  memcpy(run->v, v, sizeof run->v);
  if (!spare_take(tr, run)) {
    om_thread_state *st = om__state();
    st->rng_seed = rc->seed, st->rng_offset = rc->offset;
    if (!run_other(tr, run, rc->fn, rc->ctx, rc->scratch, rc->max_outputs)) return false;
  }
  run->far = far;
  if (run->n_outputs < 0 && tr->base.n_outputs >= 0 && (run->prefix = common_prefix(tr, run)) < 0)
    return om__trace_fail(OM_ERR_OUT_OF_MEMORY, "trace_run: out of memory");
  return true;
}

/* The model answers at the variables v (shown: the symbols the message names; with: another
 * symbol moved too, -1 none) outside a range that narrowed there (fmt: which and why): noted for
 * the refusal when the record run ends (om__run_answers, refuse_answers), which declares the
 * ranges that hold. The one place check_below_minimums, check_above_maximums and check_pairs say
 * it. false when memory ran out. */
static bool answers_outside(run_ctx *rc, const int64_t *v, uint64_t shown, int with, const om_site *site, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
static bool answers_outside(run_ctx *rc, const int64_t *v, uint64_t shown, int with, const om_site *site, const char *fmt, ...) {
  om_trace *tr = rc->tr;
  char range[400], sizes[160], moved[80] = "";
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(range, sizeof range, fmt, ap);
  va_end(ap);
  om__run_sizes(tr, v, shown, sizes, sizeof sizes);
  if (with >= 0) snprintf(moved, sizeof moved, " (with '%s' moved too)", tr->symbols.v[with].name);
  const char *at = om__arena_printf(&tr->g.arena, "%s, yet at %s%s the model answers", range, sizes, moved);
  if (!at) return om__trace_fail(OM_ERR_OUT_OF_MEMORY, "trace_run: out of memory");
  om__run_answers(tr, at, v, site);
  return true;
}

/* A minimum that moved (by the runs, by a probe of a call) is checked below, the other symbols at
 * their examples, at up to 16 sizes (every one when they are that few, else spread down to the
 * declared minimum). Where the model answers at one, the range would narrow where the model gives
 * an answer: it is cut above that size (branch.c: the piece below traced at it) or, where no more
 * pieces may be cut, refused (om__run_answers), never narrowed silently. A probe reads a call's
 * failure with the graph's arguments, which are not the model's past a threshold (a split's piece
 * that is 5 from T = 10 and 4 at T = 9), and a model may fail just below the minimum and answer
 * further down (a broadcast of a slice that is empty below N = 4 against N rows works at N = 1).
 * With other symbols below their examples, also with those at their minimums (pass 1: refused
 * where the model answers, no piece cut). Above a lowered maximum: check_above_maximums. false
 * when the trace ended. */
static bool check_below_minimums(run_ctx *rc) {
  om_trace *tr = rc->tr;
  int64_t v0[64], v[64];
  om__run_example(tr, v0);
  for (int k = 0; k < tr->symbols.n && !tr->answers && tr->split_sym < 0; k++) {
    const om_symbol *s = &tr->symbols.v[k];
    int64_t below = s->vmin > rc->declared[k].vmin && s->vmin <= v0[k] ? s->vmin - rc->declared[k].vmin : 0;
    uint64_t low = 0; /* the other symbols whose minimum is below their example */
    for (int j = 0; j < tr->symbols.n; j++) low |= (uint64_t)(j != k && tr->symbols.v[j].vmin < v0[j]) << j;
    /* pass 1: the others at their minimums, where a failure may need two symbols (a reshape to 13
     * rows of an empty slice of N - 2 rows answers at N = 2 at any h) */
    for (int pass = 0; pass < (low ? 2 : 1); pass++)
      for (int64_t i = 0; !tr->answers && i < 16 && i < below; i++) {
        memcpy(v, v0, sizeof v);
        for (int j = 0; pass && j < tr->symbols.n; j++)
          if (low >> j & 1) v[j] = tr->symbols.v[j].vmin;
        v[k] = below <= 16 ? s->vmin - 1 - i : i == 15 ? rc->declared[k].vmin : s->vmin - 1 - i * below / 16;
        int r = verdict_at(rc, v);
        if (r == RANGE_ENDED) return false;
        if (r != RANGE_SAME && r != RANGE_DIFFERS) continue;
        int64_t good[64] = {0}, bad[64] = {0}; /* cut above it: the piece below traced at it */
        good[k] = v[k], bad[k] = v[k] + 1;
        if (!pass && om__branch_split(tr, (uint64_t)1 << k, good, bad, true)) return true;
        if (!answers_outside(rc, v, (uint64_t)1 << k | (pass ? low : 0), -1, s->min_site, "%s: the minimum of '%s' rose there",
                             s->min_why, s->name))
          return false;
      }
  }
  return true;
}

/* A maximum that moved below the declared one (by a probe of a call, by the runs) is checked
 * above, the other symbols at their examples: where the model fails just above it and answers
 * again further up (answers_above), the trace is refused at the call that fails
 * (refuse_hole_above: a split's last piece of W - 8 floor((W - 1) / 8) columns is too small for
 * a 2x2 convolution at W = 17 and not at 18); where it answers just above it, the range narrowed
 * where the model gives an answer, and the trace is refused (om__run_answers). Never narrowed
 * silently. false when the trace ended. */
static bool check_above_maximums(run_ctx *rc) {
  om_trace *tr = rc->tr;
  int64_t v0[64], good[64], bad[64], at[64], call;
  char why[320];
  const char *name;
  om__run_example(tr, v0);
  for (int k = 0; k < tr->symbols.n && !tr->answers && tr->split_sym < 0; k++) {
    const om_symbol *s = &tr->symbols.v[k];
    if (s->vmax >= rc->declared[k].vmax || s->vmax < v0[k]) continue;
    memcpy(good, v0, sizeof good);
    memcpy(bad, v0, sizeof bad);
    good[k] = s->vmax, bad[k] = s->vmax + 1;
    int r = range_run(rc, bad, why, sizeof why, &call, &name);
    if (r == RANGE_ENDED) return false;
    if (r == RANGE_FAILS) {
      if ((r = answers_above(rc, k, bad, far_variable(&rc->declared[k], v0[k]), at)) < 0) return false;
      if (r) return refuse_hole_above(rc, k, good, bad, at, why, call, name);
      continue;
    }
    if (r == RANGE_BIG || tr->made_phantom) continue; /* past what runs, or a lookup past a table that failed nothing */
    if (!answers_outside(rc, bad, (uint64_t)1 << k, -1, s->max_site, "%s: the maximum of '%s' went down to %lld",
                         s->max_why ? s->max_why : "trace_run", s->name, (long long)s->max))
      return false;
  }
  return true;
}

/* A range narrowed one symbol at a time may leave out sizes where the model answers only with
 * another symbol moved too: torchvision's MaxViT built for 64 x 64 fails at H = 66 with W = 64
 * but answers at 32 x 128 (its grid products match), where a graph narrowed to [61, 64] each
 * would answer otherwise in an engine that does not enforce the ranges. So for each narrowed
 * symbol and each other one, the model runs with the first halved and the other doubled, and the
 * other way round (the rest at the example); where it answers (otherwise than the trace or as it
 * does: either way outside the range), the trace is refused as where a minimum rose
 * (om__run_answers); and one below each raised minimum
 * with each other symbol a step or two from its example, where it answers at all. false when the
 * trace ended. */
static bool check_pairs(run_ctx *rc) {
  om_trace *tr = rc->tr;
  int64_t v0[64], v[64];
  om__run_example(tr, v0);
  for (int k = 0; k < tr->symbols.n && !tr->answers && tr->split_sym < 0; k++) {
    const om_symbol *s = &tr->symbols.v[k];
    if (s->vmin <= s->decl_vmin && s->vmax >= s->decl_vmax) continue; /* not narrowed */
    for (int j = 0; j < tr->symbols.n && !tr->answers; j++) {
      const om_symbol *o = &tr->symbols.v[j];
      for (int way = 0; j != k && way < 2 && !tr->answers; way++) {
        memcpy(v, v0, sizeof v);
        v[k] = way ? v0[k] * 2 : v0[k] / 2, v[j] = way ? v0[j] / 2 : v0[j] * 2;
        if (v[k] >= s->vmin && v[k] <= s->vmax) continue; /* inside the range: checked already */
        if (v[k] < s->decl_vmin || v[k] > s->decl_vmax || v[j] < o->decl_vmin || v[j] > o->decl_vmax) continue;
        int r = verdict_at(rc, v);
        if (r == RANGE_ENDED) return false;
        /* answering as the trace does is answering too, outside the range (random model
         * 24:19717's first min(B, 4) rows reshaped to [2, 2, 2, -1], whose minimum rose to 4 at
         * the example's odd S, answers at B = 2 with S = 14); refused now, as below: a cut at the
         * minimum (om__branch_below) would trace the piece under it with the other symbol at its
         * example, where the model fails, and narrow the range there again without a word */
        if (r != RANGE_DIFFERS && (r != RANGE_SAME || tr->made_phantom)) continue;
        return answers_outside(rc, v, (uint64_t)1 << k | (uint64_t)1 << j, j, s->min_why ? s->min_site : s->max_site,
                               "%s: the range of '%s' narrowed there", s->min_why ? s->min_why : s->max_why, s->name) &&
               refuse_answers(rc);
      }
      /* one below a raised minimum, the other a step or two from its example: a split's first
       * piece [N, 6, min(2, h), w] reshaped to pairs of its N * min(2, h) rows fails at h = 1
       * where N is odd only, so a minimum raised at the example's odd N leaves out h = 1 at even
       * N, where the model answers (the graph too, or otherwise: either way outside the range) */
      static const int64_t steps[] = {1, -1, 2, -2};
      for (int t = 0; j != k && t < 4 && s->vmin > s->decl_vmin && !tr->answers; t++) {
        memcpy(v, v0, sizeof v);
        v[k] = s->vmin - 1, v[j] += steps[t];
        if (v[j] < o->decl_vmin || v[j] > o->decl_vmax) continue;
        int r = verdict_at(rc, v);
        if (r == RANGE_ENDED) return false;
        if (r != RANGE_SAME && r != RANGE_DIFFERS) continue;
        /* refused now: a cut below the minimum (om__branch_below) would trace its sizes with the
         * other symbol at its example, where the model fails, and leave them out again */
        return answers_outside(rc, v, (uint64_t)1 << k | (uint64_t)1 << j, j, s->min_site, "%s: the range of '%s' narrowed there",
                               s->min_why ? s->min_why : "trace_run", s->name) && refuse_answers(rc);
      }
    }
  }
  return true;
}

/* ---- points off the lines (docs/symbolic-axes.md, "Points off the lines") ---- */

#define OM_POINT_WINDOW 12  /* the sizes each side of each example a diagonal runs at, every one */
#define OM_POINT_TARGETS 64 /* the most constants' axes (and each one less) an extent is solved for */
#define OM_POINTS_SOLVED 32 /* the most runs at sizes where an extent meets such an axis */

static int64_t gcd64(int64_t a, int64_t b);

/* A point off the lines: the symbols of mask at one size x (a diagonal: their sizes equal; one
 * symbol: its own line), the others at their examples. */
typedef struct om_point {
  uint64_t mask;
  int64_t x;
} om_point;

/* The variables of point p into v: false when x is not a size of each of its symbols (outside
 * the range as it stands, not a multiple, past the range check's far end) or the inputs would be
 * larger than the range check runs (OM_RANGE_INPUT_ELEMS). */
static bool point_at(const om_trace *tr, om_point p, int64_t *v) {
  om__run_example(tr, v);
  for (int k = 0; k < tr->symbols.n; k++) {
    const om_symbol *s = &tr->symbols.v[k];
    if (!(p.mask >> k & 1)) continue;
    if (p.x % s->multiple || p.x < s->min || p.x > s->max || p.x / s->multiple > far_variable(s, v[k])) return false;
    v[k] = p.x / s->multiple;
  }
  return largest_input(tr, v) <= OM_RANGE_INPUT_ELEMS;
}

/* The step between sizes of mask's diagonal (the least common multiple of their multiples), 0
 * when it overflows. */
static int64_t point_step(const om_trace *tr, uint64_t mask) {
  int64_t l = 1;
  for (int k = 0; k < tr->symbols.n; k++) {
    if (!(mask >> k & 1)) continue;
    int64_t m = tr->symbols.v[k].multiple, g = gcd64(l, m);
    if (l / g > INT64_MAX / m / 2) return 0;
    l = l / g * m;
  }
  return l;
}

/* The model does at point p what the trace does not (why, at its call, name): the trace ends
 * with SymbolicShape, at the model's call, naming p, the sizes along p's diagonal where the
 * model does so too (walked from p), and the declaration of each symbol that leaves them out
 * with its example in. Returns false. */
static bool refuse_point(run_ctx *rc, om_point p, const int64_t *bad, const char *why, int64_t call, const char *name) {
  om_trace *tr = rc->tr;
  int64_t step = point_step(tr, p.mask), lo = p.x, hi = p.x, v[64];
  for (int dir = -1; dir <= 1; dir += 2)
    for (int i = 0; i < 64; i++) {
      om_point q = {p.mask, (dir < 0 ? lo : hi) + dir * step};
      if (!point_at(tr, q, v)) break;
      int r = verdict_at(rc, v);
      if (r == RANGE_ENDED) return false;
      if (r != RANGE_DIFFERS) break;
      *(dir < 0 ? &lo : &hi) = q.x;
    }
  char at_bad[160], names[160] = "", span[240] = "", decl[600] = "", one[200];
  size_t n = 0, nd = 0;
  om__run_sizes(tr, bad, p.mask, at_bad, sizeof at_bad);
  for (int k = 0; k < tr->symbols.n; k++) {
    const om_symbol *s = &tr->symbols.v[k];
    if (!(p.mask >> k & 1)) continue;
    if (n < sizeof names) n += (size_t)snprintf(names + n, sizeof names - n, "%s%s", n ? " = " : "", s->name);
    if (s->size >= lo && s->size <= hi) continue; /* no range of k leaves them out with its example in */
    if (s->size > hi) dim_declaration(one, sizeof one, 0, s, (hi / s->multiple + 1) * s->multiple, s->max);
    else dim_declaration(one, sizeof one, 0, s, s->min, (lo - 1) / s->multiple * s->multiple);
    if (nd < sizeof decl) nd += (size_t)snprintf(decl + nd, sizeof decl - nd, "%s%s", nd ? " or " : "", one);
  }
  if (lo < hi) snprintf(span, sizeof span, " (and so at %s from %lld to %lld)", names, (long long)lo, (long long)hi);
  const char *msg = om__arena_printf(
      &tr->g.arena, "%s: the model does another thing at sizes off the lines the range check runs along: at %s it %s%s, "
      "so the graph would be wrong there. %s%s (om_trace_dim in C)", name, at_bad, why, span,
      decl[0] ? "It holds away from them: declare " : "No range of one symbol leaves them out with the example's size in: "
      "trace with ", decl[0] ? decl : "one of them fixed");
  return refuse_at_call(rc, bad, call, msg);
}

/* Runs the model at point p (not the example's sizes): where it does another thing than the
 * trace, refused (refuse_point). Where it fails, or makes more calls than the check runs, it
 * says nothing: no answer to give, or past what runs. false when the trace ended. */
static bool check_point(run_ctx *rc, om_point p) {
  om_trace *tr = rc->tr;
  int64_t v[64], v0[64], call;
  char why[320];
  const char *name;
  om__run_example(tr, v0);
  if (!point_at(tr, p, v) || !memcmp(v, v0, sizeof(int64_t) * (size_t)tr->symbols.n)) return true;
  int r = range_run(rc, v, why, sizeof why, &call, &name);
  if (r == RANGE_ENDED) return false;
  return r != RANGE_DIFFERS || refuse_point(rc, p, v, why, call, name);
}

/* The diagonals the points lie on: each pair of symbols, and the symbols of each input that has
 * three or more (all equal), into masks (at most cap); their count. */
static int diagonals(const om_trace *tr, uint64_t *masks, int cap) {
  int n = 0;
  for (int k = 0; k < tr->symbols.n; k++)
    for (int j = k + 1; j < tr->symbols.n && n < cap; j++) masks[n++] = (uint64_t)1 << k | (uint64_t)1 << j;
  for (int i = 0; i < tr->g.inputs.n && n < cap; i++) {
    const om_gvalue *x = &tr->g.values.v[tr->g.inputs.v[i]];
    uint64_t m = 0;
    for (int d = 0; d < x->ndim; d++)
      if (x->ext[d] >= 0) m |= tr->xs.v[x->ext[d]].syms;
    bool seen = __builtin_popcountll(m) < 3;
    for (int q = 0; q < n && !seen; q++) seen = masks[q] == m;
    if (!seen) masks[n++] = m;
  }
  return n;
}

/* The sizes x on p.mask's diagonal from lo to hi (multiples of step) where expression e is t,
 * as [*a, *b]: e is taken to be monotone along it (a convolution's, a patch grid's, a
 * concatenation's extent is), found by bisection and checked, so that a form that is not
 * monotone gives no point where e is not t (only, perhaps, misses one). false when none. */
static bool solve(const om_trace *tr, int e, uint64_t mask, int64_t lo, int64_t hi, int64_t step, int64_t t, int64_t *a,
                  int64_t *b) {
  int64_t v[64], n = (hi - lo) / step, f0, fn;
#define EVAL(i, out) (point_at(tr, (om_point){mask, lo + (i) * step}, v) && om__x_eval(tr, e, v, (out)))
  if (n < 1 || !EVAL(0, &f0) || !EVAL(n, &fn) || f0 == fn) return false;
  int64_t sign = f0 < fn ? 1 : -1, first[2]; /* the first i where sign * e >= sign * t, then > */
  for (int strict = 0; strict < 2; strict++) {
    int64_t l = 0, h = n + 1, f;
    while (l < h) { /* invariant: below l it is below t (strict: at most t), from h on not */
      int64_t mid = l + (h - l) / 2;
      if (!EVAL(mid, &f)) return false;
      if (strict ? sign * f > sign * t : sign * f >= sign * t) h = mid;
      else l = mid + 1;
    }
    first[strict] = l;
  }
  int64_t fa, fb;
  if (first[0] > n || first[1] <= first[0] || !EVAL(first[0], &fa) || !EVAL(first[1] - 1, &fb) || fa != t || fb != t)
    return false;
#undef EVAL
  *a = lo + first[0] * step, *b = lo + (first[1] - 1) * step;
  return true;
}

/* Adds c to the sizes t (n of them, at most cap) unless it is there; the new count. */
static int add_target(int64_t *t, int n, int cap, int64_t c) {
  for (int q = 0; q < n; q++)
    if (t[q] == c) return n;
  if (n < cap) t[n++] = c;
  return n;
}

/* The sizes a constant or parameter of the model has on an axis (its rows, its channels), and
 * one less (a table of positions with a class token's row: 197 rows for 196 patches), once each,
 * into t (at most cap); their count. */
static int constant_axes(const om_trace *tr, int64_t *t, int cap) {
  int n = 0;
  for (int i = 0; i < tr->g.inits.n; i++) {
    const om_gvalue *x = &tr->g.values.v[tr->g.inits.v[i].value];
    if (tr->g.inits.v[i].generated) continue; /* a shape operand the lowering made: sizes, not a table */
    for (int d = 0; d < x->ndim; d++)
      if (x->shape[d] >= 2) n = add_target(t, add_target(t, n, cap, x->shape[d]), cap, x->shape[d] - 1);
  }
  for (int i = 0; i < tr->params.n; i++) /* the model's own, also where only a slice of one is captured */
    for (int d = 0; d < tr->params.v[i].view->ndim; d++) {
      int64_t c = tr->params.v[i].view->shape[d];
      if (c >= 2) n = add_target(t, add_target(t, n, cap, c), cap, c - 1);
    }
  return n;
}

/* A branch taken at a point off the lines check_range runs along (ViT's `if npatch == N and h ==
 * w`: square images of one patch count; `T == n_positions`) is found at runs there: (a) on the
 * diagonals (diagonals()) at every size within OM_POINT_WINDOW of each example and at sizes
 * spread geometrically to the far end; (b) on each extent's own lines and on its symbols'
 * diagonal, at the first and the last size where it equals an axis of a constant of the model
 * or one less (constant_axes). Where the model does another thing there, refused (refuse_point),
 * never silently wrong. false when the trace ended. */
static bool check_points(run_ctx *rc) {
  om_trace *tr = rc->tr;
  if (tr->split_sym >= 0 || tr->answers || !tr->symbols.n) return true;
  uint64_t masks[32];
  int n_masks = diagonals(tr, masks, 32);
  int64_t v[64];
  for (int q = 0; q < n_masks; q++) {
    int64_t step = point_step(tr, masks[q]), lo = 1, hi = INT64_MAX;
    if (!step) continue;
    for (int k = 0; k < tr->symbols.n; k++) {
      const om_symbol *s = &tr->symbols.v[k];
      if (!(masks[q] >> k & 1)) continue;
      om__run_example(tr, v);
      int64_t far = far_variable(s, v[k]) * s->multiple;
      lo = s->min > lo ? s->min : lo, hi = far < hi ? far : hi;
    }
    lo = (lo + step - 1) / step * step;
    for (int k = 0; k < tr->symbols.n; k++) /* every size near each example */
      for (int64_t i = -OM_POINT_WINDOW; (masks[q] >> k & 1) && i <= OM_POINT_WINDOW; i++) {
        int64_t x = (tr->symbols.v[k].size / step + i) * step;
        bool near_earlier = false; /* run already, near an example before it */
        for (int j = 0; j < k && !near_earlier; j++)
          near_earlier = (masks[q] >> j & 1) && x >= (tr->symbols.v[j].size / step - OM_POINT_WINDOW) * step &&
                         x <= (tr->symbols.v[j].size / step + OM_POINT_WINDOW) * step;
        if (x >= lo && x <= hi && !near_earlier && !check_point(rc, (om_point){masks[q], x})) return false;
      }
    for (int64_t i = 1; lo <= hi && i <= (hi - lo) / step; i = 2 * i + 1) /* and spread to the far end */
      if (!check_point(rc, (om_point){masks[q], lo + i * step})) return false;
    if (hi >= lo && !check_point(rc, (om_point){masks[q], hi / step * step})) return false;
  }
  int64_t targets[OM_POINT_TARGETS];
  int n_targets = constant_axes(tr, targets, OM_POINT_TARGETS), n_points = 0;
  om_point *points = n_targets ? malloc(sizeof *points * OM_POINTS_SOLVED) : NULL;
  if (n_targets && !points) return om__trace_fail(OM_ERR_OUT_OF_MEMORY, "trace_run: out of memory");
  for (int i = 0; i < tr->extents.n && n_points < OM_POINTS_SOLVED; i++) {
    int e = tr->extents.v[i];
    uint64_t syms = tr->xs.v[e].syms;
    for (int line = 0; syms && line <= tr->symbols.n && n_points < OM_POINTS_SOLVED; line++) {
      uint64_t mask = line < tr->symbols.n ? (uint64_t)1 << line : syms; /* each symbol alone, then all of e's */
      if (!(syms & mask) || (line == tr->symbols.n && __builtin_popcountll(syms) < 2)) continue;
      int64_t step = point_step(tr, mask), lo = 1, hi = INT64_MAX;
      for (int k = 0; step && k < tr->symbols.n; k++) {
        const om_symbol *s = &tr->symbols.v[k];
        if (!(mask >> k & 1)) continue;
        om__run_example(tr, v);
        int64_t far = far_variable(s, v[k]) * s->multiple;
        lo = s->min > lo ? s->min : lo, hi = far < hi ? far : hi;
      }
      lo = step ? (lo + step - 1) / step * step : 0;
      for (int t = 0; step && t < n_targets && n_points < OM_POINTS_SOLVED; t++) {
        int64_t ends[2];
        if (!solve(tr, e, mask, lo, hi, step, targets[t], &ends[0], &ends[1])) continue;
        for (int w = 0; w < 2 && n_points < OM_POINTS_SOLVED; w++) {
          bool seen = false;
          for (int p = 0; p < n_points && !seen; p++) seen = points[p].mask == mask && points[p].x == ends[w];
          if (!seen) points[n_points++] = (om_point){mask, ends[w]};
        }
      }
    }
  }
  bool ok = true;
  for (int p = 0; ok && p < n_points; p++) ok = check_point(rc, points[p]);
  free(points);
  return ok;
}

static bool check_whole_range(om_trace *tr, const om_symbol *declared, om_trace_fn fn, void *ctx, int max_outputs,
                              uint64_t seed, uint64_t offset) {
  for (int k = 0; k < tr->symbols.n; k++) {
    om_symbol *s = &tr->symbols.v[k];
    s->checked_min = s->checked_max = s->size;
    for (int r = 0; r < tr->runs.n; r++) {
      const om_run *run = &tr->runs.v[r];
      if (run->n_outputs < 0 || run->dropped || !inside(tr, run)) continue;
      if (run->v[k] * s->multiple < s->checked_min) s->checked_min = run->v[k] * s->multiple;
      if (run->v[k] * s->multiple > s->checked_max) s->checked_max = run->v[k] * s->multiple;
    }
  }
  if (tr->base.n_outputs < 0) return true;
  om_thread_state *st = om__state();
  uint64_t after = st->rng_seed, after_offset = st->rng_offset;
  run_ctx rc = {.tr = tr, .declared = declared, .fn = fn, .ctx = ctx, .max_outputs = max_outputs, .seed = seed, .offset = offset};
  if (!(rc.scratch = calloc((size_t)max_outputs, sizeof *rc.scratch)))
    return om__trace_fail(OM_ERR_OUT_OF_MEMORY, "trace_run: out of memory");
  bool ok = check_range(&rc) && check_below_minimums(&rc) && check_above_maximums(&rc) && check_pairs(&rc) &&
            check_points(&rc);
  free(rc.scratch);
  st->rng_seed = after, st->rng_offset = after_offset;
  for (int k = 0; ok && k < tr->symbols.n; k++) { /* a range that ended inside what was checked */
    om_symbol *s = &tr->symbols.v[k];
    if (s->checked_max > s->max) s->checked_max = s->max;
    if (s->checked_min < s->min) s->checked_min = s->min;
  }
  return ok;
}

/* ---- ranges narrowed where the model fails (docs/symbolic-axes.md, "Where the model fails") ---- */

#define OM_WINDOW 24 /* the sizes each side of the example where the model runs at every one */

/* Whether the model answers (returns, whatever it does) at the variables v: 1, 0, -1 when the
 * trace ended. */
static int answers_at(run_ctx *rc, const int64_t *v) {
  int r = verdict_at(rc, v);
  return r == RANGE_ENDED ? -1 : r != RANGE_FAILS;
}

/* The sizes where the model answers, as a declaration gives them: the variable of a symbol a
 * multiple of m from lo to hi (in the declared variable's units). */
typedef struct answer_set {
  int64_t m, lo, hi;
} answer_set;

static int64_t gcd64(int64_t a, int64_t b) {
  while (b) {
    int64_t r = a % b;
    a = b, b = r;
  }
  return a;
}

/* Whether variable x of a symbol is in set a. */
static bool in_set(const answer_set *a, int64_t x) { return x >= a->lo && x <= a->hi && x % a->m == 0; }

/* Symbol k's sizes where the model answers, the others at the example's, into *a: at every size
 * within OM_WINDOW of the example (which shows the multiple: the smallest step between sizes
 * where it answers), then along the multiples down to the declared minimum and up to the far end
 * (far_variable), bisected to where it stops answering, and at sizes spread outside that set,
 * where it must fail. 1 when found; 0 when the sizes are none a declaration gives (*yes: a size
 * where the model answers that the set would leave out, or *no: one where it fails between sizes
 * where it answers; -1 otherwise); -1 when the trace ended. */
static int answer_set_of(run_ctx *rc, int k, answer_set *a, int64_t *yes, int64_t *no) {
  om_trace *tr = rc->tr;
  const om_symbol *d = &rc->declared[k];
  int64_t v0[64], v[64];
  om__run_example(tr, v0);
  memcpy(v, v0, sizeof v);
  int64_t x0 = v0[k], from = x0 - OM_WINDOW < d->vmin ? d->vmin : x0 - OM_WINDOW;
  int64_t to = d->vmax - x0 < OM_WINDOW ? d->vmax : x0 + OM_WINDOW, far = far_variable(d, x0), m = 0, lo = x0, hi = x0;
  bool seen[2 * OM_WINDOW + 1];
  int r;
  *yes = *no = -1;
#define RUN_AT(x) do { v[k] = (x); if ((r = answers_at(rc, v)) < 0) return -1; } while (0)
  for (int64_t x = from; x <= to; x++) {
    r = 1;
    if (x != x0) RUN_AT(x);
    if ((seen[x - from] = r)) m = gcd64(m, x > x0 ? x - x0 : x0 - x), lo = x < lo ? x : lo, hi = x > hi ? x : hi;
  }
  if (!m) m = 1; /* only the example: one size */
  if (x0 % m) return *yes = lo != x0 ? lo : hi, 0; /* sizes no multiple declares (odd ones) */
  for (int64_t x = from; x <= to; x++)
    if (seen[x - from] != (x % m == 0 && x >= lo && x <= hi)) return *(seen[x - from] ? yes : no) = x, 0;
  if (lo == from && lo - m >= d->vmin) { /* it answers to the window's end: on down the multiples, then bisected */
    int64_t ok = lo, bad = -1, end = (d->vmin + m - 1) / m * m; /* bad: where it fails; end: the smallest multiple */
    for (int64_t step = m; bad < 0 && ok > end; step *= 2) {
      int64_t x = ok - step < end ? end : ok - step;
      RUN_AT(x);
      *(r ? &ok : &bad) = x;
    }
    if (bad < 0) bad = end - m; /* it answers down to the end */
    for (int64_t between; (between = (ok - bad - 1) / m) > 0;) {
      int64_t mid = ok - (between + 1) / 2 * m;
      RUN_AT(mid);
      *(r ? &ok : &bad) = mid;
    }
    lo = ok;
  }
  if (hi == to && hi + m <= far) { /* and up, to the far end */
    int64_t ok = hi, bad = -1, end = far / m * m;
    for (int64_t step = m; bad < 0 && ok < end; step *= 2) {
      int64_t x = ok + step > end ? end : ok + step;
      RUN_AT(x);
      *(r ? &ok : &bad) = x;
    }
    if (bad < 0) bad = end + m;
    for (int64_t between; (between = (bad - ok - 1) / m) > 0;) {
      int64_t mid = ok + (between + 1) / 2 * m;
      RUN_AT(mid);
      *(r ? &ok : &bad) = mid;
    }
    hi = ok == end ? d->vmax : ok; /* it answers to the far end: to the declared maximum */
  }
  *a = (answer_set){.m = m, .lo = lo, .hi = hi};
  /* outside the set it fails: below it at up to 16 sizes (every one when they are that few, else
   * spread down to the declared minimum itself: a broadcast against n answers at 1), and above it
   * and between the multiples at sizes spread to the far end */
  int64_t below = lo - d->vmin, above = hi < far ? hi + 1 : far + 1;
  for (int64_t i = 0; i < 16 && i < below; i++) {
    int64_t x = below <= 16 ? d->vmin + i : i == 15 ? d->vmin : lo - 1 - i * below / 16;
    if (x >= from && x <= to) continue;
    RUN_AT(x);
    if (r) return *yes = x, 0;
  }
  for (int64_t step = 1; above + step - 1 <= far; step *= 2) {
    int64_t x = above + step - 1;
    if (x <= to) continue;
    RUN_AT(x);
    if (r) return *yes = x, 0;
  }
  for (int64_t step = 2 * OM_WINDOW; m > 1 && x0 + step + m <= hi && x0 + step + m <= far; step *= 4) {
    RUN_AT(x0 + step + 1); /* x0 + step is a multiple: one past it is not */
    if (r) return *yes = x0 + step + 1, 0;
  }
#undef RUN_AT
  return 1;
}

/* Sizes of the declared ranges the narrowed sets leave out, several symbols moved at once: at
 * each, the model must fail (a set found with the other symbols at their examples may leave out
 * sizes where it answers with them elsewhere: h and w need h + w even; a maximum of one may
 * leave out sizes where it answers with another smaller, as GPT-2's causal mask bounds the
 * query's and the past's lengths together, L + P at most its buffer's: so one past each maximum,
 * each other symbol at the smallest size where it answers). *out gets the variables of one where
 * it answers, and *bound the symbols bounded together there (the one past its maximum, then the
 * other; -1 for others). 1 when none does, 0 when one does, -1 when the trace ended. */
static int fails_outside(run_ctx *rc, const answer_set *sets, uint64_t narrowed, int64_t *out, int *bound) {
  om_trace *tr = rc->tr;
  int n = tr->symbols.n;
  int64_t v0[64], v[64];
  om__run_example(tr, v0);
  for (int k = 0; k < n; k++) {
    if (!(narrowed >> k & 1) || sets[k].hi >= rc->declared[k].vmax) continue;
    for (int j = 0; j < n; j++) {
      if (j == k || v0[j] <= sets[j].lo) continue;
      memcpy(v, v0, sizeof(int64_t) * (size_t)n);
      v[k] = sets[k].hi + 1, v[j] = sets[j].lo;
      int r = answers_at(rc, v);
      if (r < 0) return -1;
      if (r) return memcpy(out, v, sizeof(int64_t) * (size_t)n), bound[0] = k, bound[1] = j, 0;
    }
  }
  bound[0] = bound[1] = -1;
  static const int64_t offsets[] = {1, -1, 2, -2, 3, 5, -3};
  for (int t = 0; t < 24; t++) {
    bool outside = false;
    for (int k = 0; k < n; k++) {
      const om_symbol *d = &rc->declared[k];
      int64_t x = v0[k] + offsets[(t + 3 * k) % 7] * (t / 7 + 1);
      v[k] = x < d->vmin ? d->vmin : x > d->vmax ? d->vmax : x;
      outside |= (narrowed >> k & 1) && !in_set(&sets[k], v[k]);
    }
    bool moved = false; /* more than one symbol: one alone was checked by answer_set_of */
    for (int k = 0, c = 0; k < n; k++) moved |= (c += v[k] != v0[k]) > 1;
    if (!outside || !moved) continue;
    int r = answers_at(rc, v);
    if (r < 0) return -1;
    if (r) return memcpy(out, v, sizeof(int64_t) * (size_t)n), 0;
  }
  return 1;
}

/* The sizes where the model answers are no declaration's, but symbol k's are size 1 and others
 * that leave out 2 (a broadcast against a constant n answers at 1 and n only): the trace is cut
 * at 2 (branch.c), size 1 a piece of its own and the sizes from 2 one that narrows as a trace
 * of its own does (to n alone), joined by an If that fails at the sizes the pieces leave out
 * (docs/symbolic-axes.md, "Size 1 and n"). 1 when cut, 0 when not, -1 when the trace ended. */
static int cut_at_one(run_ctx *rc, int k) {
  om_trace *tr = rc->tr;
  const om_symbol *d = &rc->declared[k];
  int64_t v[64];
  om__run_example(tr, v);
  if (d->multiple != 1 || d->vmin != 1 || d->vmax < 2 || v[k] < 2) return 0;
  v[k] = 1;
  int r = answers_at(rc, v);
  if (r <= 0) return r;
  v[k] = 2;
  if (v[k] < tr->symbols.v[k].size && (r = answers_at(rc, v)) != 0) return r < 0 ? -1 : 0;
  int64_t good[64] = {0}, bad[64] = {0};
  good[k] = 1, bad[k] = 2;
  return om__branch_split(tr, (uint64_t)1 << k, good, bad, true);
}

/* The trace is refused where the model fails (tr->fail_msg): unless the sizes where the model
 * answers are a declaration's (answer_set_of each symbol that moved where it fails) that leaves
 * out where it fails and no size where it answers, then declared (the ranges the record run
 * begins with, and the reason: traced.symbols' narrowedBy) to trace again. 1: declared, 0:
 * refused with the reason appended (at the model's call that failed, so that in JS the error
 * names its source line), 2: cut at size 2 (cut_at_one), -1: the trace ended otherwise. */
static int narrow_where_fails(run_ctx *rc, om_symbol *ranges) {
  om_trace *tr = rc->tr;
  int n = tr->symbols.n;
  int64_t v0[64], at[64];
  om__run_example(tr, v0);
  answer_set sets[64];
  uint64_t narrowed = 0;
  bool left_out = false; /* where it fails is outside a set */
  char reason[720] = "", sizes[160];
  for (int k = 0; k < n && !reason[0]; k++) {
    sets[k] = (answer_set){.m = 1, .lo = ranges[k].vmin, .hi = ranges[k].vmax};
    if (tr->fail_at[k] == v0[k]) continue;
    int64_t yes, no;
    int r = answer_set_of(rc, k, &sets[k], &yes, &no);
    if (r < 0) return -1;
    if (!r && (r = cut_at_one(rc, k)) != 0) return r < 0 ? -1 : 2;
    if (!r) {
      memcpy(at, v0, sizeof at);
      at[k] = yes >= 0 ? yes : no >= 0 ? no : tr->fail_at[k];
      om__run_sizes(tr, at, (uint64_t)1 << k, sizes, sizeof sizes);
      snprintf(reason, sizeof reason, "; the sizes where the model answers are no range, multiple or one size that om.Dim "
               "declares (%s %s)", yes >= 0 ? "it answers at" : "it fails at", sizes);
      if (no >= 0) snprintf(reason + strlen(reason) - 1, sizeof reason - strlen(reason) + 1, ", between sizes where it answers)");
      break;
    }
    if (sets[k].m > 1 || sets[k].lo > ranges[k].vmin || sets[k].hi < ranges[k].vmax) narrowed |= (uint64_t)1 << k;
    left_out |= !in_set(&sets[k], tr->fail_at[k]);
  }
  int bound[2] = {-1, -1};
  int r = !reason[0] && left_out ? fails_outside(rc, sets, narrowed, at, bound) : 0;
  if (r < 0) return -1;
  if (!reason[0] && left_out && !r && bound[0] >= 0) { /* a box holds: k to its maximum, the other to its example */
    char decl[300];
    size_t len = dim_declaration(decl, sizeof decl, 0, &ranges[bound[0]], ranges[bound[0]].min, sets[bound[0]].hi * ranges[bound[0]].multiple);
    dim_declaration(decl, sizeof decl, len, &ranges[bound[1]], ranges[bound[1]].min, v0[bound[1]] * ranges[bound[1]].multiple);
    snprintf(reason, sizeof reason, "; it answers at %s: the sizes where it answers are bounded together, which no range of "
             "each that om.Dim declares leaves out alone; it holds where %s declares", om__run_sizes(tr, at, ~(uint64_t)0, sizes, sizeof sizes), decl);
  } else if (!reason[0] && left_out && !r) {
    snprintf(reason, sizeof reason, "; the sizes where the model answers are no range, multiple or one size that om.Dim "
             "declares (it answers at %s)", om__run_sizes(tr, at, ~(uint64_t)0, sizes, sizeof sizes));
  }
  if (r) {
    for (int k = 0; k < n; k++) {
      if (!(narrowed >> k & 1)) continue;
      om_symbol *s = &ranges[k];
      int64_t multiple = s->multiple * sets[k].m, min = sets[k].lo * s->multiple;
      int64_t max = sets[k].hi == s->vmax ? s->max : sets[k].hi * s->multiple;
      if (min > s->min || multiple > s->multiple) s->min_why = tr->fail_why, s->min_site = tr->fail_site;
      if (max < s->max) s->max_why = tr->fail_why, s->max_site = tr->fail_site;
      s->multiple = multiple, s->min = min, s->max = max;
      s->vmin = (min + multiple - 1) / multiple, s->vmax = max / multiple;
    }
    return 1;
  }
  /* refused: at the model's call that failed, where a run there reaches it */
  const char *msg = om__arena_printf(&tr->g.arena, "%s%s", tr->fail_msg, reason);
  if (!msg) return om__trace_fail(OM_ERR_OUT_OF_MEMORY, "trace_run: out of memory"), -1;
  if (tr->fail_site) {
    tr->stop_call = tr->fail_site->call, tr->stop_msg = msg;
    if (verdict_at(rc, tr->fail_site->v) == RANGE_ENDED) return 0;
    tr->stop_msg = NULL;
  }
  /* the last run is one at the example, which answers: a caller that keeps the exception of a
   * run that failed for the refusal (JS) has none to keep */
  if (answers_at(rc, v0) < 0) return -1;
  tr->phase = OM_PHASE_RECORD;
  return om__trace_fail(OM_ERR_TRACE_SYMBOLIC_SHAPE, "%s", msg), 0;
}

/* The base run (which calls are live) and the runs at other sizes om_trace_run begins with: near
 * and small ones (run_sizes), then far ones (far_sizes). false when the trace ended. */
static bool first_runs(const run_ctx *rc) {
  om_trace *tr = rc->tr;
  tr->base.n_outputs = -1;
  if (!tr->symbols.n) return true;
  om__run_example(tr, tr->base.v);
  om_thread_state *st = om__state();
  st->rng_seed = rc->seed, st->rng_offset = rc->offset;
  if (!spare_take(tr, &tr->base) && !run_other(tr, &tr->base, rc->fn, rc->ctx, rc->scratch, rc->max_outputs)) return false;
  int far = 1 + (tr->symbols.n < OM_FAR_ALONE ? tr->symbols.n : OM_FAR_ALONE);
  for (int r = 0; r < OM_RUNS + far; r++) {
    int64_t v[64] = {0};
    if (r < OM_RUNS) run_sizes(tr, r + 1, v);
    else if (!far_sizes(tr, r - OM_RUNS, v)) continue;
    if (!add_run(rc, v, r >= OM_RUNS)) return false;
  }
  return true;
}

/* Frees a run's log. */
static void run_free(om_run *run) {
  free(run->calls.v);
  free(run->pool.v);
  free(run->live.v);
  memset(run, 0, sizeof *run);
}

void om__runs_free(om_trace *tr) {
  run_free(&tr->base);
  for (int r = 0; r < tr->runs.n; r++) run_free(&tr->runs.v[r]);
  for (int r = 0; r < tr->spare.n; r++) run_free(&tr->spare.v[r]);
  free(tr->runs.v);
  free(tr->spare.v);
}

/* Moves run's log to the spare runs, its variables as sizes (the symbols' multiples are those it
 * ran with), and empties run; out of memory, frees it (made again where it is wanted). */
static void spare_keep(om_trace *tr, om_run *run) {
  for (int k = 0; k < tr->symbols.n; k++) run->v[k] *= tr->symbols.v[k].multiple;
  om_run *slot = OM_VEC_PUSH_SLOT(tr->spare);
  if (!slot) {
    run_free(run);
    return;
  }
  *slot = *run;
  memset(run, 0, sizeof *run);
}

/* Begins the trace again with the symbols as ranges has them (narrowed where the model fails):
 * the variables are other sizes now, so every expression goes (om__x_reset), the inputs' extents
 * are made again, and so are the runs, each taken from the runs so far where one ran at its sizes
 * (spare_take). false when the trace ended. */
static bool begin_again(const run_ctx *rc, const om_symbol *ranges) {
  om_trace *tr = rc->tr;
  om_graph *g = &tr->g;
  spare_keep(tr, &tr->base); /* the runs' logs, for first_runs and add_run to take again */
  for (int r = 0; r < tr->runs.n; r++) spare_keep(tr, &tr->runs.v[r]);
  tr->runs.n = 0;
  memcpy(tr->symbols.v, ranges, sizeof *ranges * (size_t)tr->symbols.n);
  for (int k = 0; k < g->inputs.n; k++) /* each symbolic axis's symbol, in its extent's place, before they go */
    for (int d = 0; d < g->values.v[g->inputs.v[k]].ndim; d++) {
      int *x = &g->values.v[g->inputs.v[k]].ext[d];
      if (*x >= 0) *x = __builtin_ctzll(tr->xs.v[*x].syms);
    }
  om__x_reset(tr);
  for (int k = 0; k < g->inputs.n; k++)
    for (int d = 0; d < g->values.v[g->inputs.v[k]].ndim; d++) {
      om_gvalue *in = &g->values.v[g->inputs.v[k]];
      if (in->ext[d] < 0) continue;
      if ((in->ext[d] = om__x_sym(tr, in->ext[d])) < 0 || !(in->dim_param[d] = om__x_name(tr, in->ext[d])))
        return om__trace_fail(OM_ERR_OUT_OF_MEMORY, "trace_run: out of memory");
      om__x_extent(tr, in->ext[d]);
    }
  for (int k = 0; k < tr->symbols.n; k++) tr->symbols.v[k].extent_node = tr->symbols.v[k].extent_value = -1;
  tr->extended = tr->more_syms = 0;
  tr->more_at_n = tr->rounds = tr->edge_runs = tr->edge_rounds = 0;
  tr->more = false;
  tr->fail_msg = NULL;
  tr->narrowings++;
  return first_runs(rc);
}

/* The symbols' ranges as the record run narrowed them, into ranges (the next record run's). */
static void take_ranges(const om_trace *tr, om_symbol *ranges) {
  for (int k = 0; k < tr->symbols.n; k++) {
    const om_symbol *s = &tr->symbols.v[k];
    om_symbol *r = &ranges[k];
    r->multiple = s->multiple, r->min = s->min, r->max = s->max, r->vmin = s->vmin, r->vmax = s->vmax;
    r->min_why = s->min_why, r->max_why = s->max_why, r->min_site = s->min_site, r->max_site = s->max_site;
  }
}

/* After the range check: where it (or the record run's probe) raised a symbol's minimum where
 * the model fails, the ranges take the narrowed symbols, so that the trace begins again with
 * them, as if declared: what the record run wrote for sizes now outside (a Reshape computed in
 * case a leading axis is empty below them) is written for the range that holds. true then;
 * false when none was raised or the trace began again too often. */
static bool raised_minimums(const om_trace *tr, om_symbol *ranges) {
  bool raised = false;
  for (int k = 0; k < tr->symbols.n; k++) raised |= tr->symbols.v[k].vmin > ranges[k].vmin;
  if (!raised || tr->narrowings >= OM_NARROWINGS) return false;
  take_ranges(tr, ranges);
  return true;
}

/* Whether the model of the pieces (tr->branched) holds at the sizes where the record run or the
 * range check saw the model answer outside a narrowed range (tr->answers_v). A cut there
 * (om__branch_below) traces the piece below with the other symbols at their examples, and each
 * of its sizes alone where that piece fails; where the model fails at all of them so, the range
 * ends above them again: random model 24:20939's row 2 of B rows (none below B = 3), its T - 2
 * columns reshaped to [1, T - 2, 1, 6], fails at B = 2 for the example's T = 7 and answers at
 * T = 1 and 2 (empty), which no piece with a symbolic T can be traced at. */
static bool branched_answers(const om_trace *tr) {
  const om_traced_model *m = tr->branched;
  for (int k = 0; m && k < tr->symbols.n; k++) {
    int64_t size = tr->answers_v[k] * tr->symbols.v[k].multiple;
    for (int j = 0; j < m->n_symbols; j++) {
      const om_traced_sym *q = &m->symbols[j];
      if (strcmp(q->name, tr->symbols.v[k].name)) continue;
      if (size < q->min || size > q->max || size % q->multiple) return false;
    }
  }
  return true;
}

/* The most elements the re-example (absent.c) may make, as a multiple of the example's: the model
 * is traced again there with real tensors, so that bounds what the trace costs next to tracing
 * at the example (SAM's encoder traced at 2 x 80 x 40 re-examples at 2 x 80 x 48, 60 tokens to
 * the example's 50, instead of 21 x 647 x 329, a far run that pads too, whose global attention
 * alone is 3.6 GB). */
#define OM_REEXAMPLE_GROWTH 8

/* The steps above the example the search for a cheaper re-example tries, per symbol: near ones
 * every size (a window's padding appears one size up), then spread out (a patch times a window). */
static const int64_t reexample_steps[] = {0, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128};

/* The runs tell the sizes where the model makes calls the example's run lacks (absent.c), and of
 * those the cheapest run's (tr->reexample_v); those are often far runs, every symbol at 8 times
 * its example. This moves each symbol in turn down towards its example, one shape-only run at a
 * time at the example plus each of reexample_steps, and keeps the first size at which the run
 * still makes as many calls (om__run_neutral takes it: of the runs with the most calls, the one of
 * the fewest elements). Then, where even that run makes more than OM_REEXAMPLE_GROWTH times the
 * example's elements, the model is not traced again there (the trace goes on as without it).
 * The runs are apart from the trace's (no fit reads them). false when the trace ended. */
static bool cheaper_reexample(const run_ctx *rc) {
  om_trace *tr = rc->tr;
  if (!tr->reexample || tr->reexampled) return true;
  om_thread_state *st = om__state();
  int64_t v0[64], calls = tr->calls;
  om_trace_phase phase = tr->phase;
  om_run *cur = tr->cur;
  om__run_example(tr, v0);
  for (int k = 0; k < tr->symbols.n; k++) {
    for (size_t i = 0; i < sizeof reexample_steps / sizeof *reexample_steps; i++) {
      int64_t x = v0[k] + reexample_steps[i];
      if (x >= tr->reexample_v[k]) break;
      if (x < tr->symbols.v[k].vmin || x > tr->symbols.v[k].vmax) continue;
      om_run run = {.n_outputs = -1};
      memcpy(run.v, tr->reexample_v, sizeof run.v);
      run.v[k] = x;
      st->rng_seed = rc->seed, st->rng_offset = rc->offset;
      bool ok = run_other(tr, &run, rc->fn, rc->ctx, rc->scratch, rc->max_outputs);
      run_free(&run);
      if (!ok) return false;
      tr->phase = phase, tr->cur = cur, tr->calls = calls;
      if (tr->reexample_v[k] == x) break; /* as many calls, fewer elements: taken */
    }
  }
  int64_t base = om__run_elements(&tr->base);
  if (base > 0 && tr->reexample_cost / OM_REEXAMPLE_GROWTH > base) tr->reexample = false;
  return true;
}

int om__trace_run(om_trace_fn fn, void *ctx, om_tensor **outputs, int max_outputs, const om_graph_runner *runner) {
  om_trace *tr = om__need_trace("trace_run");
  if (!tr) return -1;
  tr->runner = runner;
  if (!fn || !outputs || max_outputs < 1)
    return om__trace_fail(OM_ERR_TRACE_INVALID_USAGE, "trace_run: needs a function and room for its outputs"), -1;
  if (tr->phase != OM_PHASE_MANUAL || tr->g.nodes.n || tr->calls)
    return om__trace_fail(OM_ERR_TRACE_INVALID_USAGE,
                          "trace_run: the trace has already recorded calls; om_trace_run runs the whole model, "
                          "right after the inputs and parameters are declared"), -1;
  if (!tr->inputs.n || tr->inputs.n > 64)
    return om__trace_fail(OM_ERR_TRACE_INVALID_USAGE, "trace_run: %d inputs declared (om_trace_input; 1 to 64)",
                          tr->inputs.n), -1;
  om_thread_state *st = om__state();
  uint64_t seed = st->rng_seed, offset = st->rng_offset;
  run_ctx rc = {.tr = tr, .fn = fn, .ctx = ctx, .scratch = outputs, .max_outputs = max_outputs, .seed = seed, .offset = offset};
  if (!first_runs(&rc)) return -1;
  /* the record run; when it asks for more runs (om__run_more) it unwinds, the graph and the
   * symbols' ranges go back to how they were, the runs are made, and it records again; where
   * the model fails (om__run_fails_at) it unwinds too, and begins again with the ranges narrowed
   * to where the model answers, or is refused (narrow_where_fails) */
  const int mark[3] = {tr->g.values.n, tr->g.nodes.n, tr->g.inits.n};
  om_symbol *ranges = tr->symbols.n ? om__alloc(sizeof *ranges * (size_t)tr->symbols.n, "trace_run") : NULL;
  if (tr->symbols.n && !ranges) return om__trace_fail(OM_ERR_OUT_OF_MEMORY, "trace_run: out of memory"), -1;
  if (ranges) memcpy(ranges, tr->symbols.v, sizeof *ranges * (size_t)tr->symbols.n);
  rc.declared = ranges;
  /* the ranges the record runs are made in: ranges, or, once the trace began again where runs
   * below the example narrowed a range where the model answers (om__run_narrowed_again), those
   * narrowed ranges, held apart: ranges stays the declaration (narrowed only where the model
   * fails), which the range check, the cuts and the pieces read, so that a threshold below the
   * narrowed minimum is still cut there (an If whose lower piece is traced over the declared
   * sizes) and the narrowing is never taken for a declaration (BigBird traced above its length
   * threshold) */
  om_symbol *rec = ranges, *narrowed = NULL;
  tr->again_from = rec;
  uint32_t id = tr->id;
  int n;
  if (!cheaper_reexample(&rc)) return free(ranges), -1;
  if (tr->reexample && !tr->reexampled) { /* calls the example's run lacks, made elsewhere: traced where it makes them */
    int got = om__branch_reexample(tr, ranges, fn, ctx, outputs, max_outputs, -1, seed, offset);
    if (got != 0) {
      free(ranges);
      if (got > 0) tr->phase = OM_PHASE_RAN;
      return got;
    }
  }
record:
  for (;;) {
    tr->phase = OM_PHASE_RECORD;
    tr->calls = 0;
    tr->kept.n = 0;
    tr->kept_f.n = 0;
    tr->kept_ext.n = 0;
    tr->answers = tr->again_answers; /* what the trace before it began again narrowed (om__run_narrowed_again) */
    tr->answers_site = tr->again_site;
    tr->answers_syms = tr->again_syms;
    tr->answers_any = tr->again_any;
    tr->far_parted = NULL;
    tr->serial++;
    tr->n_probes = 0;
    if (!om__probe_init(tr) || !part_paths(tr, false)) return free(narrowed), free(ranges), -1;
    st->rng_seed = seed, st->rng_offset = offset;
    om_tensor *in[64];
    for (int k = 0; k < tr->inputs.n; k++) stamp_input(tr, in[k] = tr->inputs.v[k].traced, k);
    n = fn(ctx, in, tr->inputs.n, outputs, max_outputs);
    if (n > 0 && ours(id) && !om__trace_sync_all(outputs, n < max_outputs ? n : max_outputs)) {
      om__release_all(outputs, n < max_outputs ? n : max_outputs);
      n = -1;
    }
    if (!still(id)) { /* ended by a trace error inside (or by the model) */
      om__release_all(outputs, n > 0 && n <= max_outputs ? n : 0);
      return free(narrowed), free(ranges), -1;
    }
    if (!tr->more && n >= 0 && n <= max_outputs && !check_ends(tr, outputs, n) && !ours(id)) {
      om__release_all(outputs, n);
      return free(narrowed), free(ranges), -1;
    }
    if (!tr->more) break;
    om__release_all(outputs, n > 0 && n <= max_outputs ? n : 0);
    om_clear_error();
    om__trace_rollback(tr, mark);
    if (tr->again) { /* no fit after a range narrowed where the model works: again, in the narrowed ranges */
      tr->again = false;
      tr->again_answers = tr->answers, tr->again_site = tr->answers_site, tr->again_syms = tr->answers_syms;
      tr->again_any = tr->answers_any;
      if (!narrowed && !(narrowed = om__alloc(sizeof *narrowed * (size_t)tr->symbols.n, "trace_run")))
        return free(ranges), -1;
      if (rec != narrowed) memcpy(narrowed, ranges, sizeof *narrowed * (size_t)tr->symbols.n);
      tr->again_from = rec = narrowed;
      take_ranges(tr, rec);
      if (!begin_again(&rc, rec)) return free(narrowed), free(ranges), -1;
      continue;
    }
    if (tr->fail_msg) { /* the model fails where the record run met it */
      int again = narrow_where_fails(&rc, rec);
      if (again == 2) { /* cut at size 2: the pieces are the trace */
        n = om__branch_run(tr, ranges, fn, ctx, outputs, max_outputs, 0, seed, offset);
        free(narrowed), free(ranges);
        if (n >= 0) tr->phase = OM_PHASE_RAN;
        return n;
      }
      if (again <= 0 || !begin_again(&rc, rec)) return free(narrowed), free(ranges), -1;
      continue;
    }
    int64_t (*more)[64] = malloc(sizeof *more * OM_MORE * 2), n_more = 0; /* chosen in the ranges the record run narrowed */
    if (!more) return free(narrowed), free(ranges), om__trace_fail(OM_ERR_OUT_OF_MEMORY, "trace_run: out of memory"), -1;
    for (int k = 0, moved = 0; k < tr->symbols.n && moved < 2 && tr->more_syms; k++) {
      if (!(tr->more_syms >> k & 1)) continue;
      moved++;
      for (int i = 0; i < OM_MORE && fit_runs(tr) + n_more < OM_RUNS_FIT && more_sizes(tr, k, i, more[n_more]); i++) n_more++;
    }
    tr->more_syms = 0;
    memcpy(tr->symbols.v, rec, sizeof *rec * (size_t)tr->symbols.n);
    for (int r = 0; r < tr->runs.n; r++) tr->runs.v[r].dropped = tr->runs.v[r].looped = false;
    tr->more = false;
    tr->rounds++;
    bool edges_only = !n_more && tr->more_at_n; /* a round for a float product's edges alone */
    for (int q = 0; q < tr->more_at_n; q++) { /* the runs where two fits differ, or at edges */
      edges_only &= tr->more_at_edge[q];
      if (!add_run(&rc, tr->more_at[q], false)) return free(more), free(narrowed), free(ranges), -1;
      tr->edge_runs += tr->more_at_edge[q];
    }
    tr->edge_rounds += edges_only;
    tr->more_at_n = 0;
    for (int64_t i = 0; i < n_more; i++)
      if (!add_run(&rc, more[i], false)) return free(more), free(narrowed), free(ranges), -1;
    free(more);
  }
  free(narrowed); /* the record run is over: what follows reads the declaration (ranges) */
  narrowed = NULL;
  tr->again_from = rec = ranges;
  if (n < 0) { /* the model's own failure: the recording ends, the error stays */
    om_thread_state *s = om__state();
    om_error_kind kind = s->err_kind;
    char msg[sizeof s->err_msg];
    memcpy(msg, s->err_msg, sizeof msg);
    om_trace_abort();
    om__fail(kind, "%s", msg);
    return free(ranges), -1;
  }
  if (n > max_outputs) {
    om__release_all(outputs, max_outputs);
    om__trace_fail(OM_ERR_TRACE_INVALID_USAGE, "trace_run: %d outputs, room for %d", n, max_outputs);
    return free(ranges), -1;
  }
  if (!cheaper_reexample(&rc)) {
    om__release_all(outputs, n);
    return free(ranges), -1;
  }
  if (tr->reexample && !tr->reexampled) { /* calls the example's run lacks, made elsewhere: traced where it makes them */
    int got = om__branch_reexample(tr, ranges, fn, ctx, outputs, max_outputs, n, seed, offset);
    if (got < 0) return free(ranges), -1;
    if (got > 0) {
      free(ranges);
      tr->phase = OM_PHASE_RAN;
      return got;
    }
  }
  /* check_minimums after check_ends (it reads this run's tensors); the whole range before the
   * refusals the runs left (answers below the example, a far run parted): where it finds the
   * threshold it names it exactly */
  if ((tr->base.n_outputs >= 0 && !check_minimums(tr, ranges, fn, ctx, max_outputs)) ||
      !check_whole_range(tr, ranges, fn, ctx, max_outputs, seed, offset)) {
    om__release_all(outputs, n);
    return free(ranges), -1;
  }
  if (tr->split_sym < 0 && !tr->answers && !tr->far_parted && raised_minimums(tr, ranges)) {
    om__release_all(outputs, n);
    om__trace_rollback(tr, mark);
    if (!begin_again(&rc, ranges)) return free(ranges), -1;
    goto record;
  }
  if (tr->split_sym < 0 && tr->answers) om__branch_below(tr, ranges); /* a minimum raised where the model answers: cut there */
  if (tr->split_sym >= 0 && (n = om__branch_run(tr, ranges, fn, ctx, outputs, max_outputs, n, seed, offset)) < 0) {
    /* a cut on the first of two symbols narrowed where the model answers whose pieces cannot be
     * one graph: refused as without the cut, at the call where the runs parted (its line, and the
     * ranges of both symbols), not at om.trace's */
    if (tr->split_first && tr->split_parted && tr->answers) refuse_answers(&rc);
    return free(ranges), -1;
  }
  if (tr->split_sym >= 0 && tr->answers && !branched_answers(tr)) { /* the pieces left out again where the model answered */
    /* a probe's answer is a call's alone (a squeeze that drops the axis at L = 1, where the
     * model fails a call later): the model runs there, and only where it answers is it refused */
    run_ctx again = rc;
    uint64_t after = st->rng_seed, after_offset = st->rng_offset;
    int r = (again.scratch = calloc((size_t)max_outputs, sizeof *again.scratch)) ? answers_at(&again, tr->answers_v)
                                                                                 : (om__trace_fail(OM_ERR_OUT_OF_MEMORY, "trace_run: out of memory"), -1);
    free(again.scratch);
    st->rng_seed = after, st->rng_offset = after_offset;
    if (r) {
      om__release_all(outputs, n);
      if (r > 0) refuse_answers(&rc);
      return free(ranges), -1;
    }
  }
  if (tr->split_sym < 0 && (tr->answers || tr->far_parted)) { /* refused at the call the refusal names */
    om__release_all(outputs, n);
    const om_site *far = tr->far_site;
    if (tr->answers) refuse_answers(&rc);
    else refuse_at_call(&rc, far ? far->v : NULL, far ? far->call : -1, tr->far_parted);
    return free(ranges), -1;
  }
  free(ranges);
  tr->phase = OM_PHASE_RAN;
  return n;
}
