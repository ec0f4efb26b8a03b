/*
 * streamgraph/graph.h - describing work: a DAG of copy, kernel, memset,
 * host-callback, stream-function and empty nodes.
 *
 * A graph is built once and turned into executables (streamgraph/exec.h). An
 * executable snapshots the graph, so the graph may be edited or destroyed
 * afterwards. A graph is not thread-safe: build it from one thread at a time.
 * A call that changes the graph while another call uses it (on another
 * thread) answers SG_ERR_BUSY instead of racing; calls that only read it
 * (queries, sg_graph_validate, and sg_exec_create, sg_exec_update and
 * sg_plan_create, which copy it) may run together.
 *
 * Every sg_graph_add_* call takes an optional list of dependencies (nodes that
 * must finish before the new node starts) and returns the new node through
 * `out` (which may be NULL). Each descriptor has an optional `name`, copied,
 * used in error messages, DOT output and traces.
 *
 * Validation happens when a node or edge is added, so a bad node never enters
 * the graph; cycles (only sg_graph_add_edge can make one) are found when the
 * graph is planned: sg_graph_validate, sg_plan_create, sg_exec_create.
 */
#ifndef STREAMGRAPH_GRAPH_H
#define STREAMGRAPH_GRAPH_H

#include <stddef.h>
#include <stdint.h>

#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sg_graph sg_graph;

/* A node handle: a small value, valid for the graph that made it and for the
 * executables made from that graph. Zero-initialised, it is "no node". */
typedef struct sg_node {
  uint64_t opaque;
} sg_node;

/* The node's index in its graph: 0, 1, 2... in order of creation. */
SG_API uint32_t sg_node_index(sg_node node);

/* ---- limits checked when a node is added ------------------------------- */
#define SG_MAX_BLOCK_THREADS 1024u       /* threads per block */
#define SG_MAX_BLOCK_Z 64u               /* block.z */
#define SG_MAX_GRID_X 2147483647u        /* grid.x (2^31 - 1) */
#define SG_MAX_GRID_YZ 65535u            /* grid.y and grid.z */
#define SG_MAX_SHARED_BYTES (227u * 1024u) /* dynamic shared memory of a Hopper block;
                                              a device's own limit is checked at exec creation */
#define SG_MAX_KERNEL_ARGS 64u           /* arguments per kernel */
#define SG_MAX_KERNEL_ARG_BYTES 4096u    /* all arguments' sizes together */
#define SG_MAX_NAME_BYTES 255u           /* longer names are refused */

/* ---- copies ------------------------------------------------------------ */
typedef enum sg_copy_kind {
  SG_COPY_AUTO = 0,          /* inferred from the memory the pointers are in */
  SG_COPY_HOST_TO_DEVICE,
  SG_COPY_DEVICE_TO_HOST,
  SG_COPY_DEVICE_TO_DEVICE,
  SG_COPY_HOST_TO_HOST
} sg_copy_kind;

/* Bounds: each side's range, [ptr, ptr + bytes), must end inside the block
 * the pointer lies in where the library knows one (an sg_mem_alloc block, or
 * device or managed memory whose allocation the CUDA driver reports); a
 * range past the end is SG_ERR_INVALID_ARGUMENT naming the node, the block
 * and both sizes. No range may exceed PTRDIFF_MAX bytes or wrap around the
 * address space. The same holds for a memset's destination
 * (count * element_size bytes), and for every update (sg_graph_set_*,
 * sg_exec_set_*). Pageable and pinned host memory of the caller's has no
 * bound the library knows: its size is the caller's to get right. */
typedef struct sg_copy_desc {
  void *dst;
  const void *src;
  size_t bytes;              /* > 0, within the blocks of dst and src (above) */
  sg_copy_kind kind;         /* checked against the pointers: a host->device copy whose
                                destination is host memory is SG_ERR_INVALID_COPY */
  const char *name;
} sg_copy_desc;

/* ---- kernels ----------------------------------------------------------- */
typedef struct sg_dim3 {
  unsigned x, y, z;
} sg_dim3;

/* The launch shape a host twin receives. */
typedef struct sg_kernel_launch {
  sg_dim3 grid;
  sg_dim3 block;
  size_t shared_bytes;
} sg_kernel_launch;

