/* Symbolic axes (docs/symbolic-axes.md): size expressions and their canonical forms; om_trace_run,
 * which runs the model at other sizes and writes the integers it computes from sizes as what
 * they are; the outputs' extents the probe chooses; declared and narrowed ranges; what is
 * refused, with kind and message. The graphs' values at other sizes are checked in
 * onnxruntime-web by tests/js/symbolic.test.mjs. */
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "om_test.h"
#include "trace/trace.h"

static const char *const BS[] = {"batch", "seq", NULL};    /* [batch=3, seq=5, 4] */
static const char *const BHW[] = {"batch", NULL, "h", "w"}; /* [batch=2, 2, h=9, w=10] */

static om_tensor *ex_bs(void) { return om_randn((int64_t[]){3, 5, 4}, 3, 1, true); }
static om_tensor *ex_bhw(void) { return om_randn((int64_t[]){2, 2, 9, 10}, 4, 2, true); }

/* ---- size expressions ---- */

/* The canonical forms: a 3x3/stride-2/pad-1 conv and a 1x1/stride-2 one give one extent, a pool
 * of a pool one floor, a multiple of 4 no floor at all; the names; om__x_same decides what the
 * forms do not; om__x_values lists what a size that takes few values takes. */
TEST(expressions) {
  om_tensor *ex = ex_bhw(), *ex2 = om_randn((int64_t[]){8}, 1, 3, true);
  CHECK(om_trace_begin());
  CHECK(om_trace_dim("m", 4, 4, 0));
  om_tensor *x = om_trace_input("x", ex, BHW), *y = om_trace_input("y", ex2, (const char *[]){"m"});
  om_trace *tr = om__state()->trace; /* symbols: m (declared first), batch, h, w */
  int h = om__x_sym(tr, 2), w = om__x_sym(tr, 3), m = om__x_sym(tr, 0);
  int conv3 = om__x_lin(tr, 1, om__x_floordiv(tr, om__x_lin(tr, 1, h, 0, -1, 2 - 2 - 1), 2), 0, -1, 1);
  int conv1 = om__x_lin(tr, 1, om__x_floordiv(tr, om__x_lin(tr, 1, h, 0, -1, -1), 2), 0, -1, 1);
  CHECK_EQ_INT(conv3, conv1);
  CHECK(!strcmp(om__x_name(tr, conv3), "floor((h+1)/2)"));
  int pool2 = om__x_floordiv(tr, om__x_floordiv(tr, h, 2), 2);
  CHECK_EQ_INT(pool2, om__x_floordiv(tr, h, 4));
  CHECK(!strcmp(om__x_name(tr, pool2), "floor(h/4)"));
  int half = om__x_floordiv(tr, m, 2); /* m = 4 v: floor(4v / 2) = 2v, written m/2 */
  CHECK(!strcmp(om__x_name(tr, half), "m/2"));
  CHECK_EQ_INT(om__x_lin(tr, 2, half, 0, -1, 0), m);
  CHECK(!strcmp(om__x_name(tr, om__x_mul(tr, h, w)), "h*w"));
  CHECK(!strcmp(om__x_name(tr, om__x_lin(tr, 2, h, -1, w, -3)), "2*h-w-3"));
  int64_t at[64];
  int up = om__x_lin(tr, 2, om__x_floordiv(tr, h, 2), 0, -1, 0); /* a pool then an upsampling by 2 */
  CHECK_EQ_INT(om__x_same(tr, up, h, NULL, at), 0);              /* differ at odd h */
  CHECK(at[2] % 2 == 1);
  CHECK_EQ_INT(om__x_same(tr, up, h, (int64_t[]){1, 1, 2, 1}, at), 1); /* equal for even h */
  int halves = om__x_lin(tr, 1, om__x_floordiv(tr, h, 2), 1, om__x_floordiv(tr, om__x_lin(tr, 1, h, 0, -1, 1), 2), 0);
  CHECK(halves != h);
  CHECK_EQ_INT(om__x_same(tr, halves, h, NULL, at), 1); /* floor(h/2) + floor((h+1)/2) = h everywhere */
  int64_t v[64] = {2, 2, 9, 10}, out;
  CHECK(om__x_eval(tr, conv3, v, &out) && out == 5);
  CHECK(om__x_divexact(tr, om__x_mul(tr, h, w), w) == h);
  CHECK(om__x_divexact(tr, om__x_lin(tr, 1, h, 0, -1, 1), w) == -1);
  /* the values of a size that takes few: a split's last piece by 3, h - 3 floor((h - 1) / 3), is
   * 1, 2 or 3; with w as well 1 to 5; h itself, a floor of it, a minimum take more */
  int64_t vals[16];
  int last = om__x_lin(tr, 1, h, -3, om__x_floordiv(tr, om__x_lin(tr, 1, h, 0, -1, -1), 3), 0);
  CHECK_EQ_INT(om__x_values(tr, last, vals, 16), 3);
  CHECK(vals[0] == 1 && vals[1] == 2 && vals[2] == 3);
  CHECK_EQ_INT(om__x_values(tr, last, vals, 2), 0); /* more than cap */
  int rest = om__x_lin(tr, 1, w, -2, om__x_floordiv(tr, w, 2), 0); /* w % 2 */
  CHECK_EQ_INT(om__x_values(tr, om__x_lin(tr, 1, last, 2, rest, 0), vals, 16), 5);
  CHECK(vals[0] == 1 && vals[4] == 5);
  CHECK_EQ_INT(om__x_values(tr, h, vals, 16), 0);
  CHECK_EQ_INT(om__x_values(tr, pool2, vals, 16), 0);
  CHECK_EQ_INT(om__x_values(tr, om__x_const(tr, 7), vals, 16), 0);
  CHECK_EQ_INT(om__x_values(tr, om__x_minc(tr, h, 3), vals, 16), 0);
  om_trace_abort();
  om_tensor *t[] = {ex, ex2, x, y};
  om__release_all(t, 4);
}

/* floor(double(N) * s), as ATen rounds interpolate's size: one id per (N, s), its value the
 * double computation's at every size (62 at h = 90 by 0.7, where 7h / 10 is 63), a constant of a
 * constant, never decreasing, named with the double's shortest decimal; beyond 2^53 it has no
 * value, and a declared maximum that lets N reach 2^53 is refused (SymbolicShape). */
TEST(scaled_sizes) {
  om_tensor *ex = ex_bhw();
  CHECK(om_trace_begin());
  CHECK(om_trace_dim("w", 1, 1, (int64_t)1 << 27));
  om_tensor *x = om_trace_input("x", ex, BHW);
  om_trace *tr = om__state()->trace; /* symbols: w (declared first), batch, h */
  int h = om__x_sym(tr, 2), w = om__x_sym(tr, 0);
  int a = om__x_fmul(tr, h, 0.7, "test"), b = om__x_fmul(tr, h, 0.7, "test"), c = om__x_fmul(tr, h, 0.35, "test");
  CHECK(a >= 0 && a == b && a != c);
  CHECK(!strcmp(om__x_name(tr, a), "floor(h*0.7)"));
  CHECK(!strcmp(om__x_name(tr, om__x_fmul(tr, om__x_lin(tr, 1, h, 0, -1, 1), 1.0 / 3, "test")), "floor((h+1)*0.3333333333333333)"));
  int64_t v[64] = {10, 2, 90}, out, lo;
  CHECK(om__x_eval(tr, a, v, &out) && out == 62);
  v[2] = 91;
  CHECK(om__x_eval(tr, a, v, &out) && out == 63);
  v[2] = (int64_t)1 << 53;
  CHECK(om__x_eval(tr, a, v, &out) && out == (int64_t)(0x1p53 * 0.7));
  v[2]++;
  CHECK(!om__x_eval(tr, a, v, &out)); /* the Cast to double would round */
  CHECK(om__x_min(tr, a, &lo) && lo == 0);
  int64_t k;
  CHECK(om__x_is_const(tr, om__x_fmul(tr, om__x_const(tr, 90), 0.7, "test"), &k) && k == 62);
  CHECK(om__x_fmul(tr, w, 0.7, "test") >= 0); /* w up to 2^27 */
  int www = om__x_mul(tr, w, om__x_mul(tr, w, h)); /* h * w * w reaches 2^54 at h = 1 (undeclared: its minimum) */
  CHECK_ERROR(om__x_fmul(tr, www, 0.7, "test") >= 0, OM_ERR_TRACE_SYMBOLIC_SHAPE,
              "test: the size h*w*w, scaled by 0.7 and rounded down in double, may reach 2^53 at the declared maxima (18014398509481984)");
  CHECK(!om__state()->trace); /* the refusal ended the trace */
  om_tensor *t[] = {ex, x};
  om__release_all(t, 2);
}

/* ---- the integers a model computes from sizes ---- */

static int last_step(om_tensor *const *in, om_tensor **out) { /* out[:, T - 1], as RNNs take it */
  om_tensor *x = in[0];
  const int64_t *s = om_tensor_shape(x);
  return (out[0] = om_select(x, 1, s[1] - 1)) ? 1 : -1;
}

static int flat_and_back(om_tensor *const *in, om_tensor **out) {
  om_tensor *x = in[0];
  const int64_t *s = om_tensor_shape(x);
  om_tensor *f = om_reshape(x, (int64_t[]){s[0] * s[1], s[2]}, 2), *r = om_relu(f);
  out[0] = f;
  out[1] = om_reshape(r, s, 3);
  om_tensor_release(r);
  return out[1] ? 2 : -1;
}

static int mean_by_hand(om_tensor *const *in, om_tensor **out) { /* x.sum(1) / T */
  om_tensor *x = in[0];
  const int64_t *s = om_tensor_shape(x);
  om_tensor *sum = om_sum(x, (int64_t[]){1}, 1, false), *n = om_scalar((double)s[1], OM_FLOAT32);
  out[0] = om_div(sum, n);
  om_tensor_release(sum), om_tensor_release(n);
  return out[0] ? 1 : -1;
}

static int slices(om_tensor *const *in, om_tensor **out) {
  om_tensor *x = in[0];
  const int64_t *s = om_tensor_shape(x);
  out[0] = om_slice(x, 1, 1, s[1] - 1, 1);  /* x[:, 1:T-1] */
  out[1] = om_slice(x, 1, -3, INT64_MAX, 1); /* x[:, -3:]: 3 whatever T */
  out[2] = om_slice(x, 2, 1, 3, 1);          /* a fixed axis stays fixed */
  return out[2] ? 3 : -1;
}

static int expand_twice(om_tensor *const *in, om_tensor **out) { /* to [B, 2 T, C] */
  om_tensor *x = in[0];
  const int64_t *s = om_tensor_shape(x);
  om_tensor *m = om_sum(x, (int64_t[]){1}, 1, true);
  out[0] = om_expand(m, (int64_t[]){s[0], 2 * s[1], s[2]}, 3);
  om_tensor_release(m);
  return out[0] ? 1 : -1;
}

static int every_fourth(om_tensor *const *in, om_tensor **out) { /* x.reshape(-1).indexSelect(0, arange(0, 4 B T, 4)) */
  const int64_t *s = om_tensor_shape(in[0]);
  om_tensor *flat = om_reshape(in[0], (int64_t[]){-1}, 1), *ids = om_arange(0, (double)(4 * s[0] * s[1]), 4, OM_INT64);
  out[0] = flat && ids ? om_index_select(flat, 0, ids) : NULL;
  om_tensor *t[] = {flat, ids};
  om__release_all(t, 2);
  return out[0] ? 1 : -1;
}

static int second_piece(om_tensor *const *in, om_tensor **out) { /* x.reshape(-1).split(40)[1]: the rest at B = 3 */
  om_tensor *p[64], *flat = om_reshape(in[0], (int64_t[]){-1}, 1);
  int k = flat ? om_split(flat, 40, 0, p, 64) : -1;
  out[0] = k >= 2 ? om_tensor_retain(p[1]) : NULL;
  for (int i = 0; i < k; i++) om_tensor_release(p[i]);
  om_tensor_release(flat);
  if (k == 1) om_set_error(OM_ERR_INVALID_ARGUMENT, "one piece");
  return out[0] ? 1 : -1;
}

