/* Matrix product. C[M,N] = A[M,K] B[K,N] per batch, batch dims broadcast; operands may be any
 * strided view (transposes are not copied: packing reads them in place).
 *
 * The kernel is blocked like GotoBLAS:
 *   for jc in N by NC:                          one NC-wide column block of B and C
 *     for pc in K by KC:                        one KC-deep slice of the sum
 *       pack B[pc.., jc..] (KC x NC)            into NR-wide column panels (L2)
 *       for ic in M by MC:
 *         pack A[ic.., pc..] (MC x KC)          into MR-tall row panels
 *         for jr in NC by NR:                   one B panel (KC x NR, 8 KB: stays in L1)
 *           for ir in MC by MR:                 the A panels stream past it
 *             micro-kernel: C[MR x NR] (+)= A panel x B panel
 * The micro-kernel keeps its 4 x 8 tile of C in eight 4-float vectors; per k it loads two B
 * vectors and broadcasts four A values straight from memory (wasm v128.load32_splat, which V8
 * turns into vbroadcastss), then does 8 multiplies and 8 adds. That is 11 of the 16 SIMD
 * registers x86 has (V8 maps wasm SIMD onto xmm registers), so nothing spills; 6x8 and 4x12 tiles
 * (15 and 16 registers) and unrolling k by hand measured slower in WASM (docs/performance-log.md).
 * A product of at most DIRECT_N columns (a small model's Linear, a head's attention) packs no A
 * with contiguous rows: the same tiles read them in place, and B's too where its rows hold whole tiles, since a
 * value read once or twice costs less in place than copied first; an edge of at most 4 columns
 * runs a half-width tile (cols 4), which does half the multiplies of a zero-padded one.
 * Written with GCC/Clang vector extensions, the same source becomes SSE natively and SIMD128 in
 * WASM. There is no FMA (-ffp-contract=off), and every C element is summed in one fixed order:
 * from zero, k ascending within a KC block, and the KC blocks added to C in order. KC is a
 * compile-time constant, edge tiles run the same kernel (its first two rows where at most two
 * are left) on zero-padded panels, so native and WASM give the same bits and a row's result does
 * not depend on M, N or the batch. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

typedef float v4f __attribute__((vector_size(16), aligned(4)));

enum { MR = 4, NR = 8, KC = 256, MC = 64, NC = 512 };

/* Up to this many columns A (with contiguous rows) is read in place, not packed: each value of it
 * is read N / NR times. */
enum { DIRECT_N = 32 };

typedef struct strided { const float *p; int64_t rs, cs; } strided; /* element strides */

/* Packs rows [0, mc) x cols [0, kc) of A into MR-row panels: Ap[(panel*kc + k)*MR + i], with
 * rows past mc as zeros. */
static void pack_a(float *ap, strided a, int64_t mc, int64_t kc) {
  for (int64_t i0 = 0; i0 < mc; i0 += MR) {
    const float *r0 = a.p + i0 * a.rs;
    if (i0 + MR <= mc) { /* a full panel: four rows read side by side */
      const float *r1 = r0 + a.rs, *r2 = r1 + a.rs, *r3 = r2 + a.rs;
      for (int64_t k = 0, o = 0; k < kc; k++, o += a.cs, ap += MR) {
        ap[0] = r0[o];
        ap[1] = r1[o];
        ap[2] = r2[o];
        ap[3] = r3[o];
      }
    } else {
      for (int64_t k = 0; k < kc; k++)
        for (int64_t i = 0; i < MR; i++) *ap++ = i0 + i < mc ? r0[i * a.rs + k * a.cs] : 0.0f;
    }
  }
}

/* Four columns of four floats each (column q at p + q cs, contiguous) as four rows: r[k] holds
 * element k of each column (a 4 x 4 transpose in registers). */
static inline __attribute__((always_inline)) void transpose4(const float *p, int64_t cs, v4f r[4]) {
  v4f c0 = *(const v4f *)p, c1 = *(const v4f *)(p + cs), c2 = *(const v4f *)(p + 2 * cs), c3 = *(const v4f *)(p + 3 * cs);
  v4f lo01 = __builtin_shufflevector(c0, c1, 0, 4, 1, 5), hi01 = __builtin_shufflevector(c0, c1, 2, 6, 3, 7);
  v4f lo23 = __builtin_shufflevector(c2, c3, 0, 4, 1, 5), hi23 = __builtin_shufflevector(c2, c3, 2, 6, 3, 7);
  r[0] = __builtin_shufflevector(lo01, lo23, 0, 1, 4, 5), r[1] = __builtin_shufflevector(lo01, lo23, 2, 3, 6, 7);
  r[2] = __builtin_shufflevector(hi01, hi23, 0, 1, 4, 5), r[3] = __builtin_shufflevector(hi01, hi23, 2, 3, 6, 7);
}

/* Packs rows [0, kc) x cols [0, nc) of B into NR-column panels: Bp[(panel*kc + k)*NR + j], with
 * columns past nc as zeros. */
static void pack_b(float *bp, strided b, int64_t kc, int64_t nc) {
  for (int64_t j0 = 0; j0 < nc; j0 += NR) {
    const float *col = b.p + j0 * b.cs;
    if (j0 + NR <= nc && b.cs == 1) { /* a full panel of contiguous rows: two vector copies */
      for (int64_t k = 0; k < kc; k++, bp += NR) {
        const float *row = col + k * b.rs;
        *(v4f *)bp = *(const v4f *)row;
        *(v4f *)(bp + 4) = *(const v4f *)(row + 4);
      }
    } else if (j0 + NR <= nc && b.rs == 1) { /* a full panel of columns contiguous along k (B transposed: a Linear's weight) */
      int64_t k = 0;
      for (; k + 4 <= kc; k += 4) /* 4 k by 8 columns at a time: two 4 x 4 transposes in registers */
        for (int h = 0; h < 2; h++) {
          v4f r[4];
          transpose4(col + (4 * h) * b.cs + k, b.cs, r);
          float *d = bp + k * NR + 4 * h;
          for (int q = 0; q < 4; q++) *(v4f *)(d + q * NR) = r[q];
        }
      for (; k < kc; k++)
        for (int64_t j = 0; j < NR; j++) bp[k * NR + j] = col[j * b.cs + k];
      bp += kc * NR;
    } else {
      for (int64_t k = 0; k < kc; k++)
        for (int64_t j = 0; j < NR; j++) *bp++ = j0 + j < nc ? col[k * b.rs + j * b.cs] : 0.0f;
    }
  }
}

/* C[mr, nr] (+)= A rows [mr, kc] x a B panel [kc, NR]; c is row-major with row stride ldc.
 * A's value [i][k] is at a[k acs + ar[i]]: a packed panel (ar {0, 1, 2, 3}, acs MR) or A read
 * in place (ar[i] = i rows, rows past mr at row 0: their sums are not stored). The B panel is
 * packed (brs NR) or read in place (brs B's row stride), or with koff its row k is at bp +
 * koff[k] (8 floats that may run past the panel's nr columns: gemm_rows). With acc the
 * tile's sum is added to C (a later KC block), else it replaces C. rows (a constant: 4, or 2
 * for an edge of at most two rows) is how many rows are multiplied, cols (8, or 4 for an edge of
 * at most four columns) how many columns, so an edge costs half a tile; each C element is the
 * same sum either way. Inlined into each caller, so the packed loop has no test of koff and its
 * A offsets are constants. */
static inline __attribute__((always_inline)) void micro_tile(int kc, const float *a, const ptrdiff_t ar[MR], ptrdiff_t acs,
                                                            const float *bp, ptrdiff_t brs, const int64_t *koff, float *c,
                                                            int64_t ldc, int mr, int nr, bool acc, const int rows, const int cols) {
  v4f c00 = {0, 0, 0, 0}, c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00, c30 = c00, c31 = c00;
  const ptrdiff_t r1 = ar[1], r2 = ar[2], r3 = ar[3];
  for (int k = 0; k < kc; k++, a += acs) {
    const float *br = koff ? bp + koff[k] : bp + k * brs;
    v4f b0 = *(const v4f *)br, b1 = cols > 4 ? *(const v4f *)(br + 4) : b0;
    /* row i of the tile: broadcast A[i][k] and add its products with the columns of B[k] */
#define OM_TILE_ROW(r, x0, x1)                      \
  do {                                              \
    v4f av = {a[r], a[r], a[r], a[r]};              \
    x0 += av * b0;                                  \
    if (cols > 4) x1 += av * b1;                    \
  } while (0)
    OM_TILE_ROW(0, c00, c01);
    OM_TILE_ROW(r1, c10, c11);
    if (rows > 2) {
      OM_TILE_ROW(r2, c20, c21);
      OM_TILE_ROW(r3, c30, c31);
    }
#undef OM_TILE_ROW
  }
  if (nr == NR || nr == 4) { /* whole rows of 8 or of the 4 columns: vector stores */
#define OM_STORE_ROW(i, x0, x1)                         \
  if (i < mr) {                                         \
    v4f *row = (v4f *)(c + i * ldc);                    \
    row[0] = acc ? row[0] + x0 : x0;                    \
    if (nr == NR) row[1] = acc ? row[1] + x1 : x1;      \
  }
    OM_STORE_ROW(0, c00, c01);
    OM_STORE_ROW(1, c10, c11);
    if (rows > 2) {
      OM_STORE_ROW(2, c20, c21);
      OM_STORE_ROW(3, c30, c31);
    }
#undef OM_STORE_ROW
    return;
  }
  v4f t[MR][2] = {{c00, c01}, {c10, c11}, {c20, c21}, {c30, c31}};
  for (int i = 0; i < mr; i++) /* an edge tile's last columns */
    for (int j = 0; j < nr; j++) {
      float v = t[i][j / 4][j % 4];
      c[i * ldc + j] = acc ? c[i * ldc + j] + v : v;
    }
}

/* The tile for mr rows and nr columns: the fewest rows (2 or 4) and columns (4 or 8) that hold it. */
static inline __attribute__((always_inline)) void tile_for(int kc, const float *a, const ptrdiff_t ar[MR], ptrdiff_t acs,
                                                          const float *bp, ptrdiff_t brs, const int64_t *koff, float *c,
                                                          int64_t ldc, int mr, int nr, bool acc) {
  if (mr > 2 && nr > 4) micro_tile(kc, a, ar, acs, bp, brs, koff, c, ldc, mr, nr, acc, 4, 8);
  else if (mr > 2) micro_tile(kc, a, ar, acs, bp, brs, koff, c, ldc, mr, nr, acc, 4, 4);
  else if (nr > 4) micro_tile(kc, a, ar, acs, bp, brs, koff, c, ldc, mr, nr, acc, 2, 8);
  else micro_tile(kc, a, ar, acs, bp, brs, koff, c, ldc, mr, nr, acc, 2, 4);
}

/* A packed A panel's rows: MR floats apart for each k. */
static const ptrdiff_t PANEL_ROWS[MR] = {0, 1, 2, 3};

/* A tile from a packed A panel ap and a packed B panel bp. */
static void micro(int kc, const float *ap, const float *bp, float *c, int64_t ldc, int mr, int nr, bool acc) {
  tile_for(kc, ap, PANEL_ROWS, MR, bp, NR, NULL, c, ldc, mr, nr, acc);
}

/* A tile from A's rows read in place (row i at a + i ars, each contiguous; rows past mr at row
 * 0's, whose sums are not stored) and B's rows brs apart (packed: NR). */
static void micro_direct(int kc, const float *a, ptrdiff_t ars, const float *bp, ptrdiff_t brs, float *c, int64_t ldc, int mr, int nr,
                         bool acc) {
  ptrdiff_t ar[MR];
  for (int i = 0; i < MR; i++) ar[i] = (i < mr ? i : 0) * ars;
  tile_for(kc, a, ar, 1, bp, brs, NULL, c, ldc, mr, nr, acc);
}

/* A tile from a packed A panel ap and B's rows read in place at b + koff[k] (gemm_rows). */
static void micro_rows(int kc, const float *ap, const float *b, const int64_t *koff, float *c, int64_t ldc, int mr, int nr, bool acc) {
  tile_for(kc, ap, PANEL_ROWS, MR, b, 0, koff, c, ldc, mr, nr, acc);
}

/* C = A B (or C += A B) for fewer rows than a tile (a Linear on a batch of 1 to 3, a depthwise
 * convolution): B read in place, not packed (packing B costs as much as the product when each
 * value of it is used fewer than MR times), and each C element summed as micro sums it: from
 * zero, k ascending within a KC block, each block's sum added to C in order. B's row kk is at
 * b.p + kk b.rs, or with koff at b.p + koff[kk] (gemm_rows: 8 floats may be read past n);
 * C's rows are ldc apart. Inlined into each caller, so the strided loop has no test of koff. */
static inline __attribute__((always_inline)) void small_m_tile(strided a, strided b, const int64_t *koff, float *c, int64_t ldc,
                                                              int64_t m, int64_t n, int64_t k, bool acc) {
  for (int64_t i = 0; i < m; i++)
    for (int64_t j0 = 0; j0 < n; j0 += NR) {
      int nr = (int)(n - j0 < NR ? n - j0 : NR);
      float *cr = c + i * ldc + j0;
      for (int64_t pc = 0; pc < k; pc += KC) {
        int64_t kend = k - pc < KC ? k : pc + KC;
        v4f s0 = {0, 0, 0, 0}, s1 = s0;
        for (int64_t kk = pc; kk < kend; kk++) {
          float av = a.p[i * a.rs + kk * a.cs];
          v4f va = {av, av, av, av}, b0, b1;
          const float *br = koff ? b.p + koff[kk] + j0 : b.p + kk * b.rs + j0 * b.cs;
          if (koff || (nr == NR && b.cs == 1)) {
            b0 = *(const v4f *)br, b1 = *(const v4f *)(br + 4);
          } else {
            float t[NR];
            for (int jj = 0; jj < NR; jj++) t[jj] = jj < nr ? br[jj * b.cs] : 0.0f;
            memcpy(&b0, t, sizeof b0), memcpy(&b1, t + 4, sizeof b1);
          }
          s0 += va * b0;
          s1 += va * b1;
        }
        for (int jj = 0; jj < nr; jj++) {
          float v = jj < 4 ? s0[jj] : s1[jj - 4];
          cr[jj] = acc || pc > 0 ? cr[jj] + v : v;
        }
      }
    }
}

