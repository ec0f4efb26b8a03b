/*
 * streamgraph/exec.h - executables: a graph planned once and launched many
 * times on a backend.
 *
 * An executable snapshots the graph it is made from (nodes, parameters,
 * names, edges); the graph may be changed or destroyed afterwards. It owns
 * everything it needs: streams, events, CUDA graph, staging buffers.
 *
 * Launches are asynchronous. Launches of one executable run in launch order,
 * one after the other; concurrency across iterations comes from several
 * executables in flight (see streamgraph/pipeline.h), never from racing one
 * executable against itself. An executable is used from one thread at a time:
 * a call that finds another call of the executable still running (on another
 * thread, or a host callback of its own launch calling back into it) answers
 * SG_ERR_BUSY, naming itself, instead of racing or waiting for itself.
 * Inspection (sg_exec_get_info, _get_stats, _get_plan) may run beside other
 * inspection.
 *
 * Queuing ahead. A launch is accepted while earlier ones still run: it is
 * queued on the device and starts the moment the one before it ends, with no
 * host-side wait in between. Parameters set in the meantime (sg_exec_set_*)
 * apply to later launches only; a launch runs with the parameters it was
 * launched with. Launches are numbered 1, 2, 3... in the order they were
 * made (sg_exec_get_stats().launches is the latest's number), and
 * sg_exec_wait_launch / sg_exec_query_launch follow one launch. A host
 * node may wait for the caller (a gate opened once later launches are
 * queued): on CUDA each kernel is loaded into its device's context when the
 * executable is made, not at its first launch (lazy module loading would
 * load it there, and loading waits for the context, so for that host node).
 * Setting a kernel node to a function the executable has not run loads it
 * then, which may wait for the launches in flight. Kernels a stream
 * function launches (its own, cuBLAS's) are not the executable's to load:
 * behind such a host node, load them first (cudaFuncGetAttributes, one run
 * of the stream function, or CUDA_MODULE_LOADING=EAGER).
 *
 * Host backend threads. Every host-backend executable runs on one pool of
 * threads for the process: a base of one per CPU, started with the first
 * executable. A stream waiting for another stream's event holds no thread;
 * a node holds one while it runs. A host node may wait for the caller, and
 * no executable waits for another executable's host nodes: when work has
 * been queued for a few milliseconds with every thread held, the pool
 * grows by a thread, up to max(256, 4 per CPU) threads (beyond that, queued
 * work waits for a held thread to return). Threads beyond the base end
 * after a second idle. Creating an executable starts no thread per stream.
 *
 * When a launch fails (a host callback returns non-zero, a CUDA call fails,
 * a kernel faults) the executable becomes failed: sg_exec_wait and
 * sg_exec_query return the error with its message (which names the launch
 * and the node), later launches return SG_ERR_EXEC_FAILED, and the
 * executable can only be destroyed. Launches queued behind the failed one
 * run no host work (their GPU work, already enqueued, still runs) and end;
 * sg_exec_wait_launch says which launch failed. Nothing the caller owns is
 * freed, and every wait returns.
 */
#ifndef STREAMGRAPH_EXEC_H
#define STREAMGRAPH_EXEC_H

#include <stddef.h>
#include <stdint.h>

#include "graph.h"
#include "memory.h"
#include "staging.h"
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sg_exec sg_exec;
typedef struct sg_plan sg_plan;

typedef enum sg_exec_mode {
  SG_MODE_STREAMS = 0,       /* replay the plan on several streams with events */
  SG_MODE_GRAPH              /* one CUDA Graph, instantiated once, launched many times */
} sg_exec_mode;

typedef enum sg_graph_build {
  SG_BUILD_EXPLICIT = 0,     /* cudaGraphAdd*Node node by node, with the reduced edges */
  SG_BUILD_CAPTURE           /* stream capture of the multi-stream schedule */
} sg_graph_build;

/* Passed as the stream of sg_exec_launch: the legacy default stream. */
#define SG_STREAM_LEGACY ((void *)0x1)

