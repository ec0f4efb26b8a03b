/* Internal: the CUDA backend's state, shared by its files.
 *
 * One sg__cuda_state per executable. Both modes replay the same schedule
 * (plan/schedule.h); what differs is when: streams mode enqueues it at every
 * launch, graph mode enqueues (captures) or adds it node by node once and
 * then launches the instantiated graph.
 *
 * Files: cuda_exec.c (the ops table), cuda_device.c (device guard, node
 * checks, each node's op), cuda_nodes.c (enqueueing one node), cuda_work.c
 * (host work payloads), staged_copy.c (every copy with a pageable side),
 * stage_lanes.c (their helper streams), stage_mem.c (pinned memory, the
 * staging table), cuda_memset.c, cuda_stream_fn.c (child graphs),
 * streams_mode.c, cuda_streams.c, graph_mode.c, graph_explicit.c,
 * graph_capture.c, graph_update.c, graph_kernel_update.c, device_port.c
 * (core/device.h).
 *
 * Error convention: a helper that makes CUDA calls and meets only CUDA
 * errors returns the cudaError_t and names the failing call in *call; one
 * that can also fail for a host reason (memory, staging, a callback)
 * returns sg_status with the message set (or written into `msg` on the
 * launch path, which reports through the executable). */
#ifndef SG_CUDA_CUDA_EXEC_H
#define SG_CUDA_CUDA_EXEC_H

#include <cuda_runtime_api.h>
#include <stdatomic.h>
#include <stdint.h>

#include "core/node.h"
#include "cuda/cuda_devices.h"
#include "cuda/cuda_trace.h"
#include "exec/backend.h"
#include "plan/schedule.h"
#include "staging/staging.h"

/* How a node is carried out on the GPU, decided when the node is set (at
 * creation and at every update), so that a launch does not classify. */
typedef enum sg__cuda_op {
  SG__OP_NOTHING = 0,      /* empty node: only its dependencies matter */
  SG__OP_KERNEL,           /* cudaLaunchKernel / kernel node */
  SG__OP_COPY,             /* device, managed or pinned memory on both sides: cudaMemcpyAsync */
  SG__OP_STAGED_COPY,      /* a staging candidate (staging.h: a pageable side): staged_copy.c */
  SG__OP_MEMSET,           /* device or managed memory: cudaMemsetAsync / D16 / D32 */
  SG__OP_HOST_WORK,        /* on a CUDA host thread: host callback, host->host copy,
                              memset of host memory (see cuda_work.c) */
  SG__OP_STREAM_FN,        /* user function given a stream; a child graph in graph mode */
  SG__OP_PEER_STAGED,      /* device memory of two GPUs without peer access: through pinned
                              host memory (peer_copy.c); a child graph in graph mode */
  SG__OP_NCCL,             /* NCCL calls as one group (cuda_nccl.c); a child graph in graph mode */
  SG__OP_COND              /* graph mode: a CUDA conditional node with its bodies
                              (graph_conditional.c); streams mode: decided on the host
                              (streams_conditional.c) */
} sg__cuda_op;

/* Bytes a copy between GPUs without peer access moves through host memory
 * at a time (peer_copy.c). */
#define SG__PEER_CHUNK ((size_t)8 << 20)

/* An NCCL node's calls as the backend issues them (cuda_nccl.c). */
typedef struct sg__cuda_nccl {
  unsigned call_count;
  int *call_device;        /* call -> its communicator's device */
  uint32_t *call_index;    /* call -> that device's place in sg__cuda_state.dev */
  uint32_t hop_count;      /* devices other than the node's that calls run on */
  uint32_t *hop_index;     /* hop -> its device's place in sg__cuda_state.dev */
  cudaEvent_t fork;        /* the node's device: recorded before the group (with hops) */
  cudaEvent_t *hop_join;   /* hop -> recorded on that device's stream after the group */
  void **streams;          /* call -> the stream it is issued on (set per enqueue) */
} sg__cuda_nccl;

/* What a host-thread node does, captured by value. A payload never changes
 * once published: an update makes a new one, and the old one is retired
 * and freed only when no launch can still reach it (cuda_work.c), so the
 * data a launch runs with is the data it was launched with. */
