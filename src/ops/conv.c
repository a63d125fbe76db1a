/* Convolutions and pooling, NCHW (NCL for conv1d), float32, with PyTorch's semantics.
 *
 *   conv1d / conv2d      x [N, C, (H,) W], weight [O, C/groups, (kH,) kW], bias [O] (optional)
 *   conv_transpose2d     x [N, C, H, W], weight [C, O/groups, kH, kW], bias [O] (optional)
 *   conv3d, conv_transpose3d   the same with a depth D (kD) before H (kH)
 *   max_pool2d, avg_pool2d, adaptive_avg_pool2d   x [N, C, H, W]; max_pool3d, avg_pool3d, adaptive_avg_pool3d x [N, C, D, H, W]
 *
 * One geometry serves 1 to 3 spatial axes (conv_geom: per-axis arrays of depth, height and width,
 * the axes a lower rank lacks of size 1), and one im2col (vol2col: the 2-D im2col per depth tap),
 * so conv1d is conv2d on a unit height and conv2d conv3d on a unit depth; each has its own op row
 * so it lowers to a Conv of its rank. The 2-D kernels keep fast paths for planes (windows read in
 * place, depthwise sums, bands of rows); a 3-D convolution runs as bands of output planes. The convolutions are matrix products on the matmul kernel (om__gemm, om__gemm_acc):
 *   conv forward            out[n, g] = W[g] [O/g, C/g*kH*kW]  x  im2col(x[n, g]) [C/g*kH*kW, OH*OW]
 *   transposed forward      out[n, g] = col2im( W[g]^T [O/g*kH*kW, C/g]  x  x[n, g] [C/g, H*W] )
 *   weight gradients        dW[g] = sum over n of  M[n, g] x im2col(Z[n, g])^T
 *                           (conv: M = dout, Z = x; transposed: M = x, Z = dout)
 * A depthwise conv (one input and one output channel per group) sums its taps directly instead,
 * in the product's order (depthwise() below). The input gradient of each convolution is the other
 * convolution (public ops, so it is itself
 * differentiable); the weight gradients and the pools' input gradients are kernels here, so
 * they are first-order only. Every sum runs in a fixed order (same bits natively and in WASM). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* ---- geometry ---- */

/* One 2-D sliding window: the image side (h x w), the kernel, and the window grid (oh x ow). */
typedef struct win {
  int64_t h, w, kh, kw, sh, sw, ph, pw, dh, dw, oh, ow;
} win;

/* Four floats (the depthwise sums, the max pool's lanes), loadable from any float. */
typedef float v4f __attribute__((vector_size(16), aligned(4)));
typedef int32_t v4i __attribute__((vector_size(16), aligned(4)));

static int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }


/* Every integer attribute is at most 2^31 - 1, so the output-size arithmetic cannot overflow. */
static bool attrs_in_range(const char *who, const om_attrs *a) {
  for (int k = 0; k < a->n_i; k++)
    if (a->i[k] > INT32_MAX)
      return om__fail(OM_ERR_INVALID_ARGUMENT, "%s: integer attribute %d is %lld, above 2^31-1", who, k, (long long)a->i[k]);
  return true;
}

/* A copy of t's elements, row-major (or t's own data when it is contiguous: *owned false), of
 * any dtype (max_unpool's int64 indices). */
static const void *dense_any(const om_tensor *t, bool *owned, const char *who) {
  int64_t st[OM_MAX_DIMS];
  om__contiguous_strides(t->shape, t->ndim, st);
  *owned = false;
  if (!memcmp(st, t->strides, sizeof(int64_t) * (size_t)t->ndim)) return om__data(t);
  void *p = om__alloc((uint64_t)om_tensor_numel(t) * om__dtype_size(t->dtype), who);
  if (!p) return NULL;
  om_storage s = {.data = p};
  om_tensor d = {.storage = &s, .dtype = t->dtype, .ndim = t->ndim};
  memcpy(d.shape, t->shape, sizeof d.shape);
  memcpy(d.strides, st, sizeof d.strides);
  om__copy_into(&d, t);
  *owned = true;
  return p;
}

/* dense_any of a float32 tensor. */
static const float *dense(const om_tensor *t, bool *owned, const char *who) { return dense_any(t, owned, who); }

/* The range [lo, hi) of window positions x whose tap x*s - p + off falls inside [0, n). */
static void tap_range(int64_t n, int64_t s, int64_t p, int64_t off, int64_t count, int64_t *lo, int64_t *hi) {
  int64_t a = p - off; /* x*s >= a */
  int64_t first = a <= 0 ? 0 : (a + s - 1) / s;
  int64_t b = n + p - off; /* x*s < b */
  int64_t last = b <= 0 ? 0 : (b + s - 1) / s;
  *lo = first < count ? first : count;
  *hi = last < count ? last : count;
  if (*hi < *lo) *hi = *lo;
}

/* Row (i, j) of im2col for a stride-1 convolution whose output is as wide as its input (a
 * "same" convolution, the common 3x3 one), output rows [y0, y1): the plane shifted by (dy, dx),
 * which is one contiguous copy of the rows that exist, then zeros where the shift wrapped a row
 * around. */
static void shifted_plane(const float *plane, const win *g, int64_t y0, int64_t y1, int64_t dy, int64_t dx, float *row) {
  int64_t w = g->w, base = y0 * w, end = y1 * w, ya = -dy > y0 ? -dy : y0, yb = g->h - dy < y1 ? g->h - dy : y1;
  if (ya > y1) ya = y1;
  if (yb < ya) yb = ya;
  /* rows [ya, yb) read plane rows: position k (row[k - base]) = plane[k + off] for k in [lo, hi),
   * but where k + off is before or past the plane (a shift left of the first row or right of the
   * last), which is a wrapped-around column, zeroed below like the others */
  int64_t lo = ya * w, hi = yb * w, off = dy * w + dx;
  int64_t a = -off < lo ? lo : -off > hi ? hi : -off, b = g->h * w - off < a ? a : g->h * w - off > hi ? hi : g->h * w - off;
  for (int64_t k = base; k < a; k++) row[k - base] = 0;
  for (int64_t k = a; k < b; k++) row[k - base] = plane[k + off];
  for (int64_t k = b; k < end; k++) row[k - base] = 0;
  for (int64_t y = ya; y < yb; y++) { /* the columns whose tap is left or right of the plane */
    float *r = row + (y - y0) * w;
    for (int64_t x = 0; x < -dx && x < w; x++) r[x] = 0;
    for (int64_t x = w - dx < 0 ? 0 : w - dx; x < w; x++) r[x] = 0;
  }
}

/* col [c*kh*kw, (y1 - y0) ow] = the windows of output rows [y0, y1) of img [c, h, w]
 * (contiguous), zeros where a tap is in the padding; col's rows ld floats apart (ld >= the row's
 * (y1 - y0) ow: a 3-D convolution's rows hold one such block per output depth, vol2col). */
static void im2col(const float *img, int64_t c, const win *g, int64_t y0, int64_t y1, float *col, int64_t ld) {
  bool same = g->sh == 1 && g->sw == 1 && g->ow == g->w;
  for (int64_t ch = 0; ch < c; ch++)
    for (int64_t i = 0; i < g->kh; i++)
      for (int64_t j = 0; j < g->kw; j++) {
        float *row = col + ((ch * g->kh + i) * g->kw + j) * ld;
        const float *plane = img + ch * g->h * g->w;
        if (same) {
          shifted_plane(plane, g, y0, y1, i * g->dh - g->ph, j * g->dw - g->pw, row);
          continue;
        }
        int64_t x0, x1;
        tap_range(g->w, g->sw, g->pw, j * g->dw, g->ow, &x0, &x1);
        for (int64_t y = y0; y < y1; y++, row += g->ow) {
          int64_t iy = y * g->sh - g->ph + i * g->dh;
          /* plain loops, not memcpy / memset: a window row is a few floats, which the compiler
           * copies inline with vectors where a call would cost more than the copy */
          if (iy < 0 || iy >= g->h) {
            for (int64_t x = 0; x < g->ow; x++) row[x] = 0;
            continue;
          }
          const float *src = plane + iy * g->w - g->pw + j * g->dw;
          for (int64_t x = 0; x < x0; x++) row[x] = 0;
          if (g->sw == 1)
            for (int64_t x = x0; x < x1; x++) row[x] = src[x];
          else
            for (int64_t x = x0; x < x1; x++) row[x] = src[x * g->sw];
          for (int64_t x = x1; x < g->ow; x++) row[x] = 0;
        }
      }
}

/* img [c, h, w] += the windows in col [c*kh*kw, oh*ow] (the adjoint of im2col; padding taps
 * dropped), col's rows ld floats apart. */
static void col2im(const float *col, int64_t c, const win *g, float *img, int64_t ld) {
  for (int64_t ch = 0; ch < c; ch++)
    for (int64_t i = 0; i < g->kh; i++)
      for (int64_t j = 0; j < g->kw; j++) {
        const float *row = col + ((ch * g->kh + i) * g->kw + j) * ld;
        float *plane = img + ch * g->h * g->w;
        int64_t x0, x1;
        tap_range(g->w, g->sw, g->pw, j * g->dw, g->ow, &x0, &x1);
        for (int64_t y = 0; y < g->oh; y++, row += g->ow) {
          int64_t iy = y * g->sh - g->ph + i * g->dh;
          if (iy < 0 || iy >= g->h) continue;
          float *dst = plane + iy * g->w - g->pw + j * g->dw;
          for (int64_t x = x0; x < x1; x++) dst[x * g->sw] += row[x];
        }
      }
}

/* ---- convolution attrs ----
 * conv1d: [s, p, d, groups]; conv2d: [sH, sW, pH, pW, dH, dW, groups]; conv3d: [sD, sH, sW, pD, pH,
 * pW, dD, dH, dW, groups]; conv_transpose2d / 3d: stride, padding, output_padding, dilation (one
 * per spatial axis each), groups. */

/* A convolution over 1 to 3 spatial axes. The per-axis arrays always hold 3 axes (depth, height,
 * width), the ones a 1-D or 2-D convolution lacks trivial (size 1, kernel 1, stride 1, no
 * padding): so one geometry, one im2col (vol2col) and one product serve every rank, and g (the
 * last two axes) feeds the 2-D kernels' fast paths. */
typedef struct conv_geom {
  bool transposed;
  int nsp;                  /* spatial axes: 1, 2 or 3 */
  int64_t n, c, o, groups;  /* batch, input channels, output channels */
  /* per axis: conv: image = input, grid = output; transposed: image = output, grid = input */
  int64_t img[3], grid[3], k[3], s[3], p[3], dl[3], op[3];
  win g;                    /* axes 1 and 2 as a 2-D window */
} conv_geom;

static const char *conv_name(om_op op) { return om_op_name(op); }

/* The spatial axes of a convolution op. */
static int conv_nsp(om_op op) {
  return op == OM_OP_conv1d ? 1 : op == OM_OP_conv3d || op == OM_OP_conv_transpose3d ? 3 : 2;
}

/* "AxBxC" (sep "x") or "A, B, C" (sep ", ") of v's axes [from, 3), for messages. */
static const char *axes_str(char *buf, size_t n, const int64_t *v, int from, const char *sep) {
  size_t at = 0;
  buf[0] = 0;
  for (int a = from; a < 3 && at < n; a++) at += (size_t)snprintf(buf + at, n - at, "%s%lld", a > from ? sep : "", (long long)v[a]);
  return buf;
}

/* A conv's per-channel floats of its image and of its grid, and its kernel's taps. */
static int64_t cg_image(const conv_geom *cg) { return cg->img[0] * cg->img[1] * cg->img[2]; }
static int64_t cg_grid(const conv_geom *cg) { return cg->grid[0] * cg->grid[1] * cg->grid[2]; }
static int64_t cg_taps(const conv_geom *cg) { return cg->k[0] * cg->k[1] * cg->k[2]; }

/* Reads attrs and shapes into cg, validating everything; fills out_meta when m is not NULL. */
static bool conv_geometry(om_op op, om_tensor *const *in, int n_in, const om_attrs *a, conv_geom *cg, om_meta *m) {
  const char *who = conv_name(op);
  bool tr = op == OM_OP_conv_transpose2d || op == OM_OP_conv_transpose3d;
  int nsp = conv_nsp(op), o0 = 3 - nsp, want_attrs = (tr ? 4 : 3) * nsp + 1;
  static const char *const spatial_names[3] = {"L", "H, W", "D, H, W"};
  char xs[OM_SHAPE_STR_LEN], ws[OM_SHAPE_STR_LEN], bs[OM_SHAPE_STR_LEN], t1[64], t2[64];
  if (n_in != 2 && n_in != 3)
    return om__fail(OM_ERR_INVALID_ARGUMENT, "%s: takes input, weight and an optional bias, got %d inputs", who, n_in);
  if (a->n_i != want_attrs) {
    if (nsp == 1) return om__fail(OM_ERR_INVALID_ARGUMENT, "%s: takes 4 integer attributes (stride, padding, dilation, groups), got %d", who, a->n_i);
    return om__fail(OM_ERR_INVALID_ARGUMENT, "%s: takes %d integer attributes (stride[%d], padding[%d], %sdilation[%d], groups), got %d", who,
                    want_attrs, nsp, nsp, tr ? (nsp == 3 ? "output_padding[3], " : "output_padding[2], ") : "", nsp, a->n_i);
  }
  if (!attrs_in_range(who, a)) return false;
  om_tensor *x = in[0], *w = in[1], *b = n_in == 3 ? in[2] : NULL;
  if (x->dtype != OM_FLOAT32 || w->dtype != OM_FLOAT32 || (b && b->dtype != OM_FLOAT32))
    return om__fail(OM_ERR_DTYPE_MISMATCH, "%s: takes float32, not %s", who,
                    om_dtype_name(x->dtype != OM_FLOAT32 ? x->dtype : w->dtype != OM_FLOAT32 ? w->dtype : b->dtype));
  /* the shapes as text, made only for a message (infer runs often while tracing) */
#define XS om__shape_str(xs, sizeof xs, x->shape, x->ndim)
#define WS om__shape_str(ws, sizeof ws, w->shape, w->ndim)
  if (x->ndim != nsp + 2)
    return om__fail(OM_ERR_SHAPE_MISMATCH, "%s: input %s must have %d dims ([N, C, %s]; the functions also take it without N)",
                    who, XS, nsp + 2, spatial_names[nsp - 1]);
  if (w->ndim != nsp + 2)
    return om__fail(OM_ERR_SHAPE_MISMATCH, "%s: weight %s must have %d dims", who, WS, nsp + 2);
  const int64_t *v = a->i;
  int64_t groups = v[want_attrs - 1];
  for (int ax = 0; ax < 3; ax++) {
    int i = ax - o0; /* the attribute index of this axis, or below 0: a trivial axis */
    cg->s[ax] = i < 0 ? 1 : v[i], cg->p[ax] = i < 0 ? 0 : v[nsp + i];
    cg->op[ax] = i < 0 || !tr ? 0 : v[2 * nsp + i], cg->dl[ax] = i < 0 ? 1 : v[(tr ? 3 : 2) * nsp + i];
    int64_t s = cg->s[ax], p = cg->p[ax], d = cg->dl[ax], op_ = cg->op[ax];
    if (s < 1) return om__fail(OM_ERR_INVALID_ARGUMENT, "%s: stride must be positive, got %lld", who, (long long)s);
    if (p < 0) return om__fail(OM_ERR_INVALID_ARGUMENT, "%s: padding must be non-negative, got %lld", who, (long long)p);
    if (d < 1) return om__fail(OM_ERR_INVALID_ARGUMENT, "%s: dilation must be positive, got %lld", who, (long long)d);
    if (op_ < 0 || (tr && op_ >= s && op_ >= d))
      return om__fail(OM_ERR_INVALID_ARGUMENT, "%s: output_padding %lld must be smaller than either stride (%lld) or dilation (%lld)",
                      who, (long long)op_, (long long)s, (long long)d);
  }
  if (groups < 1) return om__fail(OM_ERR_INVALID_ARGUMENT, "%s: groups must be positive, got %lld", who, (long long)groups);
  int64_t c = x->shape[1], o, sz[3];
  for (int ax = 0; ax < 3; ax++)
    cg->k[ax] = ax < o0 ? 1 : w->shape[2 + ax - o0], sz[ax] = ax < o0 ? 1 : x->shape[2 + ax - o0];
  if (c % groups) return om__fail(OM_ERR_INVALID_ARGUMENT, "%s: groups %lld does not divide the %lld input channels", who, (long long)groups, (long long)c);
  if (!tr) {
    o = w->shape[0];
    if (o % groups) return om__fail(OM_ERR_INVALID_ARGUMENT, "%s: groups %lld does not divide the %lld output channels of weight %s", who, (long long)groups, (long long)o, WS);
    if (w->shape[1] * groups != c)
      return om__fail(OM_ERR_SHAPE_MISMATCH, "%s: input %s has %lld channels, weight %s expects %lld (weight.shape[1] * groups)",
                      who, XS, (long long)c, WS, (long long)(w->shape[1] * groups));
  } else {
    if (w->shape[0] != c)
      return om__fail(OM_ERR_SHAPE_MISMATCH, "%s: input %s has %lld channels, weight %s expects %lld (weight.shape[0])",
                      who, XS, (long long)c, WS, (long long)w->shape[0]);
    o = w->shape[1] * groups;
  }
  if (b && (b->ndim != 1 || b->shape[0] != o))
    return om__fail(OM_ERR_SHAPE_MISMATCH, "%s: bias %s must be [%lld]", who, om__shape_str(bs, sizeof bs, b->shape, b->ndim), (long long)o);
  if (cg->k[0] < 1 || cg->k[1] < 1 || cg->k[2] < 1) return om__fail(OM_ERR_SHAPE_MISMATCH, "%s: weight %s has an empty kernel", who, WS);
  /* messages show the height and width (2 axes) up to 2-D, all 3 axes for 3-D */
  int from = nsp == 3 ? 0 : 1;
  int64_t ext[3], out[3];
  for (int ax = 0; ax < 3; ax++) ext[ax] = cg->dl[ax] * (cg->k[ax] - 1) + 1;
  for (int ax = 0; ax < 3; ax++) {
    if (!tr) {
      if (sz[ax] + 2 * cg->p[ax] < ext[ax])
        return om__fail(OM_ERR_SHAPE_MISMATCH, "%s: kernel size %s (dilated %s) is larger than the padded input %s (padding %s)",
                        who, WS, axes_str(t1, sizeof t1, ext, from, "x"), XS, axes_str(t2, sizeof t2, cg->p, from, ", "));
      out[ax] = (sz[ax] + 2 * cg->p[ax] - ext[ax]) / cg->s[ax] + 1;
    } else {
      out[ax] = (sz[ax] - 1) * cg->s[ax] - 2 * cg->p[ax] + ext[ax] - 1 + cg->op[ax] + 1;
    }
  }
  if (tr && (out[0] < 1 || out[1] < 1 || out[2] < 1))
    return om__fail(OM_ERR_SHAPE_MISMATCH, "%s: input %s with weight %s and padding (%s) gives an empty output (%s)",
                    who, XS, WS, axes_str(t2, sizeof t2, cg->p, from, ", "), axes_str(t1, sizeof t1, out, from, "x"));
  for (int ax = 0; ax < 3; ax++) cg->img[ax] = tr ? out[ax] : sz[ax], cg->grid[ax] = tr ? sz[ax] : out[ax];
  cg->g = (win){cg->img[1], cg->img[2], cg->k[1], cg->k[2], cg->s[1], cg->s[2], cg->p[1], cg->p[2], cg->dl[1], cg->dl[2], cg->grid[1], cg->grid[2]};
  cg->transposed = tr, cg->nsp = nsp;
  cg->n = x->shape[0], cg->c = c, cg->o = o, cg->groups = groups;
  if (m) {
    *m = (om_meta){.dtype = OM_FLOAT32, .ndim = nsp + 2, .shape = {x->shape[0], o}};
    for (int ax = o0; ax < 3; ax++) m->shape[2 + ax - o0] = out[ax];
  }
  return true;
#undef XS
#undef WS
}

/* vol2col: col [c*kd*kh*kw, (od1 - od0)*oh*ow] = the windows of output depths [od0, od1) of
 * img [c, d, h, w] (contiguous), zeros where a tap is in the padding: per channel, depth tap and
 * output depth, the 2-D im2col of the input plane that tap reads (or zeros where it reads the
 * depth padding), at its place in each row. Without a depth (1-D and 2-D) it is im2col. */
static void vol2col(const float *img, int64_t c, const conv_geom *cg, int64_t od0, int64_t od1, float *col) {
  const win *g = &cg->g;
  int64_t plane = g->h * g->w, pg = g->oh * g->ow, ld = (od1 - od0) * pg, kk = g->kh * g->kw;
  if (cg->k[0] == 1 && cg->img[0] == 1 && cg->grid[0] == 1) {
    im2col(img, c, g, 0, g->oh, col, ld);
    return;
  }
  for (int64_t ch = 0; ch < c; ch++)
    for (int64_t kd = 0; kd < cg->k[0]; kd++)
      for (int64_t od = od0; od < od1; od++) {
        int64_t id = od * cg->s[0] - cg->p[0] + kd * cg->dl[0];
        float *dst = col + (ch * cg->k[0] + kd) * kk * ld + (od - od0) * pg;
        if (id >= 0 && id < cg->img[0]) {
          im2col(img + (ch * cg->img[0] + id) * plane, 1, g, 0, g->oh, dst, ld);
          continue;
        }
        for (int64_t r = 0; r < kk; r++)
          for (int64_t q = 0; q < pg; q++) dst[r * ld + q] = 0;
      }
}

/* img [c, d, h, w] += the windows of grid depths [od0, od1) in col (vol2col's adjoint; padding
 * taps dropped). */
static void col2vol(const float *col, int64_t c, const conv_geom *cg, int64_t od0, int64_t od1, float *img) {
  const win *g = &cg->g;
  int64_t plane = g->h * g->w, pg = g->oh * g->ow, ld = (od1 - od0) * pg, kk = g->kh * g->kw;
  for (int64_t ch = 0; ch < c; ch++)
    for (int64_t kd = 0; kd < cg->k[0]; kd++)
      for (int64_t od = od0; od < od1; od++) {
        int64_t id = od * cg->s[0] - cg->p[0] + kd * cg->dl[0];
        if (id >= 0 && id < cg->img[0]) col2im(col + (ch * cg->k[0] + kd) * kk * ld + (od - od0) * pg, 1, g, img + (ch * cg->img[0] + id) * plane, ld);
      }
}

static bool infer_conv(om_call *c) {
  conv_geom cg;
  return conv_geometry(c->op, c->in, c->n_in, &c->attrs, &cg, &c->out_meta[0]);
}

/* Adds bias[o] to every element of out's channel o. */
static void add_bias(const om_tensor *b, float *out, int64_t n, int64_t o, int64_t plane) {
  const float *pb = (const float *)om__data(b);
  for (int64_t i = 0; i < n; i++)
    for (int64_t ch = 0; ch < o; ch++) {
      float v = pb[ch * b->strides[0]], *p = out + (i * o + ch) * plane;
      for (int64_t k = 0; k < plane; k++) p[k] += v;
    }
}

/* Copies into pad (a padded plane: wp floats a row, the input's row y at padded row y + ph from
 * column pw) the input rows of plane that padded rows [r0, r1) hold: the interior. The zeros
 * around it, written once, never change. */
static void pad_rows(const float *plane, const win *g, int64_t wp, int64_t r0, int64_t r1, float *pad) {
  int64_t lo = r0 - g->ph > 0 ? r0 - g->ph : 0, hi = r1 - g->ph < g->h ? r1 - g->ph : g->h;
  for (int64_t y = lo; y < hi; y++) {
    const float *src = plane + y * g->w;
    float *dst = pad + (y + g->ph) * wp + g->pw;
    for (int64_t x = 0; x < g->w; x++) dst[x] = src[x];
  }
}

/* A stride-1 convolution without its im2col matrix. Each group's input channels are padded
 * once into planes of Hp x Wp = (h + 2ph) x (w + 2pw), zeros around; then window tap (ch, i, j)
 * of the output position q = y Wp + x is the padded image's float ch Hp Wp + i dh Wp + j dw + q,
 * so one offset per tap makes the whole im2col row, and om__gemm_on reads the rows in place.
 * The product runs over oh x Wp positions and the columns x >= ow are dropped; the kept ones see
 * the taps im2col writes (padding as zeros), so the output has the bits of im2col + om__gemm.
 * Worth it where the dropped columns (wp - ow per row, each costing og products) are few next to
 * what im2col and packing cost (about 10 products per element of the matrix, measured on 3x3 and
 * 5x5 convs of 1 to 64 channels, and depthwise 3x3 ones). */
static bool windows_in_place(const win *g, int64_t og) {
  int64_t dropped; /* og (W + 2p - OW), which a huge dilation could take past int64 */
  return g->sh == 1 && g->sw == 1 && g->kh * g->kw > 1 && !__builtin_mul_overflow(og, g->w + 2 * g->pw - g->ow, &dropped) &&
         dropped <= 10 * g->ow && (g->kh - 1) * g->dh <= 10 * g->oh; /* and padded planes at most 11 times the output's rows */
}

