/* The host backend: one worker thread per planned stream emulates that
 * stream (FIFO), and emulated events tie the streams together exactly as
 * CUDA events would. A launch starts only when the previous launch of the
 * executable has fully finished, as on the GPU.
 *
 * All shared state is guarded by one mutex and one condition variable:
 * launches are coarse (a node is a memcpy or a host twin), and a single
 * lock keeps the emulation easy to reason about. */
#include <stdio.h>
#include <string.h>

#include "core/sys.h"
#include "exec/backend.h"
#include "host/host_nodes.h"
#include "host/host_staging.h"
#include "plan/schedule.h"

typedef struct host_backend host_backend;

typedef struct worker {
  host_backend *owner;
  uint32_t stream;
  pthread_t thread;
} worker;

struct host_backend {
  sg_exec *exec;
  const sg__schedule *schedule;
  worker *workers;
  uint32_t started;        /* workers running */
  pthread_mutex_t lock;
  pthread_cond_t changed;
  uint64_t launched;       /* launches enqueued */
  uint64_t completed;      /* launches every stream has finished */
  uint32_t streams_busy;   /* streams still running launch completed+1 */
  uint64_t *stream_done;   /* per stream: the last launch it finished */
  uint64_t *event_launch;  /* per event: the launch that last recorded it */
  uint64_t *start_ns;      /* per node, when tracing: the last launch's times */
  uint64_t *end_ns;
  uint64_t launch_start_ns;
  int stopping;
  struct sg__staging *staging; /* staging (src/staging): NULL unless the policy stages */
};

/* Runs the nodes of `stream` for launch `launch` (lock not held). */
static void run_stream(host_backend *b, uint32_t stream, uint64_t launch) {
  const sg__schedule *s = b->schedule;
  sg_exec *exec = b->exec;
  for (uint32_t k = s->stream_start[stream]; k < s->stream_start[stream + 1]; k++) {
    uint32_t n = s->stream_nodes[k];
    if (s->wait_start[n] != s->wait_start[n + 1]) {
      sg__mutex_lock(&b->lock);
      for (uint32_t w = s->wait_start[n]; w < s->wait_start[n + 1]; w++)
        while (b->event_launch[s->wait_event[w]] < launch) sg__cond_wait(&b->changed, &b->lock);
      sg__mutex_unlock(&b->lock);
    }
    /* After a failure the remaining nodes are skipped, but events are still
     * recorded so that every stream drains and every waiter returns. */
    if (!sg__exec_has_failed(exec)) {
      if (b->start_ns) b->start_ns[n] = sg__now_ns() - b->launch_start_ns;
      char message[SG_ERROR_MESSAGE_BYTES];
      /* staging: a candidate copy goes through the pinned ring or the cache */
      /* User code (host nodes, host twins) may not call back into its own
       * executable to wait for this launch (exec/backend.h). */
      const sg_exec *outer = sg__exec_callback_begin(exec);
      sg_status st = sg__staging_candidate(b->staging, n)
                         ? sg__staging_host_run(b->staging, n, message, sizeof message)
                         : sg__host_run_node(&exec->snap.nodes[n], n, message, sizeof message);
      sg__exec_callback_end(outer);
      if (b->end_ns) b->end_ns[n] = sg__now_ns() - b->launch_start_ns;
      if (st) sg__exec_fail(exec, st, "launch %llu: %s", (unsigned long long)launch, message);
    }
    if (s->record_event[n] >= 0) {
      sg__mutex_lock(&b->lock);
      b->event_launch[s->record_event[n]] = launch;
      sg__cond_broadcast(&b->changed);
      sg__mutex_unlock(&b->lock);
    }
  }
}

static void *worker_main(void *arg) {
  worker *w = arg;
  host_backend *b = w->owner;
  sg__mutex_lock(&b->lock);
  for (;;) {
    /* The next launch for this stream may start once the one before it has
     * completed on every stream. */
    uint64_t next = b->stream_done[w->stream] + 1;
    while (!b->stopping && !(next <= b->launched && b->completed == next - 1))
      sg__cond_wait(&b->changed, &b->lock);
    if (b->stopping) break;
    if (b->streams_busy == 0) { /* first stream to pick this launch up */
      b->streams_busy = b->schedule->stream_count;
      b->launch_start_ns = sg__now_ns();
    }
    sg__mutex_unlock(&b->lock);
    run_stream(b, w->stream, next);
    sg__mutex_lock(&b->lock);
    b->stream_done[w->stream] = next;
    if (--b->streams_busy == 0) {
      b->completed = next;
      sg__cond_broadcast(&b->changed);
    }
  }
  sg__mutex_unlock(&b->lock);
  return NULL;
}

static void stop_workers(host_backend *b) {
  sg__mutex_lock(&b->lock);
  b->stopping = 1;
  sg__cond_broadcast(&b->changed);
  sg__mutex_unlock(&b->lock);
  for (uint32_t i = 0; i < b->started; i++) sg__thread_join(b->workers[i].thread);
  b->started = 0;
}

