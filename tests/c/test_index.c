/* Value tests for the indexing ops (embedding, index_select, gather, index_add, scatter_add,
 * scatter_reduce, index_put) and interpolate: hand-computed results (the arithmetic is in the comments), gradients
 * against hand sums and the adjoint identity, every error path (kind + message), and the
 * trace's refusal of a symbolic spatial axis into interpolate. */
#include <math.h>
#include <stdlib.h>

#include "internal.h"
#include "om_test.h"

static om_tensor *ti(const int64_t *v, const int64_t *shape, int ndim) { return om_from_data(v, shape, ndim, OM_INT64); }
#define TI(shape, ...) ti((const int64_t[]){__VA_ARGS__}, (const int64_t[])shape, (int)(sizeof((int64_t[])shape) / sizeof(int64_t)))

static om_tensor *interp_size(om_tensor *x, int64_t h, int64_t w, om_interpolate_mode mode, bool ac) {
  return om_interpolate(x, (int64_t[]){h, w}, NULL, mode, ac);
}
static om_tensor *interp_scale(om_tensor *x, double sh, double sw, om_interpolate_mode mode, bool ac) {
  return om_interpolate(x, NULL, (double[]){sh, sw}, mode, ac);
}
#define NEAREST OM_INTERPOLATE_NEAREST
#define BILINEAR OM_INTERPOLATE_BILINEAR
#define BICUBIC OM_INTERPOLATE_BICUBIC

TEST(embedding_forward_and_backward) {
  om_tensor *w = TF(SHAPE(3, 2), 1, 2, 3, 4, 5, 6);
  om_tensor_set_requires_grad(w, true);
  om_tensor *idx = TI(SHAPE(2, 2), 0, 2, 0, 0);
  om_tensor *y = om_embedding(w, idx, 0, false);
  CHECK_VALUES(y, SHAPE(2, 2, 2), 0, 1, 2, 5, 6, 1, 2, 1, 2);
  /* rows 0, 2, 0, 0 get g rows 0..3: dw0 = g0 + g2 + g3, dw1 = 0, dw2 = g1 */
  om_tensor *g = TF(SHAPE(2, 2, 2), 1, 10, 100, 1000, 2, 20, 3, 30);
  CHECK(om_backward(y, g));
  om_tensor *dw = om_tensor_grad(w);
  CHECK_VALUES(dw, SHAPE(3, 2), 0, 6, 60, 0, 0, 100, 1000);
  om_tensor_release(dw);
  om_tensor_zero_grad(w);
  /* padding_idx 0: the padding row is read as stored but gets no gradient */
  om_tensor *yp = om_embedding(w, idx, 0, true);
  CHECK_VALUES(yp, SHAPE(2, 2, 2), 0, 1, 2, 5, 6, 1, 2, 1, 2);
  CHECK(om_backward(yp, g));
  dw = om_tensor_grad(w);
  CHECK_VALUES(dw, SHAPE(3, 2), 0, 0, 0, 0, 0, 100, 1000);
  om_tensor_release(dw);
  om_tensor_zero_grad(w);
  /* padding_idx -1 is the last row (2) */
  om_tensor *yn = om_embedding(w, idx, -1, true);
  CHECK(om_backward(yn, g));
  dw = om_tensor_grad(w);
  CHECK_VALUES(dw, SHAPE(3, 2), 0, 6, 60, 0, 0, 0, 0);
  om_tensor_release(dw);
  /* a 0-d index gives one row */
  om_tensor *i0 = om_from_data((int64_t[]){1}, NULL, 0, OM_INT64), *y0 = om_embedding(w, i0, 0, false);
  CHECK_VALUES(y0, SHAPE(2), 0, 3, 4);
  om_tensor *all[] = {w, idx, y, g, yp, yn, i0, y0};
  om__release_all(all, 8);
}

TEST(embedding_errors) {
  om_tensor *w = TF(SHAPE(3, 2), 1, 2, 3, 4, 5, 6), *w1 = TF(SHAPE(6), 1, 2, 3, 4, 5, 6);
  om_tensor *big = TI(SHAPE(3), 0, 3, 1), *neg = TI(SHAPE(2), 1, -1), *fi = TF(SHAPE(1), 0);
  om_tensor *ok = TI(SHAPE(1), 0);
  CHECK_ERROR(om_embedding(w, big, 0, false) != NULL, OM_ERR_INDEX_OUT_OF_RANGE,
              "embedding: index 3 is out of range for a weight of 3 rows (valid: 0 to 2)");
  CHECK_ERROR(om_embedding(w, neg, 0, false) != NULL, OM_ERR_INDEX_OUT_OF_RANGE, "index -1 is out of range");
  CHECK_ERROR(om_embedding(w, fi, 0, false) != NULL, OM_ERR_DTYPE_MISMATCH, "embedding: index must be int64, not float32");
  CHECK_ERROR(om_embedding(w1, ok, 0, false) != NULL, OM_ERR_SHAPE_MISMATCH, "weight must be 2-D");
  CHECK_ERROR(om_embedding(w, ok, 3, true) != NULL, OM_ERR_INDEX_OUT_OF_RANGE, "padding_idx 3 is out of range for 3 embeddings");
  CHECK_ERROR(om_embedding(w, ok, -4, true) != NULL, OM_ERR_INDEX_OUT_OF_RANGE, "padding_idx -4");
  CHECK_ERROR(om_embedding(w, NULL, 0, false) != NULL, OM_ERR_INVALID_ARGUMENT, "embedding");
  om_tensor *all[] = {w, w1, big, neg, fi, ok};
  om__release_all(all, 6);
}

