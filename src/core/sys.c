/* Allocation and pthread wrappers (see sys.h). */
#define _POSIX_C_SOURCE 200809L
#include "core/sys.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static atomic_long live_allocations;

long sg_live_allocations(void) { return atomic_load(&live_allocations); }

void *sg__malloc_at(size_t bytes, sg__site site) {
  if (sg__fault_hit_at(SG_FAULT_ALLOC, site)) return NULL;
  void *p = malloc(bytes ? bytes : 1);
  if (p) atomic_fetch_add(&live_allocations, 1);
  return p;
}

void *sg__calloc_at(size_t count, size_t size, sg__site site) {
  if (sg__fault_hit_at(SG_FAULT_ALLOC, site)) return NULL;
  void *p = calloc(count ? count : 1, size ? size : 1);
  if (p) atomic_fetch_add(&live_allocations, 1);
  return p;
}

void *sg__realloc_at(void *ptr, size_t bytes, sg__site site) {
  if (sg__fault_hit_at(SG_FAULT_ALLOC, site)) return NULL;
  void *p = realloc(ptr, bytes ? bytes : 1);
  if (p && !ptr) atomic_fetch_add(&live_allocations, 1);
  return p;
}

void *sg__realloc_array_at(void *ptr, size_t count, size_t size, sg__site site) {
  if (size && count > SIZE_MAX / size) return NULL;
  return sg__realloc_at(ptr, count * size, site);
}

void *sg__aligned_alloc_at(size_t alignment, size_t bytes, sg__site site) {
  if (sg__fault_hit_at(SG_FAULT_ALLOC, site)) return NULL;
  void *p = NULL;
  if (posix_memalign(&p, alignment, bytes ? bytes : 1) != 0) return NULL;
  atomic_fetch_add(&live_allocations, 1);
  return p;
}

void sg__free(void *ptr) {
  if (!ptr) return;
  atomic_fetch_sub(&live_allocations, 1);
  free(ptr);
}

char *sg__strdup_at(const char *text, sg__site site) {
  size_t n = strlen(text) + 1;
  char *copy = sg__malloc_at(n, site);
  if (copy) memcpy(copy, text, n);
  return copy;
}

int sg__mutex_init_at(pthread_mutex_t *mutex, sg__site site) {
  if (sg__fault_hit_at(SG_FAULT_SYSTEM, site)) return EAGAIN;
  return pthread_mutex_init(mutex, NULL);
}

int sg__cond_init_at(pthread_cond_t *cond, sg__site site) {
  if (sg__fault_hit_at(SG_FAULT_SYSTEM, site)) return EAGAIN;
  pthread_condattr_t attr;
  int rc = pthread_condattr_init(&attr);
  if (rc) return rc;
  rc = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
  if (!rc) rc = pthread_cond_init(cond, &attr);
  pthread_condattr_destroy(&attr);
  return rc;
}

int sg__thread_create_at(pthread_t *thread, void *(*fn)(void *), void *arg, sg__site site) {
  if (sg__fault_hit_at(SG_FAULT_SYSTEM, site)) return EAGAIN;
  return pthread_create(thread, NULL, fn, arg);
}

void sg__mutex_lock(pthread_mutex_t *mutex) { pthread_mutex_lock(mutex); }
void sg__mutex_unlock(pthread_mutex_t *mutex) { pthread_mutex_unlock(mutex); }
void sg__mutex_destroy(pthread_mutex_t *mutex) { pthread_mutex_destroy(mutex); }
void sg__cond_wait(pthread_cond_t *cond, pthread_mutex_t *mutex) { pthread_cond_wait(cond, mutex); }
void sg__cond_signal(pthread_cond_t *cond) { pthread_cond_signal(cond); }
void sg__cond_broadcast(pthread_cond_t *cond) { pthread_cond_broadcast(cond); }
void sg__cond_destroy(pthread_cond_t *cond) { pthread_cond_destroy(cond); }
void sg__thread_join(pthread_t thread) { pthread_join(thread, NULL); }
void sg__thread_detach(pthread_t thread) { pthread_detach(thread); }

int sg__cond_timedwait_ns(pthread_cond_t *cond, pthread_mutex_t *mutex, uint64_t timeout_ns) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  uint64_t ns = (uint64_t)ts.tv_nsec + timeout_ns % 1000000000u;
  ts.tv_sec += (time_t)(timeout_ns / 1000000000u + ns / 1000000000u);
  ts.tv_nsec = (long)(ns % 1000000000u);
  return pthread_cond_timedwait(cond, mutex, &ts);
}

uint64_t sg__now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

unsigned sg__cpu_count(void) {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? (unsigned)n : 1u;
}
