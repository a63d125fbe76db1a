/* The version import pass: a graph read from an ONNX file of default-domain opset 1 to 19 has its
 * nodes rewritten into the opset-20 forms the op table's rules read (src/runtime/onnx_ops.c,
 * whose rows know opset 20 only), before the session binds any. Each change between op versions
 * that a rule would read otherwise is one entry here:
 *
 *   attributes that became inputs   Reshape shape (5), Slice starts/ends/axes (10), Pad
 *                                   pads/value (11; opset 1 calls pads paddings), Clip
 *                                   min/max (11), TopK k (10), Dropout ratio (12), Squeeze,
 *                                   Unsqueeze, ReduceSum axes and Split split (13), the other
 *                                   Reduce* axes (18): each an initializer on the node's input
 *   ops renamed                     Upsample (7 to 9, deprecated since) and Resize 10 are
 *                                   Resize with asymmetric coordinates (nearest: floor), Scatter
 *                                   (9, 10) is ScatterElements
 *   attribute values                Cast's to as a type name (before 6), Concat's default axis 1
 *                                   (before 4)
 *   semantics                       the broadcast attribute of binary ops and Gemm (before 7):
 *                                   B's shape a suffix of A's is numpy's broadcast, dropped; with
 *                                   an axis, B's trailing dims unsqueezed to A's rank (both ranks
 *                                   known: inputs or initializers; else refused); PRelu's slope
 *                                   of one value per channel likewise at axis 1. is_test (before 7): 1 dropped, 0 (the default:
 *                                   training) refused for Dropout and BatchNormalization. Upsample 1
 *                                   refused. Softmax, LogSoftmax and Hardmax before 13 coerce the input
 *                                   to 2-D at axis (default 1): Flatten, the op on axis 1,
 *                                   Reshape back to Shape(x); BatchNormalization's spatial
 *                                   (before 9): 1 dropped, 0 refused; Scan before 9 (a batch
 *                                   axis, sequence_lens first) marked OM_SCAN8_MARK for its row,
 *                                   sequence_lens moved to the last input, directions named
 *                                   scan_input_directions
 *
 * Changes that only widen what a version takes (types, negative axes, optional inputs, new
 * attributes whose defaults are the old behaviour) need nothing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/onnx_ops.h"

/* The node being rewritten is g->nodes.v[k]; new nodes go to out. */
typedef struct upgrade {
  om_graph *g;
  int opset;
  OM_VEC(om_gnode) out;
} upgrade;

static om_gattr *find_attr(om_gnode *n, const char *name) {
  for (int a = 0; a < n->n_attrs; a++)
    if (!strcmp(n->attrs[a].name, name)) return &n->attrs[a];
  return NULL;
}

static void drop_attr(om_gnode *n, const om_gattr *a) {
  int at = (int)(a - n->attrs);
  memmove(&n->attrs[at], &n->attrs[at + 1], sizeof *n->attrs * (size_t)(n->n_attrs - at - 1));
  n->n_attrs--;
}

/* A new value named after node n and what: an initializer holding t (taken over), or with t NULL
 * one a new node computes; its id, -1 with an error. */
static int new_value(om_graph *g, const om_gnode *n, const char *what, om_tensor *t) {
  int v = om__graph_value(g, t ? t->dtype : OM_FLOAT32, t ? t->ndim : 0, t ? t->shape : NULL);
  const char *name = v >= 0 ? om__arena_printf(&g->arena, "%s:%s", n->name, what) : NULL;
  om_ginit *init = name && t ? OM_VEC_PUSH_SLOT(g->inits) : NULL;
  if (!name || (t && !init)) return om_tensor_release(t), -1;
  g->values.v[v].name = name;
  if (t) {
    *init = (om_ginit){.value = v, .tensor = t, .first_use = -1};
    g->values.v[v].init = g->inits.n - 1;
  }
  return v;
}