/* A kernel's host twin: the same computation in plain C, run by the host
 * backend. `args` has the same layout as the `args` of sg_kernel_desc (one
 * pointer per argument, pointing at the argument's value). */
typedef void (*sg_host_twin_fn)(const sg_kernel_launch *launch, void *const *args);

typedef enum sg_kernel_func_kind {
  SG_KERNEL_FUNCTION = 0,    /* `func` is a __global__ function's address, as for cudaLaunchKernel */
  SG_KERNEL_CUDA_KERNEL      /* `func` is a cudaKernel_t (from cudaGetKernel or cudaLibraryGetKernel) */
} sg_kernel_func_kind;

typedef struct sg_kernel_desc {
  const void *func;          /* may be NULL when only the host backend will run it */
  sg_kernel_func_kind func_kind;
  sg_dim3 grid;              /* every dimension >= 1 */
  sg_dim3 block;             /* every dimension >= 1, x*y*z <= 1024 */
  size_t shared_bytes;       /* dynamic shared memory */
  void *const *args;         /* arg_count pointers, each to one argument's value */
  const size_t *arg_sizes;   /* arg_count sizes in bytes */
  unsigned arg_count;
  sg_host_twin_fn host_twin; /* optional; required by the host backend */
  const char *name;
  unsigned flags;            /* SG_KERNEL_* below; 0 for none */
} sg_kernel_desc;

/* Programmatic dependent launch (opt-in). The kernel promises to call
 * cudaGridDependencySynchronize() (griddepcontrol.wait) before it reads or
 * writes any memory a predecessor node reads or writes, in every block; it
 * may call cudaTriggerProgrammaticLaunchCompletion() once its own dependents
 * may start their prologue. Where such a kernel depends only on kernel nodes
 * of its own device, its launch may then begin while those kernels finish:
 * graph mode makes its incoming edges programmatic (cudaGraphEdgeData of type
 * cudaGraphDependencyTypeProgrammatic), streams mode launches it with
 * cudaLaunchAttributeProgrammaticStreamSerialization after a kernel on its
 * stream. Before sm_90 the calls are no-ops and the launch is ordinary.
 * Kernels without the flag are never affected; the host backend ignores it.
 * The flag is part of the topology: sg_exec_set_kernel refuses a change of
 * it (edit the graph and call sg_exec_update). The kernels of kernels/ opt
 * in and show the pattern (SG_PDL_BEGIN in kernels/pdl.cuh). */
#define SG_KERNEL_PROGRAMMATIC 1u

/* ---- memset ------------------------------------------------------------ */
typedef struct sg_memset_desc {
  void *dst;
  unsigned value;            /* the element value; must fit in element_size bytes */
  unsigned element_size;     /* 1, 2 or 4 */
  size_t count;              /* elements, > 0; dst must be aligned to element_size, and
                                count * element_size bytes lie within dst's block (bounds
                                above sg_copy_desc) */
  const char *name;
} sg_memset_desc;

/* ---- host callbacks ---------------------------------------------------- */
/* Runs on a host thread when its dependencies are done. Returns 0 on success;
 * any other value fails the launch (SG_ERR_CALLBACK, naming the node and the
 * value). It must not call CUDA or streamgraph launch/wait functions; a call
 * back into its own executable or pipeline answers SG_ERR_BUSY (it could only
 * wait for the launch running it). */
typedef int (*sg_host_fn)(void *user_data);

typedef struct sg_host_desc {
  sg_host_fn fn;
  void *user_data;
  const char *name;
} sg_host_desc;

/* ---- stream functions -------------------------------------------------- */
/* Enqueues work (a cuBLAS or cuFFT call, say) on `cuda_stream` (a cudaStream_t).
 * In streams mode it is called at every launch; in graph mode it is called
 * once, while its work is captured into a child graph that is replayed.
 * Returns 0 on success; any other value fails the launch (SG_ERR_CALLBACK).
 * Library calls (cuBLAS, cuFFT) have rules to follow: docs/stream-functions.md;
 * each executable (pipeline instance) can get its own handle or plan with
 * sg_exec_set_stream_fn. */
