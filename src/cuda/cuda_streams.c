/* The streams and events an executable owns: created once, at creation,
 * and reused by every launch (streams mode) or by every build (graph mode:
 * the capture build replays the schedule on them, and streams[0] is where
 * stream functions are captured and graphs uploaded and launched). The
 * explicit build needs none of the schedule's streams and events (its edges
 * are the graph): it gets streams[0] only, so that creating it costs what
 * a hand-built graph costs (a stream is about 5 us to create). Launches end
 * with marks of their own (launch_marks.c), made on first use.
 *
 * Streams are non-blocking, so the legacy default stream never orders them
 * implicitly: ordering with a caller's stream is always explicit (fork and
 * join events), and a capture never involves stream 0. Events that only
 * order work are created without timing, which makes record and wait
 * cheaper; the events that time traced launches are the tracer's
 * (cuda_trace.c).
 *
 * Devices: each planned stream is made on its nodes' device, and each event
 * on the device of the stream that records it (cudaEventRecord needs both
 * on one device; a wait may be on any). Launches start and end on `home`,
 * on the executable's device (cuda_exec.h). */
#include "core/sys.h"
#include "cuda/cuda_call.h"
#include "cuda/cuda_exec.h"

static void destroy_events(cudaEvent_t *events, uint32_t count) {
  if (!events) return;
  for (uint32_t i = 0; i < count; i++)
    if (events[i]) cudaEventDestroy(events[i]);
}

void sg__cuda_streams_free(sg__cuda_state *b) {
  const sg__schedule *s = b->s;
  destroy_events(b->events, s->event_count);
  destroy_events(b->joins, b->stream_count);
  destroy_events(&b->fork, 1);
  destroy_events(&b->start, 1);
  if (b->streams)
    for (uint32_t i = 0; i < b->stream_count; i++)
      if (b->streams[i]) cudaStreamDestroy(b->streams[i]);
  sg__free(b->events);
  sg__free(b->joins);
  sg__free(b->streams);
  sg__free(b->node_stream);
  b->events = b->joins = NULL;
  b->fork = b->start = NULL;
  b->streams = b->node_stream = NULL;
  b->home = NULL;
}

cudaStream_t sg__cuda_device_stream(const sg__cuda_state *b, int device) {
  if (!b->dev.stream) return b->streams[0];
  return b->dev.stream[sg__cuda_device_index(&b->dev, device)];
}

static cudaError_t make_events(cudaEvent_t *events, uint32_t count, unsigned flags) {
  for (uint32_t i = 0; i < count; i++) {
    cudaError_t err = SG_CUDA(cudaEventCreateWithFlags(&events[i], flags));
    if (err != cudaSuccess) {
      events[i] = NULL;
      return err;
    }
  }
  return cudaSuccess;
}

sg_status sg__cuda_streams_make_one(sg__cuda_state *b, const char *fn) {
  b->stream_count = 1;
  b->streams = sg__calloc(1, sizeof *b->streams);
  b->joins = sg__calloc(1, sizeof *b->joins);
  if (!b->streams || !b->joins) {
    sg__cuda_streams_free(b);
    return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
  }
  cudaError_t err = SG_CUDA(cudaStreamCreateWithFlags(&b->streams[0], cudaStreamNonBlocking));
  if (err != cudaSuccess) {
    b->streams[0] = NULL;
    sg__cuda_streams_free(b);
    return sg__cuda_fail(err, "cudaStreamCreateWithFlags", fn);
  }
  b->home = b->streams[0];
  b->home_index = 0;
  return SG_OK;
}

/* One event on `device`. */
static cudaError_t make_event_on(cudaEvent_t *event, int device, int *current, unsigned flags) {
  cudaError_t err = sg__cuda_switch(current, device);
  return err == cudaSuccess ? make_events(event, 1, flags) : err;
}

/* The device of planned stream k: its first node's (the executable's for
 * the one stream of an empty schedule). */
static int stream_device(const sg__cuda_state *b, uint32_t k) {
  const sg__schedule *s = b->s;
  if (k >= s->stream_count) return b->device;
  return b->dev.node_device[s->stream_nodes[s->stream_start[k]]];
}

/* Streams, each on its device, and home. */
static cudaError_t make_streams(sg__cuda_state *b, int *current, const char **call) {
  cudaError_t err = cudaSuccess;
  b->home_index = UINT32_MAX;
  for (uint32_t i = 0; i < b->stream_count && err == cudaSuccess; i++) {
    int device = stream_device(b, i);
    *call = "cudaSetDevice";
    if ((err = sg__cuda_switch(current, device)) != cudaSuccess) break;
    *call = "cudaStreamCreateWithFlags";
    err = SG_CUDA(cudaStreamCreateWithFlags(&b->streams[i], cudaStreamNonBlocking));
    if (err != cudaSuccess) b->streams[i] = NULL;
    if (device == b->device && b->home_index == UINT32_MAX) b->home_index = i;
  }
  /* No node on the executable's device: its stream of `dev` is home (it
   * exists, since then the nodes are on other devices). */
  b->home = b->home_index != UINT32_MAX ? b->streams[b->home_index]
                                        : sg__cuda_device_stream(b, b->device);
  return err;
}

/* Every event on the device of the stream that records it. */
static cudaError_t make_all_events(sg__cuda_state *b, int *current) {
  const sg__schedule *s = b->s;
  const unsigned sync = cudaEventDisableTiming;
  cudaError_t err = cudaSuccess;
  for (uint32_t e = 0; e < s->event_count && err == cudaSuccess; e++)
    err = make_event_on(&b->events[e], b->dev.node_device[s->event_node[e]], current, sync);
  for (uint32_t i = 0; i < b->stream_count && err == cudaSuccess; i++)
    if (i != b->home_index) err = make_event_on(&b->joins[i], stream_device(b, i), current, sync);
  if (err == cudaSuccess) err = make_event_on(&b->fork, b->device, current, sync);
  if (err == cudaSuccess) err = make_event_on(&b->start, b->device, current, sync);
  return err;
}

sg_status sg__cuda_streams_make(sg__cuda_state *b, const char *fn) {
  const sg__schedule *s = b->s;
  b->stream_count = s->stream_count ? s->stream_count : 1;
  size_t nodes = s->node_count ? s->node_count : 1;
  b->streams = sg__calloc(b->stream_count, sizeof *b->streams);
  b->joins = sg__calloc(b->stream_count, sizeof *b->joins);
  b->node_stream = sg__calloc(nodes, sizeof *b->node_stream);
  b->events = sg__calloc(s->event_count ? s->event_count : 1, sizeof *b->events);
  if (!b->streams || !b->joins || !b->node_stream || !b->events) {
    sg__cuda_streams_free(b);
    return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
  }

  int current;
  const char *call = "cudaGetDevice";
  cudaError_t err = SG_CUDA(cudaGetDevice(&current));
  const int restore = current;
  if (err == cudaSuccess) err = make_streams(b, &current, &call);
  if (err == cudaSuccess) {
    call = "cudaEventCreateWithFlags";
    err = make_all_events(b, &current);
  }
  if (current != restore) cudaSetDevice(restore);
  if (err != cudaSuccess) {
    sg__cuda_streams_free(b);
    return sg__cuda_fail(err, call, fn);
  }
  for (uint32_t n = 0; n < s->node_count; n++) b->node_stream[n] = b->streams[s->stream_of[n]];
  return SG_OK;
}
