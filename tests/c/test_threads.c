/* The kernels' thread pool (src/core/threads.c): the thread count setting and its errors, the
 * pool running every part once on the threads asked for, and matrix products, convolutions
 * (forward and gradients) and an LSTM giving the same bits on 1, 2 and 3 threads. */
#include <stdlib.h>

#include "internal.h" /* om__parallel, om__data */
#include "om_test.h"

/* The C tests run natively and on the single-thread WASM build (the threaded one is tested
 * from Node: tests/js/threads.test.mjs), where every count is 1. */
#ifdef __EMSCRIPTEN__
#define MOST 1
#else
#define MOST OM_MAX_THREADS
#endif
#define MIN(a, b) ((a) < (b) ? (a) : (b))

TEST(thread_count_default_setting_and_errors) {
  int t = om_get_num_threads(); /* the default: the cores available, capped */
  CHECK(t >= 1 && t <= MOST);
  CHECK_EQ_INT(om_set_num_threads(2), MIN(2, MOST));
  CHECK_EQ_INT(om_get_num_threads(), MIN(2, MOST));
  CHECK_EQ_INT(om_set_num_threads(1000), MOST);
  CHECK_EQ_INT(om_get_num_threads(), MOST);
  CHECK_ERROR(om_set_num_threads(0) != 0, OM_ERR_INVALID_ARGUMENT, "om_set_num_threads: needs at least 1 thread, got 0");
  CHECK_ERROR(om_set_num_threads(-3) != 0, OM_ERR_INVALID_ARGUMENT, "got -3");
  CHECK_EQ_INT(om_get_num_threads(), MOST); /* a refused count changes nothing */
}

typedef struct parts_seen {
  int runs[64], worker[64];
} parts_seen;

static void note_part(void *ctx, int64_t part, int worker) {
  parts_seen *s = ctx;
  s->runs[part]++;
  s->worker[part] = worker;
}

TEST(pool_runs_every_part_once_on_the_threads_asked_for) {
  for (int threads = 1; threads <= 3; threads++) {
    om_set_num_threads(threads);
    for (int round = 0; round < 3; round++) { /* the sleeping workers wake for every job */
      parts_seen s = {{0}, {0}};
      int used = om__parallel(64, OM_MAX_THREADS, note_part, &s);
      CHECK_EQ_INT(used, MIN(threads, MOST));
      for (int p = 0; p < 64; p++) {
        CHECK_EQ_INT(s.runs[p], 1);
        CHECK(s.worker[p] >= 0 && s.worker[p] < used);
      }
    }
    parts_seen one = {{0}, {0}};
    CHECK_EQ_INT(om__parallel(64, 1, note_part, &one), 1); /* `most` caps the threads */
    CHECK_EQ_INT(om__parallel(1, OM_MAX_THREADS, note_part, &one), 1); /* and so does one part */
    CHECK_EQ_INT(one.runs[0], 2);
  }
}

/* f(in) on 1, 2 and 3 threads: every output has the same bits (outs: outputs per call). */
typedef void (*compute_fn)(om_tensor *const *in, om_tensor **out);

static void check_same_bits(const char *what, compute_fn f, om_tensor *const *in, int outs) {
  om_tensor *ref[4] = {0};
  om_set_num_threads(1);
  f(in, ref);
  for (int threads = 2; threads <= 3; threads++) {
    om_tensor *got[4] = {0};
    om_set_num_threads(threads);
    f(in, got);
    for (int i = 0; i < outs; i++) {
      if (!ref[i] || !got[i]) {
        FAILED("%s: output %d is NULL: %s", what, i, om_last_error_message());
        continue;
      }
      om_tensor *a = om_contiguous(ref[i]), *b = om_contiguous(got[i]);
      size_t n = (size_t)om_tensor_numel(a) * sizeof(float);
      if (om_tensor_numel(a) != om_tensor_numel(b) || memcmp(om__data(a), om__data(b), n))
        FAILED("%s: output %d differs between 1 and %d threads", what, i, threads);
      om_tensor_release(a), om_tensor_release(b), om_tensor_release(got[i]);
    }
  }
  for (int i = 0; i < outs; i++) om_tensor_release(ref[i]);
}

