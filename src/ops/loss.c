/* Losses, as PyTorch computes them: mse_loss, nll_loss, cross_entropy and ctc_loss.
 * Attrs: reduction is PyTorch's enum (om_reduction: 0 none, 1 mean, 2 sum).
 *   mse_loss       [reduction]
 *   nll_loss       [reduction, ignore_index]
 *   cross_entropy  [reduction, ignore_index], f: [label_smoothing]
 *   ctc_loss       [blank, reduction, zero_infinity]
 * Every sum is taken in double in a fixed order (row-major positions), so native and WASM give
 * the same bits. mse_loss is plain arithmetic and lowers to ONNX; the other three are refused
 * while tracing (spec 2: losses have no ONNX equivalent in opset 20 and tracing is for inference
 * graphs); they run eagerly and train. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static bool check_reduction(const char *who, int64_t r) {
  if (r < 0 || r > 2)
    return om__fail(OM_ERR_INVALID_ARGUMENT, "%s: reduction must be 0 (none), 1 (mean) or 2 (sum), got %lld", who, (long long)r);
  return true;
}


static double log_add(double a, double b) {
  if (a == -INFINITY) return b;
  if (b == -INFINITY) return a;
  return a > b ? a + om__log1p(om__exp(b - a)) : b + om__log1p(om__exp(a - b));
}

/* ==== mse_loss: input, target (broadcast) -> (input - target)^2, reduced ==== */

static bool infer_mse_loss(om_call *c) {
  if (c->attrs.n_i == 0) c->attrs = om__attrs_i(1, (int64_t[]){OM_REDUCTION_MEAN});
  if (c->attrs.n_i != 1) return om__fail(OM_ERR_INVALID_ARGUMENT, "mse_loss: takes one attr (reduction), got %d", c->attrs.n_i);
  if (!check_reduction("mse_loss", c->attrs.i[0])) return false;
  if (c->in[0]->dtype != OM_FLOAT32 || c->in[1]->dtype != OM_FLOAT32)
    return om__fail(OM_ERR_DTYPE_MISMATCH, "mse_loss: takes float32 input and target, got %s and %s",
                    om_dtype_name(c->in[0]->dtype), om_dtype_name(c->in[1]->dtype));
  om_meta m;
  if (!om__broadcast_shapes(c->in, 2, &m, "mse_loss")) return false;
  m.dtype = OM_FLOAT32;
  if (c->attrs.i[0] != OM_REDUCTION_NONE) m.ndim = 0;
  c->out_meta[0] = m;
  return true;
}

typedef struct { double *acc; } mse_ctx;

/* p[0] out (or nothing when reducing), then input and target: out = (a - b)^2 in float, as ONNX's Sub, Mul. */
static void mse_none(char **p, const int64_t *s, int64_t n, const void *ctx) {
  (void)ctx;
  for (int64_t i = 0; i < n; i++) {
    float d = *(const float *)(p[1] + i * s[1]) - *(const float *)(p[2] + i * s[2]);
    *(float *)(p[0] + i * s[0]) = d * d;
  }
}

static void mse_fold(char **p, const int64_t *s, int64_t n, const void *vctx) {
  const mse_ctx *ctx = vctx;
  for (int64_t i = 0; i < n; i++) {
    float d = *(const float *)(p[0] + i * s[0]) - *(const float *)(p[1] + i * s[1]);
    *ctx->acc += (double)(d * d);
  }
}

static bool forward_mse_loss(om_call *c) {
  om_meta m;
  om__broadcast_shapes(c->in, 2, &m, "mse_loss"); /* checked by infer */
  int64_t st[3][OM_MAX_DIMS];
  char *base[3];
  for (int i = 0; i < 2; i++) {
    om__broadcast_strides(c->in[i], m.ndim, st[i + 1]);
    base[i + 1] = om__data(c->in[i]);
  }
  if (c->attrs.i[0] == OM_REDUCTION_NONE) {
    om__contiguous_strides(m.shape, m.ndim, st[0]);
    for (int d = 0; d < m.ndim; d++) st[0][d] *= (int64_t)sizeof(float);
    base[0] = om__data(c->out[0]);
    om__iterate(3, base, st, m.shape, m.ndim, mse_none, NULL);
    return true;
  }
  double acc = 0;
  om__iterate(2, base + 1, st + 1, m.shape, m.ndim, mse_fold, &(mse_ctx){&acc});
  int64_t n = 1;
  for (int d = 0; d < m.ndim; d++) n *= m.shape[d];
  *(float *)om__data(c->out[0]) = (float)(c->attrs.i[0] == OM_REDUCTION_MEAN ? acc / (double)n : acc);
  return true;
}

/* d input = g * 2 (input - target) (/ n for mean), d target = its negation, each summed back to
 * its own shape over broadcast dims. */
static bool mse_loss_backward(const om_record *r, om_tensor *const *g, om_tensor **gin) {
  om_scope s = {0};
  om_tensor *d = om__keep(&s, om_sub(r->in[0], r->in[1]));
  double k = 2;
  if (d && r->attrs.i[0] == OM_REDUCTION_MEAN) k /= (double)om_tensor_numel(d);
  om_tensor *gd = d ? om__keep(&s, om_mul(om__keep(&s, om_scale(d, k)), g[0])) : NULL;
  if (gd && om__wants(r, 0)) gin[0] = om__sum_to(gd, r->in[0]->shape, r->in[0]->ndim);
  if (gd && om__wants(r, 1)) {
    om_tensor *neg = om__keep(&s, om_neg(gd));
    gin[1] = neg ? om__sum_to(neg, r->in[1]->shape, r->in[1]->ndim) : NULL;
  }
  om__scope_end(&s);
  for (int i = 0; i < 2; i++)
    if (om__wants(r, i) && !gin[i]) return false;
  return true;
}

