/* The helpers the ops' extents and lower rules use: the call's inputs, arguments and extents,
 * sizes as graph values, and writing nodes and generated constants into the recording. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace/trace.h"

/* ---- extents, for the ops' rules ---- */

bool om__lower_alive(const om_lower *l) { return om__state()->trace == l->tr; }
int om__lower_input(om_lower *l, int i) { return l->in[i]; }
const om_attrs *om__lower_given(om_lower *l) { return l->given; }
int om__lower_in_ext(om_lower *l, int i, int d) { return l->in ? l->tr->g.values.v[l->in[i]].ext[d] : -1; }
int om__lower_out_ext(om_lower *l, int j, int d) { return l->out_ext[j][d]; }
const char *om__lower_input_sym(om_lower *l, int i, int d) {
  int x = om__lower_in_ext(l, i, d);
  return x < 0 ? NULL : om__x_name(l->tr, x);
}
const char *om__lower_output_sym(om_lower *l, int j, int d) {
  return l->out_ext[j][d] < 0 ? NULL : om__x_name(l->tr, l->out_ext[j][d]);
}
int om__lower_arg(om_lower *l, int k) { return l->arg[k]; }
bool om__lower_arg_moves(om_lower *l, int k) { return !om__x_is_const(l->tr, l->arg[k], NULL); }
int om__lower_iota(om_lower *l, int i) { return l->tr->g.values.v[l->in[i]].iota; }
void om__lower_keep_iota(om_lower *l, int v) {
  if (om__lower_alive(l) && v >= 0) l->tr->g.values.v[v].iota = l->tr->g.values.v[l->in[0]].iota;
}
int om__lower_x_const(om_lower *l, int64_t c) { return om__x_const(l->tr, c); }
int om__lower_x_lin(om_lower *l, int64_t ca, int a, int64_t cb, int b, int64_t c) {
  return om__x_lin(l->tr, ca, a, cb, b, c);
}
bool om__lower_x_min(om_lower *l, int x, int64_t *min) { return om__x_min(l->tr, x, min); }

int om__lower_extra_row(om_lower *l, int v, om_meta *meta, int axis) {
  om_meta row = *meta;
  row.shape[axis] = 1;
  meta->shape[axis]++;
  int ax = om__lower_ints(l, (int64_t[]){axis}, 1), r, out;
  if (ax < 0 || !om__emit(l, "ReduceSum", (int[]){v, ax}, 2, &row, 1, &r, &OM_ATTR_INT("keepdims", 1), 1) ||
      !om__emit(l, "Concat", (int[]){v, r}, 2, meta, 1, &out, &OM_ATTR_INT("axis", axis), 1))
    return -1;
  return out;
}


int om__lower_drop_row(om_lower *l, int v, om_meta meta, int axis) {
  meta.shape[axis]--;
  int in[4] = {v, om__lower_ints(l, (int64_t[]){0}, 1), om__lower_ints(l, (int64_t[]){-1}, 1), om__lower_ints(l, (int64_t[]){axis}, 1)}, out;
  if (in[1] < 0 || in[2] < 0 || in[3] < 0 || !om__emit(l, "Slice", in, 4, &meta, 1, &out, NULL, 0)) return -1;
  return out;
}

bool om__lower_may_be_0(om_lower *l, int x) {
  int64_t min;
  return x >= 0 && !(om__x_min(l->tr, x, &min) && min >= 1);
}

int om__lower_count_divisor(om_lower *l, const int *x, int n, om_dtype dtype) {
  int count = om__x_const(l->tr, 1);
  bool empty = false;
  for (int k = 0; k < n && count >= 0; k++) {
    int64_t min;
    empty |= !(om__x_min(l->tr, x[k], &min) && min >= 1);
    count = om__x_mul(l->tr, count, x[k]);
  }
  int64_t fixed;
  if (count < 0) return -1;
  if (!empty) return -2;
  if (om__x_is_const(l->tr, count, &fixed)) return om__lower_scalar(l, (double)fixed, dtype);
  om_meta one = {.dtype = dtype, .ndim = 0}; /* 0-d: a mean over every axis is 0-d too */
  return om__lower_cast(l, om__lower_x_scalar(l, count), &one, dtype);
}

