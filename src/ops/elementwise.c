/* Elementwise ops: broadcasting binary math, unary math (trigonometric and hyperbolic functions
 * too), activations (with float parameters), clamp, comparisons, logical and bitwise ops, where
 * and cast. Their operands' dtypes arrive promoted (om__apply, the op's promote rule).
 * Each op: infer (dtype rules + broadcasting), a kernel table indexed by dtype, the backward
 * rule written with public ops, and its test settings. Kernels are plain loops over one run
 * of elements (om__iterate supplies the runs); the contiguous case is a separate loop the
 * compiler vectorises, and it computes the same bits as the strided one. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

/* ---- kernel generators ---- */

#define BINARY_LOOP(fname, T, TO, EXPR)                                                  \
  static void fname(char **p, const int64_t *s, int64_t n, const void *ctx) {            \
    (void)ctx;                                                                           \
    if (s[0] == sizeof(TO) && s[1] == sizeof(T) && s[2] == sizeof(T)) {                  \
      TO *o = (TO *)p[0];                                                                \
      const T *pa = (const T *)p[1], *pb = (const T *)p[2];                              \
      for (int64_t i = 0; i < n; i++) {                                                  \
        T a = pa[i], b = pb[i];                                                          \
        o[i] = (TO)(EXPR);                                                               \
      }                                                                                  \
    } else if (s[0] == sizeof(TO) && s[1] == sizeof(T) && s[2] == 0) {                   \
      TO *o = (TO *)p[0];                                                                \
      const T *pa = (const T *)p[1], b = *(const T *)p[2];                               \
      for (int64_t i = 0; i < n; i++) {                                                  \
        T a = pa[i];                                                                     \
        o[i] = (TO)(EXPR);                                                               \
      }                                                                                  \
    } else {                                                                             \
      for (int64_t i = 0; i < n; i++) {                                                  \
        T a = *(const T *)(p[1] + i * s[1]), b = *(const T *)(p[2] + i * s[2]);          \
        *(TO *)(p[0] + i * s[0]) = (TO)(EXPR);                                           \
      }                                                                                  \
    }                                                                                    \
  }

/* One input, one output of type T: o = EXPR of a, after the statements PRELUDE (which may read
 * ctx, the call's om_attrs). */
#define MAP_LOOP(fname, T, EXPR, ...)                                                    \
  static void fname(char **p, const int64_t *s, int64_t n, const void *ctx) {            \
    __VA_ARGS__;                                                                         \
    if (s[0] == sizeof(T) && s[1] == sizeof(T)) {                                        \
      T *o = (T *)p[0];                                                                  \
      const T *pa = (const T *)p[1];                                                     \
      for (int64_t i = 0; i < n; i++) {                                                  \
        T a = pa[i];                                                                     \
        o[i] = (T)(EXPR);                                                                \
      }                                                                                  \
    } else {                                                                             \
      for (int64_t i = 0; i < n; i++) {                                                  \
        T a = *(const T *)(p[1] + i * s[1]);                                             \
        *(T *)(p[0] + i * s[0]) = (T)(EXPR);                                             \
      }                                                                                  \
    }                                                                                    \
  }
#define UNARY_LOOP(fname, T, EXPR) MAP_LOOP(fname, T, EXPR, (void)ctx)

/* A loop for math done on arrays (src/core/math.c's *_n, four values at a time): FN(in, out, n,
 * ctx) on a contiguous run as it is, on a strided one through chunks on the stack. */
#define ARRAY_LOOP(fname, FN)                                                            \
  static void fname(char **p, const int64_t *s, int64_t n, const void *ctx) {            \
    if (s[0] == sizeof(float) && s[1] == sizeof(float)) {                                \
      FN((const float *)p[1], (float *)p[0], n, ctx);                                    \
      return;                                                                            \
    }                                                                                    \
    float in[64], out[64];                                                               \
    for (int64_t i0 = 0; i0 < n; i0 += 64) {                                             \
      int64_t m = n - i0 < 64 ? n - i0 : 64;                                             \
      for (int64_t i = 0; i < m; i++) in[i] = *(const float *)(p[1] + (i0 + i) * s[1]);  \
      FN(in, out, m, ctx);                                                               \
      for (int64_t i = 0; i < m; i++) *(float *)(p[0] + (i0 + i) * s[0]) = out[i];       \
    }                                                                                    \
  }

