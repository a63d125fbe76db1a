/* The libFuzzer harness of the readers (ONNX and the library format v1 and v2) and the Session
 * (tools/fuzz_onnx.sh builds and runs it): each input is taken as a model file (om_session_open
 * tells the two formats apart by the magic). Reading it must give a session or a Format /
 * Unsupported / OutOfMemory error; a session is then run on zeros of its inputs' shapes (an input
 * of strings on strings of ASCII and UTF-8 letters, digits, spaces and punctuation), a named or
 * unknown axis at 2, then at 1 (a second plan, made after the first succeeded or failed),
 * each of which must give outputs or an error. Anything else (a crash, an
 * ASan or UBSan report, another error kind, a tensor or byte left alive) stops the fuzzer with
 * the input that did it. */
#include <stdio.h>
#include <stdlib.h>

#include "onemodel.h"

static void fail(const char *what) {
  fprintf(stderr, "fuzz_onnx: %s (last error %s: %s)\n", what, om_error_kind_name(om_last_error()), om_last_error_message());
  abort();
}

static void run_once(om_session *s, int64_t axis) {
  om_clear_error();
  int n = om_session_count(s, false);
  if (n < 0 || n > 16 || om_session_count(s, true) > 64) return;
  om_tensor *in[16] = {0}, *out[64] = {0};
  om_strings *strings[16] = {0}, *out_strings[64] = {0};
  int counts[16], out_counts[64];
  static const char *const words[] = {"Monday a-b", "", "3.5", "\xc3\xa9t\xc3\xa9 x.y@gmail.com"};
  const char *elems[4096];
  bool ok = true;
  for (int i = 0; ok && i < n; i++) {
    om_dtype dtype;
    int ndim;
    int64_t shape[OM_MAX_DIMS], numel = 1;
    ok = om_session_input_info(s, i, &dtype, &ndim, shape, NULL);
    for (int d = 0; ok && d < ndim; d++) {
      if (shape[d] < 0) shape[d] = axis;
      numel *= shape[d] < 4096 ? shape[d] : 4096;
      ok = numel <= (1 << 16);
    }
    bool str = om_session_elem_type(s, false, i) == 8;
    for (int64_t e = 0; str && e < numel && e < 4096; e++) elems[e] = words[e % 4];
    counts[i] = str ? OM_SESSION_STRINGS : -1;
    if (str) ok = ok && numel <= 4096 && (strings[i] = om_strings_new(ndim, shape, elems, NULL)) != NULL;
    else ok = ok && (in[i] = om_zeros(shape, ndim, dtype)) != NULL;
  }
  om_tensor *fed[16];
  int n_fed = 0;
  for (int i = 0; ok && i < n; i++)
    if (in[i]) fed[n_fed++] = in[i];
  int k = ok ? om_session_run_values(s, fed, counts, strings, n, out, 64, out_counts, out_strings) : -1;
  if (k < 0 && ok && om_last_error() == OM_ERR_OK) fail("a run failed without an error");
  for (int j = 0; j < k; j++) om_tensor_release(out[j]);
  for (int j = 0; k >= 0 && j < om_session_count(s, true); j++) om_strings_release(out_strings[j]);
  for (int i = 0; i < n; i++) om_tensor_release(in[i]), om_strings_release(strings[i]);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);
int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size) {
  om_clear_error();
  om_session *s = om_session_open(data, size, NULL);
  if (!s) {
    om_error_kind k = om_last_error();
    if (k != OM_ERR_FORMAT && k != OM_ERR_UNSUPPORTED && k != OM_ERR_OUT_OF_MEMORY) fail("create failed with an unexpected kind");
  } else {
    run_once(s, 2);
    run_once(s, 1);
    om_session_release(s);
  }
  om_clear_error();
  if (om_live_tensors() || om_live_bytes()) fail("tensors or bytes left alive");
  return 0;
}
