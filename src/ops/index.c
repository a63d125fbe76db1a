/* Indexing ops: embedding, index_select, gather (reads picked by int64 indices) and their
 * adjoints index_add, scatter_add (sums into picked places). Every index is checked before
 * anything is read or written: an index outside [0, size) is IndexOutOfRange naming the index,
 * the dim and the bound (PyTorch refuses negative indices for these ops too), so a traced graph
 * never meets one from a checked run. Backward rules are written with these ops, so gradients
 * of gradients work: index_select/embedding <-> index_add, gather <-> scatter_add. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* ---- shared helpers ---- */

/* Offset in elements of the k-th element (row-major) of dims [from, to) of t. */
static int64_t offset_of(const om_tensor *t, int64_t k, int from, int to) {
  int64_t off = 0;
  for (int d = to - 1; d >= from && k; d--) {
    off += (k % t->shape[d]) * t->strides[d];
    k /= t->shape[d];
  }
  return off;
}

static int64_t prod(const int64_t *shape, int from, int to) {
  int64_t n = 1;
  for (int d = from; d < to; d++) n *= shape[d];
  return n;
}

/* Copies the index values (any layout) into a new array, checking each is in [0, size).
 * who names the op, dim the indexed dim (-1: the rows of embedding's weight). NULL on error. */
static int64_t *read_indices(const om_tensor *idx, int64_t size, const char *who, int dim) {
  int64_t n = om_tensor_numel(idx);
  int64_t *v = om__alloc(sizeof(int64_t) * (uint64_t)(n ? n : 1), who);
  if (!v) return NULL;
  const int64_t *p = (const int64_t *)om__data(idx);
  for (int64_t k = 0; k < n; k++) {
    v[k] = p[offset_of(idx, k, 0, idx->ndim)];
    if (v[k] < 0 || v[k] >= size) {
      if (dim < 0)
        om__fail(OM_ERR_INDEX_OUT_OF_RANGE, "%s: index %lld is out of range for a weight of %lld rows (valid: 0 to %lld)",
                 who, (long long)v[k], (long long)size, (long long)size - 1);
      else
        om__fail(OM_ERR_INDEX_OUT_OF_RANGE, "%s: index %lld is out of range for dim %d of size %lld (valid: 0 to %lld%s)",
                 who, (long long)v[k], dim, (long long)size, (long long)size - 1,
                 v[k] < 0 ? "; negative indices are not accepted, as in PyTorch" : "");
      free(v);
      return NULL;
    }
  }
  return v;
}

static bool check_index_dtype(const om_tensor *idx, const char *who) {
  if (idx->dtype != OM_INT64)
    return om__fail(OM_ERR_DTYPE_MISMATCH, "%s: index must be int64, not %s", who, om_dtype_name(idx->dtype));
  return true;
}

/* Offsets of every element of dims [from, ndim) of t, in row-major order (n of them). */
static int64_t *inner_offsets(const om_tensor *t, int from, int64_t n, const char *who) {
  int64_t *o = om__alloc(sizeof(int64_t) * (uint64_t)(n ? n : 1), who);
  if (o)
    for (int64_t i = 0; i < n; i++) o[i] = offset_of(t, i, from, t->ndim);
  return o;
}

/* out [outer, k, inner] (contiguous) = in [outer, size, inner] picked along axis by the k
 * values of idx: Gather's semantics for embedding (axis 0) and index_select. */
static bool gather_axis(const om_tensor *in, const om_tensor *idx, int axis, om_tensor *out, const char *who, int dim) {
  int64_t size = in->shape[axis], k = om_tensor_numel(idx);
  int64_t outer = prod(in->shape, 0, axis), inner = prod(in->shape, axis + 1, in->ndim);
  int64_t *v = read_indices(idx, size, who, dim);
  int64_t *io = v ? inner_offsets(in, axis + 1, inner, who) : NULL;
  if (!io) {
    free(v);
    return false;
  }
  size_t es = om__dtype_size(in->dtype);
  const char *src = om__data(in);
  char *dst = om__data(out);
  bool dense = true; /* the picked slices are contiguous runs (an embedding row): one memcpy each */
  for (int64_t i = 0; i < inner && dense; i++) dense = io[i] == i;
  for (int64_t o = 0; o < outer; o++) {
    int64_t base = offset_of(in, o, 0, axis);
    for (int64_t j = 0; j < k; j++) {
      const char *row = src + (size_t)(base + v[j] * in->strides[axis]) * es;
      char *to = dst + (size_t)((o * k + j) * inner) * es;
      if (dense) memcpy(to, row, (size_t)inner * es);
      else
        for (int64_t i = 0; i < inner; i++) memcpy(to + (size_t)i * es, row + (size_t)io[i] * es, es);
    }
  }
  free(v);
  free(io);
  return true;
}

/* Copies in (any layout) into out (contiguous, same shape and dtype). */
static void copy_contiguous(const om_tensor *in, om_tensor *out) {
  int64_t n = om_tensor_numel(in);
  size_t es = om__dtype_size(in->dtype);
  const char *src = om__data(in);
  char *dst = om__data(out);
  for (int64_t k = 0; k < n; k++) memcpy(dst + (size_t)k * es, src + (size_t)offset_of(in, k, 0, in->ndim) * es, es);
}

static bool check_float(const om_tensor *t, const char *who, const char *name) {
  if (t->dtype != OM_FLOAT32) return om__fail(OM_ERR_DTYPE_MISMATCH, "%s: %s must be float32, not %s", who, name, om_dtype_name(t->dtype));
  return true;
}

/* A dim attr (the first of n) wrapped into [0, ndim) in place (a 0-d input counts as 1-D, as in PyTorch). */
static bool wrap_attr_dim(om_call *c, int ndim, const char *who, int n) {
  if (c->attrs.n_i != n) return om__fail(OM_ERR_INVALID_ARGUMENT, "%s: takes %s, got %d", who, n == 1 ? "one attribute (dim)" : "two attributes (dim, reduce)", c->attrs.n_i);
  int d = om__wrap_dim(c->attrs.i[0], ndim, who);
  if (d < 0) return false;
  c->attrs.i[0] = d;
  return true;
}

static void set_meta(om_meta *m, om_dtype dtype, const int64_t *shape, int ndim) {
  *m = (om_meta){.dtype = dtype, .ndim = ndim};
  if (ndim) memcpy(m->shape, shape, sizeof(int64_t) * (size_t)ndim);
}

/* The checks index_add, scatter_add and scatter_reduce share: dim (the first of n_attrs), an
 * int64 index, float32 input and source; with ints (the scatters) int64 ones too, input and
 * source of one dtype, as PyTorch's. */
static bool check_add_inputs(om_call *c, const char *who, const char *source, int n_attrs, bool ints) {
  const om_tensor *x = c->in[0], *src = c->in[2];
  if (!wrap_attr_dim(c, x->ndim, who, n_attrs) || !check_index_dtype(c->in[1], who)) return false;
  if (ints && (x->dtype == OM_INT64 || src->dtype == OM_INT64) && x->dtype != src->dtype)
    return om__fail(OM_ERR_DTYPE_MISMATCH, "%s: %s is %s, input %s (they must match, as PyTorch's)", who, source, om_dtype_name(src->dtype), om_dtype_name(x->dtype));
  if (!(ints && x->dtype == OM_INT64) && (!check_float(x, who, "input") || !check_float(src, who, source))) return false;
  if (x->ndim == 0) return om__fail(OM_ERR_SHAPE_MISMATCH, "%s: input must have at least 1 dim", who);
  return true;
}

/* The public entry of an op whose one attribute is dim. */
static om_tensor *apply_dim(om_op op, int dim, om_tensor *const *in, int n) {
  om_attrs a = om__attrs_i(1, (int64_t[]){dim});
  return om__apply1(op, in, n, &a);
}

/* new zeros of t's shape (float32) */
static om_tensor *zeros_like(const om_tensor *t) { return om_zeros(t->shape, t->ndim, OM_FLOAT32); }

