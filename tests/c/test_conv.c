/* Convolution and pooling values against hand-computed results and identities (a 1x1 conv is a
 * matmul, conv1d is conv2d on a unit height, the transposed conv is the adjoint of the conv),
 * their gradients on hand cases, and every error path. The table tests (test_ops.c) add layout
 * independence and finite-difference gradients for every op of the family. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "om_test.h"

static const int64_t ONE[2] = {1, 1}, ZERO[2] = {0, 0}, k_huge[2] = {INT64_C(1) << 33, 2};

static bool same_values(om_tensor *a, om_tensor *b, double tol) {
  if (!a || !b || om_tensor_numel(a) != om_tensor_numel(b)) return false;
  for (int64_t k = 0; k < om_tensor_numel(a); k++)
    if (!(fabs(at(a, k) - at(b, k)) <= tol)) return false;
  return true;
}

/* sum(a * b) in double */
static double dot(om_tensor *a, om_tensor *b) {
  double s = 0;
  for (int64_t k = 0; k < om_tensor_numel(a); k++) s += at(a, k) * at(b, k);
  return s;
}

TEST(conv2d_1x1_equals_matmul) {
  om_tensor *x = om_randn((int64_t[]){2, 3, 4, 5}, 4, 1, true), *w = om_randn((int64_t[]){6, 3, 1, 1}, 4, 2, true);
  om_tensor *y = om_conv2d(x, w, NULL, ONE, ZERO, ONE, 1);
  om_tensor *w2 = om_reshape(w, (int64_t[]){6, 3}, 2), *x3 = om_reshape(x, (int64_t[]){2, 3, 20}, 3);
  om_tensor *m = om_matmul(w2, x3), *m4 = om_reshape(m, (int64_t[]){2, 6, 4, 5}, 4);
  CHECK(y && m4);
  CHECK_EQ_INT(om_tensor_shape(y)[1], 6);
  CHECK(same_values(y, m4, 0)); /* the same gemm on the same operands: the same bits */
  /* strided 1x1 with padding goes through im2col: the corners read only padding */
  om_tensor *z = om_conv2d(x, w, NULL, (int64_t[]){2, 2}, ONE, ONE, 1);
  CHECK(z && om_tensor_shape(z)[2] == 3 && om_tensor_shape(z)[3] == 4);
  CHECK_NEAR(at(z, 0), 0, 0);
  CHECK_NEAR(at(z, 5), at(m4, 1 * 5 + 1), 1e-6); /* out (1,1) reads input (1,1) */
  om_tensor *all[] = {x, w, y, w2, x3, m, m4, z};
  om__release_all(all, 8);
}

/* NULL for stride, padding, output_padding or dilation is PyTorch's default (1, 0, 0, 1). */
TEST(conv_null_arrays_are_the_defaults) {
  om_tensor *x = om_randn((int64_t[]){2, 3, 7, 6}, 4, 3, true), *w = om_randn((int64_t[]){4, 3, 3, 3}, 4, 4, true);
  om_tensor *wt = om_randn((int64_t[]){3, 4, 3, 3}, 4, 5, true);
  om_tensor *y = om_conv2d(x, w, NULL, NULL, NULL, NULL, 1), *y1 = om_conv2d(x, w, NULL, ONE, ZERO, ONE, 1);
  om_tensor *t = om_conv_transpose2d(x, wt, NULL, NULL, NULL, NULL, 1, NULL);
  om_tensor *t1 = om_conv_transpose2d(x, wt, NULL, ONE, ZERO, ZERO, 1, ONE);
  CHECK(y && y1 && t && t1);
  CHECK(om_tensor_shape(y)[2] == 5 && om_tensor_shape(t)[2] == 9);
  CHECK(same_values(y, y1, 0) && same_values(t, t1, 0));
  om_tensor *all[] = {x, w, wt, y, y1, t, t1};
  om__release_all(all, 7);
}

/* The convolution (im2col with its fast path for stride-1 "same" convolutions, shifted planes,
 * and the stride-1 windows read in place from a padded image) against im2col written the plain
 * way, through the same product: the same bits, for strides, padding, dilation, groups, taps
 * wholly outside the plane (a 5x5 kernel on 3x2), more than 256 rows (two KC blocks of the
 * product), more than 512 columns (two NC blocks), output channels that are not a multiple of
 * the tile's 4 (LeNet's 6 and 16), depthwise (one input and one output channel per group, summed
 * directly: strides 1, 2 and 3, dilation, 5x5, rows of 8 and more columns and a shorter rest;
 * with two output channels per group or 17x17 taps, more than a KC block, the product's path)
 * and 2 per group, products split in guided bands of output rows (one image in shrinking bands
 * down to single rows, 3 images in bands cut at each image's last row; in place, im2col, shifted
 * planes and 1x1), weights packed once for all the parts (3 images, and 2 and 4 groups: each group's own
 * packed panels), and an infinite weight (its products with the padding's zeros are NaN in
 * both, depthwise and not). */