typedef struct sg__cuda_work {
  sg_exec *exec;
  sg__node_kind kind;      /* SG__NODE_HOST, SG__NODE_COPY or SG__NODE_MEMSET */
  union {
    sg__host host;
    sg__copy copy;
    sg__memset memset;
  } u;
  /* Which launch a run belongs to: launches run one after the other and
   * each runs the payload once, so run k (from 0) is launch first + k. */
  uint64_t first;          /* the first launch that runs it */
  atomic_uint_fast64_t runs;
  uint64_t last;           /* when retired: the latest launch that may run it */
  struct sg__cuda_work *retired_next;
  char label[SG__LABEL_BYTES]; /* the node's label, for messages from the host thread */
} sg__cuda_work;

/* An instantiated CUDA graph and the graph node of each schedule node (NULL
 * for nodes without one: empty nodes, nodes folded into edges). The graph
 * is kept: per-node exec updates name nodes of the graph instantiated. */
/* A kernel node's driver function, for updates through the driver. */
typedef struct sg__cuda_kernel_fn {
  const void *func;        /* the __global__ it was looked up for */
  cudaFunction_t function;
} sg__cuda_kernel_fn;

/* The graph nodes a conditional node's bodies were filled with
 * (graph_conditional.c), kept so that a change inside a body can be set in
 * place: per body, each node's graph node, and a nested conditional node's
 * own record. */
typedef struct sg__cuda_body_nodes {
  uint32_t count;
  cudaGraphNode_t *nodes;             /* count */
  struct sg__cuda_cond_nodes **inner; /* count: a conditional node's, else NULL */
} sg__cuda_body_nodes;
typedef struct sg__cuda_cond_nodes {
  uint32_t body_count;
  sg__cuda_body_nodes *bodies;        /* body_count */
} sg__cuda_cond_nodes;

typedef struct sg__cuda_graph {
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  cudaGraphNode_t *nodes;  /* node_count */
  sg__cuda_kernel_fn *kernel_fns; /* node_count, made on the first kernel update */
  /* A traced graph's event-record nodes (2 * node_count + 1, numbered as
   * sg__cuda_trace_event says), or NULL; the tracer's set whose events they
   * record now. */
  cudaGraphNode_t *trace_nodes;
  unsigned trace_set;
  /* Copies the graph stages and copies through a registration, each launch
   * (counted in the statistics per launch, not per build). */
  uint32_t staged_copies, registered_copies;
  /* By node: the staging state (ring or registration) a copy with a
   * pageable side was built with, or NULL; made by the first such copy
   * (staged_copy.c). */
  struct sg__pstate **staged;
  /* By node: a conditional node's body nodes, or NULL; made by the first
   * conditional node (cond_node_count entries). */
  sg__cuda_cond_nodes **cond_nodes;
  uint32_t cond_node_count;
  /* By device in use (b->dev): the top level's conditional node added last
   * there, which the next one on that device is added after
   * (graph_conditional.c, "One conditional node at a time"). */
  cudaGraphNode_t *last_cond;
} sg__cuda_graph;

/* A node standing in for node `index` while a graph is rebuilt with new
 * parameters not yet in the executable's nodes (graph_update.c). */
typedef struct sg__cuda_swap {
  uint32_t index;
  const sg__node *node;
} sg__cuda_swap;

