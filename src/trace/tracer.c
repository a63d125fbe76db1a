/* The tracer (spec: ../shared/spec/tracing.md sections 1 and 3): a recording on the calling
 * thread that turns every op with a traced input into ONNX nodes (through the op's lower rule)
 * and every other tensor such an op reads into an initializer. Any trace error ends the
 * recording at once; finish prunes, names and freezes the graph into an om_traced_model. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace/trace.h"

/* ---- the recording and its end ---- */

static om_trace *active(void) { return om__state()->trace; }

bool om__traced(const om_tensor *t) {
  om_trace *tr = active();
  return tr && t->trace_id == tr->id;
}

bool om_trace_active(void) { return active() != NULL; }

void om__trace_free(om_trace *tr) {
  for (int k = 0; k < tr->params.n; k++) om_tensor_release(tr->params.v[k].view);
  for (int k = 0; k < tr->input_storages.n; k++) om__storage_release(tr->input_storages.v[k].storage);
  free(tr->params.v);
  free(tr->input_storages.v);
  free(tr->index);
  free(tr->symbols.v);
  free(tr->extents.v);
  om__graph_free(&tr->g);
  free(tr);
}

void om_trace_abort(void) {
  om_trace *tr = active();
  if (!tr) return;
  om__state()->trace = NULL;
  om__trace_free(tr);
}

bool om__trace_fail(om_error_kind kind, const char *fmt, ...) {
  om_thread_state *st = om__state();
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(st->err_msg, sizeof st->err_msg, fmt, ap);
  va_end(ap);
  st->err_kind = kind;
  st->trace_end_kind = kind;
  memcpy(st->trace_end_msg, st->err_msg, sizeof st->trace_end_msg);
  om_trace_abort();
  return false;
}

/* A call that needs a recording when none is active: repeats the error that ended the last
 * one (so C code can check once, at finish), or says that none was begun. */
om_trace *om__need_trace(const char *who) {
  om_trace *tr = active();
  if (tr) return tr;
  om_thread_state *st = om__state();
  if (st->trace_end_kind != OM_ERR_OK) om__fail(st->trace_end_kind, "%s", st->trace_end_msg);
  else om__fail(OM_ERR_TRACE_INVALID_USAGE, "%s: no trace is recording on this thread (call om_trace_begin first)", who);
  return NULL;
}

bool om_trace_begin(void) {
  om_thread_state *st = om__state();
  if (st->trace)
    return om__trace_fail(OM_ERR_TRACE_INVALID_USAGE,
                          "trace_begin: a trace is already recording on this thread (tracers do not nest); "
                          "both traces end here");
  om_trace *tr = om__alloc(sizeof *tr, "trace_begin");
  if (!tr) return false;
  memset(tr, 0, sizeof *tr);
  tr->id = ++st->trace_serial ? st->trace_serial : ++st->trace_serial; /* 0 means "not traced" */
  st->trace_end_kind = OM_ERR_OK;
  st->trace_end_msg[0] = '\0';
  st->trace = tr;
  return true;
}

/* ---- names ---- */

/* Where a user-given name is already used in this trace, or NULL. */
static const char *name_owner(const om_trace *tr, const char *name) {
  for (int k = 0; k < tr->g.inputs.n; k++)
    if (!strcmp(tr->g.values.v[tr->g.inputs.v[k]].name, name)) return "an input";
  for (int k = 0; k < tr->params.n; k++)
    if (!strcmp(tr->params.v[k].name, name)) return "a parameter";
  return NULL;
}

bool om__trace_check_name(om_trace *tr, const char *name, const char *who) {
  if (!name || !*name) return om__trace_fail(OM_ERR_TRACE_INVALID_USAGE, "%s: the name is empty", who);
  const char *owner = name_owner(tr, name);
  if (owner) return om__trace_fail(OM_ERR_TRACE_INVALID_USAGE, "%s: name '%s' is used twice (already %s)", who, name, owner);
  return true;
}

/* ---- inputs and parameters ---- */

/* The trace's copy of symbol name with example size n, checking the spec's rules: sizes of at
 * least 2 (a 1 would read as broadcasting) and distinct per symbol (so extents stay apart). */
static const char *intern_symbol(om_trace *tr, const char *name, int64_t n, const char *input) {
  for (int k = 0; k < tr->symbols.n; k++) {
    om_symbol *s = &tr->symbols.v[k];
    if (!s->derived && !strcmp(s->name, name)) {
      if (s->size == n) return s->name;
      om__trace_fail(OM_ERR_TRACE_INVALID_USAGE,
                     "trace_input: symbolic axis '%s' has example size %lld in '%s' but %lld before; one symbol, one size",
                     name, (long long)n, input, (long long)s->size);
      return NULL;
    }
  }
  if (!*name) return om__trace_fail(OM_ERR_TRACE_INVALID_USAGE, "trace_input: an axis name of '%s' is empty", input), NULL;
  if (n < 2) {
    om__trace_fail(OM_ERR_TRACE_INVALID_USAGE,
                   "trace_input: symbolic axis '%s' of '%s' has example size %lld; symbolic axes need example sizes "
                   "of at least 2", name, input, (long long)n);
    return NULL;
  }
  for (int k = 0; k < tr->symbols.n; k++)
    if (!tr->symbols.v[k].derived && tr->symbols.v[k].size == n) {
      om__trace_fail(OM_ERR_TRACE_INVALID_USAGE,
                     "trace_input: symbolic axes '%s' and '%s' both have example size %lld; give each symbol a "
                     "distinct example size so the trace can tell them apart", tr->symbols.v[k].name, name, (long long)n);
      return NULL;
    }
  if (tr->symbols.n == 64) {
    om__trace_fail(OM_ERR_TRACE_INVALID_USAGE, "trace_input: symbolic axis '%s' of '%s' is the 65th symbol; a trace "
                   "has at most 64 (with the atoms ops derived)", name, input);
    return NULL;
  }
  om_symbol *s = OM_VEC_PUSH_SLOT(tr->symbols);
  char *copy = s ? om__arena_strdup(&tr->g.arena, name) : NULL;
  if (!copy) {
    if (s) tr->symbols.n--;
    return NULL;
  }
  *s = (om_symbol){.name = copy, .size = n, .extent_node = -1, .extent_value = -1, .carrier = -1};
  return copy;
}

