/* Normalisations: softmax and log_softmax along one dim, layer_norm over the trailing dims,
 * group_norm over channel groups, batch_norm per channel (training: batch statistics and an
 * in-place update of the running ones); and scaled dot-product attention, on the attention op of
 * src/ops/matmul.c.
 *
 * Every kernel reads a contiguous copy of its input (om__dense) and sums a row in double in a fixed
 * order, so results do not depend on the layout and are the same natively and in WASM. Means
 * and variances are two-pass (mean first, then the mean of squared deviations), as PyTorch's CPU
 * kernels do. The backward rules are written with public ops; layer_norm saves its mean and
 * rstd as extra outputs (as PyTorch's native_layer_norm), the others recompute the statistics
 * from the saved input. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"


static bool all_float(om_call *c) {
  for (int i = 0; i < c->n_in; i++)
    if (c->in[i]->dtype != OM_FLOAT32)
      return om__fail(OM_ERR_DTYPE_MISMATCH, "%s: takes float32, not %s (input %d)", om_op_name(c->op),
                      om_dtype_name(c->in[i]->dtype), i);
  return true;
}

static void same_meta(om_call *c) {
  om_tensor *x = c->in[0];
  om_meta *m = &c->out_meta[0];
  *m = (om_meta){.dtype = OM_FLOAT32, .ndim = x->ndim};
  memcpy(m->shape, x->shape, sizeof(int64_t) * (size_t)x->ndim);
}

/* Float attribute k (called for k = 0, 1, ... in order): its default when the caller passed
 * fewer, so forward, backward and lower always see it. */
static void default_f(om_call *c, int k, double v) {
  if (c->attrs.n_f == k) {
    c->attrs.f[k] = v;
    c->attrs.n_f = k + 1;
  }
}

/* Applies op to x followed by the non-NULL ones of opt[0..n) (the optional inputs the attrs flag). */
static om_tensor *apply_present(om_op op, om_tensor *x, om_tensor *const *opt, int n, const om_attrs *a) {
  om_tensor *in[5] = {x};
  int k = 1;
  for (int i = 0; i < n; i++)
    if (opt[i]) in[k++] = opt[i];
  return om__apply1(op, in, k, a);
}

/* A float [shape] filled with value, for ONNX inputs PyTorch lets the caller omit (a missing
 * weight is ones, a missing bias zeros): Expand(Cast(value), shape). Value id or -1. */
static int lower_fill(om_lower *l, double value, const int64_t *shape, int ndim) {
  int64_t v = (int64_t)value;
  om_meta one = {.dtype = OM_FLOAT32, .ndim = 0}, full = {.dtype = OM_FLOAT32, .ndim = ndim};
  memcpy(full.shape, shape, sizeof(int64_t) * (size_t)ndim);
  int in[2], f, out;
  if ((in[0] = om__lower_ints(l, &v, -1)) < 0 ||
      !om__emit(l, "Cast", in, 1, &one, 1, &f, &OM_ATTR_INT("to", 1), 1) ||
      (in[1] = om__lower_ints(l, shape, ndim)) < 0)
    return -1;
  in[0] = f;
  return om__emit(l, "Expand", in, 2, &full, 1, &out, NULL, 0) ? out : -1;
}

/* The statistics part of a normalisation's backward, with public ops: given x and gh = dL/dxhat
 * where xhat = (x - mean) * rstd over dims (biased variance, rstd = 1/sqrt(var + eps)), writes
 * xhat (new reference) and, when gx is not NULL, gx = rstd * (gh - mean(gh) - xhat * mean(gh * xhat)). */
static bool norm_grad(om_tensor *x, om_tensor *gh, const int64_t *dims, int nd, double eps, om_tensor **xhat,
                      om_tensor **gx) {
  om_scope s = {0};
  om_tensor *mu = om__keep(&s, om_mean(x, dims, nd, true));
  om_tensor *xc = om__keep(&s, om_sub(x, mu));
  om_tensor *var = om__keep(&s, om_mean(om__keep(&s, om_mul(xc, xc)), dims, nd, true));
  om_tensor *rstd = om__keep(&s, om_rsqrt(om__keep(&s, om_add_scalar(var, eps))));
  *xhat = om_mul(xc, rstd);
  if (gx && *xhat) {
    om_tensor *m1 = om__keep(&s, om_mean(gh, dims, nd, true));
    om_tensor *m2 = om__keep(&s, om_mean(om__keep(&s, om_mul(gh, *xhat)), dims, nd, true));
    om_tensor *inner = om__keep(&s, om_sub(om__keep(&s, om_sub(gh, m1)), om__keep(&s, om_mul(*xhat, m2))));
    *gx = om_mul(rstd, inner);
  }
  om__scope_end(&s);
  return *xhat && (!gx || *gx);
}

/* ---- softmax / log_softmax: x [...], attrs [dim] -> same shape ----
 * y = exp(x - max) / sum(exp(x - max)) along dim; log_softmax = (x - max) - log(sum). A row of
 * -inf gives NaN, as in PyTorch. */

static bool infer_softmax(om_call *c) {
  if (!all_float(c)) return false;
  if (c->attrs.n_i != 1) return om__fail(OM_ERR_INVALID_ARGUMENT, "%s: needs dim", om_op_name(c->op));
  int dim = om__wrap_dim(c->attrs.i[0], c->in[0]->ndim, om_op_name(c->op));
  if (dim < 0) return false;
  c->attrs.i[0] = dim;
  same_meta(c);
  return true;
}

/* outer x n x inner: the rows along dim of a contiguous tensor of x's shape. */
static void rows_along(const om_tensor *x, int dim, int64_t *outer, int64_t *n, int64_t *inner) {
  *outer = *inner = *n = 1;
  for (int d = 0; d < x->ndim; d++) {
    if (d < dim) *outer *= x->shape[d];
    else if (d > dim) *inner *= x->shape[d];
    else *n = x->shape[d];
  }
}

/* The row's loops, inlined for a stride of 1 (attention's rows, softmax along the last dim), whose
 * loops the compiler vectorises, and for any other. */
static inline __attribute__((always_inline)) void softmax_row(const float *r, float *y, int64_t n, int64_t stride, double *e,
                                                              bool log_out) {
  double mx = -INFINITY, sum = 0;
  for (int64_t k = 0; k < n; k++) {
    double v = r[k * stride];
    mx = ((v > mx) | (v != v)) ? v : mx; /* a NaN wins; a select, not a branch */
  }
  for (int64_t k = 0; k < n; k++) e[k] = (double)r[k * stride] - mx;
  om__exp_n(e, n);
  for (int64_t k = 0; k < n; k++) sum += e[k];
  if (log_out) {
    double lse = om__log(sum);
    for (int64_t k = 0; k < n; k++) y[k * stride] = (float)((double)r[k * stride] - mx - lse);
  } else {
    for (int64_t k = 0; k < n; k++) y[k * stride] = (float)(e[k] / sum);
  }
}

void om__softmax_row(const float *r, float *y, int64_t n, int64_t stride, double *e, bool log_out) {
  if (stride == 1) softmax_row(r, y, n, 1, e, log_out);
  else softmax_row(r, y, n, stride, e, log_out);
}

/* forward_softmax's rows (outer x inner of n values, inner apart); part p: rows
 * [p rows / parts, (p + 1) rows / parts), each row's exp in its thread's scratch. */
typedef struct softmax_job {
  const float *x;
  float *y;
  int64_t n, inner, rows, parts;
  bool log_out;
  double *e[OM_MAX_THREADS];
} softmax_job;

