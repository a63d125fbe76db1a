/* Strided iteration over broadcast operands: the one loop every elementwise kernel, copy and
 * conversion runs inside. Kernels only write the inner loop over one run of elements. */
#include <string.h>

#include "internal.h"

/* The iteration space after merging: nd dims (at least one) of sizes sh, byte strides st[k] per
 * operand; the last dim is the inner loop's run. */
typedef struct runs {
  int nops, nd;
  int64_t sh[OM_MAX_DIMS + 1], st[8][OM_MAX_DIMS + 1];
} runs;

/* Merges dim d into the run of dim d+1 where every operand steps through both as one, and drops
 * size-1 dims. False for an empty shape (nothing to run). */
static bool merge_dims(int nops, int64_t strides[][OM_MAX_DIMS], const int64_t *shape, int ndim, runs *r) {
  int nd = 0;
  r->nops = nops;
  for (int d = 0; d < ndim; d++) {
    if (shape[d] == 0) return false;
    if (shape[d] == 1) continue;
    bool merge = nd > 0;
    for (int k = 0; k < nops && merge; k++) merge = r->st[k][nd - 1] == strides[k][d] * shape[d];
    if (merge) {
      r->sh[nd - 1] *= shape[d];
      for (int k = 0; k < nops; k++) r->st[k][nd - 1] = strides[k][d];
    } else {
      r->sh[nd] = shape[d];
      for (int k = 0; k < nops; k++) r->st[k][nd] = strides[k][d];
      nd++;
    }
  }
  if (nd == 0) { /* a single element */
    r->sh[0] = 1;
    for (int k = 0; k < nops; k++) r->st[k][0] = 0;
    nd = 1;
  }
  r->nd = nd;
  return true;
}

static void run_loops(const runs *r, char *const *base, om_loop_fn fn, const void *ctx) {
  int nops = r->nops, nd = r->nd;
  int64_t inner[8], idx[OM_MAX_DIMS] = {0};
  char *p[8];
  for (int k = 0; k < nops; k++) inner[k] = r->st[k][nd - 1];
  if (nd == 1) {
    for (int k = 0; k < nops; k++) p[k] = base[k];
    fn(p, inner, r->sh[0], ctx);
    return;
  }
  /* The runs along dim nd - 2 in a tight loop, their pointers stepped (short runs: a head's 4
   * values in a permuted copy, a mask row sliced from a larger buffer); the dims above by index. */
  int64_t rows = r->sh[nd - 2], step[8];
  for (int k = 0; k < nops; k++) step[k] = r->st[k][nd - 2];
  for (;;) {
    for (int k = 0; k < nops; k++) {
      p[k] = base[k];
      for (int d = 0; d < nd - 2; d++) p[k] += idx[d] * r->st[k][d];
    }
    for (int64_t i = 0; i < rows; i++) { /* the first four operands stepped without a loop: a run may be 4 values */
      fn(p, inner, r->sh[nd - 1], ctx);
      p[0] += step[0];
      if (nops > 1) p[1] += step[1];
      if (nops > 2) p[2] += step[2];
      if (nops > 3) p[3] += step[3];
      for (int k = 4; k < nops; k++) p[k] += step[k];
    }
    int d = nd - 3;
    while (d >= 0 && ++idx[d] == r->sh[d]) idx[d--] = 0;
    if (d < 0) return;
  }
}

void om__iterate(int nops, char **base, int64_t strides[][OM_MAX_DIMS], const int64_t *shape,
                 int ndim, om_loop_fn fn, const void *ctx) {
  runs r;
  if (merge_dims(nops, strides, shape, ndim, &r)) run_loops(&r, base, fn, ctx);
}

/* Elements of a single run (one merged dim) a part starts on a multiple of: so a part's run is
 * chunked as the whole run would be (ARRAY_LOOP's chunks of 64, math.c's groups of 4). */
#define RUN_UNIT 64

/* om__iterate_each on the pool: part p runs units [p units / parts, (p + 1) units / parts) of
 * merged dim d (of RUN_UNIT elements where that dim is the only one). */
typedef struct each_job {
  const runs *r;
  char *const *base;
  om_loop_fn fn;
  const void *ctx;
  int d;
  int64_t units, parts, unit;
} each_job;

