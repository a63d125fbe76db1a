/* The ONNX writer (spec 6): a finished graph as an ONNX ModelProto (IR version 9, one opset
 * import: domain "" version 20), packed by protobuf-c. protobuf-c writes fields in field-number
 * order and nothing else varies, so equal graphs give equal bytes. The message points at the
 * graph's strings and at the initializers' storage, and protobuf-c appends a bytes field by
 * handing over its pointer, so weights stream from where they live into the caller's sink:
 * no second copy of the weights exists at any time. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/graph.h"
#include "onnx/onnx.pb-c.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "initializers are written as little-endian raw_data straight from memory"
#endif

#define OM_ONNX_IR_VERSION 9
#define OM_ONNX_OPSET 20

static int32_t onnx_dtype(om_dtype d) {
  switch (d) {
    case OM_FLOAT32: return ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
    case OM_INT64: return ONNX__TENSOR_PROTO__DATA_TYPE__INT64;
    case OM_BOOL: return ONNX__TENSOR_PROTO__DATA_TYPE__BOOL;
    case OM_FLOAT64: return ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE;
  }
  return ONNX__TENSOR_PROTO__DATA_TYPE__UNDEFINED;
}

/* n zeroed objects of type T in the arena (NULL on failure, error set). */
#define NEW(a, T, n) ((T *)om__arena_alloc((a), sizeof(T) * (size_t)((n) ? (n) : 1)))

static Onnx__ValueInfoProto *value_info(om_arena *a, const om_gvalue *v) {
  Onnx__ValueInfoProto *vi = NEW(a, Onnx__ValueInfoProto, 1);
  Onnx__TypeProto *type = NEW(a, Onnx__TypeProto, 1);
  Onnx__TypeProto__Tensor *tt = NEW(a, Onnx__TypeProto__Tensor, 1);
  Onnx__TensorShapeProto *shape = NEW(a, Onnx__TensorShapeProto, 1);
  Onnx__TensorShapeProto__Dimension *dims = NEW(a, Onnx__TensorShapeProto__Dimension, v->ndim);
  Onnx__TensorShapeProto__Dimension **dimp = NEW(a, Onnx__TensorShapeProto__Dimension *, v->ndim);
  if (!vi || !type || !tt || !shape || !dims || !dimp) return NULL;
  onnx__value_info_proto__init(vi);
  onnx__type_proto__init(type);
  onnx__type_proto__tensor__init(tt);
  onnx__tensor_shape_proto__init(shape);
  for (int d = 0; d < v->ndim; d++) {
    onnx__tensor_shape_proto__dimension__init(&dims[d]);
    if (!v->dim_param[d] && v->shape[d] < 0) { /* unknown (an If's output its branches give other sizes): neither */
    } else if (v->dim_param[d]) {
      dims[d].value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
      dims[d].dim_param = (char *)v->dim_param[d];
    } else {
      dims[d].value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
      dims[d].dim_value = v->shape[d];
    }
    dimp[d] = &dims[d];
  }
  shape->n_dim = (size_t)v->ndim;
  shape->dim = dimp;
  tt->has_elem_type = true;
  tt->elem_type = onnx_dtype(v->dtype);
  tt->shape = shape;
  type->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
  type->tensor_type = tt;
  vi->name = (char *)v->name;
  vi->type = type;
  return vi;
}

/* A TensorProto named name holding t (dense) as raw_data, pointing at t's bytes. */
static Onnx__TensorProto *tensor_proto(om_arena *a, const char *name, const om_tensor *t) {
  Onnx__TensorProto *tp = NEW(a, Onnx__TensorProto, 1);
  int64_t *dims = NEW(a, int64_t, t->ndim);
  if (!tp || !dims) return NULL;
  onnx__tensor_proto__init(tp);
  memcpy(dims, t->shape, sizeof(int64_t) * (size_t)t->ndim);
  tp->n_dims = (size_t)t->ndim;
  tp->dims = dims;
  tp->has_data_type = true;
  tp->data_type = onnx_dtype(t->dtype);
  tp->name = (char *)name;
  tp->has_raw_data = true; /* the tensor is dense (om_trace_finish made sure): its bytes as they lie */
  tp->raw_data.len = (size_t)om_tensor_numel(t) * om__dtype_size(t->dtype);
  tp->raw_data.data = (uint8_t *)om__data(t);
  return tp;
}

static Onnx__GraphProto *graph_proto(om_arena *a, const om_graph *g, const char *name);

