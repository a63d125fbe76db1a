/* Size thresholds written as an ONNX If (docs/symbolic-axes.md, "Thresholds become branches").
 * When the range check (runs.c, check_range) finds one symbol's size where the model starts to
 * do another thing (another op, other arguments, more or fewer calls), the trace is not refused:
 * the symbol's range is cut there into two pieces, each traced again from the start as a trace
 * of its own (its range declared as that piece, its example inside it: the inputs repeated or
 * cut along the symbol's axes), and the graph is an If on the size: Shape, Less than the first
 * size of the upper piece, then the lower piece's graph, else the upper's. A piece that finds a
 * threshold of the same symbol is cut again, up to OM_BRANCH_PIECES pieces; anything else a
 * piece refuses (a threshold of another symbol, a product) refuses the trace. Each piece passes
 * every check a trace passes alone, so nothing is accepted that a trace of that range would not.
 * The branches read the graph's inputs and the initializers (hoisted to the graph, stored once
 * where both use one) as ONNX outer-scope values. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace/trace.h"

/* A piece of one symbol may be cut on another (a threshold on min(H, W): the piece of H from the
 * threshold up is cut on W there, an If inside the If's else branch); every piece is a trace of
 * its own and passes every check one does, and the pieces left (tr->pieces, one fewer at each
 * level) bound how deep the cuts nest. */
bool om__branch_split(om_trace *tr, uint64_t mask, const int64_t *good, const int64_t *bad, bool up) {
  if (__builtin_popcountll(mask) != 1 || tr->pieces < 2) return false;
  int k = __builtin_ctzll(mask);
  tr->split_sym = k;
  tr->split_at = up ? bad[k] : good[k]; /* the first variable of the upper piece */
  return true;
}

/* The cut is on the one narrowed symbol that every run where the model answered had below its
 * example (tr->answers_syms): columns 5 to W + 3 of a reflect pad, an end that clamps below the
 * example W = 9, is W's. Another symbol narrowed where the model fails (the pad needs H >= 2)
 * narrows again in the pieces, which are traced alone and pass every check a trace passes: a
 * cut on the wrong symbol is refused there. So does the cut symbol's own maximum where the model
 * fails above the example (BigBird traced above its length threshold: the position table ends
 * at 128, and the switch to full attention below the threshold raised the minimum): the upper
 * piece, declared to the maximum the user declared, finds that end again. */
bool om__branch_below(om_trace *tr, const om_symbol *declared) {
  int k = -1, first = -1; /* first: the first symbol whose minimum rose where some run answered below it */
  for (int j = 0; j < tr->symbols.n; j++) {
    const om_symbol *s = &tr->symbols.v[j];
    if (first < 0 && s->min > declared[j].min && tr->answers_any >> j & 1) first = j;
    if ((s->min == declared[j].min && s->max == declared[j].max) || !(tr->answers_syms >> j & 1)) continue;
    if (k >= 0 || s->min == declared[j].min) return false; /* two, or a maximum alone */
    k = j;
  }
  /* No symbol below its example in every such run: the model answers below one symbol's minimum
   * with the others at their examples, and below another's with the first at its example (a
   * threshold on min(H, W), as Swin's window size). Cut on the first: the piece above it, traced
   * alone, narrows the second again and is cut on it in turn (om__branch_split). */
  if (k < 0 && !tr->answers_syms) k = first;
  if (k < 0) return false;
  tr->split_first = k == first && !tr->answers_syms;
  int64_t good[64] = {0}, bad[64] = {0};
  good[k] = tr->symbols.v[k].vmin;
  bad[k] = good[k] - 1;
  return om__branch_split(tr, (uint64_t)1 << k, good, bad, false);
}

/* ---- one piece ---- */

/* Input i's example for a piece where symbol k is `size`: the original x0, its k axes (syms[d]
 * == k) cut or repeated (element j of such an axis is the original's j mod its size), so its
 * values keep their domain (token ids stay ids). A new reference; NULL on error. */
static om_tensor *piece_example(const om_tensor *x0, const int *syms, int k, int64_t size) {
  om_tensor *x = om__alias(x0);
  if (!x) return NULL;
  x->trace_id = 0;
  x->trace_value = -1;
  for (int d = 0; x && d < x->ndim; d++) {
    if (syms[d] != k || x->shape[d] == size) continue;
    int64_t *idx = om__alloc(sizeof(int64_t) * (size_t)size, "trace_run");
    for (int64_t j = 0; idx && j < size; j++) idx[j] = j % x->shape[d];
    om_tensor *it = idx ? om_from_data(idx, &size, 1, OM_INT64) : NULL;
    free(idx);
    om_tensor *y = it ? om_index_select(x, d, it) : NULL;
    om_tensor_release(it);
    om_tensor_release(x);
    x = y;
  }
  return x;
}

/* What a piece is traced with: symbol k's variables lo..hi (fixed: a piece of one size other
 * than the example's, traced with k's axes fixed at it), its example's variable v. */
typedef struct piece {
  int64_t lo, hi, v;
  bool fixed;
} piece;

/* What every piece shares: the trace cut, its symbols as declared, the model, the symbol of each
 * input axis (-1 fixed). */
typedef struct cut {
  om_trace *tr;
  const om_symbol *declared;
  int k;
  om_trace_fn fn;
  void *ctx;
  int max_outputs;
  int (*syms)[OM_MAX_DIMS];
} cut;

static bool declared_whys(const cut *c, om_traced_model *m); /* below */

/* Traces the model over piece p as a trace of its own, begun here (the thread has none then),
 * into *m, with its outputs (*n, new references) in outputs. pieces: the most pieces it may be
 * cut into. false when it failed: the piece's error is set and no trace is on the thread. */
static bool trace_piece(const cut *c, const piece *p, int pieces, om_tensor **outputs, int *n, om_traced_model **m) {
  om_trace *tr = c->tr;
  *m = NULL;
  *n = -1;
  if (!om_trace_begin()) return false;
  om_trace *sub = om__state()->trace;
  sub->pieces = pieces;
  bool ok = true;
  for (int j = 0; ok && j < tr->symbols.n; j++) { /* every symbol as declared, k as the piece */
    const om_symbol *s = &c->declared[j];
    int64_t lo = j == c->k ? p->lo * s->multiple : s->min;
    int64_t hi = j != c->k ? s->max : p->hi >= INT64_MAX / s->multiple ? INT64_MAX : p->hi * s->multiple;
    if (j != c->k || !p->fixed) ok = om_trace_dim(s->name, s->multiple, lo, hi == INT64_MAX ? 0 : hi);
  }
  for (int i = 0; ok && i < tr->inputs.n; i++) {
    const om_gvalue *v = &tr->g.values.v[tr->g.inputs.v[i]];
    const char *axes[OM_MAX_DIMS] = {0};
    for (int d = 0; d < v->ndim; d++)
      if (c->syms[i][d] >= 0 && !(c->syms[i][d] == c->k && p->fixed)) axes[d] = tr->symbols.v[c->syms[i][d]].name;
    om_tensor *x = piece_example(tr->inputs.v[i].traced, c->syms[i], c->k, p->v * tr->symbols.v[c->k].multiple);
    om_tensor *t = x ? om_trace_input(tr->inputs.v[i].name, x, axes) : NULL; /* the trace keeps its own references */
    ok = t != NULL;
    om_tensor_release(t);
    om_tensor_release(x);
  }
  for (int q = 0; ok && q < tr->params.n; q++) ok = om_trace_parameter(tr->params.v[q].name, tr->params.v[q].view);
  if (ok) *n = om__trace_run(c->fn, c->ctx, outputs, c->max_outputs, tr->runner);
  if (*n < 0 && om__state()->trace == sub && sub->split_parted) tr->split_parted = true; /* a cut inside the piece parted */
  if (*n >= 0) {
    const char **names = om__alloc(sizeof *names * (size_t)(*n ? *n : 1), "trace_run");
    for (int j = 0; names && j < *n; j++)
      if (!(names[j] = om__arena_printf(&sub->g.arena, "out%d", j))) names[j] = "out";
    *m = names ? om_trace_finish(outputs, names, *n) : NULL;
    free(names);
    if (*m && !declared_whys(c, *m)) om_traced_release(*m), *m = NULL;
    if (!*m) om__release_all(outputs, *n), *n = -1;
  }
  if (om_trace_active()) om_trace_abort(); /* the error stays */
  return *m != NULL;
}

/* ---- the graph ---- */

/* A value of g named name (copied); -1 with OutOfMemory. */
static int named_value(om_graph *g, const char *name, om_dtype dtype, int ndim, const int64_t *shape) {
  int v = om__graph_value(g, dtype, ndim, shape);
  if (v >= 0 && !(g->values.v[v].name = om__arena_strdup(&g->arena, name))) return -1;
  return v;
}

/* An initializer of g named name holding t (a new header on its storage, registered for a copy
 * on write when snap); its value, -1 on error. */
static int add_init(om_graph *g, const char *name, om_tensor *t, bool snap, bool generated) {
  int v = named_value(g, name, t->dtype, t->ndim, t->shape);
  om_ginit *init = v >= 0 ? OM_VEC_PUSH_SLOT(g->inits) : NULL;
  if (!init) return -1;
  *init = (om_ginit){.value = v, .tensor = om__alias(t), .first_use = (om_op)-1, .generated = generated};
  if (!init->tensor || (snap && !(init->snap = om__snapshot_take(init->tensor, "trace_run")))) {
    om_tensor_release(init->tensor);
    g->inits.n--;
    return -1;
  }
  g->values.v[v].init = g->inits.n - 1;
  return v;
}

/* Whether dense tensors a and b hold the same dtype, shape and bytes. */
static bool same_tensor(const om_tensor *a, const om_tensor *b) {
  if (a->dtype != b->dtype || a->ndim != b->ndim || memcmp(a->shape, b->shape, sizeof(int64_t) * (size_t)a->ndim)) return false;
  return !memcmp(om__data(a), om__data(b), (size_t)om_tensor_numel(a) * om__dtype_size(a->dtype));
}

/* The value of g that piece initializer init (named name) becomes: an initializer of g of that
 * name and the same contents (a weight both pieces read), else a new one (renamed where the name
 * holds other contents). -1 on error. */
static int hoist(om_graph *g, const char *base, const om_ginit *init) {
  const char *name = base;
  for (int tries = 1;; tries++) {
    int same = -1;
    for (int q = 0; q < g->inits.n && same < 0; q++)
      if (!strcmp(g->values.v[g->inits.v[q].value].name, name)) same = q;
    if (same < 0) {
      int v = add_init(g, name, init->tensor, init->snap != NULL, init->generated);
      return v >= 0 && om__ginit_aliases(g, &g->inits.v[g->values.v[v].init], init) ? v : -1;
    }
    if (same_tensor(g->inits.v[same].tensor, init->tensor)) return g->inits.v[same].value;
    if (!(name = om__arena_printf(&g->arena, "%s_%d", base, tries))) return -1;
  }
}

/* Names subgraph s's values and nodes for the model: a captured value as the value of parent it
 * reads, every other one and every node with prefix before its name; the same in the graphs
 * of its nodes, whose parent s is. false with OutOfMemory. */
