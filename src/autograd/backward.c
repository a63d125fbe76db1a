/* Reverse-mode autograd over backward records: grad mode, leaves, and the backward pass. */
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

/* Sets grad mode without the tracer's check: backward turns recording off for its own ops. */
static bool set_grad_mode(bool enabled) {
  bool prev = !om__state()->grad_disabled;
  om__state()->grad_disabled = !enabled;
  return prev;
}

bool om_set_grad_enabled(bool enabled) {
  /* Ops run with grad off would still be traced, but user code turning it off means "not part
   * of the model" (an update, a metric): the spec refuses it rather than guess. */
  if (!enabled && om__state()->trace) {
    om__trace_fail(OM_ERR_TRACE_NO_GRAD, "no_grad: grad mode turned off while tracing; results computed inside "
                                         "would not be recorded and would be frozen as constants");
    return true;
  }
  return set_grad_mode(enabled);
}

bool om_is_grad_enabled(void) { return !om__state()->grad_disabled; }

bool om_tensor_set_requires_grad(om_tensor *t, bool requires_grad) {
  if (!om__check_inputs("set_requires_grad", &t, 1)) return false;
  if (t->grad_fn)
    return om__fail(OM_ERR_INVALID_ARGUMENT,
                    "set_requires_grad: only leaf tensors can be marked; this one was made by %s (detach it first)",
                    om_op_name(t->grad_fn->op));
  if (requires_grad && t->dtype != OM_FLOAT32)
    return om__fail(OM_ERR_DTYPE_MISMATCH, "set_requires_grad: only float32 tensors take gradients, not %s",
                    om_dtype_name(t->dtype));
  if (requires_grad && t->base) { /* a leaf is its views' base: a write through them is refused */
    om_tensor_release(t->base);
    t->base = NULL;
  }
  t->requires_grad = requires_grad;
  return true;
}

/* Traced tensors report requires-grad while their trace records (spec 1: code that asks before
 * recording behaves as it would in training). The tracer itself hooks om__apply, and a traced
 * result gets a graph value rather than an autograd record unless a real gradient is wanted. */
bool om_tensor_requires_grad(const om_tensor *t) { return t && (om__needs_grad(t) || om__traced(t)); }
bool om_tensor_is_leaf(const om_tensor *t) { return t && !t->grad_fn; }
om_tensor *om_tensor_grad(const om_tensor *t) { return t ? om_tensor_retain(t->grad) : NULL; }

void om_tensor_zero_grad(om_tensor *t) {
  if (!t) return;
  om_tensor_release(t->grad);
  t->grad = NULL;
}

om_tensor *om_detach(om_tensor *t) {
  if (!om__check_inputs("detach", &t, 1)) return NULL;
  if (om__traced(t)) return om_tensor_retain(t); /* spec: detach of a traced tensor returns it unchanged */
  return om__alias(t);
}

om_tensor *om__sum_to(om_tensor *g, const int64_t *shape, int ndim) {
  int64_t dims[OM_MAX_DIMS];
  int n = 0, lead = g->ndim - ndim;
  for (int d = 0; d < g->ndim; d++)
    if (d < lead || (shape[d - lead] == 1 && g->shape[d] != 1)) dims[n++] = d;
  if (n == 0) return om_tensor_retain(g);
  om_tensor *s = om_sum(g, dims, n, true);
  om_tensor *r = om_reshape(s, shape, ndim);
  om_tensor_release(s);
  return r;
}

/* acc += g, where acc may be NULL. Returns false on error (acc untouched then). */
static bool accumulate(om_tensor **acc, om_tensor *g) {
  om_tensor *sum = *acc ? om_add(*acc, g) : om_clone(g);
  if (!sum) return false;
  om_tensor_release(*acc);
  *acc = sum;
  return true;
}

typedef struct { om_record **v; size_t n, cap; } record_list;

static bool push(record_list *l, om_record *r) {
  if (l->n == l->cap) {
    size_t cap = l->cap ? 2 * l->cap : 64;
    om_record **v = realloc(l->v, cap * sizeof *v);
    if (!v) return om__fail(OM_ERR_OUT_OF_MEMORY, "backward: out of memory for the graph walk");
    l->v = v;
    l->cap = cap;
  }
  l->v[l->n++] = r;
  return true;
}

