/* Internal: the one place that decides how a candidate copy (pageable host
 * memory on one side, memory the device reaches on the other) moves - its
 * route, what to do about a registration first, and a staged copy's
 * geometry - from values alone (sg__route_choose, sg__route_geometry).
 * staging.c gathers the values (options, the node's registration state,
 * its launch streak) and carries the answer out. The routes:
 *  - DIRECT: the driver's own pageable path (a memcpy on the host backend);
 *  - STAGE: a ring of pinned chunks (stage_run.h);
 *  - REGISTERED: the buffer pinned in place (regcache.h).
 *
 * The one rule that is about correctness, not speed: a copy that becomes a
 * node of a CUDA graph never takes DIRECT. The driver does not carry out a
 * memcpy node with a pageable side in graph order (seen on the H200: the
 * source read before the graph nodes that write it had run, the destination
 * not complete for the nodes after the copy), so in graph mode every
 * candidate is staged or registered, whatever the policy. */
#ifndef SG_STAGING_POLICY_H
#define SG_STAGING_POLICY_H

#include <stddef.h>

#include "staging/stage_run.h"
#include "streamgraph/staging.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum sg__copy_route {
  SG__ROUTE_DIRECT = 0,
  SG__ROUTE_STAGE,
  SG__ROUTE_REGISTERED
} sg__copy_route;

/* The route of a candidate of `bytes` that does not go through a
 * registration (none exists, or the policy asks for none): DIRECT or STAGE.
 * `dma`: the backend's DMA runs asynchronously to the host (CUDA;
 * sg__stage_mem.dma). `into_graph`: the copy is built into a graph (graph
 * mode). */
sg__copy_route sg__staging_fallback(sg_staging_policy policy, int dma, int into_graph,
                                    size_t bytes, size_t auto_min_bytes);

/* 1 if a candidate of `bytes` may register its buffer now: REGISTER always,
 * AUTO for a copy of at least `auto_min_bytes` that the node has made
 * `streak` launches in a row (at least `register_after`). */
int sg__staging_may_register(sg_staging_policy policy, size_t bytes, size_t auto_min_bytes,
                             unsigned streak, unsigned register_after);

/* Everything a candidate's route depends on, as values. */
typedef struct sg__route_facts {
  sg_staging_policy policy;
  int dma;                 /* the backend's DMA runs asynchronously to the host (CUDA) */
  int into_graph;          /* built into a graph once (graph mode, the persistent regime) */
  size_t bytes;
  size_t auto_min_bytes;   /* AUTO's threshold for the copy's direction */
  unsigned streak;         /* per launch: launches in a row this node copied these
                              parameters, this one included */
  unsigned register_after; /* AUTO registers once the streak reaches this */
  int no_register;         /* a registration of these parameters was refused */
  int reg_pending;         /* a registration of the buffer is being made in the background:
                              no other is asked for; the copy takes `otherwise` until the
                              first route decision after it is done */
} sg__route_facts;

/* What to do about a registration of the copy's host buffer, before the
 * route is taken. */
typedef enum sg__reg_action {
  SG__REG_SKIP = 0,   /* none is looked for */
  SG__REG_EXISTING,   /* one that covers the buffer is used if it exists */
  SG__REG_NOW,        /* the buffer is registered on this thread (or an existing one used) */
  SG__REG_BACKGROUND  /* the buffer is registered on a thread of its own, in pieces (regcache.h);
                         the copy takes `otherwise` (staged) until it is done */
} sg__reg_action;

/* The answer: first `reg`; a usable registration then carries the copy
 * (SG__ROUTE_REGISTERED); otherwise the copy takes `otherwise`, DIRECT or
 * STAGE. One rule belongs to whoever carries a DIRECT copy out on a backend
 * with DMA: the driver refuses a range that is partly registered, so DIRECT
 * is taken only when no registration touches the host range (and none may
 * start until the driver has the copy); otherwise the copy goes through an
 * existing registration that covers it, or is staged. */
typedef struct sg__route_choice {
  sg__reg_action reg;
  sg__copy_route otherwise;
} sg__route_choice;

sg__route_choice sg__route_choose(const sg__route_facts *facts);

/* The piece size of a registration made in the background (AUTO): the
 * buffer is pinned in pieces of this many bytes (a multiple of 4096; `len`
 * itself, one piece, for a small buffer), one cudaHostRegister each, so
 * that no single call holds the driver long: a launch's CUDA calls made
 * while a piece is being pinned wait for that piece only (registering
 * runs at ~18-24 GB/s on the H200 host, so a 1 GiB buffer in one call held
 * the driver ~45-60 ms, and the launch that met it took 4-5x its steady
 * time). A copy through such a registration is one DMA per piece it
 * spans: pieces of an eighth of the buffer keep a piece's pinning near a
 * third of a steady (registered) launch of the buffer, and the extra DMAs
 * cheap (a pinned DMA call costs ~3 us: under 2% at 64 MiB); at least
 * 4 MiB (one piece up to 8 MiB: pinning that takes ~0.4 ms), at most
 * 128 MiB. */
size_t sg__route_reg_piece(size_t len);

/* A staged copy's geometry: the options' chunk size, ring depth and copy
 * threads (each 0: the default of tuning.h for the copy's size, direction
 * and `memops` protocol, on `cpus` CPUs). */
void sg__route_geometry(size_t chunk_bytes, unsigned ring_depth, unsigned copy_threads,
                        int memops, int to_device, size_t bytes, unsigned cpus,
                        sg__stage_geometry *g);

#ifdef __cplusplus
}
#endif
#endif
