/* Misc ops: cumsum, pad (constant, reflect, replicate), masked_fill and dropout (training form).
 * Each block holds infer, forward, backward (with public ops), the ONNX lowering and test settings,
 * as in elementwise.c. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* ONNX TensorProto.DataType codes (Cast's "to"). */
#define ONNX_INT64 7

/* Copies a's shape into c's output meta with the given dtype. */
static void same_shape(om_call *c, const om_tensor *a, om_dtype dtype) {
  c->out_meta[0] = (om_meta){.dtype = dtype, .ndim = a->ndim};
  memcpy(c->out_meta[0].shape, a->shape, sizeof a->shape);
}

/* Emits Cast(v) to int64 with meta's shape; the new value, -1 on error. */
static int cast_to_int64(om_lower *l, int v, const om_meta *meta) {
  om_meta m = *meta;
  m.dtype = OM_INT64;
  int out;
  return v >= 0 && om__emit(l, "Cast", &v, 1, &m, 1, &out, &OM_ATTR_INT("to", ONNX_INT64), 1) ? out : -1;
}

/* ---- cumsum(a, dim) and cumprod(a, dim): attrs {dim, reverse} (reverse: from the end; the
 * backwards' form) ----
 * float32 accumulates in double as PyTorch's CPU kernels, as float64 does; int64 wraps; bool counts
 * (multiplies) into int64. */

static bool infer_cumsum(om_call *c) {
  om_tensor *a = c->in[0];
  const char *who = om_op_name(c->op);
  if (c->attrs.n_i < 1 || c->attrs.n_i > 2)
    return om__fail(OM_ERR_INVALID_ARGUMENT, "%s: takes a dim (and a reverse flag), got %d int attributes", who, c->attrs.n_i);
  int d = om__wrap_dim(c->attrs.i[0], a->ndim ? a->ndim : 1, who);
  if (d < 0) return false;
  c->attrs.i[0] = d;
  c->attrs.i[1] = c->attrs.n_i == 2 && c->attrs.i[1];
  c->attrs.n_i = 2;
  same_shape(c, a, a->dtype == OM_BOOL ? OM_INT64 : a->dtype);
  return true;
}

/* The first element (in elements) in a and in o of line `line` of the lines along dim, in
 * row-major order of the other dims (a and o of one shape, their own strides). */
static void line_start(const om_tensor *a, const om_tensor *o, int dim, int64_t line, int64_t *ia, int64_t *io) {
  int64_t rem = line;
  *ia = *io = 0;
  for (int d = a->ndim - 1; d >= 0; d--) {
    if (d == dim) continue;
    int64_t idx = rem % a->shape[d];
    rem /= a->shape[d];
    *ia += idx * a->strides[d];
    *io += idx * o->strides[d];
  }
}

static bool forward_cumsum(om_call *c) {
  const om_tensor *a = c->in[0], *o = c->out[0];
  int nd = a->ndim, dim = (int)c->attrs.i[0];
  bool rev = c->attrs.i[1], prod = c->op == OM_OP_cumprod;
  int64_t n = nd ? a->shape[dim] : 1, sa = nd ? a->strides[dim] : 0, so = nd ? o->strides[dim] : 0;
  int64_t lines = n ? om_tensor_numel(o) / n : 0;
  const char *pa = om__data(a);
  char *po = om__data(o);
  for (int64_t line = 0; line < lines; line++) {
    int64_t ia, io;
    line_start(a, o, dim, line, &ia, &io);
    double accf = prod;
    uint64_t acci = prod;
    for (int64_t k = 0; k < n; k++) {
      int64_t kk = rev ? n - 1 - k : k, ea = ia + kk * sa, eo = io + kk * so;
      double vf = a->dtype == OM_FLOAT32 ? ((const float *)pa)[ea] : a->dtype == OM_FLOAT64 ? ((const double *)pa)[ea] : 0;
      uint64_t vi = a->dtype == OM_INT64 ? (uint64_t)((const int64_t *)pa)[ea] : a->dtype == OM_BOOL ? ((const uint8_t *)pa)[ea] != 0 : 0;
      if (prod) accf *= vf, acci *= vi; /* int64 wraps, as PyTorch's */
      else accf += vf, acci += vi;
      switch (a->dtype) {
        case OM_FLOAT32: ((float *)po)[eo] = (float)accf; break;
        case OM_FLOAT64: ((double *)po)[eo] = accf; break;
        default: ((int64_t *)po)[eo] = (int64_t)acci; break;
      }
    }
  }
  return true;
}

static om_tensor *cumsum_dir(om_tensor *a, int64_t dim, bool reverse) {
  return om__apply1(OM_OP_cumsum, &a, 1, &(om_attrs){.n_i = 2, .i = {dim, reverse}});
}

/* The gradient of a running sum is the running sum of g from the other end. */
static bool cumsum_backward(const om_record *r, om_tensor *const *g, om_tensor **gin) {
  return (gin[0] = cumsum_dir(g[0], r->attrs.i[0], !r->attrs.i[1])) != NULL;
}

/* The input of a running sum or product as a value (bool cast to int64 first), -1 on error; a 0-d
 * input is its own result, made the output here (*done). */
static int running_input(om_lower *l, const om_call *c, bool *done) {
  int x = om__lower_input(l, 0);
  if (x >= 0 && c->in[0]->dtype == OM_BOOL) x = cast_to_int64(l, x, &c->out_meta[0]);
  if ((*done = x >= 0 && !c->out_meta[0].ndim)) om__lower_output(l, 0, x);
  return x;
}

/* CumSum with a 0-d axis input (bool is cast to int64 first); a 0-d input is its own sum. A
 * float32 running sum along an axis that grows with a symbol runs in float64 and is cast back, as
 * forward accumulates it (om__lower_sum_in_double). */
static bool lower_cumsum(om_lower *l, const om_call *c) {
  om_meta m = c->out_meta[0];
  bool done;
  int x = running_input(l, c, &done), out;
  if (x < 0 || done) return x >= 0;
  bool dbl = om__lower_sum_in_double(l, 0, &c->attrs.i[0], 1);
  if (dbl && (x = om__lower_cast(l, x, &m, OM_FLOAT64)) < 0) return false;
  if (dbl) m.dtype = OM_FLOAT64;
  int axis = om__lower_ints(l, &c->attrs.i[0], -1);
  if (axis < 0 || !om__emit(l, "CumSum", (int[]){x, axis}, 2, &m, 1, &out, &OM_ATTR_INT("reverse", 1), c->attrs.i[1] ? 1 : 0))
    return false;
  if (dbl && (out = om__lower_cast(l, out, &m, OM_FLOAT32)) < 0) return false;
  om__lower_output(l, 0, out);
  return true;
}

