/* The graph layer: the ONNX reader (round trips of traced models, hostile bytes, a seeded
 * mutation run) and the Session (every op of the op table traced and run on the library's
 * kernels against eager, plans per signature, bound axes, the errors of each path). */
#include <stdlib.h>

#include "runtime/onnx_ops.h"
#include "runtime/plan.h"
#include "internal.h"
#include "om_test.h"

/* The library format bytes of m (version 2). */
static bytes saved(const om_traced_model *m) {
  bytes b = {0};
  if (!om_traced_save(m, to_bytes, &b)) FAILED("save: %s", om_last_error_message());
  return b;
}

static bytes onnx_of(const om_traced_model *m) {
  bytes b = {0};
  if (!om_traced_write_onnx(m, to_bytes, &b)) FAILED("write: %s", om_last_error_message());
  return b;
}

/* max |a - b| <= tol * max(1, max |b|) with equal shapes and dtypes (NaN matching NaN). */
static bool close_to(om_tensor *a, om_tensor *b, double tol, char *why, size_t cap) {
  if (!a || !b) return snprintf(why, cap, "missing output"), false;
  if (om_tensor_dtype(a) != om_tensor_dtype(b) || om_tensor_ndim(a) != om_tensor_ndim(b))
    return snprintf(why, cap, "dtype/rank %d/%d vs %d/%d", om_tensor_dtype(a), om_tensor_ndim(a), om_tensor_dtype(b), om_tensor_ndim(b)), false;
  for (int d = 0; d < om_tensor_ndim(a); d++)
    if (om_tensor_shape(a)[d] != om_tensor_shape(b)[d])
      return snprintf(why, cap, "size %lld vs %lld at dim %d", (long long)om_tensor_shape(a)[d], (long long)om_tensor_shape(b)[d], d), false;
  double scale = 1, worst = 0;
  for (int64_t k = 0; k < om_tensor_numel(b); k++)
    if (isfinite(at(b, k)) && fabs(at(b, k)) > scale) scale = fabs(at(b, k));
  for (int64_t k = 0; k < om_tensor_numel(b); k++) {
    double x = at(a, k), y = at(b, k);
    double e = x == y || (isnan(x) && isnan(y)) ? 0 : isnan(x - y) ? INFINITY : fabs(x - y);
    worst = e > worst ? e : worst;
  }
  if (worst <= tol * scale) return true;
  return snprintf(why, cap, "max error %g > %g", worst, tol * scale), false;
}

/* ---- the op table: every op traced on its sample, run by the session ---- */

/* Traces op on s (every input a graph input) and returns the model, or NULL when the tracer
 * refuses the op (losses, a training-mode dropout): that refusal is the trace tests' concern. */
static om_traced_model *trace_op(int op, om_tensor *const *in, int n, const om_attrs *attrs, int *n_out) {
  om_trace_begin();
  om_tensor *tin[OM_TEST_MAX_INPUTS] = {0}, *out[OM_MAX_OUTPUTS] = {0};
  char names[OM_TEST_MAX_INPUTS][16];
  for (int i = 0; i < n; i++) {
    snprintf(names[i], sizeof names[i], "in%d", i);
    tin[i] = om_trace_input(names[i], in[i], NULL);
  }
  int k = om__apply((om_op)op, tin, n, attrs, out);
  const char *onames[OM_MAX_OUTPUTS] = {"out0", "out1", "out2"};
  om_traced_model *m = k > 0 ? om_trace_finish(out, onames, k) : NULL;
  if (!m) om_trace_abort();
  om__release_all(tin, n);
  om__release_all(out, k > 0 ? k : 0);
  *n_out = k;
  om_clear_error();
  return m;
}

/* The session's outputs on in against eager's (what: "traced" or "onnx"). */
static void check_session(om_session *s, const char *name, const char *what, om_tensor *const *in, int n, om_tensor *const *eager, int n_out) {
  om_tensor *got[OM_MAX_OUTPUTS] = {0};
  int k = s ? om_session_run(s, in, n, got, OM_MAX_OUTPUTS) : -1;
  if (k != n_out) {
    FAILED("%s (%s session): %d outputs, expected %d: %s", name, what, k, n_out, om_last_error_message());
  } else {
    char why[160];
    for (int j = 0; j < k; j++)
      if (!close_to(got[j], eager[j], 1e-5, why, sizeof why)) FAILED("%s (%s session): output %d: %s", name, what, j, why);
  }
  om__release_all(got, k > 0 ? k : 0);
}

TEST(every_op_runs_in_a_session) {
  int traced = 0;
  for (int op = 0; op < OM_OP_COUNT; op++) {
    const om_op_def *def = om__ops[op];
    om_tensor *in[OM_TEST_MAX_INPUTS] = {0}, *eager[OM_MAX_OUTPUTS] = {0};
    int n = om__op_sample((om_op)op, in), n_out = 0;
    om_traced_model *m = n > 0 ? trace_op(op, in, n, &def->test.attrs, &n_out) : NULL;
    int ne = m ? om__apply((om_op)op, in, n, &def->test.attrs, eager) : 0;
    if (m && ne == n_out) {
      traced++;
      om_session *s = om_session_create(m, NULL);
      check_session(s, def->name, "traced", in, n, eager, n_out);
      om_session_release(s);
      bytes b = onnx_of(m);
      s = om_session_open(b.p, b.n, NULL);
      check_session(s, def->name, "onnx", in, n, eager, n_out);
      om_session_release(s);
      free(b.p);
    }
    om__release_all(eager, ne > 0 ? ne : 0);
    om_traced_release(m);
    om__release_all(in, n > 0 ? n : 0);
  }
  if (traced < OM_OP_COUNT - 6) FAILED("only %d of %d ops traced", traced, OM_OP_COUNT);
}

/* The attention op's q-scale kinds (only the fast-mode pass records them, so the op table's
 * sample does not): traced on the sample, lowered as Mul or Div of q before the MatMul, and run
 * from the traced model and from its ONNX bytes, against eager. */
TEST(attention_q_scale_kinds_trace_and_run) {
  for (int sk = OM_ATTN_Q_MUL; sk <= OM_ATTN_Q_DIV; sk++) {
    om_tensor *in[OM_TEST_MAX_INPUTS] = {0}, *eager[OM_MAX_OUTPUTS] = {0};
    int n = om__op_sample(OM_OP_attention, in), n_out = 0;
    om_attrs at = om__ops[OM_OP_attention]->test.attrs;
    at.i[2] = sk, at.f[0] = 3;
    om_traced_model *m = n > 0 ? trace_op(OM_OP_attention, in, n, &at, &n_out) : NULL;
    int ne = m ? om__apply(OM_OP_attention, in, n, &at, eager) : 0;
    CHECK(m && ne == 1 && n_out == 1);
    if (m && ne == n_out) {
      om_session *s = om_session_create(m, NULL);
      check_session(s, "attention (q scaled)", "traced", in, n, eager, n_out);
      om_session_release(s);
      bytes b = onnx_of(m);
      s = om_session_open(b.p, b.n, NULL);
      check_session(s, "attention (q scaled)", "onnx", in, n, eager, n_out);
      om_session_release(s);
      free(b.p);
    }
    om__release_all(eager, ne > 0 ? ne : 0);
    om_traced_release(m);
    om__release_all(in, n > 0 ? n : 0);
  }
}

/* ---- a model with a symbolic batch ---- */

static om_tensor *mlp_w1, *mlp_b1, *mlp_w2;
static int mlp(void *ctx, om_tensor *const *in, int n, om_tensor **out, int max) {
  (void)ctx, (void)n, (void)max;
  om_tensor *h = om_linear(in[0], mlp_w1, mlp_b1), *r = om_relu(h), *l = om_linear(r, mlp_w2, NULL);
  int64_t shape[2] = {-1, 6};
  om_tensor *flat = om_reshape(l, shape, 2);
  out[0] = om_softmax(flat, 1);
  om_tensor_release(h);
  om_tensor_release(r);
  om_tensor_release(l);
  om_tensor_release(flat);
  return out[0] ? 1 : -1;
}

static om_traced_model *trace_mlp(void) {
  int64_t s1[2] = {8, 4}, s2[1] = {8}, s3[2] = {6, 8}, sx[2] = {3, 4};
  mlp_w1 = om_randn(s1, 2, 1, true), mlp_b1 = om_randn(s2, 1, 2, true), mlp_w2 = om_randn(s3, 2, 3, true);
  om_tensor *x = om_randn(sx, 2, 4, true), *y = NULL;
  om_trace_begin();
  om_tensor *tx = om_trace_input("x", x, (const char *[]){"batch", NULL});
  om_traced_model *m = om_trace_run(mlp, NULL, &y, 1) == 1 ? om_trace_finish(&y, (const char *[]){"probs"}, 1) : NULL;
  CHECK(m != NULL);
  om_tensor_release(tx);
  om_tensor_release(y);
  om_tensor_release(x);
  return m;
}

static void free_mlp(void) {
  om_tensor_release(mlp_w1);
  om_tensor_release(mlp_b1);
  om_tensor_release(mlp_w2);
}

TEST(symbolic_batch_plans_per_signature) {
  om_traced_model *m = trace_mlp();
  om_session *s = om_session_create(m, NULL);
  CHECK(s != NULL);
  CHECK_EQ_INT(om_session_count(s, false), 1);
  CHECK(!strcmp(om_session_name(s, false, 0), "x"));
  CHECK(!strcmp(om_session_name(s, true, 0), "probs"));
  const char *params[OM_MAX_DIMS] = {0};
  int64_t shape[OM_MAX_DIMS];
  int ndim = 0;
  CHECK(om_session_input_info(s, 0, NULL, &ndim, shape, params));
  CHECK(ndim == 2 && shape[0] == -1 && shape[1] == 4 && params[0] && !strcmp(params[0], "batch") && !params[1]);
  for (int64_t batch = 1; batch <= 7; batch += 3) { /* 1, 4, 7, and 4 again from its plan */
    for (int again = 0; again < (batch == 4 ? 2 : 1); again++) {
      int64_t sx[2] = {batch, 4};
      om_tensor *x = om_randn(sx, 2, 10 + (uint64_t)batch, true), *eager = NULL, *got = NULL;
      mlp(NULL, &x, 1, &eager, 1);
      CHECK_EQ_INT(om_session_run(s, &x, 1, &got, 1), 1);
      char why[160];
      if (!close_to(got, eager, 0, why, sizeof why)) FAILED("batch %lld: %s", (long long)batch, why); /* the same kernels: the same bits */
      om_tensor_release(x);
      om_tensor_release(eager);
      om_tensor_release(got);
    }
  }
  CHECK(om_session_plan_bytes(s) > 0);
  om_session_release(s);
  om_traced_release(m);
  free_mlp();
}

TEST(session_keeps_the_weights_of_the_trace) {
  om_traced_model *m = trace_mlp();
  om_session *s = om_session_create(m, NULL);
  om_traced_release(m); /* the session has its own copy of the graph */
  int64_t sx[2] = {2, 4};
  om_tensor *x = om_randn(sx, 2, 5, true), *before = NULL, *after = NULL;
  CHECK_EQ_INT(om_session_run(s, &x, 1, &before, 1), 1);
  CHECK(om_tensor_fill(mlp_w1, 0.5)); /* training on after the trace changes neither the model nor its session */
  CHECK_EQ_INT(om_session_run(s, &x, 1, &after, 1), 1);
  char why[160];
  CHECK(close_to(after, before, 0, why, sizeof why));
  om_tensor_release(x);
  om_tensor_release(before);
  om_tensor_release(after);
  om_session_release(s);
  free_mlp();
}

TEST(inputs_that_do_not_fit) {
  om_traced_model *m = trace_mlp();
  om_session *s = om_session_create(m, NULL);
  int64_t s35[2] = {3, 5}, s3[1] = {3}, s24[2] = {2, 4};
  om_tensor *bad = om_zeros(s35, 2, OM_FLOAT32), *flat = om_zeros(s3, 1, OM_FLOAT32), *ints = om_zeros(s24, 2, OM_INT64), *out[2];
  CHECK_ERROR(om_session_run(s, &bad, 1, out, 2) >= 0, OM_ERR_SHAPE_MISMATCH, "input 'x' has size 5 at dim 1, the graph takes 4");
  CHECK_ERROR(om_session_run(s, &flat, 1, out, 2) >= 0, OM_ERR_SHAPE_MISMATCH, "input 'x' has shape [3]; the graph takes 2 dims");
  CHECK_ERROR(om_session_run(s, &ints, 1, out, 2) >= 0, OM_ERR_DTYPE_MISMATCH, "input 'x' is int64, the graph takes float32");
  CHECK_ERROR(om_session_run(s, (om_tensor *[]){bad, bad}, 2, out, 2) >= 0, OM_ERR_INVALID_ARGUMENT, "2 inputs given, the graph takes 1");
  CHECK_ERROR(om_session_run(s, &bad, 1, out, 0) >= 0, OM_ERR_INVALID_ARGUMENT, "room for 0 outputs");
  CHECK_ERROR(om_session_run(NULL, &bad, 1, out, 1) >= 0, OM_ERR_INVALID_ARGUMENT, "the session is NULL");
  CHECK_ERROR(om_session_create(m, &(om_session_options){.mode = 7}) != NULL, OM_ERR_INVALID_ARGUMENT, "mode 7");
  CHECK_ERROR(om_session_create(NULL, NULL) != NULL, OM_ERR_INVALID_ARGUMENT, "the model is NULL");
  CHECK_ERROR(om_session_name(s, true, 3) != NULL, OM_ERR_INDEX_OUT_OF_RANGE, "output 3 of 1");
  om_tensor_release(bad);
  om_tensor_release(flat);
  om_tensor_release(ints);
  om_session_release(s);
  om_traced_release(m);
  free_mlp();
}

static int add_two(void *ctx, om_tensor *const *in, int n, om_tensor **out, int max) {
  (void)ctx, (void)n, (void)max;
  return (out[0] = om_add(in[0], in[1])) ? 1 : -1;
}

/* Two inputs sharing a named axis must agree on its size. */
TEST(a_named_axis_binds_once) {
  int64_t sa[2] = {3, 4};
  om_tensor *a = om_randn(sa, 2, 1, true), *b = om_randn(sa, 2, 2, true), *y = NULL;
  om_trace_begin();
  om_tensor *ta = om_trace_input("a", a, (const char *[]){"n", NULL}), *tb = om_trace_input("b", b, (const char *[]){"n", NULL});
  om_traced_model *m = om_trace_run(add_two, NULL, &y, 1) == 1 ? om_trace_finish(&y, (const char *[]){"y"}, 1) : NULL;
  CHECK(m != NULL);
  om_session *s = om_session_create(m, NULL);
  int64_t s54[2] = {5, 4};
  om_tensor *c = om_randn(s54, 2, 3, true), *out = NULL;
  CHECK_ERROR(om_session_run(s, (om_tensor *[]){a, c}, 2, &out, 1) >= 0, OM_ERR_SHAPE_MISMATCH,
              "axis 'n' is 3 at dim 0 of input 'a' but 5 at dim 0 of input 'b'");
  CHECK_EQ_INT(om_session_run(s, (om_tensor *[]){c, c}, 2, &out, 1), 1);
  CHECK_NEAR(at(out, 7), 2 * at(c, 7), 0);
  om_tensor_release(out);
  om_session_release(s);
  om_traced_release(m);
  om__release_all((om_tensor *[]){a, b, c, ta, tb, y}, 6);
}

/* ---- the ONNX reader ---- */

/* A ModelProto written by hand with protobuf-c's wire format: the fields the tests vary. */
typedef struct pb {
  unsigned char b[4096];
  size_t n;
} pb;
static void pb_byte(pb *p, unsigned v) { p->b[p->n++] = (unsigned char)v; }
static void pb_varint(pb *p, uint64_t v) {
  for (; v >= 0x80; v >>= 7) pb_byte(p, (unsigned)(v & 0x7f) | 0x80);
  pb_byte(p, (unsigned)v);
}
static void pb_int(pb *p, int field, int64_t v) { pb_varint(p, (uint64_t)field << 3), pb_varint(p, (uint64_t)v); }
static void pb_bytes(pb *p, int field, const void *data, size_t n) {
  pb_varint(p, (uint64_t)field << 3 | 2), pb_varint(p, n);
  memcpy(p->b + p->n, data, n);
  p->n += n;
}
static void pb_str(pb *p, int field, const char *s) { pb_bytes(p, field, s, strlen(s)); }
static void pb_msg(pb *p, int field, const pb *m) { pb_bytes(p, field, m->b, m->n); }

/* ValueInfo name: a tensor of ONNX element type elem (0: none), [dims] (a negative dim: dim_param "n";
 * dims NULL: no shape, which a declared output may leave out, while an empty one declares a scalar). */
static pb value_info_of(const char *name, int elem, int ndim, const int64_t *dims) {
  pb shape = {0}, tt = {0}, type = {0}, vi = {0};
  for (int d = 0; d < ndim; d++) {
    pb dim = {0};
    if (dims[d] >= 0) pb_int(&dim, 1, dims[d]);
    else pb_str(&dim, 2, "n");
    pb_msg(&shape, 1, &dim);
  }
  if (elem) pb_int(&tt, 1, elem);
  if (dims) pb_msg(&tt, 2, &shape);
  pb_msg(&type, 1, &tt);
  pb_str(&vi, 1, name);
  pb_msg(&vi, 2, &type);
  return vi;
}
/* FLOAT [dims]; dims NULL: an output declared without type or shape (the session gives both). */
static pb value_info(const char *name, int ndim, const int64_t *dims) { return value_info_of(name, dims ? 1 : 0, ndim, dims); }

static pb node(const char *op, const char *in0, const char *in1, const char *out) {
  pb n = {0};
  if (in0) pb_str(&n, 1, in0);
  if (in1) pb_str(&n, 1, in1);
  pb_str(&n, 2, out);
  pb_str(&n, 3, op);
  pb_str(&n, 4, op);
  return n;
}

/* A model: ir version, opset, graph of nodes (in the order given), input x [n, 2], output. */
static pb model(int64_t ir, int64_t opset, const pb *nodes, int n_nodes, const pb *init, const char *output) {
  pb g = {0}, m = {0}, op = {0};
  for (int k = 0; k < n_nodes; k++) pb_msg(&g, 1, &nodes[k]);
  pb_str(&g, 2, "g");
  if (init) pb_msg(&g, 5, init);
  pb x = value_info("x", 2, (const int64_t[]){-1, 2}), y = value_info(output, 0, NULL);
  pb_msg(&g, 11, &x);
  pb_msg(&g, 12, &y);
  pb_int(&m, 1, ir);
  pb_int(&op, 2, opset);
  pb_msg(&m, 8, &op);
  pb_msg(&m, 7, &g);
  return m;
}

static bool opens(const pb *m) {
  om_session *s = om_session_open(m->b, m->n, NULL);
  om_session_release(s);
  return s != NULL;
}

/* Nodes listed out of topological order: ONNX's checker refuses such a file, onnxruntime sorts it
 * and runs it; so does the reader (never refuse what onnxruntime runs). */
TEST(reader_takes_files_out_of_order) {
  pb nodes[2] = {node("Relu", "h", NULL, "y"), node("Neg", "x", NULL, "h")}; /* listed backwards */
  pb m = model(8, 17, nodes, 2, NULL, "y");
  om_session *s = om_session_open(m.b, m.n, NULL);
  CHECK(s != NULL);
  om_tensor *x = TF(SHAPE(3, 2), 1, -2, 3, -4, 5, -6), *y = NULL;
  CHECK_EQ_INT(om_session_run(s, &x, 1, &y, 1), 1);
  CHECK_NEAR(at(y, 0), 0, 0);
  CHECK_NEAR(at(y, 1), 2, 0);
  CHECK_NEAR(at(y, 5), 6, 0);
  om_tensor_release(x);
  om_tensor_release(y);
  om_session_release(s);
}

/* om_session_plan infers every value's shape at the inputs' sizes, for a file that declares none
 * but its input's (what torch.onnx.export writes for intermediates): bound, not kept or run. */
TEST(plan_gives_every_values_shape) {
  pb nodes[3] = {node("Neg", "x", NULL, "h"), node("Concat", "h", "x", "c"), node("Relu", "c", NULL, "y")};
  pb axis = {0};
  pb_str(&axis, 1, "axis");
  pb_int(&axis, 3, 1);
  pb_int(&axis, 20, 2); /* INT */
  pb_msg(&nodes[1], 5, &axis);
  pb m = model(8, 17, nodes, 3, NULL, "y");
  om_session *s = om_session_open(m.b, m.n, NULL);
  CHECK(s != NULL);
  int n = om_session_value_count(s), ndim = 0, type = 0;
  CHECK(n >= 4);
  const char *name = NULL;
  int64_t shape[OM_MAX_DIMS];
  CHECK(om_session_value_info(s, 0, &name, &type, &ndim, shape));
  CHECK_EQ_INT(ndim, -1); /* no plan yet */
  om_tensor *x = om_zeros((int64_t[]){5, 2}, 2, OM_FLOAT32), *bad = om_zeros((int64_t[]){5, 3}, 2, OM_FLOAT32);
  CHECK(om_session_plan(s, &x, NULL, NULL, 1));
  CHECK_EQ_INT((int)om_session_plan_bytes(s), 0); /* no plan kept, no buffer allocated */
  const char *want[] = {"x", "h", "c", "y"};
  int64_t cols[] = {2, 2, 4, 4};
  for (int w = 0; w < 4; w++) {
    int found = 0;
    for (int i = 0; i < n; i++) {
      CHECK(om_session_value_info(s, i, &name, &type, &ndim, shape));
      if (!name || strcmp(name, want[w])) continue;
      found++;
      CHECK_EQ_INT(type, 1);
      CHECK_EQ_INT(ndim, 2);
      CHECK_EQ_INT((int)shape[0], 5);
      CHECK_EQ_INT((int)shape[1], (int)cols[w]);
    }
    CHECK_EQ_INT(found, 1);
  }
  CHECK_ERROR(om_session_plan(s, &bad, NULL, NULL, 1), OM_ERR_SHAPE_MISMATCH, "session_plan: input 'x' has size 3 at dim 1, the graph takes 2");
  CHECK_ERROR(om_session_plan(s, &x, NULL, NULL, 2), OM_ERR_INVALID_ARGUMENT, "session_plan: 2 inputs given, the graph takes 1");
  CHECK_ERROR(om_session_plan(NULL, &x, NULL, NULL, 1), OM_ERR_INVALID_ARGUMENT, "session_plan: the session is NULL");
  CHECK_ERROR(om_session_value_info(s, n, NULL, NULL, NULL, NULL), OM_ERR_INDEX_OUT_OF_RANGE, "session_value_info: value");
  CHECK_ERROR(om_session_value_count(NULL) >= 0, OM_ERR_INVALID_ARGUMENT, "session_value_count: the session is NULL");
  CHECK(om_session_value_info(s, 0, NULL, NULL, &ndim, NULL));
  CHECK_EQ_INT(ndim, -1); /* a failed call leaves no shapes of an earlier one */
  om_tensor *y = NULL; /* a run plans as before */
  CHECK_EQ_INT(om_session_run(s, &x, 1, &y, 1), 1);
  CHECK_EQ_INT((int)y->shape[1], 4);
  om__release_all((om_tensor *[]){x, bad, y}, 3);
  om_session_release(s);
}

/* A graph of no nodes, its output its input (If's branches are often such graphs): read without a
 * copy into the empty node array (a fuzzed file found memcpy to NULL there, which UBSan reports). */
TEST(reader_takes_a_graph_of_no_nodes) {
  pb m = model(8, 17, NULL, 0, NULL, "x");
  om_session *s = om_session_open(m.b, m.n, NULL);
  CHECK(s != NULL);
  om_tensor *x = TF(SHAPE(1, 2), 1, -2), *y = NULL;
  CHECK_EQ_INT(om_session_run(s, &x, 1, &y, 1), 1);
  CHECK_NEAR(at(y, 1), -2, 0);
  om__release_all((om_tensor *[]){x, y}, 2);
  om_session_release(s);
}

/* PyTorch writes some axes as INT32 constants: read as INT64 (here CumSum's axis, raw and typed). */
TEST(reader_widens_int32_constants) {
  for (int typed = 0; typed < 2; typed++) {
    pb axis = {0};
    pb_int(&axis, 2, 6); /* INT32, 0-d */
    pb_str(&axis, 8, "axis");
    if (typed) pb_int(&axis, 5, 1); /* int32_data: [1] */
    else pb_bytes(&axis, 9, "\x01\0\0\0", 4);
    pb nodes[1] = {node("CumSum", "x", "axis", "y")};
    pb m = model(8, 17, nodes, 1, &axis, "y");
    om_session *s = om_session_open(m.b, m.n, NULL);
    CHECK(s != NULL);
    om_tensor *x = TF(SHAPE(2, 2), 1, 2, 3, 4), *y = NULL;
    CHECK_EQ_INT(om_session_run(s, &x, 1, &y, 1), 1);
    CHECK_NEAR(at(y, 1), 3, 0);
    CHECK_NEAR(at(y, 3), 7, 0);
    om__release_all((om_tensor *[]){x, y}, 2);
    om_session_release(s);
  }
}