static Onnx__NodeProto *node_proto(om_arena *a, const om_graph *g, const om_gnode *n) {
  Onnx__NodeProto *np = NEW(a, Onnx__NodeProto, 1);
  char **in = NEW(a, char *, n->n_in), **out = NEW(a, char *, n->n_out);
  Onnx__AttributeProto *at = NEW(a, Onnx__AttributeProto, n->n_attrs);
  Onnx__AttributeProto **atp = NEW(a, Onnx__AttributeProto *, n->n_attrs);
  if (!np || !in || !out || !at || !atp) return NULL;
  onnx__node_proto__init(np);
  for (int i = 0; i < n->n_in; i++) in[i] = n->in[i] < 0 ? "" : (char *)g->values.v[n->in[i]].name;
  for (int j = 0; j < n->n_out; j++) out[j] = (char *)g->values.v[n->out[j]].name;
  for (int k = 0; k < n->n_attrs; k++) {
    const om_gattr *ga = &n->attrs[k];
    onnx__attribute_proto__init(&at[k]);
    at[k].name = (char *)ga->name;
    at[k].has_type = true;
    switch (ga->type) {
      case OM_GATTR_INT:
        at[k].type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
        at[k].has_i = true;
        at[k].i = ga->i;
        break;
      case OM_GATTR_FLOAT:
        at[k].type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT;
        at[k].has_f = true;
        at[k].f = (float)ga->f;
        break;
      case OM_GATTR_INTS:
        at[k].type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
        at[k].n_ints = (size_t)ga->n;
        at[k].ints = (int64_t *)ga->ints;
        break;
      case OM_GATTR_FLOATS:
        at[k].type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS;
        at[k].n_floats = (size_t)ga->n;
        at[k].floats = (float *)ga->floats;
        break;
      case OM_GATTR_STRING:
        at[k].type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING;
        at[k].has_s = true;
        at[k].s.len = strlen(ga->s);
        at[k].s.data = (uint8_t *)ga->s;
        break;
      case OM_GATTR_TENSOR:
        at[k].type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR;
        if (!(at[k].t = tensor_proto(a, "", ga->t))) return NULL;
        break;
      case OM_GATTR_GRAPH: /* an If's branch: it reads the enclosing graphs' values by name (outer scope) */
        at[k].type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH;
        if (!(at[k].g = graph_proto(a, ga->g, om__arena_printf(a, "%s.%s", n->name, ga->name)))) return NULL;
        break;
      case OM_GATTR_OTHER: /* only imported graphs have them, and only the reader reads those */
      case OM_GATTR_STRINGS:
        return om__fail(OM_ERR_UNSUPPORTED, "onnx writer: attribute %s of node %s has a type it does not write", ga->name, n->name), NULL;
    }
    atp[k] = &at[k];
  }
  np->n_input = (size_t)n->n_in;
  np->input = in;
  np->n_output = (size_t)n->n_out;
  np->output = out;
  np->name = (char *)n->name;
  np->op_type = (char *)n->op_type;
  np->n_attribute = (size_t)n->n_attrs;
  np->attribute = atp;
  return np;
}

static Onnx__TensorProto *initializer(om_arena *a, const om_graph *g, const om_ginit *init) {
  return tensor_proto(a, g->values.v[init->value].name, init->tensor);
}

/* s as a JSON string ("..." with quotes, backslashes and control characters escaped), or null. */
static char *json_string(om_arena *a, const char *s) {
  if (!s) return om__arena_strdup(a, "null");
  size_t n = 2;
  for (const char *c = s; *c; c++) n += (unsigned char)*c < 0x20 ? 6 : *c == '"' || *c == '\\' ? 2 : 1;
  char *out = om__arena_alloc(a, n + 1), *o = out;
  if (!out) return NULL;
  *o++ = '"';
  for (const char *c = s; *c; c++) {
    if ((unsigned char)*c < 0x20) o += snprintf(o, 7, "\\u%04x", (unsigned char)*c);
    else {
      if (*c == '"' || *c == '\\') *o++ = '\\';
      *o++ = *c;
    }
  }
  *o++ = '"';
  *o = '\0';
  return out;
}

/* "null" for no bound (INT64_MAX), else the number, into buf (returned). */
static const char *json_bound(int64_t v, char *buf, size_t cap) {
  if (v == INT64_MAX) snprintf(buf, cap, "null");
  else snprintf(buf, cap, "%lld", (long long)v);
  return buf;
}