/* The math library's array functions as array loops. */
#define MATH_ARRAY_LOOP(fname, FN)                                               \
  static void fname##_n(const float *x, float *y, int64_t n, const void *ctx) { \
    (void)ctx;                                                                   \
    FN(x, y, n);                                                                 \
  }                                                                              \
  ARRAY_LOOP(fname, fname##_n)

/* What one element of an op's loop costs (om__iterate_each's cost, in the matrix product's
 * multiply-adds), as measured in WASM on one thread (0.049 ns a multiply-add of a 512 product):
 * an operation between loads and a store (add, relu, sqrt: 0.1 to 0.3 ns; OM_EACH_SIMPLE), math.c's
 * array functions four values at a time (exp, tanh, sigmoid, erf, gelu, silu: 2 to 3 ns) and a
 * scalar exp or log for each element (log, elu, softplus: about 6 ns, as exp was). */
#define EACH_ARRAY_MATH 50.0
#define EACH_SCALAR_MATH 130.0

/* Which dtypes an op takes, the loop for each (NULL: refused), what an element costs, and the
 * ONNX nodes that compute it. */
typedef struct kernels {
  om_loop_fn loop[4];  /* indexed by om_dtype of the inputs */
  double cost;         /* an element's work: OM_EACH_SIMPLE, EACH_ARRAY_MATH or EACH_SCALAR_MATH */
  bool to_bool;        /* comparisons: the output is bool */
  const char *onnx[2]; /* ONNX op types: one node, or a second one applied to the first's result */
  const char *bool_onnx; /* the one node for bool inputs where onnxruntime has no bool kernel of onnx[0] (Add: Or) */
  bool bool_as_int64;    /* bool inputs go to onnx[0] cast to int64 (Less has no bool kernel) */
  /* activations with parameters: how many float attrs, their defaults and names (for messages) */
  int n_f;
  double f_default[2];
  const char *params;
} kernels;

/* The ONNX nodes of an op, given to the *_DEF macros as one argument that fills both the
 * kernels' onnx[] and the op's doc string: ONNX1("Add"), ONNX2("Sqrt", "Reciprocal"), or
 * ONNX_AS(first, second, doc) when the doc must say more (a dtype workaround). */
#define ONNX_AS(first, second, doc) first, second, doc
#define ONNX1(a) ONNX_AS(a, NULL, a)
#define ONNX2(a, b) ONNX_AS(a, b, a ", " b)
#define ONNX_NODES(first, second, doc) {first, second}
#define ONNX_DOC(first, second, doc) doc

/* ---- binary ops ---- */

BINARY_LOOP(add_f32, float, float, a + b)
BINARY_LOOP(add_f64, double, double, a + b)
BINARY_LOOP(add_i64, int64_t, int64_t, (int64_t)((uint64_t)a + (uint64_t)b))
BINARY_LOOP(sub_f32, float, float, a - b)
BINARY_LOOP(sub_f64, double, double, a - b)
BINARY_LOOP(sub_i64, int64_t, int64_t, (int64_t)((uint64_t)a - (uint64_t)b))
BINARY_LOOP(mul_f32, float, float, a * b)
BINARY_LOOP(mul_f64, double, double, a * b)
BINARY_LOOP(mul_i64, int64_t, int64_t, (int64_t)((uint64_t)a * (uint64_t)b))
BINARY_LOOP(div_f32, float, float, a / b)
BINARY_LOOP(div_f64, double, double, a / b)
/* PyTorch's div(a, b, rounding_mode=...) is attr i[0]: 0 (none, true division: floats only), 1
 * 'trunc', 2 'floor'. int64 'trunc' is also ONNX's Div of integers, which the graph layer runs for
 * the shape arithmetic the tracer writes. INT64_MIN / -1 wraps, where C would be undefined; a zero
 * divisor is refused before the loop runs (forward_map), so the 0 here is never a result. */
enum { DIV_TRUE, DIV_TRUNC, DIV_FLOOR };
static int64_t div_trunc_int(int64_t a, int64_t b) { return b == 0 ? 0 : b == -1 ? (int64_t)(0 - (uint64_t)a) : a / b; }
/* one less where the division left a remainder and the signs differ (b == -1 never leaves one) */
static int64_t div_floor_int(int64_t a, int64_t b) {
  return div_trunc_int(a, b) - (b != 0 && b != -1 && a % b != 0 && (a < 0) != (b < 0));
}
/* PyTorch's floor division of floats (c10::div_floor_floating, as Python's //), not floor(a / b),
 * which can round a quotient just below an integer up to it: the exact a - fmod(a, b) divided by
 * b, one less where fmod's sign differs from b's, floored and rounded up from above a half; a zero
 * quotient takes the sign of a / b, and b == 0 gives a / b (IEEE's infinities and NaN). */
#define DIV_FLOOR_FLOAT(NAME, T, FMOD, FLOOR, COPYSIGN)             \
  static T NAME(T a, T b) {                                          \
    if (b == 0) return a / b;                                        \
    T mod = FMOD(a, b), div = (a - mod) / b;                         \
    if (mod != 0 && (b < 0) != (mod < 0)) div -= 1;                  \
    if (div == 0) return COPYSIGN((T)0, a / b);                      \
    T f = FLOOR(div);                                                \
    return div - f > (T)0.5 ? f + 1 : f;                             \
  }
DIV_FLOOR_FLOAT(div_floor_f, float, fmodf, floorf, copysignf)
DIV_FLOOR_FLOAT(div_floor_d, double, fmod, floor, copysign)
BINARY_LOOP(div_trunc_i64, int64_t, int64_t, div_trunc_int(a, b))
BINARY_LOOP(div_floor_i64, int64_t, int64_t, div_floor_int(a, b))
BINARY_LOOP(div_trunc_f32, float, float, truncf(a / b))
BINARY_LOOP(div_floor_f32, float, float, div_floor_f(a, b))
BINARY_LOOP(div_trunc_f64, double, double, trunc(a / b))
BINARY_LOOP(div_floor_f64, double, double, div_floor_d(a, b))
/* div's loop of one dtype picks the rounding mode's (ctx is the call's om_attrs); int64 true
 * division never reaches it (infer refuses it) */
#define DIV_LOOP(fname, TRUE_LOOP, TRUNC_LOOP, FLOOR_LOOP)                                  \
  static void fname(char **p, const int64_t *s, int64_t n, const void *ctx) {              \
    const om_attrs *at = ctx;                                                              \
    int64_t mode = at && at->n_i ? at->i[0] : DIV_TRUE;                                    \
    (mode == DIV_FLOOR ? FLOOR_LOOP : mode == DIV_TRUNC ? TRUNC_LOOP : TRUE_LOOP)(p, s, n, ctx); \
  }
DIV_LOOP(div_f32_modes, div_f32, div_trunc_f32, div_floor_f32)
DIV_LOOP(div_f64_modes, div_f64, div_trunc_f64, div_floor_f64)
DIV_LOOP(div_i64, div_trunc_i64, div_trunc_i64, div_floor_i64)
BINARY_LOOP(pow_each_f32, float, float, om__powf(a, b))
/* A contiguous run to a scalar power (x.pow(2) in a loss, x.pow(3) in gelu's tanh form written
 * out) through om__powf_n, whose squares and cubes go four at a time; the same bits. */
static void pow_f32(char **p, const int64_t *s, int64_t n, const void *ctx) {
  if (s[0] == sizeof(float) && s[1] == sizeof(float) && s[2] == 0) {
    om__powf_n((const float *)p[1], *(const float *)p[2], (float *)p[0], n);
    return;
  }
  pow_each_f32(p, s, n, ctx);
}
BINARY_LOOP(eq_f32, float, uint8_t, a == b)
BINARY_LOOP(eq_i64, int64_t, uint8_t, a == b)
BINARY_LOOP(eq_f64, double, uint8_t, a == b)
BINARY_LOOP(eq_b8, uint8_t, uint8_t, a == b)
BINARY_LOOP(ne_f32, float, uint8_t, a != b)
BINARY_LOOP(ne_i64, int64_t, uint8_t, a != b)
BINARY_LOOP(ne_f64, double, uint8_t, a != b)
BINARY_LOOP(ne_b8, uint8_t, uint8_t, a != b)
BINARY_LOOP(lt_f32, float, uint8_t, a < b)
BINARY_LOOP(lt_i64, int64_t, uint8_t, a < b)
BINARY_LOOP(lt_f64, double, uint8_t, a < b)
BINARY_LOOP(le_f32, float, uint8_t, a <= b)
BINARY_LOOP(le_i64, int64_t, uint8_t, a <= b)
BINARY_LOOP(le_f64, double, uint8_t, a <= b)
BINARY_LOOP(gt_f32, float, uint8_t, a > b)
BINARY_LOOP(gt_i64, int64_t, uint8_t, a > b)
BINARY_LOOP(gt_f64, double, uint8_t, a > b)
BINARY_LOOP(ge_f32, float, uint8_t, a >= b)
BINARY_LOOP(ge_i64, int64_t, uint8_t, a >= b)
BINARY_LOOP(ge_f64, double, uint8_t, a >= b)
/* bool: add is or, mul is and (PyTorch's bool arithmetic); comparisons order false < true */
BINARY_LOOP(add_b8, uint8_t, uint8_t, a | b)
BINARY_LOOP(mul_b8, uint8_t, uint8_t, a & b)
BINARY_LOOP(lt_b8, uint8_t, uint8_t, a < b)
BINARY_LOOP(le_b8, uint8_t, uint8_t, a <= b)
BINARY_LOOP(gt_b8, uint8_t, uint8_t, a > b)
BINARY_LOOP(ge_b8, uint8_t, uint8_t, a >= b)
/* int64 powers as PyTorch's: by squaring, wrapping as C's unsigned arithmetic; a negative
 * exponent gives 1 / a^-b truncated (0 but for a base of 1 or -1) */
static int64_t pow_int(int64_t a, int64_t b) {
  if (b < 0) return a == 1 ? 1 : a == -1 ? (b & 1 ? -1 : 1) : 0;
  uint64_t r = 1, x = (uint64_t)a;
  for (uint64_t e = (uint64_t)b; e; e >>= 1, x *= x)
    if (e & 1) r *= x;
  return (int64_t)r;
}
BINARY_LOOP(pow_i64, int64_t, int64_t, pow_int(a, b))

static bool check_dtype(const om_call *c, const kernels *k, om_dtype dt) {
  if (k->loop[dt]) return true;
  const char *names[4];
  int n = 0;
  for (int d = 0; d < 4; d++)
    if (k->loop[d]) names[n++] = om_dtype_name(d);
  char ok[64] = ""; /* "float32", "float32 or float64", "float32, int64 or float64" */
  for (int j = 0; j < n; j++) snprintf(ok + strlen(ok), sizeof ok - strlen(ok), "%s%s", !j ? "" : j == n - 1 ? " or " : ", ", names[j]);
  return om__fail(OM_ERR_DTYPE_MISMATCH, "%s: takes %s, not %s", om_op_name(c->op), ok, om_dtype_name(dt));
}

static bool infer_binary(om_call *c) {
  const kernels *k = om__ops[c->op]->impl;
  om_tensor *a = c->in[0], *b = c->in[1];
  if (a->dtype != b->dtype)
    return om__fail(OM_ERR_DTYPE_MISMATCH, "%s: dtypes %s and %s differ (convert one with cast)",
                    om_op_name(c->op), om_dtype_name(a->dtype), om_dtype_name(b->dtype));
  if (c->op == OM_OP_div && (c->attrs.n_i > 1 || (c->attrs.n_i == 1 && (c->attrs.i[0] < DIV_TRUE || c->attrs.i[0] > DIV_FLOOR))))
    return om__fail(OM_ERR_INVALID_ARGUMENT, "div: the rounding mode is one int attribute, 0 (none), 1 ('trunc') or 2 ('floor'), got %d attributes, the first %lld",
                    c->attrs.n_i, (long long)c->attrs.i[0]);
  if (c->op == OM_OP_div && a->dtype == OM_INT64 && (!c->attrs.n_i || c->attrs.i[0] == DIV_TRUE))
    return om__fail(OM_ERR_DTYPE_MISMATCH, "div: takes float32, not int64 (true division of integers gives floats: cast first)");
  if (!check_dtype(c, k, a->dtype) || !om__broadcast_shapes(c->in, 2, &c->out_meta[0], om_op_name(c->op)))
    return false;
  c->out_meta[0].dtype = k->to_bool ? OM_BOOL : a->dtype;
  return true;
}

/* Whether t has the shape [ndim] and the strides of a contiguous tensor of it (size-1 dims
 * aside, as om_tensor_is_contiguous). */
static bool dense_as(const om_tensor *t, const int64_t *shape, int ndim) {
  if (t->ndim != ndim) return false;
  int64_t s = 1;
  for (int d = ndim - 1; d >= 0; d--) {
    if (t->shape[d] != shape[d] || (shape[d] != 1 && t->strides[d] != s)) return false;
    s *= shape[d];
  }
  return true;
}

/* Whether every operand of the map is one run: the output and inputs of its shape contiguous,
 * other inputs a single element (stride 0). om__iterate would merge the dims into that one run;
 * calling the loop on it directly spares a small op the strides. */
static bool one_run(const om_call *c, char **base, int64_t *st) {
  const om_tensor *o = c->out[0];
  if (!dense_as(o, o->shape, o->ndim)) return false;
  base[0] = om__data(o), st[0] = (int64_t)om__dtype_size(o->dtype);
  for (int i = 0; i < c->n_in; i++) {
    const om_tensor *t = c->in[i];
    bool same = dense_as(t, o->shape, o->ndim);
    if (!same && om_tensor_numel(t) != 1) return false;
    base[i + 1] = om__data(t), st[i + 1] = same ? (int64_t)om__dtype_size(t->dtype) : 0;
  }
  return true;
}

/* Runs the op's loop over output and inputs with broadcasting, on the pool where the elements
 * times their cost are worth it (the one-run case called directly below that). */
static bool forward_map(om_call *c) {
  const kernels *k = om__ops[c->op]->impl;
  /* an integer divided by zero has no value (PyTorch raises, ONNX leaves it undefined,
   * onnxruntime's WASM traps): an error, never a made-up 0 */
  /* (an empty output divides nothing: roll's index of an empty dim is an empty remainder by 0) */
  bool int_division = (c->op == OM_OP_div || c->op == OM_OP_fmod || c->op == OM_OP_remainder) && c->in[1]->dtype == OM_INT64 &&
                      om_tensor_numel(c->out[0]) > 0;
  for (int64_t q = 0, n_b = int_division ? om_tensor_numel(c->in[1]) : 0; q < n_b; q++)
    if (om__get_flat(c->in[1], q) == 0)
      return om__fail(OM_ERR_INVALID_ARGUMENT, "%s: integer division by zero (element %lld of the divisor)", om__ops[c->op]->name, (long long)q);
  om_tensor *o = c->out[0];
  int64_t n = om_tensor_numel(o), run[4];
  char *base[4] = {om__data(o)};
  if (n > 0 && one_run(c, base, run) && om__job_threads((double)n * k->cost, n) == 1) {
    k->loop[c->in[c->n_in - 1]->dtype](base, run, n, &c->attrs);
    return true;
  }
  int64_t st[4][OM_MAX_DIMS];
  om__broadcast_strides(o, o->ndim, st[0]);
  for (int i = 0; i < c->n_in; i++) {
    om__broadcast_strides(c->in[i], o->ndim, st[i + 1]);
    base[i + 1] = om__data(c->in[i]);
  }
  om__iterate_each(c->n_in + 1, base, st, o->shape, o->ndim, k->loop[c->in[c->n_in - 1]->dtype], &c->attrs, k->cost);
  return true;
}

/* The ONNX form of a map: the op's node reading every input, or, for two nodes (rsqrt is
 * Sqrt then Reciprocal, ne is Equal then Not), the second reading the first's result. Both
 * results have the output's shape and dtype. */
static int emit_cast(om_lower *l, int v, int ndim, const int64_t *shape, om_dtype dtype);
static bool lower_map(om_lower *l, const om_call *c) {
  const kernels *k = om__ops[c->op]->impl;
  bool on_bool = c->in[c->n_in - 1]->dtype == OM_BOOL;
  if (on_bool && k->bool_onnx) return om__lower_node(l, c, k->bool_onnx, NULL, 0);
  if (on_bool && k->bool_as_int64) {
    int in[2], out;
    for (int i = 0; i < c->n_in; i++)
      if ((in[i] = emit_cast(l, om__lower_input(l, i), c->in[i]->ndim, c->in[i]->shape, OM_INT64)) < 0) return false;
    if (!om__emit(l, k->onnx[0], in, c->n_in, &c->out_meta[0], 1, &out, NULL, 0)) return false;
    om__lower_output(l, 0, out);
    return true;
  }
  if (!k->onnx[1]) return om__lower_node(l, c, k->onnx[0], NULL, 0);
  int in[3], mid, out;
  for (int i = 0; i < c->n_in; i++)
    if ((in[i] = om__lower_input(l, i)) < 0) return false;
  if (!om__emit(l, k->onnx[0], in, c->n_in, &c->out_meta[0], 1, &mid, NULL, 0) ||
      !om__emit(l, k->onnx[1], &mid, 1, &c->out_meta[0], 1, &out, NULL, 0))
    return false;
  om__lower_output(l, 0, out);
  return true;
}

/* Reduces g to input i's shape and stores it as gin[i] (consumes nothing; g borrowed). */
static void grad_to(const om_record *r, int i, om_tensor *g, om_tensor **gin) {
  if (om__wants(r, i) && g) gin[i] = om__sum_to(g, r->in[i]->shape, r->in[i]->ndim);
}

static bool done(om_scope *s, const om_record *r, om_tensor **gin) {
  om__scope_end(s);
  for (int i = 0; i < r->n_in; i++)
    if (om__wants(r, i) && !gin[i]) return false;
  return true;
}

static bool add_backward(const om_record *r, om_tensor *const *g, om_tensor **gin) {
  om_scope s = {0};
  grad_to(r, 0, g[0], gin);
  grad_to(r, 1, g[0], gin);
  return done(&s, r, gin);
}

static bool sub_backward(const om_record *r, om_tensor *const *g, om_tensor **gin) {
  om_scope s = {0};
  grad_to(r, 0, g[0], gin);
  if (om__wants(r, 1)) grad_to(r, 1, om__keep(&s, om_neg(g[0])), gin);
  return done(&s, r, gin);
}

static bool mul_backward(const om_record *r, om_tensor *const *g, om_tensor **gin) {
  om_scope s = {0};
  if (om__wants(r, 0)) grad_to(r, 0, om__keep(&s, om_mul(g[0], r->in[1])), gin);
  if (om__wants(r, 1)) grad_to(r, 1, om__keep(&s, om_mul(g[0], r->in[0])), gin);
  return done(&s, r, gin);
}

/* d(a/b) = g/b, -g*a/b^2; a rounded quotient is flat between its steps: zeros (as PyTorch's) */
static bool div_backward(const om_record *r, om_tensor *const *g, om_tensor **gin) {
  om_scope s = {0};
  if (r->attrs.n_i && r->attrs.i[0] != DIV_TRUE) {
    for (int i = 0; i < 2; i++)
      if (om__wants(r, i)) gin[i] = om_zeros(r->in[i]->shape, r->in[i]->ndim, r->in[i]->dtype);
    return done(&s, r, gin);
  }
  om_tensor *gb = om__keep(&s, om_div(g[0], r->in[1]));
  if (om__wants(r, 0)) grad_to(r, 0, gb, gin);
  if (om__wants(r, 1)) {
    om_tensor *q = om__keep(&s, om_div(r->in[0], r->in[1]));
    grad_to(r, 1, om__keep(&s, om_neg(om__keep(&s, om_mul(gb, q)))), gin);
  }
  return done(&s, r, gin);
}

/* d(a^b) = g*b*a^(b-1), g*a^b*log(a) (0 where a == 0, as PyTorch) */
static bool pow_backward(const om_record *r, om_tensor *const *g, om_tensor **gin) {
  om_scope s = {0};
  om_tensor *a = r->in[0], *b = r->in[1], *one = om__keep(&s, om_scalar(1, OM_FLOAT32));
  if (om__wants(r, 0)) {
    om_tensor *p = om__keep(&s, om_pow(a, om__keep(&s, om_sub(b, one))));
    grad_to(r, 0, om__keep(&s, om_mul(g[0], om__keep(&s, om_mul(b, p)))), gin);
  }
  if (om__wants(r, 1)) {
    om_tensor *zero = om__keep(&s, om_scalar(0, OM_FLOAT32));
    om_tensor *safe = om__keep(&s, om_where(om__keep(&s, om_eq(a, zero)), one, a));
    om_tensor *d = om__keep(&s, om_mul(r->saved[0], om__keep(&s, om_log(safe))));
    grad_to(r, 1, om__keep(&s, om_mul(g[0], d)), gin);
  }
  return done(&s, r, gin);
}

/* A bool of the shape of input i of c (Less(input, 0) before it broadcasts). */
static om_meta bool_of(const om_tensor *t) {
  om_meta m = {.dtype = OM_BOOL, .ndim = t->ndim};
  memcpy(m.shape, t->shape, sizeof(int64_t) * (size_t)t->ndim);
  return m;
}

/* div with a rounding mode, as the kernels compute it, in exact steps: int64 'trunc' is ONNX's
 * Div; int64 'floor' is that less one where q b != a and the signs of a and b differ; float
 * 'trunc' is Ceil of a negative quotient, else Floor (-0 and NaN kept); float 'floor' is
 * PyTorch's (div_floor_f above): d = (a - Mod(a, b, fmod 1)) / b, less one where the remainder's
 * sign differs from b's, floored and rounded up from above a half, q * 0 (a signed zero) where
 * d is 0, and q where b is 0. */
static bool lower_div(om_lower *l, const om_call *c) {
  int64_t mode = c->attrs.n_i ? c->attrs.i[0] : DIV_TRUE;
  om_dtype dt = c->in[0]->dtype;
  if (mode == DIV_TRUE || (dt == OM_INT64 && mode == DIV_TRUNC)) return om__lower_node(l, c, "Div", NULL, 0);
  const om_meta *m = &c->out_meta[0];
  om_meta bm = *m, ma = bool_of(c->in[0]), mb = bool_of(c->in[1]);
  bm.dtype = OM_BOOL;
  int a = om__lower_input(l, 0), b = om__lower_input(l, 1), zero = om__lower_scalar(l, 0, dt), one = om__lower_scalar(l, 1, dt);
  int q, t[16], out;
  if (a < 0 || b < 0 || zero < 0 || one < 0 || !om__emit(l, "Div", (int[]){a, b}, 2, m, 1, &q, NULL, 0)) return false;
  if (dt == OM_INT64) {
    if (!om__emit(l, "Mul", (int[]){q, b}, 2, m, 1, &t[0], NULL, 0) || !om__emit(l, "Equal", (int[]){t[0], a}, 2, &bm, 1, &t[1], NULL, 0) ||
        !om__emit(l, "Not", &t[1], 1, &bm, 1, &t[2], NULL, 0) || !om__emit(l, "Less", (int[]){a, zero}, 2, &ma, 1, &t[3], NULL, 0) ||
        !om__emit(l, "Less", (int[]){b, zero}, 2, &mb, 1, &t[4], NULL, 0) || !om__emit(l, "Xor", (int[]){t[3], t[4]}, 2, &bm, 1, &t[5], NULL, 0) ||
        !om__emit(l, "And", (int[]){t[2], t[5]}, 2, &bm, 1, &t[6], NULL, 0) || (t[7] = emit_cast(l, t[6], m->ndim, m->shape, OM_INT64)) < 0 ||
        !om__emit(l, "Sub", (int[]){q, t[7]}, 2, m, 1, &out, NULL, 0))
      return false;
  } else if (mode == DIV_TRUNC) {
    if (!om__emit(l, "Less", (int[]){q, zero}, 2, &bm, 1, &t[0], NULL, 0) || !om__emit(l, "Ceil", &q, 1, m, 1, &t[1], NULL, 0) ||
        !om__emit(l, "Floor", &q, 1, m, 1, &t[2], NULL, 0) || !om__emit(l, "Where", (int[]){t[0], t[1], t[2]}, 3, m, 1, &out, NULL, 0))
      return false;
  } else {
    int half = om__lower_scalar(l, 0.5, dt);
    if (half < 0 || !om__emit(l, "Mod", (int[]){a, b}, 2, m, 1, &t[0], &OM_ATTR_INT("fmod", 1), 1) || /* t0 = fmod(a, b) */
        !om__emit(l, "Sub", (int[]){a, t[0]}, 2, m, 1, &t[1], NULL, 0) || !om__emit(l, "Div", (int[]){t[1], b}, 2, m, 1, &t[2], NULL, 0) ||
        !om__emit(l, "Equal", (int[]){t[0], zero}, 2, &bm, 1, &t[3], NULL, 0) || !om__emit(l, "Not", &t[3], 1, &bm, 1, &t[3], NULL, 0) ||
        !om__emit(l, "Less", (int[]){b, zero}, 2, &mb, 1, &t[4], NULL, 0) || !om__emit(l, "Less", (int[]){t[0], zero}, 2, &bm, 1, &t[5], NULL, 0) ||
        !om__emit(l, "Xor", (int[]){t[4], t[5]}, 2, &bm, 1, &t[6], NULL, 0) || !om__emit(l, "And", (int[]){t[3], t[6]}, 2, &bm, 1, &t[7], NULL, 0) ||
        !om__emit(l, "Sub", (int[]){t[2], one}, 2, m, 1, &t[8], NULL, 0) ||
        !om__emit(l, "Where", (int[]){t[7], t[8], t[2]}, 3, m, 1, &t[9], NULL, 0) || /* t9 = d */
        !om__emit(l, "Floor", &t[9], 1, m, 1, &t[10], NULL, 0) || !om__emit(l, "Sub", (int[]){t[9], t[10]}, 2, m, 1, &t[11], NULL, 0) ||
        !om__emit(l, "Greater", (int[]){t[11], half}, 2, &bm, 1, &t[12], NULL, 0) || !om__emit(l, "Add", (int[]){t[10], one}, 2, m, 1, &t[13], NULL, 0) ||
        !om__emit(l, "Where", (int[]){t[12], t[13], t[10]}, 3, m, 1, &t[14], NULL, 0) || /* t14 = floor(d) rounded */
        !om__emit(l, "Mul", (int[]){q, zero}, 2, m, 1, &t[11], NULL, 0) || !om__emit(l, "Equal", (int[]){t[9], zero}, 2, &bm, 1, &t[12], NULL, 0) ||
        !om__emit(l, "Where", (int[]){t[12], t[11], t[14]}, 3, m, 1, &t[15], NULL, 0) ||
        !om__emit(l, "Equal", (int[]){b, zero}, 2, &mb, 1, &t[3], NULL, 0) || !om__emit(l, "Where", (int[]){t[3], q, t[15]}, 3, m, 1, &out, NULL, 0))
      return false;
  }
  om__lower_output(l, 0, out);
  return true;
}

/* A binary op: its kernels (LOOPS, then more of the kernels' fields or nothing in the variadic
 * arguments: bool_onnx, bool_as_int64), PROMOTE its OM_PROMOTE_* rule, TEST_DT its sample's
 * dtype (0 float32). */
#define BINARY_DEF(NAME, LOOPS, BOOL, BACKWARD, SAVES, LO, HI, PROMOTE, TEST_DT, LOWER, ONNX, ...)     \
  static const kernels NAME##_kernels = {LOOPS, .to_bool = BOOL, .onnx = ONNX_NODES(ONNX), __VA_ARGS__}; \
  const om_op_def om__op_##NAME = {                                                                   \
      .name = #NAME, .n_in = 2, .n_out = 1, .saves = SAVES, .infer = infer_binary,                   \
      .forward = forward_map, .backward = BACKWARD, .lower = LOWER, .onnx = ONNX_DOC(ONNX),          \
      .promote = PROMOTE, .takes_float64 = true, .impl = &NAME##_kernels,                             \
      .test = {.n_in = 2, .ndims = {2, 1}, .shapes = {{2, 3}, {3}}, .dtypes = {TEST_DT, TEST_DT}, .lo = LO, .hi = HI, \
               .no_gradcheck = BACKWARD == NULL}};

