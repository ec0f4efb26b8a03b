/* The host backend: each planned stream of a launch runs, in order, on a
 * thread of the process-wide pool (host_pool.h, which also shows why no
 * executable waits for another's host work), and emulated events tie the
 * streams together exactly as CUDA events would. A stream that reaches a
 * wait for an event not yet recorded gives its thread back: it is parked on
 * the event and queued again when the event is recorded, so a thread is
 * held only while a node runs. A launch starts only when the previous
 * launch of the executable has fully finished, as on the GPU, and, when it
 * was given a caller's CUDA stream, when that stream's earlier work is done
 * (a gate opened from the stream: core/device.h); the stream then waits for
 * the launch's end.
 *
 * An executable's state is guarded by one mutex and one condition variable:
 * launches are coarse (a node is a memcpy or a host twin), and a single
 * lock keeps the emulation easy to reason about. Lock order: the gate table
 * (gates_lock), then an executable's lock, then the pool's.
 *
 * Launches queue: sg_exec_launch never waits, and a launch runs with the
 * parameters it was launched with, as on the GPU. So the backend keeps its
 * own copy of every node's parameters and never reads the executable's
 * nodes while launches run (the front end replaces a node in place,
 * recycling its argument block, as soon as sg_exec_set_* returns).
 * A node changed while launches are in flight gets a version (a deep
 * copy) that applies from the next launch on; a stream copies the node of
 * the launch it runs under the lock, and the versions the oldest launch not
 * completed no longer needs are folded away. */
#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "core/device.h"
#include "core/sys.h"
#include "exec/backend.h"
#include "exec/backend_rules.h"
#include "exec/trace.h"
#include "host/host_conditional.h"
#include "host/host_nodes.h"
#include "host/host_pool.h"
#include "host/host_stage_mem.h"
#include "host/host_staging.h"
#include "plan/schedule.h"
#include "staging/staging.h"

typedef struct host_backend host_backend;

/* One planned stream of the running launch, as a pool task. */
typedef struct stream_task {
  sg__host_task task; /* first: the pool hands this pointer back */
  host_backend *owner;
  uint32_t stream;
  uint64_t launch;
  uint32_t resume;      /* the stream's next node, as an index of stream_nodes */
  int32_t next_parked;  /* the next stream parked on the same event, or -1 */
} stream_task;

/* A launch ordered after a caller's stream: it may start once the host
 * function on the stream has opened its gate. Gates waiting to open are
 * also in a process-wide table, looked up by id, so that a host function
 * that fires late (after its gate was forced open, say) finds nothing
 * rather than freed memory. */
typedef struct gate {
  uint64_t id;
  host_backend *owner;
  uint64_t launch;
  int open;
  struct gate *next;          /* the executable's gates, in launch order */
  struct gate *next_pending;  /* the table of gates not yet open */
} gate;

/* A node's parameters from launch `first` on (until a newer version's). */
typedef struct host_version {
  uint64_t first;
  sg__node node;               /* owned deep copy */
  struct host_version *older;
} host_version;

static pthread_mutex_t gates_lock = PTHREAD_MUTEX_INITIALIZER;
static gate *pending_gates;
static uint64_t last_gate_id;