/* Input i of n becomes value v (the inputs before it that the node leaves out: omitted). */
static bool set_input(om_graph *g, om_gnode *n, int i, int v) {
  if (i < n->n_in && n->in[i] >= 0)
    return om__fail(OM_ERR_FORMAT, "onnx: node '%s' (%s) has input %d and the attribute that older opsets gave it as", n->name, n->op_type, i);
  if (i >= n->n_in) {
    int *in = om__arena_alloc(&g->arena, sizeof(int) * (size_t)(i + 1));
    if (!in) return false;
    memcpy(in, n->in, sizeof(int) * (size_t)n->n_in);
    for (int q = n->n_in; q < i; q++) in[q] = -1;
    n->in = in, n->n_in = i + 1;
  }
  n->in[i] = v;
  return true;
}

/* Attribute name of n (when present) moves to input i: INTS as an int64 list, INT as a one-element
 * int64 list, FLOAT as a float32 scalar. */
static bool attr_to_input(om_graph *g, om_gnode *n, const char *name, int i) {
  om_gattr *a = find_attr(n, name);
  if (!a && n->n_in > i) /* the op's version before takes only the inputs before (one, in each of these); with a, set_input says so */
    return om__fail(OM_ERR_FORMAT, "onnx: node '%s' (%s) has %d inputs; the model's opset takes %d (%s is an attribute there)", n->name,
                    n->op_type, n->n_in, i, name);
  if (!a) return true;
  int64_t len = a->n, one = 1;
  om_tensor *t = a->type == OM_GATTR_INTS ? om_from_data(a->ints, &len, 1, OM_INT64)
                 : a->type == OM_GATTR_INT ? om_from_data(&a->i, &one, 1, OM_INT64)
                 : a->type == OM_GATTR_FLOAT ? om_scalar(a->f, OM_FLOAT32) : NULL;
  if (!t && a->type != OM_GATTR_INTS && a->type != OM_GATTR_INT && a->type != OM_GATTR_FLOAT)
    return om__fail(OM_ERR_FORMAT, "onnx: node '%s' (%s): attribute %s has the wrong type", n->name, n->op_type, name);
  int v = t ? new_value(g, n, name, t) : -1;
  if (v < 0 || !set_input(g, n, i, v)) return false;
  drop_attr(n, a);
  return true;
}

/* Attribute name of n to set: its own, or a new one added to the node. */
static om_gattr *attr_slot(om_graph *g, om_gnode *n, const char *name) {
  om_gattr *a = find_attr(n, name);
  if (a) return a;
  om_gattr *attrs = om__arena_alloc(&g->arena, sizeof *attrs * (size_t)(n->n_attrs + 1));
  if (!attrs) return NULL;
  memcpy(attrs, n->attrs, sizeof *attrs * (size_t)n->n_attrs);
  n->attrs = attrs;
  return &n->attrs[n->n_attrs++];
}

static bool set_string(om_graph *g, om_gnode *n, const char *name, const char *s) {
  om_gattr *a = attr_slot(g, n, name);
  return a && (*a = OM_ATTR_STRING(name, s), true);
}

/* A node of op_type reading in[0..n_in) and writing out, with attrs (copied), appended to u->out. */
static bool emit(upgrade *u, const om_gnode *from, const char *op_type, const char *suffix, const int *in, int n_in, int out,
                 const om_gattr *attrs, int n_attrs) {
  om_gnode *n = OM_VEC_PUSH_SLOT(u->out);
  if (!n) return false;
  *n = (om_gnode){.op = -1, .op_type = op_type, .n_in = n_in, .n_out = 1, .n_attrs = n_attrs};
  n->name = om__arena_printf(&u->g->arena, "%s:%s", from->name, suffix);
  n->in = om__arena_alloc(&u->g->arena, sizeof(int) * (size_t)n_in);
  n->out = om__arena_alloc(&u->g->arena, sizeof(int));
  n->attrs = om__arena_alloc(&u->g->arena, sizeof(om_gattr) * (size_t)(n_attrs + 1));
  if (!n->name || !n->in || !n->out || !n->attrs) return false;
  memcpy(n->in, in, sizeof(int) * (size_t)n_in);
  if (n_attrs) memcpy(n->attrs, attrs, sizeof(om_gattr) * (size_t)n_attrs);
  n->out[0] = out;
  return true;
}

