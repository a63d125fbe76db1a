/* Table-driven tests over every row of the op table (src/ops/ops.def): each op has all its
 * parts, runs on its sample inputs, gives the same bits on non-contiguous views of the same
 * values, and (when differentiable) its backward agrees with central finite differences; and
 * the same on every empty variant of its sample (src/ops/sample.c) that the op takes. */
#include <ctype.h>
#include <stdlib.h>

#include "internal.h"
#include "om_test.h"

typedef struct sample {
  int n;
  om_tensor *in[OM_TEST_MAX_INPUTS];
  om_attrs attrs; /* the call's attributes */
} sample;

/* The op's sample inputs from its test settings (om__op_sample, shared with the JS oracle). */
static sample make_inputs(const om_op_def *def, int op) {
  sample s = {.n = def->test.n_in, .attrs = def->test.attrs};
  if (om__op_sample((om_op)op, s.in) != s.n) {
    FAILED("%s: sample inputs: %s", def->name, om_last_error_message());
    s.n = 0;
  }
  return s;
}

/* Empty variant k of the op's sample with its emptied axes at size (0, or 1 for the unit
 * twin); n is 0 past the last variant. */
static sample make_variant(const om_op_def *def, int op, int k, int64_t size) {
  sample s;
  s.n = om__op_sample_variant((om_op)op, k, size, s.in, &s.attrs);
  if (s.n < 0) {
    FAILED("%s: variant %d inputs: %s", def->name, k, om_last_error_message());
    s.n = 0;
  }
  return s;
}

/* Whether msg holds one of the '|'-separated parts of refusal (an op's empty_refusal). */
static bool declared(const char *refusal, const char *msg) {
  for (const char *p = refusal; p && *p;) {
    const char *bar = strchr(p, '|');
    char part[160];
    snprintf(part, sizeof part, "%.*s", bar ? (int)(bar - p) : (int)strlen(p), p);
    if (strstr(msg, part)) return true;
    p = bar ? bar + 1 : NULL;
  }
  return false;
}

/* The size an empty variant's twin gives the emptied axes: the smallest above 1 that no sample
 * shape or integer attribute uses, so the twin fits (broadcasts, matches a weight, an expand's
 * target) exactly where the empty variant fits by shape, and a refusal of the variant that the
 * twin does not share is the op refusing emptiness itself. (1 would broadcast where 0 does not.) */
static int64_t twin_size(const om_op_test *t) {
  for (int64_t v = 2;; v++) {
    bool used = false;
    for (int i = 0; i < t->n_in && !used; i++)
      for (int d = 0; d < t->ndims[i] && !used; d++) used = t->shapes[i][d] == v;
    for (int k = 0; k < t->attrs.n_i && !used; k++) used = t->attrs.i[k] == v || t->attrs.i[k] == -v;
    if (!used) return v;
  }
}

/* "[2,0,4] [4]": the inputs' shapes, for messages. */
static const char *shapes_str(const sample *s, char *buf, size_t cap) {
  size_t n = 0;
  buf[0] = 0;
  for (int i = 0; i < s->n && n + 1 < cap; i++) {
    char one[96];
    int64_t nd = om_tensor_ndim(s->in[i]);
    size_t m = 0;
    one[m++] = '[';
    for (int64_t d = 0; d < nd && m + 24 < sizeof one; d++)
      m += (size_t)snprintf(one + m, sizeof one - m, d ? ",%lld" : "%lld", (long long)om_tensor_shape(s->in[i])[d]);
    snprintf(one + m, sizeof one - m, "]");
    n += (size_t)snprintf(buf + n, cap - n, i ? " %s" : "%s", one);
  }
  return buf;
}

static void free_sample(sample *s) {
  for (int i = 0; i < s->n; i++) om_tensor_release(s->in[i]);
}

/* A copy of t with the same values laid out non-contiguously (transposed storage). */
static om_tensor *strided_copy(om_tensor *t) {
  int nd = om_tensor_ndim(t);
  if (nd < 2) return om_tensor_retain(t);
  om_tensor *tr = om_transpose(t, nd - 2, nd - 1), *c = om_clone(tr);
  om_tensor *back = om_transpose(c, nd - 2, nd - 1);
  om_tensor_release(tr);
  om_tensor_release(c);
  return back;
}

