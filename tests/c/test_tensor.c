/* Tensor core: creation, views, elementwise math with broadcasting, reductions, matmul,
 * assembly, in-place writes and their versions, random numbers, and every error path. */
#include <stdlib.h>
#include <string.h>

#include "internal.h" /* om__data, for the block cache's reuse */
#include "om_test.h"

#define R(t) om_tensor_release(t)
#define OM_GOLDEN_RAND 0xa15818c1u
#define OM_GOLDEN_RANDN 0xadd3dd6du

TEST(creation) {
  om_tensor *z = om_zeros((int64_t[]){2, 3}, 2, OM_FLOAT32), *o = om_ones((int64_t[]){4}, 1, OM_INT64);
  om_tensor *f = om_full((int64_t[]){2}, 1, OM_BOOL, 3), *s = om_scalar(2.5, OM_FLOAT32);
  CHECK_VALUES(z, SHAPE(2, 3), 0, 0, 0, 0, 0, 0, 0);
  CHECK_VALUES(o, SHAPE(4), 0, 1, 1, 1, 1);
  CHECK_VALUES(f, SHAPE(2), 0, 1, 1);
  CHECK(s && om_tensor_ndim(s) == 0 && at(s, 0) == 2.5);
  om_tensor *a = om_arange(0, 5, 2, OM_INT64), *b = om_arange(1, 0, -0.25, OM_FLOAT32);
  CHECK_VALUES(a, SHAPE(3), 0, 0, 2, 4);
  CHECK_VALUES(b, SHAPE(4), 0, 1, 0.75, 0.5, 0.25);
  om_tensor *e = om_zeros((int64_t[]){3, 0}, 2, OM_FLOAT32);
  CHECK(e && om_tensor_numel(e) == 0 && om_tensor_is_contiguous(e));
  om_tensor *nz = om_full((int64_t[]){1}, 1, OM_FLOAT32, -0.0);
  CHECK(nz && signbit(at(nz, 0)));
  R(nz);
  CHECK_ERROR(om_arange(1e19, 2e19, 1e18, OM_INT64) != NULL, OM_ERR_INVALID_ARGUMENT, "arange: 1e+19 does not fit int64");
  R(z); R(o); R(f); R(s); R(a); R(b); R(e);
}

TEST(creation_errors) {
  CHECK_ERROR(om_zeros((int64_t[]){2, -1}, 2, OM_FLOAT32) != NULL, OM_ERR_INVALID_ARGUMENT, "negative size -1 in shape [2,-1]");
  CHECK_ERROR(om_zeros((int64_t[]){2}, 1, (om_dtype)7) != NULL, OM_ERR_INVALID_ARGUMENT, "unknown dtype 7");
  CHECK_ERROR(om_zeros((int64_t[]){1}, 9, OM_FLOAT32) != NULL, OM_ERR_INVALID_ARGUMENT, "9 dims (at most 8)");
  CHECK_ERROR(om_arange(0, 1, 0, OM_FLOAT32) != NULL, OM_ERR_INVALID_ARGUMENT, "do not make a range");
  CHECK_ERROR(om_full((int64_t[]){1}, 1, OM_INT64, 1e30) != NULL, OM_ERR_INVALID_ARGUMENT, "full: 1e+30 does not fit int64");
  om_tensor *i = om_zeros((int64_t[]){2}, 1, OM_INT64);
  CHECK_ERROR(om_tensor_fill(i, NAN), OM_ERR_INVALID_ARGUMENT, "fill: nan does not fit int64");
  om_tensor_release(i);
  /* 2^40 floats: out of memory natively and in WASM; the library keeps working after. */
  CHECK_ERROR(om_zeros((int64_t[]){1 << 20, 1 << 20}, 2, OM_FLOAT32) != NULL, OM_ERR_OUT_OF_MEMORY, "out of memory allocating 4398046511104 bytes");
  CHECK_ERROR(om_zeros((int64_t[]){1LL << 40, 1LL << 40}, 2, OM_FLOAT32) != NULL, OM_ERR_OUT_OF_MEMORY, "too many elements");
#ifdef __EMSCRIPTEN__
  /* 3 GB: one block over 2 GiB is refused in WASM, whatever the heap's state */
  CHECK_ERROR(om_zeros((int64_t[]){3 << 20, 1 << 8}, 2, OM_FLOAT32) != NULL, OM_ERR_OUT_OF_MEMORY, "one block is limited to 2 GiB in WASM");
#endif
  om_tensor *ok = om_ones((int64_t[]){3}, 1, OM_FLOAT32);
  CHECK_VALUES(ok, SHAPE(3), 0, 1, 1, 1);
  R(ok);
}

TEST(broadcasting_math) {
  om_tensor *a = TF(SHAPE(2, 3), 1, 2, 3, 4, 5, 6), *b = TF(SHAPE(3), 10, 20, 30), *c = TF(SHAPE(2, 1), 2, 4);
  om_tensor *s = om_add(a, b), *d = om_sub(a, c), *m = om_mul(b, c), *q = om_div(a, c), *p = om_pow(c, b);
  CHECK_VALUES(s, SHAPE(2, 3), 0, 11, 22, 33, 14, 25, 36);
  CHECK_VALUES(d, SHAPE(2, 3), 0, -1, 0, 1, 0, 1, 2);
  CHECK_VALUES(m, SHAPE(2, 3), 0, 20, 40, 60, 40, 80, 120);
  CHECK_VALUES(q, SHAPE(2, 3), 1e-7, 0.5, 1, 1.5, 1, 1.25, 1.5);
  CHECK_VALUES(p, SHAPE(2, 3), 1, 1024, 1048576, 1073741824, 1048576, 1099511627776.0, 1152921504606846976.0);
  om_tensor *i = om_arange(0, 4, 1, OM_INT64), *j = om_scalar(3, OM_INT64), *ij = om_mul(i, j);
  CHECK_VALUES(ij, SHAPE(4), 0, 0, 3, 6, 9);
  R(a); R(b); R(c); R(s); R(d); R(m); R(q); R(p); R(i); R(j); R(ij);
}

TEST(unary_math) {
  om_tensor *x = TF(SHAPE(4), -2, -0.5, 0, 4);
  om_tensor *n = om_neg(x), *ab = om_abs(x), *sg = om_sign(x), *r = om_relu(x), *e = om_exp(x);
  om_tensor *sq = om_sqrt(ab), *rs = om_rsqrt(ab), *lg = om_log(ab), *si = om_sigmoid(x), *th = om_tanh(x);
  CHECK_VALUES(n, SHAPE(4), 0, 2, 0.5, 0, -4);
  CHECK_VALUES(ab, SHAPE(4), 0, 2, 0.5, 0, 4);
  CHECK_VALUES(sg, SHAPE(4), 0, -1, -1, 0, 1);
  CHECK_VALUES(r, SHAPE(4), 0, 0, 0, 0, 4);
  CHECK_VALUES(e, SHAPE(4), 1e-5, exp(-2), exp(-0.5), 1, exp(4));
  CHECK_VALUES(sq, SHAPE(4), 1e-6, sqrt(2), sqrt(0.5), 0, 2);
  CHECK_VALUES(rs, SHAPE(4), 1e-6, 1 / sqrt(2), 1 / sqrt(0.5), INFINITY, 0.5);
  CHECK(at(lg, 2) == -INFINITY);
  om_tensor *nan = TF(SHAPE(1), NAN), *rn = om_relu(nan);
  CHECK(isnan(at(rn, 0))); /* relu keeps NaN, as PyTorch and ONNX's Relu */
  om_tensor_release(nan);
  om_tensor_release(rn);
  CHECK_VALUES(si, SHAPE(4), 1e-7, 1 / (1 + exp(2)), 1 / (1 + exp(0.5)), 0.5, 1 / (1 + exp(-4)));
  CHECK_VALUES(th, SHAPE(4), 1e-7, tanh(-2), tanh(-0.5), 0, tanh(4));
  om_tensor *big = TF(SHAPE(2), -100, 100), *sb = om_sigmoid(big); /* no overflow to NaN */
  CHECK_VALUES(sb, SHAPE(2), 1e-30, 0, 1);
  R(x); R(n); R(ab); R(sg); R(r); R(e); R(sq); R(rs); R(lg); R(si); R(th); R(big); R(sb);
}

