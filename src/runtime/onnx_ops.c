/* The ONNX op table: one row per ONNX op type the graph layer runs, each a rule that computes
 * a node with the library's ops (the public functions of src/onemodel.h), the way the ops' own
 * lowerings wrote it (src/ops/: Gemm is linear, LSTM is lstm_layer, ...). No kernel lives
 * here: a rule only translates ONNX's attributes and conventions into the library's (pads as
 * begin/end lists, gate orders, negative indices, ONNX's clamping of Slice bounds). While a plan
 * is made, each op a rule calls on planned buffers becomes a step, and each on constants runs at
 * once (src/runtime/session.c), so a rule needs no code to fold shape computations.
 *
 * A rule reads operands it needs as numbers (a Reshape's shape, a Slice's bounds) with
 * const_ints; when such an operand is computed from tensor values the rule fails saying so
 * (known), and the session plans again with the graph inputs it is computed from bound by value
 * (src/runtime/session.c). What a rule does not take (an attribute value, an output) is
 * Unsupported naming it; never a silent approximation. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/onnx_ops.h"

/* ---- reading a node ---- */

/* The largest size an attribute or a constant operand may give a rule (kernel sizes, pads, lengths,
 * counts): a product of two stays far from int64's end, and a plan asking for more than its
 * buffers can hold is refused by their checks anyway. */
#define LIMIT ((int64_t)1 << 30)

static const char *who(const om_bind *b) { return b->node->name; }

static const om_gattr *attr(const om_bind *b, const char *name) {
  for (int k = 0; k < b->node->n_attrs; k++)
    if (!strcmp(b->node->attrs[k].name, name)) return &b->node->attrs[k];
  return NULL;
}

/* An attribute of the wrong type is a Format error; these return false then, with *v untouched. */
static bool attr_type(const om_bind *b, const om_gattr *a, om_gattr_type type) {
  if (a->type == type) return true;
  static const char *const names[] = {"an int", "a float", "ints", "floats", "a string", "a tensor", "a list", "a graph", "strings"};
  return om__fail(OM_ERR_FORMAT, "%s (%s): attribute %s must be %s, it is %s", who(b), b->node->op_type, a->name,
                  names[type], names[a->type]);
}
static bool attr_i(const om_bind *b, const char *name, int64_t def, int64_t *v) {
  const om_gattr *a = attr(b, name);
  *v = def;
  return !a || (attr_type(b, a, OM_GATTR_INT) && (*v = a->i, true));
}
static bool attr_f(const om_bind *b, const char *name, double def, double *v) {
  const om_gattr *a = attr(b, name);
  *v = def;
  return !a || (attr_type(b, a, OM_GATTR_FLOAT) && (*v = a->f, true));
}
static bool attr_s(const om_bind *b, const char *name, const char *def, const char **v) {
  const om_gattr *a = attr(b, name);
  *v = def;
  return !a || (attr_type(b, a, OM_GATTR_STRING) && (*v = a->s, true));
}
/* INTS attribute name: up to max values into v, their count to *n (-1 when absent). */
static bool attr_ints(const om_bind *b, const char *name, int64_t *v, int max, int *n) {
  const om_gattr *a = attr(b, name);
  *n = -1;
  if (!a) return true;
  if (!attr_type(b, a, OM_GATTR_INTS)) return false;
  if (a->n > max) return om__fail(OM_ERR_UNSUPPORTED, "%s (%s): attribute %s has %d values (at most %d)", who(b), b->node->op_type, name, a->n, max);
  memcpy(v, a->ints, sizeof(int64_t) * (size_t)a->n);
  *n = a->n;
  return true;
}

static bool unsupported(const om_bind *b, const char *what) {
  return om__fail(OM_ERR_UNSUPPORTED, "%s (%s): %s is not supported", who(b), b->node->op_type, what);
}

/* Whether input i's values are known while the plan is made; when not (computed from tensor values
 * when the graph runs), fails saying so and asks the session for a plan with them known. */
static bool known(om_bind *b, int i) {
  if (!b->in[i]->storage->planned) return true;
  b->needs_values = true;
  return om__fail(OM_ERR_UNSUPPORTED, "%s (%s): input %d is computed from tensor values when the graph runs; the graph layer "
                  "needs its values when it plans", who(b), b->node->op_type, i);
}

/* Input i as int64 numbers known when the plan is made: up to max into v, the count to *n. */
static bool const_ints(om_bind *b, int i, int64_t *v, int max, int *n) {
  const om_tensor *t = b->in[i];
  if (!t) return om__fail(OM_ERR_FORMAT, "%s (%s): input %d is missing", who(b), b->node->op_type, i);
  if (!known(b, i)) return false;
  if (t->dtype != OM_INT64) return om__fail(OM_ERR_FORMAT, "%s (%s): input %d must be int64, it is %s", who(b), b->node->op_type, i, om_dtype_name(t->dtype));
  int64_t numel = om_tensor_numel(t);
  if (numel > max) return om__fail(OM_ERR_UNSUPPORTED, "%s (%s): input %d has %lld values (at most %d)", who(b), b->node->op_type, i, (long long)numel, max);
  om_tensor *dense = om_contiguous((om_tensor *)t);
  if (!dense) return false;
  memcpy(v, om__data(dense), sizeof(int64_t) * (size_t)numel);
  om_tensor_release(dense);
  *n = (int)numel;
  return true;
}

/* Input i as one number known when the plan is made (a 1-element constant of any dtype). */
static bool const_scalar(om_bind *b, int i, double *v) {
  const om_tensor *t = b->in[i];
  if (!known(b, i)) return false;
  if (om_tensor_numel(t) != 1) return om__fail(OM_ERR_FORMAT, "%s (%s): input %d must hold one value, it holds %lld", who(b), b->node->op_type, i, (long long)om_tensor_numel(t));
  *v = om__get_flat(t, 0);
  return true;
}

/* next, after releasing old: the step of a chain (x = next(x)), with next computed from old
 * before old goes. */
static om_tensor *then(om_tensor *old, om_tensor *next) {
  om_tensor_release(old);
  return next;
}

/* The output: t (a new reference, or NULL with the error set) becomes output j. */
static bool put(om_bind *b, int j, om_tensor *t) {
  b->out[j] = t;
  return t != NULL;
}

/* An axis attribute or operand wrapped into [0, ndim). */
static bool wrap(const om_bind *b, int64_t axis, int ndim, int *out) {
  if (axis < -ndim || axis >= ndim)
    return om__fail(OM_ERR_INDEX_OUT_OF_RANGE, "%s (%s): axis %lld is out of range for %d dims", who(b), b->node->op_type, (long long)axis, ndim);
  *out = (int)(axis < 0 ? axis + ndim : axis);
  return true;
}

/* The axes of a reduction or a squeeze: input i, *n -1 when the node leaves it out (older opsets'
 * attribute is that input by then: src/runtime/versions.c). */
static bool axes_of(om_bind *b, int i, int64_t *axes, int *n) {
  *n = -1;
  return b->node->n_in <= i || !b->in[i] || const_ints(b, i, axes, OM_MAX_DIMS, n);
}

/* ---- elementwise ---- */

#define UNARY(NAME, CALL)                                  \
  static bool bind_##NAME(om_bind *b) {                   \
    om_tensor *x = b->in[0];                               \
    return put(b, 0, CALL);                                \
  }
UNARY(abs, om_abs(x))
UNARY(neg, om_neg(x))
UNARY(sign, om_sign(x))
UNARY(exp, om_exp(x))
UNARY(log, om_log(x))
UNARY(sqrt, om_sqrt(x))
UNARY(relu, om_relu(x))
UNARY(sigmoid, om_sigmoid(x))
UNARY(tanh, om_tanh(x))
UNARY(erf, om_erf(x))
UNARY(hardswish, om_hardswish(x))
UNARY(softplus, om_softplus(x, 1, 20)) /* above 20, log(1 + e^x) is x in float32 */

static bool bind_reciprocal(om_bind *b) {
  om_tensor *one = om_scalar(1, b->in[0]->dtype);
  bool ok = put(b, 0, one ? om_div(one, b->in[0]) : NULL);
  om_tensor_release(one);
  return ok;
}

static bool bind_floor(om_bind *b) { return put(b, 0, om_floor(b->in[0])); }
static bool bind_ceil(om_bind *b) { return put(b, 0, om_ceil(b->in[0])); }

static bool bind_leaky_relu(om_bind *b) {
  double alpha;
  return attr_f(b, "alpha", 0.01, &alpha) && put(b, 0, om_leaky_relu(b->in[0], alpha));
}
static bool bind_elu(om_bind *b) {
  double alpha;
  return attr_f(b, "alpha", 1.0, &alpha) && put(b, 0, om_elu(b->in[0], alpha));
}
static bool bind_gelu(om_bind *b) {
  const char *approx;
  if (!attr_s(b, "approximate", "none", &approx)) return false;
  if (strcmp(approx, "none") && strcmp(approx, "tanh")) return unsupported(b, "approximate other than 'none' or 'tanh'");
  bool tanh_form = !strcmp(approx, "tanh");
  if (tanh_form || !b->fast) return put(b, 0, om_gelu(b->in[0], tanh_form));
  /* fast mode: erf by the float rational (within 7.2 ulp; om__erff_fast_n) above the tail, the
   * tail from erfc, eager's bits (om__gelu_erff_fast_n) */
  return put(b, 0, om__apply1(OM_OP_gelu, b->in, 1, &(om_attrs){.n_i = 2, .i = {0, 1}}));
}
/* Dropout in inference, or in training with ratio 0 (ONNX's tests of both), is the input with a
 * mask of all true; training_mode (input 2) true with another ratio would draw a random mask,
 * which the graph layer refuses rather than run as the identity. */
static bool bind_dropout(om_bind *b) {
  double training = 0, ratio = 0.5;
  if (b->node->n_in > 2 && b->in[2] && !const_scalar(b, 2, &training)) return false;
  if (b->node->n_in > 1 && b->in[1] && !const_scalar(b, 1, &ratio)) return false;
  if (!(ratio >= 0 && ratio < 1)) return om__fail(OM_ERR_FORMAT, "%s (Dropout): ratio %g (0 to below 1)", who(b), ratio);
  if (training != 0 && ratio != 0) return unsupported(b, "training_mode true with a ratio other than 0 (a random mask)");
  if (b->node->n_out > 1 && !put(b, 1, om_ones(b->in[0]->shape, b->in[0]->ndim, OM_BOOL))) return false;
  return put(b, 0, om_tensor_retain(b->in[0]));
}

/* HardSigmoid: max(0, min(1, alpha x + beta)). */
static bool bind_hard_sigmoid(om_bind *b) {
  double alpha, beta, lo = 0, hi = 1;
  if (!attr_f(b, "alpha", 0.2, &alpha) || !attr_f(b, "beta", 0.5, &beta)) return false;
  om_tensor *ax = om_scale(b->in[0], alpha), *y = ax ? om_add_scalar(ax, beta) : NULL;
  bool ok = put(b, 0, y ? om_clamp(y, &lo, &hi) : NULL);
  om_tensor_release(ax);
  om_tensor_release(y);
  return ok;
}
/* PRelu: x < 0 ? slope x : x, slope broadcast to x. */
static bool bind_prelu(om_bind *b) {
  om_tensor *x = b->in[0], *zero = om_scalar(0, x->dtype), *neg = zero ? om_lt(x, zero) : NULL;
  om_tensor *sx = neg ? om_mul(x, b->in[1]) : NULL;
  bool ok = put(b, 0, sx ? om_where(neg, sx, x) : NULL);
  om_tensor_release(zero);
  om_tensor_release(neg);
  om_tensor_release(sx);
  return ok;
}

#define BINARY(NAME, CALL)                                 \
  static bool bind_##NAME(om_bind *b) {                   \
    om_tensor *x = b->in[0], *y = b->in[1];                \
    return put(b, 0, CALL);                                \
  }
BINARY(add, om_add(x, y))
BINARY(sub, om_sub(x, y))
BINARY(mul, om_mul(x, y))
BINARY(equal, om_eq(x, y))
BINARY(xor, om_ne(x, y))
BINARY(and, om_where(x, y, x)) /* x false: x; x true: y */
BINARY(or, om_where(x, x, y))

/* int64 a / b truncated toward zero (the library's div with rounding_mode 'trunc'). */
static om_tensor *div_trunc(om_tensor *a, om_tensor *b) { return a && b ? om__apply1(OM_OP_div, (om_tensor *[]){a, b}, 2, &(om_attrs){.n_i = 1, .i = {1}}) : NULL; }

/* Div of int64 truncates toward zero, as ONNX's. */
static bool bind_div(om_bind *b) {
  return put(b, 0, b->in[0]->dtype != OM_INT64 ? om_div(b->in[0], b->in[1]) : div_trunc(b->in[0], b->in[1]));
}

/* ---- UINT64, held as its bits in int64 (src/runtime/elem_types.c): the rules whose result
 * depends on reading them unsigned ---- */
enum { T_UINT64 = 13 };
static bool is_u64(const om_bind *b, int i) { return b->types[b->node->in[i]] == T_UINT64; }

/* An int64 scalar holding v (om_scalar's double would not hold 2^63 - 1). */
static om_tensor *i64(int64_t v) { return om_from_data(&v, NULL, 0, OM_INT64); }

/* x's bits with the top one flipped: int64's order of them is then UINT64's (0 the least, 2^64 - 1
 * the greatest). Flipping twice gives x back. NULL passes through. */
static om_tensor *u64_ordered(om_tensor *x) {
  om_tensor *top = x ? i64(INT64_MIN) : NULL, *y = top ? om_bitwise_xor(x, top) : NULL;
  om_tensor_release(top);
  return y;
}

/* UINT64 a mod b from int64's remainder of values below 2^63: for b at or past 2^63, a < b ? a :
 * a - b; else the remainder of a's low 63 bits, plus 2^63's for a at or past 2^63 (less b once
 * where the sum reaches it); b 0 is InvalidArgument (as int64's). New reference. */
static om_tensor *u64_mod(om_tensor *a, om_tensor *b) {
  om_scope s = {0};
  om_tensor *zero = om__keep(&s, om_scalar(0, OM_INT64)), *one = om__keep(&s, om_scalar(1, OM_INT64));
  om_tensor *low = om__keep(&s, i64(INT64_MAX));
  om_tensor *bo = om__keep(&s, u64_ordered(b)), *a_below = om__keep(&s, om_lt(om__keep(&s, u64_ordered(a)), bo));
  om_tensor *r_big = a_below ? om__keep(&s, om_where(a_below, a, om__keep(&s, om_sub(a, b)))) : NULL;
  om_tensor *r1 = low ? om__keep(&s, om_remainder(om__keep(&s, om_bitwise_and(a, low)), b)) : NULL;
  om_tensor *c = low && one ? om__keep(&s, om_add(om__keep(&s, om_remainder(low, b)), one)) : NULL; /* in [1, b] */
  c = c ? om__keep(&s, om_where(om__keep(&s, om_lt(c, b)), c, om__keep(&s, om_sub(c, b)))) : NULL; /* 2^63 mod b */
  om_tensor *sum = r1 && c ? om__keep(&s, om_add(r1, c)) : NULL; /* below 2 b, past 2^63 perhaps */
  om_tensor *sum_below = sum && bo ? om__keep(&s, om_lt(om__keep(&s, u64_ordered(sum)), bo)) : NULL;
  om_tensor *r_high = sum_below ? om__keep(&s, om_where(sum_below, sum, om__keep(&s, om_sub(sum, b)))) : NULL;
  om_tensor *r_small = r_high && zero ? om__keep(&s, om_where(om__keep(&s, om_lt(a, zero)), r_high, r1)) : NULL;
  om_tensor *r = r_small && r_big ? om__keep(&s, om_where(om__keep(&s, om_lt(b, zero)), r_big, r_small)) : NULL;
  om_tensor *y = r ? om_where(om__keep(&s, om_eq(b, zero)), zero, r) : NULL;
  om__scope_end(&s);
  return y;
}

/* UINT64 x shifted by y (UINT64 too; 64 or more leaves 0): left, x times 2^y (wrapping); right,
 * x >>> 1 (its low 63 bits halved, plus 2^62 where the top bit was set: below 2^63) divided by
 * 2^(y - 1). New reference. */
static om_tensor *u64_shift(om_tensor *x, om_tensor *y, bool left) {
  om_scope s = {0};
  om_tensor *zero = om__keep(&s, om_scalar(0, OM_INT64)), *two = om__keep(&s, om_scalar(2, OM_INT64));
  om_tensor *w = om__keep(&s, om_scalar(64, OM_INT64)), *most = om__keep(&s, om_scalar(63, OM_INT64));
  om_tensor *big = zero && w ? om__keep(&s, om_logical_or(om__keep(&s, om_lt(y, zero)), om__keep(&s, om_ge(y, w)))) : NULL; /* y >= 64 unsigned */
  om_tensor *yc = big && most ? om__keep(&s, om_where(big, most, y)) : NULL, *r = NULL;
  if (yc && left) {
    r = om__keep(&s, om_mul(x, om__keep(&s, om_pow(two, yc))));
  } else if (yc) {
    om_tensor *low = om__keep(&s, i64(INT64_MAX));
    om_tensor *top_half = om__keep(&s, om_where(om__keep(&s, om_lt(x, zero)), om__keep(&s, om_scalar(0x1p62, OM_INT64)), zero));
    om_tensor *h = low && top_half ? om__keep(&s, om_add(om__keep(&s, div_trunc(om__keep(&s, om_bitwise_and(x, low)), two)), top_half)) : NULL;
    om_tensor *y1 = om__keep(&s, om_maximum(om__keep(&s, om_add_scalar(yc, -1)), zero));
    om_tensor *q = h && y1 ? om__keep(&s, div_trunc(h, om__keep(&s, om_pow(two, y1)))) : NULL;
    r = q ? om__keep(&s, om_where(om__keep(&s, om_eq(y, zero)), x, q)) : NULL;
  }
  om_tensor *out = r ? om_where(big, zero, r) : NULL;
  om__scope_end(&s);
  return out;
}

/* Less, LessOrEqual, Greater, GreaterOrEqual: UINT64's in the flipped order. */
static bool compare(om_bind *b, om_tensor *(*op)(om_tensor *, om_tensor *)) {
  if (!is_u64(b, 0)) return put(b, 0, op(b->in[0], b->in[1]));
  om_scope s = {0};
  om_tensor *x = om__keep(&s, u64_ordered(b->in[0])), *y = om__keep(&s, u64_ordered(b->in[1]));
  bool ok = put(b, 0, x && y ? op(x, y) : NULL);
  om__scope_end(&s);
  return ok;
}
static bool bind_less(om_bind *b) { return compare(b, om_lt); }
static bool bind_less_equal(om_bind *b) { return compare(b, om_le); }
static bool bind_greater(om_bind *b) { return compare(b, om_gt); }
static bool bind_greater_equal(om_bind *b) { return compare(b, om_ge); }

/* BitShift of unsigned integers up to 32 bits (held in int64, never negative): x times, or
 * divided (truncating) by, 2^min(y, 62); a shift past the type's width leaves 0 (the left shift
 * once narrowed to the type). UINT64: u64_shift. */
static bool bind_bit_shift(om_bind *b) {
  const char *dir;
  if (!attr_s(b, "direction", "", &dir)) return false;
  bool left = !strcmp(dir, "LEFT");
  if (!left && strcmp(dir, "RIGHT")) return om__fail(OM_ERR_FORMAT, "%s (BitShift): direction '%s' (LEFT or RIGHT)", who(b), dir);
  for (int i = 0; i < 2; i++) {
    int t = b->types[b->node->in[i]];
    if (t != 2 && t != 4 && t != 12 && t != T_UINT64)
      return om__fail(OM_ERR_UNSUPPORTED, "%s (BitShift): input %d of ONNX type %d is not supported (UINT8, UINT16, UINT32, UINT64)", who(b), i, t);
  }
  if (is_u64(b, 0)) return put(b, 0, u64_shift(b->in[0], b->in[1], left));
  om_scope s = {0};
  om_tensor *cap = om__keep(&s, om_scalar(62, OM_INT64)), *two = om__keep(&s, om_scalar(2, OM_INT64));
  om_tensor *p = cap && two ? om__keep(&s, om_pow(two, om__keep(&s, om_minimum(b->in[1], cap)))) : NULL;
  bool ok = put(b, 0, !p ? NULL : left ? om_mul(b->in[0], p) : div_trunc(b->in[0], p));
  om__scope_end(&s);
  return ok;
}

static bool bind_pow(om_bind *b) { /* ONNX lets the exponent have its own type: it is converted (a UINT64 one read unsigned) */
  if (is_u64(b, 0) || (is_u64(b, 1) && b->in[0]->dtype == OM_INT64)) return unsupported(b, "UINT64 as the base, or as the exponent of an integer");
  om_tensor *e = is_u64(b, 1) ? om__cast_narrow(b->in[1], b->in[0]->dtype, 0, true, true) : om_cast(b->in[1], b->in[0]->dtype);
  bool ok = put(b, 0, e ? om_pow(b->in[0], e) : NULL);
  om_tensor_release(e);
  return ok;
}

static bool bind_not(om_bind *b) {
  om_tensor *f = om_scalar(0, OM_BOOL);
  bool ok = put(b, 0, f ? om_eq(b->in[0], f) : NULL);
  om_tensor_release(f);
  return ok;
}

static bool bind_where(om_bind *b) { return put(b, 0, om_where(b->in[0], b->in[1], b->in[2])); }

/* ---- trigonometric and hyperbolic functions, Mod, bitwise ops ---- */
UNARY(sin, om_sin(x))
UNARY(cos, om_cos(x))
UNARY(tan, om_tan(x))
UNARY(asin, om_asin(x))
UNARY(acos, om_acos(x))
UNARY(atan, om_atan(x))
UNARY(sinh, om_sinh(x))
UNARY(cosh, om_cosh(x))
UNARY(asinh, om_asinh(x))
UNARY(acosh, om_acosh(x))
UNARY(atanh, om_atanh(x))
UNARY(bitwise_not, om_bitwise_not(x))
BINARY(bitwise_and, om_bitwise_and(x, y))
BINARY(bitwise_or, om_bitwise_or(x, y))
BINARY(bitwise_xor, om_bitwise_xor(x, y))
/* Mod: fmod 1 truncates (fmod), fmod 0 floors (remainder: Python's %, which ONNX gives integers);
 * UINT64 (both agree): u64_mod. */
static bool bind_mod(om_bind *b) {
  int64_t f;
  if (!attr_i(b, "fmod", 0, &f)) return false;
  if (is_u64(b, 0)) return put(b, 0, u64_mod(b->in[0], b->in[1]));
  return put(b, 0, f ? om_fmod(b->in[0], b->in[1]) : om_remainder(b->in[0], b->in[1]));
}

/* Min, Max, Sum, Mean of any number of inputs, pairwise from the first; UINT64's Min and Max pick
 * in the flipped order. */
static om_tensor *pick(om_tensor *x, om_tensor *y, bool max) { return max ? om_maximum(x, y) : om_minimum(x, y); }
static bool fold_inputs(om_bind *b, int how) { /* 0 min, 1 max, 2 sum, 3 mean */
  bool flip = how < 2 && is_u64(b, 0);
  om_tensor *acc = flip ? u64_ordered(b->in[0]) : om_tensor_retain(b->in[0]);
  for (int i = 1; acc && i < b->node->n_in; i++) {
    om_tensor *y = flip ? u64_ordered(b->in[i]) : om_tensor_retain(b->in[i]);
    acc = then(acc, !y ? NULL : how < 2 ? pick(acc, y, how == 1) : om_add(acc, y));
    om_tensor_release(y);
  }
  if (acc && how == 3 && b->node->n_in > 1) acc = then(acc, om_scale(acc, 1.0 / b->node->n_in));
  if (acc && flip) acc = then(acc, u64_ordered(acc));
  return put(b, 0, acc);
}
static bool bind_min(om_bind *b) { return fold_inputs(b, 0); }
static bool bind_max(om_bind *b) { return fold_inputs(b, 1); }
static bool bind_sum(om_bind *b) { return fold_inputs(b, 2); }
static bool bind_mean(om_bind *b) { return fold_inputs(b, 3); }

/* Clip: bounds known when planning clamp; bounds computed when running are Max and Min. */
static bool bind_clip(om_bind *b) {
  om_tensor *x = om_tensor_retain(b->in[0]);
  for (int i = 1; x && i < 3; i++) {
    if (b->node->n_in <= i || !b->in[i]) continue;
    om_tensor *next;
    double v;
    if (!b->in[i]->storage->planned) {
      if (!const_scalar(b, i, &v)) return om_tensor_release(x), false;
      next = om_clamp(x, i == 1 ? &v : NULL, i == 2 ? &v : NULL);
    } else {
      next = pick(x, b->in[i], i == 1);
    }
    x = then(x, next);
  }
  return put(b, 0, x);
}

/* ONNX's element type number to the dtype that holds it (src/runtime/elem_types.c: the session
 * narrows the result to the type itself); false, naming attribute name, for another type. */
static bool onnx_dtype(const om_bind *b, const char *name, int64_t to, om_dtype *d) {
  for (om_dtype k = OM_FLOAT32; k <= OM_FLOAT64; k++)
    if (to > 0 && to < 64 && om__elem_holds(k, (int)to)) return *d = k, true;
  return om__fail(OM_ERR_UNSUPPORTED, "%s (%s): %s %lld is not a supported type (FLOAT, DOUBLE, FLOAT16, BFLOAT16, the float8 types, INT8 to INT64, UINT8 to UINT64, BOOL)",
                  who(b), b->node->op_type, name, (long long)to);
}

/* x cast to ONNX type `to` held in d: a type narrower than d is narrowed by the cast itself, so a
 * DOUBLE rounds to FLOAT16 once, not through float32, and a float8 type saturates or not as the
 * node's `saturate` says (the session's narrowing after the rule then changes nothing). */
static bool cast_to(om_bind *b, om_tensor *x, om_dtype d, int64_t to) {
  int64_t sat;
  bool own = om__elem_own(d) == to, from_u64 = b->node->in[0] >= 0 && is_u64(b, 0); /* UINT64 read unsigned */
  return attr_i(b, "saturate", 1, &sat) &&
         put(b, 0, own && !from_u64 ? om_cast(x, d) : om__cast_narrow(x, d, own ? 0 : (int)to, sat != 0, from_u64));
}
static bool cast_to_strings(om_bind *b, int i);
static bool bind_cast(om_bind *b) {
  int64_t to;
  om_dtype d;
  if (!attr_i(b, "to", -1, &to)) return false;
  if (to == OM_ONNX_STRING) return cast_to_strings(b, 0);
  return onnx_dtype(b, "to", to, &d) && cast_to(b, b->in[0], d, to);
}

/* ---- linear quantization: q = saturate(round(x / scale) + zero_point), x = (q - zero_point) scale ---- */

/* The library's floor and round (half to even, as ONNX's Round) of a composite's step; NULL (a failed
 * step before, its error kept) passes through. */
static om_tensor *floor_of(om_tensor *x) { return x ? om_floor(x) : NULL; }
static om_tensor *round_half_even(om_tensor *x) { return x ? om_round(x) : NULL; }

/* Input i (a scale or a zero point) shaped to broadcast against x: one value as it is, a 1-D of
 * x's size at axis (per-axis quantization) as [1, .., n, .., 1]. A new reference. */
static om_tensor *along_axis(om_bind *b, int i, const om_tensor *x) {
  om_tensor *t = b->in[i];
  if (om_tensor_numel(t) == 1 && t->ndim <= 1) return om_tensor_retain(t);
  int64_t axis;
  int ax = 0;
  if (!attr_i(b, "axis", 1, &axis) || !wrap(b, axis, x->ndim, &ax)) return NULL;
  if (t->ndim != 1 || t->shape[0] != x->shape[ax])
    return om__fail(OM_ERR_SHAPE_MISMATCH, "%s (%s): input %d has %lld values; per-axis quantization takes one per element of axis %d (%lld)",
                    who(b), b->node->op_type, i, (long long)om_tensor_numel(t), ax, (long long)x->shape[ax]), NULL;
  int64_t shape[OM_MAX_DIMS];
  for (int d = 0; d < x->ndim; d++) shape[d] = d == ax ? x->shape[ax] : 1;
  return om_reshape(t, shape, x->ndim);
}

/* The range of quantized type t (UINT8 without a zero point); false for another type. */
static bool quant_range(const om_bind *b, int t, double *lo, double *hi) {
  if (t == 2) return *lo = 0, *hi = 255, true;
  if (t == 3) return *lo = -128, *hi = 127, true;
  return om__fail(OM_ERR_UNSUPPORTED, "%s (%s): quantized type %d is not supported (UINT8, INT8)", who(b), b->node->op_type, t);
}

/* saturate(round_half_even(v) + zp), in float32 (as onnxruntime), then int64: v (x / scale, or
 * an integer product times its scale) and zp (float32, NULL for 0) broadcast already. */
static om_tensor *quantize(om_tensor *v, om_tensor *zp, double lo, double hi) {
  om_scope s = {0};
  om_tensor *r = om__keep(&s, round_half_even(v));
  om_tensor *q = r && zp ? om__keep(&s, om_add(r, zp)) : r;
  om_tensor *c = q ? om__keep(&s, om_clamp(q, &lo, &hi)) : NULL;
  om_tensor *y = c ? om_cast(c, OM_INT64) : NULL;
  om__scope_end(&s);
  return y;
}

/* The float8 types (ONNX's 17 to 20), held in float32. */
static bool is_float8(int t) { return t >= 17 && t <= 20; }

/* To a float8 type (the zero point's): x / scale + zero point rounded to it once, saturating as
 * `saturate` says (ONNX's reference: a Cast of the float32 result). */
static bool bind_quantize_linear(om_bind *b) {
  om_tensor *x = b->in[0];
  bool has_zp = b->node->n_in > 2 && b->in[2];
  int t = has_zp ? b->types[b->node->in[2]] : 2;
  double lo = 0, hi = 0;
  int64_t sat;
  if (!attr_i(b, "saturate", 1, &sat) || (!is_float8(t) && !quant_range(b, t, &lo, &hi))) return false;
  om_scope s = {0};
  om_tensor *scale = om__keep(&s, along_axis(b, 1, x)), *zp = has_zp ? om__keep(&s, along_axis(b, 2, x)) : NULL;
  om_tensor *zpf = zp ? om__keep(&s, om_cast(zp, OM_FLOAT32)) : NULL, *v = scale ? om__keep(&s, om_div(x, scale)) : NULL;
  bool ok = v && (!has_zp || zpf) &&
            put(b, 0, is_float8(t) ? om__cast_narrow(zpf ? om__keep(&s, om_add(v, zpf)) : v, OM_FLOAT32, t, sat != 0, false) : quantize(v, zpf, lo, hi));
  om__scope_end(&s);
  return ok;
}

/* (x - zero point) scale: the integers subtracted exactly in int64, a float8 type's values (held
 * in float32, subtracted there) as they are. */
static bool bind_dequantize_linear(om_bind *b) {
  om_tensor *x = b->in[0];
  if (x->dtype != OM_INT64 && !is_float8(b->types[b->node->in[0]]))
    return om__fail(OM_ERR_UNSUPPORTED, "%s (DequantizeLinear): input of type %d is not supported (integers and the float8 types)", who(b), b->types[b->node->in[0]]);
  bool has_zp = b->node->n_in > 2 && b->in[2];
  om_scope s = {0};
  om_tensor *scale = om__keep(&s, along_axis(b, 1, x)), *zp = has_zp ? om__keep(&s, along_axis(b, 2, x)) : NULL;
  om_tensor *d = scale && (!has_zp || zp) ? om__keep(&s, has_zp ? om_sub(x, zp) : om_tensor_retain(x)) : NULL; /* exact in int64 */
  bool ok = d && put(b, 0, om_mul(om__keep(&s, om_cast(d, scale->dtype)), scale));
  om__scope_end(&s);
  return ok;
}

/* scale = (max(0, max x) - min(0, min x)) / 255, zero point = saturate(round(0 - min / scale)),
 * y = saturate(round(x / scale) + zero point): ONNX's definition, in float32. */
static bool bind_dynamic_quantize_linear(om_bind *b) {
  om_tensor *x = b->in[0];
  double lo = 0, hi = 255;
  om_scope s = {0};
  om_tensor *zero = om__keep(&s, om_scalar(0, OM_FLOAT32)), *qmax = om__keep(&s, om_scalar(255, OM_FLOAT32));
  om_tensor *mx = zero ? om__keep(&s, om_maximum(om__keep(&s, om_amax(x, NULL, 0, false)), zero)) : NULL;
  om_tensor *mn = zero ? om__keep(&s, om_minimum(om__keep(&s, om_amin(x, NULL, 0, false)), zero)) : NULL;
  om_tensor *scale = mx && mn && qmax ? om__keep(&s, om_div(om__keep(&s, om_sub(mx, mn)), qmax)) : NULL;
  om_tensor *zpf = scale ? om__keep(&s, om_clamp(om__keep(&s, round_half_even(om__keep(&s, om_sub(zero, om__keep(&s, om_div(mn, scale)))))), &lo, &hi)) : NULL;
  bool ok = zpf && put(b, 0, quantize(om__keep(&s, om_div(x, scale)), zpf, lo, hi)) && put(b, 1, om_tensor_retain(scale)) &&
            put(b, 2, om_cast(zpf, OM_INT64));
  om__scope_end(&s);
  return ok;
}

/* (A - a_zero_point) (B - b_zero_point) of integers up to 8 bits, exactly, in int64: the
 * float32 products of chunks of 256 along K, each of whose partial sums is an integer of at most
 * 256 * 255^2 < 2^24 (exact in float32 in any order), cast to int64 and summed. a_zero_point is
 * one value or one per row of A, b_zero_point one value or one per column of B (NULL: none). */
static om_tensor *integer_matmul(om_tensor *A, om_tensor *B, om_tensor *azp, om_tensor *bzp) {
  om_scope s = {0};
  if (azp && om_tensor_numel(azp) > 1 && A->ndim >= 2) azp = om__keep(&s, om_reshape(azp, (int64_t[]){om_tensor_numel(azp), 1}, 2)); /* per row */
  om_tensor *a = azp ? om__keep(&s, om_sub(A, azp)) : A, *bb = bzp && a ? om__keep(&s, om_sub(B, bzp)) : B;
  om_tensor *af = a ? om__keep(&s, om_cast(a, OM_FLOAT32)) : NULL, *bf = bb ? om__keep(&s, om_cast(bb, OM_FLOAT32)) : NULL, *acc = NULL;
  int64_t K = A->shape[A->ndim - 1];
  for (int64_t k0 = 0; af && bf && (k0 == 0 || k0 < K); k0 += 256) {
    int64_t k1 = K - k0 < 256 ? K : k0 + 256;
    om_tensor *ac = om__keep(&s, om_slice(af, A->ndim - 1, k0, k1, 1)), *bc = om__keep(&s, om_slice(bf, B->ndim >= 2 ? B->ndim - 2 : 0, k0, k1, 1));
    om_tensor *p = ac && bc ? om__keep(&s, om_cast(om__keep(&s, om_matmul(ac, bc)), OM_INT64)) : NULL;
    acc = p && acc ? om__keep(&s, om_add(acc, p)) : p;
    if (!acc) break;
  }
  om_tensor *y = om_tensor_retain(acc);
  om__scope_end(&s);
  return y;
}

/* The types MatMulInteger and QLinearMatMul take: UINT8 and INT8 operands. */
static bool int8_operands(om_bind *b, const int *inputs, int n) {
  for (int k = 0; k < n; k++) {
    int t = b->types[b->node->in[inputs[k]]];
    if (t != 2 && t != 3) return om__fail(OM_ERR_UNSUPPORTED, "%s (%s): input %d has ONNX type %d; the integer products take UINT8 and INT8", who(b), b->node->op_type, inputs[k], t);
  }
  return true;
}

static bool bind_matmul_integer(om_bind *b) {
  om_tensor *azp = b->node->n_in > 2 ? b->in[2] : NULL, *bzp = b->node->n_in > 3 ? b->in[3] : NULL;
  return int8_operands(b, (const int[]){0, 1}, 2) && put(b, 0, integer_matmul(b->in[0], b->in[1], azp, bzp));
}

/* QLinearMatMul: saturate(round((A - a_zp)(B - b_zp) (a_scale b_scale / y_scale)) + y_zp), the
 * product exact in int64, the rest in float32 as onnxruntime's requantization. */
static bool bind_qlinear_matmul(om_bind *b) {
  double lo = 0, hi = 0;
  if (!int8_operands(b, (const int[]){0, 3}, 2) || !quant_range(b, b->types[b->node->in[7]], &lo, &hi)) return false;
  om_scope s = {0};
  om_tensor *acc = om__keep(&s, integer_matmul(b->in[0], b->in[3], b->in[2], b->in[5]));
  om_tensor *scale = om__keep(&s, om_div(om__keep(&s, om_mul(b->in[1], b->in[4])), b->in[6]));
  om_tensor *v = acc && scale ? om__keep(&s, om_mul(om__keep(&s, om_cast(acc, OM_FLOAT32)), scale)) : NULL;
  om_tensor *zp = om__keep(&s, om_cast(b->in[7], OM_FLOAT32));
  bool ok = v && zp && put(b, 0, quantize(v, zp, lo, hi));
  om__scope_end(&s);
  return ok;
}

/* ---- constants and shapes ---- */

static bool bind_constant(om_bind *b) {
  const om_gattr *a = b->node->n_attrs == 1 ? &b->node->attrs[0] : NULL;
  if (!a) return om__fail(OM_ERR_FORMAT, "%s (Constant): needs exactly one attribute", who(b));
  int64_t one = 1;
  if (!strcmp(a->name, "value") && a->type == OM_GATTR_TENSOR) return put(b, 0, om_tensor_retain(a->t));
  if (!strcmp(a->name, "value_float") && a->type == OM_GATTR_FLOAT) return put(b, 0, om_scalar(a->f, OM_FLOAT32));
  if (!strcmp(a->name, "value_int") && a->type == OM_GATTR_INT) return put(b, 0, om_from_data(&a->i, NULL, 0, OM_INT64));
  if (!strcmp(a->name, "value_ints") && a->type == OM_GATTR_INTS) return one = a->n, put(b, 0, om_from_data(a->ints, &one, 1, OM_INT64));
  if (!strcmp(a->name, "value_floats") && a->type == OM_GATTR_FLOATS) return one = a->n, put(b, 0, om_from_data(a->floats, &one, 1, OM_FLOAT32));
  return om__fail(OM_ERR_UNSUPPORTED, "%s (Constant): attribute %s is not supported", who(b), a->name);
}

static bool bind_shape(om_bind *b) {
  const om_tensor *x = b->in[0];
  int64_t start, end, n = x->ndim;
  if (!attr_i(b, "start", 0, &start) || !attr_i(b, "end", n, &end)) return false;
  start = start < 0 ? start + n : start, end = end < 0 ? end + n : end;
  start = start < 0 ? 0 : start > n ? n : start, end = end < 0 ? 0 : end > n ? n : end;
  int64_t len = end > start ? end - start : 0;
  return put(b, 0, om_from_data(x->shape + start, &len, 1, OM_INT64));
}

static bool bind_size(om_bind *b) {
  int64_t n = om_tensor_numel(b->in[0]);
  return put(b, 0, om_from_data(&n, NULL, 0, OM_INT64));
}

static bool bind_constant_of_shape(om_bind *b) {
  int64_t shape[OM_MAX_DIMS];
  int n;
  if (!const_ints(b, 0, shape, OM_MAX_DIMS, &n)) return false;
  const om_gattr *a = attr(b, "value");
  if (a && (!attr_type(b, a, OM_GATTR_TENSOR))) return false;
  if (a && om_tensor_numel(a->t) != 1) return om__fail(OM_ERR_FORMAT, "%s (ConstantOfShape): value must hold one element", who(b));
  return put(b, 0, om_full(shape, n, a ? a->t->dtype : OM_FLOAT32, a ? om__get_flat(a->t, 0) : 0.0));
}

static bool bind_range(om_bind *b) {
  double v[3];
  for (int i = 0; i < 3; i++)
    if (!const_scalar(b, i, &v[i])) return false;
  return put(b, 0, om_arange(v[0], v[1], v[2], b->in[0]->dtype));
}

/* ---- views and assembly ---- */

static bool bind_reshape(om_bind *b) {
  int64_t shape[OM_MAX_DIMS], allowzero;
  int n;
  if (!const_ints(b, 1, shape, OM_MAX_DIMS, &n) || !attr_i(b, "allowzero", 0, &allowzero)) return false;
  for (int d = 0; d < n && !allowzero; d++) /* 0 copies the input's size */
    if (shape[d] == 0) {
      if (d >= b->in[0]->ndim) return om__fail(OM_ERR_SHAPE_MISMATCH, "%s (Reshape): a 0 at dim %d, past the input's %d dims", who(b), d, b->in[0]->ndim);
      shape[d] = b->in[0]->shape[d];
    }
  return put(b, 0, om_reshape(b->in[0], shape, n));
}

static bool bind_flatten(om_bind *b) {
  const om_tensor *x = b->in[0];
  int64_t axis, shape[2] = {1, 1};
  if (!attr_i(b, "axis", 1, &axis)) return false;
  if (axis < -x->ndim || axis > x->ndim) return om__fail(OM_ERR_INDEX_OUT_OF_RANGE, "%s (Flatten): axis %lld for %d dims", who(b), (long long)axis, x->ndim);
  if (axis < 0) axis += x->ndim;
  for (int d = 0; d < x->ndim; d++) shape[d >= axis] *= x->shape[d];
  return put(b, 0, om_reshape(b->in[0], shape, 2));
}

static bool bind_transpose(om_bind *b) {
  int64_t perm[OM_MAX_DIMS];
  int n, nd = b->in[0]->ndim;
  if (!attr_ints(b, "perm", perm, OM_MAX_DIMS, &n)) return false;
  if (n < 0)
    for (n = 0; n < nd; n++) perm[n] = nd - 1 - n;
  return put(b, 0, om_permute(b->in[0], perm, n));
}

static bool bind_squeeze(om_bind *b) {
  int64_t axes[OM_MAX_DIMS];
  int n;
  if (!axes_of(b, 1, axes, &n)) return false;
  for (int k = 0; k < n; k++) { /* the library's squeeze (PyTorch's) leaves an axis of another size as it is; ONNX refuses it */
    int a = 0;
    if (!wrap(b, axes[k], b->in[0]->ndim, &a)) return false;
    if (b->in[0]->shape[a] != 1)
      return om__fail(OM_ERR_FORMAT, "%s (Squeeze): axis %lld has size %lld, not 1", who(b), (long long)axes[k], (long long)b->in[0]->shape[a]);
  }
  return put(b, 0, om_squeeze(b->in[0], axes, n < 0 ? 0 : n));
}

static bool bind_unsqueeze(om_bind *b) {
  int64_t axes[OM_MAX_DIMS];
  int n;
  if (!axes_of(b, 1, axes, &n)) return false;
  if (n < 0) return om__fail(OM_ERR_FORMAT, "%s (Unsqueeze): no axes given", who(b));
  int nd = b->in[0]->ndim + n, w[OM_MAX_DIMS];
  if (nd > OM_MAX_DIMS) return om__fail(OM_ERR_INVALID_ARGUMENT, "%s (Unsqueeze): %d dims (at most %d)", who(b), nd, OM_MAX_DIMS);
  for (int k = 0; k < n; k++) {
    if (!wrap(b, axes[k], nd, &w[k])) return false;
    for (int q = k; q > 0 && w[q - 1] > w[q]; q--) { /* ascending, so each lands where it says */
      int t = w[q];
      w[q] = w[q - 1], w[q - 1] = t;
    }
  }
  om_tensor *x = om_tensor_retain(b->in[0]);
  for (int k = 0; x && k < n; k++) {
    if (k && w[k] == w[k - 1]) return om_tensor_release(x), om__fail(OM_ERR_FORMAT, "%s (Unsqueeze): axis %d given twice", who(b), w[k]);
    x = then(x, om_unsqueeze(x, w[k]));
  }
  return put(b, 0, x);
}

static bool bind_concat(om_bind *b) {
  int64_t axis;
  int a = 0;
  return attr_i(b, "axis", 0, &axis) && wrap(b, axis, b->in[0]->ndim, &a) && put(b, 0, om_cat(b->in, b->node->n_in, a));
}

/* Expand broadcasts both ways: the result's shape is the broadcast of the input's and the operand's. */
static bool bind_expand(om_bind *b) {
  int64_t shape[OM_MAX_DIMS], out[OM_MAX_DIMS];
  int n;
  const om_tensor *x = b->in[0];
  if (!const_ints(b, 1, shape, OM_MAX_DIMS, &n)) return false;
  int nd = n > x->ndim ? n : x->ndim;
  for (int d = 0; d < nd; d++) {
    int ds = d - (nd - n), dx = d - (nd - x->ndim);
    int64_t s = ds >= 0 ? shape[ds] : 1, v = dx >= 0 ? x->shape[dx] : 1;
    if (s != v && s != 1 && v != 1)
      return om__fail(OM_ERR_SHAPE_MISMATCH, "%s (Expand): size %lld does not broadcast to %lld at dim %d", who(b), (long long)v, (long long)s, d);
    out[d] = s == 1 ? v : s;
  }
  return put(b, 0, om_expand(b->in[0], out, nd));
}

/* Slice, with ONNX's clamping of bounds; a negative step picks its indices (index_select). */
static bool bind_slice(om_bind *b) {
  int64_t starts[OM_MAX_DIMS], ends[OM_MAX_DIMS], axes[OM_MAX_DIMS], steps[OM_MAX_DIMS];
  int ns, ne, na = -1, nst = -1;
  if (!const_ints(b, 1, starts, OM_MAX_DIMS, &ns) || !const_ints(b, 2, ends, OM_MAX_DIMS, &ne)) return false;
  if (b->node->n_in > 3 && b->in[3] && !const_ints(b, 3, axes, OM_MAX_DIMS, &na)) return false;
  if (b->node->n_in > 4 && b->in[4] && !const_ints(b, 4, steps, OM_MAX_DIMS, &nst)) return false;
  if (ne != ns || (na >= 0 && na != ns) || (nst >= 0 && nst != ns))
    return om__fail(OM_ERR_FORMAT, "%s (Slice): starts, ends, axes and steps differ in length", who(b));
  om_tensor *x = om_tensor_retain(b->in[0]);
  for (int k = 0; x && k < ns; k++) {
    int axis = 0;
    int64_t step = nst >= 0 ? steps[k] : 1;
    if (!wrap(b, na >= 0 ? axes[k] : k, x->ndim, &axis)) return om_tensor_release(x), false;
    for (int q = 0; na >= 0 && q < k; q++) { /* an axis sliced twice is not ONNX's (its checker refuses it) */
      int prev = 0;
      if (wrap(b, axes[q], x->ndim, &prev) && prev == axis)
        return om_tensor_release(x), om__fail(OM_ERR_FORMAT, "%s (Slice): axis %d is given twice", who(b), axis);
    }
    if (!step) return om_tensor_release(x), om__fail(OM_ERR_FORMAT, "%s (Slice): step 0", who(b));
    int64_t dim = x->shape[axis], s = starts[k] < 0 ? starts[k] + dim : starts[k], e = ends[k] < 0 ? ends[k] + dim : ends[k];
    om_tensor *next;
    if (step > 0) {
      s = s < 0 ? 0 : s > dim ? dim : s;
      e = e < s ? s : e > dim ? dim : e;
      next = om_slice(x, axis, s, e, step);
    } else {
      s = s < 0 ? 0 : s > dim - 1 ? dim - 1 : s;
      e = e < -1 ? -1 : e > dim - 1 ? dim - 1 : e;
      int64_t count = dim > 0 && s > e ? (s - e - 1) / -step + 1 : 0; /* an empty axis: [0, dim - 1] holds no start */
      int64_t *idx = om__alloc(sizeof(int64_t) * (size_t)(count + 1), "Slice");
      om_tensor *it = NULL;
      if (idx) {
        for (int64_t q = 0; q < count; q++) idx[q] = s + q * step;
        it = om_from_data(idx, &count, 1, OM_INT64);
        free(idx);
      }
      next = it ? om_index_select(x, axis, it) : NULL;
      om_tensor_release(it);
    }
    x = then(x, next);
  }
  return put(b, 0, x);
}

static bool bind_split(om_bind *b) {
  const om_tensor *x = b->in[0];
  int64_t axis, sizes[OM_BIND_MAX_OUT], num;
  int a = 0, n = -1, outs = b->node->n_out;
  if (!attr_i(b, "axis", 0, &axis) || !wrap(b, axis, x->ndim, &a) || !attr_i(b, "num_outputs", outs, &num)) return false;
  if (b->node->n_in > 1 && b->in[1] && !const_ints(b, 1, sizes, OM_BIND_MAX_OUT, &n)) return false;
  int64_t dim = x->shape[a];
  if (n < 0) { /* equal pieces, the last smaller (opset 18) */
    if (num != outs || num < 1) return om__fail(OM_ERR_FORMAT, "%s (Split): num_outputs %lld for %d outputs", who(b), (long long)num, outs);
    int64_t piece = (dim + num - 1) / num;
    for (n = 0; n < outs; n++) sizes[n] = dim - n * piece < piece ? (dim - n * piece > 0 ? dim - n * piece : 0) : piece;
  }
  int64_t total = 0;
  for (int k = 0; k < n; k++) total += sizes[k] >= 0 ? sizes[k] : dim + 1;
  if (n != outs || total != dim)
    return om__fail(OM_ERR_SHAPE_MISMATCH, "%s (Split): %d sizes summing to %lld for %d outputs of an axis of %lld", who(b), n,
                    (long long)total, outs, (long long)dim);
  int64_t at = 0;
  for (int k = 0; k < n; k++, at += sizes[k - 1])
    if (!put(b, k, om_slice((om_tensor *)x, a, at, at + sizes[k], 1))) return false;
  return true;
}

/* Tile: each axis repeated r times, by the library's tile (any rank the library holds; the
 * reshape-expand-reshape this was before needed twice the input's dims, so a traced repeat of a
 * 5-d tensor, LongT5's side keys, did not run). */
static bool bind_tile(om_bind *b) {
  const om_tensor *x = b->in[0];
  int64_t reps[OM_MAX_DIMS];
  int n;
  if (!const_ints(b, 1, reps, OM_MAX_DIMS, &n)) return false;
  if (n != x->ndim) return om__fail(OM_ERR_FORMAT, "%s (Tile): %d repeats for %d dims", who(b), n, x->ndim);
  for (int d = 0; d < n; d++)
    if (reps[d] < 0) return om__fail(OM_ERR_FORMAT, "%s (Tile): repeat %lld", who(b), (long long)reps[d]);
  return put(b, 0, om_repeat((om_tensor *)x, reps, n));
}

static bool bind_trilu(om_bind *b) {
  int64_t upper, k = 0;
  int n;
  if (!attr_i(b, "upper", 1, &upper)) return false;
  if (b->node->n_in > 1 && b->in[1] && !const_ints(b, 1, &k, 1, &n)) return false;
  return put(b, 0, upper ? om_triu(b->in[0], k) : om_tril(b->in[0], k));
}

/* Pad: ONNX's pads are [begins..., ends...] over the axes; the library's are (before, after)
 * pairs from the last dim back (PyTorch's F.pad). */
/* Pad's wrap mode along axis a, begin and end pads pb and pe (negative: cut): index_select of the
 * positions -pb to size + pe, each taken modulo the axis' size. */
static om_tensor *wrap_pad(om_bind *b, om_tensor *x, int a, int64_t pb, int64_t pe) {
  int64_t n = x->shape[a], len = n + pb + pe;
  if (len < 0 || len > LIMIT || (n == 0 && len > 0) || pb < -LIMIT || pb > LIMIT)
    return om__fail(OM_ERR_FORMAT, "%s (Pad): wrap pads %lld and %lld for an axis of %lld", who(b), (long long)pb, (long long)pe, (long long)n), NULL;
  int64_t *idx = om__alloc(sizeof(int64_t) * (uint64_t)(len + 1), "Pad");
  for (int64_t k = 0; idx && k < len; k++) idx[k] = ((k - pb) % n + n) % n;
  om_tensor *it = idx ? om_from_data(idx, &len, 1, OM_INT64) : NULL, *y = it ? om_index_select(x, a, it) : NULL;
  free(idx);
  om_tensor_release(it);
  return y;
}

static bool bind_pad(om_bind *b) {
  const om_tensor *x = b->in[0];
  int64_t pads[2 * OM_MAX_DIMS], axes[OM_MAX_DIMS], torch[2 * OM_MAX_DIMS] = {0};
  int np, na = -1;
  double value = 0;
  const char *mode;
  if (!attr_s(b, "mode", "constant", &mode) || !const_ints(b, 1, pads, 2 * OM_MAX_DIMS, &np)) return false;
  if (b->node->n_in > 2 && b->in[2] && om_tensor_numel(b->in[2]) && !const_scalar(b, 2, &value)) return false;
  if (b->node->n_in > 3 && b->in[3] && !const_ints(b, 3, axes, OM_MAX_DIMS, &na)) return false;
  if (na < 0)
    for (na = 0; na < x->ndim; na++) axes[na] = na;
  if (np != 2 * na) return om__fail(OM_ERR_FORMAT, "%s (Pad): %d pads for %d axes", who(b), np, na);
  if (!strcmp(mode, "wrap")) {
    om_tensor *y = om_tensor_retain((om_tensor *)x);
    for (int k = 0; y && k < na; k++) {
      int a = 0;
      if (!wrap(b, axes[k], x->ndim, &a)) return om_tensor_release(y), false;
      if (pads[k] || pads[na + k]) y = then(y, wrap_pad(b, y, a, pads[k], pads[na + k]));
    }
    return put(b, 0, y);
  }
  om_pad_mode m = !strcmp(mode, "constant") ? OM_PAD_CONSTANT : !strcmp(mode, "reflect") ? OM_PAD_REFLECT
                  : !strcmp(mode, "edge") ? OM_PAD_REPLICATE : (om_pad_mode)-1;
  if ((int)m < 0) return unsupported(b, "mode other than constant, reflect, edge and wrap");
  int lowest = x->ndim;
  for (int k = 0; k < na; k++) {
    int a = 0;
    if (!wrap(b, axes[k], x->ndim, &a)) return false;
    int p = x->ndim - 1 - a; /* the pair of axis a */
    torch[2 * p] = pads[k], torch[2 * p + 1] = pads[na + k];
    if ((pads[k] || pads[na + k]) && a < lowest) lowest = a;
  }
  int pairs = x->ndim - (lowest < x->ndim ? lowest : x->ndim - 1); /* the trailing dims that are padded */
  if (m != OM_PAD_CONSTANT) { /* the library's reflect and edge pad the last 1-3 dims of an input of 1 or 2 more (PyTorch's rule) */
    int lead = x->ndim - pairs;
    if (lead > 2) pairs = x->ndim - 2; /* pairs of zeros on the dims in between */
    else if (lead < 1) return unsupported(b, "reflect or edge padding of every axis (the library keeps 1 or 2 leading axes)");
    if (pairs > 3) return unsupported(b, "reflect or edge padding of more than the last 3 axes");
  }
  return put(b, 0, om_pad((om_tensor *)x, torch, 2 * pairs, m, value));
}

/* ---- indexing ---- */

/* Indices as ONNX counts them, a negative one from the end: idx + dim where idx < 0 (the library's
 * ops take 0 to dim - 1). Ops on constants run now, on planned ones are steps. A new reference. */
static om_tensor *from_end(om_tensor *idx, int64_t dim) {
  om_scope s = {0};
  om_tensor *zero = om__keep(&s, om_scalar(0, OM_INT64)), *n = om__keep(&s, om_scalar((double)dim, OM_INT64));
  om_tensor *neg = zero ? om__keep(&s, om_lt(idx, zero)) : NULL, *up = n ? om__keep(&s, om_add(idx, n)) : NULL;
  om_tensor *r = neg && up ? om_where(neg, up, idx) : NULL;
  om__scope_end(&s);
  return r;
}

/* idx with a negative entry counted from the end of size (each element its own size: sizes
 * broadcast against idx), and bad set where the result is still outside [0, size). */
static om_tensor *wrap_indices(om_scope *s, om_tensor *idx, om_tensor *size, om_tensor **bad) {
  om_tensor *zero = om__keep(s, om_scalar(0, OM_INT64)), *neg = zero ? om__keep(s, om_lt(idx, zero)) : NULL;
  om_tensor *w = neg ? om__keep(s, om_where(neg, om__keep(s, om_add(idx, size)), idx)) : NULL;
  *bad = w ? om__keep(s, om_logical_or(om__keep(s, om_lt(w, zero)), om__keep(s, om_ge(w, size)))) : NULL;
  return *bad ? w : NULL;
}

/* The row of data x's axes from .. from + k - 1 flattened (row-major, D rows) that each index
 * tuple of i3 [B, Q, k] names, plus its batch's offset b D: [B, Q], or -1 where an entry is out of
 * range (negative entries count from the end), which the index_select or scatter reading it
 * refuses with IndexOutOfRange. */
static om_tensor *nd_rows(om_scope *s, const om_tensor *x, int from, om_tensor *i3) {
  int64_t k = i3->shape[2], B = i3->shape[0], D = 1, dims[OM_MAX_DIMS], strides[OM_MAX_DIMS], boff[2] = {B, 1}, last = 2;
  for (int64_t j = k - 1; j >= 0; j--) dims[j] = x->shape[from + j], strides[j] = D, D *= dims[j];
  om_tensor *bad, *size = om__keep(s, om_from_data(dims, &k, 1, OM_INT64)), *stride = om__keep(s, om_from_data(strides, &k, 1, OM_INT64));
  om_tensor *w = size ? wrap_indices(s, i3, size, &bad) : NULL;
  om_tensor *lin = w && stride ? om__keep(s, om_sum(om__keep(s, om_mul(w, stride)), &last, 1, false)) : NULL;
  om_tensor *off = om__keep(s, om_reshape(om__keep(s, om_scale(om__keep(s, om_arange(0, (double)B, 1, OM_INT64)), (double)D)), boff, 2));
  om_tensor *nbad = lin ? om__keep(s, om_sum(om__keep(s, om_cast(bad, OM_INT64)), &last, 1, false)) : NULL;
  om_tensor *anybad = nbad ? om__keep(s, om_gt(nbad, om__keep(s, om_scalar(0, OM_INT64)))) : NULL;
  return anybad && off ? om__keep(s, om_where(anybad, om__keep(s, om_scalar(-1, OM_INT64)), om__keep(s, om_add(lin, off)))) : NULL;
}

/* Gather along axis: one index is a select; indices of any shape are an index_select of them
 * flattened, reshaped to data[:axis] + indices + data[axis+1:]. Negative indices count from the
 * end (from_end). */
static bool bind_gather(om_bind *b) {
  om_tensor *x = b->in[0], *idx = b->in[1];
  int64_t axis;
  int a = 0;
  if (!attr_i(b, "axis", 0, &axis) || !wrap(b, axis, x->ndim, &a)) return false;
  if (idx->dtype != OM_INT64) return om__fail(OM_ERR_DTYPE_MISMATCH, "%s (Gather): indices must be int64, they are %s", who(b), om_dtype_name(idx->dtype));
  if (!idx->storage->planned && idx->ndim == 0) { /* one index known now */
    int64_t i = (int64_t)om__get_flat(idx, 0);
    return put(b, 0, om_select(x, a, i < 0 ? i + x->shape[a] : i));
  }
  /* Constant indices are checked now, not when the step runs: one out of range is the graph's
   * own fault, refused when the plan is made (at create, where every size is fixed). */
  for (int64_t k = 0, n = idx->storage->planned ? 0 : om_tensor_numel(idx); k < n; k++) {
    int64_t i = (int64_t)om__get_flat(idx, k);
    if (i < -x->shape[a] || i >= x->shape[a])
      return om__fail(OM_ERR_INDEX_OUT_OF_RANGE, "%s (Gather): index %lld is out of range for axis %d of size %lld", who(b), (long long)i, a,
                      (long long)x->shape[a]);
  }
  om_tensor *wrapped = from_end(idx, x->shape[a]);
  if (!wrapped) return false;
  idx = wrapped;
  int64_t flat_n = -1, shape[OM_MAX_DIMS];
  int nd = 0;
  for (int d = 0; d < a; d++) shape[nd++] = x->shape[d];
  for (int d = 0; d < idx->ndim && nd < OM_MAX_DIMS; d++) shape[nd++] = idx->shape[d];
  for (int d = a + 1; d < x->ndim && nd < OM_MAX_DIMS; d++) shape[nd++] = x->shape[d];
  bool ok = x->ndim + idx->ndim - 1 <= OM_MAX_DIMS ||
            om__fail(OM_ERR_INVALID_ARGUMENT, "%s (Gather): the result has %d dims (at most %d)", who(b), x->ndim + idx->ndim - 1, OM_MAX_DIMS);
  om_tensor *flat = ok ? om_reshape(idx, &flat_n, 1) : NULL, *picked = flat ? om_index_select(x, a, flat) : NULL;
  ok = put(b, 0, picked ? om_reshape(picked, shape, nd) : NULL);
  om_tensor_release(wrapped);
  om_tensor_release(flat);
  om_tensor_release(picked);
  return ok;
}

static bool bind_gather_elements(om_bind *b) {
  int64_t axis;
  int a = 0;
  if (!attr_i(b, "axis", 0, &axis) || !wrap(b, axis, b->in[0]->ndim, &a)) return false;
  om_tensor *idx = from_end(b->in[1], b->in[0]->shape[a]);
  bool ok = put(b, 0, idx ? om_gather(b->in[0], a, idx) : NULL);
  om_tensor_release(idx);
  return ok;
}

/* ScatterElements' and ScatterND's reduction: -1 for none, else the library's reduce mode. */
static bool scatter_reduction(om_bind *b, int *mode) {
  static const char *const names[] = {"add", "mul", "max", "min"};
  const char *red;
  if (!attr_s(b, "reduction", "none", &red)) return false;
  *mode = -1;
  for (int k = 0; k < 4; k++)
    if (!strcmp(red, names[k])) *mode = k;
  if (*mode < 0 && strcmp(red, "none")) return om__fail(OM_ERR_FORMAT, "%s (%s): reduction '%s' (none, add, mul, max or min)", who(b), b->node->op_type, red);
  return true;
}

static bool bind_scatter_elements(om_bind *b) {
  int64_t axis;
  int a = 0, mode;
  if (!attr_i(b, "axis", 0, &axis) || !wrap(b, axis, b->in[0]->ndim, &a) || !scatter_reduction(b, &mode)) return false;
  om_scope s = {0};
  om_tensor *at = om__keep(&s, from_end(b->in[1], b->in[0]->shape[a]));
  if (!at) return om__scope_end(&s), false;
  if (mode >= 0) {
    bool ok = put(b, 0, om_scatter_reduce(b->in[0], a, at, b->in[2], (om_scatter_reduce_mode)mode));
    om__scope_end(&s);
    return ok;
  }
  /* none (each index written once, as ONNX requires): the updates summed into zeros, and a mask
   * of where they went, summed the same way */
  om_tensor *zeros = om__keep(&s, om_scale(b->in[0], 0)), *ones = om__keep(&s, om_add_scalar(om__keep(&s, om_scale(b->in[2], 0)), 1));
  om_tensor *placed = om__keep(&s, om_scatter_add(zeros, a, at, b->in[2]));
  om_tensor *hit = om__keep(&s, om_scatter_add(zeros, a, at, ones));
  om_tensor *mask = om__keep(&s, om_gt(hit, om__keep(&s, om_scalar(0, OM_FLOAT32))));
  bool ok = put(b, 0, mask ? om_where(mask, placed, b->in[0]) : NULL);
  om__scope_end(&s);
  return ok;
}

/* ScatterND with reduction mul, max or min: data [D (k axes)..., R...] as rows [D, R], each
 * index tuple of indices [Q..., k] its row (nd_rows), the updates [Q..., R...] as [Q, R]
 * combined into those rows by scatter_reduce. */
static om_tensor *scatter_nd_rows(om_bind *b, int mode) {
  om_tensor *x = b->in[0], *idx = b->in[1], *u = b->in[2];
  int k = (int)idx->shape[idx->ndim - 1];
  int64_t Q = 1, D = 1, R = 1;
  bool fits = u->ndim == idx->ndim - 1 + x->ndim - k;
  for (int d = 0; d < idx->ndim - 1; d++) Q *= idx->shape[d], fits = fits && u->shape[d] == idx->shape[d];
  for (int d = 0; d < x->ndim; d++) *(d < k ? &D : &R) *= x->shape[d];
  for (int d = k; fits && d < x->ndim; d++) fits = u->shape[idx->ndim - 1 + d - k] == x->shape[d];
  if (!fits) return om__fail(OM_ERR_SHAPE_MISMATCH, "%s (ScatterND): updates must be indices' shape without its last axis, then data's axes after the %d indexed", who(b), k), NULL;
  int64_t rows[2] = {D, R}, qk[3] = {1, Q, k}, q1[2] = {Q, 1}, qr[2] = {Q, R};
  om_scope s = {0};
  om_tensor *x2 = om__keep(&s, om_reshape(x, rows, 2)), *u2 = om__keep(&s, om_reshape(u, qr, 2)), *i3 = om__keep(&s, om_reshape(idx, qk, 3));
  om_tensor *row = i3 ? nd_rows(&s, x, 0, i3) : NULL;
  om_tensor *at = row ? om__keep(&s, om_expand(om__keep(&s, om_reshape(row, q1, 2)), qr, 2)) : NULL;
  om_tensor *y = at && x2 && u2 ? om__keep(&s, om_scatter_reduce(x2, 0, at, u2, (om_scatter_reduce_mode)mode)) : NULL;
  om_tensor *r = y ? om_reshape(y, x->shape, x->ndim) : NULL;
  om__scope_end(&s);
  return r;
}

/* ScatterND: the last axis of indices split into one index tensor per leading axis of data, as
 * index_put takes them (reduction none or add); mul, max and min by rows (scatter_nd_rows) */
static bool bind_scatter_nd(om_bind *b) {
  int mode;
  if (!scatter_reduction(b, &mode)) return false;
  om_tensor *idx = b->in[1], *each[OM_MAX_DIMS] = {0};
  int k = idx->ndim ? (int)idx->shape[idx->ndim - 1] : 0;
  if (k < 1 || k > OM_MAX_DIMS || k > b->in[0]->ndim)
    return om__fail(OM_ERR_FORMAT, "%s (ScatterND): indices must end in an axis of 1 to data's %d dims, not %d", who(b), b->in[0]->ndim, k);
  if (idx->dtype != OM_INT64) return om__fail(OM_ERR_DTYPE_MISMATCH, "%s (ScatterND): indices must be int64, they are %s", who(b), om_dtype_name(idx->dtype));
  if (mode > OM_SCATTER_SUM) return put(b, 0, scatter_nd_rows(b, mode));
  bool ok = true;
  for (int j = 0; j < k && ok; j++) ok = (each[j] = om_select(idx, idx->ndim - 1, j)) != NULL;
  ok = ok && put(b, 0, om_index_put(b->in[0], each, k, b->in[2], mode == OM_SCATTER_SUM));
  om__release_all(each, k);
  return ok;
}

/* ---- reductions, normalisation ---- */

/* The reductions: axes from the attribute or input 1; none means all, or nothing with
 * noop_with_empty_axes. */
typedef enum reduction { R_SUM, R_MEAN, R_MAX, R_MIN, R_SUM_SQUARE, R_L2, R_L1, R_LOG_SUM, R_LOG_SUM_EXP, R_PROD } reduction;

/* The product of x along axis a, kept as size 1: halves multiplied pairwise (the odd one out
 * times a padded 1) until one is left, so log2(size) steps rather than one per element. */
static om_tensor *prod_along(om_tensor *x, int a) {
  int64_t one[OM_MAX_DIMS];
  memcpy(one, x->shape, sizeof(int64_t) * (size_t)x->ndim);
  one[a] = 1;
  if (x->shape[a] == 0) return om_ones(one, x->ndim, x->dtype);
  om_tensor *p = om_tensor_retain(x);
  while (p && p->shape[a] > 1) {
    int64_t n = p->shape[a], h = (n + 1) / 2, pad[2 * OM_MAX_DIMS] = {0};
    pad[2 * (p->ndim - 1 - a) + 1] = 2 * h - n; /* the second half padded with a 1 when n is odd */
    om_tensor *lo = om_slice(p, a, 0, h, 1), *hi = om_slice(p, a, h, n, 1);
    om_tensor *hp = hi ? om_pad(hi, pad, 2 * p->ndim, OM_PAD_CONSTANT, 1) : NULL;
    om_tensor *next = lo && hp ? om_mul(lo, hp) : NULL;
    om_tensor_release(lo);
    om_tensor_release(hi);
    om_tensor_release(hp);
    p = then(p, next);
  }
  return p;
}

/* log(sum(exp(x))) as m + log(sum(exp(x - m))), m the (finite) maximum, keeping dims. */
static om_tensor *log_sum_exp(om_tensor *x, const int64_t *axes, int n) {
  bool empty = om_tensor_numel(x) == 0;
  om_scope s = {0};
  om_tensor *m = empty ? NULL : om__keep(&s, om_amax(x, axes, n, true)), *r = NULL;
  if (m) { /* an infinite maximum (all -inf, or +inf) is not subtracted */
    om_tensor *inf = om__keep(&s, om_scalar(INFINITY, x->dtype)), *zero = om__keep(&s, om_scalar(0, x->dtype));
    m = om__keep(&s, om_where(om__keep(&s, om_eq(om__keep(&s, om_abs(m)), inf)), zero, m));
    om_tensor *e = om__keep(&s, om_exp(om__keep(&s, om_sub(x, m))));
    om_tensor *l = om__keep(&s, om_log(om__keep(&s, om_sum(e, axes, n, true))));
    r = l ? om_add(l, m) : NULL;
  } else if (empty) { /* the sum of nothing: log(0) = -inf */
    r = om_log(om__keep(&s, om_sum(x, axes, n, true)));
  }
  om__scope_end(&s);
  return r;
}

static bool reduce(om_bind *b, reduction how) {
  int64_t axes[OM_MAX_DIMS], keep, noop;
  int n;
  if (!axes_of(b, 1, axes, &n) || !attr_i(b, "keepdims", 1, &keep) || !attr_i(b, "noop_with_empty_axes", 0, &noop)) return false;
  om_tensor *x = b->in[0];
  if (n <= 0 && noop) /* no reduction, but each element's part (as onnxruntime and ONNX's reference) */
    return put(b, 0, how == R_L1 || how == R_L2 ? om_abs(x) : how == R_SUM_SQUARE ? om_mul(x, x) : how == R_LOG_SUM ? om_log(x) : om_tensor_retain(x));
  if (n <= 0) n = 0;
  bool on[OM_MAX_DIMS] = {false}; /* the axes reduced, wrapped (no axes: all) */
  for (int k = 0; k < n; k++) {
    int a = 0;
    if (!wrap(b, axes[k], x->ndim, &a)) return false;
    on[a] = true;
  }
  if (n > 0) /* one axis named twice is reduced once, as ONNX's shape inference and onnxruntime take it */
    for (int a = n = 0; a < x->ndim; a++)
      if (on[a]) axes[n++] = a;
  for (int a = 0; !n && a < x->ndim; a++) on[a] = true;
  if ((how == R_MAX || how == R_MIN) && x->dtype == OM_FLOAT32 && !om_tensor_numel(x)) { /* over nothing: the identity, -inf or inf */
    bool empty = false;
    int64_t shape[OM_MAX_DIMS];
    int nd = 0;
    for (int a = 0; a < x->ndim; a++) {
      bool reduced = on[a];
      empty |= reduced && !x->shape[a];
      if (!reduced || keep) shape[nd++] = reduced ? 1 : x->shape[a];
    }
    if (empty) return put(b, 0, om_full(shape, nd, OM_FLOAT32, how == R_MAX ? -INFINITY : INFINITY));
  }
  om_tensor *r = NULL, *t = NULL;
  switch (how) {
  case R_SUM: r = om_sum(x, axes, n, keep); break;
  case R_MEAN: r = om_mean(x, axes, n, keep); break;
  case R_MAX: r = om_amax(x, axes, n, keep); break;
  case R_MIN: r = om_amin(x, axes, n, keep); break;
  case R_SUM_SQUARE: case R_L2: r = (t = om_mul(x, x)) ? om_sum(t, axes, n, keep) : NULL; break;
  case R_L1: r = (t = om_abs(x)) ? om_sum(t, axes, n, keep) : NULL; break;
  case R_LOG_SUM: r = (t = om_sum(x, axes, n, keep)) ? om_log(t) : NULL; break;
  case R_LOG_SUM_EXP: case R_PROD: { /* computed keeping dims, squeezed after */
    int64_t sq[OM_MAX_DIMS];
    int nsq = 0;
    for (int a = 0; a < x->ndim; a++)
      if (on[a]) sq[nsq++] = a;
    if (how == R_LOG_SUM_EXP) {
      t = log_sum_exp(x, sq, nsq);
    } else {
      t = om_tensor_retain(x);
      for (int k = 0; t && k < nsq; k++) t = then(t, prod_along(t, (int)sq[k]));
    }
    r = t && !keep ? om_squeeze(t, sq, nsq) : om_tensor_retain(t);
    break;
  }
  }
  om_tensor_release(t);
  if (how == R_L2 && r) r = then(r, om_sqrt(r));
  return put(b, 0, r);
}
static bool bind_reduce_sum(om_bind *b) { return reduce(b, R_SUM); }
static bool bind_reduce_mean(om_bind *b) { return reduce(b, R_MEAN); }
/* Runs rule(b, arg) on input 0 cast to `through` and casts output 0 back to `back`: for element types
 * whose answer the wider type gives exactly. */
static bool through_cast(om_bind *b, om_dtype through, om_dtype back, bool (*rule)(om_bind *, int), int arg) {
  om_tensor *x = b->in[0];
  b->in[0] = om_cast(x, through);
  bool ok = b->in[0] && rule(b, arg);
  om_tensor_release(b->in[0]);
  b->in[0] = x;
  return ok && put(b, 0, then(b->out[0], om_cast(b->out[0], back)));
}
static bool reduce_by(om_bind *b, int how) { return reduce(b, (reduction)how); }
/* ReduceMax and ReduceMin; of bool (opset 20) the extreme of 0 and 1 in int64 (Max is any, Min is
 * all), cast back. */
static bool reduce_extreme(om_bind *b, reduction how) {
  return b->in[0]->dtype == OM_BOOL ? through_cast(b, OM_INT64, OM_BOOL, reduce_by, how) : reduce(b, how);
}
static bool bind_reduce_max(om_bind *b) { return reduce_extreme(b, R_MAX); }
static bool bind_reduce_min(om_bind *b) { return reduce_extreme(b, R_MIN); }
static bool bind_reduce_sum_square(om_bind *b) { return reduce(b, R_SUM_SQUARE); }
static bool bind_reduce_l2(om_bind *b) { return reduce(b, R_L2); }
static bool bind_reduce_l1(om_bind *b) { return reduce(b, R_L1); }
static bool bind_reduce_log_sum(om_bind *b) { return reduce(b, R_LOG_SUM); }
static bool bind_reduce_log_sum_exp(om_bind *b) { return reduce(b, R_LOG_SUM_EXP); }
static bool bind_reduce_prod(om_bind *b) { return reduce(b, R_PROD); }

static bool arg(om_bind *b, bool max) {
  int64_t axis, keep, last;
  int a = 0;
  if (!attr_i(b, "axis", 0, &axis) || !attr_i(b, "keepdims", 1, &keep) || !attr_i(b, "select_last_index", 0, &last) ||
      !wrap(b, axis, b->in[0]->ndim, &a))
    return false;
  if (!last) return put(b, 0, max ? om_argmax(b->in[0], a, keep) : om_argmin(b->in[0], a, keep));
  /* the last of equal values: the first in x reversed along the axis, counted back (dim - 1 - i) */
  int64_t dim = b->in[0]->shape[a];
  om_scope s = {0};
  om_tensor *back = om__keep(&s, om_arange((double)dim - 1, -1, -1, OM_INT64));
  om_tensor *rev = back ? om__keep(&s, om_index_select(b->in[0], a, back)) : NULL;
  om_tensor *i = rev ? om__keep(&s, max ? om_argmax(rev, a, keep) : om_argmin(rev, a, keep)) : NULL;
  om_tensor *top = om__keep(&s, om_scalar((double)dim - 1, OM_INT64));
  bool ok = put(b, 0, i && top ? om_sub(top, i) : NULL);
  om__scope_end(&s);
  return ok;
}
static bool bind_argmax(om_bind *b) { return arg(b, true); }
static bool bind_argmin(om_bind *b) { return arg(b, false); }

/* CumSum: reverse sums x flipped along the axis (and flips the sums back); exclusive sums x
 * shifted one place along it behind a zero, so each sum adds the same values in the same order. */
static bool bind_cumsum(om_bind *b) {
  int64_t axis, excl, rev;
  int n = 0, a = 0;
  if (!const_ints(b, 1, &axis, 1, &n) || !attr_i(b, "exclusive", 0, &excl) || !attr_i(b, "reverse", 0, &rev) || !wrap(b, axis, b->in[0]->ndim, &a))
    return false;
  om_scope s = {0};
  om_tensor *x = b->in[0], *back = NULL;
  int64_t size = x->shape[a], one[OM_MAX_DIMS];
  if (rev) x = om__keep(&s, om_index_select(x, a, back = om__keep(&s, om_arange((double)size - 1, -1, -1, OM_INT64))));
  if (excl && x && size > 0) {
    memcpy(one, x->shape, sizeof(int64_t) * (size_t)x->ndim);
    one[a] = 1;
    om_tensor *parts[2] = {om__keep(&s, om_zeros(one, x->ndim, x->dtype)), om__keep(&s, om_slice(x, a, 0, size - 1, 1))};
    x = om__keep(&s, om_cat(parts, 2, a));
  }
  om_tensor *y = om__keep(&s, om_cumsum(x, a));
  bool ok = put(b, 0, rev ? om_index_select(y, a, back) : om_tensor_retain(y));
  om__scope_end(&s);
  return ok;
}

static bool softmax(om_bind *b, bool log) {
  int64_t axis;
  int a = 0;
  if (!attr_i(b, "axis", -1, &axis) || !wrap(b, axis, b->in[0]->ndim, &a)) return false;
  return put(b, 0, log ? om_log_softmax(b->in[0], a) : om_softmax(b->in[0], a));
}
static bool bind_softmax(om_bind *b) { return softmax(b, false); }
static bool bind_log_softmax(om_bind *b) { return softmax(b, true); }

static bool bind_layer_norm(om_bind *b) {
  om_tensor *x = b->in[0];
  int64_t axis;
  double eps;
  int a = 0;
  if (!attr_i(b, "axis", -1, &axis) || !attr_f(b, "epsilon", 1e-5, &eps) || !wrap(b, axis, x->ndim, &a)) return false;
  /* scale and bias of the normalised shape, or broadcast to it (onnxruntime takes numpy's broadcast:
   * a scale of [1]); one that does not broadcast to it is invalid */
  om_tensor *in[3] = {x, NULL, NULL}, *out[3] = {NULL};
  bool ok = true;
  for (int i = 1; ok && i < 3; i++) {
    om_tensor *p = b->node->n_in > i ? b->in[i] : NULL;
    bool same = !p || p->ndim == x->ndim - a, fits = !p || p->ndim <= x->ndim - a;
    for (int d = 0; same && p && d < p->ndim; d++) same = p->shape[d] == x->shape[a + d];
    for (int d = 1; !same && fits && d <= p->ndim; d++) fits = p->shape[p->ndim - d] == 1 || p->shape[p->ndim - d] == x->shape[x->ndim - d];
    char ps[OM_SHAPE_STR_LEN], ns[OM_SHAPE_STR_LEN];
    if (!fits)
      ok = om__fail(OM_ERR_SHAPE_MISMATCH, "%s (LayerNormalization): %s %s does not broadcast to the normalised shape %s", who(b), i == 1 ? "Scale" : "B",
                    om__shape_str(ps, sizeof ps, p->shape, p->ndim), om__shape_str(ns, sizeof ns, x->shape + a, x->ndim - a));
    om_tensor *wide = ok && !same ? om_expand(p, x->shape + a, x->ndim - a) : NULL;
    in[i] = !ok || !p ? NULL : same ? om_tensor_retain(p) : wide ? om_contiguous(wide) : NULL;
    om_tensor_release(wide);
    ok = ok && (in[i] || !p);
  }
  /* the op itself (as om_layer_norm calls it), for ONNX's Mean and InvStdDev outputs too */
  om_attrs at = {.n_i = 2 + x->ndim - a, .i = {1, in[2] != NULL}, .n_f = 1, .f = {eps}};
  memcpy(at.i + 2, x->shape + a, sizeof(int64_t) * (size_t)(x->ndim - a));
  ok = ok && om__apply(OM_OP_layer_norm, in, in[2] ? 3 : 2, &at, out) == 3;
  om__release_all(in + 1, 2);
  for (int j = 0; ok && j < 3; j++) b->out[j] = j < b->node->n_out ? out[j] : (om_tensor_release(out[j]), NULL);
  return ok;
}

static bool bind_instance_norm(om_bind *b) {
  double eps;
  if (!attr_f(b, "epsilon", 1e-5, &eps)) return false;
  if (b->in[0]->ndim < 3) return om__fail(OM_ERR_SHAPE_MISMATCH, "%s (InstanceNormalization): the input needs 3 or more dims", who(b));
  return put(b, 0, om_group_norm(b->in[0], b->in[0]->shape[1], b->in[1], b->in[2], eps));
}

/* GroupNormalization (opset 18): scale and bias per group, spread over each group's channels. */
static bool bind_group_norm(om_bind *b) {
  om_tensor *x = b->in[0];
  int64_t groups;
  double eps;
  if (!attr_i(b, "num_groups", 0, &groups) || !attr_f(b, "epsilon", 1e-5, &eps)) return false;
  if (x->ndim < 3 || groups < 1 || x->shape[1] % groups)
    return om__fail(OM_ERR_SHAPE_MISMATCH, "%s (GroupNormalization): %lld groups for the input's channels", who(b), (long long)groups);
  om_tensor *per[2] = {NULL, NULL};
  bool ok = true;
  for (int i = 0; ok && i < 2; i++) {
    om_tensor *p = b->in[i + 1];
    if (om_tensor_numel(p) == x->shape[1]) { /* per channel already (opset 21) */
      per[i] = om_tensor_retain(p);
    } else if (om_tensor_numel(p) == groups) {
      int64_t g1[2] = {groups, 1}, ge[2] = {groups, x->shape[1] / groups}, c = x->shape[1];
      om_tensor *r = om_reshape(p, g1, 2), *e = r ? om_expand(r, ge, 2) : NULL;
      per[i] = e ? om_reshape(e, &c, 1) : NULL;
      om_tensor_release(r);
      om_tensor_release(e);
    } else {
      ok = om__fail(OM_ERR_SHAPE_MISMATCH, "%s (GroupNormalization): %s has %lld values", who(b), i ? "bias" : "scale", (long long)om_tensor_numel(p));
    }
    ok = ok && per[i];
  }
  ok = ok && put(b, 0, om_group_norm(x, groups, per[0], per[1], eps));
  om__release_all(per, 2);
  return ok;
}

static bool bind_batch_norm(om_bind *b) {
  double eps, momentum;
  int64_t training;
  if (!attr_f(b, "epsilon", 1e-5, &eps) || !attr_f(b, "momentum", 0.9, &momentum) || !attr_i(b, "training_mode", 0, &training)) return false;
  if (!training) return put(b, 0, om_batch_norm(b->in[0], b->in[3], b->in[4], b->in[1], b->in[2], false, 1 - momentum, eps));
  /* training_mode 1: normalised by the batch's statistics per channel (batch_norm in training mode,
   * given no running ones); the running statistics out are the inputs' times momentum plus the
   * batch mean's and biased variance's times 1 - momentum, as ONNX's reference and onnxruntime */
  om_tensor *x = b->in[0];
  if (x->ndim < 2) return om__fail(OM_ERR_SHAPE_MISMATCH, "%s (BatchNormalization): the input needs 2 or more dims [N, C, ...]", who(b));
  if (!put(b, 0, om_batch_norm(x, NULL, NULL, b->in[1], b->in[2], true, 0, eps))) return false;
  int64_t dims[OM_MAX_DIMS], c = x->shape[1];
  int n = 0;
  for (int d = 0; d < x->ndim; d++)
    if (d != 1) dims[n++] = d;
  om_scope s = {0};
  om_tensor *mean = om__keep(&s, om_mean(x, dims, n, true)), *dev = mean ? om__keep(&s, om_sub(x, mean)) : NULL;
  om_tensor *stat[2] = {mean, dev ? om__keep(&s, om_mean(om__keep(&s, om_mul(dev, dev)), dims, n, true)) : NULL};
  bool ok = stat[1] != NULL;
  for (int j = 1; ok && j < b->node->n_out && j < 3; j++) {
    om_tensor *batch = om__keep(&s, om_reshape(stat[j - 1], &c, 1));
    ok = batch && put(b, j, om_add(om__keep(&s, om_scale(b->in[2 + j], momentum)), om__keep(&s, om_scale(batch, 1 - momentum))));
  }
  om__scope_end(&s);
  return ok;
}

/* ---- linear algebra ---- */

static bool bind_matmul(om_bind *b) { return put(b, 0, om_matmul(b->in[0], b->in[1])); }

/* Gemm: alpha op(A) op(B) + beta C. The common form (B transposed, C a bias row) is linear,
 * whose kernel eager runs. */
static bool bind_gemm(om_bind *b) {
  int64_t ta, tb;
  double alpha, beta;
  if (!attr_i(b, "transA", 0, &ta) || !attr_i(b, "transB", 0, &tb) || !attr_f(b, "alpha", 1, &alpha) || !attr_f(b, "beta", 1, &beta)) return false;
  om_tensor *A = b->in[0], *B = b->in[1], *C = b->node->n_in > 2 ? b->in[2] : NULL;
  if (A->ndim != 2 || B->ndim != 2) return om__fail(OM_ERR_SHAPE_MISMATCH, "%s (Gemm): A and B must be matrices", who(b));
  if (!ta && tb && alpha == 1 && beta == 1 && (!C || (C->ndim == 1 && C->shape[0] == B->shape[0])))
    return put(b, 0, om_linear(A, B, C));
  om_scope s = {0};
  om_tensor *a = ta ? om__keep(&s, om_transpose(A, 0, 1)) : A, *bm = tb ? om__keep(&s, om_transpose(B, 0, 1)) : B;
  om_tensor *y = a && bm ? om__keep(&s, om_matmul(a, bm)) : NULL;
  if (y && alpha != 1) y = om__keep(&s, om_scale(y, alpha));
  if (y && C) y = om__keep(&s, om_add(y, beta != 1 ? om__keep(&s, om_scale(C, beta)) : C));
  bool ok = put(b, 0, om_tensor_retain(y));
  om__scope_end(&s);
  return ok;
}

/* ---- convolution and pooling ---- */

/* The spatial attributes of a conv or pool node over ns spatial axes (1 to 3). */
typedef struct spatial {
  int64_t kernel[3], stride[3], dilation[3], pad[3], pad_end[3];
} spatial;

static bool read_spatial(om_bind *b, int ns, const int64_t *in_size, const int64_t *kernel, spatial *sp) {
  int64_t v[6];
  int n;
  for (int d = 0; d < ns; d++) sp->kernel[d] = kernel ? kernel[d] : 1, sp->stride[d] = sp->dilation[d] = 1, sp->pad[d] = sp->pad_end[d] = 0;
  if (!kernel) {
    if (!attr_ints(b, "kernel_shape", v, 3, &n)) return false;
    if (n != ns) return om__fail(OM_ERR_FORMAT, "%s (%s): kernel_shape needs %d values", who(b), b->node->op_type, ns);
    for (int d = 0; d < ns; d++) sp->kernel[d] = v[d];
  }
  const char *names[2] = {"strides", "dilations"};
  for (int k = 0; k < 2; k++) {
    if (!attr_ints(b, names[k], v, 3, &n)) return false;
    if (n >= 0 && n != ns) return om__fail(OM_ERR_FORMAT, "%s (%s): %s needs %d values", who(b), b->node->op_type, names[k], ns);
    for (int d = 0; d < n; d++) (k ? sp->dilation : sp->stride)[d] = v[d];
  }
  const char *autopad;
  if (!attr_s(b, "auto_pad", "NOTSET", &autopad) || !attr_ints(b, "pads", v, 6, &n)) return false;
  if (n >= 0 && n != 2 * ns) return om__fail(OM_ERR_FORMAT, "%s (%s): pads needs %d values", who(b), b->node->op_type, 2 * ns);
  for (int d = 0; d < n / 2; d++) sp->pad[d] = v[d], sp->pad_end[d] = v[ns + d];
  if (!strcmp(autopad, "SAME_UPPER") || !strcmp(autopad, "SAME_LOWER")) {
    for (int d = 0; d < ns; d++) { /* the output is ceil(in / stride) */
      int64_t out = (in_size[d] + sp->stride[d] - 1) / sp->stride[d];
      int64_t total = (out - 1) * sp->stride[d] + (sp->kernel[d] - 1) * sp->dilation[d] + 1 - in_size[d];
      total = total < 0 ? 0 : total;
      sp->pad[d] = autopad[5] == 'U' ? total / 2 : total - total / 2;
      sp->pad_end[d] = total - sp->pad[d];
    }
  } else if (strcmp(autopad, "NOTSET") && strcmp(autopad, "VALID")) {
    return om__fail(OM_ERR_FORMAT, "%s (%s): auto_pad '%s'", who(b), b->node->op_type, autopad);
  }
  for (int d = 0; d < ns; d++)
    if (sp->pad[d] < 0 || sp->pad_end[d] < 0 || sp->stride[d] < 1 || sp->dilation[d] < 1 || sp->kernel[d] < 1)
      return om__fail(OM_ERR_FORMAT, "%s (%s): a negative pad, or a stride, dilation or kernel size below 1", who(b), b->node->op_type);
  for (int d = 0; d < ns; d++) /* so sums and products of them stay far from int64's end */
    if (sp->pad[d] > LIMIT || sp->pad_end[d] > LIMIT || sp->stride[d] > LIMIT || sp->dilation[d] > LIMIT || sp->kernel[d] > LIMIT)
      return om__fail(OM_ERR_FORMAT, "%s (%s): a pad, stride, dilation or kernel size above 2^30", who(b), b->node->op_type);
  return true;
}

/* x padded with zeros where the begin and end pads differ, so the rest is symmetric. */
static om_tensor *even_pads(om_tensor *x, int ns, spatial *sp) {
  int64_t torch[6] = {0};
  bool any = false;
  for (int d = 0; d < ns; d++) {
    int64_t extra_b = sp->pad[d] > sp->pad_end[d] ? sp->pad[d] - sp->pad_end[d] : 0;
    int64_t extra_e = sp->pad_end[d] > sp->pad[d] ? sp->pad_end[d] - sp->pad[d] : 0;
    int p = ns - 1 - d;
    torch[2 * p] = extra_b, torch[2 * p + 1] = extra_e;
    any |= extra_b || extra_e;
    sp->pad[d] = sp->pad_end[d] = sp->pad[d] < sp->pad_end[d] ? sp->pad[d] : sp->pad_end[d];
  }
  return any ? om_pad(x, torch, 2 * ns, OM_PAD_CONSTANT, 0) : om_tensor_retain(x);
}

/* The library's convolution over ns (1 to 3) spatial axes with sp's symmetric pads. */
static om_tensor *conv_nd(om_tensor *x, om_tensor *w, om_tensor *bias, int ns, const spatial *sp, int64_t group) {
  if (ns == 3) return om_conv3d(x, w, bias, sp->stride, sp->pad, sp->dilation, group);
  if (ns == 2) return om_conv2d(x, w, bias, sp->stride, sp->pad, sp->dilation, group);
  return om_conv1d(x, w, bias, sp->stride[0], sp->pad[0], sp->dilation[0], group);
}

/* Conv's and ConvTranspose's kernel_shape, where given, is the weight w's spatial sizes (ns of
 * them): ONNX's shape inference and onnxruntime refuse another, which the kernels would not read. */
static bool kernel_is_weights(om_bind *b, const om_tensor *w, int ns) {
  int64_t kernel[OM_MAX_DIMS];
  int nk;
  if (!attr_ints(b, "kernel_shape", kernel, OM_MAX_DIMS, &nk)) return false;
  for (int d = 0; d < nk; d++)
    if (nk != ns || kernel[d] != w->shape[2 + d])
      return om__fail(OM_ERR_FORMAT, "%s (%s): kernel_shape does not match the weight's shape (dim %d: %lld, the weight has %lld)", who(b), b->node->op_type,
                      d, (long long)kernel[d], (long long)(d < ns ? w->shape[2 + d] : 0));
  return true;
}

static bool bind_conv(om_bind *b) {
  om_tensor *x = b->in[0], *w = b->in[1], *bias = b->node->n_in > 2 ? b->in[2] : NULL;
  int ns = w->ndim - 2;
  int64_t group;
  spatial sp;
  if (ns < 1 || ns > 3) return unsupported(b, "a convolution over other than 1 to 3 spatial axes");
  if (x->ndim != ns + 2) return om__fail(OM_ERR_SHAPE_MISMATCH, "%s (Conv): input of %d dims for a %d-D weight", who(b), x->ndim, w->ndim);
  if (!attr_i(b, "group", 1, &group) || !read_spatial(b, ns, x->shape + 2, w->shape + 2, &sp) || !kernel_is_weights(b, w, ns)) return false;
  om_tensor *xp = even_pads(x, ns, &sp);
  bool ok = put(b, 0, xp ? conv_nd(xp, w, bias, ns, &sp, group) : NULL);
  om_tensor_release(xp);
  return ok;
}

/* (x - x_zero_point) conv (w - w_zero_point) of integers up to 8 bits, exactly, in int64 (a new
 * reference): Conv's rule on float32 chunks of the input channels, each output a sum of at most
 * 256 products below 2^16 (an integer below 2^24, exact in float32 in any order), cast to int64
 * and added. w_zero_point is one value or one per output channel; the pads hold the zero point
 * (0 once subtracted). Groups other than 1 and kernels of more than 256 elements are refused. */
static om_tensor *integer_conv(om_bind *b, om_tensor *x, om_tensor *xzp, om_tensor *w, om_tensor *wzp) {
  int64_t group, kel = 1;
  if (!attr_i(b, "group", 1, &group)) return NULL;
  for (int d = 2; d < w->ndim; d++) kel *= w->shape[d];
  if (group != 1 || kel > 256 || w->ndim < 3) return unsupported(b, "an integer convolution of groups or of a kernel of more than 256 elements"), NULL;
  om_scope s = {0};
  int64_t wshape[OM_MAX_DIMS] = {w->shape[0]};
  for (int d = 1; d < w->ndim; d++) wshape[d] = 1;
  if (wzp && om_tensor_numel(wzp) > 1) wzp = om__keep(&s, om_reshape(wzp, wshape, w->ndim)); /* per output channel */
  om_tensor *xd = om__keep(&s, om_cast(xzp ? om__keep(&s, om_sub(x, xzp)) : x, OM_FLOAT32));
  om_tensor *wd = om__keep(&s, om_cast(wzp ? om__keep(&s, om_sub(w, wzp)) : w, OM_FLOAT32)), *acc = NULL, *keep[4];
  memcpy(keep, b->in, sizeof(om_tensor *) * (size_t)(b->node->n_in < 4 ? b->node->n_in : 4));
  int64_t C = x->ndim > 1 ? x->shape[1] : 0, per = 256 / kel;
  for (int64_t c0 = 0; xd && wd && (c0 == 0 || c0 < C); c0 += per) {
    int64_t c1 = C - c0 < per ? C : c0 + per;
    b->in[0] = om__keep(&s, om_slice(xd, 1, c0, c1, 1)), b->in[1] = om__keep(&s, om_slice(wd, 1, c0, c1, 1));
    for (int i = 2; i < b->node->n_in && i < 4; i++) b->in[i] = NULL; /* Conv's bias: none */
    bool ok = b->in[0] && b->in[1] && bind_conv(b);
    om_tensor *p = ok ? om__keep(&s, om_cast(b->out[0], OM_INT64)) : NULL;
    om_tensor_release(b->out[0]), b->out[0] = NULL;
    acc = p && acc ? om__keep(&s, om_add(acc, p)) : p;
    if (!acc) break;
  }
  memcpy(b->in, keep, sizeof(om_tensor *) * (size_t)(b->node->n_in < 4 ? b->node->n_in : 4));
  om_tensor *y = om_tensor_retain(acc);
  om__scope_end(&s);
  return y;
}

static bool bind_conv_integer(om_bind *b) {
  om_tensor *xzp = b->node->n_in > 2 ? b->in[2] : NULL, *wzp = b->node->n_in > 3 ? b->in[3] : NULL;
  return int8_operands(b, (const int[]){0, 1}, 2) && put(b, 0, integer_conv(b, b->in[0], xzp, b->in[1], wzp));
}

/* QLinearConv: saturate(round((x - x_zp) conv (w - w_zp) + B) (x_scale w_scale / y_scale)) +
 * y_zp), the product exact in int64 (ConvInteger's), the rest in float32 as onnxruntime's
 * requantization; w_scale, w_zp and the INT32 bias B one value or one per output channel. */
static bool bind_qlinear_conv(om_bind *b) {
  double lo = 0, hi = 0;
  if (!int8_operands(b, (const int[]){0, 3}, 2) || !quant_range(b, b->types[b->node->in[7]], &lo, &hi)) return false;
  om_tensor *x = b->in[0], *xs = b->in[1], *xzp = b->in[2], *ws = b->in[4], *wzp = b->in[5], *ys = b->in[6], *yzp = b->in[7];
  om_tensor *bias = b->node->n_in > 8 ? b->in[8] : NULL;
  om_scope s = {0};
  int64_t per_channel[OM_MAX_DIMS] = {1, om_tensor_numel(ws)}; /* [1, M, 1, ...] against the output */
  for (int d = 2; d < x->ndim; d++) per_channel[d] = 1;
  om_tensor *acc = om__keep(&s, integer_conv(b, x, xzp, b->in[3], wzp));
  if (acc && bias) acc = om__keep(&s, om_add(acc, om__keep(&s, om_reshape(bias, per_channel, x->ndim))));
  om_tensor *wsc = om_tensor_numel(ws) > 1 ? om__keep(&s, om_reshape(ws, per_channel, x->ndim)) : ws;
  om_tensor *scale = wsc ? om__keep(&s, om_div(om__keep(&s, om_mul(xs, wsc)), ys)) : NULL;
  om_tensor *v = acc && scale ? om__keep(&s, om_mul(om__keep(&s, om_cast(acc, OM_FLOAT32)), scale)) : NULL;
  om_tensor *zp = om__keep(&s, om_cast(yzp, OM_FLOAT32));
  bool ok = v && zp && put(b, 0, quantize(v, zp, lo, hi));
  om__scope_end(&s);
  return ok;
}

/* ConvTranspose: ONNX crops pads_begin and pads_end off the full result, the library crops its
 * padding at both ends and adds output_padding at the end; a difference of the pads is an
 * output_padding (or a crop when negative). output_shape (or SAME_UPPER and SAME_LOWER's: the
 * input's times the strides) gives the pads: what the full result has past it, split as
 * onnxruntime splits it (the larger half at the end for SAME_UPPER, at the start otherwise), or
 * one more at the end. 1-D is the 2-D one over [N, C, 1, L]; 3-D is conv_transpose3d. */
static bool bind_conv_transpose(om_bind *b) {
  om_tensor *x = b->in[0], *w = b->in[1], *bias = b->node->n_in > 2 ? b->in[2] : NULL;
  int ns = w->ndim - 2;
  int64_t group, op[3] = {0, 0, 0}, v[3], shape[5];
  int n, no;
  spatial sp;
  if (ns < 1 || ns > 3) return unsupported(b, "a transposed convolution over other than 1 to 3 spatial axes");
  if (x->ndim != w->ndim) return om__fail(OM_ERR_SHAPE_MISMATCH, "%s (ConvTranspose): input of %d dims for a %d-D weight", who(b), x->ndim, w->ndim);
  const char *autopad;
  if (!attr_i(b, "group", 1, &group) || !read_spatial(b, ns, x->shape + 2, w->shape + 2, &sp) || !kernel_is_weights(b, w, ns) ||
      !attr_ints(b, "output_padding", v, 3, &n) ||
      !attr_ints(b, "output_shape", shape, 5, &no) || !attr_s(b, "auto_pad", "NOTSET", &autopad))
    return false;
  if ((n >= 0 && n != ns) || (no >= 0 && no != ns && no != ns + 2))
    return om__fail(OM_ERR_FORMAT, "%s (ConvTranspose): output_padding and output_shape need %d values", who(b), ns);
  bool same = !strcmp(autopad, "SAME_UPPER") || !strcmp(autopad, "SAME_LOWER");
  for (int d = 0; d < ns; d++) {
    if (n >= 0) op[d] = v[d];
    if (no < 0 && !same) continue;
    int64_t in = x->shape[2 + d], target = no >= 0 ? shape[no - ns + d] : in * sp.stride[d];
    int64_t total = sp.stride[d] * (in - 1) + op[d] + (sp.kernel[d] - 1) * sp.dilation[d] + 1 - target;
    if (same && total < 0) /* onnxruntime gives the full result then, shorter than ONNX's input times the stride */
      return unsupported(b, "auto_pad SAME where the full result is shorter than the input times the stride");
    if (total < -1 || target < 0) return unsupported(b, "an output_shape more than one past the full result");
    if (total == -1) { /* one more at the end (zeros but the bias) */
      op[d] += 1, sp.pad[d] = sp.pad_end[d] = 0;
      continue;
    }
    sp.pad[d] = !strcmp(autopad, "SAME_UPPER") ? total / 2 : total - total / 2;
    sp.pad_end[d] = total - sp.pad[d];
  }
  if (ns == 1) { /* the 1-D axis becomes the width */
    sp.kernel[1] = sp.kernel[0], sp.stride[1] = sp.stride[0], sp.dilation[1] = sp.dilation[0], sp.pad[1] = sp.pad[0], sp.pad_end[1] = sp.pad_end[0], op[1] = op[0];
    sp.kernel[0] = sp.stride[0] = sp.dilation[0] = 1, sp.pad[0] = sp.pad_end[0] = op[0] = 0;
  }
  int nd = ns == 1 ? 2 : ns; /* the library op's spatial axes */
  int64_t crop[3] = {0, 0, 0};
  for (int d = 0; d < nd; d++) {
    op[d] += sp.pad[d] - sp.pad_end[d];
    int64_t limit = sp.stride[d] > sp.dilation[d] ? sp.stride[d] : sp.dilation[d];
    if (op[d] >= limit) return unsupported(b, "an output padding (with the pads' difference) at least the stride and the dilation");
    if (op[d] < 0) crop[d] = -op[d], op[d] = 0;
  }
  om_tensor *x4 = ns == 1 ? om_unsqueeze(x, 2) : om_tensor_retain(x), *w4 = ns == 1 ? om_unsqueeze(w, 2) : om_tensor_retain(w);
  om_tensor *y = !x4 || !w4 ? NULL
                 : ns == 3  ? om_conv_transpose3d(x4, w4, bias, sp.stride, sp.pad, op, group, sp.dilation)
                            : om_conv_transpose2d(x4, w4, bias, sp.stride, sp.pad, op, group, sp.dilation);
  om__release_all((om_tensor *[]){x4, w4}, 2);
  for (int d = 0; y && d < nd; d++)
    if (crop[d]) y = then(y, om_slice(y, 2 + d, 0, y->shape[2 + d] - crop[d], 1));
  if (y && ns == 1) y = then(y, om_squeeze(y, (int64_t[]){2}, 1));
  return put(b, 0, y);
}

/* Col2Im over 1 to 3 spatial axes: each block's column of C x K values summed into the image
 * (fold, into the image with its pads, which then are cut off: pads may differ at the two ends).
 * The library's fold takes 2 axes: 1 axis is a fold with a second axis of size 1; 3 axes fold the
 * last two (each first-axis kernel offset and block a row of their own), then the first. */
static bool bind_col2im(om_bind *b) {
  om_tensor *x = b->in[0];
  int64_t image[3], block[3], zero[2] = {0, 0};
  int ni, nb;
  spatial sp;
  if (!const_ints(b, 1, image, 3, &ni) || !const_ints(b, 2, block, 3, &nb)) return false;
  if (ni != nb) return om__fail(OM_ERR_FORMAT, "%s (Col2Im): image_shape has %d values, block_shape %d", who(b), ni, nb);
  if (ni < 1) return om__fail(OM_ERR_FORMAT, "%s (Col2Im): image_shape has no values", who(b));
  if (!read_spatial(b, ni, image, block, &sp)) return false;
  int64_t C = 0, K = 1, L = 1, blocks[3], full[3];
  bool none = false;
  for (int d = 0; d < ni; d++) {
    if (image[d] < 1 || image[d] > LIMIT) return om__fail(OM_ERR_FORMAT, "%s (Col2Im): image size %lld (1 to 2^30)", who(b), (long long)image[d]);
    if (block[d] < 1 || block[d] > LIMIT) return om__fail(OM_ERR_FORMAT, "%s (Col2Im): block size %lld (1 to 2^30)", who(b), (long long)block[d]);
    full[d] = image[d] + sp.pad[d] + sp.pad_end[d];
    int64_t span = full[d] - ((block[d] - 1) * sp.dilation[d] + 1);
    blocks[d] = span < 0 ? 0 : span / sp.stride[d] + 1;
    K *= block[d], L *= blocks[d], none |= !blocks[d];
  }
  if (x->ndim == 3 && x->shape[1] > 0 && K <= LIMIT && x->shape[1] % K == 0) C = x->shape[1] / K;
  if (x->ndim != 3 || !C || x->shape[2] != L || none)
    return om__fail(OM_ERR_SHAPE_MISMATCH, "%s (Col2Im): the input must be [N, C x %lld, %lld] for these image, block, pads, strides and dilations", who(b),
                    (long long)K, (long long)L);
  /* fold into the padded image (its sums from zero, in order, as PyTorch's), then the pads cut off */
  int64_t N = x->shape[0];
  om_scope s = {0};
  om_tensor *y = NULL;
  if (ni == 2) {
    y = om_fold(x, full, block, sp.dilation, zero, sp.stride);
  } else if (ni == 1) {
    om_tensor *f = om__keep(&s, om_fold(x, (int64_t[]){full[0], 1}, (int64_t[]){block[0], 1}, (int64_t[]){sp.dilation[0], 1}, zero,
                                        (int64_t[]){sp.stride[0], 1}));
    y = f ? om_squeeze(f, (int64_t[]){3}, 1) : NULL;
  } else {
    /* [N, C, k0, k1 k2, b0, b1 b2] -> [N C k0 b0, k1 k2, b1 b2], folded over axes 1 and 2 */
    int64_t k12 = block[1] * block[2], b12 = blocks[1] * blocks[2], P12 = full[1] * full[2];
    om_tensor *x6 = om__keep(&s, om_reshape(x, (int64_t[]){N, C, block[0], k12, blocks[0], b12}, 6));
    om_tensor *xp = x6 ? om__keep(&s, om_permute(x6, (int64_t[]){0, 1, 2, 4, 3, 5}, 6)) : NULL;
    om_tensor *rows = xp ? om__keep(&s, om_reshape(xp, (int64_t[]){N * C * block[0] * blocks[0], k12, b12}, 3)) : NULL;
    om_tensor *f12 = rows ? om__keep(&s, om_fold(rows, full + 1, block + 1, sp.dilation + 1, zero, sp.stride + 1)) : NULL; /* [., 1, P1, P2] */
    /* [N C, k0, b0, P1 P2] -> [N C, P1 P2 k0, b0], folded over axis 0 (a second axis of 1) */
    om_tensor *g = f12 ? om__keep(&s, om_reshape(f12, (int64_t[]){N * C, block[0], blocks[0], P12}, 4)) : NULL;
    om_tensor *gp = g ? om__keep(&s, om_permute(g, (int64_t[]){0, 3, 1, 2}, 4)) : NULL;
    om_tensor *cols = gp ? om__keep(&s, om_reshape(gp, (int64_t[]){N * C, P12 * block[0], blocks[0]}, 3)) : NULL;
    om_tensor *f0 = cols ? om__keep(&s, om_fold(cols, (int64_t[]){full[0], 1}, (int64_t[]){block[0], 1}, (int64_t[]){sp.dilation[0], 1}, zero,
                                                (int64_t[]){sp.stride[0], 1})) : NULL; /* [N C, P1 P2, P0, 1] */
    om_tensor *y5 = f0 ? om__keep(&s, om_reshape(f0, (int64_t[]){N, C, full[1], full[2], full[0]}, 5)) : NULL;
    y = y5 ? om_permute(y5, (int64_t[]){0, 1, 4, 2, 3}, 5) : NULL;
  }
  om__scope_end(&s);
  for (int d = 0; y && d < ni; d++) y = then(y, om_slice(y, 2 + d, sp.pad[d], sp.pad[d] + image[d], 1));
  return put(b, 0, y);
}

/* floor(a / b) for b > 0. */
static int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

/* ONNX's output length of a pool along axis d of an input of length len (ceil_mode c). */
static int64_t pool_len(const spatial *sp, int d, int64_t len, int64_t c) {
  int64_t st = sp->stride[d], dk = (sp->kernel[d] - 1) * sp->dilation[d] + 1;
  int64_t want = floor_div(len + sp->pad[d] + sp->pad_end[d] - dk + (c ? st - 1 : 0), st) + 1;
  if (c && (want - 1) * st >= len + sp->pad[d]) want--; /* onnxruntime drops a window that starts in the end padding, as PyTorch */
  return want;
}

/* An average with dilations (which PyTorch's pools do not take): the window sums a convolution
 * with ones per channel over x padded with zeros (the pads, and past the end for ceil_mode's
 * last window), divided by the same convolution over ones padded with zeros (the count of input
 * elements each window reads) or, with count_include_pad, by the kernel's size, as ONNX's
 * reference (onnxruntime leaves out what a ceil_mode window reads past the end pads), cut to
 * ONNX's length. */
static om_tensor *dilated_avg_pool(om_tensor *x, int ns, spatial sp, int64_t ceil, int64_t cip) {
  int64_t C = x->shape[1], want[3], torch[6] = {0}, wshape[5] = {C, 1}, size = 1;
  for (int d = 0; d < ns; d++) {
    int64_t len = x->shape[2 + d], dk = (sp.kernel[d] - 1) * sp.dilation[d] + 1;
    want[d] = pool_len(&sp, d, len, ceil);
    int64_t need = (want[d] - 1) * sp.stride[d] + dk - (len + sp.pad[d] + sp.pad_end[d]);
    int t = 2 * (ns - 1 - d);
    torch[t] = sp.pad[d], torch[t + 1] = sp.pad_end[d] + (need > 0 ? need : 0);
    wshape[2 + d] = sp.kernel[d], size *= sp.kernel[d];
    sp.pad[d] = sp.pad_end[d] = 0;
  }
  om_scope s = {0};
  om_tensor *xp = om__keep(&s, om_pad(x, torch, 2 * ns, OM_PAD_CONSTANT, 0)), *w = om__keep(&s, om_ones(wshape, ns + 2, OM_FLOAT32)), *n;
  if (cip) {
    n = om__keep(&s, om_scalar((double)size, OM_FLOAT32));
  } else {
    om_tensor *ones = om__keep(&s, om_ones(x->shape, x->ndim, OM_FLOAT32)), *count = ones ? om__keep(&s, om_pad(ones, torch, 2 * ns, OM_PAD_CONSTANT, 0)) : NULL;
    n = count && w ? om__keep(&s, conv_nd(count, w, NULL, ns, &sp, C)) : NULL;
  }
  om_tensor *sum = xp && w ? om__keep(&s, conv_nd(xp, w, NULL, ns, &sp, C)) : NULL;
  om_tensor *y = sum && n ? om__keep(&s, om_div(sum, n)) : NULL;
  for (int d = 0; y && d < ns; d++)
    if (y->shape[2 + d] > want[d]) y = om__keep(&s, om_slice(y, 2 + d, 0, want[d], 1));
  y = om_tensor_retain(y);
  om__scope_end(&s);
  return y;
}

/* A pool of x over its ns spatial axes (a new reference). A 1-D pool is the 2-D one over
 * [N, C, 1, L]; 3-D is max_pool3d / avg_pool3d. */
static om_tensor *pool_nd(om_tensor *x, int ns, spatial sp, int64_t ceil, int64_t cip, bool max) {
  bool dilated = false;
  for (int d = 0; d < ns; d++) dilated |= sp.dilation[d] != 1;
  if (!max && dilated) return dilated_avg_pool(x, ns, sp, ceil, cip);
  /* Begin and end pads that differ (how the tracer writes PyTorch's ceil_mode): the library's
   * pool with the begin pads and the ceil_mode that gives ONNX's size has ONNX's windows, clipped
   * to the input (a max ignores padding, an average without count_include_pad counts what it
   * reads). An average that counts the padding reads zeros padded in first. So do pads above
   * half the kernel, which the library's pools refuse, and pads that differ where no ceil_mode
   * gives ONNX's size (SAME_UPPER's): -inf for a max, zeros for an average, which then divides
   * by the share of real elements in each window (the same average of ones) unless it counts
   * the padding. */
  bool asym = false, big = false;
  for (int d = 0; d < ns; d++) {
    asym |= sp.pad[d] != sp.pad_end[d];
    big |= 2 * (sp.pad[d] > sp.pad_end[d] ? sp.pad[d] : sp.pad_end[d]) > sp.kernel[d];
  }
  int modes = 3; /* bit c: the library's ceil_mode c gives ONNX's size on every axis */
  for (int d = 0; asym && d < ns; d++) {
    int64_t want = pool_len(&sp, d, x->shape[2 + d], ceil);
    spatial sym = sp;
    sym.pad_end[d] = sym.pad[d];
    for (int c = 0; c < 2; c++) /* PyTorch's size at ceil_mode c */
      if (pool_len(&sym, d, x->shape[2 + d], c) != want) modes &= ~(1 << c);
  }
  om_tensor *xp = NULL, *share = NULL; /* share: ones padded as x, when the average divides by it */
  int64_t want[3] = {0};
  bool cut = false; /* the pooled result cut to want on its spatial axes */
  if ((asym && !max && cip) || big || (asym && !modes)) {
    int64_t torch[6] = {0};
    for (int d = 0; d < ns; d++) want[d] = pool_len(&sp, d, x->shape[2 + d], ceil);
    for (int d = 0; d < ns; d++) torch[2 * (ns - 1 - d)] = sp.pad[d], torch[2 * (ns - 1 - d) + 1] = sp.pad_end[d], sp.pad[d] = sp.pad_end[d] = 0;
    /* with ceil_mode, over the padded input (no pads) the library's ceil_mode has ONNX's windows (the same
     * count rounded up) and may keep one more, one that starts in what were the end pads, which onnxruntime
     * drops: cut to ONNX's size below. A window it clips at the padded end divides by what it reads there,
     * as onnxruntime's count_include_pad counts up to the end pads and no further */
    for (int d = 0; ceil && d < ns; d++) cut |= pool_len(&sp, d, x->shape[2 + d] + torch[2 * (ns - 1 - d)] + torch[2 * (ns - 1 - d) + 1], 1) != want[d];
    if (!(xp = om_pad(x, torch, 2 * ns, OM_PAD_CONSTANT, max ? -INFINITY : 0))) return NULL;
    if (!max && !cip) {
      om_tensor *ones = om_ones(x->shape, x->ndim, OM_FLOAT32);
      share = ones ? om_pad(ones, torch, 2 * ns, OM_PAD_CONSTANT, 0) : NULL;
      om_tensor_release(ones);
      if (!share) return om_tensor_release(xp), NULL;
    }
    x = xp, asym = false;
  }
  if (asym) ceil = modes & (1 << ceil) ? ceil : modes & 1 ? 0 : 1;
  if (ns == 1) { /* the 1-D axis becomes the width */
    sp.kernel[1] = sp.kernel[0], sp.stride[1] = sp.stride[0], sp.dilation[1] = sp.dilation[0], sp.pad[1] = sp.pad[0];
    sp.kernel[0] = sp.stride[0] = sp.dilation[0] = 1, sp.pad[0] = 0;
  }
  om_tensor *y = NULL;
  for (int k = 0; k < (share ? 2 : 1); k++) { /* x pooled, then the share of real elements it divides by */
    om_tensor *in = k ? share : x, *x4 = ns == 1 ? om_unsqueeze(in, 2) : om_tensor_retain(in);
    om_tensor *p = !x4                ? NULL
                   : max && ns == 3   ? om_max_pool3d(x4, sp.kernel, sp.stride, sp.pad, sp.dilation, ceil)
                   : max              ? om_max_pool2d(x4, sp.kernel, sp.stride, sp.pad, sp.dilation, ceil)
                   : ns == 3          ? om_avg_pool3d(x4, sp.kernel, sp.stride, sp.pad, ceil, cip)
                                      : om_avg_pool2d(x4, sp.kernel, sp.stride, sp.pad, ceil, cip);
    om_tensor_release(x4);
    y = k ? (p && y ? then(y, om_div(y, p)) : then(y, NULL)) : p;
    if (k) om_tensor_release(p);
  }
  om_tensor_release(xp);
  om_tensor_release(share);
  if (y && ns == 1) y = then(y, om_squeeze(y, (int64_t[]){2}, 1));
  for (int d = 0; y && cut && d < ns; d++) y = then(y, om_slice(y, 2 + d, 0, want[d], 1));
  return y;
}

/* MaxPool's Indices (1 to 3 spatial axes; storage_order 1 over 1 or 2): per output, the flat
 * position in x (row-major; with storage_order 1 the image's columns first, as onnxruntime) of
 * its window's first maximum in row-major window order: over the window's taps, last to first,
 * the position of a tap that equals the pooled y (x padded with -inf, the positions with -1, as
 * far as the windows reach). 1-D runs as 2-D over a height of 1. */
static om_tensor *max_pool_indices(om_bind *b, om_tensor *x, om_tensor *y, int ns, spatial sp, int64_t storage) {
  if (ns == 3 && storage) return unsupported(b, "the Indices output with storage_order 1 over 3 spatial axes"), NULL;
  if (ns == 1) { /* the 1-D axis becomes the width */
    sp.kernel[1] = sp.kernel[0], sp.stride[1] = sp.stride[0], sp.dilation[1] = sp.dilation[0], sp.pad[1] = sp.pad[0];
    sp.kernel[0] = sp.stride[0] = sp.dilation[0] = 1, sp.pad[0] = 0;
  }
  const int nd = ns == 3 ? 3 : 2;
  om_scope s = {0};
  om_tensor *x4 = om__keep(&s, ns == 1 ? om_unsqueeze(x, 2) : om_tensor_retain(x)), *y4 = om__keep(&s, ns == 1 ? om_unsqueeze(y, 2) : om_tensor_retain(y));
  if (!x4 || !y4) return om__scope_end(&s), NULL;
  int64_t N = x4->shape[0], C = x4->shape[1], plane = 1, taps = 1, out[3], pads[6], unit[5] = {N, C, 1, 1, 1};
  for (int d = 0; d < nd; d++) {
    int64_t reach = (y4->shape[2 + d] - 1) * sp.stride[d] + (sp.kernel[d] - 1) * sp.dilation[d] + 1 - sp.pad[d] - x4->shape[2 + d];
    pads[2 * (nd - 1 - d)] = sp.pad[d], pads[2 * (nd - 1 - d) + 1] = reach > 0 ? reach : 0;
    out[d] = y4->shape[2 + d], plane *= x4->shape[2 + d], taps *= sp.kernel[d];
  }
  int64_t H = x4->shape[2], W = x4->shape[3];
  om_tensor *base = om__keep(&s, om_reshape(om__keep(&s, om_arange(0, (double)(N * C * plane), (double)plane, OM_INT64)), unit, 2 + nd));
  om_tensor *inner = om__keep(&s, om_reshape(om__keep(&s, om_arange(0, (double)plane, 1, OM_INT64)), storage ? (int64_t[]){W, H} : x4->shape + 2, nd));
  om_tensor *pos = inner ? om__keep(&s, om_add(base, storage ? om__keep(&s, om_transpose(inner, 0, 1)) : inner)) : NULL;
  om_tensor *xp = om__keep(&s, om_pad(x4, pads, 2 * nd, OM_PAD_CONSTANT, -INFINITY)), *pp = pos ? om__keep(&s, om_pad(pos, pads, 2 * nd, OM_PAD_CONSTANT, -1)) : NULL;
  om_tensor *idx = NULL;
  for (int64_t tap = taps - 1; xp && pp && tap >= 0; tap--) {
    om_scope t = {0}; /* this tap's */
    om_tensor *at[2] = {xp, pp};
    for (int k = 0; k < 2; k++)
      for (int64_t d = nd - 1, rest = tap; d >= 0 && at[k]; rest /= sp.kernel[d], d--) { /* the tap's offset along d: a mixed radix digit */
        int64_t from = rest % sp.kernel[d] * sp.dilation[d];
        at[k] = om__keep(&t, om_slice(at[k], 2 + (int)d, from, from + (out[d] - 1) * sp.stride[d] + 1, sp.stride[d]));
      }
    om_tensor *hit = at[0] && at[1] ? om__keep(&t, om_eq(at[0], y4)) : NULL;
    om_tensor *next = !hit ? NULL : idx ? om_where(hit, at[1], idx) : om_tensor_retain(at[1]);
    om__scope_end(&t);
    idx = then(idx, next);
    if (!idx) break;
  }
  om_tensor *r = idx ? (ns == 1 ? om_squeeze(idx, (int64_t[]){2}, 1) : om_contiguous(idx)) : NULL;
  om_tensor_release(idx);
  om__scope_end(&s);
  return r;
}

static bool pool(om_bind *b, bool max) {
  om_tensor *x = b->in[0];
  int ns = x->ndim - 2;
  int64_t ceil, cip, storage;
  spatial sp;
  if (ns < 1 || ns > 3) return unsupported(b, "pooling over other than 1 to 3 spatial axes");
  if (!read_spatial(b, ns, x->shape + 2, NULL, &sp) || !attr_i(b, "ceil_mode", 0, &ceil) || !attr_i(b, "count_include_pad", 0, &cip) ||
      !attr_i(b, "storage_order", 0, &storage))
    return false;
  /* A window larger than the padded input: ONNX's length is 0 and onnxruntime gives an empty
   * result, where the library's pools (as PyTorch's) refuse it; so does the rule, empty of both. */
  int64_t shape[OM_MAX_DIMS] = {x->shape[0], x->shape[1]};
  bool empty = false;
  for (int d = 0; d < ns; d++) empty |= (shape[2 + d] = pool_len(&sp, d, x->shape[2 + d], ceil)) == 0;
  if (empty)
    return put(b, 0, om_zeros(shape, x->ndim, x->dtype)) && (!max || b->node->n_out < 2 || put(b, 1, om_zeros(shape, x->ndim, OM_INT64)));
  if (!put(b, 0, pool_nd(x, ns, sp, ceil, cip, max))) return false;
  return !max || b->node->n_out < 2 || put(b, 1, max_pool_indices(b, x, b->out[0], ns, sp, storage));
}
static bool pool_by(om_bind *b, int max) { return pool(b, max); }
/* MaxPool of 8- and 16-bit integers (held in int64) goes through float32, which holds them exactly. */
static bool bind_max_pool(om_bind *b) {
  if (b->in[0]->dtype != OM_INT64) return pool(b, true);
  int t = b->types[b->node->in[0]];
  if (t != 2 && t != 3 && t != 4 && t != 5) return om__fail(OM_ERR_UNSUPPORTED, "%s (MaxPool): input of ONNX type %d is not supported (float, 8- and 16-bit integers)", who(b), t);
  return through_cast(b, OM_FLOAT32, OM_INT64, pool_by, true);
}
static bool bind_average_pool(om_bind *b) { return pool(b, false); }

static bool global_pool(om_bind *b, bool max) {
  om_tensor *x = b->in[0];
  if (x->ndim < 3) return om__fail(OM_ERR_SHAPE_MISMATCH, "%s (%s): the input needs 3 or more dims", who(b), b->node->op_type);
  int64_t one[2] = {1, 1}, dims[OM_MAX_DIMS];
  for (int d = 2; d < x->ndim; d++) dims[d - 2] = d;
  if (!max && x->ndim == 4) return put(b, 0, om_adaptive_avg_pool2d(x, one)); /* the kernel eager's 1x1 pool runs */
  return put(b, 0, max ? om_amax(x, dims, x->ndim - 2, true) : om_mean(x, dims, x->ndim - 2, true));
}
static bool bind_global_average_pool(om_bind *b) { return global_pool(b, false); }
static bool bind_global_max_pool(om_bind *b) { return global_pool(b, true); }

/* ---- Resize ---- */

/* Resize's attributes, read once; mode 0 nearest, 1 linear, 2 cubic. */
typedef struct resize_cfg {
  int mode;
  const char *coord, *nearest;
  double cubic_a, extrapolation;
  int64_t exclude_outside, antialias;
} resize_cfg;

/* The input coordinate of output element o (ONNX's coordinate_transformation_mode), in float as
 * onnxruntime computes it (its nearest pixels are the ones a float coordinate floors to); s is the
 * scale, r0 and r1 the roi of tf_crop_and_resize. */
static float resize_coord(const resize_cfg *c, int64_t o, int64_t in, int64_t out, float s, float r0, float r1) {
  float fo = (float)o, fin = (float)in, fout = (float)out;
  if (!strcmp(c->coord, "asymmetric")) return fo / s;
  if (!strcmp(c->coord, "align_corners")) return out == 1 ? 0.0f : fo * (fin - 1) / (fout - 1);
  if (!strcmp(c->coord, "pytorch_half_pixel")) return out > 1 ? (fo + 0.5f) / s - 0.5f : 0.0f;
  if (!strcmp(c->coord, "tf_half_pixel_for_nn")) return (fo + 0.5f) / s;
  if (!strcmp(c->coord, "tf_crop_and_resize"))
    return out > 1 ? r0 * (fin - 1) + fo * (r1 - r0) * (fin - 1) / (fout - 1) : 0.5f * (r0 + r1) * (fin - 1);
  if (!strcmp(c->coord, "half_pixel_symmetric")) { /* the output centred on the input's centre */
    float adjustment = fout / (s * fin), offset = fin / 2 * (1 - adjustment);
    return offset + (fo + 0.5f) / s - 0.5f;
  }
  return (fo + 0.5f) / s - 0.5f; /* half_pixel */
}

/* The nearest input element to coordinate v by nearest_mode (before clamping to the input). */
static int64_t resize_nearest(const resize_cfg *c, float v) {
  double f = floor((double)v), frac = (double)v - f;
  if (!strcmp(c->nearest, "floor")) return (int64_t)f;
  if (!strcmp(c->nearest, "ceil")) return (int64_t)ceil((double)v);
  if (!strcmp(c->nearest, "round_prefer_ceil")) return (int64_t)f + (frac >= 0.5);
  return (int64_t)f + (frac > 0.5); /* round_prefer_floor */
}

/* Keys' cubic kernel with a = cubic_coeff_a at distance x. */
static double keys(double a, double x) {
  x = fabs(x);
  return x <= 1 ? ((a + 2) * x - (a + 3)) * x * x + 1 : x < 2 ? ((a * x - 5 * a) * x + 8 * a) * x - 4 * a : 0;
}

/* The taps of linear (2) or cubic (4, Keys' kernel) around the fraction r in (0, 1] past the tap
 * before the coordinate, from 1 - taps / 2 taps before it: ONNX's reference. With antialias the
 * kernel is stretched by 1 / aa (aa the scale, at most 1: a downscale's filter covers more input),
 * over more taps, and its weights are divided by their sum. */
static void resize_coeffs(const resize_cfg *c, double r, double aa, int64_t taps, double *w) {
  if (!c->antialias && c->mode == 1) {
    w[0] = 1 - r, w[1] = r;
    return;
  }
  double sum = 0;
  for (int64_t t = 0; t < taps; t++) {
    double x = ((double)(1 - taps / 2 + t) - r) * (c->antialias ? aa : 1);
    w[t] = c->mode == 1 ? (fabs(x) < 1 ? 1 - fabs(x) : 0) : keys(c->cubic_a, x);
    sum += w[t];
  }
  for (int64_t t = 0; c->antialias && t < taps; t++) w[t] /= sum;
}

/* x resized along axis d to out elements: the sum over the taps of x's elements at the taps'
 * indices (clamped to the axis: the reference's edge padding) times their weights, plus
 * extrapolation_value where a tf_crop_and_resize coordinate falls outside the input. Indices
 * and weights are constants of the plan, so this is index_select, mul and add per tap. */
static om_tensor *resize_axis(om_bind *b, const resize_cfg *c, om_tensor *x, int d, int64_t out, float s, float r0, float r1) {
  int64_t in = x->shape[d], n = out;
  /* antialias: the kernel (half width 1 for linear, 2 for cubic) stretched by 1 / aa covers
   * 2 ceil'(half / aa) taps, the reference's count */
  double aa = s < 1 ? (double)s : 1, half = c->mode == 1 ? 1 : 2;
  int64_t taps = c->mode == 0 ? 1 : c->antialias ? (int64_t)(-2 * floor(-half / aa)) : (int64_t)(2 * half);
  if (in == 0 && out > 0) return om__fail(OM_ERR_SHAPE_MISMATCH, "%s (Resize): an empty axis %d cannot be resized to %lld", who(b), d, (long long)out), NULL;
  if ((double)taps * (double)out > (double)LIMIT)
    return om__fail(OM_ERR_OUT_OF_MEMORY, "%s (Resize): axis %d needs %lld taps for each of %lld elements (more than 2^30 in all)", who(b), d, (long long)taps, (long long)out), NULL;
  int64_t *idx = om__alloc(sizeof(int64_t) * (size_t)(taps * out + taps), "Resize");
  float *w = idx ? om__alloc_floats(taps * out + 1, "Resize") : NULL, *outside = w ? om__alloc_floats(out + 1, "Resize") : NULL;
  double *wt = outside ? om__alloc(sizeof(double) * (size_t)taps, "Resize") : NULL;
  int64_t *at = idx + taps * out; /* one output's taps */
  bool any_outside = false;
  for (int64_t o = 0; wt && o < out; o++) {
    float v = resize_coord(c, o, in, out, s, r0, r1);
    for (int64_t t = 0; t < taps; t++) wt[t] = t == 0, at[t] = 0;
    outside[o] = !strcmp(c->coord, "tf_crop_and_resize") && (v < 0 || v > (float)(in - 1));
    any_outside |= outside[o] != 0;
    if (outside[o]) {
      wt[0] = 0;
    } else if (c->mode == 0) {
      at[0] = resize_nearest(c, v);
    } else { /* the taps around v: from the one before it (a whole v is the second tap, weight 1) */
      double base = ceil((double)v) - 1, sum = 0;
      resize_coeffs(c, (double)v - base, aa, taps, wt);
      for (int64_t t = 0; t < taps; t++) {
        at[t] = (int64_t)base + 1 - taps / 2 + t;
        if (c->exclude_outside && (at[t] < 0 || at[t] >= in)) wt[t] = 0;
        sum += wt[t];
      }
      for (int64_t t = 0; c->exclude_outside && t < taps; t++) wt[t] /= sum;
    }
    for (int64_t t = 0; t < taps; t++) {
      idx[t * out + o] = at[t] < 0 ? 0 : at[t] >= in ? in - 1 : at[t];
      w[t * out + o] = (float)wt[t];
    }
  }
  int64_t wshape[OM_MAX_DIMS];
  for (int k = 0; k < x->ndim; k++) wshape[k] = k == d ? out : 1;
  om_tensor *y = NULL;
  bool ok = wt != NULL;
  for (int64_t t = 0; ok && t < taps; t++) {
    om_scope sc = {0};
    om_tensor *it = om__keep(&sc, om_from_data(idx + t * out, &n, 1, OM_INT64));
    om_tensor *g = it ? om__keep(&sc, om_index_select(x, d, it)) : NULL;
    om_tensor *wg = g && (taps > 1 || any_outside) ? om__keep(&sc, om_from_data(w + t * out, wshape, x->ndim, OM_FLOAT32)) : NULL;
    om_tensor *term = wg ? om__keep(&sc, om_mul(g, wg)) : g;
    ok = term != NULL;
    if (ok) y = y ? then(y, om_add(y, term)) : om_tensor_retain(term);
    ok = ok && y;
    om__scope_end(&sc);
  }
  if (ok && any_outside && c->extrapolation != 0) {
    for (int64_t o = 0; o < out; o++) outside[o] *= (float)c->extrapolation;
    om_tensor *e = om_from_data(outside, wshape, x->ndim, OM_FLOAT32);
    y = e ? then(y, om_add(y, e)) : then(y, NULL);
    om_tensor_release(e);
  }
  free(idx);
  free(w);
  free(outside);
  free(wt);
  return y;
}

/* Resize over any axes, by scales or sizes (keep_aspect_ratio_policy), every mode, coordinate
 * transformation and nearest_mode: one resize_axis per axis whose length or coordinates change.
 * What the library's interpolate computes (bilinear, and bicubic with a = -0.75, with half_pixel,
 * pytorch_half_pixel or align_corners; nearest with asymmetric and floor; over the last two axes
 * of a 4-D input) runs as interpolate, the same kernel as eager. antialias widens linear's and cubic's taps when
 * downscaling (resize_coeffs). */
static bool bind_resize(om_bind *b) {
  om_tensor *x = b->in[0];
  resize_cfg c;
  const char *mode, *policy;
  int64_t axes[OM_MAX_DIMS];
  int na;
  if (!attr_s(b, "mode", "nearest", &mode) || !attr_s(b, "coordinate_transformation_mode", "half_pixel", &c.coord) ||
      !attr_s(b, "nearest_mode", "round_prefer_floor", &c.nearest) || !attr_ints(b, "axes", axes, OM_MAX_DIMS, &na) ||
      !attr_i(b, "antialias", 0, &c.antialias) || !attr_i(b, "exclude_outside", 0, &c.exclude_outside) ||
      !attr_f(b, "cubic_coeff_a", -0.75, &c.cubic_a) || !attr_f(b, "extrapolation_value", 0, &c.extrapolation) ||
      !attr_s(b, "keep_aspect_ratio_policy", "stretch", &policy))
    return false;
  c.mode = !strcmp(mode, "nearest") ? 0 : !strcmp(mode, "linear") ? 1 : !strcmp(mode, "cubic") ? 2 : -1;
  static const char *const coords[] = {"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners", "asymmetric", "tf_half_pixel_for_nn", "tf_crop_and_resize"};
  static const char *const nearests[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
  bool coord_ok = false, nearest_ok = false;
  for (int k = 0; k < 7; k++) coord_ok |= !strcmp(c.coord, coords[k]);
  for (int k = 0; k < 4; k++) nearest_ok |= !strcmp(c.nearest, nearests[k]);
  if (c.mode < 0) return om__fail(OM_ERR_FORMAT, "%s (Resize): mode '%s' (nearest, linear or cubic)", who(b), mode);
  if (!coord_ok) return om__fail(OM_ERR_FORMAT, "%s (Resize): coordinate_transformation_mode '%s'", who(b), c.coord);
  if (!nearest_ok) return om__fail(OM_ERR_FORMAT, "%s (Resize): nearest_mode '%s'", who(b), c.nearest);
  int keep = !strcmp(policy, "stretch") ? 0 : !strcmp(policy, "not_larger") ? 1 : !strcmp(policy, "not_smaller") ? 2 : -1;
  if (keep < 0) return om__fail(OM_ERR_FORMAT, "%s (Resize): keep_aspect_ratio_policy '%s' (stretch, not_larger or not_smaller)", who(b), policy);
  if (c.antialias != 0 && c.antialias != 1) return om__fail(OM_ERR_FORMAT, "%s (Resize): antialias %lld (0 or 1)", who(b), (long long)c.antialias);
  int nd = x->ndim, ax[OM_MAX_DIMS];
  if (na < 0)
    for (na = 0; na < nd; na++) axes[na] = na;
  for (int k = 0; k < na; k++) {
    if (!wrap(b, axes[k], nd, &ax[k])) return false;
    for (int j = 0; j < k; j++)
      if (ax[j] == ax[k]) return om__fail(OM_ERR_FORMAT, "%s (Resize): axis %d is listed twice", who(b), ax[k]);
  }
  bool has_scales = b->node->n_in > 2 && b->in[2] && om_tensor_numel(b->in[2]);
  bool has_sizes = b->node->n_in > 3 && b->in[3] && om_tensor_numel(b->in[3]);
  if (has_scales == has_sizes) return om__fail(OM_ERR_FORMAT, "%s (Resize): give exactly one of scales and sizes", who(b));
  float scale[OM_MAX_DIMS], roi[2 * OM_MAX_DIMS];
  int64_t size[OM_MAX_DIMS];
  int n;
  if (has_scales) {
    if (!known(b, 2)) return false;
    if (om_tensor_numel(b->in[2]) != na) return om__fail(OM_ERR_FORMAT, "%s (Resize): %lld scales for %d axes", who(b), (long long)om_tensor_numel(b->in[2]), na);
    for (int k = 0; k < na; k++) {
      scale[k] = (float)om__get_flat(b->in[2], k);
      double len = floor((double)scale[k] * (double)x->shape[ax[k]]);
      if (!(scale[k] > 0) || len > (double)LIMIT) return om__fail(OM_ERR_FORMAT, "%s (Resize): scale %g for an axis of %lld", who(b), (double)scale[k], (long long)x->shape[ax[k]]);
      size[k] = (int64_t)len;
      /* align_corners divides by length_resized - 1: ONNX's reference takes in times the scale,
       * onnxruntime the output's length (floored); where they differ, the same model has two answers */
      if (!strcmp(c.coord, "align_corners") && (double)scale[k] * (double)x->shape[ax[k]] - len > 1e-5 * len)
        return unsupported(b, "align_corners with a scale whose length is not whole (ONNX's reference and onnxruntime divide by different lengths)");
    }
  } else {
    if (!const_ints(b, 3, size, OM_MAX_DIMS, &n)) return false;
    if (n != na) return om__fail(OM_ERR_FORMAT, "%s (Resize): %d sizes for %d axes", who(b), n, na);
    float pick = 0;
    for (int k = 0; k < na; k++) {
      if (size[k] < 0 || size[k] > LIMIT) return om__fail(OM_ERR_FORMAT, "%s (Resize): size %lld (0 to 2^30)", who(b), (long long)size[k]);
      float sk = x->shape[ax[k]] ? (float)size[k] / (float)x->shape[ax[k]] : 1.0f;
      pick = k == 0 ? sk : keep == 1 ? (sk < pick ? sk : pick) : (sk > pick ? sk : pick);
      scale[k] = sk;
    }
    for (int k = 0; keep && k < na; k++) { /* one scale for every axis, the sizes it gives */
      double len = floor((double)pick * (double)x->shape[ax[k]] + 0.5);
      if (len > (double)LIMIT) return om__fail(OM_ERR_FORMAT, "%s (Resize): keep_aspect_ratio_policy gives axis %d a size above 2^30", who(b), ax[k]);
      scale[k] = pick, size[k] = (int64_t)len;
    }
  }
  bool crop = !strcmp(c.coord, "tf_crop_and_resize");
  for (int k = 0; k < na; k++) roi[k] = 0, roi[na + k] = 1;
  if (crop && b->node->n_in > 1 && b->in[1] && om_tensor_numel(b->in[1])) {
    if (!known(b, 1)) return false;
    if (om_tensor_numel(b->in[1]) != 2 * na) return om__fail(OM_ERR_FORMAT, "%s (Resize): a roi of %lld values for %d axes", who(b), (long long)om_tensor_numel(b->in[1]), na);
    for (int k = 0; k < 2 * na; k++) roi[k] = (float)om__get_flat(b->in[1], k);
  }
  /* the library's interpolate where it computes the same (its pytorch_half_pixel samples an
   * output of length 1 at the centre, ONNX at the first element) */
  bool align = !strcmp(c.coord, "align_corners"), pth = !strcmp(c.coord, "pytorch_half_pixel");
  bool sampled = c.mode == 1 || (c.mode == 2 && c.cubic_a == -0.75); /* PyTorch's bilinear and bicubic */
  bool fits = nd == 4 && !c.exclude_outside && !keep && !(c.antialias && c.mode) &&
              (sampled ? !strcmp(c.coord, "half_pixel") || pth || align : c.mode == 0 && !strcmp(c.coord, "asymmetric") && !strcmp(c.nearest, "floor"));
  om_interpolate_mode im = c.mode == 2 ? OM_INTERPOLATE_BICUBIC : c.mode == 1 ? OM_INTERPOLATE_BILINEAR : OM_INTERPOLATE_NEAREST;
  int64_t full[OM_MAX_DIMS];
  double full_scale[OM_MAX_DIMS];
  for (int d = 0; d < nd; d++) full[d] = x->shape[d], full_scale[d] = 1;
  for (int k = 0; k < na; k++) full[ax[k]] = size[k], full_scale[ax[k]] = scale[k];
  fits = fits && full[0] == x->shape[0] && full[1] == x->shape[1] && full_scale[0] == 1 && full_scale[1] == 1;
  for (int d = 2; fits && d < 4; d++) fits = !pth || full[d] != 1 || x->shape[d] == 1;
  /* to the input's own size by scales of 1, the identity, as onnxruntime's Resize (a copy, so -0,
   * inf and NaN come through, where weights of 1 and 0 would not): a trace writes such a Resize
   * where the model leaves its interpolate out at some sizes (MobileViT, docs/symbolic-axes.md) */
  bool same = !crop;
  for (int k = 0; same && k < na; k++) same = size[k] == x->shape[ax[k]] && scale[k] == 1;
  if (same) return put(b, 0, om_tensor_retain(x));
  if (fits) return put(b, 0, has_scales ? om_interpolate(x, NULL, full_scale + 2, im, align) : om_interpolate(x, full + 2, NULL, im, align));
  om_tensor *y = om_tensor_retain(x);
  for (int k = 0; y && k < na; k++)
    if (crop || size[k] != x->shape[ax[k]] || scale[k] != 1) y = then(y, resize_axis(b, &c, y, ax[k], size[k], scale[k], roi[k], roi[na + k]));
  return put(b, 0, y);
}

/* ---- recurrent layers ---- */

/* Rows of w [D, gates * H, ...] of direction d reordered from ONNX's gate order to PyTorch's:
 * PyTorch's gate g is ONNX's gate from[g]. */
static om_tensor *torch_gates(om_tensor *w, int d, int gates, int64_t H, const int *from) {
  om_tensor *wd = om_select(w, 0, d), *parts[4] = {NULL};
  bool ok = wd != NULL;
  for (int g = 0; ok && g < gates; g++) ok = (parts[g] = om_slice(wd, 0, from[g] * H, (from[g] + 1) * H, 1)) != NULL;
  om_tensor *r = ok ? om_cat(parts, gates, 0) : NULL;
  om__release_all(parts, 4);
  om_tensor_release(wd);
  return r;
}

static bool recur_by_steps(om_bind *b, int gates);

/* LSTM and GRU (ONNX's equations with the default activations; GRU with linear_before_reset 1,
 * PyTorch's) as one lstm_layer / gru_layer per direction; with what those layers do not take
 * (GRU's linear_before_reset 0 or clip, sequence_lens, LSTM's peepholes) step by step
 * (recur_by_steps). */
static bool recurrent(om_bind *b, bool lstm) {
  static const int lstm_from[4] = {0, 2, 3, 1}; /* PyTorch i, f, g, o from ONNX i, o, f, c */
  static const int gru_from[3] = {1, 0, 2};     /* PyTorch r, z, n from ONNX z, r, h */
  const int gates = lstm ? 4 : 3, *from = lstm ? lstm_from : gru_from;
  int64_t H, layout, lbr, input_forget;
  double clip;
  const char *dir;
  if (!attr_i(b, "hidden_size", -1, &H) || !attr_i(b, "layout", 0, &layout) || !attr_s(b, "direction", "forward", &dir) ||
      !attr_i(b, "linear_before_reset", 0, &lbr) || !attr_i(b, "input_forget", 0, &input_forget) || !attr_f(b, "clip", 0, &clip))
    return false;
  bool lens = b->node->n_in > 4 && b->in[4], peep = lstm && b->node->n_in > 7 && b->in[7];
  /* not PyTorch's GRU, or what PyTorch's layers do not take: ONNX's equations step by step */
  if (!lstm && (!lbr || lens || attr(b, "clip"))) return recur_by_steps(b, 3);
  if (attr(b, "activations") || attr(b, "activation_alpha") || attr(b, "activation_beta")) return unsupported(b, "activations other than the defaults");
  if (attr(b, "clip")) return unsupported(b, "clip");
  if (input_forget) return unsupported(b, "input_forget 1");
  if (lens || peep) return recur_by_steps(b, 4);
  bool bi = !strcmp(dir, "bidirectional"), rev = !strcmp(dir, "reverse");
  if (!bi && !rev && strcmp(dir, "forward")) return om__fail(OM_ERR_FORMAT, "%s (%s): direction '%s'", who(b), b->node->op_type, dir);
  om_tensor *x = b->in[0], *W = b->in[1], *R = b->in[2], *B = b->node->n_in > 3 ? b->in[3] : NULL;
  om_tensor *h0 = b->node->n_in > 5 ? b->in[5] : NULL, *c0 = lstm && b->node->n_in > 6 ? b->in[6] : NULL;
  int D = bi ? 2 : 1;
  if (x->ndim != 3 || W->ndim != 3 || R->ndim != 3 || W->shape[0] != D || H < 1 || W->shape[1] != gates * H)
    return om__fail(OM_ERR_SHAPE_MISMATCH, "%s (%s): X, W and R do not fit hidden_size %lld and direction %s", who(b), b->node->op_type, (long long)H, dir);
  om_scope s = {0}; /* what lives to the end: the inputs transposed, each direction's results */
  if (layout) { /* batch first: [B, T, I] and states [B, D, H] */
    x = om__keep(&s, om_transpose(x, 0, 1));
    if (h0) h0 = om__keep(&s, om_transpose(h0, 0, 1));
    if (c0) c0 = om__keep(&s, om_transpose(c0, 0, 1));
  }
  om_tensor *ys[2] = {NULL}, *hs[2] = {NULL}, *cs[2] = {NULL};
  bool ok = x && (!h0 || h0) && (!c0 || c0);
  for (int d = 0; ok && d < D; d++) {
    om_scope t = {0}; /* this direction's operands */
    om_tensor *in[7];
    int n = 0;
    in[n++] = x;
    ok = (in[n++] = om__keep(&t, torch_gates(W, d, gates, H, from))) && (in[n++] = om__keep(&t, torch_gates(R, d, gates, H, from)));
    if (ok && B) { /* B [D, 2 gates H]: Wb then Rb */
      int64_t two[2] = {2, gates * H};
      om_tensor *bd = om__keep(&t, om_select(B, 0, d)), *b2 = bd ? om__keep(&t, om_reshape(bd, two, 2)) : NULL;
      for (int k = 0; ok && k < 2; k++) ok = b2 && (in[n++] = om__keep(&t, torch_gates(b2, k, gates, H, from))) != NULL;
    }
    for (int k = 0; ok && (h0 || c0) && k < (lstm ? 2 : 1); k++) { /* the library takes both initial states or neither */
      om_tensor *st = k ? c0 : h0;
      int64_t shape[2] = {x->shape[1], H};
      ok = (in[n++] = om__keep(&t, st ? om_select(st, 0, d) : om_zeros(shape, 2, OM_FLOAT32))) != NULL;
    }
    om_attrs at = {.n_i = 2, .i = {rev || d == 1, B != NULL}};
    om_tensor *o[2] = {NULL, NULL};
    ok = ok && om__apply(lstm ? OM_OP_lstm_layer : OM_OP_gru_layer, in, n, &at, o) == 2;
    om__scope_end(&t);
    if (!ok) break;
    ys[d] = om__keep(&s, om_unsqueeze(o[0], 1)); /* [T, 1, N, H] */
    hs[d] = om__keep(&s, lstm ? om_slice(o[1], 0, 0, 1, 1) : om_unsqueeze(o[1], 0)); /* [1, N, H] */
    if (lstm) cs[d] = om__keep(&s, om_slice(o[1], 0, 1, 2, 1));
    om__release_all(o, 2);
    ok = ys[d] && hs[d] && (!lstm || cs[d]);
  }
  om_tensor *y = ok ? (D == 2 ? om__keep(&s, om_cat(ys, 2, 1)) : ys[0]) : NULL;
  om_tensor *h = ok ? (D == 2 ? om__keep(&s, om_cat(hs, 2, 0)) : hs[0]) : NULL;
  om_tensor *c = ok && lstm ? (D == 2 ? om__keep(&s, om_cat(cs, 2, 0)) : cs[0]) : NULL;
  if (ok && layout) { /* back to batch first: Y [B, T, D, H], states [B, D, H] */
    int64_t perm[4] = {2, 0, 1, 3};
    y = om__keep(&s, om_permute(y, perm, 4));
    h = om__keep(&s, om_transpose(h, 0, 1));
    if (lstm) c = om__keep(&s, om_transpose(c, 0, 1));
  }
  ok = ok && y && h && (!lstm || c) && put(b, 0, om_tensor_retain(y));
  if (ok && b->node->n_out > 1) ok = put(b, 1, om_tensor_retain(h));
  if (ok && lstm && b->node->n_out > 2) ok = put(b, 2, om_tensor_retain(c));
  om__scope_end(&s);
  return ok;
}
static bool bind_lstm(om_bind *b) { return recurrent(b, true); }
static bool bind_gru(om_bind *b) { return recurrent(b, false); }

/* ---- the rest of ONNX's ops: compositions of the library's ops ---- */

static bool bind_cast_like(om_bind *b) { return cast_to(b, b->in[0], b->in[1]->dtype, b->types[b->node->in[1]]); }
UNARY(is_nan, om_ne(x, x))

/* IsInf: x == +inf (detect_positive), x == -inf (detect_negative). */
static bool bind_is_inf(om_bind *b) {
  int64_t pos, neg;
  if (!attr_i(b, "detect_positive", 1, &pos) || !attr_i(b, "detect_negative", 1, &neg)) return false;
  om_tensor *x = b->in[0];
  if (!pos && !neg) return put(b, 0, om_zeros(x->shape, x->ndim, OM_BOOL));
  om_scope s = {0};
  om_tensor *p = pos ? om__keep(&s, om_eq(x, om__keep(&s, om_scalar(INFINITY, x->dtype)))) : NULL;
  om_tensor *n = neg ? om__keep(&s, om_eq(x, om__keep(&s, om_scalar(-INFINITY, x->dtype)))) : NULL;
  bool ok = put(b, 0, pos && neg ? (p && n ? om_logical_or(p, n) : NULL) : om_tensor_retain(pos ? p : n));
  om__scope_end(&s);
  return ok;
}

static bool bind_round(om_bind *b) { return put(b, 0, om_round(b->in[0])); }

/* x > alpha ? x : 0 */
static om_tensor *thresholded_relu(om_tensor *x, double alpha) {
  om_tensor *a = om_scalar(alpha, x->dtype), *z = om_scalar(0, x->dtype), *m = a ? om_gt(x, a) : NULL;
  om_tensor *y = m && z ? om_where(m, x, z) : NULL;
  om_tensor_release(a);
  om_tensor_release(z);
  om_tensor_release(m);
  return y;
}
/* x / (1 + |x|) */
static om_tensor *softsign(om_tensor *x) {
  om_tensor *a = om_abs(x), *d = a ? om_add_scalar(a, 1) : NULL, *y = d ? om_div(x, d) : NULL;
  om_tensor_release(a);
  om_tensor_release(d);
  return y;
}
static bool bind_selu(om_bind *b) { /* gamma elu(x, alpha) */
  double alpha, gamma;
  if (!attr_f(b, "alpha", 1.67326319217681884765625, &alpha) || !attr_f(b, "gamma", 1.05070102214813232421875, &gamma)) return false;
  om_tensor *e = om_elu(b->in[0], alpha);
  bool ok = put(b, 0, e ? om_scale(e, gamma) : NULL);
  om_tensor_release(e);
  return ok;
}
static bool bind_celu(om_bind *b) { /* x > 0 ? x : alpha (exp(x / alpha) - 1), the latter alpha elu(x / alpha) */
  double alpha;
  if (!attr_f(b, "alpha", 1.0, &alpha)) return false;
  om_scope s = {0};
  om_tensor *x = b->in[0], *a = om__keep(&s, om_scalar(alpha, x->dtype)), *zero = om__keep(&s, om_scalar(0, x->dtype));
  om_tensor *e = a ? om__keep(&s, om_elu(om__keep(&s, om_div(x, a)), 1)) : NULL;
  om_tensor *neg = e ? om__keep(&s, om_mul(e, a)) : NULL;
  bool ok = put(b, 0, neg && zero ? om_where(om__keep(&s, om_gt(x, zero)), x, neg) : NULL);
  om__scope_end(&s);
  return ok;
}
static bool bind_shrink(om_bind *b) { /* x < -lambd ? x + bias : x > lambd ? x - bias : 0 */
  double bias, lambd;
  if (!attr_f(b, "bias", 0, &bias) || !attr_f(b, "lambd", 0.5, &lambd)) return false;
  om_scope s = {0};
  om_tensor *x = b->in[0], *lo = om__keep(&s, om_scalar(-lambd, x->dtype)), *hi = om__keep(&s, om_scalar(lambd, x->dtype));
  om_tensor *zero = om__keep(&s, om_scalar(0, x->dtype));
  om_tensor *up = hi ? om__keep(&s, om_where(om__keep(&s, om_gt(x, hi)), om__keep(&s, om_add_scalar(x, -bias)), zero)) : NULL;
  bool ok = put(b, 0, up && lo ? om_where(om__keep(&s, om_lt(x, lo)), om__keep(&s, om_add_scalar(x, bias)), up) : NULL);
  om__scope_end(&s);
  return ok;
}
static bool bind_thresholded_relu(om_bind *b) {
  double alpha;
  return attr_f(b, "alpha", 1.0, &alpha) && put(b, 0, thresholded_relu(b->in[0], alpha));
}
static bool bind_softsign(om_bind *b) { return put(b, 0, softsign(b->in[0])); }
static bool bind_mish(om_bind *b) { return put(b, 0, om_mish(b->in[0])); }

/* Hardmax: 1 at the first maximum along axis, 0 elsewhere (the argmax against an arange). */
static bool bind_hardmax(om_bind *b) {
  om_tensor *x = b->in[0];
  int64_t axis, shape[OM_MAX_DIMS];
  int a = 0;
  if (!attr_i(b, "axis", -1, &axis) || !wrap(b, axis, x->ndim, &a)) return false;
  if (om_tensor_numel(x) == 0) return put(b, 0, om_zeros(x->shape, x->ndim, x->dtype));
  for (int d = 0; d < x->ndim - a; d++) shape[d] = d ? 1 : x->shape[a]; /* [n, 1, ...] against the axes from a on */
  om_scope s = {0};
  om_tensor *at = om__keep(&s, om_argmax(x, a, true)), *ar = om__keep(&s, om_arange(0, (double)x->shape[a], 1, OM_INT64));
  om_tensor *col = ar ? om__keep(&s, om_reshape(ar, shape, x->ndim - a)) : NULL;
  om_tensor *hit = at && col ? om__keep(&s, om_eq(col, at)) : NULL;
  bool ok = put(b, 0, hit ? om_cast(hit, x->dtype) : NULL);
  om__scope_end(&s);
  return ok;
}

/* EyeLike: ones where column - row = k, of the input's shape (a constant of the plan). */
static bool bind_eye_like(om_bind *b) {
  const om_tensor *x = b->in[0];
  int64_t k, dt, r1[2] = {x->ndim == 2 ? x->shape[0] : 0, 1};
  om_dtype d = x->dtype;
  if (!attr_i(b, "k", 0, &k) || !attr_i(b, "dtype", -1, &dt) || (dt >= 0 && !onnx_dtype(b, "dtype", dt, &d))) return false;
  if (x->ndim != 2) return om__fail(OM_ERR_SHAPE_MISMATCH, "%s (EyeLike): the input must have 2 dims, it has %d", who(b), x->ndim);
  om_scope s = {0};
  om_tensor *rows = om__keep(&s, om_arange(0, (double)x->shape[0], 1, OM_INT64)), *cols = om__keep(&s, om_arange(0, (double)x->shape[1], 1, OM_INT64));
  om_tensor *r = rows ? om__keep(&s, om_reshape(rows, r1, 2)) : NULL;
  om_tensor *diff = r && cols ? om__keep(&s, om_sub(cols, r)) : NULL, *kk = om__keep(&s, om_scalar((double)k, OM_INT64));
  bool ok = put(b, 0, diff && kk ? om_cast(om__keep(&s, om_eq(diff, kk)), d) : NULL);
  om__scope_end(&s);
  return ok;
}

/* The window functions: a0 - a1 cos(2 pi n / N) + a2 cos(4 pi n / N) over n < size, N = size
 * (periodic) or size - 1 (symmetric). */
static bool window(om_bind *b, double a0, double a1, double a2) {
  int64_t size, periodic, dt;
  int n;
  om_dtype d;
  if (!attr_i(b, "periodic", 1, &periodic) || !attr_i(b, "output_datatype", 1, &dt) || !onnx_dtype(b, "output_datatype", dt, &d) ||
      !const_ints(b, 0, &size, 1, &n))
    return false;
  if (n != 1 || size < 0 || size > LIMIT) return om__fail(OM_ERR_FORMAT, "%s (%s): size must be one value from 0 to 2^30", who(b), b->node->op_type);
  if (d == OM_FLOAT64) return unsupported(b, "output_datatype DOUBLE (a window computed in float32)"); /* cos has no double kernel */
  double N = (double)(periodic ? size : size - 1), w = 2 * 3.14159265358979323846 / N;
  om_scope s = {0};
  om_tensor *k = om__keep(&s, om_arange(0, (double)size, 1, OM_FLOAT32));
  om_tensor *c1 = k ? om__keep(&s, om_scale(om__keep(&s, om_cos(om__keep(&s, om_scale(k, w)))), -a1)) : NULL;
  om_tensor *y = c1 ? om__keep(&s, om_add_scalar(c1, a0)) : NULL;
  if (y && a2) y = om__keep(&s, om_add(y, om__keep(&s, om_scale(om__keep(&s, om_cos(om__keep(&s, om_scale(k, 2 * w)))), a2))));
  bool ok = put(b, 0, y ? om_cast(y, d) : NULL);
  om__scope_end(&s);
  return ok;
}
static bool bind_hann_window(om_bind *b) { return window(b, 0.5, 0.5, 0); }
static bool bind_hamming_window(om_bind *b) { return window(b, 25.0 / 46, 21.0 / 46, 0); }
static bool bind_blackman_window(om_bind *b) { return window(b, 0.42, 0.5, 0.08); }

/* LRN: x / (bias + alpha / size * the sum of squares over channels c - floor((size-1)/2) to
 * c + ceil((size-1)/2))^beta; the sum an average pool of kernel [size, 1] over [N, 1, C, rest]. */
static bool bind_lrn(om_bind *b) {
  om_tensor *x = b->in[0];
  double alpha, beta, bias;
  int64_t size;
  if (!attr_f(b, "alpha", 1e-4, &alpha) || !attr_f(b, "beta", 0.75, &beta) || !attr_f(b, "bias", 1.0, &bias) || !attr_i(b, "size", 0, &size))
    return false;
  if (size < 1 || size > LIMIT) return om__fail(OM_ERR_FORMAT, "%s (LRN): size %lld (needs 1 to 2^30)", who(b), (long long)size);
  if (x->ndim < 3) return om__fail(OM_ERR_SHAPE_MISMATCH, "%s (LRN): the input needs 3 or more dims", who(b));
  int64_t rest = 1, shape4[4], pads[4] = {0, 0, (size - 1) / 2, size / 2}, kernel[2] = {size, 1}, one[2] = {1, 1}, zero[2] = {0, 0};
  for (int d = 2; d < x->ndim; d++) rest *= x->shape[d];
  shape4[0] = x->shape[0], shape4[1] = 1, shape4[2] = x->shape[1], shape4[3] = rest;
  om_scope s = {0};
  om_tensor *sq = om__keep(&s, om_mul(x, x)), *sq4 = sq ? om__keep(&s, om_reshape(sq, shape4, 4)) : NULL;
  om_tensor *padded = sq4 ? om__keep(&s, om_pad(sq4, pads, 4, OM_PAD_CONSTANT, 0)) : NULL;
  om_tensor *avg = padded ? om__keep(&s, om_avg_pool2d(padded, kernel, one, zero, false, true)) : NULL;
  om_tensor *base = avg ? om__keep(&s, om_add_scalar(om__keep(&s, om_scale(avg, alpha)), bias)) : NULL;
  om_tensor *den = base ? om__keep(&s, om_pow(base, om__keep(&s, om_scalar(beta, OM_FLOAT32)))) : NULL;
  om_tensor *den_x = den ? om__keep(&s, om_reshape(den, x->shape, x->ndim)) : NULL;
  bool ok = put(b, 0, den_x ? om_div(x, den_x) : NULL);
  om__scope_end(&s);
  return ok;
}

/* The p-norm (1 or 2) of x over axes, kept as size 1. */
static om_tensor *lp_norm(const om_bind *b, om_tensor *x, int64_t p, const int64_t *axes, int n) {
  if (p != 1 && p != 2) return om__fail(OM_ERR_UNSUPPORTED, "%s (%s): p %lld is not supported (1 or 2)", who(b), b->node->op_type, (long long)p), NULL;
  om_tensor *t = p == 1 ? om_abs(x) : om_mul(x, x), *sum = t ? om_sum(t, axes, n, true) : NULL;
  om_tensor_release(t);
  return p == 1 || !sum ? sum : then(sum, om_sqrt(sum));
}
static bool bind_lp_normalization(om_bind *b) {
  int64_t axis, p;
  int a = 0;
  if (!attr_i(b, "axis", -1, &axis) || !attr_i(b, "p", 2, &p) || !wrap(b, axis, b->in[0]->ndim, &a)) return false;
  int64_t ax = a;
  om_tensor *norm = lp_norm(b, b->in[0], p, &ax, 1);
  bool ok = put(b, 0, norm ? om_div(b->in[0], norm) : NULL);
  om_tensor_release(norm);
  return ok;
}
static bool bind_global_lp_pool(om_bind *b) {
  om_tensor *x = b->in[0];
  int64_t p, dims[OM_MAX_DIMS];
  if (!attr_i(b, "p", 2, &p)) return false;
  if (x->ndim < 3) return om__fail(OM_ERR_SHAPE_MISMATCH, "%s (GlobalLpPool): the input needs 3 or more dims", who(b));
  for (int d = 2; d < x->ndim; d++) dims[d - 2] = d;
  return put(b, 0, lp_norm(b, x, p, dims, x->ndim - 2));
}

/* LpPool: the p-norm of each window, its sum a convolution with ones per channel over |x|^p
 * (x x for p 2; zeros padded first, also at the end for ceil_mode's last window), then the
 * p-th root. */
static bool bind_lp_pool(om_bind *b) {
  om_tensor *x = b->in[0];
  int ns = x->ndim - 2;
  int64_t p, ceil;
  spatial sp;
  if (ns < 1 || ns > 3) return unsupported(b, "pooling over other than 1 to 3 spatial axes");
  if (!attr_i(b, "p", 2, &p) || !attr_i(b, "ceil_mode", 0, &ceil) || !read_spatial(b, ns, x->shape + 2, NULL, &sp)) return false;
  if (p < 1 || p > 64) return om__fail(OM_ERR_FORMAT, "%s (LpPool): p %lld (1 to 64)", who(b), (long long)p);
  int64_t torch[6] = {0}, wshape[5] = {x->shape[1], 1};
  for (int d = 0; d < ns; d++) {
    int64_t st = sp.stride[d], span = x->shape[2 + d] + sp.pad[d] + sp.pad_end[d] - ((sp.kernel[d] - 1) * sp.dilation[d] + 1);
    if (ceil && span >= 0 && span % st) sp.pad_end[d] += st - span % st; /* the last window, partly past the end */
    torch[2 * (ns - 1 - d)] = sp.pad[d], torch[2 * (ns - 1 - d) + 1] = sp.pad_end[d];
    wshape[2 + d] = sp.kernel[d];
    sp.pad[d] = sp.pad_end[d] = 0;
  }
  om_scope s = {0};
  om_tensor *ax = om__keep(&s, om_abs(x)), *pw = p == 1 ? ax : om__keep(&s, om_scalar((double)p, OM_FLOAT32));
  om_tensor *t = p == 2 ? om__keep(&s, om_mul(x, x)) : p == 1 || !ax || !pw ? ax : om__keep(&s, om_pow(ax, pw));
  om_tensor *tp = t ? om__keep(&s, om_pad(t, torch, 2 * ns, OM_PAD_CONSTANT, 0)) : NULL;
  om_tensor *w = om__keep(&s, om_ones(wshape, ns + 2, OM_FLOAT32)), *sum = tp && w ? om__keep(&s, conv_nd(tp, w, NULL, ns, &sp, x->shape[1])) : NULL;
  om_tensor *root = p > 2 ? om__keep(&s, om_scalar(1.0 / (double)p, OM_FLOAT32)) : NULL;
  bool ok = put(b, 0, !sum ? NULL : p == 1 ? om_tensor_retain(sum) : p == 2 ? om_sqrt(sum) : root ? om_pow(sum, root) : NULL);
  om__scope_end(&s);
  return ok;
}

/* MeanVarianceNormalization, ONNX's function: (x - E[x]) / (sqrt(E[x^2] - E[x]^2) + 1e-9). */
static bool bind_mvn(om_bind *b) {
  om_tensor *x = b->in[0];
  int64_t axes[OM_MAX_DIMS] = {0, 2, 3};
  int n;
  if (!attr_ints(b, "axes", axes, OM_MAX_DIMS, &n)) return false;
  if (n < 0) n = 3;
  om_scope s = {0};
  om_tensor *m = om__keep(&s, om_mean(x, axes, n, true)), *sq = om__keep(&s, om_mul(x, x));
  om_tensor *m2 = sq ? om__keep(&s, om_mean(sq, axes, n, true)) : NULL, *mm = m ? om__keep(&s, om_mul(m, m)) : NULL;
  om_tensor *sd = m2 && mm ? om__keep(&s, om_sqrt(om__keep(&s, om_sub(m2, mm)))) : NULL;
  om_tensor *den = sd ? om__keep(&s, om_add_scalar(sd, 1e-9)) : NULL;
  bool ok = put(b, 0, den ? om_div(om__keep(&s, om_sub(x, m)), den) : NULL);
  om__scope_end(&s);
  return ok;
}

/* GatherND: data [batch..., D (k axes)..., R...] and indices [batch..., Q..., k]: each index
 * tuple becomes a row of data [B D, R] (nd_rows), picked with one index_select. */
static bool bind_gather_nd(om_bind *b) {
  om_tensor *x = b->in[0], *idx = b->in[1];
  int64_t bd;
  if (!attr_i(b, "batch_dims", 0, &bd)) return false;
  if (idx->dtype != OM_INT64) return om__fail(OM_ERR_DTYPE_MISMATCH, "%s (GatherND): indices must be int64, they are %s", who(b), om_dtype_name(idx->dtype));
  int64_t k = idx->ndim ? idx->shape[idx->ndim - 1] : -1;
  if (bd < 0 || idx->ndim < 1 || bd >= idx->ndim || bd >= x->ndim || k > x->ndim - bd)
    return om__fail(OM_ERR_SHAPE_MISMATCH, "%s (GatherND): indices of %d dims (the last %lld) for data of %d dims with batch_dims %lld", who(b),
                    idx->ndim, (long long)k, x->ndim, (long long)bd);
  int64_t B = 1, D = 1, R = 1, Q = 1, out[OM_MAX_DIMS];
  int no = 0;
  for (int d = 0; d < bd; d++) {
    if (x->shape[d] != idx->shape[d])
      return om__fail(OM_ERR_SHAPE_MISMATCH, "%s (GatherND): batch dim %d is %lld in data, %lld in indices", who(b), d, (long long)x->shape[d], (long long)idx->shape[d]);
    B *= x->shape[d];
  }
  for (int d = 0; d < idx->ndim - 1; d++) out[no++] = idx->shape[d], Q *= d >= bd ? idx->shape[d] : 1;
  for (int64_t j = 0; j < k; j++) D *= x->shape[bd + j];
  for (int d = (int)(bd + k); d < x->ndim; d++) {
    if (no == OM_MAX_DIMS) return om__fail(OM_ERR_INVALID_ARGUMENT, "%s (GatherND): the result has more than %d dims", who(b), OM_MAX_DIMS);
    out[no++] = x->shape[d], R *= x->shape[d];
  }
  int64_t rows[2] = {B * D, R}, bqk[3] = {B, Q, k}, flat = B * Q;
  om_scope s = {0};
  om_tensor *x2 = om__keep(&s, om_reshape(x, rows, 2)), *i3 = om__keep(&s, om_reshape(idx, bqk, 3));
  om_tensor *row = i3 ? nd_rows(&s, x, (int)bd, i3) : NULL;
  om_tensor *picked = row && x2 ? om__keep(&s, om_index_select(x2, 0, om__keep(&s, om_reshape(row, &flat, 1)))) : NULL;
  bool ok = put(b, 0, picked ? om_reshape(picked, out, no) : NULL);
  om__scope_end(&s);
  return ok;
}

/* NegativeLogLikelihoodLoss on log-probabilities x [N, C, d...] and targets t [N, d...]:
 * -x[n, t, d...] times weight[t] (1 without weights; 0 where t is ignore_index), reduced by
 * none, sum, or mean (the sum over the weights' sum). */
static om_tensor *nll(const om_bind *b, om_tensor *x, om_tensor *t, om_tensor *weight) {
  int64_t ignore, has_ignore = attr(b, "ignore_index") != NULL;
  const char *red;
  if (!attr_i(b, "ignore_index", 0, &ignore) || !attr_s(b, "reduction", "mean", &red)) return NULL;
  bool none = !strcmp(red, "none"), sum = !strcmp(red, "sum"), mean = !strcmp(red, "mean");
  if (!none && !sum && !mean) return om__fail(OM_ERR_FORMAT, "%s (%s): reduction '%s' (none, sum or mean)", who(b), b->node->op_type, red), NULL;
  if (t->dtype != OM_INT64) return om__fail(OM_ERR_DTYPE_MISMATCH, "%s (%s): the target must be int64, it is %s", who(b), b->node->op_type, om_dtype_name(t->dtype)), NULL;
  bool fits = x->ndim >= 2 && t->ndim == x->ndim - 1 && t->shape[0] == x->shape[0];
  for (int d = 2; fits && d < x->ndim; d++) fits = t->shape[d - 1] == x->shape[d];
  if (!fits) return om__fail(OM_ERR_SHAPE_MISMATCH, "%s (%s): the target's shape does not fit the input's [N, C, d...]", who(b), b->node->op_type), NULL;
  om_scope s = {0};
  om_tensor *ign = has_ignore ? om__keep(&s, om_eq(t, om__keep(&s, om_scalar((double)ignore, OM_INT64)))) : NULL;
  om_tensor *ts = ign ? om__keep(&s, om_where(ign, om__keep(&s, om_scalar(0, OM_INT64)), t)) : t; /* an ignored target picks class 0, weighted 0 */
  om_tensor *picked = ts ? om__keep(&s, om_squeeze(om__keep(&s, om_gather(x, 1, om__keep(&s, om_unsqueeze(ts, 1)))), (int64_t[]){1}, 1)) : NULL;
  om_tensor *w = NULL;
  if (weight) {
    int64_t flat = -1;
    om_tensor *wf = ts ? om__keep(&s, om_index_select(weight, 0, om__keep(&s, om_reshape(ts, &flat, 1)))) : NULL;
    w = wf ? om__keep(&s, om_reshape(wf, t->shape, t->ndim)) : NULL;
  } else if (ign || mean) {
    w = om__keep(&s, om_ones(t->shape, t->ndim, OM_FLOAT32));
  }
  if (ign && w) w = om__keep(&s, om_where(ign, om__keep(&s, om_scalar(0, OM_FLOAT32)), w));
  om_tensor *loss = picked ? om__keep(&s, om_neg(picked)) : NULL;
  if (loss && w) loss = om__keep(&s, om_mul(loss, w));
  om_tensor *r = NULL;
  if (loss && none) r = om_tensor_retain(loss);
  else if (loss && sum) r = om_sum(loss, NULL, 0, false);
  else if (loss && w) r = om_div(om__keep(&s, om_sum(loss, NULL, 0, false)), om__keep(&s, om_sum(w, NULL, 0, false)));
  om__scope_end(&s);
  return r;
}
static bool bind_nll_loss(om_bind *b) {
  om_tensor *weight = b->node->n_in > 2 ? b->in[2] : NULL;
  return put(b, 0, nll(b, b->in[0], b->in[1], weight));
}
/* SoftmaxCrossEntropyLoss: the NLL of log_softmax over axis 1, which is output 1 (log_prob). */
static bool bind_softmax_cross_entropy(om_bind *b) {
  om_tensor *weight = b->node->n_in > 2 ? b->in[2] : NULL, *lp = b->in[0]->ndim >= 2 ? om_log_softmax(b->in[0], 1) : NULL;
  if (!lp && b->in[0]->ndim < 2) return om__fail(OM_ERR_SHAPE_MISMATCH, "%s (SoftmaxCrossEntropyLoss): scores need 2 or more dims [N, C, d...]", who(b));
  bool ok = lp && put(b, 0, nll(b, lp, b->in[1], weight));
  if (ok && b->node->n_out > 1) return put(b, 1, lp);
  om_tensor_release(lp);
  return ok;
}

/* CenterCropPad: each axis cropped or zero-padded to its size, the input centred (an odd
 * difference puts the extra element at the end). */
static bool bind_center_crop_pad(om_bind *b) {
  om_tensor *x = b->in[0];
  int64_t shape[OM_MAX_DIMS], axes[OM_MAX_DIMS];
  int n, na;
  if (!const_ints(b, 1, shape, OM_MAX_DIMS, &n) || !attr_ints(b, "axes", axes, OM_MAX_DIMS, &na)) return false;
  if (na < 0)
    for (na = 0; na < x->ndim; na++) axes[na] = na;
  if (n != na) return om__fail(OM_ERR_FORMAT, "%s (CenterCropPad): %d sizes for %d axes", who(b), n, na);
  int64_t pads[2 * OM_MAX_DIMS] = {0};
  om_tensor *y = om_tensor_retain(x);
  for (int k = 0; y && k < n; k++) {
    int a = 0;
    if (!wrap(b, axes[k], x->ndim, &a)) return om_tensor_release(y), false;
    if (shape[k] < 0) return om_tensor_release(y), om__fail(OM_ERR_FORMAT, "%s (CenterCropPad): size %lld", who(b), (long long)shape[k]);
    int64_t dim = x->shape[a], off = (dim > shape[k] ? dim - shape[k] : shape[k] - dim) / 2;
    if (shape[k] < dim) y = then(y, om_slice(y, a, off, off + shape[k], 1));
    else pads[2 * (x->ndim - 1 - a)] = off, pads[2 * (x->ndim - 1 - a) + 1] = shape[k] - dim - off;
  }
  return put(b, 0, y ? then(y, om_pad(y, pads, 2 * x->ndim, OM_PAD_CONSTANT, 0)) : NULL);
}

/* Input i's values, known when planning (a shape decided by values), as a dense tensor; when they
 * are computed when the graph runs, the session plans per value of them (known). */
static om_tensor *const_values(om_bind *b, int i) { return known(b, i) ? om_contiguous(b->in[i]) : NULL; }

/* Compress: the slices along axis (of the flattened input without one) where the condition
 * is true; a condition shorter than the axis leaves the rest out. */
static bool bind_compress(om_bind *b) {
  om_tensor *x = b->in[0];
  int64_t axis, flat = -1;
  int a = 0;
  bool has_axis = attr(b, "axis") != NULL;
  if (!attr_i(b, "axis", 0, &axis) || (has_axis && !wrap(b, axis, x->ndim, &a))) return false;
  om_tensor *c = const_values(b, 1);
  if (!c) return false;
  om_tensor *xs = has_axis ? om_tensor_retain(x) : om_reshape(x, &flat, 1);
  int64_t n = om_tensor_numel(c), dim = xs ? xs->shape[a] : 0, count = 0;
  bool ok = xs && (c->ndim == 1 || om__fail(OM_ERR_SHAPE_MISMATCH, "%s (Compress): the condition must have 1 dim, it has %d", who(b), c->ndim)) &&
            (n <= dim || om__fail(OM_ERR_SHAPE_MISMATCH, "%s (Compress): %lld conditions for an axis of %lld", who(b), (long long)n, (long long)dim));
  int64_t *idx = ok ? om__alloc(sizeof(int64_t) * (size_t)(n + 1), "Compress") : NULL;
  for (int64_t k = 0; idx && k < n; k++)
    if (om__get_flat(c, k) != 0) idx[count++] = k;
  om_tensor *it = idx ? om_from_data(idx, &count, 1, OM_INT64) : NULL;
  ok = put(b, 0, it ? om_index_select(xs, a, it) : NULL);
  free(idx);
  om_tensor_release(it);
  om_tensor_release(xs);
  om_tensor_release(c);
  return ok;
}

/* NonZero: the indices [ndim, count] of the non-zero elements, in row-major order. */
static bool bind_non_zero(om_bind *b) {
  om_tensor *c = const_values(b, 0);
  if (!c) return false;
  int64_t n = om_tensor_numel(c), count = 0, nd = c->ndim ? c->ndim : 1;
  for (int64_t k = 0; k < n; k++) count += om__get_flat(c, k) != 0;
  int64_t shape[2] = {nd, count}, *idx = om__alloc(sizeof(int64_t) * (size_t)(nd * count + 1), "NonZero");
  for (int64_t k = 0, j = 0; idx && k < n; k++) {
    if (om__get_flat(c, k) == 0) continue;
    for (int64_t d = c->ndim - 1, r = k; d >= 0; d--) idx[d * count + j] = r % c->shape[d], r /= c->shape[d];
    if (!c->ndim) idx[j] = 0; /* a scalar: index 0, as onnxruntime */
    j++;
  }
  bool ok = put(b, 0, idx ? om_from_data(idx, shape, 2, OM_INT64) : NULL);
  free(idx);
  om_tensor_release(c);
  return ok;
}

/* The rows of s [n, m] sorted lexicographically, stably: argsort by each column from the last
 * (each pass stable, so earlier columns decide and ties keep the original order). A new
 * reference to the int64 permutation [n]. */
static om_tensor *lex_argsort(om_tensor *s) {
  int64_t n = s->shape[0], m = s->shape[1];
  om_tensor *perm = om_arange(0, (double)n, 1, OM_INT64);
  for (int64_t j = m - 1; perm && j >= 0; j--) {
    om_scope sc = {0};
    om_tensor *col = om__keep(&sc, om_select(s, 1, j)), *colp = col ? om__keep(&sc, om_index_select(col, 0, perm)) : NULL;
    om_tensor *p2 = colp ? om__keep(&sc, om_argsort(colp, 0, false)) : NULL;
    perm = p2 ? then(perm, om_index_select(perm, 0, p2)) : then(perm, NULL);
    om__scope_end(&sc);
  }
  return perm;
}

/* Unique (its input decides the shapes: known when planning, as NonZero): the rows of x as
 * [n, m] (the slices along axis, or the elements) sorted by lex_argsort, a group starting where
 * a row differs from the one before (ne, amax); per group its first index in x, the index every
 * row maps to, the count; sorted 0 orders the groups by first index. Y is index_select. */
static bool bind_unique(om_bind *b) {
  om_tensor *x = b->in[0];
  int64_t axis, sorted, perm[OM_MAX_DIMS];
  int a = 0;
  bool has_axis = attr(b, "axis") != NULL;
  if (!attr_i(b, "axis", 0, &axis) || !attr_i(b, "sorted", 1, &sorted) || (has_axis && !wrap(b, axis, x->ndim, &a))) return false;
  om_tensor *c = const_values(b, 0);
  if (!c) return false;
  om_scope sc = {0};
  om__keep(&sc, c);
  int64_t n = has_axis ? c->shape[a] : om_tensor_numel(c), m = n ? om_tensor_numel(c) / n : 0, rows[2] = {n, m}, flat = -1;
  perm[0] = a; /* axis first, the others in order */
  for (int d = 1; d < c->ndim; d++) perm[d] = d <= a ? d - 1 : d;
  om_tensor *src = has_axis ? c : om__keep(&sc, om_reshape(c, &flat, 1)); /* what Y selects from */
  om_tensor *moved = has_axis ? om__keep(&sc, om_contiguous(om__keep(&sc, om_permute(c, perm, c->ndim)))) : src;
  om_tensor *s = moved ? om__keep(&sc, om_reshape(moved, rows, 2)) : NULL;
  om_tensor *order = s ? om__keep(&sc, lex_argsort(s)) : NULL, *sr = order ? om__keep(&sc, om_index_select(s, 0, order)) : NULL;
  om_tensor *starts = NULL; /* [n - 1]: row k + 1 differs from row k */
  if (sr && n > 1 && m > 0) {
    om_tensor *ne = om__keep(&sc, om_ne(om__keep(&sc, om_slice(sr, 0, 1, n, 1)), om__keep(&sc, om_slice(sr, 0, 0, n - 1, 1))));
    int64_t one = 1;
    starts = ne ? om__keep(&sc, om_contiguous(om__keep(&sc, om_amax(om__keep(&sc, om_cast(ne, OM_FLOAT32)), &one, 1, false)))) : NULL;
  }
  bool ok = sr && (n <= 1 || m == 0 || starts);
  int64_t *mem = ok ? om__alloc(sizeof(int64_t) * (size_t)(4 * n + 1), "Unique") : NULL, groups = 0;
  int64_t *first = mem, *count = mem + n, *inverse = mem + 2 * n, *rank = mem + 3 * n; /* rank: a group's place in the output */
  const int64_t *ord = order ? (const int64_t *)om__data(order) : NULL;
  for (int64_t k = 0; mem && k < n; k++) {
    if (k == 0 || (starts && ((const float *)om__data(starts))[k - 1] != 0)) first[groups] = ord[k], count[groups++] = 0;
    count[groups - 1]++, inverse[ord[k]] = groups - 1;
  }
  for (int64_t g = 0; mem && g < groups; g++) rank[g] = g;
  if (mem && !sorted) { /* the groups by first index (an argsort of them) */
    om_tensor *f = om__keep(&sc, om_from_data(first, &groups, 1, OM_INT64)), *fo = f ? om__keep(&sc, om_argsort(f, 0, false)) : NULL;
    ok = fo != NULL;
    int64_t *tmp = ok ? om__alloc(sizeof(int64_t) * (size_t)(2 * groups + 1), "Unique") : NULL;
    for (int64_t g = 0; tmp && g < groups; g++) {
      int64_t from = ((const int64_t *)om__data(fo))[g];
      rank[from] = g, tmp[g] = first[from], tmp[groups + g] = count[from];
    }
    if (tmp) memcpy(first, tmp, sizeof(int64_t) * (size_t)groups), memcpy(count, tmp + groups, sizeof(int64_t) * (size_t)groups);
    ok = tmp != NULL;
    free(tmp);
  }
  for (int64_t k = 0; mem && ok && k < n; k++) inverse[k] = rank[inverse[k]];
  ok = ok && mem;
  om_tensor *fi = ok ? om__keep(&sc, om_from_data(first, &groups, 1, OM_INT64)) : NULL;
  ok = fi && put(b, 0, om_index_select(src, has_axis ? a : 0, fi));
  if (ok && b->node->n_out > 1) ok = put(b, 1, om_tensor_retain(fi));
  if (ok && b->node->n_out > 2) ok = put(b, 2, om_from_data(inverse, &n, 1, OM_INT64));
  if (ok && b->node->n_out > 3) ok = put(b, 3, om_from_data(count, &groups, 1, OM_INT64));
  free(mem);
  om__scope_end(&sc);
  return ok;
}

/* ReverseSequence: along time_axis, the first len[b] elements of batch b reversed, the rest
 * kept: a gather by t < len ? len - 1 - t : t. */
static bool bind_reverse_sequence(om_bind *b) {
  om_tensor *x = b->in[0], *len = b->in[1];
  int64_t ta, ba;
  int t = 0, bt = 0;
  if (!attr_i(b, "time_axis", 0, &ta) || !attr_i(b, "batch_axis", 1, &ba)) return false;
  if (x->ndim < 2 || (ta != 0 && ta != 1) || ba != 1 - ta)
    return om__fail(OM_ERR_FORMAT, "%s (ReverseSequence): time_axis %lld and batch_axis %lld for %d dims (one is 0, the other 1)", who(b),
                    (long long)ta, (long long)ba, x->ndim);
  t = (int)ta, bt = (int)ba;
  if (len->dtype != OM_INT64 || len->ndim != 1 || len->shape[0] != x->shape[bt])
    return om__fail(OM_ERR_SHAPE_MISMATCH, "%s (ReverseSequence): sequence_lens must be int64 of the batch's size %lld", who(b), (long long)x->shape[bt]);
  int64_t tshape[OM_MAX_DIMS], lshape[OM_MAX_DIMS];
  for (int d = 0; d < x->ndim; d++) tshape[d] = d == t ? x->shape[t] : 1, lshape[d] = d == bt ? x->shape[bt] : 1;
  om_scope s = {0};
  om_tensor *ar = om__keep(&s, om_arange(0, (double)x->shape[t], 1, OM_INT64)), *tt = ar ? om__keep(&s, om_reshape(ar, tshape, x->ndim)) : NULL;
  om_tensor *l = om__keep(&s, om_reshape(len, lshape, x->ndim));
  om_tensor *rev = tt && l ? om__keep(&s, om_sub(om__keep(&s, om_add_scalar(l, -1)), tt)) : NULL;
  om_tensor *idx = rev ? om__keep(&s, om_where(om__keep(&s, om_lt(tt, l)), rev, tt)) : NULL;
  om_tensor *full = idx ? om__keep(&s, om_expand(idx, x->shape, x->ndim)) : NULL;
  bool ok = put(b, 0, full ? om_gather(x, t, full) : NULL);
  om__scope_end(&s);
  return ok;
}

/* What every step of one direction reads: R of the direction [gates H, H]; the GRU's recurrent
 * biases Rb [3 H] (NULL: none; RNN's and LSTM's are in the input's linear); the LSTM's peepholes
 * P [3 H] (ONNX's i, o, f; NULL: none); the GRU's linear_before_reset; clip when clipped. */
typedef struct recur_step {
  om_tensor *Rd, *Rb, *P;
  int64_t H;
  int gates;
  bool lbr, clipped;
  double clip;
} recur_step;

/* An activation's input bounded by clip (ONNX: clip applies to the activations' inputs). */
static om_tensor *clipped_in(om_scope *s, const recur_step *st, om_tensor *pre) {
  double lo = -st->clip, hi = st->clip;
  return pre && st->clipped ? om__keep(s, om_clamp(pre, &lo, &hi)) : pre;
}

/* One step with the default activations: xt [N, gates H] is the step's input times W^T plus the
 * biases the input's linear takes, h [N, H] the state, c [N, H] the LSTM's cell (NULL else).
 * RNN: h' = tanh(xt + h R^T). GRU (ONNX's z, r, h): z, r = sigmoid(xt[z, r] + h R[z, r]^T +
 * Rb[z, r]); h~ = tanh(xt[h] + (r h) R[h]^T + Rb[h]), or with linear_before_reset
 * tanh(xt[h] + r (h R[h]^T + Rb[h])); h' = h~ + z (h - h~). LSTM (ONNX's i, o, f, c):
 * i = sigmoid(xt[i] + h R[i]^T + Pi c), f likewise with Pf, g = tanh(xt[c] + h R[c]^T),
 * c' = f c + i g, o = sigmoid(xt[o] + h R[o]^T + Po c'), h' = o tanh(c').
 * The new h (and c' into *c_out): new references; NULL with an error. */
static om_tensor *step_of(const recur_step *st, om_tensor *xt, om_tensor *h, om_tensor *c, om_tensor **c_out) {
  int64_t H = st->H;
  om_scope s = {0};
  om_tensor *r = NULL;
  if (st->gates == 1) {
    om_tensor *pre = clipped_in(&s, st, om__keep(&s, om_add(xt, om__keep(&s, om_linear(h, st->Rd, NULL)))));
    r = pre ? om_tanh(pre) : NULL;
    om__scope_end(&s);
    return r;
  }
  if (st->gates == 4) {
    om_tensor *pre = om__keep(&s, om_add(xt, om__keep(&s, om_linear(h, st->Rd, NULL)))), *g[4] = {NULL};
    for (int k = 0; pre && k < 4; k++) g[k] = om__keep(&s, om_slice(pre, 1, k * H, (k + 1) * H, 1));
    om_tensor *P[3] = {NULL};
    for (int k = 0; st->P && k < 3; k++) P[k] = om__keep(&s, om_slice(st->P, 0, k * H, (k + 1) * H, 1));
    bool ok = g[3] && (!st->P || P[2]);
    if (ok && st->P) ok = (g[0] = om__keep(&s, om_add(g[0], om__keep(&s, om_mul(P[0], c))))) && (g[2] = om__keep(&s, om_add(g[2], om__keep(&s, om_mul(P[2], c)))));
    om_tensor *i = ok ? om__keep(&s, om_sigmoid(clipped_in(&s, st, g[0]))) : NULL, *f = i ? om__keep(&s, om_sigmoid(clipped_in(&s, st, g[2]))) : NULL;
    om_tensor *gg = f ? om__keep(&s, om_tanh(clipped_in(&s, st, g[3]))) : NULL;
    om_tensor *c2 = gg ? om__keep(&s, om_add(om__keep(&s, om_mul(f, c)), om__keep(&s, om_mul(i, gg)))) : NULL, *po = g[1];
    if (c2 && st->P) po = om__keep(&s, om_add(po, om__keep(&s, om_mul(P[1], c2))));
    om_tensor *o = c2 && po ? om__keep(&s, om_sigmoid(clipped_in(&s, st, po))) : NULL, *tc = o ? om__keep(&s, om_tanh(clipped_in(&s, st, c2))) : NULL;
    r = tc ? om_mul(o, tc) : NULL;
    *c_out = r ? om_tensor_retain(c2) : NULL;
    om__scope_end(&s);
    return r;
  }
  om_tensor *Rzr = om__keep(&s, om_slice(st->Rd, 0, 0, 2 * H, 1)), *Rh = om__keep(&s, om_slice(st->Rd, 0, 2 * H, 3 * H, 1)), *Rb = st->Rb;
  om_tensor *bzr = Rb ? om__keep(&s, om_slice(Rb, 0, 0, 2 * H, 1)) : NULL, *bh = Rb ? om__keep(&s, om_slice(Rb, 0, 2 * H, 3 * H, 1)) : NULL;
  om_tensor *pzr = Rzr && (!Rb || bzr) ? om__keep(&s, om_add(om__keep(&s, om_slice(xt, 1, 0, 2 * H, 1)), om__keep(&s, om_linear(h, Rzr, bzr)))) : NULL;
  om_tensor *zr = pzr ? om__keep(&s, om_sigmoid(clipped_in(&s, st, pzr))) : NULL;
  om_tensor *z = zr ? om__keep(&s, om_slice(zr, 1, 0, H, 1)) : NULL, *rg = zr ? om__keep(&s, om_slice(zr, 1, H, 2 * H, 1)) : NULL;
  om_tensor *xh = rg && Rh && (!Rb || bh) ? om__keep(&s, om_slice(xt, 1, 2 * H, 3 * H, 1)) : NULL, *ph = NULL;
  if (xh && st->lbr) ph = om__keep(&s, om_add(xh, om__keep(&s, om_mul(rg, om__keep(&s, om_linear(h, Rh, bh))))));
  else if (xh) ph = om__keep(&s, om_add(xh, om__keep(&s, om_linear(om__keep(&s, om_mul(rg, h)), Rh, bh))));
  om_tensor *ht = ph ? om__keep(&s, om_tanh(clipped_in(&s, st, ph))) : NULL;
  om_tensor *dz = ht && z ? om__keep(&s, om_mul(z, om__keep(&s, om_sub(h, ht)))) : NULL;
  r = dz ? om_add(ht, dz) : NULL;
  om__scope_end(&s);
  return r;
}

/* t where batch row n is still inside its sequence (mask [N, 1] bool), else `past` (a new
 * reference taken over each side: the step's result and the value kept). */
static om_tensor *masked(om_tensor *mask, om_tensor *t, om_tensor *past) {
  om_tensor *r = mask && t && past ? om_where(mask, t, past) : NULL;
  om_tensor_release(t);
  om_tensor_release(past);
  return r;
}

/* RNN (Tanh, ONNX's default activation), GRU (Sigmoid, Tanh) and LSTM (Sigmoid, Tanh, Tanh) step
 * by step: per direction one linear over every step's input (RNN's and LSTM's biases Wb + Rb,
 * GRU's Wb), then per step step_of. With sequence_lens (int [N]) batch row n steps only while
 * t < len[n] (a reverse direction so starts at len[n] - 1): past it Y is 0 and the states keep
 * their last value, ONNX's rule, as a mask per step. The lengths are taken by value (a plan per
 * value, fed or computed): one below 0 or above T is InvalidArgument, as onnxruntime refuses it. */
static bool recur_by_steps(om_bind *b, int gates) {
  const char *op = b->node->op_type;
  bool lstm = gates == 4;
  int64_t H, layout, lbr;
  double clip;
  const char *dir;
  if (!attr_i(b, "hidden_size", -1, &H) || !attr_i(b, "layout", 0, &layout) || !attr_s(b, "direction", "forward", &dir) || !attr_f(b, "clip", 0, &clip) ||
      !attr_i(b, "linear_before_reset", 0, &lbr))
    return false;
  if (attr(b, "activations") || attr(b, "activation_alpha") || attr(b, "activation_beta"))
    return unsupported(b, gates == 1 ? "activations other than the default (Tanh)" : "activations other than the defaults (Sigmoid, Tanh)");
  bool bi = !strcmp(dir, "bidirectional"), rev = !strcmp(dir, "reverse"), clipped = attr(b, "clip") != NULL;
  if (!bi && !rev && strcmp(dir, "forward")) return om__fail(OM_ERR_FORMAT, "%s (%s): direction '%s'", who(b), op, dir);
  om_tensor *x = b->in[0], *W = b->in[1], *R = b->in[2], *B = b->node->n_in > 3 ? b->in[3] : NULL, *lens = b->node->n_in > 4 ? b->in[4] : NULL;
  om_tensor *h0 = b->node->n_in > 5 ? b->in[5] : NULL, *c0 = lstm && b->node->n_in > 6 ? b->in[6] : NULL, *P = lstm && b->node->n_in > 7 ? b->in[7] : NULL;
  int D = bi ? 2 : 1;
  int64_t G = gates * H;
  if (x->ndim != 3 || W->ndim != 3 || R->ndim != 3 || W->shape[0] != D || H < 1 || H > LIMIT || W->shape[1] != G || W->shape[2] != x->shape[2] ||
      R->shape[0] != D || R->shape[1] != G || R->shape[2] != H || (B && (B->ndim != 2 || B->shape[0] != D || B->shape[1] != 2 * G)))
    return om__fail(OM_ERR_SHAPE_MISMATCH, "%s (%s): X, W, R and B do not fit hidden_size %lld and direction %s", who(b), op, (long long)H, dir);
  if (P && (P->ndim != 2 || P->shape[0] != D || P->shape[1] != 3 * H))
    return om__fail(OM_ERR_SHAPE_MISMATCH, "%s (%s): P must be [%d, %lld]", who(b), op, D, (long long)(3 * H));
  om_scope s = {0}; /* what lives to the end: the inputs transposed, each direction's results */
  bool ok = true;
  if (layout) {
    ok = (x = om__keep(&s, om_transpose(x, 0, 1))) != NULL;
    if (ok && h0) ok = (h0 = om__keep(&s, om_transpose(h0, 0, 1))) != NULL;
    if (ok && c0) ok = (c0 = om__keep(&s, om_transpose(c0, 0, 1))) != NULL;
  }
  int64_t T = ok ? x->shape[0] : 0, N = ok ? x->shape[1] : 0, zshape[3] = {0, N, H};
  for (int k = 0; ok && k < 2; k++) {
    om_tensor *st = k ? c0 : h0;
    if (st && (st->ndim != 3 || st->shape[0] != D || st->shape[1] != N || st->shape[2] != H))
      ok = om__fail(OM_ERR_SHAPE_MISMATCH, "%s (%s): %s must be [%lld, %lld, %lld]", who(b), op, k ? "initial_c" : "initial_h", (long long)(layout ? N : D),
                    (long long)(layout ? D : N), (long long)H);
  }
  if (ok && lens && (lens->dtype != OM_INT64 || lens->ndim != 1 || lens->shape[0] != N))
    ok = om__fail(OM_ERR_SHAPE_MISMATCH, "%s (%s): sequence_lens must be int32 of the batch's size %lld", who(b), op, (long long)N);
  om_tensor *dense = ok && lens && known(b, 4) ? om_contiguous(lens) : NULL; /* a plan per value: each is checked, as onnxruntime does */
  ok = ok && (!lens || dense);
  for (int64_t r = 0; dense && r < N; r++) {
    int64_t v = ((const int64_t *)om__data(dense))[r];
    if (v < 0 || v > T) {
      ok = om__fail(OM_ERR_INVALID_ARGUMENT, "%s (%s): sequence_lens[%lld] is %lld, outside 0 to %lld (the sequence length)", who(b), op, (long long)r,
                    (long long)v, (long long)T);
      break;
    }
  }
  om_tensor_release(dense);
  om_tensor *len2 = ok && lens ? om__keep(&s, om_unsqueeze(lens, 1)) : NULL, *zero = ok && lens ? om__keep(&s, om_scalar(0, OM_FLOAT32)) : NULL; /* [N, 1] */
  ok = ok && (!lens || (len2 && zero));
  om_tensor **steps = ok ? om__alloc(sizeof(om_tensor *) * (size_t)(T + 1), op) : NULL, *ys[2] = {NULL}, *hs[2] = {NULL}, *cs[2] = {NULL};
  ok = steps != NULL;
  if (steps) memset(steps, 0, sizeof(om_tensor *) * (size_t)(T + 1));
  for (int d = 0; ok && d < D; d++) {
    om_scope t = {0}; /* this direction's operands */
    om_tensor *bias = NULL, *Rb = NULL;
    if (B) {
      om_tensor *bd = om__keep(&t, om_select(B, 0, d)), *Wb = bd ? om__keep(&t, om_slice(bd, 0, 0, G, 1)) : NULL;
      Rb = bd ? om__keep(&t, om_slice(bd, 0, G, 2 * G, 1)) : NULL;
      bias = gates != 3 ? (Wb && Rb ? om__keep(&t, om_add(Wb, Rb)) : NULL) : Wb;
      if (gates != 3) Rb = NULL;
    }
    recur_step st = {.Rd = om__keep(&t, om_select(R, 0, d)), .Rb = Rb, .P = P ? om__keep(&t, om_select(P, 0, d)) : NULL, .H = H, .gates = gates,
                     .lbr = lbr != 0, .clipped = clipped, .clip = clip};
    om_tensor *xw = om__keep(&t, om_linear(x, om__keep(&t, om_select(W, 0, d)), bias));
    int64_t hshape[2] = {N, H};
    om_tensor *h = h0 ? om_select(h0, 0, d) : om_zeros(hshape, 2, OM_FLOAT32), *c = !lstm ? NULL : c0 ? om_select(c0, 0, d) : om_zeros(hshape, 2, OM_FLOAT32);
    ok = st.Rd && xw && (!B || (bias && (gates != 3 || Rb))) && (!P || st.P) && h && (!lstm || c);
    for (int64_t k = 0; ok && k < T; k++) {
      int64_t at = rev || d == 1 ? T - 1 - k : k;
      om_tensor *xt = om_select(xw, 0, at), *c2 = NULL, *mask = NULL, *at_t = NULL;
      om_tensor *h2 = xt ? step_of(&st, xt, h, c, &c2) : NULL;
      if (h2 && lens) mask = (at_t = om_scalar((double)at, OM_INT64)) ? om_lt(at_t, len2) : NULL;
      if (lens) { /* inside its sequence the step's result, else Y 0 and the states kept */
        steps[at] = h2 ? om_where(mask, h2, zero) : NULL;
        h2 = masked(mask, h2, om_tensor_retain(h));
        if (lstm) c2 = masked(mask, c2, om_tensor_retain(c));
      } else {
        steps[at] = om_tensor_retain(h2);
      }
      om__release_all((om_tensor *[]){xt, mask, at_t}, 3);
      ok = steps[at] && h2 && (!lstm || c2);
      h = then(h, h2);
      if (lstm) c = then(c, c2);
      ok = ok && h && (!lstm || c);
    }
    ys[d] = ok ? om__keep(&s, T ? om_stack(steps, (int)T, 0) : om_zeros(zshape, 3, OM_FLOAT32)) : NULL;
    hs[d] = ok ? om__keep(&s, om_tensor_retain(h)) : NULL;
    cs[d] = ok && lstm ? om__keep(&s, om_tensor_retain(c)) : NULL;
    om__release_all(steps, (int)T);
    memset(steps, 0, sizeof(om_tensor *) * (size_t)T);
    om__release_all((om_tensor *[]){h, c}, 2);
    om__scope_end(&t);
    ok = ok && ys[d] && hs[d] && (!lstm || cs[d]);
  }
  free(steps);
  /* [T, D, N, H], [D, N, H] */
  om_tensor *y = ok ? om__keep(&s, om_stack(ys, D, 1)) : NULL, *h = ok ? om__keep(&s, om_stack(hs, D, 0)) : NULL, *c = ok && lstm ? om__keep(&s, om_stack(cs, D, 0)) : NULL;
  if (y && h && layout) { /* back to batch first: Y [N, T, D, H], Y_h and Y_c [N, D, H] */
    int64_t perm[4] = {2, 0, 1, 3};
    y = om__keep(&s, om_permute(y, perm, 4));
    h = om__keep(&s, om_transpose(h, 0, 1));
    if (c) c = om__keep(&s, om_transpose(c, 0, 1));
  }
  ok = ok && y && h && (!lstm || c) && put(b, 0, om_tensor_retain(y));
  if (ok && b->node->n_out > 1) ok = put(b, 1, om_tensor_retain(h));
  if (ok && lstm && b->node->n_out > 2) ok = put(b, 2, om_tensor_retain(c));
  om__scope_end(&s);
  return ok;
}
static bool bind_rnn(om_bind *b) { return recur_by_steps(b, 1); }

/* ---- GridSample, AffineGrid, and the bilinear gathers DeformConv reads with ---- */

/* w times the pixels of x [N, C, S] (S the product of the r spatial sizes) at integer taps
 * at[k] [N, positions...] (float; at[0] along the last axis, size[0] its size), as [N, C, P]:
 * a tap outside the image reads its nearest pixel (border, reflection: where the coordinate was
 * moved inside, a tap outside has weight 0 or reads the pixel reflection would), or 0 (zeros). */
static om_tensor *grid_tap(om_tensor *x, om_tensor *const *at, int r, const int64_t *size, om_tensor *w, bool zeros) {
  om_scope s = {0};
  int64_t N = x->shape[0], P = om_tensor_numel(at[0]) / (N ? N : 1), flat[3] = {N, 1, P}, wide[3] = {N, x->shape[1], P}, stride = 1;
  double zero = 0;
  om_tensor *f0 = om__keep(&s, om_scalar(0, OM_FLOAT32)), *lin = NULL, *in = NULL;
  for (int k = 0; k < r; k++) {
    double most = (double)(size[k] - 1);
    om_tensor *c = f0 ? om__keep(&s, om_where(om__keep(&s, om_ne(at[k], at[k])), f0, at[k])) : NULL; /* NaN: 0 */
    om_tensor *cl = c ? om__keep(&s, om_clamp(c, &zero, &most)) : NULL;
    om_tensor *part = cl ? om__keep(&s, om_scale(om__keep(&s, om_cast(cl, OM_INT64)), (double)stride)) : NULL;
    om_tensor *same = cl ? om__keep(&s, om_eq(cl, at[k])) : NULL;
    lin = !part ? NULL : k ? om__keep(&s, om_add(lin, part)) : part;
    in = !same ? NULL : k ? om__keep(&s, om_logical_and(in, same)) : same;
    stride *= size[k];
    if (!lin || !in) break;
  }
  om_tensor *idx = lin && in ? om__keep(&s, om_expand(om__keep(&s, om_reshape(lin, flat, 3)), wide, 3)) : NULL;
  om_tensor *v = idx ? om__keep(&s, om_gather(x, 2, idx)) : NULL;
  if (v && zeros) v = om__keep(&s, om_where(om__keep(&s, om_reshape(in, flat, 3)), v, f0)); /* inside where clamping moved nothing */
  om_tensor *y = v ? om_mul(v, om__keep(&s, om_reshape(w, flat, 3))) : NULL;
  om__scope_end(&s);
  return y;
}

/* x [N, C, S] (as grid_tap's) read at coordinates src[k] [N, positions...] (float32, in pixels;
 * src[0] along the last axis) by linear interpolation: the 2^r taps around each, weighted, a tap
 * outside the image 0 (zeros) or its nearest pixel. [N, C, P]; a new reference. */
static om_tensor *linear_taps(om_tensor *x, om_tensor *const *src, int r, const int64_t *size, bool zeros) {
  om_scope s = {0};
  om_tensor *lo[3], *hi[3], *w1[3], *w0[3];
  bool ok = true;
  for (int k = 0; ok && k < r; k++) {
    lo[k] = om__keep(&s, floor_of(src[k]));
    hi[k] = lo[k] ? om__keep(&s, om_add_scalar(lo[k], 1)) : NULL;
    w1[k] = lo[k] ? om__keep(&s, om_sub(src[k], lo[k])) : NULL;
    w0[k] = w1[k] ? om__keep(&s, om_add_scalar(om__keep(&s, om_neg(w1[k])), 1)) : NULL;
    ok = hi[k] && w0[k];
  }
  om_tensor *sum = NULL; /* owned: the corners' terms so far */
  for (int corner = 0; ok && corner < 1 << r; corner++) { /* bit k of corner: the tap above along axis k */
    om_scope c = {0};
    om_tensor *at[3], *w = NULL;
    for (int k = 0; ok && k < r; k++) {
      bool up = (corner >> k) & 1;
      at[k] = up ? hi[k] : lo[k];
      w = k ? om__keep(&c, om_mul(w, up ? w1[k] : w0[k])) : (up ? w1[k] : w0[k]);
      ok = w != NULL;
    }
    om_tensor *t = ok ? om__keep(&c, grid_tap(x, at, r, size, w, zeros)) : NULL;
    sum = !t ? then(sum, NULL) : sum ? then(sum, om_add(sum, t)) : om_tensor_retain(t);
    ok = sum != NULL;
    om__scope_end(&c);
  }
  om__scope_end(&s);
  return sum;
}

/* GridSample: the library's grid_sample (PyTorch's F.grid_sample, which ONNX's GridSample
 * follows) over 2 or 3 spatial axes; opset 16's mode names (bilinear, bicubic) too. ONNX defines
 * cubic over 2 axes only, as PyTorch's bicubic. */
static bool bind_grid_sample(om_bind *b) {
  int64_t align;
  const char *mode, *padding;
  if (!attr_i(b, "align_corners", 0, &align) || !attr_s(b, "mode", "linear", &mode) || !attr_s(b, "padding_mode", "zeros", &padding)) return false;
  int m = !strcmp(mode, "linear") || !strcmp(mode, "bilinear") ? OM_GRID_BILINEAR : !strcmp(mode, "nearest") ? OM_GRID_NEAREST
          : !strcmp(mode, "cubic") || !strcmp(mode, "bicubic") ? OM_GRID_BICUBIC : -1;
  if (m < 0) return om__fail(OM_ERR_FORMAT, "%s (GridSample): mode '%s' (linear, nearest or cubic)", who(b), mode);
  int pad = !strcmp(padding, "zeros") ? OM_GRID_ZEROS : !strcmp(padding, "border") ? OM_GRID_BORDER : !strcmp(padding, "reflection") ? OM_GRID_REFLECTION : -1;
  if (pad < 0) return om__fail(OM_ERR_FORMAT, "%s (GridSample): padding_mode '%s' (zeros, border or reflection)", who(b), padding);
  if (align != 0 && align != 1) return om__fail(OM_ERR_FORMAT, "%s (GridSample): align_corners %lld (0 or 1)", who(b), (long long)align);
  int r = b->in[0]->ndim - 2;
  if (r != 2 && r != 3) return unsupported(b, "a grid over other than 2 or 3 spatial axes");
  if (m == OM_GRID_BICUBIC && r != 2) return om__fail(OM_ERR_FORMAT, "%s (GridSample): mode cubic over 3 spatial axes (ONNX defines it over 2)", who(b));
  const om_tensor *x = b->in[0], *grid = b->in[1];
  bool fits = grid->ndim == x->ndim && grid->shape[0] == x->shape[0] && grid->shape[x->ndim - 1] == r;
  if (!fits) return om__fail(OM_ERR_SHAPE_MISMATCH, "%s (GridSample): the grid must be [N, (Do,) Ho, Wo, %d] for X [N, C, %s]", who(b), r, r == 2 ? "H, W" : "D, H, W");
  return put(b, 0, om_grid_sample(b->in[0], b->in[1], (om_grid_sample_mode)m, (om_grid_sample_padding)pad, align != 0));
}

/* DeformConv over 2 spatial axes (ONNX's reference defines no other): each output position's
 * kernel taps (the convolution's, from pads, strides and dilations) moved by offset [N, G kH kW 2,
 * oH, oW] (per offset group G and tap: dy, dx), X [N, C, H, W] read there bilinearly with zeros
 * outside (linear_taps, the offset groups' channels folded into the batch), times mask [N, G kH
 * kW, oH, oW]; these columns then meet W [oC, C / group, kH, kW] as a convolution's: a matmul per
 * group, plus B. */
static bool bind_deform_conv(om_bind *b) {
  om_tensor *x = b->in[0], *w = b->in[1], *off = b->in[2];
  om_tensor *bias = b->node->n_in > 3 ? b->in[3] : NULL, *mask = b->node->n_in > 4 ? b->in[4] : NULL;
  if (x->ndim != 4 || w->ndim != 4) return unsupported(b, "DeformConv over other than 2 spatial axes");
  if (x->dtype != OM_FLOAT32) return unsupported(b, "DeformConv of other than FLOAT, FLOAT16 or BFLOAT16");
  int64_t group, og, ks[3];
  int nks;
  spatial sp;
  if (!attr_i(b, "group", 1, &group) || !attr_i(b, "offset_group", 1, &og) || !attr_ints(b, "kernel_shape", ks, 3, &nks) ||
      !read_spatial(b, 2, x->shape + 2, w->shape + 2, &sp))
    return false;
  int64_t N = x->shape[0], C = x->shape[1], H = x->shape[2], W = x->shape[3], M = w->shape[0], K = w->shape[2] * w->shape[3], oh[2];
  if (nks >= 0 && (nks != 2 || ks[0] != w->shape[2] || ks[1] != w->shape[3]))
    return om__fail(OM_ERR_FORMAT, "%s (DeformConv): kernel_shape does not match W's [%lld, %lld]", who(b), (long long)w->shape[2], (long long)w->shape[3]);
  if (group < 1 || og < 1 || group > LIMIT || og > LIMIT || C != w->shape[1] * group || M % group || C % og)
    return om__fail(OM_ERR_SHAPE_MISMATCH, "%s (DeformConv): X's %lld channels, W's [%lld, %lld, ...], group %lld and offset_group %lld do not fit "
                    "(C = W's second size x group, W's first size and C divisible by group and offset_group)",
                    who(b), (long long)C, (long long)M, (long long)w->shape[1], (long long)group, (long long)og);
  for (int d = 0; d < 2; d++) {
    int64_t span = x->shape[2 + d] + sp.pad[d] + sp.pad_end[d] - (w->shape[2 + d] - 1) * sp.dilation[d] - 1;
    if (span < 0) return om__fail(OM_ERR_SHAPE_MISMATCH, "%s (DeformConv): the kernel's extent passes X's padded size along spatial axis %d", who(b), d);
    oh[d] = span / sp.stride[d] + 1;
  }
  int64_t L = oh[0] * oh[1];
  bool fits = off->ndim == 4 && off->shape[0] == N && off->shape[1] == og * K * 2 && off->shape[2] == oh[0] && off->shape[3] == oh[1];
  fits = fits && (!mask || (mask->ndim == 4 && mask->shape[0] == N && mask->shape[1] == og * K && mask->shape[2] == oh[0] && mask->shape[3] == oh[1]));
  if (!fits || (bias && (bias->ndim != 1 || bias->shape[0] != M)))
    return om__fail(OM_ERR_SHAPE_MISMATCH, "%s (DeformConv): offset must be [%lld, %lld, %lld, %lld], mask [%lld, %lld, %lld, %lld] and B [%lld]", who(b),
                    (long long)N, (long long)(og * K * 2), (long long)oh[0], (long long)oh[1], (long long)N, (long long)(og * K), (long long)oh[0],
                    (long long)oh[1], (long long)M);
  if (!N || !C || !M || !L || !H || !W) { /* nothing to read or to write: zeros, plus B (past here every size is within a tensor's) */
    om_tensor *z = om_zeros((int64_t[]){N, M, oh[0], oh[1]}, 4, OM_FLOAT32), *rb = z && bias ? om_reshape(bias, (int64_t[]){1, M, 1, 1}, 4) : NULL;
    bool ok = put(b, 0, z && bias ? (rb ? om_add(z, rb) : NULL) : om_tensor_retain(z));
    om_tensor_release(z);
    om_tensor_release(rb);
    return ok;
  }
  /* the taps' places before the offsets, [2, K, L] (rows, then columns): 2 K L is offset's size over N G */
  om_tensor *base = om__tensor_new(&(om_meta){.dtype = OM_FLOAT32, .ndim = 3, .shape = {2, K, L}}, false, "DeformConv");
  if (!base) return false;
  float *at = (float *)om__data(base);
  for (int64_t k = 0; k < K; k++)
    for (int64_t l = 0; l < L; l++) {
      at[k * L + l] = (float)(l / oh[1] * sp.stride[0] - sp.pad[0] + k / w->shape[3] * sp.dilation[0]);
      at[(K + k) * L + l] = (float)(l % oh[1] * sp.stride[1] - sp.pad[1] + k % w->shape[3] * sp.dilation[1]);
    }
  om_scope s = {0};
  om__keep(&s, base);
  om_tensor *offr = om__keep(&s, om_reshape(off, (int64_t[]){N * og, K, 2, L}, 4)), *src[2] = {NULL};
  for (int d = 0; offr && d < 2; d++) { /* src[0] the columns, src[1] the rows, [N G, K L] */
    om_tensor *place = om__keep(&s, om_add(om__keep(&s, om_select(offr, 2, 1 - d)), om__keep(&s, om_select(base, 0, 1 - d))));
    src[d] = place ? om__keep(&s, om_reshape(place, (int64_t[]){N * og, K * L}, 2)) : NULL;
  }
  om_tensor *xr = om__keep(&s, om_reshape(x, (int64_t[]){N * og, C / og, H * W}, 3));
  om_tensor *v = src[0] && src[1] && xr ? om__keep(&s, linear_taps(xr, src, 2, (int64_t[]){W, H}, true)) : NULL; /* [N G, C / G, K L] */
  if (v && mask) v = om__keep(&s, om_mul(v, om__keep(&s, om_reshape(mask, (int64_t[]){N * og, 1, K * L}, 3))));
  om_tensor *cols = v ? om__keep(&s, om_reshape(v, (int64_t[]){N, group, C / group * K, L}, 4)) : NULL;
  om_tensor *wr = om__keep(&s, om_reshape(w, (int64_t[]){group, M / group, C / group * K}, 3));
  om_tensor *y = cols && wr ? om__keep(&s, om_matmul(wr, cols)) : NULL; /* [N, group, M / group, L] */
  y = y ? om__keep(&s, om_reshape(y, (int64_t[]){N, M, oh[0], oh[1]}, 4)) : NULL;
  if (y && bias) y = om__keep(&s, om_add(y, om__keep(&s, om_reshape(bias, (int64_t[]){1, M, 1, 1}, 4))));
  bool ok = put(b, 0, om_tensor_retain(y));
  om__scope_end(&s);
  return ok;
}

/* AffineGrid: the grid of theta [N, r, r + 1] over size [N, C, (D,) H, W]: for each output
 * position its base coordinates (x, y, (z,) 1) in [-1, 1] (a constant of the plan) times theta. */
static bool bind_affine_grid(om_bind *b) {
  om_tensor *theta = b->in[0];
  int64_t size[5], align;
  int n;
  if (!attr_i(b, "align_corners", 0, &align) || !const_ints(b, 1, size, 5, &n)) return false;
  int r = n - 2;
  if ((r != 2 && r != 3) || theta->ndim != 3 || theta->shape[0] != size[0] || theta->shape[1] != r || theta->shape[2] != r + 1)
    return om__fail(OM_ERR_SHAPE_MISMATCH, "%s (AffineGrid): theta must be [N, r, r + 1] for a size [N, C, ...] of r = 2 or 3 spatial axes", who(b));
  int64_t count = 1;
  for (int d = 2; d < n; d++) {
    if (size[d] < 0) return om__fail(OM_ERR_FORMAT, "%s (AffineGrid): size %lld", who(b), (long long)size[d]);
    if (size[d] > LIMIT || (count *= size[d]) > LIMIT) /* LIMIT squared fits int64 */
      return om__fail(OM_ERR_OUT_OF_MEMORY, "%s (AffineGrid): a grid of more than 2^30 positions", who(b));
  }
  float *base = om__alloc(sizeof(float) * (uint64_t)(count * (r + 1) + 1), "AffineGrid");
  for (int64_t k = 0; base && k < count; k++) { /* position k's coordinates: x along the last axis, then y, (z) */
    for (int64_t d = n - 1, rest = k, j = 0; d >= 2; d--, j++) {
      int64_t len = size[d], i = rest % len;
      rest /= len;
      base[k * (r + 1) + j] = len <= 1 ? 0.0f : align ? (float)(-1 + 2.0 * (double)i / (double)(len - 1)) : (float)((2.0 * (double)i + 1) / (double)len - 1);
    }
    base[k * (r + 1) + r] = 1;
  }
  int64_t bshape[3] = {1, count, r + 1}, out[5] = {size[0]};
  for (int d = 2; d < n; d++) out[d - 1] = size[d];
  out[n - 1] = r;
  om_tensor *bt = base ? om_from_data(base, bshape, 3, OM_FLOAT32) : NULL, *tt = bt ? om_transpose(theta, 1, 2) : NULL;
  om_tensor *g = tt ? om_matmul(bt, tt) : NULL; /* [N, count, r] */
  bool ok = put(b, 0, g ? om_reshape(g, out, n) : NULL);
  free(base);
  om_tensor_release(bt);
  om_tensor_release(tt);
  om_tensor_release(g);
  return ok;
}

/* ---- DFT, STFT ---- */

/* The discrete Fourier transform of x [..., n, ..., c] (c 1: real, 2: complex) along axis (not
 * the last), cut or zero-padded to length L: the library's dft along axis -2, the axis moved
 * there and back. [..., K, ..., 2]. */
static om_tensor *dft(om_tensor *x, int axis, int64_t L, bool inverse, bool onesided) {
  int at = x->ndim - 2;
  om_tensor *t = axis == at ? om_tensor_retain(x) : om_transpose(x, axis, at), *y = t ? om_dft(t, L, inverse, onesided) : NULL;
  om_tensor_release(t);
  return y && axis != at ? then(y, om_transpose(y, axis, at)) : y;
}

/* The complex part of a signal: the last axis is 1 (real) or 2 (complex). */
static bool signal_of(const om_bind *b, const om_tensor *x, int min_dims) {
  if (x->ndim >= min_dims && (x->shape[x->ndim - 1] == 1 || x->shape[x->ndim - 1] == 2)) return true;
  return om__fail(OM_ERR_SHAPE_MISMATCH, "%s (%s): the input must have %d or more dims, the last of size 1 (real) or 2 (complex)", who(b),
                  b->node->op_type, min_dims);
}

/* DFT (opset 20's: the axis an input, -2 when absent; older opsets' axis attribute is read too). */
static bool bind_dft(om_bind *b) {
  om_tensor *x = b->in[0];
  int64_t inverse, onesided, axis = -2, L;
  int n, a = 0;
  if (!attr_i(b, "inverse", 0, &inverse) || !attr_i(b, "onesided", 0, &onesided) || !attr_i(b, "axis", -2, &axis) || !signal_of(b, x, 2)) return false;
  if (b->node->n_in > 2 && b->in[2] && !const_ints(b, 2, &axis, 1, &n)) return false;
  if (!wrap(b, axis, x->ndim, &a)) return false;
  if (a == x->ndim - 1) return om__fail(OM_ERR_INDEX_OUT_OF_RANGE, "%s (DFT): axis %lld is the complex axis", who(b), (long long)axis);
  L = x->shape[a];
  if (b->node->n_in > 1 && b->in[1] && om_tensor_numel(b->in[1]) && !const_ints(b, 1, &L, 1, &n)) return false;
  if (L < 1 || L > LIMIT) return om__fail(OM_ERR_FORMAT, "%s (DFT): dft_length %lld (1 to 2^30)", who(b), (long long)L);
  if (onesided && (inverse || x->shape[x->ndim - 1] == 2)) return unsupported(b, "onesided with inverse or a complex input");
  return put(b, 0, dft(x, a, L, inverse, onesided));
}

/* STFT: frames of signal [batch, length, c] every frame_step, times the window, each through the
 * DFT: [batch, frames, K, 2]. The frames are one index_select of the sample positions. */
static bool bind_stft(om_bind *b) {
  om_tensor *x = b->in[0], *window = b->node->n_in > 2 && b->in[2] && om_tensor_numel(b->in[2]) ? b->in[2] : NULL;
  int64_t onesided, step, flen = -1;
  int n;
  if (!attr_i(b, "onesided", 1, &onesided) || !signal_of(b, x, 3) || !const_ints(b, 1, &step, 1, &n)) return false;
  if (x->ndim != 3) return om__fail(OM_ERR_SHAPE_MISMATCH, "%s (STFT): the signal must be [batch, length, 1 or 2]", who(b));
  if (b->node->n_in > 3 && b->in[3] && om_tensor_numel(b->in[3]) && !const_ints(b, 3, &flen, 1, &n)) return false;
  if (window && (window->ndim != 1 || (flen >= 0 && window->shape[0] != flen)))
    return om__fail(OM_ERR_SHAPE_MISMATCH, "%s (STFT): the window must be 1-D of frame_length", who(b));
  if (flen < 0) flen = window ? window->shape[0] : -1;
  if (flen < 1 || step < 1 || flen > x->shape[1])
    return om__fail(OM_ERR_FORMAT, "%s (STFT): frame_length %lld and frame_step %lld for a signal of %lld", who(b), (long long)flen, (long long)step,
                    (long long)x->shape[1]);
  if (onesided && x->shape[2] == 2) return unsupported(b, "onesided with a complex signal");
  int64_t frames = (x->shape[1] - flen) / step + 1, count = frames * flen, /* both at most the signal's length */ shape[4] = {x->shape[0], frames, flen, x->shape[2]}, wshape[3] = {1, flen, 1};
  int64_t *pos = count <= LIMIT ? om__alloc(sizeof(int64_t) * (uint64_t)count, "STFT")
                                : (om__fail(OM_ERR_OUT_OF_MEMORY, "%s (STFT): frames of more than 2^30 samples", who(b)), NULL);
  for (int64_t k = 0; pos && k < count; k++) pos[k] = (k / flen) * step + k % flen;
  om_scope s = {0};
  om_tensor *idx = pos ? om__keep(&s, om_from_data(pos, &count, 1, OM_INT64)) : NULL;
  free(pos);
  om_tensor *fr = idx ? om__keep(&s, om_reshape(om__keep(&s, om_index_select(x, 1, idx)), shape, 4)) : NULL;
  if (fr && window) fr = om__keep(&s, om_mul(fr, om__keep(&s, om_reshape(window, wshape, 3))));
  bool ok = put(b, 0, fr ? dft(fr, 2, flen, false, onesided) : NULL);
  om__scope_end(&s);
  return ok;
}

/* ---- sorting, one-hot and depth/space rearrangements ---- */

/* TopK as topk: K known when planning (a K computed from tensor values when the graph runs is
 * asked of the session by const_ints, which then plans per value). The outputs are always
 * sorted, which sorted 0 (any order) allows too. */
static bool bind_top_k(om_bind *b) {
  int64_t axis, largest, sorted, k;
  int n, a = 0;
  if (!attr_i(b, "axis", -1, &axis) || !attr_i(b, "largest", 1, &largest) || !attr_i(b, "sorted", 1, &sorted) ||
      !const_ints(b, 1, &k, 1, &n) || !wrap(b, axis, b->in[0]->ndim, &a))
    return false;
  if (n != 1) return om__fail(OM_ERR_FORMAT, "%s (TopK): K must hold one value, it holds %d", who(b), n);
  om_tensor *indices = NULL, *values = om_topk(b->in[0], k, a, largest != 0, &indices);
  return put(b, 0, values) && put(b, 1, indices);
}

/* OneHot: where(indices (cast to int64, a negative one plus depth) == arange(depth) along axis,
 * on, off); an index outside [-depth, depth) matches nothing and gets off everywhere. */
static bool bind_one_hot(om_bind *b) {
  int64_t axis;
  double depth;
  if (!attr_i(b, "axis", -1, &axis) || !const_scalar(b, 1, &depth)) return false;
  if (!(depth >= 1 && depth < 0x1p31))
    return om__fail(OM_ERR_FORMAT, "%s (OneHot): depth must be from 1 to 2^31 - 1, it is %g", who(b), depth);
  if (om_tensor_numel(b->in[2]) != 2) return om__fail(OM_ERR_FORMAT, "%s (OneHot): values must hold 2 values (off, on)", who(b));
  int nd = b->in[0]->ndim + 1, a = 0;
  if (!wrap(b, axis, nd, &a)) return false;
  int64_t n = (int64_t)depth, along[OM_MAX_DIMS + 1];
  for (int d = 0; d < nd && d <= OM_MAX_DIMS; d++) along[d] = d == a ? n : 1;
  om_scope s = {0};
  om_tensor *idx = om__keep(&s, om_cast(b->in[0], OM_INT64)), *depth_t = om__keep(&s, om_scalar((double)n, OM_INT64));
  om_tensor *neg = om__keep(&s, om_lt(idx, om__keep(&s, om_scalar(0, OM_INT64))));
  om_tensor *wrapped = om__keep(&s, om_where(neg, om__keep(&s, om_add(idx, depth_t)), idx));
  om_tensor *ar = om__keep(&s, om_reshape(om__keep(&s, om_arange(0, (double)n, 1, OM_INT64)), along, nd));
  om_tensor *mask = om__keep(&s, om_eq(om__keep(&s, om_unsqueeze(wrapped, a)), ar));
  om_tensor *flat = om__keep(&s, om_reshape(b->in[2], (int64_t[]){2}, 1));
  om_tensor *off = om__keep(&s, om_select(flat, 0, 0)), *on = om__keep(&s, om_select(flat, 0, 1));
  bool ok = put(b, 0, om_where(mask, on, off));
  om__scope_end(&s);
  return ok;
}

/* ---- RoiAlign ---- */

/* RoiAlign's sample coordinate along one axis of size n for each roi and sample point: start +
 * p bin + i bin / g (p [1, P] the point's bin, i its offset inside plus one half, start and bin
 * [R, 1]; onnxruntime's order of operations, so a point on an edge lands as there), and where it
 * lies (onnxruntime's and Detectron's rule): *lo and *hi the pixels either side, *w_hi the weight
 * of hi (0 past the last pixel), *out true more than one pixel outside. */
static bool roi_axis(om_scope *s, om_tensor *start, om_tensor *bin, om_tensor *p, om_tensor *i, om_tensor *g, int64_t n, om_tensor **lo, om_tensor **hi,
                     om_tensor **w_hi, om_tensor **out) {
  double zero = 0, last = (double)(n - 1);
  om_tensor *c = om__keep(s, om_add(om__keep(s, om_add(start, om__keep(s, om_mul(p, bin)))), om__keep(s, om_div(om__keep(s, om_mul(i, bin)), g)))); /* [R, P] */
  *out = c ? om__keep(s, om_logical_or(om__keep(s, om_lt(c, om__keep(s, om_scalar(-1, OM_FLOAT32)))),
                                       om__keep(s, om_gt(c, om__keep(s, om_scalar((double)n, OM_FLOAT32)))))) : NULL;
  om_tensor *cc = *out ? om__keep(s, om_clamp(c, &zero, NULL)) : NULL, *fl = cc ? om__keep(s, floor_of(cc)) : NULL;
  om_tensor *edge = fl ? om__keep(s, om_ge(fl, om__keep(s, om_scalar(last, OM_FLOAT32)))) : NULL;
  *lo = fl ? om__keep(s, om_clamp(fl, NULL, &last)) : NULL;
  *hi = *lo ? om__keep(s, om_clamp(om__keep(s, om_add_scalar(*lo, 1)), NULL, &last)) : NULL;
  *w_hi = edge && *hi ? om__keep(s, om_where(edge, om__keep(s, om_scalar(0, OM_FLOAT32)), om__keep(s, om_sub(cc, *lo)))) : NULL;
  return *w_hi != NULL;
}

/* RoiAlign: per roi, output_height x output_width bins of sampling_ratio^2 points, each the
 * bilinear mix of its four pixels (rows of X as [N H W, C] picked by one index_select), averaged
 * (avg) or the largest weighted pixel (max, onnxruntime's), as [R, C, oh, ow]. */
static bool bind_roi_align(om_bind *b) {
  om_tensor *x = b->in[0], *rois = b->in[1], *bi = b->in[2];
  int64_t oh, ow, sr;
  double scale;
  const char *mode, *ctm;
  if (!attr_i(b, "output_height", 1, &oh) || !attr_i(b, "output_width", 1, &ow) || !attr_i(b, "sampling_ratio", 0, &sr) ||
      !attr_f(b, "spatial_scale", 1.0, &scale) || !attr_s(b, "mode", "avg", &mode) || !attr_s(b, "coordinate_transformation_mode", "half_pixel", &ctm))
    return false;
  bool max = !strcmp(mode, "max"), half = !strcmp(ctm, "half_pixel");
  if (!max && strcmp(mode, "avg")) return om__fail(OM_ERR_FORMAT, "%s (RoiAlign): mode '%s' (avg or max)", who(b), mode);
  if (!half && strcmp(ctm, "output_half_pixel")) return om__fail(OM_ERR_FORMAT, "%s (RoiAlign): coordinate_transformation_mode '%s'", who(b), ctm);
  if (sr < 1) return unsupported(b, "sampling_ratio 0 (the sample count would follow each roi's size, a value of the graph)");
  if (oh < 1 || ow < 1 || oh > LIMIT || ow > LIMIT || sr > LIMIT)
    return om__fail(OM_ERR_FORMAT, "%s (RoiAlign): output size %lld x %lld, sampling_ratio %lld (each 1 to 2^30)", who(b), (long long)oh, (long long)ow, (long long)sr);
  if (x->ndim != 4 || rois->ndim != 2 || rois->shape[1] != 4 || bi->ndim != 1 || bi->shape[0] != rois->shape[0] || bi->dtype != OM_INT64)
    return om__fail(OM_ERR_SHAPE_MISMATCH, "%s (RoiAlign): X [N, C, H, W], rois [R, 4] and int64 batch_indices [R] do not fit", who(b));
  int64_t R = rois->shape[0], C = x->shape[1], H = x->shape[2], W = x->shape[3], P = oh * ow; /* each at most LIMIT: no overflow */
  if (P > LIMIT || (P *= sr) > LIMIT || (P *= sr) > LIMIT)
    return om__fail(OM_ERR_OUT_OF_MEMORY, "%s (RoiAlign): more than 2^30 sample points per roi", who(b));
  float *f = om__alloc(sizeof(float) * (uint64_t)(4 * P), "RoiAlign");
  for (int64_t k = 0; f && k < P; k++) { /* point k: bin (ph, pw), sample (iy, ix) within it */
    int64_t ix = k % sr, iy = k / sr % sr, pw = k / (sr * sr) % ow, ph = k / (sr * sr * ow);
    f[k] = (float)ph, f[P + k] = (float)iy + 0.5f, f[2 * P + k] = (float)pw, f[3 * P + k] = (float)ix + 0.5f;
  }
  om_scope s = {0}, ty = {0}, tx = {0}; /* ty, tx: each axis's coordinates */
  int64_t pshape[2] = {1, P}, col[2] = {R, 1}, rows2[2] = {x->shape[0] * H * W, C}, perm[4] = {0, 2, 3, 1}, flat = R * P;
  om_tensor *fp[4] = {NULL}, *g = om__keep(&s, om_scalar((double)sr, OM_FLOAT32)); /* ph, iy + 0.5, pw, ix + 0.5 */
  for (int k = 0; f && k < 4; k++) fp[k] = om__keep(&s, om_from_data(f + k * P, pshape, 2, OM_FLOAT32));
  free(f);
  bool have = fp[0] && fp[1] && fp[2] && fp[3] && g;
  om_tensor *box[4] = {NULL}, *size[2] = {NULL}, *bin[2] = {NULL};
  for (int k = 0; have && k < 4; k++) { /* x1, y1, x2, y2 scaled, shifted by half a pixel: [R, 1] */
    om_scope u = {0};
    om_tensor *c = om__keep(&u, om_scale(om__keep(&u, om_reshape(om__keep(&u, om_select(rois, 1, k)), col, 2)), scale));
    box[k] = c ? om__keep(&s, om_add_scalar(c, half ? -0.5 : 0)) : NULL;
    om__scope_end(&u);
  }
  double one = 1;
  for (int a = 0; box[0] && box[1] && box[2] && box[3] && a < 2; a++) { /* a 0: y, 1: x */
    size[a] = om__keep(&s, om_sub(box[3 - a], box[1 - a]));
    if (size[a] && !half) size[a] = om__keep(&s, om_clamp(size[a], &one, NULL));
    bin[a] = size[a] ? om__keep(&s, om_div(size[a], om__keep(&s, om_scalar((double)(a ? ow : oh), OM_FLOAT32)))) : NULL;
  }
  om_tensor *yl, *yh, *wy, *oy, *xl, *xh, *wx, *ox, *y = NULL;
  if (bin[0] && bin[1] && roi_axis(&ty, box[1], bin[0], fp[0], fp[1], g, H, &yl, &yh, &wy, &oy) &&
      roi_axis(&tx, box[0], bin[1], fp[2], fp[3], g, W, &xl, &xh, &wx, &ox)) {
    om_tensor *rows = om__keep(&s, om_reshape(om__keep(&s, om_permute(x, perm, 4)), rows2, 2)); /* [N H W, C] */
    om_tensor *base = om__keep(&s, om_scale(om__keep(&s, om_reshape(bi, col, 2)), (double)(H * W))); /* [R, 1] */
    om_tensor *outside = om__keep(&s, om_logical_or(oy, ox)), *zero = om__keep(&s, om_scalar(0, OM_FLOAT32));
    om_tensor *ys[2] = {yl, yh}, *xs[2] = {xl, xh}, *wys[2] = {om__keep(&s, om_add_scalar(om__keep(&s, om_neg(wy)), 1)), wy};
    om_tensor *wxs[2] = {om__keep(&s, om_add_scalar(om__keep(&s, om_neg(wx)), 1)), wx};
    int64_t rpc[3] = {R, P, C}, rp1[3] = {R, P, 1};
    for (int k = 0; rows && base && outside && zero && wys[0] && wxs[0] && k < 4; k++) { /* (yl, xl), (yl, xh), (yh, xl), (yh, xh) */
      om_scope u = {0};
      om_tensor *at = om__keep(&u, om_add(om__keep(&u, om_scale(om__keep(&u, om_cast(ys[k >> 1], OM_INT64)), (double)W)), om__keep(&u, om_cast(xs[k & 1], OM_INT64))));
      om_tensor *idx = at ? om__keep(&u, om_reshape(om__keep(&u, om_add(at, base)), &flat, 1)) : NULL;
      om_tensor *v = idx ? om__keep(&u, om_reshape(om__keep(&u, om_index_select(rows, 0, idx)), rpc, 3)) : NULL;
      om_tensor *w = v ? om__keep(&u, om_where(outside, zero, om__keep(&u, om_mul(wys[k >> 1], wxs[k & 1])))) : NULL;
      om_tensor *wv = w ? om__keep(&u, om_mul(v, om__keep(&u, om_reshape(w, rp1, 3)))) : NULL;
      om_tensor *next = !wv ? NULL : !k ? om_tensor_retain(wv) : max ? om_maximum(y, wv) : om_add(y, wv);
      om__scope_end(&u);
      om_tensor_release(y);
      if (!(y = next)) break;
    }
  }
  om__scope_end(&ty);
  om__scope_end(&tx);
  int64_t bins[5] = {R, oh, ow, sr * sr, C}, three = 3, back[4] = {0, 3, 1, 2};
  om_tensor *yb = y ? om__keep(&s, om_reshape(y, bins, 5)) : NULL, *r = NULL;
  om_tensor_release(y);
  if (yb) r = om__keep(&s, max ? om_amax(yb, &three, 1, false) : om_scale(om__keep(&s, om_sum(yb, &three, 1, false)), 1.0 / (double)(sr * sr)));
  bool ok = put(b, 0, r ? om_permute(r, back, 4) : NULL);
  om__scope_end(&s);
  return ok;
}

/* DepthToSpace and SpaceToDepth on [N, C, H, W]: CRD is pixel_shuffle; DCR and SpaceToDepth (whose
 * channels are block-major, unlike pixel_unshuffle's) a reshape to six dims, a permute, a reshape. */
static bool depth_space(om_bind *b, bool to_space) {
  int64_t bs;
  const char *mode;
  const om_tensor *x = b->in[0];
  if (!attr_i(b, "blocksize", 0, &bs) || !attr_s(b, "mode", "DCR", &mode)) return false;
  if (x->ndim != 4) return om__fail(OM_ERR_FORMAT, "%s (%s): the input must be 4-D, it has %d dims", who(b), b->node->op_type, x->ndim);
  if (bs < 1 || bs > 3037000499) return om__fail(OM_ERR_FORMAT, "%s (%s): blocksize %lld must be positive (and below 2^31.5)", who(b), b->node->op_type, (long long)bs);
  bool crd = to_space && !strcmp(mode, "CRD");
  if (to_space && !crd && strcmp(mode, "DCR")) return unsupported(b, "a mode other than DCR and CRD");
  if (crd) return put(b, 0, om_pixel_shuffle(b->in[0], bs));
  int64_t n = x->shape[0], c = x->shape[1], h = x->shape[2], w = x->shape[3];
  bool fits = to_space ? c % (bs * bs) == 0 && h <= INT64_MAX / bs && w <= INT64_MAX / bs
                       : h % bs == 0 && w % bs == 0 && c <= INT64_MAX / (bs * bs);
  if (!fits) {
    char buf[OM_SHAPE_STR_LEN];
    return om__fail(OM_ERR_SHAPE_MISMATCH, "%s (%s): blocksize %lld does not fit the input %s (%s)", who(b), b->node->op_type,
                    (long long)bs, om__shape_str(buf, sizeof buf, x->shape, 4), to_space ? "channels by blocksize^2" : "height and width by blocksize");
  }
  const int64_t d2s[3][6] = {{n, bs, bs, c / (bs * bs), h, w}, {0, 3, 4, 1, 5, 2}, {n, c / (bs * bs), h * bs, w * bs}};
  const int64_t s2d[3][6] = {{n, c, h / bs, bs, w / bs, bs}, {0, 3, 5, 1, 2, 4}, {n, c * bs * bs, h / bs, w / bs}};
  const int64_t(*p)[6] = to_space ? d2s : s2d;
  om_tensor *six = om_reshape(b->in[0], p[0], 6), *perm = six ? om_permute(six, p[1], 6) : NULL;
  bool ok = put(b, 0, perm ? om_reshape(perm, p[2], 4) : NULL);
  om__release_all((om_tensor *[]){six, perm}, 2);
  return ok;
}
static bool bind_depth_to_space(om_bind *b) { return depth_space(b, true); }
static bool bind_space_to_depth(om_bind *b) { return depth_space(b, false); }

/* ---- MaxUnpool ---- */

/* MaxUnpool: zeros of the output's shape ((in - 1) stride - pads + kernel per spatial axis; an
 * output_shape must be that) with each X value at its index I (flat over the whole output, as MaxPool's
 * Indices): the values summed into place by scatter_add and divided by how many went there, so
 * an index given twice (overlapping windows) keeps its value. */
static bool bind_max_unpool(om_bind *b) {
  om_tensor *x = b->in[0], *idx = b->in[1];
  int ns = x->ndim - 2;
  spatial sp;
  int64_t out[OM_MAX_DIMS], total = 1, flat = -1;
  if (ns != 1 && ns != 2) return unsupported(b, "unpooling over other than 1 or 2 spatial axes");
  if (!read_spatial(b, ns, x->shape + 2, NULL, &sp)) return false;
  if (idx->dtype != OM_INT64 || idx->ndim != x->ndim || memcmp(idx->shape, x->shape, sizeof(int64_t) * (size_t)x->ndim))
    return om__fail(OM_ERR_SHAPE_MISMATCH, "%s (MaxUnpool): the indices must be int64 of X's shape", who(b));
  out[0] = x->shape[0], out[1] = x->shape[1];
  for (int d = 0; d < ns; d++) out[2 + d] = (x->shape[2 + d] - 1) * sp.stride[d] - sp.pad[d] - sp.pad_end[d] + sp.kernel[d];
  int n = x->ndim;
  int64_t given[OM_MAX_DIMS];
  if (b->node->n_in > 2 && b->in[2]) {
    if (!const_ints(b, 2, given, OM_MAX_DIMS, &n)) return false;
    if (n != x->ndim) return om__fail(OM_ERR_SHAPE_MISMATCH, "%s (MaxUnpool): output_shape has %d values for %d dims", who(b), n, x->ndim);
    /* ONNX's reference reads the indices in the default shape and pads its result at the end,
     * onnxruntime and PyTorch read them in output_shape: the same model, two answers */
    if (memcmp(given, out, sizeof(int64_t) * (size_t)n))
      return unsupported(b, "an output_shape other than the default (ONNX's reference and onnxruntime place the indices differently)");
  }
  for (int d = 0; d < n; d++)
    if (out[d] < 0 || out[d] > LIMIT || (total *= out[d]) > LIMIT)
      return om__fail(OM_ERR_SHAPE_MISMATCH, "%s (MaxUnpool): an output of size %lld at dim %d (the whole at most 2^30)", who(b), (long long)out[d], d);
  om_scope s = {0};
  om_tensor *zeros = om__keep(&s, om_zeros(&total, 1, OM_FLOAT32)), *i = om__keep(&s, om_reshape(idx, &flat, 1)), *v = om__keep(&s, om_reshape(x, &flat, 1));
  om_tensor *ones = v ? om__keep(&s, om_ones(v->shape, 1, OM_FLOAT32)) : NULL;
  om_tensor *sum = zeros && i && v ? om__keep(&s, om_scatter_add(zeros, 0, i, v)) : NULL;
  om_tensor *hits = sum && ones ? om__keep(&s, om_scatter_add(zeros, 0, i, ones)) : NULL;
  om_tensor *one = om__keep(&s, om_scalar(1, OM_FLOAT32)), *y = hits && one ? om__keep(&s, om_div(sum, om__keep(&s, om_maximum(hits, one)))) : NULL;
  bool ok = put(b, 0, y ? om_reshape(y, out, n) : NULL);
  om__scope_end(&s);
  return ok;
}

/* ---- sequences and optionals ----
 *
 * A sequence is a list of the plan's tensors (om_seq): planned buffers or constants, as any
 * value. Its length and each element's shape are known when the plan is made, as every shape is
 * (a graph input's sequence is part of the signature), so these rules only move references: no
 * step runs for SequenceConstruct, SequenceInsert or SequenceAt; SplitToSequence slices and
 * ConcatFromSequence concatenates as Split and Concat do. A position is an operand the plan needs
 * (const_ints), so one computed from tensor values plans per value. An optional holding a value is
 * that value; one holding nothing is an om_seq marked none. */

om_seq *om__seq_new(int n, om_dtype dtype, bool none) {
  if (n < 0 || n > OM_SEQ_MAX)
    return om__fail(OM_ERR_OUT_OF_MEMORY, "sequence: %d tensors; a sequence holds at most %d", n, OM_SEQ_MAX), NULL;
  om_seq *s = om__alloc(sizeof *s, "sequence");
  om_tensor **t = s ? calloc((size_t)n + 1, sizeof *t) : NULL;
  if (!t) return free(s), om__fail(OM_ERR_OUT_OF_MEMORY, "sequence: out of memory for %d elements", n), NULL;
  *s = (om_seq){.refcount = 1, .none = none, .dtype = dtype, .n = n, .t = t};
  return s;
}

om_seq *om__seq_retain(om_seq *s) {
  if (s) s->refcount++;
  return s;
}

void om__seq_release(om_seq *s) {
  if (!s || --s->refcount) return;
  om_strings_release(s->str);
  om__release_all(s->t, s->n);
  free(s->t);
  free(s);
}

om_seq *om__seq_strings(om_strings *t) {
  om_seq *s = t ? om__seq_new(0, OM_FLOAT32, false) : NULL;
  if (!s) return om_strings_release(t), NULL;
  s->str = t;
  return s;
}

void om__seq_release_all(om_seq **a, int n) {
  for (int k = 0; k < n; k++) om__seq_release(a[k]), a[k] = NULL;
}

/* Input i as a sequence (not an optional holding nothing, not a tensor); NULL with a Format error. */
static om_seq *seq_input(const om_bind *b, int i) {
  om_seq *s = b->seq_in[i];
  if (s && !s->none) return s;
  return om__fail(OM_ERR_FORMAT, "%s (%s): input %d is %s; it takes a sequence", who(b), b->node->op_type, i,
                  s ? "an optional holding nothing" : "a tensor"), NULL;
}

/* A new sequence of s's elements with room for one more at `at` (left NULL), or without element at (drop). */
static om_seq *seq_edit(const om_seq *s, int64_t at, bool drop) {
  om_seq *r = om__seq_new(s->n + (drop ? -1 : 1), s->dtype, false);
  for (int k = 0, q = 0; r && k < s->n; k++, q++) {
    if (k == at) q += drop ? -1 : 1;
    if (!(drop && k == at)) r->t[q] = om_tensor_retain(s->t[k]);
  }
  return r;
}

/* The position operand i (ONNX's: from the end where negative) in [0, n + end) where end is 1 for
 * an insertion; the default def where the node leaves it out. */
static bool seq_position(om_bind *b, int i, int n, int end, int64_t def, int64_t *at) {
  int m = 0;
  *at = def;
  if (b->node->n_in <= i || !b->in[i]) return true;
  if (!const_ints(b, i, at, 1, &m)) return false;
  if (m != 1) return om__fail(OM_ERR_FORMAT, "%s (%s): position holds %d values", who(b), b->node->op_type, m);
  if (*at < -n || *at >= n + end)
    return om__fail(OM_ERR_INDEX_OUT_OF_RANGE, "%s (%s): position %lld is out of range for a sequence of %d", who(b), b->node->op_type,
                    (long long)*at, n);
  if (*at < 0) *at += n;
  return true;
}

/* The dtype that holds ONNX element type t (SequenceEmpty's dtype). */
static bool holding_dtype(const om_bind *b, int64_t t, om_dtype *d) {
  const om_dtype all[] = {OM_FLOAT32, OM_INT64, OM_BOOL};
  for (size_t k = 0; k < sizeof all / sizeof *all; k++)
    if (om__elem_holds(all[k], (int)t)) return (*d = all[k]), true;
  return om__fail(OM_ERR_UNSUPPORTED, "%s (%s): element type %lld is not taken", who(b), b->node->op_type, (long long)t);
}

/* The tensor t joins a sequence of dtype d: the same element type, as ONNX's checker asks. */
static bool seq_takes(const om_bind *b, om_dtype d, const om_tensor *t) {
  if (!t) return om__fail(OM_ERR_FORMAT, "%s (%s): an input is left out", who(b), b->node->op_type);
  if (t->dtype == d) return true;
  return om__fail(OM_ERR_FORMAT, "%s (%s): a tensor of %s joins a sequence of %s", who(b), b->node->op_type, om_dtype_name(t->dtype), om_dtype_name(d));
}

static bool bind_sequence_empty(om_bind *b) {
  int64_t t;
  om_dtype d = OM_FLOAT32;
  return attr_i(b, "dtype", 1, &t) && holding_dtype(b, t, &d) && (b->seq_out[0] = om__seq_new(0, d, false)) != NULL;
}

static bool bind_sequence_construct(om_bind *b) {
  om_seq *s = om__seq_new(b->node->n_in, b->in[0]->dtype, false);
  for (int k = 0; s && k < s->n; k++)
    if (!seq_takes(b, s->dtype, b->in[k]) || !(s->t[k] = om_tensor_retain(b->in[k]))) return om__seq_release(s), false;
  return (b->seq_out[0] = s) != NULL;
}

static bool bind_sequence_insert(om_bind *b) {
  om_seq *s = seq_input(b, 0), *r;
  int64_t at;
  if (!s || !seq_takes(b, s->dtype, b->in[1]) || !seq_position(b, 2, s->n, 1, s->n, &at) || !(r = seq_edit(s, at, false))) return false;
  r->t[at] = om_tensor_retain(b->in[1]);
  return (b->seq_out[0] = r) != NULL;
}

static bool bind_sequence_erase(om_bind *b) {
  om_seq *s = seq_input(b, 0);
  int64_t at;
  if (s && !s->n) return om__fail(OM_ERR_INDEX_OUT_OF_RANGE, "%s (SequenceErase): the sequence is empty", who(b));
  return s && seq_position(b, 1, s->n, 0, s->n - 1, &at) && (b->seq_out[0] = seq_edit(s, at, true)) != NULL;
}

static bool bind_sequence_at(om_bind *b) {
  om_seq *s = seq_input(b, 0);
  int64_t at;
  return s && seq_position(b, 1, s->n, 0, 0, &at) && put(b, 0, om_tensor_retain(s->t[at]));
}

static bool bind_sequence_length(om_bind *b) {
  om_seq *s = seq_input(b, 0);
  return s && put(b, 0, om_scalar(s->n, OM_INT64));
}

/* SplitToSequence: pieces of the split sizes (a 1-D split), of one size (a scalar: the last one
 * smaller), or of 1 each without (then squeezed away unless keepdims). */
static bool bind_split_to_sequence(om_bind *b) {
  om_tensor *x = b->in[0];
  int64_t axis, keep, *sizes = NULL;
  int a = 0, n = -1;
  if (!attr_i(b, "axis", 0, &axis) || !attr_i(b, "keepdims", 1, &keep) || !wrap(b, axis, x->ndim, &a)) return false;
  int64_t dim = x->shape[a], total = 0, at = 0, ax = a;
  bool given = b->node->n_in > 1 && b->in[1], scalar = given && b->in[1]->ndim == 0, squeeze = !keep && !given;
  bool ok = (sizes = om__alloc(sizeof *sizes * (OM_SEQ_MAX + 1), "SplitToSequence")) && (!given || const_ints(b, 1, sizes, OM_SEQ_MAX, &n));
  if (ok && scalar && sizes[0] < 1) ok = om__fail(OM_ERR_FORMAT, "%s (SplitToSequence): split %lld", who(b), (long long)sizes[0]);
  if (ok && (!given || scalar)) { /* equal pieces */
    int64_t piece = given ? sizes[0] : 1, count = dim / piece + (dim % piece != 0);
    if (count > OM_SEQ_MAX)
      ok = om__fail(OM_ERR_OUT_OF_MEMORY, "%s (SplitToSequence): %lld pieces; a sequence holds at most %d", who(b), (long long)count, OM_SEQ_MAX);
    for (n = 0; ok && n < count; n++) sizes[n] = dim - n * piece < piece ? dim - n * piece : piece;
  }
  for (int k = 0; ok && k < n; k++) total += sizes[k] >= 0 && sizes[k] <= dim ? sizes[k] : dim + 1;
  if (ok && total != dim)
    ok = om__fail(OM_ERR_SHAPE_MISMATCH, "%s (SplitToSequence): %d sizes summing to %lld for an axis of %lld", who(b), n, (long long)total,
                  (long long)dim);
  om_seq *s = ok ? om__seq_new(n, x->dtype, false) : NULL;
  for (int k = 0; s && k < n; at += sizes[k++]) {
    om_tensor *piece = om_slice(x, a, at, at + sizes[k], 1);
    if (!(s->t[k] = squeeze && piece ? then(piece, om_squeeze(piece, &ax, 1)) : piece)) om__seq_release(s), s = NULL;
  }
  free(sizes);
  return (b->seq_out[0] = s) != NULL;
}

static bool bind_concat_from_sequence(om_bind *b) {
  om_seq *s = seq_input(b, 0);
  int64_t axis, new_axis;
  int a = 0;
  if (!s || !attr_i(b, "axis", 0, &axis) || !attr_i(b, "new_axis", 0, &new_axis)) return false;
  if (!s->n) return om__fail(OM_ERR_INVALID_ARGUMENT, "%s (ConcatFromSequence): the sequence is empty", who(b));
  for (int k = 1; k < s->n; k++)
    if (s->t[k]->ndim != s->t[0]->ndim)
      return om__fail(OM_ERR_SHAPE_MISMATCH, "%s (ConcatFromSequence): element %d has %d dims, element 0 has %d", who(b), k, s->t[k]->ndim, s->t[0]->ndim);
  if (!wrap(b, axis, s->t[0]->ndim + (new_axis != 0), &a)) return false;
  return put(b, 0, new_axis ? om_stack(s->t, s->n, a) : om_cat(s->t, s->n, a));
}

/* Identity, Optional and OptionalGetElement pass their value on (a sequence or a tensor);
 * Optional without an input holds nothing; OptionalGetElement of nothing is an error. */
static bool pass_value(om_bind *b) {
  if (b->seq_in[0]) return (b->seq_out[0] = om__seq_retain(b->seq_in[0])) != NULL;
  return put(b, 0, om_tensor_retain(b->in[0]));
}

static bool bind_identity(om_bind *b) { return pass_value(b); }

static bool bind_optional(om_bind *b) {
  if (b->node->n_in < 1 || (!b->in[0] && !b->seq_in[0])) return (b->seq_out[0] = om__seq_new(0, OM_FLOAT32, true)) != NULL;
  return pass_value(b);
}

static bool bind_optional_get_element(om_bind *b) {
  if (b->seq_in[0] && b->seq_in[0]->none)
    return om__fail(OM_ERR_INVALID_ARGUMENT, "%s (OptionalGetElement): the optional holds nothing", who(b));
  return pass_value(b);
}

static bool bind_optional_has_element(om_bind *b) {
  bool has = b->node->n_in > 0 && (b->in[0] || (b->seq_in[0] && !b->seq_in[0]->none));
  return put(b, 0, om_scalar(has, OM_BOOL));
}

/* The rows whose inputs may be sequences or optionals holding nothing (every other row's are
 * tensors): the first such input and the last (-1: every later one). */
static const struct {
  const char *op_type;
  int first, last;
} SEQ_INPUTS[] = {{"ConcatFromSequence", 0, 0}, {"Identity", 0, 0},         {"Loop", 2, -1},          {"Optional", 0, 0},
                  {"OptionalGetElement", 0, 0}, {"OptionalHasElement", 0, 0}, {"SequenceAt", 0, 0},    {"SequenceErase", 0, 0},
                  {"SequenceInsert", 0, 0},     {"SequenceLength", 0, 0},     {"SequenceMap", 0, -1}};

bool om__onnx_takes_sequence(const char *op_type, int i) {
  for (size_t k = 0; k < sizeof SEQ_INPUTS / sizeof *SEQ_INPUTS; k++)
    if (!strcmp(SEQ_INPUTS[k].op_type, op_type)) return i >= SEQ_INPUTS[k].first && (SEQ_INPUTS[k].last < 0 || i <= SEQ_INPUTS[k].last);
  return false;
}

/* ---- strings ----
 *
 * A tensor of strings (om_strings, src/runtime/strings.c) is a value the session holds beside
 * tensors (in an om_seq), always a constant of the plan: a row's string rule (its last field)
 * computes a node with a string input while the plan is made. Rows that only move values
 * (Reshape, Gather, Concat, ...) run their own rule on each element's index and pick the strings
 * by the indices it gives (moved_strings), so no shape rule is written twice. */

/* Input i's strings; NULL with a Format error when it holds none. */
static const om_strings *str_input(const om_bind *b, int i) {
  if (i < b->node->n_in && b->seq_in[i] && b->seq_in[i]->str) return b->seq_in[i]->str;
  return om__fail(OM_ERR_FORMAT, "%s (%s): input %d must hold strings", who(b), b->node->op_type, i), NULL;
}

/* Strings t (a new reference, or NULL with the error set) become output j. */
static bool put_strings(om_bind *b, int j, om_strings *t) { return (b->seq_out[j] = om__seq_strings(t)) != NULL; }

/* The strings of the elements that indices idx (int64, known) name in the list of all given
 * (src: the tensors of strings whose elements are numbered one after the other). */
static om_strings *pick_strings(const om_bind *b, const om_tensor *idx, const om_strings **src, int n_src) {
  om_tensor *d = om_contiguous((om_tensor *)idx);
  if (!d) return NULL;
  const int64_t *v = (const int64_t *)om__data(d);
  int64_t n = om_tensor_numel(d);
  uint64_t bytes = 0;
  om_strings *t = NULL;
  for (int pass = 0; pass < 2; pass++) { /* the bytes counted, then the strings put */
    if (pass && !(t = om__strings_alloc(d->ndim, d->shape, bytes, b->node->op_type))) break;
    for (int64_t k = 0; k < n; k++) {
      int64_t at = v[k];
      int q = 0;
      while (q < n_src - 1 && at >= src[q]->n) at -= src[q++]->n;
      if (pass) om__strings_put(t, k, src[q]->s[at], src[q]->len[at]);
      else bytes += src[q]->len[at];
    }
  }
  om_tensor_release(d);
  return t;
}

/* A row that only moves values, on strings: its rule run with each input of strings replaced by
 * its elements' indices (numbered across the inputs), then each output's strings picked by the
 * indices it holds. */
static bool moved_strings(om_bind *b) {
  int n_src = 0, n_in = b->node->n_in;
  int64_t base = 0;
  om_tensor **kept = calloc((size_t)n_in + 1, sizeof *kept);
  const om_strings **src = kept ? calloc((size_t)n_in + 1, sizeof *src) : NULL;
  bool ok = src != NULL;
  if (!ok) om__fail(OM_ERR_OUT_OF_MEMORY, "%s (%s): out of memory", who(b), b->node->op_type);
  for (int i = 0; ok && i < n_in; i++) {
    const om_strings *t = b->seq_in[i] ? b->seq_in[i]->str : NULL;
    if (!t) continue;
    om_tensor *iota = om_arange((double)base, (double)(base + t->n), 1, OM_INT64);
    kept[i] = iota ? om_reshape(iota, t->shape, t->ndim) : NULL;
    om_tensor_release(iota);
    ok = kept[i] != NULL;
    src[n_src++] = t, base += t->n;
  }
  om_tensor **in = b->in;
  om_seq **seq_in = b->seq_in;
  om_tensor **idx_in = ok ? calloc((size_t)n_in + 1, sizeof *idx_in) : NULL;
  om_seq **no_seq = idx_in ? calloc((size_t)n_in + 1, sizeof *no_seq) : NULL;
  if (ok && !no_seq) ok = om__fail(OM_ERR_OUT_OF_MEMORY, "%s (%s): out of memory", who(b), b->node->op_type);
  for (int i = 0; ok && i < n_in; i++) idx_in[i] = kept[i] ? kept[i] : in[i];
  if (ok) {
    b->in = idx_in, b->seq_in = no_seq;
    ok = om__onnx_rule(b->node->op_type)->bind(b);
    b->in = in, b->seq_in = seq_in;
  }
  for (int j = 0; ok && j < b->node->n_out; j++) {
    om_tensor *idx = b->out[j];
    if (!idx) continue;
    b->out[j] = NULL;
    if (idx->storage->planned) { /* indices from an operand computed when the graph runs */
      b->needs_values = true;
      ok = om__fail(OM_ERR_UNSUPPORTED, "%s (%s): an operand of these strings is computed from tensor values when the graph runs; the graph "
                    "layer needs its values when it plans", who(b), b->node->op_type);
    } else {
      ok = put_strings(b, j, pick_strings(b, idx, src, n_src));
    }
    om_tensor_release(idx);
  }
  for (int j = 0; !ok && j < b->node->n_out; j++) om_tensor_release(b->out[j]), b->out[j] = NULL;
  if (kept) om__release_all(kept, n_in);
  free(kept), free(src), free(idx_in), free(no_seq);
  return ok;
}

/* The broadcast shape of strings x and y (ONNX's multidirectional broadcasting) into ndim, shape. */
static bool strings_broadcast(const om_bind *b, const om_strings *x, const om_strings *y, int *ndim, int64_t *shape) {
  *ndim = x->ndim > y->ndim ? x->ndim : y->ndim;
  for (int d = 0; d < *ndim; d++) {
    int dx = d - (*ndim - x->ndim), dy = d - (*ndim - y->ndim);
    int64_t a = dx >= 0 ? x->shape[dx] : 1, c = dy >= 0 ? y->shape[dy] : 1;
    if (a != c && a != 1 && c != 1)
      return om__fail(OM_ERR_SHAPE_MISMATCH, "%s (%s): sizes %lld and %lld at dim %d do not broadcast", who(b), b->node->op_type, (long long)a,
                      (long long)c, d);
    shape[d] = a == 1 ? c : a;
  }
  return true;
}

/* The element of t at flat index k of the broadcast shape (ndim, shape). */
static int64_t broadcast_at(const om_strings *t, int ndim, const int64_t *shape, int64_t k) {
  int64_t at = 0, stride = 1;
  for (int d = ndim - 1; d >= 0; d--) {
    int64_t i = k % shape[d];
    k /= shape[d];
    int dt = d - (ndim - t->ndim);
    if (dt < 0) break;
    if (t->shape[dt] != 1) at += i * stride;
    stride *= t->shape[dt];
  }
  return at;
}

static bool equal_strings(om_bind *b) {
  const om_strings *x = str_input(b, 0), *y = x ? str_input(b, 1) : NULL;
  om_meta m = {.dtype = OM_BOOL};
  if (!y || !strings_broadcast(b, x, y, &m.ndim, m.shape)) return false;
  om_tensor *r = om__tensor_new(&m, false, "Equal");
  uint8_t *o = r ? (uint8_t *)om__data(r) : NULL;
  for (int64_t k = 0, n = r ? om_tensor_numel(r) : 0; k < n; k++) {
    int64_t i = broadcast_at(x, m.ndim, m.shape, k), j = broadcast_at(y, m.ndim, m.shape, k);
    o[k] = x->len[i] == y->len[j] && !memcmp(x->s[i], y->s[j], x->len[i]);
  }
  return put(b, 0, r);
}

static bool bind_string_concat(om_bind *b) {
  const om_strings *x = str_input(b, 0), *y = x ? str_input(b, 1) : NULL;
  int ndim;
  int64_t shape[OM_MAX_DIMS], n = 1;
  if (!y || !strings_broadcast(b, x, y, &ndim, shape)) return false;
  for (int d = 0; d < ndim; d++) n *= shape[d]; /* at most x's count times y's: below 2^62 */
  uint64_t bytes = 0;
  for (int64_t k = 0; k < n && bytes <= (uint64_t)OM_STRINGS_MAX; k++)
    bytes += x->len[broadcast_at(x, ndim, shape, k)] + y->len[broadcast_at(y, ndim, shape, k)];
  om_strings *t = om__strings_alloc(ndim, shape, bytes, "StringConcat");
  for (int64_t k = 0; t && k < n; k++) {
    int64_t i = broadcast_at(x, ndim, shape, k), j = broadcast_at(y, ndim, shape, k);
    om__strings_put(t, k, x->s[i], x->len[i]);
    memcpy(t->s[k] + x->len[i], y->s[j], y->len[j] + 1); /* y's bytes and its NUL after x's */
    t->len[k] += y->len[j];
    if (k + 1 < n) t->s[k + 1] = t->s[k] + t->len[k] + 1;
  }
  return put_strings(b, 0, t);
}

/* Cast to STRING of a tensor whose type prints as its dtype's values (a float16 would print as the
 * float32 that holds it, a UINT64 past 2^63 as a negative int64: refused). */
static bool cast_to_strings(om_bind *b, int i) {
  int t = b->types[b->node->in[i]];
  if (t == 10 || t == 16 || t == T_UINT64 || (t >= 17 && t <= 20)) return unsupported(b, "a cast of FLOAT16, BFLOAT16, UINT64 or a float8 type to STRING");
  return known(b, i) && put_strings(b, 0, om__strings_format(b->in[i]));
}

/* Cast and CastLike of strings: to STRING passes them on; to a number reads each one. */
static bool cast_strings_to(om_bind *b, int64_t to) {
  const om_strings *x = str_input(b, 0);
  om_dtype d;
  if (!x) return false;
  if (to == OM_ONNX_STRING) return pass_value(b);
  if (to == T_UINT64) return unsupported(b, "a cast of STRING to UINT64"); /* the strings are read as int64 */
  if (!onnx_dtype(b, "to", to, &d)) return false;
  om_tensor *v = om__strings_parse(x, d, b->node->op_type);
  bool ok = v && cast_to(b, v, d, to);
  om_tensor_release(v);
  return ok;
}
static bool cast_strings(om_bind *b) {
  int64_t to;
  return attr_i(b, "to", -1, &to) && cast_strings_to(b, to);
}
static bool cast_like_strings(om_bind *b) {
  if (b->seq_in[1] && b->seq_in[1]->str) return b->seq_in[0] && b->seq_in[0]->str ? pass_value(b) : cast_to_strings(b, 0);
  return cast_strings_to(b, b->types[b->node->in[1]]);
}

/* StringNormalizer: x ([C] or [1, C]) without its stopwords (compared in lower case unless
 * is_case_sensitive), then in the case case_change_action asks; all removed: one empty string. */
static bool bind_string_normalizer(om_bind *b) {
  const om_strings *x = str_input(b, 0);
  const om_gattr *stop = attr(b, "stopwords");
  const char *action, *locale;
  int64_t sensitive;
  if (!x || !attr_s(b, "case_change_action", "NONE", &action) || !attr_i(b, "is_case_sensitive", 0, &sensitive) ||
      !attr_s(b, "locale", "", &locale) || (stop && !attr_type(b, stop, OM_GATTR_STRINGS)))
    return false;
  bool up = !strcmp(action, "UPPER"), down = !strcmp(action, "LOWER");
  if (!up && !down && strcmp(action, "NONE")) return om__fail(OM_ERR_FORMAT, "%s (StringNormalizer): case_change_action '%s'", who(b), action);
  if (*locale && strncmp(locale, "en", 2)) return unsupported(b, "a locale other than English (en_US's case mapping)");
  if (x->ndim != 1 && !(x->ndim == 2 && x->shape[0] == 1))
    return om__fail(OM_ERR_FORMAT, "%s (StringNormalizer): the input must be [C] or [1, C], it has %d dims", who(b), x->ndim);
  size_t longest = 0;
  uint64_t bytes = 0;
  for (int64_t k = 0; k < x->n; k++) longest = x->len[k] > longest ? x->len[k] : longest, bytes += 2 * (uint64_t)x->len[k];
  for (int q = 0; stop && q < stop->n; q++) longest = strlen(stop->strs[q]) > longest ? strlen(stop->strs[q]) : longest;
  char *a = om__alloc(2 * (uint64_t)longest + 2, "StringNormalizer"), *c = a ? om__alloc(2 * (uint64_t)longest + 2, "StringNormalizer") : NULL;
  bool *keep = c ? om__alloc((uint64_t)x->n + 1, "StringNormalizer") : NULL;
  int64_t kept = 0;
  for (int64_t k = 0; keep && k < x->n; k++) { /* a stopword's match: the same bytes, or the same in lower case */
    keep[k] = true;
    size_t la = sensitive ? 0 : om__str_case(a, x->s[k], x->len[k], false);
    for (int q = 0; stop && keep[k] && q < stop->n; q++) {
      size_t ls = strlen(stop->strs[q]), lc = sensitive ? 0 : om__str_case(c, stop->strs[q], ls, false);
      keep[k] = sensitive ? ls != x->len[k] || memcmp(stop->strs[q], x->s[k], ls) : lc != la || memcmp(a, c, la);
    }
    kept += keep[k];
  }
  int64_t shape[2] = {1, kept ? kept : 1};
  om_strings *t = keep ? om__strings_alloc(x->ndim, x->ndim == 1 ? shape + 1 : shape, bytes, "StringNormalizer") : NULL;
  if (t && !kept) om__strings_put(t, 0, "", 0);
  for (int64_t k = 0, o = 0; t && k < x->n; k++) {
    if (!keep[k]) continue;
    size_t len = up || down ? om__str_case(a, x->s[k], x->len[k], up) : x->len[k];
    om__strings_put(t, o++, up || down ? a : x->s[k], len);
  }
  free(a), free(c), free(keep);
  return put_strings(b, 0, t);
}

/* The pieces of s[0..len) split at delim (NULL: at runs of spaces, none empty), at most maxsplit
 * splits (< 0: any), as onnxruntime splits (the empty string has no pieces): each piece's start
 * and length into at and lens when given (room for the count); returns the count. */
static int64_t split_pieces(const char *s, size_t len, const char *delim, int64_t maxsplit, const char **at, size_t *lens) {
  int64_t n = 0;
  size_t dl = delim ? strlen(delim) : 0, k = 0;
  if (!len) return 0;
  if (!delim) {
    for (;;) {
      while (k < len && s[k] == ' ') k++;
      if (k == len) return n;
      size_t start = k;
      if (maxsplit >= 0 && n == maxsplit) k = len; /* the rest is the last piece */
      while (k < len && s[k] != ' ') k++;
      if (at) at[n] = s + start, lens[n] = k - start;
      n++;
    }
  }
  for (size_t start = 0;;) {
    bool cut = maxsplit < 0 || n < maxsplit;
    const char *hit = NULL;
    for (size_t q = start; cut && q + dl <= len && !hit; q++)
      if (!memcmp(s + q, delim, dl)) hit = s + q;
    size_t end = hit ? (size_t)(hit - s) : len;
    if (at) at[n] = s + start, lens[n] = end - start;
    n++;
    if (!hit) return n;
    start = end + dl;
  }
}

/* StringSplit: each string's pieces along a new last axis as long as the most pieces (padded with
 * empty strings), and each one's count. */
static bool bind_string_split(om_bind *b) {
  const om_strings *x = str_input(b, 0);
  const char *delim;
  int64_t maxsplit, most = 0;
  if (!x || !attr_s(b, "delimiter", "", &delim) || !attr_i(b, "maxsplit", -1, &maxsplit)) return false;
  if (x->ndim == OM_MAX_DIMS) return om__fail(OM_ERR_UNSUPPORTED, "%s (StringSplit): the output would have more than %d dims", who(b), OM_MAX_DIMS);
  om_meta m = {.dtype = OM_INT64, .ndim = x->ndim};
  memcpy(m.shape, x->shape, sizeof m.shape);
  om_tensor *counts = om__tensor_new(&m, false, "StringSplit");
  int64_t *c = counts ? (int64_t *)om__data(counts) : NULL;
  uint64_t bytes = 0;
  for (int64_t k = 0; c && k < x->n; k++) {
    c[k] = split_pieces(x->s[k], x->len[k], *delim ? delim : NULL, maxsplit, NULL, NULL);
    most = c[k] > most ? c[k] : most;
    bytes += x->len[k];
  }
  m.shape[m.ndim++] = most;
  bool ok = counts && (most == 0 || (uint64_t)x->n <= (uint64_t)OM_STRINGS_MAX / (uint64_t)most);
  if (counts && !ok) ok = om__fail(OM_ERR_OUT_OF_MEMORY, "%s (StringSplit): %lld strings of up to %lld pieces", who(b), (long long)x->n, (long long)most);
  om_strings *t = ok ? om__strings_alloc(m.ndim, m.shape, bytes, "StringSplit") : NULL;
  const char **at = t ? om__alloc(sizeof(char *) * (uint64_t)(most + 1), "StringSplit") : NULL;
  size_t *lens = at ? om__alloc(sizeof(size_t) * (uint64_t)(most + 1), "StringSplit") : NULL;
  for (int64_t k = 0; lens && k < x->n; k++) {
    split_pieces(x->s[k], x->len[k], *delim ? delim : NULL, maxsplit, at, lens);
    for (int64_t q = 0; q < most; q++) om__strings_put(t, k * most + q, q < c[k] ? at[q] : "", q < c[k] ? lens[q] : 0);
  }
  ok = lens != NULL;
  free(at), free(lens);
  if (!ok) om_strings_release(t), t = NULL;
  if (!put_strings(b, 0, t)) return om_tensor_release(counts), false;
  return put(b, 1, counts);
}

/* RegexFullMatch: whether each string matches all of pattern (src/runtime/regex.c's RE2 subset). */
static bool bind_regex_full_match(om_bind *b) {
  const om_strings *x = str_input(b, 0);
  const char *pattern;
  if (!x || !attr_s(b, "pattern", NULL, &pattern)) return false;
  if (!pattern) return om__fail(OM_ERR_FORMAT, "%s (RegexFullMatch): attribute pattern is missing", who(b));
  om_regex *re = om__regex_compile(pattern, who(b));
  om_meta m = {.dtype = OM_BOOL, .ndim = x->ndim};
  memcpy(m.shape, x->shape, sizeof m.shape);
  om_tensor *r = re ? om__tensor_new(&m, false, "RegexFullMatch") : NULL;
  uint8_t *o = r ? (uint8_t *)om__data(r) : NULL;
  for (int64_t k = 0; o && k < x->n; k++) {
    int hit = om__regex_full_match(re, x->s[k], x->len[k]);
    if (hit < 0) om_tensor_release(r), r = NULL, o = NULL;
    else o[k] = (uint8_t)hit;
  }
  om__regex_free(re);
  return put(b, 0, r);
}


/* ---- TfIdfVectorizer ---- */

/* Pool n-grams q and r (n items each from at) in order: their items, then their place in the pool. */
static bool gram_before(const int64_t *at, int64_t n, int64_t q, int64_t r) {
  for (int64_t t = 0; t < n; t++)
    if (at[q * n + t] != at[r * n + t]) return at[q * n + t] < at[r * n + t];
  return q < r;
}

/* A pool n-gram of n items (count of them from at) that repeats an earlier one: its number, or -1
 * (onnxruntime refuses such a pool; ONNX's reference would count it in the last one's column).
 * order and scratch (count each) for a merge sort: O(count log count). */
static int64_t repeated_gram(const int64_t *at, int64_t n, int64_t count, int64_t *order, int64_t *scratch) {
  for (int64_t q = 0; q < count; q++) order[q] = q;
  for (int64_t w = 1; w < count; w *= 2) {
    for (int64_t lo = 0; lo < count; lo += 2 * w) {
      int64_t mid = lo + w < count ? lo + w : count, hi = lo + 2 * w < count ? lo + 2 * w : count, i = lo, j = mid, k = lo;
      while (i < mid || j < hi) scratch[k++] = j >= hi || (i < mid && gram_before(at, n, order[i], order[j])) ? order[i++] : order[j++];
    }
    memcpy(order, scratch, sizeof *order * (size_t)count);
  }
  for (int64_t q = 0; q + 1 < count; q++) /* equal n-grams are adjacent */
    if (!memcmp(at + order[q] * n, at + order[q + 1] * n, sizeof *at * (size_t)n)) return order[q + 1];
  return -1;
}

/* How often each of the pool's n-grams of n items (grams [G, n], their output columns cols [G])
 * occurs in x [R, C]: items d apart (d = 1 to skip + 1; unigrams once), as [R, G] float32. */
static om_tensor *gram_counts(om_tensor *x, om_tensor *grams, int64_t n, int64_t skip) {
  int64_t R = x->shape[0], C = x->shape[1], G = grams->shape[0];
  om_tensor *total = NULL;
  for (int64_t d = 1; d <= (n == 1 ? 1 : skip + 1) && C - (n - 1) * d > 0; d++) {
    int64_t P = C - (n - 1) * d;
    om_scope s = {0};
    om_tensor *hit = NULL;
    for (int64_t t = 0; t < n; t++) { /* item t of every window against item t of every n-gram: [R, P, G] */
      om_tensor *win = om__keep(&s, om_reshape(om__keep(&s, om_slice(x, 1, t * d, t * d + P, 1)), (int64_t[]){R, P, 1}, 3));
      om_tensor *item = om__keep(&s, om_reshape(om__keep(&s, om_select(grams, 1, t)), (int64_t[]){1, 1, G}, 3));
      om_tensor *eq = win && item ? om__keep(&s, om_eq(win, item)) : NULL;
      hit = !eq ? NULL : hit ? om__keep(&s, om_logical_and(hit, eq)) : eq;
      if (!hit) break;
    }
    om_tensor *c = hit ? om_sum(om__keep(&s, om_cast(hit, OM_FLOAT32)), (int64_t[]){1}, 1, false) : NULL;
    total = !c ? then(total, NULL) : total ? then(total, om_add(total, om__keep(&s, c))) : c;
    om__scope_end(&s);
    if (!total) return NULL;
  }
  return total ? total : om_zeros((int64_t[]){R, G}, 2, OM_FLOAT32);
}

/* TfIdfVectorizer of x (int64 [C] or [R, C]; strings: their ids among the pool's, -1 outside it)
 * whose pool is n_pool items (ids likewise): per n-gram length in [min_gram_length,
 * max_gram_length] the pool's n-grams counted (gram_counts) and added into their output columns
 * (scatter_add); then TF the counts, IDF the weight where the count is not 0, TFIDF the count
 * times the weight. */
static bool tfidf(om_bind *b, om_tensor *x, const int64_t *pool, int64_t n_pool) {
  int64_t min_n, max_n, skip;
  const char *mode;
  const om_gattr *counts = attr(b, "ngram_counts"), *cols = attr(b, "ngram_indexes"), *weights = attr(b, "weights");
  if (!attr_i(b, "min_gram_length", 1, &min_n) || !attr_i(b, "max_gram_length", 1, &max_n) || !attr_i(b, "max_skip_count", 0, &skip) ||
      !attr_s(b, "mode", "", &mode) || (counts && !attr_type(b, counts, OM_GATTR_INTS)) || (cols && !attr_type(b, cols, OM_GATTR_INTS)) ||
      (weights && !attr_type(b, weights, OM_GATTR_FLOATS)))
    return false;
  int how = !strcmp(mode, "TF") ? 1 : !strcmp(mode, "IDF") ? 2 : !strcmp(mode, "TFIDF") ? 3 : 0;
  if (!how) return om__fail(OM_ERR_FORMAT, "%s (TfIdfVectorizer): mode '%s' (TF, IDF or TFIDF)", who(b), mode);
  if (!counts || !cols || cols->n < 1 || min_n < 1 || min_n > max_n || max_n > LIMIT || skip < 0 || skip > LIMIT)
    return om__fail(OM_ERR_FORMAT, "%s (TfIdfVectorizer): ngram_counts and ngram_indexes must be given, and 1 <= min_gram_length <= max_gram_length, "
                    "max_skip_count >= 0", who(b));
  int64_t size = 0, grams = 0;
  for (int k = 0; k < counts->n; k++) {
    int64_t end = k + 1 < counts->n ? counts->ints[k + 1] : n_pool;
    if (counts->ints[k] < 0 || end < counts->ints[k] || end > n_pool)
      return om__fail(OM_ERR_FORMAT, "%s (TfIdfVectorizer): ngram_counts must ascend within the pool's %lld items", who(b), (long long)n_pool);
    grams += (end - counts->ints[k]) / (k + 1);
  }
  for (int k = 0; k < cols->n; k++) {
    if (cols->ints[k] < 0 || cols->ints[k] >= LIMIT) return om__fail(OM_ERR_FORMAT, "%s (TfIdfVectorizer): ngram_indexes holds %lld (0 to below 2^30)", who(b), (long long)cols->ints[k]);
    size = cols->ints[k] + 1 > size ? cols->ints[k] + 1 : size;
  }
  if (grams > cols->n || (weights && weights->n != size))
    return om__fail(OM_ERR_FORMAT, "%s (TfIdfVectorizer): the pool holds %lld n-grams for %d ngram_indexes, and weights must have one per output column (%lld)",
                    who(b), (long long)grams, cols->n, (long long)size);
  if (x->ndim > 2 || (x->ndim == 2 && x->shape[0] < 1))
    return om__fail(OM_ERR_SHAPE_MISMATCH, "%s (TfIdfVectorizer): the input must be [C] or [N, C] with N at least 1", who(b));
  int64_t R = x->ndim == 2 ? x->shape[0] : 1, C = x->ndim == 2 ? x->shape[1] : om_tensor_numel(x);
  om_scope s = {0};
  om_tensor *xr = om__keep(&s, om_reshape(x, (int64_t[]){R, C}, 2)), *y = om__keep(&s, om_zeros((int64_t[]){R, size}, 2, OM_FLOAT32));
  int64_t *order = om__alloc(sizeof(int64_t) * 2 * (size_t)(n_pool + 1), "TfIdfVectorizer"), *scratch = order ? order + n_pool + 1 : NULL;
  bool ok = xr && y && order;
  for (int64_t k = 0, first = 0; ok && k < counts->n; k++) { /* n-grams of k + 1 items, numbered on from first */
    int64_t n = k + 1, at = counts->ints[k], G = ((k + 1 < counts->n ? counts->ints[k + 1] : n_pool) - at) / n, again;
    if (G && n >= min_n && n <= max_n && (again = repeated_gram(pool + at, n, G, order, scratch)) >= 0)
      ok = om__fail(OM_ERR_FORMAT, "%s (TfIdfVectorizer): pool n-gram %lld of %lld items repeats an earlier one", who(b), (long long)again, (long long)n);
    else if (G && n >= min_n && n <= max_n && C) {
      om_tensor *g = om__keep(&s, om__tensor_new(&(om_meta){.dtype = OM_INT64, .ndim = 2, .shape = {G, n}}, false, "TfIdfVectorizer"));
      om_tensor *c = om__keep(&s, om__tensor_new(&(om_meta){.dtype = OM_INT64, .ndim = 2, .shape = {1, G}}, false, "TfIdfVectorizer"));
      if (g && c) memcpy(om__data(g), pool + at, sizeof(int64_t) * (size_t)(G * n)), memcpy(om__data(c), cols->ints + first, sizeof(int64_t) * (size_t)G);
      om_tensor *hits = g && c ? om__keep(&s, gram_counts(xr, g, n, skip)) : NULL;
      om_tensor *where = hits ? om__keep(&s, om_expand(c, (int64_t[]){R, G}, 2)) : NULL;
      ok = where && (y = om__keep(&s, om_scatter_add(y, 1, where, hits))) != NULL;
    }
    first += G;
  }
  free(order);
  om_tensor *w = ok && weights ? om__keep(&s, om_from_data(weights->floats, &size, 1, OM_FLOAT32)) : NULL;
  if (ok && how == 2) { /* IDF: the weight (1 without weights) where the count is not 0 */
    om_tensor *seen = om__keep(&s, om_cast(om__keep(&s, om_ne(y, om__keep(&s, om_scalar(0, OM_FLOAT32)))), OM_FLOAT32));
    y = seen && w ? om__keep(&s, om_mul(seen, w)) : seen;
  } else if (ok && how == 3 && w) {
    y = om__keep(&s, om_mul(y, w));
  } else if (ok && weights && !w) {
    y = NULL;
  }
  if (y && x->ndim < 2) y = om__keep(&s, om_reshape(y, &size, 1));
  ok = ok && put(b, 0, om_tensor_retain(y));
  om__scope_end(&s);
  return ok;
}

/* TfIdfVectorizer of integers: the pool's pool_int64s. */
static bool bind_tfidf_vectorizer(om_bind *b) {
  const om_gattr *pool = attr(b, "pool_int64s");
  if (!pool || !attr_type(b, pool, OM_GATTR_INTS)) return pool ? false : om__fail(OM_ERR_FORMAT, "%s (TfIdfVectorizer): an integer input needs pool_int64s", who(b));
  if (b->in[0]->dtype != OM_INT64) return om__fail(OM_ERR_FORMAT, "%s (TfIdfVectorizer): the input must be strings or integers", who(b));
  return tfidf(b, b->in[0], pool->ints, pool->n);
}

/* TfIdfVectorizer of strings: each string (of the input and of pool_strings) as the place of its
 * first copy in the pool (-1 outside it; a quadratic search of the pool, once per plan), then as
 * integers. */
static bool tfidf_vectorizer_strings(om_bind *b) {
  const om_strings *x = str_input(b, 0);
  const om_gattr *pool = attr(b, "pool_strings");
  if (!x) return false;
  if (!pool || !attr_type(b, pool, OM_GATTR_STRINGS)) return pool ? false : om__fail(OM_ERR_FORMAT, "%s (TfIdfVectorizer): a string input needs pool_strings", who(b));
  om_meta m = {.dtype = OM_INT64, .ndim = x->ndim};
  memcpy(m.shape, x->shape, sizeof m.shape);
  om_tensor *ids = om__tensor_new(&m, false, "TfIdfVectorizer");
  int64_t *pool_ids = ids ? om__alloc(sizeof(int64_t) * ((size_t)pool->n + 1), "TfIdfVectorizer") : NULL;
  for (int k = 0; pool_ids && k < pool->n; k++) {
    pool_ids[k] = k;
    for (int j = 0; j < k && pool_ids[k] == k; j++)
      if (!strcmp(pool->strs[j], pool->strs[k])) pool_ids[k] = j;
  }
  for (int64_t i = 0; pool_ids && i < x->n; i++) {
    int64_t *id = (int64_t *)om__data(ids) + i;
    *id = -1;
    for (int k = 0; k < pool->n && *id < 0; k++)
      if (strlen(pool->strs[k]) == x->len[i] && !memcmp(pool->strs[k], x->s[i], x->len[i])) *id = k;
  }
  bool ok = pool_ids && tfidf(b, ids, pool_ids, pool->n);
  free(pool_ids);
  om_tensor_release(ids);
  return ok;
}

/* ---- ai.onnx.ml (the reader names its op types "ai.onnx.ml.<op>") ---- */

/* Binarizer: 1 where x > threshold, else 0, in x's type (NaN is not above it: 0). An integer is
 * above the threshold exactly when it is above its floor. */
static bool bind_ml_binarizer(om_bind *b) {
  double th;
  om_tensor *x = b->in[0];
  if (!attr_f(b, "threshold", 0, &th)) return false;
  if (x->dtype == OM_BOOL) return om__fail(OM_ERR_FORMAT, "%s (Binarizer): the input must be numbers", who(b));
  om_scope s = {0};
  om_tensor *above = om__keep(&s, om_gt(x, om__keep(&s, om_scalar(x->dtype == OM_INT64 ? floor(th) : th, x->dtype))));
  bool ok = put(b, 0, above ? om_cast(above, x->dtype) : NULL);
  om__scope_end(&s);
  return ok;
}

/* ArrayFeatureExtractor: the last axis's elements that y (int64, any shape) names, in its
 * order: [..., numel(y)]; a 1-D x is [1, n] first (onnxruntime's). An index outside the axis is
 * index_select's IndexOutOfRange. */
static bool bind_ml_array_feature_extractor(om_bind *b) {
  om_tensor *x = b->in[0], *y = b->in[1];
  if (y->dtype != OM_INT64) return om__fail(OM_ERR_FORMAT, "%s (ArrayFeatureExtractor): the indices must be int64", who(b));
  if (x->ndim < 1) return om__fail(OM_ERR_SHAPE_MISMATCH, "%s (ArrayFeatureExtractor): the input has no axis", who(b));
  int64_t n = om_tensor_numel(y);
  om_scope s = {0};
  om_tensor *x2 = x->ndim == 1 ? om__keep(&s, om_reshape(x, (int64_t[]){1, x->shape[0]}, 2)) : x, *flat = om__keep(&s, om_reshape(y, &n, 1));
  bool ok = put(b, 0, x2 && flat ? om_index_select(x2, x2->ndim - 1, flat) : NULL);
  om__scope_end(&s);
  return ok;
}

/* LabelEncoder's keys and values: from keys_* / values_* (opset 2), keys_tensor / values_tensor
 * (opset 4) or opset 1's classes_strings (string keys, their indices the values); the default
 * from default_* (default_int64 -1, default_float -0.0 as ONNX's). Numbers as double, strings as
 * the attribute's. */
typedef struct ml_map {
  int n;
  const char *const *keys_s; /* string keys, or NULL */
  double *keys, *values, def; /* number keys (or NULL), the values, the default */
  om_dtype dtype;             /* the values' */
} ml_map;

/* Attribute a (INTS, FLOATS or a numeric TENSOR) as n doubles into a new array (*out); its dtype. */
static bool ml_numbers(om_bind *b, const om_gattr *a, double **out, int *n, om_dtype *dtype) {
  int64_t count = a->type == OM_GATTR_TENSOR ? om_tensor_numel(a->t) : a->n;
  if (a->type != OM_GATTR_INTS && a->type != OM_GATTR_FLOATS && a->type != OM_GATTR_TENSOR)
    return om__fail(OM_ERR_UNSUPPORTED, "%s (LabelEncoder): attribute %s of strings (string values are not taken yet)", who(b), a->name);
  if (count > INT32_MAX) return om__fail(OM_ERR_FORMAT, "%s (LabelEncoder): attribute %s is too long", who(b), a->name);
  double *v = om__alloc(sizeof(double) * (size_t)(count + 1), "LabelEncoder");
  if (!v) return false;
  for (int64_t k = 0; k < count; k++)
    v[k] = a->type == OM_GATTR_INTS ? (double)a->ints[k] : a->type == OM_GATTR_FLOATS ? (double)a->floats[k] : om__get_flat(a->t, k);
  *out = v, *n = (int)count;
  *dtype = a->type == OM_GATTR_INTS ? OM_INT64 : a->type == OM_GATTR_FLOATS ? OM_FLOAT32 : a->t->dtype;
  return true;
}

static bool ml_map_read(om_bind *b, ml_map *m) {
  const om_gattr *ks = attr(b, "keys_strings"), *ki = attr(b, "keys_int64s"), *kf = attr(b, "keys_floats"), *kt = attr(b, "keys_tensor");
  const om_gattr *vs = attr(b, "values_strings"), *vi = attr(b, "values_int64s"), *vf = attr(b, "values_floats"), *vt = attr(b, "values_tensor");
  const om_gattr *cl = attr(b, "classes_strings");
  *m = (ml_map){0};
  if (cl) { /* opset 1: strings to their index, or back (not taken) */
    if (!attr_type(b, cl, OM_GATTR_STRINGS)) return false;
    if (b->seq_in[0] && b->seq_in[0]->str) {
      m->n = cl->n, m->keys_s = cl->strs, m->dtype = OM_INT64;
      if (!(m->values = om__alloc(sizeof(double) * (size_t)(cl->n + 1), "LabelEncoder"))) return false;
      for (int k = 0; k < cl->n; k++) m->values[k] = k;
      int64_t d;
      return attr_i(b, "default_int64", -1, &d) && (m->def = (double)d, true);
    }
    return om__fail(OM_ERR_UNSUPPORTED, "%s (LabelEncoder): integers to classes_strings (string values are not taken yet)", who(b));
  }
  const om_gattr *key = ks ? ks : ki ? ki : kf ? kf : kt, *val = vs ? vs : vi ? vi : vf ? vf : vt;
  if (!key || !val || (!!ks + !!ki + !!kf + !!kt) != 1 || (!!vs + !!vi + !!vf + !!vt) != 1)
    return om__fail(OM_ERR_FORMAT, "%s (LabelEncoder): give exactly one keys_* and one values_* attribute", who(b));
  int nk = 0, nv = 0;
  om_dtype kd;
  if (key == ks || (key == kt && kt->type == OM_GATTR_STRINGS)) { /* keys_tensor of strings: the reader's STRINGS */
    if (!attr_type(b, key, OM_GATTR_STRINGS)) return false;
    m->keys_s = key->strs, nk = key->n;
  } else if (!ml_numbers(b, key, &m->keys, &nk, &kd)) {
    return false;
  }
  if (!ml_numbers(b, val, &m->values, &nv, &m->dtype)) return false;
  if (nk != nv) return om__fail(OM_ERR_FORMAT, "%s (LabelEncoder): %d keys for %d values", who(b), nk, nv);
  m->n = nk;
  if (m->dtype == OM_BOOL) return om__fail(OM_ERR_UNSUPPORTED, "%s (LabelEncoder): bool values", who(b));
  const om_gattr *dt = attr(b, "default_tensor");
  if (dt) {
    if (!attr_type(b, dt, OM_GATTR_TENSOR)) return false;
    if (om_tensor_numel(dt->t) != 1) return om__fail(OM_ERR_FORMAT, "%s (LabelEncoder): default_tensor must hold one value", who(b));
    m->def = om__get_flat(dt->t, 0);
  } else if (m->dtype == OM_INT64) {
    int64_t d;
    if (!attr_i(b, "default_int64", -1, &d)) return false;
    m->def = (double)d;
  } else {
    if (!attr_f(b, "default_float", -0.0, &m->def)) return false;
  }
  return true;
}

static void ml_map_free(ml_map *m) { free(m->keys), free(m->values); }

/* LabelEncoder of numbers: from the default, each key's value where x equals it (the first key
 * of a repeated one wins: the keys applied last to first). */
static bool bind_ml_label_encoder(om_bind *b) {
  ml_map m;
  om_tensor *x = b->in[0];
  if (!ml_map_read(b, &m)) return ml_map_free(&m), false;
  bool ok = m.keys != NULL || om__fail(OM_ERR_FORMAT, "%s (LabelEncoder): string keys for an input of numbers", who(b));
  om_scope s = {0};
  om_tensor *y = ok ? om__keep(&s, om_full(x->shape, x->ndim, m.dtype, m.def)) : NULL;
  for (int k = m.n - 1; y && k >= 0; k--) {
    om_tensor *hit = om__keep(&s, om_eq(x, om__keep(&s, om_scalar(m.keys[k], x->dtype))));
    y = hit ? om__keep(&s, om_where(hit, om__keep(&s, om_scalar(m.values[k], m.dtype)), y)) : NULL;
  }
  ok = ok && put(b, 0, om_tensor_retain(y));
  om__scope_end(&s);
  ml_map_free(&m);
  return ok;
}

/* LabelEncoder of strings (known when planning): each the value of the first key equal to it,
 * else the default. */
static bool ml_label_encoder_strings(om_bind *b) {
  const om_strings *x = str_input(b, 0);
  ml_map m;
  if (!x) return false;
  if (!ml_map_read(b, &m)) return ml_map_free(&m), false;
  bool ok = m.keys_s != NULL || om__fail(OM_ERR_FORMAT, "%s (LabelEncoder): number keys for an input of strings", who(b));
  om_meta meta = {.dtype = m.dtype, .ndim = x->ndim};
  memcpy(meta.shape, x->shape, sizeof meta.shape);
  om_tensor *y = ok ? om__tensor_new(&meta, false, "LabelEncoder") : NULL;
  for (int64_t i = 0; y && i < x->n; i++) {
    double v = m.def;
    for (int k = 0; k < m.n; k++)
      if (strlen(m.keys_s[k]) == x->len[i] && !memcmp(m.keys_s[k], x->s[i], x->len[i])) {
        v = m.values[k];
        break;
      }
    if (m.dtype == OM_INT64) ((int64_t *)om__data(y))[i] = (int64_t)v;
    else if (m.dtype == OM_FLOAT64) ((double *)om__data(y))[i] = v;
    else ((float *)om__data(y))[i] = (float)v;
  }
  ml_map_free(&m);
  return put(b, 0, ok ? y : NULL);
}

/* ---- ai.onnx.ml's models: Scaler, Normalizer, Imputer, the linear models, the tree ensembles ----
 * onnxruntime's kernels take X as [C] or [N, C] (features on the last axis); where a per-feature
 * attribute or a batch of rows is involved these rules do too. Scores are float32, as ONNX ML
 * defines them (an integer input converted to float first, as onnxruntime's kernels do). */

/* Attribute a (FLOATS or INTS) as a [n] tensor of dtype d: one value, or one per feature of x (the
 * last axis of [C] or [N, C]). */
static om_tensor *ml_per_feature(om_bind *b, om_scope *s, const om_gattr *a, const om_tensor *x, om_dtype d) {
  if (a->type != OM_GATTR_FLOATS && a->type != OM_GATTR_INTS) return attr_type(b, a, OM_GATTR_FLOATS), NULL;
  int64_t n = a->n, C = x->ndim ? x->shape[x->ndim - 1] : 1;
  if (n < 1) return om__fail(OM_ERR_FORMAT, "%s (%s): attribute %s is empty", who(b), b->node->op_type, a->name), NULL;
  if (n != 1 && (x->ndim < 1 || x->ndim > 2 || n != C))
    return om__fail(OM_ERR_SHAPE_MISMATCH, "%s (%s): attribute %s has %lld values for an input of %d axes and %lld features (one value, or one per "
                    "feature of [C] or [N, C])", who(b), b->node->op_type, a->name, (long long)n, x->ndim, (long long)C), NULL;
  om_tensor *t = om__keep(s, a->type == OM_GATTR_FLOATS ? om_from_data(a->floats, &n, 1, OM_FLOAT32) : om_from_data(a->ints, &n, 1, OM_INT64));
  return t ? om__keep(s, om_cast(t, d)) : NULL;
}

/* x as the float32 rows a model scores: [C] as [1, C], [N, C] itself; other ranks and bool refused. */
static om_tensor *ml_rows(om_bind *b, om_scope *s, om_tensor *x) {
  if (x->dtype == OM_BOOL) return om__fail(OM_ERR_FORMAT, "%s (%s): the input must be numbers", who(b), b->node->op_type), NULL;
  if (x->ndim < 1 || x->ndim > 2)
    return om__fail(OM_ERR_SHAPE_MISMATCH, "%s (%s): the input has %d axes; it takes [C] or [N, C]", who(b), b->node->op_type, x->ndim), NULL;
  om_tensor *f = om__keep(s, om_cast(x, OM_FLOAT32));
  return f && x->ndim == 1 ? om__keep(s, om_reshape(f, (int64_t[]){1, x->shape[0]}, 2)) : f;
}

/* Scaler: (x - offset) * scale as float32, offset and scale one value or one per feature (a double
 * computed in double and rounded once, as onnxruntime's; an integer converted to float first). */
static bool bind_ml_scaler(om_bind *b) {
  om_tensor *x = b->in[0];
  const om_gattr *sc = attr(b, "scale"), *of = attr(b, "offset");
  if (x->dtype == OM_BOOL) return om__fail(OM_ERR_FORMAT, "%s (Scaler): the input must be numbers", who(b));
  if (!sc || (of && of->n != sc->n)) return om__fail(OM_ERR_FORMAT, "%s (Scaler): give scale, and offset of the same length if any", who(b));
  om_dtype d = x->dtype == OM_FLOAT64 ? OM_FLOAT64 : OM_FLOAT32;
  om_scope s = {0};
  om_tensor *xd = om__keep(&s, om_cast(x, d)), *scale = ml_per_feature(b, &s, sc, x, d), *offset = of && scale ? ml_per_feature(b, &s, of, x, d) : NULL;
  om_tensor *c = xd && scale && (!of || offset) ? (of ? om__keep(&s, om_sub(xd, offset)) : xd) : NULL, *y = c ? om__keep(&s, om_mul(c, scale)) : NULL;
  bool ok = put(b, 0, y ? om_cast(y, OM_FLOAT32) : NULL);
  om__scope_end(&s);
  return ok;
}

/* Normalizer: each row (the last axis of [C] or [N, C]) divided by its MAX, L1 or L2 norm, as
 * float32; a row whose norm is 0 is kept (onnxruntime's). L2 is sign(x) sqrt(x^2 / sum x^2), its
 * formula. */
static bool bind_ml_normalizer(om_bind *b) {
  const char *norm;
  if (!attr_s(b, "norm", "MAX", &norm)) return false;
  int mode = !strcmp(norm, "MAX") ? 0 : !strcmp(norm, "L1") ? 1 : !strcmp(norm, "L2") ? 2 : -1;
  if (mode < 0) return om__fail(OM_ERR_FORMAT, "%s (Normalizer): norm '%s' (MAX, L1 or L2)", who(b), norm);
  om_scope s = {0};
  om_tensor *x = ml_rows(b, &s, b->in[0]), *sq = x && mode == 2 ? om__keep(&s, om_mul(x, x)) : NULL, *z = NULL;
  int64_t last = 1;
  if (x && mode == 0) z = om__keep(&s, om_amax(x, &last, 1, true));
  else if (x && mode == 1) z = om__keep(&s, om_sum(om__keep(&s, om_abs(x)), &last, 1, true));
  else if (sq) z = om__keep(&s, om_sum(sq, &last, 1, true));
  om_tensor *zero = z ? om__keep(&s, om_eq(z, om__keep(&s, om_scalar(0, OM_FLOAT32)))) : NULL;
  om_tensor *safe = zero ? om__keep(&s, om_where(zero, om__keep(&s, om_scalar(1, OM_FLOAT32)), z)) : NULL, *y = NULL;
  if (safe && mode < 2) y = om__keep(&s, om_div(x, safe));
  if (safe && mode == 2) {
    om_tensor *r = om__keep(&s, om_sqrt(om__keep(&s, om_div(sq, safe))));
    om_tensor *neg = r ? om__keep(&s, om_lt(x, om__keep(&s, om_scalar(0, OM_FLOAT32)))) : NULL;
    om_tensor *signed_r = neg ? om__keep(&s, om_where(neg, om__keep(&s, om_neg(r)), r)) : NULL;
    y = signed_r ? om__keep(&s, om_where(zero, x, signed_r)) : NULL;
  }
  bool ok = put(b, 0, y ? om_reshape(y, b->in[0]->shape, b->in[0]->ndim) : NULL);
  om__scope_end(&s);
  return ok;
}

/* Imputer: the elements equal to the replaced value (NaN: every NaN) become the imputed one (one
 * value, or one per feature), in x's type: imputed_value_floats for floats, _int64s for integers. */
static bool bind_ml_imputer(om_bind *b) {
  om_tensor *x = b->in[0];
  bool fl = x->dtype == OM_FLOAT32 || x->dtype == OM_FLOAT64;
  const om_gattr *vf = attr(b, "imputed_value_floats"), *vi = attr(b, "imputed_value_int64s"), *v = fl ? vf : vi;
  if (x->dtype == OM_BOOL) return om__fail(OM_ERR_FORMAT, "%s (Imputer): the input must be numbers", who(b));
  if (!v || (vf && vi))
    return om__fail(OM_ERR_FORMAT, "%s (Imputer): an input of %s takes imputed_value_%s (and not the other)", who(b), om_dtype_name(x->dtype),
                    fl ? "floats" : "int64s");
  double rf;
  int64_t ri;
  if (!attr_f(b, "replaced_value_float", 0, &rf) || !attr_i(b, "replaced_value_int64", 0, &ri)) return false;
  om_scope s = {0};
  om_tensor *imp = ml_per_feature(b, &s, v, x, x->dtype), *hit = NULL;
  if (imp && fl && isnan(rf)) hit = om__keep(&s, om_ne(x, x));
  else if (imp) hit = om__keep(&s, om_eq(x, om__keep(&s, fl ? om_scalar(rf, x->dtype) : i64(ri))));
  bool ok = put(b, 0, hit ? om_where(hit, imp, x) : NULL);
  om__scope_end(&s);
  return ok;
}

/* post_transform of scores [N, E]: NONE, LOGISTIC, SOFTMAX or SOFTMAX_ZERO (a softmax over the
 * scores not within 1e-7 of zero; those are scaled by e^-max, onnxruntime's). PROBIT is refused,
 * and any transform of a single score column: onnxruntime then leaves the score as it is. */
static om_tensor *ml_post(om_bind *b, om_scope *s, om_tensor *z) {
  const char *pt;
  if (!z || !attr_s(b, "post_transform", "NONE", &pt)) return NULL;
  if (!strcmp(pt, "NONE")) return z;
  if (strcmp(pt, "LOGISTIC") && strcmp(pt, "SOFTMAX") && strcmp(pt, "SOFTMAX_ZERO") && strcmp(pt, "PROBIT"))
    return om__fail(OM_ERR_FORMAT, "%s (%s): post_transform '%s'", who(b), b->node->op_type, pt), NULL;
  if (!strcmp(pt, "PROBIT")) return unsupported(b, "post_transform PROBIT"), NULL;
  if (z->shape[1] == 1) return unsupported(b, "a post_transform of one score column (onnxruntime leaves it untransformed)"), NULL;
  if (!strcmp(pt, "LOGISTIC")) return om__keep(s, om_sigmoid(z));
  if (!strcmp(pt, "SOFTMAX")) return om__keep(s, om_softmax(z, 1));
  int64_t last = 1;
  om_tensor *m = om__keep(s, om_amax(z, &last, 1, true)), *e = m ? om__keep(s, om_exp(om__keep(s, om_sub(z, m)))) : NULL;
  om_tensor *nz = om__keep(s, om_gt(om__keep(s, om_abs(z)), om__keep(s, om_scalar(1e-7, OM_FLOAT32))));
  om_tensor *small = m ? om__keep(s, om_mul(z, om__keep(s, om_exp(om__keep(s, om_neg(m)))))) : NULL;
  om_tensor *num = e && nz && small ? om__keep(s, om_where(nz, e, small)) : NULL;
  om_tensor *den = num ? om__keep(s, om_sum(om__keep(s, om_where(nz, e, om__keep(s, om_scalar(0, OM_FLOAT32)))), &last, 1, true)) : NULL;
  return den ? om__keep(s, om_div(num, den)) : NULL;
}

/* x [N, C] (float32) times coefficients [E, C] (row-major in the attribute) plus intercepts [E] (or
 * none): the scores [N, E]. */
static om_tensor *ml_linear(om_bind *b, om_scope *s, om_tensor *x, int64_t E, const om_gattr *in) {
  const om_gattr *co = attr(b, "coefficients");
  if (!x) return NULL;
  if (!co || !attr_type(b, co, OM_GATTR_FLOATS)) return co ? NULL : (om__fail(OM_ERR_FORMAT, "%s (%s): coefficients are missing", who(b), b->node->op_type), NULL);
  if (in && !attr_type(b, in, OM_GATTR_FLOATS)) return NULL;
  int64_t C = x->shape[1];
  if (E < 1 || co->n != E * C || (in && in->n != E))
    return om__fail(OM_ERR_SHAPE_MISMATCH, "%s (%s): %d coefficients and %d intercepts for %lld outputs of %lld features", who(b), b->node->op_type, co->n,
                    in ? in->n : 0, (long long)E, (long long)C), NULL;
  int64_t n = co->n;
  om_tensor *w = om__keep(s, om_from_data(co->floats, &n, 1, OM_FLOAT32)), *w2 = w ? om__keep(s, om_reshape(w, (int64_t[]){E, C}, 2)) : NULL;
  om_tensor *bias = in ? om__keep(s, om_from_data(in->floats, &E, 1, OM_FLOAT32)) : NULL;
  return w2 && (!in || bias) ? om__keep(s, om_linear(x, w2, bias)) : NULL;
}

/* LinearRegressor: Y [N, targets] = X coefficients^T + intercepts, then post_transform. */
static bool bind_ml_linear_regressor(om_bind *b) {
  int64_t E;
  if (!attr_i(b, "targets", 1, &E)) return false;
  if (E < 1 || E > LIMIT) return om__fail(OM_ERR_FORMAT, "%s (LinearRegressor): targets %lld", who(b), (long long)E);
  om_scope s = {0};
  bool ok = put(b, 0, om_tensor_retain(ml_post(b, &s, ml_linear(b, &s, ml_rows(b, &s, b->in[0]), E, attr(b, "intercepts")))));
  om__scope_end(&s);
  return ok;
}

/* LinearClassifier: scores [N, E] = X coefficients^T + intercepts (E: the intercepts' count, as
 * onnxruntime reads it), the label of each row's first highest score (classlabels_ints), then the
 * scores' post_transform. One score column (a binary model whose second class onnxruntime makes
 * up) and string labels are refused. */
static bool bind_ml_linear_classifier(om_bind *b) {
  const om_gattr *in = attr(b, "intercepts"), *li = attr(b, "classlabels_ints");
  if (attr(b, "classlabels_strings")) return unsupported(b, "classlabels_strings");
  if (!in || !li || !attr_type(b, in, OM_GATTR_FLOATS) || !attr_type(b, li, OM_GATTR_INTS))
    return in && li ? false : om__fail(OM_ERR_FORMAT, "%s (LinearClassifier): give intercepts and classlabels_ints", who(b));
  if (in->n < 2) return unsupported(b, "one score column (a binary model with one coefficient row)");
  if (li->n != in->n) return om__fail(OM_ERR_FORMAT, "%s (LinearClassifier): %d class labels for %d intercepts", who(b), li->n, in->n);
  om_scope s = {0};
  int64_t n = li->n;
  om_tensor *z = ml_linear(b, &s, ml_rows(b, &s, b->in[0]), in->n, in), *labels = om__keep(&s, om_from_data(li->ints, &n, 1, OM_INT64));
  om_tensor *best = z ? om__keep(&s, om_argmax(z, 1, false)) : NULL;
  bool ok = put(b, 0, best && labels ? om_index_select(labels, 0, best) : NULL);
  if (ok && b->node->n_out > 1) ok = put(b, 1, om_tensor_retain(ml_post(b, &s, z)));
  om__scope_end(&s);
  return ok;
}

/* ---- TreeEnsembleRegressor, TreeEnsembleClassifier ----
 * The trees walked for every row at once with the library's ops: cur [N, trees] holds each row's
 * node in each tree (an index into the nodes as the attributes list them), and every level of the
 * deepest tree one step moves it to the true or false child of its node (a leaf is its own child):
 * index_select of the node's feature, threshold and mode, gather of the feature's value, the
 * comparison, where. Then each leaf's weights per target or class (a dense [nodes, K] table) are
 * summed over the trees. The attributes are checked when planning: a node named twice, a child
 * or a weight's node that is not its tree's, a tree without exactly one root, a cycle, a feature
 * outside the input's are Format errors. */

enum { TREE_LEAF, TREE_LEQ, TREE_LT, TREE_GTE, TREE_GT, TREE_EQ, TREE_NEQ, TREE_MODES };
static const char *const TREE_MODE_NAMES[TREE_MODES] = {"LEAF", "BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE", "BRANCH_GT", "BRANCH_EQ", "BRANCH_NEQ"};

typedef struct tree_key {
  int64_t tree, node;
  int at;
} tree_key;

static int tree_key_cmp(const void *pa, const void *pb) {
  const tree_key *a = pa, *b = pb;
  return a->tree != b->tree ? (a->tree < b->tree ? -1 : 1) : a->node != b->node ? (a->node < b->node ? -1 : 1) : 0;
}

/* The node (tree, node) among the n sorted keys, or -1. */
static int tree_find(const tree_key *keys, int n, int64_t tree, int64_t node) {
  tree_key k = {tree, node, 0}, *hit = bsearch(&k, keys, (size_t)n, sizeof k, tree_key_cmp);
  return hit ? hit->at : -1;
}

/* Attribute `name` (INTS) of exactly n values, or NULL with a Format error (absent: NULL, no error, when optional). */
static const int64_t *tree_ints(om_bind *b, const char *name, int n, bool optional, bool *ok) {
  const om_gattr *a = attr(b, name);
  if (!a) return optional ? NULL : (*ok = om__fail(OM_ERR_FORMAT, "%s (%s): attribute %s is missing", who(b), b->node->op_type, name), NULL);
  if (!attr_type(b, a, OM_GATTR_INTS)) return *ok = false, NULL;
  if (a->n != n) return *ok = om__fail(OM_ERR_FORMAT, "%s (%s): attribute %s has %d values for %d entries", who(b), b->node->op_type, name, a->n, n), NULL;
  return a->ints;
}

/* Numbers attribute `name` (FLOATS) or `name`_as_tensor, n values into v (as double). */
static bool tree_numbers(om_bind *b, const char *name, int n, double *v) {
  char tname[64];
  snprintf(tname, sizeof tname, "%s_as_tensor", name);
  const om_gattr *a = attr(b, name), *t = attr(b, tname);
  if (!a && !t) return om__fail(OM_ERR_FORMAT, "%s (%s): attribute %s is missing", who(b), b->node->op_type, name);
  if (a ? !attr_type(b, a, OM_GATTR_FLOATS) : !attr_type(b, t, OM_GATTR_TENSOR)) return false;
  int64_t count = a ? a->n : om_tensor_numel(t->t);
  if (count != n) return om__fail(OM_ERR_FORMAT, "%s (%s): attribute %s has %lld values for %d entries", who(b), b->node->op_type, a ? name : tname, (long long)count, n);
  for (int k = 0; k < n; k++) v[k] = a ? a->floats[k] : om__get_flat(t->t, k);
  return true;
}

/* A tree ensemble read and checked: per node its feature, threshold, mode, missing-value rule and
 * children (indices; a leaf's both itself); the roots; the depth to walk; the weights per node. */
typedef struct tree_set {
  int M, T, depth, K;
  int64_t *feat, *yes, *no, *root;
  double *thr, *w, *h; /* w: [M, K] the weights, h: [M, K] how many a node has (an output none gives is not scored) */
  uint8_t *mode, *miss;
  bool modes_used[TREE_MODES], any_miss;
} tree_set;

static void tree_set_free(tree_set *e) {
  free(e->feat), free(e->yes), free(e->no), free(e->root), free(e->thr), free(e->w), free(e->h), free(e->mode), free(e->miss);
  *e = (tree_set){0};
}

/* The nodes and the weights (prefix "target" or "class", K targets or classes) of b's node, for an
 * input of C features. */
static bool tree_read(om_bind *b, const char *prefix, int K, int64_t C, tree_set *e) {
  const char *op = b->node->op_type;
  const om_gattr *ta = attr(b, "nodes_treeids"), *wa;
  char name[64];
  *e = (tree_set){.K = K};
  if (!ta || !attr_type(b, ta, OM_GATTR_INTS)) return ta ? false : om__fail(OM_ERR_FORMAT, "%s (%s): attribute nodes_treeids is missing", who(b), op);
  int M = ta->n;
  bool ok = M > 0 || om__fail(OM_ERR_FORMAT, "%s (%s): no nodes", who(b), op);
  const int64_t *tree = ta->ints, *node = ok ? tree_ints(b, "nodes_nodeids", M, false, &ok) : NULL, *fid = ok ? tree_ints(b, "nodes_featureids", M, false, &ok) : NULL;
  const int64_t *tid = ok ? tree_ints(b, "nodes_truenodeids", M, false, &ok) : NULL, *fno = ok ? tree_ints(b, "nodes_falsenodeids", M, false, &ok) : NULL;
  const int64_t *mt = ok ? tree_ints(b, "nodes_missing_value_tracks_true", M, true, &ok) : NULL;
  const om_gattr *ma = ok ? attr(b, "nodes_modes") : NULL;
  if (ok && (!ma || !attr_type(b, ma, OM_GATTR_STRINGS) || ma->n != M))
    ok = ma && ma->type != OM_GATTR_STRINGS ? false : om__fail(OM_ERR_FORMAT, "%s (%s): nodes_modes must give one mode per node (%d)", who(b), op, M);
  snprintf(name, sizeof name, "%s_ids", prefix);
  wa = ok ? attr(b, name) : NULL;
  if (ok && (!wa || !attr_type(b, wa, OM_GATTR_INTS))) ok = wa ? false : om__fail(OM_ERR_FORMAT, "%s (%s): attribute %s is missing", who(b), op, name);
  int W = ok ? wa->n : 0;
  snprintf(name, sizeof name, "%s_treeids", prefix);
  const int64_t *wt = ok ? tree_ints(b, name, W, false, &ok) : NULL;
  snprintf(name, sizeof name, "%s_nodeids", prefix);
  const int64_t *wn = ok ? tree_ints(b, name, W, false, &ok) : NULL, *wid = ok ? wa->ints : NULL;
  tree_key *keys = ok ? om__alloc(sizeof(tree_key) * (size_t)M, op) : NULL;
  double *wv = ok ? om__alloc(sizeof(double) * (size_t)(W + 1), op) : NULL;
  int *seen = ok ? om__alloc(sizeof(int) * (size_t)M, op) : NULL;
  e->feat = ok ? om__alloc(sizeof(int64_t) * (size_t)M, op) : NULL, e->yes = ok ? om__alloc(sizeof(int64_t) * (size_t)M, op) : NULL;
  e->no = ok ? om__alloc(sizeof(int64_t) * (size_t)M, op) : NULL, e->root = ok ? om__alloc(sizeof(int64_t) * (size_t)M, op) : NULL;
  e->thr = ok ? om__alloc(sizeof(double) * (size_t)M, op) : NULL, e->mode = ok ? om__alloc((size_t)M, op) : NULL, e->miss = ok ? om__alloc((size_t)M, op) : NULL;
  if (ok && (uint64_t)M * (uint64_t)K >= ((uint64_t)1 << 26)) ok = om__fail(OM_ERR_OUT_OF_MEMORY, "%s (%s): %d nodes by %d outputs", who(b), op, M, K);
  e->w = ok ? om__alloc(sizeof(double) * (size_t)M * (size_t)K, op) : NULL, e->h = ok ? om__alloc(sizeof(double) * (size_t)M * (size_t)K, op) : NULL;
  ok = ok && keys && wv && seen && e->feat && e->yes && e->no && e->root && e->thr && e->mode && e->miss && e->w && e->h;
  snprintf(name, sizeof name, "%s_weights", prefix);
  ok = ok && tree_numbers(b, "nodes_values", M, e->thr) && tree_numbers(b, name, W, wv);
  for (int k = 0; ok && k < M; k++) keys[k] = (tree_key){tree[k], node[k], k}, seen[k] = 0;
  if (ok) qsort(keys, (size_t)M, sizeof *keys, tree_key_cmp);
  for (int k = 1; ok && k < M; k++)
    if (!tree_key_cmp(&keys[k - 1], &keys[k]))
      ok = om__fail(OM_ERR_FORMAT, "%s (%s): node %lld of tree %lld is given twice", who(b), op, (long long)keys[k].node, (long long)keys[k].tree);
  for (int k = 0; ok && k < M; k++) { /* modes, children, features */
    int m = 0;
    while (m < TREE_MODES && strcmp(ma->strs[k], TREE_MODE_NAMES[m])) m++;
    if (m == TREE_MODES) {
      ok = om__fail(OM_ERR_FORMAT, "%s (%s): node mode '%s'", who(b), op, ma->strs[k]);
      break;
    }
    e->mode[k] = (uint8_t)m, e->modes_used[m] = true, e->miss[k] = mt && mt[k] && m != TREE_LEAF;
    e->any_miss |= e->miss[k];
    if (m == TREE_LEAF) {
      e->yes[k] = e->no[k] = k, e->feat[k] = 0;
      continue;
    }
    int y = tree_find(keys, M, tree[k], tid[k]), n = tree_find(keys, M, tree[k], fno[k]);
    if (y < 0 || n < 0 || y == k || n == k)
      ok = om__fail(OM_ERR_FORMAT, "%s (%s): node %lld of tree %lld has child %lld, which is not another node of its tree", who(b), op, (long long)node[k],
                    (long long)tree[k], (long long)(y < 0 || y == k ? tid[k] : fno[k]));
    else if (fid[k] < 0 || fid[k] >= C)
      ok = om__fail(OM_ERR_INDEX_OUT_OF_RANGE, "%s (%s): node %lld of tree %lld reads feature %lld of an input of %lld features", who(b), op, (long long)node[k],
                    (long long)tree[k], (long long)fid[k], (long long)C);
    else
      e->yes[k] = y, e->no[k] = n, e->feat[k] = fid[k], seen[y]++, seen[n]++;
  }
  for (int k = 0; ok && k < M; k++) { /* one root per tree: the node no node of it points to */
    bool first = k == 0 || keys[k].tree != keys[k - 1].tree;
    if (first) e->root[e->T] = -1;
    if (!seen[keys[k].at]) {
      if (e->root[e->T] >= 0) ok = om__fail(OM_ERR_FORMAT, "%s (%s): tree %lld has more than one root", who(b), op, (long long)keys[k].tree);
      e->root[e->T] = keys[k].at;
    }
    if (ok && (k == M - 1 || keys[k + 1].tree != keys[k].tree)) {
      if (e->root[e->T] < 0) ok = om__fail(OM_ERR_FORMAT, "%s (%s): tree %lld has no root (a cycle)", who(b), op, (long long)keys[k].tree);
      e->T++;
    }
  }
  /* the depth: every node reached from its root at one depth (seen[] reused); a node reached twice
   * (two parents, or a cycle) is refused */
  for (int k = 0; ok && k < M; k++) seen[k] = -1;
  for (int t = 0; ok && t < e->T; t++) seen[e->root[t]] = 0;
  for (int level = 0, grew = 1; ok && grew; level++) {
    grew = 0;
    for (int k = 0; ok && k < M; k++) {
      if (seen[k] != level || e->mode[k] == TREE_LEAF) continue;
      for (int c = 0; ok && c < 2; c++) {
        int64_t ch = c ? e->no[k] : e->yes[k];
        if (seen[ch] >= 0) ok = om__fail(OM_ERR_FORMAT, "%s (%s): node %lld of tree %lld is reached twice", who(b), op, (long long)node[ch], (long long)tree[ch]);
        else seen[ch] = level + 1, grew = 1, e->depth = level + 1;
      }
    }
  }
  for (int k = 0; ok && k < M; k++)
    if (seen[k] < 0) ok = om__fail(OM_ERR_FORMAT, "%s (%s): node %lld of tree %lld is not reached from its root", who(b), op, (long long)node[k], (long long)tree[k]);
  if (ok) memset(e->w, 0, sizeof(double) * (size_t)M * (size_t)K), memset(e->h, 0, sizeof(double) * (size_t)M * (size_t)K);
  for (int k = 0; ok && k < W; k++) { /* the weights, summed per node and output */
    int at = tree_find(keys, M, wt[k], wn[k]);
    if (at < 0) ok = om__fail(OM_ERR_FORMAT, "%s (%s): a weight of node %lld of tree %lld, which is no node", who(b), op, (long long)wn[k], (long long)wt[k]);
    else if (wid[k] < 0 || wid[k] >= K) ok = om__fail(OM_ERR_FORMAT, "%s (%s): a weight of output %lld of %d", who(b), op, (long long)wid[k], K);
    else e->w[(size_t)at * (size_t)K + (size_t)wid[k]] += wv[k], e->h[(size_t)at * (size_t)K + (size_t)wid[k]] += 1;
  }
  free(keys), free(wv), free(seen);
  e->M = M;
  if (!ok) tree_set_free(e);
  return ok;
}

/* n values of v as a [n] tensor of dtype d (from doubles or int64s). */
static om_tensor *tree_tensor(om_scope *s, const void *v, int64_t n, bool ints, om_dtype d) {
  om_tensor *t = om__keep(s, om_from_data(v, &n, 1, ints ? OM_INT64 : OM_FLOAT64));
  return t && d != t->dtype ? om__keep(s, om_cast(t, d)) : t;
}

/* The sums over the trees [N, K] (float32) of the rows of x (b's input) by the ensemble e (agg 1:
 * the least, 2: the greatest weight instead); with scored, whether some leaf a row reached has a
 * weight for the output [N, K]. */
static om_tensor *tree_sums(om_bind *b, om_scope *s0, const tree_set *e, int agg, om_tensor **scored) {
  om_scope own = {0}, *s = &own; /* this walk's temporaries; the results are kept in s0 */
  om_tensor *x = b->in[0];
  if (x->dtype == OM_BOOL || x->ndim < 1 || x->ndim > 2)
    return om__fail(OM_ERR_SHAPE_MISMATCH, "%s (%s): the input must be numbers of [C] or [N, C]", who(b), b->node->op_type), NULL;
  om_dtype d = x->dtype == OM_FLOAT64 ? OM_FLOAT64 : OM_FLOAT32; /* a double compared in double, as onnxruntime does */
  int64_t N = x->ndim == 2 ? x->shape[0] : 1, C = x->shape[x->ndim - 1], T = e->T, NT = N * T, nt[2] = {N, T};
  om_tensor *xd = om__keep(s, om_cast(x, d)), *rows = xd ? om__keep(s, om_reshape(xd, (int64_t[]){N, C}, 2)) : NULL;
  om_tensor *feat = tree_tensor(s, e->feat, e->M, true, OM_INT64), *yes = tree_tensor(s, e->yes, e->M, true, OM_INT64), *no = tree_tensor(s, e->no, e->M, true, OM_INT64);
  om_tensor *thr = tree_tensor(s, e->thr, e->M, false, d), *roots = tree_tensor(s, e->root, T, true, OM_INT64);
  int64_t *modes = om__alloc(sizeof(int64_t) * (size_t)e->M + 1, "tree"), *miss = om__alloc(sizeof(int64_t) * (size_t)e->M + 1, "tree");
  for (int k = 0; modes && miss && k < e->M; k++) modes[k] = e->mode[k], miss[k] = e->miss[k];
  om_tensor *mode = modes ? tree_tensor(s, modes, e->M, true, OM_INT64) : NULL, *mis = miss ? tree_tensor(s, miss, e->M, true, OM_BOOL) : NULL;
  free(modes), free(miss);
  om_tensor *cur = roots ? om_expand(roots, nt, 2) : NULL, *flat = NULL;
  bool ok = rows && feat && yes && no && thr && mode && mis && cur;
  for (int level = 0; ok && level < e->depth; level++) {
    om_scope t = {0}; /* this level's */
    flat = om__keep(&t, om_reshape(cur, &NT, 1));
    om_tensor *at = flat ? om__keep(&t, om_reshape(om__keep(&t, om_index_select(feat, 0, flat)), nt, 2)) : NULL;
    om_tensor *v = at ? om__keep(&t, om_gather(rows, 1, at)) : NULL;
    om_tensor *th = flat ? om__keep(&t, om_reshape(om__keep(&t, om_index_select(thr, 0, flat)), nt, 2)) : NULL;
    om_tensor *md = flat && (e->modes_used[TREE_LT] + e->modes_used[TREE_LEQ] + e->modes_used[TREE_GT] + e->modes_used[TREE_GTE] + e->modes_used[TREE_EQ] +
                             e->modes_used[TREE_NEQ] > 1)
                        ? om__keep(&t, om_reshape(om__keep(&t, om_index_select(mode, 0, flat)), nt, 2))
                        : NULL;
    om_tensor *go = NULL; /* a new reference: whether each row goes to the true child */
    bool first = true, fine = v && th;
    for (int m = TREE_LEQ; fine && m < TREE_MODES; m++) { /* each mode the ensemble uses: its comparison where the node has it */
      if (!e->modes_used[m]) continue;
      om_tensor *(*cmp)(om_tensor *, om_tensor *) = m == TREE_LEQ ? om_le : m == TREE_LT ? om_lt : m == TREE_GTE ? om_ge : m == TREE_GT ? om_gt : m == TREE_EQ ? om_eq : om_ne;
      om_scope u = {0};
      om_tensor *c = om__keep(&u, cmp(v, th)), *mine = !first && c && md ? om__keep(&u, om_eq(md, om__keep(&u, i64(m)))) : NULL;
      go = then(go, first ? om_tensor_retain(c) : mine ? om_where(mine, c, go) : NULL);
      om__scope_end(&u);
      fine = go != NULL, first = false;
    }
    if (go && e->any_miss) { /* NaN goes to the true child where the node says so */
      om_scope u = {0};
      om_tensor *nan = om__keep(&u, om_ne(v, v)), *tracks = om__keep(&u, om_reshape(om__keep(&u, om_index_select(mis, 0, flat)), nt, 2));
      om_tensor *both = nan && tracks ? om__keep(&u, om_logical_and(nan, tracks)) : NULL;
      go = then(go, both ? om_logical_or(go, both) : NULL);
      om__scope_end(&u);
    }
    om__keep(&t, go);
    om_tensor *y = go ? om__keep(&t, om_reshape(om__keep(&t, om_index_select(yes, 0, flat)), nt, 2)) : NULL;
    om_tensor *n = y ? om__keep(&t, om_reshape(om__keep(&t, om_index_select(no, 0, flat)), nt, 2)) : NULL;
    cur = then(cur, n ? om_where(go, y, n) : NULL);
    ok = cur != NULL;
    om__scope_end(&t);
  }
  om_tensor *w = ok ? om__keep(s, om_reshape(tree_tensor(s, e->w, (int64_t)e->M * e->K, false, OM_FLOAT32), (int64_t[]){e->M, e->K}, 2)) : NULL;
  flat = w ? om__keep(s, om_reshape(cur, &NT, 1)) : NULL;
  om_tensor *per = flat ? om__keep(s, om_reshape(om__keep(s, om_index_select(w, 0, flat)), (int64_t[]){N, T, e->K}, 3)) : NULL;
  int64_t one = 1;
  if (per && scored) {
    om_tensor *h = om__keep(s, om_reshape(tree_tensor(s, e->h, (int64_t)e->M * e->K, false, OM_FLOAT32), (int64_t[]){e->M, e->K}, 2));
    om_tensor *hs = h ? om__keep(s, om_reshape(om__keep(s, om_index_select(h, 0, flat)), (int64_t[]){N, T, e->K}, 3)) : NULL;
    *scored = hs ? om__keep(s0, om_gt(om__keep(s, om_sum(hs, &one, 1, false)), om__keep(s, om_scalar(0, OM_FLOAT32)))) : NULL;
    if (!*scored) per = NULL;
  }
  om_tensor_release(cur);
  om_tensor *z = per ? om__keep(s0, agg == 1 ? om_amin(per, &one, 1, false) : agg == 2 ? om_amax(per, &one, 1, false) : om_sum(per, &one, 1, false)) : NULL;
  om__scope_end(&own);
  return z;
}

/* base_values (0 or K of them) added to the sums z [N, K]. */
static om_tensor *tree_base(om_bind *b, om_scope *s, om_tensor *z, int64_t K) {
  const om_gattr *bv = attr(b, "base_values");
  if (!z || !bv) return z;
  if (!attr_type(b, bv, OM_GATTR_FLOATS)) return NULL;
  if (bv->n != K) return om__fail(OM_ERR_FORMAT, "%s (%s): %d base_values for %lld outputs", who(b), b->node->op_type, bv->n, (long long)K), NULL;
  om_tensor *t = om__keep(s, om_from_data(bv->floats, &K, 1, OM_FLOAT32));
  return t ? om__keep(s, om_add(z, t)) : NULL;
}

/* TreeEnsembleRegressor: Y [N, n_targets] = the leaves' weights summed over the trees (AVERAGE:
 * divided by their count; MIN, MAX: the least or greatest), plus base_values, then post_transform.
 * MIN and MAX take ensembles whose every leaf has one weight per target: onnxruntime gives a
 * target no leaf weighs 0, ONNX's reference the float's extreme, and the dense table would sum
 * two weights of one leaf. */
static bool bind_ml_tree_ensemble_regressor(om_bind *b) {
  int64_t K;
  const char *agg;
  if (!attr_i(b, "n_targets", 1, &K) || !attr_s(b, "aggregate_function", "SUM", &agg)) return false;
  if (K < 1 || K > LIMIT) return om__fail(OM_ERR_FORMAT, "%s (TreeEnsembleRegressor): n_targets %lld", who(b), (long long)K);
  int how = !strcmp(agg, "SUM") || !strcmp(agg, "AVERAGE") ? 0 : !strcmp(agg, "MIN") ? 1 : !strcmp(agg, "MAX") ? 2 : -1;
  if (how < 0) return om__fail(OM_ERR_FORMAT, "%s (TreeEnsembleRegressor): aggregate_function '%s'", who(b), agg);
  tree_set e;
  if (!tree_read(b, "target", (int)K, b->in[0]->ndim ? b->in[0]->shape[b->in[0]->ndim - 1] : 0, &e)) return false;
  for (int64_t k = 0; how && k < (int64_t)e.M * K; k++)
    if (e.mode[k / K] == TREE_LEAF && e.h[k] != 1) {
      tree_set_free(&e);
      return unsupported(b, "MIN or MAX with a leaf that has no weight or two for a target (onnxruntime and ONNX's reference part)");
    }
  om_scope s = {0};
  om_tensor *z = tree_sums(b, &s, &e, how, NULL);
  if (z && !strcmp(agg, "AVERAGE")) z = om__keep(&s, om_div(z, om__keep(&s, om_scalar((double)e.T, OM_FLOAT32))));
  bool ok = put(b, 0, om_tensor_retain(ml_post(b, &s, tree_base(b, &s, z, K))));
  om__scope_end(&s);
  tree_set_free(&e);
  return ok;
}

/* TreeEnsembleClassifier of three classes or more: the scores [N, classes] as the regressor's SUM
 * plus base_values, the label of each row's first highest score among the classes some leaf
 * reached or a base value gives (onnxruntime's), then post_transform. Two classes (onnxruntime's
 * binary rules) and string labels are refused. */
static bool bind_ml_tree_ensemble_classifier(om_bind *b) {
  const om_gattr *li = attr(b, "classlabels_int64s");
  if (attr(b, "classlabels_strings")) return unsupported(b, "classlabels_strings");
  if (!li || !attr_type(b, li, OM_GATTR_INTS)) return li ? false : om__fail(OM_ERR_FORMAT, "%s (TreeEnsembleClassifier): classlabels_int64s is missing", who(b));
  if (li->n < 3) return unsupported(b, "fewer than three classes (onnxruntime's binary scores)");
  tree_set e;
  if (!tree_read(b, "class", li->n, b->in[0]->ndim ? b->in[0]->shape[b->in[0]->ndim - 1] : 0, &e)) return false;
  om_scope s = {0};
  int64_t K = li->n;
  om_tensor *scored = NULL, *z = tree_base(b, &s, tree_sums(b, &s, &e, 0, &scored), K), *labels = om__keep(&s, om_from_data(li->ints, &K, 1, OM_INT64));
  /* a class that no leaf the row reached has a weight for is no candidate, unless base_values give every class a score */
  om_tensor *masked = z && !attr(b, "base_values") ? om__keep(&s, om_where(scored, z, om__keep(&s, om_scalar(-INFINITY, OM_FLOAT32)))) : z;
  om_tensor *best = masked ? om__keep(&s, om_argmax(masked, 1, false)) : NULL;
  bool ok = put(b, 0, best && labels ? om_index_select(labels, 0, best) : NULL);
  if (ok && b->node->n_out > 1) ok = put(b, 1, om_tensor_retain(ml_post(b, &s, z)));
  om__scope_end(&s);
  tree_set_free(&e);
  return ok;
}

/* The rows that take strings, and their string rules (the rows' own for the string ops). */
static const struct {
  const char *op_type;
  bool (*bind)(om_bind *b);
} STRING_RULES[] = {
    {"Cast", cast_strings}, {"CastLike", cast_like_strings}, {"Compress", moved_strings}, {"Concat", moved_strings},
    {"DepthToSpace", moved_strings}, {"Equal", equal_strings}, {"Expand", moved_strings}, {"Flatten", moved_strings},
    {"Gather", moved_strings}, {"GatherElements", moved_strings}, {"GatherND", moved_strings}, {"Identity", pass_value},
    {"RegexFullMatch", bind_regex_full_match}, {"Reshape", moved_strings}, {"ReverseSequence", moved_strings}, {"Slice", moved_strings}, {"SpaceToDepth", moved_strings},
    {"Split", moved_strings}, {"Squeeze", moved_strings}, {"StringConcat", bind_string_concat}, {"StringNormalizer", bind_string_normalizer},
    {"StringSplit", bind_string_split}, {"TfIdfVectorizer", tfidf_vectorizer_strings}, {"Tile", moved_strings}, {"Transpose", moved_strings}, {"Unsqueeze", moved_strings},
    {"Where", moved_strings}, {"ai.onnx.ml.LabelEncoder", ml_label_encoder_strings},
};

bool (*om__onnx_string_rule(const char *op_type))(om_bind *b) {
  for (size_t k = 0; k < sizeof STRING_RULES / sizeof *STRING_RULES; k++)
    if (!strcmp(STRING_RULES[k].op_type, op_type)) return STRING_RULES[k].bind;
  return NULL;
}

/* ---- control flow: subgraphs bound into the plan ----
 *
 * A plan is one list of steps, so a subgraph is bound where its node is: If's branch the
 * condition picks (the condition known when planning: from shapes and constants, as exporters'
 * If on sizes; else the session takes inputs by value and plans per value), each iteration of a
 * Loop or a Scan body unrolled (their counts known likewise). The session bounds the nodes a plan
 * binds so (src/runtime/session.c: om__bind_subgraph). */

static const om_graph *graph_attr(const om_gnode *n, const char *name) {
  for (int k = 0; k < n->n_attrs; k++)
    if (!strcmp(n->attrs[k].name, name) && n->attrs[k].type == OM_GATTR_GRAPH) return n->attrs[k].g;
  return NULL;
}

/* The checker's rules for a node's subgraphs (ONNX's checker refuses the model otherwise), at create. */
/* Whether n is a Scan of opset 8's form (the version pass marked it; sequence_lens its last input). */
bool om__onnx_scan8(const om_gnode *n) {
  for (int k = 0; k < n->n_attrs; k++)
    if (!strcmp(n->attrs[k].name, OM_SCAN8_MARK)) return true;
  return false;
}

bool om__onnx_check_subgraphs(const om_gnode *n) {
  const char *op = n->op_type;
  bool is_if = !strcmp(op, "If"), is_loop = !strcmp(op, "Loop"), is_scan = !strcmp(op, "Scan"), is_map = !strcmp(op, "SequenceMap");
  if (!is_if && !is_loop && !is_scan && !is_map) return true;
  if (is_loop && n->n_in < 2) /* M and cond may be left out, but not their places */
    return om__fail(OM_ERR_FORMAT, "session: node '%s' (Loop) has %d inputs; Loop takes M, cond, then the loop-carried values", n->name, n->n_in);
  const char *names[2] = {is_if ? "then_branch" : "body", is_if ? "else_branch" : NULL};
  for (int q = 0; q < 2 && names[q]; q++) {
    const om_graph *g = graph_attr(n, names[q]);
    if (!g) return om__fail(OM_ERR_FORMAT, "session: node '%s' (%s) has no graph attribute %s", n->name, op, names[q]);
    int want_in = is_if ? 0 : n->n_in - (is_scan && om__onnx_scan8(n)), want_out = is_loop ? -1 : n->n_out; /* a Loop body's outputs are counted below */
    if (g->inputs.n != want_in)
      return om__fail(OM_ERR_FORMAT, "session: node '%s' (%s): its %s takes %d inputs; %s", n->name, op, names[q], g->inputs.n,
                      is_if ? "a branch takes none" : is_loop ? "a Loop body takes the iteration number, the condition and one per loop-carried value"
                      : is_map ? "a SequenceMap body takes one per input" : "a Scan body takes one per state and scan input");
    if (want_out >= 0 && g->outputs.n != want_out)
      return om__fail(OM_ERR_FORMAT, "session: node '%s' (%s): its %s gives %d outputs, the node has %d", n->name, op, names[q],
                      g->outputs.n, n->n_out);
    if (is_loop && (n->n_in < 2 || g->outputs.n != 1 + n->n_out || n->n_out < n->n_in - 2))
      return om__fail(OM_ERR_FORMAT, "session: node '%s' (Loop): its body gives %d outputs for %d loop-carried values and %d node outputs; "
                      "it gives the condition, each loop-carried value, then each scan output", n->name, g->outputs.n, n->n_in - 2, n->n_out);
  }
  return true;
}

static bool bind_if(om_bind *b) {
  double cond;
  if (!const_scalar(b, 0, &cond)) return false;
  return om__bind_subgraph(b, graph_attr(b->node, cond != 0 ? "then_branch" : "else_branch"), NULL, NULL, 0, b->out, b->seq_out);
}

/* A subgraph output collected per iteration (a scan output), then stacked along axis. */
typedef struct stacked {
  om_tensor **t;
  int64_t n, cap;
} stacked;

static bool stacked_push(stacked *s, om_tensor *t) {
  if (s->n == s->cap) {
    int64_t cap = s->cap ? s->cap * 2 : 16;
    om_tensor **p = cap <= INT32_MAX ? realloc(s->t, sizeof *p * (size_t)cap) : NULL;
    if (!p) return om_tensor_release(t), om__fail(OM_ERR_OUT_OF_MEMORY, "session: out of memory collecting a scan output");
    s->t = p, s->cap = cap;
  }
  s->t[s->n++] = t;
  return true;
}

/* The collected elements stacked along axis (reversed first when reverse), into output j. */
static bool stacked_put(om_bind *b, int j, stacked *s, int64_t axis, bool reverse) {
  if (!s->n)
    return om__fail(OM_ERR_UNSUPPORTED, "%s (%s): output %d after no iteration (its element shape is not known without one)", who(b),
                    b->node->op_type, j);
  for (int64_t k = 0; reverse && k < s->n / 2; k++) {
    om_tensor *t = s->t[k];
    s->t[k] = s->t[s->n - 1 - k], s->t[s->n - 1 - k] = t;
  }
  int d = 0;
  return wrap(b, axis, s->t[0]->ndim + 1, &d) && put(b, j, om_stack(s->t, (int)s->n, d));
}

static void stacked_free(stacked *s, int n) {
  for (int k = 0; k < n; k++) {
    om__release_all(s[k].t, (int)s[k].n);
    free(s[k].t);
  }
  free(s);
}

/* Loop: while the iteration is below M (when given) and the condition holds (when given): the
 * body on the iteration number, the condition and the loop-carried values gives the condition,
 * the next loop-carried values and one element of each scan output. */
static bool bind_loop(om_bind *b) {
  const om_graph *body = graph_attr(b->node, "body");
  int n_carried = b->node->n_in - 2, n_scan = b->node->n_out - n_carried, n_body = body->outputs.n;
  int64_t trips = INT64_MAX, m;
  int n_m;
  double cond = 1;
  if (b->in[0] && !const_ints(b, 0, &m, 1, &n_m)) return false;
  if (b->in[0] && n_m != 1) return om__fail(OM_ERR_FORMAT, "%s (Loop): M holds %d values", who(b), n_m);
  if (b->in[0]) trips = m;
  if (b->in[1] && !const_scalar(b, 1, &cond)) return false;
  /* the loop-carried values (tensors, or sequences in seq_state) after the iteration number and the condition */
  om_tensor **state = calloc((size_t)(2 + n_carried), sizeof *state), **outs = calloc((size_t)n_body + 1, sizeof *outs);
  om_seq **seq_state = calloc((size_t)(2 + n_carried), sizeof *seq_state), **seq_outs = calloc((size_t)n_body + 1, sizeof *seq_outs);
  stacked *scans = calloc((size_t)n_scan + 1, sizeof *scans);
  bool ok = state && outs && seq_state && seq_outs && scans;
  if (!ok) om__fail(OM_ERR_OUT_OF_MEMORY, "%s (Loop): out of memory", who(b));
  for (int k = 0; ok && k < n_carried; k++) state[2 + k] = om_tensor_retain(b->in[2 + k]), seq_state[2 + k] = om__seq_retain(b->seq_in[2 + k]);
  for (int64_t i = 0; ok && i < trips && cond != 0; i++) {
    om_tensor_release(state[0]), om_tensor_release(state[1]);
    state[0] = om_scalar((double)i, OM_INT64), state[1] = om_scalar(1, OM_BOOL);
    ok = state[0] && state[1] && om__bind_subgraph(b, body, state, seq_state, 2 + n_carried, outs, seq_outs);
    if (ok && !outs[0]) ok = om__fail(OM_ERR_FORMAT, "%s (Loop): its body's condition is not a tensor", who(b));
    if (ok && outs[0]->storage->planned) { /* the condition, computed from tensor values: the session plans with them known */
      b->needs_values = true;
      ok = om__fail(OM_ERR_UNSUPPORTED, "%s (Loop): its body's condition is computed from tensor values when the graph runs; the graph "
                    "layer needs it when it plans", who(b));
    }
    if (ok && om_tensor_numel(outs[0]) != 1)
      ok = om__fail(OM_ERR_FORMAT, "%s (Loop): its body's condition holds %lld values", who(b), (long long)om_tensor_numel(outs[0]));
    if (ok) cond = om__get_flat(outs[0], 0);
    for (int k = 0; ok && k < n_carried; k++) {
      state[2 + k] = then(state[2 + k], om_tensor_retain(outs[1 + k]));
      om__seq_release(seq_state[2 + k]), seq_state[2 + k] = om__seq_retain(seq_outs[1 + k]);
    }
    for (int k = 0; ok && k < n_scan; k++)
      ok = seq_outs[1 + n_carried + k] ? om__fail(OM_ERR_UNSUPPORTED, "%s (Loop): scan output %d is a sequence", who(b), k)
                                       : stacked_push(&scans[k], om_tensor_retain(outs[1 + n_carried + k]));
    if (outs) om__release_all(outs, n_body), om__seq_release_all(seq_outs, n_body);
  }
  for (int k = 0; ok && k < n_carried; k++)
    ok = (b->seq_out[k] = om__seq_retain(seq_state[2 + k])) || put(b, k, om_tensor_retain(state[2 + k]));
  for (int k = 0; ok && k < n_scan; k++) ok = stacked_put(b, n_carried + k, &scans[k], 0, false);
  if (state) om__release_all(state, 2 + n_carried);
  if (seq_state) om__seq_release_all(seq_state, 2 + n_carried);
  free(state), free(outs), free(seq_state), free(seq_outs);
  if (scans) stacked_free(scans, n_scan);
  return ok;
}

/* len steps of a Scan: per step each scan input xs[k] sliced along axis[k] (from the end where
 * dirs[k] is 1) after the states in in[0 .. n_state) (references, replaced by each step's), the
 * body bound on them, and each scan output's element pushed to scans. */
static bool scan_steps(om_bind *b, const om_graph *body, om_tensor **in, int n_state, om_tensor *const *xs, int m, const int *axis,
                       const int64_t *dirs, int64_t len, stacked *scans, int n_scan) {
  int n_body = body->outputs.n;
  om_tensor **outs = calloc((size_t)n_body + 1, sizeof *outs);
  bool ok = outs || om__fail(OM_ERR_OUT_OF_MEMORY, "%s (Scan): out of memory", who(b));
  for (int64_t t = 0; ok && t < len; t++) {
    for (int k = 0; ok && k < m; k++)
      ok = (in[n_state + k] = then(in[n_state + k], om_select(xs[k], axis[k], dirs && dirs[k] ? len - 1 - t : t))) != NULL;
    ok = ok && om__bind_subgraph(b, body, in, NULL, n_state + m, outs, NULL);
    for (int k = 0; ok && k < n_state; k++) in[k] = then(in[k], om_tensor_retain(outs[k]));
    for (int k = 0; ok && k < n_scan; k++) ok = stacked_push(&scans[k], om_tensor_retain(outs[n_state + k]));
    if (outs) om__release_all(outs, n_body);
  }
  free(outs);
  return ok;
}

static bool bind_scan8(om_bind *b, const om_graph *body, int m);

/* Scan (opset 9's form): the body runs once per slice of the scan inputs along their axes (from the
 * end where a direction is 1) on the state, giving the next state and one element of each scan
 * output, stacked along its axis (in reverse where its direction is 1). Opset 8's form: bind_scan8. */
static bool bind_scan(om_bind *b) {
  const om_graph *body = graph_attr(b->node, "body");
  int64_t m, in_axes[64], in_dirs[64], out_axes[64], out_dirs[64];
  int n_ia, n_id, n_oa, n_od;
  const om_gattr *ma = attr(b, "num_scan_inputs");
  if (!ma || !attr_type(b, ma, OM_GATTR_INT)) return om__fail(OM_ERR_FORMAT, "%s (Scan): attribute num_scan_inputs is required", who(b));
  m = ma->i;
  bool v8 = om__onnx_scan8(b->node);
  if (m < 1 || m > b->node->n_in - v8 || m > 64)
    return om__fail(OM_ERR_FORMAT, "%s (Scan): num_scan_inputs is %lld for %d inputs", who(b), (long long)m, b->node->n_in - v8);
  if (v8) return bind_scan8(b, body, (int)m);
  int n_state = b->node->n_in - (int)m, n_scan = b->node->n_out - n_state;
  if (n_scan < 0 || n_scan > 64) return om__fail(OM_ERR_FORMAT, "%s (Scan): %d outputs for %d states", who(b), b->node->n_out, n_state);
  if (!attr_ints(b, "scan_input_axes", in_axes, 64, &n_ia) || !attr_ints(b, "scan_input_directions", in_dirs, 64, &n_id) ||
      !attr_ints(b, "scan_output_axes", out_axes, 64, &n_oa) || !attr_ints(b, "scan_output_directions", out_dirs, 64, &n_od))
    return false;
  if ((n_ia >= 0 && n_ia != m) || (n_id >= 0 && n_id != m) || (n_oa >= 0 && n_oa != n_scan) || (n_od >= 0 && n_od != n_scan))
    return om__fail(OM_ERR_FORMAT, "%s (Scan): the axes and directions give one value per scan input and per scan output", who(b));
  int64_t len = -1;
  int axis[64];
  for (int k = 0; k < m; k++) {
    const om_tensor *x = b->in[n_state + k];
    if (!wrap(b, n_ia >= 0 ? in_axes[k] : 0, x->ndim, &axis[k])) return false;
    if (len >= 0 && x->shape[axis[k]] != len)
      return om__fail(OM_ERR_SHAPE_MISMATCH, "%s (Scan): scan input %d has %lld slices along axis %d, scan input 0 has %lld", who(b), k,
                      (long long)x->shape[axis[k]], axis[k], (long long)len);
    len = x->shape[axis[k]];
  }
  int n_in = b->node->n_in;
  om_tensor **in = calloc((size_t)n_in, sizeof *in);
  stacked *scans = calloc((size_t)n_scan + 1, sizeof *scans);
  bool ok = in && scans;
  if (!ok) om__fail(OM_ERR_OUT_OF_MEMORY, "%s (Scan): out of memory", who(b));
  for (int k = 0; ok && k < n_state; k++) in[k] = om_tensor_retain(b->in[k]);
  ok = ok && scan_steps(b, body, in, n_state, b->in + n_state, (int)m, axis, n_id >= 0 ? in_dirs : NULL, len, scans, n_scan);
  for (int k = 0; ok && k < n_state; k++) ok = put(b, k, om_tensor_retain(in[k]));
  for (int k = 0; ok && k < n_scan; k++)
    ok = stacked_put(b, n_state + k, &scans[k], n_oa >= 0 ? out_axes[k] : 0, n_od >= 0 && out_dirs[k]);
  if (in) om__release_all(in, n_in);
  free(in);
  if (scans) stacked_free(scans, n_scan);
  return ok;
}

/* Scan of opset 8: the states [B, ...] and the m scan inputs [B, T, ...], then sequence_lens
 * (optional, int [B]; the file's input 0, moved last by the version pass); per batch row the body runs over the row's first len steps (scanned
 * from step len - 1 where its direction is 1), its states and scan outputs [B, T, ...] stacked
 * over the rows, a scan output's steps past len zero (onnxruntime's Scan 8). The lengths decide
 * how many steps are bound: known when planning. */
static bool bind_scan8(om_bind *b, const om_graph *body, int m) {
  int n_in = b->node->n_in, n_state = n_in - 1 - m, n_scan = b->node->n_out - n_state;
  int64_t dirs[64];
  int n_d, axis[64] = {0};
  if (n_scan < 0 || n_scan > 64) return om__fail(OM_ERR_FORMAT, "%s (Scan): %d outputs for %d states", who(b), b->node->n_out, n_state);
  if (!attr_ints(b, "scan_input_directions", dirs, 64, &n_d)) return false; /* the file's directions, renamed by the version pass */
  if (n_d >= 0 && n_d != m) return om__fail(OM_ERR_FORMAT, "%s (Scan): directions gives %d values for %d scan inputs", who(b), n_d, m);
  om_tensor *const *st = b->in, *const *xs = b->in + n_state, *l = b->in[n_in - 1];
  int64_t B = n_state ? st[0]->shape[0] : xs[0]->shape[0], T = xs[0]->ndim > 1 ? xs[0]->shape[1] : -1;
  for (int k = 0; k < n_state + m; k++) {
    const om_tensor *x = b->in[k];
    if (x->ndim < 1 + (k >= n_state) || x->shape[0] != B || (k >= n_state && x->shape[1] != T))
      return om__fail(OM_ERR_SHAPE_MISMATCH, "%s (Scan): input %d must be [%lld%s, ...] (opset 8: the batch axis first%s)", who(b), 1 + k,
                      (long long)B, k >= n_state ? ", T" : "", k >= n_state ? ", then the sequence" : "");
  }
  int64_t *lens = calloc((size_t)B + 1, sizeof *lens);
  if (!lens) return om__fail(OM_ERR_OUT_OF_MEMORY, "%s (Scan): out of memory", who(b));
  bool ok = true;
  for (int64_t r = 0; r < B; r++) lens[r] = T;
  if (l) {
    om_tensor *dense = NULL;
    if (l->dtype != OM_INT64 || l->ndim != 1 || l->shape[0] != B)
      ok = om__fail(OM_ERR_SHAPE_MISMATCH, "%s (Scan): sequence_lens must be int64 of the batch's size %lld", who(b), (long long)B);
    ok = ok && known(b, n_in - 1) && (dense = om_contiguous(l)) != NULL;
    for (int64_t r = 0; ok && r < B; r++)
      if ((lens[r] = ((const int64_t *)om__data(dense))[r]) < 0 || lens[r] > T)
        ok = om__fail(OM_ERR_INVALID_ARGUMENT, "%s (Scan): sequence_lens[%lld] is %lld (0 to %lld)", who(b), (long long)r, (long long)lens[r], (long long)T);
    om_tensor_release(dense);
  }
  /* per row: its states and scan inputs selected, its steps, its scan outputs padded to T */
  om_tensor **in = calloc((size_t)(n_state + m) + 1, sizeof *in), **row_x = calloc((size_t)m + 1, sizeof *row_x);
  stacked *rows = calloc((size_t)(n_state + n_scan) + 1, sizeof *rows), *scans = calloc((size_t)n_scan + 1, sizeof *scans);
  ok = ok && ((in && row_x && rows && scans) || om__fail(OM_ERR_OUT_OF_MEMORY, "%s (Scan): out of memory", who(b)));
  for (int64_t r = 0; ok && r < B; r++) {
    for (int k = 0; ok && k < n_state; k++) ok = (in[k] = om_select(st[k], 0, r)) != NULL;
    for (int k = 0; ok && k < m; k++) ok = (row_x[k] = om_select(xs[k], 0, r)) != NULL;
    ok = ok && scan_steps(b, body, in, n_state, row_x, m, axis, n_d >= 0 ? dirs : NULL, lens[r], scans, n_scan);
    for (int k = 0; ok && k < n_state; k++) ok = stacked_push(&rows[k], om_tensor_retain(in[k]));
    for (int k = 0; ok && k < n_scan; k++) {
      om_tensor *y = NULL;
      if (scans[k].n) {
        y = om_stack(scans[k].t, (int)scans[k].n, 0);
        if (y && lens[r] < T) {
          int64_t shape[OM_MAX_DIMS];
          memcpy(shape, y->shape, sizeof(int64_t) * (size_t)y->ndim);
          shape[0] = T - lens[r];
          om_tensor *z = om_zeros(shape, y->ndim, y->dtype);
          y = then(y, z ? om_cat((om_tensor *[]){y, z}, 2, 0) : NULL);
          om_tensor_release(z);
        }
      }
      ok = (y || !scans[k].n) && stacked_push(&rows[n_state + k], y); /* NULL: a row of length 0, filled below */
      om__release_all(scans[k].t, (int)scans[k].n);
      scans[k].n = 0;
    }
    om__release_all(in, n_state + m);
    om__release_all(row_x, m);
  }
  for (int k = 0; ok && k < n_scan; k++) { /* a row of length 0: zeros of another row's shape */
    stacked *s = &rows[n_state + k];
    const om_tensor *like = NULL;
    for (int64_t r = 0; !like && r < s->n; r++) like = s->t[r];
    if (!like && B) ok = om__fail(OM_ERR_UNSUPPORTED, "%s (Scan): output %d after no iteration (its element shape is not known without one)", who(b), n_state + k);
    for (int64_t r = 0; ok && r < s->n; r++)
      if (!s->t[r]) ok = (s->t[r] = om_zeros(like->shape, like->ndim, like->dtype)) != NULL;
  }
  for (int k = 0; ok && k < n_state + n_scan; k++) ok = stacked_put(b, k, &rows[k], 0, false);
  if (in) om__release_all(in, n_state + m);
  if (row_x) om__release_all(row_x, m);
  free(in), free(row_x), free(lens);
  if (rows) stacked_free(rows, n_state + n_scan);
  if (scans) stacked_free(scans, n_scan);
  return ok;
}

/* SequenceMap: the body once per element of the sequence inputs (all of one length; a tensor
 * input is given whole each time), each body output collected into an output sequence. */
static bool bind_sequence_map(om_bind *b) {
  const om_graph *body = graph_attr(b->node, "body");
  int n_in = b->node->n_in, n_out = b->node->n_out;
  om_seq *first = seq_input(b, 0);
  if (!first) return false;
  for (int k = 1; k < n_in; k++)
    if (b->seq_in[k] && (b->seq_in[k]->none || b->seq_in[k]->n != first->n))
      return om__fail(OM_ERR_SHAPE_MISMATCH, "%s (SequenceMap): input %d is a sequence of %d, input 0 of %d", who(b), k,
                      b->seq_in[k]->n, first->n);
  om_tensor **in = calloc((size_t)n_in + 1, sizeof *in), **outs = calloc((size_t)n_out + 1, sizeof *outs);
  om_seq **seq_outs = calloc((size_t)n_out + 1, sizeof *seq_outs);
  bool ok = in && outs && seq_outs;
  if (!ok) om__fail(OM_ERR_OUT_OF_MEMORY, "%s (SequenceMap): out of memory", who(b));
  for (int j = 0; ok && j < n_out; j++) ok = (b->seq_out[j] = om__seq_new(first->n, OM_FLOAT32, false)) != NULL;
  for (int i = 0; ok && i < first->n; i++) {
    for (int k = 0; k < n_in; k++) in[k] = b->seq_in[k] ? b->seq_in[k]->t[i] : b->in[k];
    ok = om__bind_subgraph(b, body, in, NULL, n_in, outs, seq_outs);
    for (int j = 0; ok && j < n_out; j++) {
      if (seq_outs[j]) ok = om__fail(OM_ERR_UNSUPPORTED, "%s (SequenceMap): body output %d is a sequence", who(b), j);
      else b->seq_out[j]->t[i] = om_tensor_retain(outs[j]), b->seq_out[j]->dtype = outs[j]->dtype;
    }
    if (outs) om__release_all(outs, n_out), om__seq_release_all(seq_outs, n_out);
  }
  free(in), free(outs), free(seq_outs);
  return ok; /* on failure the session releases what b->seq_out holds */
}

/* ---- NonMaxSuppression, Einsum, Det, MelWeightMatrix ---- */

/* NonMaxSuppression (the boxes and scores decide the shape: known when planning, as NonZero).
 * Whether box j suppresses box i, for every pair of a batch at once, is onnxruntime's test in
 * library ops on float32: the intersection's sides positive, both areas and the union positive,
 * and intersection / union above iou_threshold. Then per batch and class, the boxes scoring above
 * score_threshold, by score (argsort, stable: ties by index), each kept unless a kept one
 * suppresses it, up to max_output_boxes_per_class: [batch, class, box] rows. */
/* Along axis d (0: x, 1: y) of every box pair of boxes [B, N, 4]: each box's side (*side, [B, N])
 * and the pair's overlap (*overlap, [B, N, N]: the smaller end minus the larger start), new
 * references; false with the error set. */
static bool nms_axis(om_tensor *boxes, int d, int64_t center, om_tensor **side, om_tensor **overlap) {
  om_scope s = {0};
  om_tensor *lo, *hi, *p = om__keep(&s, om_select(boxes, 2, center ? d : 1 - d)), *q = om__keep(&s, om_select(boxes, 2, center ? d + 2 : 3 - d));
  if (center) { /* [x_center, y_center, width, height] */
    om_tensor *half = om__keep(&s, om_scale(q, 0.5));
    lo = om__keep(&s, om_sub(p, half)), hi = om__keep(&s, om_add(p, half));
  } else { /* [y1, x1, y2, x2], either corner first */
    lo = om__keep(&s, om_minimum(p, q)), hi = om__keep(&s, om_maximum(p, q));
  }
  om_tensor *ilo = om__keep(&s, om_maximum(om__keep(&s, om_unsqueeze(lo, 2)), om__keep(&s, om_unsqueeze(lo, 1))));
  om_tensor *ihi = om__keep(&s, om_minimum(om__keep(&s, om_unsqueeze(hi, 2)), om__keep(&s, om_unsqueeze(hi, 1))));
  *side = hi ? om_sub(hi, lo) : NULL;
  *overlap = ihi && ilo ? om_sub(ihi, ilo) : NULL;
  om__scope_end(&s);
  return *side && *overlap;
}

/* all (taken; NULL before the first) && a > b, a new reference; NULL with the error set. */
static om_tensor *and_gt(om_tensor *all, bool first, om_tensor *a, om_tensor *b) {
  om_tensor *t = a && b && (first || all) ? om_gt(a, b) : NULL;
  if (first || !t) return om_tensor_release(all), t;
  om_tensor *r = om_logical_and(all, t);
  om_tensor_release(all), om_tensor_release(t);
  return r;
}

static om_tensor *nms_suppresses(om_tensor *boxes, int64_t center, double iou) {
  om_scope s = {0};
  om_tensor *side[2] = {NULL, NULL}, *overlap[2] = {NULL, NULL};
  bool ok = true;
  for (int d = 0; ok && d < 2; d++) ok = nms_axis(boxes, d, center, &side[d], &overlap[d]);
  for (int d = 0; d < 2; d++) om__keep(&s, side[d]), om__keep(&s, overlap[d]);
  if (!ok) return om__scope_end(&s), NULL;
  om_tensor *zero = om__keep(&s, om_scalar(0, OM_FLOAT32)), *thr = om__keep(&s, om_scalar(iou, OM_FLOAT32));
  om_tensor *area = om__keep(&s, om_mul(side[0], side[1])), *inter = om__keep(&s, om_mul(overlap[0], overlap[1]));
  om_tensor *a1 = om__keep(&s, om_unsqueeze(area, 2)), *a2 = om__keep(&s, om_unsqueeze(area, 1));
  om_tensor *uni = a1 && a2 ? om__keep(&s, om_sub(om__keep(&s, om_add(a1, a2)), inter)) : NULL;
  om_tensor *ratio = uni ? om__keep(&s, om_div(inter, uni)) : NULL;
  om_tensor *const tests[7][2] = {{overlap[0], zero}, {overlap[1], zero}, {inter, zero}, {a1, zero}, {a2, zero}, {uni, zero}, {ratio, thr}};
  om_tensor *all = NULL;
  for (int k = 0; k < 7 && (k == 0 || all); k++) all = and_gt(all, k == 0, tests[k][0], tests[k][1]);
  om_tensor *r = all ? om_contiguous(all) : NULL;
  om_tensor_release(all);
  om__scope_end(&s);
  return r;
}

static bool bind_non_max_suppression(om_bind *b) {
  om_tensor *boxes = b->in[0];
  int64_t center, max_out = 0;
  double iou = 0, score_thr = 0, v;
  bool has_thr = b->node->n_in > 4 && b->in[4];
  if (!attr_i(b, "center_point_box", 0, &center)) return false;
  if (center != 0 && center != 1) return om__fail(OM_ERR_INVALID_ARGUMENT, "%s (NonMaxSuppression): center_point_box must be 0 or 1, it is %lld", who(b), (long long)center);
  if (b->node->n_in > 2 && b->in[2] && !(const_scalar(b, 2, &v) && (max_out = v > 0 ? (int64_t)v : 0, true))) return false;
  if (b->node->n_in > 3 && b->in[3] && !const_scalar(b, 3, &iou)) return false;
  if (has_thr && !const_scalar(b, 4, &score_thr)) return false;
  if (!(iou >= 0 && iou <= 1)) return om__fail(OM_ERR_INVALID_ARGUMENT, "%s (NonMaxSuppression): iou_threshold must be in [0, 1], it is %g", who(b), iou);
  om_tensor *sc = b->in[1];
  char sb[96], ss[96];
  if (boxes->dtype != OM_FLOAT32 || sc->dtype != OM_FLOAT32) return unsupported(b, "boxes or scores other than float32");
  if (boxes->ndim != 3 || boxes->shape[2] != 4 || sc->ndim != 3 || sc->shape[0] != boxes->shape[0] || sc->shape[2] != boxes->shape[1])
    return om__fail(OM_ERR_SHAPE_MISMATCH, "%s (NonMaxSuppression): boxes %s must be [batches, boxes, 4] and scores %s [batches, classes, boxes]", who(b),
                    om__shape_str(sb, sizeof sb, boxes->shape, boxes->ndim), om__shape_str(ss, sizeof ss, sc->shape, sc->ndim));
  om_scope s = {0};
  om_tensor *sup = om__keep(&s, nms_suppresses(om__keep(&s, const_values(b, 0)), center, iou));
  om_tensor *scores = sup ? om__keep(&s, const_values(b, 1)) : NULL;
  om_tensor *order = scores ? om__keep(&s, om_argsort(scores, 2, true)) : NULL;
  int64_t B = sc->shape[0], C = sc->shape[1], N = sc->shape[2], count = 0;
  if (max_out > N) max_out = N;
  int64_t *rows = order ? om__alloc(sizeof(int64_t) * (size_t)(3 * B * C * max_out + 1), "NonMaxSuppression") : NULL;
  int64_t *kept = rows ? om__alloc(sizeof(int64_t) * (size_t)(max_out + 1), "NonMaxSuppression") : NULL;
  const bool *pair = sup ? (const bool *)om__data(sup) : NULL;
  const float *score = scores ? (const float *)om__data(scores) : NULL;
  const int64_t *ord = order ? (const int64_t *)om__data(order) : NULL;
  for (int64_t bc = 0; kept && bc < B * C; bc++) {
    int64_t n = 0, bi = bc / C;
    for (int64_t k = 0; k < N && n < max_out; k++) {
      int64_t i = ord[bc * N + k];
      if (has_thr && !(score[bc * N + i] > (float)score_thr)) continue;
      bool suppressed = false;
      for (int64_t j = 0; j < n && !suppressed; j++) suppressed = pair[(bi * N + i) * N + kept[j]];
      if (suppressed) continue;
      kept[n++] = i;
      rows[3 * count] = bi, rows[3 * count + 1] = bc % C, rows[3 * count++ + 2] = i;
    }
  }
  int64_t shape[2] = {count, 3};
  bool ok = put(b, 0, kept ? om_from_data(rows, shape, 2, OM_INT64) : NULL);
  free(rows), free(kept);
  om__scope_end(&s);
  return ok;
}

/* Einsum, as the library's torch.einsum (js/ops/linalg.js) composes it: letters label dims, '...'
 * the dims no letter names (right-aligned across operands); a label repeated in one operand takes
 * its diagonal; labels nothing later needs are summed; operands are contracted left to right,
 * each pair by one batched matmul (float32) or a broadcast mul summed (float64 and int64, exact
 * in their dtype, which matmul does not take); then the output's order. A label is a bit of a
 * set: a to z 0 to 25, A to Z 26 to 51, the '...' dims from 52. */
typedef struct labels {
  int n;
  int l[OM_MAX_DIMS];
} labels;
#define BIT(l) ((uint64_t)1 << (l))
#define MANY_EINSUM 16 /* operands */

static uint64_t label_set(const labels *ls) {
  uint64_t s = 0;
  for (int k = 0; k < ls->n; k++) s |= BIT(ls->l[k]);
  return s;
}
static int label_at(const labels *ls, int l) {
  for (int k = 0; k < ls->n; k++)
    if (ls->l[k] == l) return k;
  return -1;
}

/* The labels of one side s (len chars, no spaces), an operand of nd dims (nd -1: the output,
 * whose '...' is n_ell dims). */
static bool einsum_side(const om_bind *b, const char *s, int len, int nd, int n_ell, labels *out) {
  int letters = 0, dots = 0;
  for (int i = 0; i < len; i++) letters += s[i] != '.';
  out->n = 0;
  for (int i = 0; i < len; i++) {
    if (s[i] == '.') {
      if (dots++ || i + 2 >= len || s[i + 1] != '.' || s[i + 2] != '.')
        return om__fail(OM_ERR_FORMAT, "%s (Einsum): '%.*s' has a '.' that is not one '...'", who(b), len, s);
      int e = nd < 0 ? n_ell : nd - letters;
      if (e < 0 || out->n + e > OM_MAX_DIMS) break; /* the count check below says so */
      for (int k = n_ell - e; k < n_ell; k++) out->l[out->n++] = 52 + k;
      i += 2;
    } else if ((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z')) {
      if (out->n == OM_MAX_DIMS) break;
      out->l[out->n++] = s[i] >= 'a' ? s[i] - 'a' : s[i] - 'A' + 26;
    } else {
      return om__fail(OM_ERR_FORMAT, "%s (Einsum): invalid subscript '%c' in '%.*s' (letters and '...' only)", who(b), s[i], len, s);
    }
  }
  if (nd >= 0 ? out->n != nd || letters > nd : out->n != letters + n_ell * dots)
    return om__fail(OM_ERR_SHAPE_MISMATCH, "%s (Einsum): '%.*s' names %d dims%s, %s %d", who(b), len, s, letters, dots ? " and '...'" : "",
                    nd < 0 ? "at most" : "the operand has", nd < 0 ? OM_MAX_DIMS : nd);
  return true;
}

/* x's dims in the order of labels to (a new reference). */
static om_tensor *arrange(om_tensor *x, const labels *ls, const labels *to) {
  int64_t perm[OM_MAX_DIMS];
  bool same = x && to->n == x->ndim;
  for (int k = 0; k < to->n; k++) perm[k] = label_at(ls, to->l[k]), same &= perm[k] == k;
  /* already in that order: x itself, no view step between the product and what reads it (the
   * attention pass matches MaxViT's einsum-written attention on the product's own output) */
  return same ? om_tensor_retain(x) : om_permute(x, perm, to->n);
}

/* x (taken) with each repeated label's two dims made one, their diagonal: the two moved last,
 * merged, every (n + 1)-th element taken. */
static om_tensor *diagonals(const om_bind *b, om_tensor *x, labels *ls) {
  for (int i = 1; x && i < ls->n; i++) {
    int j = label_at(ls, ls->l[i]);
    if (j == i) continue;
    int64_t n = x->shape[j], perm[OM_MAX_DIMS], shape[OM_MAX_DIMS];
    if (x->shape[i] != n) {
      om__fail(OM_ERR_SHAPE_MISMATCH, "%s (Einsum): a repeated subscript has sizes %lld and %lld in one operand", who(b), (long long)n, (long long)x->shape[i]);
      return then(x, NULL);
    }
    labels rest = {0};
    for (int k = 0; k < ls->n; k++)
      if (k != i && k != j) perm[rest.n] = k, shape[rest.n] = x->shape[k], rest.l[rest.n++] = ls->l[k];
    perm[rest.n] = j, perm[rest.n + 1] = i, shape[rest.n] = n * n;
    x = then(x, om_permute(x, perm, ls->n));
    x = x ? then(x, om_reshape(x, shape, rest.n + 1)) : NULL;
    x = x ? then(x, om_slice(x, rest.n, 0, n * n, n + 1)) : NULL;
    rest.l[rest.n++] = ls->l[j];
    *ls = rest;
    i = 0;
  }
  return x;
}

/* x (taken) with the dims whose labels are not in need summed out. */
static om_tensor *sum_unneeded(om_tensor *x, labels *ls, uint64_t need) {
  int64_t gone[OM_MAX_DIMS];
  int n = 0;
  labels kept = {0};
  for (int k = 0; k < ls->n; k++) {
    if (need & BIT(ls->l[k])) kept.l[kept.n++] = ls->l[k];
    else gone[n++] = k;
  }
  if (!x || !n) return x;
  *ls = kept;
  return then(x, om_sum(x, gone, n, false));
}

/* x (taken) with dims from at to at + count - 1 merged into one (count 0: a new dim of 1). */
static om_tensor *merged(om_tensor *x, int at, int count) {
  if (!x || count == 1) return x;
  if (!count) return then(x, om_unsqueeze(x, at));
  int64_t shape[OM_MAX_DIMS], n = 1;
  for (int k = 0; k < count; k++) n *= x->shape[at + k];
  memcpy(shape, x->shape, sizeof(int64_t) * (size_t)at);
  shape[at] = n;
  memcpy(shape + at + 1, x->shape + at + count, sizeof(int64_t) * (size_t)(x->ndim - at - count));
  return then(x, om_reshape(x, shape, x->ndim - count + 1));
}

/* a [la] contracted with b [lb] (both taken), keeping the labels in keep: those in both lead, then
 * a's own, then b's own; the shared ones not kept are summed. */
static om_tensor *contract(om_tensor *a, labels *la, om_tensor *b, const labels *lb, uint64_t keep) {
  uint64_t sa = label_set(la), sb = label_set(lb);
  labels batch = {0}, inner = {0}, left = {0}, right = {0};
  for (int k = 0; k < la->n; k++) {
    int l = la->l[k];
    labels *to = !(sb & BIT(l)) ? &left : keep & BIT(l) ? &batch : &inner;
    to->l[to->n++] = l;
  }
  for (int k = 0; k < lb->n; k++)
    if (!(sa & BIT(lb->l[k]))) right.l[right.n++] = lb->l[k];
  for (int k = 0; a && b && k < inner.n; k++) { /* a size-1 shared dim broadcasts: the other's is summed first */
    int ia = label_at(la, inner.l[k]), ib = label_at(lb, inner.l[k]);
    if (a->shape[ia] == 1 && b->shape[ib] != 1) b = then(b, om_sum(b, (int64_t[]){ib}, 1, true));
    else if (b->shape[ib] == 1 && a->shape[ia] != 1) a = then(a, om_sum(a, (int64_t[]){ia}, 1, true));
  }
  labels xa = batch, xb = batch, out = batch;
  for (int k = 0; k < left.n; k++) xa.l[xa.n++] = left.l[k], out.l[out.n++] = left.l[k];
  for (int k = 0; k < right.n; k++) out.l[out.n++] = right.l[k];
  om_tensor *r = NULL;
  if (a && b && (!inner.n || a->dtype != OM_FLOAT32 || b->dtype != OM_FLOAT32)) {
    /* [batch, left, 1.., inner] times [batch, 1.., right, inner], the inner dims summed */
    for (int k = 0; k < right.n; k++) xb.l[xb.n++] = right.l[k];
    for (int k = 0; k < inner.n; k++) xa.l[xa.n++] = inner.l[k], xb.l[xb.n++] = inner.l[k];
    om_tensor *x = arrange(a, la, &xa), *y = arrange(b, lb, &xb);
    for (int k = 0; x && k < right.n; k++) x = then(x, om_unsqueeze(x, batch.n + left.n));
    for (int k = 0; y && k < left.n; k++) y = then(y, om_unsqueeze(y, batch.n));
    r = x && y ? om_mul(x, y) : NULL;
    int64_t sums[OM_MAX_DIMS];
    for (int k = 0; k < inner.n; k++) sums[k] = out.n + k;
    if (r && inner.n) r = then(r, om_sum(r, sums, inner.n, false));
    om_tensor_release(x), om_tensor_release(y);
  } else if (a && b) { /* [batch, L, I] @ [batch, I, R], then the left and right dims apart */
    for (int k = 0; k < inner.n; k++) xa.l[xa.n++] = inner.l[k], xb.l[xb.n++] = inner.l[k];
    for (int k = 0; k < right.n; k++) xb.l[xb.n++] = right.l[k];
    om_tensor *x = merged(merged(arrange(a, la, &xa), batch.n + left.n, inner.n), batch.n, left.n);
    om_tensor *y = merged(merged(arrange(b, lb, &xb), batch.n + inner.n, right.n), batch.n, inner.n);
    r = x && y ? om_matmul(x, y) : NULL;
    int64_t shape[OM_MAX_DIMS];
    for (int k = 0; r && k < out.n; k++) shape[k] = k < batch.n ? r->shape[k] : k < batch.n + left.n ? a->shape[label_at(la, out.l[k])] : b->shape[label_at(lb, out.l[k])];
    bool same = r && r->ndim == out.n && !memcmp(r->shape, shape, sizeof(int64_t) * (size_t)out.n);
    if (r && !same) r = then(r, om_reshape(r, shape, out.n));
    om_tensor_release(x), om_tensor_release(y);
  }
  om_tensor_release(a), om_tensor_release(b);
  *la = out;
  return r;
}

static bool bind_det(om_bind *b) { return put(b, 0, om_det(b->in[0])); }

static bool bind_einsum(om_bind *b) {
  const char *equation;
  if (!attr_s(b, "equation", NULL, &equation)) return false;
  if (!equation) return om__fail(OM_ERR_FORMAT, "%s (Einsum): the equation attribute is missing", who(b));
  char eq[256];
  int len = 0, n = b->node->n_in;
  for (const char *c = equation; *c; c++)
    if (*c != ' ' && len < (int)sizeof eq - 1) eq[len++] = *c;
  eq[len] = 0;
  const char *arrow = strstr(eq, "->");
  if (strlen(equation) > 200 || (arrow && strstr(arrow + 1, "->")))
    return om__fail(OM_ERR_FORMAT, "%s (Einsum): equation '%s' has more than one '->' or more than 200 characters", who(b), equation);
  int lhs = arrow ? (int)(arrow - eq) : len, commas = 0, starts[MANY_EINSUM + 1];
  starts[0] = 0;
  for (int i = 0; i < lhs; i++)
    if (eq[i] == ',' && commas < MANY_EINSUM) starts[++commas] = i + 1;
  if (commas + 1 != n) return om__fail(OM_ERR_FORMAT, "%s (Einsum): equation '%s' has %d operands, the node %d", who(b), equation, commas + 1, n);
  starts[n] = lhs + 1;
  labels ls[MANY_EINSUM], out;
  int n_ell = 0;
  for (int i = 0; i < n; i++) { /* the '...' dims: the most any operand has */
    const char *s = eq + starts[i], *d = memchr(s, '.', (size_t)(starts[i + 1] - 1 - starts[i]));
    int e = d ? b->in[i]->ndim - (starts[i + 1] - 1 - starts[i] - 3) : 0;
    if (e > n_ell) n_ell = e;
  }
  if (n_ell > OM_MAX_DIMS) n_ell = OM_MAX_DIMS; /* an operand claiming more fails its count */
  uint64_t all = 0, twice = 0;
  for (int i = 0; i < n; i++) {
    if (!einsum_side(b, eq + starts[i], starts[i + 1] - 1 - starts[i], b->in[i]->ndim, n_ell, &ls[i])) return false;
    for (int k = 0; k < ls[i].n; k++) {
      twice |= all & BIT(ls[i].l[k]), all |= BIT(ls[i].l[k]);
    }
  }
  if (arrow) {
    if (!einsum_side(b, arrow + 2, (int)strlen(arrow + 2), -1, n_ell, &out)) return false;
    uint64_t seen = 0;
    for (int k = 0; k < out.n; k++) {
      if (!(all & BIT(out.l[k])) || (seen & BIT(out.l[k])))
        return om__fail(OM_ERR_FORMAT, "%s (Einsum): output subscript %d of '%s' is in no operand or repeated", who(b), k, equation);
      seen |= BIT(out.l[k]);
    }
  } else { /* the '...' dims, then the labels used once in alphabetical order */
    out.n = 0;
    for (int k = 0; k < n_ell; k++) out.l[out.n++] = 52 + k;
    for (int l = 0; l < 52 && out.n < OM_MAX_DIMS; l++)
      if ((all & BIT(l)) && !(twice & BIT(l))) out.l[out.n++] = l;
  }
  uint64_t need_out = label_set(&out), later[MANY_EINSUM + 1];
  later[n - 1] = need_out;
  for (int i = n - 1; i > 0; i--) later[i - 1] = later[i] | label_set(&ls[i]);
  om_tensor *x = sum_unneeded(diagonals(b, om_tensor_retain(b->in[0]), &ls[0]), &ls[0], later[0]);
  for (int i = 1; x && i < n; i++) {
    om_tensor *y = sum_unneeded(diagonals(b, om_tensor_retain(b->in[i]), &ls[i]), &ls[i], later[i] | label_set(&ls[0]));
    x = sum_unneeded(x, &ls[0], later[i] | label_set(&ls[i]));
    x = y ? contract(x, &ls[0], y, &ls[i], later[i]) : then(x, NULL);
  }
  x = sum_unneeded(x, &ls[0], need_out);
  return put(b, 0, x ? then(x, arrange(x, &ls[0], &out)) : NULL);
}

/* MelWeightMatrix: triangles whose corners are whole spectrogram bins, floor((dft_length + 1) hz /
 * sample_rate) of num_mel_bins + 2 frequencies evenly spaced on the mel scale (mel(f) = 2595
 * log10(1 + f / 700)), in double with src/core/math.c's log and pow, as onnxruntime computes them
 * with its libm's. A corner within 1e-6 of a whole bin (other than 0) is refused: ONNX's reference
 * computes in float32 there, and the engines may floor it differently. Per mel bin i, over the
 * bins j: (j - lo) / (c - lo) up to its centre c (1 at c when lo is c), then (hi - j) / (hi - c),
 * else 0 (mel_ramp: eq, where, sub, div of library ops on the bins and corners; the two sides'
 * maximum). */
/* One side of the triangles: over the bins j [bins, 1], from corner a to b [1, mels], (j - a) / (b - a)
 * for a <= j <= b rising (1 at b where a is b), (b - j) / (b - a) for a <= j < b falling; 0
 * elsewhere. A new reference. */
static om_tensor *mel_ramp(om_tensor *j, om_tensor *a, om_tensor *b, bool rising) {
  om_scope s = {0};
  om_tensor *one = om__keep(&s, om_scalar(1, j->dtype)), *zero = om__keep(&s, om_scalar(0, j->dtype));
  om_tensor *len = om__keep(&s, om_sub(b, a)), *point = len ? om__keep(&s, om_eq(len, zero)) : NULL;
  om_tensor *num = om__keep(&s, rising ? om_sub(j, a) : om_sub(b, j)), *safe = point ? om__keep(&s, om_where(point, one, len)) : NULL;
  om_tensor *v = num && safe ? om__keep(&s, om_div(num, safe)) : NULL;
  if (v && rising) v = om__keep(&s, om_where(point, one, v));
  om_tensor *inside = om__keep(&s, om_logical_and(om__keep(&s, om_ge(j, a)), om__keep(&s, rising ? om_le(j, b) : om_lt(j, b))));
  om_tensor *r = v && inside ? om_where(inside, v, zero) : NULL;
  om__scope_end(&s);
  return r;
}

static bool bind_mel_weight_matrix(om_bind *b) {
  int64_t v[3], dt;
  int n;
  double edge[2];
  om_dtype d;
  if (!attr_i(b, "output_datatype", 1, &dt) || !onnx_dtype(b, "output_datatype", dt, &d)) return false;
  for (int i = 0; i < 3; i++) {
    if (!const_ints(b, i, &v[i], 1, &n)) return false;
    if (n != 1 || v[i] < 1 || v[i] > LIMIT)
      return om__fail(OM_ERR_FORMAT, "%s (MelWeightMatrix): input %d must be one value from 1 to 2^30", who(b), i);
  }
  for (int i = 0; i < 2; i++)
    if (!const_scalar(b, 3 + i, &edge[i])) return false;
  int64_t mels = v[0], bins = v[1] / 2 + 1;
  if (mels * bins > LIMIT) return om__fail(OM_ERR_OUT_OF_MEMORY, "%s (MelWeightMatrix): a matrix of more than 2^30 values", who(b));
  if (!(edge[0] >= 0 && edge[0] <= edge[1])) return om__fail(OM_ERR_FORMAT, "%s (MelWeightMatrix): the edges %g and %g must be 0 <= lower <= upper", who(b), edge[0], edge[1]);
  double ln10 = om__log(10), lo_mel = 2595 * (om__log(1 + edge[0] / 700) / ln10), hi_mel = 2595 * (om__log(1 + edge[1] / 700) / ln10);
  double step = (hi_mel - lo_mel) / (double)(mels + 2);
  int64_t *at = om__alloc(sizeof(int64_t) * (size_t)(mels + 2), "MelWeightMatrix");
  if (!at) return false;
  bool ok = true;
  for (int64_t i = 0; ok && i < mels + 2; i++) {
    double hz = 700 * (om__pow(10, (lo_mel + step * (double)i) / 2595) - 1), q = (double)(v[1] + 1) * hz / (double)v[2];
    at[i] = (int64_t)q; /* q >= 0: floor */
    double frac = q - (double)at[i];
    if (q != 0 && (frac < 1e-6 * (1 + q) || 1 - frac < 1e-6 * (1 + q)))
      ok = unsupported(b, "a triangle's corner on a whole spectrogram bin (ONNX's reference and onnxruntime may floor it differently)");
    else if (at[i] >= bins + (i == mels + 1)) /* the last corner is where the last triangle ends, past its bins */
      ok = om__fail(OM_ERR_FORMAT, "%s (MelWeightMatrix): a triangle's corner at bin %lld, past the spectrogram's %lld (upper_edge_hertz above half the sample rate)", who(b), (long long)at[i], (long long)bins);
  }
  om_scope s = {0};
  om_dtype f = d == OM_FLOAT64 ? OM_FLOAT64 : OM_FLOAT32;
  om_tensor *all = ok ? om__keep(&s, om_from_data(at, (int64_t[]){mels + 2}, 1, OM_INT64)) : NULL;
  om_tensor *c[3]; /* lo, centre, hi: [1, mels] */
  for (int k = 0; k < 3; k++) c[k] = all ? om__keep(&s, om_cast(om__keep(&s, om_unsqueeze(om__keep(&s, om_slice(all, 0, k, k + mels, 1)), 0)), f)) : NULL;
  om_tensor *j = c[2] ? om__keep(&s, om_cast(om__keep(&s, om_unsqueeze(om__keep(&s, om_arange(0, (double)bins, 1, OM_INT64)), 1)), f)) : NULL; /* [bins, 1] */
  om_tensor *rise = j ? om__keep(&s, mel_ramp(j, c[0], c[1], true)) : NULL;
  om_tensor *fall = rise ? om__keep(&s, mel_ramp(j, c[1], c[2], false)) : NULL;
  om_tensor *y = fall ? om__keep(&s, om_maximum(rise, fall)) : NULL; /* both 1 where they meet, else one is 0 */
  ok = y && cast_to(b, y, d, dt);
  om__scope_end(&s);
  free(at);
  return ok;
}

/* ---- the table, sorted by op type: inputs, outputs, the rule, what it runs as (for
 * docs/graph-runtime.md, generated by om_optable) ---- */

#define MANY 4096
static const om_onnx_rule rules[] = {
    {"Abs", 1, 1, 1, "", bind_abs, "abs"},
    {"Acos", 1, 1, 1, "", bind_acos, "acos"},
    {"Acosh", 1, 1, 1, "", bind_acosh, "acosh"},
    {"Add", 2, 2, 1, "", bind_add, "add"},
    {"AffineGrid", 2, 2, 1, "align_corners:i", bind_affine_grid, "matmul of the base coordinates (a constant of the plan; align_corners) and theta transposed"},
    {"And", 2, 2, 1, "", bind_and, "where(a, b, a)"},
    {"ArgMax", 1, 1, 1, "axis:i keepdims:i select_last_index:i", bind_argmax, "argmax (select_last_index: of the input reversed along the axis)"},
    {"ArgMin", 1, 1, 1, "axis:i keepdims:i select_last_index:i", bind_argmin, "argmin (select_last_index: of the input reversed along the axis)"},
    {"Asin", 1, 1, 1, "", bind_asin, "asin"},
    {"Asinh", 1, 1, 1, "", bind_asinh, "asinh"},
    {"Atan", 1, 1, 1, "", bind_atan, "atan"},
    {"Atanh", 1, 1, 1, "", bind_atanh, "atanh"},
    {"AveragePool", 1, 1, 1, "auto_pad:s=NOTSET|SAME_UPPER|SAME_LOWER|VALID ceil_mode:i count_include_pad:i dilations:I kernel_shape!I pads:I strides:I", bind_average_pool, "avg_pool2d, avg_pool3d (1-D as 2-D; a window larger than the padded input: empty, of ONNX's length 0; begin and end pads that differ: the ceil_mode that gives ONNX's size, or zeros padded first when count_include_pad; pads above half the kernel: zeros padded first, divided by the share of real elements unless count_include_pad; padded first with ceil_mode: ceil_mode, cut to ONNX's size where it keeps a window that starts in the end pads)"},
    {"BatchNormalization", 5, 5, 3, "epsilon:f momentum:f training_mode:i", bind_batch_norm, "batch_norm in eval mode; training_mode 1: batch_norm in training mode, the running statistics out from mean and the biased variance; fast mode: folded into the Conv before it when only that Conv (with constant weights) writes its input (src/runtime/passes.c)"},
    {"BitShift", 2, 2, 1, "direction!s=LEFT|RIGHT", bind_bit_shift, "mul or truncating div by pow(2, min(y, 62)) (UINT8, UINT16, UINT32); UINT64: mul by pow(2, y), or x >>> 1 from its low 63 bits divided by pow(2, y - 1) (64 or more: 0)"},
    {"BitwiseAnd", 2, 2, 1, "", bind_bitwise_and, "bitwise_and"},
    {"BitwiseNot", 1, 1, 1, "", bind_bitwise_not, "bitwise_not"},
    {"BitwiseOr", 2, 2, 1, "", bind_bitwise_or, "bitwise_or"},
    {"BitwiseXor", 2, 2, 1, "", bind_bitwise_xor, "bitwise_xor"},
    {"BlackmanWindow", 1, 1, 1, "output_datatype:i periodic:i", bind_blackman_window, "0.42 - 0.5 cos(2 pi n / N) + 0.08 cos(4 pi n / N) from arange and cos (size known when planning; periodic, output_datatype)"},
    {"Cast", 1, 1, 1, "saturate:i to!i", bind_cast, "cast to the dtype that holds the type, then narrowed to it (docs/graph-runtime.md, element types; UINT64's bits read unsigned)"},
    {"CastLike", 2, 2, 1, "saturate:i", bind_cast_like, "cast to the second input's type"},
    {"Ceil", 1, 1, 1, "", bind_ceil, "ceil"},
    {"Celu", 1, 1, 1, "alpha:f", bind_celu, "where(x > 0, x, alpha elu(x / alpha))"},
    {"CenterCropPad", 2, 2, 1, "axes:I", bind_center_crop_pad, "slice, pad with zeros (the sizes known when planning; axes)"},
    {"Clip", 1, 3, 1, "", bind_clip, "clamp (bounds known when planning), else Max / Min"},
    {"Col2Im", 3, 3, 1, "dilations:I pads:I strides:I", bind_col2im, "fold into the padded image, the pads cut off (1 to 3 spatial axes: 3 as two folds; image_shape and block_shape known when planning)"},
    {"Compress", 2, 2, 1, "axis:i", bind_compress, "index_select of the true positions (the condition decides the shape: a plan per value of it when fed or computed)"},
    {"Concat", 1, MANY, 1, "axis!i", bind_concat, "cat"},
    {"ConcatFromSequence", 1, 1, 1, "axis!i new_axis:i", bind_concat_from_sequence, "cat, or stack (new_axis)"},
    {"Constant", 0, 0, 1, "sparse_value:o value:t value_float:f value_floats:F value_int:i value_ints:I value_string:s value_strings:S", bind_constant, "the value (value_float, value_int, value_floats, value_ints, value)"},
    {"ConstantOfShape", 1, 1, 1, "value:t", bind_constant_of_shape, "full"},
    {"Conv", 2, 3, 1, "auto_pad:s=NOTSET|SAME_UPPER|SAME_LOWER|VALID dilations:I group:i kernel_shape:I pads:I strides:I", bind_conv, "conv1d, conv2d, conv3d (auto_pad; pads that differ: zeros padded first)"},
    {"ConvInteger", 2, 4, 1, "auto_pad:s=NOTSET|SAME_UPPER|SAME_LOWER|VALID dilations:I group:i kernel_shape:I pads:I strides:I", bind_conv_integer, "(x - x_zero_point) conv (w - w_zero_point) exactly: Conv on float32 chunks of input channels (sums below 2^24), cast to int64 and added (group 1, kernels up to 256 elements)"},
    {"ConvTranspose", 2, 3, 1, "auto_pad:s=NOTSET|SAME_UPPER|SAME_LOWER|VALID dilations:I group:i kernel_shape:I output_padding:I output_shape:I pads:I strides:I", bind_conv_transpose, "conv_transpose2d (1-D as 2-D; a difference of the pads is an output_padding, or a crop; output_shape and SAME give the pads, split as onnxruntime; 3 spatial axes: conv_transpose3d)"},
    {"Cos", 1, 1, 1, "", bind_cos, "cos"},
    {"Cosh", 1, 1, 1, "", bind_cosh, "cosh"},
    {"CumSum", 2, 2, 1, "exclusive:i reverse:i", bind_cumsum, "cumsum (reverse: of x flipped by index_select; exclusive: of x shifted behind zeros by cat)"},
    {"DFT", 1, 3, 1, "axis:i inverse:i onesided:i", bind_dft, "dft (accumulated in double; inverse, onesided, dft_length and axis known when planning)"},
    {"DeformConv", 3, 5, 1, "dilations:I group:i kernel_shape:I offset_group:i pads:I strides:I", bind_deform_conv, "linear_taps (bilinear gathers, zeros outside) of X at each output position's kernel taps moved by the offsets, times the mask, then a matmul per group with W, plus B (2 spatial axes; FLOAT)"},
    {"DepthToSpace", 1, 1, 1, "blocksize!i mode:s=DCR|CRD", bind_depth_to_space, "pixel_shuffle (mode CRD); DCR: reshape, permute, reshape"},
    {"DequantizeLinear", 2, 3, 1, "axis:i", bind_dequantize_linear, "(x - zero point) cast, times scale (per tensor or per axis)"},
    {"Det", 1, 1, 1, "", bind_det, "det"},
    {"Div", 2, 2, 1, "", bind_div, "div (int64: truncating, as ONNX)"},
    {"Dropout", 1, 3, 2, "seed:i", bind_dropout, "the input, the mask ones (inference, or training_mode with ratio 0; a random mask refused)"},
    {"DynamicQuantizeLinear", 1, 1, 3, "", bind_dynamic_quantize_linear, "amax, amin, then QuantizeLinear's steps (UINT8)"},
    {"Einsum", 1, MANY_EINSUM, 1, "equation!s", bind_einsum, "per operand its diagonals (permute, reshape, slice) and the labels nothing later needs summed, then left to right one matmul per pair (float32) or a broadcast mul summed (DOUBLE, INT64), then permute"},
    {"Elu", 1, 1, 1, "alpha:f", bind_elu, "elu"},
    {"Equal", 2, 2, 1, "", bind_equal, "eq"},
    {"Erf", 1, 1, 1, "", bind_erf, "erf"},
    {"Exp", 1, 1, 1, "", bind_exp, "exp"},
    {"Expand", 2, 2, 1, "", bind_expand, "expand to the broadcast of both shapes"},
    {"EyeLike", 1, 1, 1, "dtype:i k:i", bind_eye_like, "eq(column - row, k), cast (k, dtype)"},
    {"Flatten", 1, 1, 1, "axis:i", bind_flatten, "reshape"},
    {"Floor", 1, 1, 1, "", bind_floor, "floor"},
    {"GRU", 3, 6, 2, "activation_alpha:F activation_beta:F activations:S clip:f direction:s=forward|reverse|bidirectional hidden_size:i layout:i linear_before_reset:i", bind_gru, "gru_layer per direction (linear_before_reset 1, default activations); linear_before_reset 0, clip or sequence_lens: per step linear, sigmoid, tanh as RNN (layout)"},
    {"Gather", 2, 2, 1, "axis:i", bind_gather, "select (one index known when planning), else index_select and reshape"},
    {"GatherElements", 2, 2, 1, "axis:i", bind_gather_elements, "gather"},
    {"GatherND", 2, 2, 1, "batch_dims:i", bind_gather_nd, "index_select of rows of the data flattened to [batch x indexed axes, rest] (batch_dims; negative indices count from the end)"},
    {"Gelu", 1, 1, 1, "approximate:s=none|tanh", bind_gelu, "gelu (approximate none, tanh); fast mode: approximate none takes erf from the float rational (within 7.2 ulp) above x = -0.7071068, its tail from erfc as eager"},
    {"Gemm", 2, 3, 1, "alpha:f beta:f transA:i transB:i", bind_gemm, "linear (B transposed, C a bias row), else transpose, matmul, scale, add"},
    {"GlobalAveragePool", 1, 1, 1, "", bind_global_average_pool, "adaptive_avg_pool2d to 1x1 (4-D), else mean"},
    {"GlobalLpPool", 1, 1, 1, "p:i", bind_global_lp_pool, "sum(|x|), sqrt(sum(x x)) over the spatial axes (p 1, 2)"},
    {"GlobalMaxPool", 1, 1, 1, "", bind_global_max_pool, "amax"},
    {"Greater", 2, 2, 1, "", bind_greater, "gt (UINT64 as Less)"},
    {"GreaterOrEqual", 2, 2, 1, "", bind_greater_equal, "ge (UINT64 as Less)"},
    {"GridSample", 2, 2, 1, "align_corners:i mode:s=linear|nearest|cubic|bilinear|bicubic padding_mode:s=zeros|border|reflection", bind_grid_sample, "the library's grid_sample (PyTorch's F.grid_sample): linear (bilinear, trilinear), nearest (half to even), cubic (4-D X); padding zeros, border, reflection; align_corners; 4-D and 5-D X"},
    {"GroupNormalization", 3, 3, 1, "epsilon:f num_groups!i", bind_group_norm, "group_norm (scale and bias per group spread over its channels)"},
    {"HammingWindow", 1, 1, 1, "output_datatype:i periodic:i", bind_hamming_window, "25/46 - 21/46 cos(2 pi n / N) (as BlackmanWindow)"},
    {"HannWindow", 1, 1, 1, "output_datatype:i periodic:i", bind_hann_window, "0.5 - 0.5 cos(2 pi n / N) (as BlackmanWindow)"},
    {"HardSigmoid", 1, 1, 1, "alpha:f beta:f", bind_hard_sigmoid, "clamp(alpha x + beta, 0, 1)"},
    {"HardSwish", 1, 1, 1, "", bind_hardswish, "hardswish"},
    {"Hardmax", 1, 1, 1, "axis:i", bind_hardmax, "eq(arange, argmax), cast"},
    {"Identity", 1, 1, 1, "", bind_identity, "the input (a tensor or a sequence)"},
    {"If", 1, 1, 8, "else_branch!g then_branch!g", bind_if, "the branch the condition picks, bound into the plan (the condition known when planning)"},
    {"InstanceNormalization", 3, 3, 1, "epsilon:f", bind_instance_norm, "group_norm with a group per channel"},
    {"IsInf", 1, 1, 1, "detect_negative:i detect_positive:i", bind_is_inf, "eq(x, inf), eq(x, -inf) (detect_positive, detect_negative)"},
    {"IsNaN", 1, 1, 1, "", bind_is_nan, "ne(x, x)"},
    {"LRN", 1, 1, 1, "alpha:f beta:f bias:f size!i", bind_lrn, "x / (bias + alpha avg_pool2d(x x over [size, 1] channels))^beta"},
    {"LSTM", 3, 8, 3, "activation_alpha:F activation_beta:F activations:S clip:f direction:s=forward|reverse|bidirectional hidden_size:i input_forget:i layout:i", bind_lstm, "lstm_layer per direction (default activations); peepholes or sequence_lens: per step linear, sigmoid, tanh as RNN (clip, input_forget refused)"},
    {"LayerNormalization", 2, 3, 3, "axis:i epsilon:f stash_type:i", bind_layer_norm, "layer_norm (scale and bias of the normalised shape, or expanded to it; Mean and InvStdDev too)"},
    {"LeakyRelu", 1, 1, 1, "alpha:f", bind_leaky_relu, "leaky_relu"},
    {"Less", 2, 2, 1, "", bind_less, "lt (UINT64: of the bits with the top one flipped)"},
    {"LessOrEqual", 2, 2, 1, "", bind_less_equal, "le (UINT64 as Less)"},
    {"Log", 1, 1, 1, "", bind_log, "log"},
    {"LogSoftmax", 1, 1, 1, "axis:i", bind_log_softmax, "log_softmax"},
    {"Loop", 0, MANY, 8, "body!g", bind_loop, "the body once per iteration, unrolled into the plan (M and cond, each may be left empty, known when planning; then the loop-carried values, tensors or sequences); scan outputs: stack"},
    {"LpNormalization", 1, 1, 1, "axis:i p:i", bind_lp_normalization, "x / sum(|x|), x / sqrt(sum(x x)) (p 1, 2)"},
    {"LpPool", 1, 1, 1, "auto_pad:s=NOTSET|SAME_UPPER|SAME_LOWER|VALID ceil_mode:i dilations:I kernel_shape!I p:i pads:I strides:I", bind_lp_pool, "Conv's convolution (1 to 3 spatial axes) of |x|^p with ones per channel, then the p-th root (pads, dilations, ceil_mode, auto_pad)"},
    {"MatMul", 2, 2, 1, "", bind_matmul, "matmul; fast mode: the last product of an attention (MatMul, Mul or Div by a constant, Add or Where of a mask, Softmax, MatMul, each read once) is the attention op, with no score matrix (src/runtime/passes.c)"},
    {"MatMulInteger", 2, 4, 1, "", bind_matmul_integer, "(A - a_zero_point) (B - b_zero_point) exactly: float32 matmuls of 256-long chunks of K (exact sums), cast to int64 and added"},
    {"Max", 1, MANY, 1, "", bind_max, "maximum, pairwise (UINT64 as Less)"},
    {"MaxPool", 1, 1, 2, "auto_pad:s=NOTSET|SAME_UPPER|SAME_LOWER|VALID ceil_mode:i dilations:I kernel_shape!I pads:I storage_order:i strides:I", bind_max_pool, "max_pool2d, max_pool3d (1-D as 2-D; pads as AveragePool, -inf padded first above half the kernel; a window larger than the padded input: empty, of ONNX's length 0); Indices (1 to 3 spatial axes): per window tap, last to first, where(eq(tap, y), its position, the later ones')"},
    {"MaxUnpool", 2, 3, 1, "kernel_shape!I pads:I strides:I", bind_max_unpool, "scatter_add of the values at their indices into zeros, divided by the count of each (pads, strides; an output_shape other than the default refused: ONNX's reference and onnxruntime read the indices differently)"},
    {"Mean", 1, MANY, 1, "", bind_mean, "add pairwise, then scale"},
    {"MeanVarianceNormalization", 1, 1, 1, "axes:I", bind_mvn, "(x - mean) / (sqrt(mean(x x) - mean^2) + 1e-9), ONNX's function"},
    {"MelWeightMatrix", 5, 5, 1, "output_datatype:i", bind_mel_weight_matrix, "the triangles' corners (whole bins, from src/core/math.c's double log and pow; known when planning), then where, sub, div over the bins (a corner within 1e-6 of a whole bin refused)"},
    {"Min", 1, MANY, 1, "", bind_min, "minimum, pairwise (UINT64 as Less)"},
    {"Mish", 1, 1, 1, "", bind_mish, "mish"},
    {"Mod", 2, 2, 1, "fmod:i", bind_mod, "fmod (fmod 1), remainder (fmod 0); UINT64: remainder of the low 63 bits, plus 2^63's where the top bit is set, less the divisor once where the sum reaches it; a divisor past 2^63: where(x < y, x, x - y)"},
    {"Mul", 2, 2, 1, "", bind_mul, "mul"},
    {"Neg", 1, 1, 1, "", bind_neg, "neg"},
    {"NegativeLogLikelihoodLoss", 2, 3, 1, "ignore_index:i reduction:s=none|sum|mean", bind_nll_loss, "-gather(x, 1, target) weight[target] (ignore_index: weight 0), reduced by none, sum, mean (over the weights' sum)"},
    {"NonMaxSuppression", 2, 5, 1, "center_point_box:i", bind_non_max_suppression, "per batch and class, the boxes by score (argsort), each kept unless a kept one overlaps it above iou_threshold (the pairs' test in float32 library ops, as onnxruntime; boxes and scores decide the shape: a plan per value of them when fed or computed)"},
    {"NonZero", 1, 1, 1, "", bind_non_zero, "the indices (the input decides the shape: a plan per value of it when fed or computed)"},
    {"Not", 1, 1, 1, "", bind_not, "eq(x, false)"},
    {"OneHot", 3, 3, 1, "axis:i", bind_one_hot, "where(eq(indices, arange(depth)), on, off) (negative indices count from depth)"},
    {"Optional", 0, 1, 1, "type:o", bind_optional, "the input (a tensor or a sequence), or an optional holding nothing"},
    {"OptionalGetElement", 1, 1, 1, "", bind_optional_get_element, "the value held (nothing: InvalidArgument)"},
    {"OptionalHasElement", 0, 1, 1, "", bind_optional_has_element, "whether it holds a value (a constant of the plan)"},
    {"Or", 2, 2, 1, "", bind_or, "where(a, a, b)"},
    {"PRelu", 2, 2, 1, "", bind_prelu, "where(x < 0, x slope, x)"},
    {"Pad", 2, 4, 1, "mode:s=constant|reflect|edge|wrap", bind_pad, "pad (constant, reflect, edge; reflect and edge on the last 1 to 3 axes); wrap: index_select per padded axis of the positions modulo its size"},
    {"Pow", 2, 2, 1, "", bind_pow, "pow (the exponent cast to the base's type; a UINT64 exponent of a float base read unsigned)"},
    {"QLinearConv", 8, 9, 1, "auto_pad:s=NOTSET|SAME_UPPER|SAME_LOWER|VALID dilations:I group:i kernel_shape:I pads:I strides:I", bind_qlinear_conv, "ConvInteger's exact product plus the bias, times x_scale w_scale / y_scale, then QuantizeLinear's rounding and clamp (float32, as onnxruntime)"},
    {"QLinearMatMul", 8, 8, 1, "", bind_qlinear_matmul, "MatMulInteger's exact product, times a_scale b_scale / y_scale, then QuantizeLinear's rounding and clamp (float32, as onnxruntime)"},
    {"QuantizeLinear", 2, 3, 1, "axis:i saturate:i", bind_quantize_linear, "x / scale rounded half to even, plus zero point, clamped to UINT8 or INT8 (float32, as onnxruntime)"},
    {"RNN", 3, 6, 2, "activation_alpha:F activation_beta:F activations:S clip:f direction:s=forward|reverse|bidirectional hidden_size:i layout:i", bind_rnn, "linear of every step's input, then per step tanh(x W + h R + biases) (clip, layout, directions, sequence_lens; other activations refused)"},
    {"Range", 3, 3, 1, "", bind_range, "arange"},
    {"Reciprocal", 1, 1, 1, "", bind_reciprocal, "div(1, x)"},
    {"ReduceL1", 1, 2, 1, "keepdims:i noop_with_empty_axes:i", bind_reduce_l1, "sum(|x|)"},
    {"ReduceL2", 1, 2, 1, "keepdims:i noop_with_empty_axes:i", bind_reduce_l2, "sqrt(sum(x x))"},
    {"ReduceLogSum", 1, 2, 1, "keepdims:i noop_with_empty_axes:i", bind_reduce_log_sum, "log(sum(x))"},
    {"ReduceLogSumExp", 1, 2, 1, "keepdims:i noop_with_empty_axes:i", bind_reduce_log_sum_exp, "m + log(sum(exp(x - m))), m the finite maximum (amax)"},
    {"ReduceMax", 1, 2, 1, "keepdims:i noop_with_empty_axes:i", bind_reduce_max, "amax (bool: any, through int64; over nothing: -inf)"},
    {"ReduceMean", 1, 2, 1, "keepdims:i noop_with_empty_axes:i", bind_reduce_mean, "mean"},
    {"ReduceMin", 1, 2, 1, "keepdims:i noop_with_empty_axes:i", bind_reduce_min, "amin (bool: all, through int64; over nothing: inf)"},
    {"ReduceProd", 1, 2, 1, "keepdims:i noop_with_empty_axes:i", bind_reduce_prod, "mul of the halves of each axis, log2(size) times"},
    {"ReduceSum", 1, 2, 1, "keepdims:i noop_with_empty_axes:i", bind_reduce_sum, "sum"},
    {"ReduceSumSquare", 1, 2, 1, "keepdims:i noop_with_empty_axes:i", bind_reduce_sum_square, "sum(x x)"},
    {"RegexFullMatch", 1, 1, 1, "pattern:s", bind_regex_full_match, "a Pike VM over the code points (RE2's syntax: literals, ., classes, \\d \\w \\s, groups, |, * + ? {n,m}, ^ $ \\b; other constructs refused)"},
    {"Relu", 1, 1, 1, "", bind_relu, "relu"},
    {"Reshape", 2, 2, 1, "allowzero:i", bind_reshape, "reshape (0 copies a size unless allowzero)"},
    {"Resize", 1, 4, 1, "antialias:i axes:I coordinate_transformation_mode:s=half_pixel|half_pixel_symmetric|pytorch_half_pixel|align_corners|asymmetric|tf_crop_and_resize|tf_half_pixel_for_nn cubic_coeff_a:f exclude_outside:i extrapolation_value:f keep_aspect_ratio_policy:s=stretch|not_larger|not_smaller mode:s=nearest|linear|cubic nearest_mode:s=round_prefer_floor|round_prefer_ceil|floor|ceil", bind_resize, "interpolate over the last two axes of a 4-D input: linear (half_pixel, pytorch_half_pixel, align_corners) as bilinear, cubic (a = -0.75, the same coordinates) as bicubic, nearest (asymmetric, floor) as nearest; else per axis an index_select per tap times its weight (nearest, linear, cubic, exclude_outside; every coordinate_transformation_mode, nearest_mode, keep_aspect_ratio_policy; antialias: more taps, the kernel stretched by the downscale)"},
    {"ReverseSequence", 2, 2, 1, "batch_axis:i time_axis:i", bind_reverse_sequence, "gather by where(t < len, len - 1 - t, t)"},
    {"RoiAlign", 3, 3, 1, "coordinate_transformation_mode:s=half_pixel|output_half_pixel mode:s=avg|max output_height:i output_width:i sampling_ratio:i spatial_scale:f", bind_roi_align, "an index_select of the four pixels of every sample point from X as [N H W, C], weighted, then mean (avg) or amax (max, of the weighted pixels as onnxruntime) per bin (half_pixel, output_half_pixel; sampling_ratio 0 refused)"},
    {"Round", 1, 1, 1, "", bind_round, "round (half to even)"},
    {"STFT", 2, 4, 1, "onesided:i", bind_stft, "index_select of the frames, times the window, then dft (frame_step, frame_length known when planning; onesided)"},
    {"Scan", 1, MANY, 8, "body!g num_scan_inputs!i scan_input_axes:I scan_input_directions:I scan_output_axes:I scan_output_directions:I", bind_scan, "the body once per slice (select) of the scan inputs, unrolled into the plan; scan outputs: stack (opset 9's form: axes, directions; opset 8's: per batch row, sequence_lens known when planning)"},
    {"ScatterElements", 3, 3, 1, "axis:i reduction:s=none|add|mul|max|min", bind_scatter_elements, "scatter_add (reduction add), scatter_reduce (mul, max, min); none: where(mask, scattered, data) from two scatter_adds"},
    {"ScatterND", 3, 3, 1, "reduction:s=none|add|mul|max|min", bind_scatter_nd, "index_put (reduction none, add); scatter_reduce (mul, max, min) of the updates into the rows of data flattened to [indexed axes, rest]"},
    {"Selu", 1, 1, 1, "alpha:f gamma:f", bind_selu, "gamma elu(x, alpha)"},
    {"SequenceAt", 2, 2, 1, "", bind_sequence_at, "the element (the position known when planning)"},
    {"SequenceConstruct", 1, MANY, 1, "", bind_sequence_construct, "the inputs as a sequence (no step)"},
    {"SequenceEmpty", 0, 0, 1, "dtype:i", bind_sequence_empty, "an empty sequence (dtype)"},
    {"SequenceErase", 1, 2, 1, "", bind_sequence_erase, "the sequence without the element (no step)"},
    {"SequenceInsert", 2, 3, 1, "", bind_sequence_insert, "the sequence with the tensor inserted (no step)"},
    {"SequenceLength", 1, 1, 1, "", bind_sequence_length, "the length (a constant of the plan)"},
    {"SequenceMap", 1, MANY, 8, "body!g", bind_sequence_map, "the body once per element, unrolled into the plan; each output a sequence"},
    {"Shape", 1, 1, 1, "end:i start:i", bind_shape, "the input's shape (start, end)"},
    {"Shrink", 1, 1, 1, "bias:f lambd:f", bind_shrink, "where(x < -lambd, x + bias, where(x > lambd, x - bias, 0))"},
    {"Sigmoid", 1, 1, 1, "", bind_sigmoid, "sigmoid"},
    {"Sign", 1, 1, 1, "", bind_sign, "sign"},
    {"Sin", 1, 1, 1, "", bind_sin, "sin"},
    {"Sinh", 1, 1, 1, "", bind_sinh, "sinh"},
    {"Size", 1, 1, 1, "", bind_size, "the element count"},
    {"Slice", 3, 5, 1, "", bind_slice, "slice (ONNX's clamping); a negative step: index_select"},
    {"Softmax", 1, 1, 1, "axis:i", bind_softmax, "softmax"},
    {"SoftmaxCrossEntropyLoss", 2, 3, 2, "ignore_index:i reduction:s=none|sum|mean", bind_softmax_cross_entropy, "log_softmax over axis 1 (output 1), then NegativeLogLikelihoodLoss"},
    {"Softplus", 1, 1, 1, "", bind_softplus, "softplus"},
    {"Softsign", 1, 1, 1, "", bind_softsign, "x / (1 + |x|)"},
    {"SpaceToDepth", 1, 1, 1, "blocksize!i", bind_space_to_depth, "reshape, permute, reshape (blocks first in the channels, unlike pixel_unshuffle)"},
    {"Split", 1, 2, OM_BIND_MAX_OUT, "axis:i num_outputs:i", bind_split, "slice per piece (split input, num_outputs)"},
    {"SplitToSequence", 1, 2, 1, "axis:i keepdims:i", bind_split_to_sequence, "slice per piece (split: sizes, one size, or 1 each squeezed unless keepdims)"},
    {"Sqrt", 1, 1, 1, "", bind_sqrt, "sqrt"},
    {"Squeeze", 1, 2, 1, "", bind_squeeze, "squeeze"},
    {"StringConcat", 2, 2, 1, "", bind_string_concat, "the strings joined, broadcast (src/runtime/strings.c)"},
    {"StringNormalizer", 1, 1, 1, "case_change_action:s=LOWER|UPPER|NONE is_case_sensitive:i locale:s stopwords:S", bind_string_normalizer, "the strings without the stopwords, in the case asked (ASCII, Latin-1, Greek and Cyrillic letters change case)"},
    {"StringSplit", 1, 1, 2, "delimiter:s maxsplit:i", bind_string_split, "each string's pieces (at the delimiter, or at runs of spaces), padded with empty strings, and their counts"},
    {"Sub", 2, 2, 1, "", bind_sub, "sub"},
    {"Sum", 1, MANY, 1, "", bind_sum, "add, pairwise"},
    {"Tan", 1, 1, 1, "", bind_tan, "tan"},
    {"Tanh", 1, 1, 1, "", bind_tanh, "tanh"},
    {"TfIdfVectorizer", 1, 1, 1, "max_gram_length!i max_skip_count!i min_gram_length!i mode!s=TF|IDF|TFIDF ngram_counts!I ngram_indexes!I pool_int64s:I pool_strings:S weights:F", bind_tfidf_vectorizer, "per n-gram length, the windows (slice per item, items 1 to max_skip_count + 1 apart; unigrams once) eq the pool's n-grams (a repeated one refused, as onnxruntime), all over the items, summed; scatter_add into the output columns; TF, IDF (weight where counted), TFIDF (count times weight); strings: as the place of their first copy in pool_strings"},
    {"ThresholdedRelu", 1, 1, 1, "alpha:f", bind_thresholded_relu, "where(x > alpha, x, 0)"},
    {"Tile", 2, 2, 1, "", bind_tile, "tile"},
    {"TopK", 2, 2, 2, "axis:i largest:i sorted:i", bind_top_k, "topk (always sorted, ties in index order)"},
    {"Transpose", 1, 1, 1, "perm:I", bind_transpose, "permute"},
    {"Trilu", 1, 2, 1, "upper:i", bind_trilu, "triu, tril"},
    {"Unique", 1, 1, 4, "axis:i sorted:i", bind_unique, "index_select of each group's first row after a stable lexicographic argsort of the rows (slices along axis, or the elements; the input decides the shapes: a plan per value of it when fed or computed)"},
    {"Unsqueeze", 1, 2, 1, "", bind_unsqueeze, "unsqueeze per axis, ascending"},
    {"Where", 3, 3, 1, "", bind_where, "where"},
    {"Xor", 2, 2, 1, "", bind_xor, "ne"},
    {"ai.onnx.ml.ArrayFeatureExtractor", 2, 2, 1, "", bind_ml_array_feature_extractor, "index_select on the last axis (a 1-D input as [1, n])"},
    {"ai.onnx.ml.Binarizer", 1, 1, 1, "threshold:f", bind_ml_binarizer, "gt, cast to the input's type"},
    {"ai.onnx.ml.Imputer", 1, 1, 1, "imputed_value_floats:F imputed_value_int64s:I replaced_value_float:f replaced_value_int64:i", bind_ml_imputer, "where(eq) (NaN: ne(x, x)), one imputed value or one per feature of [C] or [N, C]"},
    {"ai.onnx.ml.LabelEncoder", 1, 1, 1, "default_float:f default_int64:i default_string:s default_tensor:u keys_floats:F keys_int64s:I keys_strings:S keys_tensor:u values_floats:F values_int64s:I values_strings:S values_tensor:u", bind_ml_label_encoder, "strings: looked up when planning; numbers: where(eq) per key; keys and values of numbers, or string keys (string values refused)"},
    {"ai.onnx.ml.LinearClassifier", 1, 1, 2, "classlabels_ints:I classlabels_strings:S coefficients!F intercepts:F multi_class:i post_transform:s", bind_ml_linear_classifier, "linear, argmax, index_select of classlabels_ints; post_transform as LinearRegressor's (one score column, string labels refused)"},
    {"ai.onnx.ml.LinearRegressor", 1, 1, 1, "coefficients:F intercepts:F post_transform:s targets:i", bind_ml_linear_regressor, "linear; post_transform LOGISTIC sigmoid, SOFTMAX softmax, SOFTMAX_ZERO exp and where (PROBIT, or a transform of one target, refused)"},
    {"ai.onnx.ml.Normalizer", 1, 1, 1, "norm:s", bind_ml_normalizer, "amax (MAX), sum of abs (L1), sqrt of x^2 over its sum (L2) per row of [C] or [N, C]; a zero norm keeps the row"},
    {"ai.onnx.ml.Scaler", 1, 1, 1, "offset:F scale:F", bind_ml_scaler, "sub, mul (in float64 for a DOUBLE input), cast to float32"},
    {"ai.onnx.ml.TreeEnsembleClassifier", 1, 1, 2, "base_values:F base_values_as_tensor:t class_ids:I class_nodeids:I class_treeids:I class_weights:F class_weights_as_tensor:t classlabels_int64s:I classlabels_strings:S nodes_falsenodeids:I nodes_featureids:I nodes_hitrates:F nodes_hitrates_as_tensor:t nodes_missing_value_tracks_true:I nodes_modes:S nodes_nodeids:I nodes_treeids:I nodes_truenodeids:I nodes_values:F nodes_values_as_tensor:t post_transform:s", bind_ml_tree_ensemble_classifier, "per level of the deepest tree: index_select, gather, the comparisons, where; the leaves' weights summed (index_select, sum); argmax of the scored classes (three or more; string labels refused)"},
    {"ai.onnx.ml.TreeEnsembleRegressor", 1, 1, 1, "aggregate_function:s base_values:F base_values_as_tensor:t n_targets:i nodes_falsenodeids:I nodes_featureids:I nodes_hitrates:F nodes_hitrates_as_tensor:t nodes_missing_value_tracks_true:I nodes_modes:S nodes_nodeids:I nodes_treeids:I nodes_truenodeids:I nodes_values:F nodes_values_as_tensor:t post_transform:s target_ids:I target_nodeids:I target_treeids:I target_weights:F target_weights_as_tensor:t", bind_ml_tree_ensemble_regressor, "as TreeEnsembleClassifier's walk; SUM, AVERAGE, MIN or MAX (every leaf weighing every target once) of the leaves' weights, base_values, post_transform as LinearRegressor's"},
};
#define N_RULES ((int)(sizeof rules / sizeof *rules))

const om_onnx_rule *om__onnx_rule(const char *op_type) {
  int lo = 0, hi = N_RULES - 1;
  while (lo <= hi) {
    int mid = (lo + hi) / 2, c = strcmp(rules[mid].op_type, op_type);
    if (!c) return &rules[mid];
    if (c < 0) lo = mid + 1;
    else hi = mid - 1;
  }
  return NULL;
}

int om__onnx_rule_count(void) { return N_RULES; }
const om_onnx_rule *om__onnx_rule_at(int i) { return i >= 0 && i < N_RULES ? &rules[i] : NULL; }
