/* Internal: which way a candidate copy (pageable host memory on one side,
 * memory the device reaches on the other) may go, by policy, the backend's
 * kind of DMA and regime. The routes:
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

#ifdef __cplusplus
}
#endif
#endif
