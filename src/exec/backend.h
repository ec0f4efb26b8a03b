/* Internal: the executable object and the contract every backend fills. */
#ifndef SG_EXEC_BACKEND_H
#define SG_EXEC_BACKEND_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "core/error.h"
#include "core/in_use.h"
#include "core/snapshot.h"
#include "streamgraph/exec.h"

struct sg__schedule;

/* A backend replays the executable's schedule. The core validates
 * arguments, keeps the snapshot, plan, statistics and failure state, and
 * calls these. Each returns SG_OK or an error with its message set. */
typedef struct sg__backend_ops {
  const char *name;
  /* Checks the snapshot can run here (host twins, pointers) and builds the
   * backend's state in exec->backend. On failure frees what it took.
   * Messages start with `fn`: sg_exec_create, or sg_exec_update when a new
   * topology is built (beside the old state, which stays until the new one
   * is complete). A traced executable (exec->trace not NULL) commits the
   * times of each launch it can time there (exec/trace.h), once they are
   * known, in launch order. */
  sg_status (*create)(sg_exec *exec, const char *fn);
  /* Frees the backend's state. Called with nothing in flight. */
  void (*destroy)(sg_exec *exec);
  /* Enqueues launch number `launch` (1, 2, ...: the executable's count,
   * which traces carry; the core has checked the executable is not failed). */
  sg_status (*launch)(sg_exec *exec, void *cuda_stream, uint64_t launch);
  /* Blocks until every launch so far is done, and commits the times of the
   * traced launches it waited for. Failures of the launches are
   * reported through sg__exec_fail, not through this status, which is for
   * the wait itself. */
  sg_status (*wait)(sg_exec *exec);
  /* SG_OK when idle, SG_NOT_READY while launches run. */
  sg_status (*query)(sg_exec *exec);
  /* Node `index` gets the parameters of `fresh` (same kind, validated) for
   * the launches that follow. The backend applies what it must and sets
   * *in_place when it changed an instantiated CUDA graph in place; the core
   * then moves `fresh` into the snapshot. */
  sg_status (*update_node)(sg_exec *exec, uint32_t index, const sg__node *fresh, int *in_place);
} sg__backend_ops;

struct sg_exec {
  sg_exec_options options;     /* as resolved: backend is CUDA or HOST, max_streams > 0 */
  const sg__backend_ops *ops;
  void *backend;               /* the backend's own state */
  sg__snapshot snap;           /* the graph as it was (nodes are updated in place) */
  sg_plan *plan;               /* owned */
  uint32_t update_serial;      /* serial of the last graph given to sg_exec_update */
  sg__arg_spare arg_spare;     /* recycled kernel argument block (sg_exec_set_kernel) */
  sg__in_use in_use;           /* public calls inside (core/in_use.h) */
  /* Counted outside the lock (sg_exec_get_stats adds them in): only the
   * thread using the executable writes or reads them, and sg_exec_set_*
   * is a per-node path where a lock and unlock are a visible share. */
  uint64_t param_updates;
  uint64_t in_place_updates;
  uint64_t launched;           /* launches accepted (the last launch's number) */
  /* Tracing (options.trace): the launches' times (exec/trace.h; the
   * backend writes them, only the front end swaps or frees the trace), and
   * the label the next launch gets (a pipeline's batch, else
   * SG__TRACE_NO_LABEL). */
  struct sg__trace *trace;
  uint64_t next_label;
  int dump;                    /* SG_TRACE_DIR was set: write the files at destruction */

  pthread_mutex_t lock;        /* guards what follows: backends' threads write it */
  sg_exec_stats stats;
  atomic_int failed;           /* also read without the lock, on every launch and update */
  sg_status fail_status;
  char fail_message[SG_ERROR_MESSAGE_BYTES];
};

/* Records the first failure of a launch (later ones are dropped): the
 * executable is failed from now on. Thread-safe; any thread may call it. */
void sg__exec_fail(sg_exec *exec, sg_status status, const char *fmt, ...) SG_PRINTF(3, 4);
/* 1 if a launch has failed. Thread-safe. */
int sg__exec_has_failed(sg_exec *exec);
/* Counts a rebuild the backend made on its own (an in-place update the
 * driver refused, say). Thread-safe. */
void sg__exec_count_rebuild(sg_exec *exec);
/* Adds to the copy counters of the statistics. Thread-safe. */
void sg__exec_count_copies(sg_exec *exec, uint64_t staged, uint64_t registered);

const struct sg__schedule *sg__exec_schedule(const sg_exec *exec);

/* A backend is about to run user code for `exec` on this thread (a host
 * node, a kernel's or stream function's host twin): until the matching end,
 * a call from that code back into `exec` that would wait for the launch
 * running it (or change what it runs) fails with SG_ERR_BUSY instead of
 * deadlocking. Returns what to give sg__exec_callback_end. */
const sg_exec *sg__exec_callback_begin(const sg_exec *exec);
void sg__exec_callback_end(const sg_exec *previous);

/* The backends, chosen by sg_exec_create: the host backend (src/host), and
 * the CUDA backend (src/cuda; NULL in a build without CUDA). */
const sg__backend_ops *sg__host_backend(void);
const sg__backend_ops *sg__cuda_backend(void);

#endif
