/* Symbolic extents (spec 4): coef x product of atoms through reshape, split and cat; the shape
 * operands (0 / -1 / Shape nodes shared by the whole graph); the refusals that remain. The
 * traced graphs are run in onnxruntime-web by tests/js/symbolic.test.mjs. */
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "om_test.h"

/* Output i's shape written as the graph has it: each axis its dim_param, or its size when
 * fixed, joined by ',' ("batch*seq,4"), equals want. */
static void check_out(const om_traced_model *m, int i, const char *want) {
  const char *const *dp;
  const int64_t *shape;
  int nd;
  char got[256] = "";
  if (!m || !om_traced_info(m, OM_TRACED_OUTPUT, i, NULL, &nd, &shape, &dp)) {
    FAILED("output %d: no info", i);
    return;
  }
  for (int d = 0, n = 0; d < nd; d++)
    n += dp[d] ? snprintf(got + n, sizeof got - (size_t)n, "%s%s", d ? "," : "", dp[d])
               : snprintf(got + n, sizeof got - (size_t)n, "%s%lld", d ? "," : "", (long long)shape[d]);
  if (strcmp(got, want)) FAILED("output %d: [%s], expected [%s]", i, got, want);
}

/* Finishes the trace with outputs outs (names) and checks each output's shape (check_out). */
static om_traced_model *finish_checked(om_tensor **outs, const char **names, int n, const char *const *want) {
  om_traced_model *m = om_trace_finish(outs, names, n);
  if (!m) FAILED("finish: %s", om_last_error_message());
  for (int i = 0; m && i < n; i++) check_out(m, i, want[i]);
  return m;
}

static int count_op(const om_traced_model *m, const char *op_type) {
  int n = 0;
  for (int k = 0; m && k < om_traced_count(m, OM_TRACED_NODE); k++) n += !strcmp(om_traced_name(m, OM_TRACED_NODE, k), op_type);
  return n;
}

/* x: [batch=3, seq=5, 4] */
static om_tensor *begin_bs(om_tensor **ex) {
  *ex = om_randn((int64_t[]){3, 5, 4}, 3, 1, false);
  om_trace_begin();
  return om_trace_input("x", *ex, (const char *[]){"batch", "seq", NULL});
}

TEST(reshape_products) {
  om_tensor *ex, *x = begin_bs(&ex);
  om_tensor *flat = om_reshape(x, (int64_t[]){15, 4}, 2);          /* [batch*seq, 4]: Reshape [-1, 4] */
  om_tensor *back = om_reshape(flat, (int64_t[]){3, 5, 4}, 3);     /* [batch, seq, 4]: -1, Shape(seq) */
  om_tensor *heads = om_reshape(x, (int64_t[]){3, 5, 2, 2}, 4);    /* [0, 0, 2, 2]: no Shape node */
  om_tensor *all = om_reshape(x, (int64_t[]){60}, 1);               /* [4*batch*seq] */
  om_tensor *nflat = om_neg(flat);
  om_tensor *back2 = om_reshape(nflat, (int64_t[]){3, 5, 4}, 3);   /* the same Shape node again */
  om_tensor *wide = om_reshape(x, (int64_t[]){3, 20}, 2);           /* [batch, 4*seq] */
  om_tensor *outs[] = {flat, back, heads, all, back2, wide};
  om_traced_model *m = finish_checked(outs, (const char *[]){"flat", "back", "heads", "all", "back2", "wide"}, 6, (const char *[]){"batch*seq,4", "batch,seq,4", "batch,seq,2,2", "4*batch*seq", "batch,seq,4", "batch,4*seq"});
  /* Reshape x6, Neg, one Shape (seq, on the graph input) and one Concat, both shared by the two
   * un-flattens (a computation on shapes only is written once) */
  CHECK_EQ_INT(count_op(m, "Shape"), 1);
  CHECK_EQ_INT(count_op(m, "Concat"), 1);
  CHECK_EQ_INT(count_op(m, "Reshape"), 6);
  CHECK_EQ_INT(om_traced_count(m, OM_TRACED_NODE), 9);
  om_traced_release(m);
  om_tensor *t[] = {ex, x, flat, back, heads, all, nflat, back2, wide};
  om__release_all(t, 9);
}