/* An op's loops for float32, int64, bool and float64 (NULL: refused) and each element's cost:
 * simple operations (LOOPS3, LOOPS4 with a float64 loop), or one float32 loop of math (MATH1;
 * MATH2 with a float64 loop). */
#define LOOPS_EACH(f, i, b, d, each) .loop = {f, i, b, d}, .cost = each
#define LOOPS3(f, i, b) LOOPS_EACH(f, i, b, NULL, OM_EACH_SIMPLE)
#define LOOPS4(f, i, b, d) LOOPS_EACH(f, i, b, d, OM_EACH_SIMPLE)
#define MATH1(f, each) LOOPS_EACH(f, NULL, NULL, NULL, each)
#define MATH2(f, d, each) LOOPS_EACH(f, NULL, NULL, d, each)
#define COMMON OM_PROMOTE_COMMON
BINARY_DEF(add, LOOPS4(add_f32, add_i64, add_b8, add_f64), false, add_backward, 0, -2, 2, COMMON, 0, lower_map, ONNX_AS("Add", NULL, "Add (bool: Or)"), .bool_onnx = "Or")
BINARY_DEF(sub, LOOPS4(sub_f32, sub_i64, NULL, sub_f64), false, sub_backward, 0, -2, 2, OM_PROMOTE_NO_BOOL, 0, lower_map, ONNX1("Sub"))
BINARY_DEF(mul, LOOPS4(mul_f32, mul_i64, mul_b8, mul_f64), false, mul_backward, OM_SAVES_IN(0) | OM_SAVES_IN(1), -2, 2, COMMON, 0, lower_map,
           ONNX_AS("Mul", NULL, "Mul (bool: And)"), .bool_onnx = "And")
BINARY_DEF(div, LOOPS4(div_f32_modes, div_i64, NULL, div_f64_modes), false, div_backward, OM_SAVES_IN(0) | OM_SAVES_IN(1), 0.5, 2, OM_PROMOTE_FLOAT, 0,
           lower_div, ONNX_AS("Div", NULL, "Div (rounding_mode: 'trunc' of floats Where(q < 0, Ceil, Floor); 'floor' of int64 less one where a remainder's signs differ, of floats PyTorch's Mod-based floor division)"))
BINARY_DEF(pow, LOOPS_EACH(pow_f32, pow_i64, NULL, NULL, EACH_ARRAY_MATH), false, pow_backward, OM_SAVES_IN(0) | OM_SAVES_IN(1) | OM_SAVES_OUT(0), 0.5, 2,
           COMMON, 0, lower_map, ONNX1("Pow"))
BINARY_DEF(eq, LOOPS4(eq_f32, eq_i64, eq_b8, eq_f64), true, NULL, 0, -2, 2, COMMON, 0, lower_map, ONNX1("Equal"))
BINARY_DEF(ne, LOOPS4(ne_f32, ne_i64, ne_b8, ne_f64), true, NULL, 0, -2, 2, COMMON, 0, lower_map, ONNX2("Equal", "Not"))
#define VIA_INT64(op) ONNX_AS(op, NULL, op " (bool: its inputs Cast to int64)")
BINARY_DEF(lt, LOOPS4(lt_f32, lt_i64, lt_b8, lt_f64), true, NULL, 0, -2, 2, COMMON, 0, lower_map, VIA_INT64("Less"), .bool_as_int64 = true)
BINARY_DEF(le, LOOPS4(le_f32, le_i64, le_b8, le_f64), true, NULL, 0, -2, 2, COMMON, 0, lower_map, VIA_INT64("LessOrEqual"), .bool_as_int64 = true)
BINARY_DEF(gt, LOOPS4(gt_f32, gt_i64, gt_b8, gt_f64), true, NULL, 0, -2, 2, COMMON, 0, lower_map, VIA_INT64("Greater"), .bool_as_int64 = true)
BINARY_DEF(ge, LOOPS4(ge_f32, ge_i64, ge_b8, ge_f64), true, NULL, 0, -2, 2, COMMON, 0, lower_map, VIA_INT64("GreaterOrEqual"), .bool_as_int64 = true)

/* ---- logical ops (any dtype read as bool: nonzero, NaN too, is true) and bitwise ops (int64, bool) ---- */

BINARY_LOOP(and_b8, uint8_t, uint8_t, a & b)
BINARY_LOOP(or_b8, uint8_t, uint8_t, a | b)
BINARY_LOOP(xor_b8, uint8_t, uint8_t, a ^ b)
BINARY_LOOP(and_i64, int64_t, int64_t, a & b)
BINARY_LOOP(or_i64, int64_t, int64_t, a | b)
BINARY_LOOP(xor_i64, int64_t, int64_t, a ^ b)

#define LOGICAL(op) ONNX_AS(op, NULL, op " (other dtypes Cast to bool first)")
BINARY_DEF(logical_and, LOOPS3(NULL, NULL, and_b8), true, NULL, 0, -1, 1, OM_PROMOTE_BOOL, 0, lower_map, LOGICAL("And"))
BINARY_DEF(logical_or, LOOPS3(NULL, NULL, or_b8), true, NULL, 0, -1, 1, OM_PROMOTE_BOOL, 0, lower_map, LOGICAL("Or"))
BINARY_DEF(logical_xor, LOOPS3(NULL, NULL, xor_b8), true, NULL, 0, -1, 1, OM_PROMOTE_BOOL, 0, lower_map, LOGICAL("Xor"))
#define BITWISE(op, bool_op) ONNX_AS(op, NULL, op " (bool: " bool_op ")")
BINARY_DEF(bitwise_and, LOOPS3(NULL, and_i64, and_b8), false, NULL, 0, -8, 8, COMMON, OM_INT64, lower_map, BITWISE("BitwiseAnd", "And"), .bool_onnx = "And")
BINARY_DEF(bitwise_or, LOOPS3(NULL, or_i64, or_b8), false, NULL, 0, -8, 8, COMMON, OM_INT64, lower_map, BITWISE("BitwiseOr", "Or"), .bool_onnx = "Or")
BINARY_DEF(bitwise_xor, LOOPS3(NULL, xor_i64, xor_b8), false, NULL, 0, -8, 8, COMMON, OM_INT64, lower_map, BITWISE("BitwiseXor", "Xor"), .bool_onnx = "Xor")

/* ---- atan2, minimum, maximum, fmod, remainder ---- */

BINARY_LOOP(atan2_f32, float, float, om__atan2f(a, b))
/* NaN wins, else std::max / std::min (PyTorch's maximum and minimum) */
BINARY_LOOP(maximum_f32, float, float, a != a ? a : b != b ? b : a < b ? b : a)
BINARY_LOOP(minimum_f32, float, float, a != a ? a : b != b ? b : b < a ? b : a)
BINARY_LOOP(maximum_f64, double, double, a != a ? a : b != b ? b : a < b ? b : a)
BINARY_LOOP(minimum_f64, double, double, a != a ? a : b != b ? b : b < a ? b : a)
BINARY_LOOP(maximum_i64, int64_t, int64_t, a < b ? b : a)
BINARY_LOOP(minimum_i64, int64_t, int64_t, b < a ? b : a)
BINARY_LOOP(maximum_b8, uint8_t, uint8_t, a | b)
BINARY_LOOP(minimum_b8, uint8_t, uint8_t, a & b)
/* fmod truncates (C's fmod: the sign of a; fmodf is exact, so every libm gives its bits),
 * remainder floors (Python's %: the sign of b). Integers: a zero divisor is refused before the
 * loop runs (forward_map, as PyTorch raises), so the 0 here is never a result; mod -1 is 0 (C's
 * INT64_MIN % -1 is undefined, and traps PyTorch). */
static int64_t fmod_int(int64_t a, int64_t b) { return b == 0 || b == -1 ? 0 : a % b; }
static int64_t remainder_int(int64_t a, int64_t b) {
  int64_t m = fmod_int(a, b);
  return m != 0 && (b < 0) != (m < 0) ? m + b : m;
}
static float remainder_f(float a, float b) {
  float m = fmodf(a, b);
  return m != 0 && (b < 0) != (m < 0) ? m + b : m;
}
static double remainder_d(double a, double b) {
  double m = fmod(a, b);
  return m != 0 && (b < 0) != (m < 0) ? m + b : m;
}
BINARY_LOOP(fmod_f32, float, float, fmodf(a, b))
BINARY_LOOP(fmod_i64, int64_t, int64_t, fmod_int(a, b))
BINARY_LOOP(remainder_f32, float, float, remainder_f(a, b))
BINARY_LOOP(remainder_i64, int64_t, int64_t, remainder_int(a, b))
BINARY_LOOP(fmod_f64, double, double, fmod(a, b))
BINARY_LOOP(remainder_f64, double, double, remainder_d(a, b))

/* d atan2(y, x) = (x dy - y dx) / (x^2 + y^2) */
static bool atan2_backward(const om_record *r, om_tensor *const *g, om_tensor **gin) {
  om_scope s = {0};
  om_tensor *y = r->in[0], *x = r->in[1];
  om_tensor *q = om__keep(&s, om_div(g[0], om__keep(&s, om_add(om__keep(&s, om_mul(x, x)), om__keep(&s, om_mul(y, y))))));
  if (om__wants(r, 0)) grad_to(r, 0, om__keep(&s, om_mul(q, x)), gin);
  if (om__wants(r, 1)) grad_to(r, 1, om__keep(&s, om_neg(om__keep(&s, om_mul(q, y)))), gin);
  return done(&s, r, gin);
}

/* PyTorch's: g to the input that is picked, half of it to each where they are equal. */
static bool minmax_backward(const om_record *r, om_tensor *const *g, om_tensor **gin) {
  om_scope s = {0};
  om_tensor *a = r->in[0], *b = r->in[1], *zero = om__keep(&s, om_scalar(0, OM_FLOAT32));
  om_tensor *shared = om__keep(&s, om_where(om__keep(&s, om_eq(a, b)), om__keep(&s, om_scale(g[0], 0.5)), g[0]));
  bool max = r->op == OM_OP_maximum;
  for (int i = 0; i < 2; i++) {
    if (!om__wants(r, i)) continue;
    om_tensor *lost = om__keep(&s, max == (i == 0) ? om_lt(a, b) : om_gt(a, b));
    grad_to(r, i, lost && shared ? om__keep(&s, om_where(lost, zero, shared)) : NULL, gin);
  }
  return done(&s, r, gin);
}

/* y = a - k b with k a's quotient by b (truncated for fmod, floored for remainder): g, -g k. */
static bool mod_backward(const om_record *r, om_tensor *const *g, om_tensor **gin) {
  om_scope s = {0};
  grad_to(r, 0, g[0], gin);
  if (om__wants(r, 1)) {
    om_tensor *k = om__keep(&s, om_div(om__keep(&s, om_sub(r->in[0], r->saved[0])), r->in[1]));
    grad_to(r, 1, om__keep(&s, om_neg(om__keep(&s, om_mul(g[0], k)))), gin);
  }
  return done(&s, r, gin);
}

/* atan2 has no ONNX op: Atan(y / x), with y / x replaced where it is NaN for numbers (y itself
 * where both are zeros, Sign(y) / Sign(x) where both are infinite), plus pi or minus pi (by y's
 * sign) where x is negative or -0; a zero's sign is read as 1 / z < 0. Each step rounds in
 * float, so onnxruntime's values may be an ulp or two from the kernel's, which rounds once. */
static bool lower_atan2(om_lower *l, const om_call *c) {
  const om_meta *m = &c->out_meta[0];
  om_meta b = *m;
  b.dtype = OM_BOOL;
  int y = om__lower_input(l, 0), x = om__lower_input(l, 1), zero = om__lower_float(l, 0), one = om__lower_float(l, 1);
  int inf = om__lower_float(l, INFINITY), pi = om__lower_float(l, 3.14159265358979323846), mpi = om__lower_float(l, -3.14159265358979323846);
  if (y < 0 || x < 0 || zero < 0 || one < 0 || inf < 0 || pi < 0 || mpi < 0) return false;
  int v[2] = {y, x}, neg[2], zeros[2], infs[2], t[4];
  for (int k = 0; k < 2; k++) { /* neg: v < 0 or 1 / v < 0 (-0); zeros: v == 0; infs: |v| == inf */
    if (!om__emit(l, "Less", (int[]){v[k], zero}, 2, &b, 1, &t[0], NULL, 0) || !om__emit(l, "Div", (int[]){one, v[k]}, 2, m, 1, &t[1], NULL, 0) ||
        !om__emit(l, "Less", (int[]){t[1], zero}, 2, &b, 1, &t[2], NULL, 0) || !om__emit(l, "Or", (int[]){t[0], t[2]}, 2, &b, 1, &neg[k], NULL, 0) ||
        !om__emit(l, "Equal", (int[]){v[k], zero}, 2, &b, 1, &zeros[k], NULL, 0) || !om__emit(l, "Abs", &v[k], 1, m, 1, &t[3], NULL, 0) ||
        !om__emit(l, "Equal", (int[]){t[3], inf}, 2, &b, 1, &infs[k], NULL, 0))
      return false;
  }
  int q, bothzero, bothinf, sy, sx, units, q1, q2, a, shift, turned, out;
  if (!om__emit(l, "Div", (int[]){y, x}, 2, m, 1, &q, NULL, 0) || !om__emit(l, "And", zeros, 2, &b, 1, &bothzero, NULL, 0) ||
      !om__emit(l, "And", infs, 2, &b, 1, &bothinf, NULL, 0) || !om__emit(l, "Sign", &y, 1, m, 1, &sy, NULL, 0) ||
      !om__emit(l, "Sign", &x, 1, m, 1, &sx, NULL, 0) || !om__emit(l, "Div", (int[]){sy, sx}, 2, m, 1, &units, NULL, 0) ||
      !om__emit(l, "Where", (int[]){bothzero, y, q}, 3, m, 1, &q1, NULL, 0) ||
      !om__emit(l, "Where", (int[]){bothinf, units, q1}, 3, m, 1, &q2, NULL, 0) || !om__emit(l, "Atan", &q2, 1, m, 1, &a, NULL, 0) ||
      !om__emit(l, "Where", (int[]){neg[0], mpi, pi}, 3, m, 1, &shift, NULL, 0) ||
      !om__emit(l, "Add", (int[]){a, shift}, 2, m, 1, &turned, NULL, 0) ||
      !om__emit(l, "Where", (int[]){neg[1], turned, a}, 3, m, 1, &out, NULL, 0))
    return false;
  om__lower_output(l, 0, out);
  return true;
}

/* The Mod ONNX computes exactly, then the other rounding's fix. Floats take only fmod 1 (C's
 * truncating fmod: exact in every engine), so a float remainder is Mod(a, b, fmod 1) plus b where
 * that is nonzero and its sign differs from b's. Integers take fmod 0 (Python's floor mod: integer
 * arithmetic; onnxruntime's int64 fmod 1 goes through double and is wrong past 2^53), so an int64
 * remainder is that Mod, and an int64 fmod is it minus b where it is nonzero and its sign differs
 * from a's. As the kernels. */
