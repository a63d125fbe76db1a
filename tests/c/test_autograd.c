/* Autograd: leaves and results, accumulation, shared inputs, broadcasting gradients, the
 * no-grad scope, detach, re-running backward, freeing the graph, and every autograd error. */
#include "internal.h"
#include "om_test.h"

#define R(t) om_tensor_release(t)

static om_tensor *leaf(const float *v, const int64_t *shape, int nd) {
  om_tensor *t = om_from_data(v, shape, nd, OM_FLOAT32);
  om_tensor_set_requires_grad(t, true);
  return t;
}

TEST(chain_rule_by_hand) {
  /* loss = sum((x * w + b)^2) with x [2,2], w [2], b scalar */
  om_tensor *x = TF(SHAPE(2, 2), 1, 2, 3, 4), *w = leaf((float[]){0.5f, -1}, (int64_t[]){2}, 1);
  om_tensor *b = leaf((float[]){2}, NULL, 0);
  om_tensor *xw = om_mul(x, w), *y = om_add(xw, b), *sq = om_mul(y, y), *loss = om_sum(sq, NULL, 0, false);
  CHECK(om_tensor_requires_grad(loss) && !om_tensor_is_leaf(loss) && !om_tensor_requires_grad(x));
  CHECK(om_backward(loss, NULL));
  /* y = [[2.5, 0], [3.5, -2]]; dL/dw_j = sum_i 2 y_ij x_ij; dL/db = sum 2 y */
  om_tensor *gw = om_tensor_grad(w), *gb = om_tensor_grad(b), *gx = om_tensor_grad(x);
  CHECK_VALUES(gw, SHAPE(2), 1e-5, 2 * (2.5 * 1 + 3.5 * 3), 2 * (0 * 2 + -2 * 4));
  CHECK(gb && om_tensor_ndim(gb) == 0 && fabs(at(gb, 0) - 2 * (2.5 + 0 + 3.5 - 2)) < 1e-5);
  CHECK(gx == NULL); /* x did not require grad */
  /* a second backward accumulates */
  CHECK(om_backward(loss, NULL));
  om_tensor *gw2 = om_tensor_grad(w);
  CHECK_VALUES(gw2, SHAPE(2), 1e-4, 4 * (2.5 * 1 + 3.5 * 3), 4 * (0 * 2 + -2 * 4));
  om_tensor_zero_grad(w);
  om_tensor *gw3 = om_tensor_grad(w);
  CHECK(gw3 == NULL);
  R(x); R(w); R(b); R(xw); R(y); R(sq); R(loss); R(gw); R(gb); R(gw2);
}

TEST(shared_inputs_and_views) {
  /* y = x * x + x[::2] summed: dy/dx = 2x + mask */
  om_tensor *x = leaf((float[]){1, 2, 3, 4}, (int64_t[]){4}, 1);
  om_tensor *xx = om_mul(x, x), *ev = om_slice(x, 0, 0, 4, 2), *s1 = om_sum(xx, NULL, 0, false), *s2 = om_sum(ev, NULL, 0, false);
  om_tensor *loss = om_add(s1, s2);
  CHECK(om_backward(loss, NULL));
  om_tensor *g = om_tensor_grad(x);
  CHECK_VALUES(g, SHAPE(4), 1e-6, 3, 4, 7, 8);
  /* leaf grads are fresh storage, never aliases of another tensor */
  CHECK(g && !om_tensor_shares_storage(g, x));
  R(x); R(xx); R(ev); R(s1); R(s2); R(loss); R(g);
}

TEST(gradient_of_non_scalar_with_given_grad) {
  om_tensor *x = leaf((float[]){1, 2, 3}, (int64_t[]){3}, 1), *y = om_scale(x, 3);
  om_tensor *gy = TF(SHAPE(3), 1, 0, -1);
  CHECK(om_backward(y, gy));
  om_tensor *g = om_tensor_grad(x);
  CHECK_VALUES(g, SHAPE(3), 0, 3, 0, -3);
  R(x); R(y); R(gy); R(g);
}