static void free_backend(host_backend *b) {
  sg__staging_destroy(b->staging); /* staging: workers are stopped, nothing in flight */
  sg__free(b->workers);
  sg__free(b->stream_done);
  sg__free(b->event_launch);
  sg__free(b->start_ns);
  sg__free(b->end_ns);
  sg__free(b);
}

static void host_destroy(sg_exec *exec) {
  host_backend *b = exec->backend;
  if (!b) return;
  stop_workers(b);
  sg__cond_destroy(&b->changed);
  sg__mutex_destroy(&b->lock);
  free_backend(b);
  exec->backend = NULL;
}

static sg_status host_create(sg_exec *exec, const char *fn) {
  for (uint32_t i = 0; i < exec->snap.node_count; i++) {
    sg_status st = sg__host_check_node(&exec->snap.nodes[i], i, fn);
    if (st) return st;
  }
  const sg__schedule *s = sg__exec_schedule(exec);
  uint32_t streams = s->stream_count ? s->stream_count : 1;
  host_backend *b = sg__calloc(1, sizeof *b);
  if (!b) return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
  b->exec = exec;
  b->schedule = s;
  b->workers = sg__calloc(streams, sizeof *b->workers);
  b->stream_done = sg__calloc(streams, sizeof *b->stream_done);
  b->event_launch = sg__calloc(s->event_count ? s->event_count : 1, sizeof *b->event_launch);
  int oom = !b->workers || !b->stream_done || !b->event_launch;
  if (!oom && exec->options.trace) {
    b->start_ns = sg__calloc(s->node_count ? s->node_count : 1, sizeof *b->start_ns);
    b->end_ns = sg__calloc(s->node_count ? s->node_count : 1, sizeof *b->end_ns);
    oom = !b->start_ns || !b->end_ns;
  }
  if (oom) {
    free_backend(b);
    return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
  }
  /* staging: graph mode takes its rings now, streams mode at each run */
  sg_status staging_st =
      sg__staging_create(exec, exec->options.mode == SG_MODE_GRAPH, fn, &b->staging);
  if (staging_st) {
    free_backend(b);
    return staging_st;
  }
  if (sg__mutex_init(&b->lock)) {
    free_backend(b);
    return sg__fail(SG_ERR_SYSTEM, "%s: cannot create a mutex", fn);
  }
  if (sg__cond_init(&b->changed)) {
    sg__mutex_destroy(&b->lock);
    free_backend(b);
    return sg__fail(SG_ERR_SYSTEM, "%s: cannot create a condition variable", fn);
  }
  exec->backend = b;
  for (uint32_t i = 0; i < s->stream_count; i++) {
    b->workers[i] = (worker){b, i, 0};
    if (sg__thread_create(&b->workers[i].thread, worker_main, &b->workers[i])) {
      host_destroy(exec);
      return sg__fail(SG_ERR_SYSTEM, "%s: cannot start host worker thread %u", fn, i);
    }
    b->started++;
  }
  return SG_OK;
}

static sg_status host_launch(sg_exec *exec, void *cuda_stream) {
  host_backend *b = exec->backend;
  sg__mutex_lock(&b->lock);
  if (b->schedule->stream_count == 0) { /* an empty graph: done at once */
    b->launched++;
    b->completed++;
  } else {
    b->launched++;
    sg__cond_broadcast(&b->changed);
  }
  sg__mutex_unlock(&b->lock);
  return SG_OK;
}

static sg_status host_wait(sg_exec *exec) {
  host_backend *b = exec->backend;
  if (!b) return SG_OK;
  sg__mutex_lock(&b->lock);
  while (b->completed < b->launched) sg__cond_wait(&b->changed, &b->lock);
  sg__mutex_unlock(&b->lock);
  return SG_OK;
}

static sg_status host_query(sg_exec *exec) {
  host_backend *b = exec->backend;
  sg__mutex_lock(&b->lock);
  int busy = b->completed < b->launched;
  sg__mutex_unlock(&b->lock);
  return busy ? SG_NOT_READY : SG_OK;
}

/* Workers read node parameters while they run, so a change waits until the
 * launches in flight are done; it then applies to the next launch. */
static sg_status host_update_node(sg_exec *exec, uint32_t index, const sg__node *fresh,
                                  int *in_place) {
  sg_status st = sg__host_check_node(fresh, index, "sg_exec_set");
  if (st) return st;
  host_wait(exec);
  *in_place = 0;
  /* staging: re-decide the copy's route (graph mode: its ring) */
  return sg__staging_update_node(((host_backend *)exec->backend)->staging, index, fresh);
}

static sg_status host_get_trace(sg_exec *exec, uint64_t *start_ns, uint64_t *end_ns) {
  host_backend *b = exec->backend;
  size_t n = b->schedule->node_count;
  memcpy(start_ns, b->start_ns, n * sizeof *start_ns);
  memcpy(end_ns, b->end_ns, n * sizeof *end_ns);
  return SG_OK;
}

static const sg__backend_ops host_ops = {
    .name = "host",
    .create = host_create,
    .destroy = host_destroy,
    .launch = host_launch,
    .wait = host_wait,
    .query = host_query,
    .update_node = host_update_node,
    .get_trace = host_get_trace,
};

const sg__backend_ops *sg__host_backend(void) { return &host_ops; }
