/* The tracer from C: recording, constants, naming, pruning, outputs, the streaming writer and
 * its bytes (golden, so native and WASM are held to the same file), copy on write, and every
 * trace error at its offending call. The JS tests (tests/js/trace*.test.mjs) run the traced
 * graphs through onnxruntime-web. */
#include <stdlib.h>

#include "internal.h"
#include "om_test.h"
#include "onnx/onnx.pb-c.h"

static bytes onnx_of(const om_traced_model *m) {
  bytes b = {0};
  if (!om_traced_write_onnx(m, to_bytes, &b)) FAILED("write: %s", om_last_error_message());
  return b;
}

static const char *fnv(const bytes *b, char out[17]) {
  uint64_t h = 0xcbf29ce484222325u;
  for (size_t k = 0; k < b->n; k++) h = (h ^ b->p[k]) * 0x100000001b3u;
  snprintf(out, 17, "%016llx", (unsigned long long)h);
  return out;
}

static int64_t S34[] = {3, 4}, S48[] = {4, 8}, S8[] = {8}, S82[] = {8, 2}, LAST[] = {-1};

/* The golden model (the JS test tests/js/trace.test.mjs traces the same one and pins the same
 * hash): an MLP with a softmax written by hand. */
static om_traced_model *trace_golden(void) {
  om_tensor *x0 = om_randn(S34, 2, 1, true), *w1 = om_randn(S48, 2, 2, true), *b1 = om_randn(S8, 1, 3, true);
  om_tensor *w2 = om_randn(S82, 2, 4, true);
  CHECK(om_trace_begin());
  om_tensor *x = om_trace_input("x", x0, NULL);
  CHECK(om_trace_parameter("fc1.weight", w1) && om_trace_parameter("fc1.bias", b1) && om_trace_parameter("fc2.weight", w2));
  om_tensor *xw = om_matmul(x, w1), *pre = om_add(xw, b1), *h = om_relu(pre), *y = om_matmul(h, w2);
  om_tensor *mx = om_amax(y, LAST, 1, true), *d = om_sub(y, mx), *e = om_exp(d), *s = om_sum(e, LAST, 1, true);
  om_tensor *p = om_div(e, s);
  om_traced_model *m = om_trace_finish(&p, (const char *[]){"probs"}, 1);
  CHECK(m && !om_trace_active());
  om_tensor *all[] = {x0, w1, b1, w2, x, xw, pre, h, y, mx, d, e, s, p};
  om__release_all(all, (int)(sizeof all / sizeof *all));
  return m;
}

TEST(golden_bytes_and_model_fields) {
  om_traced_model *m = trace_golden();
  if (!m) return;
  bytes b = onnx_of(m);
  char hex[17];
  CHECK_EQ_INT(b.n, om_traced_onnx_size(m));
  if (strcmp(fnv(&b, hex), "363730af99cbe4aa")) FAILED("golden model hash %s (pinned 363730af99cbe4aa)", hex);
  Onnx__ModelProto *mp = onnx__model_proto__unpack(NULL, b.n, b.p);
  CHECK(mp != NULL);
  if (mp) {
    CHECK_EQ_INT(mp->ir_version, 9);
    CHECK(mp->n_opset_import == 1 && !strcmp(mp->opset_import[0]->domain, "") && mp->opset_import[0]->version == 20);
    CHECK(!strcmp(mp->producer_name, "onemodel") && !strcmp(mp->producer_version, OM_VERSION));
    Onnx__GraphProto *g = mp->graph;
    CHECK(g->n_input == 1 && !strcmp(g->input[0]->name, "x") && g->n_output == 1 && !strcmp(g->output[0]->name, "probs"));
    CHECK_EQ_INT(g->input[0]->type->tensor_type->shape->dim[0]->dim_value, 3);
    CHECK_EQ_INT(g->n_initializer, 4); /* three weights, and the axes [1] both reductions share */
    CHECK(!strcmp(g->initializer[0]->name, "fc1.weight") && !strcmp(g->initializer[1]->name, "fc1.bias") &&
          !strcmp(g->initializer[2]->name, "fc2.weight"));
    CHECK_EQ_INT(g->initializer[0]->raw_data.len, 4 * 8 * 4);
    CHECK(!strcmp(g->node[g->n_node - 1]->output[0], "probs"));
    onnx__model_proto__free_unpacked(mp, NULL);
  }
  bytes again = onnx_of(m);
  CHECK(again.n == b.n && !memcmp(again.p, b.p, b.n)); /* the same model writes the same bytes */
  om_traced_model *m2 = trace_golden();                 /* and so does the same trace run again */
  bytes other = onnx_of(m2);
  CHECK(other.n == b.n && !memcmp(other.p, b.p, b.n));
  free(b.p);
  free(again.p);
  free(other.p);
  om_traced_release(m);
  om_traced_release(m2);
}

/* The second golden model (tests/js/trace.test.mjs pins the same hash): a symbolic batch, int64
 * and bool values, and an Identity output. */