static void each_part(void *ctx, int64_t part, int worker) {
  (void)worker;
  const each_job *j = ctx;
  int64_t lo = part * j->units / j->parts * j->unit, hi = (part + 1) * j->units / j->parts * j->unit;
  runs r = *j->r;
  char *base[8];
  if (hi > r.sh[j->d]) hi = r.sh[j->d];
  r.sh[j->d] = hi - lo;
  for (int k = 0; k < r.nops; k++) base[k] = j->base[k] + lo * r.st[k][j->d];
  run_loops(&r, base, j->fn, j->ctx);
}

void om__iterate_each(int nops, char **base, int64_t strides[][OM_MAX_DIMS], const int64_t *shape, int ndim,
                      om_loop_fn fn, const void *ctx, double cost) {
  runs r;
  if (!merge_dims(nops, strides, shape, ndim, &r)) return;
  double n = 1;
  for (int d = 0; d < r.nd; d++) n *= (double)r.sh[d];
  /* the split: the outermost dim along which operand 0 steps, so that each of its elements is
   * written by one part (a reduction's accumulator does not step along the reduced dims) */
  each_job j = {.r = &r, .base = base, .fn = fn, .ctx = ctx, .d = 0};
  while (j.d < r.nd && r.st[0][j.d] == 0) j.d++;
  int threads = 1;
  if (j.d < r.nd) {
    j.unit = r.nd == 1 ? RUN_UNIT : 1;
    j.units = (r.sh[j.d] + j.unit - 1) / j.unit;
    threads = om__job_threads(n * cost, j.units);
  }
  if (threads == 1) {
    run_loops(&r, base, fn, ctx);
    return;
  }
  j.parts = om__few_parts(j.units, threads);
  om__parallel(j.parts, threads, each_part, &j);
}

void om__broadcast_strides(const om_tensor *t, int ndim, int64_t *out) {
  int64_t es = (int64_t)om__dtype_size(t->dtype);
  int lead = ndim - t->ndim;
  for (int d = 0; d < ndim; d++) {
    int s = d - lead;
    out[d] = s < 0 || t->shape[s] == 1 ? 0 : t->strides[s] * es;
  }
}

bool om__broadcast_shapes(om_tensor *const *ts, int n, om_meta *meta, const char *who) {
  int nd = 0;
  for (int k = 0; k < n; k++) nd = ts[k]->ndim > nd ? ts[k]->ndim : nd;
  meta->ndim = nd;
  for (int d = 0; d < nd; d++) {
    int64_t size = 1;
    for (int k = 0; k < n; k++) {
      int s = d - (nd - ts[k]->ndim);
      if (s < 0) continue;
      int64_t v = ts[k]->shape[s];
      if (v == size || v == 1) continue;
      if (size != 1) {
        char a[OM_SHAPE_STR_LEN], b[OM_SHAPE_STR_LEN];
        return om__fail(OM_ERR_SHAPE_MISMATCH, "%s: shapes %s and %s do not broadcast (%lld vs %lld at dim %d)",
                        who, om__shape_str(a, sizeof a, ts[0]->shape, ts[0]->ndim),
                        om__shape_str(b, sizeof b, ts[k]->shape, ts[k]->ndim), (long long)size, (long long)v, d);
      }
      size = v;
    }
    meta->shape[d] = size;
  }
  return true;
}

/* ---- conversion copy: dst[i] = (dst dtype) src[i] ---- */

/* float -> int64 truncates toward zero like a C cast, with NaN -> 0 and saturation instead of UB. */
static inline int64_t om__f64_to_i64(double v) {
  if (v != v) return 0;
  if (v >= 0x1p63) return INT64_MAX;
  if (v < -0x1p63) return INT64_MIN;
  return (int64_t)v;
}

#define CONVERT_LOOP(TD, TS, EXPR)                                   \
  for (int64_t i = 0; i < n; i++) {                                  \
    TS v = *(const TS *)(p[1] + i * s[1]);                           \
    *(TD *)(p[0] + i * s[0]) = (TD)(EXPR);                           \
  }

