/* Lowering one op call into the recording: the hook om__apply calls before computing, the
 * constants an op reads (spec 1: initializers, deduplicated by view), the symbolic extents of
 * its outputs, the tensors creation functions make at a symbol's size (om__trace_created), and
 * the helpers the ops' lower rules write nodes with. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace/trace.h"

/* ---- the initializers' index: one per view captured, one per value generated ---- */

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

/* Drops what was added to the graph since mark (values, nodes, initializers). A derived atom
 * whose carrier is dropped gets its carrier again from the next call that derives it. */
static void rollback(om_trace *tr, const int *mark) {
  om_graph *g = &tr->g;
  for (int k = 0; k < tr->symbols.n; k++)
    if (tr->symbols.v[k].carrier >= mark[0]) tr->symbols.v[k].carrier = -1;
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

static om_extent extent_of(const om_trace *tr, const char *name) {
  if (!name) return (om_extent){NULL, 1, 0};
  for (int k = 0; k < tr->symbols.n; k++)
    if (tr->symbols.v[k].name == name) return (om_extent){name, 1, (uint64_t)1 << k};
  for (int k = 0; k < tr->extents.n; k++)
    if (tr->extents.v[k].name == name) return tr->extents.v[k];
  return (om_extent){name, 1, 0}; /* not reached: every dim_param is a symbol or an interned product */
}

om_extent om__lower_extent(om_lower *l, const char *name) { return extent_of(l->tr, name); }
int64_t om__lower_atom_size(om_lower *l, int k) { return l->tr->symbols.v[k].size; }

/* coef x the atoms' sizes, with atom `moved` (-1: none; 64: all) at size probe(s) = 2s + 1
 * when all move, else at `size`. */
static int64_t sized(const om_trace *tr, om_extent e, int moved, int64_t size) {
  int64_t n = e.coef;
  for (int k = 0; k < tr->symbols.n; k++)
    if (e.atoms >> k & 1) {
      int64_t s = tr->symbols.v[k].size;
      n *= moved == 64 ? 2 * s + 1 : moved == k ? size : s;
    }
  return n;
}

int64_t om__lower_extent_size(om_lower *l, om_extent e) { return sized(l->tr, e, -1, 0); }

const char *om__lower_extent_of_size(om_lower *l, int64_t n) {
  const om_trace *tr = l->tr;
  for (int pass = 0; n >= 2 && pass < 2; pass++)
    for (int k = 0; k < tr->symbols.n; k++)
      if (tr->symbols.v[k].derived == pass && tr->symbols.v[k].size == n) return tr->symbols.v[k].name;
  for (int k = 0; n >= 2 && k < tr->extents.n; k++)
    if (tr->extents.v[k].coef == 1 && sized(tr, tr->extents.v[k], -1, 0) == n) return tr->extents.v[k].name;
  return NULL;
}

const char *om__lower_extent_name(om_lower *l, int64_t coef, uint64_t atoms) {
  om_trace *tr = l->tr;
  if (!atoms) return NULL;
  if (coef == 1 && !(atoms & (atoms - 1)))
    for (int k = 0; k < tr->symbols.n; k++)
      if (atoms >> k & 1) return tr->symbols.v[k].name;
  for (int k = 0; k < tr->extents.n; k++)
    if (tr->extents.v[k].coef == coef && tr->extents.v[k].atoms == atoms) return tr->extents.v[k].name;
  char buf[512];
  size_t n = 0;
  if (coef != 1) n += (size_t)snprintf(buf, sizeof buf, "%lld", (long long)coef);
  for (int k = 0; k < tr->symbols.n && n < sizeof buf; k++)
    if (atoms >> k & 1) n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%s", n ? "*" : "", tr->symbols.v[k].name);
  om_extent *e = OM_VEC_PUSH_SLOT(tr->extents);
  char *name = e ? om__arena_strdup(&tr->g.arena, buf) : NULL;
  if (!name) {
    if (e) tr->extents.n--;
    return NULL;
  }
  *e = (om_extent){name, coef, atoms};
  return name;
}

/* Appends size bytes at p to buf (capacity cap) at *n, counting them also past cap. */
static void put(unsigned char *buf, size_t cap, size_t *n, const void *p, size_t size) {
  if (buf && size && *n + size <= cap) memcpy(buf + *n, p, size);
  *n += size;
}

/* The signature of output j's axis d of this call into buf (capacity cap; NULL, 0 to measure):
 * what infer computes the axis from, the op, its attrs as the caller gave them, and every
 * input's sizes and extents (dim_param pointers: equal extents, equal pointers). Returns its
 * length. */
static size_t signature(om_lower *l, int j, int d, unsigned char *buf, size_t cap) {
  const om_call *c = l->c;
  size_t n = 0;
  put(buf, cap, &n, &c->op, sizeof c->op);
  put(buf, cap, &n, &j, sizeof j);
  put(buf, cap, &n, &d, sizeof d);
  put(buf, cap, &n, &l->given->n_i, sizeof l->given->n_i);
  put(buf, cap, &n, l->given->i, sizeof(int64_t) * (size_t)l->given->n_i);
  put(buf, cap, &n, &l->given->n_f, sizeof l->given->n_f);
  put(buf, cap, &n, l->given->f, sizeof(double) * (size_t)l->given->n_f);
  put(buf, cap, &n, &c->n_in, sizeof c->n_in);
  for (int i = 0; i < c->n_in; i++) {
    put(buf, cap, &n, &c->in[i]->ndim, sizeof c->in[i]->ndim);
    put(buf, cap, &n, c->in[i]->shape, sizeof(int64_t) * (size_t)c->in[i]->ndim);
    for (int e = 0; e < c->in[i]->ndim; e++) {
      const char *sym = om__lower_input_sym(l, i, e);
      put(buf, cap, &n, &sym, sizeof sym);
    }
  }
  return n;
}

/* The derived atom of example size n for output j's axis d of this call: the one an earlier
 * call with the same signature derived (the same extent at every size: two identical convs
 * on one input give one atom), else a new one, whose carrier (the value) is set when the
 * lowering binds the output (om__lower_output). NULL on error. */
static const char *derive_atom(om_lower *l, const om_op_def *def, int64_t n, int j, int d) {
  om_trace *tr = l->tr;
  size_t len = signature(l, j, d, NULL, 0);
  unsigned char *sig = om__arena_alloc(&tr->g.arena, len);
  if (!sig) return NULL;
  signature(l, j, d, sig, len);
  for (int k = 0; k < tr->symbols.n; k++) {
    const om_symbol *s = &tr->symbols.v[k];
    if (s->derived && s->size == n && s->signature_len == len && !memcmp(s->signature, sig, len)) return s->name;
  }
  if (tr->symbols.n == 64) {
    om__trace_fail(OM_ERR_TRACE_SYMBOLIC_SHAPE, "%s: output axis %d needs a new symbolic extent, but the trace "
                   "already has 64 symbols", def->name, d);
    return NULL;
  }
  int k = 0;
  for (int i = 0; i < tr->symbols.n; i++) k += tr->symbols.v[i].derived;
  char *name = om__arena_printf(&tr->g.arena, "%s#%d", def->name, k + 1);
  om_symbol *s = name ? OM_VEC_PUSH_SLOT(tr->symbols) : NULL;
  if (!s) return NULL;
  *s = (om_symbol){.name = name, .size = n, .extent_node = -1, .extent_value = -1, .derived = true, .carrier = -1,
                   .carrier_axis = d, .signature = sig, .signature_len = len};
  return name;
}

/* Runs the op's infer on inputs whose extents have atom `moved` at size (see sized); the
 * outputs' shapes go to pc->out_meta. false (with why) when infer refuses those sizes. */
static bool rerun(om_lower *l, const om_op_def *def, om_call *pc, om_tensor *fake, om_tensor **fake_in, int moved,
                  int64_t size, char *why, size_t why_size) {
  om_call *c = l->c;
  om_graph *g = &l->tr->g;
  for (int i = 0; i < c->n_in; i++) {
    fake[i] = *c->in[i];
    const om_gvalue *v = &g->values.v[l->in[i]];
    for (int d = 0; d < fake[i].ndim; d++)
      if (v->dim_param[d]) fake[i].shape[d] = sized(l->tr, extent_of(l->tr, v->dim_param[d]), moved, size);
    om__contiguous_strides(fake[i].shape, fake[i].ndim, fake[i].strides);
    fake[i].offset = 0;
    fake_in[i] = &fake[i];
  }
  *pc = (om_call){.op = c->op, .n_in = c->n_in, .n_out = c->n_out, .in = fake_in, .attrs = *l->given};
  om_thread_state *st = om__state();
  om_error_kind kind = st->err_kind;
  char msg[sizeof st->err_msg];
  memcpy(msg, st->err_msg, sizeof msg);
  bool ok = def->infer(pc);
  snprintf(why, why_size, "%s", st->err_msg);
  st->err_kind = kind;
  memcpy(st->err_msg, msg, sizeof msg);
  return ok;
}

/* What the probe learns of each output axis: its atoms, and whether it needs a derived atom. */
typedef struct probe_state {
  om_tensor *fake, **fake_in; /* the inputs at the probe's sizes (rerun) */
  om_call pc;
  uint64_t atoms[OM_MAX_OUTPUTS][OM_MAX_DIMS];
  bool derive[OM_MAX_OUTPUTS][OM_MAX_DIMS]; /* not a monomial: a derived atom (def->derives_extents) */
  char why[sizeof om__state()->err_msg];
} probe_state;

/* Step 1 for atom k: three sizes, s + 1 and 2s + 1 to tell a proportional extent from a
 * floor-divided one, and a far one (1024s + 7) that catches a window whose stride exceeds
 * the example (kernel 8, stride 100 on an 8-wide axis gives 1 at s, s + 1 and 2s + 1, but 80
 * at 8199). An axis that moves in proportion at all three gets the atom. false on a refusal. */
static bool probe_atom(om_lower *l, const om_op_def *def, int k, probe_state *ps) {
  const om_call *c = l->c;
  const om_symbol *sym = &l->tr->symbols.v[k];
  for (int pass = 0; pass < 3; pass++) {
    int64_t probe = pass == 0 ? sym->size + 1 : pass == 1 ? 2 * sym->size + 1 : 1024 * sym->size + 7;
    if (!rerun(l, def, &ps->pc, ps->fake, ps->fake_in, k, probe, ps->why, sizeof ps->why))
      return om__trace_fail(OM_ERR_TRACE_SYMBOLIC_SHAPE,
                            "%s: bakes symbolic axis '%s' (example size %lld) into the graph: at size %lld the same "
                            "call fails (%s)", def->name, sym->name, (long long)sym->size, (long long)probe, ps->why);
    for (int j = 0; j < c->n_out; j++)
      for (int d = 0; d < c->out_meta[j].ndim; d++) {
        int64_t a = c->out_meta[j].shape[d];
        int64_t b = ps->pc.out_meta[j].ndim == c->out_meta[j].ndim ? ps->pc.out_meta[j].shape[d] : -1;
        bool has = ps->atoms[j][d] >> k & 1;
        if (ps->derive[j][d] || (a == b && !has)) continue;
        if (a != b && a > 0 && b * sym->size == a * probe && (pass ? has : true)) {
          ps->atoms[j][d] |= (uint64_t)1 << k;
          continue;
        }
        if (def->derives_extents) {
          ps->derive[j][d] = true;
          continue;
        }
        return om__trace_fail(OM_ERR_TRACE_SYMBOLIC_SHAPE,
                              "%s: output axis %d (size %lld) depends on symbolic axis '%s' (example size %lld) in a "
                              "way the graph cannot express yet", def->name, d, (long long)a, sym->name,
                              (long long)sym->size);
      }
  }
  return true;
}

/* Steps 2 and 3: coef = example size / the atoms' example sizes (exact), into coef; then,
 * when the call uses several atoms, the joint probe (all moved at once) must give coef x
 * atoms on every axis. false on a refusal. */
static bool probe_coefs(om_lower *l, const om_op_def *def, uint64_t used, probe_state *ps,
                        int64_t coef[OM_MAX_OUTPUTS][OM_MAX_DIMS]) {
  const om_call *c = l->c;
  for (int j = 0; j < c->n_out; j++)
    for (int d = 0; d < c->out_meta[j].ndim; d++) {
      int64_t a = c->out_meta[j].shape[d], p = sized(l->tr, (om_extent){NULL, 1, ps->atoms[j][d]}, -1, 0);
      coef[j][d] = a / p;
      if (!ps->derive[j][d] && a % p)
        return om__trace_fail(OM_ERR_TRACE_SYMBOLIC_SHAPE,
                              "%s: output axis %d (size %lld) is not a whole multiple of its symbolic axes' product "
                              "(%lld)", def->name, d, (long long)a, (long long)p);
    }
  if (!(used & (used - 1))) return true; /* one atom: nothing to move jointly */
  if (!rerun(l, def, &ps->pc, ps->fake, ps->fake_in, 64, 0, ps->why, sizeof ps->why))
    return om__trace_fail(OM_ERR_TRACE_SYMBOLIC_SHAPE,
                          "%s: bakes its symbolic axes into the graph: with all of them at other sizes the same call "
                          "fails (%s)", def->name, ps->why);
  for (int j = 0; j < c->n_out; j++)
    for (int d = 0; d < c->out_meta[j].ndim; d++)
      if (ps->pc.out_meta[j].ndim != c->out_meta[j].ndim ||
          (!ps->derive[j][d] &&
           ps->pc.out_meta[j].shape[d] != sized(l->tr, (om_extent){NULL, coef[j][d], ps->atoms[j][d]}, 64, 0)))
        return om__trace_fail(OM_ERR_TRACE_SYMBOLIC_SHAPE,
                              "%s: output axis %d (size %lld) depends on its inputs' symbolic axes jointly in a way "
                              "the graph cannot express yet", def->name, d, (long long)c->out_meta[j].shape[d]);
  return true;
}

/* The extents of the outputs, found by running the op's infer again with the inputs' atoms
 * at other sizes (spec 4): 1. for each atom, probes at other sizes of it (probe_atom): an
 * output axis that does not move is fixed w.r.t. the atom, one that moves in proportion
 * (b * s == a * p at every probe) has the atom; 2. coef = example size / the atoms' example
 * sizes (exact); 3. a joint probe (every atom moved at once) must confirm coef x atoms on every
 * axis (probe_coefs). Anything else (a failure, another growth) would bake an example size
 * into the graph: refused (spec 3, SymbolicShape), unless the op derives extents. infer is
 * pure shape arithmetic on the given attrs, so this is exact without per-op code. */
bool om__lower_probe(om_lower *l) {
  om_call *c = l->c;
  const om_op_def *def = om__ops[c->op];
  om_trace *tr = l->tr;
  uint64_t used = 0;
  for (int i = 0; l->in && i < c->n_in; i++)
    for (int d = 0; d < c->in[i]->ndim; d++) used |= extent_of(tr, om__lower_input_sym(l, i, d)).atoms;
  if (!used) return true;
  om_tensor small[4], *small_in[4];
  probe_state ps = {.fake = small, .fake_in = small_in};
  if (c->n_in > 4) { /* variadic ops (cat) with many inputs */
    ps.fake = om__alloc(sizeof *ps.fake * (size_t)c->n_in, def->name);
    ps.fake_in = om__alloc(sizeof *ps.fake_in * (size_t)c->n_in, def->name);
    if (!ps.fake || !ps.fake_in) {
      free(ps.fake);
      free(ps.fake_in);
      return false;
    }
  }
  int64_t coef[OM_MAX_OUTPUTS][OM_MAX_DIMS];
  bool ok = true;
  for (int k = 0; ok && k < tr->symbols.n; k++)
    if (used >> k & 1) ok = probe_atom(l, def, k, &ps);
  ok = ok && probe_coefs(l, def, used, &ps, coef);
  for (int j = 0; ok && j < c->n_out; j++)
    for (int d = 0; ok && d < c->out_meta[j].ndim; d++)
      if (ps.derive[j][d]) ok = (l->out_sym[j][d] = derive_atom(l, def, c->out_meta[j].shape[d], j, d)) != NULL;
      else if (ps.atoms[j][d] && !(l->out_sym[j][d] = om__lower_extent_name(l, coef[j][d], ps.atoms[j][d]))) ok = false;
  if (ps.fake != small) free(ps.fake);
  if (ps.fake_in != small_in) free(ps.fake_in);
  return ok;
}

/* The op's own extents rule (reshape, expand, slice: sizes the caller gives), else the probe. */
static bool probe_extents(om_lower *l, const om_op_def *def) {
  return def->extents ? def->extents(l, l->c) : om__lower_probe(l);
}

/* Marks where the graph stood before call c, so a failure drops what it added. */
static void mark(const om_trace *tr, om_call *c) {
  c->trace_mark[0] = tr->g.values.n;
  c->trace_mark[1] = tr->g.nodes.n;
  c->trace_mark[2] = tr->g.inits.n;
  for (int j = 0; j < OM_MAX_OUTPUTS; j++) c->trace_out[j] = -1;
}

/* ---- the hook ---- */

int om__trace_lower(const om_op_def *def, om_call *c, const om_attrs *given) {
  om_trace *tr = om__state()->trace;
  om_graph *g = &tr->g;
  om_lower l = {.tr = tr, .c = c, .given = given, .who = def->name};
  bool traced = false;
  for (int i = 0; i < c->n_in && !traced; i++) traced = om__traced(c->in[i]);
  if (!traced) { /* constants only: lowered when the extents rule gives an output axis a symbol */
    if (!def->extents || !tr->symbols.n) return 0; /* no symbol to match: the call stays a constant, cheaply */
    if (!def->extents(&l, c)) return -1;
    bool sym = false;
    for (int j = 0; j < c->n_out; j++)
      for (int d = 0; d < c->out_meta[j].ndim; d++) sym |= l.out_sym[j][d] != NULL;
    if (!sym) return 0;
    memset(l.out_sym, 0, sizeof l.out_sym);
  }
  mark(tr, c);
  bool ok = (l.in = om__arena_alloc(&g->arena, sizeof(int) * (size_t)c->n_in)) != NULL;
  for (int i = 0; ok && i < c->n_in; i++) {
    int v = om__traced(c->in[i]) ? c->in[i]->trace_value : capture(tr, c->in[i], c->op);
    if ((ok = v >= 0)) l.in[i] = v; /* on a trace error the graph (l.in with it) is gone */
  }
  ok = ok && probe_extents(&l, def);
  if (ok && !def->lower)
    return om__trace_fail(OM_ERR_TRACE_UNSUPPORTED_OPERATION, "%s: has no ONNX mapping, so it cannot be traced", def->name), -1;
  ok = ok && def->lower(&l, c) && om__state()->trace == tr;
  for (int j = 0; ok && j < c->n_out; j++)
    if (c->trace_out[j] < 0)
      return om__trace_fail(OM_ERR_TRACE_UNSUPPORTED_OPERATION,
                            "%s: its lowering wrote no value for output %d (a bug in onemodel)", def->name, j), -1;
  if (!ok && om__state()->trace == tr) rollback(tr, c->trace_mark); /* not a trace error: keep recording */
  return ok ? 1 : -1;
}

/* v, whose one axis has extent sym. Every value of an arange gets it, not only the result: a
 * later arange shares the earlier one's nodes (om__emit), and its result may be one of these
 * (arange(0, n) after arange(1, 1 + n) is the Range); without it, it would read as fixed. */
static int along(om_lower *l, int v, const char *sym) {
  l->tr->g.values.v[v].dim_param[0] = sym;
  return v;
}

/* arange's values from Range(0, n, 1) on the run-time extent: cast to float, scaled by step,
 * shifted by start (each step only where it changes something). -1 on error. */
static int lower_arange(om_lower *l, const char *sym, double start, double step, om_dtype dtype) {
  om_meta m = l->c->out_meta[0];
  m.dtype = OM_INT64;
  int zero = om__lower_scalar(l, 0, OM_INT64), one = om__lower_scalar(l, 1, OM_INT64);
  int in[3] = {zero, om__lower_extent_value(l, extent_of(l->tr, sym)), one}, v;
  /* Range takes 0-d bounds: onnxruntime runs a [1] limit, but its shape inference then gives
   * a Gather on the Range's output one dim too many and refuses the model */
  om_meta scalar = {.dtype = OM_INT64, .ndim = 0};
  if (in[1] < 0 || !om__emit(l, "Squeeze", &in[1], 1, &scalar, 1, &in[1], NULL, 0)) return -1;
  if (in[0] < 0 || in[2] < 0 || !om__emit(l, "Range", in, 3, &m, 1, &v, NULL, 0)) return -1;
  l->tr->g.values.v[along(l, v, sym)].iota = sym;
  m.dtype = dtype;
  if (dtype == OM_FLOAT32 && !om__emit(l, "Cast", &v, 1, &m, 1, &v, &OM_ATTR_INT("to", 1 /* FLOAT */), 1)) return -1;
  along(l, v, sym);
  const char *op[2] = {"Mul", "Add"};
  double by[2] = {step, start}, keep[2] = {1, 0};
  for (int k = 0; k < 2; k++) {
    if (by[k] == keep[k]) continue;
    int two[2] = {v, om__lower_scalar(l, by[k], dtype)};
    if (two[1] < 0 || !om__emit(l, op[k], two, 2, &m, 1, &v, NULL, 0)) return -1;
    along(l, v, sym);
  }
  return v;
}

/* Why values t made by kind (arange of start and step) at a symbolic length cannot be written
 * in the graph, NULL when they can. */
static const char *unwritable(const om_tensor *t, om_created kind, double start, double step) {
  if (kind == OM_CREATED_RANDOM)
    return "random values of a symbolic size cannot be written in the graph (pass them as a traced input, or draw "
           "them at another size)";
  if (kind != OM_CREATED_ARANGE) return NULL;
  /* int64 values of a fractional start or step are truncated sums, which the graph's int64
   * Range, Mul and Add would not reproduce */
  if (t->dtype == OM_INT64 && (start != floor(start) || step != floor(step)))
    return "int64 values from a fractional start or step at a symbolic length cannot be written in the graph yet "
           "(use integers, or a float arange)";
  /* The graph keeps start and step and lets the length follow the symbol, which is how an
   * ascending range is written (arange(l), arange(s, s + l)); a descending one usually starts
   * from the length (arange(l - 1, -1, -1)), whose start the graph would freeze. */
  if (step < 0)
    return "a descending arange at a symbolic length cannot be written in the graph yet (its start would stay the "
           "example's)";
  return NULL;
}

om_tensor *om__trace_created(om_tensor *t, om_created kind, double value, double step, const char *who) {
  om_trace *tr = om__state()->trace;
  if (!tr || !t || !om_tensor_numel(t)) return t;
  om_call c = {.op = OM_OP_COUNT, .n_out = 1, .out_meta = {{.dtype = t->dtype, .ndim = t->ndim}}};
  memcpy(c.out_meta[0].shape, t->shape, sizeof t->shape);
  om_lower l = {.tr = tr, .c = &c, .given = &c.attrs, .who = who};
  int first = -1;
  for (int d = t->ndim - 1; d >= 0; d--)
    if ((l.out_sym[0][d] = om__lower_extent_of_size(&l, t->shape[d]))) first = d;
  if (first < 0) return t;
  const char *why = unwritable(t, kind, value, step);
  if (why) {
    char buf[OM_SHAPE_STR_LEN];
    om__trace_fail(OM_ERR_TRACE_SYMBOLIC_SHAPE, "%s: shape %s has axis %d of size %lld, the example size of symbolic "
                   "axis '%s'; %s", who, om__shape_str(buf, sizeof buf, t->shape, t->ndim), first,
                   (long long)t->shape[first], l.out_sym[0][first], why);
    om_tensor_release(t);
    return NULL;
  }
  mark(tr, &c);
  int v;
  if (kind == OM_CREATED_ARANGE) {
    v = lower_arange(&l, l.out_sym[0][0], value, step, t->dtype);
  } else { /* full: the value expanded to the shape (what ConstantOfShape writes, without a tensor attribute) */
    int in[2] = {om__lower_scalar(&l, value, t->dtype), om__lower_shape_operand(&l, t->shape, l.out_sym[0], t->ndim)};
    v = in[0] >= 0 && in[1] >= 0 && om__emit(&l, "Expand", in, 2, &c.out_meta[0], 1, &v, NULL, 0) ? v : -1;
  }
  om__lower_output(&l, 0, v);
  if (c.trace_out[0] < 0) {
    if (om__state()->trace == tr) rollback(tr, c.trace_mark);
    om_tensor_release(t);
    return NULL;
  }
  t->trace_id = tr->id;
  t->trace_value = c.trace_out[0];
  return t;
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
const char *om__lower_input_sym(om_lower *l, int i, int d) {
  return l->in ? l->tr->g.values.v[l->in[i]].dim_param[d] : NULL; /* no values yet: a call on constants */
}
const char *om__lower_output_sym(om_lower *l, int j, int d) { return l->out_sym[j][d]; }
const char *om__lower_input_iota(om_lower *l, int i) { return l->tr->g.values.v[l->in[i]].iota; }
void om__lower_set_output_sym(om_lower *l, int j, int d, const char *sym) { l->out_sym[j][d] = sym; }

static bool same_attr(const om_gattr *a, const om_gattr *b) {
  if (strcmp(a->name, b->name) || a->type != b->type) return false;
  switch (a->type) {
    case OM_GATTR_INT: return a->i == b->i;
    case OM_GATTR_FLOAT: return a->f == b->f;
    case OM_GATTR_INTS: return a->n == b->n && (!a->n || !memcmp(a->ints, b->ints, sizeof(int64_t) * (size_t)a->n));
    case OM_GATTR_FLOATS: return a->n == b->n && (!a->n || !memcmp(a->floats, b->floats, sizeof(float) * (size_t)a->n));
    case OM_GATTR_STRING: return !strcmp(a->s, b->s);
  }
  return false;
}

/* A node that computes from shapes and constants only (a Shape node, or one reading only
 * initializers and such values, at least one of them): the same node already in the graph, or
 * -1. So a graph computes every extent, Range and causal mask once, however many layers use
 * it; a graph without symbolic axes has no such node. */
static int shared_node(const om_graph *g, const char *op_type, const int *in, int n_in, const om_meta *meta, int n_out,
                       const om_gattr *attrs, int n_attrs) {
  bool shape = !strcmp(op_type, "Shape"), all = n_in > 0;
  for (int i = 0; i < n_in; i++)
    if (in[i] >= 0) {
      shape |= g->values.v[in[i]].shape_only;
      all &= g->values.v[in[i]].shape_only || g->values.v[in[i]].init >= 0;
    }
  if (!shape || (!all && strcmp(op_type, "Shape"))) return -2; /* not shape-only */
  for (int k = g->nodes.n - 1; k >= 0; k--) {
    const om_gnode *n = &g->nodes.v[k];
    bool same = !strcmp(n->op_type, op_type) && n->n_in == n_in && n->n_out == n_out && n->n_attrs == n_attrs &&
                !memcmp(n->in, in, sizeof(int) * (size_t)n_in);
    for (int a = 0; same && a < n_attrs; a++) same = same_attr(&n->attrs[a], &attrs[a]);
    for (int j = 0; same && j < n_out; j++) {
      const om_gvalue *v = &g->values.v[n->out[j]];
      same = v->dtype == meta[j].dtype && v->ndim == meta[j].ndim &&
             !memcmp(v->shape, meta[j].shape, sizeof(int64_t) * (size_t)v->ndim);
    }
    if (same) return k;
  }
  return -1;
}

bool om__emit(om_lower *l, const char *op_type, const int *in, int n_in, const om_meta *meta, int n_out, int *out,
              const om_gattr *attrs, int n_attrs) {
  if (!alive(l)) return false;
  om_graph *g = &l->tr->g;
  int shared = shared_node(g, op_type, in, n_in, meta, n_out, attrs, n_attrs);
  if (shared >= 0) {
    for (int j = 0; out && j < n_out; j++) out[j] = g->nodes.v[shared].out[j];
    return true;
  }
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
    g->values.v[ins[n_in + j]].shape_only = shared == -1;
    if (out) out[j] = ins[n_in + j];
  }
  return true;
}

/* A generated initializer of dtype holding data (count elements: 1-D, or 0-d when ndim is 0),
 * deduplicated by value: shape operands repeat (every Reshape to [-1, 64]), one initializer each. */
static int generated(om_lower *l, const void *data, int64_t count, int ndim, om_dtype dtype) {
  if (!alive(l)) return -1;
  om_tensor probe = {.storage = &(om_storage){.data = (void *)data}, .dtype = dtype, .ndim = ndim, .shape = {count}};
  int found = find_init(l->tr, &probe, true);
  if (found >= 0) return found;
  om_tensor *t = om_from_data(data, (int64_t[]){count}, ndim, dtype);
  return t ? add_init(l->tr, t, l->c->op, true) : -1;
}

int om__lower_ints(om_lower *l, const int64_t *v, int n) { return generated(l, v, n < 0 ? 1 : n, n < 0 ? 0 : 1, OM_INT64); }

int om__lower_scalar(om_lower *l, double v, om_dtype dtype) {
  union { float f; int64_t i; uint8_t b; } x;
  if (dtype == OM_FLOAT32) x.f = (float)v;
  else if (dtype == OM_INT64) x.i = (int64_t)v;
  else x.b = v != 0;
  return generated(l, &x, 1, 0, dtype);
}

int om__lower_symbol_extent(om_lower *l, const char *sym) {
  if (!alive(l)) return -1;
  om_graph *g = &l->tr->g;
  om_symbol *s = NULL;
  for (int k = 0; k < l->tr->symbols.n && !s; k++)
    if (l->tr->symbols.v[k].name == sym) s = &l->tr->symbols.v[k];
  int src = s && s->derived ? s->carrier : -1, axis = s && s->derived ? s->carrier_axis : -1;
  for (int k = 0; s && !s->derived && k < g->inputs.n && src < 0; k++)
    for (int d = 0; d < g->values.v[g->inputs.v[k]].ndim && src < 0; d++)
      if (g->values.v[g->inputs.v[k]].dim_param[d] == sym) src = g->inputs.v[k], axis = d;
  if (src < 0) {
    om__trace_fail(OM_ERR_TRACE_UNSUPPORTED_OPERATION,
                   "%s: symbol '%s' has no graph input or value that carries it (a bug in onemodel)", l->who,
                   sym ? sym : "?");
    return -1;
  }
  const om_gnode *n = s->extent_node >= 0 && s->extent_node < g->nodes.n ? &g->nodes.v[s->extent_node] : NULL;
  if (n && !strcmp(n->op_type, "Shape") && n->in[0] == src && n->out[0] == s->extent_value && n->n_attrs == 2 &&
      n->attrs[0].i == axis && n->attrs[1].i == axis + 1)
    return s->extent_value;
  om_meta m = {.dtype = OM_INT64, .ndim = 1, .shape = {1}};
  int out;
  om_gattr at[2] = {OM_ATTR_INT("start", axis), OM_ATTR_INT("end", axis + 1)};
  if (!om__emit(l, "Shape", &src, 1, &m, 1, &out, at, 2)) return -1;
  s->extent_node = g->nodes.n - 1;
  s->extent_value = out;
  return out;
}

int om__lower_extent_value(om_lower *l, om_extent e) {
  int v = -1;
  om_meta m = {.dtype = OM_INT64, .ndim = 1, .shape = {1}};
  for (int k = 0; k < l->tr->symbols.n; k++) {
    if (!(e.atoms >> k & 1)) continue;
    int s = om__lower_symbol_extent(l, l->tr->symbols.v[k].name), in[2] = {v, s};
    if (s < 0 || (v >= 0 && !om__emit(l, "Mul", in, 2, &m, 1, &s, NULL, 0))) return -1;
    v = s;
  }
  if (e.coef != 1) {
    int in[2] = {v, om__lower_ints(l, &e.coef, 1)};
    if (v < 0 || in[1] < 0 || !om__emit(l, "Mul", in, 2, &m, 1, &v, NULL, 0)) return -1;
  }
  return v;
}

int om__lower_extent_affine(om_lower *l, om_extent e, int64_t mul, int64_t add) {
  e.coef *= mul;
  int v = om__lower_extent_value(l, e), in[2] = {v, add ? om__lower_ints(l, &add, 1) : -1};
  om_meta m = {.dtype = OM_INT64, .ndim = 1, .shape = {1}};
  if (v < 0 || (add && (in[1] < 0 || !om__emit(l, "Add", in, 2, &m, 1, &v, NULL, 0)))) return -1;
  return v;
}

int om__lower_shape_operand(om_lower *l, const int64_t *shape, const char *const *compute, int ndim) {
  int parts[2 * OM_MAX_DIMS], n_parts = 0, start = 0;
  for (int d = 0; d < ndim; d++) {
    if (!compute[d]) continue;
    if (d > start && (parts[n_parts++] = om__lower_ints(l, shape + start, d - start)) < 0) return -1;
    if ((parts[n_parts++] = om__lower_extent_value(l, extent_of(l->tr, compute[d]))) < 0) return -1;
    start = d + 1;
  }
  if (!n_parts) return om__lower_ints(l, shape, ndim);
  if (ndim > start && (parts[n_parts++] = om__lower_ints(l, shape + start, ndim - start)) < 0) return -1;
  if (n_parts == 1) return parts[0];
  om_meta m = {.dtype = OM_INT64, .ndim = 1, .shape = {ndim}};
  int out;
  return om__emit(l, "Concat", parts, n_parts, &m, 1, &out, &OM_ATTR_INT("axis", 0), 1) ? out : -1;
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
                   l->who, j);
    return;
  }
  if (val->producer >= 0 && v >= l->c->trace_mark[0]) { /* a value this call made: give it the probed symbols */
    memcpy(val->dim_param, l->out_sym[j], sizeof val->dim_param);
    for (int k = 0; k < l->tr->symbols.n; k++) { /* the atoms this call derived: this value carries them */
      om_symbol *s = &l->tr->symbols.v[k];
      if (s->derived && s->carrier < 0 && s->carrier_axis < m->ndim && val->dim_param[s->carrier_axis] == s->name)
        s->carrier = v;
    }
  }
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
