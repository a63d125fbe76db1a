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
#include <stdlib.h>
#include <string.h>

#include "runtime/onnx_ops.h"

/* ---- reading a node ---- */

static const char *who(const om_bind *b) { return b->node->name; }

static const om_gattr *attr(const om_bind *b, const char *name) {
  for (int k = 0; k < b->node->n_attrs; k++)
    if (!strcmp(b->node->attrs[k].name, name)) return &b->node->attrs[k];
  return NULL;
}

/* An attribute of the wrong type is a Format error; these return false then, with *v untouched. */
static bool attr_type(const om_bind *b, const om_gattr *a, om_gattr_type type) {
  if (a->type == type) return true;
  static const char *const names[] = {"an int", "a float", "ints", "floats", "a string", "a tensor", "a list"};
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
UNARY(identity, om_tensor_retain(x))

static bool bind_reciprocal(om_bind *b) {
  om_tensor *one = om_scalar(1, b->in[0]->dtype);
  bool ok = put(b, 0, one ? om_div(one, b->in[0]) : NULL);
  om_tensor_release(one);
  return ok;
}

/* floor(x) = t - (x < t) with t = x truncated toward zero (a cast to int64 and back): exact for
 * every float whose integer part fits in int64, which is every float32 of magnitude below 2^63;
 * larger ones (and infinities, NaN) are integers already and pass through the where. */
static om_tensor *floor_of(om_tensor *x) {
  om_scope s = {0};
  om_tensor *lim = om__keep(&s, om_scalar(9.2e18, OM_FLOAT32)), *ax = om__keep(&s, om_abs(x));
  om_tensor *small = om__keep(&s, om_lt(ax, lim));
  om_tensor *safe = om__keep(&s, om_where(small, x, om__keep(&s, om_scalar(0, OM_FLOAT32))));
  om_tensor *t = om__keep(&s, om_cast(om__keep(&s, om_cast(safe, OM_INT64)), OM_FLOAT32));
  om_tensor *fix = om__keep(&s, om_cast(om__keep(&s, om_lt(safe, t)), OM_FLOAT32));
  om_tensor *r = fix ? om_where(small, om__keep(&s, om_sub(t, fix)), x) : NULL; /* a NULL anywhere before makes fix NULL */
  om__scope_end(&s);
  return r;
}
static bool bind_floor(om_bind *b) { return put(b, 0, floor_of(b->in[0])); }
static bool bind_ceil(om_bind *b) { /* ceil(x) = -floor(-x) */
  om_tensor *n = om_neg(b->in[0]), *f = n ? floor_of(n) : NULL;
  bool ok = put(b, 0, f ? om_neg(f) : NULL);
  om_tensor_release(n);
  om_tensor_release(f);
  return ok;
}

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
  /* fast mode: erf by the float rational (within 7.2 ulp; om__erff_fast_n) */
  return put(b, 0, om__apply1(OM_OP_gelu, b->in, 1, &(om_attrs){.n_i = 2, .i = {0, 1}}));
}
/* Dropout in inference is the input; training_mode (input 2) true would draw a random mask,
 * which the graph layer refuses rather than run as the identity. */
