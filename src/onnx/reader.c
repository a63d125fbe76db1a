/* The ONNX reader: a ModelProto's bytes (IR version 3 to 9, default-domain opset 1 to 20) into
 * the graph IR the tracer produces, for the Session (whose version import pass,
 * src/runtime/versions.c, rewrites an older opset's nodes into opset 20's). protobuf-c parses;
 * this file checks what a parser does not: that every tensor's data matches its type and shape,
 * that every name a node reads is defined once, that the nodes form no cycle (they are put in
 * execution order when the file lists them otherwise), and that sizes fit. Bytes from anywhere are untrusted: every
 * failure is a Format error (Unsupported for what is well-formed but beyond the graph layer)
 * naming what is wrong, and the parser's allocations are capped by the size of the input, so
 * hostile bytes cannot make it allocate without bound. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/graph.h"
#include "onnx/onnx.pb-c.h"

#define OM_ONNX_IR_MIN 3
#define OM_ONNX_IR_MAX 9
#define OM_ONNX_OPSET_MIN 1
#define OM_ONNX_OPSET_MAX 20
/* Messages nest at most this deep (a graph in a node's attribute in a graph ..., a type in a
 * type): protobuf-c parses a nested message by recursion, so hostile nesting must be refused
 * before it parses, or it would exhaust the stack (WASM's is 5 MiB). 128 levels hold 40 levels of
 * subgraphs. */
#define OM_ONNX_NESTING_MAX 128
#define OM_NODE_INPUTS_MAX (1 << 20) /* inputs of one node (ONNX sets no bound) */

#define FORMAT(...) om__fail(OM_ERR_FORMAT, "onnx: " __VA_ARGS__)

/* ---- protobuf-c's allocator, capped ---- */

typedef struct capped {
  ProtobufCAllocator base;
  size_t used, cap;
  bool over;
} capped;

/* Each block carries its size in front, so free can count it back. */
static void *capped_alloc(void *ctx, size_t n) {
  capped *c = ctx;
  if (n > c->cap - c->used || n > SIZE_MAX - 16) {
    c->over = true;
    return NULL;
  }
  size_t *p = malloc(n + 16);
  if (!p) return NULL;
  p[0] = n;
  c->used += n;
  return (char *)p + 16;
}

static void capped_free(void *ctx, void *ptr) {
  if (!ptr) return;
  capped *c = ctx;
  size_t *p = (size_t *)((char *)ptr - 16);
  c->used -= p[0];
  free(p);
}

/* ---- names: an open-addressing table from value name to value id ---- */

typedef struct names {
  int *slot; /* value id + 1, 0 when empty */
  int cap;   /* a power of two, at least twice the names */
  int used;
} names;

static uint64_t hash(const char *s) {
  uint64_t h = 14695981039346656037ull; /* FNV-1a */
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

/* The slot of name (holding its id + 1, or 0 where it would go). */
static int *find(names *t, const om_graph *g, const char *name) {
  for (uint64_t i = hash(name) & (uint64_t)(t->cap - 1);; i = (i + 1) & (uint64_t)(t->cap - 1))
    if (!t->slot[i] || !strcmp(g->values.v[t->slot[i] - 1].name, name)) return &t->slot[i];
}

/* Sets *slot of t to id, then doubles the table when it is half full (rehashing every name). */
static bool name_set(names *t, const om_graph *g, int *slot, int id) {
  *slot = id + 1;
  if (++t->used * 2 <= t->cap) return true;
  names bigger = {.cap = t->cap * 2, .used = t->used};
  if (bigger.cap > INT32_MAX / 4 || !(bigger.slot = calloc((size_t)bigger.cap, sizeof(int))))
    return om__fail(OM_ERR_OUT_OF_MEMORY, "onnx: out of memory for %d names", t->used);
  for (int i = 0; i < t->cap; i++)
    if (t->slot[i]) *find(&bigger, g, g->values.v[t->slot[i] - 1].name) = t->slot[i];
  free(t->slot);
  *t = bigger;
  return true;
}

/* ---- nesting ---- */

/* The message kinds of onnx.proto whose fields hold messages that can hold these again. */
enum { M_OTHER, M_MODEL, M_GRAPH, M_NODE, M_ATTR, M_VALUE_INFO, M_TYPE, M_SEQ, M_MAP, M_FUNCTION, M_TRAINING };

/* The kind of field `field` of a kind-`kind` message, M_OTHER when it cannot nest. */
static int child_kind(int kind, uint64_t field) {
  switch (kind) {
    case M_MODEL: return field == 7 ? M_GRAPH : field == 20 ? M_TRAINING : field == 25 ? M_FUNCTION : M_OTHER;
    case M_TRAINING: return field == 1 || field == 2 ? M_GRAPH : M_OTHER;
    case M_GRAPH: return field == 1 ? M_NODE : field >= 11 && field <= 13 ? M_VALUE_INFO : M_OTHER;
    case M_FUNCTION: return field == 7 ? M_NODE : M_OTHER;
    case M_NODE: return field == 5 ? M_ATTR : M_OTHER;
    case M_ATTR: return field == 6 || field == 11 ? M_GRAPH : field == 14 || field == 15 ? M_TYPE : M_OTHER;
    case M_VALUE_INFO: return field == 2 ? M_TYPE : M_OTHER;
    case M_TYPE: return field == 4 || field == 9 ? M_SEQ : field == 5 ? M_MAP : M_OTHER; /* Optional is shaped as Sequence */
    case M_SEQ: return field == 1 ? M_TYPE : M_OTHER;
    case M_MAP: return field == 2 ? M_TYPE : M_OTHER;
    default: return M_OTHER;
  }
}

static bool varint(const uint8_t *p, size_t n, size_t *at, uint64_t *v) {
  *v = 0;
  for (int shift = 0; *at < n && shift < 64; shift += 7) {
    uint8_t b = p[(*at)++];
    *v |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80)) return true;
  }
  return false;
}

/* Whether the ModelProto in p[0..n) nests the messages that can nest (graphs in attributes,
 * types in types) at most OM_ONNX_NESTING_MAX deep: a walk of the wire format with its own
 * stack, so no recursion. Bytes that are not protobuf stop the walk (the parser says what is
 * wrong with them). */
