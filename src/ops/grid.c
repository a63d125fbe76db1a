/* ---- grid_sample: PyTorch's F.grid_sample, one op for 2 and 3 spatial axes ----
 *   x [N, C, H, W] float32,    grid [N, Ho, Wo, 2] float32     -> [N, C, Ho, Wo]
 *   x [N, C, D, H, W] float32, grid [N, Do, Ho, Wo, 3] float32 -> [N, C, Do, Ho, Wo]
 *   attrs: i[0] mode (GRID_BILINEAR, GRID_NEAREST, GRID_BICUBIC: 2 axes only, as PyTorch),
 *          i[1] padding (GRID_ZEROS, GRID_BORDER, GRID_REFLECTION), i[2] align_corners (0 or 1)
 * The grid's last axis holds (x along W, y along H, z along D) in [-1, 1] (-1 and 1 the centres
 * of the end pixels with align_corners, their outer edges without). The arithmetic is PyTorch
 * 1.13's CPU kernels', step by step, so the values are its own: over 2 axes its vectorized
 * kernel's (GridSamplerKernel.cpp: unnormalize (g + 1) * s - 0.5; border and reflection take a
 * NaN coordinate to 0; with zeros padding a NaN or infinite coordinate makes bilinear and bicubic
 * NaN, nearest 0), over 3 axes its scalar kernel's (GridSampler.cpp: unnormalize ((g + 1) size -
 * 1) / 2; border's clamp takes NaN to size - 1; a coordinate that is not finite or not below
 * 2^31 becomes -100, outside, so the point reads 0 or its padding's pixel). Nearest rounds half
 * to even (nearbyint), bicubic is Keys' kernel with A = -0.75 over the 4 x 4 taps around the
 * point, each tap moved inside by the padding on its own. The backward gives the input's and the
 * grid's gradients (nearest: the grid gets none, PyTorch's zeros). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

enum { GRID_BILINEAR = OM_GRID_BILINEAR, GRID_NEAREST = OM_GRID_NEAREST, GRID_BICUBIC = OM_GRID_BICUBIC };
enum { GRID_ZEROS = OM_GRID_ZEROS, GRID_BORDER = OM_GRID_BORDER, GRID_REFLECTION = OM_GRID_REFLECTION };

/* One spatial axis of the input, as the sampler reads it. */
typedef struct grid_axis {
  int64_t size;
  int pad;
  bool align;
  bool scalar; /* 3 spatial axes: PyTorch's scalar kernel's arithmetic; 2: its vectorized kernel's */
} grid_axis;

/* The smaller of a and b, NaN when either is (at::vec::minimum). */
static float min_nan(float a, float b) {
  if (isnan(a)) return a;
  if (isnan(b)) return b;
  return a < b ? a : b;
}

/* Grid value g as a coordinate in pixels along a (PyTorch's grid_sampler_unnormalize). */
static float unnormalize(const grid_axis *a, float g) {
  if (a->scalar) return a->align ? ((g + 1) / 2) * (float)(a->size - 1) : ((g + 1) * (float)a->size - 1) / 2;
  return a->align ? (g + 1) * ((float)(a->size - 1) / 2) : (g + 1) * ((float)a->size / 2) - 0.5f;
}

/* d unnormalize / d g. */
static float unnormalize_slope(const grid_axis *a) { return a->align ? (float)(a->size - 1) / 2 : (float)a->size / 2; }

/* c clamped into [0, size - 1] (NaN: 0 in the vectorized kernel, size - 1 in the scalar one);
 * *slope times 0 where the clamp holds c (at or past an end), as PyTorch's. */
static float clip(const grid_axis *a, float c, float *slope) {
  float most = (float)(a->size - 1), t = a->scalar ? (c < 0 ? 0 : c) : (c > 0 ? c : 0);
  if (slope && !(c > 0 && c < most)) *slope = 0;
  return t < most ? t : most;
}

/* c reflected off the ends of the axis (the end pixels' centres with align_corners, their outer
 * edges without) until it lies between them; *slope times -1 for an odd number of reflections. */
