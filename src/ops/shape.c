/* Shape ops. Views (reshape, permute, expand, slice, select, squeeze, unsqueeze) share the
 * input's storage: their forward only sets strides and offset. Copies and assembly (clone,
 * cat, tril/triu, slice_scatter) write fresh storage. Composites (transpose, contiguous,
 * stack, split, reshape-with-copy) are written with these ops at the end of the file. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static void meta_from(om_meta *m, om_dtype dtype, const int64_t *shape, int ndim) {
  m->dtype = dtype;
  m->ndim = ndim;
  if (shape && ndim) memcpy(m->shape, shape, sizeof(int64_t) * (size_t)ndim);
}

static bool fail_shape(const char *who, const char *what, const om_tensor *a, const int64_t *shape, int ndim) {
  char x[OM_SHAPE_STR_LEN], y[OM_SHAPE_STR_LEN];
  return om__fail(OM_ERR_SHAPE_MISMATCH, "%s: %s %s to %s", who, what, om__shape_str(x, sizeof x, a->shape, a->ndim),
                  om__shape_str(y, sizeof y, shape, ndim));
}

/* ---- ONNX lowering: the shape ops' common form ---- */

/* n int64 values for a node operand (n == -1: one value as a 0-d tensor). */
typedef struct ints {
  const int64_t *v;
  int n;
} ints;

/* Emits op_type reading the values vals[0..n_vals) and then one int64 constant per k[0..n_k)
 * (shape, axes, starts, index operands; 8 operands at most), writing one value typed by meta:
 * its id, or -1 on error (a failed step before it, passed in vals as -1, included). */
static int emit_ints(om_lower *l, const char *op_type, const int *vals, int n_vals, const ints *k, int n_k,
                     const om_meta *meta, const om_gattr *attrs, int n_attrs) {
  int in[8], out;
  for (int i = 0; i < n_vals; i++)
    if ((in[i] = vals[i]) < 0) return -1;
  for (int i = 0; i < n_k; i++)
    if ((in[n_vals + i] = om__lower_ints(l, k[i].v, k[i].n)) < 0) return -1;
  return om__emit(l, op_type, in, n_vals + n_k, meta, 1, &out, attrs, n_attrs) ? out : -1;
}

/* op_type(input 0, constants k...) as the call's output 0. */
static bool lower_ints(om_lower *l, const om_call *c, const char *op_type, const ints *k, int n_k,
                       const om_gattr *attrs, int n_attrs) {
  int in = om__lower_input(l, 0);
  int out = emit_ints(l, op_type, &in, 1, k, n_k, &c->out_meta[0], attrs, n_attrs);
  if (out < 0) return false;
  om__lower_output(l, 0, out);
  return true;
}

/* op_type(input 0, operand) as the call's output 0, with one attribute or none. */
static bool lower_operand_attr(om_lower *l, const om_call *c, const char *op_type, int operand, const om_gattr *attr) {
  int in[2] = {om__lower_input(l, 0), operand}, out;
  if (operand < 0 || !om__emit(l, op_type, in, 2, &c->out_meta[0], 1, &out, attr, attr != NULL)) return false;
  om__lower_output(l, 0, out);
  return true;
}

static bool lower_operand(om_lower *l, const om_call *c, const char *op_type, int operand) {
  return lower_operand_attr(l, c, op_type, operand, NULL);
}

/* Zeros of meta's dtype and shape: ConstantOfShape (float32), then Cast for int64 and bool
 * (ONNX's INT64 is 7, BOOL 9). The shape operand is the constant, or where ext[d] is an extent,
 * that extent computed at run time (ext NULL: all fixed). Its value id, -1 on error. */
static int zeros_of(om_lower *l, const om_meta *meta, const int *ext) {
  om_meta f = *meta;
  f.dtype = OM_FLOAT32;
  int none[OM_MAX_DIMS];
  for (int d = 0; d < OM_MAX_DIMS; d++) none[d] = -1;
  int shape = om__lower_shape_operand(l, meta->shape, ext ? ext : none, meta->ndim), v;
  if (shape < 0 || !om__emit(l, "ConstantOfShape", &shape, 1, &f, 1, &v, NULL, 0)) return -1;
  if (meta->dtype != OM_FLOAT32)
    v = emit_ints(l, "Cast", &v, 1, NULL, 0, meta, &OM_ATTR_INT("to", meta->dtype == OM_INT64 ? 7 : 9), 1);
  return v;
}

int om__lower_empty(om_lower *l, const om_call *c) {
  for (int j = 0; j < c->n_out; j++) {
    bool empty = false;
    for (int d = 0; d < c->out_meta[j].ndim; d++) empty |= c->out_meta[j].shape[d] == 0;
    if (!empty) return 0;
  }
  for (int j = 0; j < c->n_out; j++) {
    int ext[OM_MAX_DIMS];
    for (int d = 0; d < c->out_meta[j].ndim; d++) ext[d] = om__lower_out_ext(l, j, d);
    int v = zeros_of(l, &c->out_meta[j], ext);
    if (v < 0) return -1;
    om__lower_output(l, j, v);
  }
  return 1;
}

/* ---- reshape (view) ---- */

/* Strides that view a's elements in the new shape, when a's strides allow it (PyTorch's rule:
 * every run of input dims that merges into output dims must be contiguous within itself). */
static bool view_strides(const om_tensor *a, const int64_t *shape, int ndim, int64_t *strides) {
  if (a->ndim == 0 || om_tensor_numel(a) == 0) {
    om__contiguous_strides(shape, ndim, strides);
    return true;
  }
  int vd = ndim - 1;
  int64_t base = a->strides[a->ndim - 1], have = 1, made = 1;
  for (int d = a->ndim - 1; d >= 0; d--) {
    have *= a->shape[d];
    /* the end of a chunk of input dims that step through memory as one */
    if (d == 0 || (a->shape[d - 1] != 1 && a->strides[d - 1] != have * base)) {
      while (vd >= 0 && (made < have || shape[vd] == 1)) {
        strides[vd] = made * base;
        made *= shape[vd];
        vd--;
      }
      if (made != have) return false;
      if (d > 0) {
        base = a->strides[d - 1];
        have = made = 1;
      }
    }
  }
  return vd == -1;
}

static bool resolve_shape(const om_tensor *a, int64_t *shape, int ndim, const char *who) {
  int infer = -1;
  int64_t known = 1;
  for (int d = 0; d < ndim; d++) {
    if (shape[d] == -1 && infer < 0) {
      infer = d;
    } else if (shape[d] < 0 || (shape[d] && known > INT64_MAX / shape[d])) {
      return fail_shape(who, "cannot reshape", a, shape, ndim);
    } else {
      known *= shape[d];
    }
  }
  int64_t n = om_tensor_numel(a);
  if (infer >= 0) {
    if (known == 0 || n % known) return fail_shape(who, "cannot reshape", a, shape, ndim);
    shape[infer] = n / known;
  } else if (known != n) {
    return fail_shape(who, "element counts differ, cannot reshape", a, shape, ndim);
  }
  return true;
}

static bool infer_reshape(om_call *c) {
  om_tensor *a = c->in[0];
  int nd = c->attrs.n_i;
  int64_t strides[OM_MAX_DIMS];
  if (nd > OM_MAX_DIMS) return om__fail(OM_ERR_INVALID_ARGUMENT, "reshape: %d dims (at most %d)", nd, OM_MAX_DIMS);
  if (!resolve_shape(a, c->attrs.i, nd, "reshape")) return false;
  if (!view_strides(a, c->attrs.i, nd, strides))
    return fail_shape("reshape", "strides do not allow a view from", a, c->attrs.i, nd);
  meta_from(&c->out_meta[0], a->dtype, c->attrs.i, nd);
  return true;
}

static bool forward_reshape(om_call *c) {
  view_strides(c->in[0], c->attrs.i, c->attrs.n_i, c->out[0]->strides);
  return true;
}

static bool reshape_backward(const om_record *r, om_tensor *const *g, om_tensor **gin) {
  return (gin[0] = om_reshape(g[0], r->in[0]->shape, r->in[0]->ndim)) != NULL;
}

/* The product of input i's extents (the element count as an expression). -1 on error. */
static int numel_x(om_lower *l, const om_tensor *a) {
  int x = om__lower_x_const(l, 1);
  for (int d = 0; d < a->ndim && x >= 0; d++) x = om__lower_x_mul(l, x, om__lower_in_x(l, 0, d));
  return x;
}

/* An output axis of a reshape is the size the caller gave (an expression when it was computed
 * from sizes: x.reshape(B * T, C)); the one given as -1 is the element count divided by the
 * others'. */
static bool reshape_extents(om_lower *l, const om_call *c) {
  const om_attrs *g = om__lower_given(l);
  for (int k = 0; k < g->n_i; k++) {
    if (g->i[k] != -1) {
      om__lower_candidate(l, 0, k, om__lower_arg(l, k));
      continue;
    }
    int rest = om__lower_x_const(l, 1);
    for (int j = 0; j < g->n_i && rest >= 0; j++)
      if (j != k) rest = om__lower_x_mul(l, rest, om__lower_arg(l, j));
    int n = numel_x(l, c->in[0]);
    if (n < 0 || rest < 0) return false;
    int x = om__lower_x_divexact(l, n, rest);
    if (x >= 0) om__lower_candidate(l, 0, k, x);
  }
  return true;
}

/* A reshape whose symbolic output axes, all but one, the input has in the same order at other
 * indices, written without computing a size: axes of 1 go into the input (Unsqueeze) and into
 * the output so that each such pair of axes sits at one index, where the shape operand's 0
 * copies the input's extent; the one symbolic axis left is -1; then the output's axes of 1 go
 * (Squeeze). So a channel shuffle's [B, C, H, W] -> [B, g, C / g, H, W] is Unsqueeze to [B, C, 1,
 * H, W] and Reshape by [0, g, C / g, 0, 0], and its [B, C / g, g, H, W] -> [B, C, H, W] is Reshape
 * by [0, C, 1, 0, 0] and Squeeze. Only where no output axis can be 0 (allowzero makes 0 a size).
 * The output's value, -2 when the form does not apply, -1 on error. */
static int aligned_reshape(om_lower *l, const om_call *c) {
  const om_tensor *a = c->in[0];
  const om_meta *o = &c->out_meta[0];
  int pair[OM_MAX_DIMS + 1], loose = 0; /* pair[d]: the input axis output axis d copies, -1 none */
  for (int d = 0, i = 0; d < o->ndim; d++) {
    int x = om__lower_out_ext(l, 0, d), k = i;
    pair[d] = -1;
    if (x < 0) continue;
    while (k < a->ndim && om__lower_in_ext(l, 0, k) != x) k++;
    if (k == a->ndim && loose++) return -2;
    if (k < a->ndim) pair[d] = k, i = k + 1;
  }
  pair[o->ndim] = a->ndim; /* the axes after the last pair */
  int64_t shape[OM_MAX_DIMS], unsq[OM_MAX_DIMS], sq[OM_MAX_DIMS];
  om_meta wide_in = {.dtype = a->dtype}, wide = {.dtype = o->dtype};
  int rank = 0, n_unsq = 0, n_sq = 0;
  for (int d = 0, prev_i = -1, prev_d = -1; d <= o->ndim; d++) {
    if (pair[d] < 0) continue;
    int gi = pair[d] - prev_i - 1, go = d - prev_d - 1, gap = gi > go ? gi : go;
    if (rank + gap + (d < o->ndim) > OM_MAX_DIMS) return -2;
    for (int t = 0; t < gap; t++, rank++) {
      wide_in.shape[rank] = t < gi ? a->shape[prev_i + 1 + t] : 1;
      if (t >= gi) unsq[n_unsq++] = rank;
      wide.shape[rank] = t < go ? o->shape[prev_d + 1 + t] : 1;
      shape[rank] = t < go ? (om__lower_out_ext(l, 0, prev_d + 1 + t) < 0 ? o->shape[prev_d + 1 + t] : -1) : 1;
      if (t >= go) sq[n_sq++] = rank;
    }
    if (d < o->ndim) {
      wide_in.shape[rank] = a->shape[pair[d]];
      wide.shape[rank] = o->shape[d];
      shape[rank++] = 0;
    }
    prev_i = pair[d], prev_d = d;
  }
  if (!n_unsq && !n_sq) return -2; /* the pairs share their indices already: lower_reshape's form */
  wide_in.ndim = wide.ndim = rank;
  int v = om__lower_input(l, 0);
  if (n_unsq) v = emit_ints(l, "Unsqueeze", &v, 1, &(ints){unsq, n_unsq}, 1, &wide_in, NULL, 0);
  v = emit_ints(l, "Reshape", &v, 1, &(ints){shape, rank}, 1, n_sq ? &wide : o, NULL, 0);
  if (n_sq) v = emit_ints(l, "Squeeze", &v, 1, &(ints){sq, n_sq}, 1, o, NULL, 0);
  return v;
}

/* The shape operand: fixed axes as numbers; a lone symbolic axis is -1; of several, one whose
 * extent is the input axis's of the same index is 0 (ONNX copies the input's run-time extent
 * there), one other is -1, and any further one is computed (om__lower_x_value: Shape nodes
 * shared by the whole graph), unless aligned_reshape writes it without. So [B, S, h*d] -> [B, S,
 * h, d] is [0, 0, h, d], and a model with one symbolic axis has no Shape node. An axis of size 0
 * needs allowzero, where 0 is a size, not a copy, and then -1 has nothing to divide by: with a
 * fixed 0, or a symbolic axis that can be 0 at some size (x[:, 2:] of a T from 2), every
 * symbolic axis is computed. */
static bool lower_reshape(om_lower *l, const om_call *c) {
  const om_tensor *a = c->in[0];
  const om_meta *o = &c->out_meta[0];
  bool same = o->ndim == a->ndim && !memcmp(o->shape, a->shape, sizeof(int64_t) * (size_t)a->ndim);
  for (int d = 0; same && d < o->ndim; d++) same = om__lower_out_ext(l, 0, d) == om__lower_in_ext(l, 0, d);
  if (same) return om__lower_alias(l);
  int64_t shape[OM_MAX_DIMS];
  int ext[OM_MAX_DIMS];
  bool zero = false, minus = false;
  int n_sym = 0;
  for (int d = 0; d < o->ndim; d++) {
    zero |= o->shape[d] == 0 || om__lower_may_be_0(l, om__lower_out_ext(l, 0, d));
    n_sym += om__lower_out_ext(l, 0, d) >= 0;
  }
  for (int d = 0; d < o->ndim; d++) {
    int x = om__lower_out_ext(l, 0, d);
    shape[d] = o->shape[d];
    ext[d] = -1;
    if (x < 0) continue;
    if (!zero && n_sym > 1 && d < a->ndim && om__lower_in_ext(l, 0, d) == x) shape[d] = 0;
    else if (!zero && !minus) shape[d] = -1, minus = true;
    else ext[d] = x;
  }
  /* Where every symbolic axis copies (no -1 taken) and the caller wrote -1 at one of them, that
   * axis keeps the caller's -1: it holds wherever the copy does and also at sizes where the axis
   * stops being the input's extent (SegFormer's kv.reshape(B, C, -1) of [B, C, h, w] is h where
   * w is 1 and h * w where it grows), so the graph is one form on both sides, not two cut by an If. */
  const om_attrs *g = om__lower_given(l);
  for (int d = 0; !zero && !minus && g && g->n_i == o->ndim && d < o->ndim; d++)
    if (g->i[d] == -1 && shape[d] == 0) shape[d] = -1, minus = true;
  for (int d = 0; !zero && d < o->ndim; d++)
    if (ext[d] >= 0) {
      int out = aligned_reshape(l, c);
      if (out == -1) return false;
      if (out >= 0) return om__lower_output(l, 0, out), true;
      break;
    }
  int operand = om__lower_shape_operand(l, shape, ext, o->ndim);
  int in[2] = {om__lower_input(l, 0), operand}, out;
  if (operand < 0 || !om__emit(l, "Reshape", in, 2, o, 1, &out, &OM_ATTR_INT("allowzero", 1), zero)) return false;
  om__lower_output(l, 0, out);
  return true;
}

const om_op_def om__op_reshape = {
    .name = "reshape", .takes_float64 = true, .n_in = 1, .n_out = 1, .view = true, .infer = infer_reshape,
    .forward = forward_reshape, .backward = reshape_backward, .lower = lower_reshape, .extents = reshape_extents,
    .sym_args = ~(uint64_t)0, .onnx = "Reshape (none to the same shape)",
    .test = {.n_in = 1, .ndims = {1}, .shapes = {{12}}, .lo = -2, .hi = 2, .attrs = {.n_i = 3, .i = {3, -1, 2}}}};

