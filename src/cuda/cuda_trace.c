/* Timing the CUDA backend's launches (cuda_trace.h). */
#include <stdlib.h>
#include <string.h>

#include "core/sys.h"
#include "cuda/cuda_call.h"
#include "cuda/cuda_trace.h"
#include "exec/trace_stamps.h"

/* An anchor older than this is renewed when the executable is idle: a
 * launch's distance to it is a float of milliseconds, whose resolution
 * falls with its size (60 ns at one second). */
#define ANCHOR_MAX_AGE_NS 200000000ull

static void free_set(sg__cuda_trace_set *set, uint32_t nodes) {
  if (set->start) cudaEventDestroy(set->start);
  for (uint32_t n = 0; set->before && n < nodes; n++)
    if (set->before[n]) cudaEventDestroy(set->before[n]);
  for (uint32_t n = 0; set->after && n < nodes; n++)
    if (set->after[n]) cudaEventDestroy(set->after[n]);
  sg__free(set->before);
  sg__free(set->after);
  memset(set, 0, sizeof *set);
}

/* Events with timing (the default flags): what cudaEventElapsedTime reads.
 * With stamps, only the start event, which marks the launch's end and is
 * never timed. */
static sg_status make_set(sg__cuda_tracer *t, sg__cuda_trace_set *set, const char *fn) {
  if (t->stamps) {
    cudaError_t err = SG_CUDA(cudaEventCreateWithFlags(&set->start, cudaEventDisableTiming));
    if (err == cudaSuccess) return SG_OK;
    set->start = NULL;
    return sg__cuda_fail(err, "cudaEventCreateWithFlags (trace)", fn);
  }
  size_t n = t->node_count ? t->node_count : 1;
  set->before = sg__calloc(n, sizeof *set->before);
  set->after = sg__calloc(n, sizeof *set->after);
  if (!set->before || !set->after) {
    free_set(set, t->node_count);
    return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory for trace events", fn);
  }
  cudaError_t err = SG_CUDA(cudaEventCreate(&set->start));
  if (err != cudaSuccess) set->start = NULL;
  for (uint32_t v = 0; v < t->node_count && err == cudaSuccess; v++) {
    err = SG_CUDA(cudaEventCreate(&set->before[v]));
    if (err != cudaSuccess) {
      set->before[v] = NULL;
      break;
    }
    err = SG_CUDA(cudaEventCreate(&set->after[v]));
    if (err != cudaSuccess) set->after[v] = NULL;
  }
  if (err != cudaSuccess) {
    free_set(set, t->node_count);
    return sg__cuda_fail(err, "cudaEventCreate (trace)", fn);
  }
  return SG_OK;
}

/* Records the anchor on an idle `stream` and notes the host time it
 * completed at: the middle of the record and the end of the wait. The
 * anchor event is the tracer's only when both calls succeed; otherwise it
 * is dropped and the tracer keeps no anchor until the next try. */
static cudaError_t anchor(sg__cuda_tracer *t, cudaStream_t stream, uint64_t last_launch) {
  cudaEvent_t ev;
  cudaError_t err = SG_CUDA(cudaEventCreate(&ev));
  if (err != cudaSuccess) return err;
  uint64_t before = sg__now_ns();
  err = SG_CUDA(cudaEventRecord(ev, stream));
  if (err == cudaSuccess) err = SG_CUDA(cudaEventSynchronize(ev));
  if (err != cudaSuccess) {
    cudaEventDestroy(ev);
    return err;
  }
  if (t->anchor) cudaEventDestroy(t->anchor);
  t->anchor = ev;
  uint64_t after = sg__now_ns();
  t->anchor_ns = before + (after - before) / 2;
  t->anchor_after = last_launch;
  return cudaSuccess;
}

/* The anchor of a stamped tracer: a stamp written by a kernel launched on
 * the idle `stream` (into the slot after the ring's rows), and the host
 * time it ran at: the middle of the launch and the end of the wait. */