static bool lower_mod(om_lower *l, const om_call *c) {
  bool floor_mod = c->op == OM_OP_remainder, ints = c->in[0]->dtype == OM_INT64;
  if (floor_mod && ints) return om__lower_node(l, c, "Mod", &OM_ATTR_INT("fmod", 0), 1);
  const om_meta *m = &c->out_meta[0];
  const om_tensor *ref = c->in[floor_mod ? 1 : 0]; /* whose sign the result takes (it may be broadcast) */
  om_meta b = *m, rb = {.dtype = OM_BOOL, .ndim = ref->ndim};
  b.dtype = OM_BOOL;
  memcpy(rb.shape, ref->shape, sizeof(int64_t) * (size_t)ref->ndim);
  int x = om__lower_input(l, 0), y = om__lower_input(l, 1), zero = ints ? om__lower_scalar(l, 0, OM_INT64) : om__lower_float(l, 0);
  int r, rz, rn, sn, differ, fix, fixed, out;
  if (x < 0 || y < 0 || zero < 0 || !om__emit(l, "Mod", (int[]){x, y}, 2, m, 1, &r, &OM_ATTR_INT("fmod", !ints), 1) ||
      !om__emit(l, "Equal", (int[]){r, zero}, 2, &b, 1, &rz, NULL, 0) || !om__emit(l, "Less", (int[]){r, zero}, 2, &b, 1, &rn, NULL, 0) ||
      !om__emit(l, "Less", (int[]){floor_mod ? y : x, zero}, 2, &rb, 1, &sn, NULL, 0) ||
      !om__emit(l, "Xor", (int[]){rn, sn}, 2, &b, 1, &differ, NULL, 0) ||
      !om__emit(l, "Not", &rz, 1, &b, 1, &rz, NULL, 0) || !om__emit(l, "And", (int[]){rz, differ}, 2, &b, 1, &fix, NULL, 0) ||
      !om__emit(l, ints ? "Sub" : "Add", (int[]){r, y}, 2, m, 1, &fixed, NULL, 0) ||
      !om__emit(l, "Where", (int[]){fix, fixed, r}, 3, m, 1, &out, NULL, 0))
    return false;
  om__lower_output(l, 0, out);
  return true;
}

BINARY_DEF(atan2, MATH1(atan2_f32, EACH_SCALAR_MATH), false, atan2_backward, OM_SAVES_IN(0) | OM_SAVES_IN(1), -2, 2, OM_PROMOTE_FLOAT, 0, lower_atan2,
           ONNX_AS("Atan", NULL, "Atan(y / x) with Where for the quadrants, zeros and infinities"))
BINARY_DEF(minimum, LOOPS4(minimum_f32, minimum_i64, minimum_b8, minimum_f64), false, minmax_backward, OM_SAVES_IN(0) | OM_SAVES_IN(1), -2, 2, COMMON, 0,
           lower_map, ONNX_AS("Min", NULL, "Min (bool: And)"), .bool_onnx = "And")
BINARY_DEF(maximum, LOOPS4(maximum_f32, maximum_i64, maximum_b8, maximum_f64), false, minmax_backward, OM_SAVES_IN(0) | OM_SAVES_IN(1), -2, 2, COMMON, 0,
           lower_map, ONNX_AS("Max", NULL, "Max (bool: Or)"), .bool_onnx = "Or")
BINARY_DEF(fmod, LOOPS4(fmod_f32, fmod_i64, NULL, fmod_f64), false, mod_backward, OM_SAVES_IN(0) | OM_SAVES_IN(1) | OM_SAVES_OUT(0), 0.5, 2, COMMON, 0,
           lower_mod, ONNX_AS("Mod", NULL, "Mod (float32: fmod 1; int64: fmod 0, less b where the signs differ)"))
BINARY_DEF(remainder, LOOPS4(remainder_f32, remainder_i64, NULL, remainder_f64), false, mod_backward, OM_SAVES_IN(0) | OM_SAVES_IN(1) | OM_SAVES_OUT(0), 0.5, 2,
           COMMON, 0, lower_mod, ONNX_AS("Mod", NULL, "Mod (int64: fmod 0; float32: fmod 1, plus b where the signs differ)"))

#define BINARY_FN(NAME) \
  om_tensor *om_##NAME(om_tensor *a, om_tensor *b) { return om__apply1(OM_OP_##NAME, (om_tensor *[]){a, b}, 2, NULL); }
BINARY_FN(atan2)
BINARY_FN(minimum)
BINARY_FN(maximum)
BINARY_FN(fmod)
BINARY_FN(remainder)
BINARY_FN(logical_and)
BINARY_FN(logical_or)
BINARY_FN(logical_xor)
BINARY_FN(bitwise_and)
BINARY_FN(bitwise_or)
BINARY_FN(bitwise_xor)

BINARY_FN(add)
BINARY_FN(sub)
BINARY_FN(mul)
BINARY_FN(div)
BINARY_FN(pow)
BINARY_FN(eq)
BINARY_FN(ne)
BINARY_FN(lt)
BINARY_FN(le)
BINARY_FN(gt)
BINARY_FN(ge)

/* a (op) s with s a 0-d tensor of a's dtype. */
static om_tensor *with_scalar(om_op op, om_tensor *a, double v) {
  if (!om__check_inputs(om_op_name(op), &a, 1)) return NULL;
  om_tensor *s = om_scalar(v, a->dtype);
  om_tensor *r = s ? om__apply1(op, (om_tensor *[]){a, s}, 2, NULL) : NULL;
  om_tensor_release(s);
  return r;
}
om_tensor *om_scale(om_tensor *a, double s) { return with_scalar(OM_OP_mul, a, s); }
om_tensor *om_add_scalar(om_tensor *a, double s) { return with_scalar(OM_OP_add, a, s); }

/* ---- unary ops ---- */

UNARY_LOOP(neg_f32, float, -a)
UNARY_LOOP(neg_i64, int64_t, (int64_t)(0u - (uint64_t)a))
UNARY_LOOP(abs_f32, float, fabsf(a))
UNARY_LOOP(abs_i64, int64_t, a < 0 ? (int64_t)(0u - (uint64_t)a) : a)
UNARY_LOOP(neg_f64, double, -a)
UNARY_LOOP(abs_f64, double, fabs(a))
UNARY_LOOP(exp_f64, double, om__exp(a))
UNARY_LOOP(log_f64, double, om__log(a))
UNARY_LOOP(sqrt_f64, double, sqrt(a))
UNARY_LOOP(sign_f32, float, a > 0 ? 1.0f : a < 0 ? -1.0f : a)
UNARY_LOOP(sign_i64, int64_t, a > 0 ? 1 : a < 0 ? -1 : 0)
UNARY_LOOP(log_f32, float, om__logf(a))
UNARY_LOOP(sqrt_f32, float, sqrtf(a))
UNARY_LOOP(rsqrt_f32, float, 1.0f / sqrtf(a))
UNARY_LOOP(relu_f32, float, a > 0 || a != a ? a : 0.0f) /* NaN stays NaN, as PyTorch and ONNX Relu */
UNARY_LOOP(relu_i64, int64_t, a > 0 ? a : 0)
MATH_ARRAY_LOOP(exp_f32, om__expf_n)
MATH_ARRAY_LOOP(sigmoid_f32, om__sigmoidf_n)
MATH_ARRAY_LOOP(tanh_f32, om__tanhf_n)
MATH_ARRAY_LOOP(erf_f32, om__erff_n)

static bool infer_unary(om_call *c) {
  const kernels *k = om__ops[c->op]->impl;
  om_tensor *a = c->in[0];
  if (!check_dtype(c, k, a->dtype)) return false;
  c->out_meta[0] = (om_meta){.dtype = a->dtype, .ndim = a->ndim};
  memcpy(c->out_meta[0].shape, a->shape, sizeof a->shape);
  return true;
}

/* gin[0] = g * f, with f built from the record in the rule below. */
static bool unary_grad(om_scope *s, const om_record *r, om_tensor *g, om_tensor *f, om_tensor **gin) {
  gin[0] = f ? om_mul(g, f) : NULL;
  om__scope_end(s);
  (void)r;
  return gin[0] != NULL;
}

static bool neg_backward(const om_record *r, om_tensor *const *g, om_tensor **gin) {
  (void)r;
  return (gin[0] = om_neg(g[0])) != NULL;
}
static bool abs_backward(const om_record *r, om_tensor *const *g, om_tensor **gin) {
  om_scope s = {0};
  return unary_grad(&s, r, g[0], om__keep(&s, om_sign(r->in[0])), gin);
}
static bool exp_backward(const om_record *r, om_tensor *const *g, om_tensor **gin) {
  return (gin[0] = om_mul(g[0], r->saved[0])) != NULL;
}
static bool log_backward(const om_record *r, om_tensor *const *g, om_tensor **gin) {
  return (gin[0] = om_div(g[0], r->in[0])) != NULL;
}
static bool sqrt_backward(const om_record *r, om_tensor *const *g, om_tensor **gin) {
  om_scope s = {0}; /* g / (2 sqrt(a)) */
  return unary_grad(&s, r, g[0], om__keep(&s, om_div(om__keep(&s, om_scalar(0.5, OM_FLOAT32)), r->saved[0])), gin);
}
static bool rsqrt_backward(const om_record *r, om_tensor *const *g, om_tensor **gin) {
  om_scope s = {0}; /* -0.5 g y^3 */
  om_tensor *y = r->saved[0], *y3 = om__keep(&s, om_mul(om__keep(&s, om_mul(y, y)), y));
  return unary_grad(&s, r, g[0], om__keep(&s, om_scale(y3, -0.5)), gin);
}
static bool relu_backward(const om_record *r, om_tensor *const *g, om_tensor **gin) {
  om_scope s = {0};
  om_tensor *zero = om__keep(&s, om_scalar(0, OM_FLOAT32));
  gin[0] = om_where(om__keep(&s, om_gt(r->saved[0], zero)), g[0], zero);
  om__scope_end(&s);
  return gin[0] != NULL;
}
static bool sigmoid_backward(const om_record *r, om_tensor *const *g, om_tensor **gin) {
  om_scope s = {0}; /* y (1 - y) */
  om_tensor *y = r->saved[0], *one = om__keep(&s, om_scalar(1, OM_FLOAT32));
  return unary_grad(&s, r, g[0], om__keep(&s, om_mul(y, om__keep(&s, om_sub(one, y)))), gin);
}
static bool tanh_backward(const om_record *r, om_tensor *const *g, om_tensor **gin) {
  om_scope s = {0}; /* 1 - y^2 */
  om_tensor *y = r->saved[0], *one = om__keep(&s, om_scalar(1, OM_FLOAT32));
  return unary_grad(&s, r, g[0], om__keep(&s, om_sub(one, om__keep(&s, om_mul(y, y)))), gin);
}

/* onnxruntime has no int64 Relu kernel; Max(a, 0) is the same function and has one. */
static bool lower_relu(om_lower *l, const om_call *c) {
  if (c->in[0]->dtype != OM_INT64) return lower_map(l, c);
  int64_t zero = 0;
  int in[2], out;
  if ((in[0] = om__lower_input(l, 0)) < 0 || (in[1] = om__lower_ints(l, &zero, -1)) < 0 ||
      !om__emit(l, "Max", in, 2, &c->out_meta[0], 1, &out, NULL, 0))
    return false;
  om__lower_output(l, 0, out);
  return true;
}

/* A unary op, with BINARY_DEF's PROMOTE, TEST_DT and variadic kernel fields. */
#define UNARY_DEF(NAME, LOOPS, BACKWARD, SAVES, LO, HI, PROMOTE, TEST_DT, LOWER, ONNX, ...)          \
  static const kernels NAME##_kernels = {LOOPS, .onnx = ONNX_NODES(ONNX), __VA_ARGS__};              \
  const om_op_def om__op_##NAME = {                                                                   \
      .name = #NAME, .n_in = 1, .n_out = 1, .saves = SAVES, .infer = infer_unary,                    \
      .forward = forward_map, .backward = BACKWARD, .lower = LOWER, .onnx = ONNX_DOC(ONNX),          \
      .promote = PROMOTE, .takes_float64 = true, .impl = &NAME##_kernels,                             \
      .test = {.n_in = 1, .ndims = {2}, .shapes = {{3, 4}}, .dtypes = {TEST_DT}, .lo = LO, .hi = HI,  \
               .no_gradcheck = BACKWARD == NULL}};                                                    \
  om_tensor *om_##NAME(om_tensor *a) { return om__apply1(OM_OP_##NAME, &a, 1, NULL); }

UNARY_DEF(neg, LOOPS4(neg_f32, neg_i64, NULL, neg_f64), neg_backward, 0, -2, 2, 0, 0, lower_map, ONNX1("Neg"))
UNARY_DEF(abs, LOOPS4(abs_f32, abs_i64, NULL, abs_f64), abs_backward, OM_SAVES_IN(0), -2, 2, 0, 0, lower_map, ONNX1("Abs"))
UNARY_DEF(sign, LOOPS3(sign_f32, sign_i64, NULL), NULL, 0, -2, 2, 0, 0, lower_map, ONNX1("Sign"))
UNARY_DEF(exp, MATH2(exp_f32, exp_f64, EACH_ARRAY_MATH), exp_backward, OM_SAVES_OUT(0), -2, 2, 0, 0, lower_map, ONNX1("Exp"))
UNARY_DEF(log, MATH2(log_f32, log_f64, EACH_SCALAR_MATH), log_backward, OM_SAVES_IN(0), 0.5, 3, 0, 0, lower_map, ONNX1("Log"))
UNARY_DEF(sqrt, LOOPS4(sqrt_f32, NULL, NULL, sqrt_f64), sqrt_backward, OM_SAVES_OUT(0), 0.5, 3, 0, 0, lower_map, ONNX1("Sqrt"))
UNARY_DEF(rsqrt, LOOPS3(rsqrt_f32, NULL, NULL), rsqrt_backward, OM_SAVES_OUT(0), 0.5, 3, 0, 0, lower_map, ONNX2("Sqrt", "Reciprocal"))
UNARY_DEF(relu, LOOPS3(relu_f32, relu_i64, NULL), relu_backward, OM_SAVES_OUT(0), -2, 2, 0, 0, lower_relu, ONNX_AS("Relu", NULL, "Relu (int64: Max with 0)"))
UNARY_DEF(sigmoid, MATH1(sigmoid_f32, EACH_ARRAY_MATH), sigmoid_backward, OM_SAVES_OUT(0), -3, 3, 0, 0, lower_map, ONNX1("Sigmoid"))
UNARY_DEF(tanh, MATH1(tanh_f32, EACH_ARRAY_MATH), tanh_backward, OM_SAVES_OUT(0), -2, 2, 0, 0, lower_map, ONNX1("Tanh"))

/* ---- trigonometric and hyperbolic functions (src/core/math.c; integers promoted to float32) ---- */

UNARY_LOOP(sin_f32, float, om__sinf(a))
UNARY_LOOP(cos_f32, float, om__cosf(a))
UNARY_LOOP(tan_f32, float, om__tanf(a))
UNARY_LOOP(asin_f32, float, om__asinf(a))
UNARY_LOOP(acos_f32, float, om__acosf(a))
UNARY_LOOP(atan_f32, float, om__atanf(a))
UNARY_LOOP(sinh_f32, float, om__sinhf(a))
UNARY_LOOP(cosh_f32, float, om__coshf(a))
UNARY_LOOP(asinh_f32, float, om__asinhf(a))
UNARY_LOOP(acosh_f32, float, om__acoshf(a))
UNARY_LOOP(atanh_f32, float, om__atanhf(a))

