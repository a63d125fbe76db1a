/* The library's own math functions (src/core/math.c): within 2 ulps of the platform's libm over
 * about a million floats each (glibc natively, musl in WASM: both are within an ulp of the exact
 * value), C's special cases, and the same bits on every machine (a hash of their outputs on a
 * fixed sweep, pinned: this test runs natively and in WASM). */
#include <float.h>
#include <stdlib.h>

#include "internal.h"
#include "om_test.h"

static float from_u32(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}
static uint32_t to_u32(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}

/* Distance in ulps between two floats of the same sign (infinite when they differ otherwise). */
static double ulps(float a, float b) {
  if (a == b || (a != a && b != b)) return 0;
  if (a != a || b != b || (a < 0) != (b < 0) || isinf(a) || isinf(b)) return INFINITY;
  int64_t ia = to_u32(fabsf(a)), ib = to_u32(fabsf(b));
  return (double)llabs(ia - ib);
}

typedef float (*f1)(float);
static float lib_expf(float x) { return expf(x); }
static float lib_logf(float x) { return logf(x); }
static float lib_log1pf(float x) { return log1pf(x); }
static float lib_tanhf(float x) { return tanhf(x); }
static float lib_tanh_rounded(float x) { return (float)tanh(x); } /* within half an ulp and a hair of tanh */
static float lib_erff(float x) { return erff(x); }

/* libm's double functions rounded to float: within half an ulp and a hair of the exact value. */
#define ROUNDED(name) \
  static float lib_##name(float x) { return (float)name((double)x); }
ROUNDED(sin)
ROUNDED(cos)
ROUNDED(tan)
ROUNDED(asin)
ROUNDED(acos)
ROUNDED(atan)
ROUNDED(sinh)
ROUNDED(cosh)
ROUNDED(asinh)
ROUNDED(acosh)
ROUNDED(atanh)
ROUNDED(expm1)

/* Every 4099th float bit pattern (about a million, both signs, all exponents) in [lo, hi]: ours
 * within `most` ulps of theirs. */
static void sweep(const char *name, f1 ours, f1 theirs, float lo, float hi, double most) {
  double worst = 0;
  float at = 0;
  for (uint64_t u = 0; u < (1ull << 32); u += 4099) {
    float x = from_u32((uint32_t)u);
    if (x != x || x < lo || x > hi) continue;
    double d = ulps(ours(x), theirs(x));
    if (d > worst) worst = d, at = x;
  }
  if (worst > most) FAILED("%s: %g ulps from libm at %.9g (ours %.9g, libm %.9g)", name, worst, at, ours(at), theirs(at));
}

TEST(floats_match_libm) {
  sweep("expf", om__expf, lib_expf, -FLT_MAX, FLT_MAX, 2);
  sweep("logf", om__logf, lib_logf, 0, FLT_MAX, 2);
  sweep("log1pf", om__log1pf, lib_log1pf, -1, FLT_MAX, 2);
  sweep("expm1f (double expm1, rounded)", om__expm1f, lib_expm1, -FLT_MAX, FLT_MAX, 1);
  sweep("tanhf", om__tanhf, lib_tanhf, -FLT_MAX, FLT_MAX, 2);
  /* the rational is within 0.518 ulp of tanh (tools/rational_fit.c runs every float) */
  sweep("tanhf (double tanh, rounded)", om__tanhf, lib_tanh_rounded, -FLT_MAX, FLT_MAX, 1);
  sweep("erff", om__erff, lib_erff, -FLT_MAX, FLT_MAX, 2);
}

/* The trigonometric and hyperbolic functions: within an ulp of libm's double ones rounded to
 * float (so of the exact value) on every 4099th float of their domains, huge arguments of sin,
 * cos and tan included (the range reduction), and on every float in [-8, 8] near a multiple of
 * pi/2 but 0; atan2 on a grid of both signs and all magnitudes. */
