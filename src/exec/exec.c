/* Executables: the backend-independent front end (creation, launch, wait,
 * parameter updates, statistics, failure state). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/conditional.h"
#include "core/device.h"
#include "core/graph_internal.h"
#include "core/handles.h"
#include "core/memory_table.h"
#include "core/node_memory.h"
#include "core/nvtx.h"
#include "core/sys.h"
#include "exec/exec.h"
#include "exec/exec_body.h"
#include "exec/exec_internal.h"
#include "exec/exec_temps.h"
#include "exec/trace.h"
#include "plan/plan.h"

void sg_exec_options_init(sg_exec_options *opts) {
  if (!opts) return;
  memset(opts, 0, sizeof *opts);
  opts->backend = SG_BACKEND_AUTO;
  opts->mode = SG_MODE_STREAMS;
  opts->build = SG_BUILD_EXPLICIT;
  opts->staging.policy = SG_STAGING_AUTO;
}

static sg_status check_options(const sg_exec_options *o, const char *fn) {
  if ((unsigned)o->backend > SG_BACKEND_HOST)
    return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: backend %d is not an sg_backend", fn,
                    (int)o->backend);
  if ((unsigned)o->mode > SG_MODE_GRAPH)
    return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: mode %d is not an sg_exec_mode", fn,
                    (int)o->mode);
  if ((unsigned)o->build > SG_BUILD_CAPTURE)
    return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: build %d is not an sg_graph_build", fn,
                    (int)o->build);
  if ((unsigned)o->staging.policy > SG_STAGING_NONE)
    return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: staging policy %d is not an sg_staging_policy",
                    fn, (int)o->staging.policy);
  if (o->device < 0)
    return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: device %d is negative", fn, o->device);
  /* Refused rather than ignored: a caller who set a sampling rate expects
   * a trace, and would otherwise find none only when reading it. */
  if (!o->trace && o->trace_every > 1)
    return sg__fail(SG_ERR_INVALID_ARGUMENT,
                    "%s: trace_every is %u but trace is 0: set trace = 1 to time every %u-th "
                    "launch, or leave trace_every 0",
                    fn, o->trace_every, o->trace_every);
  return SG_OK;
}

/* The backend that will run the executable, or why none can. */
static sg_status pick_backend(sg_exec_options *o, const char *fn) {
  sg_status st = sg__backend_resolve(o->backend, fn, &o->backend);
  if (st) return st;
  if (o->backend == SG_BACKEND_HOST) return SG_OK;
  if (!sg__backend_for(SG_BACKEND_CUDA))
    return sg__fail(SG_ERR_BACKEND_UNAVAILABLE,
                    "%s: the CUDA backend was asked for, but this build has no CUDA support", fn);
  int devices = sg__device_count();
  if (devices == 0)
    return sg__fail(SG_ERR_BACKEND_UNAVAILABLE,
                    "%s: the CUDA backend was asked for, but no CUDA device is present", fn);
  if (o->device >= devices)
    return sg__fail(SG_ERR_BACKEND_UNAVAILABLE, "%s: device %d asked for; %d device(s) present",
                    fn, o->device, devices);
  return SG_OK;
}

const sg__backend_ops *sg__backend_for(sg_backend backend) {
  return backend == SG_BACKEND_HOST ? sg__host_backend() : sg__cuda_backend();
}

sg_status sg__exec_backend_create(sg_exec *exec, const sg__snapshot *snap, const sg_plan *plan,
                                  struct sg__trace *trace, const char *fn, void **state) {
  sg__backend_args args = {exec,  &exec->options, snap->nodes,     snap->node_count,
                           sg__plan_schedule(plan), trace, exec->launched, fn,
                           snap->conds, snap->cond_count, 0};
  return exec->ops->create(&args, state);
}

