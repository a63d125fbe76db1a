/* The library's own exp, expm1, log, log1p, tanh, sigmoid, erf, pow, and trigonometric and hyperbolic
 * functions (docs/graph-runtime.md, "Modes"): the platform's libm differs between machines (glibc
 * natively, musl in WASM) in the last bits, so every kernel calls these instead, and the same inputs give the same bits everywhere. They use
 * only IEEE double arithmetic (+, -, *, /, correctly rounded on every machine the library builds
 * for, with -ffp-contract=off so nothing is fused), integer operations on the bits and fixed
 * tables: range reduction, then a polynomial with fixed coefficients, summed in a fixed order.
 * exp, log and log1p are double functions good to about 1e-16 relative (the softmax and loss
 * rows sum in double); the float ones round a double result once (tanh and erf, float only, are
 * each one rational function, to 9.4e-10 and 1.3e-8, so that two lanes run as one), so they are
 * within an ulp of the exact value. tests/c/test_math.c
 * checks them against libm over a million points each and pins a hash of their outputs. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "internal.h"
#ifdef __wasm_simd128__
#include <wasm_simd128.h>
#endif

static uint64_t bits(double x) {
  uint64_t u;
  memcpy(&u, &x, 8);
  return u;
}
static double from_bits(uint64_t u) {
  double x;
  memcpy(&x, &u, 8);
  return x;
}
/* 2^k for -1022 <= k <= 1023, exactly. */
static double pow2(int64_t k) { return from_bits((uint64_t)(k + 1023) << 52); }

/* 2^(j/32), j = 0..31 (correctly rounded) */
static const double EXP2_32[32] = {
    0x1.0000000000000p+0, 0x1.059b0d3158574p+0, 0x1.0b5586cf9890fp+0, 0x1.11301d0125b51p+0,
    0x1.172b83c7d517bp+0, 0x1.1d4873168b9aap+0, 0x1.2387a6e756238p+0, 0x1.29e9df51fdee1p+0,
    0x1.306fe0a31b715p+0, 0x1.371a7373aa9cbp+0, 0x1.3dea64c123422p+0, 0x1.44e086061892dp+0,
    0x1.4bfdad5362a27p+0, 0x1.5342b569d4f82p+0, 0x1.5ab07dd485429p+0, 0x1.6247eb03a5585p+0,
    0x1.6a09e667f3bcdp+0, 0x1.71f75e8ec5f74p+0, 0x1.7a11473eb0187p+0, 0x1.82589994cce13p+0,
    0x1.8ace5422aa0dbp+0, 0x1.93737b0cdc5e5p+0, 0x1.9c49182a3f090p+0, 0x1.a5503b23e255dp+0,
    0x1.ae89f995ad3adp+0, 0x1.b7f76f2fb5e47p+0, 0x1.c199bdd85529cp+0, 0x1.cb720dcef9069p+0,
    0x1.d5818dcfba487p+0, 0x1.dfc97337b9b5fp+0, 0x1.ea4afa2a490dap+0, 0x1.f50765b6e4540p+0,
};
#define INV_LN2_32 46.16624130844683       /* 32 / ln 2 */
#define LN2_32_HI 0x1.62e42fefa0000p-6     /* ln 2 / 32, its last 17 bits 0: k * HI is exact for |k| < 2^16 */
#define LN2_32_LO 0x1.cf79abc9e3b3ap-45    /* the rest of ln 2 / 32 */

/* e^x for x in (-745.2, 709.8), with the polynomial of e^r to r^6 (the next term is below 4e-18:
 * double precision) or, short, to r^4 (below 2e-12: what a float result needs). */
static double exp_core(double x, bool short_poly) {
  /* x = (32 i + j) ln2 / 32 + r, |r| <= ln2 / 64; e^x = 2^i 2^(j/32) e^r */
  /* k = round(x 32 / ln2) by adding 1.5 * 2^52: the sum's low bits are k (round to nearest even),
   * and no float-to-int conversion (which WASM without non-trapping conversions guards slowly) */
  double kd = x * INV_LN2_32 + 0x1.8p52;
  int64_t k = (int64_t)(bits(kd) - bits(0x1.8p52));
  kd -= 0x1.8p52;
  double r = (x - kd * LN2_32_HI) - kd * LN2_32_LO, p;
  if (short_poly) {
    p = 1.0 / 24.0;
  } else {
    p = 1.0 / 720.0;
    p = p * r + 1.0 / 120.0;
    p = p * r + 1.0 / 24.0;
  }
  p = p * r + 1.0 / 6.0;
  p = p * r + 0.5;
  p = p * r + 1.0;
  p = p * r + 1.0;
  int64_t j = (int64_t)((uint64_t)k & 31), i = (k - j) / 32;
  p *= EXP2_32[j];
  /* times 2^i, in two steps where 2^i alone is not a normal double */
  if (i > 1023) return p * pow2(i - 1023) * pow2(1023);
  if (i < -1021) return p * pow2(i + 1000) * pow2(-1000);
  return p * pow2(i);
}

/* e^x, NaN and the ends of the range first. */
static double exp_of(double x, bool short_poly) {
  if (x != x) return x;
  if (x > 709.782712893384) return INFINITY;
  if (x < -745.2) return 0.0;
  return exp_core(x, short_poly);
}

double om__exp(double x) { return exp_of(x, false); }

/* exp_core on two lanes, with the same operations in the same order, so each lane is the same
 * bits as exp_core; for x in [-700, 700], where 2^i is a normal double. */