TEST(trig_and_hyperbolic_match_libm) {
  sweep("sinf", om__sinf, lib_sin, -FLT_MAX, FLT_MAX, 1);
  sweep("cosf", om__cosf, lib_cos, -FLT_MAX, FLT_MAX, 1);
  sweep("tanf", om__tanf, lib_tan, -FLT_MAX, FLT_MAX, 1);
  sweep("asinf", om__asinf, lib_asin, -1, 1, 1);
  sweep("acosf", om__acosf, lib_acos, -1, 1, 1);
  sweep("atanf", om__atanf, lib_atan, -FLT_MAX, FLT_MAX, 1);
  sweep("sinhf", om__sinhf, lib_sinh, -FLT_MAX, FLT_MAX, 1);
  sweep("coshf", om__coshf, lib_cosh, -FLT_MAX, FLT_MAX, 1);
  sweep("asinhf", om__asinhf, lib_asinh, -FLT_MAX, FLT_MAX, 1);
  sweep("acoshf", om__acoshf, lib_acosh, 1, FLT_MAX, 1);
  sweep("atanhf", om__atanhf, lib_atanh, -1, 1, 1);
  f1 ours[3] = {om__sinf, om__cosf, om__tanf}, theirs[3] = {lib_sin, lib_cos, lib_tan};
  for (int k = 0; k < 3; k++) /* every float within 2^-10 of q pi/2, 0 < |q| <= 5 */
    for (int q = -5; q <= 5; q++) {
      if (!q) continue; /* every float near 0: the sweep's business */
      float at = (float)(q * 1.5707963267948966);
      for (float x = at - 0x1p-10f; x < at + 0x1p-10f; x = nextafterf(x, INFINITY))
        if (ulps(ours[k](x), theirs[k](x)) > 1) {
          FAILED("%s near %d pi/2 at %.9g: ours %.9g, libm %.9g", k == 0 ? "sinf" : k == 1 ? "cosf" : "tanf", q, x, ours[k](x), theirs[k](x));
          return;
        }
    }
  for (uint64_t i = 0; i < (1ull << 32); i += 2000003)
    for (uint64_t j = 0; j < (1ull << 32); j += 1900009) {
      float y = from_u32((uint32_t)i), x = from_u32((uint32_t)j), want = (float)atan2(y, x);
      if (ulps(om__atan2f(y, x), want) > 1 || (want == want && signbit(om__atan2f(y, x)) != signbit(want))) {
        FAILED("atan2f(%.9g, %.9g): ours %.9g, libm %.9g", y, x, om__atan2f(y, x), want);
        return;
      }
    }
  double worst = 0; /* powf on a grid of bases and exponents */
  for (int i = 0; i < 700; i++)
    for (int j = 0; j < 700; j++) {
      float x = from_u32(0x00800000u + (uint32_t)i * 6091u * 1033u % 0x7f000000u), y = (j - 350) * 0.173f; /* finite bases */
      double d = ulps(om__powf(x, y), powf(x, y));
      if (d > worst) worst = d;
      if (d > 2) FAILED("powf(%.9g, %.9g): ours %.9g, libm %.9g", x, y, om__powf(x, y), powf(x, y));
      if (d > 2) return;
    }
}

TEST(doubles_match_libm) {
  uint64_t state = 7;
  double worst[3] = {0};
  for (int i = 0; i < 200000; i++) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    double u = (double)(state >> 11) / 9007199254740992.0; /* [0, 1) */
    double x = (u - 0.5) * 1400, y = u * 50, z = (u - 0.5) * 12;
    double got[3] = {om__exp(x), om__log(y * y * y + 1e-300), om__log1p(z * z * z - 1 + 1e-9)};
    double want[3] = {exp(x), log(y * y * y + 1e-300), log1p(z * z * z - 1 + 1e-9)};
    for (int k = 0; k < 3; k++) {
      double e = got[k] == want[k] ? 0 : fabs(got[k] - want[k]) / fmax(fabs(want[k]), 1e-300);
      if (e > worst[k]) worst[k] = e;
    }
  }
  const char *names[3] = {"exp", "log", "log1p"};
  for (int k = 0; k < 3; k++)
    if (worst[k] > 2e-15) FAILED("%s: relative error %g from libm", names[k], worst[k]);
}