/* Sub, Mul, then ReduceMean / ReduceSum over every axis (keepdims 0) unless reduction is none.
 * A mean whose count can be 0 is ReduceSum and Div by the count (om__lower_count_divisor): the
 * mean of nothing is NaN (0 / 0, as PyTorch), ReduceMean's 0. */
static bool lower_mse_loss(om_lower *l, const om_call *c) {
  om_meta m;
  om__broadcast_shapes(c->in, 2, &m, "mse_loss");
  m.dtype = OM_FLOAT32;
  int in[2] = {om__lower_input(l, 0), om__lower_input(l, 1)}, d, sq;
  if (!om__emit(l, "Sub", in, 2, &m, 1, &d, NULL, 0) || !om__emit(l, "Mul", (int[]){d, d}, 2, &m, 1, &sq, NULL, 0))
    return false;
  if (c->attrs.i[0] != OM_REDUCTION_NONE && m.ndim > 0) {
    int64_t axes[OM_MAX_DIMS];
    int x[OM_MAX_DIMS];
    for (int k = 0; k < m.ndim; k++) { /* the broadcast extent: input 0's unless it lacks the axis or has a fixed 1 */
      int d0 = c->in[0]->ndim - m.ndim + k, d1 = c->in[1]->ndim - m.ndim + k;
      int i = d0 < 0 || (d1 >= 0 && om__lower_in_ext(l, 0, d0) < 0 && c->in[0]->shape[d0] == 1) ? 1 : 0;
      axes[k] = k;
      x[k] = om__lower_in_x(l, i, c->in[i]->ndim - m.ndim + k);
    }
    bool mean = c->attrs.i[0] == OM_REDUCTION_MEAN;
    int ax = om__lower_ints(l, axes, m.ndim), div = mean ? om__lower_count_divisor(l, x, m.ndim, OM_FLOAT32) : -2;
    if (ax < 0 || div == -1 || !om__emit(l, mean && div < 0 ? "ReduceMean" : "ReduceSum", (int[]){sq, ax}, 2,
                                         &c->out_meta[0], 1, &sq, &OM_ATTR_INT("keepdims", 0), 1))
      return false;
    if (div >= 0 && !om__emit(l, "Div", (int[]){sq, div}, 2, &c->out_meta[0], 1, &sq, NULL, 0)) return false;
  }
  om__lower_output(l, 0, sq);
  return true;
}

const om_op_def om__op_mse_loss = {
    .name = "mse_loss", .n_in = 2, .n_out = 1, .saves = OM_SAVES_IN(0) | OM_SAVES_IN(1),
    .infer = infer_mse_loss, .forward = forward_mse_loss, .backward = mse_loss_backward,
    .lower = lower_mse_loss, .onnx = "Sub, Mul, ReduceMean / ReduceSum (none: no reduce; a mean that can be of nothing: ReduceSum, Div by the count)",
    .test = {.n_in = 2, .ndims = {2, 2}, .shapes = {{3, 4}, {1, 4}}, .lo = -2, .hi = 2, .attrs = {.n_i = 1, .i = {OM_REDUCTION_MEAN}}}};

om_tensor *om_mse_loss(om_tensor *input, om_tensor *target, om_reduction reduction) {
  om_attrs a = om__attrs_i(1, (int64_t[]){reduction});
  return om__apply1(OM_OP_mse_loss, (om_tensor *[]){input, target}, 2, &a);
}

/* ==== nll_loss and cross_entropy: input [C] / [N, C] / [N, C, d...], target [] / [N] / [N, d...]
 * (int64 class indices) or, for cross_entropy only, float32 class probabilities of the input's
 * shape; weight [C] (optional) -> per position loss (the positions' shape) or reduced.
 * Positions are (n, r) with r over the trailing dims d...; element (n, c, r) of a dense input
 * sits at (n C + c) R + r. ==== */