static bool nesting_ok(const uint8_t *p, size_t n) {
  struct { size_t end; int kind; } stack[OM_ONNX_NESTING_MAX + 1];
  int depth = 0;
  stack[0].end = n, stack[0].kind = M_MODEL;
  for (size_t at = 0;;) {
    while (depth && at >= stack[depth].end) depth--;
    if (at >= n) return true;
    uint64_t key, len;
    if (!varint(p, n, &at, &key)) return true;
    switch (key & 7) {
      case 0: if (!varint(p, n, &at, &len)) return true; break;
      case 1: at += 8; break;
      case 5: at += 4; break;
      case 2: {
        if (!varint(p, n, &at, &len) || len > n - at) return true;
        int kind = child_kind(stack[depth].kind, key >> 3);
        if (kind == M_OTHER) {
          at += len;
          break;
        }
        if (depth == OM_ONNX_NESTING_MAX)
          return FORMAT("the model nests messages more than %d deep (subgraphs in subgraphs, or types in types)", OM_ONNX_NESTING_MAX);
        depth++;
        stack[depth].end = at + len, stack[depth].kind = kind;
        break;
      }
      default: return true;
    }
  }
}

/* ---- tensors ---- */

/* Each ONNX element type the graph layer takes: the dtype that holds it (docs/graph-runtime.md,
 * "Element types": integers in int64, FLOAT16, BFLOAT16 and the float8 types in float32, exactly,
 * DOUBLE in float64, UINT64 as its bits in int64), its bytes in raw data, and whether it is a
 * signed integer. STRING is no dtype's: its tensors are om_strings (read_strings); the 4-bit and
 * complex types are not taken. */
static const struct elem {
  int32_t onnx;
  om_dtype dtype;
  uint8_t size;
  bool is_signed;
} ELEMS[] = {
    {ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, OM_FLOAT32, 4, true},   {ONNX__TENSOR_PROTO__DATA_TYPE__UINT8, OM_INT64, 1, false},
    {ONNX__TENSOR_PROTO__DATA_TYPE__INT8, OM_INT64, 1, true},      {ONNX__TENSOR_PROTO__DATA_TYPE__UINT16, OM_INT64, 2, false},
    {ONNX__TENSOR_PROTO__DATA_TYPE__INT16, OM_INT64, 2, true},     {ONNX__TENSOR_PROTO__DATA_TYPE__INT32, OM_INT64, 4, true},
    {ONNX__TENSOR_PROTO__DATA_TYPE__INT64, OM_INT64, 8, true},     {ONNX__TENSOR_PROTO__DATA_TYPE__BOOL, OM_BOOL, 1, false},
    {ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16, OM_FLOAT32, 2, false}, {ONNX__TENSOR_PROTO__DATA_TYPE__UINT32, OM_INT64, 4, false},
    {ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16, OM_FLOAT32, 2, false}, {ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE, OM_FLOAT64, 8, true},
    {ONNX__TENSOR_PROTO__DATA_TYPE__UINT64, OM_INT64, 8, false}, /* its bits: the Session's rules read them unsigned */
    /* FLOAT8E4M3FN, FLOAT8E4M3FNUZ, FLOAT8E5M2, FLOAT8E5M2FNUZ (ONNX 1.14's numbers; the onnx.proto compiled here predates them) */
    {17, OM_FLOAT32, 1, false}, {18, OM_FLOAT32, 1, false}, {19, OM_FLOAT32, 1, false}, {20, OM_FLOAT32, 1, false},
};

static const struct elem *elem_of(int32_t onnx) {
  for (size_t k = 0; k < sizeof ELEMS / sizeof *ELEMS; k++)
    if (ELEMS[k].onnx == onnx) return &ELEMS[k];
  return NULL;
}

/* The etype a value of ONNX type onnx records: 0 where its dtype's own type is it. */
static int etype_of(const struct elem *e) {
  return e->onnx == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT || e->onnx == ONNX__TENSOR_PROTO__DATA_TYPE__INT64 || e->onnx == ONNX__TENSOR_PROTO__DATA_TYPE__BOOL ||
                 e->onnx == ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE ? 0 : e->onnx;
}

#define TYPES_TAKEN "FLOAT, DOUBLE, FLOAT16, BFLOAT16, the float8 types, INT8 to INT64, UINT8 to UINT64, BOOL, STRING"
#define T_STRING ONNX__TENSOR_PROTO__DATA_TYPE__STRING

/* ONNX's number for each data type, for messages. */
static const char *onnx_type_name(int32_t t) {
  static const char *const n[] = {"UNDEFINED", "FLOAT", "UINT8", "INT8", "UINT16", "INT16", "INT32", "INT64",
                                  "STRING", "BOOL", "FLOAT16", "DOUBLE", "UINT32", "UINT64", "COMPLEX64",
                                  "COMPLEX128", "BFLOAT16", "FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2",
                                  "FLOAT8E5M2FNUZ", "UINT4", "INT4"};
  return t >= 0 && t < (int32_t)(sizeof n / sizeof *n) ? n[t] : "an unknown type";
}

/* Whether e's values are in uint64_data when not raw (UINT32, UINT64). */
static bool uses_uint64_data(const struct elem *e) {
  return e->onnx == ONNX__TENSOR_PROTO__DATA_TYPE__UINT32 || e->onnx == ONNX__TENSOR_PROTO__DATA_TYPE__UINT64;
}

/* Element k of e's type from raw little-endian bytes or from the typed field that holds it
 * (float_data, double_data, int64_data, uint64_data for UINT32 and UINT64, int32_data for the rest: FLOAT16's,
 * BFLOAT16's and the float8 types' bits among them), into the dtype that holds it. */
static void read_element(const Onnx__TensorProto *tp, const struct elem *e, const void *raw, int64_t k, void *out) {
  uint64_t u = 0;
  if (raw) memcpy(&u, (const char *)raw + (size_t)k * e->size, e->size);
  else if (e->dtype == OM_FLOAT32 && e->size == 4) memcpy(&u, &tp->float_data[k], 4);
  else if (e->dtype == OM_FLOAT64) memcpy(&u, &tp->double_data[k], 8);
  else if (uses_uint64_data(e)) u = tp->uint64_data[k];
  else if (e->size == 8) u = (uint64_t)tp->int64_data[k];
  else u = (uint32_t)tp->int32_data[k];
  if (e->size < 8) u &= (UINT64_C(1) << 8 * e->size) - 1;
  if (e->dtype == OM_FLOAT32) {
    float f;
    uint32_t w = (uint32_t)u;
    if (e->onnx == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16) f = om__f16_to_f32((uint16_t)w);
    else if (e->size == 1) f = om__f8_to_f32((uint8_t)w, e->onnx);
    else if (e->onnx == ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16) w <<= 16; /* bfloat16 is float32's top half */
    if (e->onnx != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16 && e->size != 1) memcpy(&f, &w, 4);
    memcpy(out, &f, 4);
  } else if (e->dtype == OM_FLOAT64) {
    memcpy(out, &u, 8);
  } else if (e->dtype == OM_BOOL) {
    *(uint8_t *)out = u != 0; /* one byte per bool, 0 or 1: anything else would be a value no kernel expects */
  } else {
    int64_t v = e->is_signed && e->size < 8 ? om__wrap_int((int64_t)u, 8 * e->size, true) : (int64_t)u; /* sign-extended */
    memcpy(out, &v, 8);
  }
}