TEST(comparisons_where_cast) {
  om_tensor *a = TF(SHAPE(3), 1, 2, 3), *b = TF(SHAPE(1), 2);
  om_tensor *lt = om_lt(a, b), *le = om_le(a, b), *gt = om_gt(a, b), *ge = om_ge(a, b), *eq = om_eq(a, b), *ne = om_ne(a, b);
  CHECK(lt && om_tensor_dtype(lt) == OM_BOOL);
  CHECK_VALUES(lt, SHAPE(3), 0, 1, 0, 0);
  CHECK_VALUES(le, SHAPE(3), 0, 1, 1, 0);
  CHECK_VALUES(gt, SHAPE(3), 0, 0, 0, 1);
  CHECK_VALUES(ge, SHAPE(3), 0, 0, 1, 1);
  CHECK_VALUES(eq, SHAPE(3), 0, 0, 1, 0);
  CHECK_VALUES(ne, SHAPE(3), 0, 1, 0, 1);
  om_tensor *w = om_where(lt, a, b), *ci = om_cast(a, OM_INT64), *same = om_cast(a, OM_FLOAT32);
  CHECK_VALUES(w, SHAPE(3), 0, 1, 2, 2);
  CHECK(ci && om_tensor_dtype(ci) == OM_INT64 && at(ci, 2) == 3);
  CHECK(same == a);
  om_tensor *neg = TF(SHAPE(3), -1.7f, 2.9f, NAN), *trunc = om_cast(neg, OM_INT64);
  CHECK_VALUES(trunc, SHAPE(3), 0, -1, 2, 0);
  R(a); R(b); R(lt); R(le); R(gt); R(ge); R(eq); R(ne); R(w); R(ci); R(same); R(neg); R(trunc);
}

/* Short contiguous runs (om__iterate calls a kernel once per run when dims do not merge) take
 * vectorised paths: a permuted copy with runs of 1 to 9 values (one, middle and last; first and
 * last four; memmove), where picking from a row or a single value, masked_fill of a row. Each
 * checked element by element against the values it copies or picks, with NaN and -0 among them
 * (a copy moves bits, so they come through as they went in). */
TEST(short_runs) {
  for (int64_t n = 1; n <= 9; n++) {
    om_tensor *x = om_randn((int64_t[]){4, 3, n}, 3, 50 + (uint64_t)n, true);
    float *px = (float *)om__data(x);
    px[0] = NAN, px[n - 1] = -0.0f;
    om_tensor *pm = om_permute(x, (int64_t[]){1, 0, 2}, 3), *c = om_contiguous(pm);
    /* mask [3, 1, n] broadcast over the 4: runs of n, every other element true */
    om_tensor *mask = om_zeros((int64_t[]){3, 1, n}, 3, OM_BOOL), *v = om_scalar(-7, OM_FLOAT32);
    for (int64_t i = 0; i < 3 * n; i++) ((uint8_t *)om__data(mask))[i] = (uint8_t)(i % 2);
    om_tensor *w = om_where(mask, pm, v), *f = om_masked_fill(c, mask, -7);
    bool ok = c && w && f;
    for (int64_t i = 0; ok && i < 3; i++)
      for (int64_t j = 0; j < 4; j++)
        for (int64_t k = 0; k < n; k++) {
          float want = px[(j * 3 + i) * n + k], pick = (i * n + k) % 2 ? want : -7.0f;
          float got_c = ((float *)om__data(c))[(i * 4 + j) * n + k], got_w = ((float *)om__data(w))[(i * 4 + j) * n + k];
          float got_f = ((float *)om__data(f))[(i * 4 + j) * n + k], fill = (i * n + k) % 2 ? -7.0f : want;
          ok = ok && !memcmp(&got_c, &want, 4) && !memcmp(&got_w, &pick, 4) && !memcmp(&got_f, &fill, 4);
        }
    if (!ok) FAILED("runs of %lld: a copy, where or masked_fill differs", (long long)n);
    R(x); R(pm); R(c); R(mask); R(v); R(w); R(f);
  }
}

TEST(elementwise_errors) {
  om_tensor *a = om_zeros((int64_t[]){2, 3}, 2, OM_FLOAT32), *b = om_zeros((int64_t[]){4}, 1, OM_FLOAT32);
  om_tensor *i = om_zeros((int64_t[]){3}, 1, OM_INT64);
  CHECK_ERROR(om_add(a, b) != NULL, OM_ERR_SHAPE_MISMATCH, "add: shapes [2,3] and [4] do not broadcast (3 vs 4 at dim 1)");
  om_tensor *bools = om_zeros((int64_t[]){3}, 1, OM_BOOL);
  CHECK_ERROR(om_sub(bools, bools) != NULL, OM_ERR_DTYPE_MISMATCH, "sub: subtraction, the `-` operator, with a bool tensor is not supported");
  CHECK_ERROR(om_sub(i, bools) != NULL, OM_ERR_DTYPE_MISMATCH, "sub: subtraction, the `-` operator, with a bool tensor is not supported");
  CHECK_ERROR(om_bitwise_and(a, i) != NULL, OM_ERR_DTYPE_MISMATCH, "bitwise_and: takes int64 or bool, not float32");
  CHECK_ERROR(om_bitwise_not(a) != NULL, OM_ERR_DTYPE_MISMATCH, "bitwise_not: takes int64 or bool, not float32");
  CHECK_ERROR(om_fmod(bools, bools) != NULL, OM_ERR_DTYPE_MISMATCH, "fmod: takes float32, int64 or float64, not bool");
  /* an integer divisor of 0 has no value (PyTorch raises ZeroDivisionError): never a made-up 0 */
  CHECK_ERROR(om_fmod(i, i) != NULL, OM_ERR_INVALID_ARGUMENT, "fmod: integer division by zero (element 0 of the divisor)");
  CHECK_ERROR(om_remainder(i, i) != NULL, OM_ERR_INVALID_ARGUMENT, "remainder: integer division by zero (element 0 of the divisor)");
  om_tensor_release(bools);
  CHECK_ERROR(om_exp(i) != NULL, OM_ERR_DTYPE_MISMATCH, "exp: takes float32 or float64, not int64");
  CHECK_ERROR(om_where(a, a, a) != NULL, OM_ERR_DTYPE_MISMATCH, "where: the condition must be bool, not float32");
  CHECK_ERROR(om_cast(a, (om_dtype)5) != NULL, OM_ERR_INVALID_ARGUMENT, "cast: needs one target dtype");
  /* NULL in, NULL out, and the first error is kept. */
  om_clear_error();
  om_tensor *bad = om_add(a, b), *chained = om_relu(om_exp(bad));
  CHECK(chained == NULL && om_last_error() == OM_ERR_SHAPE_MISMATCH);
  om_clear_error();
  CHECK_ERROR(om_neg(NULL) != NULL, OM_ERR_INVALID_ARGUMENT, "neg: input 0 is NULL");
  R(a); R(b); R(i);
}

