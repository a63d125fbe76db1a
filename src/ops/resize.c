/* interpolate: 2-D resampling of NCHW float32 images, as torch.nn.functional.interpolate with
 * mode 'nearest' (PyTorch's legacy nearest: src = floor(dst * scale)) or 'bilinear' (with
 * align_corners false or true). The sampling is separable: out[n,c] = A_h x[n,c] A_w^T with
 * A_h [out_h, in_h] and A_w [out_w, in_w] holding at most two weights a row, so the backward
 * (the adjoint) is A_h^T g A_w, written with matmul on those constant matrices: exact,
 * differentiable again, and traceable. Lowered to one ONNX Resize (opset 19+). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* attrs.i: [mode, align_corners, out_h, out_w, has_scale]; attrs.f: [scale_h, scale_w].
 * The caller gives out_h/out_w (size) with has_scale 0, or the scales with has_scale 1 (then
 * infer writes the output size, floor(in * scale) as PyTorch computes it in double). */
enum { MODE_NEAREST = 0, MODE_BILINEAR = 1 };

/* The source of output position dst along one axis: two source positions and their weights
 * (nearest: i1 = i0, l0 = 1, l1 = 0). PyTorch's arithmetic, in float as its CPU kernels. */
typedef struct taps {
  int64_t i0, i1;
  float l0, l1;
} taps;

static taps source_taps(int64_t in, int64_t out, int64_t dst, int mode, bool align_corners, bool has_scale, double scale) {
  taps t = {0, 0, 1.0f, 0.0f};
  if (mode == MODE_NEAREST) {
    /* nearest_idx: exact cases first, then floor(dst * scale) clamped */
    if (out == in) t.i0 = dst;
    else if (out == 2 * in) t.i0 = dst >> 1;
    else {
      float s = has_scale && scale > 0 ? (float)(1.0 / scale) : (float)in / (float)out;
      int64_t i = (int64_t)floorf((float)dst * s);
      t.i0 = i < in - 1 ? i : in - 1;
    }
    t.i1 = t.i0;
    return t;
  }
  /* area_pixel_compute_scale, area_pixel_compute_source_index, guard_index_and_lambda */
  float s = align_corners ? (out > 1 ? (float)(in - 1) / (float)(out - 1) : 0.0f)
                          : (has_scale && scale > 0 ? (float)(1.0 / scale) : (float)in / (float)out);
  float src = align_corners ? s * (float)dst : s * ((float)dst + 0.5f) - 0.5f;
  if (src < 0) src = 0;
  int64_t i = (int64_t)floorf(src);
  if (i > in - 1) i = in - 1;
  float lambda = src - (float)i;
  lambda = lambda < 0 ? 0 : lambda > 1 ? 1 : lambda;
  t.i0 = i;
  t.i1 = i + (i < in - 1 ? 1 : 0);
  t.l1 = lambda;
  t.l0 = 1.0f - lambda;
  return t;
}

static taps axis_taps(const om_attrs *a, int axis, int64_t in, int64_t dst) {
  return source_taps(in, a->i[2 + axis], dst, (int)a->i[0], a->i[1] != 0, a->i[4] != 0, a->f[axis]);
}

static bool infer_interpolate(om_call *c) {
  const om_tensor *x = c->in[0];
  om_attrs *a = &c->attrs;
  char xs[OM_SHAPE_STR_LEN];
  if (x->ndim != 4)
    return om__fail(OM_ERR_SHAPE_MISMATCH, "interpolate: takes a 4-D input [N, C, H, W], got %s",
                    om__shape_str(xs, sizeof xs, x->shape, x->ndim));
  if (x->dtype != OM_FLOAT32) return om__fail(OM_ERR_DTYPE_MISMATCH, "interpolate: takes float32, not %s", om_dtype_name(x->dtype));
  if (a->n_i != 5 || a->n_f != 2)
    return om__fail(OM_ERR_INVALID_ARGUMENT, "interpolate: takes attributes [mode, align_corners, out_h, out_w, has_scale] "
                    "and [scale_h, scale_w], got %d and %d", a->n_i, a->n_f);
  if (a->i[0] != MODE_NEAREST && a->i[0] != MODE_BILINEAR)
    return om__fail(OM_ERR_INVALID_ARGUMENT, "interpolate: mode %lld is not 0 (nearest) or 1 (bilinear)", (long long)a->i[0]);
  if (a->i[1] != 0 && a->i[1] != 1) return om__fail(OM_ERR_INVALID_ARGUMENT, "interpolate: align_corners must be 0 or 1");
  if (a->i[1] && a->i[0] == MODE_NEAREST)
    return om__fail(OM_ERR_INVALID_ARGUMENT, "interpolate: align_corners can only be set with mode 'bilinear', not 'nearest'");
  if (a->i[4] != 0 && a->i[4] != 1) return om__fail(OM_ERR_INVALID_ARGUMENT, "interpolate: has_scale must be 0 or 1");
  for (int k = 0; k < 2; k++) {
    int64_t in = x->shape[2 + k];
    if (a->i[4]) {
      double s = a->f[k];
      if (!(s > 0) || !isfinite(s))
        return om__fail(OM_ERR_INVALID_ARGUMENT, "interpolate: scale_factor %g must be positive and finite", s);
      double o = floor((double)in * s);
      if (o > (double)INT32_MAX) return om__fail(OM_ERR_INVALID_ARGUMENT, "interpolate: output size %g is too large", o);
      a->i[2 + k] = (int64_t)o;
    } else {
      a->f[k] = 0;
    }
  }
  for (int k = 0; k < 2; k++)
    if (x->shape[2 + k] <= 0 || a->i[2 + k] <= 0)
      return om__fail(OM_ERR_INVALID_ARGUMENT, "interpolate: input and output sizes must be greater than 0, got input %s "
                      "and output (%lld, %lld)", om__shape_str(xs, sizeof xs, x->shape, x->ndim), (long long)a->i[2], (long long)a->i[3]);
  om_meta *m = &c->out_meta[0];
  *m = (om_meta){.dtype = OM_FLOAT32, .ndim = 4, .shape = {x->shape[0], x->shape[1], a->i[2], a->i[3]}};
  return true;
}

