/* Sorting and searching: the topk op (values and int64 indices of the k largest or smallest
 * along a dim), and sort, argsort, searchsorted and bucketize written with it and with other ops.
 * The order is total and the same everywhere: a NaN ranks above every number (PyTorch's), and
 * equal values keep their index order (lower index first, whether largest or smallest first),
 * which is PyTorch's stable sort and ONNX TopK's tie rule. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* ---- topk(a, k, dim, largest): attrs {k, dim, largest}; outputs values and indices ----
 * Always sorted (PyTorch's sorted=False leaves the order unspecified, so sorted is a valid one). */

static bool infer_topk(om_call *c) {
  const om_tensor *a = c->in[0];
  if (c->attrs.n_i != 3) return om__fail(OM_ERR_INVALID_ARGUMENT, "topk: needs k, dim and largest, got %d int attributes", c->attrs.n_i);
  if (a->dtype == OM_BOOL) return om__fail(OM_ERR_DTYPE_MISMATCH, "topk: takes float32 or int64, not bool");
  int dim = om__wrap_dim(c->attrs.i[1], a->ndim ? a->ndim : 1, "topk");
  if (dim < 0) return false;
  int64_t k = c->attrs.i[0], size = a->ndim ? a->shape[dim] : 1;
  if (k < 0 || k > size)
    return om__fail(OM_ERR_INVALID_ARGUMENT, "topk: k (%lld) is out of range for dim %d of size %lld", (long long)k, dim,
                    (long long)size);
  if (!a->ndim && k != 1) return om__fail(OM_ERR_INVALID_ARGUMENT, "topk: k (%lld) must be 1 for a 0-d tensor", (long long)k);
  c->attrs.i[1] = dim;
  c->attrs.i[2] = c->attrs.i[2] != 0;
  for (int j = 0; j < 2; j++) {
    c->out_meta[j] = (om_meta){.dtype = j ? OM_INT64 : a->dtype, .ndim = a->ndim};
    memcpy(c->out_meta[j].shape, a->shape, sizeof a->shape);
    if (a->ndim) c->out_meta[j].shape[dim] = k;
  }
  return true;
}

/* An element of a line: its value (float32 widened, or int64 as it is) and its index. */
typedef struct { double f; int64_t v, i; } ranked;

/* Whether x ranks before y: the larger (largest) or smaller first, a NaN as the largest value,
 * and the lower index first among equals. */
static bool before(const ranked *x, const ranked *y, bool largest) {
  bool xn = x->f != x->f, yn = y->f != y->f;
  if (xn || yn) {
    if (xn && yn) return x->i < y->i;
    return largest ? xn : yn;
  }
  if (x->f != y->f) return largest ? x->f > y->f : x->f < y->f;
  if (x->v != y->v) return largest ? x->v > y->v : x->v < y->v;
  return x->i < y->i;
}

/* Sorts r[0..n) by before (a merge sort through tmp, n entries: O(n log n), no recursion). */
static void rank_sort(ranked *r, ranked *tmp, int64_t n, bool largest) {
  for (int64_t w = 1; w < n; w *= 2) {
    for (int64_t lo = 0; lo < n; lo += 2 * w) {
      int64_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n, p = lo, q = mid, o = lo;
      while (p < mid && q < hi) tmp[o++] = before(&r[q], &r[p], largest) ? r[q++] : r[p++];
      while (p < mid) tmp[o++] = r[p++];
      while (q < hi) tmp[o++] = r[q++];
    }
    memcpy(r, tmp, sizeof(ranked) * (size_t)n);
  }
}

/* One line's context: its length n, the k kept, the byte strides along dim of the input (sa)
 * and of the outputs (sv, si), the order, the dtype, and scratch for 2n entries. */
typedef struct { int64_t n, k, sa, sv, si; bool largest; om_dtype dtype; ranked *r; } topk_ctx;

/* Each line: its elements ranked, the first k written (a value copied from the input, so an
 * int64 keeps all its bits). */
static void topk_lines(char **p, const int64_t *s, int64_t lines, const void *vctx) {
  const topk_ctx *x = vctx;
  for (int64_t line = 0; line < lines; line++) {
    const char *in = p[2] + line * s[2];
    for (int64_t j = 0; j < x->n; j++) {
      const char *e = in + j * x->sa;
      x->r[j] = x->dtype == OM_FLOAT32 ? (ranked){*(const float *)e, 0, j} : (ranked){0, *(const int64_t *)e, j};
    }
    rank_sort(x->r, x->r + x->n, x->n, x->largest);
    for (int64_t j = 0; j < x->k; j++) {
      memcpy(p[0] + line * s[0] + j * x->sv, in + x->r[j].i * x->sa, om__dtype_size(x->dtype));
      *(int64_t *)(p[1] + line * s[1] + j * x->si) = x->r[j].i;
    }
  }
}