/* k x^2 + c, kept by s. */
static om_tensor *square_affine(om_scope *s, om_tensor *x, double k, double c) {
  return om__keep(s, om_add_scalar(om__keep(s, om_scale(om__keep(s, om_mul(x, x)), k)), c));
}
static bool sin_backward(const om_record *r, om_tensor *const *g, om_tensor **gin) {
  om_scope s = {0};
  return unary_grad(&s, r, g[0], om__keep(&s, om_cos(r->in[0])), gin);
}
static bool cos_backward(const om_record *r, om_tensor *const *g, om_tensor **gin) {
  om_scope s = {0};
  return unary_grad(&s, r, g[0], om__keep(&s, om_neg(om__keep(&s, om_sin(r->in[0])))), gin);
}
static bool tan_backward(const om_record *r, om_tensor *const *g, om_tensor **gin) {
  om_scope s = {0}; /* 1 + y^2 */
  return unary_grad(&s, r, g[0], square_affine(&s, r->saved[0], 1, 1), gin);
}
static bool asin_backward(const om_record *r, om_tensor *const *g, om_tensor **gin) {
  om_scope s = {0}; /* 1 / sqrt(1 - x^2) */
  return unary_grad(&s, r, g[0], om__keep(&s, om_rsqrt(square_affine(&s, r->in[0], -1, 1))), gin);
}
static bool acos_backward(const om_record *r, om_tensor *const *g, om_tensor **gin) {
  om_scope s = {0}; /* -1 / sqrt(1 - x^2) */
  return unary_grad(&s, r, g[0], om__keep(&s, om_neg(om__keep(&s, om_rsqrt(square_affine(&s, r->in[0], -1, 1))))), gin);
}
static bool atan_backward(const om_record *r, om_tensor *const *g, om_tensor **gin) {
  om_scope s = {0}; /* g / (1 + x^2) */
  gin[0] = om_div(g[0], square_affine(&s, r->in[0], 1, 1));
  om__scope_end(&s);
  return gin[0] != NULL;
}
static bool sinh_backward(const om_record *r, om_tensor *const *g, om_tensor **gin) {
  om_scope s = {0};
  return unary_grad(&s, r, g[0], om__keep(&s, om_cosh(r->in[0])), gin);
}
static bool cosh_backward(const om_record *r, om_tensor *const *g, om_tensor **gin) {
  om_scope s = {0};
  return unary_grad(&s, r, g[0], om__keep(&s, om_sinh(r->in[0])), gin);
}
static bool asinh_backward(const om_record *r, om_tensor *const *g, om_tensor **gin) {
  om_scope s = {0}; /* 1 / sqrt(x^2 + 1) */
  return unary_grad(&s, r, g[0], om__keep(&s, om_rsqrt(square_affine(&s, r->in[0], 1, 1))), gin);
}
static bool acosh_backward(const om_record *r, om_tensor *const *g, om_tensor **gin) {
  om_scope s = {0}; /* 1 / sqrt(x^2 - 1) */
  return unary_grad(&s, r, g[0], om__keep(&s, om_rsqrt(square_affine(&s, r->in[0], 1, -1))), gin);
}
static bool atanh_backward(const om_record *r, om_tensor *const *g, om_tensor **gin) {
  om_scope s = {0}; /* g / (1 - x^2) */
  gin[0] = om_div(g[0], square_affine(&s, r->in[0], -1, 1));
  om__scope_end(&s);
  return gin[0] != NULL;
}

#define FLOAT OM_PROMOTE_FLOAT
#define TRIG_MATH(f) MATH1(f, EACH_SCALAR_MATH)
UNARY_DEF(sin, TRIG_MATH(sin_f32), sin_backward, OM_SAVES_IN(0), -2, 2, FLOAT, 0, lower_map, ONNX1("Sin"))
UNARY_DEF(cos, TRIG_MATH(cos_f32), cos_backward, OM_SAVES_IN(0), -2, 2, FLOAT, 0, lower_map, ONNX1("Cos"))
UNARY_DEF(tan, TRIG_MATH(tan_f32), tan_backward, OM_SAVES_OUT(0), -1.2, 1.2, FLOAT, 0, lower_map, ONNX1("Tan"))
UNARY_DEF(asin, TRIG_MATH(asin_f32), asin_backward, OM_SAVES_IN(0), -0.9, 0.9, FLOAT, 0, lower_map, ONNX1("Asin"))
UNARY_DEF(acos, TRIG_MATH(acos_f32), acos_backward, OM_SAVES_IN(0), -0.9, 0.9, FLOAT, 0, lower_map, ONNX1("Acos"))
UNARY_DEF(atan, TRIG_MATH(atan_f32), atan_backward, OM_SAVES_IN(0), -3, 3, FLOAT, 0, lower_map, ONNX1("Atan"))
UNARY_DEF(sinh, TRIG_MATH(sinh_f32), sinh_backward, OM_SAVES_IN(0), -2, 2, FLOAT, 0, lower_map, ONNX1("Sinh"))
UNARY_DEF(cosh, TRIG_MATH(cosh_f32), cosh_backward, OM_SAVES_IN(0), -2, 2, FLOAT, 0, lower_map, ONNX1("Cosh"))
UNARY_DEF(asinh, TRIG_MATH(asinh_f32), asinh_backward, OM_SAVES_IN(0), -3, 3, FLOAT, 0, lower_map, ONNX1("Asinh"))
UNARY_DEF(acosh, TRIG_MATH(acosh_f32), acosh_backward, OM_SAVES_IN(0), 1.2, 3, FLOAT, 0, lower_map, ONNX1("Acosh"))
UNARY_DEF(atanh, TRIG_MATH(atanh_f32), atanh_backward, OM_SAVES_IN(0), -0.9, 0.9, FLOAT, 0, lower_map, ONNX1("Atanh"))

/* ---- floor, ceil, round: exact in IEEE arithmetic (every libm and wasm's f32.floor, f32.ceil,
 * f32.nearest give the same bits), so C's functions are used; round is half to even, as PyTorch's
 * torch.round and ONNX's Round (rint in the default rounding mode). int64 is kept, as PyTorch. ---- */

UNARY_LOOP(floor_f32, float, floorf(a))
UNARY_LOOP(ceil_f32, float, ceilf(a))
UNARY_LOOP(round_f32, float, rintf(a))
UNARY_LOOP(floor_f64, double, floor(a))
UNARY_LOOP(ceil_f64, double, ceil(a))
UNARY_LOOP(round_f64, double, rint(a))
UNARY_LOOP(same_i64, int64_t, a)

/* int64 rounds to itself (ONNX's Floor, Ceil and Round take floats only): the input's value. */
static bool lower_rounding(om_lower *l, const om_call *c) {
  return c->in[0]->dtype == OM_INT64 ? om__lower_alias(l) : lower_map(l, c);
}

/* Not differentiable (PyTorch's gradient is zero almost everywhere), as sign. */
UNARY_DEF(floor, LOOPS4(floor_f32, same_i64, NULL, floor_f64), NULL, 0, -3, 3, 0, 0, lower_rounding, ONNX_AS("Floor", NULL, "Floor (int64: the input)"))
UNARY_DEF(ceil, LOOPS4(ceil_f32, same_i64, NULL, ceil_f64), NULL, 0, -3, 3, 0, 0, lower_rounding, ONNX_AS("Ceil", NULL, "Ceil (int64: the input)"))
UNARY_DEF(round, LOOPS4(round_f32, same_i64, NULL, round_f64), NULL, 0, -3, 3, 0, 0, lower_rounding, ONNX_AS("Round", NULL, "Round, half to even (int64: the input)"))

/* ---- log1p and expm1: exact near 0 (src/core/math.c; integers promoted to float32) ---- */

UNARY_LOOP(log1p_f32, float, om__log1pf(a))
UNARY_LOOP(expm1_f32, float, om__expm1f(a))

static bool log1p_backward(const om_record *r, om_tensor *const *g, om_tensor **gin) {
  om_scope s = {0}; /* g / (1 + x) */
  gin[0] = om_div(g[0], om__keep(&s, om_add_scalar(r->in[0], 1)));
  om__scope_end(&s);
  return gin[0] != NULL;
}
static bool expm1_backward(const om_record *r, om_tensor *const *g, om_tensor **gin) {
  om_scope s = {0}; /* g (y + 1), as PyTorch */
  return unary_grad(&s, r, g[0], om__keep(&s, om_add_scalar(r->saved[0], 1)), gin);
}

/* ONNX has neither. Kahan's forms (Higham, Accuracy and Stability of Numerical Algorithms, 1.14)
 * keep their relative accuracy near 0, where Log(1 + x) and Exp(x) - 1 lose every digit:
 *   log1p: u = 1 + x, d = u - 1; Where(d == x, Log(u), Where(d == 0, x, x Log(u) / d))
 *          (d == x: 1 + x was exact, so Log(u) is the value, also at -1 and infinity);
 *   expm1: u = Exp(x), d = u - 1, lg = Log(u); Where(u == 1, x, Where(lg == +-inf, d, d x / lg))
 *          (u == 0 or infinite: d is -1 or infinity).
 * Each node rounds in float, so a value may be an ulp or two from the kernel's, which rounds once. */
static bool lower_log1p_expm1(om_lower *l, const om_call *c) {
  const om_meta *m = &c->out_meta[0];
  om_meta b = *m;
  b.dtype = OM_BOOL;
  bool log1p = c->op == OM_OP_log1p;
  int x = om__lower_input(l, 0), one = om__lower_float(l, 1), zero = om__lower_float(l, 0), inf = om__lower_float(l, INFINITY);
  int u, d, lg, xl, q, outer, inner, alg, out;
  if (x < 0 || one < 0 || zero < 0 || inf < 0 || !om__emit(l, log1p ? "Add" : "Exp", log1p ? (int[]){x, one} : &x, log1p ? 2 : 1, m, 1, &u, NULL, 0) ||
      !om__emit(l, "Sub", (int[]){u, one}, 2, m, 1, &d, NULL, 0) || !om__emit(l, "Log", &u, 1, m, 1, &lg, NULL, 0) ||
      !om__emit(l, "Mul", (int[]){x, log1p ? lg : d}, 2, m, 1, &xl, NULL, 0) ||
      !om__emit(l, "Div", (int[]){xl, log1p ? d : lg}, 2, m, 1, &q, NULL, 0))
    return false;
  if (log1p ? !om__emit(l, "Equal", (int[]){d, x}, 2, &b, 1, &outer, NULL, 0) || !om__emit(l, "Equal", (int[]){d, zero}, 2, &b, 1, &inner, NULL, 0) ||
                  !om__emit(l, "Where", (int[]){inner, x, q}, 3, m, 1, &q, NULL, 0) || !om__emit(l, "Where", (int[]){outer, lg, q}, 3, m, 1, &out, NULL, 0)
            : !om__emit(l, "Equal", (int[]){u, one}, 2, &b, 1, &outer, NULL, 0) || !om__emit(l, "Abs", &lg, 1, m, 1, &alg, NULL, 0) ||
                  !om__emit(l, "Equal", (int[]){alg, inf}, 2, &b, 1, &inner, NULL, 0) || !om__emit(l, "Where", (int[]){inner, d, q}, 3, m, 1, &q, NULL, 0) ||
                  !om__emit(l, "Where", (int[]){outer, x, q}, 3, m, 1, &out, NULL, 0))
    return false;
  om__lower_output(l, 0, out);
  return true;
}

UNARY_DEF(log1p, TRIG_MATH(log1p_f32), log1p_backward, OM_SAVES_IN(0), -0.9, 3, FLOAT, 0, lower_log1p_expm1,
          ONNX_AS("Log", NULL, "Kahan's Where(d == x, Log(u), Where(d == 0, x, x Log(u) / d)), u = 1 + x, d = u - 1"))
UNARY_DEF(expm1, TRIG_MATH(expm1_f32), expm1_backward, OM_SAVES_OUT(0), -3, 3, FLOAT, 0, lower_log1p_expm1,
          ONNX_AS("Exp", NULL, "Kahan's Where(u == 1, x, Where(Abs(Log(u)) == inf, d, d x / Log(u))), u = Exp(x), d = u - 1"))

/* ---- logical_not and bitwise_not ---- */

UNARY_LOOP(logical_not_b8, uint8_t, !a)
UNARY_LOOP(bitwise_not_i64, int64_t, ~a)

#define BOOLS OM_PROMOTE_BOOL
UNARY_DEF(logical_not, LOOPS3(NULL, NULL, logical_not_b8), NULL, 0, -1, 1, BOOLS, 0, lower_map, ONNX_AS("Not", NULL, "Not (other dtypes Cast to bool first)"))
UNARY_DEF(bitwise_not, LOOPS3(NULL, bitwise_not_i64, logical_not_b8), NULL, 0, -8, 8, COMMON, OM_INT64, lower_map,
          ONNX_AS("BitwiseNot", NULL, "BitwiseNot (bool: Not)"), .bool_onnx = "Not")

/* ---- activations with parameters: float attrs (defaults resolved in infer), read by the
 * kernels as floats, as PyTorch's CPU kernels compute in float ---- */

/* std::max / std::min (a NaN first operand is kept), as PyTorch's kernels compare. */
static inline float max_std(float a, float b) { return a < b ? b : a; }
static inline float min_std(float a, float b) { return b < a ? b : a; }

/* k0, k1: the op's first two float attrs as floats; at_: all of them. */
#define PARAM_LOOP(fname, EXPR)                                                          \
  MAP_LOOP(fname, float, EXPR, const om_attrs *at_ = ctx; const float k0 = (float)at_->f[0];   \
           const float k1 = (float)at_->f[1]; (void)k0; (void)k1)

/* gelu: kBeta = sqrt(2/pi) and kKappa as PyTorch's tanh approximation */
#define GELU_BETA 0.7978845608028654f
#define GELU_KAPPA 0.044715f
static float gelu_tanh_f(float a) {
  float inner = GELU_BETA * (a + GELU_KAPPA * (a * a * a));
  return 0.5f * a * (1.0f + om__tanhf(inner));
}

PARAM_LOOP(leaky_relu_f32, a > 0 ? a : a * k0)
PARAM_LOOP(elu_f32, a <= 0 ? om__expm1f(a) * k0 : a)
/* gelu on an array (y may be x): approximate 'none' by om__gelu_erff_n (x Phi(x), its tail from
 * erfc; or, with the second int attr set, fast mode's om__gelu_erff_fast_n), the tanh form
 * element by element. */
static void gelu_n(const float *x, float *y, int64_t n, const void *ctx) {
  const om_attrs *at = ctx;
  if (at->i[0]) {
    for (int64_t k = 0; k < n; k++) y[k] = gelu_tanh_f(x[k]);
    return;
  }
  (at->i[1] ? om__gelu_erff_fast_n : om__gelu_erff_n)(x, y, n);
}

ARRAY_LOOP(gelu_f32, gelu_n)
/* silu on an array (y may be x): sigmoid for a chunk by om__sigmoidf_n, then x times it, the
 * bits of its ONNX lowering Mul(x, Sigmoid(x)) as the Session runs it. Not x / (1 + e^-x), which
 * is -0 from -88.7 (e^-x overflows) where x sigmoid(x) is a small negative down to -103.9: a
 * sign() after it parted eager and the Session there. */
static void silu_n(const float *x, float *y, int64_t n, const void *ctx) {
  (void)ctx;
  float t[64];
  for (int64_t k0 = 0; k0 < n; k0 += 64) {
    int64_t m = n - k0 < 64 ? n - k0 : 64;
    om__sigmoidf_n(x + k0, t, m);
    for (int64_t k = 0; k < m; k++) y[k0 + k] = x[k0 + k] * t[k];
  }
}

ARRAY_LOOP(silu_f32, silu_n)
PARAM_LOOP(softplus_f32, a * k0 > k1 ? a : om__log1pf(om__expf(a * k0)) / k0)
/* mish on an array (y may be x): softplus with PyTorch's threshold 20 for a chunk, om__tanhf_n on
 * it, then x times that: the bits of softplus, tanh and mul as separate ops. */
static void mish_n(const float *x, float *y, int64_t n, const void *ctx) {
  (void)ctx;
  float t[64];
  for (int64_t k0 = 0; k0 < n; k0 += 64) {
    int64_t m = n - k0 < 64 ? n - k0 : 64;
    for (int64_t k = 0; k < m; k++) t[k] = x[k0 + k] > 20.0f ? x[k0 + k] : om__log1pf(om__expf(x[k0 + k]));
    om__tanhf_n(t, t, m);
    for (int64_t k = 0; k < m; k++) y[k0 + k] = x[k0 + k] * t[k];
  }
}

ARRAY_LOOP(mish_f32, mish_n)
PARAM_LOOP(hardswish_f32, a * min_std(max_std(a + 3.0f, 0.0f), 6.0f) / 6.0f)
PARAM_LOOP(hardsigmoid_f32, min_std(max_std(a + 3.0f, 0.0f), 6.0f) / 6.0f)
PARAM_LOOP(hardtanh_f32, min_std(max_std(a, k0), k1))

