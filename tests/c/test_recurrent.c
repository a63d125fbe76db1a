/* LSTM and GRU (src/ops/recurrent.c): one step against gates computed by hand, whole sequences
 * (layers, directions, initial states, batch_first, unbatched) and their gradients against a
 * loop of per-step cells written with public ops, and the error paths. */
#include <stdlib.h>
#include <string.h>

#include "internal.h" /* om_scope for the reference cells */
#include "om_test.h"

static double sig(double v) { return 1.0 / (1.0 + exp(-v)); }

/* One LSTM step, I = H = 1: gates ifgo from w_ih = [.5,-1,2,.25], w_hh = [1,.5,-.5,2],
 * b_ih = [.1,.2,.3,.4], b_hh = [-.1,0,.1,.2]; x = 0.7, h0 = -0.3, c0 = 0.5. */
TEST(lstm_one_step_against_hand_computed_gates) {
  om_tensor *x = TF(SHAPE(1, 1, 1), 0.7f), *h0 = TF(SHAPE(1, 1, 1), -0.3f), *c0 = TF(SHAPE(1, 1, 1), 0.5f);
  om_tensor *p[4] = {TF(SHAPE(4, 1), .5f, -1, 2, .25f), TF(SHAPE(4, 1), 1, .5f, -.5f, 2), TF(SHAPE(4), .1f, .2f, .3f, .4f),
                     TF(SHAPE(4), -.1f, 0, .1f, .2f)};
  double i = sig(.5 * .7 + .1 + 1 * -.3 - .1), f = sig(-1 * .7 + .2 + .5 * -.3 + 0);
  double g = tanh(2 * .7 + .3 + -.5 * -.3 + .1), o = sig(.25 * .7 + .4 + 2 * -.3 + .2);
  double c = f * .5 + i * g, h = o * tanh(c);
  om_tensor *hn = NULL, *cn = NULL, *y = om_lstm(x, h0, c0, p, 4, 1, true, false, false, &hn, &cn);
  CHECK_VALUES(y, SHAPE(1, 1, 1), 1e-6, h);
  CHECK_VALUES(hn, SHAPE(1, 1, 1), 1e-6, h);
  CHECK_VALUES(cn, SHAPE(1, 1, 1), 1e-6, c);
  om_tensor *all[] = {x, h0, c0, p[0], p[1], p[2], p[3], y, hn, cn};
  for (size_t k = 0; k < sizeof all / sizeof *all; k++) om_tensor_release(all[k]);
}

/* One GRU step, I = H = 1, gates rzn: n = tanh(W_in x + b_in + r (W_hn h + b_hn)). */
TEST(gru_one_step_against_hand_computed_gates) {
  om_tensor *x = TF(SHAPE(1, 1, 1), 0.7f), *h0 = TF(SHAPE(1, 1, 1), -0.3f);
  om_tensor *p[4] = {TF(SHAPE(3, 1), .5f, -1, 2), TF(SHAPE(3, 1), 1, .5f, -.5f), TF(SHAPE(3), .1f, .2f, .3f), TF(SHAPE(3), -.1f, 0, .1f)};
  double r = sig(.5 * .7 + .1 + 1 * -.3 - .1), z = sig(-1 * .7 + .2 + .5 * -.3 + 0);
  double n = tanh(2 * .7 + .3 + r * (-.5 * -.3 + .1)), h = (1 - z) * n + z * -.3;
  om_tensor *hn = NULL, *y = om_gru(x, h0, p, 4, 1, true, false, false, &hn);
  CHECK_VALUES(y, SHAPE(1, 1, 1), 1e-6, h);
  CHECK_VALUES(hn, SHAPE(1, 1, 1), 1e-6, h);
  /* without biases and h0: h = (1 - z) n with z = sig(-x), n = tanh(2x) */
  om_tensor *hn2 = NULL, *y2 = om_gru(x, NULL, p, 2, 1, false, false, false, &hn2);
  CHECK_VALUES(y2, SHAPE(1, 1, 1), 1e-6, (1 - sig(-.7)) * tanh(1.4));
  om_tensor *all[] = {x, h0, p[0], p[1], p[2], p[3], y, hn, y2, hn2};
  for (size_t k = 0; k < sizeof all / sizeof *all; k++) om_tensor_release(all[k]);
}

