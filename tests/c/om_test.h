/* A small test harness: CHECK macros that print both values, a per-test memory check, and
 * helpers shared by the C tests. Each test file defines tests with TEST(name) and lists them in
 * main via RUN(name); the exit code is the number of failed checks. */
#ifndef OM_TEST_H
#define OM_TEST_H

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "onemodel.h"

static int om_test_failures;

#define FAILED(...)                                                       \
  do {                                                                    \
    printf("  FAIL %s:%d: ", __FILE__, __LINE__);                         \
    printf(__VA_ARGS__);                                                  \
    printf("\n");                                                         \
    om_test_failures++;                                                   \
  } while (0)

#define CHECK(cond)                                                       \
  do {                                                                    \
    if (!(cond)) FAILED("%s (last error: %s)", #cond, om_last_error_message()); \
  } while (0)

#define CHECK_EQ_INT(a, b)                                                \
  do {                                                                    \
    long long va_ = (long long)(a), vb_ = (long long)(b);                 \
    if (va_ != vb_) FAILED("%s == %s: %lld != %lld", #a, #b, va_, vb_);   \
  } while (0)

#define CHECK_NEAR(a, b, tol)                                             \
  do {                                                                    \
    double va_ = (a), vb_ = (b);                                          \
    if (!(fabs(va_ - vb_) <= (tol))) FAILED("%s ~ %s: %.9g vs %.9g (tol %g)", #a, #b, va_, vb_, (double)(tol)); \
  } while (0)

/* The call returned failure with the given kind and a message containing substr. */
#define CHECK_ERROR(call_ok, kind, substr)                                \
  do {                                                                    \
    om_clear_error();                                                     \
    bool ok_ = (call_ok);                                                 \
    if (ok_) FAILED("%s succeeded, expected %s", #call_ok, om_error_kind_name(kind)); \
    else if (om_last_error() != (kind))                                   \
      FAILED("%s: kind %s, expected %s (%s)", #call_ok, om_error_kind_name(om_last_error()), \
             om_error_kind_name(kind), om_last_error_message());          \
    else if (!strstr(om_last_error_message(), (substr)))                  \
      FAILED("%s: message '%s' lacks '%s'", #call_ok, om_last_error_message(), (substr)); \
    om_clear_error();                                                     \
  } while (0)

#define TEST(name) static void name(void)
/* Runs a test and checks that it released every tensor and byte it made. */
#define RUN(name)                                                         \
  do {                                                                    \
    int64_t t0_ = om_live_tensors(), b0_ = om_live_bytes();               \
    int f0_ = om_test_failures;                                           \
    om_clear_error();                                                     \
    name();                                                               \
    if (om_live_tensors() != t0_ || om_live_bytes() != b0_)               \
      FAILED("%s leaked %lld tensors, %lld bytes", #name,                 \
             (long long)(om_live_tensors() - t0_), (long long)(om_live_bytes() - b0_)); \
    printf("%s %s\n", om_test_failures == f0_ ? "ok  " : "FAIL", #name); \
  } while (0)

#define TEST_MAIN_END()                                                   \
  printf("%d checks failed\n", om_test_failures);                         \
  return om_test_failures ? 1 : 0

/* A float32 tensor from a literal list: T(shape..., ) helpers. */
static inline om_tensor *tensor_f(const float *data, const int64_t *shape, int ndim) {
  return om_from_data(data, shape, ndim, OM_FLOAT32);
}
#define TF(shape, ...) tensor_f((const float[]){__VA_ARGS__}, (const int64_t[])shape, (int)(sizeof((int64_t[])shape) / sizeof(int64_t)))
#define SHAPE(...) {__VA_ARGS__}

/* Element k (row-major) of t as a double, or NaN when t is NULL. */
static inline double at(const om_tensor *t, int64_t k) {
  if (!t) return NAN;
  double out = NAN;
  int64_t n = om_tensor_numel(t), idx[OM_MAX_DIMS];
  if (k >= n) return NAN;
  for (int d = om_tensor_ndim(t) - 1; d >= 0; d--) {
    idx[d] = k % om_tensor_shape(t)[d];
    k /= om_tensor_shape(t)[d];
  }
  om_tensor_get(t, idx, &out);
  return out;
}

/* Checks t's shape and values (n of them) against expected, to tol. */
#define CHECK_VALUES(t, shape, tol, ...)                                                   \
  do {                                                                                     \
    const om_tensor *t_ = (t);                                                             \
    const int64_t sh_[] = shape;                                                           \
    const double ex_[] = {__VA_ARGS__};                                                    \
    int nd_ = (int)(sizeof sh_ / sizeof sh_[0]);                                           \
    if (!t_) { FAILED("%s is NULL: %s", #t, om_last_error_message()); break; }            \
    if (om_tensor_ndim(t_) != nd_ || memcmp(om_tensor_shape(t_), sh_, sizeof sh_)) {       \
      FAILED("%s has the wrong shape", #t); break;                                         \
    }                                                                                      \
    for (size_t k_ = 0; k_ < sizeof ex_ / sizeof ex_[0]; k_++)                             \
      if (at(t_, (int64_t)k_) != ex_[k_] && !(fabs(at(t_, (int64_t)k_) - ex_[k_]) <= (tol)))                                 \
        FAILED("%s[%zu] = %.9g, expected %.9g", #t, k_, at(t_, (int64_t)k_), ex_[k_]);     \
  } while (0)

#endif