typedef struct sg_exec_options {
  sg_backend backend;        /* SG_BACKEND_AUTO: see sg_backend_resolve */
  sg_exec_mode mode;         /* the host backend runs both modes the same way */
  sg_graph_build build;      /* graph mode only */
  unsigned max_streams;      /* 0: CUDA_DEVICE_MAX_CONNECTIONS when set, else 8 */
  int device;                /* CUDA device ordinal */
  sg_staging_options staging;
  int trace;                 /* 1: time every node of every launch (costs a little per node;
                                docs/observability.md); 0 (default): nothing is timed */
  unsigned trace_launches;   /* with trace: traced launches whose times are kept (0: 64) */
  unsigned trace_every;      /* with trace: time every k-th launch only (launches 1, 1 + k,
                                1 + 2k... of the executable), so that a long run pays the
                                tracing cost on 1 launch in k; 0 or 1 (default): every
                                launch. Set without trace: SG_ERR_INVALID_ARGUMENT */
} sg_exec_options;

/* Fills `opts` with the defaults. Always start from this. */
SG_API void sg_exec_options_init_sized(sg_exec_options *opts, size_t opts_size);
#ifndef SG_BUILDING_LIBRARY
static inline void sg_exec_options_init(sg_exec_options *opts) {
  sg_exec_options_init_sized(opts, sizeof *opts);
}
#else
void sg_exec_options_init(sg_exec_options *opts);
#endif

SG_API sg_status sg_exec_create_sized(const sg_graph *graph, const sg_exec_options *opts,
                                      size_t opts_size, sg_exec **out);
#ifndef SG_BUILDING_LIBRARY
static inline sg_status sg_exec_create(const sg_graph *graph, const sg_exec_options *opts,
                                       sg_exec **out) {
  return sg_exec_create_sized(graph, opts, sizeof *opts, out);
}
#else
sg_status sg_exec_create(const sg_graph *graph, const sg_exec_options *opts, sg_exec **out);
#endif
/* Waits for launches in flight, then frees everything the executable owns.
 * Destroying an executable while another thread calls it is misuse, and is
 * detected like other misuse: the racing call either came first (it runs,
 * and this call answers SG_ERR_BUSY) or answers SG_ERR_INVALID_HANDLE; no
 * call touches freed memory. (An address reused by a later executable is
 * that executable's handle.) */
SG_API sg_status sg_exec_destroy(sg_exec *exec);

/* Launches once, asynchronously. `cuda_stream` (a cudaStream_t, or NULL, or
 * SG_STREAM_LEGACY) orders the launch after the work already in that stream,
 * and the stream's later work after the launch, as cudaGraphLaunch does.
 * NULL orders it only after this executable's earlier launches.
 *
 * A stream being captured (cudaStreamBeginCapture) takes a streams-mode
 * launch: its work goes into the caller's graph, and once the capture has
 * ended the launch counts as ended for sg_exec_wait (it ran nothing itself;
 * the caller's graph runs that work whenever it is launched). A graph-mode launch into a capture is refused with
 * SG_ERR_UNSUPPORTED, the capture left valid: CUDA takes no graph launch
 * there. docs/staging.md says what a captured staged copy needs.
 *
 * The host backend takes a stream too where CUDA is present (a build with
 * CUDA and a device), so that SG_BACKEND=host and the fallback of
 * SG_BACKEND_AUTO work in real applications: a host function on the stream
 * starts the launch once the stream's earlier work is done, and the stream
 * then waits, on the GPU, for the launch's end (cuStreamWaitValue32; no
 * thread is blocked). The stream must belong to the current device and not
 * be capturing (SG_ERR_UNSUPPORTED). If the stream's work fails before the
 * launch could start (a kernel fault breaks the CUDA context), sg_exec_wait
 * returns that error and the executable is failed. Without CUDA a non-NULL
 * stream is SG_ERR_INVALID_ARGUMENT. */
SG_API sg_status sg_exec_launch(sg_exec *exec, void *cuda_stream);

/* Blocks until every launch so far has finished; returns SG_OK or the error
 * of the failed launch. Always returns. */
SG_API sg_status sg_exec_wait(sg_exec *exec);

/* SG_OK when idle, SG_NOT_READY while launches run, or the failure: once
 * a launch has failed, at once (even while the launches queued behind it
 * still drain; sg_exec_wait waits for them). */
SG_API sg_status sg_exec_query(sg_exec *exec);