const om_op_def om__op_cumsum = {
    .name = "cumsum", .takes_float64 = true, .n_in = 1, .n_out = 1, .infer = infer_cumsum, .forward = forward_cumsum,
    .backward = cumsum_backward, .lower = lower_cumsum, .onnx = "CumSum (axis input; bool: Cast to int64 first)",
    .test = {.n_in = 1, .ndims = {3}, .shapes = {{2, 3, 4}}, .lo = -2, .hi = 2, .attrs = {.n_i = 1, .i = {-2}}}};

om_tensor *om_cumsum(om_tensor *a, int dim) { return om__apply1(OM_OP_cumsum, &a, 1, &(om_attrs){.n_i = 1, .i = {dim}}); }

om_tensor *om__cumprod_dir(om_tensor *a, int64_t dim, bool reverse) {
  return om__apply1(OM_OP_cumprod, &a, 1, &(om_attrs){.n_i = 2, .i = {dim, reverse}});
}

/* PyTorch's cumprod_backward, zeros included: dL/dx_k = sum over i >= k of g_i prod(x_j, j <= i,
 * j != k). Before the first zero of a line that is R_k / x_k with R the running sum from the end of
 * g y; at the first zero, the running sum from the end of g y' with y' the running product with
 * that zero taken as 1; after it, 0 (every product holds the zero). Reversed lines read from the
 * other end. */
static bool cumprod_backward(const om_record *r, om_tensor *const *g, om_tensor **gin) {
  om_scope s = {0};
  int64_t dim = r->attrs.i[0];
  bool rev = r->attrs.i[1];
  om_tensor *x = r->in[0], *y = r->saved[0], *one = om__keep(&s, om_scalar(1, x->dtype)), *zero = om__keep(&s, om_scalar(0, x->dtype));
  om_tensor *z = om__keep(&s, om_eq(x, zero)), *seen = om__keep(&s, cumsum_dir(z, dim, rev)); /* zeros up to k */
  om_tensor *before = om__keep(&s, om_eq(seen, om__keep(&s, om_scalar(0, OM_INT64))));
  om_tensor *first = om__keep(&s, om_logical_and(z, om__keep(&s, om_eq(seen, om__keep(&s, om_scalar(1, OM_INT64))))));
  om_tensor *safe = om__keep(&s, om_where(before, x, one));
  om_tensor *y1 = om__keep(&s, om__cumprod_dir(om__keep(&s, om_where(first, one, x)), dim, rev));
  om_tensor *at_first = om__keep(&s, cumsum_dir(om__keep(&s, om_mul(g[0], y1)), dim, !rev));
  om_tensor *plain = om__keep(&s, om_div(om__keep(&s, cumsum_dir(om__keep(&s, om_mul(g[0], y)), dim, !rev)), safe));
  om_tensor *rest = om__keep(&s, om_where(first, at_first, zero));
  gin[0] = before && plain && rest ? om_where(before, plain, rest) : NULL;
  om__scope_end(&s);
  return gin[0] != NULL;
}

/* What the graphs of cumprod, cummax and cummin share: along dim of extent n (computed at run
 * time from expression n_x where symbolic), the Range 0, ..., n - 1 ([n], range), the mask of j <= i (j >= i reversed;
 * Unsqueeze, LessOrEqual) shaped [n (i), n (j), 1, ...] with a 1 for each axis of m after dim
 * (mask), and x (of m's shape and dtype) unsqueezed at dim, so that x_j runs along axis dim + 1 of
 * the wide shape [.., n (i), n (j), ..] (xj; wide: that shape, m's dtype). */
typedef struct { int range, mask, xj; om_meta wide; } prefix_graph;

static bool prefix_lower(om_lower *l, const om_meta *m, int x, int n_x, int64_t dim, bool reverse, prefix_graph *p) {
  int64_t zero = 0, one_i = 1, trail[OM_MAX_DIMS];
  int nd = m->ndim, n_trail = nd - 1 - (int)dim, n = om__lower_x_scalar(l, n_x);
  for (int k = 0; k < n_trail; k++) trail[k] = 2 + k; /* the mask's axes for x's after dim */
  om_meta r = {.dtype = OM_INT64, .ndim = 1, .shape = {m->shape[dim]}}, mask = {.dtype = OM_BOOL, .ndim = 2 + n_trail};
  mask.shape[0] = mask.shape[1] = m->shape[dim];
  for (int k = 2; k < mask.ndim; k++) mask.shape[k] = 1;
  om_meta col = r, row = r;
  p->wide = *m;
  p->wide.ndim = nd + 1;
  for (int k = (int)dim + 1; k <= nd; k++) p->wide.shape[k] = m->shape[k - 1];
  col.ndim = row.ndim = 2, col.shape[1] = 1, row.shape[0] = 1, row.shape[1] = m->shape[dim];
  om_meta xu = p->wide;
  xu.shape[dim] = 1;
  int z = om__lower_ints(l, &zero, -1), o = om__lower_ints(l, &one_i, -1), ax0 = om__lower_ints(l, &zero, 1), ax1 = om__lower_ints(l, &one_i, 1);
  int ax_dim = om__lower_ints(l, &dim, 1), ax_t = n_trail ? om__lower_ints(l, trail, n_trail) : -1, ri, cj, mk;
  om_meta square = mask;
  square.ndim = 2;
  return n >= 0 && z >= 0 && o >= 0 && ax0 >= 0 && ax1 >= 0 && ax_dim >= 0 && (!n_trail || ax_t >= 0) &&
         om__emit(l, "Range", (int[]){z, n, o}, 3, &r, 1, &p->range, NULL, 0) &&
         om__emit(l, "Unsqueeze", (int[]){p->range, ax1}, 2, &col, 1, &ri, NULL, 0) &&
         om__emit(l, "Unsqueeze", (int[]){p->range, ax0}, 2, &row, 1, &cj, NULL, 0) &&
         om__emit(l, reverse ? "GreaterOrEqual" : "LessOrEqual", (int[]){cj, ri}, 2, &square, 1, &mk, NULL, 0) &&
         (n_trail ? om__emit(l, "Unsqueeze", (int[]){mk, ax_t}, 2, &mask, 1, &p->mask, NULL, 0) : (p->mask = mk, true)) &&
         om__emit(l, "Unsqueeze", (int[]){x, ax_dim}, 2, &xu, 1, &p->xj, NULL, 0);
}

/* ONNX has no CumProd: the prefix mask picks x_j or 1 (Where) and ReduceProd over j gives y_i
 * (bool: Cast to int64 first). */
