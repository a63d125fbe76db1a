/* Rewrites over a finished trace's graph that write fewer nodes for the same values.
 *
 * Identical nodes written once: common-subexpression elimination.
 * Two nodes of the same op type reading the same values with the same attributes compute the
 * same outputs (every op the tracer writes is a function of its inputs and attributes: the
 * random ones, dropout in training, are refused), so the later one's readers read the earlier
 * one's outputs and the later one is dropped. Run after equal constants were merged, this is
 * what makes twelve layers' causal-mask slices (each of its own mask buffer, equal by content)
 * and repeated size computations one subgraph.
 *
 * A Where between constants by a slice of a constant made a slice of a constant.
 *
 * A matmul of flattened rows unflattened: view(-1, k), matmul by a [k, m] matrix (plus a bias),
 * view back to the leading sizes the rows came from (transformers' Conv1D) is MatMul on the
 * original rank, which applies the matrix to every row alike: no size computed at run time. */
#include <stdlib.h>

#include "trace/trace.h"

bool om__same_attr(const om_gattr *a, const om_gattr *b) {
  if (strcmp(a->name, b->name) || a->type != b->type) return false;
  switch (a->type) {
    case OM_GATTR_INT: return a->i == b->i;
    case OM_GATTR_FLOAT: return a->f == b->f;
    case OM_GATTR_INTS: return a->n == b->n && (!a->n || !memcmp(a->ints, b->ints, sizeof(int64_t) * (size_t)a->n));
    case OM_GATTR_FLOATS: return a->n == b->n && (!a->n || !memcmp(a->floats, b->floats, sizeof(float) * (size_t)a->n));
    case OM_GATTR_STRING: return !strcmp(a->s, b->s);
    case OM_GATTR_TENSOR: /* the tracer writes none of these */
    case OM_GATTR_OTHER:
    case OM_GATTR_STRINGS:
    case OM_GATTR_GRAPH: return false;
  }
  return false;
}

static uint64_t mix(uint64_t h, uint64_t v) { return (h ^ v) * 0x100000001b3u; }

/* A hash of what makes two nodes the same: op type, inputs, output count, attribute names and
 * their int values (it only groups candidates; same_node decides). */
static uint64_t node_hash(const om_gnode *n) {
  uint64_t h = 0xcbf29ce484222325u;
  for (const char *s = n->op_type; *s; s++) h = mix(h, (unsigned char)*s);
  h = mix(h, (uint64_t)n->n_in << 32 | (uint32_t)n->n_out);
  for (int i = 0; i < n->n_in; i++) h = mix(h, (uint64_t)(int64_t)n->in[i]);
  for (int a = 0; a < n->n_attrs; a++) {
    for (const char *s = n->attrs[a].name; *s; s++) h = mix(h, (unsigned char)*s);
    if (n->attrs[a].type == OM_GATTR_INT) h = mix(h, (uint64_t)n->attrs[a].i);
  }
  return h;
}

/* True when nodes a and b (inputs already the values they read) compute the same outputs. */
static bool same_node(const om_graph *g, const om_gnode *a, const om_gnode *b) {
  if (strcmp(a->op_type, b->op_type) || a->n_in != b->n_in || a->n_out != b->n_out || a->n_attrs != b->n_attrs ||
      (a->n_in && memcmp(a->in, b->in, sizeof(int) * (size_t)a->n_in)))
    return false;
  for (int k = 0; k < a->n_attrs; k++)
    if (!om__same_attr(&a->attrs[k], &b->attrs[k])) return false;
  for (int j = 0; j < a->n_out; j++) { /* the same type: a lowering's meta agrees with the op's */
    const om_gvalue *x = &g->values.v[a->out[j]], *y = &g->values.v[b->out[j]];
    if (x->dtype != y->dtype || x->ndim != y->ndim || memcmp(x->shape, y->shape, sizeof(int64_t) * (size_t)x->ndim)) return false;
  }
  return true;
}

/* One pass in execution order: each live node's inputs are first replaced by the values they
 * were merged into (to[]), so by the time a node is compared every node before it is in its
 * final form, and one pass reaches the fixpoint (a chain of identical nodes merges link by link).
 * A node writing a graph output is kept (each output needs a node of its own); it can be the
 * one others merge into. The nodes merged away stay in g, unread and marked dead. */