/* Blocks until launch number `launch` (1 .. sg_exec_get_stats().launches)
 * has finished, and every launch before it. Returns SG_OK when it ran
 * without failure (a later launch may have failed since); the failure, with
 * its message, when this launch failed; SG_ERR_EXEC_FAILED when an earlier
 * launch failed first (this one may not have run normally). A failure found
 * only when the device reports it (a kernel fault: CUDA errors are sticky and
 * name no kernel) belongs to the oldest launch not yet seen finished.
 * Completion is followed exactly for the latest SG_EXEC_TRACKED_LAUNCHES
 * launches; an older launch not yet seen finished is waited for as the
 * oldest of those (launches end in order). In graph mode, launches into the
 * executable's own stream (cuda_stream NULL) are followed one by one from
 * the first sg_exec_wait_launch or sg_exec_query_launch on (following one
 * costs an event record per launch, which a plain launch loop does not
 * pay); a launch made before that is seen finished with the next followed
 * one, or with all. Always returns. */
SG_API sg_status sg_exec_wait_launch(sg_exec *exec, uint64_t launch);

/* The same without waiting: SG_NOT_READY while launch `launch` runs (an
 * older launch than the tracked ones: until the oldest tracked one ends). */
SG_API sg_status sg_exec_query_launch(sg_exec *exec, uint64_t launch);

/* Launches whose completion an executable follows one by one. */
#define SG_EXEC_TRACKED_LAUNCHES 16u

typedef struct sg_exec_info {
  sg_backend backend;        /* resolved: SG_BACKEND_CUDA or SG_BACKEND_HOST */
  sg_exec_mode mode;
  sg_graph_build build;
  int device;
  size_t node_count;
  unsigned stream_count;     /* streams the plan uses */
  unsigned event_count;      /* events recorded per launch for other streams to wait on */
  unsigned wait_count;       /* cross-stream waits per launch (one event may be waited on
                                by several streams) */
} sg_exec_info;

SG_API sg_status sg_exec_get_info_sized(const sg_exec *exec, sg_exec_info *info, size_t info_size);
#ifndef SG_BUILDING_LIBRARY
static inline sg_status sg_exec_get_info(const sg_exec *exec, sg_exec_info *info) {
  return sg_exec_get_info_sized(exec, info, sizeof *info);
}
#else
sg_status sg_exec_get_info(const sg_exec *exec, sg_exec_info *info);
#endif

typedef struct sg_exec_stats {
  uint64_t launches;         /* launches made; the latest one's number */
  uint64_t param_updates;    /* node parameter changes applied (sg_exec_set_*, sg_exec_update) */
  uint64_t in_place_updates; /* of those, applied to an instantiated CUDA graph in place */
  uint64_t rebuilds;         /* re-plans or re-instantiations (topology or node kind changed,
                                or the driver refused an in-place update) */
  uint64_t staged_copies;    /* copy executions that went through pinned staging */
  uint64_t registered_copies;/* copy executions through a registered (pinned in place) buffer */
} sg_exec_stats;

SG_API sg_status sg_exec_get_stats_sized(const sg_exec *exec, sg_exec_stats *stats,
                                         size_t stats_size);
#ifndef SG_BUILDING_LIBRARY
static inline sg_status sg_exec_get_stats(const sg_exec *exec, sg_exec_stats *stats) {
  return sg_exec_get_stats_sized(exec, stats, sizeof *stats);
}
#else
sg_status sg_exec_get_stats(const sg_exec *exec, sg_exec_stats *stats);
#endif

/* The plan the executable runs (owned by the executable). */
SG_API sg_status sg_exec_get_plan(const sg_exec *exec, const sg_plan **plan);

/* One node's run in a traced launch. Node times are nanoseconds from the
 * start of that launch: host clock on the host backend, CUDA events on the
 * GPU (about half a microsecond resolution). */
typedef struct sg_trace_record {
  sg_node node;
  unsigned stream;           /* the plan's stream the node is drawn on (graph mode: the
                                driver chooses its own streams) */
  uint64_t start_ns;
  uint64_t end_ns;
  uint64_t launch;           /* which launch of the executable: 1 for the first */
  uint64_t launch_start_ns;  /* when that launch started, on the host's steady clock
                                (CLOCK_MONOTONIC): a common timeline for several
                                executables (GPU launches aligned within microseconds) */
} sg_trace_record;

/* The records of the latest traced launch of an executable created with
 * `trace` set (with trace_every k > 1: the latest of launches 1, 1 + k,
 * ...), one per node in the plan's issue order, after waiting for launches
 * in flight. Fills up to `capacity` records and sets *count to the node
 * count. Every mode and backend traces (docs/observability.md says how).
 * SG_ERR_INVALID_ARGUMENT without `trace` or before the first launch. */
