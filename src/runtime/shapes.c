/* A graph's shapes checked at create, when an input size is symbolic (src/runtime/session.c's
 * plan_at_create plans the graph when every size is fixed). Shapes are inferred from the inputs'
 * declared ones with a dim per axis that is a fixed size, a graph input's symbol (two axes of one
 * name are the same size at every run) or a size known only at run time. A node whose inputs
 * contradict each other at every size (fixed sizes that do not broadcast, a product's unequal
 * inner sizes, a Conv's channels not its weight's, an axis past the rank), or a declared output
 * whose type, rank or a fixed size contradicts its node's at every size, is then Format at
 * create, as onnxruntime refuses it when it loads the model. Only a contradiction that holds at
 * every size refuses: sizes of which one is a symbol (equal at some size), a fixed size declared
 * where the node computes a symbol's, or a symbol declared where it computes a fixed size, are
 * left to the first run's checks (the op's, bind_node's), as is every node with no row below (its
 * shape then is not known).
 *
 * One row per ONNX op whose shape this infers, as the op table has one per op it runs; an op's
 * row here says how its output's type and dims follow from its inputs', nothing more. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/onnx_ops.h"

enum { ANY = -1 }; /* a size known only at run time; a symbol k is -2 - k, a fixed size itself */

typedef struct sshape {
  bool known; /* rank and dims */
  int type;   /* ONNX element type, 0 when not known */
  int ndim;
  int64_t d[OM_MAX_DIMS];
} sshape;

typedef struct sctx {
  const om_graph *g;
  const om_gnode *n;
  sshape *v;          /* each value's */
  const char **syms;  /* the symbols' names, by number */
  int n_syms;
  char why[256];      /* the node's inputs contradict each other at every size: how ("" none) */
} sctx;

/* The node's inputs contradict each other at every size: why (the first one said is kept). */
static void contradicts(sctx *c, const char *fmt, ...) {
  if (c->why[0]) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(c->why, sizeof c->why, fmt, ap);
  va_end(ap);
}

/* Fixed sizes a and b (of the inputs named) must be equal at every size: a contradiction where both
 * are fixed and differ; a symbol may be either. */
static void must_equal(sctx *c, int64_t a, int64_t b, const char *what) {
  if (a >= 0 && b >= 0 && a != b) contradicts(c, "%s: %lld and %lld", what, (long long)a, (long long)b);
}

static const sshape *in(const sctx *c, int i) {
  static const sshape none = {0};
  return i < c->n->n_in && c->n->in[i] >= 0 ? &c->v[c->n->in[i]] : &none;
}

static const om_gattr *attr(const sctx *c, const char *name, om_gattr_type type) {
  for (int k = 0; k < c->n->n_attrs; k++)
    if (!strcmp(c->n->attrs[k].name, name)) return c->n->attrs[k].type == type ? &c->n->attrs[k] : NULL;
  return NULL;
}
static int64_t attr_i(const sctx *c, const char *name, int64_t def) {
  const om_gattr *a = attr(c, name, OM_GATTR_INT);
  return a ? a->i : def;
}

/* The int64 initializer that input i is (its values, n of them, at most OM_MAX_DIMS), else false. */
static bool const_ints(const sctx *c, int i, int64_t *v, int *n) {
  int id = i < c->n->n_in ? c->n->in[i] : -1;
  const om_gvalue *gv = id >= 0 ? &c->g->values.v[id] : NULL;
  const om_tensor *t = gv && gv->init >= 0 ? c->g->inits.v[gv->init].tensor : NULL;
  if (!t || t->dtype != OM_INT64 || t->ndim > 1 || om_tensor_numel(t) > OM_MAX_DIMS) return false;
  *n = (int)om_tensor_numel(t);
  for (int k = 0; k < *n; k++) v[k] = (int64_t)om__get_flat(t, k);
  return true;
}

static bool axis_in(int64_t *axis, int ndim) {
  if (*axis < 0) *axis += ndim;
  return *axis >= 0 && *axis < ndim;
}

/* axis (an attribute, for a known rank ndim) in range, made non-negative; else a contradiction. */
static bool axis_of(sctx *c, int64_t *axis, int ndim, const char *name) {
  int64_t given = *axis;
  if (axis_in(axis, ndim)) return true;
  contradicts(c, "%s %lld is outside [%d, %d] for an input of rank %d", name, (long long)given, -ndim, ndim - 1, ndim);
  return false;
}