/* small_m_tile for a B whose columns are contiguous (b.rs 1: a Linear's weight [out, in] read as
 * Wᵀ), where small_m_tile would gather each k's 8 values one by one: each column's next four
 * values are loaded as a vector and each four columns' transposed, so each k is again one
 * broadcast multiply and add on the columns, the same sums in the same order (from zero, k
 * ascending within a KC block, the blocks added to C in order). g groups of four columns at a
 * time (a constant: 2, or 1 for the last four), the last n % 4 columns by small_m_tile. */
static inline __attribute__((always_inline)) void cols_tile(strided a, strided b, float *c, int64_t ldc, int64_t m, int64_t k,
                                                           bool acc, const int g) {
  for (int64_t pc = 0; pc < k; pc += KC) {
    int64_t kend = k - pc < KC ? k : pc + KC, kk = pc;
    v4f s[MR - 1][2] = {{{0, 0, 0, 0}, {0, 0, 0, 0}}, {{0, 0, 0, 0}, {0, 0, 0, 0}}, {{0, 0, 0, 0}, {0, 0, 0, 0}}};
    for (; kk + 4 <= kend; kk += 4) {
      v4f r[2][4];
      for (int h = 0; h < g; h++) transpose4(b.p + (4 * h) * b.cs + kk, b.cs, r[h]);
      for (int64_t i = 0; i < m; i++)
        for (int q = 0; q < 4; q++) {
          float av = a.p[i * a.rs + (kk + q) * a.cs];
          for (int h = 0; h < g; h++) s[i][h] += (v4f){av, av, av, av} * r[h][q];
        }
    }
    for (; kk < kend; kk++)
      for (int64_t i = 0; i < m; i++) {
        float av = a.p[i * a.rs + kk * a.cs];
        for (int h = 0; h < g; h++) {
          const float *col = b.p + (4 * h) * b.cs + kk;
          s[i][h] += (v4f){av, av, av, av} * (v4f){col[0], col[b.cs], col[2 * b.cs], col[3 * b.cs]};
        }
      }
    for (int64_t i = 0; i < m; i++)
      for (int jj = 0; jj < 4 * g; jj++) {
        float *cr = c + i * ldc + jj, v = s[i][jj / 4][jj % 4];
        *cr = acc || pc > 0 ? *cr + v : v;
      }
  }
}

/* cols_tile for one row of A (a Linear at batch 1, a recurrent step's h w_hhᵀ at batch 1),
 * 4 ROW_GROUPS columns at a time. cols_tile's two sums per row each wait for the add before (a
 * chain of dependent adds: one row ran at the adder's latency, not its rate); here the groups'
 * sums are independent of each other, each group's four k added in turn, written out so that
 * every sum stays in a register (8 groups spilled and measured slower natively). Each C element
 * is the same sum in the same order. Returns the columns done (the last n % (4 ROW_GROUPS) are
 * left to small_m_cols' tiles). */
enum { ROW_GROUPS = 4 };
static int64_t one_row_cols(strided a, strided b, float *c, int64_t n, int64_t k, bool acc) {
  int64_t j0 = 0;
  for (; j0 + 4 * ROW_GROUPS <= n; j0 += 4 * ROW_GROUPS)
    for (int64_t pc = 0; pc < k; pc += KC) {
      int64_t kend = k - pc < KC ? k : pc + KC, kk = pc;
      const float *col = b.p + j0 * b.cs;
      v4f s0 = {0, 0, 0, 0}, s1 = s0, s2 = s0, s3 = s0;
      for (; kk + 4 <= kend; kk += 4) {
        float x0 = a.p[kk * a.cs], x1 = a.p[(kk + 1) * a.cs], x2 = a.p[(kk + 2) * a.cs], x3 = a.p[(kk + 3) * a.cs];
        v4f a0 = {x0, x0, x0, x0}, a1 = {x1, x1, x1, x1}, a2 = {x2, x2, x2, x2}, a3 = {x3, x3, x3, x3}, r[4];
#define OM_ROW_GROUP(h, sum)                                \
  transpose4(col + (4 * (h)) * b.cs + kk, b.cs, r);         \
  sum += a0 * r[0];                                         \
  sum += a1 * r[1];                                         \
  sum += a2 * r[2];                                         \
  sum += a3 * r[3];
        OM_ROW_GROUP(0, s0)
        OM_ROW_GROUP(1, s1)
        OM_ROW_GROUP(2, s2)
        OM_ROW_GROUP(3, s3)
#undef OM_ROW_GROUP
      }
      for (; kk < kend; kk++) {
        float x = a.p[kk * a.cs];
        v4f ax = {x, x, x, x};
        const float *p = col + kk;
        s0 += ax * (v4f){p[0], p[b.cs], p[2 * b.cs], p[3 * b.cs]}, p += 4 * b.cs;
        s1 += ax * (v4f){p[0], p[b.cs], p[2 * b.cs], p[3 * b.cs]}, p += 4 * b.cs;
        s2 += ax * (v4f){p[0], p[b.cs], p[2 * b.cs], p[3 * b.cs]}, p += 4 * b.cs;
        s3 += ax * (v4f){p[0], p[b.cs], p[2 * b.cs], p[3 * b.cs]};
      }
      v4f *cr = (v4f *)(c + j0);
      bool add = acc || pc > 0;
      cr[0] = add ? cr[0] + s0 : s0;
      cr[1] = add ? cr[1] + s1 : s1;
      cr[2] = add ? cr[2] + s2 : s2;
      cr[3] = add ? cr[3] + s3 : s3;
    }
  return j0;
}

static void small_m_cols(strided a, strided b, float *c, int64_t ldc, int64_t m, int64_t n, int64_t k, bool acc) {
  int64_t j0 = m == 1 ? one_row_cols(a, b, c, n, k, acc) : 0;
  for (; j0 + 8 <= n; j0 += 8) cols_tile(a, (strided){b.p + j0 * b.cs, b.rs, b.cs}, c + j0, ldc, m, k, acc, 2);
  for (; j0 + 4 <= n; j0 += 4) cols_tile(a, (strided){b.p + j0 * b.cs, b.rs, b.cs}, c + j0, ldc, m, k, acc, 1);
  if (j0 < n) small_m_tile(a, (strided){b.p + j0 * b.cs, b.rs, b.cs}, NULL, c + j0, ldc, m, n - j0, k, acc);
}

static void small_m(strided a, strided b, float *c, int64_t ldc, int64_t m, int64_t n, int64_t k, bool acc) {
  if (b.rs == 1 && b.cs != 1) small_m_cols(a, b, c, ldc, m, n, k, acc);
  else small_m_tile(a, b, NULL, c, ldc, m, n, k, acc);
}

/* One KC slice (from k = pc, kc deep) of C[m, nc] (+)= A B: each MC block of A packed into ap
 * (or, with apk, the slice's panels packed beforehand: block ic at apk + ic kc, see pack_part),
 * then its tiles against B's NR-column panels, packed at bp (koff NULL) or B's rows read in place
 * at bp + koff[kk] (gemm_rows). Inlined into both callers, so gemm's has no test of koff. */
static inline __attribute__((always_inline)) void a_blocks(strided a, int64_t pc, int64_t kc, int64_t m, float *ap, const float *apk,
                                                          const float *bp, const int64_t *koff, float *c, int64_t ldc, int64_t nc,
                                                          bool acc) {
  for (int64_t ic = 0; ic < m; ic += MC) {
    int64_t mc = m - ic < MC ? m - ic : MC;
    const float *at = apk ? apk + ic * kc : ap;
    if (!apk) pack_a(ap, (strided){a.p + ic * a.rs + pc * a.cs, a.rs, a.cs}, mc, kc);
    for (int64_t jr = 0; jr < nc; jr += NR)
      for (int64_t ir = 0; ir < mc; ir += MR) {
        float *ct = c + (ic + ir) * ldc + jr;
        int mr = (int)(mc - ir < MR ? mc - ir : MR), nr = (int)(nc - jr < NR ? nc - jr : NR);
        if (koff) micro_rows((int)kc, at + ir * kc, bp + jr, koff, ct, ldc, mr, nr, acc);
        else micro((int)kc, at + ir * kc, bp + jr * kc, ct, ldc, mr, nr, acc);
      }
  }
}

/* One KC slice (from k = pc, kc deep) of C[m, nc] (+)= A B with A's contiguous rows read in
 * place, against B's NR-column panels (packed: b {bp, NR, kc}) or B's rows in place (b.cs 1). */
static void direct_blocks(strided a, int64_t pc, int64_t kc, int64_t m, strided b, float *c, int64_t ldc, int64_t nc, bool acc) {
  for (int64_t jr = 0; jr < nc; jr += NR)
    for (int64_t ir = 0; ir < m; ir += MR) {
      int mr = (int)(m - ir < MR ? m - ir : MR), nr = (int)(nc - jr < NR ? nc - jr : NR);
      micro_direct((int)kc, a.p + ir * a.rs + pc, (ptrdiff_t)a.rs, b.p + jr * b.cs, (ptrdiff_t)b.rs, c + ir * ldc + jr, ldc, mr, nr, acc);
    }
}

/* Whether gemm reads B's rows in place rather than packing them: A's rows read in place (at most
 * DIRECT_N columns, A not transposed) and B's rows holding whole tiles. */
static bool b_rows_in_place(strided a, strided b, int64_t n) {
  return n <= DIRECT_N && a.cs == 1 && b.cs == 1 && (n % NR == 0 || n % NR == 4);
}

/* v rounded up to a multiple of `to`: the rows (MR) or columns (NR) of an operand's packed panels. */
static int64_t round_up(int64_t v, int64_t to) { return (v + to - 1) / to * to; }

/* The floats of A packed whole (all its KC slices, each of m rows rounded up to MR) and of B
 * packed whole (each NC block's KC slices, n rounded up to NR), as pack_part lays them out. */
static int64_t packed_a_floats(int64_t m, int64_t k) { return round_up(m, MR) * k; }
static int64_t packed_b_floats(int64_t n, int64_t k) { return round_up(n, NR) * k; }

/* C[m, n] (+)= A B for fewer rows than a tile with B packed whole beforehand (om__gemm_pack_b:
 * each NC block's KC slices, NR-column panels with k ascending), a recurrent step's h w_hhᵀ at
 * batch 1 to 3 against the weight packed once per layer: each k of a panel is two contiguous
 * vectors, so there is no gather nor transpose per step (one_row_cols' shuffles bound it). Four
 * panels at a time (eight independent sums, a chain of adds each), then one at a time; each C
 * element summed as micro sums it: from zero, k ascending within a KC block, each block's sum
 * added to C in order. */
static inline __attribute__((always_inline)) void panels_row(const float *a, int64_t acs, const float *bq, int64_t kc, float *c, int nr,
                                                             bool add, const int g) {
  v4f s00 = {0, 0, 0, 0}, s01 = s00, s10 = s00, s11 = s00, s20 = s00, s21 = s00, s30 = s00, s31 = s00;
  const float *b0 = bq, *b1 = bq + kc * NR, *b2 = b1 + kc * NR, *b3 = b2 + kc * NR; /* the panels: kc NR floats each */
  for (int64_t kk = 0; kk < kc; kk++) {
    float x = a[kk * acs];
    v4f ax = {x, x, x, x};
    int64_t o = kk * NR;
    s00 += ax * *(const v4f *)(b0 + o), s01 += ax * *(const v4f *)(b0 + o + 4);
    if (g > 1) {
      s10 += ax * *(const v4f *)(b1 + o), s11 += ax * *(const v4f *)(b1 + o + 4);
      s20 += ax * *(const v4f *)(b2 + o), s21 += ax * *(const v4f *)(b2 + o + 4);
      s30 += ax * *(const v4f *)(b3 + o), s31 += ax * *(const v4f *)(b3 + o + 4);
    }
  }
  v4f t[8] = {s00, s01, s10, s11, s20, s21, s30, s31};
  for (int j = 0; j < nr; j++) {
    float v = t[j / 4][j % 4];
    c[j] = add ? c[j] + v : v;
  }
}

static void small_m_packed(strided a, const float *bpk, float *c, int64_t ldc, int64_t m, int64_t n, int64_t k, bool acc) {
  for (int64_t jc = 0; jc < n; jc += NC) {
    int64_t nc = n - jc < NC ? n - jc : NC;
    for (int64_t pc = 0; pc < k; pc += KC) {
      int64_t kc = k - pc < KC ? k - pc : KC;
      const float *bq = bpk + jc * k + pc * round_up(nc, NR);
      for (int64_t i = 0; i < m; i++) {
        const float *ar = a.p + i * a.rs + pc * a.cs;
        float *cr = c + i * ldc + jc;
        int64_t jr = 0;
        for (; jr + 4 * NR <= nc; jr += 4 * NR) panels_row(ar, a.cs, bq + jr * kc, kc, cr + jr, 4 * NR, acc || pc > 0, 4);
        for (; jr < nc; jr += NR) panels_row(ar, a.cs, bq + jr * kc, kc, cr + jr, (int)(nc - jr < NR ? nc - jr : NR), acc || pc > 0, 1);
      }
    }
  }
}

/* C (row stride ldc) = A B (or C += A B with acc) for one matrix pair, with scratch panels ap and
 * bp; apk or bpk (else NULL): A or B packed whole beforehand (pack_part), read instead of
 * packing its blocks again. */
static void gemm(strided a, strided b, float *c, int64_t ldc, int64_t m, int64_t n, int64_t k, float *ap, float *bp, const float *apk,
                 const float *bpk, bool acc) {
  if (m < MR && k > 0) {
    if (bpk) small_m_packed(a, bpk, c, ldc, m, n, k, acc);
    else small_m(a, b, c, ldc, m, n, k, acc);
    return;
  }
  if (k == 0) {
    for (int64_t i = 0; !acc && i < m; i++) memset(c + i * ldc, 0, sizeof(float) * (size_t)n);
    return;
  }
  /* A's rows read in place (a transposed A, its columns far apart, is packed; one packed whole is read packed) */
  bool direct = n <= DIRECT_N && a.cs == 1 && !apk;
  for (int64_t jc = 0; jc < n; jc += NC) {
    int64_t nc = n - jc < NC ? n - jc : NC;
    for (int64_t pc = 0; pc < k; pc += KC) {
      int64_t kc = k - pc < KC ? k - pc : KC;
      strided bk = {b.p + pc * b.rs + jc * b.cs, b.rs, b.cs};
      if (direct && b_rows_in_place(a, b, n)) { /* B's rows hold whole tiles: read in place */
        direct_blocks(a, pc, kc, m, bk, c + jc, ldc, nc, acc || pc > 0);
        continue;
      }
      const float *bq = bpk ? bpk + jc * k + pc * round_up(nc, NR) : bp;
      if (!bpk) pack_b(bp, bk, kc, nc);
      if (direct) direct_blocks(a, pc, kc, m, (strided){bq, NR, kc}, c + jc, ldc, nc, acc || pc > 0);
      else a_blocks(a, pc, kc, m, ap, apk ? apk + pc * round_up(m, MR) : NULL, bq, NULL, c + jc, ldc, nc, acc || pc > 0);
    }
  }
}