TEST(views_share_storage) {
  om_tensor *a = om_arange(0, 24, 1, OM_FLOAT32), *r = om_reshape(a, (int64_t[]){2, 3, 4}, 3);
  om_tensor *p = om_permute(r, (int64_t[]){2, 0, 1}, 3), *t = om_transpose(r, 0, 2);
  om_tensor *sl = om_slice(r, 2, 1, 100, 2), *se = om_select(r, 1, -1), *u = om_unsqueeze(se, 0), *sq = om_squeeze(u, NULL, 0);
  CHECK(om_tensor_shares_storage(a, p) && om_tensor_shares_storage(a, sl) && om_tensor_shares_storage(a, sq));
  /* a step past the end keeps one element, and its gradient lands on that one */
  om_tensor *leaf = om_arange(0, 10, 1, OM_FLOAT32);
  om_tensor_set_requires_grad(leaf, true);
  om_tensor *one = om_slice(leaf, 0, 2, 10, 100), *s1 = om_sum(one, NULL, 0, false);
  CHECK_VALUES(one, SHAPE(1), 0, 2);
  CHECK(om_backward(s1, NULL));
  om_tensor *g = om_tensor_grad(leaf);
  CHECK_VALUES(g, SHAPE(10), 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0);
  om_tensor_release(leaf), om_tensor_release(one), om_tensor_release(s1), om_tensor_release(g);
  CHECK_VALUES(p, SHAPE(4, 2, 3), 0, 0, 4, 8, 12, 16, 20, 1, 5, 9);
  CHECK_VALUES(t, SHAPE(4, 3, 2), 0, 0, 12, 4, 16, 8, 20, 1, 13);
  CHECK_VALUES(sl, SHAPE(2, 3, 2), 0, 1, 3, 5, 7, 9, 11, 13, 15);
  CHECK_VALUES(se, SHAPE(2, 4), 0, 8, 9, 10, 11, 20, 21, 22, 23);
  CHECK_VALUES(sq, SHAPE(2, 4), 0, 8, 9, 10, 11, 20, 21, 22, 23);
  CHECK(!om_tensor_is_contiguous(p) && om_tensor_is_contiguous(r));
  om_tensor *head = om_slice(a, 0, 0, 3, 1), *e = om_expand(head, (int64_t[]){2, -1}, 2);
  CHECK_VALUES(e, SHAPE(2, 3), 0, 0, 1, 2, 0, 1, 2);
  /* reshape of a permuted view copies; of a contiguous one it views */
  om_tensor *flat = om_reshape(p, (int64_t[]){-1}, 1), *v2 = om_reshape(r, (int64_t[]){6, -1}, 2);
  CHECK(flat && !om_tensor_shares_storage(flat, a) && at(flat, 1) == 4);
  CHECK(v2 && om_tensor_shares_storage(v2, a) && om_tensor_shape(v2)[1] == 4);
  om_tensor *c = om_contiguous(p), *same = om_contiguous(r), *cl = om_clone(r);
  CHECK(c && om_tensor_is_contiguous(c) && at(c, 1) == 4 && same == r && !om_tensor_shares_storage(cl, r));
  om_tensor *empty = om_slice(r, 0, 5, 9, 1);
  CHECK(empty && om_tensor_shape(empty)[0] == 0);
  om_tensor *det = om_detach(r);
  CHECK(det && om_tensor_shares_storage(det, r) && !om_tensor_requires_grad(det));
  R(head);
  R(a); R(r); R(p); R(t); R(sl); R(se); R(u); R(sq); R(flat); R(v2); R(c); R(same); R(cl); R(empty); R(det);
  R(e);
}

TEST(view_errors) {
  om_tensor *a = om_zeros((int64_t[]){2, 3}, 2, OM_FLOAT32);
  CHECK_ERROR(om_reshape(a, (int64_t[]){4, 2}, 2) != NULL, OM_ERR_SHAPE_MISMATCH, "reshape: element counts differ, cannot reshape [2,3] to [4,2]");
  CHECK_ERROR(om_reshape(a, (int64_t[]){-1, -1}, 2) != NULL, OM_ERR_SHAPE_MISMATCH, "cannot reshape");
  CHECK_ERROR(om_permute(a, (int64_t[]){0, 0}, 2) != NULL, OM_ERR_INVALID_ARGUMENT, "permute: dim 0 appears twice");
  CHECK_ERROR(om_permute(a, (int64_t[]){0}, 1) != NULL, OM_ERR_INVALID_ARGUMENT, "permute: 1 dims given for a tensor of 2 dims");
  CHECK_ERROR(om_transpose(a, 0, 2) != NULL, OM_ERR_INDEX_OUT_OF_RANGE, "transpose: dim 2 is out of range for 2 dims");
  CHECK_ERROR(om_expand(a, (int64_t[]){2, 4}, 2) != NULL, OM_ERR_SHAPE_MISMATCH, "expand: cannot expand [2,3] to [2,4]");
  CHECK_ERROR(om_expand(a, (int64_t[]){1LL << 62, 2, 3}, 3) != NULL, OM_ERR_OUT_OF_MEMORY, "expand: shape [4611686018427387904,2,3] has too many elements");
  CHECK_ERROR(om_select(a, 0, 2) != NULL, OM_ERR_INDEX_OUT_OF_RANGE, "select: index 2 is out of range for dim 0 of size 2");
  om_tensor *big = om_slice(a, 1, 0, 3, INT64_MAX); /* no overflow: one element, step made 1 */
  CHECK(big && om_tensor_shape(big)[1] == 1 && om_tensor_strides(big)[1] == 1);
  R(big);
  CHECK_ERROR(om_reshape(a, (int64_t[]){7, 0x6DB6DB6DB6DB6DB7}, 2) != NULL, OM_ERR_SHAPE_MISMATCH, "reshape: cannot reshape [2,3]");
  CHECK_ERROR(om_slice(a, 1, 0, 2, 0) != NULL, OM_ERR_INVALID_ARGUMENT, "slice: step 0 must be positive");
  CHECK_ERROR(om_unsqueeze(a, 3) != NULL, OM_ERR_INDEX_OUT_OF_RANGE, "unsqueeze: dim 3 is out of range for 3 dims");
  om_tensor *v = om_zeros((int64_t[]){3}, 1, OM_FLOAT32);
  CHECK_ERROR(om_tril(v, 0) != NULL, OM_ERR_INVALID_ARGUMENT, "tril: needs at least 2 dims, got 1");
  R(a); R(v);
}

TEST(assembly) {
  om_tensor *a = TF(SHAPE(2, 2), 1, 2, 3, 4), *b = TF(SHAPE(2, 1), 5, 6);
  om_tensor *c = om_cat((om_tensor *[]){a, b}, 2, -1);
  CHECK_VALUES(c, SHAPE(2, 3), 0, 1, 2, 5, 3, 4, 6);
  om_tensor *s = om_stack((om_tensor *[]){a, a}, 2, 1);
  CHECK_VALUES(s, SHAPE(2, 2, 2), 0, 1, 2, 1, 2, 3, 4, 3, 4);
  om_tensor *parts[4] = {0};
  int n = om_split(c, 2, 1, parts, 4);
  CHECK_EQ_INT(n, 2);
  CHECK_VALUES(parts[0], SHAPE(2, 2), 0, 1, 2, 3, 4);
  CHECK_VALUES(parts[1], SHAPE(2, 1), 0, 5, 6);
  om_tensor_release(parts[0]);
  om_tensor_release(parts[1]);
  CHECK_ERROR(om_cat((om_tensor *[]){a, b}, 2, 0) != NULL, OM_ERR_SHAPE_MISMATCH, "cat: input 1 has shape [2,1], input 0 has [2,2] (only dim 0 may differ)");
  CHECK_ERROR(om_stack((om_tensor *[]){a, b}, 2, 0) != NULL, OM_ERR_SHAPE_MISMATCH, "stack: input 1 has shape [2,1], input 0 has [2,2] (all must match)");
  CHECK_EQ_INT(om_split(c, INT64_MAX, 1, parts, 4), 1);
  om_tensor_release(parts[0]);
  om_tensor *one = om_ones((int64_t[]){1}, 1, OM_FLOAT32), *huge = om_expand(one, (int64_t[]){1LL << 59}, 1), *many[20];
  for (int k = 0; k < 20; k++) many[k] = huge; /* 20 * 2^59 elements overflow int64 */
  CHECK_ERROR(om_cat(many, 20, 0) != NULL, OM_ERR_OUT_OF_MEMORY, "cat: the joined dim 0 has more than");
  R(one); R(huge);
  CHECK_ERROR(om_split(c, 1, 1, parts, 2) >= 0, OM_ERR_INVALID_ARGUMENT, "split: 3 pieces do not fit in 2 outputs");
  om_tensor *m = om_arange(1, 10, 1, OM_FLOAT32), *sq = om_reshape(m, (int64_t[]){3, 3}, 2);
  om_tensor *lo = om_tril(sq, 0), *up = om_triu(sq, 1);
  CHECK_VALUES(lo, SHAPE(3, 3), 0, 1, 0, 0, 4, 5, 0, 7, 8, 9);
  CHECK_VALUES(up, SHAPE(3, 3), 0, 0, 2, 3, 0, 0, 6, 0, 0, 0);
  R(a); R(b); R(c); R(s); R(m); R(sq); R(lo); R(up);
}