/* Two dims that broadcast: what the run gives where it runs at all. */
static int64_t broadcast_dim(int64_t a, int64_t b) {
  if (a == b || b == 1) return a;
  if (a == 1) return b;
  if (a >= 0) return a; /* b is a or 1 at a size that runs */
  return b >= 0 ? b : ANY;
}

/* Two dims that must be equal: the fixed one, else either. */
static int64_t merge_dim(int64_t a, int64_t b) { return a >= 0 ? a : b; }

static int64_t sum_dim(int64_t a, int64_t b) { return a >= 0 && b >= 0 ? a + b : ANY; }

/* ---- the rows ---- */

static void same(sctx *c, sshape *o) { *o = *in(c, 0); }

static void broadcast(sctx *c, sshape *o) {
  int first = !strcmp(c->n->op_type, "Where"); /* Where's condition is bool; its type is the values' */
  o->type = in(c, first)->type;
  o->known = true;
  o->ndim = 0;
  for (int i = 0; i < c->n->n_in; i++) o->ndim = in(c, i)->ndim > o->ndim ? in(c, i)->ndim : o->ndim;
  for (int d = 0; d < o->ndim; d++) o->d[d] = 1;
  for (int i = 0; i < c->n->n_in; i++) {
    const sshape *s = in(c, i);
    o->known &= s->known;
    for (int d = 0; s->known && d < s->ndim; d++) o->d[o->ndim - s->ndim + d] = broadcast_dim(o->d[o->ndim - s->ndim + d], s->d[d]);
  }
  for (int i = 0; i < c->n->n_in; i++) /* two fixed sizes of an axis, neither 1, that differ: no size broadcasts them */
    for (int j = i + 1; j < c->n->n_in; j++) {
      const sshape *a = in(c, i), *b = in(c, j);
      for (int d = 1; a->known && b->known && d <= a->ndim && d <= b->ndim; d++) {
        int64_t x = a->d[a->ndim - d], y = b->d[b->ndim - d];
        if (x >= 0 && y >= 0 && x != y && x != 1 && y != 1)
          contradicts(c, "inputs %d and %d do not broadcast: sizes %lld and %lld at axis -%d", i, j, (long long)x, (long long)y, d);
      }
    }
}

static void compare(sctx *c, sshape *o) {
  broadcast(c, o);
  o->type = 9; /* BOOL */
}

static void cast(sctx *c, sshape *o) {
  *o = *in(c, 0);
  o->type = (int)attr_i(c, "to", 0);
}

static void matmul(sctx *c, sshape *o) {
  const sshape *a = in(c, 0), *b = in(c, 1);
  o->type = a->type;
  if (!a->known || !b->known || a->ndim < 1 || b->ndim < 1) return;
  sshape ba = {.known = true, .ndim = a->ndim > 2 ? a->ndim - 2 : 0}, bb = {.known = true, .ndim = b->ndim > 2 ? b->ndim - 2 : 0};
  memcpy(ba.d, a->d, sizeof(int64_t) * (size_t)ba.ndim);
  memcpy(bb.d, b->d, sizeof(int64_t) * (size_t)bb.ndim);
  o->ndim = ba.ndim > bb.ndim ? ba.ndim : bb.ndim;
  for (int d = 0; d < o->ndim; d++) {
    int64_t x = d - (o->ndim - ba.ndim) >= 0 ? ba.d[d - (o->ndim - ba.ndim)] : 1, y = d - (o->ndim - bb.ndim) >= 0 ? bb.d[d - (o->ndim - bb.ndim)] : 1;
    o->d[d] = broadcast_dim(x, y);
  }
  if (a->ndim >= 2) o->d[o->ndim++] = a->d[a->ndim - 2];
  if (b->ndim >= 2) o->d[o->ndim++] = b->d[b->ndim - 1];
  o->known = true;
  must_equal(c, a->d[a->ndim - 1], b->d[b->ndim >= 2 ? b->ndim - 2 : 0], "the inner sizes of the product differ");
  for (int d = 1; d <= ba.ndim && d <= bb.ndim; d++) {
    int64_t x = ba.d[ba.ndim - d], y = bb.d[bb.ndim - d];
    if (x >= 0 && y >= 0 && x != y && x != 1 && y != 1)
      contradicts(c, "the batch sizes do not broadcast: %lld and %lld at axis -%d", (long long)x, (long long)y, d + 2);
  }
}

