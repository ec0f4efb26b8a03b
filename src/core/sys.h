/* Internal: the thin wrappers every allocation and thread/mutex/condition
 * call goes through, so that tests can make any one of them fail
 * (streamgraph/testing.h) and count what is still allocated. */
#ifndef SG_CORE_SYS_H
#define SG_CORE_SYS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "streamgraph/testing.h"

/* A fault point: the wrapped call, where it is made. Its name,
 * "<file under src/>:<function>:<call>" ("core/graph.c:append_node:
 * sg__realloc_array"), is what sg_fault_site reports and
 * sg_fault_arm_site matches; it does not change when code elsewhere moves. */
typedef struct sg__site {
  const char *file;
  const char *func;
  const char *call;
} sg__site;
#define SG__SITE(call) ((sg__site){__FILE__, __func__, (call)})

/* The kinds armed now (fault.c); read on every wrapped call. */
extern atomic_uint sg__fault_armed;
/* The slow path of sg__fault_hit_at: counts the call, 1 when it is due. */
int sg__fault_fire(sg_fault_kind kind, sg__site site);

/* 1 if the armed fault of `kind` is due now at `site` (the caller then
 * fails as the real call would have). Costs one relaxed load unless armed. */
static inline int sg__fault_hit_at(sg_fault_kind kind, sg__site site) {
  if (!(atomic_load_explicit(&sg__fault_armed, memory_order_relaxed) & (unsigned)kind)) return 0;
  return sg__fault_fire(kind, site);
}

/* A fault point for a call made without a wrapper (fopen, mkdir...): the
 * caller fails as the call would have when this says so. The call is
 * named `call` in the point's name. */
#define sg__fault_point(kind, call) sg__fault_hit_at((kind), SG__SITE(call))
/* The same, the point named after its function only. */
#define sg__fault_hit(kind) sg__fault_hit_at((kind), SG__SITE("fault point"))

/* The wrappers take the caller's site: each name below is a macro over the
 * _at function. */
void *sg__malloc_at(size_t bytes, sg__site site);
void *sg__calloc_at(size_t count, size_t size, sg__site site);
void *sg__realloc_at(void *ptr, size_t bytes, sg__site site);
void *sg__realloc_array_at(void *ptr, size_t count, size_t size, sg__site site);
void *sg__aligned_alloc_at(size_t alignment, size_t bytes, sg__site site);
char *sg__strdup_at(const char *text, sg__site site);
int sg__mutex_init_at(pthread_mutex_t *mutex, sg__site site);
int sg__cond_init_at(pthread_cond_t *cond, sg__site site);
int sg__thread_create_at(pthread_t *thread, void *(*fn)(void *), void *arg, sg__site site);

#define sg__malloc(bytes) sg__malloc_at((bytes), SG__SITE("sg__malloc"))
#define sg__calloc(count, size) sg__calloc_at((count), (size), SG__SITE("sg__calloc"))
/* Like realloc; on failure returns NULL and `ptr` is untouched. */
#define sg__realloc(ptr, bytes) sg__realloc_at((ptr), (bytes), SG__SITE("sg__realloc"))
/* `count` * `size` with an overflow check; NULL on overflow or failure. */
#define sg__realloc_array(ptr, count, size) \
  sg__realloc_array_at((ptr), (count), (size), SG__SITE("sg__realloc_array"))
#define sg__aligned_alloc(alignment, bytes) \
  sg__aligned_alloc_at((alignment), (bytes), SG__SITE("sg__aligned_alloc"))
#define sg__strdup(text) sg__strdup_at((text), SG__SITE("sg__strdup"))
void sg__free(void *ptr);

/* Return 0 or an errno value. Conditions' waits measure CLOCK_MONOTONIC. */
#define sg__mutex_init(mutex) sg__mutex_init_at((mutex), SG__SITE("sg__mutex_init"))
#define sg__cond_init(cond) sg__cond_init_at((cond), SG__SITE("sg__cond_init"))
#define sg__thread_create(thread, fn, arg) \
  sg__thread_create_at((thread), (fn), (arg), SG__SITE("sg__thread_create"))

/* Locking an initialised mutex cannot fail in a correct program, so these
 * are not fault points; they exist so every pthread call has one home. */
void sg__mutex_lock(pthread_mutex_t *mutex);
void sg__mutex_unlock(pthread_mutex_t *mutex);
void sg__mutex_destroy(pthread_mutex_t *mutex);
void sg__cond_wait(pthread_cond_t *cond, pthread_mutex_t *mutex);
/* 0 when signalled (or spuriously woken), ETIMEDOUT after `timeout_ns`. */
int sg__cond_timedwait_ns(pthread_cond_t *cond, pthread_mutex_t *mutex, uint64_t timeout_ns);
void sg__cond_signal(pthread_cond_t *cond);
void sg__cond_broadcast(pthread_cond_t *cond);
void sg__cond_destroy(pthread_cond_t *cond);
void sg__thread_join(pthread_t thread);
/* For threads that live as long as the process (never joined). */
void sg__thread_detach(pthread_t thread);

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t sg__now_ns(void);

/* Number of online CPUs (at least 1). */
unsigned sg__cpu_count(void);

#endif