TEST(conv2d_windows_are_im2col_written_plainly) {
  struct { int64_t n, c, h, w, o, kh, kw, s[2], p[2], d[2], groups; } cases[] = {
      {2, 3, 7, 5, 4, 3, 3, {1, 1}, {1, 1}, {1, 1}, 1}, {1, 4, 9, 11, 6, 3, 2, {2, 3}, {1, 2}, {1, 1}, 2},
      {1, 2, 8, 8, 3, 3, 3, {1, 1}, {2, 2}, {2, 2}, 1},  {1, 30, 6, 6, 5, 3, 3, {1, 1}, {1, 1}, {1, 1}, 1},
      {1, 2, 30, 24, 3, 3, 3, {1, 1}, {1, 1}, {1, 1}, 1}, {3, 1, 3, 2, 2, 5, 5, {1, 1}, {2, 2}, {1, 1}, 1},
      {1, 2, 4, 3, 2, 3, 3, {1, 1}, {2, 2}, {2, 2}, 1},  {1, 1, 5, 6, 1, 1, 3, {1, 1}, {0, 1}, {1, 1}, 1},
      {2, 4, 6, 7, 8, 3, 3, {1, 1}, {1, 1}, {1, 1}, 2},  {1, 3, 2, 9, 4, 3, 3, {1, 1}, {1, 1}, {1, 1}, 1},
      {2, 1, 28, 28, 6, 5, 5, {1, 1}, {2, 2}, {1, 1}, 1}, {2, 6, 14, 14, 16, 5, 5, {1, 1}, {0, 0}, {1, 1}, 1},
      {2, 6, 7, 9, 6, 3, 3, {1, 1}, {1, 1}, {1, 1}, 6}, {1, 4, 6, 5, 8, 3, 3, {1, 1}, {1, 1}, {1, 1}, 4},
      {2, 8, 17, 19, 8, 3, 3, {2, 2}, {1, 1}, {1, 1}, 8}, {1, 4, 20, 29, 8, 5, 5, {1, 1}, {2, 2}, {2, 2}, 4},
      {1, 3, 11, 30, 3, 3, 3, {3, 2}, {1, 0}, {1, 1}, 3}, {1, 5, 9, 40, 5, 3, 3, {1, 3}, {1, 1}, {1, 1}, 5},
      {1, 2, 20, 20, 2, 17, 17, {1, 1}, {8, 8}, {1, 1}, 2}, {1, 4, 20, 29, 4, 5, 5, {1, 1}, {2, 2}, {2, 2}, 4},
      {1, 16, 30, 30, 16, 3, 3, {1, 1}, {1, 1}, {1, 1}, 1}, {1, 32, 40, 40, 32, 3, 3, {1, 1}, {1, 1}, {1, 1}, 1},
      {1, 128, 3, 60, 64, 3, 3, {1, 1}, {1, 1}, {1, 1}, 1}, {1, 32, 41, 40, 32, 3, 3, {2, 2}, {1, 1}, {1, 1}, 1},
      {1, 32, 30, 12, 64, 3, 3, {1, 1}, {1, 1}, {1, 1}, 1}, {1, 64, 30, 30, 64, 1, 1, {1, 1}, {0, 0}, {1, 1}, 1},
      {3, 16, 30, 30, 16, 3, 3, {1, 1}, {1, 1}, {1, 1}, 1}, {3, 32, 41, 40, 32, 3, 3, {2, 2}, {1, 1}, {1, 1}, 1},
      {2, 32, 20, 20, 32, 3, 3, {1, 1}, {1, 1}, {1, 1}, 2}, {2, 32, 21, 20, 32, 3, 3, {2, 2}, {1, 1}, {1, 1}, 4},
      {1, 6, 6, 19, 6, 3, 3, {1, 1}, {1, 1}, {1, 1}, 6},
      {1, 3, 5, 6, 7, 3, 3, {1, 1}, {1, 1}, {1, 1}, 1}};
  int before = om_get_num_threads();
  om_set_num_threads(2); /* bands are for more than one thread (the single-thread WASM build has none) */
  for (size_t t = 0; t < sizeof cases / sizeof *cases; t++) {
    int64_t n = cases[t].n, c = cases[t].c, h = cases[t].h, w = cases[t].w, o = cases[t].o, kh = cases[t].kh, kw = cases[t].kw;
    int64_t gr = cases[t].groups, cg = c / gr, og = o / gr;
    om_tensor *x = om_randn((int64_t[]){n, c, h, w}, 4, 70 + t, true), *wt = om_randn((int64_t[]){o, cg, kh, kw}, 4, 80 + t, true);
    bool inf = t >= sizeof cases / sizeof *cases - 2; /* the last two: a depthwise one and a dense one */
    if (inf) ((float *)om__data(wt))[5] = INFINITY;
    om_tensor *bias = t % 2 ? om_randn((int64_t[]){o}, 1, 60 + t, true) : NULL; /* with a bias on odd cases */
    om_tensor *y = om_conv2d(x, wt, bias, cases[t].s, cases[t].p, cases[t].d, gr);
    CHECK(y != NULL);
    if (!y) continue;
    int64_t oh = om_tensor_shape(y)[2], ow = om_tensor_shape(y)[3], grid = oh * ow, rows = cg * kh * kw;
    float *col = malloc(sizeof(float) * (size_t)(rows * grid)), *ref = malloc(sizeof(float) * (size_t)(n * o * grid));
    const float *px = (const float *)om__data(x), *pw = (const float *)om__data(wt);
    for (int64_t b = 0; b < n; b++)
      for (int64_t g = 0; g < gr; g++) {
        for (int64_t ch = 0; ch < cg; ch++) /* im2col, written the plain way */
          for (int64_t i = 0; i < kh; i++)
            for (int64_t j = 0; j < kw; j++)
              for (int64_t yy = 0; yy < oh; yy++)
                for (int64_t xx = 0; xx < ow; xx++) {
                  int64_t iy = yy * cases[t].s[0] - cases[t].p[0] + i * cases[t].d[0], ix = xx * cases[t].s[1] - cases[t].p[1] + j * cases[t].d[1];
                  col[((ch * kh + i) * kw + j) * grid + yy * ow + xx] =
                      iy >= 0 && iy < h && ix >= 0 && ix < w ? px[((b * c + g * cg + ch) * h + iy) * w + ix] : 0.0f;
                }
        CHECK(om__gemm(pw + g * og * rows, rows, 1, col, grid, 1, ref + (b * o + g * og) * grid, og, grid, rows, "test"));
        for (int64_t r = 0; bias && r < og; r++) /* the bias added after the sum */
          for (int64_t k = 0; k < grid; k++) ref[(b * o + g * og + r) * grid + k] += ((const float *)om__data(bias))[g * og + r];
      }
    if (memcmp(ref, om__data(y), sizeof(float) * (size_t)(n * o * grid))) FAILED("case %d: the convolution and the plain im2col differ", (int)t);
    if (cases[t].s[0] == 1 && cases[t].p[0] == 1 && inf) {
      int nan = 0; /* the infinite weight met the padding */
      for (int64_t k = 0; k < n * o * grid; k++) nan += ref[k] != ref[k];
      CHECK(nan > 0);
    }
    free(col), free(ref);
    om__release_all((om_tensor *[]){x, wt, y, bias}, 4);
  }
  om_set_num_threads(before);
}

/* A Sobel-x kernel on 1..9 with padding 1 (cross-correlation, as PyTorch). */
TEST(conv2d_hand_computed_3x3) {
  om_tensor *x = TF(SHAPE(1, 1, 3, 3), 1, 2, 3, 4, 5, 6, 7, 8, 9);
  om_tensor *w = TF(SHAPE(1, 1, 3, 3), 1, 0, -1, 2, 0, -2, 1, 0, -1);
  om_tensor *b = TF(SHAPE(1), 0.5f);
  om_tensor *y = om_conv2d(x, w, NULL, ONE, ONE, ONE, 1);
  CHECK_VALUES(y, SHAPE(1, 1, 3, 3), 0, -9, -6, 9, -20, -8, 20, -21, -6, 21);
  om_tensor *ys = om_conv2d(x, w, b, (int64_t[]){2, 2}, ONE, ONE, 1);
  CHECK_VALUES(ys, SHAPE(1, 1, 2, 2), 0, -8.5, 9.5, -20.5, 21.5);
  /* dilation 2 with padding 2: taps 2 apart, so out (0,0) reads only x(0,2) * -2 and x(2,2) * -1,
   * and the middle column reads only the kernel's zero middle column */
  om_tensor *yd = om_conv2d(x, w, NULL, ONE, (int64_t[]){2, 2}, (int64_t[]){2, 2}, 1);
  CHECK_VALUES(yd, SHAPE(1, 1, 3, 3), 0, -2 * 3 - 9, 0, 2 * 1 + 7, -2 * 6, 0, 2 * 4, -3 - 2 * 9, 0, 1 + 2 * 7);
  om_tensor *all[] = {x, w, b, y, ys, yd};
  om__release_all(all, 6);
}

TEST(conv1d_is_conv2d_on_a_unit_height) {
  om_tensor *x = om_randn((int64_t[]){2, 4, 9}, 3, 3, true), *w = om_randn((int64_t[]){6, 2, 3}, 3, 4, true), *b = om_randn((int64_t[]){6}, 1, 5, true);
  om_tensor *y = om_conv1d(x, w, b, 2, 1, 2, 2);
  om_tensor *x4 = om_unsqueeze(x, 2), *w4 = om_unsqueeze(w, 2);
  om_tensor *y4 = om_conv2d(x4, w4, b, (int64_t[]){1, 2}, (int64_t[]){0, 1}, (int64_t[]){1, 2}, 2);
  CHECK(y && y4 && om_tensor_ndim(y) == 3 && om_tensor_shape(y)[2] == 4);
  CHECK(same_values(y, y4, 0));
  om_tensor *all[] = {x, w, b, y, x4, w4, y4};
  om__release_all(all, 7);
}

/* <conv2d(x, w), g> == <x, conv_transpose2d(g, w)> for the matching geometry (adjoints). */
TEST(conv_transpose2d_is_the_adjoint_of_conv2d) {
  om_tensor *x = om_randn((int64_t[]){2, 4, 7, 6}, 4, 6, true), *w = om_randn((int64_t[]){6, 2, 3, 2}, 4, 7, true);
  int64_t st[2] = {2, 3}, pd[2] = {1, 1}, dl[2] = {2, 1};
  om_tensor *y = om_conv2d(x, w, NULL, st, pd, dl, 2);
  CHECK(y);
  om_tensor *g = y ? om_randn(om_tensor_shape(y), 4, 8, true) : NULL;
  /* H: (7 + 2 - 4 - 1) / 2 + 1 = 3, back to 7 needs output_padding 7 - ((3-1)*2 - 2 + 4 + 1) = 0;
   * W: (6 + 2 - 1 - 1) / 3 + 1 = 3, back to 6 needs 6 - ((3-1)*3 - 2 + 1 + 1) = 0 */
  om_tensor *xt = om_conv_transpose2d(g, w, NULL, st, pd, ZERO, 2, dl);
  CHECK(xt && om_tensor_shape(xt)[2] == 7 && om_tensor_shape(xt)[3] == 6);
  if (xt) CHECK_NEAR(dot(y, g), dot(x, xt), 1e-3);
  om_tensor *all[] = {x, w, y, g, xt};
  om__release_all(all, 5);
}

/* output_padding may reach the stride when it is below the dilation: the input gradient (a
 * conv of dout, which then has an extra row and column) still has the input's shape, and it
 * is the adjoint: <y, g> = <x, dx> for the linear map y = conv_transpose2d(x). */
