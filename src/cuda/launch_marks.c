/* Where each launch ends, so that one launch can be waited for while later
 * ones are queued behind it (streamgraph/exec.h, "Queuing ahead").
 *
 * Launches of one executable end in order (streams mode joins every
 * stream into home, cuda_exec.h, before the next launch starts there; CUDA
 * orders launches of one instantiated graph), so "launch L has ended" means
 * "every launch up to L has". Launch L's end is an event, marks[L % R] with
 * R = SG_EXEC_TRACKED_LAUNCHES, made on the executable's device and
 * recorded where the launch ends: home in streams mode, where every stream
 * joins anyway (no extra call); the caller's stream for a graph launched
 * there (recorded anyway, for waits); and home for a graph launched there
 * only once launches are tracked (one event record per launch, which a
 * plain launch loop does not pay). A launch without a mark ends with the
 * next marked one, or with home.
 *
 * The ring is reused: launch L + R takes launch L's mark. A launch older
 * than the last R is waited for through the oldest mark left (a later
 * launch, so it may wait a little longer, never less). */
#include "core/error.h"
#include "core/sys.h"
#include "cuda/cuda_call.h"
#include "cuda/cuda_exec.h"

#define RING SG_EXEC_TRACKED_LAUNCHES

cudaError_t sg__cuda_mark_launch(sg__cuda_state *b, cudaStream_t stream, uint64_t launch,
                                 const char **call) {
  const uint32_t i = (uint32_t)(launch % RING);
  /* A launch captured into a caller's graph has not run and will not run
   * as this launch: an event recorded under capture marks nothing, and a
   * wait on it fails (invalid argument). It is still recorded (in streams
   * mode the caller's stream waits on it: that joins the capture back),
   * but names no launch; waits fall back to a later mark or to the
   * streams. */
  enum cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
  *call = "cudaStreamIsCapturing (end of the launch)";
  cudaError_t err = SG_CUDA(cudaStreamIsCapturing(stream, &capturing));
  if (err != cudaSuccess) {
    b->marked[i] = 0;
    return err;
  }
  if (!b->marks[i]) {
    *call = "cudaEventCreateWithFlags (launch mark)";
    err = SG_CUDA(cudaEventCreateWithFlags(&b->marks[i], cudaEventDisableTiming));
    if (err != cudaSuccess) {
      b->marks[i] = NULL;
      return err;
    }
  }
  *call = "cudaEventRecord (end of the launch)";
  err = SG_CUDA(cudaEventRecord(b->marks[i], stream));
  /* A failed record leaves the slot naming no launch: waits fall back to
   * a later mark or to the streams. */
  b->marked[i] = err == cudaSuccess && capturing == cudaStreamCaptureStatusNone ? launch : 0;
  return err;
}

cudaEvent_t sg__cuda_mark_at_or_after(const sg__cuda_state *b, uint64_t launch,
                                      uint64_t *marked_launch) {
  uint64_t from = launch, oldest = b->launches >= RING ? b->launches - RING + 1 : 1;
  if (from < oldest) from = oldest;
  for (uint64_t l = from; l <= b->launches; l++) {
    const uint32_t i = (uint32_t)(l % RING);
    if (b->marks[i] && b->marked[i] == l) {
      *marked_launch = l;
      return b->marks[i];
    }
  }
  return NULL;
}

void sg__cuda_drain(sg__cuda_state *b) {
  for (uint32_t i = 0; b->streams && i < b->stream_count; i++)
    if (b->streams[i]) cudaStreamSynchronize(b->streams[i]);
  sg__cuda_devices_drain(&b->dev);
  for (uint32_t i = 0; i < RING; i++)
    if (b->marks[i] && b->marked[i]) cudaEventSynchronize(b->marks[i]);
  cudaGetLastError();
}

void sg__cuda_marks_free(sg__cuda_state *b) {
  for (uint32_t i = 0; i < RING; i++) {
    if (b->marks[i]) cudaEventDestroy(b->marks[i]);
    b->marks[i] = NULL;
    b->marked[i] = 0;
  }
  if (b->handover) cudaEventDestroy(b->handover);
  b->handover = NULL;
  b->handover_pending = 0;
}

cudaError_t sg__cuda_marks_make(sg__cuda_state *b, const char **call) {
  *call = "cudaEventCreateWithFlags (launch mark)";
  for (uint32_t i = 0; i < RING; i++) {
    if (b->marks[i]) continue;
    cudaError_t err = SG_CUDA(cudaEventCreateWithFlags(&b->marks[i], cudaEventDisableTiming));
    if (err != cudaSuccess) {
      b->marks[i] = NULL;
      return err;
    }
  }
  *call = "cudaEventCreateWithFlags (handover)";
  cudaError_t err = SG_CUDA(cudaEventCreateWithFlags(&b->handover, cudaEventDisableTiming));
  if (err != cudaSuccess) b->handover = NULL;
  return err;
}

/* The old state's last launch ends at its mark, or (a graph launched
 * unmarked into home) in its home. Home of the new state waits for that
 * on the GPU: every launch of the new state starts in home (streams mode
 * forks from it; a graph launched into home follows it), except a graph
 * launched into a caller's stream, which waits for `handover`, recorded in
 * home after the wait. The wait is enqueued now, so the old state's events
 * may go with it afterwards (a stream wait takes the event's state at the
 * call). */
