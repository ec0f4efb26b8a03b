/* Internal: every CUDA runtime call goes through SG_CUDA(...), a fault-
 * injection point (streamgraph/testing.h) named after the call: when the
 * armed fault is due the call is not made and cudaErrorUnknown is returned
 * instead. */
#ifndef SG_CUDA_CUDA_CALL_H
#define SG_CUDA_CUDA_CALL_H

#include <cuda_runtime_api.h>

#include "core/error.h"
#include "core/sys.h"

#define SG_CUDA(call) \
  (sg__fault_hit_at(SG_FAULT_CUDA, SG__SITE(#call)) ? cudaErrorUnknown : (call))

/* For calls that must happen even when a fault is injected, because skipping
 * them would leave CUDA state broken (ending a stream capture): the call is
 * made, and then the armed fault, if due, replaces its result. The caller
 * treats cudaErrorUnknown as a failure and releases what the call produced. */
static inline cudaError_t sg__cuda_after(cudaError_t real, sg__site site) {
  return sg__fault_hit_at(SG_FAULT_CUDA, site) ? cudaErrorUnknown : real;
}
#define SG_CUDA_AFTER(call) sg__cuda_after((call), SG__SITE(#call))

/* Release calls (destroying streams, events, graphs; restoring the caller's
 * device; clearing a handled error with cudaGetLastError) are made directly,
 * not through SG_CUDA: their failure cannot be reported or acted on, and
 * skipping them would leak CUDA objects or leave the thread on the wrong
 * device. */

/* Turns a CUDA error into SG_ERR_CUDA with a message naming the error, the
 * call and the context: "sg_exec_launch: node 'k' (#3): cudaLaunchKernel
 * failed: cudaErrorInvalidDeviceFunction (invalid device function)". */
sg_status sg__cuda_fail(cudaError_t err, const char *call, const char *context);

/* 1 for the errors after which the CUDA context is unusable until the
 * process exits (a kernel fault: illegal address, trap, assert...). */
int sg__cuda_sticky(cudaError_t err);

/* The same message formatted into a buffer (for failures recorded on an
 * executable and reported later). */
void sg__cuda_format(char *buf, size_t cap, cudaError_t err, const char *call,
                     const char *context);

#endif
