/* The flat C ABI the JS package calls (js/runtime.js, whose omw object wraps each export for the rest of js/). Every function is exported as _omw_*.
 * Arguments are i32 (pointers, ints, flags) and f64 (values, 64-bit sizes passed as doubles,
 * which hold every size a 4 GB heap can reach exactly); arrays (shapes, dims, tensor handles)
 * are passed through a buffer in wasm memory that the JS side owns. Tensor handles are
 * om_tensor pointers: a function that "returns a handle" returns a new reference (0 on error,
 * then omw_error_kind / omw_error_message tell why); handle arguments are borrowed.
 * This file adds no behaviour: each function forwards to the public C API (src/onemodel.h), except
 * omw_op_sample / omw_op_sample_variant / omw_op_test_attrs, which expose the op table's test
 * settings (internal.h) so the JS oracle tests trace every op on the same sample calls as the C
 * tests, and omw_data, a tensor's storage address for om.safetensors' copies without a staging
 * buffer. Strings are UTF-8 in memory the JS side mallocs; returned strings are borrowed (copied
 * out by JS at once). */
#include <limits.h>
#include <emscripten/emscripten.h>

#include "internal.h" /* om__op_sample and the op table's test settings, for the oracle tests */
#include "onemodel.h"

#define OMW EMSCRIPTEN_KEEPALIVE

