/* Internal: every CUDA runtime call goes through SG_CUDA(...), a fault-
 * injection point (streamgraph/testing.h): when the armed fault is due the
 * call is not made and cudaErrorUnknown is returned instead. */
#ifndef SG_CUDA_CUDA_CALL_H
#define SG_CUDA_CUDA_CALL_H

#include <cuda_runtime_api.h>

#include "core/error.h"
#include "core/sys.h"

#define SG_CUDA(call) (sg__fault_hit(SG_FAULT_CUDA) ? cudaErrorUnknown : (call))

/* Turns a CUDA error into SG_ERR_CUDA with a message naming the error, the
 * call and the context: "sg_exec_launch: node 'k' (#3): cudaLaunchKernel
 * failed: cudaErrorInvalidDeviceFunction (invalid device function)". */
sg_status sg__cuda_fail(cudaError_t err, const char *call, const char *context);

/* The same message formatted into a buffer (for failures recorded on an
 * executable and reported later). */
void sg__cuda_format(char *buf, size_t cap, cudaError_t err, const char *call,
                     const char *context);

#endif
