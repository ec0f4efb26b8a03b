/* Internal: the trace of an executable - the per-node times of its recent
 * launches and the host-side staging work around them.
 *
 * An executable created with options.trace owns one. Backends commit each
 * launch's times once they know them (the host backend when the launch
 * ends; the CUDA backend when it reads the launch's events back, in launch
 * order, at the latest when those events are about to be reused); staging
 * copy threads add spans as they copy. Readers (sg_exec_get_trace, the
 * JSON writers) take what has been committed. Everything is guarded by one
 * mutex: commits are one per launch, spans one per chunk part (at least
 * tens of microseconds of copying each), so the lock is never hot.
 *
 * Times are nanoseconds on the host's steady clock (sg__now_ns), launch
 * starts absolute and node times relative to their launch's start, so
 * launches of several executables share one timeline. */
#ifndef SG_EXEC_TRACE_H
#define SG_EXEC_TRACE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "staging/workers.h"
#include "streamgraph/status.h"

/* A launch without a label (a pipeline labels each launch with its batch). */
#define SG__TRACE_NO_LABEL UINT64_MAX
/* Launches a backend may run ahead of its commits (a label set at launch
 * time must survive until its launch is committed). */
#define SG__TRACE_MAX_AHEAD 64u
/* Launches kept when options.trace_launches is 0. */
#define SG__TRACE_DEFAULT_LAUNCHES 64u
/* Host spans kept per launch kept. */
#define SG__TRACE_SPANS_PER_LAUNCH 1024u

typedef enum sg__span_kind {
  SG__SPAN_FILL = 0,   /* pageable -> pinned (the host side of a host->device copy) */
  SG__SPAN_DRAIN       /* pinned -> pageable (the host side of a device->host copy) */
} sg__span_kind;

/* One piece of host work: a copy thread (or a waiting thread helping it)
 * copying part of one chunk of a staged copy. */
typedef struct sg__trace_span {
  uint64_t start_ns, end_ns;   /* absolute */
  uint64_t bytes;
  uint32_t node;
  uint32_t chunk;
  uint32_t lane;               /* the thread (sg__trace_lane) */
  uint8_t kind;                /* sg__span_kind */
  uint8_t copy_thread;         /* 1: a pool copy thread; 0: a thread that waited and helped */
} sg__trace_span;

typedef struct sg__trace {
  uint32_t node_count;
  unsigned keep;               /* traced launches kept */
  unsigned every;              /* launches 1, 1 + every, 1 + 2 * every... are traced (>= 1) */
  pthread_mutex_t lock;        /* guards what follows */
  uint64_t last;               /* the latest launch committed (0: none) */
  uint64_t *launch;            /* per slot (sample % keep): the launch held, 0 when none */
  uint64_t *label;             /* per slot: its label */
  uint64_t *start;             /* per slot: its start, absolute */
  uint64_t *times;             /* per slot: node_count starts, then node_count ends, relative */
  uint64_t *pending_launch;    /* per sample % (keep + SG__TRACE_MAX_AHEAD): labels given */
  uint64_t *pending_label;     /*   before their launch was committed */
  sg__trace_span *spans;       /* a ring of span_cap */
  size_t span_cap;
  uint64_t span_total;         /* spans ever added (the ring holds the last span_cap) */
} sg__trace;

/* A trace keeping `keep` traced launches (0: SG__TRACE_DEFAULT_LAUNCHES)
 * of `node_count` nodes, tracing every `every`-th launch (0 or 1: each).
 * SG_ERR_OUT_OF_MEMORY or SG_ERR_SYSTEM, with a message prefixed by `fn`. */
sg_status sg__trace_new(uint32_t node_count, unsigned keep, unsigned every, const char *fn,
                        sg__trace **out);
void sg__trace_free(sg__trace *t);

/* 1 when launch `launch` (1-based, the executable's number) is traced:
 * launches 1, 1 + every, 1 + 2 * every... (options.trace_every). Backends
 * time only those, and commit only those. */
static inline int sg__trace_sampled(const sg__trace *t, uint64_t launch) {
  return launch != 0 && (launch - 1) % t->every == 0;
}

/* The ring's slot of traced launch `launch`: slots go to traced launches
 * only, so the ring keeps the last `keep` of them however far apart
 * sampling puts them. */
static inline size_t sg__trace_slot(const sg__trace *t, uint64_t launch) {
  return (size_t)(((launch - 1) / t->every) % t->keep);
}

/* The oldest traced launch the ring may still hold (lock held): readers
 * walk from it to t->last in steps of t->every. */
static inline uint64_t sg__trace_oldest(const sg__trace *t) {
  if (t->last == 0) return 1;
  const uint64_t latest = (t->last - 1) / t->every; /* traced launches before the latest */
  return (latest >= t->keep ? latest - t->keep + 1 : 0) * t->every + 1;
}

/* Labels launch `launch` (1-based), before it is enqueued (a launch not
 * sampled is not kept, nor is its label). */
void sg__trace_label(sg__trace *t, uint64_t launch, uint64_t label);
/* The times of launch `launch`: its absolute start, and per node (indexed
 * like the schedule) start and end relative to it. Backends commit in
 * launch order; a launch may be skipped (one that failed). A launch not
 * sampled is ignored. */
void sg__trace_commit(sg__trace *t, uint64_t launch, uint64_t start_ns, const uint64_t *start_rel,
                      const uint64_t *end_rel);
/* Adds one span (its lane is the calling thread's; `copy_thread`: a staging
 * copy thread copied it, not a thread waiting for the copy). Callback-safe:
 * a lock and a copy. */
void sg__trace_span_add(sg__trace *t, sg__span_kind kind, uint32_t node, uint32_t chunk,
                        uint64_t bytes, uint64_t start_ns, uint64_t end_ns, int copy_thread);
/* The sink through which staging's copy threads add their spans to `t`
 * (NULL: a sink that adds nothing). */
sg__copy_spans sg__trace_copy_spans(sg__trace *t);

/* A small number naming the calling thread in traces (its "lane"),
 * assigned on first use. */
uint32_t sg__trace_lane(void);

/* Reads launch `launch` (0: the latest committed): its label, absolute
 * start, and per-node relative times into start_rel/end_rel (node_count
 * each). 0 on success, -1 when that launch is not (or no longer) kept. */
int sg__trace_read(sg__trace *t, uint64_t launch, uint64_t *launch_out, uint64_t *label,
                   uint64_t *start_ns, uint64_t *start_rel, uint64_t *end_rel);

#endif
