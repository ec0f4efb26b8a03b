/* Internal: how staging reaches a backend's memory - the small table of
 * operations each backend fills (src/cuda/stage_mem.c, src/host/
 * host_stage_mem.c) and names in its sg__backend_ops.stage_mem. The pool
 * takes its slabs, and the registration cache pins buffers and fences its
 * copies, through the table of the backend they serve; the rest of staging
 * is the same code on every backend, so it runs on CI as on the GPU.
 *
 * None of the operations may be called from a CUDA host callback or with a
 * lock held that a callback takes: freeing pinned memory and unpinning can
 * wait for the device, and the device may be waiting for that callback. */
#ifndef SG_STAGING_STAGE_MEM_H
#define SG_STAGING_STAGE_MEM_H

#include <stddef.h>

#include "streamgraph/memory.h"
#include "streamgraph/status.h"

struct sg_pinned_pool;

typedef struct sg__stage_mem {
  const char *name;
  /* 1 when the device side is reached by DMA that runs asynchronously to
   * the host (CUDA): staging then overlaps host copies with the DMA, and a
   * copy built into a graph never takes the driver's pageable path
   * (policy.h). 0 when the "DMA" is a memcpy on the calling thread (the
   * host backend), which has nothing to overlap. */
  int dma;
  /* Bit (1u << kind) set for each sg_memory_kind that is the device side
   * of a staged copy: what the DMA reaches from a pinned slot. */
  unsigned device_kinds;

  /* Page-locked memory of `bytes` (> 0), usable by every device; `device`
   * is made current for the call. On failure sets the message (prefixed
   * `where`). */
  sg_status (*slab_alloc)(int device, size_t bytes, const char *where, void **out);
  void (*slab_free)(void *ptr);
  /* Pins [ptr, ptr + bytes) in place (a page-aligned range), for every
   * device; `device` (>= 0) is made current for the call (the
   * registration cache's background thread has none); -1 keeps the
   * caller's. */
  sg_status (*pin)(int device, void *ptr, size_t bytes, const char *where);
  void (*unpin)(void *ptr);
  /* Pays, once per process, what the driver's first registration costs
   * beyond pinning (its own setup, many milliseconds while it holds the
   * driver): called at creation by an executable that may register, so
   * that no launch meets it. Best effort, not a fault point; NULL: nothing
   * to warm. */
  void (*warm_pin)(void);
  /* Fences: an event recorded after each copy through a registration, so
   * the cache can tell whether the copy is still in flight. fence_new may
   * give NULL: the backend's copies are done when enqueued, and nothing is
   * to be fenced; the other calls are never made with NULL. Queries do not
   * block; a broken context counts as idle (nothing runs in it any more). */
  sg_status (*fence_new)(const char *where, void **out);
  void (*fence_free)(void *fence);
  sg_status (*fence_record)(void *fence, void *stream, const char *where);
  int (*fence_busy)(void *fence);
  void (*fence_wait)(void *fence);
  /* 1 when `device` can run the memop protocol (stage_run.h; docs/
   * staging.md, "Device support"); NULL: never. */
  int (*memops_supported)(int device);
  /* The process-wide default pool, made on first use (the pool of an
   * executable that names none; exec/staging_api.c). */
  sg_status (*default_pool)(struct sg_pinned_pool **out);
} sg__stage_mem;

/* 1 if memory of `kind` is the device side of a staged copy for `mem`. */
static inline int sg__stage_mem_device_side(const sg__stage_mem *mem, sg_memory_kind kind) {
  return (mem->device_kinds >> (unsigned)kind) & 1u;
}

#endif
