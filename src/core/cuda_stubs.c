/* The CUDA hooks of a build without CUDA: there is never a device. */
#ifndef SG_HAVE_CUDA
#include "core/cuda_hooks.h"
#include "core/error.h"

int sg__cuda_device_count(void) { return 0; }

sg_memory_kind sg__cuda_classify(const void *ptr) { return SG_MEMORY_HOST_PAGEABLE; }

sg_status sg__cuda_alloc(sg_memory_kind kind, int device, size_t bytes, void **out) {
  return sg__fail(SG_ERR_BACKEND_UNAVAILABLE, "this build of streamgraph has no CUDA backend");
}

sg_status sg__cuda_free(sg_memory_kind kind, void *ptr) {
  return sg__fail(SG_ERR_BACKEND_UNAVAILABLE, "this build of streamgraph has no CUDA backend");
}

sg_status sg__cuda_copy(void *dst, const void *src, size_t bytes) {
  return sg__fail(SG_ERR_BACKEND_UNAVAILABLE, "this build of streamgraph has no CUDA backend");
}

const struct sg__backend_ops *sg__cuda_backend(void) { return 0; }
#else
typedef int sg__cuda_stubs_unused; /* ISO C wants something in a translation unit */
#endif
