/* Lowering one op call into the recording: the hooks om__apply calls around a call (checking it
 * against the runs at other sizes, fitting its arguments, choosing its outputs' extents, writing
 * its nodes before anything is computed) and the tensors creation functions make at sizes that
 * change (om__trace_created). The constants are in consts.c, the helpers the ops' rules write
 * nodes with in emit.c. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "trace/trace.h"

/* ---- marks and rollback of one call ---- */

/* Marks where the graph stood before call c, so a failure drops what it added. */
static void mark(const om_trace *tr, om_call *c) {
  c->trace_mark[0] = tr->g.values.n;
  c->trace_mark[1] = tr->g.nodes.n;
  c->trace_mark[2] = tr->g.inits.n;
  for (int j = 0; j < OM_MAX_OUTPUTS; j++) c->trace_out[j] = -1;
}

/* The lowering's trace is still recording (a trace error inside it ended it). */

/* ---- the hooks in om__apply ---- */

int64_t om__trace_begin_call(const om_op_def *def, om_call *c, const om_attrs *given) {
  om_trace *tr = om__state()->trace;
  /* A copy stands for its input only where the runs know the input (made in this run: an input
   * or a call's output). A copy of a tensor made before the run (a parameter's clone, torchvision
   * Swin V2's qkv_bias.clone()) is a new tensor in every run: logged as a call, so each run's
   * copy is matched with the record run's by where it was made, not by its address. */
  if (tr && def->same_value && !tr->depth && (tr->phase == OM_PHASE_OTHER || tr->phase == OM_PHASE_RECORD)
      && c->n_in && c->in[0]->trace_run == tr->serial)
    return OM_CALL_SAME_VALUE;
  return tr ? om__run_call(tr, c->op, given, c->in, c->n_in, tr->rc) : -1;
}

/* For a fit that failed with every run: leaves out the runs below the example (far: the far
 * runs, runs.c far_sizes; all: every partner, to restore); whether there were any. A model may
 * compute a size otherwise below the example, as Math.max(1, T - 2) does at T = 1, or switch at a
 * size between the example and a far run (a branch on T > 100: the range check,
 * check_whole_range, finds where). */
static bool without(om_lower *l, const om_runcall **all, bool far) {
  memcpy(all, l->rc, sizeof l->rc);
  bool any = false;
  for (int r = 0; r < l->tr->runs.n; r++)
    if (l->rc[r] && (far ? l->tr->runs.v[r].far : om__run_small(l->tr, r))) l->rc[r] = NULL, any = true;
  return any;
}

/* After a fit without those runs (far as for without): ok, they are dropped, else they are
 * back. Below the example om__run_drop narrows their symbols above their sizes (where the model
 * works there the trace is refused at the end); far runs are refused at the end unless the range
 * check refuses first, at the exact size. what and the values (ivals, else fvals) say why. A run
 * below the example where the fit x (-1: none) gives the value it has stays: it is below the
 * example in another symbol than the one the value switches on (Swin's shift of 0 where H is at
 * most the window, a run at a small W and a large H), which it would narrow for nothing. */
static void settle(om_lower *l, const om_runcall **all, bool far, bool ok, int x, const char *what, const int64_t *ivals,
                   const double *fvals) {
  om_trace *tr = l->tr;
  if (!ok) {
    memcpy(l->rc, all, sizeof l->rc);
    return;
  }
  for (int r = 0; r < tr->runs.n; r++)
    if (all[r] && !l->rc[r]) {
      char sizes[160], val[32];
      if (ivals) snprintf(val, sizeof val, "%lld", (long long)ivals[r]);
      else snprintf(val, sizeof val, "%g", fvals[r]);
      om__run_sizes(tr, tr->runs.v[r].v, ~(uint64_t)0, sizes, sizeof sizes);
      int64_t got;
      if (!far && x >= 0 && ivals && om__x_eval(tr, x, tr->runs.v[r].v, &got) && got == ivals[r]) {
        l->rc[r] = all[r];
        continue;
      }
      if (!far) {
        om__run_drop(tr, r, om__arena_printf(&tr->g.arena, "%s (call %lld): %s is %s at %s", l->who, (long long)tr->calls,
                                             what, val, sizes));
        continue;
      }
      tr->runs.v[r].dropped = true;
      om__run_far_parted(tr, om__arena_printf(&tr->g.arena, "%s: %s is %s at %s, which no size expression that holds at the "
                                              "other sizes gives: the model computes it otherwise there", l->who, what, val, sizes),
                         tr->calls - 1);
    }
}

/* Run r does at call l another thing than the record run (why: what, where): it is no partner
 * of the call. Below the example it narrows the range (om__run_drop; refused at the end where the
 * model answers there, naming the declaration that holds); above it parts, and the range check
 * finds the threshold and the declaration (check_whole_range), or the trace is refused with why. */
static void part_run(om_lower *l, int r, const char *why) {
  om_trace *tr = l->tr;
  l->rc[r] = NULL;
  if (!why || om__run_drop(tr, r, why)) return;
  tr->runs.v[r].dropped = true;
  om__run_far_parted(tr, why, tr->calls - 1);
}

/* The symbols the call's inputs' extents depend on; every symbol for a created tensor. */
static uint64_t used_symbols(const om_lower *l) {
  uint64_t syms = 0;
  for (int i = 0; l->in && i < l->c->n_in; i++)
    for (int d = 0; d < l->c->in[i]->ndim; d++) {
      int x = om__lower_in_ext((om_lower *)l, i, d);
      if (x >= 0) syms |= l->tr->xs.v[x].syms;
    }
  return syms || !l->tr->symbols.n ? syms : ~(uint64_t)0 >> (64 - l->tr->symbols.n);
}

/* Of the symbols in syms, those the values (a0 here, vals[r] in each run with a partner) could be
 * a function of alone: equal sizes give equal values, and larger ones never smaller (or never
 * larger), or some size repeats. Those are the symbols the more runs move (all of syms when none
 * is, or when syms has two or fewer). A size repeated at the example is weaker evidence than one
 * repeated elsewhere: every symbol is at its example in the runs that move another alone (the far
 * runs of one symbol, the more runs), so where the value happens to be the example's there too, a
 * value of another symbol alone repeats there as well (a window's pad of the pooled width at
 * batch 3 looked a function of the batch and the height, which took the more runs first and left
 * the width too few). So where some symbols are seen so elsewhere, only those move. */
