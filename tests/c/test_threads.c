/* The kernels' thread pool (src/core/threads.c): the thread count setting and its errors, the
 * pool running every part once on the threads asked for, and matrix products (large, 8 rows,
 * fewer rows than a tile), convolutions of every path (windows in place, one product split or the
 * products as the parts; a product of more channels than positions split by channels; depthwise;
 * im2col; 1x1) with their gradients, attention, an LSTM, a
 * small ResNet's forward, interpolate, elementwise maps, copies, norms and pools giving the same
 * bits on 1, 2 and 3 threads. */
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

/* Jobs back to back (each posted while the workers still watch for one, SPIN_US) and after a
 * pause (the workers asleep), with the count of threads taking part changing between them: a
 * worker left out of one job must not take the next one's parts twice or miss them. */
TEST(pool_jobs_back_to_back_and_after_sleeping) {
  for (int round = 0; round < 600; round++) {
    int threads = 1 + round % 3, most = round % 7 == 0 ? 2 : OM_MAX_THREADS;
    om_set_num_threads(threads);
    parts_seen s = {{0}, {0}};
    int used = om__parallel(64 - round % 5, most, note_part, &s);
    CHECK_EQ_INT(used, MIN(MIN(threads, most), MOST));
    for (int p = 0; p < 64; p++) CHECK_EQ_INT(s.runs[p], p < 64 - round % 5 ? 1 : 0);
    if (round % 100 == 99) { /* long enough for the workers to sleep */
      volatile double x = 0;
      for (int i = 0; i < 3000000; i++) x += 1e-9 * i;
      CHECK(x > 0);
    }
  }
}

/* f(in) on 1, 2 and 3 threads: every output has the same bits (outs: outputs per call, at most 5). */
typedef void (*compute_fn)(om_tensor *const *in, om_tensor **out);