static bool lower_cumprod(om_lower *l, const om_call *c) {
  const om_meta *m = &c->out_meta[0];
  bool done;
  int x = running_input(l, c, &done), out;
  if (x < 0 || done) return x >= 0;
  int64_t j = c->attrs.i[0] + 1;
  prefix_graph p;
  int ones = om__lower_scalar(l, 1, m->dtype), ax_j = om__lower_ints(l, &j, 1), pick;
  if (ones < 0 || ax_j < 0 || !prefix_lower(l, m, x, om__lower_in_x(l, 0, (int)c->attrs.i[0]), c->attrs.i[0], c->attrs.i[1], &p) ||
      !om__emit(l, "Where", (int[]){p.mask, p.xj, ones}, 3, &p.wide, 1, &pick, NULL, 0) ||
      !om__emit(l, "ReduceProd", (int[]){pick, ax_j}, 2, m, 1, &out, &OM_ATTR_INT("keepdims", 0), 1))
    return false;
  om__lower_output(l, 0, out);
  return true;
}

const om_op_def om__op_cumprod = {
    .name = "cumprod", .takes_float64 = true, .n_in = 1, .n_out = 1, .saves = OM_SAVES_IN(0) | OM_SAVES_OUT(0), .infer = infer_cumsum,
    .forward = forward_cumsum, .backward = cumprod_backward, .lower = lower_cumprod,
    .onnx = "ReduceProd over Where(j <= i, x_j, 1) (Range, Unsqueeze, LessOrEqual; bool: Cast to int64 first)",
    .test = {.n_in = 1, .ndims = {3}, .shapes = {{2, 3, 4}}, .lo = -2, .hi = 2, .attrs = {.n_i = 1, .i = {-2}}}};

om_tensor *om_cumprod(om_tensor *a, int dim) { return om__apply1(OM_OP_cumprod, &a, 1, &(om_attrs){.n_i = 1, .i = {dim}}); }

/* ---- cummax(a, dim) and cummin(a, dim): attrs {dim}; outputs values and int64 indices ----
 * PyTorch's rule (cummax_cummin_helper): the running best moves to element i when it is NaN, or
 * when the best so far is not NaN and x_i >= best (cummin: <=). So equal values move the index to
 * the later one, and from the first NaN on the value is NaN at the last NaN's index. float32,
 * int64 and bool (compared as 0 and 1). */

static bool infer_cumextreme(om_call *c) {
  const om_tensor *a = c->in[0];
  const char *who = om_op_name(c->op);
  if (c->attrs.n_i != 1) return om__fail(OM_ERR_INVALID_ARGUMENT, "%s: takes a dim, got %d int attributes", who, c->attrs.n_i);
  int d = om__wrap_dim(c->attrs.i[0], a->ndim ? a->ndim : 1, who);
  if (d < 0) return false;
  c->attrs.i[0] = d;
  same_shape(c, a, a->dtype);
  c->out_meta[1] = c->out_meta[0];
  c->out_meta[1].dtype = OM_INT64;
  return true;
}

/* Whether element x (at p) takes over from the best so far (at q) by PyTorch's rule. */
static bool takes_over(const char *p, const char *q, om_dtype dtype, bool min) {
  if (dtype == OM_FLOAT32) {
    float x = *(const float *)p, best = *(const float *)q;
    return x != x || (best == best && (min ? x <= best : x >= best));
  }
  int64_t x = dtype == OM_INT64 ? *(const int64_t *)p : *(const uint8_t *)p, best = dtype == OM_INT64 ? *(const int64_t *)q : *(const uint8_t *)q;
  return min ? x <= best : x >= best;
}

static bool forward_cumextreme(om_call *c) {
  const om_tensor *a = c->in[0], *v = c->out[0], *ix = c->out[1];
  int nd = a->ndim, dim = (int)c->attrs.i[0];
  bool min = c->op == OM_OP_cummin;
  size_t es = om__dtype_size(a->dtype);
  int64_t n = nd ? a->shape[dim] : 1, sa = nd ? a->strides[dim] : 0, so = nd ? v->strides[dim] : 0;
  int64_t lines = n ? om_tensor_numel(v) / n : 0;
  const char *pa = om__data(a);
  char *pv = om__data(v);
  int64_t *pi = (int64_t *)om__data(ix); /* contiguous as v: the same element offsets */
  for (int64_t line = 0; line < lines; line++) {
    int64_t ia, io, best = 0;
    line_start(a, v, dim, line, &ia, &io);
    for (int64_t k = 0; k < n; k++) {
      if (takes_over(pa + (ia + k * sa) * (int64_t)es, pa + (ia + best * sa) * (int64_t)es, a->dtype, min)) best = k;
      memcpy(pv + (io + k * so) * (int64_t)es, pa + (ia + best * sa) * (int64_t)es, es);
      pi[io + k * so] = best;
    }
  }
  return true;
}

static bool cumextreme_backward(const om_record *r, om_tensor *const *g, om_tensor **gin) {
  return om__picked_backward(r->in[0], (int)r->attrs.i[0], r->saved[1], g[0], gin);
}

/* ONNX has no running maximum. Over the prefix mask (bool cast to int64 first): the best of the
 * prefix's numbers (Where(mask and not NaN, x_j, -inf), ReduceMax over j; cummin: +inf,
 * ReduceMin; int64 fills with its extreme), the last j of the prefix where x_j equals it
 * (Equal, Where(.., j, -1), ReduceMax), the last NaN's j where the prefix holds one (IsNaN, the
 * same), and the values gathered from x at the chosen index (GatherElements: x's own bits,
 * -0 and NaN included; bool gathered as int64 and cast back). A 0-d input is its own value at
 * index 0. */