/* Snapshot, check and plan `graph` into *snap / *plan (both freed on failure). */
sg_status sg__exec_plan_build(const sg__snapshot *snap, const sg_exec_options *o, sg_plan **out) {
  /* A CUDA graph built node by node is the reduced DAG itself: streams and
   * events are planned only if someone looks (docs/cuda-backends.md). */
  const int deferred =
      o->backend == SG_BACKEND_CUDA && o->mode == SG_MODE_GRAPH && o->build == SG_BUILD_EXPLICIT;
  return sg__plan_build_on(snap, o->max_streams, o->device, 1, deferred, out);
}

/* Plans the streams and events of the executable's plan if it deferred
 * them (shared calls may run together: under the lock). */
static sg_status complete_plan(const sg_exec *exec, const char *fn) {
  sg_exec *e = (sg_exec *)exec; /* the plan is logically constant */
  sg__mutex_lock(&e->lock);
  sg_status st = sg__plan_complete(e->plan);
  sg__mutex_unlock(&e->lock);
  return st ? sg__plan_prefix_failure(st, fn) : SG_OK;
}

static sg_status plan_graph(const sg_graph *graph, const sg_exec_options *o, const char *fn,
                            sg__snapshot *snap, sg_plan **plan) {
  if (sg__graph_snapshot(graph, snap))
    return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory copying the graph", fn);
  sg_status st = sg__snapshot_check_acyclic(snap, fn);
  if (!st && (st = sg__exec_plan_build(snap, o, plan))) sg__plan_prefix_failure(st, fn);
  if (st) sg__snapshot_free(snap);
  return st;
}

sg_status sg_exec_create(const sg_graph *graph, const sg_exec_options *opts, sg_exec **out) {
  if (!out) return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: out is NULL", __func__);
  *out = NULL;
  sg_status st = sg__handle_check(graph, SG__HANDLE_GRAPH, __func__, "graph");
  if (st) return st;
  sg_exec_options o;
  if (opts) o = *opts; else sg_exec_options_init(&o);
  if ((st = check_options(&o, __func__)) || (st = pick_backend(&o, __func__))) return st;
  if (o.max_streams == 0) o.max_streams = sg__default_max_streams();
  /* SG_TRACE_DIR traces every executable and writes it out at destruction
   * (docs/observability.md): a diagnostic for programs one cannot edit. */
  const char *dump_dir = getenv("SG_TRACE_DIR");
  const int dump = dump_dir && *dump_dir;
  if (dump) o.trace = 1;

  sg_exec *e = sg__calloc(1, sizeof *e);
  if (!e) return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory", __func__);
  e->options = o;
  e->ops = sg__backend_for(o.backend);
  e->next_label = SG__TRACE_NO_LABEL;
  e->dump = dump;
  if (sg__mutex_init(&e->lock)) {
    sg__free(e);
    return sg__fail(SG_ERR_SYSTEM, "%s: cannot create a mutex", __func__);
  }
  /* The graph is read only once entered: a destruction racing this call
   * cannot free it meanwhile. */
  if ((st = sg__graph_read_begin(graph, __func__))) {
    sg__mutex_destroy(&e->lock);
    sg__free(e);
    return st;
  }
  e->update_serial = graph->serial;
  const int ranges = sg__nvtx_active();
  if (ranges)
    sg__nvtx_push(SG__NVTX_BUILD, "sg_exec_create '%s'", graph->name ? graph->name : "");
  if (ranges) sg__nvtx_push(SG__NVTX_PLAN, "plan '%s'", graph->name ? graph->name : "");
  st = plan_graph(graph, &o, __func__, &e->snap, &e->plan);
  if (ranges) sg__nvtx_pop();
  sg__graph_read_end(graph);
  if (st) goto fail_lock;
  if ((st = sg__snapshot_hold_memory(&e->snap, __func__))) goto fail_plan;
  if ((st = sg__exec_temps_create(e->ops, o.device, &e->snap, e->plan, __func__, &e->temps)))
    goto fail_plan;
  if (o.trace &&
      (st = sg__trace_new(e->snap.node_count, o.trace_launches, o.trace_every, __func__, &e->trace)))
    goto fail_plan;
  if ((st = sg__exec_backend_create(e, &e->snap, e->plan, e->trace, __func__, &e->state)))
    goto fail_plan;
  if ((st = sg__handle_register(e, SG__HANDLE_EXEC, __func__))) goto fail_backend;
  *out = e;
  if (ranges) sg__nvtx_pop();
  return SG_OK;

fail_backend:
  e->ops->destroy(e->state);
fail_plan:
  sg__exec_temps_free(e->temps);
  sg__trace_free(e->trace);
  sg__snapshot_release_memory(&e->snap); /* releases only what was held */
  sg__plan_free(e->plan);
  sg__snapshot_free(&e->snap);
fail_lock:
  sg__mutex_destroy(&e->lock);
  sg__free(e);
  if (ranges) sg__nvtx_pop();
  return st;
}