/* A convolution (not transposed) as one product per image and group, C = W[g] B, B being the
 * padded image read in place (windows_in_place: C is then og x oh Wp, its kept columns copied
 * out), the im2col matrix, or the input planes themselves (direct: a 1x1 kernel of stride 1
 * without padding). The parts of one job are bands of whole output rows of each product, each
 * on one thread in that thread's scratch (om__gemm_on): its rows of the padded image (the rows
 * its windows reach, all channels) or of the im2col matrix, its product, its kept columns and
 * the bias. Where a group's weights are read by more than one part, they are packed once
 * beforehand (om__gemm_pack) for the parts to read, not packed again by each; so nothing but
 * the allocation runs on one thread alone.
 * On one thread a product is one band. On t threads the bands shrink as the job is used up
 * (guided, as om__gemm's blocks): each a 2t-th of the rows left in the whole job (the products'
 * rows end to end), at least om__gemm_least columns, never past its product's last row. So a
 * batch runs whole images first, one image runs shrinking bands of itself, and the last bands,
 * a row or a few, leave little for one thread to wait on when the machine slows the other. A
 * thin band costs little more than its share, its weights packed already: in place it pads
 * (kh - 1) dh rows beyond its own, each padded float feeding og kh kw products. Each output is
 * the same sum whatever the bands, so the bits do not depend on them or on the thread count. */
typedef struct conv_job {
  const conv_geom *cg;
  const float *x, *w;
  const float *apk;       /* each group's weights packed whole, apk_floats apart, or NULL */
  int64_t apk_floats;
  const om_tensor *bias;
  float *out;
  bool direct;
  const int64_t *koff;    /* in place: each tap's offset in the padded image, else NULL */
  int64_t plane, wp;      /* in place: a padded plane's floats and width */
  int64_t img;            /* the floats of each thread's padded image (then, in place, its C band) or im2col band */
  const int64_t *cut;     /* band p: rows [cut[p], cut[p + 1]) of the products' rows end to end; NULL: product p whole */
  int64_t panels;         /* where the product's panels start in each thread's scratch */
  float *scratch[OM_MAX_THREADS];
  bool zeroed[OM_MAX_THREADS]; /* in place: the thread's padded image is zeros around */
} conv_job;

/* The bands of a job on t > 1 threads (see conv_job): each a 2t-th of the rows left of the
 * products' rows end to end (oh each), at least `least`, ending at its product's last row at
 * the latest. Returns their count; with cut not NULL writes cut[0 .. count]; *most: the most
 * rows of one band. */
static int64_t conv_bands(int64_t products, int64_t oh, int t, int64_t least, int64_t *cut, int64_t *most) {
  int64_t rows = products * oh, count = 0;
  *most = 0;
  for (int64_t done = 0; done < rows; count++) {
    int64_t size = (rows - done + 2 * t - 1) / (2 * t), left = (done / oh + 1) * oh - done;
    if (size < least) size = least;
    if (size > left) size = left;
    if (cut) cut[count] = done;
    if (size > *most) *most = size;
    done += size;
  }
  if (cut) cut[count] = rows;
  return count;
}

/* Writes band idx: rows [y0, y1) of one product's output. */
static void conv_part(void *ctx, int64_t idx, int worker) {
  conv_job *j = ctx;
  const conv_geom *cg = j->cg;
  const win *g = &cg->g;
  int64_t r0 = j->cut ? j->cut[idx] : idx * g->oh, prod = r0 / g->oh, n = prod / cg->groups, gi = prod % cg->groups;
  int64_t cgr = cg->c / cg->groups, og = cg->o / cg->groups, grid = g->oh * g->ow, k = cgr * g->kh * g->kw;
  int64_t y0 = r0 % g->oh, y1 = y0 + (j->cut ? j->cut[idx + 1] - r0 : g->oh), width = j->koff ? j->wp : g->ow, cols = (y1 - y0) * width;
  const float *xi = j->x + (n * cg->c + gi * cgr) * g->h * g->w, *wg = j->w + gi * og * k, *b = j->scratch[worker];
  float *o = j->out + (n * cg->o + gi * og) * grid + y0 * g->ow, *c = o, *panels = j->scratch[worker] + j->panels;
  int64_t ldc = grid, brs = cols;
  if (j->koff) {
    if (!j->zeroed[worker]) memset(j->scratch[worker], 0, sizeof(float) * (size_t)j->img), j->zeroed[worker] = true;
    for (int64_t ch = 0; ch < cgr; ch++) /* the padded rows the band's windows reach */
      pad_rows(xi + ch * g->h * g->w, g, j->wp, y0, y1 + (g->kh - 1) * g->dh, j->scratch[worker] + ch * j->plane);
    b += y0 * j->wp, c = j->scratch[worker] + j->img, ldc = cols;
  } else if (j->direct) {
    b = xi + y0 * g->ow, brs = grid;
  } else {
    im2col(xi, cgr, g, y0, y1, j->scratch[worker], cols);
  }
  om__gemm_on(wg, k, 1, j->apk ? j->apk + gi * j->apk_floats : NULL, b, brs, 1, j->koff, c, ldc, og, cols, k, panels);
  if (!j->koff && !j->bias) return;
  for (int64_t r = 0; r < og; r++) { /* in place the kept columns; the bias as add_bias adds it */
    float bv = j->bias ? ((const float *)om__data(j->bias))[(gi * og + r) * j->bias->strides[0]] : 0.0f;
    for (int64_t y = 0; y < y1 - y0; y++) {
      float *dst = o + r * grid + y * g->ow;
      const float *src = c + r * ldc + y * width;
      if (j->bias)
        for (int64_t x = 0; x < g->ow; x++) dst[x] = src[x] + bv;
      else
        for (int64_t x = 0; x < g->ow; x++) dst[x] = src[x];
    }
  }
}

/* A depthwise convolution (one input and one output channel per group, at most 256 taps: one
 * KC block of the product) as its taps summed directly: the product would be one per group with
 * a single row of weights, whose per-call cost is most of a small depthwise convolution's time.
 * Each image plane is padded once into the thread's scratch (zeros around, as im2col writes the
 * padding, so a weight meets the same zeros: an infinite one gives the same NaN), then each output
 * row is summed 8 columns at a time in two vectors, taps in order from zero, as the product sums
 * each element (k ascending within its one KC block), and the bias added after: the product's
 * bits. A row's last columns run the same 8 lanes, reading past the row (into the next one or the
 * scratch's slack) for lanes that are not stored. */
typedef struct dw_job {
  const conv_geom *cg;
  const float *x, *w, *bias; /* bias NULL or bias_stride floats apart */
  int64_t bias_stride;
  float *out;
  int64_t wp; /* the padded plane's width */
  float *scratch[OM_MAX_THREADS];
} dw_job;

/* 8 output columns' values of one tap from src (the first column's): contiguous for stride 1,
 * the even ones of 16 for stride 2, else one by one. */
static inline __attribute__((always_inline)) void dw_load8(const float *src, int64_t sw, v4f *b0, v4f *b1) {
  if (sw == 1) {
    *b0 = *(const v4f *)src, *b1 = *(const v4f *)(src + 4);
  } else if (sw == 2) {
    v4f l0 = *(const v4f *)src, h0 = *(const v4f *)(src + 4), l1 = *(const v4f *)(src + 8), h1 = *(const v4f *)(src + 12);
    *b0 = __builtin_shufflevector(l0, h0, 0, 2, 4, 6), *b1 = __builtin_shufflevector(l1, h1, 0, 2, 4, 6);
  } else {
    *b0 = (v4f){src[0], src[sw], src[2 * sw], src[3 * sw]}, *b1 = (v4f){src[4 * sw], src[5 * sw], src[6 * sw], src[7 * sw]};
  }
}

/* One output plane from the padded plane: taps at pad + koff[t] with weights wr[t]; sw a
 * constant (1, 2) in the inlined copies. */
static inline __attribute__((always_inline)) void dw_plane(const float *pad, const int64_t *koff, const float *wr, int64_t kk,
                                                           const win *g, int64_t wp, int64_t sw, const float *bias, float bv, float *o) {
  for (int64_t y = 0; y < g->oh; y++, o += g->ow) {
    const float *row = pad + y * g->sh * wp;
    for (int64_t x0 = 0; x0 < g->ow; x0 += 8) {
      v4f s0 = {0, 0, 0, 0}, s1 = s0;
      for (int64_t t = 0; t < kk; t++) {
        v4f b0, b1, wv = {wr[t], wr[t], wr[t], wr[t]};
        dw_load8(row + koff[t] + x0 * sw, sw, &b0, &b1);
        s0 += wv * b0;
        s1 += wv * b1;
      }
      if (bias) s0 += bv, s1 += bv;
      int64_t n = g->ow - x0 < 8 ? g->ow - x0 : 8;
      if (n == 8) {
        *(v4f *)(o + x0) = s0, *(v4f *)(o + x0 + 4) = s1;
      } else {
        for (int64_t q = 0; q < n; q++) o[x0 + q] = q < 4 ? s0[q] : s1[q - 4];
      }
    }
  }
}

static void dw_part(void *ctx, int64_t idx, int worker) {
  const dw_job *j = ctx;
  const win *g = &j->cg->g;
  int64_t gi = idx % j->cg->groups, kk = g->kh * g->kw, wp = j->wp, koff[256];
  float *pad = j->scratch[worker];
  pad_rows(j->x + idx * g->h * g->w, g, wp, 0, g->h + 2 * g->ph, pad);
  for (int64_t i = 0, t = 0; i < g->kh; i++)
    for (int64_t c = 0; c < g->kw; c++) koff[t++] = i * g->dh * wp + c * g->dw;
  const float *wr = j->w + gi * kk;
  float bv = j->bias ? j->bias[gi * j->bias_stride] : 0.0f, *o = j->out + idx * g->oh * g->ow;
  if (g->sw == 1) dw_plane(pad, koff, wr, kk, g, wp, 1, j->bias, bv, o);
  else if (g->sw == 2) dw_plane(pad, koff, wr, kk, g, wp, 2, j->bias, bv, o);
  else dw_plane(pad, koff, wr, kk, g, wp, g->sw, j->bias, bv, o);
}

/* Whether conv_products takes the depthwise path; false (and *ok untouched) where it does not,
 * else *ok is its result. */
static bool depthwise(const conv_geom *cg, const float *x, const float *w, const om_tensor *bias, float *out, const char *who, bool *ok) {
  const win *g = &cg->g;
  int64_t kk = g->kh * g->kw, hp, wp, plane;
  /* slack past the plane: the last 8 lanes of a row read up to 8 strides (and for stride 2 one
   * float more) past its last column */
  if (cg->groups != cg->c || cg->o != cg->c || kk > 256 || cg->n == 0 || cg->c == 0 || __builtin_add_overflow(g->h, 2 * g->ph, &hp) ||
      __builtin_add_overflow(g->w, 2 * g->pw, &wp) || __builtin_mul_overflow(hp, wp, &plane) || g->sw > 64 ||
      __builtin_add_overflow(plane, 8 * g->sw + 8, &plane))
    return false;
  dw_job j = {.cg = cg, .x = x, .w = w, .out = out, .wp = wp};
  if (bias) j.bias = (const float *)om__data(bias), j.bias_stride = bias->strides[0];
  int64_t parts = cg->n * cg->groups;
  int threads = om__job_threads((double)cg->n * (double)cg->o * (double)(g->oh * g->ow) * (double)kk, parts);
  *ok = true;
  for (int i = 0; *ok && i < threads; i++) {
    *ok = (j.scratch[i] = om__scratch(i, plane, who)) != NULL;
    if (*ok) memset(j.scratch[i], 0, sizeof(float) * (size_t)plane);
  }
  if (*ok) om__parallel(parts, threads, dw_part, &j);
  om__scratch_done();
  return true;
}

/* The products of a convolution one after another, each on om__gemm with its im2col matrix (or,
 * direct, the input planes), which splits a product taller than wide into blocks of output
 * channels, all reading the one matrix. For products of more channels than positions (the last
 * stages of a CNN at batch 1: 512 channels of 2 x 2), fewer than two products a thread:
 * bands of output rows would each read all of a group's weights (packed first for them), so
 * ResNet-18's 512-channel 2 x 2 convolutions took up to 2.4 times as long on two threads as on one.
 * im2col + om__gemm is what the bands compute (see windows_in_place), so the bits are the same. */
static bool conv_by_channels(const conv_geom *cg, const float *x, const float *w, const om_tensor *bias, float *out, bool direct,
                             const char *who) {
  int64_t cgr = cg->c / cg->groups, og = cg->o / cg->groups, grid = cg_grid(cg), k = cgr * cg_taps(cg);
  /* k grid floats: fewer than the og k of a group's weights, which are in memory (og > grid) */
  float *col = direct ? NULL : om__alloc_floats(k * grid, who);
  bool ok = direct || col;
  for (int64_t n = 0; ok && n < cg->n; n++)
    for (int64_t gi = 0; ok && gi < cg->groups; gi++) {
      const float *xi = x + (n * cg->c + gi * cgr) * cg_image(cg);
      if (!direct) vol2col(xi, cgr, cg, 0, cg->grid[0], col);
      ok = om__gemm(w + gi * og * k, k, 1, direct ? xi : col, grid, 1, out + (n * cg->o + gi * og) * grid, og, grid, k, who);
    }
  if (ok && bias) add_bias(bias, out, cg->n, cg->o, grid);
  free(col);
  return ok;
}

/* The most floats of im2col matrices conv_volume and weight_grad make at once (8 MiB), but one
 * output plane's (conv_volume) or one image's (weight_grad). */
#define COLS_FLOATS ((int64_t)1 << 21)

/* One band of a 3-D product: image n, group gi, grid planes [od0, od1) (cols = their positions),
 * with its col matrix (rows x cols floats) and tmp (tmp_rows x cols floats, or NULL). */
typedef struct vol_band {
  int64_t n, gi, od0, od1, cols;
  float *col, *tmp;
} vol_band;
typedef bool (*vol_band_fn)(const conv_geom *cg, const vol_band *b, void *ctx, const char *who);

/* The loop the 3-D convolution, its transpose and its weight gradient share: per image, group and
 * band of whole grid planes, as many planes as keep the band's col matrix (rows floats a position)
 * within COLS_FLOATS, at least one, it calls fn, stopping at the first failure. The bands are fixed
 * by the sizes alone and each band is one product on om__gemm (which splits it over the threads),
 * so the bits do not depend on the thread count. */
static bool volume_bands(const conv_geom *cg, int64_t rows, int64_t tmp_rows, vol_band_fn fn, void *ctx, const char *who) {
  int64_t pg = cg->grid[1] * cg->grid[2], per = rows * pg > 0 ? rows * pg : 1, band = COLS_FLOATS / per;
  band = band < 1 ? 1 : band > cg->grid[0] ? cg->grid[0] : band;
  vol_band b = {.col = om__alloc_floats(rows * band * pg, who)};
  if (b.col && tmp_rows > 0) b.tmp = om__alloc_floats(tmp_rows * band * pg, who);
  bool ok = b.col && (tmp_rows == 0 || b.tmp);
  for (b.n = 0; ok && b.n < cg->n; b.n++)
    for (b.gi = 0; ok && b.gi < cg->groups; b.gi++)
      for (b.od0 = 0; ok && b.od0 < cg->grid[0]; b.od0 += band) {
        b.od1 = b.od0 + band < cg->grid[0] ? b.od0 + band : cg->grid[0];
        b.cols = (b.od1 - b.od0) * pg;
        ok = fn(cg, &b, ctx, who);
      }
  free(b.col);
  free(b.tmp);
  return ok;
}

typedef struct volume_job {
  const float *x, *w, *pb; /* pb: the bias, or NULL */
  int64_t bias_stride;
  float *out;
} volume_job;

/* C [og, band] = W[g] [og, k] x vol2col(x[n, g]) [k, band] into tmp, then copied into the output
 * with the bias (add_bias's sum). */
static bool conv_volume_band(const conv_geom *cg, const vol_band *b, void *ctx, const char *who) {
  const volume_job *j = ctx;
  int64_t cgr = cg->c / cg->groups, og = cg->o / cg->groups, grid = cg_grid(cg), k = cgr * cg_taps(cg);
  int64_t pg = cg->grid[1] * cg->grid[2];
  vol2col(j->x + (b->n * cg->c + b->gi * cgr) * cg_image(cg), cgr, cg, b->od0, b->od1, b->col);
  if (!om__gemm(j->w + b->gi * og * k, k, 1, b->col, b->cols, 1, b->tmp, og, b->cols, k, who)) return false;
  for (int64_t r = 0; r < og; r++) {
    float *dst = j->out + ((b->n * cg->o + b->gi * og + r) * grid) + b->od0 * pg;
    float bv = j->pb ? j->pb[(b->gi * og + r) * j->bias_stride] : 0.0f;
    const float *src = b->tmp + r * b->cols;
    if (j->pb)
      for (int64_t q = 0; q < b->cols; q++) dst[q] = src[q] + bv;
    else
      for (int64_t q = 0; q < b->cols; q++) dst[q] = src[q];
  }
  return true;
}

/* A 3-D convolution as products on om__gemm, one per image, group and band of output depths
 * (volume_bands; conv_volume_band). Each output is the product's sum over k in om__gemm's order
 * whatever the band, so the bits do not depend on the bands or on the threads. */
static bool conv_volume(const conv_geom *cg, const float *x, const float *w, const om_tensor *bias, float *out, const char *who) {
  int64_t cgr = cg->c / cg->groups, og = cg->o / cg->groups, k = cgr * cg_taps(cg);
  if (cg->n * cg->groups == 0 || og == 0 || cg_grid(cg) == 0) return true;
  volume_job j = {.x = x, .w = w, .pb = bias ? (const float *)om__data(bias) : NULL, .bias_stride = bias ? bias->strides[0] : 0, .out = out};
  return volume_bands(cg, k, og, conv_volume_band, &j, who);
}

static bool conv_products(const conv_geom *cg, const float *x, const float *w, const om_tensor *bias, float *out, const char *who) {
  const win *g = &cg->g;
  int64_t og = cg->o / cg->groups, kk = g->kh * g->kw, k = cg->c / cg->groups * kk, products = cg->n * cg->groups;
  bool dw_ok;
  if (depthwise(cg, x, w, bias, out, who, &dw_ok)) return dw_ok;
  if (products == 0 || og == 0 || g->oh * g->ow == 0) return true;
  conv_job j = {.cg = cg, .x = x, .w = w, .bias = bias, .out = out};
  j.direct = kk == 1 && g->sh == 1 && g->sw == 1 && g->ph == 0 && g->pw == 0;
  bool in_place = !j.direct && windows_in_place(g, og);
  int64_t width = in_place ? g->w + 2 * g->pw : g->ow, parts = products, rows = g->oh, *cut = NULL;
  double macs = (double)products * (double)og * (double)(g->oh * g->ow) * (double)k;
  int threads = om__job_threads(macs, products * g->oh);
  if (threads > 1 && og > g->oh * g->ow && products < 2 * threads && om__job_threads(macs / (double)products, og) > 1)
    return conv_by_channels(cg, x, w, bias, out, j.direct, who); /* (a product om__gemm would not split stays in bands) */
  if (threads > 1) { /* guided bands; one thread: whole products, one after the other */
    int64_t least = (om__gemm_least(og, k) + width - 1) / width;
    parts = conv_bands(products, g->oh, threads, least, NULL, &rows);
    if (!(cut = om__alloc(sizeof(int64_t) * (uint64_t)(parts + 1), who))) return false;
    conv_bands(products, g->oh, threads, least, cut, &rows);
    j.cut = cut;
  }
  int64_t *koff = NULL, floats = 0, cols; /* scratch: B, in place C, then the panels */
  if (in_place) {
    int64_t hp = g->h + 2 * g->ph, c_tmp;
    j.wp = width;
    /* reads reach 7 floats past the last position and (kw - 1) dw past the last plane's row; a
     * size past int64 (an empty output of a huge padding) is more scratch than any machine has */
    if (__builtin_mul_overflow(hp, j.wp, &j.plane) || __builtin_mul_overflow(rows, j.wp, &cols) ||
        __builtin_mul_overflow(k / kk, j.plane, &j.img) || __builtin_add_overflow(j.img, 8 + (g->kw - 1) * g->dw, &j.img) ||
        __builtin_mul_overflow(og, cols, &c_tmp) || __builtin_add_overflow(j.img, c_tmp, &floats))
      return free(cut), om__fail(OM_ERR_OUT_OF_MEMORY, "%s: the padded image's scratch is too large", who);
    if (!(koff = om__alloc(sizeof(int64_t) * (uint64_t)(k + 1), who))) return free(cut), false;
    for (int64_t ch = 0, t = 0; ch < k / kk; ch++)
      for (int64_t i = 0; i < g->kh; i++)
        for (int64_t jj = 0; jj < g->kw; jj++) koff[t++] = ch * j.plane + i * g->dh * j.wp + jj * g->dw;
    j.koff = koff;
  } else {
    cols = rows * width;
    if (!j.direct) j.img = floats = k * cols;
  }
  j.panels = floats;
  if (__builtin_add_overflow(floats, om__gemm_scratch(og, cols, k, in_place), &floats)) floats = INT64_MAX; /* more than om__scratch gives */
  if (threads > parts) threads = (int)parts;
  int64_t packed = parts > cg->groups ? om__gemm_packed(og, k, cg->groups) : 0; /* 0: each part packs its weights */
  float *apk = packed ? om__scratch(OM_SCRATCH_SHARED, packed, who) : NULL;
  bool ok = !packed || apk;
  if (apk) {
    om__gemm_pack(w, k, 1, og, k, cg->groups, og * k, threads, apk);
    j.apk = apk, j.apk_floats = packed / cg->groups;
  }
  for (int i = 0; ok && i < threads; i++) ok = (j.scratch[i] = om__scratch(i, floats, who)) != NULL;
  if (ok) om__parallel(parts, threads, conv_part, &j);
  om__scratch_done();
  free(koff);
  free(cut);
  return ok;
}

/* A transposed convolution's products (image n, group gi: part n groups + gi), each on its
 * part's thread: col = the group's weights (transposed) times the image's input channels, in the
 * thread's scratch (om__gemm_on: om__gemm's bits), then col2im into the output planes of (n, gi),
 * which no other part writes. */
typedef struct tconv_job {
  const conv_geom *cg;
  const float *x, *w;
  float *out;
  int64_t col; /* the floats of col in each thread's scratch, the product's panels after them */
  float *scratch[OM_MAX_THREADS];
} tconv_job;

/* col [og kk, band] = W[g]^T x[n, g][:, band], then col2vol of the band into the output. */
static bool tconv_volume_band(const conv_geom *cg, const vol_band *b, void *ctx, const char *who) {
  const volume_job *j = ctx;
  int64_t cg_ = cg->c / cg->groups, og = cg->o / cg->groups, kk = cg_taps(cg), grid = cg_grid(cg);
  if (!om__gemm(j->w + b->gi * cg_ * og * kk, 1, og * kk, j->x + (b->n * cg->c + b->gi * cg_) * grid + b->od0 * cg->grid[1] * cg->grid[2],
                grid, 1, b->col, og * kk, b->cols, cg_, who))
    return false;
  col2vol(b->col, og, cg, b->od0, b->od1, j->out + (b->n * cg->o + b->gi * og) * cg_image(cg));
  return true;
}

/* A 3-D transposed convolution as products on om__gemm, one per image, group and band of input
 * depths (volume_bands; tconv_volume_band) into the output (zeroed before). Each output element
 * sums its contributions band by band, the bands fixed by the sizes alone, so the bits do not
 * depend on the threads. */
static bool tconv_volume(const conv_geom *cg, const float *x, const float *w, float *out, const char *who) {
  int64_t cg_ = cg->c / cg->groups, og = cg->o / cg->groups;
  if (cg->n * cg->groups == 0 || og == 0 || cg_grid(cg) == 0 || cg_ == 0) return true; /* the zeros (then the bias) */
  volume_job j = {.x = x, .w = w, .out = out};
  return volume_bands(cg, og * cg_taps(cg), 0, tconv_volume_band, &j, who);
}

static void tconv_part(void *ctx, int64_t idx, int worker) {
  const tconv_job *j = ctx;
  const conv_geom *cg = j->cg;
  int64_t n = idx / cg->groups, gi = idx % cg->groups, kk = cg_taps(cg), grid = cg_grid(cg);
  int64_t cg_ = cg->c / cg->groups, og = cg->o / cg->groups;
  float *col = j->scratch[worker];
  om__gemm_on(j->w + gi * cg_ * og * kk, 1, og * kk, NULL, j->x + (n * cg->c + gi * cg_) * grid, grid, 1, NULL, col, grid,
              og * kk, grid, cg_, col + j->col);
  col2vol(col, og, cg, 0, cg->grid[0], j->out + (n * cg->o + gi * og) * cg_image(cg));
}