static bool lower_cumextreme(om_lower *l, const om_call *c) {
  int empty = om__lower_empty(l, c);
  if (empty) return empty > 0;
  const om_tensor *a = c->in[0];
  int x = om__lower_input(l, 0);
  if (x < 0) return false;
  if (!a->ndim) return om__lower_own_pick(l);
  bool min = c->op == OM_OP_cummin, fl = a->dtype == OM_FLOAT32;
  int64_t dim = c->attrs.i[0], j = dim + 1, minus1 = -1, fill_i = min ? INT64_MAX : INT64_MIN, trail[OM_MAX_DIMS];
  int n_trail = a->ndim - 1 - (int)dim;
  for (int k = 0; k < n_trail; k++) trail[k] = 1 + k;
  om_meta num = c->out_meta[0], idx_m = c->out_meta[1];
  num.dtype = fl ? OM_FLOAT32 : OM_INT64;
  int xn = a->dtype == OM_BOOL ? om__lower_cast(l, x, &c->out_meta[0], OM_INT64) : x, n_x = om__lower_in_x(l, 0, (int)dim);
  /* onnxruntime's ReduceMax fails on an empty axis: where a symbol can make dim empty, one extra
   * element at its end (which no prefix before it reads), dropped from both outputs after */
  bool pad = om__lower_may_be_0(l, om__lower_in_ext(l, 0, (int)dim));
  if (pad && xn >= 0) xn = om__lower_extra_row(l, xn, &num, (int)dim), idx_m.shape[dim]++, n_x = om__lower_x_lin(l, 1, n_x, 0, -1, 1);
  prefix_graph p;
  if (xn < 0 || n_x < 0 || !prefix_lower(l, &num, xn, n_x, dim, false, &p)) return false;
  om_meta wb = p.wide, wi = p.wide, one = p.wide, xu = p.wide, jm = {.dtype = OM_INT64, .ndim = 1 + n_trail, .shape = {a->shape[dim]}};
  wb.dtype = OM_BOOL, wi.dtype = OM_INT64, one.shape[j] = 1, xu.shape[dim] = 1, xu.dtype = OM_BOOL;
  for (int k = 1; k <= n_trail; k++) jm.shape[k] = 1;
  int ax_j = om__lower_ints(l, &j, 1), none = om__lower_ints(l, &minus1, -1), ax_t = n_trail ? om__lower_ints(l, trail, n_trail) : -1;
  int fill = fl ? om__lower_scalar(l, min ? INFINITY : -INFINITY, OM_FLOAT32) : om__lower_ints(l, &fill_i, -1);
  int valid = p.mask, nan = -1, ok, nanhit = -1, picked, best, bu, eq, hit, jcol = p.range, hj, pos, out[2];
  const char *reduce = min ? "ReduceMin" : "ReduceMax";
  om_gattr keep0 = OM_ATTR_INT("keepdims", 0);
  if (ax_j < 0 || none < 0 || fill < 0 || (n_trail && ax_t < 0)) return false;
  if (fl && (!om__emit(l, "IsNaN", &p.xj, 1, &xu, 1, &nan, NULL, 0) || !om__emit(l, "Not", &nan, 1, &xu, 1, &ok, NULL, 0) ||
             !om__emit(l, "And", (int[]){p.mask, ok}, 2, &wb, 1, &valid, NULL, 0) ||
             !om__emit(l, "And", (int[]){p.mask, nan}, 2, &wb, 1, &nanhit, NULL, 0)))
    return false;
  if (!om__emit(l, "Where", (int[]){valid, p.xj, fill}, 3, &p.wide, 1, &picked, NULL, 0) ||
      !om__emit(l, reduce, (int[]){picked, ax_j}, 2, &num, 1, &best, &keep0, 1) ||
      !om__emit(l, "Unsqueeze", (int[]){best, ax_j}, 2, &one, 1, &bu, NULL, 0) ||
      !om__emit(l, "Equal", (int[]){p.xj, bu}, 2, &wb, 1, &eq, NULL, 0) ||
      !om__emit(l, "And", (int[]){p.mask, eq}, 2, &wb, 1, &hit, NULL, 0) ||
      (n_trail && !om__emit(l, "Unsqueeze", (int[]){p.range, ax_t}, 2, &jm, 1, &jcol, NULL, 0)) ||
      !om__emit(l, "Where", (int[]){hit, jcol, none}, 3, &wi, 1, &hj, NULL, 0) ||
      !om__emit(l, "ReduceMax", (int[]){hj, ax_j}, 2, &idx_m, 1, &pos, &keep0, 1))
    return false;
  if (fl) { /* the last NaN's index where the prefix holds one */
    om_meta has = idx_m;
    has.dtype = OM_BOOL;
    int nj, npos, seen;
    if (!om__emit(l, "Where", (int[]){nanhit, jcol, none}, 3, &wi, 1, &nj, NULL, 0) ||
        !om__emit(l, "ReduceMax", (int[]){nj, ax_j}, 2, &idx_m, 1, &npos, &keep0, 1) ||
        !om__emit(l, "Greater", (int[]){npos, none}, 2, &has, 1, &seen, NULL, 0) ||
        !om__emit(l, "Where", (int[]){seen, npos, pos}, 3, &idx_m, 1, &pos, NULL, 0))
      return false;
  }
  if (!om__emit(l, "GatherElements", (int[]){xn, pos}, 2, &num, 1, &out[0], &OM_ATTR_INT("axis", dim), 1)) return false;
  if (pad && ((out[0] = om__lower_drop_row(l, out[0], num, (int)dim)) < 0 || (pos = om__lower_drop_row(l, pos, idx_m, (int)dim)) < 0))
    return false;
  if (a->dtype == OM_BOOL && (out[0] = om__lower_cast(l, out[0], &c->out_meta[0], OM_BOOL)) < 0) return false;
  om__lower_output(l, 0, out[0]);
  om__lower_output(l, 1, pos);
  return true;
}

#define CUMEXTREME_DEF(NAME, REDUCE)                                                                                       \
  const om_op_def om__op_##NAME = {                                                                                        \
      .name = #NAME, .n_in = 1, .n_out = 2, .saves = OM_SAVES_OUT(1), .infer = infer_cumextreme,                           \
      .forward = forward_cumextreme, .backward = cumextreme_backward, .lower = lower_cumextreme,                           \
      .onnx = REDUCE " over the prefix (Range, LessOrEqual, Where; IsNaN), Equal, ReduceMax of j for the index, GatherElements", \
      .test = {.n_in = 1, .ndims = {3}, .shapes = {{2, 3, 4}}, .lo = -2, .hi = 2, .attrs = {.n_i = 1, .i = {-2}}}};
CUMEXTREME_DEF(cummax, "ReduceMax")
CUMEXTREME_DEF(cummin, "ReduceMin")
#undef CUMEXTREME_DEF

/* The running extreme's call: values, and the indices to *indices (released when NULL). */
static om_tensor *cumextreme(om_op op, om_tensor *a, int dim, om_tensor **indices) {
  om_tensor *out[2] = {0};
  if (om__apply(op, &a, 1, &(om_attrs){.n_i = 1, .i = {dim}}, out) < 0) return NULL;
  if (indices) *indices = out[1];
  else om_tensor_release(out[1]);
  return out[0];
}

om_tensor *om_cummax(om_tensor *a, int dim, om_tensor **indices) { return cumextreme(OM_OP_cummax, a, dim, indices); }
om_tensor *om_cummin(om_tensor *a, int dim, om_tensor **indices) { return cumextreme(OM_OP_cummin, a, dim, indices); }

/* ---- pad(a, pads, mode, value): attrs i = {mode, pads...} (PyTorch's order: last dim first,
 * (before, after) pairs), f = {value} ----
 * Modes 3 and 4 are internal: the adjoints of reflect and replicate (each padded element's
 * value added back to the element it copies), which their backward rules use. */

enum { PAD_CONSTANT, PAD_REFLECT, PAD_REPLICATE, PAD_REFLECT_ADJ, PAD_REPLICATE_ADJ };
static const char *const pad_modes[] = {"constant", "reflect", "replicate", "reflect (adjoint)", "replicate (adjoint)"};