static om_tensor *golden_w, *golden_t;
static int golden_model(void *ctx, om_tensor *const *in, int n, om_tensor **out, int max) {
  (void)ctx, (void)n, (void)max;
  om_tensor *h = om_matmul(in[0], golden_w), *clsf = NULL;
  out[1] = om_argmax(h, 1, false);
  clsf = om_cast(out[1], OM_FLOAT32);
  out[2] = om_gt(h, golden_t);
  out[0] = om_where(out[2], h, golden_t);
  om_tensor *ys = om_sum(out[0], (int64_t[]){1}, 1, false);
  out[3] = om_add(ys, clsf);
  out[4] = om_tensor_retain(in[0]);
  om_tensor *t[] = {h, clsf, ys};
  om__release_all(t, 3);
  return out[3] ? 5 : -1;
}

TEST(golden_bytes_symbolic_int_bool) {
  om_tensor *x0 = om_randn((int64_t[]){3, 5}, 2, 5, true);
  golden_w = om_randn((int64_t[]){5, 4}, 2, 6, true);
  golden_t = om_randn((int64_t[]){4}, 1, 7, true);
  CHECK(om_trace_begin());
  om_tensor *x = om_trace_input("x", x0, (const char *[]){"batch", NULL}), *outs[5];
  CHECK(om_trace_parameter("proj.weight", golden_w) && om_trace_parameter("proj.threshold", golden_t));
  CHECK(om_trace_run(golden_model, NULL, outs, 5) == 5);
  om_traced_model *m = om_trace_finish(outs, (const char *[]){"y", "cls", "mask", "score", "x_copy"}, 5);
  CHECK(m != NULL);
  if (m) {
    bytes b = onnx_of(m);
    char hex[17];
    if (strcmp(fnv(&b, hex), "96cc18d8de499eaa")) FAILED("golden model 2 hash %s (pinned 96cc18d8de499eaa)", hex);
    free(b.p);
  }
  om_traced_release(m);
  om_tensor *all[] = {x0, golden_w, golden_t, x, outs[0], outs[1], outs[2], outs[3], outs[4]};
  om__release_all(all, 9);
}

/* The third golden model (tests/js/graph-economy.test.mjs pins the same hash): two "layers" each
 * slicing its own causal-mask buffer (equal contents) to the sequence length and adding its
 * additive form; the buffers are stored once, the slices and the Where written once (merge.c),
 * and the Where computed on the whole buffer at finish, the graph slicing that. */
static om_tensor *golden_masks[2], *golden_fill[2];
static int masked_model(om_tensor *const *in, om_tensor **out) {
  int64_t t = in[0]->shape[1];
  om_tensor *acc = om_tensor_retain(in[0]);
  for (int k = 0; k < 2; k++) {
    om_tensor *rows = om_slice(golden_masks[k], 0, 0, t, 1), *s = om_slice(rows, 1, 0, t, 1);
    om_tensor *f = om_where(s, golden_fill[0], golden_fill[1]), *u = om_unsqueeze(acc, 1), *sum = om_add(u, f);
    om_tensor *next = om_sum(sum, (int64_t[]){1}, 1, false), *t5[] = {rows, s, f, u, sum, acc};
    om__release_all(t5, 6);
    acc = next;
  }
  out[0] = acc;
  return acc ? 1 : -1;
}

TEST(golden_bytes_merged_masks) {
  om_tensor *x0 = om_randn((int64_t[]){2, 5}, 2, 8, true);
  for (int k = 0; k < 2; k++) {
    om_tensor *ones = om_ones((int64_t[]){8, 8}, 2, OM_BOOL);
    golden_masks[k] = om_triu(ones, 1);
    om_tensor_release(ones);
  }
  golden_fill[0] = om_full(NULL, 0, OM_FLOAT32, -1e9);
  golden_fill[1] = om_full(NULL, 0, OM_FLOAT32, 0);
  CHECK(om_trace_begin());
  om_traced_model *m = om_test_trace(masked_model, x0, (const char *[]){"n", "t"}, 1);
  CHECK(m != NULL);
  /* each sum runs over t: in float64, as eager sums (om__lower_sum_in_double) */
  const char *ops[] = {"Shape", "Slice", "Slice", "Unsqueeze", "Add", "Cast", "ReduceSum", "Cast", "Unsqueeze", "Add", "Cast", "ReduceSum", "Cast"};
  CHECK_EQ_INT(om_traced_count(m, OM_TRACED_NODE), 13);
  for (int k = 0; m && k < 13 && k < om_traced_count(m, OM_TRACED_NODE); k++)
    if (strcmp(om_traced_name(m, OM_TRACED_NODE, k), ops[k])) FAILED("node %d is %s, expected %s", k, om_traced_name(m, OM_TRACED_NODE, k), ops[k]);
  om_dtype dt = OM_BOOL;
  for (int k = 0; m && k < om_traced_count(m, OM_TRACED_INITIALIZER); k++) {
    const int64_t *shape;
    int nd;
    if (om_traced_info(m, OM_TRACED_INITIALIZER, k, &dt, &nd, &shape, NULL) && nd == 2) break;
  }
  CHECK_EQ_INT(dt, OM_FLOAT32); /* the mask's additive form, not the bool buffer */
  if (m) {
    bytes b = onnx_of(m);
    char hex[17];
    if (strcmp(fnv(&b, hex), "242de410222046ed")) FAILED("golden model 3 hash %s (pinned 242de410222046ed)", hex);
    free(b.p);
  }
  om_traced_release(m);
  om_tensor *all[] = {x0, golden_masks[0], golden_masks[1], golden_fill[0], golden_fill[1]};
  om__release_all(all, 5);
}

