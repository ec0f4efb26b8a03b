/* Timing the CUDA backend's launches (cuda_trace.h). */
#include <string.h>

#include "core/sys.h"
#include "cuda/cuda_call.h"
#include "cuda/cuda_trace.h"

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

/* Events with timing (the default flags): what cudaEventElapsedTime reads. */
static sg_status make_set(sg__cuda_tracer *t, sg__cuda_trace_set *set, const char *fn) {
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

void sg__cuda_tracer_free(sg__cuda_tracer *t) {
  for (unsigned i = 0; i < SG__CUDA_TRACE_RING; i++) free_set(&t->sets[i], t->node_count);
  if (t->anchor) cudaEventDestroy(t->anchor);
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

/* Reads set `set` back (its launch is done, or waited for here) and
 * commits it; a set whose events cannot be read is dropped. Not fault
 * points beyond the reads themselves: the waits only make sure the launch
 * is over. */
static void read_set(sg__cuda_tracer *t, sg__cuda_trace_set *set) {
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
  unsigned i = (unsigned)(launch % SG__CUDA_TRACE_RING);
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
  *set = s;
  return SG_OK;
}

void sg__cuda_tracer_collect(sg__cuda_tracer *t, cudaStream_t stream) {
  if (!t->trace) return;
  read_through(t, UINT64_MAX);
  /* Every launch so far is over: a new anchor follows them all. */
  if (sg__now_ns() - t->anchor_ns > ANCHOR_MAX_AGE_NS && anchor(t, stream, t->last))
    cudaGetLastError(); /* not renewed: the old anchor's precision is all that is lost */
}

void sg__cuda_tracer_forget(sg__cuda_tracer *t) {
  for (unsigned i = 0; i < SG__CUDA_TRACE_RING; i++) t->sets[i].launch = 0;
}