/* ---- reference: a loop of cells written with public ops (autograd differentiates it) ---- */

/* One step: h (and *c for an LSTM) -> new h (new reference); *c is replaced. p: w_ih, w_hh, b_ih, b_hh. */
static om_tensor *cell(bool lstm, om_tensor *xt, om_tensor *h, om_tensor **c, om_tensor *const *p, int64_t H) {
  om_scope s = {0};
  om_tensor *gi = om__keep(&s, om_linear(xt, p[0], p[2])), *gh = om__keep(&s, om_linear(h, p[1], p[3]));
  om_tensor *a[4] = {0}, *b[4] = {0}, *out = NULL;
  int G = lstm ? 4 : 3;
  if (om_split(gi, H, 1, a, 4) != G || om_split(gh, H, 1, b, 4) != G) return NULL;
  for (int k = 0; k < G; k++) om__keep(&s, a[k]), om__keep(&s, b[k]);
  if (lstm) {
    om_tensor *i = om__keep(&s, om_sigmoid(om__keep(&s, om_add(a[0], b[0]))));
    om_tensor *f = om__keep(&s, om_sigmoid(om__keep(&s, om_add(a[1], b[1]))));
    om_tensor *g = om__keep(&s, om_tanh(om__keep(&s, om_add(a[2], b[2]))));
    om_tensor *o = om__keep(&s, om_sigmoid(om__keep(&s, om_add(a[3], b[3]))));
    om_tensor *cn = om_add(om__keep(&s, om_mul(f, *c)), om__keep(&s, om_mul(i, g)));
    om_tensor_release(*c);
    *c = cn;
    out = om_mul(o, om__keep(&s, om_tanh(cn)));
  } else {
    om_tensor *r = om__keep(&s, om_sigmoid(om__keep(&s, om_add(a[0], b[0]))));
    om_tensor *z = om__keep(&s, om_sigmoid(om__keep(&s, om_add(a[1], b[1]))));
    om_tensor *n = om__keep(&s, om_tanh(om__keep(&s, om_add(a[2], om__keep(&s, om_mul(r, b[2]))))));
    out = om_add(n, om__keep(&s, om_mul(z, om__keep(&s, om_sub(h, n))))); /* (1 - z) n + z h */
  }
  om__scope_end(&s);
  return out;
}

/* One layer-direction over x [T, N, I]: y [T, N, H] (new reference), h and c final states
 * (new references, [N, H]). h0/c0 may be NULL (zeros). */
static om_tensor *ref_layer(bool lstm, om_tensor *x, om_tensor *h0, om_tensor *c0, om_tensor *const *p, bool reverse,
                            om_tensor **hn, om_tensor **cn) {
  int64_t T = om_tensor_shape(x)[0], N = om_tensor_shape(x)[1], H = om_tensor_shape(p[1])[1];
  om_tensor *h = h0 ? om_tensor_retain(h0) : om_zeros((int64_t[]){N, H}, 2, OM_FLOAT32);
  om_tensor *c = c0 ? om_tensor_retain(c0) : om_zeros((int64_t[]){N, H}, 2, OM_FLOAT32);
  om_tensor **ys = calloc((size_t)T, sizeof *ys);
  for (int64_t s = 0; s < T; s++) {
    int64_t t = reverse ? T - 1 - s : s;
    om_tensor *xt = om_select(x, 0, t), *next = cell(lstm, xt, h, &c, p, H);
    om_tensor_release(xt);
    om_tensor_release(h);
    ys[t] = om_tensor_retain(h = next);
  }
  om_tensor *y = om_stack(ys, (int)T, 0);
  for (int64_t t = 0; t < T; t++) om_tensor_release(ys[t]);
  free(ys);
  *hn = h;
  if (cn) *cn = c;
  else om_tensor_release(c);
  return y;
}