static void softmax_part(void *ctx, int64_t part, int worker) {
  const softmax_job *j = ctx;
  for (int64_t r = part * j->rows / j->parts, r1 = (part + 1) * j->rows / j->parts; r < r1; r++) {
    int64_t first = r / j->inner * j->n * j->inner + r % j->inner; /* the row's first value */
    om__softmax_row(j->x + first, j->y + first, j->n, j->inner, j->e[worker], j->log_out);
  }
}

/* An element's work in a softmax row (a max, a double exp, a sum, a division: about 3 ns in
 * WASM), in the product's multiply-adds (om__job_threads' unit). */
#define EACH_SOFTMAX 60.0

static bool forward_softmax(om_call *c) {
  om_tensor *x = om__dense(c->in[0], om_op_name(c->op));
  if (!x) return false;
  int64_t outer, n, inner;
  rows_along(x, (int)c->attrs.i[0], &outer, &n, &inner);
  softmax_job j = {.x = (const float *)om__data(x), .y = (float *)om__data(c->out[0]), .n = n, .inner = inner, .rows = outer * inner,
                   .log_out = c->op == OM_OP_log_softmax};
  if (j.rows * n == 0) return om_tensor_release(x), true; /* an empty output */
  int threads = om__job_threads((double)j.rows * (double)n * EACH_SOFTMAX, j.rows);
  j.parts = om__few_parts(j.rows, threads);
  /* One row's exp(x - max), kept from the sum to the output: exp is the cost of this kernel
   * (attention spends most of its softmax time there), so each is computed once. */
  bool ok = true;
  for (int i = 0; ok && i < threads; i++) ok = (j.e[i] = (double *)om__scratch(i, 2 * n, om_op_name(c->op))) != NULL;
  if (ok) om__parallel(j.parts, threads, softmax_part, &j);
  om__scratch_done();
  om_tensor_release(x);
  return ok;
}

/* softmax: dx = y * (g - sum(g * y)); log_softmax: dx = g - exp(y) * sum(g), sums along dim. */
static bool softmax_backward(const om_record *r, om_tensor *const *g, om_tensor **gin) {
  om_scope s = {0};
  int64_t dim = r->attrs.i[0];
  int nd = r->in[0]->ndim ? 1 : 0;
  om_tensor *y = r->saved[0];
  if (r->op == OM_OP_softmax) {
    om_tensor *dot = om__keep(&s, om_sum(om__keep(&s, om_mul(g[0], y)), &dim, nd, true));
    gin[0] = om_mul(y, om__keep(&s, om_sub(g[0], dot)));
  } else {
    om_tensor *gs = om__keep(&s, om_sum(g[0], &dim, nd, true));
    gin[0] = om_sub(g[0], om__keep(&s, om_mul(om__keep(&s, om_exp(y)), gs)));
  }
  om__scope_end(&s);
  return gin[0] != NULL;
}

/* Softmax / LogSoftmax with axis = dim (opset 13+: one axis, as here). ONNX has no axis on a
 * 0-d tensor, so a 0-d input goes through Reshape to [1] and back. */
static bool lower_softmax(om_lower *l, const om_call *c) {
  const char *type = c->op == OM_OP_softmax ? "Softmax" : "LogSoftmax";
  om_gattr axis = OM_ATTR_INT("axis", c->attrs.i[0]);
  if (c->in[0]->ndim > 0) return om__lower_node(l, c, type, &axis, 1);
  int64_t one = 1;
  om_meta m1 = {.dtype = OM_FLOAT32, .ndim = 1, .shape = {1}};
  int in[2] = {om__lower_input(l, 0), om__lower_ints(l, &one, 1)}, a, b, out;
  if (in[1] < 0 || !om__emit(l, "Reshape", in, 2, &m1, 1, &a, NULL, 0) || !om__emit(l, type, &a, 1, &m1, 1, &b, &axis, 1))
    return false;
  int back[2] = {b, om__lower_ints(l, &one, 0)}; /* the shape [] */
  if (back[1] < 0 || !om__emit(l, "Reshape", back, 2, &c->out_meta[0], 1, &out, NULL, 0)) return false;
  om__lower_output(l, 0, out);
  return true;
}

#define SOFTMAX_DEF(NAME, ONNX)                                                                   \
  const om_op_def om__op_##NAME = {                                                               \
      .name = #NAME, .n_in = 1, .n_out = 1, .saves = OM_SAVES_OUT(0), .infer = infer_softmax,    \
      .forward = forward_softmax, .backward = softmax_backward, .lower = lower_softmax,          \
      .onnx = ONNX, .test = {.n_in = 1, .ndims = {3}, .shapes = {{2, 3, 4}}, .lo = -3, .hi = 3,    \
                             .attrs = {.n_i = 1, .i = {1}}}};                                     \
  om_tensor *om_##NAME(om_tensor *x, int dim) {                                                   \
    return om__apply1(OM_OP_##NAME, &x, 1, &(om_attrs){.n_i = 1, .i = {dim}});                    \
  }

SOFTMAX_DEF(softmax, "Softmax")
SOFTMAX_DEF(log_softmax, "LogSoftmax")

/* ---- layer_norm: x [..., *normalized_shape], weight and bias [*normalized_shape] (each
 * optional) -> y (x's shape), mean and rstd ([..., 1, ..., 1]: x's shape with the normalized
 * dims 1, as PyTorch's native_layer_norm and ONNX's LayerNormalization give them).
 * attrs i: [has_weight, has_bias, normalized_shape...], f: [eps] ---- */

static bool check_param(om_call *c, int i, const int64_t *shape, int ndim, const char *what) {
  om_tensor *p = c->in[i];
  char a[OM_SHAPE_STR_LEN], b[OM_SHAPE_STR_LEN];
  if (p->ndim == ndim && !memcmp(p->shape, shape, sizeof(int64_t) * (size_t)ndim)) return true;
  return om__fail(OM_ERR_SHAPE_MISMATCH, "%s: %s has shape %s, expected %s", om_op_name(c->op), what,
                  om__shape_str(a, sizeof a, p->shape, p->ndim), om__shape_str(b, sizeof b, shape, ndim));
}

/* Checks the count of optional inputs against the has_* flags at attrs.i[first..first+n). */
static bool check_optional(om_call *c, int fixed, int first, int n) {
  int want = fixed;
  for (int k = 0; k < n; k++) {
    c->attrs.i[first + k] = c->attrs.i[first + k] != 0;
    want += (int)c->attrs.i[first + k];
  }
  if (c->n_in != want)
    return om__fail(OM_ERR_INVALID_ARGUMENT, "%s: the flags name %d inputs, got %d", om_op_name(c->op), want, c->n_in);
  return all_float(c);
}

static bool infer_layer_norm(om_call *c) {
  om_tensor *x = c->in[0];
  char a[OM_SHAPE_STR_LEN], b[OM_SHAPE_STR_LEN];
  int k = c->attrs.n_i - 2;
  if (k > OM_MAX_DIMS) return om__fail(OM_ERR_INVALID_ARGUMENT, "layer_norm: normalized_shape has %d dims (at most %d)", k, OM_MAX_DIMS);
  if (k < 1)
    return om__fail(OM_ERR_INVALID_ARGUMENT, "layer_norm: expected normalized_shape to be at least 1-dimensional");
  if (!check_optional(c, 1, 0, 2)) return false;
  const int64_t *ns = c->attrs.i + 2;
  if (x->ndim < k || memcmp(x->shape + x->ndim - k, ns, sizeof(int64_t) * (size_t)k))
    return om__fail(OM_ERR_SHAPE_MISMATCH, "layer_norm: given normalized_shape=%s, expected input with shape [*, %s, but got input of size %s",
                    om__shape_str(a, sizeof a, ns, k), a + 1, om__shape_str(b, sizeof b, x->shape, x->ndim));
  for (int i = 1; i < c->n_in; i++)
    if (!check_param(c, i, ns, k, i == 1 && c->attrs.i[0] ? "weight" : "bias")) return false;
  default_f(c, 0, 1e-5);
  same_meta(c);
  for (int j = 1; j < 3; j++) {
    c->out_meta[j] = c->out_meta[0];
    for (int d = x->ndim - k; d < x->ndim; d++) c->out_meta[j].shape[d] = 1;
  }
  return true;
}

