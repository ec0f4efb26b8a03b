/* Internal: what the base asks of the device (the one port the core
 * declares and a backend fills): how many devices there are, what memory a
 * pointer is in, and allocation and synchronous copies of device memory.
 * src/cuda/device_port.c answers with the CUDA runtime; in a build without
 * CUDA, src/cuda/no_cuda.c answers "no device". So the core names no
 * backend and includes no CUDA header. */
#ifndef SG_CORE_DEVICE_H
#define SG_CORE_DEVICE_H

#include <stddef.h>
#include <stdint.h>

#include "streamgraph/memory.h"

/* Devices usable now (0 without CUDA, without a driver or without a GPU). */
int sg__device_count(void);
/* The runtime's view of `ptr`; SG_MEMORY_HOST_PAGEABLE when it knows nothing. */
sg_memory_kind sg__device_classify(const void *ptr);
/* The allocation `ptr` lies in, as the driver reports it (its range start
 * and size): 1 when known, 0 when the driver knows no such allocation. */
int sg__device_range(const void *ptr, uintptr_t *base, size_t *bytes);
/* Device memory or pinned host memory (`kind`) on `device`. */
sg_status sg__device_alloc(sg_memory_kind kind, int device, size_t bytes, void **out);
sg_status sg__device_free(sg_memory_kind kind, void *ptr);
/* Synchronous copy between any memory the runtime can address. */
sg_status sg__device_copy(void *dst, const void *src, size_t bytes);

#endif
