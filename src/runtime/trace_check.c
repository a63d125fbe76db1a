/* The runtime's part in tracing: the Session as the tracer's graph runner (om_graph_runner,
 * src/internal.h). The tracer sits below the runtime and checks a graph it wrote (a loop rolled
 * into an ONNX Loop) by running it against the model run eagerly; it reaches the runtime only
 * through that seam, which the public om_trace_run fills in here, above both layers. */
#include "internal.h"

static void *session_open(const om_traced_model *m) { return om_session_create(m, NULL); }

static int session_run(void *s, om_tensor *const *inputs, int n_inputs, om_tensor **outputs, int max_outputs) {
  return om_session_run(s, inputs, n_inputs, outputs, max_outputs);
}

static void session_close(void *s) { om_session_release(s); }

static const om_graph_runner session_runner = {.open = session_open, .run = session_run, .close = session_close};

int om_trace_run(om_trace_fn fn, void *ctx, om_tensor **outputs, int max_outputs) {
  return om__trace_run(fn, ctx, outputs, max_outputs, &session_runner);
}
