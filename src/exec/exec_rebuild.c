/* Executables: rebuilds that never stall launches (sg_exec_update_async).
 *
 * A new topology is planned and its backend state made (worker threads or
 * streams, a CUDA graph instantiated and uploaded) on a build thread while
 * the caller goes on launching the current version. The caller's thread
 * alone switches: the first launch that finds the build ended takes the new
 * version and hands the old version back to the build thread. The switch
 * does not wait for the old version's launches in flight: the backend
 * orders the new version's first launch after the old one's last
 * (ops->follow: an event wait on the GPU, a gate in the host backend), and
 * the build thread waits for them (ops->wait), says so (`old_idle`, which
 * sg_exec_wait and the waits for launches before the switch wait for), and
 * frees the old version. So a launch never pays for building, waiting for
 * or freeing a version, and takes no lock the build thread holds while it
 * works (the slot's lock guards a flag or two, never a build).
 *
 * One slot per executable (allocated at the first asynchronous update)
 * holds at most one build. The slot's fields are split by owner:
 *  - the job (snapshot, plan, trace, state, status) belongs to the build
 *    thread until it sets `built`, then to the caller's thread;
 *  - `order` (what to do with the retired or unused version) is written by
 *    the caller under the lock and read by the build thread;
 *  - everything else is the caller's alone (the thread using the
 *    executable: calls on it are serialised by core/in_use.h). */
#include <stdio.h>
#include <string.h>

#include "core/graph_internal.h"
#include "core/handles.h"
#include "core/node_memory.h"
#include "core/sys.h"
#include "exec/exec.h"
#include "exec/exec_internal.h"
#include "exec/exec_temps.h"
#include "exec/trace.h"
#include "plan/plan.h"

static const char async_fn[] = "sg_exec_update_async";

enum { ORDER_NONE, ORDER_RETIRE, ORDER_DISCARD };
enum { OUTCOME_NONE, OUTCOME_PENDING, OUTCOME_SWITCHED, OUTCOME_FAILED };

typedef struct sg__rebuild {
  sg_exec *exec;
  pthread_mutex_t lock;
  pthread_cond_t changed;
  pthread_t thread;
  int thread_live; /* started and not yet joined */
  int pending;     /* a build started and not yet concluded */
  atomic_int built; /* the build thread has finished building (ok or not) */
  int order;        /* under the lock: ORDER_* */
  /* A retired version is being waited for and freed: set at the switch by
   * the caller, cleared when the thread is joined; `old_idle` (the thread
   * writes it, under the lock) once its launches have all ended, and
   * `retired_before` the switch launch's number. */
  int retiring;
  atomic_int old_idle;
  uint64_t retired_before;

  /* The job. */
  sg__snapshot snap;  /* the new graph, its memory held */
  uint32_t serial;    /* the new graph's serial: its handles after the switch */
  uint64_t base;      /* launches made when the build started */
  int traced;
  sg_plan *plan;
  sg__exec_temps *temps; /* the new topology's planned temporaries, or NULL */
  struct sg__trace *trace;
  void *state;
  sg_status status;
  char message[SG_ERROR_MESSAGE_BYTES];

  /* The version retired at the switch, for the build thread to free. */
  void *old_state;
  sg__snapshot old_snap;
  sg_plan *old_plan;
  sg__exec_temps *old_temps;
  struct sg__trace *old_trace;

  /* What the last asynchronous update came to. */
  int outcome;
  uint64_t first_launch;
  sg_status fail_status;
  char fail_message[SG_ERROR_MESSAGE_BYTES];
} sg__rebuild;

/* ---- the build thread ---------------------------------------------------- */

/* Tests only (exec_internal.h): called on the build thread before a build
 * and before a retired version is freed. */
static _Atomic(sg__rebuild_hook) test_hook;

void sg__exec_rebuild_set_hook(sg__rebuild_hook hook) { atomic_store(&test_hook, hook); }