bool om__lower_sum_in_double(om_lower *l, int i, const int64_t *dims, int n) {
  if (l->c->in[i]->dtype != OM_FLOAT32) return false;
  for (int k = 0; k < n; k++) {
    int x = om__lower_in_ext(l, i, (int)dims[k]);
    if (x >= 0 && !om__x_is_const(l->tr, x, NULL)) return true;
  }
  return false;
}

int om__lower_cast(om_lower *l, int v, const om_meta *m, om_dtype dtype) {
  om_meta to = *m;
  to.dtype = dtype;
  int64_t onnx = dtype == OM_FLOAT64 ? 11 : dtype == OM_INT64 ? 7 : dtype == OM_BOOL ? 9 : 1; /* TensorProto.DataType */
  int out;
  return v >= 0 && om__emit(l, "Cast", &v, 1, &to, 1, &out, &OM_ATTR_INT("to", onnx), 1) ? out : -1;
}
int om__lower_x_mul(om_lower *l, int a, int b) { return om__x_mul(l->tr, a, b); }
int om__lower_x_floordiv(om_lower *l, int a, int64_t d) { return om__x_floordiv(l->tr, a, d); }
int om__lower_x_fmul(om_lower *l, int a, double s) { return a < 0 ? -1 : om__x_fmul(l->tr, a, s, l->who); }
int om__lower_x_minc(om_lower *l, int a, int64_t c) { return a < 0 ? -1 : om__x_minc(l->tr, a, c); }
int om__lower_x_divexact(om_lower *l, int a, int b) { return om__x_divexact(l->tr, a, b); }
bool om__lower_x_is_const(om_lower *l, int a, int64_t *c) { return om__x_is_const(l->tr, a, c); }
int om__lower_in_x(om_lower *l, int i, int d) {
  int x = om__lower_in_ext(l, i, d);
  return x >= 0 ? x : om__x_const(l->tr, l->c->in[i]->shape[d]);
}
void om__lower_candidate(om_lower *l, int j, int d, int x) { om__probe_candidate(l, j, d, x); }

/* ---- sizes as graph values ---- */

/* Symbol k's run-time size as an int64 [1] value: one Shape node on the first graph input axis
 * that has it, shared by the whole graph. -1 on error. */
static int symbol_value(om_lower *l, int k) {
  om_trace *tr = l->tr;
  om_graph *g = &tr->g;
  om_symbol *s = &tr->symbols.v[k];
  int sym = om__x_sym(tr, k), src = -1, axis = -1;
  for (int i = 0; i < g->inputs.n && src < 0; i++)
    for (int d = 0; d < g->values.v[g->inputs.v[i]].ndim && src < 0; d++)
      if (g->values.v[g->inputs.v[i]].ext[d] == sym) src = g->inputs.v[i], axis = d;
  if (src < 0) return om__trace_fail(OM_ERR_TRACE_UNSUPPORTED_OPERATION, "%s: no graph input has symbol '%s' (a bug in "
                                     "onemodel)", l->who, s->name), -1;
  const om_gnode *n = s->extent_node >= 0 && s->extent_node < g->nodes.n ? &g->nodes.v[s->extent_node] : NULL;
  if (n && !strcmp(n->op_type, "Shape") && n->in[0] == src && n->out[0] == s->extent_value) return s->extent_value;
  om_meta m = {.dtype = OM_INT64, .ndim = 1, .shape = {1}};
  int out;
  om_gattr at[2] = {OM_ATTR_INT("start", axis), OM_ATTR_INT("end", axis + 1)};
  if (!om__emit(l, "Shape", &src, 1, &m, 1, &out, at, 2)) return -1;
  s->extent_node = g->nodes.n - 1;
  s->extent_value = out;
  return out;
}