/* Resolves the float attrs' defaults; gelu's int attrs are approximate (0 'none', 1 'tanh') and
 * whether erf is fast mode's float one (0 no, 1 yes: the Session's fast mode sets it). */
static bool infer_unary_params(om_call *c) {
  const kernels *k = om__ops[c->op]->impl;
  int n_i = c->op == OM_OP_gelu ? 2 : 0;
  if (c->attrs.n_f > k->n_f || c->attrs.n_i > n_i)
    return om__fail(OM_ERR_INVALID_ARGUMENT, "%s: takes %d float attributes (%s) and %d int ones, got %d and %d",
                    om_op_name(c->op), k->n_f, k->n_f ? k->params : "none", n_i, c->attrs.n_f, c->attrs.n_i);
  for (int j = c->attrs.n_f; j < k->n_f; j++) c->attrs.f[j] = k->f_default[j];
  c->attrs.n_f = k->n_f;
  if (n_i) {
    for (int j = c->attrs.n_i; j < n_i; j++) c->attrs.i[j] = 0;
    c->attrs.n_i = n_i;
    if (c->attrs.i[0] != 0 && c->attrs.i[0] != 1)
      return om__fail(OM_ERR_INVALID_ARGUMENT, "gelu: approximate must be 'none' (0) or 'tanh' (1), got %lld",
                      (long long)c->attrs.i[0]);
    if (c->attrs.i[1] != 0 && c->attrs.i[1] != 1)
      return om__fail(OM_ERR_INVALID_ARGUMENT, "gelu: fast erf must be 0 or 1, got %lld", (long long)c->attrs.i[1]);
  }
  return infer_unary(c);
}

/* where(cond, g * f, other): f and other may be NULL for g and 0. New reference. */
static om_tensor *grad_where(om_scope *s, om_tensor *cond, om_tensor *g, om_tensor *f, om_tensor *other) {
  om_tensor *zero = other ? other : om__keep(s, om_scalar(0, OM_FLOAT32));
  om_tensor *gf = f ? om__keep(s, om_mul(g, f)) : g;
  return cond && gf ? om_where(cond, gf, zero) : NULL;
}

/* x > t for a float threshold t. New reference kept by s. */
static om_tensor *above(om_scope *s, om_tensor *x, double t) {
  return om__keep(s, om_gt(x, om__keep(s, om_scalar(t, OM_FLOAT32))));
}

static bool leaky_relu_backward(const om_record *r, om_tensor *const *g, om_tensor **gin) {
  om_scope s = {0}; /* x > 0 ? g : g * slope */
  om_tensor *x = r->in[0];
  gin[0] = grad_where(&s, above(&s, x, 0), g[0], NULL, om__keep(&s, om_scale(g[0], r->attrs.f[0])));
  om__scope_end(&s);
  return gin[0] != NULL;
}
static bool elu_backward(const om_record *r, om_tensor *const *g, om_tensor **gin) {
  om_scope s = {0}; /* x > 0 ? g : g * alpha * e^x */
  om_tensor *x = r->in[0], *d = om__keep(&s, om_scale(om__keep(&s, om_exp(x)), r->attrs.f[0]));
  gin[0] = grad_where(&s, above(&s, x, 0), g[0], NULL, d ? om__keep(&s, om_mul(g[0], d)) : NULL);
  om__scope_end(&s);
  return gin[0] != NULL;
}
static bool gelu_backward(const om_record *r, om_tensor *const *g, om_tensor **gin) {
  om_scope s = {0};
  om_tensor *x = r->in[0], *one = om__keep(&s, om_scalar(1, OM_FLOAT32)), *d;
  if (!r->attrs.i[0]) { /* cdf + x pdf: 0.5 (1 + erf(x / sqrt 2)) + x e^(-x^2/2) / sqrt(2 pi) */
    om_tensor *erf = om__keep(&s, om_erf(om__keep(&s, om_scale(x, 0.70710678118654752))));
    om_tensor *head = om__keep(&s, om_scale(om__keep(&s, om_add(one, erf)), 0.5));
    /* in the forward's tail 1 + erf cancels: there cdf = gelu(x) / x, from the forward's erfc
     * (x is below -0.7, never 0; its derivative is pdf, as the head's is) */
    om_tensor *tail = om__keep(&s, om_div(om__keep(&s, om_gelu(x, false)), x));
    om_tensor *cut = om__keep(&s, om_scalar(-0.7071068f, OM_FLOAT32));
    om_tensor *cdf = om__keep(&s, om_where(om__keep(&s, om_lt(x, cut)), tail, head));
    om_tensor *e = om__keep(&s, om_exp(om__keep(&s, om_scale(om__keep(&s, om_mul(x, x)), -0.5))));
    om_tensor *pdf = om__keep(&s, om_scale(e, 0.39894228040143268));
    d = om__keep(&s, om_add(cdf, om__keep(&s, om_mul(x, pdf))));
  } else { /* t = tanh(b (x + k x^3)): 0.5 (1 + t) + 0.5 x (1 - t^2) b (1 + 3 k x^2) */
    om_tensor *x2 = om__keep(&s, om_mul(x, x));
    om_tensor *inner = om__keep(&s, om_scale(om__keep(&s, om_add(x, om__keep(&s, om_scale(om__keep(&s, om_mul(x2, x)), GELU_KAPPA)))), GELU_BETA));
    om_tensor *t = om__keep(&s, om_tanh(inner));
    om_tensor *left = om__keep(&s, om_scale(om__keep(&s, om_add(one, t)), 0.5));
    om_tensor *sech2 = om__keep(&s, om_sub(one, om__keep(&s, om_mul(t, t))));
    om_tensor *dinner = om__keep(&s, om_scale(om__keep(&s, om_add_scalar(om__keep(&s, om_scale(x2, 3 * GELU_KAPPA)), 1)), GELU_BETA));
    om_tensor *right = om__keep(&s, om_mul(om__keep(&s, om_scale(x, 0.5)), om__keep(&s, om_mul(sech2, dinner))));
    d = om__keep(&s, om_add(left, right));
  }
  return unary_grad(&s, r, g[0], d, gin);
}
static bool silu_backward(const om_record *r, om_tensor *const *g, om_tensor **gin) {
  om_scope s = {0}; /* sig (1 + x (1 - sig)) */
  om_tensor *x = r->in[0], *sig = om__keep(&s, om_sigmoid(x)), *one = om__keep(&s, om_scalar(1, OM_FLOAT32));
  om_tensor *inner = om__keep(&s, om_add(one, om__keep(&s, om_mul(x, om__keep(&s, om_sub(one, sig))))));
  return unary_grad(&s, r, g[0], om__keep(&s, om_mul(sig, inner)), gin);
}
static bool softplus_backward(const om_record *r, om_tensor *const *g, om_tensor **gin) {
  om_scope s = {0}; /* x beta > threshold ? g : g sigmoid(x beta) */
  om_tensor *xb = om__keep(&s, om_scale(r->in[0], r->attrs.f[0]));
  gin[0] = grad_where(&s, above(&s, xb, r->attrs.f[1]), g[0], NULL, om__keep(&s, om_mul(g[0], om__keep(&s, om_sigmoid(xb)))));
  om__scope_end(&s);
  return gin[0] != NULL;
}
/* tanh(sp) + x sigmoid(x) (1 - tanh(sp)^2), sp = softplus(x): PyTorch's mish_backward */
static bool mish_backward(const om_record *r, om_tensor *const *g, om_tensor **gin) {
  om_scope s = {0};
  om_tensor *x = r->in[0], *one = om__keep(&s, om_scalar(1, OM_FLOAT32));
  om_tensor *t = om__keep(&s, om_tanh(om__keep(&s, om_softplus(x, 1, 20))));
  om_tensor *sech2 = om__keep(&s, om_sub(one, om__keep(&s, om_mul(t, t))));
  om_tensor *right = om__keep(&s, om_mul(om__keep(&s, om_mul(x, om__keep(&s, om_sigmoid(x)))), sech2));
  return unary_grad(&s, r, g[0], om__keep(&s, om_add(t, right)), gin);
}
static bool hardswish_backward(const om_record *r, om_tensor *const *g, om_tensor **gin) {
  om_scope s = {0}; /* x < -3: 0; x <= 3: g (x / 3 + 0.5); else g */
  om_tensor *x = r->in[0];
  om_tensor *lo = om__keep(&s, om_lt(x, om__keep(&s, om_scalar(-3, OM_FLOAT32))));
  om_tensor *hi = above(&s, x, 3);
  om_tensor *mid = om__keep(&s, om_mul(g[0], om__keep(&s, om_add_scalar(om__keep(&s, om_div(x, om__keep(&s, om_scalar(3, OM_FLOAT32)))), 0.5))));
  om_tensor *upper = hi && mid ? om__keep(&s, om_where(hi, g[0], mid)) : NULL;
  gin[0] = lo && upper ? om_where(lo, om__keep(&s, om_scalar(0, OM_FLOAT32)), upper) : NULL;
  om__scope_end(&s);
  return gin[0] != NULL;
}
/* g where lo < x < hi, else 0: PyTorch's hardtanh_backward, 0 at the bounds themselves (clamp's
 * gradient passes there), so relu6 = hardtanh(0, 6) is not clamp(0, 6) under autograd. */
static bool between_grad(const om_record *r, om_tensor *g, double lo, double hi, om_tensor **gin) {
  om_scope s = {0};
  om_tensor *x = r->in[0], *below = om__keep(&s, om_lt(x, om__keep(&s, om_scalar(hi, OM_FLOAT32))));
  om_tensor *inner = below ? om__keep(&s, grad_where(&s, below, g, NULL, NULL)) : NULL;
  gin[0] = inner ? grad_where(&s, above(&s, x, lo), inner, NULL, NULL) : NULL;
  om__scope_end(&s);
  return gin[0] != NULL;
}
static bool hardtanh_backward(const om_record *r, om_tensor *const *g, om_tensor **gin) {
  return between_grad(r, g[0], r->attrs.f[0], r->attrs.f[1], gin);
}
static bool hardsigmoid_backward(const om_record *r, om_tensor *const *g, om_tensor **gin) {
  om_scope s = {0}; /* -3 < x < 3: g / 6, else 0 */
  om_tensor *sixth = om__keep(&s, om_scale(g[0], 1.0 / 6.0));
  bool ok = sixth && between_grad(r, sixth, -3, 3, gin);
  om__scope_end(&s);
  return ok;
}
static bool erf_backward(const om_record *r, om_tensor *const *g, om_tensor **gin) {
  om_scope s = {0}; /* 2 / sqrt(pi) e^(-x^2) */
  om_tensor *x = r->in[0], *e = om__keep(&s, om_exp(om__keep(&s, om_neg(om__keep(&s, om_mul(x, x))))));
  return unary_grad(&s, r, g[0], om__keep(&s, om_scale(e, 1.1283791670955126)), gin);
}

/* One node with one float attribute: LeakyRelu(alpha), Elu(alpha). */
static bool lower_alpha(om_lower *l, const om_call *c) {
  const kernels *k = om__ops[c->op]->impl;
  return om__lower_node(l, c, k->onnx[0], &OM_ATTR_FLOAT("alpha", c->attrs.f[0]), 1);
}
/* Gelu (opset 20) with PyTorch's approximate ('none' is ONNX's default). */
static bool lower_gelu(om_lower *l, const om_call *c) {
  return om__lower_node(l, c, "Gelu", &OM_ATTR_STRING("approximate", "tanh"), c->attrs.i[0] ? 1 : 0);
}
/* x * Sigmoid(x). */
static bool lower_silu(om_lower *l, const om_call *c) {
  int x = om__lower_input(l, 0), sig, out;
  if (!om__emit(l, "Sigmoid", &x, 1, &c->out_meta[0], 1, &sig, NULL, 0) ||
      !om__emit(l, "Mul", (int[]){x, sig}, 2, &c->out_meta[0], 1, &out, NULL, 0))
    return false;
  om__lower_output(l, 0, out);
  return true;
}
/* PyTorch's thresholded form: Where(x b > threshold, x, Softplus(x b) / b); ONNX's Softplus has
 * neither beta nor the threshold (the Mul and Div are left out when beta is 1). */
static bool lower_softplus(om_lower *l, const om_call *c) {
  const om_meta *m = &c->out_meta[0];
  om_meta cond = *m;
  cond.dtype = OM_BOOL;
  double beta = c->attrs.f[0];
  int x = om__lower_input(l, 0), xb = x, sp, gt, out, b = beta != 1 ? om__lower_float(l, beta) : 0;
  int t = om__lower_float(l, c->attrs.f[1]);
  if (b < 0 || t < 0 || (beta != 1 && !om__emit(l, "Mul", (int[]){x, b}, 2, m, 1, &xb, NULL, 0)) ||
      !om__emit(l, "Softplus", &xb, 1, m, 1, &sp, NULL, 0) ||
      (beta != 1 && !om__emit(l, "Div", (int[]){sp, b}, 2, m, 1, &sp, NULL, 0)) ||
      !om__emit(l, "Greater", (int[]){xb, t}, 2, &cond, 1, &gt, NULL, 0) ||
      !om__emit(l, "Where", (int[]){gt, x, sp}, 3, m, 1, &out, NULL, 0))
    return false;
  om__lower_output(l, 0, out);
  return true;
}

/* Clip(x, min, max) with both bounds. */
static bool lower_hardtanh(om_lower *l, const om_call *c) {
  int in[3] = {om__lower_input(l, 0), om__lower_float(l, c->attrs.f[0]), om__lower_float(l, c->attrs.f[1])}, out;
  if (in[1] < 0 || in[2] < 0 || !om__emit(l, "Clip", in, 3, &c->out_meta[0], 1, &out, NULL, 0)) return false;
  om__lower_output(l, 0, out);
  return true;
}
/* Div(Clip(Add(x, 3), 0, 6), 6): the kernel's arithmetic step by step, so the graph gives its
 * bits (ONNX's HardSigmoid computes x / 6 + 0.5, which rounds differently). */
static bool lower_hardsigmoid(om_lower *l, const om_call *c) {
  const om_meta *m = &c->out_meta[0];
  int x = om__lower_input(l, 0), three = om__lower_float(l, 3), zero = om__lower_float(l, 0), six = om__lower_float(l, 6), t, u, out;
  if (three < 0 || zero < 0 || six < 0 || !om__emit(l, "Add", (int[]){x, three}, 2, m, 1, &t, NULL, 0) ||
      !om__emit(l, "Clip", (int[]){t, zero, six}, 3, m, 1, &u, NULL, 0) || !om__emit(l, "Div", (int[]){u, six}, 2, m, 1, &out, NULL, 0))
    return false;
  om__lower_output(l, 0, out);
  return true;
}

#define PARAM_DEF(NAME, LOOP, N_F, F0, F1, PARAMS, BACKWARD, LO, HI, T_F0, T_F1, T_NI, LOWER, ONNX)         \
  static const kernels NAME##_kernels = {LOOP, .onnx = ONNX_NODES(ONNX), .n_f = N_F, .f_default = {F0, F1}, .params = PARAMS}; \
  const om_op_def om__op_##NAME = {                                                                   \
      .name = #NAME, .n_in = 1, .n_out = 1, .saves = OM_SAVES_IN(0), .infer = infer_unary_params,     \
      .forward = forward_map, .backward = BACKWARD, .lower = LOWER, .onnx = ONNX_DOC(ONNX),          \
      .impl = &NAME##_kernels,                                                                        \
      .test = {.n_in = 1, .ndims = {2}, .shapes = {{3, 4}}, .lo = LO, .hi = HI,                       \
               .attrs = {.n_f = N_F, .f = {T_F0, T_F1}, .n_i = T_NI, .i = {1}}}};

