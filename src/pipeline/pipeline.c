/* Pipelines: creation (one executable per instance, each set up by the
 * user), destruction and inspection. */
#include <string.h>

#include "core/handles.h"
#include "core/nvtx.h"
#include "core/sys.h"
#include "exec/exec.h"
#include "pipeline/pipeline_internal.h"

void sg_pipeline_options_init(sg_pipeline_options *opts) {
  if (!opts) return;
  memset(opts, 0, sizeof *opts);
  /* Three instances let one batch upload while one computes and one
   * downloads; the copy engines work in both directions at once. */
  opts->depth = 3;
  /* One batch queued behind the running one per instance: the next launch
   * is on the device before the running one ends, so the host's round trip
   * (see the batch complete, bind, launch) is never between two batches. */
  opts->queue = 2;
  sg_exec_options_init(&opts->exec);
}

sg__pipe_batch *sg__pipeline_batch(const sg_pipeline *p, uint64_t b) {
  return &p->slots[b % p->depth].inflight[(b / p->depth) % p->queue];
}

static const char what[] = "pipeline";

/* 1 if this thread runs a host callback of one of the pipeline's instances. */
static int in_instance_callback(const sg_pipeline *p) {
  for (unsigned i = 0; i < p->depth; i++)
    if (sg__exec_in_own_callback(p->slots[i].inst.exec)) return 1;
  return 0;
}

/* The entry of a changing call; `last`: the pipeline's destruction, which
 * takes it out of the registry in the same step. The pipeline is read under
 * the registry's lock, so a destruction racing this call cannot free it
 * meanwhile. */
static sg_status enter(sg_pipeline *p, const char *fn, int last) {
  if (!sg__handle_hold(p, SG__HANDLE_PIPELINE)) {
    sg__handle_release();
    return sg__handle_missing(p, fn, what);
  }
  sg_status st;
  if (atomic_load_explicit(&p->in_callback, memory_order_relaxed) &&
      sg__in_use_by_this_thread(&p->in_use))
    st = sg__fail(SG_ERR_INVALID_ARGUMENT,
                  "%s: called from the pipeline's own bind or on_complete callback", fn);
  else if (in_instance_callback(p))
    st = sg__fail(SG_ERR_BUSY,
                  "%s: called from a host callback of one of the pipeline's own batches, which "
                  "cannot complete until the callback returns; call it from the thread that "
                  "submits",
                  fn);
  else if (!(st = sg__in_use_enter(&p->in_use, fn, what)) && last)
    sg__handle_drop_held(p);
  sg__handle_release();
  return st;
}

sg_status sg__pipeline_enter(sg_pipeline *p, const char *fn) { return enter(p, fn, 0); }

void sg__pipeline_leave(sg_pipeline *p) { sg__in_use_leave(&p->in_use); }

sg_status sg__pipeline_enter_shared(const sg_pipeline *p, const char *fn) {
  return sg__handle_enter(p, SG__HANDLE_PIPELINE, p ? &((sg_pipeline *)p)->in_use : NULL, 1, fn,
                          what, what);
}

void sg__pipeline_leave_shared(const sg_pipeline *p) {
  sg__in_use_leave_shared(&((sg_pipeline *)p)->in_use);
}

/* Instances share the device's hardware queues: give each an equal share
 * unless the caller chose a stream limit. */
static unsigned streams_per_instance(unsigned depth) {
  unsigned queues = sg__default_max_streams();
  unsigned share = queues / depth;
  return share ? share : 1u;
}

/* Tears down and destroys instances [0, count), last first. */
static void release_instances(sg_pipeline *p, unsigned count) {
  for (unsigned i = count; i-- > 0;) {
    sg__pipe_slot *s = &p->slots[i];
    if (s->inst.exec) sg_exec_wait(s->inst.exec); /* idle before teardown frees buffers */
    if (s->set_up && p->options.teardown) p->options.teardown(&s->inst, p->options.user_data);
    s->set_up = 0;
    if (s->inst.exec) sg_exec_destroy(s->inst.exec);
    s->inst.exec = NULL;
    sg__free(s->inflight);
    s->inflight = NULL;
  }
}

/* Makes and sets up instance i; on failure it is left for release_instances. */
static sg_status make_instance(sg_pipeline *p, const sg_graph *graph, unsigned i,
                               const char *fn) {
  sg__pipe_slot *s = &p->slots[i];
  s->inst.index = i;
  s->inflight = sg__calloc(p->queue, sizeof *s->inflight);
  if (!s->inflight) return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
  sg_exec_options exec_options = p->options.exec;
  if (p->options.devices) exec_options.device = p->options.devices[i % p->options.device_count];
  sg_status st = sg_exec_create(graph, &exec_options, &s->inst.exec);
  if (st) {
    char cause[SG_ERROR_MESSAGE_BYTES];
    sg__format(cause, sizeof cause, "%s", sg_last_error());
    return sg__fail(st, "%s: instance %u of %u: %s", fn, i, p->depth, cause);
  }
  if (sg__exec_dumps(s->inst.exec)) { /* one trace of every instance, not one each */
    sg__exec_stop_dump(s->inst.exec);
    p->dump = 1;
  }
  /* Each batch waits for its own launch (graph mode marks launches only
   * once asked: exec/exec.h). */
  if (p->queue > 1) sg__exec_track_launches(s->inst.exec);
  if (p->options.setup) {
    int rc = p->options.setup(&s->inst, p->options.user_data);
    if (rc) return sg__fail(SG_ERR_CALLBACK, "%s: setup of instance %u returned %d", fn, i, rc);
  }
  s->set_up = 1;
  return SG_OK;
}

