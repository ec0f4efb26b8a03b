/* Internal: classifying pointers and the table of memory sg_mem_alloc made. */
#ifndef SG_CORE_MEMORY_TABLE_H
#define SG_CORE_MEMORY_TABLE_H

#include <stddef.h>

#include "streamgraph/memory.h"

/* What memory `ptr` is in: the library's own allocations first (so host-
 * backend "device" memory is known), then the CUDA runtime's view when CUDA
 * is built and a device exists, else pageable host memory. */
sg_memory_kind sg__memory_classify(const void *ptr);

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
