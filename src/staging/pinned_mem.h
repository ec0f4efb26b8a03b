/* Internal: the memory primitives staging stands on, for both kinds of
 * backing. With CUDA (on_cuda = 1) these are cudaHostAlloc/cudaFreeHost and
 * cudaHostRegister/cudaHostUnregister; without it (on_cuda = 0, the host
 * backend) plain aligned memory and an emulated registration, so that the
 * pool and the cache run the same code on CI as on the GPU.
 *
 * None of these may be called from a CUDA host callback or with a lock held
 * that a callback takes: cudaFreeHost and cudaHostUnregister can wait for
 * the device, and the device may be waiting for that callback. */
#ifndef SG_STAGING_PINNED_MEM_H
#define SG_STAGING_PINNED_MEM_H

#include <stddef.h>

#include "streamgraph/status.h"

/* Page-locked memory of `bytes` (> 0), portable across devices; `device` is
 * made current for the call. On failure sets the message (prefixed `where`). */
sg_status sg__pinned_alloc(int on_cuda, int device, size_t bytes, const char *where, void **out);
void sg__pinned_free(int on_cuda, void *ptr);

/* Pins [ptr, ptr + bytes) in place (page-aligned range), for every device;
 * `device` (>= 0) is made current for the call (the registration cache's
 * background thread has none); -1 keeps the caller's. */
sg_status sg__pinned_register(int on_cuda, int device, void *ptr, size_t bytes,
                              const char *where);
void sg__pinned_unregister(int on_cuda, void *ptr);

/* Fences: an event recorded after each copy through a registration, so the
 * cache can tell whether the copy is still in flight. Queries do not block;
 * a broken context counts as idle (nothing runs in it any more). */
sg_status sg__fence_new(int on_cuda, const char *where, void **out);
void sg__fence_free(void *fence);
sg_status sg__fence_record(void *fence, void *stream, const char *where);
int sg__fence_busy(void *fence);
void sg__fence_wait(void *fence);

/* The CUDA halves (src/cuda/stage_mem.c; src/cuda/no_cuda.c without CUDA). */
sg_status sg__staging_cuda_host_alloc(int device, size_t bytes, const char *where, void **out);
void sg__staging_cuda_host_free(void *ptr);
sg_status sg__staging_cuda_register(int device, void *ptr, size_t bytes, const char *where);
void sg__staging_cuda_unregister(void *ptr);
sg_status sg__staging_cuda_fence_new(const char *where, void **out);
void sg__staging_cuda_fence_free(void *fence);
sg_status sg__staging_cuda_fence_record(void *fence, void *stream, const char *where);
int sg__staging_cuda_fence_busy(void *fence);
void sg__staging_cuda_fence_wait(void *fence);
/* 1 when `device` can run the memop protocol (docs/staging.md, "Device
 * support"): the driver's stream memory operations, unified addressing and
 * a probe that passed, once per device and process. Not a fault point
 * where the answer is remembered; a probe cut short by a failed call gives
 * 0 this time and is made again next time. */
int sg__staging_cuda_memops_supported(int device);
/* 1 when querying `stream` reports an error (a broken context): memory that
 * launches in flight hold will then never come back. */
int sg__staging_cuda_stream_broken(void *stream);

#endif
