/* Activations, clamp, cumsum, pad, masked_fill and dropout: values against the formulas (in
 * double), PyTorch's edge cases and defaults, gradients at chosen points, every error path, and
 * what tracing writes (the JS tests run the graphs through onnxruntime-web). The table-driven
 * tests (test_ops.c) add layout independence and finite-difference gradchecks. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "om_test.h"

static const float XS[] = {-1e4f, -30, -3.5f, -3, -1, -0.25f, -0.0f, 0, 0.5f, 1, 3, 4, 30, 1e4f};
#define NX ((int64_t)(sizeof XS / sizeof XS[0]))

static om_tensor *xs(void) { return om_from_data(XS, (int64_t[]){NX}, 1, OM_FLOAT32); }

static double gelu_ref(double x) { return 0.5 * x * (1 + erf(x / sqrt(2.0))); }
static double gelu_tanh_ref(double x) {
  return 0.5 * x * (1 + tanh(sqrt(2 / 3.141592653589793) * (x + 0.044715 * x * x * x)));
}
static double softplus_ref(double x, double b, double t) { return x * b > t ? x : log1p(exp(x * b)) / b; }

/* |got - want| <= 2e-6 * max(1, |want|) for every sample x, and the sign of a zero kept. */
static void check_fn(const char *name, om_tensor *y, double (*f)(double, const double *), const double *k) {
  if (!y) {
    FAILED("%s: %s", name, om_last_error_message());
    return;
  }
  for (int64_t i = 0; i < NX; i++) {
    double want = f(XS[i], k), got = at(y, i);
    if (!(fabs(got - want) <= 2e-6 * fmax(1, fabs(want))) || (want == 0 && got == 0 && signbit(want) != signbit(got)))
      FAILED("%s(%g) = %.9g, expected %.9g", name, XS[i], got, want);
  }
  om_tensor_release(y);
}

static double f_leaky(double x, const double *k) { return x > 0 ? x : x * k[0]; }
static double f_elu(double x, const double *k) { return x <= 0 ? expm1(x) * k[0] : x; }
static double f_gelu(double x, const double *k) { return k[0] ? gelu_tanh_ref(x) : gelu_ref(x); }
static double f_silu(double x, const double *k) { (void)k; return x / (1 + exp(-x)); }
static double f_softplus(double x, const double *k) { return softplus_ref(x, k[0], k[1]); }
static double f_hardswish(double x, const double *k) { (void)k; return x * fmin(fmax(x + 3, 0), 6) / 6; }
static double f_hardsigmoid(double x, const double *k) { (void)k; return fmin(fmax(x + 3, 0), 6) / 6; }
static double f_erf(double x, const double *k) { (void)k; return erf(x); }
static double f_clamp(double x, const double *k) { /* std::min(std::max(x, lo), hi): clamp(-0, min=0) is -0, as PyTorch */
  x = x < k[0] ? k[0] : x;
  return k[1] < x ? k[1] : x;
}

TEST(activations_match_their_formulas) {
  om_tensor *x = xs();
  check_fn("leaky_relu", om_leaky_relu(x, 0.1), f_leaky, (double[]){0.1});
  check_fn("elu", om_elu(x, 0.7), f_elu, (double[]){0.7});
  check_fn("gelu", om_gelu(x, false), f_gelu, (double[]){0});
  check_fn("gelu tanh", om_gelu(x, true), f_gelu, (double[]){1});
  om_tensor *fast[1] = {NULL}; /* the Session's fast mode: erf by the float rational */
  CHECK_EQ_INT(om_apply(OM_OP_gelu, &x, 1, (int64_t[]){0, 1}, 2, NULL, 0, fast, 1), 1);
  check_fn("gelu, fast erf", fast[0], f_gelu, (double[]){0});
  check_fn("silu", om_silu(x), f_silu, NULL);
  check_fn("softplus", om_softplus(x, 1, 20), f_softplus, (double[]){1, 20});
  check_fn("softplus b2 t5", om_softplus(x, 2, 5), f_softplus, (double[]){2, 5});
  check_fn("hardswish", om_hardswish(x), f_hardswish, NULL);
  check_fn("hardsigmoid", om_hardsigmoid(x), f_hardsigmoid, NULL);
  check_fn("hardtanh", om_hardtanh(x, -1, 0.5), f_clamp, (double[]){-1, 0.5}); /* clamp's values */
  check_fn("relu6", om_hardtanh(x, 0, 6), f_clamp, (double[]){0, 6});
  check_fn("erf", om_erf(x), f_erf, NULL);
  check_fn("clamp", om_clamp(x, &(double){-1}, &(double){0.5}), f_clamp, (double[]){-1, 0.5});
  check_fn("clamp min", om_clamp(x, &(double){0}, NULL), f_clamp, (double[]){0, INFINITY});
  check_fn("clamp max", om_clamp(x, NULL, &(double){-2}), f_clamp, (double[]){-INFINITY, -2});
  check_fn("clamp min > max", om_clamp(x, &(double){2}, &(double){1}), f_clamp, (double[]){1, 1}); /* all max, as PyTorch */
  om_tensor_release(x);
}