typedef double v2d __attribute__((vector_size(16)));
typedef int64_t v2i __attribute__((vector_size(16)));
static inline __attribute__((always_inline)) v2d exp_core2_poly(v2d x, bool short_poly) {
  const v2d big = {0x1.8p52, 0x1.8p52};
  v2d kd = x * INV_LN2_32 + big;
  v2i k = (v2i)kd - (v2i)big; /* the bits, as bits() reads them */
  kd -= big;
  v2d r = (x - kd * LN2_32_HI) - kd * LN2_32_LO, p;
  if (short_poly) {
    p = r * (1.0 / 24.0) + 1.0 / 6.0;
  } else {
    p = r * (1.0 / 720.0) + 1.0 / 120.0;
    p = p * r + 1.0 / 24.0;
    p = p * r + 1.0 / 6.0;
  }
  p = p * r + 0.5;
  p = p * r + 1.0;
  p = p * r + 1.0;
  v2i j = k & 31, i = (k - j) >> 5; /* (k - j) / 32, exact: k - j is a multiple of 32 */
  p *= (v2d){EXP2_32[j[0]], EXP2_32[j[1]]};
  return p * (v2d)((i + 1023) << 52);
}
static v2d exp_core2(v2d x) { return exp_core2_poly(x, false); }

/* where m, a else b, lane by lane (m all ones or all zeros) */
static inline v2d pick2(v2i m, v2d a, v2d b) { return (v2d)((m & (v2i)a) | (~m & (v2i)b)); }

/* Two lanes at a time where each is in exp_core2's range or below -745.2, where exp_of gives 0
 * (a masked score in a softmax row is -inf or a large negative: half of a causal row). */
void om__exp_n(double *x, int64_t n) {
  const v2d lo = {-700.0, -700.0}, hi = {700.0, 700.0}, gone = {-745.2, -745.2}, zero = {0.0, 0.0};
  int64_t k = 0;
  for (; k + 2 <= n; k += 2) {
    v2d v;
    memcpy(&v, x + k, sizeof v);
    v2i under = v < gone, ok = ((v >= lo) & (v <= hi)) | under;
    if (ok[0] & ok[1]) {
      v = pick2(under, zero, exp_core2(pick2(under, lo, v)));
      memcpy(x + k, &v, sizeof v);
    } else {
      x[k] = om__exp(x[k]), x[k + 1] = om__exp(x[k + 1]);
    }
  }
  for (; k < n; k++) x[k] = om__exp(x[k]);
}

/* 1 / (2n + 1) for n = 0..11: the atanh series of log */
static const double ODD_INV[12] = {1.0, 1.0 / 3, 1.0 / 5, 1.0 / 7, 1.0 / 9, 1.0 / 11, 1.0 / 13, 1.0 / 15, 1.0 / 17, 1.0 / 19, 1.0 / 21, 1.0 / 23};
#define LN2_HI 6.93147180369123816490e-01 /* its last 11 bits are 0: e * LN2_HI is exact for |e| < 2048 */
#define LN2_LO 1.90821492927058770002e-10

/* log x for finite x > 0, with the atanh series to s^(2 terms - 1). */
static double log_pos(double x, int terms) {
  int e = 0;
  if (x < 2.2250738585072014e-308) x *= 18014398509481984.0, e = -54; /* subnormal: times 2^54 */
  uint64_t u = bits(x);
  e += (int)(u >> 52) - 1023;
  double m = from_bits((u & 0x000fffffffffffffull) | 0x3ff0000000000000ull); /* in [1, 2) */
  if (m > 1.4142135623730951) m *= 0.5, e++;                               /* in [sqrt(1/2), sqrt(2)) */
  /* log m = 2 atanh(s), s = (m - 1) / (m + 1), |s| <= 0.1716: s + s^3/3 + s^5/5 + ... */
  double s = (m - 1.0) / (m + 1.0), s2 = s * s, p = ODD_INV[terms - 1];
  for (int n = terms - 2; n >= 0; n--) p = p * s2 + ODD_INV[n];
  return e * LN2_HI + (2.0 * s * p + e * LN2_LO);
}

double om__log(double x) {
  if (x != x || x < 0) return NAN;
  if (x == 0) return -INFINITY;
  return x == INFINITY ? x : log_pos(x, 12); /* to s^23: the next term is below 1e-20 */
}

double om__log1p(double x) {
  if (x != x || x < -1) return NAN;
  if (x > -1e-4 && x < 1e-4) { /* x - x^2/2 + x^3/3 - x^4/4 + x^5/5: the next term is below 2e-21 x */
    double p = 0.2;
    p = p * x - 0.25;
    p = p * x + 1.0 / 3.0;
    p = p * x - 0.5;
    p = p * x + 1.0;
    return p * x;
  }
  double u = 1.0 + x;
  if (u == INFINITY || u == 0) return u == 0 ? -INFINITY : u;
  return om__log(u) + (x - (u - 1.0)) / u; /* the rounding of 1 + x, put back */
}

/* Whether y is an integer, and an odd one (every double of magnitude 2^53 and above is an even integer). */
static bool is_int(double y) { return y > 9.0e15 || y < -9.0e15 || y == (double)(int64_t)y; }
static bool is_odd(double y) { return y > -9.0e15 && y < 9.0e15 && y == (double)(int64_t)y && ((int64_t)y & 1); }

double om__pow(double x, double y) {
  /* C's special cases (C11 F.10.4.4), then e^(y log |x|) */
  if (y == 0 || x == 1) return 1.0;
  if (x != x || y != y) return NAN;
  double ax = x < 0 ? -x : x;
  if (y == INFINITY || y == -INFINITY) return ax == 1 ? 1.0 : (ax < 1) == (y > 0) ? 0.0 : INFINITY;
  bool odd = is_odd(y);
  if (x == 0 || ax == INFINITY) {
    bool big = (x == 0) == (y < 0); /* 0^-y and inf^y are infinite */
    double r = big ? INFINITY : 0.0;
    return odd && signbit(x) ? -r : r;
  }
  if (x < 0 && !is_int(y)) return NAN;
  double r = om__exp(y * om__log(ax));
  return x < 0 && odd ? -r : r;
}

/* d rounded to float once; beyond float's range, the infinity IEEE's conversion gives (spelled
 * out: C leaves converting an out-of-range value undefined). */
static float to_float(double d) {
  if (d > 3.4028235677973366e38) return INFINITY;
  if (d < -3.4028235677973366e38) return -INFINITY;
  return (float)d;
}

