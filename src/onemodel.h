/* onemodel: a C11 tensor library with autograd (and, as it lands, a tracer to ONNX).
 *
 * A worked example: fit y = 2x + 1 with one weight and one bias by gradient descent.
 *
 *     int64_t n[2] = {64, 1}, one[2] = {1, 1};
 *     om_tensor *x = om_randn(n, 2, 1, true);                 // seed 1; every call returns a new reference
 *     om_tensor *x2 = om_scale(x, 2.0), *y = om_add_scalar(x2, 1.0);
 *     om_tensor *w = om_zeros(one, 2, OM_FLOAT32), *b = om_zeros(one, 2, OM_FLOAT32);
 *     om_tensor_set_requires_grad(w, true);
 *     om_tensor_set_requires_grad(b, true);
 *     for (int step = 0; step < 100; step++) {
 *       om_tensor *xw = om_matmul(x, w), *pred = om_add(xw, b), *d = om_sub(pred, y);
 *       om_tensor *sq = om_mul(d, d), *loss = om_mean(sq, NULL, 0, false);
 *       if (!loss || !om_backward(loss, NULL)) {              // one check covers the whole chain
 *         fprintf(stderr, "%s\n", om_last_error_message());  // e.g. "matmul: shapes [64,1] and [2,1] ..."
 *         break;
 *       }
 *       bool prev = om_set_grad_enabled(false);               // the update is not recorded
 *       for (om_tensor **p = (om_tensor *[]){w, b, NULL}; *p; p++) {
 *         om_tensor *g = om_tensor_grad(*p), *step_ = om_scale(g, 0.1), *next = om_sub(*p, step_);
 *         om_tensor_copy_from(*p, next);                      // in place: bumps the version
 *         om_tensor_zero_grad(*p);
 *         om_tensor_release(g); om_tensor_release(step_); om_tensor_release(next);
 *       }
 *       om_set_grad_enabled(prev);
 *       om_tensor_release(xw); om_tensor_release(pred); om_tensor_release(d);
 *       om_tensor_release(sq); om_tensor_release(loss);
 *     }
 *     // w is now ~2 and b ~1; release x, x2, y, w, b.
 *
 * Conventions, for every function below:
 * - Tensor arguments are borrowed; a returned om_tensor * is a new reference that the caller
 *   releases with om_tensor_release(). Views share storage with their input.
 * - Errors never abort: a failing call returns NULL (or false / -1) and sets the calling
 *   thread's last error (om_last_error(), om_last_error_message()). A call given a NULL
 *   tensor returns NULL and keeps the first error, so a chain of calls is checked once.
 *   A successful call does not clear the last error: read it only after a failure, or
 *   clear it with om_clear_error(). Metadata accessors given NULL return 0 (or NULL).
 * - Dims may be negative (counted from the end), as in PyTorch. Shapes are int64_t arrays.
 * - State (grad mode, last error, the default generator, live-memory counters) is per thread.
 */
#ifndef ONEMODEL_H
#define ONEMODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define OM_VERSION "0.1.0"
#define OM_MAX_DIMS 8

/* OM_FLOAT64 holds the graph runtime's DOUBLE values (docs/graph-runtime.md, "Element types"):
 * the ops listed there compute it in double; others refuse it (DtypeMismatch). */
typedef enum om_dtype { OM_FLOAT32 = 0, OM_INT64 = 1, OM_BOOL = 2, OM_FLOAT64 = 3 } om_dtype;

typedef enum om_error_kind {
#define OM_ERROR(name, js, doc) OM_ERR_##name,
#include "core/errors.def"
#undef OM_ERROR
  OM_ERR_COUNT
} om_error_kind;

typedef enum om_op {
#define OM_OP(name, family) OM_OP_##name,
#include "ops/ops.def"
#undef OM_OP
  OM_OP_COUNT
} om_op;

typedef struct om_tensor om_tensor;

/* ---- errors (per thread) ---- */
/** The kind of the calling thread's last error (OM_ERR_OK when none). */
om_error_kind om_last_error(void);
/** The last error's message, naming the op and the values; borrowed, valid until the next error. */
const char *om_last_error_message(void);
/** Forget the calling thread's last error. */
void om_clear_error(void);
/** Sets the calling thread's last error to kind with message (borrowed, copied): for a failure
 *  of the caller's own in a callback such as om_trace_run's function. */
void om_set_error(om_error_kind kind, const char *message);
/** The kind's name as the JS package shows it ("ShapeMismatch"); static string, NULL when out of range. */
const char *om_error_kind_name(int kind);
/** True for the tracer's kinds (UnsupportedOperation ... InvalidUsage), which JS raises as om.TraceError. */
bool om_error_kind_is_trace(int kind);

/* ---- threads (process-wide) ---- */
/** Sets how many threads the kernels use, the caller included (capped at 4; 1 in the
 *  single-thread WASM build); returns the count now in effect, or 0 with InvalidArgument for
 *  n < 1. Results have the same bits for any count. */
int om_set_num_threads(int n);
/** How many threads the kernels use; until om_set_num_threads, the cores available capped at 4. */
int om_get_num_threads(void);

/* ---- dtypes and the op table ---- */
/** The dtype's name ("float32", "int64", "bool", "float64"); static string, NULL when out of range. */
const char *om_dtype_name(int dtype);
/** Bytes per element of the dtype (0 when out of range). */
size_t om_dtype_size(int dtype);
/** The op's name from the op table ("add"); static string, NULL when out of range. */
const char *om_op_name(int op);

/* ---- tensor lifetime and metadata ---- */
/** Adds a reference to t and returns t (NULL stays NULL). */
om_tensor *om_tensor_retain(om_tensor *t);
/** Drops a reference; frees the tensor (and its storage, when no view remains) at zero. NULL is ignored. */
void om_tensor_release(om_tensor *t);
/** The tensor's dtype (borrowed t). */
om_dtype om_tensor_dtype(const om_tensor *t);
/** Number of dims (borrowed t). */
int om_tensor_ndim(const om_tensor *t);
/** Pointer to the shape array of ndim entries; borrowed, valid while t lives. */
const int64_t *om_tensor_shape(const om_tensor *t);
/** Pointer to the strides (in elements); borrowed, valid while t lives. */
const int64_t *om_tensor_strides(const om_tensor *t);
/** Number of elements (borrowed t). */
int64_t om_tensor_numel(const om_tensor *t);
/** True when the elements lie densely in row-major order (borrowed t). */
bool om_tensor_is_contiguous(const om_tensor *t);
/** The version counter of t's storage; every in-place change bumps it (borrowed t). */
uint64_t om_tensor_version(const om_tensor *t);
/** True when t and u share one storage (borrowed). */
bool om_tensor_shares_storage(const om_tensor *t, const om_tensor *u);

/* ---- creation (all return a new reference) ---- */
/** A tensor of the given shape filled with zeros. */
om_tensor *om_zeros(const int64_t *shape, int ndim, om_dtype dtype);
/** A tensor of the given shape filled with ones. */
om_tensor *om_ones(const int64_t *shape, int ndim, om_dtype dtype);
/** A tensor filled with value (converted to dtype). */
om_tensor *om_full(const int64_t *shape, int ndim, om_dtype dtype, double value);
/** A 0-d tensor holding value. */
om_tensor *om_scalar(double value, om_dtype dtype);
/** A contiguous copy of ndim/shape elements read from data (bool as one byte each); data is borrowed. */
om_tensor *om_from_data(const void *data, const int64_t *shape, int ndim, om_dtype dtype);
/** start, start+step, ... below end (above end for a negative step), 1-D. */
om_tensor *om_arange(double start, double end, double step, om_dtype dtype);
/** torch.linspace: steps values from start to end, 1-D, in PyTorch's float32 arithmetic (start
 *  and end rounded to float32, step = (end - start) / (steps - 1) rounded to float32; the first
 *  steps / 2 values start + step * i, the others end - step * (steps - 1 - i), each rounded once
 *  from double), then converted to dtype. Returns a new reference. */
om_tensor *om_linspace(double start, double end, int64_t steps, om_dtype dtype);
/** Uniform floats in [0, 1) from a counter-based generator: same numbers natively and in WASM.
 *  With has_seed, element i depends only on (seed, i); without, the thread's default generator
 *  (om_manual_seed) is used and advanced. */