TEST(conv_transpose2d_output_padding_past_the_stride) {
  om_tensor *x = om_randn((int64_t[]){1, 2, 4, 5}, 4, 11, true), *w = om_randn((int64_t[]){2, 3, 3, 3}, 4, 12, true);
  om_tensor_set_requires_grad(x, true);
  om_tensor *y = om_conv_transpose2d(x, w, NULL, ONE, ZERO, ONE, 1, (int64_t[]){2, 2});
  CHECK(y && om_tensor_shape(y)[2] == 4 + 4 + 1 && om_tensor_shape(y)[3] == 5 + 4 + 1);
  om_tensor *g = y ? om_randn(om_tensor_shape(y), 4, 13, true) : NULL;
  CHECK(g && om_backward(y, g));
  om_tensor *dx = om_tensor_grad(x);
  CHECK(dx && om_tensor_shape(dx)[2] == 4 && om_tensor_shape(dx)[3] == 5);
  if (dx) CHECK_NEAR(dot(y, g), dot(x, dx), 1e-3);
  om_tensor *all[] = {x, w, y, g, dx};
  om__release_all(all, 5);
}

/* conv3d over a unit depth (kernel depth 1) is conv2d with a depth of 1 in front: the same
 * products on the same operands (vol2col is im2col there), so the same bits; likewise the
 * transposed conv and both pools. With a real depth the transposed conv is conv3d's adjoint. */
TEST(conv3d_and_pools3d_over_a_unit_depth_are_the_2d_ops) {
  om_tensor *x = om_randn((int64_t[]){2, 4, 7, 6}, 4, 21, true), *w = om_randn((int64_t[]){6, 2, 3, 2}, 4, 22, true);
  om_tensor *b = om_randn((int64_t[]){6}, 1, 23, true), *wt = om_randn((int64_t[]){4, 3, 3, 2}, 4, 24, true);
  om_tensor *x5 = om_unsqueeze(x, 2), *w5 = om_unsqueeze(w, 2), *wt5 = om_unsqueeze(wt, 2);
  om_tensor *y = om_conv2d(x, w, b, (int64_t[]){2, 1}, (int64_t[]){1, 0}, (int64_t[]){1, 2}, 2);
  om_tensor *y5 = om_conv3d(x5, w5, b, (int64_t[]){1, 2, 1}, (int64_t[]){0, 1, 0}, (int64_t[]){1, 1, 2}, 2);
  CHECK(y5 && om_tensor_ndim(y5) == 5 && om_tensor_shape(y5)[2] == 1);
  CHECK(same_values(y, y5, 0));
  om_tensor *t = om_conv_transpose2d(x, wt, b, (int64_t[]){2, 2}, ONE, ONE, 2, ONE);
  om_tensor *t5 = om_conv_transpose3d(x5, wt5, b, (int64_t[]){1, 2, 2}, (int64_t[]){0, 1, 1}, (int64_t[]){0, 1, 1}, 2, NULL);
  CHECK(t5 && om_tensor_shape(t5)[2] == 1);
  CHECK(same_values(t, t5, 0));
  om_tensor *m = om_max_pool2d(x, (int64_t[]){3, 2}, (int64_t[]){2, 2}, ONE, (int64_t[]){1, 2}, true);
  om_tensor *m5 = om_max_pool3d(x5, (int64_t[]){1, 3, 2}, (int64_t[]){1, 2, 2}, (int64_t[]){0, 1, 1}, (int64_t[]){1, 1, 2}, true);
  om_tensor *a = om_avg_pool2d(x, (int64_t[]){3, 3}, (int64_t[]){2, 2}, ONE, true, true);
  om_tensor *a5 = om_avg_pool3d(x5, (int64_t[]){1, 3, 3}, (int64_t[]){1, 2, 2}, (int64_t[]){0, 1, 1}, true, true);
  CHECK(same_values(m, m5, 0) && same_values(a, a5, 0));
  om_tensor *all[] = {x, w, b, wt, x5, w5, wt5, y, y5, t, t5, m, m5, a, a5};
  om__release_all(all, 15);
}

TEST(conv_transpose3d_is_the_adjoint_of_conv3d) {
  om_tensor *x = om_randn((int64_t[]){2, 4, 5, 6, 4}, 5, 25, true), *w = om_randn((int64_t[]){6, 2, 2, 3, 2}, 5, 26, true);
  int64_t st[3] = {2, 1, 3}, pd[3] = {1, 1, 0}, dl[3] = {2, 1, 1};
  om_tensor *y = om_conv3d(x, w, NULL, st, pd, dl, 2);
  CHECK(y);
  om_tensor *g = y ? om_randn(om_tensor_shape(y), 5, 27, true) : NULL;
  /* D: (5 + 2 - 3) / 2 + 1 = 3, back to 5 needs 5 - ((3-1)*2 - 2 + 3) = 0; W: (4 - 2) / 3 + 1 = 1,
   * back to 4 needs output_padding 4 - (0 + 2) = 2, below the stride */
  om_tensor *xt = om_conv_transpose3d(g, w, NULL, st, pd, (int64_t[]){0, 0, 2}, 2, dl);
  CHECK(xt && om_tensor_shape(xt)[2] == 5 && om_tensor_shape(xt)[3] == 6 && om_tensor_shape(xt)[4] == 4);
  if (xt) CHECK_NEAR(dot(y, g), dot(x, xt), 1e-3);
  om_tensor *all[] = {x, w, y, g, xt};
  om__release_all(all, 5);
}

/* A 3-D transposed convolution whose matrix for one input plane is most of 8 MiB (48 x 27 rows,
 * 40 x 40 columns) runs one input plane a product (tconv_volume's bands) and is still conv3d's
 * adjoint; conv3d's weight gradient over such planes likewise (weight_grad_volume's bands). */
TEST(conv3d_products_in_bands_of_planes) {
  om_tensor *x = om_randn((int64_t[]){1, 2, 3, 40, 40}, 5, 51, true), *w = om_randn((int64_t[]){2, 48, 3, 3, 3}, 5, 52, true);
  om_tensor *t = om_conv_transpose3d(x, w, NULL, NULL, NULL, NULL, 1, NULL);
  CHECK(t && om_tensor_shape(t)[1] == 48 && om_tensor_shape(t)[2] == 5 && om_tensor_shape(t)[4] == 42);
  om_tensor *z = t ? om_randn(om_tensor_shape(t), 5, 53, true) : NULL, *y = z ? om_conv3d(z, w, NULL, NULL, NULL, NULL, 1) : NULL;
  CHECK(y && om_tensor_shape(y)[2] == 3);
  if (y) CHECK_NEAR(dot(t, z) / 1e3, dot(x, y) / 1e3, 1e-3);
  /* conv3d's weight gradient, one output plane a product the same way: linear in the weight,
   * so <dW, v> = <conv3d(z, v), g> for any v */
  om_tensor *wz = om_detach(w), *g = y ? om_randn(om_tensor_shape(y), 5, 54, true) : NULL;
  om_tensor_set_requires_grad(wz, true);
  om_tensor *y2 = om_conv3d(z, wz, NULL, NULL, NULL, NULL, 1), *prod = y2 && g ? om_mul(y2, g) : NULL;
  om_tensor *loss = prod ? om_sum(prod, NULL, 0, false) : NULL, *dw = loss && om_backward(loss, NULL) ? om_tensor_grad(wz) : NULL;
  om_tensor *v = om_randn((int64_t[]){2, 48, 3, 3, 3}, 5, 55, true), *yv = om_conv3d(z, v, NULL, NULL, NULL, NULL, 1);
  CHECK(dw && yv);
  if (dw && yv) CHECK_NEAR(dot(dw, v) / 1e3, dot(yv, g) / 1e3, 1e-3);
  om_tensor *all[] = {x, w, t, z, y, wz, g, y2, prod, loss, dw, v, yv};
  om__release_all(all, 13);
}

/* conv3d, conv_transpose3d and the 3-D pools (adaptive_avg_pool3d's cells uneven and
 * overlapping) on seeded inputs: the FNV-1a 64 hash of their outputs' float bytes, pinned here
 * and in tests/js/torchvision-ports-video-densenet-seg.test.mjs for the same calls (native and
 * WASM give the same bits). */