TEST(no_grad_and_detach) {
  om_tensor *x = leaf((float[]){1, 2}, (int64_t[]){2}, 1);
  bool prev = om_set_grad_enabled(false);
  om_tensor *y = om_exp(x);
  om_set_grad_enabled(prev);
  CHECK(prev && om_is_grad_enabled() && !om_tensor_requires_grad(y));
  om_tensor *d = om_detach(x), *z = om_mul(d, x);
  CHECK(!om_tensor_requires_grad(d) && om_tensor_shares_storage(d, x) && om_tensor_requires_grad(z));
  om_tensor *loss = om_sum(z, NULL, 0, false);
  CHECK(om_backward(loss, NULL));
  om_tensor *g = om_tensor_grad(x);
  CHECK_VALUES(g, SHAPE(2), 0, 1, 2); /* the detached factor is a constant */
  /* in-place updates of a leaf are allowed inside no-grad (an optimizer step) */
  prev = om_set_grad_enabled(false);
  CHECK(om_tensor_fill(x, 0));
  om_set_grad_enabled(prev);
  R(x); R(y); R(d); R(z); R(loss); R(g);
}

TEST(autograd_errors) {
  om_tensor *c = TF(SHAPE(2), 1, 2), *x = leaf((float[]){1, 2}, (int64_t[]){2}, 1), *y = om_exp(x);
  om_tensor *i = om_zeros((int64_t[]){2}, 1, OM_INT64), *g3 = om_zeros((int64_t[]){3}, 1, OM_FLOAT32);
  CHECK_ERROR(om_backward(c, NULL), OM_ERR_AUTOGRAD, "backward: the tensor does not require grad");
  CHECK_ERROR(om_backward(y, NULL), OM_ERR_AUTOGRAD, "backward: a gradient is needed for a tensor of shape [2]");
  CHECK_ERROR(om_backward(y, g3), OM_ERR_SHAPE_MISMATCH, "backward: gradient of shape [3] for a tensor of shape [2]");
  CHECK_ERROR(om_tensor_set_requires_grad(i, true), OM_ERR_DTYPE_MISMATCH, "only float32 tensors take gradients, not int64");
  CHECK_ERROR(om_tensor_set_requires_grad(y, true), OM_ERR_INVALID_ARGUMENT, "only leaf tensors can be marked; this one was made by exp");
  CHECK_ERROR(om_tensor_fill(x, 1), OM_ERR_AUTOGRAD, "fill: a leaf Variable that requires grad is being used in an in-place operation");
  om_tensor *xv = om_slice(x, 0, 0, 1, 1);
  CHECK_ERROR(om_tensor_fill(xv, 1), OM_ERR_AUTOGRAD, "fill: a view of a leaf Variable that requires grad is being used in an in-place operation");
  R(xv);
  /* a value the backward needs, changed in place after the forward, is caught */
  om_tensor *a = TF(SHAPE(2), 1, 2), *p = om_mul(a, x), *loss = om_sum(p, NULL, 0, false);
  CHECK(om_tensor_fill(a, 5));
  CHECK_ERROR(om_backward(loss, NULL), OM_ERR_AUTOGRAD, "backward: one of the variables needed for gradient computation has "
              "been modified by an inplace operation: input 0 of mul was changed in place after it was used (version 0, now 1)");
  /* versions only grow, so that graph stays refused; a fresh graph over the new values works */
  om_tensor *p2 = om_mul(a, x), *l2 = om_sum(p2, NULL, 0, false);
  CHECK(om_backward(l2, NULL));
  om_tensor *g = om_tensor_grad(x);
  CHECK_VALUES(g, SHAPE(2), 0, 5, 5);
  R(c); R(x); R(y); R(i); R(g3); R(a); R(p); R(loss); R(p2); R(l2); R(g);
}