/* A weighted sum of the outputs (a loss that reads every element). */
static om_tensor *loss_of(om_tensor *const *outs, int n) {
  om_tensor *total = NULL;
  for (int k = 0; k < n; k++) {
    om_tensor *w = om_rand(om_tensor_shape(outs[k]), om_tensor_ndim(outs[k]), (uint64_t)(50 + k), true);
    om_tensor *m = om_mul(outs[k], w), *s = om_sum(m, NULL, 0, false), *next = total ? om_add(total, s) : om_tensor_retain(s);
    om_tensor_release(w);
    om_tensor_release(m);
    om_tensor_release(s);
    om_tensor_release(total);
    total = next;
  }
  return total;
}

static bool close_to(om_tensor *a, om_tensor *b, double tol) {
  if (!a || !b || om_tensor_numel(a) != om_tensor_numel(b)) return false;
  for (int64_t k = 0; k < om_tensor_numel(a); k++)
    if (!(fabs(at(a, k) - at(b, k)) <= tol)) {
      printf("  element %lld: %.9g vs %.9g\n", (long long)k, at(a, k), at(b, k));
      return false;
    }
  return true;
}

/* A 2-layer bidirectional LSTM / GRU with initial states against the reference loop: outputs,
 * final states, and the gradients of every parameter, of x and of the initial states. */
static void check_against_loop(bool lstm, bool bias, bool with_state) {
  const int L = 2, D = 2, G = lstm ? 4 : 3, per = bias ? 4 : 2;
  const int64_t T = 4, N = 2, I = 3, H = 5;
  om_tensor *x = om_randn((int64_t[]){T, N, I}, 3, 1, true), *h0 = NULL, *c0 = NULL, *p[16] = {0};
  if (with_state) {
    h0 = om_randn((int64_t[]){L * D, N, H}, 3, 2, true);
    c0 = lstm ? om_randn((int64_t[]){L * D, N, H}, 3, 3, true) : NULL;
  }
  for (int l = 0, k = 0; l < L; l++)
    for (int d = 0; d < D; d++) {
      int64_t in = l ? D * H : I;
      p[k] = om_randn((int64_t[]){G * H, in}, 2, (uint64_t)(10 + k), true), k++;
      p[k] = om_randn((int64_t[]){G * H, H}, 2, (uint64_t)(10 + k), true), k++;
      if (bias) {
        p[k] = om_randn((int64_t[]){G * H}, 1, (uint64_t)(10 + k), true), k++;
        p[k] = om_randn((int64_t[]){G * H}, 1, (uint64_t)(10 + k), true), k++;
      }
    }
  int np = L * D * per;
  om_tensor *zb = om_zeros((int64_t[]){G * H}, 1, OM_FLOAT32);
  om_tensor *leaves[20] = {x, h0, c0};
  int nl = 3;
  for (int k = 0; k < np; k++) leaves[nl++] = p[k];
  om_tensor *g_op[20] = {0}, *g_ref[20] = {0};
  om_tensor *outs_op[3] = {0}, *outs_ref[3] = {0};
  for (int run = 0; run < 2; run++) {
    for (int k = 0; k < nl; k++)
      if (leaves[k]) om_tensor_zero_grad(leaves[k]), om_tensor_set_requires_grad(leaves[k], true);
    om_tensor **outs = run ? outs_ref : outs_op;
    if (run == 0) {
      outs[0] = lstm ? om_lstm(x, h0, c0, p, np, L, bias, false, true, &outs[1], &outs[2])
                     : om_gru(x, h0, p, np, L, bias, false, true, &outs[1]);
    } else { /* the loop, layer by layer */
      om_tensor *inp = om_tensor_retain(x), *hs[4], *cs[4];
      for (int l = 0; l < L; l++) {
        om_tensor *ys[2];
        for (int d = 0; d < D; d++) {
          int idx = l * D + d;
          om_tensor *q[4] = {p[idx * per], p[idx * per + 1], bias ? p[idx * per + 2] : zb, bias ? p[idx * per + 3] : zb};
          om_tensor *hi = h0 ? om_select(h0, 0, idx) : NULL, *ci = c0 ? om_select(c0, 0, idx) : NULL;
          ys[d] = ref_layer(lstm, inp, hi, ci, q, d == 1, &hs[idx], lstm ? &cs[idx] : NULL);
          om_tensor_release(hi);
          om_tensor_release(ci);
        }
        om_tensor_release(inp);
        inp = om_cat(ys, 2, 2);
        om_tensor_release(ys[0]);
        om_tensor_release(ys[1]);
      }
      outs[0] = inp;
      outs[1] = om_stack(hs, L * D, 0);
      if (lstm) outs[2] = om_stack(cs, L * D, 0);
      for (int k = 0; k < L * D; k++) {
        om_tensor_release(hs[k]);
        if (lstm) om_tensor_release(cs[k]);
      }
    }
    om_tensor *loss = loss_of(outs, lstm ? 3 : 2);
    CHECK(loss && om_backward(loss, NULL));
    om_tensor_release(loss);
    for (int k = 0; k < nl; k++) (run ? g_ref : g_op)[k] = leaves[k] ? om_tensor_grad(leaves[k]) : NULL;
  }
  for (int j = 0; j < (lstm ? 3 : 2); j++)
    if (!close_to(outs_op[j], outs_ref[j], 1e-5)) FAILED("%s bias=%d state=%d: output %d differs from the loop", lstm ? "lstm" : "gru", bias, with_state, j);
  for (int k = 0; k < nl; k++)
    if (leaves[k] && !close_to(g_op[k], g_ref[k], 1e-4))
      FAILED("%s bias=%d state=%d: gradient of leaf %d differs from the loop", lstm ? "lstm" : "gru", bias, with_state, k);
  for (int k = 0; k < 20; k++) {
    om_tensor_release(g_op[k]);
    om_tensor_release(g_ref[k]);
    if (k < nl) om_tensor_release(leaves[k]);
  }
  for (int j = 0; j < 3; j++) om_tensor_release(outs_op[j]), om_tensor_release(outs_ref[j]);
  om_tensor_release(zb);
}