static int capped(om_tensor *const *in, om_tensor **out) { /* x.narrow(1, 0, Math.min(T - 1, 6)) */
  int64_t t = om_tensor_shape(in[0])[1] - 1;
  return (out[0] = om_slice(in[0], 1, 0, t < 6 ? t : 6, 1)) ? 1 : -1;
}

static int created(om_tensor *const *in, om_tensor **out) {
  om_tensor *x = in[0];
  const int64_t *s = om_tensor_shape(x);
  om_tensor *z = om_zeros((int64_t[]){s[0], 2 * s[1], s[2]}, 3, OM_FLOAT32);
  om_tensor *r = om_arange((double)s[1] - 1, -1, -1, OM_INT64); /* T - 1, ..., 0 */
  om_tensor *c = om_cat((om_tensor *[]){x, x}, 2, 1);
  out[0] = om_add(c, z);
  out[1] = om_index_select(x, 1, r);
  om_tensor *t[] = {z, r, c};
  om__release_all(t, 3);
  return out[1] ? 2 : -1;
}

/* The sizes a model computes are written as what they are, so the graph follows every size:
 * T - 1 is the index -1 (no Shape node), B * T a -1 in a Reshape, T a Shape value, 2 T a Mul. */
TEST(computed_integers) {
  om_tensor *ex = ex_bs();
  om_traced_model *m;
  CHECK(om_trace_begin());
  CHECK((m = om_test_trace(last_step, ex, BS, 1)) != NULL);
  om_test_check_out(m, 0, "batch,4");
  CHECK_EQ_INT(om_traced_count(m, OM_TRACED_NODE), 1); /* Gather(x, -1): no Shape */
  om_traced_release(m);
  CHECK(om_trace_begin());
  CHECK((m = om_test_trace(flat_and_back, ex, BS, 2)) != NULL);
  om_test_check_out(m, 0, "batch*seq,4");
  om_test_check_out(m, 1, "batch,seq,4");
  CHECK_EQ_INT(om_test_count_op(m, "Shape"), 1);
  CHECK_EQ_INT(om_test_count_op(m, "Reshape"), 2);
  om_traced_release(m);
  CHECK(om_trace_begin());
  CHECK((m = om_test_trace(mean_by_hand, ex, BS, 1)) != NULL);
  om_test_check_out(m, 0, "batch,4");
  /* the divisor is the sequence's size, computed (one Cast); the sum over seq runs in float64 as
   * eager's (om__lower_sum_in_double: Cast there and back) */
  CHECK_EQ_INT(om_test_count_op(m, "Cast"), 3);
  om_traced_release(m);
  CHECK(om_trace_begin());
  CHECK((m = om_test_trace(slices, ex, BS, 3)) != NULL);
  om_test_check_out(m, 0, "batch,seq-min(seq,2),4"); /* empty below 2, as eager's */
  om_test_check_out(m, 1, "batch,min(seq,3),4");
  om_test_check_out(m, 2, "batch,seq,2");
  CHECK_EQ_INT(om_test_count_op(m, "Shape"), 0);
  om_traced_release(m);
  CHECK(om_trace_begin());
  CHECK((m = om_test_trace(expand_twice, ex, BS, 1)) != NULL);
  om_test_check_out(m, 0, "batch,2*seq,4");
  om_traced_release(m);
  CHECK(om_trace_begin());
  CHECK((m = om_test_trace(created, ex, BS, 2)) != NULL);
  om_test_check_out(m, 0, "batch,2*seq,4");
  om_test_check_out(m, 1, "batch,seq,4");
  om_traced_release(m);
  /* floor(4 B T / 4) is B T: a floor whose residues the sizes never take is the polynomial it is */
  CHECK(om_trace_begin());
  CHECK((m = om_test_trace(every_fourth, ex, BS, 1)) != NULL);
  om_test_check_out(m, 0, "batch*seq");
  om_traced_release(m);
  /* a bound clamped at some sizes only: the piece is 4 B T - 40 clamped to [0, 40]. The model
   * fails where B T <= 10 (one piece), which is no range of each symbol: at batch 2 it answers from
   * seq 6, so raising batch's minimum to 3 would narrow where the model answers; the trace is
   * refused naming the declaration that holds, and declared so, 4 B T - 40 is 8 to 40 there:
   * min(4 B T, 80) - 40. Then a size capped by the model, min(T - 1, 6) */
  CHECK(om_trace_begin());
  CHECK(om_test_trace(second_piece, ex, BS, 1) == NULL && om_last_error() == OM_ERR_TRACE_SYMBOLIC_SHAPE);
  CHECK(strstr(om_last_error_message(), "yet at batch=2, seq=6 (with 'seq' moved too) the model answers") != NULL);
  CHECK(strstr(om_last_error_message(), "om.Dim('batch', { min: 3, max: 128 }), om.Dim('seq', { min: 4, max: 213 })") != NULL);
  CHECK(!om_trace_active());
  CHECK(om_trace_begin() && om_trace_dim("batch", 1, 3, 0) && om_trace_dim("seq", 1, 4, 0));
  CHECK((m = om_test_trace(second_piece, ex, BS, 1)) != NULL);
  om_test_check_out(m, 0, "min(4*batch*seq,80)-40");
  CHECK_EQ_INT(om_test_count_op(m, "Slice"), 1);
  om_traced_release(m);
  CHECK(om_trace_begin());
  CHECK((m = om_test_trace(capped, ex, BS, 1)) != NULL);
  om_test_check_out(m, 0, "batch,min(seq,7)-1,4");
  CHECK_EQ_INT(om_test_count_op(m, "Min"), 1);
  om_traced_release(m);
  om_tensor_release(ex);
}

static int reshape_fixed_four(om_tensor *const *in, om_tensor **out) { /* [batch, 16] -> [4, batch, 4] */
  om_tensor *x = in[0];
  const int64_t *s = om_tensor_shape(x);
  return (out[0] = om_reshape(x, (int64_t[]){4, s[0], 4}, 3)) ? 1 : -1;
}

/* A fixed size equal to a symbol's example size stays fixed (the old trap): traced at a batch of
 * 4, the 4 of the model is a 4 and the batch the batch. */
TEST(fixed_sizes_stay_fixed) {
  om_tensor *ex = om_randn((int64_t[]){4, 16}, 2, 4, true);
  CHECK(om_trace_begin());
  om_traced_model *m = om_test_trace(reshape_fixed_four, ex, (const char *[]){"batch", NULL}, 1);
  CHECK(m != NULL);
  om_test_check_out(m, 0, "4,batch,4");
  om_traced_release(m);
  om_tensor_release(ex);
}

/* ---- extents the probe chooses, and ranges ---- */

static int conv_branches(om_tensor *const *in, om_tensor **out) { /* a ResNet block's add */
  om_tensor *x = in[0];
  om_tensor *w3 = om_ones((int64_t[]){4, 2, 3, 3}, 4, OM_FLOAT32), *w1 = om_ones((int64_t[]){4, 2, 1, 1}, 4, OM_FLOAT32);
  om_tensor *a = om_conv2d(x, w3, NULL, (int64_t[]){2, 2}, (int64_t[]){1, 1}, (int64_t[]){1, 1}, 1);
  om_tensor *b = om_conv2d(x, w1, NULL, (int64_t[]){2, 2}, (int64_t[]){0, 0}, (int64_t[]){1, 1}, 1);
  out[0] = om_add(a, b);
  om_tensor *t[] = {w3, w1, a, b};
  om__release_all(t, 4);
  return out[0] ? 1 : -1;
}

static int pool_up_cat(om_tensor *const *in, om_tensor **out) { /* a UNet's skip */
  om_tensor *x = in[0];
  om_tensor *w = om_ones((int64_t[]){2, 2, 2, 2}, 4, OM_FLOAT32);
  om_tensor *p = om_max_pool2d(x, (int64_t[]){2, 2}, (int64_t[]){2, 2}, (int64_t[]){0, 0}, (int64_t[]){1, 1}, false);
  om_tensor *u = p ? om_conv_transpose2d(p, w, NULL, (int64_t[]){2, 2}, (int64_t[]){0, 0}, (int64_t[]){0, 0}, 1, (int64_t[]){1, 1}) : NULL;
  out[0] = om_cat((om_tensor *[]){u, x}, 2, 1);
  om_tensor *t[] = {w, p, u};
  om__release_all(t, 3);
  return out[0] ? 1 : -1;
}

static int valid_conv(om_tensor *const *in, om_tensor **out) { /* 3x3, no padding: h - 2 */
  om_tensor *x = in[0];
  om_tensor *w = om_ones((int64_t[]){3, 2, 3, 3}, 4, OM_FLOAT32);
  out[0] = om_conv2d(x, w, NULL, (int64_t[]){1, 1}, (int64_t[]){0, 0}, (int64_t[]){1, 1}, 1);
  om_tensor_release(w);
  return out[0] ? 1 : -1;
}

static om_tensor *table; /* a [12, 4] table of learned positions */
static int positions(om_tensor *const *in, om_tensor **out) {
  om_tensor *x = in[0];
  const int64_t *s = om_tensor_shape(x);
  om_tensor *rows = om_slice(table, 0, 0, s[1], 1);
  out[0] = om_add(x, rows);
  om_tensor_release(rows);
  return out[0] ? 1 : -1;
}

/* x.reshape(B, -1)[:, 12:24] of [B, 2, h, w]: 12 wide only where 2hw >= 24, which no probe moving
 * one symbol from the example sees (random model 8:1436), and narrower below, as eager clamps */
static int product_slice(om_tensor *const *in, om_tensor **out) {
  const int64_t *sh = om_tensor_shape(in[0]);
  om_tensor *flat = om_reshape(in[0], (int64_t[]){sh[0], -1}, 2);
  out[0] = om_slice(flat, 1, 12, 24, 1);
  om_tensor_release(flat);
  return out[0] ? 1 : -1;
}

/* The same with three symbols and [:, 4:8]: 4 wide wherever abc >= 8, clamped below (no single
 * minimum would make a fixed 4 hold: it was refused before the clamped extents). */
static int product_slice3(om_tensor *const *in, om_tensor **out) {
  const int64_t *sh = om_tensor_shape(in[0]);
  om_tensor *flat = om_reshape(in[0], (int64_t[]){sh[0], -1}, 2);
  out[0] = om_slice(flat, 1, 4, 8, 1);
  om_tensor_release(flat);
  return out[0] ? 1 : -1;
}

/* Equal extents are one expression (both ResNet branches are floor((h+1)/2)); a UNet skip holds
 * for multiples of 2 only, where the model fails at the others: the ranges narrow to them (and
 * the model says why), as declared; a call that needs a range narrows the symbol's. */