/* ---- permute ---- */

static bool infer_permute(om_call *c) {
  om_tensor *a = c->in[0];
  bool seen[OM_MAX_DIMS] = {0};
  if (c->attrs.n_i != a->ndim)
    return om__fail(OM_ERR_INVALID_ARGUMENT, "permute: %d dims given for a tensor of %d dims", c->attrs.n_i, a->ndim);
  om_meta *m = &c->out_meta[0];
  meta_from(m, a->dtype, NULL, a->ndim);
  for (int d = 0; d < a->ndim; d++) {
    int p = om__wrap_dim(c->attrs.i[d], a->ndim, "permute");
    if (p < 0) return false;
    if (seen[p]) return om__fail(OM_ERR_INVALID_ARGUMENT, "permute: dim %d appears twice", p);
    seen[p] = true;
    c->attrs.i[d] = p;
    m->shape[d] = a->shape[p];
  }
  return true;
}

static bool forward_permute(om_call *c) {
  for (int d = 0; d < c->in[0]->ndim; d++) c->out[0]->strides[d] = c->in[0]->strides[c->attrs.i[d]];
  return true;
}

static bool permute_backward(const om_record *r, om_tensor *const *g, om_tensor **gin) {
  int64_t inv[OM_MAX_DIMS];
  for (int d = 0; d < r->attrs.n_i; d++) inv[r->attrs.i[d]] = d;
  return (gin[0] = om_permute(g[0], inv, r->attrs.n_i)) != NULL;
}

static bool lower_permute(om_lower *l, const om_call *c) {
  bool identity = true;
  for (int d = 0; d < c->attrs.n_i; d++) identity &= c->attrs.i[d] == d;
  if (identity) return om__lower_alias(l);
  return om__lower_node(l, c, "Transpose", &OM_ATTR_INTS("perm", c->attrs.i, c->attrs.n_i), 1);
}

const om_op_def om__op_permute = {
    .name = "permute", .takes_float64 = true, .n_in = 1, .n_out = 1, .view = true, .infer = infer_permute,
    .forward = forward_permute, .backward = permute_backward, .lower = lower_permute,
    .onnx = "Transpose (none for the identity)",
    .test = {.n_in = 1, .ndims = {3}, .shapes = {{2, 3, 4}}, .lo = -2, .hi = 2, .attrs = {.n_i = 3, .i = {2, 0, 1}}}};

/* ---- expand ---- */

static bool infer_expand(om_call *c) {
  om_tensor *a = c->in[0];
  int nd = c->attrs.n_i, lead = nd - a->ndim;
  if (nd > OM_MAX_DIMS || lead < 0) return fail_shape("expand", "cannot expand", a, c->attrs.i, nd < 0 ? 0 : nd);
  for (int d = 0; d < nd; d++) {
    int64_t want = c->attrs.i[d], have = d >= lead ? a->shape[d - lead] : 1;
    if (want == -1 && d >= lead) want = have;
    if (want < 0 || (have != 1 && have != want)) return fail_shape("expand", "cannot expand", a, c->attrs.i, nd);
    c->attrs.i[d] = want;
  }
  meta_from(&c->out_meta[0], a->dtype, c->attrs.i, nd);
  return true;
}

static bool forward_expand(om_call *c) {
  om_tensor *a = c->in[0], *o = c->out[0];
  int lead = o->ndim - a->ndim;
  for (int d = 0; d < o->ndim; d++)
    o->strides[d] = d < lead || (a->shape[d - lead] == 1 && o->shape[d] != 1) ? 0 : a->strides[d - lead];
  return true;
}

static bool expand_backward(const om_record *r, om_tensor *const *g, om_tensor **gin) {
  return (gin[0] = om__sum_to(g[0], r->in[0]->shape, r->in[0]->ndim)) != NULL;
}

/* An expanded axis is the size the caller gave (an expression when computed from sizes:
 * h.expand(B, 2 * T, C)), or the input axis's extent where it gave -1. */
static bool expand_extents(om_lower *l, const om_call *c) {
  const om_attrs *g = om__lower_given(l);
  int lead = c->out_meta[0].ndim - c->in[0]->ndim;
  for (int d = 0; d < g->n_i; d++)
    om__lower_candidate(l, 0, d, g->i[d] == -1 && d >= lead ? om__lower_in_ext(l, 0, d - lead) : om__lower_arg(l, d));
  return true;
}

/* Expand to the output shape, with 1 where a symbolic axis keeps the input's extent (ONNX
 * broadcasting keeps the input's run-time extent there) and a computed extent where a broadcast
 * axis takes a symbolic one (Shape nodes shared by the graph, then a Concat with the constants). */
static bool lower_expand(om_lower *l, const om_call *c) {
  const om_tensor *a = c->in[0];
  const om_meta *o = &c->out_meta[0];
  int lead = o->ndim - a->ndim;
  bool same = o->ndim == a->ndim && !memcmp(o->shape, a->shape, sizeof(int64_t) * (size_t)a->ndim);
  for (int d = 0; same && d < o->ndim; d++) same = om__lower_out_ext(l, 0, d) == om__lower_in_ext(l, 0, d);
  if (same) return om__lower_alias(l);
  int64_t shape[OM_MAX_DIMS];
  int ext[OM_MAX_DIMS];
  for (int d = 0; d < o->ndim; d++) {
    int x = om__lower_out_ext(l, 0, d);
    bool kept = d >= lead && x >= 0 && om__lower_in_ext(l, 0, d - lead) == x;
    shape[d] = kept ? 1 : o->shape[d];
    ext[d] = kept ? -1 : x;
  }
  return lower_operand(l, c, "Expand", om__lower_shape_operand(l, shape, ext, o->ndim));
}

const om_op_def om__op_expand = {
    .name = "expand", .takes_float64 = true, .n_in = 1, .n_out = 1, .view = true, .infer = infer_expand,
    .forward = forward_expand, .backward = expand_backward, .lower = lower_expand, .extents = expand_extents,
    .sym_args = ~(uint64_t)0, .onnx = "Expand (none to the same shape)",
    .test = {.n_in = 1, .ndims = {2}, .shapes = {{3, 1}}, .lo = -2, .hi = 2, .attrs = {.n_i = 3, .i = {2, 3, 4}}, .size_attrs = 7}};

/* ---- slice ---- */

/* Canonicalises [dim, start, end, step] in place (Python bounds, clamped); false on error. */
static bool slice_bounds(int64_t *at, const int64_t *shape, int ndim, const char *who, int64_t *len) {
  int dim = om__wrap_dim(at[0], ndim, who);
  if (dim < 0) return false;
  if (ndim == 0) return om__fail(OM_ERR_INVALID_ARGUMENT, "%s: a 0-d tensor cannot be sliced", who);
  if (at[3] < 1) return om__fail(OM_ERR_INVALID_ARGUMENT, "%s: step %lld must be positive", who, (long long)at[3]);
  int64_t size = shape[dim], start = at[1], end = at[2];
  if (start < 0) start += size;
  if (end < 0) end += size;
  start = start < 0 ? 0 : start > size ? size : start;
  end = end < start ? start : end > size ? size : end;
  *len = end > start ? (end - start - 1) / at[3] + 1 : 0;
  if (*len <= 1) at[3] = 1; /* the step of at most one element is irrelevant; 1 keeps strides small */
  at[0] = dim;
  at[1] = start;
  at[2] = start + (*len ? (*len - 1) * at[3] + 1 : 0); /* tight: [start, end, step) names exactly len elements */
  return true;
}

static bool infer_slice(om_call *c) {
  om_tensor *a = c->in[0];
  int64_t len;
  if (c->attrs.n_i != 4) return om__fail(OM_ERR_INVALID_ARGUMENT, "slice: needs dim, start, end, step");
  if (!slice_bounds(c->attrs.i, a->shape, a->ndim, "slice", &len)) return false;
  meta_from(&c->out_meta[0], a->dtype, a->shape, a->ndim);
  c->out_meta[0].shape[c->attrs.i[0]] = len;
  return true;
}

static bool forward_slice(om_call *c) {
  om_tensor *a = c->in[0], *o = c->out[0];
  int dim = (int)c->attrs.i[0];
  o->strides[dim] *= c->attrs.i[3];
  o->offset += c->attrs.i[1] * a->strides[dim];
  return true;
}

/* The gradient of a slice: g scattered into zeros of the input's shape. */
static om_tensor *scatter_back(om_tensor *g, const om_tensor *in, const int64_t *bounds) {
  om_attrs at = {.n_i = 5 + in->ndim, .i = {bounds[0], bounds[1], bounds[2], bounds[3], in->ndim}};
  memcpy(at.i + 5, in->shape, sizeof(int64_t) * (size_t)in->ndim);
  return om__apply1(OM_OP_slice_scatter, &g, 1, &at);
}

static bool slice_backward(const om_record *r, om_tensor *const *g, om_tensor **gin) {
  return (gin[0] = scatter_back(g[0], r->in[0], r->attrs.i)) != NULL;
}

/* A bound as the caller gave it (a negative one counts from the end, an open end is
 * INT64_MAX) as an expression of the axis's extent len: where it points. */
static int bound_x(om_lower *l, int k, int len) {
  int64_t v0 = om__lower_given(l)->i[k];
  if (v0 >= INT64_MAX / 2) return len;
  return v0 < 0 ? om__lower_x_lin(l, 1, om__lower_arg(l, k), 1, len, 0) : om__lower_arg(l, k);
}

/* The sliced axis: ceil((end - start) / step) of the bounds as given (x[:, 1:T - 1], x[:, -3:]),
 * also with the end clamped to the axis (x[:, :100] of a shorter one) or the start to 0, and
 * with the end clamped at some sizes only: a split's piece [40, 80) of a flat B * 20, the rest
 * at B = 3 and whole from B = 4, is min(len - 40, 40); and as eager clamps, at every size:
 * max(ceil((min(end, len) - max(start, 0)) / step), 0), so x[-3:] of a batch is min(B,3) and
 * x[:-3] is B-3 from 3 and empty below, where the graph's Slice clamps the same way. The probe
 * takes the first that gives infer's size at every size it tries. */
static bool slice_extents(om_lower *l, const om_call *c) {
  int dim = (int)c->attrs.i[0];
  int64_t step = om__lower_given(l)->i[3], span;
  int len = om__lower_in_x(l, 0, dim), start = bound_x(l, 1, len), end = bound_x(l, 2, len);
  int ends[4] = {end, len, -1, -1}, starts[3] = {start, om__lower_x_const(l, 0), -1};
  int spans = end >= 0 && start >= 0 ? om__lower_x_lin(l, 1, end, -1, start, 0) : -1;
  if (spans >= 0 && om__lower_x_is_const(l, spans, &span) && span > 0) { /* min(len, end) as start + min(len - start, span) */
    int rest = om__lower_x_minc(l, om__lower_x_lin(l, 1, len, -1, start, 0), span);
    ends[2] = rest >= 0 ? om__lower_x_lin(l, 1, start, 1, rest, 0) : -1;
  }
  if (end >= 0 && start >= 0) { /* min(end, len) = len + min(end - len, 0); max(start, 0) = start - min(start, 0) */
    int64_t fixed;
    int over = om__lower_x_minc(l, om__lower_x_lin(l, 1, end, -1, len, 0), 0), under = om__lower_x_minc(l, start, 0);
    ends[3] = om__lower_x_is_const(l, end, &fixed) ? om__lower_x_minc(l, len, fixed) /* min(len, 80) */
              : over >= 0 ? om__lower_x_lin(l, 1, len, 1, over, 0) : -1;
    starts[2] = under >= 0 ? om__lower_x_lin(l, 1, start, -1, under, 0) : -1;
  }
  for (int u = 0; u < 4; u++)
    for (int w = 0; w < 3; w++) {
      int n = ends[u] >= 0 && starts[w] >= 0 ? om__lower_x_lin(l, 1, ends[u], -1, starts[w], step - 1) : -1;
      int x = n >= 0 && step >= 1 ? om__lower_x_floordiv(l, n, step) : -1;
      if (x < 0) continue;
      om__lower_candidate(l, 0, dim, x);
      int below = u == 3 && w == 2 ? om__lower_x_minc(l, x, 0) : -1; /* clamped at 0 (an empty slice) */
      if (below >= 0) om__lower_candidate(l, 0, dim, om__lower_x_lin(l, 1, x, -1, below, 0));
    }
  return true;
}

/* Argument k (an index or bound into axis dim of input 0) written as an offset from the end:
 * when it moves with the axis's extent as extent + off (off < 0) and is never negative itself,
 * where the two agree (at a size where T - 2 is -1, eager counts it from the end again, the
 * offset would be -2). Returns whether, with the offset in *off. */
static bool from_end(om_lower *l, int k, int dim, int64_t *off) {
  int len = om__lower_in_ext(l, 0, dim);
  int rel = len >= 0 ? om__lower_x_lin(l, 1, om__lower_arg(l, k), -1, len, 0) : -1;
  int64_t min;
  return rel >= 0 && om__lower_x_is_const(l, rel, off) && *off < 0 && om__lower_x_min(l, om__lower_arg(l, k), &min) && min >= 0;
}

/* A Slice operand for bound k: the caller's number when it does not move (a negative one counts
 * from the end at run time too, as eager); one that moves with the axis's own extent as an
 * offset from its end (from_end: x[:, :T - 1] is the end -1); else the computed value, which
 * ONNX counts from the end when negative, as eager does. -1 on error. */
static int bound_operand(om_lower *l, int k, int dim) {
  const om_attrs *g = om__lower_given(l);
  int64_t off;
  if (!om__lower_arg_moves(l, k)) return om__lower_ints(l, &g->i[k], 1);
  if (from_end(l, k, dim, &off)) return om__lower_ints(l, &off, 1);
  return om__lower_x_value(l, om__lower_arg(l, k));
}

/* Slice with the bounds as given (ONNX clamps them as eager does), step and axis; none for
 * the full range (the output's extent is the input's). */
static bool lower_slice(om_lower *l, const om_call *c) {
  const int64_t *at = c->attrs.i; /* canonical: dim, start, end, step */
  int dim = (int)at[0];
  if (at[1] == 0 && at[3] == 1 && c->out_meta[0].shape[dim] == c->in[0]->shape[dim] &&
      om__lower_out_ext(l, 0, dim) == om__lower_in_ext(l, 0, dim))
    return om__lower_alias(l);
  int in[5] = {om__lower_input(l, 0), bound_operand(l, 1, dim), bound_operand(l, 2, dim), om__lower_ints(l, &at[0], 1),
               om__lower_ints(l, &om__lower_given(l)->i[3], 1)}, out;
  for (int k = 1; k < 5; k++)
    if (in[k] < 0) return false;
  if (!om__emit(l, "Slice", in, 5, &c->out_meta[0], 1, &out, NULL, 0)) return false;
  om__lower_output(l, 0, out);
  return true;
}

const om_op_def om__op_slice = {
    .name = "slice", .takes_float64 = true, .n_in = 1, .n_out = 1, .view = true, .infer = infer_slice,
    .forward = forward_slice, .backward = slice_backward, .lower = lower_slice, .extents = slice_extents,
    .sym_args = 1 << 1 | 1 << 2, .onnx = "Slice (none for the full range)",
    .test = {.n_in = 1, .ndims = {2}, .shapes = {{3, 7}}, .lo = -2, .hi = 2, .attrs = {.n_i = 4, .i = {1, 1, -1, 2}}}};

/* ---- select ---- */

static bool infer_select(om_call *c) {
  om_tensor *a = c->in[0];
  if (c->attrs.n_i != 2) return om__fail(OM_ERR_INVALID_ARGUMENT, "select: needs dim and index");
  int dim = om__wrap_dim(c->attrs.i[0], a->ndim, "select");
  if (dim < 0) return false;
  if (a->ndim == 0) return om__fail(OM_ERR_INVALID_ARGUMENT, "select: a 0-d tensor has no dim to select from");
  int64_t idx = c->attrs.i[1], size = a->shape[dim];
  if (idx < -size || idx >= size)
    return om__fail(OM_ERR_INDEX_OUT_OF_RANGE, "select: index %lld is out of range for dim %d of size %lld",
                    (long long)idx, dim, (long long)size);
  c->attrs.i[0] = dim;
  c->attrs.i[1] = idx < 0 ? idx + size : idx;
  om_meta *m = &c->out_meta[0];
  meta_from(m, a->dtype, NULL, a->ndim - 1);
  for (int d = 0, k = 0; d < a->ndim; d++)
    if (d != dim) m->shape[k++] = a->shape[d];
  return true;
}

