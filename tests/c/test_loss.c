/* Losses (src/ops/loss.c) against values computed by hand: mse_loss, nll_loss and
 * cross_entropy with ignore_index, class weights, every reduction and label smoothing (the
 * reference is PyTorch's formula evaluated in double), ctc_loss against the sum over every
 * alignment (enumerated: all C^T paths that collapse to the target), their gradients, the
 * error paths, and the refusal of the three non-ONNX losses while tracing. */
#include "om_test.h"

#define I64(shape, ...) om_from_data((const int64_t[]){__VA_ARGS__}, (const int64_t[])shape, \
                                     (int)(sizeof((int64_t[])shape) / sizeof(int64_t)), OM_INT64)

/* A 0-d result near v. */
#define CHECK_SCALAR(t, v, tol)                                          \
  do {                                                                   \
    const om_tensor *s_ = (t);                                           \
    if (!s_) { FAILED("%s is NULL: %s", #t, om_last_error_message()); break; } \
    CHECK_EQ_INT(om_tensor_ndim(s_), 0);                                 \
    CHECK_NEAR(at(s_, 0), (v), (tol));                                   \
  } while (0)

/* The gradient of loss (a 0-d tensor, released here) w.r.t. leaf x, as a new reference. */
static om_tensor *grad_of(om_tensor *loss, om_tensor *x) {
  om_tensor_zero_grad(x);
  if (!loss || !om_backward(loss, NULL)) FAILED("backward: %s", om_last_error_message());
  om_tensor_release(loss);
  return om_tensor_grad(x);
}

TEST(mse_loss_values_reductions_broadcasting_and_gradient) {
  om_tensor *x = TF(SHAPE(2, 2), 1, 2, 3, 4), *y = TF(SHAPE(2, 2), 0, 2, 5, 1), *row = TF(SHAPE(2), 0, 1);
  /* squared differences 1, 0, 4, 9 */
  om_tensor *none = om_mse_loss(x, y, OM_REDUCTION_NONE), *mean = om_mse_loss(x, y, OM_REDUCTION_MEAN);
  om_tensor *sum = om_mse_loss(x, y, OM_REDUCTION_SUM), *bc = om_mse_loss(x, row, OM_REDUCTION_SUM);
  CHECK_VALUES(none, SHAPE(2, 2), 0, 1, 0, 4, 9);
  CHECK_SCALAR(mean, 3.5, 0);
  CHECK_SCALAR(sum, 14, 0);
  CHECK_SCALAR(bc, 1 + 1 + 9 + 9, 0); /* target [0, 1] broadcast over rows */
  om_tensor_set_requires_grad(x, true);
  om_tensor_set_requires_grad(y, true);
  om_tensor *gx = grad_of(om_mse_loss(x, y, OM_REDUCTION_MEAN), x), *gy = om_tensor_grad(y);
  CHECK_VALUES(gx, SHAPE(2, 2), 1e-7, 0.5, 0, -1, 1.5); /* 2 (x - y) / 4 */
  CHECK_VALUES(gy, SHAPE(2, 2), 1e-7, -0.5, 0, 1, -1.5);
  om_tensor *i64 = I64(SHAPE(2, 2), 1, 2, 3, 4), *odd = TF(SHAPE(3), 1, 2, 3);
  CHECK_ERROR(om_mse_loss(x, i64, OM_REDUCTION_MEAN), OM_ERR_DTYPE_MISMATCH, "mse_loss: takes float32 input and target, got float32 and int64");
  CHECK_ERROR(om_mse_loss(x, odd, OM_REDUCTION_MEAN), OM_ERR_SHAPE_MISMATCH, "mse_loss");
  CHECK_ERROR(om_mse_loss(x, y, (om_reduction)3), OM_ERR_INVALID_ARGUMENT, "reduction must be 0 (none), 1 (mean) or 2 (sum), got 3");
  om_tensor *ts[] = {x, y, row, none, mean, sum, bc, gx, gy, i64, odd};
  for (size_t k = 0; k < sizeof ts / sizeof ts[0]; k++) om_tensor_release(ts[k]);
}

TEST(nll_loss_weights_ignore_index_reductions_and_gradient) {
  /* log-probabilities (any values: nll_loss only picks them) */
  om_tensor *x = TF(SHAPE(3, 3), -1, -2, -3, -0.5, -1.5, -2.5, -4, -5, -6);
  om_tensor *t = I64(SHAPE(3), 0, 2, -100), *w = TF(SHAPE(3), 1, 2, 3);
  om_tensor *none = om_nll_loss(x, t, w, -100, OM_REDUCTION_NONE);
  CHECK_VALUES(none, SHAPE(3), 1e-7, 1 * 1, 3 * 2.5, 0); /* -w[t] x[t], the ignored row 0 */
  om_tensor *mean = om_nll_loss(x, t, w, -100, OM_REDUCTION_MEAN), *sum = om_nll_loss(x, t, w, -100, OM_REDUCTION_SUM);
  CHECK_SCALAR(mean, (1 + 7.5) / (1 + 3), 1e-7); /* divided by the weights of the counted rows */
  CHECK_SCALAR(sum, 8.5, 1e-6);
  om_tensor *plain = om_nll_loss(x, t, NULL, -100, OM_REDUCTION_MEAN);
  CHECK_SCALAR(plain, (1 + 2.5) / 2, 1e-7);
  om_tensor *t2 = I64(SHAPE(3), 0, 2, 1), *ign0 = om_nll_loss(x, t2, NULL, 0, OM_REDUCTION_MEAN); /* ignore_index 0 */
  CHECK_SCALAR(ign0, (2.5 + 5) / 2, 1e-7);
  /* K-dim: input [1, 2, 2] (N, C, d), target [1, 2] */
  om_tensor *xk = TF(SHAPE(1, 2, 2), -1, -2, -3, -4), *tk = I64(SHAPE(1, 2), 1, 0), *k = om_nll_loss(xk, tk, NULL, -100, OM_REDUCTION_NONE);
  CHECK_VALUES(k, SHAPE(1, 2), 0, 3, 2);
  /* all ignored: mean is 0/0 = NaN, as in PyTorch */
  om_tensor *ta = I64(SHAPE(3), -100, -100, -100), *nan = om_nll_loss(x, ta, NULL, -100, OM_REDUCTION_MEAN);
  CHECK(nan && isnan(at(nan, 0)));
  om_tensor_set_requires_grad(x, true);
  om_tensor *g = grad_of(om_nll_loss(x, t, w, -100, OM_REDUCTION_MEAN), x);
  CHECK_VALUES(g, SHAPE(3, 3), 1e-7, -0.25, 0, 0, 0, 0, -0.75, 0, 0, 0);
  om_tensor *bad = I64(SHAPE(3), 0, 3, 1), *f = TF(SHAPE(3), 0, 1, 2), *w2 = TF(SHAPE(2), 1, 1), *t4 = I64(SHAPE(4), 0, 0, 0, 0);
  CHECK_ERROR(om_nll_loss(x, bad, NULL, -100, OM_REDUCTION_MEAN), OM_ERR_INDEX_OUT_OF_RANGE, "nll_loss: target 3 is out of range for 3 classes");
  CHECK_ERROR(om_nll_loss(x, f, NULL, -100, OM_REDUCTION_MEAN), OM_ERR_DTYPE_MISMATCH, "nll_loss: target must be int64 class indices, got float32");
  CHECK_ERROR(om_nll_loss(x, t, w2, -100, OM_REDUCTION_MEAN), OM_ERR_SHAPE_MISMATCH, "nll_loss: weight must be float32 [3] (one per class), got float32 [2]");
  CHECK_ERROR(om_nll_loss(x, t4, NULL, -100, OM_REDUCTION_MEAN), OM_ERR_SHAPE_MISMATCH, "nll_loss: target [4] does not match input [3,3]");
  om_tensor *ts[] = {x, t, w, none, mean, sum, plain, t2, ign0, xk, tk, k, ta, nan, g, bad, f, w2, t4};
  for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++) om_tensor_release(ts[i]);
}

TEST(cross_entropy_values_smoothing_weights_and_gradient) {
  om_tensor *x = TF(SHAPE(3, 3), 1, 2, 3, 1, 1, 1, 0.5, -1, 2);
  om_tensor *t = I64(SHAPE(3), 2, 0, -100), *w = TF(SHAPE(3), 1, 2, 3);
  /* row 0: lse = 3 + log(1 + e^-1 + e^-2), loss lse - 3 = 0.40760596; row 1: log 3 */
  om_tensor *plain = om_cross_entropy(x, t, NULL, -100, OM_REDUCTION_MEAN, 0);
  CHECK_SCALAR(plain, (0.40760596444438 + log(3.0)) / 2, 1e-6);
  om_tensor *weighted = om_cross_entropy(x, t, w, -100, OM_REDUCTION_MEAN, 0);
  CHECK_SCALAR(weighted, 0.5803575455003129, 1e-6);
  om_tensor *smooth = om_cross_entropy(x, t, NULL, -100, OM_REDUCTION_MEAN, 0.2);
  CHECK_SCALAR(smooth, 0.8531091265562453, 1e-6);
  om_tensor *both = om_cross_entropy(x, t, w, -100, OM_REDUCTION_MEAN, 0.2);
  CHECK_SCALAR(both, 0.6815745283781661, 1e-6);
  om_tensor *none = om_cross_entropy(x, t, w, -100, OM_REDUCTION_NONE, 0.2);
  CHECK_VALUES(none, SHAPE(3), 1e-6, 1.40796337, 1.31833475, 0);
  om_tensor *sum = om_cross_entropy(x, t, NULL, -100, OM_REDUCTION_SUM, 0);
  CHECK_SCALAR(sum, 1.5062182531124906, 1e-6);
  /* unbatched: input [C], 0-d target */
  om_tensor *x1 = TF(SHAPE(3), 1, 2, 3), *t1 = om_scalar(2, OM_INT64), *one = om_cross_entropy(x1, t1, NULL, -100, OM_REDUCTION_NONE, 0);
  CHECK_SCALAR(one, 0.40760596444438, 1e-6);
  om_tensor_release(x1);
  om_tensor_release(t1);
  om_tensor_release(one);
  /* huge logits stay finite: the max is subtracted before exp */
  om_tensor *big = TF(SHAPE(1, 2), 1000, 0), *t0 = I64(SHAPE(1), 1), *stable = om_cross_entropy(big, t0, NULL, -100, OM_REDUCTION_SUM, 0);
  CHECK_SCALAR(stable, 1000, 1e-3);
  /* gradients: softmax - smoothed one-hot, weighted, / summed weights */
  om_tensor_set_requires_grad(x, true);
  om_tensor *g1 = grad_of(om_cross_entropy(x, t, NULL, -100, OM_REDUCTION_MEAN, 0), x);
  CHECK_VALUES(g1, SHAPE(3, 3), 1e-6, 0.0450152866, 0.122364236, -0.167379522, -0.333333333, 0.166666667, 0.166666667, 0, 0, 0);
  om_tensor *g2 = grad_of(om_cross_entropy(x, t, w, -100, OM_REDUCTION_MEAN, 0.2), x);
  CHECK_VALUES(g2, SHAPE(3, 3), 1e-6, 0.0463547346, 0.137976596, -0.184331331, -0.116666667, 0.0666666667, 0.05, 0, 0, 0);
  om_tensor *n3 = om_cross_entropy(x, t, w, -100, OM_REDUCTION_NONE, 0.2), *s3 = n3 ? om_sum(n3, NULL, 0, false) : NULL;
  om_tensor_release(n3);
  om_tensor *g3 = grad_of(s3, x); /* none, then summed: the per-row gradients */
  CHECK_VALUES(g3, SHAPE(3, 3), 1e-6, 0.185418938, 0.551906386, -0.737325324, -0.466666667, 0.266666667, 0.2, 0, 0, 0);
  om_tensor *bad = I64(SHAPE(3), 0, -1, 1);
  CHECK_ERROR(om_cross_entropy(x, bad, NULL, -100, OM_REDUCTION_MEAN, 0), OM_ERR_INDEX_OUT_OF_RANGE, "cross_entropy: target -1 is out of range for 3 classes");
  CHECK_ERROR(om_cross_entropy(x, t, NULL, -100, OM_REDUCTION_MEAN, 1.5), OM_ERR_INVALID_ARGUMENT, "label_smoothing must be in [0, 1], got 1.5");
  om_tensor *xs = TF(SHAPE(2, 2), 1, 2, 3, 4), *f1 = TF(SHAPE(3), 0, 1, 2);
  CHECK_ERROR(om_cross_entropy(x, xs, NULL, -100, OM_REDUCTION_MEAN, 0), OM_ERR_SHAPE_MISMATCH,
              "cross_entropy: class-probability target [2,2] must have the input's shape [3,3]");
  CHECK_ERROR(om_cross_entropy(x, x, NULL, 0, OM_REDUCTION_MEAN, 0), OM_ERR_INVALID_ARGUMENT,
              "ignore_index (0) is not supported for class-probability targets");
  CHECK_ERROR(om_nll_loss(x, f1, NULL, -100, OM_REDUCTION_MEAN), OM_ERR_DTYPE_MISMATCH, "nll_loss: target must be int64 class indices, got float32");
  om_tensor_release(xs);
  om_tensor_release(f1);
  om_tensor *ts[] = {x, t, w, plain, weighted, smooth, both, none, sum, big, t0, stable, g1, g2, g3, bad};
  for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++) om_tensor_release(ts[i]);
}

