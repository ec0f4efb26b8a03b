/* Streams mode: every launch replays the schedule on the executable's
 * streams.
 *
 *   fork   caller stream --fork--> streams[0]             (when a stream is given)
 *          streams[0] --start--> streams[1..k)            (when k > 1 or tracing)
 *   body   for each node in issue order: wait its events, enqueue it,
 *          record its event                               (cross-stream edges only)
 *   join   streams[1..k) --joins[i]--> streams[0]; record the launch's mark on streams[0];
 *          caller stream waits the mark                  (when a stream is given)
 *
 * streams[0] above stands for `home` (cuda_exec.h): the first planned
 * stream on the executable's device, or a stream of that device of its own
 * when no node runs there; the other streams may be on any device (events
 * tie devices). Home runs every launch from start to its mark (the end of
 * that launch alone: launch_marks.c), so the next launch, which starts on
 * home and fans out from there, begins only after the previous one has
 * fully completed: launches of one executable run in order without any
 * host-side wait. The loop reads the node parameters
 * from the executable's nodes directly (updates change them in place between
 * launches), allocates nothing and takes no lock. It makes a node's device
 * current before enqueueing it, only where the device changes. */
#include <stdio.h>

#include "cuda/cuda_call.h"
#include "cuda/cuda_exec.h"

static const char launch_fn[] = "sg_exec_launch";

/* Why a launch stopped, as the executable's failure (of the launch being
 * made) and this thread's error. */
static sg_status stopped(sg__cuda_state *b, sg_status st, const char *msg) {
  sg__exec_fail_launch(b->exec, b->launches + 1, st, "launch %llu: %s",
                       (unsigned long long)(b->launches + 1), msg);
  return sg__fail(st, "%s", msg);
}

static sg_status cuda_stopped(sg__cuda_state *b, cudaError_t err, const char *call,
                              uint32_t node) {
  char msg[SG_ERROR_MESSAGE_BYTES], where[SG__LABEL_BYTES + 64];
  sg__cuda_format(msg, sizeof msg, err, call,
                  node == UINT32_MAX ? launch_fn : sg__cuda_where(b, launch_fn, node, where));
  return stopped(b, SG_ERR_CUDA, msg);
}

/* The body of a launch; *current is the current device (the executable's
 * at the start; -1 once unknown). */