TEST(index_select_gather_values_and_grads) {
  om_tensor *x = TF(SHAPE(2, 3), 1, 2, 3, 4, 5, 6);
  om_tensor_set_requires_grad(x, true);
  om_tensor *i = TI(SHAPE(3), 2, 0, 2), *i1 = TI(SHAPE(1), 1);
  om_tensor *s0 = om_index_select(x, -2, i1); /* negative dims wrap; indices do not */
  CHECK_VALUES(s0, SHAPE(1, 3), 0, 4, 5, 6);
  om_tensor *s = om_index_select(x, 1, i);
  CHECK_VALUES(s, SHAPE(2, 3), 0, 3, 1, 3, 6, 4, 6);
  /* column 2 picked twice: its gradient is 2 */
  om_tensor *ones = om_full((int64_t[]){2, 3}, 2, OM_FLOAT32, 1);
  CHECK(om_backward(s, ones));
  om_tensor *gx = om_tensor_grad(x);
  CHECK_VALUES(gx, SHAPE(2, 3), 0, 1, 0, 2, 1, 0, 2);
  om_tensor_release(gx);
  om_tensor_zero_grad(x);
  /* gather along dim 1: out[r][c] = x[r][idx[r][c]] */
  om_tensor *gi = TI(SHAPE(2, 2), 0, 0, 1, 0), *g = om_gather(x, 1, gi);
  CHECK_VALUES(g, SHAPE(2, 2), 0, 1, 1, 5, 4);
  om_tensor *ones2 = om_full((int64_t[]){2, 2}, 2, OM_FLOAT32, 1);
  CHECK(om_backward(g, ones2));
  gx = om_tensor_grad(x);
  CHECK_VALUES(gx, SHAPE(2, 3), 0, 2, 0, 0, 1, 1, 0);
  om_tensor_release(gx);
  /* gather along dim 0 with a smaller index: out[r][c] = x[idx[r][c]][c] */
  om_tensor *gi0 = TI(SHAPE(1, 2), 1, 0), *g0 = om_gather(x, 0, gi0);
  CHECK_VALUES(g0, SHAPE(1, 2), 0, 4, 2);
  om_tensor *all[] = {x, i, i1, s, s0, ones, gi, g, ones2, gi0, g0};
  om__release_all(all, 11);
}

TEST(index_add_scatter_add_values) {
  om_tensor *z = TF(SHAPE(3), 0, 0, 0), *i = TI(SHAPE(3), 0, 0, 2), *src = TF(SHAPE(3), 1, 2, 3);
  om_tensor *a = om_index_add(z, 0, i, src);
  CHECK_VALUES(a, SHAPE(3), 0, 3, 0, 3);
  om_tensor *x = TF(SHAPE(2, 2), 1, 1, 1, 1), *si = TI(SHAPE(2, 2), 1, 1, 0, 1), *sv = TF(SHAPE(2, 2), 1, 2, 3, 4);
  om_tensor *sa = om_scatter_add(x, 1, si, sv); /* row 0: [1, 1+1+2]; row 1: [1+3, 1+4] */
  CHECK_VALUES(sa, SHAPE(2, 2), 0, 1, 4, 4, 5);
  CHECK_ERROR(om_scatter_add(x, 1, si, src) != NULL, OM_ERR_SHAPE_MISMATCH, "scatter_add: src [3] must have index's shape [2,2]");
  CHECK_ERROR(om_index_add(z, 0, i, sv) != NULL, OM_ERR_SHAPE_MISMATCH, "index_add: source [2,2]");
  om_tensor *bad = TI(SHAPE(1), 3), *one = TF(SHAPE(1), 1), *sbad = TI(SHAPE(2, 2), 0, 0, 0, 2);
  CHECK_ERROR(om_index_add(z, 0, bad, one) != NULL, OM_ERR_INDEX_OUT_OF_RANGE, "index_add: index 3 is out of range for dim 0 of size 3");
  CHECK_ERROR(om_scatter_add(x, 1, sbad, sv) != NULL, OM_ERR_INDEX_OUT_OF_RANGE, "scatter_add: index 2 is out of range for dim 1 of size 2");
  om_tensor *all[] = {z, i, src, a, x, si, sv, sa, bad, one, sbad};
  om__release_all(all, 11);
}