TEST(special_cases) {
  CHECK(isnan(om__expf(NAN)) && om__expf(INFINITY) == INFINITY && om__expf(-INFINITY) == 0 && om__expf(0) == 1);
  CHECK(om__expf(89) == INFINITY && om__expf(-104) == 0 && om__expf(-100) > 0); /* overflow; a subnormal */
  CHECK(om__logf(0) == -INFINITY && isnan(om__logf(-1)) && om__logf(1) == 0 && om__logf(INFINITY) == INFINITY);
  CHECK(om__logf(from_u32(1)) < -103 && om__logf(from_u32(1)) > -104); /* the smallest subnormal */
  CHECK(om__log1pf(-1) == -INFINITY && isnan(om__log1pf(-2)) && om__log1pf(1e-30f) == 1e-30f);
  CHECK(om__expm1f(INFINITY) == INFINITY && om__expm1f(-INFINITY) == -1 && om__expm1f(-200) == -1 && om__expm1f(89) == INFINITY);
  CHECK(om__expm1f(1e-30f) == 1e-30f && signbit(om__expm1f(-0.0f)) && isnan(om__expm1f(NAN)));
  CHECK(om__expm1f(1e-7f) == (float)expm1((double)1e-7f) && om__expm1f(-2e-3f) == (float)expm1((double)-2e-3f)); /* both sides of the series' cut */
  CHECK(om__tanhf(30) == 1 && om__tanhf(-30) == -1 && om__tanhf(1e-20f) == 1e-20f && isnan(om__tanhf(NAN)));
  CHECK(signbit(om__tanhf(-0.0f)) && !signbit(om__tanhf(0.0f)));
  CHECK(om__sigmoidf(INFINITY) == 1 && om__sigmoidf(-INFINITY) == 0 && om__sigmoidf(0) == 0.5f && isnan(om__sigmoidf(NAN)));
  CHECK(om__sigmoidf(-200) == 0 && om__sigmoidf(-100) > 0 && om__sigmoidf(20) == 1 && om__sigmoidf(-1) + om__sigmoidf(1) == 1);
  CHECK(om__erff(10) == 1 && om__erff(-10) == -1 && om__erff(0) == 0 && isnan(om__erff(NAN)));
  CHECK(om__powf(NAN, 0) == 1 && om__powf(1, NAN) == 1 && isnan(om__powf(-2, 0.5f)) && om__powf(-2, 3) == -8);
  CHECK(om__powf(0, -1) == INFINITY && om__powf(-0.0f, -1) == -INFINITY && signbit(om__powf(-0.0f, 3)) && om__powf(0, 2) == 0);
  CHECK(om__powf(-1, INFINITY) == 1 && om__powf(0.5f, INFINITY) == 0 && om__powf(2, -INFINITY) == 0 && om__powf(2, INFINITY) == INFINITY);
  CHECK(om__powf(-INFINITY, 3) == -INFINITY && om__powf(-INFINITY, 2) == INFINITY && signbit(om__powf(-INFINITY, -3)));
  const float pi = 3.14159265f, pio2 = 1.57079633f, pio4 = 0.785398163f;
  CHECK(isnan(om__sinf(INFINITY)) && isnan(om__cosf(-INFINITY)) && isnan(om__tanf(NAN)) && signbit(om__sinf(-0.0f)) && om__cosf(0) == 1);
  CHECK(isnan(om__asinf(1.0000001f)) && isnan(om__acosf(-2)) && om__asinf(1) == pio2 && om__acosf(-1) == pi && om__acosf(1) == 0);
  CHECK(om__atanf(INFINITY) == pio2 && om__atanf(-INFINITY) == -pio2 && signbit(om__atanf(-0.0f)) && isnan(om__atanf(NAN)));
  CHECK(om__atan2f(0.0f, 0.0f) == 0 && !signbit(om__atan2f(0.0f, 0.0f)) && signbit(om__atan2f(-0.0f, 0.0f)));
  CHECK(om__atan2f(0.0f, -0.0f) == pi && om__atan2f(-0.0f, -0.0f) == -pi && om__atan2f(-0.0f, -1) == -pi && om__atan2f(1, 0) == pio2);
  CHECK(om__atan2f(-1, -0.0f) == -pio2 && om__atan2f(INFINITY, INFINITY) == pio4 && om__atan2f(-INFINITY, -INFINITY) == -3 * pio4);
  CHECK(om__atan2f(1, -INFINITY) == pi && signbit(om__atan2f(-1, INFINITY)) && isnan(om__atan2f(NAN, 1)) && isnan(om__atan2f(1, NAN)));
  CHECK(om__sinhf(100) == INFINITY && om__sinhf(-100) == -INFINITY && om__coshf(-100) == INFINITY && signbit(om__sinhf(-0.0f)));
  CHECK(om__asinhf(-INFINITY) == -INFINITY && signbit(om__asinhf(-0.0f)) && isnan(om__acoshf(0.5f)) && om__acoshf(1) == 0);
  CHECK(om__acoshf(INFINITY) == INFINITY && om__atanhf(1) == INFINITY && om__atanhf(-1) == -INFINITY && isnan(om__atanhf(1.5f)));
  CHECK(om__powf(2, 200) == INFINITY && om__powf(2, -200) == 0 && om__powf(-2, 1e30f) == INFINITY);
}