/* om_roll natively (ASan and UBSan see it); its values against PyTorch, gradients and traces
 * are tests/js/roll.test.mjs */
/* diagonal is a view (one stride, dim1's plus dim2's): a fill through it reaches the base, and
 * a write into the base shows in it; offsets past the block give an empty view. */
TEST(diagonal_is_a_view) {
  om_tensor *r = om_arange(0, 12, 1, OM_FLOAT32), *x = om_reshape(r, (int64_t[]){3, 4}, 2);
  om_tensor *d = om_diagonal(x, 1, 0, 1), *e = om_diagonal(x, 4, 0, 1), *t = om_diagonal(x, -1, 1, 0);
  CHECK(d && om_tensor_ndim(d) == 1 && om_tensor_shape(d)[0] == 3 && at(d, 0) == 1 && at(d, 1) == 6 && at(d, 2) == 11);
  CHECK(e && om_tensor_shape(e)[0] == 0);
  CHECK(t && om_tensor_shape(t)[0] == 3 && at(t, 0) == 1 && at(t, 2) == 11); /* dims swapped, offset negated */
  CHECK(om_tensor_fill(d, -1));
  CHECK(at(x, 1) == -1 && at(x, 6) == -1 && at(x, 11) == -1 && at(x, 0) == 0 && at(x, 5) == 5);
  CHECK(om_tensor_fill(x, 2) && at(d, 0) == 2 && at(t, 1) == 2);
  CHECK_ERROR(om_diagonal(x, 0, 1, -1) != NULL, OM_ERR_INVALID_ARGUMENT, "diagonal: dim1 and dim2 cannot be the same dim (1)");
  om__release_all((om_tensor *[]){r, x, d, e, t}, 5);
}

TEST(roll) {
  om_tensor *a = TF(SHAPE(2, 3), 1, 2, 3, 4, 5, 6);
  om_tensor *r = om_roll(a, (int64_t[]){-4, 1}, 2, (int64_t[]){1, 0}, 2), *f = om_roll(a, (int64_t[]){7}, 1, NULL, 0);
  CHECK_VALUES(r, SHAPE(2, 3), 0, 5, 6, 4, 2, 3, 1); /* torch.roll(a, (-4, 1), (1, 0)) */
  CHECK_VALUES(f, SHAPE(2, 3), 0, 6, 1, 2, 3, 4, 5);
  CHECK_ERROR(om_roll(a, (int64_t[]){1, 2}, 2, (int64_t[]){0}, 1) != NULL, OM_ERR_INVALID_ARGUMENT, "roll: 2 shifts for 1 dims");
  CHECK_ERROR(om_roll(a, (int64_t[]){INT64_MIN}, 1, (int64_t[]){0}, 1) != NULL, OM_ERR_INVALID_ARGUMENT, "roll: shift -9223372036854775808 is beyond 2^53");
  CHECK_ERROR(om_roll(a, (int64_t[]){1}, 1, (int64_t[]){-3}, 1) != NULL, OM_ERR_INDEX_OUT_OF_RANGE, "roll: dim -3 is out of range");
  R(a); R(r); R(f);
}

/* om_meshgrid natively; values against PyTorch, gradients and traces are tests/js/meshgrid.test.mjs */
TEST(meshgrid) {
  om_tensor *a = TF(SHAPE(2), 1, 2), *b = TF(SHAPE(3), 3, 4, 5), *g[2] = {0};
  CHECK_EQ_INT(om_meshgrid((om_tensor *[]){a, b}, 2, true, g), 2);
  CHECK_VALUES(g[0], SHAPE(3, 2), 0, 1, 2, 1, 2, 1, 2);
  CHECK_VALUES(g[1], SHAPE(3, 2), 0, 3, 3, 4, 4, 5, 5);
  R(g[0]); R(g[1]);
  om_tensor *m = om_zeros((int64_t[]){2, 2}, 2, OM_FLOAT32);
  CHECK_ERROR(om_meshgrid((om_tensor *[]){a, m}, 2, false, g) >= 0, OM_ERR_SHAPE_MISMATCH, "meshgrid: tensor 1 has 2 dims");
  CHECK_ERROR(om_meshgrid(NULL, 0, false, g) >= 0, OM_ERR_INVALID_ARGUMENT, "meshgrid: needs at least one tensor");
  R(a); R(b); R(m);
}

static void release_n(om_tensor **ts, int n) {
  for (int k = 0; k < n; k++) R(ts[k]);
}

TEST(split_sizes_and_chunk) {
  om_tensor *x = TF(SHAPE(2, 5), 0, 1, 2, 3, 4, 5, 6, 7, 8, 9), *p[8] = {0};
  /* torch.split(x, [2, 0, 3], 1): an empty piece in the middle */
  CHECK_EQ_INT(om_split_sizes(x, (int64_t[]){2, 0, 3}, 3, -1, p), 3);
  CHECK_VALUES(p[0], SHAPE(2, 2), 0, 0, 1, 5, 6);
  CHECK_EQ_INT(om_tensor_numel(p[1]), 0);
  CHECK_EQ_INT(om_tensor_shape(p[1])[0], 2);
  CHECK_VALUES(p[2], SHAPE(2, 3), 0, 2, 3, 4, 7, 8, 9);
  release_n(p, 3);
  CHECK_ERROR(om_split_sizes(x, (int64_t[]){2, 2}, 2, 1, p) >= 0, OM_ERR_SHAPE_MISMATCH, "split: the sizes sum to 4, not 5 (the size of dim 1)");
  CHECK_ERROR(om_split_sizes(x, (int64_t[]){4, INT64_MAX}, 2, 1, p) >= 0, OM_ERR_SHAPE_MISMATCH, "split: the sizes sum to more than 5 (the size of dim 1)");
  CHECK_ERROR(om_split_sizes(x, (int64_t[]){-1, 6}, 2, 1, p) >= 0, OM_ERR_INVALID_ARGUMENT, "split: size -1 (at 0) must not be negative");
  CHECK_ERROR(om_split_sizes(x, (int64_t[]){5}, 0, 1, p) >= 0, OM_ERR_INVALID_ARGUMENT, "split: needs at least one size");
  CHECK_ERROR(om_split_sizes(x, (int64_t[]){5}, 1, 2, p) >= 0, OM_ERR_INDEX_OUT_OF_RANGE, "split: dim 2 is out of range");
  /* torch.chunk: ceil(5 / 3) = 2 per piece, so 3 pieces of 2, 2, 1; ceil(5 / 4) = 2 gives only 3 */
  CHECK_EQ_INT(om_chunk(x, 3, 1, p, 8), 3);
  CHECK_VALUES(p[2], SHAPE(2, 1), 0, 4, 9);
  release_n(p, 3);
  CHECK_EQ_INT(om_chunk(x, 4, 1, p, 8), 3);
  release_n(p, 3);
  CHECK_EQ_INT(om_chunk(x, 8, 0, p, 8), 2);
  CHECK_VALUES(p[1], SHAPE(1, 5), 0, 5, 6, 7, 8, 9);
  release_n(p, 2);
  om_tensor *e = om_zeros((int64_t[]){0, 3}, 2, OM_FLOAT32);
  CHECK_EQ_INT(om_chunk(e, 3, 0, p, 8), 3); /* an empty dim: chunks empty pieces, as PyTorch */
  for (int k = 0; k < 3; k++) CHECK_EQ_INT(om_tensor_shape(p[k])[1], 3);
  release_n(p, 3);
  CHECK_ERROR(om_chunk(e, 9, 0, p, 8) >= 0, OM_ERR_INVALID_ARGUMENT, "chunk: 9 pieces do not fit in 8 outputs");
  CHECK_ERROR(om_chunk(x, 0, 0, p, 8) >= 0, OM_ERR_INVALID_ARGUMENT, "chunk: chunks 0 must be positive");
  CHECK_ERROR(om_chunk(x, 1, 0, p, 0) >= 0, OM_ERR_INVALID_ARGUMENT, "split: 1 pieces do not fit in 0 outputs");
  /* the pieces are slices: the gradient flows back into the parts of x they cover */
  CHECK(om_tensor_set_requires_grad(x, true));
  CHECK_EQ_INT(om_split_sizes(x, (int64_t[]){1, 4}, 2, 1, p), 2);
  om_tensor *three = om_scalar(3, OM_FLOAT32), *a = om_sum(p[0], NULL, 0, false), *s1 = om_sum(p[1], NULL, 0, false);
  om_tensor *b = om_mul(s1, three);
  om_tensor *loss = om_add(a, b);
  CHECK(om_backward(loss, NULL));
  om_tensor *g = om_tensor_grad(x);
  CHECK_VALUES(g, SHAPE(2, 5), 0, 1, 3, 3, 3, 3, 1, 3, 3, 3, 3);
  release_n(p, 2);
  R(three); R(a); R(s1); R(b); R(loss); R(e); R(x); R(g);
}