static bool backward_done(const om_record *r, om_tensor **gin) {
  for (int i = 0; i < r->n_in; i++)
    if (om__wants(r, i) && !gin[i]) return false;
  return true;
}

/* ---- embedding: weight [num, dim], indices int64 [...] -> [..., dim] ----
 * attrs: [has_padding, padding_idx]; canonical padding_idx in [0, num). The padding row is read
 * like any other (nn.Embedding zeroes it at init); it gets no gradient. */

static bool infer_embedding(om_call *c) {
  const om_tensor *w = c->in[0], *idx = c->in[1];
  char ws[OM_SHAPE_STR_LEN];
  if (w->ndim != 2)
    return om__fail(OM_ERR_SHAPE_MISMATCH, "embedding: weight must be 2-D [num_embeddings, embedding_dim], got %s",
                    om__shape_str(ws, sizeof ws, w->shape, w->ndim));
  if (!check_float(w, "embedding", "weight") || !check_index_dtype(idx, "embedding")) return false;
  if (idx->ndim + 1 > OM_MAX_DIMS)
    return om__fail(OM_ERR_INVALID_ARGUMENT, "embedding: indices have %d dims; the result would exceed %d", idx->ndim, OM_MAX_DIMS);
  om_attrs *a = &c->attrs;
  if (a->n_i == 0) a->i[0] = 0, a->i[1] = -1;
  else if (a->n_i != 2) return om__fail(OM_ERR_INVALID_ARGUMENT, "embedding: takes attributes [has_padding, padding_idx], got %d", a->n_i);
  a->n_i = 2;
  if (a->i[0]) {
    int64_t num = w->shape[0], p = a->i[1];
    if (p < -num || p >= num)
      return om__fail(OM_ERR_INDEX_OUT_OF_RANGE, "embedding: padding_idx %lld is out of range for %lld embeddings (valid: %lld to %lld)",
                      (long long)p, (long long)num, (long long)-num, (long long)num - 1);
    a->i[1] = p < 0 ? p + num : p;
  } else {
    a->i[1] = -1;
  }
  set_meta(&c->out_meta[0], OM_FLOAT32, idx->shape, idx->ndim);
  c->out_meta[0].shape[idx->ndim] = w->shape[1];
  c->out_meta[0].ndim = idx->ndim + 1;
  return true;
}

static bool forward_embedding(om_call *c) { return gather_axis(c->in[0], c->in[1], 0, c->out[0], "embedding", -1); }

/* dweight = index_add(zeros, 0, indices flat, g as [k, dim]), the padding rows' terms masked out. */
static bool embedding_backward(const om_record *r, om_tensor *const *g, om_tensor **gin) {
  const om_tensor *w = r->in[0];
  om_tensor *idx = r->in[1];
  if (!om__wants(r, 0)) return true;
  om_scope s = {0};
  int64_t k = om_tensor_numel(idx), dim = w->shape[1], pad = r->attrs.i[1];
  om_tensor *flat = om__keep(&s, om_reshape(idx, (int64_t[]){k}, 1));
  om_tensor *g2 = om__keep(&s, om_reshape(g[0], (int64_t[]){k, dim}, 2));
  if (g2 && r->attrs.i[0]) {
    float *m = om__alloc(sizeof(float) * (uint64_t)(k ? k : 1), "embedding");
    if (m) {
      for (int64_t j = 0; j < k; j++) m[j] = om__get_flat(idx, j) == (double)pad ? 0.0f : 1.0f;
      om_tensor *mask = om__keep(&s, om_from_data(m, (int64_t[]){k, 1}, 2, OM_FLOAT32));
      free(m);
      g2 = mask ? om__keep(&s, om_mul(g2, mask)) : NULL;
    } else {
      g2 = NULL;
    }
  }
  om_tensor *z = om__keep(&s, zeros_like(w));
  gin[0] = flat && g2 && z ? om_index_add(z, 0, flat, g2) : NULL;
  om__scope_end(&s);
  return backward_done(r, gin);
}

/* Gather of the rows; rows 0 .. n - 1 (indices arange(n) of a length that changes with the
 * sizes: learned positions) are a Slice of the table, one node where Gather needs the Range too.
 * Indices arange(n) with axes of size 1 around it (arange(n).unsqueeze(0)) slice the table with
 * those axes added (an Unsqueeze of the weight alone, no size in it). */
static bool lower_embedding(om_lower *l, const om_call *c) {
  int n = om__lower_iota(l, 1);
  const om_tensor *idx = c->in[1];
  int64_t axis = -1, units[OM_MAX_DIMS];
  int n_units = 0;
  for (int d = 0; n >= 0 && d < idx->ndim; d++) {
    if (om__lower_in_ext(l, 1, d) == n && axis < 0) axis = d;
    else if (idx->shape[d] == 1 && om__lower_in_ext(l, 1, d) < 0) units[n_units++] = d;
    else n = -1; /* not the one axis of the iota: a Gather, as for any indices */
  }
  if (n < 0 || axis < 0) return om__lower_node(l, c, "Gather", &OM_ATTR_INT("axis", 0), 1);
  const int64_t zero = 0;
  int table = om__lower_input(l, 0), out;
  if (n_units) {
    const om_tensor *w = c->in[0];
    om_meta m = {.dtype = w->dtype, .ndim = idx->ndim + 1};
    for (int d = 0; d < idx->ndim; d++) m.shape[d] = d == axis ? w->shape[0] : 1;
    m.shape[idx->ndim] = w->shape[1];
    int in[2] = {table, om__lower_ints(l, units, n_units)};
    if (in[1] < 0 || !om__emit(l, "Unsqueeze", in, 2, &m, 1, &table, NULL, 0)) return false;
  }
  int in[4] = {table, om__lower_ints(l, &zero, 1), om__lower_x_value(l, n), om__lower_ints(l, &axis, 1)};
  if (in[1] < 0 || in[2] < 0 || in[3] < 0 || !om__emit(l, "Slice", in, 4, &c->out_meta[0], 1, &out, NULL, 0)) return false;
  om__lower_output(l, 0, out);
  return true;
}

const om_op_def om__op_embedding = {
    .name = "embedding", .n_in = 2, .n_out = 1, .saves = OM_SAVES_IN(1),
    .infer = infer_embedding, .forward = forward_embedding, .backward = embedding_backward,
    .lower = lower_embedding, .onnx = "Gather (axis 0); Slice for the rows of an arange of a symbolic length",
    .test = {.n_in = 2, .ndims = {2, 2}, .shapes = {{4, 3}, {2, 5}}, .dtypes = {OM_FLOAT32, OM_INT64}, .lo = 0, .hi = 3.99,
             .empty_refusal = "is out of range for a weight of 0 rows"}}; /* an index into no rows */
/* (no padding_idx in the sample: the padding row is read but gets no gradient, so the
 *  finite-difference check would flag it by design; tests/c/test_index.c checks it) */

om_tensor *om_embedding(om_tensor *weight, om_tensor *indices, int64_t padding_idx, bool has_padding) {
  om_attrs a = om__attrs_i(2, (int64_t[]){has_padding, padding_idx});
  return om__apply1(OM_OP_embedding, (om_tensor *[]){weight, indices}, 2, &a);
}

/* ---- index_select: input [..., n, ...], index int64 [k] (or 0-d) -> [..., k, ...] along dim ---- */

static bool infer_index_select(om_call *c) {
  const om_tensor *x = c->in[0], *idx = c->in[1];
  if (!wrap_attr_dim(c, x->ndim, "index_select", 1) || !check_index_dtype(idx, "index_select")) return false;
  if (idx->ndim > 1) return om__fail(OM_ERR_SHAPE_MISMATCH, "index_select: index must be 1-D (or 0-d), got %d dims", idx->ndim);
  if (x->ndim == 0 && om_tensor_numel(idx) != 1) /* PyTorch's rule: the result stays 0-d */
    return om__fail(OM_ERR_SHAPE_MISMATCH, "index_select: an index into a 0-d input must have 1 value, got %lld",
                    (long long)om_tensor_numel(idx));
  set_meta(&c->out_meta[0], x->dtype, x->shape, x->ndim);
  if (x->ndim) c->out_meta[0].shape[c->attrs.i[0]] = om_tensor_numel(idx);
  return true;
}