static float reflect(const grid_axis *a, float c, float *slope) {
  if (a->scalar) { /* reflect_coordinates(c, twice_low, twice_high) */
    int64_t lo2 = a->align ? 0 : -1, hi2 = a->align ? 2 * (a->size - 1) : 2 * a->size - 1;
    if (lo2 == hi2) {
      if (slope) *slope = 0;
      return 0;
    }
    float min = (float)lo2 / 2, span = (float)(hi2 - lo2) / 2, in = c - min, sign = 1;
    if (in < 0) in = -in, sign = -1;
    float extra = fmodf(in, span);
    bool even = fmodf(floorf(in / span), 2) == 0; /* PyTorch casts the flips to int: the same below 2^31 */
    if (slope) *slope *= even ? sign : -sign;
    return even ? extra + min : span - extra + min;
  }
  if (a->align && a->size <= 1) {
    if (slope) *slope = 0;
    return 0;
  }
  float low = a->align ? 0 : -0.5f, span2 = a->align ? (float)(a->size - 1) * 2 : (float)a->size * 2;
  float in = a->align ? c : c - low, ab = fabsf(in), flips = truncf(ab / span2), extra = ab - flips * span2, other = span2 - extra;
  if (slope && (extra > other) != (in < 0)) *slope = -*slope;
  float r = min_nan(extra, other);
  return a->align ? r : r + low;
}

/* Coordinate c after the axis' padding rule (PyTorch's compute_coordinates); the scalar kernel
 * then moves what int32 cannot hold to -100 (safe_downgrade_to_int_range). */
static float padded(const grid_axis *a, float c, float *slope) {
  if (a->pad == GRID_BORDER) c = clip(a, c, slope);
  if (a->pad == GRID_REFLECTION) c = clip(a, reflect(a, c, slope), slope);
  if (a->scalar && (c > (float)(INT32_MAX - 1) || c < (float)INT32_MIN || !isfinite(c))) c = -100;
  return c;
}

/* Whether integral coordinate t is a pixel of the axis (false for NaN). */
static bool inside(const grid_axis *a, float t) { return t >= 0 && t <= (float)(a->size - 1); }

/* Keys' cubic weights (A = -0.75) of the taps at floor - 1 .. floor + 2 for the fraction t
 * (PyTorch's get_cubic_coefficients), and their slopes d / d t when slope is given. */
static void cubic(float t, float w[4], float *slope) {
  const float A = -0.75f;
  float x = t + 1;
  w[0] = ((A * x - 5 * A) * x + 8 * A) * x - 4 * A;
  w[1] = ((A + 2) * t - (A + 3)) * t * t + 1;
  x = 1 - t;
  w[2] = ((A + 2) * x - (A + 3)) * x * x + 1;
  x = 2 - t;
  w[3] = ((A * x - 5 * A) * x + 8 * A) * x - 4 * A;
  if (!slope) return;
  x = -1 - t;
  slope[0] = (-3 * A * x - 10 * A) * x - 8 * A;
  x = 0 - t;
  slope[1] = (-3 * (A + 2) * x - 2 * (A + 3)) * x;
  x = 1 - t;
  slope[2] = (3 * (A + 2) * x - 2 * (A + 3)) * x;
  x = 2 - t;
  slope[3] = (3 * A * x - 10 * A) * x + 8 * A;
}

/* The taps one output point reads: places in the input plane (-1 outside: read as 0) and their
 * weights, and what the backward needs. */
typedef struct grid_taps {
  int n;           /* 1 (nearest), 4 or 8 (bilinear over 2 or 3 axes), 16 (bicubic) */
  int64_t at[16];  /* bilinear: corner m has bit k set for the upper tap along axis k; bicubic: 4 j + i for x tap i, y tap j */
  float w[16];     /* bilinear: the corners' weights (bicubic: unused) */
  float d[3][2];   /* bilinear: per axis the weights of its lower and upper tap (1 - f, f; the scalar kernel's (lo + 1) - c, c - lo) */
  float cw[2][4];  /* bicubic: the weights along x and y */
  float cs[2][4];  /* bicubic: their slopes */
  float slope[3];  /* d coordinate / d grid value per axis */
} grid_taps;

