/* The norm family (src/ops/norm.c) against values computed by hand: softmax and log_softmax,
 * layer_norm, group_norm, batch_norm in both modes with PyTorch's running-statistics update,
 * scaled dot-product attention; gradients of training-mode batch_norm by finite differences
 * (the table test checks the evaluation mode); every error path with its kind and message; and
 * the refusal of training-mode batch_norm while tracing. The table-driven tests (test_ops.c)
 * cover layout independence and the gradients of the sample calls. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "om_test.h"

TEST(softmax_rows_sum_to_one_and_match_exp_over_sum) {
  om_tensor *x = TF(SHAPE(2, 3), 1, 2, 3, -1, 0, 1000);
  om_tensor *y = om_softmax(x, 1), *y0 = om_softmax(x, 0), *ly = om_log_softmax(x, -1);
  double s = exp(1) + exp(2) + exp(3);
  CHECK_VALUES(y, SHAPE(2, 3), 1e-6, exp(1) / s, exp(2) / s, exp(3) / s, 0, 0, 1);
  CHECK_VALUES(ly, SHAPE(2, 3), 1e-5, 1 - log(s), 2 - log(s), 3 - log(s), -1001, -1000, 0);
  for (int r = 0; r < 2; r++) CHECK_NEAR(at(y, 3 * r) + at(y, 3 * r + 1) + at(y, 3 * r + 2), 1, 1e-6);
  /* along dim 0: columns; (1, -1) -> e^2 / (e^2 + 1) */
  CHECK_NEAR(at(y0, 0), exp(2) / (exp(2) + 1), 1e-6);
  CHECK_NEAR(at(y0, 3), 1 / (exp(2) + 1), 1e-6);
  CHECK_NEAR(at(y0, 5), 1, 1e-6);
  om_tensor *s0 = om_scalar(3, OM_FLOAT32), *s1 = om_softmax(s0, 0), *s2 = om_log_softmax(s0, -1);
  CHECK_VALUES(s1, SHAPE(), 0, 1);
  CHECK_VALUES(s2, SHAPE(), 0, 0);
  om_tensor *m = TF(SHAPE(1, 2), -INFINITY, -INFINITY), *my = om_softmax(m, 1); /* as PyTorch: NaN */
  CHECK(isnan(at(my, 0)) && isnan(at(my, 1)));
  CHECK_ERROR(om_softmax(x, 2), OM_ERR_INDEX_OUT_OF_RANGE, "softmax: dim 2 is out of range");
  om_tensor *xi = om_cast(x, OM_INT64);
  CHECK_ERROR(om_log_softmax(xi, 0), OM_ERR_DTYPE_MISMATCH, "log_softmax: takes float32, not int64");
  om_tensor *all[] = {x, y, y0, ly, s0, s1, s2, m, my, xi};
  for (size_t k = 0; k < sizeof all / sizeof *all; k++) om_tensor_release(all[k]);
}

TEST(layer_norm_matches_a_hand_computation) {
  /* rows (1, 2, 3) and (2, 4, 6): means 2 and 4, biased variances 2/3 and 8/3 */
  om_tensor *x = TF(SHAPE(2, 3), 1, 2, 3, 2, 4, 6), *w = TF(SHAPE(3), 1, 2, 3), *b = TF(SHAPE(3), 0, 1, -1);
  double eps = 1e-5, r0 = 1 / sqrt(2.0 / 3 + eps), r1 = 1 / sqrt(8.0 / 3 + eps);
  om_tensor *y = om_layer_norm(x, (int64_t[]){3}, 1, w, b, eps), *yn = om_layer_norm(x, (int64_t[]){3}, 1, NULL, NULL, eps);
  CHECK_VALUES(y, SHAPE(2, 3), 1e-5, -r0, 1, 3 * r0 - 1, -2 * r1, 1, 3 * 2 * r1 - 1);
  CHECK_VALUES(yn, SHAPE(2, 3), 1e-5, -r0, 0, r0, -2 * r1, 0, 2 * r1);
  /* over both dims: one row of 6 values, mean 3 */
  om_tensor *y2 = om_layer_norm(x, (int64_t[]){2, 3}, 2, NULL, b, eps);
  CHECK(y2 == NULL); /* bias [3] is not normalized_shape [2, 3] */
  om_clear_error();
  om_tensor *z = om_layer_norm(x, (int64_t[]){2, 3}, 2, NULL, NULL, 0);
  double var = (4 + 1 + 0 + 1 + 1 + 9) / 6.0;
  CHECK_NEAR(at(z, 0), -2 / sqrt(var), 1e-5);
  CHECK_NEAR(at(z, 5), 3 / sqrt(var), 1e-5);
  CHECK_ERROR(om_layer_norm(x, (int64_t[]){4}, 1, NULL, NULL, eps) != NULL, OM_ERR_SHAPE_MISMATCH,
              "layer_norm: given normalized_shape=[4], expected input with shape [*, 4], but got input of size [2,3]");
  CHECK_ERROR(om_layer_norm(x, (int64_t[]){2, 3}, 2, w, NULL, eps) != NULL, OM_ERR_SHAPE_MISMATCH,
              "layer_norm: weight has shape [3], expected [2,3]");
  CHECK_ERROR(om_layer_norm(x, NULL, 0, NULL, NULL, eps) != NULL, OM_ERR_INVALID_ARGUMENT,
              "expected normalized_shape to be at least 1-dimensional");
  /* the op's other outputs: mean and rstd per row, shaped [2, 1] */
  om_tensor *out[3] = {0};
  CHECK_EQ_INT(om_apply(OM_OP_layer_norm, &x, 1, (int64_t[]){0, 0, 3}, 3, &eps, 1, out, 3), 3);
  CHECK_VALUES(out[1], SHAPE(2, 1), 1e-6, 2, 4);
  CHECK_VALUES(out[2], SHAPE(2, 1), 1e-5, r0, r1);
  for (int j = 0; j < 3; j++) om_tensor_release(out[j]);
  om_tensor *all[] = {x, w, b, y, yn, z};
  for (size_t k = 0; k < sizeof all / sizeof *all; k++) om_tensor_release(all[k]);
}

