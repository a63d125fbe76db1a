/* om_bench_matmul: native matmul throughput through the public API (om_randn, om_matmul).
 *
 *   om_bench_matmul [N ...]        default sizes 256 512 1024 (square N x N times N x N)
 *   env OM_BENCH_SAMPLES=7         timed samples per size (median reported)
 *   env OM_BENCH_MIN_MS=60         each sample repeats the product until it lasts this long
 *
 * Prints, per size, one machine-readable line that tools/bench.mjs parses:
 *   matmul n=<N> gflops=<median GFLOP/s> ms=<median ms per product> samples=<S> reps=<R>
 * A product counts 2*N^3 flops. Exit status 1 when a call fails (the last error is printed). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "onemodel.h"

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static int cmp_double(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

static int env_int(const char *name, int fallback) {
  const char *s = getenv(name);
  int v = s ? atoi(s) : 0;
  return v > 0 ? v : fallback;
}

/* Runs one product and drops it; false (with the last error set) when it fails. */
static bool one(om_tensor *a, om_tensor *b) {
  om_tensor *c = om_matmul(a, b);
  om_tensor_release(c);
  return c != NULL;
}

static bool bench(int64_t n, int samples, double min_ms) {
  int64_t shape[2] = {n, n};
  om_tensor *a = om_randn(shape, 2, 1, true), *b = om_randn(shape, 2, 2, true);
  bool ok = a && b;
  /* Warm-up, and the repeat count that makes a sample last min_ms. */
  int reps = 1;
  double t0 = now_ms();
  for (int i = 0; ok && i < 2; i++) ok = one(a, b);
  double per = (now_ms() - t0) / 2;
  if (per > 0) reps = (int)(min_ms / per) + 1;
  double *ms = calloc((size_t)samples, sizeof *ms);
  ok = ok && ms;
  for (int s = 0; ok && s < samples; s++) {
    t0 = now_ms();
    for (int r = 0; ok && r < reps; r++) ok = one(a, b);
    ms[s] = (now_ms() - t0) / reps;
  }
  if (ok) {
    qsort(ms, (size_t)samples, sizeof *ms, cmp_double);
    double med = samples % 2 ? ms[samples / 2] : (ms[samples / 2 - 1] + ms[samples / 2]) / 2;
    printf("matmul n=%lld gflops=%.3f ms=%.4f samples=%d reps=%d\n", (long long)n,
           2.0 * (double)n * (double)n * (double)n / (med * 1e6), med, samples, reps);
    fflush(stdout);
  } else {
    fprintf(stderr, "om_bench_matmul: n=%lld failed: %s\n", (long long)n, om_last_error_message());
  }
  free(ms);
  om_tensor_release(a);
  om_tensor_release(b);
  return ok;
}

int main(int argc, char **argv) {
  int samples = env_int("OM_BENCH_SAMPLES", 7);
  double min_ms = env_int("OM_BENCH_MIN_MS", 60);
  static const int64_t defaults[] = {256, 512, 1024};
  bool ok = true;
  if (argc > 1) {
    for (int i = 1; i < argc; i++) {
      long long n = strtoll(argv[i], NULL, 10);
      if (n <= 0) {
        fprintf(stderr, "om_bench_matmul: bad size '%s'\n", argv[i]);
        return 2;
      }
      ok = bench(n, samples, min_ms) && ok;
    }
  } else {
    for (size_t i = 0; i < sizeof defaults / sizeof defaults[0]; i++) ok = bench(defaults[i], samples, min_ms) && ok;
  }
  return ok ? 0 : 1;
}
