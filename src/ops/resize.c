/* interpolate: 2-D resampling of NCHW float32 images, as torch.nn.functional.interpolate with
 * mode 'nearest' (PyTorch's legacy nearest: src = floor(dst * scale)), 'bilinear' or 'bicubic'
 * (Keys' cubic convolution with a = -0.75, the edge rows and columns repeated; both with
 * align_corners false or true). The sampling is separable: out[n,c] = A_h x[n,c] A_w^T with
 * A_h [out_h, in_h] and A_w [out_w, in_w] holding at most four weights a row, so the backward
 * (the adjoint) is A_h^T g A_w, written with matmul on those constant matrices: exact,
 * differentiable again, and traceable. Lowered to ONNX Resize where onnxruntime computes the
 * kernel's source coordinates, else to Gathers of the kernel's own taps (lower_nearest,
 * lower_taps). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* attrs.i: [mode, align_corners, out_h, out_w, has_scale]; attrs.f: [scale_h, scale_w].
 * The caller gives out_h/out_w (size) with has_scale 0, or the scales with has_scale 1 (then
 * infer writes the output size, floor(in * scale) as PyTorch computes it in double) or 2
 * (PyTorch's recompute_scale_factor: the size so computed, then sampled as if given as size). */
enum { MODE_NEAREST = 0, MODE_BILINEAR = 1, MODE_BICUBIC = 2 };
enum { SIZE_GIVEN = 0, SCALE_GIVEN = 1, SCALE_RECOMPUTED = 2 };

/* Whether the scales give the sampling coordinates (has_scale 1): else the sizes do. */
static bool by_scale(const om_attrs *a) { return a->i[4] == SCALE_GIVEN; }

/* The source of output position dst along one axis: n source positions and their weights
 * (nearest: one, bilinear: two, bicubic: four; a position repeats where the taps reach past an
 * edge). PyTorch's arithmetic, in float as its CPU kernels. */
typedef struct taps {
  int64_t i[4];
  float l[4];
  int n;
} taps;

/* Keys' cubic convolution (a = -0.75, PyTorch's get_cubic_upsample_coefficients) at a distance x,
 * as steps v = v op operand from v = x, each one float operation: far (the taps 1 + t and 2 - t
 * away) ((a x - 5 a) x + 8 a) x - 4 a, near (t and 1 - t away) ((a + 2) x - (a + 3)) x x + 1.
 * Written once for the kernel (cubic_weights) and the graph (cubic_weights_computed), so both
 * round alike. */
#define CUBIC_A (-0.75f)
typedef struct cubic_step {
  char op;   /* '*', '-', '+'; 0 ends */
  bool by_x; /* the operand is x, else c */
  float c;
} cubic_step;
static const cubic_step CUBIC_FAR[] = {{'*', false, CUBIC_A}, {'-', false, 5.0f * CUBIC_A}, {'*', true, 0}, {'+', false, 8.0f * CUBIC_A},
                                       {'*', true, 0}, {'-', false, 4.0f * CUBIC_A}, {0, false, 0}};
static const cubic_step CUBIC_NEAR[] = {{'*', false, CUBIC_A + 2.0f}, {'-', false, CUBIC_A + 3.0f}, {'*', true, 0}, {'*', true, 0},
                                        {'+', false, 1.0f}, {0, false, 0}};

static float cubic_poly(const cubic_step *s, float x) {
  float v = x;
  for (; s->op; s++) {
    float y = s->by_x ? x : s->c;
    v = s->op == '*' ? v * y : s->op == '-' ? v - y : v + y;
  }
  return v;
}

/* The weights of the four taps around a source position t past the second. */
static void cubic_weights(float t, float w[4]) {
  float x2 = 1.0f - t;
  w[0] = cubic_poly(CUBIC_FAR, t + 1.0f);
  w[1] = cubic_poly(CUBIC_NEAR, t);
  w[2] = cubic_poly(CUBIC_NEAR, x2);
  w[3] = cubic_poly(CUBIC_FAR, x2 + 1.0f);
}

static taps source_taps(int64_t in, int64_t out, int64_t dst, int mode, bool align_corners, bool has_scale, double scale) {
  taps t = {.i = {0}, .l = {1.0f}, .n = 1};
  if (mode == MODE_NEAREST) {
    /* nearest_idx: exact cases first, then floor(dst * scale) clamped */
    if (out == in) t.i[0] = dst;
    else if (out == 2 * in) t.i[0] = dst >> 1;
    else {
      float s = has_scale && scale > 0 ? (float)(1.0 / scale) : (float)in / (float)out;
      int64_t i = (int64_t)floorf((float)dst * s);
      t.i[0] = i < in - 1 ? i : in - 1;
    }
    return t;
  }
  /* area_pixel_compute_scale, area_pixel_compute_source_index (clamped at 0 for bilinear only),
   * guard_index_and_lambda */
  float s = align_corners ? (out > 1 ? (float)(in - 1) / (float)(out - 1) : 0.0f)
                          : (has_scale && scale > 0 ? (float)(1.0 / scale) : (float)in / (float)out);
  float src = align_corners ? s * (float)dst : s * ((float)dst + 0.5f) - 0.5f;
  if (src < 0 && mode == MODE_BILINEAR) src = 0;
  int64_t i = (int64_t)floorf(src);
  if (i > in - 1) i = in - 1;
  float lambda = src - (float)i;
  lambda = lambda < 0 ? 0 : lambda > 1 ? 1 : lambda;
  if (mode == MODE_BICUBIC) {
    t.n = 4;
    cubic_weights(lambda, t.l);
    for (int k = 0; k < 4; k++) {
      int64_t p = i - 1 + k;
      t.i[k] = p < 0 ? 0 : p > in - 1 ? in - 1 : p;
    }
    return t;
  }
  t.n = 2;
  t.i[0] = i;
  t.i[1] = i + (i < in - 1 ? 1 : 0);
  t.l[1] = lambda;
  t.l[0] = 1.0f - lambda;
  return t;
}

