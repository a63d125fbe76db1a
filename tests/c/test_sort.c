/* Sorting, searching and rearranging natively (so the ASan and UBSan builds run them): topk's
 * order (ties, NaN, k = 1 and k = n, negative dims, int64 beyond 2^53), sort and argsort,
 * searchsorted and bucketize, one_hot, repeat_interleave, the triangle indices and the pixel
 * shuffles, with their error paths. Values against PyTorch are in tests/js/sort.test.mjs. */
#include "internal.h"
#include "om_test.h"

static om_tensor *ints(const int64_t *v, const int64_t *shape, int ndim) { return om_from_data(v, shape, ndim, OM_INT64); }
#define TI(shape, ...) ints((const int64_t[]){__VA_ARGS__}, (const int64_t[])shape, (int)(sizeof((int64_t[])shape) / sizeof(int64_t)))

TEST(topk_orders_ties_nan_and_both_ends) {
  om_tensor *x = TF(SHAPE(2, 4), 2, NAN, 1, 2, 0, 5, 5, -1), *idx = NULL;
  om_tensor *v = om_topk(x, 4, -1, true, &idx); /* k = n */
  CHECK_VALUES(idx, SHAPE(2, 4), 0, 1, 0, 3, 2, 1, 2, 0, 3);
  CHECK(v && isnan(at(v, 0)) && at(v, 1) == 2 && at(v, 5) == 5);
  om__release_all((om_tensor *[]){v, idx}, 2);
  v = om_topk(x, 1, -2, false, &idx); /* k = 1 along dim 0, smallest: a NaN ranks last */
  CHECK_VALUES(v, SHAPE(1, 4), 0, 0, 5, 1, -1);
  CHECK_VALUES(idx, SHAPE(1, 4), 0, 1, 1, 0, 1);
  om__release_all((om_tensor *[]){v, idx}, 2);
  om_tensor *big = TI(SHAPE(3), ((int64_t)1 << 62) + 1, (int64_t)1 << 62, -3);
  v = om_sort(big, 0, true, &idx); /* int64 compares as integers: every bit counts */
  CHECK(v && at(idx, 0) == 0 && at(idx, 1) == 1 && at(idx, 2) == 2);
  om__release_all((om_tensor *[]){v, idx}, 2);
  om_tensor *order = om_argsort(x, 1, false);
  CHECK_VALUES(order, SHAPE(2, 4), 0, 2, 0, 3, 1, 3, 0, 1, 2);
  om_tensor *scalar = om_scalar(3, OM_FLOAT32), *s = om_topk(scalar, 1, 0, true, &idx);
  CHECK(s && om_tensor_ndim(s) == 0 && at(s, 0) == 3 && at(idx, 0) == 0);
  CHECK_ERROR(om_topk(x, 5, 1, true, NULL) != NULL, OM_ERR_INVALID_ARGUMENT, "topk: k (5) is out of range for dim 1 of size 4");
  CHECK_ERROR(om_topk(x, 1, -3, true, NULL) != NULL, OM_ERR_INDEX_OUT_OF_RANGE, "topk");
  CHECK_ERROR(om_sort(x, 2, true, NULL) != NULL, OM_ERR_INDEX_OUT_OF_RANGE, "sort");
  CHECK_ERROR(om_topk(NULL, 1, 0, true, NULL) != NULL, OM_ERR_INVALID_ARGUMENT, "topk");
  om__release_all((om_tensor *[]){x, big, order, scalar, s, idx}, 6);
}

TEST(sort_of_bool_puts_false_first_in_index_order) {
  om_tensor *f = TF(SHAPE(2, 3), 1, 0, 1, 0, 0, 1), *b = om_cast(f, OM_BOOL), *idx = NULL;
  om_tensor_release(f);
  om_tensor *v = om_sort(b, -1, false, &idx);
  CHECK(v && om_tensor_dtype(v) == OM_BOOL);
  CHECK_VALUES(idx, SHAPE(2, 3), 0, 1, 0, 2, 0, 1, 2);
  CHECK(v && at(v, 0) == 0 && at(v, 1) == 1 && at(v, 2) == 1 && at(v, 3) == 0 && at(v, 5) == 1);
  om__release_all((om_tensor *[]){v, idx}, 2);
  om_tensor *desc = om_argsort(b, 0, true);
  CHECK_VALUES(desc, SHAPE(2, 3), 0, 0, 0, 0, 1, 1, 1); /* equal values keep their index order, descending too */
  CHECK_ERROR(om_topk(b, 1, 0, true, NULL) != NULL, OM_ERR_DTYPE_MISMATCH, "topk: takes float32 or int64, not bool");
  om__release_all((om_tensor *[]){b, desc}, 2);
}