/* op_type(a, b) as an int64 [1] value; b a constant when bv is -1. -1 on error. */
static int binary(om_lower *l, const char *op_type, int a, int bv, int64_t b) {
  om_meta m = {.dtype = OM_INT64, .ndim = 1, .shape = {1}};
  int in[2] = {a, bv >= 0 ? bv : om__lower_ints(l, &b, 1)}, out;
  return a >= 0 && in[1] >= 0 && om__emit(l, op_type, in, 2, &m, 1, &out, NULL, 0) ? out : -1;
}

/* The numerator of factor f (min(N, c) or floor(N / d)) as a value. ONNX's integer Div truncates
 * toward zero: for a floor whose N may be negative (a coefficient made positive on a minimum that
 * is never above 0: floor((N + 10 min(N - W, 0) + 10) / 11) of a split of max(N, W)), N - Mod(N,
 * d), Mod taking the divisor's sign, is the multiple of d that Div then divides exactly. */
static int floor_numerator(om_lower *l, const om_xfactor *f) {
  int64_t lo;
  int v = om__lower_x_value(l, f->num);
  if (f->var == OM_XF_MIN || (om__x_min(l->tr, f->num, &lo) && lo >= 0)) return v;
  return binary(l, "Sub", v, binary(l, "Mod", v, -1, f->den), 0);
}

/* floor(double(N) * s) of factor f as an int64 [1] value: Cast to double, Mul by the double s,
 * Floor, Cast back: one IEEE multiply and an exact floor, so the graph's size is the op's at
 * every N below 2^53 in every engine (docs/symbolic-axes.md). -1 on error. */
static int scaled_floor(om_lower *l, const om_xfactor *f) {
  om_meta d1 = {.dtype = OM_FLOAT64, .ndim = 1, .shape = {1}};
  int v = om__lower_x_value(l, f->num), s = om__lower_scalar(l, f->scale, OM_FLOAT64);
  if (v < 0 || s < 0 || !om__emit(l, "Cast", &v, 1, &d1, 1, &v, &OM_ATTR_INT("to", 11 /* DOUBLE */), 1) ||
      !om__emit(l, "Mul", (int[]){v, s}, 2, &d1, 1, &v, NULL, 0) || !om__emit(l, "Floor", &v, 1, &d1, 1, &v, NULL, 0))
    return -1;
  return om__lower_cast(l, v, &d1, OM_INT64);
}

/* A term's value: the product of its factors, a symbol's variable taken as its size divided by
 * its multiple: coef * (sizes product) / (multiples product) as one Mul or Div where it divides. */
static int term_value(om_lower *l, const om_xterm *t) {
  om_trace *tr = l->tr;
  int v = -1;
  int64_t mult = 1;
  for (int j = 0; j < t->n; j++) {
    const om_xfactor *f = &tr->fs.v[t->f[j]];
    int fv;
    if (f->var >= 0) {
      fv = symbol_value(l, f->var);
      mult *= tr->symbols.v[f->var].multiple;
    } else if (f->var == OM_XF_FMUL) {
      fv = scaled_floor(l, f);
    } else {
      fv = binary(l, f->var == OM_XF_MIN ? "Min" : "Div", floor_numerator(l, f), -1, f->den);
    }
    if (fv < 0) return -1;
    v = v < 0 ? fv : binary(l, "Mul", v, fv, 0);
  }
  int64_t c = t->coef;
  if (c % mult == 0) return c / mult == 1 ? v : binary(l, "Mul", v, -1, c / mult);
  if (mult % c == 0) return binary(l, "Div", v, -1, mult / c);
  return binary(l, "Div", binary(l, "Mul", v, -1, c), -1, mult);
}

