/* The op table and the one apply path every op goes through:
 * validate + infer -> allocate -> forward kernel -> backward record (when grad is needed). */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

const om_op_def *const om__ops[OM_OP_COUNT] = {
#define OM_OP(name, family) [OM_OP_##name] = &om__op_##name,
#include "ops/ops.def"
#undef OM_OP
};

const char *const om__op_families[OM_OP_COUNT] = {
#define OM_OP(name, family) [OM_OP_##name] = #family,
#include "ops/ops.def"
#undef OM_OP
};

const char *om_op_name(int op) { return op >= 0 && op < OM_OP_COUNT ? om__ops[op]->name : NULL; }

bool om__ops_self_check(void) {
  for (int op = 0; op < OM_OP_COUNT; op++) {
    const om_op_def *d = om__ops[op];
    const char *gap = !d || !d->name ? "a name" : !d->infer ? "infer" : !d->forward ? "forward"
                      : !d->backward && !d->test.no_gradcheck ? "a backward (or the non-differentiable mark)"
                      : !d->lower ? "a lower (or a refusal)" : !d->onnx ? "its ONNX nodes (onnx)"
                      : d->test.n_in < 1 || d->test.n_in > OM_TEST_MAX_INPUTS || (d->n_in >= 0 && d->test.n_in != d->n_in) ? "test settings" : NULL;
    if (gap) return om__fail(OM_ERR_INVALID_ARGUMENT, "op table: op %d (%s) lacks %s", op, d && d->name ? d->name : "?", gap);
  }
  return true;
}

/* A view whose base was written through another view since its record was made needs grad when
 * the base does now (om__view_sync gives it the record before its next use). */
bool om__needs_grad(const om_tensor *t) {
  return t->requires_grad || t->grad_fn || t->storage->grad_lost ||
         (t->base && t->base_gen != t->base->write_gen && (t->base->grad_fn || t->base->requires_grad));
}

/* Releasing a record releases its inputs, which may release their records, and so on down a
 * chain as long as the model ran ops: done with a worklist, not recursion, so the depth of a
 * graph is never limited by the C stack. */
void om__record_release(om_record *r) {
  if (!r || --r->refcount > 0) return;
  om_thread_state *st = om__state();
  r->next_dead = st->dead_records;
  st->dead_records = r;
  if (st->draining) return; /* an outer call is draining the list */
  st->draining = true;
  while ((r = st->dead_records)) {
    st->dead_records = r->next_dead;
    for (int k = 0; k < r->n_in; k++) om_tensor_release(r->in[k]);
    for (int j = 0; j < r->n_out; j++) om_tensor_release(r->saved[j]);
    for (int k = 0; k < r->n_in; k++) om__record_release(r->in_fn[k]); /* queued: drained by this loop */
    if (r->in != r->in_inline) free(r->in);
    if (r->in_fn != r->in_fn_inline) free(r->in_fn);
    if (r->in_index != r->in_index_inline) free(r->in_index);
    free(r);
  }
  st->draining = false;
}

/* What a record holds of an input: a header of its own over the input's storage (same values,
 * version checks as before) with the input's record, not the input itself, so that a later write
 * that gives the input (or its view's base) a record reading this one's output makes no cycle of
 * references (PyTorch's records hold edges, not tensors). A leaf that requires grad is held
 * itself: its gradient accumulates there, and no write can give it a record. */
static om_tensor *record_input(om_tensor *t) {
  if (t->requires_grad && !t->grad_fn) return om_tensor_retain(t);
  om_tensor *a = om__alias(t);
  if (!a) return NULL;
  a->grad_fn = t->grad_fn;
  a->output_index = t->output_index;
  if (a->grad_fn) a->grad_fn->refcount++;
  a->trace_id = t->trace_id;
  a->trace_value = t->trace_value;
  return a;
}