TEST(index_errors) {
  om_tensor *x = TF(SHAPE(2, 3), 1, 2, 3, 4, 5, 6);
  om_tensor *neg = TI(SHAPE(2), 0, -1), *big = TI(SHAPE(1), 3), *two = TI(SHAPE(1, 2), 0, 1), *f = TF(SHAPE(1), 0);
  om_tensor *gneg = TI(SHAPE(2, 1), 0, -3), *gbig = TI(SHAPE(2, 1), 0, 7), *gwide = TI(SHAPE(3, 1), 0, 0, 0);
  CHECK_ERROR(om_index_select(x, 1, neg) != NULL, OM_ERR_INDEX_OUT_OF_RANGE,
              "index_select: index -1 is out of range for dim 1 of size 3 (valid: 0 to 2; negative indices are not accepted, as in PyTorch)");
  CHECK_ERROR(om_index_select(x, 1, big) != NULL, OM_ERR_INDEX_OUT_OF_RANGE, "index_select: index 3 is out of range for dim 1 of size 3 (valid: 0 to 2)");
  CHECK_ERROR(om_index_select(x, 1, two) != NULL, OM_ERR_SHAPE_MISMATCH, "index_select: index must be 1-D (or 0-d), got 2 dims");
  CHECK_ERROR(om_index_select(x, 2, big) != NULL, OM_ERR_INDEX_OUT_OF_RANGE, "index_select");
  CHECK_ERROR(om_index_select(x, 0, f) != NULL, OM_ERR_DTYPE_MISMATCH, "index_select: index must be int64, not float32");
  CHECK_ERROR(om_gather(x, 1, gneg) != NULL, OM_ERR_INDEX_OUT_OF_RANGE, "gather: index -3 is out of range for dim 1 of size 3");
  CHECK_ERROR(om_gather(x, 1, gbig) != NULL, OM_ERR_INDEX_OUT_OF_RANGE, "gather: index 7 is out of range for dim 1 of size 3");
  CHECK_ERROR(om_gather(x, 1, gwide) != NULL, OM_ERR_SHAPE_MISMATCH, "gather: index [3,1] must have the rank of input [2,3] and no larger size off dim 1");
  CHECK_ERROR(om_gather(x, 1, neg) != NULL, OM_ERR_SHAPE_MISMATCH, "gather: index [2]");
  om_tensor *x0 = om_scalar(7, OM_FLOAT32), *zero = TI(SHAPE(1), 0), *zeros2 = TI(SHAPE(2), 0, 0);
  om_tensor_set_requires_grad(x0, true);
  om_tensor *y0 = om_index_select(x0, 0, zero); /* a 0-d input stays 0-d */
  CHECK(y0 && om_tensor_ndim(y0) == 0 && at(y0, 0) == 7);
  CHECK(om_backward(y0, NULL));
  om_tensor *g0 = om_tensor_grad(x0);
  CHECK(g0 && om_tensor_ndim(g0) == 0 && at(g0, 0) == 1);
  om_tensor_release(g0);
  CHECK_ERROR(om_index_select(x0, 0, zeros2) != NULL, OM_ERR_SHAPE_MISMATCH, "index_select: an index into a 0-d input must have 1 value, got 2");
  CHECK_ERROR(om_index_select(x0, 0, big) != NULL, OM_ERR_INDEX_OUT_OF_RANGE, "index_select: index 3 is out of range for dim 0 of size 1");
  om_tensor *all[] = {x, neg, big, two, f, gneg, gbig, gwide, x0, zero, zeros2, y0};
  om__release_all(all, 12);
}

TEST(index_put_values_grads_and_errors) {
  om_tensor *x = TF(SHAPE(3, 2), 1, 2, 3, 4, 5, 6), *i = TI(SHAPE(3), 2, 0, -1), *j = TI(SHAPE(1), 1);
  om_tensor *v = TF(SHAPE(3, 2), 10, 20, 30, 40, 50, 60), *s = TF(SHAPE(1), 9);
  om_tensor_set_requires_grad(x, true);
  om_tensor_set_requires_grad(v, true);
  /* rows 2, 0, 2 (-1) written in order: row 2 ends as the last, [50, 60] */
  om_tensor *y = om_index_put(x, &i, 1, v, false);
  CHECK_VALUES(y, SHAPE(3, 2), 0, 30, 40, 3, 4, 50, 60);
  /* added: row 2 gets both */
  om_tensor *ya = om_index_put(x, &i, 1, v, true);
  CHECK_VALUES(ya, SHAPE(3, 2), 0, 31, 42, 3, 4, 65, 86);
  /* (i, j) broadcast to [3]: elements (2,1), (0,1), (2,1); a 1-element value broadcast */
  om_tensor *ij[] = {i, j}, *yb = om_index_put(x, ij, 2, s, false);
  CHECK_VALUES(yb, SHAPE(3, 2), 0, 1, 9, 3, 4, 5, 9);
  /* gradients: x gets g where nothing was written; every value its place's g */
  om_tensor *g = TF(SHAPE(3, 2), 1, 2, 3, 4, 5, 6);
  CHECK(om_backward(y, g));
  om_tensor *dx = om_tensor_grad(x), *dv = om_tensor_grad(v);
  CHECK_VALUES(dx, SHAPE(3, 2), 0, 0, 0, 3, 4, 0, 0);
  CHECK_VALUES(dv, SHAPE(3, 2), 0, 5, 6, 1, 2, 5, 6);
  om__release_all((om_tensor *[]){dx, dv}, 2);
  om_tensor *big = TI(SHAPE(1), 3), *f = TF(SHAPE(1), 0), *vi = TI(SHAPE(1), 1);
  CHECK_ERROR(om_index_put(x, &big, 1, s, false) != NULL, OM_ERR_INDEX_OUT_OF_RANGE,
              "index_put: index 3 is out of range for dim 0 of size 3 (valid: -3 to 2)");
  CHECK_ERROR(om_index_put(x, &f, 1, s, false) != NULL, OM_ERR_DTYPE_MISMATCH, "index_put: index 0 is float32; indices must be int64");
  CHECK_ERROR(om_index_put(x, ij, 0, s, false) != NULL, OM_ERR_INVALID_ARGUMENT, "index_put: 0 index tensors for an input of 2 dims");
  CHECK_ERROR(om_index_put(x, &j, 1, vi, false) != NULL, OM_ERR_DTYPE_MISMATCH, "index_put: values are int64, input float32 (they must match)");
  /* the op itself: indices [.., k] and values of the shape they give */
  om_tensor *k3 = TI(SHAPE(1, 3), 0, 0, 0), *k1 = TI(SHAPE(2, 1), 0, 1);
  om_attrs put = om__attrs_i(1, (int64_t[]){0}), bad = om__attrs_i(1, (int64_t[]){2});
  CHECK_ERROR(om__apply1(OM_OP_index_put, (om_tensor *[]){x, k3, s}, 3, &put) != NULL, OM_ERR_SHAPE_MISMATCH,
              "index_put: indices [1,3] must be [..., k] with k from 1 to input [3,2]'s 2 dims");
  CHECK_ERROR(om__apply1(OM_OP_index_put, (om_tensor *[]){x, k1, s}, 3, &put) != NULL, OM_ERR_SHAPE_MISMATCH,
              "index_put: values [1] must be [2,2] (the indices' batch shape, then input's dims after the 1 indexed)");
  CHECK_ERROR(om__apply1(OM_OP_index_put, (om_tensor *[]){x, k1, v}, 3, &bad) != NULL, OM_ERR_INVALID_ARGUMENT,
              "index_put: takes one attribute (accumulate: 0 or 1)");
  om_tensor *bx = om_full((int64_t[]){2}, 1, OM_BOOL, 0), *bv = om_full((int64_t[]){1}, 1, OM_BOOL, 1);
  /* accumulate on bool: a logical or (PyTorch's bool +=), a false written after a true keeps it */
  om_tensor *twice = TI(SHAPE(3), 1, 1, 0), *bw = om_from_data((const unsigned char[]){1, 0, 0}, (int64_t[]){3}, 1, OM_BOOL);
  om_tensor *bo = om_index_put(bx, &twice, 1, bw, true);
  CHECK_VALUES(bo, SHAPE(2), 0, 0, 1);
  om_tensor *all[] = {x, i, j, v, s, y, ya, yb, g, big, f, vi, k3, k1, bx, bv, twice, bw, bo};
  om__release_all(all, 19);
}