static bool forward_conv(om_call *c) {
  const char *who = conv_name(c->op);
  conv_geom cg;
  if (!conv_geometry(c->op, c->in, c->n_in, &c->attrs, &cg, NULL)) return false;
  bool own_x, own_w;
  const float *x = dense(c->in[0], &own_x, who), *w = x ? dense(c->in[1], &own_w, who) : NULL;
  float *out = (float *)om__data(c->out[0]), *col = NULL;
  int64_t kk = cg_taps(&cg), grid = cg_grid(&cg), image = cg_image(&cg);
  int64_t cg_ = cg.c / cg.groups, og = cg.o / cg.groups;
  bool ok = w != NULL;
  if (!cg.transposed) {
    /* 3-D: products on om__gemm (conv_volume); the 2-D kernels' in-place windows, depthwise
     * sums and bands are written for planes */
    const om_tensor *b = c->n_in == 3 ? c->in[2] : NULL;
    if (ok) ok = cg.nsp == 3 ? conv_volume(&cg, x, w, b, out, who) : conv_products(&cg, x, w, b, out, who);
  } else {
    /* input [N, C, grid], output [N, O, image]; weight [C, O/g, (kd,) kh, kw] */
    int64_t products = cg.n * cg.groups;
    int threads = om__job_threads((double)products * (double)(og * kk) * (double)grid * (double)cg_, products);
    if (ok) memset(out, 0, sizeof(float) * (size_t)(cg.n * cg.o * image));
    if (ok && cg.nsp == 3) { /* bands of input planes (tconv_volume) */
      ok = tconv_volume(&cg, x, w, out, who);
    } else if (ok && threads > 1 && products >= 2 * threads) { /* enough products to share: one a part */
      tconv_job j = {.cg = &cg, .x = x, .w = w, .out = out, .col = og * kk * grid};
      int64_t floats = j.col + om__gemm_scratch(og * kk, grid, cg_, false);
      for (int i = 0; ok && i < threads; i++) ok = (j.scratch[i] = om__scratch(i, floats, who)) != NULL;
      if (ok) om__parallel(products, threads, tconv_part, &j);
      om__scratch_done();
    } else { /* a product at a time, split over the threads where it is worth it */
      if (ok) ok = (col = om__alloc_floats(og * kk * grid, who)) != NULL;
      for (int64_t n = 0; ok && n < cg.n; n++)
        for (int64_t gi = 0; ok && gi < cg.groups; gi++) {
          ok = om__gemm(w + gi * cg_ * og * kk, 1, og * kk, x + (n * cg.c + gi * cg_) * grid, grid, 1, col,
                        og * kk, grid, cg_, who);
          if (ok) col2vol(col, og, &cg, 0, cg.grid[0], out + (n * cg.o + gi * og) * image);
        }
    }
    if (ok && c->n_in == 3) add_bias(c->in[2], out, cg.n, cg.o, image);
  }
  free(col);
  if (own_x) free((void *)x);
  if (w && own_w) free((void *)w);
  return ok;
}


/* weight_grad's im2col matrices of images n0 onwards: part p, (image n0 + p / groups, group
 * p % groups), at col + p per. */
typedef struct cols_job {
  const conv_geom *cg;
  const float *z;
  int64_t z_ch, n0, per;
  float *col;
} cols_job;

static void cols_part(void *ctx, int64_t p, int worker) {
  (void)worker;
  const cols_job *j = ctx;
  int64_t groups = j->cg->groups, n = j->n0 + p / groups, zg = j->z_ch / groups;
  vol2col(j->z + (n * j->z_ch + p % groups * zg) * cg_image(j->cg), zg, j->cg, 0, j->cg->grid[0], j->col + p * j->per);
}

/* weight_grad_volume's operands: M [N, m_ch, grid], Z [N, z_ch, image], dW. */
typedef struct weight_grad_job {
  const float *m, *z;
  int64_t m_ch, z_ch;
  float *pw;
} weight_grad_job;

/* dW[g] += M[n, g][:, band] x vol2col(Z[n, g])[:, band]^T */
static bool weight_grad_band(const conv_geom *cg, const vol_band *b, void *ctx, const char *who) {
  const weight_grad_job *j = ctx;
  int64_t kk = cg_taps(cg), grid = cg_grid(cg), mg = j->m_ch / cg->groups, zg = j->z_ch / cg->groups;
  vol2col(j->z + (b->n * j->z_ch + b->gi * zg) * cg_image(cg), zg, cg, b->od0, b->od1, b->col);
  return om__gemm_acc(j->m + (b->n * j->m_ch + b->gi * mg) * grid + b->od0 * cg->grid[1] * cg->grid[2], grid, 1, b->col, 1, b->cols,
                      j->pw + b->gi * mg * zg * kk, mg, zg * kk, b->cols, who);
}

/* weight_grad of a 3-D convolution into pw (zeroed here): per image, group and band of grid depths
 * (volume_bands; weight_grad_band). The bands are fixed by the sizes alone (the bits do not depend
 * on the threads). */
static bool weight_grad_volume(const conv_geom *cg, const float *mp, int64_t m_ch, const float *zp, int64_t z_ch, float *pw,
                               int64_t total, const char *who) {
  int64_t mg = m_ch / cg->groups, zg = z_ch / cg->groups;
  memset(pw, 0, sizeof(float) * (size_t)total);
  if (cg->n == 0 || cg_grid(cg) == 0 || mg == 0 || zg == 0) return true;
  weight_grad_job j = {.m = mp, .z = zp, .m_ch = m_ch, .z_ch = z_ch, .pw = pw};
  return volume_bands(cg, zg * cg_taps(cg), 0, weight_grad_band, &j, who);
}

/* dW[g] = sum over n of M[n, g] [rows, grid] x vol2col(Z[n, g])^T [grid, zc*kd*kh*kw]: the
 * weight gradient of both convolutions (see the top of the file). dw is [groups*rows, zc*kd*kh*kw]. */
static om_tensor *weight_grad(const conv_geom *cg, om_tensor *m_t, int64_t m_ch, om_tensor *z_t, int64_t z_ch,
                              const om_tensor *w, const char *who) {
  om_meta meta = {.dtype = OM_FLOAT32, .ndim = w->ndim};
  memcpy(meta.shape, w->shape, sizeof(int64_t) * (size_t)w->ndim);
  om_tensor *dw = om__tensor_new(&meta, false, who);
  if (!dw) return NULL;
  bool own_m = false, own_z = false;
  const float *mp = dense(m_t, &own_m, who), *zp = mp ? dense(z_t, &own_z, who) : NULL;
  if (cg->nsp == 3) { /* bands of grid planes (weight_grad_volume) */
    bool ok = zp && weight_grad_volume(cg, mp, m_ch, zp, z_ch, (float *)om__data(dw), om_tensor_numel(dw), who);
    if (own_m) free((void *)mp);
    if (zp && own_z) free((void *)zp);
    if (!ok) om_tensor_release(dw);
    return ok ? dw : NULL;
  }
  int64_t kk = cg_taps(cg), grid = cg_grid(cg);
  int64_t mg = m_ch / cg->groups, zg = z_ch / cg->groups;
  cols_job j = {.cg = cg, .z = zp, .z_ch = z_ch, .per = zg * kk * grid};
  /* the im2col matrices of as many images as fit in COLS_FLOATS (at least one) at a time, made
   * on the pool, then the products summed over the images one after another */
  int64_t chunk = j.per * cg->groups > 0 ? COLS_FLOATS / (j.per * cg->groups) : cg->n;
  chunk = chunk < 1 ? 1 : chunk > cg->n ? cg->n : chunk;
  float *col = zp ? om__alloc_floats(chunk * cg->groups * j.per, who) : NULL;
  bool ok = col != NULL;
  float *pw = (float *)om__data(dw);
  j.col = col;
  if (ok && cg->n == 0) memset(pw, 0, sizeof(float) * (size_t)om_tensor_numel(dw));
  for (j.n0 = 0; ok && j.n0 < cg->n; j.n0 += chunk) {
    int64_t parts = (cg->n - j.n0 < chunk ? cg->n - j.n0 : chunk) * cg->groups;
    om__parallel(parts, om__job_threads((double)parts * (double)j.per * OM_EACH_SIMPLE, parts), cols_part, &j);
    for (int64_t p = 0; ok && p < parts; p++) {
      int64_t n = j.n0 + p / cg->groups, gi = p % cg->groups;
      ok = (n > 0 ? om__gemm_acc : om__gemm)(mp + (n * m_ch + gi * mg) * grid, grid, 1, col + p * j.per, 1, grid,
                                              pw + gi * mg * zg * kk, mg, zg * kk, grid, who);
    }
  }
  free(col);
  if (own_m) free((void *)mp);
  if (zp && own_z) free((void *)zp);
  if (!ok) om_tensor_release(dw);
  return ok ? dw : NULL;
}

static bool conv_backward(const om_record *r, om_tensor *const *gout, om_tensor **gin) {
  const char *who = conv_name(r->op);
  conv_geom cg;
  if (!conv_geometry(r->op, r->in, r->n_in, &r->attrs, &cg, NULL)) return false;
  om_scope s = {0};
  om_tensor *x = r->in[0], *w = r->in[1], *gy = gout[0];
  /* the arrays from the depth (3-D) or from the height (1-D, 2-D: 1-D runs as 2-D on a unit height) */
  int o = cg.nsp == 3 ? 0 : 1;
  const int64_t *st = cg.s + o, *pd = cg.p + o, *dl = cg.dl + o;
  if (om__wants(r, 0) && om_tensor_numel(x) == 0) {
    /* an empty input has an empty gradient; the other convolution of dout might not even fit
     * (a transposed conv of an input 0 wide still has an output of its kernel's width) */
    gin[0] = om_zeros(x->shape, x->ndim, OM_FLOAT32);
  } else if (om__wants(r, 0)) {
    if (!cg.transposed) {
      /* the transposed convolution of dout, with the output padding that restores x's size */
      int64_t opd[3];
      for (int ax = 0; ax < 3; ax++)
        opd[ax] = cg.img[ax] - ((cg.grid[ax] - 1) * cg.s[ax] - 2 * cg.p[ax] + cg.dl[ax] * (cg.k[ax] - 1) + 1);
      if (cg.nsp == 1) {
        om_tensor *g4 = om__keep(&s, om_unsqueeze(gy, 2)), *w4 = om__keep(&s, om_unsqueeze(w, 2));
        om_tensor *t = g4 && w4 ? om__keep(&s, om_conv_transpose2d(g4, w4, NULL, st, pd, opd + o, cg.groups, dl)) : NULL;
        gin[0] = t ? om_squeeze(t, (int64_t[]){2}, 1) : NULL;
      } else if (cg.nsp == 2) {
        gin[0] = om_conv_transpose2d(gy, w, NULL, st, pd, opd + o, cg.groups, dl);
      } else {
        gin[0] = om_conv_transpose3d(gy, w, NULL, st, pd, opd, cg.groups, dl);
      }
    } else {
      /* with output_padding >= stride (allowed when below the dilation) the conv of dout has
       * extra trailing rows/columns that belong to no input: cut them */
      om_tensor *t = om__keep(&s, cg.nsp == 3 ? om_conv3d(gy, w, NULL, st, pd, dl, cg.groups) : om_conv2d(gy, w, NULL, st, pd, dl, cg.groups));
      for (int ax = 3 - cg.nsp; t && ax < 3; ax++) t = om__keep(&s, om_slice(t, 2 + ax - (3 - cg.nsp), 0, cg.grid[ax], 1));
      gin[0] = om_tensor_retain(t);
    }
  }
  if (om__wants(r, 1))
    gin[1] = cg.transposed ? weight_grad(&cg, x, cg.c, gy, cg.o, w, who) : weight_grad(&cg, gy, cg.o, x, cg.c, w, who);
  if (r->n_in == 3 && om__wants(r, 2))
    gin[2] = om_sum(gy, (int64_t[]){0, 2, 3, 4}, cg.nsp + 1, false);
  om__scope_end(&s);
  for (int i = 0; i < r->n_in; i++)
    if (om__wants(r, i) && !gin[i]) return false;
  return true;
}

/* A transposed convolution whose input has no positions (an empty spatial axis) is its bias (a
 * sum over no input is 0) over the output: the bias (or 0) expanded to the output's shape, since
 * onnxruntime's 3-D ConvTranspose fails on such an input (an assertion in its position loop). */
static bool lower_tconv_no_positions(om_lower *l, const om_call *c, const conv_geom *cg) {
  const om_meta *m = &c->out_meta[0];
  int ext[5], v = -1, out;
  for (int d = 0; d < m->ndim; d++) ext[d] = om__lower_out_ext(l, 0, d);
  if (c->n_in == 3) {
    om_meta bm = {.dtype = OM_FLOAT32, .ndim = m->ndim - 1, .shape = {cg->o, 1, 1, 1}};
    int b = om__lower_input(l, 2), bs = om__lower_ints(l, bm.shape, bm.ndim);
    if (b < 0 || bs < 0 || !om__emit(l, "Reshape", (int[]){b, bs}, 2, &bm, 1, &v, NULL, 0)) return false;
  } else {
    v = om__lower_scalar(l, 0, OM_FLOAT32);
  }
  int shape = om__lower_shape_operand(l, m->shape, ext, m->ndim);
  if (v < 0 || shape < 0 || !om__emit(l, "Expand", (int[]){v, shape}, 2, m, 1, &out, NULL, 0)) return false;
  om__lower_output(l, 0, out);
  return true;
}

/* Conv / ConvTranspose with PyTorch's symmetric padding as pads [begin..., end...]. PyTorch's
 * output_padding and ONNX's both add rows and columns at the end (ONNX: out = stride*(in-1) +
 * output_padding + (k-1)*dilation + 1 - pads_begin - pads_end, PyTorch's formula with both pads
 * = padding), so the attributes carry over as they are, except where onnxruntime refuses them:
 * it runs ConvTranspose only with output_padding < stride (its shape check), while PyTorch
 * allows output_padding < max(stride, dilation). On such an axis the output padding moves out of
 * the attribute: the extra rows are the uncropped output's next ones when output_padding <=
 * padding (pads_end = padding - output_padding gives them), and beyond the uncropped output
 * (zeros plus the bias) otherwise: ConvTranspose without bias, cropping only the start, then Pad
 * (its negative begin crops the start, its end adds the zeros), then Add of the bias. */
static bool lower_conv(om_lower *l, const om_call *c) {
  conv_geom cg;
  if (!conv_geometry(c->op, c->in, c->n_in, &c->attrs, &cg, NULL)) return false;
  int k = cg.nsp, o = 3 - k; /* the spatial axes' entries of the 3-axis arrays */
  int64_t opd[3], pads[6];
  for (int d = 0; d < k; d++) opd[d] = cg.op[o + d], pads[d] = pads[k + d] = cg.p[o + d];
  om_gattr at[6] = {
      OM_ATTR_INTS("dilations", cg.dl + o, k),
      OM_ATTR_INT("group", cg.groups),
      OM_ATTR_INTS("kernel_shape", cg.k + o, k),
      OM_ATTR_INTS("pads", pads, 2 * k),
      OM_ATTR_INTS("strides", cg.s + o, k),
  };
  const int64_t *strides = cg.s + o;
  /* A sum over no input channels is 0 (the bias, then), which onnxruntime's ConvTranspose does
   * not write: where the channels can be 0, the input gets one zero channel per group and the
   * weight the matching zero slices. */
  int in[3] = {om__lower_input(l, 0), om__lower_input(l, 1), c->n_in == 3 ? om__lower_input(l, 2) : -1}, out;
  if (om__lower_may_be_0(l, om__lower_in_ext(l, 0, 1)) || !c->in[0]->shape[1]) {
    in[0] = om__lower_zero_slices(l, 0, 1, cg.groups);
    in[1] = om__lower_zero_slices(l, 1, cg.transposed ? 0 : 1, cg.transposed ? cg.groups : 1);
    if (in[0] < 0 || in[1] < 0) return false;
  }
  if (!cg.transposed) {
    if (!om__emit(l, "Conv", in, c->n_in, c->out_meta, 1, &out, at, 5)) return false;
    om__lower_output(l, 0, out);
    return true;
  }
  if (cg.nsp == 3 && cg.grid[0] * cg.grid[1] * cg.grid[2] == 0) /* (a symbolic axis is never 0) */
    return lower_tconv_no_positions(l, c, &cg);
  /* per axis: the rows Pad crops at the start (negative) and adds at the end */
  int64_t crop[3] = {0, 0, 0}, extra[3] = {0, 0, 0};
  bool any_extra = false;
  for (int d = 0; d < k; d++) {
    if (opd[d] < strides[d]) continue;
    if (opd[d] <= pads[d]) {
      pads[k + d] = pads[d] - opd[d];
    } else {
      crop[d] = pads[d], extra[d] = opd[d] - pads[d], any_extra = true;
      pads[d] = pads[k + d] = 0; /* the uncropped output: at least one row, whatever the padding */
    }
    opd[d] = 0;
  }
  at[5] = at[4];
  at[4] = at[3];
  at[3] = OM_ATTR_INTS("output_padding", opd, k);
  if (!any_extra) {
    if (!om__emit(l, "ConvTranspose", in, c->n_in, c->out_meta, 1, &out, at, 6)) return false;
    om__lower_output(l, 0, out);
    return true;
  }
  const om_meta *m = &c->out_meta[0];
  om_meta full = *m, padded = *m;
  int64_t pad_v[10] = {0};
  for (int d = 0; d < k; d++) full.shape[2 + d] = m->shape[2 + d] - extra[d] + crop[d], pad_v[2 + d] = -crop[d], pad_v[k + 4 + d] = extra[d];
  int y, z;
  int pv = om__lower_ints(l, pad_v, 2 * k + 4);
  if (in[0] < 0 || in[1] < 0 || pv < 0 || !om__emit(l, "ConvTranspose", in, 2, &full, 1, &y, at, 6) ||
      !om__emit(l, "Pad", (int[]){y, pv}, 2, &padded, 1, &z, NULL, 0))
    return false;
  if (c->n_in == 3) {
    om_meta bm = {.dtype = OM_FLOAT32, .ndim = k + 1, .shape = {cg.o, 1, 1, 1}};
    int b = om__lower_input(l, 2), shape = om__lower_ints(l, bm.shape, k + 1), bv, sum;
    if (b < 0 || shape < 0 || !om__emit(l, "Reshape", (int[]){b, shape}, 2, &bm, 1, &bv, NULL, 0) ||
        !om__emit(l, "Add", (int[]){z, bv}, 2, m, 1, &sum, NULL, 0))
      return false;
    z = sum;
  }
  om__lower_output(l, 0, z);
  return true;
}

/* The empty variants (src/ops/sample.c) a convolution refuses, as PyTorch does: a spatial axis of
 * 0 (the kernel does not fit), and a kernel of size 0 (PyTorch: a non-positive kernel). */
#define CONV_EMPTY "is larger than the padded input|has an empty kernel"

/* The symbols of the outputs (every op of this file; spec 4) come from the tracer's probe
 * (running infer at other sizes): a symbolic batch carries over; a spatial extent the op keeps
 * for every size (stride 1, "same" padding) keeps its symbol, one that grows in proportion
 * (conv_transpose2d with stride 2: 2*H) is that monomial, and any other (a floor division:
 * stride 2, pools) becomes a derived atom held by the output (derives_extents). A symbolic
 * channel axis fails infer at the probe's other size (it must match the weight): refused. */

const om_op_def om__op_conv1d = {
    .name = "conv1d", .n_in = -1, .n_out = 1, .saves = OM_SAVES_IN(0) | OM_SAVES_IN(1),
    .infer = infer_conv, .forward = forward_conv, .backward = conv_backward,
    .lower = lower_conv, .derives_extents = true, .onnx = "Conv (1-D; a zero channel per group more where the input channels can be 0)",
    .test = {.n_in = 3, .ndims = {3, 3, 1}, .shapes = {{2, 4, 7}, {6, 2, 3}, {6}}, .lo = -2, .hi = 2,
             .attrs = {.n_i = 4, .i = {2, 1, 2, 2}}, .empty_refusal = CONV_EMPTY}};

const om_op_def om__op_conv2d = {
    .name = "conv2d", .n_in = -1, .n_out = 1, .saves = OM_SAVES_IN(0) | OM_SAVES_IN(1),
    .infer = infer_conv, .forward = forward_conv, .backward = conv_backward,
    .lower = lower_conv, .derives_extents = true, .onnx = "Conv (a zero channel per group more where the input channels can be 0)",
    /* width 7 with stride 2 gives 3 columns, whose input gradient needs output_padding 1 */
    .test = {.n_in = 3, .ndims = {4, 4, 1}, .shapes = {{2, 4, 5, 7}, {6, 2, 3, 2}, {6}}, .lo = -2, .hi = 2,
             .attrs = {.n_i = 7, .i = {1, 2, 1, 0, 2, 1, 2}}, .empty_refusal = CONV_EMPTY}};

const om_op_def om__op_conv_transpose2d = {
    .name = "conv_transpose2d", .n_in = -1, .n_out = 1, .saves = OM_SAVES_IN(0) | OM_SAVES_IN(1),
    .infer = infer_conv, .forward = forward_conv, .backward = conv_backward,
    .lower = lower_conv, .derives_extents = true,
    .onnx = "ConvTranspose (output_padding >= stride: in pads_end, or then Pad and Add of the bias; a zero channel per group more where the input channels can be 0)",
    .test = {.n_in = 3, .ndims = {4, 4, 1}, .shapes = {{2, 4, 3, 3}, {4, 3, 2, 3}, {6}}, .lo = -2, .hi = 2,
             .attrs = {.n_i = 9, .i = {2, 1, 1, 0, 1, 0, 1, 2, 2}}, .empty_refusal = "gives an empty output|has an empty kernel"}};

/* The depth taps of conv3d's sample read the depth padding (padding 1, dilation 2); its height
 * (4 with stride 2 and padding 1 gives 2 rows) needs output_padding 1 in the input gradient, as
 * conv2d's width. */
const om_op_def om__op_conv3d = {
    .name = "conv3d", .n_in = -1, .n_out = 1, .saves = OM_SAVES_IN(0) | OM_SAVES_IN(1),
    .infer = infer_conv, .forward = forward_conv, .backward = conv_backward,
    .lower = lower_conv, .derives_extents = true, .onnx = "Conv (3-D; a zero channel per group more where the input channels can be 0)",
    .test = {.n_in = 3, .ndims = {5, 5, 1}, .shapes = {{2, 4, 3, 4, 5}, {6, 2, 2, 3, 2}, {6}}, .lo = -2, .hi = 2,
             .attrs = {.n_i = 10, .i = {1, 2, 1, 1, 1, 0, 2, 1, 2, 2}}, .empty_refusal = CONV_EMPTY}};

const om_op_def om__op_conv_transpose3d = {
    .name = "conv_transpose3d", .n_in = -1, .n_out = 1, .saves = OM_SAVES_IN(0) | OM_SAVES_IN(1),
    .infer = infer_conv, .forward = forward_conv, .backward = conv_backward,
    .lower = lower_conv, .derives_extents = true,
    .onnx = "ConvTranspose (3-D; output_padding >= stride as conv_transpose2d's; a zero channel per group more where the input channels can be 0)",
    .test = {.n_in = 3, .ndims = {5, 5, 1}, .shapes = {{2, 4, 2, 3, 2}, {4, 3, 2, 2, 3}, {6}}, .lo = -2, .hi = 2,
             .attrs = {.n_i = 13, .i = {2, 1, 2, 1, 0, 1, 1, 0, 1, 1, 2, 1, 2}}, .empty_refusal = "gives an empty output|has an empty kernel"}};

/* Applies op with PyTorch's unbatched form: an input of `batched - 1` dims gets a batch of one
 * (unsqueeze), and the result loses it again (squeeze); both are public ops, so autograd and
 * tracing (Unsqueeze, Squeeze) see them. in[0] is the input. */
static om_tensor *apply_maybe_unbatched(om_op op, om_tensor **in, int n_in, const om_attrs *a, int batched) {
  if (!om__check_inputs(om_op_name(op), in, n_in)) return NULL;
  if (in[0]->ndim != batched - 1) return om__apply1(op, in, n_in, a);
  om_scope s = {0};
  om_tensor *x = in[0];
  in[0] = om__keep(&s, om_unsqueeze(x, 0));
  om_tensor *y = in[0] ? om__keep(&s, om__apply1(op, in, n_in, a)) : NULL;
  om_tensor *r = y ? om_squeeze(y, (int64_t[]){0}, 1) : NULL;
  in[0] = x;
  om__scope_end(&s);
  return r;
}

/* out[0..n) = v, or dflt when v is NULL. */
static void sizes_or(const int64_t *v, const int64_t *dflt, int n, int64_t *out) {
  for (int i = 0; i < n; i++) out[i] = v ? v[i] : dflt[i];
}
static void pair_or(const int64_t *v, const int64_t *dflt, int64_t *out) { sizes_or(v, dflt, 2, out); }

om_tensor *om_conv2d(om_tensor *x, om_tensor *weight, om_tensor *bias, const int64_t stride[2], const int64_t padding[2],
                     const int64_t dilation[2], int64_t groups) {
  om_attrs a = {.n_i = 7, .i = {[6] = groups}};
  pair_or(stride, (int64_t[]){1, 1}, a.i);
  pair_or(padding, (int64_t[]){0, 0}, a.i + 2);
  pair_or(dilation, (int64_t[]){1, 1}, a.i + 4);
  return apply_maybe_unbatched(OM_OP_conv2d, (om_tensor *[]){x, weight, bias}, bias ? 3 : 2, &a, 4);
}

om_tensor *om_conv1d(om_tensor *x, om_tensor *weight, om_tensor *bias, int64_t stride, int64_t padding, int64_t dilation,
                     int64_t groups) {
  om_attrs a = {.n_i = 4, .i = {stride, padding, dilation, groups}};
  return apply_maybe_unbatched(OM_OP_conv1d, (om_tensor *[]){x, weight, bias}, bias ? 3 : 2, &a, 3);
}

om_tensor *om_conv_transpose2d(om_tensor *x, om_tensor *weight, om_tensor *bias, const int64_t stride[2],
                               const int64_t padding[2], const int64_t output_padding[2], int64_t groups,
                               const int64_t dilation[2]) {
  om_attrs a = {.n_i = 9, .i = {[8] = groups}};
  pair_or(stride, (int64_t[]){1, 1}, a.i);
  pair_or(padding, (int64_t[]){0, 0}, a.i + 2);
  pair_or(output_padding, (int64_t[]){0, 0}, a.i + 4);
  pair_or(dilation, (int64_t[]){1, 1}, a.i + 6);
  return apply_maybe_unbatched(OM_OP_conv_transpose2d, (om_tensor *[]){x, weight, bias}, bias ? 3 : 2, &a, 4);
}

