/* A build without CUDA: what the rest of the library asks of the CUDA
 * folder, answered "no device". Never reached for real work (nothing is
 * ever on CUDA in such a build), but defined so that the library links and
 * every caller gets a clear status. Built only without CUDA
 * (cuda/sources.cmake). */
#include "core/device.h"
#include "core/error.h"
#include "exec/backend.h"

static sg_status no_cuda(const char *where) {
  return sg__fail(SG_ERR_BACKEND_UNAVAILABLE, "%s: this build of streamgraph has no CUDA backend",
                  where);
}

/* ---- core/device.h ------------------------------------------------------ */

int sg__device_count(void) { return 0; }

sg_memory_kind sg__device_classify(const void *ptr) { return SG_MEMORY_HOST_PAGEABLE; }

int sg__device_range(const void *ptr, uintptr_t *base, size_t *bytes) { return 0; }

sg_status sg__device_alloc(sg_memory_kind kind, int device, size_t bytes, void **out) {
  return sg__fail(SG_ERR_BACKEND_UNAVAILABLE, "this build of streamgraph has no CUDA backend");
}

sg_status sg__device_free(sg_memory_kind kind, void *ptr) {
  return sg__fail(SG_ERR_BACKEND_UNAVAILABLE, "this build of streamgraph has no CUDA backend");
}

sg_status sg__device_copy(void *dst, const void *src, size_t bytes) {
  return sg__fail(SG_ERR_BACKEND_UNAVAILABLE, "this build of streamgraph has no CUDA backend");
}

sg_status sg__device_stream_linkable(void *stream, const char *fn) { return no_cuda(fn); }
sg_status sg__device_link_new(const char *fn, sg__device_link **out) {
  *out = NULL;
  return no_cuda(fn);
}
void sg__device_link_free(sg__device_link *link) {}
uint32_t sg__device_link_value(const sg__device_link *link) { return 0; }
void sg__device_link_raise(sg__device_link *link, uint32_t value) {}
sg_status sg__device_link_enqueue(sg__device_link *link, void *stream, void (*open)(void *),
                                  void *arg, uint32_t value, const char *fn, int *gate_queued) {
  *gate_queued = 0;
  return no_cuda(fn);
}
sg_status sg__device_link_check(sg__device_link *link, const char *fn) { return no_cuda(fn); }

/* ---- exec/backend.h ----------------------------------------------------- */

const sg__backend_ops *sg__cuda_backend(void) { return 0; }