/* x^2 and x^3 by products in double: within an ulp of libm's powf and of the general path on a
 * sweep of every 4099th float (NaN and zeros of both signs, infinities, subnormals and overflow
 * included), and the correctly rounded power where glibc's powf is not: a square that is exactly
 * halfway between two floats goes to the even one. */
TEST(square_and_cube_are_the_rounded_powers) {
  int off_libm = 0, off_general = 0;
  for (uint64_t u = 0; u < (1ull << 32); u += 4099) {
    float x = from_u32((uint32_t)u);
    for (float y = 2; y <= 3; y++) {
      float ours = om__powf(x, y), lib = powf(x, y), general = (float)om__pow(x, y);
      if (fabsf(general) > FLT_MAX && fabs(om__pow(x, y)) <= FLT_MAX) general = om__pow(x, y) > 0 ? INFINITY : -INFINITY;
      off_libm += ulps(ours, lib) > 1;
      off_general += ulps(ours, general) > 1;
    }
  }
  if (off_libm) FAILED("%d squares or cubes more than an ulp from libm's powf", off_libm);
  if (off_general) FAILED("%d squares or cubes more than an ulp from the general path", off_general);
  CHECK(om__powf(0x1.0c3p-62f, 2) == 0x1.18f488p-124f); /* exactly 0x1.18f489p-124: the tie to even */
  CHECK(signbit(om__powf(-0.0f, 3)) && !signbit(om__powf(-0.0f, 2)) && isnan(om__powf(NAN, 3)) && om__powf(-INFINITY, 3) == -INFINITY);
  CHECK(om__powf(1e13f, 3) == INFINITY && om__powf(-1e13f, 3) == -INFINITY && om__powf(1e-20f, 3) == 0 && om__powf(3e-15f, 3) > 0);
}

/* om__exp_n (two lanes at a time, softmax's) is om__exp, bit for bit: a sweep over the whole
 * range and past both ends, NaN and the infinities, lanes that take the vector path next to
 * ones that do not, and an odd count. */
