/* The tracer (docs/tracing.md): a recording on the calling thread that turns every op with a
 * traced input into ONNX nodes (through the op's lower rule) and every other tensor such an op
 * reads into an initializer. Any trace error ends the recording at once; finish prunes, names
 * and freezes the graph into an om_traced_model. */
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
  for (int k = 0; k < tr->inputs.n; k++) {
    om_tensor_release(tr->inputs.v[k].traced);
    om__storage_release(tr->inputs.v[k].storage);
  }
  free(tr->extents.v);
  om__runs_free(tr);
  free(tr->params.v);
  free(tr->inputs.v);
  free(tr->index);
  free(tr->symbols.v);
  free(tr->xs.v);
  free(tr->fs.v);
  free(tr->xindex);
  free(tr->probes);
  free(tr->probe_small);
  free(tr->same.v);
  free(tr->kept.v);
  free(tr->kept_f.v);
  free(tr->kept_ext.v);
  om__storage_release(tr->phantom);
  om_traced_release(tr->branched);
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
  if (st->trace && st->trace->phase == OM_PHASE_OTHER) return false; /* a run at other sizes: the record run decides */
  /* refused, and refused again where the model makes every call some runs lack (Swin traced where
   * it pads one side only: at the pad, matched with the other side's pad): the trace made there
   * names where the model changes and the declaration that holds (absent.c, om__branch_reexample) */
  if (st->trace && kind == OM_ERR_TRACE_SYMBOLIC_SHAPE && st->trace->reexample_msg[0])
    memcpy(st->err_msg, st->trace->reexample_msg, sizeof st->trace->reexample_msg);
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
  tr->pieces = OM_BRANCH_PIECES;
  tr->split_sym = -1;
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

/* Symbol name (new with a default range, when it is not there yet); NULL on error. */
static om_symbol *find_symbol(om_trace *tr, const char *name, const char *who) {
  for (int k = 0; k < tr->symbols.n; k++)
    if (!strcmp(tr->symbols.v[k].name, name)) return &tr->symbols.v[k];
  if (!*name) return om__trace_fail(OM_ERR_TRACE_INVALID_USAGE, "%s: a symbol's name is empty", who), NULL;
  if (tr->symbols.n == 64)
    return om__trace_fail(OM_ERR_TRACE_INVALID_USAGE, "%s: '%s' would be the 65th symbol; a trace has at most 64", who,
                          name), NULL;
  om_symbol *s = OM_VEC_PUSH_SLOT(tr->symbols);
  char *copy = s ? om__arena_strdup(&tr->g.arena, name) : NULL;
  if (!copy) {
    if (s) tr->symbols.n--;
    return NULL;
  }
  *s = (om_symbol){.name = copy, .multiple = 1, .min = 1, .max = INT64_MAX, .vmin = 1, .vmax = INT64_MAX,
                   .decl_vmin = 1, .decl_vmax = INT64_MAX, .var_factor = -1, .extent_node = -1, .extent_value = -1};
  return s;
}

/* Checks symbol s's example size against its declaration and the spec's rule: at least 2 (a 1
 * would read as broadcasting), inside the declared range. Two symbols may share an example size
 * (a square image): the runs at other sizes move them apart (runs.c). input names where it was
 * seen. */
static bool check_symbol(om_trace *tr, const om_symbol *s, const char *input, const char *who) {
  (void)tr;
  if (s->size < 2)
    return om__trace_fail(OM_ERR_TRACE_INVALID_USAGE, "%s: symbolic axis '%s' of '%s' has example size %lld; symbolic "
                          "axes need example sizes of at least 2", who, s->name, input, (long long)s->size);
  if (s->size % s->multiple || s->size < s->min || s->size > s->max)
    return om__trace_fail(OM_ERR_TRACE_INVALID_USAGE, "%s: symbolic axis '%s' of '%s' has example size %lld, which its "
                          "declaration (a multiple of %lld, from %lld to %lld) excludes", who, s->name, input,
                          (long long)s->size, (long long)s->multiple, (long long)s->min, (long long)s->max);
  return true;
}

bool om_trace_dim(const char *name, int64_t multiple_of, int64_t min, int64_t max) {
  om_trace *tr = om__need_trace("trace_dim");
  if (!tr) return false;
  if (!name) return om__trace_fail(OM_ERR_TRACE_INVALID_USAGE, "trace_dim: the name is NULL");
  if (tr->phase != OM_PHASE_MANUAL || tr->calls || tr->g.nodes.n)
    return om__trace_fail(OM_ERR_TRACE_INVALID_USAGE, "trace_dim: '%s' is declared after the model ran; declare "
                          "symbols before om_trace_run", name);
  if (max == 0) max = INT64_MAX;
  if (multiple_of < 1 || min < 0 || max < min || max / multiple_of * multiple_of < min)
    return om__trace_fail(OM_ERR_TRACE_INVALID_USAGE, "trace_dim: '%s' as a multiple of %lld from %lld to %lld has no "
                          "size", name, (long long)multiple_of, (long long)min, (long long)max);
  om_symbol *s = find_symbol(tr, name, "trace_dim");
  if (!s) return false;
  s->multiple = multiple_of;
  s->vmin = s->decl_vmin = (min + multiple_of - 1) / multiple_of;
  s->vmax = s->decl_vmax = max / multiple_of;
  /* the sizes it holds at: a multiple of 14 from 1 is 14 at the least, what traced.symbols
   * reports and the runs check (its variable's range), not the 1 declared */
  s->min = s->vmin * multiple_of;
  s->max = max == INT64_MAX ? max : s->vmax * multiple_of;
  return !s->size || check_symbol(tr, s, "its input", "trace_dim");
}