/* Tails where a form that cancels or overflows parted eager from the Session (both computed
 * exactly here in double): silu is x sigmoid(x), the bits of its lowering Mul(x, Sigmoid(x)),
 * nonzero down to -103.9 (x / (1 + e^-x) was -0 from -88.7); gelu is 0.5 x erfc(-x / sqrt 2),
 * nonzero down to -14.2 (0.5 x (1 + erf) was 0 from -5.9 and 4% off at -5). */
TEST(activation_tails) {
  static const float T[] = {-5, -8, -10, -13, -14, -60, -88.5f, -89, -95, -100, -103, -103.9f, -110, -1e30f};
  enum { N = sizeof T / sizeof T[0] };
  om_tensor *x = om_from_data(T, (int64_t[]){N}, 1, OM_FLOAT32), *silu = om_silu(x), *sig = om_sigmoid(x);
  om_tensor *gelu = om_gelu(x, false), *prod = om_mul(x, sig);
  CHECK(silu && sig && gelu && prod);
  for (int i = 0; silu && prod && i < N; i++) {
    float s = at(silu, i), p = at(prod, i);
    double want = T[i] / (1 + exp(-(double)T[i])), g = 0.5 * T[i] * erfc(-(double)T[i] / sqrt(2.0)), got = at(gelu, i);
    if (memcmp(&s, &p, 4)) FAILED("silu(%g) = %.9g, x sigmoid(x) = %.9g", T[i], s, p);
    /* sigmoid's subnormals (below 1.2e-38) are rounded to 2^-149, which x then scales */
    if (!(fabs(s - want) <= 2e-6 * fabs(want) + fabs(T[i]) * 0x1p-149)) FAILED("silu(%g) = %.9g, expected %.9g", T[i], s, want);
    if (!(fabs(got - g) <= 2e-7 * fabs(g) + 0x1p-149)) FAILED("gelu(%g) = %.9g, expected %.9g", T[i], got, g);
  }
  CHECK(at(silu, 9) < 0 && at(gelu, 3) < 0 && at(silu, 12) == 0 && signbit(at(silu, 12)));
  om_tensor_release(x), om_tensor_release(silu), om_tensor_release(sig), om_tensor_release(gelu), om_tensor_release(prod);
}

TEST(activation_defaults_and_nan) {
  /* om_apply without attributes gets PyTorch's defaults: negative_slope 0.01, alpha 1, beta 1, threshold 20, 'none' */
  om_tensor *x = TF(SHAPE(3), -2, NAN, 25), *y[1];
  CHECK_EQ_INT(om_apply(OM_OP_leaky_relu, &x, 1, NULL, 0, NULL, 0, y, 1), 1);
  CHECK_NEAR(at(y[0], 0), -0.02, 1e-7);
  CHECK(isnan(at(y[0], 1)) && at(y[0], 2) == 25);
  om_tensor_release(y[0]);
  CHECK_EQ_INT(om_apply(OM_OP_softplus, &x, 1, NULL, 0, NULL, 0, y, 1), 1);
  CHECK_NEAR(at(y[0], 0), log1p(exp(-2.0)), 1e-7);
  CHECK(isnan(at(y[0], 1)) && at(y[0], 2) == 25); /* 25 > 20: x itself */
  om_tensor_release(y[0]);
  om_tensor *fns[] = {om_elu(x, 1), om_gelu(x, false), om_silu(x), om_hardswish(x), om_erf(x), om_clamp(x, &(double){0}, &(double){1}),
                      om_hardsigmoid(x), om_hardtanh(x, 0, 6)};
  for (int k = 0; k < 8; k++) {
    if (!fns[k] || !isnan(at(fns[k], 1))) FAILED("function %d does not keep NaN", k);
    om_tensor_release(fns[k]);
  }
  CHECK_ERROR(om_apply(OM_OP_gelu, &x, 1, (int64_t[]){2}, 1, NULL, 0, y, 1) > 0, OM_ERR_INVALID_ARGUMENT, "gelu: approximate must be 'none' (0) or 'tanh' (1), got 2");
  CHECK_ERROR(om_apply(OM_OP_gelu, &x, 1, (int64_t[]){0, 2}, 2, NULL, 0, y, 1) > 0, OM_ERR_INVALID_ARGUMENT, "gelu: fast erf must be 0 or 1, got 2");
  CHECK_ERROR(om_apply(OM_OP_gelu, &x, 1, (int64_t[]){0, 0, 0}, 3, NULL, 0, y, 1) > 0, OM_ERR_INVALID_ARGUMENT, "gelu: takes 0 float attributes (none) and 2 int ones, got 0 and 3");
  CHECK_ERROR(om_apply(OM_OP_leaky_relu, &x, 1, NULL, 0, (double[]){1, 2}, 2, y, 1) > 0, OM_ERR_INVALID_ARGUMENT, "leaky_relu: takes 1 float attributes (negative_slope)");
  om_tensor *i = om_arange(0, 3, 1, OM_INT64);
  CHECK_ERROR(om_gelu(i, false), OM_ERR_DTYPE_MISMATCH, "gelu: takes float32, not int64");
  CHECK_ERROR(om_hardtanh(i, 0, 6), OM_ERR_DTYPE_MISMATCH, "hardtanh: takes float32, not int64");
  /* om_apply without attributes: hardtanh's defaults -1, 1 */
  CHECK_EQ_INT(om_apply(OM_OP_hardtanh, &x, 1, NULL, 0, NULL, 0, y, 1), 1);
  CHECK(at(y[0], 0) == -1 && at(y[0], 2) == 1);
  om_tensor_release(y[0]);
  om_tensor_release(i);
  om_tensor_release(x);
}