/* Builds the backward record of c and hands it to c's float outputs (out[0] is float). */
static bool record(const om_op_def *def, om_call *c) {
  om_record *r = om__alloc(sizeof *r, def->name);
  if (!r) return false;
  memset(r, 0, sizeof *r);
  bool inline_in = c->n_in <= OM_MAX_INPUTS_INLINE;
  r->in = inline_in ? r->in_inline : om__alloc(sizeof(om_tensor *) * (size_t)c->n_in, def->name);
  r->in_fn = inline_in ? r->in_fn_inline : om__alloc(sizeof(om_record *) * (size_t)c->n_in, def->name);
  r->in_index = inline_in ? r->in_index_inline : om__alloc(sizeof(int) * (size_t)c->n_in, def->name);
  if (!r->in || !r->in_fn || !r->in_index) {
    if (!inline_in) free(r->in), free(r->in_fn), free(r->in_index);
    free(r);
    return false;
  }
  r->op = c->op;
  r->n_in = c->n_in;
  r->n_out = c->n_out;
  r->attrs = c->attrs;
  memcpy(r->out_meta, c->out_meta, sizeof r->out_meta);
  for (int k = 0; k < c->n_in; k++) {
    r->in[k] = record_input(c->in[k]);
    if (!r->in[k]) {
      r->n_in = k;
      r->refcount = 1;
      om__record_release(r);
      return false;
    }
    r->in_fn[k] = c->in[k]->grad_fn;
    r->in_index[k] = c->in[k]->output_index;
    if (r->in_fn[k]) r->in_fn[k]->refcount++;
    if (k < OM_MAX_SAVED_INPUTS) r->in_version[k] = c->in[k]->storage->version;
  }
  for (int j = 0; j < c->n_out; j++) {
    if (!(def->saves & OM_SAVES_OUT(j))) continue;
    r->saved[j] = om__alias(c->out[j]);
    if (!r->saved[j]) {
      r->refcount = 1;
      om__record_release(r);
      return false;
    }
    r->saved_version[j] = c->out[j]->storage->version;
  }
  for (int j = 0; j < c->n_out; j++) {
    if (c->out[j]->dtype != OM_FLOAT32) continue;
    c->out[j]->grad_fn = r;
    c->out[j]->output_index = j;
    r->refcount++;
  }
  return true;
}

bool om__record_write(om_op op, om_tensor *const *in, int n_in, const om_attrs *a, om_tensor *out) {
  const om_op_def *def = om__ops[op];
  om_call c = {.op = op, .n_in = n_in, .n_out = 1, .in = in, .attrs = *a};
  c.out_meta[0].dtype = out->dtype;
  c.out_meta[0].ndim = out->ndim;
  memcpy(c.out_meta[0].shape, out->shape, sizeof out->shape);
  c.out[0] = out;
  om_record *prev = out->grad_fn;
  out->grad_fn = NULL;
  if (!record(def, &c)) {
    out->grad_fn = prev;
    return false;
  }
  om__record_release(prev);
  return true;
}

bool om__view_sync(om_tensor *v) {
  om_tensor *b = v->base;
  if (!b || v->base_gen == b->write_gen) return true;
  if (b->grad_fn || b->requires_grad) { /* the view's elements of the base as it is now */
    om_attrs a = {.n_i = 2 * v->ndim + 1};
    memcpy(a.i, v->shape, sizeof(int64_t) * (size_t)v->ndim);
    memcpy(a.i + v->ndim, v->strides, sizeof(int64_t) * (size_t)v->ndim);
    a.i[2 * v->ndim] = v->offset;
    if (!om__record_write(OM_OP_as_strided, &b, 1, &a, v)) return false;
  }
  v->base_gen = b->write_gen;
  return true;
}

static bool make_outputs(const om_op_def *def, om_call *c, bool phantom);

/* The dtype input i of a call is promoted to (def->promote's rule), or its own. */
static om_dtype promoted(const om_op_def *def, om_op op, om_tensor *const *in, int n_in, const om_attrs *attrs, int i) {
  int how = def->promote;
  if (op == OM_OP_div && attrs && attrs->n_i) how = OM_PROMOTE_COMMON; /* a rounding mode keeps integers */
  if (how == OM_PROMOTE_BOOL) return OM_BOOL;
  if (how == OM_PROMOTE_NO_BOOL) how = OM_PROMOTE_COMMON;
  if (how == OM_PROMOTE_VALUES && i == 0) return in[0]->dtype;
  static const om_dtype by_rank[] = {OM_BOOL, OM_INT64, OM_FLOAT32, OM_FLOAT64};
  int rank[] = {[OM_BOOL] = 0, [OM_INT64] = 1, [OM_FLOAT32] = 2, [OM_FLOAT64] = 3}, best = how == OM_PROMOTE_FLOAT ? 2 : 0;
  for (int k = how == OM_PROMOTE_VALUES; k < n_in; k++)
    if (rank[in[k]->dtype] > best) best = rank[in[k]->dtype];
  return by_rank[best];
}

/* Applies op to its inputs cast to their promoted dtypes (def->promote) when one differs: 0 when
 * none does (the caller goes on), else what om__apply returns. */