TEST(interpolate_nearest) {
  om_tensor *x = TF(SHAPE(1, 1, 2, 2), 1, 2, 3, 4);
  om_tensor *y = interp_size(x, 4, 4, NEAREST, false);
  CHECK_VALUES(y, SHAPE(1, 1, 4, 4), 0, 1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4);
  om_tensor *ys = interp_scale(x, 2, 2, NEAREST, false);
  CHECK_VALUES(ys, SHAPE(1, 1, 4, 4), 0, 1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4);
  /* 3 -> 5: src = floor(dst * 0.6) = 0, 0, 1, 1, 2 */
  om_tensor *r = TF(SHAPE(1, 1, 1, 3), 10, 20, 30), *y5 = interp_size(r, 1, 5, NEAREST, false);
  CHECK_VALUES(y5, SHAPE(1, 1, 1, 5), 0, 10, 10, 20, 20, 30);
  /* 5 -> 2: src = floor(dst * 2.5) = 0, 2 */
  om_tensor *r5 = TF(SHAPE(1, 1, 1, 5), 1, 2, 3, 4, 5), *y2 = interp_size(r5, 1, 2, NEAREST, false);
  CHECK_VALUES(y2, SHAPE(1, 1, 1, 2), 0, 1, 3);
  /* scale 1.5 on 4: out floor(6) = 6, src = floor(dst / 1.5) = 0, 0, 1, 2, 2, 3 */
  om_tensor *r4 = TF(SHAPE(1, 1, 1, 4), 1, 2, 3, 4), *y6 = interp_scale(r4, 1, 1.5, NEAREST, false);
  CHECK_VALUES(y6, SHAPE(1, 1, 1, 6), 0, 1, 1, 2, 3, 3, 4);
  /* the backward of 2x nearest sums each 2x2 block */
  om_tensor_set_requires_grad(x, true);
  om_tensor *yg = interp_size(x, 4, 4, NEAREST, false), *sum = om_sum(yg, NULL, 0, false);
  CHECK(om_backward(sum, NULL));
  om_tensor *gx = om_tensor_grad(x);
  CHECK_VALUES(gx, SHAPE(1, 1, 2, 2), 0, 4, 4, 4, 4);
  om_tensor *all[] = {x, y, ys, r, y5, r5, y2, r4, y6, yg, sum, gx};
  om__release_all(all, 12);
}