typedef struct grid_sampler {
  int r, mode;
  grid_axis ax[3]; /* x (W), y (H), z (D) */
} grid_sampler;

static grid_sampler sampler_of(const om_tensor *x, const om_attrs *a) {
  grid_sampler s = {.r = x->ndim - 2, .mode = (int)a->i[0]};
  for (int k = 0; k < s.r; k++)
    s.ax[k] = (grid_axis){.size = x->shape[x->ndim - 1 - k], .pad = (int)a->i[1], .align = a->i[2] != 0, .scalar = s.r == 3};
  return s;
}

/* The place in the plane of integral coordinates q (per axis), or -1 outside. */
static int64_t place(const grid_sampler *s, const float *q) {
  int64_t at = 0;
  for (int k = s->r - 1; k >= 0; k--) {
    if (!inside(&s->ax[k], q[k])) return -1;
    at = at * s->ax[k].size + (int64_t)q[k];
  }
  return at;
}

/* The taps of the point whose grid values are g[0 .. r - 1] (x first). */
static void point_taps(const grid_sampler *s, const float *g, grid_taps *t) {
  float c[3], q[3];
  for (int k = 0; k < s->r; k++) {
    t->slope[k] = unnormalize_slope(&s->ax[k]);
    c[k] = s->mode == GRID_BICUBIC ? unnormalize(&s->ax[k], g[k]) : padded(&s->ax[k], unnormalize(&s->ax[k], g[k]), &t->slope[k]);
  }
  if (s->mode == GRID_NEAREST) {
    for (int k = 0; k < s->r; k++) q[k] = nearbyintf(c[k]);
    t->n = 1, t->at[0] = place(s, q), t->w[0] = 1;
  } else if (s->mode == GRID_BILINEAR) {
    float lo[3];
    for (int k = 0; k < s->r; k++) {
      lo[k] = floorf(c[k]);
      if (s->ax[k].scalar) { /* int64 corners (c is finite there), their distances in float */
        int64_t i = (int64_t)lo[k];
        t->d[k][0] = (float)(i + 1) - c[k], t->d[k][1] = c[k] - (float)i;
      } else {
        t->d[k][1] = c[k] - lo[k], t->d[k][0] = 1 - t->d[k][1];
      }
    }
    t->n = 1 << s->r;
    for (int m = 0; m < t->n; m++) {
      for (int k = 0; k < s->r; k++) q[k] = lo[k] + (float)(m >> k & 1);
      t->at[m] = place(s, q);
      /* PyTorch's products: y's factor times x's (2 axes); x's times y's times z's (3 axes) */
      t->w[m] = s->r == 2 ? t->d[1][m >> 1 & 1] * t->d[0][m & 1] : t->d[0][m & 1] * t->d[1][m >> 1 & 1] * t->d[2][m >> 2 & 1];
    }
  } else {
    float f[2];
    for (int k = 0; k < 2; k++) f[k] = floorf(c[k]), cubic(c[k] - f[k], t->cw[k], t->cs[k]);
    t->n = 16;
    for (int j = 0; j < 4; j++)
      for (int i = 0; i < 4; i++) {
        q[0] = padded(&s->ax[0], f[0] + (float)(i - 1), NULL), q[1] = padded(&s->ax[1], f[1] + (float)(j - 1), NULL);
        t->at[4 * j + i] = place(s, q);
      }
  }
}

/* The value at place `at` of plane p (0 outside). */
static float tap(const float *p, int64_t at) { return at >= 0 ? p[at] : 0; }

