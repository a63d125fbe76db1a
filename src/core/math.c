/* The library's own exp, log, log1p, expm1, tanh, erf and pow (docs/graph-runtime.md, "Modes"):
 * the platform's libm differs between machines (glibc natively, musl in WASM) in the last bits,
 * so every kernel calls these instead, and the same inputs give the same bits everywhere. They
 * use only IEEE double arithmetic (+, -, *, /, correctly rounded on every machine the library
 * builds for, with -ffp-contract=off so nothing is fused) and integer operations on the bits:
 * range reduction, then a polynomial or a series whose terms are fixed, summed in a fixed
 * order. The double functions are good to about 1e-16 relative; the float ones compute in double
 * and round once, so they are within an ulp of the exact value (tests/c/test_math.c checks
 * both against libm over millions of points). */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "internal.h"

#define LN2_HI 6.93147180369123816490e-01 /* its last 11 bits are 0: k * LN2_HI is exact for |k| < 2048 */
#define LN2_LO 1.90821492927058770002e-10
#define LOG2E 1.44269504088896338700
#define SQRT1_2 0.70710678118654752440

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
static double pow2(int k) { return from_bits((uint64_t)(k + 1023) << 52); }

double om__exp(double x) {
  if (x != x) return x;
  if (x > 709.782712893384) return INFINITY;
  if (x < -745.2) return 0.0;
  /* x = k ln2 + r, |r| <= ln2 / 2 */
  double t = x * LOG2E;
  int k = (int)(t >= 0 ? t + 0.5 : t - 0.5);
  double r = (x - k * LN2_HI) - k * LN2_LO;
  /* e^r by Taylor to r^13 (|r| <= 0.347: the next term is below 4e-18), Horner from the top */
  double p = 1.0 / 6227020800.0;
  static const double inv_fact[] = {1.0 / 479001600.0, 1.0 / 39916800.0, 1.0 / 3628800.0, 1.0 / 362880.0, 1.0 / 40320.0,
                                    1.0 / 5040.0, 1.0 / 720.0, 1.0 / 120.0, 1.0 / 24.0, 1.0 / 6.0, 0.5, 1.0, 1.0};
  for (int i = 0; i < 13; i++) p = p * r + inv_fact[i];
  /* times 2^k, in two steps where 2^k alone is not a normal double */
  if (k > 1023) return p * pow2(k - 1023) * pow2(1023);
  if (k < -1021) return p * pow2(k + 1000) * pow2(-1000);
  return p * pow2(k);
}

double om__expm1(double x) {
  if (!(x > -0.35 && x < 0.35)) return x != x ? x : om__exp(x) - 1.0; /* no cancellation to fear out here */
  /* x + x^2/2! + ... + x^15/15!: the terms shrink by |x| / n, no cancellation */
  double p = 1.0 / 1307674368000.0;
  static const double inv_fact[] = {1.0 / 87178291200.0, 1.0 / 6227020800.0, 1.0 / 479001600.0, 1.0 / 39916800.0,
                                    1.0 / 3628800.0, 1.0 / 362880.0, 1.0 / 40320.0, 1.0 / 5040.0, 1.0 / 720.0,
                                    1.0 / 120.0, 1.0 / 24.0, 1.0 / 6.0, 0.5, 1.0};
  for (int i = 0; i < 14; i++) p = p * x + inv_fact[i];
  return p * x;
}

double om__log(double x) {
  if (x != x || x < 0) return NAN;
  if (x == 0) return -INFINITY;
  if (x == INFINITY) return x;
  int e = 0;
  if (x < 2.2250738585072014e-308) x *= 18014398509481984.0, e = -54; /* subnormal: times 2^54 */
  uint64_t u = bits(x);
  e += (int)(u >> 52) - 1023;
  double m = from_bits((u & 0x000fffffffffffffull) | 0x3ff0000000000000ull); /* in [1, 2) */
  if (m > 1.4142135623730951) m *= 0.5, e++;                               /* in [sqrt(1/2), sqrt(2)) */
  /* log m = 2 atanh(s), s = (m - 1) / (m + 1), |s| <= 0.1716: s + s^3/3 + ... + s^23/23 */
  double s = (m - 1.0) / (m + 1.0), s2 = s * s, p = 1.0 / 23.0;
  for (int n = 21; n >= 1; n -= 2) p = p * s2 + 1.0 / n;
  double lm = 2.0 * s * p;
  return e * LN2_HI + (lm + e * LN2_LO);
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

double om__tanh(double x) {
  if (x != x) return x;
  double a = x < 0 ? -x : x;
  if (a > 20) return x < 0 ? -1.0 : 1.0;
  if (a < 1e-9) return x; /* tanh x = x - x^3/3: the correction is below 1e-18 x */
  double em = om__expm1(2 * a), t = em / (em + 2.0);
  return x < 0 ? -t : t;
}

double om__erf(double x) {
  if (x != x || x == 0) return x; /* NaN, and zeros keep their sign */
  double a = x < 0 ? -x : x, r;
  if (a >= 6) {
    r = 1.0; /* erfc(6) < 3e-17 */
  } else if (a < 2.5) {
    /* 2/sqrt(pi) * sum (-1)^n x^(2n+1) / (n! (2n + 1)), until a term is below 1e-17 of x */
    double x2 = a * a, term = a, sum = a;
    for (int n = 1; n < 90; n++) {
      term *= -x2 / n;
      double add = term / (2 * n + 1);
      sum += add;
      if ((add < 0 ? -add : add) < 1e-17 * a) break;
    }
    r = sum * 1.1283791670955125739;
  } else {
    /* erfc(a) = e^(-a^2) / sqrt(pi) / (a + (1/2) / (a + 1 / (a + (3/2) / (a + 2 / ...)))),
     * evaluated from depth 60 up */
    double f = a;
    for (int k = 60; k >= 1; k--) f = a + (k * 0.5) / f;
    r = 1.0 - om__exp(-a * a) * 0.56418958354775628695 / f;
  }
  return x < 0 ? -r : r;
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

float om__expf(float x) { return to_float(om__exp(x)); }
float om__logf(float x) { return to_float(om__log(x)); }
float om__log1pf(float x) { return to_float(om__log1p(x)); }
float om__tanhf(float x) { return to_float(om__tanh(x)); }
float om__erff(float x) { return to_float(om__erf(x)); }
float om__powf(float x, float y) { return to_float(om__pow(x, y)); }
