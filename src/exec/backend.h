/* Internal: the backend contract - the header of src/exec a backend
 * includes (with exec/trace.h, for the trace it commits launch times to).
 *
 * A backend replays the schedule of an executable (plan/schedule.h) on some
 * hardware: src/host (worker threads) and src/cuda (CUDA streams, CUDA
 * graphs). The front end (src/exec) validates every argument, keeps the
 * nodes, the plan, the statistics and the failure state, and calls the
 * backend through a table of operations. It hands the backend what it
 * needs as parameters (sg__backend_args at creation; a node index and the
 * node's new parameters at an update), never the executable to read: a
 * backend sees `sg_exec` as an opaque handle it may only pass to the
 * sg__exec_* reports below.
 *
 * Adding a backend: fill an sg__backend_ops (and, for staged copies of
 * pageable memory, an sg__stage_mem: staging/stage_mem.h), return it from a
 * function declared at the end of this header, and add the case to
 * sg__backend_for (exec/exec.c). */
#ifndef SG_EXEC_BACKEND_H
#define SG_EXEC_BACKEND_H

#include <stdint.h>

#include "core/error.h"
#include "core/node.h"
#include "plan/schedule.h"
#include "streamgraph/exec.h"

struct sg__stage_mem; /* staging/stage_mem.h: how staging reaches this backend's memory */
struct sg__trace;     /* exec/trace.h: a traced executable's launch times */

/* What a backend is given to build its state from. Valid during `create`
 * only, except `exec`, `nodes`, `schedule` and `trace` (see below), which
 * live as long as the state: a backend copies what else it keeps. */
typedef struct sg__backend_args {
  /* The executable, opaque: only for the sg__exec_* reports below, from
   * any thread (host callbacks and worker threads included). */
  sg_exec *exec;
  /* The options as resolved: backend CUDA or HOST, max_streams > 0. */
  const sg_exec_options *options;
  /* The executable's nodes, node_count of them, indexed like the schedule.
   * The front end changes a node's parameters in place only after the
   * backend's update_node accepted them, and only between calls of the
   * backend, so a backend may read them during its own calls (`launch`
   * included), but not from a launch running after its call returned:
   * launches queue ahead, and a change for a later launch replaces a node
   * while earlier launches run (the host backend keeps its own copies). */
  const sg__node *nodes;
  uint32_t node_count;
  /* The schedule to replay (valid until destroy). */
  const sg__schedule *schedule;
  /* Where the times of each launch the backend can time go (exec/trace.h),
   * committed once they are known, in launch order, with the launch's
   * number; NULL when the executable is not traced. Lives as long as the
   * state; the front end alone makes and frees it. Staging's copy threads
   * add their spans to it too. */
  struct sg__trace *trace;
  /* Launches the executable has made so far (all ended): a state made by
   * sg_exec_update numbers its launches on from there. */
  uint64_t launches;
  /* The public function the state is made for, which messages start with:
   * sg_exec_create, or sg_exec_update for a new topology (built beside the
   * old state, which stays until the new one is complete). */
  const char *fn;
  /* The conditions of the graph (core/conditional.h: default value and
   * flags), cond_count of them, indexed by the ids conditional nodes and
   * bound kernel arguments name; valid during `create` only. */
  const struct sg__cond_info *conds;
  uint32_t cond_count;
  /* 1 for a state built ahead of its switch on a background thread
   * (sg_exec_update_async): a backend makes now, off the launch path, what
   * its first launches would otherwise make (events made on first use). */
  int ahead;
} sg__backend_args;

/* The operations of a backend. Each returns SG_OK or an error with this
 * thread's message set (prefixed by the public function it serves). */