om_tensor *om_conv3d(om_tensor *x, om_tensor *weight, om_tensor *bias, const int64_t stride[3], const int64_t padding[3],
                     const int64_t dilation[3], int64_t groups) {
  om_attrs a = {.n_i = 10, .i = {[9] = groups}};
  sizes_or(stride, (int64_t[]){1, 1, 1}, 3, a.i);
  sizes_or(padding, (int64_t[]){0, 0, 0}, 3, a.i + 3);
  sizes_or(dilation, (int64_t[]){1, 1, 1}, 3, a.i + 6);
  return apply_maybe_unbatched(OM_OP_conv3d, (om_tensor *[]){x, weight, bias}, bias ? 3 : 2, &a, 5);
}

om_tensor *om_conv_transpose3d(om_tensor *x, om_tensor *weight, om_tensor *bias, const int64_t stride[3],
                               const int64_t padding[3], const int64_t output_padding[3], int64_t groups,
                               const int64_t dilation[3]) {
  om_attrs a = {.n_i = 13, .i = {[12] = groups}};
  sizes_or(stride, (int64_t[]){1, 1, 1}, 3, a.i);
  sizes_or(padding, (int64_t[]){0, 0, 0}, 3, a.i + 3);
  sizes_or(output_padding, (int64_t[]){0, 0, 0}, 3, a.i + 6);
  sizes_or(dilation, (int64_t[]){1, 1, 1}, 3, a.i + 9);
  return apply_maybe_unbatched(OM_OP_conv_transpose3d, (om_tensor *[]){x, weight, bias}, bias ? 3 : 2, &a, 5);
}

/* ---- pooling ----
 * max_pool2d: [kH, kW, sH, sW, pH, pW, dH, dW, ceil_mode]; max_pool3d: the same with D first
 * avg_pool2d: [kH, kW, sH, sW, pH, pW, ceil_mode, count_include_pad]; avg_pool3d: the same with D first
 * adaptive_avg_pool2d: [oH, oW] (-1 keeps the input's size; canonicalised in infer); adaptive_avg_pool3d: [oD, oH, oW] */

/* PyTorch's pooling_output_shape: with ceil_mode the last window may overhang, but one that
 * would start in the right padding is dropped. */
static int64_t pool_out(int64_t in, int64_t k, int64_t p, int64_t s, int64_t d, bool ceil_mode) {
  int64_t out = floor_div(in + 2 * p - d * (k - 1) - 1 + (ceil_mode ? s - 1 : 0), s) + 1;
  if (ceil_mode && (out - 1) * s >= in + p) out--;
  return out;
}

/* A pool over 2 or 3 spatial axes. The per-axis arrays hold 3 axes (depth, height, width), a
 * 2-D pool's depth trivial (size 1, kernel 1, stride 1, no padding), as conv_geom's; g is the
 * height and width as a 2-D window, for the 2-D kernels. */
typedef struct pool_geom {
  int ns;
  int64_t in[3], k[3], s[3], p[3], d[3], out[3];
  bool ceil_mode, cip;
  win g;
} pool_geom;

/* The indices ops run the max pools' geometry and windows, and give each maximum's place. */
static bool is_pool_indices(om_op op) { return op == OM_OP_max_pool2d_indices || op == OM_OP_max_pool3d_indices; }
static bool is_max_pool(om_op op) { return op == OM_OP_max_pool2d || op == OM_OP_max_pool3d || is_pool_indices(op); }

/* attrs: per spatial axis kernel, stride, padding (and for a max pool dilation), then ceil_mode
 * (and for an average count_include_pad). */
static bool pool_geometry(om_op op, const om_tensor *x, const om_attrs *a, pool_geom *pg) {
  const char *who = om_op_name(op);
  bool mx = is_max_pool(op);
  int ns = op == OM_OP_max_pool3d || op == OM_OP_avg_pool3d || op == OM_OP_max_pool3d_indices ? 3 : 2, o0 = 3 - ns, want = (mx ? 4 : 3) * ns + (mx ? 1 : 2);
  char xs[OM_SHAPE_STR_LEN], t1[64], t2[64], t3[64];
  if (a->n_i != want)
    return om__fail(OM_ERR_INVALID_ARGUMENT, "%s: takes %d integer attributes (%s), got %d", who, want,
                    mx ? (ns == 3 ? "kernel[3], stride[3], padding[3], dilation[3], ceil_mode" : "kernel[2], stride[2], padding[2], dilation[2], ceil_mode")
                       : (ns == 3 ? "kernel[3], stride[3], padding[3], ceil_mode, count_include_pad" : "kernel[2], stride[2], padding[2], ceil_mode, count_include_pad"),
                    a->n_i);
  if (!attrs_in_range(who, a)) return false;
  if (x->dtype != OM_FLOAT32) return om__fail(OM_ERR_DTYPE_MISMATCH, "%s: takes float32, not %s", who, om_dtype_name(x->dtype));
  if (x->ndim != ns + 2)
    return om__fail(OM_ERR_SHAPE_MISMATCH, "%s: input %s must have %d dims ([N, C, %s]; the functions also take it without N)", who,
                    om__shape_str(xs, sizeof xs, x->shape, x->ndim), ns + 2, ns == 3 ? "D, H, W" : "H, W");
  bool empty = !x->shape[1];
  for (int d = 2; d < x->ndim; d++) empty |= !x->shape[d];
  if (empty) /* PyTorch's pool2d_shape_check / pool3d_shape_check */
    return om__fail(OM_ERR_SHAPE_MISMATCH, "%s: input %s has an empty channel, %s dim (only the batch may be 0, as PyTorch)", who,
                    om__shape_str(xs, sizeof xs, x->shape, x->ndim), ns == 3 ? "depth, height or width" : "height or width");
  const int64_t *v = a->i;
  pg->ns = ns;
  pg->ceil_mode = v[(mx ? 4 : 3) * ns] != 0;
  pg->cip = !mx && v[3 * ns + 1] != 0;
  for (int ax = 0; ax < 3; ax++) {
    int i = ax - o0; /* below 0: the trivial depth of a 2-D pool */
    pg->in[ax] = i < 0 ? 1 : x->shape[2 + i], pg->k[ax] = i < 0 ? 1 : v[i], pg->s[ax] = i < 0 ? 1 : v[ns + i];
    pg->p[ax] = i < 0 ? 0 : v[2 * ns + i], pg->d[ax] = i < 0 || !mx ? 1 : v[3 * ns + i];
  }
  for (int ax = o0; ax < 3; ax++) {
    int64_t k = pg->k[ax], s = pg->s[ax], p = pg->p[ax], d = pg->d[ax];
    if (k < 1) return om__fail(OM_ERR_INVALID_ARGUMENT, "%s: kernel size must be positive, got %lld", who, (long long)k);
    if (s < 1) return om__fail(OM_ERR_INVALID_ARGUMENT, "%s: stride must be positive, got %lld", who, (long long)s);
    if (d < 1) return om__fail(OM_ERR_INVALID_ARGUMENT, "%s: dilation must be positive, got %lld", who, (long long)d);
    if (p < 0 || p > k / 2)
      return om__fail(OM_ERR_INVALID_ARGUMENT, "%s: padding %lld must be between 0 and half the kernel size %lld", who, (long long)p, (long long)k);
  }
  for (int ax = 0; ax < 3; ax++) {
    pg->out[ax] = pool_out(pg->in[ax], pg->k[ax], pg->p[ax], pg->s[ax], pg->d[ax], pg->ceil_mode);
    if (pg->out[ax] < 1)
      return om__fail(OM_ERR_SHAPE_MISMATCH, "%s: input %s is too small for kernel %s (dilation %s, padding %s): the output would be empty", who,
                      om__shape_str(xs, sizeof xs, x->shape, x->ndim), axes_str(t1, sizeof t1, pg->k, o0, "x"),
                      axes_str(t2, sizeof t2, pg->d, o0, ", "), axes_str(t3, sizeof t3, pg->p, o0, ", "));
  }
  pg->g = (win){pg->in[1], pg->in[2], pg->k[1], pg->k[2], pg->s[1], pg->s[2], pg->p[1], pg->p[2], pg->d[1], pg->d[2], pg->out[1], pg->out[2]};
  return true;
}

static bool infer_pool(om_call *c) {
  pool_geom pg;
  if (!pool_geometry(c->op, c->in[0], &c->attrs, &pg)) return false;
  const om_tensor *x = c->in[0];
  c->out_meta[0] = (om_meta){.dtype = is_pool_indices(c->op) ? OM_INT64 : OM_FLOAT32, .ndim = pg.ns + 2, .shape = {x->shape[0], x->shape[1]}};
  for (int i = 0; i < pg.ns; i++) c->out_meta[0].shape[2 + i] = pg.out[3 - pg.ns + i];
  return true;
}

/* The flat index (in its plane) of the first maximum of window (y, x); a NaN wins (the last
 * one when there are several), with PyTorch's test `v > best || isnan(v)`; -1 when every tap
 * is padding. */
static int64_t window_argmax(const float *plane, const win *g, int64_t y, int64_t x) {
  int64_t best_i = -1;
  float best = -INFINITY;
  for (int64_t i = 0; i < g->kh; i++) {
    int64_t iy = y * g->sh - g->ph + i * g->dh;
    if (iy < 0 || iy >= g->h) continue;
    for (int64_t j = 0; j < g->kw; j++) {
      int64_t ix = x * g->sw - g->pw + j * g->dw;
      if (ix < 0 || ix >= g->w) continue;
      float v = plane[iy * g->w + ix];
      if (best_i < 0 || v > best || isnan(v)) best = v, best_i = iy * g->w + ix;
    }
  }
  return best_i;
}

/* The taps [lo, hi) of window x (of k, dilation d) that fall inside [0, n). */
static void taps_inside(int64_t n, int64_t s, int64_t p, int64_t d, int64_t k, int64_t x, int64_t *lo, int64_t *hi) {
  int64_t start = x * s - p; /* tap t reads start + t d */
  *lo = start >= 0 ? 0 : (-start + d - 1) / d;
  *hi = n - start <= 0 ? 0 : (n - start + d - 1) / d;
  if (*hi > k) *hi = k;
  if (*lo > *hi) *lo = *hi;
}

/* max_pool2d of one plane: each window's maximum, by window_argmax's rule (the first maximum;
 * a NaN wins, the last one), over its taps inside the plane, which are found once per row and
 * column (cols: each window column's [first, last) tap), not tested per tap; -inf for a window
 * of padding only. The columns [xa, xb) whose windows are wholly inside go tap by tap over the
 * whole row (each output still sees its taps in the rule's order), a loop the compiler
 * vectorises; the others window by window. */
/* The interior columns [xa, xb) of one output row (rows: the row's first window's corner, taps
 * [i0, i1) of each window's rows inside the plane, all its columns inside), tap by tap. */

/* The pool's rule on 4 lanes: v where v > best or v is NaN, else best (bit selects, no branch). */
static inline v4f max_rule4(v4f v, v4f best) {
  v4i m = (v > best) | (v != v);
  return (v4f)(((v4i)v & m) | ((v4i)best & ~m));
}

/* 2-wide windows at stride 2 (the common 2x2 pool): 4 windows at a time, their left and right
 * taps the even and odd floats of 8 read together, each window's best kept in a register over
 * all its taps in the rule's order; returns where it stopped. */
static int64_t max_pool_pairs(const float *rows, const win *g, int64_t i0, int64_t i1, int64_t xa, int64_t xb, float *out) {
  int64_t x = xa;
  for (; x + 4 <= xb; x += 4) {
    v4f best = {0, 0, 0, 0};
    for (int64_t i = i0; i < i1; i++) {
      const float *r = rows + i * g->dh * g->w + 2 * x;
      v4f lo = *(const v4f *)r, hi = *(const v4f *)(r + 4);
      v4f left = __builtin_shufflevector(lo, hi, 0, 2, 4, 6), right = __builtin_shufflevector(lo, hi, 1, 3, 5, 7);
      best = max_rule4(right, i == i0 ? left : max_rule4(left, best));
    }
    memcpy(out + x, &best, sizeof best);
  }
  return x;
}

static inline __attribute__((always_inline)) void max_pool_interior(const float *rows, const win *g, int64_t i0, int64_t i1,
                                                                    int64_t xa, int64_t xb, int64_t sw, float *out) {
  if (sw == 2 && g->kw == 2 && g->dw == 1) xa = max_pool_pairs(rows, g, i0, i1, xa, xb, out);
  for (int64_t x = xa; x < xb; x++) out[x] = rows[i0 * g->dh * g->w + x * sw];
  for (int64_t i = i0; i < i1; i++)
    for (int64_t j = 0; j < g->kw; j++) {
      const float *r = rows + i * g->dh * g->w + j * g->dw;
      for (int64_t x = xa; x < xb; x++) {
        float v = r[x * sw], b = out[x];
        out[x] = ((v > b) | (v != v)) ? v : b;
      }
    }
}

static void max_pool_plane(const float *plane, const win *g, const int64_t *cols, int64_t xa, int64_t xb, float *out) {
  for (int64_t y = 0; y < g->oh; y++, out += g->ow) {
    int64_t i0, i1;
    taps_inside(g->h, g->sh, g->ph, g->dh, g->kh, y, &i0, &i1);
    const float *rows = plane + (y * g->sh - g->ph) * g->w - g->pw;
    for (int64_t x = 0; x < g->ow; x++) {
      if (x == xa && xa < xb && i0 < i1) x = xb; /* the interior, below */
      if (x == g->ow) break;
      int64_t j0 = cols[2 * x], j1 = cols[2 * x + 1];
      if (i0 == i1 || j0 == j1) {
        out[x] = -INFINITY;
        continue;
      }
      const float *base = rows + x * g->sw;
      float best = base[i0 * g->dh * g->w + j0 * g->dw]; /* the first tap again below changes nothing */
      for (int64_t i = i0; i < i1; i++)
        for (int64_t j = j0; j < j1; j++) {
          float v = base[i * g->dh * g->w + j * g->dw];
          best = ((v > best) | (v != v)) ? v : best; /* no short circuit: a select, not a branch */
        }
      out[x] = best;
    }
    if (xa >= xb || i0 == i1) continue;
    /* strides 1 and 2 (the common pools) as constants, so the loads vectorise */
    if (g->sw == 2) max_pool_interior(rows, g, i0, i1, xa, xb, 2, out);
    else if (g->sw == 1) max_pool_interior(rows, g, i0, i1, xa, xb, 1, out);
    else max_pool_interior(rows, g, i0, i1, xa, xb, g->sw, out);
  }
}

/* PyTorch's avg_pool2d window (y, x): the input rows/cols [y0, y1) x [x0, x1) it sums and its divisor. */
static void avg_window(const win *g, bool cip, int64_t y, int64_t x, int64_t *y0, int64_t *y1, int64_t *x0, int64_t *x1, int64_t *div) {
  int64_t a = y * g->sh - g->ph, b = x * g->sw - g->pw;
  int64_t ae = a + g->kh < g->h + g->ph ? a + g->kh : g->h + g->ph, be = b + g->kw < g->w + g->pw ? b + g->kw : g->w + g->pw;
  int64_t pool = (ae - a) * (be - b);
  *y0 = a < 0 ? 0 : a, *x0 = b < 0 ? 0 : b, *y1 = ae < g->h ? ae : g->h, *x1 = be < g->w ? be : g->w;
  *div = cip ? pool : (*y1 - *y0) * (*x1 - *x0);
}

/* A pool's planes (3-D: volumes), forward (pool_part) or the input gradient (pool_grad_part);
 * part p: planes [p planes / parts, (p + 1) planes / parts), each computed as on one thread. */
typedef struct pool_job {
  const pool_geom *pg;
  const float *x;      /* the input (the gradient: max pool's only, for each window's first maximum) */
  const float *gy;     /* the gradient: the output's */
  float *out;          /* the output, or the input's gradient */
  bool max;            /* 3-D forward: a max pool (2-D: cols says it) */
  const int64_t *cols; /* 2-D max pool forward: each output column's taps inside (taps_inside); NULL: average */
  int64_t xa, xb;      /* 2-D max pool forward: the output columns whose windows are wholly inside */
  int64_t planes, parts;
} pool_job;

/* Runs the job's planes (volumes for 3-D) on the pool where they are worth it (a simple
 * operation a tap). */
static void run_pool_job(pool_job *j, om__part_fn part) {
  const pool_geom *pg = j->pg;
  double taps = (double)(pg->out[0] * pg->out[1] * pg->out[2]) * (double)(pg->k[0] * pg->k[1] * pg->k[2]);
  int threads = om__job_threads((double)j->planes * taps * OM_EACH_SIMPLE, j->planes);
  j->parts = om__few_parts(j->planes, threads);
  if (j->parts > 0) om__parallel(j->parts, threads, part, j);
}

/* ---- 3-D pools: a window is the product of one tap range per axis, visited depth, row, column
 * (the 2-D rule's order with the depth outermost) ---- */

/* The flat index (in its volume) of window (z, y, x)'s first maximum by window_argmax's rule
 * (a NaN wins, the last one); -1 when every tap is padding. */
static int64_t volume_argmax(const float *vol, const pool_geom *pg, const int64_t at[3]) {
  int64_t lo[3], hi[3], best_i = -1;
  float best = -INFINITY;
  for (int a = 0; a < 3; a++) taps_inside(pg->in[a], pg->s[a], pg->p[a], pg->d[a], pg->k[a], at[a], &lo[a], &hi[a]);
  for (int64_t i = lo[0]; i < hi[0]; i++)
    for (int64_t j = lo[1]; j < hi[1]; j++)
      for (int64_t k = lo[2]; k < hi[2]; k++) {
        int64_t pos = ((at[0] * pg->s[0] - pg->p[0] + i * pg->d[0]) * pg->in[1] + at[1] * pg->s[1] - pg->p[1] + j * pg->d[1]) * pg->in[2] +
                      at[2] * pg->s[2] - pg->p[2] + k * pg->d[2];
        float v = vol[pos];
        if (best_i < 0 || v > best || isnan(v)) best = v, best_i = pos;
      }
  return best_i;
}

/* PyTorch's avg_pool3d window at (z, y, x): per axis the inputs [lo, hi) it sums; returns its
 * divisor (the window clipped to the padded input with count_include_pad, else what it reads). */
static int64_t volume_avg_window(const pool_geom *pg, const int64_t at[3], int64_t lo[3], int64_t hi[3]) {
  int64_t pool = 1, read = 1;
  for (int a = 0; a < 3; a++) {
    int64_t start = at[a] * pg->s[a] - pg->p[a], end = start + pg->k[a] < pg->in[a] + pg->p[a] ? start + pg->k[a] : pg->in[a] + pg->p[a];
    pool *= end - start;
    lo[a] = start < 0 ? 0 : start, hi[a] = end < pg->in[a] ? end : pg->in[a];
    read *= hi[a] > lo[a] ? hi[a] - lo[a] : 0;
  }
  return pg->cip ? pool : read;
}

/* One volume of a 3-D pool forward (out) or of its input gradient (dvol, from gy): max routes
 * each output gradient to its window's first maximum; the average spreads it over the window's
 * inputs divided by its divisor. */
static void pool_volume(const pool_job *j, int64_t p, bool grad) {
  const pool_geom *pg = j->pg;
  int64_t vin = pg->in[0] * pg->in[1] * pg->in[2], vout = pg->out[0] * pg->out[1] * pg->out[2], at[3], q = 0;
  bool max = grad ? j->x != NULL : j->max;
  const float *vol = grad ? (j->x ? j->x + p * vin : NULL) : j->x + p * vin, *gp = grad ? j->gy + p * vout : NULL;
  float *dst = j->out + p * (grad ? vin : vout);
  for (at[0] = 0; at[0] < pg->out[0]; at[0]++)
    for (at[1] = 0; at[1] < pg->out[1]; at[1]++)
      for (at[2] = 0; at[2] < pg->out[2]; at[2]++, q++) {
        if (max) {
          int64_t i = volume_argmax(vol, pg, at);
          if (grad && i >= 0) dst[i] += gp[q];
          if (!grad) dst[q] = i >= 0 ? vol[i] : -INFINITY;
          continue;
        }
        int64_t lo[3], hi[3], div = volume_avg_window(pg, at, lo, hi);
        bool any = lo[0] < hi[0] && lo[1] < hi[1] && lo[2] < hi[2];
        float sum = 0, v = grad && any ? gp[q] / (float)div : 0.0f;
        for (int64_t z = lo[0]; z < hi[0]; z++)
          for (int64_t y = lo[1]; y < hi[1]; y++)
            for (int64_t x = lo[2]; x < hi[2]; x++) {
              int64_t pos = (z * pg->in[1] + y) * pg->in[2] + x;
              if (grad) dst[pos] += v;
              else sum += vol[pos];
            }
        if (!grad) dst[q] = any ? sum / (float)div : 0.0f;
      }
}

static void pool_part(void *ctx, int64_t part, int worker) {
  (void)worker;
  const pool_job *j = ctx;
  const win *g = &j->pg->g;
  int64_t p1 = (part + 1) * j->planes / j->parts;
  for (int64_t p = part * j->planes / j->parts; p < p1; p++) {
    if (j->pg->ns == 3) {
      pool_volume(j, p, false);
      continue;
    }
    const float *plane = j->x + p * g->h * g->w;
    float *out = j->out + p * g->oh * g->ow;
    if (j->cols) {
      max_pool_plane(plane, g, j->cols, j->xa, j->xb, out);
      continue;
    }
    for (int64_t y = 0; y < g->oh; y++)
      for (int64_t xo = 0; xo < g->ow; xo++, out++) {
        int64_t y0, y1, x0, x1, div;
        avg_window(g, j->pg->cip, y, xo, &y0, &y1, &x0, &x1, &div);
        float sum = 0;
        for (int64_t iy = y0; iy < y1; iy++)
          for (int64_t ix = x0; ix < x1; ix++) sum += plane[iy * g->w + ix];
        *out = y0 < y1 && x0 < x1 ? sum / (float)div : 0.0f;
      }
  }
}

static bool forward_pool(om_call *c) {
  pool_geom pg;
  if (!pool_geometry(c->op, c->in[0], &c->attrs, &pg)) return false;
  const win g = pg.g;
  bool own;
  const float *x = dense(c->in[0], &own, om_op_name(c->op));
  if (!x) return false;
  float *out = (float *)om__data(c->out[0]);
  int64_t planes = c->in[0]->shape[0] * c->in[0]->shape[1], *cols = NULL, xa = 0, xb = 0;
  if (c->op == OM_OP_max_pool2d) {
    if (!(cols = om__alloc(sizeof(int64_t) * (uint64_t)(2 * g.ow + 1), om_op_name(c->op)))) {
      if (own) free((void *)x);
      return false;
    }
    for (int64_t xo = 0; xo < g.ow; xo++) {
      taps_inside(g.w, g.sw, g.pw, g.dw, g.kw, xo, &cols[2 * xo], &cols[2 * xo + 1]);
      if (cols[2 * xo] == 0 && cols[2 * xo + 1] == g.kw) { /* wholly inside: [xa, xb) */
        if (xa == xb) xa = xo;
        xb = xo + 1;
      }
    }
  }
  pool_job j = {.pg = &pg, .x = x, .out = out, .max = is_max_pool(c->op), .cols = cols, .xa = xa, .xb = xb, .planes = planes};
  run_pool_job(&j, pool_part);
  free(cols);
  if (own) free((void *)x);
  return true;
}

/* dx: max pools route each dout to its window's first maximum; average pools spread it over
 * the window's inputs divided by the window's divisor. */
static void pool_grad_part(void *ctx, int64_t part, int worker) {
  (void)worker;
  const pool_job *j = ctx;
  const win *g = &j->pg->g;
  for (int64_t p = part * j->planes / j->parts, p1 = (part + 1) * j->planes / j->parts; p < p1; p++) {
    if (j->pg->ns == 3) {
      pool_volume(j, p, true);
      continue;
    }
    float *dplane = j->out + p * g->h * g->w;
    const float *gp = j->gy + p * g->oh * g->ow;
    for (int64_t y = 0; y < g->oh; y++)
      for (int64_t xo = 0; xo < g->ow; xo++, gp++) {
        if (j->x) {
          int64_t i = window_argmax(j->x + p * g->h * g->w, g, y, xo);
          if (i >= 0) dplane[i] += *gp;
          continue;
        }
        int64_t y0, y1, x0, x1, div;
        avg_window(g, j->pg->cip, y, xo, &y0, &y1, &x0, &x1, &div);
        float v = *gp / (float)div;
        for (int64_t iy = y0; iy < y1; iy++)
          for (int64_t ix = x0; ix < x1; ix++) dplane[iy * g->w + ix] += v;
      }
  }
}

static bool pool_backward(const om_record *r, om_tensor *const *gout, om_tensor **gin) {
  const char *who = om_op_name(r->op);
  pool_geom pg;
  if (!pool_geometry(r->op, r->in[0], &r->attrs, &pg)) return false;
  om_meta meta = {.dtype = OM_FLOAT32, .ndim = r->in[0]->ndim};
  memcpy(meta.shape, r->in[0]->shape, sizeof(int64_t) * (size_t)meta.ndim);
  om_tensor *dx = om__tensor_new(&meta, true, who);
  bool own_x = false, own_g, mx = is_max_pool(r->op);
  const float *x = dx && mx ? dense(r->in[0], &own_x, who) : NULL;
  const float *gy = dx && (x || !mx) ? dense(gout[0], &own_g, who) : NULL;
  if (!gy) {
    if (own_x) free((void *)x);
    om_tensor_release(dx);
    return false;
  }
  int64_t planes = meta.shape[0] * meta.shape[1];
  pool_job j = {.pg = &pg, .x = x, .gy = gy, .out = (float *)om__data(dx), .planes = planes};
  run_pool_job(&j, pool_grad_part);
  if (own_x) free((void *)x);
  if (own_g) free((void *)gy);
  gin[0] = dx;
  return true;
}

/* Whether a window along an axis of size n (>= 1) holds padding taps only (a dilation stepping
 * over a small input: n = 1, kernel 2, dilation 2, padding 1 taps -1 and 1). PyTorch's max of
 * no taps is -inf. */
