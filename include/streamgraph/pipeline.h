/*
 * streamgraph/pipeline.h - one graph run over a stream of batches, with
 * several instances in flight (double, triple buffering...).
 *
 * Launches of one executable run one after the other, so a single
 * executable cannot upload batch i+1 while batch i computes. A pipeline makes
 * `depth` executables ("instances") from one graph and runs batch i on
 * instance i % depth: while batch i computes, batch i+1 uploads and batch i-1
 * downloads. That cross-iteration overlap is the pipeline's whole purpose.
 *
 * Per-instance state. Two batches in flight must not share device buffers,
 * so each instance has its own. The `setup` callback is called once per
 * instance, at creation: allocate the instance's buffers there, point the
 * instance's nodes at them with sg_pipeline_instance_bind (or sg_exec_set_*
 * on instance->exec; node handles of the graph are valid for every
 * instance), and keep them in instance->data; `teardown` frees them. The
 * graph itself is built with any valid buffers (the first instance's, say):
 * it is a template. A graph whose nodes touch only memory that batches bind
 * needs no setup at all.
 *
 * Per-batch binding. A batch lists binds: "copy node X reads this host
 * pointer", "kernel node K's argument 2 has this value", "host node H gets
 * this user data". Each is applied to the batch's instance through the
 * parameter-update path (sg_exec_set_*): never a re-plan, in place on an
 * instantiated CUDA graph. A bind changes only what it names (the copy's
 * other pointer and size, the kernel's other arguments stay as they are), and
 * what a batch does not bind keeps the value its instance last had (from the
 * graph, from setup, or from an earlier batch on that instance). So bind
 * every per-batch value in every batch. Anything binds cannot express can be
 * done by the optional `bind` callback with sg_exec_set_* on the instance.
 *
 * Queue-ahead and back-pressure. Batch i runs on instance i % depth. It is
 * launched there at once, while the instance's earlier batches still run:
 * the device runs an instance's batches one after the other, in order, so
 * the next one starts the moment the one before it ends, without waiting
 * for the host to notice, bind and launch. At most `queue` batches (default
 * 2: the running one and one queued behind it) are in flight per instance,
 * so at most depth x queue batches in all: submitting batch i needs batch
 * i - depth x queue to be complete; sg_pipeline_submit waits for it,
 * sg_pipeline_try_submit answers SG_ERR_WOULD_BLOCK instead. That bounds
 * what batches in flight hold: their host buffers (yours: reuse a batch's
 * buffers once it is reported complete, not when a later submit returns),
 * staging rings and executable launches. queue 1 launches batch i + depth
 * only once batch i is complete (no queue-ahead).
 *
 * Completion, in batch order. A batch is complete when all its work is done,
 * its outputs are in place and its host buffers may be reused. Completions
 * are reported in batch order, each batch exactly once (unless the pipeline
 * is destroyed first): through `on_complete`, called on the thread that calls
 * into the pipeline (submit, try_submit, poll, wait, drain), and through
 * sg_pipeline_wait on a batch index. Because callbacks run on your thread,
 * they may use CUDA and streamgraph freely (but not this pipeline).
 *
 * Failure. When a batch fails (a host callback returns non-zero, a CUDA
 * call fails, a kernel faults) the pipeline stops: the failing batch is
 * reported with its status and a message naming the batch and the node;
 * earlier batches complete and are reported normally; later batches already
 * in flight are waited for and reported as SG_ERR_STOPPED (their outputs are
 * undefined); later submits return SG_ERR_STOPPED. A stopped pipeline can
 * still be drained and destroyed, and nothing hangs. A call that fails before
 * its batch is accepted (a bad bind, say) does not stop the pipeline.
 *
 * Binds of a queued batch. A batch's binds are applied while the
 * instance's earlier batches may still run: each is an sg_exec_set_* on the
 * instance, which changes only launches made after it (a CUDA graph updated
 * in place affects later launches only; streams mode and the host backend
 * take parameters by value at launch; staging rings are per launch), so a
 * batch in flight keeps what it was launched with. A bind that needs the
 * CUDA graph re-instantiated (a host pointer changing between pinned and
 * pageable memory, in graph mode) waits for the instance to be idle first.
 *
 * Threads. A pipeline is used from one thread at a time, like an
 * executable. Every callback runs on that thread, inside a pipeline call.
 * A pipeline call made while another thread is inside one, or from a host
 * callback of one of the pipeline's own batches, answers SG_ERR_BUSY; one
 * made from the bind or on_complete callback answers
 * SG_ERR_INVALID_ARGUMENT (sg_pipeline_get_stats and _get_instance are
 * allowed there).
 */