om_tensor *om_rand(const int64_t *shape, int ndim, uint64_t seed, bool has_seed);
/** Standard normal floats, generated like om_rand (Box-Muller on the same counter stream). */
om_tensor *om_randn(const int64_t *shape, int ndim, uint64_t seed, bool has_seed);
/** Resets the calling thread's default generator to seed, offset 0. */
void om_manual_seed(uint64_t seed);

/* ---- reading and writing elements ---- */
/** Copies t's logical elements, row-major, into dst (numel * dtype size bytes); false on error. */
bool om_tensor_read(const om_tensor *t, void *dst);
/** Reads one element at the given index as a double; false on error. */
bool om_tensor_get(const om_tensor *t, const int64_t *index, double *out);
/** The single element of a one-element tensor as a double; false on error. */
bool om_tensor_item(const om_tensor *t, double *out);
/** In place: every element of t (borrowed) becomes value; bumps the version. While a trace
 *  records, these writes are recorded (docs/tracing.md, "Writes into tensors"). */
bool om_tensor_fill(om_tensor *t, double value);
/** In place: the element at index becomes value; bumps the version. t is borrowed. */
bool om_tensor_set(om_tensor *t, const int64_t *index, double value);
/** In place: src is broadcast and converted into dst; bumps dst's version. Both borrowed. With
 *  grad mode on, dst may require grad only as an op's result nothing else refers to: src's
 *  record then takes dst's place in the graph (docs/api.md, "In-place writes"). */
bool om_tensor_copy_from(om_tensor *dst, const om_tensor *src);

/* ---- autograd ---- */
/** Marks a leaf tensor as needing gradients; false with DtypeMismatch for a non-float tensor, InvalidArgument for a non-leaf. */
bool om_tensor_set_requires_grad(om_tensor *t, bool requires_grad);
/** True when t requires grad (a leaf marked so, or a result recorded by autograd). */
bool om_tensor_requires_grad(const om_tensor *t);
/** True when t was made by no recorded op (borrowed t). */
bool om_tensor_is_leaf(const om_tensor *t);
/** The accumulated gradient of a leaf, as a new reference; NULL (no error set) when there is none. */
om_tensor *om_tensor_grad(const om_tensor *t);
/** Drops the accumulated gradient of t. */
void om_tensor_zero_grad(om_tensor *t);
/** Back-propagates from root; grad (borrowed) may be NULL only for a one-element root. Gradients
 *  accumulate into the leaves. The graph is kept, so backward may run again (PyTorch's
 *  retain_graph=True); om_tensor_free_graph then frees it. */
bool om_backward(om_tensor *root, const om_tensor *grad);
/** Frees the autograd graph below t (borrowed): every record reachable from t drops its inputs and
 *  saved values, so intermediates nothing else holds are freed now (PyTorch frees the graph after
 *  backward). t and its records stay; a later backward through them fails (OM_ERR_AUTOGRAD). */
bool om_tensor_free_graph(om_tensor *t);
/** Turns recording on or off for the calling thread; returns the previous setting. */
bool om_set_grad_enabled(bool enabled);
/** True when the calling thread records ops for autograd. */
bool om_is_grad_enabled(void);
/** A new tensor sharing t's storage that does not require grad. */
om_tensor *om_detach(om_tensor *t);

/* ---- elementwise (broadcasting as in PyTorch; new references). Binary ops promote their
 * inputs' dtypes as PyTorch (torch.result_type: bool < int64 < float32; true division, atan2
 * and the trigonometric functions give float32), through cast ops. ---- */
om_tensor *om_add(om_tensor *a, om_tensor *b);     /**< a + b (float32, int64; bool: or) */
om_tensor *om_sub(om_tensor *a, om_tensor *b);     /**< a - b (float32, int64) */
om_tensor *om_mul(om_tensor *a, om_tensor *b);     /**< a * b (float32, int64; bool: and) */
om_tensor *om_div(om_tensor *a, om_tensor *b);     /**< a / b (true division: float32) */
om_tensor *om_pow(om_tensor *a, om_tensor *b);     /**< a ** b (float32, int64) */
om_tensor *om_scale(om_tensor *a, double s);       /**< a * s, s as a 0-d tensor of a's dtype */
om_tensor *om_add_scalar(om_tensor *a, double s);  /**< a + s, s as a 0-d tensor of a's dtype */
om_tensor *om_neg(om_tensor *a);                   /**< -a (float32, int64) */
om_tensor *om_abs(om_tensor *a);                   /**< |a| (float32, int64) */
om_tensor *om_sign(om_tensor *a);                  /**< -1, 0 or 1 (float32, int64) */
om_tensor *om_exp(om_tensor *a);                   /**< e^a (float32) */
om_tensor *om_log(om_tensor *a);                   /**< natural log (float32) */
om_tensor *om_sqrt(om_tensor *a);                  /**< square root (float32) */
om_tensor *om_rsqrt(om_tensor *a);                 /**< 1 / sqrt(a) (float32) */
om_tensor *om_relu(om_tensor *a);                  /**< max(a, 0) (float32, int64) */
om_tensor *om_sigmoid(om_tensor *a);               /**< 1 / (1 + e^-a) (float32) */
om_tensor *om_tanh(om_tensor *a);                  /**< hyperbolic tangent (float32) */
om_tensor *om_floor(om_tensor *a);                 /**< largest integer <= a (float32, float64; int64 kept) */
om_tensor *om_ceil(om_tensor *a);                  /**< smallest integer >= a (float32, float64; int64 kept) */
om_tensor *om_round(om_tensor *a);                 /**< nearest integer, halves to even (float32, float64; int64 kept) */
om_tensor *om_eq(om_tensor *a, om_tensor *b);      /**< a == b as bool */
om_tensor *om_ne(om_tensor *a, om_tensor *b);      /**< a != b as bool */
om_tensor *om_lt(om_tensor *a, om_tensor *b);      /**< a < b as bool */
om_tensor *om_le(om_tensor *a, om_tensor *b);      /**< a <= b as bool */
om_tensor *om_gt(om_tensor *a, om_tensor *b);      /**< a > b as bool */
om_tensor *om_ge(om_tensor *a, om_tensor *b);      /**< a >= b as bool */
om_tensor *om_where(om_tensor *cond, om_tensor *a, om_tensor *b); /**< cond ? a : b, cond bool; a and b promoted to their common dtype */
om_tensor *om_sin(om_tensor *a);                   /**< sine (integers promoted to float32) */
om_tensor *om_cos(om_tensor *a);                   /**< cosine */
om_tensor *om_tan(om_tensor *a);                   /**< tangent */
om_tensor *om_asin(om_tensor *a);                  /**< arcsine (NaN outside [-1, 1]) */
om_tensor *om_acos(om_tensor *a);                  /**< arccosine (NaN outside [-1, 1]) */
om_tensor *om_atan(om_tensor *a);                  /**< arctangent */
om_tensor *om_sinh(om_tensor *a);                  /**< hyperbolic sine */
om_tensor *om_cosh(om_tensor *a);                  /**< hyperbolic cosine */
om_tensor *om_asinh(om_tensor *a);                 /**< inverse hyperbolic sine */
om_tensor *om_acosh(om_tensor *a);                 /**< inverse hyperbolic cosine (NaN below 1) */
om_tensor *om_atanh(om_tensor *a);                 /**< inverse hyperbolic tangent (NaN outside [-1, 1]) */
om_tensor *om_log1p(om_tensor *a);                 /**< log(1 + a), exact near 0 (NaN below -1) */
om_tensor *om_expm1(om_tensor *a);                 /**< e^a - 1, exact near 0 */
om_tensor *om_atan2(om_tensor *y, om_tensor *x);   /**< the angle of (x, y) in [-pi, pi], as C's atan2 (promoted to float32) */
om_tensor *om_minimum(om_tensor *a, om_tensor *b); /**< elementwise min, NaN if either is (float32, int64, bool) */
om_tensor *om_maximum(om_tensor *a, om_tensor *b); /**< elementwise max, NaN if either is (float32, int64, bool) */
om_tensor *om_fmod(om_tensor *a, om_tensor *b);    /**< a - trunc(a / b) b: the sign of a (float32, int64; int x mod 0 is 0) */
om_tensor *om_remainder(om_tensor *a, om_tensor *b); /**< a - floor(a / b) b: the sign of b, Python's % (float32, int64) */
om_tensor *om_logical_and(om_tensor *a, om_tensor *b); /**< a && b as bool (any dtypes: nonzero is true) */
om_tensor *om_logical_or(om_tensor *a, om_tensor *b);  /**< a || b as bool */
om_tensor *om_logical_xor(om_tensor *a, om_tensor *b); /**< a != b as truth values, bool */
om_tensor *om_logical_not(om_tensor *a);           /**< !a as bool */
om_tensor *om_bitwise_and(om_tensor *a, om_tensor *b); /**< a & b (int64, bool) */
om_tensor *om_bitwise_or(om_tensor *a, om_tensor *b);  /**< a | b (int64, bool) */
om_tensor *om_bitwise_xor(om_tensor *a, om_tensor *b); /**< a ^ b (int64, bool) */
om_tensor *om_bitwise_not(om_tensor *a);           /**< ~a (int64; bool: logical not) */
om_tensor *om_cast(om_tensor *a, om_dtype dtype);  /**< converted copy (the input itself, retained, when dtype matches) */