/* Computed extents: [batch*seq, 4] -> [seq, batch, 4] is [-1, Shape(batch), 4]; and
 * [4*batch*seq] -> [2*batch, 2*seq] is [-1, Shape(seq) * 2]: a Mul by the coefficient. */
TEST(computed_extents) {
  om_tensor *ex, *x = begin_bs(&ex);
  om_tensor *flat = om_reshape(x, (int64_t[]){15, 4}, 2);
  om_tensor *swapped = om_reshape(flat, (int64_t[]){5, 3, 4}, 3); /* [seq, batch, 4] */
  om_tensor *all = om_reshape(x, (int64_t[]){60}, 1);
  om_tensor *two = om_reshape(all, (int64_t[]){6, 10}, 2);          /* [2*batch, 2*seq] */
  om_tensor *outs[] = {swapped, two};
  om_traced_model *m = finish_checked(outs, (const char *[]){"swapped", "two"}, 2, (const char *[]){"seq,batch,4", "2*batch,2*seq"});
  CHECK_EQ_INT(count_op(m, "Shape"), 2);
  CHECK_EQ_INT(count_op(m, "Mul"), 1);
  CHECK_EQ_INT(count_op(m, "Concat"), 2);
  om_traced_release(m);
  om_tensor *t[] = {ex, x, flat, swapped, all, two};
  om__release_all(t, 6);
}

TEST(split_and_cat) {
  om_tensor *ex, *x = begin_bs(&ex);
  om_tensor *parts[2];
  CHECK_EQ_INT(om_split(x, 2, 2, parts, 2), 2);
  om_tensor *seq2 = om_cat((om_tensor *[]){x, x}, 2, 1);           /* [batch, 2*seq, 4] */
  om_tensor *batch2 = om_cat((om_tensor *[]){parts[0], parts[1]}, 2, 0); /* [2*batch, seq, 2] */
  om_tensor *flat = om_reshape(seq2, (int64_t[]){3, 40}, 2);       /* [batch, 8*seq] */
  om_tensor *outs[] = {parts[0], seq2, batch2, flat};
  om_traced_model *m = finish_checked(outs, (const char *[]){"p0", "seq2", "batch2", "flat"}, 4, (const char *[]){"batch,seq,2", "batch,2*seq,4", "2*batch,seq,2", "batch,8*seq"});
  CHECK_EQ_INT(count_op(m, "Shape"), 0);
  om_traced_release(m);
  om_tensor *t[] = {ex, x, parts[0], parts[1], seq2, batch2, flat};
  om__release_all(t, 7);
}

/* A cat of two different symbols: seq + len is no monomial, so the output axis gets a derived
 * atom, "cat#1", whose run-time extent is read off the cat's output by a Shape node. */
TEST(derived_atoms) {
  om_tensor *ey = om_randn((int64_t[]){3, 7, 4}, 3, 2, false); /* before the trace: random values of a symbol's size are refused in it */
  om_tensor *ex, *x = begin_bs(&ex);
  om_tensor *y = om_trace_input("y", ey, (const char *[]){"batch", "len", NULL});
  om_tensor *cv = om_cat((om_tensor *[]){x, y}, 2, 1);            /* [batch, cat#1, 4] */
  om_tensor *flat = om_reshape(cv, (int64_t[]){36, 4}, 2);          /* [batch*cat#1, 4] */
  om_tensor *relu = om_relu(flat);
  om_tensor *back = om_reshape(relu, (int64_t[]){3, 12, 4}, 3);    /* -1, Shape(cat, 1) */
  om_tensor *wide = om_reshape(cv, (int64_t[]){3, 48}, 2);          /* [batch, 4*cat#1] */
  om_tensor *outs[] = {cv, flat, back, wide};
  om_traced_model *m = finish_checked(outs, (const char *[]){"cat", "flat", "back", "wide"}, 4, (const char *[]){"batch,cat#1,4", "batch*cat#1,4", "batch,cat#1,4", "batch,4*cat#1"});
  CHECK_EQ_INT(count_op(m, "Shape"), 1);
  om_traced_release(m);
  om_tensor *t[] = {ex, x, ey, y, cv, flat, relu, back, wide};
  om__release_all(t, 9);
}