/* One output value of plane p from the point's taps, summed in PyTorch's order. */
static float sample(const grid_sampler *s, const grid_taps *t, const float *p) {
  if (s->mode == GRID_NEAREST) return tap(p, t->at[0]);
  if (s->mode == GRID_BICUBIC) {
    float rows[4];
    for (int j = 0; j < 4; j++) {
      const int64_t *a = t->at + 4 * j;
      rows[j] = t->cw[0][0] * tap(p, a[0]) + t->cw[0][1] * tap(p, a[1]) + t->cw[0][2] * tap(p, a[2]) + t->cw[0][3] * tap(p, a[3]);
    }
    return t->cw[1][0] * rows[0] + t->cw[1][1] * rows[1] + t->cw[1][2] * rows[2] + t->cw[1][3] * rows[3];
  }
  if (s->r == 2) /* every corner's term, an outside one's 0 times its weight (NaN for a NaN weight) */
    return tap(p, t->at[0]) * t->w[0] + tap(p, t->at[1]) * t->w[1] + tap(p, t->at[2]) * t->w[2] + tap(p, t->at[3]) * t->w[3];
  float v = 0; /* the scalar kernel adds the corners inside only */
  for (int m = 0; m < 8; m++)
    if (t->at[m] >= 0) v += p[t->at[m]] * t->w[m];
  return v;
}

/* The plane's gradient from dy, the point's output gradient (dx's places += weight * dy), and
 * the grid values' (gg[k] += d output / d coordinate k times dy; the caller multiplies by the
 * slopes once every channel is in). dx NULL: the input needs none. */
static void sample_backward(const grid_sampler *s, const grid_taps *t, const float *p, float dy, float *dx, float *gg) {
  if (s->mode == GRID_NEAREST) {
    if (dx && t->at[0] >= 0) dx[t->at[0]] += dy;
    return;
  }
  if (s->mode == GRID_BICUBIC) {
    for (int i = 0; i < 4; i++)
      for (int j = 0; j < 4; j++) {
        int64_t at = t->at[4 * j + i];
        if (dx && at >= 0) dx[at] += dy * t->cw[0][i] * t->cw[1][j];
        float v = tap(p, at);
        gg[0] = gg[0] - v * dy * t->cs[0][i] * t->cw[1][j];
        gg[1] = gg[1] - v * dy * t->cs[1][j] * t->cw[0][i];
      }
    return;
  }
  for (int m = 0; dx && m < t->n; m++)
    if (t->at[m] >= 0) dx[t->at[m]] += t->w[m] * dy;
  if (s->r == 2) { /* the vectorized kernel's: ((ne - nw) s + (se - sw) n) dy, ((sw - nw) e + (se - ne) w) dy */
    float nw = tap(p, t->at[0]), ne = tap(p, t->at[1]), sw = tap(p, t->at[2]), se = tap(p, t->at[3]);
    gg[0] = gg[0] + ((ne - nw) * t->d[1][0] + (se - sw) * t->d[1][1]) * dy;
    gg[1] = gg[1] + ((sw - nw) * t->d[0][0] + (se - ne) * t->d[0][1]) * dy;
    return;
  }
  for (int m = 0; m < 8; m++) { /* the scalar kernel's: per corner inside and axis, -+ v * (the other axes' factors) * dy */
    if (t->at[m] < 0) continue;
    float v = p[t->at[m]];
    for (int k = 0; k < 3; k++) {
      int a = k == 0 ? 1 : 0, b = k == 2 ? 1 : 2;
      float term = v * t->d[a][m >> a & 1] * t->d[b][m >> b & 1] * dy;
      gg[k] = (m >> k & 1) ? gg[k] + term : gg[k] - term;
    }
  }
}

