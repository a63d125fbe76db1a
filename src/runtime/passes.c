/* Fast mode's passes over a plan's steps (src/runtime/plan.h). The ONNX op table's rules only
 * translate nodes into the library's ops; what a run of those ops computes together is matched
 * here, on the steps they recorded, where shapes, constants' values and every reader of a buffer
 * are known. A fusion records the one op that replaces the run (om__apply on the run's planned
 * inputs appends it as the plan's last step), moves it into the place of the run's last step, so
 * it writes that step's output tensor (every reader of it, views included, stays as it is), and
 * marks the rest of the run dead. Each pass keeps the values: the attention op and a convolution
 * with folded weights give the bits or the tolerance that their docs state. */
#include <stdlib.h>
#include <string.h>

#include "runtime/plan.h"

static om_buffer *buffer_of(om_plan *p, const om_tensor *t) {
  return t && t->storage->planned ? &p->buffers.v[t->storage->buffer] : NULL;
}

/* The live step that wrote t as its one output (t itself, not a view of it), or NULL. Steps are
 * named by index across a recording (which may move the array). */
static om_step *writer(om_plan *p, const om_tensor *t) {
  const om_buffer *b = buffer_of(p, t);
  om_step *st = b && b->first >= 0 ? &p->steps.v[b->first] : NULL;
  return st && !st->dead && st->n_out == 1 && st->out[0] == t ? st : NULL;
}

static om_step *at(om_plan *p, int k) { return k >= 0 ? &p->steps.v[k] : NULL; }

/* The index of writer(t) when it is op and `views` + 1 step inputs read t's buffer (no graph
 * output; views: the steps reading a view of t that a pass takes in too), else -1. */
static int link_of(om_plan *p, const om_tensor *t, om_op op, int views) {
  om_step *st = writer(p, t);
  return st && st->op == op && buffer_of(p, t)->readers == 1 + views ? (int)(st - p->steps.v) : -1;
}

/* The index of writer(t) when it is op and one step input alone reads t's buffer (no graph
 * output, no view), else -1. */
static int sole_link(om_plan *p, const om_tensor *t, om_op op) { return link_of(p, t, op, 0); }

/* The step before `before` that made view t (its one output), or -1. */
static int view_of(om_plan *p, const om_tensor *t, int before) {
  for (int j = before - 1; j >= 0; j--)
    if (!p->steps.v[j].dead && p->steps.v[j].n_out == 1 && p->steps.v[j].out[0] == t) return om__ops[p->steps.v[j].op]->view ? j : -1;
  return -1;
}

/* Removes step k from the plan: its inputs lose a reader, the buffers it wrote go. */
static void kill(om_plan *p, int k) {
  om_step *st = &p->steps.v[k];
  for (int i = 0; i < st->n_in; i++) {
    om_buffer *b = buffer_of(p, st->in[i]);
    if (b) b->readers--;
  }
  for (int j = 0; j < st->n_out; j++) {
    om_buffer *b = buffer_of(p, st->out[j]);
    if (b && b->first == k) b->storage = NULL; /* a view's output lies in its input's buffer, which stays */
  }
  om__release_all(st->in, st->n_in);
  free(st->in);
  om__release_all(st->out, st->n_out);
  st->n_in = st->n_out = 0;
  st->in = NULL;
  st->dead = true;
}

/* The op a pass just recorded (the steps from index `before` on; y its output, a new reference
 * or NULL) replaces step k, writing k's output, when it made one step of k's output's type and
 * shape: true then (its outputs past the first, which nothing reads, become k's too). Otherwise
 * (or when recording failed: the error is cleared, the steps stay unfused) it goes. y is released
 * either way. */
static bool replace(om_plan *p, int k, int before, om_tensor *y) {
  om_tensor_release(y);
  om_step *last = p->steps.n == before + 1 ? &p->steps.v[before] : NULL, *st = &p->steps.v[k];
  bool fits = y && last && last->n_out >= 1 && last->out[0] && st->n_out == 1 && last->out_meta[0].dtype == st->out_meta[0].dtype &&
              last->out_meta[0].ndim == st->out_meta[0].ndim &&
              !memcmp(last->out_meta[0].shape, st->out_meta[0].shape, sizeof(int64_t) * (size_t)st->out_meta[0].ndim);
  if (!y) om_clear_error();
  if (fits) { /* k takes the new call; the last step takes k's old inputs, and goes with them */
    om_step old = *st;
    st->op = last->op, st->n_in = last->n_in, st->in = last->in, st->attrs = last->attrs;
    memcpy(st->out_meta, last->out_meta, sizeof st->out_meta);
    last->n_in = old.n_in, last->in = old.in;
    for (int j = 1; j < last->n_out; j++) { /* the call's other outputs (layer_norm's statistics): k writes them, nothing reads them */
      st->out[j] = last->out[j];
      buffer_of(p, st->out[j])->first = k;
    }
    st->n_out = last->n_out, last->n_out = 1;
  }
  for (int q = before; q < p->steps.n; q++) kill(p, q);
  p->steps.n = before; /* the recorded steps were the last: nothing refers to them */
  return fits;
}

/* t a constant float32 of one value and at most rank dims: that value. */
static bool one_float(const om_tensor *t, int rank, double *v) {
  if (!t || t->storage->planned || t->dtype != OM_FLOAT32 || om_tensor_numel(t) != 1 || t->ndim > rank) return false;
  *v = om__get_flat(t, 0);
  return true;
}