TEST(extents_and_ranges) {
  om_tensor *ex = ex_bhw(), *ex8 = om_randn((int64_t[]){2, 2, 8, 10}, 4, 2, true);
  CHECK(om_trace_begin());
  om_traced_model *m = om_test_trace(conv_branches, ex, BHW, 1);
  CHECK(m != NULL);
  om_test_check_out(m, 0, "batch,4,floor((h+1)/2),floor((w+1)/2)");
  CHECK_EQ_INT(om_test_count_op(m, "Shape"), 0);
  om_traced_release(m);
  const char *name, *why;
  int64_t mult, min, max;
  for (int declared = 0; declared < 2; declared++) {
    CHECK(om_trace_begin());
    CHECK(!declared || (om_trace_dim("h", 2, 2, 0) && om_trace_dim("w", 2, 2, 0)));
    m = om_test_trace(pool_up_cat, ex8, BHW, 1);
    CHECK(m != NULL);
    om_test_check_out(m, 0, "batch,4,h,w");
    for (int k = 1 - declared; k < 3 - declared; k++) /* declared first: h, w, batch */
      CHECK(om_traced_symbol(m, k, &name, &mult, &min, &max, &why) && mult == 2 && min == 2 && max == INT64_MAX &&
            (declared ? !why : why && strstr(why, "the call fails (cat: input 1 has shape")));
    om_traced_release(m);
  }
  CHECK(om_trace_begin());
  m = om_test_trace(valid_conv, ex, BHW, 1);
  om_test_check_out(m, 0, "batch,3,h-2,w-2");
  CHECK_EQ_INT(om_traced_symbol_count(m), 3);
  CHECK(om_traced_symbol(m, 1, &name, &mult, &min, &max, &why) && !strcmp(name, "h") && mult == 1 && min == 3 &&
        max == INT64_MAX && why && strstr(why, "conv2d"));
  CHECK(om_traced_symbol(m, 0, &name, &mult, &min, &max, &why) && min == 1 && !why);
  CHECK_ERROR(om_traced_symbol(m, 3, &name, NULL, NULL, NULL, NULL), OM_ERR_INVALID_ARGUMENT, "no symbol 3");
  om_traced_release(m);
  CHECK(om_trace_begin());
  m = om_test_trace(product_slice, ex, BHW, 1);
  int64_t hmin = 0, wmin = 0;
  CHECK(m && om_traced_symbol(m, 1, NULL, NULL, &hmin, NULL, NULL) && om_traced_symbol(m, 2, NULL, NULL, &wmin, NULL, NULL));
  if (m) om_test_check_out(m, 0, "batch,min(2*h*w,24)-min(2*h*w,12)");
  CHECK(hmin == 1 && wmin == 1); /* fewer columns where 2hw < 24, as eager's: no range to narrow */
  om_traced_release(m);
  om_tensor *ex3 = om_randn((int64_t[]){2, 3, 4, 5}, 4, 3, true);
  CHECK(om_trace_begin());
  m = om_test_trace(product_slice3, ex3, (const char *[]){"batch", "a", "b", "c"}, 1);
  if (m) om_test_check_out(m, 0, "batch,min(a*b*c,8)-min(a*b*c,4)");
  om_traced_release(m);
  om_tensor_release(ex3);
  table = om_randn((int64_t[]){12, 4}, 2, 5, true);
  om_tensor *exs = ex_bs();
  CHECK(om_trace_begin());
  m = om_test_trace(positions, exs, BS, 1);
  om_test_check_out(m, 0, "batch,seq,4");
  CHECK(om_traced_symbol(m, 1, &name, &mult, &min, &max, &why) && max == 12 && why && strstr(why, "add"));
  om_traced_release(m);
  om_tensor *t[] = {ex, ex8, exs, table};
  om__release_all(t, 4);
}

/* ---- refusals ---- */

static int random_of_the_size(om_tensor *const *in, om_tensor **out) {
  om_tensor *x = in[0];
  const int64_t *s = om_tensor_shape(x);
  om_tensor *r = om_randn(s, 3, 0, false);
  out[0] = om_add(x, r);
  om_tensor_release(r);
  return out[0] ? 1 : -1;
}

/* T * T % 17 % T: no size expression (T * T % 3 is one now, a function of T % 3: fit.c's residue_table) */
static int modulo_index(om_tensor *const *in, om_tensor **out) {
  om_tensor *x = in[0];
  const int64_t *s = om_tensor_shape(x);
  return (out[0] = om_select(x, 1, s[1] * s[1] % 17 % s[1])) ? 1 : -1;
}

static int baked_constant(om_tensor *const *in, om_tensor **out) { /* adds a fixed [3, 5, 4] */
  om_tensor *x = in[0];
  om_tensor *c = om_ones((int64_t[]){3, 5, 4}, 3, OM_FLOAT32);
  out[0] = om_add(x, c);
  om_tensor_release(c);
  return out[0] ? 1 : -1;
}

static int baked_unused(om_tensor *const *in, om_tensor **out) { /* the same add, its result dropped */
  om_tensor *x = in[0];
  om_tensor *c = om_ones((int64_t[]){3, 5, 4}, 3, OM_FLOAT32), *dropped = om_add(x, c);
  out[0] = dropped ? om_relu(x) : NULL;
  om_tensor *t[] = {c, dropped};
  om__release_all(t, 2);
  return out[0] ? 1 : -1;
}

static int slowly(om_tensor *const *in, om_tensor **out) { /* fails in the model's own code at other sizes */
  om_tensor *x = in[0];
  const int64_t *s = om_tensor_shape(x);
  if (s[1] != 5) return om_set_error(OM_ERR_INVALID_ARGUMENT, "the model wants 5 steps"), -1;
  return (out[0] = om_relu(x)) ? 1 : -1;
}

static int reads(om_tensor *const *in, om_tensor **out) {
  om_tensor *x = in[0];
  const int64_t *s = om_tensor_shape(x);
  (void)s, (void)out;
  double v;
  return om_tensor_item(x, &v) ? 0 : -1;
}

/* What no graph can express is refused at the call, naming it and the sizes, and the recording
 * ends (control flow on one size is an If: the_declared_range): random values of a changing size, an integer that is no size
 * expression, a size the model bakes in, a model that fails at other sizes. */
TEST(refusals) {
  om_tensor *ex = ex_bs();
  struct {
    om_test_model fn;
    om_error_kind kind;
    const char *msg;
  } cases[] = {
      {random_of_the_size, OM_ERR_TRACE_SYMBOLIC_SHAPE, "randn: a random tensor of shape [3,5,4] changes with the sizes; random values of a changing size cannot be written"},
      {modulo_index, OM_ERR_TRACE_SYMBOLIC_SHAPE, "select: argument 1 is 3 at the traced sizes, 2 at batch=7, seq=6, 0 at batch=6, seq=1"},
      {reads, OM_ERR_TRACE_DATA_DEPENDENT, "item: reads the values of a traced tensor of shape [3,5,4]"},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    CHECK(om_trace_begin());
    CHECK_ERROR(om_test_trace(cases[k].fn, ex, BS, 1) != NULL, cases[k].kind, cases[k].msg);
    CHECK(!om_trace_active());
  }
  om_tensor_release(ex);
}

/* A size the model bakes in, batch 3 and seq 5 (broadcast from 1 too): it answers at batch 1 and
 * 3 and seq 1 and 5 only. Cut on batch, and each piece of batch cut on seq in turn (a cut over a
 * second symbol inside a piece of the first): one-size pieces, joined by Ifs that fail (the
 * admitting Gather) at every other size, as the model does; the same where the model drops the
 * add's result (not recorded, but where it fails the model fails). */
TEST(cuts_on_two_symbols) {
  om_tensor *ex = ex_bs();
  om_test_model models[] = {baked_constant, baked_unused};
  for (int k = 0; k < 2; k++) {
    CHECK(om_trace_begin());
    om_traced_model *m = om_test_trace(models[k], ex, BS, 1);
    int64_t pieces[8] = {0};
    CHECK(m && om_traced_symbol_branches(m, 0, pieces, 4) == 2); /* batch */
    CHECK(m && pieces[0] == 1 && pieces[1] == 1 && pieces[2] == 3 && pieces[3] == 3);
    CHECK(m && om_traced_symbol_branches(m, 1, pieces, 4) == 2); /* seq: where the pieces of batch switch */
    CHECK(m && pieces[0] == 1 && pieces[1] == 1 && pieces[2] == 5 && pieces[3] == 5);
    CHECK(m && om_test_count_op(m, "If") == 1 && !om_trace_active());
    om_traced_release(m);
  }
  om_tensor_release(ex);
}

static int failing_model(void *ctx, om_tensor *const *in, int n, om_tensor **out, int max) {
  (void)ctx, (void)in, (void)n, (void)out, (void)max;
  om_set_error(OM_ERR_SHAPE_MISMATCH, "my model: no");
  return -1;
}

/* om_trace_run and om_trace_dim used wrongly: InvalidUsage naming why, the recording ended; the
 * model's own failure comes through with its kind and message. Symbolic axes record only inside
 * om_trace_run. */
TEST(usage) {
  om_tensor *ex = ex_bs(), *out[2];
  CHECK(om_trace_begin());
  om_tensor *x = om_trace_input("x", ex, BS);
  CHECK_ERROR(om_relu(x) != NULL, OM_ERR_TRACE_INVALID_USAGE, "relu: a trace with symbolic axes records only inside om_trace_run");
  CHECK(!om_trace_active());
  om_tensor_release(x);
  CHECK(om_trace_begin());
  CHECK_ERROR(om_trace_run(om_test_run_model, &(om_test_model){last_step}, out, 1) >= 0, OM_ERR_TRACE_INVALID_USAGE, "0 inputs declared");
  CHECK(om_trace_begin());
  x = om_trace_input("x", ex, BS);
  CHECK_ERROR(om_trace_run(NULL, NULL, out, 1) >= 0, OM_ERR_TRACE_INVALID_USAGE, "needs a function and room for its outputs");
  om_tensor_release(x);
  CHECK(om_trace_begin());
  x = om_trace_input("x", ex, BS);
  CHECK_ERROR(om_trace_run(failing_model, NULL, out, 1) >= 0, OM_ERR_SHAPE_MISMATCH, "my model: no");
  CHECK(!om_trace_active());
  om_tensor_release(x);
  CHECK(om_trace_begin());
  CHECK_ERROR(om_trace_dim("h", 0, 1, 0), OM_ERR_TRACE_INVALID_USAGE, "as a multiple of 0 from 1 to");
  CHECK(om_trace_begin());
  CHECK_ERROR(om_trace_dim("h", 4, 5, 7), OM_ERR_TRACE_INVALID_USAGE, "has no size");
  CHECK(om_trace_begin());
  CHECK(om_trace_dim("seq", 2, 2, 0));
  CHECK_ERROR(om_trace_input("x", ex, BS) != NULL, OM_ERR_TRACE_INVALID_USAGE,
              "symbolic axis 'seq' of 'x' has example size 5, which its declaration (a multiple of 2, from 2 to");
  CHECK(om_trace_begin());
  x = om_trace_input("x", ex, BS);
  CHECK(om_trace_run(om_test_run_model, &(om_test_model){last_step}, out, 1) == 1);
  CHECK_ERROR(om_trace_dim("seq", 1, 1, 0), OM_ERR_TRACE_INVALID_USAGE, "declared after the model ran");
  om_tensor_release(out[0]);
  om_tensor_release(x);
  om_tensor_release(ex);
}

/* An empty tensor on the way (a slice to nothing of a fixed axis, reshaped) traces and holds:
 * once a WASM out-of-bounds read in the reshape's extents. */
/* ---- the runs: liveness, data flow, ranges from where the model ends ---- */

static int last_piece(om_tensor *const *in, om_tensor **out) { /* x.split(3, 1).at(-1): more pieces at a longer seq */
  om_tensor *p[64];
  int n = om_split(in[0], 3, 1, p, 64);
  if (n < 0) return -1;
  out[0] = om_tensor_retain(p[n - 1]);
  om__release_all(p, n);
  return 1;
}

static int picks_by_size(om_tensor *const *in, om_tensor **out) { /* the same calls on other values at other sizes */
  om_tensor *a = om_relu(in[0]), *b = om_neg(in[0]);
  out[0] = a && b ? om_sub(om_tensor_shape(in[0])[1] > 6 ? a : b, om_tensor_shape(in[0])[1] > 6 ? b : a) : NULL;
  om_tensor *t[] = {a, b};
  om__release_all(t, 2);
  return out[0] ? 1 : -1;
}

static int needs_three(om_tensor *const *in, om_tensor **out) { /* ends below 3 steps in its own code */
  if (om_tensor_shape(in[0])[1] < 3) return om_set_error(OM_ERR_INVALID_ARGUMENT, "needs 3 steps"), -1;
  return (out[0] = om_relu(in[0])) ? 1 : -1;
}

static int positions_by_index(om_tensor *const *in, om_tensor **out) { /* a table of 12 positions: an index error past it */
  om_tensor *ids = om_arange(0, (double)om_tensor_shape(in[0])[1], 1, OM_INT64);
  om_tensor *rows = ids ? om_embedding(table, ids, 0, false) : NULL;
  out[0] = rows ? om_add(in[0], rows) : NULL;
  om_tensor *t[] = {ids, rows};
  om__release_all(t, 2);
  return out[0] ? 1 : -1;
}

static int padded_last_piece(om_tensor *const *in, om_tensor **out) { /* a UNet's pad to W, then split(5).at(-1) */
  om_tensor *x = in[0], *p[64];
  int64_t w = om_tensor_shape(x)[3];
  om_tensor *mp = om_max_pool2d(x, (int64_t[]){2, 2}, NULL, NULL, NULL, false);
  om_tensor *u = mp ? om_interpolate(mp, NULL, (double[]){2, 2}, OM_INTERPOLATE_NEAREST, false) : NULL;
  om_tensor *pd = u ? om_pad(u, (int64_t[]){0, w - om_tensor_shape(u)[3]}, 2, OM_PAD_CONSTANT, 0) : NULL;
  int k = pd ? om_split(pd, 5, 3, p, 64) : -1;
  out[0] = k > 0 ? om_tensor_retain(p[k - 1]) : NULL;
  for (int i = 0; i < k; i++) om_tensor_release(p[i]);
  om_tensor *t[] = {mp, u, pd};
  om__release_all(t, 3);
  return out[0] ? 1 : -1;
}

