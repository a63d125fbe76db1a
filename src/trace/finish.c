/* Finishing a trace (spec 1): check the outputs and the captured constants, keep only what the
 * outputs need, name everything deterministically, and freeze the graph into an
 * om_traced_model; plus the model's accessors. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace/trace.h"

/* ---- checks ---- */

static bool check_outputs(om_trace *tr, om_tensor *const *outputs, const char *const *names, int n) {
  if (n < 1 || !outputs || !names)
    return om__trace_fail(OM_ERR_TRACE_INVALID_USAGE, "trace_finish: needs at least one output and its name (got %d)", n);
  for (int k = 0; k < n; k++) {
    if (!outputs[k]) return om__trace_fail(OM_ERR_TRACE_INVALID_USAGE, "trace_finish: output %d is NULL", k);
    if (!om__trace_check_name(tr, names[k], "trace_finish")) return false;
    for (int e = 0; e < k; e++)
      if (!strcmp(names[e], names[k]))
        return om__trace_fail(OM_ERR_TRACE_INVALID_USAGE, "trace_finish: name '%s' is used twice (already an output)", names[k]);
    if (!om__traced(outputs[k]))
      return om__trace_fail(OM_ERR_TRACE_INVALID_USAGE,
                            "trace_finish: output '%s' does not depend on any input; it would be a constant, not a "
                            "computation", names[k]);
  }
  return true;
}

/* The elements [lo, hi] of its storage that view t can reach. */
static void span(const om_tensor *t, int64_t *lo, int64_t *hi) {
  *lo = *hi = t->offset;
  for (int d = 0; d < t->ndim; d++) {
    int64_t reach = (t->shape[d] - 1) * t->strides[d];
    if (reach < 0) *lo += reach;
    else *hi += reach;
  }
}

/* The parameter whose exact view t is, else NULL; *shared gets the parameter t is another view
 * of, for "<name>.view_<n>": on t's storage, the first whose elements cover t's (two weights
 * sliced from one flat buffer each keep their views), else the first on that storage. */
static const om_param *param_of(const om_trace *tr, const om_tensor *t, const om_param **shared) {
  const om_param *covering = NULL, *first = NULL;
  int64_t lo, hi, plo, phi;
  span(t, &lo, &hi);
  for (int k = 0; k < tr->params.n; k++) {
    const om_param *p = &tr->params.v[k];
    if (om__same_view(p->view, t)) return *shared = NULL, p;
    if (p->view->storage != t->storage) continue;
    span(p->view, &plo, &phi);
    if (!covering && plo <= lo && hi <= phi) covering = p;
    if (!first) first = p;
  }
  *shared = covering ? covering : first;
  return NULL;
}

/* Spec 3: a constant changed in place during the trace would be written with its new values,
 * but the eager run (and so the graph's meaning) used the old ones. */
static bool check_constants(om_trace *tr) {
  for (int k = 0; k < tr->g.inits.n; k++) {
    const om_ginit *init = &tr->g.inits.v[k];
    if (init->generated || init->tensor->storage->version == init->version) continue;
    const om_param *shared, *p = param_of(tr, init->tensor, &shared);
    char buf[OM_SHAPE_STR_LEN], what[OM_SHAPE_STR_LEN + 64];
    om__shape_str(buf, sizeof buf, init->tensor->shape, init->tensor->ndim);
    if (p) snprintf(what, sizeof what, "constant '%s' %s", p->name, buf);
    else snprintf(what, sizeof what, "a constant of shape %s", buf);
    return om__trace_fail(OM_ERR_TRACE_IN_PLACE_MUTATION,
                          "trace_finish: %s, first read by %s, was changed in place during the trace (version %llu "
                          "-> %llu); the graph would hold values the traced run did not use",
                          what, om_op_name(init->first_use), (unsigned long long)init->version,
                          (unsigned long long)init->tensor->storage->version);
  }
  return true;
}