static bool forward_index_select(om_call *c) {
  const om_tensor *x = c->in[0];
  if (x->ndim == 0) { /* a 0-d input is one element along its one implicit dim */
    om_tensor x1 = *x;
    x1.ndim = 1, x1.shape[0] = 1, x1.strides[0] = 1;
    return gather_axis(&x1, c->in[1], 0, c->out[0], "index_select", 0);
  }
  return gather_axis(x, c->in[1], (int)c->attrs.i[0], c->out[0], "index_select", (int)c->attrs.i[0]);
}

/* dinput = index_add(zeros, dim, index, g) */
static bool index_select_backward(const om_record *r, om_tensor *const *g, om_tensor **gin) {
  if (!om__wants(r, 0)) return true;
  if (r->in[0]->ndim == 0) { /* the one element, picked once */
    gin[0] = om_tensor_retain(g[0]);
    return backward_done(r, gin);
  }
  om_tensor *z = zeros_like(r->in[0]);
  om_tensor *idx = r->in[1]->ndim == 0 ? om_reshape(r->in[1], (int64_t[]){1}, 1) : om_tensor_retain(r->in[1]);
  gin[0] = z && idx ? om_index_add(z, (int)r->attrs.i[0], idx, g[0]) : NULL;
  om_tensor_release(z);
  om_tensor_release(idx);
  return backward_done(r, gin);
}

static bool lower_index_select(om_lower *l, const om_call *c) {
  int in[2] = {om__lower_input(l, 0), om__lower_input(l, 1)}, out;
  if (c->in[0]->ndim == 0) return om__lower_refuse(l, c, "a 0-d input has no axis for Gather");
  if (c->in[1]->ndim == 0) { /* Gather with a 0-d index would drop the axis */
    om_meta m = {.dtype = OM_INT64, .ndim = 1, .shape = {1}};
    int shape = om__lower_ints(l, (int64_t[]){1}, 1);
    if (shape < 0 || !om__emit(l, "Reshape", (int[]){in[1], shape}, 2, &m, 1, &in[1], NULL, 0)) return false;
  }
  if (!om__emit(l, "Gather", in, 2, &c->out_meta[0], 1, &out, &OM_ATTR_INT("axis", c->attrs.i[0]), 1)) return false;
  om__lower_output(l, 0, out);
  return true;
}

const om_op_def om__op_index_select = {
    .name = "index_select", .takes_float64 = true, .n_in = 2, .n_out = 1, .saves = OM_SAVES_IN(1),
    .infer = infer_index_select, .forward = forward_index_select, .backward = index_select_backward,
    .lower = lower_index_select, .onnx = "Gather (axis dim)",
    .test = {.n_in = 2, .ndims = {3, 1}, .shapes = {{3, 4, 2}, {6}}, .dtypes = {OM_FLOAT32, OM_INT64}, .lo = 0, .hi = 3.99,
             .attrs = {.n_i = 1, .i = {1}}, .empty_refusal = "is out of range for dim 1 of size 0"}};

om_tensor *om_index_select(om_tensor *input, int dim, om_tensor *index) {
  return apply_dim(OM_OP_index_select, dim, (om_tensor *[]){input, index}, 2);
}

/* ---- index_add: input [..., n, ...], index int64 [k], source [..., k, ...] -> input's shape ----
 * out = input; out[..., index[j], ...] += source[..., j, ...] for j in order (float32). */

static bool infer_index_add(om_call *c) {
  const om_tensor *x = c->in[0], *idx = c->in[1], *src = c->in[2];
  if (!check_add_inputs(c, "index_add", "source", 1, false)) return false;
  int dim = (int)c->attrs.i[0];
  char xs[OM_SHAPE_STR_LEN], ss[OM_SHAPE_STR_LEN];
  if (idx->ndim != 1) return om__fail(OM_ERR_SHAPE_MISMATCH, "index_add: index must be 1-D, got %d dims", idx->ndim);
  bool ok = src->ndim == x->ndim;
  for (int d = 0; ok && d < x->ndim; d++) ok = src->shape[d] == (d == dim ? idx->shape[0] : x->shape[d]);
  if (!ok)
    return om__fail(OM_ERR_SHAPE_MISMATCH, "index_add: source %s must be input %s with dim %d of size %lld (the index length)",
                    om__shape_str(ss, sizeof ss, src->shape, src->ndim), om__shape_str(xs, sizeof xs, x->shape, x->ndim),
                    dim, (long long)idx->shape[0]);
  set_meta(&c->out_meta[0], OM_FLOAT32, x->shape, x->ndim);
  return true;
}

static bool forward_index_add(om_call *c) {
  const om_tensor *x = c->in[0], *src = c->in[2];
  int dim = (int)c->attrs.i[0];
  int64_t size = x->shape[dim], k = src->shape[dim];
  int64_t outer = prod(x->shape, 0, dim), inner = prod(x->shape, dim + 1, x->ndim);
  int64_t *v = read_indices(c->in[1], size, "index_add", dim);
  int64_t *so = v ? inner_offsets(src, dim + 1, inner, "index_add") : NULL;
  if (!so) {
    free(v);
    return false;
  }
  copy_contiguous(x, c->out[0]);
  float *o = (float *)om__data(c->out[0]);
  const float *s = (const float *)om__data(src);
  for (int64_t q = 0; q < outer; q++) {
    int64_t base = offset_of(src, q, 0, dim);
    for (int64_t j = 0; j < k; j++) {
      float *to = o + (q * size + v[j]) * inner;
      const float *from = s + base + j * src->strides[dim];
      for (int64_t i = 0; i < inner; i++) to[i] += from[so[i]];
    }
  }
  free(v);
  free(so);
  return true;
}

/* index_add and scatter_add: dinput = g; dsource = the picks at index (index_select / gather). */
static bool add_backward(const om_record *r, om_tensor *const *g, om_tensor **gin) {
  int dim = (int)r->attrs.i[0];
  if (om__wants(r, 0)) gin[0] = om_tensor_retain(g[0]);
  if (om__wants(r, 2))
    gin[2] = r->op == OM_OP_index_add ? om_index_select(g[0], dim, r->in[1]) : om_gather(g[0], dim, r->in[1]);
  return backward_done(r, gin);
}

/* ScatterElements needs the index in the source's shape: Unsqueeze it on every other axis and
 * Expand it to Shape(source), then add (reduction "add", duplicates summed). */
static bool lower_index_add(om_lower *l, const om_call *c) {
  int nd = c->in[0]->ndim, dim = (int)c->attrs.i[0];
  int64_t axes[OM_MAX_DIMS];
  int na = 0;
  for (int d = 0; d < nd; d++)
    if (d != dim) axes[na++] = d;
  const om_tensor *src = c->in[2];
  om_meta mu = {.dtype = OM_INT64, .ndim = nd}, ms = {.dtype = OM_INT64, .ndim = 1, .shape = {nd}},
          me = {.dtype = OM_INT64, .ndim = nd};
  for (int d = 0; d < nd; d++) mu.shape[d] = d == dim ? src->shape[d] : 1, me.shape[d] = src->shape[d];
  int x = om__lower_input(l, 0), idx = om__lower_input(l, 1), s = om__lower_input(l, 2), u = idx, shape, e, out;
  int ax = na ? om__lower_ints(l, axes, na) : 0;
  if (ax < 0 || (na && !om__emit(l, "Unsqueeze", (int[]){idx, ax}, 2, &mu, 1, &u, NULL, 0)) ||
      !om__emit(l, "Shape", &s, 1, &ms, 1, &shape, NULL, 0) ||
      !om__emit(l, "Expand", (int[]){u, shape}, 2, &me, 1, &e, NULL, 0) ||
      !om__emit(l, "ScatterElements", (int[]){x, e, s}, 3, &c->out_meta[0], 1, &out,
                (om_gattr[]){OM_ATTR_INT("axis", dim), OM_ATTR_STRING("reduction", "add")}, 2))
    return false;
  om__lower_output(l, 0, out);
  return true;
}

