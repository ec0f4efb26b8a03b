/* Internal: the executable object, for the files of src/exec only. Backends
 * see it through exec/backend.h, the pipeline through exec/exec.h. */
#ifndef SG_EXEC_EXEC_INTERNAL_H
#define SG_EXEC_EXEC_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "core/error.h"
#include "core/in_use.h"
#include "core/snapshot.h"
#include "exec/backend.h"
#include "exec/rebuild_hook.h"
#include "streamgraph/exec.h"

struct sg_exec {
  sg_exec_options options;     /* as resolved: backend is CUDA or HOST, max_streams > 0 */
  const sg__backend_ops *ops;
  void *state;                 /* the backend's own state */
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
  struct sg__rebuild *rebuild; /* sg_exec_update_async's slot (exec_rebuild.c); NULL until used */
  struct sg__exec_temps *temps; /* planned temporaries and their arena, or NULL (exec_temps.h) */

  pthread_mutex_t lock;        /* guards what follows: backends' threads write it */
  sg_exec_stats stats;
  atomic_int failed;           /* also read without the lock, on every launch and update */
  sg_status fail_status;
  uint64_t fail_launch;        /* the launch that failed; 0 until known (sg__exec_fail) */
  uint64_t ok_through;         /* launches up to this one were seen finished without failure */
  char fail_message[SG_ERROR_MESSAGE_BYTES];
};

/* Makes a backend state for `snap` and `plan` (the executable's, or a new
 * topology's) into *state, timing launches into `trace` (NULL: untraced);
 * messages start with `fn`. */
sg_status sg__exec_backend_create(sg_exec *exec, const sg__snapshot *snap, const sg_plan *plan,
                                  struct sg__trace *trace, const char *fn, void **state);


/* Same topology: pushes each changed node of `fresh` through the backend
 * (exec_update.c), messages naming `fn`. */
sg_status sg__exec_update_params(sg_exec *exec, sg__snapshot *fresh, const char *fn);

/* ---- exec_rebuild.c: the background rebuild of sg_exec_update_async ---- */

/* At a launch (before its number is taken): switches to a replacement
 * that is ready. SG_OK when there is none, or after switching. */
sg_status sg__exec_rebuild_at_launch(sg_exec *exec, const char *fn);
/* Waits for a pending build and switches to it (or records its failure),
 * so that a synchronous update starts from a settled executable. */
void sg__exec_rebuild_settle(sg_exec *exec);
/* Frees the slot at destruction: a pending build is waited for and freed. */
void sg__exec_rebuild_free(sg_exec *exec);
/* After a switch the retired version's launches may still run (the build
 * thread waits for them, then frees it): 1 while launch `launch` (0: any
 * launch) is one of them and they may not all have ended. */
int sg__exec_rebuild_old_busy(sg_exec *exec, uint64_t launch);
/* Blocks until that is no longer so. */
void sg__exec_rebuild_wait_old(sg_exec *exec, uint64_t launch);


#endif