PARAM_DEF(leaky_relu, LOOPS3(leaky_relu_f32, NULL, NULL), 1, 0.01, 0, "negative_slope", leaky_relu_backward, -2, 2, 0.2, 0, 0, lower_alpha, ONNX1("LeakyRelu"))
PARAM_DEF(elu, MATH1(elu_f32, EACH_SCALAR_MATH), 1, 1.0, 0, "alpha", elu_backward, -2, 2, 0.7, 0, 0, lower_alpha, ONNX1("Elu"))
PARAM_DEF(gelu, MATH1(gelu_f32, EACH_ARRAY_MATH), 0, 0, 0, "", gelu_backward, -3, 3, 0, 0, 1, lower_gelu, ONNX_AS("Gelu", NULL, "Gelu (opset 20, approximate)"))
PARAM_DEF(silu, MATH1(silu_f32, EACH_ARRAY_MATH), 0, 0, 0, "", silu_backward, -4, 4, 0, 0, 0, lower_silu, ONNX_AS("Sigmoid", "Mul", "Mul(x, Sigmoid(x))"))
PARAM_DEF(softplus, MATH1(softplus_f32, EACH_SCALAR_MATH), 2, 1.0, 20.0, "beta, threshold", softplus_backward, -3, 3, 2.0, 3.0, 0, lower_softplus,
          ONNX_AS("Softplus", NULL, "Where(Greater(x b, threshold), x, Div(Softplus(Mul(x, b)), b))"))
PARAM_DEF(hardswish, LOOPS3(hardswish_f32, NULL, NULL), 0, 0, 0, "", hardswish_backward, -4.5, 4.5, 0, 0, 0, lower_map, ONNX1("HardSwish"))
PARAM_DEF(hardsigmoid, LOOPS3(hardsigmoid_f32, NULL, NULL), 0, 0, 0, "", hardsigmoid_backward, -4.5, 4.5, 0, 0, 0, lower_hardsigmoid,
          ONNX_AS("Add", "Clip", "Div(Clip(Add(x, 3), 0, 6), 6) (the kernel's steps; ONNX's HardSigmoid rounds differently)"))
PARAM_DEF(hardtanh, LOOPS3(hardtanh_f32, NULL, NULL), 2, -1.0, 1.0, "min_val, max_val", hardtanh_backward, -2, 2, -0.5, 0.75, 0, lower_hardtanh,
          ONNX_AS("Clip", NULL, "Clip(x, min_val, max_val)"))
UNARY_DEF(erf, MATH1(erf_f32, EACH_ARRAY_MATH), erf_backward, OM_SAVES_IN(0), -2, 2, 0, 0, lower_map, ONNX1("Erf"))
UNARY_DEF(mish, MATH1(mish_f32, EACH_ARRAY_MATH), mish_backward, OM_SAVES_IN(0), -3, 3, 0, 0, lower_map, ONNX_AS("Mish", NULL, "Mish (opset 18)"))

om_tensor *om_leaky_relu(om_tensor *a, double negative_slope) {
  return om__apply1(OM_OP_leaky_relu, &a, 1, &(om_attrs){.n_f = 1, .f = {negative_slope}});
}
om_tensor *om_elu(om_tensor *a, double alpha) { return om__apply1(OM_OP_elu, &a, 1, &(om_attrs){.n_f = 1, .f = {alpha}}); }
om_tensor *om_gelu(om_tensor *a, bool tanh_approximation) {
  return om__apply1(OM_OP_gelu, &a, 1, &(om_attrs){.n_i = 1, .i = {tanh_approximation}});
}
om_tensor *om_silu(om_tensor *a) { return om__apply1(OM_OP_silu, &a, 1, NULL); }
om_tensor *om_softplus(om_tensor *a, double beta, double threshold) {
  return om__apply1(OM_OP_softplus, &a, 1, &(om_attrs){.n_f = 2, .f = {beta, threshold}});
}
om_tensor *om_hardswish(om_tensor *a) { return om__apply1(OM_OP_hardswish, &a, 1, NULL); }
om_tensor *om_hardsigmoid(om_tensor *a) { return om__apply1(OM_OP_hardsigmoid, &a, 1, NULL); }
om_tensor *om_hardtanh(om_tensor *a, double min_val, double max_val) {
  return om__apply1(OM_OP_hardtanh, &a, 1, &(om_attrs){.n_f = 2, .f = {min_val, max_val}});
}

/* ---- prelu(x, weight): x > 0 ? x : weight x, weight [1] or [C], C the channel dim of x (dim 1,
 * a 1-D x's dim 0), as PyTorch's F.prelu; where(x > 0, x, x w) as separate ops gives the same bits ---- */

BINARY_LOOP(prelu_f32, float, float, a > 0 ? a : a * b)

/* The shape the weight takes against x: x's rank, 1 but along the channel dim. */
static void prelu_slope_shape(const om_tensor *x, const om_tensor *w, int64_t *shape) {
  for (int d = 0; d < x->ndim; d++) shape[d] = 1;
  if (x->ndim) shape[x->ndim >= 2] = om_tensor_numel(w);
}

static bool infer_prelu(om_call *c) {
  om_tensor *x = c->in[0], *w = c->in[1];
  if (x->dtype != OM_FLOAT32 || w->dtype != OM_FLOAT32)
    return om__fail(OM_ERR_DTYPE_MISMATCH, "prelu: takes a float32 input and weight, got %s and %s", om_dtype_name(x->dtype), om_dtype_name(w->dtype));
  int64_t n = om_tensor_numel(w), ch = x->ndim ? x->shape[x->ndim >= 2] : 1;
  if (w->ndim > 1 || (n != 1 && n != ch)) {
    char buf[OM_SHAPE_STR_LEN];
    return om__fail(OM_ERR_SHAPE_MISMATCH, "prelu: weight of %lld elements (shape %s) for %lld channels: one, or one per channel",
                    (long long)n, om__shape_str(buf, sizeof buf, w->shape, w->ndim), (long long)ch);
  }
  c->out_meta[0] = (om_meta){.dtype = OM_FLOAT32, .ndim = x->ndim};
  memcpy(c->out_meta[0].shape, x->shape, sizeof x->shape);
  return true;
}

/* The map over x and the weight seen in the slope's shape (a header on its storage). */
static bool forward_prelu(om_call *c) {
  om_tensor *x = c->in[0], *w = c->in[1], *slope = om__alias(w);
  if (!slope) return false;
  prelu_slope_shape(x, w, slope->shape);
  slope->ndim = x->ndim;
  for (int d = 0; d < x->ndim; d++) slope->strides[d] = 0;
  if (x->ndim && w->ndim == 1) slope->strides[x->ndim >= 2] = w->strides[0];
  om_tensor *in[2] = {x, slope};
  om_call each = *c;
  each.in = in;
  bool ok = forward_map(&each);
  om_tensor_release(slope);
  return ok;
}

/* x: x > 0 ? g : g w; w: the sum of x > 0 ? 0 : g x over all but the channel dim. */
static bool prelu_backward(const om_record *r, om_tensor *const *g, om_tensor **gin) {
  om_scope s = {0};
  om_tensor *x = r->in[0], *w = r->in[1], *pos = above(&s, x, 0);
  int64_t shape[OM_MAX_DIMS];
  prelu_slope_shape(x, w, shape);
  if (om__wants(r, 0)) {
    om_tensor *slope = om__keep(&s, om_reshape(w, shape, x->ndim));
    gin[0] = slope ? grad_where(&s, pos, g[0], NULL, om__keep(&s, om_mul(g[0], slope))) : NULL;
  }
  if (om__wants(r, 1)) {
    om_tensor *gx = om__keep(&s, om_mul(g[0], x)), *zero = om__keep(&s, om_scalar(0, OM_FLOAT32));
    om_tensor *neg = pos && gx && zero ? om__keep(&s, om_where(pos, zero, gx)) : NULL;
    om_tensor *summed = neg ? om__keep(&s, om__sum_to(neg, shape, x->ndim)) : NULL;
    gin[1] = summed ? om_reshape(summed, w->shape, w->ndim) : NULL;
  }
  return done(&s, r, gin);
}

/* PRelu(x, Reshape(weight, the slope's shape)): ONNX broadcasts the slope from the right. No
 * channels (a weight of 0 elements) is a 0 in the shape, which the Reshape keeps with allowzero. */
static bool lower_prelu(om_lower *l, const om_call *c) {
  om_meta m = {.dtype = OM_FLOAT32, .ndim = c->in[0]->ndim};
  prelu_slope_shape(c->in[0], c->in[1], m.shape);
  bool none = om_tensor_numel(c->in[1]) == 0;
  int x = om__lower_input(l, 0), w = om__lower_input(l, 1), shape = om__lower_ints(l, m.shape, m.ndim), slope, out;
  if (x < 0 || w < 0 || shape < 0 || !om__emit(l, "Reshape", (int[]){w, shape}, 2, &m, 1, &slope, &OM_ATTR_INT("allowzero", 1), none) ||
      !om__emit(l, "PRelu", (int[]){x, slope}, 2, &c->out_meta[0], 1, &out, NULL, 0))
    return false;
  om__lower_output(l, 0, out);
  return true;
}

static const kernels prelu_kernels = {LOOPS3(prelu_f32, NULL, NULL)};
const om_op_def om__op_prelu = {
    .name = "prelu", .n_in = 2, .n_out = 1, .saves = OM_SAVES_IN(0) | OM_SAVES_IN(1), .infer = infer_prelu,
    .forward = forward_prelu, .backward = prelu_backward, .lower = lower_prelu, .onnx = "Reshape, PRelu",
    .impl = &prelu_kernels, .test = {.n_in = 2, .ndims = {3, 1}, .shapes = {{2, 3, 4}, {3}}, .lo = -2, .hi = 2}};

om_tensor *om_prelu(om_tensor *x, om_tensor *weight) { return om__apply1(OM_OP_prelu, (om_tensor *[]){x, weight}, 2, NULL); }

/* ---- clamp(a, min?, max?): attrs i = {has_min, has_max, min, max as int64}, f = {min, max} ----
 * float32 reads the float bounds, int64 the integer ones (om_clamp fills them from the doubles,
 * which must then be integers). */

typedef struct clamp_ctx {
  bool has_lo, has_hi;
  float flo, fhi;
  int64_t ilo, ihi;
} clamp_ctx;

/* An absent bound is -inf / +inf, which max_std / min_std leave every value (NaN too) alone for. */
static void clamp_f32(char **p, const int64_t *s, int64_t n, const void *ctx) {
  const clamp_ctx *k = ctx;
  const float lo = k->has_lo ? k->flo : -INFINITY, hi = k->has_hi ? k->fhi : INFINITY;
  if (s[0] == sizeof(float) && s[1] == sizeof(float)) {
    float *o = (float *)p[0];
    const float *pa = (const float *)p[1];
    for (int64_t i = 0; i < n; i++) o[i] = min_std(max_std(pa[i], lo), hi);
  } else {
    for (int64_t i = 0; i < n; i++)
      *(float *)(p[0] + i * s[0]) = min_std(max_std(*(const float *)(p[1] + i * s[1]), lo), hi);
  }
}
static void clamp_i64(char **p, const int64_t *s, int64_t n, const void *ctx) {
  const clamp_ctx *k = ctx;
  for (int64_t i = 0; i < n; i++) {
    int64_t a = *(const int64_t *)(p[1] + i * s[1]);
    if (k->has_lo && a < k->ilo) a = k->ilo;
    if (k->has_hi && a > k->ihi) a = k->ihi;
    *(int64_t *)(p[0] + i * s[0]) = a;
  }
}

static bool infer_clamp(om_call *c) {
  om_attrs *at = &c->attrs;
  om_tensor *a = c->in[0];
  if (a->dtype == OM_BOOL) return om__fail(OM_ERR_DTYPE_MISMATCH, "clamp: takes float32 or int64, not bool");
  if (at->n_i < 2 || at->n_i > 4 || at->n_i == 3 || at->n_f > 2 || (at->n_f < 2 && at->n_i < 4))
    return om__fail(OM_ERR_INVALID_ARGUMENT, "clamp: attributes are {has_min, has_max[, min, max as int64]} and "
                    "{min, max}, got %d int and %d float", at->n_i, at->n_f);
  if (!at->i[0] && !at->i[1]) return om__fail(OM_ERR_INVALID_ARGUMENT, "clamp: at least one of min or max must be given");
  if (a->dtype == OM_INT64 && at->n_i == 2)
    for (int j = 0; j < 2; j++) {
      double v = at->f[j];
      if (at->i[j] && !(v == floor(v) && v >= -9223372036854775808.0 && v < 9223372036854775808.0))
        return om__fail(OM_ERR_INVALID_ARGUMENT, "clamp: %s %g is not an int64 for an int64 input (cast the input to float32 first)",
                        j ? "max" : "min", v);
      at->i[2 + j] = at->i[j] ? (int64_t)v : 0;
    }
  if (a->dtype == OM_FLOAT32 && at->n_f < 2)
    for (int j = 0; j < 2; j++) at->f[j] = (double)at->i[2 + j];
  at->n_i = 4, at->n_f = 2;
  at->i[0] = at->i[0] != 0, at->i[1] = at->i[1] != 0;
  if (a->dtype == OM_INT64) at->f[0] = 0, at->f[1] = 0; /* one canonical form: the int bounds rule */
  else at->i[2] = 0, at->i[3] = 0;
  return infer_unary(c);
}

static bool forward_clamp(om_call *c) {
  const om_attrs *at = &c->attrs;
  clamp_ctx k = {at->i[0], at->i[1], (float)at->f[0], (float)at->f[1], at->i[2], at->i[3]};
  om_tensor *o = c->out[0], *a = c->in[0];
  int64_t st[2][OM_MAX_DIMS];
  om__broadcast_strides(o, o->ndim, st[0]);
  om__broadcast_strides(a, o->ndim, st[1]);
  const kernels *ks = om__ops[c->op]->impl;
  om__iterate_each(2, (char *[]){om__data(o), om__data(a)}, st, o->shape, o->ndim, ks->loop[a->dtype], &k, ks->cost);
  return true;
}

/* g where min <= x <= max (the bounds given), else 0, as PyTorch (NaN gets 0). */
static bool clamp_backward(const om_record *r, om_tensor *const *g, om_tensor **gin) {
  om_scope s = {0};
  om_tensor *x = r->in[0], *zero = om__keep(&s, om_scalar(0, OM_FLOAT32)), *cur = g[0];
  for (int j = 1; j >= 0 && cur; j--) {
    if (!r->attrs.i[j]) continue;
    om_tensor *bound = om__keep(&s, om_scalar(r->attrs.f[j], OM_FLOAT32));
    om_tensor *in = om__keep(&s, j ? om_le(x, bound) : om_ge(x, bound));
    cur = in ? om__keep(&s, om_where(in, cur, zero)) : NULL;
  }
  gin[0] = om_tensor_retain(cur);
  om__scope_end(&s);
  return gin[0] != NULL;
}

/* Clip with min/max inputs (0-d, the input's dtype). An int64 bound not given is an omitted
 * input; a float one is -inf / +inf, because onnxruntime's Clip without it clamps infinities to
 * the largest finite float. */
static bool lower_clamp(om_lower *l, const om_call *c) {
  const om_attrs *at = &c->attrs;
  int in[3] = {om__lower_input(l, 0), -1, -1};
  for (int j = 0; j < 2; j++) {
    if (c->in[0]->dtype == OM_INT64) {
      if (at->i[j] && (in[1 + j] = om__lower_ints(l, &at->i[2 + j], -1)) < 0) return false;
    } else if ((in[1 + j] = om__lower_float(l, at->i[j] ? at->f[j] : j ? INFINITY : -INFINITY)) < 0) {
      return false;
    }
  }
  int out;
  if (!om__emit(l, "Clip", in, 3, &c->out_meta[0], 1, &out, NULL, 0)) return false;
  om__lower_output(l, 0, out);
  return true;
}

static const kernels clamp_kernels = {.loop = {clamp_f32, clamp_i64}, .cost = OM_EACH_SIMPLE, .onnx = {"Clip", NULL}};
const om_op_def om__op_clamp = {
    .name = "clamp", .n_in = 1, .n_out = 1, .saves = OM_SAVES_IN(0), .infer = infer_clamp, .forward = forward_clamp,
    .backward = clamp_backward, .lower = lower_clamp, .onnx = "Clip (min/max inputs; a float bound not given is -inf/+inf)", .impl = &clamp_kernels,
    .test = {.n_in = 1, .ndims = {2}, .shapes = {{3, 4}}, .lo = -2, .hi = 2,
             .attrs = {.n_i = 2, .i = {1, 1}, .n_f = 2, .f = {-0.5, 0.75}}}};