/* normalize_rows' per-column weight and bias (NULL for none), indexed by column / div % mod. */
typedef struct affine { const float *w, *b; int64_t div, mod; } affine;

typedef double v2d __attribute__((vector_size(16)));
typedef float v2f __attribute__((vector_size(8)));
/* p[0], p[1] as doubles */
static inline v2d load2(const float *p) {
  v2f f;
  memcpy(&f, p, sizeof f);
  return __builtin_convertvector(f, v2d);
}

/* The sum of x[k] (or of (x[k] - m)^2) in double, in a fixed order that keeps four adds in
 * flight: four partial sums of every fourth element, (s0 + s1) + (s2 + s3), then the last n % 4
 * in order (one chain of n dependent adds was most of layer norm's time). */
static double sum4(const float *x, int64_t n, double m, bool squares) {
  v2d s01 = {0, 0}, s23 = {0, 0};
  int64_t k = 0;
  for (; k + 4 <= n; k += 4) {
    v2d a = load2(x + k), b = load2(x + k + 2);
    if (squares) a = (a - m) * (a - m), b = (b - m) * (b - m);
    s01 += a, s23 += b;
  }
  double r = (s01[0] + s01[1]) + (s23[0] + s23[1]);
  for (; k < n; k++) {
    double d = (double)x[k] - m;
    r += squares ? d * d : (double)x[k];
  }
  return r;
}

/* Rows per block of normalize_rows: each block's statistics first, then its rows normalised. */
enum { STAT_ROWS = 64 };
/* An element's work in normalize_rows (two sums and the normalisation: about 1 ns in WASM), in
 * the product's multiply-adds (om__job_threads' unit). */
#define EACH_NORMALIZED 20.0

/* normalize_rows' arguments; its part p: rows [p rows / parts, (p + 1) rows / parts). */
typedef struct norm_job {
  const float *px;
  float *py;
  int64_t rows, n, offset_mod, parts;
  double eps;
  affine af;
  float *mean_out, *rstd_out;
} norm_job;

static void normalize_part(void *ctx, int64_t part, int worker) {
  (void)worker;
  const norm_job *job = ctx;
  const float *px = job->px;
  float *py = job->py;
  const affine af = job->af;
  const int64_t n = job->n, offset_mod = job->offset_mod, r0 = part * job->rows / job->parts, r1 = (part + 1) * job->rows / job->parts;
  double means[STAT_ROWS], rstds[STAT_ROWS];
  for (int64_t r = r0; r < r1; r++) {
    /* A row's statistics are one chain of dependent adds, divisions and a square root (a short
     * row is all latency): computed for a block of rows in a loop of their own, the chains of
     * several rows overlap. */
    if ((r - r0) % STAT_ROWS == 0)
      for (int64_t i = r; i < r1 && i < r + STAT_ROWS; i++) {
        const float *x = px + i * n;
        double mean = sum4(x, n, 0, false) / (double)n, var = sum4(x, n, mean, true) / (double)n;
        means[i - r] = mean, rstds[i - r] = 1.0 / sqrt(var + job->eps);
      }
    const float *x = px + r * n;
    float *y = py + r * n;
    double mean = means[(r - r0) % STAT_ROWS], rstd = rstds[(r - r0) % STAT_ROWS];
    if (job->mean_out) job->mean_out[r] = (float)mean, job->rstd_out[r] = (float)rstd;
    int64_t base = offset_mod ? (r % offset_mod) * n : 0; /* the row's first parameter column */
    /* In runs that take consecutive parameters (div 1: layer norm's columns) or one parameter
     * (a group norm channel's spatial run), so no element pays for a division. */
    for (int64_t k = 0, len; k < n; k += len) {
      int64_t q = af.div == 1 ? base + k : (base + k) / af.div, j = q < af.mod ? q : q % af.mod, step = af.div == 1; /* no division on a layer norm's row */
      len = step ? af.mod - j : af.div - (base + k - q * af.div);
      len = len < n - k ? len : n - k;
      int64_t t = 0;
      for (; t + 2 <= len; t += 2) { /* two lanes, each the scalar loop's operations */
        v2d v = (load2(x + k + t) - mean) * rstd;
        if (af.w) v *= step ? load2(af.w + j + t) : (v2d){af.w[j], af.w[j]};
        if (af.b) v += step ? load2(af.b + j + t) : (v2d){af.b[j], af.b[j]};
        v2f f = __builtin_convertvector(v, v2f);
        memcpy(y + k + t, &f, sizeof f);
      }
      for (; t < len; t++) {
        double v = ((double)x[k + t] - mean) * rstd;
        if (af.w) v *= af.w[j + step * t];
        if (af.b) v += af.b[j + step * t];
        y[k + t] = (float)v;
      }
    }
  }
}

/* Normalises rows [rows, n] of px into py (see affine; offset_mod: a row's first parameter
 * column is (row % offset_mod) n, 0: the first), writing each row's mean and rstd where mean_out
 * is not NULL: on the pool where the rows are worth it, each row computed alike in any part. */
static void normalize_rows(const float *px, float *py, int64_t rows, int64_t n, double eps, affine af, int64_t offset_mod,
                           float *mean_out, float *rstd_out) {
  norm_job j = {.px = px, .py = py, .rows = rows, .n = n, .offset_mod = offset_mod, .eps = eps, .af = af, .mean_out = mean_out, .rstd_out = rstd_out};
  int threads = om__job_threads((double)rows * (double)n * EACH_NORMALIZED, rows);
  j.parts = om__few_parts(rows, threads);
  if (j.parts > 0) om__parallel(j.parts, threads, normalize_part, &j);
}

/* Dense copies of the optional weight and bias among c's inputs from index first (NULL when absent). */
static bool dense_params(om_call *c, int first, bool has_w, bool has_b, om_tensor **w, om_tensor **b) {
  *w = has_w ? om__dense(c->in[first], om_op_name(c->op)) : NULL;
  *b = has_b ? om__dense(c->in[first + has_w], om_op_name(c->op)) : NULL;
  return (!has_w || *w) && (!has_b || *b);
}

static bool forward_layer_norm(om_call *c) {
  int k = c->attrs.n_i - 2;
  om_tensor *x = om__dense(c->in[0], "layer_norm"), *w = NULL, *b = NULL;
  bool ok = x && dense_params(c, 1, c->attrs.i[0], c->attrs.i[1], &w, &b);
  if (ok) {
    int64_t n = 1, rows = 1;
    for (int d = 0; d < k; d++) n *= c->attrs.i[2 + d];
    for (int d = 0; d < x->ndim - k; d++) rows *= x->shape[d];
    affine af = {w ? (const float *)om__data(w) : NULL, b ? (const float *)om__data(b) : NULL, 1, n ? n : 1};
    normalize_rows((const float *)om__data(x), (float *)om__data(c->out[0]), rows, n, c->attrs.f[0], af, 0,
                   (float *)om__data(c->out[1]), (float *)om__data(c->out[2]));
  }
  om_tensor_release(x);
  om_tensor_release(w);
  om_tensor_release(b);
  return ok;
}