TEST(group_norm_matches_a_hand_computation_and_its_special_cases) {
  /* x [1, 4, 2], 2 groups: group 0 = channels 0-1 = (0, 2, 4, 6), group 1 = (1, 1, 1, 5) */
  om_tensor *x = TF(SHAPE(1, 4, 2), 0, 2, 4, 6, 1, 1, 1, 5), *w = TF(SHAPE(4), 1, 2, 3, 4), *b = TF(SHAPE(4), 0, 0, 1, 1);
  om_tensor *y = om_group_norm(x, 2, w, b, 0);
  double r0 = 1 / sqrt(5.0), r1 = 1 / sqrt(3.0); /* variances 5 and 3; means 3 and 2 */
  CHECK_VALUES(y, SHAPE(1, 4, 2), 1e-5, -3 * r0, -1 * r0, 2 * 1 * r0, 2 * 3 * r0, 3 * -1 * r1 + 1, 3 * -1 * r1 + 1,
               4 * -1 * r1 + 1, 4 * 3 * r1 + 1);
  /* one group is layer_norm over [C, *]; C groups is instance norm (layer_norm over [*] per channel) */
  om_tensor *x4 = om_randn((int64_t[]){2, 4, 3}, 3, 7, true);
  om_tensor *g1 = om_group_norm(x4, 1, NULL, NULL, 1e-5), *l1 = om_layer_norm(x4, (int64_t[]){4, 3}, 2, NULL, NULL, 1e-5);
  om_tensor *g4 = om_group_norm(x4, 4, NULL, NULL, 1e-5), *l4 = om_layer_norm(x4, (int64_t[]){3}, 1, NULL, NULL, 1e-5);
  for (int k = 0; k < 24; k++) {
    CHECK_NEAR(at(g1, k), at(l1, k), 1e-6);
    CHECK_NEAR(at(g4, k), at(l4, k), 1e-6);
  }
  CHECK_ERROR(om_group_norm(x, 3, NULL, NULL, 1e-5) != NULL, OM_ERR_INVALID_ARGUMENT,
              "group_norm: expected the number of channels in input to be divisible by num_groups, but got input of shape [1,4,2] and num_groups=3");
  CHECK_ERROR(om_group_norm(x, 2, b, x, 1e-5) != NULL, OM_ERR_SHAPE_MISMATCH, "group_norm: bias has shape [1,4,2], expected [4]");
  om_tensor *v = TF(SHAPE(4), 1, 2, 3, 4);
  CHECK_ERROR(om_group_norm(v, 1, NULL, NULL, 1e-5) != NULL, OM_ERR_INVALID_ARGUMENT, "group_norm: expected an input [N, C, *]");
  om_tensor *all[] = {x, w, b, y, x4, g1, l1, g4, l4, v};
  for (size_t k = 0; k < sizeof all / sizeof *all; k++) om_tensor_release(all[k]);
}

TEST(batch_norm_training_updates_the_running_stats_as_pytorch) {
  /* x [4, 2]: channel 0 = (1, 2, 3, 6): mean 3, biased var 3.5, unbiased 14/3;
   *           channel 1 = (0, 0, 0, 4): mean 1, biased var 3, unbiased 4 */
  om_tensor *x = TF(SHAPE(4, 2), 1, 0, 2, 0, 3, 0, 6, 4);
  om_tensor *rm = TF(SHAPE(2), 0.5, -1), *rv = TF(SHAPE(2), 1, 2), *w = TF(SHAPE(2), 2, 1), *b = TF(SHAPE(2), 0, 1);
  CHECK(om_tensor_set_requires_grad(x, true));
  uint64_t vm = om_tensor_version(rm), vv = om_tensor_version(rv);
  om_tensor *y = om_batch_norm(x, rm, rv, w, b, true, 0.1, 0);
  double r0 = 1 / sqrt(3.5), r1 = 1 / sqrt(3.0);
  CHECK_VALUES(y, SHAPE(4, 2), 1e-5, 2 * -2 * r0, -1 * r1 + 1, 2 * -1 * r0, -1 * r1 + 1, 0, -1 * r1 + 1, 2 * 3 * r0, 3 * r1 + 1);
  /* running = (1 - momentum) running + momentum * batch statistic (unbiased variance) */
  CHECK_VALUES(rm, SHAPE(2), 1e-6, 0.9 * 0.5 + 0.1 * 3, 0.9 * -1 + 0.1 * 1);
  CHECK_VALUES(rv, SHAPE(2), 1e-6, 0.9 * 1 + 0.1 * 14.0 / 3, 0.9 * 2 + 0.1 * 4);
  CHECK(om_tensor_version(rm) > vm && om_tensor_version(rv) > vv);
  CHECK(!om_tensor_requires_grad(rm) && !om_tensor_requires_grad(rv)); /* the update is not recorded */
  CHECK(om_tensor_requires_grad(y));
  /* evaluation: the (updated) running statistics normalise, nothing changes */
  vm = om_tensor_version(rm);
  om_tensor *e = om_batch_norm(x, rm, rv, NULL, NULL, false, 0.1, 1e-5);
  CHECK_NEAR(at(e, 0), (1 - at(rm, 0)) / sqrt(at(rv, 0) + 1e-5), 1e-5);
  CHECK_NEAR(at(e, 7), (4 - at(rm, 1)) / sqrt(at(rv, 1) + 1e-5), 1e-5);
  CHECK_EQ_INT(om_tensor_version(rm), vm);
  /* training without running statistics: batch statistics, nothing to update */
  om_tensor *t = om_batch_norm(x, NULL, NULL, NULL, NULL, true, 0.1, 0);
  CHECK_NEAR(at(t, 0), -2 * r0, 1e-5);
  om_tensor *one = TF(SHAPE(1, 2), 1, 2), *x3 = om_reshape(x, (int64_t[]){2, 2, 2}, 3);
  CHECK_ERROR(om_batch_norm(one, rm, rv, NULL, NULL, true, 0.1, 1e-5) != NULL, OM_ERR_INVALID_ARGUMENT,
              "batch_norm: expected more than 1 value per channel when training, got input size [1,2]");
  CHECK_ERROR(om_batch_norm(x, NULL, NULL, NULL, NULL, false, 0.1, 1e-5) != NULL, OM_ERR_INVALID_ARGUMENT,
              "running_mean and running_var must be given in evaluation mode");
  CHECK_ERROR(om_batch_norm(x, rm, NULL, NULL, NULL, true, 0.1, 1e-5) != NULL, OM_ERR_INVALID_ARGUMENT, "give both running_mean and running_var");
  CHECK_ERROR(om_batch_norm(x3, rm, rv, x, NULL, false, 0.1, 1e-5) != NULL, OM_ERR_SHAPE_MISMATCH,
              "batch_norm: weight has shape [4,2], expected [2]");
  CHECK_ERROR(om_batch_norm(x3, rm, rv, NULL, x, false, 0.1, 1e-5) != NULL, OM_ERR_SHAPE_MISMATCH,
              "batch_norm: bias has shape [4,2], expected [2]");
  om_tensor *all[] = {x, rm, rv, w, b, y, e, t, one, x3};
  for (size_t k = 0; k < sizeof all / sizeof *all; k++) om_tensor_release(all[k]);
}