/* One ONNX file is one protobuf message, which cannot exceed 2 GiB (and its parsers refuse
 * it): the initializers the outputs need must fit, not only each one alone (spec 2). */
static bool check_size(om_graph *g) {
  uint64_t total = 0;
  for (int k = 0; k < g->inits.n; k++) {
    const om_tensor *t = g->inits.v[k].tensor;
    if (g->values.v[g->inits.v[k].value].live) total += (uint64_t)om_tensor_numel(t) * om__dtype_size(t->dtype);
  }
  if (total <= (uint64_t)INT32_MAX) return true;
  return om__trace_fail(OM_ERR_TRACE_UNSUPPORTED_OPERATION,
                        "trace_finish: the constants the outputs need total %llu bytes, over the 2 GiB an ONNX file "
                        "(one protobuf message) can hold", (unsigned long long)total);
}

/* ---- identical contents stored once ---- */

/* A 64-bit hash of a constant's logical bytes, fed run by run in element order (so a view and
 * a dense tensor with the same elements hash alike): four multiply-xor lanes over 32-byte
 * blocks, so hundreds of MB of weights hash at memory speed. It only groups candidates; a byte
 * compare decides. */
typedef struct content_hash {
  uint64_t lane[4];
  uint8_t block[32];
  size_t n;  /* bytes waiting in block */
  size_t es; /* the element size */
} content_hash;

static void hash_block(content_hash *h, const uint8_t *b) {
  for (int k = 0; k < 4; k++) {
    uint64_t w;
    memcpy(&w, b + 8 * k, 8);
    h->lane[k] = (h->lane[k] ^ w) * 0x100000001b3u;
    h->lane[k] ^= h->lane[k] >> 29;
  }
}

static void hash_bytes(content_hash *h, const uint8_t *p, size_t n) {
  while (n) {
    if (!h->n && n >= 32) {
      hash_block(h, p);
      p += 32, n -= 32;
      continue;
    }
    size_t take = 32 - h->n < n ? 32 - h->n : n;
    memcpy(h->block + h->n, p, take);
    h->n += take, p += take, n -= take;
    if (h->n == 32) hash_block(h, h->block), h->n = 0;
  }
}

/* om__iterate's inner loop: one run of n elements s[0] bytes apart. */
static void hash_run(char **p, const int64_t *s, int64_t n, const void *ctx) {
  content_hash *h = (content_hash *)ctx; /* content_of's, writable */
  if (s[0] == (int64_t)h->es) hash_bytes(h, (const uint8_t *)p[0], (size_t)n * h->es);
  else if (s[0] == 0) { /* a broadcast element: the same bytes, fed from a block of copies (an
                         * expand of a scalar to 600M elements took seconds element by element) */
    uint8_t rep[256];
    int64_t per = (int64_t)(sizeof rep / h->es);
    for (int64_t i = 0; i < per && i < n; i++) memcpy(rep + i * (int64_t)h->es, p[0], h->es);
    for (int64_t i = 0; i < n; i += per) hash_bytes(h, rep, (size_t)(n - i < per ? n - i : per) * h->es);
  } else
    for (int64_t i = 0; i < n; i++) hash_bytes(h, (const uint8_t *)p[0] + i * s[0], h->es);
}

/* The hash of t's dtype, shape and elements. */
static uint64_t content_of(const om_tensor *t) {
  content_hash h = {.lane = {0xcbf29ce484222325u, 1, 2, 3}, .es = om__dtype_size(t->dtype)};
  int64_t st[1][OM_MAX_DIMS];
  char *base = om__data(t);
  hash_bytes(&h, (const uint8_t *)&t->dtype, sizeof t->dtype);
  hash_bytes(&h, (const uint8_t *)&t->ndim, sizeof t->ndim);
  hash_bytes(&h, (const uint8_t *)t->shape, sizeof(int64_t) * (size_t)t->ndim);
  om__broadcast_strides(t, t->ndim, st[0]);
  om__iterate(1, &base, st, t->shape, t->ndim, hash_run, &h);
  uint64_t out = h.n;
  for (size_t i = 0; i < h.n; i++) out = (out ^ h.block[i]) * 0x100000001b3u;
  for (int k = 0; k < 4; k++) out = (out ^ h.lane[k]) * 0x9e3779b97f4a7c15u;
  return out;
}