static void call_hook(int where) {
  sg__rebuild_hook hook = atomic_load(&test_hook);
  if (hook) hook(where);
}

/* Frees a built version nobody will run (or the pieces of a failed one). */
static void free_version(const sg__backend_ops *ops, void *state, struct sg__trace *trace,
                         sg__exec_temps *temps, sg__snapshot *snap, sg_plan *plan) {
  if (state) ops->destroy(state);
  sg__exec_temps_free(temps); /* after the state whose nodes use the arena */
  sg__trace_free(trace);
  sg__snapshot_release_memory(snap);
  sg__plan_free(plan);
  sg__snapshot_free(snap);
}

static sg_status build(sg__rebuild *rb) {
  sg_exec *exec = rb->exec;
  sg_status st = sg__exec_plan_build(&rb->snap, &exec->options, &rb->plan);
  if (st) return sg__plan_prefix_failure(st, async_fn);
  /* Temporaries are planned for the new schedule, in an arena of their
   * own: the old one stays until the old version is freed. */
  if ((st = sg__exec_temps_create(exec->ops, exec->options.device, &rb->snap, rb->plan, async_fn,
                                  &rb->temps)))
    return st;
  if (rb->traced && (st = sg__trace_new(rb->snap.node_count, exec->options.trace_launches,
                                        exec->options.trace_every, async_fn, &rb->trace)))
    return st;
  sg__backend_args args = {exec,
                           &exec->options,
                           rb->snap.nodes,
                           rb->snap.node_count,
                           sg__plan_schedule(rb->plan),
                           rb->trace,
                           rb->base,
                           async_fn,
                           rb->snap.conds,
                           rb->snap.cond_count,
                           1};
  return exec->ops->create(&args, &rb->state);
}

static void *build_main(void *arg) {
  sg__rebuild *rb = arg;
  const sg__backend_ops *ops = rb->exec->ops;
  call_hook(SG__REBUILD_HOOK_BUILD);
  sg_status st = build(rb);
  if (st) {
    snprintf(rb->message, sizeof rb->message, "%s", sg_last_error());
    rb->state = NULL;
    free_version(ops, NULL, rb->trace, rb->temps, &rb->snap, rb->plan);
    rb->trace = NULL;
    rb->temps = NULL;
    rb->plan = NULL;
  }
  rb->status = st;
  sg__mutex_lock(&rb->lock);
  atomic_store_explicit(&rb->built, 1, memory_order_release);
  sg__cond_broadcast(&rb->changed);
  /* A failed build is over; a good one waits to learn which version to
   * free: the old one after a switch, or itself if never switched to. */
  while (!st && rb->order == ORDER_NONE) sg__cond_wait(&rb->changed, &rb->lock);
  const int order = rb->order;
  sg__mutex_unlock(&rb->lock);
  if (order == ORDER_RETIRE) {
    /* The old version's launches in flight end here, not in a launch. Their
     * failures are the executable's (sg__exec_fail), as any launch's. */
    ops->wait(rb->old_state);
    sg__mutex_lock(&rb->lock);
    atomic_store_explicit(&rb->old_idle, 1, memory_order_release);
    sg__cond_broadcast(&rb->changed);
    sg__mutex_unlock(&rb->lock);
    call_hook(SG__REBUILD_HOOK_RETIRE);
    free_version(ops, rb->old_state, rb->old_trace, rb->old_temps, &rb->old_snap, rb->old_plan);
    rb->old_state = NULL;
    rb->old_trace = NULL;
    rb->old_temps = NULL;
    rb->old_plan = NULL;
  } else if (order == ORDER_DISCARD) {
    free_version(ops, rb->state, rb->trace, rb->temps, &rb->snap, rb->plan);
    rb->state = NULL;
    rb->trace = NULL;
    rb->temps = NULL;
    rb->plan = NULL;
  }
  return NULL;
}

/* ---- the caller's side --------------------------------------------------- */