/* ---- activations (PyTorch's torch.nn.functional; float32; new references) ---- */
om_tensor *om_leaky_relu(om_tensor *a, double negative_slope); /**< a > 0 ? a : a * negative_slope (PyTorch's default 0.01) */
om_tensor *om_elu(om_tensor *a, double alpha);     /**< a > 0 ? a : alpha * (e^a - 1) (default alpha 1) */
om_tensor *om_gelu(om_tensor *a, bool tanh_approximation); /**< a * Phi(a); approximate='tanh' when tanh_approximation */
om_tensor *om_silu(om_tensor *a);                  /**< a * sigmoid(a) */
om_tensor *om_softplus(om_tensor *a, double beta, double threshold); /**< log(1 + e^(beta a)) / beta; a where beta a > threshold (defaults 1, 20) */
om_tensor *om_hardswish(om_tensor *a);             /**< a * min(max(a + 3, 0), 6) / 6 */
om_tensor *om_hardsigmoid(om_tensor *a);           /**< min(max(a + 3, 0), 6) / 6; gradient 1/6 for -3 < a < 3 */
/** min(max(a, min_val), max_val) (PyTorch's defaults -1, 1; relu6 is (0, 6)), gradient 1 strictly
 *  between the bounds and 0 at them (clamp's passes at them). New reference. */
om_tensor *om_hardtanh(om_tensor *a, double min_val, double max_val);
om_tensor *om_erf(om_tensor *a);                   /**< the error function */
/** PyTorch's F.prelu: x > 0 ? x : weight x, weight (float32, [1] or [C]) one slope or one per
 *  channel (x's dim 1; a 1-D x's dim 0). Borrowed inputs, returns a new reference. */
om_tensor *om_prelu(om_tensor *x, om_tensor *weight);
om_tensor *om_mish(om_tensor *a);                  /**< a * tanh(softplus(a)) (softplus's threshold 20) */
/** min(max(a, *min), *max) with either bound NULL for none (not both), NaN kept; float32 and
 *  int64 (whose bounds must be integers). New reference. */
om_tensor *om_clamp(om_tensor *a, const double *min, const double *max);

/* ---- misc: cumsum, pad, masked_fill, dropout (new references) ---- */
/** Running sum along dim (float32 accumulated in double; int64; bool counts into int64). */
om_tensor *om_cumsum(om_tensor *a, int dim);
/** Running product along dim (float32 multiplied in double; int64 wraps; bool into int64). */
om_tensor *om_cumprod(om_tensor *a, int dim);
/** torch.cummax: the running maximum of a (float32, int64 or bool; borrowed) along dim (a NaN stays
 *  from where it appears; equal values move to the later index); returns the values (new
 *  reference) and, when indices is not NULL, stores their int64 indices there (new reference). */
om_tensor *om_cummax(om_tensor *a, int dim, om_tensor **indices);
/** torch.cummin: om_cummax's running minimum, with the same rules and ownership. */
om_tensor *om_cummin(om_tensor *a, int dim, om_tensor **indices);
/** ONNX's DFT along dim -2 of x [..., n, c] (c 1: real, 2: complex), cut or zero-padded to length
 *  (inverse: e^(+i), divided by length; onesided: the length / 2 + 1 first outputs of a real x),
 *  accumulated in double. Returns a new reference [..., length or length / 2 + 1, 2]. */
om_tensor *om_dft(om_tensor *x, int64_t length, bool inverse, bool onesided);
typedef enum om_pad_mode { OM_PAD_CONSTANT = 0, OM_PAD_REFLECT = 1, OM_PAD_REPLICATE = 2 } om_pad_mode;
/** PyTorch's F.pad: pad holds npad values, (before, after) pairs from the last dim backwards;
 *  constant mode fills with value (negative pads crop), reflect/replicate pad the last 1-3 dims. */
om_tensor *om_pad(om_tensor *a, const int64_t *pad, int npad, om_pad_mode mode, double value);
/** mask ? value : a, with mask bool and broadcast with a (the value converted to a's dtype). */
om_tensor *om_masked_fill(om_tensor *a, om_tensor *mask, double value);
/** PyTorch's F.dropout: in training mode (p > 0) zeroes each element with probability p, from
 *  the thread's default generator (om_manual_seed), and scales the rest by 1 / (1 - p); else
 *  returns a itself (retained). Training mode while a trace records fails (UnsupportedOperation). */
om_tensor *om_dropout(om_tensor *a, double p, bool training);

/* ---- views and assembly (new references; views share storage) ---- */
/** A view with the new shape (one entry may be -1); copies first when the strides do not allow a view. */
om_tensor *om_reshape(om_tensor *a, const int64_t *shape, int ndim);
/** A view with dims reordered: result dim i is input dim perm[i]. */
om_tensor *om_permute(om_tensor *a, const int64_t *perm, int ndim);
/** A view with dims d0 and d1 swapped. */
om_tensor *om_transpose(om_tensor *a, int d0, int d1);
/** A view broadcast to shape (size-1 dims stretch, -1 keeps a dim, new dims lead). */
om_tensor *om_expand(om_tensor *a, const int64_t *shape, int ndim);
/** A view of a[start:end:step] along dim (PyTorch clamping of bounds, step >= 1). */
om_tensor *om_slice(om_tensor *a, int dim, int64_t start, int64_t end, int64_t step);
/** A view of a[..., index, ...] along dim, which drops that dim. */
om_tensor *om_select(om_tensor *a, int dim, int64_t index);
/** PyTorch's slice_scatter: a copy of input with src (of a[start:end:step]'s shape and input's dtype)
 *  written into that slice along dim; input and src are borrowed, returns a new reference. */
om_tensor *om_slice_scatter(om_tensor *input, om_tensor *src, int dim, int64_t start, int64_t end, int64_t step);
/** PyTorch's select_scatter: a copy of input with src (of select(input, dim, index)'s shape) written
 *  at index along dim; borrowed inputs, returns a new reference. */
om_tensor *om_select_scatter(om_tensor *input, om_tensor *src, int dim, int64_t index);
/** PyTorch's as_strided: a view of a's storage with size, stride (ndim each, strides >= 0) and
 *  storage_offset counted in elements of the storage; borrowed input, returns a new reference. */
om_tensor *om_as_strided(om_tensor *a, const int64_t *size, const int64_t *stride, int ndim, int64_t storage_offset);
/** PyTorch's as_strided_scatter: a copy of input with src (of shape size) written at the elements
 *  size, stride and storage_offset pick, counting input's elements in row-major order (PyTorch's
 *  for a contiguous input); borrowed inputs, returns a new reference. */
om_tensor *om_as_strided_scatter(om_tensor *input, om_tensor *src, const int64_t *size, const int64_t *stride, int ndim,
                                 int64_t storage_offset);
/** torch.roll: a copy of a with each dims[k] rotated by shifts[k] (n_shifts == n_dims; with no dims,
 *  one shift of the flattened tensor); arrays and a borrowed, returns a new reference. */
om_tensor *om_roll(om_tensor *a, const int64_t *shifts, int n_shifts, const int64_t *dims, int n_dims);
/** torch.flip: a copy of a with each of the n dims read backwards; dims and a borrowed, returns a new reference. */
om_tensor *om_flip(om_tensor *a, const int64_t *dims, int n);
/** torch.diagonal: the elements [.., i, i + offset] of dims dim1 and dim2 as a last dim; a view (writes reach a); new reference. */
om_tensor *om_diagonal(om_tensor *a, int64_t offset, int dim1, int dim2);
/** torch.Tensor.repeat: a copy of a repeated sizes[d] times along each dim (n >= a's dims; a gets
 *  size-1 dims in front for the extra ones); sizes and a borrowed, returns a new reference. */