int om__lower_x_value(om_lower *l, int x) {
  om_trace *tr = l->tr;
  const om_xexpr *e = &tr->xs.v[x];
  if (!e->n) return om__lower_ints(l, &e->c0, 1);
  int v = -1, neg = -1;
  for (int i = 0; i < e->n; i++) { /* positive terms added; negative ones summed and subtracted */
    om_xterm t = e->t[i];
    bool minus = t.coef < 0;
    if (minus) t.coef = -t.coef;
    int tv = term_value(l, &t);
    if (tv < 0) return -1;
    int *acc = minus ? &neg : &v;
    *acc = *acc < 0 ? tv : binary(l, "Add", *acc, tv, 0);
    if (*acc < 0) return -1;
  }
  if (v < 0) v = om__lower_ints(l, &(int64_t){0}, 1);
  if (neg >= 0) v = binary(l, "Sub", v, neg, 0);
  if (e->c0) v = e->c0 > 0 ? binary(l, "Add", v, -1, e->c0) : binary(l, "Sub", v, -1, -e->c0);
  return v;
}

int om__lower_zero_slices(om_lower *l, int i, int axis, int64_t count) {
  const om_tensor *t = l->c->in[i];
  int64_t shape[OM_MAX_DIMS];
  int ext[OM_MAX_DIMS];
  om_meta zm = {.dtype = t->dtype, .ndim = t->ndim}, cm = zm;
  for (int d = 0; d < t->ndim; d++) {
    shape[d] = zm.shape[d] = cm.shape[d] = t->shape[d];
    ext[d] = d == axis ? -1 : om__lower_in_ext(l, i, d);
  }
  shape[axis] = zm.shape[axis] = count;
  cm.shape[axis] += count;
  int zero = om__lower_scalar(l, 0, t->dtype), sh = om__lower_shape_operand(l, shape, ext, t->ndim), z, out;
  if (zero < 0 || sh < 0 || !om__emit(l, "Expand", (int[]){zero, sh}, 2, &zm, 1, &z, NULL, 0) ||
      !om__emit(l, "Concat", (int[]){om__lower_input(l, i), z}, 2, &cm, 1, &out, &OM_ATTR_INT("axis", axis), 1))
    return -1;
  return out;
}

int om__lower_shape_operand(om_lower *l, const int64_t *shape, const int *ext, int ndim) {
  int parts[2 * OM_MAX_DIMS], n_parts = 0, start = 0;
  for (int d = 0; d < ndim; d++) {
    if (ext[d] < 0) continue;
    if (d > start && (parts[n_parts++] = om__lower_ints(l, shape + start, d - start)) < 0) return -1;
    if ((parts[n_parts++] = om__lower_x_value(l, ext[d])) < 0) return -1;
    start = d + 1;
  }
  if (!n_parts) return om__lower_ints(l, shape, ndim);
  if (ndim > start && (parts[n_parts++] = om__lower_ints(l, shape + start, ndim - start)) < 0) return -1;
  if (n_parts == 1) return parts[0];
  om_meta m = {.dtype = OM_INT64, .ndim = 1, .shape = {ndim}};
  int out;
  return om__emit(l, "Concat", parts, n_parts, &m, 1, &out, &OM_ATTR_INT("axis", 0), 1) ? out : -1;
}

/* A 0-d int64 value of expression x (Range takes 0-d bounds: onnxruntime runs a [1] limit, but
 * its shape inference then gives a Gather on the Range's output one dim too many and refuses
 * the model). -1 on error. */
int om__lower_x_scalar(om_lower *l, int x) {
  int64_t c;
  if (om__x_is_const(l->tr, x, &c)) return om__lower_ints(l, &c, -1);
  om_meta scalar = {.dtype = OM_INT64, .ndim = 0};
  int v = om__lower_x_value(l, x), axes = om__lower_ints(l, (int64_t[]){0}, 1), in[2] = {v, axes};
  return v >= 0 && axes >= 0 && om__emit(l, "Squeeze", in, 2, &scalar, 1, &v, NULL, 0) ? v : -1;
}