sg_status sg__cuda_follow(sg__cuda_state *b, const sg__cuda_state *old, const char *fn) {
  if (old->launches <= old->finished && !old->interrupted) return SG_OK; /* all ended */
  int previous;
  sg_status st = sg__cuda_enter_exec(b, &previous, fn);
  if (st) return st;
  const char *call = "cudaEventCreateWithFlags (handover)";
  cudaError_t err = cudaSuccess;
  if (!b->handover &&
      (err = SG_CUDA(cudaEventCreateWithFlags(&b->handover, cudaEventDisableTiming))) !=
          cudaSuccess)
    b->handover = NULL;
  uint64_t at = 0;
  cudaEvent_t end = err == cudaSuccess ? sg__cuda_mark_at_or_after(old, old->launches, &at) : NULL;
  if (err == cudaSuccess && (!end || at != old->launches || old->interrupted)) {
    call = "cudaEventRecord (the old version's end)";
    err = SG_CUDA(cudaEventRecord(b->handover, old->home));
    end = b->handover;
  }
  if (err == cudaSuccess) {
    call = "cudaStreamWaitEvent (after the old version)";
    err = SG_CUDA(cudaStreamWaitEvent(b->home, end, 0));
  }
  if (err == cudaSuccess && b->mode == SG_MODE_GRAPH) {
    call = "cudaEventRecord (handover)";
    err = SG_CUDA(cudaEventRecord(b->handover, b->home));
    b->handover_pending = err == cudaSuccess;
  }
  sg__cuda_leave(b->device, previous);
  return err == cudaSuccess ? SG_OK : sg__cuda_fail(err, call, fn);
}

/* Launches up to `launch` have ended: payloads no later launch can run are
 * freed; once every launch has, staging settles its rings and the traced
 * launches' times are read back. */
static void ended(sg__cuda_state *b, uint64_t launch, const char *fn) {
  if (launch > b->finished) b->finished = launch;
  sg__cuda_work_reap(b, b->finished);
  if (b->finished >= b->launches) {
    b->interrupted = 0;
    sg__staging_settle(b->staging); /* staging: rings of ended copies are back in the pool */
    sg__cuda_collect_trace(b, fn);
  }
}

/* cudaSuccess when done, cudaErrorNotReady while running, else the error. */
static cudaError_t sync_stream(cudaStream_t s, int blocking) {
  return blocking ? SG_CUDA(cudaStreamSynchronize(s)) : SG_CUDA(cudaStreamQuery(s));
}

static cudaError_t sync_event(cudaEvent_t e, int blocking) {
  return blocking ? SG_CUDA(cudaEventSynchronize(e)) : SG_CUDA(cudaEventQuery(e));
}

sg_status sg__cuda_wait_through(sg__cuda_state *b, uint64_t launch, int blocking,
                                const char *fn) {
  if (launch > b->launches) launch = b->launches;
  if (launch <= b->finished && !b->interrupted) {
    ended(b, b->finished, fn);
    return SG_OK;
  }
  /* Streams and events carry their device: no need to make it current,
   * which also keeps a sticky error from failing the wait before it can
   * be recorded on the executable. */
  cudaError_t err = cudaSuccess;
  const char *call = blocking ? "cudaStreamSynchronize" : "cudaStreamQuery";
  uint64_t through = launch;
  if (b->interrupted) {
    /* A launch stopped half-way: some streams hold work no mark covers. */
    for (uint32_t i = 0; i < b->stream_count && err == cudaSuccess; i++)
      err = sync_stream(b->streams[i], blocking);
    for (uint32_t i = 0; b->dev.stream && i < b->dev.count && err == cudaSuccess; i++)
      err = sync_stream(b->dev.stream[i], blocking);
    through = b->launches;
  }
  if (err == cudaSuccess && launch > b->finished) {
    uint64_t at = 0;
    cudaEvent_t mark = sg__cuda_mark_at_or_after(b, launch, &at);
    if (mark) {
      call = blocking ? "cudaEventSynchronize" : "cudaEventQuery";
      err = sync_event(mark, blocking);
      if (at > through) through = at;
    } else {
      /* Graphs launched unmarked into home: it holds them all. */
      err = sync_stream(b->home, blocking);
      through = b->launches;
    }
  }
  if (err == cudaErrorNotReady) {
    cudaGetLastError();
    return SG_NOT_READY;
  }
  if (err != cudaSuccess) {
    /* Sticky errors name no kernel: the failure belongs to the oldest
     * launch not yet seen ended. Everything is drained: nothing more can
     * be learnt per launch. */
    const uint64_t culprit = b->finished + 1;
    char msg[SG_ERROR_MESSAGE_BYTES], where[96];
    sg__format(where, sizeof where, "%s: launch %llu", fn, (unsigned long long)culprit);
    sg__cuda_format(msg, sizeof msg, err, call, where);
    sg__exec_fail_launch(b->exec, culprit, SG_ERR_CUDA, "%s", msg);
    sg__cuda_drain(b);
    through = b->launches;
  }
  ended(b, through, fn);
  return SG_OK;
}
