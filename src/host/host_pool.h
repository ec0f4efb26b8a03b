/* Internal: the host backend's worker threads, one pool for the process.
 *
 * Every host-backend executable runs on these threads. A task is one
 * planned stream of one launch: it runs the stream's nodes in order and may
 * block while a node waits for another stream's event (that is how the
 * host backend emulates cross-stream waits faithfully). So a blocked task
 * holds its thread, and the pool must never let every thread block on
 * tasks still queued. Two rules make that impossible:
 *
 *  1. The pool has at least as many threads as the widest plan of any
 *     executable made so far (sg__host_pool_reserve at creation); it starts
 *     with one per CPU and grows only past that width.
 *  2. All the stream tasks of a launch are queued together, in one critical
 *     section, and threads take tasks first in, first out.
 *
 * Proof that every launch finishes: take the unfinished launch L queued
 * earliest. Every task queued before L's belongs to a finished launch, so
 * the threads that ran them are free again. Threads take tasks in queue
 * order, so while a task of L is still queued, the busy threads run only
 * tasks of L: fewer than L's width, which is at most the pool's size. So a
 * thread is free and takes L's next task; soon all of L's streams run at
 * once. Within one launch every wait is for an event recorded earlier in
 * the plan's topological order, so with all its streams running L finishes
 * (host nodes must return, as the header asks). Then the next-earliest
 * launch is in the same position. A launch of an executable is queued only
 * when the one before it has finished (launches of one executable run in
 * order), so no task waits for a later launch of its own executable.
 *
 * Tasks queued after L may run beside it when threads are free, which only
 * helps. Waiting for pinned staging memory cannot break the argument on this
 * backend: a ring is held only while one node copies, by a thread that
 * runs. */
#ifndef SG_HOST_HOST_POOL_H
#define SG_HOST_HOST_POOL_H

#include "streamgraph/status.h"

typedef struct sg__host_task sg__host_task;
struct sg__host_task {
  void (*run)(sg__host_task *task);  /* runs on a pool thread */
  sg__host_task *next;               /* the queue's link (the pool's) */
};

/* Makes sure the pool has a thread per CPU and at least `width` threads.
 * SG_ERR_SYSTEM (message prefixed by `fn`) if a thread could not be
 * started; threads started stay for later executables. */
sg_status sg__host_pool_reserve(unsigned width, const char *fn);

/* Queues `count` tasks together (rule 2 above); threads pick them up. */
void sg__host_pool_submit(sg__host_task *const *tasks, unsigned count);

/* Threads the pool runs now (for tests and statistics). */
unsigned sg__host_pool_threads(void);

#endif
