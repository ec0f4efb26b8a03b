/* Internal: the copy threads of a pool. A job is one chunk's host-side copy
 * (pageable <-> pinned), split into parts that the threads take in turn.
 *
 * The deadlock argument of the whole staging engine rests on two rules kept
 * here: a part never waits for anything (it is a memcpy), and a waiter only
 * waits for a job that is already queued, helping with that job's unclaimed
 * parts while it waits. So every wait ends, whatever thread waits (a CUDA
 * host callback included) and however many threads are running (even none). */
#ifndef SG_STAGING_WORKERS_H
#define SG_STAGING_WORKERS_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "streamgraph/status.h"

/* Where the parts of copies are reported, for traces: `add` after each part
 * copied, with its bytes and absolute times, and whether a copy thread (1)
 * or a waiter helping (0) copied it. Handed down by whoever makes the
 * staged copies (a backend passes its trace's sink, exec/trace.h); `add`
 * NULL: nowhere. Called without any staging lock held. */
typedef struct sg__copy_spans {
  void (*add)(void *ctx, int drain, uint32_t node, uint32_t chunk, uint64_t bytes,
              uint64_t start_ns, uint64_t end_ns, int copy_thread);
  void *ctx;
} sg__copy_spans;

typedef struct sg__copy_job {
  char *dst;
  const char *src;
  size_t bytes;
  size_t part_bytes;          /* every part but the last */
  unsigned parts;
  unsigned claimed;           /* parts taken so far (guarded by the workers' lock) */
  unsigned finished;          /* parts copied */
  int queued;                 /* 1 while some part is unclaimed */
  int busy;                   /* 1 from submission until every part is copied */
  int nontemporal;            /* set before submitting: non-temporal stores for this job by
                                 default (sg__stage_nontemporal_default) */
  uint32_t *signal;           /* memop protocol: raised to signal_value once every part is
                                 copied and visible (stage_flags.h), or NULL */
  /* Set before submitting, for traces and NVTX ranges: where the parts'
   * spans go, and what the job copies. */
  sg__copy_spans spans;
  uint32_t node;              /* the copy node's index */
  uint32_t chunk;             /* the chunk of the copy */
  int drain;                  /* 0: a fill (pageable -> pinned); 1: a drain (pinned -> pageable) */
  const char *label;          /* the node as NVTX ranges name it ("'up' (#2)"), or NULL */
  uint32_t signal_value;
  struct sg__copy_job *next;  /* queue link */
} sg__copy_job;

typedef struct sg__workers {
  pthread_mutex_t lock;
  pthread_cond_t work;        /* a job was queued, or stop */
  pthread_cond_t done;        /* some job finished */
  sg__copy_job *head, *tail;
  pthread_t *threads;
  unsigned count, capacity;
  int stopping;
  int streaming;              /* large parts with non-temporal stores: 1 always, 0 never,
                                 -1 as each job says */
} sg__workers;

/* Initialises with no thread (SG_ERR_SYSTEM when a mutex or condition
 * cannot be made, message prefixed by `where`). Where the CPU has
 * non-temporal stores, each job says whether it uses them
 * (sg__stage_nontemporal_default), unless the environment variable
 * SG_STAGING_NONTEMPORAL is "0" (never) or another value (always): a tuning
 * and diagnosis knob, read when the pool is made. */
sg_status sg__workers_init(sg__workers *w, unsigned capacity, const char *where);
/* Starts threads until `count` run (at most the capacity). */
sg_status sg__workers_ensure(sg__workers *w, unsigned count, const char *where);
/* Stops and joins the threads; no job may be queued or running. */
void sg__workers_destroy(sg__workers *w);
unsigned sg__workers_count(sg__workers *w);

/* Splits [src, src + bytes) -> dst into at most `parts` parts (no part
 * smaller than 64 KiB) and queues them. `job` must not be busy. Safe in a
 * CUDA host callback: it only takes a lock nobody holds for long. */
void sg__copy_submit(sg__workers *w, sg__copy_job *job, void *dst, const void *src, size_t bytes,
                     unsigned parts);
/* Returns once `job` is not busy, copying its unclaimed parts itself. */
void sg__copy_wait(sg__workers *w, sg__copy_job *job);
/* As sg__copy_submit; once the last part is copied, the thread that copied
 * it raises *signal to `value` (sg__flag_raise), after every part's stores
 * are visible to the device. Nobody waits for such a job: the device, or
 * the host backend's emulated stream, waits for the flag. */
void sg__copy_submit_signal(sg__workers *w, sg__copy_job *job, void *dst, const void *src,
                            size_t bytes, unsigned parts, uint32_t *signal, uint32_t value);
/* 1 if `job` is not busy (never blocks). */
int sg__copy_idle(sg__workers *w, sg__copy_job *job);

#endif