om_tensor *om_repeat(om_tensor *a, const int64_t *sizes, int n);
/** torch.tile: om_repeat, with 1s in front of dims when it has fewer than a's dims; borrowed, new reference. */
om_tensor *om_tile(om_tensor *a, const int64_t *dims, int n);
/** A view without the listed size-1 dims (all size-1 dims when ndims is 0). */
om_tensor *om_squeeze(om_tensor *a, const int64_t *dims, int ndims);
/** A view with a new size-1 dim at dim. */
om_tensor *om_unsqueeze(om_tensor *a, int dim);
/** a itself (retained) when contiguous, else a contiguous copy. */
om_tensor *om_contiguous(om_tensor *a);
/** A contiguous copy that autograd tracks. */
om_tensor *om_clone(om_tensor *a);
/** Joins n tensors (borrowed array) along dim. */
om_tensor *om_cat(om_tensor *const *ts, int n, int dim);
/** Stacks n tensors (borrowed array) along a new dim. */
om_tensor *om_stack(om_tensor *const *ts, int n, int dim);
/** torch.meshgrid of n 0-d or 1-D tensors of one dtype (borrowed array): writes n new references
 *  (views, the grid's shape; xy: Cartesian indexing, the first two dims swapped) into out and
 *  returns n, or -1 on error (then out holds nothing). */
int om_meshgrid(om_tensor *const *ts, int n, bool xy, om_tensor **out);
/** Splits a along dim into pieces of split_size (the last may be smaller); writes up to max_out new
 *  references into out and returns how many, or -1 on error (then out holds nothing). */
int om_split(om_tensor *a, int64_t split_size, int dim, om_tensor **out, int max_out);
/** Splits a along dim into n pieces of the given sizes (borrowed; non-negative, summing to the
 *  dim's size, as torch.split with a list); writes n new references into out and returns n, or -1
 *  on error (then out holds nothing). */
int om_split_sizes(om_tensor *a, const int64_t *sizes, int n, int dim, om_tensor **out);
/** torch.chunk: pieces of ceil(size / chunks) along dim (so possibly fewer than chunks; an empty
 *  dim gives chunks empty pieces); writes up to max_out new references into out and returns how
 *  many, or -1 on error (then out holds nothing). */
int om_chunk(om_tensor *a, int64_t chunks, int dim, om_tensor **out, int max_out);
/** Lower triangle of the last two dims (elements above diagonal k become zero). */
om_tensor *om_tril(om_tensor *a, int64_t k);
/** Upper triangle of the last two dims (elements below diagonal k become zero). */
om_tensor *om_triu(om_tensor *a, int64_t k);

/* ---- reductions (dims NULL or ndims 0 means all dims) ---- */
om_tensor *om_sum(om_tensor *a, const int64_t *dims, int ndims, bool keepdim);  /**< sum (float32 in double, int64) */
om_tensor *om_prod(om_tensor *a, const int64_t *dims, int ndims, bool keepdim); /**< product (float32 in double, int64 wrapping; 1 of nothing) */
om_tensor *om_mean(om_tensor *a, const int64_t *dims, int ndims, bool keepdim); /**< mean (float32) */
om_tensor *om_amax(om_tensor *a, const int64_t *dims, int ndims, bool keepdim); /**< max values (ties share the grad) */
om_tensor *om_amin(om_tensor *a, const int64_t *dims, int ndims, bool keepdim); /**< min values (ties share the grad) */
/** Max along dim: returns the values (new reference) and, when indices is not NULL, stores the
 *  int64 indices of the first maximum there (new reference). */
om_tensor *om_max_dim(om_tensor *a, int dim, bool keepdim, om_tensor **indices);
/** Min along dim, like om_max_dim. */
om_tensor *om_min_dim(om_tensor *a, int dim, bool keepdim, om_tensor **indices);
/** Indices of the first max along dim (int64). */
om_tensor *om_argmax(om_tensor *a, int dim, bool keepdim);
/** Indices of the first min along dim (int64). */
om_tensor *om_argmin(om_tensor *a, int dim, bool keepdim);

/* ---- sorting, searching, one-hot, repeats, index pairs, pixel shuffles (PyTorch's names) ---- */
/** torch.topk: the k largest (or smallest) of a (float32 or int64, borrowed) along dim, sorted, a
 *  NaN the largest, equal values in index order; returns the values (new reference) and, when
 *  indices is not NULL, stores their int64 indices there (new reference). */
om_tensor *om_topk(om_tensor *a, int64_t k, int dim, bool largest, om_tensor **indices);
/** torch.sort (stable): a along dim ascending (descending: largest first), like om_topk of the whole dim. */
om_tensor *om_sort(om_tensor *a, int dim, bool descending, om_tensor **indices);
/** torch.argsort (stable): the int64 indices of om_sort; new reference. */
om_tensor *om_argsort(om_tensor *a, int dim, bool descending);
/** torch.searchsorted: for each of values (borrowed), the index in sorted (borrowed; 1-D, or the
 *  values' leading dims and one more) where it would go, after its equals when right; int64, new reference. */
om_tensor *om_searchsorted(om_tensor *sorted, om_tensor *values, bool right);
/** torch.bucketize: om_searchsorted(boundaries, input, right) with 1-D boundaries; new reference. */
om_tensor *om_bucketize(om_tensor *input, om_tensor *boundaries, bool right);
/** F.one_hot: int64 classes (borrowed) in [0, num_classes) -> int64 [..., num_classes]
 *  (num_classes -1: the largest class + 1); new reference. */
om_tensor *om_one_hot(om_tensor *classes, int64_t num_classes);
/** torch.repeat_interleave with one count: each element of a (borrowed) along dim repeated
 *  repeats times (without has_dim: of the flattened a); new reference. */
om_tensor *om_repeat_interleave(om_tensor *a, int64_t repeats, int dim, bool has_dim);
/** torch.repeat_interleave with int64 counts (borrowed; one, or one per element along dim); new reference. */
om_tensor *om_repeat_interleave_counts(om_tensor *a, om_tensor *repeats, int dim, bool has_dim);
/** torch.tril_indices / triu_indices: the int64 [2, n] row and column indices of the lower (upper)
 *  triangle of a row x col matrix, diagonal offset, row by row; new reference. */
om_tensor *om_tril_indices(int64_t row, int64_t col, int64_t offset);
om_tensor *om_triu_indices(int64_t row, int64_t col, int64_t offset);
/** F.pixel_shuffle: a [..., C r^2, H, W] (borrowed) -> [..., C, H r, W r]; new reference. */
om_tensor *om_pixel_shuffle(om_tensor *a, int64_t r);
/** F.pixel_unshuffle: a [..., C, H r, W r] (borrowed) -> [..., C r^2, H, W]; new reference. */
om_tensor *om_pixel_unshuffle(om_tensor *a, int64_t r);

/* ---- linear algebra ---- */
/** Matrix product with PyTorch's rules: 1-D operands become a row/column, batch dims broadcast. */
om_tensor *om_matmul(om_tensor *a, om_tensor *b);
/** x W^T + b as PyTorch's linear: x [..., in], weight [out, in], bias [out] or NULL; result [..., out]. */
om_tensor *om_linear(om_tensor *x, om_tensor *weight, om_tensor *bias);
/** torch.linalg.det: the determinant of each matrix of a [..., n, n] (float32, float64), [...]; new reference. */
om_tensor *om_det(om_tensor *a);

/* ---- recurrent layers (PyTorch's nn.LSTM / nn.GRU forward; src/ops/recurrent.c) ---- */
/** PyTorch's LSTM: x [T, N, I] ([N, T, I] with batch_first, [T, I] unbatched); h0, c0
 *  [L*D, N, H] ([L*D, H] unbatched), both or neither (NULL: zeros); params (borrowed array) in
 *  PyTorch's order: per layer, per direction, w_ih [4H, in], w_hh [4H, H], then b_ih, b_hh [4H]
 *  when bias. Returns the output [T, N, D*H] ([N, T, D*H] with batch_first; new reference) and
 *  stores h_n and c_n [L*D, N, H] (new references) where h_n / c_n are not NULL. */
om_tensor *om_lstm(om_tensor *x, om_tensor *h0, om_tensor *c0, om_tensor *const *params, int n_params, int num_layers,
                   bool bias, bool batch_first, bool bidirectional, om_tensor **h_n, om_tensor **c_n);