/* Softmax, LogSoftmax, Hardmax before opset 13: the input as a matrix [d0 .. d(axis-1), the rest],
 * the op along its rows, then the input's shape again. */
static bool coerce_2d(upgrade *u, om_gnode *n) {
  int64_t axis = 1;
  om_gattr *a = find_attr(n, "axis");
  if (a) axis = a->i;
  int x = n->in[0], y = n->out[0], flat = new_value(u->g, n, "2d", NULL), rows = new_value(u->g, n, "rows", NULL);
  int shape = new_value(u->g, n, "shape", NULL);
  if (flat < 0 || rows < 0 || shape < 0) return false;
  om_gattr fa = OM_ATTR_INT("axis", axis), sa = OM_ATTR_INT("axis", 1);
  return emit(u, n, "Flatten", "flatten", &x, 1, flat, &fa, 1) && emit(u, n, n->op_type, "rows", &flat, 1, rows, &sa, 1) &&
         emit(u, n, "Shape", "shape", &x, 1, shape, NULL, 0) && emit(u, n, "Reshape", "reshape", (int[]){rows, shape}, 2, y, NULL, 0);
}

/* Upsample (opset 7: scales an attribute, 9: input 1) and Resize 10 (scales input 1) as Resize:
 * roi omitted, scales input 2, asymmetric coordinates (nearest: floor), as they computed. */
static bool to_resize(upgrade *u, om_gnode *n) {
  om_graph *g = u->g;
  om_gattr *scales = find_attr(n, "scales");
  int s = -1;
  if (scales) {
    if (scales->type != OM_GATTR_FLOATS) return om__fail(OM_ERR_FORMAT, "onnx: node '%s' (%s): attribute scales must be floats", n->name, n->op_type);
    int64_t len = scales->n;
    om_tensor *t = om_from_data(scales->floats, &len, 1, OM_FLOAT32);
    if (!t || (s = new_value(g, n, "scales", t)) < 0) return false;
    drop_attr(n, scales);
  } else if (n->n_in > 1) {
    s = n->in[1];
    n->in[1] = -1;
  }
  if (s < 0) return om__fail(OM_ERR_FORMAT, "onnx: node '%s' (%s) has no scales", n->name, n->op_type);
  om_gattr *mode = find_attr(n, "mode");
  if (mode && mode->type == OM_GATTR_STRING && !strcmp(mode->s, "bilinear")) mode->s = "linear"; /* Upsample 7's name for it */
  n->op_type = "Resize";
  return set_input(g, n, 2, s) && set_string(g, n, "coordinate_transformation_mode", "asymmetric") &&
         set_string(g, n, "nearest_mode", "floor");
}

static bool is(const om_gnode *n, const char *op) { return !strcmp(n->op_type, op); }

static bool refuse(const om_gnode *n, const char *what) {
  return om__fail(OM_ERR_UNSUPPORTED, "onnx: node '%s' (%s): %s is not supported", n->name, n->op_type, what);
}

/* n's input 1 (of rank) with `after` dims of 1 appended by an Unsqueeze emitted before n (none
 * when after is 0). */
static bool unsqueeze_after(upgrade *u, om_gnode *n, int rank, int after) {
  if (!after) return true;
  int64_t axes[OM_MAX_DIMS], len = after;
  for (int k = 0; k < after && k < OM_MAX_DIMS; k++) axes[k] = rank + k;
  om_tensor *t = after <= OM_MAX_DIMS ? om_from_data(axes, &len, 1, OM_INT64) : NULL;
  int ax = t ? new_value(u->g, n, "axes", t) : -1, wide = ax >= 0 ? new_value(u->g, n, "b", NULL) : -1;
  if (wide < 0 || !emit(u, n, "Unsqueeze", "unsqueeze", (int[]){n->in[1], ax}, 2, wide, NULL, 0)) return false;
  n->in[1] = wide;
  return true;
}

