/* Recurrent layers with PyTorch's equations and gate order. One op runs one layer in one
 * direction over a whole sequence; om_lstm / om_gru stack layers and directions from them.
 *
 *   lstm_layer: x [T,N,I], w_ih [4H,I], w_hh [4H,H], (b_ih [4H], b_hh [4H]), (h0 [N,H], c0 [N,H])
 *               -> y [T,N,H], state [2,N,H] (h_n, c_n)
 *     gates a = x_t w_ih^T + b_ih + h w_hh^T + b_hh, split as i, f, g, o (PyTorch's order)
 *     i, f, o = sigmoid, g = tanh;  c' = f c + i g;  h' = o tanh(c')
 *   gru_layer:  x [T,N,I], w_ih [3H,I], w_hh [3H,H], (b_ih [3H], b_hh [3H]), (h0 [N,H])
 *               -> y [T,N,H], h_n [N,H]
 *     r = sigmoid(x_t W_ir^T + b_ir + h W_hr^T + b_hr), z likewise,
 *     n = tanh(x_t W_in^T + b_in + r (h W_hn^T + b_hn));  h' = (1 - z) n + z h
 * attrs: i[0] reverse (0/1: the layer reads the sequence from its end, as PyTorch's *_reverse
 * weights do; y[t] is still the state after reading x[t]), i[1] bias (0/1: b_ih and b_hh given).
 * Missing initial states are zeros. Both outputs are what an ONNX LSTM/GRU node gives (Y, and
 * Y_h / Y_c), so the lowering is one node; h_n of an LSTM is state[0], c_n state[1].
 *
 * Forward: the input part of every step is one gemm over all T*N rows (x w_ih^T + b_ih), then
 * per step one gemm h w_hh^T (+ b_hh) and the elementwise cell. Backward through time recomputes
 * the forward with a workspace that keeps the gates (and c, or GRU's h W_hn^T + b_hn) of every
 * step rather than keeping that workspace alive with the outputs between forward and backward
 * (one extra forward per backward; nothing extra held by inference or by a graph waiting for
 * backward). It then walks the steps backwards with plain loops and gemms, and gets the weight
 * gradients as two gemms over all steps. The backward is a kernel, not public ops, so these ops
 * are differentiable once (no double backward). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* ---- shared by both ops ---- */

typedef struct rnn_kind {
  const char *name;
  int gates;       /* 4 (LSTM: i, f, g, o) or 3 (GRU: r, z, n) */
  int states;      /* initial states it takes: 2 (h0, c0) or 1 (h0) */
  const char *onnx; /* ONNX op type */
  const int64_t *onnx_order; /* ONNX gate k is PyTorch gate onnx_order[k] */
} rnn_kind;

static const rnn_kind LSTM = {"lstm_layer", 4, 2, "LSTM", (const int64_t[]){0, 3, 1, 2}}; /* iofc <- ifgo */
static const rnn_kind GRU = {"gru_layer", 3, 1, "GRU", (const int64_t[]){1, 0, 2}};       /* zrh <- rzn */

/* The backward recomputes the forward, so it reads every input (at most 7). */
#define RNN_SAVES (OM_SAVES_IN(7) - 1)

static const rnn_kind *kind_of(om_op op) { return op == OM_OP_lstm_layer ? &LSTM : &GRU; }

/* Input indices: x, w_ih, w_hh, then the biases when attrs bias is set, then the states. */
static int state_index(const om_attrs *a) { return 3 + 2 * (int)a->i[1]; }
static bool has_state(int n_in, const om_attrs *a) { return n_in > state_index(a); }

static bool check_shape(const rnn_kind *k, const char *what, const om_tensor *t, const int64_t *want, int ndim) {
  bool ok = t->ndim == ndim;
  for (int d = 0; ok && d < ndim; d++) ok = t->shape[d] == want[d];
  if (ok) return true;
  char a[OM_SHAPE_STR_LEN], b[OM_SHAPE_STR_LEN];
  return om__fail(OM_ERR_SHAPE_MISMATCH, "%s: %s is %s, expected %s", k->name, what,
                  om__shape_str(a, sizeof a, t->shape, t->ndim), om__shape_str(b, sizeof b, want, ndim));
}