struct host_backend {
  sg_exec *exec;              /* for failure reports only */
  int device;                 /* the executable's device */
  const sg__schedule *schedule;
  stream_task *tasks;         /* one per stream */
  sg__host_task **task_list;  /* the same, as the pool takes them */
  sg__host_task **wake_list; /* scratch: the streams an event record wakes */
  atomic_uint tasks_out;      /* tasks queued or running whose thread may still touch this
                                 state (a parked stream is not out) */
  pthread_mutex_t lock;
  pthread_cond_t changed;
  uint64_t launched;       /* launches enqueued */
  uint64_t completed;      /* launches every stream has finished */
  sg__node *params;        /* per node, owned: the parameters of the oldest launch not
                              completed (the newest ones when idle) */
  uint32_t params_made;    /* entries of params that hold a node */
  host_version **versions; /* per node, newer parameters, newest first; NULL: none */
  uint32_t versioned;      /* nodes with versions */
  uint64_t running;        /* the launch whose streams run now; 0: none */
  uint32_t streams_busy;   /* streams still running it */
  uint64_t *event_launch;  /* per event: the launch that last recorded it */
  int32_t *parked;         /* per event: the first stream parked on it, or -1 */
  sg__trace *trace;        /* where each launch's times go, or NULL (exec/trace.h) */
  uint64_t *start_ns;      /* per node, when tracing: the running launch's times */
  uint64_t *end_ns;
  uint64_t launch_start_ns;
  int timing;              /* the running launch is timed (options.trace_every samples it);
                              set before its streams are submitted */
  uint64_t number_offset;  /* the executable's number of launch k is k + number_offset */
  gate *gates, *gates_tail;   /* launches after a caller's stream, not started yet */
  sg__device_link *link;      /* made on the first launch with a stream */
  uint32_t link_offset;       /* the flag says "launch c is over" as link_offset + c */
  sg__staging *staging;       /* NULL unless the policy stages */
  sg__host_conds *conds;      /* the conditions' words; NULL without conditions */
  /* The background rebuild's switch (host_follow): this state's launches
   * start only once the old state's have all completed (`after_old`, under
   * this lock), and the old state lifts that when its last completes
   * (`successor`, under the old state's lock). Lock order: old, then new. */
  int after_old;
  host_backend *successor;
};

/* The parameters of node `n` for launch `launch` (lock held). */
static const sg__node *node_for(const host_backend *b, uint32_t n, uint64_t launch) {
  for (const host_version *v = b->versions[n]; v; v = v->older)
    if (v->first <= launch) return &v->node;
  return &b->params[n];
}

/* Every wait of node `n` is met for `launch` (lock held). */
static int waits_met(const host_backend *b, uint32_t n, uint64_t launch, uint32_t *missing) {
  const sg__schedule *s = b->schedule;
  for (uint32_t w = s->wait_start[n]; w < s->wait_start[n + 1]; w++)
    if (b->event_launch[s->wait_event[w]] < launch) {
      *missing = s->wait_event[w];
      return 0;
    }
  return 1;
}

/* Event `e` was recorded: queue the streams parked on it (lock held; the
 * pool's lock comes after an executable's). */
static void wake_parked(host_backend *b, uint32_t e) {
  unsigned count = 0;
  for (int32_t i = b->parked[e]; i >= 0; i = b->tasks[i].next_parked)
    b->wake_list[count++] = &b->tasks[i].task;
  if (!count) return;
  b->parked[e] = -1;
  atomic_fetch_add(&b->tasks_out, count);
  sg__host_pool_submit(b->wake_list, count);
}

/* Runs the nodes of task `t`'s stream from where it stopped (lock not
 * held). Returns 1 when the stream is done; 0 when it was parked on an
 * event not yet recorded, and may already run again on another thread
 * (then `t` is not touched any more). */
static int run_stream(host_backend *b, stream_task *t) {
  const sg__schedule *s = b->schedule;
  sg_exec *exec = b->exec;
  const uint32_t stream = t->stream;
  const uint64_t launch = t->launch;
  for (uint32_t k = t->resume; k < s->stream_start[stream + 1]; k++) {
    uint32_t n = s->stream_nodes[k];
    uint32_t missing;
    sg__mutex_lock(&b->lock);
    if (!waits_met(b, n, launch, &missing)) {
      t->resume = k;
      t->next_parked = b->parked[missing];
      b->parked[missing] = (int32_t)stream;
      sg__mutex_unlock(&b->lock);
      return 0;
    }
    /* A copy of the node itself (what it points at is never freed while
     * this launch runs): a version may be folded into params meanwhile. */
    const sg__node node = *node_for(b, n, launch);
    const uint64_t number = launch + b->number_offset;
    sg__mutex_unlock(&b->lock);
    /* After a failure the remaining nodes are skipped, but events are still
     * recorded so that every stream drains and every waiter returns. */
    if (!sg__exec_has_failed(exec)) {
      if (b->timing) b->start_ns[n] = sg__now_ns() - b->launch_start_ns;
      char message[SG_ERROR_MESSAGE_BYTES];
      /* User code (host nodes, host twins) may not call back into its own
       * executable to wait for this launch (exec/backend.h). */
      const sg_exec *outer = sg__exec_callback_begin(exec);
      /* A candidate copy goes through the pinned ring or the cache. */
      sg_status st = sg__staging_candidate(b->staging, n)
                         ? sg__host_staged_run(b->staging, n, &node, exec, message,
                                               sizeof message)
                         : sg__host_cond_run(b->conds, exec, &node, n, message,
                                             sizeof message);
      sg__exec_callback_end(outer);
      if (b->timing) b->end_ns[n] = sg__now_ns() - b->launch_start_ns;
      if (st)
        sg__exec_fail_launch(exec, number, st, "launch %llu: %s", (unsigned long long)number,
                             message);
    }
    if (s->record_event[n] >= 0) {
      sg__mutex_lock(&b->lock);
      b->event_launch[s->record_event[n]] = launch;
      wake_parked(b, (uint32_t)s->record_event[n]);
      sg__mutex_unlock(&b->lock);
    }
  }
  return 1;
}