/* d/dx of op at the points of x, through backward, against want. */
static void check_grad(const char *name, om_tensor *(*op)(om_tensor *, const double *), const double *k, om_tensor *x,
                       const double *want, int64_t n) {
  om_tensor *leaf = om_detach(x);
  om_tensor_set_requires_grad(leaf, true);
  om_tensor *y = op(leaf, k), *s = om_sum(y, NULL, 0, false);
  if (!s || !om_backward(s, NULL)) FAILED("%s: %s", name, om_last_error_message());
  om_tensor *g = om_tensor_grad(leaf);
  for (int64_t i = 0; i < n; i++)
    if (!(fabs(at(g, i) - want[i]) <= 1e-5 * fmax(1, fabs(want[i])))) FAILED("%s'(%g) = %.9g, expected %.9g", name, at(x, i), at(g, i), want[i]);
  om_tensor_release(g);
  om_tensor_release(s);
  om_tensor_release(y);
  om_tensor_release(leaf);
}
static om_tensor *g_leaky(om_tensor *x, const double *k) { return om_leaky_relu(x, k[0]); }
static om_tensor *g_elu(om_tensor *x, const double *k) { return om_elu(x, k[0]); }
static om_tensor *g_gelu(om_tensor *x, const double *k) { return om_gelu(x, k[0] != 0); }
static om_tensor *g_silu(om_tensor *x, const double *k) { (void)k; return om_silu(x); }
static om_tensor *g_softplus(om_tensor *x, const double *k) { return om_softplus(x, k[0], k[1]); }
static om_tensor *g_hardswish(om_tensor *x, const double *k) { (void)k; return om_hardswish(x); }
static om_tensor *g_hardsigmoid(om_tensor *x, const double *k) { (void)k; return om_hardsigmoid(x); }
static om_tensor *g_hardtanh(om_tensor *x, const double *k) { return om_hardtanh(x, k[0], k[1]); }
static om_tensor *g_erf(om_tensor *x, const double *k) { (void)k; return om_erf(x); }
static om_tensor *g_clamp(om_tensor *x, const double *k) { return om_clamp(x, &k[0], &k[1]); }

TEST(activation_gradients_at_chosen_points) {
  om_tensor *x = TF(SHAPE(6), -4, -3, -1, 0, 3, 5);
  double pdf[6], cdf[6], sg[6], hs[6], er[6];
  for (int i = 0; i < 6; i++) {
    double v = at(x, i);
    pdf[i] = exp(-v * v / 2) / sqrt(2 * 3.141592653589793);
    cdf[i] = 0.5 * (1 + erf(v / sqrt(2.0)));
    sg[i] = 1 / (1 + exp(-v));
    hs[i] = v < -3 ? 0 : v <= 3 ? v / 3 + 0.5 : 1; /* PyTorch: x = -3 and x = 3 take the middle rule */
    er[i] = 2 / sqrt(3.141592653589793) * exp(-v * v);
  }
  check_grad("leaky_relu", g_leaky, (double[]){0.1}, x, (double[]){0.1, 0.1, 0.1, 0.1, 1, 1}, 6); /* 0.1 at 0, as PyTorch */
  check_grad("elu", g_elu, (double[]){0.5}, x, (double[]){0.5 * exp(-4), 0.5 * exp(-3), 0.5 * exp(-1), 0.5, 1, 1}, 6);
  double dg[6], ds[6], dsp[6];
  for (int i = 0; i < 6; i++) {
    double v = at(x, i);
    dg[i] = cdf[i] + v * pdf[i];
    ds[i] = sg[i] * (1 + v * (1 - sg[i]));
    dsp[i] = 2 * v > 5 ? 1 : 1 / (1 + exp(-2 * v));
  }
  check_grad("gelu", g_gelu, (double[]){0}, x, dg, 6);
  check_grad("silu", g_silu, NULL, x, ds, 6);
  check_grad("softplus", g_softplus, (double[]){2, 5}, x, dsp, 6);
  check_grad("hardswish", g_hardswish, NULL, x, hs, 6);
  check_grad("erf", g_erf, NULL, x, er, 6);
  check_grad("clamp", g_clamp, (double[]){-3, 3}, x, (double[]){0, 1, 1, 1, 1, 0}, 6); /* the bounds themselves pass */
  /* PyTorch's hardtanh_backward and hardsigmoid_backward: 0 at the bounds themselves */
  check_grad("hardtanh", g_hardtanh, (double[]){-3, 3}, x, (double[]){0, 0, 1, 1, 0, 0}, 6);
  check_grad("relu6", g_hardtanh, (double[]){0, 6}, x, (double[]){0, 0, 0, 0, 1, 1}, 6); /* 0 at 0, as relu's */
  check_grad("hardsigmoid", g_hardsigmoid, NULL, x, (double[]){0, 0, 1 / 6.0, 1 / 6.0, 0, 0}, 6);
  om_tensor_release(x);
}

