/* Signal ops: dft. The block holds infer, forward, backward (with public ops), the ONNX lowering
 * and test settings, as in elementwise.c. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* The largest transform length: a table of 2^30 angles is 16 GiB, refused as OutOfMemory before. */
#define DFT_MAX ((int64_t)1 << 30)

/* ---- dft(x): x [..., n, c] (c 1: real, 2: complex) -> y [..., K, 2]; attrs i = {L, K, sign},
 * f = {scale} ----
 * y[k] = scale * sum over j < min(n, L) of x[j] e^(sign 2 pi i j k / L), k < K: ONNX's DFT along
 * axis -2 (sign -1, scale 1; inverse: sign 1, scale 1 / L; onesided: K = L / 2 + 1), x cut or
 * zero-padded to L. Accumulated in double over a table of the L angles in double (their sin and
 * cos from src/core/math.c, exact 0 and 1 on the axes) and rounded once, so a sum that cancels
 * (a real signal's spectrum's zeros) comes out as ONNX's float64 reference does, far below
 * float32's rounding of the terms, and native and WASM give the same bits. */

static bool infer_dft(om_call *c) {
  om_tensor *x = c->in[0];
  const om_attrs *at = &c->attrs;
  if (at->n_i != 3 || at->n_f != 1) return om__fail(OM_ERR_INVALID_ARGUMENT, "dft: takes a length, an output count, a sign and a scale");
  if (x->dtype != OM_FLOAT32) return om__fail(OM_ERR_DTYPE_MISMATCH, "dft: takes float32, not %s", om_dtype_name(x->dtype));
  if (x->ndim < 2 || (x->shape[x->ndim - 1] != 1 && x->shape[x->ndim - 1] != 2)) {
    char sh[OM_SHAPE_STR_LEN];
    return om__fail(OM_ERR_SHAPE_MISMATCH, "dft: the input must have 2 or more dims, the last of size 1 (real) or 2 (complex), got %s",
                    om__shape_str(sh, sizeof sh, x->shape, x->ndim));
  }
  int64_t L = at->i[0], K = at->i[1], sign = at->i[2];
  if (L < 1 || L > DFT_MAX) return om__fail(OM_ERR_INVALID_ARGUMENT, "dft: length %lld (1 to 2^30)", (long long)L);
  if (K < 0 || K > L) return om__fail(OM_ERR_INVALID_ARGUMENT, "dft: %lld outputs for a length of %lld (0 to the length)", (long long)K, (long long)L);
  if (sign != 1 && sign != -1) return om__fail(OM_ERR_INVALID_ARGUMENT, "dft: sign %lld (1 or -1)", (long long)sign);
  if (!isfinite(at->f[0])) return om__fail(OM_ERR_INVALID_ARGUMENT, "dft: scale %g is not finite", at->f[0]);
  c->out_meta[0] = (om_meta){.dtype = OM_FLOAT32, .ndim = x->ndim};
  memcpy(c->out_meta[0].shape, x->shape, sizeof x->shape);
  c->out_meta[0].shape[x->ndim - 2] = K;
  c->out_meta[0].shape[x->ndim - 1] = 2;
  return true;
}

static bool forward_dft(om_call *c) {
  const om_tensor *x = c->in[0], *o = c->out[0];
  int nd = x->ndim;
  int64_t L = c->attrs.i[0], K = c->attrs.i[1], n = x->shape[nd - 2], cx = x->shape[nd - 1], m = n < L ? n : L;
  double sign = (double)c->attrs.i[2], scale = c->attrs.f[0];
  int64_t lines = 1;
  for (int d = 0; d < nd - 2; d++) lines *= x->shape[d];
  if (!lines || !K) return true;
  double *table = om__alloc(sizeof(double) * 2 * (uint64_t)L, "dft"); /* cos, sin of 2 pi t / L */
  if (!table) return false;
  for (int64_t t = 0; t < L; t++) om__sincos_turn(t, L, &table[2 * t + 1], &table[2 * t]);
  const float *px = (const float *)om__data(x);
  float *po = (float *)om__data(o);
  int64_t sj = x->strides[nd - 2], sc = x->strides[nd - 1];
  for (int64_t line = 0; line < lines; line++) {
    int64_t rem = line, base = 0; /* the line's first element in x (o is contiguous) */
    for (int d = nd - 3; d >= 0; d--) {
      base += (rem % x->shape[d]) * x->strides[d];
      rem /= x->shape[d];
    }
    for (int64_t k = 0; k < K; k++) {
      double re = 0, im = 0;
      for (int64_t j = 0, t = 0; j < m; j++, t = (t + k) % L) { /* t = j k mod L */
        double a = px[base + j * sj], b = cx == 2 ? px[base + j * sj + sc] : 0, cs = table[2 * t], sn = sign * table[2 * t + 1];
        re += a * cs - b * sn; /* (a + i b)(cos + i sin) */
        im += a * sn + b * cs;
      }
      po[(line * K + k) * 2] = (float)(scale * re);
      po[(line * K + k) * 2 + 1] = (float)(scale * im);
    }
  }
  free(table);
  return true;
}