static void run_task(sg__host_task *task);

static void start_next(host_backend *b);

/* Launch `completed` is over: tell the caller's stream, and waiters; the
 * last launch of a retired state lets its successor's start. */
static void note_completed(host_backend *b) {
  if (b->link) sg__device_link_raise(b->link, b->link_offset + (uint32_t)b->completed);
  sg__cond_broadcast(&b->changed);
  if (b->successor && b->completed >= b->launched) {
    host_backend *next = b->successor;
    b->successor = NULL;
    sg__mutex_lock(&next->lock);
    next->after_old = 0;
    start_next(next);
    sg__mutex_unlock(&next->lock);
  }
}

/* Starts the next launch if it may start (lock held). */
static void start_next(host_backend *b) {
  const uint32_t streams = b->schedule->stream_count;
  while (!b->running && !b->after_old && b->completed < b->launched) {
    uint64_t next = b->completed + 1;
    gate *g = b->gates;
    if (g && g->launch == next) {
      if (!g->open) return; /* the caller's stream has not reached it yet */
      b->gates = g->next;
      if (!b->gates) b->gates_tail = NULL;
      sg__free(g); /* out of the table since it opened */
    }
    if (streams == 0) { /* an empty graph: done at once */
      if (b->trace)
        sg__trace_commit(b->trace, next + b->number_offset, sg__now_ns(), NULL, NULL);
      b->completed = next;
      note_completed(b);
      continue;
    }
    b->running = next;
    sg__host_conds_start(b->conds);
    b->streams_busy = streams;
    b->launch_start_ns = sg__now_ns();
    b->timing = b->trace && sg__trace_sampled(b->trace, next + b->number_offset);
    for (uint32_t i = 0; i < streams; i++) {
      b->tasks[i].launch = next;
      b->tasks[i].resume = b->schedule->stream_start[i];
    }
    atomic_fetch_add(&b->tasks_out, streams);
    sg__host_pool_submit(b->task_list, streams);
  }
}

static void run_task(sg__host_task *task) {
  stream_task *t = (stream_task *)task;
  host_backend *b = t->owner;
  if (!run_stream(b, t)) { /* parked: queued again when its event is recorded */
    atomic_fetch_sub_explicit(&b->tasks_out, 1, memory_order_release);
    return;
  }
  sg__mutex_lock(&b->lock);
  if (--b->streams_busy == 0) {
    /* A launch cut short by a failure has no complete times. */
    if (b->timing && !sg__exec_has_failed(b->exec))
      sg__trace_commit(b->trace, b->running + b->number_offset, b->launch_start_ns, b->start_ns,
                       b->end_ns);
    b->completed = b->running;
    b->running = 0;
    note_completed(b);
    start_next(b);
  }
  sg__mutex_unlock(&b->lock);
  /* The last touch: host_destroy waits for this before freeing `b`. */
  atomic_fetch_sub_explicit(&b->tasks_out, 1, memory_order_release);
}

/* The host function on a caller's stream: its earlier work is done. Runs
 * on a driver thread; makes no CUDA call. */