/** PyTorch's GRU, as om_lstm with gates r, z, n (w_ih [3H, in], w_hh [3H, H]) and no cell state. */
om_tensor *om_gru(om_tensor *x, om_tensor *h0, om_tensor *const *params, int n_params, int num_layers, bool bias,
                  bool batch_first, bool bidirectional, om_tensor **h_n);
/* ---- normalisation and attention (src/ops/norm.c; PyTorch semantics, float32; new references) ---- */
/** softmax along dim: exp(x - max) / sum, the row sums in double; a row of -inf gives NaN. */
om_tensor *om_softmax(om_tensor *x, int dim);
/** log_softmax along dim: (x - max) - log(sum(exp(x - max))). */
om_tensor *om_log_softmax(om_tensor *x, int dim);
/** PyTorch's layer_norm over the trailing dims normalized_shape[0..n) (n >= 1); weight and bias
 *  (borrowed, each NULL or of normalized_shape) scale and shift. Biased variance, eps inside the sqrt. */
om_tensor *om_layer_norm(om_tensor *x, const int64_t *normalized_shape, int n, om_tensor *weight, om_tensor *bias, double eps);
/** PyTorch's group_norm: x [N, C, *] normalised per sample over groups of C / num_groups channels,
 *  then weight and bias [C] (each NULL or borrowed) per channel. */
om_tensor *om_group_norm(om_tensor *x, int64_t num_groups, om_tensor *weight, om_tensor *bias, double eps);
/** PyTorch's batch_norm on x [N, C, *]. training: batch mean and biased variance per channel, and
 *  when running_mean / running_var [C] are given (both or neither) they are updated in place
 *  (unbiased variance, new = (1 - momentum) old + momentum stat; bumps their versions; not
 *  recorded by autograd). Evaluation: the running statistics normalise. weight, bias [C] or NULL. */
om_tensor *om_batch_norm(om_tensor *x, om_tensor *running_mean, om_tensor *running_var, om_tensor *weight, om_tensor *bias,
                         bool training, double momentum, double eps);
/** PyTorch's scaled_dot_product_attention without dropout: softmax(q k^T * scale + mask) v with
 *  q [..., L, E], k [..., S, E], v [..., S, Ev]. attn_mask (borrowed, NULL for none) is bool (true
 *  takes part) or an additive float mask; is_causal masks above the diagonal (not with attn_mask);
 *  scale NULL means 1/sqrt(E). A composite of public ops (it traces as MatMul, Mul, Where/Add, Softmax, MatMul). */
om_tensor *om_scaled_dot_product_attention(om_tensor *q, om_tensor *k, om_tensor *v, om_tensor *attn_mask, bool is_causal,
                                           const double *scale);
/* ---- losses (PyTorch's semantics; new references) ---- */
/** How a loss reduces its per-element values (PyTorch's enum values). */
typedef enum om_reduction { OM_REDUCTION_NONE = 0, OM_REDUCTION_MEAN = 1, OM_REDUCTION_SUM = 2 } om_reduction;
/** (input - target)^2 (broadcast), reduced; float32. Traces to Sub, Mul, ReduceMean/ReduceSum. */
om_tensor *om_mse_loss(om_tensor *input, om_tensor *target, om_reduction reduction);
/** -weight[t] * input[n, t, d...] for log-probabilities input [N, C, d...] (or [C]) and int64 target
 *  [N, d...]; weight [C] or NULL; targets equal to ignore_index count for nothing (mean divides by
 *  the summed weights of the others). Refused while tracing. */
om_tensor *om_nll_loss(om_tensor *input, om_tensor *target, om_tensor *weight, int64_t ignore_index, om_reduction reduction);
/** nll_loss of log_softmax(input) over dim 1 (dim 0 for [C]), fused and stable, with PyTorch's
 *  label_smoothing in [0, 1]; target is int64 class indices or float32 class probabilities of
 *  input's shape. Refused while tracing. */
om_tensor *om_cross_entropy(om_tensor *input, om_tensor *target, om_tensor *weight, int64_t ignore_index,
                            om_reduction reduction, double label_smoothing);
/** Connectionist temporal classification loss: log_probs [T, N, C] float32, targets [N, S] (padded)
 *  or 1-D (concatenated), input_lengths and target_lengths [N] (int64). Mean divides each sample
 *  by its target length, then averages. zero_infinity turns infinite losses (and their gradients)
 *  into 0. Refused while tracing. */
om_tensor *om_ctc_loss(om_tensor *log_probs, om_tensor *targets, om_tensor *input_lengths, om_tensor *target_lengths,
                       int64_t blank, om_reduction reduction, bool zero_infinity);
/* ---- convolution and pooling (NCHW; NCL for conv1d; float32; PyTorch's semantics) ---- */
/** PyTorch's conv2d: x [N, C, H, W], weight [O, C/groups, kH, kW], bias [O] or NULL; stride,
 *  padding and dilation as {height, width}, each NULL for PyTorch's default (1, 0, 1). Returns a
 *  new reference [N, O, OH, OW]. */
om_tensor *om_conv2d(om_tensor *x, om_tensor *weight, om_tensor *bias, const int64_t stride[2], const int64_t padding[2],
                     const int64_t dilation[2], int64_t groups);
/** PyTorch's conv1d: x [N, C, L], weight [O, C/groups, k], bias [O] or NULL. Returns a new reference [N, O, OL]. */
om_tensor *om_conv1d(om_tensor *x, om_tensor *weight, om_tensor *bias, int64_t stride, int64_t padding, int64_t dilation,
                     int64_t groups);
/** PyTorch's conv_transpose2d (its argument order): x [N, C, H, W], weight [C, O/groups, kH, kW],
 *  bias [O] or NULL; output_padding < stride or dilation; stride, padding, output_padding and
 *  dilation each NULL for PyTorch's default (1, 0, 0, 1). Returns a new reference [N, O, OH, OW]. */
om_tensor *om_conv_transpose2d(om_tensor *x, om_tensor *weight, om_tensor *bias, const int64_t stride[2],
                               const int64_t padding[2], const int64_t output_padding[2], int64_t groups,
                               const int64_t dilation[2]);
/** PyTorch's conv3d: x [N, C, D, H, W] (or [C, D, H, W]), weight [O, C/groups, kD, kH, kW], bias
 *  [O] or NULL; stride, padding and dilation as {depth, height, width}, each NULL for PyTorch's
 *  default (1, 0, 1). Returns a new reference [N, O, OD, OH, OW]. */
om_tensor *om_conv3d(om_tensor *x, om_tensor *weight, om_tensor *bias, const int64_t stride[3], const int64_t padding[3],
                     const int64_t dilation[3], int64_t groups);
/** PyTorch's conv_transpose3d (its argument order): x [N, C, D, H, W], weight [C, O/groups, kD, kH,
 *  kW], bias [O] or NULL; as om_conv_transpose2d with {depth, height, width}. New reference. */
om_tensor *om_conv_transpose3d(om_tensor *x, om_tensor *weight, om_tensor *bias, const int64_t stride[3],
                               const int64_t padding[3], const int64_t output_padding[3], int64_t groups,
                               const int64_t dilation[3]);
/** PyTorch's max_pool2d on x [N, C, H, W]: stride NULL means the kernel size, padding NULL 0,
 *  dilation NULL 1. Returns a new reference; the gradient goes to each window's first maximum. */
om_tensor *om_max_pool2d(om_tensor *x, const int64_t kernel[2], const int64_t stride[2], const int64_t padding[2],
                         const int64_t dilation[2], bool ceil_mode);
/** PyTorch's avg_pool2d on x [N, C, H, W] (stride NULL: the kernel size; padding NULL: 0). New reference. */
om_tensor *om_avg_pool2d(om_tensor *x, const int64_t kernel[2], const int64_t stride[2], const int64_t padding[2],
                         bool ceil_mode, bool count_include_pad);
/** PyTorch's max_pool3d on x [N, C, D, H, W] (or [C, D, H, W]); sizes {depth, height, width},
 *  NULL as om_max_pool2d's. New reference; the gradient goes to each window's first maximum. */
om_tensor *om_max_pool3d(om_tensor *x, const int64_t kernel[3], const int64_t stride[3], const int64_t padding[3],
                         const int64_t dilation[3], bool ceil_mode);
/** F.max_pool2d(..., return_indices=True)'s indices: for om_max_pool2d's arguments, each window's
 *  maximum's place in its flattened H x W plane (int64, the values' shape). Borrowed x; new reference. */
