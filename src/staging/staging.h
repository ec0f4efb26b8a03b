/* Internal: staging as a backend uses it - one object per executable that
 * knows which copy nodes are staged or registered, and how.
 *
 * Staging never reads the executable: a backend hands it what it needs, a
 * node index and that node's copy parameters (`sg__copy`), plus `where`, the
 * start of any message ("sg_exec_create: copy node 'c' (#3)"). It reaches
 * memory only through the backend's table (stage_mem.h).
 *
 * A copy node is a candidate when it moves data between pageable host
 * memory (as the node's pointers were classified, or a buffer this
 * library's registration cache pinned) and memory the device side of a
 * staged copy reaches (stage_mem.h: device or managed memory on CUDA; the
 * host backend's emulated device memory there). sg__staging_classify is
 * the one place that decides it; a backend calls it once each time a copy
 * node gets parameters (creation, every update) and hands the answer to
 * staging with the parameters. Candidates take one of three routes
 * (policy.h): DIRECT (the driver's pageable path, or memcpy), STAGE (a ring
 * of pinned chunks, stage_run.h) or REGISTERED (the buffer pinned in place,
 * regcache.h).
 *
 * Two regimes, chosen by the backend:
 *  - per launch (streams mode): the route is chosen at every launch on the
 *    caller's thread (sg__staging_route), the ring is taken from the pool
 *    then (waiting, if need be, for rings that launches in flight give
 *    back) and given back by the copy's last callback;
 *  - persistent (graph mode): a CUDA graph bakes addresses in, so routes,
 *    rings and registrations are chosen and taken before a graph is built
 *    (at creation, and when a node's parameters change), as "prepared
 *    states", one per parameter set. A state never changes once made: a
 *    rebuild that fails leaves the old graph with the old state intact. A
 *    state is freed once no live graph can use it (sg__staging_gc), or
 *    with the executable. With DMA (CUDA) a prepared state is never DIRECT. */
#ifndef SG_STAGING_STAGING_H
#define SG_STAGING_STAGING_H

#include <stddef.h>
#include <stdint.h>

#include "core/node.h"
#include "staging/policy.h"
#include "staging/regcache.h"
#include "staging/stage_mem.h"
#include "staging/stage_run.h"

/* Persistent regime: what a copy node's graph needs for a route. A staged
 * state serves every copy of its direction and size, whatever its
 * addresses (the pageable side is given per launch, the device side per
 * build or in-place update); a registered one serves its own buffer. */
typedef struct sg__pstate {
  struct sg__pstate *next;
  sg__stage_dir dir;
  const void *host;            /* REGISTERED: the buffer pinned in place */
  size_t bytes;
  sg__copy_route route;
  sg__stage_run *run;          /* STAGE: the ring */
  sg__reg_binding *reg;        /* REGISTERED: a held binding */
} sg__pstate;

typedef struct sg__staged_node {
  sg__stage_dir dir;           /* for the node's parameters; NONE: not a candidate */
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
  const sg__stage_mem *mem;    /* the backend's memory */
  int device;                  /* the executable's device */
  int persistent;              /* graph mode */
  sg__copy_spans spans;        /* where copy threads' spans go (workers.h) */
  sg__stage_protocol protocol; /* of every staged copy (stage_run.h), chosen with the pool */
  sg_staging_policy policy;
  sg_pinned_pool *requested;   /* options.staging.pool (NULL: default) */
  sg_pinned_pool *pool;        /* attached once a candidate may be staged */
  size_t chunk_bytes;          /* 0: adapted to each copy (tuning.h) */
  size_t min_bytes;            /* options.staging.auto_min_bytes (0: by direction, tuning.h) */
  unsigned copy_threads;       /* 0: the default of each direction (tuning.h) */
  unsigned ring_depth, register_after;
  uint32_t node_count;
  sg__staged_node *nodes;      /* by node index */
} sg__staging;

/* At executable creation, before the backend hands over its copy nodes
 * (sg__staging_add). *out is NULL when staging can never apply (policy NONE
 * or AUTO without DMA: the host backend's memcpy runs in order); the
 * backend then copies directly. `persistent`: graph mode. `spans`: where
 * copy threads report their parts (the executable's trace), or NULL.
 * Errors (options out of range, a bad staging.pool) come with their
 * message, prefixed `fn`. `device`: the executable's (the memop protocol's
 * support is asked of it). */
sg_status sg__staging_create(const sg_staging_options *options, const sg__stage_mem *mem,
                             int device, int persistent, uint32_t node_count,
                             const sg__copy_spans *spans, const char *fn, sg__staging **out);
/* Nothing of the executable may be in flight. NULL is accepted. */
void sg__staging_destroy(sg__staging *st);
/* Labels a run of node `index` (named `name`, or NULL) for the executable's
 * trace (if traced) and NVTX ranges (stage_run.h: sg__stage_run_trace). */
void sg__staging_trace_run(const sg__staging *st, sg__stage_run *run, uint32_t index,
                           const char *name);

/* The one decision about a copy: the direction of `c` if it is a candidate
 * for a backend whose memory is `mem`, else SG__STAGE_NONE. */