TEST(reader_refuses_what_it_cannot_read) {
  pb ok1[1] = {node("Relu", "x", NULL, "y")};
  pb good = model(8, 17, ok1, 1, NULL, "y");
  CHECK(opens(&good));
  CHECK_ERROR(om_session_open(good.b, good.n / 2, NULL) != NULL, OM_ERR_FORMAT, "are not a ModelProto");
  CHECK_ERROR(om_session_open("\xff\xff\xff", 3, NULL) != NULL, OM_ERR_FORMAT, "are not a ModelProto");
  CHECK_ERROR(om_session_open(good.b, 0, NULL) != NULL, OM_ERR_FORMAT, "the 0 bytes are not a ModelProto");
  pb m = model(10, 17, ok1, 1, NULL, "y");
  CHECK_ERROR(opens(&m), OM_ERR_UNSUPPORTED, "IR version 10; the reader takes 3 to 9");
  m = model(2, 17, ok1, 1, NULL, "y");
  CHECK_ERROR(opens(&m), OM_ERR_UNSUPPORTED, "IR version 2; the reader takes 3 to 9");
  m = model(8, 21, ok1, 1, NULL, "y");
  CHECK_ERROR(opens(&m), OM_ERR_UNSUPPORTED, "default-domain opset 21; the reader takes 1 to 20");
  for (int own = 0; own < 2; own++) { /* a model that imports another domain's opset only: its nodes are that domain's */
    pb nodes[1] = {node("Adam", "x", NULL, "y")}, other = {0}, imports = model(8, 17, ok1, 1, NULL, "y");
    if (own) pb_str(&nodes[0], 7, "ai.onnx.preview.training");
    pb_str(&other, 1, "ai.onnx.preview.training"), pb_int(&other, 2, 1);
    m = model(8, 17, nodes, 1, NULL, "y");
    size_t opset_at = 2, opset_len = 4; /* model() writes ir_version (2 bytes), then opset_import {version 17} (4 bytes) */
    CHECK(imports.b[opset_at] == (8 << 3 | 2) && imports.b[opset_at + 1] == 2);
    memmove(m.b + opset_at, m.b + opset_at + opset_len, m.n - opset_at - opset_len), m.n -= opset_len;
    pb_msg(&m, 8, &other);
    CHECK_ERROR(opens(&m), own ? OM_ERR_UNSUPPORTED : OM_ERR_FORMAT,
                own ? "node 'Adam' is Adam of domain 'ai.onnx.preview.training'; only the default domain and ai.onnx.ml are supported"
                    : "node 'Adam' is Adam of the default domain, whose opset the model does not import");
  }
  pb dangling[1] = {node("Relu", "nowhere", NULL, "y")};
  m = model(8, 17, dangling, 1, NULL, "y");
  CHECK_ERROR(opens(&m), OM_ERR_FORMAT, "node 'Relu' (Relu) reads 'nowhere', which nothing defines");
  pb cycle[2] = {node("Relu", "b", NULL, "a"), node("Neg", "a", NULL, "b")};
  m = model(8, 17, cycle, 2, NULL, "a");
  CHECK_ERROR(opens(&m), OM_ERR_FORMAT, "the nodes form a cycle (through node 'Relu', Relu)");
  pb self[1] = {node("Add", "x", "a", "a")};
  m = model(8, 17, self, 1, NULL, "a");
  CHECK_ERROR(opens(&m), OM_ERR_FORMAT, "the nodes form a cycle (through node 'Add', Add)");
  pb twice[2] = {node("Relu", "x", NULL, "y"), node("Neg", "x", NULL, "y")};
  m = model(8, 17, twice, 2, NULL, "y");
  CHECK_ERROR(opens(&m), OM_ERR_FORMAT, "value 'y' is defined twice (output 0 of node 'Neg')");
  pb unknown[1] = {node("MaxRoiPool", "x", NULL, "y")};
  m = model(8, 17, unknown, 1, NULL, "y");
  CHECK_ERROR(opens(&m), OM_ERR_UNSUPPORTED, "node 'MaxRoiPool' is MaxRoiPool, which the graph layer has no kernel for");
  m = model(8, 17, ok1, 1, NULL, "z");
  CHECK_ERROR(opens(&m), OM_ERR_FORMAT, "graph output 'z' is not defined");
  pb left_out[1] = {node("Add", "x", "", "y")};
  m = model(8, 17, left_out, 1, NULL, "y");
  CHECK_ERROR(opens(&m), OM_ERR_FORMAT, "node 'Add' (Add): input 1 is required, and the node leaves it out");
  pb too_many[1] = {node("Relu", "x", "x", "y")};
  m = model(8, 17, too_many, 1, NULL, "y");
  CHECK_ERROR(opens(&m), OM_ERR_FORMAT, "node 'Relu' (Relu) has 2 inputs; Relu takes 1 to 1");
  /* initializers: data that does not match the shape, external data, a dtype the layer lacks */
  pb init = {0};
  pb_int(&init, 1, 4); /* dims [4] */
  pb_int(&init, 2, 1); /* FLOAT */
  pb_str(&init, 8, "w");
  pb_bytes(&init, 9, "\0\0\0\0\0\0\0\0", 8); /* 8 bytes for 4 floats */
  pb add[1] = {node("Add", "x", "w", "y")};
  m = model(8, 17, add, 1, &init, "y");
  CHECK_ERROR(opens(&m), OM_ERR_FORMAT, "initializer 'w' holds 8 bytes of raw data for 4 elements of FLOAT (16 bytes)");
  pb ext = {0};
  pb_int(&ext, 1, 2);
  pb_int(&ext, 2, 1);
  pb_str(&ext, 8, "w");
  pb_int(&ext, 14, 1); /* data_location EXTERNAL */
  m = model(8, 17, add, 1, &ext, "y");
  CHECK_ERROR(opens(&m), OM_ERR_FORMAT, "initializer 'w' keeps its data in an external file");
  pb u64 = {0};
  pb_int(&u64, 1, 2);
  pb_int(&u64, 2, 14); /* COMPLEX64 */
  pb_str(&u64, 8, "w");
  m = model(8, 17, add, 1, &u64, "y");
  CHECK_ERROR(opens(&m), OM_ERR_UNSUPPORTED, "initializer 'w' has data type COMPLEX64 (14); the graph layer takes FLOAT, DOUBLE, FLOAT16, BFLOAT16, the float8 types, INT8 to INT64, UINT8 to UINT64, BOOL");
  pb huge = {0};
  pb_int(&huge, 1, (int64_t)1 << 40);
  pb_int(&huge, 1, (int64_t)1 << 40);
  pb_int(&huge, 2, 1);
  pb_str(&huge, 8, "w");
  m = model(8, 17, add, 1, &huge, "y");
  CHECK_ERROR(opens(&m), OM_ERR_FORMAT, "initializer 'w' has more elements than fit in memory");
}

/* Node n with attribute (name, type, value): int, string or ints. */
static void attr_int(pb *n, const char *name, int64_t v) {
  pb a = {0};
  pb_str(&a, 1, name), pb_int(&a, 3, v), pb_int(&a, 20, 2);
  pb_msg(n, 5, &a);
}
static void attr_str(pb *n, const char *name, const char *v) {
  pb a = {0};
  pb_str(&a, 1, name), pb_str(&a, 4, v), pb_int(&a, 20, 3);
  pb_msg(n, 5, &a);
}

/* Model m opens, and its first run on x [2, 2] (when the plan is made) fails with kind and msg. */
static void runs_refused(const pb *m, om_error_kind kind, const char *msg) {
  om_session *s = om_session_open(m->b, m->n, NULL);
  om_tensor *x = TF(SHAPE(2, 2), 1, 2, 3, 4), *y = NULL;
  CHECK(s != NULL);
  CHECK_ERROR(om_session_run(s, &x, 1, &y, 1) >= 0, kind, msg);
  om_tensor_release(x);
  om_session_release(s);
}

/* What the rules refuse, each naming the node and what it does not take (planned at the first run);
 * an attribute of the wrong type, or an axis past the input's rank (x is [n, 2]: its rank is known
 * whatever n is), is refused when the session is made (create). */
TEST(rules_refuse_what_they_do_not_take) {
  struct { const char *op, *attr, *s; int64_t i; om_error_kind kind; bool create; const char *msg; } cases[] = {
      {"Cast", "to", NULL, 14, OM_ERR_UNSUPPORTED, false, "Cast (Cast): to 14 is not a supported type"},
      {"Gelu", "approximate", "erf", 0, OM_ERR_FORMAT, true, "session: node 'Gelu' (Gelu): attribute approximate is 'erf', which ONNX does not define (none|tanh)"},
      {"Gelu", "approximate", NULL, 1, OM_ERR_FORMAT, true, "session: node 'Gelu' (Gelu): attribute approximate must be a string, it is an int"},
      {"Elu", "alpha", "one", 0, OM_ERR_FORMAT, true, "session: node 'Elu' (Elu): attribute alpha must be a float, it is a string"},
      {"Softmax", "axis", NULL, 5, OM_ERR_FORMAT, true, "session: node 'Softmax' (Softmax) fails at every size the graph's inputs declare: axis 5 is outside [-2, 1] for an input of rank 2"},
      {"Flatten", "axis", NULL, -4, OM_ERR_FORMAT, true, "session: node 'Flatten' (Flatten) fails at every size the graph's inputs declare: axis -4 is outside [-2, 2] for an input of rank 2"},
      {"Transpose", "perm", NULL, 0, OM_ERR_FORMAT, true, "session: node 'Transpose' (Transpose): attribute perm must be ints, it is an int"},
      {"MaxPool", "kernel_shape", NULL, 2, OM_ERR_FORMAT, true, "session: node 'MaxPool' (MaxPool): attribute kernel_shape must be ints, it is an int"},
      {"Resize", "antialias", NULL, 2, OM_ERR_FORMAT, false, "Resize (Resize): antialias 2 (0 or 1)"},
  };
  for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
    pb nodes[1] = {node(cases[k].op, "x", NULL, "y")};
    if (cases[k].s) attr_str(&nodes[0], cases[k].attr, cases[k].s);
    else attr_int(&nodes[0], cases[k].attr, cases[k].i);
    pb m = model(8, strcmp(cases[k].op, "Gelu") ? 17 : 20, nodes, 1, NULL, "y"); /* Gelu: from opset 20 */
    if (cases[k].create) CHECK_ERROR(opens(&m), cases[k].kind, cases[k].msg);
    else runs_refused(&m, cases[k].kind, cases[k].msg);
  }
}

/* ScatterND (data x, indices i, updates x) refuses a reduction ONNX does not define (at create,
 * as the op table's list of the values: op_table_attributes_mutated), indices without a last axis
 * to index by, and updates of another shape than the reductions need. */
TEST(scatter_nd_refuses_what_onnx_does_not_define) {
  struct { int64_t dims[2]; const char *reduction; om_error_kind kind; const char *msg; } cases[] = {
      {{2, 0}, "none", OM_ERR_FORMAT, "ScatterND (ScatterND): indices must end in an axis of 1 to data's 2 dims, not 0"},
      {{1, 1}, "max", OM_ERR_SHAPE_MISMATCH, "ScatterND (ScatterND): updates must be indices' shape without its last axis, then data's axes after the 1 indexed"},
  };
  for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
    pb n = node("ScatterND", "x", "i", "y"), i = {0};
    pb_str(&n, 1, "x");
    attr_str(&n, "reduction", cases[k].reduction);
    pb_int(&i, 1, cases[k].dims[0]), pb_int(&i, 1, cases[k].dims[1]), pb_int(&i, 2, 7), pb_str(&i, 8, "i");
    for (int64_t e = 0; e < cases[k].dims[0] * cases[k].dims[1]; e++) pb_int(&i, 7, 0);
    pb m = model(8, 17, &n, 1, &i, "y");
    runs_refused(&m, cases[k].kind, cases[k].msg);
  }
}

/* ONNX's integer Div is the library's div with rounding_mode 'trunc' (attr 1; 2 is 'floor', and
 * both take floats too); a zero divisor is InvalidArgument (no made-up 0), in a session too (below); without
 * rounding_mode div is true division, of integers too. */
TEST(div_truncates_int64) {
  om_tensor *a = om_from_data((int64_t[]){7, -7, 5}, (int64_t[]){3}, 1, OM_INT64), *b = om_from_data((int64_t[]){2, 2, 0}, (int64_t[]){3}, 1, OM_INT64);
  om_tensor *f = TF(SHAPE(1), 1.0f), *q[1] = {NULL}, *r[1] = {NULL};
  CHECK_ERROR(om_apply(OM_OP_div, (om_tensor *[]){a, b}, 2, (int64_t[]){1}, 1, NULL, 0, q, 1) >= 0, OM_ERR_INVALID_ARGUMENT,
              "div: integer division by zero (element 2 of the divisor)");
  om_tensor *b2 = om_from_data((int64_t[]){2, 2, -2}, (int64_t[]){3}, 1, OM_INT64);
  CHECK_EQ_INT(om_apply(OM_OP_div, (om_tensor *[]){a, b2}, 2, (int64_t[]){1}, 1, NULL, 0, q, 1), 1);
  CHECK(q[0] && at(q[0], 0) == 3 && at(q[0], 1) == -3 && at(q[0], 2) == -2); /* toward zero */
  om_tensor_release(b2);
  CHECK_ERROR(om_apply(OM_OP_div, (om_tensor *[]){f, f}, 2, (int64_t[]){3}, 1, NULL, 0, r, 1) >= 0, OM_ERR_INVALID_ARGUMENT,
              "div: the rounding mode is one int attribute, 0 (none), 1 ('trunc') or 2 ('floor'), got 1 attributes, the first 3");
  CHECK_EQ_INT(om_apply(OM_OP_div, (om_tensor *[]){f, f}, 2, (int64_t[]){1}, 1, NULL, 0, r, 1), 1); /* floats round too (PyTorch's) */
  CHECK(r[0] && om_tensor_dtype(r[0]) == OM_FLOAT32 && at(r[0], 0) == 1);
  om_tensor *t = om_div(a, b); /* true division promotes integers to float32, as PyTorch */
  CHECK(t && om_tensor_dtype(t) == OM_FLOAT32 && at(t, 0) == 3.5 && at(t, 1) == -3.5 && at(t, 2) == INFINITY);
  om__release_all((om_tensor *[]){a, b, f, q[0], r[0], t}, 6);
}

static pb model_of(const pb *nodes, int n_nodes, const pb *inits, int n_inits, const int64_t *x_dims, int ndim, const pb *more_in, int n_more);

/* Values that decide shapes: a Reshape's shape computed from x's values (plans then take every
 * input by value), or fed as an int64 input (plans take the int64 inputs by value; x stays a
 * planned buffer). Each new value gets its plan. */
TEST(session_plans_by_value) {
  pb nodes[2] = {node("Cast", "x", NULL, "s"), node("Reshape", "x", "s", "y")};
  pb cast_to = {0};
  pb_str(&cast_to, 1, "to");
  pb_int(&cast_to, 3, 7); /* i = INT64 */
  pb_int(&cast_to, 20, 2); /* type INT */
  pb_msg(&nodes[0], 5, &cast_to);
  pb m = model(8, 17, nodes, 2, NULL, "y");
  om_session *s = om_session_open(m.b, m.n, NULL);
  CHECK(s != NULL);
  for (int k = 0; k < 2; k++) {
    om_tensor *x = k ? TF(SHAPE(1, 2), 2, 1) : TF(SHAPE(1, 2), 1, 2), *y = NULL;
    CHECK_EQ_INT(om_session_run(s, &x, 1, &y, 1), 1);
    CHECK(y && om_tensor_ndim(y) == 2 && om_tensor_shape(y)[0] == (k ? 2 : 1) && om_tensor_shape(y)[1] == (k ? 1 : 2));
    CHECK_NEAR(at(y, 0), k ? 2 : 1, 0);
    om__release_all((om_tensor *[]){x, y}, 2);
  }
  om_session_release(s);

  pb reshape = node("Reshape", "x", "shape", "y"), shape_in = value_info_of("shape", 7, 1, (const int64_t[]){2});
  m = model_of(&reshape, 1, NULL, 0, (const int64_t[]){-1, 2}, 2, &shape_in, 1);
  CHECK((s = om_session_open(m.b, m.n, NULL)) != NULL);
  for (int k = 0; k < 2; k++) {
    om_tensor *in[2] = {TF(SHAPE(3, 2), 1, 2, 3, 4, 5, 6), om_from_data(k ? (int64_t[]){6, 1} : (int64_t[]){2, 3}, (int64_t[]){2}, 1, OM_INT64)}, *y = NULL;
    CHECK_EQ_INT(om_session_run(s, in, 2, &y, 1), 1);
    CHECK(y && om_tensor_shape(y)[0] == (k ? 6 : 2) && om_tensor_shape(y)[1] == (k ? 1 : 3));
    CHECK_NEAR(at(y, 5), 6, 0);
    CHECK(om_session_plan_bytes(s) > 0); /* x and y are planned buffers */
    om__release_all((om_tensor *[]){in[0], in[1], y}, 3);
  }
  om_session_release(s);
}

/* ArgMax and ArgMin with select_last_index pick the last of equal values; Gather and
 * GatherElements count negative indices from the end, fed when the graph runs too. */
TEST(rules_take_last_indices_and_negative_indices) {
  const float want[2][2][2] = {{{0, 1}, {1, 1}}, {{2, 0}, {2, 2}}}; /* [op][last][column] of [[1, 3], [1, 1], [3, 3]] */
  for (int op = 0; op < 2; op++)
    for (int last = 0; last < 2; last++) {
      pb nodes[1] = {node(op ? "ArgMax" : "ArgMin", "x", NULL, "y")};
      attr_int(&nodes[0], "axis", 0), attr_int(&nodes[0], "keepdims", 0), attr_int(&nodes[0], "select_last_index", last);
      pb m = model(8, 17, nodes, 1, NULL, "y");
      om_session *s = om_session_open(m.b, m.n, NULL);
      om_tensor *x = TF(SHAPE(3, 2), 1, 3, 1, 1, 3, 3), *y = NULL;
      CHECK(s != NULL);
      CHECK_EQ_INT(om_session_run(s, &x, 1, &y, 1), 1);
      CHECK(y && om_tensor_ndim(y) == 1 && at(y, 0) == want[op][last][0] && at(y, 1) == want[op][last][1]);
      om__release_all((om_tensor *[]){x, y}, 2);
      om_session_release(s);
    }
  for (int elements = 0; elements < 2; elements++) {
    pb gather = node(elements ? "GatherElements" : "Gather", "x", "i", "y"), i_in = value_info_of("i", 7, 2, (const int64_t[]){1, 2});
    pb m = model_of(&gather, 1, NULL, 0, (const int64_t[]){-1, 2}, 2, &i_in, 1);
    om_session *s = om_session_open(m.b, m.n, NULL);
    CHECK(s != NULL);
    om_tensor *in[2] = {TF(SHAPE(3, 2), 1, 2, 3, 4, 5, 6), om_from_data((int64_t[]){-1, 0}, (int64_t[]){1, 2}, 2, OM_INT64)}, *y = NULL;
    CHECK_EQ_INT(om_session_run(s, in, 2, &y, 1), 1);
    /* Gather: rows 2 and 0 as [1, 2, 2]; GatherElements: x[-1 -> 2][0], x[0][1] */
    CHECK(y && at(y, 0) == 5 && at(y, 1) == (elements ? 2 : 6));
    om__release_all((om_tensor *[]){in[0], in[1], y}, 3);
    om_session_release(s);
  }
}

/* A chain of n Relu nodes from x [n, 2] to y, as ONNX bytes (the caller frees b.p). */
static bytes relu_chain(int n) {
  bytes g = {0}, b = {0};
  char in[24], out[24];
  for (int k = 0; k < n; k++) {
    pb node_k = {0}, msg = {0};
    snprintf(in, sizeof in, k ? "v%d" : "x", k);
    snprintf(out, sizeof out, k + 1 < n ? "v%d" : "y", k + 1);
    pb_str(&node_k, 1, in), pb_str(&node_k, 2, out), pb_str(&node_k, 3, out), pb_str(&node_k, 4, "Relu");
    pb_msg(&msg, 1, &node_k);
    to_bytes(&g, msg.b, msg.n);
  }
  pb tail = {0}, x = value_info("x", 2, (const int64_t[]){-1, 2}), y = value_info("y", 0, NULL), head = {0}, op = {0};
  pb_str(&tail, 2, "g"), pb_msg(&tail, 11, &x), pb_msg(&tail, 12, &y);
  to_bytes(&g, tail.b, tail.n);
  pb_int(&head, 1, 8);
  pb_int(&op, 2, 17);
  pb_msg(&head, 8, &op);
  pb_varint(&head, 7 << 3 | 2), pb_varint(&head, g.n); /* the graph, field 7, of g.n bytes */
  to_bytes(&b, head.b, head.n);
  to_bytes(&b, g.p, g.n);
  free(g.p);
  return b;
}

/* Planning is linear in a chain's length (a buffer meets only the buffers alive with it): a
 * chain of 100,000 Relu nodes plans (in 0.1 s natively; tools/bench_plan.mjs times it in WASM),
 * runs, and its arena holds two buffers, the step's input and output, at every size. */
TEST(a_long_chain_plans_in_linear_time) {
  bytes m = relu_chain(100000);
  om_session *s = om_session_open(m.p, m.n, NULL);
  CHECK(s != NULL);
  for (int64_t rows = 1; rows <= 4; rows *= 4) {
    om_tensor *x = om_randn((int64_t[]){rows, 2}, 2, 7, false), *y = NULL, *want = om_relu(x);
    CHECK_EQ_INT(om_session_run(s, &x, 1, &y, 1), 1);
    char why[160];
    if (!close_to(y, want, 0, why, sizeof why)) FAILED("rows %lld: %s", (long long)rows, why);
    CHECK_EQ_INT(om_session_plan_kernels(s, NULL, 0), 100000);
    CHECK_EQ_INT(om_session_plan_bytes(s), 2 * 64);
    om__release_all((om_tensor *[]){x, y, want}, 3);
  }
  om_session_release(s);
  free(m.p);
}

/* Probes of what a session must not do: run a huge plan into the heap (OutOfMemory, the session
 * still usable), divide integers by zero, run training-mode Dropout as the identity, leak an
 * output the graph lists twice. */
TEST(session_refuses_huge_plans_and_stays_usable) {
  /* y [n, n] = x [n, 1] x^T [1, n]: 2 KB in, n^2 floats out */
  pb t = node("Transpose", "x", NULL, "xt"), nodes[2] = {t, node("MatMul", "x", "xt", "y")};
  pb shape = {0}, dim = {0}, tt = {0}, type = {0}, vi = {0}, g = {0}, m = {0}, op = {0}, y = value_info("y", 0, NULL);
  pb_str(&dim, 2, "n"), pb_msg(&shape, 1, &dim), dim.n = 0, pb_int(&dim, 1, 1), pb_msg(&shape, 1, &dim);
  pb_int(&tt, 1, 1), pb_msg(&tt, 2, &shape), pb_msg(&type, 1, &tt), pb_str(&vi, 1, "x"), pb_msg(&vi, 2, &type);
  for (int k = 0; k < 2; k++) pb_msg(&g, 1, &nodes[k]);
  pb_str(&g, 2, "g"), pb_msg(&g, 11, &vi), pb_msg(&g, 12, &y);
  pb_int(&m, 1, 8), pb_int(&op, 2, 17), pb_msg(&m, 8, &op), pb_msg(&m, 7, &g);
  om_session *s = om_session_open(m.b, m.n, NULL);
  CHECK(s != NULL);
  int64_t huge[2] = {(int64_t)1 << 24, 1}; /* 64 MiB in, 1 PiB out: past any address space, overcommitted or not */
  om_tensor *big = om_full(huge, 2, OM_FLOAT32, 1), *small = TF(SHAPE(2, 1), 1, 2), *out = NULL;
  CHECK(big != NULL);
  for (int round = 0; round < 2; round++) { /* the same session runs a plan that fits, each time */
#ifdef __EMSCRIPTEN__ /* the output alone is past one block's limit */
    const char *why = "MatMul (MatMul): out of memory allocating 1125899906842624 bytes (one block is limited to 2 GiB in WASM)";
#else /* the arena of 2^50 bytes out and 2^26 in is past what malloc gives */
    const char *why = "session: out of memory allocating 1125899973951488 bytes";
#endif
    CHECK_ERROR(om_session_run(s, &big, 1, &out, 1) >= 0, OM_ERR_OUT_OF_MEMORY, why);
    CHECK_EQ_INT(om_session_run(s, &small, 1, &out, 1), 1);
    CHECK(out && out->shape[0] == 2 && at(out, 1) == 2 && at(out, 3) == 4);
    om_tensor_release(out);
    out = NULL;
  }
  om__release_all((om_tensor *[]){big, small}, 2);
  om_session_release(s);
}

TEST(session_refuses_integer_division_by_zero) {
  pb shape_x = node("Shape", "x", NULL, "s"), nodes[2] = {shape_x, node("Div", "s", "z", "y")};
  pb z = {0};
  pb_int(&z, 1, 2), pb_int(&z, 2, 7), pb_str(&z, 8, "z"), pb_int(&z, 7, 1), pb_int(&z, 7, 0); /* int64 [1, 0] */
  pb m = model(8, 17, nodes, 2, &z, "y");
  om_session *s = om_session_open(m.b, m.n, NULL);
  om_tensor *x = TF(SHAPE(3, 2), 1, 2, 3, 4, 5, 6), *y = NULL;
  CHECK(s != NULL);
  CHECK_ERROR(om_session_run(s, &x, 1, &y, 1) >= 0, OM_ERR_INVALID_ARGUMENT, "Div (Div): integer division by zero (element 1 of the divisor)");
  om_tensor_release(x);
  om_session_release(s);
}

TEST(session_refuses_training_mode_dropout) {
  for (int training = 0; training < 2; training++) {
    pb mode = {0};
    pb_int(&mode, 2, 9), pb_str(&mode, 8, "t"), pb_bytes(&mode, 9, training ? "\x01" : "\x00", 1); /* bool, 0-d */
    pb d = {0}, nodes[1];
    pb_str(&d, 1, "x"), pb_str(&d, 1, ""), pb_str(&d, 1, "t"), pb_str(&d, 2, "y"), pb_str(&d, 3, "drop"), pb_str(&d, 4, "Dropout");
    nodes[0] = d;
    pb m = model(8, 17, nodes, 1, &mode, "y");
    om_session *s = om_session_open(m.b, m.n, NULL);
    om_tensor *x = TF(SHAPE(2, 2), 1, 2, 3, 4), *y = NULL;
    CHECK(s != NULL);
    if (training) {
      CHECK_ERROR(om_session_run(s, &x, 1, &y, 1) >= 0, OM_ERR_UNSUPPORTED, "drop (Dropout): training_mode true with a ratio other than 0 (a random mask) is not supported");
    } else {
      CHECK_EQ_INT(om_session_run(s, &x, 1, &y, 1), 1);
      CHECK(y && at(y, 3) == 4);
    }
    om__release_all((om_tensor *[]){x, y}, 2);
    om_session_release(s);
  }
}