/* x [N, C, H, W] (any strides) -> out [N, C, OH, OW] contiguous. */
static bool forward_interpolate(om_call *c) {
  const om_tensor *x = c->in[0];
  const om_attrs *a = &c->attrs;
  int64_t planes = x->shape[0] * x->shape[1], ih = x->shape[2], iw = x->shape[3], oh = a->i[2], ow = a->i[3];
  taps *tw = om__alloc(sizeof(taps) * (uint64_t)ow, "interpolate");
  if (!tw) return false;
  for (int64_t j = 0; j < ow; j++) tw[j] = axis_taps(a, 1, iw, j);
  const float *px = (const float *)om__data(x);
  float *po = (float *)om__data(c->out[0]);
  const int64_t *st = x->strides;
  for (int64_t p = 0; p < planes; p++) {
    const float *plane = px + (p / x->shape[1]) * st[0] + (p % x->shape[1]) * st[1];
    for (int64_t i = 0; i < oh; i++) {
      taps th = axis_taps(a, 0, ih, i);
      const float *r0 = plane + th.i0 * st[2], *r1 = plane + th.i1 * st[2];
      float *o = po + (p * oh + i) * ow;
      if (a->i[0] == MODE_NEAREST) {
        for (int64_t j = 0; j < ow; j++) o[j] = r0[tw[j].i0 * st[3]];
        continue;
      }
      for (int64_t j = 0; j < ow; j++) {
        const taps *t = &tw[j];
        float top = t->l0 * r0[t->i0 * st[3]] + t->l1 * r0[t->i1 * st[3]];
        float bottom = t->l0 * r1[t->i0 * st[3]] + t->l1 * r1[t->i1 * st[3]];
        o[j] = th.l0 * top + th.l1 * bottom;
      }
    }
  }
  free(tw);
  return true;
}

/* A [out, in] along one axis: row o holds the taps of output o (a repeated source adds up). */
static om_tensor *sampling_matrix(const om_attrs *a, int axis, int64_t in) {
  int64_t out = a->i[2 + axis];
  float *m = om__alloc(sizeof(float) * (uint64_t)out * (uint64_t)in, "interpolate");
  if (!m) return NULL;
  memset(m, 0, sizeof(float) * (size_t)(out * in));
  for (int64_t o = 0; o < out; o++) {
    taps t = axis_taps(a, axis, in, o);
    m[o * in + t.i0] += t.l0;
    m[o * in + t.i1] += t.l1;
  }
  om_tensor *r = om_from_data(m, (int64_t[]){out, in}, 2, OM_FLOAT32);
  free(m);
  return r;
}

/* dx = A_h^T g A_w: [ih, oh] @ ([N, C, oh, ow] @ [ow, iw]) */
static bool interpolate_backward(const om_record *r, om_tensor *const *g, om_tensor **gin) {
  if (!om__wants(r, 0)) return true;
  om_scope s = {0};
  const om_tensor *x = r->in[0];
  om_tensor *ah = om__keep(&s, sampling_matrix(&r->attrs, 0, x->shape[2]));
  om_tensor *aw = om__keep(&s, sampling_matrix(&r->attrs, 1, x->shape[3]));
  om_tensor *ga = ah && aw ? om__keep(&s, om_matmul(g[0], aw)) : NULL;
  om_tensor *aht = ga ? om__keep(&s, om_transpose(ah, 0, 1)) : NULL;
  gin[0] = aht ? om_matmul(aht, ga) : NULL;
  om__scope_end(&s);
  return gin[0] != NULL;
}

/* The output's spatial axes are the size the caller gave (computed from sizes or not); with a
 * scale factor the probe finds floor(h * scale) itself (derives_extents). */