static bool forward_select(om_call *c) {
  om_tensor *a = c->in[0], *o = c->out[0];
  int dim = (int)c->attrs.i[0];
  o->offset += c->attrs.i[1] * a->strides[dim];
  for (int d = 0, k = 0; d < a->ndim; d++)
    if (d != dim) o->strides[k++] = a->strides[d];
  return true;
}

static bool select_backward(const om_record *r, om_tensor *const *g, om_tensor **gin) {
  int64_t b[4] = {r->attrs.i[0], r->attrs.i[1], r->attrs.i[1] + 1, 1};
  om_tensor *u = om_unsqueeze(g[0], (int)b[0]);
  gin[0] = u ? scatter_back(u, r->in[0], b) : NULL;
  om_tensor_release(u);
  return gin[0] != NULL;
}

/* Gather with a 0-d index drops the axis as select does. The index is the caller's (a negative
 * one kept: ONNX Gather counts it from the end at run time, as eager); one that moves with the
 * axis's extent is written from the end where that agrees (from_end: out[:, T - 1] is -1);
 * another one is computed, and a negative value counts from the end in both. */
static bool lower_select(om_lower *l, const om_call *c) {
  int dim = (int)c->attrs.i[0], idx;
  int64_t off = om__lower_given(l)->i[1];
  if (!om__lower_arg_moves(l, 1) || from_end(l, 1, dim, &off)) idx = om__lower_ints(l, &off, -1);
  else idx = om__lower_x_scalar(l, om__lower_arg(l, 1));
  return lower_operand_attr(l, c, "Gather", idx, &OM_ATTR_INT("axis", dim));
}

const om_op_def om__op_select = {
    .name = "select", .takes_float64 = true, .n_in = 1, .n_out = 1, .view = true, .infer = infer_select,
    .forward = forward_select, .backward = select_backward, .lower = lower_select, .sym_args = 1 << 1, .onnx = "Gather",
    .test = {.n_in = 1, .ndims = {3}, .shapes = {{2, 3, 4}}, .lo = -2, .hi = 2, .attrs = {.n_i = 2, .i = {1, -1}},
             .empty_refusal = "is out of range for dim 1 of size 0"}}; /* no element to select (PyTorch refuses too) */

/* ---- unfold_dim (Tensor.unfold) ---- */

/* attrs dim, size, step: the windows of size elements along dim, step apart, as a new last axis;
 * dim's extent becomes their count (L - size) / step + 1. A 0-d tensor is one element (as
 * PyTorch: x.unfold(0, 1, 1) of a 0-d x is [x]). Messages are PyTorch's. */
static bool infer_unfold_dim(om_call *c) {
  om_tensor *a = c->in[0];
  if (c->attrs.n_i != 3) return om__fail(OM_ERR_INVALID_ARGUMENT, "unfold_dim: needs dim, size and step");
  int dim = om__wrap_dim(c->attrs.i[0], a->ndim, "unfold_dim");
  if (dim < 0) return false;
  int64_t size = c->attrs.i[1], step = c->attrs.i[2], len = a->ndim ? a->shape[dim] : 1;
  if (size < 0) return om__fail(OM_ERR_INVALID_ARGUMENT, "unfold_dim: size is %lld but must be >= 0", (long long)size);
  if (step < 1) return om__fail(OM_ERR_INVALID_ARGUMENT, "unfold_dim: step is %lld but must be > 0", (long long)step);
  if (size > len)
    return om__fail(OM_ERR_INVALID_ARGUMENT, "unfold_dim: maximum size for tensor at dimension %d is %lld but size is %lld",
                    dim, (long long)len, (long long)size);
  c->attrs.i[0] = dim;
  om_meta *m = &c->out_meta[0];
  meta_from(m, a->dtype, a->shape, a->ndim);
  if (a->ndim) m->shape[dim] = (len - size) / step + 1;
  m->shape[a->ndim] = size;
  m->ndim = a->ndim + 1;
  return true;
}

static bool forward_unfold_dim(om_call *c) {
  om_tensor *a = c->in[0], *o = c->out[0];
  if (!a->ndim) return o->strides[0] = 1, true;
  int dim = (int)c->attrs.i[0];
  for (int d = 0; d < a->ndim; d++) o->strides[d] = a->strides[d] * (d == dim ? c->attrs.i[2] : 1);
  o->strides[a->ndim] = a->strides[dim];
  return true;
}

/* The windows' gradients summed back where each window lies (they overlap when step < size):
 * g's last axis moved next to dim and merged with it, then index_add at j * step + k. */
static bool unfold_dim_backward(const om_record *r, om_tensor *const *g, om_tensor **gin) {
  const om_tensor *a = r->in[0];
  int64_t size = r->attrs.i[1], step = r->attrs.i[2];
  if (!a->ndim) return (gin[0] = size ? om_reshape(g[0], NULL, 0) : om_zeros(NULL, 0, g[0]->dtype)) != NULL;
  int dim = (int)r->attrs.i[0], nd = a->ndim;
  int64_t n = g[0]->shape[dim], perm[OM_MAX_DIMS + 1], shape[OM_MAX_DIMS];
  for (int d = 0; d <= nd; d++) /* 0..dim, then the window axis, then dim+1..nd-1 */
    perm[d] = d <= dim ? d : d == dim + 1 ? nd : d - 1;
  memcpy(shape, a->shape, sizeof(int64_t) * (size_t)nd);
  shape[dim] = n * size;
  int64_t *at = malloc(sizeof(int64_t) * (size_t)(n * size > 0 ? n * size : 1));
  if (!at) return om__fail(OM_ERR_OUT_OF_MEMORY, "unfold_dim: no memory for the backward's index");
  for (int64_t j = 0; j < n; j++)
    for (int64_t k = 0; k < size; k++) at[j * size + k] = j * step + k;
  om_tensor *index = om_from_data(at, (int64_t[]){n * size}, 1, OM_INT64);
  free(at);
  om_tensor *moved = index ? om_permute(g[0], perm, nd + 1) : NULL, *flat = moved ? om_reshape(moved, shape, nd) : NULL;
  om_tensor *zeros = flat ? om_zeros(a->shape, nd, g[0]->dtype) : NULL;
  gin[0] = zeros ? om_index_add(zeros, dim, index, flat) : NULL;
  om__release_all((om_tensor *[]){index, moved, flat, zeros}, 4);
  return gin[0] != NULL;
}

/* Gather along dim with the windows' indices [n, size] (rows j * step, from a Range over the
 * computed count when dim is symbolic, plus columns 0..size-1), then the window axis moved last. */
static bool lower_unfold_dim(om_lower *l, const om_call *c) {
  const om_tensor *a = c->in[0];
  int empty = om__lower_empty(l, c);
  if (empty) return empty > 0;
  if (!a->ndim) return lower_ints(l, c, "Reshape", &(ints){(int64_t[]){c->attrs.i[1]}, 1}, 1, NULL, 0);
  int dim = (int)c->attrs.i[0], nd = a->ndim, n_x = om__lower_out_ext(l, 0, dim);
  int64_t size = c->attrs.i[1], step = c->attrs.i[2], n = c->out_meta[0].shape[dim];
  om_meta rows_m = {.dtype = OM_INT64, .ndim = 1, .shape = {n}}, col_m = {.dtype = OM_INT64, .ndim = 2, .shape = {n, 1}};
  int rows;
  if (n_x < 0) {
    int64_t *v = malloc(sizeof(int64_t) * (size_t)(n ? n : 1));
    if (!v) return om__fail(OM_ERR_OUT_OF_MEMORY, "unfold_dim: no memory for the graph's index");
    for (int64_t j = 0; j < n; j++) v[j] = j * step;
    rows = om__lower_ints(l, v, (int)n);
    free(v);
  } else {
    int rng[3] = {om__lower_ints(l, (int64_t[]){0}, -1), om__lower_x_scalar(l, om__lower_x_lin(l, step, n_x, 0, n_x, 0)),
                  om__lower_ints(l, &step, -1)};
    if (rng[0] < 0 || rng[1] < 0 || rng[2] < 0 || !om__emit(l, "Range", rng, 3, &rows_m, 1, &rows, NULL, 0)) return false;
  }
  int64_t *cols = malloc(sizeof(int64_t) * (size_t)(size ? size : 1));
  if (!cols) return om__fail(OM_ERR_OUT_OF_MEMORY, "unfold_dim: no memory for the graph's index");
  for (int64_t k = 0; k < size; k++) cols[k] = k;
  int cv = om__lower_ints(l, cols, (int)size);
  free(cols);
  om_meta idx_m = {.dtype = OM_INT64, .ndim = 2, .shape = {n, size}}, gathered = c->out_meta[0];
  int col = emit_ints(l, "Unsqueeze", &rows, 1, &(ints){(int64_t[]){1}, 1}, 1, &col_m, NULL, 0), idx = -1, g;
  int add[2] = {col, cv};
  if (rows < 0 || col < 0 || cv < 0 || !om__emit(l, "Add", add, 2, &idx_m, 1, &idx, NULL, 0)) return false;
  for (int d = 0; d <= nd; d++) /* Gather puts the window axis at dim + 1 */
    gathered.shape[d] = d <= dim ? c->out_meta[0].shape[d] : d == dim + 1 ? size : c->out_meta[0].shape[d - 1];
  int gin[2] = {om__lower_input(l, 0), idx};
  if (dim == nd - 1) {
    if (!om__emit(l, "Gather", gin, 2, &c->out_meta[0], 1, &g, &OM_ATTR_INT("axis", dim), 1)) return false;
    om__lower_output(l, 0, g);
    return true;
  }
  if (!om__emit(l, "Gather", gin, 2, &gathered, 1, &g, &OM_ATTR_INT("axis", dim), 1)) return false;
  int64_t perm[OM_MAX_DIMS + 1];
  for (int d = 0; d <= nd; d++) perm[d] = d <= dim ? d : d < nd ? d + 1 : dim + 1;
  int out;
  if (!om__emit(l, "Transpose", &g, 1, &c->out_meta[0], 1, &out, &OM_ATTR_INTS("perm", perm, nd + 1), 1)) return false;
  om__lower_output(l, 0, out);
  return true;
}

const om_op_def om__op_unfold_dim = {
    .name = "unfold_dim", .takes_float64 = true, .n_in = 1, .n_out = 1, .view = true, .infer = infer_unfold_dim,
    .forward = forward_unfold_dim, .backward = unfold_dim_backward, .lower = lower_unfold_dim, .derives_extents = true,
    .onnx = "Gather (Range, Unsqueeze, Add for the windows' indices), Transpose",
    .test = {.n_in = 1, .ndims = {3}, .shapes = {{2, 7, 3}}, .lo = -2, .hi = 2, .attrs = {.n_i = 3, .i = {1, 3, 2}},
             .empty_refusal = "is 0 but size is 3"}};

/* ---- squeeze / unsqueeze ---- */

static bool infer_squeeze(om_call *c) {
  om_tensor *a = c->in[0];
  bool drop[OM_MAX_DIMS] = {0};
  if (c->attrs.n_i == 0) {
    for (int d = 0; d < a->ndim; d++) drop[d] = a->shape[d] == 1;
  } else {
    for (int k = 0; k < c->attrs.n_i; k++) {
      int d = om__wrap_dim(c->attrs.i[k], a->ndim, "squeeze");
      if (d < 0) return false;
      drop[d] = a->ndim > 0 && a->shape[d] == 1; /* as PyTorch: a dim of another size stays */
    }
  }
  om_meta *m = &c->out_meta[0];
  meta_from(m, a->dtype, NULL, 0);
  c->attrs.n_i = 0;
  for (int d = 0; d < a->ndim; d++) {
    if (drop[d]) c->attrs.i[c->attrs.n_i++] = d;
    else m->shape[m->ndim++] = a->shape[d];
  }
  return true;
}

static bool forward_squeeze(om_call *c) {
  om_tensor *a = c->in[0], *o = c->out[0];
  for (int d = 0, k = 0, j = 0; d < a->ndim; d++) {
    if (j < c->attrs.n_i && c->attrs.i[j] == d) j++;
    else o->strides[k++] = a->strides[d];
  }
  return true;
}

/* Squeeze of the dims infer chose (size 1 in the example). A symbolic axis is never among
 * them: symbols have example sizes of at least 2, so the choice holds at every size. */
static bool lower_squeeze(om_lower *l, const om_call *c) {
  if (c->attrs.n_i == 0) return om__lower_alias(l);
  return lower_ints(l, c, "Squeeze", &(ints){c->attrs.i, c->attrs.n_i}, 1, NULL, 0);
}

const om_op_def om__op_squeeze = {
    .name = "squeeze", .takes_float64 = true, .n_in = 1, .n_out = 1, .view = true, .infer = infer_squeeze,
    .forward = forward_squeeze, .backward = reshape_backward, .lower = lower_squeeze,
    .onnx = "Squeeze (none when no dim is removed)",
    .test = {.n_in = 1, .ndims = {3}, .shapes = {{2, 1, 3}}, .lo = -2, .hi = 2, .attrs = {.n_i = 1, .i = {1}}}};

static bool infer_unsqueeze(om_call *c) {
  om_tensor *a = c->in[0];
  if (c->attrs.n_i != 1) return om__fail(OM_ERR_INVALID_ARGUMENT, "unsqueeze: needs one dim");
  if (a->ndim == OM_MAX_DIMS) return om__fail(OM_ERR_INVALID_ARGUMENT, "unsqueeze: already %d dims", OM_MAX_DIMS);
  int dim = om__wrap_dim(c->attrs.i[0], a->ndim + 1, "unsqueeze");
  if (dim < 0) return false;
  c->attrs.i[0] = dim;
  om_meta *m = &c->out_meta[0];
  meta_from(m, a->dtype, NULL, a->ndim + 1);
  for (int d = 0, k = 0; d <= a->ndim; d++) m->shape[d] = d == dim ? 1 : a->shape[k++];
  return true;
}

static bool forward_unsqueeze(om_call *c) {
  om_tensor *a = c->in[0], *o = c->out[0];
  int dim = (int)c->attrs.i[0];
  for (int d = 0, k = 0; d <= a->ndim; d++)
    o->strides[d] = d == dim ? (k < a->ndim ? a->strides[k] * a->shape[k] : 1) : a->strides[k++];
  return true;
}

/* An unsqueezed iota (arange(T).unsqueeze(0): learned positions) stays one, so an embedding of it
 * is still a Slice of the table. */
static bool lower_unsqueeze(om_lower *l, const om_call *c) {
  if (!lower_ints(l, c, "Unsqueeze", &(ints){c->attrs.i, 1}, 1, NULL, 0)) return false;
  om__lower_keep_iota(l, c->trace_out[0]);
  return true;
}

const om_op_def om__op_unsqueeze = {
    .name = "unsqueeze", .takes_float64 = true, .n_in = 1, .n_out = 1, .view = true, .infer = infer_unsqueeze,
    .forward = forward_unsqueeze, .backward = reshape_backward, .lower = lower_unsqueeze, .onnx = "Unsqueeze",
    .test = {.n_in = 1, .ndims = {2}, .shapes = {{2, 3}}, .lo = -2, .hi = 2, .attrs = {.n_i = 1, .i = {-1}}}};

/* ---- clone ---- */

static bool infer_same(om_call *c) {
  meta_from(&c->out_meta[0], c->in[0]->dtype, c->in[0]->shape, c->in[0]->ndim);
  return true;
}

static bool forward_clone(om_call *c) { om__copy_into(c->out[0], c->in[0]); return true; }

static bool identity_backward(const om_record *r, om_tensor *const *g, om_tensor **gin) {
  (void)r;
  gin[0] = om_tensor_retain(g[0]);
  return true;
}

/* A copy of a traced value is the same graph value (spec 1, aliases). */
static bool lower_clone(om_lower *l, const om_call *c) {
  (void)c;
  return om__lower_alias(l);
}

const om_op_def om__op_clone = {
    .name = "clone", .takes_float64 = true, .n_in = 1, .n_out = 1, .infer = infer_same, .forward = forward_clone,
    .backward = identity_backward, .lower = lower_clone, .same_value = true, .onnx = "none (the input's value)", .test = {.n_in = 1, .ndims = {2}, .shapes = {{2, 3}}, .lo = -2, .hi = 2}};

/* ---- cat ---- */