TEST(lstm_sequence_and_gradients_match_a_loop_of_cells) {
  check_against_loop(true, true, true);
  check_against_loop(true, false, false);
}

TEST(gru_sequence_and_gradients_match_a_loop_of_cells) {
  check_against_loop(false, true, true);
  check_against_loop(false, false, false);
}

/* batch_first is the same layer on transposed input and output; an unbatched input is a batch of one. */
TEST(batch_first_and_unbatched_layouts) {
  om_tensor *p[4] = {om_randn((int64_t[]){12, 2}, 2, 1, true), om_randn((int64_t[]){12, 3}, 2, 2, true),
                     om_randn((int64_t[]){12}, 1, 3, true), om_randn((int64_t[]){12}, 1, 4, true)};
  om_tensor *x = om_randn((int64_t[]){4, 3, 2}, 3, 5, true), *xb = om_transpose(x, 0, 1); /* [T,N,I] and [N,T,I] */
  om_tensor *hn = NULL, *cn = NULL, *hb = NULL, *cb = NULL;
  om_tensor *y = om_lstm(x, NULL, NULL, p, 4, 1, true, false, false, &hn, &cn);
  om_tensor *yb = om_lstm(xb, NULL, NULL, p, 4, 1, true, true, false, &hb, &cb), *ybt = om_transpose(yb, 0, 1);
  CHECK_EQ_INT(om_tensor_shape(yb)[0], 3);
  CHECK(close_to(y, ybt, 0));
  CHECK(close_to(hn, hb, 0) && close_to(cn, cb, 0));
  om_tensor *x1 = om_select(x, 1, 0), *hu = NULL, *cu = NULL, *yu = om_lstm(x1, NULL, NULL, p, 4, 1, true, false, false, &hu, &cu);
  om_tensor *y1 = om_select(y, 1, 0), *h1 = om_select(hn, 1, 0);
  CHECK_EQ_INT(om_tensor_ndim(yu), 2);
  CHECK_EQ_INT(om_tensor_ndim(hu), 2);
  CHECK(close_to(yu, y1, 0) && close_to(hu, h1, 0));
  om_tensor *all[] = {p[0], p[1], p[2], p[3], x, xb, hn, cn, hb, cb, y, yb, ybt, x1, hu, cu, yu, y1, h1};
  for (size_t k = 0; k < sizeof all / sizeof *all; k++) om_tensor_release(all[k]);
}