static void gemm(sctx *c, sshape *o) {
  const sshape *a = in(c, 0), *b = in(c, 1);
  o->type = a->type;
  if (!a->known || !b->known || a->ndim != 2 || b->ndim != 2) return;
  o->known = true, o->ndim = 2;
  o->d[0] = a->d[attr_i(c, "transA", 0) ? 1 : 0];
  o->d[1] = b->d[attr_i(c, "transB", 0) ? 0 : 1];
  must_equal(c, a->d[attr_i(c, "transA", 0) ? 0 : 1], b->d[attr_i(c, "transB", 0) ? 1 : 0], "the inner sizes of the product differ");
}

static void transpose(sctx *c, sshape *o) {
  const sshape *a = in(c, 0);
  const om_gattr *perm = attr(c, "perm", OM_GATTR_INTS);
  o->type = a->type;
  if (!a->known) return;
  if (perm && perm->n != a->ndim) {
    contradicts(c, "perm has %d entries for an input of rank %d", perm->n, a->ndim);
    return;
  }
  o->ndim = a->ndim;
  bool seen[OM_MAX_DIMS] = {0};
  for (int d = 0; d < a->ndim; d++) {
    int64_t p = perm ? perm->ints[d] : a->ndim - 1 - d;
    if (!axis_of(c, &p, a->ndim, "perm's axis")) return;
    if (seen[p]) {
      contradicts(c, "perm names axis %lld twice", (long long)p);
      return;
    }
    seen[p] = true;
    o->d[d] = a->d[p];
  }
  o->known = true;
}

/* The product of dims [from, to) of s, ANY when one is not fixed (0 when one is 0). */
static int64_t product(const sshape *s, int from, int to) {
  int64_t p = 1;
  bool any = false;
  for (int d = from; d < to; d++) {
    if (s->d[d] == 0) return 0;
    if (s->d[d] < 0) any = true;
    else p *= s->d[d];
  }
  return any ? ANY : p;
}

static void reshape(sctx *c, sshape *o) {
  const sshape *a = in(c, 0);
  int64_t to[OM_MAX_DIMS];
  int n;
  o->type = a->type;
  if (!const_ints(c, 1, to, &n)) return;
  bool zero = attr_i(c, "allowzero", 0) != 0;
  int64_t rest = 1;
  int free = -1;
  o->ndim = n;
  for (int d = 0; d < n; d++) {
    if (to[d] < -1) return; /* the run refuses it */
    o->d[d] = to[d] == 0 && !zero ? (a->known && d < a->ndim ? a->d[d] : ANY) : to[d];
    if (to[d] == -1) free = d;
    else if (o->d[d] >= 0) rest *= o->d[d];
    else rest = 0; /* a size not known: the free one is not known either */
  }
  if (free >= 0) {
    int64_t all = a->known ? product(a, 0, a->ndim) : ANY;
    o->d[free] = all >= 0 && rest > 0 && all % rest == 0 ? all / rest : ANY;
  }
  o->known = true;
}

static void flatten(sctx *c, sshape *o) {
  const sshape *a = in(c, 0);
  int64_t axis = attr_i(c, "axis", 1);
  o->type = a->type;
  if (!a->known) return;
  if (axis != a->ndim && !axis_in(&axis, a->ndim)) { /* Flatten's axis may be the rank too */
    contradicts(c, "axis %lld is outside [%d, %d] for an input of rank %d", (long long)attr_i(c, "axis", 1), -a->ndim, a->ndim, a->ndim);
    return;
  }
  o->known = true, o->ndim = 2;
  o->d[0] = product(a, 0, (int)axis), o->d[1] = product(a, (int)axis, a->ndim);
}

static void concat(sctx *c, sshape *o) {
  const sshape *a = in(c, 0);
  int64_t axis = attr_i(c, "axis", 0);
  *o = *a;
  if (!a->known || !axis_of(c, &axis, a->ndim, "axis")) return (void)(o->known = false);
  for (int i = 1; i < c->n->n_in; i++) {
    const sshape *s = in(c, i);
    if (s->known && s->ndim != a->ndim) contradicts(c, "input %d has rank %d, input 0 rank %d", i, s->ndim, a->ndim);
    if (!s->known || s->ndim != a->ndim) return (void)(o->known = false);
    for (int d = 0; d < a->ndim; d++) {
      if (d != axis && o->d[d] >= 0 && s->d[d] >= 0 && o->d[d] != s->d[d])
        contradicts(c, "input %d has size %lld at axis %d, where the others have %lld", i, (long long)s->d[d], d, (long long)o->d[d]);
      o->d[d] = d == axis ? sum_dim(o->d[d], s->d[d]) : merge_dim(o->d[d], s->d[d]);
    }
  }
}