static bool same_shape(const om_tensor *a, const om_tensor *b) {
  return a->ndim == b->ndim && !memcmp(a->shape, b->shape, sizeof(int64_t) * (size_t)a->ndim);
}

/* ---- BatchNormalization into the convolution before it ----
 * A batch_norm in eval mode whose input only a convolution with constant weights wrote becomes
 * that convolution with its weights and bias scaled (w s, (b - mean) s + B, s = scale /
 * sqrt(var + eps) per output channel, computed once, now): one kernel instead of two, equal to
 * the last bits. */
static bool fold_batch_norm(om_plan *p, int k) {
  const om_step *bn = &p->steps.v[k];
  /* batch_norm's inputs: x, running mean and var, weight, bias; attrs: training, and which are given */
  if (bn->n_in != 5 || bn->attrs.i[0] || !bn->attrs.i[1] || !bn->attrs.i[2] || !bn->attrs.i[3]) return true;
  int c = sole_link(p, bn->in[0], OM_OP_conv2d);
  if (c < 0) c = sole_link(p, bn->in[0], OM_OP_conv1d);
  const om_step *conv = c >= 0 ? &p->steps.v[c] : NULL;
  if (!conv || conv->in[1]->storage->planned || (conv->n_in > 2 && conv->in[2]->storage->planned)) return true;
  for (int i = 1; i < 5; i++)
    if (bn->in[i]->storage->planned || bn->in[i]->ndim != 1 || bn->in[i]->shape[0] != conv->in[1]->shape[0]) return true;
  om_tensor *mean = bn->in[1], *var = bn->in[2], *scale = bn->in[3], *shift = bn->in[4], *cw = conv->in[1];
  om_scope s = {0};
  int64_t shape[OM_MAX_DIMS] = {cw->shape[0]};
  for (int d = 1; d < cw->ndim; d++) shape[d] = 1;
  om_tensor *kf = om__keep(&s, om_div(scale, om__keep(&s, om_sqrt(om__keep(&s, om_add_scalar(var, bn->attrs.f[1]))))));
  om_tensor *w = om__keep(&s, om_mul(cw, om__keep(&s, om_reshape(kf, shape, cw->ndim))));
  om_tensor *shifted = conv->n_in > 2 ? om__keep(&s, om_sub(conv->in[2], mean)) : om__keep(&s, om_neg(mean));
  om_tensor *bias = om__keep(&s, om_add(om__keep(&s, om_mul(shifted, kf)), shift));
  bool ok = bias != NULL;
  if (ok) {
    int before = p->steps.n;
    om_attrs at = conv->attrs;
    if (replace(p, k, before, om__apply1(conv->op, (om_tensor *[]){conv->in[0], w, bias}, 3, &at))) kill(p, c);
  }
  om__scope_end(&s);
  return ok;
}

/* ---- attention ----
 * The attention a graph writes as separate ops,
 *   matmul(q, kt) [-> mul or div by a constant scalar] [-> add(mask) | where(bool mask, s, fill) |
 *   where(bool mask, fill, s)] -> softmax(last axis) -> matmul(p, v),
 * each value between them read by the next step alone, becomes one step of the attention op
 * (src/ops/matmul.c), which never holds the [L, S] score matrix and gives the same bits. The
 * pieces between are not required: a graph with no scale or no mask matches too, and one that
 * scales q by a constant scalar before the product (q_scale) has that scale taken in.
 *
 * Between the mask and the softmax there may be a second mask added to the scores in another
 * grouping of their batches (torchvision's Swin: reshape to [B / windows, windows, heads, N, N],
 * add the shift mask, reshape back): reshape(add(reshape(s), mask2)) to s's shape, with s's last
 * two dims kept and each value read by the next step alone. The attention op then adds it too,
 * in that grouping (regrouping keeps the batches' order, so batch t of the scores is batch t of
 * the reshape): the same bits. */

/* The second mask of the attention whose softmax reads *x, when *x is such a regrouping: the
 * mask (borrowed), with the regrouped batch dims in r (their count in *nr), the reshapes' and the
 * add's steps in run[0..3) and *x the scores before the first reshape; else NULL. */
static om_tensor *second_mask(om_plan *p, om_tensor **x, int before, int64_t *r, int *nr, int *run) {
  int iv2 = view_of(p, *x, before);
  const om_step *v2 = at(p, iv2), *add, *v1;
  if (!v2 || v2->op != OM_OP_reshape || (run[1] = link_of(p, v2->in[0], OM_OP_add, 1)) < 0) return NULL;
  add = &p->steps.v[run[1]];
  for (int q = 0; q < 2; q++) {
    int iv1 = view_of(p, add->in[q], run[1]);
    if (!(v1 = at(p, iv1)) || v1->op != OM_OP_reshape) continue;
    const om_tensor *s = v1->in[0], *g = v1->out[0], *back = v2->out[0], *mask2 = add->in[1 - q];
    /* the grouping keeps [L, S], the add adds no dims, the reshape back gives s's shape; s read by these steps alone */
    if (s->ndim < 2 || g->ndim < 2 || g->ndim - 2 > OM_MAX_DIMS - 2 || mask2->dtype != OM_FLOAT32 || !same_shape(add->out[0], g) ||
        !same_shape(back, s) || g->shape[g->ndim - 1] != s->shape[s->ndim - 1] || g->shape[g->ndim - 2] != s->shape[s->ndim - 2] ||
        buffer_of(p, s)->readers != 2)
      continue;
    *nr = g->ndim - 2;
    memcpy(r, g->shape, sizeof(int64_t) * (size_t)*nr);
    run[0] = iv1, run[2] = iv2;
    *x = v1->in[0];
    return add->in[1 - q];
  }
  return NULL;
}

