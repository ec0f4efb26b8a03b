/* Internal: the pipeline object, shared by its creation, submission and
 * completion files.
 *
 * Batch b always runs on instance b % depth, so the instance a batch needs is
 * known before it is submitted, and completions can be reported in batch
 * order by waiting on the instances in that same rotation. Up to `queue`
 * batches are in flight per instance: each is one launch of the instance's
 * executable, and the executable numbers its launches, so a batch waits for
 * and is attributed exactly its own launch (sg_exec_wait_launch), and an
 * instance's failure belongs to exactly one batch. */
#ifndef SG_PIPELINE_PIPELINE_INTERNAL_H
#define SG_PIPELINE_PIPELINE_INTERNAL_H

#include <stdatomic.h>
#include <stdint.h>

#include "core/error.h"
#include "core/in_use.h"
#include "streamgraph/pipeline.h"

/* A batch in flight: submitted, not yet reported. */
typedef struct sg__pipe_batch {
  uint64_t launch;           /* its launch of the instance's executable; 0 when the launch
                                itself failed (the failure is recorded at submit) */
  void *data;                /* its user data */
  uint64_t range;            /* its NVTX range (submit to report), or 0 */
} sg__pipe_batch;

typedef struct sg__pipe_slot {
  sg_pipeline_instance inst;
  int set_up;                /* setup succeeded: teardown is owed */
  sg__pipe_batch *inflight;  /* `queue` entries: batch b at (b / depth) % queue */
} sg__pipe_slot;

struct sg_pipeline {
  sg_pipeline_options options; /* as resolved: depth >= 1, queue >= 1, exec.max_streams > 0 */
  unsigned depth;
  unsigned queue;              /* batches in flight per instance */
  sg__pipe_slot *slots;        /* depth of them */
  uint64_t next_batch;         /* index the next accepted batch gets */
  uint64_t next_report;        /* oldest batch not yet reported */
  atomic_int in_callback;      /* a bind or on_complete callback is running; read by any
                                  thread entering a call (sg__pipeline_enter) */
  sg__in_use in_use;           /* public calls inside (core/in_use.h) */
  uint64_t waits;
  uint64_t would_block;
  int dump;                    /* SG_TRACE_DIR: write the pipeline's trace when destroyed */

  /* The first failing batch in batch order. A launch error is known at
   * submit, an execution error only when its batch is reached in order, so
   * failed_batch can move to an earlier batch until that one is reported. */
  int stopped;
  uint64_t failed_batch;
  sg_status fail_status;
  char fail_message[SG_ERROR_MESSAGE_BYTES];
};

/* Where batch b is kept while in flight. */
sg__pipe_batch *sg__pipeline_batch(const sg_pipeline *p, uint64_t b);

/* Records that `batch` (on `instance`) failed with `status`; the cause is
 * this thread's current message. Keeps the earliest failing batch. */
void sg__pipeline_stop(sg_pipeline *p, uint64_t batch, unsigned instance, sg_status status);

/* Reports, in order, the batches before `end` (capped at the batches
 * submitted). Blocking: waits for each; otherwise stops at the first batch
 * still running. Returns 1 when every batch before `end` is reported. */
int sg__pipeline_report_until(sg_pipeline *p, uint64_t end, int blocking);

/* SG_ERR_STOPPED with a message naming the failing batch, prefixed by fn. */
sg_status sg__pipeline_stopped_error(const sg_pipeline *p, const char *fn);

/* Common entry of the calls that change the pipeline: a live handle, not
 * called from one of its own callbacks (bind, on_complete: they run inside
 * a pipeline call) nor from a host callback of one of its instances (which
 * the call could wait for), not in use by another thread. Undone by
 * sg__pipeline_leave. The shared pair is for calls that only read. */
sg_status sg__pipeline_enter(sg_pipeline *p, const char *fn);
void sg__pipeline_leave(sg_pipeline *p);
sg_status sg__pipeline_enter_shared(const sg_pipeline *p, const char *fn);
void sg__pipeline_leave_shared(const sg_pipeline *p);

/* SG_TRACE_DIR: writes the pipeline's trace and its graph's DOT files
 * (pipeline_trace.c); errors are ignored. */
void sg__pipeline_dump(sg_pipeline *p);

/* Applies binds to an idle executable: validates them all first, then one
 * sg_exec_set_* per bound node. Messages start with `context`
 * ("sg_pipeline_submit: batch 4"), then ", bind 2: ...". */
sg_status sg__pipeline_apply_binds(sg_exec *exec, const sg_pipeline_bind *binds, size_t count,
                                   const char *context);

#endif