TEST(exp_n_is_exp_bit_for_bit) {
  enum { N = 200001 };
  static double x[N], y[N];
  for (int k = 0; k < N; k++) x[k] = -760.0 + 1480.0 * k / (N - 1) + (k % 7) * 1e-9;
  x[10] = NAN, x[11] = INFINITY, x[12] = -INFINITY, x[13] = 700, x[14] = -700, x[15] = 700.0000001, x[16] = -0.0;
  memcpy(y, x, sizeof x);
  om__exp_n(y, N);
  int bad = 0;
  for (int k = 0; k < N; k++) {
    double e = om__exp(x[k]);
    if (memcmp(&e, &y[k], sizeof e) && bad++ < 5) FAILED("exp_n(%.17g) = %.17g, exp %.17g", x[k], y[k], e);
  }
}

/* The array versions (four at a time) are the float functions, bit for bit: values in every
 * branch (erf's rational and past it at |x| >= 4; tanh's and past it at |x| >= 9.1; sigmoid on both signs and past exp's vector range at 700; exp
 * past float's range at 88.7) in one group of four, zeros of
 * both signs, NaN, the infinities, subnormals, counts that are not a multiple of 4, and in place. */
static void check_array_version(const char *name, void (*fn)(const float *, float *, int64_t), float (*f1)(float)) {
  enum { N = 100003 };
  static float x[N], y[N];
  for (int k = 0; k < N; k++) {
    float scale = k % 3 == 0 ? 2.5f : k % 3 == 1 ? 12.0f : 1e-3f;
    x[k] = scale * ((float)k / N * 2 - 1) + (k % 5 == 0 ? 4.0f : 0.0f) + (k % 11 == 0 ? -701.0f : 0.0f);
  }
  x[20] = 0.0f, x[21] = -0.0f, x[22] = NAN, x[23] = 1.0f, x[24] = -1.0f, x[25] = 0.99999994f;
  x[26] = INFINITY, x[27] = -INFINITY, x[28] = 1e-40f, x[29] = -FLT_MAX, x[30] = 4.0f, x[31] = -3.9999998f;
  x[32] = 9.1f, x[33] = -9.09999943f, x[34] = 10.0f, x[35] = -10.000001f, x[36] = 700.0f, x[37] = -700.00006f;
  x[38] = 88.72283f, x[39] = 88.72284f, x[40] = -103.5f, x[41] = -87.5f; /* exp: float's largest, past it, subnormal, normal */
  for (int64_t n = N - 3; n <= N; n++) {
    memset(y, 0, sizeof y);
    fn(x, y, n);
    int bad = 0;
    for (int64_t k = 0; k < n; k++) {
      float e = f1(x[k]);
      if (memcmp(&e, &y[k], sizeof e) && bad++ < 5) FAILED("%s_n(%.9g) = %.9g, %s %.9g", name, x[k], y[k], name, e);
    }
    if (n < N) CHECK(y[n] == 0.0f && !signbit(y[n])); /* nothing written past n */
  }
  static float z[N];
  memcpy(z, x, sizeof x);
  fn(z, z, N); /* in place */
  CHECK(!memcmp(z, y, sizeof z));
}

/* om__powf_n at the exponents it takes four at a time (2, 3: past float's range at FLT_MAX) and one it does not. */
static void square_n(const float *x, float *y, int64_t n) { om__powf_n(x, 2.0f, y, n); }
static float square(float x) { return om__powf(x, 2.0f); }
static void cube_n(const float *x, float *y, int64_t n) { om__powf_n(x, 3.0f, y, n); }
static float cube(float x) { return om__powf(x, 3.0f); }
static void pow_n(const float *x, float *y, int64_t n) { om__powf_n(x, 1.37f, y, n); }
static float pow_1_37(float x) { return om__powf(x, 1.37f); }