/* q scaled before the scores, q' = q * s or q / s with s a constant scalar and q' read by the
 * product alone (torch.onnx's nn.MultiheadAttention divides q by sqrt(head dim)): the scale step's
 * index, with *sk Q_MUL or Q_DIV, *scale s and *src q (borrowed); else -1. The attention op scales each element of
 * q's block the same way before the same product, so the bits stay those of the separate steps
 * (scaling the scores instead, (q kᵀ) / s, differs from (q / s) kᵀ in the last bits unless s is a
 * power of two, and then still where a value is subnormal). */
static int q_scale(om_plan *p, const om_tensor *q, int *sk, double *scale, om_tensor **src) {
  int k = sole_link(p, q, OM_OP_div);
  if (k < 0) k = sole_link(p, q, OM_OP_mul);
  const om_step *st = at(p, k);
  if (!st || (st->op == OM_OP_div && st->attrs.n_i && st->attrs.i[0])) return -1; /* div with a rounding mode */
  double s;
  int side = one_float(st->in[1], st->out[0]->ndim, &s) ? 0 : st->op == OM_OP_mul && one_float(st->in[0], st->out[0]->ndim, &s) ? 1 : -1;
  if (side < 0 || st->in[side]->dtype != OM_FLOAT32 || !same_shape(st->in[side], st->out[0])) return -1;
  *sk = st->op == OM_OP_mul ? OM_ATTN_Q_MUL : OM_ATTN_Q_DIV, *scale = s;
  *src = st->in[side];
  return k;
}

static bool fuse_attention(om_plan *p, int k) {
  int ism = -1, imk = -1, isc = -1, imm = -1; /* the links by index: recording the attention op may move the steps */
  const om_step *last = &p->steps.v[k], *sm, *mk = NULL, *sc = NULL, *mm;
  if (last->in[1]->ndim < 2 || !(sm = at(p, ism = sole_link(p, last->in[0], OM_OP_softmax))) || sm->attrs.i[0] != sm->out[0]->ndim - 1)
    return true;
  om_tensor *x = sm->in[0], *mask = NULL;
  int64_t r[OM_MAX_DIMS];
  int nr = 0, run2[3];
  om_tensor *mask2 = second_mask(p, &x, ism, r, &nr, run2);
  int views = mask2 != NULL; /* the scores' buffer is read by the first reshape and the add through it */
  int kind = OM_ATTN_ADD, sk = OM_ATTN_UNSCALED;
  double fill = 0, scale = 1;
  if ((mk = at(p, imk = link_of(p, x, OM_OP_add, views)))) { /* the scores are the side a product or a scale wrote */
    int side = -1;
    for (int q = 0; q < 2 && side < 0; q++) {
      const om_step *w = writer(p, mk->in[q]);
      if (w && (w->op == OM_OP_matmul || w->op == OM_OP_mul || w->op == OM_OP_div) && mk->in[1 - q]->dtype == OM_FLOAT32) side = q;
    }
    if (side < 0) return true;
    x = mk->in[side], mask = mk->in[1 - side], views = 0;
  } else if ((mk = at(p, imk = link_of(p, x, OM_OP_where, views)))) { /* where(mask, x, fill) keeps x where the mask is true; where(mask, fill, x) fills there */
    int side = one_float(mk->in[2], mk->out[0]->ndim, &fill) ? 1 : one_float(mk->in[1], mk->out[0]->ndim, &fill) ? 2 : 0;
    if (!side) return true;
    kind = side == 1 ? OM_ATTN_KEEP : OM_ATTN_FILL;
    x = mk->in[side], mask = mk->in[0], views = 0;
  }
  if ((sc = at(p, isc = link_of(p, x, OM_OP_mul, views))) || (sc = at(p, isc = link_of(p, x, OM_OP_div, views)))) {
    int side = one_float(sc->in[1], sc->out[0]->ndim, &scale) ? 0 : sc->op == OM_OP_mul && one_float(sc->in[0], sc->out[0]->ndim, &scale) ? 1 : -1;
    if (side < 0) return true;
    sk = sc->op == OM_OP_mul ? OM_ATTN_MUL : OM_ATTN_DIV;
    x = sc->in[side], views = 0;
  }
  if (!(mm = at(p, imm = link_of(p, x, OM_OP_matmul, views)))) return true;
  om_tensor *q = mm->in[0];
  int iqs = sc ? -1 : q_scale(p, mm->in[0], &sk, &scale, &q); /* q scaled before the product (nn.MultiheadAttention's) */
  /* the scale and the mask leave the scores' shape as the product made it, but for the batch
   * dims a mask adds */
  const om_tensor *s0 = mm->out[0];
  if (sc && !same_shape(sc->out[0], s0)) return true;
  if (mk) {
    om_meta m;
    if (!om__broadcast_shapes((om_tensor *[]){sc ? sc->out[0] : mm->out[0], mask}, 2, &m, "attention")) return om_clear_error(), true;
    const om_tensor *mt = mk->out[0];
    if (m.ndim != mt->ndim || memcmp(m.shape, mt->shape, sizeof(int64_t) * (size_t)m.ndim) ||
        mt->shape[m.ndim - 1] != s0->shape[s0->ndim - 1] || mt->shape[m.ndim - 2] != s0->shape[s0->ndim - 2])
      return true;
  }
  int before = p->steps.n;
  om_attrs a = {.n_i = 3 + nr, .i = {mask != NULL, kind, sk}, .n_f = 2, .f = {scale, fill}};
  memcpy(&a.i[3], r, sizeof(int64_t) * (size_t)nr);
  om_tensor *in[5] = {q, mm->in[1], last->in[1], mask ? mask : mask2, mask2};
  if (replace(p, k, before, om__apply1(OM_OP_attention, in, 3 + (mask != NULL) + (mask2 != NULL), &a))) {
    for (int j = 0; mask2 && j < 3; j++) kill(p, run2[j]);
    kill(p, ism);
    if (imk >= 0) kill(p, imk);
    if (isc >= 0) kill(p, isc);
    if (iqs >= 0) kill(p, iqs);
    kill(p, imm);
  }
  return true;
}