static bool infer_class_loss(om_call *c) {
  const char *who = om_op_name(c->op);
  bool ce = c->op == OM_OP_cross_entropy;
  if (c->n_in != 2 && c->n_in != 3)
    return om__fail(OM_ERR_INVALID_ARGUMENT, "%s: takes input, target and an optional weight, got %d inputs", who, c->n_in);
  if (c->attrs.n_i == 0) c->attrs = om__attrs_i(2, (int64_t[]){OM_REDUCTION_MEAN, -100});
  if (c->attrs.n_i != 2) return om__fail(OM_ERR_INVALID_ARGUMENT, "%s: takes two int attrs (reduction, ignore_index), got %d", who, c->attrs.n_i);
  if (ce && c->attrs.n_f == 0) c->attrs.n_f = 1, c->attrs.f[0] = 0;
  if (c->attrs.n_f != (ce ? 1 : 0))
    return om__fail(OM_ERR_INVALID_ARGUMENT, "%s: takes %d float attrs, got %d", who, ce ? 1 : 0, c->attrs.n_f);
  if (!check_reduction(who, c->attrs.i[0])) return false;
  if (ce && !(c->attrs.f[0] >= 0 && c->attrs.f[0] <= 1))
    return om__fail(OM_ERR_INVALID_ARGUMENT, "cross_entropy: label_smoothing must be in [0, 1], got %g", c->attrs.f[0]);
  om_tensor *x = c->in[0], *t = c->in[1], *w = c->n_in == 3 ? c->in[2] : NULL;
  char xs[OM_SHAPE_STR_LEN], ts[OM_SHAPE_STR_LEN];
  bool probs = ce && t->dtype == OM_FLOAT32;
  if (x->dtype != OM_FLOAT32) return om__fail(OM_ERR_DTYPE_MISMATCH, "%s: input must be float32, got %s", who, om_dtype_name(x->dtype));
  if (t->dtype != OM_INT64 && !probs)
    return om__fail(OM_ERR_DTYPE_MISMATCH, "%s: target must be int64 class indices%s, got %s", who,
                    ce ? " or float32 class probabilities" : "", om_dtype_name(t->dtype));
  if (x->ndim < 1) return om__fail(OM_ERR_SHAPE_MISMATCH, "%s: input must have a class dim, got a 0-d tensor", who);
  if (probs && (t->ndim != x->ndim || memcmp(t->shape, x->shape, sizeof(int64_t) * (size_t)x->ndim)))
    return om__fail(OM_ERR_SHAPE_MISMATCH, "cross_entropy: class-probability target %s must have the input's shape %s",
                    om__shape_str(ts, sizeof ts, t->shape, t->ndim), om__shape_str(xs, sizeof xs, x->shape, x->ndim));
  if (probs && c->attrs.i[1] >= 0)
    return om__fail(OM_ERR_INVALID_ARGUMENT, "cross_entropy: ignore_index (%lld) is not supported for class-probability targets",
                    (long long)c->attrs.i[1]);
  bool fits = probs || t->ndim == (x->ndim == 1 ? 0 : x->ndim - 1);
  for (int d = 0; fits && !probs && d < t->ndim; d++) fits = t->shape[d] == x->shape[d == 0 ? 0 : d + 1];
  if (!fits)
    return om__fail(OM_ERR_SHAPE_MISMATCH, "%s: target %s does not match input %s (input [N, C, d...] takes target [N, d...], input [C] a 0-d target)",
                    who, om__shape_str(ts, sizeof ts, t->shape, t->ndim), om__shape_str(xs, sizeof xs, x->shape, x->ndim));
  int64_t nc = x->shape[x->ndim == 1 ? 0 : 1];
  if (w && (w->dtype != OM_FLOAT32 || w->ndim != 1 || w->shape[0] != nc))
    return om__fail(OM_ERR_SHAPE_MISMATCH, "%s: weight must be float32 [%lld] (one per class), got %s %s", who, (long long)nc,
                    om_dtype_name(w->dtype), om__shape_str(ts, sizeof ts, w->shape, w->ndim));
  om_meta *m = &c->out_meta[0];
  *m = (om_meta){.dtype = OM_FLOAT32};
  if (c->attrs.i[0] == OM_REDUCTION_NONE) /* the positions: the input's shape without the class dim */
    for (int d = 0; d < x->ndim; d++)
      if (d != (x->ndim == 1 ? 0 : 1)) m->shape[m->ndim++] = x->shape[d];
  return true;
}

/* The dense operands of a class loss and its sizes: N positions-major, C classes, R trailing. */
typedef struct class_loss {
  om_tensor *x, *t, *w; /* dense references (w may be NULL) */
  int64_t n, nc, r;
  int64_t ignore;
  bool probs;           /* cross_entropy with class probabilities: t is float32 like x */
  double eps;           /* label smoothing (0 for nll_loss) */
  double denom;         /* the mean's divisor: summed weights of the counted positions (probabilities: the positions) */
} class_loss;

static void class_loss_end(class_loss *k) {
  om_tensor_release(k->x);
  om_tensor_release(k->t);
  om_tensor_release(k->w);
}

/* Reads the operands and checks every target (ignore_index or a class); sums the weights. */
static bool class_loss_begin(class_loss *k, om_op op, om_tensor *const *in, int n_in, const om_attrs *a) {
  const char *who = om_op_name(op);
  om_tensor *x = in[0];
  *k = (class_loss){.ignore = a->i[1], .eps = op == OM_OP_cross_entropy ? a->f[0] : 0};
  k->nc = x->shape[x->ndim == 1 ? 0 : 1];
  k->n = x->ndim == 1 ? 1 : x->shape[0];
  k->r = 1;
  for (int d = 2; d < x->ndim; d++) k->r *= x->shape[d];
  k->x = om__dense(x, who);
  k->t = om__dense(in[1], who);
  k->w = n_in == 3 ? om__dense(in[2], who) : NULL;
  if (!k->x || !k->t || (n_in == 3 && !k->w)) return class_loss_end(k), false;
  if ((k->probs = in[1]->dtype == OM_FLOAT32)) {
    k->denom = (double)(k->n * k->r);
    return true;
  }
  const int64_t *tg = (const int64_t *)om__data(k->t);
  const float *w = k->w ? (const float *)om__data(k->w) : NULL;
  for (int64_t p = 0; p < k->n * k->r; p++) {
    if (tg[p] == k->ignore) continue;
    if (tg[p] < 0 || tg[p] >= k->nc) {
      om__fail(OM_ERR_INDEX_OUT_OF_RANGE, "%s: target %lld is out of range for %lld classes (at position %lld; ignore_index is %lld)",
               who, (long long)tg[p], (long long)k->nc, (long long)p, (long long)k->ignore);
      return class_loss_end(k), false;
    }
    k->denom += w ? w[tg[p]] : 1;
  }
  return true;
}

/* Element (n, c, r) of position p = (n, r) sits at base(p) + c R in a dense input. */
static inline int64_t class_base(const class_loss *k, int64_t p) { return (p / k->r) * k->nc * k->r + p % k->r; }