/* With the saved mean and rstd: xhat = (x - mean) * rstd, gh = g * weight,
 *   dx = rstd * (gh - mean(gh) - xhat * mean(gh * xhat))        (through y)
 *      + (g_mean - g_rstd * rstd^2 * xhat) / n                  (through the mean and rstd outputs)
 * with the means over the n normalized elements; dweight = sum(g * xhat), dbias = sum(g) over
 * the leading dims. */
static bool layer_norm_backward(const om_record *r, om_tensor *const *g, om_tensor **gin) {
  om_scope s = {0};
  om_tensor *x = r->in[0], *mean = r->saved[1], *rstd = r->saved[2];
  bool has_w = r->attrs.i[0], has_b = r->attrs.i[1];
  int k = r->attrs.n_i - 2;
  int64_t dims[OM_MAX_DIMS], n = 1;
  for (int d = 0; d < k; d++) dims[d] = x->ndim - k + d, n *= x->shape[x->ndim - k + d];
  om_tensor *xhat = om__keep(&s, om_mul(om__keep(&s, om_sub(x, mean)), rstd));
  bool ok = xhat != NULL;
  if (ok && om__wants(r, 0)) {
    om_tensor *gh = has_w ? om__keep(&s, om_mul(g[0], r->in[1])) : g[0];
    om_tensor *m1 = om__keep(&s, om_mean(gh, dims, k, true));
    om_tensor *m2 = om__keep(&s, om_mean(om__keep(&s, om_mul(gh, xhat)), dims, k, true));
    om_tensor *inner = om__keep(&s, om_sub(om__keep(&s, om_sub(gh, m1)), om__keep(&s, om_mul(xhat, m2))));
    om_tensor *r2 = om__keep(&s, om_mul(g[2], om__keep(&s, om_mul(rstd, rstd))));
    om_tensor *stats = om__keep(&s, om_sub(g[1], om__keep(&s, om_mul(r2, xhat))));
    ok = (gin[0] = om_add(om__keep(&s, om_mul(rstd, inner)), om__keep(&s, om_scale(stats, n ? 1.0 / (double)n : 0)))) != NULL;
  }
  if (ok && has_w && om__wants(r, 1))
    ok = (gin[1] = om__sum_to(om__keep(&s, om_mul(g[0], xhat)), r->in[1]->shape, r->in[1]->ndim)) != NULL;
  if (ok && has_b && om__wants(r, 1 + has_w))
    ok = (gin[1 + has_w] = om__sum_to(g[0], r->in[1 + has_w]->shape, r->in[1 + has_w]->ndim)) != NULL;
  om__scope_end(&s);
  return ok;
}

/* LayerNormalization (opset 17) with axis = -len(normalized_shape) and epsilon, whose optional
 * outputs Mean and InvStdDev are mean and rstd; its Scale input is required, so a missing
 * weight is a ones constant. */
static bool lower_layer_norm(om_lower *l, const om_call *c) {
  int k = c->attrs.n_i - 2;
  bool has_w = c->attrs.i[0], has_b = c->attrs.i[1];
  int in[3] = {om__lower_input(l, 0), has_w ? om__lower_input(l, 1) : lower_fill(l, 1, c->attrs.i + 2, k),
               has_b ? om__lower_input(l, 1 + has_w) : -1};
  om_gattr at[2] = {OM_ATTR_INT("axis", -k), OM_ATTR_FLOAT("epsilon", c->attrs.f[0])};
  int out[3];
  if (in[1] < 0 || !om__emit(l, "LayerNormalization", in, has_b ? 3 : 2, c->out_meta, 3, out, at, 2)) return false;
  for (int j = 0; j < 3; j++) om__lower_output(l, j, out[j]);
  return true;
}

const om_op_def om__op_layer_norm = {
    .name = "layer_norm", .n_in = -1, .n_out = 3, .saves = OM_SAVES_IN(0) | OM_SAVES_IN(1) | OM_SAVES_OUT(1) | OM_SAVES_OUT(2),
    .infer = infer_layer_norm, .forward = forward_layer_norm, .backward = layer_norm_backward,
    .lower = lower_layer_norm, .onnx = "LayerNormalization",
    .test = {.n_in = 3, .ndims = {3, 1, 1}, .shapes = {{2, 3, 5}, {5}, {5}}, .lo = -2, .hi = 2,
             .attrs = {.n_i = 3, .i = {1, 1, 5}, .n_f = 1, .f = {1e-5}}}};

om_tensor *om_layer_norm(om_tensor *x, const int64_t *normalized_shape, int n, om_tensor *weight, om_tensor *bias, double eps) {
  if (n < 0 || n > OM_MAX_DIMS || (n && !normalized_shape))
    return om__fail(OM_ERR_INVALID_ARGUMENT, "layer_norm: normalized_shape has %d dims (at most %d)", n, OM_MAX_DIMS), NULL;
  om_attrs a = {.n_i = 2 + n, .i = {weight != NULL, bias != NULL}, .n_f = 1, .f = {eps}};
  if (n) memcpy(a.i + 2, normalized_shape, sizeof(int64_t) * (size_t)n);
  return apply_present(OM_OP_layer_norm, x, (om_tensor *[]){weight, bias}, 2, &a);
}

/* ---- rms_norm: x [..., n], weight [n] (optional) -> x's shape; attrs i: [has_weight, form],
 * f: [eps] ----
 * y = x r [* weight] (form 0, r = 1 / sqrt(mean(x^2) + eps)) or x / sqrt(mean(x^2) + eps) [* weight]
 * (form 1) over the last axis: what Hugging Face's RMSNorm (LLaMA, T5) is as operations, and what
 * the Session's fast mode puts in place of those operations of an exported graph (src/runtime/passes.c).
 * The kernel does each operation's arithmetic in its order: each square rounded to float, their sum
 * in double in order, divided by n and rounded (mean's), eps added, sqrt, 1 / s, each product in
 * float: the same bits as the separate ops (pow or mul, mean, add, sqrt, div, mul, mul), natively and
 * in WASM. */

static bool infer_rms_norm(om_call *c) {
  om_attrs *a = &c->attrs;
  if (a->n_i != 2 || (a->i[1] != 0 && a->i[1] != 1))
    return om__fail(OM_ERR_INVALID_ARGUMENT, "rms_norm: needs attrs [has_weight, form 0|1]");
  if (!check_optional(c, 1, 0, 1)) return false;
  om_tensor *x = c->in[0];
  if (x->ndim < 1) return om__fail(OM_ERR_INVALID_ARGUMENT, "rms_norm: takes at least 1 dim, got 0");
  if (a->i[0] && !check_param(c, 1, x->shape + x->ndim - 1, 1, "weight")) return false;
  default_f(c, 0, 1e-6);
  same_meta(c);
  return true;
}