TEST(conv3d_family_bits_pinned) {
  om_tensor *x = om_randn((int64_t[]){1, 3, 5, 6, 7}, 5, 41, true), *w = om_randn((int64_t[]){4, 3, 3, 2, 3}, 5, 42, true);
  om_tensor *b = om_randn((int64_t[]){4}, 1, 43, true), *wt = om_randn((int64_t[]){3, 2, 2, 3, 2}, 5, 44, true);
  om_tensor *y[5] = {om_conv3d(x, w, b, (int64_t[]){1, 2, 1}, (int64_t[]){1, 0, 1}, (int64_t[]){2, 1, 1}, 1),
                     om_conv_transpose3d(x, wt, NULL, (int64_t[]){2, 1, 2}, (int64_t[]){0, 1, 1}, (int64_t[]){1, 0, 1}, 1, NULL),
                     om_max_pool3d(x, (int64_t[]){2, 3, 3}, (int64_t[]){1, 2, 2}, (int64_t[]){1, 1, 1}, NULL, true),
                     om_avg_pool3d(x, (int64_t[]){3, 2, 3}, (int64_t[]){2, 1, 2}, (int64_t[]){1, 1, 1}, true, false),
                     om_adaptive_avg_pool3d(x, (int64_t[]){3, 4, 5})};
  uint64_t h = 0xcbf29ce484222325ull;
  for (int i = 0; i < 5; i++) {
    CHECK(y[i] != NULL);
    int64_t n = y[i] ? om_tensor_numel(y[i]) : 0;
    float *v = malloc(sizeof(float) * (size_t)(n + 1));
    CHECK(v && (!y[i] || om_tensor_read(y[i], v)));
    const unsigned char *p = (const unsigned char *)v;
    for (size_t k = 0; v && k < sizeof(float) * (size_t)n; k++) h = (h ^ p[k]) * 0x100000001b3ull;
    free(v);
  }
  if (h != 0xc701fa7068087a87ull) FAILED("hash %#llx", (unsigned long long)h);
  om__release_all((om_tensor *[]){x, w, b, wt, y[0], y[1], y[2], y[3], y[4]}, 9);
}

TEST(adaptive_avg_pool3d_values) {
  /* [1, 1, 3, 1, 2]: depth 3 -> 2 cells [0, 2), [1, 3) (overlapping), width 2 -> 1 */
  om_tensor *x = TF(SHAPE(1, 1, 3, 1, 2), 1, 2, 3, 4, 5, 6);
  om_tensor_set_requires_grad(x, true);
  om_tensor *y = om_adaptive_avg_pool3d(x, (int64_t[]){2, -1, 1}), *g = TF(SHAPE(1, 1, 2, 1, 1), 4, 8);
  CHECK_VALUES(y, SHAPE(1, 1, 2, 1, 1), 1e-6, 2.5, 4.5);
  CHECK(y && om_backward(y, g));
  om_tensor *gx = om_tensor_grad(x);
  CHECK_VALUES(gx, SHAPE(1, 1, 3, 1, 2), 1e-6, 1, 1, 1 + 2, 1 + 2, 2, 2);
  om_tensor *u = om_adaptive_avg_pool3d(x, (int64_t[]){1, 1, 1}); /* the mean */
  CHECK_VALUES(u, SHAPE(1, 1, 1, 1, 1), 1e-6, 3.5);
  CHECK_ERROR(om_adaptive_avg_pool3d(x, (int64_t[]){0, 1, 1}), OM_ERR_INVALID_ARGUMENT, "adaptive_avg_pool3d: output size must be positive");
  om__release_all((om_tensor *[]){x, y, g, gx, u}, 5);
}

/* adaptive_max_pool2d/3d: PyTorch's cells, the first maximum in row-major order, the place in
 * the flattened plane (volume); a place two overlapping cells pick gets both gradients */
TEST(adaptive_max_pool_values) {
  /* [1, 1, 2, 3]: width 3 -> 2 cells [0, 2), [1, 3) (overlapping), height 2 -> 1 */
  om_tensor *x = TF(SHAPE(1, 1, 2, 3), 1, 5, 5, 2, 5, 0), *i = NULL;
  om_tensor_set_requires_grad(x, true);
  om_tensor *y = om_adaptive_max_pool2d(x, (int64_t[]){1, 2}, &i), *g = TF(SHAPE(1, 1, 1, 2), 4, 8);
  CHECK_VALUES(y, SHAPE(1, 1, 1, 2), 0, 5, 5);
  CHECK_VALUES(i, SHAPE(1, 1, 1, 2), 0, 1, 1); /* both cells: (0, 1), the first 5 of each */
  CHECK(y && om_backward(y, g));
  om_tensor *gx = om_tensor_grad(x);
  CHECK_VALUES(gx, SHAPE(1, 1, 2, 3), 0, 0, 4 + 8, 0, 0, 0, 0);
  /* [1, 2, 1, 3] as a volume [1, 1, 2, 1, 3]: depth 2 -> 1 cell, the place counts the depth */
  om_tensor *v = om_reshape(x, (int64_t[]){1, 1, 2, 1, 3}, 5), *j = NULL;
  om_tensor *z = om_adaptive_max_pool3d(v, (int64_t[]){1, -1, 1}, &j);
  CHECK_VALUES(z, SHAPE(1, 1, 1, 1, 1), 0, 5);
  CHECK_VALUES(j, SHAPE(1, 1, 1, 1, 1), 0, 1);
  om_tensor *u = om_adaptive_max_pool2d(x, (int64_t[]){2, -1}, NULL); /* unbatched input below */
  CHECK_VALUES(u, SHAPE(1, 1, 2, 3), 0, 1, 5, 5, 2, 5, 0);
  om_tensor *c = om_reshape(x, (int64_t[]){1, 2, 3}, 3), *w = om_adaptive_max_pool2d(c, (int64_t[]){1, 1}, NULL);
  CHECK_VALUES(w, SHAPE(1, 1, 1), 0, 5);
  om_tensor *none = x; /* set to NULL by the failing call */
  CHECK_ERROR(om_adaptive_max_pool2d(x, (int64_t[]){0, 1}, &none), OM_ERR_INVALID_ARGUMENT, "adaptive_max_pool2d: output size must be positive");
  CHECK(none == NULL);
  om_tensor *n = om_zeros((int64_t[]){1, 1, 2, 2}, 4, OM_INT64);
  CHECK_ERROR(om_adaptive_max_pool2d(n, (int64_t[]){1, 1}, NULL), OM_ERR_DTYPE_MISMATCH, "adaptive_max_pool2d: takes float32, not int64");
  CHECK_ERROR(om_adaptive_max_pool3d(c, (int64_t[]){1, 1, 1}, NULL), OM_ERR_SHAPE_MISMATCH, "adaptive_max_pool3d: input [1,2,3] must have 5 dims");
  om__release_all((om_tensor *[]){x, i, y, g, gx, v, j, z, u, c, w, n}, 12);
}

/* max_pool2d_indices beside max_pool2d (ties keep the first place; a padding-only window gets
 * PyTorch's place past the input), and max_unpool: the later value of a place stays, and only it
 * gets the gradient; its errors. */