/* The bits of two float tensors of one size are the same (+0 and -0 differ, NaNs must match). */
static bool same_bits(om_tensor *a, om_tensor *b) {
  if (!a || !b || om_tensor_numel(a) != om_tensor_numel(b)) return false;
  for (int64_t k = 0; k < om_tensor_numel(a); k++) {
    float u = (float)at(a, k), v = (float)at(b, k);
    uint32_t x, y;
    memcpy(&x, &u, 4), memcpy(&y, &v, 4);
    if (x != y) {
      printf("  element %lld: %.9g vs %.9g\n", (long long)k, u, v);
      return false;
    }
  }
  return true;
}

/* Batch 1 runs each step's h w_hh^T as one row (matmul.c's one_row_cols: 16 columns at a time,
 * the rest as cols_tile and small_m_tile), a batch of 5 as tiles of 4 rows against packed
 * panels; both sum each gate as om_linear does. So at batch 1 the layer has the bits of the loop
 * of cells written with public ops (LSTM; the GRU's reference writes h' another way), and each
 * row of a batch of 5 the bits of that row run alone, for hidden sizes around the 4-, 8- and
 * 16-column edges, a sum past one KC block of 256 (H = 260), both directions, on 1 and 2 threads
 * (at H = 260 and batch 5 a step splits its units between the threads). */
static void check_one_row(bool lstm, int64_t H, bool reverse) {
  const int G = lstm ? 4 : 3;
  const int64_t T = 3, N = 5, I = 3;
  om_tensor *x = om_randn((int64_t[]){T, N, I}, 3, 7, true), *p[4];
  for (int k = 0; k < 4; k++) {
    om_tensor *r = om_randn(k < 2 ? (int64_t[]){G * H, k ? H : I} : (int64_t[]){G * H}, k < 2 ? 2 : 1, (uint64_t)(20 + k), true);
    p[k] = om_scale(r, 0.3); /* gates away from saturation, so the bits are those of real sums */
    om_tensor_release(r);
  }
  om_tensor *x1 = om_slice(x, 1, 2, 3, 1); /* the batch's third row alone */
  om_tensor *in5[5] = {x, p[0], p[1], p[2], p[3]}, *in1[5] = {x1, p[0], p[1], p[2], p[3]}, *o5[2] = {0}, *o1[2] = {0};
  om_attrs at = {.n_i = 2, .i = {reverse, 1}};
  for (int threads = 1; threads <= 2; threads++) {
    om_set_num_threads(threads);
    CHECK(om__apply(lstm ? OM_OP_lstm_layer : OM_OP_gru_layer, in5, 5, &at, o5) == 2);
    CHECK(om__apply(lstm ? OM_OP_lstm_layer : OM_OP_gru_layer, in1, 5, &at, o1) == 2);
    om_tensor *row = o5[0] ? om_slice(o5[0], 1, 2, 3, 1) : NULL;
    if (!same_bits(o1[0], row)) FAILED("%s H=%lld reverse=%d threads=%d: batch 1 and row 2 of batch 5 differ", lstm ? "lstm" : "gru", (long long)H, reverse, threads);
    om_tensor_release(row);
    if (lstm && threads == 1) {
      om_tensor *hn = NULL, *cn = NULL, *y = ref_layer(true, x1, NULL, NULL, p, reverse, &hn, &cn);
      if (!same_bits(o1[0], y)) FAILED("lstm H=%lld reverse=%d: batch 1 differs from the loop of cells", (long long)H, reverse);
      om_tensor *st = om_stack((om_tensor *[]){hn, cn}, 2, 0);
      if (!same_bits(o1[1], st)) FAILED("lstm H=%lld reverse=%d: h_n, c_n differ from the loop of cells", (long long)H, reverse);
      om_tensor *all[] = {y, hn, cn, st};
      for (size_t k = 0; k < sizeof all / sizeof *all; k++) om_tensor_release(all[k]);
    }
    om__release_all(o5, 2);
    om__release_all(o1, 2);
  }
  om_set_num_threads(1);
  om_tensor *all[] = {x, x1, p[0], p[1], p[2], p[3]};
  for (size_t k = 0; k < sizeof all / sizeof *all; k++) om_tensor_release(all[k]);
}