static uint64_t moving_symbols(const om_lower *l, uint64_t syms, int64_t a0, const int64_t *vals) {
  const om_trace *tr = l->tr;
  int64_t v0[64];
  om__run_example(tr, v0);
  uint64_t out = 0, elsewhere = 0;
  for (int k = 0; k < tr->symbols.n; k++) {
    if (!(syms >> k & 1)) continue;
    bool up = true, down = true, same = true, repeats = false, repeats_elsewhere = false;
    for (int r = -1; r < tr->runs.n; r++)
      for (int q = r + 1; q < tr->runs.n; q++) {
        if ((r >= 0 && !l->rc[r]) || !l->rc[q]) continue;
        int64_t sa = r < 0 ? v0[k] : tr->runs.v[r].v[k], sb = tr->runs.v[q].v[k], va = r < 0 ? a0 : vals[r], vb = vals[q];
        if (sa == sb) repeats = true, repeats_elsewhere |= sa != v0[k], same &= va == vb;
        if ((sa < sb && va > vb) || (sa > sb && va < vb)) up = false;
        if ((sa < sb && va < vb) || (sa > sb && va > vb)) down = false;
      }
    /* a function of k alone: monotone, or seen equal wherever k repeats (a parity is not monotone) */
    if (same && (up || down || repeats)) out |= (uint64_t)1 << k;
    if (same && (up || down || repeats_elsewhere)) elsewhere |= (uint64_t)1 << k;
  }
  if (elsewhere) out = elsewhere;
  /* two symbols or fewer: both move (a parity can look monotone in the other at a few sizes) */
  return out && __builtin_popcountll(syms) > 2 ? out : syms;
}

/* Whether call l was seen in a run at the sizes v (the form fitted for it held there). */
static bool seen_by_call(const om_lower *l, const int64_t *v) {
  const om_trace *tr = l->tr;
  for (int r = 0; r < tr->runs.n; r++)
    if (l->rc[r] && !memcmp(tr->runs.v[r].v, v, sizeof(int64_t) * (size_t)tr->symbols.n)) return true;
  return false;
}

/* x, a form fitted for call l, once the runs have seen both sides of every switch of a minimum
 * (om__fit_switches); else OM_FIT_ERROR, the model unwinding to run there first, or OM_FIT_NONE
 * where no more runs can be made. */
static int at_switches(om_lower *l, int x) {
  int64_t at[OM_AT_MAX][64];
  int n = om__fit_switches(l, x, at);
  bool asked = false;
  for (int q = 0; q < n; q++) asked |= om__run_more_at(l->tr, at[q]);
  if (n) return asked ? OM_FIT_ERROR : OM_FIT_NONE;
  /* and at a float product's edges: a form the runs never checked there is not taken (a model
   * multiplying by 0.7 may round off at an edge that a run still to be made would show; where no
   * run can be made any more, none is taken, as for a minimum's switches above) */
  n = om__fit_float_edges(l, x, at);
  bool unchecked = false;
  for (int q = 0; q < n; q++)
    if (om__run_more_edge(l->tr, at[q])) asked = true;
    else unchecked |= l->tr->phase == OM_PHASE_RECORD && !seen_by_call(l, at[q]);
  return asked ? OM_FIT_ERROR : unchecked ? OM_FIT_NONE : x;
}

#define SCALED_SCAN 32768 /* the sizes from a symbol's minimum scanned for a scaled form's edges */
#define SCALED_EDGES 2    /* of them, those the runs must have seen (as om__fit_float_edges's each kind) */

/* s * E rounded down (dir 1, Math.floor) or up (dir -1, Math.ceil) as JS computes it. */
static int64_t scaled(int64_t e, double s, int dir) { return dir > 0 ? (int64_t)floor((double)e * s) : -(int64_t)floor((double)-e * s); }

/* Where no form fits an integer call l computed (a0 here, vals in the runs): Math.floor(T * 0.7) or
 * Math.ceil(T * 0.7) of a symbol T with the double nearest a ratio p / q (q <= 24), a product in
 * double that no floor division is at every size (62 at T = 90, where floor(7T / 10) is 63). A
 * form that gives every run's value is taken once the runs have seen the first SCALED_EDGES sizes
 * where it differs from the ratio's floor division (or ceil): the model then computes it there as
 * the double does, not as the ratio (runs at such edges are asked for: OM_FIT_ERROR unwinds). Its
 * expression (floor(double(T) * s), or -floor(double(-T) * s)); OM_FIT_NONE when none holds, or
 * when its edges cannot be run. */
static int scaled_fit(om_lower *l, int64_t a0, const int64_t *vals) {
  om_trace *tr = l->tr;
  int64_t v0[64];
  om__run_example(tr, v0);
  uint64_t syms = used_symbols(l);
  for (int k = 0; k < tr->symbols.n; k++) {
    const om_symbol *sym = &tr->symbols.v[k];
    int64_t e0 = v0[k];
    if (!(syms >> k & 1) || sym->multiple != 1 || e0 < 1 || a0 < 1 || a0 > (int64_t)1 << 40) continue;
    for (int q = 1; q <= 24; q++)
      for (int dir = 1; dir >= -1; dir -= 2)
        for (int64_t p = a0 * q / e0 - 1; p <= a0 * q / e0 + 2; p++) {
          double s = (double)p / (double)q;
          bool fits = p >= 1 && scaled(e0, s, dir) == a0;
          for (int r = 0; fits && r < tr->runs.n; r++) fits = !l->rc[r] || scaled(tr->runs.v[r].v[k], s, dir) == vals[r];
          if (!fits) continue;
          /* its edges: where it is not the ratio's floor (ceil) division */
          int64_t at[SCALED_EDGES][64];
          int n = 0;
          for (int64_t e = sym->vmin; e <= sym->vmax && e < sym->vmin + SCALED_SCAN && e < (int64_t)1 << 40 && n < SCALED_EDGES; e++) {
            int64_t exact = dir > 0 ? e * p / q : (e * p + q - 1) / q;
            if (scaled(e, s, dir) == exact) continue;
            memcpy(at[n], v0, sizeof at[n]);
            at[n++][k] = e;
          }
          if (!n) continue; /* the ratio's own division: a form fit_int takes */
          bool asked = false, unseen = false;
          for (int i = 0; i < n; i++)
            if (!seen_by_call(l, at[i])) asked |= om__run_more_edge(tr, at[i]), unseen = true;
          if (asked) return OM_FIT_ERROR;
          if (unseen) return OM_FIT_NONE;
          int x = om__x_sym(tr, k);
          if (dir > 0) return x < 0 ? OM_FIT_ERROR : om__x_fmul(tr, x, s, l->who);
          int neg = x < 0 ? -1 : om__x_fmul(tr, om__x_lin(tr, -1, x, 0, -1, 0), s, l->who);
          return neg < 0 ? OM_FIT_ERROR : om__x_lin(tr, -1, neg, 0, -1, 0);
        }
  }
  return OM_FIT_NONE;
}