/* sum(batch_norm(x, training, no running stats) * c) for the finite differences. */
static double bn_loss(om_tensor *x, om_tensor *w, om_tensor *b, om_tensor *c) {
  bool prev = om_set_grad_enabled(false);
  om_tensor *y = om_batch_norm(x, NULL, NULL, w, b, true, 0.1, 1e-5), *p = om_mul(y, c), *s = om_sum(p, NULL, 0, false);
  double v = at(s, 0);
  om_set_grad_enabled(prev);
  om_tensor_release(y);
  om_tensor_release(p);
  om_tensor_release(s);
  return v;
}

TEST(batch_norm_training_gradients_match_finite_differences) {
  om_tensor *x = om_randn((int64_t[]){3, 2, 2}, 3, 11, true), *w = om_rand((int64_t[]){2}, 1, 12, true);
  om_tensor *b = om_rand((int64_t[]){2}, 1, 13, true), *c = om_randn((int64_t[]){3, 2, 2}, 3, 14, true);
  om_tensor *ps[3] = {x, w, b};
  for (int i = 0; i < 3; i++) CHECK(om_tensor_set_requires_grad(ps[i], true));
  om_tensor *y = om_batch_norm(x, NULL, NULL, w, b, true, 0.1, 1e-5), *p = om_mul(y, c), *s = om_sum(p, NULL, 0, false);
  CHECK(om_backward(s, NULL));
  for (int i = 0; i < 3; i++) {
    om_tensor *g = om_tensor_grad(ps[i]);
    for (int64_t k = 0; k < om_tensor_numel(ps[i]); k++) {
      int64_t idx[3], rem = k;
      for (int d = om_tensor_ndim(ps[i]) - 1; d >= 0; d--) idx[d] = rem % om_tensor_shape(ps[i])[d], rem /= om_tensor_shape(ps[i])[d];
      double v0 = at(ps[i], k), h = 1e-3;
      bool prev = om_set_grad_enabled(false); /* in-place changes of a leaf that requires grad */
      om_tensor_set(ps[i], idx, v0 + h);
      double up = bn_loss(x, w, b, c);
      om_tensor_set(ps[i], idx, v0 - h);
      double down = bn_loss(x, w, b, c);
      om_tensor_set(ps[i], idx, v0);
      om_set_grad_enabled(prev);
      CHECK_NEAR(at(g, k), (up - down) / (2 * h), 5e-3);
    }
    om_tensor_release(g);
  }
  /* two training steps before one backward (gradient accumulation): the running statistics
   * change between them, which the first graph's backward does not mind */
  om_tensor *rm = om_zeros((int64_t[]){2}, 1, OM_FLOAT32), *rv = om_ones((int64_t[]){2}, 1, OM_FLOAT32);
  om_tensor *y1 = om_batch_norm(x, rm, rv, w, b, true, 0.1, 1e-5), *y2 = om_batch_norm(x, rm, rv, w, b, true, 0.1, 1e-5);
  om_tensor *both = om_add(y1, y2), *tot = om_sum(both, NULL, 0, false);
  CHECK(om_backward(tot, NULL));
  om_tensor *all[] = {x, w, b, c, y, p, s, rm, rv, y1, y2, both, tot};
  for (size_t k = 0; k < sizeof all / sizeof *all; k++) om_tensor_release(all[k]);
}

