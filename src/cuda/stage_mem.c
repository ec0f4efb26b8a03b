/* The CUDA backend's memory (stage_mem.h): pinned slabs, registrations and
 * fences for staging, and pinned memory for sg_mem_alloc. */
#include "cuda/stage_mem.h"

#include <cuda_runtime_api.h>
#include <pthread.h>

#include "cuda/cuda_call.h"
#include "cuda/staged_memops.h"
#include "exec/staging_api.h"

sg_status sg__cuda_pinned_alloc(int device, size_t bytes, const char *where, void **out) {
  int previous = 0;
  cudaError_t err = SG_CUDA(cudaGetDevice(&previous));
  if (err == cudaSuccess) err = SG_CUDA(cudaSetDevice(device));
  if (err != cudaSuccess) {
    cudaGetLastError();
    *out = NULL;
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
static void slab_free(void *ptr) {
  if (cudaFreeHost(ptr) != cudaSuccess) cudaGetLastError();
}

static sg_status pin(int device, void *ptr, size_t bytes, const char *where) {
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

static void unpin(void *ptr) {
  if (cudaHostUnregister(ptr) != cudaSuccess) cudaGetLastError();
}

static sg_status fence_new(const char *where, void **out) {
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

static void fence_free(void *fence) {
  if (cudaEventDestroy((cudaEvent_t)fence) != cudaSuccess) cudaGetLastError();
}

static sg_status fence_record(void *fence, void *stream, const char *where) {
  cudaError_t err = SG_CUDA(cudaEventRecord((cudaEvent_t)fence, (cudaStream_t)stream));
  if (err != cudaSuccess) return sg__cuda_fail(err, "cudaEventRecord", where);
  return SG_OK;
}

/* Not a fault point: a query that "failed" would only make an entry look
 * idle; the wrapper is kept for calls whose failure has a path to test. */
static int fence_busy(void *fence) {
  return cudaEventQuery((cudaEvent_t)fence) == cudaErrorNotReady;
}

static void fence_wait(void *fence) {
  if (cudaEventSynchronize((cudaEvent_t)fence) != cudaSuccess) cudaGetLastError();
}

/* A page of its own, registered and let go once. Made directly, not
 * through SG_CUDA: a failure changes nothing (the first real registration
 * then pays the setup itself), and a fault point here would move every
 * later one of a scenario. */
static _Alignas(4096) char warm_page[4096];

static void warm_once(void) {
  if (cudaHostRegister(warm_page, sizeof warm_page, cudaHostRegisterPortable) == cudaSuccess)
    cudaHostUnregister(warm_page);
  else
    cudaGetLastError();
}

static pthread_once_t warm_done = PTHREAD_ONCE_INIT;

static void warm_pin(void) { pthread_once(&warm_done, warm_once); }

int sg__cuda_stream_broken(void *stream) {
  cudaError_t err = SG_CUDA(cudaStreamQuery((cudaStream_t)stream));
  return err != cudaSuccess && err != cudaErrorNotReady;
}

const sg__stage_mem sg__cuda_stage_mem = {
    .name = "cuda",
    .dma = 1,
    /* Managed memory counts: a pageable <-> managed memcpy node has the same
     * ordering problem in a graph (staging/policy.h). */
    .device_kinds = 1u << SG_MEMORY_DEVICE | 1u << SG_MEMORY_MANAGED,
    .slab_alloc = sg__cuda_pinned_alloc,
    .slab_free = slab_free,
    .pin = pin,
    .unpin = unpin,
    .warm_pin = warm_pin,
    .fence_new = fence_new,
    .fence_free = fence_free,
    .fence_record = fence_record,
    .fence_busy = fence_busy,
    .fence_wait = fence_wait,
    .memops_supported = sg__staging_cuda_memops_supported,
    .default_pool = sg__pinned_pool_default,
};
