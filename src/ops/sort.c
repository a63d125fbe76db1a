/* Sorting and searching: the topk op (values and int64 indices of the k largest or smallest
 * along a dim), and sort and argsort written with it; the searchsorted op (a binary search), and
 * bucketize written with it.
 * The order is total and the same everywhere: a NaN ranks above every number (PyTorch's), and
 * equal values keep their index order (lower index first, whether largest or smallest first),
 * which is PyTorch's stable sort and ONNX TopK's tie rule. */
#include <math.h>
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

bool om__picked_backward(const om_tensor *a, int dim, om_tensor *indices, om_tensor *g, om_tensor **gin) {
  if (!a->ndim) return (*gin = om_tensor_retain(g)) != NULL;
  om_tensor *zeros = om_zeros(a->shape, a->ndim, OM_FLOAT32);
  *gin = zeros ? om_scatter_add(zeros, dim, indices, g) : NULL;
  om_tensor_release(zeros);
  return *gin != NULL;
}

static bool topk_backward(const om_record *r, om_tensor *const *g, om_tensor **gin) {
  return om__picked_backward(r->in[0], (int)r->attrs.i[1], r->saved[1], g[0], gin);
}

/* The TopK nodes of x (typed xm) along dim: outputs typed om (values, indices) to out. onnxruntime's
 * TopK places a NaN as its comparisons fall (ascending [4, NaN, 1, 2] came out as 1, NaN, 2, 4),
 * so a float32 x is sorted in two stable passes, each relying on TopK's tie rule (lower index
 * first): the whole axis by its numbers with each NaN as +inf, then the first k of that order by
 * IsNaN (NaNs first when largest, last otherwise; ties keep the first pass's order); the indices
 * compose (GatherElements) and the values are x's at them. */
static bool topk_nodes(om_lower *l, int x, const om_meta *xm, int k, int dim, bool largest, const om_meta *om, int *out) {
  om_gattr attrs[3] = {OM_ATTR_INT("axis", dim), OM_ATTR_INT("largest", largest), OM_ATTR_INT("sorted", 1)};
  if (xm->dtype != OM_FLOAT32) return om__emit(l, "TopK", (int[]){x, k}, 2, om, 2, out, attrs, 3);
  om_meta bm = *xm, im = *xm;
  bm.dtype = OM_BOOL, im.dtype = OM_INT64;
  om_meta pass[2] = {*xm, im};
  int n = om__lower_x_value(l, om__lower_in_x(l, 0, dim)), inf = om__lower_scalar(l, INFINITY, OM_FLOAT32);
  int nan, key, first[2], flags, flagged, second[2];
  om_gattr along = OM_ATTR_INT("axis", dim);
  return n >= 0 && inf >= 0 && om__emit(l, "IsNaN", &x, 1, &bm, 1, &nan, NULL, 0) &&
         om__emit(l, "Where", (int[]){nan, inf, x}, 3, xm, 1, &key, NULL, 0) &&
         om__emit(l, "TopK", (int[]){key, n}, 2, pass, 2, first, attrs, 3) &&
         (flags = om__lower_cast(l, nan, &bm, OM_FLOAT32)) >= 0 &&
         om__emit(l, "GatherElements", (int[]){flags, first[1]}, 2, xm, 1, &flagged, &along, 1) &&
         om__emit(l, "TopK", (int[]){flagged, k}, 2, om, 2, second, attrs, 3) &&
         om__emit(l, "GatherElements", (int[]){first[1], second[1]}, 2, &om[1], 1, &out[1], &along, 1) &&
         om__emit(l, "GatherElements", (int[]){x, out[1]}, 2, &om[0], 1, &out[0], &along, 1);
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
  if (!a->ndim) return om__lower_own_pick(l);
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
  if (k < 0 || !topk_nodes(l, x, &xm, k, dim, c->attrs.i[2], om, out)) return false;
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
    .onnx = "TopK (k an input, sorted); float32: two stable passes (NaN as +inf, then IsNaN), GatherElements",
    .test = {.n_in = 1, .ndims = {3}, .shapes = {{2, 5, 3}}, .lo = -2, .hi = 2, .attrs = {.n_i = 3, .i = {2, -2, 1}},
             .empty_refusal = "is out of range for dim"}};

om_tensor *om_topk(om_tensor *a, int64_t k, int dim, bool largest, om_tensor **indices) {
  om_tensor *out[2] = {0};
  if (om__apply(OM_OP_topk, &a, 1, &(om_attrs){.n_i = 3, .i = {k, dim, largest}}, out) < 0) return NULL;
  if (indices) *indices = out[1];
  else om_tensor_release(out[1]);
  return out[0];
}

/* A sort is the topk of the whole dim. PyTorch sorts bool (false first) though its topk refuses
 * it: a bool tensor is sorted as int64 0 and 1 (the same order, ties kept) and cast back. */
