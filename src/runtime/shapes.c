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
#include <math.h>
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

/* The initializer that input i is, else NULL (borrowed). */
static const om_tensor *init_of(const sctx *c, int i) {
  int id = i < c->n->n_in ? c->n->in[i] : -1;
  const om_gvalue *gv = id >= 0 ? &c->g->values.v[id] : NULL;
  return gv && gv->init >= 0 ? c->g->inits.v[gv->init].tensor : NULL;
}

/* The int64 initializer that input i is, else NULL (borrowed). */
static const om_tensor *const_of(const sctx *c, int i) {
  const om_tensor *t = init_of(c, i);
  return t && t->dtype == OM_INT64 ? t : NULL;
}

/* Element k (row-major) of t, an int64 tensor, exactly: om__get_flat's double would round a value
 * past 2^53, and INT64_MAX (an exporter's "to the end") to 2^63, which no int64 holds. */
static int64_t int_at(const om_tensor *t, int64_t k) {
  int64_t at = 0;
  for (int d = t->ndim - 1; d >= 0; d--) at += k % t->shape[d] * t->strides[d], k /= t->shape[d];
  return ((const int64_t *)om__data(t))[at];
}

/* The int64 initializer that input i is (its values, n of them, at most OM_MAX_DIMS), else false. */
static bool const_ints(const sctx *c, int i, int64_t *v, int *n) {
  const om_tensor *t = const_of(c, i);
  if (!t || t->ndim > 1 || om_tensor_numel(t) > OM_MAX_DIMS) return false;
  *n = (int)om_tensor_numel(t);
  for (int k = 0; k < *n; k++) v[k] = int_at(t, k);
  return true;
}

static bool axis_in(int64_t *axis, int ndim) {
  if (*axis < 0) *axis += ndim;
  return *axis >= 0 && *axis < ndim;
}

/* axis in range for a rank ndim, that of `whose` ("an input", "the result"), made non-negative;
 * else a contradiction. */
static bool axis_of_rank(sctx *c, int64_t *axis, int ndim, const char *name, const char *whose) {
  int64_t given = *axis;
  if (axis_in(axis, ndim)) return true;
  contradicts(c, "%s %lld is outside [%d, %d] for %s of rank %d", name, (long long)given, -ndim, ndim - 1, whose, ndim);
  return false;
}

/* axis (an attribute's or a constant input's, for a known rank ndim: the input's) in range, made
 * non-negative; else a contradiction. */
static bool axis_of(sctx *c, int64_t *axis, int ndim, const char *name) {
  return axis_of_rank(c, axis, ndim, name, "an input");
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

static int64_t sum_dim(int64_t a, int64_t b) {
  int64_t s;
  return a >= 0 && b >= 0 && !__builtin_add_overflow(a, b, &s) ? s : ANY;
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
    else if (__builtin_mul_overflow(p, s->d[d], &p)) any = true; /* declared sizes no run can have */
  }
  return any ? ANY : p;
}

/* An element count: a fixed factor times the symbols in sym (their codes, one per axis); false
 * where a size is known only at run time or the factor overflows. */
typedef struct count {
  int64_t fixed;
  int n;
  int64_t sym[OM_MAX_DIMS];
} count;

static bool count_of(const int64_t *d, int ndim, int skip, count *k) {
  *k = (count){.fixed = 1};
  for (int j = 0; j < ndim; j++) {
    if (j == skip) continue;
    if (d[j] == ANY || (d[j] >= 0 && __builtin_mul_overflow(k->fixed, d[j], &k->fixed))) return false;
    if (d[j] < 0) k->sym[k->n++] = d[j];
  }
  return true;
}

/* Drops the symbols a and b share (one for one); returns how many pairs went. */
static int cancel(count *a, count *b) {
  int gone = 0;
  for (int i = 0; i < a->n; i++)
    for (int j = 0; j < b->n; j++)
      if (a->sym[i] == b->sym[j]) {
        a->sym[i--] = a->sym[--a->n], b->sym[j] = b->sym[--b->n], gone++;
        break;
      }
  return gone;
}

/* Whether f times some product of sizes (any count >= 0) can be x. */
static bool multiple_of(int64_t x, int64_t f) { return x == 0 || (f != 0 && x % f == 0); }

/* Whether an input of count in can be reshaped to one of count out (free: out has a -1, whose size
 * is in's count over out's, out's not 0) at some sizes of the symbols (each >= 0). */
static bool counts_fit(count in, count out, bool free) {
  bool shared = cancel(&in, &out) > 0;
  if (free) return in.n || out.fixed <= 0 || in.fixed % out.fixed == 0; /* a symbol left in the input may be 0, or out's multiple */
  if (shared || (in.n && out.n)) return true;                           /* all those symbols 0: both counts 0 */
  return in.n ? multiple_of(out.fixed, in.fixed) : out.n ? multiple_of(in.fixed, out.fixed) : in.fixed == out.fixed;
}

/* Reshape by a constant shape: no size below -1, at most one -1, none with a 0 under allowzero, a
 * 0 (the input's size) within the input's rank, and element counts that agree at some size. */