/* ---- writing nodes ---- */

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
    for (int a = 0; same && a < n_attrs; a++) same = om__same_attr(&n->attrs[a], &attrs[a]);
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
  if (!om__lower_alive(l)) return false;
  int pad_in[4];
  if (!strcmp(op_type, "Pad") && n_in < 4) {
    /* every Pad names its axes (all of them: the same padding), which onnxruntime's PadFusion
     * skips: it folds a Pad of 0 into a following MaxPool's pads, where padding never wins, so
     * the maxima change; its NoopElimination first drops an Add of 0 or Mul by 1 between them
     * (random model 21:54928), so no check of the Pad's reader can rule it out */
    int64_t axes[OM_MAX_DIMS];
    for (int d = 0; d < meta[0].ndim; d++) axes[d] = d;
    for (int i = 0; i < 3; i++) pad_in[i] = i < n_in ? in[i] : -1;
    if ((pad_in[3] = om__lower_ints(l, axes, meta[0].ndim)) < 0) return false;
    in = pad_in, n_in = 4;
  }
  om_graph *g = &l->tr->g;
  int shared = shared_node(g, op_type, in, n_in, meta, n_out, attrs, n_attrs);
  if (shared >= 0) {
    for (int j = 0; out && j < n_out; j++) out[j] = g->nodes.v[shared].out[j];
    return true;
  }
  int *ins = om__arena_alloc(&g->arena, sizeof(int) * (size_t)(n_in + n_out));
  om_gattr *at = om__arena_alloc(&g->arena, sizeof *at * (size_t)(n_attrs ? n_attrs : 1));
  if (!ins || !at) return false;
  if (n_in) memcpy(ins, in, sizeof(int) * (size_t)n_in); /* a Constant reads nothing (in may be NULL) */
  for (int k = 0; k < n_attrs; k++) {
    at[k] = attrs[k];
    if (at[k].type == OM_GATTR_STRING && at[k].s) { /* a string the lowering built (Einsum's equation), not a literal */
      size_t len = strlen(at[k].s) + 1;
      char *copy = om__arena_alloc(&g->arena, len);
      if (!copy) return false;
      at[k].s = memcpy(copy, at[k].s, len);
      continue;
    }
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
  return om__lower_alive(l) ? om__const_generated(l->tr, data, count, ndim, dtype, l->c->op) : -1;
}

int om__lower_ints(om_lower *l, const int64_t *v, int n) { return generated(l, v, n < 0 ? 1 : n, n < 0 ? 0 : 1, OM_INT64); }

int om__lower_floats(om_lower *l, const float *v, int n) { return generated(l, v, n, 1, OM_FLOAT32); }

int om__lower_scalar(om_lower *l, double v, om_dtype dtype) {
  union { float f; int64_t i; uint8_t b; double d; } x;
  if (dtype == OM_FLOAT32) x.f = (float)v;
  else if (dtype == OM_FLOAT64) x.d = v;
  else if (dtype == OM_INT64) x.i = (int64_t)v;
  else x.b = v != 0;
  return generated(l, &x, 1, 0, dtype);
}

