/* The graph IR's storage: the arena, growable arrays, values, and freeing a graph. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/graph.h"

/* ---- arena ---- */

struct om_arena_block {
  om_arena_block *next;
  size_t used, cap;
  _Alignas(16) unsigned char data[];
};

void *om__arena_alloc(om_arena *a, size_t n) {
  n = (n + 15) & ~(size_t)15; /* keep every allocation 16-byte aligned */
  om_arena_block *b = a->head;
  if (!b || b->cap - b->used < n) {
    size_t cap = n > 65536 - sizeof *b ? n : 65536 - sizeof *b;
    b = om__alloc(sizeof *b + cap, "trace");
    if (!b) return NULL;
    b->next = a->head;
    b->used = 0;
    b->cap = cap;
    a->head = b;
  }
  void *p = b->data + b->used;
  b->used += n;
  return memset(p, 0, n);
}

char *om__arena_strdup(om_arena *a, const char *s) {
  size_t n = strlen(s) + 1;
  char *p = om__arena_alloc(a, n);
  return p ? memcpy(p, s, n) : NULL;
}

char *om__arena_printf(om_arena *a, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  char *p = n >= 0 ? om__arena_alloc(a, (size_t)n + 1) : NULL;
  if (!p) return NULL;
  va_start(ap, fmt);
  vsnprintf(p, (size_t)n + 1, fmt, ap);
  va_end(ap);
  return p;
}

void om__arena_free(om_arena *a) {
  while (a->head) {
    om_arena_block *b = a->head;
    a->head = b->next;
    free(b);
  }
}

/* ---- growable arrays and values ---- */

bool om__vec_grow(void **items, int *cap, int n, size_t item_size) {
  if (n < *cap) return true;
  int next = *cap ? *cap * 2 : 16;
  void *p = realloc(*items, (size_t)next * item_size);
  if (!p) return om__fail(OM_ERR_OUT_OF_MEMORY, "trace: out of memory growing the graph to %d entries", next);
  *items = p;
  *cap = next;
  return true;
}

int om__graph_value(om_graph *g, om_dtype dtype, int ndim, const int64_t *shape) {
  om_gvalue *v = OM_VEC_PUSH_SLOT(g->values);
  if (!v) return -1;
  *v = (om_gvalue){.dtype = dtype, .ndim = ndim, .producer = -1, .init = -1, .iota = -1, .outer = -1};
  for (int d = 0; d < OM_MAX_DIMS; d++) v->ext[d] = -1;
  if (ndim) memcpy(v->shape, shape, sizeof(int64_t) * (size_t)ndim);
  return g->values.n - 1;
}

int om__graph_add_node(om_graph *g, const char *op_type, const char *name, const int *in, int n_in, const int *out, int n_out,
                    const om_gattr *attrs, int n_attrs) {
  om_gnode *n = OM_VEC_PUSH_SLOT(g->nodes);
  if (!n) return -1;
  *n = (om_gnode){.op_type = op_type, .op = (om_op)-1, .n_in = n_in, .n_out = n_out, .n_attrs = n_attrs};
  n->name = name ? om__arena_strdup(&g->arena, name) : NULL;
  n->in = om__arena_alloc(&g->arena, sizeof(int) * (size_t)(n_in + 1));
  n->out = om__arena_alloc(&g->arena, sizeof(int) * (size_t)(n_out + 1));
  n->attrs = om__arena_alloc(&g->arena, sizeof(om_gattr) * (size_t)(n_attrs + 1));
  n->cap = om__arena_alloc(&g->arena, sizeof(int));
  if (!n->name || !n->in || !n->out || !n->attrs || !n->cap) return g->nodes.n--, -1;
  memcpy(n->in, in, sizeof(int) * (size_t)n_in);
  memcpy(n->out, out, sizeof(int) * (size_t)n_out);
  if (n_attrs) memcpy(n->attrs, attrs, sizeof(om_gattr) * (size_t)n_attrs);
  for (int j = 0; j < n_out; j++) g->values.v[out[j]].producer = g->nodes.n - 1;
  return g->nodes.n - 1;
}