/* tp's element count from its dims (at most OM_MAX_DIMS, none negative, the count far from
 * overflowing); -1 with a Format error naming what. */
static int64_t tensor_numel(const Onnx__TensorProto *tp, const char *what) {
  if (tp->n_dims > OM_MAX_DIMS) return FORMAT("%s has %zu dims (at most %d)", what, tp->n_dims, OM_MAX_DIMS), -1;
  int64_t numel = 1;
  for (size_t d = 0; d < tp->n_dims; d++) {
    if (tp->dims[d] < 0) return FORMAT("%s has a negative size %lld at dim %zu", what, (long long)tp->dims[d], d), -1;
    if (tp->dims[d] && numel > INT64_MAX / 16 / tp->dims[d]) return FORMAT("%s has more elements than fit in memory", what), -1;
    numel *= tp->dims[d];
  }
  return numel;
}

/* A new tensor holding tp's data (what: "initializer 'w'", for messages); its ONNX type's etype
 * into *etype. */
static om_tensor *read_tensor(const Onnx__TensorProto *tp, const char *what, int *etype) {
  if (tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL || tp->n_external_data)
    return FORMAT("%s keeps its data in an external file, which this reader does not open (save the model with its data inside)", what), NULL;
  if (tp->segment) return FORMAT("%s is a segment of a tensor, which is not supported", what), NULL;
  const struct elem *e = elem_of(tp->data_type);
  if (!e)
    return om__fail(OM_ERR_UNSUPPORTED, "onnx: %s has data type %s (%d); the graph layer takes " TYPES_TAKEN,
                    what, onnx_type_name(tp->data_type), (int)tp->data_type), NULL;
  int64_t numel = tensor_numel(tp, what);
  if (numel < 0) return NULL;
  size_t have;
  if (tp->has_raw_data) {
    have = tp->raw_data.len / e->size;
    if (tp->raw_data.len % e->size || have != (uint64_t)numel)
      return FORMAT("%s holds %zu bytes of raw data for %lld elements of %s (%lld bytes)", what, tp->raw_data.len,
                    (long long)numel, onnx_type_name(tp->data_type), (long long)numel * (long long)e->size), NULL;
  } else {
    have = e->dtype == OM_FLOAT32 && e->size == 4 ? tp->n_float_data : e->dtype == OM_FLOAT64 ? tp->n_double_data : uses_uint64_data(e) ? tp->n_uint64_data
           : e->size == 8 ? tp->n_int64_data : tp->n_int32_data;
    if (have != (uint64_t)numel)
      return FORMAT("%s holds %zu values for %lld elements", what, have, (long long)numel), NULL;
  }
  om_meta m = {.dtype = e->dtype, .ndim = (int)tp->n_dims};
  for (size_t d = 0; d < tp->n_dims; d++) m.shape[d] = tp->dims[d];
  om_tensor *t = om__tensor_new(&m, false, "onnx reader");
  if (!t) return NULL;
  char *o = om__data(t);
  size_t es = om__dtype_size(e->dtype);
  /* raw bytes already in the dtype's own form (float32, float64, 64-bit integers: little-endian,
   * as both builds are) are the tensor's data as they stand: one copy, not an element at a time
   * (an element at a time was a sixth of a ResNet-50's open in WASM) */
  bool as_is = e->size == es && (e->dtype == OM_FLOAT32 || e->dtype == OM_FLOAT64 || e->dtype == OM_INT64);
  if (tp->has_raw_data && as_is && numel) memcpy(o, tp->raw_data.data, (size_t)numel * es);
  else
    for (int64_t k = 0; k < numel; k++) read_element(tp, e, tp->has_raw_data ? tp->raw_data.data : NULL, k, o + (size_t)k * es);
  *etype = etype_of(e);
  return t;
}

/* A new tensor of strings holding tp's string_data (tp a STRING tensor; what as read_tensor's). */
static om_strings *read_strings(const Onnx__TensorProto *tp, const char *what) {
  if (tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL || tp->n_external_data || tp->segment || tp->has_raw_data)
    return FORMAT("%s is a STRING tensor in external data, a segment or raw data (ONNX keeps strings in string_data)", what), NULL;
  int64_t numel = tensor_numel(tp, what);
  if (numel < 0) return NULL;
  if ((uint64_t)numel != tp->n_string_data) return FORMAT("%s holds %zu strings for %lld elements", what, tp->n_string_data, (long long)numel), NULL;
  uint64_t bytes = 0;
  for (size_t k = 0; k < tp->n_string_data; k++) bytes += tp->string_data[k].len; /* within the file's size */
  om_strings *t = om__strings_alloc((int)tp->n_dims, tp->dims, bytes, "onnx reader");
  for (int64_t k = 0; t && k < numel; k++) om__strings_put(t, k, (const char *)tp->string_data[k].data, tp->string_data[k].len);
  return t;
}

/* ---- the graph ---- */

typedef struct reader {
  om_graph *g;
  names names;
  const Onnx__GraphProto *gp;
  bool default_domain; /* the model imports the default domain's opset (a model of other domains' ops alone need not) */
  bool ml_domain;      /* the model imports ai.onnx.ml's: its nodes' op types are read as "ai.onnx.ml.<op>" */
  struct reader *parent; /* a subgraph's: the graph whose node holds it */
  int64_t ir;            /* the model's IR version: from 4 on, an initializer also listed as a graph input is a default the caller may feed */
} reader;

static bool read_graph(reader *r);

/* The value `name` names in r's graph: its own, or an enclosing graph's (then a value of this
 * graph that captures it, made once); -1 (no error set) when none defines it yet, -2 on error. */