static void check_same_bits(const char *what, compute_fn f, om_tensor *const *in, int outs) {
  om_tensor *ref[5] = {0};
  om_set_num_threads(1);
  f(in, ref);
  for (int threads = 2; threads <= 3; threads++) {
    om_tensor *got[5] = {0};
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
      {{200, 300}, {300, 500}, 2, "wide: column blocks"},
      {{3000, 64}, {64, 24}, 2, "tall: row blocks"},
      {{96, 130}, {130, 100}, 2, "a few column blocks, ragged edges"},
      {{6, 64, 80}, {6, 80, 96}, 3, "batched small products: one part each"},
      {{8, 512}, {512, 1024}, 2, "8 rows: column blocks"},
      {{2, 1024}, {1024, 1024}, 2, "2 rows (fewer than a tile): column blocks of the row path"},
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

/* The convolution conv_fn runs: stride and padding (both sides alike), groups. */
static int64_t conv_stride, conv_pad, conv_groups;

/* conv2d forward, then the gradients of sum(conv * r) for x, w and the bias. */
static void conv_fn(om_tensor *const *in, om_tensor **out) {
  om_tensor *x = om_detach(in[0]), *w = om_detach(in[1]), *b = om_detach(in[2]);
  om_tensor_set_requires_grad(x, true), om_tensor_set_requires_grad(w, true), om_tensor_set_requires_grad(b, true);
  int64_t s[2] = {conv_stride, conv_stride}, p[2] = {conv_pad, conv_pad}, d[2] = {1, 1};
  out[0] = om_conv2d(x, w, b, s, p, d, conv_groups);
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
  struct { int64_t n, c, hw, o, k, stride, pad, groups; const char *what; } cases[] = {
      {1, 64, 32, 64, 3, 1, 1, 1, "3x3 64 channels 32x32: windows in place, the product in bands of rows"},
      {12, 8, 16, 8, 3, 1, 1, 1, "windows in place, the 12 products as the parts"},
      {2, 64, 32, 64, 3, 1, 1, 64, "depthwise 3x3: windows in place, one row per product"},
      {2, 16, 32, 32, 3, 2, 1, 1, "stride 2: im2col"},
      {4, 64, 64, 64, 3, 2, 1, 64, "depthwise stride 2: im2col, one row per product"},
      {4, 32, 16, 32, 1, 1, 0, 1, "1x1: the input planes as they are"},
      {1, 256, 2, 256, 3, 1, 1, 1, "256 channels of 2x2: the product by rows of channels on im2col (in place on one thread)"},
      {1, 128, 8, 256, 3, 2, 1, 1, "256 channels of 4x4, stride 2: the product by rows of channels"},
      {1, 256, 4, 512, 1, 1, 0, 1, "1x1, 512 channels of 4x4: the input planes by rows of channels"},
      {1, 512, 2, 512, 3, 1, 1, 2, "2 groups of 256 channels of 2x2: each group's product by rows of channels"},
      {1, 256, 2, 256, 3, 1, 1, 2, "2 groups of 128 channels of 2x2: products too small to split, in bands"},
  };
  for (size_t t = 0; t < sizeof cases / sizeof *cases; t++) {
    conv_stride = cases[t].stride, conv_pad = cases[t].pad, conv_groups = cases[t].groups;
    int64_t n = cases[t].n, o = cases[t].o, k = cases[t].k, oh = (cases[t].hw + 2 * conv_pad - k) / conv_stride + 1;
    om_tensor *in[4] = {randn(3, 4, (int64_t[]){n, cases[t].c, cases[t].hw, cases[t].hw}),
                        randn(4, 4, (int64_t[]){o, cases[t].c / conv_groups, k, k}), randn(5, 1, (int64_t[]){o}),
                        randn(6, 4, (int64_t[]){n, o, oh, oh})};
    check_same_bits(cases[t].what, conv_fn, in, 4);
    for (int i = 0; i < 4; i++) om_tensor_release(in[i]);
  }
}

/* conv3d, then the gradients of sum(conv3d * r) for x and w; and both 3-D pools. */
static void conv3d_fn(om_tensor *const *in, om_tensor **out) {
  om_tensor *x = om_detach(in[0]), *w = om_detach(in[1]);
  om_tensor_set_requires_grad(x, true), om_tensor_set_requires_grad(w, true);
  out[0] = om_conv3d(x, w, in[2], (int64_t[]){1, 2, 1}, (int64_t[]){1, 1, 1}, NULL, 1);
  om_tensor *prod = om_mul(out[0], in[3]), *loss = om_sum(prod, NULL, 0, false);
  if (loss && om_backward(loss, NULL)) out[1] = om_tensor_grad(x), out[2] = om_tensor_grad(w);
  out[3] = om_max_pool3d(in[0], (int64_t[]){3, 3, 3}, (int64_t[]){2, 2, 2}, (int64_t[]){1, 1, 1}, NULL, true);
  out[4] = om_avg_pool3d(in[0], (int64_t[]){2, 3, 3}, (int64_t[]){1, 2, 2}, (int64_t[]){1, 1, 1}, true, false);
  om_tensor *all[] = {x, w, prod, loss};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) om_tensor_release(all[i]);
}

TEST(conv3d_and_pools3d_same_bits_on_any_thread_count) {
  om_tensor *in[4] = {randn(31, 5, (int64_t[]){2, 16, 8, 20, 20}), randn(32, 5, (int64_t[]){24, 16, 3, 3, 3}),
                      randn(33, 1, (int64_t[]){24}), randn(34, 5, (int64_t[]){2, 24, 8, 10, 20})};
  check_same_bits("conv3d 16 -> 24 channels of 8x20x20, stride (1, 2, 1), and its gradients; 3-D pools", conv3d_fn, in, 5);
  for (int i = 0; i < 4; i++) om_tensor_release(in[i]);
}

static void attention_fn(om_tensor *const *in, om_tensor **out) {
  out[0] = om_scaled_dot_product_attention(in[0], in[1], in[2], NULL, true, NULL);
}

TEST(attention_same_bits_on_any_thread_count) {
  om_tensor *in[3] = {randn(12, 4, (int64_t[]){2, 4, 200, 32}), randn(13, 4, (int64_t[]){2, 4, 200, 32}),
                      randn(14, 4, (int64_t[]){2, 4, 200, 32})};
  check_same_bits("causal attention, 8 heads of 200 tokens", attention_fn, in, 1);
  for (int i = 0; i < 3; i++) om_tensor_release(in[i]);
}

/* A small ResNet's forward: conv 3x3, batch norm, relu, a basic block (two 3x3 convs, the skip
 * added), a strided block with a 1x1 projection, pooling and a linear head. in: the input, then
 * the weights in the order used. */
static om_tensor *conv_bn(om_tensor *x, om_tensor *const *w, int64_t stride, int64_t pad, bool relu) {
  int64_t s[2] = {stride, stride}, p[2] = {pad, pad}, d[2] = {1, 1};
  om_tensor *y = om_conv2d(x, w[0], NULL, s, p, d, 1), *z = om_batch_norm(y, NULL, NULL, w[1], w[2], true, 0.1, 1e-5);
  om_tensor_release(y);
  if (!relu) return z;
  y = om_relu(z);
  om_tensor_release(z);
  return y;
}

static om_tensor *add_relu(om_tensor *a, om_tensor *b) {
  om_tensor *s = om_add(a, b), *r = om_relu(s);
  om_tensor_release(s), om_tensor_release(a), om_tensor_release(b);
  return r;
}

static void resnet_fn(om_tensor *const *in, om_tensor **out) {
  om_tensor *const *w = in + 1;
  om_tensor *stem = conv_bn(in[0], w, 1, 1, true);                                           /* 3 -> 32 */
  om_tensor *h = conv_bn(stem, w + 3, 1, 1, true), *b1 = add_relu(conv_bn(h, w + 6, 1, 1, false), stem); /* 32 -> 32 */
  om_tensor_release(h);
  h = conv_bn(b1, w + 9, 2, 1, true);                                                         /* 32 -> 64, stride 2 */
  om_tensor *b2 = add_relu(conv_bn(h, w + 12, 1, 1, false), conv_bn(b1, w + 15, 2, 0, false)); /* the 1x1 projection */
  int64_t one[2] = {1, 1};
  om_tensor *pooled = om_adaptive_avg_pool2d(b2, one), *flat = om_reshape(pooled, (int64_t[]){-1, 64}, 2);
  out[0] = om_linear(flat, w[18], w[19]);
  om_tensor *all[] = {h, b1, b2, pooled, flat};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) om_tensor_release(all[i]);
}

