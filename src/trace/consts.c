/* The constants a trace reads (spec 1): one initializer per view captured, one per value generated
 * (a shape operand, a scalar), found again through a hash index so each is stored once. */
#include <stdlib.h>
#include <string.h>

#include "trace/trace.h"

static uint64_t fnv(uint64_t h, const void *p, size_t n) {
  const unsigned char *b = p;
  for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 0x100000001b3u;
  return h;
}

/* A captured constant is known by its view, a generated one (a shape operand, a scalar) by its
 * dtype and values. */
static uint64_t key_of(const om_tensor *t, bool generated) {
  uint64_t h = fnv(0xcbf29ce484222325u ^ generated, t->shape, sizeof(int64_t) * (size_t)t->ndim);
  h = fnv(h, &t->ndim, sizeof t->ndim);
  h = fnv(h, &t->dtype, sizeof t->dtype);
  if (generated) return fnv(h, om__data(t), om__dtype_size(t->dtype) * (size_t)om_tensor_numel(t));
  h = fnv(h, &t->storage, sizeof t->storage);
  h = fnv(h, &t->offset, sizeof t->offset);
  return fnv(h, t->strides, sizeof(int64_t) * (size_t)t->ndim);
}

static bool same_const(const om_ginit *init, const om_tensor *t, bool generated) {
  const om_tensor *u = init->tensor;
  if (init->generated != generated) return false;
  if (!generated) return om__same_view(u, t);
  return u->ndim == t->ndim && u->dtype == t->dtype && om_tensor_numel(u) == om_tensor_numel(t) &&
         !memcmp(om__data(u), om__data(t), om__dtype_size(t->dtype) * (size_t)om_tensor_numel(t));
}

/* The value of the initializer equal to t, or -1. */
static int find_init(const om_trace *tr, const om_tensor *t, bool generated) {
  if (!tr->index_cap) return -1;
  size_t mask = tr->index_cap - 1;
  for (size_t i = key_of(t, generated) & mask; tr->index[i]; i = (i + 1) & mask) {
    const om_ginit *init = &tr->g.inits.v[tr->index[i] - 1];
    if (same_const(init, t, generated)) return init->value;
  }
  return -1;
}

/* Re-indexes every initializer in a table of cap slots (after growth or a rollback). */
static bool reindex(om_trace *tr, size_t cap) {
  int *index = om__alloc(sizeof(int) * cap, "trace");
  if (!index) return false;
  memset(index, 0, sizeof(int) * cap);
  for (int k = 0; k < tr->g.inits.n; k++) {
    const om_ginit *init = &tr->g.inits.v[k];
    size_t i = key_of(init->tensor, init->generated) & (cap - 1);
    while (index[i]) i = (i + 1) & (cap - 1);
    index[i] = k + 1;
  }
  free(tr->index);
  tr->index = index;
  tr->index_cap = cap;
  return true;
}

void om__trace_rollback(om_trace *tr, const int *mark) {
  om_graph *g = &tr->g;
  for (int k = mark[2]; k < g->inits.n; k++) om_tensor_release(g->inits.v[k].tensor);
  g->values.n = mark[0];
  g->nodes.n = mark[1];
  g->inits.n = mark[2];
  if (!reindex(tr, tr->index_cap ? tr->index_cap : 64)) { /* out of memory: no index, find_init finds nothing */
    free(tr->index);
    tr->index = NULL;
    tr->index_cap = 0;
  }
}

/* A new initializer value holding t (an owned reference, kept on failure too), indexed. */
static int add_init(om_trace *tr, om_tensor *t, om_op op, bool generated) {
  om_graph *g = &tr->g;
  size_t cap = tr->index_cap ? tr->index_cap : 64;
  while ((size_t)(g->inits.n + 1) * 2 > cap) cap *= 2;
  int v = cap == tr->index_cap || reindex(tr, cap) ? om__graph_value(g, t->dtype, t->ndim, t->shape) : -1;
  om_ginit *init = v >= 0 ? OM_VEC_PUSH_SLOT(g->inits) : NULL;
  if (!init) {
    if (v >= 0) g->values.n--;
    om_tensor_release(t);
    return -1;
  }
  *init = (om_ginit){.value = v, .tensor = t, .version = t->storage->version, .first_use = op, .generated = generated};
  g->values.v[v].init = g->inits.n - 1;
  size_t i = key_of(t, generated) & (tr->index_cap - 1);
  while (tr->index[i]) i = (i + 1) & (tr->index_cap - 1);
  tr->index[i] = g->inits.n;
  return v;
}

int om__const_capture(om_trace *tr, om_tensor *t, om_op op) {
  int found = find_init(tr, t, false);
  if (found >= 0) return found;
  uint64_t bytes = (uint64_t)om_tensor_numel(t) * om__dtype_size(t->dtype);
  if (bytes > (uint64_t)INT32_MAX) {
    char buf[OM_SHAPE_STR_LEN];
    om__trace_fail(OM_ERR_TRACE_UNSUPPORTED_OPERATION,
                   "%s: reads a constant of shape %s (%llu bytes), over ONNX's 2 GiB limit for one initializer",
                   om_op_name(op), om__shape_str(buf, sizeof buf, t->shape, t->ndim), (unsigned long long)bytes);
    return -1;
  }
  om_tensor *view = om__alias(t);
  return view ? add_init(tr, view, op, false) : -1;
}

int om__const_generated(om_trace *tr, const void *data, int64_t count, int ndim, om_dtype dtype, om_op op) {
  om_tensor probe = {.storage = &(om_storage){.data = (void *)data}, .dtype = dtype, .ndim = ndim, .shape = {count}};
  int found = find_init(tr, &probe, true);
  if (found >= 0) return found;
  om_tensor *t = om_from_data(data, (int64_t[]){count}, ndim, dtype);
  return t ? add_init(tr, t, op, true) : -1;
}