static bool prefix_names(om_graph *s, const om_graph *parent, const char *prefix) {
  for (int v = 0; v < s->values.n; v++) {
    om_gvalue *val = &s->values.v[v];
    const char *name = val->outer >= 0 ? parent->values.v[val->outer].name : om__arena_printf(&s->arena, "%s%s", prefix, val->name);
    if (!name || !(val->name = om__arena_strdup(&s->arena, name))) return false;
  }
  for (int k = 0; k < s->nodes.n; k++) {
    om_gnode *n = &s->nodes.v[k];
    if (!(n->name = om__arena_printf(&s->arena, "%s%s", prefix, n->name))) return false;
    for (int a = 0; a < n->n_attrs; a++)
      if (n->attrs[a].type == OM_GATTR_GRAPH && !prefix_names(n->attrs[a].g, s, prefix)) return false;
  }
  return true;
}

/* Piece model p as a branch of g (new, owned by the caller): its nodes and outputs, its inputs
 * and initializers read from g (inputs by place, initializers hoisted) as captured values.
 * NULL on error. */
static om_graph *branch_graph(om_graph *g, const om_traced_model *p, const char *prefix) {
  om_graph *s = calloc(1, sizeof *s);
  if (!s) return om__fail(OM_ERR_OUT_OF_MEMORY, "trace_run: out of memory"), NULL;
  bool ok = om__graph_copy(s, &p->g);
  for (int k = 0; ok && k < s->inputs.n; k++) {
    int v = s->inputs.v[k], *slot = OM_VEC_PUSH_SLOT(s->captured);
    if ((ok = slot != NULL)) *slot = v, s->values.v[v].outer = g->inputs.v[k];
  }
  for (int q = 0; ok && q < s->inits.n; q++) {
    om_ginit *init = &s->inits.v[q];
    int v = init->value, outer = hoist(g, s->values.v[v].name, init), *slot = outer >= 0 ? OM_VEC_PUSH_SLOT(s->captured) : NULL;
    if ((ok = slot != NULL)) *slot = v, s->values.v[v].outer = outer, s->values.v[v].init = -1;
  }
  for (int q = 0; q < s->inits.n; q++) {
    om__snapshot_drop(s->inits.v[q].snap);
    om_tensor_release(s->inits.v[q].tensor);
  }
  s->inits.n = s->inputs.n = 0;
  if (ok && prefix_names(s, g, prefix)) return s;
  om__graph_free(s);
  free(s);
  return NULL;
}

/* The symbol of m named name, or NULL. */
static const om_traced_sym *sym_named(const om_traced_model *m, const char *name) {
  for (int k = 0; k < m->n_symbols; k++)
    if (!strcmp(m->symbols[k].name, name)) return &m->symbols[k];
  return NULL;
}

/* A copy of s in arena a (NULL stays NULL); *ok false on OutOfMemory. */
static const char *keep(om_arena *a, const char *s, bool *ok) {
  char *c = s ? om__arena_strdup(a, s) : NULL;
  *ok &= !s || c;
  return c;
}

/* The reasons of the ranges the cut declared piece model m with (c->declared: narrowed where the
 * model fails, its multiple too) for each of m's symbols whose range reaches such an end with no
 * reason of its own: the piece's trace took that range as the user's declaration, and the pieces
 * joined would report (traced.symbols' narrowedBy, the .onnx's metadata) no reason. false with
 * OutOfMemory. */
static bool declared_whys(const cut *c, om_traced_model *m) {
  bool ok = true;
  for (int j = 0; j < m->n_symbols; j++) {
    om_traced_sym *q = &m->symbols[j];
    const om_symbol *s = NULL;
    for (int i = 0; i < c->tr->symbols.n && !s; i++)
      if (!strcmp(c->declared[i].name, q->name)) s = &c->declared[i];
    if (!s) continue;
    if (!q->min_why && (q->min + s->multiple - 1) / s->multiple <= s->vmin) q->min_why = keep(&m->g.arena, s->min_why, &ok);
    if (!q->max_why && q->max / s->multiple >= s->vmax) q->max_why = keep(&m->g.arena, s->max_why, &ok);
  }
  return ok || om__fail(OM_ERR_OUT_OF_MEMORY, "trace_run: out of memory");
}

/* Symbol s of piece model m (traced over piece p): its own, or for a fixed piece (no such
 * symbol) the piece's one size, in *fixed, with the reason of the end of s's range as the cut
 * declared it (d: narrowed where the model fails) that the size sits at, as declared_whys gives a
 * piece with the symbol: a one-size piece at a narrowed minimum is the joined range's lowest, and
 * join_symbols takes its reason from there. */
static const om_traced_sym *piece_sym(const om_symbol *s, const om_symbol *d, const om_traced_model *m, const piece *p,
                                      om_traced_sym *fixed) {
  const om_traced_sym *q = sym_named(m, s->name);
  if (q) return q;
  int64_t size = p->lo * s->multiple;
  *fixed = (om_traced_sym){.name = s->name, .multiple = s->multiple, .min = size, .max = size, .checked_min = size, .checked_max = size,
                           .min_why = p->lo <= d->vmin ? d->min_why : NULL, .max_why = p->lo >= d->vmax ? d->max_why : NULL};
  return fixed;
}

/* Symbol out's branches where a piece of another symbol was cut on it (p: the symbol in the two
 * pieces; a piece with no branches holds its range whole): the sizes either piece holds for, in
 * ranges split at every size where one of the pieces switches, so that the Session admits what
 * the graph holds and the list shows where it changes. None when neither piece was cut on it.
 * false with OutOfMemory. */
static bool other_branches(om_arena *a, const om_traced_sym *const p[2], om_traced_sym *out) {
  if (!p[0]->n_branches && !p[1]->n_branches) return true;
  int n_iv = 0, n_at = 0, most = (p[0]->n_branches ? p[0]->n_branches : 1) + (p[1]->n_branches ? p[1]->n_branches : 1);
  int64_t *iv = om__arena_alloc(a, sizeof(int64_t) * 4 * (size_t)most), *at = iv ? iv + 2 * most : NULL; /* intervals; the sizes where one starts or ends */
  if (!iv) return false;
  for (int q = 0; q < 2; q++) {
    int nb = p[q]->n_branches ? p[q]->n_branches : 1;
    for (int b = 0; b < nb; b++, n_iv++) {
      iv[2 * n_iv] = p[q]->n_branches ? p[q]->branches[2 * b] : p[q]->min;
      iv[2 * n_iv + 1] = p[q]->n_branches ? p[q]->branches[2 * b + 1] : p[q]->max;
      at[n_at++] = iv[2 * n_iv];
      if (iv[2 * n_iv + 1] < INT64_MAX) at[n_at++] = iv[2 * n_iv + 1] + 1;
    }
  }
  for (int x = 1; x < n_at; x++) /* sorted (few: insertion) */
    for (int y = x; y > 0 && at[y - 1] > at[y]; y--) {
      int64_t t = at[y];
      at[y] = at[y - 1], at[y - 1] = t;
    }
  if (!(out->branches = om__arena_alloc(a, sizeof(int64_t) * 2 * (size_t)n_at))) return false;
  out->n_branches = 0;
  for (int x = 0; x < n_at; x++) { /* [at[x], at[x + 1] - 1] (to no bound past the last), where some piece holds it */
    if (x && at[x] == at[x - 1]) continue;
    int y = x + 1;
    while (y < n_at && at[y] == at[x]) y++;
    int64_t lo = at[x], hi = y < n_at ? at[y] - 1 : INT64_MAX;
    bool held = false;
    for (int v = 0; v < n_iv && !held; v++) held = lo >= iv[2 * v] && lo <= iv[2 * v + 1];
    if (!held) continue;
    out->branches[2 * out->n_branches] = lo, out->branches[2 * out->n_branches + 1] = hi, out->n_branches++;
  }
  return true;
}

/* The symbols of model m joined from pieces lo and hi of symbol k (fixed pieces have no symbol
 * k: their size is fk): each symbol's range is the union of the pieces' (where a piece has
 * narrowed one, eager fails there in that piece, so the union promises nothing eager does not
 * give), symbol k's branches the pieces' in order. false with OutOfMemory. */
static bool join_symbols(const cut *c, const om_traced_model *lo, const om_traced_model *hi, const piece *plo, const piece *phi,
                         om_traced_model *m) {
  const om_trace *tr = c->tr;
  int k = c->k;
  om_arena *a = &m->g.arena;
  bool ok = (m->symbols = om__arena_alloc(a, sizeof *m->symbols * (size_t)(tr->symbols.n + 1))) != NULL;
  m->n_symbols = ok ? tr->symbols.n : 0;
  for (int j = 0; ok && j < tr->symbols.n; j++) {
    const om_symbol *s = &tr->symbols.v[j];
    om_traced_sym fixed[2], *out = &m->symbols[j];
    const om_traced_sym *p[2] = {piece_sym(s, &c->declared[j], lo, plo, &fixed[0]), piece_sym(s, &c->declared[j], hi, phi, &fixed[1])};
    bool lower_min = p[0]->min <= p[1]->min, upper_max = p[1]->max >= p[0]->max;
    *out = (om_traced_sym){.name = keep(a, s->name, &ok), .multiple = s->multiple, .min = lower_min ? p[0]->min : p[1]->min,
                           .max = upper_max ? p[1]->max : p[0]->max,
                           .checked_min = p[0]->checked_min < p[1]->checked_min ? p[0]->checked_min : p[1]->checked_min,
                           .checked_max = p[0]->checked_max > p[1]->checked_max ? p[0]->checked_max : p[1]->checked_max};
    out->min_why = keep(a, (lower_min ? p[0] : p[1])->min_why, &ok);
    out->max_why = keep(a, (upper_max ? p[1] : p[0])->max_why, &ok);
    if (j != k) {
      ok = ok && other_branches(a, p, out);
      continue;
    }
    int n = (p[0]->n_branches ? p[0]->n_branches : 1) + (p[1]->n_branches ? p[1]->n_branches : 1);
    if (!(ok = ok && (out->branches = om__arena_alloc(a, sizeof(int64_t) * 2 * (size_t)n)) != NULL)) break;
    for (int q = 0; q < 2; q++) {
      if (!p[q]->n_branches) {
        out->branches[2 * out->n_branches] = p[q]->min, out->branches[2 * out->n_branches + 1] = p[q]->max, out->n_branches++;
        continue;
      }
      memcpy(out->branches + 2 * out->n_branches, p[q]->branches, sizeof(int64_t) * 2 * (size_t)p[q]->n_branches);
      out->n_branches += p[q]->n_branches;
    }
  }
  return ok;
}

/* The declaration that keeps symbol s to piece p (the example's, where the trace holds alone):
 * "om.Dim('seq', { min: 1, max: 20 })", into buf (returned). */
static const char *piece_declaration(const om_symbol *s, const piece *p, char *buf, size_t cap) {
  size_t n = (size_t)snprintf(buf, cap, "om.Dim('%s', { ", s->name);
  if (n < cap && s->multiple > 1) n += (size_t)snprintf(buf + n, cap - n, "multipleOf: %lld, ", (long long)s->multiple);
  if (n < cap) n += (size_t)snprintf(buf + n, cap - n, "min: %lld", (long long)(p->lo * s->multiple));
  if (n < cap && p->hi < INT64_MAX / s->multiple) /* else unbounded */
    n += (size_t)snprintf(buf + n, cap - n, ", max: %lld", (long long)(p->hi * s->multiple));
  if (n < cap) snprintf(buf + n, cap - n, " })");
  return buf;
}