typedef struct compare_state {
  size_t es;
  bool differ;
} compare_state;

static void compare_run(char **p, const int64_t *s, int64_t n, const void *ctx) {
  compare_state *c = (compare_state *)ctx; /* same_contents', writable */
  if (c->differ) return;
  if (s[0] == (int64_t)c->es && s[1] == (int64_t)c->es) c->differ = memcmp(p[0], p[1], (size_t)n * c->es) != 0;
  else
    for (int64_t i = 0; i < n && !c->differ; i++) c->differ = memcmp(p[0] + i * s[0], p[1] + i * s[1], c->es) != 0;
}

/* True when a and b have the same dtype, shape and elements, byte for byte. */
static bool same_contents(const om_tensor *a, const om_tensor *b) {
  if (a->dtype != b->dtype || a->ndim != b->ndim || memcmp(a->shape, b->shape, sizeof(int64_t) * (size_t)a->ndim))
    return false;
  compare_state c = {.es = om__dtype_size(a->dtype)};
  int64_t st[2][OM_MAX_DIMS];
  char *base[2] = {om__data(a), om__data(b)};
  om__broadcast_strides(a, a->ndim, st[0]);
  om__broadcast_strides(b, b->ndim, st[1]);
  om__iterate(2, base, st, a->shape, a->ndim, compare_run, &c);
  return !c.differ;
}

/* The names om_trace_parameter gave the very view t (tied weights have several, the first is the
 * initializer's name), into names when not NULL; their count. */
static int names_of(const om_trace *tr, const om_tensor *t, const char **names) {
  int n = 0;
  for (int k = 0; k < tr->params.n; k++)
    if (om__same_view(tr->params.v[k].view, t)) {
      if (names) names[n] = tr->params.v[k].name;
      n++;
    }
  return n;
}

/* Records on each live initializer the state-dict names it stands for besides its own (its
 * tied names, and the names of the initializers dedup_contents merged into it: keep[k] is the
 * initializer k became, -1 for one not read), so that no name the user gave is lost (the .om
 * and the .onnx carry them: docs/tracing.md). */
static bool record_aliases(const om_trace *tr, om_graph *g, const int *keep) {
  int *count = om__alloc(sizeof(int) * (size_t)(g->inits.n ? g->inits.n : 1), "trace_finish"); /* names it holds */
  bool ok = count != NULL;
  for (int k = 0; ok && k < g->inits.n; k++) count[k] = 0;
  for (int k = 0; ok && k < g->inits.n; k++)
    if (keep[k] >= 0) count[keep[k]] += names_of(tr, g->inits.v[k].tensor, NULL);
  for (int k = 0; ok && k < g->inits.n; k++) { /* its own names, less the first (its name) */
    om_ginit *init = &g->inits.v[k];
    int own = keep[k] == k ? names_of(tr, init->tensor, NULL) : 0;
    if (keep[k] != k || count[k] - (own > 0) < 1) continue;
    const char **names = om__arena_alloc(&g->arena, sizeof(char *) * (size_t)count[k]);
    if (!(ok = names != NULL)) break;
    names_of(tr, init->tensor, names);
    if (own) memmove(names, names + 1, sizeof(char *) * (size_t)--own);
    init->aliases = names, init->n_aliases = own;
  }
  for (int k = 0; ok && k < g->inits.n; k++) { /* then the names of those merged into it */
    om_ginit *to = keep[k] >= 0 && keep[k] != k ? &g->inits.v[keep[k]] : NULL;
    if (to && to->aliases) to->n_aliases += names_of(tr, g->inits.v[k].tensor, to->aliases + to->n_aliases);
  }
  free(count);
  return ok;
}