static int resolve(reader *r, const char *name) {
  int *slot = find(&r->names, r->g, name);
  if (*slot || !r->parent) return *slot - 1;
  int outer = resolve(r->parent, name);
  if (outer < 0) return outer;
  int id = om__graph_value(r->g, OM_FLOAT32, 0, NULL), *cap = id >= 0 ? OM_VEC_PUSH_SLOT(r->g->captured) : NULL;
  if (!cap || !(r->g->values.v[id].name = om__arena_strdup(&r->g->arena, name))) return -2;
  *cap = id;
  r->g->values.v[id].outer = outer;
  return name_set(&r->names, r->g, find(&r->names, r->g, name), id) ? id : -2;
}

/* Defines value `name` (new id) of dtype/shape, or fails when it is defined twice. */
static int define(reader *r, const char *name, om_dtype dt, int ndim, const int64_t *shape, const char *what) {
  if (!name || !*name) return FORMAT("%s has no name", what), -1;
  int *slot = find(&r->names, r->g, name);
  if (*slot) return FORMAT("value '%s' is defined twice (%s)", name, what), -1;
  int id = om__graph_value(r->g, dt, ndim, shape);
  if (id < 0 || !(r->g->values.v[id].name = om__arena_strdup(&r->g->arena, name))) return -1;
  return name_set(&r->names, r->g, find(&r->names, r->g, name), id) ? id : -1;
}

/* An initializer (or a Constant's value) from tp: a tensor, or a tensor of strings. */
static bool add_init(reader *r, const char *name, const Onnx__TensorProto *tp, const char *what) {
  int etype = T_STRING;
  om_strings *str = tp->data_type == T_STRING ? read_strings(tp, what) : NULL;
  om_tensor *t = str ? NULL : tp->data_type == T_STRING ? NULL : read_tensor(tp, what, &etype);
  if (!t && !str) return false;
  int v = t ? define(r, name, t->dtype, t->ndim, t->shape, what) : define(r, name, OM_FLOAT32, str->ndim, str->shape, what);
  if (v >= 0) r->g->values.v[v].etype = etype;
  om_ginit *init = v >= 0 ? OM_VEC_PUSH_SLOT(r->g->inits) : NULL;
  if (!init) return om_tensor_release(t), om_strings_release(str), false;
  *init = (om_ginit){.value = v, .tensor = t, .str = str, .first_use = -1};
  r->g->values.v[v].init = r->g->inits.n - 1;
  return true;
}

/* What type tp is: a tensor, a sequence of tensors or an optional of either, into *kind, and the
 * tensor type it is or holds into *tt (NULL where the file leaves it out); false (no error set)
 * for a map, a sparse tensor, or a sequence of those. */
static bool value_kind(const Onnx__TypeProto *tp, om_gkind *kind, const Onnx__TypeProto__Tensor **tt) {
  bool optional = tp->value_case == ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE;
  if (optional) tp = tp->optional_type ? tp->optional_type->elem_type : NULL;
  bool sequence = tp && tp->value_case == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE;
  if (sequence) tp = tp->sequence_type ? tp->sequence_type->elem_type : NULL;
  *kind = optional ? (sequence ? OM_GKIND_OPTIONAL_SEQUENCE : OM_GKIND_OPTIONAL) : sequence ? OM_GKIND_SEQUENCE : OM_GKIND_TENSOR;
  *tt = tp && tp->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE ? tp->tensor_type : NULL;
  return (!tp && (optional || sequence)) || *tt || (tp && tp->value_case == ONNX__TYPE_PROTO__VALUE__NOT_SET);
}

/* A graph input's type: a tensor of a supported dtype, a sequence of such tensors, or an optional
 * of either; a tensor's dims fixed, named (dim_param) or unknown (written "?": any size, bound on
 * its own). A sequence's elements may have any shape. */
static bool read_input(reader *r, const Onnx__ValueInfoProto *vi) {
  const char *name = vi->name ? vi->name : "";
  const Onnx__TypeProto *tp = vi->type;
  bool untyped = !tp || tp->value_case == ONNX__TYPE_PROTO__VALUE__NOT_SET;
  om_gkind kind = OM_GKIND_TENSOR;
  const Onnx__TypeProto__Tensor *tt = NULL;
  if ((!untyped || !r->parent) && (!tp || !value_kind(tp, &kind, &tt) || (!tt && !r->parent && kind == OM_GKIND_TENSOR)))
    return om__fail(OM_ERR_UNSUPPORTED, "onnx: graph input '%s' is not a tensor, a sequence of tensors or an optional of either "
                    "(maps and sparse tensors are not supported)", name);
  bool str = tt && tt->elem_type == T_STRING;
  if (str && kind != OM_GKIND_TENSOR)
    return om__fail(OM_ERR_UNSUPPORTED, "onnx: graph input '%s' is a sequence or an optional of strings, which is not supported", name);
  if (r->parent || kind != OM_GKIND_TENSOR) { /* a subgraph's input (its node gives its type and shape), or a sequence or optional
                                                (of float32 elements where the file leaves their type out) */
    const struct elem *se = tt && tt->elem_type ? elem_of(tt->elem_type) : NULL;
    if (tt && tt->elem_type && !se && !str)
      return om__fail(OM_ERR_UNSUPPORTED, "onnx: %s input '%s' has element type %s (%d); the graph layer takes " TYPES_TAKEN,
                      r->parent ? "subgraph" : "graph", name, onnx_type_name(tt->elem_type), (int)tt->elem_type);
    bool shaped = kind == OM_GKIND_OPTIONAL && tt && tt->shape && !r->parent; /* an optional tensor is checked as a tensor when it holds one */
    if (!shaped) {
      int v = define(r, name, se ? se->dtype : OM_FLOAT32, 0, NULL, r->parent ? "a subgraph input" : "a graph input"),
          *in = v >= 0 ? OM_VEC_PUSH_SLOT(r->g->inputs) : NULL;
      if (v >= 0) r->g->values.v[v].etype = se ? etype_of(se) : str ? T_STRING : 0, r->g->values.v[v].kind = kind;
      if (v >= 0 && r->parent && tt) r->g->values.v[v].decl_type = tt->elem_type;
      return in ? (*in = v, true) : false;
    }
  }
  const struct elem *e = elem_of(tt->elem_type);
  if (!e && !str)
    return om__fail(OM_ERR_UNSUPPORTED, "onnx: graph input '%s' has element type %s (%d); the graph layer takes " TYPES_TAKEN,
                    name, onnx_type_name(tt->elem_type), (int)tt->elem_type);
  if (!tt->shape) return om__fail(OM_ERR_UNSUPPORTED, "onnx: graph input '%s' has no shape (its rank is needed)", name);
  if (tt->shape->n_dim > OM_MAX_DIMS) return FORMAT("graph input '%s' has %zu dims (at most %d)", name, tt->shape->n_dim, OM_MAX_DIMS);
  int ndim = (int)tt->shape->n_dim;
  int64_t shape[OM_MAX_DIMS] = {0};
  const char *params[OM_MAX_DIMS] = {0};
  for (int d = 0; d < ndim; d++) {
    const Onnx__TensorShapeProto__Dimension *dim = tt->shape->dim[d];
    if (dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE) {
      if (dim->dim_value < 0) return FORMAT("graph input '%s' has size %lld at dim %d", name, (long long)dim->dim_value, d);
      shape[d] = dim->dim_value;
    } else {
      shape[d] = -1;
      params[d] = dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM && dim->dim_param && *dim->dim_param
                      ? dim->dim_param : "?";
    }
  }
  int v = define(r, name, str ? OM_FLOAT32 : e->dtype, ndim, shape, "a graph input");
  if (v < 0) return false;
  r->g->values.v[v].etype = str ? T_STRING : etype_of(e), r->g->values.v[v].kind = kind;
  for (int d = 0; d < ndim; d++)
    if (params[d] && !(r->g->values.v[v].dim_param[d] = om__arena_strdup(&r->g->arena, params[d]))) return false;
  int *in = OM_VEC_PUSH_SLOT(r->g->inputs);
  return in ? (*in = v, true) : false;
}

