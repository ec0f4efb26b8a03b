/* The CUDA backend's arena for planned temporaries: one cudaMalloc per
 * executable (per pipeline instance), made at creation on the executable's
 * device, so that its addresses are fixed before the nodes that name them
 * are checked, captured or instantiated, and stay fixed for every launch
 * and in-place update. docs/buffers.md says why graph mode uses it too,
 * rather than CUDA graph memory nodes. */
#include <stdio.h>

#include "cuda/cuda_call.h"
#include "cuda/cuda_exec.h"

sg_status sg__cuda_arena_alloc(int device, size_t bytes, const char *fn, void **arena) {
  *arena = NULL;
  int previous;
  sg_status st = sg__cuda_enter(device, &previous, fn);
  if (st) return st;
  cudaError_t err = SG_CUDA(cudaMalloc(arena, bytes));
  sg__cuda_leave(device, previous);
  if (err != cudaSuccess) {
    *arena = NULL;
    cudaGetLastError(); /* cleared: an allocation failure is not sticky */
    char context[160];
    snprintf(context, sizeof context, "%s: %zu bytes of temporaries", fn, bytes);
    return sg__cuda_fail(err, "cudaMalloc", context);
  }
  return SG_OK;
}

void sg__cuda_arena_free(int device, void *arena) {
  if (!arena) return;
  int previous;
  if (sg__cuda_enter(device, &previous, "sg_exec_destroy")) {
    cudaFree(arena); /* on whatever device is current: cudaFree finds the allocation */
    return;
  }
  cudaFree(arena);
  sg__cuda_leave(device, previous);
}