TEST(interpolate_bilinear) {
  /* [0, 4] to width 4, align_corners false: src = max(0.5 (dst + 0.5) - 0.5, 0) = 0, .25, .75, 1.25 (edge clamp) */
  om_tensor *a = TF(SHAPE(1, 1, 1, 2), 0, 4);
  om_tensor *y = interp_size(a, 1, 4, BILINEAR, false);
  CHECK_VALUES(y, SHAPE(1, 1, 1, 4), 1e-6, 0, 1, 3, 4);
  /* align_corners true: src = dst / 3 */
  om_tensor *yc = interp_size(a, 1, 4, BILINEAR, true);
  CHECK_VALUES(yc, SHAPE(1, 1, 1, 4), 1e-6, 0, 4.0 / 3, 8.0 / 3, 4);
  /* [0, 3, 6] (= 3 src) to 5: half-pixel src = 0.6 (dst + .5) - .5 = -.2 -> 0, .4, 1, 1.6, 2.2 -> 2 */
  om_tensor *b = TF(SHAPE(1, 1, 1, 3), 0, 3, 6);
  om_tensor *y5 = interp_size(b, 1, 5, BILINEAR, false), *y5c = interp_size(b, 1, 5, BILINEAR, true);
  CHECK_VALUES(y5, SHAPE(1, 1, 1, 5), 1e-5, 0, 1.2, 3, 4.8, 6);
  CHECK_VALUES(y5c, SHAPE(1, 1, 1, 5), 1e-5, 0, 1.5, 3, 4.5, 6);
  /* scale_factor 1.7: 5 outputs, but the coordinates use 1/1.7, not 3/5 (PyTorch's default) */
  om_tensor *y17 = interp_scale(b, 1, 1.7, BILINEAR, false);
  double s = 1 / 1.7;
  CHECK_VALUES(y17, SHAPE(1, 1, 1, 5), 1e-5, 0, 3 * (1.5 * s - .5), 3 * (2.5 * s - .5), 3 * (3.5 * s - .5), 6);
  /* 2-D: x[i][j] = 2i + j is linear, so bilinear reproduces it at the source coordinates */
  om_tensor *p = TF(SHAPE(1, 1, 2, 2), 0, 1, 2, 3);
  om_tensor *p3 = interp_size(p, 3, 3, BILINEAR, true), *p4 = interp_size(p, 4, 4, BILINEAR, false);
  CHECK_VALUES(p3, SHAPE(1, 1, 3, 3), 1e-6, 0, .5, 1, 1, 1.5, 2, 2, 2.5, 3);
  CHECK_VALUES(p4, SHAPE(1, 1, 4, 4), 1e-6, 0, .25, .75, 1, .5, .75, 1.25, 1.5, 1.5, 1.75, 2.25, 2.5, 2, 2.25, 2.75, 3);
  /* backward of [0, 4] -> 4: weights per output (1,0) (.75,.25) (.25,.75) (0,1): column sums 2, 2 */
  om_tensor_set_requires_grad(a, true);
  om_tensor *yg = interp_size(a, 1, 4, BILINEAR, false), *sum = om_sum(yg, NULL, 0, false);
  CHECK(om_backward(sum, NULL));
  om_tensor *ga = om_tensor_grad(a);
  CHECK_VALUES(ga, SHAPE(1, 1, 1, 2), 1e-6, 2, 2);
  om_tensor *all[] = {a, y, yc, b, y5, y5c, y17, p, p3, p4, yg, sum, ga};
  om__release_all(all, 13);
}

/* <interpolate(x), g> == <x, interpolate^T(g)> for every mode, at odd sizes, on a strided input. */
TEST(interpolate_backward_is_the_adjoint) {
  om_tensor *base = om_randn((int64_t[]){2, 3, 5, 4}, 4, 11, true);
  om_tensor *x = om_transpose(base, 2, 3); /* [2, 3, 4, 5], not contiguous */
  om_tensor *xl = om_detach(x);
  om_tensor_set_requires_grad(base, true);
  struct { int64_t h, w; om_interpolate_mode m; bool ac; } cases[] = {
      {7, 3, NEAREST, false}, {9, 11, BILINEAR, false}, {2, 8, BILINEAR, true}, {1, 1, BILINEAR, true}, {3, 2, BILINEAR, false},
      {9, 11, BICUBIC, false}, {2, 8, BICUBIC, true}, {1, 1, BICUBIC, false}, {3, 2, BICUBIC, false}};
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    om_tensor *xx = om_transpose(base, 2, 3);
    om_tensor *y = interp_size(xx, cases[k].h, cases[k].w, cases[k].m, cases[k].ac);
    om_tensor *g = y ? om_randn(om_tensor_shape(y), 4, 20 + k, true) : NULL;
    om_tensor *yg = om_mul(y, g), *lhs = om_sum(yg, NULL, 0, false);
    om_tensor_zero_grad(base);
    CHECK(om_backward(y, g));
    om_tensor *gb = om_tensor_grad(base), *gx = gb ? om_transpose(gb, 2, 3) : NULL;
    om_tensor *xg = om_mul(xl, gx), *rhs = om_sum(xg, NULL, 0, false);
    CHECK_NEAR(at(lhs, 0), at(rhs, 0), 1e-3);
    om_tensor *all[] = {xx, y, g, yg, lhs, gb, gx, xg, rhs};
    om__release_all(all, 9);
  }
  om_tensor *all[] = {base, x, xl};
  om__release_all(all, 3);
}