om_tensor *om_max_pool2d_indices(om_tensor *x, const int64_t kernel[2], const int64_t stride[2], const int64_t padding[2],
                                 const int64_t dilation[2], bool ceil_mode);
/** om_max_pool2d_indices for om_max_pool3d: places in the flattened D x H x W volume. Borrowed x; new reference. */
om_tensor *om_max_pool3d_indices(om_tensor *x, const int64_t kernel[3], const int64_t stride[3], const int64_t padding[3],
                                 const int64_t dilation[3], bool ceil_mode);
/** PyTorch's max_unpool1d/2d/3d: x [N, C, ...] (1 to 3 spatial axes, float32) and indices (int64,
 *  x's shape: places in the flattened output plane) to zeros of [N, C, output_size...] with
 *  x's values at their places (n sizes, one per spatial axis). Borrowed arguments; new reference. */
om_tensor *om_max_unpool(om_tensor *x, om_tensor *indices, const int64_t *output_size, int n);
/** grid_sample's interpolation modes (PyTorch's; bicubic over 2 spatial axes only). */
typedef enum om_grid_sample_mode { OM_GRID_BILINEAR = 0, OM_GRID_NEAREST = 1, OM_GRID_BICUBIC = 2 } om_grid_sample_mode;
/** grid_sample's padding modes: what a point outside the input reads. */
typedef enum om_grid_sample_padding { OM_GRID_ZEROS = 0, OM_GRID_BORDER = 1, OM_GRID_REFLECTION = 2 } om_grid_sample_padding;
/** torch.nn.functional.grid_sample: x [N, C, H, W] (or [N, C, D, H, W]) float32 read at grid
 *  [N, Ho, Wo, 2] (or [N, Do, Ho, Wo, 3]; x, y (, z) in [-1, 1]) -> [N, C, Ho, Wo] (or [N, C, Do,
 *  Ho, Wo]), PyTorch's values in every mode and padding. Borrowed arguments, returns a new reference. */
om_tensor *om_grid_sample(om_tensor *x, om_tensor *grid, om_grid_sample_mode mode, om_grid_sample_padding padding, bool align_corners);
/** PyTorch's avg_pool3d on x [N, C, D, H, W] (or [C, D, H, W]); sizes {depth, height, width}. New reference. */
om_tensor *om_avg_pool3d(om_tensor *x, const int64_t kernel[3], const int64_t stride[3], const int64_t padding[3],
                         bool ceil_mode, bool count_include_pad);
/** PyTorch's adaptive_avg_pool2d on x [N, C, H, W] to output_size {OH, OW} (-1 keeps that input
 *  size). Returns a new reference. */
om_tensor *om_adaptive_avg_pool2d(om_tensor *x, const int64_t output_size[2]);
/** PyTorch's adaptive_avg_pool3d on x [N, C, D, H, W] to output_size {OD, OH, OW} (-1 keeps that
 *  input size); [C, D, H, W] is taken as a batch of one. Returns a new reference. */
om_tensor *om_adaptive_avg_pool3d(om_tensor *x, const int64_t output_size[3]);
/** PyTorch's adaptive_max_pool2d on x [N, C, H, W] (or [C, H, W]) to output_size {OH, OW} (-1
 *  keeps that input size): each cell's maximum (ties: the first in row-major order; NaN wins, the
 *  last one). With indices non-NULL, *indices gets a new reference to each maximum's place in its
 *  flattened H x W plane (int64), PyTorch's return_indices; NULL on error. Returns a new reference. */
om_tensor *om_adaptive_max_pool2d(om_tensor *x, const int64_t output_size[2], om_tensor **indices);
/** om_adaptive_max_pool2d with a depth: x [N, C, D, H, W] (or [C, D, H, W]), output_size {OD, OH,
 *  OW}, indices into the flattened D x H x W volume. Returns a new reference. */
om_tensor *om_adaptive_max_pool3d(om_tensor *x, const int64_t output_size[3], om_tensor **indices);
/** F.unfold (im2col): every kH x kW block of x (borrowed; [N, C, H, W] or [C, H, W], float32) as
 *  a column, [N, C*kH*kW, L] (L blocks, row-major); each array gives (height, width). New reference. */
om_tensor *om_unfold(om_tensor *x, const int64_t kernel[2], const int64_t dilation[2], const int64_t padding[2], const int64_t stride[2]);
/** F.fold (col2im), unfold's adjoint: the columns of x (borrowed; [N, C*kH*kW, L] or [C*kH*kW, L])
 *  summed back where their blocks lie in an image of output_size, [N, C, H, W]. New reference. */
om_tensor *om_fold(om_tensor *x, const int64_t output_size[2], const int64_t kernel[2], const int64_t dilation[2],
                   const int64_t padding[2], const int64_t stride[2]);

/* ---- the generic entry every op goes through ---- */
/** Runs op on n_in inputs (borrowed) with integer and float attributes (borrowed arrays), and
 *  writes the op's outputs (new references) into out, returning their count or -1 on error.
 *  The typed functions above are thin wrappers of this one; the JS package calls it by op name. */
int om_apply(om_op op, om_tensor *const *in, int n_in, const int64_t *iattrs, int n_iattrs,
             const double *fattrs, int n_fattrs, om_tensor **out, int max_out);

/* ---- tracing to ONNX (see docs/tracing.md, docs/symbolic-axes.md) ----
 * A trace is a recorded eager run on the calling thread: om_trace_begin(), then declare the
 * inputs (and their symbolic axes), name weights if you like, run the model, and
 * om_trace_finish() with the outputs. Every op with a traced input is lowered to ONNX nodes;
 * tensors that do not depend on an input become initializers. With symbolic axes the model
 * runs through om_trace_run, which runs it at other sizes first (shape only) to see the sizes
 * it computes; without, the model may also simply be run between om_trace_input and
 * om_trace_finish. Any trace error (om_error_kind_is_trace) ends the recording on the spot:
 * nothing is left active or leaked, and a later om_trace_finish() reports that first error
 * again, so C code can check once.
 *
 *     om_trace_begin();
 *     om_trace_dim("seq", 1, 2, 0);                   // optional: seq a multiple of 1, at least 2
 *     om_tensor *x = om_trace_input("x", example, (const char *[]){"batch", "seq", NULL});
 *     om_tensor *y;
 *     int n = om_trace_run(forward, ctx, &y, 1);       // forward(ctx, inputs, 1, &y, 1) runs 4 times
 *     om_traced_model *m = n == 1 ? om_trace_finish(&y, (const char *[]){"y"}, 1) : NULL;
 *     om_tensor_release(y), om_tensor_release(x); */
typedef struct om_traced_model om_traced_model;
/** Starts recording on the calling thread; false with InvalidUsage when one is already recording. */
bool om_trace_begin(void);
/** True while a trace records on the calling thread. */
bool om_trace_active(void);
/** Ends the recording without a model (nothing happens when none records). */
void om_trace_abort(void);
/** Declares symbol name's sizes, before the model runs: multiples of multiple_of (>= 1), from
 *  min to max (max 0: no bound). Its example size must be one of them. false with InvalidUsage
 *  otherwise. (An undeclared symbol is any size from 1.) */
bool om_trace_dim(const char *name, int64_t multiple_of, int64_t min, int64_t max);
/** Declares graph input name with example's values and shape (example borrowed). axis_names is
 *  NULL or example's ndim entries: a name makes that axis symbolic (dim_param), NULL keeps it
 *  fixed. Returns a new reference to a traced tensor that shares example's storage. */
om_tensor *om_trace_input(const char *name, om_tensor *example, const char *const *axis_names);
/** Names the constant t (borrowed) in the graph; a differently strided view of it becomes
 *  "<name>.view_<n>". A second name for the same view (tied weights) is kept as an alias of the first, which
 *  names the one initializer. */
bool om_trace_parameter(const char *name, om_tensor *t);
/** The model om_trace_run runs: inputs (borrowed) in declaration order; writes up to max
 *  outputs (new references) and returns how many, or -1 with the thread's error set. */
typedef int (*om_trace_fn)(void *ctx, om_tensor *const *inputs, int n_inputs, om_tensor **outputs, int max_outputs);
/** Runs fn at three other sizes of the symbols (shape only: phantom inputs, nothing computed on
 *  them), then on the declared inputs, recording; each call is checked against the other runs
 *  and the integers the model computed from sizes are written as what they are. Call it right
 *  after the inputs and parameters are declared. Writes the recorded run's outputs (new
 *  references) to outputs and returns their count, for om_trace_finish; -1 on error (a trace
 *  error ends the recording; so does fn's failure, whose error stays). */
