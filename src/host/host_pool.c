/* The host backend's process-wide worker pool (host_pool.h). Its state is
 * static: base threads live as long as the process, idle on a condition
 * variable when there is nothing to run; threads beyond the base end when
 * idle. The pool owns no heap memory (a task lives in its executable). */
#include "host/host_pool.h"

#include <errno.h>
#include <stdint.h>

#include "core/error.h"
#include "core/sys.h"

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
/* Both measure CLOCK_MONOTONIC (sg__cond_init): made by the first reserve. */
static pthread_cond_t work_queued;
static pthread_cond_t watch; /* wakes the watcher */
static int conds_made;
static unsigned thread_count;   /* worker threads alive */
static unsigned idle_count;     /* workers waiting for a task */
static unsigned base_cpus;      /* a test's CPU count, or 0 */
static int watcher_started;
static int watcher_asleep;      /* waiting without a deadline: needs a signal */
static uint64_t taken;          /* tasks taken so far: the queue's progress */
static uint64_t trim_calls;     /* sg__host_pool_trim calls so far */
static sg__host_task *queue_head, *queue_tail;

static unsigned base(void) { return base_cpus ? base_cpus : sg__cpu_count(); }

unsigned sg__host_pool_base(void) {
  sg__mutex_lock(&pool_lock);
  unsigned n = base();
  sg__mutex_unlock(&pool_lock);
  return n;
}

unsigned sg__host_pool_cap(void) {
  unsigned cpus = sg__cpu_count();
  unsigned per_cpu = cpus > UINT32_MAX / 4 ? UINT32_MAX : cpus * 4;
  return per_cpu > 256 ? per_cpu : 256;
}

/* Work waits and every thread is held: the watcher should look (lock held). */
static void maybe_wake_watcher(void) {
  if (queue_head && idle_count == 0 && watcher_asleep) sg__cond_signal(&watch);
}

static void *pool_thread(void *unused) {
  (void)unused;
  sg__mutex_lock(&pool_lock);
  for (;;) {
    while (!queue_head) {
      const int surplus = thread_count > base();
      const uint64_t trims = trim_calls;
      int timed_out = 0;
      idle_count++;
      if (surplus)
        timed_out = sg__cond_timedwait_ns(&work_queued, &pool_lock,
                                          SG__HOST_POOL_IDLE_MS * 1000000ull) == ETIMEDOUT;
      else
        sg__cond_wait(&work_queued, &pool_lock);
      idle_count--;
      if (!queue_head && thread_count > base() && (timed_out || trims != trim_calls)) {
        thread_count--;
        sg__mutex_unlock(&pool_lock);
        return NULL;
      }
    }
    sg__host_task *task = queue_head;
    queue_head = task->next;
    if (!queue_head) queue_tail = NULL;
    taken++;
    maybe_wake_watcher();
    sg__mutex_unlock(&pool_lock);
    task->run(task); /* may free the task's memory: not touched after */
    sg__mutex_lock(&pool_lock);
  }
  return NULL;
}

/* Starts one worker (lock held); 0 or an errno value. */
static int start_worker(void) {
  pthread_t thread;
  int rc = sg__thread_create(&thread, pool_thread, NULL);
  if (rc) return rc;
  sg__thread_detach(thread);
  thread_count++;
  return 0;
}

/* While work waits with no thread idle, looks every stall time whether a
 * task was taken meanwhile; if none was, every thread is held (by host
 * nodes waiting, most likely), and one more thread takes the next task. A
 * thread that cannot start is tried again at the next tick. */
static void *watcher(void *unused) {
  (void)unused;
  sg__mutex_lock(&pool_lock);
  uint64_t seen = taken;
  for (;;) {
    if (!queue_head || idle_count > 0) {
      watcher_asleep = 1;
      sg__cond_wait(&watch, &pool_lock);
      watcher_asleep = 0;
      seen = taken;
      continue;
    }
    sg__cond_timedwait_ns(&watch, &pool_lock, SG__HOST_POOL_STALL_MS * 1000000ull);
    if (queue_head && idle_count == 0 && taken == seen && thread_count < sg__host_pool_cap())
      (void)start_worker();
    seen = taken;
  }
  return NULL;
}

sg_status sg__host_pool_reserve(const char *fn) {
  int rc = 0;
  const char *what = "a host worker thread";
  sg__mutex_lock(&pool_lock);
  const unsigned want = base();
  if (conds_made < 1 && !(rc = sg__cond_init(&work_queued))) conds_made = 1;
  if (!rc && conds_made < 2 && !(rc = sg__cond_init(&watch))) conds_made = 2;
  if (rc) what = "the host pool (a condition variable)";
  while (!rc && thread_count < want) rc = start_worker();
  if (!rc && !watcher_started) {
    pthread_t thread;
    what = "the host pool's watcher thread";
    if (!(rc = sg__thread_create(&thread, watcher, NULL))) {
      sg__thread_detach(thread);
      watcher_started = 1;
    }
  }
  unsigned have = thread_count;
  sg__mutex_unlock(&pool_lock);
  /* Threads that did start stay: the next executable needs fewer. */
  if (rc)
    return sg__fail(SG_ERR_SYSTEM,
                    "%s: cannot make %s (%u workers running; the base is one per CPU, %u); "
                    "free system resources",
                    fn, what, have, want);
  return SG_OK;
}

void sg__host_pool_submit(sg__host_task *const *tasks, unsigned count) {
  if (count == 0) return;
  sg__mutex_lock(&pool_lock);
  for (unsigned i = 0; i < count; i++) {
    tasks[i]->next = NULL;
    if (queue_tail) queue_tail->next = tasks[i]; else queue_head = tasks[i];
    queue_tail = tasks[i];
  }
  if (count == 1) sg__cond_signal(&work_queued); else sg__cond_broadcast(&work_queued);
  maybe_wake_watcher();
  sg__mutex_unlock(&pool_lock);
}

unsigned sg__host_pool_threads(void) {
  sg__mutex_lock(&pool_lock);
  unsigned n = thread_count;
  sg__mutex_unlock(&pool_lock);
  return n;
}

void sg__host_pool_trim(void) {
  sg__mutex_lock(&pool_lock);
  trim_calls++;
  if (conds_made) sg__cond_broadcast(&work_queued);
  sg__mutex_unlock(&pool_lock);
}

void sg__host_pool_set_base(unsigned cpus) {
  sg__mutex_lock(&pool_lock);
  base_cpus = cpus;
  sg__mutex_unlock(&pool_lock);
}