static sg_status replay(sg__cuda_state *b, cudaStream_t caller, sg__cuda_trace_set *set,
                        int *current) {
  const sg__schedule *s = b->s;
  cudaStream_t home = b->home;
  const uint32_t home_index = b->home_index; /* UINT32_MAX: home is no planned stream */
  const int tracing = set != NULL;
  /* A traced launch starts at its set's start event (timed); it forks the
   * other streams as `start` does otherwise. */
  const cudaEvent_t start = tracing ? set->start : b->start;
  cudaError_t err;

  if (caller) {
    if ((err = SG_CUDA(cudaEventRecord(b->fork, caller))))
      return cuda_stopped(b, err, "cudaEventRecord (fork from the caller's stream)", UINT32_MAX);
    if ((err = SG_CUDA(cudaStreamWaitEvent(home, b->fork, 0))))
      return cuda_stopped(b, err, "cudaStreamWaitEvent (fork)", UINT32_MAX);
  }
  if (b->cond_words) { /* conditions back to their defaults, before any node */
    const char *call;
    if ((err = sg__cuda_cond_reset(b, home, &call))) return cuda_stopped(b, err, call, UINT32_MAX);
  }
  if (b->stream_count > 1 || home_index != 0 || tracing) {
    if ((err = SG_CUDA(cudaEventRecord(start, home))))
      return cuda_stopped(b, err, "cudaEventRecord (start)", UINT32_MAX);
    for (uint32_t i = 0; i < b->stream_count; i++) {
      if (i == home_index) continue;
      if ((err = SG_CUDA(cudaStreamWaitEvent(b->streams[i], start, 0))))
        return cuda_stopped(b, err, "cudaStreamWaitEvent (start)", UINT32_MAX);
    }
  }

  for (uint32_t k = 0; k < s->node_count; k++) {
    const uint32_t n = s->order[k];
    cudaStream_t stream = b->node_stream[n];
    for (uint32_t w = s->wait_start[n]; w < s->wait_start[n + 1]; w++)
      if ((err = SG_CUDA(cudaStreamWaitEvent(stream, b->events[s->wait_event[w]], 0))))
        return cuda_stopped(b, err, "cudaStreamWaitEvent", n);
    if (tracing && (err = SG_CUDA(cudaEventRecord(set->before[n], stream))))
      return cuda_stopped(b, err, "cudaEventRecord (trace)", n);
    if (b->op[n] != SG__OP_NOTHING) {
      /* A kernel launch needs its stream's device current. */
      if ((err = sg__cuda_switch(current, b->dev.node_device[n])))
        return cuda_stopped(b, err, "cudaSetDevice (the node's device)", n);
      char msg[SG_ERROR_MESSAGE_BYTES];
      const sg__node *node = &b->nodes[n];
      sg_status st = b->op[n] == SG__OP_COND ||
                             (b->op[n] == SG__OP_KERNEL &&
                              (node->u.kernel.cond_arg || node->u.kernel.grid_arg))
                         ? sg__cuda_cond_enqueue(b, n, node, stream, launch_fn, msg, sizeof msg)
                         : sg__cuda_enqueue(b, n, node, stream, launch_fn, msg, sizeof msg);
      if (b->op[n] == SG__OP_NCCL) *current = -1; /* NCCL switches devices per call */
      if (st) return stopped(b, st, msg);
    }
    if (tracing && (err = SG_CUDA(cudaEventRecord(set->after[n], stream))))
      return cuda_stopped(b, err, "cudaEventRecord (trace)", n);
    if (s->record_event[n] >= 0 &&
        (err = SG_CUDA(cudaEventRecord(b->events[s->record_event[n]], stream))))
      return cuda_stopped(b, err, "cudaEventRecord", n);
  }

  for (uint32_t i = 0; i < b->stream_count; i++) {
    if (i == home_index) continue;
    if ((err = SG_CUDA(cudaEventRecord(b->joins[i], b->streams[i]))))
      return cuda_stopped(b, err, "cudaEventRecord (join)", UINT32_MAX);
    if ((err = SG_CUDA(cudaStreamWaitEvent(home, b->joins[i], 0))))
      return cuda_stopped(b, err, "cudaStreamWaitEvent (join)", UINT32_MAX);
  }
  /* The launch's end: what waits for this launch alone (launch_marks.c).
   * Its mark is made on the executable's device, home's. */
  const uint64_t launch = b->launches + 1;
  const char *call = "cudaSetDevice (the executable's device)";
  if ((err = sg__cuda_switch(current, b->device)) ||
      (err = sg__cuda_mark_launch(b, home, launch, &call)))
    return cuda_stopped(b, err, call, UINT32_MAX);
  if (caller &&
      (err = SG_CUDA(cudaStreamWaitEvent(caller, b->marks[launch % SG_EXEC_TRACKED_LAUNCHES], 0))))
    return cuda_stopped(b, err, "cudaStreamWaitEvent (join into the caller's stream)", UINT32_MAX);
  return SG_OK;
}

sg_status sg__cuda_streams_launch(sg__cuda_state *b, void *cuda_stream, uint64_t launch) {
  if (b->s->node_count == 0) { /* nothing to order or run: ended at once */
    if (b->tracer.trace) sg__trace_commit(b->tracer.trace, launch, sg__now_ns(), NULL, NULL);
    b->launches = b->finished = launch;
    return SG_OK;
  }
  int previous;
  sg_status st = sg__cuda_enter_exec(b, &previous, launch_fn);
  if (st) return stopped(b, st, sg_last_error());
  sg__cuda_trace_set *set = NULL;
  /* A launch trace_every leaves untimed records no event of the trace. */
  if (b->tracer.trace && sg__trace_sampled(b->tracer.trace, launch)) {
    char msg[SG_ERROR_MESSAGE_BYTES];
    st = sg__cuda_tracer_set(&b->tracer, launch, &set, launch_fn, msg, sizeof msg);
    if (st) {
      sg__cuda_leave(b->device, previous);
      return stopped(b, st, msg);
    }
  }
  /* Until the launch is fully enqueued, some streams may hold work that
   * its mark does not cover: waits then synchronise every stream. */
  b->interrupted = 1;
  int current = b->device;
  st = replay(b, (cudaStream_t)cuda_stream, set, &current);
  if (!st) {
    b->interrupted = 0;
    if (set) sg__cuda_tracer_recorded(set, launch);
    b->launches = launch;
  }
  if (current != b->device) cudaSetDevice(b->device); /* release: the caller's device next */
  sg__cuda_leave(b->device, previous);
  return st;
}