float om__expf(float x) { return to_float(exp_of(x, true)); }
float om__logf(float x) {
  if (x != x || x < 0) return NAN;
  if (x == 0) return -INFINITY;
  return x == INFINITY ? x : to_float(log_pos(x, 7)); /* to s^13: float needs no more (1e-11) */
}
float om__log1pf(float x) { return to_float(om__log1p(x)); }
/* e^x - 1: below 1e-3 in magnitude its Taylor series to x^5 (the next term is below 2e-18
 * relative: no cancellation near 0), else e^x - 1 in double (its error, 1e-16 / |e^x - 1| relative
 * at most 1e-13, is far below a float's half ulp), rounded once. */
float om__expm1f(float x) {
  double d = x;
  if (d > -1e-3 && d < 1e-3) {
    double p = 1.0 / 120.0;
    p = p * d + 1.0 / 24.0;
    p = p * d + 1.0 / 6.0;
    p = p * d + 0.5;
    p = p * d + 1.0;
    return (float)(p * d); /* -0 stays -0 */
  }
  return to_float(om__exp(d) - 1.0);
}
/* x^2 and x^3 (a square in a loss, gelu's tanh form written out) as products in double: x x is
 * exact there and x x x rounded once, so the float is the correctly rounded power, as the
 * general path's is (it is within 1e-16 of it), at the cost of two multiplies instead of a log
 * and an exp; the special values (zeros, infinities, NaN) come out as pow's. */
float om__powf(float x, float y) {
  if (y == 2.0f) return to_float((double)x * x);
  if (y == 3.0f) return to_float((double)x * x * x);
  return to_float(om__pow(x, y));
}

/* 1 / (1 + e^-x), with e^-|x| once on either side (the same bits as computing it twice). */
float om__sigmoidf(float x) {
  if (x >= 0) return 1.0f / (1.0f + om__expf(-x));
  float e = om__expf(x);
  return e / (1.0f + e);
}

/* tanh and erf: odd functions that round to 1 in float from a cut on, each f(x) = x P(u) / Q(u),
 * u = x^2 / s, one rational function in double on x clamped to [-cut, cut] (where it rounds to
 * +-1; NaN stays NaN), rounded to float once: odd by construction, so no sign to take off and put
 * back, and no exp and no branch, so that two lanes run as one.
 * tanh: degree 4 / 5, u = x^2 / 81, fitted by tools/rational_fit.c (`rational_fit tanh`) to
 * 1.05e-9 relative on [0, 9.1]; the tool runs every float below the cut (within 0.518 ulp of
 * tanh, never above 1) and checks that the cut rounds to 1.
 * erf: degree 6 / 6, u = x^2 / 16, fitted (relative error, iteratively reweighted least squares
 * on Chebyshev points, tools: numpy) to 1.3e-8 on [0, 4], so the float is within 0.63 ulp of erf
 * (a sweep of 620,000 floats against Python's math.erf); from 4 on, erf rounds to 1.
 * Coefficients from the highest power down. */
typedef struct odd_rational {
  const double *p, *q;
  int np, nq;        /* coefficient counts */
  double inv_s, cut; /* u = x x inv_s; x clamped to [-cut, cut] */
} odd_rational;
static const double TANH_P[] = {2.1688742678245565, 16.730594788613903, 26.267421874747829, 11.163006702024189, 0.99999999896242686};
static const double TANH_Q[] = {2.5447673858055855, 69.268531060108785, 223.12410114282252, 181.86868873846026, 38.163005880305889, 1.0};
static const double ERF_P[] = {-1.3568816004969981, -6.043957429575736, 14.865273671187511, 8.022972916641711,
                               12.08770399451676, 2.3391229723167526, 1.1283791674391324};
static const double ERF_Q[] = {-22.079526496174516, 18.04255059343945, 48.886815287029535, 46.30144941639133,
                               24.612842213674025, 7.406327236762625, 1.0};
static const odd_rational TANH = {TANH_P, TANH_Q, 5, 6, 1.0 / 81, 9.1};
static const odd_rational ERF = {ERF_P, ERF_Q, 7, 7, 1.0 / 16, 4.0};

static double poly(const double *c, int n, double u) {
  double r = c[0];
  for (int i = 1; i < n; i++) r = r * u + c[i];
  return r;
}

/* poly on two lanes: the same Horner steps. */
static inline __attribute__((always_inline)) v2d poly2(const double *c, int n, v2d u) {
  v2d r = {c[0], c[0]};
  for (int i = 1; i < n; i++) r = r * u + c[i];
  return r;
}

/* f(x) for one float (odd_rational4's operations on one lane). */
static inline __attribute__((always_inline)) float odd_rational1(const odd_rational *f, float x) {
  if (x != x) return x;
  double a = x > f->cut ? f->cut : x < -f->cut ? -f->cut : x, u = a * a * f->inv_s;
  return (float)(a * poly(f->p, f->np, u) / poly(f->q, f->nq, u));
}

/* ---- the float functions on arrays: four values at a time, as two pairs of double lanes ---- */
typedef float v4f __attribute__((vector_size(16)));
typedef float v2f __attribute__((vector_size(8)));
typedef int32_t v4i __attribute__((vector_size(16)));
/* where m, a else b, lane by lane (m all ones or all zeros) */
static inline v4f pick4(v4i m, v4f a, v4f b) { return (v4f)((m & (v4i)a) | (~m & (v4i)b)); }

/* A function of four floats at once: false (and y untouched) where a value is one its vectors do
 * not take; the caller then computes those four one by one. */
typedef bool (*group4_fn)(v4f x, v4f *y);

/* y[k] = f1(x[k]) for k < n (y may be x), f4 on each group of four: the last, short one padded
 * with ones (a value every f4 takes); lanes are independent, so the padding changes nothing.
 * f1 may be NULL when f4 takes every value. */