/* n strings (protobuf's) as NUL-terminated copies in the arena into a (STRINGS); false with an error. */
static bool read_attr_strings(om_arena *ar, const char *node, const char *name, const ProtobufCBinaryData *strings, size_t n, om_gattr *a) {
  if (n > INT32_MAX) return FORMAT("node '%s': attribute %s is too long", node, name);
  char **v = om__arena_alloc(ar, sizeof(char *) * (n ? n : 1));
  for (size_t k = 0; v && k < n; k++) {
    if (strings[k].len && memchr(strings[k].data, 0, strings[k].len))
      return om__fail(OM_ERR_UNSUPPORTED, "onnx: node '%s': string %zu of attribute %s holds a NUL byte, which is not supported", node, k, name);
    if ((v[k] = om__arena_alloc(ar, strings[k].len + 1)) && strings[k].len) memcpy(v[k], strings[k].data, strings[k].len);
    if (!v[k]) v = NULL;
  }
  if (!v) return false;
  a->type = OM_GATTR_STRINGS, a->strs = (const char *const *)v, a->n = (int)n;
  return true;
}

/* One attribute into a (strings and arrays copied into the arena). */
static bool read_attr(reader *r, const Onnx__NodeProto *np, const Onnx__AttributeProto *ap, om_gattr *a) {
  om_arena *ar = &r->g->arena;
  const char *node = np->name && *np->name ? np->name : np->op_type;
  if (!ap->name || !*ap->name) return FORMAT("node '%s' has an attribute without a name", node);
  if (ap->ref_attr_name && *ap->ref_attr_name) return FORMAT("node '%s': attribute %s refers to a function's attribute", node, ap->name);
  if (!(a->name = om__arena_strdup(ar, ap->name))) return false;
  switch (ap->type) {
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT: a->type = OM_GATTR_INT, a->i = ap->i; return true;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT: a->type = OM_GATTR_FLOAT, a->f = ap->f; return true;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING: {
      char *s = om__arena_alloc(ar, ap->s.len + 1);
      if (!s) return false;
      if (ap->s.len) memcpy(s, ap->s.data, ap->s.len);
      a->type = OM_GATTR_STRING, a->s = s;
      return true;
    }
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS: {
      if (ap->n_ints > INT32_MAX) return FORMAT("node '%s': attribute %s is too long", node, ap->name);
      int64_t *v = om__arena_alloc(ar, sizeof(int64_t) * (ap->n_ints ? ap->n_ints : 1));
      if (!v) return false;
      if (ap->n_ints) memcpy(v, ap->ints, sizeof(int64_t) * ap->n_ints);
      a->type = OM_GATTR_INTS, a->ints = v, a->n = (int)ap->n_ints;
      return true;
    }
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS: {
      if (ap->n_floats > INT32_MAX) return FORMAT("node '%s': attribute %s is too long", node, ap->name);
      float *v = om__arena_alloc(ar, sizeof(float) * (ap->n_floats ? ap->n_floats : 1));
      if (!v) return false;
      if (ap->n_floats) memcpy(v, ap->floats, sizeof(float) * ap->n_floats);
      a->type = OM_GATTR_FLOATS, a->floats = v, a->n = (int)ap->n_floats;
      return true;
    }
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR: {
      if (!ap->t) return FORMAT("node '%s': tensor attribute %s holds no tensor", node, ap->name);
      if (ap->t->data_type == T_STRING && np->domain && !strcmp(np->domain, "ai.onnx.ml")) { /* LabelEncoder's keys_tensor: its strings in order */
        if (ap->t->has_raw_data || ap->t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL || ap->t->segment)
          return FORMAT("node '%s': attribute %s is a STRING tensor in external data, a segment or raw data (ONNX keeps strings in string_data)", node, ap->name);
        return read_attr_strings(ar, node, ap->name, ap->t->string_data, ap->t->n_string_data, a);
      }
      char what[160];
      snprintf(what, sizeof what, "attribute %s of node '%s'", ap->name, node);
      a->type = OM_GATTR_TENSOR;
      int etype = 0;
      a->t = read_tensor(ap->t, what, &etype);
      a->i = etype; /* a tensor attribute's etype (ConstantOfShape's value gives its output's type) */
      return a->t != NULL;
    }
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH: {
      if (!ap->g) return FORMAT("node '%s': graph attribute %s holds no graph", node, ap->name);
      om_graph *sub = calloc(1, sizeof *sub);
      if (!sub) return om__fail(OM_ERR_OUT_OF_MEMORY, "onnx: out of memory reading attribute %s of node '%s'", ap->name, node);
      reader in = {.g = sub, .gp = ap->g, .default_domain = r->default_domain, .ml_domain = r->ml_domain, .parent = r};
      bool ok = read_graph(&in);
      free(in.names.slot);
      if (!ok) {
        om__graph_free(sub);
        free(sub);
        char msg[512]; /* say where the subgraph is */
        snprintf(msg, sizeof msg, "%s (in attribute %s of node '%s', %s)", om_last_error_message(), ap->name, node, np->op_type);
        return om__fail(om_last_error(), "%s", msg);
      }
      a->type = OM_GATTR_GRAPH, a->g = sub;
      return true;
    }
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS: /* StringNormalizer's stopwords, TfIdfVectorizer's pool_strings */
      return read_attr_strings(ar, node, ap->name, ap->strings, ap->n_strings, a);
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPHS:
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSORS:
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__SPARSE_TENSOR:
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__SPARSE_TENSORS:
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTO:
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTOS:
      a->type = OM_GATTR_OTHER; /* kept by name: a rule that reads it refuses it */
      return true;
    default:
      return FORMAT("node '%s': attribute %s has no type (or type %d)", node, ap->name, (int)ap->type);
  }
}