/* The model's metadata_props: one per symbol, in order, what traced.symbols reports of it: the
 * key "onemodel.symbol.<name>" and as JSON {"min":4,"max":null,"multipleOf":1,"narrowedBy":"...",
 * "checked":{"min":1,"max":32768}} (max null: no bound; narrowedBy the call that needed a range
 * narrower than declared, null when declared; checked the sizes the tracer checked the graph
 * over), with "branches":[{"min":1,"max":20},{"min":21,"max":null}] where the graph is an If on
 * the symbol's size, so that a consumer of the file sees where it holds and where it switches
 * (docs/format.md). Then one per alias of an initializer (a second state-dict name it holds: tied
 * weights, equal contents stored once), the key "onemodel.alias.<that name>" and the value the
 * initializer's name. Their count to *n; NULL with *n 0 when none; false on OutOfMemory. */
static bool model_props(om_arena *a, const om_traced_model *m, Onnx__StringStringEntryProto ***props, size_t *n) {
  *n = 0;
  *props = NULL;
  int n_props = m->n_symbols;
  for (int k = 0; k < m->g.inits.n; k++) n_props += m->g.inits.v[k].n_aliases;
  if (n_props && !(*props = NEW(a, Onnx__StringStringEntryProto *, n_props))) return false;
  for (int k = 0; k < m->n_symbols; k++) {
    const om_traced_sym *s = &m->symbols[k];
    Onnx__StringStringEntryProto *e = NEW(a, Onnx__StringStringEntryProto, 1);
    char max[24], cmax[24], hi[24];
    char *why = json_string(a, s->max_why ? s->max_why : s->min_why);
    char *branches = om__arena_printf(a, "%s", s->n_branches ? ",\"branches\":[" : "");
    for (int q = 0; branches && q < s->n_branches; q++)
      branches = om__arena_printf(a, "%s%s{\"min\":%lld,\"max\":%s}", branches, q ? "," : "", (long long)s->branches[2 * q],
                                  json_bound(s->branches[2 * q + 1], hi, sizeof hi));
    if (branches && s->n_branches) branches = om__arena_printf(a, "%s]", branches);
    if (!e || !why || !branches) return false;
    onnx__string_string_entry_proto__init(e);
    e->key = om__arena_printf(a, "onemodel.symbol.%s", s->name);
    e->value = om__arena_printf(a, "{\"min\":%lld,\"max\":%s,\"multipleOf\":%lld,\"narrowedBy\":%s,\"checked\":{\"min\":%lld,"
                                "\"max\":%s}%s}", (long long)s->min, json_bound(s->max, max, sizeof max), (long long)s->multiple, why,
                                (long long)s->checked_min, json_bound(s->checked_max, cmax, sizeof cmax), branches);
    if (!e->key || !e->value) return false;
    (*props)[(*n)++] = e;
  }
  for (int k = 0; k < m->g.inits.n; k++)
    for (int q = 0; q < m->g.inits.v[k].n_aliases; q++) {
      Onnx__StringStringEntryProto *e = NEW(a, Onnx__StringStringEntryProto, 1);
      if (!e) return false;
      onnx__string_string_entry_proto__init(e);
      e->key = om__arena_printf(a, "onemodel.alias.%s", m->g.inits.v[k].aliases[q]);
      e->value = (char *)m->g.values.v[m->g.inits.v[k].value].name;
      if (!e->key) return false;
      (*props)[(*n)++] = e;
    }
  return true;
}

/* The GraphProto of g (a model's graph or a subgraph) named name, built in arena a. */
static Onnx__GraphProto *graph_proto(om_arena *a, const om_graph *g, const char *name) {
  Onnx__GraphProto *gp = NEW(a, Onnx__GraphProto, 1);
  Onnx__NodeProto **nodes = NEW(a, Onnx__NodeProto *, g->nodes.n);
  Onnx__TensorProto **inits = NEW(a, Onnx__TensorProto *, g->inits.n);
  Onnx__ValueInfoProto **ins = NEW(a, Onnx__ValueInfoProto *, g->inputs.n), **outs = NEW(a, Onnx__ValueInfoProto *, g->outputs.n);
  if (!name || !gp || !nodes || !inits || !ins || !outs) return NULL;
  for (int k = 0; k < g->nodes.n; k++)
    if (!(nodes[k] = node_proto(a, g, &g->nodes.v[k]))) return NULL;
  for (int k = 0; k < g->inits.n; k++)
    if (!(inits[k] = initializer(a, g, &g->inits.v[k]))) return NULL;
  for (int k = 0; k < g->inputs.n; k++)
    if (!(ins[k] = value_info(a, &g->values.v[g->inputs.v[k]]))) return NULL;
  for (int k = 0; k < g->outputs.n; k++)
    if (!(outs[k] = value_info(a, &g->values.v[g->outputs.v[k]]))) return NULL;
  onnx__graph_proto__init(gp);
  gp->n_node = (size_t)g->nodes.n;
  gp->node = nodes;
  gp->name = (char *)name;
  gp->n_initializer = (size_t)g->inits.n;
  gp->initializer = inits;
  gp->n_input = (size_t)g->inputs.n;
  gp->input = ins;
  gp->n_output = (size_t)g->outputs.n;
  gp->output = outs;
  return gp;
}