/* ---- linear ----
 * matmul(x, W) with W a constant matrix, then add of a constant vector b of W's columns (either
 * side: torch.onnx's nn.Linear on more than two dims, Hugging Face's Conv1D), becomes one step of
 * linear(x, W^T, b): W^T a view of W's storage made once, now (linear reads its weight through
 * its strides, so the product reads W as the matmul did), and the bias added to each row's
 * finished sum as the add did, in one product over all leading rows: the same bits. */
static bool fuse_linear(om_plan *p, int k) {
  const om_step *add = &p->steps.v[k];
  for (int q = 0; q < 2; q++) {
    int im = sole_link(p, add->in[q], OM_OP_matmul);
    const om_step *mm = at(p, im);
    om_tensor *bias = add->in[1 - q];
    if (!mm || mm->in[1]->storage->planned || mm->in[1]->ndim != 2 || bias->storage->planned || bias->dtype != OM_FLOAT32 ||
        bias->ndim != 1 || bias->shape[0] != mm->in[1]->shape[1])
      continue;
    om_tensor *wt = om_transpose(mm->in[1], 0, 1);
    if (!wt) return om_clear_error(), true;
    int before = p->steps.n;
    bool fused = replace(p, k, before, om_linear(mm->in[0], wt, bias));
    om_tensor_release(wt);
    if (fused) kill(p, im);
    return true;
  }
  return true;
}

/* ---- GELU ----
 * The GELU that exporters write as arithmetic, x 0.5 (1 + erf(x / sqrt 2)) (torch.onnx's nn.GELU,
 * BERT's gelu) or 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) (nn.GELU('tanh'), GPT-2's
 * gelu_new), its three factors multiplied in any order and grouping, x^3 as Pow or as two Muls,
 * each value between read by the next step alone, becomes one step of gelu: the erf form as a Gelu
 * node runs in fast mode (its erf within 7.2 ulp), the tanh form the same arithmetic as the nodes
 * but for the grouping of the last product (within 1 ulp of theirs). Each constant is the float32
 * of the exporters' value exactly; any other is left alone. */
typedef struct run {
  int n;
  int step[12]; /* the matched steps but the last, by index */
} run;

/* writer(t) when it is op and t's sole reader, added to r; else NULL. */
static const om_step *take(om_plan *p, run *r, const om_tensor *t, om_op op) {
  const om_step *st = r->n < 12 ? at(p, sole_link(p, t, op)) : NULL;
  if (st) r->step[r->n++] = (int)(st - p->steps.v);
  return st;
}

static bool is_const(const om_tensor *t, const om_step *reader, float v) {
  double got;
  return one_float(t, reader->out[0]->ndim, &got) && (float)got == v;
}

/* The input of binary st besides the constant v (either side of a mul or add, the divisor of a
 * div), or NULL. */
static om_tensor *beside(const om_step *st, float v) {
  for (int q = st->op == OM_OP_div; q < 2; q++)
    if (is_const(st->in[q], st, v)) return st->in[1 - q];
  return NULL;
}

/* t is x^3: pow(x, 3), x (x x) or (x x) x. */
static bool cube_of(om_plan *p, run *r, const om_tensor *t, const om_tensor *x) {
  int n = r->n;
  const om_step *st = take(p, r, t, OM_OP_pow);
  if (st && st->in[0] == x && is_const(st->in[1], st, 3)) return true;
  r->n = n;
  if (!(st = take(p, r, t, OM_OP_mul))) return false;
  for (int q = 0; q < 2; q++) {
    int m = r->n;
    const om_step *sq = st->in[1 - q] == x ? take(p, r, st->in[q], OM_OP_mul) : NULL;
    if (sq && sq->in[0] == x && sq->in[1] == x) return true;
    r->n = m;
  }
  r->n = n;
  return false;
}

/* t is 1 + erf(x / sqrt 2) (x * (1 / sqrt 2) too) or 1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)): the
 * form (0 erf, 1 tanh), or -1. */