/* Pads before and after dim d of an ndim tensor, from PyTorch's list. */
static void pads_of(const om_attrs *at, int ndim, int d, int64_t *before, int64_t *after) {
  int k = ndim - 1 - d, npad = at->n_i - 1;
  *before = 2 * k < npad ? at->i[1 + 2 * k] : 0;
  *after = 2 * k + 1 < npad ? at->i[2 + 2 * k] : 0;
}

static bool infer_pad(om_call *c) {
  om_attrs *at = &c->attrs;
  om_tensor *a = c->in[0];
  char sh[OM_SHAPE_STR_LEN];
  int npad = at->n_i - 1;
  if (at->n_i < 1 || at->i[0] < 0 || at->i[0] > PAD_REPLICATE_ADJ)
    return om__fail(OM_ERR_INVALID_ARGUMENT, "pad: mode must be 0 (constant), 1 (reflect) or 2 (replicate), got %lld",
                    at->n_i ? (long long)at->i[0] : -1LL);
  int mode = (int)at->i[0];
  if (npad % 2) return om__fail(OM_ERR_INVALID_ARGUMENT, "pad: padding length must be divisible by 2, got %d", npad);
  if (npad > 2 * a->ndim)
    return om__fail(OM_ERR_INVALID_ARGUMENT, "pad: padding length should be less than or equal to two times the input "
                    "dimension but got padding length %d and input of dimension %d", npad, a->ndim);
  if (at->n_f > 1) return om__fail(OM_ERR_INVALID_ARGUMENT, "pad: takes one float attribute (value), got %d", at->n_f);
  double value = at->n_f ? at->f[0] : 0;
  if (a->dtype == OM_BOOL || (mode >= PAD_REFLECT_ADJ && a->dtype != OM_FLOAT32))
    return om__fail(OM_ERR_DTYPE_MISMATCH, "pad: takes float32 or int64, not %s", om_dtype_name(a->dtype));
  if (mode != PAD_CONSTANT) {
    if (value != 0)
      return om__fail(OM_ERR_INVALID_ARGUMENT, "pad: padding mode \"%s\" doesn't take in value argument (got %g)", pad_modes[mode], value);
    if (!(npad == 2 || npad == 4 || npad == 6) || a->ndim < npad / 2 + 1 || a->ndim > npad / 2 + 2)
      return om__fail(OM_ERR_INVALID_ARGUMENT, "pad: mode \"%s\" pads the last 1, 2 or 3 dims of an input with 1 or 2 "
                      "more dims (PyTorch's 2D-5D rule); got padding length %d for input %s", pad_modes[mode], npad,
                      om__shape_str(sh, sizeof sh, a->shape, a->ndim));
  }
  if (a->dtype == OM_INT64 && mode == PAD_CONSTANT) {
    if (!(value >= -9223372036854775808.0 && value < 9223372036854775808.0))
      return om__fail(OM_ERR_INVALID_ARGUMENT, "pad: value %g does not fit an int64 input", value);
    value = (double)(int64_t)value; /* truncated, as PyTorch converts the fill value */
  }
  at->n_f = 1;
  at->f[0] = value;
  same_shape(c, a, a->dtype);
  for (int d = 0; d < a->ndim; d++) {
    int64_t b, e, n = a->shape[d];
    pads_of(at, a->ndim, d, &b, &e);
    if (mode != PAD_CONSTANT && (b < 0 || e < 0))
      return om__fail(OM_ERR_INVALID_ARGUMENT, "pad: mode \"%s\" takes no negative padding, got (%lld, %lld) at dim %d",
                      pad_modes[mode], (long long)b, (long long)e, d);
    if (mode >= PAD_REFLECT_ADJ) { /* the input is the padded tensor */
      int64_t m = n - b - e;
      if ((b || e) && (m < 1 || (mode == PAD_REFLECT_ADJ && (b >= m || e >= m)))) /* an unpadded dim may be empty */
        return om__fail(OM_ERR_INVALID_ARGUMENT, "pad: the %s of dim %d (size %lld) by pads (%lld, %lld) has no valid shape",
                        pad_modes[mode], d, (long long)n, (long long)b, (long long)e);
      c->out_meta[0].shape[d] = m;
      continue;
    }
    if ((b < -INT64_MAX / 4 || b > INT64_MAX / 4 || e < -INT64_MAX / 4 || e > INT64_MAX / 4) ||
        (c->out_meta[0].shape[d] = n + b + e) < 0)
      return om__fail(OM_ERR_INVALID_ARGUMENT, "pad: the input size %lld, plus negative padding %lld and %lld resulted in a "
                      "negative output size, which is invalid. Check dimension %d of your input.", (long long)n,
                      (long long)b, (long long)e, d);
    if ((b || e) && mode != PAD_CONSTANT && n < 1)
      return om__fail(OM_ERR_INVALID_ARGUMENT, "pad: mode \"%s\" needs a non-empty dim %d, input %s", pad_modes[mode], d,
                      om__shape_str(sh, sizeof sh, a->shape, a->ndim));
    if (mode == PAD_REFLECT && (b || e) && (b >= n || e >= n)) /* an unpadded dim may be empty (a batch of 0) */
      return om__fail(OM_ERR_INVALID_ARGUMENT, "pad: padding size should be less than the corresponding input dimension, "
                      "but got: padding (%lld, %lld) at dimension %d of input %s", (long long)b, (long long)e, d,
                      om__shape_str(sh, sizeof sh, a->shape, a->ndim));
  }
  return true;
}

/* Index i along a padded axis of n source elements with `before` padding: the source index it
 * reads, or -1 for the constant. */
static int64_t pad_source(int64_t i, int64_t before, int64_t n, int mode) {
  int64_t j = i - before;
  switch (mode) {
    case PAD_REFLECT:
    case PAD_REFLECT_ADJ:
      if (j < 0) j = -j;
      if (j >= n) j = 2 * (n - 1) - j;
      return j;
    case PAD_REPLICATE:
    case PAD_REPLICATE_ADJ:
      return j < 0 ? 0 : j >= n ? n - 1 : j;
    default:
      return j >= 0 && j < n ? j : -1;
  }
}

/* Walks the padded index space P (the output; for the adjoints the input) and for each element
 * copies its source into it, or (adjoints) adds it into its source. Per-axis maps, computed once,
 * hold each padded index's source offset (in elements of the unpadded tensor, -1 for the fill). */