static void open_gate(void *arg) {
  uint64_t id = (uint64_t)(uintptr_t)arg;
  sg__mutex_lock(&gates_lock);
  for (gate **at = &pending_gates; *at; at = &(*at)->next_pending) {
    gate *g = *at;
    if (g->id != id) continue;
    *at = g->next_pending;
    host_backend *b = g->owner;
    sg__mutex_lock(&b->lock);
    g->open = 1;
    start_next(b);
    sg__mutex_unlock(&b->lock);
    break;
  }
  sg__mutex_unlock(&gates_lock);
}

/* Opens every gate of `b` without waiting for the streams: for a failed
 * executable, whose launches run no node any more, so that every waiter
 * returns even when a stream never reaches its gate. */
static void force_gates_open(host_backend *b) {
  sg__mutex_lock(&gates_lock);
  for (gate **at = &pending_gates; *at;) {
    if ((*at)->owner == b) *at = (*at)->next_pending; else at = &(*at)->next_pending;
  }
  sg__mutex_lock(&b->lock);
  for (gate *g = b->gates; g; g = g->next) g->open = 1;
  start_next(b);
  sg__mutex_unlock(&b->lock);
  sg__mutex_unlock(&gates_lock);
}

static void free_versions(host_version *v) {
  while (v) {
    host_version *older = v->older;
    sg__node_free(&v->node);
    sg__free(v);
    v = older;
  }
}

/* Makes the newest version the oldest launch not completed uses (every
 * version has started by launch `launched + 1`: once idle, the newest) the
 * node's params, and frees what it replaces (lock held). Streams copy a
 * node under the lock, so moving a version into params is safe under a
 * launch that runs it. */
static void collect_versions(host_backend *b) {
  if (!b->versioned) return;
  const uint64_t oldest = b->completed + 1;
  for (uint32_t n = 0; n < b->schedule->node_count; n++) {
    host_version **at = &b->versions[n];
    while (*at && (*at)->first > oldest) at = &(*at)->older;
    host_version *used = *at;
    if (!used) continue;
    *at = NULL;
    if (!b->versions[n]) b->versioned--;
    sg__node_free(&b->params[n]);
    b->params[n] = used->node;
    free_versions(used->older);
    sg__free(used);
  }
}

static void free_backend(host_backend *b) {
  sg__staging_destroy(b->staging); /* nothing in flight */
  sg__host_conds_free(b->conds);
  sg__device_link_free(b->link);
  if (b->versions)
    for (uint32_t n = 0; n < b->schedule->node_count; n++) free_versions(b->versions[n]);
  sg__free(b->versions);
  for (uint32_t n = 0; n < b->params_made; n++) sg__node_free(&b->params[n]);
  sg__free(b->params);
  sg__free(b->tasks);
  sg__free(b->task_list);
  sg__free(b->wake_list);
  sg__free(b->event_launch);
  sg__free(b->parked);
  sg__free(b->start_ns);
  sg__free(b->end_ns);
  sg__free(b);
}

static void host_destroy(void *state) {
  host_backend *b = state;
  if (!b) return;
  /* Called idle (every launch completed, so every gate opened). The last
   * task may still be leaving the lock: wait until it has let go. */
  while (atomic_load_explicit(&b->tasks_out, memory_order_acquire)) sched_yield();
  /* A host function that opened the last gate may still be leaving the
   * executable's lock; it holds gates_lock until it has. */
  sg__mutex_lock(&gates_lock);
  sg__mutex_unlock(&gates_lock);
  sg__cond_destroy(&b->changed);
  sg__mutex_destroy(&b->lock);
  free_backend(b);
}

/* Graph mode takes its rings now, streams mode at each run. */
static sg_status staging_create(host_backend *b, const sg__backend_args *args, const char *fn) {
  const sg_exec_options *o = args->options;
  const sg__copy_spans spans = sg__trace_copy_spans(args->trace);
  sg_status st =
      sg__staging_create(&o->staging, &sg__host_stage_mem, o->device, o->mode == SG_MODE_GRAPH,
                         args->node_count, &spans, fn, &b->staging);
  for (uint32_t i = 0; !st && b->staging && i < args->node_count; i++) {
    const sg__node *n = &args->nodes[i];
    if (n->kind != SG__NODE_COPY) continue;
    sg__stage_dir dir = sg__staging_classify(b->staging->mem, &n->u.copy);
    char where[SG__STAGING_LABEL_BYTES + 64], label[SG__STAGING_LABEL_BYTES];
    if (dir) sg__format(where, sizeof where, "%s: %s", fn, sg__staging_label(n, i, label));
    st = sg__staging_add(b->staging, i, n->name, &n->u.copy, dir, dir ? where : fn);
  }
  return st;
}

