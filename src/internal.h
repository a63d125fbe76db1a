/* Internal structures shared by the core: storages, tensors, the op table, backward records.
 * Nothing here is public API; private helpers are om__ prefixed. */
#ifndef OM_INTERNAL_H
#define OM_INTERNAL_H

#include "onemodel.h"

#include <stdarg.h>

#define OM_MAX_INPUTS_INLINE 4 /* records keep this many inputs inline, more on the heap */
#define OM_MAX_SAVED_INPUTS 8  /* inputs 0..7 have OM_SAVES_IN bits and version checks */
#define OM_MAX_OUTPUTS 3 /* layer_norm: y, mean, rstd */
#define OM_MAX_IATTRS 2 * OM_MAX_DIMS + 2
#define OM_MAX_FATTRS 4

/* Refcounted element buffer. Views share one; every in-place change bumps version. */
typedef struct om_snapshot om_snapshot;
typedef struct om_storage {
  int64_t refcount;
  uint64_t version;
  size_t nbytes;
  void *data;
  om_snapshot *snapshots; /* traced models' constants that must keep today's values (copy on write) */
  /* A buffer of a session's plan (src/runtime/session.c): its data lies in the plan's arena (not
   * its own: neither freed nor counted here), and while the plan is made, ops on it are recorded
   * as the plan's steps instead of run. */
  bool planned;
  int buffer; /* planned: its index in the plan's buffers (src/runtime/plan.h) */
  /* Holds values written (with grad on) from a tensor autograd tracks, which autograd cannot
   * follow into a tensor that needs no grad (`d = x.new_empty(...); d[:, 1:] = q @ k`): ops on
   * it record as for a tensor that needs grad, and a backward that reaches it fails, instead of
   * giving q and k no gradient. */
  bool grad_lost;
} om_storage;

typedef struct om_record om_record;
typedef struct om_view_link om_view_link;

/* A view onto a storage: shape, strides and offset in elements, plus autograd identity. */
struct om_tensor {
  int64_t refcount;
  om_storage *storage;
  om_dtype dtype;
  int ndim;
  int64_t shape[OM_MAX_DIMS];
  int64_t strides[OM_MAX_DIMS];
  int64_t offset;
  bool requires_grad;   /* a leaf the user marked; results use grad_fn instead */
  om_tensor *grad;      /* accumulated gradient of a leaf (owned) */
  om_record *grad_fn;   /* the record that made this tensor (owned reference), NULL for leaves */
  int output_index;     /* which output of grad_fn this is */
  uint32_t trace_id;    /* the trace that made this tensor a graph value (0: none) */
  int32_t trace_value;  /* its value id in that trace's graph */
  uint32_t trace_run;   /* the run of om_trace_run that made it (0: none), and where in it: */
  int32_t trace_origin; /* call * OM_MAX_OUTPUTS + output, or -1 - k for the model's input k */
  om_view_link *view;   /* a view made while a trace recorded: what it views (owned; trace/write.c) */
  /* Autograd through writes into views (PyTorch's CopySlices): a view op's result keeps the tensor
   * that owns its storage (base, owned; NULL for a tensor that is its own base). A write through a
   * view gives the base a new record and bumps its write_gen; a view whose base_gen differs takes
   * a new record (an as_strided of the base) before its next use (om__view_sync). */
  om_tensor *base;
  uint64_t base_gen;
  uint64_t write_gen;
};

/* Integer and float attributes of one op call (dims, axes, flags, exponents). */
typedef struct om_attrs {
  int n_i, n_f;
  int64_t i[OM_MAX_IATTRS];
  double f[OM_MAX_FATTRS];
} om_attrs;

/* Shape and dtype of one output, written by an op's infer step. */
typedef struct om_meta {
  om_dtype dtype;
  int ndim;
  int64_t shape[OM_MAX_DIMS];
} om_meta;

/* One op invocation as the op's functions see it. infer may canonicalise attrs (wrap negative
 * dims, resolve -1) so forward, backward and (later) lowering all see canonical values. */
typedef struct om_call {
  om_op op;
  int n_in, n_out;
  om_tensor *const *in;
  om_attrs attrs;
  om_meta out_meta[OM_MAX_OUTPUTS];
  om_tensor *out[OM_MAX_OUTPUTS];
  /* set by the tracer when an input is traced: the outputs' graph values, and the graph's
   * sizes before lowering (to drop what it added if forward fails) */
  int trace_out[OM_MAX_OUTPUTS];
  int trace_mark[3];
} om_call;

/* The backward record: what autograd (and the tracer) knows about one op application. Holds
 * references to its inputs, never to its outputs (saved outputs are storage-sharing aliases
 * without grad_fn), so no cycle forms. */
struct om_record {
  int64_t refcount;
  om_op op;
  int n_in, n_out;
  om_tensor **in;                         /* n_in references (points at in_inline or the heap) */
  om_tensor *in_inline[OM_MAX_INPUTS_INLINE];
  /* The graph edge of each input as the record was made: the record that made it and which of
   * its outputs (fn NULL: a leaf or a constant then). A write can give a tensor a new record
   * later (CopySlices); records made before it still reach the values they read. */
  om_record **in_fn;
  om_record *in_fn_inline[OM_MAX_INPUTS_INLINE];
  int *in_index;
  int in_index_inline[OM_MAX_INPUTS_INLINE];
  uint64_t in_version[OM_MAX_SAVED_INPUTS]; /* storage versions of inputs the backward may read */
  om_attrs attrs;
  om_meta out_meta[OM_MAX_OUTPUTS];
  om_tensor *saved[OM_MAX_OUTPUTS];       /* detached aliases of outputs the backward reads */
  uint64_t saved_version[OM_MAX_OUTPUTS];
  om_record *next_dead;                   /* the thread's list of records being freed */
  /* scratch for one backward pass */
  om_tensor *grad_acc[OM_MAX_OUTPUTS];
  int pending;
  bool queued;
  bool freed; /* om_tensor_free_graph released in[] and saved[]: backward through it fails */
};

/* Which values an op's backward reads: input i is bit i, output j is bit OM_SAVES_OUT0 + j. */
#define OM_SAVES_IN(i) (1u << (i))
#define OM_SAVES_ALL_INPUTS 0xffu
#define OM_SAVES_OUT(j) (1u << (8 + (j)))

/* How the table-driven tests exercise an op (see tests/c/test_ops.c). */
#define OM_TEST_MAX_INPUTS 8 /* lstm_layer: x, two weights, two biases, h0, c0 */
#define OM_TEST_MAX_DIMS 5   /* conv3d: [N, C, D, H, W] */
typedef struct om_op_test {
  int n_in;                           /* inputs to make (variadic ops: how many) */
  int ndims[OM_TEST_MAX_INPUTS];      /* input ranks */
  int64_t shapes[OM_TEST_MAX_INPUTS][OM_TEST_MAX_DIMS]; /* input shapes */
  om_dtype dtypes[OM_TEST_MAX_INPUTS];   /* input dtypes (float32 when zero) */
  double lo, hi;                      /* input domain for float inputs */
  om_attrs attrs;                     /* attributes for the sample call */
  bool no_gradcheck;                  /* not differentiable (comparisons, int outputs) */
  /* Reads its input's storage as it lies (as_strided, as PyTorch's): a non-contiguous copy of the
   * input holds other elements at those positions, so the layout check does not apply. */
  bool layout_dependent;
  /* The errors (parts of their messages, '|' between them) the op gives, as PyTorch does, for
   * an empty axis where a positive size fits (reducing a size-0 axis to its maximum); NULL: it
   * takes every empty variant of its sample whose shapes fit (src/ops/sample.c). */
  const char *empty_refusal;
  /* Bit k: integer attribute k is a size of the sample (expand's target, slice_scatter's full
   * shape), which an empty variant sets along with the axes of that size. */
  uint32_t size_attrs;
} om_op_test;