TEST(clamp_int64_and_errors) {
  om_tensor *i = om_from_data((int64_t[]){-5, 0, 7, INT64_MAX}, (int64_t[]){4}, 1, OM_INT64);
  om_tensor *c = om_clamp(i, &(double){-1}, &(double){3});
  CHECK_VALUES(c, SHAPE(4), 0, -1, 0, 3, 3);
  CHECK(c && om_tensor_dtype(c) == OM_INT64);
  om_tensor_release(c);
  om_tensor *y[1];
  /* exact int64 bounds through the int attributes (JS bigints) */
  CHECK_EQ_INT(om_apply(OM_OP_clamp, &i, 1, (int64_t[]){1, 0, INT64_MAX - 1, 0}, 4, NULL, 0, y, 1), 1);
  int64_t got[4] = {0};
  CHECK(om_tensor_read(y[0], got));
  for (int k = 0; k < 4; k++) CHECK_EQ_INT(got[k], k < 3 ? INT64_MAX - 1 : INT64_MAX); /* min only */
  om_tensor_release(y[0]);
  CHECK_ERROR(om_clamp(i, &(double){0.5}, NULL), OM_ERR_INVALID_ARGUMENT, "clamp: min 0.5 is not an int64 for an int64 input");
  CHECK_ERROR(om_clamp(i, NULL, NULL), OM_ERR_INVALID_ARGUMENT, "clamp: at least one of min or max must be given");
  om_tensor *b = om_gt(i, om_tensor_retain(i)); /* bool */
  om_tensor_release(i);
  CHECK_ERROR(om_clamp(b, &(double){0}, NULL), OM_ERR_DTYPE_MISMATCH, "clamp: takes float32 or int64, not bool");
  om_tensor_release(b);
  om_tensor_release(i);
}

TEST(cumsum_values_dtypes_and_gradient) {
  om_tensor *x = TF(SHAPE(2, 3), 1, 2, 3, 4, 5, 6);
  om_tensor *c1 = om_cumsum(x, 1), *c0 = om_cumsum(x, -2);
  CHECK_VALUES(c1, SHAPE(2, 3), 0, 1, 3, 6, 4, 9, 15);
  CHECK_VALUES(c0, SHAPE(2, 3), 0, 1, 2, 3, 5, 7, 9);
  om_tensor *t = om_transpose(x, 0, 1), *ct = om_cumsum(t, 1); /* strided input */
  CHECK_VALUES(ct, SHAPE(3, 2), 0, 1, 5, 2, 7, 3, 9);
  om_tensor *i = om_from_data((int64_t[]){INT64_MAX, 1, -2}, (int64_t[]){3}, 1, OM_INT64), *ci = om_cumsum(i, 0);
  int64_t got[3] = {0};
  CHECK(om_tensor_read(ci, got)); /* wraps as two's complement */
  CHECK(got[0] == INT64_MAX && got[1] == INT64_MIN && got[2] == INT64_MAX - 1);
  om_tensor *m = om_from_data((uint8_t[]){1, 0, 1, 1}, (int64_t[]){4}, 1, OM_BOOL), *cm = om_cumsum(m, 0);
  CHECK_VALUES(cm, SHAPE(4), 0, 1, 1, 2, 3);
  CHECK(cm && om_tensor_dtype(cm) == OM_INT64);
  om_tensor *s = om_scalar(2.5, OM_FLOAT32), *cs = om_cumsum(s, -1);
  CHECK(cs && om_tensor_ndim(cs) == 0 && at(cs, 0) == 2.5);
  CHECK_ERROR(om_cumsum(x, 2), OM_ERR_INDEX_OUT_OF_RANGE, "cumsum");
  /* d/dx sum(cumsum(x)) along a dim of 3 is 3, 2, 1 */
  om_tensor *leaf = om_detach(x);
  om_tensor_set_requires_grad(leaf, true);
  om_tensor *y = om_cumsum(leaf, 1), *tot = om_sum(y, NULL, 0, false);
  CHECK(om_backward(tot, NULL));
  om_tensor *g = om_tensor_grad(leaf);
  CHECK_VALUES(g, SHAPE(2, 3), 0, 3, 2, 1, 3, 2, 1);
  om_tensor *rel[] = {x, c1, c0, t, ct, i, ci, m, cm, s, cs, leaf, y, tot, g};
  om__release_all(rel, 15);
}