SG_API sg_status sg_exec_get_trace_sized(sg_exec *exec, sg_trace_record *records,
                                         size_t record_size, size_t capacity, size_t *count);
#ifndef SG_BUILDING_LIBRARY
static inline sg_status sg_exec_get_trace(sg_exec *exec, sg_trace_record *records, size_t capacity,
                                          size_t *count) {
  return sg_exec_get_trace_sized(exec, records, sizeof *records, capacity, count);
}
#else
sg_status sg_exec_get_trace(sg_exec *exec, sg_trace_record *records, size_t capacity,
                            size_t *count);
#endif

/* The same for launch number `launch` (1 for the first). The executable
 * keeps the last options.trace_launches traced launches: an older one, one
 * not made yet, or one that trace_every left untimed (not sampled) is
 * SG_ERR_INVALID_ARGUMENT, saying which are kept or that the launch was not
 * sampled. */
SG_API sg_status sg_exec_get_launch_trace_sized(sg_exec *exec, uint64_t launch,
                                                sg_trace_record *records, size_t record_size,
                                                size_t capacity, size_t *count);
#ifndef SG_BUILDING_LIBRARY
static inline sg_status sg_exec_get_launch_trace(sg_exec *exec, uint64_t launch,
                                                 sg_trace_record *records, size_t capacity,
                                                 size_t *count) {
  return sg_exec_get_launch_trace_sized(exec, launch, records, sizeof *records, capacity, count);
}
#else
sg_status sg_exec_get_launch_trace(sg_exec *exec, uint64_t launch, sg_trace_record *records,
                                   size_t capacity, size_t *count);
#endif

/* Writes every kept launch as Chrome trace JSON (opens in Perfetto and
 * chrome://tracing), after waiting for launches in flight: one process per
 * executable with one row per stream and a row of launches; one slice per
 * node run, named by the node's name (escaped, UTF-8 repaired); the
 * host-side work of staged copies (copy threads) in a process of its own,
 * one row per thread. */
SG_API sg_status sg_exec_write_trace(sg_exec *exec, const char *path);

/* Writes every kept launch as an SVG timeline, a picture any web browser
 * shows with no other tool, after waiting for launches in flight.
 *
 * Time runs left to right from the earliest event drawn. Lanes, top down:
 * the launches (a bar per launch, "batch N" for a pipeline's), one lane per
 * planned stream with its nodes' runs, then one lane per copy direction
 * (host to device, device to host...: what the GPU's copy engines did,
 * every copy again), then one lane per host thread that filled or drained
 * pinned staging buffers. Fill colour tells the node kind and the copy
 * direction (a legend is drawn); each launch has an outline colour its runs
 * share, so launches and batches are told apart; runs that overlap within a
 * lane are stacked, not hidden. Hovering over a bar shows its <title>: the
 * node's name, kind, stream, launch (and batch), start, end and duration.
 *
 * For scripts, lanes are <g class="lane" data-name="stream 0"> and bars
 * <rect class="span KIND"> with data-node, data-stream, data-launch,
 * data-batch and data-start-ns/data-end-ns: absolute times on the host's
 * steady clock, equal to a record's launch_start_ns + start_ns (end_ns).
 * Names are escaped for XML and UTF-8 repaired.
 *
 * SG_ERR_INVALID_ARGUMENT without `trace` or with a NULL path;
 * SG_ERR_SYSTEM when the file cannot be written; SG_ERR_OUT_OF_MEMORY. An
 * executable not launched yet gives a picture saying so. */
SG_API sg_status sg_exec_write_trace_svg(sg_exec *exec, const char *path);

/* Change one node's parameters for the launches that follow. The node must
 * be of the same kind; `node` is a handle of the graph the executable was
 * made from, or of a body of one of its conditional nodes at any depth
 * (kernel, copy, memset and host nodes; docs/conditional.md says how each
 * mode applies such a change). The change is validated like sg_graph_add_*, and applied without
 * re-planning; in graph mode it is applied to the instantiated graph in place
 * (stats say so). Launches already made are not affected, even when they are
 * still queued: they keep the parameters they were launched with. A change
 * that needs the CUDA graph re-instantiated (stats.rebuilds) first waits for
 * the launches in flight. */
SG_API sg_status sg_exec_set_kernel_sized(sg_exec *exec, sg_node node, const sg_kernel_desc *desc,
                                          size_t desc_size);