static int half_of_rest(om_tensor *const *in, om_tensor **out) { /* ends below 4 rows; ceil(rows / 2) of min(B - 2, 3) */
  om_tensor *x = in[0], *p[64], *head = om_slice(x, 0, 0, 6, 1); /* split whole, x has more pieces than p holds from 193 rows */
  int k = om_split(head, 3, 0, p, 64);
  om_tensor_release(head);
  for (int i = 0; i < k; i++) om_tensor_release(p[i]);
  if (k < 2) return om_set_error(OM_ERR_INVALID_ARGUMENT, "no second piece"), -1;
  om_tensor *rest = om_slice(x, 0, 2, 5, 1);
  int64_t rows = rest ? om_tensor_shape(rest)[0] : 0;
  int m = rest ? om_split(rest, (rows + 1) / 2, 0, p, 512) : -1;
  out[0] = m > 0 ? om_tensor_retain(p[0]) : NULL;
  for (int i = 0; i < m; i++) om_tensor_release(p[i]);
  om_tensor_release(rest);
  return out[0] ? 1 : -1;
}

static int last_of_26(om_tensor *const *in, om_tensor **out) { /* x.reshape(B * 9, -1).split(26).at(-1) */
  om_tensor *p[64];
  const int64_t *s = om_tensor_shape(in[0]);
  om_tensor *flat = om_reshape(in[0], (int64_t[]){s[0] * s[1], -1}, 2);
  int k = flat ? om_split(flat, 26, 0, p, 64) : -1;
  out[0] = k > 0 ? om_tensor_retain(p[k - 1]) : NULL;
  for (int i = 0; i < k; i++) om_tensor_release(p[i]);
  om_tensor_release(flat);
  return out[0] ? 1 : -1;
}

static om_tensor *w_dilated, *w_strided;

static int far_extent_first(om_tensor *const *in, om_tensor **out) { /* a pool + dilated conv, then conv.split(4).at(-1) */
  om_tensor *x = in[0], *p[64];
  om_tensor *mp = om_max_pool2d(x, (int64_t[]){3, 3}, NULL, NULL, NULL, true);
  out[1] = mp ? om_conv2d(mp, w_dilated, NULL, (int64_t[]){3, 3}, (int64_t[]){0, 0}, (int64_t[]){2, 2}, 1) : NULL;
  om_tensor *c = om_conv2d(x, w_strided, NULL, (int64_t[]){2, 2}, (int64_t[]){1, 1}, (int64_t[]){1, 1}, 1);
  int k = c ? om_split(c, 4, 3, p, 64) : -1;
  out[0] = k > 0 ? om_tensor_retain(p[k - 1]) : NULL;
  for (int i = 0; i < k; i++) om_tensor_release(p[i]);
  om_tensor *t[] = {mp, c};
  om__release_all(t, 2);
  if (out[0] && out[1]) return 2;
  om__release_all(out, 2);
  return -1;
}

static int halves(om_tensor *const *in, om_tensor **out) { /* [B, T, 4] -> [B, T / 2, 8]: T even only */
  const int64_t *s = om_tensor_shape(in[0]);
  if (s[1] % 2) return om_set_error(OM_ERR_INVALID_ARGUMENT, "reshape: shape[1] must be an integer"), -1;
  return (out[0] = om_reshape(in[0], (int64_t[]){s[0], s[1] / 2, 8}, 3)) ? 1 : -1;
}

/* Each live call is found in every run as the same live call on the same values: a split's
 * pieces the model drops are computed, not recorded (and the last one's start is fitted, with
 * more runs: 3 * floor((seq - 1) / 3)); other values at other sizes are another path. A run where
 * the model ends below the example narrows the minimum, one past a table of positions the
 * maximum; sizes that must be multiples are refused with the declaration. */
TEST(runs_at_other_sizes) {
  om_tensor *ex = ex_bs(), *ex7 = om_randn((int64_t[]){3, 7, 4}, 3, 8, true), *ex6 = om_randn((int64_t[]){3, 6, 4}, 3, 9, true);
  CHECK(om_trace_begin());
  om_traced_model *m = om_test_trace(last_piece, ex7, BS, 1);
  om_test_check_out(m, 0, "batch,seq-3*floor((seq+2)/3)+3,4"); /* 3 * floor((seq - 1) / 3) is where it starts */
  CHECK_EQ_INT(om_test_count_op(m, "Slice"), 1);
  om_traced_release(m);
  CHECK(om_trace_begin()); /* other values from seq 7 on: an If on seq, a piece each side */
  m = om_test_trace(picks_by_size, ex, BS, 1);
  int64_t pieces[4];
  CHECK(m && om_test_count_op(m, "If") == 1 && om_traced_symbol_branches(m, 1, pieces, 2) == 2 && pieces[1] == 6 && pieces[2] == 7);
  om_traced_release(m);
  const char *name, *why;
  int64_t mult, min, max;
  CHECK(om_trace_begin());
  m = om_test_trace(needs_three, ex, BS, 1);
  CHECK(m && om_traced_symbol(m, 1, &name, &mult, &min, &max, &why) && min == 3 && why && strstr(why, "at batch=3, seq=2 the model fails (needs 3 steps)"));
  om_traced_release(m);
  table = om_randn((int64_t[]){12, 4}, 2, 5, true);
  CHECK(om_trace_begin());
  m = om_test_trace(positions_by_index, ex, BS, 1);
  CHECK(m && om_traced_symbol(m, 1, &name, &mult, &min, &max, &why) && max == 12 && why &&
        strstr(why, "at batch=3, seq=13 the model fails at embedding (call 2): embedding: index 12 is out of range for a weight of 12 rows"));
  om_traced_release(m);
  /* the run at a batch of 1 fails (one piece), and so do 2 and 3 where the minimum is checked;
   * at 4 the model works but computes ceil(2 / 2) = 1 where the graph has 2 (the runs above the
   * example all see 3 rows): no range hides an answer the graph would not give, so the sizes
   * below 5 are a piece of their own (an If), which holds from 4, where the model answers */
  om_tensor *ex5 = om_randn((int64_t[]){5, 8}, 2, 11, true);
  CHECK(om_trace_begin());
  m = om_test_trace(half_of_rest, ex5, (const char *[]){"batch", NULL}, 1);
  int64_t below[4];
  CHECK(m && om_test_count_op(m, "If") == 1 && om_traced_symbol(m, 0, &name, &mult, &min, &max, &why) && min == 4);
  CHECK(m && om_traced_symbol_branches(m, 0, below, 2) == 2 && below[0] == 4 && below[1] == 4 && below[2] == 5);
  om_traced_release(m);
  CHECK(om_trace_begin());
  CHECK(om_trace_dim("batch", 1, 5, 0));
  m = om_test_trace(half_of_rest, ex5, (const char *[]){"batch", NULL}, 1);
  CHECK(m && om_traced_symbol(m, 0, &name, &mult, &min, &max, &why) && min == 5 && !why);
  om_traced_release(m);
  om_tensor_release(ex5);
  /* a split by more than 16: its last piece starts at the largest multiple of 26 below 9 B, the
   * divisor being what every start is a multiple of (no run set shows 26 residues) */
  om_tensor *rows = om_randn((int64_t[]){3, 9, 4}, 3, 15, true);
  CHECK(om_trace_begin());
  m = om_test_trace(last_of_26, rows, (const char *[]){"batch", NULL, NULL}, 1);
  om_test_check_out(m, 0, "9*batch-26*floor((9*batch+25)/26)+26,4");
  om_traced_release(m);
  om_tensor_release(rows);
  /* the last piece starts at 4 * floor(w / 8) (the conv's floor(w / 2) + 1, less one, by 4), not
   * at 4 * floor((w + 8) / 9) - 4, an affine form in the pooled conv's extent floor((w + 8) / 9)
   * that gives the same at every run: the call's own sizes are tried first */
  w_dilated = om_randn((int64_t[]){2, 2, 1, 1}, 4, 12, false);
  w_strided = om_randn((int64_t[]){4, 2, 2, 2}, 4, 13, false);
  om_tensor *img2 = om_randn((int64_t[]){3, 2, 12, 10}, 4, 14, true);
  CHECK(om_trace_begin());
  m = om_test_trace(far_extent_first, img2, (const char *[]){"n", NULL, "h", "w"}, 2);
  om_test_check_out(m, 0, "n,4,floor(h/2)+1,floor(w/2)-4*floor(w/8)+1");
  om_traced_release(m);
  om_tensor *ws[] = {w_dilated, w_strided, img2};
  om__release_all(ws, 3);
  /* the pad is W mod 2: more runs move both symbols (a parity looks monotone in h at five
   * sizes), and the runs that repeat w's size count once: the last piece starts at
   * 5 * floor((w - 1) / 5), not at a form that fits five sizes of w seen 21 times */
  om_tensor *img = om_randn((int64_t[]){3, 2, 12, 11}, 4, 10, true);
  CHECK(om_trace_begin());
  m = om_test_trace(padded_last_piece, img, (const char *[]){NULL, NULL, "h", "w"}, 1);
  om_test_check_out(m, 0, "3,2,2*floor(h/2),w-5*floor((w+4)/5)+5");
  om_traced_release(m);
  om_tensor_release(img);
  for (int declared = 0; declared < 2; declared++) { /* where the model fails at odd sizes, seq narrows to the even ones */
    CHECK(om_trace_begin());
    CHECK(!declared || om_trace_dim("seq", 2, 2, 0));
    m = om_test_trace(halves, ex6, BS, 1);
    om_test_check_out(m, 0, "batch,seq/2,8");
    int64_t mult;
    CHECK(om_traced_symbol(m, 1 - declared, NULL, &mult, &min, NULL, &why) && mult == 2 && min == 2 && (declared ? !why : why != NULL));
    om_traced_release(m);
  }
  /* a model that answers at one size alone: the symbol is that size */
  CHECK(om_trace_begin());
  m = om_test_trace(slowly, ex, BS, 1);
  CHECK(om_traced_symbol(m, 1, NULL, NULL, &min, &max, &why) && min == 5 && max == 5 && why && strstr(why, "the model wants 5 steps"));
  om_traced_release(m);
  om_tensor *t[] = {ex, ex7, ex6, table};
  om__release_all(t, 4);
}

/* Sizes past the old runs: relu above a threshold on seq, neg up to it; a slice that keeps one
 * more row from a product of the sizes up. */
static int64_t threshold = 32;
static int branch_on_seq(om_tensor *const *in, om_tensor **out) {
  return (out[0] = om_tensor_shape(in[0])[1] > threshold ? om_relu(in[0]) : om_neg(in[0])) ? 1 : -1;
}
static int rows_by_product(om_tensor *const *in, om_tensor **out) {
  const int64_t *s = om_tensor_shape(in[0]);
  return (out[0] = om_slice(in[0], 2, 0, s[0] * s[1] >= 600 ? 2 : 1, 1)) ? 1 : -1;
}

/* The runs check each symbol over its whole range (to 32768 without a max), bisected to the
 * exact size where the model does another thing: an If on that size, each piece traced on its
 * own (src/trace/branch.c); declared within it, one piece, which says what it checked. A
 * threshold on a product of two sizes is SymbolicShape with both and the declaration. */