/* Not from the executable's own callback (that launch cannot end). */
static sg_status refuse_own_callback(const sg_exec *exec, const char *fn) {
  if (!sg__exec_in_own_callback(exec)) return SG_OK;
  return sg__fail(SG_ERR_BUSY,
                  "%s: called from a host callback of this executable's own launch, which "
                  "cannot complete until the callback returns; make the call from another "
                  "thread, or after sg_exec_wait",
                  fn);
}

static const char what[] = "executable";

sg_status sg_exec_destroy(sg_exec *exec) {
  /* Marked in use and out of the registry in one step: a call racing this
   * one came first (then this one is SG_ERR_BUSY) or finds no handle. */
  sg_status st = refuse_own_callback(exec, __func__);
  if (!st)
    st = sg__handle_enter_last(exec, SG__HANDLE_EXEC, exec ? &exec->in_use : NULL, __func__,
                               "exec", what);
  if (st) return st;
  if (exec->rebuild) sg__exec_rebuild_free(exec);
  exec->ops->wait(exec->state);
  if (exec->dump) sg__exec_dump(exec);
  exec->ops->destroy(exec->state);
  sg__exec_temps_free(exec->temps);
  sg__trace_free(exec->trace);
  sg__snapshot_release_memory(&exec->snap); /* nothing runs now: sg_mem_free may free them */
  sg__plan_free(exec->plan);
  sg__snapshot_free(&exec->snap);
  sg__free(exec->arg_spare.blob);
  sg__mutex_destroy(&exec->lock);
  sg__free(exec);
  return SG_OK;
}

/* ---- failure state ----------------------------------------------------- */

static void record_failure(sg_exec *exec, uint64_t launch, sg_status status, const char *fmt,
                           va_list ap) {
  sg__mutex_lock(&exec->lock);
  if (!exec->failed) {
    exec->fail_status = status;
    exec->fail_launch = launch;
    vsnprintf(exec->fail_message, sizeof exec->fail_message, fmt, ap);
    exec->failed = 1;
  }
  sg__mutex_unlock(&exec->lock);
}

void sg__exec_fail(sg_exec *exec, sg_status status, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  record_failure(exec, 0, status, fmt, ap);
  va_end(ap);
}

void sg__exec_fail_launch(sg_exec *exec, uint64_t launch, sg_status status, const char *fmt,
                          ...) {
  va_list ap;
  va_start(ap, fmt);
  record_failure(exec, launch, status, fmt, ap);
  va_end(ap);
}

int sg__exec_has_failed(sg_exec *exec) {
  /* Set (under the lock) after the status and message are written. */
  return atomic_load(&exec->failed);
}

void sg__exec_count_rebuild(sg_exec *exec) {
  sg__mutex_lock(&exec->lock);
  exec->stats.rebuilds++;
  sg__mutex_unlock(&exec->lock);
}

void sg__exec_count_copies(sg_exec *exec, uint64_t staged, uint64_t registered) {
  sg__mutex_lock(&exec->lock);
  exec->stats.staged_copies += staged;
  exec->stats.registered_copies += registered;
  sg__mutex_unlock(&exec->lock);
}

/* The recorded failure as this thread's error, or SG_OK. */
static sg_status report_failure(sg_exec *exec) {
  sg__mutex_lock(&exec->lock);
  sg_status st = exec->failed ? exec->fail_status : SG_OK;
  if (st) sg__fail(st, "%s", exec->fail_message);
  sg__mutex_unlock(&exec->lock);
  return st;
}