/* Iterates over the input's dims with dim collapsed to size 1, as max_dim's forward does. */
static bool forward_topk(om_call *c) {
  const om_tensor *a = c->in[0];
  int nd = a->ndim, dim = (int)c->attrs.i[1];
  int64_t shape[OM_MAX_DIMS], st[3][OM_MAX_DIMS], n = nd ? a->shape[dim] : 1;
  memcpy(shape, a->shape, sizeof shape);
  if (nd) shape[dim] = 1;
  for (int j = 0; j < 2; j++) om__broadcast_strides(c->out[j], nd, st[j]); /* the outputs' strides, dim's ignored */
  om__broadcast_strides(a, nd, st[2]);
  ranked *r = om__alloc(sizeof(ranked) * 2 * (uint64_t)(n ? n : 1), "topk");
  if (!r) return false;
  topk_ctx ctx = {n, c->attrs.i[0], nd ? st[2][dim] : 0, nd ? st[0][dim] : 0, nd ? st[1][dim] : 0, c->attrs.i[2], a->dtype, r};
  char *base[3] = {om__data(c->out[0]), om__data(c->out[1]), om__data(a)};
  if (n) om__iterate(3, base, st, shape, nd, topk_lines, &ctx);
  free(r);
  return true;
}

/* The values' gradient goes back to the places they came from: zeros scattered with g by the
 * indices (scatter_add, itself differentiable). */
static bool topk_backward(const om_record *r, om_tensor *const *g, om_tensor **gin) {
  const om_tensor *a = r->in[0];
  if (!a->ndim) return (gin[0] = om_tensor_retain(g[0])) != NULL;
  om_tensor *zeros = om_zeros(a->shape, a->ndim, OM_FLOAT32);
  gin[0] = zeros ? om_scatter_add(zeros, (int)r->attrs.i[1], r->saved[1], g[0]) : NULL;
  om_tensor_release(zeros);
  return gin[0] != NULL;
}

/* TopK with k as an input (computed from the sizes when it changes with them: a sort along a
 * symbolic axis), sorted = 1, and largest. A 0-d input is its own value at index 0. onnxruntime's
 * TopK fails on an empty input: at fixed sizes the outputs are then empty constants
 * (om__lower_empty); another axis that a symbol can make empty gets one extra row, dropped from
 * both outputs after (om__lower_extra_row); the sorted axis itself cannot be empty. */
static bool lower_topk(om_lower *l, const om_call *c) {
  int empty = om__lower_empty(l, c), x = om__lower_input(l, 0), out[2];
  if (empty || x < 0) return empty > 0;
  const om_tensor *a = c->in[0];
  int dim = (int)c->attrs.i[1];
  if (!a->ndim) {
    int64_t zero = 0;
    if ((out[1] = om__lower_ints(l, &zero, -1)) < 0) return false;
    om__lower_output(l, 1, out[1]);
    return om__lower_alias(l);
  }
  if (om__lower_may_be_0(l, om__lower_in_ext(l, 0, dim)))
    return om__lower_baked(l, c, 0, dim, "it can be empty, and onnxruntime's TopK fails on an empty axis");
  om_meta xm = {.dtype = a->dtype, .ndim = a->ndim}, om[2] = {c->out_meta[0], c->out_meta[1]};
  memcpy(xm.shape, a->shape, sizeof a->shape);
  bool pad[OM_MAX_DIMS] = {0};
  for (int d = 0; d < a->ndim; d++) {
    if (d == dim || !om__lower_may_be_0(l, om__lower_in_ext(l, 0, d))) continue;
    if ((x = om__lower_extra_row(l, x, &xm, d)) < 0) return false;
    pad[d] = true, om[0].shape[d]++, om[1].shape[d]++;
  }
  int k = om__lower_x_value(l, om__lower_arg(l, 0));
  om_gattr attrs[3] = {OM_ATTR_INT("axis", dim), OM_ATTR_INT("largest", c->attrs.i[2]), OM_ATTR_INT("sorted", 1)};
  if (k < 0 || !om__emit(l, "TopK", (int[]){x, k}, 2, om, 2, out, attrs, 3)) return false;
  for (int j = 0; j < 2; j++) {
    for (int d = 0; d < a->ndim && out[j] >= 0; d++)
      if (pad[d] && (out[j] = om__lower_drop_row(l, out[j], om[j], d)) >= 0) om[j].shape[d]--;
    if (out[j] < 0) return false;
    om__lower_output(l, j, out[j]);
  }
  return true;
}

/* The kept axis is k, which a sort computes from the sizes (k = the axis's size). */
static bool topk_extents(om_lower *l, const om_call *c) {
  if (!c->in[0]->ndim) return true;
  int k = om__lower_arg(l, 0);
  for (int j = 0; j < 2; j++) om__lower_candidate(l, j, (int)c->attrs.i[1], k);
  return k >= 0;
}