TEST(pad_modes_values) {
  om_tensor *x = TF(SHAPE(1, 2, 3), 1, 2, 3, 4, 5, 6);
  om_tensor *c = om_pad(x, (int64_t[]){1, 2}, 2, OM_PAD_CONSTANT, 9);
  CHECK_VALUES(c, SHAPE(1, 2, 6), 0, 9, 1, 2, 3, 9, 9, 9, 4, 5, 6, 9, 9);
  om_tensor *crop = om_pad(x, (int64_t[]){-1, 0, 1, -1}, 4, OM_PAD_CONSTANT, 0); /* last dim drops its first, dim 1 gains a row before and drops its last */
  CHECK_VALUES(crop, SHAPE(1, 2, 2), 0, 0, 0, 2, 3);
  om_tensor *r = om_pad(x, (int64_t[]){2, 1}, 2, OM_PAD_REFLECT, 0);
  CHECK_VALUES(r, SHAPE(1, 2, 6), 0, 3, 2, 1, 2, 3, 2, 6, 5, 4, 5, 6, 5);
  om_tensor *r2 = om_pad(x, (int64_t[]){0, 0, 1, 1}, 4, OM_PAD_REFLECT, 0);
  CHECK_VALUES(r2, SHAPE(1, 4, 3), 0, 4, 5, 6, 1, 2, 3, 4, 5, 6, 1, 2, 3);
  om_tensor *e = om_pad(x, (int64_t[]){1, 3, 1, 0}, 4, OM_PAD_REPLICATE, 0);
  CHECK_VALUES(e, SHAPE(1, 3, 7), 0, 1, 1, 2, 3, 3, 3, 3, 1, 1, 2, 3, 3, 3, 3, 4, 4, 5, 6, 6, 6, 6);
  om_tensor *i = om_from_data((int64_t[]){5, 6}, (int64_t[]){1, 2}, 2, OM_INT64);
  om_tensor *ip = om_pad(i, (int64_t[]){1, 0}, 2, OM_PAD_CONSTANT, -7.9); /* the value truncates to -7 */
  CHECK_VALUES(ip, SHAPE(1, 3), 0, -7, 5, 6);
  om_tensor *empty = om_pad(x, (int64_t[]){-3, 0}, 2, OM_PAD_CONSTANT, 0);
  CHECK(empty && om_tensor_numel(empty) == 0);
  om_tensor *rel[] = {x, c, crop, r, r2, e, i, ip, empty};
  om__release_all(rel, 9);
}

TEST(pad_gradients) {
  /* constant: the gradient is g cropped back (and zero where the forward cropped) */
  om_tensor *x = TF(SHAPE(1, 4), 1, 2, 3, 4), *leaf = om_detach(x);
  om_tensor_set_requires_grad(leaf, true);
  om_tensor *w = TF(SHAPE(1, 4), 10, 20, 30, 40);
  om_tensor *y = om_pad(leaf, (int64_t[]){1, -1}, 2, OM_PAD_CONSTANT, 0), *p = om_mul(y, w), *s = om_sum(p, NULL, 0, false);
  CHECK(om_backward(s, NULL));
  om_tensor *g = om_tensor_grad(leaf);
  CHECK_VALUES(g, SHAPE(1, 4), 0, 20, 30, 40, 0);
  om_tensor *rel[] = {y, p, s, g};
  om__release_all(rel, 4);
  om_tensor_zero_grad(leaf);
  /* reflect [1, 2, 3, 4] by (2, 1) -> [3, 2, 1, 2, 3, 4, 3]: input 2 is read twice, 3 three times */
  om_tensor *wr = TF(SHAPE(1, 7), 1, 10, 100, 1000, 10000, 100000, 1000000);
  y = om_pad(leaf, (int64_t[]){2, 1}, 2, OM_PAD_REFLECT, 0), p = om_mul(y, wr), s = om_sum(p, NULL, 0, false);
  CHECK(om_backward(s, NULL));
  g = om_tensor_grad(leaf);
  CHECK_VALUES(g, SHAPE(1, 4), 0, 100, 1010, 1010001, 100000);
  om_tensor *rel2[] = {y, p, s, g};
  om__release_all(rel2, 4);
  om_tensor_zero_grad(leaf);
  /* replicate by (2, 1) -> [1, 1, 1, 2, 3, 4, 4] */
  y = om_pad(leaf, (int64_t[]){2, 1}, 2, OM_PAD_REPLICATE, 0), p = om_mul(y, wr), s = om_sum(p, NULL, 0, false);
  CHECK(om_backward(s, NULL));
  g = om_tensor_grad(leaf);
  CHECK_VALUES(g, SHAPE(1, 4), 0, 111, 1000, 10000, 1100000);
  om_tensor *rel3[] = {y, p, s, g, x, leaf, w, wr};
  om__release_all(rel3, 8);
}