typedef int (*sg_stream_fn)(void *cuda_stream, void *user_data);

typedef struct sg_stream_fn_desc {
  sg_stream_fn fn;
  void *user_data;
  /* Called once, when the last graph or executable holding this node is gone,
   * so that what the captured work refers to (a cuBLAS workspace, say) lives
   * exactly as long as anything can still replay it. May be NULL. */
  void (*release)(void *user_data);
  /* The host backend runs this instead (same contract as sg_host_fn); NULL
   * makes the node unusable on the host backend (SG_ERR_NO_HOST_TWIN). */
  sg_host_fn host_twin;
  const char *name;
} sg_stream_fn_desc;

/* ---- devices ----------------------------------------------------------- */
/* A node's device when none was set: the executable's (sg_exec_options.device). */
#define SG_DEVICE_DEFAULT (-1)
/* The largest device ordinal a node may name, plus one. */
#define SG_MAX_DEVICES 1024

/* ---- graph ------------------------------------------------------------- */
SG_API sg_status sg_graph_create(sg_graph **out);
/* Destroys the graph. Executables made from it are unaffected. */
SG_API sg_status sg_graph_destroy(sg_graph *graph);

SG_API sg_status sg_graph_add_copy_sized(sg_graph *graph, const sg_copy_desc *desc,
                                         size_t desc_size, const sg_node *deps, size_t dep_count,
                                         sg_node *out);
#ifndef SG_BUILDING_LIBRARY
static inline sg_status sg_graph_add_copy(sg_graph *graph, const sg_copy_desc *desc,
                                          const sg_node *deps, size_t dep_count, sg_node *out) {
  return sg_graph_add_copy_sized(graph, desc, sizeof *desc, deps, dep_count, out);
}
#else
sg_status sg_graph_add_copy(sg_graph *graph, const sg_copy_desc *desc, const sg_node *deps,
                            size_t dep_count, sg_node *out);
#endif
SG_API sg_status sg_graph_add_kernel_sized(sg_graph *graph, const sg_kernel_desc *desc,
                                           size_t desc_size, const sg_node *deps, size_t dep_count,
                                           sg_node *out);
#ifndef SG_BUILDING_LIBRARY
static inline sg_status sg_graph_add_kernel(sg_graph *graph, const sg_kernel_desc *desc,
                                            const sg_node *deps, size_t dep_count, sg_node *out) {
  return sg_graph_add_kernel_sized(graph, desc, sizeof *desc, deps, dep_count, out);
}
#else
sg_status sg_graph_add_kernel(sg_graph *graph, const sg_kernel_desc *desc, const sg_node *deps,
                              size_t dep_count, sg_node *out);
#endif
SG_API sg_status sg_graph_add_memset_sized(sg_graph *graph, const sg_memset_desc *desc,
                                           size_t desc_size, const sg_node *deps, size_t dep_count,
                                           sg_node *out);
#ifndef SG_BUILDING_LIBRARY
static inline sg_status sg_graph_add_memset(sg_graph *graph, const sg_memset_desc *desc,
                                            const sg_node *deps, size_t dep_count, sg_node *out) {
  return sg_graph_add_memset_sized(graph, desc, sizeof *desc, deps, dep_count, out);
}
#else
sg_status sg_graph_add_memset(sg_graph *graph, const sg_memset_desc *desc, const sg_node *deps,
                              size_t dep_count, sg_node *out);
#endif
SG_API sg_status sg_graph_add_host_sized(sg_graph *graph, const sg_host_desc *desc,
                                         size_t desc_size, const sg_node *deps, size_t dep_count,
                                         sg_node *out);
#ifndef SG_BUILDING_LIBRARY
static inline sg_status sg_graph_add_host(sg_graph *graph, const sg_host_desc *desc,
                                          const sg_node *deps, size_t dep_count, sg_node *out) {
  return sg_graph_add_host_sized(graph, desc, sizeof *desc, deps, dep_count, out);
}
#else
sg_status sg_graph_add_host(sg_graph *graph, const sg_host_desc *desc, const sg_node *deps,
                            size_t dep_count, sg_node *out);