typedef struct om_lower om_lower;

/* Type promotion kinds (om_op_def.promote). With float32, int64 and bool, torch.result_type is
 * the highest of the operands' dtypes in the order bool < int64 < float32, whatever their ranks
 * (0-d tensors and Python scalars, weak types, decide nothing more among these three). */
enum {
  OM_PROMOTE_COMMON = 1, /* every input to the result type (add, comparisons, minimum, bitwise_and) */
  OM_PROMOTE_FLOAT,      /* to the result type, at least float32 (true division, atan2, sin) */
  OM_PROMOTE_VALUES,     /* inputs after the first to their result type (where's branches) */
  OM_PROMOTE_BOOL,       /* every input to bool, nonzero as true (logical_and) */
  OM_PROMOTE_NO_BOOL,    /* COMMON, and a bool input is refused, as PyTorch's subtraction */
};

/* One row of the op table. */
typedef struct om_op_def {
  const char *name;
  int n_in;              /* number of inputs, -1 for one or more */
  int n_out;             /* number of outputs */
  bool view;             /* forward makes out[0] a view of in[0] (no new storage) */
  unsigned saves;        /* OM_SAVES_* bits: what the backward reads */
  /* Validates inputs and attrs and fills out_meta; on failure sets the error and returns false. */
  bool (*infer)(om_call *c);
  /* Writes the outputs (allocated by apply; view ops set out[0]'s strides/offset); false on error (scratch OOM). */
  bool (*forward)(om_call *c);
  /* Given gout[j] (borrowed, never NULL), writes gin[i] (new references, or NULL for no
   * gradient) for each input; returns false on error. Runs with grad mode off. */
  bool (*backward)(const om_record *r, om_tensor *const *gout, om_tensor **gin);
  /* Writes the ONNX nodes of a call whose inputs include a traced value (src/trace/emit.c
   * has the helpers), or refuses with om__lower_refuse. Sees canonical attrs, as backward does. */
  bool (*lower)(om_lower *l, const om_call *c);
  /* Optional: adds candidates for the outputs' extents (om__lower_candidate) that the generic
   * ones miss: sizes from the op's arguments (reshape, expand, slice, pad) or a sum (cat). The
   * probe checks every candidate by running infer at other sizes (docs/symbolic-axes.md). */
  bool (*extents)(om_lower *l, const om_call *c);
  /* An output axis may be a function of one input axis that the op computes (a convolution's or
   * a pool's floor((h + 2p - k) / s) + 1, an upsampling's 2h): the probe finds it from infer. */
  bool derives_extents;
  /* Its output is its input's value (a copy): the runs of om_trace_run do not match it as a
   * call, so a copy made at some sizes only (a reshape whose strides a size of 1 lets be a view
   * there) is not another path. */
  bool same_value;
  /* Bit k: given int attr k may change with the sizes (a slice's bounds, reshape sizes); the
   * lowering writes it with om__lower_arg. Any other attr that does is SymbolicShape. */
  uint64_t sym_args;
  /* Bit k: given float attr k may change with the sizes (an attention's scale 1 / sqrt(E) of a
   * symbolic E); the lowering writes it with om__lower_farg. Any other that does is SymbolicShape. */
  uint64_t sym_fargs;
  /* OM_PROMOTE_*: how apply converts the inputs' dtypes before the op sees them (PyTorch's type
   * promotion, torch.result_type: bool < int64 < float32 < float64), each conversion a cast op (so
   * a Cast node in a trace); 0: the op takes its inputs as they are. */
  uint8_t promote;
  /* Its infer and forward take float64 inputs (a double kernel, or infer's own refusal); apply
   * refuses float64 inputs of every other op, so no kernel reads doubles as floats. */
  bool takes_float64;
  const char *onnx;      /* the ONNX nodes lower writes, for docs/operators.md ("MatMul") */
  const void *impl;      /* per-op data for the family's shared functions (kernel tables) */
  om_op_test test;
} om_op_def;

/* Declarations of every op definition, and the table indexed by om_op. */
#define OM_OP(name, family) extern const om_op_def om__op_##name;
#include "ops/ops.def"
#undef OM_OP
extern const om_op_def *const om__ops[OM_OP_COUNT];
extern const char *const om__op_families[OM_OP_COUNT]; /* the family file of each op */

/** Checks that every op-table row has its parts (name, infer, forward, a backward or a
 *  non-differentiable mark, a lower rule and its onnx description, test settings); on a gap
 *  sets InvalidArgument naming it, false. */
bool om__ops_self_check(void);
/** The sample inputs of op's test settings (om_op_def.test), as the table-driven tests use them:
 *  writes test.n_in new references into in and returns how many, or -1 on error (nothing kept). */
int om__op_sample(om_op op, om_tensor **in);
/** The same for empty variant `variant` of the sample (0: the sample itself), with the axes the
 *  variant empties set to size (0, or another for its twin), and its attributes (the sample's,
 *  with its size attributes set too) written to attrs: test.n_in as above, 0 when the op has no
 *  such variant, -1 on error. */
int om__op_sample_variant(om_op op, int variant, int64_t size, om_tensor **in, om_attrs *attrs);