static void join(sg__rebuild *rb) {
  if (!rb->thread_live) return;
  sg__thread_join(rb->thread);
  rb->thread_live = 0;
  rb->retiring = 0;
}

static void give_order(sg__rebuild *rb, int order) {
  sg__mutex_lock(&rb->lock);
  rb->order = order;
  sg__cond_broadcast(&rb->changed);
  sg__mutex_unlock(&rb->lock);
}

static void wait_built(sg__rebuild *rb) {
  if (atomic_load_explicit(&rb->built, memory_order_acquire)) return;
  sg__mutex_lock(&rb->lock);
  while (!atomic_load_explicit(&rb->built, memory_order_acquire))
    sg__cond_wait(&rb->changed, &rb->lock);
  sg__mutex_unlock(&rb->lock);
}

static void record_failure(sg__rebuild *rb, sg_status st, const char *message) {
  rb->outcome = OUTCOME_FAILED;
  rb->fail_status = st;
  snprintf(rb->fail_message, sizeof rb->fail_message, "%s", message);
}

/* The build has ended: switch to it, or record why not. Returns SG_OK, or
 * SG_ERR_EXEC_FAILED when a launch of the old version has failed: the
 * executable is failed and keeps its old version. */
static sg_status conclude(sg_exec *exec, sg__rebuild *rb) {
  rb->pending = 0;
  if (rb->status) {
    record_failure(rb, rb->status, rb->message);
    join(rb);
    return SG_OK;
  }
  const sg__backend_ops *ops = exec->ops;
  if (sg__exec_has_failed(exec)) {
    give_order(rb, ORDER_DISCARD);
    join(rb);
    record_failure(rb, SG_ERR_EXEC_FAILED,
                   "sg_exec_update_async: the new version was not switched to: a launch of the "
                   "old version failed; destroy the executable");
    return SG_ERR_EXEC_FAILED;
  }
  /* Launches run in order: the new version's first runs after the old
   * version's last. The backend orders it so without waiting here; where
   * it cannot (no follow, or its call failed), the old launches are waited
   * for here. SG_TRACE_DIR's files describe the old version's launches:
   * written here, once they have ended. A failure of a launch still in
   * flight is found later, as any launch's: the executable is failed and
   * runs the new version no more than the old. */
  if (exec->dump || !ops->follow || ops->follow(rb->state, exec->state) != SG_OK)
    ops->wait(exec->state);
  if (exec->dump) sg__exec_dump(exec); /* what the old version ran */
  if (ops->renumber) ops->renumber(rb->state, exec->launched);
  rb->old_state = exec->state;
  rb->old_trace = exec->trace;
  rb->old_plan = exec->plan;
  rb->old_temps = exec->temps;
  rb->old_snap = exec->snap;
  const uint32_t original_serial = exec->snap.graph_serial;
  exec->state = rb->state;
  exec->trace = rb->trace;
  exec->plan = rb->plan;
  exec->temps = rb->temps;
  exec->snap = rb->snap;
  exec->snap.graph_serial = original_serial; /* handles of the first graph stay valid */
  exec->update_serial = rb->serial;
  memset(&rb->snap, 0, sizeof rb->snap);
  rb->state = NULL;
  rb->trace = NULL;
  rb->temps = NULL;
  rb->plan = NULL;
  sg__mutex_lock(&exec->lock);
  exec->stats.rebuilds++;
  sg__mutex_unlock(&exec->lock);
  rb->outcome = OUTCOME_SWITCHED;
  rb->first_launch = exec->launched + 1;
  rb->retired_before = rb->first_launch;
  rb->retiring = 1;
  atomic_store_explicit(&rb->old_idle, 0, memory_order_relaxed);
  give_order(rb, ORDER_RETIRE); /* the build thread waits for and frees the old version */
  return SG_OK;
}

/* 1 while launch `launch` (0: any launch) belongs to a retired version
 * whose launches may still run. */
