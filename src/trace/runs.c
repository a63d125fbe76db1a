/* The runs at other sizes (docs/symbolic-axes.md, "How the tracer sees sizes"). A model takes
 * sizes from shapes as plain integers (x.shape[1] - 1), so one run cannot tell a size it
 * computed from a literal. om_trace_run therefore runs the model first at other assignments of
 * the symbols, in a shape-only mode: the inputs are phantoms (shapes without data), a call on a
 * phantom runs only infer (and a view's strides), and every call is logged with its integer
 * arguments and output shapes. Then it runs the model on the inputs, recording: each call is
 * found in every other run (the same op, else the model's control flow depends on a size) and
 * lowered with what they saw (fit.c writes an argument that moves with the sizes as the
 * expression it is). Constants are computed in every run, so what user code reads of them is
 * the same; the random generator restarts at the same place for every run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace/trace.h"

#define OM_RUNS 4 /* runs at other sizes: with the record run, 5 sizes of each symbol */

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
static bool is_fixed_size(const om_trace *tr, int64_t s) {
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

/* The variables of run r (1-based) of OM_RUNS. Each symbol takes OM_RUNS distinct sizes near its
 * example's (above it, then below where its range ends), none of them a fixed size of the model
 * or another symbol's example size; the runs give them to the symbols in different orders (a
 * permutation each), so that no two symbols move alike and no symbol stays put. A symbol whose
 * size equals another one's in the same run takes its next size. */
static void run_sizes(const om_trace *tr, int r, int64_t *v) {
  static const int order[][OM_RUNS] = {{0, 1, 2, 3}, {1, 2, 3, 0}, {2, 3, 0, 1}, {3, 0, 1, 2}, {0, 2, 1, 3}, {1, 3, 0, 2},
                                       {2, 0, 3, 1}, {3, 1, 2, 0}, {0, 3, 2, 1}, {1, 0, 3, 2}, {2, 1, 0, 3}, {3, 2, 1, 0}};
  enum { N = sizeof order / sizeof order[0], CAND = 2 * OM_RUNS };
  om__run_example(tr, v);
  for (int k = 0; k < tr->symbols.n; k++) {
    const om_symbol *s = &tr->symbols.v[k];
    int64_t v0 = v[k], cand[CAND];
    int n = 0;
    for (int dir = 1; dir >= -1 && n < CAND; dir -= 2) /* the sizes it may take, nearest first */
      for (int64_t x = v0 + dir, tries = 0; n < CAND && tries < 256 && x >= s->vmin && x <= s->vmax; x += dir, tries++) {
        bool clash = is_fixed_size(tr, x * s->multiple);
        for (int j = 0; j < tr->symbols.n && !clash; j++) clash = j != k && tr->symbols.v[j].size == x * s->multiple;
        if (!clash) cand[n++] = x;
      }
    if (!n) continue; /* a symbol with one size (min = max) stays */
    int first = order[k % N][r - 1] % n;
    for (int i = -1; i < n - OM_RUNS; i++) { /* the run's own size, else a spare one */
      int64_t x = cand[i < 0 ? first : OM_RUNS + i];
      bool clash = false;
      for (int j = 0; j < k && !clash; j++) clash = v[j] * tr->symbols.v[j].multiple == x * s->multiple;
      if (i < 0 || !clash) v[k] = x;
      if (!clash) break;
    }
  }
}

/* ---- the log ---- */

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

/* The name of logged kind op, for messages. */
static const char *kind_name(int op) {
  static const char *const created[] = {"full", "arange", "a random tensor", "from_data"};
  return op < OM_OP_COUNT ? om_op_name(op) : created[op - OM_OP_COUNT];
}

int64_t om__run_call(om_trace *tr, int op, const om_attrs *attrs, const om_runcall **rc) {
  if (tr->depth > 0 || tr->phase == OM_PHASE_MANUAL) return -1;
  int64_t index = tr->calls++;
  if (tr->phase == OM_PHASE_OTHER) {
    om_run *run = &tr->runs.v[tr->run];
    om_runcall *c = OM_VEC_PUSH_SLOT(run->calls);
    if (!c) return om__trace_fail(OM_ERR_OUT_OF_MEMORY, "trace_run: out of memory logging the run"), -2;
    *c = (om_runcall){.op = op, .at = run->pool.n, .out = -1};
    bool ok = push(run, attrs->n_i);
    for (int k = 0; ok && k < attrs->n_i; k++) ok = push(run, attrs->i[k]);
    ok = ok && push(run, attrs->n_f);
    for (int k = 0; ok && k < attrs->n_f; k++) {
      int64_t bits;
      memcpy(&bits, &attrs->f[k], sizeof bits);
      ok = push(run, bits);
    }
    if (!ok) return om__trace_fail(OM_ERR_OUT_OF_MEMORY, "trace_run: out of memory logging the run"), -2;
    tr->depth++;
    return index;
  }
  char sizes[160];
  for (int r = 0; r < tr->runs.n; r++) { /* the record run: the same call in every other run */
    const om_run *run = &tr->runs.v[r];
    om__run_sizes(tr, run->v, ~(uint64_t)0, sizes, sizeof sizes);
    if (index < run->calls.n) {
      rc[r] = &run->calls.v[index];
      if (rc[r]->op != op)
        return om__trace_fail(OM_ERR_TRACE_SYMBOLIC_SHAPE,
                              "%s: the model takes another path at other sizes: at %s it calls %s here (call %lld); "
                              "control flow that depends on a size cannot be written in the graph",
                              kind_name(op), sizes, kind_name(rc[r]->op), (long long)index + 1), -2;
      continue;
    }
    if (run->n_outputs < 0)
      return om__trace_fail(OM_ERR_TRACE_SYMBOLIC_SHAPE, "%s: at %s the model fails here (%s), so the graph would only "
                            "hold at the traced sizes", kind_name(op), sizes, run->error), -2;
    return om__trace_fail(OM_ERR_TRACE_SYMBOLIC_SHAPE,
                          "%s: the model takes another path at other sizes: at %s it returns after %lld calls, "
                          "here it goes on; control flow that depends on a size cannot be written in the graph",
                          kind_name(op), sizes, (long long)run->calls.n), -2;
  }
  tr->depth++;
  return index;
}

void om__run_call_done(om_trace *tr, int64_t index, om_tensor *const *out, int n_out, bool ok) {
  if (index < 0) return;
  tr->depth--;
  if (tr->phase != OM_PHASE_OTHER) return;
  om_run *run = &tr->runs.v[tr->run];
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

/* Checks, after the record run returned n outputs, that every other run ended as it did. */
static bool check_ends(om_trace *tr, int n) {
  char sizes[160];
  for (int r = 0; r < tr->runs.n; r++) {
    const om_run *run = &tr->runs.v[r];
    om__run_sizes(tr, run->v, ~(uint64_t)0, sizes, sizeof sizes);
    if (run->calls.n > tr->calls)
      return om__trace_fail(OM_ERR_TRACE_SYMBOLIC_SHAPE,
                            "trace_run: the model takes another path at other sizes: at %s it goes on after its "
                            "last call here (call %lld) and calls %s; control flow that depends on a size cannot "
                            "be written in the graph", sizes, (long long)tr->calls, kind_name(run->calls.v[tr->calls].op));
    if (run->n_outputs < 0)
      return om__trace_fail(OM_ERR_TRACE_SYMBOLIC_SHAPE, "trace_run: at %s the model fails after its last call: %s",
                            sizes, run->error);
    if (run->n_outputs != n)
      return om__trace_fail(OM_ERR_TRACE_SYMBOLIC_SHAPE, "trace_run: the model returns %d outputs at %s and %d here",
                            run->n_outputs, sizes, n);
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

/* Runs fn at run r's sizes on phantom inputs; logs how it ended. false when the trace ended. */
static bool run_other(om_trace *tr, int r, om_trace_fn fn, void *ctx, om_tensor **outputs, int max_outputs) {
  om_run *run = &tr->runs.v[r];
  om_graph *g = &tr->g;
  om_tensor *in[64] = {0};
  int n_in = g->inputs.n;
  bool made = true;
  for (int k = 0; k < n_in && made; k++) {
    const om_gvalue *v = &g->values.v[g->inputs.v[k]];
    om_meta m = {.dtype = v->dtype, .ndim = v->ndim};
    memcpy(m.shape, v->shape, sizeof m.shape);
    for (int d = 0; d < v->ndim; d++)
      if (v->ext[d] >= 0) om__x_eval(tr, v->ext[d], run->v, &m.shape[d]);
    made = (in[k] = om__phantom(tr, &m)) != NULL;
  }
  tr->phase = OM_PHASE_OTHER;
  tr->run = r;
  tr->calls = 0;
  uint32_t id = tr->id;
  int n = made ? fn(ctx, in, n_in, outputs, max_outputs) : -1;
  om__release_all(in, n_in);
  if (!still(id)) { /* the model ended the trace (a nested begin) */
    for (int j = 0; j < n && j < max_outputs; j++) om_tensor_release(outputs[j]);
    return false;
  }
  run->n_outputs = n;
  if (n < 0) snprintf(run->error, sizeof run->error, "%s", om_last_error_message());
  for (int j = 0; j < n && j < max_outputs; j++) {
    om_tensor_release(outputs[j]);
    outputs[j] = NULL;
  }
  om_clear_error();
  return true;
}

int om_trace_run(om_trace_fn fn, void *ctx, om_tensor **outputs, int max_outputs) {
  om_trace *tr = om__need_trace("trace_run");
  if (!tr) return -1;
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
  for (int r = 0; tr->symbols.n && r < OM_RUNS; r++) {
    om_run *run = OM_VEC_PUSH_SLOT(tr->runs);
    if (!run) return om__trace_fail(OM_ERR_OUT_OF_MEMORY, "trace_run: out of memory"), -1;
    memset(run, 0, sizeof *run);
    run_sizes(tr, r + 1, run->v);
    st->rng_seed = seed, st->rng_offset = offset;
    /* a run that fails goes on to the others all the same: the calls before the failure are
     * fitted with every run's values, and the record run finds where it fails (and whether it
     * does there too) */
    if (!run_other(tr, r, fn, ctx, outputs, max_outputs)) return -1;
  }
  tr->phase = OM_PHASE_RECORD;
  tr->calls = 0;
  if (!om__probe_init(tr)) return -1;
  st->rng_seed = seed, st->rng_offset = offset;
  om_tensor *in[64];
  for (int k = 0; k < tr->inputs.n; k++) in[k] = tr->inputs.v[k].traced;
  uint32_t id = tr->id;
  int n = fn(ctx, in, tr->inputs.n, outputs, max_outputs);
  if (!still(id)) { /* ended by a trace error inside (or by the model) */
    om__release_all(outputs, n > 0 && n <= max_outputs ? n : 0);
    return -1;
  }
  if (n < 0) { /* the model's own failure: the recording ends, the error stays */
    om_thread_state *s = om__state();
    om_error_kind kind = s->err_kind;
    char msg[sizeof s->err_msg];
    memcpy(msg, s->err_msg, sizeof msg);
    om_trace_abort();
    om__fail(kind, "%s", msg);
    return -1;
  }
  if (n > max_outputs || !check_ends(tr, n)) {
    om__release_all(outputs, n < max_outputs ? n : max_outputs);
    if (n > max_outputs) om__trace_fail(OM_ERR_TRACE_INVALID_USAGE, "trace_run: %d outputs, room for %d", n, max_outputs);
    return -1;
  }
  tr->phase = OM_PHASE_RAN;
  return n;
}