static bool extents_interpolate(om_lower *l, const om_call *c) {
  (void)c;
  for (int d = 2; d < 4 && !om__lower_given(l)->i[4]; d++) om__lower_candidate(l, 0, d, om__lower_arg(l, d));
  return true;
}

/* Resize on axes 2 and 3 with an empty roi and `scales` (a scale factor was given, so the same
 * scale drives the coordinates as in PyTorch) or `sizes`. */
static bool lower_interpolate(om_lower *l, const om_call *c) {
  const om_attrs *a = &c->attrs;
  bool nearest = a->i[0] == MODE_NEAREST;
  for (int d = 2; d < 4; d++)
    if (om__lower_input_sym(l, 0, d))
      return om__lower_baked(l, c, 0, d, "a symbolic spatial axis into interpolate (the output size is fixed when traced)");
  om_gattr at[4] = {
      OM_ATTR_STRING("mode", nearest ? "nearest" : "linear"),
      OM_ATTR_STRING("coordinate_transformation_mode", nearest ? "asymmetric" : a->i[1] ? "align_corners" : "half_pixel"),
      OM_ATTR_INTS("axes", ((int64_t[]){2, 3}), 2),
      OM_ATTR_STRING("nearest_mode", "floor"),
  };
  int in[4] = {om__lower_input(l, 0), -1, -1, -1}, out;
  if (a->i[4]) {
    float sc[2] = {(float)a->f[0], (float)a->f[1]};
    const int64_t *in_shape = c->in[0]->shape;
    if (!nearest && !a->i[1] && a->i[2] == in_shape[2] && a->i[3] == in_shape[3] && (sc[0] != 1 || sc[1] != 1))
      return om__lower_refuse(l, c, "the output keeps the input's size, which onnxruntime's Resize copies, while PyTorch's "
                                    "bilinear resamples with the scale factor; pass size (or recompute_scale_factor) instead");
    /* PyTorch's nearest copies (out == in) or halves (out == 2 in) whatever the scale: say so exactly */
    for (int k = 0; k < 2 && nearest; k++) {
      int64_t in_k = c->in[0]->shape[2 + k], out_k = a->i[2 + k];
      if (out_k == in_k || out_k == 2 * in_k) sc[k] = (float)(out_k / in_k);
    }
    /* ONNX computes the output size from the float scale: onnxruntime's kernel in float
     * arithmetic, its shape inference in double; both must give PyTorch's size */
    for (int k = 0; k < 2; k++) {
      int64_t in_k = c->in[0]->shape[2 + k];
      if ((int64_t)floorf(sc[k] * (float)in_k) != a->i[2 + k] || (int64_t)floor((double)sc[k] * (double)in_k) != a->i[2 + k])
        return om__lower_refuse(l, c, "the scale factor rounded to float gives ONNX Resize another output size; pass size instead");
    }
    om_meta ms = {.dtype = OM_FLOAT32, .ndim = 1, .shape = {2}};
    if (!om__emit(l, "Constant", NULL, 0, &ms, 1, &in[2], &OM_ATTR_FLOATS("value_floats", sc, 2), 1)) return false;
  } else if ((in[3] = om__lower_ints(l, &a->i[2], 2)) < 0) {
    return false;
  }
  if (!om__emit(l, "Resize", in, a->i[4] ? 3 : 4, &c->out_meta[0], 1, &out, at, nearest ? 4 : 3)) return false;
  om__lower_output(l, 0, out);
  return true;
}

const om_op_def om__op_interpolate = {
    .name = "interpolate", .n_in = 1, .n_out = 1, .saves = 0,
    .infer = infer_interpolate, .forward = forward_interpolate, .backward = interpolate_backward,
    .lower = lower_interpolate, .extents = extents_interpolate, .derives_extents = true, .sym_args = 1 << 2 | 1 << 3,
    .onnx = "Resize (axes 2, 3; nearest: asymmetric, floor; bilinear: half_pixel or align_corners)",
    .test = {.n_in = 1, .ndims = {4}, .shapes = {{2, 2, 3, 4}}, .lo = -2, .hi = 2,
             .attrs = {.n_i = 5, .i = {MODE_BILINEAR, 0, 0, 0, 1}, .n_f = 2, .f = {1.5, 2.5}}}};

om_tensor *om_interpolate(om_tensor *x, const int64_t *size, const double *scale_factor, om_interpolate_mode mode,
                          bool align_corners) {
  if (!om__check_inputs("interpolate", &x, 1)) return NULL;
  if (!size == !scale_factor)
    return om__fail(OM_ERR_INVALID_ARGUMENT, "interpolate: give exactly one of size and scale_factor"), NULL;
  om_attrs a = {.n_i = 5, .n_f = 2,
                .i = {mode, align_corners, size ? size[0] : 0, size ? size[1] : 0, scale_factor != NULL},
                .f = {scale_factor ? scale_factor[0] : 0, scale_factor ? scale_factor[1] : 0}};
  return om__apply1(OM_OP_interpolate, &x, 1, &a);
}