/* A graph that lists its output twice has it once (results are named by it; RUN checks for leaks). */
TEST(an_output_listed_twice_is_one_output) {
  pb nodes[1] = {node("Relu", "x", NULL, "y")};
  pb y = value_info("y", 0, NULL), g = {0}, full = {0}, op = {0}, x = value_info("x", 2, (const int64_t[]){-1, 2});
  pb_msg(&g, 1, &nodes[0]), pb_str(&g, 2, "g"), pb_msg(&g, 11, &x), pb_msg(&g, 12, &y), pb_msg(&g, 12, &y);
  pb_int(&full, 1, 8), pb_int(&op, 2, 17), pb_msg(&full, 8, &op), pb_msg(&full, 7, &g);
  om_session *s = om_session_open(full.b, full.n, NULL);
  CHECK(s != NULL);
  CHECK_EQ_INT(om_session_count(s, true), 1);
  om_tensor *in = TF(SHAPE(1, 2), -1, 2), *out[2] = {NULL};
  for (int k = 0; k < 3; k++) {
    CHECK_EQ_INT(om_session_run(s, &in, 1, out, 2), 1);
    CHECK(out[0] && at(out[0], 0) == 0 && at(out[0], 1) == 2 && !out[1]);
    om_tensor_release(out[0]);
  }
  om_tensor_release(in);
  om_session_release(s);
}

/* An int64 initializer name [n] of values. */
static pb ints_init(const char *name, int n, const int64_t *v) {
  pb t = {0};
  pb_int(&t, 1, n), pb_int(&t, 2, 7), pb_str(&t, 8, name);
  for (int k = 0; k < n; k++) pb_int(&t, 7, v[k]);
  return t;
}

/* A model (IR 8, opset 17) of nodes and initializers, input x of dims (negative: named "n") and
 * extra graph inputs, output y. */
static pb model_at(int opset, const pb *nodes, int n_nodes, const pb *inits, int n_inits, const int64_t *x_dims, int ndim, const pb *more_in,
                   int n_more) {
  pb g = {0}, m = {0}, op = {0}, x = value_info("x", ndim, x_dims), y = value_info("y", 0, NULL);
  for (int k = 0; k < n_nodes; k++) pb_msg(&g, 1, &nodes[k]);
  pb_str(&g, 2, "g");
  for (int k = 0; k < n_inits; k++) pb_msg(&g, 5, &inits[k]);
  pb_msg(&g, 11, &x);
  for (int k = 0; k < n_more; k++) pb_msg(&g, 11, &more_in[k]);
  pb_msg(&g, 12, &y);
  pb_int(&m, 1, 8), pb_int(&op, 2, opset), pb_msg(&m, 8, &op), pb_msg(&m, 7, &g);
  return m;
}

/* The model of model_at at opset 17 (as PyTorch exports); ops defined later need their opset. */
static pb model_of(const pb *nodes, int n_nodes, const pb *inits, int n_inits, const int64_t *x_dims, int ndim, const pb *more_in, int n_more) {
  return model_at(17, nodes, n_nodes, inits, n_inits, x_dims, ndim, more_in, n_more);
}

/* Graphs that ONNX's checker or shape inference, and onnxruntime, refuse are Format errors naming
 * the node (at create where the graph alone shows it, else when the plan meets the shapes). */
TEST(invalid_graphs_are_format_errors) {
  pb twice = node("Relu", "x", NULL, "y");
  attr_int(&twice, "alpha", 1), attr_int(&twice, "alpha", 2);
  pb m = model(8, 17, &twice, 1, NULL, "y");
  CHECK_ERROR(opens(&m), OM_ERR_FORMAT, "session: node 'Relu' (Relu) has attribute alpha twice");
  pb w4 = {0}; /* w [4] floats, also declared as a graph input [3] */
  pb_int(&w4, 1, 4), pb_int(&w4, 2, 1), pb_str(&w4, 8, "w"), pb_bytes(&w4, 9, (const char[16]){0}, 16);
  pb add = node("Add", "x", "w", "y"), w3 = value_info("w", 1, (const int64_t[]){3}), w4i = value_info("w", 1, (const int64_t[]){4});
  m = model_of(&add, 1, &w4, 1, (const int64_t[]){-1, 4}, 2, &w3, 1);
  CHECK_ERROR(opens(&m), OM_ERR_FORMAT, "onnx: initializer 'w' is also a graph input, declared with another type or shape");
  m = model_of(&add, 1, &w4, 1, (const int64_t[]){-1, 4}, 2, &w4i, 1);
  /* declared as it is, at IR 8: an input with a default (ONNX IR 4 on), which OM_SESSION_DEFAULT
   * leaves to the initializer (zeros here) and a feed overrides */
  om_session *ws = om_session_open(m.b, m.n, NULL);
  CHECK(ws && om_session_count(ws, false) == 2);
  CHECK_EQ_INT(om_session_input_default(ws, 0), 0);
  CHECK_EQ_INT(om_session_input_default(ws, 1), 1);
  CHECK_ERROR(om_session_input_default(ws, 2) >= 0, OM_ERR_INDEX_OUT_OF_RANGE, "session_input_default: input 2 of 2");
  om_tensor *x14 = TF(SHAPE(1, 4), 1, 2, 3, 4), *w = TF(SHAPE(4), 10, 20, 30, 40), *w_short = om_zeros((const int64_t[]){3}, 1, OM_FLOAT32), *wy = NULL;
  for (int pass = 0; pass < 2; pass++) { /* left to the default, then fed, twice: a plan for each */
    CHECK_EQ_INT(om_session_run_values(ws, &x14, (const int[]){-1, OM_SESSION_DEFAULT}, NULL, 2, &wy, 1, NULL, NULL), 1);
    CHECK_NEAR(at(wy, 0), 1, 0);
    CHECK_NEAR(at(wy, 3), 4, 0);
    om_tensor_release(wy);
    CHECK_EQ_INT(om_session_run(ws, (om_tensor *[]){x14, w}, 2, &wy, 1), 1);
    CHECK_NEAR(at(wy, 0), 11, 0);
    CHECK_NEAR(at(wy, 3), 44, 0);
    om_tensor_release(wy);
  }
  CHECK_ERROR(om_session_run(ws, (om_tensor *[]){x14, w_short}, 2, &wy, 1) >= 0, OM_ERR_SHAPE_MISMATCH,
              "session_run: input 'w' has size 3 at dim 0, the graph takes 4 (shape [3])");
  CHECK_ERROR(om_session_run_values(ws, &w, (const int[]){OM_SESSION_DEFAULT, -1}, NULL, 2, &wy, 1, NULL, NULL) >= 0, OM_ERR_INVALID_ARGUMENT,
              "session_run: input 0 ('x') is left to its default, and it has none");
  om__release_all((om_tensor *[]){x14, w, w_short}, 3);
  om_session_release(ws);
  struct { pb node; pb inits[4]; int n_inits; int64_t x[3]; int ndim; } runs[3];
  memset(runs, 0, sizeof runs);
  runs[0].node = node("Squeeze", "x", "axes", "y"), runs[0].inits[0] = ints_init("axes", 1, (const int64_t[]){1}), runs[0].n_inits = 1;
  runs[0].x[0] = -1, runs[0].x[1] = 2, runs[0].ndim = 2;
  pb slice = {0};
  pb_str(&slice, 1, "x"), pb_str(&slice, 1, "s"), pb_str(&slice, 1, "e"), pb_str(&slice, 1, "a"), pb_str(&slice, 2, "y");
  pb_str(&slice, 3, "Slice"), pb_str(&slice, 4, "Slice");
  runs[1].node = slice, runs[1].n_inits = 3, runs[1].inits[0] = ints_init("s", 2, (const int64_t[]){0, 0});
  runs[1].inits[1] = ints_init("e", 2, (const int64_t[]){1, 1}), runs[1].inits[2] = ints_init("a", 2, (const int64_t[]){1, -1});
  runs[1].x[0] = -1, runs[1].x[1] = 2, runs[1].ndim = 2;
  pb conv = node("Conv", "x", "k", "y"), kernel = {0}; /* a 1-D conv of a [1, 1, 3] weight that says kernel_shape [2] */
  pb ks = {0};
  pb_str(&ks, 1, "kernel_shape"), pb_int(&ks, 8, 2), pb_int(&ks, 20, 7), pb_msg(&conv, 5, &ks);
  pb_int(&kernel, 1, 1), pb_int(&kernel, 1, 1), pb_int(&kernel, 1, 3), pb_int(&kernel, 2, 1), pb_str(&kernel, 8, "k");
  pb_bytes(&kernel, 9, (const char[12]){0}, 12);
  runs[2].node = conv, runs[2].inits[0] = kernel, runs[2].n_inits = 1, runs[2].x[0] = -1, runs[2].x[1] = 1, runs[2].x[2] = 5, runs[2].ndim = 3;
  /* x's first size a symbol: each refused when the session is made, as it contradicts itself at
   * every size (src/runtime/shapes.c) */
  const char *symbolic[3] = {"session: node 'Squeeze' (Squeeze) fails at every size the graph's inputs declare: axis 1 has size 2, not 1",
                             "session: node 'Slice' (Slice) fails at every size the graph's inputs declare: axes name one axis twice",
                             "session: node 'Conv' (Conv) fails at every size the graph's inputs declare: kernel_shape and the weight's spatial size differ: 2 and 3"};
  for (int k = 0; k < 3; k++) {
    m = model_of(&runs[k].node, 1, runs[k].inits, runs[k].n_inits, runs[k].x, runs[k].ndim, NULL, 0);
    CHECK_ERROR(opens(&m), OM_ERR_FORMAT, symbolic[k]);
  }
  /* every size fixed: each refused when the session is made, its plan failing there */
  const char *fixed[3] = {"session_create: the graph is invalid at the input shapes it declares (Format): Squeeze (Squeeze): axis 1 has size 2, not 1",
                          "session_create: the graph is invalid at the input shapes it declares (Format): Slice (Slice): axis 1 is given twice",
                          "session_create: the graph is invalid at the input shapes it declares (Format): Conv (Conv): kernel_shape does not match the weight's shape (dim 0: 2, the weight has 3)"};
  for (int k = 0; k < 3; k++) {
    runs[k].x[0] = 3;
    m = model_of(&runs[k].node, 1, runs[k].inits, runs[k].n_inits, runs[k].x, runs[k].ndim, NULL, 0);
    CHECK_ERROR(opens(&m), OM_ERR_FORMAT, fixed[k]);
  }
}

static void attr_graph(pb *n, const char *name, const pb *g);
static pb subgraph(const pb *nodes, int n_nodes, const char *const *inputs, int n_in, const char *const *outputs, int n_out);

/* An attribute of AttributeProto type `type` (FLOAT 1, INT 2, STRING 3, FLOATS 6, INTS 7, STRINGS 8)
 * holding v (its count for lists: v values of v, or strings "a"). */
static void attr_of_type(pb *n, const char *name, int type, int64_t v) {
  pb a = {0};
  pb_str(&a, 1, name);
  float f = (float)v;
  for (int k = 0; k < (type > 3 ? (int)(v > 0 ? v : 0) : 1); k++) switch (type) {
      case 1: case 6: pb_varint(&a, (uint64_t)(type == 1 ? 2 : 7) << 3 | 5), memcpy(a.b + a.n, &f, 4), a.n += 4; break;
      case 2: case 7: pb_int(&a, type == 2 ? 3 : 8, v); break;
      default: pb_str(&a, type == 3 ? 4 : 9, "a");
    }
  pb_int(&a, 20, type);
  pb_msg(n, 5, &a);
}

/* A model of IR 9 importing opset 20 and ai.onnx.ml 3: node n (domain ai.onnx.ml when ml) reading
 * x [2, 3], writing y. */
static pb model20(const pb *n, bool ml) {
  pb g = {0}, m = {0}, op = {0}, mlop = {0}, x = value_info("x", 2, (const int64_t[]){2, 3}), y = value_info("y", 0, NULL), nd = *n;
  if (ml) pb_str(&nd, 7, "ai.onnx.ml");
  pb_msg(&g, 1, &nd), pb_str(&g, 2, "g"), pb_msg(&g, 11, &x), pb_msg(&g, 12, &y);
  pb_int(&op, 2, 20), pb_str(&mlop, 1, "ai.onnx.ml"), pb_int(&mlop, 2, 3);
  pb_int(&m, 1, 9), pb_msg(&m, 8, &op), pb_msg(&m, 8, &mlop), pb_msg(&m, 7, &g);
  return m;
}

/* Attributes ONNX's checker and onnxruntime refuse when a model is loaded (onnxruntime-web 1.30:
 * "Unrecognized attribute", "Mismatched attribute type", "Required attribute ... is missing") are
 * Format errors naming the node when the session is made, in subgraphs too. */
TEST(invalid_attributes_are_refused_at_create) {
  struct { const char *op, *in1, *attr; int type; int64_t v; const char *msg; } cases[] = {
      {"Relu", NULL, "alpha", 1, 1, "session: node 'Relu' (Relu) has attribute alpha, which Relu does not take (it takes none)"},
      {"Conv", "x", "kernel_shpe", 7, 2, "session: node 'Conv' (Conv) has attribute kernel_shpe, which Conv does not take (it takes auto_pad, "
                                         "dilations, group, kernel_shape, pads, strides)"},
      {"Flatten", NULL, "axis", 7, 1, "session: node 'Flatten' (Flatten): attribute axis must be an int, it is ints"},
      {"Gemm", "x", "alpha", 2, 2, "session: node 'Gemm' (Gemm): attribute alpha must be a float, it is an int"},
      {"Einsum", "x", "equation", 8, 1, "session: node 'Einsum' (Einsum): attribute equation must be a string, it is strings"},
      {"Cast", NULL, NULL, 0, 0, "session: node 'Cast' (Cast) has no attribute to, which Cast requires"},
      {"LRN", NULL, "alpha", 1, 1, "session: node 'LRN' (LRN) has no attribute size, which LRN requires"},
  };
  for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
    pb n = node(cases[k].op, "x", cases[k].in1, "y");
    if (cases[k].attr) attr_of_type(&n, cases[k].attr, cases[k].type, cases[k].v);
    pb m = model(8, 17, &n, 1, NULL, "y");
    CHECK_ERROR(opens(&m), OM_ERR_FORMAT, cases[k].msg);
  }
  pb relu = node("Relu", "x", NULL, "r"), neg = node("Neg", "x", NULL, "m"), cond = {0}, n = node("If", "c", NULL, "y");
  attr_of_type(&relu, "alpha", 1, 1);
  pb then_g = subgraph(&relu, 1, NULL, 0, (const char *[]){"r"}, 1), else_g = subgraph(&neg, 1, NULL, 0, (const char *[]){"m"}, 1);
  pb_int(&cond, 2, 9), pb_str(&cond, 8, "c"), pb_bytes(&cond, 9, "\x01", 1);
  attr_graph(&n, "then_branch", &then_g), attr_graph(&n, "else_branch", &else_g);
  pb m = model(8, 17, &n, 1, &cond, "y");
  CHECK_ERROR(opens(&m), OM_ERR_FORMAT, "session: node 'Relu' (Relu) has attribute alpha, which Relu does not take");
  pb good = node("Relu", "x", NULL, "y");
  m = model(8, 17, &good, 1, NULL, "y");
  CHECK(opens(&m));
}

/* A graph output declared with an element type or fixed sizes that contradict what its node computes
 * is a Format error naming the node (onnxruntime refuses it at load, from its shape inference): at
 * create where it holds at every size of the symbolic input [n, 2] (shapes inferred with symbolic
 * dims, src/runtime/shapes.c), else when a plan meets it (a fixed size where the node gives n);
 * symbolic sizes take any. */
TEST(declared_outputs_must_agree) {
  struct { int elem, ndim; int64_t dims[3]; bool at_create; const char *msg; } cases[] = {
      {7, 2, {-1, 2}, true, "session: node 'Relu' (Relu): output 0 ('y') is FLOAT at every size, and the graph declares it INT64"},
      {1, 2, {2, 3}, true, "session: node 'Relu' (Relu): output 0 ('y') has shape [n,2] at every size, and the graph declares [2,3]"},
      {1, 3, {3, 2, 1}, true, "session: node 'Relu' (Relu): output 0 ('y') has shape [n,2] at every size, and the graph declares [3,2,1]"},
      {1, 0, {0}, true, "session: node 'Relu' (Relu): output 0 ('y') has shape [n,2] at every size, and the graph declares []"},
      {1, 2, {2, 2}, false, "session: node 'Relu' (Relu): output 0 ('y') has shape [3,2], and the graph declares [2,2]"},
      {1, 2, {-1, 2}, false, NULL},
      {1, 2, {3, -1}, false, NULL},
  };
  for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
    pb g = {0}, m = {0}, op = {0}, n = node("Relu", "x", NULL, "y"), x = value_info("x", 2, (const int64_t[]){-1, 2});
    pb y = value_info_of("y", cases[k].elem, cases[k].ndim, cases[k].dims);
    pb_msg(&g, 1, &n), pb_str(&g, 2, "g"), pb_msg(&g, 11, &x), pb_msg(&g, 12, &y);
    pb_int(&m, 1, 8), pb_int(&op, 2, 17), pb_msg(&m, 8, &op), pb_msg(&m, 7, &g);
    if (cases[k].at_create) {
      CHECK_ERROR(om_session_open(m.b, m.n, NULL) != NULL, OM_ERR_FORMAT, cases[k].msg);
      continue;
    }
    om_session *s = om_session_open(m.b, m.n, NULL);
    CHECK(s != NULL);
    om_tensor *x3 = TF(SHAPE(3, 2), 1, -2, 3, -4, 5, -6), *out = NULL;
    if (cases[k].msg) {
      CHECK_ERROR(om_session_run(s, &x3, 1, &out, 1) >= 0, OM_ERR_FORMAT, cases[k].msg);
      CHECK(om_session_run(s, &x3, 1, &out, 1) < 0); /* still refused, and the session still answers */
    } else {
      CHECK_EQ_INT(om_session_run(s, &x3, 1, &out, 1), 1);
      CHECK_NEAR(at(out, 1), 0, 0);
      CHECK_NEAR(at(out, 4), 5, 0);
      om_tensor_release(out);
    }
    om_tensor_release(x3);
    om_session_release(s);
  }
}

/* The attribute lists of the whole op table, mutated: for every row, each attribute it lists given
 * in another type, a name it does not list, each required one left out (each a Format error naming
 * the node, at create), and seeded well-typed values, whose session opens and runs on x [2, 3] or
 * fails with an error, never a crash, a leak or (under ASan and UBSan) a bad read. */
TEST(op_table_attributes_mutated) {
  static const int wrong[] = {1, 2, 2, 2, 2, 2, 7, 3}; /* another type per letter i f s t g I F S (o u: an int) */
  static const char letters[] = "ifstgIFS";
  uint64_t state = 20261206;
  int64_t live = om_live_tensors();
  for (int r = 0; r < om__onnx_rule_count(); r++) {
    const om_onnx_rule *row = om__onnx_rule_at(r);
    bool ml = !strncmp(row->op_type, "ai.onnx.ml.", 11);
    const char *op = ml ? row->op_type + 11 : row->op_type;
    const char *ins[8] = {0};
    for (int i = 0; i < row->min_in && i < 8; i++) ins[i] = "x";
    char names[32][48], types[32], values[32][160];
    bool required[32];
    int n_attrs = 0;
    for (const char *p = row->attrs; *p && n_attrs < 32; n_attrs++) { /* the row's list, as tests read it */
      size_t len = strcspn(p, ":!"), vlen = p[len + 2] == '=' ? strcspn(p + len + 3, " ") : 0;
      snprintf(names[n_attrs], sizeof names[n_attrs], "%.*s", (int)len, p);
      snprintf(values[n_attrs], sizeof values[n_attrs], "%.*s", (int)vlen, p + len + 3); /* a string's values ONNX defines, '|' between */
      required[n_attrs] = p[len] == '!', types[n_attrs] = p[len + 1];
      p += len + 2 + (vlen ? vlen + 1 : 0);
      while (*p == ' ') p++;
    }
    char msg[512];
    for (int a = 0; a <= n_attrs; a++) { /* a listed attribute of another type; a == n_attrs: a name not listed */
      pb n = {0};
      for (int i = 0; i < row->min_in && i < 8; i++) pb_str(&n, 1, ins[i]);
      pb_str(&n, 2, "y"), pb_str(&n, 3, "node"), pb_str(&n, 4, op);
      const char *where = a < n_attrs ? strchr(letters, types[a]) : NULL;
      attr_of_type(&n, a < n_attrs ? names[a] : "kernel_shpe", where ? wrong[where - letters] : 2, 1);
      if (a < n_attrs) snprintf(msg, sizeof msg, "session: node 'node' (%s): attribute %s must be", row->op_type, names[a]);
      else snprintf(msg, sizeof msg, "session: node 'node' (%s) has attribute kernel_shpe, which %s does not take", row->op_type, row->op_type);
      pb m = model20(&n, ml);
      if (row->min_in > 8) continue;
      CHECK_ERROR(opens(&m), OM_ERR_FORMAT, msg);
    }
    for (int a = 0; a < n_attrs && row->min_in <= 8; a++) { /* a string outside the values ONNX defines; each of them taken at create */
      if (!values[a][0]) continue;
      pb n = {0};
      for (int i = 0; i < row->min_in; i++) pb_str(&n, 1, ins[i]);
      pb_str(&n, 2, "y"), pb_str(&n, 3, "node"), pb_str(&n, 4, op);
      attr_str(&n, names[a], "Nearest");
      snprintf(msg, sizeof msg, "session: node 'node' (%s): attribute %.47s is 'Nearest', which ONNX does not define (%.159s)", row->op_type, names[a], values[a]);
      pb m = model20(&n, ml);
      CHECK_ERROR(opens(&m), OM_ERR_FORMAT, msg);
      for (const char *v = values[a]; *v; v += strcspn(v, "|"), v += *v == '|') {
        char one[48];
        snprintf(one, sizeof one, "%.*s", (int)strcspn(v, "|"), v);
        pb ok = {0};
        for (int i = 0; i < row->min_in; i++) pb_str(&ok, 1, ins[i]);
        pb_str(&ok, 2, "y"), pb_str(&ok, 3, "node"), pb_str(&ok, 4, op);
        attr_str(&ok, names[a], one);
        pb mo = model20(&ok, ml);
        om_clear_error();
        om_session *s = om_session_open(mo.b, mo.n, NULL); /* a required attribute left out may refuse it, never the value */
        if (!s && strstr(om_last_error_message(), "which ONNX does not define")) FAILED("%s: %s '%s' refused: %s", row->op_type, names[a], one, om_last_error_message());
        om_session_release(s);
      }
    }
    for (int a = 0; a < n_attrs && row->min_in <= 8; a++) { /* a required one left out (the others given) */
      if (!required[a]) continue;
      pb n = {0};
      for (int i = 0; i < row->min_in; i++) pb_str(&n, 1, ins[i]);
      pb_str(&n, 2, "y"), pb_str(&n, 3, "node"), pb_str(&n, 4, op);
      snprintf(msg, sizeof msg, "session: node 'node' (%s) has no attribute %s, which %s requires", row->op_type, names[a], row->op_type);
      pb m = model20(&n, ml);
      CHECK_ERROR(opens(&m), OM_ERR_FORMAT, msg);
      break; /* the first listed is named */
    }
    for (int round = 0; round < 4 && row->min_in <= 8; round++) { /* well-typed values, seeded */
      pb n = {0};
      for (int i = 0; i < row->min_in; i++) pb_str(&n, 1, ins[i]);
      pb_str(&n, 2, "y"), pb_str(&n, 3, "node"), pb_str(&n, 4, op);
      bool skip = false;
      for (int a = 0; a < n_attrs; a++) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        uint64_t bits = state >> 20;
        const char *t = strchr("ifsIFS", types[a]);
        if (!t) { skip |= required[a]; continue; } /* tensors, graphs and types: left out */
        if (!required[a] && bits % 3 == 0) continue;
        static const int codes[] = {2, 1, 3, 7, 6, 8};
        attr_of_type(&n, names[a], codes[t - "ifsIFS"], (int64_t)(bits >> 4 & 7) - 2);
      }
      if (skip) continue;
      pb m = model20(&n, ml);
      om_clear_error();
      om_session *s = om_session_open(m.b, m.n, NULL);
      if (!s) {
        om_error_kind kind = om_last_error();
        if (kind != OM_ERR_FORMAT && kind != OM_ERR_UNSUPPORTED) FAILED("%s: create failed with %s: %s", row->op_type, om_error_kind_name(kind), om_last_error_message());
        continue;
      }
      om_tensor *x = TF(SHAPE(2, 3), 1, -2, 3, -4, 5, -6), *out[8] = {0};
      int got = om_session_run(s, &x, 1, out, 8);
      if (got < 0 && om_last_error() == OM_ERR_OK) FAILED("%s: a run failed without an error", row->op_type);
      for (int j = 0; j < got; j++) om_tensor_release(out[j]);
      om_tensor_release(x);
      om_session_release(s);
    }
  }
  om_clear_error();
  CHECK_EQ_INT(om_live_tensors(), live);
}

/* Seeded mutations of a traced model's bytes (flipped, cut, spliced, overwritten with varints):
 * every result is a session or a Format / Unsupported error, and each session runs or fails
 * cleanly; under ASan nothing reads or writes out of bounds (the libFuzzer harness, tools/fuzz_onnx.c,
 * goes further). */
static void mutate_and_open(const bytes *orig, uint64_t seed, int rounds, const char *what);

/* A graph attribute: name holding graph g (AttributeProto type GRAPH). */
static void attr_graph(pb *n, const char *name, const pb *g) {
  pb a = {0};
  pb_str(&a, 1, name), pb_msg(&a, 6, g), pb_int(&a, 20, 5);
  pb_msg(n, 5, &a);
}

/* A subgraph: its nodes, inputs (names with no type: the node gives them) and outputs. */
static pb subgraph(const pb *nodes, int n_nodes, const char *const *inputs, int n_in, const char *const *outputs, int n_out) {
  pb g = {0};
  for (int k = 0; k < n_nodes; k++) pb_msg(&g, 1, &nodes[k]);
  pb_str(&g, 2, "body");
  for (int k = 0; k < n_in; k++) {
    pb vi = {0};
    pb_str(&vi, 1, inputs[k]);
    pb_msg(&g, 11, &vi);
  }
  for (int k = 0; k < n_out; k++) {
    pb vi = {0};
    pb_str(&vi, 1, outputs[k]);
    pb_msg(&g, 12, &vi);
  }
  return g;
}

/* If with a constant condition binds the branch it picks; a Loop of M = 3 threads s through its
 * body, which reads the outer x; both read, run and free their subgraphs (ASan and UBSan here). */