#ifndef STREAMGRAPH_PIPELINE_H
#define STREAMGRAPH_PIPELINE_H

#include <stddef.h>
#include <stdint.h>

#include "exec.h"
#include "graph.h"
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sg_pipeline sg_pipeline;

#define SG_PIPELINE_MAX_DEPTH 64u
/* The most batches in flight per instance (sg_pipeline_options.queue). */
#define SG_PIPELINE_MAX_QUEUE 8u

/* One instance: what setup, bind and teardown receive. */
typedef struct sg_pipeline_instance {
  sg_exec *exec;             /* the instance's executable (owned by the pipeline) */
  unsigned index;            /* 0 .. depth-1; batch i runs on instance i % depth */
  void *data;                /* yours: set it in setup, read it in bind and teardown */
} sg_pipeline_instance;

/* Called once per instance at creation, before any batch. Returns 0 on
 * success; anything else fails sg_pipeline_create (SG_ERR_CALLBACK), after
 * `teardown` has been called for the instances already set up. */
typedef int (*sg_pipeline_setup_fn)(sg_pipeline_instance *instance, void *user_data);
/* Called once per set-up instance by sg_pipeline_destroy (or a failing
 * sg_pipeline_create), when nothing runs on it any more. */
typedef void (*sg_pipeline_teardown_fn)(sg_pipeline_instance *instance, void *user_data);
/* Called by submit after the batch's binds were applied, with the instance
 * idle (a pipeline with a bind callback does not queue batches behind each
 * other: the callback may touch what earlier batches use); may call
 * sg_exec_set_* on instance->exec. Returns 0 on success; anything else
 * refuses the batch (SG_ERR_CALLBACK) without stopping the pipeline. */
typedef int (*sg_pipeline_bind_fn)(sg_pipeline_instance *instance, uint64_t batch,
                                   void *batch_data, void *user_data);
/* Called once per batch, in batch order, when the batch is complete
 * (status SG_OK), failed (its error; sg_last_error() describes it during the
 * call), or was cut off by an earlier batch's failure (SG_ERR_STOPPED). */
typedef void (*sg_pipeline_complete_fn)(uint64_t batch, sg_status status, void *batch_data,
                                        void *user_data);

typedef struct sg_pipeline_options {
  unsigned depth;            /* instances in flight, 1..SG_PIPELINE_MAX_DEPTH (default 3) */
  /* How each instance's executable is made. With exec.max_streams 0 each
   * instance gets an equal share of the device's hardware queues
   * (CUDA_DEVICE_MAX_CONNECTIONS, else 8, divided by depth, at least 1):
   * streams beyond that share queues, and a shared queue makes one
   * instance's work wait behind another's, which is the overlap lost. */
  sg_exec_options exec;
  sg_pipeline_setup_fn setup;          /* optional */
  sg_pipeline_teardown_fn teardown;    /* optional */
  sg_pipeline_bind_fn bind;            /* optional */
  sg_pipeline_complete_fn on_complete; /* optional */
  void *user_data;           /* given to every callback */
  /* Data parallel over several GPUs: instance i is made on device
   * devices[i % device_count] (its exec.device; nodes the graph puts on a
   * device of their own stay there), so consecutive batches run on
   * different GPUs at once. Each instance's setup allocates its buffers on
   * its own device (sg_exec_get_info(instance->exec).device). Completions
   * are still reported in batch order. With exec.max_streams 0, the
   * hardware queues of a device are shared among the instances on it.
   * NULL and 0: every instance on exec.device. Read only by
   * sg_pipeline_create. */
  const int *devices;
  unsigned device_count;     /* 1..SG_PIPELINE_MAX_DEPTH when devices is set */
  unsigned queue;            /* batches in flight per instance, 1..SG_PIPELINE_MAX_QUEUE
                                (default 2; 1: no queue-ahead); 1 when `bind` is set */
} sg_pipeline_options;