TEST(scaled_dot_product_attention_matches_its_definition) {
  om_tensor *q = om_randn((int64_t[]){2, 3, 4}, 3, 21, true), *k = om_randn((int64_t[]){2, 5, 4}, 3, 22, true);
  om_tensor *v = om_randn((int64_t[]){2, 5, 6}, 3, 23, true);
  om_tensor *o = om_scaled_dot_product_attention(q, k, v, NULL, false, NULL);
  /* by hand: softmax(q k^T / 2) v */
  om_tensor *kt = om_transpose(k, 1, 2), *qk = om_matmul(q, kt), *sc = om_scale(qk, 0.5), *p = om_softmax(sc, -1), *ref = om_matmul(p, v);
  CHECK(o && om_tensor_ndim(o) == 3 && om_tensor_shape(o)[2] == 6);
  CHECK(o && ref && !memcmp(om__data(o), om__data(ref), 36 * sizeof(float))); /* the attention op: the same bits */
  /* causal: query 0 sees key 0 only, so its output is v's row 0 */
  om_tensor *qs = om_randn((int64_t[]){5, 4}, 2, 24, true), *ks = om_randn((int64_t[]){5, 4}, 2, 25, true), *vs = om_randn((int64_t[]){5, 6}, 2, 26, true);
  om_tensor *c = om_scaled_dot_product_attention(qs, ks, vs, NULL, true, NULL);
  for (int j = 0; j < 6; j++) CHECK_NEAR(at(c, j), at(vs, j), 1e-6);
  /* a bool mask of all true changes nothing; a float mask of zeros neither; scale given */
  om_tensor *t = om_full((int64_t[]){3, 5}, 2, OM_BOOL, 1), *z = om_zeros((int64_t[]){3, 5}, 2, OM_FLOAT32);
  double half = 0.5;
  om_tensor *ob = om_scaled_dot_product_attention(q, k, v, t, false, &half), *of = om_scaled_dot_product_attention(q, k, v, z, false, NULL);
  for (int j = 0; j < 36; j++) {
    CHECK_NEAR(at(ob, j), at(o, j), 1e-6);
    CHECK_NEAR(at(of, j), at(o, j), 1e-6);
  }
  CHECK_ERROR(om_scaled_dot_product_attention(q, k, v, t, true, NULL) != NULL, OM_ERR_INVALID_ARGUMENT,
              "explicit attn_mask should not be set when is_causal=True");
  om_tensor *mi = om_cast(z, OM_INT64);
  CHECK_ERROR(om_scaled_dot_product_attention(q, k, v, mi, false, NULL) != NULL, OM_ERR_DTYPE_MISMATCH, "attn_mask must be bool or float32");
  CHECK_ERROR(om_scaled_dot_product_attention(q, k, q, NULL, false, NULL) != NULL, OM_ERR_SHAPE_MISMATCH,
              "attention: q [2,3,4], kt [2,4,5] and v [2,3,4] do not match");
  om_tensor *all[] = {q, k, v, o, kt, qk, sc, p, ref, qs, ks, vs, c, t, z, ob, of, mi};
  for (size_t j = 0; j < sizeof all / sizeof *all; j++) om_tensor_release(all[j]);
}

/* The separate ops the attention op stands for (src/ops/matmul.c): new reference. */
static om_tensor *attention_by_ops(om_tensor *q, om_tensor *kt, om_tensor *v, om_tensor *mask, int kind, int sk, double scale,
                                   double fill) {
  om_tensor *c = om_scalar(scale, OM_FLOAT32), *f = om_scalar(fill, OM_FLOAT32);
  om_tensor *qs = sk == OM_ATTN_Q_MUL ? om_mul(q, c) : sk == OM_ATTN_Q_DIV ? om_div(q, c) : om_tensor_retain(q), *x = om_matmul(qs, kt), *y = x;
  if (sk == OM_ATTN_MUL) y = om_mul(x, c);
  if (sk == OM_ATTN_DIV) y = om_div(x, c);
  om_tensor *z = !mask ? om_tensor_retain(y) : kind == OM_ATTN_ADD ? om_add(y, mask) : kind == OM_ATTN_KEEP ? om_where(mask, y, f) : om_where(mask, f, y);
  om_tensor *p = om_softmax(z, -1), *out = om_matmul(p, v);
  if (y != x) om_tensor_release(y);
  om_tensor *all[] = {c, f, qs, x, z, p};
  for (size_t k = 0; k < sizeof all / sizeof *all; k++) om_tensor_release(all[k]);
  return out;
}

static bool same_bits(om_tensor *a, om_tensor *b) {
  om_tensor *x = a ? om_contiguous(a) : NULL, *y = b ? om_contiguous(b) : NULL;
  bool same = x && y && om_tensor_ndim(x) == om_tensor_ndim(y) &&
              !memcmp(om_tensor_shape(x), om_tensor_shape(y), sizeof(int64_t) * (size_t)om_tensor_ndim(x)) &&
              !memcmp(om__data(x), om__data(y), sizeof(float) * (size_t)om_tensor_numel(x));
  om_tensor_release(x);
  om_tensor_release(y);
  return same;
}

/* Every mask kind and scale kind, batch dims broadcast from every operand, the key read
 * through a transposed view, more query rows than one score block (64), a mask broadcast
 * along rows, batches and heads, and a fully masked row (NaN, as softmax gives): the op's bits
 * are the separate ops' bits. */