TEST(array_versions_are_bit_for_bit) {
  check_array_version("expf", om__expf_n, om__expf);
  check_array_version("erff", om__erff_n, om__erff);
  check_array_version("tanhf", om__tanhf_n, om__tanhf);
  check_array_version("sigmoidf", om__sigmoidf_n, om__sigmoidf);
  check_array_version("square", square_n, square);
  check_array_version("cube", cube_n, cube);
  check_array_version("pow 1.37", pow_n, pow_1_37);
}

/* Fast mode's erf (om__erff_fast_n, float arithmetic): within 7 ulp of erf (libm's double erf,
 * rounded) on every 4099th float, the special values, the last short group, in place; and the
 * same bits natively and in WASM (a hash of the sweep, pinned). */
TEST(fast_erf) {
  enum { N = 1 << 20 };
  float *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y);
  CHECK(x && y);
  int64_t n = 0;
  for (uint64_t u = 0; u < (1ull << 32); u += 4099) x[n++] = from_u32((uint32_t)u);
  om__erff_fast_n(x, y, n);
  double worst = 0;
  float at = 0;
  uint64_t h = 14695981039346656037ull;
  for (int64_t k = 0; k < n; k++) {
    double d = ulps(y[k], (float)erf(x[k]));
    if (d > worst) worst = d, at = x[k];
    uint32_t b = y[k] != y[k] ? 0x7fc00000u : to_u32(y[k]);
    for (int q = 0; q < 4; q++) h = (h ^ (b >> (8 * q) & 0xff)) * 1099511628211ull;
  }
  if (worst > 7) FAILED("fast erf: %g ulps from erf at %.9g", worst, at);
  if (h != 0x2e69ee16368f6bcaull) FAILED("fast erf: hash %#llx", (unsigned long long)h);
  float sp[7] = {NAN, 0.0f, -0.0f, INFINITY, -INFINITY, 3.9192059f, -FLT_MAX}, r[7];
  om__erff_fast_n(sp, r, 7); /* a group of four, then three padded */
  CHECK(isnan(r[0]) && r[1] == 0 && !signbit(r[1]) && r[2] == 0 && signbit(r[2]));
  CHECK(r[3] == 1 && r[4] == -1 && r[5] == 1 && r[6] == -1);
  memcpy(y, x, sizeof(float) * 11);
  om__erff_fast_n(y, y, 11); /* in place, the same as out of place */
  float z[11];
  om__erff_fast_n(x, z, 11);
  CHECK(!memcmp(y, z, sizeof z));
  free(x);
  free(y);
}

/* GELU (approximate 'none'), exact and fast mode, against 0.5 x erfc(-x / sqrt 2) in double
 * (libm's erfc): within 0.63 ulp (exact) and 8 ulp (fast) on every 4099th float; in the tail
 * (x below -0.7071068) both within 0.51 ulp and the same bits, where 0.5 x (1 + erf) cancelled
 * (at -5 it was 4% off, from -8 on 0). Special values, the last short group, in place; hashes
 * pinned (the same natively and in WASM). */