typedef struct sg__backend_ops {
  const char *name;
  /* How staging reaches this backend's memory (pinned slabs, registration,
   * fences); NULL when the backend never stages. */
  const struct sg__stage_mem *stage_mem;
  /* Checks every node can run here (host twins, pointers) and builds the
   * backend's state in *state. On failure frees what it took. */
  sg_status (*create)(const sg__backend_args *args, void **state);
  /* Frees the state. Called with nothing in flight. */
  void (*destroy)(void *state);
  /* Enqueues launch number `launch` (1, 2, ...: the executable's count,
   * which traces carry; the front end has checked the executable is not
   * failed). `cuda_stream`: the caller's stream to order it after, or NULL. */
  sg_status (*launch)(void *state, void *cuda_stream, uint64_t launch);
  /* Blocks until every launch so far is done, and commits the times of the
   * traced launches it waited for. Failures of the launches are
   * reported through sg__exec_fail, not through this status, which is for
   * the wait itself. */
  sg_status (*wait)(void *state);
  /* SG_OK when idle, SG_NOT_READY while launches run. */
  sg_status (*query)(void *state);
  /* Launches are numbered 1, 2, ... in the order `launch` accepted them
   * (a launch that fails does not count). Blocks until launches 1..`launch`
   * (`launch` <= the latest) are done; as `wait`, failures go through
   * sg__exec_fail_launch and the status is the wait's own. */
  sg_status (*wait_launch)(void *state, uint64_t launch);
  /* SG_OK when launches 1..`launch` are done, SG_NOT_READY otherwise. */
  sg_status (*query_launch)(void *state, uint64_t launch);
  /* Follow every launch from now on (see exec/exec.h); NULL when the
   * backend always does. */
  void (*track_launches)(void *state);
  /* Node `index` gets the parameters of `fresh` (same kind, validated; its
   * name may be NULL, in which case the node keeps its name) for the
   * launches that follow. The backend applies what it must and sets
   * *in_place when it changed an instantiated CUDA graph in place; the
   * front end then moves `fresh` into nodes[index]. */
  sg_status (*update_node)(void *state, uint32_t index, const sg__node *fresh, int *in_place);
  /* A state built ahead of its switch (sg_exec_update_async) was made with
   * the launch count of its start; at the switch, with the old state idle,
   * it learns the count now (`launches`, all ended) and numbers on from
   * there. NULL when the backend takes each launch's number as given. */
  void (*renumber)(void *state, uint64_t launches);
  /* At that switch, before `renumber` and the first launch of `state`:
   * orders the next launch of `state` after every launch `old` (the
   * executable's state until now) has made, without waiting for them on
   * this thread (the caller's launch thread): on the GPU (an event wait)
   * or in the backend's own scheduling. `old` is waited for and destroyed
   * afterwards, on another thread, while `state` launches; so what `state`
   * keeps of `old` must not outlive old's last launch. On failure (the
   * thread's message set) the front end waits for `old` itself. NULL: the
   * front end always waits. */
  sg_status (*follow)(void *state, void *old);
  /* The memory of an executable's planned temporaries (docs/buffers.md):
   * `bytes` (> 0) on device `device`, aligned to SG__ARENA_ALLOC_ALIGN,
   * where the backend's nodes can read and write it (device memory for
   * CUDA, host memory for the host backend). Messages start with `fn`.
   * Freed with arena_free when the executable (or the topology that
   * planned it) goes, with nothing in flight. */
  sg_status (*arena_alloc)(int device, size_t bytes, const char *fn, void **arena);
  void (*arena_free)(int device, void *arena);
} sg__backend_ops;

/* The alignment an arena has at least (what cudaMalloc gives). */
#define SG__ARENA_ALLOC_ALIGN 256u

/* ---- what a backend reports to its executable (thread-safe) ------------- */

/* Records the first failure of a launch (later ones are dropped): the
 * executable is failed from now on. */
void sg__exec_fail(sg_exec *exec, sg_status status, const char *fmt, ...) SG_PRINTF(3, 4);
/* The same for a failure known to belong to launch number `launch` (a
 * host node's payload knows the launch it runs for; a launch half-enqueued
 * is number `launches + 1`). sg__exec_fail's failures are attributed to
 * the oldest launch not yet seen finished when one is next asked about. */
void sg__exec_fail_launch(sg_exec *exec, uint64_t launch, sg_status status, const char *fmt,
                          ...) SG_PRINTF(4, 5);
/* 1 if a launch has failed. */
int sg__exec_has_failed(sg_exec *exec);
/* Counts a rebuild the backend made on its own (an in-place update the
 * driver refused, say). */
void sg__exec_count_rebuild(sg_exec *exec);
/* Adds to the copy counters of the statistics. */
void sg__exec_count_copies(sg_exec *exec, uint64_t staged, uint64_t registered);

/* The state `ops` made for `exec`, or NULL when `exec` runs on another
 * backend (for a backend's own diagnostics entry points). */
void *sg__exec_backend_state(const sg_exec *exec, const sg__backend_ops *ops);

/* A backend is about to run user code for `exec` on this thread (a host
 * node, a kernel's or stream function's host twin): until the matching end,
 * a call from that code back into `exec` that would wait for the launch
 * running it (or change what it runs) fails with SG_ERR_BUSY instead of
 * deadlocking. Returns what to give sg__exec_callback_end. */
const sg_exec *sg__exec_callback_begin(const sg_exec *exec);
void sg__exec_callback_end(const sg_exec *previous);

/* ---- the backends ------------------------------------------------------- */

/* The backend for `backend` (SG_BACKEND_HOST or SG_BACKEND_CUDA, resolved);
 * NULL for CUDA in a build without it. */
const sg__backend_ops *sg__backend_for(sg_backend backend);

/* Each backend's table, defined in its folder: src/host, and src/cuda
 * (NULL in a build without CUDA: src/cuda/no_cuda.c). */
const sg__backend_ops *sg__host_backend(void);
const sg__backend_ops *sg__cuda_backend(void);

#endif