static bool infer_grid_sample(om_call *c) {
  const om_tensor *x = c->in[0], *grid = c->in[1];
  const om_attrs *a = &c->attrs;
  char xs[OM_SHAPE_STR_LEN], gs[OM_SHAPE_STR_LEN];
  om__shape_str(xs, sizeof xs, x->shape, x->ndim);
  om__shape_str(gs, sizeof gs, grid->shape, grid->ndim);
  if (a->n_i != 3 || a->n_f != 0)
    return om__fail(OM_ERR_INVALID_ARGUMENT, "grid_sample: takes attributes [mode, padding_mode, align_corners], got %d integers and %d floats", a->n_i, a->n_f);
  if (a->i[0] < GRID_BILINEAR || a->i[0] > GRID_BICUBIC)
    return om__fail(OM_ERR_INVALID_ARGUMENT, "grid_sample: mode %lld is not 0 (bilinear), 1 (nearest) or 2 (bicubic)", (long long)a->i[0]);
  if (a->i[1] < GRID_ZEROS || a->i[1] > GRID_REFLECTION)
    return om__fail(OM_ERR_INVALID_ARGUMENT, "grid_sample: padding_mode %lld is not 0 (zeros), 1 (border) or 2 (reflection)", (long long)a->i[1]);
  if (a->i[2] != 0 && a->i[2] != 1) return om__fail(OM_ERR_INVALID_ARGUMENT, "grid_sample: align_corners must be 0 or 1, got %lld", (long long)a->i[2]);
  if (x->dtype != OM_FLOAT32 || grid->dtype != OM_FLOAT32)
    return om__fail(OM_ERR_DTYPE_MISMATCH, "grid_sample: takes float32 input and grid, got %s and %s", om_dtype_name(x->dtype), om_dtype_name(grid->dtype));
  int r = x->ndim - 2;
  if ((r != 2 && r != 3) || grid->ndim != x->ndim || grid->shape[r + 1] != r)
    return om__fail(OM_ERR_SHAPE_MISMATCH, "grid_sample: takes input [N, C, H, W] with grid [N, Ho, Wo, 2], or input [N, C, D, H, W] "
                    "with grid [N, Do, Ho, Wo, 3], got %s and %s", xs, gs);
  if (grid->shape[0] != x->shape[0])
    return om__fail(OM_ERR_SHAPE_MISMATCH, "grid_sample: expected grid and input to have same batch size, but got input with sizes %s "
                    "and grid with sizes %s", xs, gs);
  if (a->i[0] == GRID_BICUBIC && r != 2)
    return om__fail(OM_ERR_INVALID_ARGUMENT, "grid_sample: bicubic interpolation only supports 4-D input, got %s", xs);
  for (int d = 2; d < x->ndim; d++)
    if (x->shape[d] == 0)
      return om__fail(OM_ERR_INVALID_ARGUMENT, "grid_sample: expected input to have non-empty spatial dimensions, but input has sizes "
                      "%s with dimension %d being empty", xs, d);
  om_meta *m = &c->out_meta[0];
  *m = (om_meta){.dtype = OM_FLOAT32, .ndim = x->ndim, .shape = {x->shape[0], x->shape[1]}};
  for (int d = 2; d < x->ndim; d++) m->shape[d] = grid->shape[d - 1];
  return true;
}

/* The sizes the kernels loop over: batch, channels, the input plane and the output points. */
static void grid_sizes(const om_tensor *x, const om_tensor *grid, int64_t *n, int64_t *ch, int64_t *plane, int64_t *points) {
  *n = x->shape[0], *ch = x->shape[1], *plane = 1, *points = 1;
  for (int d = 2; d < x->ndim; d++) *plane *= x->shape[d], *points *= grid->shape[d - 1];
}

/* forward_grid_sample's job: the points of all batches, in parts of `per` (each output written
 * once, by the part that holds its point, so the bits do not depend on the threads). */
typedef struct grid_job {
  const grid_sampler *s;
  const float *x, *g;
  float *y;
  int64_t ch, plane, points, total, per;
} grid_job;

static void grid_part(void *ctx, int64_t part, int worker) {
  (void)worker;
  const grid_job *j = ctx;
  grid_taps t;
  for (int64_t q = part * j->per, end = q + j->per < j->total ? q + j->per : j->total; q < end; q++) {
    int64_t b = q / j->points, p = q % j->points;
    point_taps(j->s, j->g + q * j->s->r, &t);
    for (int64_t k = 0; k < j->ch; k++) j->y[(b * j->ch + k) * j->points + p] = sample(j->s, &t, j->x + (b * j->ch + k) * j->plane);
  }
}