om_tensor *om_sort(om_tensor *a, int dim, bool descending, om_tensor **indices) {
  if (!om__check_inputs("sort", &a, 1)) return NULL;
  int d = om__wrap_dim(dim, a->ndim ? a->ndim : 1, "sort");
  if (d < 0) return NULL;
  if (a->dtype != OM_BOOL) return om_topk(a, a->ndim ? a->shape[d] : 1, d, descending, indices);
  om_tensor *ints = om_cast(a, OM_INT64);
  om_tensor *v = ints ? om_topk(ints, a->ndim ? a->shape[d] : 1, d, descending, indices) : NULL;
  om_tensor_release(ints);
  om_tensor *out = v ? om_cast(v, OM_BOOL) : NULL;
  om_tensor_release(v);
  if (!out && indices && *indices) om_tensor_release(*indices), *indices = NULL;
  return out;
}

om_tensor *om_argsort(om_tensor *a, int dim, bool descending) {
  om_tensor *idx = NULL;
  om_tensor_release(om_sort(a, dim, descending, &idx));
  return idx;
}

/* ---- searchsorted(sorted, values, right): attrs {right}; int64 of values' shape ----
 * PyTorch's binary search (at::native's cus_lower_bound / cus_upper_bound): over [0, M), with
 * mid = lo + (hi - lo) / 2, the answer moves past mid while !(s[mid] >= v) (left), or
 * !(s[mid] > v) (right). A NaN value compares false, so it lands at the end. The inputs come
 * promoted to one dtype (ints compared as ints, every bit kept). O(N log M) where counting every
 * pair was O(NM). The graph has no binary search: it counts the sequence values that rank before
 * each value (the same predicate, Not of GreaterOrEqual or Greater, summed), which is the binary
 * search's answer on a sorted sequence; a sequence with NaNs (sorted last, as sort puts them) or
 * out of order is where the two can differ (docs/operators.md). */

static bool infer_searchsorted(om_call *c) {
  const om_tensor *s = c->in[0], *v = c->in[1];
  if (c->attrs.n_i != 1) return om__fail(OM_ERR_INVALID_ARGUMENT, "searchsorted: takes right, got %d int attributes", c->attrs.n_i);
  if (s->dtype == OM_BOOL || v->dtype == OM_BOOL) return om__fail(OM_ERR_DTYPE_MISMATCH, "searchsorted: takes float32 or int64, not bool");
  if (s->ndim == 0) return om__fail(OM_ERR_SHAPE_MISMATCH, "searchsorted: the sorted sequence must have at least 1 dim");
  bool lead_ok = s->ndim == 1 || (v->ndim == s->ndim && !memcmp(v->shape, s->shape, sizeof(int64_t) * (size_t)(s->ndim - 1)));
  if (!lead_ok) {
    char a[OM_SHAPE_STR_LEN], b[OM_SHAPE_STR_LEN];
    return om__fail(OM_ERR_SHAPE_MISMATCH, "searchsorted: a sorted sequence of shape %s needs values with the same leading "
                    "dims (all but the last), got %s", om__shape_str(a, sizeof a, s->shape, s->ndim),
                    om__shape_str(b, sizeof b, v->shape, v->ndim));
  }
  c->attrs.i[0] = c->attrs.i[0] != 0;
  c->out_meta[0] = (om_meta){.dtype = OM_INT64, .ndim = v->ndim};
  memcpy(c->out_meta[0].shape, v->shape, sizeof v->shape);
  return true;
}

/* Whether sequence element k (of m, stride st) ranks before value x: the search's predicate. */
#define RANKS_BEFORE(T, k) (right ? !(*(const T *)(seq + (k) * st) > x) : !(*(const T *)(seq + (k) * st) >= x))
#define SEARCH(T)                                          \
  do {                                                     \
    const T x = *(const T *)val;                           \
    while (lo < hi) {                                      \
      int64_t mid = lo + ((hi - lo) >> 1);                 \
      if (RANKS_BEFORE(T, mid)) lo = mid + 1;              \
      else hi = mid;                                       \
    }                                                      \
  } while (0)

/* Values in row-major order; value k's sequence is row k / per (per: the values per row, the
 * last dim of an N-d values tensor; a 1-D sequence serves every value). */
static bool forward_searchsorted(om_call *c) {
  const om_tensor *s = c->in[0], *v = c->in[1];
  bool right = c->attrs.i[0];
  int64_t m = s->shape[s->ndim - 1], st = s->strides[s->ndim - 1] * (int64_t)om__dtype_size(s->dtype);
  int64_t n = om_tensor_numel(v), per = s->ndim == 1 || !v->ndim ? n : v->shape[v->ndim - 1];
  int64_t *out = (int64_t *)om__data(c->out[0]);
  for (int64_t k = 0; k < n; k++) {
    int64_t row = per ? k / per : 0, rem = k, ev = 0, es = 0; /* the value's and its row's offsets (elements) */
    for (int d = v->ndim - 1; d >= 0; d--) {
      int64_t idx = rem % v->shape[d];
      rem /= v->shape[d];
      ev += idx * v->strides[d];
    }
    for (int d = s->ndim - 2; d >= 0; d--) {
      es += row % s->shape[d] * s->strides[d];
      row /= s->shape[d];
    }
    const char *seq = om__data(s) + es * (int64_t)om__dtype_size(s->dtype), *val = om__data(v) + ev * (int64_t)om__dtype_size(v->dtype);
    int64_t lo = 0, hi = m;
    if (s->dtype == OM_FLOAT32) SEARCH(float);
    else SEARCH(int64_t);
    out[k] = lo;
  }
  return true;
}
#undef SEARCH
#undef RANKS_BEFORE