TEST(max_pool_indices_and_unpool) {
  om_tensor *x = TF(SHAPE(1, 1, 2, 4), 1, 7, 7, 2, 3, 0, 5, 9);
  om_tensor *i = om_max_pool2d_indices(x, (int64_t[]){2, 2}, NULL, NULL, NULL, false);
  CHECK_VALUES(i, SHAPE(1, 1, 1, 2), 0, 1, 7);
  om_tensor *one = TF(SHAPE(1, 1, 1, 1), 4);
  om_tensor *d = om_max_pool2d_indices(one, (int64_t[]){1, 2}, NULL, (int64_t[]){0, 1}, (int64_t[]){1, 2}, false);
  CHECK_VALUES(d, SHAPE(1, 1, 1, 1), 0, 1); /* taps -1 and 1 of a width of 1: the start -1 moved by the dilation */
  om_tensor *v3 = om_reshape(x, (int64_t[]){1, 1, 2, 2, 2}, 5), *i3 = om_max_pool3d_indices(v3, (int64_t[]){2, 1, 2}, NULL, NULL, NULL, false);
  CHECK_VALUES(i3, SHAPE(1, 1, 1, 2, 1), 0, 1, 7);
  om_tensor *u = TF(SHAPE(1, 1, 4), 0.5, -1, 2, 0.25), *places = om_from_data((int64_t[]){3, 0, 3, 1}, (int64_t[]){1, 1, 4}, 3, OM_INT64);
  om_tensor_set_requires_grad(u, true);
  om_tensor *y = om_max_unpool(u, places, (int64_t[]){5}, 1), *g = TF(SHAPE(1, 1, 5), 1, 2, 3, 4, 5);
  CHECK_VALUES(y, SHAPE(1, 1, 5), 0, -1, 0.25, 0, 2, 0);
  CHECK(y && om_backward(y, g));
  om_tensor *gu = om_tensor_grad(u);
  CHECK_VALUES(gu, SHAPE(1, 1, 4), 0, 0, 1, 4, 2); /* the first value at 3 was written over: 0 */
  CHECK_ERROR(om_max_unpool(u, places, (int64_t[]){0}, 1) != NULL, OM_ERR_INVALID_ARGUMENT, "max_unpool: output size must be positive, got 0");
  CHECK_ERROR(om_max_unpool(u, places, (int64_t[]){3}, 1) != NULL, OM_ERR_INDEX_OUT_OF_RANGE, "max_unpool: index 3 (element 2 of plane 0) is outside the output plane of 3 elements");
  CHECK_ERROR(om_max_unpool(x, i, (int64_t[]){1 << 21, 1 << 21}, 2) != NULL, OM_ERR_SHAPE_MISMATCH, "max_unpool: indices [1,1,1,2] must have the input's shape [1,1,2,4]");
  om_tensor *big = om_zeros((int64_t[]){1, 1, 1, 2}, 4, OM_FLOAT32);
  CHECK_ERROR(om_max_unpool(big, i, (int64_t[]){1 << 21, 1 << 21}, 2) != NULL, OM_ERR_INVALID_ARGUMENT, "max_unpool: an output plane of more than 2^40 elements");
  CHECK_ERROR(om_max_unpool(big, i, (int64_t[]){4}, 1) != NULL, OM_ERR_INVALID_ARGUMENT, "max_unpool: takes the output size (2 integers for input [1,1,1,2]), got 1");
  CHECK_ERROR(om_max_unpool(big, i, (int64_t[]){4, 4, 4, 4}, 4) != NULL, OM_ERR_INVALID_ARGUMENT, "max_unpool: takes 1 to 3 output sizes, got 4");
  CHECK_ERROR(om_max_unpool(big, i, NULL, 2) != NULL, OM_ERR_INVALID_ARGUMENT, "max_unpool: takes 1 to 3 output sizes, got 0");
  CHECK_ERROR(om_max_unpool(i, i, (int64_t[]){4, 4}, 2) != NULL, OM_ERR_DTYPE_MISMATCH, "max_unpool: takes float32, not int64");
  CHECK_ERROR(om_max_unpool(big, big, (int64_t[]){4, 4}, 2) != NULL, OM_ERR_DTYPE_MISMATCH, "max_unpool: indices must be int64, not float32");
  om__release_all((om_tensor *[]){x, i, one, d, v3, i3, u, places, y, g, gu, big}, 12);
}

TEST(conv_transpose2d_hand_computed) {
  /* stride 2 with a 2x2 kernel of ones copies each input into its own 2x2 block */
  om_tensor *x = TF(SHAPE(1, 1, 2, 2), 1, 2, 3, 4), *w = om_ones((int64_t[]){1, 1, 2, 2}, 4, OM_FLOAT32);
  om_tensor *b = TF(SHAPE(1), 10);
  om_tensor *y = om_conv_transpose2d(x, w, b, (int64_t[]){2, 2}, ZERO, ZERO, 1, ONE);
  CHECK_VALUES(y, SHAPE(1, 1, 4, 4), 0, 11, 11, 12, 12, 11, 11, 12, 12, 13, 13, 14, 14, 13, 13, 14, 14);
  /* padding 1 crops a ring; output_padding 1 adds a row and column at the end (bottom, right) */
  om_tensor *yp = om_conv_transpose2d(x, w, NULL, (int64_t[]){2, 2}, ONE, ONE, 1, ONE);
  CHECK_VALUES(yp, SHAPE(1, 1, 3, 3), 0, 1, 2, 2, 3, 4, 4, 3, 4, 4);
  om_tensor *all[] = {x, w, b, y, yp};
  om__release_all(all, 5);
}

TEST(conv_gradients_hand_computed) {
  /* y = conv2d(x, w) with x [1,1,2,2], w [1,1,1,1]: dx = w * g, dw = sum(x * g), db = sum(g) */
  om_tensor *x = TF(SHAPE(1, 1, 2, 2), 1, 2, 3, 4), *w = TF(SHAPE(1, 1, 1, 1), 3), *b = TF(SHAPE(1), 0);
  om_tensor_set_requires_grad(x, true);
  om_tensor_set_requires_grad(w, true);
  om_tensor_set_requires_grad(b, true);
  om_tensor *y = om_conv2d(x, w, b, ONE, ZERO, ONE, 1), *g = TF(SHAPE(1, 1, 2, 2), 1, -1, 2, 0.5f);
  CHECK(y && om_backward(y, g));
  om_tensor *gx = om_tensor_grad(x), *gw = om_tensor_grad(w), *gb = om_tensor_grad(b);
  CHECK_VALUES(gx, SHAPE(1, 1, 2, 2), 0, 3, -3, 6, 1.5);
  CHECK_VALUES(gw, SHAPE(1, 1, 1, 1), 0, 1 - 2 + 6 + 2);
  CHECK_VALUES(gb, SHAPE(1), 0, 2.5);
  om_tensor *all[] = {x, w, b, y, g, gx, gw, gb};
  om__release_all(all, 8);
}

TEST(max_pool2d_values_padding_ceil_mode) {
  float v[16];
  for (int i = 0; i < 16; i++) v[i] = -(float)(i + 1); /* negative: padding must not win */
  om_tensor *x = om_from_data(v, (int64_t[]){1, 1, 4, 4}, 4, OM_FLOAT32);
  const int64_t k[2] = {3, 3}, s[2] = {2, 2};
  om_tensor *a = om_max_pool2d(x, k, s, ONE, NULL, false);
  CHECK_VALUES(a, SHAPE(1, 1, 2, 2), 0, -1, -2, -5, -6);
  /* ceil_mode keeps a third window per axis, overhanging into and past the right padding */
  om_tensor *c = om_max_pool2d(x, k, s, ONE, NULL, true);
  CHECK_VALUES(c, SHAPE(1, 1, 3, 3), 0, -1, -2, -4, -5, -6, -8, -13, -14, -16);
  /* a window that would start in the right padding is dropped: 1x5, kernel 2, stride 2, padding 1 */
  om_tensor *r = TF(SHAPE(1, 1, 1, 5), 1, 2, 3, 4, 5);
  om_tensor *d = om_max_pool2d(r, (int64_t[]){1, 2}, (int64_t[]){1, 2}, (int64_t[]){0, 1}, NULL, true);
  CHECK_VALUES(d, SHAPE(1, 1, 1, 3), 0, 1, 3, 5);
  /* stride defaults to the kernel; dilation 2 reads every other element */
  om_tensor *e = om_max_pool2d(r, (int64_t[]){1, 2}, NULL, NULL, (int64_t[]){1, 2}, false);
  CHECK_VALUES(e, SHAPE(1, 1, 1, 2), 0, 3, 5);
  om_tensor *all[] = {x, a, c, r, d, e};
  om__release_all(all, 6);
}

/* max_pool2d against the rule written per tap (the first maximum, a NaN wins: the last one;
 * -inf for a window of padding only), bit for bit, NaNs of two payloads and ties included, over
 * strides, padding, dilation and ceil_mode, and 2x2 windows at stride 2 (4 at a time) with a
 * tail and padded borders. */