#endif
SG_API sg_status sg_graph_add_stream_fn_sized(sg_graph *graph, const sg_stream_fn_desc *desc,
                                              size_t desc_size, const sg_node *deps,
                                              size_t dep_count, sg_node *out);
#ifndef SG_BUILDING_LIBRARY
static inline sg_status sg_graph_add_stream_fn(sg_graph *graph, const sg_stream_fn_desc *desc,
                                               const sg_node *deps, size_t dep_count,
                                               sg_node *out) {
  return sg_graph_add_stream_fn_sized(graph, desc, sizeof *desc, deps, dep_count, out);
}
#else
sg_status sg_graph_add_stream_fn(sg_graph *graph, const sg_stream_fn_desc *desc,
                                 const sg_node *deps, size_t dep_count, sg_node *out);
#endif
/* A join point that does nothing; `name` may be NULL. */
SG_API sg_status sg_graph_add_empty(sg_graph *graph, const char *name,
                                    const sg_node *deps, size_t dep_count, sg_node *out);

/* `to` starts after `from` finishes. Adding an edge that exists is accepted
 * and changes nothing. A self-edge is SG_ERR_SELF_EDGE. */
SG_API sg_status sg_graph_add_edge(sg_graph *graph, sg_node from, sg_node to);

/* Replace a node's parameters in the graph (same kind of node). Executables
 * already made are not affected; see sg_exec_update and sg_exec_set_*. */
SG_API sg_status sg_graph_set_kernel_sized(sg_graph *graph, sg_node node,
                                           const sg_kernel_desc *desc, size_t desc_size);
#ifndef SG_BUILDING_LIBRARY
static inline sg_status sg_graph_set_kernel(sg_graph *graph, sg_node node,
                                            const sg_kernel_desc *desc) {
  return sg_graph_set_kernel_sized(graph, node, desc, sizeof *desc);
}
#else
sg_status sg_graph_set_kernel(sg_graph *graph, sg_node node, const sg_kernel_desc *desc);
#endif
SG_API sg_status sg_graph_set_copy_sized(sg_graph *graph, sg_node node, const sg_copy_desc *desc,
                                         size_t desc_size);
#ifndef SG_BUILDING_LIBRARY
static inline sg_status sg_graph_set_copy(sg_graph *graph, sg_node node, const sg_copy_desc *desc) {
  return sg_graph_set_copy_sized(graph, node, desc, sizeof *desc);
}
#else
sg_status sg_graph_set_copy(sg_graph *graph, sg_node node, const sg_copy_desc *desc);
#endif
SG_API sg_status sg_graph_set_memset_sized(sg_graph *graph, sg_node node,
                                           const sg_memset_desc *desc, size_t desc_size);
#ifndef SG_BUILDING_LIBRARY
static inline sg_status sg_graph_set_memset(sg_graph *graph, sg_node node,
                                            const sg_memset_desc *desc) {
  return sg_graph_set_memset_sized(graph, node, desc, sizeof *desc);
}
#else
sg_status sg_graph_set_memset(sg_graph *graph, sg_node node, const sg_memset_desc *desc);
#endif
SG_API sg_status sg_graph_set_host_sized(sg_graph *graph, sg_node node, const sg_host_desc *desc,
                                         size_t desc_size);
#ifndef SG_BUILDING_LIBRARY
static inline sg_status sg_graph_set_host(sg_graph *graph, sg_node node, const sg_host_desc *desc) {
  return sg_graph_set_host_sized(graph, node, desc, sizeof *desc);
}
#else
sg_status sg_graph_set_host(sg_graph *graph, sg_node node, const sg_host_desc *desc);
#endif

