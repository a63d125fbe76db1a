/* The Session's element types (docs/graph-runtime.md, "Element types"): every value of a graph
 * keeps the ONNX element type it has (TensorProto.DataType) while the library's tensors hold it
 * in a dtype they have: INT8, UINT8, INT16, UINT16, INT32 and UINT32 in int64, UINT64 as its
 * bits in int64 (only the ops that read those right take it), FLOAT16 and BFLOAT16 in float32
 * (both exactly). The table's rules compute on those as they compute on
 * int64 and float32; here, in one place, each node output gets its type from the node's inputs,
 * and an output whose type is narrower than its dtype is narrowed after the rule: integers
 * wrapped modulo 2^bits (ONNX's two's complement arithmetic), floats rounded to nearest even.
 * One float32 operation rounded so is the correctly rounded float16 or bfloat16 operation
 * (+, -, *, /, sqrt: float32 has more than twice their precision plus two bits). */
#include <string.h>

#include "runtime/onnx_ops.h"

enum { T_FLOAT = 1, T_INT64 = 7, T_BOOL = 9, T_DOUBLE = 11, T_UINT64 = 13 };

int om__elem_own(om_dtype d) { return d == OM_FLOAT32 ? T_FLOAT : d == OM_INT64 ? T_INT64 : d == OM_FLOAT64 ? T_DOUBLE : T_BOOL; }

/* Outputs whose type is their dtype's own whatever their inputs' are (int64 indices and counts; the
 * ai.onnx.ml models' float scores and int64 labels): (op type, first such output). */
static const struct {
  const char *op_type;
  int from;
} INT64_OUT[] = {{"ArgMax", 0}, {"ArgMin", 0}, {"MaxPool", 1}, {"NonZero", 0}, {"SequenceLength", 0}, {"Shape", 0}, {"Size", 0}, {"TopK", 1}, {"Unique", 1},
                 {"ai.onnx.ml.LinearClassifier", 0}, {"ai.onnx.ml.LinearRegressor", 0}, {"ai.onnx.ml.Normalizer", 0}, {"ai.onnx.ml.Scaler", 0},
                 {"ai.onnx.ml.TreeEnsembleClassifier", 0}, {"ai.onnx.ml.TreeEnsembleRegressor", 0}};

/* Ops that only move or pick their input's values (never make a new one): their outputs need no
 * narrowing. */
static const char *const MOVES[] = {"Compress", "Concat", "ConcatFromSequence", "DepthToSpace", "Expand", "Flatten", "Gather", "GatherElements", "GatherND",
                                    "Identity", "Max", "Min", "Optional", "OptionalGetElement", "ReduceMax", "ReduceMin", "Relu", "Reshape",
                                    "SequenceAt", "Slice", "SpaceToDepth", "Split", "Squeeze", "Tile", "Transpose", "Unsqueeze", "Where"};

/* Ops whose rule narrows to the output's type itself (a float8 Cast saturating or not, a DOUBLE
 * rounded once): narrowing again could differ (an E5M2 infinity would saturate). */
static const char *const NARROWS_ITSELF[] = {"Cast", "CastLike", "QuantizeLinear"};

static bool listed(const char *op_type, const char *const *list, size_t n) {
  for (size_t k = 0; k < n; k++)
    if (!strcmp(list[k], op_type)) return true;
  return false;
}

/* The ops that take UINT64, held as its bits in int64: those whose result is the same bits
 * (moves, wrapping Add, Sub and Mul, bitwise ops, Equal) and those whose rule reads the bits
 * unsigned (BitShift, the comparisons, Max, Min, Mod, Cast, Pow's exponent of a float base). Any other op would read a value past
 * 2^63 as negative. */
static const char *const TAKE_UINT64[] = {"Add", "BitShift", "BitwiseAnd", "BitwiseNot", "BitwiseOr", "BitwiseXor", "Cast", "CastLike", "Compress",
                                          "Concat", "DepthToSpace", "Equal", "Expand", "Flatten", "Gather", "GatherElements", "GatherND", "Greater",
                                          "GreaterOrEqual", "Identity", "Less", "LessOrEqual", "Max", "Min", "Mod", "Mul", "Pow", "Reshape", "Shape", "Size",
                                          "Slice", "SpaceToDepth", "Split", "Squeeze", "Sub", "Tile", "Transpose", "Unsqueeze", "Where"};