static bool forward_rms_norm(om_call *c) {
  om_tensor *x = om__dense(c->in[0], "rms_norm"), *w = NULL, *none = NULL;
  bool ok = x && dense_params(c, 1, c->attrs.i[0], false, &w, &none), recip = c->attrs.i[1] == 0;
  int64_t n = x ? x->shape[x->ndim - 1] : 0, rows = n ? (x ? om_tensor_numel(x) : 0) / n : 0;
  const float eps = (float)c->attrs.f[0], *pw = w ? (const float *)om__data(w) : NULL;
  for (int64_t r = 0; ok && r < rows; r++) {
    const float *px = (const float *)om__data(x) + r * n;
    float *py = (float *)om__data(c->out[0]) + r * n;
    double sum = 0;
    for (int64_t k = 0; k < n; k++) sum += (double)(px[k] * px[k]);
    float s = sqrtf((float)(sum / (double)n) + eps), inv = 1.0f / s;
    for (int64_t k = 0; k < n; k++) {
      float y = recip ? px[k] * inv : px[k] / s;
      py[k] = pw ? y * pw[k] : y;
    }
  }
  om_tensor_release(x);
  om_tensor_release(w);
  return ok;
}

/* gh = g weight, x r (r = 1 / sqrt(mean(x^2) + eps)) recomputed with public ops:
 *   dx = r (gh - x r mean(gh x r)),  dweight = sum(g x r) over the leading dims. */
static bool rms_norm_backward(const om_record *r, om_tensor *const *g, om_tensor **gin) {
  om_scope s = {0};
  om_tensor *x = r->in[0];
  int64_t last = x->ndim - 1;
  om_tensor *ms = om__keep(&s, om_mean(om__keep(&s, om_mul(x, x)), &last, 1, true));
  om_tensor *rs = om__keep(&s, om_rsqrt(om__keep(&s, om_add_scalar(ms, r->attrs.f[0]))));
  om_tensor *xr = om__keep(&s, om_mul(x, rs));
  bool ok = xr != NULL;
  if (ok && om__wants(r, 0)) {
    om_tensor *gh = r->attrs.i[0] ? om__keep(&s, om_mul(g[0], r->in[1])) : g[0];
    om_tensor *m = om__keep(&s, om_mean(om__keep(&s, om_mul(gh, xr)), &last, 1, true));
    ok = (gin[0] = om_mul(rs, om__keep(&s, om_sub(gh, om__keep(&s, om_mul(xr, m)))))) != NULL;
  }
  if (ok && r->attrs.i[0] && om__wants(r, 1)) ok = (gin[1] = om__sum_to(om__keep(&s, om_mul(g[0], xr)), r->in[1]->shape, 1)) != NULL;
  om__scope_end(&s);
  return ok;
}

/* The operations themselves: Mul(x, x), ReduceMean over the last axis (ReduceSum and Div by the
 * count where the axis can be empty), Add(eps), Sqrt, then Div(1, s) and Mul(x, .) (form 0) or
 * Div(x, s) (form 1), then Mul by the weight. */
static bool lower_rms_norm(om_lower *l, const om_call *c) {
  const om_tensor *x = c->in[0];
  om_meta stat = c->out_meta[0];
  stat.shape[stat.ndim - 1] = 1;
  int ext = om__lower_in_x(l, 0, x->ndim - 1), div = om__lower_count_divisor(l, &ext, 1, OM_FLOAT32);
  int64_t axis = -1;
  int xv = om__lower_input(l, 0), sq, v, eps = om__lower_scalar(l, (float)c->attrs.f[0], OM_FLOAT32), one = om__lower_scalar(l, 1, OM_FLOAT32);
  int axes = om__lower_ints(l, &axis, 1), y;
  if (div == -1 || xv < 0 || eps < 0 || one < 0 || axes < 0 || !om__emit(l, "Mul", (int[]){xv, xv}, 2, &c->out_meta[0], 1, &sq, NULL, 0) ||
      !om__emit(l, div >= 0 ? "ReduceSum" : "ReduceMean", (int[]){sq, axes}, 2, &stat, 1, &v, &OM_ATTR_INT("keepdims", 1), 1) ||
      (div >= 0 && !om__emit(l, "Div", (int[]){v, div}, 2, &stat, 1, &v, NULL, 0)) ||
      !om__emit(l, "Add", (int[]){v, eps}, 2, &stat, 1, &v, NULL, 0) || !om__emit(l, "Sqrt", &v, 1, &stat, 1, &v, NULL, 0))
    return false;
  if (c->attrs.i[1] == 0 ? !om__emit(l, "Div", (int[]){one, v}, 2, &stat, 1, &v, NULL, 0) || !om__emit(l, "Mul", (int[]){xv, v}, 2, &c->out_meta[0], 1, &y, NULL, 0)
                         : !om__emit(l, "Div", (int[]){xv, v}, 2, &c->out_meta[0], 1, &y, NULL, 0))
    return false;
  if (c->attrs.i[0]) {
    int w = om__lower_input(l, 1);
    if (w < 0 || !om__emit(l, "Mul", (int[]){y, w}, 2, &c->out_meta[0], 1, &y, NULL, 0)) return false;
  }
  om__lower_output(l, 0, y);
  return true;
}

const om_op_def om__op_rms_norm = {
    .name = "rms_norm", .n_in = -1, .n_out = 1, .saves = OM_SAVES_IN(0) | OM_SAVES_IN(1),
    .infer = infer_rms_norm, .forward = forward_rms_norm, .backward = rms_norm_backward, .lower = lower_rms_norm,
    .onnx = "Mul, ReduceMean, Add, Sqrt, Div (, Mul), Mul by the weight",
    .test = {.n_in = 2, .ndims = {3, 1}, .shapes = {{2, 3, 5}, {5}}, .lo = -2, .hi = 2, .attrs = {.n_i = 2, .i = {1, 0}, .n_f = 1, .f = {1e-6}}}};

om_tensor *om__rms_norm(om_tensor *x, om_tensor *weight, double eps, int form) {
  om_attrs a = {.n_i = 2, .i = {weight != NULL, form}, .n_f = 1, .f = {eps}};
  return apply_present(OM_OP_rms_norm, x, &weight, 1, &a);
}

/* ---- group_norm: x [N, C, *], weight and bias [C] (each optional) -> x's shape.
 * attrs i: [num_groups, has_weight, has_bias], f: [eps]. The statistics are per sample and per
 * group of C / num_groups consecutive channels; weight and bias are per channel. ---- */

static bool infer_group_norm(om_call *c) {
  om_tensor *x = c->in[0];
  char a[OM_SHAPE_STR_LEN];
  if (c->attrs.n_i != 3) return om__fail(OM_ERR_INVALID_ARGUMENT, "group_norm: needs num_groups, has_weight and has_bias");
  if (!check_optional(c, 1, 1, 2)) return false;
  if (x->ndim < 2)
    return om__fail(OM_ERR_INVALID_ARGUMENT, "group_norm: expected an input [N, C, *] with at least 2 dims, got %s",
                    om__shape_str(a, sizeof a, x->shape, x->ndim));
  int64_t groups = c->attrs.i[0], ch = x->shape[1];
  if (groups < 1 || ch % groups)
    return om__fail(OM_ERR_INVALID_ARGUMENT, "group_norm: expected the number of channels in input to be divisible by num_groups, but got input of shape %s and num_groups=%lld",
                    om__shape_str(a, sizeof a, x->shape, x->ndim), (long long)groups);
  for (int i = 1; i < c->n_in; i++)
    if (!check_param(c, i, &ch, 1, i == 1 && c->attrs.i[1] ? "weight" : "bias")) return false;
  default_f(c, 0, 1e-5);
  same_meta(c);
  return true;
}