/* A binary op's broadcast with an axis (before opset 7): B's dims are A's from axis on, so B with
 * the dims after its own as 1 (an Unsqueeze, when there are any) broadcasts as numpy's. Both ranks
 * must be known before the session binds: A and B graph inputs or initializers (else refused). */
static bool broadcast_at_axis(upgrade *u, om_gnode *n) {
  om_graph *g = u->g;
  om_gattr *at = find_attr(n, "axis");
  const om_gvalue *a = n->n_in == 2 && n->in[0] >= 0 ? &g->values.v[n->in[0]] : NULL, *b = a && n->in[1] >= 0 ? &g->values.v[n->in[1]] : NULL;
  if (!b || a->producer >= 0 || b->producer >= 0 || at->type != OM_GATTR_INT)
    return refuse(n, "broadcast with an axis (opset 6 and before) of a value computed by a node");
  int64_t axis = at->i < 0 ? at->i + a->ndim : at->i, after = a->ndim - axis - b->ndim;
  if (axis < 0 || after < 0)
    return om__fail(OM_ERR_FORMAT, "onnx: node '%s' (%s): B of %d dims does not fit at axis %lld of A's %d", n->name, n->op_type, b->ndim,
                    (long long)at->i, a->ndim);
  drop_attr(n, at);
  return unsqueeze_after(u, n, b->ndim, (int)after);
}

/* PRelu before opset 7: a slope of one value per channel (of size C, or 1 shared) against X of
 * [N, C, ...]: as broadcast at axis 1, where both ranks are known (else left to numpy's
 * broadcast, which a slope of one value or of X's last size takes as well). */
static bool prelu_channels(upgrade *u, om_gnode *n) {
  const om_gvalue *x = n->n_in == 2 && n->in[0] >= 0 ? &u->g->values.v[n->in[0]] : NULL, *slope = x && n->in[1] >= 0 ? &u->g->values.v[n->in[1]] : NULL;
  if (!slope || x->producer >= 0 || slope->producer >= 0 || slope->ndim != 1 || x->ndim < 3) return true;
  return unsqueeze_after(u, n, 1, x->ndim - 2);
}

/* The changes of opsets 1 to 6 (before the opset-7 broadcast rules): false with an error. */
static bool upgrade_before_7(upgrade *u, om_gnode *n) {
  static const char *const binary[] = {"Add", "And", "Div", "Equal", "Gemm", "Greater", "Less", "Mul", "Or", "Pow", "Sub", "Xor"};
  om_graph *g = u->g;
  for (size_t k = 0; k < sizeof binary / sizeof *binary; k++) {
    om_gattr *b = is(n, binary[k]) ? find_attr(n, "broadcast") : NULL;
    if (!b) continue;
    drop_attr(n, b);
    if (find_attr(n, "axis") && !broadcast_at_axis(u, n)) return false;
  }
  if (is(n, "PRelu") && !prelu_channels(u, n)) return false;
  om_gattr *test = find_attr(n, "is_test");
  if (is(n, "Dropout") || is(n, "BatchNormalization")) {
    if (!test || test->i != 1) return refuse(n, "training mode (is_test 0, the default before opset 7)");
    drop_attr(n, test);
  }
  if (is(n, "Upsample")) return refuse(n, "Upsample of opset 1 (experimental)");
  if (is(n, "Tile") && n->n_in > 2) return refuse(n, "Tile of opset 1 (tiles and axis inputs)");
  if (u->opset < 5 && is(n, "Reshape") && !attr_to_input(g, n, "shape", 1)) return false;
  if (u->opset < 2 && is(n, "Pad") && !attr_to_input(g, n, "paddings", 1)) return false;
  if (u->opset < 4 && is(n, "Concat") && !find_attr(n, "axis")) {
    om_gattr *axis = attr_slot(g, n, "axis");
    if (!axis) return false;
    *axis = OM_ATTR_INT("axis", 1);
  }
  om_gattr *to = is(n, "Cast") ? find_attr(n, "to") : NULL;
  if (to && to->type == OM_GATTR_STRING) { /* opset 1 names the type */
    static const char *const names[] = {"FLOAT", "INT32", "INT64", "BOOL"};
    static const int64_t codes[] = {1, 6, 7, 9};
    size_t k = 0;
    while (k < 4 && strcmp(to->s, names[k])) k++;
    if (k == 4) return refuse(n, "this type name in to");
    *to = OM_ATTR_INT("to", codes[k]);
  }
  return true;
}