/* A graph value of ONNX type elem wrapped as a sequence: ValueInfo name. */
static pb sequence_info(const char *name, int elem) {
  pb tt = {0}, tensor = {0}, seq = {0}, type = {0}, vi = {0};
  pb_int(&tt, 1, elem);
  pb_msg(&tensor, 1, &tt);
  pb_msg(&seq, 1, &tensor);
  pb_msg(&type, 4, &seq);
  pb_str(&vi, 1, name);
  pb_msg(&vi, 2, &type);
  return vi;
}

/* A sequence input and output (SequenceInsert, SequenceLength): om_session_run_values takes and
 * gives each one's tensors with their counts, and runs nothing until it has room for them all. */
TEST(sequences_in_and_out) {
  pb g = {0}, m = {0}, op = {0}, nodes[2] = {node("SequenceInsert", "xs", "t", "ys"), node("SequenceLength", "ys", NULL, "len")};
  pb xs = sequence_info("xs", 1), ys = sequence_info("ys", 1), t = value_info("t", 1, (const int64_t[]){-1}), len = value_info_of("len", 7, 0, NULL);
  for (int k = 0; k < 2; k++) pb_msg(&g, 1, &nodes[k]);
  pb_str(&g, 2, "g"), pb_msg(&g, 11, &xs), pb_msg(&g, 11, &t), pb_msg(&g, 12, &ys), pb_msg(&g, 12, &len);
  pb_int(&m, 1, 8), pb_int(&op, 2, 17), pb_msg(&m, 8, &op), pb_msg(&m, 7, &g);
  om_session *s = om_session_open(m.b, m.n, NULL);
  CHECK(s != NULL);
  om_tensor *a = TF(SHAPE(2), 1, 2), *b = TF(SHAPE(3), 3, 4, 5), *x = TF(SHAPE(1), 6), *in[3] = {a, b, x}, *out[8] = {0};
  int counts[2] = {2, -1}, out_counts[2] = {0, 0};
  CHECK_EQ_INT(om_session_run_values(s, in, counts, NULL, 2, out, 1, out_counts, NULL), 4); /* no room: nothing ran */
  CHECK(out[0] == NULL && out_counts[0] == 0);
  CHECK_EQ_INT(om_session_run_values(s, in, counts, NULL, 2, out, 8, out_counts, NULL), 4);
  CHECK_EQ_INT(out_counts[0], 3);
  CHECK_EQ_INT(out_counts[1], -1);
  CHECK_VALUES(out[0], SHAPE(2), 0, 1, 2);
  CHECK_VALUES(out[1], SHAPE(3), 0, 3, 4, 5);
  CHECK_VALUES(out[2], SHAPE(1), 0, 6);
  CHECK_EQ_INT((int)om__get_flat(out[3], 0), 3);
  om__release_all(out, 4);
  counts[0] = 0; /* an empty sequence: another signature */
  CHECK_EQ_INT(om_session_run_values(s, &x, counts, NULL, 2, out, 8, out_counts, NULL), 2);
  CHECK_EQ_INT(out_counts[0], 1);
  CHECK_EQ_INT((int)om__get_flat(out[1], 0), 1);
  om__release_all(out, 2);
  CHECK_ERROR(om_session_run(s, in, 2, out, 2) >= 0, OM_ERR_INVALID_ARGUMENT, "session_run: input 'xs' is a sequence, given a tensor");
  counts[0] = 2, counts[1] = OM_SESSION_NONE;
  CHECK_ERROR(om_session_run_values(s, in, counts, NULL, 2, out, 8, out_counts, NULL) >= 0, OM_ERR_INVALID_ARGUMENT,
              "session_run: input 't' is a tensor, given nothing");
  counts[1] = -1;
  om_tensor *i64 = om_scalar(1, OM_INT64), *mixed[3] = {a, i64, x};
  CHECK_ERROR(om_session_run_values(s, mixed, counts, NULL, 2, out, 8, out_counts, NULL) >= 0, OM_ERR_DTYPE_MISMATCH,
              "session_run: input 'xs' is int64, the graph takes float32");
  om__release_all((om_tensor *[]){a, b, x, i64}, 4);
  om_session_release(s);
}

/* Sequences inside a graph: SplitToSequence, SequenceErase, SequenceInsert, ConcatFromSequence on x
 * [3, 2]; and what the sequence rows refuse, each failing plan freeing what it held (ASan's leak
 * check). */
TEST(sequence_rows_run_and_refuse) {
  pb nodes[4] = {node("SplitToSequence", "x", NULL, "s"), node("SequenceErase", "s", NULL, "s2"), node("SequenceInsert", "s2", "x", "s3"),
                 node("ConcatFromSequence", "s3", NULL, "y")};
  attr_int(&nodes[3], "axis", 0);
  pb m = model_of(nodes, 4, NULL, 0, (const int64_t[]){-1, 2}, 2, NULL, 0);
  om_session *s = om_session_open(m.b, m.n, NULL);
  CHECK(s != NULL);
  om_tensor *x = TF(SHAPE(3, 2), 1, 2, 3, 4, 5, 6), *y = NULL;
  CHECK_EQ_INT(om_session_run(s, &x, 1, &y, 1), 1);
  CHECK_VALUES(y, SHAPE(5, 2), 0, 1, 2, 3, 4, 1, 2, 3, 4, 5, 6);
  om__release_all((om_tensor *[]){x, y}, 2);
  om_session_release(s);
  pb pos = ints_init("p", 1, (const int64_t[]){5});
  pb at[2] = {node("SequenceConstruct", "x", "x", "s"), node("SequenceAt", "s", "p", "y")};
  m = model_of(at, 2, &pos, 1, (const int64_t[]){-1, 2}, 2, NULL, 0);
  runs_refused(&m, OM_ERR_INDEX_OUT_OF_RANGE, "SequenceAt (SequenceAt): position 5 is out of range for a sequence of 2");
  pb relu[2] = {node("SequenceConstruct", "x", "x", "s"), node("Relu", "s", NULL, "y")};
  m = model_of(relu, 2, NULL, 0, (const int64_t[]){-1, 2}, 2, NULL, 0);
  runs_refused(&m, OM_ERR_FORMAT, "node 'Relu' (Relu): input 0 ('s') is a sequence; Relu takes a tensor there");
  pb none[3] = {node("Optional", NULL, NULL, "o"), node("OptionalGetElement", "o", NULL, "e"), node("Add", "e", "x", "y")};
  m = model_of(none, 3, NULL, 0, (const int64_t[]){-1, 2}, 2, NULL, 0);
  runs_refused(&m, OM_ERR_INVALID_ARGUMENT, "OptionalGetElement (OptionalGetElement): the optional holds nothing");
  pb empty[3] = {node("SequenceEmpty", NULL, NULL, "s"), node("ConcatFromSequence", "s", NULL, "c"), node("Add", "c", "x", "y")};
  attr_int(&empty[1], "axis", 0);
  m = model_of(empty, 3, NULL, 0, (const int64_t[]){-1, 2}, 2, NULL, 0);
  runs_refused(&m, OM_ERR_INVALID_ARGUMENT, "ConcatFromSequence (ConcatFromSequence): the sequence is empty");
}

TEST(subgraphs_run_in_a_session) {
  pb relu = node("Relu", "x", NULL, "r"), neg = node("Neg", "x", NULL, "m");
  pb then_g = subgraph(&relu, 1, NULL, 0, (const char *[]){"r"}, 1), else_g = subgraph(&neg, 1, NULL, 0, (const char *[]){"m"}, 1);
  for (int cond = 0; cond < 2; cond++) {
    pb c = {0}, n = node("If", "c", NULL, "y");
    pb_int(&c, 2, 9), pb_str(&c, 8, "c"), pb_bytes(&c, 9, cond ? "\x01" : "\x00", 1); /* bool, 0-d */
    attr_graph(&n, "then_branch", &then_g), attr_graph(&n, "else_branch", &else_g);
    pb m = model(8, 17, &n, 1, &c, "y");
    om_session *s = om_session_open(m.b, m.n, NULL);
    CHECK(s != NULL);
    om_tensor *x = TF(SHAPE(3, 2), 1, -2, 3, -4, 5, -6), *y = NULL;
    CHECK_EQ_INT(om_session_run(s, &x, 1, &y, 1), 1);
    CHECK_NEAR(at(y, 1), cond ? 0 : 2, 0);
    CHECK_NEAR(at(y, 4), cond ? 5 : -5, 0);
    om__release_all((om_tensor *[]){x, y}, 2);
    om_session_release(s);
    pb missing = node("If", "c", NULL, "y");
    attr_graph(&missing, "then_branch", &then_g);
    m = model(8, 17, &missing, 1, &c, "y");
    CHECK_ERROR(opens(&m), OM_ERR_FORMAT, "session: node 'If' (If) has no attribute else_branch, which If requires");
  }
  pb body_nodes[3] = {node("Add", "s", "x", "s2"), node("Identity", "c", NULL, "c2"), node("Relu", "s2", NULL, "o")};
  pb body = subgraph(body_nodes, 3, (const char *[]){"i", "c", "s"}, 3, (const char *[]){"c2", "s2", "o"}, 3);
  pb loop = {0}, trips = ints_init("M", 1, (const int64_t[]){3});
  pb_str(&loop, 1, "M"), pb_str(&loop, 1, ""), pb_str(&loop, 1, "x"), pb_str(&loop, 2, "y"), pb_str(&loop, 2, "scan");
  pb_str(&loop, 3, "loop"), pb_str(&loop, 4, "Loop");
  attr_graph(&loop, "body", &body);
  pb m = model(8, 17, &loop, 1, &trips, "y");
  om_session *s = om_session_open(m.b, m.n, NULL);
  CHECK(s != NULL);
  om_tensor *x = TF(SHAPE(2, 2), 1, -2, 3, 0.5f), *y = NULL;
  for (int run = 0; run < 2; run++) { /* the second run reuses the plan */
    CHECK_EQ_INT(om_session_run(s, &x, 1, &y, 1), 1);
    CHECK_NEAR(at(y, 1), -8, 0); /* x + 3 x */
    CHECK_NEAR(at(y, 3), 2, 0);
    om_tensor_release(y);
  }
  om_tensor_release(x);
  om_session_release(s);
  pb unread = node("Relu", "nowhere", NULL, "o"); /* a body reading a name no graph defines */
  body = subgraph(&unread, 1, (const char *[]){"i", "c", "s"}, 3, (const char *[]){"c", "s", "o"}, 3);
  loop = (pb){0};
  pb_str(&loop, 1, "M"), pb_str(&loop, 1, ""), pb_str(&loop, 1, "x"), pb_str(&loop, 2, "y"), pb_str(&loop, 2, "scan");
  pb_str(&loop, 3, "loop"), pb_str(&loop, 4, "Loop");
  attr_graph(&loop, "body", &body);
  m = model(8, 17, &loop, 1, &trips, "y");
  CHECK_ERROR(opens(&m), OM_ERR_FORMAT, "reads 'nowhere', which nothing defines (in attribute body of node 'loop', Loop)");
  /* a body declaring its loop-carried input of another type than the node gives: ONNX's checker's
   * type inference refuses it, and so does the session, naming the node and the body */
  static const int types[][3] = {{7, 9, 7}, {1, 9, 1}, {7, 9, 0}};
  static const char *const why[] = {"session: node 'loop' (Loop): its body's input 2 ('s') is INT64, and the node's input 2 ('x') is FLOAT",
                                    "session: node 'loop' (Loop): its body's input 0 ('i') is FLOAT, and the iteration number is INT64", NULL};
  for (int k = 0; k < 3; k++) {
    pb typed = {0};
    for (int j = 0; j < 3; j++) pb_msg(&typed, 1, &body_nodes[j]);
    pb_str(&typed, 2, "body");
    for (int j = 0; j < 3; j++) {
      pb vi = value_info_of((const char *[]){"i", "c", "s"}[j], types[k][j], 0, NULL);
      pb_msg(&typed, 11, &vi);
    }
    for (int j = 0; j < 3; j++) {
      pb vi = {0};
      pb_str(&vi, 1, (const char *[]){"c2", "s2", "o"}[j]);
      pb_msg(&typed, 12, &vi);
    }
    loop = (pb){0};
    pb_str(&loop, 1, "M"), pb_str(&loop, 1, ""), pb_str(&loop, 1, "x"), pb_str(&loop, 2, "y"), pb_str(&loop, 2, "scan");
    pb_str(&loop, 3, "loop"), pb_str(&loop, 4, "Loop");
    attr_graph(&loop, "body", &typed);
    m = model(8, 17, &loop, 1, &trips, "y");
    if (why[k]) {
      CHECK_ERROR(opens(&m), OM_ERR_FORMAT, why[k]);
      continue;
    }
    CHECK(opens(&m)); /* declared as the node gives them (the loop-carried value's left out) */
  }
}

TEST(reader_survives_mutated_files) {
  om_traced_model *m = trace_mlp();
  bytes onnx = onnx_of(m), lib = saved(m);
  mutate_and_open(&onnx, 20261201, 600, "onnx");
  mutate_and_open(&lib, 20261202, 600, "format v2");
  free(onnx.p);
  free(lib.p);
  om_traced_release(m);
  free_mlp();
}

/* Graph-section edits of a v1 file get a fresh checksum, so its reader sees them, not the checksum. */
static void fix_checksum(unsigned char *p, size_t n) {
  uint64_t graph_bytes;
  if (n < 64 || memcmp(p, "ONEMODEL", 8)) return;
  memcpy(&graph_bytes, p + 16, 8);
  if (graph_bytes > n - 64) return;
  uint64_t h = 14695981039346656037ull;
  for (size_t i = 0; i < graph_bytes; i++) h = (h ^ p[64 + i]) * 1099511628211ull;
  memcpy(p + 40, &h, 8);
}

static void mutate_and_open(const bytes *orig_b, uint64_t seed, int rounds, const char *what) {
  const bytes *orig = orig_b;
  uint64_t state = seed;
  int opened = 0, refused = 0;
  unsigned char *buf = malloc(orig->n + 64);
  for (int round = 0; round < rounds; round++) {
    size_t n = orig->n;
    memcpy(buf, orig->p, n);
    int edits = 1 + round % 4;
    for (int e = 0; e < edits; e++) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      uint64_t r = state >> 17;
      size_t at = (size_t)(r % n);
      switch (r >> 40 & 3) {
        case 0: buf[at] ^= (unsigned char)(1u << (r >> 50 & 7)); break; /* a flipped bit */
        case 1: n = at + 1; break;                                       /* cut short */
        case 2: buf[at] = (unsigned char)(r >> 44); break;               /* a byte overwritten */
        default: /* a varint of extremes: huge lengths, negative sizes */
          for (int k = 0; k < 9 && at + k < n; k++) buf[at + k] = k < 8 ? 0xff : 0x01;
      }
    }
    if (round % 2) fix_checksum(buf, n);
    om_session *s = om_session_open(buf, n, NULL);
    if (!s) {
      refused++;
      if (om_last_error() != OM_ERR_FORMAT && om_last_error() != OM_ERR_UNSUPPORTED && om_last_error() != OM_ERR_OUT_OF_MEMORY)
        FAILED("%s round %d: kind %s: %s", what, round, om_error_kind_name(om_last_error()), om_last_error_message());
      om_clear_error();
      continue;
    }
    opened++;
    int64_t sx[2] = {2, 4};
    om_tensor *x = om_randn(sx, 2, 1, true), *out[4] = {0};
    int k = om_session_run(s, &x, 1, out, 4);
    om__release_all(out, k > 0 ? k : 0);
    om_clear_error();
    om_tensor_release(x);
    om_session_release(s);
  }
  free(buf);
  if (refused < rounds / 6 || opened < 10) FAILED("%s: %d opened, %d refused", what, opened, refused);
}

/* ---- the library format ---- */

static uint64_t fnv(const bytes *b) {
  uint64_t h = 14695981039346656037ull;
  for (size_t i = 0; i < b->n; i++) h = (h ^ b->p[i]) * 1099511628211ull;
  return h;
}

/* b with n_remove bytes of its graph section at `at` (from the file's start) replaced by insert's n_insert, its header's
 * sizes and checksum made again, so that a reader sees the edit, not a damaged file. */
static bytes graph_edited(const bytes *b, size_t at, size_t n_remove, const void *insert, size_t n_insert) {
  uint64_t g, d;
  memcpy(&g, b->p + 16, 8);
  memcpy(&d, b->p + 24, 8);
  bytes e = {0};
  to_bytes(&e, b->p, at);
  to_bytes(&e, insert, n_insert);
  to_bytes(&e, b->p + at + n_remove, 64 + g - at - n_remove);
  uint64_t head[2] = {e.n - 64, (e.n + 63) / 64 * 64};
  memcpy(e.p + 16, head, sizeof head);
  while (e.n < head[1]) to_bytes(&e, "", 1);
  to_bytes(&e, b->p + d, b->n - d);
  fix_checksum(e.p, e.n);
  return e;
}

/* Version 1 of m's saved bytes b, whose initializers have no aliases and whose one symbol has no
 * branches: each initializer's record without version 2's alias count (found by its place in the
 * data section, then a u32 0), the symbol's without version 3's branch count (the graph section's
 * last 4 bytes, a u32 0), and the header's version 1. */
static bytes as_v1(const bytes *b, const om_traced_model *m) {
  bytes v1 = graph_edited(b, 64, 0, "", 0); /* a copy */
  uint64_t off = 0;
  size_t at = 64;
  for (int k = 0; k < om_traced_count(m, OM_TRACED_INITIALIZER); k++) {
    om_dtype dtype;
    int ndim;
    const int64_t *shape;
    om_traced_info(m, OM_TRACED_INITIALIZER, k, &dtype, &ndim, &shape, NULL);
    int64_t place[2] = {(int64_t)off, (int64_t)om_dtype_size(dtype)};
    for (int q = 0; q < ndim; q++) place[1] *= shape[q];
    uint64_t g;
    memcpy(&g, v1.p + 16, 8);
    while (at + 20 <= 64 + g && (memcmp(v1.p + at, place, 16) || memcmp(v1.p + at + 16, "\0\0\0\0", 4))) at++;
    if (at + 20 > 64 + g) FAILED("initializer %d's record is not in the graph section", k);
    bytes cut = graph_edited(&v1, at + 16, 4, "", 0);
    free(v1.p);
    v1 = cut;
    off = (off + (uint64_t)place[1] + 63) / 64 * 64;
  }
  uint64_t g;
  memcpy(&g, v1.p + 16, 8);
  if (memcmp(v1.p + 64 + g - 4, "\0\0\0\0", 4)) FAILED("the symbol's branch count is not 0");
  bytes cut = graph_edited(&v1, 64 + g - 4, 4, "", 0); /* version 3's branch count of the one symbol */
  free(v1.p);
  v1 = cut;
  v1.p[8] = 1;
  return v1;
}

/* Where string s (its u32 length, then its bytes) first is in b's graph section. */
static size_t string_at(const bytes *b, const char *s) {
  uint32_t n = (uint32_t)strlen(s);
  for (size_t at = 64; at + 4 + n <= b->n; at++)
    if (!memcmp(b->p + at, &n, 4) && !memcmp(b->p + at + 4, s, n)) return at;
  FAILED("'%s' is not in the file", s);
  return 0;
}

/* w and u, and "tied", w's second name: an .om whose initializer w has the alias "tied". */
static om_tensor *tied_w, *tied_u;
static om_traced_model *trace_tied(void) {
  tied_w = om_randn((int64_t[]){4, 4}, 2, 5, true), tied_u = om_randn((int64_t[]){4, 4}, 2, 6, true);
  om_tensor *x0 = om_randn((int64_t[]){3, 4}, 2, 7, true);
  CHECK(om_trace_begin());
  om_tensor *x = om_trace_input("x", x0, NULL);
  CHECK(om_trace_parameter("w", tied_w) && om_trace_parameter("tied", tied_w) && om_trace_parameter("u", tied_u));
  om_tensor *a = om_matmul(x, tied_w), *y = om_matmul(a, tied_u);
  om_traced_model *m = om_trace_finish(&y, (const char *[]){"y"}, 1);
  CHECK(m != NULL);
  om__release_all((om_tensor *[]){x0, x, a, y}, 4);
  return m;
}

/* An alias entry edited (the header's sizes and checksum made again): a name held twice, an empty
 * one, a count or length past the section are Format, naming what is wrong; seeded mutations of
 * the file open or fail as reader_survives_mutated_files's. */
TEST(format_refuses_bad_aliases) {
  om_traced_model *m = trace_tied();
  const char *alias = NULL;
  CHECK(om_traced_aliases(m, 0, &alias, 1) == 1 && !strcmp(alias, "tied"));
  bytes b = saved(m);
  size_t at = string_at(&b, "tied");
  static const struct {
    const char *insert;
    size_t n;
    const char *msg;
  } edits[] = {
      {"\1\0\0\0u", 5, "format: the state-dict name 'u' is held by initializers 'w' and 'u'"},
      {"\1\0\0\0w", 5, "format: initializer 'w' holds the state-dict name 'w' twice"},
      {"\0\0\0\0", 4, "format: initializer 'w' has an empty alias"},
      {"\xff\xff\xff\xff", 4, "format: the graph section ends inside an initializer's alias"},
      {"\4\0\0\0ti\0d", 8, "format: the graph section ends inside an initializer's alias"}, /* a NUL: names are C strings */
  };
  for (size_t k = 0; k < sizeof edits / sizeof *edits; k++) {
    bytes e = graph_edited(&b, at, 8, edits[k].insert, edits[k].n);
    CHECK_ERROR(om_session_open(e.p, e.n, NULL) != NULL, OM_ERR_FORMAT, edits[k].msg);
    free(e.p);
  }
  uint32_t two = 2; /* the alias count 2, "tied" entered twice */
  bytes twice = graph_edited(&b, at - 4, 4, &two, 4), again = graph_edited(&twice, at + 8, 0, "\4\0\0\0tied", 8);
  CHECK_ERROR(om_session_open(again.p, again.n, NULL) != NULL, OM_ERR_FORMAT, "format: initializer 'w' holds the state-dict name 'tied' twice");
  uint32_t huge = 0x40000000;
  bytes many = graph_edited(&b, at - 4, 4, &huge, 4);
  CHECK_ERROR(om_session_open(many.p, many.n, NULL) != NULL, OM_ERR_FORMAT, "format: the graph section ends inside an initializer's alias count");
  om_session *s = om_session_open(b.p, b.n, NULL); /* the file as saved opens */
  CHECK(s != NULL);
  om_session_release(s);
  mutate_and_open(&b, 20261205, 600, "format v2 with an alias");
  free(b.p), free(twice.p), free(again.p), free(many.p);
  om_traced_release(m);
  om__release_all((om_tensor *[]){tied_w, tied_u}, 2);
}

TEST(format_round_trips_bit_for_bit) {
  om_traced_model *m = trace_mlp();
  bytes b = saved(m);
  CHECK_EQ_INT(b.n, om_traced_save_size(m));
  CHECK(b.n > 64 && !memcmp(b.p, "ONEMODEL", 8));
  uint64_t data_offset;
  memcpy(&data_offset, b.p + 24, 8);
  CHECK_EQ_INT(data_offset % 64, 0);
  CHECK_EQ_INT(b.n % 64, 0); /* every tensor padded to the next multiple of 64 */
  /* the same bytes natively and in WASM (this test runs in both): the hash is pinned */
  if (fnv(&b) != 0xd988756d2308e1c4ull) FAILED("hash %#llx", (unsigned long long)fnv(&b));
  bytes old = as_v1(&b, m); /* a version 1 file still opens (its initializers have no aliases) */
  CHECK(old.n <= b.n && old.p[8] == 1);
  om_session *a = om_session_create(m, NULL), *c = om_session_open(b.p, b.n, NULL), *c1 = om_session_open(old.p, old.n, NULL);
  CHECK(a && c && c1);
  CHECK(!strcmp(om_session_name(c, false, 0), "x") && !strcmp(om_session_name(c, true, 0), "probs"));
  for (int64_t batch = 1; batch <= 6; batch += 5) {
    int64_t sx[2] = {batch, 4};
    om_tensor *x = om_randn(sx, 2, 30 + (uint64_t)batch, true), *ya = NULL, *yc = NULL, *y1 = NULL;
    CHECK_EQ_INT(om_session_run(a, &x, 1, &ya, 1), 1);
    CHECK_EQ_INT(om_session_run(c, &x, 1, &yc, 1), 1);
    CHECK_EQ_INT(om_session_run(c1, &x, 1, &y1, 1), 1);
    char why[160];
    if (!close_to(yc, ya, 0, why, sizeof why)) FAILED("batch %lld: %s", (long long)batch, why);
    if (!close_to(y1, ya, 0, why, sizeof why)) FAILED("version 1, batch %lld: %s", (long long)batch, why);
    om__release_all((om_tensor *[]){x, ya, yc, y1}, 4);
  }
  om_session_release(a);
  om_session_release(c);
  om_session_release(c1);
  free(old.p);
  free(b.p);
  om_traced_release(m);
  free_mlp();
}

static om_tensor *pos_table;
static int positions(void *ctx, om_tensor *const *in, int n, om_tensor **out, int max) {
  (void)ctx, (void)n, (void)max;
  int64_t T = om_tensor_shape(in[0])[1];
  om_tensor *p = om_slice(pos_table, 0, 0, T, 1);
  out[0] = om_add(in[0], p);
  om_tensor_release(p);
  return out[0] ? 1 : -1;
}

/* A traced model's ranges hold in its sessions: a size outside is refused, naming the call that narrowed it. */
TEST(sessions_keep_the_ranges_of_the_trace) {
  int64_t s16[1] = {16}, sx[2] = {2, 4};
  pos_table = om_randn(s16, 1, 1, true);
  om_tensor *x = om_randn(sx, 2, 2, true), *y = NULL;
  om_trace_begin();
  om_tensor *tx = om_trace_input("x", x, (const char *[]){"b", "t"});
  om_traced_model *m = om_trace_run(positions, NULL, &y, 1) == 1 ? om_trace_finish(&y, (const char *[]){"y"}, 1) : NULL;
  CHECK(m != NULL);
  bytes b = saved(m);
  om_session *ss[2] = {om_session_create(m, NULL), om_session_open(b.p, b.n, NULL)};
  int64_t s7[2] = {2, 17}, s5[2] = {3, 5};
  om_tensor *long_x = om_zeros(s7, 2, OM_FLOAT32), *ok_x = om_zeros(s5, 2, OM_FLOAT32), *out = NULL;
  for (int k = 0; k < 2; k++) {
    CHECK_ERROR(om_session_run(ss[k], &long_x, 1, &out, 1) >= 0, OM_ERR_SHAPE_MISMATCH,
                "axis 't' is 17 at dim 1 of input 'x'; the traced graph holds for t from 1 to 16 (narrowed by add");
    CHECK_EQ_INT(om_session_run(ss[k], &ok_x, 1, &out, 1), 1);
    CHECK_NEAR(at(out, 9), at(pos_table, 4), 0);
    om_tensor_release(out);
    om_session_release(ss[k]);
  }
  om__release_all((om_tensor *[]){long_x, ok_x, x, tx, y, pos_table}, 6);
  free(b.p);
  om_traced_release(m);
}