void *sg__exec_backend_state(const sg_exec *exec, const sg__backend_ops *ops) {
  return exec && exec->ops == ops ? exec->state : NULL;
}

/* ---- entering a call ----------------------------------------------------- */

/* The executable whose user code this thread runs now, if any. */
static _Thread_local const sg_exec *running_callback_of;

const sg_exec *sg__exec_callback_begin(const sg_exec *exec) {
  const sg_exec *previous = running_callback_of;
  running_callback_of = exec;
  return previous;
}

void sg__exec_callback_end(const sg_exec *previous) { running_callback_of = previous; }

int sg__exec_in_own_callback(const sg_exec *exec) { return exec && running_callback_of == exec; }

sg_status sg__exec_enter(sg_exec *exec, const char *fn) {
  sg_status st = refuse_own_callback(exec, fn);
  if (st) return st;
  return sg__handle_enter(exec, SG__HANDLE_EXEC, exec ? &exec->in_use : NULL, 0, fn, "exec",
                          what);
}

void sg__exec_leave(sg_exec *exec) { sg__in_use_leave(&exec->in_use); }

sg_status sg__exec_enter_shared(const sg_exec *exec, const char *fn) {
  return sg__handle_enter(exec, SG__HANDLE_EXEC, exec ? &((sg_exec *)exec)->in_use : NULL, 1,
                          fn, "exec", what);
}

void sg__exec_leave_shared(const sg_exec *exec) {
  sg__in_use_leave_shared(&((sg_exec *)exec)->in_use);
}

const char *sg__exec_title(const sg_exec *exec, char *buf, size_t cap) {
  if (exec->snap.graph_name) snprintf(buf, cap, "'%s'", exec->snap.graph_name);
  else snprintf(buf, cap, "graph #%u", exec->snap.graph_serial);
  return buf;
}

/* ---- launching --------------------------------------------------------- */

static sg_status launch(sg_exec *exec, void *cuda_stream, const char *fn) {
  sg_status st;
  if (sg__exec_has_failed(exec)) {
    sg__mutex_lock(&exec->lock);
    st = sg__fail(SG_ERR_EXEC_FAILED, "%s: refused: an earlier launch failed (%s: %s)", fn,
                  sg_status_name(exec->fail_status), exec->fail_message);
    sg__mutex_unlock(&exec->lock);
    return st;
  }
  if (cuda_stream && exec->options.backend == SG_BACKEND_HOST && sg__device_count() == 0)
    return sg__fail(SG_ERR_INVALID_ARGUMENT,
                    "%s: the host backend orders a launch after a CUDA stream only where CUDA "
                    "is present, and %s; pass NULL",
                    fn, sg__cuda_backend() ? "no CUDA device was found" : "this build has no CUDA");
  if (exec->rebuild && (st = sg__exec_rebuild_at_launch(exec, fn))) return st;
  const uint64_t number = exec->launched + 1;
  if (exec->trace) {
    sg__trace_label(exec->trace, number, exec->next_label);
    exec->next_label = SG__TRACE_NO_LABEL;
  }
  if (sg__nvtx_active()) {
    char title[SG__LABEL_BYTES + 16];
    sg__nvtx_push(SG__NVTX_LAUNCH, "launch %s", sg__exec_title(exec, title, sizeof title));
    st = exec->ops->launch(exec->state, cuda_stream, number);
    sg__nvtx_pop();
  } else {
    st = exec->ops->launch(exec->state, cuda_stream, number);
  }
  if (st) return st;
  exec->launched = number;
  sg__mutex_lock(&exec->lock);
  exec->stats.launches++;
  sg__mutex_unlock(&exec->lock);
  return SG_OK;
}

sg_status sg_exec_launch(sg_exec *exec, void *cuda_stream) {
  sg_status st = sg__exec_enter(exec, __func__);
  if (st) return st;
  st = launch(exec, cuda_stream, __func__);
  sg__exec_leave(exec);
  return st;
}