static bool same_bits(om_tensor *a, om_tensor *b) {
  if (!a || !b || om_tensor_numel(a) != om_tensor_numel(b) || om_tensor_dtype(a) != om_tensor_dtype(b)) return false;
  size_t n = (size_t)om_tensor_numel(a) * om_dtype_size(om_tensor_dtype(a));
  char *x = malloc(n + 1), *y = malloc(n + 1);
  bool same = om_tensor_read(a, x) && om_tensor_read(b, y) && memcmp(x, y, n) == 0;
  free(x);
  free(y);
  return same;
}

/* Whether text cites a document or tracker the user does not have ("spec 2", "issue 27"): the
 * word followed by anything but a letter (not "special", "issued"). */
static bool cites_internal(const char *text) {
  for (const char *w = text; *w; w++)
    for (int k = 0; k < 2; k++) {
      const char *word = k ? "issue" : "spec";
      size_t n = strlen(word);
      size_t i = 0;
      while (i < n && tolower((unsigned char)w[i]) == word[i]) i++;
      if (i == n && (w == text || !isalpha((unsigned char)w[-1])) && !isalpha((unsigned char)w[n])) return true;
    }
  return false;
}

TEST(every_op_has_its_parts) {
  CHECK(om__ops_self_check()); /* the same check debug builds run before their first op */
  for (int op = 0; op < OM_OP_COUNT; op++) {
    if (strcmp(om_op_name(op), om__ops[op]->name)) FAILED("op %d: table name %s", op, om__ops[op]->name);
    /* the lowering cell is docs/operators.md's, read by users: it says why in their terms */
    if (om__ops[op]->onnx && cites_internal(om__ops[op]->onnx)) FAILED("%s: its ONNX cell cites an internal reference: %s", om__ops[op]->name, om__ops[op]->onnx);
  }
  CHECK(cites_internal("refused (spec 2)") && cites_internal("see issue 27") && !cites_internal("special values, specs"));
}

/* The op on s and on non-contiguous copies of s: both succeed with the same bits. */
static void check_layouts(int op, sample *s, const char *what) {
  const om_op_def *def = om__ops[op];
  if (def->test.layout_dependent) return;
  sample v = {.n = s->n};
  for (int i = 0; i < s->n; i++) v.in[i] = strided_copy(s->in[i]);
  om_tensor *a[OM_MAX_OUTPUTS] = {0}, *b[OM_MAX_OUTPUTS] = {0};
  int na = om__apply((om_op)op, s->in, s->n, &s->attrs, a);
  int nb = om__apply((om_op)op, v.in, v.n, &s->attrs, b);
  if (na != def->n_out || nb != def->n_out) FAILED("%s: %s call failed: %s", def->name, what, om_last_error_message());
  for (int j = 0; j < na && j < nb; j++)
    if (!same_bits(a[j], b[j])) FAILED("%s: %s: output %d differs on non-contiguous inputs", def->name, what, j);
  om__release_all(a, na > 0 ? na : 0);
  om__release_all(b, nb > 0 ? nb : 0);
  free_sample(&v);
}

TEST(every_op_runs_and_is_layout_independent) {
  for (int op = 0; op < OM_OP_COUNT; op++) {
    sample s = make_inputs(om__ops[op], op);
    check_layouts(op, &s, "sample");
    free_sample(&s);
  }
}

/* sum over float outputs of out_j * w_j, in double, for the given inputs (no grad). */
static double weighted_loss(int op, sample *s, om_tensor *const *w) {
  om_tensor *out[OM_MAX_OUTPUTS] = {0};
  bool prev = om_set_grad_enabled(false);
  int n = om__apply((om_op)op, s->in, s->n, &s->attrs, out);
  om_set_grad_enabled(prev);
  double total = 0;
  for (int j = 0; j < n; j++) {
    if (om_tensor_dtype(out[j]) != OM_FLOAT32) continue;
    for (int64_t k = 0; k < om_tensor_numel(out[j]); k++) total += at(out[j], k) * at(w[j], k);
  }
  om__release_all(out, n > 0 ? n : 0);
  return total;
}

/* Backward of sum_j(out_j * w_j) on s against central differences, element by element (the
 * first 3 misses of each input reported); what names the sample in messages. */