static bool infer_cat(om_call *c) {
  om_tensor *a = c->in[0];
  if (c->attrs.n_i != 1) return om__fail(OM_ERR_INVALID_ARGUMENT, "cat: needs one dim");
  int dim = om__wrap_dim(c->attrs.i[0], a->ndim, "concat");
  if (dim < 0) return false;
  if (a->ndim == 0) return om__fail(OM_ERR_INVALID_ARGUMENT, "cat: 0-d tensors cannot be joined (use stack)");
  c->attrs.i[0] = dim;
  om_meta *m = &c->out_meta[0];
  meta_from(m, a->dtype, a->shape, a->ndim);
  m->shape[dim] = 0;
  for (int k = 0; k < c->n_in; k++) {
    om_tensor *t = c->in[k];
    if (t->dtype != a->dtype)
      return om__fail(OM_ERR_DTYPE_MISMATCH, "cat: input %d is %s, input 0 is %s", k, om_dtype_name(t->dtype), om_dtype_name(a->dtype));
    bool fits = t->ndim == a->ndim;
    for (int d = 0; fits && d < a->ndim; d++) fits = d == dim || t->shape[d] == a->shape[d];
    if (!fits) {
      char x[OM_SHAPE_STR_LEN], y[OM_SHAPE_STR_LEN];
      return om__fail(OM_ERR_SHAPE_MISMATCH, "cat: input %d has shape %s, input 0 has %s (only dim %d may differ)", k,
                      om__shape_str(x, sizeof x, t->shape, t->ndim), om__shape_str(y, sizeof y, a->shape, a->ndim), dim);
    }
    if (m->shape[dim] > INT64_MAX - t->shape[dim])
      return om__fail(OM_ERR_OUT_OF_MEMORY, "cat: the joined dim %d has more than %lld elements", dim, (long long)INT64_MAX);
    m->shape[dim] += t->shape[dim];
  }
  return true;
}

static bool forward_cat(om_call *c) {
  om_tensor *o = c->out[0];
  int dim = (int)c->attrs.i[0];
  int64_t at = 0;
  for (int k = 0; k < c->n_in; k++) {
    om_tensor part = *o; /* a stack view of the output's slab for input k */
    part.shape[dim] = c->in[k]->shape[dim];
    part.offset = o->offset + at * o->strides[dim];
    om__copy_into(&part, c->in[k]);
    at += c->in[k]->shape[dim];
  }
  return true;
}

static bool cat_backward(const om_record *r, om_tensor *const *g, om_tensor **gin) {
  int dim = (int)r->attrs.i[0];
  int64_t at = 0;
  for (int k = 0; k < r->n_in; k++) {
    int64_t len = r->in[k]->shape[dim];
    if (om__wants(r, k) && !(gin[k] = om_slice(g[0], dim, at, at + len, 1))) return false;
    at += len;
  }
  return true;
}

/* The joined axis is the sum of the inputs' extents (seq + len; 2*seq for cat([x, x])). */
static bool cat_extents(om_lower *l, const om_call *c) {
  int dim = (int)c->attrs.i[0], x = om__lower_x_const(l, 0);
  for (int i = 0; i < c->n_in && x >= 0; i++) x = om__lower_x_lin(l, 1, x, 1, om__lower_in_x(l, i, dim), 0);
  om__lower_candidate(l, 0, dim, x);
  return x >= 0;
}

static bool lower_cat(om_lower *l, const om_call *c) {
  return om__lower_node(l, c, "Concat", &OM_ATTR_INT("axis", c->attrs.i[0]), 1);
}

const om_op_def om__op_cat = {
    .name = "cat", .takes_float64 = true, .n_in = -1, .n_out = 1, .infer = infer_cat, .forward = forward_cat,
    .backward = cat_backward, .lower = lower_cat, .extents = cat_extents, .onnx = "Concat",
    .test = {.n_in = 3, .ndims = {2, 2, 2}, .shapes = {{2, 3}, {2, 1}, {2, 2}}, .lo = -2, .hi = 2, .attrs = {.n_i = 1, .i = {1}}}};

/* ---- tril / triu ---- */

static bool infer_tri(om_call *c) {
  if (c->in[0]->ndim < 2)
    return om__fail(OM_ERR_INVALID_ARGUMENT, "%s: needs at least 2 dims, got %d", om_op_name(c->op), c->in[0]->ndim);
  if (c->attrs.n_i != 1) return om__fail(OM_ERR_INVALID_ARGUMENT, "%s: needs one diagonal offset", om_op_name(c->op));
  return infer_same(c);
}

/* Copies the input, then zeroes elements outside the kept triangle of each matrix. */
static bool forward_tri(om_call *c) {
  om_tensor *o = c->out[0];
  om__copy_into(o, c->in[0]);
  int64_t rows = o->shape[o->ndim - 2], cols = o->shape[o->ndim - 1], k = c->attrs.i[0];
  int64_t mats = rows * cols != 0 ? om_tensor_numel(o) / (rows * cols) : 0;
  size_t es = om__dtype_size(o->dtype);
  char *p = om__data(o);
  bool lower = c->op == OM_OP_tril;
  for (int64_t m = 0; m < mats; m++)
    for (int64_t i = 0; i < rows; i++)
      for (int64_t j = 0; j < cols; j++)
        if (lower ? j - i > k : j - i < k) memset(p + ((m * rows + i) * cols + j) * (int64_t)es, 0, es);
  return true;
}

static bool tri_backward(const om_record *r, om_tensor *const *g, om_tensor **gin) {
  gin[0] = r->op == OM_OP_tril ? om_tril(g[0], r->attrs.i[0]) : om_triu(g[0], r->attrs.i[0]);
  return gin[0] != NULL;
}

/* Trilu keeps j - i <= k (upper 0) or j - i >= k (upper 1), the triangles forward keeps; a k
 * computed from sizes is computed in the graph. */
static bool lower_tri(om_lower *l, const om_call *c) {
  int k = om__lower_x_scalar(l, om__lower_arg(l, 0));
  return lower_operand_attr(l, c, "Trilu", k, &OM_ATTR_INT("upper", c->op == OM_OP_triu));
}

const om_op_def om__op_tril = {
    .name = "tril", .n_in = 1, .n_out = 1, .infer = infer_tri, .forward = forward_tri, .backward = tri_backward,
    .lower = lower_tri, .sym_args = 1, .onnx = "Trilu",
    .test = {.n_in = 1, .ndims = {3}, .shapes = {{2, 3, 4}}, .lo = -2, .hi = 2, .attrs = {.n_i = 1, .i = {0}}}};
const om_op_def om__op_triu = {
    .name = "triu", .n_in = 1, .n_out = 1, .infer = infer_tri, .forward = forward_tri, .backward = tri_backward,
    .lower = lower_tri, .sym_args = 1, .onnx = "Trilu",
    .test = {.n_in = 1, .ndims = {2}, .shapes = {{4, 3}}, .lo = -2, .hi = 2, .attrs = {.n_i = 1, .i = {1}}}};

om_tensor *om_tril(om_tensor *a, int64_t k) { return om__apply1(OM_OP_tril, &a, 1, &(om_attrs){.n_i = 1, .i = {k}}); }
om_tensor *om_triu(om_tensor *a, int64_t k) { return om__apply1(OM_OP_triu, &a, 1, &(om_attrs){.n_i = 1, .i = {k}}); }

/* ---- slice_scatter: zeros of a full shape with src written into one slice (slice's gradient) ---- */

static bool infer_slice_scatter(om_call *c) {
  om_tensor *src = c->in[0];
  int64_t *at = c->attrs.i, len;
  if (c->attrs.n_i < 5 || at[4] < 0 || at[4] > OM_MAX_DIMS || c->attrs.n_i != 5 + at[4])
    return om__fail(OM_ERR_INVALID_ARGUMENT, "slice_scatter: needs dim, start, end, step, ndim and the full shape");
  int nd = (int)at[4];
  if (om__numel(at + 5, nd, "slice_scatter") < 0 || !slice_bounds(at, at + 5, nd, "slice_scatter", &len)) return false;
  om_meta *m = &c->out_meta[0];
  meta_from(m, src->dtype, at + 5, nd);
  bool fits = src->ndim == nd;
  for (int d = 0; fits && d < nd; d++) fits = src->shape[d] == (d == at[0] ? len : m->shape[d]);
  if (!fits) return fail_shape("slice_scatter", "source does not fit the slice of", src, at + 5, nd);
  return true;
}

static bool forward_slice_scatter(om_call *c) {
  om_tensor *o = c->out[0];
  memset(om__data(o), 0, (size_t)om_tensor_numel(o) * om__dtype_size(o->dtype));
  om_tensor part = *o;
  int dim = (int)c->attrs.i[0];
  part.shape[dim] = c->in[0]->shape[dim];
  part.offset = o->offset + c->attrs.i[1] * o->strides[dim];
  part.strides[dim] *= c->attrs.i[3];
  om__copy_into(&part, c->in[0]);
  return true;
}

static bool slice_scatter_backward(const om_record *r, om_tensor *const *g, om_tensor **gin) {
  const int64_t *at = r->attrs.i;
  return (gin[0] = om_slice(g[0], (int)at[0], at[1], at[2], at[3])) != NULL;
}

/* The full shape is attrs 5 on, which a write into a tensor made at a size computed from the
 * inputs gives as expressions (pe = zeros([T, d]); pe[:, 0::2] = sin(...)). */
static bool slice_scatter_extents(om_lower *l, const om_call *c) {
  for (int d = 0; d < c->out_meta[0].ndim; d++) om__lower_candidate(l, 0, d, om__lower_arg(l, 5 + d));
  return true;
}

/* A slice_scatter the graph cannot write at every size: InPlaceMutation, the tracing rules' kind
 * for a write the graph cannot hold (this op records every in-place write into a slice; the write
 * names the user's call in the message: om__trace_write). */
static bool refuse_write(const char *what) {
  return om__trace_fail(OM_ERR_TRACE_IN_PLACE_MUTATION, "slice_scatter: %s cannot be recorded in the graph at every size; "
                        "declare a minimum size at which the slice holds an element: om.Dim(name, { min }) (om_trace_dim in C)", what);
}

/* ScatterElements(zeros, indices, src, axis = dim), where indices has src's shape and holds
 * start + k * step at position k along dim. The zeros come from ConstantOfShape (float32;
 * cast for int64 and bool), the indices from Range, reshaped to lie along dim and expanded to
 * src's shape: a few small constants instead of one as large as src. Where sizes move (a
 * symbolic axis), the zeros' shape, the Range's bounds (the canonical start and tight end, as
 * expressions) and src's shape (its Shape) are computed in the graph. */
static bool lower_slice_scatter(om_lower *l, const om_call *c) {
  const om_tensor *src = c->in[0];
  const om_meta *o = &c->out_meta[0];
  const int64_t *at = c->attrs.i; /* dim, start, end, step, ndim, shape... */
  int dim = (int)at[0], ext[OM_MAX_DIMS];
  om_meta pos_m = {.dtype = OM_INT64, .ndim = 1, .shape = {src->shape[dim]}}, along_m = pos_m, idx_m = pos_m, shape_m = pos_m;
  along_m.ndim = idx_m.ndim = src->ndim;
  shape_m.shape[0] = src->ndim;
  bool moves = false;
  for (int d = 0; d < OM_MAX_DIMS; d++) ext[d] = d < o->ndim ? om__lower_out_ext(l, 0, d) : -1;
  bool moves_along = ext[dim] >= 0 || om__lower_input_sym(l, 0, dim);
  for (int d = 0; d < src->ndim; d++) {
    along_m.shape[d] = d == dim ? src->shape[d] : 1;
    idx_m.shape[d] = src->shape[d];
    moves |= ext[d] >= 0 || om__lower_in_ext(l, 0, d) >= 0;
  }
  /* bool written where sizes move (the where-mask of a strided write, om_slice_scatter) is
   * scattered as float32 and cast back, exact for 0 and 1: the Session's ScatterElements takes
   * float32 (at fixed sizes the mask is a constant) */
  om_meta f = *o;
  if (moves && o->dtype == OM_BOOL) f.dtype = OM_FLOAT32;
  int v[3];
  /* an empty src writes nothing: the zeros are the result (and onnxruntime's Expand would give
   * the indices [1, ...] where src has a 0) */
  if ((v[0] = zeros_of(l, &f, ext)) >= 0 && !om_tensor_numel(src)) {
    if (moves) return refuse_write("a write of an empty slice into a tensor of a size that moves");
    om__lower_output(l, 0, v[0]);
    return true;
  }
  if (!moves) {
    v[1] = v[0] < 0 ? -1 : emit_ints(l, "Range", NULL, 0, (ints[]){{&at[1], -1}, {&at[2], -1}, {&at[3], -1}}, 3, &pos_m, NULL, 0);
    v[1] = emit_ints(l, "Reshape", &v[1], 1, &(ints){along_m.shape, along_m.ndim}, 1, &along_m, NULL, 0);
    v[1] = emit_ints(l, "Expand", &v[1], 1, &(ints){idx_m.shape, idx_m.ndim}, 1, &idx_m, NULL, 0);
  } else { /* along dim as [1, ..., -1, ..., 1] (the Range's length), then to src's own shape */
    int64_t along[OM_MAX_DIMS];
    for (int d = 0; d < src->ndim; d++) along[d] = d == dim ? -1 : 1;
    /* the end is start + step * (src's length along dim), not the canonical end fitted on its
     * own: src's extent is what the indices must match at every size (m[1::2] of T rows writes
     * floor(T / 2) of them, a Range to a separately fitted end may give another count) */
    int len = om__lower_in_x(l, 0, dim), start = om__lower_arg(l, 1);
    /* a slice that is empty at some sizes of the range (m[3::2] of T rows, empty up to T = 3)
     * was seen to give a graph whose mask is a row short at a size where it is not: refused
     * until that is understood */
    if (moves_along && om__lower_may_be_0(l, len))
      return refuse_write("a write by a step along an axis whose size moves, into a slice that is empty at some of its sizes");
    int end = len < 0 || start < 0 ? -1 : om__lower_x_lin(l, 1, start, at[3], len, 0);
    int range[3] = {om__lower_x_scalar(l, start), end < 0 ? -1 : om__lower_x_scalar(l, end), om__lower_ints(l, &at[3], -1)};
    int in = om__lower_input(l, 0), shape = -1;
    v[1] = v[0] < 0 || range[0] < 0 || range[1] < 0 || range[2] < 0 || !om__emit(l, "Range", range, 3, &pos_m, 1, &v[1], NULL, 0) ? -1 : v[1];
    v[1] = emit_ints(l, "Reshape", &v[1], 1, &(ints){along, src->ndim}, 1, &along_m, NULL, 0);
    if (in < 0 || !om__emit(l, "Shape", &in, 1, &shape_m, 1, &shape, NULL, 0)) return false;
    int ex[2] = {v[1], shape};
    v[1] = v[1] < 0 || !om__emit(l, "Expand", ex, 2, &idx_m, 1, &v[1], NULL, 0) ? -1 : v[1];
  }
  v[2] = om__lower_input(l, 0);
  om_meta fs = *o;
  fs.dtype = f.dtype;
  memcpy(fs.shape, src->shape, sizeof(int64_t) * (size_t)src->ndim);
  if (f.dtype != o->dtype) v[2] = emit_ints(l, "Cast", &v[2], 1, NULL, 0, &fs, &OM_ATTR_INT("to", 1 /* FLOAT */), 1);
  int out = emit_ints(l, "ScatterElements", v, 3, NULL, 0, &f, &OM_ATTR_INT("axis", dim), 1);
  if (f.dtype != o->dtype) out = emit_ints(l, "Cast", &out, 1, NULL, 0, o, &OM_ATTR_INT("to", 9 /* BOOL */), 1);
  if (out < 0) return false;
  om__lower_output(l, 0, out);
  return true;
}

const om_op_def om__op_slice_scatter = {
    .name = "slice_scatter", .n_in = 1, .n_out = 1, .infer = infer_slice_scatter,
    .forward = forward_slice_scatter, .backward = slice_scatter_backward, .lower = lower_slice_scatter,
    .extents = slice_scatter_extents, .sym_args = ~(uint64_t)0 << 5 | 1 << 1 | 1 << 2,
    .onnx = "ConstantOfShape, Range, Reshape, Expand, ScatterElements (Cast for int64 and bool)",
    .test = {.n_in = 1, .ndims = {2}, .shapes = {{2, 2}}, .lo = -2, .hi = 2,
             .attrs = {.n_i = 7, .i = {1, 0, 4, 2, 2, 2, 4}}, .size_attrs = 3u << 5}}; /* the full shape */

/* ---- flip(a, dims) and tile(a, repeats): copies that read each output element from one
 * input element, o[i] = a[j] with j_d = n_d - 1 - i_d along a flipped dim, i_d mod n_d along a
 * tiled one (and i_d along the others) ---- */