/* Runs `node` on CUDA device `device` (an ordinal), or on the executable's
 * device (SG_DEVICE_DEFAULT: every node's setting until changed). One graph
 * may spread over several GPUs; one launch drives them all.
 *
 * - Kernel, memset, host and stream-function nodes run on streams of their
 *   device, with that device current (a stream function gets a stream of its
 *   node's device). A kernel reading another GPU's memory needs peer access,
 *   which the application enables (cudaDeviceEnablePeerAccess).
 * - A copy runs on a stream of its node's device. Between device memory of
 *   two GPUs it is a peer copy: direct (NVLink or PCIe) where the pair of
 *   devices supports peer access, which the library enables once per pair
 *   and process the first time an executable needs it (and never disables);
 *   through pinned host memory, in chunks, where it does not. A copy with a
 *   pageable host side runs on the executable's device.
 * - An NCCL node's calls run on their communicators' devices
 *   (streamgraph/nccl.h); give the node its communicator's device to spare
 *   a hop between streams.
 * - Dependencies between nodes on different devices become events recorded
 *   on one device and waited for on the other; the planner gives each device
 *   its own streams (the stream limit holds per device) and sg_plan_* tells
 *   which device each stream belongs to.
 * - Graph mode builds one CUDA graph whose nodes sit on their devices
 *   (docs/multi-gpu.md says what the driver allows).
 * - The host backend runs such graphs too, planning streams per device the
 *   same way (the devices are emulated: any ordinal is accepted).
 *
 * The device is checked when an executable is made (SG_ERR_BACKEND_UNAVAILABLE
 * naming the node, for an ordinal with no device). Changing it in the graph
 * and calling sg_exec_update re-plans the executable (stats.rebuilds). */
SG_API sg_status sg_graph_set_device(sg_graph *graph, sg_node node, int device);
/* The node's device as set: an ordinal, or SG_DEVICE_DEFAULT. */
SG_API sg_status sg_graph_get_device(const sg_graph *graph, sg_node node, int *device);

SG_API sg_status sg_graph_node_count(const sg_graph *graph, size_t *count);
/* Distinct edges (duplicates are stored once). */
SG_API sg_status sg_graph_edge_count(const sg_graph *graph, size_t *count);
/* The node's name, or NULL when it has none. */
SG_API sg_status sg_graph_node_name(const sg_graph *graph, sg_node node, const char **name);
/* The node with the given index. */
SG_API sg_status sg_graph_node_at(const sg_graph *graph, uint32_t index, sg_node *node);

/* Checks the whole graph (today: that it has no cycle; SG_ERR_CYCLE lists one). */
SG_API sg_status sg_graph_validate(const sg_graph *graph);

/* Names the graph (the name is copied; NULL removes it; at most
 * SG_MAX_NAME_BYTES bytes). Traces, NVTX ranges and DOT output show it;
 * executables and plans made afterwards keep the name they were made with. */
SG_API sg_status sg_graph_set_name(sg_graph *graph, const char *name);
/* The graph's name, or NULL when it has none. */
SG_API sg_status sg_graph_get_name(const sg_graph *graph, const char **name);

/* The graph as Graphviz DOT, as it was built: one shape per node (by kind),
 * labelled with its name, kind, index and main parameter, and one arrow per
 * distinct edge. Names are escaped, and bytes that are not UTF-8 are
 * replaced by U+FFFD, so the output is always well-formed. *dot is
 * allocated by the library; free it with sg_free (streamgraph/plan.h).
 * sg_plan_to_dot draws what the planner made of the graph. */
SG_API sg_status sg_graph_to_dot(const sg_graph *graph, char **dot);