TEST(attention_op_is_the_separate_ops_bit_for_bit) {
  om_tensor *q = om_randn((int64_t[]){2, 1, 70, 8}, 4, 41, true), *k = om_randn((int64_t[]){1, 3, 33, 8}, 4, 42, true);
  om_tensor *v = om_randn((int64_t[]){2, 3, 33, 5}, 4, 43, true), *kt = om_transpose(k, -1, -2);
  om_tensor *fm = om_randn((int64_t[]){70, 33}, 2, 44, true), *u = om_rand((int64_t[]){2, 1, 1, 33}, 4, 45, true);
  om_tensor *half = om_scalar(0.5, OM_FLOAT32), *bm = om_gt(u, half), *causal0 = om_ones((int64_t[]){70, 33}, 2, OM_BOOL);
  om_tensor *causal = om_tril(causal0, 0);
  struct { om_tensor *mask; int kind; double fill; } masks[] = {
      {NULL, OM_ATTN_ADD, 0}, {fm, OM_ATTN_ADD, 0}, {bm, OM_ATTN_KEEP, -INFINITY}, {bm, OM_ATTN_FILL, -1e9}, {causal, OM_ATTN_KEEP, -INFINITY}};
  for (size_t m = 0; m < sizeof masks / sizeof *masks; m++)
    for (int sk = OM_ATTN_UNSCALED; sk <= OM_ATTN_Q_DIV; sk++) { /* 1 / sqrt(8), and 3 for q's kinds: not a power of two */
      double scale = sk >= OM_ATTN_Q_MUL ? 3 : 0.35355339059327373;
      om_tensor *a = om__attention(q, kt, v, masks[m].mask, masks[m].kind, sk, scale, masks[m].fill);
      om_tensor *b = attention_by_ops(q, kt, v, masks[m].mask, masks[m].kind, sk, scale, masks[m].fill);
      if (!same_bits(a, b)) FAILED("mask %d, scale kind %d: the op and the separate ops differ", (int)m, sk);
      CHECK(a && om_tensor_ndim(a) == 4 && om_tensor_shape(a)[0] == 2 && om_tensor_shape(a)[1] == 3 && om_tensor_shape(a)[2] == 70);
      om_tensor_release(a);
      om_tensor_release(b);
    }
  /* a row every key is masked out of: NaN, as the separate ops give */
  om_tensor *none = om_zeros((int64_t[]){70, 33}, 2, OM_BOOL), *n = om__attention(q, kt, v, none, OM_ATTN_KEEP, OM_ATTN_MUL, 0.5, -INFINITY);
  CHECK(n && isnan(at(n, 0)));
  /* no keys (S = 0): zeros, as a product over nothing; no head dim (E = 0): the mean of v's rows */
  om_tensor *q0 = om_randn((int64_t[]){3, 0}, 2, 46, true), *kt0 = om_zeros((int64_t[]){0, 4}, 2, OM_FLOAT32);
  om_tensor *v4 = TF(SHAPE(4, 1), 1, 2, 3, 6), *kte = om_zeros((int64_t[]){4, 0}, 2, OM_FLOAT32), *ve = om_zeros((int64_t[]){0, 1}, 2, OM_FLOAT32);
  om_tensor *q4 = om_randn((int64_t[]){3, 4}, 2, 47, true);
  om_tensor *mean = om__attention(q0, kt0, v4, NULL, OM_ATTN_ADD, OM_ATTN_MUL, 0.5, 0), *empty = om__attention(q4, kte, ve, NULL, OM_ATTN_ADD, OM_ATTN_MUL, 0.5, 0);
  CHECK_VALUES(mean, SHAPE(3, 1), 1e-6, 3, 3, 3);
  CHECK_VALUES(empty, SHAPE(3, 1), 0, 0, 0, 0);
  /* errors, with kind and message */
  CHECK_ERROR(om__attention(q, kt, v, fm, OM_ATTN_KEEP, OM_ATTN_MUL, 1, 0) != NULL, OM_ERR_DTYPE_MISMATCH, "attention: mask kind 1 takes a bool mask, not float32");
  CHECK_ERROR(om__attention(q, kt, v, bm, OM_ATTN_ADD, OM_ATTN_MUL, 1, 0) != NULL, OM_ERR_DTYPE_MISMATCH, "attention: mask kind 0 takes a float32 mask, not bool");
  om_tensor *wide = om_zeros((int64_t[]){70, 34}, 2, OM_FLOAT32), *i64 = om_cast(q, OM_INT64), *vec = om_zeros((int64_t[]){8}, 1, OM_FLOAT32);
  CHECK_ERROR(om__attention(q, kt, v, wide, OM_ATTN_ADD, OM_ATTN_MUL, 1, 0) != NULL, OM_ERR_SHAPE_MISMATCH,
              "attention: mask [70,34] does not broadcast to the scores' [70, 33]");
  CHECK_ERROR(om__attention(q, kt, q, NULL, OM_ATTN_ADD, OM_ATTN_MUL, 1, 0) != NULL, OM_ERR_SHAPE_MISMATCH, "attention: q [2,1,70,8], kt [1,3,8,33] and v [2,1,70,8] do not match");
  CHECK_ERROR(om__attention(i64, kt, v, NULL, OM_ATTN_ADD, OM_ATTN_MUL, 1, 0) != NULL, OM_ERR_DTYPE_MISMATCH, "attention: takes float32, not int64 (input 0)");
  CHECK_ERROR(om__attention(vec, kt, v, NULL, OM_ATTN_ADD, OM_ATTN_MUL, 1, 0) != NULL, OM_ERR_INVALID_ARGUMENT, "attention: input 0 needs at least 2 dims, got 1");
  CHECK_ERROR(om__attention(q, kt, v, NULL, 3, OM_ATTN_MUL, 1, 0) != NULL, OM_ERR_INVALID_ARGUMENT, "attention: needs attrs");
  CHECK_ERROR(om__attention(q, kt, v, NULL, OM_ATTN_ADD, OM_ATTN_Q_DIV + 1, 1, 0) != NULL, OM_ERR_INVALID_ARGUMENT, "attention: needs attrs");
  CHECK_ERROR(om__apply1(OM_OP_attention, (om_tensor *[]){q, kt, v}, 3, &(om_attrs){.n_i = 3, .i = {1, 0, 1}, .n_f = 2}) != NULL,
              OM_ERR_INVALID_ARGUMENT, "attention: takes 4 inputs with has_mask 1 and 0 regrouped batch dims, got 3");
  om_tensor *all[] = {q, k, v, kt, fm, u, half, bm, causal0, causal, none, n, q0, kt0, v4, kte, ve, q4, mean, empty, wide, i64, vec};
  for (size_t j = 0; j < sizeof all / sizeof *all; j++) om_tensor_release(all[j]);
}

/* The attention op with a second mask in another grouping of the batches (Swin's shift mask:
 * the scores reshaped to [B / windows, windows, heads, L, S], the mask added, reshaped back)
 * against the separate ops, bit for bit: after a float mask or a bool one, scaled or not, the
 * batches grouped windows-inner and windows-outer, the mask depending on every regrouped batch
 * or on the windows alone; its errors, with kind and message. */