static void gradcheck(int op, sample *sp, const char *what) {
  const om_op_def *def = om__ops[op];
  sample s = *sp;
  om_tensor *out[OM_MAX_OUTPUTS] = {0}, *w[OM_MAX_OUTPUTS] = {0};
  for (int i = 0; i < s.n; i++)
    if (om_tensor_dtype(s.in[i]) == OM_FLOAT32) om_tensor_set_requires_grad(s.in[i], true);
  int n = om__apply((om_op)op, s.in, s.n, &s.attrs, out);
  om_tensor *loss = NULL;
  for (int j = 0; j < n; j++) {
    if (om_tensor_dtype(out[j]) != OM_FLOAT32) continue;
    w[j] = om_rand(om_tensor_shape(out[j]), om_tensor_ndim(out[j]), (uint64_t)(1000 + op * 4 + j), true);
    om_tensor *p = om_mul(out[j], w[j]), *sum = om_sum(p, NULL, 0, false);
    om_tensor *next = loss ? om_add(loss, sum) : om_tensor_retain(sum);
    om_tensor_release(loss);
    om_tensor_release(p);
    om_tensor_release(sum);
    loss = next;
  }
  if (!loss || !om_backward(loss, NULL)) FAILED("%s: %s: backward failed: %s", def->name, what, om_last_error_message());
  const double eps = 1e-3;
  for (int i = 0; loss && i < s.n; i++) {
    if (om_tensor_dtype(s.in[i]) != OM_FLOAT32) continue;
    om_tensor *g = om_tensor_grad(s.in[i]);
    int worst = 0;
    for (int64_t k = 0; k < om_tensor_numel(s.in[i]) && worst < 3; k++) {
      int64_t idx[OM_MAX_DIMS], rem = k;
      for (int d = om_tensor_ndim(s.in[i]) - 1; d >= 0; d--) {
        idx[d] = rem % om_tensor_shape(s.in[i])[d];
        rem /= om_tensor_shape(s.in[i])[d];
      }
      double x0 = at(s.in[i], k);
      bool prev = om_set_grad_enabled(false);
      om_tensor_set(s.in[i], idx, x0 + eps);
      double up = weighted_loss(op, &s, w);
      om_tensor_set(s.in[i], idx, x0 - eps);
      double down = weighted_loss(op, &s, w);
      om_tensor_set(s.in[i], idx, x0);
      om_set_grad_enabled(prev);
      double numeric = (up - down) / (2 * eps), analytic = g ? at(g, k) : 0;
      if (isnan(up) && isnan(down)) { /* a NaN loss (a mean of nothing) has no slope to compare */
        if (!isfinite(analytic)) FAILED("%s: %s: d/d input %d [%lld]: analytic %.6g", def->name, what, i, (long long)k, analytic);
        continue;
      }
      if (!(fabs(numeric - analytic) <= 5e-3 + 1e-2 * fabs(numeric))) {
        FAILED("%s: %s: d/d input %d [%lld]: analytic %.6g, numeric %.6g", def->name, what, i, (long long)k, analytic, numeric);
        worst++;
      }
    }
    om_tensor_release(g);
  }
  om_tensor_release(loss);
  om__release_all(out, n > 0 ? n : 0);
  om__release_all(w, OM_MAX_OUTPUTS);
}

TEST(every_differentiable_op_passes_gradcheck) {
  for (int op = 0; op < OM_OP_COUNT; op++) {
    if (om__ops[op]->test.no_gradcheck) continue;
    sample s = make_inputs(om__ops[op], op);
    gradcheck(op, &s, "sample");
    free_sample(&s);
  }
}

/* Every empty variant of every op's sample (src/ops/sample.c). One the op takes runs (under the
 * ASan build too: nothing read out of bounds), is layout independent, and its backward agrees
 * with finite differences: a non-empty input (a weight, with a batch of 0) gets gradient 0, an
 * empty one an empty gradient, a reduction of nothing passes the gradient to the rest. One it
 * refuses is refused by its twin too (twin_size: the shapes do not fit), or else with a refusal
 * the op's settings declare (PyTorch's); and a declared refusal must be met. The values are checked
 * against onnxruntime-web in tests/js/trace-oracle.test.mjs and by the family tests. */
