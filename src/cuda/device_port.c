/* The core's device port (core/device.h) on CUDA: devices, pointer kinds,
 * allocation ranges, allocation and synchronous copies. */
#include <cuda.h> /* types only */
#include <pthread.h>
#include <string.h>

#include "core/device.h"
#include "cuda/cuda_call.h"
#include "cuda/stage_mem.h"
#include "staging/regcache.h"

static pthread_once_t count_once = PTHREAD_ONCE_INIT;
static int device_count;

/* Counted once per process: without a driver or GPU the runtime answers an
 * error, which means no device; asking again would only cost time. */
static void count_devices(void) {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    n = 0;
    cudaGetLastError(); /* clear the error so it does not surface later */
  }
  device_count = n;
}

int sg__device_count(void) {
  pthread_once(&count_once, count_devices);
  return device_count;
}

sg_memory_kind sg__device_classify(const void *ptr) {
  struct cudaPointerAttributes attr;
  if (SG_CUDA(cudaPointerGetAttributes(&attr, ptr)) != cudaSuccess) {
    cudaGetLastError();
    return SG_MEMORY_HOST_PAGEABLE;
  }
  switch (attr.type) {
    case cudaMemoryTypeDevice: return SG_MEMORY_DEVICE;
    case cudaMemoryTypeManaged: return SG_MEMORY_MANAGED;
    case cudaMemoryTypeHost:
      /* Pinned by the registration cache, not by the user: pageable to the
       * user, and perhaps pinned only in part (a registration takes whole
       * pages, the first or last of them shared with a neighbour). A node
       * made now must not take it for pinned memory once the cache lets it
       * go, nor hand the driver a range that is only partly registered
       * (staging/regcache.h). */
      return sg__reg_touches(&sg__cuda_stage_mem, ptr, 1) ? SG_MEMORY_HOST_PAGEABLE
                                                           : SG_MEMORY_HOST_PINNED;
    default: return SG_MEMORY_HOST_PAGEABLE;
  }
}

/* The driver's cuPointerGetAttributes, reached through the runtime's entry
 * points so that the library links the runtime only (as cuda_memset.c). The
 * runtime has no call for an allocation's range. */
typedef CUresult (*pointer_attributes_fn)(unsigned count, CUpointer_attribute *attributes,
                                          void **data, CUdeviceptr ptr);

static pthread_once_t range_lookup_once = PTHREAD_ONCE_INIT;
static pointer_attributes_fn pointer_attributes;

/* Looked up once per process. Not a fault point: a fault here would stick
 * for the life of the process; the calls through the pointer are. */
static void range_lookup(void) {
  void *p = NULL;
  enum cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  if (cudaGetDriverEntryPointByVersion("cuPointerGetAttributes", &p, 12000, cudaEnableDefault,
                                       &found) != cudaSuccess ||
      found != cudaDriverEntryPointSuccess) {
    cudaGetLastError();
    return; /* no ranges: bounds of foreign device memory go unchecked */
  }
  memcpy(&pointer_attributes, &p, sizeof pointer_attributes); /* object to function pointer */
}

int sg__device_range(const void *ptr, uintptr_t *base, size_t *bytes) {
  pthread_once(&range_lookup_once, range_lookup);
  if (!pointer_attributes) return 0;
  CUpointer_attribute attributes[2] = {CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
                                       CU_POINTER_ATTRIBUTE_RANGE_SIZE};
  CUdeviceptr start = 0;
  size_t size = 0;
  void *data[2] = {&start, &size};
  /* A pointer the driver does not know gives zeros and CUDA_SUCCESS. */
  if (SG_CUDA((cudaError_t)pointer_attributes(2, attributes, data, (CUdeviceptr)(uintptr_t)ptr)) !=
      cudaSuccess)
    return 0;
  uintptr_t p = (uintptr_t)ptr;
  if (size == 0 || p < start || p - start >= size) return 0;
  *base = (uintptr_t)start;
  *bytes = size;
  return 1;
}

sg_status sg__device_alloc(sg_memory_kind kind, int device, size_t bytes, void **out) {
  /* A build with CUDA on a machine without a (working) device, or a device
   * that is not there: the backend is unavailable, as in a build without. */
  int devices = sg__device_count();
  if (device < 0 || device >= devices) {
    *out = NULL;
    return devices == 0
               ? sg__fail(SG_ERR_BACKEND_UNAVAILABLE, "sg_mem_alloc: no CUDA device is present")
               : sg__fail(SG_ERR_BACKEND_UNAVAILABLE,
                          "sg_mem_alloc: device %d asked for; %d device(s) present", device,
                          devices);
  }
  if (kind != SG_MEMORY_DEVICE) return sg__cuda_pinned_alloc(device, bytes, "sg_mem_alloc", out);
  int previous = 0;
  cudaError_t err = SG_CUDA(cudaGetDevice(&previous));
  if (err == cudaSuccess) err = SG_CUDA(cudaSetDevice(device));
  if (err != cudaSuccess) return sg__cuda_fail(err, "cudaSetDevice", "sg_mem_alloc");
  const char *call = "cudaMalloc";
  err = SG_CUDA(cudaMalloc(out, bytes));
  cudaSetDevice(previous);
  if (err != cudaSuccess) {
    *out = NULL;
    return sg__cuda_fail(err, call, "sg_mem_alloc");
  }
  return SG_OK;
}

sg_status sg__device_free(sg_memory_kind kind, void *ptr) {
  cudaError_t err = kind == SG_MEMORY_DEVICE ? SG_CUDA(cudaFree(ptr)) : SG_CUDA(cudaFreeHost(ptr));
  if (err != cudaSuccess)
    return sg__cuda_fail(err, kind == SG_MEMORY_DEVICE ? "cudaFree" : "cudaFreeHost",
                         "sg_mem_free");
  return SG_OK;
}

sg_status sg__device_copy(void *dst, const void *src, size_t bytes) {
  cudaError_t err = SG_CUDA(cudaMemcpy(dst, src, bytes, cudaMemcpyDefault));
  if (err != cudaSuccess) return sg__cuda_fail(err, "cudaMemcpy", "sg_mem_copy");
  /* cudaMemcpy from pageable memory returns once the source is staged, with
   * the DMA to the device possibly still under way; work on the library's
   * non-blocking streams would not wait for it. The copy runs on the legacy
   * stream, so waiting for that stream makes the copy complete on return. */
  err = SG_CUDA(cudaStreamSynchronize(cudaStreamLegacy));
  if (err != cudaSuccess) return sg__cuda_fail(err, "cudaStreamSynchronize", "sg_mem_copy");
  return SG_OK;
}