static sg_status host_create(const sg__backend_args *args, void **state) {
  const char *fn = args->fn;
  for (uint32_t i = 0; i < args->node_count; i++) {
    const int device = args->options->device;
    sg_status st = sg__host_check_node(
        &args->nodes[i], i, sg__backend_node_device(&args->nodes[i], device), device, fn);
    if (st) return st;
  }
  const sg__schedule *s = args->schedule;
  uint32_t streams = s->stream_count ? s->stream_count : 1;
  sg_status st = s->stream_count ? sg__host_pool_reserve(fn) : SG_OK;
  if (st) return st;
  host_backend *b = sg__calloc(1, sizeof *b);
  if (!b) return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
  b->exec = args->exec;
  b->device = args->options->device;
  b->schedule = s;
  atomic_init(&b->tasks_out, 0);
  b->tasks = sg__calloc(streams, sizeof *b->tasks);
  b->task_list = sg__calloc(streams, sizeof *b->task_list);
  b->wake_list = sg__calloc(streams, sizeof *b->wake_list);
  b->event_launch = sg__calloc(s->event_count ? s->event_count : 1, sizeof *b->event_launch);
  b->parked = sg__calloc(s->event_count ? s->event_count : 1, sizeof *b->parked);
  b->versions = sg__calloc(s->node_count ? s->node_count : 1, sizeof *b->versions);
  b->params = sg__calloc(s->node_count ? s->node_count : 1, sizeof *b->params);
  int oom = !b->tasks || !b->task_list || !b->wake_list || !b->event_launch || !b->parked ||
            !b->versions || !b->params;
  for (uint32_t e = 0; !oom && e < s->event_count; e++) b->parked[e] = -1;
  /* The backend's own parameters: streams never read args->nodes. A
   * clone that fails owns nothing, and is not counted. */
  while (!oom && b->params_made < s->node_count) {
    oom = sg__node_clone(&args->nodes[b->params_made], &b->params[b->params_made]) != SG_OK;
    if (!oom) b->params_made++;
  }
  b->trace = args->trace;
  if (!oom && b->trace) {
    b->start_ns = sg__calloc(s->node_count ? s->node_count : 1, sizeof *b->start_ns);
    b->end_ns = sg__calloc(s->node_count ? s->node_count : 1, sizeof *b->end_ns);
    oom = !b->start_ns || !b->end_ns;
  }
  if (oom) {
    free_backend(b);
    return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
  }
  for (uint32_t i = 0; i < streams; i++) {
    b->tasks[i] = (stream_task){{run_task, NULL}, b, i, 0, 0, -1};
    b->task_list[i] = &b->tasks[i].task;
  }
  sg_status staging_st = sg__host_conds_create(args, &b->conds);
  if (!staging_st) staging_st = staging_create(b, args, fn);
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
  *state = b;
  return SG_OK;
}

