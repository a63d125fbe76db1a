/* Reductions: sum, mean, amax, amin, prod over any set of dims (attrs: keepdim, dims...), and
 * max_dim / min_dim along one dim with int64 indices (attrs: dim, keepdim).
 * float32 sums accumulate in double in a fixed order, so results are the same natively and
 * in WASM and do not depend on how the tensor is laid out in memory. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* ---- dims handling ---- */

/* Canonicalises attrs [keepdim, dims...] to [keepdim, sorted unique dims] (no dims: all). */
static bool canon_dims(om_call *c, bool *mask) {
  om_tensor *a = c->in[0];
  const char *who = om_op_name(c->op);
  if (c->attrs.n_i < 1) return om__fail(OM_ERR_INVALID_ARGUMENT, "%s: needs keepdim and the dims", who);
  memset(mask, 0, sizeof(bool) * OM_MAX_DIMS);
  for (int k = 1; k < c->attrs.n_i; k++) {
    int d = om__wrap_dim(c->attrs.i[k], a->ndim, who);
    if (d < 0) return false;
    if (a->ndim && mask[d]) return om__fail(OM_ERR_INVALID_ARGUMENT, "%s: dim %d appears twice", who, d);
    if (a->ndim) mask[d] = true;
  }
  if (c->attrs.n_i == 1)
    for (int d = 0; d < a->ndim; d++) mask[d] = true;
  c->attrs.i[0] = c->attrs.i[0] != 0;
  c->attrs.n_i = 1;
  for (int d = 0; d < a->ndim; d++)
    if (mask[d]) c->attrs.i[c->attrs.n_i++] = d;
  return true;
}

/* The output shape: reduced dims become 1 (keepdim) or disappear. */
static void reduced_meta(const om_tensor *a, const bool *mask, bool keepdim, om_dtype dtype, om_meta *m) {
  m->dtype = dtype;
  m->ndim = 0;
  for (int d = 0; d < a->ndim; d++)
    if (!mask[d]) m->shape[m->ndim++] = a->shape[d];
    else if (keepdim) m->shape[m->ndim++] = 1;
}

/* The keepdim shape of a reduction recorded in r (for broadcasting gradients back). */
static void keep_shape(const om_record *r, int64_t *shape) {
  const om_tensor *a = r->in[0];
  memcpy(shape, a->shape, sizeof(int64_t) * (size_t)a->ndim);
  for (int k = 1; k < r->attrs.n_i; k++) shape[r->attrs.i[k]] = 1;
}

static bool infer_reduce(om_call *c) {
  om_tensor *a = c->in[0];
  bool mask[OM_MAX_DIMS];
  bool floats_only = c->op == OM_OP_mean;
  if (a->dtype == OM_BOOL || (floats_only && a->dtype == OM_INT64))
    return om__fail(OM_ERR_DTYPE_MISMATCH, "%s: takes float32%s or float64, not %s", om_op_name(c->op),
                    floats_only ? "" : ", int64", om_dtype_name(a->dtype));
  if (!canon_dims(c, mask)) return false;
  if (c->op == OM_OP_amax || c->op == OM_OP_amin)
    for (int d = 0; d < a->ndim; d++)
      if (mask[d] && a->shape[d] == 0)
        return om__fail(OM_ERR_INVALID_ARGUMENT, "%s: dim %d has size 0 and no %s", om_op_name(c->op), d,
                        c->op == OM_OP_amax ? "maximum" : "minimum");
  reduced_meta(a, mask, c->attrs.i[0], a->dtype, &c->out_meta[0]);
  return true;
}

/* ---- forward: fold the input into an accumulator per output element ---- */

/* One loop per op and dtype: the accumulator (double for floats, int64 for int64) folds
 * in each input; a float NaN wins the max and min, an int64 sum wraps. */
#define FOLD_LOOP(fname, TA, TI, STEP)                                   \
  static void fname(char **p, const int64_t *s, int64_t n, const void *ctx) { \
    (void)ctx;                                                           \
    for (int64_t i = 0; i < n; i++) {                                    \
      TA *x = (TA *)(p[0] + i * s[0]);                                   \
      TI v = *(const TI *)(p[1] + i * s[1]);                             \
      STEP;                                                              \
    }                                                                    \
  }