sg_status sg_pipeline_create(const sg_graph *graph, const sg_pipeline_options *opts,
                             sg_pipeline **out) {
  if (!out) return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: out is NULL", __func__);
  *out = NULL;
  sg_status st = sg__handle_check(graph, SG__HANDLE_GRAPH, __func__, "graph");
  if (st) return st;
  sg_pipeline_options o;
  if (opts) o = *opts; else sg_pipeline_options_init(&o);
  if (o.depth < 1 || o.depth > SG_PIPELINE_MAX_DEPTH)
    return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: depth %u is out of range (1..%u)", __func__,
                    o.depth, SG_PIPELINE_MAX_DEPTH);
  if (o.queue == 0) o.queue = 2; /* a caller's older, shorter options: the default */
  if (o.queue > SG_PIPELINE_MAX_QUEUE)
    return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: queue %u is out of range (1..%u)", __func__,
                    o.queue, SG_PIPELINE_MAX_QUEUE);
  if (!o.devices != !o.device_count)
    return sg__fail(SG_ERR_INVALID_ARGUMENT,
                    "%s: devices is %s but device_count is %u; give both or neither", __func__,
                    o.devices ? "set" : "NULL", o.device_count);
  if (o.device_count > SG_PIPELINE_MAX_DEPTH)
    return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: device_count %u is more than %u", __func__,
                    o.device_count, SG_PIPELINE_MAX_DEPTH);
  for (unsigned k = 0; k < o.device_count; k++)
    if (o.devices[k] < 0)
      return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: devices[%u] is %d, not a device ordinal",
                      __func__, k, o.devices[k]);
  /* Instances on one device share its hardware queues. */
  unsigned spread = o.device_count ? o.device_count : 1;
  unsigned sharing = (o.depth + spread - 1) / spread;
  if (o.exec.max_streams == 0) o.exec.max_streams = streams_per_instance(sharing);

  sg_pipeline *p = sg__calloc(1, sizeof *p);
  sg__pipe_slot *slots = sg__calloc(o.depth, sizeof *slots);
  if (!p || !slots) {
    sg__free(p);
    sg__free(slots);
    return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory", __func__);
  }
  p->options = o;
  p->depth = o.depth;
  p->queue = o.queue;
  p->slots = slots;
  unsigned made = 0;
  for (; made < p->depth; made++) {
    st = make_instance(p, graph, made, __func__);
    if (st) {
      made++; /* its executable, if any, is released below */
      break;
    }
  }
  /* The caller's device list was needed only to make the instances. */
  p->options.devices = NULL;
  p->options.device_count = 0;
  if (!st) st = sg__handle_register(p, SG__HANDLE_PIPELINE, "sg_pipeline_create");
  if (st) {
    char cause[SG_ERROR_MESSAGE_BYTES];
    sg__format(cause, sizeof cause, "%s", sg_last_error());
    release_instances(p, made); /* teardown may call the library: keep our message */
    sg__free(p->slots);
    sg__free(p);
    return sg__fail(st, "%s", cause);
  }
  *out = p;
  return SG_OK;
}

sg_status sg_pipeline_destroy(sg_pipeline *pipeline) {
  sg_status st = enter(pipeline, __func__, 1);
  if (st) return st;
  /* Waiting on a failed instance sets this thread's message; a successful
   * call must leave it as it was. */
  char message[SG_ERROR_MESSAGE_BYTES];
  sg__format(message, sizeof message, "%s", sg_last_error());
  if (pipeline->dump) sg__pipeline_dump(pipeline);
  for (uint64_t b = pipeline->next_report; b < pipeline->next_batch; b++)
    sg__nvtx_end(sg__pipeline_batch(pipeline, b)->range);
  release_instances(pipeline, pipeline->depth);
  sg__free(pipeline->slots);
  sg__free(pipeline);
  sg__fail(SG_OK, "%s", message);
  return SG_OK;
}

static sg_status get_stats(const sg_pipeline *p, sg_pipeline_stats *stats, const char *fn) {
  if (!stats) return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: stats is NULL", fn);
  memset(stats, 0, sizeof *stats);
  stats->depth = p->depth;
  stats->queue = p->options.bind ? 1 : p->queue; /* a bind callback runs with its instance idle */
  stats->submitted = p->next_batch;
  stats->reported = p->next_report;
  stats->waits = p->waits;
  stats->would_block = p->would_block;
  for (unsigned i = 0; i < p->depth; i++) {
    sg_exec_stats es;
    sg_status st = sg_exec_get_stats(p->slots[i].inst.exec, &es);
    if (st) return st;
    stats->param_updates += es.param_updates;
    stats->in_place_updates += es.in_place_updates;
    stats->rebuilds += es.rebuilds;
  }
  stats->stopped = p->stopped;
  stats->failed_batch = p->stopped ? p->failed_batch : 0;
  stats->fail_status = p->stopped ? p->fail_status : SG_OK;
  return SG_OK;
}

sg_status sg_pipeline_get_stats(const sg_pipeline *pipeline, sg_pipeline_stats *stats) {
  sg_status st = sg__pipeline_enter_shared(pipeline, __func__);
  if (st) return st;
  st = get_stats(pipeline, stats, __func__);
  sg__pipeline_leave_shared(pipeline);
  return st;
}

sg_status sg_pipeline_get_instance(const sg_pipeline *pipeline, unsigned index,
                                   sg_pipeline_instance *instance) {
  sg_status st = sg__pipeline_enter_shared(pipeline, __func__);
  if (st) return st;
  if (!instance)
    st = sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: instance is NULL", __func__);
  else if (index >= pipeline->depth)
    st = sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: instance %u is out of range (depth %u)",
                  __func__, index, pipeline->depth);
  else
    *instance = pipeline->slots[index].inst;
  sg__pipeline_leave_shared(pipeline);
  return st;
}
