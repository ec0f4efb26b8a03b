/* Internal: collectives in one order on every rank.
 *
 * NCCL needs every rank of a communicator to issue its calls in the same
 * order. Two NCCL nodes sharing a communicator that no path of the graph
 * orders could be issued in either order (on two streams, or as two
 * branches of a CUDA graph), and in different orders on different ranks:
 * a deadlock. So the planner orders them as they were created: an implied
 * edge goes from each NCCL node to the next one created that shares a
 * communicator with it. Ranks that build their graphs with the same NCCL
 * calls in the same order (as NCCL asks of direct calls too) get one order.
 * A graph whose edges order such nodes against creation order (a cycle
 * with the implied edges) is refused with SG_ERR_CYCLE naming the pair. */
#ifndef SG_PLAN_COLLECTIVE_ORDER_H
#define SG_PLAN_COLLECTIVE_ORDER_H

#include <stdint.h>

#include "core/snapshot.h"
#include "streamgraph/status.h"

/* The snapshot's edges with the implied ones added. `*edges` gets a copy of
 * `snap` whose succ_start and succ are new arrays (owned: free them with
 * sg__free) when there is an implied edge the graph lacks, else `snap`'s
 * own arrays (nothing to free; *owned 0). `*implied` (owned, may be NULL)
 * lists the implied edges as (from, to) pairs ascending, `*implied_count`
 * of them. SG_ERR_CYCLE or SG_ERR_OUT_OF_MEMORY with a message prefixed
 * "planner". */
sg_status sg__collective_order(const sg__snapshot *snap, sg__snapshot *edges, int *owned,
                               uint32_t **implied, uint32_t *implied_count);

#endif