/* What stays refused (SymbolicShape), each with its message. */
TEST(remaining_refusals) {
  /* two derived atoms are two symbols, even when they are equal at run time: [seq + len] + [len + seq] */
  om_tensor *ey = om_randn((int64_t[]){3, 7, 4}, 3, 2, false); /* before the trace: random values of a symbol's size are refused in it */
  om_tensor *ex, *x = begin_bs(&ex);
  om_tensor *y = om_trace_input("y", ey, (const char *[]){"batch", "len", NULL});
  om_tensor *xy = om_cat((om_tensor *[]){x, y}, 2, 1), *yx = om_cat((om_tensor *[]){y, x}, 2, 1);
  CHECK_ERROR(om_add(xy, yx) != NULL, OM_ERR_TRACE_SYMBOLIC_SHAPE,
              "add: bakes symbolic axis 'cat#1' (example size 12) into the graph: at size 13 the same call fails");
  /* a square: [seq, seq] flattened */
  om_tensor *esq = om_randn((int64_t[]){5, 5}, 2, 3, false);
  om_trace_begin();
  om_tensor *sq = om_trace_input("x", esq, (const char *[]){"seq", "seq"});
  CHECK_ERROR(om_reshape(sq, (int64_t[]){25}, 1) != NULL, OM_ERR_TRACE_SYMBOLIC_SHAPE,
              "reshape: symbolic axis 'seq' (axis 1 of input 0, example size 5) cannot be expressed in the graph: the "
              "reshape multiplies a symbolic axis by itself");
  /* a constant (made before the trace) whose size is a product's example size: [batch*seq, 4] + [15, 4] */
  om_tensor *c = om_ones((int64_t[]){15, 4}, 2, OM_FLOAT32);
  om_tensor *ex2, *x2 = begin_bs(&ex2);
  om_tensor *flat = om_reshape(x2, (int64_t[]){15, 4}, 2);
  CHECK_ERROR(om_add(flat, c) != NULL, OM_ERR_TRACE_SYMBOLIC_SHAPE,
              "add: bakes symbolic axis 'batch' (example size 3) into the graph: at size 4 the same call fails");
  CHECK(!om_trace_active());
  om_tensor *t[] = {ex, x, ey, y, xy, yx, esq, sq, ex2, x2, flat, c};
  om__release_all(t, 12);
}

/* Expand of a size-1 axis to an atom's example size takes the atom: [batch, 1, 4] ->
 * [batch, seq, 4] is Expand(x, Concat([1], Shape(seq), [4])); batch kept is 1. To the size of a
 * product the trace has used (batch*seq, after a flatten) it takes the product: Shape(batch) *
 * Shape(seq). */
TEST(expand_to_a_symbol) {
  om_tensor *ex, *x = begin_bs(&ex);
  om_tensor *m = om_sum(x, (int64_t[]){1}, 1, true);                /* [batch, 1, 4] */
  om_tensor *e = om_expand(m, (int64_t[]){3, 5, 4}, 3);              /* [batch, seq, 4] */
  om_tensor *f = om_expand(m, (int64_t[]){3, 6, 4}, 3);              /* 6 is no atom: fixed */
  om_tensor *flat = om_reshape(x, (int64_t[]){15, 4}, 2);           /* [batch*seq, 4] */
  om_tensor *col = om_sum(flat, (int64_t[]){0}, 1, true);           /* [1, 4] */
  om_tensor *p = om_expand(col, (int64_t[]){15, 4}, 2);              /* [batch*seq, 4] */
  om_tensor *outs[] = {e, f, p};
  om_traced_model *tm = finish_checked(outs, (const char *[]){"e", "f", "p"}, 3, (const char *[]){"batch,seq,4", "batch,6,4", "batch*seq,4"});
  CHECK_EQ_INT(count_op(tm, "Shape"), 2);
  CHECK_EQ_INT(count_op(tm, "Mul"), 1);
  CHECK_EQ_INT(count_op(tm, "Concat"), 2);
  CHECK_EQ_INT(count_op(tm, "Expand"), 3);
  om_traced_release(tm);
  om_tensor *t[] = {ex, x, m, e, f, flat, col, p};
  om__release_all(t, 8);
}