/* Writes o (contiguous) from a, reading along dim d backwards where flipped[d], else modulo a's
 * size (tile's output dims are multiples of it; elsewhere i_d < n_d). */
static void copy_picked(om_tensor *o, const om_tensor *a, const bool *flipped) {
  int nd = o->ndim;
  int64_t n = om_tensor_numel(o), idx[OM_MAX_DIMS] = {0}, es = (int64_t)om__dtype_size(o->dtype);
  const char *src = om__data(a);
  char *dst = om__data(o);
  for (int64_t k = 0; k < n; k++) {
    int64_t at = 0;
    for (int d = 0; d < nd; d++) at += (flipped[d] ? a->shape[d] - 1 - idx[d] : idx[d] % a->shape[d]) * a->strides[d];
    memcpy(dst + k * es, src + at * es, (size_t)es);
    for (int d = nd - 1; d >= 0 && ++idx[d] == o->shape[d]; d--) idx[d] = 0; /* the next index, row-major */
  }
}

/* attrs: the dims to flip, wrapped in place (a 0-d tensor takes 0 and -1 and flips nothing). */
static bool infer_flip(om_call *c) {
  om_tensor *a = c->in[0];
  bool seen[OM_MAX_DIMS] = {0};
  int n = 0;
  for (int k = 0; k < c->attrs.n_i; k++) {
    int d = om__wrap_dim(c->attrs.i[k], a->ndim, "flip");
    if (d < 0) return false;
    if (a->ndim && seen[d]) return om__fail(OM_ERR_INVALID_ARGUMENT, "flip: dim %d appears twice", d);
    if (a->ndim) seen[d] = true, c->attrs.i[n++] = d;
  }
  c->attrs.n_i = n;
  return infer_same(c);
}

static bool forward_flip(om_call *c) {
  bool flipped[OM_MAX_DIMS] = {0};
  for (int k = 0; k < c->attrs.n_i; k++) flipped[c->attrs.i[k]] = true;
  copy_picked(c->out[0], c->in[0], flipped);
  return true;
}

static bool flip_backward(const om_record *r, om_tensor *const *g, om_tensor **gin) {
  return (gin[0] = om_flip(g[0], r->attrs.i, r->attrs.n_i)) != NULL;
}

/* Slice(x, starts -1, ends INT64_MIN, axes dims, steps -1): each axis read from its end to before
 * its start (ONNX clamps ends to -1 for a negative step), whatever its extent; no dims: the input. */
static bool lower_flip(om_lower *l, const om_call *c) {
  int n = c->attrs.n_i;
  if (!n) return om__lower_alias(l);
  int64_t starts[OM_MAX_DIMS], ends[OM_MAX_DIMS];
  for (int k = 0; k < n; k++) starts[k] = -1, ends[k] = INT64_MIN;
  ints k[4] = {{starts, n}, {ends, n}, {c->attrs.i, n}, {starts, n}};
  return lower_ints(l, c, "Slice", k, 4, NULL, 0);
}

const om_op_def om__op_flip = {
    .name = "flip", .takes_float64 = true, .n_in = 1, .n_out = 1, .infer = infer_flip, .forward = forward_flip,
    .backward = flip_backward, .lower = lower_flip, .onnx = "Slice (steps -1, ends INT64_MIN; none for no dims)",
    .test = {.n_in = 1, .ndims = {3}, .shapes = {{2, 3, 4}}, .lo = -2, .hi = 2, .attrs = {.n_i = 2, .i = {-1, 0}}}};

/* ---- diagonal (torch.diagonal: a view) ---- */

/* attrs offset, dim1, dim2: the elements [.., i, i + offset] of dims dim1 and dim2 (i >= 0
 * counts along the diagonal), as a last dim of length len; the other dims keep their order. A
 * view, as PyTorch's: one stride, dim1's plus dim2's, so a write through it (x.diagonal().fill_(0),
 * fill_diagonal_) reaches the tensor. */
static int64_t diagonal_len(int64_t n1, int64_t n2, int64_t offset) {
  if (offset >= 0) return offset >= n2 ? 0 : n1 < n2 - offset ? n1 : n2 - offset;
  return offset <= -n1 ? 0 : n1 + offset < n2 ? n1 + offset : n2; /* offset > -n1: no overflow */
}

static bool infer_diagonal(om_call *c) {
  om_tensor *a = c->in[0];
  if (c->attrs.n_i != 3) return om__fail(OM_ERR_INVALID_ARGUMENT, "diagonal: needs offset, dim1 and dim2");
  int d1 = om__wrap_dim(c->attrs.i[1], a->ndim, "diagonal"), d2 = d1 < 0 ? -1 : om__wrap_dim(c->attrs.i[2], a->ndim, "diagonal");
  if (d1 < 0 || d2 < 0) return false;
  if (d1 == d2) return om__fail(OM_ERR_INVALID_ARGUMENT, "diagonal: dim1 and dim2 cannot be the same dim (%d)", d1);
  c->attrs.i[1] = d1, c->attrs.i[2] = d2;
  om_meta *m = &c->out_meta[0];
  meta_from(m, a->dtype, NULL, a->ndim - 1);
  for (int d = 0, k = 0; d < a->ndim; d++)
    if (d != d1 && d != d2) m->shape[k++] = a->shape[d];
  m->shape[a->ndim - 2] = diagonal_len(a->shape[d1], a->shape[d2], c->attrs.i[0]);
  return true;
}

static bool forward_diagonal(om_call *c) {
  om_tensor *a = c->in[0], *o = c->out[0];
  int64_t offset = c->attrs.i[0];
  int d1 = (int)c->attrs.i[1], d2 = (int)c->attrs.i[2];
  if (o->shape[o->ndim - 1] > 0) o->offset += offset >= 0 ? offset * a->strides[d2] : -offset * a->strides[d1];
  for (int d = 0, k = 0; d < a->ndim; d++)
    if (d != d1 && d != d2) o->strides[k++] = a->strides[d];
  o->strides[o->ndim - 1] = a->strides[d1] + a->strides[d2];
  return true;
}

/* base with its diagonal (offset, d1, d2 canonical) replaced by v [other dims..., len], as a new
 * tensor (torch.diagonal_scatter), written with public ops so it is differentiable: base's dims
 * d1, d2 moved last, v's values spread over the rows (index_select of row i - first) and put where
 * j - i == offset (where), moved back. diagonal's backward (into zeros) and a traced write through
 * a diagonal view (trace/write.c) use it. */
om_tensor *om__diagonal_scatter(om_tensor *base, om_tensor *v, int64_t offset, int d1, int d2) {
  int nd = base->ndim;
  int64_t n1 = base->shape[d1], n2 = base->shape[d2], len = diagonal_len(n1, n2, offset), first = offset < 0 ? -offset : 0;
  if (!len || !n1 || !n2) return om_clone(base);
  int64_t perm[OM_MAX_DIMS], inverse[OM_MAX_DIMS];
  for (int d = 0, k = 0; d < nd; d++)
    if (d != d1 && d != d2) perm[k++] = d;
  perm[nd - 2] = d1, perm[nd - 1] = d2;
  for (int d = 0; d < nd; d++) inverse[perm[d]] = d;
  int64_t *rows = malloc(sizeof(int64_t) * (size_t)n1);
  uint8_t *on = malloc((size_t)(n1 * n2));
  if (!rows || !on) {
    free(rows), free(on);
    return om__fail(OM_ERR_OUT_OF_MEMORY, "diagonal: no memory for the scatter's index"), NULL;
  }
  for (int64_t i = 0; i < n1; i++) {
    rows[i] = i < first ? 0 : i - first < len ? i - first : len - 1;
    for (int64_t j = 0; j < n2; j++) on[i * n2 + j] = j - i == offset;
  }
  om_tensor *index = om_from_data(rows, &n1, 1, OM_INT64), *mask = om_from_data(on, (int64_t[]){n1, n2}, 2, OM_BOOL);
  free(rows), free(on);
  om_tensor *moved = mask && index ? om_permute(base, perm, nd) : NULL;
  om_tensor *spread = moved ? om_index_select(v, nd - 2, index) : NULL, *col = spread ? om_unsqueeze(spread, nd - 1) : NULL;
  om_tensor *put = col ? om_where(mask, col, moved) : NULL, *out = put ? om_permute(put, inverse, nd) : NULL;
  om__release_all((om_tensor *[]){index, mask, moved, spread, col, put}, 6);
  return out;
}

static bool diagonal_backward(const om_record *r, om_tensor *const *g, om_tensor **gin) {
  const om_tensor *a = r->in[0];
  om_tensor *zeros = om_zeros(a->shape, a->ndim, g[0]->dtype);
  gin[0] = zeros ? om__diagonal_scatter(zeros, g[0], r->attrs.i[0], (int)r->attrs.i[1], (int)r->attrs.i[2]) : NULL;
  om_tensor_release(zeros);
  return gin[0] != NULL;
}

/* dims d1, d2 moved last (Transpose), merged (Reshape: 0 keeps the others, so a symbolic one
 * holds), and every (n2 + 1)-th element from the diagonal's first taken (Slice). The two dims'
 * sizes are numbers in the graph: a symbolic one is refused. */
static bool lower_diagonal(om_lower *l, const om_call *c) {
  const om_tensor *a = c->in[0];
  int d1 = (int)c->attrs.i[1], d2 = (int)c->attrs.i[2], nd = a->ndim;
  for (int k = 0; k < 2; k++)
    if (om__lower_in_ext(l, 0, k ? d2 : d1) >= 0)
      return om__trace_fail(OM_ERR_TRACE_SYMBOLIC_SHAPE, "diagonal: dim %d is symbolic; the diagonal's dims must have fixed sizes in a trace "
                            "(take the diagonal of fixed-size dims, or trace without a symbol on dim %d)", k ? d2 : d1, k ? d2 : d1);
  int empty = om__lower_empty(l, c);
  if (empty) return empty > 0;
  int64_t n1 = a->shape[d1], n2 = a->shape[d2], offset = c->attrs.i[0], len = c->out_meta[0].shape[nd - 2];
  int64_t perm[OM_MAX_DIMS], keep[OM_MAX_DIMS];
  bool moves = false;
  for (int d = 0, k = 0; d < nd; d++)
    if (d != d1 && d != d2) perm[k++] = d;
  perm[nd - 2] = d1, perm[nd - 1] = d2;
  om_meta moved = {.dtype = a->dtype, .ndim = nd}, flat = {.dtype = a->dtype, .ndim = nd - 1};
  for (int d = 0; d < nd; d++) moved.shape[d] = a->shape[perm[d]], moves |= perm[d] != d;
  for (int d = 0; d < nd - 2; d++) flat.shape[d] = moved.shape[d], keep[d] = 0;
  flat.shape[nd - 2] = keep[nd - 2] = n1 * n2;
  int x = om__lower_input(l, 0);
  if (moves && (x < 0 || !om__emit(l, "Transpose", &x, 1, &moved, 1, &x, &OM_ATTR_INTS("perm", perm, nd), 1))) return false;
  int64_t start = offset >= 0 ? offset : -offset * n2, step = n2 + 1, end = start + (len - 1) * step + 1, axis = nd - 2;
  int r = emit_ints(l, "Reshape", &x, 1, &(ints){keep, nd - 1}, 1, &flat, NULL, 0);
  int out = emit_ints(l, "Slice", &r, 1, (ints[]){{&start, 1}, {&end, 1}, {&axis, 1}, {&step, 1}}, 4, &c->out_meta[0], NULL, 0);
  if (out < 0) return false;
  om__lower_output(l, 0, out);
  return true;
}

const om_op_def om__op_diagonal = {
    .name = "diagonal", .takes_float64 = true, .n_in = 1, .n_out = 1, .view = true, .infer = infer_diagonal,
    .forward = forward_diagonal, .backward = diagonal_backward, .lower = lower_diagonal,
    .onnx = "Transpose, Reshape, Slice (every (n2 + 1)-th element)",
    .test = {.n_in = 1, .ndims = {3}, .shapes = {{3, 4, 5}}, .lo = -2, .hi = 2, .attrs = {.n_i = 3, .i = {1, 2, 0}}}};

/* attrs: one repeat count (>= 0) per dim of a. */
static bool infer_tile(om_call *c) {
  om_tensor *a = c->in[0];
  if (c->attrs.n_i != a->ndim)
    return om__fail(OM_ERR_INVALID_ARGUMENT, "tile: %d repeats given for a tensor of %d dims", c->attrs.n_i, a->ndim);
  om_meta *m = &c->out_meta[0];
  meta_from(m, a->dtype, NULL, a->ndim);
  for (int d = 0; d < a->ndim; d++) {
    if (c->attrs.i[d] < 0) return om__fail(OM_ERR_INVALID_ARGUMENT, "tile: repeat %lld of dim %d is negative", (long long)c->attrs.i[d], d);
    if (__builtin_mul_overflow(a->shape[d], c->attrs.i[d], &m->shape[d]))
      return om__fail(OM_ERR_INVALID_ARGUMENT, "tile: dim %d of size %lld repeated %lld times overflows", d, (long long)a->shape[d], (long long)c->attrs.i[d]);
  }
  return om__numel(m->shape, m->ndim, "tile") >= 0;
}

static bool forward_tile(om_call *c) {
  bool flipped[OM_MAX_DIMS] = {0};
  copy_picked(c->out[0], c->in[0], flipped);
  return true;
}

/* Each repeated dim d in turn: g [.., r s, ..] viewed as [.., r, s, ..] and summed over the r. */
static bool tile_backward(const om_record *r, om_tensor *const *g, om_tensor **gin) {
  const om_tensor *a = r->in[0];
  om_tensor *acc = om_tensor_retain(g[0]);
  for (int d = 0; d < a->ndim && acc; d++) {
    if (r->attrs.i[d] == 1) continue;
    if (a->ndim == OM_MAX_DIMS) {
      om_tensor_release(acc);
      return om__fail(OM_ERR_INVALID_ARGUMENT, "tile: the gradient of a %d-dim tile needs one dim more", OM_MAX_DIMS);
    }
    int64_t split[OM_MAX_DIMS], dim = d;
    memcpy(split, acc->shape, sizeof(int64_t) * (size_t)d);
    split[d] = r->attrs.i[d], split[d + 1] = a->shape[d];
    memcpy(split + d + 2, acc->shape + d + 1, sizeof(int64_t) * (size_t)(a->ndim - d - 1));
    om_tensor *v = om_reshape(acc, split, a->ndim + 1);
    om_tensor_release(acc);
    acc = v ? om_sum(v, &dim, 1, false) : NULL;
    om_tensor_release(v);
  }
  return (gin[0] = acc) != NULL;
}

/* A tiled axis is its input's extent times the count, an expression where the count is computed
 * from sizes (DeBERTa's `.repeat(query_layer.size(0) // num_heads, 1, 1)` of a table made from
 * weights: one copy per batch row). */
static bool tile_extents(om_lower *l, const om_call *c) {
  const om_tensor *a = c->in[0];
  for (int d = 0; d < a->ndim; d++) {
    int in = om__lower_in_ext(l, 0, d);
    int x = om__lower_x_mul(l, om__lower_arg(l, d), in >= 0 ? in : om__lower_x_const(l, a->shape[d]));
    if (x < 0) return false;
    om__lower_candidate(l, 0, d, x);
  }
  return true;
}

/* Tile(x, repeats): the repeats constant, or computed where a count changes with the sizes. */
static bool lower_tile(om_lower *l, const om_call *c) {
  if (!c->attrs.n_i) return om__lower_alias(l);
  int ext[OM_MAX_DIMS];
  bool moves = false;
  for (int d = 0; d < c->attrs.n_i; d++) {
    ext[d] = om__lower_arg_moves(l, d) ? om__lower_arg(l, d) : -1;
    moves |= ext[d] >= 0;
  }
  if (moves) return lower_operand(l, c, "Tile", om__lower_shape_operand(l, c->attrs.i, ext, c->attrs.n_i));
  ints k = {c->attrs.i, c->attrs.n_i};
  return lower_ints(l, c, "Tile", &k, 1, NULL, 0);
}

const om_op_def om__op_tile = {
    .name = "tile", .takes_float64 = true, .n_in = 1, .n_out = 1, .infer = infer_tile, .forward = forward_tile,
    .backward = tile_backward, .lower = lower_tile, .extents = tile_extents, .derives_extents = true,
    .sym_args = ~(uint64_t)0, .onnx = "Tile (none for a 0-d input)",
    .test = {.n_in = 1, .ndims = {3}, .shapes = {{2, 1, 3}}, .lo = -2, .hi = 2, .attrs = {.n_i = 3, .i = {1, 3, 2}}}};

/* ---- public view functions and composites ---- */