static bool forward_pad(om_call *c) {
  const om_tensor *in = c->in[0], *out = c->out[0];
  int mode = (int)c->attrs.i[0], nd = in->ndim;
  bool adj = mode >= PAD_REFLECT_ADJ;
  const om_tensor *P = adj ? in : out, *U = adj ? out : in;
  int64_t total = 0, numel = om_tensor_numel(P);
  for (int d = 0; d < nd; d++) total += P->shape[d];
  int64_t *maps = om__alloc(sizeof(int64_t) * (uint64_t)(total ? total : 1), "pad"), *map[OM_MAX_DIMS];
  if (!maps) return false;
  int64_t used = 0;
  for (int d = 0; d < nd; d++) {
    int64_t b, e;
    pads_of(&c->attrs, nd, d, &b, &e);
    map[d] = maps + used;
    used += P->shape[d];
    for (int64_t i = 0; i < P->shape[d]; i++) {
      int64_t src = pad_source(i, b, U->shape[d], mode);
      map[d][i] = src < 0 ? -1 : src * U->strides[d];
    }
  }
  if (adj) memset(om__data(out), 0, sizeof(float) * (size_t)om_tensor_numel(out));
  size_t esize = om__dtype_size(in->dtype);
  float fill_f = (float)c->attrs.f[0];
  int64_t fill_i = in->dtype == OM_FLOAT32 ? 0 : (int64_t)c->attrs.f[0]; /* a float fill (-inf for max pooling) is never converted: UB out of int64's range */
  const void *fill = in->dtype == OM_FLOAT32 ? (const void *)&fill_f : (const void *)&fill_i;
  int64_t idx[OM_MAX_DIMS] = {0};
  char *pu = om__data(U), *pp = om__data(P);
  if (!adj && nd > 0) { /* the padded tensor row by row along the last dim, each element typed: no call per element */
    int64_t n = P->shape[nd - 1], step = P->strides[nd - 1], rows = n ? numel / n : 0;
    const int64_t *last = map[nd - 1];
    for (int64_t r = 0; r < rows; r++) {
      int64_t su = 0, sp = 0;
      bool inside = true;
      for (int d = 0; d < nd - 1; d++) {
        inside &= map[d][idx[d]] >= 0;
        su += map[d][idx[d]];
        sp += idx[d] * P->strides[d];
      }
      if (in->dtype == OM_FLOAT32) {
        float *y = (float *)pp + sp;
        const float *x = (const float *)pu + su;
        for (int64_t i = 0; i < n; i++) y[i * step] = inside && last[i] >= 0 ? x[last[i]] : fill_f;
      } else {
        int64_t *y = (int64_t *)pp + sp;
        const int64_t *x = (const int64_t *)pu + su;
        for (int64_t i = 0; i < n; i++) y[i * step] = inside && last[i] >= 0 ? x[last[i]] : fill_i;
      }
      for (int d = nd - 2; d >= 0 && ++idx[d] == P->shape[d]; d--) idx[d] = 0;
    }
    free(maps);
    return true;
  }
  for (int64_t k = 0; k < numel; k++) {
    int64_t su = 0, sp = 0;
    bool inside = true;
    for (int d = 0; d < nd; d++) {
      int64_t m = map[d][idx[d]];
      inside &= m >= 0;
      su += m;
      sp += idx[d] * P->strides[d];
    }
    if (adj) ((float *)pu)[su] += ((const float *)pp)[sp];
    else memcpy(pp + sp * (int64_t)esize, inside ? pu + su * (int64_t)esize : fill, esize);
    for (int d = nd - 1; d >= 0 && ++idx[d] == P->shape[d]; d--) idx[d] = 0;
  }
  free(maps);
  return true;
}

static om_tensor *pad_mode(om_tensor *a, const om_attrs *at, int mode, bool negate) {
  om_attrs b = *at;
  b.i[0] = mode;
  b.n_f = 1;
  b.f[0] = 0;
  for (int k = 1; negate && k < b.n_i; k++) b.i[k] = -b.i[k];
  return om__apply1(OM_OP_pad, &a, 1, &b);
}

/* constant: pad g by the negated pads (crops what was added, zero-fills what was cropped);
 * reflect/replicate: their adjoint, and back. */
static bool pad_backward(const om_record *r, om_tensor *const *g, om_tensor **gin) {
  static const int back[] = {PAD_CONSTANT, PAD_REFLECT_ADJ, PAD_REPLICATE_ADJ, PAD_REFLECT, PAD_REPLICATE};
  int mode = (int)r->attrs.i[0];
  return (gin[0] = pad_mode(g[0], &r->attrs, back[mode], mode == PAD_CONSTANT)) != NULL;
}

/* A padded axis is its extent plus the two pads, which may be computed from sizes (F.pad(x,
 * (0, T % 4 ...)): an expression each). */
static bool pad_extents(om_lower *l, const om_call *c) {
  int nd = c->in[0]->ndim;
  for (int d = 0; d < nd; d++) {
    int k = nd - 1 - d, npad = om__lower_given(l)->n_i - 1;
    if (2 * k >= npad) continue;
    int after = 2 * k + 1 < npad ? om__lower_arg(l, 2 + 2 * k) : om__lower_x_const(l, 0);
    int x = om__lower_x_lin(l, 1, om__lower_in_x(l, 0, d), 1, om__lower_arg(l, 1 + 2 * k), 0);
    om__lower_candidate(l, 0, d, x >= 0 ? om__lower_x_lin(l, 1, x, 1, after, 0) : -1);
  }
  return true;
}

/* Pad (opset 19) with all 2 x ndim pads (ONNX's order: every dim's begin, then every end; a pad
 * computed from sizes computed in the graph) and, for constant mode, the value as a 0-d input of
 * the input's dtype. */
static bool lower_pad(om_lower *l, const om_call *c) {
  static const char *const onnx_mode[] = {"constant", "reflect", "edge"};
  int mode = (int)c->attrs.i[0], nd = c->in[0]->ndim, npad = om__lower_given(l)->n_i - 1;
  if (mode >= PAD_REFLECT_ADJ)
    return om__lower_refuse(l, c, "the adjoint of reflect/replicate padding (a gradient) has no ONNX form here");
  int64_t pads[2 * OM_MAX_DIMS];
  int ext[2 * OM_MAX_DIMS];
  for (int d = 0; d < nd; d++) {
    int k = nd - 1 - d;
    pads_of(&c->attrs, nd, d, &pads[d], &pads[nd + d]);
    ext[d] = 2 * k < npad && om__lower_arg_moves(l, 1 + 2 * k) ? om__lower_arg(l, 1 + 2 * k) : -1;
    ext[nd + d] = 2 * k + 1 < npad && om__lower_arg_moves(l, 2 + 2 * k) ? om__lower_arg(l, 2 + 2 * k) : -1;
  }
  int in[3] = {om__lower_input(l, 0), om__lower_shape_operand(l, pads, ext, 2 * nd), -1};
  if (mode == PAD_CONSTANT) {
    int64_t iv = (int64_t)c->attrs.f[0];
    in[2] = c->in[0]->dtype == OM_INT64 ? om__lower_ints(l, &iv, -1) : om__lower_float(l, c->attrs.f[0]);
  }
  int out;
  if (in[1] < 0 || (mode == PAD_CONSTANT && in[2] < 0) ||
      !om__emit(l, "Pad", in, mode == PAD_CONSTANT ? 3 : 2, &c->out_meta[0], 1, &out, &OM_ATTR_STRING("mode", onnx_mode[mode]), 1))
    return false;
  om__lower_output(l, 0, out);
  return true;
}