static bool infer_rnn(om_call *c) {
  const rnn_kind *k = kind_of(c->op);
  om_attrs *a = &c->attrs;
  if (a->n_i > 2 || a->n_f) return om__fail(OM_ERR_INVALID_ARGUMENT, "%s: takes the attrs reverse and bias, got %d", k->name, a->n_i + a->n_f);
  if (a->n_i < 1) a->i[0] = 0;
  if (a->n_i < 2) a->i[1] = c->n_in >= 5; /* biases come before states: 5+ inputs means biases */
  a->n_i = 2;
  if ((a->i[0] != 0 && a->i[0] != 1) || (a->i[1] != 0 && a->i[1] != 1))
    return om__fail(OM_ERR_INVALID_ARGUMENT, "%s: reverse and bias are 0 or 1, got %lld and %lld", k->name, (long long)a->i[0], (long long)a->i[1]);
  int base = state_index(a);
  if (c->n_in != base && c->n_in != base + k->states)
    return om__fail(OM_ERR_INVALID_ARGUMENT, "%s: takes x, w_ih, w_hh%s%s: %d or %d inputs, got %d", k->name,
                    a->i[1] ? ", b_ih, b_hh" : "", k->states == 2 ? " and optionally h0, c0" : " and optionally h0",
                    base, base + k->states, c->n_in);
  for (int i = 0; i < c->n_in; i++)
    if (c->in[i]->dtype != OM_FLOAT32)
      return om__fail(OM_ERR_DTYPE_MISMATCH, "%s: takes float32, input %d is %s", k->name, i, om_dtype_name(c->in[i]->dtype));
  const om_tensor *x = c->in[0], *wih = c->in[1];
  char xs[OM_SHAPE_STR_LEN], ws[OM_SHAPE_STR_LEN];
  if (x->ndim != 3) return om__fail(OM_ERR_SHAPE_MISMATCH, "%s: x must be [T, N, input_size], got %s", k->name, om__shape_str(xs, sizeof xs, x->shape, x->ndim));
  if (x->shape[0] < 1) return om__fail(OM_ERR_INVALID_ARGUMENT, "%s: the sequence length must be at least 1, got %lld", k->name, (long long)x->shape[0]);
  if (wih->ndim != 2 || wih->shape[0] < k->gates || wih->shape[0] % k->gates)
    return om__fail(OM_ERR_SHAPE_MISMATCH, "%s: w_ih must be [%d*hidden_size, input_size], got %s", k->name, k->gates,
                    om__shape_str(ws, sizeof ws, wih->shape, wih->ndim));
  int64_t T = x->shape[0], N = x->shape[1], I = x->shape[2], GH = wih->shape[0], H = GH / k->gates;
  if (wih->shape[1] != I)
    return om__fail(OM_ERR_SHAPE_MISMATCH, "%s: x %s has input size %lld, w_ih %s expects %lld", k->name,
                    om__shape_str(xs, sizeof xs, x->shape, x->ndim), (long long)I, om__shape_str(ws, sizeof ws, wih->shape, wih->ndim),
                    (long long)wih->shape[1]);
  if (!check_shape(k, "w_hh", c->in[2], (int64_t[]){GH, H}, 2)) return false;
  if (a->i[1] && (!check_shape(k, "b_ih", c->in[3], &GH, 1) || !check_shape(k, "b_hh", c->in[4], &GH, 1))) return false;
  for (int s = 0; has_state(c->n_in, a) && s < k->states; s++)
    if (!check_shape(k, s ? "c0" : "h0", c->in[base + s], (int64_t[]){N, H}, 2)) return false;
  c->out_meta[0] = (om_meta){.dtype = OM_FLOAT32, .ndim = 3, .shape = {T, N, H}};
  c->out_meta[1] = k->states == 2 ? (om_meta){.dtype = OM_FLOAT32, .ndim = 3, .shape = {2, N, H}}
                                  : (om_meta){.dtype = OM_FLOAT32, .ndim = 2, .shape = {N, H}};
  return true;
}

/* The inputs as contiguous float arrays (a copy of any strided one). */
typedef struct rnn_args {
  const rnn_kind *k;
  int64_t T, N, I, H;
  bool reverse;
  const float *x, *wih, *whh, *bih, *bhh, *h0, *c0; /* biases and states NULL when absent */
  om_tensor *hold[7];
} rnn_args;

static const float *dense(om_tensor *t, om_tensor **hold) {
  int64_t st[OM_MAX_DIMS];
  om__contiguous_strides(t->shape, t->ndim, st);
  bool contiguous = true;
  for (int d = 0; d < t->ndim; d++) contiguous &= t->shape[d] < 2 || t->strides[d] == st[d];
  if (contiguous) {
    *hold = om_tensor_retain(t);
  } else {
    om_meta m = {.dtype = t->dtype, .ndim = t->ndim};
    memcpy(m.shape, t->shape, sizeof m.shape);
    if (!(*hold = om__tensor_new(&m, false, "rnn"))) return NULL;
    om__copy_into(*hold, t);
  }
  return (const float *)om__data(*hold);
}

static void args_free(rnn_args *a) { om__release_all(a->hold, 7); }

static bool args_load(rnn_args *a, om_op op, om_tensor *const *in, int n_in, const om_attrs *at) {
  *a = (rnn_args){.k = kind_of(op), .T = in[0]->shape[0], .N = in[0]->shape[1], .I = in[0]->shape[2],
                  .H = in[2]->shape[1], .reverse = at->i[0]};
  const float **slot[7] = {&a->x, &a->wih, &a->whh};
  int n = 3;
  if (at->i[1]) slot[n++] = &a->bih, slot[n++] = &a->bhh;
  if (has_state(n_in, at)) {
    slot[n++] = &a->h0;
    if (a->k->states == 2) slot[n++] = &a->c0;
  }
  for (int i = 0; i < n; i++)
    if (!(*slot[i] = dense(in[i], &a->hold[i]))) {
      args_free(a);
      return false;
    }
  return true;
}

/* Time index of processing step s. */
static int64_t time_of(const rnn_args *a, int64_t s) { return a->reverse ? a->T - 1 - s : s; }