/* Node k of the file into the graph: its operands resolved, its outputs defined. */
static bool read_node(reader *r, const Onnx__NodeProto *np, int k) {
  om_graph *g = r->g;
  om_arena *ar = &g->arena;
  if (!np->op_type || !*np->op_type) return FORMAT("node %d has no op_type", k);
  const char *name = np->name && *np->name ? np->name : NULL;
  bool ml = np->domain && !strcmp(np->domain, "ai.onnx.ml");
  if (np->domain && *np->domain && strcmp(np->domain, "ai.onnx") && !ml)
    return om__fail(OM_ERR_UNSUPPORTED, "onnx: node '%s' is %s of domain '%s'; only the default domain and ai.onnx.ml are supported",
                    name ? name : np->op_type, np->op_type, np->domain);
  if (ml && !r->ml_domain)
    return FORMAT("node '%s' is %s of domain ai.onnx.ml, whose opset the model does not import", name ? name : np->op_type, np->op_type);
  if (!ml && !r->default_domain)
    return FORMAT("node '%s' is %s of the default domain, whose opset the model does not import", name ? name : np->op_type, np->op_type);
  /* ONNX sets no bound; these keep a node's arrays in int and its work per node bounded (a
   * Concat of 100,000 branches is a node exporters write) */
  if (np->n_input > OM_NODE_INPUTS_MAX || np->n_output > 64 || np->n_attribute > 256)
    return om__fail(OM_ERR_UNSUPPORTED, "onnx: node '%s' has %zu inputs, %zu outputs and %zu attributes; the reader takes at most %d, 64 and 256",
                    name ? name : np->op_type, np->n_input, np->n_output, np->n_attribute, OM_NODE_INPUTS_MAX);
  om_gnode *n = OM_VEC_PUSH_SLOT(g->nodes);
  if (!n) return false;
  *n = (om_gnode){.op = -1, .n_in = (int)np->n_input, .n_out = (int)np->n_output}; /* n_attrs counts what is read */
  n->op_type = ml ? om__arena_printf(ar, "ai.onnx.ml.%s", np->op_type) : om__arena_strdup(ar, np->op_type); /* another domain's op type is its own row */
  n->name = name ? om__arena_strdup(ar, name) : om__arena_printf(ar, "%s_%d", np->op_type, k);
  n->in = om__arena_alloc(ar, sizeof(int) * (np->n_input + 1));
  n->out = om__arena_alloc(ar, sizeof(int) * (np->n_output + 1));
  n->attrs = om__arena_alloc(ar, sizeof(om_gattr) * (np->n_attribute + 1));
  if (!n->op_type || !n->name || !n->in || !n->out || !n->attrs) return false;
  for (size_t i = 0; i < np->n_input; i++) { /* resolved later: a file need not list nodes in order */
    const char *in = np->input[i];
    n->in[i] = -1;
    if (in && *in) {
      int id = resolve(r, in);
      if (id == -2) return false;
      n->in[i] = id >= 0 ? id : -2 - (int)i; /* -2 - i: not yet defined */
    }
  }
  for (size_t a = 0; a < np->n_attribute; a++, n->n_attrs++)
    if (!read_attr(r, np, np->attribute[a], &n->attrs[a])) return false;
  if (!om__graph_node_captures(g, n)) return false; /* the node's subgraphs' captured values, as values of this graph */
  for (size_t j = 0; j < np->n_output; j++) {
    const char *out = np->output[j];
    if (!out || !*out) { /* an omitted optional output: a value nothing can read */
      int id = om__graph_value(g, OM_FLOAT32, 0, NULL);
      if (id < 0 || !(g->values.v[id].name = om__arena_printf(ar, "%s:unused%zu", n->name, j))) return false;
      g->values.v[id].producer = g->nodes.n - 1;
      n->out[j] = id;
      continue;
    }
    char what[160];
    snprintf(what, sizeof what, "output %zu of node '%s'", j, n->name);
    int id = define(r, out, OM_FLOAT32, 0, NULL, what); /* dtypes and shapes come from the session's planning */
    if (id < 0) return false;
    g->values.v[id].producer = g->nodes.n - 1;
    n->out[j] = id;
  }
  return true;
}

/* A min-heap of node indices: the ready node listed first in the file runs first. */
static void heap_push(int *h, int *n, int v) {
  int i = (*n)++;
  for (; i && h[(i - 1) / 2] > v; i = (i - 1) / 2) h[i] = h[(i - 1) / 2];
  h[i] = v;
}
static int heap_pop(int *h, int *n) {
  int top = h[0], v = h[--*n], i = 0;
  for (int c; (c = 2 * i + 1) < *n; i = c) {
    if (c + 1 < *n && h[c + 1] < h[c]) c++;
    if (h[c] >= v) break;
    h[i] = h[c];
  }
  h[i] = v;
  return top;
}

/* Operand i of node n for ordering: its inputs, then the values its subgraphs capture. */
static int operand(const om_gnode *n, int i) { return i < n->n_in ? n->in[i] : n->cap[i - n->n_in]; }

/* Resolves operands a node read before their definition, and puts the nodes in execution order
 * (the file's order where it is one), failing on a cycle or a name nothing defines. A node
 * holding subgraphs comes after what they read of this graph. */