/* A launch after the work in `cuda_stream`, which then waits for it. */
static sg_status launch_after_stream(host_backend *b, void *cuda_stream) {
  static const char fn[] = "sg_exec_launch";
  sg_status usable = sg__device_stream_linkable(cuda_stream, fn);
  if (usable) return usable;
  if (!b->link) {
    sg__device_link *link;
    sg_status st = sg__device_link_new(fn, &link);
    if (st) return st;
    sg__mutex_lock(&b->lock);
    b->link = link;
    /* Continue from the slot's value (a stream may still wait on it). */
    b->link_offset = sg__device_link_value(link) - (uint32_t)b->completed;
    sg__mutex_unlock(&b->lock);
  }
  gate *g = sg__calloc(1, sizeof *g);
  if (!g) return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
  sg__mutex_lock(&gates_lock);
  g->id = ++last_gate_id;
  g->owner = b;
  g->next_pending = pending_gates;
  pending_gates = g;
  sg__mutex_lock(&b->lock);
  g->launch = ++b->launched;
  if (b->gates_tail) b->gates_tail->next = g; else b->gates = g;
  b->gates_tail = g;
  uint32_t value = b->link_offset + (uint32_t)g->launch;
  sg__mutex_unlock(&b->lock);
  sg__mutex_unlock(&gates_lock);

  int gate_queued = 0;
  sg_status st = sg__device_link_enqueue(b->link, cuda_stream, open_gate,
                                         (void *)(uintptr_t)g->id, value, fn, &gate_queued);
  if (st && !gate_queued) {
    /* Nothing reached the stream: take the launch back (it cannot have
     * started, its gate is closed; the executable is used by one thread). */
    sg__mutex_lock(&gates_lock);
    for (gate **at = &pending_gates; *at; at = &(*at)->next_pending)
      if (*at == g) {
        *at = g->next_pending;
        break;
      }
    sg__mutex_lock(&b->lock);
    gate **at = &b->gates;
    while (*at != g) at = &(*at)->next;
    *at = NULL;
    b->gates_tail = NULL;
    for (gate *p = b->gates; p; p = p->next) b->gates_tail = p;
    b->launched--;
    sg__mutex_unlock(&b->lock);
    sg__mutex_unlock(&gates_lock);
    sg__free(g);
    return st;
  }
  if (st) /* the launch will run, but the stream does not wait for it */
    sg__exec_fail(b->exec, st, "%s", sg_last_error());
  return st;
}

static sg_status host_launch(void *state, void *cuda_stream, uint64_t number) {
  host_backend *b = state;
  sg__mutex_lock(&b->lock);
  b->number_offset = number - (b->launched + 1);
  sg__mutex_unlock(&b->lock);
  if (cuda_stream) return launch_after_stream(b, cuda_stream);
  sg__mutex_lock(&b->lock);
  b->launched++;
  start_next(b);
  sg__mutex_unlock(&b->lock);
  return SG_OK;
}

/* A launch waiting for a caller's stream that failed (a broken CUDA
 * context runs no host function any more) would never start: fail the
 * executable and open its gates (lock held on entry and exit). */
static void check_gates(host_backend *b, const char *fn) {
  if (!b->gates) return;
  sg__mutex_unlock(&b->lock);
  if (!sg__exec_has_failed(b->exec)) {
    sg_status st = sg__device_link_check(b->link, fn);
    if (st)
      sg__exec_fail(b->exec, st, "%s; the launches ordered after it do not run", sg_last_error());
  }
  if (sg__exec_has_failed(b->exec)) force_gates_open(b);
  sg__mutex_lock(&b->lock);
}

/* The backend's own index of the executable's launch `number`. */
static uint64_t own_launch(const host_backend *b, uint64_t number) {
  uint64_t k = number > b->number_offset ? number - b->number_offset : 0;
  return k < b->launched ? k : b->launched;
}

static sg_status host_wait_launch(void *state, uint64_t number) {
  host_backend *b = state;
  sg__mutex_lock(&b->lock);
  const uint64_t k = own_launch(b, number);
  while (b->completed < k) {
    if (!b->gates) {
      sg__cond_wait(&b->changed, &b->lock);
    } else if (sg__cond_timedwait_ns(&b->changed, &b->lock, 10u * 1000 * 1000) == ETIMEDOUT) {
      check_gates(b, "sg_exec_wait");
    }
  }
  collect_versions(b);
  sg__mutex_unlock(&b->lock);
  return SG_OK;
}

static sg_status host_query_launch(void *state, uint64_t number) {
  host_backend *b = state;
  sg__mutex_lock(&b->lock);
  const uint64_t k = own_launch(b, number);
  if (b->completed < k) check_gates(b, "sg_exec_query");
  int busy = b->completed < k;
  collect_versions(b);
  sg__mutex_unlock(&b->lock);
  return busy ? SG_NOT_READY : SG_OK;
}

static sg_status host_wait(void *state) { return host_wait_launch(state, UINT64_MAX); }

/* The switch of a background rebuild: this state's launches wait for the
 * old state's to complete (note_completed lifts it), so the launch thread
 * does not. */