TEST(max_pool2d_is_the_per_tap_rule) {
  struct { int64_t h, w, k[2], s[2], p[2], d[2]; bool ceil; } cases[] = {
      {9, 7, {3, 3}, {2, 2}, {1, 1}, {1, 1}, true}, {8, 8, {2, 2}, {2, 2}, {0, 0}, {1, 1}, false},
      {6, 11, {3, 2}, {1, 3}, {1, 1}, {2, 3}, true}, {5, 5, {5, 5}, {1, 1}, {2, 2}, {1, 1}, false},
      {7, 21, {2, 2}, {2, 2}, {1, 1}, {1, 1}, true},  {28, 28, {2, 2}, {2, 2}, {0, 0}, {1, 1}, false}};
  for (size_t t = 0; t < sizeof cases / sizeof *cases; t++) {
    int64_t h = cases[t].h, w = cases[t].w, n = 2 * 3 * h * w;
    om_tensor *x0 = om_randn((int64_t[]){2, 3, h, w}, 4, 90 + t, true), *x = om_contiguous(x0);
    float *px = (float *)om__data(x);
    uint32_t nan2 = 0x7fc00001u; /* a second NaN payload: which NaN wins shows */
    for (int64_t k = 0; k < n; k++) {
      px[k] = roundf(px[k] * 2); /* ties */
      if (k % 17 == 3) px[k] = NAN;
      if (k % 23 == 5) memcpy(&px[k], &nan2, 4);
    }
    om_tensor *y = om_max_pool2d(x, cases[t].k, cases[t].s, cases[t].p, cases[t].d, cases[t].ceil);
    CHECK(y != NULL);
    if (!y) continue;
    int64_t oh = om_tensor_shape(y)[2], ow = om_tensor_shape(y)[3];
    const float *py = (const float *)om__data(y);
    for (int64_t pl = 0; pl < 6; pl++)
      for (int64_t yy = 0; yy < oh; yy++)
        for (int64_t xx = 0; xx < ow; xx++) {
          float best = -INFINITY;
          bool any = false;
          for (int64_t i = 0; i < cases[t].k[0]; i++)
            for (int64_t j = 0; j < cases[t].k[1]; j++) {
              int64_t iy = yy * cases[t].s[0] - cases[t].p[0] + i * cases[t].d[0], ix = xx * cases[t].s[1] - cases[t].p[1] + j * cases[t].d[1];
              if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
              float v = px[(pl * h + iy) * w + ix];
              if (!any || v > best || isnan(v)) best = v;
              any = true;
            }
          if (memcmp(&best, &py[(pl * oh + yy) * ow + xx], 4))
            FAILED("case %d, plane %d, (%d, %d): %g, the rule gives %g", (int)t, (int)pl, (int)yy, (int)xx, py[(pl * oh + yy) * ow + xx], best);
        }
    om__release_all((om_tensor *[]){x0, x, y}, 3);
  }
}

TEST(max_pool2d_gradient_goes_to_the_first_max) {
  om_tensor *x = TF(SHAPE(1, 1, 2, 3), 5, 1, 5, 5, 2, 7);
  om_tensor_set_requires_grad(x, true);
  /* windows of 2x2 with stride 1: [5 1; 5 2] (ties: the first 5), [1 5; 2 7] */
  om_tensor *y = om_max_pool2d(x, (int64_t[]){2, 2}, ONE, NULL, NULL, false), *g = TF(SHAPE(1, 1, 1, 2), 1, 10);
  CHECK_VALUES(y, SHAPE(1, 1, 1, 2), 0, 5, 7);
  CHECK(y && om_backward(y, g));
  om_tensor *gx = om_tensor_grad(x);
  CHECK_VALUES(gx, SHAPE(1, 1, 2, 3), 0, 1, 0, 0, 0, 0, 10);
  /* a NaN is the maximum and takes the gradient (PyTorch's `v > max || isnan(v)`: the last NaN) */
  om_tensor *xn = TF(SHAPE(1, 1, 1, 4), 1, NAN, 5, NAN);
  om_tensor_set_requires_grad(xn, true);
  om_tensor *yn = om_max_pool2d(xn, (int64_t[]){1, 4}, NULL, NULL, NULL, false), *gn = TF(SHAPE(1, 1, 1, 1), 2);
  CHECK(yn && isnan(at(yn, 0)) && om_backward(yn, gn));
  om_tensor *gxn = om_tensor_grad(xn);
  CHECK_VALUES(gxn, SHAPE(1, 1, 1, 4), 0, 0, 0, 0, 2);
  om_tensor *all[] = {x, y, g, gx, xn, yn, gn, gxn};
  om__release_all(all, 8);
}

TEST(avg_pool2d_values_count_include_pad_ceil_mode) {
  float v[16];
  for (int i = 0; i < 16; i++) v[i] = (float)(i + 1);
  om_tensor *x = om_from_data(v, (int64_t[]){1, 1, 4, 4}, 4, OM_FLOAT32);
  const int64_t k[2] = {3, 3}, s[2] = {2, 2};
  /* the divisor counts padding but not the part of an overhanging window past it (PyTorch) */
  om_tensor *a = om_avg_pool2d(x, k, s, ONE, true, true);
  CHECK_VALUES(a, SHAPE(1, 1, 3, 3), 1e-6, 14.0 / 9, 30.0 / 9, 12.0 / 6, 57.0 / 9, 99.0 / 9, 36.0 / 6, 27.0 / 6, 45.0 / 6, 16.0 / 4);
  om_tensor *b = om_avg_pool2d(x, k, s, ONE, true, false);
  CHECK_VALUES(b, SHAPE(1, 1, 3, 3), 1e-6, 3.5, 5, 6, 9.5, 11, 12, 13.5, 15, 16);
  om_tensor *c = om_avg_pool2d(x, k, s, ONE, false, true);
  CHECK_VALUES(c, SHAPE(1, 1, 2, 2), 1e-6, 14.0 / 9, 30.0 / 9, 57.0 / 9, 99.0 / 9);
  /* gradient: each output spreads g / divisor over its window's inputs */
  om_tensor_set_requires_grad(x, true);
  om_tensor *y = om_avg_pool2d(x, (int64_t[]){2, 2}, NULL, NULL, false, true), *g = om_ones((int64_t[]){1, 1, 2, 2}, 4, OM_FLOAT32);
  CHECK(y && om_backward(y, g));
  om_tensor *gx = om_tensor_grad(x);
  CHECK_VALUES(gx, SHAPE(1, 1, 4, 4), 0, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25);
  om_tensor *all[] = {x, a, b, c, y, g, gx};
  om__release_all(all, 7);
}

TEST(adaptive_avg_pool2d_values) {
  om_tensor *x = TF(SHAPE(1, 1, 1, 5), 1, 2, 3, 4, 5);
  /* 5 -> 3 cells: [0,2), [1,4), [3,5) overlap, as PyTorch's */
  om_tensor *y = om_adaptive_avg_pool2d(x, (int64_t[]){1, 3});
  CHECK_VALUES(y, SHAPE(1, 1, 1, 3), 1e-6, 1.5, 3, 4.5);
  om_tensor *k = om_adaptive_avg_pool2d(x, (int64_t[]){-1, 1});
  CHECK_VALUES(k, SHAPE(1, 1, 1, 1), 1e-6, 3);
  om_tensor_set_requires_grad(x, true);
  om_tensor *z = om_adaptive_avg_pool2d(x, (int64_t[]){1, 3}), *g = TF(SHAPE(1, 1, 1, 3), 2, 3, 4);
  CHECK(z && om_backward(z, g));
  om_tensor *gx = om_tensor_grad(x);
  CHECK_VALUES(gx, SHAPE(1, 1, 1, 5), 1e-6, 1, 1 + 1, 1, 1 + 2, 2);
  om_tensor *all[] = {x, y, k, z, g, gx};
  om__release_all(all, 6);
}

/* PyTorch's unbatched inputs: [C, H, W] ([C, L]) is the batch-of-one result without its batch dim. */
TEST(unbatched_inputs) {
  om_tensor *x = om_randn((int64_t[]){3, 6, 7}, 3, 21, true), *w = om_randn((int64_t[]){4, 3, 3, 3}, 4, 22, true);
  om_tensor *x4 = om_unsqueeze(x, 0);
  om_tensor *a = om_conv2d(x, w, NULL, ONE, ONE, ONE, 1), *b = om_conv2d(x4, w, NULL, ONE, ONE, ONE, 1);
  CHECK(a && b && om_tensor_ndim(a) == 3 && om_tensor_shape(a)[0] == 4 && same_values(a, b, 0));
  om_tensor *p = om_max_pool2d(x, (int64_t[]){2, 2}, NULL, NULL, NULL, true), *q = om_max_pool2d(x4, (int64_t[]){2, 2}, NULL, NULL, NULL, true);
  CHECK(p && q && om_tensor_ndim(p) == 3 && same_values(p, q, 0));
  om_tensor *l = om_select(x, 1, 0), *w1 = om_randn((int64_t[]){2, 3, 2}, 3, 23, true); /* [3, 7] */
  om_tensor *c = om_conv1d(l, w1, NULL, 1, 0, 1, 1);
  CHECK(c && om_tensor_ndim(c) == 2 && om_tensor_shape(c)[0] == 2 && om_tensor_shape(c)[1] == 6);
  om_tensor *all[] = {x, w, x4, a, b, p, q, l, w1, c};
  om__release_all(all, 10);
}

/* unfold of 1..9 by 2x2 blocks; fold sums them back (each pixel times the blocks it is in); the
 * two are adjoint, <unfold(x), y> = <x, fold(y)>, with stride, padding and dilation; errors. */