TEST(pad_errors) {
  om_tensor *x = TF(SHAPE(1, 2, 3), 1, 2, 3, 4, 5, 6), *y[1];
  CHECK_ERROR(om_pad(x, (int64_t[]){1, 2, 3}, 3, OM_PAD_CONSTANT, 0), OM_ERR_INVALID_ARGUMENT, "pad: padding length must be divisible by 2, got 3");
  CHECK_ERROR(om_pad(x, (int64_t[]){1, 1, 1, 1, 1, 1, 1, 1}, 8, OM_PAD_CONSTANT, 0), OM_ERR_INVALID_ARGUMENT,
              "padding length 8 and input of dimension 3");
  CHECK_ERROR(om_pad(x, (int64_t[]){3, 0}, 2, OM_PAD_REFLECT, 0), OM_ERR_INVALID_ARGUMENT,
              "pad: padding size should be less than the corresponding input dimension, but got: padding (3, 0) at dimension 2 of input [1,2,3]");
  CHECK_ERROR(om_pad(x, (int64_t[]){1, 1}, 2, OM_PAD_REFLECT, 2), OM_ERR_INVALID_ARGUMENT, "doesn't take in value argument");
  CHECK_ERROR(om_pad(x, (int64_t[]){1, 1, 1, 1, 1, 1}, 6, OM_PAD_REPLICATE, 0), OM_ERR_INVALID_ARGUMENT,
              "pad: mode \"replicate\" pads the last 1, 2 or 3 dims of an input with 1 or 2 more dims");
  CHECK_ERROR(om_pad(x, (int64_t[]){-1, 0}, 2, OM_PAD_REPLICATE, 0), OM_ERR_INVALID_ARGUMENT, "takes no negative padding");
  CHECK_ERROR(om_pad(x, (int64_t[]){-2, -2}, 2, OM_PAD_CONSTANT, 0), OM_ERR_INVALID_ARGUMENT,
              "the input size 3, plus negative padding -2 and -2 resulted in a negative output size");
  CHECK_ERROR(om_pad(x, (int64_t[]){1, 1}, 2, (om_pad_mode)7, 0), OM_ERR_INVALID_ARGUMENT, "pad: mode must be");
  CHECK_ERROR(om_apply(OM_OP_pad, &x, 1, (int64_t[]){9, 1, 1}, 3, NULL, 0, y, 1) > 0, OM_ERR_INVALID_ARGUMENT, "pad: mode must be 0 (constant)");
  om_tensor *b = om_gt(x, x);
  CHECK_ERROR(om_pad(b, (int64_t[]){1, 1}, 2, OM_PAD_CONSTANT, 0), OM_ERR_DTYPE_MISMATCH, "pad: takes float32 or int64, not bool");
  om_tensor *v = TF(SHAPE(3), 1, 2, 3); /* 1-D: reflect needs 2-D or 3-D for one padded dim, as PyTorch */
  CHECK_ERROR(om_pad(v, (int64_t[]){1, 1}, 2, OM_PAD_REFLECT, 0), OM_ERR_INVALID_ARGUMENT, "got padding length 2 for input [3]");
  om_tensor_release(v);
  om_tensor_release(b);
  om_tensor_release(x);
}