TEST(the_declared_range) {
  om_tensor *ex = ex_bs();
  int64_t lo, hi;
  for (int k = 0; k < 3; k++) {
    threshold = (int64_t[]){32, 99, 1000}[k];
    CHECK(om_trace_begin());
    om_traced_model *m = om_test_trace(branch_on_seq, ex, BS, 1);
    int64_t pieces[6];
    CHECK(m && om_test_count_op(m, "If") == 1 && om_traced_symbol_branches(m, 1, pieces, 3) == 2);
    CHECK(m && pieces[0] == 1 && pieces[1] == threshold && pieces[2] == threshold + 1 && pieces[3] == INT64_MAX);
    CHECK(m && om_traced_symbol_branches(m, 0, pieces, 3) == 0);
    CHECK_ERROR(om_traced_symbol_branches(m, 2, pieces, 3) >= 0, OM_ERR_INVALID_ARGUMENT, "traced_symbol_branches: no symbol 2");
    om_traced_release(m);
    CHECK(om_trace_begin() && om_trace_dim("seq", 1, 1, threshold));
    m = om_test_trace(branch_on_seq, ex, BS, 1);
    CHECK(m && om_test_count_op(m, "Neg") == 1);
    CHECK(m && om_traced_symbol_checked(m, 0, &lo, &hi) && lo == 1 && hi == threshold); /* seq, declared first */
    CHECK(m && om_traced_symbol_checked(m, 1, &lo, &hi) && lo == 1 && hi == 32768);
    CHECK_ERROR(om_traced_symbol_checked(m, 2, &lo, &hi), OM_ERR_INVALID_ARGUMENT, "traced_symbol_checked: no symbol 2");
    om_traced_release(m);
  }
  /* a trace written as branches finishes with the outputs om_trace_run returned (one twice: an
   * Identity of its own), not with another tensor */
  threshold = 32;
  om_tensor *outs[2] = {0}, *x = (om_trace_begin(), om_trace_input("x", ex, BS));
  CHECK(x && om_trace_run(om_test_run_model, &(om_test_model){branch_on_seq}, outs, 2) == 1);
  om_traced_model *twice = om_trace_finish((om_tensor *[]){outs[0], outs[0]}, (const char *[]){"a", "b"}, 2);
  CHECK(twice && om_test_count_op(twice, "Identity") == 1 && om_traced_count(twice, OM_TRACED_OUTPUT) == 2);
  om_traced_release(twice);
  om_tensor_release(outs[0]);
  om_tensor_release(x);
  x = (om_trace_begin(), om_trace_input("x", ex, BS));
  CHECK(x && om_trace_run(om_test_run_model, &(om_test_model){branch_on_seq}, outs, 2) == 1);
  CHECK_ERROR(om_trace_finish(&ex, (const char *[]){"y"}, 1) != NULL, OM_ERR_TRACE_INVALID_USAGE,
              "trace_finish: output 0 is not one om_trace_run returned; a model written as branches finishes with those outputs");
  CHECK(!om_trace_active());
  om_tensor_release(outs[0]);
  om_tensor_release(x);
  /* a product of the two: both are named, one step apart on the line where both move */
  CHECK(om_trace_begin());
  CHECK(om_test_trace(rows_by_product, ex, BS, 1) == NULL && om_last_error() == OM_ERR_TRACE_SYMBOLIC_SHAPE);
  long long b1, s1, b0, s0, mb, ms;
  const char *msg = om_last_error_message();
  CHECK(sscanf(msg, "slice: the model changes at a size threshold: at batch=%lld, seq=%lld it passes 2 as argument 2 here "
               "(call 1), where the graph computes 1; at batch=%lld, seq=%lld", &b1, &s1, &b0, &s0) == 4);
  CHECK(b1 * s1 >= 600 && b0 * s0 < 600 && b1 - b0 <= 1 && s1 - s0 <= 1);
  const char *decl = strstr(msg, "declare ");
  CHECK(decl && sscanf(decl, "declare om.Dim('batch', { min: 1, max: %lld }), om.Dim('seq', { min: 1, max: %lld })", &mb, &ms) == 2 &&
        mb == b0 && ms == s0);
  om_tensor_release(ex);
}

/* branch_on_seq where the model's own code fails off a multiple of 4 (seq % 4), or below 12. */
static int quarters_branch(om_tensor *const *in, om_tensor **out) {
  if (om_tensor_shape(in[0])[1] % 4) return om_set_error(OM_ERR_INVALID_ARGUMENT, "wants a multiple of 4 steps"), -1;
  return branch_on_seq(in, out);
}
static int twelve_branch(om_tensor *const *in, om_tensor **out) {
  if (om_tensor_shape(in[0])[1] < 12) return om_set_error(OM_ERR_INVALID_ARGUMENT, "wants 12 steps"), -1;
  return branch_on_seq(in, out);
}

/* A range narrowed where the model fails (to a multiple, or a minimum) and cut into an If keeps
 * its reason: each piece is traced with the narrowed range as its declaration, and the pieces
 * joined report what the narrowing said (the piece above has its lower end at the cut, no
 * reason). */
TEST(narrowed_ranges_cut) {
  om_tensor *ex = om_randn((int64_t[]){3, 8, 4}, 3, 16, true);
  threshold = 32;
  om_test_model models[] = {quarters_branch, twelve_branch};
  const char *whys[] = {"wants a multiple of 4 steps", "wants 12 steps"};
  for (int k = 0; k < 2; k++) {
    if (k) om_tensor_release(ex), ex = om_randn((int64_t[]){3, 14, 4}, 3, 17, true);
    CHECK(om_trace_begin());
    om_traced_model *m = om_test_trace(models[k], ex, BS, 1);
    const char *name, *why;
    int64_t mult, min, max, pieces[6];
    CHECK(m && om_test_count_op(m, "If") == 1 && om_traced_symbol(m, 1, &name, &mult, &min, &max, &why));
    CHECK(m && !strcmp(name, "seq") && mult == (k ? 1 : 4) && min == (k ? 12 : 4) && max == INT64_MAX && why && strstr(why, whys[k]));
    CHECK(m && om_traced_symbol_branches(m, 1, pieces, 3) == 2 && pieces[0] == min && pieces[1] == 32 &&
          pieces[2] == (k ? 33 : 36) && pieces[3] == INT64_MAX);
    CHECK(m && om_traced_symbol(m, 0, &name, &mult, &min, &max, &why) && mult == 1 && min == 1 && max == INT64_MAX && !why);
    om_traced_release(m);
  }
  om_tensor_release(ex);
}

/* Another op at each seq below 5 (abs, neg, exp, relu), tanh from 5; a loop over seq's rows. */
static int op_by_small_seq(om_tensor *const *in, om_tensor **out) {
  int64_t seq = om_tensor_shape(in[0])[1];
  om_tensor *(*const by[])(om_tensor *) = {om_abs, om_neg, om_exp, om_relu};
  return (out[0] = seq < 5 ? by[seq - 1](in[0]) : om_tanh(in[0])) ? 1 : -1;
}
static int loop_over_seq(om_tensor *const *in, om_tensor **out) {
  om_tensor *v = om_select(in[0], 1, 0);
  for (int64_t i = 1; v && i < om_tensor_shape(in[0])[1]; i++) {
    om_tensor *row = om_select(in[0], 1, i), *sum = row ? om_add(v, row) : NULL;
    om_tensor_release(row);
    om_tensor_release(v);
    v = sum;
  }
  return (out[0] = v) ? 1 : -1;
}
static int even_loop(om_tensor *const *in, om_tensor **out) { /* loop_over_seq where the model fails at an odd seq */
  if (om_tensor_shape(in[0])[1] % 2) return om_set_error(OM_ERR_INVALID_ARGUMENT, "wants an even number of steps"), -1;
  return loop_over_seq(in, out);
}
/* seq's rows (row i, or row i * i % seq when squared), each negated, stacked again: a loop that
 * collects its steps (a Loop's scan output), or one whose step moves other than by a constant
 * step (no Loop written). */
static int rows_stacked_by(om_tensor *const *in, om_tensor **out, bool squared) {
  int64_t n = om_tensor_shape(in[0])[1];
  om_tensor *rows[64] = {0};
  bool ok = n <= 64;
  for (int64_t i = 0; ok && i < n; i++) {
    om_tensor *row = om_select(in[0], 1, squared ? i * i % n : i);
    ok = (rows[i] = row ? om_neg(row) : NULL) != NULL;
    om_tensor_release(row);
  }
  out[0] = ok ? om_stack(rows, (int)n, 1) : NULL;
  for (int64_t i = 0; i < n && i < 64; i++) om_tensor_release(rows[i]);
  return out[0] ? 1 : -1;
}
static int rows_stacked(om_tensor *const *in, om_tensor **out) { return rows_stacked_by(in, out, false); }
static int rows_squared_stacked(om_tensor *const *in, om_tensor **out) { return rows_stacked_by(in, out, true); }
/* A running sum over seq's rows from the last to the first (from zeros), each step kept in time
 * order and stacked: a backwards loop (its index counted from the end) whose steps join last to
 * first. */
static int backwards_stacked(om_tensor *const *in, om_tensor **out) {
  int64_t n = om_tensor_shape(in[0])[1];
  om_tensor *steps[64] = {0}, *acc = n <= 64 ? om_full((int64_t[]){om_tensor_shape(in[0])[0], 4}, 2, OM_FLOAT32, 0) : NULL;
  bool ok = acc != NULL;
  for (int64_t i = n - 1; ok && i >= 0; i--) {
    om_tensor *row = om_select(in[0], 1, i), *next = row ? om_add(acc, row) : NULL;
    om_tensor_release(row);
    om_tensor_release(acc);
    ok = (acc = steps[i] = next) != NULL && om_tensor_retain(acc);
  }
  out[0] = ok ? om_stack(steps, (int)n, 1) : NULL;
  for (int64_t i = 0; i < n && i < 64; i++) om_tensor_release(steps[i]);
  om_tensor_release(acc);
  return out[0] ? 1 : -1;
}
/* A decoder fed its own output over seq: y = tanh(y * w + mean(x)) from a constant y, each y
 * stacked. Its first step folds y * w to a constant, so it stays before the Loop: seq - 1 trips,
 * none at seq = 1, where the Loop runs once and keeps none of it. */
static int decoder_stacked(om_tensor *const *in, om_tensor **out) {
  int64_t n = om_tensor_shape(in[0])[1], b = om_tensor_shape(in[0])[0];
  om_tensor *steps[64] = {0}, *c = om_mean(in[0], (int64_t[]){1}, 1, false), *w = om_full((int64_t[]){4}, 1, OM_FLOAT32, 0.5);
  om_tensor *y = om_full((int64_t[]){b, 4}, 2, OM_FLOAT32, 0.1);
  bool ok = n <= 64 && c && w && y;
  for (int64_t i = 0; ok && i < n; i++) {
    om_tensor *m = om_mul(y, w), *s = m ? om_add(m, c) : NULL, *next = s ? om_tanh(s) : NULL;
    om_tensor_release(m), om_tensor_release(s), om_tensor_release(y);
    ok = (y = steps[i] = next) != NULL && om_tensor_retain(y);
  }
  out[0] = ok ? om_stack(steps, (int)n, 1) : NULL;
  for (int64_t i = 0; i < n && i < 64; i++) om_tensor_release(steps[i]);
  om_tensor_release(y), om_tensor_release(c), om_tensor_release(w);
  return out[0] ? 1 : -1;
}

/* A running sum over pairs of seq's rows, floor(seq / 2) steps (rows 2i and 2i + 1): a loop of a
 * trip every two sizes. */
static int pairs_summed(om_tensor *const *in, om_tensor **out) {
  om_tensor *acc = om_full((int64_t[]){om_tensor_shape(in[0])[0], 4}, 2, OM_FLOAT32, 0);
  for (int64_t i = 0; acc && i < om_tensor_shape(in[0])[1] / 2; i++) {
    om_tensor *a = om_select(in[0], 1, 2 * i), *b = om_select(in[0], 1, 2 * i + 1), *ab = a && b ? om_mul(a, b) : NULL;
    om_tensor *next = ab ? om_add(acc, ab) : NULL;
    om_tensor_release(a), om_tensor_release(b), om_tensor_release(ab), om_tensor_release(acc);
    acc = next;
  }
  return (out[0] = acc) ? 1 : -1;
}

/* A loop of floor(seq / 2) trips is one Loop, its trip count seq / 2 computed in the graph
 * (Shape, Div, Squeeze), checked against eager at every residue (src/trace/branch.c). */
TEST(loops_of_a_floor_division) {
  om_tensor *ex = ex_bs();
  CHECK(om_trace_begin());
  om_traced_model *m = om_test_trace(pairs_summed, ex, BS, 1);
  CHECK(m && om_test_count_op(m, "Loop") == 1 && om_test_count_op(m, "Div") == 1 && om_test_count_op(m, "Sub") == 0);
  const char *name = NULL, *why = NULL;
  int64_t min = 0, max = 0;
  CHECK(m && om_traced_symbol(m, 1, &name, NULL, &min, &max, &why) && !strcmp(name, "seq") && min == 1 && max == INT64_MAX && !why);
  om_traced_release(m);
  CHECK(!om_trace_active());
  om_tensor_release(ex);
}