const om_op_def om__op_topk = {
    .name = "topk", .n_in = 1, .n_out = 2, .saves = OM_SAVES_OUT(1), .infer = infer_topk, .forward = forward_topk,
    .backward = topk_backward, .lower = lower_topk, .extents = topk_extents, .sym_args = 1,
    .onnx = "TopK (k an input, sorted)",
    .test = {.n_in = 1, .ndims = {3}, .shapes = {{2, 5, 3}}, .lo = -2, .hi = 2, .attrs = {.n_i = 3, .i = {2, -2, 1}},
             .empty_refusal = "is out of range for dim"}};

om_tensor *om_topk(om_tensor *a, int64_t k, int dim, bool largest, om_tensor **indices) {
  om_tensor *out[2] = {0};
  if (om__apply(OM_OP_topk, &a, 1, &(om_attrs){.n_i = 3, .i = {k, dim, largest}}, out) < 0) return NULL;
  if (indices) *indices = out[1];
  else om_tensor_release(out[1]);
  return out[0];
}

/* A sort is the topk of the whole dim. */
om_tensor *om_sort(om_tensor *a, int dim, bool descending, om_tensor **indices) {
  if (!om__check_inputs("sort", &a, 1)) return NULL;
  int d = om__wrap_dim(dim, a->ndim ? a->ndim : 1, "sort");
  if (d < 0) return NULL;
  return om_topk(a, a->ndim ? a->shape[d] : 1, d, descending, indices);
}

om_tensor *om_argsort(om_tensor *a, int dim, bool descending) {
  om_tensor *idx = NULL;
  om_tensor_release(om_sort(a, dim, descending, &idx));
  return idx;
}

/* ---- searchsorted, bucketize: a comparison and a count ----
 * The index searchsorted gives is the count of sequence values that rank before the value:
 * those not >= it (side left), or not > it (right). On a sorted sequence that is where a binary
 * search lands, PyTorch's answer, NaN values included (NaN compares false, so they count every
 * value and land at the end, as PyTorch's search does). Written as ops (ge or gt, logical_not,
 * cast to int64, sum over the sequence), so a trace is the same exact count and the result
 * needs no gradient. */

om_tensor *om_searchsorted(om_tensor *sorted, om_tensor *values, bool right) {
  om_tensor *in[2] = {sorted, values};
  if (!om__check_inputs("searchsorted", in, 2)) return NULL;
  if (sorted->dtype == OM_BOOL || values->dtype == OM_BOOL)
    return om__fail(OM_ERR_DTYPE_MISMATCH, "searchsorted: takes float32 or int64, not bool"), NULL;
  if (sorted->ndim == 0) return om__fail(OM_ERR_SHAPE_MISMATCH, "searchsorted: the sorted sequence must have at least 1 dim"), NULL;
  bool lead_ok = sorted->ndim == 1 || (values->ndim == sorted->ndim &&
                                       !memcmp(values->shape, sorted->shape, sizeof(int64_t) * (size_t)(sorted->ndim - 1)));
  if (!lead_ok) {
    char s[OM_SHAPE_STR_LEN], v[OM_SHAPE_STR_LEN];
    return om__fail(OM_ERR_SHAPE_MISMATCH, "searchsorted: a sorted sequence of shape %s needs values with the same leading "
                    "dims (all but the last), got %s", om__shape_str(s, sizeof s, sorted->shape, sorted->ndim),
                    om__shape_str(v, sizeof v, values->shape, values->ndim)), NULL;
  }
  /* values [..., N, 1] against the sequence [M] or [..., 1, M]: [..., N, M] */
  om_scope s = {0};
  om_tensor *v = om__keep(&s, om_unsqueeze(values, values->ndim));
  om_tensor *q = sorted->ndim == 1 ? om_tensor_retain(sorted) : om_unsqueeze(sorted, sorted->ndim - 1);
  om__keep(&s, q);
  om_tensor *ranked = v && q ? om__keep(&s, right ? om_gt(q, v) : om_ge(q, v)) : NULL;
  om_tensor *before = om__keep(&s, ranked ? om_cast(om__keep(&s, om_logical_not(ranked)), OM_INT64) : NULL);
  om_tensor *r = before ? om_sum(before, (int64_t[]){-1}, 1, false) : NULL;
  om__scope_end(&s);
  return r;
}

om_tensor *om_bucketize(om_tensor *input, om_tensor *boundaries, bool right) {
  om_tensor *in[2] = {input, boundaries};
  if (!om__check_inputs("bucketize", in, 2)) return NULL;
  if (boundaries->ndim != 1)
    return om__fail(OM_ERR_SHAPE_MISMATCH, "bucketize: boundaries must be 1-D, got %d dims", boundaries->ndim), NULL;
  return om_searchsorted(boundaries, input, right);
}