/* At most 64 atoms per trace (an extent's atoms are a 64-bit mask). */
TEST(at_most_64_symbols) {
  om_tensor *ex[65] = {0}, *x[65] = {0};
  om_trace_begin();
  for (int k = 0; k < 65; k++) {
    char name[16];
    snprintf(name, sizeof name, "s%d", k);
    ex[k] = om_zeros((int64_t[]){k + 2}, 1, OM_FLOAT32);
    x[k] = om_trace_input(name, ex[k], (const char *[]){name});
    if (k < 64) CHECK(x[k] != NULL);
  }
  CHECK(x[64] == NULL && om_last_error() == OM_ERR_TRACE_INVALID_USAGE &&
        strstr(om_last_error_message(), "trace_input: symbolic axis 's64' of 's64' is the 65th symbol; a trace has at most 64"));
  CHECK(!om_trace_active());
  om__release_all(ex, 65);
  om__release_all(x, 64);
}

/* x: [batch=2, 3, h=8, w=6] */
static om_tensor *begin_image(om_tensor **ex) {
  *ex = om_randn((int64_t[]){2, 3, 8, 6}, 4, 1, false);
  om_trace_begin();
  return om_trace_input("x", *ex, (const char *[]){"batch", NULL, "h", "w"});
}

/* Convolutions and pools over symbolic spatial axes (spec 4): stride 1 with "same" padding
 * keeps the symbol (the probe sees it move in proportion); stride 2 and a 2x2 pool are floor
 * divisions, so each output gets a derived atom; conv_transpose2d with stride 2 and kernel 2
 * doubles exactly (2*h); adaptive pooling to 1x1 fixes the axes. */