static om_tensor *apply_i(om_op op, om_tensor *a, const int64_t *v, int n) {
  if (!om__check_inputs(om_op_name(op), &a, 1)) return NULL;
  if (n < 0 || n > OM_MAX_DIMS)
    return om__fail(OM_ERR_INVALID_ARGUMENT, "%s: %d dims (at most %d)", om_op_name(op), n, OM_MAX_DIMS), NULL;
  if (n && !v) return om__fail(OM_ERR_INVALID_ARGUMENT, "%s: the dims array is NULL", om_op_name(op)), NULL;
  om_attrs at = om__attrs_i(n, v);
  return om__apply1(op, &a, 1, &at);
}

om_tensor *om_permute(om_tensor *a, const int64_t *perm, int n) { return apply_i(OM_OP_permute, a, perm, n); }
om_tensor *om_expand(om_tensor *a, const int64_t *shape, int n) { return apply_i(OM_OP_expand, a, shape, n); }
om_tensor *om_squeeze(om_tensor *a, const int64_t *dims, int n) { return apply_i(OM_OP_squeeze, a, dims, n); }
om_tensor *om_unsqueeze(om_tensor *a, int dim) { return apply_i(OM_OP_unsqueeze, a, (int64_t[]){dim}, 1); }
om_tensor *om_select(om_tensor *a, int dim, int64_t index) { return apply_i(OM_OP_select, a, (int64_t[]){dim, index}, 2); }
om_tensor *om_slice(om_tensor *a, int dim, int64_t start, int64_t end, int64_t step) {
  return apply_i(OM_OP_slice, a, (int64_t[]){dim, start, end, step}, 4);
}
om_tensor *om_clone(om_tensor *a) { return om__apply1(OM_OP_clone, &a, 1, NULL); }

om_tensor *om_flip(om_tensor *a, const int64_t *dims, int n) { return apply_i(OM_OP_flip, a, dims, n); }
om_tensor *om_diagonal(om_tensor *a, int64_t offset, int dim1, int dim2) { return apply_i(OM_OP_diagonal, a, (int64_t[]){offset, dim1, dim2}, 3); }

/* torch.Tensor.repeat: sizes has at least a's dims; a gets size-1 dims in front for the extra ones. */
om_tensor *om_repeat(om_tensor *a, const int64_t *sizes, int n) {
  if (!om__check_inputs("repeat", &a, 1)) return NULL;
  if (n < a->ndim || n > OM_MAX_DIMS || (n && !sizes))
    return om__fail(OM_ERR_INVALID_ARGUMENT, "repeat: %d sizes for a tensor of %d dims (at least as many, at most %d)", n, a->ndim, OM_MAX_DIMS), NULL;
  int64_t shape[OM_MAX_DIMS];
  for (int d = 0; d < n; d++) shape[d] = d < n - a->ndim ? 1 : a->shape[d - (n - a->ndim)];
  om_tensor *v = n > a->ndim ? om_reshape(a, shape, n) : om_tensor_retain(a);
  om_tensor *r = v ? apply_i(OM_OP_tile, v, sizes, n) : NULL;
  om_tensor_release(v);
  return r;
}

/* torch.tile: repeat, with 1s in front of dims when it has fewer than a's dims. */
om_tensor *om_tile(om_tensor *a, const int64_t *dims, int n) {
  if (!om__check_inputs("tile", &a, 1)) return NULL;
  if (n < 0 || n > OM_MAX_DIMS || (n && !dims)) return om__fail(OM_ERR_INVALID_ARGUMENT, "tile: %d dims (at most %d)", n, OM_MAX_DIMS), NULL;
  int64_t full[OM_MAX_DIMS];
  int m = n < a->ndim ? a->ndim : n;
  for (int d = 0; d < m; d++) full[d] = d < m - n ? 1 : dims[d - (m - n)];
  return om_repeat(a, full, m);
}

om_tensor *om_contiguous(om_tensor *a) {
  if (!om__check_inputs("contiguous", &a, 1)) return NULL;
  return om_tensor_is_contiguous(a) ? om_tensor_retain(a) : om_clone(a);
}

om_tensor *om_reshape(om_tensor *a, const int64_t *shape, int ndim) {
  if (!om__check_inputs("reshape", &a, 1)) return NULL;
  if (ndim < 0 || ndim > OM_MAX_DIMS || (ndim && !shape))
    return om__fail(OM_ERR_INVALID_ARGUMENT, "reshape: %d dims (at most %d)", ndim, OM_MAX_DIMS), NULL;
  /* A contiguous tensor has a view in any shape of its element count: outside a trace (whose
   * runs at other sizes see failures inside the op) the op's infer alone resolves and checks
   * the shape, with the same messages, so eager's most common view does that once, not twice. */
  if (!om_trace_active() && om_tensor_is_contiguous(a)) return apply_i(OM_OP_reshape, a, shape, ndim);
  int64_t want[OM_MAX_DIMS], strides[OM_MAX_DIMS];
  if (ndim) memcpy(want, shape, sizeof(int64_t) * (size_t)ndim);
  if (!resolve_shape(a, want, ndim, "reshape")) return NULL;
  /* The op gets the shape as given (a -1 kept): the tracer needs it to tell a symbolic extent
   * from a baked one; infer resolves it again. */
  if (view_strides(a, want, ndim, strides)) return apply_i(OM_OP_reshape, a, shape, ndim);
  om_tensor *c = om_clone(a); /* the strides do not allow a view: copy, as PyTorch's reshape */
  om_tensor *r = c ? apply_i(OM_OP_reshape, c, shape, ndim) : NULL;
  om_tensor_release(c);
  return r;
}

om_tensor *om_transpose(om_tensor *a, int d0, int d1) {
  if (!om__check_inputs("transpose", &a, 1)) return NULL;
  int x = om__wrap_dim(d0, a->ndim, "transpose"), y = om__wrap_dim(d1, a->ndim, "transpose");
  if (x < 0 || y < 0) return NULL;
  int64_t perm[OM_MAX_DIMS];
  for (int d = 0; d < a->ndim; d++) perm[d] = d == x ? y : d == y ? x : d;
  return om_permute(a, perm, a->ndim);
}

om_tensor *om_cat(om_tensor *const *ts, int n, int dim) {
  if (n < 1 || !ts) return om__fail(OM_ERR_INVALID_ARGUMENT, "cat: needs at least one tensor"), NULL;
  return om__apply1(OM_OP_cat, ts, n, &(om_attrs){.n_i = 1, .i = {dim}});
}

/* PyTorch's slice_scatter, written with ops so it differentiates and traces as they do: with step 1
 * the pieces before and after the slice around src, cut with the bounds as given (a negative or
 * open bound stays one, so the graph's Slice clamps as eager does at every size); with a larger
 * step, src and a mask of where it goes (the gradient op's zeros-with-src form, fixed sizes only
 * in a trace) and a where. The spec's in-place writes into views are recorded with it
 * (trace/write.c). */
om_tensor *om_slice_scatter(om_tensor *input, om_tensor *src, int dim, int64_t start, int64_t end, int64_t step) {
  if (!om__check_inputs("slice_scatter", (om_tensor *[]){input, src}, 2)) return NULL;
  int64_t at[5 + OM_MAX_DIMS] = {dim, start, end, step, input->ndim}, len;
  if (input->ndim) memcpy(at + 5, input->shape, sizeof(int64_t) * (size_t)input->ndim);
  if (!slice_bounds(at, input->shape, input->ndim, "slice_scatter", &len)) return NULL;
  int d = (int)at[0];
  bool fits = src->ndim == input->ndim && src->dtype == input->dtype;
  for (int k = 0; fits && k < input->ndim; k++) fits = src->shape[k] == (k == d ? len : input->shape[k]);
  if (!fits) {
    char x[OM_SHAPE_STR_LEN], y[OM_SHAPE_STR_LEN];
    om_meta part;
    meta_from(&part, input->dtype, input->shape, input->ndim);
    part.shape[d] = len;
    return om__fail(src->dtype == input->dtype ? OM_ERR_SHAPE_MISMATCH : OM_ERR_DTYPE_MISMATCH,
                    "slice_scatter: src (%s %s) does not fit the slice (%s %s) of dim %d from %lld to %lld by %lld",
                    om_dtype_name(src->dtype), om__shape_str(x, sizeof x, src->shape, src->ndim),
                    om_dtype_name(input->dtype), om__shape_str(y, sizeof y, part.shape, part.ndim), d, (long long)start,
                    (long long)end, (long long)step), NULL;
  }
  if (at[3] == 1) {
    /* an end before the start (an empty slice): the rest begins at the start, not the end */
    int64_t size = input->shape[d], s0 = start < 0 ? start + size : start, e0 = end < 0 ? end + size : end;
    s0 = s0 < 0 ? 0 : s0 > size ? size : s0;
    e0 = e0 < 0 ? 0 : e0 > size ? size : e0;
    om_tensor *parts[3] = {om_slice(input, d, 0, start, 1), om_tensor_retain(src), om_slice(input, d, e0 < s0 ? start : end, INT64_MAX, 1)};
    om_tensor *r = parts[0] && parts[2] ? om_cat(parts, 3, d) : NULL;
    om__release_all(parts, 3);
    return r;
  }
  om_attrs put = {.n_i = 5 + input->ndim};
  memcpy(put.i, at, sizeof(int64_t) * (size_t)put.n_i);
  om_tensor *ones = om_full(src->shape, src->ndim, OM_BOOL, 1);
  om_tensor *parts[2] = {ones ? om__apply1(OM_OP_slice_scatter, &ones, 1, &put) : NULL, om__apply1(OM_OP_slice_scatter, &src, 1, &put)};
  om_tensor *r = parts[0] && parts[1] ? om_where(parts[0], parts[1], input) : NULL;
  om_tensor_release(ones);
  om__release_all(parts, 2);
  return r;
}

om_tensor *om_select_scatter(om_tensor *input, om_tensor *src, int dim, int64_t index) {
  if (!om__check_inputs("select_scatter", (om_tensor *[]){input, src}, 2)) return NULL;
  om_tensor *place = om_select(input, dim, index); /* checks dim and index */
  if (!place) return NULL;
  bool fits = src->ndim == place->ndim && !memcmp(src->shape, place->shape, sizeof(int64_t) * (size_t)src->ndim);
  char x[OM_SHAPE_STR_LEN], y[OM_SHAPE_STR_LEN];
  if (!fits || src->dtype != input->dtype) {
    om__fail(fits ? OM_ERR_DTYPE_MISMATCH : OM_ERR_SHAPE_MISMATCH, "select_scatter: src (%s %s) does not fit the "
             "element (%s %s) at index %lld of dim %d", om_dtype_name(src->dtype), om__shape_str(x, sizeof x, src->shape, src->ndim),
             om_dtype_name(input->dtype), om__shape_str(y, sizeof y, place->shape, place->ndim), (long long)index, dim);
    om_tensor_release(place);
    return NULL;
  }
  om_tensor_release(place);
  int d = om__wrap_dim(dim, input->ndim, "select_scatter");
  om_tensor *u = om_unsqueeze(src, d);
  if (!u) return NULL;
  /* index -1 is the last element: [-1, end of dim), not [-1, 0) */
  om_tensor *r = om_slice_scatter(input, u, d, index, index == -1 ? INT64_MAX : index + 1, 1);
  om_tensor_release(u);
  return r;
}

/* One dim of torch.roll: out[i] = a[(i - shift) mod size], an index_select by
 * remainder(arange(-shift, size - shift), size). The index is computed with ops rather than as
 * slices cut at shift mod size, so a trace computes the modulus in the graph: the arange's end and
 * the divisor are the size, which a symbolic axis traces, and the roll stays right at every size,
 * below the shift too. */
/* arange's doubles hold every shift up to this exactly */
#define ROLL_MAX_SHIFT ((int64_t)1 << 53)

static om_tensor *roll_dim(om_tensor *a, int64_t shift, int d) {
  double size = (double)a->shape[d];
  om_tensor *at = om_arange(-(double)shift, size - (double)shift, 1, OM_INT64), *n = om_scalar(size, OM_INT64);
  om_tensor *index = at && n ? om_remainder(at, n) : NULL;
  om_tensor *r = index ? om_index_select(a, d, index) : NULL;
  om__release_all((om_tensor *[]){at, n, index}, 3);
  return r;
}

/* torch.roll: each (shift, dim) pair in turn; without dims, the flattened tensor rolled and
 * reshaped back. */
om_tensor *om_roll(om_tensor *a, const int64_t *shifts, int n_shifts, const int64_t *dims, int n_dims) {
  if (!om__check_inputs("roll", &a, 1)) return NULL;
  if (n_shifts < 1 || !shifts || n_dims < 0 || (n_dims && !dims) || (n_dims ? n_dims != n_shifts : n_shifts != 1))
    return om__fail(OM_ERR_INVALID_ARGUMENT, "roll: %d shifts for %d dims (one shift per dim, or one shift and no dims)",
                    n_shifts, n_dims), NULL;
  for (int k = 0; k < n_shifts; k++)
    if (shifts[k] > ROLL_MAX_SHIFT || shifts[k] < -ROLL_MAX_SHIFT)
      return om__fail(OM_ERR_INVALID_ARGUMENT, "roll: shift %lld is beyond 2^53", (long long)shifts[k]), NULL;
  if (!n_dims) {
    om_tensor *flat = om_reshape(a, (int64_t[]){-1}, 1), *rolled = flat ? roll_dim(flat, shifts[0], 0) : NULL;
    om_tensor *r = rolled ? om_reshape(rolled, a->shape, a->ndim) : NULL;
    om__release_all((om_tensor *[]){flat, rolled}, 2);
    return r;
  }
  om_tensor *r = om_tensor_retain(a);
  for (int k = 0; r && k < n_dims; k++) {
    int d = om__wrap_dim(dims[k], a->ndim, "roll");
    om_tensor *next = d < 0 ? NULL : roll_dim(r, shifts[k], d);
    om_tensor_release(r);
    r = next;
  }
  return r;
}

/* torch.repeat_interleave with one count: each element along dim repeated r times in a row, as
 * unsqueeze after dim, expand the new dim to r, reshape the two into one (a 0-d tensor, or no
 * dim: the flattened tensor). Views and a copy, so the gradient sums each run of r and a trace
 * has Unsqueeze, Expand, Reshape with the sizes it computes. */
om_tensor *om_repeat_interleave(om_tensor *a, int64_t repeats, int dim, bool has_dim) {
  if (!om__check_inputs("repeat_interleave", &a, 1)) return NULL;
  if (repeats < 0) return om__fail(OM_ERR_INVALID_ARGUMENT, "repeat_interleave: repeats can not be negative, got %lld", (long long)repeats), NULL;
  om_tensor *flat = !has_dim || !a->ndim ? om_reshape(a, (int64_t[]){om_tensor_numel(a)}, 1) : om_tensor_retain(a);
  int d = flat ? om__wrap_dim(has_dim ? dim : 0, flat->ndim, "repeat_interleave") : -1;
  if (d < 0) return om_tensor_release(flat), NULL;
  int64_t n = flat->shape[d], shape[OM_MAX_DIMS + 1], to[OM_MAX_DIMS];
  if (repeats && n > INT64_MAX / repeats)
    return om_tensor_release(flat), om__fail(OM_ERR_INVALID_ARGUMENT, "repeat_interleave: %lld x %lld elements along dim %d "
                                             "do not fit in 64 bits", (long long)n, (long long)repeats, d), NULL;
  if (flat->ndim == OM_MAX_DIMS) /* no room for the extra dim: the dims after d as one */
    return om_tensor_release(flat), om__fail(OM_ERR_INVALID_ARGUMENT, "repeat_interleave: takes at most %d dims", OM_MAX_DIMS - 1), NULL;
  for (int k = 0; k <= flat->ndim; k++) shape[k] = k <= d ? flat->shape[k] : k == d + 1 ? repeats : flat->shape[k - 1];
  memcpy(to, flat->shape, sizeof to);
  to[d] = n * repeats;
  om_tensor *u = om_unsqueeze(flat, d + 1), *e = u ? om_expand(u, shape, flat->ndim + 1) : NULL;
  om_tensor *r = e ? om_reshape(e, to, flat->ndim) : NULL;
  om__release_all((om_tensor *[]){flat, u, e}, 3);
  return r;
}

/* With a count per element: an index_select by the index that repeats each position its count
 * of times, made from the counts' values (so a trace takes them only as constants: counts
 * computed from the model's inputs make an output size that depends on data, DataDependent). */