int om__lower_xfloat(om_lower *l, const om_xfloat *f) {
  om_meta one = {.dtype = OM_FLOAT32, .ndim = 1, .shape = {1}}, scalar = {.dtype = OM_FLOAT32, .ndim = 0};
  int v = om__lower_x_value(l, f->x);
  if (v < 0 || !om__emit(l, "Cast", &v, 1, &one, 1, &v, &OM_ATTR_INT("to", 1 /* FLOAT */), 1)) return -1;
  if ((f->fn == 2 || f->fn == 3) && !om__emit(l, "Sqrt", &v, 1, &one, 1, &v, NULL, 0)) return -1;
  if ((f->fn == 1 || f->fn == 3) && !om__emit(l, "Reciprocal", &v, 1, &one, 1, &v, NULL, 0)) return -1;
  const char *op[2] = {"Mul", "Add"};
  double by[2] = {f->a, f->b}, keep[2] = {1, 0};
  for (int k = 0; k < 2; k++) {
    if (by[k] == keep[k]) continue;
    int two[2] = {v, om__lower_scalar(l, by[k], OM_FLOAT32)};
    if (two[1] < 0 || !om__emit(l, op[k], two, 2, &one, 1, &v, NULL, 0)) return -1;
  }
  int axes = om__lower_ints(l, (int64_t[]){0}, 1), in[2] = {v, axes};
  return axes >= 0 && om__emit(l, "Squeeze", in, 2, &scalar, 1, &v, NULL, 0) ? v : -1;
}

int om__lower_farg(om_lower *l, int k) {
  return l->fmoves >> k & 1 ? om__lower_xfloat(l, &l->farg[k]) : om__lower_scalar(l, l->given->f[k], OM_FLOAT32);
}

bool om__lower_farg_moves(om_lower *l, int k) { return l->fmoves >> k & 1; }

/* Whether f gives float attr k of the call going on bit for bit as the model passed it, in the
 * record run and in every run that made the call: a scale (h0 + 0.1) / 4 is fitted from a few
 * runs as a * h0 + b, and a kernel takes 1 / scale in float, where one bit more or less moves
 * every sample of a large resize. */
static bool xfloat_bits(om_lower *l, int k, const om_xfloat *f) {
  int64_t v[64];
  double got;
  om__run_example(l->tr, v);
  if (!om__xfloat_eval(l->tr, f, v, &got) || memcmp(&got, &l->given->f[k], sizeof got)) return false;
  for (int r = 0; r < l->tr->runs.n; r++) {
    om_attrs at;
    if (!l->rc[r]) continue;
    om__runcall_attrs(&l->tr->runs.v[r], l->rc[r], &at);
    if (!om__xfloat_eval(l->tr, f, l->tr->runs.v[r].v, &got) || memcmp(&got, &at.f[k], sizeof got)) return false;
  }
  return true;
}