static inline __attribute__((always_inline)) void map4(const float *x, float *y, int64_t n, group4_fn f4, float (*f1)(float)) {
  int64_t k = 0;
  for (; k + 4 <= n; k += 4) {
    v4f in, out;
    memcpy(&in, x + k, sizeof in);
    if (f4(in, &out)) {
      memcpy(y + k, &out, sizeof out);
    } else {
      for (int j = 0; j < 4; j++) y[k + j] = f1(x[k + j]);
    }
  }
  if (k < n) {
    float in[4] = {1.0f, 1.0f, 1.0f, 1.0f}, out[4];
    for (int64_t j = k; j < n; j++) in[j - k] = x[j];
    v4f v, r = {0, 0, 0, 0}; /* f4 may return false without writing it */
    memcpy(&v, in, sizeof v);
    bool ok = f4(v, &r);
    memcpy(out, &r, sizeof out);
    for (int64_t j = k; j < n; j++) y[j] = ok ? out[j - k] : f1(x[j]);
  }
}

/* Four floats as two pairs of doubles, and back (each conversion exact, or rounded once). */
static inline void widen4(v4f x, v2d d[2]) {
  d[0] = __builtin_convertvector(__builtin_shufflevector(x, x, 0, 1), v2d);
  d[1] = __builtin_convertvector(__builtin_shufflevector(x, x, 2, 3), v2d);
}
/* In WASM one f32x4.demote_f64x2_zero per pair: the compiler's own narrowing of a v2d takes each
 * lane out, converts it and puts it back, a third of tanh's time. */
static inline v4f narrow4(const v2d d[2]) {
#ifdef __wasm_simd128__
  v128_t lo = wasm_f32x4_demote_f64x2_zero((v128_t)d[0]), hi = wasm_f32x4_demote_f64x2_zero((v128_t)d[1]);
  return (v4f)wasm_i64x2_shuffle(lo, hi, 0, 2);
#else
  v2f lo = __builtin_convertvector(d[0], v2f), hi = __builtin_convertvector(d[1], v2f);
  return __builtin_shufflevector(lo, hi, 0, 1, 2, 3);
#endif
}

/* x clamped to [-c, c], lane by lane, NaN kept: in WASM f64x2.pmin and pmax, one instruction each
 * (b < a ? b : a and a < b ? b : a, exactly the selects written out below; f64x2.min and max
 * order NaNs and zeros, in several). */
static inline v2d clamp2(v2d x, v2d c) {
#ifdef __wasm_simd128__
  return (v2d)wasm_f64x2_pmax(wasm_f64x2_pmin((v128_t)x, (v128_t)c), (v128_t)-c);
#else
  return pick2(x < -c, -c, pick2(x > c, c, x));
#endif
}

/* odd_rational1 on four values, two lanes at a time: every value takes it (a NaN is put back as it
 * came: WASM leaves the sign and payload of an arithmetic NaN open). */
static inline __attribute__((always_inline)) bool odd_rational4(const odd_rational *f, v4f x, v4f *y) {
  v2d d[2];
  widen4(x, d);
  for (int h = 0; h < 2; h++) {
    v2d a = clamp2(d[h], (v2d){f->cut, f->cut}), u = a * a * f->inv_s;
    d[h] = a * poly2(f->p, f->np, u) / poly2(f->q, f->nq, u);
  }
  *y = pick4(x != x, x, narrow4(d));
  return true;
}
static bool erf4(v4f x, v4f *y) { return odd_rational4(&ERF, x, y); }
static bool tanh4(v4f x, v4f *y) { return odd_rational4(&TANH, x, y); }

/* om__powf's products for the exponents 2 and 3 on four values, in double (exact for a square, one
 * rounding for a cube), each rounded to float once; false where a result is NaN or beyond float's
 * range, whose lanes om__powf then takes one by one (to_float's infinities). */
static inline bool narrow_in_range4(const v2d d[2], v4f *y) {
  const v2d top = {3.4028235677973366e38, 3.4028235677973366e38};
  v2i in = ((d[0] <= top) & (d[0] >= -top)) & ((d[1] <= top) & (d[1] >= -top));
  if (!(in[0] & in[1])) return false;
  *y = narrow4(d);
  return true;
}
static bool square4(v4f x, v4f *y) {
  v2d d[2];
  widen4(x, d);
  d[0] = d[0] * d[0], d[1] = d[1] * d[1];
  return narrow_in_range4(d, y);
}
static bool cube4(v4f x, v4f *y) {
  v2d d[2];
  widen4(x, d);
  d[0] = d[0] * d[0] * d[0], d[1] = d[1] * d[1] * d[1];
  return narrow_in_range4(d, y);
}
static float square1(float x) { return om__powf(x, 2.0f); }
static float cube1(float x) { return om__powf(x, 3.0f); }
void om__powf_n(const float *x, float e, float *y, int64_t n) {
  if (e == 2.0f) {
    map4(x, y, n, square4, square1);
  } else if (e == 3.0f) {
    map4(x, y, n, cube4, cube1);
  } else {
    for (int64_t k = 0; k < n; k++) y[k] = om__powf(x[k], e);
  }
}

/* om__sigmoidf's operations on four values of magnitude at most 700 (the range of exp_core2):
 * e = e^-|x| rounded to float, then 1 / (1 + e) or e / (1 + e) in float by x's sign. */
static bool sigmoid4(v4f x, v4f *y) {
  v4f m = (v4f)((v4i)x | (v4i){INT32_MIN, INT32_MIN, INT32_MIN, INT32_MIN}); /* -|x| */
  v4i in = m >= -700.0f;                                                       /* NaN: false */
  if (!(in[0] & in[1] & in[2] & in[3])) return false;
  v2d d[2];
  widen4(m, d);
  d[0] = exp_core2_poly(d[0], true), d[1] = exp_core2_poly(d[1], true);
  v4f e = narrow4(d), one = {1.0f, 1.0f, 1.0f, 1.0f};
  v4i pos = x >= 0.0f;
  *y = (v4f)((pos & (v4i)one) | (~pos & (v4i)e)) / (one + e);
  return true;
}

/* om__expf's operations on four values in [-700, 700] (exp_core2's range, where exp_of takes
 * exp_core) whose results are within float's range; else false, and om__expf takes them one by one
 * (to_float's infinities past 88.7). */