static int apply_promoted(const om_op_def *def, om_op op, om_tensor *const *in, int n_in, const om_attrs *attrs, om_tensor **out) {
  om_tensor *cast[3]; /* the ops that promote take at most three inputs (where) */
  for (int i = 0; def->promote == OM_PROMOTE_NO_BOOL && i < n_in; i++)
    if (in[i]->dtype == OM_BOOL) /* PyTorch's words */
      return om__fail(OM_ERR_DTYPE_MISMATCH, "%s: subtraction, the `-` operator, with a bool tensor is not supported "
                      "(use the `^` or logical_xor() operator, or `~` or logical_not() to invert a mask)", def->name), -1;
  bool differs = false;
  for (int i = 0; i < n_in; i++) differs |= promoted(def, op, in, n_in, attrs, i) != in[i]->dtype;
  if (!differs) return 0;
  if (n_in > 3) return om__fail(OM_ERR_INVALID_ARGUMENT, "%s: %d inputs to promote", def->name, n_in), -1;
  int n = 0;
  while (n < n_in && (cast[n] = om_cast(in[n], promoted(def, op, in, n_in, attrs, n)))) n++;
  int r = n == n_in ? om__apply(op, cast, n_in, attrs, out) : -1;
  om__release_all(cast, n);
  return r;
}

/* True when one of the n inputs lies on a plan's buffer (om_capture_hook): a call the plan being
 * made records; one on plain tensors alone (a rule's constant) runs now. */
static bool planned_input(om_tensor *const *in, int n) {
  for (int k = 0; k < n; k++)
    if (in[k] && in[k]->storage->planned) return true;
  return false;
}

int om__apply(om_op op, om_tensor *const *in, int n_in, const om_attrs *attrs, om_tensor **out) {
  if ((unsigned)op >= OM_OP_COUNT) return om__fail(OM_ERR_INVALID_ARGUMENT, "apply: unknown op %d", (int)op), -1;
  const om_op_def *def = om__ops[op];
#ifndef NDEBUG /* debug builds check the whole table once per thread, before the first op */
  if (!om__state()->ops_checked && !(om__state()->ops_checked = om__ops_self_check())) return -1;
#endif
  if (!om__check_inputs(def->name, in, n_in)) return -1;
  for (int k = 0; k < n_in; k++)
    if (in[k]->base && !om__view_sync(in[k])) return -1;
  if (def->n_in >= 0 ? n_in != def->n_in : n_in < 1)
    return om__fail(OM_ERR_INVALID_ARGUMENT, "%s: takes %d inputs, got %d", def->name, def->n_in, n_in), -1;
  for (int k = 0; !def->takes_float64 && k < n_in; k++)
    if (in[k]->dtype == OM_FLOAT64)
      return om__fail(OM_ERR_DTYPE_MISMATCH, "%s: takes no float64 (input %d; docs/graph-runtime.md lists the ops computed in double)", def->name, k), -1;
  if (def->promote) {
    int r = apply_promoted(def, op, in, n_in, attrs, out);
    if (r) return r;
  }
  /* Only what is read before it is written is set: zeroing the whole call (450 bytes) was a
   * tenth of a small op's time in C. Attributes past their counts read as 0, as om_apply's do. */
  static const om_attrs no_attrs;
  const om_attrs *given = attrs ? attrs : &no_attrs;
  om_call c;
  c.op = op, c.n_in = n_in, c.n_out = def->n_out, c.in = in, c.attrs = *given;
  memset(c.out_meta, 0, sizeof(om_meta) * (size_t)c.n_out);
  memset(c.out, 0, sizeof c.out);
  memset(c.trace_out, 0, sizeof c.trace_out);
  memset(c.trace_mark, 0, sizeof c.trace_mark);
  /* Tracing: the call is logged (a run at other sizes) or checked against the other runs before
   * infer, which may fail at other sizes; it is lowered before computing, so a refused op fails
   * before it costs anything. */
  bool tracing = om__state()->trace != NULL;
  for (int k = 0; tracing && k < n_in; k++) /* a view of a value a write replaced reads the new value */
    if (in[k]->view && !om__trace_sync(in[k])) return -1;
  int64_t index = tracing ? om__trace_begin_call(def, &c, given) : -1;
  if (index == -2) return -1;
  int how = -1;
  bool ok = def->infer(&c);
  for (int j = 0; ok && j < c.n_out; j++) /* views allocate nothing, but their element count must fit too */
    ok = om__numel(c.out_meta[j].shape, c.out_meta[j].ndim, def->name) >= 0;
  if (ok && tracing) ok = (how = om__trace_lower(def, &c, given, index)) >= 0;
  bool phantom = how == OM_CALL_PHANTOM;
  const om_capture_hook *cap = tracing ? NULL : om__state()->capture;
  if (cap && planned_input(in, n_in)) { /* a plan being made: recorded, computed when it runs */
    if (!ok || !cap->call(cap->ctx, def, &c)) return -1;
    memcpy(out, c.out, sizeof(om_tensor *) * (size_t)c.n_out);
    return c.n_out;
  }
  ok = ok && make_outputs(def, &c, phantom) && (phantom && !def->view ? true : def->forward(&c));
  for (int j = 0; ok && def->view && j < c.n_out; j++) /* a view (not a copy a reshape made): its base */
    if (c.out[j]->storage == in[0]->storage) {
      om_tensor *b = in[0]->base ? in[0]->base : in[0];
      c.out[j]->base = om_tensor_retain(b);
      c.out[j]->base_gen = b->write_gen;
    }
  bool grad = false;
  if (ok && !phantom && def->backward && om_is_grad_enabled() && c.out_meta[0].dtype == OM_FLOAT32)
    for (int k = 0; k < n_in; k++) grad |= om__needs_grad(in[k]);
  ok = ok && (!grad || record(def, &c)) && (!tracing || !def->view || om__trace_link_view(&c, given));
  if (tracing) om__trace_end_call(&c, index, how, ok);
  if (!ok) {
    om__release_all(c.out, c.n_out);
    return -1;
  }
  memcpy(out, c.out, sizeof(om_tensor *) * (size_t)c.n_out);
  return c.n_out;
}