/* om__fit_int for what call l computed (what: "argument 2", "axis 0 of the shape"), without the
 * runs below the example when nothing fits with them, then without the far ones: an expression,
 * OM_FIT_NONE, or OM_FIT_ERROR (an error, or the one that unwinds the model for more runs). */
static int fit_int(om_lower *l, int64_t a0, const int64_t *vals, const char *what) {
  bool floored;
  int64_t at[OM_AT_MAX][64];
  int n_at;
  int x = om__fit_int(l, a0, vals, &floored, at, &n_at);
  const om_runcall *all[OM_RUNS_MAX];
  uint64_t syms = moving_symbols(l, used_symbols(l), a0, vals);
  /* none fits them all, or one only weakly: a size computed otherwise below (an empty tensor at 1) */
  if ((x == OM_FIT_NONE || x == OM_FIT_UNDECIDED) && without(l, all, false)) {
    x = om__fit_int(l, a0, vals, &floored, at, &n_at);
    /* it holds above the small runs, but from which size? the sizes between them and the
     * example first: Math.min(T - 1, 3) at T = 4 is min(T-1,3) there, not 3 from T = 2 */
    if (x >= 0) {
      memcpy(l->rc, all, sizeof l->rc);
      if (om__run_more(l->tr, syms)) return OM_FIT_ERROR;
      without(l, all, false);
    }
    settle(l, all, false, x >= 0, x, what, vals, NULL);
  }
  /* none fits, or a floor division only the runs at more sizes can tell from another: unwinds,
   * and the model runs again at more sizes; two forms that fit: again with a run where they
   * differ */
  if ((x <= OM_FIT_NONE || (x >= 0 && floored)) && om__run_more(l->tr, syms)) return OM_FIT_ERROR;
  bool asked = false;
  for (int q = 0; x == OM_FIT_AMBIGUOUS && q < n_at; q++) asked |= om__run_more_at(l->tr, at[q]);
  if (asked) return OM_FIT_ERROR;
  /* forms that differ only where runs below the example are (a shift of 0 where the height is at
   * most the window: the runs where they differ are asked for, but the run budget is spent) and
   * no run can be made to tell them apart: the form of the runs at and above the example, the
   * runs below where it does not give their value dropped (settle: they narrow the range, and
   * where the model answers there the trace is refused naming the declaration that holds) */
  if (x == OM_FIT_AMBIGUOUS && without(l, all, false)) {
    int y = om__fit_int(l, a0, vals, &floored, at, &n_at);
    settle(l, all, false, y >= 0, y, what, vals, NULL);
    if (y >= 0) x = y;
  }
  if (x == OM_FIT_NONE && without(l, all, true)) {
    x = om__fit_int(l, a0, vals, &floored, at, &n_at);
    settle(l, all, true, x >= 0, x, what, vals, NULL);
  }
  /* a float product rounded (Math.floor(T * 0.7)) that no integer form is, checked at its edges */
  if (x == OM_FIT_NONE) x = scaled_fit(l, a0, vals);
  if (x == OM_FIT_ERROR || (x >= 0 && om__state()->trace != l->tr)) return OM_FIT_ERROR;
  /* a value that moves: checked either side of the switches (one that never moved is taken as it is) */
  return x <= OM_FIT_NONE ? OM_FIT_NONE : om__x_is_const(l->tr, x, NULL) ? x : at_switches(l, x);
}

/* x, a fit of call l's values (a0 here, vals in the runs) that is final (OM_FIT_NONE: the call
 * is refused next), or OM_FIT_ERROR (unwinding) where more runs may still give it a form: first
 * runs where the size the values are a function of takes values the runs did not (the window
 * count of Swin's second stage, ceil(ceil(H / 6) / 5), moves once every 30 image sizes, past the
 * consecutive sizes the runs take: fit.c, om__fit_new_values), then, once runs below the example
 * narrowed a range where the model answers, the trace again in those ranges
 * (om__run_narrowed_again). Only here, where nothing else is tried: fit_int's none is not final
 * where the caller reads the value another way after it (a slice's end as a length, BigBird's
 * -1 that is 34 at seq = 34), and beginning again there narrowed BigBird's range step by step
 * where it answers. */
static int fitted_or_again(om_lower *l, int x, int64_t a0, const int64_t *vals) {
  if (x != OM_FIT_NONE) return x;
  int64_t at[OM_AT_MAX][64];
  bool asked = false;
  for (int q = 0, n_at = om__fit_new_values(l, a0, vals, at); q < n_at; q++) asked |= om__run_more_at(l->tr, at[q]);
  return asked || om__run_narrowed_again(l->tr) ? OM_FIT_ERROR : x;
}

/* om__fit_float the same way; -1 (an error: unwinding for more runs), 0 (no fit), 1. */
static int fit_float(om_lower *l, double v0, const double *vals, om_xfloat *f) {
  const om_runcall *all[OM_RUNS_MAX];
  bool ok = om__fit_float(l, v0, vals, f);
  if (!ok && without(l, all, false)) {
    ok = om__fit_float(l, v0, vals, f);
    settle(l, all, false, ok, -1, "the value", NULL, vals);
  }
  if (!ok) return om__run_more(l->tr, used_symbols(l)) ? -1 : 0;
  int checked = at_switches(l, f->x);
  return checked == OM_FIT_ERROR ? -1 : checked == OM_FIT_NONE ? 0 : 1;
}

/* Keeps argument k of the call going on as expression x (om_kept_arg; out of memory: one
 * argument fewer for check_minimums to compare, which only makes it less strict). */
static void keep_arg(om_trace *tr, int k, int x, bool as_length) {
  om_kept_arg *a = OM_VEC_PUSH_SLOT(tr->kept);
  if (a) *a = (om_kept_arg){.call = tr->calls - 1, .k = k, .x = x, .as_length = as_length};
}

