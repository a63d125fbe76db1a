/* A small test harness: CHECK macros that print both values, a per-test memory check, and
 * helpers shared by the C tests. Each test file defines tests with TEST(name) and lists them in
 * main via RUN(name); the exit code is the number of failed checks. */
#ifndef OM_TEST_H
#define OM_TEST_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
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

/* A growable byte sink for the writers (om_write_fn): every byte written, and the first chunk
 * pointers handed over (to see which came straight from a storage). */
typedef struct bytes {
  uint8_t *p;
  size_t n, cap;
  int calls;
  const void *seen[64];
} bytes;

static inline bool to_bytes(void *ctx, const void *data, size_t n) {
  bytes *b = ctx;
  if (b->calls < 64) b->seen[b->calls] = data;
  b->calls++;
  if (b->n + n > b->cap) {
    b->cap = (b->n + n) * 2;
    b->p = realloc(b->p, b->cap);
  }
  memcpy(b->p + b->n, data, n);
  b->n += n;
  return true;
}

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

/* ---- tracing through om_trace_run ---- */

/* A model for om_trace_run: the run's inputs in (their sizes, not the examples': the runs at
 * other sizes hand it other shapes), its outputs (new references) out; returns how many, -1 on
 * error. */
typedef int (*om_test_model)(om_tensor *const *in, om_tensor **out);

static inline int om_test_run_model(void *ctx, om_tensor *const *in, int n, om_tensor **out, int max) {
  (void)n, (void)max;
  return (*(om_test_model *)ctx)(in, out);
}

/* After om_trace_begin (and any om_trace_dim / om_trace_parameter): declares inputs "x", "x1",
 * ... with examples and axes (axes[i] NULL for all fixed), runs model through om_trace_run and
 * finishes with n_out outputs named "y0", "y1", .... The model, or NULL with the error set; the
 * recording has ended either way. */
static inline om_traced_model *om_test_trace_n(om_test_model model, int n_in, om_tensor *const *examples,
                                               const char *const *const *axes, int n_out) {
  static const char *const in_names[] = {"x", "x1", "x2", "x3"}, *const out_names[] = {"y0", "y1", "y2", "y3"};
  om_tensor *in[4] = {0}, *outs[4] = {0};
  bool ok = true;
  for (int i = 0; i < n_in && ok; i++) ok = (in[i] = om_trace_input(in_names[i], examples[i], axes[i])) != NULL;
  int got = ok ? om_trace_run(om_test_run_model, &model, outs, 4) : -1;
  om_traced_model *m = got == n_out ? om_trace_finish(outs, out_names, n_out) : NULL;
  if (got >= 0 && got != n_out) FAILED("the model returned %d outputs, expected %d", got, n_out);
  for (int k = 0; k < got && k < 4; k++) om_tensor_release(outs[k]);
  for (int i = 0; i < n_in; i++) om_tensor_release(in[i]);
  om_trace_abort();
  return m;
}

/* om_test_trace_n of one input. */
static inline om_traced_model *om_test_trace(om_test_model model, om_tensor *example, const char *const *axes, int n_out) {
  return om_test_trace_n(model, 1, &example, &axes, n_out);
}

/* Output i's shape written as the graph has it: each axis its dim_param, or its size when
 * fixed, joined by ',' ("batch*seq,4"), equals want. */
static inline void om_test_check_out(const om_traced_model *m, int i, const char *want) {
  const char *const *dp;
  const int64_t *shape;
  int nd;
  char got[256] = "";
  if (!m || !om_traced_info(m, OM_TRACED_OUTPUT, i, NULL, &nd, &shape, &dp)) {
    FAILED("output %d: no info (%s)", i, om_last_error_message());
    return;
  }
  for (int d = 0, n = 0; d < nd; d++)
    n += dp[d] ? snprintf(got + n, sizeof got - (size_t)n, "%s%s", d ? "," : "", dp[d])
               : snprintf(got + n, sizeof got - (size_t)n, "%s%lld", d ? "," : "", (long long)shape[d]);
  if (strcmp(got, want)) FAILED("output %d: [%s], expected [%s]", i, got, want);
}

/* How many nodes of op_type the graph of m holds. */
static inline int om_test_count_op(const om_traced_model *m, const char *op_type) {
  int n = 0;
  for (int k = 0; m && k < om_traced_count(m, OM_TRACED_NODE); k++) n += !strcmp(om_traced_name(m, OM_TRACED_NODE, k), op_type);
  return n;
}

#endif