/* Fills `opts` with the defaults (depth 3, queue 2, sg_exec_options_init). */
SG_API void sg_pipeline_options_init_sized(sg_pipeline_options *opts, size_t opts_size);
#ifndef SG_BUILDING_LIBRARY
static inline void sg_pipeline_options_init(sg_pipeline_options *opts) {
  sg_pipeline_options_init_sized(opts, sizeof *opts);
}
#else
void sg_pipeline_options_init(sg_pipeline_options *opts);
#endif

/* Makes `depth` executables of `graph` and sets each up. The graph may be
 * changed or destroyed afterwards. Errors of executable creation (a cycle,
 * an unavailable backend, a node without host twin...) come back as they
 * are, naming the instance. */
SG_API sg_status sg_pipeline_create_sized(const sg_graph *graph, const sg_pipeline_options *opts,
                                          size_t opts_size, sg_pipeline **out);
#ifndef SG_BUILDING_LIBRARY
static inline sg_status sg_pipeline_create(const sg_graph *graph, const sg_pipeline_options *opts,
                                           sg_pipeline **out) {
  return sg_pipeline_create_sized(graph, opts, sizeof *opts, out);
}
#else
sg_status sg_pipeline_create(const sg_graph *graph, const sg_pipeline_options *opts,
                             sg_pipeline **out);
#endif
/* Waits for batches in flight without reporting them (call
 * sg_pipeline_drain first to have them reported), calls teardown for each
 * instance, frees everything. Works on a stopped pipeline. */
SG_API sg_status sg_pipeline_destroy(sg_pipeline *pipeline);

/* ---- batches ------------------------------------------------------------ */

typedef enum sg_pipeline_bind_kind {
  SG_BIND_COPY_SRC = 1,      /* copy node: its source pointer */
  SG_BIND_COPY_DST,          /* copy node: its destination pointer */
  SG_BIND_KERNEL_ARG,        /* kernel node: one argument's value */
  SG_BIND_HOST_DATA          /* host node: the user data its function receives */
} sg_pipeline_bind_kind;

typedef struct sg_pipeline_bind {
  sg_pipeline_bind_kind kind;
  sg_node node;              /* a node of the pipeline's graph */
  /* COPY_SRC / COPY_DST: the new pointer, checked like sg_graph_add_copy
   * (a host->device copy's source must be host memory, pageable or pinned).
   * KERNEL_ARG: points at the argument's new value, copied during submit.
   * HOST_DATA: the user data, passed on as it is (may be NULL). */
  const void *ptr;
  /* COPY_*: the copy's new size in bytes, or 0 to keep it.
   * KERNEL_ARG: the value's size, which must equal the argument's. */
  size_t bytes;
  unsigned arg;              /* KERNEL_ARG: the argument's index */
} sg_pipeline_bind;

static inline sg_pipeline_bind sg_bind_copy_src(sg_node node, const void *src) {
  sg_pipeline_bind b = {SG_BIND_COPY_SRC, node, src, 0, 0};
  return b;
}
static inline sg_pipeline_bind sg_bind_copy_dst(sg_node node, void *dst) {
  sg_pipeline_bind b = {SG_BIND_COPY_DST, node, dst, 0, 0};
  return b;
}
static inline sg_pipeline_bind sg_bind_kernel_arg(sg_node node, unsigned arg, const void *value,
                                                  size_t size) {
  sg_pipeline_bind b = {SG_BIND_KERNEL_ARG, node, value, size, arg};
  return b;
}
static inline sg_pipeline_bind sg_bind_host_data(sg_node node, void *user_data) {
  sg_pipeline_bind b = {SG_BIND_HOST_DATA, node, user_data, 0, 0};
  return b;
}