FOLD_LOOP(fold_sum_f32, double, float, *x += v)
FOLD_LOOP(fold_max_f32, double, float, if (v > *x || v != v) *x = v)
FOLD_LOOP(fold_min_f32, double, float, if (v < *x || v != v) *x = v)
FOLD_LOOP(fold_sum_f64, double, double, *x += v)
FOLD_LOOP(fold_max_f64, double, double, if (v > *x || v != v) *x = v)
FOLD_LOOP(fold_min_f64, double, double, if (v < *x || v != v) *x = v)
FOLD_LOOP(fold_sum_i64, int64_t, int64_t, *x = (int64_t)((uint64_t)*x + (uint64_t)v))
FOLD_LOOP(fold_max_i64, int64_t, int64_t, if (v > *x) *x = v)
FOLD_LOOP(fold_min_i64, int64_t, int64_t, if (v < *x) *x = v)
FOLD_LOOP(fold_prod_f32, double, float, *x *= v)
FOLD_LOOP(fold_prod_f64, double, double, *x *= v)
FOLD_LOOP(fold_prod_i64, int64_t, int64_t, *x = (int64_t)((uint64_t)*x * (uint64_t)v))

static bool forward_reduce(om_call *c) {
  om_tensor *a = c->in[0], *o = c->out[0];
  int64_t n_out = om_tensor_numel(o), n_in = om_tensor_numel(a);
  bool is_f = a->dtype == OM_FLOAT32 || a->dtype == OM_FLOAT64;
  char *acc = om__alloc((uint64_t)n_out * 8, om_op_name(c->op));
  if (!acc) return false;
  double init_f = c->op == OM_OP_amax ? -INFINITY : c->op == OM_OP_amin ? INFINITY : c->op == OM_OP_prod;
  int64_t init_i = c->op == OM_OP_amax ? INT64_MIN : c->op == OM_OP_amin ? INT64_MAX : c->op == OM_OP_prod;
  for (int64_t k = 0; k < n_out; k++) {
    if (is_f) ((double *)acc)[k] = init_f;
    else ((int64_t *)acc)[k] = init_i;
  }
  /* The accumulator seen with the input's dims: stride 0 along the reduced dims. */
  int64_t st[2][OM_MAX_DIMS], kshape[OM_MAX_DIMS];
  bool mask[OM_MAX_DIMS] = {0};
  for (int k = 1; k < c->attrs.n_i; k++) mask[c->attrs.i[k]] = true;
  for (int d = 0; d < a->ndim; d++) kshape[d] = mask[d] ? 1 : a->shape[d];
  om__contiguous_strides(kshape, a->ndim, st[0]);
  for (int d = 0; d < a->ndim; d++) st[0][d] = mask[d] ? 0 : st[0][d] * 8;
  om__broadcast_strides(a, a->ndim, st[1]);
  char *base[2] = {acc, om__data(a)};
  static const om_loop_fn folds[4][4] = {{fold_sum_f32, fold_sum_i64, NULL, fold_sum_f64},
                                         {fold_max_f32, fold_max_i64, NULL, fold_max_f64},
                                         {fold_min_f32, fold_min_i64, NULL, fold_min_f64},
                                         {fold_prod_f32, fold_prod_i64, NULL, fold_prod_f64}};
  om_loop_fn fold = folds[c->op == OM_OP_amax ? 1 : c->op == OM_OP_amin ? 2 : c->op == OM_OP_prod ? 3 : 0][a->dtype];
  om__iterate_each(2, base, st, a->shape, a->ndim, fold, NULL, OM_EACH_SIMPLE); /* split by outputs: each summed in order */
  double count = n_out ? (double)n_in / (double)n_out : 0;
  for (int64_t k = 0; k < n_out; k++) {
    double v = is_f ? (c->op == OM_OP_mean ? ((double *)acc)[k] / count : ((double *)acc)[k]) : 0;
    if (!is_f) ((int64_t *)o->storage->data)[k] = ((int64_t *)acc)[k];
    else if (a->dtype == OM_FLOAT64) ((double *)o->storage->data)[k] = v;
    else ((float *)o->storage->data)[k] = (float)v;
  }
  free(acc);
  return true;
}

/* ---- backward ---- */

/* g reshaped to the keepdim shape and expanded over the input (a view). */
static om_tensor *spread(const om_record *r, om_tensor *g) {
  int64_t ks[OM_MAX_DIMS];
  keep_shape(r, ks);
  om_tensor *k = om_reshape(g, ks, r->in[0]->ndim);
  om_tensor *e = k ? om_expand(k, r->in[0]->shape, r->in[0]->ndim) : NULL;
  om_tensor_release(k);
  return e;
}