int om_trace_run(om_trace_fn fn, void *ctx, om_tensor **outputs, int max_outputs);
/** Ends the recording and returns the model (new, free with om_traced_release), or NULL on
 *  error. outputs (borrowed) are named names[k], in that order; the recording ends either way. */
om_traced_model *om_trace_finish(om_tensor *const *outputs, const char *const *names, int n);
/** Frees a traced model (NULL is ignored). */
void om_traced_release(om_traced_model *m);

/** Receives the next n bytes of a stream (borrowed, valid during the call); false stops it. */
typedef bool (*om_write_fn)(void *ctx, const void *bytes, size_t n);
/** Streams m's ONNX ModelProto (opset 20, IR 9) into write(ctx, ...): equal graphs give equal
 *  bytes, and weights go out straight from their storage. m borrowed; false on error. */
bool om_traced_write_onnx(const om_traced_model *m, om_write_fn write, void *ctx);

/** The exact size in bytes of what om_traced_write_onnx writes for m (borrowed); 0 on error. */
size_t om_traced_onnx_size(const om_traced_model *m);
/** Streams m (borrowed) as the library format v1 (docs/format.md: the graph as recorded, its
 *  symbols' ranges, the weights 64-byte aligned; bytes that depend only on the graph) through
 *  write(ctx, bytes, n); false on error. */
bool om_traced_save(const om_traced_model *m, om_write_fn write, void *ctx);
/** The exact size in bytes of what om_traced_save writes for m (borrowed); 0 on error. */
size_t om_traced_save_size(const om_traced_model *m);

/** The parts of a traced model that om_traced_count / om_traced_name / om_traced_info read. */
typedef enum om_traced_part { OM_TRACED_INPUT, OM_TRACED_OUTPUT, OM_TRACED_INITIALIZER, OM_TRACED_NODE } om_traced_part;
/** How many inputs, outputs, initializers or nodes m has (borrowed m; -1 on a bad argument). */
int om_traced_count(const om_traced_model *m, om_traced_part part);
/** The name of item i of part (for a node, its ONNX op type); borrowed, valid while m lives. */
const char *om_traced_name(const om_traced_model *m, om_traced_part part, int i);
/** dtype, rank and shape of input, output or initializer i; dim_params (may be NULL) gets the
 *  symbol of each axis or NULL for a fixed one. Pointers are borrowed, valid while m lives. */
bool om_traced_info(const om_traced_model *m, om_traced_part part, int i, om_dtype *dtype, int *ndim,
                    const int64_t **shape, const char *const **dim_params);
/** The value names node i reads (outputs false) or writes (outputs true): returns how many and
 *  stores up to max borrowed names in names ("" for an omitted optional input); -1 on error. */
int om_traced_node_values(const om_traced_model *m, int i, bool outputs, const char **names, int max);
/** The other state-dict names initializer i holds (tied weights, equal contents stored once; borrowed
 *  from m) into names, at most max; returns how many it holds, or -1 with InvalidArgument. */
int om_traced_aliases(const om_traced_model *m, int i, const char **names, int max);
/** How many symbols m's inputs have (borrowed m; -1 on NULL). */
int om_traced_symbol_count(const om_traced_model *m);
/** Symbol i of m: its name and the sizes the graph holds for (multiples of multiple, min to max,
 *  both such multiples: a multiple of 14 declared from 1 has min 14; max INT64_MAX: no bound), narrowed from its declaration where the model needs it (then why
 *  names the call, else NULL). Outputs may be NULL; strings borrowed while m lives. */
bool om_traced_symbol(const om_traced_model *m, int i, const char **name, int64_t *multiple, int64_t *min, int64_t *max,
                      const char **why);
/** The sizes of symbol i of m (borrowed) the tracer checked the graph over, shape only (its whole
 *  range, up to its max or, with none, to 32768 or 4 times the example): to min and max (either
 *  may be NULL). false on error (no such symbol). */
bool om_traced_symbol_checked(const om_traced_model *m, int i, int64_t *min, int64_t *max);
/** Where m's graph (borrowed) is an If on symbol i's size (a threshold where the model does
 *  another thing, docs/symbolic-axes.md): the pieces of its range, up to max (min, max) pairs
 *  into ranges (max INT64_MAX: no bound), in order. Their count, 0 when none; -1 on error. */
int om_traced_symbol_branches(const om_traced_model *m, int i, int64_t *ranges, int max);

/* ---- the graph layer: a Session runs a graph with the library's kernels (docs/graph-runtime.md) ----
 * A session holds a graph (a traced model's, or an ONNX file's) and makes a plan for each input
 * signature it is run with: shapes inferred, everything computed from shapes and constants folded
 * into constants, buffers placed by lifetime in one arena, so a run allocates only its outputs.
 *
 *     om_session *s = om_session_create(traced, NULL);     // or om_session_open(bytes, n, NULL)
 *     om_tensor *y;
 *     if (s && om_session_run(s, &x, 1, &y, 1) == 1) { ... om_tensor_release(y); }
 *     om_session_release(s);
 */
typedef struct om_session om_session;
typedef enum om_session_mode { OM_SESSION_FAST = 0, OM_SESSION_EXACT = 1 } om_session_mode;
typedef struct om_session_options {
  om_session_mode mode; /* fast (the default) or exact: bit-identical natively and in WASM on any machine (today both) */
} om_session_options;
/** A session on m's graph (m borrowed: the session keeps its own copy, its weights read in place
 *  with a copy on write); options NULL for the defaults. New (om_session_release), NULL on error:
 *  Unsupported naming a node whose op the graph layer has no kernel for. */
om_session *om_session_create(const om_traced_model *m, const om_session_options *options);
/** A session on bytes[0..n) (borrowed, not kept): an ONNX ModelProto, or the library format v1
 *  (om_traced_save; told apart by its magic). Format naming what is wrong with bytes it cannot
 *  read, Unsupported for what it reads but cannot run. New, NULL on error. */
om_session *om_session_open(const void *bytes, size_t n, const om_session_options *options);
/** Frees the session and its plans (NULL is a no-op). */
void om_session_release(om_session *s);
/** Runs the graph on n_inputs inputs (borrowed, in the graph's input order); writes its outputs
 *  (new references) to outputs and returns their count, -1 on error (an input that does not fit
 *  names the input and dim, a named axis bound to two sizes, or a size outside the range a
 *  traced model holds for; a graph whose inputs or outputs are sequences or optionals runs with
 *  om_session_run_values). */
int om_session_run(om_session *s, om_tensor *const *inputs, int n_inputs, om_tensor **outputs, int max_outputs);
/* A count of om_session_run_values: an optional holding nothing (no tensor). */
#define OM_SESSION_NONE (-2)
/* A count of om_session_run_values: a tensor of strings (ONNX's STRING element type), no tensor. */
#define OM_SESSION_STRINGS (-3)
/* A count of om_session_run_values: the input's default (om_session_input_default), no tensor. */
#define OM_SESSION_DEFAULT (-4)
/* A tensor of strings (ONNX's STRING: not a library dtype; the graph layer alone takes them):
 * a shape and its elements in row-major order, each a byte string (UTF-8 as ONNX's string ops
 * read it) that may hold any byte. Immutable and refcounted. */
typedef struct om_strings om_strings;
/** A new tensor of strings of shape (ndim, shape); element k is the bytes s[k][0..len[k]) (copied;
 *  len NULL: each s[k] NUL-terminated). New (om_strings_release), NULL with InvalidArgument for a
 *  bad shape or a NULL element, OutOfMemory past 2^31 elements or 2^31 bytes in all. */
om_strings *om_strings_new(int ndim, const int64_t *shape, const char *const *s, const size_t *len);
/** t with one more reference (NULL stays NULL). */
om_strings *om_strings_retain(om_strings *t);
/** Drops a reference; the last frees it (NULL is a no-op). */
void om_strings_release(om_strings *t);
/** t's rank, its shape into shape (OM_MAX_DIMS room; may be NULL); -1 on error. */
int om_strings_shape(const om_strings *t, int64_t *shape);
/** t's element count; -1 on error. */
int64_t om_strings_count(const om_strings *t);
/** Element k's bytes (borrowed from t, NUL-terminated after its len bytes), its length into *len
 *  (may be NULL); NULL with IndexOutOfRange for k outside t. */
