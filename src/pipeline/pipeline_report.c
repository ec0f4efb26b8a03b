/* Pipelines: finding out that batches are done and reporting them, in batch
 * order, exactly once; stopping on the first failure. */
#include <inttypes.h>

#include "core/nvtx.h"
#include "pipeline/pipeline_internal.h"

void sg__pipeline_stop(sg_pipeline *p, uint64_t batch, unsigned instance, sg_status status) {
  if (p->stopped && p->failed_batch <= batch) return;
  char cause[SG_ERROR_MESSAGE_BYTES];
  sg__format(cause, sizeof cause, "%s", sg_last_error());
  p->stopped = 1;
  p->failed_batch = batch;
  p->fail_status = status;
  sg__format(p->fail_message, sizeof p->fail_message, "batch %" PRIu64 " (instance %u) failed: %s",
             batch, instance, cause);
}

sg_status sg__pipeline_stopped_error(const sg_pipeline *p, const char *fn) {
  return sg__fail(SG_ERR_STOPPED, "%s: the pipeline has stopped: %s (%s)", fn, p->fail_message,
                  sg_status_name(p->fail_status));
}

/* The status batch `b` is reported with, given the instance's answer `st`
 * (its message is this thread's). Sets the thread's message to match. */
static sg_status batch_status(sg_pipeline *p, uint64_t b, unsigned instance, sg_status st) {
  /* A batch before the first known failure reports what its instance said;
   * if that is a failure, it becomes the first failure. */
  if (!p->stopped || b < p->failed_batch) {
    if (st == SG_OK) return SG_OK;
    sg__pipeline_stop(p, b, instance, st);
  }
  if (b == p->failed_batch) return sg__fail(p->fail_status, "%s", p->fail_message);
  return sg__fail(SG_ERR_STOPPED,
                  "batch %" PRIu64 " was not completed: the pipeline stopped at batch %" PRIu64,
                  b, p->failed_batch);
}

int sg__pipeline_report_until(sg_pipeline *p, uint64_t end, int blocking) {
  if (end > p->next_batch) end = p->next_batch;
  while (p->next_report < end) {
    uint64_t b = p->next_report;
    sg__pipe_slot *s = &p->slots[b % p->depth];
    const sg__pipe_batch *q = sg__pipeline_batch(p, b);
    /* Even a batch that will be reported as stopped is waited for: its
     * work may still write the caller's buffers. A batch waits for its own
     * launch only; one whose launch failed half-way, for whatever of it
     * was enqueued (everything the instance has). */
    sg_exec *e = s->inst.exec;
    sg_status st = q->launch ? (blocking ? sg_exec_wait_launch(e, q->launch)
                                         : sg_exec_query_launch(e, q->launch))
                             : (blocking ? sg_exec_wait(e) : sg_exec_query(e));
    if (st == SG_NOT_READY) return 0;
    st = batch_status(p, b, s->inst.index, st);
    sg__nvtx_end(q->range);
    sg__pipeline_batch(p, b)->range = 0;
    p->next_report = b + 1;
    if (p->options.on_complete) {
      atomic_store_explicit(&p->in_callback, 1, memory_order_relaxed);
      p->options.on_complete(b, st, q->data, p->options.user_data);
      atomic_store_explicit(&p->in_callback, 0, memory_order_relaxed);
    }
  }
  return 1;
}

sg_status sg_pipeline_poll(sg_pipeline *pipeline) {
  sg_status st = sg__pipeline_enter(pipeline, __func__);
  if (st) return st;
  sg__pipeline_report_until(pipeline, pipeline->next_batch, 0);
  st = pipeline->stopped ? sg__pipeline_stopped_error(pipeline, __func__) : SG_OK;
  sg__pipeline_leave(pipeline);
  return st;
}

static sg_status wait_for(sg_pipeline *p, uint64_t index, const char *fn) {
  if (index >= p->next_batch)
    return sg__fail(SG_ERR_INVALID_ARGUMENT,
                    "%s: batch %" PRIu64 " has not been submitted (%" PRIu64 " so far)", fn,
                    index, p->next_batch);
  sg__pipeline_report_until(p, index + 1, 1);
  if (!p->stopped || index < p->failed_batch) return SG_OK;
  if (index == p->failed_batch) return sg__fail(p->fail_status, "%s: %s", fn, p->fail_message);
  return sg__fail(SG_ERR_STOPPED,
                  "%s: batch %" PRIu64 " was not completed: the pipeline stopped at batch %" PRIu64
                  " (%s)", fn, index, p->failed_batch, p->fail_message);
}

sg_status sg_pipeline_wait(sg_pipeline *pipeline, uint64_t index) {
  sg_status st = sg__pipeline_enter(pipeline, __func__);
  if (st) return st;
  st = wait_for(pipeline, index, __func__);
  sg__pipeline_leave(pipeline);
  return st;
}

sg_status sg_pipeline_drain(sg_pipeline *pipeline) {
  sg_status st = sg__pipeline_enter(pipeline, __func__);
  if (st) return st;
  sg__pipeline_report_until(pipeline, pipeline->next_batch, 1);
  st = pipeline->stopped ? sg__pipeline_stopped_error(pipeline, __func__) : SG_OK;
  sg__pipeline_leave(pipeline);
  return st;
}