/* Stores identical contents once (spec 1): a live initializer whose dtype, shape and bytes equal
 * an earlier one's (in the order the run first read them) is dropped, and the nodes read the
 * earlier one, which keeps its name (twelve layers' equal mask buffers are one initializer, named
 * for the first layer) and records the dropped one's as aliases. Views were merged when
 * captured; this finds equal contents in different storages. */
static bool dedup_contents(const om_trace *tr, om_graph *g) {
  size_t cap = 64;
  while (cap < 2 * (size_t)g->inits.n) cap *= 2;
  int *slot = om__alloc(cap * sizeof(int), "trace_finish"); /* initializer index + 1, 0 empty */
  uint64_t *hashes = om__alloc(sizeof(uint64_t) * (size_t)(g->inits.n ? g->inits.n : 1), "trace_finish");
  int *to = om__alloc(sizeof(int) * (size_t)(g->values.n ? g->values.n : 1), "trace_finish"); /* value -> the one read */
  int *keep = om__alloc(sizeof(int) * (size_t)(g->inits.n ? g->inits.n : 1), "trace_finish"); /* initializer -> kept one */
  bool ok = slot && hashes && to && keep, merged = false;
  if (ok) memset(slot, 0, cap * sizeof(int));
  for (int k = 0; ok && k < g->values.n; k++) to[k] = k;
  for (int k = 0; ok && k < g->inits.n; k++) {
    const om_ginit *init = &g->inits.v[k];
    keep[k] = -1;
    if (!g->values.v[init->value].live) continue;
    uint64_t h = hashes[k] = content_of(init->tensor);
    size_t i = h & (cap - 1);
    for (; slot[i]; i = (i + 1) & (cap - 1)) {
      const om_ginit *first = &g->inits.v[slot[i] - 1];
      if (hashes[slot[i] - 1] == h && same_contents(first->tensor, init->tensor)) break;
    }
    if (!slot[i]) {
      slot[i] = k + 1;
      keep[k] = k;
      continue;
    }
    keep[k] = slot[i] - 1;
    to[init->value] = g->inits.v[slot[i] - 1].value;
    g->values.v[init->value].live = false; /* compact drops it */
    merged = true;
  }
  for (int n = 0; ok && merged && n < g->nodes.n; n++) {
    om_gnode *node = &g->nodes.v[n];
    for (int i = 0; i < node->n_in; i++)
      if (node->in[i] >= 0) node->in[i] = to[node->in[i]];
  }
  ok = ok && record_aliases(tr, g, keep);
  free(slot);
  free(hashes);
  free(to);
  free(keep);
  return ok;
}

/* ---- names ---- */

/* The set of names in the model, so generated names never collide with the user's. */
typedef struct name_set {
  const char **slot;
  size_t mask;
} name_set;

static size_t hash(const char *s) {
  uint64_t h = 0xcbf29ce484222325u;
  while (*s) h = (h ^ (unsigned char)*s++) * 0x100000001b3u;
  return (size_t)h;
}

static bool set_has(const name_set *s, const char *name) {
  for (size_t i = hash(name) & s->mask; s->slot[i]; i = (i + 1) & s->mask)
    if (!strcmp(s->slot[i], name)) return true;
  return false;
}

static void set_add(name_set *s, const char *name) {
  size_t i = hash(name) & s->mask;
  while (s->slot[i]) i = (i + 1) & s->mask;
  s->slot[i] = name;
}

/* base, or base_1, base_2, ... when taken; added to the set. */
static const char *unique(om_arena *a, name_set *s, const char *base) {
  const char *name = base;
  for (int k = 1; name && set_has(s, name); k++) name = om__arena_printf(a, "%s_%d", base, k);
  if (name) set_add(s, name);
  return name;
}

/* ---- building the model ---- */

/* Appends an Identity node from value src to a new value (for an output that is an input or
 * is repeated: every output needs its own name). */