void om__graph_free(om_graph *g) {
  for (int k = 0; k < g->inits.n; k++) {
    om__snapshot_drop(g->inits.v[k].snap);
    om_tensor_release(g->inits.v[k].tensor);
    om_strings_release(g->inits.v[k].str);
  }
  for (int k = 0; k < g->nodes.n; k++)
    for (int a = 0; a < g->nodes.v[k].n_attrs; a++)
      if (g->nodes.v[k].attrs[a].type == OM_GATTR_TENSOR) om_tensor_release(g->nodes.v[k].attrs[a].t);
      else if (g->nodes.v[k].attrs[a].type == OM_GATTR_GRAPH && g->nodes.v[k].attrs[a].g) {
        om__graph_free(g->nodes.v[k].attrs[a].g);
        free(g->nodes.v[k].attrs[a].g);
      }
  free(g->captured.v);
  free(g->values.v);
  free(g->nodes.v);
  free(g->inits.v);
  free(g->inputs.v);
  free(g->outputs.v);
  om__arena_free(&g->arena);
  memset(g, 0, sizeof *g);
}

bool om__graph_node_captures(om_graph *g, om_gnode *n) {
  int total = 0;
  for (int a = 0; a < n->n_attrs; a++) total += n->attrs[a].type == OM_GATTR_GRAPH ? n->attrs[a].g->captured.n : 0;
  if (!(n->cap = om__arena_alloc(&g->arena, sizeof(int) * (size_t)(total + 1)))) return false;
  n->n_cap = 0;
  for (int a = 0; a < n->n_attrs; a++)
    for (int c = 0; n->attrs[a].type == OM_GATTR_GRAPH && c < n->attrs[a].g->captured.n; c++) {
      const om_graph *sub = n->attrs[a].g;
      int v = sub->values.v[sub->captured.v[c]].outer, seen = 0;
      for (int q = 0; q < n->n_cap; q++) seen |= n->cap[q] == v;
      if (!seen) n->cap[n->n_cap++] = v;
    }
  return true;
}

/* ---- copies ---- */

/* A copy of the vec's items in a fresh allocation (NULL with OutOfMemory). */
static void *copy_items(const void *items, int n, size_t size) {
  void *p = om__alloc((uint64_t)(n ? n : 1) * size, "graph copy");
  if (p && n) memcpy(p, items, (size_t)n * size);
  return p;
}

static const char *copy_str(om_arena *a, const char *s, bool *ok) {
  char *c = s ? om__arena_strdup(a, s) : NULL;
  *ok &= !s || c;
  return c;
}

/* Each of the n strings copied into the arena, in a new array there. */
static const char **copy_strs(om_arena *a, const char *const *strs, int n, bool *ok) {
  const char **c = om__arena_alloc(a, sizeof(char *) * (size_t)(n + 1));
  for (int q = 0; c && q < n; q++) c[q] = copy_str(a, strs[q], ok);
  *ok &= c != NULL;
  return c;
}

bool om__ginit_aliases(om_graph *g, om_ginit *init, const om_ginit *from) {
  bool ok = true;
  init->n_aliases = from->n_aliases;
  init->aliases = from->n_aliases ? copy_strs(&g->arena, from->aliases, from->n_aliases, &ok) : NULL;
  return ok;
}