TEST(searchsorted_and_bucketize_place_values) {
  om_tensor *b = TF(SHAPE(4), -1, 0, 0, 2), *x = TF(SHAPE(2, 3), -2, 0, 1, 2, 9, NAN);
  om_tensor *left = om_bucketize(x, b, false), *right = om_bucketize(x, b, true);
  CHECK_VALUES(left, SHAPE(2, 3), 0, 0, 1, 3, 3, 4, 4);
  CHECK_VALUES(right, SHAPE(2, 3), 0, 0, 3, 3, 4, 4, 4);
  om_tensor *seq = TI(SHAPE(2, 3), 1, 2, 3, 0, 0, 5), *v = TI(SHAPE(2, 2), 2, 4, 0, 6);
  om_tensor *nd = om_searchsorted(seq, v, false);
  CHECK_VALUES(nd, SHAPE(2, 2), 0, 1, 3, 0, 3);
  om_tensor *b2 = TF(SHAPE(1, 4), 0, 1, 2, 3);
  CHECK_ERROR(om_bucketize(x, b2, false) != NULL, OM_ERR_SHAPE_MISMATCH, "bucketize: boundaries must be 1-D, got 2 dims");
  CHECK_ERROR(om_searchsorted(b2, x, false) != NULL, OM_ERR_SHAPE_MISMATCH, "searchsorted: a sorted sequence of shape [1,4] needs values");
  om__release_all((om_tensor *[]){b, x, left, right, seq, v, nd, b2}, 8);
}

/* PyTorch's binary search, not a count: a sequence with NaNs (sorted last) or out of order gives
 * its answers (torch 1.13: [4, 4, 4, 4, 4] and [2, 4]), and int64 keeps every bit. */
TEST(searchsorted_is_pytorchs_binary_search) {
  om_tensor *s = TF(SHAPE(4), 1, 2, NAN, NAN), *v = TF(SHAPE(5), 0, 1.5, 2, 3, NAN), *r = om_searchsorted(s, v, false);
  CHECK_VALUES(r, SHAPE(5), 0, 4, 4, 4, 4, 4);
  om_tensor *u = TF(SHAPE(5), 3, 1, 2, 0, 5), *w = TF(SHAPE(2), 1.5, 4), *ru = om_searchsorted(u, w, false);
  CHECK_VALUES(ru, SHAPE(2), 0, 2, 4);
  om_tensor *big = TI(SHAPE(3), (int64_t)1 << 62, ((int64_t)1 << 62) + 1, ((int64_t)1 << 62) + 3);
  om_tensor *bv = TI(SHAPE(2), ((int64_t)1 << 62) + 1, ((int64_t)1 << 62) + 2), *rb = om_searchsorted(big, bv, false);
  CHECK_VALUES(rb, SHAPE(2), 0, 1, 2);
  om_tensor *t = TF(SHAPE(1), 1), *bools = om_gt(t, t);
  CHECK_ERROR(om_searchsorted(s, bools, false) != NULL, OM_ERR_DTYPE_MISMATCH, "searchsorted: takes float32 or int64, not bool");
  om__release_all((om_tensor *[]){s, v, r, u, w, ru, big, bv, rb, t, bools}, 11);
}

TEST(one_hot_checks_its_classes) {
  om_tensor *c = TI(SHAPE(3), 2, 0, 1), *h = om_one_hot(c, -1), *h4 = om_one_hot(c, 4);
  CHECK_VALUES(h, SHAPE(3, 3), 0, 0, 0, 1, 1, 0, 0, 0, 1, 0);
  CHECK(h4 && om_tensor_shape(h4)[1] == 4 && om_tensor_dtype(h4) == OM_INT64);
  om_tensor *neg = TI(SHAPE(2), 1, -1), *f = TF(SHAPE(1), 1), *none = om_zeros((int64_t[]){0}, 1, OM_INT64);
  CHECK_ERROR(om_one_hot(neg, 3) != NULL, OM_ERR_INDEX_OUT_OF_RANGE, "one_hot: class -1 is out of range for 3 classes (valid: 0 to 2)");
  CHECK_ERROR(om_one_hot(c, 2) != NULL, OM_ERR_INDEX_OUT_OF_RANGE, "one_hot: class 2 is out of range for 2 classes");
  CHECK_ERROR(om_one_hot(f, 2) != NULL, OM_ERR_DTYPE_MISMATCH, "one_hot: is only applicable to an index tensor (int64), not float32");
  CHECK_ERROR(om_one_hot(none, -1) != NULL, OM_ERR_INVALID_ARGUMENT, "one_hot: can not infer the number of classes from an empty tensor (num_classes -1)");
  CHECK_ERROR(om_one_hot(none, 0) != NULL, OM_ERR_INVALID_ARGUMENT, "one_hot: can not infer the number of classes from an empty tensor (num_classes 0)");
  om__release_all((om_tensor *[]){c, h, h4, neg, f, none}, 6);
}