static cudaError_t anchor_stamp(sg__cuda_tracer *t, cudaStream_t stream) {
  sg__cuda_stamp_args a;
  struct cudaKernelNodeParams p;
  sg__cuda_stamp_params(t, 0, 0, &a, &p);
  const size_t at = (size_t)SG__CUDA_TRACE_RING * t->stride;
  a.ring = t->ring_dev + at;
  a.mask = 0; /* row 0 of that one slot, whatever the counter says */
  volatile uint64_t *slot = t->ring + at;
  cudaError_t err = cudaSuccess;
  uint64_t before = 0;
  /* The first time, a launch beforehand: the first launch of the kernel in
   * a context may load it, which would widen the window by far. */
  for (int i = t->anchor_ns ? 1 : 0; i < 2 && err == cudaSuccess; i++) {
    *slot = 0;
    before = sg__now_ns();
    err = SG_CUDA(cudaLaunchKernel(p.func, p.gridDim, p.blockDim, p.kernelParams, 0, stream));
    if (err == cudaSuccess) err = SG_CUDA(cudaStreamSynchronize(stream));
  }
  if (err != cudaSuccess) return err;
  uint64_t after = sg__now_ns();
  t->anchor_stamp = *slot;
  t->anchor_ns = before + (after - before) / 2;
  return cudaSuccess;
}

sg_status sg__cuda_tracer_make(sg__cuda_tracer *t, sg__trace *trace, uint32_t node_count,
                               cudaStream_t stream, const char *fn) {
  memset(t, 0, sizeof *t);
  t->trace = trace;
  t->node_count = node_count;
  t->scratch = sg__calloc((size_t)2 * (node_count ? node_count : 1), sizeof *t->scratch);
  if (!t->scratch) return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
  sg_status st = make_set(t, &t->sets[0], fn);
  if (st) {
    sg__cuda_tracer_free(t);
    return st;
  }
  t->made = 1;
  cudaError_t err = anchor(t, stream, 0);
  if (err != cudaSuccess) {
    sg__cuda_tracer_free(t);
    return sg__cuda_fail(err, "cudaEventRecord / cudaEventSynchronize (trace anchor)", fn);
  }
  return SG_OK;
}

sg_status sg__cuda_tracer_make_graph(sg__cuda_tracer *t, sg__trace *trace,
                                     const struct sg__schedule *const *schedule, int capture,
                                     cudaStream_t stream, const char *fn) {
  const uint32_t n = (*schedule)->node_count;
  const char *why = NULL, *env = getenv("SG_TRACE_GRAPH_EVENTS");
  const void *kernel = env && strcmp(env, "1") == 0 ? NULL : sg__cuda_stamp_kernel(&why);
  if (!kernel) return sg__cuda_tracer_make(t, trace, n, stream, fn);
  memset(t, 0, sizeof *t);
  t->trace = trace;
  t->node_count = n;
  t->stamps = 1;
  t->capture = capture;
  t->stamp_kernel = kernel;
  t->schedule = schedule;
  /* A row: the first stamp, one per node, the launch's number. */
  if (n > UINT32_MAX - 2u ||
      (size_t)n + 2 > (SIZE_MAX / sizeof(uint64_t) - 1) / SG__CUDA_TRACE_RING)
    return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: too many nodes to trace (%u)", fn, n);
  t->stride = n + 2u;
  const size_t slots = (size_t)SG__CUDA_TRACE_RING * t->stride + 1;
  t->scratch = sg__calloc((size_t)2 * (n ? n : 1), sizeof *t->scratch);
  if (!t->scratch) return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
  const char *call = "cudaHostAlloc (trace stamps, mapped)";
  void *ring = NULL, *dev = NULL, *counter = NULL;
  cudaError_t err = SG_CUDA(
      cudaHostAlloc(&ring, slots * sizeof(uint64_t), cudaHostAllocMapped | cudaHostAllocPortable));
  if (err == cudaSuccess) {
    t->ring = ring;
    memset(ring, 0xff, slots * sizeof(uint64_t)); /* no row holds a launch's number yet */
    call = "cudaHostGetDevicePointer (trace stamps)";
    err = SG_CUDA(cudaHostGetDevicePointer(&dev, ring, 0));
  }
  if (err == cudaSuccess) {
    t->ring_dev = dev;
    call = "cudaMalloc (trace launch counter)";
    err = SG_CUDA(cudaMalloc(&counter, sizeof(uint64_t)));
  }
  if (err == cudaSuccess) {
    t->counter = counter;
    call = "cudaMemsetAsync (trace launch counter)";
    err = SG_CUDA(cudaMemsetAsync(counter, 0, sizeof(uint64_t), stream));
  }
  if (err != cudaSuccess) {
    if (!sg__cuda_sticky(err)) cudaGetLastError();
    sg__cuda_tracer_free(t);
    return sg__cuda_fail(err, call, fn);
  }
  sg_status st = make_set(t, &t->sets[0], fn);
  if (st) {
    sg__cuda_tracer_free(t);
    return st;
  }
  t->made = 1;
  if ((err = anchor_stamp(t, stream)) != cudaSuccess) { /* also waits for the memset */
    if (!sg__cuda_sticky(err)) cudaGetLastError();
    sg__cuda_tracer_free(t);
    return sg__cuda_fail(err, "cudaLaunchKernel / cudaStreamSynchronize (trace anchor stamp)", fn);
  }
  return SG_OK;
}

