/* Calls the model makes only at some sizes, where leaving them out is the same as making them
 * with a neutral argument (docs/symbolic-axes.md, "Calls made only at some residues").
 * Hugging Face's Swin pads only where the width is not a multiple of the patch
 * (`if (W % p != 0) x = pad(x, [0, p - W % p])`) and slices back only where it padded;
 * MobileViT interpolates only where the size is not a multiple of the patch. The runs at the
 * multiples then lack a call the example's run makes, so they would part from the trace at
 * every multiple: no threshold, and no If on a size, holds. But a pad by 0 on every side, a
 * slice of the whole axis and an interpolate to the same size are the identity, so such a run
 * is the run that makes the call with that argument. Here each run that returned is given
 * that call, logged where the example's run makes it, with the neutral argument and reading
 * what its next call reads instead; the record run then fits the argument over every run as it
 * fits any argument (`(p - W % p) % p`: fit.c's periodic forms), so one graph holds at every
 * size, and the range check compares every run with that graph as it compares any. Nothing is
 * given where the calls differ otherwise: the run parts from the trace as before. */
#include <stdlib.h>
#include <string.h>

#include "trace/trace.h"

/* What op's call with the base run's arguments b does as the identity on an input of shape
 * (nd, shape), into *a: pads of 0 (the mode and value kept), a slice from 0 to the axis's size
 * by 1, an interpolate by sizes to the input's own (the graph's Resize to the same size is the
 * identity: onnxruntime's and the Session's copy). false where op has no such form: another op, a step, an
 * interpolate by scale factors (the factor is a fixed argument of the graph). */
static bool neutral_attrs(int op, const om_attrs *b, int nd, const int64_t *shape, om_attrs *a) {
  *a = *b;
  if (op == OM_OP_pad) {
    if (b->n_i < 1 || b->i[0] > 2) return false; /* constant, reflect, replicate */
    for (int k = 1; k < b->n_i; k++) a->i[k] = 0;
    return true;
  }
  if (op == OM_OP_slice) {
    if (b->n_i != 4 || b->i[3] != 1) return false;
    int64_t d = b->i[0] < 0 ? b->i[0] + nd : b->i[0];
    if (d < 0 || d >= nd) return false;
    a->i[1] = 0, a->i[2] = b->i[2] >= INT64_MAX / 2 ? b->i[2] : shape[d]; /* an open end stays open */
    return true;
  }
  if (op == OM_OP_interpolate) {
    if (b->n_i != 5 || b->i[4] != 0 || nd != 4) return false;
    a->i[2] = shape[2], a->i[3] = shape[3];
    return true;
  }
  return false;
}

/* Whether op's call with arguments b has a neutral form on some input (neutral_attrs, before the
 * input's shape is known). */
static bool neutral_kind(int op, const om_attrs *b) {
  if (op == OM_OP_pad) return b->n_i >= 1 && b->i[0] <= 2;
  if (op == OM_OP_slice) return b->n_i == 4 && b->i[3] == 1;
  return op == OM_OP_interpolate && b->n_i == 5 && b->i[4] == 0;
}

/* Appends x to run's pool, as runs.c logs a call; false with OutOfMemory. */
static bool push(om_run *run, int64_t x) {
  int64_t *slot = OM_VEC_PUSH_SLOT(run->pool);
  if (!slot) return false;
  *slot = x;
  return true;
}

/* Whether calls a (of run ra) and b (of rb) are of one kind: the same op with as many integer
 * and float arguments and tensor inputs (a pad of the width, [0, p], is not one of the height,
 * [0, 0, 0, p]). */
static bool same_kind(const om_run *ra, const om_runcall *a, const om_run *rb, const om_runcall *b) {
  const int64_t *pa = ra->pool.v + a->at, *pb = rb->pool.v + b->at;
  return a->op == b->op && pa[0] == pb[0] && pa[1 + pa[0]] == pb[1 + pb[0]] && ra->pool.v[a->in] == rb->pool.v[b->in];
}

/* What the run gives, per live call of the base run: the run's live call of that place (its
 * index), or the call logged for one the run lacks; and, for the latter, the run's value its
 * readers read in its place (the first of a chain's input). */
typedef struct given {
  int64_t call;
  bool made;
  int64_t x;
} given;