TEST(reductions) {
  om_tensor *a = TF(SHAPE(2, 3), 1, 5, 3, 4, 2, 6);
  om_tensor *all = om_sum(a, NULL, 0, false), *rows = om_sum(a, (int64_t[]){1}, 1, true);
  om_tensor *mean0 = om_mean(a, (int64_t[]){0}, 1, false), *mx = om_amax(a, (int64_t[]){-1}, 1, false);
  om_tensor *mn = om_amin(a, NULL, 0, false), *idx = NULL, *vals = om_max_dim(a, 1, false, &idx);
  om_tensor *amin = om_argmin(a, 0, true);
  CHECK(all && om_tensor_ndim(all) == 0 && at(all, 0) == 21);
  CHECK_VALUES(rows, SHAPE(2, 1), 0, 9, 12);
  CHECK_VALUES(mean0, SHAPE(3), 0, 2.5, 3.5, 4.5);
  CHECK_VALUES(mx, SHAPE(2), 0, 5, 6);
  CHECK(mn && at(mn, 0) == 1);
  CHECK_VALUES(vals, SHAPE(2), 0, 5, 6);
  CHECK(idx && om_tensor_dtype(idx) == OM_INT64);
  CHECK_VALUES(idx, SHAPE(2), 0, 1, 2);
  CHECK_VALUES(amin, SHAPE(1, 3), 0, 0, 1, 0);
  om_tensor *ties = TF(SHAPE(3), 2, 2, 1), *ti = om_argmax(ties, 0, false); /* first max wins */
  CHECK(ti && at(ti, 0) == 0);
  om_tensor *ints = om_arange(0, 6, 1, OM_INT64), *isum = om_sum(ints, NULL, 0, false);
  CHECK(isum && om_tensor_dtype(isum) == OM_INT64 && at(isum, 0) == 15);
  CHECK_ERROR(om_sum(a, (int64_t[]){2}, 1, false) != NULL, OM_ERR_INDEX_OUT_OF_RANGE, "sum: dim 2 is out of range for 2 dims");
  CHECK_ERROR(om_sum(a, (int64_t[]){1, -1}, 2, false) != NULL, OM_ERR_INVALID_ARGUMENT, "sum: dim 1 appears twice");
  CHECK_ERROR(om_mean(ints, NULL, 0, false) != NULL, OM_ERR_DTYPE_MISMATCH, "mean: takes float32 or float64, not int64");
  om_tensor *e = om_zeros((int64_t[]){0, 2}, 2, OM_FLOAT32);
  CHECK_ERROR(om_amax(e, (int64_t[]){0}, 1, false) != NULL, OM_ERR_INVALID_ARGUMENT, "amax: dim 0 has size 0 and no maximum");
  om_tensor *es = om_sum(e, (int64_t[]){0}, 1, false);
  CHECK_VALUES(es, SHAPE(2), 0, 0, 0);
  R(a); R(all); R(rows); R(mean0); R(mx); R(mn); R(idx); R(vals); R(amin); R(ties); R(ti); R(ints); R(isum); R(e); R(es);
}

/* Reference product in double for checking the blocked kernel. */
static double ref_dot(const om_tensor *a, const om_tensor *b, int64_t i, int64_t j, int64_t k) {
  double s = 0;
  for (int64_t p = 0; p < k; p++) {
    double x, y;
    om_tensor_get(a, (int64_t[]){i, p}, &x);
    om_tensor_get(b, (int64_t[]){p, j}, &y);
    s += x * y;
  }
  return s;
}

TEST(matmul_against_reference) {
  /* sizes straddle the micro-kernel tile (4x8) and the K/M/N blocks (256/64/512) */
  const int64_t sizes[][3] = {{1, 1, 1}, {3, 5, 7}, {4, 8, 16}, {17, 300, 9}, {70, 33, 520}, {5, 0, 3}};
  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
    int64_t m = sizes[s][0], k = sizes[s][1], n = sizes[s][2];
    om_tensor *a = om_randn((int64_t[]){m, k}, 2, 10 + s, true), *bt = om_randn((int64_t[]){n, k}, 2, 20 + s, true);
    om_tensor *b = om_transpose(bt, 0, 1); /* a strided right operand */
    om_tensor *c = om_matmul(a, b);
    CHECK(c && om_tensor_shape(c)[0] == m && om_tensor_shape(c)[1] == n);
    for (int64_t i = 0; c && i < m; i += 1 + m / 7)
      for (int64_t j = 0; j < n; j += 1 + n / 9) CHECK_NEAR(at(c, i * n + j), ref_dot(a, b, i, j, k), 1e-4 * (1 + (double)k));
    R(a); R(bt); R(b); R(c);
  }
}

/* A row of the product is the same bits whatever the number of rows: 1 to 3 rows go through
 * the small-M path (B read in place), 4 and more through the packed tiles (a last tile of one or
 * two rows through the two-row kernel, of three through the four-row one); B contiguous, B a
 * transposed view (a Linear's weight, packed by 4 x 4 transposes), K across two KC blocks
 * (300), N not a multiple of the tile (21) and across two NC blocks (520). */
TEST(matmul_rows_do_not_depend_on_m) {
  const int64_t sizes[][2] = {{300, 21}, {7, 520}, {33, 8}, {5, 3}};
  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
    for (int tr = 0; tr < 2; tr++) {
      int64_t k = sizes[s][0], n = sizes[s][1];
      om_tensor *a = om_randn((int64_t[]){9, k}, 2, 30 + s, true), *b0 = om_randn(tr ? (int64_t[]){n, k} : (int64_t[]){k, n}, 2, 40 + s, true);
      om_tensor *b = tr ? om_transpose(b0, 0, 1) : om_tensor_retain(b0), *full = om_matmul(a, b);
      for (int64_t m = 1; m <= 7; m++) {
        om_tensor *am = om_slice(a, 0, 2, 2 + m, 1), *c = om_matmul(am, b);
        float *got = malloc(sizeof(float) * (size_t)(m * n)), *all = malloc(sizeof(float) * (size_t)(9 * n));
        if (!c || !full || !om_tensor_read(c, got) || !om_tensor_read(full, all) || memcmp(got, all + 2 * n, sizeof(float) * (size_t)(m * n)))
          FAILED("k %lld, n %lld, %s B, %lld rows: not the bits of the 9-row product", (long long)k, (long long)n, tr ? "transposed" : "contiguous", (long long)m);
        free(got), free(all);
        R(am); R(c);
      }
      R(a); R(b0); R(b); R(full);
    }
}

/* Whether om__gemm (om__gemm_acc with acc) of an m x k by k x n product, A and B transposed or
 * not, with slack between rows, sums every C element in the kernel's one order: from zero, k
 * ascending within a KC (256) block, each block's sum added to C in order (to C's old value
 * with acc), on 1, 2 and 3 threads (whose blocks differ: see split in src/ops/matmul.c); the
 * failure names the case. */