const char *om_strings_at(const om_strings *t, int64_t k, size_t *len);
/** Runs the graph on values: counts[k] (counts NULL: -1 for each) says what graph input k is fed:
 *  -1 one tensor, n >= 0 a sequence of the next n tensors, OM_SESSION_NONE an optional holding
 *  nothing, OM_SESSION_STRINGS the tensor of strings strings[k] (borrowed; strings may be NULL
 *  when no input is one); inputs (borrowed) holds the tensors one after the other. Writes the
 *  outputs' tensors (new references) to outputs likewise, each output's count to out_counts (one
 *  per graph output) and a tensor of strings (a new reference) to out_strings[j] where output j's
 *  count is OM_SESSION_STRINGS (out_strings may be NULL when no output is one), and returns how
 *  many tensors that is, -1 on error; when that is more than max_outputs, nothing runs or is
 *  written (call again with room; the plan is kept). A tensor given where the graph takes a
 *  sequence or strings, or the other way, is InvalidArgument naming the input. OM_SESSION_DEFAULT
 *  leaves an input with a default (om_session_input_default) to it (InvalidArgument for one
 *  without); a tensor fed there overrides it, checked against the input's declared type and shape
 *  as any input's. */
int om_session_run_values(om_session *s, om_tensor *const *inputs, const int *counts, om_strings *const *strings, int n_inputs,
                          om_tensor **outputs, int max_outputs, int *out_counts, om_strings **out_strings);
/** Infers the shape of every value of the graph at these inputs (om_session_value_info) as the
 *  session does to plan a run: the nodes are bound as om_session_run_values would bind them, but
 *  no plan is kept, no buffer is allocated and nothing runs. Arguments and errors as
 *  om_session_run_values's (a ShapeMismatch names the input and dim, a rule's error the node);
 *  inputs taken by value (a Reshape's shape fed as an input) need their values. false on error. */
bool om_session_plan(om_session *s, om_tensor *const *inputs, const int *counts, om_strings *const *strings, int n_inputs);
/** The number of values of the graph (inputs, initializers and node outputs: ids for
 *  om_session_value_info), -1 on error. */
int om_session_value_count(const om_session *s);
/** Value i as the last om_session_plan bound it (the shapes the Session infers to plan): its name
 *  (borrowed), ONNX element type, rank and sizes (ndim entries of shape, OM_MAX_DIMS room); *ndim
 *  is -1 where it is not one tensor there (a sequence, an optional, strings, a value no node of the
 *  top graph computes) and before the first om_session_plan. Any pointer may be NULL. false on error. */
bool om_session_value_info(const om_session *s, int i, const char **name, int *elem_type, int *ndim, int64_t *shape);
/** The number of graph inputs (outputs false) or outputs (an output listed twice counted once); -1 on error. */
int om_session_count(const om_session *s, bool outputs);
/** The name of input or output i (borrowed from the session), NULL on error. */
const char *om_session_name(const om_session *s, bool outputs, int i);
/** Input i's dtype, rank, shape (-1 where an axis is named or unknown) and each axis's name (NULL
 *  when fixed, "?" when unknown; borrowed): any pointer may be NULL. false on error. */
bool om_session_input_info(const om_session *s, int i, om_dtype *dtype, int *ndim, int64_t *shape, const char **dim_params);
/** 1 when input i has a default: an initializer the file also lists as a graph input (ONNX IR 4
 *  and later), which om_session_run_values uses where that input's count is OM_SESSION_DEFAULT;
 *  else 0. -1 on error. */
int om_session_input_default(const om_session *s, int i);
/** The ONNX element type (TensorProto.DataType: 1 FLOAT, 3 INT8, 10 FLOAT16, ...) of input or
 *  output i, whose values the session takes and gives in the dtype that holds it (integers in
 *  int64, FLOAT16 and BFLOAT16 in float32: docs/graph-runtime.md); an output's is known once a
 *  run has planned it (before: the type the file declares, or 0). -1 on error. */
int om_session_elem_type(const om_session *s, bool outputs, int i);
/** The arena bytes of the plan made or used last (0 before the first run, unless the session made
 *  that run's plan when it was made: an ONNX file declaring an output's type or shape, every input of
 *  fixed sizes), -1 on error. */
int64_t om_session_plan_bytes(const om_session *s);
/** The op names (static strings) of the kernels that plan runs, in order, up to max of them into
 *  names; returns how many it has (0 before the first run), -1 on error. Views run no kernel. */
int om_session_plan_kernels(const om_session *s, const char **names, int max);

/* ---- indexing and resampling (src/ops/index.c, src/ops/resize.c; new references) ---- */
/** Rows of weight [num, dim] picked by int64 indices (any shape) -> [..., dim], as PyTorch's
 *  embedding; with has_padding, row padding_idx (negative counts from the end) gets no gradient.
 *  An index outside [0, num) is IndexOutOfRange. Returns a new reference. */
om_tensor *om_embedding(om_tensor *weight, om_tensor *indices, int64_t padding_idx, bool has_padding);
/** input picked along dim by a 1-D (or 0-d) int64 index, each in [0, size). Returns a new reference. */
om_tensor *om_index_select(om_tensor *input, int dim, om_tensor *index);
/** out[p] = input[p with p[dim] = index[p]] (index int64, input's rank); index's shape. Returns a new reference. */
om_tensor *om_gather(om_tensor *input, int dim, om_tensor *index);
/** A copy of input (float32) with source[..., j, ...] added at input[..., index[j], ...] along dim
 *  (index 1-D int64; repeated indices add up). Returns a new reference. */
om_tensor *om_index_add(om_tensor *input, int dim, om_tensor *index, om_tensor *source);
/** A copy of input (float32) with src[p] added at p with p[dim] = index[p] (src has index's shape).
 *  Returns a new reference. */
om_tensor *om_scatter_add(om_tensor *input, int dim, om_tensor *index, om_tensor *src);
typedef enum om_scatter_reduce_mode { OM_SCATTER_SUM = 0, OM_SCATTER_PROD = 1, OM_SCATTER_AMAX = 2, OM_SCATTER_AMIN = 3 } om_scatter_reduce_mode;
/** torch.scatter_reduce with include_self true: a copy of input (float32) with src[p] combined by
 *  reduce into the element at p with p[dim] = index[p], in row-major order of p (a NaN stays in
 *  amax and amin; sum is om_scatter_add). Borrowed arguments, returns a new reference. */
om_tensor *om_scatter_reduce(om_tensor *input, int dim, om_tensor *index, om_tensor *src, om_scatter_reduce_mode reduce);
/** PyTorch's index_put: a copy of input with values written (accumulate: added; bool: or) at
 *  the positions that n int64 index tensors (broadcast together to a shape B) pick in input's first
 *  n dims, each index in [-size, size); values (input's dtype) broadcast to B + input's other dims.
 *  Of repeated positions the last written stays. Borrowed arguments, returns a new reference. */
om_tensor *om_index_put(om_tensor *input, om_tensor *const *indices, int n, om_tensor *values, bool accumulate);
/** torch.nonzero: the int64 index tuples [count, ndim] of input's nonzero elements (NaN too; any
 *  dtype), in row-major order. count is decided by the values: tracing it is DataDependent.
 *  Borrowed input, returns a new reference. */
om_tensor *om_nonzero(om_tensor *input);
/** interpolate's sampling modes. */
typedef enum om_interpolate_mode { OM_INTERPOLATE_NEAREST = 0, OM_INTERPOLATE_BILINEAR = 1, OM_INTERPOLATE_BICUBIC = 2 } om_interpolate_mode;
/** Resamples x [N, C, H, W] (float32) as torch.nn.functional.interpolate: exactly one of size
 *  [2] (out_h, out_w) and scale_factor [2] (output floor(in * scale), the scale driving the
 *  coordinates as PyTorch's default recompute_scale_factor=None); align_corners only with
 *  bilinear and bicubic. Arrays borrowed. Returns a new reference. */
om_tensor *om_interpolate(om_tensor *x, const int64_t *size, const double *scale_factor, om_interpolate_mode mode,
                          bool align_corners);

/* ---- memory accounting (per thread) ---- */
/** Live tensors (handles, including views and autograd-held ones) on this thread. */
int64_t om_live_tensors(void);
/** Bytes of live storages allocated on this thread. */
int64_t om_live_bytes(void);

#ifdef __cplusplus
}
#endif
#endif /* ONEMODEL_H */
