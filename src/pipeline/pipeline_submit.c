/* Pipelines: accepting a batch. Back-pressure (wait for, or refuse on, the
 * instance the batch needs), binding it, launching it. */
#include <inttypes.h>

#include "core/nvtx.h"
#include "exec/exec.h"
#include "pipeline/pipeline_internal.h"

static sg_status submit(sg_pipeline *p, const sg_pipeline_batch *batch, uint64_t *index,
                        int blocking, const char *fn) {
  sg_status st;
  if (batch && batch->bind_count && !batch->binds)
    return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: bind_count is %zu but binds is NULL", fn,
                    batch->bind_count);
  if (p->stopped) return sg__pipeline_stopped_error(p, fn);

  uint64_t b = p->next_batch;
  sg__pipe_slot *s = &p->slots[b % p->depth];
  /* Report whatever has finished, so that completions stay timely even
   * when the instance is free; with every instance busy, the instance this
   * batch needs holds the oldest batch in flight, so this is also the
   * non-blocking check of back-pressure. */
  sg__pipeline_report_until(p, b, 0);
  if (s->busy && !p->stopped) {
    if (!blocking) {
      p->would_block++;
      return sg__fail(SG_ERR_WOULD_BLOCK,
                      "%s: instance %u still runs batch %" PRIu64 "; batch %" PRIu64 " needs it",
                      fn, s->inst.index, s->batch, b);
    }
    p->waits++;
    sg__pipeline_report_until(p, s->batch + 1, 1);
  }
  if (p->stopped) return sg__pipeline_stopped_error(p, fn);

  void *data = batch ? batch->user_data : NULL;
  if (batch && batch->bind_count) {
    char context[96];
    sg__format(context, sizeof context, "%s: batch %" PRIu64, fn, b);
    if ((st = sg__pipeline_apply_binds(s->inst.exec, batch->binds, batch->bind_count, context)))
      return st;
  }
  if (p->options.bind) {
    p->in_callback = 1;
    int rc = p->options.bind(&s->inst, b, data, p->options.user_data);
    p->in_callback = 0;
    if (rc)
      return sg__fail(SG_ERR_CALLBACK, "%s: the bind callback returned %d for batch %" PRIu64
                      " (instance %u)", fn, rc, b, s->inst.index);
  }

  sg__exec_label_next(s->inst.exec, b); /* its trace calls the launch "batch b" */
  st = sg_exec_launch(s->inst.exec, NULL);
  /* Accepted either way: a batch whose launch failed is a failed batch,
   * reported in its turn like any other. */
  s->busy = 1;
  s->batch = b;
  s->batch_data = data;
  s->range = sg__nvtx_active() ? sg__nvtx_start(SG__NVTX_BATCH, "batch %" PRIu64 " (instance %u)",
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