static double gelu_ref(float x) { return 0.5 * x * erfc(-(double)x / sqrt(2.0)); }
static double ulps_from(float y, double e) {
  double ulp = fabs(e) < 0x1p-126 ? 0x1p-149 : ldexp(1.0, ilogb(e) - 23);
  return isnan(e) ? (isnan(y) ? 0 : INFINITY) : fabs(y - e) / ulp;
}
TEST(gelu_tail_from_erfc) {
  enum { N = 1 << 20 };
  float *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y), *f = malloc(N * sizeof *f);
  CHECK(x && y && f);
  int64_t n = 0;
  for (uint64_t u = 0; u < (1ull << 32); u += 4099) x[n++] = from_u32((uint32_t)u);
  om__gelu_erff_n(x, y, n);
  om__gelu_erff_fast_n(x, f, n);
  double worst[3] = {0, 0, 0};
  float at[3] = {0, 0, 0};
  uint64_t h = 14695981039346656037ull;
  int tail_differs = 0;
  for (int64_t k = 0; k < n; k++) {
    if (x[k] != x[k] || x[k] == -INFINITY) continue; /* below */
    double e = gelu_ref(x[k]), d[3] = {ulps_from(y[k], e), ulps_from(f[k], e), 0};
    if (x[k] < -0.7071068f) d[2] = d[0] > d[1] ? d[0] : d[1], tail_differs += memcmp(&y[k], &f[k], 4) != 0;
    for (int j = 0; j < 3; j++)
      if (d[j] > worst[j]) worst[j] = d[j], at[j] = x[k];
    uint32_t b[2] = {to_u32(y[k]), to_u32(f[k])};
    for (int q = 0; q < 8; q++) h = (h ^ (b[q / 4] >> (8 * (q % 4)) & 0xff)) * 1099511628211ull;
  }
  if (worst[0] > 0.63) FAILED("gelu: %g ulps from 0.5 x erfc(-x / sqrt 2) at %.9g", worst[0], at[0]);
  if (worst[1] > 8) FAILED("fast gelu: %g ulps at %.9g", worst[1], at[1]);
  if (worst[2] > 0.51) FAILED("gelu's tail: %g ulps at %.9g", worst[2], at[2]);
  if (tail_differs) FAILED("the tail: %d values differ between exact and fast mode", tail_differs);
  if (h != 0xd2d04682dbb855b9ull) FAILED("gelu: hash %#llx", (unsigned long long)h);
  /* each value as its own group (the others padding), and together: the same bits */
  float sp[12] = {-5.0f, -8.0f, -10.0f, -13.0f, -20.0f, -1e-30f, -1e-40f, NAN, INFINITY, -INFINITY, 0x1p-149f, -0.0f};
  float r[12], r1;
  for (int fast = 0; fast < 2; fast++) {
    void (*fn)(const float *, float *, int64_t) = fast ? om__gelu_erff_fast_n : om__gelu_erff_n;
    fn(sp, r, 12);
    for (int k = 0; k < 12; k++) {
      fn(&sp[k], &r1, 1);
      CHECK(!memcmp(&r1, &r[k], 4) || (isnan(r1) && isnan(r[k])));
    }
    for (int k = 0; k < 5; k++) /* -5 to -20: -1.43e-6, -4.88e-15, -7.62e-23, -7.99e-38 and 0 */
      if (ulps_from(r[k], gelu_ref(sp[k])) > 0.51) FAILED("gelu(%g) = %.9g (fast %d), not %.9g", sp[k], r[k], fast, gelu_ref(sp[k]));
    CHECK(r[2] < 0 && r[3] < 0 && r[4] == 0 && signbit(r[4]));
    CHECK(r[5] == -5e-31f && r[6] == 0.5f * -1e-40f && isnan(r[7]) && r[8] == INFINITY && isnan(r[9]));
    CHECK(r[10] == 0 && r[11] == 0 && signbit(r[11]));
    memcpy(f, x, sizeof(float) * 11);
    fn(f, f, 11); /* in place, the same as out of place */
    fn(x, y, 11);
    CHECK(!memcmp(f, y, sizeof(float) * 11));
  }
  free(x);
  free(y);
  free(f);
}