static int gelu_sum(om_plan *p, run *r, const om_tensor *t, const om_tensor *x) {
  int n = r->n;
  const om_step *sum = take(p, r, t, OM_OP_add), *st;
  om_tensor *a = sum ? beside(sum, 1.0f) : NULL;
  if (a && take(p, r, a, OM_OP_erf)) {
    a = p->steps.v[r->step[r->n - 1]].in[0];
    int m = r->n;
    if ((st = take(p, r, a, OM_OP_div)) && beside(st, 1.41421356237309505f) == x) return 0;
    r->n = m;
    if ((st = take(p, r, a, OM_OP_mul)) && beside(st, 0.70710678118654752f) == x) return 0;
  } else if (a && take(p, r, a, OM_OP_tanh)) {
    a = p->steps.v[r->step[r->n - 1]].in[0];
    const om_step *inner = (st = take(p, r, a, OM_OP_mul)) ? take(p, r, beside(st, 0.7978845608028654f), OM_OP_add) : NULL;
    for (int q = 0; inner && q < 2; q++) {
      int m = r->n;
      const om_step *k3 = inner->in[1 - q] == x ? take(p, r, inner->in[q], OM_OP_mul) : NULL;
      om_tensor *c = k3 ? beside(k3, 0.044715f) : NULL;
      if (c && cube_of(p, r, c, x)) return 1;
      r->n = m;
    }
  }
  r->n = n;
  return -1;
}

static bool fuse_gelu(om_plan *p, int k) {
  const om_step *top = &p->steps.v[k];
  for (int q = 0; q < 2; q++) { /* top = in[1 - q] times the product in[q] */
    run r = {0};
    const om_step *inner = take(p, &r, top->in[q], OM_OP_mul);
    if (!inner) continue;
    om_tensor *f[3] = {top->in[1 - q], inner->in[0], inner->in[1]};
    for (int h = 0; h < 3; h++) { /* f[h] the half, then one of the others x and the other its sum */
      if (!is_const(f[h], h ? inner : top, 0.5f)) continue;
      for (int s = 0; s < 3; s++) {
        om_tensor *x = s != h ? f[3 - h - s] : NULL;
        int form = x && x->dtype == OM_FLOAT32 ? gelu_sum(p, &r, f[s], x) : -1;
        if (form < 0) continue;
        int before = p->steps.n;
        om_tensor *x_in = x;
        if (replace(p, k, before, om__apply1(OM_OP_gelu, &x_in, 1, &(om_attrs){.n_i = 2, .i = {form, !form}})))
          for (int j = 0; j < r.n; j++) kill(p, r.step[j]);
        return true;
      }
    }
  }
  return true;
}

/* ---- LayerNorm written out ----
 * What exporters write for a layer norm over the last axis below opset 17 (torch.onnx's
 * nn.LayerNorm, Hugging Face's BERT at opset 16 and below),
 *   d = x - mean(x), y = d / sqrt(mean(d^2) + eps) [* w] [+ b]
 * (ReduceMean, Sub, Pow(d, 2) or Mul(d, d), ReduceMean, Add(eps), Sqrt, Div, then the optional
 * Mul by a constant weight and Add of a constant bias of the axis' size, either side), each value
 * between read by the next steps of the run alone (d by the square and the division), becomes
 * one step of layer_norm. Its statistics are sums in double and one rounding each, where the
 * written-out run rounds every step to float: the two differ in the last bits of y (the fused one
 * the closer to the exact value), as a LayerNormalization node would. */

/* The mean over t's last axis (keepdim) when t's one reader is the run's next step: its step,
 * added to r, by index; or -1. */
static int last_axis_mean(om_plan *p, run *r, const om_tensor *t) {
  om_step *st = writer(p, t);
  if (!st || st->op != OM_OP_mean || buffer_of(p, t)->readers != 1 || st->attrs.n_i != 2 || !st->attrs.i[0] ||
      st->attrs.i[1] != st->in[0]->ndim - 1 || r->n >= 12)
    return -1;
  r->step[r->n++] = (int)(st - p->steps.v);
  return r->step[r->n - 1];
}

/* The live step after k that reads k's one output itself, when nothing else reads its buffer (no
 * other step, view or graph output): its index, or -1. */
static int sole_reader(om_plan *p, int k) {
  const om_tensor *t = p->steps.v[k].n_out == 1 ? p->steps.v[k].out[0] : NULL;
  const om_buffer *b = t ? buffer_of(p, t) : NULL;
  if (!b || b->readers != 1) return -1;
  for (int j = k + 1; j < p->steps.n; j++) {
    const om_step *st = &p->steps.v[j];
    for (int i = 0; !st->dead && i < st->n_in; i++)
      if (st->in[i]->storage == t->storage) return st->in[i] == t && st->n_in == 2 ? j : -1;
  }
  return -1;
}

/* The constant float32 vector of n values that the sole reader of step *last's output, an op
 * step, combines it with (either side): that constant, with *last added to r and the reader
 * now *last; else NULL. */
static om_tensor *vector_after(om_plan *p, run *r, int *last, int64_t n, om_op op) {
  int j = sole_reader(p, *last);
  const om_step *next = j >= 0 ? &p->steps.v[j] : NULL;
  if (!next || next->op != op || r->n >= 12) return NULL;
  om_tensor *c = next->in[next->in[0] == p->steps.v[*last].out[0] ? 1 : 0];
  if (c->storage->planned || c->dtype != OM_FLOAT32 || c->ndim != 1 || c->shape[0] != n) return NULL;
  r->step[r->n++] = *last;
  *last = j;
  return c;
}

