/* Internal: staging as the backends see it - one object per executable that
 * knows which copy nodes are staged or registered, and runs them.
 *
 * A copy node is a candidate when it moves data between pageable host
 * memory (as the node's pointers were classified, or a buffer this
 * library's registration cache pinned) and memory the device reaches
 * (device or managed memory; the host backend's emulated device memory
 * there). Candidates take one of three routes (policy.h): DIRECT (the
 * driver's pageable path, or memcpy), STAGE (a ring of pinned chunks,
 * stage_run.h) or REGISTERED (the buffer pinned in place, regcache.h).
 * On the CUDA backend every executable has this object, whatever the
 * policy, since graph mode stages even under SG_STAGING_NONE.
 *
 * Two regimes, chosen by the backend:
 *  - per launch (streams mode): the route is chosen at every launch on the
 *    caller's thread, the ring is taken from the pool then (waiting, if need
 *    be, for rings that launches in flight give back) and given back by the
 *    copy's last callback;
 *  - persistent (graph mode): a CUDA graph bakes addresses in, so routes,
 *    rings and registrations are chosen and taken before a graph is built
 *    (at creation, and when a node's parameters change), as "prepared
 *    states", one per parameter set. A state never changes once made: a
 *    rebuild that fails leaves the old graph with the old state intact. A
 *    state is freed once no live graph can use it (sg__staging_gc), or with
 *    the executable. On CUDA a prepared state is never DIRECT. */
#ifndef SG_STAGING_EXEC_STAGING_H
#define SG_STAGING_EXEC_STAGING_H

#include <stddef.h>
#include <stdint.h>

#include "core/node.h"
#include "exec/backend.h"
#include "staging/policy.h"
#include "staging/regcache.h"
#include "staging/stage_run.h"

/* Persistent regime: what one parameter set of a copy node holds. */
typedef struct sg__pstate {
  struct sg__pstate *next;
  sg__stage_dir dir;
  const void *src;
  void *dst;
  size_t bytes;
  sg__copy_route route;
  sg__stage_run *run;          /* STAGE: the ring */
  sg__reg_binding *reg;        /* REGISTERED: a held binding */
} sg__pstate;

typedef struct sg__staged_node {
  sg__stage_dir dir;           /* for the snapshot's parameters; NONE: not a candidate */
  /* per-launch regime */
  sg__reg_binding *reg;        /* a binding to a registration, or NULL */
  unsigned streak;             /* AUTO: launches since the node was set */
  int no_register;             /* registration was refused; stage until the node changes */
  int direct;                  /* a DIRECT copy is being handed to the driver (guarded) */
  const void *seen_src;        /* the parameters the above were made for */
  const void *seen_dst;
  size_t seen_bytes;
  /* persistent regime */
  sg__pstate *states;
} sg__staged_node;

typedef struct sg__staging {
  sg_exec *exec;
  int on_cuda;                 /* the CUDA backend (else the host backend) */
  int persistent;              /* graph mode */
  sg__stage_protocol protocol; /* of every staged copy (stage_run.h), chosen at creation */
  sg_staging_policy policy;
  sg_pinned_pool *requested;   /* options.staging.pool (NULL: default) */
  sg_pinned_pool *pool;        /* attached once a candidate may be staged */
  size_t chunk_bytes;          /* 0: adapted to each copy (tuning.h) */
  size_t min_bytes;
  unsigned copy_threads;       /* 0: the default of each direction (tuning.h) */
  unsigned ring_depth, register_after;
  uint32_t node_count;
  sg__staged_node *nodes;      /* by node index */
  struct sg__stage_lanes *lanes; /* CUDA streams mode: helper streams (cuda_lanes.h) */
} sg__staging;

/* At executable creation, after the backend's own checks. *out is NULL when
 * staging can never apply (policy NONE or AUTO on the host backend, whose
 * memcpy runs in order): the backend then copies directly. `persistent`:
 * graph mode (every candidate's state is prepared now; SG_ERR_POOL_EXHAUSTED
 * when the pool cannot hold the rings). Errors come with their message,
 * prefixed `fn` (sg_exec_create, or sg_exec_update for a new topology). */
sg_status sg__staging_create(sg_exec *exec, int persistent, const char *fn, sg__staging **out);
/* Nothing of the executable may be in flight. NULL is accepted. */
void sg__staging_destroy(sg__staging *st);
/* Labels a run of node `index` for the executable's trace (if traced) and
 * NVTX ranges (stage_run.h: sg__stage_run_trace). */
void sg__staging_trace_run(const sg__staging *st, sg__stage_run *run, uint32_t index);

/* The direction of `c` if it is a candidate under `st`, else SG__STAGE_NONE
 * (st may be NULL). */
