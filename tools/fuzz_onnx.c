/* The libFuzzer harness of the readers (ONNX and the library format v1) and the Session
 * (tools/fuzz_onnx.sh builds and runs it): each input is taken as a model file (om_session_open
 * tells the two formats apart by the magic). Reading it must give a session or a Format /
 * Unsupported / OutOfMemory error; a session is then run on zeros of its inputs' shapes, a named
 * or unknown axis at 2, then at 1 (a second plan, made after the first succeeded or failed),
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
  if (n < 0 || n > 16) return;
  om_tensor *in[16] = {0}, *out[64] = {0};
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
    ok = ok && (in[i] = om_zeros(shape, ndim, dtype)) != NULL;
  }
  int k = ok ? om_session_run(s, in, n, out, 64) : -1;
  if (k < 0 && ok && om_last_error() == OM_ERR_OK) fail("a run failed without an error");
  for (int j = 0; j < k; j++) om_tensor_release(out[j]);
  for (int i = 0; i < n; i++) om_tensor_release(in[i]);
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
