/* Where fast mode's erf coefficients come from (src/core/math.c, ERF_FAST_P and ERF_FAST_Q), and
 * how far that function is from erf on every float.
 *
 *   gcc -O2 -ffp-contract=off tools/erf_fit.c -lm -o /tmp/erf_fit && /tmp/erf_fit
 *
 * Fits erf(a) / a = P(t) / Q(t), t = a^2 / 16, on a in [0, 3.9192059] (from there on erf rounds to
 * 1 in float), degree 5 / 5, for the least relative error: Lawson's iteration on weighted least
 * squares (Householder QR in long double) at 3000 Chebyshev points, the error re-linearised by the
 * last Q each round. Prints the coefficients as floats, the fit's relative error, and the
 * largest distance in ulps of math.c's float evaluation (a P(t) / Q(t) in float, Horner from the
 * highest power, clamped at 1) from erf (libm's double erf) over every positive float below the
 * cutoff. Natively: the same IEEE float operations as in WASM. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef long double LD;
enum { M = 3000, NP = 5, NQ = 5, NC = NP + 1 + NQ };
#define CUT 3.9192059f

static LD T[M], F[M], W[M], S[M], A[M][NC], B[M];
static LD pc[NP + 1], qc[NQ + 1]; /* lowest power first */

static LD eval(const LD *c, int n, LD t) {
  LD r = c[n];
  for (int i = n - 1; i >= 0; i--) r = r * t + c[i];
  return r;
}

/* min sum W S^2 (P(t) - F Q(t))^2 with Q's constant 1: the weighted relative error, linearised. */
static void solve(void) {
  for (int i = 0; i < M; i++) {
    LD w = sqrtl(W[i]) * S[i], tp = 1;
    for (int j = 0; j <= NP; j++) A[i][j] = w * tp, tp *= T[i];
    tp = T[i];
    for (int j = 1; j <= NQ; j++) A[i][NP + j] = -w * F[i] * tp, tp *= T[i];
    B[i] = w * F[i];
  }
  for (int k = 0; k < NC; k++) { /* Householder QR, applied to B as it goes */
    LD nrm = 0, vv = 0;
    for (int i = k; i < M; i++) nrm += A[i][k] * A[i][k];
    nrm = A[k][k] > 0 ? -sqrtl(nrm) : sqrtl(nrm);
    A[k][k] -= nrm;
    for (int i = k; i < M; i++) vv += A[i][k] * A[i][k];
    for (int j = k + 1; j <= NC; j++) {
      LD s = 0;
      for (int i = k; i < M; i++) s += A[i][k] * (j < NC ? A[i][j] : B[i]);
      s = 2 * s / vv;
      for (int i = k; i < M; i++) *(j < NC ? &A[i][j] : &B[i]) -= s * A[i][k];
    }
    A[k][k] = nrm;
  }
  LD x[NC];
  for (int k = NC - 1; k >= 0; k--) {
    LD s = B[k];
    for (int j = k + 1; j < NC; j++) s -= A[k][j] * x[j];
    x[k] = s / A[k][k];
  }
  for (int j = 0; j <= NP; j++) pc[j] = x[j];
  qc[0] = 1;
  for (int j = 1; j <= NQ; j++) qc[j] = x[NP + j];
}

static float horner(const float *c, int n, float t) { /* highest power first, as math.c's poly4 */
  float r = c[0];
  for (int i = 1; i < n; i++) r = r * t + c[i];
  return r;
}

int main(void) {
  for (int i = 0; i < M; i++) {
    LD a = CUT * (1 - cosl(3.14159265358979323846L * (i + 0.5L) / M)) / 2;
    T[i] = a * a / 16, F[i] = erfl(a) / a, W[i] = 1, S[i] = 1 / F[i];
  }
  LD worst = 0;
  for (int round = 0; round < 60; round++) {
    solve();
    LD sum = 0;
    worst = 0;
    for (int i = 0; i < M; i++) {
      LD q = eval(qc, NQ, T[i]), e = fabsl(eval(pc, NP, T[i]) / q / F[i] - 1);
      if (e > worst) worst = e;
      W[i] *= e + 1e-30L, sum += W[i], S[i] = 1 / (F[i] * q);
    }
    for (int i = 0; i < M; i++) W[i] /= sum;
  }
  float p[NP + 1], q[NQ + 1];
  for (int j = 0; j <= NP; j++) p[j] = (float)pc[NP - j];
  for (int j = 0; j <= NQ; j++) q[j] = (float)qc[NQ - j];
  printf("relative error of the fit: %.3Lg\nERF_FAST_P = {", worst);
  for (int j = 0; j <= NP; j++) printf("%.9gf%s", p[j], j < NP ? ", " : "}\nERF_FAST_Q = {");
  for (int j = 0; j <= NQ; j++) printf("%.9gf%s", q[j], j < NQ ? ", " : "}\n");
  double most = 0;
  float at = 0;
  for (uint32_t b = 1;; b++) { /* every positive float below the cutoff */
    float a;
    memcpy(&a, &b, 4);
    if (a >= CUT) break;
    float t = a * a * (1.0f / 16), r = a * horner(p, NP + 1, t) / horner(q, NQ + 1, t);
    r = r > 1 ? 1 : r;
    double e = erf((double)a), ulp = ldexp(1.0, ilogb(e) - 23 < -149 ? -149 : ilogb(e) - 23);
    double d = fabs(r - e) / ulp;
    if (d > most) most = d, at = a;
  }
  printf("largest error of the float evaluation: %.3f ulp, at %.9g\n", most, at);
  return 0;
}