TEST(interpolate_errors) {
  om_tensor *x = om_zeros((int64_t[]){1, 1, 2, 2}, 4, OM_FLOAT32), *x3 = om_zeros((int64_t[]){1, 2, 2}, 3, OM_FLOAT32);
  om_tensor *xi = om_zeros((int64_t[]){1, 1, 2, 2}, 4, OM_INT64);
  CHECK_ERROR(interp_size(x, 4, 4, NEAREST, true) != NULL, OM_ERR_INVALID_ARGUMENT,
              "interpolate: align_corners can only be set with mode 'bilinear' or 'bicubic', not 'nearest'");
  CHECK_ERROR(om_interpolate(x, (int64_t[]){4, 4}, (double[]){2, 2}, NEAREST, false) != NULL, OM_ERR_INVALID_ARGUMENT,
              "interpolate: give exactly one of size and scale_factor");
  CHECK_ERROR(om_interpolate(x, NULL, NULL, NEAREST, false) != NULL, OM_ERR_INVALID_ARGUMENT, "exactly one");
  CHECK_ERROR(interp_size(x3, 4, 4, NEAREST, false) != NULL, OM_ERR_SHAPE_MISMATCH, "interpolate: takes a 4-D input [N, C, H, W], got [1,2,2]");
  CHECK_ERROR(interp_size(xi, 4, 4, NEAREST, false) != NULL, OM_ERR_DTYPE_MISMATCH, "interpolate: takes float32, not int64");
  CHECK_ERROR(interp_size(x, 0, 4, NEAREST, false) != NULL, OM_ERR_INVALID_ARGUMENT, "interpolate: input and output sizes must be greater than 0");
  CHECK_ERROR(interp_scale(x, 0.2, 1, NEAREST, false) != NULL, OM_ERR_INVALID_ARGUMENT, "output (0, 2)");
  CHECK_ERROR(interp_scale(x, -1, 1, NEAREST, false) != NULL, OM_ERR_INVALID_ARGUMENT, "interpolate: scale_factor -1 must be positive and finite");
  CHECK_ERROR(interp_scale(x, NAN, 1, BILINEAR, false) != NULL, OM_ERR_INVALID_ARGUMENT, "must be positive and finite");
  CHECK_ERROR(interp_size(x, 4, 4, (om_interpolate_mode)7, false) != NULL, OM_ERR_INVALID_ARGUMENT,
              "interpolate: mode 7 is not 0 (nearest), 1 (bilinear) or 2 (bicubic)");
  CHECK_ERROR(interp_size(NULL, 4, 4, NEAREST, false) != NULL, OM_ERR_INVALID_ARGUMENT, "interpolate");
  /* has_scale 2 (JS recomputeScaleFactor: the size floor(in * scale), sampled as if given), no other */
  om_attrs bad = {.n_i = 5, .i = {NEAREST, 0, 0, 0, 3}, .n_f = 2, .f = {2, 2}};
  CHECK_ERROR(om__apply1(OM_OP_interpolate, &x, 1, &bad) != NULL, OM_ERR_INVALID_ARGUMENT,
              "interpolate: has_scale must be 0 (size), 1 (scale) or 2 (scale, recomputed), not 3");
  om_attrs recomputed = {.n_i = 5, .i = {NEAREST, 0, 0, 0, 2}, .n_f = 2, .f = {1.7, 2}};
  om_tensor *r = om__apply1(OM_OP_interpolate, &x, 1, &recomputed);
  CHECK(r && om_tensor_shape(r)[2] == 3 && om_tensor_shape(r)[3] == 4); /* floor(2 * 1.7) */
  om_tensor_release(r);
  om_tensor *all[] = {x, x3, xi};
  om__release_all(all, 3);
}

/* Models for om_test_trace: interpolate's forms on symbolic spatial axes. */
static int bilinear_by_2(om_tensor *const *in, om_tensor **out) { return (*out = interp_scale(in[0], 2, 2, BILINEAR, false)) ? 1 : -1; }
static int bilinear_by_1_5(om_tensor *const *in, om_tensor **out) { return (*out = interp_scale(in[0], 1.5, 2, BILINEAR, false)) ? 1 : -1; }
static int bicubic_by_1_5(om_tensor *const *in, om_tensor **out) { return (*out = interp_scale(in[0], 1.5, 2, OM_INTERPOLATE_BICUBIC, false)) ? 1 : -1; }
static int nearest_by_3(om_tensor *const *in, om_tensor **out) { return (*out = interp_scale(in[0], 3, 0.5, NEAREST, false)) ? 1 : -1; }
static int nearest_by_2_5(om_tensor *const *in, om_tensor **out) { return (*out = interp_scale(in[0], 2.5, 2, NEAREST, false)) ? 1 : -1; }
static int bilinear_to_7x3(om_tensor *const *in, om_tensor **out) { return (*out = interp_size(in[0], 7, 3, BILINEAR, true)) ? 1 : -1; }

/* Interpolate on symbolic spatial axes: by a scale factor float holds exactly, bilinear is
 * Resize with scales (the output extent 2*h); nearest by a whole scale or 1 / 2^j too, by another
 * scale computes its source indices from the size, and bilinear and bicubic their taps (two and
 * four Gathers an axis: ONNX's coordinates round otherwise, and by a scale between 1 and 2 it
 * would copy where the size is kept); a fixed size stays fixed while batch and channels carry
 * over. The values at other sizes: tests/js/graph-economy.test.mjs. */