TEST(masked_fill_values_and_errors) {
  om_tensor *x = TF(SHAPE(2, 3), 1, 2, 3, 4, 5, 6);
  om_tensor *m = om_from_data((uint8_t[]){1, 0, 1}, (int64_t[]){3}, 1, OM_BOOL);
  om_tensor *y = om_masked_fill(x, m, -INFINITY);
  CHECK_VALUES(y, SHAPE(2, 3), 0, -INFINITY, 2, -INFINITY, -INFINITY, 5, -INFINITY);
  om_tensor *mcol = om_from_data((uint8_t[]){0, 1}, (int64_t[]){2, 1, 1}, 3, OM_BOOL), *yb = om_masked_fill(x, mcol, 0);
  CHECK_VALUES(yb, SHAPE(2, 2, 3), 0, 1, 2, 3, 4, 5, 6, 0, 0, 0, 0, 0, 0); /* broadcast both ways, as PyTorch's out-of-place form */
  om_tensor *i = om_from_data((int64_t[]){1, 2, 3}, (int64_t[]){3}, 1, OM_INT64), *yi = om_masked_fill(i, m, -2.7);
  CHECK_VALUES(yi, SHAPE(3), 0, -2, 2, -2);
  om_tensor *bt = om_gt(i, om_tensor_retain(i)), *yt = om_masked_fill(bt, m, 1);
  om_tensor_release(i);
  CHECK_VALUES(yt, SHAPE(3), 0, 1, 0, 1);
  CHECK_ERROR(om_masked_fill(x, x, 0), OM_ERR_DTYPE_MISMATCH, "masked_fill: only supports boolean masks, but got mask with dtype float32");
  om_tensor *m4 = om_from_data((uint8_t[]){1, 0, 1, 0}, (int64_t[]){4}, 1, OM_BOOL);
  CHECK_ERROR(om_masked_fill(x, m4, 0), OM_ERR_SHAPE_MISMATCH, "masked_fill");
  /* gradient: zero where filled */
  om_tensor *leaf = om_detach(x);
  om_tensor_set_requires_grad(leaf, true);
  om_tensor *f = om_masked_fill(leaf, m, 3), *s = om_sum(f, NULL, 0, false);
  CHECK(om_backward(s, NULL));
  om_tensor *g = om_tensor_grad(leaf);
  CHECK_VALUES(g, SHAPE(2, 3), 0, 0, 1, 0, 0, 1, 0);
  om_tensor *rel[] = {x, m, y, mcol, yb, i, yi, bt, yt, m4, leaf, f, s, g};
  om__release_all(rel, 14);
}

TEST(dropout_training_eval_and_gradient) {
  int64_t shape[] = {64, 64};
  om_tensor *x = om_ones(shape, 2, OM_FLOAT32);
  CHECK(om_dropout(x, 0.5, false) == x); /* eval and p = 0: the input itself */
  om_tensor_release(x);
  CHECK(om_dropout(x, 0, true) == x);
  om_tensor_release(x);
  om_manual_seed(42);
  om_tensor *a = om_dropout(x, 0.25, true);
  om_manual_seed(42);
  om_tensor *b = om_dropout(x, 0.25, true), *c = om_dropout(x, 0.25, true); /* the generator advanced: a new mask */
  int64_t kept = 0, same = 0, n = 64 * 64;
  bool values_ok = true;
  for (int64_t k = 0; k < n; k++) {
    double va = at(a, k);
    kept += va != 0;
    same += at(b, k) == va && at(c, k) == va;
    values_ok &= va == 0 || va == (double)(float)(1 / 0.75);
    if (at(b, k) != va) FAILED("the same seed gave another mask at %lld", (long long)k);
  }
  CHECK(values_ok);
  CHECK(kept > 0.72 * n && kept < 0.78 * n); /* 3072 expected; 4 sigma is about 110 */
  CHECK(same < n);
  /* the first mask of seed 42 (the same bits natively and in WASM: the C tests run in both) */
  uint64_t bits = 0;
  for (int k = 0; k < 64; k++) bits |= (uint64_t)(at(a, k) != 0) << k;
  CHECK_EQ_INT(bits, 0xbb72ffffffbefff9ull);
  om_tensor *z = om_dropout(x, 1, true); /* p = 1: all zero */
  om_tensor *zs = om_sum(z, NULL, 0, false);
  CHECK(zs && at(zs, 0) == 0);
  /* the backward reads the same mask: grad = mask / (1 - p) */
  om_tensor *leaf = om_detach(x);
  om_tensor_set_requires_grad(leaf, true);
  om_manual_seed(42);
  om_tensor *d = om_dropout(leaf, 0.25, true), *s = om_sum(d, NULL, 0, false);
  CHECK(om_backward(s, NULL));
  om_tensor *g = om_tensor_grad(leaf);
  for (int64_t k = 0; g && k < n; k++)
    if (at(g, k) != at(a, k)) { FAILED("grad %lld = %g, forward %g", (long long)k, at(g, k), at(a, k)); break; }
  CHECK_ERROR(om_dropout(x, 1.5, true), OM_ERR_INVALID_ARGUMENT, "dropout: probability has to be between 0 and 1, but got 1.5");
  CHECK_ERROR(om_dropout(x, NAN, false), OM_ERR_INVALID_ARGUMENT, "dropout: probability has to be between 0 and 1");
  om_tensor *i = om_zeros(shape, 2, OM_INT64);
  CHECK_ERROR(om_dropout(i, 0.5, true), OM_ERR_DTYPE_MISMATCH, "dropout: takes float32, not int64");
  om_tensor *rel[] = {x, a, b, c, z, zs, leaf, d, s, g, i};
  om__release_all(rel, 11);
}