/* Expand by a constant shape: the input broadcast with it (a weight the demo page leaves out of a
 * file it views is an Expand of a zero to the weight's shape: its shape is known as the weight's). */
static void expand(sctx *c, sshape *o) {
  const sshape *a = in(c, 0);
  int64_t to[OM_MAX_DIMS];
  int n;
  o->type = a->type;
  if (!a->known || !const_ints(c, 1, to, &n)) return;
  o->ndim = a->ndim > n ? a->ndim : n;
  for (int d = 0; d < o->ndim; d++) o->d[d] = 1;
  for (int d = 0; d < a->ndim; d++) o->d[o->ndim - a->ndim + d] = a->d[d];
  for (int d = 0; d < n; d++) {
    int64_t *x = &o->d[o->ndim - n + d];
    if (to[d] < 0) return; /* the run refuses it */
    if (*x >= 0 && *x != to[d] && *x != 1 && to[d] != 1)
      contradicts(c, "size %lld does not broadcast to %lld at axis -%d", (long long)*x, (long long)to[d], n - d);
    *x = broadcast_dim(*x, to[d]);
  }
  o->known = true;
}

/* Softmax, LogSoftmax: the input's shape; the axis within its rank. */
static void softmax(sctx *c, sshape *o) {
  *o = *in(c, 0);
  int64_t axis = attr_i(c, "axis", -1);
  if (o->known) axis_of(c, &axis, o->ndim, "axis");
}

/* A convolution's or pool's output size along a spatial axis of size x, or ANY. */
static int64_t window_out(const char *pad, int64_t x, int64_t k, int64_t stride, int64_t dil, int64_t pads, bool ceil) {
  if (x < 0 || stride < 1 || dil < 1 || k < 1) return ANY;
  if (!strcmp(pad, "SAME_UPPER") || !strcmp(pad, "SAME_LOWER")) return (x + stride - 1) / stride;
  int64_t span = x + (strcmp(pad, "VALID") ? pads : 0) - dil * (k - 1) - 1;
  if (span < 0) return ANY; /* the run refuses it */
  return (ceil ? (span + stride - 1) / stride : span / stride) + 1;
}

/* Conv, MaxPool, AveragePool: N, the channels (Conv: the weight's count), the spatial sizes. */
static void windows(sctx *c, sshape *o) {
  const sshape *x = in(c, 0), *w = in(c, 1);
  bool conv = !strcmp(c->n->op_type, "Conv");
  o->type = x->type;
  if (!x->known || x->ndim < 3 || (conv && (!w->known || w->ndim != x->ndim))) return;
  int sp = x->ndim - 2;
  const om_gattr *ks = attr(c, "kernel_shape", OM_GATTR_INTS), *st = attr(c, "strides", OM_GATTR_INTS),
                 *dl = attr(c, "dilations", OM_GATTR_INTS), *pd = attr(c, "pads", OM_GATTR_INTS), *ap = attr(c, "auto_pad", OM_GATTR_STRING);
  if ((ks && ks->n != sp) || (!ks && !conv) || (st && st->n != sp) || (dl && dl->n != sp) || (pd && pd->n != 2 * sp)) return;
  const char *pad = ap ? ap->s : "NOTSET";
  bool ceil = attr_i(c, "ceil_mode", 0) != 0;
  int64_t group = attr_i(c, "group", 1);
  if (conv && x->d[1] >= 0 && w->d[1] >= 0 && group >= 1 && x->d[1] != w->d[1] * group)
    contradicts(c, "the input has %lld channels, and the weight takes %lld (%lld a group, %lld groups)", (long long)x->d[1],
                (long long)(w->d[1] * group), (long long)w->d[1], (long long)group);
  for (int d = 0; conv && ks && d < sp; d++) must_equal(c, ks->ints[d], w->d[2 + d], "kernel_shape and the weight's spatial size differ");
  o->known = true, o->ndim = x->ndim;
  o->d[0] = x->d[0];
  o->d[1] = conv ? w->d[0] : x->d[1];
  for (int d = 0; d < sp; d++) {
    int64_t k = ks ? ks->ints[d] : w->d[2 + d];
    o->d[2 + d] = k < 0 ? ANY
                        : window_out(pad, x->d[2 + d], k, st ? st->ints[d] : 1, dl ? dl->ints[d] : 1, pd ? pd->ints[d] + pd->ints[sp + d] : 0,
                                     ceil);
  }
}