static bool empty_window(int64_t n, int64_t k, int64_t s, int64_t p, int64_t d, bool ceil_mode) {
  /* without padding every window starts inside the input; without dilation its k taps are
   * contiguous and reach past the padding (at most k / 2) */
  if (p == 0 || d == 1) return false;
  int64_t out = pool_out(n, k, p, s, d, ceil_mode);
  for (int64_t x = 0; x < out; x++) {
    bool tap = false;
    for (int64_t j = 0; j < k && !tap; j++) tap = x * s - p + j * d >= 0 && x * s - p + j * d < n;
    if (!tap) return true;
  }
  return false;
}

/* The same on axis d of the call at every size it can take: the example's when fixed, and on a
 * symbolic axis also each size below the dilation (from the dilation on, every window that starts
 * in the padding reaches the input: its first tap past the start lies in [0, dilation)). */
static bool has_empty_window(om_lower *l, const pool_geom *pg, int ax) {
  int64_t n = pg->in[ax], k = pg->k[ax], s = pg->s[ax], p = pg->p[ax], dl = pg->d[ax];
  if (empty_window(n, k, s, p, dl, pg->ceil_mode)) return true;
  for (int64_t m = 1; om__lower_input_sym(l, 0, 2 + ax - (3 - pg->ns)) && m < dl; m++)
    if (pool_out(m, k, p, s, dl, pg->ceil_mode) >= 1 && empty_window(m, k, s, p, dl, pg->ceil_mode)) return true;
  return false;
}

/* Node op_type reading value v (the pool's input, or it cut: lower_pool) as the call's output. */
static bool pool_node(om_lower *l, const om_call *c, int v, const char *op_type, const om_gattr *at, int n_at) {
  int y;
  if (v < 0 || !om__emit(l, op_type, &v, 1, &c->out_meta[0], 1, &y, at, n_at)) return false;
  om__lower_output(l, 0, y);
  return true;
}

/* MaxPool of value src (the pool's input, or it padded or cut: lower_pool) as the call's output.
 * For max_pool*_indices, MaxPool's second output: ONNX counts a place over the whole of src (N
 * and C too, and src's own padding and size), PyTorch within the input's plane (volume), so the
 * place along each axis is taken apart with src's sizes (Shape, Mod, Div), moved by the begin
 * padding and put together with the input's sizes; where src is the input, Mod by the plane's
 * size is all. pads: the ns begin pads in src (then the end pads, unused here). */
static bool max_pool_node(om_lower *l, const om_call *c, int src, bool moved, const int64_t *pads, const om_gattr *at) {
  if (!is_pool_indices(c->op)) return pool_node(l, c, src, "MaxPool", at, 5);
  const om_meta *im = &c->out_meta[0];
  om_meta m[2] = {*im, *im};
  m[0].dtype = OM_FLOAT32;
  int y[2], ns = c->in[0]->ndim - 2, idx;
  if (src < 0 || !om__emit(l, "MaxPool", &src, 1, m, 2, y, at, 5)) return false;
  idx = y[1];
  if (!moved) {
    int plane = om__lower_in_x(l, 0, 2);
    for (int a = 1; a < ns; a++) plane = om__lower_x_mul(l, plane, om__lower_in_x(l, 0, 2 + a));
    int pv = om__lower_x_value(l, plane);
    if (pv < 0 || !om__emit(l, "Mod", (int[]){idx, pv}, 2, im, 1, &idx, NULL, 0)) return false;
    om__lower_output(l, 0, idx);
    return true;
  }
  int along[3];
  om_meta sm = {.dtype = OM_INT64, .ndim = 1, .shape = {1}};
  for (int a = ns - 1; a >= 0; a--) { /* the place along axis a of src, the rest left in idx */
    int size;
    om_gattr sa[2] = {OM_ATTR_INT("end", 3 + a), OM_ATTR_INT("start", 2 + a)};
    if (!om__emit(l, "Shape", &src, 1, &sm, 1, &size, sa, 2) || !om__emit(l, "Mod", (int[]){idx, size}, 2, im, 1, &along[a], NULL, 0) ||
        (a > 0 && !om__emit(l, "Div", (int[]){idx, size}, 2, im, 1, &idx, NULL, 0)))
      return false;
  }
  for (int a = 0; a < ns; a++) { /* idx = idx * size_a + (along_a - pad_a), the input's sizes */
    int at_a = along[a], pad = pads[a] ? om__lower_ints(l, &pads[a], -1) : -2;
    if (pad == -1 || (pad >= 0 && !om__emit(l, "Sub", (int[]){at_a, pad}, 2, im, 1, &at_a, NULL, 0))) return false;
    if (!a) {
      idx = at_a;
      continue;
    }
    int size = om__lower_x_value(l, om__lower_in_x(l, 0, 2 + a));
    if (size < 0 || !om__emit(l, "Mul", (int[]){idx, size}, 2, im, 1, &idx, NULL, 0) ||
        !om__emit(l, "Add", (int[]){idx, at_a}, 2, im, 1, &idx, NULL, 0))
      return false;
  }
  om__lower_output(l, 0, idx);
  return true;
}

/* max_pool2d / 3d: MaxPool with the pads below, or Pad with -inf then MaxPool without pads (the same
 * maxima: padding never wins) where that one node would not do: onnxruntime refuses a pad that
 * is not smaller than the kernel (the end padding of a dilated ceil_mode pool can reach it), and
 * it gives a window of padding taps only its initial value (-3.4e38, not PyTorch's -inf), while
 * the max of -inf values read from the input is -inf. pads: the ns begin pads, then the ns end
 * pads. */
static bool lower_max_pool(om_lower *l, const om_call *c, int v, const pool_geom *pg, bool onnx_ceil, const int64_t *pads, bool cut) {
  const om_tensor *x = c->in[0];
  int ns = pg->ns, o0 = 3 - ns;
  int64_t none[6] = {0};
  bool explicit_pad = false;
  for (int i = 0; i < ns; i++) {
    if (is_pool_indices(c->op) && has_empty_window(l, pg, o0 + i)) /* PyTorch's place for it lies outside the input */
      return om__lower_refuse(l, c, "a window of padding taps only (a dilation stepping over a small input): PyTorch's index for it lies outside the input, where MaxPool's Indices can only point in it");
    explicit_pad |= pads[i] >= pg->k[o0 + i] || pads[ns + i] >= pg->k[o0 + i] || has_empty_window(l, pg, o0 + i);
  }
  om_gattr at[] = {OM_ATTR_INT("ceil_mode", onnx_ceil), OM_ATTR_INTS("dilations", pg->d + o0, ns), OM_ATTR_INTS("kernel_shape", pg->k + o0, ns),
                   OM_ATTR_INTS("pads", explicit_pad ? none : pads, 2 * ns), OM_ATTR_INTS("strides", pg->s + o0, ns)};
  if (!explicit_pad) return max_pool_node(l, c, v, cut, none, at);
  int ninf = om__lower_scalar(l, -INFINITY, OM_FLOAT32), pv, mid;
  int64_t end[3];
  for (int i = 0; i < ns; i++) end[i] = pads[ns + i];
  if (onnx_ceil) {
    /* padding in the data would move ONNX's rule for dropping a last window that starts in the
     * right padding, so the end padding is computed from the size instead, as lower_pool's at a
     * fixed size: max((out - 1) s + dilated kernel - in - p, p), exact either way (below p the
     * output is the floor formula's, which p end padding gives) */
    int ext[10] = {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1};
    int64_t floor_pads[10] = {0};
    for (int i = 0; i < ns; i++) {
      int ax = o0 + i;
      int64_t in = pg->in[ax], o = pg->out[ax], st1 = pg->s[ax], p = pg->p[ax], dk = pg->d[ax] * (pg->k[ax] - 1) + 1;
      end[i] = (o - 1) * st1 + dk - in - p > p ? (o - 1) * st1 + dk - in - p : p;
      floor_pads[2 + i] = floor_pads[ns + 4 + i] = pads[i];
      int ox = om__lower_out_ext(l, 0, 2 + i);
      if (om__lower_in_ext(l, 0, 2 + i) >= 0)
        ext[ns + 4 + i] = om__lower_x_lin(l, st1, ox >= 0 ? ox : om__lower_x_const(l, o), -1, om__lower_in_x(l, 0, 2 + i), dk - p - st1);
    }
    int lo = om__lower_ints(l, floor_pads, 2 * ns + 4), raw = om__lower_shape_operand(l, floor_pads, ext, 2 * ns + 4);
    om_meta pm = {.dtype = OM_INT64, .ndim = 1, .shape = {2 * ns + 4}};
    if (lo < 0 || raw < 0 || !om__emit(l, "Max", (int[]){raw, lo}, 2, &pm, 1, &pv, NULL, 0)) return false;
  } else {
    int64_t pad_v[10] = {0};
    for (int i = 0; i < ns; i++) pad_v[2 + i] = pads[i], pad_v[ns + 4 + i] = pads[ns + i];
    pv = om__lower_ints(l, pad_v, 2 * ns + 4);
  }
  at[0] = OM_ATTR_INT("ceil_mode", 0);
  om_meta padded = {.dtype = OM_FLOAT32, .ndim = ns + 2, .shape = {x->shape[0], x->shape[1]}};
  for (int i = 0; i < ns; i++) padded.shape[2 + i] = pg->in[o0 + i] + pads[i] + end[i];
  if (v < 0 || ninf < 0 || pv < 0 || !om__emit(l, "Pad", (int[]){v, pv, ninf}, 3, &padded, 1, &mid, NULL, 0)) return false;
  return max_pool_node(l, c, mid, true, pads, at);
}

/* MaxPool / AveragePool at fixed sizes with ceil_mode 0 and the end padding that gives PyTorch's
 * output size: pads_end = (out-1)*stride + dilated kernel - in - pads_begin. That states PyTorch's
 * ceil_mode rule (an overhanging last window is kept, one starting in the right padding is not)
 * exactly, whatever a consumer does with ceil_mode. On a symbolic axis that padding would change
 * with the size, so the node says ceil_mode 1, whose rule opset 19 made PyTorch's. Extra end padding is never read by MaxPool or
 * by AveragePool without count_include_pad. With count_include_pad, PyTorch divides by the window
 * clipped to the padded input; when a window overhangs that, the lowering pads the input with
 * zeros (Pad) and averages without count_include_pad, which divides by exactly that count.
 * MaxPool's own forms: lower_max_pool. 2-D and 3-D alike, axis by axis. */
static bool lower_pool(om_lower *l, const om_call *c) {
  pool_geom pg;
  if (!pool_geometry(c->op, c->in[0], &c->attrs, &pg)) return false;
  int ns = pg.ns, o0 = 3 - ns;
  /* the end padding depends on the input's size when ceil_mode can round up (stride > 1) */
  bool onnx_ceil = false;
  for (int i = 0; pg.ceil_mode && i < ns; i++) onnx_ceil |= om__lower_input_sym(l, 0, 2 + i) && pg.s[o0 + i] > 1;
  int64_t pads[6], e[3], cut_ends[3], cut_axes[3];
  int n_cut = 0;
  bool overhang = false;
  for (int i = 0; i < ns; i++) {
    int ax = o0 + i;
    int64_t in = pg.in[ax], p = pg.p[ax], st1 = pg.s[ax], dk = pg.d[ax] * (pg.k[ax] - 1) + 1, o = pg.out[ax];
    e[i] = (o - 1) * st1 + dk - in - p;
    if (onnx_ceil) { /* a fixed axis whose last window PyTorch drops: less end padding, so that
                      * ONNX's ceil gives its size too (its shape inference does not drop it) */
      if (om__lower_input_sym(l, 0, 2 + i) || e[i] >= p) e[i] = p;
      else if (e[i] < 0) {
        /* the last window ends before the input does (a stride above the kernel: width 9, kernel
         * 2, stride 3 reads 0..7), and no end padding is small enough: the input is cut after the
         * last window's end (elements no window reads), which ONNX's ceil then counts exactly */
        cut_axes[n_cut] = 2 + i, cut_ends[n_cut++] = pg.in[ax] = in + e[i];
        e[i] = 0;
      }
      /* with less end padding than p, ceil((in + p + e - dk) / s) + 1 is (o - 1) + 1: e is what
       * o windows reach past the input */
    }
    if (e[i] < p && !onnx_ceil) e[i] = p;
    pads[i] = p, pads[ns + i] = e[i];
    overhang |= e[i] > p;
  }
  const om_tensor *x = c->in[0];
  int v = om__lower_input(l, 0);
  if (n_cut) { /* Slice(x, 0, ends, axes): fixed sizes, one initializer each */
    om_meta cut = {.dtype = OM_FLOAT32, .ndim = x->ndim};
    for (int d = 0; d < x->ndim; d++) cut.shape[d] = d < 2 ? x->shape[d] : pg.in[o0 + d - 2];
    int64_t zeros[3] = {0};
    int in[4] = {v, om__lower_ints(l, zeros, n_cut), om__lower_ints(l, cut_ends, n_cut), om__lower_ints(l, cut_axes, n_cut)};
    if (v < 0 || in[1] < 0 || in[2] < 0 || in[3] < 0 || !om__emit(l, "Slice", in, 4, &cut, 1, &v, NULL, 0)) return false;
  }
  if (is_max_pool(c->op)) return lower_max_pool(l, c, v, &pg, onnx_ceil, pads, n_cut > 0);
  if (!pg.cip || !overhang) {
    om_gattr at[] = {OM_ATTR_INT("ceil_mode", onnx_ceil), OM_ATTR_INT("count_include_pad", pg.cip), OM_ATTR_INTS("kernel_shape", pg.k + o0, ns),
                     OM_ATTR_INTS("pads", pads, 2 * ns), OM_ATTR_INTS("strides", pg.s + o0, ns)};
    return pool_node(l, c, v, "AveragePool", at, 5);
  }
  int64_t pad_v[10] = {0}, rest[6] = {0};
  om_meta padded = {.dtype = OM_FLOAT32, .ndim = ns + 2, .shape = {x->shape[0], x->shape[1]}};
  for (int i = 0; i < ns; i++) {
    pad_v[2 + i] = pad_v[ns + 4 + i] = pg.p[o0 + i];
    rest[ns + i] = e[i] - pg.p[o0 + i];
    padded.shape[2 + i] = pg.in[o0 + i] + 2 * pg.p[o0 + i];
  }
  int in = v, pv = om__lower_ints(l, pad_v, 2 * ns + 4);
  if (in < 0 || pv < 0) return false;
  int mid, out;
  om_gattr at[] = {OM_ATTR_INT("ceil_mode", 0), OM_ATTR_INT("count_include_pad", 0), OM_ATTR_INTS("kernel_shape", pg.k + o0, ns),
                   OM_ATTR_INTS("pads", rest, 2 * ns), OM_ATTR_INTS("strides", pg.s + o0, ns)};
  if (!om__emit(l, "Pad", (int[]){in, pv}, 2, &padded, 1, &mid, NULL, 0) ||
      !om__emit(l, "AveragePool", &mid, 1, &c->out_meta[0], 1, &out, at, 5))
    return false;
  om__lower_output(l, 0, out);
  return true;
}

const om_op_def om__op_max_pool2d = {
    .name = "max_pool2d", .n_in = 1, .n_out = 1, .saves = OM_SAVES_IN(0),
    .infer = infer_pool, .forward = forward_pool, .backward = pool_backward,
    .lower = lower_pool, .derives_extents = true,
    .onnx = "MaxPool (Pad with -inf first when a pad reaches the kernel or a window holds only padding; Slice first where ceil_mode meets a symbolic axis and a fixed one whose last window ends before the input)",
    .test = {.n_in = 1, .ndims = {4}, .shapes = {{2, 3, 5, 6}}, .lo = -2, .hi = 2,
             .attrs = {.n_i = 9, .i = {3, 2, 2, 2, 1, 1, 1, 1, 1}}, .empty_refusal = "only the batch may be 0"}};

const om_op_def om__op_avg_pool2d = {
    .name = "avg_pool2d", .n_in = 1, .n_out = 1, .saves = 0,
    .infer = infer_pool, .forward = forward_pool, .backward = pool_backward,
    .lower = lower_pool, .derives_extents = true, .onnx = "AveragePool (Pad, AveragePool when count_include_pad meets an overhanging ceil_mode window; Slice first where ceil_mode meets a symbolic axis and a fixed one whose last window ends before the input)",
    .test = {.n_in = 1, .ndims = {4}, .shapes = {{2, 3, 6, 6}}, .lo = -2, .hi = 2,
             .attrs = {.n_i = 8, .i = {3, 3, 2, 2, 1, 1, 1, 1}}, .empty_refusal = "only the batch may be 0"}};

/* The 3-D samples keep a ceil_mode window that overhangs on each axis (and the average counts
 * the padding there: the Pad path of lower_pool). */
const om_op_def om__op_max_pool3d = {
    .name = "max_pool3d", .n_in = 1, .n_out = 1, .saves = OM_SAVES_IN(0),
    .infer = infer_pool, .forward = forward_pool, .backward = pool_backward,
    .lower = lower_pool, .derives_extents = true,
    .onnx = "MaxPool (3-D; Pad with -inf first when a pad reaches the kernel or a window holds only padding; Slice first where ceil_mode meets a symbolic axis and a fixed one whose last window ends before the input)",
    .test = {.n_in = 1, .ndims = {5}, .shapes = {{2, 2, 4, 5, 4}}, .lo = -2, .hi = 2,
             .attrs = {.n_i = 13, .i = {2, 3, 2, 2, 2, 1, 1, 1, 0, 1, 1, 2, 1}}, .empty_refusal = "only the batch may be 0"}};

const om_op_def om__op_avg_pool3d = {
    .name = "avg_pool3d", .n_in = 1, .n_out = 1, .saves = 0,
    .infer = infer_pool, .forward = forward_pool, .backward = pool_backward,
    .lower = lower_pool, .derives_extents = true, .onnx = "AveragePool (3-D; Pad, AveragePool when count_include_pad meets an overhanging ceil_mode window; Slice first where ceil_mode meets a symbolic axis and a fixed one whose last window ends before the input)",
    .test = {.n_in = 1, .ndims = {5}, .shapes = {{2, 2, 4, 5, 4}}, .lo = -2, .hi = 2,
             .attrs = {.n_i = 11, .i = {2, 3, 2, 2, 2, 2, 1, 1, 1, 1, 1}}, .empty_refusal = "only the batch may be 0"}};

/* ---- max_pool2d_indices, max_pool3d_indices: return_indices of F.max_pool2d / 3d, each window's
 * maximum's place in its flattened input plane (2-D: h W + w) or volume (3-D: (d H + h) W + w),
 * int64 of the values' shape; the max pools' attrs and windows (volume_argmax: the first maximum,
 * a NaN wins). The values are the max pool op's: these ops add the places only when asked. ---- */

/* PyTorch's place for window at whose taps all lie in the padding (a dilation stepping over a
 * small input): its kernel's start, moved past 0 by whole dilations on each axis. */
static int64_t padding_window_place(const pool_geom *pg, const int64_t at[3]) {
  int64_t place = 0;
  for (int a = 0; a < 3; a++) {
    int64_t start = at[a] * pg->s[a] - pg->p[a];
    while (start < 0) start += pg->d[a];
    place = place * pg->in[a] + start;
  }
  return place;
}

static bool forward_pool_indices(om_call *c) {
  pool_geom pg;
  if (!pool_geometry(c->op, c->in[0], &c->attrs, &pg)) return false;
  bool own;
  const float *x = dense(c->in[0], &own, om_op_name(c->op));
  if (!x) return false;
  int64_t *idx = (int64_t *)om__data(c->out[0]), planes = c->in[0]->shape[0] * c->in[0]->shape[1], vin = pg.in[0] * pg.in[1] * pg.in[2], at[3];
  for (int64_t p = 0; p < planes; p++)
    for (at[0] = 0; at[0] < pg.out[0]; at[0]++)
      for (at[1] = 0; at[1] < pg.out[1]; at[1]++)
        for (at[2] = 0; at[2] < pg.out[2]; at[2]++) {
          int64_t i = volume_argmax(x + p * vin, &pg, at);
          *idx++ = i >= 0 ? i : padding_window_place(&pg, at);
        }
  if (own) free((void *)x);
  return true;
}

/* The samples: overlapping windows (stride below the kernel), so that places repeat, and a
 * dilated axis with padding. */
const om_op_def om__op_max_pool2d_indices = {
    .name = "max_pool2d_indices", .n_in = 1, .n_out = 1, .infer = infer_pool, .forward = forward_pool_indices,
    .lower = lower_pool, .derives_extents = true,
    .onnx = "MaxPool's Indices, Mod by the plane's size (after a Pad or Slice: the place taken apart with Shape, Mod, Div and put together with Sub, Mul, Add)",
    .test = {.n_in = 1, .ndims = {4}, .shapes = {{2, 3, 5, 6}}, .lo = -2, .hi = 2,
             .attrs = {.n_i = 9, .i = {3, 2, 2, 2, 1, 1, 1, 2, 1}}, .no_gradcheck = true, .empty_refusal = "only the batch may be 0"}};

const om_op_def om__op_max_pool3d_indices = {
    .name = "max_pool3d_indices", .n_in = 1, .n_out = 1, .infer = infer_pool, .forward = forward_pool_indices,
    .lower = lower_pool, .derives_extents = true,
    .onnx = "MaxPool's Indices (3-D), Mod by the volume's size (after a Pad or Slice: Shape, Mod, Div, Sub, Mul, Add)",
    .test = {.n_in = 1, .ndims = {5}, .shapes = {{2, 2, 4, 5, 4}}, .lo = -2, .hi = 2,
             .attrs = {.n_i = 13, .i = {2, 3, 2, 2, 2, 1, 1, 1, 0, 1, 1, 2, 1}}, .no_gradcheck = true, .empty_refusal = "only the batch may be 0"}};

/* The max pools' attrs (their ops' and their indices ops') from PyTorch's arguments over ns axes. */
static om_attrs max_pool_attrs(int ns, const int64_t *kernel, const int64_t *stride, const int64_t *padding, const int64_t *dilation,
                               bool ceil_mode) {
  om_attrs a = {.n_i = 4 * ns + 1};
  sizes_or(kernel, (int64_t[]){0, 0, 0}, ns, a.i);
  sizes_or(stride, a.i, ns, a.i + ns);
  sizes_or(padding, (int64_t[]){0, 0, 0}, ns, a.i + 2 * ns);
  sizes_or(dilation, (int64_t[]){1, 1, 1}, ns, a.i + 3 * ns);
  a.i[4 * ns] = ceil_mode;
  return a;
}

om_tensor *om_max_pool2d(om_tensor *x, const int64_t kernel[2], const int64_t stride[2], const int64_t padding[2],
                         const int64_t dilation[2], bool ceil_mode) {
  om_attrs a = max_pool_attrs(2, kernel, stride, padding, dilation, ceil_mode);
  return apply_maybe_unbatched(OM_OP_max_pool2d, &x, 1, &a, 4);
}

om_tensor *om_max_pool2d_indices(om_tensor *x, const int64_t kernel[2], const int64_t stride[2], const int64_t padding[2],
                                 const int64_t dilation[2], bool ceil_mode) {
  om_attrs a = max_pool_attrs(2, kernel, stride, padding, dilation, ceil_mode);
  return apply_maybe_unbatched(OM_OP_max_pool2d_indices, &x, 1, &a, 4);
}

om_tensor *om_avg_pool2d(om_tensor *x, const int64_t kernel[2], const int64_t stride[2], const int64_t padding[2],
                         bool ceil_mode, bool count_include_pad) {
  om_attrs a = {.n_i = 8};
  pair_or(kernel, (int64_t[]){0, 0}, a.i);
  pair_or(stride, a.i, a.i + 2);
  pair_or(padding, (int64_t[]){0, 0}, a.i + 4);
  a.i[6] = ceil_mode;
  a.i[7] = count_include_pad;
  return apply_maybe_unbatched(OM_OP_avg_pool2d, &x, 1, &a, 4);
}

om_tensor *om_max_pool3d(om_tensor *x, const int64_t kernel[3], const int64_t stride[3], const int64_t padding[3],
                         const int64_t dilation[3], bool ceil_mode) {
  om_attrs a = max_pool_attrs(3, kernel, stride, padding, dilation, ceil_mode);
  return apply_maybe_unbatched(OM_OP_max_pool3d, &x, 1, &a, 5);
}

om_tensor *om_max_pool3d_indices(om_tensor *x, const int64_t kernel[3], const int64_t stride[3], const int64_t padding[3],
                                 const int64_t dilation[3], bool ceil_mode) {
  om_attrs a = max_pool_attrs(3, kernel, stride, padding, dilation, ceil_mode);
  return apply_maybe_unbatched(OM_OP_max_pool3d_indices, &x, 1, &a, 5);
}

om_tensor *om_avg_pool3d(om_tensor *x, const int64_t kernel[3], const int64_t stride[3], const int64_t padding[3],
                         bool ceil_mode, bool count_include_pad) {
  om_attrs a = {.n_i = 11};
  sizes_or(kernel, (int64_t[]){0, 0, 0}, 3, a.i);
  sizes_or(stride, a.i, 3, a.i + 3);
  sizes_or(padding, (int64_t[]){0, 0, 0}, 3, a.i + 6);
  a.i[9] = ceil_mode;
  a.i[10] = count_include_pad;
  return apply_maybe_unbatched(OM_OP_avg_pool3d, &x, 1, &a, 5);
}


/* ---- max_unpool: PyTorch's max_unpool1d / 2d / 3d, one op for 1 to 3 spatial axes ----
 *   x [N, C, *in] float32, indices int64 [N, C, *in] -> [N, C, *out]   attrs: out (one per spatial axis)
 * Zeros with x's values at their indices' places in each flattened output plane (volume); of two
 * values for one place the later in row-major order stays, as PyTorch's CPU kernel writes them
 * in order. A place outside the plane is an error, as PyTorch's. */