TEST(conv_spatial_extents) {
  om_tensor *w = om_randn((int64_t[]){4, 3, 3, 3}, 4, 2, false), *wt = om_randn((int64_t[]){4, 2, 2, 2}, 4, 3, false);
  om_tensor *ex, *x = begin_image(&ex);
  const int64_t one[2] = {1, 1}, two[2] = {2, 2}, zero[2] = {0, 0};
  om_tensor *same = om_conv2d(x, w, NULL, one, one, one, 1);   /* [batch, 4, h, w] */
  om_tensor *s2 = om_conv2d(x, w, NULL, two, one, one, 1);         /* floor((h-1)/2)+1 */
  om_tensor *pool = om_max_pool2d(same, (int64_t[]){2, 2}, NULL, NULL, NULL, false);        /* floor(h/2) */
  om_tensor *up = om_conv_transpose2d(same, wt, NULL, two, zero, zero, 1, one); /* 2h, 2w */
  om_tensor *gap = om_adaptive_avg_pool2d(pool, (int64_t[]){1, 1});
  /* a stride far above the example: one window at h = 8, 9 and 17, but 80 at 8199, so the axis
   * is a derived extent, not a fixed 1 */
  om_tensor *far = om_max_pool2d(same, (int64_t[]){8, 6}, (int64_t[]){100, 100}, NULL, NULL, false);
  om_tensor *outs[] = {same, s2, pool, up, gap, far};
  om_traced_model *m = finish_checked(outs, (const char *[]){"same", "s2", "pool", "up", "gap", "far"}, 6,
                                      (const char *[]){"batch,4,h,w", "batch,4,conv2d#1,conv2d#2", "batch,4,max_pool2d#3,max_pool2d#4",
                                                       "batch,2,2*h,2*w", "batch,4,1,1", "batch,4,max_pool2d#5,max_pool2d#6"});
  CHECK_EQ_INT(count_op(m, "Shape"), 0);
  CHECK_EQ_INT(count_op(m, "GlobalAveragePool"), 1);
  om_traced_release(m);
  /* what stays refused: a pool whose ceil_mode end padding depends on the size, an adaptive
   * pool to a fixed size other than 1x1, a symbolic channel axis */
  om_trace_begin();
  om_tensor *x2 = om_trace_input("x", ex, (const char *[]){"batch", NULL, "h", "w"});
  CHECK_ERROR(om_max_pool2d(x2, (int64_t[]){3, 3}, (int64_t[]){2, 2}, NULL, NULL, true) != NULL, OM_ERR_TRACE_SYMBOLIC_SHAPE,
              "max_pool2d: symbolic axis 'h' (axis 2 of input 0, example size 8) cannot be expressed in the graph: ceil_mode "
              "with a stride above 1");
  om_trace_begin();
  om_tensor *x3 = om_trace_input("x", ex, (const char *[]){"batch", NULL, "h", "w"});
  CHECK_ERROR(om_adaptive_avg_pool2d(x3, (int64_t[]){2, 2}) != NULL, OM_ERR_TRACE_SYMBOLIC_SHAPE,
              "adaptive_avg_pool2d: symbolic axis 'h' (axis 2 of input 0, example size 8) cannot be expressed in the graph: "
              "AveragePool's kernel would be computed from the example size");
  om_trace_begin();
  om_tensor *x4 = om_trace_input("x", ex, (const char *[]){NULL, "c", NULL, NULL});
  CHECK_ERROR(om_conv2d(x4, w, NULL, one, zero, one, 1) != NULL, OM_ERR_TRACE_SYMBOLIC_SHAPE,
              "conv2d: bakes symbolic axis 'c' (example size 3) into the graph: at size 4 the same call fails");
  CHECK(!om_trace_active());
  om_tensor *t[] = {ex, w, wt, x, same, s2, pool, up, gap, far, x2, x3, x4};
  om__release_all(t, 13);
}

/* Tensors created while tracing at a symbol's size are computed in the graph (the caller read
 * the size off a symbolic shape): ones / full as an Expand of the value to a shape operand,
 * arange as a Range on the extent, tril of such a tensor a Trilu, and a slice of a fixed axis of
 * a constant buffer to that size a Slice ending at the extent. What depends on shapes only is
 * written once: the causal mask of two attention calls is one Trilu. */