/* The product with B's rows read in place: C[m, n] (row stride ldc) = A[m, k] B with row kk of
 * B the n floats at b + koff[kk] (a stride-1 convolution's windows over a padded image: the
 * im2col matrix never made; om__gemm_on with koff), never accumulated; k > 0. A is packed as
 * gemm packs it into ap; B is not packed at all, each 8-column step of a row read straight from
 * the image, so every read may run up to 7 floats past the row's n (the caller's slack). Each C
 * element summed as gemm sums it (micro_tile, KC blocks), so this gives gemm's bits for the same
 * A and B. */
static void gemm_rows(strided a, const float *b, const int64_t *koff, float *c, int64_t ldc, int64_t m, int64_t n, int64_t k, float *ap,
                      const float *apk) {
  if (m < MR) { /* a depthwise convolution's one row: B read in place as small_m reads it */
    small_m_tile(a, (strided){b, 0, 1}, koff, c, ldc, m, n, k, false);
    return;
  }
  for (int64_t jc = 0; jc < n; jc += NC) /* NC columns at a time, as gemm: B's rows of a slice then stay in cache */
    for (int64_t pc = 0; pc < k; pc += KC)
      a_blocks(a, pc, k - pc < KC ? k - pc : KC, m, ap, apk ? apk + pc * round_up(m, MR) : NULL, b + jc, koff + pc, c + jc, ldc,
               n - jc < NC ? n - jc : NC, pc > 0);
}

/* The floats of A's and B's panels for an m x n x k product (A's only when B is read in place). */
static int64_t panel_floats(int64_t m, int64_t n, int64_t k, bool in_place, int64_t *a_floats) {
  int64_t kc = k < KC ? k : KC, ncp = round_up(n < NC ? n : NC, NR), mcp = round_up(m < MC ? m : MC, MR);
  *a_floats = mcp * kc;
  return mcp * kc + (in_place ? 0 : kc * ncp);
}

/* C = A B (or C += A B with acc) on the calling thread: B strided, or with koff its rows in
 * place (gemm_rows); scratch holds panel_floats floats; apk, bpk as gemm takes them. */
static void product(strided a, strided b, const int64_t *koff, float *c, int64_t ldc, int64_t m, int64_t n, int64_t k, bool acc,
                    float *scratch, const float *apk, const float *bpk) {
  int64_t a_floats;
  panel_floats(m, n, k, koff != NULL, &a_floats);
  if (koff && k > 0) gemm_rows(a, b.p, koff, c, ldc, m, n, k, scratch, apk);
  else gemm(a, b, c, ldc, m, n, k, scratch, scratch + a_floats, apk, bpk, acc);
}

int64_t om__gemm_scratch(int64_t m, int64_t n, int64_t k, bool in_place) {
  int64_t a_floats;
  return panel_floats(m, n, k, in_place, &a_floats);
}

void om__gemm_on(const float *a, int64_t ars, int64_t acs, const float *apk, const float *b, int64_t brs, int64_t bcs,
                 const int64_t *koff, float *c, int64_t ldc, int64_t m, int64_t n, int64_t k, float *scratch) {
  if (m > 0 && n > 0) product((strided){a, ars, acs}, (strided){b, brs, bcs}, koff, c, ldc, m, n, k, false, scratch, apk, NULL);
}

int64_t om__gemm_packed_b(int64_t n, int64_t k) { return packed_b_floats(n, k); }

void om__gemm_pack_b(const float *b, int64_t brs, int64_t bcs, int64_t n, int64_t k, float *bpk) {
  for (int64_t jc = 0; jc < n; jc += NC) {
    int64_t nc = n - jc < NC ? n - jc : NC;
    for (int64_t pc = 0; pc < k; pc += KC)
      pack_b(bpk + jc * k + pc * round_up(nc, NR), (strided){b + pc * brs + jc * bcs, brs, bcs}, k - pc < KC ? k - pc : KC, nc);
  }
}

void om__gemm_on_b(const float *a, int64_t ars, int64_t acs, const float *bpk, float *c, int64_t ldc, int64_t m, int64_t n, int64_t k,
                   float *scratch) {
  if (m > 0 && n > 0) product((strided){a, ars, acs}, (strided){NULL, 0, 0}, NULL, c, ldc, m, n, k, false, scratch, NULL, bpk);
}

/* ---- products on several threads ----
 * A job is `batches` products C_t = A_t B_t (C_t at c + t m n when there are several), each
 * split into `per` parts by columns of C (or by rows, where C is taller than wide): part p is
 * product p / per, block p % per. Every C element is summed in the same order whatever the
 * block (see the top of the file: small_m and gemm_rows sum as micro does), so the split changes
 * nothing in the bits, and it may depend on the thread count. */

/* Below this many multiply-adds a product is one part: waking the workers would cost more. */
#define PART_MACS ((double)(1 << 19))

/* Floats of panels a one-thread job keeps on the stack (8 KB): a small product's malloc and free
 * cost as much as its arithmetic. */
enum { SMALL_SCRATCH = 2048 };

/* The most blocks a product is split into (guided blocks on 4 threads make about 30). */
enum { MAX_BLOCKS = 64 };

int om__job_threads(double macs, int64_t parts) {
  int t = macs < 2 * PART_MACS ? 1 : om_get_num_threads();
  return parts < t ? (int)(parts < 1 ? 1 : parts) : t;
}

int64_t om__few_parts(int64_t units, int threads) { return units < 4 * (int64_t)threads ? units : 4 * (int64_t)threads; }

typedef struct gemm_job {
  strided a, b;
  float *c;
  int64_t m, n, k, ldc;
  bool acc;
  const int64_t *boff; /* per product: the offsets of A_t and B_t (NULL: one product, or A_t at a + t astep) */
  int64_t astep;
  int per;             /* blocks per product */
  bool by_rows;        /* blocks of rows of C, else of columns */
  int64_t unit;        /* the tile: MR rows or NR columns */
  int64_t bound[MAX_BLOCKS + 1]; /* block p is tiles [bound[p], bound[p + 1]) */
  int64_t step;        /* the most rows or columns a block has */
  float *apk, *bpk;    /* each product's A (column blocks) or B (row blocks) packed whole, or NULL */
  bool b_once;         /* every product's B is the same matrix (a weight under a batch of rows that do not flatten) */
  const float *bias;   /* added to each row of C after its sum (linear's), bias_stride apart, or NULL */
  int64_t bias_stride;
  float *scratch[OM_MAX_THREADS]; /* each thread's panels */
} gemm_job;

/* Splits each product of job j into j->per blocks of whole tiles. On one thread (or below
 * 2 PART_MACS) a product is one block. On t threads the blocks shrink as the product is used up
 * (guided self-scheduling: each block a 2t-th of the tiles left, at least PART_MACS / 2
 * multiply-adds): the threads take the blocks in order as they free up, so the large ones keep
 * the count of blocks small (each reads all of the shared packed operand again) and the small
 * last ones leave little for one thread to wait on when the machine slows the other. Equal
 * blocks left one thread idle for up to a block of 12 at the end: a tenth of the job at 512. */
static void split(gemm_job *j) {
  double macs = (double)j->m * (double)j->n * (double)j->k;
  int t = macs < 2 * PART_MACS ? 1 : om_get_num_threads();
  j->by_rows = j->m > j->n;
  int64_t len = j->by_rows ? j->m : j->n;
  j->unit = j->by_rows ? MR : NR;
  int64_t units = (len + j->unit - 1) / j->unit, least = t == 1 ? units : (om__gemm_least(j->by_rows ? j->n : j->m, j->k) + j->unit - 1) / j->unit;
  j->per = 0, j->bound[0] = 0;
  for (int64_t done = 0; done < units; j->bound[++j->per] = done) {
    int64_t size = t == 1 ? units : (units - done + 2 * t - 1) / (2 * t);
    if (size < least) size = least;
    if (size > units - done || j->per == MAX_BLOCKS - 1) size = units - done;
    done += size;
  }
  j->step = j->bound[1] * j->unit; /* the first block is the largest */
}

int64_t om__gemm_least(int64_t m, int64_t k) {
  double per_col = (double)m * (double)k;
  return per_col < 1 ? INT64_MAX / 4 : (int64_t)(PART_MACS / 2 / per_col) + 1; /* callers round it up to tiles or rows */
}

/* c [m, n] (row stride ldc) += bias [n] (stride apart) on every row: after the sum, as a separate
 * add would, so the bits are the same. */
static void add_bias(float *restrict c, int64_t ldc, int64_t m, int64_t n, const float *restrict bias, int64_t stride) {
  for (int64_t r = 0; r < m; r++, c += ldc)
    if (stride == 1) /* the usual bias: a loop the compiler turns into vectors */
      for (int64_t q = 0; q < n; q++) c[q] += bias[q];
    else
      for (int64_t q = 0; q < n; q++) c[q] += bias[q * stride];
}

static void gemm_part(void *ctx, int64_t part, int worker) {
  const gemm_job *j = ctx;
  int64_t t = part / j->per, p = part % j->per, len = j->by_rows ? j->m : j->n;
  int64_t lo = j->bound[p] * j->unit, hi = j->bound[p + 1] * j->unit;
  if (hi > len) hi = len;
  strided a = j->a, b = j->b;
  float *c = j->c + t * j->m * j->n;
  if (j->boff) a.p += j->boff[2 * t], b.p += j->boff[2 * t + 1];
  int64_t m = j->m, n = j->n;
  if (j->by_rows) a.p += lo * a.rs, c += lo * j->ldc, m = hi - lo;
  else b.p += lo * b.cs, c += lo, n = hi - lo;
  product(a, b, NULL, c, j->ldc, m, n, j->k, j->acc, j->scratch[worker], j->apk ? j->apk + t * packed_a_floats(j->m, j->k) : NULL,
          j->bpk ? j->bpk + (j->b_once ? 0 : t) * packed_b_floats(j->n, j->k) : NULL);
  if (j->bias) add_bias(c, j->ldc, m, n, j->bias + (j->by_rows ? 0 : lo * j->bias_stride), j->bias_stride);
}

/* Packing the operand that every block of a product would pack again (A for blocks of columns,
 * B for blocks of rows) costs as much per block as once for the whole product: at 512 x 512 x
 * 512 in 11 blocks the repeats were a tenth of the time. So a product split in blocks has that
 * operand packed whole first (a job of its own: part p packs one MC block or NC block of one KC
 * slice of one product), which the blocks then read. Not where no block would pack it (A's rows
 * or B's read in place, too few rows for a tile) nor past PACK_FLOATS (memory before speed: a
 * broadcast A, say, is packed once for each product). A B that every product shares (b_once)
 * is packed once for all of them, where each product is one block or blocks of rows: torch.onnx's
 * in-projection reads a [L, N, E] transpose of [N, L, E], whose rows do not flatten into one
 * product, and packed its weight once per token (ViT at batch 8: 65 times). */
#define PACK_FLOATS ((int64_t)1 << 24)

/* Below this many floats the shared operand is packed on the calling thread: waking the workers
 * for it cost more than the copy (a Linear of 256 tokens, 128 -> 512: 7 to 10% faster on 2 threads). */
#define SERIAL_PACK ((int64_t)1 << 17)

static void pack_part(void *ctx, int64_t part, int worker) {
  (void)worker;
  const gemm_job *j = ctx;
  int64_t slices = (j->k + KC - 1) / KC, blocks = j->apk ? (j->m + MC - 1) / MC : (j->n + NC - 1) / NC;
  int64_t t = part / (slices * blocks), s = part % slices, blk = part / slices % blocks, pc = s * KC, kc = j->k - pc < KC ? j->k - pc : KC;
  strided a = j->a, b = j->b;
  if (j->boff) a.p += j->boff[2 * t], b.p += j->boff[2 * t + 1];
  else a.p += t * j->astep;
  if (j->apk) {
    int64_t ic = blk * MC, mc = j->m - ic < MC ? j->m - ic : MC;
    pack_a(j->apk + t * packed_a_floats(j->m, j->k) + pc * round_up(j->m, MR) + ic * kc,
           (strided){a.p + ic * a.rs + pc * a.cs, a.rs, a.cs}, mc, kc);
  } else {
    int64_t jc = blk * NC, nc = j->n - jc < NC ? j->n - jc : NC;
    pack_b(j->bpk + t * packed_b_floats(j->n, j->k) + jc * j->k + pc * round_up(nc, NR),
           (strided){b.p + pc * b.rs + jc * b.cs, b.rs, b.cs}, kc, nc);
  }
}

int64_t om__gemm_packed(int64_t m, int64_t k, int64_t count) {
  int64_t floats;
  return m < MR || __builtin_mul_overflow(packed_a_floats(m, k), count, &floats) || floats > PACK_FLOATS ? 0 : floats;
}

void om__gemm_pack(const float *a, int64_t ars, int64_t acs, int64_t m, int64_t k, int64_t count, int64_t step, int threads, float *apk) {
  gemm_job j = {.a = {a, ars, acs}, .m = m, .k = k, .astep = step, .apk = apk};
  om__parallel(count * ((m + MC - 1) / MC) * ((k + KC - 1) / KC), om__gemm_packed(m, k, count) < SERIAL_PACK ? 1 : threads, pack_part, &j);
}

/* Packs the operand job j's blocks share (see PACK_FLOATS) on `threads` threads, if any;
 * false with OutOfMemory naming who. */
static bool pack_shared(gemm_job *j, int64_t batches, int threads, const char *who) {
  bool share_a = j->per > 1 && !j->by_rows && j->m >= MR;
  bool share_b = j->m >= MR && !b_rows_in_place(j->a, j->b, j->n) && (j->per > 1 ? j->by_rows : j->b_once);
  int64_t floats, blocks = share_a ? (j->m + MC - 1) / MC : (j->n + NC - 1) / NC, count = share_b && j->b_once ? 1 : batches;
  if (j->k == 0 || !(share_a || share_b) ||
      __builtin_mul_overflow(share_a ? packed_a_floats(j->m, j->k) : packed_b_floats(j->n, j->k), count, &floats) || floats > PACK_FLOATS)
    return true;
  float *p = om__scratch(OM_SCRATCH_SHARED, floats, who);
  if (!p) return false;
  *(share_a ? &j->apk : &j->bpk) = p;
  om__parallel(count * blocks * ((j->k + KC - 1) / KC), floats < SERIAL_PACK ? 1 : threads, pack_part, j);
  return true;
}

