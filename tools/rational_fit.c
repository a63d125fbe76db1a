/* Where the rational functions of src/core/math.c come from, and how far math.c's evaluation of
 * each is from the exact function on every float it takes.
 *
 *   gcc -O2 -ffp-contract=off tools/rational_fit.c -lm -o /tmp/rational_fit && /tmp/rational_fit erf_fast
 *   /tmp/rational_fit tanh
 *   /tmp/rational_fit erfc_mid; /tmp/rational_fit erfc_far
 *
 * Fits f(a) / a = P(t) / Q(t), t = a^2 / s, on a in [0, cut] (from the cut on, f rounds to 1 in
 * float), for the least relative error: Lawson's iteration on weighted least squares (Householder
 * QR in long double) at 3000 Chebyshev points, the error re-linearised by the last Q each round.
 * Prints the coefficients (highest power first, as math.c's Horner steps take them), the fit's
 * relative error, and the largest distance in ulps of math.c's evaluation (a P(t) / Q(t): in
 * float and clamped at 1 for erf_fast; in double, rounded once to float, for tanh, which math.c
 * evaluates at the cut past it, so the tool checks that the cut rounds to 1) from f (libm's erf,
 * long double tanhl) over every positive float below the cut. Natively: the same IEEE operations
 * as in WASM. erf_fast: 2 min 30 s; tanh: 3 min. erfc_mid and erfc_far (GELU's tail, below)
 * fit e^(a^2) erfc(a) instead and check GELU's evaluation over every float of their piece: 40 s
 * and 32 s on a shared machine (4e-12 and 2.5e-11 relative; 0.500 ulp each). */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef long double LD;
enum { M = 3000, MAXC = 16 };
#ifndef NP_MID /* the degrees of erfc's pieces */
#define NP_MID 5
#define NQ_MID 5
#define NP_FAR 2
#define NQ_FAR 3
#endif

/* The variable a rational is in: t = a^2 / scale (the odd functions), t = a, t = 1 / a^2. */
typedef enum { T_SQUARE, T_LINEAR, T_INV_SQUARE } t_kind;

/* One function to fit: g(a) = P(t) / Q(t) on a in [lo, cut], the degrees, and whether math.c
 * evaluates the rational in float (else in double). erf and tanh: g = f(a) / a, t = a^2 / scale,
 * lo = 0; checked as math.c's odd functions over every float below the cut. erfc's two pieces
 * (GELU's tail, om__gelu_erff_n): g = e^(a^2) erfc(a) on [0.5, 4], t = a; g = a e^(a^2) erfc(a)
 * on [4, 10.5], t = 1 / a^2; checked as math.c's GELU, 0.5 x e^(-b^2) g(b) with b = -x / sqrt 2,
 * over every float x whose b is in the piece, against 0.5 x erfc(b) in long double. */
typedef struct target {
  const char *name, *p_name, *q_name;
  LD (*g)(LD a);
  float cut;
  LD scale;
  int np, nq;
  bool in_float;
  t_kind kind;
  LD lo;
} target;

static LD erf_over_a(LD a) { return erfl(a) / a; }
static LD tanh_over_a(LD a) { return tanhl(a) / a; }
static LD erfcx(LD a) { return erfcl(a) * expl(a * a); }
static LD erfcx_times_a(LD a) { return a * erfcx(a); }
static LD t_of(const target *g, LD a) { return g->kind == T_SQUARE ? a * a / g->scale : g->kind == T_LINEAR ? a : 1 / (a * a); }

static const target TARGETS[] = {
    /* fast mode's erf: erf rounds to 1 from 3.9192059 on */
    {"erf_fast", "ERF_FAST_P", "ERF_FAST_Q", erf_over_a, 3.9192059f, 16, 5, 5, true, T_SQUARE, 0},
    /* tanh: 1 - tanh(a) < 2^-25 (half an ulp below 1) from 9.0109134 on; math.c evaluates it
     * at the cut for every a past it, which must round to 1 */
    {"tanh", "TANH_P", "TANH_Q", tanh_over_a, 9.1f, 81, 4, 5, false, T_SQUARE, 0},
    /* GELU's tail: 1 + erf(a) cancels below a = -0.5, so erfc(b), b = -a, in two pieces; past
     * 10.5 GELU is below half the least float (x erfc(b) / 2 < 2^-150) */
    {"erfc_mid", "ERFC_MID_P", "ERFC_MID_Q", erfcx, 4.0f, 1, NP_MID, NQ_MID, false, T_LINEAR, 0.5L},
    {"erfc_far", "ERFC_FAR_P", "ERFC_FAR_Q", erfcx_times_a, 10.5f, 1, NP_FAR, NQ_FAR, false, T_INV_SQUARE, 4.0L},
};

