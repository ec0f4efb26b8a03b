/* Host work: the nodes that run on a CUDA host thread (cudaLaunchHostFunc in
 * streams mode, a host node in graph mode): user host callbacks, host->host
 * copies and memsets of host memory.
 *
 * The CUDA runtime calls sg__cuda_work_run later, on its own thread, with a
 * pointer it was given at enqueue (or graph build) time. That pointer must
 * stay valid and unchanged until the launch is done, even if the user sets
 * new parameters in the meantime; so a payload is immutable once made, an
 * update makes a new one, and the old one waits on the retired list until
 * the launches that may run it have ended. Updates allocate; launches do
 * not. */
#include <stdio.h>
#include <string.h>

#include "core/sys.h"
#include "cuda/cuda_exec.h"

sg_status sg__cuda_work_new(sg__cuda_state *b, const sg__node *node, const char *label,
                            const char *fn, sg__cuda_work **out) {
  sg__cuda_work *w = sg__calloc(1, sizeof *w);
  if (!w) return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
  w->exec = b->exec;
  w->kind = node->kind;
  w->first = b->launches + 1; /* published for the launches after this one */
  atomic_init(&w->runs, 0);
  switch (node->kind) {
    case SG__NODE_HOST: w->u.host = node->u.host; break;
    case SG__NODE_COPY: w->u.copy = node->u.copy; break;
    default: w->u.memset = node->u.memset; break;
  }
  snprintf(w->label, sizeof w->label, "%s", label);
  *out = w;
  return SG_OK;
}

void sg__cuda_work_retire(sg__cuda_state *b, sg__cuda_work *work) {
  if (!work) return;
  work->last = b->launches;
  work->retired_next = b->retired;
  b->retired = work;
}

void sg__cuda_work_reap(sg__cuda_state *b, uint64_t finished) {
  for (sg__cuda_work **link = &b->retired; *link;) {
    sg__cuda_work *w = *link;
    if (w->last <= finished) {
      *link = w->retired_next;
      sg__free(w);
    } else {
      link = &w->retired_next;
    }
  }
}

/* Runs on a CUDA runtime thread: no CUDA call may be made here (it could
 * deadlock the runtime), and failures go to the executable's failure state.
 * After a failure the rest of the launch's host work is skipped, as on the
 * host backend; GPU work already enqueued still runs. */
void CUDART_CB sg__cuda_work_run(void *payload) {
  sg__cuda_work *w = payload;
  const uint64_t launch = w->first + atomic_fetch_add(&w->runs, 1);
  if (sg__exec_has_failed(w->exec)) return;
  switch (w->kind) {
    case SG__NODE_HOST: {
      /* A callback that waits on its own executable would wait for itself. */
      const sg_exec *outer = sg__exec_callback_begin(w->exec);
      int rc = w->u.host.fn(w->u.host.user_data);
      sg__exec_callback_end(outer);
      if (rc != 0)
        sg__exec_fail_launch(w->exec, launch, SG_ERR_CALLBACK, "launch %llu: host node %s "
                             "returned %d", (unsigned long long)launch, w->label, rc);
      break;
    }
    case SG__NODE_COPY:
      memcpy(w->u.copy.dst, w->u.copy.src, w->u.copy.bytes);
      break;
    default:
      sg__memset_fill(&w->u.memset);
      break;
  }
}