/* values [..., N] -> [..., N, 1] against the sequence [M] or [..., 1, M]: Not(GreaterOrEqual)
 * (left) or Not(Greater) (right), Cast to int64, ReduceSum over M. */
static bool lower_searchsorted(om_lower *l, const om_call *c) {
  int empty = om__lower_empty(l, c);
  if (empty) return empty > 0;
  const om_tensor *s = c->in[0], *v = c->in[1];
  int nd = v->ndim + 1, seq = om__lower_input(l, 0), val = om__lower_input(l, 1), out;
  int64_t last = nd - 1, before_last = s->ndim - 1; /* non-negative: onnxruntime's ReduceSum kept an empty axis given as -1 */
  om_meta pairs = {.dtype = OM_BOOL, .ndim = nd}, vm = {.dtype = v->dtype, .ndim = nd}, sm = {.dtype = s->dtype, .ndim = s->ndim + (s->ndim > 1)};
  memcpy(pairs.shape, v->shape, sizeof(int64_t) * (size_t)v->ndim);
  pairs.shape[nd - 1] = s->shape[s->ndim - 1];
  memcpy(vm.shape, v->shape, sizeof(int64_t) * (size_t)v->ndim);
  vm.shape[nd - 1] = 1;
  memcpy(sm.shape, pairs.shape, sizeof sm.shape);
  if (s->ndim == 1) sm.shape[0] = s->shape[0];
  else sm.shape[sm.ndim - 2] = 1;
  int axes = om__lower_ints(l, &last, 1), seq_axes = om__lower_ints(l, &before_last, 1);
  if (axes < 0 || seq_axes < 0 || !om__emit(l, "Unsqueeze", (int[]){val, axes}, 2, &vm, 1, &val, NULL, 0)) return false;
  if (s->ndim > 1 && !om__emit(l, "Unsqueeze", (int[]){seq, seq_axes}, 2, &sm, 1, &seq, NULL, 0)) return false;
  int ranked, before, counted;
  om_meta im = pairs;
  im.dtype = OM_INT64;
  if (!om__emit(l, c->attrs.i[0] ? "Greater" : "GreaterOrEqual", (int[]){seq, val}, 2, &pairs, 1, &ranked, NULL, 0) ||
      !om__emit(l, "Not", &ranked, 1, &pairs, 1, &before, NULL, 0) ||
      !om__emit(l, "Cast", &before, 1, &im, 1, &counted, &OM_ATTR_INT("to", 7 /* INT64 */), 1) ||
      !om__emit(l, "ReduceSum", (int[]){counted, axes}, 2, &c->out_meta[0], 1, &out, &OM_ATTR_INT("keepdims", 0), 1))
    return false;
  om__lower_output(l, 0, out);
  return true;
}

/* The sample's sequence is int64 from [-1, 1), so all zeros (sorted, as the op requires: the graph's
 * count is the search's answer there), its values float32: promoted, each before or after them all. */
const om_op_def om__op_searchsorted = {
    .name = "searchsorted", .n_in = 2, .n_out = 1, .promote = OM_PROMOTE_COMMON, .infer = infer_searchsorted,
    .forward = forward_searchsorted, .lower = lower_searchsorted,
    .onnx = "Unsqueeze, GreaterOrEqual (right: Greater), Not, Cast, ReduceSum (a count: the search's answer on a sorted sequence)",
    .test = {.n_in = 2, .ndims = {2, 2}, .shapes = {{2, 5}, {2, 3}}, .dtypes = {OM_INT64, OM_FLOAT32}, .lo = -1, .hi = 1,
             .attrs = {.n_i = 1, .i = {1}}, .no_gradcheck = true}};

om_tensor *om_searchsorted(om_tensor *sorted, om_tensor *values, bool right) {
  om_tensor *in[2] = {sorted, values};
  if (!om__check_inputs("searchsorted", in, 2)) return NULL;
  if (sorted->dtype == OM_BOOL || values->dtype == OM_BOOL) /* before promotion would make them numbers */
    return om__fail(OM_ERR_DTYPE_MISMATCH, "searchsorted: takes float32 or int64, not bool"), NULL;
  return om__apply1(OM_OP_searchsorted, in, 2, &(om_attrs){.n_i = 1, .i = {right}});
}

om_tensor *om_bucketize(om_tensor *input, om_tensor *boundaries, bool right) {
  om_tensor *in[2] = {input, boundaries};
  if (!om__check_inputs("bucketize", in, 2)) return NULL;
  if (boundaries->ndim != 1)
    return om__fail(OM_ERR_SHAPE_MISMATCH, "bucketize: boundaries must be 1-D, got %d dims", boundaries->ndim), NULL;
  return om_searchsorted(boundaries, input, right);
}