/* A running sum of seq's rows 0 to trips - 1, with trips = per * seq / div (C's division: the
 * floor) when stop is 0, else min(seq, stop). */
static int64_t sum_per, sum_div, sum_stop, sum_add;
static int rows_summed(om_tensor *const *in, om_tensor **out) {
  int64_t seq = om_tensor_shape(in[0])[1], trips = sum_stop ? (seq < sum_stop ? seq : sum_stop) : (sum_per * seq + sum_add) / sum_div;
  om_tensor *acc = om_full((int64_t[]){om_tensor_shape(in[0])[0], 4}, 2, OM_FLOAT32, 0);
  for (int64_t i = 0; acc && i < trips; i++) {
    om_tensor *a = om_select(in[0], 1, i), *half = a ? om_scale(acc, 0.5) : NULL, *next = half ? om_add(half, a) : NULL;
    om_tensor_release(a), om_tensor_release(half), om_tensor_release(acc);
    acc = next;
  }
  return (out[0] = acc) ? 1 : -1;
}

/* Trip counts with a numerator coefficient, floor(2 * seq / 3) and floor(3 * seq / 4) (two sizes
 * of every three, three of every four): one Loop whose count is per * seq / div computed in the
 * graph (Mul, Div), checked at every residue (src/trace/runs.c, loop_period); a loop that stops
 * at a size above the example, near it or far above every size the rolled graph is checked at
 * (min(seq, 11), min(seq, 300)): one Loop whose count is Min(seq, stop) (loop_cap). The declared
 * range is kept whole. */
TEST(loops_of_a_fraction_and_a_stop) {
  om_tensor *ex = ex_bs();
  om_tensor *ex9 = om_randn((int64_t[]){3, 9, 4}, 3, 2, true);
  const int64_t forms[][5] = {{2, 3, 0, 0, 5}, {3, 4, 0, 0, 5}, {2, 5, 4, 0, 9}, {1, 1, 0, 11, 5}, {1, 1, 0, 300, 5}};
  for (int f = 0; f < 5; f++) {
    sum_per = forms[f][0], sum_div = forms[f][1], sum_add = forms[f][2], sum_stop = forms[f][3];
    CHECK(om_trace_begin());
    om_traced_model *m = om_test_trace(rows_summed, forms[f][4] == 9 ? ex9 : ex, BS, 1);
    CHECK(m && om_test_count_op(m, "Loop") == 1);
    if (sum_stop) CHECK(m && om_test_count_op(m, "Min") == 1 && om_test_count_op(m, "Div") == 0);
    else CHECK(m && om_test_count_op(m, "Mul") == 1 && om_test_count_op(m, "Div") == 1 && om_test_count_op(m, "Min") == 0);
    const char *name = NULL, *why = NULL;
    int64_t min = 0, max = 0;
    CHECK(m && om_traced_symbol(m, 1, &name, NULL, &min, &max, &why) && !strcmp(name, "seq") && min == 1 && max == INT64_MAX && !why);
    om_traced_release(m);
    CHECK(!om_trace_active());
  }
  om_tensor_release(ex), om_tensor_release(ex9);
}

/* A piece refused as one (a threshold at each small size, more than the pieces left) is traced
 * a size at a time, an If each (src/trace/branch.c); a loop over a size, more calls at every
 * larger size, is an ONNX Loop where its steps roll (src/trace/loop.c), else refused at once as
 * a loop, with the counts and the one size that traces. */
TEST(one_size_pieces_and_loops) {
  om_tensor *ex = ex_bs();
  CHECK(om_trace_begin());
  om_traced_model *m = om_test_trace(op_by_small_seq, ex, BS, 1);
  int64_t pieces[10];
  CHECK(m && om_test_count_op(m, "If") == 1 && om_traced_symbol_branches(m, 1, pieces, 5) == 5); /* the rest nested */
  for (int q = 0; m && q < 4; q++) CHECK(pieces[2 * q] == q + 1 && pieces[2 * q + 1] == q + 1);
  CHECK(m && pieces[8] == 5 && pieces[9] == INT64_MAX);
  om_traced_release(m);
  CHECK(om_trace_begin());
  m = om_test_trace(loop_over_seq, ex, BS, 1);
  CHECK(m && om_test_count_op(m, "Loop") == 1 && om_test_count_op(m, "Gather") == 1); /* the first row before it */
  om_traced_release(m);
  /* rolled over a range narrowed to the even sizes: the Loop's model keeps the reason */
  om_tensor *ex6 = om_randn((int64_t[]){3, 6, 4}, 3, 18, true);
  const char *why;
  int64_t mult, min;
  CHECK(om_trace_begin());
  m = om_test_trace(even_loop, ex6, BS, 1);
  CHECK(m && om_test_count_op(m, "Loop") == 1 && om_traced_symbol(m, 1, NULL, &mult, &min, NULL, &why) && mult == 2 && min == 2 &&
        why && strstr(why, "wants an even number of steps"));
  om_traced_release(m);
  om_tensor_release(ex6);
  CHECK(om_trace_begin());
  m = om_test_trace(rows_stacked, ex, BS, 1);
  CHECK(m && om_test_count_op(m, "Loop") == 1 && om_test_count_op(m, "Concat") == 0 && om_test_count_op(m, "Transpose") == 1);
  om_traced_release(m);
  CHECK(om_trace_begin());
  m = om_test_trace(backwards_stacked, ex, BS, 1); /* the steps reversed (Slice) and put at axis 1 */
  CHECK(m && om_test_count_op(m, "Loop") == 1 && om_test_count_op(m, "Slice") == 1 && om_test_count_op(m, "Transpose") == 1);
  om_traced_release(m);
  const char *const S_ONLY[] = {NULL, "seq", NULL};
  CHECK(om_trace_begin());
  m = om_test_trace(decoder_stacked, ex, S_ONLY, 1); /* at least one run (Max), cut back to seq - 1 (Slice) */
  CHECK(m && om_test_count_op(m, "Loop") == 1 && om_test_count_op(m, "Max") == 1 && om_test_count_op(m, "Slice") == 1);
  om_traced_release(m);
  CHECK(om_trace_begin());
  CHECK(om_test_trace(rows_squared_stacked, ex, BS, 1) == NULL && om_last_error() == OM_ERR_TRACE_SYMBOLIC_SHAPE);
  CHECK(strstr(om_last_error_message(), "trace_run: the model makes more calls at every larger size of 'seq' (calls its outputs "
               "need: ") == om_last_error_message());
  CHECK(strstr(om_last_error_message(), "): a loop over the size, unrolled, which no graph without ONNX Loop holds at every "
               "size; declare om.Dim('seq', { min: 5, max: 5 }) for the graph at the traced size (om_trace_dim in C)") != NULL);
  CHECK(!om_trace_active());
  om_tensor_release(ex);
}

/* torchvision Swin's window partition with a window of 5: [B, H, W, 2] padded to whole windows,
 * [B, nH, 5, nW, 5, 2], then [B * nH * nW, 25, 2], nH = ceil(H / 5) (the floors are extents). */
static int windows(om_tensor *const *in, om_tensor **out) {
  const int64_t *s = om_tensor_shape(in[0]), ws = 5;
  int64_t pr = (ws - s[2] % ws) % ws, pb = (ws - s[1] % ws) % ws;
  om_tensor *p = om_pad(in[0], (int64_t[]){0, 0, 0, pr, 0, pb}, 6, OM_PAD_CONSTANT, 0);
  const int64_t *ps = p ? om_tensor_shape(p) : NULL;
  int64_t nh = ps ? ps[1] / ws : 0, nw = ps ? ps[2] / ws : 0;
  om_tensor *v = p ? om_reshape(p, (int64_t[]){s[0], nh, ws, nw, ws, s[3]}, 6) : NULL;
  om_tensor *t = v ? om_permute(v, (int64_t[]){0, 1, 3, 2, 4, 5}, 6) : NULL;
  out[0] = t ? om_reshape(t, (int64_t[]){s[0] * nh * nw, ws * ws, s[3]}, 3) : NULL;
  om_tensor *r[] = {p, v, t};
  om__release_all(r, 3);
  return out[0] ? 1 : -1;
}

/* A size made of a symbol times a floor division no tensor has: zeros([B * floor(H / 3), W]). */
static int batch_times_floor(om_tensor *const *in, om_tensor **out) {
  const int64_t *s = om_tensor_shape(in[0]);
  return (out[0] = om_zeros((int64_t[]){s[0] * (s[1] / 3), s[2]}, 2, OM_FLOAT32)) ? 1 : -1;
}

/* Three factors, none of them an extent: zeros([B * ceil(H / 3) * floor((W + 1) / 4)]). */
static int three_factors(om_tensor *const *in, om_tensor **out) {
  const int64_t *s = om_tensor_shape(in[0]);
  return (out[0] = om_zeros((int64_t[]){s[0] * ((s[1] + 2) / 3) * ((s[2] + 1) / 4)}, 1, OM_FLOAT32)) ? 1 : -1;
}

/* Products of any number of factors, each a symbol or a floor division of one. */
TEST(products_of_floors) {
  om_tensor *ex = om_randn((int64_t[]){2, 9, 11, 2}, 4, 7, true);
  const char *const bhwc[] = {"batch", "h", "w", NULL};
  CHECK(om_trace_begin());
  om_traced_model *m = om_test_trace(windows, ex, bhwc, 1);
  CHECK(m != NULL);
  if (m) om_test_check_out(m, 0, "batch*floor((w+4)/5)*floor((h+4)/5),25,2");
  om_traced_release(m);
  om_tensor *ex3 = om_randn((int64_t[]){2, 8, 3}, 3, 8, true);
  CHECK(om_trace_begin());
  m = om_test_trace(batch_times_floor, ex3, BS, 1);
  CHECK(m != NULL);
  if (m) om_test_check_out(m, 0, "batch*floor(seq/3),3");
  om_traced_release(m);
  CHECK(om_trace_begin());
  m = om_test_trace(three_factors, ex, bhwc, 1);
  CHECK(m != NULL);
  if (m) om_test_check_out(m, 0, "batch*floor((h+2)/3)*floor((w+1)/4)");
  om_traced_release(m);
  om_tensor *t[] = {ex, ex3};
  om__release_all(t, 2);
}

static int empty_on_the_way(om_tensor *const *in, om_tensor **out) {
  om_tensor *x = in[0];
  om_tensor *i = om_argmax(x, 1, true), *g = i ? om_gather(x, 1, i) : NULL, *e = g ? om_slice(g, 1, -1, 0, 1) : NULL;
  out[0] = e ? om_reshape(e, (int64_t[]){0, 8}, 2) : NULL;
  om_tensor *t[] = {i, g, e};
  om__release_all(t, 3);
  return out[0] ? 1 : -1;
}

/* Random model 24:20939 at a column offset of 4: row 2 of [B, T, 6], its T - 4 columns reshaped
 * to [1, T - 4, 1, 6]. Below B = 3 the row is empty, and at T = 3 the reshape's -1 is inferred
 * from an empty tensor, so the model answers there at every B. */
static int row_offset_four(om_tensor *const *in, om_tensor **out) {
  int64_t t = om_tensor_shape(in[0])[1];
  om_tensor *row = om_slice(in[0], 0, 2, 3, 1), *cols = om_slice(row, 1, 4, t, 1);
  out[0] = om_reshape(cols, (int64_t[]){1, t - 4, 1, 6}, 4);
  om_tensor_release(row);
  om_tensor_release(cols);
  return out[0] ? 1 : -1;
}