TEST(weights_stream_from_their_storage) {
  int64_t big[] = {256, 256};
  om_tensor *x0 = om_randn((int64_t[]){2, 256}, 2, 1, true), *w = om_randn(big, 2, 2, true);
  CHECK(om_trace_begin());
  om_tensor *x = om_trace_input("x", x0, NULL), *y = om_matmul(x, w);
  CHECK(om_trace_parameter("w", w));
  om_traced_model *m = om_trace_finish(&y, (const char *[]){"y"}, 1);
  int64_t before = om_live_bytes();
  bytes b = onnx_of(m);
  CHECK_EQ_INT(om_live_bytes(), before); /* no tensor was copied to write it */
  bool direct = false;
  for (int k = 0; k < b.calls && k < 64; k++) direct |= b.seen[k] == (const void *)om__data(w);
  CHECK(direct); /* the weight went to the sink from its own storage */
  CHECK(b.calls < 10); /* small pieces are gathered into chunks */
  CHECK(!om_traced_write_onnx(m, NULL, NULL));
  free(b.p);
  om_traced_release(m);
  om_tensor *all[] = {x0, w, x, y};
  om__release_all(all, 4);
}

static bool refuse(void *ctx, const void *data, size_t n) {
  (void)ctx, (void)data, (void)n;
  return false;
}

/* A weight changed after finish does not change the model: it got a copy on the write. */
TEST(constants_keep_their_traced_values) {
  om_tensor *x0 = om_ones(S34, 2, OM_FLOAT32), *w = om_full((int64_t[]){4, 2}, 2, OM_FLOAT32, 0.5);
  CHECK(om_trace_begin());
  om_tensor *x = om_trace_input("x", x0, NULL), *y = om_matmul(x, w);
  om_traced_model *m = om_trace_finish(&y, (const char *[]){"y"}, 1);
  bytes before = onnx_of(m);
  int64_t live = om_live_bytes();
  CHECK(om_tensor_fill(w, 7.0));
  CHECK_EQ_INT(om_live_bytes(), live + 4 * 2 * 4); /* one copy, made by the write */
  CHECK(om_tensor_fill(w, 8.0));
  CHECK_EQ_INT(om_live_bytes(), live + 4 * 2 * 4); /* and only once */
  bytes after = onnx_of(m);
  CHECK(after.n == before.n && !memcmp(after.p, before.p, before.n));
  CHECK_ERROR(om_traced_write_onnx(m, refuse, NULL), OM_ERR_INVALID_ARGUMENT, "sink refused");
  free(before.p);
  free(after.p);
  om_traced_release(m);
  om_tensor *all[] = {x0, w, x, y};
  om__release_all(all, 4);
}