TEST(repeat_interleave_by_a_count_and_by_counts) {
  om_tensor *x = TF(SHAPE(2, 2), 1, 2, 3, 4), *r = om_repeat_interleave(x, 2, -1, true), *flat = om_repeat_interleave(x, 2, 0, false);
  CHECK_VALUES(r, SHAPE(2, 4), 0, 1, 1, 2, 2, 3, 3, 4, 4);
  CHECK_VALUES(flat, SHAPE(8), 0, 1, 1, 2, 2, 3, 3, 4, 4);
  om_tensor *counts = TI(SHAPE(2), 0, 3), *rc = om_repeat_interleave_counts(x, counts, 0, true);
  CHECK_VALUES(rc, SHAPE(3, 2), 0, 3, 4, 3, 4, 3, 4);
  om_tensor *one = TI(SHAPE(1), 2), *r1 = om_repeat_interleave_counts(x, one, 1, true);
  CHECK_VALUES(r1, SHAPE(2, 4), 0, 1, 1, 2, 2, 3, 3, 4, 4);
  om_tensor *bad = TI(SHAPE(2), 1, -1), *three = TI(SHAPE(3), 1, 1, 1);
  CHECK_ERROR(om_repeat_interleave_counts(x, bad, 0, true) != NULL, OM_ERR_INVALID_ARGUMENT, "repeat_interleave: repeats can not be negative, got -1 (at 1)");
  CHECK_ERROR(om_repeat_interleave_counts(x, three, 0, true) != NULL, OM_ERR_SHAPE_MISMATCH, "got 3 counts for size 2");
  CHECK_ERROR(om_repeat_interleave(x, -2, 0, true) != NULL, OM_ERR_INVALID_ARGUMENT, "repeat_interleave: repeats can not be negative, got -2");
  CHECK_ERROR(om_repeat_interleave(x, INT64_MAX, 0, true) != NULL, OM_ERR_INVALID_ARGUMENT, "do not fit in 64 bits");
  om__release_all((om_tensor *[]){x, r, flat, counts, rc, one, r1, bad, three}, 9);
}

TEST(triangle_indices_row_by_row) {
  om_tensor *l = om_tril_indices(3, 2, 0), *u = om_triu_indices(2, 3, 1), *e = om_tril_indices(4, 3, -9);
  CHECK_VALUES(l, SHAPE(2, 5), 0, 0, 1, 1, 2, 2, 0, 0, 1, 0, 1);
  CHECK_VALUES(u, SHAPE(2, 3), 0, 0, 0, 1, 1, 2, 2);
  CHECK(e && om_tensor_shape(e)[1] == 0);
  om_tensor *far = om_triu_indices(3, 2, INT64_MIN), *wide = om_tril_indices(1, 5, INT64_MAX);
  CHECK(far && om_tensor_shape(far)[1] == 6 && wide && om_tensor_shape(wide)[1] == 5);
  CHECK_ERROR(om_tril_indices(-1, 2, 0) != NULL, OM_ERR_INVALID_ARGUMENT, "tril_indices: row (-1) and col (2) must be non-negative");
  CHECK_ERROR(om_triu_indices(3, (int64_t)1 << 31, 0) != NULL, OM_ERR_INVALID_ARGUMENT, "must be below 2^31");
  CHECK_ERROR(om_tril_indices(((int64_t)1 << 31) - 1, ((int64_t)1 << 31) - 1, 0) != NULL, OM_ERR_OUT_OF_MEMORY, "do not fit in memory");
  om__release_all((om_tensor *[]){l, u, e, far, wide}, 5);
}