TEST(format_refuses_what_it_cannot_read) {
  om_traced_model *m = trace_mlp();
  bytes b = saved(m);
  unsigned char *c = malloc(b.n);
  memcpy(c, b.p, b.n);
  c[8] = 4; /* version 4 */
  CHECK_ERROR(om_session_open(c, b.n, NULL) != NULL, OM_ERR_UNSUPPORTED, "format: version 4; this reader takes versions 1 to 3");
  memcpy(c, b.p, b.n);
  CHECK_ERROR(om_session_open(c, 40, NULL) != NULL, OM_ERR_FORMAT, "the 40 bytes end inside the 64-byte header");
  CHECK_ERROR(om_session_open(c, b.n - 64, NULL) != NULL, OM_ERR_FORMAT, "do not fit the");
  c[70] ^= 1; /* inside the graph section */
  CHECK_ERROR(om_session_open(c, b.n, NULL) != NULL, OM_ERR_FORMAT, "does not match its checksum (the file is damaged)");
  free(c);
  free(b.p);
  om_traced_release(m);
  free_mlp();
}

/* Exact mode: the same bits natively and in WASM (this test runs in both, so the hash is pinned),
 * through the ops whose kernels call the library's own exp, log, tanh and erf. */
static om_tensor *ew, *eb;
static int transcendental(void *ctx, om_tensor *const *in, int n, om_tensor **out, int max) {
  (void)ctx, (void)n, (void)max;
  om_scope s = {0};
  om_tensor *h = om__keep(&s, om_linear(in[0], ew, eb)), *g = om__keep(&s, om_gelu(h, false));
  om_tensor *ts = om__keep(&s, om_add(om__keep(&s, om_tanh(g)), om__keep(&s, om_sigmoid(h))));
  om_tensor *l = om__keep(&s, om_layer_norm(ts, (int64_t[]){8}, 1, NULL, NULL, 1e-5));
  om_tensor *y = om__keep(&s, om_softmax(l, 1));
  out[0] = om_log(om__keep(&s, om_add(om__keep(&s, om_exp(y)), om__keep(&s, om_erf(in[0])))));
  om__scope_end(&s);
  return out[0] ? 1 : -1;
}

TEST(exact_mode_gives_the_same_bits_everywhere) {
  ew = om_randn((int64_t[]){8, 8}, 2, 2, true), eb = om_randn((int64_t[]){8}, 1, 3, true);
  om_tensor *x = om_randn((int64_t[]){3, 8}, 2, 1, true), *y = NULL;
  om_trace_begin();
  om_tensor *tx = om_trace_input("x", x, (const char *[]){"n", NULL});
  om_traced_model *m = om_trace_run(transcendental, NULL, &y, 1) == 1 ? om_trace_finish(&y, (const char *[]){"y"}, 1) : NULL;
  om_session *exact = om_session_create(m, &(om_session_options){.mode = OM_SESSION_EXACT}), *fast = om_session_create(m, NULL);
  om_tensor *ye = NULL, *yf = NULL, *eager = NULL;
  CHECK(om_session_run(exact, &x, 1, &ye, 1) == 1 && om_session_run(fast, &x, 1, &yf, 1) == 1);
  transcendental(NULL, &x, 1, &eager, 1);
  char why[160];
  CHECK(close_to(ye, yf, 0, why, sizeof why));
  CHECK(close_to(ye, eager, 0, why, sizeof why));
  bytes b = {0};
  float v[24];
  if (ye && om_tensor_read(ye, v)) to_bytes(&b, v, sizeof v);

  if (fnv(&b) != 0x75224da0258d98b0ull) FAILED("hash %#llx", (unsigned long long)fnv(&b));
  free(b.p);
  om__release_all((om_tensor *[]){x, tx, y, ye, yf, eager, ew, eb}, 8);
  om_session_release(exact);
  om_session_release(fast);
  om_traced_release(m);
}

/* Fast mode folds a BatchNormalization into the convolution before it (one kernel, the last bits
 * change); exact mode runs both, bit-identical to eager. */
static om_tensor *cw, *cb, *bn[4];
static int conv_bn(void *ctx, om_tensor *const *in, int n, om_tensor **out, int max) {
  (void)ctx, (void)n, (void)max;
  om_tensor *c = om_conv2d(in[0], cw, cb, (int64_t[]){1, 1}, (int64_t[]){1, 1}, (int64_t[]){1, 1}, 1);
  out[0] = om_batch_norm(c, bn[0], bn[1], bn[2], bn[3], false, 0.1, 1e-5);
  om_tensor_release(c);
  return out[0] ? 1 : -1;
}

TEST(fast_mode_folds_batch_norm_into_conv) {
  cw = om_randn((int64_t[]){4, 3, 3, 3}, 4, 1, true), cb = om_randn((int64_t[]){4}, 1, 2, true);
  for (int k = 0; k < 4; k++) bn[k] = om_rand((int64_t[]){4}, 1, 10 + (uint64_t)k, true); /* var in [0, 1) */
  om_tensor *x = om_randn((int64_t[]){2, 3, 6, 5}, 4, 3, true), *y = NULL;
  om_trace_begin();
  om_tensor *tx = om_trace_input("x", x, (const char *[]){"n", NULL, NULL, NULL});
  om_traced_model *m = om_trace_run(conv_bn, NULL, &y, 1) == 1 ? om_trace_finish(&y, (const char *[]){"y"}, 1) : NULL;
  om_session *fast = om_session_create(m, NULL), *exact = om_session_create(m, &(om_session_options){.mode = OM_SESSION_EXACT});
  om_tensor *yf = NULL, *ye = NULL, *eager = NULL;
  CHECK(om_session_run(fast, &x, 1, &yf, 1) == 1 && om_session_run(exact, &x, 1, &ye, 1) == 1);
  conv_bn(NULL, &x, 1, &eager, 1);
  char why[160];
  CHECK(close_to(ye, eager, 0, why, sizeof why));
  if (!close_to(yf, eager, 1e-5, why, sizeof why)) FAILED("fast: %s", why);
  CHECK(!close_to(yf, eager, 0, why, sizeof why)); /* it did fold: these seeds change a last bit */
  om__release_all((om_tensor *[]){x, tx, y, yf, ye, eager, cw, cb, bn[0], bn[1], bn[2], bn[3]}, 12);
  om_session_release(fast);
  om_session_release(exact);
  om_traced_release(m);
}

/* Fast mode's attention pass: the attention a graph writes as separate nodes becomes the
 * attention op, with the same bits as exact mode (which runs every node), at every size: a
 * causal scaled_dot_product_attention (then a layer norm), a hand-written one scaling q first
 * and adding a mask computed from the input, one dividing and filling where a bool mask is true,
 * and one whose probabilities are read twice (not fused). Each computes its scores from other
 * operands: the trace writes a computation the graph holds already once (merge.c), and scores
 * read twice do not fuse. */
static om_tensor *aw[3];
static int attentions(om_tensor *const *in, om_tensor **out) {
  om_scope s = {0};
  om_tensor *q = om__keep(&s, om_linear(in[0], aw[0], NULL)), *k = om__keep(&s, om_linear(in[0], aw[1], NULL));
  om_tensor *v = om__keep(&s, om_linear(in[0], aw[2], NULL)), *kt = om__keep(&s, om_transpose(k, 1, 2));
  /* a layer norm after it: a step with outputs nothing reads (mean, rstd) after the fused steps go */
  out[0] = om_layer_norm(om__keep(&s, om_scaled_dot_product_attention(q, k, v, NULL, true, NULL)), (int64_t[]){8}, 1, NULL, NULL, 1e-5);
  int64_t last = -1;
  om_tensor *pad = om__keep(&s, om_unsqueeze(om__keep(&s, om_mean(in[0], &last, 1, false)), 1)); /* [n, 1, T] */
  om_tensor *s1 = om__keep(&s, om_add(om__keep(&s, om_matmul(om__keep(&s, om_scale(q, 0.3)), kt)), pad));
  out[1] = om_matmul(om__keep(&s, om_softmax(s1, -1)), v);
  om_tensor *two = om__keep(&s, om_scalar(2, OM_FLOAT32)), *fill = om__keep(&s, om_scalar(-1e4, OM_FLOAT32));
  om_tensor *zero = om__keep(&s, om_scalar(0, OM_FLOAT32));
  om_tensor *m = om__keep(&s, om_gt(pad, zero));
  om_tensor *s2 = om__keep(&s, om_where(m, fill, om__keep(&s, om_div(om__keep(&s, om_matmul(k, kt)), two))));
  out[2] = om_matmul(om__keep(&s, om_softmax(s2, -1)), v);
  om_tensor *p3 = om__keep(&s, om_softmax(om__keep(&s, om_matmul(v, kt)), -1));
  out[3] = om_add(om__keep(&s, om_matmul(p3, v)), om__keep(&s, om_sum(p3, &last, 1, true)));
  om__scope_end(&s);
  return out[0] && out[1] && out[2] && out[3] ? 4 : -1;
}

static int count_kernel(om_session *s, const char *name) {
  const char *names[256];
  int n = om_session_plan_kernels(s, names, 256), c = 0;
  for (int k = 0; k < n && k < 256; k++) c += !strcmp(names[k], name);
  return c;
}

TEST(fast_mode_fuses_attention) {
  for (int k = 0; k < 3; k++) aw[k] = om_randn((int64_t[]){8, 8}, 2, 60 + (uint64_t)k, true);
  om_tensor *x = om_randn((int64_t[]){2, 5, 8}, 3, 63, true);
  om_trace_begin();
  om_traced_model *m = om_test_trace(attentions, x, (const char *[]){"n", "t", NULL}, 4);
  CHECK(m != NULL);
  om_session *fast = om_session_create(m, NULL), *exact = om_session_create(m, &(om_session_options){.mode = OM_SESSION_EXACT});
  int64_t sizes[2][3] = {{2, 5, 8}, {3, 70, 8}}; /* 70 query rows: two score blocks */
  int64_t bytes[2][2];
  for (int z = 0; z < 2; z++) {
    om_tensor *xi = om_randn(sizes[z], 3, 64 + (uint64_t)z, true), *yf[4] = {0}, *ye[4] = {0}, *eager[4] = {0};
    CHECK(om_session_run(fast, &xi, 1, yf, 4) == 4 && om_session_run(exact, &xi, 1, ye, 4) == 4 && attentions(&xi, eager) == 4);
    char why[160];
    for (int j = 0; j < 4; j++) {
      if (!close_to(yf[j], ye[j], 0, why, sizeof why)) FAILED("size %d, output %d: fast and exact differ: %s", z, j, why);
      if (!close_to(ye[j], eager[j], 0, why, sizeof why)) FAILED("size %d, output %d: exact and eager differ: %s", z, j, why);
    }
    CHECK_EQ_INT(count_kernel(fast, "attention"), 3);
    CHECK_EQ_INT(count_kernel(fast, "softmax"), 1);
    CHECK_EQ_INT(count_kernel(exact, "attention"), 0);
    CHECK_EQ_INT(count_kernel(exact, "softmax"), 4);
    /* out[3]'s sum over t, written in float64 (Cast, ReduceSum, Cast), is one float32 sum in fast mode */
    CHECK_EQ_INT(count_kernel(fast, "cast"), 0);
    CHECK_EQ_INT(count_kernel(exact, "cast"), 2);
    bytes[z][0] = om_session_plan_bytes(fast), bytes[z][1] = om_session_plan_bytes(exact);
    om__release_all(yf, 4), om__release_all(ye, 4), om__release_all(eager, 4);
    om_tensor_release(xi);
  }
  CHECK(bytes[1][0] < bytes[1][1]); /* the score matrices are gone: 3 x 70 x 70 floats per batch */
  CHECK_ERROR(om_session_plan_kernels(NULL, NULL, 0) >= 0, OM_ERR_INVALID_ARGUMENT, "session_plan_kernels: the session is NULL");
  CHECK_ERROR(om_session_plan_kernels(fast, NULL, 3) >= 0, OM_ERR_INVALID_ARGUMENT, "or no room given");
  om__release_all((om_tensor *[]){x, aw[0], aw[1], aw[2]}, 4);
  om_session_release(fast);
  om_session_release(exact);
  om_traced_release(m);
}

/* Fast mode's layout of the copies the attention reads: torch.onnx's nn.MultiheadAttention
 * (sequence first) slices q, k, v from one in-projection [t, n, 3E] and reshapes each to [t, n x
 * heads, d], a copy at n > 1, then transposes it for the attention. The pass makes the copies of
 * k and v write each head's rows one after the other (row stride d where the copy's own order
 * puts them n x heads x d apart), with exact mode's bits, at n 1 (no copy), 3 and 8. */
static om_tensor *mw[2];
static int torch_mha(om_tensor *const *in, om_tensor **out) {
  om_scope s = {0};
  om_tensor *proj = om__keep(&s, om_add(om__keep(&s, om_matmul(om__keep(&s, om_transpose(in[0], 0, 1)), mw[0])), mw[1]));
  int64_t heads[3] = {om_tensor_shape(proj)[0], -1, 4};
  om_tensor *h[3];
  for (int j = 0; j < 3; j++) h[j] = om__keep(&s, om_reshape(om__keep(&s, om_slice(proj, 2, 8 * j, 8 * j + 8, 1)), heads, 3));
  om_tensor *q = om__keep(&s, om_div(om__keep(&s, om_transpose(h[0], 0, 1)), om__keep(&s, om_scalar(2, OM_FLOAT32))));
  om_tensor *kt = om__keep(&s, om_permute(h[1], (int64_t[]){1, 2, 0}, 3)), *v = om__keep(&s, om_transpose(h[2], 0, 1));
  out[0] = om_matmul(om__keep(&s, om_softmax(om__keep(&s, om_matmul(q, kt)), -1)), v);
  om__scope_end(&s);
  return out[0] ? 1 : -1;
}

TEST(fast_mode_lays_out_the_attentions_copies) {
  mw[0] = om_randn((int64_t[]){8, 24}, 2, 80, true), mw[1] = om_randn((int64_t[]){24}, 1, 81, true);
  om_tensor *x = om_randn((int64_t[]){2, 5, 8}, 3, 82, true);
  om_trace_begin();
  om_traced_model *m = om_test_trace(torch_mha, x, (const char *[]){"n", "t", NULL}, 1);
  CHECK(m != NULL);
  om_session *fast = om_session_create(m, NULL), *exact = om_session_create(m, &(om_session_options){.mode = OM_SESSION_EXACT});
  for (int64_t n = 1; n <= 8; n += n == 1 ? 2 : 5) {
    om_tensor *xi = om_randn((int64_t[]){n, 7, 8}, 3, 83 + (uint64_t)n, true), *yf = NULL, *ye = NULL;
    CHECK(om_session_run(fast, &xi, 1, &yf, 1) == 1 && om_session_run(exact, &xi, 1, &ye, 1) == 1);
    char why[160];
    if (!close_to(yf, ye, 0, why, sizeof why)) FAILED("n %lld: fast and exact differ: %s", (long long)n, why);
    CHECK_EQ_INT(count_kernel(fast, "attention"), 1);
    CHECK_EQ_INT(count_kernel(fast, "clone"), n > 1 ? 3 : 0);
    const om_plan *p = om__session_plan(fast);
    for (int k = 0; p && k < p->steps.n; k++) {
      const om_step *st = &p->steps.v[k];
      if (st->op != OM_OP_attention) continue;
      /* kt [n x heads, d, t]: a key's d values, the keys d apart; v [n x heads, t, d]: rows d apart. Without a copy they
       * stay where the in-projection put them, 3E apart */
      CHECK_EQ_INT(st->in[1]->strides[1], 1);
      CHECK_EQ_INT(st->in[1]->strides[2], n > 1 ? 4 : 24);
      CHECK_EQ_INT(st->in[2]->strides[1], n > 1 ? 4 : 24);
      CHECK_EQ_INT(st->in[2]->strides[0], n > 1 ? 28 : 4);
    }
    om_tensor_release(yf), om_tensor_release(ye), om_tensor_release(xi);
  }
  om__release_all((om_tensor *[]){x, mw[0], mw[1]}, 3);
  om_session_release(fast);
  om_session_release(exact);
  om_traced_release(m);
}

/* Fast mode's linear and GELU passes, natively so that ASan and UBSan run them
 * (tests/js/session-passes.test.mjs builds the exporters' node patterns and their near misses):
 * matmul by a constant matrix, then add of a constant bias, is one linear with exact mode's bits;
 * GELU written as erf arithmetic on it is one gelu, within 1e-6 scaled of the nodes. */
static om_tensor *lw[2];
static int linear_gelu(om_tensor *const *in, om_tensor **out) {
  om_scope s = {0};
  out[0] = om_add(om__keep(&s, om_matmul(in[0], lw[0])), lw[1]);
  om_tensor *r2 = om__keep(&s, om_scalar(1.41421356237309505, OM_FLOAT32)), *one = om__keep(&s, om_scalar(1, OM_FLOAT32));
  om_tensor *half = om__keep(&s, om_scalar(0.5, OM_FLOAT32));
  om_tensor *e = om__keep(&s, om_add(om__keep(&s, om_erf(om__keep(&s, om_div(out[0], r2)))), one));
  out[1] = om_mul(om__keep(&s, om_mul(out[0], e)), half);
  om__scope_end(&s);
  return out[0] && out[1] ? 2 : -1;
}

TEST(fast_mode_fuses_linear_and_gelu) {
  lw[0] = om_randn((int64_t[]){8, 6}, 2, 70, true), lw[1] = om_randn((int64_t[]){6}, 1, 71, true);
  om_tensor *x = om_randn((int64_t[]){2, 5, 8}, 3, 72, true);
  om_trace_begin();
  om_traced_model *m = om_test_trace(linear_gelu, x, (const char *[]){"n", "t", NULL}, 2);
  CHECK(m != NULL);
  om_session *fast = om_session_create(m, NULL), *exact = om_session_create(m, &(om_session_options){.mode = OM_SESSION_EXACT});
  int64_t sizes[2][3] = {{2, 5, 8}, {3, 40, 8}};
  for (int z = 0; z < 2; z++) {
    om_tensor *xi = om_randn(sizes[z], 3, 73 + (uint64_t)z, true), *yf[2] = {0}, *ye[2] = {0};
    CHECK(om_session_run(fast, &xi, 1, yf, 2) == 2 && om_session_run(exact, &xi, 1, ye, 2) == 2);
    char why[160];
    if (!close_to(yf[0], ye[0], 0, why, sizeof why)) FAILED("size %d: linear: fast and exact differ: %s", z, why);
    if (!close_to(yf[1], ye[1], 1e-6, why, sizeof why)) FAILED("size %d: gelu: fast and exact differ: %s", z, why);
    CHECK_EQ_INT(count_kernel(fast, "linear"), 1);
    CHECK_EQ_INT(count_kernel(fast, "gelu"), 1);
    CHECK_EQ_INT(count_kernel(fast, "matmul") + count_kernel(fast, "erf") + count_kernel(fast, "mul"), 0);
    CHECK_EQ_INT(count_kernel(exact, "matmul"), 1);
    CHECK_EQ_INT(count_kernel(exact, "erf"), 1);
    om__release_all(yf, 2), om__release_all(ye, 2);
    om_tensor_release(xi);
  }
  om__release_all((om_tensor *[]){x, lw[0], lw[1]}, 3);
  om_session_release(fast);
  om_session_release(exact);
  om_traced_release(m);
}

/* Fast mode's layer norm pass, natively so that ASan and UBSan run it (the node patterns and
 * their near misses: tests/js/session-passes.test.mjs): a layer norm written out as torch.onnx
 * writes it below opset 17 (mean, sub, pow 2, mean, add eps, sqrt, div) is one layer_norm step
 * (its statistics, which nothing reads, placed with it), within 1e-5 scaled of the steps; the
 * normalised value is read twice here, so the weight's mul and the bias' add stay steps. */
static om_tensor *nw[2];
static int layer_norms(om_tensor *const *in, om_tensor **out) {
  om_scope s = {0};
  int64_t last = -1;
  om_tensor *two = om__keep(&s, om_scalar(2, OM_FLOAT32));
  om_tensor *d = om__keep(&s, om_sub(in[0], om__keep(&s, om_mean(in[0], &last, 1, true))));
  om_tensor *var = om__keep(&s, om_mean(om__keep(&s, om_pow(d, two)), &last, 1, true));
  om_tensor *n = om__keep(&s, om_div(d, om__keep(&s, om_sqrt(om__keep(&s, om_add_scalar(var, 1e-5))))));
  out[0] = om_add(om__keep(&s, om_mul(n, nw[0])), nw[1]);
  out[1] = om_relu(n); /* n read by the mul and the relu: the normalisation fuses, the weight stays */
  om__scope_end(&s);
  return out[0] && out[1] ? 2 : -1;
}

TEST(fast_mode_fuses_layer_norm) {
  nw[0] = om_randn((int64_t[]){8}, 1, 80, true), nw[1] = om_randn((int64_t[]){8}, 1, 81, true);
  om_tensor *x = om_randn((int64_t[]){2, 5, 8}, 3, 82, true);
  om_trace_begin();
  om_traced_model *m = om_test_trace(layer_norms, x, (const char *[]){"n", "t", NULL}, 2);
  CHECK(m != NULL);
  om_session *fast = om_session_create(m, NULL), *exact = om_session_create(m, &(om_session_options){.mode = OM_SESSION_EXACT});
  int64_t sizes[2][3] = {{2, 5, 8}, {3, 40, 8}};
  for (int z = 0; z < 2; z++) {
    om_tensor *xi = om_randn(sizes[z], 3, 83 + (uint64_t)z, true), *yf[2] = {0}, *ye[2] = {0};
    CHECK(om_session_run(fast, &xi, 1, yf, 2) == 2 && om_session_run(exact, &xi, 1, ye, 2) == 2);
    char why[160];
    for (int j = 0; j < 2; j++)
      if (!close_to(yf[j], ye[j], 1e-5, why, sizeof why)) FAILED("size %d, output %d: fast and exact differ: %s", z, j, why);
    CHECK_EQ_INT(count_kernel(fast, "layer_norm"), 1);
    CHECK_EQ_INT(count_kernel(fast, "sqrt"), 0);
    CHECK_EQ_INT(count_kernel(fast, "mul"), 1);
    CHECK_EQ_INT(count_kernel(exact, "layer_norm"), 0);
    om__release_all(yf, 2), om__release_all(ye, 2);
    om_tensor_release(xi);
  }
  om__release_all((om_tensor *[]){x, nw[0], nw[1]}, 3);
  om_session_release(fast);
  om_session_release(exact);
  om_traced_release(m);
}

/* Fast mode's RMSNorm pass, natively so that ASan and UBSan run it (the node patterns and their
 * near misses: tests/js/session-passes.test.mjs): Hugging Face's LLaMA form, x (1 / sqrt(mean(x^2)
 * + eps)) w, and T5's quotient with the square as a product, each one rms_norm step with exact
 * mode's bits. */
static om_tensor *rw;
static int rms_norms(om_tensor *const *in, om_tensor **out) {
  om_scope s = {0};
  int64_t last = -1;
  om_tensor *two = om__keep(&s, om_scalar(2, OM_FLOAT32)), *one = om__keep(&s, om_scalar(1, OM_FLOAT32));
  om_tensor *ms = om__keep(&s, om_mean(om__keep(&s, om_pow(in[0], two)), &last, 1, true));
  om_tensor *r = om__keep(&s, om_div(one, om__keep(&s, om_sqrt(om__keep(&s, om_add_scalar(ms, 1e-6))))));
  out[0] = om_mul(rw, om__keep(&s, om_mul(in[0], r)));
  om_tensor *x2 = om__keep(&s, om_relu(in[0]));
  om_tensor *ms2 = om__keep(&s, om_mean(om__keep(&s, om_mul(x2, x2)), &last, 1, true));
  out[1] = om_div(x2, om__keep(&s, om_sqrt(om__keep(&s, om_add_scalar(ms2, 1e-5)))));
  om__scope_end(&s);
  return out[0] && out[1] ? 2 : -1;
}

TEST(fast_mode_fuses_rms_norm) {
  rw = om_randn((int64_t[]){8}, 1, 84, true);
  om_tensor *x = om_randn((int64_t[]){2, 5, 8}, 3, 85, true);
  om_trace_begin();
  om_traced_model *m = om_test_trace(rms_norms, x, (const char *[]){"n", "t", NULL}, 2);
  CHECK(m != NULL);
  om_session *fast = om_session_create(m, NULL), *exact = om_session_create(m, &(om_session_options){.mode = OM_SESSION_EXACT});
  int64_t sizes[2][3] = {{2, 5, 8}, {3, 40, 8}};
  for (int z = 0; z < 2; z++) {
    om_tensor *xi = om_randn(sizes[z], 3, 86 + (uint64_t)z, true), *yf[2] = {0}, *ye[2] = {0};
    CHECK(om_session_run(fast, &xi, 1, yf, 2) == 2 && om_session_run(exact, &xi, 1, ye, 2) == 2);
    char why[160];
    for (int j = 0; j < 2; j++)
      if (!close_to(yf[j], ye[j], 0, why, sizeof why)) FAILED("size %d, output %d: fast and exact differ: %s", z, j, why);
    CHECK_EQ_INT(count_kernel(fast, "rms_norm"), 2);
    CHECK_EQ_INT(count_kernel(fast, "sqrt"), 0);
    CHECK_EQ_INT(count_kernel(exact, "rms_norm"), 0);
    om__release_all(yf, 2), om__release_all(ye, 2);
    om_tensor_release(xi);
  }
  om__release_all((om_tensor *[]){x, rw}, 2);
  om_session_release(fast);
  om_session_release(exact);
  om_traced_release(m);
}