const om_op_def om__op_pad = {
    .name = "pad", .n_in = 1, .n_out = 1, .infer = infer_pad, .forward = forward_pad, .backward = pad_backward,
    .lower = lower_pad, .extents = pad_extents, .sym_args = ~(uint64_t)1, .onnx = "Pad (modes constant, reflect, edge)",
    .test = {.n_in = 1, .ndims = {3}, .shapes = {{2, 3, 4}}, .lo = -2, .hi = 2,
             .attrs = {.n_i = 5, .i = {PAD_REFLECT, 2, 3, 1, 0}},
             .empty_refusal = "needs a non-empty dim"}}; /* nothing to reflect (PyTorch refuses too) */

om_tensor *om_pad(om_tensor *a, const int64_t *pad, int npad, om_pad_mode mode, double value) {
  if (npad < 0 || npad > 2 * OM_MAX_DIMS || (npad && !pad))
    return om__fail(OM_ERR_INVALID_ARGUMENT, "pad: padding length %d (at most %d)", npad, 2 * OM_MAX_DIMS), NULL;
  if ((unsigned)mode > OM_PAD_REPLICATE)
    return om__fail(OM_ERR_INVALID_ARGUMENT, "pad: mode must be OM_PAD_CONSTANT, OM_PAD_REFLECT or OM_PAD_REPLICATE, got %d", (int)mode), NULL;
  om_attrs at = {.n_i = npad + 1, .i = {mode}, .n_f = 1, .f = {value}};
  for (int k = 0; k < npad; k++) at.i[1 + k] = pad[k];
  return om__apply1(OM_OP_pad, &a, 1, &at);
}

/* ---- masked_fill(a, mask, value): mask ? value : a, broadcast (attrs f = {value}; canonical
 * i = {value as the int64 an int64 or bool input holds}) ---- */

static bool infer_masked_fill(om_call *c) {
  om_tensor *a = c->in[0], *mask = c->in[1];
  if (mask->dtype != OM_BOOL)
    return om__fail(OM_ERR_DTYPE_MISMATCH, "masked_fill: only supports boolean masks, but got mask with dtype %s", om_dtype_name(mask->dtype));
  if (c->attrs.n_f != 1) return om__fail(OM_ERR_INVALID_ARGUMENT, "masked_fill: takes one float attribute (value), got %d", c->attrs.n_f);
  double v = c->attrs.f[0];
  if (a->dtype == OM_INT64 && !(v >= -9223372036854775808.0 && v < 9223372036854775808.0))
    return om__fail(OM_ERR_INVALID_ARGUMENT, "masked_fill: value %g does not fit an int64 input", v);
  c->attrs.n_i = 1;
  c->attrs.i[0] = a->dtype == OM_BOOL ? v != 0 : a->dtype == OM_INT64 ? (int64_t)v : 0;
  if (!om__broadcast_shapes(c->in, 2, &c->out_meta[0], "masked_fill")) return false;
  c->out_meta[0].dtype = a->dtype;
  return true;
}

/* A contiguous run (s {T, T, 1}: an attention's scores and causal mask) as a loop the compiler
 * vectorises; any other layout element by element. */
#define FILL_LOOP(fname, T, VALUE)                                                                     \
  static void fname(char **p, const int64_t *s, int64_t n, const void *ctx) {                          \
    const om_attrs *at = ctx;                                                                          \
    const T v = (T)(VALUE);                                                                            \
    if (s[0] == sizeof(T) && s[1] == sizeof(T) && s[2] == 1) {                                         \
      T *o = (T *)p[0];                                                                                \
      const T *x = (const T *)p[1];                                                                    \
      const uint8_t *m = (const uint8_t *)p[2];                                                        \
      for (int64_t i = 0; i < n; i++) o[i] = m[i] ? v : x[i];                                          \
      return;                                                                                          \
    }                                                                                                  \
    for (int64_t i = 0; i < n; i++)                                                                    \
      *(T *)(p[0] + i * s[0]) = *(const uint8_t *)(p[2] + i * s[2]) ? v : *(const T *)(p[1] + i * s[1]); \
  }
FILL_LOOP(fill_f32, float, at->f[0])
FILL_LOOP(fill_i64, int64_t, at->i[0])
FILL_LOOP(fill_b8, uint8_t, at->i[0])

static bool forward_masked_fill(om_call *c) {
  static const om_loop_fn loops[] = {fill_f32, fill_i64, fill_b8};
  om_tensor *o = c->out[0];
  int64_t st[3][OM_MAX_DIMS];
  om__broadcast_strides(o, o->ndim, st[0]);
  om__broadcast_strides(c->in[0], o->ndim, st[1]);
  om__broadcast_strides(c->in[1], o->ndim, st[2]);
  om__iterate_each(3, (char *[]){om__data(o), om__data(c->in[0]), om__data(c->in[1])}, st, o->shape, o->ndim,
                   loops[c->in[0]->dtype], &c->attrs, OM_EACH_SIMPLE);
  return true;
}

static bool masked_fill_backward(const om_record *r, om_tensor *const *g, om_tensor **gin) {
  om_tensor *zero = om_scalar(0, OM_FLOAT32), *w = zero ? om_where(r->in[1], zero, g[0]) : NULL;
  gin[0] = w ? om__sum_to(w, r->in[0]->shape, r->in[0]->ndim) : NULL;
  om_tensor_release(zero);
  om_tensor_release(w);
  return gin[0] != NULL;
}

/* Where(mask, value, a); bool a (onnxruntime has no bool Where): Or(mask, a) for true,
 * And(Not(mask), a) for false. */
static bool lower_masked_fill(om_lower *l, const om_call *c) {
  const om_meta *m = &c->out_meta[0];
  int a = om__lower_input(l, 0), mask = om__lower_input(l, 1), out;
  om_dtype dt = c->in[0]->dtype;
  if (dt == OM_BOOL) {
    if (c->attrs.i[0]) {
      if (!om__emit(l, "Or", (int[]){mask, a}, 2, m, 1, &out, NULL, 0)) return false;
    } else {
      om_meta mm = {.dtype = OM_BOOL, .ndim = c->in[1]->ndim};
      memcpy(mm.shape, c->in[1]->shape, sizeof mm.shape);
      int inv;
      if (!om__emit(l, "Not", &mask, 1, &mm, 1, &inv, NULL, 0) || !om__emit(l, "And", (int[]){inv, a}, 2, m, 1, &out, NULL, 0))
        return false;
    }
  } else {
    int v = dt == OM_INT64 ? om__lower_ints(l, &c->attrs.i[0], -1) : om__lower_float(l, c->attrs.f[0]);
    if (v < 0 || !om__emit(l, "Where", (int[]){mask, v, a}, 3, m, 1, &out, NULL, 0)) return false;
  }
  om__lower_output(l, 0, out);
  return true;
}

