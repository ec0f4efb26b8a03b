/* The CUDA half of pinned_mem.h: page-locked slabs and registrations. */
#include <cuda_runtime_api.h>

#include "cuda/cuda_call.h"
#include "staging/pinned_mem.h"

sg_status sg__staging_cuda_host_alloc(int device, size_t bytes, const char *where, void **out) {
  int previous = 0;
  cudaError_t err = SG_CUDA(cudaGetDevice(&previous));
  if (err == cudaSuccess) err = SG_CUDA(cudaSetDevice(device));
  if (err != cudaSuccess) {
    cudaGetLastError();
    return sg__cuda_fail(err, "cudaSetDevice", where);
  }
  /* Portable: a pool serves executables of every device. */
  err = SG_CUDA(cudaHostAlloc(out, bytes, cudaHostAllocPortable));
  cudaSetDevice(previous);
  if (err != cudaSuccess) {
    cudaGetLastError(); /* an allocation failure is not sticky; do not let it surface later */
    *out = NULL;
    return sg__cuda_fail(err, "cudaHostAlloc", where);
  }
  return SG_OK;
}

/* Releases are not fault points (like the CUDA backend's drain): skipping
 * one would leak pinned memory, or leave a registration on pages the user
 * may free, and a failure has no path to report anyway (the context is
 * gone). The error is cleared so it does not surface in an unrelated call. */
void sg__staging_cuda_host_free(void *ptr) {
  if (cudaFreeHost(ptr) != cudaSuccess) cudaGetLastError();
}

sg_status sg__staging_cuda_register(int device, void *ptr, size_t bytes, const char *where) {
  int previous = device;
  cudaError_t err = cudaSuccess;
  if (device >= 0) err = SG_CUDA(cudaGetDevice(&previous));
  if (err == cudaSuccess && previous != device) err = SG_CUDA(cudaSetDevice(device));
  if (err != cudaSuccess) {
    cudaGetLastError();
    return sg__cuda_fail(err, "cudaSetDevice", where);
  }
  /* Portable: pinned for every device, as the pool's slabs. */
  err = SG_CUDA(cudaHostRegister(ptr, bytes, cudaHostRegisterPortable));
  if (previous != device) cudaSetDevice(previous);
  if (err != cudaSuccess) {
    cudaGetLastError();
    return sg__cuda_fail(err, "cudaHostRegister", where);
  }
  return SG_OK;
}

void sg__staging_cuda_unregister(void *ptr) {
  if (cudaHostUnregister(ptr) != cudaSuccess) cudaGetLastError();
}

sg_status sg__staging_cuda_fence_new(const char *where, void **out) {
  cudaEvent_t event = NULL;
  cudaError_t err = SG_CUDA(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
  if (err != cudaSuccess) {
    cudaGetLastError();
    *out = NULL;
    return sg__cuda_fail(err, "cudaEventCreateWithFlags", where);
  }
  *out = event;
  return SG_OK;
}

void sg__staging_cuda_fence_free(void *fence) {
  if (cudaEventDestroy((cudaEvent_t)fence) != cudaSuccess) cudaGetLastError();
}

sg_status sg__staging_cuda_fence_record(void *fence, void *stream, const char *where) {
  cudaError_t err = SG_CUDA(cudaEventRecord((cudaEvent_t)fence, (cudaStream_t)stream));
  if (err != cudaSuccess) return sg__cuda_fail(err, "cudaEventRecord", where);
  return SG_OK;
}

/* Not a fault point: a query that "failed" would only make an entry look
 * idle; the wrapper is kept for calls whose failure has a path to test. */
int sg__staging_cuda_fence_busy(void *fence) {
  return cudaEventQuery((cudaEvent_t)fence) == cudaErrorNotReady;
}

void sg__staging_cuda_fence_wait(void *fence) {
  if (cudaEventSynchronize((cudaEvent_t)fence) != cudaSuccess) cudaGetLastError();
}

int sg__staging_cuda_stream_broken(void *stream) {
  cudaError_t err = SG_CUDA(cudaStreamQuery((cudaStream_t)stream));
  return err != cudaSuccess && err != cudaErrorNotReady;
}