static bool sum_backward(const om_record *r, om_tensor *const *g, om_tensor **gin) {
  return (gin[0] = spread(r, g[0])) != NULL;
}

static bool mean_backward(const om_record *r, om_tensor *const *g, om_tensor **gin) {
  int64_t n_in = om_tensor_numel(r->in[0]), n_out = om__numel(r->out_meta[0].shape, r->out_meta[0].ndim, "mean");
  om_tensor *scaled = om_scale(g[0], n_in ? (double)n_out / (double)n_in : 0);
  gin[0] = scaled ? spread(r, scaled) : NULL;
  om_tensor_release(scaled);
  return gin[0] != NULL;
}

/* The gradient goes to every element equal to the extreme, shared evenly among ties. */
static bool extreme_backward(const om_record *r, om_tensor *const *g, om_tensor **gin) {
  om_scope s = {0};
  om_tensor *hit = om__keep(&s, om_eq(r->in[0], om__keep(&s, spread(r, r->saved[0]))));
  om_tensor *w = om__keep(&s, om_cast(hit, OM_FLOAT32));
  int64_t dims[OM_MAX_DIMS];
  for (int k = 1; k < r->attrs.n_i; k++) dims[k - 1] = r->attrs.i[k];
  om_tensor *count = om__keep(&s, om_sum(w, dims, r->attrs.n_i - 1, true));
  om_tensor *share = om__keep(&s, om_div(w, count));
  gin[0] = om_mul(share, om__keep(&s, spread(r, g[0])));
  om__scope_end(&s);
  return gin[0] != NULL;
}

/* PyTorch's prod_safe_zeros_backward, for every input (zeros or not): dL/dx_k = g times the
 * product of the others, the product of those before k times the product of those after it in
 * each reduced group (the reduced dims permuted last and flattened into one of length N): running
 * products of x shifted by one (a 1 in front) from either end. No division, so a zero (or two)
 * among the others gives what PyTorch gives. */
static bool prod_backward(const om_record *r, om_tensor *const *g, om_tensor **gin) {
  const om_tensor *a = r->in[0];
  int nd = a->ndim, n_red = r->attrs.n_i - 1, nk = 0;
  if (!n_red) return (gin[0] = om_tensor_retain(g[0])) != NULL; /* a 0-d input: the identity */
  om_scope s = {0};
  bool red[OM_MAX_DIMS] = {0};
  for (int k = 1; k < r->attrs.n_i; k++) red[r->attrs.i[k]] = true;
  int64_t perm[OM_MAX_DIMS], inv[OM_MAX_DIMS], flat[OM_MAX_DIMS], split[OM_MAX_DIMS], n = 1;
  for (int d = 0; d < nd; d++)
    if (!red[d]) flat[nk] = a->shape[d], split[nk] = a->shape[d], perm[nk++] = d;
  for (int d = 0, k = nk; d < nd; d++)
    if (red[d]) n *= a->shape[d], split[k] = a->shape[d], perm[k++] = d;
  for (int k = 0; k < nd; k++) inv[perm[k]] = k;
  flat[nk] = n;
  om_tensor *x = om__keep(&s, om_reshape(om__keep(&s, om_permute(r->in[0], perm, nd)), flat, nk + 1));
  om_tensor *before = om__keep(&s, om_cumprod(om__keep(&s, om_pad(x, (int64_t[]){1, -1}, 2, OM_PAD_CONSTANT, 1)), -1));
  om_tensor *after = om__keep(&s, om__cumprod_dir(om__keep(&s, om_pad(x, (int64_t[]){-1, 1}, 2, OM_PAD_CONSTANT, 1)), -1, true));
  flat[nk] = 1;
  om_tensor *gk = om__keep(&s, om_reshape(g[0], flat, nk + 1));
  om_tensor *gx = om__keep(&s, om_mul(gk, om__keep(&s, om_mul(before, after))));
  gin[0] = om_permute(om__keep(&s, om_reshape(gx, split, nd)), inv, nd);
  om__scope_end(&s);
  return gin[0] != NULL;
}

/* ---- ONNX lowering ---- */

/* The ONNX op type(s) of a reduction, the op's impl: the values' node, and for max_dim and
 * min_dim the indices' node. */
typedef struct onnx_reduce {
  const char *values, *indices;
} onnx_reduce;