/* Runs a job of `batches` products on the pool, with panels for each thread taking part;
 * false with OutOfMemory naming who. */
static bool run_job(gemm_job *j, int64_t batches, const char *who) {
  if (j->m == 0 || j->n == 0 || batches == 0) return true;
  split(j);
  int threads = om__job_threads((double)batches * (double)j->m * (double)j->n * (double)j->k, batches * j->per);
  int64_t floats = om__gemm_scratch(j->by_rows ? j->step : j->m, j->by_rows ? j->n : j->step, j->k, false);
  float small[SMALL_SCRATCH]; /* a small product's panels on one thread: no malloc */
  bool ok = pack_shared(j, batches, threads, who), on_stack = threads == 1 && floats <= SMALL_SCRATCH;
  if (on_stack) j->scratch[0] = small;
  for (int i = 0; ok && !on_stack && i < threads; i++) ok = (j->scratch[i] = om__scratch(i, floats, who)) != NULL;
  if (ok) om__parallel(batches * j->per, threads, gemm_part, j);
  om__scratch_done();
  return ok;
}

/* om__gemm and om__gemm_acc: C = A B, or C += A B with acc. */
static bool gemm_call(const float *a, int64_t ars, int64_t acs, const float *b, int64_t brs, int64_t bcs, float *c,
                      int64_t m, int64_t n, int64_t k, bool acc, const char *who) {
  gemm_job j = {.a = {a, ars, acs}, .b = {b, brs, bcs}, .c = c, .m = m, .n = n, .k = k, .ldc = n, .acc = acc};
  return run_job(&j, 1, who);
}

bool om__gemm(const float *a, int64_t ars, int64_t acs, const float *b, int64_t brs, int64_t bcs, float *c,
              int64_t m, int64_t n, int64_t k, const char *who) {
  return gemm_call(a, ars, acs, b, brs, bcs, c, m, n, k, false, who);
}

bool om__gemm_acc(const float *a, int64_t ars, int64_t acs, const float *b, int64_t brs, int64_t bcs, float *c,
                  int64_t m, int64_t n, int64_t k, const char *who) {
  return gemm_call(a, ars, acs, b, brs, bcs, c, m, n, k, true, who);
}

static bool infer_matmul(om_call *c) {
  om_tensor *a = c->in[0], *b = c->in[1];
  char x[OM_SHAPE_STR_LEN], y[OM_SHAPE_STR_LEN];
  if (a->dtype != OM_FLOAT32 || b->dtype != OM_FLOAT32)
    return om__fail(OM_ERR_DTYPE_MISMATCH, "matmul: takes float32, not %s and %s", om_dtype_name(a->dtype), om_dtype_name(b->dtype));
  if (a->ndim < 2 || b->ndim < 2)
    return om__fail(OM_ERR_INVALID_ARGUMENT, "matmul: the op needs at least 2 dims, got %d and %d (om_matmul takes vectors)", a->ndim, b->ndim);
  int64_t k = a->shape[a->ndim - 1];
  if (k != b->shape[b->ndim - 2])
    return om__fail(OM_ERR_SHAPE_MISMATCH, "matmul: shapes %s and %s do not match (%lld != %lld)",
                    om__shape_str(x, sizeof x, a->shape, a->ndim), om__shape_str(y, sizeof y, b->shape, b->ndim),
                    (long long)k, (long long)b->shape[b->ndim - 2]);
  /* Batch dims broadcast: compare them as tensors of the batch shape. */
  om_tensor ba = *a, bb = *b;
  ba.ndim -= 2;
  bb.ndim -= 2;
  om_meta *m = &c->out_meta[0];
  if (!om__broadcast_shapes((om_tensor *const[]){&ba, &bb}, 2, m, "matmul")) return false;
  m->dtype = OM_FLOAT32;
  m->shape[m->ndim++] = a->shape[a->ndim - 2];
  m->shape[m->ndim++] = b->shape[b->ndim - 1];
  return true;
}

/* o = a b, matmul's broadcast batches, with bias (or NULL) added to each row of each product. */
static bool matmul_into(const om_tensor *a, const om_tensor *b, om_tensor *o, const om_tensor *bias) {
  int nb = o->ndim - 2;
  int64_t m = o->shape[nb], n = o->shape[nb + 1], k = a->shape[a->ndim - 1];
  int64_t sa[OM_MAX_DIMS], sb[OM_MAX_DIMS], batches = 1;
  om_tensor ba = *a, bb = *b; /* batch strides, broadcast over the output's batch dims */
  ba.ndim -= 2;
  bb.ndim -= 2;
  ba.dtype = bb.dtype = OM_BOOL; /* element strides: om__broadcast_strides scales by dtype size 1 */
  om__broadcast_strides(&ba, nb, sa);
  om__broadcast_strides(&bb, nb, sb);
  for (int d = 0; d < nb; d++) batches *= o->shape[d];
  int64_t small[2 * 64], *boff = batches <= 64 ? small : om__alloc(sizeof(int64_t) * (uint64_t)(2 * batches + 1), "matmul");
  if (!boff) return false;
  for (int64_t t = 0; t < batches; t++) {
    int64_t oa = 0, ob = 0, rem = t;
    for (int d = nb - 1; d >= 0; d--) {
      int64_t i = rem % o->shape[d];
      rem /= o->shape[d];
      oa += i * sa[d];
      ob += i * sb[d];
    }
    boff[2 * t] = oa, boff[2 * t + 1] = ob;
  }
  gemm_job j = {.a = {(const float *)om__data(a), a->strides[a->ndim - 2], a->strides[a->ndim - 1]},
                .b = {(const float *)om__data(b), b->strides[b->ndim - 2], b->strides[b->ndim - 1]},
                .c = (float *)om__data(o), .m = m, .n = n, .k = k, .ldc = n, .boff = boff};
  if (bias) j.bias = (const float *)om__data(bias), j.bias_stride = bias->strides[0];
  j.b_once = batches > 1;
  for (int d = 0; d < nb; d++) j.b_once &= sb[d] == 0;
  bool ok = run_job(&j, batches, "matmul");
  if (boff != small) free(boff);
  return ok;
}

/* x [..., in] whose leading dims step as one (a contiguous batch of tokens, say) becomes one
 * product of all its rows, o ([..., out], contiguous) with it: the other operand's panels packed
 * once, not once per leading index (each row's sum is the same whatever the rows around it). A
 * dim of size 1 steps as any: torch.onnx's sequence-first [L, 1, E] at batch 1 (a transpose of
 * [1, L, E]) is L evenly spaced rows, not L one-row products. Else x and o stay as they are. */
static void flatten_rows(om_tensor *x, om_tensor *o) {
  int nd = x->ndim;
  int64_t step = 0, row_stride = x->strides[nd - 2];
  bool flat = nd > 2, inner = true;
  for (int d = nd - 2; flat && d >= 0; d--) { /* row r of the flattened x at r row_stride */
    if (x->shape[d] == 1) continue;
    if (inner) row_stride = x->strides[d], inner = false;
    else flat = x->strides[d] == step;
    flat = flat && !__builtin_mul_overflow(x->strides[d], x->shape[d], &step);
  }
  if (!flat) return;
  int64_t rows = 1;
  for (int d = 0; d < nd - 1; d++) rows *= x->shape[d];
  x->shape[0] = o->shape[0] = rows, x->shape[1] = x->shape[nd - 1], o->shape[1] = o->shape[nd - 1];
  x->strides[0] = row_stride, x->strides[1] = x->strides[nd - 1], o->strides[0] = o->shape[1], o->strides[1] = 1;
  x->ndim = o->ndim = 2;
}

/* With a matrix b (one for every batch: torch.onnx's MatMul by a Linear's transposed weight), a's
 * rows of every batch are one product where they step as one. */
static bool forward_matmul(om_call *c) {
  om_tensor a = *c->in[0], o = *c->out[0];
  if (c->in[1]->ndim == 2) flatten_rows(&a, &o);
  return matmul_into(&a, c->in[1], &o, NULL);
}

/* dA = g B^T, dB = A^T g, each summed over broadcast batch dims. */
static bool matmul_backward(const om_record *r, om_tensor *const *g, om_tensor **gin) {
  om_scope s = {0};
  om_tensor *a = r->in[0], *b = r->in[1];
  if (om__wants(r, 0)) {
    om_tensor *ga = om__keep(&s, om_matmul(g[0], om__keep(&s, om_transpose(b, -1, -2))));
    if (ga) gin[0] = om__sum_to(ga, a->shape, a->ndim);
  }
  if (om__wants(r, 1)) {
    om_tensor *gb = om__keep(&s, om_matmul(om__keep(&s, om_transpose(a, -1, -2)), g[0]));
    if (gb) gin[1] = om__sum_to(gb, b->shape, b->ndim);
  }
  om__scope_end(&s);
  return (!om__wants(r, 0) || gin[0]) && (!om__wants(r, 1) || gin[1]);
}

/* ONNX MatMul is NumPy's matmul; on operands of 2 or more dims (all this op takes) that is
 * this op's product with broadcast batch dims. A contraction over nothing is 0, which
 * onnxruntime's MatMul does not write (it leaves the output as it found it): where the
 * contracted extent can be 0 at some size, both operands get a zero slice more along it. */
static bool lower_matmul(om_lower *l, const om_call *c) {
  const om_tensor *a = c->in[0], *b = c->in[1];
  if (!om__lower_may_be_0(l, om__lower_in_ext(l, 0, a->ndim - 1)) && a->shape[a->ndim - 1]) return om__lower_node(l, c, "MatMul", NULL, 0);
  int in[2] = {om__lower_zero_slices(l, 0, a->ndim - 1, 1), om__lower_zero_slices(l, 1, b->ndim - 2, 1)}, out;
  if (in[0] < 0 || in[1] < 0 || !om__emit(l, "MatMul", in, 2, &c->out_meta[0], 1, &out, NULL, 0)) return false;
  om__lower_output(l, 0, out);
  return true;
}

const om_op_def om__op_matmul = {
    .name = "matmul", .n_in = 2, .n_out = 1, .saves = OM_SAVES_IN(0) | OM_SAVES_IN(1),
    .infer = infer_matmul, .forward = forward_matmul, .backward = matmul_backward,
    .lower = lower_matmul, .onnx = "MatMul (a zero slice more on both operands where the contracted extent can be 0)",
    .test = {.n_in = 2, .ndims = {3, 2}, .shapes = {{2, 3, 5}, {5, 4}}, .lo = -2, .hi = 2}};

/* ---- linear: x [..., in], weight [out, in], bias [out] (optional) -> [..., out] ----
 * Its own op rather than matmul(x, weight.T) + bias so that a traced Linear reads its weight
 * as the named initializer itself (Gemm transB) instead of a transposed copy of it. */

static bool infer_linear(om_call *c) {
  if (c->n_in != 2 && c->n_in != 3)
    return om__fail(OM_ERR_INVALID_ARGUMENT, "linear: takes x, weight and an optional bias, got %d inputs", c->n_in);
  om_tensor *x = c->in[0], *w = c->in[1], *b = c->n_in == 3 ? c->in[2] : NULL;
  char xs[OM_SHAPE_STR_LEN], ws[OM_SHAPE_STR_LEN];
  if (x->dtype != OM_FLOAT32 || w->dtype != OM_FLOAT32 || (b && b->dtype != OM_FLOAT32))
    return om__fail(OM_ERR_DTYPE_MISMATCH, "linear: takes float32, not %s", om_dtype_name(x->dtype != OM_FLOAT32 ? x->dtype : w->dtype != OM_FLOAT32 ? w->dtype : b->dtype));
  if (x->ndim < 1 || w->ndim != 2 || x->shape[x->ndim - 1] != w->shape[1])
    return om__fail(OM_ERR_SHAPE_MISMATCH, "linear: input %s and weight %s do not match (the weight is [out, in] and the input [..., in])",
                    om__shape_str(xs, sizeof xs, x->shape, x->ndim), om__shape_str(ws, sizeof ws, w->shape, w->ndim));
  if (b && (b->ndim != 1 || b->shape[0] != w->shape[0]))
    return om__fail(OM_ERR_SHAPE_MISMATCH, "linear: bias %s does not match weight %s (it must be [%lld])",
                    om__shape_str(xs, sizeof xs, b->shape, b->ndim), om__shape_str(ws, sizeof ws, w->shape, w->ndim), (long long)w->shape[0]);
  om_meta *m = &c->out_meta[0];
  *m = (om_meta){.dtype = OM_FLOAT32, .ndim = x->ndim};
  memcpy(m->shape, x->shape, sizeof(int64_t) * (size_t)x->ndim);
  m->shape[x->ndim - 1] = w->shape[0];
  return true;
}

/* The matmul kernel on views: x as [..., rows, in] (a vector as one row), the weight read
 * transposed through its strides (no copy), then the bias added to every row. */
static bool forward_linear(om_call *c) {
  om_tensor x = *c->in[0], wt = *c->in[1], o = *c->out[0];
  if (x.ndim == 1) {
    x.shape[1] = x.shape[0], x.strides[1] = x.strides[0];
    x.shape[0] = 1, x.strides[0] = 0, x.ndim = 2;
    o.shape[1] = o.shape[0], o.strides[1] = 1;
    o.shape[0] = 1, o.strides[0] = o.shape[1], o.ndim = 2;
  }
  flatten_rows(&x, &o);
  wt.shape[0] = c->in[1]->shape[1], wt.shape[1] = c->in[1]->shape[0];
  wt.strides[0] = c->in[1]->strides[1], wt.strides[1] = c->in[1]->strides[0];
  return matmul_into(&x, &wt, &o, c->n_in == 3 ? c->in[2] : NULL);
}