/* ---- the rest of ONNX's ops (tests/js/onnx-ops.test.mjs checks each against onnxruntime-web):
 * natively too, so ASan and UBSan run their rules, against references computed here ---- */

static void attr_ints(pb *n, const char *name, int count, const int64_t *v) {
  pb a = {0};
  pb_str(&a, 1, name);
  for (int k = 0; k < count; k++) pb_int(&a, 8, v[k]);
  pb_int(&a, 20, 7);
  pb_msg(n, 5, &a);
}

static void attr_float(pb *n, const char *name, float v) {
  pb a = {0};
  pb_str(&a, 1, name);
  pb_varint(&a, 2 << 3 | 5);
  memcpy(a.b + a.n, &v, 4), a.n += 4;
  pb_int(&a, 20, 1);
  pb_msg(n, 5, &a);
}

/* An initializer name of ONNX type onnx_type (1 float, 7 int64, 9 bool), dims, raw bytes. */
static pb raw_init(const char *name, int onnx_type, int ndim, const int64_t *dims, const void *raw, size_t nbytes) {
  pb t = {0};
  for (int d = 0; d < ndim; d++) pb_int(&t, 1, dims[d]);
  pb_int(&t, 2, onnx_type), pb_str(&t, 8, name), pb_bytes(&t, 9, raw, nbytes);
  return t;
}

/* y of the graph of node nd (inputs x and initializers) run on x, or NULL with the error set. */
static om_tensor *run_node_at(int opset, const pb *nd, const pb *inits, int n_inits, om_tensor *x) {
  pb m = model_at(opset, nd, 1, inits, n_inits, om_tensor_shape(x), om_tensor_ndim(x), NULL, 0);
  om_session *s = om_session_open(m.b, m.n, NULL);
  om_tensor *y = NULL;
  if (s && om_session_run(s, &x, 1, &y, 1) != 1) y = NULL;
  om_session_release(s);
  return y;
}

/* run_node_at at opset 17. */
static om_tensor *run_node(const pb *nd, const pb *inits, int n_inits, om_tensor *x) { return run_node_at(17, nd, inits, n_inits, x); }

/* got's values against want's n values: NaN for NaN, the same infinity, else within tol relative. */
static void check_values(const char *what, const om_tensor *got, const double *want, int64_t n, double tol) {
  if (!got || om_tensor_numel(got) != n) {
    FAILED("%s: %lld values, expected %lld (%s)", what, got ? (long long)om_tensor_numel(got) : -1LL, (long long)n, om_last_error_message());
    return;
  }
  for (int64_t k = 0; k < n; k++) {
    double a = at(got, k), w = want[k];
    bool ok = isnan(w) ? isnan(a) : isinf(w) ? a == w : fabs(a - w) <= tol * (fabs(w) > 1 ? fabs(w) : 1);
    if (!ok) FAILED("%s: element %lld is %.9g, expected %.9g", what, (long long)k, a, w);
  }
}

static double ref_selu(double x) { return 1.05070102214813232421875 * (x > 0 ? x : 1.67326319217681884765625 * expm1(x)); }
static double ref_celu(double x) { return x > 0 ? x : 0.5 * expm1(x / 0.5); }
static double ref_shrink(double x) { return x < -1 ? x + 1.5 : x > 1 ? x - 1.5 : 0; }
static double ref_thresholded_relu(double x) { return x > 1 ? x : 0; }
static double ref_softsign(double x) { return x / (1 + fabs(x)); }
static double ref_mish(double x) { return x * tanh(x > 20 ? x : log1p(exp(x))); }
static double ref_is_nan(double x) { return isnan(x) != 0; }
static double ref_is_inf(double x) { return isinf(x) != 0; }
static double ref_round(double x) { return nearbyint(x); }

TEST(more_elementwise_ops_against_references) {
  static const float v[] = {-3.7f, -2.5f, -1.5f, -1, -0.5f, -0.2f, 0, 0.3f, 0.5f, 1.5f, 2.5f, 20.5f, 4194304.5f, 1e30f, INFINITY, -INFINITY, NAN};
  enum { N = sizeof v / sizeof *v };
  struct { const char *op, *attr; float value; double (*ref)(double); } cases[] = {
      {"Selu", NULL, 0, ref_selu}, {"Celu", "alpha", 0.5f, ref_celu}, {"Shrink", "bias", 1.5f, ref_shrink},
      {"ThresholdedRelu", NULL, 0, ref_thresholded_relu}, {"Softsign", NULL, 0, ref_softsign}, {"Mish", NULL, 0, ref_mish},
      {"IsNaN", NULL, 0, ref_is_nan}, {"IsInf", NULL, 0, ref_is_inf}, {"Round", NULL, 0, ref_round},
  };
  om_tensor *x = om_from_data(v, (const int64_t[]){N}, 1, OM_FLOAT32);
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    pb nd = node(cases[c].op, "x", NULL, "y");
    if (cases[c].attr) attr_float(&nd, cases[c].attr, cases[c].value);
    if (!strcmp(cases[c].op, "Shrink")) attr_float(&nd, "lambd", 1);
    double want[N];
    for (int k = 0; k < N; k++) want[k] = cases[c].ref(v[k]);
    om_tensor *y = run_node_at(strcmp(cases[c].op, "Mish") ? 17 : 18, &nd, NULL, 0, x); /* Mish: from opset 18 */
    check_values(cases[c].op, y, want, N, 1e-6);
    om_tensor_release(y);
  }
  om_tensor_release(x);
}

TEST(more_reductions_against_references) {
  float v[3 * 7];
  for (int k = 0; k < 21; k++) v[k] = 0.6f + 0.05f * (float)((k * 7) % 17);
  v[5] = -v[5];
  om_tensor *x = om_from_data(v, (const int64_t[]){3, 7}, 2, OM_FLOAT32);
  pb axes = ints_init("axes", 1, (const int64_t[]){-1}); /* an input from opset 18 (an attribute before) */
  const char *ops[] = {"ReduceProd", "ReduceLogSumExp", "ReduceL1", "ReduceLogSum"};
  for (int o = 0; o < 4; o++) {
    pb nd = node(ops[o], "x", "axes", "y");
    attr_int(&nd, "keepdims", 0);
    double want[3];
    for (int r = 0; r < 3; r++) {
      double p = 1, e = 0, a = 0, s = 0;
      for (int c = 0; c < 7; c++) p *= v[r * 7 + c], e += exp(v[r * 7 + c]), a += fabs(v[r * 7 + c]), s += v[r * 7 + c];
      want[r] = o == 0 ? p : o == 1 ? log(e) : o == 2 ? a : log(s);
    }
    om_tensor *y = run_node_at(18, &nd, &axes, 1, x);
    check_values(ops[o], y, want, 3, 1e-6);
    om_tensor_release(y);
  }
  om_tensor_release(x);
  /* the maximum taken out: no overflow at 1000, -inf rows stay -inf */
  om_tensor *big = TF(SHAPE(3, 2), 1000, 1000, -INFINITY, -INFINITY, -1000, 3);
  pb nd = node("ReduceLogSumExp", "x", "axes", "y");
  attr_int(&nd, "keepdims", 0);
  om_tensor *y = run_node_at(18, &nd, &axes, 1, big);
  check_values("ReduceLogSumExp of large values", y, (const double[]){1000 + log(2.0), -INFINITY, 3}, 3, 1e-6);
  om_tensor_release(y);
  om_tensor_release(big);
}

TEST(more_indexing_and_sampling_ops_against_references) {
  float v[12];
  for (int k = 0; k < 12; k++) v[k] = (float)k;
  om_tensor *x = om_from_data(v, (const int64_t[]){3, 4}, 2, OM_FLOAT32);
  /* GatherND: x[2, 1], x[0, -1]; a tuple out of range is IndexOutOfRange */
  int64_t idx[4] = {2, 1, 0, -1}, bad[2] = {1, 4};
  pb nd = node("GatherND", "x", "i", "y");
  pb in = raw_init("i", 7, 2, (const int64_t[]){2, 2}, idx, sizeof idx), inb = raw_init("i", 7, 1, (const int64_t[]){2}, bad, sizeof bad);
  om_tensor *y = run_node(&nd, &in, 1, x);
  check_values("GatherND", y, (const double[]){9, 3}, 2, 0);
  om_tensor_release(y);
  CHECK_ERROR(run_node(&nd, &inb, 1, x) != NULL, OM_ERR_INDEX_OUT_OF_RANGE, "GatherND (GatherND): index -1");
  /* Compress: columns 0 and 2 */
  unsigned char cond[3] = {1, 0, 1};
  pb cn = node("Compress", "x", "c", "y"), ci = raw_init("c", 9, 1, (const int64_t[]){3}, cond, 3);
  attr_int(&cn, "axis", 1);
  y = run_node(&cn, &ci, 1, x);
  check_values("Compress", y, (const double[]){0, 2, 4, 6, 8, 10}, 6, 0);
  om_tensor_release(y);
  /* NonZero of a constant: [[0, 1, 1], [1, 0, 2]]; of an input, a plan for its values */
  float nzv[6] = {0, 2, 0, 5, 0, -1};
  pb nz = node("NonZero", "c", NULL, "y"), nzi = raw_init("c", 1, 2, (const int64_t[]){2, 3}, nzv, sizeof nzv);
  y = run_node(&nz, &nzi, 1, x);
  check_values("NonZero", y, (const double[]){0, 1, 1, 1, 0, 2}, 6, 0);
  om_tensor_release(y);
  pb nzx = node("NonZero", "x", NULL, "y");
  double nzw[2 * 12];
  int nnz = 0;
  for (int e = 0; e < 12; e++) nnz += v[e] != 0;
  for (int e = 0, k = 0; e < 12; e++)
    if (v[e] != 0) nzw[k] = e / 4, nzw[nnz + k] = e % 4, k++;
  y = run_node(&nzx, NULL, 0, x);
  check_values("NonZero of an input", y, nzw, 2 * nnz, 0);
  om_tensor_release(y);
  /* ReverseSequence over time (axis 0) of x [3, 4] as 4 sequences of 3, lengths 3, 1, 2, 0 */
  int64_t lens[4] = {3, 1, 2, 0};
  pb rs = node("ReverseSequence", "x", "l", "y"), rl = raw_init("l", 7, 1, (const int64_t[]){4}, lens, sizeof lens);
  y = run_node(&rs, &rl, 1, x);
  check_values("ReverseSequence", y, (const double[]){8, 1, 6, 3, 4, 5, 2, 7, 0, 9, 10, 11}, 12, 0);
  om_tensor_release(y);
  /* CenterCropPad to [5, 2]: a row of zeros above and below, the middle two columns */
  pb cc = node("CenterCropPad", "x", "s", "y"), cs = ints_init("s", 2, (const int64_t[]){5, 2});
  y = run_node_at(18, &cc, &cs, 1, x);
  check_values("CenterCropPad", y, (const double[]){0, 0, 1, 2, 5, 6, 9, 10, 0, 0}, 10, 0);
  om_tensor_release(y);
  /* NegativeLogLikelihoodLoss, mean: the target -100 ignored */
  int64_t t[3] = {1, 3, -100};
  pb nl = node("NegativeLogLikelihoodLoss", "x", "t", "y"), nt = raw_init("t", 7, 1, (const int64_t[]){3}, t, sizeof t);
  attr_int(&nl, "ignore_index", -100);
  y = run_node(&nl, &nt, 1, x);
  check_values("NegativeLogLikelihoodLoss", y, (const double[]){-(1 + 7) / 2.0}, 1, 1e-7);
  om_tensor_release(y);
  om_tensor_release(x);
  /* GridSample of [[1, 2], [3, 4]] with align_corners: the corners, the centre, outside (zeros: 0;
   * border: the nearest edge) */
  float grid[8] = {-1, -1, 1, 1, 0, 0, 3, 0};
  om_tensor *img = TF(SHAPE(1, 1, 2, 2), 1, 2, 3, 4);
  pb gi = raw_init("g", 1, 4, (const int64_t[]){1, 1, 4, 2}, grid, sizeof grid);
  for (int border = 0; border < 2; border++) {
    pb gs = node("GridSample", "x", "g", "y");
    attr_int(&gs, "align_corners", 1);
    if (border) attr_str(&gs, "padding_mode", "border");
    y = run_node(&gs, &gi, 1, img);
    check_values(border ? "GridSample, border" : "GridSample, zeros", y, (const double[]){1, 4, 2.5, border ? 3 : 0}, 4, 1e-7);
    om_tensor_release(y);
  }
  om_tensor_release(img);
  /* RoiAlign of [[1, 2], [3, 4]] over the roi (0, 0)-(1, 1), one sample: the middle, 2.5 */
  om_tensor *img4 = TF(SHAPE(1, 1, 2, 2), 1, 2, 3, 4);
  float roi[4] = {0, 0, 1, 1};
  int64_t zero_index = 0;
  pb ra = node("RoiAlign", "x", "r", "y"), rinit[2] = {raw_init("r", 1, 2, (const int64_t[]){1, 4}, roi, sizeof roi), raw_init("b", 7, 1, (const int64_t[]){1}, &zero_index, 8)};
  pb_str(&ra, 1, "b");
  attr_int(&ra, "sampling_ratio", 1);
  attr_str(&ra, "coordinate_transformation_mode", "output_half_pixel");
  y = run_node(&ra, rinit, 2, img4);
  check_values("RoiAlign", y, (const double[]){2.5}, 1, 1e-7);
  om_tensor_release(y);
  om_tensor_release(img4);
  /* MaxUnpool of [5, 6] by 2 with stride 2: each value at its index of [1, 1, 2, 4], an index
   * given twice keeping its value */
  int64_t at2[2] = {1, 6}, twice[2] = {3, 3};
  om_tensor *pooled = TF(SHAPE(1, 1, 1, 2), 5, 6);
  pb mu = node("MaxUnpool", "x", "i", "y"), mi = raw_init("i", 7, 4, (const int64_t[]){1, 1, 1, 2}, at2, sizeof at2);
  pb mt = raw_init("i", 7, 4, (const int64_t[]){1, 1, 1, 2}, twice, sizeof twice);
  attr_ints(&mu, "kernel_shape", 2, (const int64_t[]){2, 2});
  attr_ints(&mu, "strides", 2, (const int64_t[]){2, 2});
  y = run_node(&mu, &mi, 1, pooled);
  check_values("MaxUnpool", y, (const double[]){0, 5, 0, 0, 0, 0, 6, 0}, 8, 0);
  om_tensor_release(y);
  om_tensor_release(pooled);
  pooled = TF(SHAPE(1, 1, 1, 2), 7, 7);
  y = run_node(&mu, &mt, 1, pooled);
  check_values("MaxUnpool, an index twice", y, (const double[]){0, 0, 0, 7, 0, 0, 0, 0}, 8, 0);
  om_tensor_release(y);
  om_tensor_release(pooled);
  /* AffineGrid of the identity over [2, 2] with align_corners: the corners */
  pb ag = node("AffineGrid", "x", "s", "y"), as = ints_init("s", 4, (const int64_t[]){1, 1, 2, 2});
  attr_int(&ag, "align_corners", 1);
  om_tensor *theta = TF(SHAPE(1, 2, 3), 1, 0, 0, 0, 1, 0);
  y = run_node_at(20, &ag, &as, 1, theta);
  check_values("AffineGrid", y, (const double[]){-1, -1, 1, -1, -1, 1, 1, 1}, 8, 0);
  om_tensor_release(y);
  om_tensor_release(theta);
}

/* DFT of a delta and of a cosine; STFT's frames: sums and differences of pairs. */
TEST(fourier_transforms_against_references) {
  om_tensor *x = TF(SHAPE(2, 4, 1), 1, 0, 0, 0, 1, 0, -1, 0);
  pb nd = node("DFT", "x", NULL, "y");
  om_tensor *y = run_node(&nd, NULL, 0, x);
  check_values("DFT", y, (const double[]){1, 0, 1, 0, 1, 0, 1, 0, 0, 0, 2, 0, 0, 0, 2, 0}, 16, 1e-6);
  om_tensor_release(y);
  om_tensor_release(x);
  pb st = node("STFT", "x", "s", "y"), init[2] = {ints_init("s", 1, (const int64_t[]){2}), ints_init("l", 1, (const int64_t[]){2})};
  pb_str(&st, 1, ""), pb_str(&st, 1, "l"); /* no window, frame_length 2 */
  x = TF(SHAPE(1, 5, 1), 1, 2, 3, 4, 5);
  y = run_node(&st, init, 2, x);
  check_values("STFT", y, (const double[]){3, 0, -1, 0, 7, 0, -1, 0}, 8, 1e-6);
  om_tensor_release(y);
  om_tensor_release(x);
}

/* Conv, MaxPool and AveragePool over 3 spatial axes (x [1, 1, 3, 3, 3] = 0 .. 26, windows of 2
 * at stride 1: sums, maxima and means of each 2 x 2 x 2 block), Col2Im of ones (each pixel the
 * count of blocks that cover it) and Pad's wrap past the size, against the loops here. */