/* One step on several threads: part p takes the hidden units [p per, (p + 1) per) of every gate
 * (per a multiple of the micro-kernel's 8 columns): their columns of hw = h w_hh^T (om__gemm_on on
 * those rows of w_hh; a column's sum does not depend on the columns computed with it), then their
 * gates and their units of the new state, written to hn (h is read by every part's product, so
 * the new h goes to the other buffer; each unit's c is read and written by its part alone). The
 * activations run on whole runs of a part's units (om__sigmoidf_n and om__tanhf_n give each
 * element the bits of the scalar function, however the runs are cut). */
typedef struct rnn_step {
  const rnn_args *a;
  const float *xw, *h; /* xw: this step's input part [N, GH] */
  const float *whp;    /* w_hhᵀ packed once for the layer (om__gemm_pack_b): part p's gate q at whp + (p G + q) block */
  int64_t block;       /* the floats of one part's gate packed (of all gates' columns, when one part) */
  float *hw, *hn, *c, *tc, *gates, *extra; /* gates, extra: the workspace's rows for this step, or NULL */
  int64_t per;
  float *scratch[OM_MAX_THREADS];
} rnn_step;

static void rnn_step_part(void *ctx, int64_t part, int worker) {
  const rnn_step *st = ctx;
  const rnn_args *a = st->a;
  const int G = a->k->gates;
  const int64_t N = a->N, H = a->H, GH = G * H, j0 = part * st->per, len = H - j0 < st->per ? H - j0 : st->per;
  if (len == H) /* one part: all gates' columns are one run of w_hh's rows */
    om__gemm_on_b(st->h, H, 1, st->whp, st->hw, GH, N, GH, H, st->scratch[worker]);
  else
    for (int q = 0; q < G; q++)
      om__gemm_on_b(st->h, H, 1, st->whp + (part * G + q) * st->block, st->hw + q * H + j0, GH, N, len, H, st->scratch[worker]);
  for (int64_t n = 0; n < N; n++) {
    const float *xr = st->xw + n * GH;
    float *g = st->hw + n * GH, *cn = st->c + n * H, *hn = st->hn + n * H, *tc = st->tc + n * H;
    const float *hp = st->h + n * H;
    for (int q = 0; a->bhh && q < G; q++)
      for (int64_t j = j0; j < j0 + len; j++) g[q * H + j] += a->bhh[q * H + j];
    if (G == 4) { /* LSTM: i, f, g, o; c = f c + i g, h = o tanh(c) */
      for (int q = 0; q < 4; q++)
        for (int64_t j = j0; j < j0 + len; j++) g[q * H + j] = xr[q * H + j] + g[q * H + j];
      om__sigmoidf_n(g + j0, g + j0, len);
      om__sigmoidf_n(g + H + j0, g + H + j0, len);
      om__tanhf_n(g + 2 * H + j0, g + 2 * H + j0, len);
      om__sigmoidf_n(g + 3 * H + j0, g + 3 * H + j0, len);
      for (int64_t j = j0; j < j0 + len; j++) cn[j] = g[H + j] * cn[j] + g[j] * g[2 * H + j];
      om__tanhf_n(cn + j0, tc + j0, len);
      for (int64_t j = j0; j < j0 + len; j++) hn[j] = g[3 * H + j] * tc[j];
      if (st->extra) memcpy(st->extra + n * H + j0, cn + j0, sizeof(float) * (size_t)len);
    } else { /* GRU: r, z, n; n = tanh(x_n + r (h W_hn^T + b_hn)), h = (1 - z) n + z h */
      if (st->extra) memcpy(st->extra + n * H + j0, g + 2 * H + j0, sizeof(float) * (size_t)len);
      for (int q = 0; q < 2; q++)
        for (int64_t j = j0; j < j0 + len; j++) g[q * H + j] = xr[q * H + j] + g[q * H + j];
      om__sigmoidf_n(g + j0, g + j0, len);
      om__sigmoidf_n(g + H + j0, g + H + j0, len);
      for (int64_t j = j0; j < j0 + len; j++) g[2 * H + j] = xr[2 * H + j] + g[j] * g[2 * H + j];
      om__tanhf_n(g + 2 * H + j0, g + 2 * H + j0, len);
      for (int64_t j = j0; j < j0 + len; j++) hn[j] = (1.0f - g[H + j]) * g[2 * H + j] + g[H + j] * hp[j];
    }
    for (int q = 0; st->gates && q < G; q++)
      memcpy(st->gates + n * GH + q * H + j0, g + q * H + j0, sizeof(float) * (size_t)len);
  }
}

/* Below this many multiply-adds a step is one part: a step's product is small (batch rows by
 * G H columns), but every step waits for the last, so the cores are worth waking for less than a
 * lone product is (docs/performance.md: LSTM at two threads). */
#define STEP_MACS ((double)(1 << 17))

/* Runs the layer: y [T,N,H]; state [2,N,H] (LSTM) or [N,H] (GRU). With ws (T*N*(G+1)*H floats)
 * it keeps per time step the activated gates [T,N,G*H] and then [T,N,H] of c (LSTM) or
 * h W_hn^T + b_hn (GRU), for the backward. */