sg__stage_dir sg__staging_classify(const sg__staging *st, const sg__copy *c);
/* The direction of node `index` as the snapshot has it (st may be NULL). */
sg__stage_dir sg__staging_candidate(const sg__staging *st, uint32_t index);

/* 1 if a host side of `c` is pinned only because the CUDA registration
 * cache pinned it: the CUDA backend then routes it to the staging seam like
 * pageable memory, so that it stays under the cache's in-flight rules. */
int sg__staging_cache_pinned(const sg__copy *c);

/* Persistent regime: makes sure a state exists for node `index` with the
 * parameters of `c` (nothing when `c` is no candidate). Messages prefixed
 * `where`. */
sg_status sg__staging_prepare(sg__staging *st, uint32_t index, const sg__copy *c,
                              const char *where);
/* The prepared state for node `index` with the parameters of `c`, or NULL. */
sg__pstate *sg__staging_find(const sg__staging *st, uint32_t index, const sg__copy *c);
/* Frees node `index`'s states other than the one for the snapshot's
 * parameters (and the one for `also_keep`, when not NULL: an update about
 * to be built). Only when no live graph was built with another one: outside
 * a build, after the last rebuild finished one way or the other. */
void sg__staging_gc(sg__staging *st, uint32_t index, const sg__copy *also_keep);

/* The host backend: node `index` gets the parameters of `fresh` (the
 * executable is idle). On error the node keeps its old state. */
sg_status sg__staging_update_node(sg__staging *st, uint32_t index, const sg__node *fresh);
/* The CUDA backend, before it applies new parameters `fresh` to node
 * `index` (before any rebuild, and outside any stream capture, since this
 * may allocate pinned memory or register a buffer). Per-launch regime: as
 * sg__staging_update_node. Persistent: prepares the state for `fresh`;
 * the old one stays until no graph can use it. On error (with its message)
 * the update should be refused. */
sg_status sg__staging_prepare_update(sg__staging *st, uint32_t index, const sg__node *fresh);

/* Persistent regime: adds one launch's copies to the statistics (a CUDA
 * graph's copies are counted per launch, not per build). */
void sg__staging_count_launch(sg__staging *st);
/* Persistent regime, memop protocol: arms the ring of every staged copy of
 * the graph for one launch that has just been enqueued (stage_conductor.h),
 * with `watch` (st may be NULL). 1 if the graph has such a copy. */
int sg__staging_arm_launch(sg__staging *st, const sg__stage_watch *watch);
/* Memop protocol: the rings of launches that have ended are back in the
 * pool when this returns (after a wait; st may be NULL). */
void sg__staging_settle(sg__staging *st);
/* Memop protocol: the executable is being destroyed and its launches are
 * over: no armed ring reports to `report_ctx` (or uses its streams) any
 * more (st may be NULL). */
void sg__staging_disown(sg__staging *st, void *report_ctx);
/* Which protocol an executable on `on_cuda` (device `device`) uses: the
 * memop protocol where the device supports it, unless SG_STAGING_PROTOCOL
 * is "callbacks" (docs/staging.md). */
sg__stage_protocol sg__staging_protocol_for(int on_cuda, int device);
/* Counts one execution of a copy by `route`. */
void sg__staging_count(sg__staging *st, sg__copy_route route);

/* Per-launch regime: chooses the route of candidate `index` for this
 * launch, on the caller's thread. On SG__ROUTE_REGISTERED the use is begun
 * (end it with sg__reg_use_end on nodes[index].reg once enqueued). DIRECT
 * for NONE, and for AUTO below auto_min_bytes without a registration; on
 * CUDA only when no registration touches the host range (else REGISTERED
 * through one that covers it, or STAGE), and then guarded: call
 * sg__staging_direct_end once the driver has the copy. */
sg_status sg__staging_route(sg__staging *st, uint32_t index, const char *where,
                            sg__copy_route *route);
/* Ends the guard of a DIRECT route of node `index` (nothing if none). */
void sg__staging_direct_end(sg__staging *st, uint32_t index);
/* "copy node 'name' (#3)". */
const char *sg__staging_label(const sg__staging *st, uint32_t index,
                              char buf[SG__LABEL_BYTES + 16]);
/* The pageable and device sides of copy `c` in direction `dir`. */
void sg__staging_sides(const sg__copy *c, sg__stage_dir dir, void **host, void **device);
/* The ring of a staged copy of `bytes` in direction `dir`: the options, and
 * for what they leave at zero the defaults of tuning.h. */
void sg__staging_geometry(const sg__staging *st, sg__stage_dir dir, size_t bytes,
                          sg__stage_geometry *g);

#endif