static bool forward_grid_sample(om_call *c) {
  grid_sampler s = sampler_of(c->in[0], &c->attrs);
  int64_t n, ch, plane, points;
  grid_sizes(c->in[0], c->in[1], &n, &ch, &plane, &points);
  om_tensor *xd = om__dense(c->in[0], "grid_sample"), *gd = xd ? om__dense(c->in[1], "grid_sample") : NULL;
  if (gd && n * points > 0) {
    grid_job j = {.s = &s, .x = (const float *)om__data(xd), .g = (const float *)om__data(gd), .y = (float *)om__data(c->out[0]),
                  .ch = ch, .plane = plane, .points = points, .total = n * points};
    int threads = om__job_threads((double)j.total * (double)(ch + 1) * (s.mode == GRID_BICUBIC ? 16 : 1 << s.r), j.total);
    int64_t parts = om__few_parts(j.total, threads);
    j.per = (j.total + parts - 1) / parts;
    om__parallel((j.total + j.per - 1) / j.per, threads, grid_part, &j);
  }
  om_tensor_release(xd);
  om_tensor_release(gd);
  return gd != NULL;
}

/* The input's gradient (zeros plus each point's taps' weights times its output gradient) and the
 * grid's (per point and axis the slope of the output in the coordinate, summed over the
 * channels, times d coordinate / d grid value), as PyTorch's kernels. Not itself differentiable:
 * the kernels, not public ops, compute them. */
static bool grid_sample_backward(const om_record *r, om_tensor *const *gout, om_tensor **gin) {
  const om_tensor *xt = r->in[0], *gt = r->in[1];
  grid_sampler s = sampler_of(xt, &r->attrs);
  bool want_x = om__wants(r, 0), want_g = om__wants(r, 1) && s.mode != GRID_NEAREST;
  if (!want_x && !want_g) return true;
  int64_t n, ch, plane, points;
  grid_sizes(xt, gt, &n, &ch, &plane, &points);
  om_meta mx = {.dtype = OM_FLOAT32, .ndim = xt->ndim}, mg = {.dtype = OM_FLOAT32, .ndim = gt->ndim};
  memcpy(mx.shape, xt->shape, sizeof(int64_t) * (size_t)xt->ndim);
  memcpy(mg.shape, gt->shape, sizeof(int64_t) * (size_t)gt->ndim);
  om_tensor *dx = want_x ? om__tensor_new(&mx, true, "grid_sample") : NULL, *dg = want_g ? om__tensor_new(&mg, true, "grid_sample") : NULL;
  om_tensor *xd = om__dense(r->in[0], "grid_sample"), *gd = xd ? om__dense(r->in[1], "grid_sample") : NULL;
  om_tensor *dyd = gd ? om__dense(gout[0], "grid_sample") : NULL;
  bool ok = dyd && (dx || !want_x) && (dg || !want_g);
  if (ok) {
    const float *x = (const float *)om__data(xd), *g = (const float *)om__data(gd), *dy = (const float *)om__data(dyd);
    float *dxp = dx ? (float *)om__data(dx) : NULL, *dgp = dg ? (float *)om__data(dg) : NULL;
    grid_taps t;
    for (int64_t b = 0; b < n; b++)
      for (int64_t p = 0; p < points; p++) {
        point_taps(&s, g + (b * points + p) * s.r, &t);
        float gg[3] = {0, 0, 0};
        for (int64_t k = 0; k < ch; k++) {
          int64_t at = (b * ch + k) * plane;
          sample_backward(&s, &t, x + at, dy[(b * ch + k) * points + p], dxp ? dxp + at : NULL, gg);
        }
        for (int k = 0; dgp && k < s.r; k++) dgp[(b * points + p) * s.r + k] = gg[k] * t.slope[k];
      }
  }
  om_tensor_release(xd);
  om_tensor_release(gd);
  om_tensor_release(dyd);
  if (!ok) {
    om_tensor_release(dx);
    om_tensor_release(dg);
    return false;
  }
  gin[0] = dx, gin[1] = dg;
  return true;
}