static bool exp4(v4f x, v4f *y) {
  v4i in = (x >= -700.0f) & (x <= 700.0f); /* NaN: false */
  if (!(in[0] & in[1] & in[2] & in[3])) return false;
  v2d d[2];
  widen4(x, d);
  d[0] = exp_core2_poly(d[0], true), d[1] = exp_core2_poly(d[1], true);
  return narrow_in_range4(d, y);
}

void om__expf_n(const float *x, float *y, int64_t n) { map4(x, y, n, exp4, om__expf); }

/* Fast mode's erf (docs/graph-runtime.md, "Modes"): a P(t) / Q(t), t = a^2 / 16, one rational of
 * degree 5 / 5 in float arithmetic, four lanes at a time, a third of om__erff_n's time. The
 * coefficients come from tools/rational_fit.c (relative error 1.9e-8 before rounding to float), which
 * also runs this function's operations on every float: they are within 7.2 ulp of erf (4.3e-7
 * relative; om__erff is within 0.63). From 3.9192059 on, where erf rounds to 1, it is 1.
 * Coefficients from the highest power down. */
static const float ERF_FAST_P[] = {2.15034223f, 18.6691132f, 15.4170532f, 13.5023623f, 3.0458262f, 1.12837911f};
static const float ERF_FAST_Q[] = {39.9481697f, 76.1639175f, 61.3000031f, 29.2075653f, 8.03261757f, 1.0f};

static inline v4f poly4(const float *c, int n, v4f u) {
  v4f r = {c[0], c[0], c[0], c[0]};
  for (int i = 1; i < n; i++) r = r * u + c[i];
  return r;
}

/* Every value: NaN gives NaN (through the arithmetic), zeros keep their sign. */
static bool erf_fast4(v4f x, v4f *y) {
  const v4f one = {1.0f, 1.0f, 1.0f, 1.0f};
  v4f a = (v4f)((v4i)x & 0x7fffffff), t = a * a * (1.0f / 16);
  v4f r = a * poly4(ERF_FAST_P, 6, t) / poly4(ERF_FAST_Q, 6, t);
  r = pick4((r > one) | (a >= 3.9192059f), one, r); /* r >= 0: the sign goes on as a bit */
  *y = (v4f)((v4i)r | ((v4i)x & INT32_MIN));
  return true;
}

/* ---- GELU (approximate 'none'): x Phi(x) = 0.5 x (1 + erf(a)) = 0.5 x erfc(b), a = x / sqrt 2,
 * b = -a. Below a = -0.5, 1 + erf(a) cancels (at x = -5 it keeps 3 of erf's bits; from x = -8 on
 * it is 0, where GELU is -4.9e-15), so there it is erfc(b) = e^(-b^2) g(b), g in two pieces:
 * g(b) = P(b) / Q(b) on [0.5, 4] (degree 5 / 5) and P(z) / Q(z) / b, z = 1 / b^2, on [4, 10.5]
 * (degree 2 / 3), fitted by tools/rational_fit.c (`rational_fit erfc_mid`, `erfc_far`: 4e-12 and
 * 2.5e-11 relative), which runs this evaluation on every float of each piece (within 0.500 ulp of
 * 0.5 x erfc(b) in long double). Past b = 10.5 GELU is below half the least float: 0 times x
 * (-0; -inf gives NaN, as PyTorch's x 0.5 (1 + erf) does). Above the cut, 0.5 x (1 + erf(a)) in
 * double with erf's rational (ERF, unrounded), rounded once. Coefficients from the highest power
 * down. ---- */
static const double ERFC_MID_P[] = {-2.5320982208129157e-07, 0.025003631280522395, 0.18813857963120045,
                                    0.6401918889868341, 1.1434498458584403, 1.0000003881904396};
static const double ERFC_MID_Q[] = {0.044304270468113187, 0.3336571237317269, 1.1551988294024749,
                                    2.2036572940981514, 2.2718335340372962, 1.0};
static const double ERFC_FAR_P[] = {3.1973901619565921, 3.3192916828692276, 0.56418958227533922};
static const double ERFC_FAR_Q[] = {1.138533708225441, 8.1089363524859142, 6.3832907128287362, 1.0};
#define GELU_TAIL_X -0.7071068f /* the tail: x below it, so b >= 0.5 */
#define SQRT1_2_D 0.70710678118654752

/* 0.5 x erfc(b), b = -x / sqrt 2, for two lanes (a lane with b below 0.5 gives a value the caller
 * does not use; NaN too). */
static inline __attribute__((always_inline)) v2d gelu_tail2(v2d x) {
  const v2d lo = {0.5, 0.5}, mid = {4.0, 4.0}, gone = {10.5, 10.5};
  v2d b = -(x * SQRT1_2_D);
  v2d c = pick2(b >= lo, pick2(b > gone, gone, b), lo); /* in [0.5, 10.5], NaN to 0.5 */
  v2d z = c * c, r = pick2(c < mid, poly2(ERFC_MID_P, 6, c) / poly2(ERFC_MID_Q, 6, c),
                           poly2(ERFC_FAR_P, 3, 1.0 / z) / poly2(ERFC_FAR_Q, 4, 1.0 / z) / c);
  v2d e = exp_core2(-z) * r;
  return x * 0.5 * pick2(b >= gone, (v2d){0.0, 0.0}, e);
}

/* head's values, with the lanes of x below GELU_TAIL_X replaced by gelu_tail2's, rounded once. */
static inline v4f with_gelu_tail(v4f x, v4f head) {
  v4i tail = x < GELU_TAIL_X;
  if (!(tail[0] | tail[1] | tail[2] | tail[3])) return head;
  v2d d[2];
  widen4(x, d);
  d[0] = gelu_tail2(d[0]), d[1] = gelu_tail2(d[1]);
  return pick4(tail, narrow4(d), head);
}

/* Exact mode: 0.5 x (1 + erf(a)) in double, erf's rational as om__erff's before its rounding,
 * then the tail; a NaN is put back as it came. */