static bool order_nodes(reader *r) {
  om_graph *g = r->g;
  int n = g->nodes.n, nv = g->values.n, edges = 0;
  for (int k = 0; k < n; k++) {
    om_gnode *node = &g->nodes.v[k];
    for (int i = 0; i < node->n_in; i++) {
      if (node->in[i] <= -2) {
        const char *name = r->gp->node[k]->input[i];
        int *slot = find(&r->names, g, name);
        if (!*slot) return FORMAT("node '%s' (%s) reads '%s', which nothing defines", node->name, node->op_type, name);
        node->in[i] = *slot - 1;
      }
      edges += node->in[i] >= 0;
    }
    edges += node->n_cap;
  }
  /* Kahn's algorithm over the readers of each value (counted, then listed: CSR). */
  int *pending = calloc((size_t)n + 1, sizeof(int)), *first = calloc((size_t)nv + 2, sizeof(int));
  int *reader_of = malloc(sizeof(int) * ((size_t)edges + 1)), *heap = malloc(sizeof(int) * ((size_t)n + 1));
  int *where = malloc(sizeof(int) * ((size_t)n + 1));
  om_gnode *sorted = malloc(sizeof(om_gnode) * ((size_t)n + 1));
  bool ok = pending && first && reader_of && heap && where && sorted;
  if (!ok) om__fail(OM_ERR_OUT_OF_MEMORY, "onnx: out of memory ordering %d nodes", n);
  for (int k = 0; ok && k < n; k++)
    for (int i = 0; i < g->nodes.v[k].n_in + g->nodes.v[k].n_cap; i++) {
      int v = operand(&g->nodes.v[k], i);
      if (v >= 0) first[v + 2]++;
      pending[k] += v >= 0 && g->values.v[v].producer >= 0;
    }
  for (int v = 0; ok && v < nv; v++) first[v + 2] += first[v + 1];
  for (int k = 0; ok && k < n; k++)
    for (int i = 0; i < g->nodes.v[k].n_in + g->nodes.v[k].n_cap; i++)
      if (operand(&g->nodes.v[k], i) >= 0) reader_of[first[operand(&g->nodes.v[k], i) + 1]++] = k;
  int m = 0, nh = 0;
  for (int k = 0; ok && k < n; k++)
    if (!pending[k]) heap_push(heap, &nh, k);
  while (ok && nh) {
    int k = heap_pop(heap, &nh);
    where[k] = m;
    sorted[m++] = g->nodes.v[k];
    for (int j = 0; j < g->nodes.v[k].n_out; j++) {
      int v = g->nodes.v[k].out[j];
      for (int e = first[v]; e < first[v + 1]; e++)
        if (!--pending[reader_of[e]]) heap_push(heap, &nh, reader_of[e]);
    }
  }
  if (ok && m < n) {
    int k = 0;
    while (!pending[k]) k++;
    ok = FORMAT("the nodes form a cycle (through node '%s', %s)", g->nodes.v[k].name, g->nodes.v[k].op_type);
  }
  if (ok && n) { /* a graph of no nodes has no array to copy into (memcpy to NULL is undefined even for 0 bytes) */
    memcpy(g->nodes.v, sorted, sizeof(om_gnode) * (size_t)n);
    for (int v = 0; v < nv; v++)
      if (g->values.v[v].producer >= 0) g->values.v[v].producer = where[g->values.v[v].producer];
  }
  free(pending);
  free(first);
  free(reader_of);
  free(heap);
  free(where);
  free(sorted);
  return ok;
}

/* An initializer's value v declared again as graph input vi: the declared element type and fixed
 * sizes must be the initializer's (onnxruntime refuses the model otherwise). */
static bool same_type(const Onnx__ValueInfoProto *vi, const om_gvalue *v) {
  const Onnx__TypeProto__Tensor *tt = vi->type && vi->type->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE ? vi->type->tensor_type : NULL;
  const struct elem *e = tt && tt->elem_type ? elem_of(tt->elem_type) : NULL;
  bool same = !tt || !tt->elem_type || (e && e->dtype == v->dtype && etype_of(e) == v->etype) || (tt->elem_type == T_STRING && v->etype == T_STRING);
  if (same && tt && tt->shape) {
    same = tt->shape->n_dim == (size_t)v->ndim;
    for (int d = 0; same && d < v->ndim; d++)
      same = tt->shape->dim[d]->value_case != ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE || tt->shape->dim[d]->dim_value == v->shape[d];
  }
  return same || FORMAT("initializer '%s' is also a graph input, declared with another type or shape", v->name);
}

/* Initializer value v listed as graph input vi too. Before IR 4 every initializer had to be listed
 * so, and it stays a constant (onnxruntime's reading: nothing can feed it). From IR 4 on the listing
 * says the initializer is a default a run may override (ONNX's IR spec; onnxruntime keeps it out of
 * its constant folding for that reason): v becomes a graph input holding its initializer, each
 * size the file leaves symbolic there taking any size (named ones bound across inputs). A tensor
 * of the model's own graph only: a subgraph's inputs are its node's, and strings are no feed's. */
static bool overridable(reader *r, const Onnx__ValueInfoProto *vi, int v) {
  om_gvalue *gv = &r->g->values.v[v];
  if (r->ir < 4 || r->parent || gv->etype == T_STRING) return true;
  const Onnx__TypeProto__Tensor *tt = vi->type && vi->type->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE ? vi->type->tensor_type : NULL;
  for (int d = 0; tt && tt->shape && d < gv->ndim; d++) { /* same_type found the ranks equal */
    const Onnx__TensorShapeProto__Dimension *dim = tt->shape->dim[d];
    if (dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE) continue;
    gv->dim_param[d] = dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM && dim->dim_param && *dim->dim_param
                           ? om__arena_strdup(&r->g->arena, dim->dim_param) : "?";
    if (!gv->dim_param[d]) return false; /* OutOfMemory, set */
  }
  int *in = OM_VEC_PUSH_SLOT(r->g->inputs);
  return in ? (*in = v, true) : false;
}