TEST(interpolate_symbolic_axes_in_a_trace) {
  om_tensor *x0 = om_randn((int64_t[]){2, 3, 4, 5}, 4, 3, true);
  const char *const hw[] = {NULL, NULL, "h", "w"}, *const bc[] = {"batch", "ch", NULL, NULL};
  CHECK(om_trace_begin());
  om_traced_model *m = om_test_trace(bilinear_by_2, x0, hw, 1);
  om_test_check_out(m, 0, "2,3,2*h,2*w");
  CHECK_EQ_INT(om_test_count_op(m, "Resize"), 1);
  CHECK_EQ_INT(om_test_count_op(m, "Shape"), 0); /* scales, not sizes: nothing computed */
  om_traced_release(m);

  CHECK(om_trace_begin());
  m = om_test_trace(nearest_by_3, x0, hw, 1);
  om_test_check_out(m, 0, "2,3,3*h,floor(w/2)");
  CHECK_EQ_INT(om_test_count_op(m, "Resize"), 1);
  CHECK_EQ_INT(om_test_count_op(m, "Shape"), 0);
  om_traced_release(m);

  CHECK(om_trace_begin());
  m = om_test_trace(nearest_by_2_5, x0, hw, 1);
  om_test_check_out(m, 0, "2,3,2*h+floor(h/2),2*w");
  CHECK_EQ_INT(om_test_count_op(m, "Gather"), 2); /* 2.5: ONNX's dst / 2.5 floors elsewhere at some sizes */
  CHECK_EQ_INT(om_test_count_op(m, "Resize"), 0);
  om_traced_release(m);

  CHECK(om_trace_begin());
  m = om_test_trace(bilinear_by_1_5, x0, hw, 1);
  CHECK_EQ_INT(om_test_count_op(m, "Resize"), 0);
  CHECK_EQ_INT(om_test_count_op(m, "Gather"), 4); /* the eager taps: onnxruntime's coordinates by 1.5 round otherwise */
  om_traced_release(m);
  CHECK(!om_trace_active());

  CHECK(om_trace_begin());
  m = om_test_trace(bicubic_by_1_5, x0, hw, 1);
  om_test_check_out(m, 0, "2,3,h+floor(h/2),2*w");
  CHECK_EQ_INT(om_test_count_op(m, "Resize"), 0);
  CHECK_EQ_INT(om_test_count_op(m, "Gather"), 8); /* the eager taps, four an axis */
  om_traced_release(m);
  CHECK(!om_trace_active());

  CHECK(om_trace_begin());
  m = om_test_trace(bilinear_to_7x3, x0, bc, 1);
  om_test_check_out(m, 0, "batch,ch,7,3");
  om_traced_release(m);
  om_tensor_release(x0);
}

/* The argument of om__nearest_scale_exact, position by position: where it says so, ONNX Resize's
 * nearest source floor((float)dst / s) and the eager kernel's floor((float)dst * (float)(1 / s))
 * are both dst / s at every output position below 2^22 (the scales it refuses may differ). */
TEST(interpolate_nearest_whole_scales_match_onnx) {
  int exact = 0;
  for (int64_t s = 1; s <= 40; s++) {
    if (!om__nearest_scale_exact(s)) continue;
    exact++;
    float f = (float)(1.0 / (double)s);
    int64_t bad = -1;
    for (int64_t d = 0; d < (1 << 22) && bad < 0; d++)
      if ((int64_t)floorf((float)d * f) != d / s || (int64_t)floorf((float)d / (float)s) != d / s) bad = d;
    if (bad >= 0) FAILED("scale %lld: position %lld", (long long)s, (long long)bad);
  }
  CHECK_EQ_INT(exact, 38); /* all but 25 and 31 (which hold too, but not by the argument) */
  /* 41: (float)(1 / 41) is low by more than 2^-26, and the eager kernel's output 41 reads source 0 */
  CHECK(!om__nearest_scale_exact(41));
  CHECK_EQ_INT((int64_t)floorf(41.0f * (float)(1.0 / 41)), 0);
  CHECK(!om__nearest_scale_exact(0));
  CHECK(!om__nearest_scale_exact((1 << 16) + 1));
}

/* scatter_reduce's prod, amax and amin with repeated places, a NaN, and gradients worked by hand:
 * amax and amin share g among the input and the sources that equal the result. */
static void check_reduce_grads(om_tensor *x, om_tensor *i, om_tensor *src, om_scatter_reduce_mode mode, const double *dx, const double *dsrc) {
  om_tensor_set_requires_grad(x, true);
  om_tensor_set_requires_grad(src, true);
  om_tensor *y = om_scatter_reduce(x, 0, i, src, mode), *g = TF(SHAPE(3), 1, 10, 100);
  CHECK(om_backward(y, g));
  om_tensor *gx = om_tensor_grad(x), *gs = om_tensor_grad(src);
  for (int k = 0; k < 3; k++) CHECK_NEAR(at(gx, k), dx[k], 1e-6);
  for (int k = 0; k < 4; k++) CHECK_NEAR(at(gs, k), dsrc[k], 1e-6);
  om_tensor_zero_grad(x);
  om_tensor_zero_grad(src);
  om__release_all((om_tensor *[]){y, g, gx, gs}, 4);
}