/* dx = g W, dW = g^T x over all rows, db = g summed over all rows. */
static bool linear_backward(const om_record *r, om_tensor *const *g, om_tensor **gin) {
  om_scope s = {0};
  om_tensor *x = r->in[0], *w = r->in[1];
  if (om__wants(r, 0)) gin[0] = om_matmul(g[0], w);
  if (om__wants(r, 1)) {
    /* the rows counted, not -1: with in or out 0 a -1 would be ambiguous (reshape refuses it) */
    int64_t rows = 1;
    for (int d = 0; d < x->ndim - 1; d++) rows *= x->shape[d];
    om_tensor *g2 = om__keep(&s, om_reshape(g[0], (int64_t[]){rows, w->shape[0]}, 2));
    om_tensor *x2 = om__keep(&s, om_reshape(x, (int64_t[]){rows, w->shape[1]}, 2));
    gin[1] = g2 && x2 ? om_matmul(om__keep(&s, om_transpose(g2, 0, 1)), x2) : NULL;
  }
  if (r->n_in == 3 && om__wants(r, 2)) gin[2] = om__sum_to(g[0], r->in[2]->shape, 1);
  om__scope_end(&s);
  for (int i = 0; i < r->n_in; i++)
    if (om__wants(r, i) && !gin[i]) return false;
  return true;
}

/* A 2-D input is one Gemm (transB = 1 reads the weight as stored, bias as C). Other ranks:
 * MatMul with a Transpose of the weight (onnxruntime folds it at load time), then Add.
 * Empty operands (onnxruntime fuses MatMul and Add into a Gemm between Reshapes whose -1 is
 * ambiguous for them, and fails): an empty output is zeros of its shape; with 0 input
 * features every product is a sum of nothing, 0, so the output is Expand(0) plus the bias;
 * leading axes that can be empty at some size (symbolic) make the Gemm and Reshapes ourselves,
 * with computed shapes. */
static bool lower_linear(om_lower *l, const om_call *c) {
  int empty = om__lower_empty(l, c);
  if (empty) return empty > 0;
  if (c->in[1]->shape[1] == 0) {
    const om_meta *m = &c->out_meta[0];
    int ext[OM_MAX_DIMS];
    for (int d = 0; d < m->ndim; d++) ext[d] = om__lower_out_ext(l, 0, d);
    int in[2] = {om__lower_scalar(l, 0, OM_FLOAT32), om__lower_shape_operand(l, m->shape, ext, m->ndim)}, y;
    if (in[0] < 0 || in[1] < 0 || !om__emit(l, "Expand", in, 2, m, 1, &y, NULL, 0)) return false;
    if (c->n_in == 3 && !om__emit(l, "Add", (int[]){y, om__lower_input(l, 2)}, 2, m, 1, &y, NULL, 0)) return false;
    om__lower_output(l, 0, y);
    return true;
  }
  if (c->in[0]->ndim == 2) return om__lower_node(l, c, "Gemm", &OM_ATTR_INT("transB", 1), 1);
  const om_meta *m = &c->out_meta[0];
  int rows = om__lower_x_const(l, 1), ext[OM_MAX_DIMS];
  bool may_be_0 = false;
  for (int d = 0; d < m->ndim; d++) {
    ext[d] = om__lower_out_ext(l, 0, d);
    may_be_0 |= om__lower_may_be_0(l, ext[d]);
    if (d < m->ndim - 1) rows = om__lower_x_mul(l, rows, om__lower_in_x(l, 0, d));
  }
  if (rows < 0) return false;
  if (may_be_0) { /* where the leading axes can be empty: Gemm between Reshapes computed with allowzero */
    int64_t lead = 1, flat[2] = {0, c->in[0]->shape[m->ndim - 1]};
    for (int d = 0; d < m->ndim - 1; d++) lead *= m->shape[d];
    flat[0] = lead;
    om_meta fm = {.dtype = OM_FLOAT32, .ndim = 2, .shape = {lead, flat[1]}}, gm = {.dtype = OM_FLOAT32, .ndim = 2, .shape = {lead, m->shape[m->ndim - 1]}};
    const om_gattr *zero = &OM_ATTR_INT("allowzero", 1);
    int fs = om__lower_shape_operand(l, flat, (int[]){rows, -1}, 2), os = om__lower_shape_operand(l, m->shape, ext, m->ndim), x2, y2, y;
    int gin[3] = {-1, om__lower_input(l, 1), c->n_in == 3 ? om__lower_input(l, 2) : -1};
    if (fs < 0 || os < 0 || !om__emit(l, "Reshape", (int[]){om__lower_input(l, 0), fs}, 2, &fm, 1, &x2, zero, 1)) return false;
    gin[0] = x2;
    if (!om__emit(l, "Gemm", gin, c->n_in, &gm, 1, &y2, &OM_ATTR_INT("transB", 1), 1) ||
        !om__emit(l, "Reshape", (int[]){y2, os}, 2, m, 1, &y, zero, 1))
      return false;
    om__lower_output(l, 0, y);
    return true;
  }
  int in[3] = {om__lower_input(l, 0), om__lower_input(l, 1), c->n_in == 3 ? om__lower_input(l, 2) : -1};
  const om_tensor *w = c->in[1];
  om_meta wt = {.dtype = OM_FLOAT32, .ndim = 2, .shape = {w->shape[1], w->shape[0]}};
  int t, y;
  if (!om__emit(l, "Transpose", &in[1], 1, &wt, 1, &t, &OM_ATTR_INTS("perm", ((int64_t[]){1, 0}), 2), 1) ||
      !om__emit(l, "MatMul", (int[]){in[0], t}, 2, &c->out_meta[0], 1, &y, NULL, 0))
    return false;
  if (c->n_in == 3 && !om__emit(l, "Add", (int[]){y, in[2]}, 2, &c->out_meta[0], 1, &y, NULL, 0)) return false;
  om__lower_output(l, 0, y);
  return true;
}

const om_op_def om__op_linear = {
    .name = "linear", .n_in = -1, .n_out = 1, .saves = OM_SAVES_IN(0) | OM_SAVES_IN(1),
    .infer = infer_linear, .forward = forward_linear, .backward = linear_backward,
    .lower = lower_linear, .onnx = "Gemm (2-D input); else Transpose, MatMul, Add",
    .test = {.n_in = 3, .ndims = {3, 2, 1}, .shapes = {{2, 3, 5}, {4, 5}, {4}}, .lo = -2, .hi = 2}};

/* ---- attention: q [..., L, E], kt [..., E, S], v [..., S, Ev] (, mask) (, mask2) -> [..., L, Ev] ----
 * softmax(scale(q kt) (+ mask) (then + mask2 in [r..., L, S])) v, attrs i [has_mask, mask kind,
 * scale kind (, r...)], f [scale, fill] (internal.h). Batch dims broadcast over all four; the mask
 * broadcasts to [..., L, S]. Given r (the scores' batches regrouped: the same count in the same
 * order, as a Reshape of the scores that keeps L and S would group them), a second float32 mask
 * broadcast to [r..., L, S] is added after the first: torchvision's Swin adds its shift mask to
 * the biased scores reshaped to [B / windows, windows, heads, N, N], then reshapes them back. Two
 * adds in turn, not one of the masks' sum, which would round otherwise.
 *
 * One op for what would be five, so that no [L, S] score matrix is ever whole: per batch, a block
 * of ATTN_ROWS query rows is multiplied into a score block, scaled, masked and softmaxed in
 * place, and multiplied by v into its rows of the output. Each piece is the separate op's
 * arithmetic (the gemm above gives a row the same bits whatever M, the scale and mask are the
 * same float operations, the softmax row is the softmax kernel's), so the result is the same
 * bits as matmul, mul or div, add or where, softmax, matmul: eager's scaled_dot_product_attention
 * uses it, and the Session's fast mode puts it in place of those five nodes of a graph
 * (src/runtime/onnx_ops.c). The backward recomputes the probabilities with those ops. */

enum { ATTN_ROWS = 64 }; /* query rows per score block: MC, so one block packs A once */

/* The batch dims of an operand: its dims but the last two (none for a mask of fewer). */
static om_tensor batch_part(const om_tensor *t) {
  om_tensor b = *t;
  b.ndim = t->ndim > 2 ? t->ndim - 2 : 0;
  return b;
}

/* The score matrix's meta: the batch dims of q and kt (and of the mask, with_mask) and [L, S]. */
static bool scores_meta(const om_call *c, bool with_mask, om_meta *m) {
  om_tensor b[3] = {batch_part(c->in[0]), batch_part(c->in[1])};
  int n = 2;
  if (with_mask && c->attrs.i[0]) b[n++] = batch_part(c->in[3]);
  if (!om__broadcast_shapes((om_tensor *const[]){&b[0], &b[1], &b[2]}, n, m, "attention")) return false;
  m->dtype = OM_FLOAT32;
  m->shape[m->ndim++] = c->in[0]->shape[c->in[0]->ndim - 2];
  m->shape[m->ndim++] = c->in[1]->shape[c->in[1]->ndim - 1];
  return true;
}

/* The regrouped batch dims r of a second mask: their count (0: no second mask). */
static int regrouped(const om_attrs *a) { return a->n_i - 3; }

/* mask2, as the scores' batches regrouped to r (nr dims) and [L, S]: checked against them. */
static bool check_mask2(const om_tensor *mask2, const int64_t *r, int nr, const om_meta *sm) {
  int64_t rs[OM_MAX_DIMS], batches = 1, grouped = 1;
  for (int d = 0; d < sm->ndim - 2; d++) batches *= sm->shape[d];
  for (int d = 0; d < nr; d++) {
    if (r[d] < 0) return om__fail(OM_ERR_INVALID_ARGUMENT, "attention: regrouped batch dim %d is %lld", d, (long long)r[d]);
    grouped *= rs[d] = r[d];
  }
  rs[nr] = sm->shape[sm->ndim - 2], rs[nr + 1] = sm->shape[sm->ndim - 1];
  char x[OM_SHAPE_STR_LEN], y[OM_SHAPE_STR_LEN];
  if (grouped != batches)
    return om__fail(OM_ERR_SHAPE_MISMATCH, "attention: the scores %s do not regroup to %s", om__shape_str(x, sizeof x, sm->shape, sm->ndim),
                    om__shape_str(y, sizeof y, rs, nr + 2));
  if (mask2->dtype != OM_FLOAT32) return om__fail(OM_ERR_DTYPE_MISMATCH, "attention: takes a float32 second mask, not %s", om_dtype_name(mask2->dtype));
  bool fits = mask2->ndim <= nr + 2;
  for (int d = 0; fits && d < mask2->ndim; d++) {
    int64_t m = mask2->shape[mask2->ndim - 1 - d];
    fits = m == 1 || m == rs[nr + 1 - d];
  }
  if (!fits)
    return om__fail(OM_ERR_SHAPE_MISMATCH, "attention: second mask %s does not broadcast to the regrouped scores' %s",
                    om__shape_str(x, sizeof x, mask2->shape, mask2->ndim), om__shape_str(y, sizeof y, rs, nr + 2));
  return true;
}

static bool infer_attention(om_call *c) {
  const om_attrs *a = &c->attrs;
  if (a->n_i < 3 || a->n_i > 3 + OM_MAX_DIMS - 2 || a->n_f != 2 || (a->i[0] != 0 && a->i[0] != 1) || a->i[1] < OM_ATTN_ADD || a->i[1] > OM_ATTN_FILL ||
      a->i[2] < OM_ATTN_UNSCALED || a->i[2] > OM_ATTN_Q_DIV)
    return om__fail(OM_ERR_INVALID_ARGUMENT,
                    "attention: needs attrs [has_mask 0|1, mask kind 0-2, scale kind 0-4 (, up to %d regrouped batch dims)] and [scale, fill]",
                    OM_MAX_DIMS - 2);
  int nr = regrouped(a), n_in = 3 + (int)a->i[0] + (nr > 0);
  if (c->n_in != n_in)
    return om__fail(OM_ERR_INVALID_ARGUMENT, "attention: takes %d inputs with has_mask %d and %d regrouped batch dims, got %d", n_in, (int)a->i[0],
                    nr, c->n_in);
  om_tensor *q = c->in[0], *kt = c->in[1], *v = c->in[2], *mask = a->i[0] ? c->in[3] : NULL;
  for (int i = 0; i < 3; i++) {
    if (c->in[i]->dtype != OM_FLOAT32)
      return om__fail(OM_ERR_DTYPE_MISMATCH, "attention: takes float32, not %s (input %d)", om_dtype_name(c->in[i]->dtype), i);
    if (c->in[i]->ndim < 2) return om__fail(OM_ERR_INVALID_ARGUMENT, "attention: input %d needs at least 2 dims, got %d", i, c->in[i]->ndim);
  }
  om_dtype mdt = a->i[1] == OM_ATTN_ADD ? OM_FLOAT32 : OM_BOOL;
  if (mask && mask->dtype != mdt)
    return om__fail(OM_ERR_DTYPE_MISMATCH, "attention: mask kind %d takes a %s mask, not %s", (int)a->i[1], om_dtype_name(mdt),
                    om_dtype_name(mask->dtype));
  int64_t L = q->shape[q->ndim - 2], E = q->shape[q->ndim - 1], S = kt->shape[kt->ndim - 1];
  char x[OM_SHAPE_STR_LEN], y[OM_SHAPE_STR_LEN], z[OM_SHAPE_STR_LEN];
  if (kt->shape[kt->ndim - 2] != E || v->shape[v->ndim - 2] != S)
    return om__fail(OM_ERR_SHAPE_MISMATCH, "attention: q %s, kt %s and v %s do not match", om__shape_str(x, sizeof x, q->shape, q->ndim),
                    om__shape_str(y, sizeof y, kt->shape, kt->ndim), om__shape_str(z, sizeof z, v->shape, v->ndim));
  if (mask && ((mask->ndim >= 1 && mask->shape[mask->ndim - 1] != 1 && mask->shape[mask->ndim - 1] != S) ||
               (mask->ndim >= 2 && mask->shape[mask->ndim - 2] != 1 && mask->shape[mask->ndim - 2] != L)))
    return om__fail(OM_ERR_SHAPE_MISMATCH, "attention: mask %s does not broadcast to the scores' [%lld, %lld]",
                    om__shape_str(x, sizeof x, mask->shape, mask->ndim), (long long)L, (long long)S);
  om_meta sm;
  if (!scores_meta(c, true, &sm)) return false;
  om_tensor sb = {.ndim = sm.ndim - 2}, vb = batch_part(v);
  memcpy(sb.shape, sm.shape, sizeof sb.shape);
  om_meta *m = &c->out_meta[0];
  if (!om__broadcast_shapes((om_tensor *const[]){&sb, &vb}, 2, m, "attention")) return false;
  /* the kernel finds the second mask's row from the output's batch index: v must not add batches */
  if (nr && (m->ndim != sb.ndim || memcmp(m->shape, sb.shape, sizeof(int64_t) * (size_t)sb.ndim)))
    return om__fail(OM_ERR_SHAPE_MISMATCH, "attention: v %s adds batches to the scores %s, which a second mask does not take",
                    om__shape_str(x, sizeof x, v->shape, v->ndim), om__shape_str(y, sizeof y, sm.shape, sm.ndim));
  if (nr && !check_mask2(c->in[n_in - 1], &a->i[3], nr, &sm)) return false;
  m->dtype = OM_FLOAT32;
  m->shape[m->ndim++] = L;
  m->shape[m->ndim++] = v->shape[v->ndim - 1];
  return true;
}