const om_op_def om__op_index_add = {
    .name = "index_add", .n_in = 3, .n_out = 1, .saves = OM_SAVES_IN(1),
    .infer = infer_index_add, .forward = forward_index_add, .backward = add_backward,
    .lower = lower_index_add, .onnx = "Unsqueeze, Shape, Expand, ScatterElements (reduction add)",
    .test = {.n_in = 3, .ndims = {3, 1, 3}, .shapes = {{2, 4, 3}, {6}, {2, 6, 3}}, .dtypes = {OM_FLOAT32, OM_INT64, OM_FLOAT32},
             .lo = 0, .hi = 3.99, .attrs = {.n_i = 1, .i = {1}}, .empty_refusal = "is out of range for dim 1 of size 0"}};

om_tensor *om_index_add(om_tensor *input, int dim, om_tensor *index, om_tensor *source) {
  return apply_dim(OM_OP_index_add, dim, (om_tensor *[]){input, index, source}, 3);
}

/* ---- gather: input [...], index int64 (same rank, index.size(d) <= input.size(d) off dim) -> index's shape ----
 * out[p] = input[p with p[dim] = index[p]] */

static bool check_same_rank_index(const om_tensor *x, const om_tensor *idx, int dim, const char *who) {
  char xs[OM_SHAPE_STR_LEN], is[OM_SHAPE_STR_LEN];
  bool ok = idx->ndim == x->ndim;
  for (int d = 0; ok && d < x->ndim; d++) ok = d == dim || idx->shape[d] <= x->shape[d];
  if (!ok)
    return om__fail(OM_ERR_SHAPE_MISMATCH, "%s: index %s must have the rank of input %s and no larger size off dim %d",
                    who, om__shape_str(is, sizeof is, idx->shape, idx->ndim), om__shape_str(xs, sizeof xs, x->shape, x->ndim), dim);
  return true;
}

static bool infer_gather(om_call *c) {
  const om_tensor *x = c->in[0], *idx = c->in[1];
  if (!wrap_attr_dim(c, x->ndim, "gather", 1) || !check_index_dtype(idx, "gather")) return false;
  if (x->ndim == 0) return om__fail(OM_ERR_SHAPE_MISMATCH, "gather: input must have at least 1 dim");
  if (!check_same_rank_index(x, idx, (int)c->attrs.i[0], "gather")) return false;
  set_meta(&c->out_meta[0], x->dtype, idx->shape, idx->ndim);
  return true;
}

/* Walks every position p of index (row-major), calling the body with k (the flat position),
 * the index value's input offset along the other dims (off) and the index value (v). */
#define FOR_INDEX(x, idx, dim, v, BODY)                                                    \
  for (int64_t k = 0, n_ = om_tensor_numel(idx); k < n_; k++) {                            \
    int64_t rest_ = k, off = 0;                                                            \
    for (int d_ = (idx)->ndim - 1; d_ >= 0; d_--) {                                         \
      int64_t p_ = rest_ % (idx)->shape[d_];                                                \
      rest_ /= (idx)->shape[d_];                                                            \
      if (d_ != (dim)) off += p_ * (x)->strides[d_];                                        \
    }                                                                                      \
    int64_t vk = (v)[k];                                                                   \
    BODY                                                                                   \
  }

static bool forward_gather(om_call *c) {
  const om_tensor *x = c->in[0], *idx = c->in[1];
  int dim = (int)c->attrs.i[0];
  int64_t *v = read_indices(idx, x->shape[dim], "gather", dim);
  if (!v) return false;
  size_t es = om__dtype_size(x->dtype);
  const char *src = om__data(x);
  char *dst = om__data(c->out[0]);
  FOR_INDEX(x, idx, dim, v, { memcpy(dst + (size_t)k * es, src + (size_t)(off + vk * x->strides[dim]) * es, es); })
  free(v);
  return true;
}

/* dinput = scatter_add(zeros, dim, index, g) */
static bool gather_backward(const om_record *r, om_tensor *const *g, om_tensor **gin) {
  if (!om__wants(r, 0)) return true;
  om_tensor *z = zeros_like(r->in[0]);
  gin[0] = z ? om_scatter_add(z, (int)r->attrs.i[0], r->in[1], g[0]) : NULL;
  om_tensor_release(z);
  return backward_done(r, gin);
}

static bool lower_gather(om_lower *l, const om_call *c) {
  return om__lower_node(l, c, "GatherElements", &OM_ATTR_INT("axis", c->attrs.i[0]), 1);
}

const om_op_def om__op_gather = {
    .name = "gather", .n_in = 2, .n_out = 1, .saves = OM_SAVES_IN(1),
    .infer = infer_gather, .forward = forward_gather, .backward = gather_backward,
    .lower = lower_gather, .onnx = "GatherElements (axis dim)",
    .test = {.n_in = 2, .ndims = {2, 2}, .shapes = {{4, 5}, {6, 3}}, .dtypes = {OM_FLOAT32, OM_INT64}, .lo = 0, .hi = 3.99,
             .attrs = {.n_i = 1, .i = {0}}}};

om_tensor *om_gather(om_tensor *input, int dim, om_tensor *index) {
  return apply_dim(OM_OP_gather, dim, (om_tensor *[]){input, index}, 2);
}

/* ---- scatter_add, scatter_reduce: input [...], index int64 (as gather's), src (index's shape) -> input's shape ----
 * out = input; out[p with p[dim] = index[p]] combined with src[p], positions p in row-major order
 * (float32, or int64 input and src, whose sums and products wrap around): added (scatter_add), or by scatter_reduce's reduce (attrs [dim, reduce]): multiplied
 * (prod), the larger (amax) or the smaller (amin), a NaN on either side staying, as PyTorch's
 * scatter_reduce with include_self true. scatter_reduce's sum is scatter_add (om_scatter_reduce). */

static bool infer_scatter(om_call *c, const char *who, int n_attrs) {
  const om_tensor *x = c->in[0], *idx = c->in[1], *src = c->in[2];
  if (!check_add_inputs(c, who, "src", n_attrs, true)) return false;
  if (!check_same_rank_index(x, idx, (int)c->attrs.i[0], who)) return false;
  char is[OM_SHAPE_STR_LEN], ss[OM_SHAPE_STR_LEN];
  if (src->ndim != idx->ndim || memcmp(src->shape, idx->shape, sizeof(int64_t) * (size_t)idx->ndim))
    return om__fail(OM_ERR_SHAPE_MISMATCH, "%s: src %s must have index's shape %s", who,
                    om__shape_str(ss, sizeof ss, src->shape, src->ndim), om__shape_str(is, sizeof is, idx->shape, idx->ndim));
  set_meta(&c->out_meta[0], x->dtype, x->shape, x->ndim);
  return true;
}

static bool infer_scatter_add(om_call *c) { return infer_scatter(c, "scatter_add", 1); }

static bool infer_scatter_reduce(om_call *c) {
  if (c->attrs.n_i == 2 && (c->attrs.i[1] < OM_SCATTER_PROD || c->attrs.i[1] > OM_SCATTER_AMIN))
    return om__fail(OM_ERR_INVALID_ARGUMENT, "scatter_reduce: reduce %lld is not prod (1), amax (2) or amin (3)", (long long)c->attrs.i[1]);
  return infer_scatter(c, "scatter_reduce", 2);
}

/* *to combined with from by reduce. */
static void combine(float *to, float from, int reduce) {
  if (reduce == OM_SCATTER_SUM) *to += from;
  else if (reduce == OM_SCATTER_PROD) *to *= from;
  else if (isnan(*to) || isnan(from)) *to = *to + from; /* NaN */
  else if (reduce == OM_SCATTER_AMAX ? from > *to : from < *to) *to = from;
}