TEST(three_spatial_axes_and_col2im_against_references) {
  float v[27], ones[8] = {1, 1, 1, 1, 1, 1, 1, 1};
  for (int k = 0; k < 27; k++) v[k] = (float)k;
  om_tensor *x = tensor_f(v, (const int64_t[]){1, 1, 3, 3, 3}, 5), *y;
  double sum[8], max[8], mean[8];
  for (int o = 0; o < 8; o++) {
    int d = o / 4, h = o / 2 % 2, w = o % 2;
    sum[o] = 0, max[o] = -1;
    for (int k = 0; k < 8; k++) {
      double e = v[(d + k / 4) * 9 + (h + k / 2 % 2) * 3 + w + k % 2];
      sum[o] += e, max[o] = e > max[o] ? e : max[o];
    }
    mean[o] = sum[o] / 8;
  }
  pb cw = raw_init("w", 1, 5, (const int64_t[]){1, 1, 2, 2, 2}, ones, sizeof ones), conv = node("Conv", "x", "w", "y");
  y = run_node(&conv, &cw, 1, x);
  check_values("Conv 3-D", y, sum, 8, 1e-7);
  om_tensor_release(y);
  const char *pools[2] = {"MaxPool", "AveragePool"};
  for (int k = 0; k < 2; k++) {
    pb pool = node(pools[k], "x", NULL, "y");
    attr_ints(&pool, "kernel_shape", 3, (const int64_t[]){2, 2, 2});
    y = run_node(&pool, NULL, 0, x);
    check_values(pools[k], y, k ? mean : max, 8, 1e-7);
    om_tensor_release(y);
  }
  om_tensor_release(x);
  x = tensor_f((const float[]){1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, (const int64_t[]){1, 4, 4}, 3);
  pb ci = node("Col2Im", "x", "i", "y"), cinit[2] = {ints_init("i", 2, (const int64_t[]){3, 3}), ints_init("b", 2, (const int64_t[]){2, 2})};
  pb_str(&ci, 1, "b");
  y = run_node_at(18, &ci, cinit, 2, x);
  check_values("Col2Im", y, (const double[]){1, 2, 1, 2, 4, 2, 1, 2, 1}, 9, 0);
  om_tensor_release(y);
  om_tensor_release(x);
  /* Pad wrap of [0, 1, 2] by 4 before and -1 after: positions -4 .. 1 modulo 3 */
  x = TF(SHAPE(3), 0, 1, 2);
  pb wp = node("Pad", "x", "p", "y"), wpi = ints_init("p", 2, (const int64_t[]){4, -1});
  attr_str(&wp, "mode", "wrap");
  y = run_node(&wp, &wpi, 1, x);
  check_values("Pad wrap", y, (const double[]){2, 0, 1, 2, 0, 1}, 6, 0);
  om_tensor_release(y);
  om_tensor_release(x);
}

/* X [C, H, W]'s channel c at (y, x), bilinearly: each of the four pixels around it that is inside. */
static double bilinear_at(const float *X, int H, int W, int c, double y, double x) {
  double y0 = floor(y), x0 = floor(x), sum = 0;
  for (int k = 0; k < 4; k++) {
    double yy = y0 + (k >> 1), xx = x0 + (k & 1), w = (1 - fabs(y - yy)) * (1 - fabs(x - xx));
    if (yy >= 0 && yy < H && xx >= 0 && xx < W) sum += w * X[(c * H + (int)yy) * W + (int)xx];
  }
  return sum;
}

/* DeformConv (two offset groups, pads, a mask and a bias) against its definition run here, and a
 * shape that does not fit refused. */
TEST(deform_conv_against_a_reference) {
  enum { C = 2, H = 4, W = 5, M = 3, KH = 2, KW = 2, G = 2, OH = 5, OW = 4, K = KH * KW };
  float x[C * H * W], w[M * C * K], off[G * K * 2 * OH * OW], mask[G * K * OH * OW], bias[M] = {0.5f, -1, 0.25f};
  for (int k = 0; k < C * H * W; k++) x[k] = 0.1f * (float)((k * 7) % 13) - 0.6f;
  for (int k = 0; k < M * C * K; k++) w[k] = 0.2f * (float)((k * 5) % 7) - 0.5f;
  for (int k = 0; k < G * K * 2 * OH * OW; k++) off[k] = 0.37f * (float)((k * 11) % 17) - 3.1f; /* some past the edges */
  for (int k = 0; k < G * K * OH * OW; k++) mask[k] = 0.1f * (float)((k * 3) % 11);
  double want[M * OH * OW];
  for (int m = 0; m < M; m++)
    for (int l = 0; l < OH * OW; l++) {
      double sum = bias[m];
      for (int c = 0; c < C; c++)
        for (int k = 0; k < K; k++) {
          int g = c / (C / G), at = ((g * K + k) * 2) * OH * OW + l;
          double y = l / OW - 1 + k / KW + off[at], xx = l % OW + k % KW + off[at + OH * OW]; /* pads 1 above and below */
          sum += w[(m * C + c) * K + k] * mask[(g * K + k) * OH * OW + l] * bilinear_at(x, H, W, c, y, xx);
        }
      want[m * OH * OW + l] = sum;
    }
  pb nd = node("DeformConv", "x", "w", "y"), inits[4] = {
      raw_init("w", 1, 4, (const int64_t[]){M, C, KH, KW}, w, sizeof w), raw_init("o", 1, 4, (const int64_t[]){1, G * K * 2, OH, OW}, off, sizeof off),
      raw_init("b", 1, 1, (const int64_t[]){M}, bias, sizeof bias), raw_init("m", 1, 4, (const int64_t[]){1, G * K, OH, OW}, mask, sizeof mask)};
  pb_str(&nd, 1, "o"), pb_str(&nd, 1, "b"), pb_str(&nd, 1, "m");
  attr_ints(&nd, "pads", 4, (const int64_t[]){1, 0, 1, 0});
  attr_int(&nd, "offset_group", G);
  om_tensor *t = tensor_f(x, (const int64_t[]){1, C, H, W}, 4), *y = run_node_at(19, &nd, inits, 4, t);
  check_values("DeformConv", y, want, M * OH * OW, 1e-5);
  om_tensor_release(y);
  attr_int(&nd, "group", 3); /* C 2 is not W's 2 x 3: x's sizes all fixed, refused when the session is made */
  CHECK_ERROR((y = run_node_at(19, &nd, inits, 4, t)) != NULL, OM_ERR_FORMAT,
              "the graph is invalid at the input shapes it declares (ShapeMismatch): DeformConv (DeformConv): X's 2 channels, W's [3, 2, ...], group 3 and offset_group 2 do not fit");
  om_tensor_release(t);
}

/* TfIdfVectorizer's counts of a pool's unigrams and bigrams worked out here, and a pool that
 * repeats an n-gram refused (the input a constant: the rule runs when the plan is made). */
TEST(tfidf_vectorizer_counts_the_pool) {
  pb nd = node("TfIdfVectorizer", "c", NULL, "y"), c = ints_init("c", 12, (const int64_t[]){1, 1, 3, 3, 3, 7, 8, 6, 7, 5, 6, 8});
  attr_ints(&nd, "pool_int64s", 10, (const int64_t[]){2, 3, 5, 4, 5, 6, 7, 8, 6, 7});
  attr_ints(&nd, "ngram_counts", 2, (const int64_t[]){0, 4});
  attr_ints(&nd, "ngram_indexes", 7, (const int64_t[]){0, 1, 2, 3, 4, 5, 6});
  attr_int(&nd, "min_gram_length", 1), attr_int(&nd, "max_gram_length", 2), attr_int(&nd, "max_skip_count", 0), attr_str(&nd, "mode", "TF");
  om_tensor *x = TF(SHAPE(1), 0), *y = run_node(&nd, &c, 1, x);
  check_values("TfIdfVectorizer", y, (const double[]){0, 3, 1, 0, 1, 1, 1}, 7, 0); /* 3 three times; (7 8), (6 7), (5 6) once each */
  om_tensor_release(y);
  pb again = node("TfIdfVectorizer", "c", NULL, "y");
  attr_ints(&again, "pool_int64s", 6, (const int64_t[]){5, 6, 7, 8, 5, 6});
  attr_ints(&again, "ngram_counts", 2, (const int64_t[]){0, 0});
  attr_ints(&again, "ngram_indexes", 3, (const int64_t[]){0, 1, 2});
  attr_int(&again, "min_gram_length", 2), attr_int(&again, "max_gram_length", 2), attr_int(&again, "max_skip_count", 0), attr_str(&again, "mode", "TF");
  CHECK_ERROR((y = run_node(&again, &c, 1, x)) != NULL, OM_ERR_FORMAT, "(TfIdfVectorizer): pool n-gram 2 of 2 items repeats an earlier one");
  om_tensor_release(x);
}

/* RNN, bidirectional, against the recurrence h = tanh(W x + R h + Wb + Rb) run here. */
TEST(rnn_against_a_reference) {
  enum { T = 4, B = 2, I = 3, H = 2, D = 2 };
  float xv[T * B * I], w[D * H * I], r[D * H * H], bias[D * 2 * H];
  for (int k = 0; k < T * B * I; k++) xv[k] = 0.1f * (float)((k * 5) % 11) - 0.5f;
  for (int k = 0; k < D * H * I; k++) w[k] = 0.07f * (float)((k * 3) % 13) - 0.4f;
  for (int k = 0; k < D * H * H; k++) r[k] = 0.09f * (float)((k * 7) % 9) - 0.3f;
  for (int k = 0; k < D * 2 * H; k++) bias[k] = 0.05f * (float)k - 0.2f;
  double want[T * D * B * H];
  for (int d = 0; d < D; d++)
    for (int b = 0; b < B; b++) {
      double h[H] = {0, 0};
      for (int s = 0; s < T; s++) {
        int t = d ? T - 1 - s : s;
        double next[H];
        for (int j = 0; j < H; j++) {
          double a = bias[d * 2 * H + j] + bias[d * 2 * H + H + j];
          for (int i = 0; i < I; i++) a += w[(d * H + j) * I + i] * xv[(t * B + b) * I + i];
          for (int i = 0; i < H; i++) a += r[(d * H + j) * H + i] * h[i];
          next[j] = tanh(a);
        }
        for (int j = 0; j < H; j++) h[j] = next[j], want[((t * D + d) * B + b) * H + j] = next[j];
      }
    }
  pb inits[3] = {raw_init("w", 1, 3, (const int64_t[]){D, H, I}, w, sizeof w), raw_init("r", 1, 3, (const int64_t[]){D, H, H}, r, sizeof r),
                 raw_init("b", 1, 2, (const int64_t[]){D, 2 * H}, bias, sizeof bias)};
  pb nd = node("RNN", "x", "w", "y");
  pb_str(&nd, 1, "r"), pb_str(&nd, 1, "b"); /* inputs 2 and 3: repeated fields keep their order wherever they stand */
  attr_int(&nd, "hidden_size", H);
  attr_str(&nd, "direction", "bidirectional");
  om_tensor *x = om_from_data(xv, (const int64_t[]){T, B, I}, 3, OM_FLOAT32), *y = run_node(&nd, inits, 3, x);
  check_values("RNN", y, want, T * D * B * H, 1e-6);
  om_tensor_release(y);
  om_tensor_release(x);
}

/* ---- the rows of TopK, OneHot, DepthToSpace, SpaceToDepth, against ONNX's definitions ---- */

/* A node of up to three inputs (NULL: none) and one or two outputs, attributes added by the caller. */
static pb node_n(const char *op, const char *const in[3], const char *out0, const char *out1) {
  pb n = {0};
  for (int k = 0; k < 3; k++)
    if (in[k]) pb_str(&n, 1, in[k]);
  pb_str(&n, 2, out0);
  if (out1) pb_str(&n, 2, out1);
  pb_str(&n, 3, op), pb_str(&n, 4, op);
  return n;
}

/* Runs graph m on x, n_out outputs into out; false with the error set. */
static bool run_graph(const pb *m, om_tensor *x, om_tensor **out, int n_out) {
  om_session *s = om_session_open(m->b, m->n, NULL);
  bool ok = s && om_session_run(s, &x, 1, out, n_out) == n_out;
  om_session_release(s);
  return ok;
}

/* DepthToSpace (DCR, CRD) and SpaceToDepth on a [2, 8, 2, 3] input, element by element from
 * the ONNX spec's reshape-transpose-reshape: DCR reads channel (i b + j) C' + c, CRD c b^2 + i b + j. */
TEST(depth_to_space_and_space_to_depth) {
  const int64_t N = 2, C = 8, H = 2, W = 3, b = 2, Cq = C / (b * b);
  om_tensor *x = om_arange(0, (double)(N * C * H * W), 1, OM_FLOAT32), *x4 = om_reshape(x, (int64_t[]){N, C, H, W}, 4);
  for (int mode = 0; mode < 3; mode++) { /* DCR, CRD, SpaceToDepth (of a [2, 2, 4, 6] input) */
    const char *op = mode < 2 ? "DepthToSpace" : "SpaceToDepth";
    pb nodes[1] = {node_n(op, (const char *[]){"x", NULL, NULL}, "y", NULL)};
    attr_int(&nodes[0], "blocksize", b);
    if (mode < 2) attr_str(&nodes[0], "mode", mode ? "CRD" : "DCR");
    int64_t dims[4] = {N, mode < 2 ? C : Cq, mode < 2 ? H : H * b, mode < 2 ? W : W * b};
    pb m = model_of(nodes, 1, NULL, 0, dims, 4, NULL, 0);
    om_tensor *in = om_reshape(x, dims, 4), *y = NULL;
    CHECK(run_graph(&m, in, &y, 1));
    for (int64_t n = 0; y && n < N; n++)
      for (int64_t c = 0; c < Cq; c++)
        for (int64_t h = 0; h < H; h++)
          for (int64_t w = 0; w < W; w++)
            for (int64_t i = 0; i < b; i++)
              for (int64_t j = 0; j < b; j++) {
                int64_t deep = mode == 1 ? c * b * b + i * b + j : (i * b + j) * Cq + c;   /* the channel of the depth side */
                int64_t d_at = ((n * C + deep) * H + h) * W + w;                             /* [N, C, H, W] */
                int64_t s_at = ((n * Cq + c) * H * b + h * b + i) * W * b + w * b + j;       /* [N, C', H b, W b] */
                double got = at(y, mode < 2 ? s_at : d_at), want = at(in, mode < 2 ? d_at : s_at);
                if (got != want) FAILED("%s mode %d: [%lld %lld %lld %lld %lld %lld]: %g, expected %g", op, mode, (long long)n,
                                        (long long)c, (long long)h, (long long)w, (long long)i, (long long)j, got, want);
              }
    om__release_all((om_tensor *[]){in, y}, 2);
  }
  pb bad[1] = {node_n("DepthToSpace", (const char *[]){"x", NULL, NULL}, "y", NULL)};
  attr_int(&bad[0], "blocksize", 3);
  pb m = model_of(bad, 1, NULL, 0, (int64_t[]){N, C, H, W}, 4, NULL, 0);
  om_tensor *y = NULL;
  CHECK_ERROR(run_graph(&m, x4, &y, 1), OM_ERR_FORMAT, /* every size fixed: refused when the session is made */
              "the graph is invalid at the input shapes it declares (ShapeMismatch): DepthToSpace (DepthToSpace): blocksize 3 does not fit the input [2,8,2,3] (channels by blocksize^2)");
  pb odd[1] = {node_n("DepthToSpace", (const char *[]){"x", NULL, NULL}, "y", NULL)};
  attr_int(&odd[0], "blocksize", 2), attr_str(&odd[0], "mode", "XYZ");
  pb m2 = model_of(odd, 1, NULL, 0, (int64_t[]){N, C, H, W}, 4, NULL, 0);
  CHECK_ERROR(run_graph(&m2, x4, &y, 1), OM_ERR_FORMAT, "session: node 'DepthToSpace' (DepthToSpace): attribute mode is 'XYZ', which ONNX does not define (DCR|CRD)");
  om__release_all((om_tensor *[]){x, x4}, 2);
}

/* OneHot: float indices cast, a negative one counted from depth, one out of range all off; axis 0. */
TEST(one_hot_counts_negative_indices_from_depth) {
  pb inits[2] = {ints_init("depth", 1, (int64_t[]){3}), ints_init("values", 2, (int64_t[]){-1, 7})};
  for (int axis = -1; axis <= 0; axis++) {
    pb nodes[1] = {node_n("OneHot", (const char *[]){"x", "depth", "values"}, "y", NULL)};
    if (axis == 0) attr_int(&nodes[0], "axis", 0);
    pb m = model_of(nodes, 1, inits, 2, (int64_t[]){4}, 1, NULL, 0);
    om_tensor *x = TF(SHAPE(4), 1, -1, 5, 2), *y = NULL;
    CHECK(run_graph(&m, x, &y, 1));
    const int64_t want[4][3] = {{-1, 7, -1}, {-1, -1, 7}, {-1, -1, -1}, {-1, -1, 7}};
    CHECK(y && om_tensor_dtype(y) == OM_INT64 && om_tensor_shape(y)[axis ? 0 : 1] == 4);
    for (int i = 0; y && i < 4; i++)
      for (int c = 0; c < 3; c++) CHECK_EQ_INT(at(y, axis ? i * 3 + c : c * 4 + i), want[i][c]);
    om__release_all((om_tensor *[]){x, y}, 2);
  }
}

/* TopK: largest 0 along a negative axis with ties (index order), K from an initializer; a K
 * computed from the input's values when the graph runs (the session plans per value). */
TEST(top_k_takes_its_attributes) {
  pb inits[1] = {ints_init("k", 1, (int64_t[]){2})};
  om_tensor *x = TF(SHAPE(3, 2), 4, 1, 2, 1, 2, 0), *out[2] = {0};
  for (int j = 0; j < 2; j++) { /* the graph's output y: the values, then the indices */
    pb nodes[1] = {node_n("TopK", (const char *[]){"x", "k", NULL}, j ? "v" : "y", j ? "y" : "i")};
    attr_int(&nodes[0], "axis", -2), attr_int(&nodes[0], "largest", 0), attr_int(&nodes[0], "sorted", 0);
    pb m = model_of(nodes, 1, inits, 1, (int64_t[]){3, 2}, 2, NULL, 0);
    CHECK(run_graph(&m, x, &out[j], 1));
  }
  const double v[4] = {2, 0, 2, 1}, idx[4] = {1, 2, 2, 0}; /* column 0: 2 at 1 and 2 (index order); column 1: 0, then 1 at 0 before 1 */
  for (int k = 0; out[1] && k < 4; k++) CHECK(at(out[0], k) == v[k] && at(out[1], k) == idx[k]);
  om__release_all(out, 2);
  pb dep[2] = {node_n("ArgMax", (const char *[]){"x", NULL, NULL}, "k", NULL), node_n("TopK", (const char *[]){"x", "k", NULL}, "y", "i")};
  attr_int(&dep[0], "axis", 1), attr_int(&dep[0], "keepdims", 0);
  pb m2 = model_of(dep, 2, NULL, 0, (int64_t[]){1, 2}, 2, NULL, 0);
  om_tensor *x2 = TF(SHAPE(1, 2), 1, 2);
  CHECK(run_graph(&m2, x2, out, 1)); /* K = argmax([1, 2]) = 1: the top 1 of [1, 2] */
  CHECK(out[0] && om_tensor_numel(out[0]) == 1 && at(out[0], 0) == 2);
  om__release_all((om_tensor *[]){x, x2, out[0]}, 3);
}

/* The rows without a kernel of their own, natively (and so under ASan and UBSan): NonMaxSuppression
 * (iou_threshold left out, 0: any overlap suppresses), Einsum's matmul, MaxPool's Indices. */
TEST(non_max_suppression_einsum_and_max_pool_indices) {
  const float sc[3] = {0.9f, 0.8f, 0.7f}, w[6] = {1, 2, 3, 4, 5, 6};
  pb inits[2] = {raw_init("s", 1, 3, (int64_t[]){1, 1, 3}, sc, sizeof sc), ints_init("m", 1, (int64_t[]){5})};
  pb nms[1] = {node_n("NonMaxSuppression", (const char *[]){"x", "s", "m"}, "y", NULL)};
  om_tensor *boxes = TF(SHAPE(1, 3, 4), 0, 0, 1, 1, 0, 0.5f, 1, 1.5f, 5, 5, 6, 6), *y = run_node(nms, inits, 2, boxes);
  CHECK(y && om_tensor_ndim(y) == 2 && om_tensor_shape(y)[0] == 2 && om_tensor_shape(y)[1] == 3); /* box 1 overlaps box 0 */
  const double kept[6] = {0, 0, 0, 0, 0, 2};
  for (int k = 0; y && k < 6; k++) CHECK(at(y, k) == kept[k]);
  pb winit[1] = {raw_init("w", 1, 2, (int64_t[]){3, 2}, w, sizeof w)};
  pb ein[1] = {node_n("Einsum", (const char *[]){"x", "w", NULL}, "y", NULL)};
  attr_str(&ein[0], "equation", "ij,jk->ik");
  om_tensor *x = TF(SHAPE(2, 3), 1, 0, -1, 2, 1, 0), *e = run_node(ein, winit, 1, x);
  const double prod[4] = {1 - 5, 2 - 6, 2 + 3, 4 + 4};
  for (int k = 0; e && k < 4; k++) CHECK(at(e, k) == prod[k]);
  CHECK(e != NULL);
  pb mp[1] = {node_n("MaxPool", (const char *[]){"x", NULL, NULL}, "v", "y")};
  attr_ints(&mp[0], "kernel_shape", 2, (int64_t[]){2, 2}), attr_ints(&mp[0], "pads", 4, (int64_t[]){1, 1, 1, 1}), attr_ints(&mp[0], "strides", 2, (int64_t[]){2, 2});
  om_tensor *img = TF(SHAPE(1, 1, 2, 3), 1, 7, 3, 9, 2, 8), *i = run_node(mp, NULL, 0, img);
  const double where[4] = {0, 1, 3, 5}; /* windows [1], [7, 3], [9], [2, 8] of rows padded by one */
  CHECK(i && om_tensor_numel(i) == 4);
  for (int k = 0; i && k < 4; k++) CHECK(at(i, k) == where[k]);
  om__release_all((om_tensor *[]){boxes, y, x, e, img, i}, 6);
}

TEST(the_op_table_is_sorted) {
  for (int i = 1; i < om__onnx_rule_count(); i++)
    if (strcmp(om__onnx_rule_at(i - 1)->op_type, om__onnx_rule_at(i)->op_type) >= 0)
      FAILED("%s before %s", om__onnx_rule_at(i - 1)->op_type, om__onnx_rule_at(i)->op_type);
  CHECK(om__onnx_rule("Conv") != NULL);
  CHECK(om__onnx_rule("MaxRoiPool") == NULL);
}

/* ---- element types: carriers and narrowing (src/runtime/elem_types.c, docs/graph-runtime.md) ---- */

static uint32_t fbits(float x) {
  uint32_t u;
  memcpy(&u, &x, 4);
  return u;
}

/* Every pair of neighbouring finite float16s: each one a float32 holds exactly, their midpoint
 * rounding to the even one and a float32 step either side of it to the nearer. */
TEST(float16_rounds_to_nearest_even) {
  int bad = 0;
  for (uint32_t h = 0; h < 0x7bff && bad < 5; h++) {
    float a = om__f16_to_f32((uint16_t)h), b = om__f16_to_f32((uint16_t)(h + 1)), mid = (a + b) / 2; /* exact: float32 has room */
    float na = om__round_f16(a), nm = om__round_f16(mid), lo = om__round_f16(nextafterf(mid, 0)), hi = om__round_f16(nextafterf(mid, INFINITY));
    float nneg = om__round_f16(-mid);
    if (fbits(na) != fbits(a) || nm != (h & 1 ? b : a) || lo != a || hi != b || nneg != -nm)
      bad++, fprintf(stderr, "  float16 %#x: %a -> %a, mid %a -> %a (%a, %a)\n", h, a, na, mid, nm, lo, hi);
  }
  CHECK_EQ_INT(bad, 0);
  CHECK(om__round_f16(65519.0f) == 65504.0f && isinf(om__round_f16(65520.0f)) && om__round_f16(-1e30f) == -INFINITY);
  CHECK(fbits(om__round_f16(-0.0f)) == fbits(-0.0f) && isnan(om__round_f16(NAN)) && om__round_f16(0x1p-25f) == 0 && om__round_f16(0x1.8p-24f) == 0x1p-23f);
  CHECK(om__f16_to_f32(0x7c00) == INFINITY && isnan(om__f16_to_f32(0x7e00)) && om__f16_to_f32(0x0001) == 0x1p-24f && om__f16_to_f32(0xfbff) == -65504.0f);
  /* bfloat16: float32's top 16 bits, the dropped ones to nearest even */
  CHECK(om__round_bf16(1.0f + 0x1p-8f) == 1.0f && om__round_bf16(1.0f + 0x1.8p-7f) == 1.0f + 0x1p-6f && om__round_bf16(1.0f + 0x1.01p-8f) == 1.0f + 0x1p-7f);
  CHECK(isinf(om__round_bf16(3.4028235e38f)) && isnan(om__round_bf16(NAN)) && om__round_bf16(0x1p-130f) == 0x1p-130f && om__round_bf16(0x1p-140f) == 0);
}

TEST(integers_wrap_modulo_two_to_the_bits) {
  CHECK(om__wrap_int(127 + 1, 8, true) == -128 && om__wrap_int(-129, 8, true) == 127 && om__wrap_int(255 + 3, 8, false) == 2 && om__wrap_int(-1, 8, false) == 255);
  CHECK(om__wrap_int(INT64_MIN, 16, true) == 0 && om__wrap_int(65535, 16, true) == -1 && om__wrap_int((int64_t)1 << 31, 32, true) == INT32_MIN);
  CHECK(om__wrap_int(-1, 32, false) == UINT32_MAX && om__wrap_int(INT64_MAX, 32, false) == UINT32_MAX);
}

/* A one-node model: inputs a and b of ONNX type elem [n], output y (declared elem_y, 0: none). */
static pb typed_model(const char *op, int elem, int elem_y, const char *attr, int64_t attr_v) {
  pb n = node(op, "a", "b", "y"), g = {0}, m = {0}, opset = {0};
  if (attr) attr_int(&n, attr, attr_v);
  pb a = value_info_of("a", elem, 1, (const int64_t[]){-1}), b = value_info_of("b", elem, 1, (const int64_t[]){-1}), y = {0};
  if (elem_y) y = value_info_of("y", elem_y, 0, NULL);
  else pb_str(&y, 1, "y");
  pb_msg(&g, 1, &n), pb_str(&g, 2, "g"), pb_msg(&g, 11, &a), pb_msg(&g, 11, &b), pb_msg(&g, 12, &y);
  pb_int(&m, 1, 9), pb_int(&opset, 2, 20), pb_msg(&m, 8, &opset), pb_msg(&m, 7, &g);
  return m;
}

/* Runs m on a and b; y's values (as doubles) into want's room, its ONNX type returned (-1 failed). */
static int run_typed(const pb *m, om_tensor *a, om_tensor *b, double *got, int n) {
  om_session *s = om_session_open(m->b, m->n, NULL);
  om_tensor *y = NULL;
  int type = s && om_session_run(s, (om_tensor *[]){a, b}, 2, &y, 1) == 1 ? om_session_elem_type(s, true, 0) : -1;
  for (int k = 0; y && k < n; k++) got[k] = at(y, k);
  om_tensor_release(y);
  om_session_release(s);
  return type;
}

TEST(session_narrows_each_result_to_its_element_type) {
  om_tensor *a = om_from_data((int64_t[]){100, -128, 127, 5}, (int64_t[]){4}, 1, OM_INT64);
  om_tensor *b = om_from_data((int64_t[]){100, -1, 1, -7}, (int64_t[]){4}, 1, OM_INT64);
  double y[4];
  pb m = typed_model("Add", 3, 3, NULL, 0); /* INT8: wraps */
  CHECK_EQ_INT(run_typed(&m, a, b, y, 4), 3);
  CHECK(y[0] == -56 && y[1] == 127 && y[2] == -128 && y[3] == -2);
  m = typed_model("Mul", 2, 0, NULL, 0); /* UINT8 inputs (given out of range: narrowed first): 100 100, 128 255, 127 1, 5 249 */
  CHECK_EQ_INT(run_typed(&m, a, b, y, 4), 2);
  CHECK(y[0] == 16 && y[1] == 128 && y[2] == 127 && y[3] == (5 * 249) % 256);
  m = typed_model("Div", 6, 6, NULL, 0); /* INT32: truncating */
  CHECK_EQ_INT(run_typed(&m, a, b, y, 4), 6);
  CHECK(y[0] == 1 && y[1] == 128 && y[2] == 127 && y[3] == 0);
  m = typed_model("Less", 4, 0, NULL, 0); /* UINT16 compares as unsigned: -1 is 65535 */
  CHECK_EQ_INT(run_typed(&m, a, b, y, 4), 9);
  CHECK(y[0] == 0 && y[1] == 1 && y[2] == 0 && y[3] == 1);
  om__release_all((om_tensor *[]){a, b}, 2);
  /* FLOAT16: each float32 result rounded, overflow to infinity */
  a = TF(SHAPE(4), 1.0f, 60000.0f, 0x1p-14f, 3.0f), b = TF(SHAPE(4), 0x1p-11f, 10000.0f, 0x1p-25f, 0.1f);
  m = typed_model("Add", 10, 10, NULL, 0);
  CHECK_EQ_INT(run_typed(&m, a, b, y, 4), 10);
  CHECK(y[0] == 1.0 && y[1] == INFINITY && y[2] == 0x1p-14 && y[3] == (double)om__round_f16(3.1f));
  m = typed_model("Mul", 16, 0, NULL, 0); /* BFLOAT16 */
  CHECK_EQ_INT(run_typed(&m, a, b, y, 4), 16);
  CHECK(y[0] == 0x1p-11 && y[1] == (double)om__round_bf16(6e8f) && y[3] == (double)om__round_bf16(0.3f));
  om__release_all((om_tensor *[]){a, b}, 2);
}

/* UINT64, held as its bits in int64: op of a and b (UINT64 [n]; attr a string attribute, NULL for
 * none) into got's n values (as UINT64), the output's ONNX type returned (-1 failed). */
static int run_u64(const char *op, const char *attr, const char *attr_v, const uint64_t *a, const uint64_t *b, int64_t n, uint64_t *got) {
  pb nd = node(op, "a", "b", "y"), g = {0}, m = {0}, opset = {0}, y = {0};
  if (attr) attr_str(&nd, attr, attr_v);
  pb ia = value_info_of("a", 13, 1, (const int64_t[]){-1}), ib = value_info_of("b", 13, 1, (const int64_t[]){-1});
  pb_str(&y, 1, "y");
  pb_msg(&g, 1, &nd), pb_str(&g, 2, "g"), pb_msg(&g, 11, &ia), pb_msg(&g, 11, &ib), pb_msg(&g, 12, &y);
  pb_int(&m, 1, 9), pb_int(&opset, 2, 20), pb_msg(&m, 8, &opset), pb_msg(&m, 7, &g);
  om_tensor *ta = om_from_data(a, &n, 1, OM_INT64), *tb = om_from_data(b, &n, 1, OM_INT64), *r = NULL;
  om_session *s = om_session_open(m.b, m.n, NULL);
  int type = s && om_session_run(s, (om_tensor *[]){ta, tb}, 2, &r, 1) == 1 ? om_session_elem_type(s, true, 0) : -1;
  for (int64_t k = 0; r && k < n; k++) got[k] = r->dtype == OM_BOOL ? ((const uint8_t *)om__data(r))[k] : ((const uint64_t *)om__data(r))[k];
  om__release_all((om_tensor *[]){ta, tb, r}, 3);
  om_session_release(s);
  return type;
}

static uint64_t ref_u64(const char *op, uint64_t a, uint64_t b) {
  if (!strcmp(op, "Mod")) return a % b; /* b is never 0 here: Mod by 0 is refused (below) */
  if (!strcmp(op, "Max")) return a > b ? a : b;
  if (!strcmp(op, "Min")) return a < b ? a : b;
  if (!strcmp(op, "Less")) return a < b;
  if (!strcmp(op, "GreaterOrEqual")) return a >= b;
  if (!strcmp(op, "LEFT")) return b >= 64 ? 0 : a << b;
  return b >= 64 ? 0 : a >> b; /* RIGHT */
}

/* Every pair of UINT64 values below and past 2^63 through the rules that read them unsigned,
 * against C's unsigned arithmetic; casts to and from floats rounded once; an op that would read
 * them as signed refused. */
TEST(uint64_is_read_unsigned) {
  static const uint64_t v[] = {0, 1, 2, 3, 7, 63, 64, 65, 1000, UINT64_C(1) << 32, (UINT64_C(1) << 63) - 1, UINT64_C(1) << 63, (UINT64_C(1) << 63) + 7,
                               UINT64_C(12345678901234567890), UINT64_MAX - 1, UINT64_MAX};
  enum { N = sizeof v / sizeof *v, P = N * N };
  uint64_t a[P], b[P], b_mod[P], got[P];
  for (int k = 0; k < P; k++) a[k] = v[k / N], b[k] = v[k % N], b_mod[k] = b[k] ? b[k] : 1;
  static const char *const ops[] = {"Mod", "Max", "Min", "Less", "GreaterOrEqual", "LEFT", "RIGHT"};
  for (size_t o = 0; o < sizeof ops / sizeof *ops; o++) {
    bool shift = ops[o][0] >= 'A' && ops[o][1] >= 'A' && ops[o][1] <= 'Z';
    const uint64_t *bo = o == 0 ? b_mod : b; /* Mod's divisors without the 0 */
    int type = run_u64(shift ? "BitShift" : ops[o], shift ? "direction" : NULL, ops[o], a, bo, P, got);
    if (type < 0) FAILED("%s: %s", ops[o], om_last_error_message());
    CHECK_EQ_INT(type, ops[o][0] == 'L' && !shift ? 9 : ops[o][0] == 'G' ? 9 : 13);
    for (int k = 0; type > 0 && k < P; k++)
      if (got[k] != ref_u64(ops[o], a[k], bo[k]))
        FAILED("%s of %llu and %llu: %llu, expected %llu", ops[o], (unsigned long long)a[k], (unsigned long long)bo[k], (unsigned long long)got[k],
               (unsigned long long)ref_u64(ops[o], a[k], bo[k]));
  }
  /* an integer divisor of 0 has no value (as int64's Div and Mod): never a made-up 0 */
  CHECK_ERROR(run_u64("Mod", NULL, "Mod", a, b, P, got) >= 0, OM_ERR_INVALID_ARGUMENT, "integer division by zero");
  CHECK_ERROR(run_u64("ReduceMax", NULL, NULL, a, b, P, got) >= 0, OM_ERR_UNSUPPORTED, "ReduceMax (ReduceMax): input 0 is UINT64, which ReduceMax does not take");
  /* casts: 2^63 + 2^39 + 1 rounds up to 2^63 + 2^40 in float32 (through a double it would tie and round to even, down) */
  om_tensor *x = om_from_data((uint64_t[]){(UINT64_C(1) << 63) + (UINT64_C(1) << 39) + 1, UINT64_MAX, 3, (UINT64_C(1) << 63) + (UINT64_C(1) << 55) + 1},
                              (const int64_t[]){4}, 1, OM_INT64);
  om_tensor *f = om__cast_narrow(x, OM_FLOAT32, 0, true, true), *bf = om__cast_narrow(x, OM_FLOAT32, 16, true, true);
  om_tensor *d = om__cast_narrow(x, OM_FLOAT64, 0, true, true), *back = f ? om__cast_narrow(f, OM_INT64, 13, true, false) : NULL;
  CHECK(f && at(f, 0) == 0x1p63 + 0x1p40 && at(f, 1) == 0x1p64 && at(f, 2) == 3);
  CHECK(bf && at(bf, 0) == 0x1p63 && at(bf, 1) == 0x1p64 && at(bf, 3) == 0x1p63 + 0x1p56); /* 2^55 + 1: past half of bfloat16's step (2^56) */
  CHECK(d && at(d, 0) == 0x1p63 + 0x1p39 && at(d, 1) == 0x1p64); /* a double keeps 2^39, not the 1 */
  const uint64_t *u = back ? (const uint64_t *)om__data(back) : NULL; /* float32 to UINT64: saturated at 2^64 - 1 */
  CHECK(u && u[0] == (UINT64_C(1) << 63) + (UINT64_C(1) << 40) && u[1] == UINT64_MAX && u[2] == 3 && u[3] == (UINT64_C(1) << 63) + (UINT64_C(1) << 55));
  om__release_all((om_tensor *[]){x, f, bf, d, back}, 5);
}

/* Cast to each type: the dtype that holds it, then narrowed (float -> integer truncates). */
/* a (FLOAT [n]) through a one-node Cast to ONNX type `to` (its `saturate` left out when negative):
 * the output, a new reference (NULL on failure, checked), whose element type is checked to be `to`. */
static om_tensor *run_cast(om_tensor *a, int to, int saturate) {
  pb n = node("Cast", "a", NULL, "y"), g = {0}, m = {0}, opset = {0}, in = value_info_of("a", 1, 1, a->shape), out = {0};
  attr_int(&n, "to", to);
  if (saturate >= 0) attr_int(&n, "saturate", saturate);
  pb_str(&out, 1, "y");
  pb_msg(&g, 1, &n), pb_str(&g, 2, "g"), pb_msg(&g, 11, &in), pb_msg(&g, 12, &out);
  pb_int(&m, 1, 9), pb_int(&opset, 2, 20), pb_msg(&m, 8, &opset), pb_msg(&m, 7, &g);
  om_session *s = om_session_open(m.b, m.n, NULL);
  om_tensor *r = NULL;
  CHECK(s && om_session_run(s, &a, 1, &r, 1) == 1);
  CHECK_EQ_INT(om_session_elem_type(s, true, 0), to);
  om_session_release(s);
  return r;
}

TEST(cast_narrows_to_every_type) {
  om_tensor *a = TF(SHAPE(4), 300.7f, -1.5f, 65535.0f, 1e-8f), *b = TF(SHAPE(4), 0, 0, 0, 0);
  struct { int to; double want[4]; } cases[] = {
      {3, {44, -1, -1, 0}}, {2, {44, 255, 255, 0}}, {5, {300, -1, -1, 0}}, {4, {300, 65535, 65535, 0}}, {12, {300, 4294967295.0, 65535, 0}},
      {10, {300.75, -1.5, INFINITY, 0}}, {16, {300, -1.5, 65536, (double)om__round_bf16(1e-8f)}}, {9, {1, 1, 1, 1}}};
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    om_tensor *r = run_cast(a, cases[c].to, -1);
    for (int k = 0; r && k < 4; k++)
      if (at(r, k) != cases[c].want[k]) CHECK_NEAR(at(r, k), cases[c].want[k], 0);
    om_tensor_release(r);
  }
  CHECK_ERROR(om__cast_narrow(a, OM_FLOAT32, 3, true, false) != NULL, OM_ERR_INVALID_ARGUMENT, "cast: float32 does not hold ONNX element type 3");
  CHECK_ERROR(om_session_elem_type(NULL, true, 0) >= 0, OM_ERR_INVALID_ARGUMENT, "session_count: the session is NULL");
  om__release_all((om_tensor *[]){a, b}, 2);
}

