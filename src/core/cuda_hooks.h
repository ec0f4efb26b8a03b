/* Internal: what the core asks of the CUDA layer. Implemented in src/cuda/
 * when CUDA is built, and by stubs (core/cuda_stubs.c) that answer "no
 * device" otherwise, so the core never includes a CUDA header. */
#ifndef SG_CORE_CUDA_HOOKS_H
#define SG_CORE_CUDA_HOOKS_H

#include <stddef.h>

#include "streamgraph/memory.h"

struct sg__backend_ops;

/* Devices usable now (0 without CUDA, without a driver or without a GPU). */
int sg__cuda_device_count(void);
/* The runtime's view of `ptr`; SG_MEMORY_HOST_PAGEABLE when it knows nothing. */
sg_memory_kind sg__cuda_classify(const void *ptr);
sg_status sg__cuda_alloc(sg_memory_kind kind, int device, size_t bytes, void **out);
sg_status sg__cuda_free(sg_memory_kind kind, void *ptr);
/* Synchronous copy between any memory the runtime can address. */
sg_status sg__cuda_copy(void *dst, const void *src, size_t bytes);
/* The CUDA executable backend (NULL without CUDA). */
const struct sg__backend_ops *sg__cuda_backend(void);

#endif