const om_op_def om__op_masked_fill = {
    .name = "masked_fill", .n_in = 2, .n_out = 1, .saves = OM_SAVES_IN(1), .infer = infer_masked_fill,
    .forward = forward_masked_fill, .backward = masked_fill_backward, .lower = lower_masked_fill,
    .onnx = "Where with a constant (bool input: Or, or Not and And)",
    .test = {.n_in = 2, .ndims = {2, 1}, .shapes = {{2, 3}, {3}}, .dtypes = {OM_FLOAT32, OM_BOOL}, .lo = -2, .hi = 2,
             .attrs = {.n_f = 1, .f = {-1.5}}}};

om_tensor *om_masked_fill(om_tensor *a, om_tensor *mask, double value) {
  return om__apply1(OM_OP_masked_fill, (om_tensor *[]){a, mask}, 2, &(om_attrs){.n_f = 1, .f = {value}});
}

/* ---- dropout, training form: attrs i = {seed, offset} (the generator's counters), f = {p};
 * outputs the result and the bool mask of kept elements (saved for the backward) ----
 * Element k (row-major) is kept when the counter-based uniform of (seed, offset + k), as om_rand
 * draws it, is below 1 - p; kept elements are scaled by 1 / (1 - p) (p = 1 keeps none and scales
 * by 0), as PyTorch's CPU dropout: input * (bernoulli(1 - p) / (1 - p)). */

#define DROPOUT_WHY "in training mode a random mask would be frozen into the graph; call eval() on the model (or pass training: false) before tracing"

static bool infer_dropout(om_call *c) {
  om_tensor *a = c->in[0];
  if (a->dtype != OM_FLOAT32) return om__fail(OM_ERR_DTYPE_MISMATCH, "dropout: takes float32, not %s", om_dtype_name(a->dtype));
  if (c->attrs.n_i != 2 || c->attrs.n_f != 1)
    return om__fail(OM_ERR_INVALID_ARGUMENT, "dropout: attributes are {seed, offset} and {p}, got %d int and %d float",
                    c->attrs.n_i, c->attrs.n_f);
  double p = c->attrs.f[0];
  if (!(p >= 0 && p <= 1)) return om__fail(OM_ERR_INVALID_ARGUMENT, "dropout: probability has to be between 0 and 1, but got %g", p);
  same_shape(c, a, OM_FLOAT32);
  c->out_meta[1] = c->out_meta[0];
  c->out_meta[1].dtype = OM_BOOL;
  return true;
}

static float dropout_scale(double p) { return p < 1 ? (float)(1.0 / (1.0 - p)) : 0.0f; }

static bool forward_dropout(om_call *c) {
  const om_tensor *a = c->in[0];
  double keep = 1.0 - c->attrs.f[0];
  float scale = dropout_scale(c->attrs.f[0]);
  uint64_t seed = (uint64_t)c->attrs.i[0], offset = (uint64_t)c->attrs.i[1];
  float *po = (float *)om__data(c->out[0]);
  uint8_t *pm = (uint8_t *)om__data(c->out[1]);
  int64_t n = om_tensor_numel(a), idx[OM_MAX_DIMS] = {0};
  const float *pa = (const float *)om__data(a);
  for (int64_t k = 0; k < n; k++) {
    int64_t off = 0;
    for (int d = 0; d < a->ndim; d++) off += idx[d] * a->strides[d];
    pm[k] = om__uniform(seed, offset + (uint64_t)k) < keep;
    po[k] = pa[off] * (pm[k] ? scale : 0.0f);
    for (int d = a->ndim - 1; d >= 0 && ++idx[d] == a->shape[d]; d--) idx[d] = 0;
  }
  return true;
}

/* g * (mask ? 1 / (1 - p) : 0), through the saved mask. */
static bool dropout_backward(const om_record *r, om_tensor *const *g, om_tensor **gin) {
  om_tensor *s = om_scalar(dropout_scale(r->attrs.f[0]), OM_FLOAT32), *z = om_scalar(0, OM_FLOAT32);
  om_tensor *m = s && z ? om_where(r->saved[1], s, z) : NULL;
  gin[0] = m ? om_mul(g[0], m) : NULL;
  om_tensor_release(s);
  om_tensor_release(z);
  om_tensor_release(m);
  return gin[0] != NULL;
}

static bool lower_dropout(om_lower *l, const om_call *c) { return om__lower_refuse(l, c, DROPOUT_WHY); }

const om_op_def om__op_dropout = {
    .name = "dropout", .n_in = 1, .n_out = 2, .saves = OM_SAVES_OUT(1), .infer = infer_dropout,
    .forward = forward_dropout, .backward = dropout_backward, .lower = lower_dropout,
    .onnx = "refused in training mode (a random mask would be frozen into the graph); eval mode writes no node",
    .test = {.n_in = 1, .ndims = {2}, .shapes = {{3, 4}}, .lo = -2, .hi = 2,
             .attrs = {.n_i = 2, .i = {7, 0}, .n_f = 1, .f = {0.4}}}};

om_tensor *om_dropout(om_tensor *a, double p, bool training) {
  if (!om__check_inputs("dropout", &a, 1)) return NULL;
  if (!(p >= 0 && p <= 1)) return om__fail(OM_ERR_INVALID_ARGUMENT, "dropout: probability has to be between 0 and 1, but got %g", p), NULL;
  if (!training || p == 0 || om_tensor_numel(a) == 0) return om_tensor_retain(a); /* the input itself, as PyTorch */
  if (om_trace_active()) return om__trace_fail(OM_ERR_TRACE_UNSUPPORTED_OPERATION, "dropout: cannot be traced: " DROPOUT_WHY), NULL;
  if (a->dtype != OM_FLOAT32) return om__fail(OM_ERR_DTYPE_MISMATCH, "dropout: takes float32, not %s", om_dtype_name(a->dtype)), NULL;
  uint64_t seed, offset;
  om__rng_take((uint64_t)om_tensor_numel(a), &seed, &offset);
  om_attrs at = {.n_i = 2, .i = {(int64_t)seed, (int64_t)offset}, .n_f = 1, .f = {p}};
  return om__apply1(OM_OP_dropout, &a, 1, &at);
}