TEST(unfold_and_fold) {
  const int64_t k2[2] = {2, 2}, hw[2] = {3, 3};
  om_tensor *x = TF(SHAPE(1, 1, 3, 3), 1, 2, 3, 4, 5, 6, 7, 8, 9), *u = om_unfold(x, k2, ONE, ZERO, ONE);
  CHECK_VALUES(u, SHAPE(1, 4, 4), 0, 1, 2, 4, 5, 2, 3, 5, 6, 4, 5, 7, 8, 5, 6, 8, 9);
  om_tensor *f = om_fold(u, hw, k2, ONE, ZERO, ONE);
  CHECK_VALUES(f, SHAPE(1, 1, 3, 3), 0, 1, 4, 3, 8, 20, 12, 7, 16, 9);
  const int64_t k[2] = {2, 3}, d[2] = {1, 2}, p[2] = {1, 0}, s[2] = {2, 1}, out[2] = {5, 6};
  om_tensor *a = om_randn((int64_t[]){2, 3, 5, 6}, 4, 31, true), *ua = om_unfold(a, k, d, p, s);
  CHECK(ua && om_tensor_shape(ua)[1] == 18 && om_tensor_shape(ua)[2] == 3 * 2);
  om_tensor *y = ua ? om_randn(om_tensor_shape(ua), 3, 32, true) : NULL, *fy = om_fold(y, out, k, d, p, s);
  CHECK(fy && fabs(dot(ua, y) - dot(a, fy)) < 1e-4);
  om_tensor *a3 = om_select(a, 0, 1), *u3 = om_unfold(a3, k, d, p, s), *u4 = om_select(ua, 0, 1);
  CHECK(u3 && om_tensor_ndim(u3) == 2 && same_values(u3, u4, 0));
  om_tensor *i64 = om_cast(x, OM_INT64), *empty = om_zeros((int64_t[]){1, 0, 3, 3}, 4, OM_FLOAT32);
  CHECK_ERROR(om_unfold(x, (int64_t[]){4, 4}, ONE, ZERO, ONE), OM_ERR_SHAPE_MISMATCH,
              "unfold: no 4x4 block (dilation [1,1]) fits in a [3,3] input padded by [0,0]");
  CHECK_ERROR(om_unfold(x, k2, ONE, (int64_t[]){0, -1}, ONE), OM_ERR_INVALID_ARGUMENT, "unfold: padding must be non-negative, got [0,-1]");
  CHECK_ERROR(om_unfold(x, k2, ONE, ZERO, k_huge), OM_ERR_INVALID_ARGUMENT, "unfold: stride [8589934592,2] is above 2^31-1");
  CHECK_ERROR(om_unfold(i64, k2, ONE, ZERO, ONE), OM_ERR_DTYPE_MISMATCH, "unfold: takes float32, not int64");
  CHECK_ERROR(om_unfold(empty, k2, ONE, ZERO, ONE), OM_ERR_SHAPE_MISMATCH, "non-zero dimensions other than the batch, got [1,0,3,3]");
  CHECK_ERROR(om_unfold(u4, k2, ONE, ZERO, ONE), OM_ERR_SHAPE_MISMATCH, "unfold: input must be [N, C, H, W] or [C, H, W], got [18,6]");
  CHECK_ERROR(om_fold(u, hw, (int64_t[]){3, 1}, ONE, ZERO, ONE), OM_ERR_SHAPE_MISMATCH, "fold: input's 4 rows are not a multiple of the kernel's 3 elements");
  CHECK_ERROR(om_fold(u, (int64_t[]){4, 3}, k2, ONE, ZERO, ONE), OM_ERR_SHAPE_MISMATCH, "fold: input has 4 blocks; output_size [4,3] gives 3 x 2");
  CHECK_ERROR(om_fold(u, (int64_t[]){0, 3}, k2, ONE, ZERO, ONE), OM_ERR_INVALID_ARGUMENT, "fold: output_size must be positive");
  CHECK_ERROR(om_fold(u, hw, k2, NULL, ZERO, ONE), OM_ERR_INVALID_ARGUMENT, "fold: NULL size argument");
  om__release_all((om_tensor *[]){x, u, f, a, ua, y, fy, a3, u3, u4, i64, empty}, 12);
}

TEST(conv_errors) {
  om_tensor *x = om_zeros((int64_t[]){1, 3, 8, 8}, 4, OM_FLOAT32), *w = om_zeros((int64_t[]){6, 4, 5, 5}, 4, OM_FLOAT32);
  om_tensor *w3 = om_zeros((int64_t[]){6, 3, 3, 3}, 4, OM_FLOAT32), *w1 = om_zeros((int64_t[]){6, 1, 3, 3}, 4, OM_FLOAT32);
  om_tensor *big = om_zeros((int64_t[]){6, 3, 9, 9}, 4, OM_FLOAT32), *b5 = om_zeros((int64_t[]){5}, 1, OM_FLOAT32);
  om_tensor *xi = om_zeros((int64_t[]){1, 3, 8, 8}, 4, OM_INT64), *x3 = om_zeros((int64_t[]){8, 8}, 2, OM_FLOAT32);
  om_tensor *wt = om_zeros((int64_t[]){3, 2, 3, 3}, 4, OM_FLOAT32);
  CHECK_ERROR(om_conv2d(x, w, NULL, ONE, ZERO, ONE, 1), OM_ERR_SHAPE_MISMATCH, "conv2d: input [1,3,8,8] has 3 channels, weight [6,4,5,5] expects 4");
  CHECK_ERROR(om_conv2d(x, w1, NULL, ONE, ZERO, ONE, 2), OM_ERR_INVALID_ARGUMENT, "conv2d: groups 2 does not divide the 3 input channels");
  CHECK_ERROR(om_conv2d(x, w3, NULL, ONE, ZERO, ONE, 4), OM_ERR_INVALID_ARGUMENT, "groups 4 does not divide the 3 input channels");
  CHECK_ERROR(om_conv2d(x, big, NULL, ONE, ZERO, ONE, 1), OM_ERR_SHAPE_MISMATCH, "kernel size [6,3,9,9] (dilated 9x9) is larger than the padded input [1,3,8,8]");
  CHECK_ERROR(om_conv2d(x, w3, NULL, ONE, ZERO, (int64_t[]){4, 4}, 1), OM_ERR_SHAPE_MISMATCH, "(dilated 9x9) is larger than the padded input");
  CHECK_ERROR(om_conv2d(x, w3, NULL, (int64_t[]){0, 1}, ZERO, ONE, 1), OM_ERR_INVALID_ARGUMENT, "conv2d: stride must be positive, got 0");
  CHECK_ERROR(om_conv2d(x, w3, NULL, ONE, (int64_t[]){-1, 0}, ONE, 1), OM_ERR_INVALID_ARGUMENT, "padding must be non-negative, got -1");
  CHECK_ERROR(om_conv2d(x, w3, NULL, ONE, ZERO, (int64_t[]){0, 1}, 1), OM_ERR_INVALID_ARGUMENT, "dilation must be positive, got 0");
  CHECK_ERROR(om_conv2d(x, w3, NULL, ONE, ZERO, ONE, 0), OM_ERR_INVALID_ARGUMENT, "groups must be positive, got 0");
  CHECK_ERROR(om_conv2d(x, w3, b5, ONE, ZERO, ONE, 1), OM_ERR_SHAPE_MISMATCH, "conv2d: bias [5] must be [6]");
  CHECK_ERROR(om_conv2d(xi, w3, NULL, ONE, ZERO, ONE, 1), OM_ERR_DTYPE_MISMATCH, "conv2d: takes float32, not int64");
  CHECK_ERROR(om_conv2d(x3, w3, NULL, ONE, ZERO, ONE, 1), OM_ERR_SHAPE_MISMATCH, "conv2d: input [8,8] must have 4 dims ([N, C, H, W]; the functions also take it without N)");
  CHECK_ERROR(om_conv1d(x, w3, NULL, 1, 0, 1, 1), OM_ERR_SHAPE_MISMATCH, "conv1d: input [1,3,8,8] must have 3 dims");
  CHECK_ERROR(om_conv2d(x, NULL, NULL, ONE, ZERO, ONE, 1), OM_ERR_INVALID_ARGUMENT, "");
  CHECK_ERROR(om_conv_transpose2d(x, w3, NULL, ONE, ZERO, ZERO, 1, ONE), OM_ERR_SHAPE_MISMATCH,
              "conv_transpose2d: input [1,3,8,8] has 3 channels, weight [6,3,3,3] expects 6 (weight.shape[0])");
  CHECK_ERROR(om_conv_transpose2d(x, wt, NULL, (int64_t[]){2, 2}, ZERO, (int64_t[]){2, 0}, 1, ONE), OM_ERR_INVALID_ARGUMENT,
              "output_padding 2 must be smaller than either stride (2) or dilation (1)");
  CHECK_ERROR(om_conv_transpose2d(x, wt, NULL, ONE, (int64_t[]){6, 0}, ZERO, 1, ONE), OM_ERR_SHAPE_MISMATCH, "gives an empty output");
  /* sizes whose arithmetic could overflow are refused; a huge broadcast input is OutOfMemory, not a crash */
  CHECK_ERROR(om_conv2d(x, w3, NULL, (int64_t[]){INT64_C(1) << 40, 1}, ZERO, ONE, 1), OM_ERR_INVALID_ARGUMENT,
              "conv2d: integer attribute 0 is 1099511627776, above 2^31-1");
  CHECK_ERROR(om_max_pool2d(x, k_huge, NULL, NULL, NULL, false), OM_ERR_INVALID_ARGUMENT, "above 2^31-1");
  om_tensor *one = om_ones((int64_t[]){1, 1, 1, 1}, 4, OM_FLOAT32);
  om_tensor *huge = om_expand(one, (int64_t[]){1, 1, INT64_C(1) << 20, INT64_C(1) << 20}, 4); /* 4 TiB of floats, as a view */
  om_tensor *w11 = om_ones((int64_t[]){1, 1, 1, 1}, 4, OM_FLOAT32);
  CHECK_ERROR(om_conv2d(huge, w11, NULL, (int64_t[]){INT64_C(1) << 19, INT64_C(1) << 19}, ZERO, ONE, 1), OM_ERR_OUT_OF_MEMORY, "conv2d");
  om_tensor_release(one);
  om_tensor_release(huge);
  om_tensor_release(w11);
  /* a wrong attribute count through the generic entry */
  om_tensor *out[1] = {NULL};
  CHECK_ERROR(om_apply(OM_OP_conv2d, (om_tensor *[]){x, w3}, 2, (int64_t[]){1, 1}, 2, NULL, 0, out, 1) >= 0,
              OM_ERR_INVALID_ARGUMENT, "conv2d: takes 7 integer attributes");
  om_tensor *all[] = {x, w, w3, w1, big, b5, xi, x3, wt};
  om__release_all(all, 9);
}

