/* The op table's sample inputs: what the table-driven tests (tests/c/test_ops.c, and through
 * omw_op_sample the JS trace oracle) feed each op. One definition, so C and JS run the same
 * values: input i of op `op` is uniform from seed op*16 + i + 1, mapped to [lo, hi] and cast to
 * the input's dtype; a bool input is that uniform > 0.5. */
#include "internal.h"

int om__op_sample(om_op op, om_tensor **in) {
  if ((unsigned)op >= OM_OP_COUNT || !in) return om__fail(OM_ERR_INVALID_ARGUMENT, "op_sample: unknown op %d", (int)op), -1;
  const om_op_test *t = &om__ops[op]->test;
  for (int i = 0; i < t->n_in; i++) {
    om_tensor *u = om_rand(t->shapes[i], t->ndims[i], (uint64_t)((int)op * 16 + i + 1), true);
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