/* Names, the tied-weight rule, view names, pruning, Identity outputs and aliases. */
TEST(graph_shape_and_names) {
  om_tensor *x0 = om_randn(S34, 2, 1, true), *w = om_randn((int64_t[]){4, 4}, 2, 2, true);
  CHECK(om_trace_begin());
  om_tensor *x = om_trace_input("x", x0, NULL);
  CHECK(om_trace_parameter("w", w) && om_trace_parameter("tied", w)); /* the second name of one view: an alias */
  om_tensor *wt = om_transpose(w, 0, 1);         /* constant only: no node */
  om_tensor *a = om_matmul(x, w), *b = om_matmul(x, w), *c = om_matmul(x, wt);
  om_tensor *unused = om_exp(x);                 /* pruned */
  om_tensor *same = om_reshape(a, S34, 2), *cl = om_clone(b), *full = om_slice(c, 0, 0, 3, 1); /* aliases */
  om_tensor *det = om_detach(x);
  CHECK(det == x);
  om_tensor *outs[] = {same, cl, full, x, same};
  om_traced_model *m = om_trace_finish(outs, (const char *[]){"a", "b", "c", "x_out", "a_again"}, 5);
  CHECK(m != NULL);
  if (!m) return;
  CHECK_EQ_INT(om_traced_count(m, OM_TRACED_INITIALIZER), 2);
  CHECK(!strcmp(om_traced_name(m, OM_TRACED_INITIALIZER, 0), "w"));
  CHECK(!strcmp(om_traced_name(m, OM_TRACED_INITIALIZER, 1), "w.view_0"));
  const char *aliases[2] = {NULL, NULL};
  CHECK_EQ_INT(om_traced_aliases(m, 0, aliases, 2), 1);
  CHECK(aliases[0] && !strcmp(aliases[0], "tied"));
  CHECK_EQ_INT(om_traced_aliases(m, 1, aliases, 2), 0); /* a view's name is no state-dict name */
  CHECK_ERROR(om_traced_aliases(m, 2, aliases, 2) >= 0, OM_ERR_INVALID_ARGUMENT, "traced_aliases: no initializer 2");
  CHECK_EQ_INT(om_traced_count(m, OM_TRACED_NODE), 5); /* three MatMul, two Identity */
  int identities = 0;
  for (int k = 0; k < om_traced_count(m, OM_TRACED_NODE); k++) identities += !strcmp(om_traced_name(m, OM_TRACED_NODE, k), "Identity");
  CHECK_EQ_INT(identities, 2);
  const char *ins[4];
  CHECK_EQ_INT(om_traced_node_values(m, 0, false, ins, 4), 2);
  CHECK(!strcmp(ins[0], "x") && !strcmp(ins[1], "w"));
  for (int k = 0; k < 5; k++) CHECK(!strcmp(om_traced_name(m, OM_TRACED_OUTPUT, k), (const char *[]){"a", "b", "c", "x_out", "a_again"}[k]));
  CHECK(at(x, 0) == at(x0, 0)); /* reading after finish gives the example's values */
  om_traced_release(m);
  om_tensor *all[] = {x0, w, x, wt, a, b, c, unused, same, cl, full, det};
  om__release_all(all, 12);
}

/* A view is named after the parameter whose elements it reads, and a user's name is never
 * taken by a generated one. */
TEST(view_names) {
  om_tensor *ex = om_randn((int64_t[]){3, 2}, 2, 1, true), *flat = om_randn((int64_t[]){8}, 1, 2, true);
  om_tensor *s0 = om_slice(flat, 0, 0, 4, 1), *s1 = om_slice(flat, 0, 4, 8, 1);
  om_tensor *a = om_reshape(s0, (int64_t[]){2, 2}, 2), *b = om_reshape(s1, (int64_t[]){2, 2}, 2);
  om_tensor *bt = om_transpose(b, 0, 1), *at_ = om_transpose(a, 0, 1), *other = om_randn((int64_t[]){2, 2}, 2, 3, true);
  CHECK(om_trace_begin());
  om_tensor *x = om_trace_input("x", ex, NULL);
  CHECK(om_trace_parameter("a", a) && om_trace_parameter("b", b) && om_trace_parameter("a.view_0", other));
  om_tensor *y1 = om_matmul(x, bt), *y2 = om_matmul(y1, at_), *y3 = om_matmul(y2, other);
  om_traced_model *m = om_trace_finish(&y3, (const char *[]){"y"}, 1);
  CHECK(m && om_traced_count(m, OM_TRACED_INITIALIZER) == 3);
  const char *want[] = {"b.view_0", "a.view_0_1", "a.view_0"};
  for (int k = 0; m && k < 3; k++)
    if (strcmp(om_traced_name(m, OM_TRACED_INITIALIZER, k), want[k]))
      FAILED("initializer %d is %s, expected %s", k, om_traced_name(m, OM_TRACED_INITIALIZER, k), want[k]);
  om_traced_release(m);
  om_tensor *all[] = {ex, flat, s0, s1, a, b, bt, at_, other, x, y1, y2, y3};
  om__release_all(all, 13);
}

/* Equal contents in different storages are stored once, under the name of the one the run read
 * first, the others' names its aliases; a strided view with the same elements joins them; the
 * same bytes in another shape, and other values, stay apart. */