static void global_pool(sctx *c, sshape *o) {
  *o = *in(c, 0);
  for (int d = 2; o->known && d < o->ndim; d++) o->d[d] = 1;
  o->known &= o->ndim >= 2;
}

static void nonzero(sctx *c, sshape *o) { /* [rank, count]: the count is the values' */
  const sshape *a = in(c, 0);
  *o = (sshape){.known = a->known, .type = 7 /* INT64 */, .ndim = 2, .d = {a->ndim, ANY}};
}

typedef struct srow {
  const char *op_type;
  void (*rule)(sctx *c, sshape *o); /* output 0's type and shape from the inputs' */
} srow;

static const srow rows[] = {
    {"Abs", same}, {"Acos", same}, {"Add", broadcast}, {"And", compare}, {"Asin", same}, {"Atan", same},
    {"AveragePool", windows}, {"Cast", cast}, {"Ceil", same}, {"Clip", same}, {"Concat", concat}, {"Conv", windows},
    {"Cos", same}, {"Div", broadcast}, {"Elu", same}, {"Equal", compare}, {"Erf", same}, {"Exp", same}, {"Expand", expand},
    {"Flatten", flatten}, {"Floor", same}, {"Gelu", same}, {"Gemm", gemm}, {"GlobalAveragePool", global_pool},
    {"GlobalMaxPool", global_pool}, {"Greater", compare}, {"GreaterOrEqual", compare}, {"HardSigmoid", same},
    {"HardSwish", same}, {"Identity", same}, {"LeakyRelu", same}, {"Less", compare}, {"LessOrEqual", compare},
    {"Log", same}, {"LogSoftmax", softmax}, {"MatMul", matmul}, {"Max", broadcast}, {"MaxPool", windows}, {"Mean", broadcast},
    {"Min", broadcast}, {"Mul", broadcast}, {"Neg", same}, {"NonZero", nonzero}, {"Not", same}, {"Or", compare}, {"Pow", broadcast},
    {"PRelu", broadcast}, {"Reciprocal", same}, {"Relu", same}, {"Reshape", reshape}, {"Round", same},
    {"Selu", same}, {"Sigmoid", same}, {"Sign", same}, {"Sin", same}, {"Softmax", softmax}, {"Softplus", same},
    {"Softsign", same}, {"Sqrt", same}, {"Sub", broadcast}, {"Sum", broadcast}, {"Tan", same}, {"Tanh", same},
    {"Transpose", transpose}, {"Where", broadcast}, {"Xor", compare},
};

static const srow *row_of(const char *op_type) {
  for (size_t k = 0; k < sizeof rows / sizeof *rows; k++)
    if (!strcmp(rows[k].op_type, op_type)) return &rows[k];
  return NULL;
}

/* s written out: a fixed size as itself, a symbol by name, a size known only at run time as '?'. */
static void shape_str(const sctx *c, char *out, size_t cap, const sshape *s) {
  size_t n = (size_t)snprintf(out, cap, "[");
  for (int d = 0; d < s->ndim && n < cap; d++) {
    const char *sep = d ? "," : "";
    int64_t v = s->d[d];
    n += (size_t)(v >= 0 ? snprintf(out + n, cap - n, "%s%lld", sep, (long long)v)
                  : v == ANY ? snprintf(out + n, cap - n, "%s?", sep)
                             : snprintf(out + n, cap - n, "%s%s", sep, c->syms[-2 - v]));
  }
  if (n < cap) snprintf(out + n, cap - n, "]");
}

/* Whether the dtype that holds ONNX type a (what a rule computes it in) holds b too. */
static bool holds_both(int a, int b) {
  static const om_dtype dtypes[] = {OM_FLOAT32, OM_INT64, OM_FLOAT64, OM_BOOL};
  for (int k = 0; k < 4; k++)
    if (om__elem_holds(dtypes[k], a)) return om__elem_holds(dtypes[k], b);
  return true; /* a type no dtype holds (strings): left to the first run */
}