static taps axis_taps(const om_attrs *a, int axis, int64_t in, int64_t dst) {
  return source_taps(in, a->i[2 + axis], dst, (int)a->i[0], a->i[1] != 0, by_scale(a), a->f[axis]);
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
  if (a->i[0] != MODE_NEAREST && a->i[0] != MODE_BILINEAR && a->i[0] != MODE_BICUBIC)
    return om__fail(OM_ERR_INVALID_ARGUMENT, "interpolate: mode %lld is not 0 (nearest), 1 (bilinear) or 2 (bicubic)", (long long)a->i[0]);
  if (a->i[1] != 0 && a->i[1] != 1) return om__fail(OM_ERR_INVALID_ARGUMENT, "interpolate: align_corners must be 0 or 1");
  if (a->i[1] && a->i[0] == MODE_NEAREST)
    return om__fail(OM_ERR_INVALID_ARGUMENT, "interpolate: align_corners can only be set with mode 'bilinear' or 'bicubic', not 'nearest'");
  if (a->i[4] < SIZE_GIVEN || a->i[4] > SCALE_RECOMPUTED)
    return om__fail(OM_ERR_INVALID_ARGUMENT, "interpolate: has_scale must be 0 (size), 1 (scale) or 2 (scale, recomputed), not %lld",
                    (long long)a->i[4]);
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

/* forward_interpolate's job: each part a run of `per` planes, each thread's rows of horizontal
 * taps (as many as an output row reads: 2 bilinear, 4 bicubic) in its scratch. */
typedef struct interp_job {
  const om_tensor *x;
  const om_attrs *a;
  const taps *th, *tw; /* the taps of each output row, then of each output column */
  float *out;
  int64_t per;
  float *scratch[OM_MAX_THREADS];
} interp_job;

/* Source row r's horizontal taps, what the output row th blends vertically: h[j] = l[0] r[i[0]]
 * + l[1] r[i[1]] (+ ...) for output column j, from one of th.n buffers (have[k]: the source row
 * buffer k holds) where it is there already, else computed into one holding no row th reads.
 * Each output row reads source rows in increasing order, so the rows the next output row shares
 * are there, computed once for both. */
static const float *h_row(const float *plane, int64_t r, const taps *th, const int64_t *st, const taps *tw, int64_t ow,
                          int64_t have[4], float *buf[4]) {
  int k = -1;
  for (int b = 0; b < th->n; b++) {
    if (have[b] == r) return buf[b];
    bool needed = false;
    for (int t = 0; t < th->n; t++) needed |= have[b] == th->i[t];
    if (!needed && k < 0) k = b;
  }
  const float *row = plane + r * st[2];
  for (int64_t j = 0; j < ow; j++) {
    const taps *w = &tw[j];
    float acc = w->l[0] * row[w->i[0] * st[3]];
    for (int t = 1; t < w->n; t++) acc = acc + w->l[t] * row[w->i[t] * st[3]];
    buf[k][j] = acc;
  }
  have[k] = r;
  return buf[k];
}

/* Planes [part per, (part + 1) per) of the output. Output (i, j) is l[0] h_0 + l[1] h_1 (+ ...)
 * with h_t the horizontal taps of the source rows it reads (h_row: the same expressions, so the
 * same bits as computing them for each output row), summed in PyTorch's order. */
static void interp_part(void *ctx, int64_t part, int worker) {
  const interp_job *j = ctx;
  const om_attrs *a = j->a;
  const int64_t *st = j->x->strides;
  int64_t c = j->x->shape[1], oh = a->i[2], ow = a->i[3];
  int64_t p1 = (part + 1) * j->per < j->x->shape[0] * c ? (part + 1) * j->per : j->x->shape[0] * c;
  for (int64_t p = part * j->per; p < p1; p++) {
    const float *plane = (const float *)om__data(j->x) + (p / c) * st[0] + (p % c) * st[1];
    int64_t have[4] = {-1, -1, -1, -1};
    float *buf[4] = {NULL};
    for (int b = 0; b < (a->i[0] == MODE_BICUBIC ? 4 : 2); b++) buf[b] = j->scratch[worker] + b * ow; /* the scratch holds n rows */
    for (int64_t i = 0; i < oh; i++) {
      const taps *th = &j->th[i];
      float *o = j->out + (p * oh + i) * ow;
      if (a->i[0] == MODE_NEAREST) {
        const float *r0 = plane + th->i[0] * st[2];
        for (int64_t x = 0; x < ow; x++) o[x] = r0[j->tw[x].i[0] * st[3]];
        continue;
      }
      const float *h[4];
      for (int t = 0; t < th->n; t++) h[t] = h_row(plane, th->i[t], th, st, j->tw, ow, have, buf);
      for (int64_t x = 0; x < ow; x++) {
        float acc = th->l[0] * h[0][x];
        for (int t = 1; t < th->n; t++) acc = acc + th->l[t] * h[t][x];
        o[x] = acc;
      }
    }
  }
}

/* x [N, C, H, W] (any strides) -> out [N, C, OH, OW] contiguous; on the pool, by planes (about
 * 3 multiply-adds an output bilinear, 8 bicubic). */
static bool forward_interpolate(om_call *c) {
  const om_tensor *x = c->in[0];
  const om_attrs *a = &c->attrs;
  int64_t planes = x->shape[0] * x->shape[1], oh = a->i[2], ow = a->i[3];
  if (planes == 0) return true;
  taps *th = om__alloc(sizeof(taps) * (uint64_t)(oh + ow), "interpolate");
  if (!th) return false;
  taps *tw = th + oh; /* after the test: an offset from NULL would be undefined */
  for (int64_t i = 0; i < oh; i++) th[i] = axis_taps(a, 0, x->shape[2], i);
  for (int64_t j = 0; j < ow; j++) tw[j] = axis_taps(a, 1, x->shape[3], j);
  interp_job j = {.x = x, .a = a, .th = th, .tw = tw, .out = (float *)om__data(c->out[0])};
  int n = a->i[0] == MODE_BICUBIC ? 4 : 2;
  int threads = om__job_threads((n == 4 ? 8.0 : 3.0) * (double)planes * (double)oh * (double)ow, planes);
  int64_t parts = om__few_parts(planes, threads);
  j.per = (planes + parts - 1) / parts;
  bool ok = true;
  for (int i = 0; ok && i < threads; i++) ok = (j.scratch[i] = om__scratch(i, n * ow, "interpolate")) != NULL;
  if (ok) om__parallel((planes + j.per - 1) / j.per, threads, interp_part, &j);
  om__scratch_done();
  free(th);
  return ok;
}

/* A [out, in] along one axis: row o holds the taps of output o (a repeated source adds up). */
static om_tensor *sampling_matrix(const om_attrs *a, int axis, int64_t in) {
  int64_t out = a->i[2 + axis];
  float *m = om__alloc(sizeof(float) * (uint64_t)out * (uint64_t)in, "interpolate");
  if (!m) return NULL;
  memset(m, 0, sizeof(float) * (size_t)(out * in));
  for (int64_t o = 0; o < out; o++) {
    taps t = axis_taps(a, axis, in, o);
    for (int k = 0; k < t.n; k++) m[o * in + t.i[k]] += t.l[k];
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
 * scale factor s (a constant), floor(double(h) * s) as infer computes it: where s is p / 2^k
 * (p < 2^21, k <= 30) that is the integer floor(p h / 2^k) (exact in double while p h is below
 * 2^53), otherwise the expression that computes it in double (docs/symbolic-axes.md, "Integers
 * rounded from a float product"): no floor division of integers is floor(h * 0.7) at every h. A
 * scale the model computes from the sizes is left to the probe (derives_extents). */
static bool extents_interpolate(om_lower *l, const om_call *c) {
  const om_attrs *a = om__lower_given(l);
  for (int d = 2; d < 4; d++) {
    int in_x = om__lower_in_ext(l, 0, d), x;
    double s = a->f[d - 2];
    if (!a->i[4]) {
      om__lower_candidate(l, 0, d, om__lower_arg(l, d));
      continue;
    }
    if (in_x < 0 || om__lower_farg_moves(l, d - 2) || !(s > 0)) continue;
    int k = 0;
    while (k < 30 && ldexp(s, k) != floor(ldexp(s, k))) k++;
    double p = ldexp(s, k);
    if (p == floor(p) && p < 0x1p21) x = om__lower_x_floordiv(l, om__lower_x_lin(l, (int64_t)p, in_x, 0, -1, 0), (int64_t)1 << k);
    else x = om__lower_x_fmul(l, in_x, s);
    if (x < 0) return false;
    om__lower_candidate(l, 0, d, x);
  }
  (void)c;
  return true;
}

/* Whether ONNX Resize's nearest (asymmetric, floor: floor(dst / s) in float) picks the eager
 * kernel's pixel (floor(dst * (float)(1 / s)), clamped) at every output position below 2^22 for
 * the integer s: a power of two gives exact products and quotients; otherwise the quotient is
 * exact and the product floors the same when (float)(1 / s) is 1 / s rounded up (a multiple of s
 * cannot fall below its quotient; one below the next multiple stays 1 / s under it, more than
 * the product's rounding error there) or rounded down by less than 2^-26 relative (the product at
 * a multiple rounds back up to it). tests/c/test_index.c checks the claim position by position. */
bool om__nearest_scale_exact(int64_t s) {
  if (s < 1 || s > 1 << 16) return false;
  if (!(s & (s - 1))) return true;
  double f = (float)(1.0 / (double)s), e = 1.0 - (double)s * f; /* s * f is exact in double */
  return e <= 0 || e < 0x1p-26;
}

/* The scale that makes ONNX Resize give axis k's output size from its input's at every size,
 * with the same coordinates as the eager kernel: 1 for a kept axis; with a scale factor, that
 * factor when it is a whole number or 1 / 2^j (both exact in float, and their products with a
 * size too); with a size, out / in when that is a whole number at every size (the extents divide
 * exactly: 2 w, or 2 floor(w / 2) of floor(w / 2)) or 1 / 2^j of it. 0 when there is none: the
 * output size is not a fixed multiple or fraction of the input's (size [h + 1, w]). */
static double resize_scale(om_lower *l, const om_call *c, int k) {
  const om_attrs *a = &c->attrs;
  if (by_scale(a)) {
    double s = a->f[k];
    int e;
    if (s >= 1 && s <= 1 << 16 && s == floor(s)) return s;
    return s < 1 && frexp(s, &e) == 0.5 ? s : 0;
  }
  int in_x = om__lower_in_x(l, 0, 2 + k), out_x = om__lower_out_ext(l, 0, 2 + k);
  if (out_x < 0) out_x = om__lower_x_const(l, a->i[2 + k]);
  int64_t r;
  int up = in_x >= 0 && out_x >= 0 ? om__lower_x_divexact(l, out_x, in_x) : -1;
  if (up >= 0 && om__lower_x_is_const(l, up, &r) && r >= 1 && r <= 1 << 16) return (double)r;
  int down = in_x >= 0 && out_x >= 0 ? om__lower_x_divexact(l, in_x, out_x) : -1;
  if (down >= 0 && om__lower_x_is_const(l, down, &r) && r >= 2 && r <= 1 << 16 && !(r & (r - 1))) return 1.0 / (double)r;
  return 0;
}

/* Resize by the constant scales sc of axes 2 and 3 (at: the node's attributes, axes among them). */
static bool resize_by_scales(om_lower *l, const om_call *c, const float *sc, const om_gattr *at, int n_at) {
  om_meta ms = {.dtype = OM_FLOAT32, .ndim = 1, .shape = {2}};
  int in[3] = {om__lower_input(l, 0), -1, -1}, out;
  if (!om__emit(l, "Constant", NULL, 0, &ms, 1, &in[2], &OM_ATTR_FLOATS("value_floats", sc, 2), 1) ||
      !om__emit(l, "Resize", in, 3, &c->out_meta[0], 1, &out, at, n_at))
    return false;
  om__lower_output(l, 0, out);
  return true;
}

/* An int64 [out] value of the source indices of nearest on a resized axis whose sizes change
 * with the symbols (in_x, out_x expressions), computed in the graph as the eager kernel does:
 * floor(dst * s) in float, clamped to in - 1, s = (float)(1 / scale) with a scale factor, else
 * (float)in / (float)out computed from the sizes. The kernel's exact cases (out == in copies,
 * out == 2 in halves) agree with that formula without a scale factor (s is 1 or 0.5 exactly);
 * with one, a Where picks them where they can happen (a scale between 1 and 2, 2 and 3). */
static int nearest_indices(om_lower *l, int in_x, int out_x, const om_attrs *a, int k) {
  om_meta idx = {.dtype = OM_INT64, .ndim = 1, .shape = {a->i[2 + k]}}, fl = idx, one = {.dtype = OM_FLOAT32, .ndim = 1, .shape = {1}};
  fl.dtype = OM_FLOAT32;
  int dst, f, s, v, in = om__lower_x_value(l, in_x);
  int r[3] = {om__lower_ints(l, &(int64_t){0}, -1), om__lower_x_scalar(l, out_x), om__lower_ints(l, &(int64_t){1}, -1)};
  if (in < 0 || r[1] < 0 || !om__emit(l, "Range", r, 3, &idx, 1, &dst, NULL, 0)) return -1;
  if (!om__emit(l, "Cast", &dst, 1, &fl, 1, &f, &OM_ATTR_INT("to", 1 /* FLOAT */), 1)) return -1;
  double scale = a->f[k];
  if (by_scale(a)) {
    s = om__lower_scalar(l, (float)(1.0 / scale), OM_FLOAT32);
  } else {
    int fi, fo, out = om__lower_x_value(l, out_x);
    if (out < 0 || !om__emit(l, "Cast", &in, 1, &one, 1, &fi, &OM_ATTR_INT("to", 1), 1) ||
        !om__emit(l, "Cast", &out, 1, &one, 1, &fo, &OM_ATTR_INT("to", 1), 1) ||
        !om__emit(l, "Div", (int[]){fi, fo}, 2, &one, 1, &s, NULL, 0))
      return -1;
  }
  int last = om__lower_x_value(l, om__lower_x_lin(l, 1, in_x, 0, -1, -1));
  if (s < 0 || last < 0 || !om__emit(l, "Mul", (int[]){f, s}, 2, &fl, 1, &v, NULL, 0) ||
      !om__emit(l, "Floor", &v, 1, &fl, 1, &v, NULL, 0) || !om__emit(l, "Cast", &v, 1, &idx, 1, &v, &OM_ATTR_INT("to", 7 /* INT64 */), 1) ||
      !om__emit(l, "Min", (int[]){v, last}, 2, &idx, 1, &v, NULL, 0))
    return -1;
  for (int m = 1; by_scale(a) && m <= 2; m++) { /* out == m * in: copy (m 1) or halve (m 2), as nearest_idx */
    if (!(scale > m && scale < m + 1)) continue;
    om_meta b = {.dtype = OM_BOOL, .ndim = 1, .shape = {1}};
    int eq, exact = dst, mx = om__lower_x_value(l, om__lower_x_lin(l, m, in_x, 0, -1, 0));
    if (mx < 0 || !om__emit(l, "Equal", (int[]){om__lower_x_value(l, out_x), mx}, 2, &b, 1, &eq, NULL, 0)) return -1;
    if (m == 2 && !om__emit(l, "Div", (int[]){dst, om__lower_ints(l, &(int64_t){2}, -1)}, 2, &idx, 1, &exact, NULL, 0)) return -1;
    if (!om__emit(l, "Where", (int[]){eq, exact, v}, 3, &idx, 1, &v, NULL, 0)) return -1;
  }
  return v;
}

/* nearest: one Resize (asymmetric, floor) by constant scales where each axis's output is a whole
 * multiple of its input (om__nearest_scale_exact's) or 1 / 2^j of it at every size: then
 * onnxruntime picks the eager kernel's pixels and the graph computes no size. Otherwise one
 * Gather per resized axis with the eager kernel's own source indices. ONNX Resize cannot be
 * trusted to there: for asymmetric/floor it computes dst / (out / in) (or dst / scale), where
 * PyTorch computes dst * (in / out) (or dst * (float)(1 / scale)) in float, and the two floor to
 * different pixels at many sizes (21 -> 3: row 1 is 7 * 1 = 7 eagerly, 1 / (3 / 21) = 6.9999995
 * in onnxruntime; 9 with scale 4/7 -> 5: row 4). On an axis of fixed sizes the indices are a
 * constant (source_taps: the same float arithmetic); on one whose sizes change they are computed
 * (nearest_indices). An axis whose size is kept is a copy: no node. */
static bool lower_nearest(om_lower *l, const om_call *c) {
  const om_attrs *a = &c->attrs;
  const om_tensor *x = c->in[0];
  float sc[2];
  bool scales = true;
  for (int k = 0; k < 2; k++) {
    double s = resize_scale(l, c, k);
    scales &= s > 0 && (s < 1 || om__nearest_scale_exact((int64_t)s));
    sc[k] = (float)s;
  }
  if (scales && (sc[0] != 1 || sc[1] != 1)) {
    om_gattr at[4] = {OM_ATTR_STRING("mode", "nearest"), OM_ATTR_STRING("coordinate_transformation_mode", "asymmetric"),
                      OM_ATTR_STRING("nearest_mode", "floor"), OM_ATTR_INTS("axes", ((int64_t[]){2, 3}), 2)};
    return resize_by_scales(l, c, sc, at, 4);
  }
  int v = om__lower_input(l, 0);
  om_meta m = {.dtype = OM_FLOAT32, .ndim = 4, .shape = {x->shape[0], x->shape[1], x->shape[2], x->shape[3]}};
  for (int k = 0; k < 2 && v >= 0; k++) {
    int64_t in = x->shape[2 + k], out = a->i[2 + k];
    int in_x = om__lower_in_ext(l, 0, 2 + k), out_x = om__lower_out_ext(l, 0, 2 + k), iv;
    if (out == in && in_x == out_x) continue; /* nearest_idx copies */
    if (in_x >= 0 || out_x >= 0) {
      iv = nearest_indices(l, om__lower_in_x(l, 0, 2 + k), out_x >= 0 ? out_x : om__lower_x_const(l, out), a, k);
    } else {
      int64_t *idx = om__alloc(sizeof(int64_t) * (uint64_t)out, "interpolate");
      if (!idx) return false;
      for (int64_t d = 0; d < out; d++) idx[d] = axis_taps(a, k, in, d).i[0];
      iv = om__lower_ints(l, idx, (int)out);
      free(idx);
    }
    m.shape[2 + k] = out;
    int next;
    if (iv < 0 || !om__emit(l, "Gather", (int[]){v, iv}, 2, &m, 1, &next, &OM_ATTR_INT("axis", 2 + k), 1)) return false;
    v = next;
  }
  if (v < 0) return false;
  om__lower_output(l, 0, v);
  return true;
}

/* The taps an output reads along a resized axis: 2 bilinear, 4 bicubic. */
static int tap_count(const om_attrs *a) { return a->i[0] == MODE_BICUBIC ? 4 : 2; }

/* op (Add, Sub, Mul) of two float32 values, into fl's shape: one step of the kernel's float
 * arithmetic, rounded once as the C expression is (-ffp-contract=off). -1 on error, or when an
 * operand is. */
static int float_op(om_lower *l, const char *op, int x, int y, const om_meta *fl) {
  int r;
  return x >= 0 && y >= 0 && om__emit(l, op, (int[]){x, y}, 2, fl, 1, &r, NULL, 0) ? r : -1;
}

/* cubic_poly's steps on the float32 [out] distances x as graph values. -1 on error. */
static int cubic_poly_computed(om_lower *l, const cubic_step *s, int x, const om_meta *fl) {
  int v = x;
  for (; s->op && v >= 0; s++)
    v = float_op(l, s->op == '*' ? "Mul" : s->op == '-' ? "Sub" : "Add", v, s->by_x ? x : om__lower_scalar(l, s->c, OM_FLOAT32), fl);
  return v;
}

/* cubic_weights of the fractions lam (float32 [out]) as graph values w[0 .. 3]: the same float
 * operations in the same order, so the same bits. false on error. */
static bool cubic_weights_computed(om_lower *l, int lam, const om_meta *fl, int w[4]) {
  int one = om__lower_scalar(l, 1, OM_FLOAT32), x2 = float_op(l, "Sub", one, lam, fl);
  w[0] = cubic_poly_computed(l, CUBIC_FAR, float_op(l, "Add", lam, one, fl), fl);
  w[1] = cubic_poly_computed(l, CUBIC_NEAR, lam, fl);
  w[2] = cubic_poly_computed(l, CUBIC_NEAR, x2, fl);
  w[3] = cubic_poly_computed(l, CUBIC_FAR, float_op(l, "Add", x2, one, fl), fl);
  return w[0] >= 0 && w[1] >= 0 && w[2] >= 0 && w[3] >= 0;
}

/* The taps' values (taps_values) on an axis whose sizes change with the symbols: computed in the
 * graph as source_taps computes them in float. */
static bool taps_computed(om_lower *l, const om_attrs *a, int k, int in_x, int out_x, int t[8]) {
  int64_t out = a->i[2 + k];
  om_meta idx = {.dtype = OM_INT64, .ndim = 1, .shape = {out}}, fl = idx, one = {.dtype = OM_FLOAT32, .ndim = 1, .shape = {1}};
  fl.dtype = OM_FLOAT32;
  bool align = a->i[1] != 0, cubic = tap_count(a) == 4;
  int dst, d, s, src, i, fi, lam, last = om__lower_x_value(l, om__lower_x_lin(l, 1, in_x, 0, -1, -1));
  int r[3] = {om__lower_ints(l, &(int64_t){0}, -1), om__lower_x_scalar(l, out_x), om__lower_ints(l, &(int64_t){1}, -1)};
  if (last < 0 || r[1] < 0 || !om__emit(l, "Range", r, 3, &idx, 1, &dst, NULL, 0) ||
      !om__emit(l, "Cast", &dst, 1, &fl, 1, &d, &OM_ATTR_INT("to", 1 /* FLOAT */), 1))
    return false;
  if (by_scale(a) && !align) {
    s = om__lower_farg_recip(l, k); /* (float)(1 / scale), computed where the scale moves with the sizes */
  } else { /* (float)in / (float)out, or (float)(in - 1) / (float)(out - 1) (out 1: src is 0 at its one dst whatever s is) */
    int num = align ? last : om__lower_x_value(l, in_x), den, fn, fd;
    den = om__lower_x_value(l, align ? om__lower_x_lin(l, 1, out_x, 0, -1, -1) : out_x);
    if (align && den >= 0 && !om__emit(l, "Max", (int[]){den, om__lower_ints(l, &(int64_t){1}, 1)}, 2, &(om_meta){.dtype = OM_INT64, .ndim = 1, .shape = {1}}, 1, &den, NULL, 0))
      return false;
    if (num < 0 || den < 0 || !om__emit(l, "Cast", &num, 1, &one, 1, &fn, &OM_ATTR_INT("to", 1), 1) ||
        !om__emit(l, "Cast", &den, 1, &one, 1, &fd, &OM_ATTR_INT("to", 1), 1) || !om__emit(l, "Div", (int[]){fn, fd}, 2, &one, 1, &s, NULL, 0))
      return false;
  }
  int half = om__lower_scalar(l, 0.5, OM_FLOAT32), zero = om__lower_scalar(l, 0, OM_FLOAT32), unit = om__lower_scalar(l, 1, OM_FLOAT32);
  if (align) {
    if (!om__emit(l, "Mul", (int[]){s, d}, 2, &fl, 1, &src, NULL, 0)) return false;
  } else if (!om__emit(l, "Add", (int[]){d, half}, 2, &fl, 1, &src, NULL, 0) || !om__emit(l, "Mul", (int[]){s, src}, 2, &fl, 1, &src, NULL, 0) ||
             !om__emit(l, "Sub", (int[]){src, half}, 2, &fl, 1, &src, NULL, 0) ||
             (!cubic && !om__emit(l, "Max", (int[]){src, zero}, 2, &fl, 1, &src, NULL, 0))) { /* bicubic's source is not clamped at 0 */
    return false;
  }
  if (!om__emit(l, "Floor", &src, 1, &fl, 1, &i, NULL, 0) || !om__emit(l, "Cast", &i, 1, &idx, 1, &i, &OM_ATTR_INT("to", 7 /* INT64 */), 1) ||
      !om__emit(l, "Min", (int[]){i, last}, 2, &idx, 1, &i, NULL, 0) ||
      !om__emit(l, "Cast", &i, 1, &fl, 1, &fi, &OM_ATTR_INT("to", 1), 1) || !om__emit(l, "Sub", (int[]){src, fi}, 2, &fl, 1, &lam, NULL, 0) ||
      !om__emit(l, "Clip", (int[]){lam, zero, unit}, 3, &fl, 1, &lam, NULL, 0))
    return false;
  if (!cubic) {
    t[0] = i;
    t[3] = lam;
    return om__emit(l, "Add", (int[]){i, om__lower_ints(l, &(int64_t){1}, -1)}, 2, &idx, 1, &t[1], NULL, 0) &&
           om__emit(l, "Min", (int[]){t[1], last}, 2, &idx, 1, &t[1], NULL, 0) && om__emit(l, "Sub", (int[]){unit, lam}, 2, &fl, 1, &t[2], NULL, 0);
  }
  /* taps i - 1 .. i + 2 clamped to [0, in - 1]: src >= -0.5 (>= 0 with align_corners), so -1 <= i
   * <= in - 1, and i - 1, i need the clamp below only, i + 1, i + 2 above only */
  int lo = om__lower_ints(l, &(int64_t){0}, -1);
  for (int j = 0; j < 4; j++) {
    int p = i;
    if (j != 1 && !om__emit(l, "Add", (int[]){i, om__lower_ints(l, &(int64_t){j - 1}, -1)}, 2, &idx, 1, &p, NULL, 0)) return false;
    if (!om__emit(l, j < 2 ? "Max" : "Min", (int[]){p, j < 2 ? lo : last}, 2, &idx, 1, &t[j], NULL, 0)) return false;
  }
  return cubic_weights_computed(l, lam, &fl, t + 4);
}

/* The taps of bilinear (n = 2) or bicubic (n = 4) along axis k (2 or 3) as graph values, computed as
 * source_taps computes them in float (the same operations in the same order, so the same bits):
 * t[0 .. n - 1] the int64 [out] source indices, t[n .. 2 n - 1] their float32 weights (shaped
 * [out, 1] on axis 2, to scale rows). out_x, in_x: the axis's extents as expressions (constants
 * when fixed). false on error. */
static bool taps_values(om_lower *l, const om_attrs *a, int k, int in_x, int out_x, int t[8]) {
  int64_t out = a->i[2 + k], in;
  int n = tap_count(a);
  if (om__lower_x_is_const(l, in_x, &in) && om__lower_x_is_const(l, out_x, &(int64_t){0}) && !om__lower_farg_moves(l, k)) { /* fixed: the kernel's own taps */
    int64_t *i = om__alloc(sizeof(int64_t) * (uint64_t)n * (uint64_t)out, "interpolate");
    float *w = om__alloc(sizeof(float) * (uint64_t)n * (uint64_t)out, "interpolate");
    bool ok = i && w;
    for (int64_t d = 0; ok && d < out; d++) {
      taps p = axis_taps(a, k, in, d);
      for (int j = 0; j < n; j++) i[j * out + d] = p.i[j], w[j * out + d] = p.l[j];
    }
    for (int j = 0; ok && j < n; j++) ok = (t[j] = om__lower_ints(l, i + j * out, (int)out)) >= 0 && (t[n + j] = om__lower_floats(l, w + j * out, (int)out)) >= 0;
    free(i);
    free(w);
    if (!ok) return false;
  } else if (!taps_computed(l, a, k, in_x, out_x, t)) {
    return false;
  }
  if (k == 1) return true;
  om_meta col = {.dtype = OM_FLOAT32, .ndim = 2, .shape = {out, 1}};
  int ax = om__lower_ints(l, &(int64_t){1}, 1);
  for (int j = n; j < 2 * n; j++)
    if (!om__emit(l, "Unsqueeze", (int[]){t[j], ax}, 2, &col, 1, &t[j], NULL, 0)) return false;
  return true;
}

/* Whether ONNX Resize (linear or cubic) finds the eager kernel's source coordinates along axis k
 * at every size: where the axis is kept, or (half_pixel) its scale is a power of two, so that
 * onnxruntime's (dst + 0.5) / scale and PyTorch's (float)(in / out) * (dst + 0.5) are both exact.
 * Any other scale, and align_corners' (in - 1) / (out - 1), rounds the two differently in the
 * last bit, and the error grows with the size: 1e-4 apart at a width of 771. */
static bool resize_exact(om_lower *l, const om_call *c, int k) {
  const om_attrs *a = &c->attrs;
  double s = by_scale(a) ? a->f[k] : resize_scale(l, c, k);
  int e;
  if (a->i[4] && om__lower_farg_moves(l, k)) return false; /* a scale the sizes give: no constant Resize */
  if (s == 1) return true;
  return !a->i[1] && s > 0 && frexp(s, &e) == 0.5;
}

/* bilinear and bicubic where Resize's coordinates are not the eager kernel's (resize_exact): each
 * resized axis, the last first as the kernel blends them, as w0 * Gather(x, i0) + w1 * Gather(x,
 * i1) (+ w2 * Gather(x, i2) + w3 * Gather(x, i3) bicubic), summed left to right as the kernel,
 * with taps_values' indices and weights: the eager kernel's arithmetic, so the same numbers at
 * every size. An axis that keeps its size without a scale factor is copied (the kernel's weights
 * there are 1 at the source's own row and 0 elsewhere: the same numbers, but next to an
 * infinity); with a scale factor (4 by 1.1 is 4) the kernel still resamples by 1 / 1.1. */
static bool lower_taps(om_lower *l, const om_call *c) {
  const om_attrs *a = &c->attrs;
  const om_tensor *x = c->in[0];
  const int n = tap_count(a), own = n == 4 ? 1 : 0; /* the tap at floor(src): the identity at a kept size */
  int v = om__lower_input(l, 0);
  om_meta m = {.dtype = OM_FLOAT32, .ndim = 4, .shape = {x->shape[0], x->shape[1], x->shape[2], x->shape[3]}};
  for (int k = 1; k >= 0 && v >= 0; k--) {
    int in_x = om__lower_in_x(l, 0, 2 + k), out_x = om__lower_out_ext(l, 0, 2 + k), t[8], read[4], g;
    if (out_x < 0) out_x = om__lower_x_const(l, a->i[2 + k]);
    if (in_x < 0 || out_x < 0) return false;
    bool same = in_x == out_x || (om__lower_in_ext(l, 0, 2 + k) < 0 && om__lower_out_ext(l, 0, 2 + k) < 0 && a->i[2 + k] == x->shape[2 + k]);
    if (same && (!by_scale(a) || (a->f[k] == 1 && !om__lower_farg_moves(l, k)))) continue; /* a kept size by no scale factor: src = dst, weight 1 at dst */
    m.shape[2 + k] = a->i[2 + k];
    if (!taps_values(l, a, k, in_x, out_x, t)) return false;
    int from = v;
    for (int j = 0; j < n; j++) {
      if (!om__emit(l, "Gather", (int[]){from, t[j]}, 2, &m, 1, &read[j], &OM_ATTR_INT("axis", 2 + k), 1) ||
          !om__emit(l, "Mul", (int[]){read[j], t[n + j]}, 2, &m, 1, &g, NULL, 0) ||
          (j && !om__emit(l, "Add", (int[]){v, g}, 2, &m, 1, &g, NULL, 0)))
        return false;
      v = g;
    }
    /* a size computed from the symbols may equal the input's at some sizes (ceil(w / 2) * 2 of w):
     * there the taps read each pixel with weight 1 and its neighbours with 0, the input's numbers
     * but for -0 and next to an infinity; the graph copies the input there (the Gather of the
     * own tap is the identity), as a model that leaves the call out where it would keep the size
     * does (MobileViT) */
    if (!by_scale(a) && !om__lower_x_is_const(l, in_x, &(int64_t){0}) && in_x != out_x) {
      om_meta b = {.dtype = OM_BOOL, .ndim = 1, .shape = {1}};
      int eq, iv = om__lower_x_value(l, in_x), ov = om__lower_x_value(l, out_x);
      if (iv < 0 || ov < 0 || !om__emit(l, "Equal", (int[]){iv, ov}, 2, &b, 1, &eq, NULL, 0) ||
          !om__emit(l, "Where", (int[]){eq, read[own], v}, 3, &m, 1, &v, NULL, 0))
        return false;
    }
  }
  if (v < 0) return false;
  om__lower_output(l, 0, v);
  return true;
}

/* bilinear and bicubic: one Resize on axes 2 and 3 with an empty roi and constant `scales` where
 * it finds the eager kernel's coordinates on both axes (resize_exact): each axis kept or scaled by
 * a power of two, given as a scale factor or as a size that is a whole multiple or 1 / 2^j of the
 * input's at every size (resize_scale). ONNX then derives the same output size from the scale
 * as PyTorch at every size (the scale and its products with a size are exact in float), and the
 * eager kernel's in / out is 1 / scale exactly. Everything else is the eager taps (lower_taps). */
static bool lower_interpolate(om_lower *l, const om_call *c) {
  const om_attrs *a = &c->attrs;
  if (a->i[0] == MODE_NEAREST && by_scale(a) && (om__lower_farg_moves(l, 0) || om__lower_farg_moves(l, 1)))
    return om__trace_fail(OM_ERR_TRACE_SYMBOLIC_SHAPE, "interpolate: a nearest scale factor that changes with the sizes "
                          "(%g here) is not traced (give the output size instead)", a->f[om__lower_farg_moves(l, 0) ? 0 : 1]);
  if (a->i[0] == MODE_NEAREST) return lower_nearest(l, c);
  if (!resize_exact(l, c, 0) || !resize_exact(l, c, 1)) return lower_taps(l, c);
  bool cubic = a->i[0] == MODE_BICUBIC;
  om_gattr at[4] = {
      OM_ATTR_STRING("mode", cubic ? "cubic" : "linear"),
      OM_ATTR_STRING("coordinate_transformation_mode", a->i[1] ? "align_corners" : "half_pixel"),
      OM_ATTR_INTS("axes", ((int64_t[]){2, 3}), 2),
      OM_ATTR_FLOAT("cubic_coeff_a", CUBIC_A), /* exclude_outside 0: the edges repeat, as PyTorch's */
  };
  float sc[2];
  for (int k = 0; k < 2; k++) sc[k] = (float)(by_scale(a) ? a->f[k] : resize_scale(l, c, k));
  return resize_by_scales(l, c, sc, at, cubic ? 4 : 3);
}

const om_op_def om__op_interpolate = {
    .name = "interpolate", .n_in = 1, .n_out = 1, .saves = 0,
    .infer = infer_interpolate, .forward = forward_interpolate, .backward = interpolate_backward,
    .lower = lower_interpolate, .extents = extents_interpolate, .derives_extents = true, .sym_args = 1 << 2 | 1 << 3,
    .sym_fargs = 1 << 0 | 1 << 1, /* a scale factor the model computes from a size (DINO's (h0 + 0.1) / sqrt(N)) */
    .onnx = "nearest: Resize (asymmetric, floor) by whole or 1/2^j scales, else Gather per resized axis (the eager "
            "source indices, computed in the graph on a symbolic axis); bilinear and bicubic: Resize (linear, or cubic "
            "with cubic_coeff_a -0.75; axes 2, 3; half_pixel) where each axis is kept or scaled by a power of two, else "
            "per resized axis two (bilinear) or four (bicubic) Gathers weighted by the eager taps (constants, or computed "
            "in the graph in the kernel's float arithmetic on a symbolic axis)",
    .test = {.n_in = 1, .ndims = {4}, .shapes = {{2, 2, 3, 4}}, .lo = -2, .hi = 2,
             .attrs = {.n_i = 5, .i = {MODE_BILINEAR, 0, 0, 0, 1}, .n_f = 2, .f = {1.5, 2.5}},
             .empty_refusal = "input and output sizes must be greater than 0"}}; /* PyTorch's refusal too */

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