void sg__cuda_tracer_free(sg__cuda_tracer *t) {
  for (unsigned i = 0; i < SG__CUDA_TRACE_RING; i++) free_set(&t->sets[i], t->node_count);
  if (t->anchor) cudaEventDestroy(t->anchor);
  if (t->ring) cudaFreeHost(t->ring);
  if (t->counter) cudaFree(t->counter);
  sg__free(t->scratch);
  memset(t, 0, sizeof *t);
}

/* Milliseconds from `from` to `to` in nanoseconds (both complete). */
static cudaError_t elapsed_ns(cudaEvent_t from, cudaEvent_t to, uint64_t *ns) {
  float ms = 0;
  cudaError_t err = SG_CUDA(cudaEventElapsedTime(&ms, from, to));
  if (err == cudaSuccess) *ns = ms > 0 ? (uint64_t)((double)ms * 1e6 + 0.5) : 0;
  return err;
}

/* Reads a stamped set back: waits for the launch's end, checks that its
 * row holds that launch, and derives the nodes' times from the stamps
 * (exec/trace_stamps.h): with a captured graph, stream order and the
 * captured event waits bind starts as well as the reduced edges. */
static void read_stamps(sg__cuda_tracer *t, sg__cuda_trace_set *set) {
  const uint64_t launch = set->launch;
  set->launch = 0;
  if (cudaEventSynchronize(set->start) != cudaSuccess) {
    cudaGetLastError(); /* a launch that failed: its times are lost, nothing else */
    return;
  }
  const uint32_t n = t->node_count;
  const volatile uint64_t *row =
      t->ring + (size_t)(set->seq & (SG__CUDA_TRACE_RING - 1u)) * t->stride;
  if (row[t->stride - 1] != set->seq) return; /* its stamps did not all run */
  uint64_t *start = t->scratch, *end = t->scratch + (n ? n : 1);
  const uint64_t t0 = row[0];
  for (uint32_t v = 0; v < n; v++) end[v] = row[1 + v];
  sg__trace_stamps_times(*t->schedule, t->capture, t0, end, start, end);
  /* Relative to the launch's first stamp, which every time is at or after. */
  for (uint32_t v = 0; v < n; v++) {
    start[v] -= t0;
    end[v] -= t0;
  }
  const int64_t from_anchor = (int64_t)(t0 - t->anchor_stamp);
  uint64_t base = from_anchor >= 0 ? t->anchor_ns + (uint64_t)from_anchor
                                   : t->anchor_ns > (uint64_t)-from_anchor
                                         ? t->anchor_ns - (uint64_t)-from_anchor
                                         : 0;
  sg__trace_commit(t->trace, launch, base, start, end);
}