/* The declaration under which the example's piece m (traced over p of symbol s) holds: s's piece
 * and every other symbol whose range in m is not every size from 1 (a minimum the piece's runs
 * raised where the model answers at another rank is one the user must declare too, else a trace
 * declared with s's piece alone is refused again on it), in buf (cap bytes). */
static const char *example_declaration(const om_trace *tr, const om_symbol *s, const om_traced_model *m, const piece *p,
                                       char *buf, size_t cap) {
  char one[100];
  size_t n = (size_t)snprintf(buf, cap, "%s", piece_declaration(s, p, one, sizeof one));
  for (int k = 0; k < tr->symbols.n && n < cap; k++) {
    const om_symbol *o = &tr->symbols.v[k];
    const om_traced_sym *q = o == s ? NULL : sym_named(m, o->name);
    if (!q || (q->min <= 1 && q->max == INT64_MAX && q->multiple == 1)) continue;
    piece r = {.lo = q->min / q->multiple, .hi = q->max == INT64_MAX ? INT64_MAX : q->max / q->multiple};
    n += (size_t)snprintf(buf + n, cap - n, ", %s", piece_declaration(o, &r, one, sizeof one));
  }
  return buf;
}

/* A constant of g: int64 [1] holding x (name: its base name); its value, -1 on error. */
static int int_const(om_graph *g, const char *name, int64_t x) {
  int64_t one = 1;
  om_tensor *t = om_from_data(&x, &one, 1, OM_INT64);
  int v = t ? hoist(g, name, &(om_ginit){.tensor = t, .generated = true}) : -1;
  om_tensor_release(t);
  return v;
}

/* A bool [1] value of g: whether size (int64 [1]) is in [lo, hi] (hi INT64_MAX: no bound); name
 * prefixes its nodes. -1 on error. */
static int size_within(om_graph *g, const char *name, int size, int64_t lo, int64_t hi) {
  int64_t one = 1;
  bool is = lo == hi;
  int c_lo = int_const(g, "If/admit/lo", lo), c_hi = is || hi == INT64_MAX ? -1 : int_const(g, "If/admit/hi", hi);
  if (c_lo < 0 || (!is && hi != INT64_MAX && c_hi < 0)) return -1;
  const char *n1 = om__arena_printf(&g->arena, "%s/from", name), *n2 = om__arena_printf(&g->arena, "%s/to", name);
  int a = n1 ? named_value(g, n1, OM_BOOL, 1, &one) : -1;
  if (a < 0 || om__graph_add_node(g, is ? "Equal" : "GreaterOrEqual", n1, (int[]){size, c_lo}, 2, &a, 1, NULL, 0) < 0) return -1;
  if (c_hi < 0) return a;
  int b = n2 ? named_value(g, n2, OM_BOOL, 1, &one) : -1, both = b >= 0 ? named_value(g, name, OM_BOOL, 1, &one) : -1;
  if (both < 0 || om__graph_add_node(g, "LessOrEqual", n2, (int[]){size, c_hi}, 2, &b, 1, NULL, 0) < 0 ||
      om__graph_add_node(g, "And", name, (int[]){a, b}, 2, &both, 1, NULL, 0) < 0)
    return -1;
  return both;
}

/* The If's condition where the pieces leave sizes out between them (lo holds for sizes
 * [iv[0], iv[1]], hi for [iv[2], iv[3]]; a size 1 and n: cut_at_one in runs.c): less (the size
 * below the threshold, bool [1]) when size is in either, else a Gather past its table's end, so
 * that an engine that runs the file fails there as the model does (ONNX has no assertion; every
 * engine checks a Gather's indices) instead of running a piece traced for other sizes. -1 on
 * error. */
static int admitted(om_graph *g, int size, int less, const int64_t *iv) {
  int64_t one = 1, two = 2;
  int in_lo = size_within(g, "If/admit/in_lo", size, iv[0], iv[1]), in_hi = in_lo >= 0 ? size_within(g, "If/admit/in_hi", size, iv[2], iv[3]) : -1;
  int either = in_hi >= 0 ? named_value(g, "If/admit/either", OM_BOOL, 1, &one) : -1;
  int as_int = either >= 0 ? named_value(g, "If/admit/less", OM_INT64, 1, &one) : -1;
  int index = as_int >= 0 ? named_value(g, "If/admit/index", OM_INT64, 1, &one) : -1;
  int cond = index >= 0 ? named_value(g, "If/admit/cond", OM_BOOL, 1, &one) : -1;
  int past = cond >= 0 ? int_const(g, "If/admit/past", INT32_MAX) : -1; /* no table is that long */
  bool table[2] = {false, true};
  om_tensor *t = past >= 0 ? om_from_data(table, &two, 1, OM_BOOL) : NULL;
  int tab = t ? hoist(g, "If/admit/table", &(om_ginit){.tensor = t, .generated = true}) : -1;
  om_tensor_release(t);
  om_gattr to = OM_ATTR_INT("to", 7 /* INT64 */), axis = OM_ATTR_INT("axis", 0);
  if (tab < 0 || om__graph_add_node(g, "Or", "If/admit/Or", (int[]){in_lo, in_hi}, 2, &either, 1, NULL, 0) < 0 ||
      om__graph_add_node(g, "Cast", "If/admit/Cast", &less, 1, &as_int, 1, &to, 1) < 0 ||
      om__graph_add_node(g, "Where", "If/admit/Where", (int[]){either, as_int, past}, 3, &index, 1, NULL, 0) < 0 ||
      om__graph_add_node(g, "Gather", "If/admit/Gather", (int[]){tab, index}, 2, &cond, 1, &axis, 1) < 0)
    return -1;
  return cond;
}

/* The model of the two pieces (lo: symbol k's sizes below `at`, hi: from it), an If on the size
 * of axis d of graph input i: new, NULL on error (set). Pieces that return other counts, element
 * types or ranks are refused with the declaration of the example's piece, where the trace holds. */
static om_traced_model *join(const cut *c, int i, int d, int64_t at, const om_traced_model *lo, const om_traced_model *hi,
                             const piece *plo, const piece *phi, bool ex_hi) {
  om_trace *tr = c->tr;
  om_traced_model *m = calloc(1, sizeof *m);
  if (!m) return om__fail(OM_ERR_OUT_OF_MEMORY, "trace_run: out of memory"), NULL;
  om_graph *g = &m->g;
  bool ok = true;
  for (int k = 0; ok && k < tr->g.inputs.n; k++) { /* the inputs as the trace declared them */
    const om_gvalue *src = &tr->g.values.v[tr->g.inputs.v[k]];
    int v = named_value(g, src->name, src->dtype, src->ndim, src->shape), *slot = v >= 0 ? OM_VEC_PUSH_SLOT(g->inputs) : NULL;
    if (!(ok = slot != NULL)) break;
    *slot = v;
    for (int e = 0; e < src->ndim; e++) g->values.v[v].dim_param[e] = keep(&g->arena, src->dim_param[e], &ok);
  }
  om_graph *branch[2] = {ok ? branch_graph(g, lo, "then/") : NULL, NULL};
  branch[1] = branch[0] ? branch_graph(g, hi, "else/") : NULL;
  ok = ok && branch[1];
  /* the condition: Less(Shape(x)[d], at), at the first size of the upper piece */
  int64_t one = 1, axis[2] = {d, d + 1};
  om_tensor *t = ok ? om_from_data(&at, &one, 1, OM_INT64) : NULL;
  int thr = t ? hoist(g, "If/threshold", &(om_ginit){.tensor = t, .generated = true}) : -1; /* a piece's may have the name */
  om_tensor_release(t);
  int size = thr >= 0 ? named_value(g, "If/size", OM_INT64, 1, &one) : -1;
  int cond = size >= 0 ? named_value(g, "If/cond", OM_BOOL, 1, &one) : -1;
  om_gattr sa[2] = {OM_ATTR_INT("start", axis[0]), OM_ATTR_INT("end", axis[1])};
  int in[2] = {g->inputs.v[i], size};
  ok = cond >= 0 && om__graph_add_node(g, "Shape", "If/Shape", in, 1, &size, 1, sa, 2) >= 0 &&
       om__graph_add_node(g, "Less", "If/Less", (int[]){size, thr}, 2, &cond, 1, NULL, 0) >= 0;
  om_traced_sym fixed[2];
  const om_symbol *sk = &tr->symbols.v[c->k], *dk = &c->declared[c->k];
  const om_traced_sym *ps[2] = {piece_sym(sk, dk, lo, plo, &fixed[0]), piece_sym(sk, dk, hi, phi, &fixed[1])};
  int64_t iv[4] = {ps[0]->min, ps[0]->max, ps[1]->min, ps[1]->max}; /* the sizes each piece holds for */
  if (ok && (iv[1] < at - 1 || iv[2] > at)) ok = (cond = admitted(g, size, cond, iv)) >= 0; /* they leave sizes out between them */
  /* the outputs: each the same element type and rank in both; an axis both name alike keeps it */
  int n_out = ok ? lo->g.outputs.n : 0, *outs = ok ? om__arena_alloc(&g->arena, sizeof(int) * (size_t)(n_out + 1)) : NULL;
  ok = ok && outs;
  const om_symbol *s = &tr->symbols.v[c->k];
  char decl[600];
  const om_traced_model *exm = ex_hi ? hi : lo;
  tr->split_parted = ok && hi->g.outputs.n != n_out;
  if (tr->split_parted)
    ok = om__fail(OM_ERR_TRACE_SYMBOLIC_SHAPE, "trace_run: the model changes at a size threshold of '%s' (at %lld) and "
                  "returns %d outputs below it, %d from it: the two cannot be one graph; the trace holds on the example's "
                  "side: declare %s", s->name, (long long)at, n_out, hi->g.outputs.n,
                  example_declaration(tr, s, exm, ex_hi ? phi : plo, decl, sizeof decl));
  for (int j = 0; ok && j < n_out; j++) {
    const om_gvalue *a = &lo->g.values.v[lo->g.outputs.v[j]], *b = &hi->g.values.v[hi->g.outputs.v[j]];
    if (a->dtype != b->dtype || a->ndim != b->ndim) {
      tr->split_parted = true;
      ok = om__fail(OM_ERR_TRACE_SYMBOLIC_SHAPE, "trace_run: the model changes at a size threshold of '%s' (at %lld) and its "
                    "output %d is %s of rank %d below it, %s of rank %d from it: the two cannot be one graph; the trace "
                    "holds on the example's side: declare %s", s->name, (long long)at, j, om_dtype_name(a->dtype), a->ndim,
                    om_dtype_name(b->dtype), b->ndim, example_declaration(tr, s, exm, ex_hi ? phi : plo, decl, sizeof decl));
      break;
    }
    const om_gvalue *ex = ex_hi ? b : a; /* the sizes of the example's piece */
    char name[32];
    snprintf(name, sizeof name, "If/out%d", j);
    int v = named_value(g, name, a->dtype, a->ndim, ex->shape);
    if (!(ok = v >= 0)) break;
    outs[j] = v;
    for (int e = 0; e < a->ndim; e++) {
      bool same = a->dim_param[e] && b->dim_param[e] ? !strcmp(a->dim_param[e], b->dim_param[e])
                  : !a->dim_param[e] && !b->dim_param[e] && a->shape[e] == b->shape[e];
      if (!same) g->values.v[v].shape[e] = -1; /* no name or size holds in both: unknown */
      else g->values.v[v].dim_param[e] = keep(&g->arena, a->dim_param[e], &ok);
    }
  }
  om_gattr ba[2] = {{.name = "then_branch", .type = OM_GATTR_GRAPH, .g = branch[0]},
                    {.name = "else_branch", .type = OM_GATTR_GRAPH, .g = branch[1]}};
  int node = ok ? om__graph_add_node(g, "If", "If", &cond, 1, outs, n_out, ba, 2) : -1;
  if (node >= 0) branch[0] = branch[1] = NULL; /* the node's now */
  ok = node >= 0;
  ok = ok && om__graph_node_captures(g, &g->nodes.v[node]); /* the values the branches read */
  for (int a = 0; a < 2; a++)
    if (branch[a]) om__graph_free(branch[a]), free(branch[a]);
  m->pieces = (lo->pieces ? lo->pieces : 1) + (hi->pieces ? hi->pieces : 1);
  if (ok && join_symbols(c, lo, hi, plo, phi, m)) return m;
  om_traced_release(m);
  if (om_last_error() == OM_ERR_OK) om__fail(OM_ERR_OUT_OF_MEMORY, "trace_run: out of memory");
  return NULL;
}