static bool forward_group_norm(om_call *c) {
  om_tensor *x = om__dense(c->in[0], "group_norm"), *w = NULL, *b = NULL;
  bool ok = x && dense_params(c, 1, c->attrs.i[1], c->attrs.i[2], &w, &b);
  if (ok) {
    int64_t groups = c->attrs.i[0], ch = x->shape[1], spatial = 1;
    for (int d = 2; d < x->ndim; d++) spatial *= x->shape[d];
    int64_t n = ch / groups * spatial, rows = x->shape[0] * groups;
    /* row r is group r % groups of a sample; its element k has channel (r % groups * n + k) / spatial */
    affine af = {w ? (const float *)om__data(w) : NULL, b ? (const float *)om__data(b) : NULL, spatial ? spatial : 1, ch};
    normalize_rows((const float *)om__data(x), (float *)om__data(c->out[0]), rows, n, c->attrs.f[0], af, groups, NULL, NULL);
  }
  om_tensor_release(x);
  om_tensor_release(w);
  om_tensor_release(b);
  return ok;
}

/* The shape [C, 1, ...] that broadcasts a per-channel vector over x [N, C, *]. */
static int channel_shape(const om_tensor *x, int64_t *shape) {
  shape[0] = x->shape[1];
  for (int d = 2; d < x->ndim; d++) shape[d - 1] = 1;
  return x->ndim - 1;
}

/* Per-channel gradient: sum of t over every dim but the channel one, as [C]. */
static om_tensor *per_channel(om_tensor *t, const om_tensor *x) {
  int64_t cs[OM_MAX_DIMS], ch = x->shape[1];
  om_tensor *s = om__sum_to(t, cs, channel_shape(x, cs));
  om_tensor *r = s ? om_reshape(s, &ch, 1) : NULL;
  om_tensor_release(s);
  return r;
}

/* A per-channel vector p [C] viewed as [C, 1, ...] for broadcasting over x. */
static om_tensor *as_channels(om_tensor *p, const om_tensor *x) {
  int64_t cs[OM_MAX_DIMS];
  return om_reshape(p, cs, channel_shape(x, cs));
}

/* x and gh = g * weight seen as [N, G, -1]: norm_grad over the last dim, reshaped back. */
static bool group_norm_backward(const om_record *r, om_tensor *const *g, om_tensor **gin) {
  om_scope s = {0};
  om_tensor *x = r->in[0];
  bool has_w = r->attrs.i[1], has_b = r->attrs.i[2];
  int64_t gs[3] = {x->shape[0], r->attrs.i[0], x->shape[1] / r->attrs.i[0]}, last = 2;
  for (int d = 2; d < x->ndim; d++) gs[2] *= x->shape[d]; /* counted: a -1 is ambiguous for an empty x */
  om_tensor *gh = has_w ? om__keep(&s, om_mul(g[0], om__keep(&s, as_channels(r->in[1], x)))) : g[0];
  om_tensor *xr = om__keep(&s, om_reshape(x, gs, 3)), *ghr = gh ? om__keep(&s, om_reshape(gh, gs, 3)) : NULL;
  om_tensor *xhat_r = NULL, *gx_r = NULL;
  bool ok = xr && ghr && norm_grad(xr, ghr, &last, 1, r->attrs.f[0], &xhat_r, om__wants(r, 0) ? &gx_r : NULL);
  om__keep(&s, xhat_r);
  om__keep(&s, gx_r);
  if (ok && gx_r) ok = (gin[0] = om_reshape(gx_r, x->shape, x->ndim)) != NULL;
  if (ok && has_w && om__wants(r, 1)) {
    om_tensor *xhat = om__keep(&s, om_reshape(xhat_r, x->shape, x->ndim));
    ok = xhat && (gin[1] = per_channel(om__keep(&s, om_mul(g[0], xhat)), x)) != NULL;
  }
  if (ok && has_b && om__wants(r, 1 + has_w)) ok = (gin[1 + has_w] = per_channel(g[0], x)) != NULL;
  om__scope_end(&s);
  return ok;
}

/* onnxruntime-web 1.30 runs GroupNormalization at opset 20 with the opset-18 definition, whose
 * scale and bias are per group, not per channel as PyTorch's; so the lowering is
 * Reshape to [N, G, -1], InstanceNormalization (ones/zeros per group), Reshape back to Shape(x),
 * then Mul and Add by weight and bias reshaped to [C, 1, ...]. Reshape's -1 is ambiguous for an
 * empty x: at fixed sizes that is zeros (om__lower_empty); where an extent can be 0 at some size
 * the shape [N, G, C / G * spatial] is computed, and both Reshapes take allowzero (else a 0 of
 * Shape(x) copies an axis the normalized [N, G, 0] lacks: onnxruntime-web refuses the run). */
static bool lower_group_norm(om_lower *l, const om_call *c) {
  const om_tensor *x = c->in[0];
  int empty = om__lower_empty(l, c);
  if (empty) return empty > 0;
  bool has_w = c->attrs.i[1], has_b = c->attrs.i[2], may_be_0 = false;
  int64_t groups = c->attrs.i[0], spatial = 1, cs[OM_MAX_DIMS];
  int rest = om__lower_x_const(l, x->shape[1] / groups);
  for (int d = 0; d < x->ndim; d++) may_be_0 |= om__lower_may_be_0(l, om__lower_in_ext(l, 0, d));
  for (int d = 2; d < x->ndim; d++) spatial *= x->shape[d], rest = om__lower_x_mul(l, rest, om__lower_in_x(l, 0, d));
  int64_t gs[3] = {0, groups, -1};
  om_meta rm = {.dtype = OM_FLOAT32, .ndim = 3, .shape = {x->shape[0], groups, x->shape[1] / groups * spatial}};
  om_meta sm = {.dtype = OM_INT64, .ndim = 1, .shape = {x->ndim}};
  int xin = om__lower_input(l, 0), in[3], xr, yr, shp, y;
  if (may_be_0) {
    memcpy(gs, rm.shape, sizeof gs);
    in[1] = om__lower_shape_operand(l, gs, (int[]){om__lower_in_ext(l, 0, 0), -1, om__lower_x_is_const(l, rest, NULL) ? -1 : rest}, 3);
  } else {
    in[1] = om__lower_ints(l, gs, 3);
  }
  if (rest < 0 || in[1] < 0) return false;
  in[0] = xin;
  if (!om__emit(l, "Reshape", in, 2, &rm, 1, &xr, &OM_ATTR_INT("allowzero", 1), may_be_0)) return false;
  in[0] = xr;
  if ((in[1] = lower_fill(l, 1, &groups, 1)) < 0 || (in[2] = lower_fill(l, 0, &groups, 1)) < 0 ||
      !om__emit(l, "InstanceNormalization", in, 3, &rm, 1, &yr, &OM_ATTR_FLOAT("epsilon", c->attrs.f[0]), 1) ||
      !om__emit(l, "Shape", &xin, 1, &sm, 1, &shp, NULL, 0) ||
      !om__emit(l, "Reshape", (int[]){yr, shp}, 2, &c->out_meta[0], 1, &y, &OM_ATTR_INT("allowzero", 1), may_be_0))
    return false;
  int ncs = channel_shape(x, cs), cshape = om__lower_ints(l, cs, ncs);
  om_meta pm = {.dtype = OM_FLOAT32, .ndim = ncs};
  memcpy(pm.shape, cs, sizeof(int64_t) * (size_t)ncs);
  for (int k = 0; k < has_w + has_b; k++) {
    int p;
    if (cshape < 0 || !om__emit(l, "Reshape", (int[]){om__lower_input(l, 1 + k), cshape}, 2, &pm, 1, &p, NULL, 0) ||
        !om__emit(l, k == 0 && has_w ? "Mul" : "Add", (int[]){y, p}, 2, &c->out_meta[0], 1, &y, NULL, 0))
      return false;
  }
  om__lower_output(l, 0, y);
  return true;
}