static bool fuse_layer_norm(om_plan *p, int k) {
  const om_step *dv = &p->steps.v[k], *sub, *sq, *ve, *sd;
  run r = {0};
  om_tensor *d = dv->in[0];
  double eps, two;
  /* d / sqrt(mean(d^2) + eps), d = x - mean(x), d read by the square and the division alone */
  if (!(sd = take(p, &r, dv->in[1], OM_OP_sqrt)) || !(ve = take(p, &r, sd->in[0], OM_OP_add))) return true;
  int qv = one_float(ve->in[1], ve->out[0]->ndim, &eps) ? 0 : one_float(ve->in[0], ve->out[0]->ndim, &eps) ? 1 : -1;
  int iv = qv < 0 ? -1 : last_axis_mean(p, &r, ve->in[qv]);
  if (iv < 0 || !(sq = writer(p, p->steps.v[iv].in[0])) || buffer_of(p, sq->out[0])->readers != 1 ||
      !(sq->op == OM_OP_pow ? sq->in[0] == d && one_float(sq->in[1], sq->out[0]->ndim, &two) && two == 2
                            : sq->op == OM_OP_mul && sq->in[0] == d && sq->in[1] == d))
    return true;
  r.step[r.n++] = (int)(sq - p->steps.v);
  sub = writer(p, d);
  if (!sub || sub->op != OM_OP_sub || buffer_of(p, d)->readers != (sq->op == OM_OP_mul ? 3 : 2) || d->dtype != OM_FLOAT32) return true;
  r.step[r.n++] = (int)(sub - p->steps.v);
  om_tensor *x = sub->in[0];
  int im = last_axis_mean(p, &r, sub->in[1]);
  if (im < 0 || p->steps.v[im].in[0] != x || !same_shape(x, d) || x->ndim < 1 || !(eps >= 0)) return true;
  /* then the weight and the bias, each read by the next alone (a bias without a weight stays an add) */
  int64_t n = x->shape[x->ndim - 1];
  int last = k;
  om_tensor *w = vector_after(p, &r, &last, n, OM_OP_mul), *b = w ? vector_after(p, &r, &last, n, OM_OP_add) : NULL;
  int before = p->steps.n;
  if (replace(p, last, before, om_layer_norm(x, &n, 1, w, b, eps)))
    for (int j = 0; j < r.n; j++) kill(p, r.step[j]);
  return true;
}

/* ---- the layout of a copy the attention reads ----
 * torch.onnx's nn.MultiheadAttention (sequence first) reshapes each slice of its in-projection,
 * [S, B, E], to [S, B x heads, d] and transposes that to [B x heads, S, d] (k to [B x heads, d,
 * S]) for the attention. At B > 1 the reshape is a copy (clone, then a reshape view of it), whose
 * contiguous output puts one head's consecutive keys and values B x heads x d floats apart (4 KiB
 * at B 8, d 32): the attention's panels then gather rows that share cache sets. When the copy's
 * buffer is read only through that reshape and permutes of it, the copy writes its values in
 * the order the attention walks an operand instead: the operand's batch dims outermost, the
 * other dims in their order. Its output and input become views in the finest shape both the copy's and
 * the reshape's shapes split into ([S, B, heads, d]), the reshape and the permutes are computed
 * again on it, and every reader reads the same values at the same indices: the same bits. */

/* The shape both a and b split into (its dims in order, each of a's and b's dims a run of them):
 * its rank, with a's dim d from ga[d] to ga[d + 1] and b's likewise; or -1 (dims of no common
 * split such as [4, 6] and [6, 4], or a size 0). */
static int common_split(const int64_t *a, int na, const int64_t *b, int nb, int64_t *f, int *ga, int *gb) {
  int n = 0, i = 0, j = 0;
  int64_t ra = na ? a[0] : 1, rb = nb ? b[0] : 1;
  while (i < na && j < nb) {
    if (ra <= 0 || rb <= 0 || n == OM_MAX_DIMS || (ra < rb ? rb % ra : ra % rb)) return -1;
    int64_t m = ra < rb ? ra : rb;
    if (ga[i] < 0) ga[i] = n;
    if (gb[j] < 0) gb[j] = n;
    f[n++] = m;
    ra /= m, rb /= m;
    if (ra == 1 && ++i < na) ra = a[i];
    if (rb == 1 && ++j < nb) rb = b[j];
  }
  if (i < na || j < nb) return -1;
  ga[na] = gb[nb] = n;
  return n;
}

/* Whether t's buffer holds t, read by step ir alone (the reshape to r), r, and permutes of r: every
 * view of it is ir or a permute step reading r, and every kernel and graph output reading it
 * reads r or such a permute's output. */
static bool is_permutes(om_plan *p, const om_tensor *x, const om_tensor *r, int before) {
  int w = x == r ? -1 : view_of(p, x, before);
  return x == r || (w >= 0 && p->steps.v[w].op == OM_OP_permute && p->steps.v[w].in[0] == r);
}

static bool only_permutes(om_plan *p, const om_tensor *t, int ir, const om_tensor *r) {
  const om_storage *st = t->storage;
  for (int j = 0; j < p->steps.n; j++) {
    const om_step *s = &p->steps.v[j];
    bool view = om__ops[s->op]->view;
    for (int i = 0; !s->dead && i < s->n_in; i++)
      if (s->in[i]->storage == st && (view ? j != ir && (s->op != OM_OP_permute || s->in[0] != r) : !is_permutes(p, s->in[i], r, j)))
        return false;
  }
  for (int j = 0; j < p->n_outputs; j++)
    if (p->outputs[j]->storage == st && !is_permutes(p, p->outputs[j], r, p->steps.n)) return false;
  return true;
}

