/* The host backend's process-wide worker pool (host_pool.h). Its state is
 * static: the threads live as long as the process, idle on a condition
 * variable when there is nothing to run, and own no heap memory (a task
 * lives in its executable). */
#include "host/host_pool.h"

#include "core/error.h"
#include "core/sys.h"

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t work_queued = PTHREAD_COND_INITIALIZER;
static unsigned thread_count;
static sg__host_task *queue_head, *queue_tail;

static void *pool_thread(void *unused) {
  (void)unused;
  sg__mutex_lock(&pool_lock);
  for (;;) {
    while (!queue_head) sg__cond_wait(&work_queued, &pool_lock);
    sg__host_task *task = queue_head;
    queue_head = task->next;
    if (!queue_head) queue_tail = NULL;
    sg__mutex_unlock(&pool_lock);
    task->run(task); /* may free the task's memory: not touched after */
    sg__mutex_lock(&pool_lock);
  }
  return NULL;
}

sg_status sg__host_pool_reserve(unsigned width, const char *fn) {
  unsigned cpus = sg__cpu_count();
  unsigned want = width > cpus ? width : cpus;
  int failed = 0;
  sg__mutex_lock(&pool_lock);
  while (thread_count < want) {
    pthread_t thread;
    if ((failed = sg__thread_create(&thread, pool_thread, NULL) != 0)) break;
    sg__thread_detach(thread);
    thread_count++;
  }
  unsigned have = thread_count;
  sg__mutex_unlock(&pool_lock);
  /* Threads that did start stay: the next executable needs fewer. */
  if (failed)
    return sg__fail(SG_ERR_SYSTEM,
                    "%s: cannot start a host worker thread (%u running; %u wanted: one per CPU "
                    "and at least the plan's %u streams); free system resources or lower "
                    "max_streams", fn, have, want, width);
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
  sg__mutex_unlock(&pool_lock);
}

unsigned sg__host_pool_threads(void) {
  sg__mutex_lock(&pool_lock);
  unsigned n = thread_count;
  sg__mutex_unlock(&pool_lock);
  return n;
}
