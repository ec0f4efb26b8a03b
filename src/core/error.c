/* Status names and the thread-local error message. */
#include "core/error.h"

#include <stdio.h>
#include <string.h>

static _Thread_local char last_message[SG_ERROR_MESSAGE_BYTES];

static const struct {
  const char *name;
  const char *text;
} status_table[SG_STATUS_COUNT_] = {
    [SG_OK] = {"SG_OK", "success"},
    [SG_NOT_READY] = {"SG_NOT_READY", "work is still in flight"},
    [SG_ERR_INVALID_ARGUMENT] = {"SG_ERR_INVALID_ARGUMENT", "invalid argument"},
    [SG_ERR_INVALID_HANDLE] = {"SG_ERR_INVALID_HANDLE", "invalid, destroyed or wrong-type handle"},
    [SG_ERR_OUT_OF_MEMORY] = {"SG_ERR_OUT_OF_MEMORY", "out of host memory"},
    [SG_ERR_INVALID_COPY] = {"SG_ERR_INVALID_COPY", "copy kind does not match the pointers' memory"},
    [SG_ERR_INVALID_LAUNCH] = {"SG_ERR_INVALID_LAUNCH", "kernel launch shape out of range"},
    [SG_ERR_INVALID_KERNEL_ARGS] = {"SG_ERR_INVALID_KERNEL_ARGS", "too many or too large kernel arguments"},
    [SG_ERR_FOREIGN_NODE] = {"SG_ERR_FOREIGN_NODE", "node belongs to another graph"},
    [SG_ERR_SELF_EDGE] = {"SG_ERR_SELF_EDGE", "edge from a node to itself"},
    [SG_ERR_CYCLE] = {"SG_ERR_CYCLE", "dependencies form a cycle"},
    [SG_ERR_BACKEND_UNAVAILABLE] = {"SG_ERR_BACKEND_UNAVAILABLE", "backend not available"},
    [SG_ERR_NO_HOST_TWIN] = {"SG_ERR_NO_HOST_TWIN", "node has no host twin for the host backend"},
    [SG_ERR_EXEC_FAILED] = {"SG_ERR_EXEC_FAILED", "executable failed earlier"},
    [SG_ERR_CALLBACK] = {"SG_ERR_CALLBACK", "a callback reported an error"},
    [SG_ERR_CUDA] = {"SG_ERR_CUDA", "CUDA runtime error"},
    [SG_ERR_SYSTEM] = {"SG_ERR_SYSTEM", "operating-system call failed"},
    [SG_ERR_POOL_EXHAUSTED] = {"SG_ERR_POOL_EXHAUSTED", "pinned pool exhausted"},
    [SG_ERR_WOULD_BLOCK] = {"SG_ERR_WOULD_BLOCK", "the call would block"},
    [SG_ERR_UNSUPPORTED] = {"SG_ERR_UNSUPPORTED", "not supported by this build or backend"},
    [SG_ERR_STOPPED] = {"SG_ERR_STOPPED", "stopped by an earlier error"},
    [SG_ERR_COMPILE] = {"SG_ERR_COMPILE", "the run-time compiler rejected the source"},
    [SG_ERR_BUSY] = {"SG_ERR_BUSY", "in use by another call (another thread, or a callback's own caller)"},
};

const char *sg_status_name(sg_status status) {
  if ((unsigned)status >= SG_STATUS_COUNT_) return "SG_STATUS_UNKNOWN";
  return status_table[status].name;
}

const char *sg_status_describe(sg_status status) {
  if ((unsigned)status >= SG_STATUS_COUNT_) return "unknown status";
  return status_table[status].text;
}

const char *sg_last_error(void) { return last_message; }

sg_status sg__failv(sg_status status, const char *fmt, va_list ap) {
  /* Formatted aside first: an argument may be this thread's message itself
   * (passing an error on: sg__fail(st, "%s", sg_last_error())), and
   * vsnprintf must not read from the buffer it writes. */
  char text[sizeof last_message];
  vsnprintf(text, sizeof text, fmt, ap);
  memcpy(last_message, text, sizeof text);
  return status;
}

sg_status sg__fail(sg_status status, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  sg__failv(status, fmt, ap);
  va_end(ap);
  return status;
}

void sg__format(char *buf, size_t cap, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, cap, fmt, ap);
  va_end(ap);
}