static bool gelu4(v4f x, v4f *y) {
  v2d d[2];
  widen4(x, d);
  for (int h = 0; h < 2; h++) {
    v2d a = clamp2(d[h] * SQRT1_2_D, (v2d){ERF.cut, ERF.cut}), u = a * a * ERF.inv_s;
    d[h] = d[h] * 0.5 * (1.0 + a * poly2(ERF.p, ERF.np, u) / poly2(ERF.q, ERF.nq, u));
  }
  *y = pick4(x != x, x, with_gelu_tail(x, narrow4(d)));
  return true;
}

/* Fast mode: above the tail, fast erf's float rational and float arithmetic, x 0.5 (1 + erf(x
 * 0.70710678f)) (within about 8 ulp); the tail as exact mode's. */
static bool gelu_fast4(v4f x, v4f *y) {
  v4f t;
  erf_fast4(x * 0.70710678118654752f, &t);
  *y = with_gelu_tail(x, x * 0.5f * (1.0f + t));
  return true;
}

void om__gelu_erff_n(const float *x, float *y, int64_t n) { map4(x, y, n, gelu4, NULL); }
void om__gelu_erff_fast_n(const float *x, float *y, int64_t n) { map4(x, y, n, gelu_fast4, NULL); }

void om__erff_n(const float *x, float *y, int64_t n) { map4(x, y, n, erf4, NULL); }
void om__erff_fast_n(const float *x, float *y, int64_t n) { map4(x, y, n, erf_fast4, NULL); }
void om__tanhf_n(const float *x, float *y, int64_t n) { map4(x, y, n, tanh4, NULL); }
void om__sigmoidf_n(const float *x, float *y, int64_t n) { map4(x, y, n, sigmoid4, om__sigmoidf); }

float om__erff(float x) { return odd_rational1(&ERF, x); }
float om__tanhf(float x) { return odd_rational1(&TANH, x); }

/* ---- trigonometric and hyperbolic functions of floats: each computed in double (about 1e-16
 * relative) and rounded to float once, so within an ulp of the exact value (tests/c/test_math.c
 * sweeps them against libm's double functions, rounded) ---- */

#define PI_D 3.141592653589793
#define PIO2_D 1.5707963267948966
#define PIO4_D 0.7853981633974483

/* The bits of 2/pi, 24 at a time: 2/pi = sum c[i] 2^(-24 (i + 1)) (from mpmath at 400 bits). */
static const uint32_t TWO_OVER_PI_24[12] = {0xA2F983, 0x6E4E44, 0x1529FC, 0x2757D1, 0xF534DD, 0xC0DB62,
                                            0x95993C, 0x439041, 0xFE5163, 0xABDEBB, 0xC561B7, 0x246E3A};

/* v - 4 floor(v / 4) for a double v >= 0: v mod 4, exactly (every step is exact). */
static double mod4(double v) { return v - 4.0 * floor(v * 0.25); }

/* Reduces a finite float a >= pi/4 to y = a - (4 n + q) pi/2 in radians, |y| <= pi/4 (and a
 * hair), returning the quadrant q. a = m 2^e (m an integer below 2^24), so
 * a 2/pi = sum m c[i] 2^(e - 24 (i + 1)): the terms whose place is 4 or more are multiples of 4
 * and are skipped; four 24-bit digits of 2/pi from the first term kept give m times them exactly
 * in base 2^24 (integers), whose digits are exact doubles. The integer part is taken off the
 * leading digits' sum (exact), so the fraction left keeps its relative precision however
 * close a is to a multiple of pi/2 (a float comes within about 2^-30 of one). */
static int reduce_pio2(float a, double *y) {
  uint32_t u;
  memcpy(&u, &a, 4);
  int e = (int)(u >> 23) - 150; /* a >= pi/4 is normal */
  uint64_t m = (u & 0x7fffffu) | 0x800000u;
  int j0 = 0;
  while (e - 24 * (j0 + 1) >= 2) j0++;
  int place = e - 24 * (j0 + 1); /* the place of digit 1 below */
  uint64_t digit[5], acc = 0;
  for (int k = 3; k >= 0; k--) {
    acc += m * TWO_OVER_PI_24[j0 + k];
    digit[k + 1] = acc & 0xffffff;
    acc >>= 24;
  }
  digit[0] = acc;
  /* digit k's place is 2^w, w = place + 24 - 24 k: from the top, each (mod 4) is added to the
   * fraction so far, in [-1/2, 1/2], and the nearest integer taken off into the quadrant; the
   * sum is exact while it spans 53 bits (w >= -50), and past that no integer is left to take */
  double s = 0.0;
  int q = 0;
  for (int k = 0; k < 5; k++) {
    int w = place + 24 - 24 * k;
    if (w >= 2) continue;
    s += mod4((double)digit[k] * pow2(w));
    double n = floor(s + 0.5);
    s -= n;
    q += (int)n;
  }
  *y = s * PIO2_D;
  return q & 3;
}

/* sin y and cos y for |y| <= pi/4 (and a hair): Taylor polynomials in z = y^2 (the first term
 * left out is below 1e-21). */
static const double SIN_C[] = {-1.0 / 121645100408832000.0, 1.0 / 355687428096000.0, -1.0 / 1307674368000.0, 1.0 / 6227020800.0,
                               -1.0 / 39916800.0, 1.0 / 362880.0, -1.0 / 5040.0, 1.0 / 120.0, -1.0 / 6.0};
static const double COS_C[] = {-1.0 / 6402373705728000.0, 1.0 / 20922789888000.0, -1.0 / 87178291200.0, 1.0 / 479001600.0,
                               -1.0 / 3628800.0, 1.0 / 40320.0, -1.0 / 720.0, 1.0 / 24.0, -0.5};
static double sin_small(double y) {
  double z = y * y;
  return y + y * z * poly(SIN_C, 9, z);
}
static double cos_small(double y) {
  double z = y * y;
  return 1.0 + z * poly(COS_C, 9, z);
}

/* |x| as y in [-pi/4, pi/4] and its quadrant (x finite). */
static int reduced(float x, double *y) {
  float a = fabsf(x);
  if (a < (float)PIO4_D) {
    *y = a;
    return 0;
  }
  return reduce_pio2(a, y);
}