bool om__graph_copy(om_graph *dst, const om_graph *src) {
  memset(dst, 0, sizeof *dst);
  om_arena *a = &dst->arena;
  bool ok = (dst->values.v = copy_items(src->values.v, src->values.n, sizeof *src->values.v)) &&
            (dst->nodes.v = copy_items(src->nodes.v, src->nodes.n, sizeof *src->nodes.v)) &&
            (dst->inits.v = copy_items(src->inits.v, src->inits.n, sizeof *src->inits.v)) &&
            (dst->inputs.v = copy_items(src->inputs.v, src->inputs.n, sizeof(int))) &&
            (dst->outputs.v = copy_items(src->outputs.v, src->outputs.n, sizeof(int))) &&
            (dst->captured.v = copy_items(src->captured.v, src->captured.n, sizeof(int)));
  if (!ok) return om__graph_free(dst), false;
  dst->values.n = dst->values.cap = src->values.n;
  dst->captured.n = dst->captured.cap = src->captured.n;
  dst->inputs.n = dst->inputs.cap = src->inputs.n;
  dst->outputs.n = dst->outputs.cap = src->outputs.n;
  for (int v = 0; v < src->values.n; v++) {
    om_gvalue *val = &dst->values.v[v];
    val->name = copy_str(a, val->name, &ok);
    for (int d = 0; d < val->ndim; d++) val->dim_param[d] = copy_str(a, val->dim_param[d], &ok);
    const int64_t *decl = val->decl_shape;
    int64_t *to = decl ? om__arena_alloc(a, sizeof *to * (size_t)(val->decl_ndim + 1)) : NULL;
    if (to && val->decl_ndim) memcpy(to, decl, sizeof *to * (size_t)val->decl_ndim);
    val->decl_shape = to;
    ok &= to || !decl;
  }
  /* Nodes and initializers count as copied once what they own is theirs (freeing then releases it). */
  dst->nodes.cap = src->nodes.n;
  for (int k = 0; ok && k < src->nodes.n; k++) {
    dst->nodes.n = k + 1; /* counted from the start: freeing releases what its attrs hold so far */
    om_gnode *n = &dst->nodes.v[k];
    const om_gnode *s = &src->nodes.v[k];
    n->name = copy_str(a, s->name, &ok);
    n->op_type = copy_str(a, s->op_type, &ok);
    n->in = om__arena_alloc(a, sizeof(int) * (size_t)(s->n_in + 1));
    n->out = om__arena_alloc(a, sizeof(int) * (size_t)(s->n_out + 1));
    n->attrs = om__arena_alloc(a, sizeof(om_gattr) * (size_t)(s->n_attrs + 1));
    n->cap = om__arena_alloc(a, sizeof(int) * (size_t)(s->n_cap + 1));
    n->n_attrs = 0;
    if (!ok || !n->in || !n->out || !n->attrs || !n->cap) {
      ok = false;
      break;
    }
    memcpy(n->in, s->in, sizeof(int) * (size_t)s->n_in);
    if (s->n_cap) memcpy(n->cap, s->cap, sizeof(int) * (size_t)s->n_cap);
    memcpy(n->out, s->out, sizeof(int) * (size_t)s->n_out);
    for (int i = 0; ok && i < s->n_attrs; i++, n->n_attrs++) {
      om_gattr *at = &n->attrs[i];
      *at = s->attrs[i];
      at->name = copy_str(a, at->name, &ok);
      if (at->type == OM_GATTR_STRING) at->s = copy_str(a, at->s, &ok);
      if (at->type == OM_GATTR_STRINGS) at->strs = copy_strs(a, at->strs, at->n, &ok); /* an imported graph's */
      if (at->type == OM_GATTR_TENSOR) om_tensor_retain(at->t);
      if (at->type == OM_GATTR_GRAPH) { /* a subgraph: its own deep copy (NULL until it holds one) */
        om_graph *sub = om__alloc(sizeof *sub, "graph copy");
        at->g = NULL;
        if (!sub || !om__graph_copy(sub, s->attrs[i].g)) {
          free(sub);
          ok = false;
          break;
        }
        at->g = sub;
      }
      size_t size = at->type == OM_GATTR_INTS ? sizeof(int64_t) : at->type == OM_GATTR_FLOATS ? sizeof(float) : 0;
      void *arr = size ? om__arena_alloc(a, size * (size_t)(at->n + 1)) : NULL;
      if (size && !arr) {
        ok = false;
        break;
      }
      if (size && at->n) memcpy(arr, at->type == OM_GATTR_INTS ? (const void *)at->ints : (const void *)at->floats, size * (size_t)at->n);
      if (at->type == OM_GATTR_INTS) at->ints = arr;
      if (at->type == OM_GATTR_FLOATS) at->floats = arr;
    }
  }
  /* Constants read their storage in place, each registered for a copy on write as the model's. */
  dst->inits.cap = src->inits.n;
  for (int k = 0; ok && k < src->inits.n; k++) {
    om_ginit *init = &dst->inits.v[k];
    init->snap = NULL;
    dst->inits.n = k + 1;
    init->str = om_strings_retain(src->inits.v[k].str); /* immutable: shared */
    if (init->str) init->tensor = NULL;
    else if (!(init->tensor = om__alias(src->inits.v[k].tensor))) ok = false;
    else if (src->inits.v[k].snap && !(init->snap = om__snapshot_take(init->tensor, "graph copy"))) ok = false;
    ok = ok && om__ginit_aliases(dst, init, &src->inits.v[k]);
  }
  if (!ok) om__graph_free(dst);
  return ok;
}