static om_tensor *randn(uint64_t seed, int ndim, const int64_t *shape) { return om_randn(shape, ndim, seed, true); }

static void matmul_fn(om_tensor *const *in, om_tensor **out) { out[0] = om_matmul(in[0], in[1]); }

TEST(matmul_same_bits_on_any_thread_count) {
  struct { int64_t a[3], b[3]; int nd; const char *what; } cases[] = {
      {{200, 300}, {300, 500}, 2, "wide: 12 column blocks"},
      {{3000, 64}, {64, 24}, 2, "tall: row blocks"},
      {{96, 130}, {130, 100}, 2, "4 column blocks, ragged edges"},
      {{6, 64, 80}, {6, 80, 96}, 3, "batched small products: one part each"},
      {{2, 3}, {3, 5}, 2, "too small to split"},
  };
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    om_tensor *in[2] = {randn(1, cases[c].nd, cases[c].a), randn(2, cases[c].nd, cases[c].b)};
    check_same_bits(cases[c].what, matmul_fn, in, 1);
    /* transposed operands, read in place through their strides */
    om_tensor *t[2] = {om_transpose(in[1], -1, -2), om_transpose(in[0], -1, -2)};
    check_same_bits(cases[c].what, matmul_fn, t, 1);
    om_tensor_release(t[0]), om_tensor_release(t[1]), om_tensor_release(in[0]), om_tensor_release(in[1]);
  }
}

static int64_t conv_stride;

/* conv2d forward, then the gradients of sum(conv * r) for x, w and the bias. */
static void conv_fn(om_tensor *const *in, om_tensor **out) {
  om_tensor *x = om_detach(in[0]), *w = om_detach(in[1]), *b = om_detach(in[2]);
  om_tensor_set_requires_grad(x, true), om_tensor_set_requires_grad(w, true), om_tensor_set_requires_grad(b, true);
  int64_t s[2] = {conv_stride, conv_stride}, p[2] = {1, 1}, d[2] = {1, 1};
  out[0] = om_conv2d(x, w, b, s, p, d, 1);
  om_tensor *prod = om_mul(out[0], in[3]), *loss = om_sum(prod, NULL, 0, false);
  if (loss && om_backward(loss, NULL)) {
    out[1] = om_tensor_grad(x); /* new references */
    out[2] = om_tensor_grad(w);
    out[3] = om_tensor_grad(b);
  }
  om_tensor *all[] = {x, w, b, prod, loss};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) om_tensor_release(all[i]);
}

TEST(conv_same_bits_on_any_thread_count) {
  for (conv_stride = 1; conv_stride <= 2; conv_stride++) { /* windows in place; im2col */
    int64_t o = conv_stride == 1 ? 32 : 16;
    om_tensor *in[4] = {randn(3, 4, (int64_t[]){2, 16, 32, 32}), randn(4, 4, (int64_t[]){32, 16, 3, 3}),
                        randn(5, 1, (int64_t[]){32}), randn(6, 4, (int64_t[]){2, 32, o, o})};
    check_same_bits(conv_stride == 1 ? "conv stride 1" : "conv stride 2", conv_fn, in, 4);
    for (int i = 0; i < 4; i++) om_tensor_release(in[i]);
  }
}

static void lstm_fn(om_tensor *const *in, om_tensor **out) {
  out[0] = om_lstm(in[0], NULL, NULL, in + 1, 4, 1, true, false, false, &out[1], &out[2]);
}

TEST(lstm_same_bits_on_any_thread_count) {
  om_tensor *in[5] = {randn(7, 3, (int64_t[]){32, 64, 128}), randn(8, 2, (int64_t[]){512, 128}),
                      randn(9, 2, (int64_t[]){512, 128}), randn(10, 1, (int64_t[]){512}), randn(11, 1, (int64_t[]){512})};
  check_same_bits("lstm", lstm_fn, in, 3);
  for (int i = 0; i < 5; i++) om_tensor_release(in[i]);
}

int main(void) {
  RUN(thread_count_default_setting_and_errors);
  RUN(pool_runs_every_part_once_on_the_threads_asked_for);
  RUN(matmul_same_bits_on_any_thread_count);
  RUN(conv_same_bits_on_any_thread_count);
  RUN(lstm_same_bits_on_any_thread_count);
  TEST_MAIN_END();
}