/* The gradient of a sum of x's terms times e^(sign i a) is g's sum times e^(-sign i a) (the
 * adjoint: the conjugate transpose) over the K outputs, for the min(n, L) positions read; zeros
 * for the positions past L, the real part for a real input. */
static bool dft_backward(const om_record *r, om_tensor *const *g, om_tensor **gin) {
  const om_tensor *x = r->in[0];
  int nd = x->ndim;
  int64_t L = r->attrs.i[0], n = x->shape[nd - 2], m = n < L ? n : L;
  om_tensor *h = om__apply1(OM_OP_dft, g, 1, &(om_attrs){.n_i = 3, .i = {L, m, -r->attrs.i[2]}, .n_f = 1, .f = {r->attrs.f[0]}});
  om_tensor *p = h && n > m ? om_pad(h, (int64_t[]){0, 0, 0, n - m}, 4, OM_PAD_CONSTANT, 0) : om_tensor_retain(h);
  om_tensor_release(h);
  gin[0] = p && x->shape[nd - 1] == 1 ? om_slice(p, nd - 1, 0, 1, 1) : om_tensor_retain(p);
  om_tensor_release(p);
  return gin[0] != NULL;
}

/* ONNX's DFT along axis -2 for its three forms (forward, inverse, onesided of a real input);
 * another (the backward's adjoints) is refused. */
static bool lower_dft(om_lower *l, const om_call *c) {
  int64_t L = c->attrs.i[0], K = c->attrs.i[1], sign = c->attrs.i[2];
  double scale = c->attrs.f[0];
  bool real = c->in[0]->shape[c->in[0]->ndim - 1] == 1;
  bool forward = sign == -1 && scale == 1 && (K == L || (real && K == L / 2 + 1));
  bool inverse = sign == 1 && scale == 1.0 / (double)L && K == L;
  if (!forward && !inverse) return om__lower_refuse(l, c, "only ONNX DFT's forms (forward, inverse, onesided of a real input) are written");
  /* onnxruntime's DFT divides by zero on an empty signal: a zero row more at its end changes no
   * sum (the rows past L are cut, the ones below it are zeros either way) */
  int nd = c->in[0]->ndim, x = !c->in[0]->shape[nd - 2] || om__lower_may_be_0(l, om__lower_in_ext(l, 0, nd - 2)) ? om__lower_zero_slices(l, 0, nd - 2, 1) : om__lower_input(l, 0);
  int len = om__lower_ints(l, &L, -1), axis = om__lower_ints(l, &(int64_t){-2}, -1), out;
  om_gattr attrs[2] = {OM_ATTR_INT("inverse", inverse), OM_ATTR_INT("onesided", forward && K != L)};
  if (x < 0 || len < 0 || axis < 0 || !om__emit(l, "DFT", (int[]){x, len, axis}, 3, &c->out_meta[0], 1, &out, attrs, 2)) return false;
  om__lower_output(l, 0, out);
  return true;
}

const om_op_def om__op_dft = {
    .name = "dft", .n_in = 1, .n_out = 1, .infer = infer_dft, .forward = forward_dft, .backward = dft_backward, .lower = lower_dft,
    .onnx = "DFT (axis -2, dft_length; inverse, onesided)",
    .test = {.n_in = 1, .ndims = {3}, .shapes = {{2, 5, 2}}, .lo = -2, .hi = 2, .attrs = {.n_i = 3, .i = {6, 6, -1}, .n_f = 1, .f = {1}}}};

om_tensor *om_dft(om_tensor *x, int64_t length, bool inverse, bool onesided) {
  if (x && onesided && (inverse || (x->ndim && x->shape[x->ndim - 1] == 2)))
    return om__fail(OM_ERR_INVALID_ARGUMENT, "dft: onesided takes a real input and no inverse"), NULL;
  int64_t K = onesided ? length / 2 + 1 : length;
  return om__apply1(OM_OP_dft, &x, 1, &(om_attrs){.n_i = 3, .i = {length, K, inverse ? 1 : -1}, .n_f = 1, .f = {inverse && length > 0 ? 1.0 / (double)length : 1}});
}