/* The opset that first defines each op of the default domain that opset 1 lacks (ONNX's
 * operator changelog). A model's node of an op its opset does not define yet is not ONNX: its
 * checker and onnxruntime refuse it ("No Op registered for Gelu with domain_version of 17"), and
 * the table's rules, which read opset 20's forms, would run it anyway. */
static const struct {
  int since;
  const char *ops;
} since[] = {
    {7, " Acos Asin Atan Cos Multinomial Sin Tan "},
    {8, " Expand Scan "},
    {9, " Acosh Asinh Atanh Compress ConstantOfShape Cosh Erf EyeLike IsNaN MaxUnpool MeanVarianceNormalization NonZero "
        "OneHot Scatter Shrink Sign Sinh TfIdfVectorizer Where "},
    {10, " ConvInteger DequantizeLinear IsInf MatMulInteger Mod NonMaxSuppression QLinearConv QLinearMatMul QuantizeLinear "
         "Resize ReverseSequence RoiAlign StringNormalizer ThresholdedRelu "},
    {11, " BitShift ConcatFromSequence CumSum Det DynamicQuantizeLinear GatherElements GatherND Range Round ScatterElements "
         "ScatterND SequenceAt SequenceConstruct SequenceEmpty SequenceErase SequenceInsert SequenceLength SplitToSequence Unique "},
    {12, " Celu Einsum GreaterOrEqual LessOrEqual NegativeLogLikelihoodLoss SoftmaxCrossEntropyLoss "},
    {14, " HardSwish Trilu "},
    {15, " Bernoulli CastLike Optional OptionalGetElement OptionalHasElement "},
    {16, " GridSample "},
    {17, " BlackmanWindow DFT HammingWindow HannWindow LayerNormalization MelWeightMatrix STFT SequenceMap "},
    {18, " BitwiseAnd BitwiseNot BitwiseOr BitwiseXor CenterCropPad Col2Im GroupNormalization Mish "},
    {19, " DeformConv "},
    {20, " AffineGrid Gelu ImageDecoder RegexFullMatch StringConcat StringSplit "},
};

/* The opset that first defines op_type (1 for those of opset 1 and other domains' ops). */
static int defined_since(const char *op_type) {
  char key[80];
  if (strlen(op_type) + 3 > sizeof key) return 1;
  snprintf(key, sizeof key, " %s ", op_type);
  for (size_t k = 0; k < sizeof since / sizeof *since; k++)
    if (strstr(since[k].ops, key)) return since[k].since;
  return 1;
}

/* Node n of opset u->opset into its opset-20 form: rewritten in place, or replaced by the nodes
 * it appends to u->out (returns 2 then, 1 when n itself goes to out, 0 with an error). */