/* One GridSample node (opset 20: linear, nearest or cubic; zeros, border or reflection;
 * align_corners; 4-D and 5-D input), its sizes taken from the inputs' (every one may be
 * symbolic), with a guard for grid values that are not finite, where onnxruntime reads some pixel
 * and PyTorch's kernels (so eager and the Session) follow their own rules (measured in
 * onnxruntime-web 1.30; RAFT's one-column pyramid level divides by w - 1 = 0):
 *   z = g * 0 (NaN where g is not finite), and GridSample reads g' = Where(IsNaN(z), s, g) with s
 *   the grid value PyTorch's coordinate equals: border -1 (4-D) or 1 (5-D) for NaN and Sign(g)
 *   for an infinity; reflection -1 (4-D) or 1 (5-D), nearest 2^-20 inside; zeros and bicubic 0, whose points are then
 *   overwritten: t = Transpose(ReduceSum(z, last axis)) is NaN at the points [N, 1, ...] with a
 *   bad component, and the output there is NaN (4-D bilinear with zeros, bicubic with any
 *   padding: NaN weights) or 0 (4-D nearest with zeros, 5-D with zeros: the scalar kernel moves
 *   the coordinate outside);
 * and large finite values clipped where that changes nothing (zeros: +-2^24; border: +-1). Still
 * apart: with reflection, and bicubic with border, grid values beyond about 1e9 (onnxruntime reads
 * other pixels than PyTorch's float reflection), and nearest with reflection at a coordinate
 * outside the input exactly halfway between two pixels (onnxruntime rounds, then reflects the
 * pixel; PyTorch reflects, then rounds). An empty output writes nothing. */
static bool lower_grid_sample(om_lower *l, const om_call *c) {
  int empty = om__lower_empty(l, c);
  if (empty) return empty > 0;
  static const char *const modes[] = {"linear", "nearest", "cubic"}, *const pads[] = {"zeros", "border", "reflection"};
  const om_attrs *a = &c->attrs;
  const om_tensor *grid = c->in[1];
  int r = grid->ndim - 2, mode = (int)a->i[0], pad = (int)a->i[1];
  bool overwrite = pad == GRID_ZEROS || mode == GRID_BICUBIC, nan_out = mode == GRID_BICUBIC || (pad == GRID_ZEROS && r == 2 && mode == GRID_BILINEAR);
  float end = r == 2 ? -1.0f : 1.0f; /* the pixel border's NaN and reflection's bad values read: the first (4-D) or the last (5-D) */
  om_meta gm = {.dtype = OM_FLOAT32, .ndim = grid->ndim}, bm, pm, tm, ym = c->out_meta[0], cm;
  memcpy(gm.shape, grid->shape, sizeof(int64_t) * (size_t)grid->ndim);
  bm = gm, bm.dtype = OM_BOOL;
  pm = gm, pm.shape[grid->ndim - 1] = 1;
  tm = pm, tm.shape[1] = 1;
  for (int d = 2; d < tm.ndim; d++) tm.shape[d] = grid->shape[d - 1];
  cm = tm, cm.dtype = OM_BOOL;
  int x = om__lower_input(l, 0), g = om__lower_input(l, 1), zero = om__lower_scalar(l, 0, OM_FLOAT32), z, bad, sub, clean, y;
  if (x < 0 || g < 0 || zero < 0 || !om__emit(l, "Mul", (int[]){g, zero}, 2, &gm, 1, &z, NULL, 0) ||
      !om__emit(l, "IsNaN", &z, 1, &bm, 1, &bad, NULL, 0))
    return false;
  if (pad == GRID_BORDER && !overwrite) { /* NaN: the end pixel; an infinity: its sign's */
    int isnan, sign, e = om__lower_scalar(l, end, OM_FLOAT32);
    if (e < 0 || !om__emit(l, "IsNaN", &g, 1, &bm, 1, &isnan, NULL, 0) || !om__emit(l, "Sign", &g, 1, &gm, 1, &sign, NULL, 0) ||
        !om__emit(l, "Where", (int[]){isnan, e, sign}, 3, &gm, 1, &sub, NULL, 0))
      return false;
  } else {
    /* reflection: the end pixel; nearest a hair inside (2^-20 of the range: onnxruntime rounds before it
     * reflects, PyTorch after, and the end's coordinate -0.5 (or size - 0.5 without align_corners)
     * is a tie the two break apart; inside, both round to the end pixel below a size of 2^20) */
    sub = overwrite ? zero : om__lower_scalar(l, mode == GRID_NEAREST ? end * (1 - 0x1p-20) : end, OM_FLOAT32);
  }
  om_gattr at[3] = {OM_ATTR_INT("align_corners", a->i[2]), OM_ATTR_STRING("mode", modes[mode]), OM_ATTR_STRING("padding_mode", pads[pad])};
  if (sub < 0 || !om__emit(l, "Where", (int[]){bad, sub, g}, 3, &gm, 1, &clean, NULL, 0)) return false;
  /* large values into a range onnxruntime reads as PyTorch, where that changes no point: with
   * zeros past +-2^24 every tap lies outside (a size of 1 with align_corners reads its one pixel
   * at any value), with border (not bicubic, whose weights see the value as it is) past +-1 the
   * coordinate is clamped to the end pixel anyway */
  double bound = pad == GRID_ZEROS ? 0x1p24 : 1;
  if (pad == GRID_ZEROS || (pad == GRID_BORDER && mode != GRID_BICUBIC)) {
    int lo = om__lower_scalar(l, -bound, OM_FLOAT32), hi = om__lower_scalar(l, bound, OM_FLOAT32);
    if (lo < 0 || hi < 0 || !om__emit(l, "Clip", (int[]){clean, lo, hi}, 3, &gm, 1, &clean, NULL, 0)) return false;
  }
  if (!om__emit(l, "GridSample", (int[]){x, clean}, 2, &ym, 1, &y, at, 3)) return false;
  if (overwrite) { /* the points with a bad component: NaN or 0 */
    int64_t last = -1, perm[5] = {0, r + 1, 1, 2, 3};
    int axes = om__lower_ints(l, &last, 1), p, t, tbad, v = nan_out ? -1 : zero;
    if (axes < 0 || !om__emit(l, "ReduceSum", (int[]){z, axes}, 2, &pm, 1, &p, &OM_ATTR_INT("keepdims", 1), 1) ||
        !om__emit(l, "Transpose", &p, 1, &tm, 1, &t, &OM_ATTR_INTS("perm", perm, r + 2), 1) ||
        !om__emit(l, "IsNaN", &t, 1, &cm, 1, &tbad, NULL, 0) ||
        !om__emit(l, "Where", (int[]){tbad, nan_out ? t : v, y}, 3, &ym, 1, &y, NULL, 0))
      return false;
  }
  om__lower_output(l, 0, y);
  return true;
}