/* The smoothed probability of class c at position p: t' = (1 - eps) t + eps / C (probabilities). */
static inline double class_prob(const class_loss *k, int64_t p, int64_t c) {
  return (1 - k->eps) * ((const float *)om__data(k->t))[class_base(k, p) + c * k->r] + k->eps / (double)k->nc;
}

/* The loss at position p (0 when ignored), in double. cross_entropy: with
 * lse = max + log sum exp(x - max) and logp_c = x_c - lse,
 *   (1 - eps) w_t (-logp_t) + eps / C * (-sum_c w_c logp_c)                      (PyTorch's rule)
 *   -sum_c w_c t'_c logp_c                                           (class-probability targets) */
static double class_loss_at(const class_loss *k, bool ce, int64_t p) {
  int64_t t = k->probs ? 0 : ((const int64_t *)om__data(k->t))[p];
  if (!k->probs && t == k->ignore) return 0;
  const float *x = (const float *)om__data(k->x) + class_base(k, p);
  const float *w = k->w ? (const float *)om__data(k->w) : NULL;
  double wt = w ? w[t] : 1;
  if (!ce) return -wt * x[t * k->r];
  double mx = -INFINITY, se = 0, smooth = 0;
  for (int64_t c = 0; c < k->nc; c++)
    if (x[c * k->r] > mx || x[c * k->r] != x[c * k->r]) mx = x[c * k->r];
  for (int64_t c = 0; c < k->nc; c++) se += om__exp(x[c * k->r] - mx);
  double lse = mx + om__log(se);
  for (int64_t c = 0; c < k->nc; c++) smooth -= (w ? w[c] : 1) * (k->probs ? class_prob(k, p, c) : 1) * (x[c * k->r] - lse);
  if (k->probs) return smooth;
  return (1 - k->eps) * wt * (lse - x[t * k->r]) + k->eps / (double)k->nc * smooth;
}

static bool forward_class_loss(om_call *c) {
  class_loss k;
  bool ce = c->op == OM_OP_cross_entropy;
  if (!class_loss_begin(&k, c->op, c->in, c->n_in, &c->attrs)) return false;
  float *o = (float *)om__data(c->out[0]);
  double total = 0;
  for (int64_t p = 0; p < k.n * k.r; p++) {
    double v = class_loss_at(&k, ce, p);
    if (c->attrs.i[0] == OM_REDUCTION_NONE) o[p] = (float)v;
    total += v;
  }
  if (c->attrs.i[0] == OM_REDUCTION_SUM) o[0] = (float)total;
  if (c->attrs.i[0] == OM_REDUCTION_MEAN) o[0] = (float)(total / k.denom); /* all ignored (or none): 0/0 = NaN, as PyTorch */
  class_loss_end(&k);
  return true;
}

/* The constant parts of the gradient for unit upstream, scaled by 1/denom for mean, as new
 * tensors of the input's shape: d loss / d x = s * A - B with s = softmax(x) over the class dim
 * (cross_entropy; nll_loss has A = 0 and returns only B), where at a counted position with
 * target t and W = sum_c w_c:
 *   A = (1 - eps) w_t + eps W / C   (the same for every class)
 *   B_c = (1 - eps) w_t [c == t] + eps w_c / C
 * and with class probabilities A = sum_c w_c t'_c, B_c = w_c t'_c.
 * nll_loss has eps = 0 and no softmax term: its gradient is -B, that is -w_t at the target. */
static bool class_loss_coefs(const om_record *r, om_tensor **a_out, om_tensor **b_out) {
  bool ce = r->op == OM_OP_cross_entropy;
  class_loss k;
  if (!class_loss_begin(&k, r->op, r->in, r->n_in, &r->attrs)) return false;
  om_meta m = {.dtype = OM_FLOAT32, .ndim = r->in[0]->ndim};
  memcpy(m.shape, r->in[0]->shape, sizeof(int64_t) * (size_t)m.ndim);
  om_tensor *A = ce ? om__tensor_new(&m, true, om_op_name(r->op)) : NULL, *B = om__tensor_new(&m, true, om_op_name(r->op));
  if (!B || (ce && !A)) {
    om_tensor_release(A);
    om_tensor_release(B);
    return class_loss_end(&k), false;
  }
  double scale = r->attrs.i[0] == OM_REDUCTION_MEAN ? 1 / k.denom : 1, W = 0;
  const float *w = k.w ? (const float *)om__data(k.w) : NULL;
  for (int64_t c = 0; c < k.nc; c++) W += w ? w[c] : 1;
  const int64_t *tg = (const int64_t *)om__data(k.t);
  float *pa = A ? (float *)om__data(A) : NULL, *pb = (float *)om__data(B);
  for (int64_t p = 0; p < k.n * k.r; p++) {
    int64_t base = class_base(&k, p);
    if (k.probs) {
      double sum = 0;
      for (int64_t c = 0; c < k.nc; c++) sum += (w ? w[c] : 1) * class_prob(&k, p, c);
      for (int64_t c = 0; c < k.nc; c++) {
        pa[base + c * k.r] = (float)(sum * scale);
        pb[base + c * k.r] = (float)((w ? w[c] : 1) * class_prob(&k, p, c) * scale);
      }
      continue;
    }
    if (tg[p] == k.ignore) continue;
    double wt = w ? w[tg[p]] : 1;
    for (int64_t c = 0; c < k.nc; c++) {
      if (pa) pa[base + c * k.r] = (float)(((1 - k.eps) * wt + k.eps * W / (double)k.nc) * scale);
      pb[base + c * k.r] = (float)(((c == tg[p] ? (1 - k.eps) * wt : 0) + k.eps * (w ? w[c] : 1) / (double)k.nc) * scale);
    }
  }
  class_loss_end(&k);
  *a_out = A;
  *b_out = B;
  return true;
}