TEST(equal_contents_stored_once) {
  int64_t s44[] = {4, 4}, s16[] = {16};
  om_tensor *ex = om_randn(s44, 2, 1, true), *first = om_randn(s44, 2, 5, true), *second = om_randn(s44, 2, 5, true);
  om_tensor *other = om_randn(s44, 2, 6, true), *flat = om_randn(s16, 1, 5, true); /* flat: first's bytes, shape [16] */
  om_tensor *ft = om_transpose(first, 0, 1), *dense = om_contiguous(ft), *view = om_transpose(dense, 0, 1); /* first's elements, strided */
  CHECK(om_trace_begin());
  om_tensor *x = om_trace_input("x", ex, NULL);
  CHECK(om_trace_parameter("first", first) && om_trace_parameter("second", second) && om_trace_parameter("other", other));
  om_tensor *y1 = om_matmul(x, second), *y2 = om_matmul(y1, first), *y3 = om_matmul(y2, other), *y4 = om_matmul(y3, view);
  om_tensor *r = om_reshape(y4, s16, 1), *y = om_add(r, flat);
  om_traced_model *m = om_trace_finish(&y, (const char *[]){"y"}, 1);
  CHECK(m != NULL);
  if (!m) return;
  CHECK_EQ_INT(om_traced_count(m, OM_TRACED_NODE), 6); /* four MatMul, Reshape, Add */
  const char *want[] = {"second", "second", "other", "second"}, *ins[2];
  for (int k = 0; k < 4; k++) {
    CHECK(om_traced_node_values(m, k, false, ins, 2) == 2 && !strcmp(om_traced_name(m, OM_TRACED_NODE, k), "MatMul"));
    if (strcmp(ins[1], want[k])) FAILED("MatMul %d reads %s, expected %s", k, ins[1], want[k]);
  }
  int n_init = om_traced_count(m, OM_TRACED_INITIALIZER);
  CHECK_EQ_INT(n_init, 4); /* second, other, Reshape's shape, flat */
  for (int k = 0; k < n_init; k++) CHECK(strcmp(om_traced_name(m, OM_TRACED_INITIALIZER, k), "first"));
  const char *aliases[2] = {NULL, NULL}; /* first's name is kept as the alias of second, which holds its contents */
  CHECK(!strcmp(om_traced_name(m, OM_TRACED_INITIALIZER, 0), "second") && om_traced_aliases(m, 0, aliases, 2) == 1);
  CHECK(aliases[0] && !strcmp(aliases[0], "first"));
  for (int k = 1; k < n_init; k++) CHECK_EQ_INT(om_traced_aliases(m, k, NULL, 0), 0);
  bytes b = onnx_of(m);
  Onnx__ModelProto *mp = onnx__model_proto__unpack(NULL, b.n, b.p);
  CHECK(mp && mp->graph->n_initializer == 4);
  CHECK(mp && mp->n_metadata_props == 1 && !strcmp(mp->metadata_props[0]->key, "onemodel.alias.first") &&
        !strcmp(mp->metadata_props[0]->value, "second")); /* a standard entry: key the alias, value the initializer */
  size_t raw = 0;
  for (size_t k = 0; mp && k < mp->graph->n_initializer; k++) raw += mp->graph->initializer[k]->raw_data.len;
  CHECK(raw == 3 * 64 + 8); /* three [4, 4] / [16] floats and one int64 */
  if (mp) onnx__model_proto__free_unpacked(mp, NULL);
  free(b.p);
  om_traced_release(m);
  om_tensor *all[] = {ex, first, second, other, flat, ft, dense, view, x, y1, y2, y3, y4, r, y};
  om__release_all(all, 15);
}

/* ---- errors, each at its offending call; the recording ends, nothing leaks, the next works ---- */

/* Begins a trace on a [3,4] example and returns the traced input. */
static om_tensor *begin_x(om_tensor **example) {
  *example = om_randn(S34, 2, 7, true);
  om_trace_begin();
  return om_trace_input("x", *example, NULL);
}

static void end_and_retry(void) {
  CHECK(!om_trace_active());
  om_tensor *ex;
  om_tensor *x = begin_x(&ex), *y = om_neg(x);
  om_traced_model *m = om_trace_finish(&y, (const char *[]){"y"}, 1);
  CHECK(m != NULL);
  om_traced_release(m);
  om_tensor *all[] = {ex, x, y};
  om__release_all(all, 3);
}

TEST(data_dependent_reads) {
  om_tensor *ex, *x = begin_x(&ex), *y = om_exp(x);
  float buf[12];
  double v;
  CHECK_ERROR(om_tensor_read(y, buf), OM_ERR_TRACE_DATA_DEPENDENT, "read: reads the values of a traced tensor of shape [3,4]");
  CHECK(!om_trace_active());
  CHECK_ERROR(om_trace_finish(&y, (const char *[]){"y"}, 1) != NULL, OM_ERR_TRACE_DATA_DEPENDENT, "read: reads the values");
  om_trace_begin();
  om_tensor *x2 = om_trace_input("x", ex, NULL);
  CHECK_ERROR(om_tensor_get(x2, (int64_t[]){0, 0}, &v), OM_ERR_TRACE_DATA_DEPENDENT, "get: reads the values");
  om_trace_begin();
  om_tensor *x3 = om_trace_input("x", ex, NULL), *s = om_sum(x3, NULL, 0, false);
  CHECK_ERROR(om_tensor_item(s, &v), OM_ERR_TRACE_DATA_DEPENDENT, "item: reads the values");
  om_trace_begin();
  om_tensor *x4 = om_trace_input("x", ex, NULL), *dst = om_zeros(S34, 2, OM_FLOAT32);
  CHECK(om_tensor_copy_from(dst, x4) && om__traced(dst)); /* a write, recorded: dst holds x's value */
  om_trace_abort();
  om_trace_begin(); /* the example shares the input's storage: reading it reads the input */
  om_tensor *x5 = om_trace_input("x", ex, NULL);
  CHECK_ERROR(om_tensor_read(ex, buf), OM_ERR_TRACE_DATA_DEPENDENT, "read: reads the values of traced input 'x'");
  om_tensor_release(x5);
  CHECK(om_tensor_read(y, buf)); /* after the trace ended, reading works */
  om_tensor *all[] = {ex, x, y, x2, x3, s, x4, dst};
  om__release_all(all, 8);
  end_and_retry();
}

