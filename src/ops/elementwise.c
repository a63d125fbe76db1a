/* Elementwise ops: broadcasting binary math, unary math, comparisons, where and cast.
 * Each op: infer (dtype rules + broadcasting), a kernel table indexed by dtype, the backward
 * rule written with public ops, and its test settings. Kernels are plain loops over one run
 * of elements (om__iterate supplies the runs); the contiguous case is a separate loop the
 * compiler vectorises, and it computes the same bits as the strided one. */
#include <math.h>
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

#define UNARY_LOOP(fname, T, EXPR)                                                       \
  static void fname(char **p, const int64_t *s, int64_t n, const void *ctx) {            \
    (void)ctx;                                                                           \
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

/* Which dtypes an op takes, the loop for each (NULL: refused), and the ONNX nodes that compute it. */
typedef struct kernels {
  om_loop_fn loop[3];  /* indexed by om_dtype of the inputs */
  bool to_bool;        /* comparisons: the output is bool */
  const char *onnx[2]; /* ONNX op types: one node, or a second one applied to the first's result */
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
BINARY_LOOP(add_i64, int64_t, int64_t, (int64_t)((uint64_t)a + (uint64_t)b))
BINARY_LOOP(sub_f32, float, float, a - b)
BINARY_LOOP(sub_i64, int64_t, int64_t, (int64_t)((uint64_t)a - (uint64_t)b))
BINARY_LOOP(mul_f32, float, float, a * b)
BINARY_LOOP(mul_i64, int64_t, int64_t, (int64_t)((uint64_t)a * (uint64_t)b))
BINARY_LOOP(div_f32, float, float, a / b)
BINARY_LOOP(pow_f32, float, float, powf(a, b))
BINARY_LOOP(eq_f32, float, uint8_t, a == b)
BINARY_LOOP(eq_i64, int64_t, uint8_t, a == b)
BINARY_LOOP(eq_b8, uint8_t, uint8_t, a == b)
BINARY_LOOP(ne_f32, float, uint8_t, a != b)
BINARY_LOOP(ne_i64, int64_t, uint8_t, a != b)
BINARY_LOOP(ne_b8, uint8_t, uint8_t, a != b)
BINARY_LOOP(lt_f32, float, uint8_t, a < b)
BINARY_LOOP(lt_i64, int64_t, uint8_t, a < b)
BINARY_LOOP(le_f32, float, uint8_t, a <= b)
BINARY_LOOP(le_i64, int64_t, uint8_t, a <= b)
BINARY_LOOP(gt_f32, float, uint8_t, a > b)
BINARY_LOOP(gt_i64, int64_t, uint8_t, a > b)
BINARY_LOOP(ge_f32, float, uint8_t, a >= b)
BINARY_LOOP(ge_i64, int64_t, uint8_t, a >= b)

static bool check_dtype(const om_call *c, const kernels *k, om_dtype dt) {
  if (k->loop[dt]) return true;
  const char *ok[3];
  int n = 0;
  for (int d = 0; d < 3; d++)
    if (k->loop[d]) ok[n++] = om_dtype_name(d);
  return om__fail(OM_ERR_DTYPE_MISMATCH, "%s: takes %s%s%s%s, not %s", om_op_name(c->op), ok[0],
                  n > 1 ? " or " : "", n > 1 ? ok[1] : "", n > 2 ? " or bool" : "", om_dtype_name(dt));
}

static bool infer_binary(om_call *c) {
  const kernels *k = om__ops[c->op]->impl;
  om_tensor *a = c->in[0], *b = c->in[1];
  if (a->dtype != b->dtype)
    return om__fail(OM_ERR_DTYPE_MISMATCH, "%s: dtypes %s and %s differ (convert one with cast)",
                    om_op_name(c->op), om_dtype_name(a->dtype), om_dtype_name(b->dtype));
  if (!check_dtype(c, k, a->dtype) || !om__broadcast_shapes(c->in, 2, &c->out_meta[0], om_op_name(c->op)))
    return false;
  c->out_meta[0].dtype = k->to_bool ? OM_BOOL : a->dtype;
  return true;
}

/* Runs the op's loop over output and inputs with broadcasting. */
static bool forward_map(om_call *c) {
  const kernels *k = om__ops[c->op]->impl;
  om_tensor *o = c->out[0];
  int64_t st[4][OM_MAX_DIMS];
  char *base[4] = {om__data(o)};
  om__broadcast_strides(o, o->ndim, st[0]);
  for (int i = 0; i < c->n_in; i++) {
    om__broadcast_strides(c->in[i], o->ndim, st[i + 1]);
    base[i + 1] = om__data(c->in[i]);
  }
  om__iterate(c->n_in + 1, base, st, o->shape, o->ndim, k->loop[c->in[c->n_in - 1]->dtype], NULL);
  return true;
}

/* The ONNX form of a map: the op's node reading every input, or, for two nodes (rsqrt is
 * Sqrt then Reciprocal, ne is Equal then Not), the second reading the first's result. Both
 * results have the output's shape and dtype. */
static bool lower_map(om_lower *l, const om_call *c) {
  const kernels *k = om__ops[c->op]->impl;
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

/* d(a/b) = g/b, -g*a/b^2 */
static bool div_backward(const om_record *r, om_tensor *const *g, om_tensor **gin) {
  om_scope s = {0};
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

#define BINARY_DEF(NAME, LOOPS, BOOL, BACKWARD, SAVES, LO, HI, ONNX)                                  \
  static const kernels NAME##_kernels = {LOOPS, BOOL, ONNX_NODES(ONNX)};                              \
  const om_op_def om__op_##NAME = {                                                                   \
      .name = #NAME, .n_in = 2, .n_out = 1, .saves = SAVES, .infer = infer_binary,                   \
      .forward = forward_map, .backward = BACKWARD, .lower = lower_map, .onnx = ONNX_DOC(ONNX),      \
      .impl = &NAME##_kernels,                                                                        \
      .test = {.n_in = 2, .ndims = {2, 1}, .shapes = {{2, 3}, {3}}, .lo = LO, .hi = HI,               \
               .no_gradcheck = BACKWARD == NULL}};

#define LOOPS3(f, i, b) {f, i, b}
BINARY_DEF(add, LOOPS3(add_f32, add_i64, NULL), false, add_backward, 0, -2, 2, ONNX1("Add"))
BINARY_DEF(sub, LOOPS3(sub_f32, sub_i64, NULL), false, sub_backward, 0, -2, 2, ONNX1("Sub"))
BINARY_DEF(mul, LOOPS3(mul_f32, mul_i64, NULL), false, mul_backward, OM_SAVES_IN(0) | OM_SAVES_IN(1), -2, 2, ONNX1("Mul"))
BINARY_DEF(div, LOOPS3(div_f32, NULL, NULL), false, div_backward, OM_SAVES_IN(0) | OM_SAVES_IN(1), 0.5, 2, ONNX1("Div"))
BINARY_DEF(pow, LOOPS3(pow_f32, NULL, NULL), false, pow_backward, OM_SAVES_IN(0) | OM_SAVES_IN(1) | OM_SAVES_OUT(0), 0.5, 2, ONNX1("Pow"))
BINARY_DEF(eq, LOOPS3(eq_f32, eq_i64, eq_b8), true, NULL, 0, -2, 2, ONNX1("Equal"))
BINARY_DEF(ne, LOOPS3(ne_f32, ne_i64, ne_b8), true, NULL, 0, -2, 2, ONNX2("Equal", "Not"))
BINARY_DEF(lt, LOOPS3(lt_f32, lt_i64, NULL), true, NULL, 0, -2, 2, ONNX1("Less"))
BINARY_DEF(le, LOOPS3(le_f32, le_i64, NULL), true, NULL, 0, -2, 2, ONNX1("LessOrEqual"))
BINARY_DEF(gt, LOOPS3(gt_f32, gt_i64, NULL), true, NULL, 0, -2, 2, ONNX1("Greater"))
BINARY_DEF(ge, LOOPS3(ge_f32, ge_i64, NULL), true, NULL, 0, -2, 2, ONNX1("GreaterOrEqual"))

om_tensor *om_add(om_tensor *a, om_tensor *b) { return om__apply1(OM_OP_add, (om_tensor *[]){a, b}, 2, NULL); }
om_tensor *om_sub(om_tensor *a, om_tensor *b) { return om__apply1(OM_OP_sub, (om_tensor *[]){a, b}, 2, NULL); }
om_tensor *om_mul(om_tensor *a, om_tensor *b) { return om__apply1(OM_OP_mul, (om_tensor *[]){a, b}, 2, NULL); }
om_tensor *om_div(om_tensor *a, om_tensor *b) { return om__apply1(OM_OP_div, (om_tensor *[]){a, b}, 2, NULL); }
om_tensor *om_pow(om_tensor *a, om_tensor *b) { return om__apply1(OM_OP_pow, (om_tensor *[]){a, b}, 2, NULL); }
om_tensor *om_eq(om_tensor *a, om_tensor *b) { return om__apply1(OM_OP_eq, (om_tensor *[]){a, b}, 2, NULL); }
om_tensor *om_ne(om_tensor *a, om_tensor *b) { return om__apply1(OM_OP_ne, (om_tensor *[]){a, b}, 2, NULL); }
om_tensor *om_lt(om_tensor *a, om_tensor *b) { return om__apply1(OM_OP_lt, (om_tensor *[]){a, b}, 2, NULL); }
om_tensor *om_le(om_tensor *a, om_tensor *b) { return om__apply1(OM_OP_le, (om_tensor *[]){a, b}, 2, NULL); }
om_tensor *om_gt(om_tensor *a, om_tensor *b) { return om__apply1(OM_OP_gt, (om_tensor *[]){a, b}, 2, NULL); }
om_tensor *om_ge(om_tensor *a, om_tensor *b) { return om__apply1(OM_OP_ge, (om_tensor *[]){a, b}, 2, NULL); }

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

static float sigmoidf(float a) { return a >= 0 ? 1.0f / (1.0f + expf(-a)) : expf(a) / (1.0f + expf(a)); }

UNARY_LOOP(neg_f32, float, -a)
UNARY_LOOP(neg_i64, int64_t, (int64_t)(0u - (uint64_t)a))
UNARY_LOOP(abs_f32, float, fabsf(a))
UNARY_LOOP(abs_i64, int64_t, a < 0 ? (int64_t)(0u - (uint64_t)a) : a)
UNARY_LOOP(sign_f32, float, a > 0 ? 1.0f : a < 0 ? -1.0f : a)
UNARY_LOOP(sign_i64, int64_t, a > 0 ? 1 : a < 0 ? -1 : 0)
UNARY_LOOP(exp_f32, float, expf(a))
UNARY_LOOP(log_f32, float, logf(a))
UNARY_LOOP(sqrt_f32, float, sqrtf(a))
UNARY_LOOP(rsqrt_f32, float, 1.0f / sqrtf(a))
UNARY_LOOP(relu_f32, float, a > 0 || a != a ? a : 0.0f) /* NaN stays NaN, as PyTorch and ONNX Relu */
UNARY_LOOP(relu_i64, int64_t, a > 0 ? a : 0)
UNARY_LOOP(sigmoid_f32, float, sigmoidf(a))
UNARY_LOOP(tanh_f32, float, tanhf(a))

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

#define UNARY_DEF(NAME, LOOPS, BACKWARD, SAVES, LO, HI, LOWER, ONNX)                                \
  static const kernels NAME##_kernels = {LOOPS, false, ONNX_NODES(ONNX)};                             \
  const om_op_def om__op_##NAME = {                                                                   \
      .name = #NAME, .n_in = 1, .n_out = 1, .saves = SAVES, .infer = infer_unary,                    \
      .forward = forward_map, .backward = BACKWARD, .lower = LOWER, .onnx = ONNX_DOC(ONNX),          \
      .impl = &NAME##_kernels,                                                                        \
      .test = {.n_in = 1, .ndims = {2}, .shapes = {{3, 4}}, .lo = LO, .hi = HI,                       \
               .no_gradcheck = BACKWARD == NULL}};                                                    \
  om_tensor *om_##NAME(om_tensor *a) { return om__apply1(OM_OP_##NAME, &a, 1, NULL); }

UNARY_DEF(neg, LOOPS3(neg_f32, neg_i64, NULL), neg_backward, 0, -2, 2, lower_map, ONNX1("Neg"))
UNARY_DEF(abs, LOOPS3(abs_f32, abs_i64, NULL), abs_backward, OM_SAVES_IN(0), -2, 2, lower_map, ONNX1("Abs"))
UNARY_DEF(sign, LOOPS3(sign_f32, sign_i64, NULL), NULL, 0, -2, 2, lower_map, ONNX1("Sign"))
UNARY_DEF(exp, LOOPS3(exp_f32, NULL, NULL), exp_backward, OM_SAVES_OUT(0), -2, 2, lower_map, ONNX1("Exp"))
UNARY_DEF(log, LOOPS3(log_f32, NULL, NULL), log_backward, OM_SAVES_IN(0), 0.5, 3, lower_map, ONNX1("Log"))
UNARY_DEF(sqrt, LOOPS3(sqrt_f32, NULL, NULL), sqrt_backward, OM_SAVES_OUT(0), 0.5, 3, lower_map, ONNX1("Sqrt"))
UNARY_DEF(rsqrt, LOOPS3(rsqrt_f32, NULL, NULL), rsqrt_backward, OM_SAVES_OUT(0), 0.5, 3, lower_map, ONNX2("Sqrt", "Reciprocal"))
UNARY_DEF(relu, LOOPS3(relu_f32, relu_i64, NULL), relu_backward, OM_SAVES_OUT(0), -2, 2, lower_relu, ONNX_AS("Relu", NULL, "Relu (int64: Max with 0)"))
UNARY_DEF(sigmoid, LOOPS3(sigmoid_f32, NULL, NULL), sigmoid_backward, OM_SAVES_OUT(0), -3, 3, lower_map, ONNX1("Sigmoid"))
UNARY_DEF(tanh, LOOPS3(tanh_f32, NULL, NULL), tanh_backward, OM_SAVES_OUT(0), -2, 2, lower_map, ONNX1("Tanh"))

/* ---- where(cond, a, b) ---- */

#define WHERE_LOOP(fname, T)                                                                  \
  static void fname(char **p, const int64_t *s, int64_t n, const void *ctx) {                 \
    (void)ctx;                                                                                \
    for (int64_t i = 0; i < n; i++)                                                           \
      *(T *)(p[0] + i * s[0]) = *(const uint8_t *)(p[1] + i * s[1]) ? *(const T *)(p[2] + i * s[2]) \
                                                                    : *(const T *)(p[3] + i * s[3]); \
  }
WHERE_LOOP(where_f32, float)
WHERE_LOOP(where_i64, int64_t)
WHERE_LOOP(where_b8, uint8_t)

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
static const int64_t onnx_dtype[] = {[OM_FLOAT32] = 1, [OM_INT64] = 7, [OM_BOOL] = 9};

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

static const kernels where_kernels = {{where_f32, where_i64, where_b8}, false, {"Where", NULL}};
const om_op_def om__op_where = {
    .name = "where", .n_in = 3, .n_out = 1, .saves = OM_SAVES_IN(0), .infer = infer_where,
    .forward = forward_map, .backward = where_backward, .lower = lower_where,
    .onnx = "Where (bool values: Cast to int64 and back)", .impl = &where_kernels,
    .test = {.n_in = 3, .ndims = {2, 2, 1}, .shapes = {{2, 3}, {2, 3}, {3}}, .dtypes = {OM_BOOL}, .lo = -2, .hi = 2}};

om_tensor *om_where(om_tensor *cond, om_tensor *a, om_tensor *b) {
  return om__apply1(OM_OP_where, (om_tensor *[]){cond, a, b}, 3, NULL);
}

/* ---- cast ---- */

static bool infer_cast(om_call *c) {
  if (c->attrs.n_i != 1 || c->attrs.i[0] < OM_FLOAT32 || c->attrs.i[0] > OM_BOOL)
    return om__fail(OM_ERR_INVALID_ARGUMENT, "cast: needs one target dtype (0 float32, 1 int64, 2 bool), got %lld",
                    c->attrs.n_i ? (long long)c->attrs.i[0] : -1LL);
  om_tensor *a = c->in[0];
  c->out_meta[0] = (om_meta){.dtype = (om_dtype)c->attrs.i[0], .ndim = a->ndim};
  memcpy(c->out_meta[0].shape, a->shape, sizeof a->shape);
  return true;
}

static bool forward_cast(om_call *c) { om__copy_into(c->out[0], c->in[0]); return true; }

/* ONNX Cast converts as forward does: float -> int64 truncates, saturates and sends NaN to 0
 * in onnxruntime-web (WASM's saturating truncation), and nonzero (NaN too) -> true. */
static bool lower_cast(om_lower *l, const om_call *c) {
  return om__lower_node(l, c, "Cast", &OM_ATTR_INT("to", onnx_dtype[c->attrs.i[0]]), 1);
}

/* Only float -> float is differentiable, and om_cast returns its input for that; a recorded
 * cast therefore always starts from int64 or bool, which take no gradient. */
const om_op_def om__op_cast = {
    .name = "cast", .n_in = 1, .n_out = 1, .infer = infer_cast, .forward = forward_cast,
    .lower = lower_cast, .onnx = "Cast",
    .test = {.n_in = 1, .ndims = {2}, .shapes = {{2, 3}}, .lo = -3, .hi = 3, .attrs = {.n_i = 1, .i = {OM_INT64}}, .no_gradcheck = true}};

om_tensor *om_cast(om_tensor *a, om_dtype dtype) {
  if (a && a->dtype == dtype && (unsigned)dtype <= OM_BOOL) return om_tensor_retain(a);
  om_attrs at = {.n_i = 1, .i = {dtype}};
  return om__apply1(OM_OP_cast, &a, 1, &at);
}