static int identity(om_graph *g, int src) {
  om_gvalue s = g->values.v[src];
  int v = om__graph_value(g, s.dtype, s.ndim, s.shape);
  int *io = v >= 0 ? om__arena_alloc(&g->arena, 2 * sizeof(int)) : NULL;
  om_gnode *node = io ? OM_VEC_PUSH_SLOT(g->nodes) : NULL;
  if (!node) return -1;
  memcpy(g->values.v[v].dim_param, s.dim_param, sizeof s.dim_param);
  memcpy(g->values.v[v].ext, s.ext, sizeof s.ext);
  io[0] = src;
  io[1] = v;
  *node = (om_gnode){.op_type = "Identity", .op = OM_OP_clone, .n_in = 1, .n_out = 1, .in = io, .out = io + 1};
  g->values.v[v].producer = g->nodes.n - 1;
  return v;
}

/* Marks what the outputs need: walking the nodes backwards, a node is live when one of its
 * outputs is, and then its inputs are. Scratch work and unused branches stay dead. */
static void mark_live(om_graph *g) {
  for (int k = 0; k < g->values.n; k++) g->values.v[k].live = false;
  for (int k = 0; k < g->outputs.n; k++) g->values.v[g->outputs.v[k]].live = true;
  for (int k = 0; k < g->inputs.n; k++) g->values.v[g->inputs.v[k]].live = true; /* the interface stays */
  for (int n = g->nodes.n - 1; n >= 0; n--) {
    const om_gnode *node = &g->nodes.v[n];
    bool live = false;
    for (int j = 0; j < node->n_out; j++) live |= g->values.v[node->out[j]].live;
    for (int i = 0; live && i < node->n_in; i++)
      if (node->in[i] >= 0) g->values.v[node->in[i]].live = true;
    for (int j = 0; live && j < node->n_out; j++) g->values.v[node->out[j]].live = true; /* all outputs of a kept node */
  }
}

/* Copies the live part of src into dst with values renumbered; dst takes src's arena. */
static bool compact(om_graph *src, om_graph *dst) {
  int *map = om__alloc(sizeof(int) * (size_t)(src->values.n ? src->values.n : 1), "trace_finish");
  if (!map) return false;
  bool ok = true;
  for (int k = 0; k < src->values.n && ok; k++) {
    map[k] = -1;
    if (!src->values.v[k].live) continue;
    om_gvalue *v = OM_VEC_PUSH_SLOT(dst->values);
    if (!(ok = v != NULL)) break;
    *v = src->values.v[k];
    v->producer = v->init = -1;
    map[k] = dst->values.n - 1;
  }
  for (int n = 0; n < src->nodes.n && ok; n++) {
    om_gnode node = src->nodes.v[n];
    if (!src->values.v[node.out[0]].live) continue;
    for (int i = 0; i < node.n_in; i++)
      if (node.in[i] >= 0) node.in[i] = map[node.in[i]];
    for (int j = 0; j < node.n_out; j++) node.out[j] = map[node.out[j]];
    om_gnode *slot = OM_VEC_PUSH_SLOT(dst->nodes);
    if (!(ok = slot != NULL)) break;
    *slot = node;
    for (int j = 0; j < node.n_out; j++) dst->values.v[node.out[j]].producer = dst->nodes.n - 1;
  }
  for (int k = 0; k < src->inits.n; k++) {
    om_ginit *init = &src->inits.v[k];
    om_ginit *slot = ok && src->values.v[init->value].live ? OM_VEC_PUSH_SLOT(dst->inits) : NULL;
    if (!slot) continue; /* dead (or out of memory): released with src below */
    *slot = *init;
    slot->value = map[init->value];
    dst->values.v[slot->value].init = dst->inits.n - 1;
    init->tensor = NULL; /* moved */
  }
  for (int k = 0; k < src->inputs.n && ok; k++) {
    int *slot = OM_VEC_PUSH_SLOT(dst->inputs);
    if ((ok = slot != NULL)) *slot = map[src->inputs.v[k]];
  }
  for (int k = 0; k < src->outputs.n && ok; k++) {
    int *slot = OM_VEC_PUSH_SLOT(dst->outputs);
    if ((ok = slot != NULL)) *slot = map[src->outputs.v[k]];
  }
  free(map);
  dst->arena = src->arena; /* names and node operands live there */
  src->arena.head = NULL;
  return ok;
}