/* Checks that no value the record's backward reads was changed in place since the forward. */
static bool check_versions(const om_record *r) {
  const om_op_def *def = om__ops[r->op];
  for (int k = 0; k < r->n_in && k < OM_MAX_SAVED_INPUTS; k++)
    if ((def->saves & OM_SAVES_IN(k)) && r->in[k]->storage->version != r->in_version[k] &&
        /* a product reads each factor only for the other's gradient (PyTorch's mul saves self only
         * when other requires grad: `y[:, 1:].mul_(2)`, `before = y[0] * 3` then a write into y);
         * a quotient its numerator only for the divisor's (Longformer's `query /= sqrt(d)`) */
        !(r->op == OM_OP_mul && !r->in_fn[1 - k] && !r->in[1 - k]->requires_grad) &&
        !(r->op == OM_OP_div && k == 0 && !r->in_fn[1] && !r->in[1]->requires_grad))
      return om__fail(OM_ERR_AUTOGRAD, "backward: one of the variables needed for gradient computation has been modified by an inplace operation: "
                      "input %d of %s was changed in place after it was used (version %llu, now %llu)",
                      k, def->name, (unsigned long long)r->in_version[k], (unsigned long long)r->in[k]->storage->version);
  for (int j = 0; j < r->n_out; j++)
    if (r->saved[j] && r->saved[j]->storage->version != r->saved_version[j])
      return om__fail(OM_ERR_AUTOGRAD, "backward: one of the variables needed for gradient computation has been modified by an inplace operation: "
                      "output %d of %s was changed in place after it was saved", j, def->name);
  return true;
}

/* A gradient reached a tensor whose values were written from one autograd tracks, through a write
 * autograd does not follow (om_storage.grad_lost): the tensors it came from would get none. */
static bool lost(const char *op, int k) {
  char what[64];
  if (op) snprintf(what, sizeof what, "input %d of %s", k, op);
  else snprintf(what, sizeof what, "the tensor");
  return om__fail(OM_ERR_AUTOGRAD, "backward: %s holds values written from a tensor that requires grad into one that did "
                  "not (a copy_ into a slice of a new tensor), which autograd does not follow: their gradient would be "
                  "lost; build the value out of place (cat, where, sliceScatter)", what);
}

/* Runs one record's backward and routes the input gradients. */
static bool step(om_record *r, record_list *ready) {
  om_tensor *gout[OM_MAX_OUTPUTS] = {0}, *zero[OM_MAX_OUTPUTS] = {0};
  bool ok = check_versions(r);
  for (int j = 0; ok && j < r->n_out; j++) {
    gout[j] = r->grad_acc[j];
    if (!gout[j]) ok = (gout[j] = zero[j] = om__tensor_new(&r->out_meta[j], true, "backward")) != NULL;
  }
  om_tensor *gin_inline[OM_MAX_INPUTS_INLINE] = {0}, **gin = gin_inline;
  /* also when ok is already false: the loop below reads n_in slots */
  if (r->n_in > OM_MAX_INPUTS_INLINE && !(gin = calloc((size_t)r->n_in, sizeof *gin)) && ok)
    ok = om__fail(OM_ERR_OUT_OF_MEMORY, "backward: out of memory");
  if (ok) ok = om__ops[r->op]->backward(r, gout, gin);
  for (int k = 0; k < r->n_in; k++) {
    om_tensor *in = r->in[k];
    if (ok && gin[k] && (gin[k]->ndim != in->ndim || memcmp(gin[k]->shape, in->shape, sizeof(int64_t) * (size_t)in->ndim))) {
      char a[OM_SHAPE_STR_LEN], b[OM_SHAPE_STR_LEN]; /* a wrong rule must fail here, not corrupt a gradient */
      ok = om__fail(OM_ERR_AUTOGRAD, "backward: %s gave input %d a gradient of shape %s for its shape %s (a bug in onemodel)",
                    om__ops[r->op]->name, k, om__shape_str(a, sizeof a, gin[k]->shape, gin[k]->ndim),
                    om__shape_str(b, sizeof b, in->shape, in->ndim));
    }
    om_record *fn = r->in_fn[k]; /* the edge as the record was made (a later write may have rebased in) */
    if (ok && gin[k] && fn) ok = accumulate(&fn->grad_acc[r->in_index[k]], gin[k]);
    else if (ok && gin[k] && in->requires_grad && !in->grad_fn) ok = accumulate(&in->grad, gin[k]);
    else if (ok && gin[k] && in->storage->grad_lost) ok = lost(om__ops[r->op]->name, k);
    if (fn && --fn->pending == 0 && ok) ok = push(ready, fn);
    if (gin) om_tensor_release(gin[k]);
  }
  if (gin != gin_inline) free(gin);
  om__release_all(zero, OM_MAX_OUTPUTS);
  om__release_all(r->grad_acc, OM_MAX_OUTPUTS);
  return ok;
}

/* Every record reachable from r into seen, each marked queued once and its pending set to how
 * many of them consume it (Kahn's counts). A freed record has no inputs left to walk. A record is
 * marked only once it is in seen, so unmark() reaches every mark, also after a failed push. */
static bool reach(om_record *r, record_list *seen) {
  bool ok = push(seen, r);
  if (ok) r->queued = true;
  for (size_t i = 0; ok && i < seen->n; i++)
    for (int k = 0; k < seen->v[i]->n_in && !seen->v[i]->freed && ok; k++) {
      om_record *p = seen->v[i]->in_fn[k];
      if (!p) continue;
      if (!p->queued && !(ok = push(seen, p))) break;
      p->queued = true;
      p->pending++;
    }
  return ok;
}