om_tensor *om_clamp(om_tensor *a, const double *min, const double *max) {
  om_attrs at = {.n_i = 2, .i = {min != NULL, max != NULL}, .n_f = 2, .f = {min ? *min : 0, max ? *max : 0}};
  return om__apply1(OM_OP_clamp, &a, 1, &at);
}

/* ---- where(cond, a, b) ---- */

/* A mask row picking from a row or a single value (an attention's causal mask and its fill:
 * s {T, 1, T, 0}) as a loop the compiler vectorises; any other layout element by element. */
#define WHERE_LOOP(fname, T)                                                                  \
  static void fname(char **p, const int64_t *s, int64_t n, const void *ctx) {                 \
    (void)ctx;                                                                                \
    if (s[0] == sizeof(T) && s[1] == 1 && s[2] == sizeof(T) && s[3] == 0) {                   \
      T *o = (T *)p[0], b = *(const T *)p[3];                                                 \
      const uint8_t *m = (const uint8_t *)p[1];                                               \
      const T *a = (const T *)p[2];                                                           \
      for (int64_t i = 0; i < n; i++) o[i] = m[i] ? a[i] : b;                                 \
      return;                                                                                 \
    }                                                                                         \
    for (int64_t i = 0; i < n; i++)                                                           \
      *(T *)(p[0] + i * s[0]) = *(const uint8_t *)(p[1] + i * s[1]) ? *(const T *)(p[2] + i * s[2]) \
                                                                    : *(const T *)(p[3] + i * s[3]); \
  }
WHERE_LOOP(where_f32, float)
WHERE_LOOP(where_i64, int64_t)
WHERE_LOOP(where_b8, uint8_t)
WHERE_LOOP(where_f64, double)

static bool infer_where(om_call *c) {
  om_tensor *cond = c->in[0], *a = c->in[1], *b = c->in[2];
  if (cond->dtype != OM_BOOL)
    return om__fail(OM_ERR_DTYPE_MISMATCH, "where: the condition must be bool, not %s", om_dtype_name(cond->dtype));
  if (a->dtype != b->dtype)
    return om__fail(OM_ERR_DTYPE_MISMATCH, "where: dtypes %s and %s differ", om_dtype_name(a->dtype), om_dtype_name(b->dtype));
  if (!om__broadcast_shapes(c->in, 3, &c->out_meta[0], "where")) return false;
  c->out_meta[0].dtype = a->dtype;
  return true;
}

static bool where_backward(const om_record *r, om_tensor *const *g, om_tensor **gin) {
  om_scope s = {0};
  om_tensor *zero = om__keep(&s, om_scalar(0, OM_FLOAT32));
  if (om__wants(r, 1)) grad_to(r, 1, om__keep(&s, om_where(r->in[0], g[0], zero)), gin);
  if (om__wants(r, 2)) grad_to(r, 2, om__keep(&s, om_where(r->in[0], zero, g[0])), gin);
  return done(&s, r, gin);
}

/* ONNX TensorProto.DataType of each om_dtype (Cast's "to"). */
static const int64_t onnx_dtype[] = {[OM_FLOAT32] = 1, [OM_INT64] = 7, [OM_BOOL] = 9, [OM_FLOAT64] = 11};

/* Emits Cast(v) to dtype for a value of the given shape; the new value id, or -1 on error. */
static int emit_cast(om_lower *l, int v, int ndim, const int64_t *shape, om_dtype dtype) {
  om_meta m = {.dtype = dtype, .ndim = ndim};
  memcpy(m.shape, shape, sizeof(int64_t) * (size_t)ndim);
  int out;
  return v >= 0 && om__emit(l, "Cast", &v, 1, &m, 1, &out, &OM_ATTR_INT("to", onnx_dtype[dtype]), 1) ? out : -1;
}

/* onnxruntime has no bool Where kernel: bool values go through int64 and back (exact). */
static bool lower_where(om_lower *l, const om_call *c) {
  if (c->in[1]->dtype != OM_BOOL) return lower_map(l, c);
  const om_meta *o = &c->out_meta[0];
  om_meta wide = *o;
  wide.dtype = OM_INT64;
  int in[3], picked, out;
  if ((in[0] = om__lower_input(l, 0)) < 0) return false;
  for (int i = 1; i < 3; i++)
    if ((in[i] = emit_cast(l, om__lower_input(l, i), c->in[i]->ndim, c->in[i]->shape, OM_INT64)) < 0) return false;
  if (!om__emit(l, "Where", in, 3, &wide, 1, &picked, NULL, 0) || (out = emit_cast(l, picked, o->ndim, o->shape, OM_BOOL)) < 0)
    return false;
  om__lower_output(l, 0, out);
  return true;
}

static const kernels where_kernels = {.loop = {where_f32, where_i64, where_b8, where_f64}, .cost = OM_EACH_SIMPLE, .onnx = {"Where", NULL}};
const om_op_def om__op_where = {
    .name = "where", .n_in = 3, .n_out = 1, .saves = OM_SAVES_IN(0), .infer = infer_where,
    .forward = forward_map, .backward = where_backward, .lower = lower_where, .promote = OM_PROMOTE_VALUES, .takes_float64 = true,
    .onnx = "Where (bool values: Cast to int64 and back)", .impl = &where_kernels,
    .test = {.n_in = 3, .ndims = {2, 2, 1}, .shapes = {{2, 3}, {2, 3}, {3}}, .dtypes = {OM_BOOL}, .lo = -2, .hi = 2}};

om_tensor *om_where(om_tensor *cond, om_tensor *a, om_tensor *b) {
  return om__apply1(OM_OP_where, (om_tensor *[]){cond, a, b}, 3, NULL);
}

/* ---- cast ---- */

/* ONNX element types (TensorProto.DataType) that a cast may narrow its result to (attr i[1]; 0:
 * none), by what holds them: int64 holds INT8, UINT8, INT16, UINT16, INT32, UINT32 (wrapped
 * modulo 2^bits) and UINT64 (its bits), float32 holds FLOAT16 and BFLOAT16 (rounded to nearest
 * even). The Session's
 * element types (src/runtime/session.c, docs/graph-runtime.md). */
enum { ONNX_UINT64 = 13 }; /* held as its bits: no narrowing, and casts to and from it read them unsigned */
static int narrow_bits(int64_t onnx, bool *is_signed) {
  static const struct { int64_t onnx; int bits; bool is_signed; } ints[] = {{3, 8, true}, {2, 8, false}, {5, 16, true}, {4, 16, false}, {6, 32, true}, {12, 32, false}};
  for (size_t k = 0; k < sizeof ints / sizeof *ints; k++)
    if (ints[k].onnx == onnx) return *is_signed = ints[k].is_signed, ints[k].bits;
  return 0;
}

static bool infer_cast(om_call *c) {
  if (c->attrs.n_i < 1 || c->attrs.n_i > 4 || c->attrs.i[0] < OM_FLOAT32 || c->attrs.i[0] > OM_FLOAT64)
    return om__fail(OM_ERR_INVALID_ARGUMENT, "cast: needs one target dtype (0 float32, 1 int64, 2 bool, 3 float64), got %lld",
                    c->attrs.n_i ? (long long)c->attrs.i[0] : -1LL);
  bool is_signed;
  int64_t narrow = c->attrs.n_i >= 2 ? c->attrs.i[1] : 0;
  if (narrow && !(c->attrs.i[0] == OM_INT64 ? narrow == ONNX_UINT64 || narrow_bits(narrow, &is_signed) > 0 : c->attrs.i[0] == OM_FLOAT32 && (narrow == 10 || narrow == 16 || (narrow >= 17 && narrow <= 20))))
    return om__fail(OM_ERR_INVALID_ARGUMENT, "cast: %s does not hold ONNX element type %lld", om_dtype_name((om_dtype)c->attrs.i[0]), (long long)narrow);
  om_tensor *a = c->in[0];
  c->out_meta[0] = (om_meta){.dtype = (om_dtype)c->attrs.i[0], .ndim = a->ndim};
  memcpy(c->out_meta[0].shape, a->shape, sizeof a->shape);
  return true;
}

/* A double as the float32 nearest it with an odd last bit where it is not exact (rounding to
 * odd): the float32 then rounds to FLOAT16 or BFLOAT16 as the double itself would, where
 * rounding to nearest twice could land a tie the wrong way. */
static float round_to_odd(double d) {
  float f = (float)d;
  if ((double)f == d || d != d) return f;
  uint32_t u;
  memcpy(&u, &f, 4);
  if (fabs((double)f) > fabs(d)) u--; /* the neighbour toward zero (inf becomes the largest float) */
  u |= 1;
  memcpy(&f, &u, 4);
  return f;
}
static void odd_f32_loop(char **p, const int64_t *s, int64_t n, const void *ctx) {
  (void)ctx;
  for (int64_t i = 0; i < n; i++) *(float *)(p[0] + i * s[0]) = round_to_odd(*(const double *)(p[1] + i * s[1]));
}

/* UINT64, held as its bits in int64 (the Session's): C's conversions of uint64_t to float and
 * double (correctly rounded, as WASM's), and a float to it saturated to [0, 2^64 - 1] with NaN
 * 0 (as WASM's saturating truncation, and as the cast to int64 saturates). */
static uint64_t float_to_u64(double d) { return !(d > 0) ? 0 : d >= 18446744073709551616.0 ? UINT64_MAX : (uint64_t)d; }
static void u64_f32_loop(char **p, const int64_t *s, int64_t n, const void *ctx) {
  (void)ctx;
  for (int64_t i = 0; i < n; i++) *(float *)(p[0] + i * s[0]) = (float)(uint64_t) * (const int64_t *)(p[1] + i * s[1]);
}
static void u64_f64_loop(char **p, const int64_t *s, int64_t n, const void *ctx) {
  (void)ctx;
  for (int64_t i = 0; i < n; i++) *(double *)(p[0] + i * s[0]) = (double)(uint64_t) * (const int64_t *)(p[1] + i * s[1]);
}
/* A UINT64 as the float32 nearest it with an odd last bit where it is not exact (rounding to
 * odd, as odd_f32_loop): it then rounds to FLOAT16, BFLOAT16 or a float8 type as the integer would. */
static float u64_to_f32_odd(uint64_t v) {
  int shift = 0;
  while (v >> shift >= UINT64_C(1) << 24) shift++;
  uint64_t hi = v >> shift;
  if (shift && v & ((UINT64_C(1) << shift) - 1)) hi |= 1;
  float f = (float)hi; /* exact: below 2^24 */
  for (int k = 0; k < shift; k++) f *= 2; /* exact: a power of two */
  return f;
}
static void u64_odd_f32_loop(char **p, const int64_t *s, int64_t n, const void *ctx) {
  (void)ctx;
  for (int64_t i = 0; i < n; i++) *(float *)(p[0] + i * s[0]) = u64_to_f32_odd((uint64_t) * (const int64_t *)(p[1] + i * s[1]));
}
static void f32_u64_loop(char **p, const int64_t *s, int64_t n, const void *ctx) {
  (void)ctx;
  for (int64_t i = 0; i < n; i++) *(int64_t *)(p[0] + i * s[0]) = (int64_t)float_to_u64(*(const float *)(p[1] + i * s[1]));
}
static void f64_u64_loop(char **p, const int64_t *s, int64_t n, const void *ctx) {
  (void)ctx;
  for (int64_t i = 0; i < n; i++) *(int64_t *)(p[0] + i * s[0]) = (int64_t)float_to_u64(*(const double *)(p[1] + i * s[1]));
}

/* Converts, then narrows the (dense) result in place. attrs: i[0] the dtype, i[1] the ONNX type
 * to narrow to (0: none), i[2] saturate (float8), i[3] whether a's int64 values are UINT64's bits. */
static bool forward_cast(om_call *c) {
  om_tensor *o = c->out[0], *a = c->in[0];
  int64_t narrow = c->attrs.n_i >= 2 ? c->attrs.i[1] : 0, n = om_tensor_numel(o);
  bool saturate = c->attrs.n_i < 3 || c->attrs.i[2], from_u64 = c->attrs.n_i >= 4 && c->attrs.i[3] && a->dtype == OM_INT64;
  bool to_u64 = narrow == ONNX_UINT64 && (a->dtype == OM_FLOAT32 || a->dtype == OM_FLOAT64);
  om_loop_fn loop = narrow && a->dtype == OM_FLOAT64 && o->dtype == OM_FLOAT32 && !from_u64 ? odd_f32_loop /* to FLOAT16, BFLOAT16 or a float8 type */
                     : from_u64 && o->dtype == OM_FLOAT32 ? (narrow ? u64_odd_f32_loop : u64_f32_loop) : from_u64 && o->dtype == OM_FLOAT64 ? u64_f64_loop
                     : to_u64 ? (a->dtype == OM_FLOAT32 ? f32_u64_loop : f64_u64_loop) : NULL;
  if (loop) {
    int64_t st[2][OM_MAX_DIMS];
    om__broadcast_strides(o, o->ndim, st[0]);
    om__broadcast_strides(a, o->ndim, st[1]);
    om__iterate_each(2, (char *[]){om__data(o), om__data(a)}, st, o->shape, o->ndim, loop, NULL, OM_EACH_SIMPLE);
  } else {
    om__copy_into(o, a);
  }
  bool is_signed;
  int bits = narrow_bits(narrow, &is_signed);
  if (bits) {
    int64_t *v = (int64_t *)om__data(c->out[0]);
    for (int64_t k = 0; k < n; k++) v[k] = om__wrap_int(v[k], bits, is_signed);
  } else if (narrow && narrow != ONNX_UINT64) {
    float *v = (float *)om__data(c->out[0]);
    for (int64_t k = 0; k < n; k++) v[k] = narrow == 10 ? om__round_f16(v[k]) : narrow == 16 ? om__round_bf16(v[k]) : om__round_f8(v[k], (int)narrow, saturate);
  }
  return true;
}

/* ONNX Cast converts as forward does: float -> int64 truncates, saturates and sends NaN to 0
 * in onnxruntime-web (WASM's saturating truncation), and nonzero (NaN too) -> true. A narrowing
 * cast is the Session's own step (it runs no trace), so it has no lowering. */
static bool lower_cast(om_lower *l, const om_call *c) {
  if ((c->attrs.n_i >= 2 && c->attrs.i[1]) || (c->attrs.n_i >= 4 && c->attrs.i[3]))
    return om__fail(OM_ERR_UNSUPPORTED, "cast: narrowing to ONNX element type %lld is the Session's, and is not traced", (long long)c->attrs.i[1]);
  return om__lower_node(l, c, "Cast", &OM_ATTR_INT("to", onnx_dtype[c->attrs.i[0]]), 1);
}

/* Only float -> float is differentiable, and om_cast returns its input for that; a recorded
 * cast therefore always starts from int64 or bool, which take no gradient (a narrowing cast is
 * made with gradients off, by the Session). */
const om_op_def om__op_cast = {
    .name = "cast", .n_in = 1, .n_out = 1, .infer = infer_cast, .forward = forward_cast, .takes_float64 = true,
    .lower = lower_cast, .onnx = "Cast",
    .test = {.n_in = 1, .ndims = {2}, .shapes = {{2, 3}}, .lo = -3, .hi = 3, .attrs = {.n_i = 1, .i = {OM_INT64}}, .no_gradcheck = true}};

om_tensor *om__cast_narrow(om_tensor *a, om_dtype dtype, int onnx_type, bool saturate, bool from_u64) {
  om_attrs at = {.n_i = 4, .i = {dtype, onnx_type, saturate, from_u64}};
  return om__apply1(OM_OP_cast, &a, 1, &at);
}

om_tensor *om_cast(om_tensor *a, om_dtype dtype) {
  if (a && a->dtype == dtype && (unsigned)dtype <= OM_FLOAT64) return om_tensor_retain(a);
  om_attrs at = {.n_i = 1, .i = {dtype}};
  return om__apply1(OM_OP_cast, &a, 1, &at);
}