/* Names every value and node: the user's names first (inputs, outputs, parameters, their
 * views), then generated ones in graph order, so equal graphs get equal names. */
static bool name_all(om_trace *tr, om_graph *g) {
  om_arena *a = &g->arena;
  size_t cap = 64;
  while (cap < 2 * (size_t)(g->values.n + g->nodes.n + tr->params.n)) cap *= 2;
  name_set set = {.slot = om__alloc(cap * sizeof(char *), "trace_finish"), .mask = cap - 1};
  if (!set.slot) return false;
  memset(set.slot, 0, cap * sizeof(char *));
  bool ok = true;
  for (int k = 0; k < g->values.n; k++)
    if (g->values.v[k].name) set_add(&set, g->values.v[k].name); /* inputs and outputs */
  for (int k = 0; k < tr->params.n; k++) set_add(&set, tr->params.v[k].name); /* before any view name is made */
  int *views = om__alloc(sizeof(int) * (size_t)(tr->params.n ? tr->params.n : 1), "trace_finish");
  if (!views) ok = false;
  for (int k = 0; views && k < tr->params.n; k++) views[k] = 0;
  for (int k = 0; ok && k < g->inits.n; k++) {
    const om_param *shared, *p = param_of(tr, g->inits.v[k].tensor, &shared);
    om_gvalue *v = &g->values.v[g->inits.v[k].value];
    if (p) v->name = p->name; /* reserved above; names are checked unique when given */
    else if (shared) {
      const char *base = om__arena_printf(a, "%s.view_%d", shared->name, views[shared - tr->params.v]++);
      ok = base && (v->name = unique(a, &set, base)) != NULL;
    }
  }
  free(views);
  for (int k = 0, c = 0; ok && k < g->inits.n; k++) {
    om_gvalue *v = &g->values.v[g->inits.v[k].value];
    if (v->name) continue;
    const char *base = om__arena_printf(a, "const_%d", c++);
    ok = base && (v->name = unique(a, &set, base)) != NULL;
  }
  for (int n = 0; ok && n < g->nodes.n; n++) {
    om_gnode *node = &g->nodes.v[n];
    const char *base = om__arena_printf(a, "%s_%d", node->op_type, n);
    ok = base && (node->name = unique(a, &set, base)) != NULL;
    for (int j = 0; ok && j < node->n_out; j++) {
      om_gvalue *v = &g->values.v[node->out[j]];
      if (v->name) continue;
      const char *vb = j ? om__arena_printf(a, "%s:%d", node->name, j) : node->name;
      ok = vb && (v->name = j ? unique(a, &set, vb) : vb) != NULL;
    }
  }
  free(set.slot);
  return ok;
}

/* Initializers must hold the values of the traced run for as long as the model lives: a view
 * that is not one dense block gets its own dense copy now, and one that is reads its storage
 * in place, registered for a copy on the first in-place write (so a weight trained further
 * after the trace does not change the model, and exporting needs no second copy of it). */
static bool freeze_constants(om_graph *g) {
  for (int k = 0; k < g->inits.n; k++) {
    om_ginit *init = &g->inits.v[k];
    if (!om_tensor_is_contiguous(init->tensor)) {
      om_tensor *dense = om_contiguous(init->tensor);
      if (!dense) return false;
      om_tensor_release(init->tensor);
      init->tensor = dense;
      continue;
    }
    if (init->generated) continue;
    if (!(init->snap = om__snapshot_take(init->tensor, "trace_finish"))) return false;
  }
  return true;
}