/* Writes into graph inputs and parameters are refused at the call; writes into other tensors
 * are recorded (tests/js/inplace.test.mjs runs them); a constant the graph read and a write
 * changed after is refused at finish. */
TEST(in_place_mutation) {
  om_tensor *ex, *x = begin_x(&ex), *y = om_exp(x), *row = om_select(y, 0, 1);
  CHECK(om_tensor_fill(row, 1) && om_trace_active());
  CHECK_ERROR(om_tensor_fill(x, 1), OM_ERR_TRACE_IN_PLACE_MUTATION,
              "fill: changes the storage of traced input 'x' in place while tracing; the graph's inputs are not written");
  om_trace_begin();
  om_tensor *x2 = om_trace_input("x", ex, NULL);
  CHECK_ERROR(om_tensor_set(x2, (int64_t[]){0, 0}, 1), OM_ERR_TRACE_IN_PLACE_MUTATION, "set: changes the storage of traced input 'x'");
  om_trace_begin();
  om_tensor *x3 = om_trace_input("x", ex, NULL), *src = om_zeros(S34, 2, OM_FLOAT32);
  CHECK_ERROR(om_tensor_copy_from(x3, src), OM_ERR_TRACE_IN_PLACE_MUTATION, "copy_from: changes the storage of traced input 'x'");
  om_trace_begin(); /* writing the example writes the input the graph stands for */
  om_tensor *x5 = om_trace_input("x", ex, NULL);
  CHECK_ERROR(om_tensor_fill(ex, 0), OM_ERR_TRACE_IN_PLACE_MUTATION, "fill: changes the storage of traced input 'x' in place");
  om_tensor_release(x5);
  om_tensor *w = om_ones((int64_t[]){4, 2}, 2, OM_FLOAT32), *c = om_ones((int64_t[]){4, 2}, 2, OM_FLOAT32);
  om_trace_begin();
  om_tensor *x4 = om_trace_input("x", ex, NULL), *y4 = om_matmul(x4, w);
  CHECK(om_trace_parameter("fc.weight", w));
  CHECK_ERROR(om_tensor_fill(w, 2), OM_ERR_TRACE_IN_PLACE_MUTATION,
              "fill: changes parameter 'fc.weight' in place while tracing; the graph holds parameters as constants");
  /* a constant changed in place after it was read: refused at finish */
  om_trace_begin();
  om_tensor *x6 = om_trace_input("x", ex, NULL), *y6 = om_matmul(x6, c);
  CHECK(om_tensor_fill(c, 2));
  CHECK_ERROR(om_trace_finish(&y6, (const char *[]){"y"}, 1) != NULL, OM_ERR_TRACE_IN_PLACE_MUTATION,
              "a constant of shape [4,2], first read by matmul, was changed in place during the trace");
  om_tensor *all[] = {ex, x, y, row, x2, x3, src, w, c, x4, y4, x6, y6};
  om__release_all(all, 13);
  end_and_retry();
}

TEST(no_grad_in_trace) {
  om_tensor *ex, *x = begin_x(&ex);
  CHECK_ERROR((om_set_grad_enabled(false), om_last_error() == OM_ERR_OK), OM_ERR_TRACE_NO_GRAD, "no_grad: grad mode turned off while tracing");
  CHECK(om_is_grad_enabled() && !om_trace_active());
  om_tensor *all[] = {ex, x};
  om__release_all(all, 2);
  end_and_retry();
}