/* Applies binds to one instance: for setup (point the instance's nodes at
 * its own buffers) and for the bind callback. Same rules as a batch's binds:
 * all are checked before any is applied. */
SG_API sg_status sg_pipeline_instance_bind_sized(sg_pipeline_instance *instance,
                                                 size_t instance_size,
                                                 const sg_pipeline_bind *binds, size_t bind_size,
                                                 size_t count);
#ifndef SG_BUILDING_LIBRARY
static inline sg_status sg_pipeline_instance_bind(sg_pipeline_instance *instance,
                                                  const sg_pipeline_bind *binds, size_t count) {
  return sg_pipeline_instance_bind_sized(instance, sizeof *instance, binds, sizeof *binds, count);
}
#else
sg_status sg_pipeline_instance_bind(sg_pipeline_instance *instance, const sg_pipeline_bind *binds,
                                    size_t count);
#endif

typedef struct sg_pipeline_batch {
  const sg_pipeline_bind *binds; /* bind_count binds, applied in order; several binds of one
                                    node are merged into one parameter update */
  size_t bind_count;
  void *user_data;           /* this batch's: given to bind and on_complete */
} sg_pipeline_batch;

/* Submits the next batch (`batch` may be NULL: no binds). Waits first, if
 * needed, until the batch's instance has room (fewer than `queue` batches in
 * flight), reporting completions on the way. Sets *index (may be NULL) to
 * the batch's index, 0, 1, 2... once the batch is accepted. SG_ERR_STOPPED
 * when the pipeline has stopped (now or before; the message names the
 * failing batch); a submit that finds the failure reports first, in order,
 * the batches that have ended (the failing one, once those before it are
 * done). Other errors (a bad bind,
 * a failing bind callback) refuse this batch only: nothing was launched and
 * its index is given to the next batch, but some of its binds may already be
 * applied to the instance it would have used. */
SG_API sg_status sg_pipeline_submit_sized(sg_pipeline *pipeline, const sg_pipeline_batch *batch,
                                          size_t batch_size, size_t bind_size, uint64_t *index);
#ifndef SG_BUILDING_LIBRARY
static inline sg_status sg_pipeline_submit(sg_pipeline *pipeline, const sg_pipeline_batch *batch,
                                           uint64_t *index) {
  return sg_pipeline_submit_sized(pipeline, batch, sizeof *batch, sizeof *batch->binds, index);
}
#else
sg_status sg_pipeline_submit(sg_pipeline *pipeline, const sg_pipeline_batch *batch,
                             uint64_t *index);
#endif
/* The same, but SG_ERR_WOULD_BLOCK instead of waiting for the instance. */
SG_API sg_status sg_pipeline_try_submit_sized(sg_pipeline *pipeline,
                                              const sg_pipeline_batch *batch, size_t batch_size,
                                              size_t bind_size, uint64_t *index);
#ifndef SG_BUILDING_LIBRARY
static inline sg_status sg_pipeline_try_submit(sg_pipeline *pipeline,
                                               const sg_pipeline_batch *batch, uint64_t *index) {
  return sg_pipeline_try_submit_sized(pipeline, batch, sizeof *batch, sizeof *batch->binds, index);
}
#else
sg_status sg_pipeline_try_submit(sg_pipeline *pipeline, const sg_pipeline_batch *batch,
                                 uint64_t *index);
#endif

/* Reports the batches that have completed, without waiting. SG_OK, or
 * SG_ERR_STOPPED once a batch has failed. */