/* The gradient w.r.t. class probabilities for unit upstream, as a multiplier of log_softmax(x):
 * d loss / d t_c = -(1 - eps) w_c logp_c (scaled for the mean). A new tensor of the input's shape. */
static om_tensor *class_prob_coefs(const om_record *r) {
  class_loss k;
  if (!class_loss_begin(&k, r->op, r->in, r->n_in, &r->attrs)) return NULL;
  om_meta m = {.dtype = OM_FLOAT32, .ndim = r->in[0]->ndim};
  memcpy(m.shape, r->in[0]->shape, sizeof(int64_t) * (size_t)m.ndim);
  om_tensor *K = om__tensor_new(&m, false, "cross_entropy");
  double scale = r->attrs.i[0] == OM_REDUCTION_MEAN ? 1 / k.denom : 1;
  const float *w = k.w ? (const float *)om__data(k.w) : NULL;
  for (int64_t p = 0; K && p < k.n * k.r; p++)
    for (int64_t c = 0; c < k.nc; c++)
      ((float *)om__data(K))[class_base(&k, p) + c * k.r] = (float)(-(1 - k.eps) * (w ? w[c] : 1) * scale);
  class_loss_end(&k);
  return K;
}

/* gin = g * (softmax(x) * A - B) (cross_entropy) or g * -B (nll_loss); g gets a class dim for
 * reduction none. The softmax is made of public ops, so the rule is differentiable in x and g.
 * Class probabilities also get g * K * log_softmax(x) (class_prob_coefs); class indices and the
 * class weights get no gradient (PyTorch has none either). */
static bool class_loss_backward(const om_record *r, om_tensor *const *g, om_tensor **gin) {
  bool probs = r->in[1]->dtype == OM_FLOAT32, want_t = probs && om__wants(r, 1);
  if (!om__wants(r, 0) && !want_t) return true;
  om_scope s = {0};
  om_tensor *A = NULL, *B = NULL;
  if (!class_loss_coefs(r, &A, &B)) return false;
  om__keep(&s, A);
  om__keep(&s, B);
  om_tensor *x = r->in[0], *gg = g[0];
  int cd = x->ndim == 1 ? 0 : 1;
  if (r->attrs.i[0] == OM_REDUCTION_NONE && x->ndim > 1) gg = om__keep(&s, om_unsqueeze(g[0], cd));
  om_tensor *coef;
  if (r->op == OM_OP_cross_entropy) {
    int64_t dim = cd;
    om_tensor *mx = om__keep(&s, om_amax(x, &dim, 1, true));
    om_tensor *e = mx ? om__keep(&s, om_exp(om__keep(&s, om_sub(x, mx)))) : NULL;
    om_tensor *se = e ? om__keep(&s, om_sum(e, &dim, 1, true)) : NULL;
    om_tensor *sm = se ? om__keep(&s, om_div(e, se)) : NULL;
    coef = sm ? om__keep(&s, om_sub(om__keep(&s, om_mul(sm, A)), B)) : NULL;
    if (want_t) { /* logp = x - max - log sum exp(x - max) */
      om_tensor *K = om__keep(&s, class_prob_coefs(r));
      om_tensor *lse = se ? om__keep(&s, om_add(mx, om__keep(&s, om_log(se)))) : NULL;
      om_tensor *logp = lse ? om__keep(&s, om_sub(x, lse)) : NULL;
      gin[1] = gg && K && logp ? om_mul(gg, om__keep(&s, om_mul(K, logp))) : NULL;
    }
  } else {
    coef = om__keep(&s, om_neg(B));
  }
  if (om__wants(r, 0)) gin[0] = gg && coef ? om_mul(gg, coef) : NULL;
  om__scope_end(&s);
  return (!om__wants(r, 0) || gin[0]) && (!want_t || gin[1]);
}

/* The op table's lowering cell of the three losses that trace to nothing (docs/operators.md). */
#define LOSS_ONNX "refused (UnsupportedOperation: a loss has no ONNX equivalent in opset 20; trace the model, not its loss)"

static bool refuse_loss(om_lower *l, const om_call *c) {
  return om__lower_refuse(l, c, "losses have no ONNX equivalent in the opset used (20) and tracing is for inference graphs; "
                                "compute the loss outside the traced model");
}

const om_op_def om__op_nll_loss = {
    .name = "nll_loss", .n_in = -1, .n_out = 1, .saves = OM_SAVES_IN(0) | OM_SAVES_IN(1) | OM_SAVES_IN(2),
    .infer = infer_class_loss, .forward = forward_class_loss, .backward = class_loss_backward,
    .lower = refuse_loss, .onnx = LOSS_ONNX,
    .test = {.n_in = 2, .ndims = {2, 1}, .shapes = {{5, 3}, {5}}, .dtypes = {OM_FLOAT32, OM_INT64}, .lo = 0, .hi = 2.99,
             .attrs = {.n_i = 2, .i = {OM_REDUCTION_MEAN, -100}}}};