/* Pieces lo and hi (symbol k's sizes below `at`, from it) whose graphs are the same, nodes,
 * attributes and constants (the change the runs saw at the threshold left nothing in the graph:
 * SegFormer's reduction conv writes one column below the width 61 and two from it, and its
 * kv.reshape(B, C, -1) is [0, C, -1] on both sides), are one graph: model keep (lo or hi, the
 * example's) with symbol k's range the union of the two, no If. Each piece passed every check over
 * its own range, so the one graph holds over both. NULL (no error) where they differ, where a
 * piece holds one size (its axis fixed) or is cut itself, or where their ranges leave sizes out
 * between them; NULL with OutOfMemory set. */
static om_traced_model *one_graph(const cut *c, int64_t at, const om_traced_model *lo, const om_traced_model *hi,
                                  om_traced_model *keep_m) {
  const om_symbol *s = &c->tr->symbols.v[c->k];
  const om_traced_sym *p[2] = {sym_named(lo, s->name), sym_named(hi, s->name)};
  if (!p[0] || !p[1] || p[0]->n_branches || p[1]->n_branches || p[0]->max < at - 1 || p[1]->min > at || !om__loop_same(lo, hi))
    return NULL;
  om_traced_sym *q = NULL;
  for (int j = 0; j < keep_m->n_symbols; j++)
    if (!strcmp(keep_m->symbols[j].name, s->name)) q = &keep_m->symbols[j];
  bool ok = q != NULL;
  const char *min_why = ok ? keep(&keep_m->g.arena, p[0]->min_why, &ok) : NULL, *max_why = ok ? keep(&keep_m->g.arena, p[1]->max_why, &ok) : NULL;
  if (!ok) return om__fail(OM_ERR_OUT_OF_MEMORY, "trace_run: out of memory"), NULL;
  q->min = p[0]->min, q->max = p[1]->max, q->min_why = min_why, q->max_why = max_why;
  q->checked_min = p[0]->checked_min < p[1]->checked_min ? p[0]->checked_min : p[1]->checked_min;
  q->checked_max = p[0]->checked_max > p[1]->checked_max ? p[0]->checked_max : p[1]->checked_max;
  return keep_m;
}

/* ---- the cut ---- */

/* The example's variable for piece p of symbol s other than the example's: its end at the
 * threshold (where a run saw the model answer), moved in past sizes that cannot be an example
 * (below 2) and the model's fixed sizes where the piece has others; fixed when the piece has one
 * size. false when no size of it can be an example. */
static bool other_example(const om_trace *tr, const om_symbol *s, piece *p, bool upper) {
  p->fixed = p->lo == p->hi;
  p->v = upper ? p->lo : p->hi;
  if (p->fixed) return true;
  while (p->v < p->hi && p->v * s->multiple < 2) p->v++;
  for (int step = upper ? 1 : -1; om__run_fixed_size(tr, p->v * s->multiple) && p->v + step >= p->lo && p->v + step <= p->hi &&
                                   (p->v + step) * s->multiple >= 2;)
    p->v += step;
  return p->v * s->multiple >= 2;
}

/* A piece's refusal message (in place, returned) without the declarations it suggests: they are
 * of the piece's range, at the piece's own example, which the user's example is outside of. */
static char *without_advice(char *msg) {
  static const char *const advice[] = {": the graph holds for the sizes ", ". It holds ", "; it holds when ",
                                       "; the trace holds on ", "; declare ", ": declare "};
  char *end = msg + strlen(msg);
  for (size_t a = 0; a < sizeof advice / sizeof *advice; a++) {
    char *at = strstr(msg, advice[a]);
    if (at && at < end) end = at;
  }
  *end = '\0';
  return msg;
}

/* The If's outputs as the outputs of model m that join made, named as trace_piece names a
 * piece's (out0, ...), so that it joins as a piece (on: true) or, as om__branch_finish wants
 * it, none (on: false). false with OutOfMemory. */
static bool if_outputs(om_traced_model *m, bool on) {
  om_graph *g = &m->g;
  const om_gnode *node = &g->nodes.v[g->nodes.n - 1];
  g->outputs.n = 0;
  for (int j = 0; on && j < node->n_out; j++) {
    int *slot = OM_VEC_PUSH_SLOT(g->outputs);
    if (!slot || !(g->values.v[node->out[j]].name = om__arena_printf(&g->arena, "out%d", j))) return false;
    *slot = node->out[j];
  }
  return true;
}

/* Whether the model, run eagerly (no trace on the thread) with symbol c->k's axes at size and
 * the other symbols at their examples, answers: 1, or 0 where it fails (its message in why,
 * the error cleared), -1 with OutOfMemory. A size where it fails has no answer to trace: a
 * trace there may be refused at an earlier call from its runs at other sizes before it meets
 * the failure (HF Swin at height 8 fails in its second stage, at every width). */
static int answers_eagerly(const cut *c, int64_t size, om_tensor **outs, char *why, size_t cap) {
  om_trace *tr = c->tr;
  om_tensor *in[64] = {0};
  bool ok = true;
  for (int i = 0; ok && i < tr->inputs.n; i++) ok = (in[i] = piece_example(tr->inputs.v[i].traced, c->syms[i], c->k, size)) != NULL;
  int n = ok ? c->fn(c->ctx, in, tr->inputs.n, outs, c->max_outputs) : -1;
  om__release_all(in, tr->inputs.n);
  if (n >= 0) om__release_all(outs, n <= c->max_outputs ? n : c->max_outputs);
  if (n >= 0 && n <= c->max_outputs) return 1;
  if (om_last_error() == OM_ERR_OUT_OF_MEMORY || !ok) return -1;
  snprintf(why, cap, "%s", om_last_error_message());
  om_clear_error();
  return 0;
}

/* The other piece of a cut (po: upper, or below the example's), refused as one piece (it has
 * thresholds of its own, more than the pieces left: a mask of B - 3 rows, empty at B = 1 and 3,
 * one row at B = 2), as one piece per size when it has at most OM_ONE_SIZE_PIECES sizes where the
 * model answers (of OM_ONE_SIZE_SPAN at most: the rest, where it fails, left out as below; HF
 * Swin's unshifted side of min(H, W) is 9 to 12, and its model fails below 9): each traced
 * with the symbol's axes fixed there, joined to the example's piece ex (pex) from the sizes next
 * to it outwards, an If each. A size where the model fails has no answer: it is left out where
 * every size past it fails too, and the range ends there (its reason kept, traced.symbols'
 * narrowedBy); a size where it answers past one where it fails, or a piece refused, gives NULL.
 * Returns the model (new; ex itself when every size fails), NULL on error (the error set). */
static om_traced_model *one_size_pieces(const cut *c, int in_i, int in_d, om_traced_model *ex, const piece *pex, const piece *po,
                                        bool upper, om_tensor **outs, uint64_t seed, uint64_t offset) {
  om_thread_state *st = om__state();
  const om_symbol *s = &c->tr->symbols.v[c->k];
  om_traced_model *acc = ex;
  piece pacc = *pex;
  const char *why = NULL; /* the first size where the model fails: the range ends there */
  char fails[sizeof st->err_msg];
  int answered = 0;
  for (int64_t step = 0; step <= po->hi - po->lo; step++) {
    if (answered == OM_ONE_SIZE_PIECES && !why) { /* sizes left where it may answer: the piece's refusal stands */
      if (acc != ex) om_traced_release(acc);
      return NULL;
    }
    int64_t size = upper ? po->lo + step : po->hi - step;
    piece p = {.lo = size, .hi = size, .v = size, .fixed = true};
    om_traced_model *m = NULL;
    int n = -1;
    char failed[sizeof st->err_msg];
    st->rng_seed = seed, st->rng_offset = offset;
    int eager = answers_eagerly(c, size * s->multiple, outs, failed, sizeof failed);
    if (eager < 0) break; /* out of memory */
    st->rng_seed = seed, st->rng_offset = offset;
    bool traced = eager && trace_piece(c, &p, 1, outs, &n, &m);
    if (n > 0) om__release_all(outs, n);
    om_error_kind kind = om_last_error();
    if (!traced && (kind == OM_ERR_OUT_OF_MEMORY || kind >= OM_ERR_TRACE_UNSUPPORTED_OPERATION)) break; /* refused */
    if (!traced) { /* the model fails at this size */
      if (!why) snprintf(fails, sizeof fails, "trace_run: at %s=%lld the model fails (%.400s)", s->name,
                         (long long)(size * s->multiple), eager ? om_last_error_message() : failed), why = fails;
      om_clear_error();
      continue;
    }
    om_traced_model *joined = NULL;
    answered++;
    bool named = acc == ex || if_outputs(acc, true); /* the last If joins as a piece */
    if (!why && named) /* an If on the size: the one-size piece below the rest, or above it */
      joined = upper ? join(c, in_i, in_d, size * s->multiple, acc, m, &pacc, &p, false)
                     : join(c, in_i, in_d, (size + 1) * s->multiple, m, acc, &p, &pacc, true);
    om_traced_release(m);
    if (acc != ex) om_traced_release(acc);
    acc = joined;
    if (!named) return om__fail(OM_ERR_OUT_OF_MEMORY, "trace_run: out of memory"), NULL;
    if (!acc) return NULL; /* an answer past a size where it fails (no error set: the caller's stays), or an error */
    *(upper ? &pacc.hi : &pacc.lo) = size;
  }
  if (om_last_error() != OM_ERR_OK) {
    if (acc != ex) om_traced_release(acc);
    return NULL;
  }
  if (acc != ex) if_outputs(acc, false); /* om__branch_finish names them */
  om_traced_sym *k = NULL;
  for (int j = 0; j < acc->n_symbols && !k; j++)
    if (!strcmp(acc->symbols[j].name, s->name)) k = &acc->symbols[j];
  if (why && k) {
    bool ok = true;
    *(upper ? &k->max_why : &k->min_why) = keep(&acc->g.arena, why, &ok);
    if (!ok) {
      if (acc != ex) om_traced_release(acc);
      return om__fail(OM_ERR_OUT_OF_MEMORY, "trace_run: out of memory"), NULL;
    }
  }
  return acc;
}