/* A copy of 4-byte elements (float32). A contiguous run of at most 8 (a head's 4 to 8 values in
 * a permuted copy) is moved as its first and last 4 (or for fewer than 4, its first, middle and
 * last element), every read before any write as memmove does (runs may overlap); a call of
 * memmove (wasm's memory.copy, a call out of the module in V8) cost more than the copy. A
 * longer run is one memmove. */
static void copy4(char **p, const int64_t *s, int64_t n, const void *ctx) {
  (void)ctx;
  if (s[0] != 4 || s[1] != 4) {
    for (int64_t i = 0; i < n; i++) memcpy(p[0] + i * s[0], p[1] + i * s[1], 4);
  } else if (n > 8) {
    memmove(p[0], p[1], (size_t)n * 4);
  } else if (n >= 4) { /* fixed-size memcpy: one vector load or store each */
    char head[16], tail[16], *last = p[0] + (n - 4) * 4;
    memcpy(head, p[1], 16), memcpy(tail, p[1] + (n - 4) * 4, 16);
    memcpy(p[0], head, 16), memcpy(last, tail, 16);
  } else if (n > 0) {
    char first[4], mid[4], last[4];
    memcpy(first, p[1], 4), memcpy(mid, p[1] + n / 2 * 4, 4), memcpy(last, p[1] + (n - 1) * 4, 4);
    memcpy(p[0], first, 4), memcpy(p[0] + n / 2 * 4, mid, 4), memcpy(p[0] + (n - 1) * 4, last, 4);
  }
}

static void convert(char **p, const int64_t *s, int64_t n, const void *ctx) {
  const om_dtype *dt = ctx; /* dt[0] destination, dt[1] source */
  if (dt[0] == dt[1]) {
    size_t es = om__dtype_size(dt[0]);
    if (s[0] == (int64_t)es && s[1] == (int64_t)es) {
      memmove(p[0], p[1], (size_t)n * es);
      return;
    }
    for (int64_t i = 0; i < n; i++) memcpy(p[0] + i * s[0], p[1] + i * s[1], es);
    return;
  }
  switch (dt[0] * 4 + dt[1]) { /* float64 -> float32 and int64 -> a float round to nearest even */
    case OM_FLOAT32 * 4 + OM_INT64: CONVERT_LOOP(float, int64_t, v) break;
    case OM_FLOAT32 * 4 + OM_BOOL: CONVERT_LOOP(float, uint8_t, v) break;
    case OM_FLOAT32 * 4 + OM_FLOAT64: CONVERT_LOOP(float, double, v) break;
    case OM_INT64 * 4 + OM_FLOAT32: CONVERT_LOOP(int64_t, float, om__f64_to_i64(v)) break;
    case OM_INT64 * 4 + OM_BOOL: CONVERT_LOOP(int64_t, uint8_t, v) break;
    case OM_INT64 * 4 + OM_FLOAT64: CONVERT_LOOP(int64_t, double, om__f64_to_i64(v)) break;
    case OM_BOOL * 4 + OM_FLOAT32: CONVERT_LOOP(uint8_t, float, v != 0) break;
    case OM_BOOL * 4 + OM_INT64: CONVERT_LOOP(uint8_t, int64_t, v != 0) break;
    case OM_BOOL * 4 + OM_FLOAT64: CONVERT_LOOP(uint8_t, double, v != 0) break;
    case OM_FLOAT64 * 4 + OM_FLOAT32: CONVERT_LOOP(double, float, v) break;
    case OM_FLOAT64 * 4 + OM_INT64: CONVERT_LOOP(double, int64_t, v) break;
    case OM_FLOAT64 * 4 + OM_BOOL: CONVERT_LOOP(double, uint8_t, v) break;
  }
}

void om__copy_into(om_tensor *dst, const om_tensor *src) {
  int64_t st[2][OM_MAX_DIMS];
  om__broadcast_strides(dst, dst->ndim, st[0]);
  om__broadcast_strides(src, dst->ndim, st[1]);
  char *base[2] = {om__data(dst), om__data(src)};
  om_dtype dt[2] = {dst->dtype, src->dtype};
  om__iterate_each(2, base, st, dst->shape, dst->ndim, dt[0] == dt[1] && om__dtype_size(dt[0]) == 4 ? copy4 : convert, dt, OM_EACH_SIMPLE);
}