/* ReduceX(data, axes) with the canonical dims as the axes input (opset 18+) and keepdims.
 * The dims list is empty only for a 0-d input, which forward passes through unchanged: an
 * alias (ONNX would reduce every axis of it, also the identity, but needs no node for it).
 * A mean whose count can be 0 is ReduceSum, Div by the count (om__lower_count_divisor). A float32
 * sum or mean over an axis that grows with a symbol is computed in float64 and cast back, as
 * eager computes it (om__lower_sum_in_double). */
static bool lower_reduce(om_lower *l, const om_call *c) {
  const onnx_reduce *x = om__ops[c->op]->impl;
  int n = c->attrs.n_i - 1;
  if (n == 0) return om__lower_alias(l);
  bool dbl = (c->op == OM_OP_sum || c->op == OM_OP_mean) && om__lower_sum_in_double(l, 0, c->attrs.i + 1, n);
  om_meta acc = c->out_meta[0]; /* the reduction's own result: float64 in double */
  if (dbl) acc.dtype = OM_FLOAT64;
  int ext[OM_MAX_DIMS];
  for (int k = 0; k < n; k++) ext[k] = om__lower_in_x(l, 0, (int)c->attrs.i[1 + k]);
  int div = c->op == OM_OP_mean ? om__lower_count_divisor(l, ext, n, acc.dtype) : -2;
  int in[2], out;
  const om_tensor *a = c->in[0];
  om_meta a_meta = {.dtype = a->dtype, .ndim = a->ndim};
  memcpy(a_meta.shape, a->shape, sizeof(int64_t) * (size_t)a->ndim);
  if (div == -1 || (in[0] = om__lower_input(l, 0)) < 0 || (dbl && (in[0] = om__lower_cast(l, in[0], &a_meta, OM_FLOAT64)) < 0) ||
      (in[1] = om__lower_ints(l, c->attrs.i + 1, n)) < 0 ||
      !om__emit(l, div >= 0 ? "ReduceSum" : x->values, in, 2, &acc, 1, &out, &OM_ATTR_INT("keepdims", c->attrs.i[0]), 1))
    return false;
  if (div >= 0 && !om__emit(l, "Div", (int[]){out, div}, 2, &acc, 1, &out, NULL, 0)) return false;
  if (dbl && (out = om__lower_cast(l, out, &acc, OM_FLOAT32)) < 0) return false;
  om__lower_output(l, 0, out);
  return true;
}