static void reshape(sctx *c, sshape *o) {
  const sshape *a = in(c, 0);
  int64_t to[OM_MAX_DIMS];
  int n;
  o->type = a->type;
  if (!const_ints(c, 1, to, &n)) return;
  bool zero = attr_i(c, "allowzero", 0) != 0, zeros = false;
  int64_t rest = 1;
  int free = -1;
  o->ndim = n;
  for (int d = 0; d < n; d++) {
    if (to[d] < -1) {
      contradicts(c, "shape's size %lld at dim %d is below -1", (long long)to[d], d);
      return;
    }
    if (to[d] == -1 && free >= 0) {
      contradicts(c, "shape has -1 at dims %d and %d (one size at most is inferred)", free, d);
      return;
    }
    if (to[d] == 0 && !zero && a->known && d >= a->ndim) {
      contradicts(c, "shape's 0 at dim %d copies the input's size there, and the input has rank %d", d, a->ndim);
      return;
    }
    o->d[d] = to[d] == 0 && !zero ? (a->known ? a->d[d] : ANY) : to[d];
    zeros |= to[d] == 0 && zero;
    if (to[d] == -1) free = d;
    else if (o->d[d] < 0 || __builtin_mul_overflow(rest, o->d[d], &rest)) rest = 0; /* a size not known: the free one is not known either */
  }
  if (free >= 0 && zeros) {
    contradicts(c, "shape has a 0 (allowzero 1: a size of 0) and a -1, which no count fits");
    return;
  }
  count ci, co;
  if (free >= 0) o->d[free] = ANY;
  if (a->known && count_of(a->d, a->ndim, -1, &ci) && count_of(o->d, n, free, &co) && !counts_fit(ci, co, free >= 0)) {
    char from[128], into[128];
    shape_str(c, from, sizeof from, a), shape_str(c, into, sizeof into, o);
    contradicts(c, "the input's %s elements fill %s at no size", from, into);
    return;
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
  o->known = false; /* until every input is read */
  if (!a->known || !axis_of(c, &axis, a->ndim, "axis")) return;
  for (int i = 1; i < c->n->n_in; i++) {
    const sshape *s = in(c, i);
    if (s->known && s->ndim != a->ndim) contradicts(c, "input %d has rank %d, input 0 rank %d", i, s->ndim, a->ndim);
    if (!s->known || s->ndim != a->ndim) return;
    for (int d = 0; d < a->ndim; d++) {
      if (d != axis && o->d[d] >= 0 && s->d[d] >= 0 && o->d[d] != s->d[d])
        contradicts(c, "input %d has size %lld at axis %d, where the others have %lld", i, (long long)s->d[d], d, (long long)o->d[d]);
      o->d[d] = d == axis ? sum_dim(o->d[d], s->d[d]) : merge_dim(o->d[d], s->d[d]);
    }
  }
  o->known = true;
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

/* Whether input i is given (not left out, not ''). */
static bool given(const sctx *c, int i) { return i < c->n->n_in && c->n->in[i] >= 0; }

/* The axes of constant input i (or none, *n 0, where it is left out), each within rank ndim and
 * made non-negative, marked in on; twice set when one is named twice. False where they are not
 * known when the graph is made, or one is out of range (a contradiction). */
static bool axes_in(sctx *c, int i, int ndim, const char *whose, bool *on, bool *twice) {
  int64_t axes[OM_MAX_DIMS];
  int n = 0;
  *twice = false;
  if (given(c, i) && !const_ints(c, i, axes, &n)) return false;
  for (int k = 0; k < n; k++) {
    if (!axis_of_rank(c, &axes[k], ndim, "axis", whose)) return false;
    *twice |= on[axes[k]];
    on[axes[k]] = true;
  }
  return true;
}

/* a's dims but those in on, which stay as 1 with keep. */
static void drop_axes(const sshape *a, const bool *on, bool keep, sshape *o) {
  o->known = true, o->ndim = 0;
  for (int d = 0; d < a->ndim; d++)
    if (!on[d] || keep) o->d[o->ndim++] = on[d] ? 1 : a->d[d];
}

/* Squeeze: the axes given, each of size 1 or a symbol's (which may be 1; one named twice is
 * squeezed once, as onnxruntime does), else every axis of size 1 (a symbol's axis then leaves the
 * rank unknown: it is 1 at some sizes). */
static void squeeze(sctx *c, sshape *o) {
  const sshape *a = in(c, 0);
  bool on[OM_MAX_DIMS] = {false}, twice, any = false;
  o->type = a->type;
  if (!a->known || !axes_in(c, 1, a->ndim, "an input", on, &twice)) return;
  for (int d = 0; d < a->ndim; d++) {
    if (on[d] && a->d[d] >= 0 && a->d[d] != 1) {
      contradicts(c, "axis %d has size %lld, not 1", d, (long long)a->d[d]);
      return;
    }
    any |= on[d];
  }
  for (int d = 0; !any && d < a->ndim; d++) {
    if (a->d[d] < 0) return;
    on[d] = a->d[d] == 1;
  }
  drop_axes(a, on, false, o);
}

/* Unsqueeze: each axis within the result's rank, named once. */
static void unsqueeze(sctx *c, sshape *o) {
  const sshape *a = in(c, 0);
  const om_tensor *t = const_of(c, 1);
  bool on[OM_MAX_DIMS] = {false}, twice;
  o->type = a->type;
  if (!a->known || !t || a->ndim + om_tensor_numel(t) > OM_MAX_DIMS) return;
  int nd = a->ndim + (int)om_tensor_numel(t);
  if (!axes_in(c, 1, nd, "the result", on, &twice)) return;
  if (twice) {
    contradicts(c, "axes name one axis twice");
    return;
  }
  o->known = true, o->ndim = nd;
  for (int d = 0, j = 0; d < nd; d++) o->d[d] = on[d] ? 1 : a->d[j++];
}

/* Slice by constant starts and ends (axes and steps constant or left out): the four of one length,
 * each axis in range and named once, no step 0; a fixed size sliced as the run slices it, a
 * symbol's whole (start 0, step 1, an end past any size) or at a size known only at run time. */
static void slice(sctx *c, sshape *o) {
  const sshape *a = in(c, 0);
  int64_t v[4][OM_MAX_DIMS]; /* starts, ends, axes, steps */
  int n[4] = {-1, -1, -1, -1};
  bool known = true, on[OM_MAX_DIMS] = {false}, twice;
  static const char *const names[] = {"starts", "ends", "axes", "steps"};
  o->type = a->type;
  if (!a->known) return;
  for (int i = 0; i < 4; i++)
    if (given(c, i + 1)) known &= const_ints(c, i + 1, v[i], &n[i]);
  for (int i = 1; i < 4; i++)
    if (n[i] >= 0 && n[0] >= 0 && n[i] != n[0]) {
      contradicts(c, "starts has %d entries and %s %d", n[0], names[i], n[i]);
      return;
    }
  if (n[2] >= 0 && !axes_in(c, 3, a->ndim, "an input", on, &twice)) return;
  if (n[2] >= 0 && twice) {
    contradicts(c, "axes name one axis twice");
    return;
  }
  for (int k = 0; k < n[3]; k++)
    if (!v[3][k]) {
      contradicts(c, "steps' entry %d is 0", k);
      return;
    }
  if (!known || n[0] < 0 || (n[2] < 0 && n[0] > a->ndim)) return;
  *o = *a;
  for (int k = 0; k < n[0]; k++) {
    int64_t axis = n[2] >= 0 ? v[2][k] : k, step = n[3] >= 0 ? v[3][k] : 1, dim, s = v[0][k], e = v[1][k];
    if (axis < 0) axis += a->ndim;
    dim = a->d[axis];
    if (dim < 0) {
      o->d[axis] = s == 0 && step == 1 && e >= INT32_MAX ? dim : ANY;
      continue;
    }
    s = s < 0 ? s + dim : s, e = e < 0 ? e + dim : e;
    if (step > 0) { /* as bind_slice clamps them */
      s = s < 0 ? 0 : s > dim ? dim : s, e = e < s ? s : e > dim ? dim : e;
      o->d[axis] = e > s ? (e - s - 1) / step + 1 : 0;
    } else {
      s = s < 0 ? 0 : s > dim - 1 ? dim - 1 : s, e = e < -1 ? -1 : e > dim - 1 ? dim - 1 : e;
      o->d[axis] = dim > 0 && s > e ? (s - e - 1) / (step == INT64_MIN ? INT64_MAX : -step) + 1 : 0;
    }
  }
}

/* Gather: data[:axis] + indices' shape + data[axis+1:]; the axis in range, constant indices within
 * a fixed size (the run refuses one outside, as onnxruntime's run does). */
static void gather(sctx *c, sshape *o) {
  const sshape *a = in(c, 0), *ix = in(c, 1);
  const om_tensor *t = const_of(c, 1);
  int64_t axis = attr_i(c, "axis", 0);
  o->type = a->type;
  if (!a->known || !axis_of(c, &axis, a->ndim, "axis")) return;
  for (int64_t k = 0, m = t && a->d[axis] >= 0 ? om_tensor_numel(t) : 0, size = a->d[axis]; k < m; k++) {
    int64_t i = int_at(t, k);
    if (i < -size || i >= size) {
      contradicts(c, "index %lld is out of range for axis %lld of size %lld", (long long)i, (long long)axis, (long long)size);
      return;
    }
  }
  if (!ix->known || a->ndim - 1 + ix->ndim > OM_MAX_DIMS) return;
  o->known = true, o->ndim = 0;
  for (int d = 0; d < a->ndim; d++)
    for (int j = 0; j < (d == axis ? ix->ndim : 1); j++) o->d[o->ndim++] = d == axis ? ix->d[j] : a->d[d];
}

/* Split: the axis in range; constant sizes (input 1), one per output, summing to a fixed size, else
 * the axis in equal pieces (the last smaller, as bind_split). Every output's shape: output 0's in o,
 * the others' written here. */
static void split(sctx *c, sshape *o) {
  const sshape *a = in(c, 0);
  int64_t axis = attr_i(c, "axis", 0), sizes[OM_MAX_DIMS], total = 0;
  int n = -1, outs = c->n->n_out;
  o->type = a->type;
  if (!a->known || !axis_of(c, &axis, a->ndim, "axis") || (given(c, 1) && !const_ints(c, 1, sizes, &n))) return;
  int64_t dim = a->d[axis], piece = dim >= 0 ? dim / outs + (dim % outs != 0) : ANY;
  if (n >= 0 && n != outs) {
    contradicts(c, "%d split sizes for %d outputs", n, outs);
    return;
  }
  for (int k = 0; k < n; k++)
    if (sizes[k] < 0 || __builtin_add_overflow(total, sizes[k], &total)) return; /* the run refuses it */
  if (n >= 0 && dim >= 0 && total != dim) {
    contradicts(c, "the split sizes sum to %lld, and axis %lld has size %lld", (long long)total, (long long)axis, (long long)dim);
    return;
  }
  for (int k = outs - 1; k >= 0 && outs <= OM_MAX_DIMS; k--) {
    sshape *s = k ? (c->n->out[k] >= 0 ? &c->v[c->n->out[k]] : NULL) : o;
    int64_t left = dim - k * piece;
    if (!s) continue;
    *s = *a;
    s->d[axis] = n >= 0 ? sizes[k] : dim < 0 ? ANY : left < 0 ? 0 : left < piece ? left : piece;
  }
}

/* The reductions: the constant axes (input 1) each in range (one named twice is reduced once, as
 * ONNX's shape inference and onnxruntime take it), none meaning all, or nothing with
 * noop_with_empty_axes; kept as 1 with keepdims. */
static void reduction(sctx *c, sshape *o) {
  const sshape *a = in(c, 0);
  bool on[OM_MAX_DIMS] = {false}, twice, any = false;
  o->type = a->type;
  if (!a->known || !axes_in(c, 1, a->ndim, "an input", on, &twice)) return;
  for (int d = 0; d < a->ndim; d++) any |= on[d];
  if (!any && attr_i(c, "noop_with_empty_axes", 0)) {
    same(c, o);
    return;
  }
  for (int d = 0; !any && d < a->ndim; d++) on[d] = true;
  drop_axes(a, on, attr_i(c, "keepdims", 1) != 0, o);
}

/* ArgMax, ArgMin: int64, the axis in range, kept as 1 with keepdims. */
static void arg_extreme(sctx *c, sshape *o) {
  const sshape *a = in(c, 0);
  int64_t axis = attr_i(c, "axis", 0);
  bool on[OM_MAX_DIMS] = {false};
  o->type = 7; /* INT64 */
  if (!a->known || !axis_of(c, &axis, a->ndim, "axis")) return;
  on[axis] = true;
  drop_axes(a, on, attr_i(c, "keepdims", 1) != 0, o);
}

/* BatchNormalization: the input's shape; scale, B, input_mean and input_var each of rank 1 and of
 * one size, the input's channels' (a symbol's channels take any one size, as onnxruntime). */
static void batch_norm(sctx *c, sshape *o) {
  static const char *const names[] = {"X", "scale", "B", "input_mean", "input_var"};
  const sshape *x = in(c, 0);
  *o = *x;
  if (!x->known || x->ndim < 2) return;
  int64_t size = x->d[1];
  int by = 0; /* the input that fixed size: 0 the input's channels */
  for (int i = 1; i < 5; i++) {
    const sshape *s = in(c, i);
    if (!s->known) continue;
    if (s->ndim != 1) {
      contradicts(c, "%s (input %d) has rank %d, not 1", names[i], i, s->ndim);
      return;
    }
    if (size >= 0 && s->d[0] >= 0 && s->d[0] != size) {
      char was[64];
      if (by) snprintf(was, sizeof was, "%s (input %d) has size %lld", names[by], by, (long long)size);
      else snprintf(was, sizeof was, "the input has %lld channels", (long long)size);
      contradicts(c, "%s (input %d) has size %lld, and %s", names[i], i, (long long)s->d[0], was);
      return;
    }
    if (size < 0 && s->d[0] >= 0) size = s->d[0], by = i;
  }
}

/* A fixed size times a constant factor (>= 0), a symbol's kept by 1, else known only at run time. */
static int64_t times_dim(int64_t d, int64_t f) {
  int64_t p;
  return f == 1 ? d : f == 0 ? 0 : d >= 0 && !__builtin_mul_overflow(d, f, &p) ? p : ANY;
}

/* Tile by constant repeats: one per axis (a negative one is the run's to refuse). */
static void tile(sctx *c, sshape *o) {
  const sshape *a = in(c, 0);
  const om_tensor *t = const_of(c, 1);
  int64_t reps[OM_MAX_DIMS];
  int n;
  o->type = a->type;
  if (!a->known || !t || t->ndim != 1) return;
  if (t->shape[0] != a->ndim) {
    contradicts(c, "repeats has %lld values for an input of rank %d", (long long)t->shape[0], a->ndim);
    return;
  }
  if (!const_ints(c, 1, reps, &n)) return;
  for (int d = 0; d < n; d++)
    if (reps[d] < 0) return;
  *o = *a;
  for (int d = 0; d < n; d++) o->d[d] = times_dim(a->d[d], reps[d]);
}

/* Pad by constant pads: two per axis (per axis of axes, input 3, when given); a fixed size grows by
 * its two, a symbol's is known only at run time. */
static void pad(sctx *c, sshape *o) {
  const sshape *a = in(c, 0);
  const om_tensor *t = const_of(c, 1), *axes = given(c, 3) ? const_of(c, 3) : NULL;
  int64_t pads[2 * OM_MAX_DIMS];
  o->type = a->type;
  if (!a->known || !t || t->ndim != 1 || (given(c, 3) && (!axes || axes->ndim != 1))) return;
  int64_t want = 2 * (axes ? axes->shape[0] : a->ndim);
  if (t->shape[0] != want) {
    contradicts(c, "pads has %lld values for %lld axes (two each)", (long long)t->shape[0], (long long)want / 2);
    return;
  }
  if (axes || want > 2 * OM_MAX_DIMS) return; /* the axes' sizes: left to the run */
  for (int k = 0; k < want; k++) pads[k] = int_at(t, k);
  *o = *a;
  for (int d = 0; d < a->ndim; d++) {
    int64_t grown;
    bool fits = a->d[d] >= 0 && !__builtin_add_overflow(a->d[d], pads[d], &grown) && !__builtin_add_overflow(grown, pads[a->ndim + d], &grown);
    o->d[d] = fits && grown >= 0 ? grown : ANY;
  }
}

/* TopK: the axis in range, a constant k (input 1) within a fixed size; the values and the int64
 * indices (output 1, written here) of the input's shape with k along the axis. */
static void top_k(sctx *c, sshape *o) {
  const sshape *a = in(c, 0);
  int64_t axis = attr_i(c, "axis", -1), k[OM_MAX_DIMS];
  int n;
  o->type = a->type;
  if (!a->known || !axis_of(c, &axis, a->ndim, "axis") || !const_ints(c, 1, k, &n) || n != 1 || k[0] < 0) return;
  if (a->d[axis] >= 0 && k[0] > a->d[axis]) {
    contradicts(c, "k %lld is more than axis %lld's size %lld", (long long)k[0], (long long)axis, (long long)a->d[axis]);
    return;
  }
  *o = *a;
  o->d[axis] = k[0];
  if (c->n->n_out > 1 && c->n->out[1] >= 0) c->v[c->n->out[1]] = *o, c->v[c->n->out[1]].type = 7; /* INT64 */
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

/* GatherElements, ScatterElements: the axis in range; the indices (and the updates, input 2) of the
 * data's rank, the indices no larger than the data off the axis (as the library's gather and
 * scatter take them, and onnxruntime), the updates of the indices' shape; constant indices within a
 * fixed size along the axis. The output: the indices' shape (gather) or the data's (scatter). */
static void elements(sctx *c, sshape *o) {
  const sshape *a = in(c, 0), *ix = in(c, 1), *up = in(c, 2);
  const om_tensor *t = const_of(c, 1);
  bool scatter = c->n->n_in > 2;
  int64_t axis = attr_i(c, "axis", 0);
  *o = scatter ? *a : *ix;
  o->type = a->type;
  if (!a->known || !axis_of(c, &axis, a->ndim, "axis")) return;
  for (int i = 1; i <= 1 + scatter; i++) {
    const sshape *s = in(c, i);
    if (s->known && s->ndim != a->ndim) {
      contradicts(c, "%s (input %d) has rank %d, and the data rank %d", i == 1 ? "indices" : "updates", i, s->ndim, a->ndim);
      return;
    }
  }
  for (int d = 0; ix->known && d < a->ndim; d++) {
    if (d != axis && ix->d[d] >= 0 && a->d[d] >= 0 && ix->d[d] > a->d[d]) {
      contradicts(c, "indices have size %lld at axis %d, more than the data's %lld", (long long)ix->d[d], d, (long long)a->d[d]);
      return;
    }
    if (scatter && up->known) must_equal(c, ix->d[d], up->d[d], "updates and indices differ in size");
  }
  for (int64_t k = 0, m = t && a->d[axis] >= 0 ? om_tensor_numel(t) : 0, size = a->d[axis]; k < m; k++) {
    int64_t i = int_at(t, k);
    if (i < -size || i >= size) {
      contradicts(c, "index %lld is out of range for axis %lld of size %lld", (long long)i, (long long)axis, (long long)size);
      return;
    }
  }
}

/* LayerNormalization: the axis in range; scale and B broadcast to the normalised shape (the
 * input's dims from the axis: each fixed size 1 or the input's); Y of the input's shape, Mean and
 * InvStdDev (outputs 1 and 2, float32) of its dims before the axis and 1 after. */
static void layer_norm(sctx *c, sshape *o) {
  const sshape *x = in(c, 0);
  int64_t axis = attr_i(c, "axis", -1);
  *o = *x;
  if (!x->known || !axis_of(c, &axis, x->ndim, "axis")) return;
  int norm = x->ndim - (int)axis;
  for (int i = 1; i < 3; i++) {
    const sshape *s = in(c, i);
    const char *name = i == 1 ? "Scale" : "B";
    if (!s->known) continue;
    if (s->ndim > norm) {
      contradicts(c, "%s (input %d) has rank %d, and the normalised shape (axis %lld on) rank %d", name, i, s->ndim, (long long)axis, norm);
      return;
    }
    for (int d = 1; d <= s->ndim; d++) {
      int64_t p = s->d[s->ndim - d], q = x->d[x->ndim - d];
      if (p >= 0 && q >= 0 && p != q && p != 1) {
        contradicts(c, "%s (input %d) has size %lld at axis -%d, and the input %lld", name, i, (long long)p, d, (long long)q);
        return;
      }
    }
  }
  for (int j = 1; j < c->n->n_out && j < 3; j++) {
    if (c->n->out[j] < 0) continue;
    sshape *m = &c->v[c->n->out[j]];
    *m = *x;
    m->type = 0; /* stash_type's (FLOAT, or the input's where that is wider): left to the run */
    for (int d = (int)axis; d < x->ndim; d++) m->d[d] = 1;
  }
}

/* Einsum: one term per input, each naming the operand's dims (all of them, or the rest as '...'),
 * the output's labels each in an operand once; a label's fixed sizes equal (1 broadcasts across
 * operands, as onnxruntime's; within one operand, a diagonal, they must be equal). The output's
 * dims: its labels' sizes, the '...' dims broadcast right-aligned. A malformed term (a stray '.', a
 * character that is no letter) is left to the run's message. */
static void einsum(sctx *c, sshape *o) {
  const om_gattr *eq = attr(c, "equation", OM_GATTR_STRING);
  o->type = in(c, 0)->type;
  if (!eq) return;
  char e[256];
  int len = 0;
  for (const char *p = eq->s; *p && len < (int)sizeof e - 1; p++)
    if (*p != ' ') e[len++] = *p;
  e[len] = 0;
  const char *arrow = strstr(e, "->"), *term = e;
  int lhs = arrow ? (int)(arrow - e) : len, terms = 1;
  for (int k = 0; k < lhs; k++) terms += e[k] == ',';
  if (terms != c->n->n_in) {
    contradicts(c, "the equation '%s' has %d operands, and the node %d inputs", eq->s, terms, c->n->n_in);
    return;
  }
  int64_t size[52], ell[OM_MAX_DIMS]; /* each label's size, the '...' dims right-aligned */
  int n_ell = 0, seen_in[52]; /* the operand that named each label last, -1 none */
  for (int l = 0; l < 52; l++) size[l] = ANY, seen_in[l] = -1;
  bool known = true, dots_any = false;
  for (int i = 0; i < c->n->n_in; i++, term++) {
    const sshape *a = in(c, i);
    int tlen = (int)strcspn(term, ",-"), letters = 0;
    bool dots = memchr(term, '.', (size_t)tlen) != NULL;
    for (int k = 0; k < tlen; k++) letters += term[k] != '.';
    if (dots && (tlen - letters != 3 || !strstr(term, "...") || strstr(term, "...") - term + 3 > tlen)) return;
    dots_any |= dots;
    known &= a->known;
    if (!a->known) {
      term += tlen;
      continue;
    }
    if (dots ? letters > a->ndim : letters != a->ndim) {
      contradicts(c, "'%.*s' names %d dims%s, and input %d has %d", tlen, term, letters, dots ? " and '...'" : "", i, a->ndim);
      return;
    }
    int e_n = a->ndim - letters;
    for (int k = 0, d = 0; k < tlen; k++) {
      if (term[k] == '.') { /* the '...' dims, broadcast with the others' */
        for (int q = 0; q < e_n; q++) {
          int at = OM_MAX_DIMS - e_n + q;
          ell[at] = at >= OM_MAX_DIMS - n_ell ? broadcast_dim(ell[at], a->d[d + q]) : a->d[d + q];
        }
        n_ell = e_n > n_ell ? e_n : n_ell, d += e_n, k += 2;
        continue;
      }
      int l = term[k] >= 'a' && term[k] <= 'z' ? term[k] - 'a' : term[k] >= 'A' && term[k] <= 'Z' ? term[k] - 'A' + 26 : -1;
      if (l < 0) return;
      int64_t v = a->d[d++], was = size[l];
      if (seen_in[l] >= 0 && was >= 0 && v >= 0 && was != v && (seen_in[l] == i || (was != 1 && v != 1))) {
        contradicts(c, "label '%c' has sizes %lld and %lld%s", term[k], (long long)was, (long long)v, seen_in[l] == i ? " in one operand" : "");
        return;
      }
      size[l] = seen_in[l] < 0 ? v : seen_in[l] == i ? merge_dim(was, v) : broadcast_dim(was, v);
      seen_in[l] = i;
    }
    term += tlen;
  }
  if (!known) return;
  o->known = true, o->ndim = 0;
  int count[52] = {0};
  for (int k = 0; k < lhs; k++)
    if (e[k] != '.' && e[k] != ',') count[e[k] >= 'a' ? e[k] - 'a' : e[k] - 'A' + 26]++;
  if (!arrow) { /* the '...' dims, then the labels named once, a to z then A to Z (as the run orders them) */
    for (int q = 0; q < n_ell; q++) o->d[o->ndim++] = ell[OM_MAX_DIMS - n_ell + q];
    for (int l = 0; l < 52 && o->ndim < OM_MAX_DIMS; l++)
      if (count[l] == 1) o->d[o->ndim++] = size[l];
    return;
  }
  bool named[52] = {false};
  for (const char *p = arrow + 2; *p; p++) {
    if (*p == '.') {
      if (!dots_any || strncmp(p, "...", 3)) return o->known = false, (void)0;
      for (int q = 0; q < n_ell && o->ndim < OM_MAX_DIMS; q++) o->d[o->ndim++] = ell[OM_MAX_DIMS - n_ell + q];
      p += 2;
      continue;
    }
    int l = *p >= 'a' && *p <= 'z' ? *p - 'a' : *p >= 'A' && *p <= 'Z' ? *p - 'A' + 26 : -1;
    if (l < 0 || o->ndim == OM_MAX_DIMS) return o->known = false, (void)0;
    if (seen_in[l] < 0 || named[l]) {
      contradicts(c, "output label '%c' is %s", *p, named[l] ? "named twice" : "in no operand");
      return;
    }
    named[l] = true;
    o->d[o->ndim++] = size[l];
  }
}

/* CastLike: the input's shape, the second input's type. */
static void cast_like(sctx *c, sshape *o) {
  *o = *in(c, 0);
  o->type = in(c, 1)->type;
}

/* Shape: int64, [the count of axes from start to end] (both clamped as ONNX clamps them). */
static void shape_of(sctx *c, sshape *o) {
  const sshape *a = in(c, 0);
  int64_t from = attr_i(c, "start", 0), to = attr_i(c, "end", INT64_MAX), r = a->ndim;
  *o = (sshape){.known = a->known, .type = 7 /* INT64 */, .ndim = 1};
  from = from < 0 ? from + r : from, to = to < 0 ? to + r : to;
  from = from < 0 ? 0 : from > r ? r : from, to = to < 0 ? 0 : to > r ? r : to;
  o->d[0] = to > from ? to - from : 0;
}

static void size_of(sctx *c, sshape *o) {
  (void)c; /* a scalar whatever the input */
  *o = (sshape){.known = true, .type = 7 /* INT64 */};
}

/* ConvTranspose: the weight [C, M / group, k...] of the input's rank, taking its channels (C);
 * kernel_shape the weight's spatial sizes; a bias of the M outputs. The output: N, M, and per
 * spatial axis output_shape's size, or the input's times the stride (SAME), or ONNX's
 * stride (x - 1) + output_padding + (k - 1) dilation + 1 - the two pads. */
static void conv_transpose(sctx *c, sshape *o) {
  const sshape *x = in(c, 0), *w = in(c, 1), *bias = in(c, 2);
  o->type = x->type;
  if (!x->known || !w->known || x->ndim < 3) return;
  if (w->ndim != x->ndim) {
    contradicts(c, "the weight has rank %d, and the input %d", w->ndim, x->ndim);
    return;
  }
  int sp = x->ndim - 2;
  int64_t group = attr_i(c, "group", 1), m = w->d[1] >= 0 && group >= 1 ? times_dim(w->d[1], group) : ANY;
  const om_gattr *ks = attr(c, "kernel_shape", OM_GATTR_INTS), *st = attr(c, "strides", OM_GATTR_INTS), *dl = attr(c, "dilations", OM_GATTR_INTS),
                 *pd = attr(c, "pads", OM_GATTR_INTS), *opad = attr(c, "output_padding", OM_GATTR_INTS), *osh = attr(c, "output_shape", OM_GATTR_INTS),
                 *ap = attr(c, "auto_pad", OM_GATTR_STRING);
  if (x->d[1] >= 0 && w->d[0] >= 0 && x->d[1] != w->d[0]) {
    contradicts(c, "the input has %lld channels, and the weight takes %lld", (long long)x->d[1], (long long)w->d[0]);
    return;
  }
  for (int d = 0; ks && ks->n == sp && d < sp; d++) must_equal(c, ks->ints[d], w->d[2 + d], "kernel_shape and the weight's spatial size differ");
  if (bias->known && bias->ndim != 1) contradicts(c, "B (input 2) has rank %d, not 1", bias->ndim);
  else if (bias->known) must_equal(c, bias->d[0], m, "B (input 2) and the output channels (the weight's size at axis 1 times group) differ");
  o->known = true, o->ndim = x->ndim;
  o->d[0] = x->d[0], o->d[1] = m;
  bool same = ap && (!strcmp(ap->s, "SAME_UPPER") || !strcmp(ap->s, "SAME_LOWER"));
  if ((st && st->n != sp) || (dl && dl->n != sp) || (pd && pd->n != 2 * sp) || (opad && opad->n != sp) || (osh && osh->n != sp)) {
    for (int d = 0; d < sp; d++) o->d[2 + d] = ANY; /* the run's to refuse, or to read output_shape's N and C too */
    return;
  }
  for (int d = 0; d < sp; d++) {
    int64_t xd = x->d[2 + d], k = w->d[2 + d], s = st ? st->ints[d] : 1, dil = dl ? dl->ints[d] : 1, len = 0, t = 0; /* 0s only quiet -O1's maybe-uninitialized: fits sets both */
    int64_t pads = pd && !same && !(ap && !strcmp(ap->s, "VALID")) ? pd->ints[d] + pd->ints[sp + d] : 0, extra = opad ? opad->ints[d] : 0;
    bool fits = xd >= 1 && k >= 1 && s >= 1 && dil >= 1 && !__builtin_mul_overflow(s, xd - 1, &len) && !__builtin_mul_overflow(k - 1, dil, &t) &&
                !__builtin_add_overflow(len, t, &len) && !__builtin_add_overflow(len, 1, &len) && !__builtin_add_overflow(len, extra, &len) && !__builtin_sub_overflow(len, pads, &len);
    o->d[2 + d] = osh ? (osh->ints[d] >= 0 ? osh->ints[d] : ANY) : same ? times_dim(xd, s) : fits && len >= 0 ? len : ANY;
  }
}

/* GatherND: indices of rank q >= 1 ending in an axis of k <= r - batch_dims (r: the data's rank),
 * batch_dims below both ranks and its sizes the data's. The output: the indices' dims but the last,
 * then the data's from batch_dims + k. */
static void gather_nd(sctx *c, sshape *o) {
  const sshape *a = in(c, 0), *ix = in(c, 1);
  int64_t bd = attr_i(c, "batch_dims", 0);
  o->type = a->type;
  if (!a->known || !ix->known) return;
  if (ix->ndim < 1 || bd < 0 || bd >= ix->ndim || bd >= a->ndim) {
    contradicts(c, "batch_dims %lld for indices of rank %d and data of rank %d (it is below both)", (long long)bd, ix->ndim, a->ndim);
    return;
  }
  int64_t k = ix->d[ix->ndim - 1];
  if (k >= 0 && k > a->ndim - bd) {
    contradicts(c, "the indices' last axis has size %lld, more than the data's %lld axes after batch_dims", (long long)k, (long long)(a->ndim - bd));
    return;
  }
  for (int d = 0; d < bd; d++) must_equal(c, a->d[d], ix->d[d], "a batch axis's sizes in the data and the indices differ");
  if (k < 0 || ix->ndim - 1 + a->ndim - bd - k > OM_MAX_DIMS) return;
  o->known = true, o->ndim = 0;
  for (int d = 0; d < ix->ndim - 1; d++) o->d[o->ndim++] = ix->d[d];
  for (int d = (int)(bd + k); d < a->ndim; d++) o->d[o->ndim++] = a->d[d];
}

/* ScatterND: the data's shape; indices of rank q >= 1 ending in an axis of k <= r (the data's
 * rank); the updates the indices' dims but the last, then the data's from k. */
static void scatter_nd(sctx *c, sshape *o) {
  const sshape *a = in(c, 0), *ix = in(c, 1), *up = in(c, 2);
  *o = *a;
  if (!a->known || !ix->known) return;
  int64_t k = ix->ndim ? ix->d[ix->ndim - 1] : ANY;
  if (ix->ndim < 1 || (k >= 0 && k > a->ndim)) {
    contradicts(c, "indices of rank %d ending in an axis of %lld for data of rank %d", ix->ndim, (long long)k, a->ndim);
    return;
  }
  if (k < 1 || !up->known) return; /* k 0: the run's to refuse, in its words */
  int want = ix->ndim - 1 + a->ndim - (int)k;
  if (up->ndim != want) {
    contradicts(c, "updates (input 2) have rank %d, and the indices and data take %d", up->ndim, want);
    return;
  }
  for (int d = 0; d < want; d++) must_equal(c, up->d[d], d < ix->ndim - 1 ? ix->d[d] : a->d[k + d - (ix->ndim - 1)], "updates and the indices' and data's sizes differ");
}

/* Resize: each axis (the attribute's, else every one) in range and named once; a non-empty scales
 * (input 2) or sizes (input 3) of one value per axis. The output: the input's shape with each axis
 * a constant size (keep_aspect_ratio_policy stretch), or its fixed size times a constant scale
 * (floored, as the run), else known only at run time. */
static void resize(sctx *c, sshape *o) {
  const sshape *a = in(c, 0);
  const om_gattr *axes = attr(c, "axes", OM_GATTR_INTS), *policy = attr(c, "keep_aspect_ratio_policy", OM_GATTR_STRING);
  bool on[OM_MAX_DIMS] = {false};
  int64_t ax[OM_MAX_DIMS];
  int na = axes ? axes->n : a->ndim;
  *o = *a;
  if (!a->known || na > OM_MAX_DIMS) return;
  for (int k = 0; k < na; k++) {
    ax[k] = axes ? axes->ints[k] : k;
    if (!axis_of(c, &ax[k], a->ndim, "axis")) return;
    if (on[ax[k]]) {
      contradicts(c, "axes name axis %lld twice", (long long)ax[k]);
      return;
    }
    on[ax[k]] = true;
  }
  static const char *const names[] = {"scales", "sizes"};
  for (int i = 2; i < 4; i++) {
    const sshape *s = in(c, i);
    if (s->known && s->ndim == 1 && s->d[0] > 0 && s->d[0] != na)
      contradicts(c, "%s (input %d) has %lld values for %d axes", names[i - 2], i, (long long)s->d[0], na);
  }
  const om_tensor *scales = init_of(c, 2), *sizes = const_of(c, 3);
  bool stretch = !policy || !strcmp(policy->s, "stretch");
  for (int k = 0; k < na; k++) {
    int64_t d = a->d[ax[k]];
    double len = scales && om_tensor_numel(scales) == na && d >= 0 ? floor((double)(float)om__get_flat(scales, k) * (double)d) : -1;
    int64_t size = sizes && om_tensor_numel(sizes) == na && stretch ? int_at(sizes, k) : -1; /* a negative one is the run's to refuse */
    o->d[ax[k]] = size >= 0 ? size : len >= 0 && len <= (double)INT32_MAX ? (int64_t)len : ANY;
  }
}

/* LSTM, GRU, RNN: X of rank 3; W [D, gates x hidden_size, the input's size] and R [D, gates x
 * hidden_size, hidden_size] (D 2 for bidirectional, else 1); B [D, 2 x gates x hidden_size]. The
 * outputs: Y [T, D, N, H] and Y_h (LSTM's Y_c too) [D, N, H] (layout 1: [N, T, D, H], [N, D, H]). */
static void recurrent(sctx *c, sshape *o) {
  const sshape *x = in(c, 0);
  const om_gattr *dir = attr(c, "direction", OM_GATTR_STRING);
  int64_t H = attr_i(c, "hidden_size", -1), layout = attr_i(c, "layout", 0), D = dir && !strcmp(dir->s, "bidirectional") ? 2 : 1;
  int64_t gates = !strcmp(c->n->op_type, "LSTM") ? 4 : !strcmp(c->n->op_type, "GRU") ? 3 : 1, g = H >= 1 ? gates * H : ANY;
  o->type = x->type;
  if (x->known && x->ndim != 3) {
    contradicts(c, "X has rank %d, not 3", x->ndim);
    return;
  }
  static const char *const names[] = {"X", "W", "R", "B"};
  for (int i = 1; i < 4; i++) {
    const sshape *s = in(c, i);
    int64_t want[3] = {D, i == 3 ? times_dim(g, 2) : g, i == 1 ? (x->known ? x->d[2] : ANY) : i == 2 ? (H >= 1 ? H : ANY) : ANY};
    int rank = i == 3 ? 2 : 3;
    if (!s->known) continue;
    if (s->ndim != rank) {
      contradicts(c, "%s (input %d) has rank %d, not %d", names[i], i, s->ndim, rank);
      return;
    }
    for (int d = 0; d < rank; d++)
      if (want[d] >= 0 && s->d[d] >= 0 && s->d[d] != want[d]) {
        contradicts(c, "%s (input %d) has size %lld at axis %d, and %s takes %lld (hidden_size %lld, %lld directions)", names[i], i, (long long)s->d[d], d,
                    d == 2 && i == 1 ? "the input's size" : "the node", (long long)want[d], (long long)H, (long long)D);
        return;
      }
  }
  if (!x->known || H < 1) return;
  int64_t T = x->d[layout ? 1 : 0], N = x->d[layout ? 0 : 1];
  *o = (sshape){.known = true, .type = x->type, .ndim = 4, .d = {T, D, N, H}};
  if (layout) o->d[0] = N, o->d[1] = T, o->d[2] = D;
  for (int j = 1; j < c->n->n_out && j < 3; j++)
    if (c->n->out[j] >= 0) c->v[c->n->out[j]] = (sshape){.known = true, .type = x->type, .ndim = 3, .d = {layout ? N : D, layout ? D : N, H}};
}

/* GroupNormalization: the input's shape; num_groups (at least 1) divides fixed channels; scale and
 * bias of rank 1, one value a group or (opset 21's) a channel. */
static void group_norm(sctx *c, sshape *o) {
  const sshape *x = in(c, 0);
  int64_t groups = attr_i(c, "num_groups", 0);
  *o = *x;
  if (!x->known || x->ndim < 2 || groups < 1) return;
  int64_t ch = x->d[1];
  if (ch >= 0 && ch % groups) {
    contradicts(c, "num_groups %lld does not divide the input's %lld channels", (long long)groups, (long long)ch);
    return;
  }
  for (int i = 1; i < 3; i++) {
    const sshape *s = in(c, i);
    const char *name = i == 1 ? "scale" : "bias";
    if (s->known && s->ndim != 1) contradicts(c, "%s (input %d) has rank %d, not 1", name, i, s->ndim);
    else if (s->known && s->d[0] >= 0 && s->d[0] != groups && ch >= 0 && s->d[0] != ch)
      contradicts(c, "%s (input %d) has %lld values, neither num_groups %lld nor the input's %lld channels", name, i, (long long)s->d[0], (long long)groups, (long long)ch);
  }
}

typedef struct srow {
  const char *op_type;
  void (*rule)(sctx *c, sshape *o); /* output 0's type and shape from the inputs' */
} srow;

static const srow rows[] = {
    {"Abs", same}, {"Acos", same}, {"Acosh", same}, {"Add", broadcast}, {"And", compare}, {"ArgMax", arg_extreme}, {"ArgMin", arg_extreme},
    {"Asin", same}, {"Asinh", same}, {"Atan", same}, {"Atanh", same}, {"AveragePool", windows}, {"BatchNormalization", batch_norm},
    {"BitShift", broadcast}, {"BitwiseAnd", broadcast}, {"BitwiseNot", same}, {"BitwiseOr", broadcast}, {"BitwiseXor", broadcast},
    {"Cast", cast}, {"CastLike", cast_like}, {"Ceil", same}, {"Celu", same}, {"Clip", same}, {"Concat", concat}, {"Conv", windows}, {"ConvTranspose", conv_transpose},
    {"Cos", same}, {"Cosh", same}, {"Div", broadcast}, {"Einsum", einsum}, {"Elu", same}, {"Equal", compare}, {"Erf", same}, {"Exp", same},
    {"Expand", expand}, {"Flatten", flatten}, {"Floor", same}, {"Gather", gather}, {"GatherND", gather_nd}, {"GatherElements", elements}, {"Gelu", same},
    {"Gemm", gemm}, {"GRU", recurrent}, {"GlobalAveragePool", global_pool}, {"GlobalLpPool", global_pool}, {"GlobalMaxPool", global_pool}, {"Greater", compare},
    {"GreaterOrEqual", compare}, {"GroupNormalization", group_norm}, {"Hardmax", softmax}, {"HardSigmoid", same}, {"HardSwish", same}, {"Identity", same},
    {"InstanceNormalization", batch_norm}, {"IsInf", compare}, {"IsNaN", compare}, {"LayerNormalization", layer_norm}, {"LeakyRelu", same},
    {"Less", compare}, {"LessOrEqual", compare}, {"Log", same}, {"LogSoftmax", softmax}, {"LpNormalization", softmax}, {"LpPool", windows},
    {"LRN", same}, {"LSTM", recurrent}, {"MatMul", matmul}, {"Max", broadcast}, {"MaxPool", windows}, {"Mean", broadcast}, {"MeanVarianceNormalization", same},
    {"Min", broadcast}, {"Mish", same}, {"Mod", broadcast}, {"Mul", broadcast}, {"Neg", same}, {"NonZero", nonzero}, {"Not", same},
    {"Or", compare}, {"Pad", pad}, {"Pow", broadcast}, {"PRelu", broadcast}, {"Reciprocal", same}, {"ReduceL1", reduction}, {"ReduceL2", reduction},
    {"ReduceLogSum", reduction},
    {"ReduceLogSumExp", reduction}, {"ReduceMax", reduction}, {"ReduceMean", reduction}, {"ReduceMin", reduction},
    {"ReduceProd", reduction}, {"ReduceSum", reduction}, {"ReduceSumSquare", reduction}, {"Relu", same}, {"Reshape", reshape}, {"Resize", resize}, {"RNN", recurrent},
    {"Round", same}, {"ScatterElements", elements}, {"ScatterND", scatter_nd}, {"Selu", same}, {"Shape", shape_of}, {"Shrink", same}, {"Sigmoid", same},
    {"Sign", same}, {"Sin", same}, {"Sinh", same}, {"Size", size_of}, {"Slice", slice}, {"Softmax", softmax}, {"Softplus", same},
    {"Softsign", same}, {"Split", split}, {"Sqrt", same}, {"Squeeze", squeeze}, {"Sub", broadcast}, {"Sum", broadcast}, {"Tan", same},
    {"Tanh", same}, {"ThresholdedRelu", same}, {"Tile", tile}, {"TopK", top_k}, {"Transpose", transpose}, {"Unsqueeze", unsqueeze},
    {"Where", broadcast}, {"Xor", compare},
};

static const srow *row_of(const char *op_type) {
  for (size_t k = 0; k < sizeof rows / sizeof *rows; k++)
    if (!strcmp(rows[k].op_type, op_type)) return &rows[k];
  return NULL;
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

/* c->v's initializers' types and shapes (before the inputs', which replace a default's). */
static void seed_inits(sctx *c) {
  for (int k = 0; k < c->g->values.n; k++) {
    const om_gvalue *v = &c->g->values.v[k];
    const om_tensor *t = v->init >= 0 ? c->g->inits.v[v->init].tensor : NULL;
    if (t) c->v[k] = (sshape){.known = true, .type = v->etype ? v->etype : om__elem_own(t->dtype), .ndim = t->ndim};
    if (t) memcpy(c->v[k].d, t->shape, sizeof(int64_t) * (size_t)t->ndim);
  }
}

/* The type body value v gives: what the file declares for it, else what its graph's rows infer
 * (c's: the body's), 0 where neither says. */
static int body_type(const sctx *c, int v) {
  const om_gvalue *gv = &c->g->values.v[v];
  return gv->producer >= 0 && gv->etype ? gv->etype : c->v[v].type;
}

static bool infer(sctx *c, bool shapes);

/* Node n's subgraphs against it, as ONNX's checker infers their types: each body input's declared
 * type is the one the node gives it (a Loop's: the iteration number INT64, the condition BOOL,
 * then the loop-carried values'; a Scan's: its states' and scan inputs'), each loop-carried value
 * and state comes back as the type it went in (a Loop's condition as BOOL), an If's branches give
 * one type per output, and an output the file declares is of the type its body gives. The bodies'
 * own nodes are checked so too (their inputs as declared, else as given). A type nothing declares
 * or infers is not compared. false with Format naming the node and the body. Sets the types of
 * n's outputs in c->v. */
static bool check_bodies(sctx *c, const om_gnode *n) {
  bool is_if = !strcmp(n->op_type, "If"), is_loop = !strcmp(n->op_type, "Loop");
  if (!is_if && !is_loop && (strcmp(n->op_type, "Scan") || om__onnx_scan8(n))) return true;
  int out_types[2][64] = {{0}}; /* per body, its outputs' types (then_branch, else_branch) */
  const char *names[2] = {is_if ? "then_branch" : "body", is_if ? "else_branch" : NULL};
  int n_state = is_loop ? n->n_in : n->n_in - (int)attr_i(c, "num_scan_inputs", 0); /* the inputs a body gives back */
  bool ok = true;
  for (int q = 0; ok && q < 2 && names[q]; q++) {
    const om_graph *body = NULL;
    for (int k = 0; k < n->n_attrs; k++)
      if (!strcmp(n->attrs[k].name, names[q]) && n->attrs[k].type == OM_GATTR_GRAPH) body = n->attrs[k].g;
    if (!body || body->outputs.n > 64) return true; /* om__onnx_check_subgraphs refused it */
    sctx b = {.g = body, .v = calloc((size_t)body->values.n + 1, sizeof(sshape)), .syms = c->syms, .n_syms = c->n_syms};
    if (!b.v) return om__fail(OM_ERR_OUT_OF_MEMORY, "session: out of memory inferring the types of node '%s''s %s", n->name, names[q]);
    seed_inits(&b);
    for (int k = 0; k < body->values.n; k++) /* a value of the enclosing graph: its type there */
      if (body->values.v[k].outer >= 0) b.v[k] = (sshape){.type = c->v[body->values.v[k].outer].type};
    for (int k = 0; ok && k < body->inputs.n; k++) {
      const om_gvalue *v = &body->values.v[body->inputs.v[k]];
      int given = is_loop && k == 0 ? 7 /* INT64 */ : is_loop && k == 1 ? 9 /* BOOL */ : in(c, k)->type;
      const char *what = is_loop && k == 0 ? "the iteration number" : is_loop && k == 1 ? "the condition" : NULL;
      if (v->decl_type && given && v->decl_type != given) {
        char from[96];
        if (!what) snprintf(from, sizeof from, "the node's input %d ('%s')", k, c->g->values.v[n->in[k]].name);
        ok = om__fail(OM_ERR_FORMAT, "session: node '%s' (%s): its %s's input %d ('%s') is %s, and %s is %s", n->name, n->op_type, names[q], k,
                      v->name, om__elem_name(v->decl_type), what ? what : from, om__elem_name(given));
      }
      b.v[body->inputs.v[k]] = (sshape){.type = v->decl_type ? v->decl_type : given};
    }
    ok = ok && infer(&b, false);
    for (int j = 0; ok && j < body->outputs.n; j++) {
      int t = out_types[q][j] = body_type(&b, body->outputs.v[j]), back = is_loop ? j + 1 : j; /* the node's input it gives back */
      const char *oname = body->values.v[body->outputs.v[j]].name;
      if (is_loop && j == 0 && t && t != 9)
        ok = om__fail(OM_ERR_FORMAT, "session: node '%s' (Loop): its body's output 0 ('%s'), the condition, is %s, not BOOL", n->name, oname,
                      om__elem_name(t));
      else if (!is_if && (!is_loop || j >= 1) && back < n_state && t && in(c, back)->type && t != in(c, back)->type)
        ok = om__fail(OM_ERR_FORMAT, "session: node '%s' (%s): its body's output %d ('%s') is %s, and the %s it gives back is %s (the node's input %d, '%s')",
                      n->name, n->op_type, j, oname, om__elem_name(t), is_loop ? "loop-carried value" : "state", om__elem_name(in(c, back)->type),
                      back, c->g->values.v[n->in[back]].name);
    }
    free(b.v);
  }
  for (int j = 0; ok && j < n->n_out; j++) { /* the node's outputs: the bodies' (a Loop's without the condition) */
    int from = is_loop ? j + 1 : j, t = from < 64 ? out_types[0][from] : 0, other = is_if ? out_types[1][j] : 0;
    if (is_if && t && other && t != other)
      ok = om__fail(OM_ERR_FORMAT, "session: node '%s' (If): output %d is %s in its then_branch and %s in its else_branch", n->name, j,
                    om__elem_name(t), om__elem_name(other));
    t = t ? t : other;
    if (n->out[j] < 0) continue;
    const om_gvalue *v = &c->g->values.v[n->out[j]];
    if (ok && t && v->etype && v->etype != t)
      ok = om__fail(OM_ERR_FORMAT, "session: node '%s' (%s): output %d ('%s') is %s as its %s gives it, and the graph declares it %s", n->name,
                    n->op_type, j, v->name, om__elem_name(t), names[0], om__elem_name(v->etype));
    c->v[n->out[j]] = (sshape){.type = t};
  }
  return ok;
}

/* The shapes of c's graph's values (c->v seeded with its initializers', inputs' and captured
 * values'), node by node. shapes: a node whose inputs contradict each other at every
 * size, or a graph output declared against its node at every size, is Format; else only the types
 * of subgraphs are checked (check_bodies), as they are in every graph. */
static bool infer(sctx *c, bool shapes) {
  const om_graph *g = c->g;
  bool ok = true;
  for (int k = 0; ok && k < g->nodes.n; k++) {
    const om_gnode *n = &g->nodes.v[k];
    const srow *r = row_of(n->op_type);
    c->n = n;
    if (!r || n->n_out < 1 || n->out[0] < 0) {
      ok = check_bodies(c, n);
      continue;
    }
    c->why[0] = 0;
    sshape o = {0};
    r->rule(c, &o);
    c->v[n->out[0]] = o;
    if (!shapes) continue;
    if (c->why[0]) {
      ok = om__fail(OM_ERR_FORMAT, "session: node '%s' (%s) fails at every size the graph's inputs declare: %s", n->name, n->op_type, c->why);
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
      shape_str(c, have, sizeof have, &o);
      ok = om__fail(OM_ERR_FORMAT, "session: node '%s' (%s): output 0 ('%s') has shape %s at every size, and the graph declares %s (-1: any size)",
                    n->name, n->op_type, v->name, have, om__shape_str(want, sizeof want, v->decl_shape, v->decl_ndim));
    }
  }
  return ok;
}

bool om__check_shapes(const om_graph *g, bool shapes) {
  int room = g->inputs.n * OM_MAX_DIMS;
  sctx c = {.g = g, .v = calloc((size_t)g->values.n + 1, sizeof(sshape)), .syms = calloc((size_t)room + 1, sizeof(char *))};
  if (!c.v || !c.syms) {
    free(c.v), free(c.syms);
    return om__fail(OM_ERR_OUT_OF_MEMORY, "session: out of memory inferring %d values' shapes", g->values.n);
  }
  seed_inits(&c);
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
  bool ok = infer(&c, shapes);
  free(c.v), free(c.syms);
  return ok;
}
