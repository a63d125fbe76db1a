/* Lowering one op call into the recording: the hook om__apply calls before computing, the
 * constants an op reads (spec 1: initializers, deduplicated by view), the symbolic extents of
 * its outputs, and the helpers the ops' lower rules write nodes with. */
#include <stdlib.h>
#include <string.h>

#include "trace/trace.h"

/* ---- the initializers' index: one per view captured, one per value generated ---- */

static uint64_t fnv(uint64_t h, const void *p, size_t n) {
  const unsigned char *b = p;
  for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 0x100000001b3u;
  return h;
}

/* A captured constant is known by its view, a generated one (an int64 shape operand) by its values. */
static uint64_t key_of(const om_tensor *t, bool generated) {
  uint64_t h = fnv(0xcbf29ce484222325u ^ generated, t->shape, sizeof(int64_t) * (size_t)t->ndim);
  h = fnv(h, &t->ndim, sizeof t->ndim);
  if (generated) return fnv(h, om__data(t), sizeof(int64_t) * (size_t)om_tensor_numel(t));
  h = fnv(h, &t->storage, sizeof t->storage);
  h = fnv(h, &t->offset, sizeof t->offset);
  h = fnv(h, &t->dtype, sizeof t->dtype);
  return fnv(h, t->strides, sizeof(int64_t) * (size_t)t->ndim);
}