TEST(every_op_on_empty_inputs) {
  int taken = 0, variants = 0;
  for (int op = 0; op < OM_OP_COUNT; op++) {
    const om_op_def *def = om__ops[op];
    bool declared_met = false;
    int op_taken = 0;
    for (int k = 1;; k++) {
      sample s = make_variant(def, op, k, 0);
      if (!s.n) break;
      char what[256], shapes[200];
      snprintf(what, sizeof what, "empty variant %d (%s)", k, shapes_str(&s, shapes, sizeof shapes));
      variants++;
      om_tensor *out[OM_MAX_OUTPUTS] = {0};
      int n = om__apply((om_op)op, s.in, s.n, &s.attrs, out);
      if (n >= 0) {
        om__release_all(out, n);
        op_taken++;
        check_layouts(op, &s, what);
        if (!def->test.no_gradcheck) gradcheck(op, &s, what);
      } else {
        char msg[512];
        snprintf(msg, sizeof msg, "%s", om_last_error_message());
        if (strncmp(msg, def->name, strlen(def->name)) || om_last_error() == OM_ERR_OUT_OF_MEMORY)
          FAILED("%s: %s: refused with an error that does not name the op, or OutOfMemory: %s", def->name, what, msg);
        sample unit = make_variant(def, op, k, twin_size(&def->test));
        om_tensor *uout[OM_MAX_OUTPUTS] = {0};
        int un = unit.n ? om__apply((om_op)op, unit.in, unit.n, &unit.attrs, uout) : -1;
        if (un >= 0) {
          om__release_all(uout, un);
          if (declared(def->test.empty_refusal, msg)) declared_met = true;
          else FAILED("%s: %s refused, but its twin at size %lld runs: %s", def->name, what, (long long)twin_size(&def->test), msg);
        }
        free_sample(&unit);
      }
      free_sample(&s);
    }
    if (def->test.empty_refusal && !declared_met)
      FAILED("%s: declares the empty refusal \"%s\", which none of its empty variants meets", def->name, def->test.empty_refusal);
    if (!op_taken) FAILED("%s: takes none of its empty variants", def->name);
    taken += op_taken;
  }
  printf("  %d empty variants, %d taken\n", variants, taken);
}

/* dft sums in double: a real ramp's transform against a float64 sum (libm's angles) within a
 * float32 rounding of each output and 1e-12, where float32 sums miss the cancelling parts by
 * 1e-5; cut and padded lengths, inverse, onesided; and every error with its kind. */
TEST(dft_sums_in_double) {
  float ramp[20];
  for (int k = 0; k < 20; k++) ramp[k] = (float)(k % 10) + (float)(k / 10) * 0.25f;
  om_tensor *x = om_from_data(ramp, (int64_t[]){2, 10, 1}, 3, OM_FLOAT32);
  const int64_t lens[3] = {10, 7, 13};
  for (int form = 0; form < 5; form++) {
    int64_t L = lens[form % 3];
    bool inverse = form == 3, onesided = form == 4;
    om_tensor *y = om_dft(x, L, inverse, onesided);
    int64_t K = onesided ? L / 2 + 1 : L;
    CHECK(y && y->ndim == 3 && y->shape[0] == 2 && y->shape[1] == K && y->shape[2] == 2);
    om_tensor *yc = y ? om_contiguous(y) : NULL;
    const float *v = yc ? (const float *)om__data(yc) : NULL;
    for (int64_t b = 0; v && b < 2; b++)
      for (int64_t k = 0; k < K; k++) {
        double re = 0, im = 0;
        for (int64_t j = 0; j < (L < 10 ? L : 10); j++) {
          double a = (inverse ? 2 : -2) * 3.14159265358979323846 * (double)(j * k % L) / (double)L;
          re += ramp[b * 10 + j] * cos(a), im += ramp[b * 10 + j] * sin(a);
        }
        if (inverse) re /= (double)L, im /= (double)L;
        CHECK_NEAR(v[(b * K + k) * 2], re, 1e-12 + 1e-7 * fabs(re));
        CHECK_NEAR(v[(b * K + k) * 2 + 1], im, 1e-12 + 1e-7 * fabs(im));
      }
    om_tensor_release(yc);
    om_tensor_release(y);
  }
  om_tensor *i = om_zeros((int64_t[]){2, 1}, 2, OM_INT64), *flat = om_zeros((int64_t[]){3}, 1, OM_FLOAT32), *cx = om_zeros((int64_t[]){4, 2}, 2, OM_FLOAT32);
  CHECK_ERROR(om_dft(i, 2, false, false) != NULL, OM_ERR_DTYPE_MISMATCH, "dft: takes float32, not int64");
  CHECK_ERROR(om_dft(flat, 2, false, false) != NULL, OM_ERR_SHAPE_MISMATCH, "dft: the input must have 2 or more dims, the last of size 1 (real) or 2 (complex), got [3]");
  CHECK_ERROR(om_dft(x, 0, false, false) != NULL, OM_ERR_INVALID_ARGUMENT, "dft: length 0 (1 to 2^30)");
  CHECK_ERROR(om_dft(x, (int64_t)1 << 31, false, false) != NULL, OM_ERR_INVALID_ARGUMENT, "dft: length 2147483648 (1 to 2^30)");
  CHECK_ERROR(om_dft(x, 4, true, true) != NULL, OM_ERR_INVALID_ARGUMENT, "dft: onesided takes a real input and no inverse");
  CHECK_ERROR(om_dft(cx, 4, false, true) != NULL, OM_ERR_INVALID_ARGUMENT, "dft: onesided takes a real input and no inverse");
  om_tensor_release(i), om_tensor_release(flat), om_tensor_release(cx), om_tensor_release(x);
}

