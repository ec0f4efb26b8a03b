/* Pipelines: accepting a batch. Back-pressure (wait for, or refuse on, the
 * oldest batch of the instance the batch needs when `queue` batches are
 * already in flight there), binding it, launching it. */
#include <inttypes.h>

#include "core/nvtx.h"
#include "exec/exec.h"
#include "pipeline/pipeline_internal.h"

/* The batch that must be reported before batch b may be submitted: the one
 * `queue` places before it on the same instance. A bind callback may touch
 * whatever the instance's earlier batches use (its buffers, its data): it
 * runs with the instance idle, as documented, so with a callback batches do
 * not queue behind each other. */
static int needs_room(const sg_pipeline *p, uint64_t b, uint64_t *oldest) {
  uint64_t span = (uint64_t)(p->options.bind ? 1 : p->queue) * p->depth;
  if (b < span || p->next_report > b - span) return 0;
  *oldest = b - span;
  return 1;
}

/* The instance refused batch b (a bind, or the launch: SG_ERR_EXEC_FAILED)
 * because one of its batches still in flight has failed since. That batch
 * is found among the instance's own (waiting for them alone: every launch
 * of a failed executable ends, and the others' batches may be held by the
 * caller), the pipeline stops at it, and b is refused with the stop's
 * message. Should no batch in flight own the failure, b is accepted as the
 * failed batch: the instance can run nothing more either way. */
static sg_status earlier_failure(sg_pipeline *p, uint64_t b, void *data, uint64_t *index,
                                 sg_status st, const char *fn) {
  char cause[SG_ERROR_MESSAGE_BYTES];
  sg__format(cause, sizeof cause, "%s", sg_last_error());
  const unsigned instance = (unsigned)(b % p->depth);
  sg_exec *e = p->slots[instance].inst.exec;
  for (uint64_t j = instance; j < b; j += p->depth) {
    if (j < p->next_report) continue;
    const sg__pipe_batch *q = sg__pipeline_batch(p, j);
    if (!q->launch) continue; /* its launch failed at submit: the pipeline stopped then */
    sg_status got = sg_exec_wait_launch(e, q->launch);
    if (got != SG_OK && got != SG_ERR_EXEC_FAILED) {
      sg__pipeline_stop(p, j, instance, got);
      break;
    }
  }
  if (!p->stopped) {
    sg__pipe_batch *q = sg__pipeline_batch(p, b);
    q->launch = 0;
    q->data = data;
    p->next_batch = b + 1;
    if (index) *index = b;
    sg__fail(st, "%s", cause);
    sg__pipeline_stop(p, b, instance, st);
  }
  /* What has ended is reported now, in order, as when back-pressure finds
   * the failure: the failed batch before the refusal naming it, whenever
   * the batches before it are done (not waited for: see above). */
  sg__pipeline_report_until(p, p->next_batch, 0);
  return sg__pipeline_stopped_error(p, fn);
}

static sg_status submit(sg_pipeline *p, const sg_pipeline_batch *batch, uint64_t *index,
                        int blocking, const char *fn) {
  sg_status st;
  if (batch && batch->bind_count && !batch->binds)
    return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: bind_count is %zu but binds is NULL", fn,
                    batch->bind_count);
  if (p->stopped) return sg__pipeline_stopped_error(p, fn);

  uint64_t b = p->next_batch, oldest;
  sg__pipe_slot *s = &p->slots[b % p->depth];
  /* Report whatever has finished, so that completions stay timely even
   * when the instance has room; with every place taken, the batch to make
   * room for is the oldest in flight, so this is also the non-blocking
   * check of back-pressure. */
  sg__pipeline_report_until(p, b, 0);
  if (!p->stopped && needs_room(p, b, &oldest)) {
    if (!blocking) {
      p->would_block++;
      return sg__fail(SG_ERR_WOULD_BLOCK,
                      "%s: instance %u still runs batch %" PRIu64 " (%u batch(es) in flight, "
                      "the most per instance); batch %" PRIu64 " needs it",
                      fn, s->inst.index, oldest, p->options.bind ? 1 : p->queue, b);
    }
    p->waits++;
    sg__pipeline_report_until(p, oldest + 1, 1);
  }
  if (p->stopped) return sg__pipeline_stopped_error(p, fn);

  void *data = batch ? batch->user_data : NULL;
  if (batch && batch->bind_count) {
    char context[96];
    sg__format(context, sizeof context, "%s: batch %" PRIu64, fn, b);
    if ((st = sg__pipeline_apply_binds(s->inst.exec, batch->binds, batch->bind_count, context)))
      return st == SG_ERR_EXEC_FAILED ? earlier_failure(p, b, data, index, st, fn) : st;
  }
  if (p->options.bind) {
    atomic_store_explicit(&p->in_callback, 1, memory_order_relaxed);
    int rc = p->options.bind(&s->inst, b, data, p->options.user_data);
    atomic_store_explicit(&p->in_callback, 0, memory_order_relaxed);
    if (rc)
      return sg__fail(SG_ERR_CALLBACK, "%s: the bind callback returned %d for batch %" PRIu64
                      " (instance %u)", fn, rc, b, s->inst.index);
  }

  sg__exec_label_next(s->inst.exec, b); /* its trace calls the launch "batch b" */
  st = sg_exec_launch(s->inst.exec, NULL);
  if (st == SG_ERR_EXEC_FAILED) return earlier_failure(p, b, data, index, st, fn);
  /* Accepted either way: a batch whose launch failed is a failed batch,
   * reported in its turn like any other. */
  sg__pipe_batch *q = sg__pipeline_batch(p, b);
  q->launch = st ? 0 : sg__exec_launch_count(s->inst.exec);
  q->data = data;
  q->range = sg__nvtx_active() ? sg__nvtx_start(SG__NVTX_BATCH, "batch %" PRIu64 " (instance %u)",
                                               b, s->inst.index)
                               : 0;
  p->next_batch = b + 1;
  if (index) *index = b;
  if (st) {
    sg__pipeline_stop(p, b, s->inst.index, st);
    return sg__pipeline_stopped_error(p, fn);
  }
  return SG_OK;
}

sg_status sg_pipeline_submit(sg_pipeline *pipeline, const sg_pipeline_batch *batch,
                             uint64_t *index) {
  sg_status st = sg__pipeline_enter(pipeline, __func__);
  if (st) return st;
  st = submit(pipeline, batch, index, 1, __func__);
  sg__pipeline_leave(pipeline);
  return st;
}

sg_status sg_pipeline_try_submit(sg_pipeline *pipeline, const sg_pipeline_batch *batch,
                                 uint64_t *index) {
  sg_status st = sg__pipeline_enter(pipeline, __func__);
  if (st) return st;
  st = submit(pipeline, batch, index, 0, __func__);
  sg__pipeline_leave(pipeline);
  return st;
}