/* Reads set `set` back (its launch is done, or waited for here) and
 * commits it; a set whose events cannot be read is dropped. Not fault
 * points beyond the reads themselves: the waits only make sure the launch
 * is over. */
static void read_set(sg__cuda_tracer *t, sg__cuda_trace_set *set) {
  if (t->stamps) {
    read_stamps(t, set);
    return;
  }
  const uint64_t launch = set->launch;
  set->launch = 0;
  uint32_t n = t->node_count;
  for (uint32_t v = 0; v < n; v++) cudaEventSynchronize(set->after[v]);
  uint64_t *start = t->scratch, *end = t->scratch + (n ? n : 1);
  uint64_t base = 0;
  cudaError_t err;
  if (launch <= t->anchor_after) {
    err = elapsed_ns(set->start, t->anchor, &base);
    base = t->anchor_ns > base ? t->anchor_ns - base : 0;
  } else {
    err = elapsed_ns(t->anchor, set->start, &base);
    base += t->anchor_ns;
  }
  for (uint32_t v = 0; v < n && err == cudaSuccess; v++) {
    err = elapsed_ns(set->start, set->before[v], &start[v]);
    if (err == cudaSuccess) err = elapsed_ns(set->start, set->after[v], &end[v]);
  }
  if (err != cudaSuccess) {
    cudaGetLastError(); /* a launch that failed part-way: its times are lost, nothing else */
    return;
  }
  sg__trace_commit(t->trace, launch, base, start, end);
}

/* Reads back, oldest first, every recorded set of a launch up to `through`. */
static void read_through(sg__cuda_tracer *t, uint64_t through) {
  for (;;) {
    sg__cuda_trace_set *oldest = NULL;
    for (unsigned i = 0; i < t->made; i++)
      if (t->sets[i].launch && t->sets[i].launch <= through &&
          (!oldest || t->sets[i].launch < oldest->launch))
        oldest = &t->sets[i];
    if (!oldest) return;
    read_set(t, oldest);
  }
}

sg_status sg__cuda_tracer_set(sg__cuda_tracer *t, uint64_t launch, sg__cuda_trace_set **set,
                              const char *fn, char *msg, size_t cap) {
  /* By traced launch, not by launch number: with trace_every k the sets
   * still serve 8 traced launches in flight (8k launches), instead of
   * every traced launch waiting for the one before it. */
  unsigned i = (unsigned)(t->given % SG__CUDA_TRACE_RING);
  sg__cuda_trace_set *s = &t->sets[i];
  while (t->made <= i) {
    sg_status st = make_set(t, &t->sets[t->made], fn);
    if (st) {
      sg__format(msg, cap, "%s", sg_last_error());
      return st;
    }
    t->made++;
  }
  if (s->launch) read_through(t, s->launch);
  if (launch > t->last) t->last = launch;
  t->given++;
  *set = s;
  return SG_OK;
}

void sg__cuda_tracer_collect(sg__cuda_tracer *t, cudaStream_t stream) {
  if (!t->trace) return;
  read_through(t, UINT64_MAX);
  /* Every launch so far is over: a new anchor follows them all. */
  if (sg__now_ns() - t->anchor_ns > ANCHOR_MAX_AGE_NS &&
      (t->stamps ? anchor_stamp(t, stream) : anchor(t, stream, t->last)))
    cudaGetLastError(); /* not renewed: the old anchor's precision is all that is lost */
}

void sg__cuda_tracer_forget(sg__cuda_tracer *t) {
  for (unsigned i = 0; i < SG__CUDA_TRACE_RING; i++) t->sets[i].launch = 0;
}