/* ---- errors ---- */
/** Sets the thread's last error (printf-style message); always returns false. */
bool om__fail(om_error_kind kind, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/** Writes "[2,3]" for a shape into buf (borrowed) and returns buf. */
const char *om__shape_str(char *buf, size_t len, const int64_t *shape, int ndim);
#define OM_SHAPE_STR_LEN 160
/** Checks that none of n tensors is NULL; for a NULL one sets InvalidArgument only if no error is pending. */
bool om__check_inputs(const char *who, om_tensor *const *ts, int n);

/* ---- threads (src/core/threads.c) ---- */
/** The most threads a kernel uses (the caller and OM_MAX_THREADS - 1 workers). */
#define OM_MAX_THREADS 4
/** One part of a job: part in [0, parts), worker in [0, threads used) names the scratch the part
 *  may use. Runs on any thread: it must not allocate, fail, record or trace (per-thread state). */
typedef void (*om__part_fn)(void *ctx, int64_t part, int worker);
/** Runs fn(ctx, p, w) for every part p on at most `most` threads (the caller among them) and
 *  returns when all are done; returns how many threads it was offered to (worker ids below it;
 *  a worker that was not ready in time takes none of the parts). The
 *  parts must not depend on the thread count for the bits to stay the same. */
int om__parallel(int64_t parts, int most, om__part_fn fn, void *ctx);

/* ---- allocation and storages ---- */
/** Whether one block of nbytes may be allocated (at most 2 GiB in WASM, where size_t is 32 bits);
 *  false with OutOfMemory naming who. */
bool om__block_fits(uint64_t nbytes, const char *who);
/** malloc with an overflow-checked uint64 size; OutOfMemory naming who on failure. */
void *om__alloc(uint64_t nbytes, const char *who);
/** n floats (and one more, so that n = 0 is a valid allocation), the caller's to free; NULL with
 *  OutOfMemory naming who, also for n past what any machine has. */
float *om__alloc_floats(int64_t n, const char *who);
/* The kernels' scratch slots: one per pool thread (0 .. OM_MAX_THREADS - 1, what the part that
 * thread runs writes), and one for an operand packed whole that all of them read. */
#define OM_SCRATCH_SHARED OM_MAX_THREADS
#define OM_SCRATCH_SLOTS (OM_MAX_THREADS + 1)
/** Scratch slot `slot`'s buffer (see OM_SCRATCH_SLOTS) of at least `floats` floats, and one
 *  float of slack past them, for a kernel's job on this thread: owned by this thread's block
 *  cache and kept for its next job, so steady-state calls do not allocate (the caller must not
 *  free it, nor use it past om__scratch_done or another om__scratch call for the same slot);
 *  contents undefined; NULL with OutOfMemory naming who. */
float *om__scratch(int slot, int64_t floats, const char *who);
/** After a job that took scratch: frees this thread's scratch where it holds more than the
 *  block cache keeps between jobs. */
void om__scratch_done(void);
/** A new storage of nbytes (zeroed when zero is set), refcount 1. */
om_storage *om__storage_new(uint64_t nbytes, bool zero, const char *who);
/** Drops a storage reference. */
void om__storage_release(om_storage *s);
/** Bytes per element. */
size_t om__dtype_size(om_dtype dtype);
/** Elements in a shape; -1 with InvalidArgument for a negative size or an overflow. */
int64_t om__numel(const int64_t *shape, int ndim, const char *who);
/** A new contiguous tensor of meta's shape (zeroed when zero is set). */
om_tensor *om__tensor_new(const om_meta *meta, bool zero, const char *who);
/** t itself (a new reference) when contiguous, else a contiguous copy: for kernels that want
 *  dense rows (not recorded by autograd or traced). NULL with OutOfMemory naming who. */
om_tensor *om__dense(om_tensor *t, const char *who);
/** A new contiguous tensor header of meta's shape on storage s (a new reference to s). */
om_tensor *om__tensor_on(om_storage *s, const om_meta *meta, const char *who);
/** A new tensor header sharing t's storage with the same view (no grad identity). */
om_tensor *om__alias(const om_tensor *t);
/** Fills strides for a contiguous row-major layout. */
void om__contiguous_strides(const int64_t *shape, int ndim, int64_t *strides);
/** Pointer to the first element of t (internal accessor; kernels read through it). */
static inline char *om__data(const om_tensor *t) {
  return (char *)t->storage->data + t->offset * (int64_t)om__dtype_size(t->dtype);
}
/** cumprod along dim, from the end when reverse (src/ops/misc.c; prod's backward). New reference. */
om_tensor *om__cumprod_dir(om_tensor *a, int64_t dim, bool reverse);
/** The gradient of values picked from a (borrowed) along dim by int64 indices (borrowed; topk's,
 *  cummax's): zeros of a's shape with g (borrowed) summed in at the indices (scatter_add, itself
 *  differentiable), g itself for a 0-d a; *gin a new reference. false on error (src/ops/sort.c). */
bool om__picked_backward(const om_tensor *a, int dim, om_tensor *indices, om_tensor *g, om_tensor **gin);
/** Wraps a possibly negative dim into [0, ndim); -1 with IndexOutOfRange naming who otherwise. */
int om__wrap_dim(int64_t dim, int ndim, const char *who);
/** Reads element k (row-major logical order) of t as a double. */
double om__get_flat(const om_tensor *t, int64_t k);

/* ---- the library's own math functions (src/core/math.c): the same bits on every machine ---- */
/** e^x, log x, log(1 + x) and x^y in double (about 1e-16 relative; C's special cases: NaN,
 *  infinities, signed zeros), from IEEE arithmetic alone. */
double om__exp(double x);
/** x[k] = om__exp(x[k]) for k < n, the same bits, two at a time with vector arithmetic. */
void om__exp_n(double *x, int64_t n);
/** y[k] = om__expf(x[k]), om__erff(x[k]), om__tanhf(x[k]), om__sigmoidf(x[k]) for k < n (y may
 *  be x): the same bits, four at a time on two pairs of double lanes. */
void om__expf_n(const float *x, float *y, int64_t n);
void om__erff_n(const float *x, float *y, int64_t n);
void om__tanhf_n(const float *x, float *y, int64_t n);
void om__sigmoidf_n(const float *x, float *y, int64_t n);
/** y[k] = erf(x[k]) for k < n (y may be x) by fast mode's float rational: within 7.2 ulp, a
 *  third of om__erff_n's time; the Session's fast mode only (docs/graph-runtime.md, "Modes"). */
void om__erff_fast_n(const float *x, float *y, int64_t n);
/** y[k] = GELU(x[k]) = x[k] Phi(x[k]) (approximate 'none') for k < n (y may be x): within 0.63
 *  ulp on every float, its tail (x below -0.7071068) from erfc, not 1 + erf, which cancels there.
 *  The _fast one: above the tail by fast erf (om__erff_fast_n) in float arithmetic, the tail the
 *  same bits as the exact one's; the Session's fast mode only. */
void om__gelu_erff_n(const float *x, float *y, int64_t n);
void om__gelu_erff_fast_n(const float *x, float *y, int64_t n);
double om__log(double x);
double om__log1p(double x);
double om__pow(double x, double y);
/** The same for floats, and tanh and erf: computed in double and rounded once (within an ulp of
 *  the exact value). */
float om__expf(float x);
float om__logf(float x);
float om__log1pf(float x);
float om__expm1f(float x);
float om__tanhf(float x);
float om__erff(float x);
/** sin and cos of the angle 2 pi t / n in double (0 <= t < n <= 2^40), to *s and *c. */
void om__sincos_turn(int64_t t, int64_t n, double *s, double *c);
/** sin, cos, tan (exact range reduction for every float), asin, acos, atan, atan2 (C's signed
 *  zeros and infinities), sinh, cosh, asinh, acosh, atanh: computed in double and rounded once. */
float om__sinf(float x);
float om__cosf(float x);
float om__tanf(float x);
float om__asinf(float x);
float om__acosf(float x);
float om__atanf(float x);
float om__atan2f(float y, float x);
float om__sinhf(float x);
float om__coshf(float x);
float om__asinhf(float x);
float om__acoshf(float x);
float om__atanhf(float x);
/** x rounded to the nearest float16 (bfloat16), ties to even, as a float32 holds it: past the
 *  largest finite value it is an infinity, float16's subnormals are kept, NaN stays NaN. */
float om__round_f16(float x);
float om__round_bf16(float x);
/** The float16 of bits h as a float32 (exact). */
float om__f16_to_f32(uint16_t h);
/** x rounded to the nearest value of float8 type `type` (ONNX's 17 FLOAT8E4M3FN, 18 E4M3FNUZ, 19
 *  E5M2, 20 E5M2FNUZ), ties to even, as a float32 holds it; out of range (an infinity too) the
 *  largest finite value when saturate, else NaN (E5M2: an infinity), as ONNX's Cast table. */
float om__round_f8(float x, int type, bool saturate);
/** The float8 of type `type` (17 to 20) of bits b as a float32 (exact). */
float om__f8_to_f32(uint8_t b, int type);
/** v modulo 2^bits (1 <= bits <= 32), in [-2^(bits-1), 2^(bits-1)) when is_signed, else in [0, 2^bits). */
int64_t om__wrap_int(int64_t v, int bits, bool is_signed);
/** a cast to dtype, its values then narrowed to ONNX element type onnx_type (0: none; FLOAT16,
 *  BFLOAT16 or a float8 type for float32: rounded, float8 saturating or not; INT8 to UINT32 for
 *  int64: wrapped; UINT64 for int64: its bits, a float saturated to [0, 2^64 - 1]); from_u64: a's
 *  int64 values are UINT64's bits. Returns a new reference, NULL with InvalidArgument for a type
 *  dtype does not hold. The Session's (no gradient, not traced). */
om_tensor *om__cast_narrow(om_tensor *a, om_dtype dtype, int onnx_type, bool saturate, bool from_u64);
/** 1 / (1 + e^-x) in float, from om__expf(-|x|). */
float om__sigmoidf(float x);
float om__powf(float x, float y);
/** y[k] = om__powf(x[k], e) for k < n (y may be x): the same bits; a square or a cube (e 2 or 3)
 *  four at a time. */
void om__powf_n(const float *x, float e, float *y, int64_t n);

/* ---- random numbers (src/core/rng.c) ---- */
/** The uniform in [0, 1) that om_rand draws for counter `counter` of seed (24 bits, exact in float). */
float om__uniform(uint64_t seed, uint64_t counter);
/** Takes the next n counters of the thread's default generator: its seed and the first counter. */
void om__rng_take(uint64_t n, uint64_t *seed, uint64_t *offset);

/* ---- strided iteration ---- */
/** Inner loop over n elements; p[i] is operand i's first element, s[i] its stride in bytes. */
typedef void (*om_loop_fn)(char **p, const int64_t *s, int64_t n, const void *ctx);
/** Calls fn over every element of shape, for nops operands with byte strides strides[op][dim]
 *  (0 on broadcast dims). Dims that are contiguous for every operand are merged first. */
void om__iterate(int nops, char **base, int64_t strides[][OM_MAX_DIMS], const int64_t *shape,
                 int ndim, om_loop_fn fn, const void *ctx);
/** om__iterate_each's cost of an element loaded, operated on and stored (a copy, an add, a relu:
 *  0.1 to 0.3 ns in WASM, a few of the product's multiply-adds). */
#define OM_EACH_SIMPLE 4.0
/** om__iterate for a loop whose calls on different elements of operand 0 are independent (a
 *  map, a copy, or a reduction folding into operand 0, each element of it in the order
 *  om__iterate visits its inputs), on the thread pool where the elements times `cost` (each
 *  element's work in the matrix product's multiply-adds, om__job_threads' unit) are worth it:
 *  split along the outermost dim along which operand 0 steps, so each of its elements is
 *  written by one part, in the same order; the same bits on any thread count. */
void om__iterate_each(int nops, char **base, int64_t strides[][OM_MAX_DIMS], const int64_t *shape, int ndim,
                      om_loop_fn fn, const void *ctx, double cost);
/** Byte strides of t as seen from an output of ndim dims (broadcast dims get stride 0). */
void om__broadcast_strides(const om_tensor *t, int ndim, int64_t *out);
/** The broadcast shape of n tensors into meta (dtype untouched); ShapeMismatch naming who otherwise. */
bool om__broadcast_shapes(om_tensor *const *ts, int n, om_meta *meta, const char *who);
/** Writes src converted into dst elementwise with broadcasting (dst borrowed, not version-bumped). */
void om__copy_into(om_tensor *dst, const om_tensor *src);
/** The matmul kernel on raw float32 matrices: c [m, n] (contiguous) = a [m, k] b [k, n], where
 *  a and b are read through element strides (row, column), so transposes cost nothing. Same
 *  fixed summation order as matmul. false (OutOfMemory naming who) if its scratch fails. */
bool om__gemm(const float *a, int64_t ars, int64_t acs, const float *b, int64_t brs, int64_t bcs, float *c,
              int64_t m, int64_t n, int64_t k, const char *who);
/** c [m, n] += a b, as om__gemm (the product summed in the same order, then added to c): weight
 *  gradients summed over a batch (src/ops/conv.c). */
bool om__gemm_acc(const float *a, int64_t ars, int64_t acs, const float *b, int64_t brs, int64_t bcs, float *c,
                  int64_t m, int64_t n, int64_t k, const char *who);
/** The fewest columns of an m-row, k-deep product worth a part of a job of their own (its blocks on
 *  more than one thread, a convolution's bands). */
int64_t om__gemm_least(int64_t m, int64_t k);
/** The floats of `count` [m, k] matrices packed whole (om__gemm_pack); 0 where packing them
 *  first is not worth it (fewer rows than a tile, which om__gemm_on reads in place) or not
 *  allowed (more than the most floats a job packs beforehand). */
int64_t om__gemm_packed(int64_t m, int64_t k, int64_t count);
/** Packs the `count` matrices a + t step [m, k] (strides ars, acs) whole into the caller's apk
 *  (om__gemm_packed floats, not 0) on up to `threads` threads (one below the size where waking
 *  the workers costs more than the copy), for om__gemm_on to read instead of packing them per
 *  call. */
void om__gemm_pack(const float *a, int64_t ars, int64_t acs, int64_t m, int64_t k, int64_t count, int64_t step, int threads, float *apk);
/** The threads a job of `parts` parts and `macs` multiply-adds in all runs on: 1 below the size
 *  where waking the workers costs more than it saves, else om_get_num_threads() capped at parts. */
int om__job_threads(double macs, int64_t parts);
/** The parts of a job of `units` equal, independent units on `threads` threads: a few a thread
 *  (4), so a thread the machine slows leaves the others little to wait for; at most units. */
int64_t om__few_parts(int64_t units, int threads);
/** The floats of scratch om__gemm_on needs for an m x n x k product (in_place: with koff, B's rows
 *  read in place). */
int64_t om__gemm_scratch(int64_t m, int64_t n, int64_t k, bool in_place);
/** c [m, n] (row stride ldc) = a b on the calling thread only, in the caller's scratch
 *  (om__gemm_scratch floats), with om__gemm's bits: a read from apk where not NULL (a packed
 *  whole by om__gemm_pack), b strided (brs, bcs) as om__gemm reads it, or
 *  with koff row kk of b the n floats at b + koff[kk], each read running up to 7 floats
 *  past them (the caller's slack): a stride-1 convolution over a padded image without its im2col
 *  matrix. It neither allocates nor fails, so a part of om__parallel may call it. */
void om__gemm_on(const float *a, int64_t ars, int64_t acs, const float *apk, const float *b, int64_t brs, int64_t bcs,
                 const int64_t *koff, float *c, int64_t ldc, int64_t m, int64_t n, int64_t k, float *scratch);
/** The floats of a [k, n] matrix b packed whole by om__gemm_pack_b. */
int64_t om__gemm_packed_b(int64_t n, int64_t k);
/** Packs b [k, n] (strides brs, bcs) whole into the caller's bpk (om__gemm_packed_b floats) for
 *  om__gemm_on_b: a weight that many products on one thread read (a recurrent layer's w_hh per step). */
void om__gemm_pack_b(const float *b, int64_t brs, int64_t bcs, int64_t n, int64_t k, float *bpk);
/** c [m, n] (row stride ldc) = a b on the calling thread, b packed whole in bpk (om__gemm_pack_b),
 *  in the caller's scratch (om__gemm_scratch(m, n, k, false) floats), with om__gemm's bits. It
 *  neither allocates nor fails, so a part of om__parallel may call it. */
void om__gemm_on_b(const float *a, int64_t ars, int64_t acs, const float *bpk, float *c, int64_t ldc, int64_t m, int64_t n, int64_t k,
                   float *scratch);
/** One softmax (or log_softmax) row of n elements stride apart, r into y (y may be r: every read
 *  comes before the first write); e is scratch for n doubles. The softmax kernel and the
 *  attention op's share it, so the two give the same bits (src/ops/norm.c). */
void om__softmax_row(const float *r, float *y, int64_t n, int64_t stride, double *e, bool log_out);

/* The attention op's attributes (src/ops/matmul.c): i = [has_mask, mask kind, scale kind],
 * f = [scale, fill]. The mask is added (float), or a bool mask picks the scores where it is
 * true and fill elsewhere (KEEP), or fill where it is true (FILL); the scale multiplies or
 * divides the scores (MUL, DIV), or q's every element before the product (Q_MUL, Q_DIV: what
 * torch.onnx's nn.MultiheadAttention writes, q / sqrt(d) before the scores). */
enum { OM_ATTN_ADD = 0, OM_ATTN_KEEP = 1, OM_ATTN_FILL = 2 };
enum { OM_ATTN_UNSCALED = 0, OM_ATTN_MUL = 1, OM_ATTN_DIV = 2, OM_ATTN_Q_MUL = 3, OM_ATTN_Q_DIV = 4 };
/** softmax(scale(q kt) (+ mask)) v, the attention op: q [..., L, E], kt [..., E, S] (the key
 *  transposed, usually a view), v [..., S, Ev], mask NULL or broadcasting to [..., L, S]; batch
 *  dims broadcast. The same bits as the separate ops (matmul, mul or div, add or where,
 *  softmax, matmul) without the score matrix. New reference, NULL on error. */
om_tensor *om__attention(om_tensor *q, om_tensor *kt, om_tensor *v, om_tensor *mask, int mask_kind, int scale_kind,
                         double scale, double fill);
/** x [..., n] normalised by the root of the mean of its squares over the last axis, then times
 *  weight [n] (NULL: none): x (1 / sqrt(mean(x^2) + eps)) (form 0) or x / sqrt(mean(x^2) + eps)
 *  (form 1), with the bits of those separate ops (the rms_norm op). New reference, NULL on error. */
om_tensor *om__rms_norm(om_tensor *x, om_tensor *weight, double eps, int form);

/* ---- autograd and the apply path ---- */
/** Applies op and returns its single output (new reference), NULL on error. */
om_tensor *om__apply1(om_op op, om_tensor *const *in, int n_in, const om_attrs *attrs);
/** Applies op with attrs; writes n_out outputs; returns their count or -1. */
int om__apply(om_op op, om_tensor *const *in, int n_in, const om_attrs *attrs, om_tensor **out);
/** True when t takes part in autograd (a marked leaf or a recorded result). */
bool om__needs_grad(const om_tensor *t);
/** Gives view v a record reading its base's current value when a write through another view
 *  changed the base since v's record was made (PyTorch regenerates a view's grad_fn so). */
bool om__view_sync(om_tensor *v);
/** Builds the record of op on in[0..n_in) with attrs a for out, whose values are already
 *  written (an in-place write): out's record becomes it. */
bool om__record_write(om_op op, om_tensor *const *in, int n_in, const om_attrs *a, om_tensor *out);
/** Drops a record reference. */
void om__record_release(om_record *r);
/** Sums g over the dims that broadcasting added or stretched, so it has the given shape. New reference. */
om_tensor *om__sum_to(om_tensor *g, const int64_t *shape, int ndim);

/* ---- attribute helpers ---- */
static inline om_attrs om__attrs_i(int n, const int64_t *v) {
  om_attrs a = {0};
  a.n_i = n;
  for (int k = 0; k < n; k++) a.i[k] = v[k];
  return a;
}
/** Releases n tensors (NULL entries ignored). */
void om__release_all(om_tensor **ts, int n);
/* base with its diagonal (offset, canonical dims d1, d2) replaced by v: a new tensor (src/ops/shape.c). */
om_tensor *om__diagonal_scatter(om_tensor *base, om_tensor *v, int64_t offset, int d1, int d2);

/* A scope of temporaries for composite code (backward rules): om__keep registers a new
 * reference, om__scope_end releases them all. NULL results pass through (the error is set). */
#define OM_SCOPE_MAX 32
typedef struct om_scope {
  int n;
  om_tensor *t[OM_SCOPE_MAX];
} om_scope;
/* A full scope is a bug in the composite (callers keep well under OM_SCOPE_MAX), but one that a
 * loop over input sizes could reach: it fails the call loudly instead of writing past the array. */
static inline om_tensor *om__keep(om_scope *s, om_tensor *t) {
  if (t && s->n == OM_SCOPE_MAX) {
    om_tensor_release(t);
    om__fail(OM_ERR_UNSUPPORTED, "internal: a composite kept more than %d temporaries", OM_SCOPE_MAX);
    return NULL;
  }
  if (t) s->t[s->n++] = t;
  return t;
}
static inline void om__scope_end(om_scope *s) { om__release_all(s->t, s->n); }
/** True when input i of the record wants a gradient. */
static inline bool om__wants(const om_record *r, int i) { return om__needs_grad(r->in[i]); }

/* ---- tracing: the hooks in om__apply and the creation functions, and the lowering helpers (src/trace/) ---- */
typedef struct om_trace om_trace;
/** True when t is a value of the trace recording on this thread (in a run at other sizes: a phantom). */
bool om__traced(const om_tensor *t);
/* What the tracer makes of a call (om__trace_lower). */
enum { OM_CALL_EAGER = 0, OM_CALL_LOWERED = 1, OM_CALL_PHANTOM = 2 };
/** At the start of op call c, before infer (given: the attrs as the caller passed them): logs it
 *  in a run at other sizes, or, in the record run, finds it in the other runs and checks the
 *  model made the same call there. Returns its index in the run (>= 0), -1 when not logged,
 *  OM_CALL_SAME_VALUE for a same_value op (not matched: its output stands for its input), -2
 *  on error (a trace error: the trace has ended). */
enum { OM_CALL_SAME_VALUE = -3 };
int64_t om__trace_begin_call(const om_op_def *def, om_call *c, const om_attrs *given);
/** After infer: OM_CALL_EAGER (computed as usual: constants only, nothing that changes with the
 *  sizes), OM_CALL_LOWERED (written into the graph, before anything is computed, so a refused
 *  op fails before it costs anything), OM_CALL_PHANTOM (a run at other sizes: the outputs are
 *  phantoms, only a view's strides are computed), or -1 on error (trace errors end the trace). */
int om__trace_lower(const om_op_def *def, om_call *c, const om_attrs *given, int64_t index);
/** After forward (ok) or a failure at any step after om__trace_begin_call (ok false): gives the
 *  outputs their graph values, logs them, or drops what lowering added. how: what
 *  om__trace_lower returned (-1 when it did not run). */
void om__trace_end_call(const om_call *c, int64_t index, int how, bool ok);
/* What a creation function made, for om__trace_created. */
typedef enum om_created { OM_CREATED_FULL, OM_CREATED_ARANGE, OM_CREATED_RANDOM, OM_CREATED_DATA, OM_CREATED_LINSPACE } om_created;
/** After a creation function made t (owned) while a trace records: logs it (a run at other
 *  sizes); in the record run, when its sizes or its value change with the sizes, t becomes a
 *  traced value computed in the graph (full: Expand of its value; arange: Range; data of one
 *  element: the value; linspace: its two halves in double), or SymbolicShape for what the graph cannot reproduce (random values or
 *  data of a changing size). args: full: value; arange: start, end, step; linspace: start, end; data: the element (one
 *  element) or a hash of the bytes. Returns t, or NULL (t released) on error. who names the
 *  public function. */
om_tensor *om__trace_created(om_tensor *t, om_created kind, const double *args, int n_args, const char *who);
/** Whether a tensor of meta is made shape only (a phantom) where it would be computed: in the
 *  runs over a symbol's declared range, a constant of more than 65536 elements (a mask at a size
 *  far above the example, whose values the shape-only run has no use for); marks the run as one
 *  that made such a constant (its values fail nothing there). */
bool om__trace_shape_only(const om_meta *meta);
/** Refuses a read of t by user code while t is traced (DataDependent); who names the call. Ends
 *  the trace on failure (in a run at other sizes: only fails). */
bool om__trace_check_read(const om_tensor *t, const char *who);
/** Refuses a write into the tensor base (what a write's target views) when it holds a graph
 *  input or a parameter (InPlaceMutation), as om__trace_check_read fails. */
bool om__trace_check_write(const om_tensor *base, const char *who);
/** After view op call c (given: its attrs as passed) made its outputs while a trace records:
 *  links each to its input, so a write into it can be recorded as a write into its base. false
 *  on OutOfMemory. */
bool om__trace_link_view(const om_call *c, const om_attrs *given);
/** Frees t's view link (its parent reference with it). */
void om__view_link_free(om_view_link *link);
/** While a trace records: when a write replaced the value of what t views (trace/write.c), t's
 *  traced value becomes its view of the new value (the view op again, recorded). false on error. */
bool om__trace_sync(om_tensor *t);
/** While a trace records: the write of src (borrowed; broadcast to dst's shape) into dst,
 *  recorded as the functional op that makes dst's base anew (slice_scatter up the views) and
 *  made eagerly too; InPlaceMutation for a graph input's or a parameter's storage. who names
 *  the call. */
bool om__trace_write(om_tensor *dst, const om_tensor *src, const char *who);
/** The eager part of an in-place write: src's elements (broadcast, converted) into dst's, the
 *  storage's version bumped. */
bool om__write_values(om_tensor *dst, const om_tensor *src, const char *who);
/* What the tracer needs of a graph runtime: to run a graph it wrote (a loop rolled into an ONNX
 * Loop, src/trace/branch.c) against the model run eagerly, before it keeps it. The tracer defines
 * the seam and the runtime fills it (src/runtime/trace_check.c, where the public om_trace_run
 * hands the Session to om__trace_run), so the tracer never calls up into the runtime. */
typedef struct om_graph_runner {
  /** A runner of traced model m (borrowed; it outlives the runner), NULL when the runtime does
   *  not take it (no error set: the caller drops what it wrote) or on error (set). */
  void *(*open)(const om_traced_model *m);
  /** om_session_run's contract: outputs (new references) in order, their count, -1 on error. */
  int (*run)(void *runner, om_tensor *const *inputs, int n_inputs, om_tensor **outputs, int max_outputs);
  /** Frees a runner (NULL ignored). */
  void (*close)(void *runner);
} om_graph_runner;
/** om_trace_run's whole work, with runner (borrowed, for the whole trace; NULL: nothing written
 *  is run, so no loop is rolled) to check what the trace writes. */
int om__trace_run(om_trace_fn fn, void *ctx, om_tensor **outputs, int max_outputs, const om_graph_runner *runner);
/* ---- copy on write for traced models' constants (src/tensor/snapshot.c) ---- */
/** Registers t (borrowed; it must outlive the entry) as reading its storage in place, to be
 *  given a copy of today's bytes before the storage's first in-place write; NULL with
 *  OutOfMemory. who names the public function. */
om_snapshot *om__snapshot_take(om_tensor *t, const char *who);
/** Unregisters and frees an entry of om__snapshot_take (NULL: nothing). */
void om__snapshot_drop(om_snapshot *s);
/** Before an in-place write to s: traced models holding s's current values get their own copy. */
bool om__storage_will_change(om_storage *s, const char *who);
/** Sets a trace error and ends the recording (the message is kept for om_trace_finish). In a
 *  run at other sizes (om_trace_run) it only sets the error: the record run decides. */
bool om__trace_fail(om_error_kind kind, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/** While > 0 calls are not logged or lowered as the model's (backward during a trace). */
void om__trace_hold(int delta);
/** True in a run at other sizes (om_trace_run): nothing is computed for phantoms. */
bool om__trace_shadow(void);
/** A phantom of meta for a call on phantoms: its shape on the trace's storage without data. */
om_tensor *om__trace_phantom(const om_meta *meta);

/* An ONNX node attribute, for om__emit. */
/* TENSOR (ConstantOfShape's value) and OTHER (a type the graph layer reads no value of: strings,
 * kept so that a rule can refuse an attribute it does not take) come from the ONNX reader. */
typedef enum om_gattr_type { OM_GATTR_INT, OM_GATTR_FLOAT, OM_GATTR_INTS, OM_GATTR_FLOATS, OM_GATTR_STRING, OM_GATTR_TENSOR, OM_GATTR_OTHER, OM_GATTR_GRAPH, OM_GATTR_STRINGS } om_gattr_type;
/* A tensor of strings (src/runtime/strings.c; public as om_strings): its shape and count, and each
 * element's bytes (NUL-terminated after len[k] bytes) in one block. Immutable once made. */
struct om_strings {
  int64_t refcount;
  int ndim;
  int64_t shape[OM_MAX_DIMS];
  int64_t n;
  size_t *len;  /* n lengths */
  char **s;     /* n pointers into bytes */
  char *bytes;
};
/** A new tensor of strings of shape meta (ndim, shape) with room for `bytes` bytes of elements in
 *  all (their NULs aside): s and len left for the caller to fill (om__strings_put), refcount 1;
 *  NULL with OutOfMemory past OM_STRINGS_MAX elements or bytes. */
om_strings *om__strings_alloc(int ndim, const int64_t *shape, uint64_t bytes, const char *who);
/** Puts element k of t (made by om__strings_alloc, elements before k put) as bytes s[0..len). */
void om__strings_put(om_strings *t, int64_t k, const char *s, size_t len);
#define OM_STRINGS_MAX ((int64_t)1 << 31)

typedef struct om_gattr {
  const char *name; /* static string (the reader's: in the graph's arena) */
  om_gattr_type type;
  int64_t i;        /* INT; a TENSOR from the ONNX reader: its ONNX element type where its dtype holds a narrower one, else 0 */
  double f;         /* FLOAT (written as a float) */
  int n;            /* INTS: how many */
  const int64_t *ints; /* INTS: the values (copied by om__emit) */
  const float *floats; /* FLOATS: n values (copied by om__emit) */
  const char *s;       /* STRING: a static string (the reader's: in the graph's arena) */
  const char *const *strs; /* STRINGS (imported graphs only): n NUL-terminated strings in the graph's arena */
  om_tensor *t;        /* TENSOR: owned by the graph that holds the node */
  struct om_graph *g;  /* GRAPH (If's branches, Loop's and Scan's body; imported graphs only): owned likewise */
} om_gattr;
#define OM_ATTR_INT(nm, v) ((om_gattr){.name = (nm), .type = OM_GATTR_INT, .i = (v)})
#define OM_ATTR_FLOAT(nm, v) ((om_gattr){.name = (nm), .type = OM_GATTR_FLOAT, .f = (v)})
#define OM_ATTR_INTS(nm, p, cnt) ((om_gattr){.name = (nm), .type = OM_GATTR_INTS, .ints = (p), .n = (cnt)})
#define OM_ATTR_FLOATS(nm, p, cnt) ((om_gattr){.name = (nm), .type = OM_GATTR_FLOATS, .floats = (p), .n = (cnt)})
#define OM_ATTR_STRING(nm, v) ((om_gattr){.name = (nm), .type = OM_GATTR_STRING, .s = (v)})

/** Whether ONNX Resize's nearest (asymmetric, floor) by the whole scale s picks the pixels of the
 *  eager kernel's nearest by s (src/ops/resize.c: the argument; tests/c/test_index.c checks it). */
bool om__nearest_scale_exact(int64_t s);
/** The graph value of input i of the call being lowered (a traced value or a captured constant). */
int om__lower_input(om_lower *l, int i);
/** The attrs as the caller passed them, before infer canonicalised them (negative indices kept). */
const om_attrs *om__lower_given(om_lower *l);
/* Extents (docs/symbolic-axes.md): an axis's extent is an expression id over the declared
 * symbols, -1 when the axis is fixed. */
/** The extent of axis d of input i, or of output j (as the probe chose it); -1 when fixed. */
int om__lower_in_ext(om_lower *l, int i, int d);
int om__lower_out_ext(om_lower *l, int j, int d);
/** The extent written out (its dim_param: "batch", "seq-1"), NULL when fixed. */
const char *om__lower_input_sym(om_lower *l, int i, int d);
const char *om__lower_output_sym(om_lower *l, int j, int d);
/** Given int attr k as the expression the model computed it by (a constant when it is the same
 *  at every size; om_trace_run's runs at other sizes tell). */
int om__lower_arg(om_lower *l, int k);
/** True when given int attr k changes with the sizes. */
bool om__lower_arg_moves(om_lower *l, int k);
/** Given float attr k (a bit of the op's sym_fargs) as a float32 0-d value: computed from the
 *  sizes where it changes with them (1 / sqrt(E)), else a constant of its value. -1 on error. */
int om__lower_farg(om_lower *l, int k);
/** True when given float attr k changes with the sizes (a bit of the op's sym_fargs). */
bool om__lower_farg_moves(om_lower *l, int k);
/** (float)(1 / f) of given float attr k as a float32 [1] value, as a kernel takes a scale: computed
 *  in double from the sizes where f moves (the model's f bit for bit, or -1 with SymbolicShape),
 *  else a constant. -1 on error. */
int om__lower_farg_recip(om_lower *l, int k);
/** The extent n when input i is 0, 1, ..., n - 1 along its one axis of extent n, every other of
 *  size 1 (an arange at a symbolic length, unsqueezed), else -1. */
int om__lower_iota(om_lower *l, int i);
/** Marks value v (the call's output, borrowed) an iota when input 0 is one (a view that only adds
 *  axes of size 1). */
void om__lower_keep_iota(om_lower *l, int v);
/** Expression arithmetic for extents rules (src/trace/expr.c): -1 on error (the trace ended). */
int om__lower_x_const(om_lower *l, int64_t c);
int om__lower_x_lin(om_lower *l, int64_t ca, int a, int64_t cb, int b, int64_t c); /* ca a + cb b + c; -1 for none */
int om__lower_x_mul(om_lower *l, int a, int b);
int om__lower_x_floordiv(om_lower *l, int a, int64_t d);
int om__lower_x_minc(om_lower *l, int a, int64_t c); /* min(a, c) */
int om__lower_x_fmul(om_lower *l, int a, double s); /* floor(double(a) * s) in IEEE double */
int om__lower_x_divexact(om_lower *l, int a, int b); /* -1 (no error) when it does not divide */
bool om__lower_x_is_const(om_lower *l, int a, int64_t *c);
/** The smallest value expression x takes over the symbols' ranges, to *min; false when unknown
 *  (om__x_min: x's form does not show that it never decreases). */
bool om__lower_x_min(om_lower *l, int x, int64_t *min);
/** Value v (of meta, whose axis grows by 1) with one more row along axis, for an op whose rows do
 *  not mix (the rows of an LSTM batch) and that onnxruntime refuses or aborts on when the axis is
 *  empty at some size: the row is a ReduceSum of v over the axis (keepdims), so it exists at 0
 *  too, its values any; om__lower_drop_row slices it off the result. -1 on error. */
int om__lower_extra_row(om_lower *l, int v, om_meta *meta, int axis);
/** Value v (of meta) without its last row along axis. -1 on error. */
int om__lower_drop_row(om_lower *l, int v, om_meta meta, int axis);
/** Whether extent x (an expression; -1, a fixed size, never) can be 0 at some size the symbols
 *  take (x[:, 2:] of a T from 2), as far as om__x_min sees: onnxruntime fails or aborts on some
 *  empty values, and an extent of 0 in a shape operand needs allowzero. */
bool om__lower_may_be_0(om_lower *l, int x);
/** What a mean over axes of extents x[0..n) (expressions) divides by, as a 0-d value of dtype
 *  (float32, or float64 for a sum in double), when
 *  the count can be 0 (a mean of nothing is NaN, 0 / 0 as PyTorch, where ReduceMean gives 0): a
 *  constant at fixed sizes, computed from the sizes when a symbolic extent can be 0 at some size
 *  (x[:, 2:] of a T from 2). -2 when the count is never 0 (ReduceMean then), -1 on error. */
int om__lower_count_divisor(om_lower *l, const int *x, int n, om_dtype dtype);
/** Whether a float32 sum of input i along its axes dims[0..n) is written in float64 (Cast, the
 *  sum, Cast back): eager sums float32 in double (reduce.c, misc.c), so its result is the sum
 *  rounded once, whatever the order; onnxruntime sums float32 in float32 in its own order, whose
 *  rounding grows with the length. Over a fixed length that is bounded at every size; over an
 *  axis that grows with a symbol it is not (random models 22:1562, 22:2471: 1.2 to 1.3 times
 *  the oracle's bound at 8 times the example), and a sum in double gives eager's bits there. */
bool om__lower_sum_in_double(om_lower *l, int i, const int64_t *dims, int n);
/** Cast of value v (shape as meta m's) to dtype; the new value, -1 on error (v < 0 included). */
int om__lower_cast(om_lower *l, int v, const om_meta *m, om_dtype dtype);
/** The extent of axis d of input i as an expression even when fixed (a constant then). */
int om__lower_in_x(om_lower *l, int i, int d);
/** For an op's extents rule: expression x (-1: the output's fixed size) is a candidate for output
 *  j's axis d; the probe takes the first candidate infer confirms at every size it tries. */
void om__lower_candidate(om_lower *l, int j, int d, int x);
/** The run-time value of expression x as an int64 [1] value: a constant, or computed from the
 *  graph inputs' Shape (one Shape node per symbol for the whole graph), with Mul, Div and Add
 *  nodes written once for the whole graph. -1 on error. */
int om__lower_x_value(om_lower *l, int x);
/** The run-time value of expression x as a 0-d int64 value (an index, a Range bound). -1 on error. */
int om__lower_x_scalar(om_lower *l, int x);
/** A shape operand of ndim entries: shape[d] where ext[d] is -1, else the run-time value of
 *  expression ext[d], joined by one Concat; all constants is one initializer. -1 on error. */
int om__lower_shape_operand(om_lower *l, const int64_t *shape, const int *ext, int ndim);
/** Input i of the call being lowered with count zero slices more at the end of axis, so that a
 *  contraction over an extent that is 0 at some size runs over zeros instead: onnxruntime's
 *  MatMul and ConvTranspose do not write an output they sum nothing into. -1 on error. */
int om__lower_zero_slices(om_lower *l, int i, int axis, int64_t count);
/** Emits ONNX node op_type reading in[0..n_in) (value ids; -1 omits an optional input) and
 *  writing n_out new values typed by meta[0..n_out), whose ids go to out (a Pad with its axes
 *  input, every axis, added when not given: onnxruntime's PadFusion skips it). false on error. */
bool om__emit(om_lower *l, const char *op_type, const int *in, int n_in, const om_meta *meta, int n_out, int *out,
              const om_gattr *attrs, int n_attrs);
/** An int64 initializer (deduplicated by value): n values as 1-D, or one value as 0-d when
 *  n is -1. Returns its value id, -1 on error. */
int om__lower_ints(om_lower *l, const int64_t *v, int n);
/** A float32 1-D initializer of n values (deduplicated by value). Returns its value id, -1 on error. */
int om__lower_floats(om_lower *l, const float *v, int n);
/** A 0-d initializer of dtype holding v (deduplicated by value). -1 on error. */
int om__lower_scalar(om_lower *l, double v, om_dtype dtype);
/** A float32 0-d constant holding v (rounded to float): a Constant node with value_float.
 *  Returns its value id, -1 on error. */
int om__lower_float(om_lower *l, double v);
/** Makes value v output j of the call (the last node's output, or an input's value for an alias). */
void om__lower_output(om_lower *l, int j, int v);
/** The common case: one node reading every input of c and writing every output. */
bool om__lower_node(om_lower *l, const om_call *c, const char *op_type, const om_gattr *attrs, int n_attrs);
/** Output 0 shares input 0's value and no node is written (reshape to the same shape, clone). */
bool om__lower_alias(om_lower *l);
/** A 0-d input's (values, indices) pair: output 0 its value (an alias), output 1 its index 0 (a
 *  constant), as max(dim), topk and cummax of a 0-d tensor give. false on error. */
bool om__lower_own_pick(om_lower *l);
/** Refuses the call with UnsupportedOperation naming the op and why (ends the trace). */
bool om__lower_refuse(om_lower *l, const om_call *c, const char *why);
/** Refuses the call with SymbolicShape: symbolic axis d of input i cannot be expressed, because what. */
bool om__lower_baked(om_lower *l, const om_call *c, int i, int d, const char *what);
/** For an op's lower (src/ops/shape.c): when every output of c is empty, writes each as zeros of
 *  its shape (ConstantOfShape, Cast; a symbolic axis's extent computed at run time, so the ops
 *  that call it have outputs whose symbols their inputs carry, none derived) and returns 1: an
 *  empty value has nothing to compute, and onnxruntime refuses or aborts on some empty inputs
 *  (an LSTM with a batch of 0); 0 (nothing written) when an output has elements, -1 on error. */
int om__lower_empty(om_lower *l, const om_call *c);

/* ---- a plan being made: calls recorded instead of run ----
 * The runtime makes a plan by calling the library's ops on planned tensors (storages without
 * data yet, their `planned` set). While it does, it installs a capture on the thread, and
 * om__apply hands every call with a planned input to it instead of computing it. The seam is
 * defined here, below the ops, and filled in by the runtime (src/runtime/session.c), so the
 * ops never call up into the layer that uses them. */
typedef struct om_capture_hook {
  /* Records call c (after infer) as a step of the plan: gives it outputs on new planned buffers
   * (views: headers on their input's buffer, with the strides forward computes). false on error. */
  bool (*call)(void *ctx, const om_op_def *def, om_call *c);
  void *ctx; /* the runtime's plan being made */
} om_capture_hook;

/* ---- per-thread state ---- */
/* Freed blocks kept for reuse on one thread (src/tensor/tensor.c, "the block cache"): data blocks
 * by size class, tensor headers and storage records, each list linked through its blocks' first
 * word. */
#define OM_CACHE_CLASSES 57 /* 64 bytes, then quarters of each power of two up to OM_CACHE_BLOCK_MAX */
typedef struct om_block_cache {
  void *data[OM_CACHE_CLASSES];
  void *tensors, *storages;
  int64_t bytes; /* held in all */
  float *scratch[OM_SCRATCH_SLOTS]; /* the kernels' scratch (om__scratch) */
  int64_t scratch_floats[OM_SCRATCH_SLOTS];
  bool exit_hook; /* threaded builds: the thread's exit frees what the cache holds */
} om_block_cache;

typedef struct om_thread_state {
  bool grad_disabled;
  om_error_kind err_kind;
  char err_msg[512];
  uint64_t rng_seed, rng_offset;
  int64_t live_tensors, live_bytes;
  /* while the tracer checks a rolled loop far above the example with real tensors (branch.c,
   * roll_loop): the most live bytes storages may reach, 0 for no limit, and whether a storage
   * was refused for it (the check then skips that size instead of growing the heap for it); also
   * while it traces the model again at a re-example's sizes (branch.c, om__branch_reexample) */
  int64_t bytes_cap;
  bool cap_hit;
  om_record *dead_records; /* records at refcount 0 whose inputs are still to be released */
  bool draining;
  bool ops_checked; /* debug builds: the op table passed om__ops_self_check on this thread */
  om_trace *trace;        /* the recording on this thread, NULL when none */
  uint32_t trace_serial;  /* ids of traces begun on this thread (tensors carry theirs) */
  om_error_kind trace_end_kind; /* the trace error that ended the last recording, for finish */
  char trace_end_msg[512];
  const om_capture_hook *capture; /* a plan being made on this thread (om_capture_hook), NULL when none */
  om_block_cache cache;
} om_thread_state;
om_thread_state *om__state(void);

#endif /* OM_INTERNAL_H */