static int old_busy(const sg__rebuild *rb, uint64_t launch) {
  return rb && rb->retiring && (launch == 0 || launch < rb->retired_before) &&
         !atomic_load_explicit(&rb->old_idle, memory_order_acquire);
}

int sg__exec_rebuild_old_busy(sg_exec *exec, uint64_t launch) {
  sg__rebuild *rb = exec->rebuild;
  return old_busy(rb, launch);
}

void sg__exec_rebuild_wait_old(sg_exec *exec, uint64_t launch) {
  sg__rebuild *rb = exec->rebuild;
  if (!old_busy(rb, launch)) return;
  sg__mutex_lock(&rb->lock);
  while (!atomic_load_explicit(&rb->old_idle, memory_order_acquire))
    sg__cond_wait(&rb->changed, &rb->lock);
  sg__mutex_unlock(&rb->lock);
}

sg_status sg__exec_rebuild_at_launch(sg_exec *exec, const char *fn) {
  sg__rebuild *rb = exec->rebuild;
  if (!rb->pending || !atomic_load_explicit(&rb->built, memory_order_acquire)) return SG_OK;
  sg_status st = conclude(exec, rb);
  if (st)
    return sg__fail(st, "%s: refused: an earlier launch failed (found while switching to the "
                        "version sg_exec_update_async built)",
                    fn);
  return SG_OK;
}

void sg__exec_rebuild_settle(sg_exec *exec) {
  sg__rebuild *rb = exec->rebuild;
  if (rb->pending) {
    wait_built(rb);
    conclude(exec, rb);
  }
  join(rb);
}

void sg__exec_rebuild_free(sg_exec *exec) {
  sg__rebuild *rb = exec->rebuild;
  if (rb->pending) {
    wait_built(rb);
    if (!rb->status) give_order(rb, ORDER_DISCARD);
    rb->pending = 0;
  }
  join(rb);
  sg__cond_destroy(&rb->changed);
  sg__mutex_destroy(&rb->lock);
  sg__free(rb);
  exec->rebuild = NULL;
}

static sg_status slot(sg_exec *exec, sg__rebuild **out) {
  if (exec->rebuild) {
    *out = exec->rebuild;
    return SG_OK;
  }
  sg__rebuild *rb = sg__calloc(1, sizeof *rb);
  if (!rb) return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory", async_fn);
  if (sg__mutex_init(&rb->lock)) {
    sg__free(rb);
    return sg__fail(SG_ERR_SYSTEM, "%s: cannot create a mutex", async_fn);
  }
  if (sg__cond_init(&rb->changed)) {
    sg__mutex_destroy(&rb->lock);
    sg__free(rb);
    return sg__fail(SG_ERR_SYSTEM, "%s: cannot create a condition variable", async_fn);
  }
  rb->exec = exec;
  exec->rebuild = *out = rb;
  return SG_OK;
}

/* Starts the build of `fresh` (moved into the slot on success). */
static sg_status start(sg_exec *exec, sg__rebuild *rb, sg__snapshot *fresh, uint32_t serial) {
  sg_status st = sg__snapshot_hold_memory(fresh, async_fn);
  if (st) return st;
  rb->snap = *fresh;
  rb->serial = serial;
  rb->base = exec->launched;
  rb->traced = exec->trace != NULL;
  rb->plan = NULL;
  rb->temps = NULL;
  rb->trace = NULL;
  rb->state = NULL;
  rb->status = SG_OK;
  rb->message[0] = '\0';
  rb->order = ORDER_NONE;
  atomic_store_explicit(&rb->built, 0, memory_order_relaxed);
  if (sg__thread_create(&rb->thread, build_main, rb)) {
    sg__snapshot_release_memory(&rb->snap);
    memset(&rb->snap, 0, sizeof rb->snap);
    return sg__fail(SG_ERR_SYSTEM, "%s: cannot start the build thread", async_fn);
  }
  memset(fresh, 0, sizeof *fresh);
  rb->thread_live = 1;
  rb->pending = 1;
  rb->outcome = OUTCOME_PENDING;
  return SG_OK;
}