static bool sums_in_kernel_order(int64_t m, int64_t n, int64_t k, int layout, uint32_t seed) {
  enum { KC = 256 };
  bool at = layout & 1, bt = layout & 2, acc = layout & 4; /* A, B transposed; C += A B */
  int64_t ars = at ? 1 : k + 3, acs = at ? m + 2 : 1, brs = bt ? 1 : n + 1, bcs = bt ? k + 5 : 1;
  size_t na = (size_t)(at ? k * acs : m * ars), nb = (size_t)(bt ? n * bcs : k * brs), nc = (size_t)(m * n);
  float *a = malloc(sizeof(float) * na), *b = malloc(sizeof(float) * nb), *c = malloc(sizeof(float) * nc), *want = malloc(sizeof(float) * nc);
  uint32_t x = seed;
  for (size_t i = 0; i < na; i++) a[i] = (float)((x = x * 1664525u + 1013904223u) >> 8) / 16777216.0f - 0.5f;
  for (size_t i = 0; i < nb; i++) b[i] = (float)((x = x * 1664525u + 1013904223u) >> 8) / 16777216.0f - 0.5f;
  for (size_t i = 0; i < nc; i++) c[i] = want[i] = (float)i * 0.25f;
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++)
      for (int64_t pc = 0; pc < k; pc += KC) {
        float sum = 0.0f;
        for (int64_t kk = pc; kk < k && kk < pc + KC; kk++) sum += a[i * ars + kk * acs] * b[kk * brs + j * bcs];
        want[i * n + j] = pc == 0 && !acc ? sum : want[i * n + j] + sum;
      }
  int before = om_get_num_threads();
  bool ok = true;
  for (int t = 1; ok && t <= 3; t++) {
    om_set_num_threads(t);
    for (size_t i = 0; i < nc; i++) c[i] = (float)i * 0.25f;
    ok = (acc ? om__gemm_acc : om__gemm)(a, ars, acs, b, brs, bcs, c, m, n, k, "test") && !memcmp(c, want, sizeof(float) * nc);
    if (!ok)
      FAILED("m %lld, n %lld, k %lld, A %s, B %s%s, %d threads: not the bits of the kernel's order", (long long)m, (long long)n,
             (long long)k, at ? "transposed" : "contiguous", bt ? "transposed" : "contiguous", acc ? ", accumulated" : "", t);
  }
  om_set_num_threads(before);
  free(a), free(b), free(c), free(want);
  return ok;
}

/* The kernel's order on every path: fewer rows than a tile (1, 3; with B transposed, four of its
 * columns read as vectors and transposed, N % 4 columns left over), edge tiles of 1 to 3 rows and
 * of 1 to 7 columns, A read in place (N up to 32) or packed (33, 40), B's rows read in place
 * (contiguous, N a multiple of 8 or 4 past one) or packed (transposed, or N 3, 5, 33), K across
 * two KC blocks, A transposed, rows with slack between them. */
TEST(matmul_sums_in_kernel_order) {
  const int64_t ms[] = {1, 3, 4, 6, 9, 65}, ns[] = {3, 4, 5, 8, 12, 24, 32, 33, 40}, ks[] = {1, 8, 257};
  for (size_t mi = 0; mi < sizeof ms / sizeof ms[0]; mi++)
    for (size_t ni = 0; ni < sizeof ns / sizeof ns[0]; ni++)
      for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++)
        for (int layout = 0; layout < 8; layout++) sums_in_kernel_order(ms[mi], ns[ni], ks[ki], layout, 12345u + (uint32_t)(mi * 100 + ni * 10 + ki));
}

/* Products large enough to be split in blocks (from 2^20 multiply-adds, on more than one
 * thread), with the operand the blocks share packed whole first: blocks of columns reading A packed (two NC
 * blocks and a short one; blocks of at most 32 columns, which would read A in place alone), of
 * rows reading B packed (two NC blocks; N at most 32 with B transposed, which the blocks read
 * packed, and contiguous, which they read in place), and in every layout the same order. */
TEST(matmul_split_sums_in_kernel_order) {
  const int64_t sizes[][3] = {{67, 1030, 300}, {64, 256, 512}, {1030, 40, 300}, {1030, 24, 300}, {600, 530, 40}};
  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
    for (int layout = 0; layout < 8; layout++) sums_in_kernel_order(sizes[s][0], sizes[s][1], sizes[s][2], layout, 777u + (uint32_t)s);
}

/* A batch of split products (A packed whole for each product, or B for each) gives each product
 * the bits it has alone, A broadcast over the batch too. */
TEST(matmul_split_batches) {
  const int64_t sizes[][3] = {{67, 520, 300}, {530, 40, 300}};
  int before = om_get_num_threads();
  om_set_num_threads(2); /* blocks are for more than one thread (the single-thread WASM build has none) */
  for (size_t s = 0; s < 2; s++)
    for (int bcast = 0; bcast < 2; bcast++) {
      int64_t m = sizes[s][0], n = sizes[s][1], k = sizes[s][2];
      om_tensor *a = om_randn((int64_t[]){bcast ? 1 : 3, m, k}, 3, 50 + s, true), *b = om_randn((int64_t[]){3, k, n}, 3, 60 + s, true);
      om_tensor *c = om_matmul(a, b);
      CHECK(c != NULL);
      for (int64_t t = 0; c && t < 3; t++) {
        om_tensor *at = om_select(a, 0, bcast ? 0 : t), *bt = om_select(b, 0, t), *one = om_matmul(at, bt), *ct = om_select(c, 0, t);
        float *got = malloc(sizeof(float) * (size_t)(m * n)), *want = malloc(sizeof(float) * (size_t)(m * n));
        if (!one || !ct || !om_tensor_read(ct, got) || !om_tensor_read(one, want) || memcmp(got, want, sizeof(float) * (size_t)(m * n)))
          FAILED("m %lld, n %lld, k %lld%s: product %lld of the batch is not its bits alone", (long long)m, (long long)n, (long long)k,
                 bcast ? ", A broadcast" : "", (long long)t);
        free(got), free(want);
        R(at); R(bt); R(one); R(ct);
      }
      R(a); R(b); R(c);
    }
  om_set_num_threads(before);
}

/* Rows that do not flatten into one product (torch.onnx's sequence-first [L, N, E], a transpose of
 * [N, L, E]) times one weight: its panels packed once for the whole batch (one block per product,
 * or blocks of rows), each product the bits it has alone, on one thread and on two. */
TEST(matmul_batch_shares_one_weight) {
  const int64_t sizes[][4] = {{65, 8, 128, 384}, {3, 600, 64, 40}}; /* L, N, k, n */
  int before = om_get_num_threads();
  for (int threads = 1; threads <= 2; threads++)
    for (size_t s = 0; s < 2; s++) {
      om_set_num_threads(threads);
      int64_t L = sizes[s][0], m = sizes[s][1], k = sizes[s][2], n = sizes[s][3];
      om_tensor *x = om_randn((int64_t[]){m, L, k}, 3, 70 + s, true), *w = om_randn((int64_t[]){n, k}, 2, 80 + s, true);
      om_tensor *a = om_transpose(x, 0, 1), *b = om_transpose(w, 0, 1), *c = om_matmul(a, b);
      CHECK(c != NULL);
      for (int64_t t = 0; c && t < L; t += L / 3) {
        om_tensor *at = om_select(a, 0, t), *one = om_matmul(at, b), *ct = om_select(c, 0, t);
        float *got = malloc(sizeof(float) * (size_t)(m * n)), *want = malloc(sizeof(float) * (size_t)(m * n));
        if (!one || !ct || !om_tensor_read(ct, got) || !om_tensor_read(one, want) || memcmp(got, want, sizeof(float) * (size_t)(m * n)))
          FAILED("L %lld, m %lld, k %lld, n %lld, %d threads: product %lld of the batch is not its bits alone", (long long)L, (long long)m,
                 (long long)k, (long long)n, threads, (long long)t);
        free(got), free(want);
        R(at); R(one); R(ct);
      }
      R(x); R(w); R(a); R(b); R(c);
    }
  om_set_num_threads(before);
}