/* A slice's end k = 2, where it fits no form as given, as its start plus its length in the record
 * run (*a0) and in every run (vals; om__slice_end): Longformer's `x[:, :-padding_len]` made only
 * where the padding is not 0 is -5, -4, ... where it is made and the whole axis where it is not
 * (absent.c), which no one form gives as a count from the end (a 0 is an empty slice), while the
 * end the slice takes is T at every size. false where a run's call is not such a slice. */
static bool end_as_length(const om_lower *l, const om_attrs *at, int64_t *a0, int64_t *vals) {
  const om_meta *o = &l->c->out_meta[0];
  if (!om__slice_end(l->c->op, l->given, o->ndim, o->shape, a0)) return false;
  for (int r = 0; r < l->tr->runs.n; r++) {
    int nd;
    int64_t sh[OM_MAX_DIMS];
    if (l->rc[r] && !(om__runcall_output(&l->tr->runs.v[r], l->rc[r], 0, &nd, sh) &&
                      om__slice_end(l->rc[r]->op, &at[r], nd, sh, &vals[r])))
      return false;
  }
  return true;
}

/* Keeps float argument k of the call going on, which moves, as the graph computes it
 * (om_kept_float; out of memory: one fewer for the range's runs to compare, as keep_arg). */
static void keep_float(om_trace *tr, int k, om_xfloat f) {
  om_kept_float *a = OM_VEC_PUSH_SLOT(tr->kept_f);
  if (a) *a = (om_kept_float){.call = tr->calls - 1, .k = k, .f = f};
}

/* Keeps the extents of the call going on's outputs as the graph has them (om_kept_ext; out of
 * memory: axes fewer for the range's runs to compare, as keep_arg). */
static void keep_extents(om_lower *l) {
  for (int j = 0; j < l->c->n_out; j++)
    for (int d = 0; d < l->c->out_meta[j].ndim; d++) {
      om_kept_ext *e = OM_VEC_PUSH_SLOT(l->tr->kept_ext);
      if (e) *e = (om_kept_ext){.call = l->tr->calls - 1, .size = l->c->out_meta[j].shape[d], .j = j, .d = d, .x = l->out_ext[j][d]};
    }
}

/* The given attrs of this call as expressions (fit.c), from what the other runs logged; a float
 * attr must be the same in every run, but one that sym_fargs (the op's) lets move, which is
 * fitted as a float scalar is. false when refused. */
static bool fit_args(om_lower *l, uint64_t sym_fargs) {
  om_trace *tr = l->tr;
  const om_attrs *g = l->given;
  om_attrs at[OM_RUNS_MAX];
  for (int r = 0; r < tr->runs.n; r++) {
    if (!l->rc[r]) continue;
    om__runcall_attrs(&tr->runs.v[r], l->rc[r], &at[r]);
    if (at[r].n_i != g->n_i || at[r].n_f != g->n_f) { /* another call there: that run takes another path */
      char sizes[160];
      om__run_sizes(tr, tr->runs.v[r].v, ~(uint64_t)0, sizes, sizeof sizes);
      part_run(l, r, om__arena_printf(&tr->g.arena, "%s (call %lld): the model passes %d integer arguments here and %d at %s",
                                      l->who, (long long)tr->calls, g->n_i, at[r].n_i, sizes));
    }
  }
  for (int k = 0; k < g->n_i; k++) {
    int64_t vals[OM_RUNS_MAX] = {0};
    for (int r = 0; r < tr->runs.n; r++) vals[r] = l->rc[r] ? at[r].i[k] : 0;
    char what[32];
    snprintf(what, sizeof what, "argument %d", k);
    int x = fit_int(l, g->i[k], vals, what);
    bool as_length = false;
    int64_t ends[OM_RUNS_MAX] = {0};
    if (x == OM_FIT_NONE && k == 2 && end_as_length(l, at, &l->given_end.i[2], ends)) {
      x = fit_int(l, l->given_end.i[2], ends, what);
      if ((as_length = x >= 0)) { /* the slice's rules read the end so (a count from its start) */
        int64_t end = l->given_end.i[2];
        l->given_end = *g;
        l->given_end.i[2] = end;
        l->given = &l->given_end;
      }
    }
    x = fitted_or_again(l, x, g->i[k], vals);
    if (x == OM_FIT_NONE) {
      char seen[OM_SEEN_CAP];
      return om__trace_fail(OM_ERR_TRACE_SYMBOLIC_SHAPE, "%s: argument %d is %s: it changes with the sizes, but not as a "
                            "size the graph can compute (a sum, multiple, product, minimum or maximum of sizes, or a "
                            "floor division or remainder by a constant the runs tell apart)", l->who, k, om__fit_seen(l, g->i[k], vals, seen, sizeof seen));
    }
    if (x < 0) return false;
    l->arg[k] = x;
    keep_arg(tr, k, x, as_length);
    if (!om__x_is_const(tr, x, NULL)) l->moves = true;
  }
  for (int k = 0; k < g->n_f; k++) {
    int moved = -1;
    double vals[OM_RUNS_MAX] = {0};
    for (int r = 0; r < tr->runs.n; r++) {
      if (!l->rc[r]) continue;
      vals[r] = at[r].f[k];
      if (memcmp(&vals[r], &g->f[k], sizeof(double)) && moved < 0) moved = r;
    }
    if (moved < 0) continue;
    int fitted = sym_fargs >> k & 1 ? fit_float(l, g->f[k], vals, &l->farg[k]) : 0;
    if (fitted < 0) return false;
    if (fitted) {
      keep_float(tr, k, l->farg[k]);
      l->fmoves |= 1u << k;
      l->moves = true;
      continue;
    }
    char sizes[160];
    return om__trace_fail(OM_ERR_TRACE_SYMBOLIC_SHAPE, "%s: float argument %d is %g here and %g at %s; %s", l->who, k,
                          g->f[k], at[moved].f[k], om__run_sizes(tr, tr->runs.v[moved].v, ~(uint64_t)0, sizes, sizeof sizes),
                          sym_fargs >> k & 1 ? "it changes with the sizes, but not as a float the graph can compute (a * "
                                               "f(E) + b of a size E, f one of x, 1 / x, sqrt(x), 1 / sqrt(x))"
                                             : "a float argument computed from a size cannot be written in the graph");
  }
  return true;
}