TEST(scatter_reduce_values_grads_and_errors) {
  om_tensor *x = TF(SHAPE(3), 1, 2, 0), *i = TI(SHAPE(4), 0, 0, 2, 2), *src = TF(SHAPE(4), 3, 1, 0, -1);
  om_tensor *mx = om_scatter_reduce(x, 0, i, src, OM_SCATTER_AMAX), *mn = om_scatter_reduce(x, 0, i, src, OM_SCATTER_AMIN);
  om_tensor *sum = om_scatter_reduce(x, 0, i, src, OM_SCATTER_SUM);
  CHECK_VALUES(mx, SHAPE(3), 0, 3, 2, 0);   /* max(1, 3, 1), 2, max(0, 0, -1) */
  CHECK_VALUES(mn, SHAPE(3), 0, 1, 2, -1);  /* min(1, 3, 1), 2, min(0, 0, -1) */
  CHECK_VALUES(sum, SHAPE(3), 0, 5, 2, -1); /* scatter_add's */
  /* amax: place 0 from src 0 alone; place 2 a tie of x[2] and src 2, half each */
  check_reduce_grads(x, i, src, OM_SCATTER_AMAX, (double[]){0, 10, 50}, (double[]){1, 0, 50, 0});
  /* amin: place 0 a tie of x[0] and src 1; place 2 from src 3 */
  check_reduce_grads(x, i, src, OM_SCATTER_AMIN, (double[]){0.5, 10, 0}, (double[]){0, 0.5, 0, 100});
  om_tensor *x2 = TF(SHAPE(3), 1, 2, 2), *p = om_scatter_reduce(x2, 0, i, src, OM_SCATTER_PROD);
  CHECK_VALUES(p, SHAPE(3), 0, 3, 2, 0); /* 1 x 3 x 1, 2, 2 x 0 x -1 */
  /* prod: dx = g times the sources' product (0 at place 2); dsrc = g y / src, and for src 2, the
   * only zero at its place, g times the product without it: 100 x 2 x -1 */
  check_reduce_grads(x2, i, src, OM_SCATTER_PROD, (double[]){3, 10, 0}, (double[]){1, 3, -200, 0});
  om_tensor *one = TF(SHAPE(1), 1), *i2 = TI(SHAPE(2), 0, 0), *nan = TF(SHAPE(2), NAN, 5), *late = TF(SHAPE(2), 5, NAN);
  om_tensor *n1 = om_scatter_reduce(one, 0, i2, nan, OM_SCATTER_AMAX), *n2 = om_scatter_reduce(one, 0, i2, late, OM_SCATTER_AMIN);
  CHECK(isnan(at(n1, 0)) && isnan(at(n2, 0))); /* a NaN stays, wherever it comes */
  CHECK_ERROR(om_scatter_reduce(x, 0, i, src, (om_scatter_reduce_mode)4) != NULL, OM_ERR_INVALID_ARGUMENT,
              "scatter_reduce: reduce 4 is not prod (1), amax (2) or amin (3)");
  CHECK_ERROR(om_scatter_reduce(x, 0, i, one, OM_SCATTER_PROD) != NULL, OM_ERR_SHAPE_MISMATCH, "scatter_reduce: src [1] must have index's shape [4]");
  om_tensor *bad = TI(SHAPE(4), 0, 3, 0, 0);
  CHECK_ERROR(om_scatter_reduce(x, 0, bad, src, OM_SCATTER_AMAX) != NULL, OM_ERR_INDEX_OUT_OF_RANGE,
              "scatter_reduce: index 3 is out of range for dim 0 of size 3");
  om_tensor *ints = TI(SHAPE(3), 1, 2, 3);
  CHECK_ERROR(om_scatter_reduce(ints, 0, i2, nan, OM_SCATTER_AMIN) != NULL, OM_ERR_DTYPE_MISMATCH,
              "scatter_reduce: src is float32, input int64 (they must match, as PyTorch's)");
  om_tensor *isrc4 = om_cast(src, OM_INT64), *b1 = om_cast(one, OM_BOOL), *b2 = om_cast(nan, OM_BOOL);
  CHECK_ERROR(om_scatter_add(x, 0, i, isrc4) != NULL, OM_ERR_DTYPE_MISMATCH, "scatter_add: src is int64, input float32 (they must match, as PyTorch's)");
  CHECK_ERROR(om_scatter_reduce(b1, 0, i2, b2, OM_SCATTER_AMAX) != NULL, OM_ERR_DTYPE_MISMATCH, "scatter_reduce: input must be float32, not bool");
  /* int64 input and src: int64 out, each reduction in integers (1 with -4 and 9 at place 0) */
  om_tensor *isrc = TI(SHAPE(2), -4, 9), *ir[4];
  for (int k = 0; k < 4; k++) ir[k] = om_scatter_reduce(ints, 0, i2, isrc, (om_scatter_reduce_mode)k);
  for (int k = 0; k < 4; k++) CHECK(ir[k] && om_tensor_dtype(ir[k]) == OM_INT64);
  CHECK_VALUES(ir[OM_SCATTER_SUM], SHAPE(3), 0, 6, 2, 3);
  CHECK_VALUES(ir[OM_SCATTER_PROD], SHAPE(3), 0, -36, 2, 3);
  CHECK_VALUES(ir[OM_SCATTER_AMAX], SHAPE(3), 0, 9, 2, 3);
  CHECK_VALUES(ir[OM_SCATTER_AMIN], SHAPE(3), 0, -4, 2, 3);
  om__release_all(ir, 4);
  om__release_all((om_tensor *[]){x, i, src, mx, mn, sum, x2, p, one, i2, nan, late, n1, n2, bad, ints, isrc, isrc4, b1, b2}, 20);
}

int main(void) {
  RUN(embedding_forward_and_backward);
  RUN(embedding_errors);
  RUN(index_select_gather_values_and_grads);
  RUN(index_add_scatter_add_values);
  RUN(scatter_reduce_values_grads_and_errors);
  RUN(index_errors);
  RUN(index_put_values_grads_and_errors);
  RUN(interpolate_nearest);
  RUN(interpolate_bilinear);
  RUN(interpolate_backward_is_the_adjoint);
  RUN(interpolate_errors);
  RUN(interpolate_symbolic_axes_in_a_trace);
  RUN(interpolate_nearest_whole_scales_match_onnx);
  TEST_MAIN_END();
}