TEST(batch_1_has_the_bits_of_the_loop_and_of_a_batch) {
  static const int64_t sizes[] = {1, 5, 7, 8, 9, 33, 64, 260};
  for (int lstm = 0; lstm < 2; lstm++)
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++)
      for (int reverse = 0; reverse < 2; reverse++) check_one_row(lstm, sizes[k], reverse);
}

TEST(error_paths) {
  om_tensor *x = om_zeros((int64_t[]){4, 2, 3}, 3, OM_FLOAT32), *x5 = om_zeros((int64_t[]){4, 2, 5}, 3, OM_FLOAT32);
  om_tensor *p[4] = {om_zeros((int64_t[]){12, 3}, 2, OM_FLOAT32), om_zeros((int64_t[]){12, 3}, 2, OM_FLOAT32),
                     om_zeros((int64_t[]){12}, 1, OM_FLOAT32), om_zeros((int64_t[]){12}, 1, OM_FLOAT32)};
  om_tensor *h_bad = om_zeros((int64_t[]){2, 2, 3}, 3, OM_FLOAT32), *h_ok = om_zeros((int64_t[]){1, 2, 3}, 3, OM_FLOAT32);
  om_tensor *gp[2] = {om_zeros((int64_t[]){9, 3}, 2, OM_FLOAT32), om_zeros((int64_t[]){9, 3}, 2, OM_FLOAT32)};
  om_tensor *out[2] = {0}, *xi = om_zeros((int64_t[]){4, 2, 3}, 3, OM_INT64), *x0 = om_zeros((int64_t[]){0, 2, 3}, 3, OM_FLOAT32);
  CHECK_ERROR(om_lstm(x5, NULL, NULL, p, 4, 1, true, false, false, NULL, NULL), OM_ERR_SHAPE_MISMATCH,
              "lstm_layer: x [4,2,5] has input size 5, w_ih [12,3] expects 3");
  CHECK_ERROR(om_lstm(x, h_bad, h_bad, p, 4, 1, true, false, false, NULL, NULL), OM_ERR_SHAPE_MISMATCH, "lstm: h0 is [2,2,3], expected [1,2,3]");
  CHECK_ERROR(om_lstm(x, h_ok, h_bad, p, 4, 1, true, false, false, NULL, NULL), OM_ERR_SHAPE_MISMATCH, "lstm: c0 is [2,2,3], expected [1,2,3]");
  CHECK_ERROR(om_lstm(x, h_ok, NULL, p, 4, 1, true, false, false, NULL, NULL), OM_ERR_INVALID_ARGUMENT, "give both h0 and c0");
  CHECK_ERROR(om_lstm(x, NULL, NULL, p, 4, 2, true, false, false, NULL, NULL), OM_ERR_INVALID_ARGUMENT,
              "lstm: expects 8 parameters (2 layers x 1 directions x w_ih, w_hh, b_ih, b_hh), got 4");
  CHECK_ERROR(om_lstm(x, NULL, NULL, p, 4, 0, true, false, false, NULL, NULL), OM_ERR_INVALID_ARGUMENT, "num_layers must be in [1, 1024]");
  CHECK_ERROR(om_lstm(p[2], NULL, NULL, p, 4, 1, true, false, false, NULL, NULL), OM_ERR_SHAPE_MISMATCH, "input must be 2-D (unbatched) or 3-D, got [12]");
  CHECK_ERROR(om_lstm(NULL, NULL, NULL, p, 4, 1, true, false, false, NULL, NULL), OM_ERR_INVALID_ARGUMENT, "lstm");
  CHECK_ERROR(om_lstm(x, NULL, NULL, gp, 2, 1, false, false, false, NULL, NULL), OM_ERR_SHAPE_MISMATCH,
              "lstm_layer: w_ih must be [4*hidden_size, input_size], got [9,3]");
  CHECK_ERROR(om_lstm(x, NULL, NULL, (om_tensor *[]){p[0], gp[1]}, 2, 1, false, false, false, NULL, NULL), OM_ERR_SHAPE_MISMATCH,
              "lstm_layer: w_hh is [9,3], expected [12,3]");
  CHECK_ERROR(om_gru(x, NULL, p, 2, 1, false, false, false, NULL), OM_ERR_SHAPE_MISMATCH, "gru_layer: w_hh is [12,3], expected [12,4]");
  CHECK_ERROR(om_gru(xi, NULL, gp, 2, 1, false, false, false, NULL), OM_ERR_DTYPE_MISMATCH, "gru_layer: takes float32, input 0 is int64");
  CHECK_ERROR(om_gru(x0, NULL, gp, 2, 1, false, false, false, NULL), OM_ERR_INVALID_ARGUMENT, "the sequence length must be at least 1");
  CHECK_ERROR(om_gru(x, h_bad, gp, 2, 1, false, false, false, NULL), OM_ERR_SHAPE_MISMATCH, "gru: h0 is [2,2,3], expected [1,2,3]");
  /* the op itself: input counts and attrs */
  CHECK_ERROR(om_apply(OM_OP_gru_layer, (om_tensor *[]){x, gp[0], gp[1], h_ok, h_ok}, 5, (int64_t[]){0, 0}, 2, NULL, 0, out, 2) == 2,
              OM_ERR_INVALID_ARGUMENT, "gru_layer: takes x, w_ih, w_hh and optionally h0: 3 or 4 inputs, got 5");
  CHECK_ERROR(om_apply(OM_OP_lstm_layer, (om_tensor *[]){x, p[0], p[1]}, 3, (int64_t[]){2, 0}, 2, NULL, 0, out, 2) == 2,
              OM_ERR_INVALID_ARGUMENT, "lstm_layer: reverse and bias are 0 or 1, got 2 and 0");
  CHECK_ERROR(om_apply(OM_OP_lstm_layer, (om_tensor *[]){x, p[0], p[1], h_ok, h_ok}, 5, (int64_t[]){0, 0}, 2, NULL, 0, out, 2) == 2,
              OM_ERR_SHAPE_MISMATCH, "lstm_layer: h0 is [1,2,3], expected [2,3]");
  om_tensor *all[] = {x, x5, p[0], p[1], p[2], p[3], h_bad, h_ok, gp[0], gp[1], xi, x0};
  for (size_t k = 0; k < sizeof all / sizeof *all; k++) om_tensor_release(all[k]);
}

