/* The host backend's staged copies: a candidate copy node runs on the
 * worker thread that reached it, through the pinned ring (the DMA emulated
 * by memcpy) or a registered buffer, as staging routes it.
 *
 * Under the memop protocol the worker thread plays the GPU's stream: it
 * carries out the copy's program (staging/stage_program.h) operation by
 * operation, blocking on the flags as the device does, while the pool's
 * conductor drives the host side exactly as for a CUDA copy. Each
 * operation is a fault point (SG_FAULT_SYSTEM) standing for the CUDA
 * backend's enqueue of it failing, so that the cut-short path runs here
 * too. */
#include "host/host_staging.h"

#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "core/sys.h"
#include "staging/stage_conductor.h"
#include "staging/stage_program.h"

/* What the conductor reports about a failed copy (before it releases it:
 * so before the emulated stream can finish the program). */
typedef struct host_report {
  sg_status status;
  char message[SG_ERROR_MESSAGE_BYTES];
} host_report;

static void report(void *ctx, sg_status status, const char *message) {
  host_report *r = ctx;
  if (r->status) return;
  r->status = status;
  snprintf(r->message, sizeof r->message, "%s", message);
}

typedef struct emulated_stream {
  const sg__stage_run *run;
  uint32_t taken; /* operations carried out */
} emulated_stream;

static int emulate(void *ctx, const sg__stage_op *op) {
  emulated_stream *e = ctx;
  if (sg__fault_hit(SG_FAULT_SYSTEM)) return 1; /* "the enqueue failed" */
  sg__stage_op_run(e->run, op);
  e->taken++;
  return 0;
}

/* A memop-protocol run on this thread; the run may be freed when this
 * returns (a transient one is the conductor's once armed). */
static sg_status run_memops(sg__stage_run *run, const char *label, char *message, size_t cap) {
  sg_pinned_pool *pool = run->pool;
  char where[SG__STAGE_WHERE_BYTES];
  snprintf(where, sizeof where, "sg_exec_launch: %s", label);
  host_report r = {SG_OK, ""};
  const sg__stage_watch watch = {report, &r, NULL, NULL};
  emulated_stream e = {run, 0};
  sg__stage_arm(run, &watch, where);
  if (sg__stage_program(run, run->persistent, emulate, &e)) {
    /* As the CUDA backend: release what went in, mark its end. */
    sg__stage_abandon(run);
    sg__flag_store(&run->flags->done, SG__FLAG_ABANDONED);
    sg__stage_end_at(run, SG__END_ABANDONED);
    snprintf(message, cap, "%s: the emulated stream could not take operation %u of the staged "
             "copy (injected fault)", where, e.taken);
    sg__stage_settle(pool);
    return SG_ERR_SYSTEM;
  }
  sg__stage_settle(pool);
  if (r.status) snprintf(message, cap, "%s", r.message);
  return r.status;
}

sg_status sg__host_staged_run(sg__staging *st, uint32_t index, const sg__node *node,
                              sg_exec *exec, char *message, size_t cap) {
  sg__staged_node *sn = &st->nodes[index];
  const sg__copy *c = &node->u.copy;
  char label[SG__STAGING_LABEL_BYTES];
  sg__staging_label(node, index, label);
  sg__copy_route route = SG__ROUTE_DIRECT;
  sg__stage_run *run = NULL;
  sg_status s = SG_OK;
  if (st->persistent) {
    const sg__pstate *p = sg__staging_find(st, index, c);
    if (p) {
      route = p->route;
      run = p->run;
    }
    if (run) {
      /* As a graph launch does (src/cuda/staged_copy.c): this launch's
       * pageable side goes to the host side, the device side to the
       * emulated DMA (nothing else of the executable runs meanwhile). */
      void *host, *device;
      sg__staging_sides(c, sn->dir, &host, &device);
      s = sg__stage_launch_reserve(run, label);
      if (!s) {
        sg__stage_launch_queue(run, host);
        run->device = device;
      }
    }
  } else {
    /* The route is this backend's enqueue (what follows is the emulated
     * device's work): no piece of a background registration is pinned
     * meanwhile, as on CUDA. */
    sg__staging_enqueue_begin(st);
    s = sg__staging_route(st, index, c, label, &route);
    sg__staging_enqueue_end(st);
    if (!s && route == SG__ROUTE_STAGE) {
      void *host, *device;
      sg__staging_sides(c, sn->dir, &host, &device);
      sg__stage_geometry g;
      sg__staging_geometry(st, sn->dir, c->bytes, &g);
      s = sg__stage_run_new(st->pool, sn->dir, host, device, &g, 0, NULL, NULL, label, &run);
      if (!s && st->protocol == SG__STAGE_MEMOPS && (s = sg__stage_run_use_memops(run, label))) {
        sg__stage_run_free(run);
        run = NULL;
      }
      if (!s) sg__staging_trace_run(st, run, index, node->name);
    }
  }
  if (s) {
    sg__format(message, cap, "%s", sg_last_error());
    return s;
  }
  if (route == SG__ROUTE_STAGE && run->protocol == SG__STAGE_MEMOPS) {
    s = run_memops(run, label, message, cap);
    if (s) return s;
  } else if (route == SG__ROUTE_STAGE) {
    sg__stage_run_host(run);
    if (!st->persistent) sg__stage_run_free(run);
  } else {
    memcpy(c->dst, c->src, c->bytes);
    if (route == SG__ROUTE_REGISTERED && !st->persistent) sg__reg_use_end(sn->reg, NULL, label);
  }
  if (route != SG__ROUTE_DIRECT)
    sg__exec_count_copies(exec, route == SG__ROUTE_STAGE, route == SG__ROUTE_REGISTERED);
  return SG_OK;
}