TEST(matmul_shapes) {
  om_tensor *a = om_randn((int64_t[]){2, 1, 3, 4}, 4, 1, true), *b = om_randn((int64_t[]){5, 4, 2}, 3, 2, true);
  om_tensor *c = om_matmul(a, b);
  CHECK(c && om_tensor_ndim(c) == 4 && om_tensor_shape(c)[0] == 2 && om_tensor_shape(c)[1] == 5 && om_tensor_shape(c)[3] == 2);
  /* batch [1,3] of c equals a[1,0] @ b[3] */
  om_tensor *a0 = om_select(a, 0, 1), *a1 = om_select(a0, 0, 0), *b3 = om_select(b, 0, 3), *c13 = om_matmul(a1, b3);
  om_tensor *c1 = om_select(c, 0, 1), *c13b = om_select(c1, 0, 3);
  for (int k = 0; k < 6; k++) CHECK(at(c13, k) == at(c13b, k)); /* same bits: order is batch-independent */
  om_tensor *v = TF(SHAPE(2), 1, 2), *mtx = TF(SHAPE(2, 2), 1, 2, 3, 4);
  om_tensor *vm = om_matmul(v, mtx), *mv = om_matmul(mtx, v), *vv = om_matmul(v, v);
  CHECK_VALUES(vm, SHAPE(2), 0, 7, 10);
  CHECK_VALUES(mv, SHAPE(2), 0, 5, 11);
  CHECK(vv && om_tensor_ndim(vv) == 0 && at(vv, 0) == 5);
  om_tensor *x = om_zeros((int64_t[]){2, 3}, 2, OM_FLOAT32), *y = om_zeros((int64_t[]){4, 5}, 2, OM_FLOAT32);
  CHECK_ERROR(om_matmul(x, y) != NULL, OM_ERR_SHAPE_MISMATCH, "matmul: shapes [2,3] and [4,5] do not match (3 != 4)");
  om_tensor *i = om_zeros((int64_t[]){3, 2}, 2, OM_INT64);
  CHECK_ERROR(om_matmul(x, i) != NULL, OM_ERR_DTYPE_MISMATCH, "matmul: takes float32, not float32 and int64");
  om_tensor *p = om_zeros((int64_t[]){2, 3, 4}, 3, OM_FLOAT32), *q = om_zeros((int64_t[]){3, 4, 5}, 3, OM_FLOAT32);
  CHECK_ERROR(om_matmul(p, q) != NULL, OM_ERR_SHAPE_MISMATCH, "matmul: shapes [2] and [3] do not broadcast");
  R(a); R(b); R(c); R(a0); R(a1); R(c1); R(b3); R(c13); R(c13b); R(v); R(mtx); R(vm); R(mv); R(vv); R(x); R(y); R(i); R(p); R(q);
}

/* linear is matmul with the weight read transposed, plus the bias: the same bits as the
 * composite, for every input rank and without a bias. */
TEST(linear_matches_matmul) {
  om_tensor *w = om_randn((int64_t[]){4, 5}, 2, 2, true), *b = om_randn((int64_t[]){4}, 1, 3, true);
  om_tensor *wt = om_transpose(w, 0, 1);
  int64_t shapes[3][3] = {{5}, {3, 5}, {2, 3, 5}};
  for (int r = 0; r < 3; r++) {
    om_tensor *x = om_randn(shapes[r], r + 1, 10 + (uint64_t)r, true);
    om_tensor *y = om_linear(x, w, b), *y0 = om_linear(x, w, NULL), *m = om_matmul(x, wt), *mb = om_add(m, b);
    CHECK(y && om_tensor_ndim(y) == r + 1 && om_tensor_shape(y)[r] == 4);
    for (int64_t k = 0; k < om_tensor_numel(mb); k++) CHECK(at(y, k) == at(mb, k) && at(y0, k) == at(m, k));
    om_tensor *all[] = {x, y, y0, m, mb};
    for (int k = 0; k < 5; k++) om_tensor_release(all[k]);
  }
  /* Larger, on 1 and 2 threads: a contiguous batch of rows (one product of all of them: split by
   * rows, or with fewer rows than outputs by columns; one row broadcast to all, its rows 0
   * apart), a transposed one and one whose size-1 dim has a stride of its own (each a product per
   * leading index), torch.onnx's sequence-first [L, 1, E] at batch 1 (a transpose of [1, L, E]:
   * evenly spaced rows, one product), and a bias read with a stride: the bits of matmul and then add. */
  om_tensor *w2 = om_randn((int64_t[]){160, 96}, 2, 4, true), *w2t = om_transpose(w2, 0, 1);
  om_tensor *b2 = om_randn((int64_t[]){160, 2}, 2, 5, true), *b2s = om_select(b2, 1, 1);
  om_tensor *base = om_randn((int64_t[]){4, 80, 100}, 3, 6, true), *rows = om_slice(base, 1, 0, 64, 1), *cut = om_slice(rows, 2, 0, 96, 1);
  om_tensor *tr = om_randn((int64_t[]){64, 4, 96}, 3, 8, true);
  om_tensor *row = om_randn((int64_t[]){1, 1, 96}, 3, 10, true), *seq = om_randn((int64_t[]){1, 65, 96}, 3, 11, true);
  om_tensor *xs[6] = {om_randn((int64_t[]){4, 64, 96}, 3, 7, true), om_randn((int64_t[]){2, 40, 96}, 3, 9, true), om_transpose(tr, 0, 1),
                      om_unsqueeze(cut, 1), om_expand(row, (int64_t[]){4, 64, 96}, 3), om_transpose(seq, 0, 1)};
  int before = om_get_num_threads();
  for (int threads = 1; threads <= 2; threads++) {
    om_set_num_threads(threads);
    for (int v = 0; v < 6; v++) {
      om_tensor *y = om_linear(xs[v], w2, b2s), *m = om_matmul(xs[v], w2t), *mb = om_add(m, b2s);
      bool same = y && mb && om_tensor_numel(y) == om_tensor_numel(mb) && om_tensor_shape(y)[om_tensor_ndim(y) - 1] == 160;
      for (int64_t k = 0; same && k < om_tensor_numel(mb); k++) same = at(y, k) == at(mb, k);
      if (!same) FAILED("linear input %d on %d threads: not the bits of matmul and add", v, threads);
      for (int64_t i = 0; v == 5 && same && i < 65; i++) { /* flattened into one product: each row as its own product gives */
        om_tensor *xi = om_select(xs[v], 0, i), *mi = om_matmul(xi, w2t);
        for (int64_t k = 0; same && k < 160; k++) same = mi && at(mi, k) == at(m, i * 160 + k);
        if (!same) FAILED("matmul of sequence-first rows on %d threads: row %lld differs from its own product", threads, (long long)i);
        om_tensor_release(xi), om_tensor_release(mi);
      }
      om_tensor *all[] = {y, m, mb};
      om__release_all(all, 3);
    }
  }
  om_set_num_threads(before);
  om_tensor *big[] = {w2, w2t, b2, b2s, base, rows, cut, tr, row, seq, xs[0], xs[1], xs[2], xs[3], xs[4], xs[5]};
  om__release_all(big, 16);
  om_tensor *x = om_zeros((int64_t[]){2, 3}, 2, OM_FLOAT32), *bad = om_zeros((int64_t[]){5}, 1, OM_FLOAT32);
  CHECK_ERROR(om_linear(x, w, b) != NULL, OM_ERR_SHAPE_MISMATCH, "linear: input [2,3] and weight [4,5] do not match");
  om_tensor *x5 = om_zeros((int64_t[]){2, 5}, 2, OM_FLOAT32);
  CHECK_ERROR(om_linear(x5, w, bad) != NULL, OM_ERR_SHAPE_MISMATCH, "linear: bias [5] does not match weight [4,5] (it must be [4])");
  om_tensor *none = NULL;
  CHECK_ERROR(om_apply(OM_OP_linear, (om_tensor *[]){x5}, 1, NULL, 0, NULL, 0, &none, 1) >= 0, OM_ERR_INVALID_ARGUMENT,
              "linear: takes x, weight and an optional bias, got 1 inputs");
  R(w); R(b); R(wt); R(x); R(bad); R(x5); R(none);
}