static om_tensor *regrouped_by_ops(om_tensor *q, om_tensor *kt, om_tensor *v, om_tensor *mask, int kind, int sk, om_tensor *mask2,
                                   const int64_t *r, int nr) {
  om_scope s = {0};
  om_tensor *c = om__keep(&s, om_scalar(0.5, OM_FLOAT32)), *f = om__keep(&s, om_scalar(-1e9, OM_FLOAT32));
  om_tensor *x = om__keep(&s, om_matmul(q, kt));
  if (sk == OM_ATTN_MUL) x = om__keep(&s, om_mul(x, c));
  if (mask) x = om__keep(&s, kind == OM_ATTN_ADD ? om_add(x, mask) : om_where(mask, x, f));
  int64_t rs[OM_MAX_DIMS], back[OM_MAX_DIMS];
  memcpy(rs, r, sizeof(int64_t) * (size_t)nr);
  memcpy(back, om_tensor_shape(x), sizeof(int64_t) * (size_t)om_tensor_ndim(x));
  rs[nr] = back[om_tensor_ndim(x) - 2], rs[nr + 1] = back[om_tensor_ndim(x) - 1];
  om_tensor *g = om__keep(&s, om_add(om__keep(&s, om_reshape(x, rs, nr + 2)), mask2));
  om_tensor *out = om_matmul(om__keep(&s, om_softmax(om__keep(&s, om_reshape(g, back, om_tensor_ndim(x))), -1)), v);
  om__scope_end(&s);
  return out;
}

static om_tensor *regrouped(om_tensor *q, om_tensor *kt, om_tensor *v, om_tensor *mask, int kind, int sk, om_tensor *mask2, const int64_t *r,
                            int nr) {
  om_attrs a = {.n_i = 3 + nr, .i = {mask != NULL, kind, sk}, .n_f = 2, .f = {0.5, -1e9}};
  memcpy(&a.i[3], r, sizeof(int64_t) * (size_t)nr);
  return om__apply1(OM_OP_attention, (om_tensor *[]){q, kt, v, mask ? mask : mask2, mask2}, 3 + (mask != NULL) + 1, &a);
}

TEST(attention_op_adds_a_second_mask_in_another_grouping) {
  /* 6 windows of 2 images (12 batches), 2 heads, 70 query rows (two score blocks), 9 keys */
  om_tensor *q = om_randn((int64_t[]){12, 2, 70, 8}, 4, 51, true), *k = om_randn((int64_t[]){12, 2, 9, 8}, 4, 52, true);
  om_tensor *v = om_randn((int64_t[]){12, 2, 9, 5}, 4, 53, true), *kt = om_transpose(k, -1, -2);
  om_tensor *bias = om_randn((int64_t[]){2, 70, 9}, 3, 54, true), *u = om_rand((int64_t[]){1, 1, 70, 9}, 4, 55, true);
  om_tensor *half = om_scalar(0.5, OM_FLOAT32), *keep = om_gt(u, half);
  om_tensor *shift = om_randn((int64_t[]){6, 1, 70, 9}, 4, 56, true), *each = om_randn((int64_t[]){2, 6, 2, 70, 9}, 5, 57, true);
  om_tensor *outer = om_randn((int64_t[]){6, 1, 1, 70, 9}, 5, 58, true);
  struct { om_tensor *mask; int kind; om_tensor *mask2; int64_t r[3]; } cases[] = {
      {bias, OM_ATTN_ADD, shift, {2, 6, 2}}, {NULL, OM_ATTN_ADD, shift, {2, 6, 2}}, {keep, OM_ATTN_KEEP, shift, {2, 6, 2}},
      {bias, OM_ATTN_ADD, each, {2, 6, 2}}, {bias, OM_ATTN_ADD, outer, {6, 2, 2}}};
  for (size_t m = 0; m < sizeof cases / sizeof *cases; m++)
    for (int sk = OM_ATTN_UNSCALED; sk <= OM_ATTN_MUL; sk++) {
      om_tensor *a = regrouped(q, kt, v, cases[m].mask, cases[m].kind, sk, cases[m].mask2, cases[m].r, 3);
      om_tensor *b = regrouped_by_ops(q, kt, v, cases[m].mask, cases[m].kind, sk, cases[m].mask2, cases[m].r, 3);
      if (!same_bits(a, b)) FAILED("case %d, scale kind %d: the op and the separate ops differ", (int)m, sk);
      om_tensor_release(a);
      om_tensor_release(b);
    }
  /* errors, with kind and message */
  om_tensor *i64 = om_cast(shift, OM_INT64), *v1 = om_randn((int64_t[]){2, 12, 2, 9, 5}, 5, 59, true);
  CHECK_ERROR(regrouped(q, kt, v, bias, OM_ATTN_ADD, OM_ATTN_MUL, shift, (int64_t[]){5, 5}, 2) != NULL, OM_ERR_SHAPE_MISMATCH,
              "attention: the scores [12,2,70,9] do not regroup to [5,5,70,9]");
  CHECK_ERROR(regrouped(q, kt, v, bias, OM_ATTN_ADD, OM_ATTN_MUL, shift, (int64_t[]){-2, -12}, 2) != NULL, OM_ERR_INVALID_ARGUMENT,
              "attention: regrouped batch dim 0 is -2");
  CHECK_ERROR(regrouped(q, kt, v, bias, OM_ATTN_ADD, OM_ATTN_MUL, i64, (int64_t[]){2, 6, 2}, 3) != NULL, OM_ERR_DTYPE_MISMATCH,
              "attention: takes a float32 second mask, not int64");
  CHECK_ERROR(regrouped(q, kt, v, bias, OM_ATTN_ADD, OM_ATTN_MUL, shift, (int64_t[]){6, 2, 2}, 3) != NULL, OM_ERR_SHAPE_MISMATCH,
              "attention: second mask [6,1,70,9] does not broadcast to the regrouped scores' [6,2,2,70,9]");
  CHECK_ERROR(regrouped(q, kt, v, bias, OM_ATTN_ADD, OM_ATTN_MUL, each, (int64_t[]){12, 2}, 2) != NULL, OM_ERR_SHAPE_MISMATCH,
              "attention: second mask [2,6,2,70,9] does not broadcast to the regrouped scores' [12,2,70,9]");
  CHECK_ERROR(regrouped(q, kt, v1, bias, OM_ATTN_ADD, OM_ATTN_MUL, shift, (int64_t[]){2, 6, 2}, 3) != NULL, OM_ERR_SHAPE_MISMATCH,
              "attention: v [2,12,2,9,5] adds batches to the scores [12,2,70,9], which a second mask does not take");
  CHECK_ERROR(regrouped(q, kt, v, bias, OM_ATTN_ADD, OM_ATTN_MUL, shift, (int64_t[]){1, 1, 1, 1, 1, 1, 12}, 7) != NULL, OM_ERR_INVALID_ARGUMENT,
              "attention: needs attrs [has_mask 0|1, mask kind 0-2, scale kind 0-4 (, up to 6 regrouped batch dims)] and [scale, fill]");
  CHECK_ERROR(om__apply1(OM_OP_attention, (om_tensor *[]){q, kt, v, bias}, 4, &(om_attrs){.n_i = 5, .i = {1, 0, 1, 2, 6}, .n_f = 2}) != NULL,
              OM_ERR_INVALID_ARGUMENT, "attention: takes 5 inputs with has_mask 1 and 2 regrouped batch dims, got 4");
  om_tensor *all[] = {q, k, v, kt, bias, u, half, keep, shift, each, outer, i64, v1};
  for (size_t j = 0; j < sizeof all / sizeof *all; j++) om_tensor_release(all[j]);
}