static bool rnn_run(const rnn_args *a, float *y, float *state, float *ws) {
  const int G = a->k->gates;
  const int64_t T = a->T, N = a->N, I = a->I, H = a->H, GH = G * H, NH = N * H;
  /* each step's hidden units split into parts of whole 8-column tiles, one part a thread */
  int most = (double)N * (double)GH * (double)H < STEP_MACS ? 1 : om_get_num_threads();
  if (most > H / 8) most = H / 8 > 1 ? (int)(H / 8) : 1;
  const int64_t per = most > 1 ? ((H + most - 1) / most + 7) / 8 * 8 : H, parts = (H + per - 1) / per;
  /* w_hhᵀ packed once for all steps: all gates' columns as one block, or each part's each gate's */
  const int64_t block = parts > 1 ? om__gemm_packed_b(per, H) : om__gemm_packed_b(GH, H), packed = parts > 1 ? parts * G * block : block;
  float *xw = om__alloc((uint64_t)(T * N * GH + N * GH + 4 * NH + packed + 1) * sizeof(float), a->k->name);
  if (!xw) return false;
  float *hw = xw + T * N * GH, *h = hw + N * GH, *hn = h + NH, *c = hn + NH, *tc = c + NH, *whp = tc + NH;
  if (parts == 1) om__gemm_pack_b(a->whh, 1, H, GH, H, whp);
  for (int64_t p = 0; parts > 1 && p < parts; p++)
    for (int q = 0; q < G; q++) {
      int64_t j0 = p * per, len = H - j0 < per ? H - j0 : per;
      om__gemm_pack_b(a->whh + (q * H + j0) * H, 1, H, len, H, whp + (p * G + q) * block);
    }
  /* input part of every step at once: xw = x w_ih^T (+ b_ih) */
  if (!om__gemm(a->x, I, 1, a->wih, 1, I, xw, T * N, GH, I, a->k->name)) goto fail;
  for (int64_t r = 0; a->bih && r < T * N; r++)
    for (int64_t j = 0; j < GH; j++) xw[r * GH + j] += a->bih[j];
  for (int64_t e = 0; e < NH; e++) {
    h[e] = a->h0 ? a->h0[e] : 0.0f;
    c[e] = a->c0 ? a->c0[e] : 0.0f;
  }
  rnn_step st = {.a = a, .hw = hw, .c = c, .tc = tc, .per = per, .whp = whp, .block = block};
  int64_t floats = om__gemm_scratch(N, parts > 1 ? st.per : GH, H, false);
  bool ok = true;
  for (int i = 0; ok && i < most; i++) ok = (st.scratch[i] = om__scratch(i, floats, a->k->name)) != NULL;
  for (int64_t s = 0; ok && s < T; s++) {
    int64_t t = time_of(a, s);
    st.xw = xw + t * N * GH, st.h = h, st.hn = hn;
    st.gates = ws ? ws + t * N * GH : NULL, st.extra = ws ? ws + T * N * GH + t * NH : NULL;
    om__parallel(parts, most, rnn_step_part, &st);
    float *swap = h;
    h = hn, hn = swap;
    memcpy(y + t * NH, h, sizeof(float) * (size_t)NH);
  }
  om__scratch_done();
  if (!ok) goto fail;
  memcpy(state, h, sizeof(float) * (size_t)NH);
  if (G == 4) memcpy(state + NH, c, sizeof(float) * (size_t)NH);
  free(xw);
  return true;
fail:
  free(xw);
  return false;
}

static bool forward_rnn(om_call *c) {
  rnn_args a;
  if (!args_load(&a, c->op, c->in, c->n_in, &c->attrs)) return false;
  bool ok = rnn_run(&a, (float *)om__data(c->out[0]), (float *)om__data(c->out[1]), NULL);
  args_free(&a);
  return ok;
}

/* A new contiguous float tensor holding n values of p, shaped like t. */
static om_tensor *grad_like(const om_tensor *t, const float *p) {
  om_meta m = {.dtype = OM_FLOAT32, .ndim = t->ndim};
  memcpy(m.shape, t->shape, sizeof m.shape);
  om_tensor *g = om__tensor_new(&m, false, "rnn backward");
  if (g) memcpy(om__data(g), p, sizeof(float) * (size_t)om_tensor_numel(g));
  return g;
}

/* Column sums of rows x cols floats, summed in double in row order. */
static void col_sums(const float *p, int64_t rows, int64_t cols, float *out) {
  for (int64_t j = 0; j < cols; j++) {
    double s = 0;
    for (int64_t r = 0; r < rows; r++) s += p[r * cols + j];
    out[j] = (float)s;
  }
}

/* Backward through time. With da the gradient of the input-side pre-activations [T,N,G*H]
 * and dha that of the hidden-side ones (the same for an LSTM; for a GRU its n part is
 * da_n * r, as r multiplies h W_hn^T + b_hn):
 *   dx = da w_ih, dw_ih = da^T x, db_ih = sum da, dw_hh = dha^T h_prev, db_hh = sum dha,
 *   and per step (backwards) dh_prev = dh z (GRU only) + dha_t w_hh. */
