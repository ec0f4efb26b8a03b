/* Internal: the CUDA side of the memop protocol (docs/staging.md, "The
 * memop protocol"): the device program of a staged copy
 * (staging/stage_program.h) as stream memory operations on a stream, or as
 * a chain of batch-memop and memcpy nodes in a graph, and whether a device
 * can run it at all.
 *
 * The driver's stream memory operations are reached through the runtime's
 * entry-point query (cudaGetDriverEntryPointByVersion), as the in-place
 * kernel update does: the library links only the runtime. Each driver call
 * is a fault point like any CUDA call (SG_FAULT_CUDA). Their CUresult is
 * returned as a cudaError_t: the runtime's codes take the driver's values
 * for the errors these calls return (invalid value, not supported, and the
 * sticky device errors). */
#ifndef SG_CUDA_STAGED_MEMOPS_H
#define SG_CUDA_STAGED_MEMOPS_H

#include <cuda_runtime_api.h>

#include "staging/stage_run.h"

/* Streams mode: arms `run` (a transient memop run) with `watch` and
 * enqueues its program on `stream`. On failure returns the error with *call
 * naming the call; the run has been abandoned then, and the conductor gives
 * it back once the device is past what went in (or it is left allocated on
 * a broken device): the caller must not free it. */
cudaError_t sg__cuda_memops_enqueue(sg__stage_run *run, cudaStream_t stream,
                                    const sg__stage_watch *watch, const char *where,
                                    const char **call);

/* Graph mode: the program of `run` (a persistent memop run: it resets its
 * flags at every launch) into the empty graph `child`, as one chain, its
 * DMAs to or from `device` (the copy's device side). On failure *call names
 * the call. */
cudaError_t sg__cuda_memops_build(sg__stage_run *run, char *device, cudaGraph_t child,
                                  const char **call);

/* 1 when `device` can run the memop protocol (docs/staging.md, "Device
 * support"): the driver's stream memory operations, unified addressing and
 * a probe that passed, once per device and process. Not a fault point
 * where the answer is remembered; a probe cut short by a failed call gives
 * 0 this time and is made again next time. */
int sg__staging_cuda_memops_supported(int device);

#endif