/* Element strides of operand t's batch dims, as seen from nb output batch dims. */
static void batch_strides(const om_tensor *t, int nb, int64_t *out) {
  om_tensor b = batch_part(t);
  b.dtype = OM_BOOL; /* om__broadcast_strides scales by the dtype's size: 1 gives elements */
  om__broadcast_strides(&b, nb, out);
}

/* The attention's blocks: part p is batch p / blocks, query rows from ATTN_ROWS (p % blocks);
 * each thread has its own panels, score block and softmax scratch. */
typedef struct attn_job {
  const om_tensor *q, *kt, *v, *o;
  const float *pq, *pk, *pv;
  const char *pm, *pm2;
  float *po;
  int nb, kind, sk, nr;
  int64_t L, Ev, E, S, rows, blocks;
  const int64_t *sq, *sk_, *sv, *smask, *r, *smask2; /* r: the regrouped batch dims, smask2 mask2's strides over [r..., L, S] */
  float scale, fill;
  float *panels[OM_MAX_THREADS], *sc[OM_MAX_THREADS], *qs[OM_MAX_THREADS]; /* qs: a block's q rows scaled (Q_MUL, Q_DIV) */
  double *e[OM_MAX_THREADS];
} attn_job;

static void attention_part(void *ctx, int64_t part, int worker) {
  const attn_job *j = ctx;
  const om_tensor *o = j->o;
  int64_t t = part / j->blocks, i0 = part % j->blocks * j->rows, rb = j->L - i0 < j->rows ? j->L - i0 : j->rows, S = j->S;
  int64_t oq = 0, ok = 0, ov = 0, om = 0, rem = t;
  for (int d = j->nb - 1; d >= 0; d--) {
    int64_t i = rem % o->shape[d];
    rem /= o->shape[d];
    oq += i * j->sq[d], ok += i * j->sk_[d], ov += i * j->sv[d], om += i * j->smask[d];
  }
  int64_t om2 = 0; /* the same batch, as an index into the regrouped dims */
  for (int64_t d = j->nr - 1, rem2 = t; d >= 0; d--) {
    om2 += rem2 % j->r[d] * j->smask2[d];
    rem2 /= j->r[d];
  }
  strided K = {j->pk + ok, j->kt->strides[j->kt->ndim - 2], j->kt->strides[j->kt->ndim - 1]};
  strided V = {j->pv + ov, j->v->strides[j->v->ndim - 2], j->v->strides[j->v->ndim - 1]};
  strided Q = {j->pq + oq + i0 * j->q->strides[j->q->ndim - 2], j->q->strides[j->q->ndim - 2], j->q->strides[j->q->ndim - 1]};
  float *sc = j->sc[worker];
  if (j->sk == OM_ATTN_Q_MUL || j->sk == OM_ATTN_Q_DIV) { /* q's block scaled first, each element as a Mul or Div node would */
    float *qs = j->qs[worker];
    for (int64_t i = 0; i < rb; i++)
      for (int64_t e = 0; e < j->E; e++) {
        float x = Q.p[i * Q.rs + e * Q.cs];
        qs[i * j->E + e] = j->sk == OM_ATTN_Q_MUL ? x * j->scale : x / j->scale;
      }
    Q = (strided){qs, j->E, 1};
  }
  product(Q, K, NULL, sc, S, rb, S, j->E, false, j->panels[worker], NULL, NULL);
  for (int64_t i = 0; i < rb; i++) {
    float *row = sc + i * S;
    const char *mrow = j->pm ? j->pm + om + (i0 + i) * j->smask[j->nb] : NULL;
    /* the scale, then the mask: each its own loop over the row, which the compiler vectorises */
    if (j->sk == OM_ATTN_MUL)
      for (int64_t k = 0; k < S; k++) row[k] = row[k] * j->scale;
    else if (j->sk == OM_ATTN_DIV)
      for (int64_t k = 0; k < S; k++) row[k] = row[k] / j->scale;
    int64_t ms = j->smask[j->nb + 1];
    if (mrow && j->kind == OM_ATTN_ADD)
      for (int64_t k = 0; k < S; k++) row[k] = row[k] + *(const float *)(mrow + k * ms);
    else if (mrow)
      for (int64_t k = 0; k < S; k++) {
        bool keep = (*(const uint8_t *)(mrow + k * ms) != 0) == (j->kind == OM_ATTN_KEEP);
        row[k] = keep ? row[k] : j->fill;
      }
    if (j->pm2) {
      const char *m2 = j->pm2 + om2 + (i0 + i) * j->smask2[j->nr];
      for (int64_t k = 0; k < S; k++) row[k] = row[k] + *(const float *)(m2 + k * j->smask2[j->nr + 1]);
    }
    om__softmax_row(row, row, S, 1, j->e[worker], false);
  }
  product((strided){sc, S, 1}, V, NULL, j->po + (t * j->L + i0) * j->Ev, j->Ev, rb, j->Ev, S, false, j->panels[worker], NULL, NULL);
}

static bool forward_attention(om_call *c) {
  om_tensor *q = c->in[0], *kt = c->in[1], *v = c->in[2], *mask = c->attrs.i[0] ? c->in[3] : NULL, *o = c->out[0];
  int nb = o->ndim - 2;
  int nr = regrouped(&c->attrs);
  om_tensor *mask2 = nr ? c->in[c->n_in - 1] : NULL;
  int64_t sq[OM_MAX_DIMS], sk_[OM_MAX_DIMS], sv[OM_MAX_DIMS], smask[OM_MAX_DIMS] = {0}, smask2[OM_MAX_DIMS] = {0}, batches = 1;
  batch_strides(q, nb, sq);
  batch_strides(kt, nb, sk_);
  batch_strides(v, nb, sv);
  if (mask) om__broadcast_strides(mask, nb + 2, smask); /* bytes, over the whole [..., L, S] */
  if (mask2) om__broadcast_strides(mask2, nr + 2, smask2);
  for (int d = 0; d < nb; d++) batches *= o->shape[d];
  attn_job j = {.q = q, .kt = kt, .v = v, .o = o, .nb = nb, .kind = (int)c->attrs.i[1], .sk = (int)c->attrs.i[2],
                .L = o->shape[nb], .Ev = o->shape[nb + 1], .E = q->shape[q->ndim - 1], .S = kt->shape[kt->ndim - 1],
                .sq = sq, .sk_ = sk_, .sv = sv, .smask = smask, .scale = (float)c->attrs.f[0], .fill = (float)c->attrs.f[1],
                .pq = (const float *)om__data(q), .pk = (const float *)om__data(kt), .pv = (const float *)om__data(v),
                .pm = mask ? om__data(mask) : NULL, .po = (float *)om__data(o), .nr = nr, .r = &c->attrs.i[3], .smask2 = smask2,
                .pm2 = mask2 ? om__data(mask2) : NULL};
  if (batches == 0 || j.L == 0 || j.Ev == 0) return true;
  j.rows = j.L < ATTN_ROWS ? j.L : ATTN_ROWS;
  j.blocks = (j.L + j.rows - 1) / j.rows;
  int64_t S = j.S, floats = om__gemm_scratch(j.rows, S > j.Ev ? S : j.Ev, j.E > S ? j.E : S, false);
  int threads = om__job_threads((double)batches * (double)j.L * (double)S * (double)(j.E + j.Ev), batches * j.blocks);
  bool ok = true;
  int64_t qs = j.sk == OM_ATTN_Q_MUL || j.sk == OM_ATTN_Q_DIV ? j.rows * j.E : 0;
  for (int i = 0; ok && i < threads; i++) { /* each thread's S + 1 doubles, then its panels, then its scores, then its scaled q rows */
    float *p = om__scratch(i, 2 * (S + 1) + floats + 1 + j.rows * S + qs, "attention");
    if (!(ok = p != NULL)) break;
    j.e[i] = (double *)(void *)p, j.panels[i] = p + 2 * (S + 1), j.sc[i] = j.panels[i] + floats + 1, j.qs[i] = j.sc[i] + j.rows * S;
  }
  if (ok) om__parallel(batches * j.blocks, threads, attention_part, &j);
  om__scratch_done();
  return ok;
}

/* The attention's probabilities with the separate ops (kept in s): what the backward reads. */
/* q scaled as the Q_MUL and Q_DIV kinds scale it (kept in s), or q itself. */
static om_tensor *scaled_q(om_scope *s, const om_attrs *a, om_tensor *q) {
  if (a->i[2] != OM_ATTN_Q_MUL && a->i[2] != OM_ATTN_Q_DIV) return q;
  om_tensor *c = om__keep(s, om_scalar(a->f[0], OM_FLOAT32));
  return om__keep(s, a->i[2] == OM_ATTN_Q_MUL ? om_mul(q, c) : om_div(q, c));
}

static om_tensor *attention_probs(om_scope *s, const om_attrs *a, om_tensor *q, om_tensor *kt, om_tensor *mask, om_tensor *mask2) {
  om_tensor *x = om__keep(s, om_matmul(scaled_q(s, a, q), kt));
  bool scores = a->i[2] == OM_ATTN_MUL || a->i[2] == OM_ATTN_DIV;
  om_tensor *c = scores ? om__keep(s, om_scalar(a->f[0], OM_FLOAT32)) : NULL;
  if (x && c) x = om__keep(s, a->i[2] == OM_ATTN_MUL ? om_mul(x, c) : om_div(x, c));
  if (x && mask) {
    om_tensor *fill = a->i[1] != OM_ATTN_ADD ? om__keep(s, om_scalar(a->f[1], OM_FLOAT32)) : NULL;
    x = om__keep(s, a->i[1] == OM_ATTN_ADD ? om_add(x, mask) : a->i[1] == OM_ATTN_KEEP ? om_where(mask, x, fill) : om_where(mask, fill, x));
  }
  if (x && mask2) { /* reshaped to [r..., L, S], + mask2, and back */
    int nr = regrouped(a);
    int64_t rs[OM_MAX_DIMS], back[OM_MAX_DIMS];
    memcpy(rs, &a->i[3], sizeof(int64_t) * (size_t)nr);
    memcpy(back, x->shape, sizeof back);
    rs[nr] = x->shape[x->ndim - 2], rs[nr + 1] = x->shape[x->ndim - 1];
    om_tensor *g = om__keep(s, om_reshape(x, rs, nr + 2));
    x = g ? om__keep(s, om_reshape(om__keep(s, om_add(g, mask2)), back, x->ndim)) : NULL;
  }
  return x ? om__keep(s, om_softmax(x, -1)) : NULL;
}

/* With p the probabilities and g the output's gradient: dv = p^T g, ds = p (g v^T - rowsum(p g v^T))
 * (softmax's), then back through the mask (zero where fill was taken; the float mask's own
 * gradient is ds), the scale and the first product: dq = ds kt^T, dkt = q^T ds. */
static bool attention_backward(const om_record *r, om_tensor *const *g, om_tensor **gin) {
  om_scope s = {0};
  const om_attrs *a = &r->attrs;
  om_tensor *q = r->in[0], *kt = r->in[1], *v = r->in[2], *mask = a->i[0] ? r->in[3] : NULL;
  int i2 = 3 + (int)a->i[0]; /* mask2's input, when there is one */
  om_tensor *mask2 = regrouped(a) ? r->in[i2] : NULL;
  om_tensor *p = attention_probs(&s, a, q, kt, mask, mask2);
  int64_t last = -1;
  bool ok = p != NULL;
  if (ok && om__wants(r, 2)) {
    om_tensor *dv = om__keep(&s, om_matmul(om__keep(&s, om_transpose(p, -1, -2)), g[0]));
    ok = dv && (gin[2] = om__sum_to(dv, v->shape, v->ndim));
  }
  bool wq = om__wants(r, 0), wk = om__wants(r, 1), wm = mask && om__wants(r, 3), wm2 = mask2 && om__wants(r, i2);
  om_tensor *ds = NULL;
  if (ok && (wq || wk || wm || wm2)) {
    om_tensor *dp = om__keep(&s, om_matmul(g[0], om__keep(&s, om_transpose(v, -1, -2))));
    om_tensor *dot = om__keep(&s, om_sum(om__keep(&s, om_mul(dp, p)), &last, 1, true));
    ds = om__keep(&s, om_mul(p, om__keep(&s, om_sub(dp, dot))));
    ok = ds != NULL;
  }
  if (ok && wm) ok = (gin[3] = om__sum_to(ds, mask->shape, mask->ndim)) != NULL;
  if (ok && wm2) { /* the regrouped scores' gradient is ds regrouped */
    int nr = regrouped(a);
    int64_t rs[OM_MAX_DIMS];
    memcpy(rs, &a->i[3], sizeof(int64_t) * (size_t)nr);
    rs[nr] = ds->shape[ds->ndim - 2], rs[nr + 1] = ds->shape[ds->ndim - 1];
    om_tensor *g = om__keep(&s, om_reshape(ds, rs, nr + 2));
    ok = g && (gin[i2] = om__sum_to(g, mask2->shape, mask2->ndim)) != NULL;
  }
  if (ok && mask && a->i[1] != OM_ATTN_ADD && (wq || wk)) {
    om_tensor *zero = om__keep(&s, om_scalar(0, OM_FLOAT32));
    ds = om__keep(&s, a->i[1] == OM_ATTN_KEEP ? om_where(mask, ds, zero) : om_where(mask, zero, ds));
    ok = ds != NULL;
  }
  bool on_q = a->i[2] == OM_ATTN_Q_MUL || a->i[2] == OM_ATTN_Q_DIV; /* the scale is q's: dq = d(q scaled) scaled the same way */
  om_tensor *c = a->i[2] != OM_ATTN_UNSCALED ? om__keep(&s, om_scalar(a->f[0], OM_FLOAT32)) : NULL;
  if (ok && c && !on_q && (wq || wk)) {
    ds = om__keep(&s, a->i[2] == OM_ATTN_MUL ? om_mul(ds, c) : om_div(ds, c));
    ok = ds != NULL;
  }
  if (ok && wq) {
    om_tensor *dq = om__keep(&s, om_matmul(ds, om__keep(&s, om_transpose(kt, -1, -2))));
    if (dq && on_q) dq = om__keep(&s, a->i[2] == OM_ATTN_Q_MUL ? om_mul(dq, c) : om_div(dq, c));
    ok = dq && (gin[0] = om__sum_to(dq, q->shape, q->ndim));
  }
  if (ok && wk) {
    om_tensor *qs = scaled_q(&s, a, q);
    om_tensor *dk = qs ? om__keep(&s, om_matmul(om__keep(&s, om_transpose(qs, -1, -2)), ds)) : NULL;
    ok = dk && (gin[1] = om__sum_to(dk, kt->shape, kt->ndim));
  }
  om__scope_end(&s);
  return ok;
}

