/* Internal: the host backend's worker threads, one pool for the process.
 *
 * Every host-backend executable runs on these threads. A task is one
 * planned stream of one launch, from where it last stopped: it runs the
 * stream's nodes in order until it reaches a wait for an event not yet
 * recorded, and then gives its thread back (host_exec.c parks it on the
 * event and queues it again when the event is recorded). So a thread is
 * never held by a cross-stream wait; it is held only while a node runs.
 *
 * Most nodes are short (a memcpy, a host twin), but a host node may wait
 * for something the caller provides later (exec.h allows that), and a
 * thread running it is held until it returns. No executable's progress may
 * depend on another executable's host nodes returning, so the pool grows
 * when its threads are all held while work waits:
 *
 *  1. A base of one thread per CPU starts with the first executable
 *     (sg__host_pool_reserve) and lives as long as the process.
 *  2. A watcher thread looks at the queue while work waits and no thread is
 *     idle: when no task has been taken for SG__HOST_POOL_STALL_MS, it
 *     starts one more thread, up to sg__host_pool_cap() threads in all.
 *  3. A thread beyond the base that has been idle for
 *     SG__HOST_POOL_IDLE_MS ends; so does any idle one beyond the base when
 *     sg__host_pool_trim is called.
 *
 * Why every queued task runs (below the cap): a thread is either idle,
 * running a node, or ending. Nodes other than the caller's own code finish
 * by themselves (copies, fills, the library's staging, which waits only
 * for a ring a running node holds). While a task is queued and no thread is
 * idle, either some thread takes a task within the stall time, or the
 * watcher adds a thread that takes one. A launch's streams thus all start,
 * and a launch finishes once its own host nodes return: an executable
 * waits only for its own host work. Beyond the cap (hundreds of host nodes
 * blocked at once across the process) queued work waits for one of them to
 * return. */
#ifndef SG_HOST_HOST_POOL_H
#define SG_HOST_HOST_POOL_H

#include "streamgraph/status.h"

/* A watcher tick: how long a queue may wait with every thread held before
 * the pool grows by one. */
#define SG__HOST_POOL_STALL_MS 5u
/* How long a thread beyond the base stays idle before it ends. */
#define SG__HOST_POOL_IDLE_MS 1000u

typedef struct sg__host_task sg__host_task;
struct sg__host_task {
  void (*run)(sg__host_task *task);  /* runs on a pool thread */
  sg__host_task *next;               /* the queue's link (the pool's) */
};

/* Makes sure the pool's base threads and its watcher run. SG_ERR_SYSTEM
 * (message prefixed by `fn`) if a thread could not be started; threads
 * started stay. */
sg_status sg__host_pool_reserve(const char *fn);

/* Queues `count` tasks together; threads pick them up first in, first out. */
void sg__host_pool_submit(sg__host_task *const *tasks, unsigned count);

/* Worker threads the pool runs now (for tests and statistics). */
unsigned sg__host_pool_threads(void);

/* The base: threads kept when idle (one per CPU). */
unsigned sg__host_pool_base(void);

/* The most worker threads the pool runs: max(256, 4 per CPU). */
unsigned sg__host_pool_cap(void);

/* Ends the idle threads beyond the base now (threads busy end when they
 * have been idle for SG__HOST_POOL_IDLE_MS). */
void sg__host_pool_trim(void);

/* For tests: the base as if the machine had `cpus` CPUs (0: the real
 * count). Threads beyond a lowered base end as idle ones do. */
void sg__host_pool_set_base(unsigned cpus);

#endif