/* ---- declared buffer access and planned temporaries ---------------------
 *
 * A node may say which memory it reads and writes; the library then orders
 * the nodes itself (docs/buffers.md). Accesses are declared on a node after
 * it is added. When the graph is planned (sg_graph_validate, sg_plan_create,
 * sg_exec_create, sg_exec_update), every pair of nodes whose declared
 * ranges overlap, at least one of them writing, is ordered in the order the
 * nodes were created: read after write, write after read, write after
 * write. These inferred edges join the explicit ones (sg_graph_add_edge and
 * the deps of sg_graph_add_*); sg_graph_edge_count counts explicit edges
 * only, and sg_graph_to_dot draws inferred edges dashed. An explicit edge
 * from a later node to an earlier one whose accesses conflict closes a
 * cycle: SG_ERR_CYCLE names the nodes, and the memory and range that
 * ordered the earlier one first.
 *
 * Ordering by creation order means two plain writes of overlapping memory
 * are always ordered. Writes that commute (an atomicAdd into an
 * accumulator, writes the caller knows touch disjoint bytes of a range it
 * declares whole) may be declared SG_ACCESS_COMMUTATIVE: two commutative
 * writes are left unordered, and each is ordered against every plain
 * access of overlapping memory. A commutative read is refused (a read of a
 * range other nodes are writing at the same time sees a partial result),
 * and so is a node that declares, for overlapping memory, a commutative
 * write next to a plain access of its own: it names the node and both
 * ranges.
 *
 * A planned temporary (sg_temp) is memory the graph owns whose contents do
 * not outlive a launch: scratch space, activations between layers. Each
 * executable (each pipeline instance) gets its own, in one arena allocated
 * at creation (device memory on the CUDA backend, host memory on the host
 * backend); two temporaries share bytes of it only when the plan finishes
 * every node using one before any node using the other starts (stream
 * order and events, not just the graph's edges). A node uses a temporary
 * by declaring an access to it; a kernel receives its address through an
 * argument bound with sg_graph_bind_temp, a copy or memset names it when
 * made (sg_graph_add_copy_temp, sg_graph_add_memset_temp). Addresses stay the same for the
 * executable's life, across launches and parameter updates; a topology
 * change (sg_exec_update) plans the memory again. */

/* A temporary's handle, as sg_node: valid for its graph and the executables
 * made from it; zero-initialised, it is "no temporary". */
typedef struct sg_temp {
  uint64_t opaque;
} sg_temp;

typedef struct sg_temp_desc {
  size_t bytes;              /* > 0 */
  size_t alignment;          /* a power of two <= 4096, or 0 for 256 (what cudaMalloc gives) */
  const char *name;          /* optional, copied; used in messages and DOT */
} sg_temp_desc;

typedef enum sg_access_mode {
  SG_ACCESS_READ = 1,
  SG_ACCESS_WRITE = 2,
  SG_ACCESS_READ_WRITE = 3
} sg_access_mode;

/* sg_access.flags */
#define SG_ACCESS_COMMUTATIVE 1u /* a write that commutes with other commutative writes */

/* One declared access: bytes [ptr, ptr + bytes) of memory the caller owns
 * (any kind; the library only compares addresses), or, when `temp` is set
 * (and ptr NULL), bytes [offset, offset + bytes) of a temporary (bytes 0:
 * to the temporary's end). */
typedef struct sg_access {
  const void *ptr;
  size_t bytes;
  sg_temp temp;
  size_t offset;
  sg_access_mode mode;
  unsigned flags;            /* 0 or SG_ACCESS_COMMUTATIVE */
} sg_access;

/* An access to the whole of temporary `temp`, in `mode`. */
static inline sg_access sg_access_temp(sg_temp temp, sg_access_mode mode) {
  sg_access a = {NULL, 0, temp, 0, mode, 0};
  return a;
}

/* Adds a temporary of desc->bytes bytes to the graph. */
SG_API sg_status sg_graph_add_temp_sized(sg_graph *graph, const sg_temp_desc *desc,
                                         size_t desc_size, sg_temp *out);
#ifndef SG_BUILDING_LIBRARY
static inline sg_status sg_graph_add_temp(sg_graph *graph, const sg_temp_desc *desc,
                                          sg_temp *out) {
  return sg_graph_add_temp_sized(graph, desc, sizeof *desc, out);
}
#else
sg_status sg_graph_add_temp(sg_graph *graph, const sg_temp_desc *desc, sg_temp *out);
#endif

/* Declares `count` accesses of `node` (each checked: a known temporary, a
 * range inside it, a non-NULL pointer whose range does not wrap, a mode,
 * known flags). All or nothing. `access_size` is sizeof(sg_access) as the
 * caller was compiled (the inline sg_graph_declare_access passes it). */
SG_API sg_status sg_graph_declare_access_sized(sg_graph *graph, sg_node node,
                                               const sg_access *accesses, size_t count,
                                               size_t access_size);
#ifndef SG_BUILDING_LIBRARY
static inline sg_status sg_graph_declare_access(sg_graph *graph, sg_node node,
                                                const sg_access *accesses, size_t count) {
  return sg_graph_declare_access_sized(graph, node, accesses, count, sizeof *accesses);
}
#else
sg_status sg_graph_declare_access(sg_graph *graph, sg_node node, const sg_access *accesses,
                                  size_t count);
