/* The graph IR's storage: the arena, growable arrays, values, and freeing a graph. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph.h"

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
  *v = (om_gvalue){.dtype = dtype, .ndim = ndim, .producer = -1, .init = -1, .iota = -1};
  for (int d = 0; d < OM_MAX_DIMS; d++) v->ext[d] = -1;
  if (ndim) memcpy(v->shape, shape, sizeof(int64_t) * (size_t)ndim);
  return g->values.n - 1;
}

/* A snapshot entry leaves its storage's copy-on-write list. */
static void unlink_snapshot(om_snapshot *s) {
  for (om_snapshot **p = &s->tensor->storage->snapshots; *p; p = &(*p)->next)
    if (*p == s) {
      *p = s->next;
      break;
    }
  free(s);
}

void om__graph_free(om_graph *g) {
  for (int k = 0; k < g->inits.n; k++) {
    if (g->inits.v[k].snap) unlink_snapshot(g->inits.v[k].snap);
    om_tensor_release(g->inits.v[k].tensor);
  }
  free(g->values.v);
  free(g->nodes.v);
  free(g->inits.v);
  free(g->inputs.v);
  free(g->outputs.v);
  om__arena_free(&g->arena);
  memset(g, 0, sizeof *g);
}

/* ---- copy on write for finished models' constants ---- */

bool om__storage_will_change(om_storage *s, const char *who) {
  if (!s->snapshots) return true;
  /* Every traced model reading s in place gets one shared copy of today's bytes. */
  om_storage *copy = om__storage_new(s->nbytes, false, who);
  if (!copy) return false;
  memcpy(copy->data, s->data, s->nbytes);
  copy->version = s->version;
  while (s->snapshots) {
    om_snapshot *snap = s->snapshots;
    s->snapshots = snap->next;
    snap->next = copy->snapshots; /* stays on the copy's list, so freeing the model unlinks it there */
    copy->snapshots = snap;
    snap->tensor->storage = copy;
    copy->refcount++;
    om__storage_release(s);
  }
  om__storage_release(copy); /* the snapshots hold it now */
  return true;
}