sg_status sg_exec_wait(sg_exec *exec) {
  sg_status st = sg__exec_enter(exec, __func__);
  if (st) return st;
  st = exec->ops->wait(exec->state);
  /* A version retired at a switch may still run its last launches. */
  if (exec->rebuild) sg__exec_rebuild_wait_old(exec, 0);
  sg_status failure = report_failure(exec);
  sg__exec_leave(exec);
  return failure ? failure : st;
}

uint64_t sg__exec_launch_count(const sg_exec *exec) { return exec->launched; }

void sg__exec_track_launches(sg_exec *exec) {
  if (exec->ops->track_launches) exec->ops->track_launches(exec->state);
}

/* What launch `launch` came to, once the backend says it is done (`st`: the
 * wait's own status). A failure not yet tied to a launch belongs to the
 * oldest launch not yet seen finished without one. */
static sg_status launch_outcome(sg_exec *exec, uint64_t launch, sg_status st, const char *fn) {
  sg__mutex_lock(&exec->lock);
  if (!exec->failed) {
    if (!st && launch > exec->ok_through) exec->ok_through = launch;
    sg__mutex_unlock(&exec->lock);
    return st;
  }
  if (exec->fail_launch == 0) exec->fail_launch = exec->ok_through + 1;
  uint64_t failed = exec->fail_launch;
  if (failed > launch) {
    if (!st && launch > exec->ok_through) exec->ok_through = launch;
  } else if (failed == launch) {
    st = sg__fail(exec->fail_status, "%s", exec->fail_message);
  } else {
    st = sg__fail(SG_ERR_EXEC_FAILED,
                  "%s: launch %llu did not run normally: launch %llu failed before it (%s: %s)",
                  fn, (unsigned long long)launch, (unsigned long long)failed,
                  sg_status_name(exec->fail_status), exec->fail_message);
  }
  sg__mutex_unlock(&exec->lock);
  return st;
}

/* 1 if a failure is known to belong to launch `launch` or an earlier one. */
static int failed_by(sg_exec *exec, uint64_t launch) {
  if (!sg__exec_has_failed(exec)) return 0;
  sg__mutex_lock(&exec->lock);
  int known = exec->fail_launch != 0 && exec->fail_launch <= launch;
  sg__mutex_unlock(&exec->lock);
  return known;
}

/* Checks `launch` names a launch made: 1 .. the latest. */
static sg_status check_launch(sg_exec *exec, uint64_t launch, const char *fn) {
  uint64_t made = sg__exec_launch_count(exec);
  if (launch == 0 || launch > made)
    return sg__fail(SG_ERR_INVALID_ARGUMENT,
                    "%s: launch %llu has not been made (launches are numbered from 1; %llu so "
                    "far)",
                    fn, (unsigned long long)launch, (unsigned long long)made);
  return SG_OK;
}

sg_status sg_exec_wait_launch(sg_exec *exec, uint64_t launch) {
  sg_status st = sg__exec_enter(exec, __func__);
  if (st) return st;
  if (!(st = check_launch(exec, launch, __func__))) {
    sg__exec_track_launches(exec);
    /* Launches before the last switch ran the retired version, which the
     * current state counts as ended: their end is waited for (any launch
     * ends after them). */
    if (exec->rebuild) sg__exec_rebuild_wait_old(exec, 0);
    st = exec->ops->wait_launch(exec->state, launch);
    st = launch_outcome(exec, launch, st, __func__);
  }
  sg__exec_leave(exec);
  return st;
}

sg_status sg_exec_query_launch(sg_exec *exec, uint64_t launch) {
  sg_status st = sg__exec_enter(exec, __func__);
  if (st) return st;
  if (!(st = check_launch(exec, launch, __func__))) {
    sg__exec_track_launches(exec);
    st = exec->rebuild && sg__exec_rebuild_old_busy(exec, 0)
             ? SG_NOT_READY
             : exec->ops->query_launch(exec->state, launch);
    /* A failure known to belong to this launch or an earlier one is the
     * answer at once, as sg_exec_wait_launch would give it. */
    if (st != SG_NOT_READY || failed_by(exec, launch))
      st = launch_outcome(exec, launch, st == SG_NOT_READY ? SG_OK : st, __func__);
  }
  sg__exec_leave(exec);
  return st;
}