/* DOUBLE values are held in float64 and computed in double: x + w (w an initializer in
 * double_data), and Cast to FLOAT16 rounded once from the double, where rounding through float32
 * would land on a tie and round the other way. Ops with no double kernel refuse float64. */
TEST(double_is_computed_in_double) {
  static const double v[4] = {1 + 0x1p-11 + 0x1p-40, 65520 - 0x1p-30, 0x1p-25 + 0x1p-60, 0.1}, point2 = 0.2;
  om_tensor *x = om_from_data(v, (const int64_t[]){4}, 1, OM_FLOAT64), *r[2] = {NULL, NULL};
  pb add = node("Add", "x", "w", "s"), cast = node("Cast", "x", NULL, "y"), w = {0}, g = {0}, m = {0}, opset = {0};
  pb in = value_info_of("x", 11, 1, (const int64_t[]){4}), so = {0}, yo = {0};
  attr_int(&cast, "to", 10);
  pb_int(&w, 2, 11), pb_str(&w, 8, "w"), pb_bytes(&w, 10, &point2, 8); /* a 0-d DOUBLE, packed double_data */
  pb_str(&so, 1, "s"), pb_str(&yo, 1, "y");
  pb_msg(&g, 1, &add), pb_msg(&g, 1, &cast), pb_str(&g, 2, "g"), pb_msg(&g, 5, &w), pb_msg(&g, 11, &in), pb_msg(&g, 12, &so), pb_msg(&g, 12, &yo);
  pb_int(&m, 1, 9), pb_int(&opset, 2, 20), pb_msg(&m, 8, &opset), pb_msg(&m, 7, &g);
  om_session *s = om_session_open(m.b, m.n, NULL);
  CHECK(s && om_session_run(s, &x, 1, r, 2) == 2);
  if (r[0] && r[1]) {
    CHECK_EQ_INT(om_tensor_dtype(r[0]), OM_FLOAT64);
    CHECK_EQ_INT(om_session_elem_type(s, true, 0), 11);
    CHECK_EQ_INT(om_session_elem_type(s, true, 1), 10);
    CHECK(at(r[0], 3) == 0.1 + 0.2); /* 0.30000000000000004: float32 would give 0.30000001192... */
    static const double want[4] = {1 + 0x1p-10, 65504, 0x1p-24, 0.0999755859375};
    for (int k = 0; k < 4; k++) CHECK_NEAR(at(r[1], k), want[k], 0);
  }
  om__release_all(r, 2);
  om_session_release(s);
  om_tensor *sq = om_from_data(v, (const int64_t[]){2, 2}, 2, OM_FLOAT64);
  CHECK_ERROR(om_matmul(sq, sq) != NULL, OM_ERR_DTYPE_MISMATCH, "matmul: takes no float64 (input 0; docs/graph-runtime.md lists the ops computed in double)");
  CHECK_ERROR(om_sin(sq) != NULL, OM_ERR_DTYPE_MISMATCH, "sin: takes float32, not float64");
  om__release_all((om_tensor *[]){x, sq}, 2);
}

/* Cast from float32 to each float8 type, saturating and not, against values worked out by hand
 * from the types' definitions: ties to even (464 between 448 and 480; 2^-10 between 0 and E4M3FN's
 * 2^-9), the largest finite values, subnormals, -0 (FNUZ has none), NaN and infinities (E5M2's
 * kept without saturation, the others' NaN; saturated, the largest value, FNUZ too, as ONNX's
 * reference data). Each result read back from its bits as a reader would. */
TEST(cast_to_float8_rounds_and_saturates) {
  static const float x[15] = {0, -0.0f, NAN, INFINITY, -INFINITY, 448, 464, 465, 1000, -1000, 0x1p-10f, 0x3p-10f, 1.0625f, 1.1875f, 62000};
  const float N = NAN, I = INFINITY;
  struct { int to; bool saturate; float want[15]; } cases[] = {
      {17, true, {0, -0.0f, N, 448, -448, 448, 448, 448, 448, -448, 0, 0x1p-8f, 1, 1.25f, 448}},
      {17, false, {0, -0.0f, N, N, N, 448, 448, N, N, N, 0, 0x1p-8f, 1, 1.25f, N}},
      {18, true, {0, 0, N, 240, -240, 240, 240, 240, 240, -240, 0x1p-10f, 0x3p-10f, 1, 1.25f, 240}},
      {18, false, {0, 0, N, N, N, N, N, N, N, N, 0x1p-10f, 0x3p-10f, 1, 1.25f, N}},
      {19, true, {0, -0.0f, N, 57344, -57344, 448, 448, 448, 1024, -1024, 0x1p-10f, 0x3p-10f, 1, 1.25f, 57344}},
      {19, false, {0, -0.0f, N, I, -I, 448, 448, 448, 1024, -1024, 0x1p-10f, 0x3p-10f, 1, 1.25f, I}},
      {20, true, {0, 0, N, 57344, -57344, 448, 448, 448, 1024, -1024, 0x1p-10f, 0x3p-10f, 1, 1.25f, 57344}},
      {20, false, {0, 0, N, N, N, 448, 448, 448, 1024, -1024, 0x1p-10f, 0x3p-10f, 1, 1.25f, N}},
  };
  om_tensor *a = om_from_data(x, (const int64_t[]){15}, 1, OM_FLOAT32);
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    om_tensor *r = run_cast(a, cases[c].to, cases[c].saturate);
    for (int k = 0; r && k < 15; k++) {
      float got = (float)at(r, k), want = cases[c].want[k];
      if (!(got == want && signbit(got) == signbit(want)) && !(got != got && want != want))
        FAILED("Cast to %d (saturate %d): element %d (%g) is %g, expected %g", cases[c].to, cases[c].saturate, k, (double)x[k], (double)got, (double)want);
    }
    for (int b = 0; b < 256; b++) { /* every bit pattern reads back as a value the rounding keeps (an infinity but saturating) */
      float v = om__f8_to_f32((uint8_t)b, cases[c].to), back = om__round_f8(v, cases[c].to, cases[c].saturate);
      if (!(isinf(v) && cases[c].saturate) && !(v == back && signbit(v) == signbit(back)) && !(v != v && back != back) && !(v == 0 && back == 0))
        FAILED("float8 type %d: bits 0x%02x are %g, which rounds to %g", cases[c].to, b, (double)v, (double)back);
    }
    om_tensor_release(r);
  }
  CHECK_NEAR(om__f8_to_f32(0x7e, 17), 448, 0);
  CHECK_NEAR(om__f8_to_f32(0x01, 17), 0x1p-9, 0);
  CHECK_NEAR(om__f8_to_f32(0x7f, 18), 240, 0);
  CHECK_NEAR(om__f8_to_f32(0x01, 20), 0x1p-17, 0);
  CHECK(isinf(om__f8_to_f32(0xfc, 19)) && om__f8_to_f32(0xfc, 19) < 0);
  CHECK(isnan(om__f8_to_f32(0x80, 18)) && isnan(om__f8_to_f32(0x7f, 17)) && isnan(om__f8_to_f32(0x7d, 19)));
  om_tensor_release(a);
}

/* Keys' cubic kernel (a = -0.75) at distance t, written from its definition. */
static double ref_keys(double t) {
  double a = -0.75, u = fabs(t);
  return u <= 1 ? (a + 2) * u * u * u - (a + 3) * u * u + 1 : u < 2 ? a * u * u * u - 5 * a * u * u + 8 * a * u - 4 * a : 0;
}

/* Resize by the taps (cubic with align_corners, 1-D: not the library's interpolate) and Compress
 * with its condition fed when the graph runs (a plan per value), against references. */
TEST(resize_by_taps_and_compress_by_value) {
  static const float v[5] = {1, -2, 0.5f, 4, 3};
  om_tensor *x = om_from_data(v, (const int64_t[]){5}, 1, OM_FLOAT32);
  pb nd = node("Resize", "x", "", "y"), z = ints_init("z", 1, (const int64_t[]){8});
  pb_str(&nd, 1, ""), pb_str(&nd, 1, "z");
  attr_str(&nd, "mode", "cubic"), attr_str(&nd, "coordinate_transformation_mode", "align_corners");
  double want[8];
  for (int o = 0; o < 8; o++) {
    double c = o * 4.0 / 7, sum = 0;
    for (int i = (int)floor(c) - 1; i <= (int)floor(c) + 2; i++) sum += ref_keys(c - i) * v[i < 0 ? 0 : i > 4 ? 4 : i];
    want[o] = sum;
  }
  om_tensor *y = run_node(&nd, &z, 1, x);
  check_values("Resize cubic", y, want, 8, 1e-5);
  om_tensor_release(y);

  pb c = node("Compress", "x", "c", "y"), cin = value_info_of("c", 9, 1, (const int64_t[]){5});
  pb m = model_of(&c, 1, NULL, 0, (const int64_t[]){5}, 1, &cin, 1);
  om_session *s = om_session_open(m.b, m.n, NULL);
  CHECK(s != NULL);
  static const bool conds[2][5] = {{1, 0, 0, 1, 1}, {0, 1, 0, 0, 0}};
  for (int k = 0; s && k < 2; k++) {
    om_tensor *in[2] = {x, om_from_data(conds[k], (const int64_t[]){5}, 1, OM_BOOL)}, *out = NULL;
    CHECK(om_session_run(s, in, 2, &out, 1) == 1);
    double want_c[5];
    int n = 0;
    for (int e = 0; e < 5; e++)
      if (conds[k][e]) want_c[n++] = v[e];
    check_values("Compress", out, want_c, n, 0);
    om_tensor_release(out);
    om_tensor_release(in[1]);
  }
  om_session_release(s);
  om_tensor_release(x);
}

static double ref_sigmoid(double t) { return 1 / (1 + exp(-t)); }

/* GRU with linear_before_reset 0 (ONNX's default; step by step) against ONNX's equations. */
TEST(gru_without_linear_before_reset_against_a_reference) {
  enum { T = 3, I = 2, H = 2 };
  float xv[T * I], w[3 * H * I], r[3 * H * H], bv[6 * H];
  for (int k = 0; k < T * I; k++) xv[k] = 0.3f * (float)((k * 5) % 7) - 0.9f;
  for (int k = 0; k < 3 * H * I; k++) w[k] = 0.1f * (float)((k * 3) % 11) - 0.5f;
  for (int k = 0; k < 3 * H * H; k++) r[k] = 0.08f * (float)((k * 7) % 13) - 0.45f;
  for (int k = 0; k < 6 * H; k++) bv[k] = 0.05f * (float)((k * 5) % 9) - 0.2f;
  pb inits[3] = {raw_init("w", 1, 3, (const int64_t[]){1, 3 * H, I}, w, sizeof w), raw_init("r", 1, 3, (const int64_t[]){1, 3 * H, H}, r, sizeof r),
                 raw_init("b", 1, 2, (const int64_t[]){1, 6 * H}, bv, sizeof bv)};
  pb nd = node("GRU", "x", "w", "y");
  pb_str(&nd, 1, "r"), pb_str(&nd, 1, "b");
  attr_int(&nd, "hidden_size", H);
  om_tensor *x = om_from_data(xv, (const int64_t[]){T, 1, I}, 3, OM_FLOAT32);
  double h[H] = {0}, want[T * H];
  for (int t = 0; t < T; t++) {
    double g[3][H]; /* x W^T + Wb per gate z, r, h */
    for (int q = 0; q < 3 * H; q++) {
      g[q / H][q % H] = bv[q];
      for (int i = 0; i < I; i++) g[q / H][q % H] += xv[t * I + i] * w[q * I + i];
    }
    double z[H], rg[H], ht[H];
    for (int j = 0; j < H; j++) {
      double az = g[0][j] + bv[3 * H + j], ar = g[1][j] + bv[4 * H + j];
      for (int i = 0; i < H; i++) az += h[i] * r[j * H + i], ar += h[i] * r[(H + j) * H + i];
      z[j] = ref_sigmoid(az), rg[j] = ref_sigmoid(ar);
    }
    for (int j = 0; j < H; j++) {
      double a = g[2][j] + bv[5 * H + j];
      for (int i = 0; i < H; i++) a += rg[i] * h[i] * r[(2 * H + j) * H + i];
      ht[j] = tanh(a);
    }
    for (int j = 0; j < H; j++) h[j] = (1 - z[j]) * ht[j] + z[j] * h[j], want[t * H + j] = h[j];
  }
  om_tensor *y = run_node(&nd, inits, 3, x);
  check_values("GRU", y, want, T * H, 1e-5);
  om_tensor_release(y);
  om_tensor_release(x);
}

/* Unique of an input (a plan per value): the sorted values, and the rows of a 2-D input by axis 0
 * in first-occurrence order (sorted 0). */
TEST(unique_plans_per_value) {
  om_tensor *x = TF(SHAPE(3, 2), 2, 1, 0, 5, 2, 1);
  pb nd = node("Unique", "x", NULL, "y");
  om_tensor *y = run_node(&nd, NULL, 0, x);
  check_values("Unique", y, (const double[]){0, 1, 2, 5}, 4, 0);
  om_tensor_release(y);
  pb rows = node("Unique", "x", NULL, "y");
  attr_int(&rows, "axis", 0), attr_int(&rows, "sorted", 0);
  y = run_node(&rows, NULL, 0, x);
  check_values("Unique rows", y, (const double[]){2, 1, 0, 5}, 4, 0);
  om_tensor_release(y);
  om_tensor_release(x);
}

/* Tensors of strings (the graph layer's STRING values): made from bytes that may hold NULs, read
 * back, shared by reference; bad shapes, NULL elements and indices out of range are errors. */
TEST(strings_hold_bytes_and_refuse_bad_input) {
  const char *s[] = {"a", "", "x\0y", "\xc3\xa9"};
  size_t len[] = {1, 0, 3, 2};
  int64_t shape[] = {2, 2}, got[OM_MAX_DIMS], big[] = {1 << 20, 1 << 20};
  om_strings *t = om_strings_new(2, shape, s, len);
  CHECK(t != NULL);
  CHECK_EQ_INT(om_strings_shape(t, got), 2);
  CHECK_EQ_INT(got[1], 2);
  CHECK_EQ_INT(om_strings_count(t), 4);
  size_t n = 0;
  const char *e = om_strings_at(t, 2, &n);
  CHECK(e && n == 3 && !memcmp(e, "x\0y", 4));
  CHECK(om_strings_retain(t) == t);
  om_strings_release(t);
  CHECK_EQ_INT(strlen(om_strings_at(t, 3, NULL)), 2);
  CHECK_ERROR(om_strings_at(t, 4, NULL) != NULL, OM_ERR_INDEX_OUT_OF_RANGE, "strings_at: element 4 of 4");
  om_strings_release(t);
  const char *holes[] = {"a", NULL};
  CHECK_ERROR(om_strings_new(1, shape, holes, NULL) != NULL, OM_ERR_INVALID_ARGUMENT, "strings_new: element 1 is NULL");
  int64_t negative = -1;
  CHECK_ERROR(om_strings_new(1, &negative, s, NULL) != NULL, OM_ERR_INVALID_ARGUMENT, "strings_new: size -1 at dim 0");
  CHECK_ERROR(om_strings_new(2, big, NULL, NULL) != NULL, OM_ERR_OUT_OF_MEMORY, "a tensor of strings holds at most 2147483648 elements");
  CHECK_ERROR(om_strings_count(NULL) >= 0, OM_ERR_INVALID_ARGUMENT, "strings_count: the tensor is NULL");
  t = om_strings_new(0, NULL, s, NULL); /* a scalar */
  CHECK(t && om_strings_count(t) == 1 && !strcmp(om_strings_at(t, 0, NULL), "a"));
  om_strings_release(t);
}

/* RegexFullMatch's matcher: ONNX's own patterns, the constructs of the subset, whole-string
 * matching, code points not bytes, a pattern that would backtrack exponentially run in step, and
 * the refusals naming the construct. */
TEST(regex_matches_whole_strings_in_linear_time) {
  static const struct {
    const char *pattern, *s;
    int want;
  } cases[] = {
      {"www\\.[\\w.-]+\\.\\bcom\\b", "www.google.com", 1}, {"www\\.[\\w.-]+\\.\\bcom\\b", "www.bbc.co.uk", 0},
      {"(\\W|^)[\\w.\\-]{0,25}@(yahoo|gmail)\\.com(\\W|$)", "account@gmail.com", 1},
      {"(\\W|^)[\\w.\\-]{0,25}@(yahoo|gmail)\\.com(\\W|$)", "account@hotmail.com", 0},
      {"a|b", "ab", 0}, {"(?:ab)*", "ababab", 1}, {"(?:ab)*", "aba", 0}, {"", "", 1}, {"x?", "", 1}, {"a{2,3}", "aaaa", 0},
      {"a{2,}", "aaaa", 1}, {"[^a-c]+", "xyz", 1}, {"[^a-c]+", "xbz", 0}, {".", "\xc3\xa9", 1}, {"..", "\xc3\xa9", 0},
      {"\\d+\\s\\D", "42 x", 1}, {"a\\Bb", "ab", 1}, {"a\\bb", "ab", 0}, {"(a*)*b", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaac", 0},
      {"a+?", "aaa", 1}, {"[.]", ".", 1}, {"\\$\\t", "$\t", 1},
  };
  for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
    om_regex *re = om__regex_compile(cases[k].pattern, "test");
    CHECK(re != NULL);
    if (re) CHECK_EQ_INT(om__regex_full_match(re, cases[k].s, strlen(cases[k].s)), cases[k].want);
    om__regex_free(re);
  }
  CHECK_ERROR(om__regex_compile("(?i)a", "r") != NULL, OM_ERR_UNSUPPORTED, "r: pattern construct a group with flags or a name ((?...) at offset 1");
  CHECK_ERROR(om__regex_compile("\\pL", "r") != NULL, OM_ERR_UNSUPPORTED, "an escape other than punctuation");
  CHECK_ERROR(om__regex_compile("a**", "r") != NULL, OM_ERR_UNSUPPORTED, "a quantifier after a quantifier");
  CHECK_ERROR(om__regex_compile("*", "r") != NULL, OM_ERR_UNSUPPORTED, "a quantifier with nothing before it");
  CHECK_ERROR(om__regex_compile("(a{1000}){1000}", "r") != NULL, OM_ERR_UNSUPPORTED, "more than 20000 instructions");
  CHECK_ERROR(om__regex_compile("a{2,1}", "r") != NULL, OM_ERR_UNSUPPORTED, "a counted repeat that is not");
  CHECK_ERROR(om__regex_compile("(a", "r") != NULL, OM_ERR_FORMAT, "r: a group is not closed");
  CHECK_ERROR(om__regex_compile("a)", "r") != NULL, OM_ERR_FORMAT, "r: an unmatched ')' at offset 1");
  CHECK_ERROR(om__regex_compile("[a", "r") != NULL, OM_ERR_FORMAT, "r: a class is not closed");
  CHECK_ERROR(om__regex_compile("[z-a]", "r") != NULL, OM_ERR_FORMAT, "r: a class range runs backwards");
  CHECK_ERROR(om__regex_compile("a\\", "r") != NULL, OM_ERR_FORMAT, "r: the pattern ends in a backslash");
}

int main(void) {
  RUN(every_op_runs_in_a_session);
  RUN(attention_q_scale_kinds_trace_and_run);
  RUN(symbolic_batch_plans_per_signature);
  RUN(session_keeps_the_weights_of_the_trace);
  RUN(inputs_that_do_not_fit);
  RUN(a_named_axis_binds_once);
  RUN(reader_takes_files_out_of_order);
  RUN(invalid_attributes_are_refused_at_create);
  RUN(declared_outputs_must_agree);
  RUN(op_table_attributes_mutated);
  RUN(reader_widens_int32_constants);
  RUN(reader_takes_a_graph_of_no_nodes);
  RUN(reader_refuses_what_it_cannot_read);
  RUN(rules_refuse_what_they_do_not_take);
  RUN(scatter_nd_refuses_what_onnx_does_not_define);
  RUN(div_truncates_int64);
  RUN(session_plans_by_value);
  RUN(rules_take_last_indices_and_negative_indices);
  RUN(a_long_chain_plans_in_linear_time);
  RUN(session_refuses_huge_plans_and_stays_usable);
  RUN(session_refuses_integer_division_by_zero);
  RUN(session_refuses_training_mode_dropout);
  RUN(an_output_listed_twice_is_one_output);
  RUN(invalid_graphs_are_format_errors);
  RUN(subgraphs_run_in_a_session);
  RUN(sequences_in_and_out);
  RUN(sequence_rows_run_and_refuse);
  RUN(reader_survives_mutated_files);
  RUN(format_round_trips_bit_for_bit);
  RUN(format_refuses_bad_aliases);
  RUN(sessions_keep_the_ranges_of_the_trace);
  RUN(format_refuses_what_it_cannot_read);
  RUN(exact_mode_gives_the_same_bits_everywhere);
  RUN(fast_mode_folds_batch_norm_into_conv);
  RUN(plan_gives_every_values_shape);
  RUN(fast_mode_fuses_attention);
  RUN(fast_mode_lays_out_the_attentions_copies);
  RUN(fast_mode_fuses_linear_and_gelu);
  RUN(fast_mode_fuses_layer_norm);
  RUN(fast_mode_fuses_rms_norm);
  RUN(more_elementwise_ops_against_references);
  RUN(more_reductions_against_references);
  RUN(more_indexing_and_sampling_ops_against_references);
  RUN(fourier_transforms_against_references);
  RUN(three_spatial_axes_and_col2im_against_references);
  RUN(deform_conv_against_a_reference);
  RUN(tfidf_vectorizer_counts_the_pool);
  RUN(rnn_against_a_reference);
  RUN(non_max_suppression_einsum_and_max_pool_indices);
  RUN(the_op_table_is_sorted);
  RUN(depth_to_space_and_space_to_depth);
  RUN(one_hot_counts_negative_indices_from_depth);
  RUN(top_k_takes_its_attributes);
  RUN(float16_rounds_to_nearest_even);
  RUN(integers_wrap_modulo_two_to_the_bits);
  RUN(session_narrows_each_result_to_its_element_type);
  RUN(uint64_is_read_unsigned);
  RUN(cast_narrows_to_every_type);
  RUN(double_is_computed_in_double);
  RUN(cast_to_float8_rounds_and_saturates);
  RUN(resize_by_taps_and_compress_by_value);
  RUN(gru_without_linear_before_reset_against_a_reference);
  RUN(unique_plans_per_value);
  RUN(strings_hold_bytes_and_refuse_bad_input);
  RUN(regex_matches_whole_strings_in_linear_time);
  TEST_MAIN_END();
}

