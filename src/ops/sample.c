/* The op table's sample inputs: what the table-driven tests (tests/c/test_ops.c, and through
 * omw_op_sample the JS trace oracle) feed each op. One definition, so C and JS run the same
 * values: input i of op `op` is uniform from seed op*16 + i + 1, mapped to [lo, hi] and cast to
 * the input's dtype; a bool input is that uniform > 0.5.
 *
 * Empty variants (a dimension of the same tests): variant k >= 1 of an op's sample sets some
 * axes of its sample shapes to one size (0 for the variant itself; tests/c/test_ops.c also makes
 * its twin at a positive size), chosen by one rule over the test settings, so every op meets
 * empty tensors with no list to keep:
 *   - first every axis alone, in order (input 0's axes, then input 1's, ...): a batch of 0, an
 *     empty index, an empty reduced axis;
 *   - then every size the sample uses on more than one axis, all those axes at once: the
 *     settings give axes that must agree one size (a matmul's inner size in both operands, a
 *     broadcast pair, the channels of a weight and its bias), so they empty together.
 * An attribute the settings mark as a size (om_op_test.size_attrs: an expand's target) goes with
 * the axes of its size. A variant the op refuses is fine when its twin (a positive size) is
 * refused too: the shapes do not fit whatever the size; one refused only at size 0 is an op
 * refusing emptiness itself, which its settings must declare (om_op_test.empty_refusal;
 * tests/c/test_ops.c checks both ways). */
#include <string.h>

#include "internal.h"

/* The axes variant k (>= 1) sets: marks them in set and returns true, or false past the last. */
static bool variant_axes(const om_op_test *t, int k, bool set[OM_TEST_MAX_INPUTS][OM_TEST_MAX_DIMS]) {
  memset(set, 0, sizeof(bool) * OM_TEST_MAX_INPUTS * OM_TEST_MAX_DIMS);
  int n = 0; /* variants so far */
  for (int i = 0; i < t->n_in; i++)
    for (int d = 0; d < t->ndims[i]; d++)
      if (++n == k) {
        set[i][d] = true;
        return true;
      }
  for (int i = 0; i < t->n_in; i++)
    for (int d = 0; d < t->ndims[i]; d++) {
      int64_t v = t->shapes[i][d];
      bool first = true, shared = false; /* the first axis of size v, and v on another axis */
      for (int j = 0; j < t->n_in; j++)
        for (int e = 0; e < t->ndims[j]; e++)
          if (t->shapes[j][e] == v && (j != i || e != d)) {
            shared = true;
            if (j < i || (j == i && e < d)) first = false;
          }
      if (!first || !shared || ++n != k) continue;
      for (int j = 0; j < t->n_in; j++)
        for (int e = 0; e < t->ndims[j]; e++) set[j][e] = t->shapes[j][e] == v;
      return true;
    }
  return false;
}

int om__op_sample_variant(om_op op, int variant, int64_t size, om_tensor **in, om_attrs *attrs) {
  if ((unsigned)op >= OM_OP_COUNT || !in || !attrs || variant < 0 || size < 0)
    return om__fail(OM_ERR_INVALID_ARGUMENT, "op_sample: unknown op %d, variant %d or size %lld", (int)op, variant, (long long)size), -1;
  const om_op_test *t = &om__ops[op]->test;
  bool set[OM_TEST_MAX_INPUTS][OM_TEST_MAX_DIMS];
  if (variant > 0 && !variant_axes(t, variant, set)) return 0;
  *attrs = t->attrs;
  for (int k = 0; variant > 0 && k < attrs->n_i; k++) {
    bool tied = false; /* a size attribute equal to the sample size of an axis the variant sets */
    for (int i = 0; i < t->n_in && (t->size_attrs >> k & 1u); i++)
      for (int d = 0; d < t->ndims[i]; d++) tied |= set[i][d] && t->shapes[i][d] == t->attrs.i[k];
    if (tied) attrs->i[k] = size;
  }
  for (int i = 0; i < t->n_in; i++) {
    int64_t shape[OM_TEST_MAX_DIMS];
    for (int d = 0; d < t->ndims[i]; d++) shape[d] = variant > 0 && set[i][d] ? size : t->shapes[i][d];
    om_tensor *u = om_rand(shape, t->ndims[i], (uint64_t)((int)op * 16 + i + 1), true);
    if (t->dtypes[i] == OM_BOOL) {
      om_tensor *half = om_scalar(0.5, OM_FLOAT32);
      in[i] = om_gt(u, half);
      om_tensor_release(half);
    } else {
      om_tensor *scaled = om_scale(u, t->hi - t->lo);
      om_tensor *shifted = om_add_scalar(scaled, t->lo);
      in[i] = om_cast(shifted, t->dtypes[i]);
      om_tensor_release(scaled);
      om_tensor_release(shifted);
    }
    om_tensor_release(u);
    if (!in[i]) {
      om__release_all(in, i);
      return -1;
    }
  }
  return t->n_in;
}

int om__op_sample(om_op op, om_tensor **in) {
  om_attrs a;
  return om__op_sample_variant(op, 0, 0, in, &a);
}