static LD T[M], F[M], W[M], S[M], A[M][MAXC], B[M];
static LD pc[MAXC], qc[MAXC]; /* lowest power first */

static LD eval(const LD *c, int n, LD t) {
  LD r = c[n];
  for (int i = n - 1; i >= 0; i--) r = r * t + c[i];
  return r;
}

/* min sum W S^2 (P(t) - F Q(t))^2 with Q's constant 1: the weighted relative error, linearised. */
static void solve(int np, int nq) {
  int nc = np + 1 + nq;
  for (int i = 0; i < M; i++) {
    LD w = sqrtl(W[i]) * S[i], tp = 1;
    for (int j = 0; j <= np; j++) A[i][j] = w * tp, tp *= T[i];
    tp = T[i];
    for (int j = 1; j <= nq; j++) A[i][np + j] = -w * F[i] * tp, tp *= T[i];
    B[i] = w * F[i];
  }
  for (int k = 0; k < nc; k++) { /* Householder QR, applied to B as it goes */
    LD nrm = 0, vv = 0;
    for (int i = k; i < M; i++) nrm += A[i][k] * A[i][k];
    nrm = A[k][k] > 0 ? -sqrtl(nrm) : sqrtl(nrm);
    A[k][k] -= nrm;
    for (int i = k; i < M; i++) vv += A[i][k] * A[i][k];
    for (int j = k + 1; j <= nc; j++) {
      LD s = 0;
      for (int i = k; i < M; i++) s += A[i][k] * (j < nc ? A[i][j] : B[i]);
      s = 2 * s / vv;
      for (int i = k; i < M; i++) *(j < nc ? &A[i][j] : &B[i]) -= s * A[i][k];
    }
    A[k][k] = nrm;
  }
  LD x[MAXC];
  for (int k = nc - 1; k >= 0; k--) {
    LD s = B[k];
    for (int j = k + 1; j < nc; j++) s -= A[k][j] * x[j];
    x[k] = s / A[k][k];
  }
  for (int j = 0; j <= np; j++) pc[j] = x[j];
  qc[0] = 1;
  for (int j = 1; j <= nq; j++) qc[j] = x[np + j];
}

/* math.c's Horner steps, highest power first: poly4 in float, poly in double. */
static float horner_f(const float *c, int n, float t) {
  float r = c[0];
  for (int i = 1; i < n; i++) r = r * t + c[i];
  return r;
}
static double horner_d(const double *c, int n, double t) {
  double r = c[0];
  for (int i = 1; i < n; i++) r = r * t + c[i];
  return r;
}

/* math.c's odd_rational2 on one value: no clamp of the result (the tool checks it never exceeds 1). */
static float eval_double(const target *g, const double *pd, const double *qd, double a) {
  double t = a * a * (1.0 / (double)g->scale);
  return (float)(a * horner_d(pd, g->np + 1, t) / horner_d(qd, g->nq + 1, t));
}

/* float's ulp at e (the least subnormal's below 2^-126). */
static double ulp_at(LD e) { return ldexp(1.0, ilogbl(e) - 23 < -149 ? -149 : (int)ilogbl(e) - 23); }

/* math.c's GELU tail (om__gelu_erff_n) with one piece, on every float x whose b = -x / sqrt 2 is
 * in [lo, cut): 0.5 x (e^(-b^2) g(b)), g(b) = P(b) / Q(b), or P(z) / Q(z) / b with z = 1 / b^2,
 * against 0.5 x erfc(-x / sqrt 2) in long double. libm's exp stands in for om__exp (both within
 * about 1e-16). */