/* *to combined with from by reduce, in int64: sums and products wrap around as PyTorch's. */
static void combine_i64(int64_t *to, int64_t from, int reduce) {
  uint64_t a = (uint64_t)*to, b = (uint64_t)from; /* unsigned: wrapping without overflow */
  if (reduce == OM_SCATTER_SUM) *to = (int64_t)(a + b);
  else if (reduce == OM_SCATTER_PROD) *to = (int64_t)(a * b);
  else if (reduce == OM_SCATTER_AMAX ? from > *to : from < *to) *to = from;
}

/* The kernel of both: reduce is OM_SCATTER_SUM for scatter_add. */
static bool scatter_into(om_call *c, const char *who, int reduce) {
  const om_tensor *x = c->in[0], *idx = c->in[1], *src = c->in[2];
  int dim = (int)c->attrs.i[0];
  int64_t *v = read_indices(idx, x->shape[dim], who, dim);
  if (!v) return false;
  copy_contiguous(x, c->out[0]);
  om_tensor o = *c->out[0]; /* its contiguous strides are what FOR_INDEX reads */
  if (x->dtype == OM_INT64) {
    int64_t *qo = (int64_t *)om__data(c->out[0]);
    const int64_t *qs = (const int64_t *)om__data(src);
    FOR_INDEX(&o, idx, dim, v, { combine_i64(qo + off + vk * o.strides[dim], qs[offset_of(src, k, 0, src->ndim)], reduce); })
  } else {
    float *po = (float *)om__data(c->out[0]);
    const float *ps = (const float *)om__data(src);
    FOR_INDEX(&o, idx, dim, v, { combine(po + off + vk * o.strides[dim], ps[offset_of(src, k, 0, src->ndim)], reduce); })
  }
  free(v);
  return true;
}

static bool forward_scatter_add(om_call *c) { return scatter_into(c, "scatter_add", OM_SCATTER_SUM); }
static bool forward_scatter_reduce(om_call *c) { return scatter_into(c, "scatter_reduce", (int)c->attrs.i[1]); }

static bool lower_scatter(om_lower *l, const om_call *c) {
  int reduce = c->attrs.n_i == 2 ? (int)c->attrs.i[1] : OM_SCATTER_SUM;
  static const char *const name[] = {"add", "mul", "max", "min"};
  return om__lower_node(l, c, "ScatterElements",
                        (om_gattr[]){OM_ATTR_INT("axis", c->attrs.i[0]), OM_ATTR_STRING("reduction", name[reduce])}, 2);
}

const om_op_def om__op_scatter_add = {
    .name = "scatter_add", .n_in = 3, .n_out = 1, .saves = OM_SAVES_IN(1),
    .infer = infer_scatter_add, .forward = forward_scatter_add, .backward = add_backward,
    .lower = lower_scatter, .onnx = "ScatterElements (reduction add)",
    .test = {.n_in = 3, .ndims = {2, 2, 2}, .shapes = {{4, 5}, {6, 3}, {6, 3}}, .dtypes = {OM_FLOAT32, OM_INT64, OM_FLOAT32},
             .lo = 0, .hi = 3.99, .attrs = {.n_i = 1, .i = {0}}}};

om_tensor *om_scatter_add(om_tensor *input, int dim, om_tensor *index, om_tensor *src) {
  return apply_dim(OM_OP_scatter_add, dim, (om_tensor *[]){input, index, src}, 3);
}

/* x's elements where mask holds replaced by v. New reference. */
static om_tensor *fill_where(om_scope *s, om_tensor *mask, om_tensor *x, double v) {
  om_tensor *fill = om__keep(s, om_scalar(v, OM_FLOAT32));
  return fill ? om__keep(s, om_where(mask, fill, x)) : NULL;
}

/* prod (PyTorch's rule): dinput = g y' / x' with x' = x with its zeros 1 and y' its product
 * (the product of the sources written there); dsrc = g y / src, or where src is the only zero
 * written to its place g times the product without it (src 1 there). amax and amin: g shared
 * equally between the input and the sources that equal the result (y) at their place. */
static bool scatter_reduce_backward(const om_record *r, om_tensor *const *g, om_tensor **gin) {
  om_tensor *x = r->in[0], *idx = r->in[1], *src = r->in[2], *y = r->saved[0];
  int dim = (int)r->attrs.i[0], reduce = (int)r->attrs.i[1];
  om_scope s = {0};
  if (reduce == OM_SCATTER_PROD) {
    om_tensor *zero = om__keep(&s, om_scalar(0, OM_FLOAT32)), *one = om__keep(&s, om_scalar(1, OM_INT64));
    if (om__wants(r, 0)) {
      om_tensor *mx = zero ? fill_where(&s, om__keep(&s, om_eq(x, zero)), x, 1) : NULL;
      om_tensor *my = mx ? om__keep(&s, om_scatter_reduce(mx, dim, idx, src, OM_SCATTER_PROD)) : NULL;
      gin[0] = my ? om_div(om__keep(&s, om_mul(g[0], my)), mx) : NULL;
    }
    if (om__wants(r, 2)) {
      om_tensor *sz = zero ? om__keep(&s, om_eq(src, zero)) : NULL, *zx = om__keep(&s, om_zeros(x->shape, x->ndim, OM_INT64));
      om_tensor *nz = sz && zx ? om__keep(&s, om_gather(om__keep(&s, om_scatter_add(om__keep(&s, om_cast(zx, OM_FLOAT32)), dim, idx, om__keep(&s, om_cast(sz, OM_FLOAT32)))), dim, idx)) : NULL;
      om_tensor *single = nz && one ? om__keep(&s, om_logical_and(sz, om__keep(&s, om_eq(nz, one)))) : NULL;
      om_tensor *ms = single ? fill_where(&s, single, src, 1) : NULL;
      om_tensor *without = ms ? om__keep(&s, om_scatter_reduce(x, dim, idx, ms, OM_SCATTER_PROD)) : NULL;
      om_tensor *a = without ? om__keep(&s, om_gather(om__keep(&s, om_mul(g[0], without)), dim, idx)) : NULL;
      om_tensor *gy = a ? om__keep(&s, om_gather(om__keep(&s, om_mul(g[0], y)), dim, idx)) : NULL;
      om_tensor *b = gy ? om__keep(&s, om_div(gy, fill_where(&s, sz, src, 1))) : NULL;
      gin[2] = b ? om_where(single, a, b) : NULL;
    }
  } else {
    om_tensor *xhit = om__keep(&s, om_cast(om__keep(&s, om_eq(x, y)), OM_FLOAT32));
    om_tensor *shit = om__keep(&s, om_cast(om__keep(&s, om_eq(src, om__keep(&s, om_gather(y, dim, idx)))), OM_FLOAT32));
    om_tensor *count = xhit && shit ? om__keep(&s, om_scatter_add(xhit, dim, idx, shit)) : NULL;
    om_tensor *share = count ? om__keep(&s, om_div(g[0], count)) : NULL;
    if (share && om__wants(r, 0)) gin[0] = om_mul(share, xhit);
    if (share && om__wants(r, 2)) gin[2] = om_mul(om__keep(&s, om_gather(share, dim, idx)), shit);
  }
  om__scope_end(&s);
  return backward_done(r, gin);
}

const om_op_def om__op_scatter_reduce = {
    .name = "scatter_reduce", .n_in = 3, .n_out = 1, .saves = OM_SAVES_IN(0) | OM_SAVES_IN(1) | OM_SAVES_IN(2) | OM_SAVES_OUT(0),
    .infer = infer_scatter_reduce, .forward = forward_scatter_reduce, .backward = scatter_reduce_backward,
    .lower = lower_scatter, .onnx = "ScatterElements (reduction mul, max or min)",
    /* prod, whose backward has the most parts; amax and amin are checked in test_index.c */
    .test = {.n_in = 3, .ndims = {2, 2, 2}, .shapes = {{4, 5}, {6, 3}, {6, 3}}, .dtypes = {OM_FLOAT32, OM_INT64, OM_FLOAT32},
             .lo = 0, .hi = 3.99, .attrs = {.n_i = 2, .i = {0, OM_SCATTER_PROD}}}};