/* Ops whose inputs (those in `same`, a bit per input; EVERY for every one) share ONNX's one type
 * variable T: a file giving them types held in two dtypes is not ONNX (the checker's type
 * inference and onnxruntime refuse it), and the library would promote them (float plus int64 is
 * float), a silent answer to a graph that has none. Types held in one dtype (INT32 and INT64) are
 * not compared: a subgraph's inputs may not declare theirs, and what the library computes on them
 * is the same. */
#define EVERY (~0u)
static const struct {
  const char *op_type;
  unsigned same;
} SAME_T[] = {{"Add", 3}, {"And", 3}, {"BitShift", 3}, {"BitwiseAnd", 3}, {"BitwiseOr", 3}, {"BitwiseXor", 3},
              {"Concat", EVERY}, {"Conv", 7}, {"ConvTranspose", 7}, {"Div", 3}, {"Einsum", EVERY}, {"Equal", 3}, {"Gemm", 7},
              {"Greater", 3}, {"GreaterOrEqual", 3}, {"InstanceNormalization", 7}, {"Less", 3}, {"LessOrEqual", 3}, {"MatMul", 3},
              {"Max", EVERY}, {"Mean", EVERY}, {"Min", EVERY}, {"Mod", 3}, {"Mul", 3}, {"Or", 3}, {"PRelu", 3}, {"Range", 7}, {"Sub", 3},
              {"Sum", EVERY}, {"Where", 6}, {"Xor", 3}};

const char *om__elem_name(int t) {
  static const char *const names[] = {"UNDEFINED", "FLOAT", "UINT8", "INT8", "UINT16", "INT16", "INT32", "INT64", "STRING", "BOOL", "FLOAT16",
                                      "DOUBLE", "UINT32", "UINT64", "COMPLEX64", "COMPLEX128", "BFLOAT16", "FLOAT8E4M3FN", "FLOAT8E4M3FNUZ",
                                      "FLOAT8E5M2", "FLOAT8E5M2FNUZ"};
  return t >= 0 && t < (int)(sizeof names / sizeof *names) ? names[t] : "an unknown type";
}

/* Whether n's inputs of one type variable are held in one dtype: false with Format naming their types. */
static bool same_types(const om_gnode *n, const int *types, const om_tensor *const *in) {
  for (size_t k = 0; k < sizeof SAME_T / sizeof *SAME_T; k++) {
    if (strcmp(SAME_T[k].op_type, n->op_type)) continue;
    int first = -1;
    for (int i = 0; i < n->n_in && i < 32; i++) {
      if (!(SAME_T[k].same >> i & 1) || n->in[i] < 0 || !in[i] || !types[n->in[i]]) continue; /* omitted, a sequence, or no type known */
      if (first < 0) first = i;
      else if (in[i]->dtype != in[first]->dtype)
        return om__fail(OM_ERR_FORMAT, "input %d is %s and input %d is %s; %s takes one type for both", first, om__elem_name(types[n->in[first]]), i,
                        om__elem_name(types[n->in[i]]), n->op_type);
    }
    return true;
  }
  return true;
}

bool om__elem_check_inputs(const om_gnode *n, const int *types, const om_tensor *const *in) {
  if (!same_types(n, types, in)) return false;
  for (int i = 0; i < n->n_in; i++)
    if (n->in[i] >= 0 && in[i] && types[n->in[i]] == T_UINT64 && !listed(n->op_type, TAKE_UINT64, sizeof TAKE_UINT64 / sizeof *TAKE_UINT64))
      return om__fail(OM_ERR_UNSUPPORTED, "input %d is UINT64, which %s does not take (the ops that do: docs/graph-runtime.md, \"Element types\")", i,
                      n->op_type);
  return true;
}

/* The value's attribute `name` as an int, or def. */
static int64_t attr_int(const om_gnode *n, const char *name, int64_t def) {
  for (int a = 0; a < n->n_attrs; a++)
    if (!strcmp(n->attrs[a].name, name)) return n->attrs[a].type == OM_GATTR_INT ? n->attrs[a].i : def;
  return def;
}