/* A view of t's storage in shape f (n dims) with strides s, t's offset: a new reference. */
static om_tensor *view_as(const om_tensor *t, const int64_t *f, const int64_t *s, int n) {
  om_tensor *v = om__alias(t);
  if (!v) return NULL;
  v->ndim = n;
  memcpy(v->shape, f, sizeof(int64_t) * (size_t)n);
  memcpy(v->strides, s, sizeof(int64_t) * (size_t)n);
  return v;
}

static bool lay_out_operand(om_plan *p, int k, int operand) {
  om_tensor *u = p->steps.v[k].in[operand];
  int iu = view_of(p, u, k), ir = iu >= 0 && p->steps.v[iu].op == OM_OP_permute ? view_of(p, p->steps.v[iu].in[0], iu) : iu;
  if (ir < 0 || p->steps.v[ir].op != OM_OP_reshape) return true;
  om_tensor *r = p->steps.v[ir].out[0], *t = p->steps.v[ir].in[0];
  om_step *c = writer(p, t);
  if (!c || c->op != OM_OP_clone || t->dtype != OM_FLOAT32 || !only_permutes(p, t, ir, r)) return true;
  /* the finest shape f, t's and r's dims as runs of it */
  int64_t f[OM_MAX_DIMS], fs[OM_MAX_DIMS], ss[OM_MAX_DIMS];
  int gt[OM_MAX_DIMS + 1], gr[OM_MAX_DIMS + 1];
  memset(gt, -1, sizeof gt), memset(gr, -1, sizeof gr);
  int nf = common_split(t->shape, t->ndim, r->shape, r->ndim, f, gt, gr);
  if (nf < 0) return true;
  /* f's dims in the order they lie in the new layout: those of u's batch dims (r's dims perm[d]), then the rest */
  const int64_t *perm = iu != ir ? p->steps.v[iu].attrs.i : NULL;
  int order[OM_MAX_DIMS], n = 0;
  bool placed[OM_MAX_DIMS] = {0};
  for (int d = 0; d < u->ndim - 2; d++) {
    int rd = perm ? (int)perm[d] : d;
    for (int q = gr[rd]; q < gr[rd + 1]; q++) order[n++] = q, placed[q] = true;
  }
  bool moved = false;
  for (int q = 0; q < nf; q++)
    if (!placed[q]) order[n++] = q;
  for (int q = 0; q < nf; q++) moved |= order[q] != q;
  if (!moved) return true; /* the copy's own order already has the batch dims outermost */
  for (int q = nf - 1, step = 1; q >= 0; q--) fs[order[q]] = step, step *= f[order[q]];
  /* the copy's input in shape f: each of its dims split, its stride spread over the run */
  om_tensor *s = c->in[0];
  for (int d = 0; d < t->ndim; d++)
    for (int q = gt[d + 1] - 1, step = 1; q >= gt[d]; q--) ss[q] = s->strides[d] * step, step *= f[q];
  om_tensor *sf = view_as(s, f, ss, nf), *tf = view_as(t, f, fs, nf);
  if (!sf || !tf) return om_tensor_release(sf), om_tensor_release(tf), om__fail(OM_ERR_OUT_OF_MEMORY, "session: out of memory laying out a copy");
  om_tensor_release(c->in[0]), om_tensor_release(c->out[0]), om_tensor_release(p->steps.v[ir].in[0]);
  c->in[0] = sf, c->out[0] = tf, p->steps.v[ir].in[0] = om_tensor_retain(tf);
  c->out_meta[0].ndim = nf;
  memcpy(c->out_meta[0].shape, f, sizeof(int64_t) * (size_t)nf);
  /* the reshape (each of r's dims a run of f's lying together, in order) and the permutes, again */
  for (int j = ir; j < p->steps.n; j++) {
    om_step *v = &p->steps.v[j];
    if (v->dead || !(j == ir || (v->op == OM_OP_permute && v->in[0] == r))) continue;
    om_call call = {.op = v->op, .n_in = v->n_in, .n_out = v->n_out, .in = v->in, .attrs = v->attrs};
    memcpy(call.out, v->out, sizeof call.out);
    om__ops[v->op]->forward(&call);
  }
  return true;
}

static bool lay_out_for_attention(om_plan *p, int k) {
  bool ok = true;
  for (int operand = 0; ok && operand < 3; operand++) ok = lay_out_operand(p, k, operand);
  return ok;
}

/* ---- RMSNorm written out ----
 * Hugging Face's RMSNorm (LLaMA, T5) as torch.onnx writes it,
 *   y = x * (1 / sqrt(mean(x^2) + eps)) [* w]   (Pow(x, 2) or Mul(x, x), ReduceMean over the last
 *                                                axis, Add(eps), Sqrt, Div(1, .) or Reciprocal, Mul)
 * or x / sqrt(mean(x^2) + eps) [* w], the weight a constant of the last axis' size, each value
 * between read by the next step alone, becomes one step of rms_norm (src/ops/norm.c), which does
 * the same float operations in the same order: the same bits. */
