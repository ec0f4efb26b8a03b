/* The conductor (stage_conductor.h). */
#define _GNU_SOURCE
#include "staging/stage_conductor.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/prctl.h>
#endif

#include "core/error.h"
#include "core/sys.h"
#include "staging/stage_program.h"

/* A chunk this small is copied by the conductor itself: waking a copy
 * thread would cost more than the copy (one part anyway, workers.c). */
#define INLINE_BYTES ((size_t)64 * 1024)

/* Where the machine has this many CPUs, the conductor spins CONDUCTOR_SPIN_NS
 * before it sleeps, about one chunk's DMA: a sleep step would make it
 * notice a chunk's end (and start its drain, or refill its slot) up to
 * 100 us late, for each chunk. With fewer CPUs it would take one from the
 * copy threads, and spins SG__FLAG_SPIN_NS. */
#define CONDUCTOR_SPIN_MIN_CPUS 8u
#define CONDUCTOR_SPIN_NS ((uint64_t)250 * 1000)

/* A run that made no progress for this long is checked for a broken
 * device (as the pool checks a waiting acquisition). */
#define QUIET_NS ((uint64_t)50 * 1000 * 1000)

static sg__conductor *conductor_of(const sg__stage_run *run) {
  return sg__pool_conductor(run->pool);
}

/* ---- one run ------------------------------------------------------------ */

/* Releases every wait of the run's program (lock held): its `ready` flags
 * get a value every wait accepts, and no further host copy is queued. The
 * host copies already queued finish first (they never wait, and this one
 * helps): the device, let through, then never moves a slot that a copy
 * thread is still writing or reading. */
static void release(sg__stage_run *run) {
  if (run->act.released) return;
  for (unsigned s = 0; s < run->g.ring; s++) sg__copy_wait(run->workers, &run->jobs[s]);
  for (unsigned s = 0; s < run->g.ring; s++) sg__flag_raise(&run->flags->ready[s], SG__FLAG_RELEASE);
  run->act.released = 1;
}

/* Fails the run's launch and releases it (lock held). The report comes
 * first, so that the launch is failed before the device - and so
 * sg_exec_wait - can get past the copy. */
static void fail(sg__stage_run *run, sg_status status, const char *what) {
  sg__stage_activation *a = &run->act;
  if (a->released) return;
  if (a->watch.report) {
    char msg[SG__STAGE_WHERE_BYTES + SG_ERROR_MESSAGE_BYTES]; /* the report keeps what fits */
    snprintf(msg, sizeof msg, "%s: staged copy failed: %s; the %s is not valid", a->where, what,
             run->dir == SG__STAGE_H2D ? "device-side destination" : "destination");
    a->watch.report(a->watch.report_ctx, status, msg);
  }
  release(run);
}

/* Queues the host copy of chunk k (lock held); 0 if it could not be. */
static int submit(sg__stage_run *run, uint32_t k) {
  if (sg__fault_hit(SG_FAULT_SYSTEM)) {
    char what[96];
    snprintf(what, sizeof what, "the host copy of chunk %u of %u could not be queued", k,
             run->g.chunks);
    fail(run, SG_ERR_SYSTEM, what);
    return 0;
  }
  const uint32_t s = k % run->g.ring;
  char *slot = sg__stage_slot(run, k), *host = run->host + sg__stage_offset(run, k);
  const int h2d = run->dir == SG__STAGE_H2D;
  const size_t len = sg__stage_len(run, k);
  if (len <= INLINE_BYTES) {
    memcpy(h2d ? slot : host, h2d ? host : slot, len);
    sg__flag_raise(&run->flags->ready[s], k + 1);
    return 1;
  }
  sg__copy_submit_signal(run->workers, sg__stage_job(run, k, !h2d), h2d ? slot : host,
                         h2d ? host : slot, len,
                         run->g.parts, &run->flags->ready[s], k + 1);
  return 1;
}

/* Queues every host copy whose slot is free (lock held); 1 if any. */
static int issue(sg__stage_run *run) {
  sg__stage_activation *a = &run->act;
  const uint32_t n = run->g.chunks, ring = run->g.ring;
  const uint32_t done = sg__flag_load(&run->flags->done);
  const uint32_t before = a->issued;
  if (run->dir == SG__STAGE_H2D) {
    /* The fill of chunk j goes into the slot the DMA of chunk j-R used. */
    while (a->issued < n && (a->issued < ring || sg__flag_geq(done, a->issued - ring + 1)))
      if (submit(run, a->issued)) a->issued++; else break;
  } else {
    while (a->issued < n && sg__flag_geq(done, a->issued + 1))
      if (submit(run, a->issued)) a->issued++; else break;
  }
  return a->issued != before;
}