TEST(pool_errors) {
  om_tensor *x = om_zeros((int64_t[]){1, 3, 4, 4}, 4, OM_FLOAT32), *x3 = om_zeros((int64_t[]){4, 4}, 2, OM_FLOAT32);
  const int64_t k2[2] = {2, 2};
  CHECK_ERROR(om_max_pool2d(x, k2, NULL, (int64_t[]){2, 0}, NULL, false), OM_ERR_INVALID_ARGUMENT,
              "max_pool2d: padding 2 must be between 0 and half the kernel size 2");
  CHECK_ERROR(om_max_pool2d(x, (int64_t[]){0, 2}, NULL, NULL, NULL, false), OM_ERR_INVALID_ARGUMENT, "kernel size must be positive, got 0");
  CHECK_ERROR(om_max_pool2d(x, k2, (int64_t[]){0, 1}, NULL, NULL, false), OM_ERR_INVALID_ARGUMENT, "stride must be positive, got 0");
  CHECK_ERROR(om_max_pool2d(x, (int64_t[]){5, 5}, NULL, NULL, NULL, false), OM_ERR_SHAPE_MISMATCH,
              "max_pool2d: input [1,3,4,4] is too small for kernel 5x5");
  CHECK_ERROR(om_avg_pool2d(x3, k2, NULL, NULL, false, true), OM_ERR_SHAPE_MISMATCH, "avg_pool2d: input [4,4] must have 4 dims");
  CHECK_ERROR(om_adaptive_avg_pool2d(x, (int64_t[]){0, 2}), OM_ERR_INVALID_ARGUMENT, "adaptive_avg_pool2d: output size must be positive");
  CHECK_ERROR(om_adaptive_avg_pool2d(x3, (int64_t[]){2, 2}), OM_ERR_SHAPE_MISMATCH, "must have 4 dims");
  om_tensor *all[] = {x, x3};
  om__release_all(all, 2);
}

/* Tracing: conv lowers to Conv with PyTorch's attributes; a non-divisible adaptive pool to MatMuls. */
static om_tensor *conv_w;
static int conv_pool(om_tensor *const *in, om_tensor **out) {
  om_tensor *y = om_conv2d(in[0], conv_w, NULL, ONE, ONE, ONE, 1);
  out[0] = om_max_pool2d(y, (int64_t[]){2, 2}, NULL, NULL, NULL, true);
  om_tensor_release(y);
  return out[0] ? 1 : -1;
}

TEST(trace_lowering) {
  om_tensor *x = om_randn((int64_t[]){2, 3, 6, 5}, 4, 9, true), *w = om_randn((int64_t[]){4, 3, 3, 3}, 4, 10, true), *tx;
  conv_w = w;
  CHECK(om_trace_begin());
  om_traced_model *m = om_test_trace(conv_pool, x, (const char *[]){"batch", NULL, NULL, NULL}, 1);
  CHECK(m && om_traced_count(m, OM_TRACED_NODE) == 2);
  if (m) {
    CHECK(!strcmp(om_traced_name(m, OM_TRACED_NODE, 0), "Conv"));
    CHECK(!strcmp(om_traced_name(m, OM_TRACED_NODE, 1), "MaxPool"));
    const char *const *dp = NULL;
    const int64_t *shape = NULL;
    int nd = 0;
    om_dtype dt;
    CHECK(om_traced_info(m, OM_TRACED_OUTPUT, 0, &dt, &nd, &shape, &dp));
    CHECK(nd == 4 && dp && dp[0] && !strcmp(dp[0], "batch") && shape[2] == 3 && shape[3] == 3);
  }
  om_traced_release(m);

  CHECK(om_trace_begin());
  tx = om_trace_input("x", x, NULL);
  om_tensor *q = om_adaptive_avg_pool2d(tx, (int64_t[]){4, 4}); /* 6x5 into 4x4 uneven cells */
  m = q ? om_trace_finish((om_tensor *[]){q}, (const char *[]){"y"}, 1) : NULL;
  CHECK(m != NULL);
  const char *want[] = {"Reshape", "Cast", "Reshape", "Cast", "Reshape", "Cast", "MatMul", "MatMul", "Div"};
  CHECK(m && om_traced_count(m, OM_TRACED_NODE) == 9);
  for (int k = 0; m && k < 9 && k < om_traced_count(m, OM_TRACED_NODE); k++) CHECK(!strcmp(om_traced_name(m, OM_TRACED_NODE, k), want[k]));
  om_traced_release(m);
  om_tensor_release(tx);
  om_tensor_release(q);
  om_tensor_release(x);
  om_tensor_release(w);
}

int main(void) {
  RUN(conv2d_1x1_equals_matmul);
  RUN(conv_null_arrays_are_the_defaults);
  RUN(conv2d_windows_are_im2col_written_plainly);
  RUN(conv2d_hand_computed_3x3);
  RUN(conv1d_is_conv2d_on_a_unit_height);
  RUN(conv_transpose2d_is_the_adjoint_of_conv2d);
  RUN(conv_transpose2d_output_padding_past_the_stride);
  RUN(conv_transpose2d_hand_computed);
  RUN(conv_gradients_hand_computed);
  RUN(max_pool2d_values_padding_ceil_mode);
  RUN(max_pool2d_is_the_per_tap_rule);
  RUN(max_pool2d_gradient_goes_to_the_first_max);
  RUN(avg_pool2d_values_count_include_pad_ceil_mode);
  RUN(adaptive_avg_pool2d_values);
  RUN(adaptive_avg_pool3d_values);
  RUN(adaptive_max_pool_values);
  RUN(conv3d_and_pools3d_over_a_unit_depth_are_the_2d_ops);
  RUN(conv_transpose3d_is_the_adjoint_of_conv3d);
  RUN(conv3d_family_bits_pinned);
  RUN(conv3d_products_in_bands_of_planes);
  RUN(unbatched_inputs);
  RUN(unfold_and_fold);
  RUN(conv_errors);
  RUN(pool_errors);
  RUN(max_pool_indices_and_unpool);
  RUN(trace_lowering);
  TEST_MAIN_END();
}