const om_op_def om__op_cross_entropy = {
    .name = "cross_entropy", .n_in = -1, .n_out = 1, .saves = OM_SAVES_IN(0) | OM_SAVES_IN(1) | OM_SAVES_IN(2),
    .infer = infer_class_loss, .forward = forward_class_loss, .backward = class_loss_backward,
    .lower = refuse_loss, .onnx = LOSS_ONNX,
    .test = {.n_in = 2, .ndims = {3, 2}, .shapes = {{3, 4, 2}, {3, 2}}, .dtypes = {OM_FLOAT32, OM_INT64}, .lo = 0, .hi = 3.99,
             .attrs = {.n_i = 2, .i = {OM_REDUCTION_MEAN, -100}, .n_f = 1, .f = {0.1}},
             .empty_refusal = "is out of range for 0 classes"}}; /* a target class among none */

om_tensor *om_nll_loss(om_tensor *input, om_tensor *target, om_tensor *weight, int64_t ignore_index, om_reduction reduction) {
  om_attrs a = om__attrs_i(2, (int64_t[]){reduction, ignore_index});
  return om__apply1(OM_OP_nll_loss, (om_tensor *[]){input, target, weight}, weight ? 3 : 2, &a);
}

om_tensor *om_cross_entropy(om_tensor *input, om_tensor *target, om_tensor *weight, int64_t ignore_index,
                            om_reduction reduction, double label_smoothing) {
  om_attrs a = om__attrs_i(2, (int64_t[]){reduction, ignore_index});
  a.n_f = 1;
  a.f[0] = label_smoothing;
  return om__apply1(OM_OP_cross_entropy, (om_tensor *[]){input, target, weight}, weight ? 3 : 2, &a);
}

/* ==== ctc_loss: log_probs [T, N, C], targets [N, S] (padded) or [sum of target_lengths]
 * (concatenated), input_lengths [N], target_lengths [N] (int64) -> [N] (none) or 0-d.
 * The extended label sequence l' puts a blank around every label (length 2L + 1). In log space:
 *   alpha_0(0) = lp_0(blank), alpha_0(1) = lp_0(l'_1)
 *   alpha_t(s) = lp_t(l'_s) + lse(alpha_{t-1}(s), alpha_{t-1}(s-1), alpha_{t-1}(s-2) if l'_s is a
 *                label different from l'_{s-2})
 *   nll = -lse(alpha_{T-1}(2L), alpha_{T-1}(2L-1))
 * beta runs the same recursion from the end (both include lp_t), and
 *   d nll / d lp_t(c) = -exp(lse_{s: l'_s = c}(alpha_t(s) + beta_t(s)) + nll - lp_t(c)). ==== */

static bool infer_ctc_loss(om_call *c) {
  if (c->attrs.n_i != 3)
    return om__fail(OM_ERR_INVALID_ARGUMENT, "ctc_loss: takes three attrs (blank, reduction, zero_infinity), got %d", c->attrs.n_i);
  if (!check_reduction("ctc_loss", c->attrs.i[1])) return false;
  c->attrs.i[2] = c->attrs.i[2] != 0;
  om_tensor *lp = c->in[0], *tg = c->in[1], *il = c->in[2], *tl = c->in[3];
  char s0[OM_SHAPE_STR_LEN], s1[OM_SHAPE_STR_LEN];
  if (lp->dtype != OM_FLOAT32 || lp->ndim != 3)
    return om__fail(OM_ERR_SHAPE_MISMATCH, "ctc_loss: log_probs must be float32 [T, N, C], got %s %s", om_dtype_name(lp->dtype),
                    om__shape_str(s0, sizeof s0, lp->shape, lp->ndim));
  int64_t n = lp->shape[1], nc = lp->shape[2];
  for (int i = 1; i < 4; i++)
    if (c->in[i]->dtype != OM_INT64)
      return om__fail(OM_ERR_DTYPE_MISMATCH, "ctc_loss: %s must be int64, got %s",
                      (const char *[]){"", "targets", "input_lengths", "target_lengths"}[i], om_dtype_name(c->in[i]->dtype));
  if (!((tg->ndim == 2 && tg->shape[0] == n) || tg->ndim == 1))
    return om__fail(OM_ERR_SHAPE_MISMATCH, "ctc_loss: targets %s must be [N, S] (N = %lld) or 1-D (concatenated)",
                    om__shape_str(s0, sizeof s0, tg->shape, tg->ndim), (long long)n);
  if (il->ndim != 1 || il->shape[0] != n || tl->ndim != 1 || tl->shape[0] != n)
    return om__fail(OM_ERR_SHAPE_MISMATCH, "ctc_loss: input_lengths %s and target_lengths %s must both be [%lld]",
                    om__shape_str(s0, sizeof s0, il->shape, il->ndim), om__shape_str(s1, sizeof s1, tl->shape, tl->ndim), (long long)n);
  if (c->attrs.i[0] < 0 || c->attrs.i[0] >= nc)
    return om__fail(OM_ERR_INDEX_OUT_OF_RANGE, "ctc_loss: blank %lld is out of range for %lld classes", (long long)c->attrs.i[0], (long long)nc);
  c->out_meta[0] = (om_meta){.dtype = OM_FLOAT32, .ndim = c->attrs.i[1] == OM_REDUCTION_NONE ? 1 : 0, .shape = {n}};
  return true;
}

/* The dense operands, each sample's target offset, and scratch for alpha and beta. */
typedef struct ctc {
  om_tensor *lp, *tg, *il, *tl;
  int64_t T, N, C, S, blank;
  int64_t *start;       /* [N] first target of sample n */
  double *alpha, *beta; /* [T][2 Smax + 1] */
  int64_t width;
} ctc;

static void ctc_end(ctc *k) {
  om_tensor_release(k->lp);
  om_tensor_release(k->tg);
  om_tensor_release(k->il);
  om_tensor_release(k->tl);
  free(k->start);
  free(k->alpha);
  free(k->beta);
}