om_tensor *om_trace_input(const char *name, om_tensor *example, const char *const *axis_names) {
  om_trace *tr = om__need_trace("trace_input");
  if (!tr) return NULL;
  if (!example) return om__trace_fail(OM_ERR_TRACE_INVALID_USAGE, "trace_input: the example of '%s' is NULL", name ? name : "?"), NULL;
  if (!om__trace_check_name(tr, name, "trace_input")) return NULL;
  if (om__traced(example))
    return om__trace_fail(OM_ERR_TRACE_INVALID_USAGE,
                          "trace_input: the example of '%s' is already a traced value; pass an ordinary tensor", name), NULL;
  const char *syms[OM_MAX_DIMS] = {0};
  for (int d = 0; axis_names && d < example->ndim; d++)
    if (axis_names[d] && !(syms[d] = intern_symbol(tr, axis_names[d], example->shape[d], name))) return NULL;
  /* Everything that can fail comes before the input is registered, so a failure (out of
   * memory) leaves no half-declared input behind. */
  om_graph *g = &tr->g;
  char *copy = om__arena_strdup(&g->arena, name);
  om_tensor *t = copy ? om__alias(example) : NULL;
  int v = t ? om__graph_value(g, example->dtype, example->ndim, example->shape) : -1;
  int *slot = v >= 0 ? OM_VEC_PUSH_SLOT(g->inputs) : NULL;
  om_input_storage *st = slot ? OM_VEC_PUSH_SLOT(tr->input_storages) : NULL;
  if (!st) {
    if (slot) g->inputs.n--;
    if (v >= 0) g->values.n--;
    om_tensor_release(t);
    return NULL;
  }
  *slot = v;
  g->values.v[v].name = copy;
  memcpy(g->values.v[v].dim_param, syms, sizeof syms);
  *st = (om_input_storage){.name = copy, .storage = example->storage};
  example->storage->refcount++;
  t->trace_id = tr->id;
  t->trace_value = v;
  return t;
}

bool om_trace_parameter(const char *name, om_tensor *t) {
  om_trace *tr = om__need_trace("trace_parameter");
  if (!tr) return false;
  if (!t) return om__trace_fail(OM_ERR_TRACE_INVALID_USAGE, "trace_parameter: the tensor named '%s' is NULL", name ? name : "?");
  if (!om__trace_check_name(tr, name, "trace_parameter")) return false;
  if (om__traced(t))
    return om__trace_fail(OM_ERR_TRACE_INVALID_USAGE,
                          "trace_parameter: '%s' is a traced value (it depends on an input), not a constant", name);
  for (int k = 0; k < tr->params.n; k++)
    if (om__same_view(tr->params.v[k].view, t)) return true; /* tied: the first name stays */
  om_param *p = OM_VEC_PUSH_SLOT(tr->params);
  if (!p) return false;
  *p = (om_param){.name = om__arena_strdup(&tr->g.arena, name), .view = om__alias(t)};
  if (!p->name || !p->view) {
    om_tensor_release(p->view);
    tr->params.n--;
    return false;
  }
  return true;
}

/* ---- reads and writes by user code ---- */

/* The graph input whose storage t shares without being traced itself (its example, or a
 * view of it), or NULL: reads and writes through such a handle are reads and writes of the
 * input's values. */
static const char *input_behind(const om_tensor *t) {
  om_trace *tr = active();
  for (int k = 0; tr && k < tr->input_storages.n; k++)
    if (tr->input_storages.v[k].storage == t->storage) return tr->input_storages.v[k].name;
  return NULL;
}

bool om__trace_check_read(const om_tensor *t, const char *who) {
  const char *input = om__traced(t) ? NULL : input_behind(t);
  char buf[OM_SHAPE_STR_LEN];
  if (input)
    return om__trace_fail(OM_ERR_TRACE_DATA_DEPENDENT,
                          "%s: reads the values of traced input '%s' (through a tensor sharing its storage) while "
                          "tracing; a graph cannot depend on them", who, input);
  if (!om__traced(t)) return true;
  return om__trace_fail(OM_ERR_TRACE_DATA_DEPENDENT,
                        "%s: reads the values of a traced tensor of shape %s while tracing; a graph cannot depend "
                        "on them (compute with ops instead, or read them after the trace finishes)",
                        who, om__shape_str(buf, sizeof buf, t->shape, t->ndim));
}

bool om__trace_check_write(const om_tensor *t, const char *who) {
  const char *input = om__traced(t) ? NULL : input_behind(t);
  char buf[OM_SHAPE_STR_LEN];
  if (input)
    return om__trace_fail(OM_ERR_TRACE_IN_PLACE_MUTATION,
                          "%s: changes the storage of traced input '%s' in place while tracing; the graph records "
                          "values, not mutations", who, input);
  if (!om__traced(t)) return true;
  return om__trace_fail(OM_ERR_TRACE_IN_PLACE_MUTATION,
                        "%s: changes a traced tensor of shape %s in place while tracing; the graph records values, "
                        "not mutations (use an out-of-place op)", who, om__shape_str(buf, sizeof buf, t->shape, t->ndim));
}