/* cross_entropy with class probabilities (a float32 target of the input's shape): per row
 * -sum_c w_c t'_c log_softmax(x)_c with t' = (1 - eps) t + eps / C; the mean divides by the rows
 * (not the weights, PyTorch's rule). Gradients: softmax * sum_c w_c t'_c - w t' for the logits,
 * -(1 - eps) w log_softmax(x) for the probabilities. */
TEST(cross_entropy_with_class_probabilities) {
  om_tensor *x = TF(SHAPE(2, 3), 1, 2, 3, 1, 1, 1), *p = TF(SHAPE(2, 3), 0.1, 0.2, 0.7, 1, 0, 0), *w = TF(SHAPE(3), 1, 2, 3);
  om_tensor *plain = om_cross_entropy(x, p, NULL, -100, OM_REDUCTION_MEAN, 0);
  CHECK_SCALAR(plain, 0.9531091265562452, 1e-6);
  om_tensor *both = om_cross_entropy(x, p, w, -100, OM_REDUCTION_MEAN, 0.2);
  CHECK_SCALAR(both, 1.5379321024452313, 1e-6);
  om_tensor *none = om_cross_entropy(x, p, w, -100, OM_REDUCTION_NONE, 0.2);
  CHECK_VALUES(none, SHAPE(2), 1e-6, 1.7575294584887304, 1.318334746401732);
  /* the same as class indices when the probabilities are one-hot */
  om_tensor *oh = TF(SHAPE(2, 3), 0, 0, 1, 1, 0, 0), *ti = I64(SHAPE(2), 2, 0);
  om_tensor *a = om_cross_entropy(x, oh, w, -100, OM_REDUCTION_SUM, 0.1), *b = om_cross_entropy(x, ti, w, -100, OM_REDUCTION_SUM, 0.1);
  CHECK_NEAR(at(a, 0), at(b, 0), 1e-6);
  om_tensor_set_requires_grad(x, true);
  om_tensor_set_requires_grad(p, true);
  om_tensor *gx = grad_of(om_cross_entropy(x, p, NULL, -100, OM_REDUCTION_MEAN, 0), x), *gp = om_tensor_grad(p);
  CHECK_VALUES(gx, SHAPE(2, 3), 1e-6, -0.00498471341, 0.0223642355, -0.0173795221, -0.333333333, 0.166666667, 0.166666667);
  CHECK_VALUES(gp, SHAPE(2, 3), 1e-6, 1.20380298, 0.703802982, 0.203802982, 0.549306144, 0.549306144, 0.549306144);
  om_tensor_zero_grad(p);
  om_tensor *n2 = om_cross_entropy(x, p, w, -100, OM_REDUCTION_NONE, 0.2), *s2 = n2 ? om_sum(n2, NULL, 0, false) : NULL;
  om_tensor_release(n2);
  om_tensor *gx2 = grad_of(s2, x), *gp2 = om_tensor_grad(p);
  CHECK_VALUES(gx2, SHAPE(2, 3), 1e-6, 0.0766091548, 0.153593275, -0.23020243, -0.466666667, 0.266666667, 0.2);
  CHECK_VALUES(gp2, SHAPE(2, 3), 1e-6, 1.92608477, 2.25216954, 0.978254315, 0.878889831, 1.75777966, 2.63666949);
  om_tensor *ts[] = {x, p, w, plain, both, none, oh, ti, a, b, gx, gp, gx2, gp2};
  for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++) om_tensor_release(ts[i]);
}

