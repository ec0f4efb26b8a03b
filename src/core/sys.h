/* Internal: the thin wrappers every allocation and thread/mutex/condition
 * call goes through, so that tests can make any one of them fail
 * (streamgraph/testing.h) and count what is still allocated. */
#ifndef SG_CORE_SYS_H
#define SG_CORE_SYS_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "streamgraph/testing.h"

/* 1 if the armed fault of `kind` is due now (the caller then fails as the
 * real call would have). */
int sg__fault_hit(sg_fault_kind kind);

void *sg__malloc(size_t bytes);
void *sg__calloc(size_t count, size_t size);
/* Like realloc; on failure returns NULL and `ptr` is untouched. */
void *sg__realloc(void *ptr, size_t bytes);
/* `count` * `size` with an overflow check; NULL on overflow or failure. */
void *sg__realloc_array(void *ptr, size_t count, size_t size);
void *sg__aligned_alloc(size_t alignment, size_t bytes);
void sg__free(void *ptr);
char *sg__strdup(const char *text);

/* Return 0 or an errno value. */
int sg__mutex_init(pthread_mutex_t *mutex);
int sg__cond_init(pthread_cond_t *cond); /* waits measure CLOCK_MONOTONIC */
int sg__thread_create(pthread_t *thread, void *(*fn)(void *), void *arg);

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