om_tensor *om_repeat_interleave_counts(om_tensor *a, om_tensor *repeats, int dim, bool has_dim) {
  om_tensor *in[2] = {a, repeats};
  if (!om__check_inputs("repeat_interleave", in, 2)) return NULL;
  if (repeats->dtype != OM_INT64)
    return om__fail(OM_ERR_DTYPE_MISMATCH, "repeat_interleave: repeats must be int64, not %s", om_dtype_name(repeats->dtype)), NULL;
  if (repeats->ndim > 1) return om__fail(OM_ERR_SHAPE_MISMATCH, "repeat_interleave: repeats must be 0-d or 1-D, got %d dims", repeats->ndim), NULL;
  if (!om__trace_check_read(repeats, "repeat_interleave")) return NULL;
  om_tensor *counts = om__dense(repeats, "repeat_interleave");
  if (!counts) return NULL;
  const int64_t *c = (const int64_t *)om__data(counts);
  int64_t nc = om_tensor_numel(counts);
  if (repeats->ndim == 0 || nc == 1) { /* one count for every element, as a number */
    om_tensor *r = om_repeat_interleave(a, c[0], dim, has_dim);
    om_tensor_release(counts);
    return r;
  }
  om_tensor *flat = !has_dim || !a->ndim ? om_reshape(a, (int64_t[]){om_tensor_numel(a)}, 1) : om_tensor_retain(a);
  int d = flat ? om__wrap_dim(has_dim ? dim : 0, flat->ndim, "repeat_interleave") : -1;
  int64_t total = 0, *index = NULL;
  bool ok = d >= 0;
  if (ok && nc != flat->shape[d])
    ok = om__fail(OM_ERR_SHAPE_MISMATCH, "repeat_interleave: repeats must have the same size as input along dim %d, but "
                  "got %lld counts for size %lld", d, (long long)nc, (long long)flat->shape[d]);
  for (int64_t k = 0; ok && k < nc; k++) {
    if (c[k] < 0) ok = om__fail(OM_ERR_INVALID_ARGUMENT, "repeat_interleave: repeats can not be negative, got %lld (at %lld)",
                                (long long)c[k], (long long)k);
    else if (c[k] > INT64_MAX / 8 - total) ok = om__fail(OM_ERR_OUT_OF_MEMORY, "repeat_interleave: the counts sum past 2^60");
    else total += c[k];
  }
  if (ok) ok = (index = om__alloc(sizeof(int64_t) * (uint64_t)(total ? total : 1), "repeat_interleave")) != NULL;
  for (int64_t k = 0, at = 0; ok && k < nc; k++)
    for (int64_t j = 0; j < c[k]; j++) index[at++] = k;
  om_tensor *idx = ok ? om_from_data(index, &total, 1, OM_INT64) : NULL;
  om_tensor *r = idx ? om_index_select(flat, d, idx) : NULL;
  free(index);
  om__release_all((om_tensor *[]){counts, flat, idx}, 3);
  return r;
}

/* F.pixel_shuffle and F.pixel_unshuffle on [..., C, H, W] as PyTorch writes them: the leading
 * dims as one batch B, a reshape to six dims, a permute, a reshape back. shuffle: [B, C, r, r, H,
 * W] -> [B, C, H, r, W, r] (ONNX's DepthToSpace in CRD mode); unshuffle: [B, C, H, r, W, r] ->
 * [B, C, r, r, H, W] (not SpaceToDepth, whose channels are block-major). Views and a copy: the
 * gradient is the inverse shuffle, and a trace has Reshape, Transpose, Reshape with the sizes it
 * computes. */
static om_tensor *shuffle(om_tensor *a, int64_t r, bool up) {
  const char *who = up ? "pixel_shuffle" : "pixel_unshuffle";
  if (!om__check_inputs(who, &a, 1)) return NULL;
  if (a->ndim < 3)
    return om__fail(OM_ERR_SHAPE_MISMATCH, "%s expects input to have at least 3 dimensions, but got input with %d dimension(s)",
                    who, a->ndim), NULL;
  if (r < 1) return om__fail(OM_ERR_INVALID_ARGUMENT, "%s expects a positive %s, but got %lld", who,
                             up ? "upscale_factor" : "downscale_factor", (long long)r), NULL;
  int nd = a->ndim;
  int64_t c = a->shape[nd - 3], h = a->shape[nd - 2], w = a->shape[nd - 1], b = 1;
  for (int d = 0; d < nd - 3; d++) b *= a->shape[d]; /* a's element count fits, so this does */
  if (up && (r > 3037000499 || c % (r * r))) /* r > 3037000499: r^2 does not fit in 64 bits */
    return om__fail(OM_ERR_SHAPE_MISMATCH, "pixel_shuffle expects its input's 'channel' dimension to be divisible by the square "
                    "of upscale_factor, but input.size(-3)=%lld is not divisible by %lld^2", (long long)c, (long long)r), NULL;
  for (int k = 0; !up && k < 2; k++)
    if (a->shape[nd - 2 + k] % r)
      return om__fail(OM_ERR_SHAPE_MISMATCH, "pixel_unshuffle expects %s to be divisible by downscale_factor, but input.size(%d)=%lld "
                      "is not divisible by %lld", k ? "width" : "height", k - 2, (long long)a->shape[nd - 2 + k], (long long)r), NULL;
  if (up ? h > INT64_MAX / r || w > INT64_MAX / r : r > 3037000499 || c > INT64_MAX / (r * r))
    return om__fail(OM_ERR_SHAPE_MISMATCH, "%s: [%lld, %lld, %lld] by %lld does not fit in 64 bits", who, (long long)c,
                    (long long)h, (long long)w, (long long)r), NULL;
  int64_t six[6], perm[6], out[OM_MAX_DIMS];
  memcpy(out, a->shape, sizeof out);
  if (up) {
    memcpy(six, (int64_t[]){b, c / (r * r), r, r, h, w}, sizeof six);
    memcpy(perm, (int64_t[]){0, 1, 4, 2, 5, 3}, sizeof perm);
    out[nd - 3] = c / (r * r), out[nd - 2] = h * r, out[nd - 1] = w * r;
  } else {
    memcpy(six, (int64_t[]){b, c, h / r, r, w / r, r}, sizeof six);
    memcpy(perm, (int64_t[]){0, 1, 3, 5, 2, 4}, sizeof perm);
    out[nd - 3] = c * r * r, out[nd - 2] = h / r, out[nd - 1] = w / r;
  }
  om_tensor *v = om_reshape(a, six, 6), *p = v ? om_permute(v, perm, 6) : NULL;
  om_tensor *res = p ? om_reshape(p, out, nd) : NULL;
  om__release_all((om_tensor *[]){v, p}, 2);
  return res;
}

om_tensor *om_pixel_shuffle(om_tensor *a, int64_t r) { return shuffle(a, r, true); }
om_tensor *om_pixel_unshuffle(om_tensor *a, int64_t r) { return shuffle(a, r, false); }

om_tensor *om_stack(om_tensor *const *ts, int n, int dim) {
  if (n < 1 || !ts) return om__fail(OM_ERR_INVALID_ARGUMENT, "stack: needs at least one tensor"), NULL;
  if (!om__check_inputs("stack", ts, n)) return NULL;
  int d = om__wrap_dim(dim, ts[0]->ndim + 1, "stack");
  if (d < 0) return NULL;
  for (int k = 1; k < n; k++)
    if (ts[k]->ndim != ts[0]->ndim || memcmp(ts[k]->shape, ts[0]->shape, sizeof(int64_t) * (size_t)ts[0]->ndim)) {
      char x[OM_SHAPE_STR_LEN], y[OM_SHAPE_STR_LEN];
      return om__fail(OM_ERR_SHAPE_MISMATCH, "stack: input %d has shape %s, input 0 has %s (all must match)", k,
                      om__shape_str(x, sizeof x, ts[k]->shape, ts[k]->ndim), om__shape_str(y, sizeof y, ts[0]->shape, ts[0]->ndim)), NULL;
    }
  om_tensor *small[16], **parts = n <= 16 ? small : om__alloc(sizeof(om_tensor *) * (size_t)n, "stack");
  if (!parts) return NULL;
  int made = 0;
  while (made < n && (parts[made] = om_unsqueeze(ts[made], d))) made++;
  om_tensor *r = made == n ? om_cat(parts, n, d) : NULL;
  om__release_all(parts, made);
  if (parts != small) free(parts);
  return r;
}

/* torch.meshgrid: input k (0-d or 1-D) reshaped to size 1 in every dim but its own, then expanded
 * to the grid, so the results are views of the inputs as PyTorch's are; xy swaps the first two
 * dims (Cartesian indexing). Its own size is passed as -1 and the others as the other inputs'
 * sizes, which a trace keeps symbolic. */
int om_meshgrid(om_tensor *const *ts, int n, bool xy, om_tensor **out) {
  if (n < 1 || !ts || !out) return om__fail(OM_ERR_INVALID_ARGUMENT, "meshgrid: needs at least one tensor"), -1;
  if (n > OM_MAX_DIMS) return om__fail(OM_ERR_INVALID_ARGUMENT, "meshgrid: %d tensors make more than %d dims", n, OM_MAX_DIMS), -1;
  if (!om__check_inputs("meshgrid", ts, n)) return -1;
  int64_t grid[OM_MAX_DIMS];
  for (int k = 0; k < n; k++) {
    if (ts[k]->ndim > 1)
      return om__fail(OM_ERR_SHAPE_MISMATCH, "meshgrid: tensor %d has %d dims (each must be 0-d or 1-D)", k, ts[k]->ndim), -1;
    if (ts[k]->dtype != ts[0]->dtype)
      return om__fail(OM_ERR_DTYPE_MISMATCH, "meshgrid: tensor %d is %s, tensor 0 %s (all must match)", k,
                      om_dtype_name(ts[k]->dtype), om_dtype_name(ts[0]->dtype)), -1;
    grid[k] = ts[k]->ndim ? ts[k]->shape[0] : 1;
  }
  bool swap = xy && n > 1;
  if (swap) grid[0] = grid[1], grid[1] = ts[0]->ndim ? ts[0]->shape[0] : 1;
  for (int k = 0; k < n; k++) {
    int at = swap && k < 2 ? 1 - k : k;
    int64_t view[OM_MAX_DIMS], to[OM_MAX_DIMS];
    for (int j = 0; j < n; j++) view[j] = j == at ? -1 : 1, to[j] = j == at ? -1 : grid[j];
    om_tensor *v = om_reshape(ts[k], view, n);
    out[k] = v ? om_expand(v, to, n) : NULL;
    om_tensor_release(v);
    if (!out[k]) {
      om__release_all(out, k);
      return -1;
    }
  }
  return n;
}

int om_split(om_tensor *a, int64_t split_size, int dim, om_tensor **out, int max_out) {
  if (!om__check_inputs("split", &a, 1)) return -1;
  int d = om__wrap_dim(dim, a->ndim, "split");
  if (d < 0) return -1;
  if (split_size < 1) return om__fail(OM_ERR_INVALID_ARGUMENT, "split: size %lld must be positive", (long long)split_size), -1;
  int64_t size = a->shape[d], n = size ? (size - 1) / split_size + 1 : 1;
  if (!out || n > max_out)
    return om__fail(OM_ERR_INVALID_ARGUMENT, "split: %lld pieces do not fit in %d outputs", (long long)n, max_out), -1;
  for (int64_t k = 0; k < n; k++) {
    out[k] = om_slice(a, d, k * split_size, (k + 1) * split_size, 1);
    if (!out[k]) {
      om__release_all(out, (int)k);
      return -1;
    }
  }
  return (int)n;
}

int om_split_sizes(om_tensor *a, const int64_t *sizes, int n, int dim, om_tensor **out) {
  if (!om__check_inputs("split", &a, 1)) return -1;
  int d = om__wrap_dim(dim, a->ndim, "split");
  if (d < 0) return -1;
  if (n < 1 || !sizes || !out) return om__fail(OM_ERR_INVALID_ARGUMENT, "split: needs at least one size"), -1;
  for (int k = 0; k < n; k++)
    if (sizes[k] < 0) return om__fail(OM_ERR_INVALID_ARGUMENT, "split: size %lld (at %d) must not be negative", (long long)sizes[k], k), -1;
  int64_t total = 0;
  for (int k = 0; k < n; k++) {
    if (sizes[k] > a->shape[d] - total) /* PyTorch's check, without overflow */
      return om__fail(OM_ERR_SHAPE_MISMATCH, "split: the sizes sum to more than %lld (the size of dim %d)", (long long)a->shape[d], d), -1;
    total += sizes[k];
  }
  if (total != a->shape[d])
    return om__fail(OM_ERR_SHAPE_MISMATCH, "split: the sizes sum to %lld, not %lld (the size of dim %d)", (long long)total, (long long)a->shape[d], d), -1;
  int64_t start = 0;
  for (int k = 0; k < n; start += sizes[k], k++) {
    out[k] = om_slice(a, d, start, start + sizes[k], 1);
    if (!out[k]) {
      om__release_all(out, k);
      return -1;
    }
  }
  return n;
}

int om_chunk(om_tensor *a, int64_t chunks, int dim, om_tensor **out, int max_out) {
  if (!om__check_inputs("chunk", &a, 1)) return -1;
  int d = om__wrap_dim(dim, a->ndim, "chunk");
  if (d < 0) return -1;
  if (chunks < 1) return om__fail(OM_ERR_INVALID_ARGUMENT, "chunk: chunks %lld must be positive", (long long)chunks), -1;
  int64_t size = a->shape[d];
  if (size) return om_split(a, size / chunks + (size % chunks != 0), d, out, max_out); /* ceil(size / chunks): maybe fewer pieces */
  /* an empty dim gives `chunks` empty pieces, as PyTorch (a split would give one) */
  if (!out || chunks > max_out)
    return om__fail(OM_ERR_INVALID_ARGUMENT, "chunk: %lld pieces do not fit in %d outputs", (long long)chunks, max_out), -1;
  int64_t *zeros = om__alloc(sizeof(int64_t) * (uint64_t)chunks, "chunk");
  if (!zeros) return -1;
  memset(zeros, 0, sizeof(int64_t) * (size_t)chunks);
  int r = om_split_sizes(a, zeros, (int)chunks, d, out);
  free(zeros);
  return r;
}

/* ---- as_strided, as_strided_scatter: elements chosen by position, as PyTorch's ----
 * Attrs: size[0..n), stride[0..n), storage_offset (2n + 1 of them). as_strided's positions count
 * elements of the input's storage (PyTorch's Tensor.as_strided), so a view of a view reads what
 * PyTorch's does; as_strided_scatter's count the input's elements in row-major order (PyTorch's
 * for a contiguous input), so its result does not depend on the input's layout. Autograd's writes through views (src/tensor/tensor.c) record as_strided_scatter into the
 * base and give its other views as_strided of it (PyTorch's CopySlices). */

static bool infer_strided_geometry(om_call *c, const char *who, int64_t *n_out) {
  int64_t *at = c->attrs.i;
  if (c->attrs.n_i > 2 * OM_MAX_DIMS + 1)
    return om__fail(OM_ERR_INVALID_ARGUMENT, "%s: needs size, stride (one per dim, at most %d dims) and storage_offset", who, OM_MAX_DIMS);
  int nd = c->attrs.n_i / 2;
  if (c->attrs.n_i % 2 == 0) { /* no storage_offset: the input's own (PyTorch's None; as_strided_scatter: 0) */
    at[2 * nd] = c->op == OM_OP_as_strided ? c->in[0]->offset : 0;
    c->attrs.n_i++;
  }
  int64_t last = at[2 * nd], n = om__numel(at, nd, who);
  if (n < 0) return false;
  if (last < 0) return om__fail(OM_ERR_INVALID_ARGUMENT, "%s: invalid storage offset %lld", who, (long long)last);
  for (int d = 0; d < nd; d++) {
    if (at[nd + d] < 0) return om__fail(OM_ERR_INVALID_ARGUMENT, "%s: negative strides are not supported (stride %lld of dim %d)", who, (long long)at[nd + d], d);
    if (n) last += (at[d] - 1) * at[nd + d];
  }
  /* as_strided reads x's storage; as_strided_scatter counts x's elements in row-major order */
  const om_tensor *x = c->in[0];
  bool scatter = c->op == OM_OP_as_strided_scatter;
  int64_t held = scatter ? om_tensor_numel(x) : (int64_t)(x->storage->nbytes / om__dtype_size(x->dtype));
  bool phantom = !scatter && x->storage->nbytes == 0 && om_tensor_numel(x) > 0; /* a trace's run at other sizes: no storage */
  if (n && !phantom && last >= held)
    return om__fail(OM_ERR_INDEX_OUT_OF_RANGE, "%s: size, stride and storage offset %lld reach element %lld of %s of %lld",
                    who, (long long)at[2 * nd], (long long)last, scatter ? "an input" : "a storage", (long long)held);
  *n_out = n;
  return true;
}