om_tensor *om_scatter_reduce(om_tensor *input, int dim, om_tensor *index, om_tensor *src, om_scatter_reduce_mode reduce) {
  if (reduce == OM_SCATTER_SUM) return om_scatter_add(input, dim, index, src);
  om_attrs a = om__attrs_i(2, (int64_t[]){dim, reduce});
  return om__apply1(OM_OP_scatter_reduce, (om_tensor *[]){input, index, src}, 3, &a);
}

/* ---- one_hot, tril_indices, triu_indices: composites and index constants ---- */

/* F.one_hot: eq(classes[..., None], arange(num_classes)) as int64. The classes are checked
 * where their values exist (not in a trace's shape-only runs): one outside [0, num_classes) is
 * IndexOutOfRange, as PyTorch raises; a traced graph gives such a class a row of zeros. */
om_tensor *om_one_hot(om_tensor *classes, int64_t num_classes) {
  if (!om__check_inputs("one_hot", &classes, 1)) return NULL;
  if (classes->dtype != OM_INT64)
    return om__fail(OM_ERR_DTYPE_MISMATCH, "one_hot: is only applicable to an index tensor (int64), not %s", om_dtype_name(classes->dtype)), NULL;
  if (num_classes < -1) return om__fail(OM_ERR_INVALID_ARGUMENT, "one_hot: num_classes %lld must be positive, or -1 (inferred)", (long long)num_classes), NULL;
  int64_t n = om_tensor_numel(classes);
  /* PyTorch refuses num_classes 0 of an empty tensor as it refuses -1 (its test is num_classes <= 0) */
  if (num_classes <= 0 && !n)
    return om__fail(OM_ERR_INVALID_ARGUMENT, "one_hot: can not infer the number of classes from an empty tensor (num_classes %lld)", (long long)num_classes), NULL;
  if (num_classes == -1 && !om__trace_check_read(classes, "one_hot")) return NULL; /* the size would come from the values */
  if (!(om__traced(classes) && om__trace_shadow())) {
    om_tensor *dense = om__dense(classes, "one_hot");
    if (!dense) return NULL;
    const int64_t *v = (const int64_t *)om__data(dense);
    int64_t most = -1;
    for (int64_t k = 0; k < n; k++) most = v[k] > most ? v[k] : most;
    for (int64_t k = 0; k < n; k++) {
      int64_t bound = num_classes == -1 ? most + 1 : num_classes;
      if (v[k] < 0 || v[k] >= bound) {
        om_tensor_release(dense);
        return om__fail(OM_ERR_INDEX_OUT_OF_RANGE, "one_hot: class %lld is out of range for %lld classes (valid: 0 to %lld)",
                        (long long)v[k], (long long)bound, (long long)bound - 1), NULL;
      }
    }
    om_tensor_release(dense);
    if (num_classes == -1) num_classes = most + 1;
  }
  om_tensor *u = om_unsqueeze(classes, classes->ndim), *ar = om_arange(0, (double)num_classes, 1, OM_INT64);
  om_tensor *eq = u && ar ? om_eq(u, ar) : NULL, *r = eq ? om_cast(eq, OM_INT64) : NULL;
  om__release_all((om_tensor *[]){u, ar, eq}, 3);
  return r;
}

/* The [2, n] row and column indices of a triangle, row by row: row i holds columns [lo, hi),
 * lo = 0 and hi = i + offset + 1 for the lower triangle, lo = i + offset and hi = col for the
 * upper, each clamped to [0, col]. A constant (om_from_data), as the sizes are numbers. */
static void tri_row(int64_t i, int64_t col, int64_t offset, bool upper, int64_t *lo, int64_t *hi) {
  *lo = upper ? i + offset : 0;
  *hi = upper ? col : i + offset + 1;
  *lo = *lo < 0 ? 0 : *lo > col ? col : *lo;
  *hi = *hi < *lo ? *lo : *hi > col ? col : *hi;
}

static om_tensor *tri_indices(int64_t row, int64_t col, int64_t offset, bool upper) {
  const char *who = upper ? "triu_indices" : "tril_indices";
  const int64_t most = (int64_t)1 << 31; /* sizes and offsets below this keep every sum in 64 bits */
  if (row < 0 || col < 0)
    return om__fail(OM_ERR_INVALID_ARGUMENT, "%s: row (%lld) and col (%lld) must be non-negative", who, (long long)row, (long long)col), NULL;
  if (row >= most || col >= most)
    return om__fail(OM_ERR_INVALID_ARGUMENT, "%s: row (%lld) and col (%lld) must be below 2^31", who, (long long)row, (long long)col), NULL;
  offset = offset < -most ? -most : offset > most ? most : offset; /* past the matrix either way: the same triangle */
  /* the rows that hold any: the lower triangle's from -offset - 1 on, the upper's below col - offset */
  int64_t first = upper || offset >= 0 ? 0 : -offset - 1, end = upper ? col - offset : row;
  first = col ? (first < row ? first : row) : row;
  end = end < first ? first : end > row ? row : end;
  int64_t n = 0, lo, hi;
  for (int64_t i = first; i < end && n <= 2 * most; i++) tri_row(i, col, offset, upper, &lo, &hi), n += hi - lo;
  if (n > 2 * most) /* 2^32 pairs are 64 GiB: stop counting there */
    return om__fail(OM_ERR_OUT_OF_MEMORY, "%s: %lld x %lld indices do not fit in memory", who, (long long)row, (long long)col), NULL;
  int64_t *v = om__alloc(sizeof(int64_t) * 2 * (uint64_t)(n ? n : 1), who);
  if (!v) return NULL;
  for (int64_t i = first, at = 0; i < end; i++) {
    tri_row(i, col, offset, upper, &lo, &hi);
    for (int64_t j = lo; j < hi; j++, at++) v[at] = i, v[n + at] = j;
  }
  om_tensor *r = om_from_data(v, (int64_t[]){2, n}, 2, OM_INT64);
  free(v);
  return r;
}

om_tensor *om_tril_indices(int64_t row, int64_t col, int64_t offset) { return tri_indices(row, col, offset, false); }
om_tensor *om_triu_indices(int64_t row, int64_t col, int64_t offset) { return tri_indices(row, col, offset, true); }
/* ---- index_put: input [d0 .. dn-1], indices int64 [B..., k] (k <= n: one index per leading
 * dim), values [B..., dk .. dn-1] of input's dtype -> input's shape ----
 * out = input; out[indices[b]] = values[b] for each position b in row-major order (so of repeated
 * positions the last stays, as PyTorch's CPU kernel), or += with accumulate (float32, int64; on
 * bool +=, as PyTorch's, is a logical or: true where any value written there is).
 * Indices lie in [-size, size), negative counting from the end as in PyTorch's indexing and
 * ONNX's ScatterND. The tuple of index tensors PyTorch's index_put takes is broadcast and stacked
 * into indices by om_index_put. */

/* The element offset (input's contiguous strides) of every position of indices, checked: n of
 * them, or NULL with IndexOutOfRange naming the index, its dim and the bound. */
static int64_t *put_offsets(const om_tensor *x, const om_tensor *idx, int64_t n) {
  int k = (int)idx->shape[idx->ndim - 1];
  int64_t *off = om__alloc(sizeof(int64_t) * (uint64_t)(n ? n : 1), "index_put");
  if (!off) return NULL;
  const int64_t *p = (const int64_t *)om__data(idx);
  for (int64_t b = 0; b < n; b++) {
    int64_t o = 0;
    for (int j = 0; j < k; j++) {
      int64_t v = p[offset_of(idx, b * k + j, 0, idx->ndim)], size = x->shape[j];
      if (v < -size || v >= size) {
        om__fail(OM_ERR_INDEX_OUT_OF_RANGE, "index_put: index %lld is out of range for dim %d of size %lld (valid: %lld to %lld)",
                 (long long)v, j, (long long)size, (long long)-size, (long long)size - 1);
        free(off);
        return NULL;
      }
      o = o * size + (v < 0 ? v + size : v);
    }
    off[b] = o;
  }
  return off;
}