typedef struct sg__cuda_state {
  sg_exec *exec;               /* opaque: failure and statistics reports only */
  const sg__node *nodes;       /* the executable's nodes (exec/backend.h) */
  const sg__schedule *s;
  sg_exec_mode mode;
  sg_graph_build build;
  int device;                  /* the executable's (sg_exec_options.device) */
  sg__cuda_devices dev;        /* the devices the nodes run on (cuda_devices.h) */
  int max_shared_optin;        /* cudaDevAttrMaxSharedMemoryPerBlockOptin */
  int max_shared_default;      /* cudaDevAttrMaxSharedMemoryPerBlock */
  const void *loaded_func;     /* the function load_function (cuda_device.c) loaded last, */
  int loaded_device;           /* on this device: its next nodes need no loading */
  void *context;               /* the CUcontext the streams and graph were made in (when the
                                  driver says), for sg__cuda_enter_exec's fast check */

  uint8_t *op;                 /* node -> sg__cuda_op */
  sg__cuda_work **work;        /* node -> current payload (SG__OP_HOST_WORK), else NULL */
  sg__cuda_work *retired;      /* replaced payloads launches may still use */

  uint32_t stream_count;       /* streams created, >= 1 */
  cudaStream_t *streams;       /* non-blocking, each on its planned stream's device */
  /* Where launches start and end, on the executable's device: streams[home_index],
   * the first planned stream there, or (home_index UINT32_MAX) that device's
   * stream of `dev` when no planned stream is on it. */
  cudaStream_t home;
  uint32_t home_index;
  cudaStream_t *node_stream;   /* node -> streams[stream_of[node]] (streams mode) */
  cudaEvent_t *events;         /* the schedule's cross-stream events */
  cudaEvent_t *joins;          /* stream -> its last work of a launch (home's unused) */
  cudaEvent_t fork;            /* recorded in the caller's stream */
  cudaEvent_t start;           /* home at the start of a launch */
  sg__cuda_tracer tracer;      /* traced executables: the launches' events (cuda_trace.h);
                                  zeroed (tracer.trace NULL) otherwise */

  sg__cuda_nccl **nccl;        /* node -> its NCCL calls' state (SG__OP_NCCL), else NULL */
  void **bounce;               /* node -> pinned bounce buffer (SG__OP_PEER_STAGED), else NULL */

  sg__cuda_graph g;            /* graph mode (traced: with the trace's nodes) */
  sg__cuda_graph plain;        /* graph mode with trace_every > 1: the same graph untraced,
                                  which the launches not sampled run; else empty */
  sg__staging *staging;        /* how copies with a pageable side run (always made on CUDA) */
  struct sg__stage_lanes *lanes; /* streams mode: helper streams of staged copies
                                    (stage_lanes.h), made on first use */

  /* Launches and their ends (launch_marks.c). Launches are numbered on
   * from the executable's count; launch L's end is marks[L % SG_EXEC_
   * TRACKED_LAUNCHES] when marked[] says L. */
  uint64_t launches;           /* launches made (a launch that failed half-way not counted) */
  uint64_t finished;           /* every launch up to this one is known to have ended */
  int track;                   /* graph mode: mark launches into home too */
  int interrupted;             /* a launch stopped half-way: waits synchronise every stream */
  cudaEvent_t marks[SG_EXEC_TRACKED_LAUNCHES]; /* made on first use */
  uint64_t marked[SG_EXEC_TRACKED_LAUNCHES];
  /* A state switched to by sg_exec_update_async (sg__cuda_follow): home
   * waits for the old state's last launch; `handover` is recorded in home
   * after that wait, and a graph's first launch into a caller's stream
   * waits for it there (`handover_pending`). Made at the switch. */
  cudaEvent_t handover;
  int handover_pending;

  /* Conditions (graph_conditional.c): as the graph made them, and the CUDA
   * handles of the graph built last (0 for a condition no node reads). */
  struct sg__cond_info *cond_info;
  unsigned long long *cond_handles;
  uint32_t cond_count;
  /* Streams mode (streams_conditional.c): each condition's word (pinned,
   * mapped) and the defaults copied into them at each launch. */
  unsigned *cond_words;
  unsigned *cond_defaults;
  /* Programmatic dependent launch (graph_pdl.c), NULL where unused:
   * explicit graph mode: node -> its incoming edges are programmatic (the
   * schedule's array); streams mode and capture: node -> launched with the
   * programmatic stream serialization attribute (owned). */
  const uint8_t *pdl;
  uint8_t *pdl_launch;
} sg__cuda_state;

/* ---- cuda_device.c ------------------------------------------------------ */

/* Makes `device` current, remembering the previous one in *previous. */
sg_status sg__cuda_enter(int device, int *previous, const char *fn);
/* sg__cuda_enter for the executable's device, without asking the runtime
 * when the executable's context is already current (updates and launches:
 * see cuda_device.c). Pairs with sg__cuda_leave(b->device, previous). */