int om__trace_lower(const om_op_def *def, om_call *c, const om_attrs *given, int64_t index) {
  om_trace *tr = om__state()->trace;
  bool traced = false;
  for (int i = 0; i < c->n_in && !traced; i++) traced = om__traced(c->in[i]);
  bool large = false;
  for (int j = 0; j < c->n_out && !def->view && !traced; j++) large |= om__trace_shape_only(&c->out_meta[j]);
  if (tr->phase == OM_PHASE_OTHER) return traced || large ? OM_CALL_PHANTOM : OM_CALL_EAGER;
  if (tr->phase == OM_PHASE_RECORD && index >= 0 && tr->dead) return OM_CALL_EAGER; /* nothing needs it */
  om_lower l = {.tr = tr, .c = c, .given = given, .who = def->name};
  bool logged = tr->phase == OM_PHASE_RECORD && index >= 0; /* a call of the record run's own (not a copy's value) */
  if (index == OM_CALL_SAME_VALUE) { /* matched with nothing: the value it copies was */
    if (!traced) return OM_CALL_EAGER;
    index = 0;
  } else {
    memcpy(l.rc, tr->rc, sizeof l.rc);
  }
  if (traced && index < 0 && tr->phase != OM_PHASE_MANUAL && tr->symbols.n)
    return om__trace_fail(OM_ERR_TRACE_INVALID_USAGE, "%s: backward inside a model traced with symbolic axes cannot be "
                          "recorded (trace the forward only)", def->name), -1;
  bool failed = false; /* in a run at other sizes */
  if (tr->phase == OM_PHASE_RECORD && index >= 0) {
    for (int r = 0; r < tr->runs.n; r++) failed |= l.rc[r] && l.rc[r]->error;
    if (!fit_args(&l, def->sym_fargs)) return -1;
  } else {
    if (!traced) return OM_CALL_EAGER;
    if (tr->symbols.n)
      return om__trace_fail(OM_ERR_TRACE_INVALID_USAGE,
                            "%s: a trace with symbolic axes records only inside om_trace_run (in JS, om.trace), which "
                            "runs the model again at other sizes to see the sizes it computes", def->name), -1;
    for (int k = 0; k < given->n_i; k++)
      if ((l.arg[k] = om__x_const(tr, given->i[k])) < 0) return -1;
  }
  if (!traced && !l.moves && !failed) return OM_CALL_EAGER;
  for (int k = 0; k < given->n_i; k++)
    if (!(def->sym_args >> k & 1) && !om__x_is_const(tr, l.arg[k], NULL))
      return om__trace_fail(OM_ERR_TRACE_SYMBOLIC_SHAPE, "%s: argument %d (%s) changes with the sizes, and %s takes it "
                            "as a fixed number", def->name, k, om__x_name(tr, l.arg[k]), def->name), -1;
  om_graph *g = &tr->g;
  mark(tr, c);
  bool ok = (l.in = om__arena_alloc(&g->arena, sizeof(int) * (size_t)(c->n_in ? c->n_in : 1))) != NULL;
  for (int i = 0; ok && i < c->n_in; i++) {
    int v = om__traced(c->in[i]) ? c->in[i]->trace_value : om__const_capture(tr, c->in[i], c->op);
    if ((ok = v >= 0)) l.in[i] = v; /* on a trace error the graph (l.in with it) is gone */
  }
  ok = ok && (!def->extents || def->extents(&l, c)) && om__lower_alive(&l) && om__probe_extents(&l);
  if (ok && logged) keep_extents(&l);
  for (int r = 0; ok && r < tr->runs.n; r++) { /* runs where the call fails, unless the probe narrowed the range past them */
    if (!l.rc[r] || !l.rc[r]->error) continue;
    bool inside = true;
    for (int k = 0; k < tr->symbols.n; k++)
      inside &= tr->runs.v[r].v[k] >= tr->symbols.v[k].vmin && tr->runs.v[r].v[k] <= tr->symbols.v[k].vmax;
    char sizes[160], hint[400];
    om__run_sizes(tr, tr->runs.v[r].v, ~(uint64_t)0, sizes, sizeof sizes);
    const char *why = om__arena_printf(&tr->g.arena, "%s (call %lld): at %s the call fails (%s)", def->name, (long long)tr->calls,
                                       sizes, l.rc[r]->error);
    if (inside && !om__run_failed(tr, r, why, tr->calls - 1))
      return om__run_fails_at(tr, tr->runs.v[r].v, tr->calls - 1, why, "%s: at %s this call fails (%s), so the graph would "
                              "only hold at the traced sizes%s", def->name, sizes, l.rc[r]->error,
                              om__run_hint(tr, r, hint, sizeof hint)), -1;
    l.rc[r] = NULL;
  }
  bool f64 = false; /* the Session's DOUBLE values: the lowerings write float32 constants beside them */
  for (int i = 0; i < c->n_in + c->n_out; i++) f64 |= (i < c->n_in ? c->in[i]->dtype : c->out_meta[i - c->n_in].dtype) == OM_FLOAT64;
  ok = ok && (!f64 || om__lower_refuse(&l, c, "float64 is not traced (a trace holds float32, int64 and bool)"));
  ok = ok && def->lower(&l, c) && om__lower_alive(&l);
  for (int j = 0; ok && j < c->n_out; j++)
    if (c->trace_out[j] < 0)
      return om__trace_fail(OM_ERR_TRACE_UNSUPPORTED_OPERATION,
                            "%s: its lowering wrote no value for output %d (a bug in onemodel)", def->name, j), -1;
  if (!ok && om__lower_alive(&l)) om__trace_rollback(tr, c->trace_mark); /* not a trace error: keep recording */
  return ok ? OM_CALL_LOWERED : -1;
}

void om__trace_end_call(const om_call *c, int64_t index, int how, bool ok) {
  om_trace *tr = om__state()->trace;
  if (!tr) return; /* a trace error ended it */
  if (index == OM_CALL_SAME_VALUE && ok) { /* its output stands for its input in the runs */
    c->out[0]->trace_run = c->in[0]->trace_run;
    c->out[0]->trace_origin = c->in[0]->trace_origin;
  }
  om__run_call_done(tr, index, c->out, c->n_out, ok);
  if (how != OM_CALL_LOWERED) return;
  if (!ok) {
    om__trace_rollback(tr, c->trace_mark);
    return;
  }
  for (int j = 0; j < c->n_out; j++) {
    c->out[j]->trace_id = tr->id;
    c->out[j]->trace_value = c->trace_out[j];
  }
}