/* The run's logged origin (*value, kind 0) of the base run's origin bv (kind 0), through m,
 * and its shape (*nd, shape). false when there is none. */
static bool run_origin(const om_trace *tr, const om_run *run, const given *m, int64_t bv, int64_t *value, int *nd,
                       int64_t *shape) {
  *value = bv;
  if (bv < 0) { /* model input -1 - bv: its shape at the run's sizes */
    int k = (int)(-1 - bv);
    if (k >= tr->g.inputs.n) return false;
    const om_gvalue *v = &tr->g.values.v[tr->g.inputs.v[k]];
    *nd = v->ndim;
    memcpy(shape, v->shape, sizeof(int64_t) * (size_t)v->ndim);
    for (int d = 0; d < v->ndim; d++)
      if (v->ext[d] >= 0 && !om__x_eval(tr, v->ext[d], run->v, &shape[d])) return false;
    return true;
  }
  int rank = tr->base.calls.v[bv / OM_MAX_OUTPUTS].rank;
  if (rank < 0 || m[rank].call < 0) return false;
  *value = m[rank].call * OM_MAX_OUTPUTS + bv % OM_MAX_OUTPUTS;
  return om__runcall_output(run, &run->calls.v[m[rank].call], (int)(bv % OM_MAX_OUTPUTS), nd, shape);
}

/* Logs in run a call of op with arguments a reading origin x and giving one output of x's
 * shape (nd, shape), as om__run_call and om__run_call_done log a call. Its index; -1 when
 * memory ran out (the run is left with a call nothing reads). */
static int64_t log_call(om_run *run, int op, const om_attrs *a, int64_t x, int nd, const int64_t *shape) {
  int64_t index = run->calls.n;
  om_runcall *c = OM_VEC_PUSH_SLOT(run->calls);
  if (!c) return -1;
  *c = (om_runcall){.op = op, .at = run->pool.n, .in = -1, .out = -1, .rank = -1};
  bool ok = push(run, a->n_i);
  for (int k = 0; ok && k < a->n_i; k++) ok = push(run, a->i[k]);
  ok = ok && push(run, a->n_f);
  for (int k = 0; ok && k < a->n_f; k++) {
    int64_t bits;
    memcpy(&bits, &a->f[k], sizeof bits);
    ok = push(run, bits);
  }
  int in = run->pool.n;
  ok = ok && push(run, 1) && push(run, 0) && push(run, x);
  int out = run->pool.n;
  ok = ok && push(run, 1) && push(run, nd);
  for (int d = 0; ok && d < nd; d++) ok = push(run, shape[d]);
  if (!ok) return -1;
  run->calls.v[index].in = in;
  run->calls.v[index].out = out;
  return index;
}

/* Whether run's live calls are the base run's and some more of the kinds that have a neutral
 * form, each reading one tensor: then the example's run lacks them, and a trace at run's sizes
 * may hold where this one cannot (om__branch_reexample). */
static bool makes_more(const om_run *b, const om_run *run) {
  int j = 0, extra = 0;
  for (int q = 0; q < run->live.n; q++) {
    const om_runcall *c = &run->calls.v[run->live.v[q]];
    if (j < b->live.n && same_kind(b, &b->calls.v[b->live.v[j]], run, c)) {
      j++;
      continue;
    }
    if ((c->op != OM_OP_pad && c->op != OM_OP_slice && c->op != OM_OP_interpolate) || run->pool.v[c->in] != 1) return false;
    extra++;
  }
  return j == b->live.n && extra > 0;
}

/* Whether the variables v can be a trace's example: every symbol's size at least 2 and none
 * equal to another's (om_trace_input's rules). */
static bool can_be_example(const om_trace *tr, const int64_t *v) {
  for (int k = 0; k < tr->symbols.n; k++) {
    int64_t size = v[k] * tr->symbols.v[k].multiple;
    if (size < 2) return false;
    for (int j = 0; j < k; j++)
      if (v[j] * tr->symbols.v[j].multiple == size) return false;
  }
  return true;
}