/* 1 once the device wrote the run's last flag for this launch (lock held). */
static int ended(const sg__stage_run *run) {
  const sg__stage_activation *a = &run->act;
  switch (a->end) {
    case SG__END_PROGRAM:
      if (!a->started) return 0;
      /* A graph's next launch has started: this one is over. */
      if (run->persistent && sg__flag_load(&run->flags->go) == 1) return 1;
      return sg__flag_geq(sg__flag_load(&run->flags->done), sg__stage_program_last(run));
    case SG__END_ABANDONED:
      return sg__flag_geq(sg__flag_load(&run->flags->done), SG__FLAG_ABANDONED);
    case SG__END_NOW:
    case SG__END_LEAK: return 1;
    case SG__END_UNKNOWN: return 0;
  }
  return 0;
}

static int jobs_idle(sg__stage_run *run) {
  for (unsigned s = 0; s < run->g.ring; s++)
    if (!sg__copy_idle(run->workers, &run->jobs[s])) return 0;
  return 1;
}

static void unlink_run(sg__conductor *c, sg__stage_run *run) {
  if (c->probe_run == run) { /* a question about it is dropped, or its answer */
    c->probe_run = NULL;
    if (c->probe != SG__PROBE_RUNNING) c->probe = SG__PROBE_IDLE;
  }
  sg__stage_run **link = &c->head, *prev = NULL;
  while (*link && *link != run) {
    prev = *link;
    link = &(*link)->act.next;
  }
  if (!*link) return;
  *link = run->act.next;
  if (c->tail == run) c->tail = prev;
  run->act.next = NULL;
  run->act.listed = 0;
}

static void activation_reset(sg__stage_activation *a) {
  a->started = 0;
  a->issued = 0;
  a->released = 0;
  a->end = SG__END_PROGRAM;
  a->quiet_since_ns = sg__now_ns();
}

/* The launch being served is over (lock held): on to the next armed
 * launch, or off the list; a transient run goes onto `doomed` to be freed
 * with the lock released (a leaked one is just dropped). */
static void retire(sg__conductor *c, sg__stage_run *run, sg__stage_run **doomed) {
  sg__stage_activation *a = &run->act;
  const int leak = a->end == SG__END_LEAK;
  sg__stage_launch_end(run); /* a persistent run's next launch is the oldest */
  if (--a->armed > 0 && !leak) {
    activation_reset(a);
    return;
  }
  a->armed = 0;
  unlink_run(c, run);
  if (!run->persistent && !leak) {
    run->act.next = *doomed;
    *doomed = run;
  }
}

/* Moves `run` on as far as it can go now (lock held); 1 on progress. */
static int step(sg__conductor *c, sg__stage_run *run, uint64_t now, sg__stage_run **doomed) {
  sg__stage_activation *a = &run->act;
  int progress = 0;
  if (!a->started && a->end == SG__END_PROGRAM && sg__flag_load(&run->flags->go) == 1) {
    sg__flag_store(&run->flags->go, 0);
    sg__stage_launch_begin(run); /* the pageable side this launch was made with */
    a->started = 1;
    progress = 1;
  }
  if (a->started && !a->released) progress |= issue(run);
  if (ended(run) && jobs_idle(run)) {
    retire(c, run, doomed);
    return 1;
  }
  if (c->probe == SG__PROBE_ANSWERED && c->probe_run == run) {
    c->probe = SG__PROBE_IDLE;
    c->probe_run = NULL;
    if (c->probe_broken && !progress) {
      fail(run, SG_ERR_CUDA, "the device reported an error (its context is broken)");
      a->end = SG__END_LEAK; /* the device may never finish reading the ring */
      return 1;
    }
  }
  if (progress) {
    a->quiet_since_ns = now;
  } else if (now - a->quiet_since_ns > QUIET_NS) {
    a->quiet_since_ns = now;
    if (a->watch.broken && c->probe == SG__PROBE_IDLE) { /* ask the prober */
      c->probe = SG__PROBE_ASKED;
      c->probe_run = run;
      c->probe_fn = a->watch.broken;
      c->probe_ctx = a->watch.broken_ctx;
      c->probe_owner = a->watch.report_ctx;
      sg__cond_signal(&c->probe_wake);
    }
  }
  return progress;
}

/* Frees `doomed` with the lock released (held on entry and on return). */
static void free_doomed(sg__conductor *c, sg__stage_run *doomed) {
  if (!doomed) return;
  c->freeing++;
  sg__mutex_unlock(&c->lock);
  while (doomed) {
    sg__stage_run *next = doomed->act.next;
    sg__stage_run_free(doomed);
    doomed = next;
  }
  sg__mutex_lock(&c->lock);
  if (--c->freeing == 0) sg__cond_broadcast(&c->settled);
}

/* ---- the thread ---------------------------------------------------------- */