/* Storage positions of the elements of a geometry, row-major. */
static void strided_positions(const int64_t *shape, const int64_t *strides, int nd, int64_t offset, int64_t n, int64_t *pos) {
  int64_t idx[OM_MAX_DIMS] = {0};
  for (int64_t k = 0; k < n; k++) {
    int64_t p = offset;
    for (int d = 0; d < nd; d++) p += idx[d] * strides[d];
    pos[k] = p;
    for (int d = nd - 1; d >= 0 && ++idx[d] == shape[d]; d--) idx[d] = 0;
  }
}

/* The geometry's elements (attrs of a call on x) as x's elements: for each, the row-major index
 * of the element of x at its storage position, or -1 where x has none there. count (optional)
 * gets, per element of x, how many elements of x share its position (an expanded x). A new
 * array of n entries, NULL on error (out of memory). */
typedef struct strided_map {
  int64_t *of;    /* n: index into x, or -1 */
  int64_t *count; /* numel(x): elements of x at that element's position */
  int64_t *xpos;  /* numel(x): the storage position of each element of x */
  int64_t lo;     /* the smallest position of x */
} strided_map;

static void strided_map_free(strided_map *m) { free(m->of), free(m->count), free(m->xpos); }

static bool strided_map_make(const om_tensor *x, const int64_t *at, int n_at, int64_t n, strided_map *m, const char *who) {
  int nd = (n_at - 1) / 2;
  int64_t nx = om_tensor_numel(x), hi = -1;
  memset(m, 0, sizeof *m);
  m->of = om__alloc(sizeof(int64_t) * (size_t)(n ? n : 1), who);
  m->xpos = om__alloc(sizeof(int64_t) * (size_t)(nx ? nx : 1), who);
  m->count = om__alloc(sizeof(int64_t) * (size_t)(nx ? nx : 1), who);
  int64_t *table = NULL, *hits = NULL;
  bool ok = m->of && m->xpos && m->count;
  if (ok) {
    strided_positions(x->shape, x->strides, x->ndim, x->offset, nx, m->xpos);
    m->lo = nx ? m->xpos[0] : 0;
    for (int64_t i = 0; i < nx; i++) m->lo = m->xpos[i] < m->lo ? m->xpos[i] : m->lo, hi = m->xpos[i] > hi ? m->xpos[i] : hi;
    size_t span = (size_t)(hi - m->lo + 1);
    ok = (table = om__alloc(sizeof(int64_t) * (span ? span : 1), who)) && (hits = calloc(span ? span : 1, sizeof(int64_t)));
    if (ok) {
      for (size_t p = 0; p < span; p++) table[p] = -1;
      for (int64_t i = 0; i < nx; i++) table[m->xpos[i] - m->lo] = table[m->xpos[i] - m->lo] < 0 ? i : table[m->xpos[i] - m->lo], hits[m->xpos[i] - m->lo]++;
      for (int64_t i = 0; i < nx; i++) m->count[i] = hits[m->xpos[i] - m->lo];
      strided_positions(at, at + nd, nd, at[2 * nd], n, m->of);
      for (int64_t k = 0; k < n; k++) m->of[k] = m->of[k] >= m->lo && m->of[k] <= hi ? table[m->of[k] - m->lo] : -1;
    } else if (!hits) {
      ok = om__fail(OM_ERR_OUT_OF_MEMORY, "%s: out of memory", who);
    }
  }
  free(table), free(hits);
  if (!ok) strided_map_free(m);
  return ok;
}

static bool infer_as_strided(om_call *c) {
  int64_t n;
  if (!infer_strided_geometry(c, "as_strided", &n)) return false;
  int nd = (c->attrs.n_i - 1) / 2;
  meta_from(&c->out_meta[0], c->in[0]->dtype, c->attrs.i, nd);
  return true;
}

static bool forward_as_strided(om_call *c) {
  int nd = (c->attrs.n_i - 1) / 2;
  om_tensor *o = c->out[0];
  memcpy(o->strides, c->attrs.i + nd, sizeof(int64_t) * (size_t)nd);
  o->offset = c->attrs.i[2 * nd];
  return true;
}

/* Each gradient element goes to the storage position it was read from, summed there; an element
 * of x gets its position's sum (divided among the elements of an expanded x that share it, as
 * PyTorch's as_strided_backward); positions x does not hold get nothing. */
static bool as_strided_backward(const om_record *r, om_tensor *const *g, om_tensor **gin) {
  const om_tensor *x = r->in[0];
  int64_t n = om_tensor_numel(g[0]), nx = om_tensor_numel(x);
  strided_map m;
  om_tensor *gc = om_contiguous(g[0]);
  om_meta xm = {.dtype = OM_FLOAT32, .ndim = x->ndim};
  memcpy(xm.shape, x->shape, sizeof xm.shape);
  om_tensor *gx = gc ? om__tensor_new(&xm, true, "as_strided") : NULL;
  bool ok = gx && strided_map_make(x, r->attrs.i, r->attrs.n_i, n, &m, "as_strided");
  if (ok) {
    const float *gv = (const float *)om__data(gc);
    float *out = (float *)om__data(gx);
    for (int64_t k = 0; k < n; k++) /* summed at the first element of x at that position */
      if (m.of[k] >= 0) out[m.of[k]] += gv[k];
    for (int64_t i = 0; i < nx; i++) /* every element sharing a position takes its share */
      if (m.count[i] > 1) {
        int64_t first = i;
        for (int64_t j = 0; j < i; j++)
          if (m.xpos[j] == m.xpos[i]) { first = j; break; }
        if (first == i) out[i] /= (float)m.count[i];
        else out[i] = out[first];
      }
    strided_map_free(&m);
  }
  om_tensor_release(gc);
  if (!ok) om_tensor_release(gx);
  gin[0] = ok ? gx : NULL;
  return ok;
}

/* x's elements flattened, then one Gather of the positions' indices: the storage of a traced
 * value is the example run's, so only fixed sizes have one answer. */
static bool lower_as_strided(om_lower *l, const om_call *c) {
  const om_tensor *x = c->in[0];
  for (int d = 0; d < x->ndim; d++)
    if (om__lower_in_ext(l, 0, d) >= 0) return om__lower_baked(l, c, 0, d, "as_strided picks storage positions, which are the example's");
  int64_t n = om__numel(c->out_meta[0].shape, c->out_meta[0].ndim, "as_strided"), nx = om_tensor_numel(x);
  strided_map m;
  if (!strided_map_make(x, c->attrs.i, c->attrs.n_i, n, &m, "as_strided")) return false;
  bool outside = false;
  for (int64_t k = 0; k < n; k++) outside |= m.of[k] < 0;
  if (outside) {
    strided_map_free(&m);
    return om__lower_refuse(l, c, "it reads storage outside its input's elements, which a graph value does not have");
  }
  om_meta flat = {.dtype = x->dtype, .ndim = 1, .shape = {nx}}, picked = {.dtype = x->dtype, .ndim = 1, .shape = {n}};
  int64_t minus1 = -1;
  int in[2] = {om__lower_input(l, 0), om__lower_ints(l, &minus1, 1)}, f, p, o;
  bool ok = in[1] >= 0 && om__emit(l, "Reshape", in, 2, &flat, 1, &f, NULL, 0);
  int idx = ok ? om__lower_ints(l, m.of, (int)n) : -1;
  ok = ok && idx >= 0 && om__emit(l, "Gather", (int[]){f, idx}, 2, &picked, 1, &p, &OM_ATTR_INT("axis", 0), 1);
  int shape = ok ? om__lower_ints(l, c->out_meta[0].shape, c->out_meta[0].ndim) : -1;
  ok = ok && shape >= 0 && om__emit(l, "Reshape", (int[]){p, shape}, 2, &c->out_meta[0], 1, &o, NULL, 0);
  strided_map_free(&m);
  if (ok) om__lower_output(l, 0, o);
  return ok;
}

const om_op_def om__op_as_strided = {
    .name = "as_strided", .n_in = 1, .n_out = 1, .view = true, .infer = infer_as_strided, .forward = forward_as_strided,
    .backward = as_strided_backward, .lower = lower_as_strided, .onnx = "Reshape, Gather, Reshape (fixed sizes)",
    .test = {.n_in = 1, .ndims = {2}, .shapes = {{3, 4}}, .lo = -2, .hi = 2, .attrs = {.n_i = 5, .i = {3, 2, 1, 3, 1}},
             .size_attrs = 1, .empty_refusal = "reach element", .layout_dependent = true}};

static bool infer_as_strided_scatter(om_call *c) {
  int64_t n;
  if (!infer_strided_geometry(c, "as_strided_scatter", &n)) return false;
  const om_tensor *x = c->in[0], *src = c->in[1];
  int nd = (c->attrs.n_i - 1) / 2;
  if (src->ndim != nd || memcmp(src->shape, c->attrs.i, sizeof(int64_t) * (size_t)nd))
    return fail_shape("as_strided_scatter", "source of shape", src, c->attrs.i, nd);
  if (src->dtype != x->dtype)
    return om__fail(OM_ERR_DTYPE_MISMATCH, "as_strided_scatter: source is %s, the input %s", om_dtype_name(src->dtype), om_dtype_name(x->dtype));
  meta_from(&c->out_meta[0], x->dtype, x->shape, x->ndim);
  return true;
}

/* The elements a scatter writes, as indices into x's elements in row-major order (a new array
 * of n), refused where PyTorch refuses the write: two written elements at one place. */
static int64_t *scatter_map(const om_attrs *a, int64_t n) {
  int nd = (a->n_i - 1) / 2;
  int64_t *of = om__alloc(sizeof(int64_t) * (size_t)(n ? n : 1), "as_strided_scatter");
  if (!of) return NULL;
  strided_positions(a->i, a->i + nd, nd, a->i[2 * nd], n, of);
  bool shared = false; /* positions of one geometry repeat only where a stride is 0 over a size above 1 */
  for (int d = 0; d < nd; d++) shared |= a->i[nd + d] == 0 && a->i[d] > 1;
  for (int64_t k = 1; shared && k < n; k++)
    for (int64_t j = 0; j < k; j++)
      if (of[j] == of[k]) {
        free(of);
        return om__fail(OM_ERR_INVALID_ARGUMENT, "as_strided_scatter: unsupported operation: some elements of the input tensor "
                        "and the written-to tensor refer to a single memory location"), NULL;
      }
  return of;
}

static bool forward_as_strided_scatter(om_call *c) {
  om_tensor *o = c->out[0];
  int64_t n = om_tensor_numel(c->in[1]), *of = scatter_map(&c->attrs, n);
  om_tensor *src = of ? om_contiguous(c->in[1]) : NULL;
  if (src) {
    om__copy_into(o, c->in[0]);
    size_t es = om__dtype_size(o->dtype);
    for (int64_t k = 0; k < n; k++) memcpy(om__data(o) + of[k] * (int64_t)es, om__data(src) + k * (int64_t)es, es);
  }
  free(of);
  om_tensor_release(src);
  return src != NULL;
}

/* The written elements take their gradient from the source; x's gradient is zero there. */
static bool as_strided_scatter_backward(const om_record *r, om_tensor *const *g, om_tensor **gin) {
  int64_t n = om_tensor_numel(r->in[1]), *of = scatter_map(&r->attrs, n);
  om_tensor *gx = of ? om_contiguous(g[0]) : NULL, *gs = NULL;
  if (gx && gx == g[0]) { /* a copy of its own, zeroed below */
    om_tensor_release(gx);
    gx = om_clone(g[0]);
  }
  om_meta sm = {.dtype = OM_FLOAT32, .ndim = r->in[1]->ndim};
  memcpy(sm.shape, r->in[1]->shape, sizeof sm.shape);
  if (gx && (gs = om__tensor_new(&sm, false, "as_strided_scatter"))) {
    float *xv = (float *)om__data(gx), *sv = (float *)om__data(gs);
    for (int64_t k = 0; k < n; k++) sv[k] = xv[of[k]];
    for (int64_t k = 0; k < n; k++) xv[of[k]] = 0;
  }
  free(of);
  if (!gs) om_tensor_release(gx), gx = NULL;
  gin[0] = gx;
  gin[1] = gs;
  return gs != NULL;
}

/* ScatterND into x flattened, at the written elements' indices (fixed sizes, as as_strided). */
static bool lower_as_strided_scatter(om_lower *l, const om_call *c) {
  const om_tensor *x = c->in[0], *src = c->in[1];
  for (int i = 0; i < 2; i++)
    for (int d = 0; d < c->in[i]->ndim; d++)
      if (om__lower_in_ext(l, i, d) >= 0) return om__lower_baked(l, c, i, d, "as_strided_scatter's positions are fixed numbers");
  int64_t n = om_tensor_numel(src), nx = om_tensor_numel(x), minus1 = -1, *of = scatter_map(&c->attrs, n);
  if (!of) return false;
  om_meta flat = {.dtype = x->dtype, .ndim = 1, .shape = {nx}}, upd = {.dtype = x->dtype, .ndim = 1, .shape = {n}};
  om_meta im2 = {.dtype = OM_INT64, .ndim = 2, .shape = {n, 1}};
  int64_t two[2] = {n, 1};
  int m1 = om__lower_ints(l, &minus1, 1), f, u, s, o, idx2;
  bool ok = m1 >= 0 && om__emit(l, "Reshape", (int[]){om__lower_input(l, 0), m1}, 2, &flat, 1, &f, NULL, 0) &&
            om__emit(l, "Reshape", (int[]){om__lower_input(l, 1), m1}, 2, &upd, 1, &u, NULL, 0);
  int idx = ok ? om__lower_ints(l, of, (int)n) : -1, shape2 = ok ? om__lower_ints(l, two, 2) : -1;
  ok = ok && idx >= 0 && shape2 >= 0 && om__emit(l, "Reshape", (int[]){idx, shape2}, 2, &im2, 1, &idx2, NULL, 0) &&
       om__emit(l, "ScatterND", (int[]){f, idx2, u}, 3, &flat, 1, &s, NULL, 0);
  int shape = ok ? om__lower_ints(l, x->shape, x->ndim) : -1;
  ok = ok && shape >= 0 && om__emit(l, "Reshape", (int[]){s, shape}, 2, &c->out_meta[0], 1, &o, NULL, 0);
  free(of);
  if (ok) om__lower_output(l, 0, o);
  return ok;
}

const om_op_def om__op_as_strided_scatter = {
    .name = "as_strided_scatter", .n_in = 2, .n_out = 1, .infer = infer_as_strided_scatter,
    .forward = forward_as_strided_scatter, .backward = as_strided_scatter_backward, .lower = lower_as_strided_scatter,
    .onnx = "Reshape, ScatterND, Reshape (fixed sizes)",
    .test = {.n_in = 2, .ndims = {2, 2}, .shapes = {{3, 4}, {3, 2}}, .lo = -2, .hi = 2, .attrs = {.n_i = 5, .i = {3, 2, 1, 3, 1}},
             .size_attrs = 1, .empty_refusal = "reach element|does not fit"}};

static bool strided_attrs(om_attrs *a, const int64_t *size, const int64_t *stride, int ndim, int64_t offset, const char *who) {
  if (ndim < 0 || ndim > OM_MAX_DIMS || (ndim && (!size || !stride)))
    return om__fail(OM_ERR_INVALID_ARGUMENT, "%s: %d dims (at most %d, size and stride given)", who, ndim, OM_MAX_DIMS);
  *a = (om_attrs){.n_i = 2 * ndim + 1};
  if (ndim) memcpy(a->i, size, sizeof(int64_t) * (size_t)ndim), memcpy(a->i + ndim, stride, sizeof(int64_t) * (size_t)ndim);
  a->i[2 * ndim] = offset;
  return true;
}

om_tensor *om_as_strided(om_tensor *a, const int64_t *size, const int64_t *stride, int ndim, int64_t storage_offset) {
  om_attrs at;
  return strided_attrs(&at, size, stride, ndim, storage_offset, "as_strided") ? om__apply1(OM_OP_as_strided, &a, 1, &at) : NULL;
}

om_tensor *om_as_strided_scatter(om_tensor *input, om_tensor *src, const int64_t *size, const int64_t *stride, int ndim,
                                 int64_t storage_offset) {
  om_attrs at;
  return strided_attrs(&at, size, stride, ndim, storage_offset, "as_strided_scatter")
             ? om__apply1(OM_OP_as_strided_scatter, (om_tensor *[]){input, src}, 2, &at) : NULL;
}
