/* Slab memory and registration for both kinds of backing (pinned_mem.h). */
#include "staging/pinned_mem.h"

#include "core/error.h"
#include "core/sys.h"

/* Page alignment: a plain slab behaves like cudaHostAlloc'ed memory, and
 * chunk copies start on page boundaries. */
#define SG__PAGE 4096u

sg_status sg__pinned_alloc(int on_cuda, int device, size_t bytes, const char *where, void **out) {
  if (on_cuda) return sg__staging_cuda_host_alloc(device, bytes, where, out);
  *out = sg__aligned_alloc(SG__PAGE, bytes);
  if (!*out)
    return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory for a %zu-byte staging slab", where,
                    bytes);
  return SG_OK;
}

void sg__pinned_free(int on_cuda, void *ptr) {
  if (!ptr) return;
  if (on_cuda) sg__staging_cuda_host_free(ptr);
  else sg__free(ptr);
}

/* The host backend has nothing to pin: registration is bookkeeping only
 * (the cache still runs its LRU, limits and in-flight rules). */
sg_status sg__pinned_register(int on_cuda, int device, void *ptr, size_t bytes,
                              const char *where) {
  if (on_cuda) return sg__staging_cuda_register(device, ptr, bytes, where);
  return SG_OK;
}

void sg__pinned_unregister(int on_cuda, void *ptr) {
  if (on_cuda) sg__staging_cuda_unregister(ptr);
}

/* The host backend copies synchronously: it has no fence to keep. */
sg_status sg__fence_new(int on_cuda, const char *where, void **out) {
  *out = NULL;
  return on_cuda ? sg__staging_cuda_fence_new(where, out) : SG_OK;
}

void sg__fence_free(void *fence) {
  if (fence) sg__staging_cuda_fence_free(fence);
}

sg_status sg__fence_record(void *fence, void *stream, const char *where) {
  return fence ? sg__staging_cuda_fence_record(fence, stream, where) : SG_OK;
}

int sg__fence_busy(void *fence) { return fence ? sg__staging_cuda_fence_busy(fence) : 0; }

void sg__fence_wait(void *fence) {
  if (fence) sg__staging_cuda_fence_wait(fence);
}