static int check_gelu_tail(const target *g, const double *pd, const double *qd) {
  double most = 0;
  float at = 0;
  for (uint32_t u = 0x80000000u;; u++) {
    float x;
    memcpy(&x, &u, 4);
    double b = -(x * 0.70710678118654752);
    if (!(x < -0.7071068f) || b < (double)g->lo) continue; /* math.c's tail: x below -0.7071068f, so b >= 0.5 */
    if (b >= (double)g->cut) break;
    double t = g->kind == T_LINEAR ? b : 1 / (b * b), r = horner_d(pd, g->np + 1, t) / horner_d(qd, g->nq + 1, t);
    if (g->kind == T_INV_SQUARE) r /= b;
    float y = (float)(x * 0.5 * (exp(-(b * b)) * r));
    LD e = 0.5L * x * erfcl(-(LD)x / sqrtl(2.0L));
    double d = (double)(fabsl(y - e) / ulp_at(fabsl(e)));
    if (d > most) most = d, at = x;
  }
  printf("largest error of GELU's evaluation in this piece: %.3f ulp, at %.9g\n", most, at);
  return 0;
}

int main(int argc, char **argv) {
  const target *g = NULL;
  for (size_t i = 0; i < sizeof TARGETS / sizeof TARGETS[0]; i++)
    if (argc == 2 && !strcmp(argv[1], TARGETS[i].name)) g = &TARGETS[i];
  if (!g) {
    fprintf(stderr, "usage: rational_fit erf_fast|tanh|erfc_mid|erfc_far\n");
    return 2;
  }
  for (int i = 0; i < M; i++) {
    LD a = g->lo + (g->cut - g->lo) * (1 - cosl(3.14159265358979323846L * (i + 0.5L) / M)) / 2;
    T[i] = t_of(g, a), F[i] = g->g(a), W[i] = 1, S[i] = 1 / F[i];
  }
  LD worst = 0;
  for (int round = 0; round < 60; round++) {
    solve(g->np, g->nq);
    LD sum = 0;
    worst = 0;
    for (int i = 0; i < M; i++) {
      LD q = eval(qc, g->nq, T[i]), e = fabsl(eval(pc, g->np, T[i]) / q / F[i] - 1);
      if (e > worst) worst = e;
      W[i] *= e + 1e-30L, sum += W[i], S[i] = 1 / (F[i] * q);
    }
    for (int i = 0; i < M; i++) W[i] /= sum;
  }
  float pf[MAXC], qf[MAXC];
  double pd[MAXC], qd[MAXC];
  for (int j = 0; j <= g->np; j++) pd[j] = (double)pc[g->np - j], pf[j] = (float)pd[j];
  for (int j = 0; j <= g->nq; j++) qd[j] = (double)qc[g->nq - j], qf[j] = (float)qd[j];
  printf("relative error of the fit: %.3Lg\n%s = {", worst, g->p_name);
  for (int j = 0; j <= g->np; j++) g->in_float ? printf("%.9gf%s", pf[j], j < g->np ? ", " : "}\n") : printf("%.17g%s", pd[j], j < g->np ? ", " : "}\n");
  printf("%s = {", g->q_name);
  for (int j = 0; j <= g->nq; j++) g->in_float ? printf("%.9gf%s", qf[j], j < g->nq ? ", " : "}\n") : printf("%.17g%s", qd[j], j < g->nq ? ", " : "}\n");
  if (g->kind != T_SQUARE) return check_gelu_tail(g, pd, qd);
  double most = 0;
  float at = 0;
  for (uint32_t b = 1;; b++) { /* every positive float below the cut */
    float a, r;
    memcpy(&a, &b, 4);
    if (a >= g->cut) break;
    if (g->in_float) {
      float t = a * a * (1.0f / (float)g->scale);
      r = a * horner_f(pf, g->np + 1, t) / horner_f(qf, g->nq + 1, t);
      r = r > 1 ? 1 : r;
    } else {
      r = eval_double(g, pd, qd, a);
    }
    LD e = g->in_float ? (LD)erf((double)a) : tanhl((LD)a);
    double d = (double)(fabsl(r - e) / ulp_at(e));
    if (d > most) most = d, at = a;
  }
  printf("largest error of the evaluation: %.3f ulp, at %.9g\n", most, at);
  if (!g->in_float) { /* past the cut math.c evaluates at the cut: that must be 1 */
    float r = eval_double(g, pd, qd, g->cut);
    printf("at the cut: %.9g%s\n", r, r == 1 ? "" : " (not 1: move the cut)");
    if (r != 1) return 1;
  }
  return 0;
}
