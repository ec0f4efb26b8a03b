/* Internal: classifying pointers and the table of memory sg_mem_alloc made. */
#ifndef SG_CORE_MEMORY_TABLE_H
#define SG_CORE_MEMORY_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "streamgraph/memory.h"

/* What memory `ptr` is in: the library's own allocations first (so host-
 * backend "device" memory is known), then the CUDA runtime's view when CUDA
 * is built and a device exists, else pageable host memory. */
sg_memory_kind sg__memory_classify(const void *ptr);

/* The block of memory around a pointer, where the library can bound it: an
 * sg_mem_alloc block, or (device and managed memory the library did not
 * allocate) the allocation the CUDA driver reports. Pageable and pinned
 * host memory of the caller's have no bound the library knows: the
 * registrations the library makes of such buffers cover a copy's pages, not
 * the caller's buffer. */
typedef struct sg__block {
  uintptr_t base;   /* 0: no bound known */
  size_t bytes;
  int from_driver;  /* 1: the driver's allocation range; 0: an sg_mem_alloc block */
  int freed;        /* 1: an sg_mem_alloc block already freed, kept while nodes hold it */
} sg__block;

/* The emulated device of host-backend device memory (the device given to
 * sg_mem_alloc), or -1 for any other memory. */
int sg__memory_device(const void *ptr);

/* sg__memory_classify, and the block `ptr` lies in (base 0 when unknown). */
sg_memory_kind sg__memory_find(const void *ptr, sg__block *block);

/* Executables hold the sg_mem_alloc blocks their copy and memset nodes
 * name, and sg_mem_free of a held block is deferred until the last hold
 * goes (core/node_memory.h). sg__memory_hold holds the block containing
 * [ptr, ptr + bytes): 1 when held, 0 when ptr lies in no block, -1 when it
 * does but the block was freed already or the range runs past its end (not
 * held). *block describes the block (base 0: none). sg__memory_release lets
 * go of one hold of the block containing ptr, and frees a freed block with
 * its last hold (on the caller's thread: never from a callback). */
int sg__memory_hold(const void *ptr, size_t bytes, sg__block *block);
void sg__memory_release(const void *ptr);

/* sg_backend_resolve for calls that return a status: SG_BACKEND_AUTO as
 * the environment variable SG_BACKEND asks ("host", "cuda", "auto" or
 * unset); a value naming no backend is SG_ERR_INVALID_ARGUMENT, "cuda"
 * without a device SG_ERR_BACKEND_UNAVAILABLE (messages prefixed by `fn`). */
sg_status sg__backend_resolve(sg_backend requested, const char *fn, sg_backend *out);

/* "device memory", "pinned host memory"...: how messages name a kind. */
const char *sg__memory_kind_text(sg_memory_kind kind);

/* Host memory the CPU can read and write directly. */
static inline int sg__memory_is_host(sg_memory_kind kind) {
  return kind == SG_MEMORY_HOST_PAGEABLE || kind == SG_MEMORY_HOST_PINNED;
}
/* Memory standing for the device: real device memory, managed memory, or the
 * host backend's emulated device memory. */
static inline int sg__memory_is_device(sg_memory_kind kind) {
  return kind == SG_MEMORY_DEVICE || kind == SG_MEMORY_MANAGED || kind == SG_MEMORY_HOST_DEVICE;
}

#endif