bool om__merge_nodes(om_graph *g) {
  size_t cap = 64;
  while (cap < 2 * (size_t)g->nodes.n) cap *= 2;
  int *slot = om__alloc(cap * sizeof(int), "trace_finish"); /* node index + 1, 0 empty */
  int *to = om__alloc(sizeof(int) * (size_t)(g->values.n ? g->values.n : 1), "trace_finish");
  bool *is_output = om__alloc(sizeof(bool) * (size_t)(g->values.n ? g->values.n : 1), "trace_finish");
  bool ok = slot && to && is_output;
  if (ok) {
    memset(slot, 0, cap * sizeof(int));
    memset(is_output, 0, sizeof(bool) * (size_t)g->values.n);
    for (int k = 0; k < g->values.n; k++) to[k] = k;
    for (int k = 0; k < g->outputs.n; k++) is_output[g->outputs.v[k]] = true;
  }
  for (int n = 0; ok && n < g->nodes.n; n++) {
    om_gnode *node = &g->nodes.v[n];
    if (!g->values.v[node->out[0]].live) continue;
    for (int i = 0; i < node->n_in; i++)
      if (node->in[i] >= 0) node->in[i] = to[node->in[i]];
    bool keep = false;
    for (int j = 0; j < node->n_out; j++) keep |= is_output[node->out[j]];
    size_t i = node_hash(node) & (cap - 1);
    while (slot[i] && !same_node(g, &g->nodes.v[slot[i] - 1], node)) i = (i + 1) & (cap - 1);
    if (!slot[i]) {
      slot[i] = n + 1;
      continue;
    }
    if (keep) continue;
    const om_gnode *first = &g->nodes.v[slot[i] - 1];
    for (int j = 0; j < node->n_out; j++) {
      to[node->out[j]] = first->out[j];
      g->values.v[node->out[j]].live = false; /* no longer a reader of its inputs */
    }
  }
  free(slot);
  free(to);
  free(is_output);
  return ok;
}

/* How many live nodes read each value (a graph output counts as one reader); NULL with OutOfMemory. */
static int *count_readers(const om_graph *g) {
  int *readers = om__alloc(sizeof(int) * (size_t)(g->values.n ? g->values.n : 1), "trace_finish");
  if (!readers) return NULL;
  memset(readers, 0, sizeof(int) * (size_t)g->values.n);
  for (int n = 0; n < g->nodes.n; n++)
    for (int i = 0; g->values.v[g->nodes.v[n].out[0]].live && i < g->nodes.v[n].n_in; i++)
      if (g->nodes.v[n].in[i] >= 0) readers[g->nodes.v[n].in[i]]++;
  for (int k = 0; k < g->outputs.n; k++) readers[g->outputs.v[k]]++;
  return readers;
}

/* The producer of value v when it is a live op_type node and v is read by nothing but one node, else -1. */
static int single_use(const om_graph *g, const int *readers, int v, const char *op_type) {
  int p = g->values.v[v].producer;
  return p >= 0 && g->values.v[v].live && !strcmp(g->nodes.v[p].op_type, op_type) && readers[v] == 1 ? p : -1;
}

/* Nodes after node n read value to where they read value from. */
static void redirect(om_graph *g, int n, int from, int to) {
  for (int r = n + 1; r < g->nodes.n; r++)
    for (int i = 0; i < g->nodes.v[r].n_in; i++)
      if (g->nodes.v[r].in[i] == from) g->nodes.v[r].in[i] = to;
}

/* Adds t (an owned reference, released on failure) as a generated initializer; its value id or -1. */
static int add_constant(om_graph *g, om_tensor *t) {
  int v = om__graph_value(g, t->dtype, t->ndim, t->shape);
  om_ginit *init = v >= 0 ? OM_VEC_PUSH_SLOT(g->inits) : NULL;
  if (!init) return om_tensor_release(t), -1;
  *init = (om_ginit){.value = v, .tensor = t, .version = t->storage->version, .first_use = OM_OP_where, .generated = true};
  g->values.v[v].init = g->inits.n - 1;
  g->values.v[v].live = true;
  return v;
}