void om__trace_hold(int delta) {
  om_trace *tr = om__state()->trace;
  if (tr) tr->depth += delta;
}

om_tensor *om__trace_phantom(const om_meta *meta) { return om__phantom(om__state()->trace, meta); }

bool om__trace_shape_only(const om_meta *meta) {
  om_trace *tr = om__state()->trace;
  if (!tr || !tr->sweeping) return false;
  int64_t n = 1;
  for (int d = 0; d < meta->ndim && n <= 65536; d++) n = meta->shape[d] > 65536 ? 65537 : n * meta->shape[d];
  if (n > 65536) tr->made_phantom = true; /* a constant whose values fail nothing in this run */
  return n > 65536;
}

bool om__trace_shadow(void) {
  om_trace *tr = om__state()->trace;
  return tr && tr->phase == OM_PHASE_OTHER;
}

/* ---- tensors the model creates ---- */

/* The values of an arange of a length that changes with the sizes: Range(0, len) (an iota,
 * shared by every arange of that length; an embedding of it is a Slice), cast to float for a
 * float arange, scaled by step and shifted by start (a computed one: arange(T - 1, -1, -1)) where
 * they change something. (A Range of the bounds themselves would be one node less for some, but
 * onnxruntime's optimizer turns a Gather of a descending Range into a Slice, whose end -1 then
 * counts from the end.) -1 on error. */
static int lower_arange(om_lower *l, const double *args, int x_start, int len, om_dtype dtype) {
  om_meta m = l->c->out_meta[0];
  m.dtype = OM_INT64;
  int in[3] = {om__lower_ints(l, &(int64_t){0}, -1), om__lower_x_scalar(l, len), om__lower_ints(l, &(int64_t){1}, -1)}, v;
  if (in[0] < 0 || in[1] < 0 || in[2] < 0 || !om__emit(l, "Range", in, 3, &m, 1, &v, NULL, 0)) return -1;
  l->tr->g.values.v[v].ext[0] = len;
  om__x_extent(l->tr, len);
  l->tr->g.values.v[v].iota = len;
  bool whole = args[0] == floor(args[0]) && args[2] == floor(args[2]);
  m.dtype = whole ? OM_INT64 : dtype; /* whole steps in int64, exact; fractional ones in float, as eager rounds them */
  if (!whole && !om__emit(l, "Cast", &v, 1, &m, 1, &v, &OM_ATTR_INT("to", 1 /* FLOAT */), 1)) return -1;
  int64_t start;
  bool fixed_start = om__x_is_const(l->tr, x_start, &start);
  for (int k = 0; k < 2; k++) { /* * step, + start */
    if (k ? fixed_start && args[0] == 0 : args[2] == 1) continue;
    int by = k && !fixed_start ? om__lower_x_scalar(l, x_start) : om__lower_scalar(l, args[k ? 0 : 2], m.dtype), two[2] = {v, by};
    if (by < 0 || !om__emit(l, k ? "Add" : "Mul", two, 2, &m, 1, &v, NULL, 0)) return -1;
    l->tr->g.values.v[v].ext[0] = len;
    om__x_extent(l->tr, len);
  }
  if (dtype == m.dtype) return v;
  m.dtype = dtype;
  if (!om__emit(l, "Cast", &v, 1, &m, 1, &v, &OM_ATTR_INT("to", 1 /* FLOAT */), 1)) return -1;
  l->tr->g.values.v[v].ext[0] = len;
  om__x_extent(l->tr, len);
  return v;
}

/* Value v (emitted by a lowering) has the length expression len along its one axis. */
static int along(om_lower *l, int v, int len) {
  if (v < 0) return -1;
  l->tr->g.values.v[v].ext[0] = len;
  om__x_extent(l->tr, len);
  return v;
}

/* Node op_type on in[0..n) writing one value of meta (dtype set to dtype); -1 on error. */
static int node(om_lower *l, const char *op_type, const int *in, int n, om_meta meta, om_dtype dtype) {
  int v;
  meta.dtype = dtype;
  for (int k = 0; k < n; k++)
    if (in[k] < 0) return -1;
  return om__emit(l, op_type, in, n, &meta, 1, &v, NULL, 0) ? v : -1;
}

/* linspace(start, end, n) of a length n that changes with the sizes, as om_linspace computes it
 * (src/tensor/tensor.c), in double and rounded once to float32, so that the graph gives eager's
 * bits at every n: i = Range(0, n); step = f32((end - start) / max(n - 1, 1)), 0 where n < 2;
 * start + step * i where 2 i + 1 < n or i = 0 (the first n / 2, and the one value of n = 1), else
 * end - step * (n - 1 - i). A float32 graph would round the product before the sum. -1 on error. */