/* The bits on a fixed sweep, hashed: the same natively and in WASM. */
TEST(same_bits_everywhere) {
  uint64_t h = 14695981039346656037ull;
  for (uint64_t u = 0; u < (1ull << 32); u += 1000003) {
    float x = from_u32((uint32_t)u), y[6] = {om__expf(x), om__logf(x), om__log1pf(x), om__tanhf(x), om__erff(x), om__powf(x, 1.37f)};
    for (int k = 0; k < 6; k++) {
      uint32_t b = y[k] != y[k] ? 0x7fc00000u : to_u32(y[k]); /* every NaN alike */
      for (int q = 0; q < 4; q++) h = (h ^ (b >> (8 * q) & 0xff)) * 1099511628211ull;
    }
  }
  if (h != 0xe01670ab2e7a7b33ull) FAILED("hash %#llx", (unsigned long long)h);
  h = 14695981039346656037ull; /* the trigonometric and hyperbolic functions */
  f1 fs[11] = {om__sinf, om__cosf, om__tanf, om__asinf, om__acosf, om__atanf, om__sinhf, om__coshf, om__asinhf, om__acoshf, om__atanhf};
  for (uint64_t u = 0; u < (1ull << 32); u += 1000003)
    for (int k = 0; k < 12; k++) {
      float x = from_u32((uint32_t)u), y = k < 11 ? fs[k](x) : om__atan2f(x, from_u32((uint32_t)(u * 7919)));
      uint32_t b = y != y ? 0x7fc00000u : to_u32(y);
      for (int q = 0; q < 4; q++) h = (h ^ (b >> (8 * q) & 0xff)) * 1099511628211ull;
    }
  if (h != 0x289f502327d2933bull) FAILED("trig hash %#llx", (unsigned long long)h);
}

/* sin and cos of 2 pi t / n (the DFT's angles): within 2e-16 of libm's, exact on the axes (0,
 * +-1), and the same bits everywhere (a hash over every angle of n up to 200, pinned). */
TEST(sincos_of_turns) {
  const int64_t ns[] = {1, 2, 3, 4, 6, 7, 8, 10, 12, 100, 1000, 4096, 999983};
  for (int i = 0; i < (int)(sizeof ns / sizeof *ns); i++) {
    int64_t n = ns[i];
    for (int64_t t = 0; t < n; t += n > 5000 ? 997 : 1) {
      double s, c, a = 2 * 3.14159265358979323846 * (double)t / (double)n;
      om__sincos_turn(t, n, &s, &c);
      if (!(fabs(s - sin(a)) <= 2e-15 && fabs(c - cos(a)) <= 2e-15)) FAILED("t %lld of %lld: sin %.17g cos %.17g, libm %.17g %.17g", (long long)t, (long long)n, s, c, sin(a), cos(a));
      if (4 * t % n == 0) { /* a quarter turn: exact */
        const double qs[4] = {0, 1, 0, -1}, qc[4] = {1, 0, -1, 0};
        int64_t q = 4 * t / n;
        if (s != qs[q] || c != qc[q]) FAILED("t %lld of %lld: sin %.17g cos %.17g, exactly %g %g", (long long)t, (long long)n, s, c, qs[q], qc[q]);
      }
    }
  }
  uint64_t h = 14695981039346656037ull;
  for (int64_t n = 1; n <= 200; n++)
    for (int64_t t = 0; t < n; t++) {
      double sc[2];
      om__sincos_turn(t, n, &sc[0], &sc[1]);
      for (int k = 0; k < 2; k++) {
        uint64_t b;
        memcpy(&b, &sc[k], 8);
        for (int q = 0; q < 8; q++) h = (h ^ (b >> (8 * q) & 0xff)) * 1099511628211ull;
      }
    }
  if (h != 0x35defd2c046d4261ull) FAILED("hash %#llx", (unsigned long long)h);
}

int main(void) {
  RUN(floats_match_libm);
  RUN(trig_and_hyperbolic_match_libm);
  RUN(exp_n_is_exp_bit_for_bit);
  RUN(array_versions_are_bit_for_bit);
  RUN(fast_erf);
  RUN(gelu_tail_from_erfc);
  RUN(square_and_cube_are_the_rounded_powers);
  RUN(doubles_match_libm);
  RUN(special_cases);
  RUN(same_bits_everywhere);
  RUN(sincos_of_turns);
  TEST_MAIN_END();
}