/* Reads and checks the operands: lengths in range, every used target a class. */
static bool ctc_begin(ctc *k, om_tensor *const *in, const om_attrs *a, bool need_beta) {
  *k = (ctc){.T = in[0]->shape[0], .N = in[0]->shape[1], .C = in[0]->shape[2], .blank = a->i[0]};
  k->lp = om__dense(in[0], "ctc_loss");
  k->tg = om__dense(in[1], "ctc_loss");
  k->il = om__dense(in[2], "ctc_loss");
  k->tl = om__dense(in[3], "ctc_loss");
  k->start = om__alloc(sizeof(int64_t) * (uint64_t)(k->N + 1), "ctc_loss");
  if (!k->lp || !k->tg || !k->il || !k->tl || !k->start) return ctc_end(k), false;
  const int64_t *il = (const int64_t *)om__data(k->il), *tl = (const int64_t *)om__data(k->tl), *tg = (const int64_t *)om__data(k->tg);
  bool padded = in[1]->ndim == 2;
  int64_t S = padded ? in[1]->shape[1] : 0, total = 0, lmax = 0, ntg = om_tensor_numel(in[1]);
  for (int64_t n = 0; n < k->N; n++) {
    if (il[n] < 0 || il[n] > k->T)
      return om__fail(OM_ERR_INDEX_OUT_OF_RANGE, "ctc_loss: input_lengths[%lld] = %lld is out of range [0, %lld]",
                      (long long)n, (long long)il[n], (long long)k->T), ctc_end(k), false;
    if (tl[n] < 0 || (padded && tl[n] > S))
      return om__fail(OM_ERR_INDEX_OUT_OF_RANGE, "ctc_loss: target_lengths[%lld] = %lld is out of range [0, %lld]",
                      (long long)n, (long long)tl[n], (long long)(padded ? S : INT64_MAX)), ctc_end(k), false;
    k->start[n] = padded ? n * S : total;
    total += tl[n];
    if (tl[n] > lmax) lmax = tl[n];
    if (!padded && total > ntg)
      return om__fail(OM_ERR_SHAPE_MISMATCH, "ctc_loss: target_lengths sum to more than the %lld concatenated targets", (long long)ntg),
             ctc_end(k), false;
    for (int64_t j = 0; j < tl[n]; j++) {
      int64_t v = tg[k->start[n] + j];
      if (v < 0 || v >= k->C)
        return om__fail(OM_ERR_INDEX_OUT_OF_RANGE, "ctc_loss: target %lld (sample %lld, position %lld) is out of range for %lld classes",
                        (long long)v, (long long)n, (long long)j, (long long)k->C), ctc_end(k), false;
    }
  }
  k->width = 2 * lmax + 1;
  uint64_t cells = (uint64_t)(k->T > 0 ? k->T : 1) * (uint64_t)k->width;
  k->alpha = om__alloc(sizeof(double) * cells, "ctc_loss");
  k->beta = need_beta ? om__alloc(sizeof(double) * cells, "ctc_loss") : NULL;
  if (!k->alpha || (need_beta && !k->beta)) return ctc_end(k), false;
  return true;
}

static inline int64_t ctc_label(const ctc *k, int64_t n, int64_t s) {
  return s % 2 == 0 ? k->blank : ((const int64_t *)om__data(k->tg))[k->start[n] + s / 2];
}

static inline double ctc_lp(const ctc *k, int64_t t, int64_t n, int64_t c) {
  return ((const float *)om__data(k->lp))[(t * k->N + n) * k->C + c];
}

/* Fills alpha (and beta when allocated) for sample n; returns its negative log likelihood. */
static double ctc_sample(ctc *k, int64_t n) {
  int64_t Tn = ((const int64_t *)om__data(k->il))[n], L = ((const int64_t *)om__data(k->tl))[n], S = 2 * L + 1, w = k->width;
  if (Tn == 0) return L == 0 ? 0 : INFINITY;
  double *al = k->alpha;
  for (int64_t s = 0; s < S; s++) al[s] = s < 2 ? ctc_lp(k, 0, n, ctc_label(k, n, s)) : -INFINITY;
  for (int64_t t = 1; t < Tn; t++)
    for (int64_t s = 0; s < S; s++) {
      int64_t l = ctc_label(k, n, s);
      const double *prev = al + (t - 1) * w;
      double v = prev[s];
      if (s >= 1) v = log_add(v, prev[s - 1]);
      if (s >= 2 && l != k->blank && l != ctc_label(k, n, s - 2)) v = log_add(v, prev[s - 2]);
      al[t * w + s] = v == -INFINITY ? -INFINITY : v + ctc_lp(k, t, n, l);
    }
  double ll = al[(Tn - 1) * w + S - 1];
  if (S >= 2) ll = log_add(ll, al[(Tn - 1) * w + S - 2]);
  if (k->beta) {
    double *be = k->beta;
    for (int64_t s = 0; s < S; s++) be[(Tn - 1) * w + s] = s >= S - 2 ? ctc_lp(k, Tn - 1, n, ctc_label(k, n, s)) : -INFINITY;
    for (int64_t t = Tn - 2; t >= 0; t--)
      for (int64_t s = 0; s < S; s++) {
        int64_t l = ctc_label(k, n, s);
        const double *next = be + (t + 1) * w;
        double v = next[s];
        if (s + 1 < S) v = log_add(v, next[s + 1]);
        if (s + 2 < S && l != k->blank && l != ctc_label(k, n, s + 2)) v = log_add(v, next[s + 2]);
        be[t * w + s] = v == -INFINITY ? -INFINITY : v + ctc_lp(k, t, n, l);
      }
  }
  return -ll;
}