static int lower_linspace(om_lower *l, const double *args, int len, om_dtype dtype) {
  om_meta vec = l->c->out_meta[0], sc = {.ndim = 0};
  float s = (float)args[0], e = (float)args[1];
  int n = om__lower_x_scalar(l, len), zero = om__lower_ints(l, &(int64_t){0}, -1), one = om__lower_ints(l, &(int64_t){1}, -1);
  int i = along(l, node(l, "Range", (int[]){zero, n, one}, 3, vec, OM_INT64), len);
  int odd = along(l, node(l, "Add", (int[]){along(l, node(l, "Mul", (int[]){i, om__lower_ints(l, &(int64_t){2}, -1)}, 2, vec, OM_INT64), len), one}, 2, vec, OM_INT64), len);
  int first = along(l, node(l, "Or", (int[]){along(l, node(l, "Less", (int[]){odd, n}, 2, vec, OM_BOOL), len),
                                               along(l, node(l, "Equal", (int[]){i, zero}, 2, vec, OM_BOOL), len)}, 2, vec, OM_BOOL), len);
  int id = along(l, om__lower_cast(l, i, &vec, OM_FLOAT64), len);
  int nm1 = node(l, "Sub", (int[]){om__lower_cast(l, n, &sc, OM_FLOAT64), om__lower_scalar(l, 1, OM_FLOAT64)}, 2, sc, OM_FLOAT64);
  int span = om__lower_scalar(l, (float)((double)e - (double)s), OM_FLOAT64);
  int step = node(l, "Div", (int[]){span, node(l, "Max", (int[]){nm1, om__lower_scalar(l, 1, OM_FLOAT64)}, 2, sc, OM_FLOAT64)}, 2, sc, OM_FLOAT64);
  sc.dtype = OM_FLOAT64;
  step = om__lower_cast(l, om__lower_cast(l, step, &sc, OM_FLOAT32), &sc, OM_FLOAT64);
  step = node(l, "Where", (int[]){node(l, "Greater", (int[]){nm1, om__lower_scalar(l, 0, OM_FLOAT64)}, 2, sc, OM_BOOL), step,
                                  om__lower_scalar(l, 0, OM_FLOAT64)}, 3, sc, OM_FLOAT64);
  int lo = along(l, node(l, "Add", (int[]){om__lower_scalar(l, s, OM_FLOAT64), along(l, node(l, "Mul", (int[]){step, id}, 2, vec, OM_FLOAT64), len)}, 2, vec, OM_FLOAT64), len);
  int back = along(l, node(l, "Sub", (int[]){nm1, id}, 2, vec, OM_FLOAT64), len);
  int hi = along(l, node(l, "Sub", (int[]){om__lower_scalar(l, e, OM_FLOAT64), along(l, node(l, "Mul", (int[]){step, back}, 2, vec, OM_FLOAT64), len)}, 2, vec, OM_FLOAT64), len);
  vec.dtype = OM_FLOAT64;
  int v = along(l, om__lower_cast(l, along(l, node(l, "Where", (int[]){first, lo, hi}, 3, vec, OM_FLOAT64), len), &vec, OM_FLOAT32), len);
  vec.dtype = OM_FLOAT32;
  return dtype == OM_FLOAT32 ? v : along(l, om__lower_cast(l, v, &vec, dtype), len);
}

/* The record run's creation of t: its sizes and arguments as expressions of what the other runs
 * logged; a traced value when any of them moves. Returns t, or NULL on error (t released). */