bool om__fold_where(om_graph *g) {
  int *readers = count_readers(g);
  if (!readers) return false;
  bool ok = true;
  for (int n = 0; ok && n < g->nodes.n; n++) {
    const om_gnode *w = &g->nodes.v[n];
    if (strcmp(w->op_type, "Where") || !g->values.v[w->out[0]].live) continue;
    const om_gvalue *a = &g->values.v[w->in[1]], *b = &g->values.v[w->in[2]];
    if (a->init < 0 || b->init < 0 || a->ndim || b->ndim) continue;
    int chain[OM_MAX_DIMS], depth = 0, mask = w->in[0], top = w->out[0]; /* the Slices from the Where down */
    for (int p; depth < OM_MAX_DIMS && (p = single_use(g, readers, mask, "Slice")) >= 0; mask = g->nodes.v[p].in[0]) chain[depth++] = p;
    if (g->values.v[mask].init < 0) continue;
    bool is_output = false;
    for (int k = 0; k < g->outputs.n; k++) is_output |= g->outputs.v[k] == top;
    if (is_output) continue;
    om_thread_state *st = om__state();
    om_trace *tr = st->trace; /* computed here, neither traced nor recorded for autograd */
    st->trace = NULL;
    bool grad = om_set_grad_enabled(false);
    om_tensor *t = om_where(g->inits.v[g->values.v[mask].init].tensor, g->inits.v[a->init].tensor, g->inits.v[b->init].tensor);
    om_set_grad_enabled(grad);
    st->trace = tr;
    int c = t ? add_constant(g, t) : -1;
    if (!(ok = c >= 0)) break;
    w = &g->nodes.v[n]; /* the arrays may have moved */
    int out = w->out[0], to = depth ? g->nodes.v[chain[0]].out[0] : c;
    if (depth) {
      g->nodes.v[chain[depth - 1]].in[0] = c;
      readers[to] += readers[out] - 1; /* the Where's readers read the chain now (a bool Where of it may fold next) */
    }
    for (int d = 0; d < depth; d++) g->values.v[g->nodes.v[chain[d]].out[0]].dtype = g->values.v[c].dtype;
    redirect(g, n, out, to);
    g->values.v[out].live = false;
  }
  free(readers);
  return ok;
}

/* The rows' value when node r2 is Reshape(A) with A = MatMul(F, W) (+ a bias of rank 0 or 1),
 * F = Reshape(X) to [N, k], k X's last axis, W [k, m], and r2 giving X's leading axes (the same
 * extents: equal at every size) and m: row j of F is row j of X flattened, so MatMul(X, W) holds
 * the same values in r2's shape. F and A read by nothing else. The matmul node in *mm, else -1. */
static int flattened_rows(const om_graph *g, const int *readers, const om_gnode *r2, int *mm) {
  const om_gvalue *v = g->values.v, *y = &v[r2->out[0]];
  int a = r2->in[0], add = single_use(g, readers, a, "Add");
  *mm = add < 0 ? single_use(g, readers, a, "MatMul") : -1;
  for (int k = 0; add >= 0 && k < 2 && *mm < 0; k++)
    if ((*mm = single_use(g, readers, g->nodes.v[add].in[k], "MatMul")) >= 0 && v[g->nodes.v[add].in[1 - k]].ndim > 1) *mm = -1;
  if (*mm < 0 || readers[r2->out[0]] < 1) return -1;
  const om_gnode *m = &g->nodes.v[*mm];
  int r1 = single_use(g, readers, m->in[0], "Reshape");
  if (r1 < 0 || v[m->in[1]].ndim != 2) return -1;
  int x = g->nodes.v[r1].in[0], last = y->ndim - 1;
  const om_gvalue *f = &v[m->in[0]], *xv = &v[x], *mv = &v[m->out[0]];
  if (f->ndim != 2 || f->ext[1] >= 0 || xv->ndim != y->ndim || xv->ndim < 2 || xv->ext[last] >= 0 ||
      xv->shape[last] != f->shape[1] || y->ext[last] >= 0 || y->shape[last] != mv->shape[1])
    return -1;
  for (int d = 0; d < last; d++)
    if (xv->ext[d] != y->ext[d] || xv->shape[d] != y->shape[d]) return -1;
  return x;
}

/* Value dst takes src's type and extents. */
static void retype(om_gvalue *dst, const om_gvalue *src) {
  dst->ndim = src->ndim;
  memcpy(dst->shape, src->shape, sizeof dst->shape);
  memcpy(dst->ext, src->ext, sizeof dst->ext);
  memcpy(dst->dim_param, src->dim_param, sizeof dst->dim_param);
}

bool om__unflatten_matmuls(om_graph *g) {
  int *readers = count_readers(g);
  if (!readers) return false;
  for (int n = 0; n < g->nodes.n; n++) {
    const om_gnode *r2 = &g->nodes.v[n];
    int mm, y = r2->out[0], x;
    if (strcmp(r2->op_type, "Reshape") || !g->values.v[y].live || (x = flattened_rows(g, readers, r2, &mm)) < 0) continue;
    om_gnode *m = &g->nodes.v[mm];
    int a = r2->in[0], flat = m->in[0];
    m->in[0] = x;
    retype(&g->values.v[m->out[0]], &g->values.v[y]);
    retype(&g->values.v[a], &g->values.v[y]); /* the Add's output, when there is one */
    redirect(g, n, y, a);
    for (int k = 0; k < g->outputs.n; k++) /* an output: its name moves to the rows' product */
      if (g->outputs.v[k] == y) g->outputs.v[k] = a, g->values.v[a].name = g->values.v[y].name;
    readers[a] = readers[y];
    g->values.v[y].live = g->values.v[flat].live = false;
  }
  free(readers);
  return true;
}
