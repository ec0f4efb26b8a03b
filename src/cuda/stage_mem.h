/* Internal: the CUDA backend's memory, for staging (its sg__stage_mem
 * table) and for sg_mem_alloc: one way to allocate pinned memory. */
#ifndef SG_CUDA_STAGE_MEM_H
#define SG_CUDA_STAGE_MEM_H

#include <stddef.h>

#include "staging/stage_mem.h"

/* cudaHostAlloc'ed slabs, cudaHostRegister, fences as events. */
extern const sg__stage_mem sg__cuda_stage_mem;

/* Page-locked memory of `bytes`, portable across devices, allocated with
 * `device` current (the caller's device is restored). On failure the
 * error is cleared (an allocation failure is not sticky) and the message
 * names `where`. */
sg_status sg__cuda_pinned_alloc(int device, size_t bytes, const char *where, void **out);

/* 1 when querying `stream` reports an error (a broken context): memory that
 * launches in flight hold will then never come back. */
int sg__cuda_stream_broken(void *stream);

#endif