int om__lower_farg_recip(om_lower *l, int k) {
  if (!(l->fmoves >> k & 1)) return om__lower_scalar(l, (float)(1.0 / l->given->f[k]), OM_FLOAT32);
  /* the fit's a and b come from differences of the runs' floats, which can be a bit off the
   * model's own constants: (w0 + 0.1) / 4 fitted at w0 = 5 has b = (5.1 - 5) / 4, 2^-52 off 0.1
   * / 4, and rounds (2 + 0.1) / 4 the other way. The model wrote them in decimal: both rounded to
   * 15 significant digits, then 14, ... 6 are tried next (b's error is relative to the float, not
   * to b: 0.025 is 0.024999999999999911 here), then a rounded to float with b taken back from the
   * record run */
  om_xfloat fit = l->farg[k], f = fit;
  int64_t v0[64], x0;
  om__run_example(l->tr, v0);
  if (!om__x_eval(l->tr, fit.x, v0, &x0)) return -1;
  double fx0 = fit.fn == 1 ? 1 / (double)x0 : fit.fn == 2 ? sqrt((double)x0) : fit.fn == 3 ? 1 / sqrt((double)x0) : (double)x0;
  for (int digits = 15; digits >= 5 && !xfloat_bits(l, k, &f); digits--) {
    char a[32], b[32];
    snprintf(a, sizeof a, "%.*g", digits, fit.a);
    snprintf(b, sizeof b, "%.*g", digits, fit.b);
    f.a = digits > 5 ? strtod(a, NULL) : (float)fit.a;
    f.b = digits > 5 ? strtod(b, NULL) : l->given->f[k] - f.a * fx0;
  }
  if (!xfloat_bits(l, k, &f))
    return om__trace_fail(OM_ERR_TRACE_SYMBOLIC_SHAPE, "%s: float argument %d (%.17g here) changes with the sizes, and "
                          "the graph's %.17g * %s%s + %.17g does not give it bit for bit at every size the runs saw "
                          "(the op takes 1 / it in float)", l->who, k, l->given->f[k], f.a, f.fn == 1 ? "1 / " : f.fn == 2 ? "sqrt " : f.fn == 3 ? "1 / sqrt " : "",
                          om__x_name(l->tr, f.x), f.b), -1;
  /* (float)(1 / (a * fn(x) + b)) in double, the operations om__xfloat_eval's in its order */
  om_meta d1 = {.dtype = OM_FLOAT64, .ndim = 1, .shape = {1}}, f1 = d1;
  f1.dtype = OM_FLOAT32;
  int v = om__lower_x_value(l, f.x);
  if (v < 0 || !om__emit(l, "Cast", &v, 1, &d1, 1, &v, &OM_ATTR_INT("to", 11 /* DOUBLE */), 1)) return -1;
  if ((f.fn == 2 || f.fn == 3) && !om__emit(l, "Sqrt", &v, 1, &d1, 1, &v, NULL, 0)) return -1;
  int unit = om__lower_scalar(l, 1, OM_FLOAT64);
  if ((f.fn == 1 || f.fn == 3) && (unit < 0 || !om__emit(l, "Div", (int[]){unit, v}, 2, &d1, 1, &v, NULL, 0))) return -1;
  const char *op[2] = {"Mul", "Add"};
  double by[2] = {f.a, f.b}, keep[2] = {1, 0};
  for (int j = 0; j < 2; j++) {
    if (by[j] == keep[j]) continue;
    int two[2] = {v, om__lower_scalar(l, by[j], OM_FLOAT64)};
    if (two[1] < 0 || !om__emit(l, op[j], two, 2, &d1, 1, &v, NULL, 0)) return -1;
  }
  if (unit < 0 || !om__emit(l, "Div", (int[]){unit, v}, 2, &d1, 1, &v, NULL, 0) ||
      !om__emit(l, "Cast", &v, 1, &f1, 1, &v, &OM_ATTR_INT("to", 1 /* FLOAT */), 1))
    return -1;
  return v;
}

int om__lower_float(om_lower *l, double v) {
  om_meta m = {.dtype = OM_FLOAT32, .ndim = 0};
  int none = 0, out;
  return om__emit(l, "Constant", &none, 0, &m, 1, &out, &OM_ATTR_FLOAT("value_float", v), 1) ? out : -1;
}

void om__lower_output(om_lower *l, int j, int v) {
  if (!om__lower_alive(l) || v < 0) return;
  om_gvalue *val = &l->tr->g.values.v[v];
  const om_meta *m = &l->c->out_meta[j];
  if (val->dtype != m->dtype || val->ndim != m->ndim || memcmp(val->shape, m->shape, sizeof(int64_t) * (size_t)m->ndim)) {
    om__trace_fail(OM_ERR_TRACE_UNSUPPORTED_OPERATION,
                   "%s: its lowering gave output %d a value of another type or shape (a bug in onemodel)",
                   l->who, j);
    return;
  }
  if (val->producer >= 0 && v >= l->c->trace_mark[0]) /* a value this call made: the extents the probe chose */
    for (int d = 0; d < m->ndim; d++) {
      val->ext[d] = l->out_ext[j][d];
      val->dim_param[d] = val->ext[d] >= 0 ? om__x_name(l->tr, val->ext[d]) : NULL;
      om__x_extent(l->tr, val->ext[d]);
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

bool om__lower_own_pick(om_lower *l) {
  int64_t zero = 0;
  int index = om__lower_ints(l, &zero, -1);
  if (index < 0) return false;
  om__lower_output(l, 1, index);
  return om__lower_alias(l);
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
