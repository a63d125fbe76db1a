/* The library format v3 (docs/format.md): a graph as the tracer recorded it, with its weights laid
 * out for zero-copy use, in bytes that depend only on the graph (natively and in WASM alike).
 *
 *   header (64 bytes): "ONEMODEL", u32 version 3, u32 header size 64, u64 graph bytes, u64 data
 *     offset, u64 data bytes, u64 FNV-1a of the graph section, 16 zero bytes
 *   graph section: values, inputs, outputs, initializers (with their aliases since v2), nodes,
 *     symbols (with their branches since v3; little-endian); a
 *     node's graph attribute (an If's branch) is its captured values (its value, the enclosing
 *     graph's, each), then values to nodes as above
 *   data section: every tensor's bytes at an offset that is a multiple of 64, zeros between
 *
 * The writer streams the weights from their storage; the reader checks every count against the
 * bytes left (so no count can make it allocate more than the input's size allows), every id,
 * offset, type and size, that nodes only read values defined before them, and that every
 * state-dict name (an initializer's name or alias) is held once. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/graph.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the format is little-endian and written straight from memory"
#endif

#define MAGIC "ONEMODEL"
#define VERSION 3 /* what the writer writes; the reader takes 1 (no aliases) and 2 (no branches) too */
#define HEADER 64
#define ALIGN 64