static sg_status host_follow(void *state, void *old_state) {
  host_backend *b = state, *old = old_state;
  sg__mutex_lock(&old->lock);
  if (old->completed < old->launched) {
    sg__mutex_lock(&b->lock);
    b->after_old = 1;
    sg__mutex_unlock(&b->lock);
    old->successor = b;
  }
  sg__mutex_unlock(&old->lock);
  return SG_OK;
}

static sg_status host_query(void *state) { return host_query_launch(state, UINT64_MAX); }

/* A deep copy of `fresh` for the backend, keeping the node's name when
 * `fresh` has none (as the front end's nodes do: exec/backend.h). */
static sg_status own_copy(const host_backend *b, uint32_t index, const sg__node *fresh,
                          sg__node *out) {
  const sg__node *current = b->versions[index] ? &b->versions[index]->node : &b->params[index];
  sg_status st = sg__node_clone(fresh, out);
  if (st) return st; /* a failed clone owns nothing */
  if (!out->name && current->name && !(out->name = sg__strdup(current->name))) {
    sg__node_free(out);
    return SG_ERR_OUT_OF_MEMORY;
  }
  return SG_OK;
}

/* A change applies to the next launch; launches in flight keep what they
 * were launched with: with launches in flight it becomes a version, else
 * it replaces the node's params. A copy that staging runs (its route, ring
 * or registration belongs to the node, not to a launch) is changed with the
 * executable idle. */
static sg_status host_update_node(void *state, uint32_t index, const sg__node *fresh,
                                  int *in_place) {
  host_backend *b = state;
  /* The node stays on its device (a change carries none). */
  sg__mutex_lock(&b->lock);
  const int on = sg__backend_node_device(&b->params[index], b->device);
  sg__mutex_unlock(&b->lock);
  sg_status st = sg__host_check_node(fresh, index, on, b->device, "sg_exec_set");
  if (st) return st;
  *in_place = 0;
  const int staged = b->staging && fresh->kind == SG__NODE_COPY;
  if (staged) host_wait(b); /* idle from here: this thread alone launches */
  sg__node own;
  sg__mutex_lock(&b->lock);
  collect_versions(b);
  const int in_flight = b->completed < b->launched;
  host_version *v = NULL;
  st = own_copy(b, index, fresh, &own);
  if (!st && in_flight && !(v = sg__calloc(1, sizeof *v))) {
    sg__node_free(&own);
    st = SG_ERR_OUT_OF_MEMORY;
  }
  sg__mutex_unlock(&b->lock);
  if (st)
    return sg__fail(st, "sg_exec_set: out of memory keeping the node's parameters%s",
                    in_flight ? " beside those of the launches in flight" : "");
  /* The copy's route is decided again (graph mode: its ring); nothing runs,
   * so its other states can go. */
  if (staged) {
    char where[SG__STAGING_LABEL_BYTES + 64], label[SG__STAGING_LABEL_BYTES];
    sg__format(where, sizeof where, "sg_exec_set_copy: %s",
               sg__staging_label(&own, index, label));
    st = sg__staging_update(b->staging, index, own.name, &fresh->u.copy,
                            sg__staging_classify(b->staging->mem, &fresh->u.copy), 1, where);
    if (st) {
      sg__node_free(&own);
      return st;
    }
  }
  sg__mutex_lock(&b->lock);
  if (v) {
    v->first = b->launched + 1;
    v->node = own;
    v->older = b->versions[index];
    if (!v->older) b->versioned++;
    b->versions[index] = v;
  } else {
    sg__node_free(&b->params[index]);
    b->params[index] = own;
  }
  sg__mutex_unlock(&b->lock);
  return SG_OK;
}

static const sg__backend_ops host_ops = {
    .name = "host",
    .stage_mem = &sg__host_stage_mem,
    .create = host_create,
    .destroy = host_destroy,
    .launch = host_launch,
    .wait = host_wait,
    .query = host_query,
    .wait_launch = host_wait_launch,
    .query_launch = host_query_launch,
    .update_node = host_update_node,
    .follow = host_follow,
    .arena_alloc = sg__host_arena_alloc,
    .arena_free = sg__host_arena_free,
};

const sg__backend_ops *sg__host_backend(void) { return &host_ops; }