/* rms_norm's two forms against the separate ops (x^2, mean over the last axis, + eps, sqrt, then
 * 1 / s and a product, or a quotient; then the weight), bit for bit, at rows of 1 to 300 values
 * (and x transposed: the kernel reads a dense copy); its errors, with kind and message. */
static om_tensor *rms_by_ops(om_tensor *x, om_tensor *w, float eps, int form) {
  om_scope s = {0};
  int64_t last = -1;
  om_tensor *two = om__keep(&s, om_scalar(2, OM_FLOAT32)), *e = om__keep(&s, om_scalar(eps, OM_FLOAT32)), *one = om__keep(&s, om_scalar(1, OM_FLOAT32));
  om_tensor *sd = om__keep(&s, om_sqrt(om__keep(&s, om_add(om__keep(&s, om_mean(om__keep(&s, om_pow(x, two)), &last, 1, true)), e))));
  om_tensor *y = om__keep(&s, form ? om_div(x, sd) : om_mul(x, om__keep(&s, om_div(one, sd))));
  om_tensor *out = w ? om_mul(w, y) : om_tensor_retain(y);
  om__scope_end(&s);
  return out;
}

TEST(rms_norm_is_the_separate_ops_bit_for_bit) {
  const int64_t sizes[][2] = {{3, 1}, {4, 7}, {5, 33}, {2, 300}};
  for (size_t z = 0; z < sizeof sizes / sizeof *sizes; z++)
    for (int form = 0; form < 2; form++)
      for (int weighted = 0; weighted < 2; weighted++) {
        om_tensor *x = om_randn((int64_t[]){sizes[z][0], sizes[z][1]}, 2, 90 + z, true), *xt = om_transpose(x, 0, 1);
        om_tensor *xs = om_transpose(xt, 0, 1), *w = weighted ? om_randn((int64_t[]){sizes[z][1]}, 1, 95 + z, true) : NULL;
        om_tensor *a = om__rms_norm(xs, w, 1e-6, form), *b = rms_by_ops(x, w, 1e-6f, form);
        if (!same_bits(a, b)) FAILED("[%lld, %lld], form %d%s: rms_norm and the separate ops differ", (long long)sizes[z][0], (long long)sizes[z][1], form,
                                     weighted ? ", weighted" : "");
        om__release_all((om_tensor *[]){x, xt, xs, w, a, b}, 6);
      }
  om_tensor *x = om_randn((int64_t[]){2, 5}, 2, 99, true), *w4 = om_ones((int64_t[]){4}, 1, OM_FLOAT32), *s = om_scalar(1, OM_FLOAT32);
  om_tensor *i64 = om_cast(x, OM_INT64);
  CHECK_ERROR(om__rms_norm(x, w4, 1e-6, 0) != NULL, OM_ERR_SHAPE_MISMATCH, "rms_norm: weight has shape [4], expected [5]");
  CHECK_ERROR(om__rms_norm(s, NULL, 1e-6, 0) != NULL, OM_ERR_INVALID_ARGUMENT, "rms_norm: takes at least 1 dim, got 0");
  CHECK_ERROR(om__rms_norm(i64, NULL, 1e-6, 0) != NULL, OM_ERR_DTYPE_MISMATCH, "rms_norm: takes float32, not int64 (input 0)");
  CHECK_ERROR(om__rms_norm(x, NULL, 1e-6, 2) != NULL, OM_ERR_INVALID_ARGUMENT, "rms_norm: needs attrs [has_weight, form 0|1]");
  CHECK_ERROR(om__apply1(OM_OP_rms_norm, &x, 1, &(om_attrs){.n_i = 2, .i = {1, 0}}) != NULL, OM_ERR_INVALID_ARGUMENT,
              "rms_norm: the flags name 2 inputs, got 1");
  om__release_all((om_tensor *[]){x, w4, s, i64}, 4);
}

/* sum(attention(...) * w): the loss of the finite-difference check below. */
static double attention_loss(om_tensor *const *in, om_tensor *mask, int kind, int sk, om_tensor *w) {
  om_tensor *o = om__attention(in[0], in[1], in[2], mask ? mask : in[3], kind, sk, 0.7, -3);
  om_tensor *p = om_mul(o, w), *s = om_sum(p, NULL, 0, false);
  double r = at(s, 0);
  om_tensor_release(o), om_tensor_release(p), om_tensor_release(s);
  return r;
}