TEST(in_place_writes_bump_version) {
  om_tensor *a = om_zeros((int64_t[]){2, 3}, 2, OM_FLOAT32), *v = om_select(a, 0, 1);
  uint64_t v0 = om_tensor_version(a);
  CHECK(om_tensor_fill(v, 7));
  CHECK(om_tensor_version(a) == v0 + 1); /* views share the storage's counter */
  CHECK(om_tensor_set(a, (int64_t[]){0, 2}, -1));
  CHECK_VALUES(a, SHAPE(2, 3), 0, 0, 0, -1, 7, 7, 7);
  om_tensor *src = TF(SHAPE(3), 1, 2, 3);
  CHECK(om_tensor_copy_from(a, src));
  CHECK_VALUES(a, SHAPE(2, 3), 0, 1, 2, 3, 1, 2, 3);
  CHECK(om_tensor_version(a) == v0 + 3);
  om_tensor *i = om_zeros((int64_t[]){3}, 1, OM_INT64);
  CHECK(om_tensor_copy_from(i, src) && at(i, 2) == 3); /* converts */
  double x;
  CHECK_ERROR(om_tensor_set(a, (int64_t[]){2, 0}, 1), OM_ERR_INDEX_OUT_OF_RANGE, "set: index 2 is out of range for dim 0 of shape [2,3]");
  CHECK_ERROR(om_tensor_get(a, (int64_t[]){0, 3}, &x), OM_ERR_INDEX_OUT_OF_RANGE, "get: index 3 is out of range for dim 1");
  CHECK_ERROR(om_tensor_copy_from(src, a), OM_ERR_SHAPE_MISMATCH, "copy_from: source shape [2,3] does not broadcast to [3]");
  CHECK_ERROR(om_tensor_item(a, &x), OM_ERR_INVALID_ARGUMENT, "item: tensor of shape [2,3] has 6 elements, not 1");
  /* overlapping copy: shift a row by one within the same storage */
  om_tensor *row = om_arange(0, 5, 1, OM_FLOAT32), *dst = om_slice(row, 0, 1, 5, 1), *srcv = om_slice(row, 0, 0, 4, 1);
  CHECK(om_tensor_copy_from(dst, srcv));
  CHECK_VALUES(row, SHAPE(5), 0, 0, 0, 1, 2, 3);
  R(a); R(v); R(src); R(i); R(row); R(dst); R(srcv);
}

/* The generator is counter-based: these bits are the same on every platform (this test runs
 * natively and in WASM against the same constants). */
TEST(random_numbers_are_portable) {
  om_tensor *u = om_rand((int64_t[]){1000}, 1, 42, true), *n = om_randn((int64_t[]){1000}, 1, 42, true);
  uint32_t hu = 2166136261u, hn = 2166136261u; /* FNV-1a over the float bits */
  float buf[1000];
  double mean = 0, var = 0;
  om_tensor_read(u, buf);
  for (int k = 0; k < 1000; k++) {
    uint32_t b;
    memcpy(&b, &buf[k], 4);
    hu = (hu ^ b) * 16777619u;
    CHECK(buf[k] >= 0 && buf[k] < 1);
  }
  om_tensor_read(n, buf);
  for (int k = 0; k < 1000; k++) {
    uint32_t b;
    memcpy(&b, &buf[k], 4);
    hn = (hn ^ b) * 16777619u;
    mean += buf[k] / 1000.0;
  }
  for (int k = 0; k < 1000; k++) var += (buf[k] - mean) * (buf[k] - mean) / 1000.0;
  printf("  rand hash %08x, randn hash %08x, randn mean %.4f var %.4f\n", hu, hn, mean, var);
  CHECK_EQ_INT(hu, OM_GOLDEN_RAND);
  CHECK_EQ_INT(hn, OM_GOLDEN_RANDN);
  CHECK(fabs(mean) < 0.1 && fabs(var - 1) < 0.15);
  /* the default generator advances; manual_seed restarts it */
  om_manual_seed(7);
  om_tensor *d1 = om_rand((int64_t[]){3}, 1, 0, false), *d2 = om_rand((int64_t[]){3}, 1, 0, false);
  om_manual_seed(7);
  om_tensor *d3 = om_rand((int64_t[]){6}, 1, 0, false), *s7 = om_rand((int64_t[]){6}, 1, 7, true);
  CHECK(at(d1, 0) != at(d2, 0) && at(d3, 0) == at(d1, 0) && at(d3, 3) == at(d2, 0) && at(s7, 5) == at(d3, 5));
  R(u); R(n); R(d1); R(d2); R(d3); R(s7);
}

/* Steady-state eager steps reuse freed blocks (the block cache in tensor.c): while another
 * tensor lives, a new tensor whose size falls in a freed block's size class gets that block,
 * with fresh values; live bytes count the sizes asked for, not the blocks' sizes. */
TEST(freed_blocks_are_reused) {
  om_tensor *keep = om_ones((int64_t[]){3}, 1, OM_FLOAT32);
  int64_t bytes = om_live_bytes();
  om_tensor *a = om_full((int64_t[]){100}, 1, OM_FLOAT32, 7); /* 400 bytes: the class of 257 to 448 */
  char *block = om__data(a);
  R(a);
  om_tensor *b = om_zeros((int64_t[]){97}, 1, OM_FLOAT32), *c = om_zeros((int64_t[]){200}, 1, OM_FLOAT32);
  CHECK(om__data(b) == block);
  CHECK(om__data(c) != block); /* 800 bytes: another class */
  CHECK(at(b, 0) == 0 && at(b, 96) == 0);
  CHECK_EQ_INT(om_live_bytes() - bytes, 97 * 4 + 200 * 4);
  om_tensor *big = om_zeros((int64_t[]){1 << 19}, 1, OM_FLOAT32); /* 2 MiB: past the cache's largest class */
  CHECK(big && at(big, (1 << 19) - 1) == 0);
  R(b); R(c); R(big); R(keep);
}

/* The kernels' scratch (om__scratch) is kept between jobs while it is small enough: asked again,
 * a slot gives the same buffer; past the block cache's 16 MiB it is freed by om__scratch_done;
 * it is freed when the thread's last tensor goes; sizes past what any machine has are
 * OutOfMemory, not a crash. */
TEST(kernel_scratch_is_kept_between_jobs) {
  om_tensor *keep = om_ones((int64_t[]){3}, 1, OM_FLOAT32);
  om_block_cache *c = &om__state()->cache;
  float *p = om__scratch(1, 1000, "test");
  CHECK(p != NULL && c->scratch_floats[1] == 1000);
  p[1000] = 1; /* the float of slack */
  om__scratch_done();
  CHECK(om__scratch(1, 600, "test") == p); /* smaller: the same buffer */
  om__scratch_done();
  CHECK(om__scratch(1, 5 << 20, "test") != NULL && c->scratch_floats[1] == 5 << 20); /* 20 MiB: grown */
  om__scratch_done();
  CHECK(c->scratch[1] == NULL && c->scratch_floats[1] == 0); /* past what is kept: freed */
  CHECK(om__scratch(1, 0, "test") != NULL); /* none asked of an empty slot: a buffer still, not a failure */
  om__scratch_done();
  CHECK(om__scratch(0, 10, "test") != NULL);
  om__scratch_done();
  CHECK_ERROR(om__scratch(0, INT64_C(1) << 60, "test"), OM_ERR_OUT_OF_MEMORY, "test: 1152921504606846976 floats of scratch is too much");
  CHECK_ERROR(om__scratch(0, INT64_C(1) << 59, "test"), OM_ERR_OUT_OF_MEMORY, "test: out of memory allocating");
  om__scratch_done();
  R(keep);
  CHECK(c->scratch[0] == NULL && c->scratch[1] == NULL); /* the thread's last tensor took the scratch with it */
}

int main(void) {
  RUN(creation);
  RUN(creation_errors);
  RUN(broadcasting_math);
  RUN(unary_math);
  RUN(comparisons_where_cast);
  RUN(short_runs);
  RUN(elementwise_errors);
  RUN(views_share_storage);
  RUN(view_errors);
  RUN(assembly);
  RUN(diagonal_is_a_view);
  RUN(roll);
  RUN(meshgrid);
  RUN(split_sizes_and_chunk);
  RUN(reductions);
  RUN(matmul_against_reference);
  RUN(matmul_rows_do_not_depend_on_m);
  RUN(matmul_sums_in_kernel_order);
  RUN(matmul_split_sums_in_kernel_order);
  RUN(matmul_split_batches);
  RUN(kernel_scratch_is_kept_between_jobs);
  RUN(matmul_batch_shares_one_weight);
  RUN(matmul_shapes);
  RUN(linear_matches_matmul);
  RUN(in_place_writes_bump_version);
  RUN(random_numbers_are_portable);
  RUN(freed_blocks_are_reused);
  TEST_MAIN_END();
}