const om_op_def om__op_group_norm = {
    .name = "group_norm", .n_in = -1, .n_out = 1, .saves = OM_SAVES_IN(0) | OM_SAVES_IN(1),
    .infer = infer_group_norm, .forward = forward_group_norm, .backward = group_norm_backward,
    .lower = lower_group_norm, .onnx = "Reshape, InstanceNormalization, Shape, Reshape, Mul, Add",
    .test = {.n_in = 3, .ndims = {4, 1, 1}, .shapes = {{2, 4, 3, 2}, {4}, {4}}, .lo = -2, .hi = 2,
             .attrs = {.n_i = 3, .i = {2, 1, 1}, .n_f = 1, .f = {1e-5}}}};

om_tensor *om_group_norm(om_tensor *x, int64_t num_groups, om_tensor *weight, om_tensor *bias, double eps) {
  om_attrs a = {.n_i = 3, .i = {num_groups, weight != NULL, bias != NULL}, .n_f = 1, .f = {eps}};
  return apply_present(OM_OP_group_norm, x, (om_tensor *[]){weight, bias}, 2, &a);
}

/* ---- batch_norm: x [N, C, *], running_mean and running_var [C] (both or neither), weight and
 * bias [C] (each optional) -> x's shape. attrs i: [training, has_running, has_weight, has_bias],
 * f: [momentum, eps].
 * Training: normalise with the batch's mean and biased variance per channel, and (with running
 * stats) update them in place, not recorded by autograd:
 *   running_mean = (1 - momentum) running_mean + momentum mean
 *   running_var  = (1 - momentum) running_var  + momentum var * n / (n - 1)   (unbiased)
 * Evaluation: normalise with the running statistics. ---- */

static bool infer_batch_norm(om_call *c) {
  om_tensor *x = c->in[0];
  char a[OM_SHAPE_STR_LEN];
  if (c->attrs.n_i != 4)
    return om__fail(OM_ERR_INVALID_ARGUMENT, "batch_norm: needs training, has_running, has_weight and has_bias");
  for (int k = 0; k < 4; k++) c->attrs.i[k] = c->attrs.i[k] != 0;
  int want = 1 + 2 * (int)c->attrs.i[1] + (int)c->attrs.i[2] + (int)c->attrs.i[3];
  if (c->n_in != want)
    return om__fail(OM_ERR_INVALID_ARGUMENT, "batch_norm: the flags name %d inputs, got %d", want, c->n_in);
  if (!all_float(c)) return false;
  if (x->ndim < 2)
    return om__fail(OM_ERR_INVALID_ARGUMENT, "batch_norm: expected an input [N, C, *] with at least 2 dims, got %s",
                    om__shape_str(a, sizeof a, x->shape, x->ndim));
  int64_t ch = x->shape[1], per = ch ? om_tensor_numel(x) / ch : 0;
  const char *names[4] = {"running_mean", "running_var", "weight", "bias"};
  for (int i = 1, k = c->attrs.i[1] ? 0 : 2; i < c->n_in; i++, k++) {
    while (k >= 2 && !c->attrs.i[k]) k++; /* skip an absent weight */
    if (!check_param(c, i, &ch, 1, names[k])) return false;
  }
  if (c->attrs.i[0] && per <= 1)
    return om__fail(OM_ERR_INVALID_ARGUMENT, "batch_norm: expected more than 1 value per channel when training, got input size %s",
                    om__shape_str(a, sizeof a, x->shape, x->ndim));
  if (!c->attrs.i[0] && !c->attrs.i[1])
    return om__fail(OM_ERR_INVALID_ARGUMENT, "batch_norm: running_mean and running_var must be given in evaluation mode (training false)");
  default_f(c, 0, 0.1);
  default_f(c, 1, 1e-5);
  same_meta(c);
  return true;
}

static bool forward_batch_norm(om_call *c) {
  bool training = c->attrs.i[0], running = c->attrs.i[1];
  int pi = 1 + 2 * running;
  om_tensor *x = om__dense(c->in[0], "batch_norm"), *w = NULL, *b = NULL;
  if (!x || !dense_params(c, pi, c->attrs.i[2], c->attrs.i[3], &w, &b)) {
    om__release_all((om_tensor *[]){x, w, b}, 3);
    return false;
  }
  om_tensor *rm = running ? c->in[1] : NULL, *rv = running ? c->in[2] : NULL;
  if (training && running && (!om__storage_will_change(rm->storage, "batch_norm") || !om__storage_will_change(rv->storage, "batch_norm"))) {
    om__release_all((om_tensor *[]){x, w, b}, 3);
    return false;
  }
  int64_t batch = x->shape[0], ch = x->shape[1], spatial = 1;
  for (int d = 2; d < x->ndim; d++) spatial *= x->shape[d];
  double momentum = c->attrs.f[0], eps = c->attrs.f[1], count = (double)(batch * spatial);
  const float *px = (const float *)om__data(x);
  float *py = (float *)om__data(c->out[0]);
  for (int64_t j = 0; j < ch; j++) {
    double mean, var;
    if (training) {
      mean = var = 0;
      for (int64_t n = 0; n < batch; n++)
        for (int64_t k = 0; k < spatial; k++) mean += px[(n * ch + j) * spatial + k];
      mean /= count;
      for (int64_t n = 0; n < batch; n++)
        for (int64_t k = 0; k < spatial; k++) {
          double d = px[(n * ch + j) * spatial + k] - mean;
          var += d * d;
        }
      var /= count;
    } else {
      mean = ((const float *)om__data(rm))[j * rm->strides[0]];
      var = ((const float *)om__data(rv))[j * rv->strides[0]];
    }
    double rstd = 1.0 / sqrt(var + eps), sw = w ? ((const float *)om__data(w))[j] : 1, sb = b ? ((const float *)om__data(b))[j] : 0;
    /* y = x * scale + shift per channel in float, as PyTorch's CPU kernel: one vectorised pass */
    float scale = (float)(rstd * sw), shift = (float)(sb - mean * rstd * sw);
    for (int64_t n = 0; n < batch; n++) {
      const float *xr = px + (n * ch + j) * spatial;
      float *yr = py + (n * ch + j) * spatial;
      for (int64_t k = 0; k < spatial; k++) yr[k] = xr[k] * scale + shift;
    }
    if (training && running) {
      float *m = (float *)om__data(rm) + j * rm->strides[0], *v = (float *)om__data(rv) + j * rv->strides[0];
      *m = (float)((1 - momentum) * *m + momentum * mean);
      *v = (float)((1 - momentum) * *v + momentum * var * count / (count - 1));
    }
  }
  if (training && running) {
    rm->storage->version++;
    rv->storage->version++;
  }
  om__release_all((om_tensor *[]){x, w, b}, 3);
  return true;
}

/* Training: norm_grad over every dim but the channel one, with gh = g * weight. Evaluation:
 * the running statistics are inputs like any other: dx = g * weight * rstd with
 * rstd = 1/sqrt(running_var + eps), and the running stats get their (rarely wanted) gradients. */