sg_status sg__cuda_enter_exec(const sg__cuda_state *b, int *previous, const char *fn);
/* Restores the device sg__cuda_enter replaced. */
void sg__cuda_leave(int device, int previous);
/* The calling thread's current CUcontext, or NULL (none, or unknown). */
void *sg__cuda_current_context(void);
/* Checks that `node` can run on the backend's device (memory kinds, a CUDA
 * function, shared memory within the device's limit, which it raises for
 * the function when needed) and gives its op; for a copy, also its staging
 * direction (*dir; SG__STAGE_NONE for anything but SG__OP_STAGED_COPY), as
 * staging classifies it. Message prefixed by `fn`. */
sg_status sg__cuda_check_node(sg__cuda_state *b, const sg__node *node, uint32_t index,
                              const char *fn, sg__cuda_op *op, sg__stage_dir *dir);

/* A stream of `device` owned by the executable, for captures and NCCL hops:
 * the device's stream of `dev` when several devices are in use, else
 * streams[0] (the executable's only device). */
cudaStream_t sg__cuda_device_stream(const sg__cuda_state *b, int device);

/* ---- cuda_work.c -------------------------------------------------------- */

/* A payload doing what `node` says (op SG__OP_HOST_WORK); `label`
 * names the node in messages. */
sg_status sg__cuda_work_new(sg__cuda_state *b, const sg__node *node, const char *label,
                            const char *fn, sg__cuda_work **out);
/* Puts a payload replaced by an update on the retired list: launches made
 * so far may still run it. */
void sg__cuda_work_retire(sg__cuda_state *b, sg__cuda_work *work);
/* Frees the retired payloads no launch after `finished` can run. */
void sg__cuda_work_reap(sg__cuda_state *b, uint64_t finished);
/* The host function every host-work node runs (cudaLaunchHostFunc or a
 * graph host node), with its payload. It never calls CUDA. */
void CUDART_CB sg__cuda_work_run(void *payload);

/* ---- launch_marks.c ----------------------------------------------------- */

/* Records the end of launch `launch` in `stream` (where the launch ends:
 * streams[0], or the caller's stream in graph mode), making its mark on
 * first use. cudaSuccess or the error, the call in *call. */
cudaError_t sg__cuda_mark_launch(sg__cuda_state *b, cudaStream_t stream, uint64_t launch,
                                 const char **call);
/* The mark that ends launch `launch` or the first marked one after it, or
 * NULL when none is (a graph launched into streams[0] unmarked). */
cudaEvent_t sg__cuda_mark_at_or_after(const sg__cuda_state *b, uint64_t launch,
                                      uint64_t *marked_launch);
/* Waits (blocking) or checks whether launches up to `launch` have ended:
 * SG_OK (and b->finished advanced, retired payloads reaped) or SG_NOT_READY.
 * A failure the device reports is recorded on the executable for the
 * oldest launch not yet seen ended, and everything is then drained. */
sg_status sg__cuda_wait_through(sg__cuda_state *b, uint64_t launch, int blocking,
                                const char *fn);
/* Really waits for everything the executable may have in flight (not a
 * fault point: freeing and destroying rely on it). */
void sg__cuda_drain(sg__cuda_state *b);
/* Nothing runs: reads the traced launches' times back (the device is made
 * current for the anchor event the tracer may renew; if it cannot be, the
 * times stay pending until the next wait). cuda_exec.c. */
void sg__cuda_collect_trace(sg__cuda_state *b, const char *fn);
/* Destroys the marks (streams drained). */
void sg__cuda_marks_free(sg__cuda_state *b);
/* Makes every launch mark and the handover event now (a state built ahead
 * of its switch: its first launches make none). */
cudaError_t sg__cuda_marks_make(sg__cuda_state *b, const char **call);
/* Orders the next launch of `b` after every launch `old` has made, without
 * waiting on the host (the backend's `follow`, exec/backend.h). */
sg_status sg__cuda_follow(sg__cuda_state *b, const sg__cuda_state *old, const char *fn);

/* ---- cuda_nodes.c ------------------------------------------------------- */

/* Enqueues node `index`, whose parameters are `node`, on `stream` (streams
 * mode, and capture of the ops that capture as they are). On failure
 * returns the status and writes the message, prefixed by `fn` and the
 * node, into `msg`. */