static bool rnn_backward(const om_record *r, om_tensor *const *gout, om_tensor **gin) {
  rnn_args a;
  if (!args_load(&a, r->op, r->in, r->n_in, &r->attrs)) return false;
  const int G = a.k->gates;
  const bool lstm = G == 4;
  const int64_t T = a.T, N = a.N, I = a.I, H = a.H, GH = G * H, NH = N * H, TN = T * N;
  om_tensor *hg[2] = {0};
  const float *gy = dense(gout[0], &hg[0]), *gs = gy ? dense(gout[1], &hg[1]) : NULL;
  /* scratch: y, state, workspace, da, dha (GRU), h_prev, dh, dc, tmp, and the results */
  uint64_t need = (uint64_t)(TN * H + 2 * NH + TN * (GH + H) + TN * GH * (lstm ? 1 : 2) + TN * H + 3 * NH +
                             TN * I + GH * I + GH * H + 2 * GH + 1);
  float *buf = gs ? om__alloc(need * sizeof(float), a.k->name) : NULL;
  bool ok = buf != NULL;
  if (ok) {
    float *y = buf, *state = y + TN * H, *ws = state + 2 * NH, *da = ws + TN * (GH + H);
    float *dha = lstm ? da : da + TN * GH, *hprev = dha + TN * GH, *dh = hprev + TN * H, *dc = dh + NH, *tmp = dc + NH;
    float *dx = tmp + NH, *dwih = dx + TN * I, *dwhh = dwih + GH * I, *dbih = dwhh + GH * H, *dbhh = dbih + GH;
    ok = rnn_run(&a, y, state, ws);
    for (int64_t e = 0; ok && e < NH; e++) {
      dh[e] = gs[e];
      dc[e] = lstm ? gs[NH + e] : 0.0f;
    }
    for (int64_t s = T - 1; ok && s >= 0; s--) {
      int64_t t = time_of(&a, s);
      const float *hp = s > 0 ? y + time_of(&a, s - 1) * NH : a.h0;
      const float *cp = s > 0 ? ws + TN * GH + time_of(&a, s - 1) * NH : a.c0;
      const float *gt = ws + t * N * GH, *ex = ws + TN * GH + t * NH, *gyt = gy + t * NH;
      float *dat = da + t * N * GH, *dhat = dha + t * N * GH;
      for (int64_t e = 0; e < NH; e++) hprev[t * NH + e] = hp ? hp[e] : 0.0f;
      if (lstm) om__tanhf_n(ex, tmp, NH); /* tanh(c_t), in tmp until the product below */
      for (int64_t n = 0; n < N; n++)
        for (int64_t j = 0; j < H; j++) {
          int64_t e = n * H + j, o = n * GH + j;
          float dht = dh[e] + gyt[e];
          if (lstm) {
            float ig = gt[o], fg = gt[o + H], gg = gt[o + 2 * H], og = gt[o + 3 * H], tc = tmp[e];
            float dct = dc[e] + dht * og * (1.0f - tc * tc), cprev = cp ? cp[e] : 0.0f;
            dat[o] = dct * gg * ig * (1.0f - ig);
            dat[o + H] = dct * cprev * fg * (1.0f - fg);
            dat[o + 2 * H] = dct * ig * (1.0f - gg * gg);
            dat[o + 3 * H] = dht * tc * og * (1.0f - og);
            dc[e] = dct * fg;
          } else {
            float rg = gt[o], zg = gt[o + H], ng = gt[o + 2 * H], hprev_e = hp ? hp[e] : 0.0f;
            float dan = dht * (1.0f - zg) * (1.0f - ng * ng);
            dat[o] = dhat[o] = dan * ex[e] * rg * (1.0f - rg);
            dat[o + H] = dhat[o + H] = dht * (hprev_e - ng) * zg * (1.0f - zg);
            dat[o + 2 * H] = dan;
            dhat[o + 2 * H] = dan * rg;
            dc[e] = dht * zg; /* GRU: the direct part of dh_prev */
          }
        }
      /* dh_prev = dha_t w_hh (+ dh z for a GRU) */
      ok = om__gemm(dhat, GH, 1, a.whh, H, 1, tmp, N, H, GH, a.k->name);
      for (int64_t e = 0; ok && e < NH; e++) dh[e] = lstm ? tmp[e] : tmp[e] + dc[e];
    }
    ok = ok && om__gemm(da, GH, 1, a.wih, I, 1, dx, TN, I, GH, a.k->name) &&
         om__gemm(da, 1, GH, a.x, I, 1, dwih, GH, I, TN, a.k->name) &&
         om__gemm(dha, 1, GH, hprev, H, 1, dwhh, GH, H, TN, a.k->name);
    if (ok) {
      col_sums(da, TN, GH, dbih);
      col_sums(dha, TN, GH, dbhh);
      const float *grads[7] = {dx, dwih, dwhh};
      int n = 3;
      if (r->attrs.i[1]) grads[n++] = dbih, grads[n++] = dbhh;
      if (has_state(r->n_in, &r->attrs)) {
        grads[n++] = dh;
        if (lstm) grads[n++] = dc;
      }
      for (int i = 0; ok && i < n; i++)
        if (om__wants(r, i)) ok = (gin[i] = grad_like(r->in[i], grads[i])) != NULL;
    }
  }
  free(buf);
  om__release_all(hg, 2);
  args_free(&a);
  return ok;
}

/* One ONNX LSTM / GRU node. Weights go in as the caller's values (named initializers when they
 * are parameters) through Reshape -> Gather (gate order) -> Reshape, which onnxruntime folds at
 * load time; biases as Concat(b_ih, b_hh) reordered the same way; states Unsqueezed to
 * [1, N, H]. Y [T,1,N,H] is Squeezed; the LSTM's Y_h and Y_c are Concatenated to [2,N,H]. */