TEST(resnet_forward_same_bits_on_any_thread_count) {
  int64_t convs[6][4] = {{32, 3, 3, 3}, {32, 32, 3, 3}, {32, 32, 3, 3}, {64, 32, 3, 3}, {64, 64, 3, 3}, {64, 32, 1, 1}};
  om_tensor *in[21] = {randn(20, 4, (int64_t[]){4, 3, 32, 32})};
  for (int i = 0; i < 6; i++) {
    in[1 + 3 * i] = randn(21 + (uint64_t)i, 4, convs[i]);
    in[2 + 3 * i] = randn(31 + (uint64_t)i, 1, convs[i]); /* the norm's weight and bias [O] */
    in[3 + 3 * i] = randn(41 + (uint64_t)i, 1, convs[i]);
  }
  in[19] = randn(50, 2, (int64_t[]){10, 64});
  in[20] = randn(51, 1, (int64_t[]){10});
  check_same_bits("small resnet forward", resnet_fn, in, 1);
  for (int i = 0; i < 21; i++) om_tensor_release(in[i]);
}

static void lstm_fn(om_tensor *const *in, om_tensor **out) {
  out[0] = om_lstm(in[0], NULL, NULL, in + 1, 4, 1, true, false, false, &out[1], &out[2]);
}

/* A GRU over in[0] [T, N, I], then the gradients of sum(y * in[5]) for x and w_hh: the
 * backward's recomputed forward keeps every step's gates, written by the step's parts. */
static void gru_fn(om_tensor *const *in, om_tensor **out) {
  om_tensor *x = om_detach(in[0]), *whh = om_detach(in[2]);
  om_tensor_set_requires_grad(x, true), om_tensor_set_requires_grad(whh, true);
  om_tensor *params[4] = {in[1], whh, in[3], in[4]};
  out[0] = om_gru(x, NULL, params, 4, 1, true, false, false, &out[1]);
  om_tensor *prod = om_mul(out[0], in[5]), *loss = om_sum(prod, NULL, 0, false);
  if (loss && om_backward(loss, NULL)) out[2] = om_tensor_grad(x), out[3] = om_tensor_grad(whh);
  om_tensor *all[] = {x, whh, prod, loss};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) om_tensor_release(all[i]);
}

/* Each step's hidden units split into parts (whole 8-column tiles of the product, the last part
 * shorter where H is no multiple of the part): H 128 on 3 threads (48, 48, 32), and a GRU with H
 * 20 (16 and 4) forward and backward. */
TEST(lstm_same_bits_on_any_thread_count) {
  om_tensor *in[5] = {randn(7, 3, (int64_t[]){32, 64, 128}), randn(8, 2, (int64_t[]){512, 128}),
                      randn(9, 2, (int64_t[]){512, 128}), randn(10, 1, (int64_t[]){512}), randn(11, 1, (int64_t[]){512})};
  check_same_bits("lstm", lstm_fn, in, 3);
  for (int i = 0; i < 5; i++) om_tensor_release(in[i]);
  om_tensor *g[6] = {randn(12, 3, (int64_t[]){6, 512, 16}), randn(13, 2, (int64_t[]){60, 16}), randn(14, 2, (int64_t[]){60, 20}),
                     randn(15, 1, (int64_t[]){60}), randn(16, 1, (int64_t[]){60}), randn(17, 3, (int64_t[]){6, 512, 20})};
  check_same_bits("gru forward and backward", gru_fn, g, 4);
  for (int i = 0; i < 6; i++) om_tensor_release(g[i]);
}

