/* Table-driven tests over every row of the op table (src/ops/ops.def): each op has all its
 * parts, runs on its sample inputs, gives the same bits on non-contiguous views of the same
 * values, and (when differentiable) its backward agrees with central finite differences. */
#include <stdlib.h>

#include "internal.h"
#include "om_test.h"

typedef struct sample {
  int n;
  om_tensor *in[OM_TEST_MAX_INPUTS];
} sample;

/* The op's sample inputs from its test settings (om__op_sample, shared with the JS oracle). */
static sample make_inputs(const om_op_def *def, int op) {
  sample s = {.n = def->test.n_in};
  if (om__op_sample((om_op)op, s.in) != s.n) {
    FAILED("%s: sample inputs: %s", def->name, om_last_error_message());
    s.n = 0;
  }
  return s;
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

TEST(every_op_has_its_parts) {
  CHECK(om__ops_self_check()); /* the same check debug builds run before their first op */
  for (int op = 0; op < OM_OP_COUNT; op++)
    if (strcmp(om_op_name(op), om__ops[op]->name)) FAILED("op %d: table name %s", op, om__ops[op]->name);
}

TEST(every_op_runs_and_is_layout_independent) {
  for (int op = 0; op < OM_OP_COUNT; op++) {
    const om_op_def *def = om__ops[op];
    sample s = make_inputs(def, op), v = {.n = s.n};
    for (int i = 0; i < s.n; i++) v.in[i] = strided_copy(s.in[i]);
    om_tensor *a[OM_MAX_OUTPUTS] = {0}, *b[OM_MAX_OUTPUTS] = {0};
    int na = om__apply((om_op)op, s.in, s.n, &def->test.attrs, a);
    int nb = om__apply((om_op)op, v.in, v.n, &def->test.attrs, b);
    if (na != def->n_out || nb != def->n_out) FAILED("%s: sample call failed: %s", def->name, om_last_error_message());
    for (int j = 0; j < na && j < nb; j++)
      if (!same_bits(a[j], b[j])) FAILED("%s: output %d differs on non-contiguous inputs", def->name, j);
    om__release_all(a, na > 0 ? na : 0);
    om__release_all(b, nb > 0 ? nb : 0);
    free_sample(&s);
    free_sample(&v);
  }
}

/* sum over float outputs of out_j * w_j, in double, for the given inputs (no grad). */
static double weighted_loss(int op, sample *s, om_tensor *const *w) {
  const om_op_def *def = om__ops[op];
  om_tensor *out[OM_MAX_OUTPUTS] = {0};
  bool prev = om_set_grad_enabled(false);
  int n = om__apply((om_op)op, s->in, s->n, &def->test.attrs, out);
  om_set_grad_enabled(prev);
  double total = 0;
  for (int j = 0; j < n; j++) {
    if (om_tensor_dtype(out[j]) != OM_FLOAT32) continue;
    for (int64_t k = 0; k < om_tensor_numel(out[j]); k++) total += at(out[j], k) * at(w[j], k);
  }
  om__release_all(out, n > 0 ? n : 0);
  return total;
}

static void gradcheck(int op) {
  const om_op_def *def = om__ops[op];
  sample s = make_inputs(def, op);
  om_tensor *out[OM_MAX_OUTPUTS] = {0}, *w[OM_MAX_OUTPUTS] = {0};
  for (int i = 0; i < s.n; i++)
    if (om_tensor_dtype(s.in[i]) == OM_FLOAT32) om_tensor_set_requires_grad(s.in[i], true);
  int n = om__apply((om_op)op, s.in, s.n, &def->test.attrs, out);
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
  if (!loss || !om_backward(loss, NULL)) FAILED("%s: backward failed: %s", def->name, om_last_error_message());
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
      if (!(fabs(numeric - analytic) <= 5e-3 + 1e-2 * fabs(numeric))) {
        FAILED("%s: d/d input %d [%lld]: analytic %.6g, numeric %.6g", def->name, i, (long long)k, analytic, numeric);
        worst++;
      }
    }
    om_tensor_release(g);
  }
  om_tensor_release(loss);
  om__release_all(out, n > 0 ? n : 0);
  om__release_all(w, OM_MAX_OUTPUTS);
  free_sample(&s);
}

TEST(every_differentiable_op_passes_gradcheck) {
  for (int op = 0; op < OM_OP_COUNT; op++)
    if (!om__ops[op]->test.no_gradcheck) gradcheck(op);
}

int main(void) {
  RUN(every_op_has_its_parts);
  RUN(every_op_runs_and_is_layout_independent);
  RUN(every_differentiable_op_passes_gradcheck);
  TEST_MAIN_END();
}
