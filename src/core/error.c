/* Per-thread state and the last-error record. Errors never abort: a failing call sets the
 * thread's error here and returns NULL/false; a pending error is kept by later NULL inputs. */
#include <stdio.h>
#include <string.h>

#include "internal.h"

static _Thread_local om_thread_state thread_state;

om_thread_state *om__state(void) { return &thread_state; }

static const char *const kind_names[OM_ERR_COUNT] = {
#define OM_ERROR(name, js, doc) js,
#include "core/errors.def"
#undef OM_ERROR
};

om_error_kind om_last_error(void) { return thread_state.err_kind; }

const char *om_last_error_message(void) { return thread_state.err_msg; }

void om_clear_error(void) {
  thread_state.err_kind = OM_ERR_OK;
  thread_state.err_msg[0] = '\0';
}

void om_set_error(om_error_kind kind, const char *message) {
  om__fail(kind >= 0 && kind < OM_ERR_COUNT ? kind : OM_ERR_INVALID_ARGUMENT, "%s", message ? message : "");
}

const char *om_error_kind_name(int kind) {
  return kind >= 0 && kind < OM_ERR_COUNT ? kind_names[kind] : NULL;
}

bool om_error_kind_is_trace(int kind) {
  return kind >= OM_ERR_TRACE_UNSUPPORTED_OPERATION && kind < OM_ERR_COUNT;
}

bool om__fail(om_error_kind kind, const char *fmt, ...) {
  thread_state.err_kind = kind;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(thread_state.err_msg, sizeof thread_state.err_msg, fmt, ap);
  va_end(ap);
  return false;
}

const char *om__shape_str(char *buf, size_t len, const int64_t *shape, int ndim) {
  size_t n = (size_t)snprintf(buf, len, "[");
  for (int d = 0; d < ndim && n < len; d++)
    n += (size_t)snprintf(buf + n, len - n, d ? ",%lld" : "%lld", (long long)shape[d]);
  if (n < len) snprintf(buf + n, len - n, "]");
  return buf;
}

bool om__check_inputs(const char *who, om_tensor *const *ts, int n) {
  for (int k = 0; k < n; k++) {
    if (ts[k]) continue;
    if (thread_state.err_kind == OM_ERR_OK)
      om__fail(OM_ERR_INVALID_ARGUMENT, "%s: input %d is NULL", who, k);
    return false;
  }
  return true;
}