/* det: known determinants (a row swap's sign, a singular matrix's 0, a 0 x 0 matrix's 1, float64
 * kept in double), its gradient (the cofactors) where a is singular, and every error path. */
TEST(det_by_elimination) {
  const float m[3][9] = {{2, 0, 0, 0, 3, 0, 0, 0, 4}, {0, 1, 0, 1, 0, 0, 0, 0, 1}, {1, 2, 3, 2, 4, 6, 0, 1, 5}};
  om_tensor *a = om_from_data(m, (int64_t[]){3, 3, 3}, 3, OM_FLOAT32), *d = om_det(a);
  CHECK(d && d->ndim == 1 && d->shape[0] == 3);
  const float *v = d ? (const float *)om__data(d) : NULL;
  if (v) CHECK(v[0] == 24 && v[1] == -1 && v[2] == 0);
  const double big[4] = {1e10, 1, 1, 1e-10 + 1e-20};
  om_tensor *a64 = om_from_data(big, (int64_t[]){2, 2}, 2, OM_FLOAT64), *d64 = om_det(a64);
  CHECK(d64 && d64->ndim == 0 && d64->dtype == OM_FLOAT64);
  if (d64) CHECK_NEAR(((const double *)om__data(d64))[0], 1e10 * (1e-10 + 1e-20) - 1, 1e-15);
  om_tensor *e = om_zeros((int64_t[]){2, 0, 0}, 3, OM_FLOAT32), *de = om_det(e);
  CHECK(de && de->shape[0] == 2 && ((const float *)om__data(de))[0] == 1 && ((const float *)om__data(de))[1] == 1);
  /* d det / d a of the singular third matrix: its cofactors, e.g. (0,0): 4 5 - 6 1 = 14 */
  om_tensor *s = om_select(a, 0, 2), *leaf = s ? om_contiguous(s) : NULL;
  om_tensor_set_requires_grad(leaf, true);
  om_tensor *ds = om_det(leaf);
  CHECK(ds && om_backward(ds, NULL));
  om_tensor *g = om_tensor_grad(leaf);
  const float cof[9] = {14, -10, 2, -7, 5, -1, 0, 0, 0};
  for (int k = 0; g && k < 9; k++) CHECK_NEAR(((const float *)om__data(g))[k], cof[k], 1e-6);
  om_tensor *i = om_zeros((int64_t[]){2, 2}, 2, OM_INT64), *rect = om_zeros((int64_t[]){2, 3}, 2, OM_FLOAT32), *vec = om_zeros((int64_t[]){3}, 1, OM_FLOAT32);
  CHECK_ERROR(om_det(i) != NULL, OM_ERR_DTYPE_MISMATCH, "det: takes float32 or float64, not int64");
  CHECK_ERROR(om_det(rect) != NULL, OM_ERR_SHAPE_MISMATCH, "det: takes square matrices [..., n, n], got [2,3]");
  CHECK_ERROR(om_det(vec) != NULL, OM_ERR_SHAPE_MISMATCH, "det: takes square matrices [..., n, n], got [3]");
  om_tensor_release(g), om_tensor_release(ds), om_tensor_release(leaf), om_tensor_release(s);
  om_tensor_release(i), om_tensor_release(rect), om_tensor_release(vec), om_tensor_release(e), om_tensor_release(de);
  om_tensor_release(a64), om_tensor_release(d64), om_tensor_release(d), om_tensor_release(a);
}

int main(void) {
  RUN(every_op_has_its_parts);
  RUN(every_op_runs_and_is_layout_independent);
  RUN(every_differentiable_op_passes_gradcheck);
  RUN(every_op_on_empty_inputs);
  RUN(dft_sums_in_double);
  RUN(det_by_elimination);
  TEST_MAIN_END();
}