/* The number of symbol name, added when new; -1 past the room (the dim is then ANY). */
static int symbol(sctx *c, const char *name, int room) {
  for (int k = 0; k < c->n_syms; k++)
    if (!strcmp(c->syms[k], name)) return k;
  if (c->n_syms == room) return -1;
  c->syms[c->n_syms] = name;
  return c->n_syms++;
}

bool om__check_shapes(const om_graph *g) {
  int room = g->inputs.n * OM_MAX_DIMS;
  sctx c = {.g = g, .v = calloc((size_t)g->values.n + 1, sizeof(sshape)), .syms = calloc((size_t)room + 1, sizeof(char *))};
  if (!c.v || !c.syms) {
    free(c.v), free(c.syms);
    return om__fail(OM_ERR_OUT_OF_MEMORY, "session: out of memory inferring %d values' shapes", g->values.n);
  }
  for (int k = 0; k < g->values.n; k++) { /* the initializers' */
    const om_gvalue *v = &g->values.v[k];
    const om_tensor *t = v->init >= 0 ? g->inits.v[v->init].tensor : NULL;
    if (t) c.v[k] = (sshape){.known = true, .type = v->etype ? v->etype : om__elem_own(t->dtype), .ndim = t->ndim};
    if (t) memcpy(c.v[k].d, t->shape, sizeof(int64_t) * (size_t)t->ndim);
  }
  for (int j = 0; j < g->inputs.n; j++) { /* the inputs' as declared (one with a default too: a feed may replace it) */
    const om_gvalue *v = &g->values.v[g->inputs.v[j]];
    sshape *s = &c.v[g->inputs.v[j]];
    *s = (sshape){0};
    if (v->kind != OM_GKIND_TENSOR || v->etype == OM_ONNX_STRING) continue;
    s->type = v->etype ? v->etype : om__elem_own(v->dtype);
    s->known = true, s->ndim = v->ndim;
    for (int d = 0; d < s->ndim; d++) {
      int sym = v->dim_param[d] && strcmp(v->dim_param[d], "?") ? symbol(&c, v->dim_param[d], room) : -1; /* "?": unnamed, its own size */
      s->d[d] = !v->dim_param[d] ? v->shape[d] : sym >= 0 ? -2 - (int64_t)sym : ANY;
    }
  }
  bool ok = true;
  for (int k = 0; ok && k < g->nodes.n; k++) {
    const om_gnode *n = &g->nodes.v[k];
    const srow *r = row_of(n->op_type);
    if (!r || n->n_out < 1 || n->out[0] < 0) continue;
    c.n = n;
    c.why[0] = 0;
    sshape o = {0};
    r->rule(&c, &o);
    c.v[n->out[0]] = o;
    if (c.why[0]) {
      ok = om__fail(OM_ERR_FORMAT, "session: node '%s' (%s) fails at every size the graph's inputs declare: %s", n->name, n->op_type, c.why);
      break;
    }
    const om_gvalue *v = &g->values.v[n->out[0]];
    char have[128], want[128];
    if (o.type && v->etype && !holds_both(o.type, v->etype)) /* bind_node narrows to a declared type the node's dtype holds */
      ok = om__fail(OM_ERR_FORMAT, "session: node '%s' (%s): output 0 ('%s') is %s at every size, and the graph declares it %s", n->name,
                    n->op_type, v->name, om__elem_name(o.type), om__elem_name(v->etype));
    bool fits = !o.known || !v->decl_shape || o.ndim == v->decl_ndim;
    for (int d = 0; fits && o.known && v->decl_shape && d < o.ndim; d++) fits = v->decl_shape[d] < 0 || o.d[d] < 0 || o.d[d] == v->decl_shape[d];
    if (ok && !fits) {
      shape_str(&c, have, sizeof have, &o);
      ok = om__fail(OM_ERR_FORMAT, "session: node '%s' (%s): output 0 ('%s') has shape %s at every size, and the graph declares %s (-1: any size)",
                    n->name, n->op_type, v->name, have, om__shape_str(want, sizeof want, v->decl_shape, v->decl_ndim));
    }
  }
  free(c.v), free(c.syms);
  return ok;
}