/* cols < 0: the biases, [blocks * H] (no column axis). An input size of 0 gives weights of 0
 * columns, which the Reshapes keep with allowzero (a 0 in their shape would copy an axis). */
static int reorder(om_lower *l, const rnn_kind *k, int v, int64_t blocks, int64_t H, int64_t cols) {
  int G = k->gates, split, gathered, out, nd = cols < 0 ? 2 : 3;
  int64_t perm[8]; /* blocks is G (a weight) or 2G (both biases) */
  for (int64_t b = 0; b < blocks; b++) perm[b] = k->onnx_order[b % G] + b / G * G;
  om_meta mb = {.dtype = OM_FLOAT32, .ndim = nd, .shape = {blocks, H, cols}};
  om_meta mo = {.dtype = OM_FLOAT32, .ndim = nd, .shape = {1, blocks * H, cols}};
  int sb = om__lower_ints(l, mb.shape, mb.ndim), idx = om__lower_ints(l, perm, (int)blocks), so = om__lower_ints(l, mo.shape, mo.ndim);
  if (sb < 0 || idx < 0 || so < 0) return -1;
  const om_gattr *zero = cols == 0 ? &OM_ATTR_INT("allowzero", 1) : NULL;
  if (!om__emit(l, "Reshape", (int[]){v, sb}, 2, &mb, 1, &split, zero, zero != NULL) ||
      !om__emit(l, "Gather", (int[]){split, idx}, 2, &mb, 1, &gathered, &OM_ATTR_INT("axis", 0), 1) ||
      !om__emit(l, "Reshape", (int[]){gathered, so}, 2, &mo, 1, &out, zero, zero != NULL))
    return -1;
  return out;
}

/* A batch of 0 is zeros at a fixed size (om__lower_empty: onnxruntime's LSTM and GRU abort on
 * it); on a symbolic batch that can be 0 at some size (x[:, 2:] of an N from 2) the node runs on
 * one extra row, sliced off after (om__lower_extra_row, om__lower_drop_row). */
static bool lower_rnn(om_lower *l, const om_call *c) {
  int empty = om__lower_empty(l, c);
  if (empty) return empty > 0;
  bool pad = om__lower_may_be_0(l, om__lower_in_ext(l, 0, 1));
  const rnn_kind *k = kind_of(c->op);
  const int64_t T = c->in[0]->shape[0], N = c->in[0]->shape[1], I = c->in[0]->shape[2];
  const int64_t GH = c->in[1]->shape[0], H = GH / k->gates;
  int in[7] = {om__lower_input(l, 0), -1, -1, -1, -1, -1, -1}; /* X W R B sequence_lens initial_h initial_c */
  if ((in[1] = reorder(l, k, om__lower_input(l, 1), k->gates, H, I)) < 0 || (in[2] = reorder(l, k, om__lower_input(l, 2), k->gates, H, H)) < 0)
    return false;
  if (I == 0) { /* W x is a sum of nothing, 0: one zero feature and zero weights give the same
                 * (onnxruntime's GRU aborts on an input size of 0) */
    om_meta zm = {.dtype = OM_FLOAT32, .ndim = 3, .shape = {T, N, 1}}, wm = {.dtype = OM_FLOAT32, .ndim = 3, .shape = {1, GH, 1}};
    const int ext[3] = {om__lower_in_ext(l, 0, 0), om__lower_in_ext(l, 0, 1), -1};
    int zero = om__lower_scalar(l, 0, OM_FLOAT32), xs = om__lower_shape_operand(l, zm.shape, ext, 3), ws = om__lower_ints(l, wm.shape, 3);
    if (zero < 0 || xs < 0 || ws < 0 || !om__emit(l, "Expand", (int[]){zero, xs}, 2, &zm, 1, &in[0], NULL, 0) ||
        !om__emit(l, "Expand", (int[]){zero, ws}, 2, &wm, 1, &in[1], NULL, 0))
      return false;
  }
  om_meta xm = {.dtype = OM_FLOAT32, .ndim = 3, .shape = {T, N, I ? I : 1}};
  if (pad && (in[0] = om__lower_extra_row(l, in[0], &xm, 1)) < 0) return false;
  const int64_t NB = N + pad; /* the node's batch */
  if (c->attrs.i[1]) {
    om_meta cat = {.dtype = OM_FLOAT32, .ndim = 1, .shape = {2 * GH}};
    int b;
    if (!om__emit(l, "Concat", (int[]){om__lower_input(l, 3), om__lower_input(l, 4)}, 2, &cat, 1, &b, &OM_ATTR_INT("axis", 0), 1) ||
        (in[3] = reorder(l, k, b, 2 * k->gates, H, -1)) < 0)
      return false;
  }
  int zero = om__lower_ints(l, (int64_t[]){0}, 1), one = om__lower_ints(l, (int64_t[]){1}, 1);
  if (zero < 0 || one < 0) return false;
  om_meta st = {.dtype = OM_FLOAT32, .ndim = 3, .shape = {1, NB, H}};
  for (int s = 0; has_state(c->n_in, &c->attrs) && s < k->states; s++) {
    om_meta sm = {.dtype = OM_FLOAT32, .ndim = 2, .shape = {N, H}};
    int v = om__lower_input(l, state_index(&c->attrs) + s);
    if ((pad && (v = om__lower_extra_row(l, v, &sm, 0)) < 0) || !om__emit(l, "Unsqueeze", (int[]){v, zero}, 2, &st, 1, &in[5 + s], NULL, 0))
      return false;
  }
  om_meta outs[3] = {{.dtype = OM_FLOAT32, .ndim = 4, .shape = {T, 1, NB, H}}, st, st};
  int o[3], y, s;
  om_gattr at[3] = {OM_ATTR_INT("hidden_size", H), OM_ATTR_STRING("direction", c->attrs.i[0] ? "reverse" : "forward"),
                    OM_ATTR_INT("linear_before_reset", 1)};
  if (!om__emit(l, k->onnx, in, k->states == 2 ? 7 : 6, outs, k->states + 1, o, at, k->states == 2 ? 2 : 3)) return false;
  for (int j = 0; pad && j <= k->states; j++)
    if ((o[j] = om__lower_drop_row(l, o[j], outs[j], j ? 1 : 2)) < 0) return false;
  if (!om__emit(l, "Squeeze", (int[]){o[0], one}, 2, &c->out_meta[0], 1, &y, NULL, 0)) return false;
  if (k->states == 2 ? !om__emit(l, "Concat", (int[]){o[1], o[2]}, 2, &c->out_meta[1], 1, &s, &OM_ATTR_INT("axis", 0), 1)
                     : !om__emit(l, "Squeeze", (int[]){o[1], zero}, 2, &c->out_meta[1], 1, &s, NULL, 0))
    return false;
  om__lower_output(l, 0, y);
  om__lower_output(l, 1, s);
  return true;
}

