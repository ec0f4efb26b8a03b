/* The copy threads of a pool (workers.h). One lock guards the queue and the
 * jobs' counters; it is held only to claim or finish a part, never while
 * copying. */
#define _POSIX_C_SOURCE 200809L
#include "staging/workers.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__)
#include <emmintrin.h>
#endif

#include "core/checked.h"
#include "core/error.h"
#include "core/nvtx.h"
#include "core/sys.h"
#include "staging/stage_flags.h"
#include "staging/tuning.h"

/* Below this a part costs more to hand over than to copy. */
#define MIN_PART_BYTES (64u * 1024u)
/* Parts at least this large skip the cache (see copy_part). */
#define STREAM_MIN_BYTES (16u * 1024u)

#if defined(__x86_64__)
/* memcpy with non-temporal stores. A chunk's destination is never read
 * again by this CPU soon (the DMA engine reads a filled slot from memory; a
 * drained destination is megabytes the caches would not keep anyway), and
 * ordinary stores first read each destination line (read-for-ownership):
 * a third more memory traffic, which is what bounds these copies. glibc's
 * memcpy streams only above a threshold tied to the cache size, which the
 * parts of a 4 MiB chunk split over 8 threads stay under. The closing
 * sfence makes the stores visible to the device before the part is
 * reported done. */
static void copy_stream(char *d, const char *s, size_t n) {
  size_t head = (16u - ((uintptr_t)d & 15u)) & 15u;
  if (head > n) head = n;
  memcpy(d, s, head);
  d += head;
  s += head;
  n -= head;
  for (; n >= 64; n -= 64, d += 64, s += 64) {
    __m128i a = _mm_loadu_si128((const __m128i *)(const void *)s);
    __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(s + 16));
    __m128i c = _mm_loadu_si128((const __m128i *)(const void *)(s + 32));
    __m128i e = _mm_loadu_si128((const __m128i *)(const void *)(s + 48));
    _mm_stream_si128((__m128i *)(void *)d, a);
    _mm_stream_si128((__m128i *)(void *)(d + 16), b);
    _mm_stream_si128((__m128i *)(void *)(d + 32), c);
    _mm_stream_si128((__m128i *)(void *)(d + 48), e);
  }
  memcpy(d, s, n);
  _mm_sfence();
}
#define SG__HAVE_STREAM_COPY 1
#else
#define SG__HAVE_STREAM_COPY 0
#endif

static void copy_part(const sg__workers *w, const sg__copy_job *job, char *d, const char *s,
                      size_t n) {
#if SG__HAVE_STREAM_COPY
  int streaming = w->streaming < 0 ? job->nontemporal : w->streaming;
  if (streaming && n >= STREAM_MIN_BYTES) {
    copy_stream(d, s, n);
    return;
  }
#endif
  memcpy(d, s, n);
#if defined(__x86_64__)
  /* A signalled part's stores must reach memory before the flag: memcpy
   * may use non-temporal stores for large copies. */
  if (job->signal) _mm_sfence();
#endif
}

sg_status sg__workers_init(sg__workers *w, unsigned capacity, const char *where) {
  memset(w, 0, sizeof *w);
  w->capacity = capacity;
  const char *env = getenv("SG_STAGING_NONTEMPORAL");
  w->streaming = !SG__HAVE_STREAM_COPY ? 0 : !env ? -1 : strcmp(env, "0") != 0;
  if (sg__mutex_init(&w->lock))
    return sg__fail(SG_ERR_SYSTEM, "%s: cannot create a mutex for the copy threads", where);
  if (sg__cond_init(&w->work)) {
    sg__mutex_destroy(&w->lock);
    return sg__fail(SG_ERR_SYSTEM, "%s: cannot create a condition for the copy threads", where);
  }
  if (sg__cond_init(&w->done)) {
    sg__cond_destroy(&w->work);
    sg__mutex_destroy(&w->lock);
    return sg__fail(SG_ERR_SYSTEM, "%s: cannot create a condition for the copy threads", where);
  }
  return SG_OK;
}

/* Unlinks `job` from the queue (lock held); it has no unclaimed part left. */
static void unqueue(sg__workers *w, sg__copy_job *job) {
  sg__copy_job **link = &w->head, *prev = NULL;
  while (*link && *link != job) {
    prev = *link;
    link = &(*link)->next;
  }
  if (!*link) return;
  *link = job->next;
  if (w->tail == job) w->tail = prev;
  job->next = NULL;
  job->queued = 0;
}

/* Claims the next part of `job` (lock held): sets [*dst, *src, *n). */
static void claim(sg__workers *w, sg__copy_job *job, char **dst, const char **src, size_t *n) {
  unsigned p = job->claimed++;
  size_t off = (size_t)p * job->part_bytes;
  *dst = job->dst + off;
  *src = job->src + off;
  *n = p + 1 == job->parts ? job->bytes - off : job->part_bytes;
  if (job->claimed == job->parts) unqueue(w, job);
}

/* Records a copied part (lock held). */
static void finish(sg__workers *w, sg__copy_job *job) {
  if (++job->finished == job->parts) {
    /* Every other part's thread fenced its stores and then took this lock:
     * they are visible before the flag. */
    if (job->signal) sg__flag_raise(job->signal, job->signal_value);
    job->busy = 0;
    sg__cond_broadcast(&w->done);
  }
}