static bool read_graph(reader *r) {
  const Onnx__GraphProto *gp = r->gp;
  om_graph *g = r->g;
  if (gp->n_sparse_initializer) return om__fail(OM_ERR_UNSUPPORTED, "onnx: the graph has sparse initializers, which are not supported");
  size_t total = gp->n_input + gp->n_initializer + gp->n_node * 4 + 16;
  for (size_t k = 0; k < gp->n_node; k++) total += gp->node[k]->n_output;
  if (total > (size_t)INT32_MAX / 4) return FORMAT("the graph has too many values");
  for (r->names.cap = 64; (size_t)r->names.cap < 2 * total;) r->names.cap *= 2;
  r->names.slot = calloc((size_t)r->names.cap, sizeof(int));
  if (!r->names.slot) return om__fail(OM_ERR_OUT_OF_MEMORY, "onnx: out of memory for %zu names", total);
  for (size_t k = 0; k < gp->n_initializer; k++) {
    const Onnx__TensorProto *tp = gp->initializer[k];
    char what[160];
    snprintf(what, sizeof what, "initializer '%.100s'", tp->name ? tp->name : "");
    if (!add_init(r, tp->name, tp, what)) return false;
  }
  for (size_t k = 0; k < gp->n_input; k++) {
    const Onnx__ValueInfoProto *vi = gp->input[k];
    int *slot = vi->name ? find(&r->names, g, vi->name) : NULL;
    if (slot && *slot && g->values.v[*slot - 1].init >= 0) { /* an initializer listed as an input too */
      if (!same_type(vi, &g->values.v[*slot - 1]) || !overridable(r, vi, *slot - 1)) return false;
      continue;
    }
    if (!read_input(r, vi)) return false;
  }
  for (size_t k = 0; k < gp->n_node; k++) {
    const Onnx__NodeProto *np = gp->node[k];
    if (np->op_type && !strcmp(np->op_type, "Constant") && np->n_output == 1 && np->n_attribute == 1 &&
        np->attribute[0]->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR && np->attribute[0]->t) {
      char what[160]; /* a Constant holding a tensor is an initializer by another name */
      snprintf(what, sizeof what, "the value of Constant node '%.100s'", np->name ? np->name : "");
      if (!add_init(r, np->output[0], np->attribute[0]->t, what)) return false;
      continue;
    }
    if (!read_node(r, np, (int)k)) return false;
  }
  if (!order_nodes(r)) return false;
  if (!gp->n_output) return FORMAT("the graph has no outputs");
  for (size_t k = 0; k < gp->n_output; k++) {
    const char *name = gp->output[k]->name;
    int id = name && *name ? resolve(r, name) : -1;
    if (id == -2) return false;
    if (id < 0) return FORMAT("graph output '%s' is not defined by any node, input or initializer", name ? name : "");
    const Onnx__TypeProto *tp = gp->output[k]->type; /* a declared type the graph layer cannot give */
    om_gkind kind;
    const Onnx__TypeProto__Tensor *tt = NULL;
    if (tp && tp->value_case != ONNX__TYPE_PROTO__VALUE__NOT_SET && !value_kind(tp, &kind, &tt))
      return om__fail(OM_ERR_UNSUPPORTED, "onnx: graph output '%s' is not a tensor, a sequence of tensors or an optional of either "
                      "(maps and sparse tensors are not supported)", name);
    int32_t declared = tt ? tt->elem_type : 0;
    if (declared && !elem_of(declared) && declared != T_STRING)
      return om__fail(OM_ERR_UNSUPPORTED, "onnx: graph output '%s' has element type %s (%d); the graph layer gives " TYPES_TAKEN,
                      name, onnx_type_name(declared), (int)declared);
    if (g->values.v[id].producer >= 0) g->values.v[id].etype = declared; /* checked against what the session computes */
    if (g->values.v[id].producer >= 0 && tt && tt->shape && !r->parent) { /* the sizes too (a subgraph's outputs are per iteration) */
      om_gvalue *v = &g->values.v[id];
      if (tt->shape->n_dim > OM_MAX_DIMS) return FORMAT("graph output '%s' has %zu dims (at most %d)", name, tt->shape->n_dim, OM_MAX_DIMS);
      int64_t *decl = om__arena_alloc(&g->arena, sizeof *decl * (tt->shape->n_dim + 1));
      if (!decl) return false;
      for (size_t d = 0; d < tt->shape->n_dim; d++)
        decl[d] = tt->shape->dim[d]->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE ? tt->shape->dim[d]->dim_value : -1;
      v->decl_shape = decl, v->decl_ndim = (int)tt->shape->n_dim;
    }
    int *out = OM_VEC_PUSH_SLOT(g->outputs);
    if (!out) return false;
    *out = id;
  }
  return true;
}

bool om__onnx_read(const void *bytes, size_t n, om_graph *g, int *opset_out) {
  memset(g, 0, sizeof *g);
  if (!bytes && n) return om__fail(OM_ERR_INVALID_ARGUMENT, "onnx: no bytes given");
  /* protobuf-c's own structures take a few times the wire size; 64 times plus 16 MiB bounds
   * what any file can make it allocate, however its fields are arranged. */
  capped al = {.base = {.alloc = capped_alloc, .free = capped_free}, .cap = n > (SIZE_MAX - (16u << 20)) / 64 ? SIZE_MAX : n * 64 + (16u << 20)};
  al.base.allocator_data = &al;
  if (!nesting_ok(bytes, n)) return false;
  Onnx__ModelProto *mp = n ? onnx__model_proto__unpack(&al.base, n, bytes) : NULL;
  if (!mp) return al.over ? FORMAT("the %zu bytes ask for more memory than a model of that size can need", n)
                          : FORMAT("the %zu bytes are not a ModelProto (truncated, or not ONNX)", n);
  bool ok = true;
  int64_t opset = -1;
  bool ml = false;
  for (size_t k = 0; k < mp->n_opset_import; k++) {
    const Onnx__OperatorSetIdProto *o = mp->opset_import[k];
    if (!o->domain || !*o->domain || !strcmp(o->domain, "ai.onnx")) opset = o->version;
    if (o->domain && !strcmp(o->domain, "ai.onnx.ml")) ml = true;
  }
  if (!mp->has_ir_version || mp->ir_version < OM_ONNX_IR_MIN || mp->ir_version > OM_ONNX_IR_MAX)
    ok = om__fail(OM_ERR_UNSUPPORTED, "onnx: IR version %lld; the reader takes %d to %d", mp->has_ir_version ? (long long)mp->ir_version : 0LL,
                  OM_ONNX_IR_MIN, OM_ONNX_IR_MAX);
  else if (opset >= 0 && (opset < OM_ONNX_OPSET_MIN || opset > OM_ONNX_OPSET_MAX))
    ok = om__fail(OM_ERR_UNSUPPORTED, "onnx: default-domain opset %lld; the reader takes %d to %d", (long long)opset,
                  OM_ONNX_OPSET_MIN, OM_ONNX_OPSET_MAX);
  else if (!mp->graph)
    ok = FORMAT("the model has no graph");
  reader r = {.g = g, .gp = mp->graph, .default_domain = opset >= 0, .ml_domain = ml, .ir = mp->ir_version};
  ok = ok && read_graph(&r);
  *opset_out = ok && opset >= 0 ? (int)opset : OM_ONNX_OPSET_MAX; /* no default-domain node: nothing to rewrite */
  free(r.names.slot);
  onnx__model_proto__free_unpacked(mp, &al.base);
  if (!ok) om__graph_free(g);
  return ok;
}