static bool same_const(const om_ginit *init, const om_tensor *t, bool generated) {
  const om_tensor *u = init->tensor;
  if (init->generated != generated) return false;
  if (!generated) return om__same_view(u, t);
  return u->ndim == t->ndim && om_tensor_numel(u) == om_tensor_numel(t) &&
         !memcmp(om__data(u), om__data(t), sizeof(int64_t) * (size_t)om_tensor_numel(t));
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

/* Drops what was added to the graph since mark (values, nodes, initializers). */
static void rollback(om_trace *tr, const int *mark) {
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

/* The value of constant t read by op: one initializer per view (spec 1), so a weight used
 * twice, or tied, is stored once. */
static int capture(om_trace *tr, om_tensor *t, om_op op) {
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

/* ---- symbolic extents ---- */

/* Which output axes follow a symbol, found by running the op's infer again with the symbol's
 * axes at other sizes (probe; verify checks a second probe agrees with the first): an axis that grows with it carries it, an axis that stays put is fixed, and
 * anything else (a failure, a different growth) means the call bakes the symbol's example size
 * into the graph, so it is refused (spec 3, SymbolicShape). infer is pure shape arithmetic on
 * the given attrs, so this is exact for every op without per-op code. */
static bool probe_symbol(om_lower *l, const om_op_def *def, const om_symbol *sym, om_tensor *fake, om_tensor **fake_in,
                         int64_t probe, bool verify) {
  om_call *c = l->c;
  om_graph *g = &l->tr->g;
  int64_t size = sym->size;
  for (int i = 0; i < c->n_in; i++) {
    fake[i] = *c->in[i];
    const om_gvalue *v = &g->values.v[l->in[i]];
    for (int d = 0; d < fake[i].ndim; d++)
      if (v->dim_param[d] == sym->name) fake[i].shape[d] = probe;
    om__contiguous_strides(fake[i].shape, fake[i].ndim, fake[i].strides);
    fake[i].offset = 0;
    fake_in[i] = &fake[i];
  }
  om_call pc = {.op = c->op, .n_in = c->n_in, .n_out = c->n_out, .in = fake_in, .attrs = *l->given};
  om_thread_state *st = om__state();
  om_error_kind kind = st->err_kind;
  char msg[sizeof st->err_msg];
  memcpy(msg, st->err_msg, sizeof msg);
  bool ok = def->infer(&pc);
  char why[sizeof st->err_msg];
  memcpy(why, st->err_msg, sizeof why);
  st->err_kind = kind;
  memcpy(st->err_msg, msg, sizeof msg);
  if (!ok)
    return om__trace_fail(OM_ERR_TRACE_SYMBOLIC_SHAPE,
                          "%s: bakes symbolic axis '%s' (example size %lld) into the graph: at size %lld the same "
                          "call fails (%s)", def->name, sym->name, (long long)size, (long long)probe, why);
  for (int j = 0; j < c->n_out; j++)
    for (int d = 0; d < c->out_meta[j].ndim; d++) {
      int64_t a = c->out_meta[j].shape[d], b = pc.out_meta[j].ndim == c->out_meta[j].ndim ? pc.out_meta[j].shape[d] : -1;
      bool carries = l->out_sym[j][d] == sym->name;
      if (a == b && (!verify || !carries)) continue;
      if (a == size && b == probe && (verify ? carries : !l->out_sym[j][d])) {
        l->out_sym[j][d] = sym->name;
        continue;
      }
      return om__trace_fail(OM_ERR_TRACE_SYMBOLIC_SHAPE,
                            "%s: output axis %d (size %lld) depends on symbolic axis '%s' (example size %lld) in a "
                            "way the graph cannot express yet", def->name, d, (long long)a, sym->name, (long long)size);
    }
  return true;
}

static bool probe_symbols(om_lower *l, const om_op_def *def) {
  om_call *c = l->c;
  om_graph *g = &l->tr->g;
  if (def->extents) { /* the op's own rule, when an input has a symbol at all */
    bool any = false;
    for (int i = 0; i < c->n_in; i++)
      for (int d = 0; d < c->in[i]->ndim; d++) any |= g->values.v[l->in[i]].dim_param[d] != NULL;
    return !any || def->extents(l, c);
  }
  om_tensor small[4], *small_in[4], *fake = small, **fake_in = small_in;
  bool ok = true, any = false;
  for (int k = 0; ok && k < l->tr->symbols.n; k++) { /* ok first: a failure frees l->tr */
    const om_symbol *sym = &l->tr->symbols.v[k];
    bool used = false;
    for (int i = 0; i < c->n_in && !used; i++)
      for (int d = 0; d < c->in[i]->ndim && !used; d++) used = g->values.v[l->in[i]].dim_param[d] == sym->name;
    if (!used) continue;
    if (!any && c->n_in > 4) { /* variadic ops (cat) with many inputs */
      fake = om__alloc(sizeof *fake * (size_t)c->n_in, def->name);
      fake_in = om__alloc(sizeof *fake_in * (size_t)c->n_in, def->name);
      if (!fake || !fake_in) {
        ok = false;
        break;
      }
    }
    any = true;
    /* Two probes, so an extent that a floor division keeps at one size (8 / 2 and 9 / 2) is
     * not taken for a fixed one: both must agree. */
    ok = probe_symbol(l, def, sym, fake, fake_in, sym->size + 1, false) &&
         probe_symbol(l, def, sym, fake, fake_in, 2 * sym->size + 1, true);
  }
  if (fake != small) free(fake);
  if (fake_in != small_in) free(fake_in);
  return ok;
}

/* ---- the hook ---- */

bool om__trace_lower(const om_op_def *def, om_call *c, const om_attrs *given) {
  om_trace *tr = om__state()->trace;
  om_graph *g = &tr->g;
  c->trace_mark[0] = g->values.n;
  c->trace_mark[1] = g->nodes.n;
  c->trace_mark[2] = g->inits.n;
  for (int j = 0; j < OM_MAX_OUTPUTS; j++) c->trace_out[j] = -1;
  om_lower l = {.tr = tr, .c = c, .given = given, .in = om__arena_alloc(&g->arena, sizeof(int) * (size_t)c->n_in)};
  bool ok = l.in != NULL;
  for (int i = 0; ok && i < c->n_in; i++) {
    int v = om__traced(c->in[i]) ? c->in[i]->trace_value : capture(tr, c->in[i], c->op);
    if ((ok = v >= 0)) l.in[i] = v; /* on a trace error the graph (l.in with it) is gone */
  }
  ok = ok && probe_symbols(&l, def);
  if (ok && !def->lower)
    return om__trace_fail(OM_ERR_TRACE_UNSUPPORTED_OPERATION, "%s: has no ONNX mapping, so it cannot be traced", def->name);
  ok = ok && def->lower(&l, c) && om__state()->trace == tr;
  for (int j = 0; ok && j < c->n_out; j++)
    if (c->trace_out[j] < 0)
      return om__trace_fail(OM_ERR_TRACE_UNSUPPORTED_OPERATION,
                            "%s: its lowering wrote no value for output %d (a bug in onemodel)", def->name, j);
  if (!ok && om__state()->trace == tr) rollback(tr, c->trace_mark); /* not a trace error: keep recording */
  return ok;
}

void om__trace_commit(const om_call *c, bool ok) {
  om_trace *tr = om__state()->trace;
  if (!tr) return;
  if (!ok) {
    rollback(tr, c->trace_mark);
    return;
  }
  for (int j = 0; j < c->n_out; j++) {
    c->out[j]->trace_id = tr->id;
    c->out[j]->trace_value = c->trace_out[j];
  }
}

/* ---- helpers for the ops' lower rules ---- */

/* The lowering's trace is still recording (a trace error inside it ended it). */
static bool alive(const om_lower *l) { return om__state()->trace == l->tr; }

int om__lower_input(om_lower *l, int i) { return l->in[i]; }
const om_attrs *om__lower_given(om_lower *l) { return l->given; }
const char *om__lower_input_sym(om_lower *l, int i, int d) { return l->tr->g.values.v[l->in[i]].dim_param[d]; }
const char *om__lower_output_sym(om_lower *l, int j, int d) { return l->out_sym[j][d]; }
void om__lower_set_output_sym(om_lower *l, int j, int d, const char *sym) { l->out_sym[j][d] = sym; }

bool om__emit(om_lower *l, const char *op_type, const int *in, int n_in, const om_meta *meta, int n_out, int *out,
              const om_gattr *attrs, int n_attrs) {
  if (!alive(l)) return false;
  om_graph *g = &l->tr->g;
  int *ins = om__arena_alloc(&g->arena, sizeof(int) * (size_t)(n_in + n_out));
  om_gattr *at = om__arena_alloc(&g->arena, sizeof *at * (size_t)(n_attrs ? n_attrs : 1));
  if (!ins || !at) return false;
  memcpy(ins, in, sizeof(int) * (size_t)n_in);
  for (int k = 0; k < n_attrs; k++) {
    at[k] = attrs[k];
    if (at[k].type != OM_GATTR_INTS && at[k].type != OM_GATTR_FLOATS) continue;
    size_t size = at[k].type == OM_GATTR_INTS ? sizeof(int64_t) : sizeof(float);
    void *copy = om__arena_alloc(&g->arena, size * (size_t)(at[k].n ? at[k].n : 1));
    if (!copy) return false;
    if (at[k].n) memcpy(copy, at[k].type == OM_GATTR_INTS ? (const void *)at[k].ints : (const void *)at[k].floats, size * (size_t)at[k].n);
    if (at[k].type == OM_GATTR_INTS) at[k].ints = copy;
    else at[k].floats = copy;
  }
  for (int j = 0; j < n_out; j++)
    if ((ins[n_in + j] = om__graph_value(g, meta[j].dtype, meta[j].ndim, meta[j].shape)) < 0) return false;
  om_gnode *node = OM_VEC_PUSH_SLOT(g->nodes);
  if (!node) return false;
  *node = (om_gnode){.op_type = op_type, .op = l->c->op, .n_in = n_in, .n_out = n_out, .n_attrs = n_attrs,
                     .in = ins, .out = ins + n_in, .attrs = at};
  for (int j = 0; j < n_out; j++) {
    g->values.v[ins[n_in + j]].producer = g->nodes.n - 1;
    if (out) out[j] = ins[n_in + j];
  }
  return true;
}

int om__lower_ints(om_lower *l, const int64_t *v, int n) {
  if (!alive(l)) return -1;
  int ndim = n < 0 ? 0 : 1;
  int64_t count = n < 0 ? 1 : n;
  /* shape operands repeat (every Reshape to [-1, 64]): one initializer each */
  om_tensor probe = {.storage = &(om_storage){.data = (void *)v}, .dtype = OM_INT64, .ndim = ndim, .shape = {count}};
  int found = find_init(l->tr, &probe, true);
  if (found >= 0) return found;
  om_tensor *t = om_from_data(v, (int64_t[]){count}, ndim, OM_INT64);
  return t ? add_init(l->tr, t, l->c->op, true) : -1;
}

int om__lower_float(om_lower *l, double v) {
  om_meta m = {.dtype = OM_FLOAT32, .ndim = 0};
  int none = 0, out;
  return om__emit(l, "Constant", &none, 0, &m, 1, &out, &OM_ATTR_FLOAT("value_float", v), 1) ? out : -1;
}

void om__lower_output(om_lower *l, int j, int v) {
  if (!alive(l) || v < 0) return;
  om_gvalue *val = &l->tr->g.values.v[v];
  const om_meta *m = &l->c->out_meta[j];
  if (val->dtype != m->dtype || val->ndim != m->ndim || memcmp(val->shape, m->shape, sizeof(int64_t) * (size_t)m->ndim)) {
    om__trace_fail(OM_ERR_TRACE_UNSUPPORTED_OPERATION,
                   "%s: its lowering gave output %d a value of another type or shape (a bug in onemodel)",
                   om_op_name(l->c->op), j);
    return;
  }
  if (val->producer >= 0 && v >= l->c->trace_mark[0]) /* a value this call made: give it the probed symbols */
    memcpy(val->dim_param, l->out_sym[j], sizeof val->dim_param);
  l->c->trace_out[j] = v;
}

bool om__lower_node(om_lower *l, const om_call *c, const char *op_type, const om_gattr *attrs, int n_attrs) {
  int out[OM_MAX_OUTPUTS];
  if (!om__emit(l, op_type, l->in, c->n_in, c->out_meta, c->n_out, out, attrs, n_attrs)) return false;
  for (int j = 0; j < c->n_out; j++) om__lower_output(l, j, out[j]);
  return true;
}

bool om__lower_alias(om_lower *l) {
  om__lower_output(l, 0, l->in[0]);
  return true;
}

bool om__lower_refuse(om_lower *l, const om_call *c, const char *why) {
  (void)l;
  return om__trace_fail(OM_ERR_TRACE_UNSUPPORTED_OPERATION, "%s: cannot be traced: %s", om_op_name(c->op), why);
}

bool om__lower_baked(om_lower *l, const om_call *c, int i, int d, const char *what) {
  const char *sym = om__lower_input_sym(l, i, d);
  return om__trace_fail(OM_ERR_TRACE_SYMBOLIC_SHAPE,
                        "%s: symbolic axis '%s' (axis %d of input %d, example size %lld) cannot be expressed in the "
                        "graph: %s", om_op_name(c->op), sym ? sym : "?", d, i, (long long)c->in[i]->shape[d], what);
}