TEST(created_at_a_symbol) {
  om_tensor *one8 = om_ones((int64_t[]){8, 8}, 2, OM_FLOAT32), *buf = om_tril(one8, 0); /* constants: made before the trace */
  om_tensor *ex, *x = begin_bs(&ex);                                       /* [batch=3, seq=5, 4] */
  om_tensor *ones = om_ones((int64_t[]){3, 5, 4}, 3, OM_FLOAT32);        /* [batch, seq, 4]: Concat(Shape, Shape, [4]) */
  om_tensor *a = om_add(x, ones);
  om_tensor *pos = om_arange(0, 5, 1, OM_INT64);                          /* [seq]: Range(0, Squeeze(Shape), 1) */
  om_tensor *posf = om_arange(1, 11, 2, OM_FLOAT32);                      /* 1, 3, ..: Range, Cast, Mul 2, Add 1 */
  om_tensor *full = om_full((int64_t[]){5, 1}, 2, OM_FLOAT32, 0.5);       /* [seq, 1]: Expand(0.5, Concat(Shape, [1])) */
  om_tensor *col = om_reshape(posf, (int64_t[]){5, 1}, 2), *xf = om_mul(x, full), *b = om_add(xf, col);
  om_tensor *rows = om_slice(buf, 0, 0, 5, 1);                            /* [seq, 8]: Slice(buf, [0], Shape(seq), [0]) */
  om_tensor *mask = om_slice(rows, 1, 0, 5, 1);                           /* [seq, seq] */
  om_tensor *xt = om_transpose(x, 1, 2), *scores = om_matmul(x, xt);
  om_tensor *masked = om_mul(scores, mask);
  om_tensor *att1 = om_scaled_dot_product_attention(x, x, x, NULL, true, NULL);
  om_tensor *att2 = om_scaled_dot_product_attention(a, a, a, NULL, true, NULL); /* the same causal mask */
  om_tensor *rows8 = om_embedding(buf, pos, 0, false);                    /* buf's first seq rows: a Slice, no Gather */
  om_tensor *outs[] = {a, pos, b, masked, att1, att2, rows8};
  om_traced_model *m = finish_checked(outs, (const char *[]){"a", "pos", "b", "masked", "att1", "att2", "rows8"}, 7,
                                      (const char *[]){"batch,seq,4", "seq", "batch,seq,4", "batch,seq,seq", "batch,seq,4", "batch,seq,4", "seq,8"});
  CHECK_EQ_INT(count_op(m, "Shape"), 2); /* batch and seq, each once for the whole graph */
  CHECK_EQ_INT(count_op(m, "Range"), 1); /* both aranges start from Range(0, seq, 1) */
  CHECK_EQ_INT(count_op(m, "Squeeze"), 1);
  CHECK_EQ_INT(count_op(m, "Slice"), 3);
  CHECK_EQ_INT(count_op(m, "Gather"), 0);
  CHECK_EQ_INT(count_op(m, "Trilu"), 1);  /* one causal mask for both attention calls */
  CHECK_EQ_INT(count_op(m, "Expand"), 3); /* ones, full, the causal mask's ones */
  CHECK_EQ_INT(count_op(m, "Concat"), 3); /* [batch, seq, 4], [seq, 1], [seq, seq] */
  om_traced_release(m);
  /* after finish the values are the example run's */
  float v[5];
  CHECK(om_tensor_read(posf, v) && v[0] == 1 && v[4] == 9);
  om_tensor *t[] = {one8, buf, ex, x, ones, a, pos, posf, full, col, xf, b, rows, mask, xt, scores, masked, att1, att2, rows8};
  om__release_all(t, 20);
}

/* An arange(0, l) made after arange(1, 1 + l) is that one's Range (om__emit shares it), which
 * carries seq too: the embedding of it is a Slice and the add at [batch, seq, 4] is no bake. */
TEST(arange_shares_its_range) {
  om_tensor *table = om_randn((int64_t[]){8, 4}, 2, 5, false);
  om_tensor *ex, *x = begin_bs(&ex); /* [batch=3, seq=5, 4] */
  om_tensor *f = om_arange(1, 6, 1, OM_FLOAT32), *col = om_reshape(f, (int64_t[]){5, 1}, 2);
  om_tensor *i = om_arange(0, 5, 1, OM_INT64), *rows = om_embedding(table, i, 0, false);
  om_tensor *xr = om_add(x, rows), *y = om_add(xr, col);
  om_traced_model *m = finish_checked(&y, (const char *[]){"y"}, 1, (const char *[]){"batch,seq,4"});
  CHECK_EQ_INT(count_op(m, "Range"), 1);
  CHECK_EQ_INT(count_op(m, "Slice"), 1);
  CHECK_EQ_INT(count_op(m, "Gather"), 0);
  om_traced_release(m);
  om_tensor *t[] = {table, ex, x, f, col, i, rows, xr, y};
  om__release_all(t, 9);
}

/* Random values cannot be written in the graph: drawn at a symbol's size while tracing they are
 * SymbolicShape at the call, the trace ends, and the library keeps working; likewise an int64
 * arange of a fractional step, and a descending arange. */