#ifndef SG_BUILDING_LIBRARY
static inline sg_status sg_exec_set_kernel(sg_exec *exec, sg_node node,
                                           const sg_kernel_desc *desc) {
  return sg_exec_set_kernel_sized(exec, node, desc, sizeof *desc);
}
#else
sg_status sg_exec_set_kernel(sg_exec *exec, sg_node node, const sg_kernel_desc *desc);
#endif
SG_API sg_status sg_exec_set_copy_sized(sg_exec *exec, sg_node node, const sg_copy_desc *desc,
                                        size_t desc_size);
#ifndef SG_BUILDING_LIBRARY
static inline sg_status sg_exec_set_copy(sg_exec *exec, sg_node node, const sg_copy_desc *desc) {
  return sg_exec_set_copy_sized(exec, node, desc, sizeof *desc);
}
#else
sg_status sg_exec_set_copy(sg_exec *exec, sg_node node, const sg_copy_desc *desc);
#endif
SG_API sg_status sg_exec_set_memset_sized(sg_exec *exec, sg_node node, const sg_memset_desc *desc,
                                          size_t desc_size);
#ifndef SG_BUILDING_LIBRARY
static inline sg_status sg_exec_set_memset(sg_exec *exec, sg_node node,
                                           const sg_memset_desc *desc) {
  return sg_exec_set_memset_sized(exec, node, desc, sizeof *desc);
}
#else
sg_status sg_exec_set_memset(sg_exec *exec, sg_node node, const sg_memset_desc *desc);
#endif
SG_API sg_status sg_exec_set_host_sized(sg_exec *exec, sg_node node, const sg_host_desc *desc,
                                        size_t desc_size);
#ifndef SG_BUILDING_LIBRARY
static inline sg_status sg_exec_set_host(sg_exec *exec, sg_node node, const sg_host_desc *desc) {
  return sg_exec_set_host_sized(exec, node, desc, sizeof *desc);
}
#else
sg_status sg_exec_set_host(sg_exec *exec, sg_node node, const sg_host_desc *desc);
#endif

/* Gives a stream-function node of this executable alone a new function,
 * user data, release and host twin: how each pipeline instance gets its own
 * library handle, workspace or plan (call it from the pipeline's setup).
 * Waits for launches in flight first. In graph mode the new function is
 * called at once, its work captured and swapped into the instantiated graph
 * in place. Once accepted, the descriptor belongs to the executable: its
 * `release` runs when no graph or executable holds it any more, and the
 * descriptor it replaces is released likewise (the node in the graph, and in
 * other executables, keeps its own). Refused (an error status, including a
 * function that fails while captured), nothing is released: the caller
 * still owns the user data. */
SG_API sg_status sg_exec_set_stream_fn_sized(sg_exec *exec, sg_node node,
                                             const sg_stream_fn_desc *desc, size_t desc_size);
#ifndef SG_BUILDING_LIBRARY
static inline sg_status sg_exec_set_stream_fn(sg_exec *exec, sg_node node,
                                              const sg_stream_fn_desc *desc) {
  return sg_exec_set_stream_fn_sized(exec, node, desc, sizeof *desc);
}
#else
sg_status sg_exec_set_stream_fn(sg_exec *exec, sg_node node, const sg_stream_fn_desc *desc);
#endif

/* Re-applies a (possibly edited) graph. With the same topology and node kinds
 * only parameters change (in place, no re-plan), node by node as
 * sg_exec_set_* changes them: for the launches that follow, launches already
 * made keep theirs. Otherwise the executable is re-planned and rebuilt, and
 * stats.rebuilds says so; a rebuild first waits for the launches in flight.
 *
 * A rebuild is all or nothing: the new state is built beside the old one
 * (for that moment both hold their threads, streams and staging rings), so
 * a rebuild that fails (a node this backend cannot run, out of memory, a
 * thread or CUDA failure) returns the error, named for sg_exec_update, and
 * leaves the executable as it was and usable. A parameter update applies
 * node by node, in index order: when one node is refused, the nodes before
 * it have their new parameters and the others keep theirs. */
SG_API sg_status sg_exec_update(sg_exec *exec, const sg_graph *graph);