sg_status sg__cuda_enqueue(sg__cuda_state *b, uint32_t index, const sg__node *node,
                           cudaStream_t stream, const char *fn, char *msg, size_t cap);
/* The kernel node parameters of a kernel node (pointers into `k`). */
void sg__cuda_kernel_params(const sg__kernel *k, struct cudaKernelNodeParams *p);

/* ---- programmatic dependent launch (graph_pdl.c) ---- */

/* Decides b->pdl / b->pdl_launch from the schedule, the mode and the
 * device (after setup_nodes: reads b->op). */
sg_status sg__cuda_pdl_setup(sg__cuda_state *b, int traced, const char *fn);
void sg__cuda_pdl_free(sg__cuda_state *b);
/* cudaLaunchKernelExC with cudaLaunchAttributeProgrammaticStreamSerialization. */
cudaError_t sg__cuda_launch_programmatic(const sg__kernel *k, cudaStream_t stream);
/* Adds a kernel node whose edges from `deps` (kernel nodes) are programmatic;
 * the failing call's name in *call. */
cudaError_t sg__cuda_graph_add_programmatic(cudaGraphNode_t *added, cudaGraph_t graph,
                                            const cudaGraphNode_t *deps, size_t nd,
                                            const struct cudaKernelNodeParams *p,
                                            const char **call);
/* "sg_exec_launch: node 'k' (#3)": where a message about a node starts. */
const char *sg__cuda_where(const sg__cuda_state *b, const char *fn, uint32_t index,
                           char buf[SG__LABEL_BYTES + 64]);

/* ---- staged_copy.c: every copy with a pageable side -------------------- */

/* Every copy of op SG__OP_STAGED_COPY goes through these: enqueue on a
 * stream (streams mode), add a graph node (graph mode, both builds), and
 * say whether an instantiated graph's node can stay as it is for new
 * parameters. Each takes the node's index and its copy parameters `c`
 * (the executable's, or new ones a rebuild stands in). See staged_copy.c. */
sg_status sg__cuda_staged_copy_enqueue(sg__cuda_state *b, uint32_t index, const sg__copy *c,
                                       cudaStream_t stream, const char *fn, char *msg,
                                       size_t cap);
sg_status sg__cuda_staged_copy_add_node(sg__cuda_state *b, uint32_t index, const sg__copy *c,
                                        cudaGraph_t graph, const cudaGraphNode_t *deps,
                                        size_t dep_count, cudaGraphNode_t *node, const char *fn,
                                        sg__cuda_graph *counts);
/* Applies `fresh`, the new parameters of staged copy `index` (now `now`),
 * to the instantiated graph in place: 1 when done, 0 when the graph must
 * be rebuilt. Prepares `fresh`'s state first (a rebuild that cannot get it
 * fails). The pageable side of a staged copy is given per launch, so a new
 * one changes nothing in the graph; a new device side updates the copy's
 * child graph in place; only another size, direction or route (a ring, a
 * registration of another buffer) rebuilds. */
int sg__cuda_staged_copy_set_in_place(sg__cuda_state *b, uint32_t index, const sg__copy *now,
                                      const sg__copy *fresh);
/* After a rebuild for an update of node `index` (nothing in flight): frees
 * the node's staging states the new graph does not use. */
void sg__cuda_staged_copy_collect(sg__cuda_state *b, uint32_t index);
/* Before an update of node `index` to `fresh` (its op `op`, staging
 * direction `dir`) is applied, outside any capture: tells staging, which
 * may take a ring or register a buffer. On error the update is refused. */
sg_status sg__cuda_staged_copy_prepare(sg__cuda_state *b, uint32_t index, const sg__node *fresh,
                                       sg__cuda_op op, sg__stage_dir dir, const char *fn);
/* Graph mode, before cudaGraphLaunch into the caller's `stream` (NULL: the
 * executable's own): a graph whose staged copies use the memop protocol
 * cannot be captured into a caller's graph (the conductor is armed once per
 * launch); SG_ERR_UNSUPPORTED, naming the copy, when `stream` is capturing. */