const om_op_def om__op_lstm_layer = {
    .name = "lstm_layer", .n_in = -1, .n_out = 2, .saves = RNN_SAVES,
    .infer = infer_rnn, .forward = forward_rnn, .backward = rnn_backward, .lower = lower_rnn,
    .onnx = "LSTM (weights reordered by Reshape, Gather, Reshape; Unsqueeze, Squeeze, Concat)",
    .test = {.n_in = 7, .ndims = {3, 2, 2, 1, 1, 2, 2}, .shapes = {{3, 2, 4}, {12, 4}, {12, 3}, {12}, {12}, {2, 3}, {2, 3}},
             .lo = -1, .hi = 1, .attrs = {.n_i = 2, .i = {1, 1}},
             .empty_refusal = "the sequence length must be at least 1"}}; /* PyTorch's RNNs refuse it too */

const om_op_def om__op_gru_layer = {
    .name = "gru_layer", .n_in = -1, .n_out = 2, .saves = RNN_SAVES,
    .infer = infer_rnn, .forward = forward_rnn, .backward = rnn_backward, .lower = lower_rnn,
    .onnx = "GRU linear_before_reset=1 (weights reordered by Reshape, Gather, Reshape; Unsqueeze, Squeeze)",
    .test = {.n_in = 6, .ndims = {3, 2, 2, 1, 1, 2}, .shapes = {{3, 2, 4}, {9, 4}, {9, 3}, {9}, {9}, {2, 3}},
             .lo = -1, .hi = 1, .attrs = {.n_i = 2, .i = {0, 1}},
             .empty_refusal = "the sequence length must be at least 1"}};

/* ---- composites: PyTorch's nn.LSTM / nn.GRU forward, from the per-layer, per-direction ops ---- */