/* Sample n's weight in the reduced loss: 1 / (N max(L, 1)) for mean, else 1. */
static double ctc_factor(const ctc *k, int64_t n, int64_t reduction) {
  int64_t L = ((const int64_t *)om__data(k->tl))[n];
  return reduction == OM_REDUCTION_MEAN ? 1 / ((double)k->N * (double)(L > 1 ? L : 1)) : 1;
}

static bool forward_ctc_loss(om_call *c) {
  ctc k;
  if (!ctc_begin(&k, c->in, &c->attrs, false)) return false;
  float *o = (float *)om__data(c->out[0]);
  double total = 0;
  for (int64_t n = 0; n < k.N; n++) {
    double nll = ctc_sample(&k, n);
    if (c->attrs.i[2] && nll == INFINITY) nll = 0;
    if (c->attrs.i[1] == OM_REDUCTION_NONE) o[n] = (float)nll;
    total += nll * ctc_factor(&k, n, c->attrs.i[1]);
  }
  if (c->attrs.i[1] != OM_REDUCTION_NONE) o[0] = (float)(k.N ? total : c->attrs.i[1] == OM_REDUCTION_MEAN ? NAN : 0);
  ctc_end(&k);
  return true;
}

/* The gradient of each sample's (weighted) nll w.r.t. log_probs, [T, N, C], new tensor; steps
 * at t >= input_lengths[n] get 0, and so does a sample whose infinite loss zero_infinity drops. */
static om_tensor *ctc_grad(const om_record *r) {
  ctc k;
  if (!ctc_begin(&k, r->in, &r->attrs, true)) return NULL;
  om_meta m = {.dtype = OM_FLOAT32, .ndim = 3, .shape = {k.T, k.N, k.C}};
  om_tensor *G = om__tensor_new(&m, true, "ctc_loss");
  double *lcab = G ? om__alloc(sizeof(double) * (uint64_t)(k.C ? k.C : 1), "ctc_loss") : NULL;
  if (!lcab) {
    om_tensor_release(G);
    return ctc_end(&k), NULL;
  }
  float *pg = (float *)om__data(G);
  for (int64_t n = 0; n < k.N; n++) {
    double nll = ctc_sample(&k, n), f = ctc_factor(&k, n, r->attrs.i[1]);
    if (r->attrs.i[2] && nll == INFINITY) continue;
    int64_t Tn = ((const int64_t *)om__data(k.il))[n], S = 2 * ((const int64_t *)om__data(k.tl))[n] + 1;
    for (int64_t t = 0; t < Tn; t++) {
      for (int64_t c = 0; c < k.C; c++) lcab[c] = -INFINITY;
      for (int64_t s = 0; s < S; s++) {
        int64_t l = ctc_label(&k, n, s);
        lcab[l] = log_add(lcab[l], k.alpha[t * k.width + s] + k.beta[t * k.width + s]);
      }
      for (int64_t c = 0; c < k.C; c++)
        pg[(t * k.N + n) * k.C + c] = (float)(-om__exp(lcab[c] + nll - ctc_lp(&k, t, n, c)) * f);
    }
  }
  free(lcab);
  ctc_end(&k);
  return G;
}

/* gin = g * G (g reshaped [1, N, 1] for reduction none): linear in g. The exact gradient w.r.t.
 * log_probs (PyTorch's kernel adds exp(log_probs), which only cancels through a log_softmax). */
static bool ctc_loss_backward(const om_record *r, om_tensor *const *g, om_tensor **gin) {
  if (!om__wants(r, 0)) return true;
  om_scope s = {0};
  om_tensor *G = om__keep(&s, ctc_grad(r)), *gg = g[0];
  if (G && r->attrs.i[1] == OM_REDUCTION_NONE) gg = om__keep(&s, om_reshape(g[0], (int64_t[]){1, -1, 1}, 3));
  gin[0] = G && gg ? om_mul(gg, G) : NULL;
  om__scope_end(&s);
  return gin[0] != NULL;
}

const om_op_def om__op_ctc_loss = {
    .name = "ctc_loss", .n_in = 4, .n_out = 1, .saves = OM_SAVES_IN(0) | OM_SAVES_IN(1) | OM_SAVES_IN(2) | OM_SAVES_IN(3),
    .infer = infer_ctc_loss, .forward = forward_ctc_loss, .backward = ctc_loss_backward,
    .lower = refuse_loss, .onnx = LOSS_ONNX,
    .test = {.n_in = 4, .ndims = {3, 2, 1, 1}, .shapes = {{4, 3, 4}, {3, 3}, {3}, {3}},
             .dtypes = {OM_FLOAT32, OM_INT64, OM_INT64, OM_INT64}, .lo = 1, .hi = 3.99,
             .attrs = {.n_i = 3, .i = {0, OM_REDUCTION_MEAN, 1}},
             .empty_refusal = "is out of range [0, 0]"}}; /* input lengths of at least 1 on no time steps */

om_tensor *om_ctc_loss(om_tensor *log_probs, om_tensor *targets, om_tensor *input_lengths, om_tensor *target_lengths,
                       int64_t blank, om_reduction reduction, bool zero_infinity) {
  om_attrs a = om__attrs_i(3, (int64_t[]){blank, reduction, zero_infinity});
  return om__apply1(OM_OP_ctc_loss, (om_tensor *[]){log_probs, targets, input_lengths, target_lengths}, 4, &a);
}