sg_status sg__cuda_staged_copy_launch_check(sg__cuda_state *b, cudaStream_t stream);
/* Graph mode, right before cudaGraphLaunch: hands each staged copy of the
 * graph the pageable address of this launch (the node's parameters now) and
 * arms its memop-protocol copies for it. Armed before the launch, because
 * cudaGraphLaunch may block until the device has run part of the graph (a
 * large graph's first launch does), and the device cannot pass a staged
 * copy whose host side is not served yet. SG_ERR_OUT_OF_MEMORY, with its
 * message, when one cannot take its address; nothing is handed over then. */
sg_status sg__cuda_staged_copy_queue(sg__cuda_state *b);
/* Graph mode, after the cudaGraphLaunch that followed the queue: when it
 * was not `launched`, takes back the addresses queued and the arms made for
 * it. */
void sg__cuda_staged_copy_launched(sg__cuda_state *b, int launched);

/* ---- peer_copy.c: copies between GPUs without peer access --------------- */

/* Gives node `index` its pinned bounce buffer (once). */
sg_status sg__cuda_peer_bounce(sg__cuda_state *b, uint32_t index, const char *fn);
void sg__cuda_peer_bounce_free(sg__cuda_state *b);
/* Enqueues copy `c` of node `index` through its bounce buffer on `stream`. */
sg_status sg__cuda_peer_staged_enqueue(sg__cuda_state *b, uint32_t index, const sg__copy *c,
                                       cudaStream_t stream, const char *fn, char *msg,
                                       size_t cap);
/* The same copy as a child graph (the node's device current). */
sg_status sg__cuda_peer_staged_graph(sg__cuda_state *b, uint32_t index, const sg__copy *c,
                                     const char *fn, cudaGraph_t *child);

/* ---- cuda_nccl.c: NCCL nodes -------------------------------------------- */

/* Checks node `index`'s calls (nccl_node.h), adds their devices to b->dev,
 * and makes the events of calls on other devices than the node's. */
sg_status sg__cuda_nccl_setup(sg__cuda_state *b, uint32_t index, const sg__node *node,
                              const char *fn, sg__cuda_nccl **out);
/* Checks new calls of node `index` (same communicators and ops). */
sg_status sg__cuda_nccl_recheck(sg__cuda_state *b, uint32_t index, const sg__node *fresh,
                                const char *fn);
void sg__cuda_nccl_free(sg__cuda_nccl *x);
/* Issues the calls on `stream` (the node's) and the devices' streams. */
sg_status sg__cuda_nccl_enqueue(sg__cuda_state *b, uint32_t index, const sg__node *node,
                                cudaStream_t stream, const char *fn, char *msg, size_t cap);
/* Captures the calls into *child, on the stream of the node's device. */
sg_status sg__cuda_nccl_capture(sg__cuda_state *b, uint32_t index, const sg__node *node,
                                const char *fn, cudaGraph_t *child);

/* A child graph standing for node `index` in graph mode: a stream
 * function's, NCCL calls' or a copy through host memory's (the op says
 * which), with the node's device current while it is made. */
sg_status sg__cuda_child_graph(sg__cuda_state *b, uint32_t index, const sg__node *node,
                               const char *fn, cudaGraph_t *child);
static inline int sg__cuda_op_is_child(uint8_t op) {
  return op == SG__OP_STREAM_FN || op == SG__OP_NCCL || op == SG__OP_PEER_STAGED;
}

/* ---- cuda_memset.c ------------------------------------------------------ */

/* Enqueues a device memset of any element size on `stream`. */
cudaError_t sg__cuda_memset_enqueue(const sg__memset *m, cudaStream_t stream, const char **call);
/* The memset node parameters of a device memset. */
void sg__cuda_memset_params(const sg__memset *m, struct cudaMemsetParams *p);

/* ---- cuda_stream_fn.c --------------------------------------------------- */

/* Captures the work of stream-function node `index` into *child, on a
 * stream of its device (thread-local capture). An empty capture gives a graph with
 * one empty node, so the child always has work to stand for. */
sg_status sg__cuda_stream_fn_capture(sg__cuda_state *b, uint32_t index, const sg__node *node,
                                     const char *fn, cudaGraph_t *child);

/* ---- streams_mode.c ----------------------------------------------------- */