/* A column of zeros after p's last axis, p [..., L, S] -> [..., L, S + 1], with no shape operand
 * (p's batch extents are not at hand): ReduceSum(p, last) * 0, which is 0 (a row of
 * probabilities sums to about 1, and to 0 when S is 0) or NaN on a row that is NaN already. */
static int zero_column(om_lower *l, int p, const om_meta *pm) {
  int64_t last = pm->ndim - 1;
  om_meta cm = *pm, wide = *pm;
  cm.shape[last] = 1;
  wide.shape[last]++;
  int axes = om__lower_ints(l, &last, 1), zero = om__lower_scalar(l, 0, OM_FLOAT32), sum, col, out;
  if (axes < 0 || zero < 0 || !om__emit(l, "ReduceSum", (int[]){p, axes}, 2, &cm, 1, &sum, NULL, 0) ||
      !om__emit(l, "Mul", (int[]){sum, zero}, 2, &cm, 1, &col, NULL, 0) ||
      !om__emit(l, "Concat", (int[]){p, col}, 2, &wide, 1, &out, &OM_ATTR_INT("axis", last), 1))
    return -1;
  return out;
}

/* The five nodes: MatMul, Mul or Div by the scale, Add or Where with the mask, Softmax, MatMul;
 * a product over E or S that can be 0 gets a zero slice more on both sides, as matmul's does. */
static bool lower_attention(om_lower *l, const om_call *c) {
  const om_attrs *a = &c->attrs;
  const om_tensor *q = c->in[0], *kt = c->in[1], *v = c->in[2];
  om_meta sm, mm;
  if (!scores_meta(c, false, &sm) || !scores_meta(c, true, &mm)) return false;
  int qa = om__lower_input(l, 0), kb = om__lower_input(l, 1), x, y;
  int ee = om__lower_in_ext(l, 0, q->ndim - 1), se = om__lower_in_ext(l, 1, kt->ndim - 1);
  bool padded = om__lower_may_be_0(l, ee) || !q->shape[q->ndim - 1];
  if (padded) {
    qa = om__lower_zero_slices(l, 0, q->ndim - 1, 1);
    kb = om__lower_zero_slices(l, 1, kt->ndim - 2, 1);
    if (qa < 0 || kb < 0) return false;
  }
  if (a->i[2] == OM_ATTN_Q_MUL || a->i[2] == OM_ATTN_Q_DIV) { /* q scaled before the product */
    om_meta qm = {.dtype = OM_FLOAT32, .ndim = q->ndim};
    memcpy(qm.shape, q->shape, sizeof qm.shape);
    qm.shape[q->ndim - 1] += padded; /* the zero slice above */
    int k = om__lower_farg(l, 0);
    if (k < 0 || !om__emit(l, a->i[2] == OM_ATTN_Q_MUL ? "Mul" : "Div", (int[]){qa, k}, 2, &qm, 1, &qa, NULL, 0)) return false;
  }
  if (!om__emit(l, "MatMul", (int[]){qa, kb}, 2, &sm, 1, &x, NULL, 0)) return false;
  if (a->i[2] == OM_ATTN_MUL || a->i[2] == OM_ATTN_DIV) {
    int k = om__lower_farg(l, 0); /* 1 / sqrt(E) of a symbolic E is computed from it */
    if (k < 0 || !om__emit(l, a->i[2] == OM_ATTN_MUL ? "Mul" : "Div", (int[]){x, k}, 2, &sm, 1, &x, NULL, 0)) return false;
  }
  if (a->i[0]) {
    int m = om__lower_input(l, 3), f = a->i[1] == OM_ATTN_ADD ? 0 : om__lower_scalar(l, a->f[1], OM_FLOAT32);
    int in[3] = {m, a->i[1] == OM_ATTN_KEEP ? x : f, a->i[1] == OM_ATTN_KEEP ? f : x};
    if (f < 0 || (a->i[1] == OM_ATTN_ADD ? !om__emit(l, "Add", (int[]){x, m}, 2, &mm, 1, &x, NULL, 0)
                                          : !om__emit(l, "Where", in, 3, &mm, 1, &x, NULL, 0)))
      return false;
  }
  if (regrouped(a)) { /* Reshape to [r..., L, S], Add the second mask, Reshape back: r is fixed, so the batches must be */
    int nr = regrouped(a), g, nb = mm.ndim - 2;
    for (int d = 0; d < nb; d++)
      if (om__lower_out_ext(l, 0, d) >= 0) return om__lower_refuse(l, c, "a second mask's regrouping is written for fixed batch dims only");
    om_meta rm = mm;
    rm.ndim = nr + 2;
    memcpy(rm.shape, &a->i[3], sizeof(int64_t) * (size_t)nr);
    rm.shape[nr] = mm.shape[nb], rm.shape[nr + 1] = mm.shape[nb + 1];
    int ext[OM_MAX_DIMS], le = om__lower_out_ext(l, 0, nb), se2 = om__lower_in_ext(l, 1, kt->ndim - 1); /* L and S may be symbolic */
    for (int d = 0; d < OM_MAX_DIMS; d++) ext[d] = -1;
    ext[nr] = le, ext[nr + 1] = se2;
    int to = om__lower_shape_operand(l, rm.shape, ext, rm.ndim);
    ext[nr] = ext[nr + 1] = -1, ext[nb] = le, ext[nb + 1] = se2;
    int back = om__lower_shape_operand(l, mm.shape, ext, mm.ndim), m2 = om__lower_input(l, 3 + (int)a->i[0]);
    const om_gattr zero = OM_ATTR_INT("allowzero", 1); /* an L or S of 0 is a size, not "copy the input's" */
    if (to < 0 || back < 0 || !om__emit(l, "Reshape", (int[]){x, to}, 2, &rm, 1, &g, &zero, 1) ||
        !om__emit(l, "Add", (int[]){g, m2}, 2, &rm, 1, &g, NULL, 0) || !om__emit(l, "Reshape", (int[]){g, back}, 2, &mm, 1, &x, &zero, 1))
      return false;
  }
  if (!om__emit(l, "Softmax", &x, 1, &mm, 1, &y, &OM_ATTR_INT("axis", mm.ndim - 1), 1)) return false;
  int vb = om__lower_input(l, 2);
  if (om__lower_may_be_0(l, se) || !kt->shape[kt->ndim - 1]) {
    y = zero_column(l, y, &mm);
    vb = om__lower_zero_slices(l, 2, v->ndim - 2, 1);
    if (y < 0 || vb < 0) return false;
  }
  int out;
  if (!om__emit(l, "MatMul", (int[]){y, vb}, 2, &c->out_meta[0], 1, &out, NULL, 0)) return false;
  om__lower_output(l, 0, out);
  return true;
}

const om_op_def om__op_attention = {
    .name = "attention", .n_in = -1, .n_out = 1, .saves = OM_SAVES_IN(0) | OM_SAVES_IN(1) | OM_SAVES_IN(2) | OM_SAVES_IN(3) | OM_SAVES_IN(4),
    .infer = infer_attention, .forward = forward_attention, .backward = attention_backward, .lower = lower_attention,
    .sym_fargs = 1,
    .onnx = "MatMul, Mul or Div, Add or Where, (a second mask: Reshape, Add, Reshape,) Softmax, MatMul (a zero slice more where E or S can be 0)",
    /* both masks: the scores' 4 batches regrouped as [2, 2] for the second */
    .test = {.n_in = 5, .ndims = {3, 3, 3, 2, 4}, .shapes = {{4, 3, 4}, {4, 4, 5}, {4, 5, 6}, {3, 5}, {2, 1, 3, 5}}, .lo = -2, .hi = 2,
             .attrs = {.n_i = 5, .i = {1, OM_ATTN_ADD, OM_ATTN_MUL, 2, 2}, .n_f = 2, .f = {0.5, 0}}}};

om_tensor *om__attention(om_tensor *q, om_tensor *kt, om_tensor *v, om_tensor *mask, int mask_kind, int scale_kind,
                         double scale, double fill) {
  om_attrs a = {.n_i = 3, .i = {mask != NULL, mask_kind, scale_kind}, .n_f = 2, .f = {scale, fill}};
  return om__apply1(OM_OP_attention, (om_tensor *[]){q, kt, v, mask}, mask ? 4 : 3, &a);
}

om_tensor *om_linear(om_tensor *x, om_tensor *weight, om_tensor *bias) {
  return om__apply1(OM_OP_linear, (om_tensor *[]){x, weight, bias}, bias ? 3 : 2, NULL);
}

om_tensor *om_matmul(om_tensor *a, om_tensor *b) {
  if (!om__check_inputs("matmul", (om_tensor *[]){a, b}, 2)) return NULL;
  if (a->ndim == 0 || b->ndim == 0)
    return om__fail(OM_ERR_INVALID_ARGUMENT, "matmul: both operands need at least 1 dim, got %d and %d", a->ndim, b->ndim), NULL;
  /* PyTorch's vector rules: a 1-D left operand is a row, a 1-D right operand a column, and
   * the added dim is removed from the result. A mismatch names the shapes given, not the row's
   * and column's. */
  int64_t k = a->shape[a->ndim - 1], kb = b->shape[b->ndim == 1 ? 0 : b->ndim - 2];
  char shape_a[OM_SHAPE_STR_LEN], shape_b[OM_SHAPE_STR_LEN];
  if ((a->ndim == 1 || b->ndim == 1) && k != kb)
    return om__fail(OM_ERR_SHAPE_MISMATCH, "matmul: shapes %s and %s do not match (%lld != %lld)", om__shape_str(shape_a, sizeof shape_a, a->shape, a->ndim),
                    om__shape_str(shape_b, sizeof shape_b, b->shape, b->ndim), (long long)k, (long long)kb), NULL;
  om_scope s = {0};
  om_tensor *x = a->ndim == 1 ? om__keep(&s, om_unsqueeze(a, 0)) : a;
  om_tensor *y = b->ndim == 1 ? om__keep(&s, om_unsqueeze(b, 1)) : b;
  om_tensor *r = x && y ? om__apply1(OM_OP_matmul, (om_tensor *[]){x, y}, 2, NULL) : NULL;
  if (r && (a->ndim == 1 || b->ndim == 1)) {
    int64_t dims[2];
    int n = 0;
    if (a->ndim == 1) dims[n++] = r->ndim - 2;
    if (b->ndim == 1) dims[n++] = r->ndim - 1;
    om_tensor *q = om_squeeze(om__keep(&s, r), dims, n);
    r = q;
  }
  om__scope_end(&s);
  return r;
}

/* ---- det(a [..., n, n]) -> [...]: the determinant of each matrix ----
 * Gaussian elimination with partial pivoting (the row of the largest magnitude in the column, the
 * first of equals), in double for float32 and float64, rounded once to the dtype: the product of
 * the pivots, negated per row swap. A 0 x 0 matrix's determinant is 1. */

static bool infer_det(om_call *c) {
  const om_tensor *a = c->in[0];
  char sh[OM_SHAPE_STR_LEN];
  if (a->dtype != OM_FLOAT32 && a->dtype != OM_FLOAT64) return om__fail(OM_ERR_DTYPE_MISMATCH, "det: takes float32 or float64, not %s", om_dtype_name(a->dtype));
  if (a->ndim < 2 || a->shape[a->ndim - 1] != a->shape[a->ndim - 2])
    return om__fail(OM_ERR_SHAPE_MISMATCH, "det: takes square matrices [..., n, n], got %s", om__shape_str(sh, sizeof sh, a->shape, a->ndim));
  c->out_meta[0] = (om_meta){.dtype = a->dtype, .ndim = a->ndim - 2};
  memcpy(c->out_meta[0].shape, a->shape, sizeof(int64_t) * (size_t)(a->ndim - 2));
  return true;
}

static double magnitude(double v) { return v < 0 ? -v : v; }

static bool forward_det(om_call *c) {
  om_tensor *a = c->in[0], *o = c->out[0];
  int64_t n = a->shape[a->ndim - 1], count = om_tensor_numel(o);
  om_tensor *dense = count && n ? om_contiguous(a) : NULL;
  double *m = dense ? om__alloc(sizeof(double) * (uint64_t)(n * n), "det") : NULL;
  if (count && n && !m) return om_tensor_release(dense), false;
  for (int64_t k = 0; k < count; k++) {
    for (int64_t e = 0; e < n * n; e++) m[e] = om__get_flat(dense, k * n * n + e);
    double det = 1;
    for (int64_t col = 0; col < n && det != 0; col++) {
      int64_t p = col; /* step: the pivot row */
      for (int64_t r = col + 1; r < n; r++)
        if (magnitude(m[r * n + col]) > magnitude(m[p * n + col])) p = r;
      if (p != col) {
        for (int64_t j = 0; j < n; j++) {
          double t = m[col * n + j];
          m[col * n + j] = m[p * n + j], m[p * n + j] = t;
        }
        det = -det;
      }
      double pivot = m[col * n + col];
      det *= pivot;
      if (pivot == 0) break;
      for (int64_t r = col + 1; r < n; r++) { /* step: the rows below lose their column entry */
        double f = m[r * n + col] / pivot;
        for (int64_t j = col + 1; j < n; j++) m[r * n + j] -= f * m[col * n + j];
      }
    }
    if (o->dtype == OM_FLOAT64) ((double *)om__data(o))[k] = det;
    else ((float *)om__data(o))[k] = (float)det;
  }
  free(m);
  om_tensor_release(dense);
  return true;
}

/* d det / d a[i, j] is the cofactor (-1)^(i + j) det(a without row i and column j): the minors
 * gathered with index_select into [..., n, n, n - 1, n - 1] and their det taken, so the gradient
 * is itself differentiable and defined where a is singular. */