/* The gradients of q, kt, v and a float mask by central differences, for the kinds the table
 * test (one sample: an added mask, multiplied scale) does not reach: both bool-mask kinds with
 * a finite fill, and a divided scale; batch dims broadcast so the gradients are summed. */
TEST(attention_gradients_match_finite_differences_for_every_kind) {
  om_tensor *u = om_rand((int64_t[]){3, 4}, 2, 51, true), *half = om_scalar(0.5, OM_FLOAT32), *bm = om_gt(u, half);
  struct { int kind, sk; bool bool_mask; } cases[] = {{OM_ATTN_KEEP, OM_ATTN_DIV, true}, {OM_ATTN_FILL, OM_ATTN_UNSCALED, true}, {OM_ATTN_ADD, OM_ATTN_DIV, false},
                                                       {OM_ATTN_ADD, OM_ATTN_Q_DIV, false}, {OM_ATTN_KEEP, OM_ATTN_Q_MUL, true}};
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    om_tensor *in[4] = {om_randn((int64_t[]){2, 3, 5}, 3, 52, true), om_randn((int64_t[]){1, 5, 4}, 3, 53, true),
                        om_randn((int64_t[]){2, 4, 2}, 3, 54, true), om_randn((int64_t[]){3, 4}, 2, 55, true)};
    for (int i = 0; i < 4; i++) om_tensor_set_requires_grad(in[i], true);
    om_tensor *w = om_randn((int64_t[]){2, 3, 2}, 3, 56, true), *mask = cases[c].bool_mask ? bm : NULL;
    om_tensor *o = om__attention(in[0], in[1], in[2], mask ? mask : in[3], cases[c].kind, cases[c].sk, 0.7, -3);
    om_tensor *p = om_mul(o, w), *s = om_sum(p, NULL, 0, false);
    CHECK(om_backward(s, NULL));
    for (int i = 0; i < (mask ? 3 : 4); i++) {
      om_tensor *g = om_tensor_grad(in[i]);
      CHECK(g != NULL);
      for (int64_t k = 0; g && k < om_tensor_numel(in[i]); k++) {
        float *d = (float *)om__data(in[i]), v0 = d[k];
        d[k] = v0 + 1e-2f;
        double up = attention_loss(in, mask, cases[c].kind, cases[c].sk, w);
        d[k] = v0 - 1e-2f;
        double down = attention_loss(in, mask, cases[c].kind, cases[c].sk, w);
        d[k] = v0;
        double fd = (up - down) / ((double)(v0 + 1e-2f) - (double)(v0 - 1e-2f));
        if (fabs(at(g, k) - fd) > 2e-3 + 2e-3 * fabs(fd)) FAILED("case %d, input %d [%lld]: analytic %.6g, finite differences %.6g", (int)c, i, (long long)k, at(g, k), fd);
      }
      om_tensor_release(g);
    }
    if (mask) CHECK(om_tensor_grad(in[3]) == NULL);
    om_tensor_release(o), om_tensor_release(p), om_tensor_release(s), om_tensor_release(w);
    for (int i = 0; i < 4; i++) om_tensor_release(in[i]);
  }
  om_tensor_release(u), om_tensor_release(half), om_tensor_release(bm);
}

TEST(batch_norm_in_training_mode_is_refused_while_tracing) {
  om_tensor *x0 = om_randn((int64_t[]){4, 3}, 2, 31, true), *rm = om_zeros((int64_t[]){3}, 1, OM_FLOAT32);
  om_tensor *rv = om_ones((int64_t[]){3}, 1, OM_FLOAT32);
  uint64_t vm = om_tensor_version(rm);
  CHECK(om_trace_begin());
  om_tensor *x = om_trace_input("x", x0, NULL);
  CHECK_ERROR(om_batch_norm(x, rm, rv, NULL, NULL, true, 0.1, 1e-5) != NULL, OM_ERR_TRACE_UNSUPPORTED_OPERATION,
              "batch_norm: cannot be traced: BatchNorm in training mode");
  CHECK(!om_trace_active());
  CHECK_EQ_INT(om_tensor_version(rm), vm); /* refused before anything ran */
  CHECK_ERROR(om_trace_finish(&x, (const char *[]){"y"}, 1) != NULL, OM_ERR_TRACE_UNSUPPORTED_OPERATION, "call eval()");
  /* evaluation mode traces to one BatchNormalization node */
  CHECK(om_trace_begin());
  om_tensor *x2 = om_trace_input("x", x0, NULL), *y = om_batch_norm(x2, rm, rv, NULL, NULL, false, 0.1, 1e-5);
  om_traced_model *m = om_trace_finish(&y, (const char *[]){"y"}, 1);
  CHECK(m != NULL);
  bool found = false;
  for (int i = 0; m && i < om_traced_count(m, OM_TRACED_NODE); i++) found |= !strcmp(om_traced_name(m, OM_TRACED_NODE, i), "BatchNormalization");
  CHECK(found);
  om_traced_release(m);
  om_tensor *all[] = {x0, rm, rv, x, x2, y};
  for (size_t j = 0; j < sizeof all / sizeof *all; j++) om_tensor_release(all[j]);
}

int main(void) {
  RUN(softmax_rows_sum_to_one_and_match_exp_over_sum);
  RUN(layer_norm_matches_a_hand_computation);
  RUN(group_norm_matches_a_hand_computation_and_its_special_cases);
  RUN(batch_norm_training_updates_the_running_stats_as_pytorch);
  RUN(batch_norm_training_gradients_match_finite_differences);
  RUN(scaled_dot_product_attention_matches_its_definition);
  RUN(attention_op_is_the_separate_ops_bit_for_bit);
  RUN(attention_op_adds_a_second_mask_in_another_grouping);
  RUN(attention_gradients_match_finite_differences_for_every_kind);
  RUN(rms_norm_is_the_separate_ops_bit_for_bit);
  RUN(batch_norm_in_training_mode_is_refused_while_tracing);
  TEST_MAIN_END();
}