/* The prober (stage_conductor.h): answers one question at a time, with the
 * conductor's lock released during the backend's call. */
static void *prober_main(void *arg) {
  sg__conductor *c = arg;
  sg__mutex_lock(&c->lock);
  for (;;) {
    while (!c->stopping && c->probe != SG__PROBE_ASKED) sg__cond_wait(&c->probe_wake, &c->lock);
    if (c->stopping) break;
    sg__pool_broken_fn fn = c->probe_fn;
    void *ctx = c->probe_ctx;
    c->probe = SG__PROBE_RUNNING;
    sg__mutex_unlock(&c->lock);
    const int broken = fn(ctx);
    sg__mutex_lock(&c->lock);
    c->probe_broken = broken;
    /* A run taken off meanwhile gets no answer. */
    c->probe = c->probe_run ? SG__PROBE_ANSWERED : SG__PROBE_IDLE;
    c->kicked = 1;
    sg__cond_broadcast(&c->probe_done);
    sg__cond_signal(&c->wake);
  }
  sg__mutex_unlock(&c->lock);
  return NULL;
}

static void *conductor_main(void *arg) {
  sg__conductor *c = arg;
#if defined(__linux__) && defined(PR_SET_TIMERSLACK)
  prctl(PR_SET_TIMERSLACK, 1000UL, 0UL, 0UL, 0UL); /* its short sleeps stay short */
#endif
  uint64_t pause_ns = SG__FLAG_SLEEP_MIN_NS, last_progress = sg__now_ns();
  sg__mutex_lock(&c->lock);
  while (!c->stopping) {
    if (!c->head) {
      sg__cond_wait(&c->wake, &c->lock);
      last_progress = sg__now_ns();
      continue;
    }
    const uint64_t now = sg__now_ns();
    int progress = 0;
    sg__stage_run *doomed = NULL;
    for (sg__stage_run *r = c->head, *next; r; r = next) {
      next = r->act.next; /* step may unlink r */
      progress |= step(c, r, now, &doomed);
    }
    free_doomed(c, doomed);
    if (progress || c->kicked) {
      c->kicked = 0;
      last_progress = sg__now_ns();
      pause_ns = SG__FLAG_SLEEP_MIN_NS;
    } else if (sg__now_ns() - last_progress < c->spin_ns) {
      sg__mutex_unlock(&c->lock);
      sg__flag_spin();
      sg__mutex_lock(&c->lock);
    } else {
      sg__cond_timedwait_ns(&c->wake, &c->lock, pause_ns);
      pause_ns = pause_ns * 2 > SG__FLAG_SLEEP_MAX_NS ? SG__FLAG_SLEEP_MAX_NS
                                                          : pause_ns * 2;
    }
  }
  sg__mutex_unlock(&c->lock);
  return NULL;
}

sg_status sg__conductor_init(sg__conductor *c, const char *where) {
  memset(c, 0, sizeof *c);
  const char *spin = getenv("SG_STAGING_CONDUCTOR_SPIN_US");
  c->spin_ns = spin                                         ? (uint64_t)strtoul(spin, NULL, 10) * 1000u
               : sg__cpu_count() >= CONDUCTOR_SPIN_MIN_CPUS ? CONDUCTOR_SPIN_NS
                                                            : SG__FLAG_SPIN_NS;
  if (c->spin_ns > (uint64_t)100 * 1000 * 1000) c->spin_ns = (uint64_t)100 * 1000 * 1000;
  if (sg__mutex_init(&c->lock))
    return sg__fail(SG_ERR_SYSTEM, "%s: cannot create a mutex for the conductor", where);
  pthread_cond_t *conds[4] = {&c->wake, &c->settled, &c->probe_wake, &c->probe_done};
  for (int i = 0; i < 4; i++) {
    if (!sg__cond_init(conds[i])) continue;
    while (i-- > 0) sg__cond_destroy(conds[i]);
    sg__mutex_destroy(&c->lock);
    return sg__fail(SG_ERR_SYSTEM, "%s: cannot create a condition for the conductor", where);
  }
  return SG_OK;
}

sg_status sg__conductor_start(sg__conductor *c, const char *where) {
  sg__mutex_lock(&c->lock);
  sg_status st = SG_OK;
  if (!c->prober_running) {
    if (sg__thread_create(&c->prober, prober_main, c))
      st = sg__fail(SG_ERR_SYSTEM, "%s: cannot start the staging conductor's prober thread",
                    where);
    else
      c->prober_running = 1;
  }
  if (!st && !c->running) {
    if (sg__thread_create(&c->thread, conductor_main, c))
      st = sg__fail(SG_ERR_SYSTEM, "%s: cannot start the staging conductor thread", where);
    else
      c->running = 1;
  }
  sg__mutex_unlock(&c->lock);
  return st;
}