/* Creates the streams and events (cuda_streams.c). On failure frees what
 * it made. */
sg_status sg__cuda_streams_make(sg__cuda_state *b, const char *fn);
/* Only streams[0] (graph mode, explicit build). */
sg_status sg__cuda_streams_make_one(sg__cuda_state *b, const char *fn);
void sg__cuda_streams_free(sg__cuda_state *b);
sg_status sg__cuda_streams_launch(sg__cuda_state *b, void *cuda_stream, uint64_t launch);

/* ---- graph_mode.c, graph_explicit.c, graph_capture.c, graph_update.c,
 * graph_kernel_update.c ------------------------------------------------- */

/* Graph mode's state: streams, the tracer (for `trace`, the executable's,
 * or NULL) and the first graph. */
sg_status sg__cuda_graph_create(sg__cuda_state *b, struct sg__trace *trace, const char *fn);
/* The instantiated graph of a graph-mode CUDA executable and the graph node
 * of each node (indexed like the snapshot; NULL where none), valid until
 * the next rebuild. For benchmarks: bench/launch_bench.cu updates our own
 * graph with the raw set-params call, to tell the driver's cost on the
 * graph we build from the library's cost around it. */
sg_status sg__cuda_graph_of(const sg_exec *exec, cudaGraphExec_t *graph_exec,
                            const cudaGraphNode_t **nodes);
/* 1 when a traced CUDA executable times its graph with stamps, 0 when with
 * events (or untraced, or not CUDA). For tests and benchmarks: they say
 * which way they measured. */
int sg__cuda_trace_stamped(const sg_exec *exec);
sg_status sg__cuda_graph_launch(sg__cuda_state *b, void *cuda_stream, uint64_t launch);
/* Builds and instantiates the graph from the executable's nodes (with
 * `swap` standing in for one of them, or NULL), b->op and b->work as they
 * are now; on success replaces b->g (the caller has waited for launches in
 * flight). On failure b->g is untouched. */
sg_status sg__cuda_graph_rebuild(sg__cuda_state *b, const sg__cuda_swap *swap, const char *fn);
void sg__cuda_graph_free(sg__cuda_graph *g);
/* Node `v` as a build sees it: `swap`'s node for its index, else the
 * executable's. */
static inline const sg__node *sg__cuda_build_node(const sg__cuda_state *b,
                                                  const sg__cuda_swap *swap, uint32_t v) {
  return swap && swap->index == v ? swap->node : &b->nodes[v];
}
/* Builders: fill out->graph, out->nodes and the copy counts (not the exec). */
sg_status sg__cuda_build_explicit(sg__cuda_state *b, const sg__cuda_swap *swap, const char *fn,
                                  sg__cuda_graph *out);
sg_status sg__cuda_build_capture(sg__cuda_state *b, const sg__cuda_swap *swap, const char *fn,
                                 sg__cuda_graph *out);
/* Applies `fresh` (checked; its op `op`; `payload` its new host-work
 * payload or NULL) in place, or by a rebuild the driver's refusal calls for.
 * On success the backend has taken `payload`. */
sg_status sg__cuda_graph_update_node(sg__cuda_state *b, uint32_t index, const sg__node *fresh,
                                     sg__cuda_op op, sg__cuda_work *payload, int *in_place);
/* Sets a kernel node of instantiated graph `g` (b->g, or b->plain) in place
 * (graph_kernel_update.c):
 * through the driver when it can, else the runtime's call. cudaSuccess, or
 * the runtime's refusal. */
cudaError_t sg__cuda_graph_set_kernel(sg__cuda_state *b, sg__cuda_graph *g, uint32_t index,
                                      const sg__kernel *k);

/* ---- cuda_exec.c -------------------------------------------------------- */

/* Blocks until every launch so far is done (mode-independent). */
sg_status sg__cuda_wait_idle(sg__cuda_state *b, const char *fn);

/* ---- cuda_arena.c -------------------------------------------------------- */

/* The arena of an executable's planned temporaries: one cudaMalloc on
 * `device` (sg__backend_ops.arena_alloc), freed with cudaFree. */
sg_status sg__cuda_arena_alloc(int device, size_t bytes, const char *fn, void **arena);
void sg__cuda_arena_free(int device, void *arena);