/* The symbol of each input axis of c's trace (c->syms, -1 fixed), and the first input axis of
 * symbol c->k (input *i, axis *d). */
static void cut_syms(const cut *c, int *i, int *d) {
  om_trace *tr = c->tr;
  *i = *d = -1;
  for (int q = 0; q < tr->inputs.n; q++)
    for (int x = 0; x < OM_MAX_DIMS; x++) {
      int ext = x < tr->g.values.v[tr->g.inputs.v[q]].ndim ? tr->g.values.v[tr->g.inputs.v[q]].ext[x] : -1;
      c->syms[q][x] = -1;
      for (int j = 0; ext >= 0 && j < tr->symbols.n && c->syms[q][x] < 0; j++)
        if (om__x_sym(tr, j) == ext) c->syms[q][x] = j;
      if (c->syms[q][x] == c->k && *i < 0) *i = q, *d = x;
    }
}

#define OM_LOOP_SMALL 5 /* the sizes of each other symbol from its declared minimum that answers_below runs at */

/* Where the model fails below variable from of the loop's symbol c->k with the other symbols at
 * their examples (roll_loop's range would start at from), whether it answers there with another
 * symbol at one of its smallest sizes: random model 27:21636's B - 2 rows padded to a multiple of
 * 7, split to min(8, T) rows and reshaped to [-1, 7, 8, C] beside a loop over T fails below T = 8
 * at the example's B = 5, and answers at B = 2 (no rows) at every T; a range from 8 would leave
 * those sizes out without a word. Runs eagerly just below from and at the declared minimum. j + 1
 * for the other symbol j (v: the variables, the others at their examples), 0 where it answers at
 * none, -1 when memory ran out (set). */
static int answers_below(const cut *c, int64_t from, uint64_t seed, uint64_t offset, int64_t *v) {
  om_thread_state *st = om__state();
  om_trace *tr = c->tr;
  const om_symbol *s = &tr->symbols.v[c->k];
  const int64_t xs[2] = {from - 1, c->declared[c->k].vmin};
  om__run_example(tr, v);
  om_tensor *in[64] = {0}, **outs = calloc((size_t)c->max_outputs, sizeof *outs);
  if (!outs) return om__fail(OM_ERR_OUT_OF_MEMORY, "trace_run: out of memory"), -1;
  int found = 0;
  for (int i = 0; !found && i < (xs[1] < xs[0] ? 2 : 1); i++)
    for (int j = 0; !found && j < tr->symbols.n; j++) {
      const om_symbol *o = &tr->symbols.v[j], *dj = &c->declared[j];
      int64_t y0 = v[j];
      for (int64_t y = dj->vmin; j != c->k && !found && y < dj->vmin + OM_LOOP_SMALL && y <= dj->vmax; y++) {
        if (y == y0) continue;
        bool ok = true;
        for (int q = 0; ok && q < tr->inputs.n; q++) {
          om_tensor *t = piece_example(tr->inputs.v[q].traced, c->syms[q], c->k, xs[i] * s->multiple);
          in[q] = t ? piece_example(t, c->syms[q], j, y * o->multiple) : NULL;
          om_tensor_release(t);
          ok = in[q] != NULL;
        }
        st->rng_seed = seed, st->rng_offset = offset;
        int n = ok ? c->fn(c->ctx, in, tr->inputs.n, outs, c->max_outputs) : -1;
        om__release_all(in, tr->inputs.n);
        memset(in, 0, sizeof in);
        if (n >= 0 && n <= c->max_outputs) om__release_all(outs, n);
        if (n >= 0) found = j + 1, v[c->k] = xs[i], v[j] = y;
        else if (om_last_error() == OM_ERR_OUT_OF_MEMORY) found = -1;
        else om_clear_error(); /* it fails there too */
      }
    }
  free(outs);
  return found;
}

/* The sizes (variables of symbol k, from its example v0) a rolled loop is checked at: the
 * smallest two, either side of the example, further on and far above, then 4 and 16 times
 * further (the rolled graph claims the whole range, and a threshold the runs before the loop never
 * reached, `T > 290 ? x.abs() : x.sigmoid()` beside the loop, would be silently lost: checked
 * there, the rolled graph disagrees and the loop is refused, loudly, as before); for a trip every
 * div sizes also every residue from the smallest size on and one beside far (a trip count off at
 * some residue would be silently wrong there); for a loop that stops at a size, that size and the
 * next; the example last (the outputs om_trace_run returns
 * are its). */
#define OM_LOOP_CHECKS (10 + OM_LOOP_DIV + 1 + 2) /* and, for a trip every div sizes, every residue from the smallest on; either side of a stop */
#define OM_LOOP_FAILS 8 /* the most of the smallest sizes a rolled loop's model may fail at */
#define OM_LOOP_FAR_BYTES ((int64_t)256 << 20) /* the most memory a rolled loop's check far above the example may take */

/* Whether the constants that rolled (the first piece's graph rolled, its constants of the size
 * rewritten as a line through its and the second piece's, rolled2) lie on that line at a third piece
 * p3 (traced into *m3 once, kept for the next try): a size squared or halved beside the loop
 * moves by a whole step between two sizes too, and would be a line wrong elsewhere. Rolled as
 * the others (loops, trips, from); 1 where the third's graph rewritten through the second's is
 * rolled's, 0 where not (or p3 lies past the range: refused as before), -1 on error (set). */
static int on_the_line(const cut *c, const om_traced_model *rolled2, const piece *p2, const piece *p3, om_traced_model **m3,
                       const om_traced_model *rolled, const om_loop_trips *trips, int loops, int64_t from, uint64_t seed,
                       uint64_t offset, int in_i, int in_d) {
  om_thread_state *st = om__state();
  om_trace *tr = c->tr;
  const om_symbol *s = &tr->symbols.v[c->k];
  if (p3->v > c->declared[c->k].vmax) return 0;
  int n = -1;
  om_tensor **outs = *m3 ? NULL : calloc((size_t)c->max_outputs, sizeof *outs);
  if (!*m3 && !outs) return om__fail(OM_ERR_OUT_OF_MEMORY, "trace_run: out of memory"), -1;
  if (!*m3) {
    st->rng_seed = seed, st->rng_offset = offset;
    bool ok = trace_piece(c, p3, 1, outs, &n, m3);
    if (n > 0) om__release_all(outs, n);
    free(outs);
    st->trace = NULL;
    if (!ok && om_last_error() == OM_ERR_OUT_OF_MEMORY) return -1;
    if (!ok) return om_clear_error(), 0; /* the piece refused: so is the loop, as before */
  }
  om_traced_model *rolled3 = om__loop_roll(*m3, s->name, p3->v * s->multiple, from * s->multiple, (const int (*)[OM_MAX_DIMS])c->syms,
                                           c->k, in_i, in_d, loops, trips, NULL, 0);
  int r = rolled3 ? om__loop_sizes(rolled3, rolled2, p3->v * s->multiple, p2->v * s->multiple, in_i, in_d) : 0;
  r = r == 2 ? om__loop_same(rolled, rolled3) : r < 0 ? -1 : 0;
  om_traced_release(rolled3);
  return r < 0 || om_last_error() == OM_ERR_OUT_OF_MEMORY ? -1 : r;
}

/* The loop over symbol c->k that om__run_loop found, rolled into an ONNX Loop (loop.c): the model
 * traced as a piece with k fixed three sizes above the example (repeats enough to tell what
 * moves), rolled, and the rolled graph run by the trace's runner (om_graph_runner: the Session)
 * at sizes across k's declared range against the model run eagerly there. Where every one agrees, tr->branched is the model and the
 * outputs are the example's (their count); 0 where it does not roll or agree (no error set: the
 * loop is refused as before; *beside[0] and [1] the two sizes where the rolled graphs of two
 * pieces differed, else 0); -1 on error (set). */