static om_tensor *created_record(om_trace *tr, om_tensor *t, om_created kind, const om_attrs *given, const char *who) {
  om_call c = {.op = OM_OP_COUNT, .n_out = 1, .out_meta = {{.dtype = t->dtype, .ndim = t->ndim}}};
  memcpy(c.out_meta[0].shape, t->shape, sizeof t->shape);
  om_lower l = {.tr = tr, .c = &c, .given = given, .who = who};
  memcpy(l.rc, tr->rc, sizeof l.rc);
  om_attrs at[OM_RUNS_MAX];
  bool moves = false, value_moves = false;
  for (int r = 0; r < tr->runs.n; r++)
    if (l.rc[r]) om__runcall_attrs(&tr->runs.v[r], l.rc[r], &at[r]);
  for (int d = 0; d < t->ndim; d++) {
    int64_t vals[OM_RUNS_MAX] = {0};
    for (int r = 0; r < tr->runs.n; r++) vals[r] = l.rc[r] && at[r].n_i == t->ndim ? at[r].i[d] : -1;
    char what[40];
    snprintf(what, sizeof what, "axis %d of the shape", d);
    int x = fitted_or_again(&l, fit_int(&l, t->shape[d], vals, what), t->shape[d], vals);
    if (x == OM_FIT_NONE) {
      char seen[OM_SEEN_CAP];
      om__trace_fail(OM_ERR_TRACE_SYMBOLIC_SHAPE, "%s: axis %d of the shape is %s: it changes with the sizes, but not "
                     "as a size the graph can compute", who, d, om__fit_seen(&l, t->shape[d], vals, seen, sizeof seen));
      goto fail;
    }
    if (x < 0) goto fail;
    keep_arg(tr, d, x, false);
    l.out_ext[0][d] = om__x_is_const(tr, x, NULL) ? -1 : x;
    moves |= l.out_ext[0][d] >= 0;
  }
  for (int k = 0; k < given->n_f; k++)
    for (int r = 0; r < tr->runs.n; r++) value_moves |= l.rc[r] && memcmp(&at[r].f[k], &given->f[k], sizeof(double)) != 0;
  for (int d = t->ndim; d < OM_MAX_DIMS; d++) l.out_ext[0][d] = -1;
  if (!moves && !value_moves) return t;
  char buf[OM_SHAPE_STR_LEN];
  if (kind == OM_CREATED_RANDOM || (kind == OM_CREATED_DATA && (moves || om_tensor_numel(t) != 1))) {
    om__trace_fail(OM_ERR_TRACE_SYMBOLIC_SHAPE, "%s: %s of shape %s changes with the sizes; %s", who,
                   kind == OM_CREATED_RANDOM ? "a random tensor" : "data", om__shape_str(buf, sizeof buf, t->shape, t->ndim),
                   kind == OM_CREATED_RANDOM ? "random values of a changing size cannot be written in the graph (draw "
                   "them before the trace, or pass them as an input)" : "data computed from a size cannot be written in "
                   "the graph (compute it with ops: om.arange, om.full, ...)");
    goto fail;
  }
  if (kind == OM_CREATED_LINSPACE && (value_moves || t->dtype == OM_FLOAT64)) {
    om__trace_fail(OM_ERR_TRACE_SYMBOLIC_SHAPE, "%s: %s", who, value_moves ? "a start or end that changes with the sizes "
                   "cannot be written in the graph (only the number of steps may change)" : "a float64 linspace of a "
                   "length that changes with the sizes cannot be written in the graph (a trace holds float32, int64 and bool)");
    goto fail;
  }
  mark(tr, &c);
  int v = -1;
  if (kind == OM_CREATED_LINSPACE) {
    v = lower_linspace(&l, given->f, l.out_ext[0][0], t->dtype);
  } else if (kind == OM_CREATED_ARANGE) {
    /* args: start, end, step. The length follows the sizes; the start may too (arange(T - 1, -1,
     * -1)), the step may not. An int64 arange of a fractional start or step is a truncated sum
     * the graph's Range would not reproduce. */
    const double *a = given->f;
    bool whole = a[0] == floor(a[0]) && a[2] == floor(a[2]);
    int64_t starts[OM_RUNS_MAX] = {0};
    bool ok = true;
    for (int r = 0; r < tr->runs.n && ok; r++) {
      if (!l.rc[r]) continue;
      ok = at[r].f[2] == a[2] && (whole ? at[r].f[0] == floor(at[r].f[0]) : at[r].f[0] == a[0]);
      starts[r] = (int64_t)at[r].f[0];
    }
    int x_start = !ok ? OM_FIT_NONE : !whole ? om__x_const(tr, 0)
                  : fitted_or_again(&l, fit_int(&l, (int64_t)a[0], starts, "the start"), (int64_t)a[0], starts);
    if (x_start == OM_FIT_NONE || (t->dtype == OM_INT64 && !whole)) {
      if (t->dtype == OM_INT64 && !whole)
        om__trace_fail(OM_ERR_TRACE_SYMBOLIC_SHAPE, "%s: an int64 arange from %g by %g (a fractional start or step) of a "
                       "length that changes with the sizes cannot be written in the graph: its values are truncated "
                       "sums (use integers, or a float arange)", who, a[0], a[2]);
      else { /* the starts the runs saw (where the step held), as fit_args shows an argument's */
        char seen[OM_SEEN_CAP] = "";
        if (ok && whole) om__fit_seen(&l, (int64_t)a[0], starts, seen, sizeof seen);
        om__trace_fail(OM_ERR_TRACE_SYMBOLIC_SHAPE, "%s: an arange from %g by %g of a length that changes with the sizes "
                       "needs a step that does not change and a start the graph can compute%s%s", who, a[0], a[2],
                       *seen ? ": the start is " : "", seen);
      }
      goto fail;
    }
    if (x_start >= 0 && whole) keep_float(tr, 0, (om_xfloat){.x = x_start, .a = 1}); /* else the start is fixed */
    int len = l.out_ext[0][0] >= 0 ? l.out_ext[0][0] : om__x_const(tr, t->shape[0]);
    v = x_start >= 0 && len >= 0 ? lower_arange(&l, a, x_start, len, t->dtype) : -1;
  } else { /* full (and data of one element): the value, expanded to the shape */
    double v0 = given->f[0], vals[OM_RUNS_MAX] = {0};
    int64_t ivals[OM_RUNS_MAX] = {0};
    for (int r = 0; r < tr->runs.n; r++)
      if (l.rc[r]) vals[r] = at[r].f[0], ivals[r] = (int64_t)at[r].f[0];
    int scalar;
    if (!value_moves) {
      scalar = om__lower_scalar(&l, v0, t->dtype);
    } else if (t->dtype != OM_FLOAT32) {
      int x = fitted_or_again(&l, fit_int(&l, (int64_t)v0, ivals, "the value"), (int64_t)v0, ivals);
      if (x == OM_FIT_NONE) goto unfit;
      if (x >= 0) keep_float(tr, 0, (om_xfloat){.x = x, .a = 1});
      scalar = x < 0 ? -1 : om__lower_x_scalar(&l, x);
      if (scalar >= 0 && t->dtype == OM_BOOL) {
        om_meta b = {.dtype = OM_BOOL, .ndim = 0};
        if (!om__emit(&l, "Cast", &scalar, 1, &b, 1, &scalar, &OM_ATTR_INT("to", 9 /* BOOL */), 1)) scalar = -1;
      }
    } else {
      om_xfloat f;
      int fitted = fit_float(&l, v0, vals, &f);
      if (fitted < 0) goto fail;
      if (!fitted) goto unfit;
      keep_float(tr, 0, f);
      scalar = om__lower_xfloat(&l, &f);
    }
    if (scalar >= 0 && t->ndim == 0) {
      v = scalar;
    } else if (scalar >= 0) {
      int in[2] = {scalar, om__lower_shape_operand(&l, t->shape, l.out_ext[0], t->ndim)};
      v = in[1] >= 0 && om__emit(&l, "Expand", in, 2, &c.out_meta[0], 1, &v, NULL, 0) ? v : -1;
    }
    if (v >= 0 && t->ndim == 0 && tr->g.values.v[v].init >= 0) { /* a fixed value: stays a constant */
      om__trace_rollback(tr, c.trace_mark);
      return t;
    }
    goto bind;
  unfit:;
    char seen[OM_SEEN_CAP];
    size_t n = (size_t)snprintf(seen, sizeof seen, "%g at the traced sizes", v0);
    for (int r = 0, shown = 0; r < tr->runs.n && n < sizeof seen; r++) {
      char sizes[160], piece[200];
      if (!l.rc[r]) continue;
      snprintf(piece, sizeof piece, ", %g at %s", vals[r], om__run_sizes(tr, tr->runs.v[r].v, ~(uint64_t)0, sizes, sizeof sizes));
      if (!om__seen_append(seen, sizeof seen, &n, &shown, piece)) break;
    }
    om__trace_fail(OM_ERR_TRACE_SYMBOLIC_SHAPE, "%s: the value is %s: it changes with the sizes, but not as a size the "
                   "graph can compute (a * E + b, a / E, a * sqrt(E) or a / sqrt(E) of a size E)", who, seen);
    goto fail;
  }
bind:
  om__lower_output(&l, 0, v);
  if (c.trace_out[0] < 0) {
    if (om__lower_alive(&l)) om__trace_rollback(tr, c.trace_mark);
    goto fail;
  }
  t->trace_id = tr->id;
  t->trace_value = c.trace_out[0];
  return t;
fail:
  om_tensor_release(t);
  return NULL;
}

om_tensor *om__trace_created(om_tensor *t, om_created kind, const double *args, int n_args, const char *who) {
  om_trace *tr = om__state()->trace;
  if (!tr || !t || tr->depth > 0 || tr->phase == OM_PHASE_MANUAL) return t;
  om_attrs given = {.n_i = t->ndim, .n_f = n_args};
  memcpy(given.i, t->shape, sizeof(int64_t) * (size_t)t->ndim);
  if (n_args) memcpy(given.f, args, sizeof(double) * (size_t)n_args);
  int64_t index = om__run_call(tr, OM_RUN_CREATED(kind), &given, NULL, 0, tr->rc);
  if (index == -2) {
    om_tensor_release(t);
    return NULL;
  }
  if (tr->phase == OM_PHASE_OTHER || (index >= 0 && tr->dead)) { /* logged; or nothing needs it */
    om__run_call_done(tr, index, &t, 1, true);
    return t;
  }
  om_tensor *r = created_record(tr, t, kind, &given, who);
  if (om__state()->trace == tr) om__run_call_done(tr, index, &r, r != NULL, r != NULL);
  return r;
}