/* The ModelProto of m, built in arena a (which must outlive its use). */
static Onnx__ModelProto *model_proto(om_arena *a, const om_traced_model *m) {
  Onnx__ModelProto *mp = NEW(a, Onnx__ModelProto, 1);
  Onnx__OperatorSetIdProto *opset = NEW(a, Onnx__OperatorSetIdProto, 1), **opsetp = NEW(a, Onnx__OperatorSetIdProto *, 1);
  Onnx__GraphProto *gp = graph_proto(a, &m->g, "onemodel");
  if (!mp || !opset || !opsetp || !gp) return NULL;
  onnx__operator_set_id_proto__init(opset);
  opset->domain = "";
  opset->has_version = true;
  opset->version = OM_ONNX_OPSET;
  opsetp[0] = opset;
  onnx__model_proto__init(mp);
  mp->has_ir_version = true;
  mp->ir_version = OM_ONNX_IR_VERSION;
  mp->n_opset_import = 1;
  mp->opset_import = opsetp;
  mp->producer_name = "onemodel";
  mp->producer_version = OM_VERSION;
  mp->graph = gp;
  return model_props(a, m, &mp->metadata_props, &mp->n_metadata_props) ? mp : NULL;
}

size_t om_traced_onnx_size(const om_traced_model *m) {
  if (!m) return om__fail(OM_ERR_INVALID_ARGUMENT, "traced_onnx_size: the model is NULL"), 0;
  om_arena a = {0};
  Onnx__ModelProto *mp = model_proto(&a, m);
  size_t n = mp ? onnx__model_proto__get_packed_size(mp) : 0;
  om__arena_free(&a);
  return n;
}

/* protobuf-c's output buffer, passing bytes on to the caller's sink: small pieces (tags,
 * lengths, names) are gathered into chunks, large ones (weights) go through as they are. */
#define STAGE_BYTES 65536
typedef struct sink {
  ProtobufCBuffer base;
  om_write_fn write;
  void *ctx;
  uint8_t *stage;
  size_t n;
  bool failed;
} sink;

static void flush(sink *s) {
  if (s->n && !s->failed) s->failed = !s->write(s->ctx, s->stage, s->n);
  s->n = 0;
}

static void sink_append(ProtobufCBuffer *b, size_t len, const uint8_t *data) {
  sink *s = (sink *)b;
  if (s->failed || !len) return;
  if (len >= STAGE_BYTES / 4) {
    flush(s);
    if (!s->failed) s->failed = !s->write(s->ctx, data, len);
    return;
  }
  if (s->n + len > STAGE_BYTES) flush(s);
  memcpy(s->stage + s->n, data, len);
  s->n += len;
}

bool om_traced_write_onnx(const om_traced_model *m, om_write_fn write, void *ctx) {
  if (!m || !write) return om__fail(OM_ERR_INVALID_ARGUMENT, "traced_write_onnx: the model or the sink is NULL");
  om_arena a = {0};
  Onnx__ModelProto *mp = model_proto(&a, m);
  sink s = {.base = {.append = sink_append}, .write = write, .ctx = ctx, .stage = om__alloc(STAGE_BYTES, "traced_write_onnx")};
  bool ok = mp && s.stage;
  if (ok) {
    onnx__model_proto__pack_to_buffer(mp, &s.base);
    flush(&s);
    if (s.failed) ok = om__fail(OM_ERR_INVALID_ARGUMENT, "traced_write_onnx: the sink refused the bytes (it returned false)");
  }
  free(s.stage);
  om__arena_free(&a);
  return ok;
}