static bool bind_dropout(om_bind *b) {
  double training = 0;
  if (b->node->n_in > 2 && b->in[2] && !const_scalar(b, 2, &training)) return false;
  if (training != 0) return unsupported(b, "training_mode true (a random mask)");
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
BINARY(less, om_lt(x, y))
BINARY(less_equal, om_le(x, y))
BINARY(greater, om_gt(x, y))
BINARY(greater_equal, om_ge(x, y))
BINARY(xor, om_ne(x, y))
BINARY(and, om_where(x, y, x)) /* x false: x; x true: y */
BINARY(or, om_where(x, x, y))

/* Div of int64 truncates toward zero (the library's div with rounding_mode 'trunc'). */
static bool bind_div(om_bind *b) {
  if (b->in[0]->dtype != OM_INT64) return put(b, 0, om_div(b->in[0], b->in[1]));
  om_attrs trunc = {.n_i = 1, .i = {1}};
  return put(b, 0, om__apply1(OM_OP_div, b->in, 2, &trunc));
}

static bool bind_pow(om_bind *b) { /* ONNX lets the exponent have its own type: it is converted */
  om_tensor *e = om_cast(b->in[1], b->in[0]->dtype);
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
/* Mod: fmod 1 truncates (fmod), fmod 0 floors (remainder: Python's %, which ONNX gives integers). */
static bool bind_mod(om_bind *b) {
  int64_t f;
  if (!attr_i(b, "fmod", 0, &f)) return false;
  return put(b, 0, f ? om_fmod(b->in[0], b->in[1]) : om_remainder(b->in[0], b->in[1]));
}

/* Min, Max, Sum, Mean of any number of inputs, pairwise from the first. */
static om_tensor *pick(om_tensor *x, om_tensor *y, bool max) { return max ? om_maximum(x, y) : om_minimum(x, y); }
static bool fold_inputs(om_bind *b, int how) { /* 0 min, 1 max, 2 sum, 3 mean */
  om_tensor *acc = om_tensor_retain(b->in[0]);
  for (int i = 1; acc && i < b->node->n_in; i++) acc = then(acc, how < 2 ? pick(acc, b->in[i], how == 1) : om_add(acc, b->in[i]));
  if (acc && how == 3 && b->node->n_in > 1) acc = then(acc, om_scale(acc, 1.0 / b->node->n_in));
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

static bool bind_cast(om_bind *b) {
  int64_t to;
  if (!attr_i(b, "to", -1, &to)) return false;
  /* INT32 is INT64 here, as the reader widens INT32 constants */
  om_dtype d = to == 1 ? OM_FLOAT32 : to == 7 || to == 6 ? OM_INT64 : to == 9 ? OM_BOOL : (om_dtype)-1;
  if ((int)d < 0) return om__fail(OM_ERR_UNSUPPORTED, "%s (Cast): to type %lld is not supported (FLOAT, INT64, INT32 as INT64, BOOL)", who(b), (long long)to);
  return put(b, 0, om_cast(b->in[0], d));
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
      int64_t count = s > e ? (s - e - 1) / -step + 1 : 0;
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

/* Tile: each axis repeated r times, as reshape [.., 1, s, ..] -> expand [.., r, s, ..] -> reshape [.., r s, ..]. */
static bool bind_tile(om_bind *b) {
  const om_tensor *x = b->in[0];
  int64_t reps[OM_MAX_DIMS], inter[2 * OM_MAX_DIMS], big[2 * OM_MAX_DIMS], out[OM_MAX_DIMS];
  int n;
  if (!const_ints(b, 1, reps, OM_MAX_DIMS, &n)) return false;
  if (n != x->ndim) return om__fail(OM_ERR_FORMAT, "%s (Tile): %d repeats for %d dims", who(b), n, x->ndim);
  if (2 * n > OM_MAX_DIMS) return unsupported(b, "tiling more than 4 dims");
  for (int d = 0; d < n; d++) {
    if (reps[d] < 0) return om__fail(OM_ERR_FORMAT, "%s (Tile): repeat %lld", who(b), (long long)reps[d]);
    inter[2 * d] = 1, inter[2 * d + 1] = x->shape[d];
    big[2 * d] = reps[d], big[2 * d + 1] = x->shape[d];
    out[d] = reps[d] * x->shape[d];
  }
  om_tensor *r = om_reshape((om_tensor *)x, inter, 2 * n), *e = r ? om_expand(r, big, 2 * n) : NULL;
  bool ok = put(b, 0, e ? om_reshape(e, out, n) : NULL);
  om_tensor_release(r);
  om_tensor_release(e);
  return ok;
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
  om_pad_mode m = !strcmp(mode, "constant") ? OM_PAD_CONSTANT : !strcmp(mode, "reflect") ? OM_PAD_REFLECT
                  : !strcmp(mode, "edge") ? OM_PAD_REPLICATE : (om_pad_mode)-1;
  if ((int)m < 0) return unsupported(b, "mode other than constant, reflect and edge");
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

static bool bind_scatter_elements(om_bind *b) {
  int64_t axis;
  int a = 0;
  const char *red;
  if (!attr_i(b, "axis", 0, &axis) || !wrap(b, axis, b->in[0]->ndim, &a) || !attr_s(b, "reduction", "none", &red)) return false;
  if (strcmp(red, "add") && strcmp(red, "none")) return unsupported(b, "a reduction other than 'none' and 'add'");
  om_scope s = {0};
  om_tensor *at = om__keep(&s, from_end(b->in[1], b->in[0]->shape[a]));
  if (!at) return om__scope_end(&s), false;
  if (!strcmp(red, "add")) {
    bool ok = put(b, 0, om_scatter_add(b->in[0], a, at, b->in[2]));
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

/* ---- reductions, normalisation ---- */

/* ReduceSum/Mean/Max/Min/SumSquare/L2: axes from the attribute or input 1; none means all,
 * or nothing with noop_with_empty_axes. */
static bool reduce(om_bind *b, int how) { /* 0 sum, 1 mean, 2 max, 3 min, 4 sum of squares, 5 L2 */
  int64_t axes[OM_MAX_DIMS], keep, noop;
  int n;
  if (!axes_of(b, 1, axes, &n) || !attr_i(b, "keepdims", 1, &keep) || !attr_i(b, "noop_with_empty_axes", 0, &noop)) return false;
  om_tensor *x = b->in[0];
  if (n <= 0 && noop) return put(b, 0, om_tensor_retain(x));
  if (n <= 0) n = 0;
  om_tensor *sq = how >= 4 ? om_mul(x, x) : NULL;
  if (how >= 4 && !sq) return false;
  om_tensor *r = how == 1 ? om_mean(x, axes, n, keep) : how == 2 ? om_amax(x, axes, n, keep)
                 : how == 3 ? om_amin(x, axes, n, keep) : om_sum(sq ? sq : x, axes, n, keep);
  om_tensor_release(sq);
  if (how == 5 && r) r = then(r, om_sqrt(r));
  return put(b, 0, r);
}
static bool bind_reduce_sum(om_bind *b) { return reduce(b, 0); }
static bool bind_reduce_mean(om_bind *b) { return reduce(b, 1); }
static bool bind_reduce_max(om_bind *b) { return reduce(b, 2); }
static bool bind_reduce_min(om_bind *b) { return reduce(b, 3); }
static bool bind_reduce_sum_square(om_bind *b) { return reduce(b, 4); }
static bool bind_reduce_l2(om_bind *b) { return reduce(b, 5); }

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

static bool bind_cumsum(om_bind *b) {
  int64_t axis, excl, rev;
  int n = 0, a = 0;
  if (!const_ints(b, 1, &axis, 1, &n) || !attr_i(b, "exclusive", 0, &excl) || !attr_i(b, "reverse", 0, &rev)) return false;
  if (excl || rev) return unsupported(b, "exclusive or reverse");
  return wrap(b, axis, b->in[0]->ndim, &a) && put(b, 0, om_cumsum(b->in[0], a));
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
  for (int i = 1; i < 3; i++) { /* scale and bias of exactly the normalised shape */
    const om_tensor *p = b->node->n_in > i ? b->in[i] : NULL;
    bool same = !p || p->ndim == x->ndim - a;
    for (int d = 0; same && p && d < p->ndim; d++) same = p->shape[d] == x->shape[a + d];
    if (!same) return unsupported(b, i == 1 ? "a scale that is not of the normalised shape" : "a bias that is not of the normalised shape");
  }
  /* the op itself (as om_layer_norm calls it), for ONNX's Mean and InvStdDev outputs too */
  om_tensor *bias = b->node->n_in > 2 ? b->in[2] : NULL, *in[3] = {x, b->in[1], bias}, *out[3] = {NULL};
  om_attrs at = {.n_i = 2 + x->ndim - a, .i = {1, bias != NULL}, .n_f = 1, .f = {eps}};
  memcpy(at.i + 2, x->shape + a, sizeof(int64_t) * (size_t)(x->ndim - a));
  if (om__apply(OM_OP_layer_norm, in, bias ? 3 : 2, &at, out) != 3) return false;
  for (int j = 0; j < 3; j++) b->out[j] = j < b->node->n_out ? out[j] : (om_tensor_release(out[j]), NULL);
  return true;
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
  if (training) return unsupported(b, "training_mode 1");
  return put(b, 0, om_batch_norm(b->in[0], b->in[3], b->in[4], b->in[1], b->in[2], false, 1 - momentum, eps));
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

/* The spatial attributes of a conv or pool node over ns spatial axes (1 or 2). */
typedef struct spatial {
  int64_t kernel[2], stride[2], dilation[2], pad[2], pad_end[2];
} spatial;

static bool read_spatial(om_bind *b, int ns, const int64_t *in_size, const int64_t *kernel, spatial *sp) {
  int64_t v[4];
  int n;
  for (int d = 0; d < ns; d++) sp->kernel[d] = kernel ? kernel[d] : 1, sp->stride[d] = sp->dilation[d] = 1, sp->pad[d] = sp->pad_end[d] = 0;
  if (!kernel) {
    if (!attr_ints(b, "kernel_shape", v, 2, &n)) return false;
    if (n != ns) return om__fail(OM_ERR_FORMAT, "%s (%s): kernel_shape needs %d values", who(b), b->node->op_type, ns);
    for (int d = 0; d < ns; d++) sp->kernel[d] = v[d];
  }
  const char *names[2] = {"strides", "dilations"};
  for (int k = 0; k < 2; k++) {
    if (!attr_ints(b, names[k], v, 2, &n)) return false;
    if (n >= 0 && n != ns) return om__fail(OM_ERR_FORMAT, "%s (%s): %s needs %d values", who(b), b->node->op_type, names[k], ns);
    for (int d = 0; d < n; d++) (k ? sp->dilation : sp->stride)[d] = v[d];
  }
  const char *autopad;
  if (!attr_s(b, "auto_pad", "NOTSET", &autopad) || !attr_ints(b, "pads", v, 4, &n)) return false;
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
  return true;
}

/* x padded with zeros where the begin and end pads differ, so the rest is symmetric. */
static om_tensor *even_pads(om_tensor *x, int ns, spatial *sp) {
  int64_t torch[4] = {0};
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

static bool bind_conv(om_bind *b) {
  om_tensor *x = b->in[0], *w = b->in[1], *bias = b->node->n_in > 2 ? b->in[2] : NULL;
  int ns = w->ndim - 2;
  int64_t group;
  spatial sp;
  if (ns != 1 && ns != 2) return unsupported(b, "a convolution over other than 1 or 2 spatial axes");
  if (x->ndim != ns + 2) return om__fail(OM_ERR_SHAPE_MISMATCH, "%s (Conv): input of %d dims for a %d-D weight", who(b), x->ndim, w->ndim);
  if (!attr_i(b, "group", 1, &group) || !read_spatial(b, ns, x->shape + 2, w->shape + 2, &sp)) return false;
  int64_t kernel[OM_MAX_DIMS];
  int nk;
  if (!attr_ints(b, "kernel_shape", kernel, OM_MAX_DIMS, &nk)) return false;
  for (int d = 0; d < nk; d++) /* ONNX's shape inference refuses a kernel_shape that is not the weight's */
    if (nk != ns || kernel[d] != w->shape[2 + d])
      return om__fail(OM_ERR_FORMAT, "%s (Conv): kernel_shape does not match the weight's shape (dim %d: %lld, the weight has %lld)", who(b),
                      d, (long long)kernel[d], (long long)(d < ns ? w->shape[2 + d] : 0));
  om_tensor *xp = even_pads(x, ns, &sp);
  bool ok = put(b, 0, !xp ? NULL : ns == 2 ? om_conv2d(xp, w, bias, sp.stride, sp.pad, sp.dilation, group)
                                  : om_conv1d(xp, w, bias, sp.stride[0], sp.pad[0], sp.dilation[0], group));
  om_tensor_release(xp);
  return ok;
}

/* ConvTranspose: ONNX crops pads_begin and pads_end off the full result, the library crops its
 * padding at both ends and adds output_padding at the end; a difference of the pads is an
 * output_padding (or a crop when negative). */
static bool bind_conv_transpose(om_bind *b) {
  om_tensor *x = b->in[0], *w = b->in[1], *bias = b->node->n_in > 2 ? b->in[2] : NULL;
  int64_t group, op[2] = {0, 0}, v[2];
  int n;
  spatial sp;
  if (w->ndim != 4 || x->ndim != 4) return unsupported(b, "a transposed convolution over other than 2 spatial axes");
  if (attr(b, "output_shape")) return unsupported(b, "output_shape");
  if (!attr_i(b, "group", 1, &group) || !read_spatial(b, 2, x->shape + 2, w->shape + 2, &sp) || !attr_ints(b, "output_padding", v, 2, &n)) return false;
  const char *autopad;
  if (!attr_s(b, "auto_pad", "NOTSET", &autopad)) return false;
  if (strcmp(autopad, "NOTSET") && strcmp(autopad, "VALID")) return unsupported(b, "auto_pad SAME_UPPER or SAME_LOWER");
  int64_t crop[2] = {0, 0};
  for (int d = 0; d < 2; d++) {
    op[d] = (n == 2 ? v[d] : 0) + sp.pad[d] - sp.pad_end[d];
    int64_t limit = sp.stride[d] > sp.dilation[d] ? sp.stride[d] : sp.dilation[d];
    if (op[d] >= limit) return unsupported(b, "an output padding (with the pads' difference) at least the stride and the dilation");
    if (op[d] < 0) crop[d] = -op[d], op[d] = 0;
  }
  om_tensor *y = om_conv_transpose2d(x, w, bias, sp.stride, sp.pad, op, group, sp.dilation);
  for (int d = 0; y && d < 2; d++)
    if (crop[d]) y = then(y, om_slice(y, 2 + d, 0, y->shape[2 + d] - crop[d], 1));
  return put(b, 0, y);
}

/* floor(a / b) for b > 0. */
static int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

/* A 1-D pool is the 2-D one over [N, C, 1, L]. */
static bool pool(om_bind *b, bool max) {
  om_tensor *x = b->in[0];
  int ns = x->ndim - 2;
  int64_t ceil, cip, storage;
  spatial sp;
  if (ns != 1 && ns != 2) return unsupported(b, "pooling over other than 1 or 2 spatial axes");
  if (!read_spatial(b, ns, x->shape + 2, NULL, &sp) || !attr_i(b, "ceil_mode", 0, &ceil) || !attr_i(b, "count_include_pad", 0, &cip) ||
      !attr_i(b, "storage_order", 0, &storage))
    return false;
  /* Begin and end pads that differ (how the tracer writes PyTorch's ceil_mode): the library's
   * pool with the begin pads and the ceil_mode that gives ONNX's size has ONNX's windows, clipped
   * to the input (a max ignores padding, an average without count_include_pad counts what it
   * reads). An average that counts the padding reads zeros padded in first. So do pads above
   * half the kernel, which the library's pools refuse: -inf for a max, zeros for an average,
   * which then divides by the share of real elements in each window (the same average of ones)
   * unless it counts the padding. */
  bool asym = false, big = false;
  for (int d = 0; d < ns; d++) {
    asym |= sp.pad[d] != sp.pad_end[d];
    big |= 2 * (sp.pad[d] > sp.pad_end[d] ? sp.pad[d] : sp.pad_end[d]) > sp.kernel[d];
  }
  om_tensor *xp = NULL, *share = NULL; /* share: ones padded as x, when the average divides by it */
  if ((asym && !max && cip) || big) {
    if (ceil) return unsupported(b, big ? "pads above half the kernel with ceil_mode" : "different begin and end pads with ceil_mode and count_include_pad");
    int64_t torch[4] = {0};
    for (int d = 0; d < ns; d++) torch[2 * (ns - 1 - d)] = sp.pad[d], torch[2 * (ns - 1 - d) + 1] = sp.pad_end[d], sp.pad[d] = sp.pad_end[d] = 0;
    if (!(x = xp = om_pad(x, torch, 2 * ns, OM_PAD_CONSTANT, max ? -INFINITY : 0))) return false;
    if (!max && !cip) {
      om_tensor *ones = om_ones(b->in[0]->shape, b->in[0]->ndim, OM_FLOAT32);
      share = ones ? om_pad(ones, torch, 2 * ns, OM_PAD_CONSTANT, 0) : NULL;
      om_tensor_release(ones);
      if (!share) return om_tensor_release(xp), false;
    }
    asym = false;
  }
  int modes = 3; /* bit c: the library's ceil_mode c gives ONNX's size on every axis */
  for (int d = 0; asym && d < ns; d++) {
    int64_t st = sp.stride[d], dk = (sp.kernel[d] - 1) * sp.dilation[d] + 1;
    int64_t span = x->shape[2 + d] + sp.pad[d] + sp.pad_end[d] - dk, sym = x->shape[2 + d] + 2 * sp.pad[d] - dk;
    int64_t want = floor_div(span + (ceil ? st - 1 : 0), st) + 1;
    if (ceil && (want - 1) * st >= x->shape[2 + d] + sp.pad[d]) want--; /* onnxruntime drops a window that starts in the end padding, as PyTorch */
    for (int c = 0; c < 2; c++) { /* PyTorch's size at ceil_mode c */
      int64_t got = floor_div(sym + (c ? st - 1 : 0), st) + 1;
      if (c && (got - 1) * st >= x->shape[2 + d] + sp.pad[d]) got--;
      if (got != want) modes &= ~(1 << c);
    }
  }
  if (!modes) return unsupported(b, "these different begin and end pads (no ceil_mode gives their size with the begin pads)");
  if (asym) ceil = modes & (1 << ceil) ? ceil : modes & 1 ? 0 : 1;
  if (!max && (sp.dilation[0] != 1 || (ns == 2 && sp.dilation[1] != 1))) return unsupported(b, "dilations in AveragePool");
  if (ns == 1) { /* the 1-D axis becomes the width */
    sp.kernel[1] = sp.kernel[0], sp.stride[1] = sp.stride[0], sp.dilation[1] = sp.dilation[0], sp.pad[1] = sp.pad[0];
    sp.kernel[0] = sp.stride[0] = sp.dilation[0] = 1, sp.pad[0] = 0;
  }
  om_tensor *y = NULL;
  for (int k = 0; k < (share ? 2 : 1); k++) { /* x pooled, then the share of real elements it divides by */
    om_tensor *in = k ? share : x, *x4 = ns == 1 ? om_unsqueeze(in, 2) : om_tensor_retain(in);
    om_tensor *p = !x4 ? NULL : max ? om_max_pool2d(x4, sp.kernel, sp.stride, sp.pad, sp.dilation, ceil)
                                : om_avg_pool2d(x4, sp.kernel, sp.stride, sp.pad, ceil, cip);
    om_tensor_release(x4);
    y = k ? (p && y ? then(y, om_div(y, p)) : then(y, NULL)) : p;
    if (k) om_tensor_release(p);
  }
  om_tensor_release(xp);
  om_tensor_release(share);
  if (y && ns == 1) y = then(y, om_squeeze(y, (int64_t[]){2}, 1));
  return put(b, 0, y);
}
static bool bind_max_pool(om_bind *b) { return pool(b, true); }
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

/* pytorch_half_pixel samples an output of length 1 at the input's first element (PyTorch's
 * half-pixel kernel, the library's, samples its centre): refused there. */
static bool resize_length_ok(om_bind *b, int64_t in, int64_t out) {
  const char *coord;
  if (!attr_s(b, "coordinate_transformation_mode", "half_pixel", &coord)) return false;
  return out != 1 || in == 1 || strcmp(coord, "pytorch_half_pixel") || unsupported(b, "pytorch_half_pixel to an output length of 1");
}

/* Resize as the library's interpolate: linear (half_pixel, pytorch_half_pixel or align_corners)
 * is bilinear, nearest with asymmetric coordinates and floor is PyTorch's nearest; over the
 * last two axes of a 4-D input, by scales or sizes. */
static bool bind_resize(om_bind *b) {
  om_tensor *x = b->in[0];
  const char *mode, *coord, *nearest;
  int64_t axes[OM_MAX_DIMS], antialias, keep;
  int na;
  if (!attr_s(b, "mode", "nearest", &mode) || !attr_s(b, "coordinate_transformation_mode", "half_pixel", &coord) ||
      !attr_s(b, "nearest_mode", "round_prefer_floor", &nearest) || !attr_ints(b, "axes", axes, OM_MAX_DIMS, &na) ||
      !attr_i(b, "antialias", 0, &antialias) || !attr_i(b, "exclude_outside", 0, &keep))
    return false;
  if (x->ndim != 4) return unsupported(b, "resizing other than a 4-D input");
  if (antialias || keep) return unsupported(b, "antialias or exclude_outside");
  const char *policy;
  if (!attr_s(b, "keep_aspect_ratio_policy", "stretch", &policy)) return false;
  if (strcmp(policy, "stretch")) return unsupported(b, "keep_aspect_ratio_policy other than stretch");
  bool linear = !strcmp(mode, "linear"), align = !strcmp(coord, "align_corners");
  if (linear ? strcmp(coord, "half_pixel") && strcmp(coord, "pytorch_half_pixel") && !align
             : strcmp(mode, "nearest") || strcmp(coord, "asymmetric") || strcmp(nearest, "floor"))
    return unsupported(b, "this mode, coordinate_transformation_mode and nearest_mode (linear with half_pixel or align_corners, "
                          "or nearest with asymmetric and floor)");
  int first = 0; /* the scales or sizes given cover the axes listed (all four by default) */
  if (na >= 0 && !(na == 2 && axes[0] == 2 && axes[1] == 3) && !(na == 2 && axes[0] == -2 && axes[1] == -1) && na != 4)
    return unsupported(b, "axes other than the last two");
  if (na == 2) first = 2;
  bool has_scales = b->node->n_in > 2 && b->in[2] && om_tensor_numel(b->in[2]);
  bool has_sizes = b->node->n_in > 3 && b->in[3] && om_tensor_numel(b->in[3]);
  if (has_scales == has_sizes) return om__fail(OM_ERR_FORMAT, "%s (Resize): give exactly one of scales and sizes", who(b));
  double scale[4];
  int64_t size[4];
  int n;
  if (has_scales) {
    if (!known(b, 2)) return false;
    if (om_tensor_numel(b->in[2]) != 4 - first) return om__fail(OM_ERR_FORMAT, "%s (Resize): %lld scales", who(b), (long long)om_tensor_numel(b->in[2]));
    for (int d = 0; d < 4 - first; d++) scale[first + d] = om__get_flat(b->in[2], d);
    if (first == 0 && (scale[0] != 1 || scale[1] != 1)) return unsupported(b, "resizing the batch or channel axis");
    for (int d = 2; d < 4; d++)
      if (!resize_length_ok(b, x->shape[d], (int64_t)(scale[d] * (double)x->shape[d]))) return false;
    return put(b, 0, om_interpolate(x, NULL, scale + 2, linear ? OM_INTERPOLATE_BILINEAR : OM_INTERPOLATE_NEAREST, align));
  }
  if (!const_ints(b, 3, size + first, 4 - first, &n)) return false;
  if (n != 4 - first) return om__fail(OM_ERR_FORMAT, "%s (Resize): %d sizes", who(b), n);
  if (first == 0 && (size[0] != x->shape[0] || size[1] != x->shape[1])) return unsupported(b, "resizing the batch or channel axis");
  for (int d = 2; d < 4; d++)
    if (!resize_length_ok(b, x->shape[d], size[d])) return false;
  return put(b, 0, om_interpolate(x, size + 2, NULL, linear ? OM_INTERPOLATE_BILINEAR : OM_INTERPOLATE_NEAREST, align));
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

/* LSTM and GRU (ONNX's equations with the default activations; GRU with linear_before_reset 1,
 * PyTorch's) as one lstm_layer / gru_layer per direction. */
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
  if (attr(b, "activations") || attr(b, "activation_alpha") || attr(b, "activation_beta")) return unsupported(b, "activations other than the defaults");
  if (attr(b, "clip")) return unsupported(b, "clip");
  if (input_forget) return unsupported(b, "input_forget 1");
  if (!lstm && !lbr) return unsupported(b, "linear_before_reset 0 (PyTorch's GRU is linear_before_reset 1)");
  if (b->node->n_in > 4 && b->in[4]) return unsupported(b, "sequence_lens");
  if (lstm && b->node->n_in > 7 && b->in[7]) return unsupported(b, "peepholes");
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

/* ---- the table, sorted by op type: inputs, outputs, the rule, what it runs as (for
 * docs/graph-runtime.md, generated by om_optable) ---- */

#define MANY 4096
static const om_onnx_rule rules[] = {
    {"Abs", 1, 1, 1, bind_abs, "abs"},
    {"Acos", 1, 1, 1, bind_acos, "acos"},
    {"Acosh", 1, 1, 1, bind_acosh, "acosh"},
    {"Add", 2, 2, 1, bind_add, "add"},
    {"And", 2, 2, 1, bind_and, "where(a, b, a)"},
    {"ArgMax", 1, 1, 1, bind_argmax, "argmax (select_last_index: of the input reversed along the axis)"},
    {"ArgMin", 1, 1, 1, bind_argmin, "argmin (select_last_index: of the input reversed along the axis)"},
    {"Asin", 1, 1, 1, bind_asin, "asin"},
    {"Asinh", 1, 1, 1, bind_asinh, "asinh"},
    {"Atan", 1, 1, 1, bind_atan, "atan"},
    {"Atanh", 1, 1, 1, bind_atanh, "atanh"},
    {"AveragePool", 1, 1, 1, bind_average_pool, "avg_pool2d (1-D as 2-D; begin and end pads that differ: the ceil_mode that gives ONNX's size, or zeros padded first when count_include_pad; pads above half the kernel: zeros padded first, divided by the share of real elements unless count_include_pad)"},
    {"BatchNormalization", 5, 5, 3, bind_batch_norm, "batch_norm in eval mode (training_mode 1 refused); fast mode: folded into the Conv before it when only that Conv (with constant weights) writes its input (src/runtime/passes.c)"},
    {"BitwiseAnd", 2, 2, 1, bind_bitwise_and, "bitwise_and"},
    {"BitwiseNot", 1, 1, 1, bind_bitwise_not, "bitwise_not"},
    {"BitwiseOr", 2, 2, 1, bind_bitwise_or, "bitwise_or"},
    {"BitwiseXor", 2, 2, 1, bind_bitwise_xor, "bitwise_xor"},
    {"Cast", 1, 1, 1, bind_cast, "cast to FLOAT, INT64 (INT32 too: the graph layer's one integer type), BOOL"},
    {"Ceil", 1, 1, 1, bind_ceil, "-floor(-x) (see Floor)"},
    {"Clip", 1, 3, 1, bind_clip, "clamp (bounds known when planning), else Max / Min"},
    {"Concat", 1, MANY, 1, bind_concat, "cat"},
    {"Constant", 0, 0, 1, bind_constant, "the value (value_float, value_int, value_floats, value_ints, value)"},
    {"ConstantOfShape", 1, 1, 1, bind_constant_of_shape, "full"},
    {"Conv", 2, 3, 1, bind_conv, "conv2d, conv1d (auto_pad; pads that differ: zeros padded first)"},
    {"ConvTranspose", 2, 3, 1, bind_conv_transpose, "conv_transpose2d (a difference of the pads is an output_padding, or a crop; output_shape and SAME refused)"},
    {"Cos", 1, 1, 1, bind_cos, "cos"},
    {"Cosh", 1, 1, 1, bind_cosh, "cosh"},
    {"CumSum", 2, 2, 1, bind_cumsum, "cumsum (exclusive, reverse refused)"},
    {"Div", 2, 2, 1, bind_div, "div (int64: truncating, as ONNX)"},
    {"Dropout", 1, 3, 2, bind_dropout, "the input (inference: training_mode true and the mask output refused)"},
    {"Elu", 1, 1, 1, bind_elu, "elu"},
    {"Equal", 2, 2, 1, bind_equal, "eq"},
    {"Erf", 1, 1, 1, bind_erf, "erf"},
    {"Exp", 1, 1, 1, bind_exp, "exp"},
    {"Expand", 2, 2, 1, bind_expand, "expand to the broadcast of both shapes"},
    {"Flatten", 1, 1, 1, bind_flatten, "reshape"},
    {"Floor", 1, 1, 1, bind_floor, "t - (x < t), t = x cast to int64 and back (exact: larger floats are integers)"},
    {"GRU", 3, 6, 2, bind_gru, "gru_layer per direction (linear_before_reset 1, default activations; sequence_lens refused)"},
    {"Gather", 2, 2, 1, bind_gather, "select (one index known when planning), else index_select and reshape"},
    {"GatherElements", 2, 2, 1, bind_gather_elements, "gather"},
    {"Gelu", 1, 1, 1, bind_gelu, "gelu (approximate none, tanh); fast mode: approximate none takes erf from the float rational (within 7.2 ulp)"},
    {"Gemm", 2, 3, 1, bind_gemm, "linear (B transposed, C a bias row), else transpose, matmul, scale, add"},
    {"GlobalAveragePool", 1, 1, 1, bind_global_average_pool, "adaptive_avg_pool2d to 1x1 (4-D), else mean"},
    {"GlobalMaxPool", 1, 1, 1, bind_global_max_pool, "amax"},
    {"Greater", 2, 2, 1, bind_greater, "gt"},
    {"GreaterOrEqual", 2, 2, 1, bind_greater_equal, "ge"},
    {"GroupNormalization", 3, 3, 1, bind_group_norm, "group_norm (scale and bias per group spread over its channels)"},
    {"HardSigmoid", 1, 1, 1, bind_hard_sigmoid, "clamp(alpha x + beta, 0, 1)"},
    {"HardSwish", 1, 1, 1, bind_hardswish, "hardswish"},
    {"Identity", 1, 1, 1, bind_identity, "the input"},
    {"InstanceNormalization", 3, 3, 1, bind_instance_norm, "group_norm with a group per channel"},
    {"LSTM", 3, 8, 3, bind_lstm, "lstm_layer per direction (default activations; clip, input_forget, peepholes, sequence_lens refused)"},
    {"LayerNormalization", 2, 3, 3, bind_layer_norm, "layer_norm (scale and bias of the normalised shape; Mean and InvStdDev too)"},
    {"LeakyRelu", 1, 1, 1, bind_leaky_relu, "leaky_relu"},
    {"Less", 2, 2, 1, bind_less, "lt"},
    {"LessOrEqual", 2, 2, 1, bind_less_equal, "le"},
    {"Log", 1, 1, 1, bind_log, "log"},
    {"LogSoftmax", 1, 1, 1, bind_log_softmax, "log_softmax"},
    {"MatMul", 2, 2, 1, bind_matmul, "matmul; fast mode: the last product of an attention (MatMul, Mul or Div by a constant, Add or Where of a mask, Softmax, MatMul, each read once) is the attention op, with no score matrix (src/runtime/passes.c)"},
    {"Max", 1, MANY, 1, bind_max, "maximum, pairwise"},
    {"MaxPool", 1, 1, 2, bind_max_pool, "max_pool2d (1-D as 2-D; pads as AveragePool, -inf padded first above half the kernel; the Indices output refused)"},
    {"Mean", 1, MANY, 1, bind_mean, "add pairwise, then scale"},
    {"Min", 1, MANY, 1, bind_min, "minimum, pairwise"},
    {"Mod", 2, 2, 1, bind_mod, "fmod (fmod 1), remainder (fmod 0)"},
    {"Mul", 2, 2, 1, bind_mul, "mul"},
    {"Neg", 1, 1, 1, bind_neg, "neg"},
    {"Not", 1, 1, 1, bind_not, "eq(x, false)"},
    {"Or", 2, 2, 1, bind_or, "where(a, a, b)"},
    {"PRelu", 2, 2, 1, bind_prelu, "where(x < 0, x slope, x)"},
    {"Pad", 2, 4, 1, bind_pad, "pad (constant, reflect, edge; reflect and edge on the last 1 to 3 axes)"},
    {"Pow", 2, 2, 1, bind_pow, "pow (the exponent cast to the base's type)"},
    {"Range", 3, 3, 1, bind_range, "arange"},
    {"Reciprocal", 1, 1, 1, bind_reciprocal, "div(1, x)"},
    {"ReduceL2", 1, 2, 1, bind_reduce_l2, "sqrt(sum(x x))"},
    {"ReduceMax", 1, 2, 1, bind_reduce_max, "amax"},
    {"ReduceMean", 1, 2, 1, bind_reduce_mean, "mean"},
    {"ReduceMin", 1, 2, 1, bind_reduce_min, "amin"},
    {"ReduceSum", 1, 2, 1, bind_reduce_sum, "sum"},
    {"ReduceSumSquare", 1, 2, 1, bind_reduce_sum_square, "sum(x x)"},
    {"Relu", 1, 1, 1, bind_relu, "relu"},
    {"Reshape", 2, 2, 1, bind_reshape, "reshape (0 copies a size unless allowzero)"},
    {"Resize", 1, 4, 1, bind_resize, "interpolate over the last two axes of a 4-D input: linear (half_pixel, pytorch_half_pixel, align_corners) as bilinear, nearest (asymmetric, floor) as nearest"},
    {"ScatterElements", 3, 3, 1, bind_scatter_elements, "scatter_add (reduction add); none: where(mask, scattered, data) from two scatter_adds"},
    {"Shape", 1, 1, 1, bind_shape, "the input's shape (start, end)"},
    {"Sigmoid", 1, 1, 1, bind_sigmoid, "sigmoid"},
    {"Sign", 1, 1, 1, bind_sign, "sign"},
    {"Sin", 1, 1, 1, bind_sin, "sin"},
    {"Sinh", 1, 1, 1, bind_sinh, "sinh"},
    {"Size", 1, 1, 1, bind_size, "the element count"},
    {"Slice", 3, 5, 1, bind_slice, "slice (ONNX's clamping); a negative step: index_select"},
    {"Softmax", 1, 1, 1, bind_softmax, "softmax"},
    {"Softplus", 1, 1, 1, bind_softplus, "softplus"},
    {"Split", 1, 2, OM_BIND_MAX_OUT, bind_split, "slice per piece (split input, num_outputs)"},
    {"Sqrt", 1, 1, 1, bind_sqrt, "sqrt"},
    {"Squeeze", 1, 2, 1, bind_squeeze, "squeeze"},
    {"Sub", 2, 2, 1, bind_sub, "sub"},
    {"Sum", 1, MANY, 1, bind_sum, "add, pairwise"},
    {"Tan", 1, 1, 1, bind_tan, "tan"},
    {"Tanh", 1, 1, 1, bind_tanh, "tanh"},
    {"Tile", 2, 2, 1, bind_tile, "reshape, expand, reshape"},
    {"Transpose", 1, 1, 1, bind_transpose, "permute"},
    {"Trilu", 1, 2, 1, bind_trilu, "triu, tril"},
    {"Unsqueeze", 1, 2, 1, bind_unsqueeze, "unsqueeze per axis, ascending"},
    {"Where", 3, 3, 1, bind_where, "where"},
    {"Xor", 2, 2, 1, bind_xor, "ne"},
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