static int roll_loop(const cut *c, om_tensor **outputs, uint64_t seed, uint64_t offset, int64_t *beside, const om_loop_trips *period,
                     char *reads, size_t n_reads) {
  om_thread_state *st = om__state();
  uint64_t after = st->rng_seed, after_offset = st->rng_offset;
  om_trace *tr = c->tr;
  const om_symbol *s = &tr->symbols.v[c->k], *dk = &c->declared[c->k];
  int64_t v0 = s->size / s->multiple;
  /* Two pieces, at sizes where om__run_loop ran (in the range), rolled alike: the graph is one
   * piece's with only the trip count free, so anything else the symbol's size reaches (a pad to
   * Math.max(T, B) beside a loop over B) would be that piece's size at every size; where it
   * does, a constant of the two rolled graphs differs and the loop is refused. */
  /* A trip every div sizes: the first piece a trip further on (three repeats where the example
   * has two), the second div + 1 above it, so that their trip counts differ and so does the
   * size's residue (what the size reaches beside the loop differs too, where it does). */
  int64_t div = period->div, v1 = div > 1 ? v0 + 2 + div : v0 + 3;
  int64_t v2 = div > 1 ? (v1 + div + 1 <= dk->vmax ? v1 + div + 1 : v1 + div) : v0 + 4 <= dk->vmax ? v0 + 4 : v0 + 2;
  piece p = {.lo = v1, .hi = v1, .v = v1, .fixed = true}, p2 = {.lo = v2, .hi = v2, .v = v2, .fixed = true};
  const int64_t v3 = v2 + (v2 - v1) + 1; /* a third piece, traced where the first two's graphs differ by constants of the size */
  piece p3 = {.lo = v3, .hi = v3, .v = v3, .fixed = true};
  om_traced_model *m3 = NULL;
  int in_i, in_d, n = -1, n_in = tr->inputs.n;
  cut_syms(c, &in_i, &in_d);
  om_tensor **outs = calloc((size_t)c->max_outputs, sizeof *outs), *in[64] = {0};
  om_loop_axes *axes = calloc((size_t)c->max_outputs, sizeof *axes);
  om_traced_model *m = NULL, *m2 = NULL, *rolled = NULL, *rolled2 = NULL;
  st->trace = NULL;
  bool ok = (outs && axes) || om__fail(OM_ERR_OUT_OF_MEMORY, "trace_run: out of memory");
  ok = ok && v2 <= dk->vmax; /* (a range too short for the second piece: refused as before) */
  for (int q = 0; ok && q < 2; q++) {
    st->rng_seed = seed, st->rng_offset = offset;
    ok = in_i >= 0 && trace_piece(c, q ? &p2 : &p, 1, outs, &n, q ? &m2 : &m);
    if (n > 0) om__release_all(outs, n);
    n = -1;
  }
  if (om_last_error() == OM_ERR_OUT_OF_MEMORY) ok = false;
  else om_clear_error(); /* a piece refused: the loop is, as before */
  /* From the smallest size the model answers at: where eager itself fails (x.select(1, 2) at
   * T = 1, 2) there is no answer to agree with, and the range starts above, that failure its
   * reason; where it fails at more of the smallest sizes than OM_LOOP_FAILS, refused as before. */
  int64_t from = dk->vmin;
  char why[200] = "";
  for (; ok && from < v0 && from < dk->vmin + OM_LOOP_FAILS; from++) {
    for (int i = 0; ok && i < n_in; i++) ok = (in[i] = piece_example(tr->inputs.v[i].traced, c->syms[i], c->k, from * s->multiple)) != NULL;
    st->rng_seed = seed, st->rng_offset = offset;
    n = ok ? c->fn(c->ctx, in, n_in, outs, c->max_outputs) : -1;
    om__release_all(in, n_in);
    memset(in, 0, sizeof in);
    if (n >= 0) {
      if (n <= c->max_outputs) om__release_all(outs, n);
      break;
    }
    if (om_last_error() == OM_ERR_OUT_OF_MEMORY) ok = false;
    else snprintf(why, sizeof why, "%s (at %s=%lld)", om_last_error_message(), s->name, (long long)(from * s->multiple)), om_clear_error();
  }
  ok = ok && from < dk->vmin + OM_LOOP_FAILS;
  int64_t answers[64]; /* the variables below from where the model answers with another symbol small (0: none) */
  int answered = ok && from > dk->vmin ? answers_below(c, from, seed, offset, answers) : 0;
  ok = ok && answered == 0; /* refused below, or out of memory */
  const int64_t far = 4 * v0 + 9;
  int64_t sizes[OM_LOOP_CHECKS] = {from, from + 1, v0 - 1, v0 + 1, v0 + 2, v0 + 7, far, 4 * far, 16 * far};
  int n_sizes = 9;
  for (int64_t r = 2; div > 1 && r <= div; r++) sizes[n_sizes++] = from + r; /* every residue, from the smallest size */
  if (div > 1) sizes[n_sizes++] = far + 1;
  if (period->cap) sizes[n_sizes++] = period->cap, sizes[n_sizes++] = period->cap + 1; /* either side of where it stops */
  sizes[n_sizes++] = v0; /* the example last: its outputs are kept */
  bool agrees = false;
  int64_t lo = INT64_MAX, hi = 0;
  /* The tries, each checked in turn until one agrees: one Loop of size - c trips, then more
   * Loops in sequence, then one of 2, 3, 4 trips a size (a loop to 2 * T). */
  static const int tries[][2] = {{1, 1}, {2, 1}, {3, 1}, {1, 2}, {1, 3}, {1, 4}}; /* Loops, trips a size */
  for (int at = 0; ok && !agrees && at < (int)(sizeof tries / sizeof *tries); at++) {
    om_traced_release(rolled);
    om_traced_release(rolled2);
    rolled = rolled2 = NULL;
    if (div > 1 && tries[at][1] > 1) break; /* per trips every div sizes: the per the runs found */
    /* in sizes: the variable's div and residue times the multiple */
    const om_loop_trips trips = {.per = div > 1 ? period->per : tries[at][1], .div = div * s->multiple, .at = period->at * s->multiple,
                                 .cap = period->cap * s->multiple};
    rolled = om__loop_roll(m, s->name, p.v * s->multiple, from * s->multiple, (const int (*)[OM_MAX_DIMS])c->syms, c->k, in_i, in_d,
                           tries[at][0], &trips, reads, n_reads);
    rolled2 = rolled ? om__loop_roll(m2, s->name, p2.v * s->multiple, from * s->multiple, (const int (*)[OM_MAX_DIMS])c->syms, c->k,
                                     in_i, in_d, tries[at][0], &trips, reads, n_reads)
                     : NULL;
    /* the size reaches more than the trip count: as constants that move a whole step a size (a
     * crop to the size, x[..., :T]) it is written as the size; otherwise the loop is refused */
    int alike = rolled2 ? om__loop_sizes(rolled, rolled2, p.v * s->multiple, p2.v * s->multiple, in_i, in_d) : 0;
    if (alike == 2) alike = on_the_line(c, rolled2, &p2, &p3, &m3, rolled, &trips, tries[at][0], from, seed, offset, in_i, in_d);
    if (alike < 0) break;
    if (rolled2 && !alike) {
      beside[0] = p.v * s->multiple, beside[1] = p2.v * s->multiple;
      continue;
    }
    void *sess = rolled2 && tr->runner ? tr->runner->open(rolled) : NULL;
    if (!sess && om_last_error() != OM_ERR_OK) break; /* an error (set) */
    if (!sess) continue; /* not so many Loops roll, or no runtime to check them */
    agrees = true;
    memset(axes, 0, sizeof *axes * (size_t)c->max_outputs);
    lo = INT64_MAX, hi = 0;
    for (int q = 0; agrees && q < n_sizes; q++) {
      if (sizes[q] < from || sizes[q] > dk->vmax) continue;
      for (int i = 0; agrees && i < n_in; i++)
        agrees = (in[i] = piece_example(tr->inputs.v[i].traced, c->syms[i], c->k, sizes[q] * s->multiple)) != NULL;
      st->rng_seed = seed, st->rng_offset = offset;
      /* far above (4 and 16 times past the example), where a model's memory can grow as a power
       * of the size (an attention over the batch at 16 * (4 * 5 + 9) = 464 makes 464^3 scores,
       * 1.6 GB: random model 23:68716), the run may use OM_LOOP_FAR_BYTES: past that the size is
       * not checked, as where the model fails, rather than the heap grown for it or the trace
       * ended with OutOfMemory (traced.symbols' checked range says which sizes were run) */
      bool far_check = q == 7 || q == 8;
      int64_t outer = st->bytes_cap; /* a re-example's cap (om__branch_reexample) stays the limit around it */
      if (far_check && (!outer || st->live_bytes + OM_LOOP_FAR_BYTES < outer)) st->bytes_cap = st->live_bytes + OM_LOOP_FAR_BYTES;
      if (far_check) st->cap_hit = false;
      n = agrees ? c->fn(c->ctx, in, n_in, outs, c->max_outputs) : -1;
      bool capped = far_check && st->cap_hit;
      st->bytes_cap = outer, st->cap_hit = false;
      if (n < 0 && far_check && (om_last_error() != OM_ERR_OUT_OF_MEMORY || capped)) {
        om_clear_error(); /* far above, where the model itself fails or passes the cap: no answer to disagree with */
        om__release_all(in, n_in);
        memset(in, 0, sizeof in);
        continue;
      }
      agrees = n >= 0 && n <= c->max_outputs && om__loop_agrees(rolled, tr->runner, sess, in, n_in, outs, n, sizes[q] * s->multiple, axes);
      if (n >= 0 && n <= c->max_outputs && (q < n_sizes - 1 || !agrees)) om__release_all(outs, n);
      om__release_all(in, n_in);
      memset(in, 0, sizeof in);
      lo = sizes[q] < lo ? sizes[q] : lo, hi = sizes[q] > hi ? sizes[q] : hi;
    }
    tr->runner->close(sess);
    if (!agrees && om_last_error() == OM_ERR_OUT_OF_MEMORY) break;
    if (!agrees) om_clear_error(); /* a model that fails at a size run: the next try, or refused as before */
  }
  agrees = agrees && om__loop_name_axes(rolled, axes, s->name);
  om_traced_release(rolled2);
  free(axes);
  if (agrees) { /* its symbols: the piece's, and k over its declared range */
    om_arena *a = &rolled->g.arena;
    agrees = (rolled->symbols = om__arena_alloc(a, sizeof *rolled->symbols * (size_t)(tr->symbols.n + 1))) != NULL;
    rolled->n_symbols = agrees ? tr->symbols.n : 0;
    for (int j = 0; agrees && j < tr->symbols.n; j++) {
      const om_traced_sym *q = j == c->k ? NULL : sym_named(m, tr->symbols.v[j].name);
      om_traced_sym *out = &rolled->symbols[j];
      const om_symbol *sj = j == c->k ? dk : &tr->symbols.v[j]; /* (a piece has every symbol but k) */
      if (q) *out = *q, out->name = keep(a, q->name, &agrees), out->min_why = keep(a, q->min_why, &agrees), out->max_why = keep(a, q->max_why, &agrees);
      else /* k's range as the cut declared it, narrowed where the model fails (a multiple): with that reason */
        *out = (om_traced_sym){.name = keep(a, sj->name, &agrees), .multiple = sj->multiple, .min = sj->min, .max = sj->max,
                               .min_why = keep(a, sj->min_why, &agrees), .max_why = keep(a, sj->max_why, &agrees),
                               .checked_min = lo * sj->multiple, .checked_max = hi * sj->multiple};
      if (j == c->k && from > dk->vmin) /* narrowed where eager fails, with that failure */
        out->min = from * s->multiple, out->min_why = keep(a, why, &agrees);
      out->n_branches = 0, out->branches = NULL;
    }
  }
  om_traced_release(m);
  om_traced_release(m2);
  om_traced_release(m3);
  st->trace = tr;
  st->rng_seed = after, st->rng_offset = after_offset;
  for (int j = 0; agrees && j < n; j++) { /* the example's outputs, as the Loop model's (om__branch_finish) */
    om_tensor *t = om__alias(outs[j]);
    om_tensor_release(outs[j]);
    if ((outputs[j] = t)) t->trace_id = tr->id, t->trace_value = j;
    else agrees = om__fail(OM_ERR_OUT_OF_MEMORY, "trace_run: out of memory"), om__release_all(outs + j + 1, n - j - 1), om__release_all(outputs, j);
  }
  free(outs);
  om_error_kind kind = om_last_error();
  if (answered > 0) { /* the range would narrow where the model answers: refused with the declaration that holds */
    om_traced_release(rolled);
    char at[160], decl[200];
    const piece held = {.lo = from, .hi = dk->vmax};
    om__run_sizes(tr, answers, (uint64_t)1 << c->k | (uint64_t)1 << (answered - 1), at, sizeof at);
    piece_declaration(s, &held, decl, sizeof decl);
    return om__trace_fail(OM_ERR_TRACE_SYMBOLIC_SHAPE, "trace_run: the loop over '%s' holds from %s=%lld, where the model first "
                          "answers with the other symbols at their examples (below it %s), yet at %s the model answers: the graph "
                          "would leave out sizes where the model gives an answer. It holds from there: declare %s (om_trace_dim in C)",
                          s->name, s->name, (long long)(from * s->multiple), why, at, decl), -1;
  }
  if (!agrees) {
    om_traced_release(rolled);
    if (kind == OM_ERR_OUT_OF_MEMORY) return om__trace_fail(kind, "trace_run: out of memory"), -1;
    om_clear_error();
    return 0;
  }
  tr->branched = rolled;
  return n;
}