static bool infer_index_put(om_call *c) {
  const om_tensor *x = c->in[0], *idx = c->in[1], *v = c->in[2];
  char xs[OM_SHAPE_STR_LEN], is[OM_SHAPE_STR_LEN], vs[OM_SHAPE_STR_LEN], want[OM_SHAPE_STR_LEN];
  if (c->attrs.n_i != 1 || (c->attrs.i[0] != 0 && c->attrs.i[0] != 1))
    return om__fail(OM_ERR_INVALID_ARGUMENT, "index_put: takes one attribute (accumulate: 0 or 1)");
  if (!check_index_dtype(idx, "index_put")) return false;
  if (v->dtype != x->dtype)
    return om__fail(OM_ERR_DTYPE_MISMATCH, "index_put: values are %s, input %s (they must match)", om_dtype_name(v->dtype),
                    om_dtype_name(x->dtype));
  int64_t k = idx->ndim ? idx->shape[idx->ndim - 1] : 0;
  if (k < 1 || k > x->ndim)
    return om__fail(OM_ERR_SHAPE_MISMATCH, "index_put: indices %s must be [..., k] with k from 1 to input %s's %d dims",
                    om__shape_str(is, sizeof is, idx->shape, idx->ndim), om__shape_str(xs, sizeof xs, x->shape, x->ndim), x->ndim);
  int nb = idx->ndim - 1, nd = nb + x->ndim - (int)k;
  if (nd > OM_MAX_DIMS)
    return om__fail(OM_ERR_INVALID_ARGUMENT, "index_put: values would have %d dims (at most %d)", nd, OM_MAX_DIMS);
  int64_t shape[OM_MAX_DIMS];
  memcpy(shape, idx->shape, sizeof(int64_t) * (size_t)nb);
  memcpy(shape + nb, x->shape + k, sizeof(int64_t) * (size_t)(x->ndim - k));
  if (v->ndim != nd || memcmp(v->shape, shape, sizeof(int64_t) * (size_t)nd))
    return om__fail(OM_ERR_SHAPE_MISMATCH, "index_put: values %s must be %s (the indices' batch shape, then input's dims after the %lld indexed)",
                    om__shape_str(vs, sizeof vs, v->shape, v->ndim), om__shape_str(want, sizeof want, shape, nd), (long long)k);
  set_meta(&c->out_meta[0], x->dtype, x->shape, x->ndim);
  return true;
}

static bool forward_index_put(om_call *c) {
  const om_tensor *x = c->in[0], *idx = c->in[1], *v = c->in[2];
  int k = (int)idx->shape[idx->ndim - 1];
  int64_t n = prod(idx->shape, 0, idx->ndim - 1), inner = prod(x->shape, k, x->ndim);
  int64_t *off = put_offsets(x, idx, n);
  int64_t *vo = off ? inner_offsets(v, idx->ndim - 1, inner, "index_put") : NULL;
  if (!vo) {
    free(off);
    return false;
  }
  copy_contiguous(x, c->out[0]);
  size_t es = om__dtype_size(x->dtype);
  char *o = om__data(c->out[0]);
  const char *s = om__data(v);
  bool acc = c->attrs.i[0];
  for (int64_t b = 0; b < n; b++) {
    int64_t base = offset_of(v, b, 0, idx->ndim - 1);
    for (int64_t i = 0; i < inner; i++) {
      char *to = o + (size_t)(off[b] * inner + i) * es;
      const char *from = s + (size_t)(base + vo[i]) * es;
      if (!acc) {
        memcpy(to, from, es);
      } else if (x->dtype == OM_FLOAT32) {
        *(float *)to += *(const float *)from;
      } else if (x->dtype == OM_BOOL) {
        *(unsigned char *)to = *(const unsigned char *)to || *(const unsigned char *)from;
      } else { /* int64 sums wrap, as PyTorch's (in unsigned arithmetic: no UB) */
        uint64_t sum = (uint64_t)*(const int64_t *)to + (uint64_t)*(const int64_t *)from;
        memcpy(to, &sum, es);
      }
    }
  }
  free(off);
  free(vo);
  return true;
}

/* g at the positions indices pick: g's first k dims flattened, index_select by the flat position
 * of each (so differentiable in g), reshaped to values' shape. New reference. */
static om_tensor *gather_put(om_tensor *g, const om_tensor *idx, const om_tensor *values) {
  int k = (int)idx->shape[idx->ndim - 1];
  int64_t n = prod(idx->shape, 0, idx->ndim - 1), flat[OM_MAX_DIMS + 1] = {prod(g->shape, 0, k)};
  memcpy(flat + 1, g->shape + k, sizeof(int64_t) * (size_t)(g->ndim - k));
  int64_t *off = put_offsets(g, idx, n);
  om_tensor *pos = off ? om_from_data(off, (int64_t[]){n}, 1, OM_INT64) : NULL;
  free(off);
  om_tensor *rows = pos ? om_reshape(g, flat, g->ndim - k + 1) : NULL;
  om_tensor *picked = rows ? om_index_select(rows, 0, pos) : NULL;
  om_tensor *r = picked ? om_reshape(picked, values->shape, values->ndim) : NULL;
  om__release_all((om_tensor *[]){pos, rows, picked}, 3);
  return r;
}

/* dinput = g, or g with the written places zeroed (an index_put of zeros); dvalues = g at the
 * places (every repeated position gets it, as in PyTorch). */
static bool index_put_backward(const om_record *r, om_tensor *const *g, om_tensor **gin) {
  const om_tensor *v = r->in[2];
  if (om__wants(r, 0)) {
    om_tensor *z = r->attrs.i[0] ? NULL : zeros_like(v);
    gin[0] = r->attrs.i[0] ? om_tensor_retain(g[0]) : z ? om__apply1(OM_OP_index_put, (om_tensor *[]){g[0], r->in[1], z}, 3, &r->attrs) : NULL;
    om_tensor_release(z);
  }
  if (om__wants(r, 2)) gin[2] = gather_put(g[0], r->in[1], v);
  return backward_done(r, gin);
}

/* ScatterND, reduction none, or add with accumulate. With duplicate positions ONNX leaves
 * reduction none undefined (eager writes the last; onnxruntime's CPU kernel and the Session write
 * in order too, so the last stays there as well: docs/operators.md). A bool accumulate (a logical
 * or) adds in int64 (Cast, ScatterND add, Cast back: a sum above 0 is true), so the graph holds
 * no add of bools, which engines need not read as an or. */
static bool lower_index_put(om_lower *l, const om_call *c) {
  const bool acc = c->attrs.i[0];
  if (!acc || c->in[0]->dtype != OM_BOOL) return om__lower_node(l, c, "ScatterND", &OM_ATTR_STRING("reduction", acc ? "add" : "none"), 1);
  om_meta xm = c->out_meta[0], vm = {.dtype = OM_INT64, .ndim = c->in[2]->ndim};
  xm.dtype = OM_INT64;
  memcpy(vm.shape, c->in[2]->shape, sizeof(int64_t) * (size_t)vm.ndim);
  int x = om__lower_cast(l, om__lower_input(l, 0), &xm, OM_INT64), v = om__lower_cast(l, om__lower_input(l, 2), &vm, OM_INT64);
  int idx = om__lower_input(l, 1), sum, y;
  if (x < 0 || v < 0 || idx < 0 || !om__emit(l, "ScatterND", (int[]){x, idx, v}, 3, &xm, 1, &sum, &OM_ATTR_STRING("reduction", "add"), 1) ||
      (y = om__lower_cast(l, sum, &xm, OM_BOOL)) < 0)
    return false;
  om__lower_output(l, 0, y);
  return true;
}