#endif

/* Kernel argument `arg` of kernel node `node` receives, in every executable,
 * the address of byte `offset` of `temp` instead of the value the node was
 * given (the argument must be pointer-sized; a later sg_graph_set_kernel or
 * sg_exec_set_kernel keeps the binding). The node must also declare an
 * access to `temp` (checked when the graph is planned), which is what the
 * temporary's lifetime is planned from. Binding the argument again replaces
 * the binding. */
SG_API sg_status sg_graph_bind_temp(sg_graph *graph, sg_node node, unsigned arg, sg_temp temp,
                                    size_t offset);

/* A copy one or both of whose sides are temporaries: for each side that is
 * (a non-zero dst_temp or src_temp), the descriptor's pointer is NULL and
 * the copy reads or writes `bytes` from byte dst_offset (src_offset) of the
 * temporary, which must hold them. SG_COPY_AUTO follows the arena's memory
 * in each executable (device memory on the CUDA backend); an explicit kind
 * must say "device" for a temporary's side. Declare the node's access to
 * the temporaries as for any node. sg_graph_set_copy and sg_exec_set_copy
 * then take NULL for those sides (the temporaries stay). */
SG_API sg_status sg_graph_add_copy_temp_sized(sg_graph *graph, const sg_copy_desc *desc,
                                              size_t desc_size, sg_temp dst_temp,
                                              size_t dst_offset, sg_temp src_temp,
                                              size_t src_offset, const sg_node *deps,
                                              size_t dep_count, sg_node *out);
#ifndef SG_BUILDING_LIBRARY
static inline sg_status sg_graph_add_copy_temp(sg_graph *graph, const sg_copy_desc *desc,
                                               sg_temp dst_temp, size_t dst_offset,
                                               sg_temp src_temp, size_t src_offset,
                                               const sg_node *deps, size_t dep_count,
                                               sg_node *out) {
  return sg_graph_add_copy_temp_sized(graph, desc, sizeof *desc, dst_temp, dst_offset, src_temp,
                                      src_offset, deps, dep_count, out);
}
#else
sg_status sg_graph_add_copy_temp(sg_graph *graph, const sg_copy_desc *desc, sg_temp dst_temp,
                                 size_t dst_offset, sg_temp src_temp, size_t src_offset,
                                 const sg_node *deps, size_t dep_count, sg_node *out);
#endif
/* A memset of `count` elements from byte dst_offset of `dst_temp` (desc->dst
 * NULL; the offset and the temporary's alignment multiples of
 * element_size). */
SG_API sg_status sg_graph_add_memset_temp_sized(sg_graph *graph, const sg_memset_desc *desc,
                                                size_t desc_size, sg_temp dst_temp,
                                                size_t dst_offset, const sg_node *deps,
                                                size_t dep_count, sg_node *out);
#ifndef SG_BUILDING_LIBRARY
static inline sg_status sg_graph_add_memset_temp(sg_graph *graph, const sg_memset_desc *desc,
                                                 sg_temp dst_temp, size_t dst_offset,
                                                 const sg_node *deps, size_t dep_count,
                                                 sg_node *out) {
  return sg_graph_add_memset_temp_sized(graph, desc, sizeof *desc, dst_temp, dst_offset, deps,
                                        dep_count, out);
}
#else
sg_status sg_graph_add_memset_temp(sg_graph *graph, const sg_memset_desc *desc, sg_temp dst_temp,
                                   size_t dst_offset, const sg_node *deps, size_t dep_count,
                                   sg_node *out);
#endif

/* Temporaries and declared accesses of the graph. */
SG_API sg_status sg_graph_temp_count(const sg_graph *graph, size_t *count);
SG_API sg_status sg_graph_access_count(const sg_graph *graph, size_t *count);
/* Edges inferred from declared accesses that no explicit edge duplicates
 * (computed on each call: it costs what planning the accesses does). */
SG_API sg_status sg_graph_inferred_edge_count(const sg_graph *graph, size_t *count);

#ifdef __cplusplus
}
#endif
#endif