/* ---- errors and tables ---- */
OMW int omw_error_kind(void) { return (int)om_last_error(); }
OMW const char *omw_error_message(void) { return om_last_error_message(); }
OMW void omw_clear_error(void) { om_clear_error(); }
/** Sets the last error (a JS failure inside a callback, e.g. the model om_trace_run runs). */
OMW void omw_set_error(int kind, const char *message) { om_set_error((om_error_kind)kind, message); }
OMW int omw_error_kind_count(void) { return OM_ERR_COUNT; }
OMW const char *omw_error_kind_name(int kind) { return om_error_kind_name(kind); }
OMW int omw_error_kind_is_trace(int kind) { return om_error_kind_is_trace(kind); }
OMW int omw_op_count(void) { return OM_OP_COUNT; }
OMW const char *omw_op_name(int op) { return om_op_name(op); }
OMW const char *omw_dtype_name(int dtype) { return om_dtype_name(dtype); }
OMW const char *omw_version(void) { return OM_VERSION; }
OMW int omw_max_dims(void) { return OM_MAX_DIMS; }

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
OMW int omw_set_num_threads(int n) { return om_set_num_threads(n); }
OMW int omw_get_num_threads(void) { return om_get_num_threads(); }

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
/** steps arrives as a double (a JS number: an integer below 2^53, checked by the caller). */
OMW om_tensor *omw_linspace(double start, double end, double steps, int dtype) {
  return om_linspace(start, end, (int64_t)steps, (om_dtype)dtype);
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
/** The address of a contiguous tensor's first element (borrowed: valid while t lives), so JS can
 *  copy bytes between a file and a tensor's storage with no staging buffer (om.safetensors). Only
 *  for a tensor JS just made and no one else has seen (a write bumps no version counter) and
 *  refused while a trace records (the trace would hold what made the tensor, not the bytes
 *  written, and a read would bypass its DataDependent check): 0 with InvalidUsage then, and with
 *  InvalidArgument for a non-contiguous or empty tensor. */
OMW void *omw_data(const om_tensor *t) {
  if (om_trace_active())
    return om__fail(OM_ERR_TRACE_INVALID_USAGE, "data: tensor bytes cannot be read or written while a trace records"), NULL;
  if (!om_tensor_is_contiguous(t) || !om_tensor_numel(t))
    return om__fail(OM_ERR_INVALID_ARGUMENT, "data: the tensor is not contiguous or has no elements"), NULL;
  return (char *)t->storage->data + t->offset * (int64_t)om__dtype_size(t->dtype);
}
OMW int omw_item(const om_tensor *t, double *out) { return om_tensor_item(t, out); }
OMW int omw_fill(om_tensor *t, double value) { return om_tensor_fill(t, value); }
OMW int omw_set(om_tensor *t, const int64_t *index, double value) { return om_tensor_set(t, index, value); }
OMW int omw_copy_from(om_tensor *dst, const om_tensor *src) { return om_tensor_copy_from(dst, src); }

/* ---- autograd ---- */
OMW int omw_set_requires_grad(om_tensor *t, int flag) { return om_tensor_set_requires_grad(t, flag); }
/** 1 when t heads an autograd graph (requires grad and is not a leaf): what a dropped result
 *  holds besides its own bytes (js/runtime.js collectorPressure). No scratch buffer, unlike omw_info. */
OMW int omw_has_graph(const om_tensor *t) { return om_tensor_requires_grad(t) && !om_tensor_is_leaf(t); }
OMW om_tensor *omw_grad(const om_tensor *t) { return om_tensor_grad(t); }
OMW void omw_zero_grad(om_tensor *t) { om_tensor_zero_grad(t); }
OMW int omw_backward(om_tensor *root, const om_tensor *grad) { return om_backward(root, grad); }
OMW int omw_free_graph(om_tensor *t) { return om_tensor_free_graph(t); }
/** The previous setting (1/0), or -1 when the call failed (NoGradInTrace: turning grad off while a
 *  trace records; grad mode stays on and the trace has ended), with the error set. */
OMW int omw_set_grad_enabled(int enabled) {
  om_clear_error();
  bool prev = om_set_grad_enabled(enabled);
  return om_last_error() != OM_ERR_OK ? -1 : prev;
}
OMW om_tensor *omw_detach(om_tensor *t) { return om_detach(t); }

/* ---- ops: the generic entry (by op-table index) and the composites ---- */
/** om_apply, and each output's [dtype, ndim, shape...] packed as doubles in desc (room for
 *  2 + OM_MAX_DIMS per output slot): JS wraps the outputs with no further call per output. */
OMW int omw_apply(int op, om_tensor *const *in, int n_in, const int64_t *iattrs, int n_i,
                  const double *fattrs, int n_f, om_tensor **out, int max_out, double *desc) {
  int n = om_apply((om_op)op, in, n_in, iattrs, n_i, fattrs, n_f, out, max_out);
  for (int j = 0; j < n; j++) {
    int nd = om_tensor_ndim(out[j]);
    const int64_t *shape = om_tensor_shape(out[j]);
    *desc++ = om_tensor_dtype(out[j]);
    *desc++ = nd;
    for (int d = 0; d < nd; d++) *desc++ = (double)shape[d];
  }
  return n;
}
OMW om_tensor *omw_reshape(om_tensor *a, const int64_t *shape, int ndim) { return om_reshape(a, shape, ndim); }
OMW om_tensor *omw_transpose(om_tensor *a, int d0, int d1) { return om_transpose(a, d0, d1); }
OMW om_tensor *omw_contiguous(om_tensor *a) { return om_contiguous(a); }
OMW om_tensor *omw_cast(om_tensor *a, int dtype) { return om_cast(a, (om_dtype)dtype); }
OMW om_tensor *omw_matmul(om_tensor *a, om_tensor *b) { return om_matmul(a, b); }
OMW om_tensor *omw_cat(om_tensor *const *ts, int n, int dim) { return om_cat(ts, n, dim); }
/* A dim given as int64 (JS): one outside int stays out of range for every tensor. */
static int dim_of(int64_t d) { return d > INT_MAX ? INT_MAX : d < INT_MIN ? INT_MIN : (int)d; }
/** om_slice_scatter with at = {dim, start, end, step}; a new reference, NULL on error. */
OMW om_tensor *omw_slice_scatter(om_tensor *a, om_tensor *src, const int64_t *at) {
  return om_slice_scatter(a, src, dim_of(at[0]), at[1], at[2], at[3]);
}
/** om_select_scatter with at = {dim, index}; a new reference, NULL on error. */
OMW om_tensor *omw_select_scatter(om_tensor *a, om_tensor *src, const int64_t *at) {
  return om_select_scatter(a, src, dim_of(at[0]), at[1]);
}
/** om_roll; a new reference, NULL on error. */
OMW om_tensor *omw_roll(om_tensor *a, const int64_t *shifts, int n_shifts, const int64_t *dims, int n_dims) {
  return om_roll(a, shifts, n_shifts, dims, n_dims);
}
/** om_tile (tile nonzero) or om_repeat of the n sizes; a new reference, NULL on error. */
OMW om_tensor *omw_repeat(om_tensor *a, const int64_t *sizes, int n, int tile) { return tile ? om_tile(a, sizes, n) : om_repeat(a, sizes, n); }
OMW om_tensor *omw_stack(om_tensor *const *ts, int n, int dim) { return om_stack(ts, n, dim); }
OMW om_tensor *omw_index_put(om_tensor *a, om_tensor *const *indices, int n, om_tensor *values, int accumulate) {
  return om_index_put(a, indices, n, values, accumulate != 0);
}
OMW int omw_meshgrid(om_tensor *const *ts, int n, int xy, om_tensor **out) { return om_meshgrid(ts, n, xy != 0, out); }
OMW int omw_split(om_tensor *a, double split_size, int dim, om_tensor **out, int max_out) {
  return om_split(a, (int64_t)split_size, dim, out, max_out);
}
OMW int omw_split_sizes(om_tensor *a, const int64_t *sizes, int n, int dim, om_tensor **out) {
  return om_split_sizes(a, sizes, n, dim, out);
}
OMW int omw_chunk(om_tensor *a, double chunks, int dim, om_tensor **out, int max_out) {
  return om_chunk(a, (int64_t)chunks, dim, out, max_out);
}
/** om_lstm: writes output, h_n, c_n (new references) to out; returns 3, or -1 on error. */
OMW int omw_lstm(om_tensor *x, om_tensor *h0, om_tensor *c0, om_tensor *const *params, int n_params, int num_layers,
                 int bias, int batch_first, int bidirectional, om_tensor **out) {
  out[0] = om_lstm(x, h0, c0, params, n_params, num_layers, bias, batch_first, bidirectional, &out[1], &out[2]);
  return out[0] ? 3 : -1;
}
/** om_gru: writes output, h_n (new references) to out; returns 2, or -1 on error. */
OMW int omw_gru(om_tensor *x, om_tensor *h0, om_tensor *const *params, int n_params, int num_layers, int bias,
                int batch_first, int bidirectional, om_tensor **out) {
  out[0] = om_gru(x, h0, params, n_params, num_layers, bias, batch_first, bidirectional, &out[1]);
  return out[0] ? 2 : -1;
}
/** scaled_dot_product_attention; mask 0 for none, has_scale 0 for the default 1/sqrt(E). */
OMW om_tensor *omw_scaled_dot_product_attention(om_tensor *q, om_tensor *k, om_tensor *v, om_tensor *mask, int is_causal,
                                                double scale, int has_scale) {
  return om_scaled_dot_product_attention(q, k, v, mask, is_causal, has_scale ? &scale : NULL);
}
OMW om_tensor *omw_argmax(om_tensor *a, int dim, int keepdim) { return om_argmax(a, dim, keepdim); }
OMW om_tensor *omw_argmin(om_tensor *a, int dim, int keepdim) { return om_argmin(a, dim, keepdim); }
OMW om_tensor *omw_dropout(om_tensor *a, double p, int training) { return om_dropout(a, p, training != 0); }
/* sorting and searching (topk itself through omw_apply), one-hot, repeats, index pairs, pixel
 * shuffles; at: the int64 arguments in order, as the C functions take them */
/** om_sort: the values; the indices' handle to *indices. */
OMW om_tensor *omw_sort(om_tensor *a, int dim, int descending, om_tensor **indices) { return om_sort(a, dim, descending != 0, indices); }
/** om_searchsorted, or om_bucketize(values, sorted, right) when bucketize is not 0. */
OMW om_tensor *omw_searchsorted(om_tensor *sorted, om_tensor *values, int right, int bucketize) {
  return bucketize ? om_bucketize(values, sorted, right != 0) : om_searchsorted(sorted, values, right != 0);
}
OMW om_tensor *omw_one_hot(om_tensor *classes, const int64_t *at) { return om_one_hot(classes, at[0]); }
/** at: repeats, dim, has_dim; counts (a tensor of repeats) instead of at[0] when not 0. */
OMW om_tensor *omw_repeat_interleave(om_tensor *a, om_tensor *counts, const int64_t *at) {
  return counts ? om_repeat_interleave_counts(a, counts, dim_of(at[1]), at[2] != 0)
                : om_repeat_interleave(a, at[0], dim_of(at[1]), at[2] != 0);
}
/** at: row, col, offset. */
OMW om_tensor *omw_tri_indices(const int64_t *at, int upper) {
  return upper ? om_triu_indices(at[0], at[1], at[2]) : om_tril_indices(at[0], at[1], at[2]);
}
OMW om_tensor *omw_pixel_shuffle(om_tensor *a, const int64_t *r, int up) { return up ? om_pixel_shuffle(a, *r) : om_pixel_unshuffle(a, *r); }

/* ---- the op table's sample calls (the JS oracle traces every op on them) ---- */
/** Writes the op's test.n_in sample inputs (new references) to out; returns how many, -1 on error. */
OMW int omw_op_sample(int op, om_tensor **out) { return om__op_sample((om_op)op, out); }
/** Empty variant `variant` (>= 1) of the op's sample with its emptied axes at size (0, or its
 *  twin's): writes the inputs (new references) to out and the variant's integer attributes to
 *  iattrs (the sample's count, OM_MAX_IATTRS room); returns how many inputs, 0 past the last
 *  variant, -1 on error (src/ops/sample.c). */
OMW int omw_op_sample_variant(int op, int variant, int64_t size, om_tensor **out, int64_t *iattrs) {
  om_attrs a;
  int n = om__op_sample_variant((om_op)op, variant, size, out, &a);
  for (int k = 0; n > 0 && k < a.n_i; k++) iattrs[k] = a.i[k];
  return n;
}
/** The op's sample-call attributes: writes [n_i, n_f, n_out] to counts, the integer attributes to
 *  iattrs (OM_MAX_IATTRS room) and the float ones to fattrs (OM_MAX_FATTRS room); 0 for a bad op. */
OMW int omw_op_test_attrs(int op, int64_t *iattrs, double *fattrs, int *counts) {
  if (op < 0 || op >= OM_OP_COUNT) return 0;
  const om_op_def *def = om__ops[op];
  const om_attrs *a = &def->test.attrs;
  counts[0] = a->n_i;
  counts[1] = a->n_f;
  counts[2] = def->n_out;
  for (int k = 0; k < a->n_i; k++) iattrs[k] = a->i[k];
  for (int k = 0; k < a->n_f; k++) fattrs[k] = a->f[k];
  return 1;
}

/* ---- tracing to ONNX. Strings (names, axis names) are NUL-terminated UTF-8 in memory the JS
 * side mallocs and frees after the call; string arrays are arrays of char * (0 for none). ---- */
OMW int omw_trace_begin(void) { return om_trace_begin(); }
OMW int omw_trace_active(void) { return om_trace_active(); }
OMW void omw_trace_abort(void) { om_trace_abort(); }
/** Returns a handle to the traced tensor. axis_names: 0, or ndim entries (0 = fixed axis). */
OMW om_tensor *omw_trace_input(const char *name, om_tensor *example, const char *const *axis_names) {
  return om_trace_input(name, example, axis_names);
}
OMW int omw_trace_parameter(const char *name, om_tensor *t) { return om_trace_parameter(name, t); }
/** Declares a symbol's sizes (sizes as doubles: exact for every size a 4 GB heap can hold). */
OMW int omw_trace_dim(const char *name, double multiple_of, double min, double max) {
  return om_trace_dim(name, (int64_t)multiple_of, (int64_t)min, (int64_t)max);
}

/* Runs the model registered under ctx on one run's inputs (borrowed handles): Module.omTraceRun(
 * ctx, inputs, n, outputs, max) writes up to max output handles (new references) and returns
 * their count, or -1 with the error set (the JS exception is kept by the JS side). */
EM_JS(int, omw_js_trace_fn, (int ctx, om_tensor *const *inputs, int n, om_tensor **out, int max), {
  return Module['omTraceRun'](ctx, inputs, n, out, max);
});
static int trace_fn(void *ctx, om_tensor *const *in, int n, om_tensor **out, int max) {
  return omw_js_trace_fn((int)(intptr_t)ctx, in, n, out, max);
}
/** om_trace_run with the JS model ctx: the recorded run's outputs (new references) go to out. */
OMW int omw_trace_run(int ctx, om_tensor **out, int max) { return om_trace_run(trace_fn, (void *)(intptr_t)ctx, out, max); }
/** Symbol i of m: writes [multiple, min, max, checked min, checked max] as doubles (max -1: no
 *  bound) to out, its name and why it was narrowed (0: declared) as borrowed strings to strs; 0
 *  on error. */
OMW int omw_traced_symbol(const om_traced_model *m, int i, double *out, const char **strs) {
  int64_t mult, min, max, checked_min, checked_max;
  if (!om_traced_symbol(m, i, &strs[0], &mult, &min, &max, &strs[1]) ||
      !om_traced_symbol_checked(m, i, &checked_min, &checked_max))
    return 0;
  out[0] = (double)mult;
  out[1] = (double)min;
  out[2] = max == INT64_MAX ? -1 : (double)max;
  out[3] = (double)checked_min;
  out[4] = (double)checked_max;
  return 1;
}
OMW int omw_traced_symbol_count(const om_traced_model *m) { return om_traced_symbol_count(m); }
/** The pieces of symbol i's range where m is an If on its size: up to max (min, max) pairs as
 *  doubles to out (max -1: no bound); their count, 0 when none, -1 on error. */
OMW int omw_traced_symbol_branches(const om_traced_model *m, int i, double *out, int max) {
  int64_t ranges[2 * 16];
  int n = om_traced_symbol_branches(m, i, ranges, max < 16 ? max : 16);
  for (int q = 0; q < n && q < max && q < 16; q++) {
    out[2 * q] = (double)ranges[2 * q];
    out[2 * q + 1] = ranges[2 * q + 1] == INT64_MAX ? -1 : (double)ranges[2 * q + 1];
  }
  return n;
}
/** outputs: n handles (borrowed), names: n strings. Returns the model (owned by JS: free it with
 *  omw_traced_release), 0 on error. */
OMW om_traced_model *omw_trace_finish(om_tensor *const *outputs, const char *const *names, int n) {
  return om_trace_finish(outputs, names, n);
}
OMW void omw_traced_release(om_traced_model *m) { om_traced_release(m); }
/** The exact .onnx size as a double (0 on error). */
OMW double omw_traced_onnx_size(const om_traced_model *m) { return (double)om_traced_onnx_size(m); }

/* Hands one chunk (borrowed, valid during the call) to the JS sink registered under ctx:
 * Module.omSink(ctx, ptr, len) returns 1 to go on, 0 to stop. */
EM_JS(int, omw_js_sink, (int ctx, const void *bytes, size_t n), {
  return Module['omSink'](ctx, bytes, n);
});
static bool sink(void *ctx, const void *bytes, size_t n) { return omw_js_sink((int)(intptr_t)ctx, bytes, n) != 0; }
/** Streams the model's .onnx bytes to the JS sink ctx (an id JS chose); 0 on error or when the
 *  sink stopped. */
OMW int omw_traced_write(const om_traced_model *m, int ctx) {
  return om_traced_write_onnx(m, sink, (void *)(intptr_t)ctx);
}
/** The exact size of the library format v1 bytes of m as a double (0 on error). */
OMW double omw_traced_save_size(const om_traced_model *m) { return (double)om_traced_save_size(m); }
/** Streams m's library format v1 bytes to the JS sink ctx; 0 on error or when the sink stopped. */
OMW int omw_traced_save(const om_traced_model *m, int ctx) { return om_traced_save(m, sink, (void *)(intptr_t)ctx); }
OMW int omw_traced_count(const om_traced_model *m, int part) { return om_traced_count(m, (om_traced_part)part); }
/** Borrowed string, valid while m lives (0 on error). */
OMW const char *omw_traced_name(const om_traced_model *m, int part, int i) {
  return om_traced_name(m, (om_traced_part)part, i);
}
/** Writes [dtype, ndim, shape...] as doubles to out and each axis's symbol (borrowed, 0 when
 *  fixed) to dim_params (OM_MAX_DIMS room); 0 on error. */
OMW int omw_traced_info(const om_traced_model *m, int part, int i, double *out, const char **dim_params) {
  om_dtype dtype;
  int ndim;
  const int64_t *shape;
  const char *const *params;
  if (!om_traced_info(m, (om_traced_part)part, i, &dtype, &ndim, &shape, &params)) return 0;
  out[0] = dtype;
  out[1] = ndim;
  for (int d = 0; d < ndim; d++) {
    out[2 + d] = (double)shape[d];
    dim_params[d] = params ? params[d] : NULL;
  }
  return 1;
}
/** Node i's input (outputs 0) or output (outputs 1) value names, up to max borrowed strings in
 *  names; returns how many there are, -1 on error. */
OMW int omw_traced_node_values(const om_traced_model *m, int i, int outputs, const char **names, int max) {
  return om_traced_node_values(m, i, outputs, names, max);
}
OMW int omw_traced_aliases(const om_traced_model *m, int i, const char **names, int max) { return om_traced_aliases(m, i, names, max); }

/* ---- sessions (src/runtime/session.c) ---- */
/** A session on traced model m (borrowed) in mode (0 fast, 1 exact): a handle JS frees with
 *  omw_session_release, 0 on error. */
OMW om_session *omw_session_create(const om_traced_model *m, int mode) {
  return om_session_create(m, &(om_session_options){.mode = (om_session_mode)mode});
}
/** The same on n bytes at bytes (borrowed): ONNX or the library format v1. */
OMW om_session *omw_session_open(const void *bytes, double n, int mode) {
  return om_session_open(bytes, (size_t)n, &(om_session_options){.mode = (om_session_mode)mode});
}
OMW void omw_session_release(om_session *s) { om_session_release(s); }
/** n graph inputs' counts (-1 a tensor, k a sequence of k, -2 an optional holding nothing, -3
 *  strings[k]) over the tensor handles in and the strings handles (borrowed); writes up to max
 *  output handles (new references) to out, each output's count to out_counts and its strings
 *  handle (a new reference, or 0) to out_strings; returns how many tensors the outputs hold (more
 *  than max: nothing ran, call again with room), -1 on error. */
OMW int omw_session_run(om_session *s, om_tensor *const *in, const int *counts, om_strings *const *strings, int n, om_tensor **out, int max,
                        int *out_counts, om_strings **out_strings) {
  return om_session_run_values(s, in, counts, strings, n, out, max, out_counts, out_strings);
}

/* ---- tensors of strings (src/runtime/strings.c) ---- */
/** A tensor of strings of shape (ndim doubles at shape) whose elements' bytes lie one after
 *  another at bytes, lens (u32 each) long: a handle JS frees with omw_strings_release, 0 on error. */
OMW om_strings *omw_strings_new(int ndim, const double *shape, const char *bytes, const uint32_t *lens, double total) {
  int64_t dims[OM_MAX_DIMS];
  for (int d = 0; d < ndim && d < OM_MAX_DIMS; d++) dims[d] = (int64_t)shape[d];
  om_strings *t = om__strings_alloc(ndim, dims, (uint64_t)total, "strings");
  for (int64_t k = 0, at = 0; t && k < t->n; at += lens[k++]) {
    if (lens[k] > total - (double)at) /* more bytes than were given: the caller's lengths are wrong */
      return om_strings_release(t), om__fail(OM_ERR_INVALID_ARGUMENT, "strings: element %lld runs past the %.0f bytes given", (long long)k, total), NULL;
    om__strings_put(t, k, bytes + at, lens[k]);
  }
  return t;
}
OMW void omw_strings_release(om_strings *t) { om_strings_release(t); }
/** Writes [ndim, count, total bytes, shape...] as doubles to out (3 + OM_MAX_DIMS room). */
OMW void omw_strings_info(const om_strings *t, double *out) {
  out[0] = t->ndim, out[1] = (double)t->n, out[2] = t->n ? (double)(t->s[t->n - 1] + t->len[t->n - 1] - t->bytes) : 0;
  for (int d = 0; d < t->ndim; d++) out[3 + d] = (double)t->shape[d];
}
/** The elements' bytes, each NUL-terminated, one after another (borrowed from t), and each one's length (u32) into lens. */
OMW const char *omw_strings_bytes(const om_strings *t, uint32_t *lens) {
  for (int64_t k = 0; k < t->n; k++) lens[k] = (uint32_t)t->len[k];
  return t->bytes;
}
OMW int omw_session_count(const om_session *s, int outputs) { return om_session_count(s, outputs); }
/** Borrowed string, valid while s lives (0 on error). */
OMW const char *omw_session_name(const om_session *s, int outputs, int i) { return om_session_name(s, outputs, i); }
/** Input i: writes [dtype, ndim, shape... (-1 where named)] as doubles to out and each axis's
 *  name (borrowed, 0 when fixed) to dim_params (OM_MAX_DIMS room); 0 on error. */
OMW int omw_session_input_info(const om_session *s, int i, double *out, const char **dim_params) {
  om_dtype dtype;
  int ndim;
  int64_t shape[OM_MAX_DIMS];
  if (!om_session_input_info(s, i, &dtype, &ndim, shape, dim_params)) return 0;
  out[0] = dtype;
  out[1] = ndim;
  for (int d = 0; d < ndim; d++) out[2 + d] = (double)shape[d];
  return 1;
}
/** Whether input i has a default (1), not (0), -1 on error. */
OMW int omw_session_input_default(const om_session *s, int i) { return om_session_input_default(s, i); }
/** Input (outputs 0) or output i's ONNX element type number, -1 on error. */
OMW int omw_session_elem_type(const om_session *s, int outputs, int i) { return om_session_elem_type(s, outputs, i); }
/** om_session_plan with om_session_run_values's inputs: 1 planned, 0 on error. */
OMW int omw_session_plan(om_session *s, om_tensor *const *in, const int *counts, om_strings *const *strings, int n) {
  return om_session_plan(s, in, counts, strings, n);
}
OMW int omw_session_value_count(const om_session *s) { return om_session_value_count(s); }
/** Value i of the last plan: writes [ONNX element type, ndim (-1: not one tensor), shape...] as
 *  doubles to out (2 + OM_MAX_DIMS room); returns its name (borrowed), 0 on error. */
OMW const char *omw_session_value_info(const om_session *s, int i, double *out) {
  const char *name = NULL;
  int type, ndim;
  int64_t shape[OM_MAX_DIMS];
  if (!om_session_value_info(s, i, &name, &type, &ndim, shape)) return NULL;
  out[0] = type;
  out[1] = ndim;
  for (int d = 0; d < ndim; d++) out[2 + d] = (double)shape[d];
  return name;
}
OMW double omw_session_plan_bytes(const om_session *s) { return (double)om_session_plan_bytes(s); }
OMW int omw_session_plan_kernels(const om_session *s, const char **names, int max) { return om_session_plan_kernels(s, names, max); }