/* ---- rebuilds that never stall launches --------------------------------
 *
 * sg_exec_update_async re-applies a graph like sg_exec_update, but a new
 * topology is planned, built, instantiated and uploaded on a thread of its
 * own while the caller keeps launching the current version. The switch
 * happens at the first sg_exec_launch that finds the replacement ready:
 * that launch and every later one run the new version; every launch before
 * it ran the old one. Launch numbers go on across the switch (the switch
 * launch is the number sg_exec_update_query/_wait report), so a launch
 * number says which version ran it: version N+1 from the reported number
 * on. The switch launch does not wait for the old version's launches
 * still in flight: it is ordered after them (on the GPU, or in the host
 * backend's scheduling), and hands the old version to the build thread,
 * which waits for them and frees it; so it costs the launch a pointer swap
 * and a few event calls, not a build. sg_exec_wait, sg_exec_query and
 * sg_exec_wait_launch/_query_launch cover the old version's launches too.
 *
 * With the same topology the parameters change at once, as sg_exec_update
 * changes them (no thread, nothing to wait for): the next launch is the
 * switch launch.
 *
 * While a replacement is pending, sg_exec_set_* change the current
 * version (the replacement runs the graph as given), handles of the new
 * graph are refused until the switch, sg_exec_wait waits for launches, not
 * for the build, and sg_exec_get_info/_plan describe the current version.
 * A second sg_exec_update_async while the first is still building fails
 * with SG_ERR_BUSY (one already built is switched to first); one after a
 * switch first waits for the version retired there (its launches still in
 * flight, its destruction); sg_exec_update
 * waits for a pending build and switches to it before it applies its own
 * graph; sg_exec_destroy waits for a pending build and frees it.
 *
 * A build that fails (a node this backend cannot run, out of memory, a
 * thread or CUDA failure) changes nothing: launches go on running the
 * current version, and sg_exec_update_query/_wait return the error, its
 * message naming sg_exec_update_async. Errors found before the thread
 * starts (the graph handle, a cycle, a parameter the backend refuses) are
 * returned by sg_exec_update_async itself. */
SG_API sg_status sg_exec_update_async(sg_exec *exec, const sg_graph *graph);

/* The last sg_exec_update_async: SG_NOT_READY while its replacement builds
 * or waits for the next launch; SG_OK once switched, with *first_launch
 * (may be NULL) the number of the first launch that ran it (the launch
 * after the last one made, while none has yet); the build's error if it
 * failed. SG_ERR_INVALID_ARGUMENT if no asynchronous update was made. Never
 * blocks, never switches. */
SG_API sg_status sg_exec_update_query(sg_exec *exec, uint64_t *first_launch);

/* Waits for the build of the last sg_exec_update_async and, if it
 * succeeded and no launch has switched yet, switches now (after the
 * launches in flight: the next launch runs the new version). Returns as
 * sg_exec_update_query would after that, never SG_NOT_READY. */
SG_API sg_status sg_exec_update_wait(sg_exec *exec, uint64_t *first_launch);

/* ---- planned temporaries (streamgraph/graph.h, docs/buffers.md) ---------- */

/* The address `temp` has in this executable: in its arena (device memory
 * on the CUDA backend, host memory on the host backend), the same for the
 * executable's life unless sg_exec_update re-plans its topology. Each
 * executable, each pipeline instance, has its own. `temp` is a handle of
 * the graph the executable was made from (or last updated with). Contents
 * do not outlive a launch: read them only from nodes that declare it. */
SG_API sg_status sg_exec_get_temp(const sg_exec *exec, sg_temp temp, void **ptr);

typedef struct sg_exec_memory {
  size_t temp_count;         /* temporaries of the graph */
  size_t arena_bytes;        /* the arena holding them all, reused where the plan allows */
  size_t no_reuse_bytes;     /* what each temporary in its own bytes would take */
  int dag_order;             /* 1: reuse follows the graph's edges alone (a CUDA graph built
                                from them); 0: the plan's streams and events */
} sg_exec_memory;

SG_API sg_status sg_exec_get_memory_sized(const sg_exec *exec, sg_exec_memory *memory,
                                          size_t memory_size);
#ifndef SG_BUILDING_LIBRARY
static inline sg_status sg_exec_get_memory(const sg_exec *exec, sg_exec_memory *memory) {
  return sg_exec_get_memory_sized(exec, memory, sizeof *memory);
}
#else
sg_status sg_exec_get_memory(const sg_exec *exec, sg_exec_memory *memory);
#endif

#ifdef __cplusplus
}
#endif
#endif