int om__branch_run(om_trace *tr, const om_symbol *declared, om_trace_fn fn, void *ctx, om_tensor **outputs, int max_outputs,
                   int n, uint64_t seed, uint64_t offset) {
  om_thread_state *st = om__state();
  uint64_t after = st->rng_seed, after_offset = st->rng_offset;
  int k = tr->split_sym;
  const om_symbol *s = &tr->symbols.v[k];
  int64_t v0 = s->size / s->multiple, at = tr->split_at;
  piece pc[2] = {{.lo = declared[k].vmin, .hi = at - 1}, {.lo = at, .hi = declared[k].vmax}};
  int ex = v0 >= at, other = 1 - ex;
  pc[ex].v = v0;
  int64_t calls[OM_LOOP_SIZES], sizes[OM_LOOP_SIZES];
  om_loop_trips period;
  int loop = om__run_loop(tr, k, fn, ctx, max_outputs, seed, offset, calls, sizes, &period);
  if (loop) om__release_all(outputs, n), n = 0;
  if (loop < 0) return -1;
  cut lc = {.tr = tr, .declared = declared, .k = k, .fn = fn, .ctx = ctx, .max_outputs = max_outputs,
            .syms = loop ? calloc((size_t)tr->inputs.n, sizeof *lc.syms) : NULL};
  int64_t beside[2] = {0, 0};
  char reads[300] = ""; /* why no repeats roll, where they read another constant each */
  int rolled = !loop ? 0 : lc.syms ? roll_loop(&lc, outputs, seed, offset, beside, &period, reads, sizeof reads) : (om__trace_fail(OM_ERR_OUT_OF_MEMORY, "trace_run: out of memory"), -1);
  free(lc.syms);
  if (rolled) return rolled;
  if (period.div > 1) loop = 0; /* calls that grow every div-th size and do not roll: a threshold at each, as before */
  if (loop) { /* a threshold at every size: no pieces hold it */
    char seen[240], why[540] = "";
    size_t w = 0;
    for (int i = 0; i < OM_LOOP_SIZES && calls[i] >= 0 && w < sizeof seen; i++)
      w += (size_t)snprintf(seen + w, sizeof seen - w, "%s%lld at %s=%lld", i ? ", " : "", (long long)calls[i], s->name,
                            (long long)(sizes[i] * s->multiple));
    if (beside[0]) /* rolled, but the size reaches the graph beside the Loop too (Math.max(T, B) of a loop over B) */
      snprintf(why, sizeof why, "; rolled at %s=%lld and %s=%lld, the Loop graphs differ besides the trip count (the "
               "size reaches a size computed beside the loop)", s->name, (long long)beside[0], s->name, (long long)beside[1]);
    else snprintf(why, sizeof why, "%s", reads);
    return om__trace_fail(OM_ERR_TRACE_SYMBOLIC_SHAPE, "trace_run: the model makes more calls at every larger size of '%s' "
                          "(calls its outputs need: %s): a loop over the size, unrolled, which no graph without ONNX Loop "
                          "holds at every size; declare om.Dim('%s', { min: %lld, max: %lld }) for the graph at the traced "
                          "size (om_trace_dim in C)%s", s->name, seen, s->name, (long long)s->size, (long long)s->size, why), -1;
  }
  om__release_all(outputs, n); /* the record run's: the pieces' graphs replace its */
  if (!other_example(tr, s, &pc[other], other == 1))
    return om__trace_fail(OM_ERR_TRACE_SYMBOLIC_SHAPE, "trace_run: the model changes at a size threshold of '%s' (at %lld), and "
                          "no size below it can be an example to trace that piece at: declare om.Dim('%s', { min: %lld })",
                          s->name, (long long)(at * s->multiple), s->name, (long long)(at * s->multiple)), -1;
  cut c = {.tr = tr, .declared = declared, .k = k, .fn = fn, .ctx = ctx, .max_outputs = max_outputs,
           .syms = calloc((size_t)tr->inputs.n, sizeof *c.syms)};
  if (!c.syms) return om__trace_fail(OM_ERR_OUT_OF_MEMORY, "trace_run: out of memory"), -1;
  int in_i, in_d; /* an input axis of the symbol: its size is the condition's */
  cut_syms(&c, &in_i, &in_d);
  om_tensor **outs = calloc((size_t)max_outputs, sizeof *outs);
  om_traced_model *m[2] = {NULL, NULL};
  int n_ex = -1, n_other = -1;
  st->trace = NULL; /* the pieces are traces of their own */
  st->rng_seed = seed, st->rng_offset = offset;
  bool ok = outs && trace_piece(&c, &pc[ex], tr->pieces - 1, outputs, &n_ex, &m[ex]);
  st->rng_seed = seed, st->rng_offset = offset;
  int left = ok ? tr->pieces - (m[ex]->pieces ? m[ex]->pieces : 1) : 0;
  int64_t end = other == 1 ? pc[other].lo : pc[other].hi; /* the other piece's size at the threshold */
  ok = ok && trace_piece(&c, &pc[other], left, outs, &n_other, &m[other]);
  om_error_kind failed = om_last_error();
  if (!ok && m[ex] && failed != OM_ERR_OK && failed != OM_ERR_OUT_OF_MEMORY && failed < OM_ERR_TRACE_UNSUPPORTED_OPERATION &&
      pc[other].v != end && end * s->multiple >= 2) { /* the model fails at an example moved off a fixed size: at the end, where it answered */
    om_clear_error();
    pc[other].v = end;
    st->rng_seed = seed, st->rng_offset = offset;
    ok = trace_piece(&c, &pc[other], left, outs, &n_other, &m[other]);
  }
  if (n_other > 0) om__release_all(outs, n_other);
  bool ex_traced = m[ex] != NULL, other_traced = m[other] != NULL;
  int64_t ex_min = pc[ex].v * s->multiple, ex_max = ex_min; /* the sizes the example's piece holds for (one when fixed) */
  const om_traced_sym *q = ex_traced ? sym_named(m[ex], s->name) : NULL;
  if (q) ex_min = q->min, ex_max = q->max;
  om_traced_model *joined = ok ? one_graph(&c, at * s->multiple, m[0], m[1], m[ex]) : NULL;
  if (joined) m[ex] = NULL; /* the model now */
  else if (ok && om_last_error() == OM_ERR_OK) joined = join(&c, in_i, in_d, at * s->multiple, m[0], m[1], &pc[0], &pc[1], ex == 1);
  failed = om_last_error();
  if (!ok && ex_traced && failed != OM_ERR_OK && failed != OM_ERR_OUT_OF_MEMORY &&
      (failed == OM_ERR_TRACE_SYMBOLIC_SHAPE || failed < OM_ERR_TRACE_UNSUPPORTED_OPERATION) &&
      pc[other].hi - pc[other].lo < OM_ONE_SIZE_SPAN) { /* each size of the other piece a piece of its own */
    char msg[sizeof st->err_msg];
    snprintf(msg, sizeof msg, "%s", om_last_error_message());
    om_clear_error();
    joined = one_size_pieces(&c, in_i, in_d, m[ex], &pc[ex], &pc[other], other == 1, outs, seed, offset);
    if (joined == m[ex]) m[ex] = NULL; /* the model now */
    if (!joined && om_last_error() != OM_ERR_OUT_OF_MEMORY) om__fail(failed, "%s", msg); /* the piece's refusal stands */
  }
  /* where the other piece failed: the declaration the example's piece held for, its other symbols'
   * ranges too (a piece of a cut inside a piece holds where the outer cut's symbol is declared:
   * torchvision's Swin at window 7, cut on h at 60 and then on w, holds from 60 on both sides, and
   * a refusal naming w alone was refused again naming h) */
  char held[400] = "";
  if (!joined && ex_traced && !other_traced) {
    const piece hp = {.lo = ex_min / s->multiple, .hi = ex_max == INT64_MAX ? INT64_MAX : ex_max / s->multiple};
    if (m[ex]) example_declaration(tr, s, m[ex], &hp, held, sizeof held);
    else piece_declaration(s, &hp, held, sizeof held);
  }
  om_traced_release(m[0]);
  om_traced_release(m[1]);
  free(outs);
  free(c.syms);
  st->trace = tr;
  st->rng_seed = after, st->rng_offset = after_offset;
  if (!joined) {
    if (n_ex > 0) om__release_all(outputs, n_ex);
    char msg[sizeof st->err_msg];
    om_error_kind kind = om_last_error() != OM_ERR_OK ? om_last_error() : OM_ERR_OUT_OF_MEMORY;
    snprintf(msg, sizeof msg, "%s", om_last_error_message());
    char decl[460] = ""; /* the example's piece alone, where the other one failed: the ranges that trace held for */
    bool other_failed = ex_traced && !other_traced;
    if (other_failed)
      snprintf(decl, sizeof decl, "; declare %s for the graph %s there", held, ex == 1 ? "from" : "up to");
    /* memory run out in the piece above, traced with its example at its smallest size (far above
     * the example, where the model makes its tensors for real: a pad to 27555 x 27555): the model
     * fails there as it does eagerly, not the trace, whose own memory is the example's */
    bool far_memory = kind == OM_ERR_OUT_OF_MEMORY && other_failed && other == 1 && pc[other].v > 4 * pc[ex].v;
    bool fails = kind < OM_ERR_TRACE_UNSUPPORTED_OPERATION && (kind != OM_ERR_OUT_OF_MEMORY || far_memory);
    bool refused = kind == OM_ERR_TRACE_SYMBOLIC_SHAPE && other_failed; /* its declarations are of that piece: not the user's */
    char head[300]; /* what this trace says before the piece's message */
    if (fails) /* the model fails at a piece's example */
      snprintf(head, sizeof head, "trace_run: the model changes at a size threshold of '%s' (at %lld), and fails at %s=%lld, "
               "in a piece: ", s->name, (long long)(at * s->multiple), s->name, (long long)(pc[ex_traced ? other : ex].v * s->multiple));
    else if (refused)
      snprintf(head, sizeof head, "trace_run: the model changes at a size threshold of '%s' (at %lld), and the piece %s it "
               "(traced at %s=%lld) is refused: ", s->name, (long long)(at * s->multiple), other ? "from" : "below", s->name,
               (long long)(pc[other].v * s->multiple));
    else
      return om__trace_fail(kind, "%s", msg), -1;
    if (refused) without_advice(msg);
    /* a piece's own refusal at a threshold of its own starts with this call's name too: the head
     * names it once (a name mid-message would reach JS as C's, which only the start's becomes) */
    static const char own[] = "trace_run: ";
    if (!strncmp(msg, own, sizeof own - 1)) memmove(msg, msg + sizeof own - 1, strlen(msg) - (sizeof own - 1) + 1);
    size_t room = sizeof st->err_msg - 1 - strlen(head) - strlen(decl); /* the piece's message is cut, not the declaration */
    if (strlen(msg) > room && room > 3) memcpy(msg + room - 3, "...", 4);
    return om__trace_fail(OM_ERR_TRACE_SYMBOLIC_SHAPE, "%s%s%s", head, msg, decl), -1;
  }
  tr->branched = joined;
  for (int j = 0; j < n_ex; j++) { /* the example piece's outputs, as the If's outputs of this trace */
    om_tensor *t = om__alias(outputs[j]);
    om_tensor_release(outputs[j]);
    outputs[j] = t;
    if (!t) {
      om__release_all(outputs, j);
      return om__trace_fail(OM_ERR_OUT_OF_MEMORY, "trace_run: out of memory"), -1;
    }
    t->trace_id = tr->id;
    t->trace_value = j;
  }
  return n_ex;
}

/* Value v of g renamed: the values of g's subgraphs that read it from the outer scope (a Loop
 * body reading an output computed before the loop) take its name, in theirs too. false with
 * OutOfMemory. */