#define REDUCE_DEF(NAME, BACKWARD, SAVES, ONNX, NOTE, EMPTY) /* NOTE: the rest of the onnx text */ \
  static const onnx_reduce NAME##_onnx = {ONNX, NULL};                                            \
  const om_op_def om__op_##NAME = {                                                               \
      .name = #NAME, .n_in = 1, .n_out = 1, .saves = SAVES, .infer = infer_reduce,               \
      .forward = forward_reduce, .backward = BACKWARD, .lower = lower_reduce, .onnx = ONNX NOTE, \
      .impl = &NAME##_onnx, .takes_float64 = true,                                                \
      .test = {.n_in = 1, .ndims = {3}, .shapes = {{2, 3, 4}}, .lo = -2, .hi = 2,                 \
               .attrs = {.n_i = 3, .i = {0, 0, -1}}, .empty_refusal = EMPTY}};                    \
  om_tensor *om_##NAME(om_tensor *a, const int64_t *dims, int ndims, bool keepdim) {              \
    if (!om__check_inputs(#NAME, &a, 1)) return NULL;                                             \
    if (ndims < 0 || ndims > OM_MAX_DIMS || (ndims && !dims))                                     \
      return om__fail(OM_ERR_INVALID_ARGUMENT, #NAME ": %d dims (at most %d)", ndims, OM_MAX_DIMS), NULL; \
    om_attrs at = {.n_i = 1 + ndims, .i = {keepdim}};                                             \
    for (int k = 0; k < ndims; k++) at.i[1 + k] = dims[k];                                        \
    return om__apply1(OM_OP_##NAME, &a, 1, &at);                                                  \
  }

/* a sum of nothing is 0 and a mean NaN; an extreme of nothing does not exist (PyTorch refuses) */
REDUCE_DEF(sum, sum_backward, 0, "ReduceSum", "", NULL)
REDUCE_DEF(mean, mean_backward, 0, "ReduceMean", " (a mean that can be of nothing: ReduceSum, Div by the count)", NULL)
REDUCE_DEF(amax, extreme_backward, OM_SAVES_IN(0) | OM_SAVES_OUT(0), "ReduceMax", "", "has size 0 and no maximum")
REDUCE_DEF(amin, extreme_backward, OM_SAVES_IN(0) | OM_SAVES_OUT(0), "ReduceMin", "", "has size 0 and no minimum")
/* a product of nothing is 1 */
REDUCE_DEF(prod, prod_backward, OM_SAVES_IN(0), "ReduceProd", "", NULL)

/* ---- max_dim / min_dim: values and indices along one dim ---- */

static bool infer_arg(om_call *c) {
  om_tensor *a = c->in[0];
  const char *who = om_op_name(c->op);
  if (c->attrs.n_i != 2) return om__fail(OM_ERR_INVALID_ARGUMENT, "%s: needs dim and keepdim", who);
  if (a->dtype == OM_BOOL) return om__fail(OM_ERR_DTYPE_MISMATCH, "%s: takes float32 or int64, not bool", who);
  int dim = om__wrap_dim(c->attrs.i[0], a->ndim, who);
  if (dim < 0) return false;
  if (a->ndim && a->shape[dim] == 0)
    return om__fail(OM_ERR_INVALID_ARGUMENT, "%s: dim %d has size 0 and no %s", who, dim,
                    c->op == OM_OP_max_dim ? "maximum" : "minimum");
  c->attrs.i[0] = dim;
  c->attrs.i[1] = c->attrs.i[1] != 0;
  bool mask[OM_MAX_DIMS] = {0};
  if (a->ndim) mask[dim] = true;
  reduced_meta(a, mask, c->attrs.i[1], a->dtype, &c->out_meta[0]);
  reduced_meta(a, mask, c->attrs.i[1], OM_INT64, &c->out_meta[1]);
  return true;
}

typedef struct { int64_t size, stride; bool is_max; om_dtype dtype; } arg_ctx;

static void scan(char **p, const int64_t *s, int64_t n, const void *vctx) {
  const arg_ctx *ctx = vctx;
  for (int64_t i = 0; i < n; i++) {
    const char *in = p[2] + i * s[2];
    int64_t best = 0;
    double bv = 0;
    for (int64_t k = 0; k < ctx->size; k++) {
      const char *e = in + k * ctx->stride;
      double v = ctx->dtype == OM_FLOAT32 ? *(const float *)e : (double)*(const int64_t *)e;
      /* the first extreme wins; a NaN is the extreme, as in PyTorch */
      if (k == 0 || (bv == bv && (v != v || (ctx->is_max ? v > bv : v < bv)))) {
        best = k;
        bv = v;
      }
    }
    const char *e = in + best * ctx->stride;
    memcpy(p[0] + i * s[0], e, om__dtype_size(ctx->dtype));
    *(int64_t *)(p[1] + i * s[1]) = best;
  }
}

static bool forward_arg(om_call *c) {
  om_tensor *a = c->in[0];
  int dim = (int)c->attrs.i[0];
  /* Iterate over the input's dims with the scanned dim collapsed to size 1. */
  int64_t shape[OM_MAX_DIMS], st[3][OM_MAX_DIMS], es = (int64_t)om__dtype_size(a->dtype);
  memcpy(shape, a->shape, sizeof shape);
  if (a->ndim) shape[dim] = 1;
  for (int j = 0; j < 2; j++) {
    om_tensor *o = c->out[j];
    int64_t cs[OM_MAX_DIMS], esz = (int64_t)om__dtype_size(o->dtype);
    om__contiguous_strides(shape, a->ndim, cs);
    for (int d = 0; d < a->ndim; d++) st[j][d] = cs[d] * esz;
  }
  om__broadcast_strides(a, a->ndim, st[2]);
  arg_ctx ctx = {a->ndim ? a->shape[dim] : 1, a->ndim ? a->strides[dim] * es : 0, c->op == OM_OP_max_dim, a->dtype};
  char *base[3] = {om__data(c->out[0]), om__data(c->out[1]), om__data(a)};
  om__iterate(3, base, st, shape, a->ndim, scan, &ctx);
  return true;
}

/* The gradient goes to the chosen index: where(arange(size) == indices, g, 0). */
static bool arg_backward(const om_record *r, om_tensor *const *g, om_tensor **gin) {
  const om_tensor *a = r->in[0];
  int dim = (int)r->attrs.i[0];
  if (a->ndim == 0) return (gin[0] = om_tensor_retain(g[0])) != NULL;
  om_scope s = {0};
  int64_t ks[OM_MAX_DIMS], pos[OM_MAX_DIMS];
  memcpy(ks, a->shape, sizeof ks);
  ks[dim] = 1;
  for (int d = 0; d < a->ndim; d++) pos[d] = d == dim ? a->shape[d] : 1;
  om_tensor *idx = om__keep(&s, om_reshape(r->saved[1], ks, a->ndim));
  om_tensor *gk = om__keep(&s, om_reshape(g[0], ks, a->ndim));
  om_tensor *ar = om__keep(&s, om_reshape(om__keep(&s, om_arange(0, (double)a->shape[dim], 1, OM_INT64)), pos, a->ndim));
  om_tensor *zero = om__keep(&s, om_scalar(0, OM_FLOAT32));
  om_tensor *picked = om__keep(&s, om_where(om__keep(&s, om_eq(ar, idx)), gk, zero));
  gin[0] = om_tensor_retain(picked); /* broadcasting gave it a's shape */
  om__scope_end(&s);
  return gin[0] != NULL;
}

/* Values: ReduceX(data, axes = [dim]); indices: ArgX(data, axis = dim), whose
 * select_last_index = 0 picks the first extreme on ties, as scan does. A 0-d input is its own
 * value at index 0 (ONNX has no axis to reduce there): an alias and a constant. */
static bool lower_arg(om_lower *l, const om_call *c) {
  const onnx_reduce *x = om__ops[c->op]->impl;
  int64_t dim = c->attrs.i[0], keep = c->attrs.i[1];
  int in[2] = {om__lower_input(l, 0), -1}, out[2];
  if (in[0] < 0) return false;
  if (c->in[0]->ndim == 0) return om__lower_own_pick(l);
  om_gattr arg_attrs[3] = {OM_ATTR_INT("axis", dim), OM_ATTR_INT("keepdims", keep), OM_ATTR_INT("select_last_index", 0)};
  if ((in[1] = om__lower_ints(l, &dim, 1)) < 0 ||
      !om__emit(l, x->values, in, 2, &c->out_meta[0], 1, &out[0], &OM_ATTR_INT("keepdims", keep), 1) ||
      !om__emit(l, x->indices, in, 1, &c->out_meta[1], 1, &out[1], arg_attrs, 3))
    return false;
  om__lower_output(l, 0, out[0]);
  om__lower_output(l, 1, out[1]);
  return true;
}

#define ARG_DEF(NAME, VALUES, INDICES, EMPTY)                                                     \
  static const onnx_reduce NAME##_onnx = {VALUES, INDICES};                                       \
  const om_op_def om__op_##NAME = {                                                               \
      .name = #NAME, .n_in = 1, .n_out = 2, .saves = OM_SAVES_OUT(1), .infer = infer_arg,        \
      .forward = forward_arg, .backward = arg_backward, .lower = lower_arg,                      \
      .onnx = VALUES ", " INDICES, .impl = &NAME##_onnx,                                         \
      .test = {.n_in = 1, .ndims = {3}, .shapes = {{2, 3, 4}}, .lo = -2, .hi = 2,                 \
               .attrs = {.n_i = 2, .i = {1, 0}}, .empty_refusal = EMPTY}};

ARG_DEF(max_dim, "ReduceMax", "ArgMax", "has size 0 and no maximum")
ARG_DEF(min_dim, "ReduceMin", "ArgMin", "has size 0 and no minimum")

static om_tensor *arg_extreme(om_op op, om_tensor *a, int dim, bool keepdim, om_tensor **indices) {
  om_tensor *out[2] = {0};
  om_attrs at = {.n_i = 2, .i = {dim, keepdim}};
  if (om__apply(op, &a, 1, &at, out) < 0) return NULL;
  if (indices) *indices = out[1];
  else om_tensor_release(out[1]);
  return out[0];
}

om_tensor *om_max_dim(om_tensor *a, int dim, bool keepdim, om_tensor **indices) {
  return arg_extreme(OM_OP_max_dim, a, dim, keepdim, indices);
}
om_tensor *om_min_dim(om_tensor *a, int dim, bool keepdim, om_tensor **indices) {
  return arg_extreme(OM_OP_min_dim, a, dim, keepdim, indices);
}

om_tensor *om_argmax(om_tensor *a, int dim, bool keepdim) {
  om_tensor *idx = NULL;
  om_tensor_release(arg_extreme(OM_OP_max_dim, a, dim, keepdim, &idx));
  return idx;
}
om_tensor *om_argmin(om_tensor *a, int dim, bool keepdim) {
  om_tensor *idx = NULL;
  om_tensor_release(arg_extreme(OM_OP_min_dim, a, dim, keepdim, &idx));
  return idx;
}