const om_op_def om__op_index_put = {
    .name = "index_put", .n_in = 3, .n_out = 1, .saves = OM_SAVES_IN(1),
    .infer = infer_index_put, .forward = forward_index_put, .backward = index_put_backward,
    .lower = lower_index_put, .onnx = "ScatterND (reduction none, or add with accumulate; bool accumulate: Cast to int64, ScatterND add, Cast back)",
    /* accumulate: the sample's repeated indices then each get their gradient */
    .test = {.n_in = 3, .ndims = {3, 2, 3}, .shapes = {{4, 3, 2}, {5, 1}, {5, 3, 2}}, .dtypes = {OM_FLOAT32, OM_INT64, OM_FLOAT32},
             .lo = 0, .hi = 3.99, .attrs = {.n_i = 1, .i = {1}}, .empty_refusal = "is out of range for dim 0 of size 0"}};

/* The n index tensors broadcast to one shape B and stacked on a new last dim, values broadcast
 * to B + input's dims after the n indexed. */
om_tensor *om_index_put(om_tensor *input, om_tensor *const *indices, int n, om_tensor *values, bool accumulate) {
  if (!om__check_inputs("index_put", &input, 1) || !om__check_inputs("index_put", &values, 1)) return NULL;
  if (n < 1 || !indices || n > input->ndim)
    return om__fail(OM_ERR_INVALID_ARGUMENT, "index_put: %d index tensors for an input of %d dims (1 to %d)", n, input->ndim,
                    input->ndim), NULL;
  if (!om__check_inputs("index_put", indices, n)) return NULL;
  for (int j = 0; j < n; j++)
    if (indices[j]->dtype != OM_INT64)
      return om__fail(OM_ERR_DTYPE_MISMATCH, "index_put: index %d is %s; indices must be int64 (for a bool mask use masked_fill "
                      "or masked_scatter)", j, om_dtype_name(indices[j]->dtype)), NULL;
  om_meta b;
  if (!om__broadcast_shapes(indices, n, &b, "index_put")) return NULL;
  int nd = b.ndim + input->ndim - n;
  if (nd > OM_MAX_DIMS) return om__fail(OM_ERR_INVALID_ARGUMENT, "index_put: values would have %d dims (at most %d)", nd, OM_MAX_DIMS), NULL;
  om_scope s = {0};
  om_tensor *each[OM_MAX_DIMS];
  for (int j = 0; j < n; j++) {
    bool same = indices[j]->ndim == b.ndim && !memcmp(indices[j]->shape, b.shape, sizeof(int64_t) * (size_t)b.ndim);
    each[j] = same ? indices[j] : om__keep(&s, om_expand(indices[j], b.shape, b.ndim));
  }
  int64_t vshape[OM_MAX_DIMS];
  memcpy(vshape, b.shape, sizeof(int64_t) * (size_t)b.ndim);
  memcpy(vshape + b.ndim, input->shape + n, sizeof(int64_t) * (size_t)(input->ndim - n));
  bool ok = true;
  for (int j = 0; j < n; j++) ok = ok && each[j];
  om_tensor *idx = ok ? om__keep(&s, om_stack(each, n, b.ndim)) : NULL;
  bool vsame = values->ndim == nd && !memcmp(values->shape, vshape, sizeof(int64_t) * (size_t)nd);
  om_tensor *v = !idx ? NULL : vsame ? values : om__keep(&s, om_expand(values, vshape, nd));
  om_attrs a = om__attrs_i(1, (int64_t[]){accumulate});
  om_tensor *r = v ? om__apply1(OM_OP_index_put, (om_tensor *[]){input, idx, v}, 3, &a) : NULL;
  om__scope_end(&s);
  return r;
}

/* ---- nonzero: the indices of the true elements (a size the values decide) ---- */

/* x [d0, ..., dn-1] (any dtype: nonzero, NaN too, is true) -> int64 [count, n], the index
 * tuples of the true elements in row-major order, as torch.nonzero (a 0-d x gives [count, 0]).
 * count is known only from x's values: infer reads them. A traced x is refused there, before
 * anything reads a phantom's (absent) values: a graph that took this run's count as a size
 * would be wrong for every input with another count (docs/operators.md, nonzero). */
static int64_t nonzero_count(const om_tensor *dense) {
  int64_t n = om_tensor_numel(dense), count = 0;
  const char *p = om__data(dense);
  switch (dense->dtype) {
  case OM_FLOAT32: for (int64_t k = 0; k < n; k++) count += ((const float *)p)[k] != 0; break;
  case OM_FLOAT64: for (int64_t k = 0; k < n; k++) count += ((const double *)p)[k] != 0; break;
  case OM_INT64: for (int64_t k = 0; k < n; k++) count += ((const int64_t *)p)[k] != 0; break;
  default: for (int64_t k = 0; k < n; k++) count += ((const uint8_t *)p)[k] != 0; break;
  }
  return count;
}

static bool element_true(const om_tensor *dense, int64_t k) {
  const char *p = om__data(dense);
  switch (dense->dtype) {
  case OM_FLOAT32: return ((const float *)p)[k] != 0;
  case OM_FLOAT64: return ((const double *)p)[k] != 0;
  case OM_INT64: return ((const int64_t *)p)[k] != 0;
  default: return ((const uint8_t *)p)[k] != 0;
  }
}

static bool infer_nonzero(om_call *c) {
  om_tensor *x = c->in[0];
  if (om__traced(x))
    return om__trace_fail(OM_ERR_TRACE_DATA_DEPENDENT,
                          "nonzero: cannot be traced: the number of true elements, its result's first size, is decided by the "
                          "input's values (ONNX NonZero's data-dependent size, which the tracer does not express: a graph "
                          "that kept this run's count would be wrong for inputs with another count); argwhere, where(condition) "
                          "alone, a masked select and x[mask] count them too. Keep it outside the traced function, or use a fixed-size "
                          "form: where(mask, x, other), masked_fill, or a sum of the mask");
  if (x->storage->planned)
    return om__fail(OM_ERR_INVALID_ARGUMENT, "nonzero: its result's size needs the input's values, which a plan does not have");
  om_tensor *d = om__dense(x, "nonzero");
  if (!d) return false;
  int64_t count = nonzero_count(d);
  om_tensor_release(d);
  c->out_meta[0] = (om_meta){.dtype = OM_INT64, .ndim = 2, .shape = {count, x->ndim}};
  return true;
}

static bool forward_nonzero(om_call *c) {
  om_tensor *x = c->in[0], *d = om__dense(x, "nonzero");
  if (!d) return false;
  int nd = x->ndim;
  int64_t n = om_tensor_numel(d), idx[OM_MAX_DIMS] = {0}, *out = (int64_t *)om__data(c->out[0]), row = 0;
  for (int64_t k = 0; k < n; k++) {
    if (element_true(d, k)) memcpy(out + row++ * nd, idx, sizeof(int64_t) * (size_t)nd);
    for (int a = nd - 1; a >= 0 && ++idx[a] == x->shape[a]; a--) idx[a] = 0; /* the next index, row-major */
  }
  om_tensor_release(d);
  return true;
}

/* Not reached (infer refuses a traced input): the table's lowering cell says why. */
static bool lower_nonzero(om_lower *l, const om_call *c) {
  return om__lower_refuse(l, c, "its result's size is decided by the input's values");
}

const om_op_def om__op_nonzero = {
    .name = "nonzero", .n_in = 1, .n_out = 1, .takes_float64 = true, .infer = infer_nonzero, .forward = forward_nonzero, .lower = lower_nonzero,
    .onnx = "refused (DataDependent): the count of true elements, the result's first size, is decided by the values; a "
            "graph that kept the example's count would be wrong for other inputs",
    .test = {.n_in = 1, .ndims = {3}, .shapes = {{2, 3, 4}}, .dtypes = {OM_INT64}, .lo = -1, .hi = 1.99, .no_gradcheck = true}};

om_tensor *om_nonzero(om_tensor *input) { return om__apply1(OM_OP_nonzero, &input, 1, NULL); }