static om_tensor *rnn_stack(const rnn_kind *k, om_tensor *x, om_tensor *h0, om_tensor *c0, om_tensor *const *params,
                            int n_params, int num_layers, bool bias, bool batch_first, bool bidirectional,
                            om_tensor **h_n, om_tensor **c_n) {
  const char *who = k->states == 2 ? "lstm" : "gru";
  if (!om__check_inputs(who, &x, 1)) return NULL;
  const int D = bidirectional ? 2 : 1, per = bias ? 4 : 2;
  if (num_layers < 1 || num_layers > 1024)
    return om__fail(OM_ERR_INVALID_ARGUMENT, "%s: num_layers must be in [1, 1024], got %d", who, num_layers), NULL;
  if (n_params != num_layers * D * per || !params)
    return om__fail(OM_ERR_INVALID_ARGUMENT, "%s: expects %d parameters (%d layers x %d directions x %s), got %d", who,
                    num_layers * D * per, num_layers, D, bias ? "w_ih, w_hh, b_ih, b_hh" : "w_ih, w_hh", n_params), NULL;
  if (!om__check_inputs(who, params, n_params)) return NULL;
  if (k->states == 2 && (h0 == NULL) != (c0 == NULL))
    return om__fail(OM_ERR_INVALID_ARGUMENT, "lstm: give both h0 and c0 or neither"), NULL;
  if (x->ndim != 2 && x->ndim != 3) {
    char xs[OM_SHAPE_STR_LEN];
    return om__fail(OM_ERR_SHAPE_MISMATCH, "%s: input must be 2-D (unbatched) or 3-D, got %s", who,
                    om__shape_str(xs, sizeof xs, x->shape, x->ndim)), NULL;
  }
  const bool unbatched = x->ndim == 2;
  const int64_t H = params[1]->ndim == 2 ? params[1]->shape[1] : -1;
  om_tensor *st_in[2] = {h0, c0}, *st[2] = {NULL, NULL};
  int64_t want[3] = {(int64_t)num_layers * D, unbatched ? H : x->shape[batch_first ? 0 : 1], H};
  for (int s = 0; s < k->states; s++) {
    om_tensor *t = st_in[s];
    if (!t) continue;
    bool ok = t->ndim == (unbatched ? 2 : 3) && t->shape[0] == want[0] && t->shape[1] == want[1] && (unbatched || t->shape[2] == H);
    if (!ok) {
      char a[OM_SHAPE_STR_LEN], b[OM_SHAPE_STR_LEN];
      return om__fail(OM_ERR_SHAPE_MISMATCH, "%s: %s is %s, expected %s", who, s ? "c0" : "h0", om__shape_str(a, sizeof a, t->shape, t->ndim),
                      om__shape_str(b, sizeof b, want, unbatched ? 2 : 3)), NULL;
    }
  }
  const int n_dir = num_layers * D;
  om_tensor **keep = om__alloc(sizeof(om_tensor *) * (size_t)(3 * n_dir + 2), who);
  if (!keep) return NULL;
  memset(keep, 0, sizeof(om_tensor *) * (size_t)(3 * n_dir + 2));
  om_tensor **hs = keep, **cs = keep + n_dir, **ys = keep + 2 * n_dir, **tmp = keep + 3 * n_dir; /* tmp: 2 slots */
  /* inp: the current layer's input [T, N, features], an owned reference */
  om_tensor *out = NULL, *inp = unbatched ? om_unsqueeze(x, 1) : batch_first ? om_transpose(x, 0, 1) : om_tensor_retain(x);
  for (int s = 0; s < k->states && inp; s++)
    if (st_in[s]) st[s] = tmp[s] = unbatched ? om_unsqueeze(st_in[s], 1) : om_tensor_retain(st_in[s]);
  bool ok = inp && (!h0 || st[0]) && (k->states == 1 || !c0 || st[1]);
  for (int layer = 0; ok && layer < num_layers; layer++) {
    for (int d = 0; ok && d < D; d++) {
      int idx = layer * D + d, n = 0;
      om_tensor *in[7], *sel[2] = {NULL, NULL}, *o[2] = {NULL, NULL};
      om_tensor *const *p = params + idx * per;
      in[n++] = inp;
      for (int q = 0; q < per; q++) in[n++] = p[q];
      for (int s = 0; s < k->states && st[0]; s++) ok &= (in[n++] = sel[s] = om_select(st[s], 0, idx)) != NULL;
      om_attrs at = {.n_i = 2, .i = {d, bias}};
      ok = ok && om__apply(k->states == 2 ? OM_OP_lstm_layer : OM_OP_gru_layer, in, n, &at, o) == 2;
      om__release_all(sel, 2);
      if (!ok) break;
      ys[idx] = o[0];
      if (k->states == 2) {
        hs[idx] = om_select(o[1], 0, 0);
        cs[idx] = om_select(o[1], 0, 1);
        om_tensor_release(o[1]);
        ok = hs[idx] && cs[idx];
      } else {
        hs[idx] = o[1];
      }
    }
    if (!ok) break;
    om_tensor *next = D == 2 ? om_cat(ys + layer * D, 2, 2) : om_tensor_retain(ys[layer * D]);
    om_tensor_release(inp);
    inp = next;
    ok = inp != NULL;
  }
  if (ok) {
    out = unbatched ? om_squeeze(inp, (int64_t[]){1}, 1) : batch_first ? om_transpose(inp, 0, 1) : om_tensor_retain(inp);
    ok = out != NULL;
  }
  om_tensor_release(inp);
  om_tensor **res[2] = {h_n, c_n}, **src[2] = {hs, cs};
  for (int s = 0; ok && s < k->states; s++) {
    if (!res[s]) continue;
    om_tensor *stacked = om_stack(src[s], n_dir, 0);
    *res[s] = stacked && unbatched ? om_squeeze(stacked, (int64_t[]){1}, 1) : om_tensor_retain(stacked);
    om_tensor_release(stacked);
    ok = *res[s] != NULL;
  }
  if (!ok) {
    for (int s = 0; s < k->states; s++)
      if (res[s] && *res[s]) om_tensor_release(*res[s]), *res[s] = NULL;
    om_tensor_release(out);
    out = NULL;
  }
  om__release_all(keep, 3 * n_dir + 2);
  free(keep);
  return out;
}

om_tensor *om_lstm(om_tensor *x, om_tensor *h0, om_tensor *c0, om_tensor *const *params, int n_params, int num_layers,
                   bool bias, bool batch_first, bool bidirectional, om_tensor **h_n, om_tensor **c_n) {
  if (h_n) *h_n = NULL;
  if (c_n) *c_n = NULL;
  return rnn_stack(&LSTM, x, h0, c0, params, n_params, num_layers, bias, batch_first, bidirectional, h_n, c_n);
}

om_tensor *om_gru(om_tensor *x, om_tensor *h0, om_tensor *const *params, int n_params, int num_layers, bool bias,
                  bool batch_first, bool bidirectional, om_tensor **h_n) {
  if (h_n) *h_n = NULL;
  return rnn_stack(&GRU, x, h0, NULL, params, n_params, num_layers, bias, batch_first, bidirectional, h_n, NULL);
}
