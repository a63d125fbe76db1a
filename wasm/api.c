/* The flat C ABI the JS package calls (js/runtime.js and js/tensor.js). Every function is exported as _omw_*.
 * Arguments are i32 (pointers, ints, flags) and f64 (values, 64-bit sizes passed as doubles,
 * which hold every size a 4 GB heap can reach exactly); arrays (shapes, dims, tensor handles)
 * are passed through a buffer in wasm memory that the JS side owns. Tensor handles are
 * om_tensor pointers: a function that "returns a handle" returns a new reference (0 on error,
 * then omw_error_kind / omw_error_message tell why); handle arguments are borrowed.
 * This file adds no behaviour: each function forwards to the public C API (src/onemodel.h). */
#include <emscripten/emscripten.h>

#include "onemodel.h"

#define OMW EMSCRIPTEN_KEEPALIVE

/* ---- errors and tables ---- */
OMW int omw_error_kind(void) { return (int)om_last_error(); }
OMW const char *omw_error_message(void) { return om_last_error_message(); }
OMW void omw_clear_error(void) { om_clear_error(); }
OMW int omw_error_kind_count(void) { return OM_ERR_COUNT; }
OMW const char *omw_error_kind_name(int kind) { return om_error_kind_name(kind); }
OMW int omw_error_kind_is_trace(int kind) { return om_error_kind_is_trace(kind); }
OMW int omw_op_count(void) { return OM_OP_COUNT; }
OMW const char *omw_op_name(int op) { return om_op_name(op); }
OMW const char *omw_dtype_name(int dtype) { return om_dtype_name(dtype); }
OMW const char *omw_version(void) { return OM_VERSION; }

/* ---- lifetime and metadata ---- */
OMW void omw_release(om_tensor *t) { om_tensor_release(t); }
OMW om_tensor *omw_retain(om_tensor *t) { return om_tensor_retain(t); }
/** Writes [dtype, ndim, requires_grad, is_leaf, numel, version, shape...] as doubles to out (borrowed). */
OMW void omw_info(const om_tensor *t, double *out) {
  int nd = om_tensor_ndim(t);
  out[0] = om_tensor_dtype(t);
  out[1] = nd;
  out[2] = om_tensor_requires_grad(t);
  out[3] = om_tensor_is_leaf(t);
  out[4] = (double)om_tensor_numel(t);
  out[5] = (double)om_tensor_version(t);
  const int64_t *shape = om_tensor_shape(t);
  for (int d = 0; d < nd; d++) out[6 + d] = (double)shape[d];
}
OMW double omw_live_tensors(void) { return (double)om_live_tensors(); }
OMW double omw_live_bytes(void) { return (double)om_live_bytes(); }

/* ---- creation; shape is an int64 array of ndim entries ---- */
OMW om_tensor *omw_from_data(const void *data, const int64_t *shape, int ndim, int dtype) {
  return om_from_data(data, shape, ndim, (om_dtype)dtype);
}
OMW om_tensor *omw_full(const int64_t *shape, int ndim, int dtype, double value) {
  return om_full(shape, ndim, (om_dtype)dtype, value);
}
OMW om_tensor *omw_arange(double start, double end, double step, int dtype) {
  return om_arange(start, end, step, (om_dtype)dtype);
}
/** Uniform (normal == 0) or standard normal values; the seed arrives as two 32-bit halves. */
OMW om_tensor *omw_random(const int64_t *shape, int ndim, unsigned seed_lo, unsigned seed_hi,
                          int has_seed, int normal) {
  uint64_t seed = ((uint64_t)seed_hi << 32) | seed_lo;
  return normal ? om_randn(shape, ndim, seed, has_seed) : om_rand(shape, ndim, seed, has_seed);
}
OMW void omw_manual_seed(unsigned seed_lo, unsigned seed_hi) {
  om_manual_seed(((uint64_t)seed_hi << 32) | seed_lo);
}

/* ---- element access ---- */
OMW int omw_read(const om_tensor *t, void *dst) { return om_tensor_read(t, dst); }
OMW int omw_item(const om_tensor *t, double *out) { return om_tensor_item(t, out); }
OMW int omw_fill(om_tensor *t, double value) { return om_tensor_fill(t, value); }
OMW int omw_set(om_tensor *t, const int64_t *index, double value) { return om_tensor_set(t, index, value); }
OMW int omw_copy_from(om_tensor *dst, const om_tensor *src) { return om_tensor_copy_from(dst, src); }

/* ---- autograd ---- */
OMW int omw_set_requires_grad(om_tensor *t, int flag) { return om_tensor_set_requires_grad(t, flag); }
OMW om_tensor *omw_grad(const om_tensor *t) { return om_tensor_grad(t); }
OMW void omw_zero_grad(om_tensor *t) { om_tensor_zero_grad(t); }
OMW int omw_backward(om_tensor *root, const om_tensor *grad) { return om_backward(root, grad); }
OMW int omw_set_grad_enabled(int enabled) { return om_set_grad_enabled(enabled); }
OMW om_tensor *omw_detach(om_tensor *t) { return om_detach(t); }

/* ---- ops: the generic entry (by op-table index) and the composites ---- */
OMW int omw_apply(int op, om_tensor *const *in, int n_in, const int64_t *iattrs, int n_i,
                  const double *fattrs, int n_f, om_tensor **out, int max_out) {
  return om_apply((om_op)op, in, n_in, iattrs, n_i, fattrs, n_f, out, max_out);
}
OMW om_tensor *omw_reshape(om_tensor *a, const int64_t *shape, int ndim) { return om_reshape(a, shape, ndim); }
OMW om_tensor *omw_transpose(om_tensor *a, int d0, int d1) { return om_transpose(a, d0, d1); }
OMW om_tensor *omw_contiguous(om_tensor *a) { return om_contiguous(a); }
OMW om_tensor *omw_cast(om_tensor *a, int dtype) { return om_cast(a, (om_dtype)dtype); }
OMW om_tensor *omw_matmul(om_tensor *a, om_tensor *b) { return om_matmul(a, b); }
OMW om_tensor *omw_cat(om_tensor *const *ts, int n, int dim) { return om_cat(ts, n, dim); }
OMW om_tensor *omw_stack(om_tensor *const *ts, int n, int dim) { return om_stack(ts, n, dim); }
OMW int omw_split(om_tensor *a, double split_size, int dim, om_tensor **out, int max_out) {
  return om_split(a, (int64_t)split_size, dim, out, max_out);
}
OMW om_tensor *omw_argmax(om_tensor *a, int dim, int keepdim) { return om_argmax(a, dim, keepdim); }
OMW om_tensor *omw_argmin(om_tensor *a, int dim, int keepdim) { return om_argmin(a, dim, keepdim); }