/* ---- graph_conditional.c ----------------------------------------------- */

struct sg_cond_ref;
/* Copies the graph's conditions (args->conds) into the state. */
sg_status sg__cuda_conds_init(sg__cuda_state *b, const sg__backend_args *args);
void sg__cuda_conds_free(sg__cuda_state *b);
/* Checks conditional node `node` (index `index` of the graph, or of a body)
 * and all its bodies can run here, on `device`: in graph mode the CUDA
 * version its kind needs, and in every mode only what CUDA allows in a
 * body. Messages start with `fn` and name the node and rule. */
sg_status sg__cuda_cond_check(const sg__cuda_state *b, const sg__node *node, uint32_t index,
                              int device, const char *fn);
/* Checks a kernel bound to a condition (`where` names it). */
sg_status sg__cuda_cond_check_kernel(const sg__cuda_state *b, const sg__kernel *k,
                                     const char *where);
/* Checks that the device can read the grid source of a kernel bound to one
 * (sg_graph_kernel_bind_grid; `where` names it). */
sg_status sg__cuda_grid_check(const sg__kernel *k, const char *where);
/* Creates the handles of the conditions that conditional nodes read, on
 * `graph` (before any node that names them is added). */
sg_status sg__cuda_cond_handles(sg__cuda_state *b, cudaGraph_t graph, const char *fn);
/* sg__cuda_kernel_params with a bound argument's sg_cond_ref filled in:
 * `args` (SG_MAX_KERNEL_ARGS) and `ref` hold what p points at. */
void sg__cuda_cond_kernel_params(const sg__cuda_state *b, const sg__kernel *k,
                                 struct cudaKernelNodeParams *p, void **args,
                                 struct sg_cond_ref *ref);
/* ---- streams_conditional.c ---------------------------------------------- */

/* The conditions' words, made by sg__cuda_conds_init in streams mode. */
sg_status sg__cuda_cond_words_make(sg__cuda_state *b, const char *fn);
void sg__cuda_cond_words_free(sg__cuda_state *b);
/* At the start of a launch, on `home`: the defaults of the conditions with
 * SG_COND_ASSIGN_DEFAULT into their words. */
cudaError_t sg__cuda_cond_reset(sg__cuda_state *b, cudaStream_t home, const char **call);
/* Streams mode: enqueues node `index` (a conditional node, which it
 * evaluates, synchronising `stream`, or a kernel bound to a condition) on
 * `stream`. A failure's text goes to `msg`. */
sg_status sg__cuda_cond_enqueue(sg__cuda_state *b, uint32_t index, const sg__node *node,
                                cudaStream_t stream, const char *fn, char *msg, size_t cap);

/* Launches kernel node `index` (bound to a condition) on `stream` with the
 * condition's handle (graph mode, capture build). */
sg_status sg__cuda_cond_launch_kernel(sg__cuda_state *b, uint32_t index, const sg__node *node,
                                      cudaStream_t stream, const char *fn, char *msg,
                                      size_t cap);
/* Adds conditional node `index` with `deps` to `graph`, and its bodies,
 * recording the bodies' graph nodes in out->cond_nodes[index]. */
sg_status sg__cuda_cond_add(sg__cuda_state *b, uint32_t index, const sg__node *node,
                            cudaGraph_t graph, const cudaGraphNode_t *deps, size_t nd,
                            cudaGraphNode_t *added, sg__cuda_graph *out, const char *fn);
/* Frees what sg__cuda_cond_add recorded in `g`. */
void sg__cuda_cond_nodes_free(sg__cuda_graph *g);
/* Graph mode: sets conditional node `index`'s bodies to `fresh`'s in
 * instantiated graph `g` (b->g, or b->plain), node by node through the recorded body nodes, where
 * they differ from the executable's. 1 when done; 0 when the graph must be
 * rebuilt instead (the driver refused, a kernel bound to a condition, no
 * record). A parameter change inside a body changes one node, so a refusal
 * leaves nothing half set. */
int sg__cuda_cond_set_in_place(sg__cuda_state *b, const sg__cuda_graph *g, uint32_t index,
                               const sg__node *fresh);

#endif