void sg__conductor_destroy(sg__conductor *c) {
  sg__mutex_lock(&c->lock);
  c->stopping = 1;
  sg__cond_broadcast(&c->wake);
  sg__cond_broadcast(&c->probe_wake);
  const int running = c->running, probing = c->prober_running;
  sg__mutex_unlock(&c->lock);
  if (running) sg__thread_join(c->thread);
  if (probing) sg__thread_join(c->prober);
  while (c->head) unlink_run(c, c->head);
  sg__cond_destroy(&c->probe_done);
  sg__cond_destroy(&c->probe_wake);
  sg__cond_destroy(&c->settled);
  sg__cond_destroy(&c->wake);
  sg__mutex_destroy(&c->lock);
  memset(c, 0, sizeof *c);
}

/* ---- what launches and executables ask ----------------------------------- */

void sg__stage_arm(sg__stage_run *run, const sg__stage_watch *watch, const char *where) {
  sg__conductor *c = conductor_of(run);
  sg__stage_activation *a = &run->act;
  sg__mutex_lock(&c->lock);
  a->watch = *watch;
  snprintf(a->where, sizeof a->where, "%s", where);
  if (a->listed) {
    a->armed++; /* a graph launched again: served after the launch before */
  } else {
    activation_reset(a);
    a->armed = 1;
    a->listed = 1;
    a->next = NULL;
    if (c->tail) c->tail->act.next = run; else c->head = run;
    c->tail = run;
  }
  c->kicked = 1;
  sg__cond_signal(&c->wake);
  sg__mutex_unlock(&c->lock);
}

void sg__stage_unarm(sg__stage_run *run) {
  sg__conductor *c = conductor_of(run);
  sg__stage_activation *a = &run->act;
  sg__mutex_lock(&c->lock);
  if (a->listed && a->armed > 1) {
    a->armed--;
  } else if (a->listed) {
    a->armed = 0;
    unlink_run(c, run);
  }
  sg__mutex_unlock(&c->lock);
}

void sg__stage_abandon(sg__stage_run *run) {
  sg__conductor *c = conductor_of(run);
  sg__mutex_lock(&c->lock);
  release(run); /* no report: the launch fails by itself */
  run->act.end = SG__END_UNKNOWN;
  sg__mutex_unlock(&c->lock);
}

void sg__stage_end_at(sg__stage_run *run, sg__stage_end end) {
  sg__conductor *c = conductor_of(run);
  sg__mutex_lock(&c->lock);
  run->act.end = end;
  c->kicked = 1;
  sg__cond_signal(&c->wake);
  sg__mutex_unlock(&c->lock);
}

void sg__stage_settle(sg_pinned_pool *pool) {
  sg__conductor *c = sg__pool_conductor(pool);
  sg__mutex_lock(&c->lock);
  sg__stage_run *doomed = NULL;
  for (sg__stage_run *r = c->head, *next; r; r = next) {
    next = r->act.next;
    if (!ended(r)) continue;
    /* Host copies of a released run may still run: they never wait. */
    for (unsigned s = 0; s < r->g.ring; s++) sg__copy_wait(r->workers, &r->jobs[s]);
    retire(c, r, &doomed);
  }
  free_doomed(c, doomed);
  while (c->freeing) sg__cond_wait(&c->settled, &c->lock);
  sg__mutex_unlock(&c->lock);
}

void sg__stage_disown(sg_pinned_pool *pool, void *report_ctx) {
  sg__conductor *c = sg__pool_conductor(pool);
  sg__stage_settle(pool);
  sg__mutex_lock(&c->lock);
  /* The prober may be asking the backend about this executable, whose
   * context is about to go: let that call end, and drop any question of it
   * not asked yet. */
  while (c->probe == SG__PROBE_RUNNING && c->probe_owner == report_ctx)
    sg__cond_wait(&c->probe_done, &c->lock);
  if (c->probe != SG__PROBE_RUNNING && c->probe_owner == report_ctx) {
    c->probe = SG__PROBE_IDLE;
    c->probe_run = NULL;
    c->probe_owner = NULL;
  }
  for (sg__stage_run *r = c->head, *next; r; r = next) {
    next = r->act.next;
    if (r->act.watch.report_ctx != report_ctx) continue;
    release(r); /* no report: its executable is going */
    r->act.armed = 0;
    unlink_run(c, r); /* transient: left allocated, the device state is unknown */
  }
  sg__mutex_unlock(&c->lock);
}

void sg__stage_forget(sg__stage_run *run) {
  sg__conductor *c = conductor_of(run);
  sg__mutex_lock(&c->lock);
  if (run->act.listed) {
    if (!ended(run)) release(run);
    run->act.armed = 0;
    unlink_run(c, run);
  }
  sg__mutex_unlock(&c->lock);
}