TEST(empty_tensors) {
  om_tensor *ex = om_randn((int64_t[]){2, 7, 8}, 3, 6, true);
  CHECK(om_trace_begin());
  om_traced_model *m = om_test_trace(empty_on_the_way, ex, (const char *[]){NULL, "s", NULL}, 1);
  CHECK(m != NULL);
  om_test_check_out(m, 0, "0,8");
  om_traced_release(m);
  om_tensor_release(ex);
  /* refused naming B's minimum alone (it rose where the model fails at T = 9), not T's, which
   * rose to 4 where the model answers (T = 3); so declared, T holds from 3 */
  ex = om_randn((int64_t[]){3, 9, 6}, 3, 7, true);
  const char *bt[] = {"B", "T", NULL};
  CHECK(om_trace_begin());
  CHECK(om_test_trace(row_offset_four, ex, bt, 1) == NULL && om_last_error() == OM_ERR_TRACE_SYMBOLIC_SHAPE);
  CHECK(strstr(om_last_error_message(), "the graph holds for the sizes om.Dim('B', { min: 3 }) declares (om_trace_dim in C)") != NULL);
  CHECK(!om_trace_active());
  CHECK(om_trace_begin() && om_trace_dim("B", 1, 3, 0));
  CHECK((m = om_test_trace(row_offset_four, ex, bt, 1)) != NULL);
  const char *name = NULL;
  int64_t min = 0;
  CHECK(om_traced_symbol(m, 1, &name, NULL, &min, NULL, NULL) && !strcmp(name, "T"));
  CHECK_EQ_INT(min, 3);
  om_traced_release(m);
  om_tensor_release(ex);
}

/* Random model 27:21636 by hand: the first B - 2 rows of [B, T, 4], their first min(8, T) columns
 * reshaped to [-1, 8, 4] (fails below T = 8 where B - 2 is odd; answers at B <= 2, no rows),
 * beside a loop over T's rows (loop_over_seq, rolled into a Loop). */
static int loop_beside_rows(om_tensor *const *in, om_tensor **out) {
  int64_t b = om_tensor_shape(in[0])[0];
  om_tensor *rows = om_slice(in[0], 0, 0, b - 2, 1), *cols = rows ? om_slice(rows, 1, 0, 8, 1) : NULL;
  om_tensor *t[] = {rows, cols, cols ? om_reshape(cols, (int64_t[]){-1, 8, 4}, 3) : NULL};
  bool ok = t[2] != NULL;
  om__release_all(t, 3);
  return ok ? loop_over_seq(in, out) : -1;
}

/* A loop whose range would start where the model first answers at the other symbols' examples
 * (T = 8 at B = 5) is refused where the model answers below it with another symbol small (B = 2),
 * naming the declaration from there; so declared, it traces (src/trace/branch.c, roll_loop). */
TEST(loop_starts_where_others_answer) {
  om_tensor *ex = om_randn((int64_t[]){5, 10, 4}, 3, 8, true);
  const char *bt[] = {"B", "T", NULL};
  CHECK(om_trace_begin());
  CHECK(om_test_trace(loop_beside_rows, ex, bt, 1) == NULL && om_last_error() == OM_ERR_TRACE_SYMBOLIC_SHAPE);
  CHECK(strstr(om_last_error_message(), "the loop over 'T' holds from T=8, ") != NULL);
  CHECK(strstr(om_last_error_message(), "yet at B=1, T=7 the model answers") != NULL);
  CHECK(strstr(om_last_error_message(), "declare om.Dim('T', { min: 8 }) (om_trace_dim in C)") != NULL);
  CHECK(!om_trace_active());
  CHECK(om_trace_begin() && om_trace_dim("T", 1, 8, 0));
  om_traced_model *m = om_test_trace(loop_beside_rows, ex, bt, 1);
  CHECK(m != NULL);
  int64_t t_min = 0; /* by name: a declared symbol may be listed first */
  for (int i = 0; i < 2; i++) {
    const char *name = NULL;
    int64_t min = 0;
    CHECK(om_traced_symbol(m, i, &name, NULL, &min, NULL, NULL));
    if (name && !strcmp(name, "T")) t_min = min;
  }
  CHECK_EQ_INT(t_min, 8);
  om_traced_release(m);
  om_tensor_release(ex);
}

/* Hugging Face Swin's maybe_pad by hand: [B, C, H, W] padded on the right to a multiple of 5
 * only where W is not one. */
static int pad_where_not_multiple(om_tensor *const *in, om_tensor **out) {
  int64_t w = om_tensor_shape(in[0])[3];
  out[0] = w % 5 ? om_pad(in[0], (int64_t[]){0, 5 - w % 5}, 2, OM_PAD_CONSTANT, 0) : om_relu(in[0]);
  if (!out[0] || w % 5 == 0) return out[0] ? 1 : -1;
  om_tensor *r = om_relu(out[0]);
  om_tensor_release(out[0]);
  return (out[0] = r) ? 1 : -1;
}

/* A call made only at some residues, the identity where it is left out (absent.c): one graph,
 * its pad computed, right in the Session at every residue, traced where the model pads and where
 * it does not. */
TEST(calls_at_some_residues) {
  for (int64_t w0 = 10; w0 <= 11; w0++) {
    om_tensor *ex = om_randn((int64_t[]){1, 2, 3, w0}, 4, 3, true);
    CHECK(om_trace_begin());
    om_traced_model *m = om_test_trace(pad_where_not_multiple, ex, (const char *[]){NULL, NULL, NULL, "W"}, 1);
    CHECK(m && om_test_count_op(m, "Pad") == 1 && om_test_count_op(m, "If") == 0);
    om_session *sess = m ? om_session_create(m, NULL) : NULL;
    CHECK(sess != NULL);
    for (int64_t w = 1; sess && w <= 13; w += w < 11 ? 1 : 2) {
      om_tensor *x = om_randn((int64_t[]){1, 2, 3, w == 13 ? 103 : w}, 4, (uint64_t)w, true), *want = NULL, *got = NULL;
      CHECK(pad_where_not_multiple(&x, &want) == 1 && om_session_run(sess, &x, 1, &got, 1) == 1);
      CHECK(want && got && om_tensor_numel(want) == om_tensor_numel(got) && om_tensor_shape(got)[3] == om_tensor_shape(want)[3]);
      for (int64_t k = 0; want && got && k < om_tensor_numel(want); k++) CHECK(at(want, k) == at(got, k));
      om_tensor *t[] = {x, want, got};
      om__release_all(t, 3);
    }
    om_session_release(sess);
    om_traced_release(m);
    om_tensor_release(ex);
  }
}

/* The Session's output at x against the model's eager one, element by element (exactly: the
 * same kernels). */
static void session_agrees(om_session *sess, om_test_model model, om_tensor *x) {
  om_tensor *want = NULL, *got = NULL;
  CHECK(model(&x, &want) == 1 && om_session_run(sess, &x, 1, &got, 1) == 1);
  CHECK(want && got && om_tensor_numel(want) == om_tensor_numel(got));
  for (int d = 0; want && got && d < om_tensor_ndim(want); d++) CHECK_EQ_INT(om_tensor_shape(got)[d], om_tensor_shape(want)[d]);
  for (int64_t k = 0; want && got && om_tensor_numel(want) == om_tensor_numel(got) && k < om_tensor_numel(want); k++)
    CHECK(at(want, k) == at(got, k));
  om_tensor_release(want);
  om_tensor_release(got);
}

/* session_agrees at inputs [batch, seq, 4] of each of the n (batch, seq) sizes (none without sess). */
static void agrees_at_sizes(om_session *sess, om_test_model model, const int64_t (*sizes)[2], int n) {
  for (int q = 0; sess && q < n; q++) {
    om_tensor *x = om_randn((int64_t[]){sizes[q][0], sizes[q][1], 4}, 3, (uint64_t)q + 30, true);
    session_agrees(sess, model, x);
    om_tensor_release(x);
  }
}

/* Upstream Mamba's conv crop beside its scan (modeling_mamba.py: conv1d(x)[..., :seq_len]): seq's
 * rows padded by 2 on both sides, the first seq of them kept (a crop whose end is the size), a
 * running sum over those rows, its steps stacked and added to the crop. */
static int crop_then_scan(om_tensor *const *in, om_tensor **out) {
  int64_t b = om_tensor_shape(in[0])[0], n = om_tensor_shape(in[0])[1];
  om_tensor *steps[64] = {0}, *p = om_pad(in[0], (int64_t[]){0, 0, 2, 2}, 4, OM_PAD_CONSTANT, 0.5);
  om_tensor *crop = p ? om_slice(p, 1, 0, n, 1) : NULL, *acc = om_full((int64_t[]){b, 4}, 2, OM_FLOAT32, 0);
  bool ok = n <= 64 && crop && acc;
  for (int64_t i = 0; ok && i < n; i++) {
    om_tensor *row = om_select(crop, 1, i), *half = row ? om_scale(acc, 0.5) : NULL, *next = half ? om_add(half, row) : NULL;
    om_tensor_release(row), om_tensor_release(half), om_tensor_release(acc);
    ok = (acc = steps[i] = next) != NULL && om_tensor_retain(acc);
  }
  om_tensor *stacked = ok ? om_stack(steps, (int)n, 1) : NULL;
  out[0] = stacked ? om_add(stacked, crop) : NULL;
  for (int64_t i = 0; i < n && i < 64; i++) om_tensor_release(steps[i]);
  om_tensor *t[] = {p, crop, acc, stacked};
  om__release_all(t, 4);
  return out[0] ? 1 : -1;
}

/* crop_then_scan with the rows padded by seq * seq + 100 zeros at the end (summed over the
 * rows, so the pad changes no value): the pad's amount moves by a whole step between two sizes
 * (8, 9: 164, 181) but lies on no line through a third (11: 221, not 215), and no check against
 * eager sees it; refused as before. */
static int squared_pad_beside_scan(om_tensor *const *in, om_tensor **out) {
  int64_t n = om_tensor_shape(in[0])[1];
  om_tensor *y = NULL, *p = om_pad(in[0], (int64_t[]){0, 0, 0, n * n + 100}, 4, OM_PAD_CONSTANT, 0);
  om_tensor *sum = p ? om_sum(p, (int64_t[]){1}, 1, true) : NULL;
  if (sum && crop_then_scan(in, &y) == 1) out[0] = om_add(y, sum);
  else out[0] = NULL;
  om_tensor *t[] = {p, sum, y};
  om__release_all(t, 3);
  return out[0] ? 1 : -1;
}

/* crop_then_scan times a tensor of halves made at the size (om_full of [1, seq, 1], as random
 * model 21:602's om.full([N, 1, 1], 0.5) beside its loop over N): each piece holds it as a
 * constant of its own shape. */
static int halves_beside_scan(om_tensor *const *in, om_tensor **out) {
  om_tensor *y = NULL, *h = om_full((int64_t[]){1, om_tensor_shape(in[0])[1], 1}, 3, OM_FLOAT32, 0.5);
  out[0] = h && crop_then_scan(in, &y) == 1 ? om_mul(y, h) : NULL;
  om_tensor_release(h), om_tensor_release(y);
  return out[0] ? 1 : -1;
}

/* The crop's end, the size, sits beside the loop: the pieces the loop is rolled from hold it as
 * their fixed sizes, and it is written as the size (Shape) in the one Loop's graph (loop.c,
 * om__loop_sizes), right in the Session at seq 1, 2, odd and far above, batch moved too. */
TEST(crop_to_the_size_beside_a_loop) {
  om_tensor *ex = ex_bs();
  CHECK(om_trace_begin());
  om_traced_model *m = om_test_trace(crop_then_scan, ex, BS, 1);
  CHECK(m && om_test_count_op(m, "Loop") == 1 && om_test_count_op(m, "Slice") == 1);
  om_session *sess = m ? om_session_create(m, NULL) : NULL;
  CHECK(sess != NULL);
  agrees_at_sizes(sess, crop_then_scan, (const int64_t[][2]){{3, 1}, {3, 2}, {3, 7}, {2, 9}, {1, 40}}, 5);
  om_session_release(sess);
  om_traced_release(m);
  CHECK(!om_trace_active());
  /* a tensor of one value made at the size: Expand to the shape of the size */
  CHECK(om_trace_begin());
  m = om_test_trace(halves_beside_scan, ex, BS, 1);
  CHECK(m && om_test_count_op(m, "Loop") == 1 && om_test_count_op(m, "Expand") >= 1);
  sess = m ? om_session_create(m, NULL) : NULL;
  CHECK(sess != NULL);
  agrees_at_sizes(sess, halves_beside_scan, (const int64_t[][2]){{3, 1}, {2, 9}, {1, 40}}, 3);
  om_session_release(sess);
  om_traced_release(m);
  CHECK(!om_trace_active());
  CHECK(om_trace_begin());
  m = om_test_trace(squared_pad_beside_scan, ex, BS, 1);
  CHECK(m == NULL && om_last_error() == OM_ERR_TRACE_SYMBOLIC_SHAPE);
  om_traced_release(m);
  CHECK(strstr(om_last_error_message(), "; rolled at seq=8 and seq=9, the Loop graphs differ besides the trip count (the size "
               "reaches a size computed beside the loop)") != NULL);
  om_clear_error();
  CHECK(!om_trace_active());
  om_tensor_release(ex);
}