/* The symbols and the ranges the graph holds for, into the model (its arena). */
static bool keep_symbols(const om_trace *tr, om_traced_model *m) {
  m->n_symbols = tr->symbols.n;
  m->symbols = om__arena_alloc(&m->g.arena, sizeof *m->symbols * (size_t)(tr->symbols.n ? tr->symbols.n : 1));
  if (!m->symbols) return false;
  for (int k = 0; k < tr->symbols.n; k++) {
    const om_symbol *s = &tr->symbols.v[k]; /* strings in the arena m now owns */
    m->symbols[k] = (om_traced_sym){.name = s->name, .multiple = s->multiple, .min = s->min, .max = s->max,
                                       .min_why = s->min_why, .max_why = s->max_why, .checked_min = s->checked_min,
                                       .checked_max = s->checked_max};
  }
  return true;
}

om_traced_model *om_trace_finish(om_tensor *const *outputs, const char *const *names, int n) {
  om_trace *tr = om__need_trace("trace_finish");
  if (tr && (tr->phase == OM_PHASE_OTHER || tr->phase == OM_PHASE_RECORD))
    return om__trace_fail(OM_ERR_TRACE_INVALID_USAGE, "trace_finish: called while om_trace_run runs the model; "
                          "om_trace_run hands back the outputs to finish with"), NULL;
  if (tr && tr->branched) return om__branch_finish(tr, outputs, names, n);
  if (!tr || (n > 0 && outputs && !om__trace_sync_all(outputs, n)) || !check_outputs(tr, outputs, names, n) ||
      !check_constants(tr))
    return NULL;
  om_graph *g = &tr->g;
  bool ok = true;
  for (int k = 0; ok && k < n; k++) {
    int v = outputs[k]->trace_value;
    bool taken = g->values.v[v].producer < 0; /* an input: the output needs a node of its own */
    for (int e = 0; e < k; e++) taken |= g->outputs.v[e] == v;
    if (taken && (v = identity(g, v)) < 0) ok = false;
    int *slot = ok ? OM_VEC_PUSH_SLOT(g->outputs) : NULL;
    ok = slot && (g->values.v[v].name = om__arena_strdup(&g->arena, names[k]));
    if (slot) *slot = v;
  }
  if (ok) mark_live(g);
  /* matmuls of flattened rows on their own rank (their size computations unread), equal
   * constants (nodes reading them become equal), then equal nodes (a Where of twelve layers'
   * masks becomes one, which folds once); what was rewritten or merged away is unread now */
  ok = ok && om__unflatten_matmuls(g) && dedup_contents(tr, g) && om__merge_nodes(g) && om__fold_where(g);
  if (ok) mark_live(g);
  if (ok && !check_size(g)) return NULL;
  om__state()->trace = NULL; /* recording ends here; copies made below are not recorded */
  om_traced_model *m = ok ? om__alloc(sizeof *m, "trace_finish") : NULL;
  if (m) memset(m, 0, sizeof *m);
  ok = m && compact(g, &m->g) && name_all(tr, &m->g) && freeze_constants(&m->g) && keep_symbols(tr, m);
  om__trace_free(tr);
  if (!ok) {
    om_traced_release(m);
    return NULL;
  }
  return m;
}

/* ---- the model's accessors ---- */

void om_traced_release(om_traced_model *m) {
  if (!m) return;
  om__graph_free(&m->g);
  free(m);
}

/* Value id of item i of part, or -1 (InvalidArgument). */
static int part_value(const om_traced_model *m, om_traced_part part, int i, const char *who) {
  int n = om_traced_count(m, part);
  if (n < 0 || i < 0 || i >= n || part == OM_TRACED_NODE)
    return om__fail(OM_ERR_INVALID_ARGUMENT, "%s: no %s %d in this model", who,
                    part == OM_TRACED_INPUT ? "input" : part == OM_TRACED_OUTPUT ? "output" : "initializer", i), -1;
  const om_graph *g = &m->g;
  return part == OM_TRACED_INPUT ? g->inputs.v[i] : part == OM_TRACED_OUTPUT ? g->outputs.v[i] : g->inits.v[i].value;
}