/* The backward recomputes the forward from the inputs, so changing one in place (here h0, the
 * layer op's input 5 after x, two weights and two biases) between forward and backward is an error. */
TEST(an_input_changed_in_place_after_forward_is_caught) {
  om_tensor *x = om_randn((int64_t[]){3, 2, 2}, 3, 1, true), *h0 = om_randn((int64_t[]){1, 2, 3}, 3, 2, true);
  om_tensor *p[4] = {om_randn((int64_t[]){9, 2}, 2, 3, true), om_randn((int64_t[]){9, 3}, 2, 4, true),
                     om_randn((int64_t[]){9}, 1, 5, true), om_randn((int64_t[]){9}, 1, 6, true)};
  om_tensor_set_requires_grad(p[0], true);
  om_tensor *y = om_gru(x, h0, p, 4, 1, true, false, false, NULL), *s = om_sum(y, NULL, 0, false);
  CHECK(om_tensor_fill(h0, 0.5));
  CHECK_ERROR(om_backward(s, NULL), OM_ERR_AUTOGRAD, "input 5 of gru_layer was changed in place");
  om_tensor *all[] = {x, h0, p[0], p[1], p[2], p[3], y, s};
  for (size_t k = 0; k < sizeof all / sizeof *all; k++) om_tensor_release(all[k]);
}

int main(void) {
  RUN(lstm_one_step_against_hand_computed_gates);
  RUN(gru_one_step_against_hand_computed_gates);
  RUN(lstm_sequence_and_gradients_match_a_loop_of_cells);
  RUN(gru_sequence_and_gradients_match_a_loop_of_cells);
  RUN(batch_first_and_unbatched_layouts);
  RUN(batch_1_has_the_bits_of_the_loop_and_of_a_batch);
  RUN(error_paths);
  RUN(an_input_changed_in_place_after_forward_is_caught);
  TEST_MAIN_END();
}