static int upgrade_node(upgrade *u, om_gnode *n) {
  om_graph *g = u->g;
  int v = u->opset, first = defined_since(n->op_type);
  if (first > v)
    return om__fail(OM_ERR_FORMAT, "onnx: node '%s' (%s): %s is defined from opset %d, and the model imports opset %d", n->name,
                    n->op_type, n->op_type, first, v), 0;
  static const char *const reduce18[] = {"ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax",
                                         "ReduceMean", "ReduceMin", "ReduceProd", "ReduceSumSquare"};
  if (v < 7 && !upgrade_before_7(u, n)) return 0;
  if (v < 9 && is(n, "Scan")) { /* opset 8's form (a batch axis, sequence_lens): marked for the Scan row */
    om_gattr *mark = attr_slot(g, n, OM_SCAN8_MARK);
    if (!mark) return 0;
    *mark = OM_ATTR_INT(OM_SCAN8_MARK, 8);
    om_gattr *dirs = find_attr(n, "directions"); /* opset 9's scan_input_directions by its opset-8 name (the row lists opset 20's) */
    if (dirs) dirs->name = "scan_input_directions";
    if (n->n_in > 1) { /* sequence_lens (optional) from first to last, so the states and scan inputs lead as in opset 9 */
      int lens = n->in[0];
      memmove(n->in, n->in + 1, sizeof(int) * (size_t)(n->n_in - 1));
      n->in[n->n_in - 1] = lens;
    }
  }
  for (int a = 0; a < n->n_attrs; a++) /* a subgraph's nodes are of the model's opset too */
    if (n->attrs[a].type == OM_GATTR_GRAPH && !om__upgrade_nodes(n->attrs[a].g, v)) return 0;
  bool ok = true; /* each change below is of one op type: at most one assigns */
  if (v < 10 && is(n, "Slice")) ok = attr_to_input(g, n, "starts", 1) && attr_to_input(g, n, "ends", 2) && attr_to_input(g, n, "axes", 3);
  if (v < 10 && is(n, "TopK")) ok = attr_to_input(g, n, "k", 1);
  if (v < 11 && is(n, "Pad")) ok = attr_to_input(g, n, "pads", 1) && attr_to_input(g, n, "value", 2);
  if (v < 11 && is(n, "Clip")) ok = attr_to_input(g, n, "min", 1) && attr_to_input(g, n, "max", 2);
  if (v < 12 && is(n, "Dropout")) ok = attr_to_input(g, n, "ratio", 1);
  if (v < 13 && (is(n, "Squeeze") || is(n, "Unsqueeze") || is(n, "ReduceSum"))) ok = attr_to_input(g, n, "axes", 1);
  if (v < 13 && is(n, "Split")) ok = attr_to_input(g, n, "split", 1);
  for (size_t r = 0; v < 18 && r < sizeof reduce18 / sizeof *reduce18; r++)
    if (is(n, reduce18[r])) ok = attr_to_input(g, n, "axes", 1);
  if (ok && (is(n, "Upsample") || (v < 11 && is(n, "Resize")))) ok = to_resize(u, n);
  if (ok && is(n, "Scatter")) n->op_type = "ScatterElements"; /* the same op (deprecated in 11 under the new name) */
  if (ok && v < 9 && is(n, "BatchNormalization")) {
    om_gattr *spatial = find_attr(n, "spatial");
    if (spatial && spatial->i != 1)
      return om__fail(OM_ERR_UNSUPPORTED, "onnx: node '%s' (BatchNormalization): spatial 0 (statistics per element) is not supported", n->name), 0;
    if (spatial) drop_attr(n, spatial);
  }
  if (!ok) return 0;
  if (v < 13 && (is(n, "Softmax") || is(n, "LogSoftmax") || is(n, "Hardmax"))) return coerce_2d(u, n) ? 2 : 0;
  om_gnode *slot = OM_VEC_PUSH_SLOT(u->out);
  if (!slot) return 0;
  *slot = *n;
  return 1;
}

bool om__upgrade_nodes(om_graph *g, int opset) {
  if (opset >= 20) return true;
  upgrade u = {.g = g, .opset = opset};
  bool ok = true;
  for (int k = 0; ok && k < g->nodes.n; k++) ok = upgrade_node(&u, &g->nodes.v[k]) > 0;
  if (ok) { /* the new list (each node's replacement where it stood, so still in execution order) */
    free(g->nodes.v);
    g->nodes.v = u.out.v, g->nodes.n = u.out.n, g->nodes.cap = u.out.cap;
    for (int k = 0; k < g->nodes.n; k++)
      for (int j = 0; j < g->nodes.v[k].n_out; j++) g->values.v[g->nodes.v[k].out[j]].producer = k;
  } else {
    free(u.out.v);
  }
  return ok;
}