/* interpolate's modes, each split by planes over the threads (at least a million multiply-adds'
 * worth: 4 x 32 planes of 64 x 64 outputs), on a strided input (a transposed view). */
static int interp_case;

static void interp_fn(om_tensor *const *in, om_tensor **out) {
  om_tensor *xt = om_transpose(in[0], 2, 3);
  if (interp_case == 0) out[0] = om_interpolate(xt, NULL, (double[]){2, 2}, OM_INTERPOLATE_BILINEAR, false);
  if (interp_case == 1) out[0] = om_interpolate(xt, (int64_t[]){64, 57}, NULL, OM_INTERPOLATE_BILINEAR, true);
  if (interp_case == 2) out[0] = om_interpolate(xt, NULL, (double[]){1.7, 2.3}, OM_INTERPOLATE_NEAREST, false);
  om_tensor_release(xt);
}

TEST(interpolate_same_bits_on_any_thread_count) {
  const char *what[] = {"bilinear x2", "bilinear to 64 x 57, align_corners", "nearest x1.7 x2.3"};
  om_tensor *in[1] = {randn(15, 4, (int64_t[]){4, 32, 32, 32})};
  for (interp_case = 0; interp_case < 3; interp_case++) check_same_bits(what[interp_case], interp_fn, in, 1);
  om_tensor_release(in[0]);
}

/* The elementwise maps (om__iterate_each: one run split in chunks of 64, or the outermost of
 * several dims), copies, reductions (split by their outputs), the norms' and softmax's rows and
 * the pools' planes (forward and gradient) and a transposed convolution's products, each above the size where it goes
 * to the pool (OM_EACH_SIMPLE 4 times 300,000 elements; gelu's 50 times 27,003), on contiguous,
 * transposed and broadcast operands. */
static int each_case;

static void each_fn(om_tensor *const *in, om_tensor **out) {
  om_tensor *t = NULL, *m = NULL;
  switch (each_case) {
    case 0: out[0] = om_gelu(in[1], false); break;                          /* one run, 27,003: not a multiple of 64 */
    case 1: out[0] = om_gelu(t = om_transpose(in[1], 0, 1), false); break;  /* [9001, 3] strided */
    case 2: out[0] = om_add(in[0], in[2]); break;                           /* [300, 1000] + [1000] */
    case 3: out[0] = om_contiguous(t = om_permute(in[3], (int64_t[]){2, 0, 1}, 3)); break;
    case 4: out[0] = om_clamp(in[0], (double[]){-0.5}, (double[]){0.25}); break;
    case 5: out[0] = om_where(m = om_gt(in[0], in[2]), in[0], in[2]); break;
    case 6: out[0] = om_masked_fill(in[0], m = om_lt(in[0], in[2]), 7.0); break;
    case 7: out[0] = om_layer_norm(in[0], (int64_t[]){1000}, 1, in[2], in[2], 1e-5); break;
    case 8: out[0] = om_group_norm(in[4], 4, NULL, NULL, 1e-5); break;
    case 9: out[0] = om_max_pool2d(in[4], (int64_t[]){3, 3}, (int64_t[]){2, 2}, (int64_t[]){1, 1}, NULL, false); break;
    case 10: out[0] = om_avg_pool2d(in[4], (int64_t[]){3, 3}, (int64_t[]){1, 1}, (int64_t[]){1, 1}, false, false); break;
    case 11: out[0] = om_softmax(in[0], 0); break; /* rows 1000 floats apart */
    case 12: out[0] = om_log_softmax(in[0], 1); break;
    case 13: out[0] = om_sum(in[4], (int64_t[]){0, 2, 3}, 3, false); break; /* split along the kept dim 1 */
    case 14: out[0] = om_mean(in[0], (int64_t[]){1}, 1, true); break;
    case 15: out[0] = om_amax(in[0], (int64_t[]){0}, 1, false); break; /* split along the inner dim */
    case 18: /* 8 products of 72 x 2304 x 16: one a part */
      out[0] = om_conv_transpose2d(t = om_reshape(in[4], (int64_t[]){8, 16, 48, 48}, 4), in[5], NULL, (int64_t[]){2, 2},
                                   (int64_t[]){1, 1}, (int64_t[]){1, 1}, 1, (int64_t[]){1, 1});
      break;
    case 16: case 17: { /* the pools' input gradients of sum(pool(x) * pool(x)) */
      om_tensor *x = om_detach(in[4]), *y, *loss;
      om_tensor_set_requires_grad(x, true);
      y = each_case == 16 ? om_max_pool2d(x, (int64_t[]){3, 3}, (int64_t[]){2, 2}, (int64_t[]){1, 1}, NULL, false)
                          : om_avg_pool2d(x, (int64_t[]){3, 3}, (int64_t[]){1, 1}, (int64_t[]){1, 1}, false, false);
      t = om_mul(y, y), loss = om_sum(t, NULL, 0, false);
      if (loss && om_backward(loss, NULL)) out[0] = om_tensor_grad(x);
      om_tensor_release(loss), om_tensor_release(y), om_tensor_release(x);
      break;
    }
  }
  om_tensor_release(t), om_tensor_release(m);
}