/* log_softmax of fixed logits, [T=3, N=2, C=3] (tests/c reference values from enumerating every
 * alignment: each of the 27 paths of length 3 that collapses to the target adds its probability). */
static om_tensor *ctc_log_probs(void) {
  return TF(SHAPE(3, 2, 3), -1.10413061, -0.604130605, -2.10413061, -0.920827656, -1.42082766, -1.02082766,
            -0.32445692, -2.82445692, -1.52445692, -1.19711599, -0.797115985, -1.39711599,
            -1.82932929, -1.02932929, -0.729329294, -0.479104498, -1.2791045, -2.2791045);
}

TEST(ctc_loss_against_enumerated_alignments) {
  om_tensor *lp = ctc_log_probs();
  /* sample 0: target [1, 2] over 3 steps (paths 0 1 2, 1 0 2, 1 2 0, 1 1 2, 1 2 2);
   * sample 1: target [1, 1] over 3 steps (only 1 0 1) */
  om_tensor *tg = I64(SHAPE(2, 2), 1, 2, 1, 1), *il = I64(SHAPE(2), 3, 3), *tl = I64(SHAPE(2), 2, 2);
  om_tensor *none = om_ctc_loss(lp, tg, il, tl, 0, OM_REDUCTION_NONE, false);
  CHECK_VALUES(none, SHAPE(2), 1e-5, 1.23047816, 3.89704814);
  om_tensor *mean = om_ctc_loss(lp, tg, il, tl, 0, OM_REDUCTION_MEAN, false);
  CHECK_SCALAR(mean, 1.2818815744177152, 1e-5); /* (1.230/2 + 3.897/2) / 2 */
  om_tensor *sum = om_ctc_loss(lp, tg, il, tl, 0, OM_REDUCTION_SUM, false);
  CHECK_SCALAR(sum, 5.127526297670861, 1e-5);
  /* concatenated 1-D targets give the same */
  om_tensor *flat = I64(SHAPE(4), 1, 2, 1, 1), *none_flat = om_ctc_loss(lp, flat, il, tl, 0, OM_REDUCTION_NONE, false);
  CHECK_VALUES(none_flat, SHAPE(2), 1e-5, 1.23047816, 3.89704814);
  /* shorter input and target: sample 0 is [2] over 2 steps */
  om_tensor *il2 = I64(SHAPE(2), 2, 3), *tl2 = I64(SHAPE(2), 1, 2), *tg2 = I64(SHAPE(2, 2), 2, 0, 1, 1);
  om_tensor *mean2 = om_ctc_loss(lp, tg2, il2, tl2, 0, OM_REDUCTION_MEAN, false);
  CHECK_SCALAR(mean2, 1.812865450243946, 1e-5);
  /* [1, 1] needs 3 steps: over 2 it is impossible, inf; zero_infinity makes it 0 */
  om_tensor *il3 = I64(SHAPE(2), 3, 2), *inf = om_ctc_loss(lp, tg, il3, tl, 0, OM_REDUCTION_NONE, false);
  CHECK(inf && isinf(at(inf, 1)) && fabs(at(inf, 0) - 1.23047816) < 1e-5);
  om_tensor *zi = om_ctc_loss(lp, tg, il3, tl, 0, OM_REDUCTION_SUM, true);
  CHECK_SCALAR(zi, 1.23047816, 1e-5);

  /* gradient w.r.t. log_probs: -(probability of the paths through (t, c)) / p */
  om_tensor_set_requires_grad(lp, true);
  om_tensor *g = grad_of(om_ctc_loss(lp, tg, il, tl, 0, OM_REDUCTION_SUM, false), lp);
  CHECK_VALUES(g, SHAPE(3, 2, 3), 1e-5,
               -0.0324700011, -0.967529999, 0, 0, -1, 0,
               -0.652177405, -0.0860039825, -0.261818612, -1, 0, 0,
               -0.0653865526, 0, -0.934613447, 0, -1, 0);
  om_tensor *gm = grad_of(om_ctc_loss(lp, tg2, il2, tl2, 0, OM_REDUCTION_MEAN, false), lp);
  /* mean: sample 0 weighs 1 / (2 * 1), sample 1 1 / (2 * 2); steps past input_lengths get 0 */
  CHECK_VALUES(gm, SHAPE(3, 2, 3), 1e-5,
               -0.386207421 / 2, 0, -0.613792579 / 2, 0, -0.25, 0,
               -0.471714809 / 2, 0, -0.528285191 / 2, -0.25, 0, 0,
               0, 0, 0, 0, -0.25, 0);
  om_tensor *gz = grad_of(om_ctc_loss(lp, tg, il3, tl, 0, OM_REDUCTION_SUM, true), lp);
  CHECK_VALUES(gz, SHAPE(3, 2, 3), 1e-5,
               -0.0324700011, -0.967529999, 0, 0, 0, 0,
               -0.652177405, -0.0860039825, -0.261818612, 0, 0, 0,
               -0.0653865526, 0, -0.934613447, 0, 0, 0);

  om_tensor *badt = I64(SHAPE(2, 2), 1, 3, 1, 1), *badl = I64(SHAPE(2), 4, 3), *badtl = I64(SHAPE(2), 2, 3);
  om_tensor *f = TF(SHAPE(2), 3, 3), *n3 = I64(SHAPE(3), 3, 3, 3);
  CHECK_ERROR(om_ctc_loss(lp, badt, il, tl, 0, OM_REDUCTION_MEAN, false), OM_ERR_INDEX_OUT_OF_RANGE,
              "ctc_loss: target 3 (sample 0, position 1) is out of range for 3 classes");
  CHECK_ERROR(om_ctc_loss(lp, tg, badl, tl, 0, OM_REDUCTION_MEAN, false), OM_ERR_INDEX_OUT_OF_RANGE, "input_lengths[0] = 4 is out of range [0, 3]");
  CHECK_ERROR(om_ctc_loss(lp, tg, il, badtl, 0, OM_REDUCTION_MEAN, false), OM_ERR_INDEX_OUT_OF_RANGE, "target_lengths[1] = 3 is out of range [0, 2]");
  CHECK_ERROR(om_ctc_loss(lp, flat, il, badtl, 0, OM_REDUCTION_MEAN, false), OM_ERR_SHAPE_MISMATCH, "target_lengths sum to more than the 4 concatenated targets");
  CHECK_ERROR(om_ctc_loss(lp, tg, f, tl, 0, OM_REDUCTION_MEAN, false), OM_ERR_DTYPE_MISMATCH, "ctc_loss: input_lengths must be int64, got float32");
  CHECK_ERROR(om_ctc_loss(lp, tg, n3, tl, 0, OM_REDUCTION_MEAN, false), OM_ERR_SHAPE_MISMATCH, "input_lengths [3] and target_lengths [2] must both be [2]");
  CHECK_ERROR(om_ctc_loss(lp, tg, il, tl, 3, OM_REDUCTION_MEAN, false), OM_ERR_INDEX_OUT_OF_RANGE, "ctc_loss: blank 3 is out of range for 3 classes");
  CHECK_ERROR(om_ctc_loss(tg, tg, il, tl, 0, OM_REDUCTION_MEAN, false), OM_ERR_SHAPE_MISMATCH, "log_probs must be float32 [T, N, C], got int64 [2,2]");
  om_tensor *ts[] = {lp, tg, il, tl, none, mean, sum, flat, none_flat, il2, tl2, tg2, mean2, il3, inf, zi, g, gm, gz, badt, badl, badtl, f, n3};
  for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++) om_tensor_release(ts[i]);
}