/* An output plane (volume) holds at most 2^40 elements: the sizes' product cannot overflow. */
#define UNPOOL_MAX_PLANE ((int64_t)1 << 40)

/* The product of the spatial sizes (dims 2 on) of shape. */
static int64_t plane_size(const int64_t *shape, int ndim) {
  int64_t n = 1;
  for (int d = 2; d < ndim; d++) n *= shape[d];
  return n;
}

static bool infer_max_unpool(om_call *c) {
  const om_tensor *x = c->in[0], *idx = c->in[1];
  const int ns = x->ndim - 2;
  char xs[OM_SHAPE_STR_LEN], is[OM_SHAPE_STR_LEN];
  om__shape_str(xs, sizeof xs, x->shape, x->ndim);
  if (ns < 1 || ns > 3) return om__fail(OM_ERR_SHAPE_MISMATCH, "max_unpool: input %s must have 3 to 5 dims ([N, C, L] to [N, C, D, H, W])", xs);
  if (x->dtype != OM_FLOAT32) return om__fail(OM_ERR_DTYPE_MISMATCH, "max_unpool: takes float32, not %s", om_dtype_name(x->dtype));
  if (idx->dtype != OM_INT64) return om__fail(OM_ERR_DTYPE_MISMATCH, "max_unpool: indices must be int64, not %s", om_dtype_name(idx->dtype));
  if (idx->ndim != x->ndim || memcmp(idx->shape, x->shape, sizeof(int64_t) * (size_t)x->ndim))
    return om__fail(OM_ERR_SHAPE_MISMATCH, "max_unpool: indices %s must have the input's shape %s", om__shape_str(is, sizeof is, idx->shape, idx->ndim), xs);
  if (c->attrs.n_i != ns)
    return om__fail(OM_ERR_INVALID_ARGUMENT, "max_unpool: takes the output size (%d integers for input %s), got %d", ns, xs, c->attrs.n_i);
  c->out_meta[0] = (om_meta){.dtype = OM_FLOAT32, .ndim = x->ndim, .shape = {x->shape[0], x->shape[1]}};
  int64_t plane = 1;
  for (int a = 0; a < ns; a++) {
    int64_t v = c->attrs.i[a];
    if (v < 1) return om__fail(OM_ERR_INVALID_ARGUMENT, "max_unpool: output size must be positive, got %lld", (long long)v);
    if (v > UNPOOL_MAX_PLANE / plane) return om__fail(OM_ERR_INVALID_ARGUMENT, "max_unpool: an output plane of more than 2^40 elements");
    plane *= v;
    c->out_meta[0].shape[2 + a] = v;
  }
  return true;
}

static bool forward_max_unpool(om_call *c) {
  const om_tensor *x = c->in[0];
  bool own_x, own_i = false;
  const float *xv = dense(x, &own_x, "max_unpool");
  const int64_t *iv = xv ? dense_any(c->in[1], &own_i, "max_unpool") : NULL;
  float *out = (float *)om__data(c->out[0]);
  int64_t planes = x->shape[0] * x->shape[1], lin = plane_size(x->shape, x->ndim), lout = plane_size(c->out[0]->shape, x->ndim);
  int64_t bad = -1; /* the last place outside the plane, which PyTorch's kernel names */
  if (iv) memset(out, 0, sizeof(float) * (size_t)(planes * lout));
  for (int64_t q = 0; iv && q < planes * lin; q++) {
    int64_t k = iv[q];
    if (k < 0 || k >= lout) bad = q;
    else out[q / lin * lout + k] = xv[q];
  }
  bool ok = iv && bad < 0;
  if (iv && bad >= 0)
    om__fail(OM_ERR_INDEX_OUT_OF_RANGE, "max_unpool: index %lld (element %lld of plane %lld) is outside the output plane of %lld elements",
             (long long)iv[bad], (long long)(bad % lin), (long long)(bad / lin), (long long)lout);
  if (own_x) free((void *)xv);
  if (own_i) free((void *)iv);
  return ok;
}

/* dx[i] = dout at i's place where i's value stayed there (the last to write it), 0 for a value
 * written over: the forward's adjoint (PyTorch's gather gives both the gradient; the two agree
 * when the places differ, as a max pool's without overlapping windows). As public ops, so it is
 * itself differentiable in dout: gather of dout [N, C, plane] at the places, times the mask of
 * the values kept. */
static bool max_unpool_backward(const om_record *r, om_tensor *const *g, om_tensor **gin) {
  const om_tensor *x = r->in[0];
  int64_t planes = x->shape[0] * x->shape[1], lin = plane_size(x->shape, x->ndim), lout = plane_size(g[0]->shape, x->ndim);
  int64_t flat_in[3] = {x->shape[0], x->shape[1], lin}, flat_out[3] = {x->shape[0], x->shape[1], lout};
  om_meta mm = {.dtype = OM_FLOAT32, .ndim = 3, .shape = {flat_in[0], flat_in[1], lin}};
  om_scope s = {0};
  om_tensor *mask = om__keep(&s, om__tensor_new(&mm, true, "max_unpool"));
  bool own = false;
  const int64_t *iv = mask ? dense_any(r->in[1], &own, "max_unpool") : NULL;
  bool any = planes > 0 && lin > 0;
  int64_t *last = iv && any ? om__alloc(sizeof(int64_t) * (uint64_t)lout, "max_unpool") : NULL;
  bool ok = iv && (last || !any);
  for (int64_t p = 0; last && p < planes; p++) { /* the last writer of each place, then who is it */
    const int64_t *ip = iv + p * lin;
    float *mp = (float *)om__data(mask) + p * lin;
    for (int64_t i = 0; i < lin; i++)
      if (ip[i] >= 0 && ip[i] < lout) last[ip[i]] = i;
    for (int64_t i = 0; i < lin; i++) mp[i] = ip[i] >= 0 && ip[i] < lout && last[ip[i]] == i ? 1.0f : 0.0f;
  }
  free(last);
  if (own) free((void *)iv);
  om_tensor *gy = ok ? om__keep(&s, om_reshape(g[0], flat_out, 3)) : NULL;
  om_tensor *ix = gy ? om__keep(&s, om_reshape(r->in[1], flat_in, 3)) : NULL;
  om_tensor *picked = ix ? om__keep(&s, om_gather(gy, 2, ix)) : NULL;
  om_tensor *kept = picked ? om__keep(&s, om_mul(picked, mask)) : NULL;
  gin[0] = kept ? om_reshape(kept, x->shape, x->ndim) : NULL;
  om__scope_end(&s);
  return gin[0] != NULL;
}

static bool max_unpool_extents(om_lower *l, const om_call *c) {
  for (int a = 0; a < c->in[0]->ndim - 2; a++) om__lower_candidate(l, 0, 2 + a, om__lower_arg(l, a));
  return true;
}

/* The last writer of each place, and only it, written: with [N, C, plane] views of x and the
 * indices, pos = 1 .. plane (float32, exact while a plane holds at most 2^24 values; a larger
 * fixed one is refused), last = ScatterElements(zeros, idx, pos, max), kept = GatherElements(last,
 * idx) == pos, and the values Where(kept, x, 0) added into zeros (ScatterElements add): each place
 * then gets one value and zeros, so the result is eager's whatever order a consumer adds in
 * (ONNX leaves a place written twice without a reduction undefined). ONNX's MaxUnpool counts a
 * place over the whole tensor (N and C too), and onnxruntime and ONNX's reference read its
 * output_shape differently, so it is not used. */
static bool lower_max_unpool(om_lower *l, const om_call *c) {
  int empty = om__lower_empty(l, c);
  if (empty) return empty > 0;
  const om_tensor *x = c->in[0];
  const om_meta *om = &c->out_meta[0];
  int64_t lin = plane_size(x->shape, x->ndim);
  if (lin > (int64_t)1 << 24) return om__lower_refuse(l, c, "an input plane of more than 2^24 values (its writers are compared in float32)");
  int ext_out[OM_MAX_DIMS], ext_flat[3] = {om__lower_out_ext(l, 0, 0), om__lower_out_ext(l, 0, 1), -1}, plane = -1, xin = -1;
  bool moves = false;
  for (int d = 0; d < om->ndim; d++) ext_out[d] = om__lower_out_ext(l, 0, d);
  for (int d = 2; d < om->ndim; d++) moves |= ext_out[d] >= 0;
  for (int d = 2; moves && d < om->ndim; d++) {
    int e = ext_out[d] >= 0 ? ext_out[d] : om__lower_x_const(l, om->shape[d]);
    plane = d == 2 ? e : om__lower_x_mul(l, plane, e);
  }
  for (int d = 2; d < x->ndim; d++) xin = d == 2 ? om__lower_in_x(l, 0, d) : om__lower_x_mul(l, xin, om__lower_in_x(l, 0, d));
  ext_flat[2] = plane;
  int64_t keep_rest[3] = {0, 0, -1}, flat_out[3] = {om->shape[0], om->shape[1], plane_size(om->shape, om->ndim)};
  om_meta fx = {.dtype = OM_FLOAT32, .ndim = 3, .shape = {x->shape[0], x->shape[1], lin}}, fi = fx, fz = fx, pm = {.dtype = OM_FLOAT32, .ndim = 1, .shape = {lin}};
  om_meta bm = fx, sm = {.dtype = OM_INT64, .ndim = 1, .shape = {3}}, nm = {.dtype = OM_INT64, .ndim = 0}, lm = {.dtype = OM_FLOAT32, .ndim = 0};
  fi.dtype = OM_INT64;
  bm.dtype = OM_BOOL;
  fz.shape[2] = flat_out[2];
  int vx = om__lower_input(l, 0), vi = om__lower_input(l, 1), rest = om__lower_ints(l, keep_rest, 3), n = om__lower_x_scalar(l, xin);
  int zs = om__lower_shape_operand(l, flat_out, ext_flat, 3), os = om__lower_shape_operand(l, om->shape, ext_out, om->ndim);
  int one = om__lower_scalar(l, 1, OM_FLOAT32), zero = om__lower_scalar(l, 0, OM_FLOAT32);
  int z, lim, pos, shp, last, got, kept, vals, y;
  if (vx < 0 || vi < 0 || rest < 0 || n < 0 || zs < 0 || os < 0 || one < 0 || zero < 0 ||
      !om__emit(l, "Reshape", (int[]){vx, rest}, 2, &fx, 1, &vx, NULL, 0) || !om__emit(l, "Reshape", (int[]){vi, rest}, 2, &fi, 1, &vi, NULL, 0) ||
      !om__emit(l, "ConstantOfShape", &zs, 1, &fz, 1, &z, NULL, 0) || (lim = om__lower_cast(l, n, &nm, OM_FLOAT32)) < 0 ||
      !om__emit(l, "Add", (int[]){lim, one}, 2, &lm, 1, &lim, NULL, 0) || !om__emit(l, "Range", (int[]){one, lim, one}, 3, &pm, 1, &pos, NULL, 0) ||
      !om__emit(l, "Shape", &vi, 1, &sm, 1, &shp, NULL, 0) || !om__emit(l, "Expand", (int[]){pos, shp}, 2, &fx, 1, &pos, NULL, 0) ||
      !om__emit(l, "ScatterElements", (int[]){z, vi, pos}, 3, &fz, 1, &last, (om_gattr[]){OM_ATTR_INT("axis", 2), OM_ATTR_STRING("reduction", "max")}, 2) ||
      !om__emit(l, "GatherElements", (int[]){last, vi}, 2, &fx, 1, &got, &OM_ATTR_INT("axis", 2), 1) ||
      !om__emit(l, "Equal", (int[]){got, pos}, 2, &bm, 1, &kept, NULL, 0) || !om__emit(l, "Where", (int[]){kept, vx, zero}, 3, &fx, 1, &vals, NULL, 0) ||
      !om__emit(l, "ScatterElements", (int[]){z, vi, vals}, 3, &fz, 1, &y, (om_gattr[]){OM_ATTR_INT("axis", 2), OM_ATTR_STRING("reduction", "add")}, 2) ||
      !om__emit(l, "Reshape", (int[]){y, os}, 2, om, 1, &y, NULL, 0))
    return false;
  om__lower_output(l, 0, y);
  return true;
}

/* The sample's places are drawn from [0, 30), the 5 x 6 output plane (some repeat). */
const om_op_def om__op_max_unpool = {
    .name = "max_unpool", .n_in = 2, .n_out = 1, .saves = OM_SAVES_IN(1), .infer = infer_max_unpool, .forward = forward_max_unpool,
    .backward = max_unpool_backward, .lower = lower_max_unpool, .extents = max_unpool_extents, .sym_args = 7,
    .onnx = "Reshape to [N, C, plane]; Range, Expand, ScatterElements (max), GatherElements, Equal: the last writer of each place; Where, ScatterElements (add) into ConstantOfShape zeros, Reshape",
    .test = {.n_in = 2, .ndims = {4, 4}, .shapes = {{2, 3, 4, 5}, {2, 3, 4, 5}}, .dtypes = {OM_FLOAT32, OM_INT64}, .lo = 0, .hi = 29.99,
             .attrs = {.n_i = 2, .i = {5, 6}}}};

om_tensor *om_max_unpool(om_tensor *x, om_tensor *indices, const int64_t *output_size, int n) {
  if (!output_size || n < 1 || n > 3) return om__fail(OM_ERR_INVALID_ARGUMENT, "max_unpool: takes 1 to 3 output sizes, got %d", output_size ? n : 0), NULL;
  om_attrs a = {.n_i = n};
  memcpy(a.i, output_size, sizeof(int64_t) * (size_t)n);
  return om__apply1(OM_OP_max_unpool, (om_tensor *[]){x, indices}, 2, &a);
}

/* ---- adaptive_avg_pool2d, adaptive_avg_pool3d: output cell i of n covers input
 * [floor(i*in/n), ceil((i+1)*in/n)) along each spatial axis. One kernel for both: the 2-D pool is
 * the 3-D one with a depth of 1 (one cell [0, 1)), which sums in the same order. ---- */

/* The spatial dims of an adaptive pool: 3 for the 3-D ones, else 2. */
static int adaptive_dims(om_op op) { return op == OM_OP_adaptive_avg_pool3d || op == OM_OP_adaptive_max_pool3d ? 3 : 2; }
static bool is_adaptive_max(om_op op) { return op == OM_OP_adaptive_max_pool2d || op == OM_OP_adaptive_max_pool3d; }

static bool infer_adaptive(om_call *c) {
  const om_tensor *x = c->in[0];
  const char *name = om_op_name(c->op);
  const int k = adaptive_dims(c->op);
  char xs[OM_SHAPE_STR_LEN];
  if (c->attrs.n_i != k) return om__fail(OM_ERR_INVALID_ARGUMENT, "%s: takes the output size (%d integers), got %d", name, k, c->attrs.n_i);
  if (!attrs_in_range(name, &c->attrs)) return false;
  if (x->dtype != OM_FLOAT32) return om__fail(OM_ERR_DTYPE_MISMATCH, "%s: takes float32, not %s", name, om_dtype_name(x->dtype));
  if (x->ndim != 2 + k)
    return om__fail(OM_ERR_SHAPE_MISMATCH, "%s: input %s must have %d dims (%s; the functions also take it without N)", name,
                    om__shape_str(xs, sizeof xs, x->shape, x->ndim), 2 + k, k == 3 ? "[N, C, D, H, W]" : "[N, C, H, W]");
  bool empty = !x->shape[1];
  for (int i = 0; i < k; i++) empty |= !x->shape[2 + i];
  if (empty) /* PyTorch's check: no cell to average */
    return om__fail(OM_ERR_SHAPE_MISMATCH, "%s: input %s has an empty channel, %sheight or width dim (only the "
                    "batch may be 0, as PyTorch)", name, om__shape_str(xs, sizeof xs, x->shape, x->ndim), k == 3 ? "depth, " : "");
  c->out_meta[0] = (om_meta){.dtype = OM_FLOAT32, .ndim = 2 + k, .shape = {x->shape[0], x->shape[1]}};
  for (int i = 0; i < k; i++) {
    if (c->attrs.i[i] == -1) c->attrs.i[i] = x->shape[2 + i];
    if (c->attrs.i[i] < 1)
      return om__fail(OM_ERR_INVALID_ARGUMENT, "%s: output size must be positive (or -1 for the input's), got %lld", name, (long long)c->attrs.i[i]);
    c->out_meta[0].shape[2 + i] = c->attrs.i[i];
  }
  if (is_adaptive_max(c->op)) { /* the indices: each maximum's place in its flattened plane (volume) */
    c->out_meta[1] = c->out_meta[0];
    c->out_meta[1].dtype = OM_INT64;
  }
  return true;
}

static int64_t cell_start(int64_t i, int64_t in, int64_t out) { return i * in / out; }
static int64_t cell_end(int64_t i, int64_t in, int64_t out) { return ((i + 1) * in + out - 1) / out; }

/* One cell of an adaptive pool of in[planes, D, H, W] to os {oD, oH, oW}: plane p, o its flat
 * output index, and its input box [lo, hi) per axis (depth, height, width). The average and the
 * max kernels both walk the cells with cell_next, in output order. */
typedef struct adaptive_cell {
  int64_t in[4], os[3], o, p, lo[3], hi[3];
} adaptive_cell;

/* The walk over in pooled to os, before its first cell. */
static adaptive_cell cells_of(const int64_t in[4], const int64_t os[3]) {
  adaptive_cell c = {.in = {in[0], in[1], in[2], in[3]}, .os = {os[0], os[1], os[2]}, .o = -1};
  return c;
}

/* Moves c to the next cell (false past the last): its plane and its box on each axis. */
static bool cell_next(adaptive_cell *c) {
  if (++c->o >= c->in[0] * c->os[0] * c->os[1] * c->os[2]) return false;
  int64_t rest = c->o;
  for (int a = 2; a >= 0; a--) {
    int64_t i = rest % c->os[a];
    rest /= c->os[a];
    c->lo[a] = cell_start(i, c->in[1 + a], c->os[a]);
    c->hi[a] = cell_end(i, c->in[1 + a], c->os[a]);
  }
  c->p = rest;
  return true;
}

/* The flat place of (iz, iy, ix) in cell c's plane (volume). */
static int64_t cell_place(const adaptive_cell *c, int64_t iz, int64_t iy, int64_t ix) { return (iz * c->in[2] + iy) * c->in[3] + ix; }

/* in[planes, D, H, W] pooled to os {oD, oH, oW}. forward (dx NULL): out = cell means of x;
 * backward (dx set): dx += dout / cell size. */
static void adaptive_run(const int64_t in[4], const int64_t os[3], const float *x, float *out, const float *gy, float *dx) {
  const int64_t vol = in[1] * in[2] * in[3];
  for (adaptive_cell c = cells_of(in, os); cell_next(&c);) {
    float div = (float)((c.hi[0] - c.lo[0]) * (c.hi[1] - c.lo[1]) * (c.hi[2] - c.lo[2]));
    float sum = 0, v = dx ? gy[c.o] / div : 0.0f;
    for (int64_t iz = c.lo[0]; iz < c.hi[0]; iz++)
      for (int64_t iy = c.lo[1]; iy < c.hi[1]; iy++)
        for (int64_t ix = c.lo[2]; ix < c.hi[2]; ix++) {
          int64_t k = c.p * vol + cell_place(&c, iz, iy, ix);
          if (dx) dx[k] += v;
          else sum += x[k];
        }
    if (!dx) out[c.o] = sum / div;
  }
}

/* adaptive_run's operands for an input of shape x and output size attrs (2 or 3 of them). */
static void adaptive_geometry(om_op op, const int64_t *x, const int64_t *attrs, int64_t in[4], int64_t os[3]) {
  const int k = adaptive_dims(op);
  in[0] = x[0] * x[1];
  in[1] = k == 3 ? x[2] : 1;
  os[0] = k == 3 ? attrs[0] : 1;
  for (int i = 0; i < 2; i++) {
    in[2 + i] = x[k + i];
    os[1 + i] = attrs[k - 2 + i];
  }
}

static bool forward_adaptive(om_call *c) {
  bool own;
  const float *x = dense(c->in[0], &own, om_op_name(c->op));
  if (!x) return false;
  int64_t in[4], os[3];
  adaptive_geometry(c->op, c->in[0]->shape, c->attrs.i, in, os);
  adaptive_run(in, os, x, (float *)om__data(c->out[0]), NULL, NULL);
  if (own) free((void *)x);
  return true;
}

static bool adaptive_backward(const om_record *r, om_tensor *const *gout, om_tensor **gin) {
  const char *name = om_op_name(r->op);
  om_meta meta = {.dtype = OM_FLOAT32, .ndim = r->in[0]->ndim};
  memcpy(meta.shape, r->in[0]->shape, sizeof(int64_t) * (size_t)meta.ndim);
  om_tensor *dx = om__tensor_new(&meta, true, name);
  bool own;
  const float *gy = dx ? dense(gout[0], &own, name) : NULL;
  if (!gy) {
    om_tensor_release(dx);
    return false;
  }
  int64_t in[4], os[3];
  adaptive_geometry(r->op, meta.shape, r->attrs.i, in, os);
  adaptive_run(in, os, NULL, NULL, gy, (float *)om__data(dx));
  if (own) free((void *)gy);
  gin[0] = dx;
  return true;
}

/* A float32 [rows, cols] constant of the integers v: an int64 initializer, Reshape, Cast (to 1,
 * FLOAT), which onnxruntime folds at load time. -1 on error. */
static int float_matrix(om_lower *l, const int64_t *v, int64_t rows, int64_t cols) {
  om_meta im = {.dtype = OM_INT64, .ndim = 2, .shape = {rows, cols}}, fm = im;
  fm.dtype = OM_FLOAT32;
  int flat = om__lower_ints(l, v, (int)(rows * cols)), shape = om__lower_ints(l, im.shape, 2), m, f;
  if (flat < 0 || shape < 0 || !om__emit(l, "Reshape", (int[]){flat, shape}, 2, &im, 1, &m, NULL, 0) ||
      !om__emit(l, "Cast", &m, 1, &fm, 1, &f, &OM_ATTR_INT("to", 1), 1))
    return -1;
  return f;
}

/* u = A_h v (A_h [oH, H], v [N, C, H, oW] -> [N, C, oH, oW]), as MatMul(A_h, v); where the batch
 * can be 0 at some size, on v with one more row (onnxruntime's MatMul fails on an empty batch on
 * the right), sliced off after. false on error. */
static bool rows_product(om_lower *l, const om_call *c, int ah, int v, int *u) {
  om_meta vm = c->out_meta[0], um = c->out_meta[0];
  vm.shape[2] = c->in[0]->shape[2];
  if (!om__lower_may_be_0(l, om__lower_in_ext(l, 0, 0))) return om__emit(l, "MatMul", (int[]){ah, v}, 2, &um, 1, u, NULL, 0);
  int w;
  um.shape[0]++;
  return (v = om__lower_extra_row(l, v, &vm, 0)) >= 0 && om__emit(l, "MatMul", (int[]){ah, v}, 2, &um, 1, &w, NULL, 0) &&
         (*u = om__lower_drop_row(l, w, um, 0)) >= 0;
}

/* PyTorch's uneven, overlapping cells, which no ONNX pooling has: y = (A_h x A_w) / counts, with
 * A_h [oH, H] and A_w [W, oW] marking each cell's rows and columns by 1 (cell_start, cell_end:
 * the kernel's cells) and counts [oH, oW] their sizes. The sums add the same elements exactly as
 * the kernel's (in another order, so the last bits can differ), then divide by the same count. */
static bool lower_adaptive_uneven(om_lower *l, const om_call *c) {
  const int64_t *x = c->in[0]->shape, *o = c->attrs.i, h = x[2], w = x[3];
  int64_t *ah = om__alloc(sizeof(int64_t) * (uint64_t)(o[0] * h + w * o[1] + o[0] * o[1]), "adaptive_avg_pool2d");
  if (!ah) return false;
  int64_t *aw = ah + o[0] * h, *n = aw + w * o[1];
  memset(ah, 0, sizeof(int64_t) * (size_t)(o[0] * h + w * o[1]));
  for (int64_t i = 0; i < o[0]; i++)
    for (int64_t r = cell_start(i, h, o[0]); r < cell_end(i, h, o[0]); r++) ah[i * h + r] = 1;
  for (int64_t j = 0; j < o[1]; j++)
    for (int64_t r = cell_start(j, w, o[1]); r < cell_end(j, w, o[1]); r++) aw[r * o[1] + j] = 1;
  for (int64_t i = 0; i < o[0]; i++)
    for (int64_t j = 0; j < o[1]; j++)
      n[i * o[1] + j] = (cell_end(i, h, o[0]) - cell_start(i, h, o[0])) * (cell_end(j, w, o[1]) - cell_start(j, w, o[1]));
  int vh = float_matrix(l, ah, o[0], h), vw = float_matrix(l, aw, w, o[1]), vn = float_matrix(l, n, o[0], o[1]);
  free(ah);
  om_meta cols = c->out_meta[0];
  cols.shape[2] = h;
  int in = om__lower_input(l, 0), t, u, y;
  if (vh < 0 || vw < 0 || vn < 0 || in < 0 || !om__emit(l, "MatMul", (int[]){in, vw}, 2, &cols, 1, &t, NULL, 0) ||
      !rows_product(l, c, vh, t, &u) ||
      !om__emit(l, "Div", (int[]){u, vn}, 2, &c->out_meta[0], 1, &y, NULL, 0))
    return false;
  om__lower_output(l, 0, y);
  return true;
}