static bool rename_captures(om_graph *g, int v) {
  for (int k = 0; k < g->nodes.n; k++)
    for (int a = 0; a < g->nodes.v[k].n_attrs; a++) {
      om_graph *sub = g->nodes.v[k].attrs[a].type == OM_GATTR_GRAPH ? g->nodes.v[k].attrs[a].g : NULL;
      for (int c = 0; sub && c < sub->captured.n; c++) {
        om_gvalue *cv = &sub->values.v[sub->captured.v[c]];
        if (cv->outer == v && (!(cv->name = om__arena_strdup(&sub->arena, g->values.v[v].name)) || !rename_captures(sub, sub->captured.v[c])))
          return false;
      }
    }
  return true;
}

om_traced_model *om__branch_finish(om_trace *tr, om_tensor *const *outputs, const char *const *names, int n) {
  om_traced_model *m = tr->branched;
  om_graph *g = &m->g;
  /* the If's outputs; or, where the cut left one piece (the model fails at every size of the
   * other: one_size_pieces), that piece's */
  int n_if = g->outputs.n ? g->outputs.n : g->nodes.v[g->nodes.n - 1].n_out;
  int *vals = om__arena_alloc(&g->arena, sizeof(int) * (size_t)(n_if + 1));
  if (!vals) return om__trace_fail(OM_ERR_OUT_OF_MEMORY, "trace_finish: out of memory"), NULL;
  memcpy(vals, g->outputs.n ? g->outputs.v : g->nodes.v[g->nodes.n - 1].out, sizeof(int) * (size_t)n_if);
  g->outputs.n = 0;
  if (n < 1 || !outputs || !names)
    return om__trace_fail(OM_ERR_TRACE_INVALID_USAGE, "trace_finish: needs at least one output and its name (got %d)", n), NULL;
  for (int k = 0; k < n; k++) {
    if (!outputs[k] || !om__traced(outputs[k]) || outputs[k]->trace_value < 0 || outputs[k]->trace_value >= n_if)
      return om__trace_fail(OM_ERR_TRACE_INVALID_USAGE, "trace_finish: output %d is not one om_trace_run returned; a model "
                            "written as branches finishes with those outputs", k), NULL;
    if (!om__trace_check_name(tr, names[k], "trace_finish")) return NULL;
    for (int e = 0; e < k; e++)
      if (!strcmp(names[e], names[k]))
        return om__trace_fail(OM_ERR_TRACE_INVALID_USAGE, "trace_finish: name '%s' is used twice (already an output)", names[k]), NULL;
  }
  bool ok = true;
  for (int k = 0; ok && k < n; k++) {
    int v = vals[outputs[k]->trace_value];
    for (int e = 0; e < k && ok; e++)
      if (g->outputs.v[e] == v) { /* the same output twice: an Identity of its own */
        om_gvalue src = g->values.v[v];
        int copy = om__graph_value(g, src.dtype, src.ndim, src.shape);
        ok = copy >= 0 && om__graph_add_node(g, "Identity", om__arena_printf(&g->arena, "Identity_%d", k), &v, 1, &copy, 1, NULL, 0) >= 0;
        if (ok) memcpy(g->values.v[copy].dim_param, src.dim_param, sizeof src.dim_param), v = copy;
      }
    int *slot = ok ? OM_VEC_PUSH_SLOT(g->outputs) : NULL;
    ok = slot && (g->values.v[v].name = om__arena_strdup(&g->arena, names[k])) && rename_captures(g, v);
    if (slot) *slot = v;
  }
  if (!ok) return om__trace_fail(OM_ERR_OUT_OF_MEMORY, "trace_finish: out of memory"), NULL;
  tr->branched = NULL;
  om__state()->trace = NULL;
  om__trace_free(tr);
  return m;
}

int om_traced_symbol_branches(const om_traced_model *m, int i, int64_t *ranges, int max) {
  if (!m || i < 0 || i >= m->n_symbols) return om__fail(OM_ERR_INVALID_ARGUMENT, "traced_symbol_branches: no symbol %d", i), -1;
  const om_traced_sym *s = &m->symbols[i];
  for (int q = 0; ranges && q < s->n_branches && q < max; q++) ranges[2 * q] = s->branches[2 * q], ranges[2 * q + 1] = s->branches[2 * q + 1];
  return s->n_branches;
}

/* ---- calls made only at some sizes, traced where the model makes them (absent.c) ---- */

#define OM_REEXAMPLE_BYTES ((int64_t)256 << 20) /* the memory a re-example may take past 8 bytes per element its run logged */

int om__branch_reexample(om_trace *tr, const om_symbol *declared, om_trace_fn fn, void *ctx, om_tensor **outputs,
                         int max_outputs, int n, uint64_t seed, uint64_t offset) {
  om_thread_state *st = om__state();
  uint64_t after = st->rng_seed, after_offset = st->rng_offset;
  int n_in = tr->inputs.n, n_out = -1;
  cut c = {.tr = tr, .k = -1, .syms = calloc((size_t)n_in + 1, sizeof *c.syms)};
  om_tensor **outs = calloc((size_t)max_outputs, sizeof *outs), *in[64] = {0};
  if (!c.syms || !outs) return free(c.syms), free(outs), om__trace_fail(OM_ERR_OUT_OF_MEMORY, "trace_run: out of memory"), -1;
  char oom[256] = ""; /* the trace at those sizes ran out of memory: its message */
  int in_i, in_d;
  cut_syms(&c, &in_i, &in_d);
  /* the example's inputs at the run's sizes (each symbol's axes repeated or cut), made outside
   * the trace, which is put aside meanwhile: the new trace is one of its own */
  st->trace = NULL;
  bool ok = true;
  for (int i = 0; ok && i < n_in; i++) {
    om_tensor *x = om__alias(tr->inputs.v[i].traced);
    for (int k = 0; x && k < tr->symbols.n; k++) {
      om_tensor *y = piece_example(x, c.syms[i], k, tr->reexample_v[k] * tr->symbols.v[k].multiple);
      om_tensor_release(x);
      x = y;
    }
    ok = (in[i] = x) != NULL;
  }
  om_traced_model *m = NULL;
  if (ok && om_trace_begin()) {
    om_trace *sub = st->trace;
    sub->pieces = tr->pieces;
    sub->reexampled = true;
    for (int j = 0; ok && j < tr->symbols.n; j++) {
      const om_symbol *s = &declared[j];
      ok = om_trace_dim(s->name, s->multiple, s->min, s->max == INT64_MAX ? 0 : s->max);
    }
    for (int i = 0; ok && i < n_in; i++) {
      const om_gvalue *v = &tr->g.values.v[tr->g.inputs.v[i]];
      const char *axes[OM_MAX_DIMS] = {0};
      for (int d = 0; d < v->ndim; d++)
        if (c.syms[i][d] >= 0) axes[d] = tr->symbols.v[c.syms[i][d]].name;
      om_tensor *t = om_trace_input(tr->inputs.v[i].name, in[i], axes);
      ok = t != NULL;
      om_tensor_release(t);
    }
    for (int q = 0; ok && q < tr->params.n; q++) ok = om_trace_parameter(tr->params.v[q].name, tr->params.v[q].view);
    st->rng_seed = seed, st->rng_offset = offset;
    /* the trace at those sizes makes real tensors: at most OM_REEXAMPLE_BYTES more than the
     * elements its run logged could hold (runs.c chose the sizes within a multiple of the
     * example's elements), so that a model that needs more ends loudly (below) rather than
     * growing the heap until it fails anywhere */
    int64_t cap = st->bytes_cap, want = st->live_bytes + OM_REEXAMPLE_BYTES +
                                        (tr->reexample_cost < INT64_MAX / 16 ? 8 * tr->reexample_cost : INT64_MAX / 2);
    if (!cap || want < cap) st->bytes_cap = want;
    int got = ok ? om__trace_run(fn, ctx, outs, max_outputs, tr->runner) : -1;
    st->bytes_cap = cap;
    const char **names = got >= 0 ? om__alloc(sizeof *names * (size_t)(got ? got : 1), "trace_run") : NULL;
    for (int j = 0; names && j < got; j++)
      if (!(names[j] = om__arena_printf(&sub->g.arena, "out%d", j))) names[j] = "out";
    m = names ? om_trace_finish(outs, names, got) : NULL;
    free(names);
    if (got > 0) om__release_all(outs, got);
    if (!m && om_last_error() == OM_ERR_OUT_OF_MEMORY) snprintf(oom, sizeof oom, "%.250s", st->err_msg);
    if (om_trace_active()) om_trace_abort();
  }
  om__release_all(in, n_in);
  /* where it holds: the model run eagerly at the example gives the outputs, as the record run's */
  for (int i = 0; m && i < n_in; i++) {
    om_tensor *x = om__alias(tr->inputs.v[i].traced);
    if (x) x->trace_id = 0, x->trace_value = -1;
    if (!(in[i] = x)) om_traced_release(m), m = NULL;
  }
  st->rng_seed = seed, st->rng_offset = offset;
  if (m) n_out = fn(ctx, in, n_in, outs, max_outputs);
  om__release_all(in, n_in);
  st->trace = tr;
  st->rng_seed = after, st->rng_offset = after_offset;
  free(c.syms);
  if (!m || n_out < 0 || n_out > max_outputs || (n >= 0 && n_out != n)) { /* not so: as before */
    if (n_out > 0) om__release_all(outs, n_out < max_outputs ? n_out : max_outputs);
    free(outs);
    om_traced_release(m);
    om_error_kind kind = om_last_error();
    if (oom[0]) { /* the trace at those sizes ran out: said so, with the sizes, not as the heap's failure */
      char sizes[160];
      om__run_sizes(tr, tr->reexample_v, ~(uint64_t)0, sizes, sizeof sizes);
      return om__trace_fail(OM_ERR_TRACE_SYMBOLIC_SHAPE, "trace_run: the example's run lacks calls (a pad, a slice or an "
                            "interpolate) that the model makes at %s; traced again there, so that one graph holds where it "
                            "makes them and where not, the model ran out of memory (%.200s); trace with an example at which "
                            "it makes them", sizes, oom), -1;
    }
    if (kind == OM_ERR_OUT_OF_MEMORY) return om__trace_fail(kind, "trace_run: out of memory"), -1;
    if (kind == OM_ERR_TRACE_SYMBOLIC_SHAPE && strstr(st->err_msg, "declare"))
      snprintf(tr->reexample_msg, sizeof tr->reexample_msg, "%s", st->err_msg);
    om_clear_error();
    return 0;
  }
  if (n > 0) om__release_all(outputs, n);
  n = n_out;
  for (int j = 0; j < n; j++) { /* the example's outputs, as the model's (om__branch_finish) */
    om_tensor *t = om__alias(outs[j]);
    om_tensor_release(outs[j]);
    if (!(outputs[j] = t)) {
      om__release_all(outs + j + 1, n - j - 1), om__release_all(outputs, j), free(outs), om_traced_release(m);
      return om__trace_fail(OM_ERR_OUT_OF_MEMORY, "trace_run: out of memory"), -1;
    }
    t->trace_id = tr->id, t->trace_value = j;
  }
  free(outs);
  tr->branched = m;
  return n;
}