om_tensor *om_trace_input(const char *name, om_tensor *example, const char *const *axis_names) {
  om_trace *tr = om__need_trace("trace_input");
  if (!tr) return NULL;
  if (!example) return om__trace_fail(OM_ERR_TRACE_INVALID_USAGE, "trace_input: the example of '%s' is NULL", name ? name : "?"), NULL;
  if (!om__trace_check_name(tr, name, "trace_input")) return NULL;
  if (om__traced(example))
    return om__trace_fail(OM_ERR_TRACE_INVALID_USAGE,
                          "trace_input: the example of '%s' is already a traced value; pass an ordinary tensor", name), NULL;
  if (tr->phase != OM_PHASE_MANUAL)
    return om__trace_fail(OM_ERR_TRACE_INVALID_USAGE, "trace_input: '%s' is declared while om_trace_run runs the model",
                          name), NULL;
  int ext[OM_MAX_DIMS];
  for (int d = 0; d < OM_MAX_DIMS; d++) ext[d] = -1;
  for (int d = 0; axis_names && d < example->ndim; d++) {
    if (!axis_names[d]) continue;
    if (!*axis_names[d]) return om__trace_fail(OM_ERR_TRACE_INVALID_USAGE, "trace_input: an axis name of '%s' is empty", name), NULL;
    om_symbol *s = find_symbol(tr, axis_names[d], "trace_input");
    if (!s) return NULL;
    if (s->size && s->size != example->shape[d])
      return om__trace_fail(OM_ERR_TRACE_INVALID_USAGE, "trace_input: symbolic axis '%s' has example size %lld in '%s' "
                            "but %lld before; one symbol, one size", s->name, (long long)example->shape[d], name,
                            (long long)s->size), NULL;
    if (!s->size) {
      s->size = example->shape[d];
      if (!check_symbol(tr, s, name, "trace_input")) return NULL;
    }
    if ((ext[d] = om__x_sym(tr, (int)(s - tr->symbols.v))) < 0) return NULL;
  }
  /* Everything that can fail comes before the input is registered, so a failure (out of
   * memory) leaves no half-declared input behind. */
  om_graph *g = &tr->g;
  char *copy = om__arena_strdup(&g->arena, name);
  om_tensor *t = copy ? om__alias(example) : NULL;
  int v = t ? om__graph_value(g, example->dtype, example->ndim, example->shape) : -1;
  int *slot = v >= 0 ? OM_VEC_PUSH_SLOT(g->inputs) : NULL;
  om_input *in = slot ? OM_VEC_PUSH_SLOT(tr->inputs) : NULL;
  if (!in) {
    if (slot) g->inputs.n--;
    if (v >= 0) g->values.n--;
    om_tensor_release(t);
    return NULL;
  }
  *slot = v;
  g->values.v[v].name = copy;
  for (int d = 0; d < example->ndim; d++) {
    g->values.v[v].ext[d] = ext[d];
    om__x_extent(tr, ext[d]);
    g->values.v[v].dim_param[d] = ext[d] >= 0 ? om__x_name(tr, ext[d]) : NULL;
  }
  *in = (om_input){.name = copy, .traced = om_tensor_retain(t), .storage = example->storage};
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
  om_param *p = OM_VEC_PUSH_SLOT(tr->params); /* tied weights too: the first name names it, the others are aliases */
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
  for (int k = 0; tr && k < tr->inputs.n; k++)
    if (tr->inputs.v[k].storage == t->storage) return tr->inputs.v[k].name;
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

bool om__trace_check_write(const om_tensor *base, const char *who) {
  om_trace *tr = active();
  /* by storage: a run at other sizes has its inputs' phantoms share one with every phantom (and
   * a copy of an input shares its identity), so the record run alone decides */
  const char *input = tr->phase == OM_PHASE_OTHER ? NULL : input_behind(base);
  if (input)
    return om__trace_fail(OM_ERR_TRACE_IN_PLACE_MUTATION,
                          "%s: changes the storage of traced input '%s' in place while tracing; the graph's inputs are "
                          "not written (clone the input first and write into the copy)", who, input);
  for (int k = 0; k < tr->params.n; k++)
    if (tr->params.v[k].view->storage == base->storage)
      return om__trace_fail(OM_ERR_TRACE_IN_PLACE_MUTATION,
                            "%s: changes parameter '%s' in place while tracing; the graph holds parameters as "
                            "constants (write into a copy, or change it before the trace)", who, tr->params.v[k].name);
  return true;
}