static bool det_backward(const om_record *r, om_tensor *const *g, om_tensor **gin) {
  om_tensor *a = r->in[0];
  int nd = a->ndim;
  if (nd + 2 > OM_MAX_DIMS) return om__fail(OM_ERR_SHAPE_MISMATCH, "det backward: the minors of a %d-D input need %d dims (at most %d)", nd, nd + 2, OM_MAX_DIMS);
  int64_t n = a->shape[nd - 1], m = n ? n - 1 : 0;
  int64_t *idx = om__alloc(sizeof(int64_t) * (uint64_t)(n * m + 1), "det backward");
  float *sign = idx ? om__alloc_floats(n * n + 1, "det backward") : NULL;
  if (!sign) return free(idx), false;
  for (int64_t i = 0; i < n; i++) {
    for (int64_t k = 0, at = 0; k < n; k++)
      if (k != i) idx[i * m + at++] = k;
    for (int64_t j = 0; j < n; j++) sign[i * n + j] = (i + j) % 2 ? -1.0f : 1.0f;
  }
  om_scope s = {0};
  int64_t nm = n * m, shape[OM_MAX_DIMS + 2], perm[OM_MAX_DIMS + 2];
  om_tensor *rows_of = om__keep(&s, om_from_data(idx, &nm, 1, OM_INT64));
  om_tensor *rows = rows_of ? om__keep(&s, om_index_select(a, nd - 2, rows_of)) : NULL; /* [..., n m, n] */
  om_tensor *both = rows ? om__keep(&s, om_index_select(rows, nd - 1, rows_of)) : NULL; /* [..., n m, n m] */
  memcpy(shape, a->shape, sizeof(int64_t) * (size_t)(nd - 2));
  shape[nd - 2] = n, shape[nd - 1] = m, shape[nd] = n, shape[nd + 1] = m;
  for (int d = 0; d < nd - 2; d++) perm[d] = d;
  perm[nd - 2] = nd - 2, perm[nd - 1] = nd, perm[nd] = nd - 1, perm[nd + 1] = nd + 1; /* [..., i, j, row, column] */
  om_tensor *minors = both ? om__keep(&s, om_permute(om__keep(&s, om_reshape(both, shape, nd + 2)), perm, nd + 2)) : NULL;
  om_tensor *dets = minors ? om__keep(&s, om_det(minors)) : NULL;
  om_tensor *signs = dets ? om__keep(&s, om_cast(om__keep(&s, om_from_data(sign, (int64_t[]){n, n}, 2, OM_FLOAT32)), a->dtype)) : NULL;
  om_tensor *gg = signs ? om__keep(&s, om_unsqueeze(om__keep(&s, om_unsqueeze(g[0], nd - 2)), nd - 1)) : NULL;
  if (gg) gin[0] = om_mul(gg, om__keep(&s, om_mul(dets, signs)));
  om__scope_end(&s);
  free(idx), free(sign);
  return gin[0] != NULL;
}

static bool lower_det(om_lower *l, const om_call *c) { return om__lower_node(l, c, "Det", NULL, 0); }

const om_op_def om__op_det = {
    .name = "det", .n_in = 1, .n_out = 1, .saves = OM_SAVES_IN(0), .takes_float64 = true, .infer = infer_det, .forward = forward_det,
    .backward = det_backward, .lower = lower_det, .onnx = "Det",
    .test = {.n_in = 1, .ndims = {3}, .shapes = {{2, 3, 3}}, .lo = -2, .hi = 2}};

om_tensor *om_det(om_tensor *a) { return om__apply1(OM_OP_det, &a, 1, NULL); }

/* ---- einsum: one contraction, written as ONNX's one Einsum node ---- */

/* Attributes: i[0] = n (operands), then n + 1 sides (each operand's, then the output's), each
 * packed as its rank in bits 0-3 and label + 1 (0-51, letters renamed in order of first
 * appearance) in 6 bits per dim from bit 4 on. The form is the one ONNX's Einsum takes with no
 * rewriting: letters only (no '...'), no label twice in one operand or in the output, every
 * output label in some operand, and a label one size wherever it appears (no size-1 broadcast).
 * js/ops/linalg.js writes other equations, and computes every einsum eagerly, with its matmul
 * composition; this op is what a trace records, so the graph holds one node (docs/operators.md,
 * einsum). The kernel sums in double over the whole label space, output labels outermost. */
#define EINSUM_MAX_LABELS 26 /* the emitted equation renames labels to 'a'..'z' */

typedef struct einsum_eq {
  int n, nd[OM_MAX_INPUTS_INLINE + 1], label[OM_MAX_INPUTS_INLINE + 1][OM_MAX_DIMS], n_labels;
} einsum_eq;

static bool einsum_unpack(const om_attrs *a, int n_in, einsum_eq *e) {
  if (a->n_i < 1 || a->i[0] != n_in || n_in < 1 || n_in > OM_MAX_INPUTS_INLINE || a->n_i != n_in + 2)
    return om__fail(OM_ERR_INVALID_ARGUMENT, "einsum: %d operands and %d attributes (1 to %d operands, n + 2 attributes)", n_in, a->n_i,
                    OM_MAX_INPUTS_INLINE);
  e->n = n_in;
  e->n_labels = 0;
  for (int s = 0; s <= n_in; s++) {
    uint64_t v = (uint64_t)a->i[1 + s];
    e->nd[s] = (int)(v & 15);
    if (e->nd[s] > OM_MAX_DIMS || (v >> (4 + 6 * e->nd[s])))
      return om__fail(OM_ERR_INVALID_ARGUMENT, "einsum: side %d is not a packed list of at most %d labels", s, OM_MAX_DIMS);
    for (int d = 0; d < e->nd[s]; d++) {
      int l = (int)((v >> (4 + 6 * d)) & 63) - 1;
      if (l < 0 || l >= EINSUM_MAX_LABELS) return om__fail(OM_ERR_INVALID_ARGUMENT, "einsum: side %d has label %d (0 to 25)", s, l);
      for (int k = 0; k < d; k++)
        if (e->label[s][k] == l) return om__fail(OM_ERR_INVALID_ARGUMENT, "einsum: label %c is repeated in side %d", 'a' + l, s);
      e->label[s][d] = l;
      if (l >= e->n_labels) e->n_labels = l + 1;
    }
  }
  return true;
}

static bool infer_einsum(om_call *c) {
  einsum_eq e;
  if (!einsum_unpack(&c->attrs, c->n_in, &e)) return false;
  int64_t size[EINSUM_MAX_LABELS];
  for (int l = 0; l < EINSUM_MAX_LABELS; l++) size[l] = -1;
  for (int s = 0; s < e.n; s++) {
    const om_tensor *x = c->in[s];
    if (x->dtype != OM_FLOAT32) return om__fail(OM_ERR_DTYPE_MISMATCH, "einsum: operand %d is %s (float32 only)", s, om_dtype_name(x->dtype));
    if (x->ndim != e.nd[s]) return om__fail(OM_ERR_SHAPE_MISMATCH, "einsum: operand %d has %d dims, its subscripts %d", s, x->ndim, e.nd[s]);
    for (int d = 0; d < x->ndim; d++) {
      int l = e.label[s][d];
      if (size[l] >= 0 && size[l] != x->shape[d])
        return om__fail(OM_ERR_SHAPE_MISMATCH, "einsum: subscript %c has size %lld in operand %d and %lld before it", 'a' + l,
                        (long long)x->shape[d], s, (long long)size[l]);
      size[l] = x->shape[d];
    }
  }
  om_meta *m = &c->out_meta[0];
  *m = (om_meta){.dtype = OM_FLOAT32, .ndim = e.nd[e.n]};
  for (int d = 0; d < m->ndim; d++) {
    int l = e.label[e.n][d];
    if (size[l] < 0) return om__fail(OM_ERR_INVALID_ARGUMENT, "einsum: output subscript %c is in no operand", 'a' + l);
    m->shape[d] = size[l];
  }
  return true;
}

static bool forward_einsum(om_call *c) {
  einsum_eq e;
  if (!einsum_unpack(&c->attrs, c->n_in, &e)) return false;
  /* the label order of the loop: the output's labels, then the summed ones */
  int order[EINSUM_MAX_LABELS], n_order = 0, n_out = e.nd[e.n];
  int64_t size[EINSUM_MAX_LABELS] = {0}, stride[OM_MAX_INPUTS_INLINE][EINSUM_MAX_LABELS] = {{0}};
  bool used[EINSUM_MAX_LABELS] = {false};
  om_tensor *dense[OM_MAX_INPUTS_INLINE] = {0};
  bool ok = true;
  for (int s = 0; s < e.n; s++) {
    if (ok) ok = (dense[s] = om__dense(c->in[s], "einsum")) != NULL;
    for (int d = 0; ok && d < e.nd[s]; d++) size[e.label[s][d]] = c->in[s]->shape[d], stride[s][e.label[s][d]] = dense[s]->strides[d];
  }
  for (int d = 0; d < n_out; d++) order[n_order++] = e.label[e.n][d], used[e.label[e.n][d]] = true;
  for (int s = 0; s < e.n; s++)
    for (int d = 0; d < e.nd[s]; d++)
      if (!used[e.label[s][d]]) order[n_order++] = e.label[s][d], used[e.label[s][d]] = true;
  int64_t outer = 1, inner = 1;
  for (int k = 0; k < n_order; k++) *(k < n_out ? &outer : &inner) *= size[order[k]];
  float *out = (float *)om__data(c->out[0]);
  for (int64_t o = 0; ok && o < outer; o++) {
    int64_t idx[EINSUM_MAX_LABELS] = {0}, rem = o;
    for (int k = n_out - 1; k >= 0; k--) idx[order[k]] = rem % size[order[k]], rem /= size[order[k]];
    double acc = 0;
    for (int64_t t = 0; t < inner; t++) {
      rem = t;
      for (int k = n_order - 1; k >= n_out; k--) idx[order[k]] = rem % size[order[k]], rem /= size[order[k]];
      double p = 1;
      for (int s = 0; s < e.n; s++) {
        int64_t off = 0;
        for (int d = 0; d < e.nd[s]; d++) off += idx[e.label[s][d]] * stride[s][e.label[s][d]];
        p *= ((const float *)om__data(dense[s]))[off];
      }
      acc += p;
    }
    out[o] = (float)acc;
  }
  for (int s = 0; s < e.n; s++) om_tensor_release(dense[s]);
  return ok;
}

/* Operand k's gradient is itself an einsum: the output's gradient with the other operands, onto
 * k's labels that the output or another operand has; a label only k has was summed, so that
 * gradient is broadcast over it (reshape with size-1 dims, expand). */
static bool einsum_backward(const om_record *r, om_tensor *const *g, om_tensor **gin) {
  einsum_eq e;
  if (!einsum_unpack(&r->attrs, r->n_in, &e)) return false;
  bool ok = true;
  for (int k = 0; ok && k < e.n; k++) {
    if (!om__wants(r, k)) continue;
    om_tensor *ops[OM_MAX_INPUTS_INLINE];
    om_attrs a = {.n_i = e.n + 2, .i = {e.n}};
    int m = 0;
    uint64_t packed = (uint64_t)e.nd[e.n]; /* g: the output's labels */
    for (int d = 0; d < e.nd[e.n]; d++) packed |= (uint64_t)(e.label[e.n][d] + 1) << (4 + 6 * d);
    ops[m] = g[0], a.i[1 + m++] = (int64_t)packed;
    bool elsewhere[EINSUM_MAX_LABELS] = {false};
    for (int d = 0; d < e.nd[e.n]; d++) elsewhere[e.label[e.n][d]] = true;
    for (int s = 0; s < e.n; s++) {
      if (s == k) continue;
      ops[m] = r->in[s], a.i[1 + m++] = r->attrs.i[1 + s];
      for (int d = 0; d < e.nd[s]; d++) elsewhere[e.label[s][d]] = true;
    }
    int64_t keep_shape[OM_MAX_DIMS];
    int nk = 0;
    packed = 0;
    for (int d = 0; d < e.nd[k]; d++) {
      bool kept = elsewhere[e.label[k][d]];
      if (kept) packed |= (uint64_t)(e.label[k][d] + 1) << (4 + 6 * nk++);
      keep_shape[d] = kept ? r->in[k]->shape[d] : 1;
    }
    a.i[1 + m] = (int64_t)(packed | (uint64_t)nk);
    om_tensor *part = om__apply1(OM_OP_einsum, ops, m, &a);
    if (part && nk < e.nd[k]) { /* the labels only k has: broadcast back over them */
      om_tensor *shaped = om_reshape(part, keep_shape, e.nd[k]);
      om_tensor_release(part);
      part = shaped ? om_expand(shaped, r->in[k]->shape, e.nd[k]) : NULL;
      om_tensor_release(shaped);
    }
    ok = part != NULL;
    gin[k] = part;
  }
  return ok;
}

/* One Einsum node; the equation names the labels 'a'.. as renamed (so any letters in, lowercase out). */
static bool lower_einsum(om_lower *l, const om_call *c) {
  einsum_eq e;
  if (!einsum_unpack(&c->attrs, c->n_in, &e)) return false;
  char eq[(OM_MAX_DIMS + 1) * (OM_MAX_INPUTS_INLINE + 1) + 4];
  int n = 0;
  for (int s = 0; s <= e.n; s++) {
    if (s == e.n) eq[n++] = '-', eq[n++] = '>';
    else if (s) eq[n++] = ',';
    for (int d = 0; d < e.nd[s]; d++) eq[n++] = (char)('a' + e.label[s][d]);
  }
  eq[n] = 0;
  return om__lower_node(l, c, "Einsum", &OM_ATTR_STRING("equation", eq), 1);
}

#define EINSUM_SIDE3(a, b, c) (3 | (a + 1) << 4 | (b + 1) << 10 | (c + 1) << 16)
const om_op_def om__op_einsum = {
    .name = "einsum", .n_in = -1, .n_out = 1, .saves = OM_SAVES_IN(0) | OM_SAVES_IN(1) | OM_SAVES_IN(2) | OM_SAVES_IN(3), .infer = infer_einsum, .forward = forward_einsum, .backward = einsum_backward,
    .lower = lower_einsum, .onnx = "Einsum (letters without '...', no label repeated in an operand, no size-1 broadcast; "
                                   "other equations: their composition of permutes, matmuls and sums)",
    /* 'bij,bjk->bik' */
    .test = {.n_in = 2, .ndims = {3, 3}, .shapes = {{2, 3, 4}, {2, 4, 5}}, .lo = -1, .hi = 1,
             .attrs = {.n_i = 4, .i = {2, EINSUM_SIDE3(0, 1, 2), EINSUM_SIDE3(0, 2, 3), EINSUM_SIDE3(0, 1, 3)}}}};
#undef EINSUM_SIDE3