const om_op_def om__op_grid_sample = {
    .name = "grid_sample", .n_in = 2, .n_out = 1, .saves = OM_SAVES_IN(0) | OM_SAVES_IN(1),
    .infer = infer_grid_sample, .forward = forward_grid_sample, .backward = grid_sample_backward, .lower = lower_grid_sample,
    .onnx = "GridSample (mode linear, nearest or cubic; padding_mode; align_corners; 4-D and 5-D input) of the grid with its "
            "values that are not finite replaced (Mul by 0, IsNaN, Where; border: Sign) and large ones clipped (Clip: zeros, "
            "border); with zeros padding or bicubic, ReduceSum, Transpose, IsNaN, Where: NaN or 0 at those points, as PyTorch",
    /* grid values past [-1, 1] reach the padding; the sample's points lie off the cells' edges by
     * more than the finite differences' step */
    .test = {.n_in = 2, .ndims = {4, 4}, .shapes = {{2, 3, 4, 5}, {2, 3, 2, 2}}, .lo = -1.2, .hi = 1.2,
             .attrs = {.n_i = 3, .i = {GRID_BILINEAR, GRID_REFLECTION, 0}},
             .empty_refusal = "expected input to have non-empty spatial dimensions"}};

om_tensor *om_grid_sample(om_tensor *x, om_tensor *grid, om_grid_sample_mode mode, om_grid_sample_padding padding, bool align_corners) {
  om_tensor *in[2] = {x, grid};
  if (!om__check_inputs("grid_sample", in, 2)) return NULL;
  om_attrs a = {.n_i = 3, .i = {mode, padding, align_corners}};
  return om__apply1(OM_OP_grid_sample, in, 2, &a);
}