/* Claims the next part of `job`, copies it without the lock, records it
 * (lock held on entry and on return). Threads and waiters both do this. */
static void copy_one_part(sg__workers *w, sg__copy_job *job, int copy_thread) {
  char *dst;
  const char *src;
  size_t n;
  claim(w, job, &dst, &src, &n);
  /* Read with the lock: the job's owner set them before submitting. */
  const sg__copy_spans spans = job->spans;
  const uint32_t node = job->node, chunk = job->chunk;
  const int drain = job->drain;
  const char *label = job->label;
  sg__mutex_unlock(&w->lock);
  const int ranges = sg__nvtx_active();
  if (ranges)
    sg__nvtx_push(SG__NVTX_STAGE, "%s %s chunk %u", drain ? "drain" : "fill", label ? label : "",
                  chunk);
  const uint64_t t0 = spans.add ? sg__now_ns() : 0;
  copy_part(w, job, dst, src, n);
  if (spans.add) spans.add(spans.ctx, drain, node, chunk, n, t0, sg__now_ns(), copy_thread);
  if (ranges) sg__nvtx_pop();
  sg__mutex_lock(&w->lock);
  finish(w, job);
}

static void *worker_main(void *arg) {
  sg__workers *w = arg;
  sg__mutex_lock(&w->lock);
  for (;;) {
    while (!w->stopping && !w->head) sg__cond_wait(&w->work, &w->lock);
    if (w->stopping) break;
    sg__copy_job *job = w->head;
    copy_one_part(w, job, 1);
  }
  sg__mutex_unlock(&w->lock);
  return NULL;
}

sg_status sg__workers_ensure(sg__workers *w, unsigned count, const char *where) {
  if (count > w->capacity) count = w->capacity;
  sg__mutex_lock(&w->lock);
  if (!w->threads && w->capacity) {
    w->threads = sg__calloc(w->capacity, sizeof *w->threads);
    if (!w->threads) {
      sg__mutex_unlock(&w->lock);
      return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory for copy threads", where);
    }
  }
  sg_status st = SG_OK;
  while (w->count < count) {
    if (sg__thread_create(&w->threads[w->count], worker_main, w)) {
      st = sg__fail(SG_ERR_SYSTEM, "%s: cannot start copy thread %u", where, w->count);
      break;
    }
    w->count++;
  }
  sg__mutex_unlock(&w->lock);
  return st;
}

unsigned sg__workers_count(sg__workers *w) {
  sg__mutex_lock(&w->lock);
  unsigned n = w->count;
  sg__mutex_unlock(&w->lock);
  return n;
}

void sg__workers_destroy(sg__workers *w) {
  sg__mutex_lock(&w->lock);
  w->stopping = 1;
  sg__cond_broadcast(&w->work);
  sg__mutex_unlock(&w->lock);
  for (unsigned i = 0; i < w->count; i++) sg__thread_join(w->threads[i]);
  sg__free(w->threads);
  sg__cond_destroy(&w->done);
  sg__cond_destroy(&w->work);
  sg__mutex_destroy(&w->lock);
  memset(w, 0, sizeof *w);
}

static void submit(sg__workers *w, sg__copy_job *job, void *dst, const void *src, size_t bytes,
                   unsigned parts, uint32_t *signal, uint32_t value) {
  size_t most = bytes / MIN_PART_BYTES;
  if (parts > most) parts = most ? (unsigned)most : 1u;
  if (parts == 0) parts = 1;
  /* Parts of whole pages, so that two threads never write one cache line
   * and each part starts where the pinned side is page-aligned. */
  size_t part = sg__ceil_div(bytes, parts);
  if (sg__round_up_overflows(part, 4096u, &part) || part == 0) part = bytes ? bytes : 1;
  parts = (unsigned)sg__ceil_div(bytes, part);
  job->dst = dst;
  job->src = src;
  job->bytes = bytes;
  job->part_bytes = part;
  job->parts = parts;
  job->claimed = job->finished = 0;
  job->next = NULL;
  job->signal = signal;
  job->signal_value = value;
  sg__mutex_lock(&w->lock);
  job->busy = 1;
  job->queued = 1;
  if (w->tail) w->tail->next = job; else w->head = job;
  w->tail = job;
  if (parts > 1) sg__cond_broadcast(&w->work); else sg__cond_signal(&w->work);
  sg__mutex_unlock(&w->lock);
}

void sg__copy_submit(sg__workers *w, sg__copy_job *job, void *dst, const void *src, size_t bytes,
                     unsigned parts) {
  submit(w, job, dst, src, bytes, parts, NULL, 0);
}

void sg__copy_submit_signal(sg__workers *w, sg__copy_job *job, void *dst, const void *src,
                            size_t bytes, unsigned parts, uint32_t *signal, uint32_t value) {
  submit(w, job, dst, src, bytes, parts, signal, value);
}

int sg__copy_idle(sg__workers *w, sg__copy_job *job) {
  sg__mutex_lock(&w->lock);
  int idle = !job->busy;
  sg__mutex_unlock(&w->lock);
  return idle;
}

void sg__copy_wait(sg__workers *w, sg__copy_job *job) {
  sg__mutex_lock(&w->lock);
  while (job->busy) {
    if (job->claimed < job->parts) {
      copy_one_part(w, job, 0);
    } else {
      sg__cond_wait(&w->done, &w->lock);
    }
  }
  sg__mutex_unlock(&w->lock);
}