/* The angle's quadrant q is taken in integers (2 pi t / n = q pi / 2 + y, 4t - q n in (-n/2, n/2]),
 * so y is one product from exact and |y| <= pi/4; an angle on an axis gives exact 0 and 1. */
void om__sincos_turn(int64_t t, int64_t n, double *s, double *c) {
  int64_t q = (4 * t + n / 2) / n;
  double y = (double)(4 * t - q * n) * (PIO2_D / (double)n), sy = sin_small(y), cy = cos_small(y);
  switch (q & 3) {
    case 0: *s = sy, *c = cy; break;
    case 1: *s = cy, *c = -sy; break;
    case 2: *s = -sy, *c = -cy; break;
    default: *s = -cy, *c = sy; break;
  }
}

float om__sinf(float x) {
  if (x != x || isinf(x)) return NAN;
  double y;
  int q = reduced(x, &y);
  double r = q & 1 ? cos_small(y) : sin_small(y);
  r = q & 2 ? -r : r;
  return (float)(signbit(x) ? -r : r);
}

float om__cosf(float x) {
  if (x != x || isinf(x)) return NAN;
  double y;
  int q = reduced(x, &y);
  double r = q & 1 ? sin_small(y) : cos_small(y);
  return (float)(q == 1 || q == 2 ? -r : r);
}

float om__tanf(float x) {
  if (x != x || isinf(x)) return NAN;
  double y;
  int q = reduced(x, &y);
  double s = sin_small(y), c = cos_small(y), r = q & 1 ? -c / s : s / c;
  return to_float(signbit(x) ? -r : r);
}

/* atan t for t >= 0 (infinity too): atan t = pi/2 - atan(1/t) above 1, and pi/6 + atan u with
 * u = (t sqrt 3 - 1) / (t + sqrt 3) above tan(pi/12), so the series u - u^3/3 + ... runs on
 * |u| <= 0.268 (to u^31: the next term is below 1e-19). */
static double atan_pos(double t) {
  if (t > 1.0) return PIO2_D - atan_pos(1.0 / t);
  double base = 0.0;
  if (t > 0.2679491924311227) {
    t = (t * 1.7320508075688772 - 1.0) / (t + 1.7320508075688772);
    base = 0.5235987755982989;
  }
  double z = t * t, p = 0.0;
  for (int n = 15; n >= 1; n--) p = p * z + (n & 1 ? -1.0 : 1.0) / (2 * n + 1);
  return base + (t + t * z * p);
}

float om__atanf(float x) {
  if (x != x) return x;
  double r = atan_pos(fabs((double)x));
  return (float)(signbit(x) ? -r : r);
}

/* C's atan2 (and PyTorch's): the angle of (x, y), with its signed zeros and infinities. y / x in
 * double is exact enough (a float quotient neither overflows nor underflows a double). */
float om__atan2f(float y, float x) {
  if (x != x || y != y) return NAN;
  double ay = fabs((double)y), ax = fabs((double)x), a;
  if (isinf(ay) && isinf(ax)) a = PIO4_D;
  else if (ay == 0 && ax == 0) a = 0.0;
  else a = atan_pos(ay / ax);
  if (signbit(x)) a = PI_D - a;
  return (float)(signbit(y) ? -a : a);
}

/* asin x = atan(x / sqrt(1 - x^2)) and acos x = atan2(sqrt(1 - x^2), x), with 1 - x^2 as
 * (1 - x)(1 + x) (each factor exact in double). */
float om__asinf(float x) {
  double a = fabs((double)x);
  if (x != x || a > 1) return NAN;
  double r = atan_pos(a / sqrt((1.0 - a) * (1.0 + a)));
  return (float)(signbit(x) ? -r : r);
}

float om__acosf(float x) {
  double d = x;
  if (x != x || fabs(d) > 1) return NAN;
  double r = atan_pos(sqrt((1.0 - d) * (1.0 + d)) / fabs(d));
  return (float)(d < 0 ? PI_D - r : r);
}

/* sinh x: below 1 in magnitude its Taylor series (no cancellation; to x^21, the next term is
 * below 1e-19 relative), above it (e^a - e^-a) / 2. */
static const double SINH_C[] = {1.0 / 51090942171709440000.0, 1.0 / 121645100408832000.0, 1.0 / 355687428096000.0,
                                1.0 / 1307674368000.0, 1.0 / 6227020800.0, 1.0 / 39916800.0, 1.0 / 362880.0, 1.0 / 5040.0,
                                1.0 / 120.0, 1.0 / 6.0};
float om__sinhf(float x) {
  double a = fabs((double)x), r;
  if (a < 1.0) {
    double z = a * a;
    r = a + a * z * poly(SINH_C, 10, z);
  } else {
    double e = om__exp(a);
    r = (e - 1.0 / e) * 0.5;
  }
  return to_float(signbit(x) ? -r : r);
}

float om__coshf(float x) {
  double e = om__exp(fabs((double)x));
  return to_float((e + 1.0 / e) * 0.5);
}

/* asinh a = log(a + sqrt(a^2 + 1)) = log1p(a + a^2 / (1 + sqrt(a^2 + 1))), odd. */
float om__asinhf(float x) {
  double a = fabs((double)x);
  if (x != x || isinf(x)) return x;
  double r = om__log1p(a + a * a / (1.0 + sqrt(a * a + 1.0)));
  return (float)(signbit(x) ? -r : r);
}

/* acosh x = log1p(t + sqrt(t (x + 1))), t = x - 1 (exact in double), for x >= 1. */
float om__acoshf(float x) {
  double d = x;
  if (x != x || d < 1.0) return NAN;
  if (isinf(x)) return x;
  double t = d - 1.0;
  return (float)om__log1p(t + sqrt(t * (d + 1.0)));
}

/* atanh x = log1p(2a / (1 - a)) / 2, odd; +-1 give +-infinity. */
float om__atanhf(float x) {
  double a = fabs((double)x);
  if (x != x || a > 1) return NAN;
  double r = a == 1 ? INFINITY : 0.5 * om__log1p(2.0 * a / (1.0 - a));
  return (float)(signbit(x) ? -r : r);
}