/* The cells of input axis d pooled to o (k 0: rows, as a [o, in] float 0/1 matrix and their sizes
 * [o, 1]; k 1: columns, [in, o] and [1, o]) computed from the run-time size of a symbolic axis:
 * cell i is [floor(i in / o), floor(((i + 1) in + o - 1) / o)), the kernel's cell_start and
 * cell_end (int64 Div floors these non-negative values). An axis whose output keeps the input's
 * size (-1) has no matrix: *mat is -1. false on error. */
static bool cell_matrix(om_lower *l, const om_call *c, int d, int64_t o, int k, int *mat, int *count) {
  const int64_t in = c->in[0]->shape[d];
  *mat = *count = -1;
  if (om__lower_out_ext(l, 0, d) >= 0 || (o == in && om__lower_in_ext(l, 0, d) < 0)) return true;
  om_meta cells = {.dtype = OM_INT64, .ndim = 2, .shape = {k ? 1 : o, k ? o : 1}}, fcells = cells;
  om_meta iota = {.dtype = OM_INT64, .ndim = k ? 2 : 1, .shape = {in, 1}}, mask = {.dtype = OM_BOOL, .ndim = 2};
  mask.shape[0] = k ? in : o;
  mask.shape[1] = k ? o : in;
  om_meta fmask = mask;
  fcells.dtype = fmask.dtype = OM_FLOAT32;
  int64_t *idx = om__alloc(sizeof(int64_t) * (uint64_t)(2 * o), om_op_name(c->op));
  if (!idx) return false;
  for (int64_t i = 0; i < 2 * o; i++) idx[i] = i < o ? i : i - o + 1;
  int shape = om__lower_ints(l, cells.shape, 2), first = om__lower_ints(l, idx, (int)o), next = om__lower_ints(l, idx + o, (int)o);
  free(idx);
  int n = om__lower_x_value(l, om__lower_in_x(l, 0, d)), on = om__lower_ints(l, &o, 1), rest = om__lower_ints(l, &(int64_t){o - 1}, 1);
  int r[3] = {om__lower_ints(l, &(int64_t){0}, -1), om__lower_x_scalar(l, om__lower_in_x(l, 0, d)), om__lower_ints(l, &(int64_t){1}, -1)};
  int i0, i1, lo, hi, rv, ge, lt, m, len;
  if (shape < 0 || first < 0 || next < 0 || n < 0 || on < 0 || rest < 0 || r[1] < 0 ||
      !om__emit(l, "Reshape", (int[]){first, shape}, 2, &cells, 1, &i0, NULL, 0) ||
      !om__emit(l, "Reshape", (int[]){next, shape}, 2, &cells, 1, &i1, NULL, 0) ||
      !om__emit(l, "Mul", (int[]){i0, n}, 2, &cells, 1, &lo, NULL, 0) || !om__emit(l, "Div", (int[]){lo, on}, 2, &cells, 1, &lo, NULL, 0) ||
      !om__emit(l, "Mul", (int[]){i1, n}, 2, &cells, 1, &hi, NULL, 0) || !om__emit(l, "Add", (int[]){hi, rest}, 2, &cells, 1, &hi, NULL, 0) ||
      !om__emit(l, "Div", (int[]){hi, on}, 2, &cells, 1, &hi, NULL, 0) || !om__emit(l, "Range", r, 3, &iota, 1, &rv, NULL, 0))
    return false;
  iota.ndim = 1;
  if (k) { /* the columns' source index runs down: [in, 1] */
    int ax = om__lower_ints(l, &(int64_t){1}, 1);
    iota.ndim = 2;
    if (ax < 0 || !om__emit(l, "Unsqueeze", (int[]){rv, ax}, 2, &iota, 1, &rv, NULL, 0)) return false;
  }
  if (!om__emit(l, "GreaterOrEqual", (int[]){rv, lo}, 2, &mask, 1, &ge, NULL, 0) ||
      !om__emit(l, "Less", (int[]){rv, hi}, 2, &mask, 1, &lt, NULL, 0) || !om__emit(l, "And", (int[]){ge, lt}, 2, &mask, 1, &m, NULL, 0) ||
      !om__emit(l, "Cast", &m, 1, &fmask, 1, mat, &OM_ATTR_INT("to", 1 /* FLOAT */), 1) ||
      !om__emit(l, "Sub", (int[]){hi, lo}, 2, &cells, 1, &len, NULL, 0) ||
      !om__emit(l, "Cast", &len, 1, &fcells, 1, count, &OM_ATTR_INT("to", 1), 1))
    return false;
  return true;
}

/* lower_adaptive_uneven's product on symbolic spatial axes: each axis's cells are computed from
 * its run-time size (cell_matrix) where they change, constants where fixed. */
static bool lower_adaptive_symbolic(om_lower *l, const om_call *c) {
  int mat[2], count[2];
  for (int k = 0; k < 2; k++) {
    if (om__lower_in_ext(l, 0, 2 + k) >= 0) {
      if (!cell_matrix(l, c, 2 + k, c->attrs.i[k], k, &mat[k], &count[k])) return false;
      continue;
    }
    /* a fixed axis: the kernel's cells as constants of the same shapes */
    const int64_t in = c->in[0]->shape[2 + k], o = c->attrs.i[k];
    int64_t *a = om__alloc(sizeof(int64_t) * (uint64_t)(o * in + o), "adaptive_avg_pool2d");
    if (!a) return false;
    int64_t *n = a + o * in;
    memset(a, 0, sizeof(int64_t) * (size_t)(o * in));
    for (int64_t i = 0; i < o; i++) {
      n[i] = cell_end(i, in, o) - cell_start(i, in, o);
      for (int64_t r = cell_start(i, in, o); r < cell_end(i, in, o); r++) a[k ? r * o + i : i * in + r] = 1;
    }
    mat[k] = float_matrix(l, a, k ? in : o, k ? o : in);
    count[k] = float_matrix(l, n, k ? 1 : o, k ? o : 1);
    free(a);
    if (mat[k] < 0 || count[k] < 0) return false;
  }
  const om_meta *out = &c->out_meta[0];
  om_meta cols = *out, counts = {.dtype = OM_FLOAT32, .ndim = 2, .shape = {out->shape[2], out->shape[3]}};
  cols.shape[2] = c->in[0]->shape[2];
  int v = om__lower_input(l, 0), n = -1;
  if (v < 0) return false;
  if (mat[1] >= 0 && !om__emit(l, "MatMul", (int[]){v, mat[1]}, 2, &cols, 1, &v, NULL, 0)) return false;
  if (mat[0] >= 0 && !rows_product(l, c, mat[0], v, &v)) return false;
  if (count[0] >= 0 && count[1] >= 0) {
    if (!om__emit(l, "Mul", (int[]){count[0], count[1]}, 2, &counts, 1, &n, NULL, 0)) return false;
  } else {
    n = count[0] >= 0 ? count[0] : count[1];
  }
  if (n >= 0 && !om__emit(l, "Div", (int[]){v, n}, 2, out, 1, &v, NULL, 0)) return false;
  om__lower_output(l, 0, v);
  return true;
}

/* The 3-D pool's uneven or moving cells, one axis at a time (W, H, D): the axis moved last (a
 * Transpose that swaps it with W, its own inverse), a MatMul by its [in, o] 0/1 cell matrix
 * (constants on a fixed axis, cell_matrix's on a symbolic one), moved back; then one Div by the
 * cells' sizes, the product of the axes' counts (small integers, exact in float32), as the kernel
 * divides each cell's sum once. An axis whose output is its input (kept, or fixed and equal) is
 * left alone. The sums run axis by axis, so the last bits can differ from the kernel's, as
 * lower_adaptive_uneven's do. false on error. */
static bool lower_adaptive_volume(om_lower *l, const om_call *c) {
  const int64_t *x = c->in[0]->shape, *o = c->attrs.i;
  om_meta vm = {.dtype = OM_FLOAT32, .ndim = 5}, nm = {.dtype = OM_FLOAT32};
  memcpy(vm.shape, x, sizeof(int64_t) * 5);
  int v = om__lower_input(l, 0), n = -1;
  if (v < 0) return false;
  /* onnxruntime fuses a Transpose into the MatMul after it and then fails on an empty batch: where
   * the batch is or may be 0, one more row (om__lower_extra_row) runs through, dropped at the end */
  const bool extra = x[0] == 0 || om__lower_may_be_0(l, om__lower_in_ext(l, 0, 0));
  if (extra && (v = om__lower_extra_row(l, v, &vm, 0)) < 0) return false;
  for (int a = 4; a >= 2; a--) {
    const int64_t in = x[a], oo = o[a - 2];
    int mat = -1, count = -1;
    if (om__lower_in_ext(l, 0, a) >= 0) {
      if (!cell_matrix(l, c, a, oo, 1, &mat, &count)) return false;
    } else if (oo != in) {
      int64_t *m = om__alloc(sizeof(int64_t) * (uint64_t)(in * oo + oo), "adaptive_avg_pool3d");
      if (!m) return false;
      int64_t *sizes = m + in * oo;
      memset(m, 0, sizeof(int64_t) * (size_t)(in * oo));
      for (int64_t i = 0; i < oo; i++) {
        sizes[i] = cell_end(i, in, oo) - cell_start(i, in, oo);
        for (int64_t r = cell_start(i, in, oo); r < cell_end(i, in, oo); r++) m[r * oo + i] = 1;
      }
      mat = float_matrix(l, m, in, oo);
      count = float_matrix(l, sizes, 1, oo);
      free(m);
      if (mat < 0 || count < 0) return false;
    }
    if (mat < 0) continue;
    int64_t perm[5] = {0, 1, 2, 3, 4};
    perm[a] = 4;
    perm[4] = a;
    om_meta tm = vm;
    tm.shape[a] = vm.shape[4];
    tm.shape[4] = in;
    om_gattr pa = OM_ATTR_INTS("perm", perm, 5);
    if (a != 4 && !om__emit(l, "Transpose", &v, 1, &tm, 1, &v, &pa, 1)) return false;
    tm.shape[4] = oo;
    if (!om__emit(l, "MatMul", (int[]){v, mat}, 2, &tm, 1, &v, NULL, 0)) return false;
    vm.shape[a] = oo;
    if (a != 4 && !om__emit(l, "Transpose", &v, 1, &vm, 1, &v, &pa, 1)) return false;
    /* the counts [1, o] as [o] followed by one 1 per axis after a, so they broadcast along a */
    om_meta cm = {.dtype = OM_FLOAT32, .ndim = 5 - a, .shape = {oo, 1, 1}};
    int shape = om__lower_ints(l, cm.shape, cm.ndim), cnt;
    if (shape < 0 || !om__emit(l, "Reshape", (int[]){count, shape}, 2, &cm, 1, &cnt, NULL, 0)) return false;
    if (n < 0) {
      n = cnt;
      nm = cm;
      continue;
    }
    om_meta pm = cm; /* cm has more dims than nm (a decreases): nm's right-aligned under it */
    for (int i = 0; i < nm.ndim; i++) pm.shape[pm.ndim - 1 - i] = nm.shape[nm.ndim - 1 - i];
    pm.shape[0] = oo;
    if (!om__emit(l, "Mul", (int[]){cnt, n}, 2, &pm, 1, &n, NULL, 0)) return false;
    nm = pm;
  }
  if (n >= 0 && !om__emit(l, "Div", (int[]){v, n}, 2, &vm, 1, &v, NULL, 0)) return false;
  if (extra && (v = om__lower_drop_row(l, v, vm, 0)) < 0) return false;
  om__lower_output(l, 0, v);
  return true;
}

/* GlobalAveragePool for an output of ones; AveragePool with kernel = stride = in/out when the
 * input divides evenly (every cell is then one equal window); otherwise lower_adaptive_uneven
 * (2-D) or lower_adaptive_volume (3-D). On a symbolic spatial axis a fixed output size has cells
 * that move with the size: lower_adaptive_symbolic (2-D) or lower_adaptive_volume computes them. */
static bool lower_adaptive(om_lower *l, const om_call *c) {
  const int64_t *x = c->in[0]->shape, *o = c->attrs.i;
  const int k = adaptive_dims(c->op);
  bool global = true, moving = false, even = true;
  for (int i = 0; i < k; i++) {
    /* an output size of -1 that is 1 in the example keeps a symbolic axis: not global */
    global &= o[i] == 1 && !om__lower_output_sym(l, 0, 2 + i);
    moving |= om__lower_input_sym(l, 0, 2 + i) && !om__lower_output_sym(l, 0, 2 + i);
    even &= x[2 + i] % o[i] == 0;
  }
  if (global) return om__lower_node(l, c, "GlobalAveragePool", NULL, 0);
  if (moving) return k == 3 ? lower_adaptive_volume(l, c) : lower_adaptive_symbolic(l, c);
  if (!even) return k == 3 ? lower_adaptive_volume(l, c) : lower_adaptive_uneven(l, c);
  int64_t ks[3], pads[6] = {0, 0, 0, 0, 0, 0};
  for (int i = 0; i < k; i++) ks[i] = x[2 + i] / o[i];
  om_gattr at[] = {OM_ATTR_INTS("kernel_shape", ks, k), OM_ATTR_INTS("pads", pads, 2 * k), OM_ATTR_INTS("strides", ks, k)};
  return om__lower_node(l, c, "AveragePool", at, 3);
}

const om_op_def om__op_adaptive_avg_pool2d = {
    .name = "adaptive_avg_pool2d", .n_in = 1, .n_out = 1, .saves = 0,
    .infer = infer_adaptive, .forward = forward_adaptive, .backward = adaptive_backward,
    .lower = lower_adaptive, .derives_extents = true, .onnx = "GlobalAveragePool (1x1); AveragePool (input divisible by output); else MatMul, MatMul, Div (cells as 0/1 matrices, computed from the size on a symbolic axis)",
    .test = {.n_in = 1, .ndims = {4}, .shapes = {{2, 3, 6, 4}}, .lo = -2, .hi = 2, .attrs = {.n_i = 2, .i = {3, 2}},
             .empty_refusal = "only the batch may be 0"}};

const om_op_def om__op_adaptive_avg_pool3d = {
    .name = "adaptive_avg_pool3d", .n_in = 1, .n_out = 1, .saves = 0,
    .infer = infer_adaptive, .forward = forward_adaptive, .backward = adaptive_backward,
    .lower = lower_adaptive, .derives_extents = true, .onnx = "GlobalAveragePool (1x1x1); AveragePool (input divisible by output); else per axis Transpose, MatMul, Transpose, then Div (cells as 0/1 matrices, computed from the size on a symbolic axis)",
    .test = {.n_in = 1, .ndims = {5}, .shapes = {{2, 2, 5, 4, 3}}, .lo = -2, .hi = 2, .attrs = {.n_i = 3, .i = {2, 3, 2}},
             .empty_refusal = "only the batch may be 0"}};

om_tensor *om_adaptive_avg_pool2d(om_tensor *x, const int64_t output_size[2]) {
  om_attrs a = {.n_i = 2, .i = {output_size[0], output_size[1]}};
  return apply_maybe_unbatched(OM_OP_adaptive_avg_pool2d, &x, 1, &a, 4);
}

om_tensor *om_adaptive_avg_pool3d(om_tensor *x, const int64_t output_size[3]) {
  om_attrs a = {.n_i = 3, .i = {output_size[0], output_size[1], output_size[2]}};
  return apply_maybe_unbatched(OM_OP_adaptive_avg_pool3d, &x, 1, &a, 5);
}

/* ---- adaptive_max_pool2d, adaptive_max_pool3d: PyTorch's adaptive cells (cell_start, cell_end),
 * each cell's maximum and its place in the flattened input plane (2-D: h W + w) or volume (3-D:
 * (d H + h) W + w), as F.adaptive_max_pool2d(..., return_indices=True) gives them. One kernel for
 * both, the 2-D pool at a depth of 1. ----
 *   x [N, C, H, W] -> values [N, C, oH, oW], indices int64 [N, C, oH, oW]   (3-D: D and oD too)
 * PyTorch's CPU kernel's rule: a cell starts at -inf with its first place, and a value replaces
 * the best when greater or NaN, so ties keep the first place in row-major order and of several
 * NaN the last wins (torch.max(dim) keeps the first NaN: a composition of it differed here). */

/* in[planes, D, H, W] pooled to os {oD, oH, oW}: out the cells' maxima, idx their places. */
static void adaptive_max_run(const int64_t in[4], const int64_t os[3], const float *x, float *out, int64_t *idx) {
  for (adaptive_cell c = cells_of(in, os); cell_next(&c);) {
    const float *plane = x + c.p * in[1] * in[2] * in[3];
    float best = -INFINITY;
    int64_t at = cell_place(&c, c.lo[0], c.lo[1], c.lo[2]);
    for (int64_t iz = c.lo[0]; iz < c.hi[0]; iz++)
      for (int64_t iy = c.lo[1]; iy < c.hi[1]; iy++)
        for (int64_t ix = c.lo[2]; ix < c.hi[2]; ix++) {
          int64_t k = cell_place(&c, iz, iy, ix);
          float v = plane[k];
          if (v > best || v != v) {
            best = v;
            at = k;
          }
        }
    out[c.o] = best;
    idx[c.o] = at;
  }
}

static bool forward_adaptive_max(om_call *c) {
  bool own;
  const float *x = dense(c->in[0], &own, om_op_name(c->op));
  if (!x) return false;
  int64_t in[4], os[3];
  adaptive_geometry(c->op, c->in[0]->shape, c->attrs.i, in, os);
  adaptive_max_run(in, os, x, (float *)om__data(c->out[0]), (int64_t *)om__data(c->out[1]));
  if (own) free((void *)x);
  return true;
}

/* dx = zeros [N, C, plane].scatter_add(2, indices, dout), as [N, C, plane] then x's shape: public
 * ops, so the gradient is itself differentiable in dout (a place chosen by several overlapping
 * cells gets each one's gradient, as PyTorch's). */
static bool adaptive_max_backward(const om_record *r, om_tensor *const *g, om_tensor **gin) {
  const om_tensor *x = r->in[0];
  const int k = adaptive_dims(r->op);
  int64_t flat_in[3] = {x->shape[0], x->shape[1], 1}, flat_out[3] = {x->shape[0], x->shape[1], 1};
  for (int i = 0; i < k; i++) {
    flat_in[2] *= x->shape[2 + i];
    flat_out[2] *= g[0]->shape[2 + i];
  }
  om_scope s = {0};
  om_tensor *z = om__keep(&s, om_zeros(flat_in, 3, OM_FLOAT32));
  om_tensor *idx = om__keep(&s, om_reshape(r->saved[1], flat_out, 3));
  om_tensor *gy = om__keep(&s, om_reshape(g[0], flat_out, 3));
  om_tensor *dx = z && idx && gy ? om__keep(&s, om_scatter_add(z, 2, idx, gy)) : NULL;
  gin[0] = dx ? om_reshape(dx, x->shape, x->ndim) : NULL;
  om__scope_end(&s);
  return gin[0] != NULL;
}

/* Axis a (2 + spatial index) of the value being pooled, o cells, as the graph sees it: start, the
 * cells' first places ([o] int64), and table, [o, kmax] int64, cell i's places start_i + j for j
 * below kmax (the widest cell), clamped to the cell's last (repeating it changes no maximum, and
 * ArgMax's first pick stays the first). A fixed axis: constants. An output that keeps a symbolic
 * axis (cells of one): start = Range(0, n), table = it as [n, 1]. A fixed output over a symbolic
 * axis: the cells computed from the run-time size n, start = i n / o, end = ((i + 1) n + o - 1) / o
 * (int64 Div floors these non-negative values), kmax = ReduceMax(end - start), table = Min(start
 * + Range(0, kmax), end - 1). *kmax_ex: the example's kmax (the values' metas). false on error. */
static bool max_cells(om_lower *l, const om_call *c, int a, int64_t o, int *start, int *table, int64_t *kmax_ex) {
  const int64_t n = c->in[0]->shape[a];
  *kmax_ex = 0;
  for (int64_t i = 0; i < o; i++)
    if (cell_end(i, n, o) - cell_start(i, n, o) > *kmax_ex) *kmax_ex = cell_end(i, n, o) - cell_start(i, n, o);
  om_meta col = {.dtype = OM_INT64, .ndim = 2, .shape = {o, 1}}, row = {.dtype = OM_INT64, .ndim = 1, .shape = {o}};
  om_meta tab = {.dtype = OM_INT64, .ndim = 2, .shape = {o, *kmax_ex}};
  if (om__lower_in_ext(l, 0, a) < 0) { /* fixed: constants */
    int64_t *v = om__alloc(sizeof(int64_t) * (uint64_t)(o + o * *kmax_ex), om_op_name(c->op));
    if (!v) return false;
    for (int64_t i = 0; i < o; i++) {
      v[i] = cell_start(i, n, o);
      for (int64_t j = 0; j < *kmax_ex; j++) {
        int64_t at = v[i] + j, last = cell_end(i, n, o) - 1;
        v[o + i * *kmax_ex + j] = at < last ? at : last;
      }
    }
    int flat = om__lower_ints(l, v + o, (int)(o * *kmax_ex)), shape = om__lower_ints(l, tab.shape, 2);
    *start = om__lower_ints(l, v, (int)o);
    free(v);
    return flat >= 0 && shape >= 0 && *start >= 0 && om__emit(l, "Reshape", (int[]){flat, shape}, 2, &tab, 1, table, NULL, 0);
  }
  int size = om__lower_x_scalar(l, om__lower_in_x(l, 0, a)), zero = om__lower_ints(l, &(int64_t){0}, -1),
      one = om__lower_ints(l, &(int64_t){1}, -1), ax1 = om__lower_ints(l, &(int64_t){1}, 1);
  if (size < 0 || zero < 0 || one < 0 || ax1 < 0) return false;
  if (om__lower_out_ext(l, 0, a) >= 0) /* the output keeps the symbolic axis: cells of one */
    return om__emit(l, "Range", (int[]){zero, size, one}, 3, &row, 1, start, NULL, 0) &&
           om__emit(l, "Unsqueeze", (int[]){*start, ax1}, 2, &col, 1, table, NULL, 0);
  int64_t *idx = om__alloc(sizeof(int64_t) * (uint64_t)(2 * o), om_op_name(c->op));
  if (!idx) return false;
  for (int64_t i = 0; i < 2 * o; i++) idx[i] = i < o ? i : i - o + 1;
  int first = om__lower_ints(l, idx, (int)o), next = om__lower_ints(l, idx + o, (int)o);
  free(idx);
  int on = om__lower_ints(l, &o, -1), rest = om__lower_ints(l, &(int64_t){o - 1}, -1), lo, hi, len, km, j, at, last;
  om_meta scalar = {.dtype = OM_INT64, .ndim = 0}, iota = {.dtype = OM_INT64, .ndim = 1, .shape = {*kmax_ex}};
  return first >= 0 && next >= 0 && on >= 0 && rest >= 0 &&
         om__emit(l, "Mul", (int[]){first, size}, 2, &row, 1, &lo, NULL, 0) && om__emit(l, "Div", (int[]){lo, on}, 2, &row, 1, start, NULL, 0) &&
         om__emit(l, "Mul", (int[]){next, size}, 2, &row, 1, &hi, NULL, 0) && om__emit(l, "Add", (int[]){hi, rest}, 2, &row, 1, &hi, NULL, 0) &&
         om__emit(l, "Div", (int[]){hi, on}, 2, &row, 1, &hi, NULL, 0) && om__emit(l, "Sub", (int[]){hi, *start}, 2, &row, 1, &len, NULL, 0) &&
         om__emit(l, "ReduceMax", &len, 1, &scalar, 1, &km, &OM_ATTR_INT("keepdims", 0), 1) &&
         om__emit(l, "Range", (int[]){zero, km, one}, 3, &iota, 1, &j, NULL, 0) &&
         om__emit(l, "Unsqueeze", (int[]){*start, ax1}, 2, &col, 1, &at, NULL, 0) &&
         om__emit(l, "Add", (int[]){at, j}, 2, &tab, 1, &at, NULL, 0) &&
         om__emit(l, "Sub", (int[]){hi, one}, 2, &row, 1, &last, NULL, 0) &&
         om__emit(l, "Unsqueeze", (int[]){last, ax1}, 2, &col, 1, &last, NULL, 0) &&
         om__emit(l, "Min", (int[]){at, last}, 2, &tab, 1, table, NULL, 0);
}

/* One axis a of the composition: v (of meta *vm) -> the cells' maxima along a (*v, *vm updated)
 * and where each is along a (*pos, int64 of the new *vm): Gather(v, table, axis a) puts [o, kmax]
 * at a, ReduceMax and ArgMax (select_last_index 0: the first) over the kmax axis, plus the cell's
 * start. false on error. */
static bool max_axis(om_lower *l, const om_call *c, int a, int64_t o, int *v, om_meta *vm, int *pos) {
  int start, table;
  int64_t kmax;
  if (!max_cells(l, c, a, o, &start, &table, &kmax)) return false;
  om_meta gm = {.dtype = OM_FLOAT32, .ndim = vm->ndim + 1}, mm = *vm, im;
  for (int d = 0; d < gm.ndim; d++) gm.shape[d] = d < a ? vm->shape[d] : d == a ? o : d == a + 1 ? kmax : vm->shape[d - 1];
  mm.shape[a] = o;
  im = mm;
  im.dtype = OM_INT64;
  /* start as [o, 1, ...] with a 1 per axis after a, to add along a */
  om_meta sm = {.dtype = OM_INT64, .ndim = vm->ndim - a};
  sm.shape[0] = o;
  for (int d = 1; d < sm.ndim; d++) sm.shape[d] = 1;
  int64_t sshape[OM_MAX_DIMS];
  memcpy(sshape, sm.shape, sizeof sshape);
  sshape[0] = -1;
  int g, k, sv, axes = om__lower_ints(l, &(int64_t){a + 1}, 1), shape = om__lower_ints(l, sshape, sm.ndim);
  om_gattr arg[3] = {OM_ATTR_INT("axis", a + 1), OM_ATTR_INT("keepdims", 0), OM_ATTR_INT("select_last_index", 0)};
  if (axes < 0 || shape < 0 || !om__emit(l, "Gather", (int[]){*v, table}, 2, &gm, 1, &g, &OM_ATTR_INT("axis", a), 1) ||
      !om__emit(l, "ReduceMax", (int[]){g, axes}, 2, &mm, 1, v, &OM_ATTR_INT("keepdims", 0), 1) ||
      !om__emit(l, "ArgMax", &g, 1, &im, 1, &k, arg, 3) ||
      !om__emit(l, "Reshape", (int[]){start, shape}, 2, &sm, 1, &sv, NULL, 0) ||
      !om__emit(l, "Add", (int[]){k, sv}, 2, &im, 1, pos, NULL, 0))
    return false;
  *vm = mm;
  return true;
}