int om_traced_count(const om_traced_model *m, om_traced_part part) {
  if (!m) return om__fail(OM_ERR_INVALID_ARGUMENT, "traced_count: the model is NULL"), -1;
  switch (part) {
    case OM_TRACED_INPUT: return m->g.inputs.n;
    case OM_TRACED_OUTPUT: return m->g.outputs.n;
    case OM_TRACED_INITIALIZER: return m->g.inits.n;
    case OM_TRACED_NODE: return m->g.nodes.n;
  }
  return om__fail(OM_ERR_INVALID_ARGUMENT, "traced_count: unknown part %d", (int)part), -1;
}

const char *om_traced_name(const om_traced_model *m, om_traced_part part, int i) {
  if (part == OM_TRACED_NODE) {
    if (!m || i < 0 || i >= m->g.nodes.n) return om__fail(OM_ERR_INVALID_ARGUMENT, "traced_name: no node %d", i), NULL;
    return m->g.nodes.v[i].op_type;
  }
  int v = part_value(m, part, i, "traced_name");
  return v < 0 ? NULL : m->g.values.v[v].name;
}

bool om_traced_info(const om_traced_model *m, om_traced_part part, int i, om_dtype *dtype, int *ndim,
                    const int64_t **shape, const char *const **dim_params) {
  int v = part_value(m, part, i, "traced_info");
  if (v < 0) return false;
  const om_gvalue *val = &m->g.values.v[v];
  if (dtype) *dtype = val->dtype;
  if (ndim) *ndim = val->ndim;
  if (shape) *shape = val->shape;
  if (dim_params) *dim_params = val->dim_param;
  return true;
}

int om_traced_symbol_count(const om_traced_model *m) {
  return m ? m->n_symbols : (om__fail(OM_ERR_INVALID_ARGUMENT, "traced_symbol_count: the model is NULL"), -1);
}

bool om_traced_symbol(const om_traced_model *m, int i, const char **name, int64_t *multiple, int64_t *min, int64_t *max,
                      const char **why) {
  if (!m || i < 0 || i >= m->n_symbols) return om__fail(OM_ERR_INVALID_ARGUMENT, "traced_symbol: no symbol %d", i);
  const om_traced_sym *s = &m->symbols[i];
  if (name) *name = s->name;
  if (multiple) *multiple = s->multiple;
  if (min) *min = s->min;
  if (max) *max = s->max;
  if (why) *why = s->max_why ? s->max_why : s->min_why;
  return true;
}

bool om_traced_symbol_checked(const om_traced_model *m, int i, int64_t *min, int64_t *max) {
  if (!m || i < 0 || i >= m->n_symbols) return om__fail(OM_ERR_INVALID_ARGUMENT, "traced_symbol_checked: no symbol %d", i);
  if (min) *min = m->symbols[i].checked_min;
  if (max) *max = m->symbols[i].checked_max;
  return true;
}

int om_traced_node_values(const om_traced_model *m, int i, bool outputs, const char **names, int max) {
  if (!m || i < 0 || i >= m->g.nodes.n) return om__fail(OM_ERR_INVALID_ARGUMENT, "traced_node_values: no node %d", i), -1;
  const om_gnode *node = &m->g.nodes.v[i];
  int n = outputs ? node->n_out : node->n_in;
  const int *ids = outputs ? node->out : node->in;
  for (int k = 0; names && k < n && k < max; k++) names[k] = ids[k] < 0 ? "" : m->g.values.v[ids[k]].name;
  return n;
}

int om_traced_aliases(const om_traced_model *m, int i, const char **names, int max) {
  if (!m || i < 0 || i >= m->g.inits.n) return om__fail(OM_ERR_INVALID_ARGUMENT, "traced_aliases: no initializer %d", i), -1;
  const om_ginit *init = &m->g.inits.v[i];
  for (int k = 0; names && k < init->n_aliases && k < max; k++) names[k] = init->aliases[k];
  return init->n_aliases;
}