TEST(random_at_a_symbol) {
  om_tensor *ex, *x = begin_bs(&ex);
  CHECK_ERROR(om_randn((int64_t[]){2, 5}, 2, 1, true) != NULL, OM_ERR_TRACE_SYMBOLIC_SHAPE,
              "randn: shape [2,5] has axis 1 of size 5, the example size of symbolic axis 'seq'; random values of a "
              "symbolic size cannot be written in the graph");
  CHECK(!om_trace_active());
  om_tensor *ex2, *x2 = begin_bs(&ex2);
  om_tensor *flat = om_reshape(x2, (int64_t[]){15, 4}, 2); /* batch*seq is an extent of the trace now */
  CHECK_ERROR(om_rand((int64_t[]){15}, 1, 1, true) != NULL, OM_ERR_TRACE_SYMBOLIC_SHAPE,
              "rand: shape [15] has axis 0 of size 15, the example size of symbolic axis 'batch*seq'");
  CHECK(!om_trace_active());
  /* int64 values of a fractional step: truncated sums the graph's int64 Range would not give */
  om_tensor *ex3, *x3 = begin_bs(&ex3);
  CHECK_ERROR(om_arange(0, 2.5, 0.5, OM_INT64) != NULL, OM_ERR_TRACE_SYMBOLIC_SHAPE,
              "arange: shape [5] has axis 0 of size 5, the example size of symbolic axis 'seq'; int64 values from a "
              "fractional start or step at a symbolic length cannot be written in the graph yet");
  CHECK(!om_trace_active());
  /* a descending range at the length: its start (l - 1) would be frozen */
  om_tensor *ex4, *x4 = begin_bs(&ex4);
  CHECK_ERROR(om_arange(4, -1, -1, OM_INT64) != NULL, OM_ERR_TRACE_SYMBOLIC_SHAPE,
              "arange: shape [5] has axis 0 of size 5, the example size of symbolic axis 'seq'; a descending arange "
              "at a symbolic length cannot be written in the graph yet (its start would stay the example's)");
  CHECK(!om_trace_active());
  om_tensor *r = om_randn((int64_t[]){2, 5}, 2, 1, true); /* no trace: an ordinary tensor */
  CHECK(r && r->ndim == 2);
  om_tensor *t[] = {ex, x, ex2, x2, flat, ex3, x3, ex4, x4, r};
  om__release_all(t, 10);
}

/* Two derived atoms that are provably the same extent are one: two stride-2 convs (different
 * weights, one attrs) on the same input derive conv2d#1 and conv2d#2 once, so their outputs
 * add; the same conv on the other spatial axis or another stride is another atom, and a cat in
 * the other order stays another (refused when they meet: remaining_refusals). */
TEST(derived_atoms_unified) {
  om_tensor *w1 = om_randn((int64_t[]){4, 3, 3, 3}, 4, 2, false), *w2 = om_randn((int64_t[]){4, 3, 3, 3}, 4, 3, false);
  om_tensor *ex, *x = begin_image(&ex);
  const int64_t one[2] = {1, 1}, two[2] = {2, 2}, three[2] = {3, 3};
  om_tensor *a = om_conv2d(x, w1, NULL, two, one, one, 1), *b = om_conv2d(x, w2, NULL, two, one, one, 1);
  om_tensor *sum = om_add(a, b);                                  /* [batch, 4, conv2d#1, conv2d#2] */
  om_tensor *c3 = om_conv2d(x, w1, NULL, three, one, one, 1);      /* stride 3: other atoms */
  om_tensor *outs[] = {sum, c3};
  om_traced_model *m = finish_checked(outs, (const char *[]){"sum", "c3"}, 2,
                                      (const char *[]){"batch,4,conv2d#1,conv2d#2", "batch,4,conv2d#3,conv2d#4"});
  CHECK_EQ_INT(count_op(m, "Conv"), 3);
  om_traced_release(m);
  om_tensor *t[] = {ex, w1, w2, x, a, b, sum, c3};
  om__release_all(t, 8);
}

int main(void) {
  RUN(reshape_products);
  RUN(computed_extents);
  RUN(split_and_cat);
  RUN(derived_atoms);
  RUN(remaining_refusals);
  RUN(expand_to_a_symbol);
  RUN(at_most_64_symbols);
  RUN(conv_spatial_extents);
  RUN(created_at_a_symbol);
  RUN(arange_shares_its_range);
  RUN(random_at_a_symbol);
  RUN(derived_atoms_unified);
  TEST_MAIN_END();
}