static sg_status update_async(sg_exec *exec, const sg_graph *graph) {
  sg_status st = sg__handle_check(graph, SG__HANDLE_GRAPH, async_fn, "graph");
  if (st) return st;
  if (sg__exec_has_failed(exec))
    return sg__fail(SG_ERR_EXEC_FAILED, "%s: refused: an earlier launch failed", async_fn);
  sg__rebuild *rb = NULL;
  if ((st = slot(exec, &rb))) return st;
  if (rb->pending) {
    if (!atomic_load_explicit(&rb->built, memory_order_acquire))
      return sg__fail(SG_ERR_BUSY,
                      "%s: the previous update's new version is still being built; "
                      "sg_exec_update_wait for it (or sg_exec_update_query until it is not "
                      "SG_NOT_READY) before the next",
                      async_fn);
    if ((st = conclude(exec, rb)))
      return sg__fail(st, "%s: refused: an earlier launch failed", async_fn);
  }
  join(rb); /* a thread still freeing the version before */
  if ((st = sg__graph_read_begin(graph, async_fn))) return st;
  sg__snapshot fresh;
  int oom = sg__graph_snapshot(graph, &fresh) != SG_OK;
  sg__graph_read_end(graph);
  if (oom) return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory copying the graph", async_fn);
  st = sg__snapshot_check_acyclic(&fresh, async_fn);
  if (!st && sg__snapshot_same_topology(&exec->snap, &fresh)) {
    /* Nothing to build: the parameters change for the next launch. */
    if (!(st = sg__exec_update_params(exec, &fresh, async_fn))) {
      exec->update_serial = graph->serial;
      rb->outcome = OUTCOME_SWITCHED;
      rb->first_launch = exec->launched + 1;
    }
  } else if (!st) {
    st = start(exec, rb, &fresh, graph->serial);
  }
  sg__snapshot_free(&fresh); /* empty when the build took it */
  return st;
}

sg_status sg_exec_update_async(sg_exec *exec, const sg_graph *graph) {
  sg_status st = sg__exec_enter(exec, __func__);
  if (st) return st;
  st = update_async(exec, graph);
  sg__exec_leave(exec);
  return st;
}

/* The outcome as a status (SG_NOT_READY while pending). */
static sg_status report(const sg__rebuild *rb, uint64_t *first_launch, const char *fn) {
  if (!rb || rb->outcome == OUTCOME_NONE)
    return sg__fail(SG_ERR_INVALID_ARGUMENT,
                    "%s: no sg_exec_update_async was made on this executable", fn);
  switch (rb->outcome) {
  case OUTCOME_PENDING:
    return SG_NOT_READY;
  case OUTCOME_SWITCHED:
    if (first_launch) *first_launch = rb->first_launch;
    return SG_OK;
  default:
    return sg__fail(rb->fail_status, "%s", rb->fail_message);
  }
}

sg_status sg_exec_update_query(sg_exec *exec, uint64_t *first_launch) {
  sg_status st = sg__exec_enter(exec, __func__);
  if (st) return st;
  sg__rebuild *rb = exec->rebuild;
  /* A failed build is reported as soon as it is known; a good one waits
   * for its switch launch. */
  if (rb && rb->pending && atomic_load_explicit(&rb->built, memory_order_acquire) &&
      rb->status)
    conclude(exec, rb);
  st = report(rb, first_launch, __func__);
  sg__exec_leave(exec);
  return st;
}

sg_status sg_exec_update_wait(sg_exec *exec, uint64_t *first_launch) {
  sg_status st = sg__exec_enter(exec, __func__);
  if (st) return st;
  sg__rebuild *rb = exec->rebuild;
  if (rb && rb->pending) {
    wait_built(rb);
    st = conclude(exec, rb);
  }
  (void)st; /* a refused switch is recorded as the update's outcome */
  st = report(rb, first_launch, __func__);
  sg__exec_leave(exec);
  return st;
}
