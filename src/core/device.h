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

/* ---- a caller's stream, for the host backend ----------------------------
 * The host backend orders a launch after the work in a caller's CUDA stream,
 * and the stream's later work after the launch, as a CUDA backend would. A
 * link does it without blocking any thread the driver owns: on the stream,
 * a host function opens the launch's gate (it only marks the launch
 * runnable), then the stream waits, on the GPU, for a flag in mapped pinned
 * memory that the host raises when the launch is over (cuStreamWaitValue32,
 * a cyclic 32-bit "greater or equal"). An event recorded after the host
 * function tells a waiter when the stream failed before reaching it. */
typedef struct sg__device_link sg__device_link;

/* SG_OK when `stream` can be linked to: SG_ERR_UNSUPPORTED while it is
 * being captured (checked before any call a capture forbids). */
sg_status sg__device_stream_linkable(void *stream, const char *fn);
/* A link with its own flag (starting at the value it holds) and event. */
sg_status sg__device_link_new(const char *fn, sg__device_link **out);
/* Called once no launch can use the link any more. */
void sg__device_link_free(sg__device_link *link);
/* The flag's value now. */
uint32_t sg__device_link_value(const sg__device_link *link);
/* Raises the flag to `value`: stream work waiting for it may run. Any
 * thread, no CUDA call. */
void sg__device_link_raise(sg__device_link *link, uint32_t value);
/* On `stream` (a cudaStream_t, or SG_STREAM_LEGACY): open(arg) once the
 * stream's earlier work is done (on a driver thread: `open` may not call
 * CUDA), then a wait for the flag to reach `value`. *gate_queued says
 * whether `open` was queued (then it will run, even when this call fails
 * afterwards). Call sg__device_stream_linkable first. */
sg_status sg__device_link_enqueue(sg__device_link *link, void *stream, void (*open)(void *),
                                  void *arg, uint32_t value, const char *fn, int *gate_queued);
/* SG_OK while the stream's work up to the last enqueue is pending or done;
 * SG_ERR_CUDA (message prefixed by `fn`) when it failed, so that the gate
 * will never open. Does not block. */
sg_status sg__device_link_check(sg__device_link *link, const char *fn);

#endif
