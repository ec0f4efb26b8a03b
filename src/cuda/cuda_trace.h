/* Internal: timing the CUDA backend's launches for traces (exec/trace.h).
 *
 * Each launch in flight records CUDA events into a set of its own: one
 * event at the launch's start and one before and after every node. Sets
 * form a ring, so launches can be queued ahead; a set is read back
 * (cudaEventElapsedTime against its start event) when it is about to be
 * reused, which waits for the launch that used it, or when the executable
 * is waited for. Streams mode records the set's events on the streams as it
 * enqueues; graph mode instantiates a traced graph with event-record nodes
 * (graph_explicit.c, graph_capture.c) and points them at the launch's set
 * before each cudaGraphLaunch.
 *
 * Graph mode times nodes with stamps instead where it can (trace_stamp.c):
 * the traced graph has a stamp kernel node at its start and one after every
 * node, each writing the GPU's global timer into the launch's row of a ring
 * in mapped pinned memory; nodes' starts and ends follow from the stamps
 * by exec/trace_stamps.h's rule (a start is the latest end of what the node
 * waited for, an end its stamp or, if later, its start). The kernel picks
 * the row from a launch counter in device memory, so a launch re-points
 * nothing; a set then holds only its `start` event, recorded after the
 * graph launch, which says when the row may be read. Where the stamp
 * kernel cannot be loaded, graph mode keeps the event-record nodes.
 *
 * To place GPU times on the host's clock, an anchor event is recorded on
 * streams[0] and synchronised with while the executable is idle; a launch's
 * start is its distance to the anchor. With stamps, the anchor is a stamp
 * written by a kernel launched on the idle stream and synchronised with. */
#ifndef SG_CUDA_CUDA_TRACE_H
#define SG_CUDA_CUDA_TRACE_H

#include <cuda_runtime_api.h>
#include <stdint.h>

#include "exec/trace.h"

/* Launches that may be in flight before a launch waits for the oldest one's
 * times (at most SG__TRACE_MAX_AHEAD). */
#define SG__CUDA_TRACE_RING 8u

typedef struct sg__cuda_trace_set {
  cudaEvent_t start;           /* the launch's zero */
  cudaEvent_t *before;         /* node -> recorded when the node may start */
  cudaEvent_t *after;          /* node -> recorded when it has finished */
  uint64_t launch;             /* the launch recorded into it and not yet read; 0: none */
  uint64_t seq;                /* stamps: the traced graph launch it was (0 the first) */
} sg__cuda_trace_set;

struct sg__schedule;

typedef struct sg__cuda_tracer {
  sg__trace *trace;            /* where launches' times go */
  uint32_t node_count;
  sg__cuda_trace_set sets[SG__CUDA_TRACE_RING];
  unsigned made;               /* sets whose events exist (made in order, on first use) */
  cudaEvent_t anchor;
  uint64_t anchor_ns;          /* the anchor's time on the host clock */
  uint64_t anchor_after;       /* the last launch enqueued before the anchor */
  uint64_t last;               /* the latest launch given a set */
  uint64_t given;              /* sets given to launches (a launch's set: given % ring) */
  uint64_t *scratch;           /* 2 * node_count times */
  /* Stamps (graph mode where the stamp kernel loads); all 0 otherwise. */
  int stamps;
  int capture;                 /* the graph was captured: stream order binds starts too */
  const void *stamp_kernel;
  uint32_t stride;             /* a row: the launch's first stamp, one per node, its number */
  uint64_t *ring;              /* SG__CUDA_TRACE_RING rows, then the anchor's stamp (mapped) */
  uint64_t *ring_dev;          /* the same, as the device addresses it */
  uint64_t *counter;           /* device memory: traced graph launches begun */
  uint64_t seq;                /* traced graph launches enqueued */
  uint64_t anchor_stamp;       /* the anchor's global timer */
  const struct sg__schedule *const *schedule; /* the executable's, for the graph's edges */
} sg__cuda_tracer;

/* The stamp kernel's parameters and the array pointing at them. */
typedef struct sg__cuda_stamp_args {
  uint64_t *ring;
  uint64_t *counter;
  uint32_t slot, stride, mask, advance;
  void *args[6];
} sg__cuda_stamp_args;

/* The stamp kernel (loaded once per process), or NULL with *why saying why
 * it cannot be loaded (graph mode then times with events). */
const void *sg__cuda_stamp_kernel(const char **why);
/* A stamp kernel node writing slot `slot` of the launch's row (advance 1:
 * the launch's first stamp). `a` must outlive the call given `p`. */
void sg__cuda_stamp_params(const sg__cuda_tracer *t, uint32_t slot, int advance,
                           sg__cuda_stamp_args *a, struct cudaKernelNodeParams *p);

/* Makes the tracer with its first set and an anchor recorded on `stream`
 * (nothing of the executable in flight). The device is current. On failure
 * frees what it made; the message names `fn`. */
sg_status sg__cuda_tracer_make(sg__cuda_tracer *t, sg__trace *trace, uint32_t node_count,
                               cudaStream_t stream, const char *fn);
/* The same for graph mode: with stamps where the stamp kernel loads (and
 * SG_TRACE_GRAPH_EVENTS is not set to 1), with events otherwise. `schedule`
 * points at the executable's schedule (its edges give nodes' starts);
 * `capture`: the graph is built by capture. */
sg_status sg__cuda_tracer_make_graph(sg__cuda_tracer *t, sg__trace *trace,
                                     const struct sg__schedule *const *schedule, int capture,
                                     cudaStream_t stream, const char *fn);
/* Nothing may be in flight. Accepts a tracer that was never made (zeroed). */
void sg__cuda_tracer_free(sg__cuda_tracer *t);

/* The set launch `launch` (a traced one) records into: the next set of the
 * ring, made on first use; the launch that used it before is read back
 * first (waiting for it). The device is current. The message (on the launch path) goes to
 * `msg`. */
sg_status sg__cuda_tracer_set(sg__cuda_tracer *t, uint64_t launch, sg__cuda_trace_set **set,
                              const char *fn, char *msg, size_t cap);
/* The set's launch was enqueued completely: read it back later. */
static inline void sg__cuda_tracer_recorded(sg__cuda_trace_set *set, uint64_t launch) {
  set->launch = launch;
}
/* Reads back every launch recorded and not yet read, oldest first (their
 * work is done: the executable is idle), then renews the anchor on `stream`
 * if it is old. A launch whose events cannot be read (it failed) is
 * dropped. */
void sg__cuda_tracer_collect(sg__cuda_tracer *t, cudaStream_t stream);
/* Forgets the launches not yet read (after a failure: their events may
 * never complete). */
void sg__cuda_tracer_forget(sg__cuda_tracer *t);

/* The event a traced graph's node `k` records: 0 the launch's start, then
 * for node v, 1 + 2v before it and 2 + 2v after it. */
static inline cudaEvent_t sg__cuda_trace_event(const sg__cuda_trace_set *set, uint32_t k) {
  if (k == 0) return set->start;
  k -= 1;
  return k % 2 ? set->after[k / 2] : set->before[k / 2];
}

#endif