static uint64_t fnv1a(const unsigned char *p, size_t n) {
  uint64_t h = 14695981039346656037ull;
  for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

static uint64_t aligned(uint64_t n) { return (n + ALIGN - 1) / ALIGN * ALIGN; }

bool om__format_is(const void *bytes, size_t n) { return n >= 8 && !memcmp(bytes, MAGIC, 8); }

/* ---- writing ---- */

typedef struct out {
  unsigned char *p;
  size_t n, cap;
  bool failed;
} out;

static void put(out *o, const void *v, size_t n) {
  if (o->failed || !n) return; /* v may be NULL then (an empty string) */
  if (o->n + n > o->cap) {
    size_t cap = o->cap ? o->cap * 2 : 4096;
    while (cap < o->n + n) cap *= 2;
    unsigned char *p = realloc(o->p, cap);
    if (!p) {
      o->failed = true;
      return;
    }
    o->p = p, o->cap = cap;
  }
  memcpy(o->p + o->n, v, n);
  o->n += n;
}
static void put_u8(out *o, unsigned v) { put(o, &(uint8_t){(uint8_t)v}, 1); }
static void put_u32(out *o, uint32_t v) { put(o, &v, 4); }
static void put_i64(out *o, int64_t v) { put(o, &v, 8); }
static void put_str(out *o, const char *s) {
  size_t n = s ? strlen(s) : 0;
  put_u32(o, (uint32_t)n);
  put(o, s, n);
}

/* The tensors of the data section in order: initializers, then tensor attributes in node order. */
typedef struct tensors {
  const om_tensor **t;
  int n;
} tensors;

static size_t tensor_bytes(const om_tensor *t) { return (size_t)om_tensor_numel(t) * om__dtype_size(t->dtype); }

/* Puts tensor t's place (offset, bytes) in the data section, whose size so far is *data. */
static void put_place(out *o, tensors *ts, const om_tensor *t, uint64_t *data) {
  put_i64(o, (int64_t)*data);
  put_i64(o, (int64_t)tensor_bytes(t));
  *data = aligned(*data + tensor_bytes(t));
  ts->t[ts->n++] = t;
}

/* The tensors g's data section holds: its initializers and tensor attributes, its subgraphs'. */
static int count_tensors(const om_graph *g) {
  int n = g->inits.n;
  for (int k = 0; k < g->nodes.n; k++)
    for (int a = 0; a < g->nodes.v[k].n_attrs; a++) {
      const om_gattr *at = &g->nodes.v[k].attrs[a];
      n += at->type == OM_GATTR_TENSOR ? 1 : at->type == OM_GATTR_GRAPH ? count_tensors(at->g) : 0;
    }
  return n;
}

/* Values, inputs, outputs, initializers and nodes of g into o (a subgraph's captured values
 * after its values), the tensors in data order into ts. */
static void graph_body(out *o, const om_graph *g, bool sub, tensors *ts, uint64_t *data) {
  put_u32(o, (uint32_t)g->values.n);
  for (int v = 0; v < g->values.n; v++) {
    const om_gvalue *val = &g->values.v[v];
    put_str(o, val->name);
    put_u8(o, val->dtype);
    put_u8(o, (unsigned)val->ndim);
    for (int d = 0; d < val->ndim; d++) {
      put_i64(o, val->shape[d]);
      put_str(o, val->dim_param[d]);
    }
  }
  if (sub) {
    put_u32(o, (uint32_t)g->captured.n);
    for (int c = 0; c < g->captured.n; c++) put_u32(o, (uint32_t)g->captured.v[c]), put_u32(o, (uint32_t)g->values.v[g->captured.v[c]].outer);
  }
  put_u32(o, (uint32_t)g->inputs.n);
  for (int k = 0; k < g->inputs.n; k++) put_u32(o, (uint32_t)g->inputs.v[k]);
  put_u32(o, (uint32_t)g->outputs.n);
  for (int k = 0; k < g->outputs.n; k++) put_u32(o, (uint32_t)g->outputs.v[k]);
  put_u32(o, (uint32_t)g->inits.n);
  for (int k = 0; k < g->inits.n; k++) {
    put_u32(o, (uint32_t)g->inits.v[k].value);
    put_place(o, ts, g->inits.v[k].tensor, data);
    put_u32(o, (uint32_t)g->inits.v[k].n_aliases);
    for (int q = 0; q < g->inits.v[k].n_aliases; q++) put_str(o, g->inits.v[k].aliases[q]);
  }
  put_u32(o, (uint32_t)g->nodes.n);
  for (int k = 0; k < g->nodes.n; k++) {
    const om_gnode *n = &g->nodes.v[k];
    put_str(o, n->op_type);
    put_str(o, n->name);
    put_u32(o, (uint32_t)n->n_in);
    for (int i = 0; i < n->n_in; i++) put_u32(o, (uint32_t)n->in[i]); /* -1 (omitted) as 0xffffffff */
    put_u32(o, (uint32_t)n->n_out);
    for (int j = 0; j < n->n_out; j++) put_u32(o, (uint32_t)n->out[j]);
    put_u32(o, (uint32_t)n->n_attrs);
    for (int a = 0; a < n->n_attrs; a++) {
      const om_gattr *at = &n->attrs[a];
      put_str(o, at->name);
      put_u8(o, at->type == OM_GATTR_STRINGS ? OM_GATTR_OTHER : at->type); /* an imported graph's strings: kept by name */
      switch (at->type) {
        case OM_GATTR_INT: put_i64(o, at->i); break;
        case OM_GATTR_FLOAT: {
          float f = (float)at->f; /* what ONNX holds too */
          put(o, &f, 4);
          break;
        }
        case OM_GATTR_INTS: put_u32(o, (uint32_t)at->n), put(o, at->ints, sizeof(int64_t) * (size_t)at->n); break;
        case OM_GATTR_FLOATS: put_u32(o, (uint32_t)at->n), put(o, at->floats, sizeof(float) * (size_t)at->n); break;
        case OM_GATTR_STRING: put_str(o, at->s); break;
        case OM_GATTR_TENSOR:
          put_u8(o, at->t->dtype);
          put_u8(o, (unsigned)at->t->ndim);
          for (int d = 0; d < at->t->ndim; d++) put_i64(o, at->t->shape[d]);
          put_place(o, ts, at->t, data);
          break;
        case OM_GATTR_OTHER:
        case OM_GATTR_STRINGS: break; /* kept by name */
        case OM_GATTR_GRAPH: graph_body(o, at->g, true, ts, data); break;
      }
    }
  }
}

/* The graph section of g into o, and the tensors in data order into ts. */
static void graph_section(out *o, const om_graph *g, const om_traced_sym *syms, int n_syms, tensors *ts, uint64_t *data) {
  graph_body(o, g, false, ts, data);
  put_u32(o, (uint32_t)n_syms);
  for (int k = 0; k < n_syms; k++) {
    put_str(o, syms[k].name);
    put_i64(o, syms[k].multiple);
    put_i64(o, syms[k].min);
    put_i64(o, syms[k].max);
    put_str(o, syms[k].min_why);
    put_str(o, syms[k].max_why);
    put_u32(o, (uint32_t)syms[k].n_branches);
    for (int q = 0; q < 2 * syms[k].n_branches; q++) put_i64(o, syms[k].branches[q]);
  }
}

/* Header and graph section of g into o; the data section's tensors into ts (allocated). */
static bool head(out *o, const om_graph *g, const om_traced_sym *syms, int n_syms, tensors *ts, uint64_t *data_bytes) {
  ts->t = om__alloc(sizeof *ts->t * (size_t)(count_tensors(g) + 1), "traced_save");
  if (!ts->t) return false;
  out graph = {0};
  *data_bytes = 0;
  graph_section(&graph, g, syms, n_syms, ts, data_bytes);
  unsigned char h[HEADER] = {0};
  uint64_t fields[5] = {graph.n, aligned(HEADER + graph.n), *data_bytes, graph.failed ? 0 : fnv1a(graph.p, graph.n)};
  memcpy(h, MAGIC, 8);
  memcpy(h + 8, &(uint32_t){VERSION}, 4);
  memcpy(h + 12, &(uint32_t){HEADER}, 4);
  memcpy(h + 16, fields, 8 * 4);
  put(o, h, HEADER);
  put(o, graph.p, graph.n);
  free(graph.p);
  if (o->failed || graph.failed) return om__fail(OM_ERR_OUT_OF_MEMORY, "traced_save: out of memory for the graph section");
  return true;
}

static const unsigned char zeros[ALIGN];

bool om__format_write(const om_graph *g, const om_traced_sym *syms, int n_syms, om_write_fn write, void *ctx) {
  out o = {0};
  tensors ts = {0};
  uint64_t data = 0;
  bool ok = head(&o, g, syms, n_syms, &ts, &data);
  size_t pad = ok ? (size_t)(aligned(o.n) - o.n) : 0;
  ok = ok && write(ctx, o.p, o.n) && (!pad || write(ctx, zeros, pad));
  for (int k = 0; ok && k < ts.n; k++) { /* each tensor from its storage, then zeros to the next multiple of 64 */
    size_t n = tensor_bytes(ts.t[k]);
    om_tensor *dense = n ? om__dense((om_tensor *)ts.t[k], "traced_save") : NULL;
    ok = (!n || dense) && (!n || write(ctx, om__data(dense), n)) && (aligned(n) == n || write(ctx, zeros, (size_t)(aligned(n) - n)));
    om_tensor_release(dense);
    if (!ok && om_last_error() == OM_ERR_OK) om__fail(OM_ERR_INVALID_ARGUMENT, "traced_save: the sink refused the bytes (it returned false)");
  }
  if (!ok && om_last_error() == OM_ERR_OK) om__fail(OM_ERR_INVALID_ARGUMENT, "traced_save: the sink refused the bytes (it returned false)");
  free(o.p);
  free(ts.t);
  return ok;
}

size_t om__format_size(const om_graph *g, const om_traced_sym *syms, int n_syms) {
  out o = {0};
  tensors ts = {0};
  uint64_t data = 0;
  bool ok = head(&o, g, syms, n_syms, &ts, &data);
  size_t n = ok ? (size_t)(aligned(o.n) + data) : 0;
  free(o.p);
  free(ts.t);
  return n;
}

/* ---- reading ---- */

typedef struct in {
  const unsigned char *p;
  size_t n, at;
  uint32_t version;
  bool bad;
  const char *what; /* the first thing that did not fit, for the message */
} in;

static bool take(in *r, void *v, size_t n, const char *what) {
  if (r->bad || n > r->n - r->at) {
    if (!r->bad) r->what = what;
    r->bad = true;
    return false;
  }
  memcpy(v, r->p + r->at, n);
  r->at += n;
  return true;
}
static unsigned get_u8(in *r, const char *what) {
  uint8_t v = 0;
  take(r, &v, 1, what);
  return v;
}
static uint32_t get_u32(in *r, const char *what) {
  uint32_t v = 0;
  take(r, &v, 4, what);
  return v;
}
static int64_t get_i64(in *r, const char *what) {
  int64_t v = 0;
  take(r, &v, 8, what);
  return v;
}
/* A count of items of at least `each` bytes: more than the bytes left is malformed. */
static int get_count(in *r, size_t each, const char *what) {
  uint32_t n = get_u32(r, what);
  if (!r->bad && ((uint64_t)n * each > r->n - r->at || n > INT32_MAX / 2)) {
    r->what = what;
    r->bad = true;
  }
  return r->bad ? 0 : (int)n;
}
/* A string into the arena (NULL for an empty one when empty_null). */
static const char *get_str(in *r, om_arena *a, bool empty_null, const char *what) {
  uint32_t n = get_u32(r, what);
  if (r->bad || n > r->n - r->at) return r->bad ? NULL : (r->what = what, r->bad = true, NULL);
  if (!n && empty_null) return NULL;
  char *s = om__arena_alloc(a, (size_t)n + 1);
  if (!s) return r->bad = true, r->what = "memory", NULL;
  memcpy(s, r->p + r->at, n);
  r->at += n;
  if (memchr(s, 0, n)) return r->what = what, r->bad = true, NULL; /* names are C strings */
  return s;
}

#define BAD(...) om__fail(OM_ERR_FORMAT, "format: " __VA_ARGS__)

/* A tensor of dtype and shape whose bytes lie at (offset, nbytes) of the data section. */
static om_tensor *read_tensor(const unsigned char *data, uint64_t data_bytes, unsigned dtype, int ndim, const int64_t *shape,
                              int64_t offset, int64_t nbytes, const char *what) {
  if (dtype > OM_FLOAT64) return BAD("%s has dtype %u", what, dtype), NULL;
  om_meta m = {.dtype = (om_dtype)dtype, .ndim = ndim};
  int64_t numel = 1;
  for (int d = 0; d < ndim; d++) {
    if (shape[d] < 0 || (shape[d] && numel > INT64_MAX / 16 / shape[d])) return BAD("%s has size %lld at dim %d", what, (long long)shape[d], d), NULL;
    numel *= m.shape[d] = shape[d];
  }
  if (nbytes != numel * (int64_t)om__dtype_size(m.dtype))
    return BAD("%s holds %lld bytes for %lld elements of %s", what, (long long)nbytes, (long long)numel, om_dtype_name(m.dtype)), NULL;
  if (offset < 0 || offset % ALIGN || (uint64_t)offset > data_bytes || (uint64_t)nbytes > data_bytes - (uint64_t)offset)
    return BAD("%s lies at bytes %lld to %lld of a data section of %llu", what, (long long)offset, (long long)(offset + nbytes),
               (unsigned long long)data_bytes), NULL;
  om_tensor *t = om__tensor_new(&m, false, "format");
  if (t && nbytes) memcpy(om__data(t), data + offset, (size_t)nbytes);
  if (t && m.dtype == OM_BOOL)
    for (int64_t k = 0; k < numel; k++) ((uint8_t *)om__data(t))[k] = ((uint8_t *)om__data(t))[k] != 0;
  return t;
}

/* Whether value v of g is defined before the node being read: an input, an initializer, a
 * captured value or a node's output. */
static bool defined(const om_graph *g, int v) { return g->values.v[v].producer != -1 || g->values.v[v].init >= 0; }

/* A state-dict name and the initializer that holds it, sorted by name (ties by initializer, so
 * that a message names the same two natively and in WASM). */
typedef struct held {
  const char *name;
  int init;
  bool alias;
} held;

static int by_name(const void *a, const void *b) {
  const held *x = a, *y = b;
  int c = strcmp(x->name, y->name);
  return c ? c : (x->init > y->init) - (x->init < y->init);
}

/* Whether every state-dict name g's initializers hold (their names and aliases) is held once, and
 * no alias is empty, as a trace writes them: a name held twice would give it two tensors and make
 * the .onnx's onemodel.alias.<name> keys clash. Sorted rather than compared in pairs, so that a
 * file of many aliases costs n log n. */
static bool names_once(const om_graph *g) {
  size_t n = 0;
  for (int k = 0; k < g->inits.n; k++) n += 1 + (size_t)g->inits.v[k].n_aliases;
  held *all = om__alloc(sizeof *all * (n ? n : 1), "format");
  if (!all) return false;
  n = 0;
  for (int k = 0; k < g->inits.n; k++) {
    const om_ginit *init = &g->inits.v[k];
    all[n++] = (held){g->values.v[init->value].name, k, false};
    for (int q = 0; q < init->n_aliases; q++) all[n++] = (held){init->aliases[q], k, true};
  }
  qsort(all, n, sizeof *all, by_name);
  bool ok = true;
  for (size_t i = 0; ok && i < n; i++) {
    const char *holder = g->values.v[g->inits.v[all[i].init].value].name;
    if (all[i].alias && !*all[i].name) ok = BAD("initializer '%.100s' has an empty alias", holder);
    else if (i && !strcmp(all[i].name, all[i - 1].name) && all[i].init == all[i - 1].init)
      ok = BAD("initializer '%.100s' holds the state-dict name '%.100s' twice", holder, all[i].name);
    else if (i && !strcmp(all[i].name, all[i - 1].name))
      ok = BAD("the state-dict name '%.100s' is held by initializers '%.100s' and '%.100s'", all[i].name,
               g->values.v[g->inits.v[all[i - 1].init].value].name, holder);
  }
  free(all);
  return ok;
}

/* Values to nodes of g (a subgraph of parent, whose nv values are read so far, when parent is
 * not NULL), as graph_body wrote them. */
static bool read_body(in *r, om_graph *g, const om_graph *parent, const unsigned char *data, uint64_t data_bytes) {
  om_arena *a = &g->arena;
  int nv = get_count(r, 6, "the value count");
  for (int v = 0; !r->bad && v < nv; v++) {
    const char *name = get_str(r, a, false, "a value's name");
    unsigned dtype = get_u8(r, "a value's dtype"), ndim = get_u8(r, "a value's rank");
    if (r->bad) break;
    if (dtype > OM_FLOAT64 || ndim > OM_MAX_DIMS) return BAD("value %d ('%s') has dtype %u and %u dims", v, name, dtype, ndim);
    int id = om__graph_value(g, (om_dtype)dtype, 0, NULL);
    if (id < 0) return false;
    om_gvalue *val = &g->values.v[id];
    val->name = name;
    val->ndim = (int)ndim;
    for (unsigned d = 0; d < ndim; d++) {
      val->shape[d] = get_i64(r, "a value's size");
      val->dim_param[d] = get_str(r, a, true, "a value's axis name");
      if (!r->bad && val->shape[d] < -1) return BAD("value '%s' has size %lld at dim %u", name, (long long)val->shape[d], d);
    }
  }
  int nc = parent ? get_count(r, 8, "the captured count") : 0;
  for (int c = 0; !r->bad && c < nc; c++) {
    uint32_t v = get_u32(r, "a captured value"), outer = get_u32(r, "a captured value's outer value");
    if (r->bad) break;
    if (v >= (uint32_t)nv || g->values.v[v].outer >= 0 || outer >= (uint32_t)parent->values.n || !defined(parent, (int)outer))
      return BAD("captured value %d is value %u of %d, reading value %u of the enclosing graph, which nothing before defines", c, v,
                 nv, outer);
    int *slot = OM_VEC_PUSH_SLOT(g->captured);
    if (!slot) return false;
    *slot = (int)v;
    g->values.v[v].outer = (int)outer;
    g->values.v[v].producer = -2; /* defined */
  }
  for (int part = 0; !r->bad && part < 2; part++) {
    int n = get_count(r, 4, part ? "the output count" : "the input count");
    for (int k = 0; !r->bad && k < n; k++) {
      uint32_t v = get_u32(r, "an input or output");
      if (r->bad) break;
      if (v >= (uint32_t)nv) return BAD("%s %d is value %u of %d", part ? "output" : "input", k, v, nv);
      if (!part && g->values.v[v].producer != -1) return BAD("input %d is value %u, which is defined twice", k, v); /* listed twice, or captured */
      int *slot = part ? OM_VEC_PUSH_SLOT(g->outputs) : OM_VEC_PUSH_SLOT(g->inputs);
      if (!slot) return false;
      *slot = (int)v;
      if (!part) g->values.v[v].producer = -2; /* defined (an input) */
    }
  }
  int ni = get_count(r, r->version >= 2 ? 24 : 20, "the initializer count");
  for (int k = 0; !r->bad && k < ni; k++) {
    uint32_t v = get_u32(r, "an initializer");
    int64_t offset = get_i64(r, "an initializer's offset"), nbytes = get_i64(r, "an initializer's size");
    if (r->bad) break;
    if (v >= (uint32_t)nv || g->values.v[v].producer != -1 || g->values.v[v].init >= 0)
      return BAD("initializer %d is value %u, which is out of range or defined twice", k, v);
    om_gvalue *val = &g->values.v[v];
    char what[160];
    snprintf(what, sizeof what, "initializer '%.100s'", val->name);
    om_tensor *t = read_tensor(data, data_bytes, val->dtype, val->ndim, val->shape, offset, nbytes, what);
    om_ginit *init = t ? OM_VEC_PUSH_SLOT(g->inits) : NULL;
    if (!init) return om_tensor_release(t), false;
    *init = (om_ginit){.value = (int)v, .tensor = t, .first_use = -1};
    val->init = g->inits.n - 1;
    init->n_aliases = r->version >= 2 ? get_count(r, 4, "an initializer's alias count") : 0;
    init->aliases = init->n_aliases ? om__arena_alloc(a, sizeof(char *) * (size_t)init->n_aliases) : NULL;
    if (init->n_aliases && !init->aliases) return false;
    for (int q = 0; q < init->n_aliases; q++) init->aliases[q] = get_str(r, a, false, "an initializer's alias");
  }
  if (!r->bad && !names_once(g)) return false;
  int nn = get_count(r, 20, "the node count");
  for (int k = 0; !r->bad && k < nn; k++) {
    om_gnode *n = OM_VEC_PUSH_SLOT(g->nodes);
    if (!n) return false;
    *n = (om_gnode){.op = -1};
    n->op_type = get_str(r, a, false, "a node's op type");
    n->name = get_str(r, a, false, "a node's name");
    n->n_in = get_count(r, 4, "a node's input count");
    if (r->bad) break;
    if (!*n->op_type) return BAD("node %d has no op type", k);
    n->in = om__arena_alloc(a, sizeof(int) * (size_t)(n->n_in + 1));
    if (!n->in) return false;
    for (int i = 0; i < n->n_in; i++) {
      uint32_t v = get_u32(r, "a node's input");
      if (r->bad) break;
      if (v != UINT32_MAX && (v >= (uint32_t)nv || (g->values.v[v].producer == -1 && g->values.v[v].init < 0)))
        return BAD("node '%s' (%s) reads value %u, which nothing before it defines", n->name, n->op_type, v);
      n->in[i] = v == UINT32_MAX ? -1 : (int)v;
    }
    n->n_out = get_count(r, 4, "a node's output count");
    n->out = r->bad ? NULL : om__arena_alloc(a, sizeof(int) * (size_t)(n->n_out + 1));
    if (!r->bad && !n->out) return false;
    for (int j = 0; !r->bad && j < n->n_out; j++) {
      uint32_t v = get_u32(r, "a node's output");
      if (r->bad) break;
      if (v >= (uint32_t)nv || g->values.v[v].producer != -1 || g->values.v[v].init >= 0)
        return BAD("node '%s' (%s) writes value %u, which is out of range or defined twice", n->name, n->op_type, v);
      g->values.v[v].producer = k;
      n->out[j] = (int)v;
    }
    int na = get_count(r, 5, "a node's attribute count");
    n->attrs = r->bad ? NULL : om__arena_alloc(a, sizeof(om_gattr) * (size_t)(na + 1));
    if (!r->bad && !n->attrs) return false;
    for (int q = 0; !r->bad && q < na; q++, n->n_attrs++) {
      om_gattr *at = &n->attrs[q];
      at->name = get_str(r, a, false, "an attribute's name");
      at->type = (om_gattr_type)get_u8(r, "an attribute's type");
      if (r->bad) break;
      switch (at->type) {
        case OM_GATTR_INT: at->i = get_i64(r, "an int attribute"); break;
        case OM_GATTR_FLOAT: {
          float f = 0;
          take(r, &f, 4, "a float attribute");
          at->f = f;
          break;
        }
        case OM_GATTR_INTS:
        case OM_GATTR_FLOATS: {
          size_t size = at->type == OM_GATTR_INTS ? 8 : 4;
          at->n = get_count(r, size, "an attribute's length");
          void *v = r->bad ? NULL : om__arena_alloc(a, size * (size_t)(at->n + 1));
          if (!r->bad && !v) return false;
          if (!r->bad) take(r, v, size * (size_t)at->n, "an attribute's values");
          if (at->type == OM_GATTR_INTS) at->ints = v;
          else at->floats = v;
          break;
        }
        case OM_GATTR_STRING: at->s = get_str(r, a, false, "a string attribute"); break;
        case OM_GATTR_TENSOR: {
          unsigned dtype = get_u8(r, "a tensor attribute's dtype"), ndim = get_u8(r, "a tensor attribute's rank");
          int64_t shape[OM_MAX_DIMS];
          if (ndim > OM_MAX_DIMS) return BAD("node '%s': tensor attribute %s has %u dims", n->name, at->name, ndim);
          for (unsigned d = 0; d < ndim; d++) shape[d] = get_i64(r, "a tensor attribute's size");
          int64_t offset = get_i64(r, "a tensor attribute's offset"), nbytes = get_i64(r, "a tensor attribute's size");
          if (r->bad) break;
          at->type = OM_GATTR_INT; /* until it holds its tensor: freeing the graph releases only what is there */
          char what[160];
          snprintf(what, sizeof what, "attribute %s of node '%.100s'", at->name, n->name);
          if (!(at->t = read_tensor(data, data_bytes, dtype, (int)ndim, shape, offset, nbytes, what))) return false;
          at->type = OM_GATTR_TENSOR;
          break;
        }
        case OM_GATTR_OTHER: break;
        case OM_GATTR_GRAPH: {
          at->type = OM_GATTR_INT; /* until it holds its graph */
          om_graph *sub = calloc(1, sizeof *sub);
          if (!sub) return om__fail(OM_ERR_OUT_OF_MEMORY, "format: out of memory");
          if (!read_body(r, sub, g, data, data_bytes)) return om__graph_free(sub), free(sub), false;
          at->type = OM_GATTR_GRAPH, at->g = sub;
          break;
        }
        default: return BAD("node '%s': attribute %s has type %d", n->name, at->name, (int)at->type);
      }
    }
    if (!r->bad && !om__graph_node_captures(g, n)) return false; /* the values of g its subgraphs read */
  }
  if (r->bad) return BAD("the graph section ends inside %s", r->what ? r->what : "an item");
  for (int v = 0; v < nv; v++) /* inputs and captured values were marked -2 while reading; producers are node indices */
    if (g->values.v[v].producer == -2) g->values.v[v].producer = -1;
  if (!g->outputs.n) return BAD("the graph has no outputs");
  for (int k = 0; k < g->outputs.n; k++) {
    const om_gvalue *val = &g->values.v[g->outputs.v[k]];
    bool is_defined = val->producer >= 0 || val->init >= 0 || val->outer >= 0;
    for (int i = 0; !is_defined && i < g->inputs.n; i++) is_defined = g->inputs.v[i] == g->outputs.v[k];
    if (!is_defined) return BAD("graph output '%s' is defined by nothing", val->name);
  }
  return true;
}

static bool read_graph(in *r, om_graph *g, const unsigned char *data, uint64_t data_bytes, om_traced_sym **syms, int *n_syms) {
  om_arena *a = &g->arena;
  if (!read_body(r, g, NULL, data, data_bytes)) return false;
  *n_syms = get_count(r, 36, "the symbol count");
  *syms = om__arena_alloc(a, sizeof **syms * (size_t)(*n_syms + 1));
  if (!*syms) return false;
  for (int k = 0; !r->bad && k < *n_syms; k++) {
    om_traced_sym *sy = &(*syms)[k];
    sy->name = get_str(r, a, false, "a symbol's name");
    sy->multiple = get_i64(r, "a symbol's multiple");
    sy->min = get_i64(r, "a symbol's minimum");
    sy->max = get_i64(r, "a symbol's maximum");
    sy->min_why = get_str(r, a, true, "why a symbol's minimum");
    sy->max_why = get_str(r, a, true, "why a symbol's maximum");
    if (!r->bad && (sy->multiple < 1 || sy->min < 0 || sy->max < sy->min)) return BAD("symbol '%s' has multiple %lld and range [%lld, %lld]", sy->name,
                                                                               (long long)sy->multiple, (long long)sy->min, (long long)sy->max);
    sy->n_branches = r->version >= 3 ? get_count(r, 16, "a symbol's branch count") : 0;
    if (sy->n_branches && !(sy->branches = om__arena_alloc(a, sizeof(int64_t) * 2 * (size_t)sy->n_branches))) return false;
    for (int q = 0; q < 2 * sy->n_branches; q++) sy->branches[q] = get_i64(r, "a symbol's branch");
    for (int q = 0; !r->bad && q < sy->n_branches; q++) /* in order, inside the range */
      if (sy->branches[2 * q] > sy->branches[2 * q + 1] || (q ? sy->branches[2 * q] <= sy->branches[2 * q - 1] : sy->branches[0] < sy->min) ||
          sy->branches[2 * q + 1] > sy->max)
        return BAD("symbol '%s' has branch %d [%lld, %lld] outside its range [%lld, %lld] or out of order", sy->name, q,
                   (long long)sy->branches[2 * q], (long long)sy->branches[2 * q + 1], (long long)sy->min, (long long)sy->max);
  }
  if (r->bad) return BAD("the graph section ends inside %s", r->what ? r->what : "an item");
  if (r->at != r->n) return BAD("the graph section has %zu bytes after its last item", r->n - r->at);
  return true;
}

bool om__format_read(const void *bytes, size_t n, om_graph *g, om_traced_sym **syms, int *n_syms) {
  memset(g, 0, sizeof *g);
  const unsigned char *p = bytes;
  if (!om__format_is(bytes, n)) return BAD("the bytes do not begin with ONEMODEL");
  if (n < HEADER) return BAD("the %zu bytes end inside the 64-byte header", n);
  uint32_t version, header;
  uint64_t f[4];
  memcpy(&version, p + 8, 4);
  memcpy(&header, p + 12, 4);
  memcpy(f, p + 16, sizeof f);
  if (version < 1 || version > VERSION)
    return om__fail(OM_ERR_UNSUPPORTED, "format: version %u; this reader takes versions 1 to %d", version, VERSION);
  uint64_t graph_bytes = f[0], data_offset = f[1], data_bytes = f[2];
  if (header != HEADER || graph_bytes > n - HEADER || data_offset != aligned(HEADER + graph_bytes) || data_offset > n ||
      data_bytes != n - data_offset)
    return BAD("the header's sizes (graph %llu bytes, data %llu bytes at %llu) do not fit the %zu bytes", (unsigned long long)graph_bytes,
               (unsigned long long)data_bytes, (unsigned long long)data_offset, n);
  if (fnv1a(p + HEADER, (size_t)graph_bytes) != f[3]) return BAD("the graph section does not match its checksum (the file is damaged)");
  in r = {.p = p + HEADER, .n = (size_t)graph_bytes, .version = version};
  bool ok = read_graph(&r, g, p + data_offset, data_bytes, syms, n_syms);
  if (!ok) om__graph_free(g);
  return ok;
}

/* ---- the public entries ---- */

bool om_traced_save(const om_traced_model *m, om_write_fn write, void *ctx) {
  if (!m || !write) return om__fail(OM_ERR_INVALID_ARGUMENT, "traced_save: the model or the sink is NULL");
  return om__format_write(&m->g, m->symbols, m->n_symbols, write, ctx);
}

size_t om_traced_save_size(const om_traced_model *m) {
  if (!m) return om__fail(OM_ERR_INVALID_ARGUMENT, "traced_save_size: the model is NULL"), 0;
  return om__format_size(&m->g, m->symbols, m->n_symbols);
}
