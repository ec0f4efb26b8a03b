/*
 * streamgraph/memory.h - device and pinned memory that every backend
 * understands, and what the library knows about a pointer.
 *
 * sg_mem_alloc gives memory for a backend: on the CUDA backend real device
 * memory (cudaMalloc) or pinned host memory (cudaHostAlloc); on the host
 * backend, aligned host memory that the library remembers as "device" or
 * "pinned", so that copy directions are checked the same way everywhere and
 * the host backend is a faithful stand-in for the GPU. A graph the CUDA
 * backend refuses whatever the hardware, the host backend refuses at
 * sg_exec_create with the same status and message: a copy with a pageable
 * side on a device other than the executable's (SG_ERR_UNSUPPORTED), and a
 * memset of another device's memory, which the host backend treats as a
 * pair of GPUs without peer access (SG_ERR_INVALID_ARGUMENT).
 */
#ifndef STREAMGRAPH_MEMORY_H
#define STREAMGRAPH_MEMORY_H

#include <stddef.h>

#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum sg_backend {
  SG_BACKEND_AUTO = 0,       /* CUDA when built in and a device is present, else host */
  SG_BACKEND_CUDA,
  SG_BACKEND_HOST
} sg_backend;

typedef enum sg_memory_kind {
  SG_MEMORY_HOST_PAGEABLE = 0, /* ordinary host memory (anything the library does not know) */
  SG_MEMORY_HOST_PINNED,       /* page-locked host memory: cudaHostAlloc'ed or registered */
  SG_MEMORY_DEVICE,            /* CUDA device memory */
  SG_MEMORY_MANAGED,           /* CUDA managed memory */
  SG_MEMORY_HOST_DEVICE        /* "device" memory of the host backend (sg_mem_alloc, SG_BACKEND_HOST) */
} sg_memory_kind;

/* The backend SG_BACKEND_AUTO resolves to in this process: SG_BACKEND_CUDA
 * when the CUDA backend is built and at least one device is present, else
 * SG_BACKEND_HOST. An explicit backend is returned as it is.
 *
 * The environment variable SG_BACKEND overrides the choice: "host" forces
 * the host backend, "cuda" requires the CUDA backend, "auto" (or unset, or
 * empty) is the default. A request that cannot be honoured - any other
 * value, or "cuda" where no device is usable - is never replaced by another
 * backend: this call then returns SG_BACKEND_AUTO and sets the message
 * sg_last_error() reads, and every call given SG_BACKEND_AUTO that returns
 * a status (sg_mem_alloc, sg_exec_create, sg_pinned_pool_create...) refuses
 * it with that message (SG_ERR_INVALID_ARGUMENT for a value naming no
 * backend, SG_ERR_BACKEND_UNAVAILABLE for "cuda" without a device). So the
 * usual pattern, resolving once and passing the answer on, gives the user
 * the backend named or a clear refusal at the first call. */
SG_API sg_backend sg_backend_resolve(sg_backend requested);

/* Number of CUDA devices (0 when CUDA is not built in or no device works). */
SG_API int sg_cuda_device_count(void);

/* Allocates `bytes` (> 0) of `kind` memory (SG_MEMORY_DEVICE or
 * SG_MEMORY_HOST_PINNED) for `backend` on `device` (on the host backend,
 * the emulated device its "device" memory belongs to). The memory is not
 * initialised. Free with sg_mem_free. */
SG_API sg_status sg_mem_alloc(sg_backend backend, sg_memory_kind kind, int device,
                              size_t bytes, void **out);
/* Frees memory from sg_mem_alloc; NULL is accepted.
 *
 * A block that a copy or memset node of a live executable names (pipelines
 * included: their instances are executables) is freed later: the call
 * returns SG_OK at once, the block is the library's from then on, and it is
 * freed when the last such node lets go of it (its executable is destroyed,
 * or the node is pointed elsewhere with sg_exec_set_copy, sg_exec_set_memset
 * or sg_exec_update). So a launch never touches freed memory, and cleanup
 * may free memory and destroy executables in either order. Naming a freed
 * block in a node afterwards (sg_graph_add_*, sg_exec_set_*), making or
 * updating an executable from a graph whose node names a block freed since,
 * or freeing it twice is refused with SG_ERR_INVALID_ARGUMENT. Graphs and
 * plans hold nothing (they never run). Kernel arguments are opaque to the
 * library: a block passed only as a kernel argument is not tracked, and must
 * outlive the executables using it. */
SG_API sg_status sg_mem_free(void *ptr);

/* What the library knows of the memory at `ptr`. */
SG_API sg_status sg_mem_kind(const void *ptr, sg_memory_kind *kind);

/* Copies between any memory sg_mem_alloc made and host memory, synchronously:
 * a convenience for filling inputs and reading results. */
SG_API sg_status sg_mem_copy(void *dst, const void *src, size_t bytes);

#ifdef __cplusplus
}
#endif
#endif