/* The size of input axis a as an int64 [1] value (a constant when fixed). */
static int axis_size(om_lower *l, int a) { return om__lower_x_value(l, om__lower_in_x(l, 0, a)); }

/* The composition, exact for every cell (uneven, overlapping, moving with a symbolic size): the
 * maxima along W (max_axis), then along H (then D), each pass keeping the first place of the
 * maximum, so the pick is the first in row-major order, the kernel's. The index: the row chosen,
 * the column chosen in that row (GatherElements of the W pass's places by the row), row W + col
 * (3-D: the depth chosen, its row and column, (depth H + row) W + col). values_out: whether this
 * writes output 0 (lower_adaptive_max writes it with MaxPool where the cells are even). */
static bool lower_adaptive_max_cells(om_lower *l, const om_call *c, bool values_out) {
  const int k = adaptive_dims(c->op), r = 2 + k;
  om_meta vm = {.dtype = OM_FLOAT32, .ndim = r};
  memcpy(vm.shape, c->in[0]->shape, sizeof(int64_t) * (size_t)r);
  int v = om__lower_input(l, 0), pos[3];
  om_meta pm[3];
  if (v < 0) return false;
  for (int a = r - 1; a >= 2; a--) {
    if (!max_axis(l, c, a, c->out_meta[0].shape[a], &v, &vm, &pos[a - 2])) return false;
    pm[a - 2] = vm;
    pm[a - 2].dtype = OM_INT64;
  }
  if (values_out) om__lower_output(l, 0, v);
  /* place[i]: the place along spatial axis i of each output cell's pick: the outer pass's own
   * (pos[0]), an inner pass's read at the outer passes' choices */
  om_meta im = c->out_meta[1];
  int place[3] = {pos[0], -1, -1};
  if (k == 2) {
    if (!om__emit(l, "GatherElements", (int[]){pos[1], pos[0]}, 2, &im, 1, &place[1], &OM_ATTR_INT("axis", 2), 1)) return false;
  } else {
    int col_at_row;
    if (!om__emit(l, "GatherElements", (int[]){pos[1], pos[0]}, 2, &im, 1, &place[1], &OM_ATTR_INT("axis", 2), 1) ||
        !om__emit(l, "GatherElements", (int[]){pos[2], pos[1]}, 2, &pm[1], 1, &col_at_row, &OM_ATTR_INT("axis", 3), 1) ||
        !om__emit(l, "GatherElements", (int[]){col_at_row, pos[0]}, 2, &im, 1, &place[2], &OM_ATTR_INT("axis", 2), 1))
      return false;
  }
  int idx = place[0];
  for (int i = 1; i < k; i++) {
    int n = axis_size(l, 2 + i);
    if (n < 0 || !om__emit(l, "Mul", (int[]){idx, n}, 2, &im, 1, &idx, NULL, 0) ||
        !om__emit(l, "Add", (int[]){idx, place[i]}, 2, &im, 1, &idx, NULL, 0))
      return false;
  }
  om__lower_output(l, 1, idx);
  return true;
}

/* MaxPool (kernel = stride = input / output, no pads) for the values where every axis divides
 * evenly at every size (fixed, or a kept axis: a kernel of 1), the composition for the indices
 * (pruned when unused: MaxPool's own Indices count over the whole tensor and follow its NaN
 * rule); the composition for both otherwise. */
static bool lower_adaptive_max(om_lower *l, const om_call *c) {
  const int64_t *x = c->in[0]->shape, *o = c->attrs.i;
  const int k = adaptive_dims(c->op);
  bool even = true;
  for (int i = 0; i < k; i++)
    even &= x[2 + i] % o[i] == 0 && (!om__lower_input_sym(l, 0, 2 + i) || om__lower_output_sym(l, 0, 2 + i));
  if (!even) return lower_adaptive_max_cells(l, c, true);
  int64_t ks[3], pads[6] = {0, 0, 0, 0, 0, 0};
  for (int i = 0; i < k; i++) ks[i] = x[2 + i] / o[i];
  om_gattr at[] = {OM_ATTR_INTS("kernel_shape", ks, k), OM_ATTR_INTS("pads", pads, 2 * k), OM_ATTR_INTS("strides", ks, k)};
  int in = om__lower_input(l, 0), y;
  if (in < 0 || !om__emit(l, "MaxPool", &in, 1, &c->out_meta[0], 1, &y, at, 3)) return false;
  om__lower_output(l, 0, y);
  return lower_adaptive_max_cells(l, c, false);
}

#define ADAPTIVE_MAX_ONNX \
  "MaxPool (every cell even); else per axis Gather of the cells' places, ReduceMax, ArgMax (cells computed from the size on a symbolic axis); indices: GatherElements, Mul, Add"
const om_op_def om__op_adaptive_max_pool2d = {
    .name = "adaptive_max_pool2d", .n_in = 1, .n_out = 2, .saves = OM_SAVES_OUT(1),
    .infer = infer_adaptive, .forward = forward_adaptive_max, .backward = adaptive_max_backward,
    .lower = lower_adaptive_max, .derives_extents = true, .onnx = ADAPTIVE_MAX_ONNX,
    .test = {.n_in = 1, .ndims = {4}, .shapes = {{2, 3, 7, 5}}, .lo = -2, .hi = 2, .attrs = {.n_i = 2, .i = {3, 2}},
             .empty_refusal = "only the batch may be 0"}};

const om_op_def om__op_adaptive_max_pool3d = {
    .name = "adaptive_max_pool3d", .n_in = 1, .n_out = 2, .saves = OM_SAVES_OUT(1),
    .infer = infer_adaptive, .forward = forward_adaptive_max, .backward = adaptive_max_backward,
    .lower = lower_adaptive_max, .derives_extents = true, .onnx = ADAPTIVE_MAX_ONNX,
    .test = {.n_in = 1, .ndims = {5}, .shapes = {{2, 1, 5, 4, 3}}, .lo = -2, .hi = 2, .attrs = {.n_i = 3, .i = {2, 3, 2}},
             .empty_refusal = "only the batch may be 0"}};

/* The pool on x [N, C, ...] or (batched - 1 dims) a batch of one: values, and the indices to
 * *indices when given (released otherwise). */
static om_tensor *adaptive_max(om_op op, om_tensor *x, const om_attrs *a, int batched, om_tensor **indices) {
  if (indices) *indices = NULL;
  if (!om__check_inputs(om_op_name(op), &x, 1)) return NULL;
  om_scope s = {0};
  bool one = x->ndim == batched - 1;
  om_tensor *in = one ? om__keep(&s, om_unsqueeze(x, 0)) : x, *out[2] = {NULL, NULL};
  if (!in || om__apply(op, &in, 1, a, out) < 0) {
    om__scope_end(&s);
    return NULL;
  }
  for (int j = 0; one && j < 2; j++) {
    om_tensor *b = om__keep(&s, out[j]);
    out[j] = b ? om_squeeze(b, (int64_t[]){0}, 1) : NULL;
  }
  om__scope_end(&s);
  if (!out[0] || !out[1]) {
    om_tensor_release(out[0]);
    om_tensor_release(out[1]);
    return NULL;
  }
  if (indices) *indices = out[1];
  else om_tensor_release(out[1]);
  return out[0];
}

om_tensor *om_adaptive_max_pool2d(om_tensor *x, const int64_t output_size[2], om_tensor **indices) {
  om_attrs a = {.n_i = 2, .i = {output_size[0], output_size[1]}};
  return adaptive_max(OM_OP_adaptive_max_pool2d, x, &a, 4, indices);
}

om_tensor *om_adaptive_max_pool3d(om_tensor *x, const int64_t output_size[3], om_tensor **indices) {
  om_attrs a = {.n_i = 3, .i = {output_size[0], output_size[1], output_size[2]}};
  return adaptive_max(OM_OP_adaptive_max_pool3d, x, &a, 5, indices);
}

/* ---- unfold (im2col) and fold (col2im), torch.nn.functional's, 4-D (3-D: a batch of one) ----
 *   unfold   x [N, C, H, W]            -> [N, C*kH*kW, L]   every block as a column (L blocks, row-major)
 *   fold     x [N, C*kH*kW, L], (H, W) -> [N, C, H, W]      unfold's adjoint: each column summed back
 * attrs: unfold {kH, kW, dH, dW, pH, pW, sH, sW}; fold {H, W, then unfold's}. The kernels are the
 * convolutions' im2col and col2im; col2im sums the taps of each pixel in kernel order from zero,
 * PyTorch's col2im order, so fold's sums are its bits. Each is the other's backward. */

static const char *const block_names[4] = {"kernel_size", "dilation", "padding", "stride"};

/* The window of blocks of the given kernel, dilation, padding and stride (a[0..8)) over an
 * image h x w, checked: sizes positive (padding non-negative), at least one block per axis. */
static bool block_geometry(const char *who, const int64_t *a, int64_t h, int64_t w, win *g) {
  for (int k = 0; k < 4; k++) {
    int64_t least = k == 2 ? 0 : 1;
    if (a[2 * k] < least || a[2 * k + 1] < least)
      return om__fail(OM_ERR_INVALID_ARGUMENT, "%s: %s must be %s, got [%lld,%lld]", who, block_names[k], least ? "positive" : "non-negative",
                      (long long)a[2 * k], (long long)a[2 * k + 1]);
    if (a[2 * k] > INT32_MAX || a[2 * k + 1] > INT32_MAX)
      return om__fail(OM_ERR_INVALID_ARGUMENT, "%s: %s [%lld,%lld] is above 2^31-1", who, block_names[k], (long long)a[2 * k], (long long)a[2 * k + 1]);
  }
  *g = (win){.h = h, .w = w, .kh = a[0], .kw = a[1], .dh = a[2], .dw = a[3], .ph = a[4], .pw = a[5], .sh = a[6], .sw = a[7]};
  /* h, w < 2^62 (a tensor's sizes) and every attribute < 2^31: no term overflows */
  g->oh = floor_div(h + 2 * g->ph - g->dh * (g->kh - 1) - 1, g->sh) + 1;
  g->ow = floor_div(w + 2 * g->pw - g->dw * (g->kw - 1) - 1, g->sw) + 1;
  if (g->oh < 1 || g->ow < 1)
    return om__fail(OM_ERR_SHAPE_MISMATCH, "%s: no %lldx%lld block (dilation [%lld,%lld]) fits in a [%lld,%lld] input padded by [%lld,%lld]",
                    who, (long long)g->kh, (long long)g->kw, (long long)g->dh, (long long)g->dw, (long long)h, (long long)w,
                    (long long)g->ph, (long long)g->pw);
  return true;
}

/* The input's dtype and rank, as both ops check them, and PyTorch's rule that only the batch
 * may be empty. */
static bool block_input(const char *who, const om_tensor *x, int ndim, const char *form) {
  if (x->dtype != OM_FLOAT32) return om__fail(OM_ERR_DTYPE_MISMATCH, "%s: takes float32, not %s", who, om_dtype_name(x->dtype));
  char buf[OM_SHAPE_STR_LEN];
  if (x->ndim != ndim)
    return om__fail(OM_ERR_SHAPE_MISMATCH, "%s: input must be %s, got %s", who, form, om__shape_str(buf, sizeof buf, x->shape, x->ndim));
  for (int d = 1; d < ndim; d++)
    if (!x->shape[d])
      return om__fail(OM_ERR_SHAPE_MISMATCH, "%s: input must be %s with non-zero dimensions other than the batch, got %s", who, form,
                      om__shape_str(buf, sizeof buf, x->shape, x->ndim));
  return true;
}

static bool infer_unfold(om_call *c) {
  const om_tensor *x = c->in[0];
  win g;
  if (c->attrs.n_i != 8) return om__fail(OM_ERR_INVALID_ARGUMENT, "unfold: takes 8 int attributes, got %d", c->attrs.n_i);
  if (!block_input("unfold", x, 4, "[N, C, H, W] or [C, H, W]") || !block_geometry("unfold", c->attrs.i, x->shape[2], x->shape[3], &g)) return false;
  int64_t rows, cols;
  if (__builtin_mul_overflow(x->shape[1], g.kh * g.kw, &rows) || __builtin_mul_overflow(g.oh, g.ow, &cols))
    return om__fail(OM_ERR_INVALID_ARGUMENT, "unfold: %lld channels of %lldx%lld blocks, %lld x %lld of them, do not fit in 64 bits",
                    (long long)x->shape[1], (long long)g.kh, (long long)g.kw, (long long)g.oh, (long long)g.ow);
  c->out_meta[0] = (om_meta){.dtype = OM_FLOAT32, .ndim = 3, .shape = {x->shape[0], rows, cols}};
  return true;
}

static bool infer_fold(om_call *c) {
  const om_tensor *x = c->in[0];
  const int64_t *a = c->attrs.i;
  win g;
  if (c->attrs.n_i != 10) return om__fail(OM_ERR_INVALID_ARGUMENT, "fold: takes 10 int attributes, got %d", c->attrs.n_i);
  if (a[0] < 1 || a[1] < 1 || a[0] > INT32_MAX || a[1] > INT32_MAX)
    return om__fail(OM_ERR_INVALID_ARGUMENT, "fold: output_size must be positive (and below 2^31), got [%lld,%lld]", (long long)a[0], (long long)a[1]);
  if (!block_input("fold", x, 3, "[N, C * kH * kW, L] or [C * kH * kW, L]") || !block_geometry("fold", a + 2, a[0], a[1], &g)) return false;
  int64_t k = g.kh * g.kw; /* below 2^62 */
  if (x->shape[1] % k)
    return om__fail(OM_ERR_SHAPE_MISMATCH, "fold: input's %lld rows are not a multiple of the kernel's %lld elements", (long long)x->shape[1], (long long)k);
  int64_t blocks;
  if (__builtin_mul_overflow(g.oh, g.ow, &blocks) || x->shape[2] != blocks)
    return om__fail(OM_ERR_SHAPE_MISMATCH, "fold: input has %lld blocks; output_size [%lld,%lld] gives %lld x %lld", (long long)x->shape[2],
                    (long long)a[0], (long long)a[1], (long long)g.oh, (long long)g.ow);
  c->out_meta[0] = (om_meta){.dtype = OM_FLOAT32, .ndim = 4, .shape = {x->shape[0], x->shape[1] / k, a[0], a[1]}};
  return true;
}

/* Image by image: unfold's columns are im2col's rows, fold's image col2im's sums from zero. */
static bool forward_blocks(om_call *c) {
  bool folding = c->op == OM_OP_fold, owned;
  const om_tensor *x = c->in[0], *o = c->out[0];
  const om_tensor *img = folding ? o : x;
  win g;
  block_geometry(om_op_name(c->op), c->attrs.i + (folding ? 2 : 0), img->shape[2], img->shape[3], &g);
  const float *src = dense(x, &owned, om_op_name(c->op));
  if (!src) return false;
  float *dst = (float *)om__data(o);
  int64_t ch = img->shape[1], plane = ch * g.h * g.w, cols = ch * g.kh * g.kw * g.oh * g.ow;
  if (folding) memset(dst, 0, sizeof(float) * (size_t)om_tensor_numel(o));
  for (int64_t n = 0; n < img->shape[0]; n++) {
    if (folding) col2im(src + n * cols, ch, &g, dst + n * plane, g.oh * g.ow);
    else im2col(src + n * plane, ch, &g, 0, g.oh, dst + n * cols, g.oh * g.ow);
  }
  if (owned) free((void *)src);
  return true;
}

/* Each is the other's adjoint: unfold's input gradient folds g back, fold's unfolds it. */
static bool blocks_backward(const om_record *r, om_tensor *const *g, om_tensor **gin) {
  const om_tensor *x = r->in[0];
  om_attrs a = {.n_i = r->op == OM_OP_fold ? 8 : 10};
  if (r->op == OM_OP_fold) {
    memcpy(a.i, r->attrs.i + 2, sizeof(int64_t) * 8);
  } else {
    a.i[0] = x->shape[2], a.i[1] = x->shape[3];
    memcpy(a.i + 2, r->attrs.i, sizeof(int64_t) * 8);
  }
  return (gin[0] = om__apply1(r->op == OM_OP_fold ? OM_OP_unfold : OM_OP_fold, g, 1, &a)) != NULL;
}

/* One strided Slice of the padded input per kernel offset (ends counted from the end, so the
 * lowering holds for every H and W), each Unsqueezed at axis 2 and all Concatenated there
 * ([N, C, kH*kW, oh, ow]), then Reshaped to [N, C*kH*kW, L]: exact (the values are copied). */
static bool lower_unfold(om_lower *l, const om_call *c) {
  int empty = om__lower_empty(l, c);
  if (empty) return empty > 0;
  const om_tensor *x = c->in[0];
  win g;
  if (!block_geometry("unfold", c->attrs.i, x->shape[2], x->shape[3], &g)) return false;
  int v = om__lower_input(l, 0), two = om__lower_ints(l, (int64_t[]){2}, 1), axes = om__lower_ints(l, (int64_t[]){2, 3}, 2);
  int steps = om__lower_ints(l, (int64_t[]){g.sh, g.sw}, 2);
  if (v < 0 || two < 0 || axes < 0 || steps < 0) return false;
  om_meta padded = {.dtype = OM_FLOAT32, .ndim = 4, .shape = {x->shape[0], x->shape[1], g.h + 2 * g.ph, g.w + 2 * g.pw}};
  if (g.ph || g.pw) {
    int pads = om__lower_ints(l, (int64_t[]){0, 0, g.ph, g.pw, 0, 0, g.ph, g.pw}, 8);
    if (pads < 0 || !om__emit(l, "Pad", (int[]){v, pads}, 2, &padded, 1, &v, NULL, 0)) return false;
  }
  int64_t kk = g.kh * g.kw;
  int *pieces = om__alloc(sizeof(int) * (uint64_t)kk, "unfold");
  if (!pieces) return false;
  om_meta piece = {.dtype = OM_FLOAT32, .ndim = 4, .shape = {x->shape[0], x->shape[1], g.oh, g.ow}}, one = piece;
  one.ndim = 5, one.shape[2] = 1, one.shape[3] = g.oh, one.shape[4] = g.ow;
  bool ok = true;
  for (int64_t i = 0; ok && i < g.kh; i++)
    for (int64_t j = 0; ok && j < g.kw; j++) {
      /* the last offset's end is the axis's end; an earlier one ends (k - 1 - i) * d before it */
      int64_t starts[2] = {i * g.dh, j * g.dw}, ends[2] = {i == g.kh - 1 ? INT64_MAX : -(g.kh - 1 - i) * g.dh,
                                                             j == g.kw - 1 ? INT64_MAX : -(g.kw - 1 - j) * g.dw};
      int s = om__lower_ints(l, starts, 2), e = om__lower_ints(l, ends, 2), sl, *p = &pieces[i * g.kw + j];
      ok = s >= 0 && e >= 0 && om__emit(l, "Slice", (int[]){v, s, e, axes, steps}, 5, &piece, 1, &sl, NULL, 0) &&
           om__emit(l, "Unsqueeze", (int[]){sl, two}, 2, &one, 1, p, NULL, 0);
    }
  om_meta stacked = one;
  stacked.shape[2] = kk;
  int cat, ext[3] = {om__lower_out_ext(l, 0, 0), om__lower_out_ext(l, 0, 1), om__lower_out_ext(l, 0, 2)}, shape, out;
  ok = ok && kk <= INT32_MAX && om__emit(l, "Concat", pieces, (int)kk, &stacked, 1, &cat, &OM_ATTR_INT("axis", 2), 1) &&
       (shape = om__lower_shape_operand(l, c->out_meta[0].shape, ext, 3)) >= 0 &&
       om__emit(l, "Reshape", (int[]){cat, shape}, 2, &c->out_meta[0], 1, &out, NULL, 0);
  free(pieces);
  if (ok) om__lower_output(l, 0, out);
  return ok;
}

/* The blocks' count L = oh * ow, each a floor division of a padded side (the probe checks it). */
static bool unfold_extents(om_lower *l, const om_call *c) {
  const int64_t *a = c->attrs.i;
  int side[2];
  for (int d = 0; d < 2; d++) {
    int span = om__lower_x_lin(l, 1, om__lower_in_x(l, 0, 2 + d), 0, -1, 2 * a[4 + d] - a[2 + d] * (a[d] - 1) - 1);
    int q = span >= 0 ? om__lower_x_floordiv(l, span, a[6 + d]) : -1;
    if ((side[d] = q >= 0 ? om__lower_x_lin(l, 1, q, 0, -1, 1) : -1) < 0) return false;
  }
  int x = om__lower_x_mul(l, side[0], side[1]);
  if (x < 0) return false;
  om__lower_candidate(l, 0, 2, x);
  return true;
}

/* The image's sides are output_size, which a model computes from its input's (F.fold(cols,
 * x.shape.slice(-2), ...) on a symbolic H, W: each an expression). */
static bool fold_extents(om_lower *l, const om_call *c) {
  (void)c;
  for (int d = 0; d < 2; d++) om__lower_candidate(l, 0, 2 + d, om__lower_arg(l, d));
  return true;
}

/* Col2Im (opset 18) with the image and block shapes as inputs (the image's computed in the graph
 * where output_size moves with the sizes). */
static bool lower_fold(om_lower *l, const om_call *c) {
  int empty = om__lower_empty(l, c);
  if (empty) return empty > 0;
  const int64_t *a = c->attrs.i;
  int64_t dil[2] = {a[4], a[5]}, pads[4] = {a[6], a[7], a[6], a[7]}, strides[2] = {a[8], a[9]};
  om_gattr at[3] = {OM_ATTR_INTS("dilations", dil, 2), OM_ATTR_INTS("pads", pads, 4), OM_ATTR_INTS("strides", strides, 2)};
  int side[2];
  for (int d = 0; d < 2; d++) side[d] = om__lower_arg_moves(l, d) ? om__lower_arg(l, d) : -1;
  int in[3] = {om__lower_input(l, 0), om__lower_shape_operand(l, a, side, 2), om__lower_ints(l, a + 2, 2)}, out;
  if (in[0] < 0 || in[1] < 0 || in[2] < 0 || !om__emit(l, "Col2Im", in, 3, c->out_meta, 1, &out, at, 3)) return false;
  om__lower_output(l, 0, out);
  return true;
}

/* Only the batch may be empty (PyTorch's rule; fold's other empty variants do not fit at their
 * twin sizes either: rows not a multiple of the kernel's, or not its blocks). */
const om_op_def om__op_unfold = {
    .name = "unfold", .n_in = 1, .n_out = 1, .infer = infer_unfold, .forward = forward_blocks, .backward = blocks_backward,
    .lower = lower_unfold, .extents = unfold_extents, .onnx = "Pad, a Slice and Unsqueeze per kernel offset, Concat, Reshape (exact)",
    .test = {.n_in = 1, .ndims = {4}, .shapes = {{2, 3, 5, 6}}, .lo = -2, .hi = 2, .attrs = {.n_i = 8, .i = {2, 3, 1, 2, 1, 0, 2, 1}},
             .empty_refusal = "non-zero dimensions other than the batch"}};

const om_op_def om__op_fold = {
    .name = "fold", .n_in = 1, .n_out = 1, .infer = infer_fold, .forward = forward_blocks, .backward = blocks_backward,
    .lower = lower_fold, .extents = fold_extents, .sym_args = 1 << 0 | 1 << 1, .onnx = "Col2Im",
    .test = {.n_in = 1, .ndims = {3}, .shapes = {{2, 8, 30}}, .lo = -2, .hi = 2, .attrs = {.n_i = 10, .i = {4, 5, 2, 2, 1, 1, 1, 1, 1, 1}}}};

om_tensor *om_unfold(om_tensor *x, const int64_t kernel[2], const int64_t dilation[2], const int64_t padding[2], const int64_t stride[2]) {
  if (!kernel || !dilation || !padding || !stride) return om__fail(OM_ERR_INVALID_ARGUMENT, "unfold: NULL size argument"), NULL;
  om_attrs a = {.n_i = 8, .i = {kernel[0], kernel[1], dilation[0], dilation[1], padding[0], padding[1], stride[0], stride[1]}};
  return apply_maybe_unbatched(OM_OP_unfold, &x, 1, &a, 4);
}

om_tensor *om_fold(om_tensor *x, const int64_t output_size[2], const int64_t kernel[2], const int64_t dilation[2], const int64_t padding[2],
                   const int64_t stride[2]) {
  if (!output_size || !kernel || !dilation || !padding || !stride) return om__fail(OM_ERR_INVALID_ARGUMENT, "fold: NULL size argument"), NULL;
  om_attrs a = {.n_i = 10, .i = {output_size[0], output_size[1], kernel[0], kernel[1], dilation[0], dilation[1], padding[0], padding[1],
                                 stride[0], stride[1]}};
  return apply_maybe_unbatched(OM_OP_fold, &x, 1, &a, 3);
}
