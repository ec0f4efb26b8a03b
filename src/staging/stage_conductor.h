/* Internal: the conductor - one thread per pool that drives the host side
 * of every memop-protocol staged copy of the pool (docs/staging.md, "The
 * memop protocol" and "When something fails").
 *
 * A launch arms a run (once per launch that enqueues its program). For an
 * armed run the conductor waits for the device's `go`, sets it back to 0,
 * queues the chunks' host copies on the pool's copy threads as the
 * device's `done` frees their slots (each copy's last part writes the
 * slot's `ready`), and disarms the run once the device has written its
 * last flag; a transient (streams-mode) run is then freed, which gives its
 * ring back to the pool.
 *
 * The conductor never blocks except on its own lock (and on its condition
 * variable with nothing armed): it polls flags, queues copies, and may
 * query whether the device is broken. Lock order: the conductor's lock,
 * then the copy threads' and the pool's; nothing takes the conductor's
 * lock while holding either, and no CUDA callback takes it. Runs are freed
 * with the lock released. */
#ifndef SG_STAGING_STAGE_CONDUCTOR_H
#define SG_STAGING_STAGE_CONDUCTOR_H

#include <pthread.h>

#include "staging/stage_run.h"

/* Whether a quiet run's device is broken is asked of the backend (a CUDA
 * call), which may wait for the driver: another thread can hold it inside a
 * launch call that waits for the device, which waits for this conductor. So
 * the conductor never asks itself: its prober thread does, one question at
 * a time, and the conductor reads the answer on a later round. */
typedef enum sg__probe_state {
  SG__PROBE_IDLE = 0,
  SG__PROBE_ASKED,    /* a question waits for the prober */
  SG__PROBE_RUNNING,  /* the prober is in the backend's call (lock released) */
  SG__PROBE_ANSWERED
} sg__probe_state;

typedef struct sg__conductor {
  pthread_mutex_t lock;
  pthread_cond_t wake;     /* a run was armed, a probe answered, or stop */
  pthread_cond_t settled;  /* runs being freed outside the lock are freed */
  pthread_t thread;
  int running, stopping, kicked;
  unsigned freeing;        /* runs taken off to be freed, lock released */
  sg__stage_run *head, *tail; /* armed runs */
  /* The prober (above). probe_run is compared, never followed: a run taken
   * off the list clears it, and an answer for no run is dropped. */
  pthread_t prober;
  int prober_running;
  pthread_cond_t probe_wake;  /* a question was asked, or stop */
  pthread_cond_t probe_done;  /* the prober left the backend's call */
  sg__probe_state probe;
  const sg__stage_run *probe_run;
  sg__pool_broken_fn probe_fn;
  void *probe_ctx, *probe_owner; /* the backend's context; the report context it belongs to */
  int probe_broken;
  uint64_t spin_ns;           /* how long the thread spins without progress before it sleeps */
} sg__conductor;

/* Initialises with no thread (SG_ERR_SYSTEM when a mutex or condition
 * cannot be made, message prefixed `where`). Without progress on any armed
 * run the thread spins (250 us with 8 CPUs or more, else SG__FLAG_SPIN_NS),
 * then sleeps in growing steps; the environment variable
 * SG_STAGING_CONDUCTOR_SPIN_US (microseconds, read here) sets the spin
 * instead: a knob for measuring how late the conductor notices a flag the
 * device wrote. */
sg_status sg__conductor_init(sg__conductor *c, const char *where);
/* Starts the thread and its prober unless they run (SG_ERR_SYSTEM, with a
 * message, when one cannot be started). */
sg_status sg__conductor_start(sg__conductor *c, const char *where);
/* Stops and joins the threads; armed runs are dropped (not freed). */
void sg__conductor_destroy(sg__conductor *c);

/* Arms `run` (memop protocol) for one more launch, whose program is
 * enqueued after this (or is being). `watch` says how to report a failure
 * and how to tell a broken device; `where` starts the messages. */
void sg__stage_arm(sg__stage_run *run, const sg__stage_watch *watch, const char *where);

/* Takes back the arm made last for `run`, for a launch that was then not
 * enqueued at all (the device never reaches its program, so never writes
 * its `go`). Earlier launches still armed are served as before. */
void sg__stage_unarm(sg__stage_run *run);

/* The launch that armed `run` enqueued only part of its program: releases
 * the run (its waits pass; no report, the launch fails by itself) and
 * stops queueing its host copies. The backend then says, with
 * sg__stage_end_at, how the device's part ends; until then the run stays
 * armed. */
void sg__stage_abandon(sg__stage_run *run);
/* SG__END_ABANDONED (done == SG__FLAG_ABANDONED was enqueued), SG__END_NOW
 * (the stream was synchronised) or SG__END_LEAK (the device is broken: the
 * ring is never given back). */
void sg__stage_end_at(sg__stage_run *run, sg__stage_end end);

/* Disarms every run of `pool` whose device side has ended, on the calling
 * thread (a transient one is freed), after letting retirements in progress
 * finish: its ring is back in the pool when this returns. */
void sg__stage_settle(sg_pinned_pool *pool);
/* Takes every armed run whose watch reports to `report_ctx` off the
 * conductor (an executable being destroyed, after waiting for its launches):
 * a run not ended is released first and, transient, left allocated. */
void sg__stage_disown(sg_pinned_pool *pool, void *report_ctx);
/* Takes `run` off the conductor before it is freed (released first if the
 * device may still wait on it). */
void sg__stage_forget(sg__stage_run *run);

#endif