/* nll_loss, cross_entropy and ctc_loss are refused while tracing (spec 2), mse_loss traces. */
TEST(losses_refused_while_tracing) {
  om_tensor *x0 = TF(SHAPE(2, 3), 1, 2, 3, 4, 5, 6), *t = I64(SHAPE(2), 0, 2), *lp0 = ctc_log_probs();
  om_tensor *tg = I64(SHAPE(2, 2), 1, 2, 1, 1), *il = I64(SHAPE(2), 3, 3), *tl = I64(SHAPE(2), 2, 2);
  for (int k = 0; k < 3; k++) {
    CHECK(om_trace_begin());
    om_tensor *x = om_trace_input("x", k == 2 ? lp0 : x0, NULL);
    const char *name = (const char *[]){"nll_loss", "cross_entropy", "ctc_loss"}[k];
    char want[256]; /* the whole message: what is refused and why, in the user's terms */
    snprintf(want, sizeof want, "%s: cannot be traced: losses have no ONNX equivalent in the opset used (20) and tracing is for "
             "inference graphs; compute the loss outside the traced model", name);
    om_clear_error();
    om_tensor *r = k == 0   ? om_nll_loss(x, t, NULL, -100, OM_REDUCTION_MEAN)
                   : k == 1 ? om_cross_entropy(x, t, NULL, -100, OM_REDUCTION_MEAN, 0)
                            : om_ctc_loss(x, tg, il, tl, 0, OM_REDUCTION_MEAN, false);
    CHECK(r == NULL);
    CHECK_EQ_INT(om_last_error(), OM_ERR_TRACE_UNSUPPORTED_OPERATION);
    if (strcmp(om_last_error_message(), want)) FAILED("message: %s", om_last_error_message());
    CHECK(!om_trace_active()); /* a trace error ends the recording */
    om_tensor_release(r);
    om_tensor_release(x);
    om_clear_error();
  }
  CHECK(om_trace_begin());
  om_tensor *x = om_trace_input("x", x0, NULL), *y = om_scale(x0, 0.5);
  om_tensor *l = om_mse_loss(x, y, OM_REDUCTION_MEAN);
  om_traced_model *m = om_trace_finish(&l, (const char *[]){"loss"}, 1);
  CHECK(m != NULL);
  CHECK_EQ_INT(om_traced_count(m, OM_TRACED_NODE), 3); /* Sub, Mul, ReduceMean */
  om_traced_release(m);
  om_tensor *ts[] = {x0, t, lp0, tg, il, tl, x, y, l};
  for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++) om_tensor_release(ts[i]);
}

int main(void) {
  RUN(mse_loss_values_reductions_broadcasting_and_gradient);
  RUN(nll_loss_weights_ignore_index_reductions_and_gradient);
  RUN(cross_entropy_values_smoothing_weights_and_gradient);
  RUN(cross_entropy_with_class_probabilities);
  RUN(ctc_loss_against_enumerated_alignments);
  RUN(losses_refused_while_tracing);
  TEST_MAIN_END();
}