TEST(invalid_usage) {
  om_tensor *ex, *x = begin_x(&ex);
  CHECK_ERROR(om_trace_begin(), OM_ERR_TRACE_INVALID_USAGE, "trace_begin: a trace is already recording");
  CHECK(!om_trace_active());
  CHECK_ERROR(om_trace_input("x", ex, NULL) != NULL, OM_ERR_TRACE_INVALID_USAGE, "a trace is already recording"); /* repeated */
  om_trace_abort();
  om_clear_error();
  CHECK_ERROR(om_trace_input("x", ex, NULL) != NULL, OM_ERR_TRACE_INVALID_USAGE, "a trace is already recording");
  om_tensor *ex2, *x2 = begin_x(&ex2); /* a fresh trace forgets the last one's error */
  CHECK(x2 != NULL);
  CHECK_ERROR(om_trace_input("x", ex, NULL) != NULL, OM_ERR_TRACE_INVALID_USAGE, "trace_input: name 'x' is used twice (already an input)");
  om_trace_begin();
  om_tensor *x3 = om_trace_input("x", ex, NULL);
  CHECK_ERROR(om_trace_parameter("x", ex), OM_ERR_TRACE_INVALID_USAGE, "name 'x' is used twice (already an input)");
  om_trace_begin();
  om_tensor *x4 = om_trace_input("x", ex, NULL), *y4 = om_neg(x4);
  CHECK_ERROR(om_trace_finish((om_tensor *[]){y4, y4}, (const char *[]){"y", "y"}, 2) != NULL, OM_ERR_TRACE_INVALID_USAGE,
              "name 'y' is used twice (already an output)");
  om_trace_begin();
  om_tensor *x5 = om_trace_input("x", ex, NULL), *c = om_ones(S34, 2, OM_FLOAT32);
  CHECK_ERROR(om_trace_finish(&c, (const char *[]){"c"}, 1) != NULL, OM_ERR_TRACE_INVALID_USAGE,
              "output 'c' does not depend on any input");
  om_trace_begin();
  om_tensor *one = om_ones((int64_t[]){1, 4}, 2, OM_FLOAT32);
  CHECK_ERROR(om_trace_input("x", one, (const char *[]){"batch", NULL}) != NULL, OM_ERR_TRACE_INVALID_USAGE,
              "symbolic axis 'batch' of 'x' has example size 1");
  CHECK_ERROR(om_trace_finish(NULL, NULL, 0) != NULL, OM_ERR_TRACE_INVALID_USAGE, "has example size 1");
  om_trace_begin();
  om_tensor *sq = om_ones((int64_t[]){3, 3}, 2, OM_FLOAT32);
  om_tensor *xs = om_trace_input("x", sq, (const char *[]){"h", "w"}); /* may share a size: the runs move them apart */
  CHECK(xs != NULL);
  om_trace_abort();
  om_tensor *all[] = {ex, x, ex2, x2, x3, x4, y4, x5, c, one, sq, xs};
  om__release_all(all, 12);
  end_and_retry();
}

static om_tensor *baked; /* a constant of the example batch's size */
static int reshape_to_fixed(om_tensor *const *in, om_tensor **out) { return (out[0] = om_reshape(in[0], (int64_t[]){2, 6}, 2)) ? 1 : -1; }
static int add_baked(om_tensor *const *in, om_tensor **out) { return (out[0] = om_add(in[0], baked)) ? 1 : -1; }
static int flows(om_tensor *const *in, om_tensor **out) {
  om_tensor *w = om_ones((int64_t[]){4, 2}, 2, OM_FLOAT32), *y = om_matmul(in[0], w), *r = om_relu(y);
  out[0] = om_reshape(r, (int64_t[]){-1, 1}, 2);
  om_tensor *t[] = {w, y, r};
  om__release_all(t, 3);
  return out[0] ? 1 : -1;
}

TEST(unsupported_and_symbolic) {
  /* a constant over 2 GiB (a broadcast view: nothing that large is allocated) */
  om_tensor *ex = om_randn((int64_t[]){1}, 1, 1, true), *s = om_scalar(1, OM_FLOAT32);
  om_tensor *huge = om_expand(s, (int64_t[]){600000000}, 1);
  om_trace_begin();
  om_tensor *x = om_trace_input("x", ex, NULL);
  CHECK_ERROR(om_add(x, huge) != NULL, OM_ERR_TRACE_UNSUPPORTED_OPERATION,
              "add: reads a constant of shape [600000000] (2400000000 bytes), over ONNX's 2 GiB limit");
  /* constants under 2 GiB each but over it together: the file could not be one message (an
   * empty input keeps the eager results empty, so nothing large is computed) */
  om_tensor *s2 = om_scalar(2, OM_FLOAT32), *empty = om_zeros((int64_t[]){0, 1}, 2, OM_FLOAT32);
  om_tensor *big1 = om_expand(s, (int64_t[]){1, 300000000}, 2), *big2 = om_expand(s2, (int64_t[]){1, 300000000}, 2);
  om_trace_begin();
  om_tensor *xe = om_trace_input("x", empty, NULL), *y1 = om_add(xe, big1), *y2 = om_add(y1, big2);
  CHECK(y2 && om_tensor_numel(y2) == 0);
  CHECK_ERROR(om_trace_finish(&y2, (const char *[]){"y"}, 1) != NULL, OM_ERR_TRACE_UNSUPPORTED_OPERATION,
              "trace_finish: the constants the outputs need total 2400000000 bytes, over the 2 GiB");
  om_tensor *all0[] = {s2, empty, big1, big2, xe, y1, y2};
  om__release_all(all0, 7);
  /* what only works at the traced batch holds there: a reshape to fixed sizes narrows the batch
   * to 3 (the model fails at every other); a constant of the batch's size, which answers at 1 too,
   * is two pieces, 1 and 3; what can follow the batch reaches the outputs */
  om_tensor *ex2 = om_randn(S34, 2, 1, true);
  om_trace_begin();
  om_traced_model *fixed = om_test_trace(reshape_to_fixed, ex2, (const char *[]){"batch", NULL}, 1);
  int64_t lo, hi;
  const char *why;
  CHECK(om_traced_symbol(fixed, 0, NULL, NULL, &lo, &hi, &why) && lo == 3 && hi == 3 && why &&
        strstr(why, "the model fails (reshape: element counts differ, cannot reshape"));
  om_traced_release(fixed);
  baked = om_ones(S34, 2, OM_FLOAT32);
  om_trace_begin();
  om_traced_model *pieces = om_test_trace(add_baked, ex2, (const char *[]){"batch", NULL}, 1);
  int64_t br[4];
  CHECK(pieces && om_traced_symbol_branches(pieces, 0, br, 2) == 2 && br[0] == 1 && br[1] == 1 && br[2] == 3 && br[3] == 3);
  om_traced_release(pieces);
  om_trace_begin();
  om_traced_model *m = om_test_trace(flows, ex2, (const char *[]){"batch", NULL}, 1);
  const char *const *dp;
  int nd;
  CHECK(m && om_traced_info(m, OM_TRACED_OUTPUT, 0, NULL, &nd, NULL, &dp));
  CHECK(m && nd == 2 && dp[0] && !strcmp(dp[0], "2*batch") && !dp[1]);
  om_traced_release(m);
  om_tensor *all[] = {ex, s, huge, x, ex2, baked};
  om__release_all(all, 6);
  end_and_retry();
}