TEST(pixel_shuffles_are_inverse_permutations) {
  om_tensor *x = om_arange(0, 2 * 8 * 2 * 3, 1, OM_FLOAT32), *x5 = om_reshape(x, (int64_t[]){1, 2, 8, 2, 3}, 5);
  om_tensor *up = om_pixel_shuffle(x5, 2), *back = om_pixel_unshuffle(up, 2);
  CHECK(up && om_tensor_ndim(up) == 5 && om_tensor_shape(up)[2] == 2 && om_tensor_shape(up)[3] == 4 && om_tensor_shape(up)[4] == 6);
  CHECK(at(up, 1) == 6 && at(up, 6) == 12); /* out[c=0][0][1] = x[c=1][0][0]; out[0][1][0] = x[c=2][0][0] */
  for (int64_t k = 0; back && k < om_tensor_numel(x); k++)
    if (at(back, k) != k) FAILED("unshuffle(shuffle(x))[%lld] = %g", (long long)k, at(back, k));
  om_tensor *odd = om_zeros((int64_t[]){1, 3, 4, 4}, 4, OM_FLOAT32), *flat = om_zeros((int64_t[]){4, 4}, 2, OM_FLOAT32);
  CHECK_ERROR(om_pixel_shuffle(odd, 2) != NULL, OM_ERR_SHAPE_MISMATCH, "input.size(-3)=3 is not divisible by 2^2");
  CHECK_ERROR(om_pixel_unshuffle(odd, 3) != NULL, OM_ERR_SHAPE_MISMATCH, "pixel_unshuffle expects height to be divisible by downscale_factor, but input.size(-2)=4 is not divisible by 3");
  CHECK_ERROR(om_pixel_shuffle(flat, 2) != NULL, OM_ERR_SHAPE_MISMATCH, "pixel_shuffle expects input to have at least 3 dimensions, but got input with 2 dimension(s)");
  CHECK_ERROR(om_pixel_shuffle(odd, 0) != NULL, OM_ERR_INVALID_ARGUMENT, "pixel_shuffle expects a positive upscale_factor, but got 0");
  CHECK_ERROR(om_pixel_shuffle(odd, INT64_MAX) != NULL, OM_ERR_SHAPE_MISMATCH, "is not divisible by");
  CHECK_ERROR(om_pixel_unshuffle(odd, (int64_t)1 << 40) != NULL, OM_ERR_SHAPE_MISMATCH, "pixel_unshuffle expects height");
  om__release_all((om_tensor *[]){x, x5, up, back, odd, flat}, 6);
}

/* cummax and cummin (src/ops/misc.c): ties move to the later index, a NaN stays from where it
 * appears (at the last NaN's index), int64 and bool compare as integers, a 0-d input is index 0. */
TEST(running_extremes_follow_pytorchs_rule) {
  om_tensor *x = TF(SHAPE(2, 5), 1, 3, 3, NAN, 4, -1, -1, -0.0, 0, -2), *idx = NULL;
  om_tensor *v = om_cummax(x, 1, &idx);
  CHECK_VALUES(idx, SHAPE(2, 5), 0, 0, 1, 2, 3, 3, 0, 1, 2, 3, 3);
  CHECK(v && at(v, 2) == 3 && isnan(at(v, 3)) && isnan(at(v, 4)) && at(v, 8) == 0 && !signbit(at(v, 8)));
  om__release_all((om_tensor *[]){v, idx}, 2);
  v = om_cummin(x, -1, &idx);
  CHECK_VALUES(idx, SHAPE(2, 5), 0, 0, 0, 0, 3, 3, 0, 1, 1, 1, 4);
  CHECK(v && at(v, 9) == -2 && at(v, 6) == -1);
  om__release_all((om_tensor *[]){v, idx}, 2);
  om_tensor *big = TI(SHAPE(3), ((int64_t)1 << 62) + 1, (int64_t)1 << 62, ((int64_t)1 << 62) + 1);
  v = om_cummin(big, 0, &idx); /* every bit counts */
  CHECK_VALUES(idx, SHAPE(3), 0, 0, 1, 1);
  om__release_all((om_tensor *[]){v, idx}, 2);
  om_tensor *f = TF(SHAPE(4), 0, 1, 0, 1), *b = om_cast(f, OM_BOOL);
  v = om_cummax(b, 0, &idx);
  CHECK(v && om_tensor_dtype(v) == OM_BOOL && at(v, 0) == 0 && at(v, 2) == 1);
  CHECK_VALUES(idx, SHAPE(4), 0, 0, 1, 1, 3);
  om__release_all((om_tensor *[]){v, idx}, 2);
  om_tensor *scalar = om_scalar(3, OM_FLOAT32);
  v = om_cummax(scalar, -1, &idx);
  CHECK(v && om_tensor_ndim(v) == 0 && at(v, 0) == 3 && at(idx, 0) == 0);
  CHECK_ERROR(om_cummax(x, 2, NULL) != NULL, OM_ERR_INDEX_OUT_OF_RANGE, "cummax: dim 2 is out of range");
  CHECK_ERROR(om_cummin(NULL, 0, NULL) != NULL, OM_ERR_INVALID_ARGUMENT, "cummin");
  om__release_all((om_tensor *[]){v, idx, x, big, f, b, scalar}, 7);
}

int main(void) {
  RUN(topk_orders_ties_nan_and_both_ends);
  RUN(sort_of_bool_puts_false_first_in_index_order);
  RUN(searchsorted_and_bucketize_place_values);
  RUN(searchsorted_is_pytorchs_binary_search);
  RUN(one_hot_checks_its_classes);
  RUN(repeat_interleave_by_a_count_and_by_counts);
  RUN(triangle_indices_row_by_row);
  RUN(pixel_shuffles_are_inverse_permutations);
  RUN(running_extremes_follow_pytorchs_rule);
  TEST_MAIN_END();
}