/* Resets reach()'s marks and one pass's scratch. */
static void unmark(record_list *seen) {
  for (size_t i = 0; i < seen->n; i++) {
    seen->v[i]->pending = 0;
    seen->v[i]->queued = false;
    om__release_all(seen->v[i]->grad_acc, OM_MAX_OUTPUTS);
  }
}

bool om_tensor_free_graph(om_tensor *t) {
  if (!om__check_inputs("free_graph", &t, 1)) return false;
  if (!t->grad_fn) return true;
  record_list seen = {0};
  bool ok = reach(t->grad_fn, &seen);
  unmark(&seen);
  if (ok) {
    /* Held while their inputs go: releasing an input may free a tensor whose record is in seen. */
    for (size_t i = 0; i < seen.n; i++) seen.v[i]->refcount++;
    for (size_t i = 0; i < seen.n; i++) {
      om_record *r = seen.v[i];
      if (r->freed) continue;
      r->freed = true;
      om__release_all(r->in, r->n_in);
      om__release_all(r->saved, OM_MAX_OUTPUTS);
      for (int k = 0; k < r->n_in; k++) {
        om__record_release(r->in_fn[k]);
        r->in_fn[k] = NULL;
      }
    }
    for (size_t i = 0; i < seen.n; i++) om__record_release(seen.v[i]);
  }
  free(seen.v);
  return ok;
}

static bool backward(om_tensor *root, const om_tensor *grad);

/* While a trace records, backward's ops are not the model's calls (om__trace_hold); in a run at
 * other sizes (phantoms, no values) there is nothing to compute. */
bool om_backward(om_tensor *root, const om_tensor *grad) {
  if (!om__check_inputs("backward", &root, 1)) return false;
  if (om__trace_shadow()) return true;
  om__trace_hold(1);
  bool ok = backward(root, grad);
  om__trace_hold(-1);
  return ok;
}

static bool backward(om_tensor *root, const om_tensor *grad) {
  if (root->base && !om__view_sync(root)) return false;
  if (!om__needs_grad(root))
    return om__fail(OM_ERR_AUTOGRAD, "backward: the tensor does not require grad (no input was marked requires_grad)");
  char a[OM_SHAPE_STR_LEN], b[OM_SHAPE_STR_LEN];
  om_tensor *g;
  if (grad) {
    if (grad->ndim != root->ndim || memcmp(grad->shape, root->shape, sizeof(int64_t) * (size_t)root->ndim))
      return om__fail(OM_ERR_SHAPE_MISMATCH, "backward: gradient of shape %s for a tensor of shape %s",
                      om__shape_str(a, sizeof a, grad->shape, grad->ndim), om__shape_str(b, sizeof b, root->shape, root->ndim));
    if (grad->dtype != OM_FLOAT32)
      return om__fail(OM_ERR_DTYPE_MISMATCH, "backward: gradient must be float32, not %s", om_dtype_name(grad->dtype));
    g = om_tensor_retain((om_tensor *)grad);
  } else {
    if (om_tensor_numel(root) != 1)
      return om__fail(OM_ERR_AUTOGRAD, "backward: a gradient is needed for a tensor of shape %s (only one-element tensors default to 1)",
                      om__shape_str(a, sizeof a, root->shape, root->ndim));
    om_meta m = {.dtype = OM_FLOAT32, .ndim = root->ndim};
    memcpy(m.shape, root->shape, sizeof m.shape);
    if (!(g = om__tensor_new(&m, false, "backward"))) return false;
    *(float *)g->storage->data = 1.0f;
  }
  bool prev = set_grad_mode(false), ok = true;
  if (!root->grad_fn) {
    ok = root->requires_grad ? accumulate(&root->grad, g) : lost(NULL, 0);
  } else {
    /* Count, for every reachable record, how many reachable records consume it; then run
     * records in an order where each runs after all its consumers (Kahn's algorithm). */
    record_list seen = {0}, ready = {0};
    ok = reach(root->grad_fn, &seen);
    for (size_t i = 0; ok && i < seen.n; i++)
      if (seen.v[i]->freed)
        ok = om__fail(OM_ERR_AUTOGRAD, "backward: the graph through %s was freed by an earlier backward; "
                                       "pass retain_graph (JS: { retainGraph: true }) to the first one to run backward twice",
                      om_op_name(seen.v[i]->op));
    if (ok) {
      root->grad_fn->grad_acc[root->output_index] = om_tensor_retain(g);
      ok = push(&ready, root->grad_fn);
    }
    while (ok && ready.n) ok = step(ready.v[--ready.n], &ready);
    unmark(&seen); /* also after an error */
    free(seen.v);
    free(ready.v);
  }
  set_grad_mode(prev);
  om_tensor_release(g);
  return ok;
}