/* ---- ONNX's narrower element types, held in float32 and int64 (docs/graph-runtime.md, "Element types") ---- */

static uint32_t f32_bits(float x) {
  uint32_t u;
  memcpy(&u, &x, 4);
  return u;
}
static float f32_from(uint32_t u) {
  float x;
  memcpy(&x, &u, 4);
  return x;
}

float om__round_f16(float x) {
  uint32_t u = f32_bits(x), sign = u & 0x80000000u, a = u & 0x7fffffffu;
  if (a >= 0x7f800000u) return x;                           /* infinities and NaN as they are */
  if (a >= 0x477ff000u) return f32_from(sign | 0x7f800000u); /* 65520 and up: past 65504 and the halfway point (ties to even: up) */
  if (a >= 0x38800000u) { /* a normal float16 (2^-14 and up): 10 of the 23 fraction bits, the dropped 13 rounded to nearest even */
    a += 0xfffu + ((a >> 13) & 1);
    return f32_from(sign | (a & ~0x1fffu));
  }
  /* a subnormal float16: a whole number of 2^-24. |x| 2^24 < 2^10 is exact, and adding then
   * subtracting 2^23 rounds it to an integer, ties to even (float32 keeps no fraction at 2^23). */
  float q = f32_from(a) * 16777216.0f;
  q = (q + 8388608.0f) - 8388608.0f;
  return f32_from(sign | f32_bits(q * 5.9604644775390625e-8f));
}

float om__round_bf16(float x) {
  uint32_t u = f32_bits(x);
  if ((u & 0x7fffffffu) > 0x7f800000u) return f32_from(u | 0x00400000u); /* NaN: quiet, its top payload kept */
  u += 0x7fffu + ((u >> 16) & 1); /* the dropped 16 bits to nearest even; past bfloat16's largest gives infinity */
  return f32_from(u & 0xffff0000u);
}

/* The float8 types by ONNX number - 17 (FLOAT8E4M3FN, E4M3FNUZ, E5M2, E5M2FNUZ): fraction bits,
 * the smallest normal exponent, the largest finite value; FNUZ: one zero and one NaN (bits 0x80),
 * no infinities; E5M2 alone has infinities (docs/graph-runtime.md, "Element types"). */
static const struct f8_format {
  int mbits, emin;
  float max;
  bool fnuz, inf;
} F8[4] = {{3, -6, 448.0f, false, false}, {3, -7, 240.0f, true, false}, {2, -14, 57344.0f, false, true}, {2, -15, 57344.0f, true, false}};

/* 2^k as a float32, for k of a normal float32. */
static float pow2f(int k) { return f32_from((uint32_t)(k + 127) << 23); }

float om__round_f8(float x, int type, bool saturate) {
  const struct f8_format *f = &F8[type - 17];
  uint32_t u = f32_bits(x), sign = u & 0x80000000u, a = u & 0x7fffffffu, nan = (f->fnuz ? 0 : sign) | 0x7fc00000u;
  if (a > 0x7f800000u) return f32_from(nan);
  if (a == 0x7f800000u) /* an infinity: the largest finite value when saturating (in FNUZ too, as ONNX's reference) */
    return saturate ? f32_from(sign | f32_bits(f->max)) : f->inf ? x : f32_from(nan);
  float r;
  if (a >= f32_bits(pow2f(f->emin))) { /* normal: mbits of the 23 fraction bits, the dropped ones rounded to nearest even */
    int drop = 23 - f->mbits;
    a += (1u << (drop - 1)) - 1 + ((a >> drop) & 1);
    r = f32_from(a & ~((1u << drop) - 1));
  } else { /* subnormal: a whole number of 2^(emin - mbits), rounded to an integer (ties to even) at 2^23 as om__round_f16 */
    float scale = pow2f(f->mbits - f->emin), q = f32_from(a) * scale;
    q = (q + 8388608.0f) - 8388608.0f;
    r = q / scale;
  }
  if (r > f->max) return saturate ? f32_from(sign | f32_bits(f->max)) : f->inf ? f32_from(sign | 0x7f800000u) : f32_from(nan);
  return f32_from((r == 0 && f->fnuz ? 0 : sign) | f32_bits(r)); /* FNUZ has no -0 */
}

float om__f8_to_f32(uint8_t b, int type) {
  const struct f8_format *f = &F8[type - 17];
  int ebits = 7 - f->mbits, e = (b & 0x7f) >> f->mbits, frac = b & ((1 << f->mbits) - 1);
  uint32_t sign = (uint32_t)(b & 0x80) << 24;
  if (f->fnuz ? b == 0x80 : f->inf ? e == (1 << ebits) - 1 && frac : (b & 0x7f) == 0x7f) return f32_from(sign | 0x7fc00000u);
  if (f->inf && e == (1 << ebits) - 1) return f32_from(sign | 0x7f800000u);
  float v = e ? (float)((1 << f->mbits) + frac) * pow2f(e - 1 + f->emin - f->mbits) : (float)frac * pow2f(f->emin - f->mbits); /* exact */
  return f32_from(sign | f32_bits(v));
}

int64_t om__wrap_int(int64_t v, int bits, bool is_signed) {
  uint64_t m = (uint64_t)v & ((UINT64_C(1) << bits) - 1); /* the value modulo 2^bits, 0 <= m < 2^bits */
  uint64_t top = UINT64_C(1) << (bits - 1);
  return is_signed && (m & top) ? -(int64_t)((UINT64_C(1) << bits) - m) : (int64_t)m; /* two's complement's upper half is negative */
}

float om__f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, f = h & 0x3ffu;
  if (e == 0x1f) return f32_from(sign | 0x7f800000u | (f << 13)); /* infinities and NaN (its payload kept) */
  if (e) return f32_from(sign | ((e + 112) << 23) | (f << 13));  /* normal: the exponent rebiased from 15 to 127 */
  return f32_from(sign | f32_bits((float)f * 5.9604644775390625e-8f)); /* zero and subnormals: f 2^-24, exact */
}