int om__elem_type_out(const om_gnode *n, int j, om_dtype dtype, const int *types, const om_tensor *const *in) {
  int own = om__elem_own(dtype), t = 0;
  for (size_t k = 0; k < sizeof INT64_OUT / sizeof *INT64_OUT; k++)
    if (!strcmp(INT64_OUT[k].op_type, n->op_type) && j >= INT64_OUT[k].from) return own;
  if (!strcmp(n->op_type, "Cast")) t = (int)attr_int(n, "to", 0);
  else if (!strcmp(n->op_type, "EyeLike")) t = (int)attr_int(n, "dtype", 0);
  else if (!strcmp(n->op_type, "SequenceEmpty")) t = (int)attr_int(n, "dtype", T_FLOAT);
  else if (n->n_in && n->in[0] >= 0 && !in[0]) t = types[n->in[0]]; /* a sequence's (or an optional's) elements give it */
  else if ((!strcmp(n->op_type, "QuantizeLinear") && (n->n_in < 3 || n->in[2] < 0)) || (!strcmp(n->op_type, "DynamicQuantizeLinear") && j != 1))
    t = 2; /* UINT8 where no zero point gives the type */
  else if (!strcmp(n->op_type, "QuantizeLinear")) t = types[n->in[2]];
  else if (!strcmp(n->op_type, "DequantizeLinear")) t = types[n->in[1]]; /* the scale's (a float8 input is held in float32 too) */
  else if (!strcmp(n->op_type, "MatMulInteger") || !strcmp(n->op_type, "ConvInteger"))
    t = 6; /* INT32 */
  else if (strstr(n->op_type, "Window")) t = (int)attr_int(n, "output_datatype", T_FLOAT);
  else if (!strcmp(n->op_type, "CastLike")) t = types[n->in[1]];
  else if (!strcmp(n->op_type, "OneHot")) t = types[n->in[2]];
  else if (!strncmp(n->op_type, "QLinear", 7) && n->n_in > 7) t = types[n->in[7]]; /* y_zero_point's */
  else if (!strcmp(n->op_type, "ai.onnx.ml.LabelEncoder")) { /* values_tensor's type (a narrower one than its dtype), never the input's */
    for (int a = 0; a < n->n_attrs; a++)
      if (!strcmp(n->attrs[a].name, "values_tensor") && n->attrs[a].type == OM_GATTR_TENSOR) t = (int)n->attrs[a].i;
    if (!t) return own;
  } else if (!strcmp(n->op_type, "ConstantOfShape"))
    for (int a = 0; a < n->n_attrs; a++)
      if (n->attrs[a].type == OM_GATTR_TENSOR) t = (int)n->attrs[a].i;
  for (int i = 0; !t && i < n->n_in; i++) /* else the first input held in the same dtype gives its type */
    if (n->in[i] >= 0 && in[i] && in[i]->dtype == dtype) t = types[n->in[i]];
  return t && om__elem_holds(dtype, t) ? t : own;
}

bool om__elem_holds(om_dtype dtype, int t) {
  switch (t) {
    case 1: case 10: case 16: case 17: case 18: case 19: case 20: return dtype == OM_FLOAT32;
    case 2: case 3: case 4: case 5: case 6: case 7: case 12: case 13: return dtype == OM_INT64;
    case 9: return dtype == OM_BOOL;
    case 11: return dtype == OM_FLOAT64;
    default: return false;
  }
}

om_tensor *om__elem_narrow(om_tensor *t, int type, const char *op_type) {
  if (!t || type == om__elem_own(t->dtype) || type == T_UINT64 || (op_type && (listed(op_type, MOVES, sizeof MOVES / sizeof *MOVES) ||
                                                           listed(op_type, NARROWS_ITSELF, sizeof NARROWS_ITSELF / sizeof *NARROWS_ITSELF))))
    return t;
  om_tensor *r = om__cast_narrow(t, t->dtype, type, true, false);
  om_tensor_release(t);
  return r;
}