TEST(tracing_dropout_refused_in_training_and_absent_in_eval) {
  om_tensor *x0 = om_randn((int64_t[]){2, 3}, 2, 1, true);
  CHECK(om_trace_begin());
  om_tensor *x = om_trace_input("x", x0, NULL);
  CHECK_ERROR(om_dropout(x, 0.1, true), OM_ERR_TRACE_UNSUPPORTED_OPERATION,
              "dropout: cannot be traced: in training mode a random mask would be frozen into the graph; call eval()");
  CHECK(!om_trace_active()); /* the trace error ended the recording */
  om_tensor_release(x);
  CHECK(om_trace_begin());
  x = om_trace_input("x", x0, NULL);
  om_tensor *d = om_dropout(x, 0.1, false), *y = om_relu(d);
  CHECK(d == x);
  om_traced_model *m = om_trace_finish(&y, (const char *[]){"y"}, 1);
  CHECK(m && om_traced_count(m, OM_TRACED_NODE) == 1 && !strcmp(om_traced_name(m, OM_TRACED_NODE, 0), "Relu"));
  om_traced_release(m);
  om_tensor *rel[] = {x0, x, d, y};
  om__release_all(rel, 4);
}

/* The node types one call writes when traced. */
static void check_nodes(const char *what, om_tensor *(*f)(om_tensor *), const char *const *want, int n) {
  om_tensor *x0 = om_randn((int64_t[]){2, 3}, 2, 1, true);
  CHECK(om_trace_begin());
  om_tensor *x = om_trace_input("x", x0, NULL), *y = f(x);
  om_traced_model *m = om_trace_finish(&y, (const char *[]){"y"}, 1);
  if (!m || om_traced_count(m, OM_TRACED_NODE) != n) FAILED("%s: %d nodes: %s", what, m ? om_traced_count(m, OM_TRACED_NODE) : -1, om_last_error_message());
  for (int k = 0; m && k < n && k < om_traced_count(m, OM_TRACED_NODE); k++)
    if (strcmp(om_traced_name(m, OM_TRACED_NODE, k), want[k])) FAILED("%s: node %d is %s, expected %s", what, k, om_traced_name(m, OM_TRACED_NODE, k), want[k]);
  om_traced_release(m);
  om_tensor_release(y);
  om_tensor_release(x);
  om_tensor_release(x0);
}
static om_tensor *t_softplus1(om_tensor *x) { return om_softplus(x, 1, 20); }
static om_tensor *t_softplus2(om_tensor *x) { return om_softplus(x, 2, 20); }
static om_tensor *t_clamp_max(om_tensor *x) { return om_clamp(x, NULL, &(double){1}); }
static om_tensor *t_pad(om_tensor *x) { return om_pad(x, (int64_t[]){1, 1}, 2, OM_PAD_REPLICATE, 0); }
static om_tensor *t_gelu(om_tensor *x) { return om_gelu(x, false); }
static om_tensor *t_relu6(om_tensor *x) { return om_hardtanh(x, 0, 6); }

TEST(tracing_writes_the_documented_nodes) {
  check_nodes("softplus beta 1", t_softplus1, (const char *[]){"Constant", "Softplus", "Greater", "Where"}, 4);
  check_nodes("softplus beta 2", t_softplus2, (const char *[]){"Constant", "Constant", "Mul", "Softplus", "Div", "Greater", "Where"}, 7);
  check_nodes("silu", om_silu, (const char *[]){"Sigmoid", "Mul"}, 2);
  check_nodes("clamp max", t_clamp_max, (const char *[]){"Constant", "Constant", "Clip"}, 3); /* min: a -inf constant */
  check_nodes("pad replicate", t_pad, (const char *[]){"Pad"}, 1);
  check_nodes("gelu", t_gelu, (const char *[]){"Gelu"}, 1);
  check_nodes("relu6", t_relu6, (const char *[]){"Constant", "Constant", "Clip"}, 3);
  check_nodes("hardsigmoid", om_hardsigmoid, (const char *[]){"Constant", "Constant", "Constant", "Add", "Clip", "Div"}, 6);
}

int main(void) {
  RUN(activations_match_their_formulas);
  RUN(activation_tails);
  RUN(activation_defaults_and_nan);
  RUN(activation_gradients_at_chosen_points);
  RUN(clamp_int64_and_errors);
  RUN(cumsum_values_dtypes_and_gradient);
  RUN(pad_modes_values);
  RUN(pad_gradients);
  RUN(pad_errors);
  RUN(masked_fill_values_and_errors);
  RUN(dropout_training_eval_and_gradient);
  RUN(tracing_dropout_refused_in_training_and_absent_in_eval);
  RUN(tracing_writes_the_documented_nodes);
  TEST_MAIN_END();
}
