/* The CUDA half of pinned_mem.h in a build without CUDA: never reached
 * (pools and caches of such a build are never on CUDA), but defined so that
 * the library links. */
#ifndef SG_HAVE_CUDA
#include "core/error.h"
#include "staging/pinned_mem.h"

static sg_status no_cuda(const char *where) {
  return sg__fail(SG_ERR_BACKEND_UNAVAILABLE, "%s: this build of streamgraph has no CUDA backend",
                  where);
}

sg_status sg__staging_cuda_host_alloc(int device, size_t bytes, const char *where, void **out) {
  *out = NULL;
  return no_cuda(where);
}
void sg__staging_cuda_host_free(void *ptr) {}
sg_status sg__staging_cuda_register(void *ptr, size_t bytes, const char *where) {
  return no_cuda(where);
}
void sg__staging_cuda_unregister(void *ptr) {}
sg_status sg__staging_cuda_fence_new(const char *where, void **out) {
  *out = NULL;
  return no_cuda(where);
}
void sg__staging_cuda_fence_free(void *fence) {}
sg_status sg__staging_cuda_fence_record(void *fence, void *stream, const char *where) {
  return no_cuda(where);
}
int sg__staging_cuda_fence_busy(void *fence) { return 0; }
void sg__staging_cuda_fence_wait(void *fence) {}
int sg__staging_cuda_stream_broken(void *stream) { return 0; }
#else
typedef int sg__staging_cuda_stubs_unused; /* ISO C wants something in a translation unit */
#endif