/* seq's rows cut first (every select made before the loop, as x.unbind(1) does), then a running
 * sum over them, each step stacked. */
static int rows_cut_then_summed(om_tensor *const *in, om_tensor **out) {
  int64_t b = om_tensor_shape(in[0])[0], n = om_tensor_shape(in[0])[1];
  om_tensor *rows[64] = {0}, *steps[64] = {0}, *acc = om_full((int64_t[]){b, 4}, 2, OM_FLOAT32, 0);
  bool ok = n <= 64 && acc;
  for (int64_t i = 0; ok && i < n; i++) ok = (rows[i] = om_select(in[0], 1, i)) != NULL;
  for (int64_t i = 0; ok && i < n; i++) {
    om_tensor *half = om_scale(acc, 0.5), *next = half ? om_add(half, rows[i]) : NULL;
    om_tensor_release(half), om_tensor_release(acc);
    ok = (acc = steps[i] = next) != NULL && om_tensor_retain(acc);
  }
  out[0] = ok ? om_stack(steps, (int)n, 1) : NULL;
  for (int64_t i = 0; i < n && i < 64; i++) om_tensor_release(rows[i]), om_tensor_release(steps[i]);
  om_tensor_release(acc);
  return out[0] ? 1 : -1;
}

/* Steps cut before the loop roll as those cut in it: each cut read once, by its step, is placed
 * next to it (loop.c, sink_single_reads), one Loop, right in the Session at seq 1, 2, odd and far
 * above. */
TEST(steps_cut_before_the_loop) {
  om_tensor *ex = ex_bs();
  CHECK(om_trace_begin());
  om_traced_model *m = om_test_trace(rows_cut_then_summed, ex, BS, 1);
  CHECK(m && om_test_count_op(m, "Loop") == 1);
  om_session *sess = m ? om_session_create(m, NULL) : NULL;
  CHECK(sess != NULL);
  agrees_at_sizes(sess, rows_cut_then_summed, (const int64_t[][2]){{3, 1}, {3, 2}, {2, 7}, {1, 40}}, 4);
  om_session_release(sess);
  om_traced_release(m);
  CHECK(!om_trace_active());
  om_tensor_release(ex);
}

/* A window's padding of a pooled width, (5 - w % 5) % 5 of w = floor(W / 8). */
static int pad_pooled_width(om_tensor *const *in, om_tensor **out) {
  om_tensor *y = om_avg_pool2d(in[0], (int64_t[]){8, 8}, NULL, NULL, false, true);
  int64_t w = y ? om_tensor_shape(y)[3] : 0;
  out[0] = y ? om_pad(y, (int64_t[]){0, (5 - w % 5) % 5}, 2, OM_PAD_CONSTANT, 0) : NULL;
  om_tensor_release(y);
  return out[0] ? 1 : -1;
}

/* Traced with symbolic batch, height and width at batch 3 (and 5, 7) it was refused, at batch 2
 * it traced: the batch's smallest run (1, a fixed size, so 2) made its run's other sizes near
 * ones, the width's one far run fewer, and the more runs went first to the batch and the height,
 * whose example sizes every run moving another symbol alone repeats (hooks.c, moving_symbols).
 * Now one graph at every batch, right in the Session at every residue of w mod 5. */
TEST(window_pad_at_any_batch) {
  for (int64_t b0 = 2; b0 <= 7; b0 += b0 < 3 ? 1 : 2) {
    om_tensor *ex = om_randn((int64_t[]){b0, 1, 9, 17}, 4, (uint64_t)b0, true);
    CHECK(om_trace_begin());
    om_traced_model *m = om_test_trace(pad_pooled_width, ex, (const char *[]){"B", NULL, "H", "W"}, 1);
    CHECK(m != NULL);
    om_session *sess = m ? om_session_create(m, NULL) : NULL;
    for (int64_t w = 8; sess && w <= 48; w += 8)
      for (int64_t b = 1; b <= 7; b += 3) {
        om_tensor *x = om_randn((int64_t[]){b, 1, 8 + w % 24, w + b}, 4, (uint64_t)(w + b), true);
        session_agrees(sess, pad_pooled_width, x);
        om_tensor_release(x);
      }
    om_session_release(sess);
    om_traced_release(m);
    om_tensor_release(ex);
  }
}

/* SAM's window padding in small: the width pooled by 8 (a patch), padded to whole windows of 5
 * only where the pooled width is not one, then an attention over every position of the batch:
 * memory as (B H W / 8)^2. Traced at a multiple (40: 5 patches), the near runs and the far ones
 * at 81 and 122 pad nothing; the runs that pad are the far run of every symbol (21 x 71 x 329)
 * and the width's alone (2 x 8 x 2573). The rule before (the smallest largest size) took the
 * first, 18 GB of scores; now the one of fewer elements, moved down to 2 x 8 x 48 (runs.c,
 * cheaper_reexample). */
static int attend_all(om_tensor *const *in, om_tensor **out) {
  om_tensor *y = om_avg_pool2d(in[0], (int64_t[]){1, 8}, NULL, NULL, false, true);
  int64_t w = y ? om_tensor_shape(y)[3] : 0;
  om_tensor *p0 = !y ? NULL : w % 5 ? om_pad(y, (int64_t[]){0, 5 - w % 5}, 2, OM_PAD_CONSTANT, 0) : om_tensor_retain(y);
  om_tensor *f = p0 ? om_reshape(p0, (int64_t[]){-1, 1}, 2) : NULL, *ft = f ? om_transpose(f, 0, 1) : NULL;
  om_tensor *s = ft ? om_matmul(f, ft) : NULL, *p = s ? om_softmax(s, -1) : NULL, *a = p ? om_matmul(p, f) : NULL;
  om_tensor *r = a ? om_reshape(a, om_tensor_shape(p0), 4) : NULL;
  out[0] = r ? om_slice(r, 3, 0, w, 1) : NULL;
  om_tensor *t[] = {y, p0, f, ft, s, p, a, r};
  om__release_all(t, 8);
  return out[0] ? 1 : -1;
}

/* The same, and where it pads a product it never reads (dead: no run's elements count it) of
 * (B H W)^2 floats, 430 MB at 2 x 64 x 81, past what the trace there may take. H is declared
 * from 64 and W from 60 (a multiple), so that no run below the example pads: the cheapest that
 * does is 2 x 64 x 81. */
static int dead_product(om_tensor *const *in, om_tensor **out) {
  int64_t w = om_tensor_shape(in[0])[3];
  if (w % 5 == 0) return (out[0] = om_relu(in[0])) ? 1 : -1;
  om_tensor *f = om_reshape(in[0], (int64_t[]){-1, 1}, 2), *ft = f ? om_transpose(f, 0, 1) : NULL;
  om_tensor *dead = ft ? om_matmul(f, ft) : NULL;
  om_tensor *y = dead ? om_pad(in[0], (int64_t[]){0, 5 - w % 5}, 2, OM_PAD_CONSTANT, 0) : NULL;
  om_tensor *r = y ? om_slice(y, 3, 0, w, 1) : NULL;
  out[0] = r ? om_relu(r) : NULL;
  om_tensor *t[] = {f, ft, dead, y, r};
  om__release_all(t, 5);
  return out[0] ? 1 : -1;
}

TEST(reexample_within_memory) {
  om_tensor *ex = om_randn((int64_t[]){2, 1, 8, 40}, 4, 5, true);
  CHECK(om_trace_begin());
  om_traced_model *m = om_test_trace(attend_all, ex, (const char *[]){"B", NULL, "H", "W"}, 1);
  CHECK(m && om_test_count_op(m, "Pad") == 1);
  om_session *sess = m ? om_session_create(m, NULL) : NULL;
  for (int64_t w = 8; sess && w <= 88; w += 8) { /* pooled widths 1 to 11: every residue of 5 */
    om_tensor *x = om_randn((int64_t[]){1 + w % 3, 1, 2 + w % 4, w + w % 5}, 4, (uint64_t)w, true);
    session_agrees(sess, attend_all, x);
    om_tensor_release(x);
  }
  om_session_release(sess);
  om_traced_release(m);
  om_tensor_release(ex);
  /* where the trace there runs out of what it may take: SymbolicShape naming the sizes */
  ex = om_randn((int64_t[]){2, 1, 64, 80}, 4, 1, true);
  CHECK(om_trace_begin() && om_trace_dim("B", 1, 1, 0) && om_trace_dim("H", 1, 64, 0) && om_trace_dim("W", 1, 60, 0));
  CHECK_ERROR(om_test_trace(dead_product, ex, (const char *[]){"B", NULL, "H", "W"}, 1) != NULL, OM_ERR_TRACE_SYMBOLIC_SHAPE,
              "trace_run: the example's run lacks calls (a pad, a slice or an interpolate) that the model makes at B=2, H=64, "
              "W=81; traced again there, so that one graph holds where it makes them and where not, the model ran out of "
              "memory (matmul: ");
  CHECK(!om_trace_active());
  om_tensor_release(ex);
}

/* relu where batch and seq are equal and from 10 to 12, neg elsewhere: a band of the diagonal that
 * no line from the example (3, 5) crosses. */
static int diagonal_band(om_tensor *const *in, om_tensor **out) {
  const int64_t *s = om_tensor_shape(in[0]);
  return (out[0] = s[0] == s[1] && s[0] >= 10 && s[0] <= 12 ? om_relu(in[0]) : om_neg(in[0])) ? 1 : -1;
}

/* A branch at points off the range check's lines is found by its runs on the diagonal and refused,
 * naming the point, the band and the declarations that leave it out; declared so, it traces (the
 * refusal's code path in C, as tests/js/symbolic-branches.test.mjs checks it from JS). */
TEST(points_off_the_lines) {
  om_tensor *ex = ex_bs();
  CHECK(om_trace_begin());
  CHECK_ERROR(om_test_trace(diagonal_band, ex, BS, 1) != NULL, OM_ERR_TRACE_SYMBOLIC_SHAPE,
              "relu: the model does another thing at sizes off the lines the range check runs along: at batch=10, seq=10 it "
              "calls relu here (call 1), where the trace calls neg (and so at batch = seq from 10 to 12), so the graph would be "
              "wrong there. It holds away from them: declare om.Dim('batch', { min: 1, max: 9 }) or om.Dim('seq', { min: 1, "
              "max: 9 }) (om_trace_dim in C)");
  CHECK(!om_trace_active());
  CHECK(om_trace_begin() && om_trace_dim("batch", 1, 1, 9));
  om_traced_model *m = om_test_trace(diagonal_band, ex, BS, 1);
  CHECK(m != NULL);
  if (m) CHECK_EQ_INT(om_test_count_op(m, "Neg"), 1);
  om_traced_release(m);
  om_tensor_release(ex);
}

int main(void) {
  RUN(expressions);
  RUN(scaled_sizes);
  RUN(computed_integers);
  RUN(fixed_sizes_stay_fixed);
  RUN(extents_and_ranges);
  RUN(refusals);
  RUN(cuts_on_two_symbols);
  RUN(usage);
  RUN(runs_at_other_sizes);
  RUN(empty_tensors);
  RUN(loop_starts_where_others_answer);
  RUN(the_declared_range);
  RUN(narrowed_ranges_cut);
  RUN(one_size_pieces_and_loops);
  RUN(loops_of_a_floor_division);
  RUN(loops_of_a_fraction_and_a_stop);
  RUN(crop_to_the_size_beside_a_loop);
  RUN(steps_cut_before_the_loop);
  RUN(calls_at_some_residues);
  RUN(window_pad_at_any_batch);
  RUN(reexample_within_memory);
  RUN(products_of_floors);
  RUN(points_off_the_lines);
  TEST_MAIN_END();
}