/* A composite's scope of temporaries that would overflow fails the call and frees the extra one. */
TEST(scope_overflow_fails_loudly) {
  om_scope s = {0};
  for (int k = 0; k < OM_SCOPE_MAX; k++) CHECK(om__keep(&s, om_scalar(k, OM_FLOAT32)) != NULL);
  CHECK_ERROR(om__keep(&s, om_scalar(1, OM_FLOAT32)) != NULL, OM_ERR_UNSUPPORTED, "internal: a composite kept more than 32 temporaries");
  CHECK(s.n == OM_SCOPE_MAX);
  om__scope_end(&s);
}

TEST(inplace_into_nonleaf) {
  /* PyTorch's s = x * y; s += y (T5's scores += position_bias): the write takes s's place in the
   * graph. x = [1, 2], y = [3, 4]: s = [6, 12]; loss = sum(s * s): dx = 2 s y, dy = 2 s (x + 1) */
  om_tensor *x = leaf((float[]){1, 2}, (int64_t[]){2}, 1), *y = leaf((float[]){3, 4}, (int64_t[]){2}, 1);
  om_tensor *s = om_mul(x, y), *t = om_add(s, y);
  CHECK(om_tensor_copy_from(s, t));
  R(t);
  om_tensor *sq = om_mul(s, s), *loss = om_sum(sq, NULL, 0, false);
  CHECK(om_backward(loss, NULL));
  om_tensor *gx = om_tensor_grad(x), *gy = om_tensor_grad(y);
  CHECK_VALUES(s, SHAPE(2), 0, 6, 12);
  CHECK_VALUES(gx, SHAPE(2), 1e-5, 2 * 6 * 3, 2 * 12 * 4);
  CHECK_VALUES(gy, SHAPE(2), 1e-5, 2 * 6 * 2, 2 * 12 * 3);
  R(sq); R(loss); R(gx); R(gy);
  /* fill_ of a non-leaf nothing else reads: it still requires grad (PyTorch's FillBackward), its
   * value is the fill, and what made it gets zeros */
  om_tensor *x3 = leaf((float[]){1, 2}, (int64_t[]){2}, 1), *f = om_mul(x3, y);
  CHECK(om_tensor_fill(f, 2) && om_tensor_requires_grad(f));
  om_tensor *lf = om_sum(f, NULL, 0, false);
  CHECK(om_backward(lf, NULL));
  om_tensor *gx3 = om_tensor_grad(x3);
  CHECK_VALUES(f, SHAPE(2), 0, 2, 2);
  CHECK_VALUES(gx3, SHAPE(2), 0, 0, 0);
  R(f); R(lf); R(gx3); R(x3);
  /* followed as PyTorch's CopySlices where the old rule refused: an op read the old value (its
   * record keeps it), a view shares the storage, the source is a leaf */
  om_tensor *u = om_mul(x, y), *e = om_exp(u), *a = om_add(u, y);
  CHECK(om_tensor_copy_from(u, a));
  om_tensor *x2 = leaf((float[]){1, 2}, (int64_t[]){2}, 1), *y2 = leaf((float[]){3, 4}, (int64_t[]){2}, 1);
  om_tensor *v = om_mul(x2, y2), *half = om_slice(v, 0, 0, 1, 1), *hb = om_add(half, half);
  CHECK(om_tensor_copy_from(half, hb)); /* v = [2 x0 y0, x1 y1] */
  om_tensor *w = om_mul(x2, y2);
  CHECK(om_tensor_copy_from(w, y2)); /* w = y2 */
  om_tensor *vw = om_add(v, w), *lv = om_sum(vw, NULL, 0, false);
  CHECK(om_backward(lv, NULL));
  om_tensor *gx2 = om_tensor_grad(x2), *gy2 = om_tensor_grad(y2);
  CHECK_VALUES(gx2, SHAPE(2), 0, 2 * 3, 4);
  CHECK_VALUES(gy2, SHAPE(2), 0, 2 * 1 + 1, 2 + 1);
  R(x2); R(y2); R(vw); R(lv); R(gx2); R(gy2);
  /* rebased, but the backward needs the overwritten value (mul saved it): refused there, loudly */
  om_tensor *m = om_mul(x, y), *mm = om_mul(m, y);
  CHECK(om_tensor_copy_from(m, mm));
  om_tensor *lm = om_sum(m, NULL, 0, false);
  CHECK_ERROR(om_backward(lm, NULL), OM_ERR_AUTOGRAD, "input 0 of mul was changed in place after it was used");
  R(x); R(y); R(s); R(u); R(e); R(a); R(v); R(half); R(hb); R(w); R(m); R(mm); R(lm);
}