int64_t om__run_elements(const om_run *run) {
  int64_t sum = 0;
  for (int q = 0; q < run->live.n; q++) {
    const om_runcall *c = &run->calls.v[run->live.v[q]];
    int64_t shape[OM_MAX_DIMS];
    int nd;
    for (int j = 0; c->out >= 0 && j < run->pool.v[c->out]; j++) {
      if (!om__runcall_output(run, c, j, &nd, shape)) continue;
      int64_t n = 1;
      for (int d = 0; d < nd && n > 0; d++) n = shape[d] > 0 && n > INT64_MAX / shape[d] ? INT64_MAX : n * shape[d];
      sum = n > INT64_MAX - sum ? INT64_MAX : sum + n;
    }
  }
  return sum;
}

void om__run_neutral(om_trace *tr, om_run *run) {
  const om_run *b = &tr->base;
  int missing = b->live.n - run->live.n;
  if (run != b && !tr->reexampled && b->n_outputs >= 0 && run->n_outputs == b->n_outputs && missing < 0 &&
      can_be_example(tr, run->v) && makes_more(b, run)) {
    /* the run that makes the most such calls (Swin's pads of the height, of the width and of a
     * merge: where it makes them all, the other runs only lack some, which absent.c gives), then
     * of the fewest elements: the model is traced again there with real tensors, so its memory
     * is what that costs (a far run of SAM's encoder, batch 21 at 647 x 329, holds 3.6 GB of
     * attention; runs.c's cheaper_reexample looks for sizes nearer the example) */
    int64_t cost = om__run_elements(run);
    if (!tr->reexample || run->live.n > tr->reexample_calls || (run->live.n == tr->reexample_calls && cost < tr->reexample_cost)) {
      memcpy(tr->reexample_v, run->v, sizeof tr->reexample_v);
      tr->reexample_calls = run->live.n;
      tr->reexample_cost = cost;
    }
    tr->reexample = true;
  }
  if (run == b || b->n_outputs < 0 || run->n_outputs != b->n_outputs || missing <= 0) return;
  given *m = malloc(sizeof *m * (size_t)b->live.n);
  if (!m) return;
  for (int q = 0; q < b->live.n; q++) m[q] = (given){.call = -2};
  /* the calls the run makes, in the base run's order; the others are the ones it lacks */
  int j = 0;
  for (int q = 0; q < b->live.n && missing <= 16; q++) {
    bool same = j < run->live.n && b->live.n - q > run->live.n - j - 1 &&
                same_kind(b, &b->calls.v[b->live.v[q]], run, &run->calls.v[run->live.v[j]]);
    if (!same && b->live.n - q - 1 < run->live.n - j) break; /* no call left to lack */
    m[q] = (given){.call = same ? run->live.v[j++] : -1};
  }
  bool ok = b->live.n > 0 && j == run->live.n && m[b->live.n - 1].call != -2;
  /* A run that lacks such calls and then does another thing (Swin's unshifted window at a small
   * size, where the patch pad of the other side is left out first) would be compared at its
   * first pad with the base run's pad of the other side, and part there with other arguments:
   * the trace would be refused at the pad, not where the model changes. So the calls it lacks
   * before it first differs otherwise are given all the same, and its calls from there follow in
   * their order: it parts where it does another thing (another op, other values), as any run. */
  int stop = b->live.n;
  if (!ok) {
    int lacked = 0;
    j = 0;
    for (int q = 0; q < b->live.n; q++) m[q] = (given){.call = -2};
    for (stop = 0; stop < b->live.n && j < run->live.n; stop++) {
      const om_runcall *pb = &b->calls.v[b->live.v[stop]];
      if (same_kind(b, pb, run, &run->calls.v[run->live.v[j]])) {
        m[stop] = (given){.call = run->live.v[j++]};
        continue;
      }
      om_attrs ab;
      om__runcall_attrs(b, pb, &ab);
      if (b->pool.v[pb->in] != 1 || !neutral_kind(pb->op, &ab)) break;
      m[stop] = (given){.call = -1};
      lacked++;
    }
    ok = lacked > 0 && j < run->live.n && stop < b->live.n;
    /* only where what it lacks is read before it parts (Swin's pad of the width, read by the pad
     * of the height): the pieces a split makes at larger sizes, read by calls past that, are more
     * calls, not calls left out */
    for (int q = stop; ok && q <= b->live.n; q++) {
      const int64_t *in = q < b->live.n ? b->pool.v + b->calls.v[b->live.v[q]].in : b->pool.v + b->out;
      for (int i = 0; ok && i < in[0]; i++) {
        int r = !in[1 + 2 * i] && in[2 + 2 * i] >= 0 ? b->calls.v[in[2 + 2 * i] / OM_MAX_OUTPUTS].rank : -1;
        ok = r < 0 || r >= stop || m[r].call != -1;
      }
    }
  }
  int n0 = run->live.n;
  /* each call it lacks, logged with its neutral argument, reading what the call before gave */
  for (int q = 0; ok && q < stop; q++) {
    if (m[q].call >= 0) continue;
    const om_runcall *pb = &b->calls.v[b->live.v[q]];
    const int64_t *ib = b->pool.v + pb->in;
    int64_t x, shape[OM_MAX_DIMS];
    int nd;
    ok = ib[0] == 1 && !ib[1];
    if (!ok) break;
    int r = ib[2] >= 0 ? b->calls.v[ib[2] / OM_MAX_OUTPUTS].rank : -1;
    if (r >= 0 && m[r].made) { /* a chain: the one before, of the same shape */
      x = m[r].call * OM_MAX_OUTPUTS;
      ok = om__runcall_output(run, &run->calls.v[m[r].call], 0, &nd, shape);
      m[q].x = m[r].x;
    } else {
      ok = run_origin(tr, run, m, ib[2], &x, &nd, shape);
      m[q].x = x;
    }
    om_attrs ab, a;
    om__runcall_attrs(b, pb, &ab);
    ok = ok && neutral_attrs(pb->op, &ab, nd, shape, &a);
    if (ok) m[q].call = log_call(run, pb->op, &a, x, nd, shape), m[q].made = true;
    ok = ok && m[q].call >= 0;
  }
  /* where the base run reads a call the run lacks, the run reads what that call reads there
   * (it is the identity): it reads the call now. Checked first, changed after. */
  for (int pass = 0; ok && pass < 2; pass++) {
    for (int q = 0; ok && q <= b->live.n; q++) {
      if (q >= stop && stop < b->live.n) break; /* past where it parts: its own reads */
      if (q < b->live.n && m[q].made) continue;
      const int64_t *in = q < b->live.n ? b->pool.v + b->calls.v[b->live.v[q]].in : b->pool.v + b->out;
      int64_t *rin = q < b->live.n ? run->pool.v + run->calls.v[m[q].call].in : run->pool.v + run->out;
      ok = rin[0] == in[0];
      for (int i = 0; ok && i < in[0]; i++) {
        int r = !in[1 + 2 * i] && in[2 + 2 * i] >= 0 ? b->calls.v[in[2 + 2 * i] / OM_MAX_OUTPUTS].rank : -1;
        if (r < 0 || !m[r].made) continue;
        ok = in[2 + 2 * i] % OM_MAX_OUTPUTS == 0 && rin[1 + 2 * i] == 0 && rin[2 + 2 * i] == m[r].x;
        if (ok && pass) rin[2 + 2 * i] = m[r].call * OM_MAX_OUTPUTS;
      }
    }
  }
  /* the live calls in the base run's order (then, where it parts, its own from there) */
  int tail = stop < b->live.n ? n0 - j : 0, n = stop < b->live.n ? stop + tail : b->live.n;
  int *rest = tail > 0 ? malloc(sizeof *rest * (size_t)tail) : NULL;
  ok = ok && (tail == 0 || rest);
  if (ok && tail > 0) memcpy(rest, run->live.v + j, sizeof *rest * (size_t)tail);
  for (int q = n0; ok && q < n; q++) ok = OM_VEC_PUSH_SLOT(run->live) != NULL;
  if (ok) {
    for (int q = 0; q < n; q++) {
      run->live.v[q] = q < stop ? (int)m[q].call : rest[q - stop];
      run->calls.v[run->live.v[q]].rank = q;
    }
    run->live.n = n;
  } else { /* as it was: the calls logged are dead */
    run->live.n = n0;
    for (int q = 0; q < b->live.n; q++)
      if (m[q].made && m[q].call >= 0) run->calls.v[m[q].call].rank = -1;
  }
  free(rest);
  free(m);
}