SG_API sg_status sg_pipeline_poll(sg_pipeline *pipeline);

/* Waits until batch `index` is complete, reporting it and every batch before
 * it. Returns the batch's status: SG_OK, its error (with the message), or
 * SG_ERR_STOPPED when an earlier batch failed. A batch not yet submitted is
 * SG_ERR_INVALID_ARGUMENT. */
SG_API sg_status sg_pipeline_wait(sg_pipeline *pipeline, uint64_t index);

/* Waits for every batch submitted so far, reporting each. SG_OK, or
 * SG_ERR_STOPPED once a batch has failed. Always returns. */
SG_API sg_status sg_pipeline_drain(sg_pipeline *pipeline);

/* ---- inspection ---------------------------------------------------------- */

typedef struct sg_pipeline_stats {
  unsigned depth;
  uint64_t submitted;        /* batches accepted: the next batch's index */
  uint64_t reported;         /* batches reported, in order (complete, failed or stopped) */
  uint64_t waits;            /* submits that had to wait for their instance */
  uint64_t would_block;      /* try_submit calls answered SG_ERR_WOULD_BLOCK */
  uint64_t param_updates;    /* the instances' sg_exec_stats, summed */
  uint64_t in_place_updates;
  uint64_t rebuilds;         /* 0 unless an instance was re-planned (binds never do) */
  int stopped;               /* 1 once a batch has failed */
  uint64_t failed_batch;     /* when stopped: the first batch (in order) that failed */
  sg_status fail_status;     /* when stopped: its status */
  unsigned queue;            /* batches in flight per instance, at most (1 with `bind`) */
} sg_pipeline_stats;

SG_API sg_status sg_pipeline_get_stats_sized(const sg_pipeline *pipeline, sg_pipeline_stats *stats,
                                             size_t stats_size);
#ifndef SG_BUILDING_LIBRARY
static inline sg_status sg_pipeline_get_stats(const sg_pipeline *pipeline,
                                              sg_pipeline_stats *stats) {
  return sg_pipeline_get_stats_sized(pipeline, stats, sizeof *stats);
}
#else
sg_status sg_pipeline_get_stats(const sg_pipeline *pipeline, sg_pipeline_stats *stats);
#endif

/* Writes the launches every instance keeps (options.exec.trace set) as one
 * Chrome trace JSON timeline: one process per instance, each launch
 * labelled with its batch ("batch 7"), so that batch i's compute and batch
 * i+1's upload are seen side by side; staging copy threads in a process of
 * their own. Waits for the batches in flight first, without reporting them.
 * SG_ERR_INVALID_ARGUMENT when the pipeline was created without tracing. */
SG_API sg_status sg_pipeline_write_trace(sg_pipeline *pipeline, const char *path);

/* The same launches as an SVG timeline (see sg_exec_write_trace_svg), one
 * section per instance: each batch's launch bar and runs share an outline
 * colour, so batches are told apart, and the copy-direction lanes gather
 * the copies of every instance, showing one batch's upload beside another's
 * compute. Same conditions and errors as sg_pipeline_write_trace. */
SG_API sg_status sg_pipeline_write_trace_svg(sg_pipeline *pipeline, const char *path);

/* A copy of instance `index` (its executable and data). */
SG_API sg_status sg_pipeline_get_instance_sized(const sg_pipeline *pipeline, unsigned index,
                                                sg_pipeline_instance *instance,
                                                size_t instance_size);
#ifndef SG_BUILDING_LIBRARY
static inline sg_status sg_pipeline_get_instance(const sg_pipeline *pipeline, unsigned index,
                                                 sg_pipeline_instance *instance) {
  return sg_pipeline_get_instance_sized(pipeline, index, instance, sizeof *instance);
}
#else
sg_status sg_pipeline_get_instance(const sg_pipeline *pipeline, unsigned index,
                                   sg_pipeline_instance *instance);
#endif

#ifdef __cplusplus
}
#endif
#endif