sg__stage_dir sg__staging_classify(const sg__stage_mem *mem, const sg__copy *c);
/* The direction of node `index` as staging was last told (st may be NULL). */
sg__stage_dir sg__staging_candidate(const sg__staging *st, uint32_t index);

/* At creation: copy node `index` (named `name`, or NULL: for traces and
 * NVTX ranges only) has the parameters `c`, classified `dir`. Takes the
 * pool when the node may be staged; persistent regime: prepares its state
 * (SG_ERR_POOL_EXHAUSTED when the pool cannot hold the ring). */
sg_status sg__staging_add(sg__staging *st, uint32_t index, const char *name, const sg__copy *c,
                          sg__stage_dir dir, const char *where);
/* Node `index` (named `name`, as for sg__staging_add) gets the parameters
 * `c`, classified `dir` (nothing of the executable is in flight on the host
 * backend; on CUDA, before any rebuild and outside any stream capture,
 * since this may allocate pinned memory or register a buffer). Per-launch
 * regime: the route is chosen again from the next launch on. Persistent:
 * prepares the state for `c`; with `drop_others` the node's other states go
 * (nothing can use them: the host backend), else they stay until
 * sg__staging_gc (a CUDA graph may still use the old one). On error (with
 * its message) the update should be refused; the node keeps its old state. */
sg_status sg__staging_update(sg__staging *st, uint32_t index, const char *name,
                             const sg__copy *c, sg__stage_dir dir, int drop_others,
                             const char *where);

/* Persistent regime: makes sure a state exists for node `index` (named
 * `name`, or NULL) with the parameters of `c` (nothing when `c` is no
 * candidate). */
sg_status sg__staging_prepare(sg__staging *st, uint32_t index, const char *name,
                              const sg__copy *c, const char *where);
/* The prepared state that serves node `index` with the parameters of `c`
 * (a candidate), or NULL: the registration of its buffer if one was
 * prepared, else the ring of its size and direction. */
sg__pstate *sg__staging_find(const sg__staging *st, uint32_t index, const sg__copy *c);
/* Frees node `index`'s states other than `keep` (the one the live graph
 * was built with, or NULL) and `also_keep` (an update about to be built,
 * or NULL). Only when no live graph was built with another one: outside a
 * build, after the last rebuild finished one way or the other. */
void sg__staging_gc(sg__staging *st, uint32_t index, const sg__pstate *keep,
                    const sg__pstate *also_keep);

/* Per-launch regime: chooses the route of candidate `index`, whose
 * parameters are `c`, for this launch, on the caller's thread. On
 * SG__ROUTE_REGISTERED the use is begun (end it with sg__reg_use_end on
 * nodes[index].reg once enqueued); with DMA the copy is one DMA per piece
 * of the registration it spans (sg__reg_binding_pieces). A registration
 * in the background is never waited for: the copy stages meanwhile. DIRECT for NONE, and for AUTO below
 * auto_min_bytes without a registration; with DMA only when no
 * registration touches the host range (else REGISTERED through one that
 * covers it, or STAGE), and then guarded: call sg__staging_direct_end once
 * the driver has the copy. When `c` is not what staging was last told (an
 * update that bypassed sg__staging_update), the node's route bookkeeping
 * starts again first. */
sg_status sg__staging_route(sg__staging *st, uint32_t index, const sg__copy *c, const char *where,
                            sg__copy_route *route);
/* Ends the guard of a DIRECT route of node `index`, parameters `c`
 * (nothing if none). */
void sg__staging_direct_end(sg__staging *st, uint32_t index, const sg__copy *c);
/* Per launch, around everything a backend does for one copy node (the
 * route, the enqueue, sg__staging_direct_end), failed or not: a
 * background registration pins no piece meanwhile (regcache.h), so that
 * the launch's CUDA calls do not wait behind it. */
void sg__staging_enqueue_begin(const sg__staging *st);
void sg__staging_enqueue_end(const sg__staging *st);
/* The pageable and device sides of copy `c` in direction `dir`. */
void sg__staging_sides(const sg__copy *c, sg__stage_dir dir, void **host, void **device);
/* The ring of a staged copy of `bytes` in direction `dir`: the options, and
 * for what they leave at zero the defaults of tuning.h. */
void sg__staging_geometry(const sg__staging *st, sg__stage_dir dir, size_t bytes,
                          sg__stage_geometry *g);
/* Which protocol an executable on the backend of `mem` (device `device`)
 * uses: the memop protocol where the device supports it, unless
 * SG_STAGING_PROTOCOL is "callbacks" (docs/staging.md). */
sg__stage_protocol sg__staging_protocol_for(const sg__stage_mem *mem, int device);

/* Memop protocol: the rings of launches that have ended are back in the
 * pool when this returns (after a wait; st may be NULL). */
void sg__staging_settle(sg__staging *st);
/* Memop protocol: the executable is being destroyed and its launches are
 * over: no armed ring reports to `report_ctx` (or uses its streams) any
 * more (st may be NULL). */
void sg__staging_disown(sg__staging *st, void *report_ctx);

/* "copy node 'name' (#3)": how messages of staged copies name a node. */
#define SG__STAGING_LABEL_BYTES (SG__LABEL_BYTES + 16)
const char *sg__staging_label(const sg__node *node, uint32_t index,
                              char buf[SG__STAGING_LABEL_BYTES]);

#endif