static bool fuse_rms_norm(om_plan *p, int k) {
  const om_step *top = &p->steps.v[k], *sd = NULL, *ve, *sq, *inv;
  run r = {0};
  int form = top->op == OM_OP_div;
  om_tensor *x = NULL;
  if (form) { /* x / s */
    sd = take(p, &r, top->in[1], OM_OP_sqrt), x = top->in[0];
  } else {
    for (int q = 0; q < 2 && !sd; q++) { /* x times 1 / s, either side */
      r.n = 0;
      if ((inv = take(p, &r, top->in[q], OM_OP_div)) && is_const(inv->in[0], inv, 1.0f)) sd = take(p, &r, inv->in[1], OM_OP_sqrt), x = top->in[1 - q];
    }
  }
  double eps, two;
  if (!sd || !(ve = take(p, &r, sd->in[0], OM_OP_add)) || x->dtype != OM_FLOAT32 || x->ndim < 1 || !same_shape(x, top->out[0])) return true;
  int qv = one_float(ve->in[1], ve->out[0]->ndim, &eps) ? 0 : one_float(ve->in[0], ve->out[0]->ndim, &eps) ? 1 : -1;
  int iv = qv < 0 ? -1 : last_axis_mean(p, &r, ve->in[qv]);
  if (iv < 0) return true;
  const om_tensor *squares = p->steps.v[iv].in[0];
  if (!(sq = at(p, sole_link(p, squares, OM_OP_pow)))) sq = at(p, sole_link(p, squares, OM_OP_mul));
  if (!sq || sq->in[0] != x || !(sq->op == OM_OP_pow ? one_float(sq->in[1], sq->out[0]->ndim, &two) && two == 2 : sq->in[1] == x) ||
      !same_shape(squares, x) || !(eps >= 0) || r.n >= 12)
    return true;
  r.step[r.n++] = (int)(sq - p->steps.v);
  int last = k;
  om_tensor *w = vector_after(p, &r, &last, x->shape[x->ndim - 1], OM_OP_mul);
  int before = p->steps.n;
  if (replace(p, last, before, om__rms_norm(x, w, eps, form)))
    for (int j = 0; j < r.n; j++) kill(p, r.step[j]);
  return true;
}

/* ---- a float32 sum written in float64, back to one float32 sum ----
 * Cast(x to float64), a sum, mean or cumsum of it, Cast back to float32 (what the tracer writes
 * for a sum over a symbolic axis, om__lower_sum_in_double), each value read by the next step
 * alone, becomes the op on x itself: its float32 kernels accumulate in double in the same order
 * (reduce.c, misc.c), so the bits are the same, without the float64 copy of x. */
static bool fold_sum_in_double(om_plan *p, int k) {
  const om_step *back = &p->steps.v[k];
  if (back->n_in != 1 || back->out_meta[0].dtype != OM_FLOAT32 || back->in[0]->dtype != OM_FLOAT64) return true;
  static const om_op sums[] = {OM_OP_sum, OM_OP_mean, OM_OP_cumsum};
  int js = -1;
  for (int q = 0; q < 3 && js < 0; q++) js = sole_link(p, back->in[0], sums[q]);
  const om_step *sum = at(p, js), *up = sum ? at(p, sole_link(p, sum->in[0], OM_OP_cast)) : NULL;
  if (!up || up->n_in != 1 || up->in[0]->dtype != OM_FLOAT32) return true;
  int iu = (int)(up - p->steps.v), before = p->steps.n;
  om_attrs attrs = sum->attrs;
  if (replace(p, k, before, om__apply1(sum->op, &up->in[0], 1, &attrs))) kill(p, js), kill(p, iu);
  return true;
}

/* Drops the dead steps and the buffers they wrote; the buffers keep their writers' new indices. */
static bool compact(om_plan *p) {
  int *at = malloc(sizeof(int) * (size_t)(p->steps.n + 1)), n = 0;
  if (!at) return om__fail(OM_ERR_OUT_OF_MEMORY, "session: out of memory compacting %d steps", p->steps.n);
  for (int k = 0; k < p->steps.n; k++) {
    at[k] = n;
    if (!p->steps.v[k].dead) p->steps.v[n++] = p->steps.v[k];
  }
  p->steps.n = n;
  n = 0;
  for (int b = 0; b < p->buffers.n; b++) {
    om_buffer buf = p->buffers.v[b];
    if (!buf.storage) continue;
    if (buf.first >= 0) buf.first = at[buf.first];
    buf.storage->buffer = n;
    p->buffers.v[n++] = buf;
  }
  p->buffers.n = n;
  free(at);
  return true;
}

bool om__plan_passes(om_plan *p) {
  bool ok = true;
  /* a fusion appends and then removes steps past the end: k only ever meets the graph's own */
  for (int k = 0, n = p->steps.n; ok && k < n; k++) {
    const om_step *st = &p->steps.v[k];
    if (st->dead) continue;
    if (st->op == OM_OP_batch_norm) ok = fold_batch_norm(p, k);
    else if (st->op == OM_OP_cast) ok = fold_sum_in_double(p, k);
    else if (st->op == OM_OP_matmul) ok = fuse_attention(p, k);
    else if (st->op == OM_OP_add) ok = fuse_linear(p, k);
    else if (st->op == OM_OP_mul) ok = fuse_gelu(p, k) && (p->steps.v[k].op != OM_OP_mul || fuse_rms_norm(p, k));
    else if (st->op == OM_OP_div) ok = fuse_layer_norm(p, k) && (p->steps.v[k].op != OM_OP_div || fuse_rms_norm(p, k));
  }
  for (int k = 0; ok && k < p->steps.n; k++) /* on the fused attentions */
    if (!p->steps.v[k].dead && p->steps.v[k].op == OM_OP_attention) ok = lay_out_for_attention(p, k);
  return ok && compact(p);
}
