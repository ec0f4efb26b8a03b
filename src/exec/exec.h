/* Internal: what the executable front end offers the layers above it that
 * are not backends (the pipeline), and its own files. Backends include
 * exec/backend.h instead. */
#ifndef SG_EXEC_EXEC_H
#define SG_EXEC_EXEC_H

#include "streamgraph/exec.h"

/* The stream limit an executable or plan gets when the caller gives none:
 * CUDA_DEVICE_MAX_CONNECTIONS when it is a plain positive decimal number
 * (digits only: anything else is ignored), else 8.
 * The device runs that many hardware queues at once, so more streams buy
 * nothing. */
unsigned sg__default_max_streams(void);

/* 1 if this thread is running user code of a launch of `exec` (a host
 * callback, a host twin: see sg__exec_callback_begin in exec/backend.h). */
int sg__exec_in_own_callback(const sg_exec *exec);

/* The entry and exit of the executable's public calls: a live handle, not
 * called from a callback of its own launch (for calls that wait or change
 * it), not in use by another call (core/in_use.h). `fn` names the call in
 * the message. Shared: calls that only read. */
sg_status sg__exec_enter(sg_exec *exec, const char *fn);
void sg__exec_leave(sg_exec *exec);
sg_status sg__exec_enter_shared(const sg_exec *exec, const char *fn);
void sg__exec_leave_shared(const sg_exec *exec);

#endif
