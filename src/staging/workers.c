/* The copy threads of a pool (workers.h). One lock guards the queue; a
 * thread takes it to find a job, and to report a job's last part, never
 * while copying. The parts of a job are counted atomically, so that the
 * threads splitting one chunk do not queue on the lock for each part. */
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
  const char *spin = getenv("SG_STAGING_SPIN_US");
  w->spin_ns = spin ? (uint64_t)strtoul(spin, NULL, 10) * 1000u
               : sg__cpu_count() >= SG__WORKER_SPIN_MIN_CPUS ? SG__WORKER_SPIN_NS
                                                              : 0;
  if (w->spin_ns > (uint64_t)100 * 1000 * 1000) w->spin_ns = (uint64_t)100 * 1000 * 1000;
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
  if (!job->queued) return;
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

/* Claims the next part of `job`: its number, which is no part if it is
 * `parts` or more. Under the lock for a queued job; without it only by a
 * thread that holds an unfinished part of the job, which keeps the job busy
 * and so unchanged (its owner submits it again only once every part is
 * copied). */
static unsigned claim_next(sg__copy_job *job) {
  return __atomic_fetch_add(&job->claimed, 1u, __ATOMIC_RELAXED);
}

/* Takes a part of the first job in the queue that has one (lock held):
 * the job, with the part's number in *part, or NULL. A job whose last part
 * is taken leaves the queue. */
static sg__copy_job *take(sg__workers *w, unsigned *part) {
  while (w->head) {
    sg__copy_job *job = w->head;
    const unsigned p = claim_next(job);
    if (p + 1 >= job->parts) unqueue(w, job);
    if (p < job->parts) {
      *part = p;
      return job;
    }
  }
  return NULL;
}

/* Records the last part of `job` copied (lock not held on entry or
 * return). The signal is raised under the lock, together with `busy`
 * cleared: the owner may submit the job again as soon as the device has
 * seen the signal, and must find it idle. Every other part's thread fenced
 * its stores before its count (copy_part, __ATOMIC_RELEASE), so they are
 * visible before the flag. */
static void last_part_done(sg__workers *w, sg__copy_job *job) {
  sg__mutex_lock(&w->lock);
  if (job->signal) sg__flag_raise(job->signal, job->signal_value);
  unqueue(w, job);
  job->busy = 0;
  sg__cond_broadcast(&w->done);
  sg__mutex_unlock(&w->lock);
}

/* Copies part `p` of `job` and every further part this thread can claim
 * (lock not held). The next part is claimed before the current one is
 * counted, while the job cannot change. */
static void copy_parts(sg__workers *w, sg__copy_job *job, unsigned p, int copy_thread) {
  const unsigned parts = job->parts;
  const size_t part_bytes = job->part_bytes, bytes = job->bytes;
  char *const dst = job->dst;
  const char *const src = job->src;
  const sg__copy_spans spans = job->spans;
  const uint32_t node = job->node, chunk = job->chunk;
  const int drain = job->drain;
  const char *label = job->label;
  for (;;) {
    const size_t off = (size_t)p * part_bytes;
    const size_t n = p + 1 == parts ? bytes - off : part_bytes;
    const int ranges = sg__nvtx_active();
    if (ranges)
      sg__nvtx_push(SG__NVTX_STAGE, "%s %s chunk %u", drain ? "drain" : "fill",
                    label ? label : "", chunk);
    const uint64_t t0 = spans.add ? sg__now_ns() : 0;
    copy_part(w, job, dst + off, src + off, n);
    if (spans.add) spans.add(spans.ctx, drain, node, chunk, n, t0, sg__now_ns(), copy_thread);
    if (ranges) sg__nvtx_pop();
    const unsigned next = claim_next(job);
    /* After this count the job may be done and submitted again: nothing of
     * it is read below but through `next`, which keeps it busy if it is a
     * part. */
    if (__atomic_add_fetch(&job->finished, 1u, __ATOMIC_ACQ_REL) == parts) {
      last_part_done(w, job);
      return;
    }
    if (next >= parts) return;
    p = next;
  }
}

/* Waits for a submission after the one `seen` counted (lock held on entry
 * and on return): spins first, without the lock, then sleeps. */
static void idle_wait(sg__workers *w, unsigned long seen) {
  if (w->spin_ns) {
    sg__mutex_unlock(&w->lock);
    const uint64_t start = sg__now_ns();
    while (__atomic_load_n(&w->posted, __ATOMIC_ACQUIRE) == seen &&
           sg__now_ns() - start < w->spin_ns)
      sg__flag_spin();
    sg__mutex_lock(&w->lock);
    if (w->head || w->stopping) return;
  }
  w->sleepers++;
  sg__cond_wait(&w->work, &w->lock);
  w->sleepers--;
}

static void *worker_main(void *arg) {
  sg__workers *w = arg;
  sg__mutex_lock(&w->lock);
  while (!w->stopping) {
    unsigned p;
    sg__copy_job *job = take(w, &p);
    if (job) {
      sg__mutex_unlock(&w->lock);
      copy_parts(w, job, p, 1);
      sg__mutex_lock(&w->lock);
    } else {
      idle_wait(w, w->posted);
    }
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
  __atomic_add_fetch(&w->posted, 1ul, __ATOMIC_RELEASE); /* spinning threads look */
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
  job->next = NULL;
  job->signal = signal;
  job->signal_value = value;
  sg__mutex_lock(&w->lock);
  /* Idle (not busy), so no thread touches the counts. */
  __atomic_store_n(&job->claimed, 0u, __ATOMIC_RELAXED);
  __atomic_store_n(&job->finished, 0u, __ATOMIC_RELAXED);
  job->busy = 1;
  job->queued = 1;
  if (w->tail) w->tail->next = job; else w->head = job;
  w->tail = job;
  __atomic_add_fetch(&w->posted, 1ul, __ATOMIC_RELEASE);
  if (w->sleepers) {
    if (parts > 1) sg__cond_broadcast(&w->work); else sg__cond_signal(&w->work);
  }
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
    /* A queued job's unclaimed parts are claimed under the lock. */
    const unsigned p = job->queued ? claim_next(job) : job->parts;
    if (p + 1 >= job->parts) unqueue(w, job);
    if (p < job->parts) {
      sg__mutex_unlock(&w->lock);
      copy_parts(w, job, p, 0);
      sg__mutex_lock(&w->lock);
    } else {
      sg__cond_wait(&w->done, &w->lock);
    }
  }
  sg__mutex_unlock(&w->lock);
}