TEST(deep_chain) {
  /* 100k ops in a row: the backward walk and the release of the chain are both iterative, so
   * depth is not limited by the C stack (WASM's is 5 MB) */
  om_tensor *x = leaf((float[]){1}, NULL, 0), *y = om_tensor_retain(x);
  for (int k = 0; k < 100000; k++) {
    om_tensor *n = om_add_scalar(y, 0.001);
    R(y);
    y = n;
  }
  CHECK(om_backward(y, NULL));
  om_tensor *g = om_tensor_grad(x);
  CHECK(g && at(g, 0) == 1);
  R(x); R(y); R(g);
}

TEST(free_graph) {
  /* the intermediates held only by the graph go when it is freed; the root and leaves stay */
  om_tensor *x = leaf((float[]){1, 2}, (int64_t[]){2}, 1);
  int64_t base = om_live_tensors();
  om_tensor *e = om_exp(x), *m = om_mul(e, x), *loss = om_sum(m, NULL, 0, false);
  R(e); R(m); /* the graph still holds them: exp's output is mul's input, mul's saved */
  int64_t with_graph = om_live_tensors();
  CHECK(with_graph > base + 1);
  CHECK(om_backward(loss, NULL));
  CHECK(om_tensor_free_graph(loss));
  CHECK(om_live_tensors() == base + 2); /* loss and x's grad */
  CHECK(om_tensor_requires_grad(loss) && !om_tensor_is_leaf(loss));
  CHECK_ERROR(om_backward(loss, NULL), OM_ERR_AUTOGRAD, "backward: the graph through sum was freed by an earlier backward");
  CHECK(om_tensor_free_graph(loss)); /* again: nothing left to free */
  CHECK(om_tensor_free_graph(x));     /* a leaf has no graph */
  /* a graph shared with another root: freeing one refuses the other's backward too */
  om_tensor *h = om_exp(x), *l1 = om_sum(h, NULL, 0, false), *l2 = om_mean(h, NULL, 0, false);
  CHECK(om_tensor_free_graph(l1));
  CHECK_ERROR(om_backward(l2, NULL), OM_ERR_AUTOGRAD, "backward: the graph through exp was freed");
  om_tensor *g = om_tensor_grad(x);
  CHECK_VALUES(g, SHAPE(2), 1e-5, exp(1.0) * 2, exp(2.0) * 3);
  CHECK_ERROR(om_tensor_free_graph(NULL), OM_ERR_INVALID_ARGUMENT, "free_graph");
  R(x); R(loss); R(h); R(l1); R(l2); R(g);
}

int main(void) {
  RUN(chain_rule_by_hand);
  RUN(shared_inputs_and_views);
  RUN(gradient_of_non_scalar_with_given_grad);
  RUN(no_grad_and_detach);
  RUN(autograd_errors);
  RUN(scope_overflow_fails_loudly);
  RUN(inplace_into_nonleaf);
  RUN(deep_chain);
  RUN(free_graph);
  TEST_MAIN_END();
}