static bool batch_norm_backward(const om_record *r, om_tensor *const *g, om_tensor **gin) {
  om_scope s = {0};
  om_tensor *x = r->in[0];
  bool training = r->attrs.i[0], running = r->attrs.i[1], has_w = r->attrs.i[2], has_b = r->attrs.i[3];
  int pi = 1 + 2 * running;
  double eps = r->attrs.f[1];
  om_tensor *wc = has_w ? om__keep(&s, as_channels(r->in[pi], x)) : NULL;
  om_tensor *gh = has_w ? om__keep(&s, om_mul(g[0], wc)) : g[0], *xhat = NULL;
  bool ok = gh != NULL;
  if (ok && training) {
    int64_t dims[OM_MAX_DIMS];
    int nd = 0;
    for (int d = 0; d < x->ndim; d++)
      if (d != 1) dims[nd++] = d;
    ok = norm_grad(x, gh, dims, nd, eps, &xhat, om__wants(r, 0) ? &gin[0] : NULL);
    om__keep(&s, xhat);
  } else if (ok) {
    om_tensor *mc = om__keep(&s, as_channels(r->in[1], x)), *vc = om__keep(&s, as_channels(r->in[2], x));
    om_tensor *rstd = om__keep(&s, om_rsqrt(om__keep(&s, om_add_scalar(vc, eps))));
    om_tensor *xc = om__keep(&s, om_sub(x, mc));
    xhat = om__keep(&s, om_mul(xc, rstd));
    om_tensor *gx = om__keep(&s, om_mul(gh, rstd));
    if (om__wants(r, 0)) ok = (gin[0] = om_tensor_retain(gx)) != NULL;
    if (ok && om__wants(r, 1)) ok = (gin[1] = om_neg(om__keep(&s, per_channel(gx, x)))) != NULL;
    if (ok && om__wants(r, 2)) { /* d rstd / d var = -rstd^3 / 2 */
      om_tensor *r3 = om__keep(&s, om_mul(rstd, om__keep(&s, om_mul(rstd, rstd))));
      om_tensor *t = om__keep(&s, om_mul(om__keep(&s, om_mul(gh, xc)), r3));
      ok = (gin[2] = om_scale(om__keep(&s, per_channel(t, x)), -0.5)) != NULL;
    }
  }
  ok = ok && xhat;
  if (ok && has_w && om__wants(r, pi)) ok = (gin[pi] = per_channel(om__keep(&s, om_mul(g[0], xhat)), x)) != NULL;
  if (ok && has_b && om__wants(r, pi + has_w)) ok = (gin[pi + has_w] = per_channel(g[0], x)) != NULL;
  om__scope_end(&s);
  return ok;
}

/* Evaluation: BatchNormalization (training_mode 0) reading the running statistics, with ones /
 * zeros for a missing weight / bias. Training mode is refused (spec section 2). */
static bool lower_batch_norm(om_lower *l, const om_call *c) {
  if (c->attrs.i[0])
    return om__lower_refuse(l, c, "BatchNorm in training mode normalises with batch statistics and updates the running "
                                  "statistics in place; call eval() on the model (or pass training false) before tracing");
  bool has_w = c->attrs.i[2], has_b = c->attrs.i[3];
  int64_t ch = c->in[0]->shape[1];
  int in[5] = {om__lower_input(l, 0), has_w ? om__lower_input(l, 3) : lower_fill(l, 1, &ch, 1),
               has_b ? om__lower_input(l, 3 + has_w) : lower_fill(l, 0, &ch, 1), om__lower_input(l, 1), om__lower_input(l, 2)};
  om_gattr at[2] = {OM_ATTR_FLOAT("epsilon", c->attrs.f[1]), OM_ATTR_INT("training_mode", 0)};
  int out;
  if (in[1] < 0 || in[2] < 0 || !om__emit(l, "BatchNormalization", in, 5, &c->out_meta[0], 1, &out, at, 2)) return false;
  om__lower_output(l, 0, out);
  return true;
}

/* The running statistics (inputs 1 and 2) are not version-checked: training mode updates them
 * on every call while earlier graphs may still be differentiated (gradient accumulation), and
 * its backward does not read them. The weight and bias are inputs 3 and 4 with them. */
const om_op_def om__op_batch_norm = {
    .name = "batch_norm", .n_in = -1, .n_out = 1, .saves = OM_SAVES_IN(0) | OM_SAVES_IN(3) | OM_SAVES_IN(4),
    .infer = infer_batch_norm, .forward = forward_batch_norm, .backward = batch_norm_backward,
    .lower = lower_batch_norm, .onnx = "BatchNormalization (training_mode 0); training mode refused",
    .test = {.n_in = 4, .ndims = {3, 1, 1, 1}, .shapes = {{2, 3, 4}, {3}, {3}, {3}}, .lo = 0.5, .hi = 2,
             .attrs = {.n_i = 4, .i = {0, 1, 1, 0}, .n_f = 2, .f = {0.1, 1e-5}}}};

om_tensor *om_batch_norm(om_tensor *x, om_tensor *running_mean, om_tensor *running_var, om_tensor *weight, om_tensor *bias,
                         bool training, double momentum, double eps) {
  if ((running_mean == NULL) != (running_var == NULL))
    return om__fail(OM_ERR_INVALID_ARGUMENT, "batch_norm: give both running_mean and running_var, or neither"), NULL;
  om_attrs a = {.n_i = 4, .i = {training, running_mean != NULL, weight != NULL, bias != NULL}, .n_f = 2, .f = {momentum, eps}};
  return apply_present(OM_OP_batch_norm, x, (om_tensor *[]){running_mean, running_var, weight, bias}, 4, &a);
}

/* ---- scaled dot-product attention ----
 * softmax(q k^T * scale + mask) v over q [..., L, E], k [..., S, E], v [..., S, Ev]: the
 * attention op (src/ops/matmul.c) on k transposed as a view. A bool mask (true: take part) keeps
 * the scores where it is true and -inf elsewhere, a float mask is added, is_causal keeps the
 * lower triangle of [L, S]. Traced, it is MatMul, Mul, Add / Where, Softmax, MatMul. */
om_tensor *om_scaled_dot_product_attention(om_tensor *q, om_tensor *k, om_tensor *v, om_tensor *attn_mask, bool is_causal,
                                           const double *scale) {
  const char *who = "scaled_dot_product_attention";
  if (!om__check_inputs(who, (om_tensor *[]){q, k, v}, 3)) return NULL;
  if (q->ndim < 2 || k->ndim < 2 || v->ndim < 2)
    return om__fail(OM_ERR_INVALID_ARGUMENT, "%s: query, key and value need at least 2 dims, got %d, %d and %d", who, q->ndim, k->ndim, v->ndim), NULL;
  if (is_causal && attn_mask)
    return om__fail(OM_ERR_INVALID_ARGUMENT, "%s: explicit attn_mask should not be set when is_causal=True", who), NULL;
  if (attn_mask && attn_mask->dtype != OM_BOOL && attn_mask->dtype != OM_FLOAT32)
    return om__fail(OM_ERR_DTYPE_MISMATCH, "%s: attn_mask must be bool or float32, not %s", who, om_dtype_name(attn_mask->dtype)), NULL;
  double sc = scale ? *scale : 1.0 / sqrt((double)q->shape[q->ndim - 1]);
  om_scope s = {0};
  om_tensor *kt = om__keep(&s, om_transpose(k, -2, -1)), *mask = attn_mask;
  if (is_causal) {
    int64_t ls[2] = {q->shape[q->ndim - 2], k->shape[k->ndim - 2]};
    mask = om__keep(&s, om_tril(om__keep(&s, om_ones(ls, 2, OM_BOOL)), 0));
  }
  om_tensor *out = kt && (mask || !is_causal)
                       ? om__attention(q, kt, v, mask, mask && mask->dtype == OM_BOOL ? OM_ATTN_KEEP : OM_ATTN_ADD, OM_ATTN_MUL, sc, -INFINITY)
                       : NULL;
  om__scope_end(&s);
  return out;
}