sg_status sg_exec_query(sg_exec *exec) {
  sg_status st = sg__exec_enter(exec, __func__);
  if (st) return st;
  st = exec->ops->query(exec->state);
  if (!st && exec->rebuild && sg__exec_rebuild_old_busy(exec, 0)) st = SG_NOT_READY;
  /* A failed executable answers its failure, even while the launches
   * queued behind the failed one still drain: once sg_exec_launch has
   * refused with SG_ERR_EXEC_FAILED, a query must not say SG_NOT_READY. */
  sg_status failure = report_failure(exec);
  if (failure) st = failure;
  sg__exec_leave(exec);
  return st;
}

/* ---- nodes ------------------------------------------------------------- */

sg_status sg__exec_resolve(const sg_exec *exec, sg_node node, const char *fn, uint32_t *index) {
  uint32_t serial = (uint32_t)(node.opaque >> 32);
  if (serial != exec->snap.graph_serial) serial = exec->update_serial;
  sg_status st = sg__node_resolve(node, serial, exec->snap.node_count, fn, "node", index);
  sg__body_path path;
  if (st == SG_ERR_FOREIGN_NODE && sg__body_find(&exec->snap, (uint32_t)(node.opaque >> 32), &path)) {
    char where[SG__BODY_PATH_BYTES];
    return sg__fail(SG_ERR_UNSUPPORTED,
                    "%s: node #%u is a node of %s: nodes inside conditional bodies are changed "
                    "by sg_exec_set_kernel, _copy, _memset and _host, not here",
                    fn, (uint32_t)node.opaque, sg__body_path_name(&path, where));
  }
  return st;
}

const sg__node *sg__exec_node(const sg_exec *exec, uint32_t index) {
  return &exec->snap.nodes[index];
}

unsigned sg__exec_temp_sides(const sg_exec *exec, uint32_t index) {
  unsigned sides = 0;
  /* Only the sides are wanted: no size to check against (bytes 0). */
  if (exec->temps && sg__exec_temps_sides(exec->temps, index, 0, 1, __func__, &sides)) return 0;
  return sides;
}

/* ---- inspection -------------------------------------------------------- */

sg_status sg_exec_get_info(const sg_exec *exec, sg_exec_info *info) {
  sg_status st = sg__exec_enter_shared(exec, __func__);
  if (st) return st;
  if (info && !(st = complete_plan(exec, __func__))) {
    const sg__schedule *s = sg__plan_schedule(exec->plan);
    info->backend = exec->options.backend;
    info->mode = exec->options.mode;
    info->build = exec->options.build;
    info->device = exec->options.device;
    info->node_count = exec->snap.node_count;
    info->stream_count = s->stream_count;
    info->event_count = s->event_count;
    info->wait_count = s->wait_count;
  } else if (!info) {
    st = sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: info is NULL", __func__);
  }
  sg__exec_leave_shared(exec);
  return st;
}

sg_status sg_exec_get_stats(const sg_exec *exec, sg_exec_stats *stats) {
  sg_status st = sg__exec_enter_shared(exec, __func__);
  if (st) return st;
  if (stats) {
    sg_exec *e = (sg_exec *)exec; /* the lock is not part of the logical state */
    sg__mutex_lock(&e->lock);
    *stats = e->stats;
    sg__mutex_unlock(&e->lock);
    stats->param_updates = e->param_updates;
    stats->in_place_updates = e->in_place_updates;
  } else {
    st = sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: stats is NULL", __func__);
  }
  sg__exec_leave_shared(exec);
  return st;
}

sg_status sg_exec_get_plan(const sg_exec *exec, const sg_plan **plan) {
  sg_status st = sg__exec_enter_shared(exec, __func__);
  if (st) return st;
  if (!plan) st = sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: plan is NULL", __func__);
  else if (!(st = complete_plan(exec, __func__))) *plan = exec->plan;
  sg__exec_leave_shared(exec);
  return st;
}