TEST(maps_norms_and_pools_same_bits_on_any_thread_count) {
  const char *what[] = {"gelu, one run", "gelu, transposed", "add, broadcast row", "copy of a permuted view", "clamp", "where",
                        "masked_fill", "layer_norm", "group_norm", "max_pool2d", "avg_pool2d", "softmax, dim 0", "log_softmax, dim 1",
                        "sum over dims 0, 2, 3", "mean over dim 1", "amax over dim 0", "max_pool2d gradient",
                        "avg_pool2d gradient", "conv_transpose2d, batch 8"};
  om_tensor *in[6] = {randn(30, 2, (int64_t[]){300, 1000}), randn(31, 2, (int64_t[]){3, 9001}), randn(32, 1, (int64_t[]){1000}),
                      randn(33, 3, (int64_t[]){64, 80, 60}), randn(34, 4, (int64_t[]){2, 16, 96, 96}),
                      randn(35, 4, (int64_t[]){16, 8, 3, 3})};
  for (each_case = 0; each_case < 19; each_case++) check_same_bits(what[each_case], each_fn, in, 1);
  for (int i = 0; i < 6; i++) om_tensor_release(in[i]);
}

#ifndef __EMSCRIPTEN__
#include <pthread.h>
/* A thread that makes a tensor with a convolution (its kernel scratch and block cache then hold
 * memory) and ends while the tensor lives on, handed to this thread, which releases it. The
 * ended thread never released its last tensor, so only its exit can free its cache: ASan's leak
 * check at the end of the test program (the ASan build's ctest) is what asserts it. Not under
 * RUN: the counts of live tensors are per thread, and a tensor released by another thread than
 * the one that made it leaves both counts off by one. */
static void *conv_and_exit(void *arg) {
  om_tensor **io = arg;
  om_tensor *t = om_relu(io[0]); /* a block the thread's cache keeps once released */
  om_tensor_release(t);
  io[2] = om_conv2d(io[0], io[1], NULL, (int64_t[]){1, 1}, (int64_t[]){1, 1}, (int64_t[]){1, 1}, 1);
  return NULL;
}

static void tensors_outliving_their_thread_leave_nothing_allocated(void) {
  om_tensor *io[3] = {randn(20, 4, (int64_t[]){2, 32, 40, 40}), randn(21, 4, (int64_t[]){64, 32, 3, 3}), NULL};
  pthread_t tid;
  CHECK(pthread_create(&tid, NULL, conv_and_exit, io) == 0);
  CHECK(pthread_join(tid, NULL) == 0);
  CHECK(io[2] != NULL && om_tensor_shape(io[2])[1] == 64);
  om__release_all(io, 3);
  printf("ok   tensors_outliving_their_thread_leave_nothing_allocated (ASan checks the leak at exit)\n");
}
#endif

int main(void) {
  RUN(thread_count_default_setting_and_errors);
  RUN(pool_runs_every_part_once_on_the_threads_asked_for);
  RUN(pool_jobs_back_to_back_and_after_sleeping);
  RUN(matmul_same_bits_on_any_thread_count);
  RUN(conv_same_bits_on_any_thread_count);
  RUN(conv3d_and_pools3d_same_bits_on_any_thread_count);
  RUN(attention_same_bits_on_any_thread_count);
  RUN(resnet_forward_same_bits_on_any_thread_count);
  RUN(lstm_same_bits_on_any_thread_count);
  RUN(interpolate_same_bits_on_any_thread_count);
  RUN(maps_norms_and_pools_same_bits_on_any_thread_count);
#ifndef __EMSCRIPTEN__
  tensors_outliving_their_thread_leave_nothing_allocated();
#endif
  TEST_MAIN_END();
}