/* Allocates c's outputs: new storages, or headers on in[0]'s storage for view ops (a phantom
 * for a call on phantoms in a run at other sizes: the shape without data). */
static bool make_outputs(const om_op_def *def, om_call *c, bool phantom) {
  for (int j = 0; j < c->n_out; j++) {
    if (def->view) {
      c->out[j] = om__alias(c->in[0]);
      if (c->out[j]) {
        c->out[j]->ndim = c->out_meta[j].ndim;
        memcpy(c->out[j]->shape, c->out_meta[j].shape, sizeof c->out[j]->shape);
        c->out[j]->trace_id = phantom ? c->in[0]->trace_id : 0;
        c->out[j]->trace_value = -1;
      }
    } else {
      c->out[j] = phantom ? om__trace_phantom(&c->out_meta[j]) : om__tensor_new(&c->out_meta[j], false, om__ops[c->op]->name);
    }
    if (!c->out[j]) return false;
  }
  return true;
}

om_tensor *om__apply1(om_op op, om_tensor *const *in, int n_in, const om_attrs *attrs) {
  om_tensor *out[OM_MAX_OUTPUTS] = {0};
  int n = om__apply(op, in, n_in, attrs, out);
  if (n < 0) return NULL;
  om__release_all(out + 1, n - 1);
  return out[0];
}

int om_apply(om_op op, om_tensor *const *in, int n_in, const int64_t *iattrs, int n_iattrs,
             const double *fattrs, int n_fattrs, om_tensor **out, int max_out) {
  const char *who = (unsigned)op < OM_OP_COUNT ? om__ops[op]->name : "apply";
  if (n_iattrs < 0 || n_iattrs > OM_MAX_IATTRS || n_fattrs < 0 || n_fattrs > OM_MAX_FATTRS ||
      (n_iattrs && !iattrs) || (n_fattrs && !fattrs))
    return om__fail(OM_ERR_INVALID_ARGUMENT, "%s: %d integer / %d float attributes (at most %d / %d)", who,
                    n_iattrs, n_fattrs, OM_MAX_IATTRS, OM_MAX_FATTRS), -1;
  if (n_in < 0 || (n_in && !in)) return om__fail(OM_ERR_INVALID_ARGUMENT, "%s: no inputs given", who), -1;
  if (!out || (unsigned)op >= OM_OP_COUNT || max_out < om__ops[op]->n_out)
    return om__fail(OM_ERR_INVALID_ARGUMENT, "%s: room for %d outputs", who, max_out), -1;
  om_attrs a = {.n_i = n_iattrs, .n_f = n_fattrs};
  if (n_iattrs) memcpy(a.i, iattrs, sizeof(int64_t) * (size_t)n_iattrs);
  if (n_fattrs) memcpy(a.f, fattrs, sizeof(double) * (size_t)n_fattrs);
  return om__apply(op, in, n_in, &a, out);
}