/* Reshape and expand take sizes the caller may have read off a symbolic shape: the extents
 * rule keeps the symbol where the sizes match it (spec 4), so no shape is baked in. */
static int reshape_and_expand(om_tensor *const *in, om_tensor **out) {
  const int64_t *s = om_tensor_shape(in[0]);
  om_tensor *same = om_reshape(in[0], s, 3);                              /* an alias: no node */
  om_tensor *flat = om_reshape(same, (int64_t[]){s[0], s[1] * s[2]}, 2); /* the batch, and 12 */
  om_tensor *wide = om_expand(in[1], (int64_t[]){s[0], 12}, 2);         /* batch kept, 1 -> 12 fixed */
  out[0] = om_add(flat, wide);
  om_tensor *t[] = {same, flat, wide};
  om__release_all(t, 3);
  return out[0] ? 1 : -1;
}

TEST(symbols_through_reshape_and_expand) {
  int64_t s534[] = {5, 3, 4};
  om_tensor *ex = om_randn(s534, 3, 1, true), *col = om_randn((int64_t[]){5, 1}, 2, 2, true);
  om_trace_begin();
  om_traced_model *m = om_test_trace_n(reshape_and_expand, 2, (om_tensor *[]){ex, col},
                                       (const char *const *[]){(const char *[]){"batch", NULL, NULL}, (const char *[]){"batch", NULL}}, 1);
  const char *const *dp;
  CHECK(m && om_traced_info(m, OM_TRACED_OUTPUT, 0, NULL, NULL, NULL, &dp) && dp[0] && !strcmp(dp[0], "batch") && !dp[1]);
  CHECK_EQ_INT(om_traced_count(m, OM_TRACED_NODE), 3); /* Reshape, Expand, Add */
  bytes b = onnx_of(m);
  Onnx__ModelProto *mp = onnx__model_proto__unpack(NULL, b.n, b.p);
  CHECK(mp && mp->graph->n_node == 3 && mp->graph->n_initializer == 2);
  for (size_t k = 0; mp && k < mp->graph->n_node; k++) { /* the shape operands hold -1 / 1 where the batch goes */
    Onnx__NodeProto *n = mp->graph->node[k];
    int64_t want = !strcmp(n->op_type, "Reshape") ? -1 : !strcmp(n->op_type, "Expand") ? 1 : 0;
    for (size_t i = 0; want && i < mp->graph->n_initializer; i++) {
      Onnx__TensorProto *t = mp->graph->initializer[i];
      if (strcmp(t->name, n->input[1])) continue;
      int64_t v[2];
      memcpy(v, t->raw_data.data, sizeof v);
      CHECK(t->raw_data.len == sizeof v && v[0] == want && v[1] == 12);
    }
  }
  if (mp) onnx__model_proto__free_unpacked(mp, NULL);
  free(b.p);
  om_traced_release(m);
  om_tensor *all[] = {ex, col};
  om__release_all(all, 2);
}

int main(void) {
  RUN(golden_bytes_and_model_fields);
  RUN(golden_bytes_symbolic_int_bool);
  RUN(golden_bytes_merged_masks);
  RUN(weights_stream_from_their_storage);
  RUN(constants_keep_their_traced_values);
  RUN(graph_shape_and_names);
  RUN(view_names);
  RUN(equal_contents_stored_once);
  RUN(data_dependent_reads);
  RUN(in_place_mutation);
  RUN(no_grad_in_trace);
  RUN(invalid_usage);
  RUN(unsupported_and_symbolic);
  RUN(symbols_through_reshape_and_expand);
  TEST_MAIN_END();
}
