/* Internal: planned temporaries - where each one lives in its executable's
 * arena (docs/buffers.md).
 *
 * Two temporaries may share bytes only when every node using one finishes
 * before any node using the other starts, under the happens-before of the
 * schedule that will actually run:
 *  - a schedule whose streams are planned runs its nodes in stream order
 *    and across streams through events: a node starts after the nodes
 *    before it on its stream and after the nodes whose events it waits for
 *    (and all they waited for). Two nodes the graph leaves unordered are
 *    still ordered when the plan put them on one stream; two nodes the
 *    graph orders through a long path may be ordered sooner.
 *  - a CUDA graph built from the reduced edges (a deferred plan) runs each
 *    node after its predecessors only: happens-before is reachability in
 *    the graph.
 * Both are tracked with vector clocks over chains of nodes (the streams, or
 * a path cover of the graph), so "a happens before b" costs one lookup,
 * and "every use of A happens before every use of B" a few. */
#ifndef SG_PLAN_MEMPLAN_H
#define SG_PLAN_MEMPLAN_H

#include <stddef.h>
#include <stdint.h>

#include "core/access.h"
#include "plan/schedule.h"

/* The arena's base alignment: every temporary's alignment divides it. */
#define SG__ARENA_ALIGN 4096u

typedef struct sg__memplan {
  uint32_t temp_count;
  size_t *offset;            /* temp -> its offset in the arena */
  size_t arena_bytes;        /* the arena's size: the peak of the packing */
  size_t no_reuse_bytes;     /* what every temporary in its own bytes would take */
  int dag_order;             /* 1: happens-before is graph reachability (deferred plan) */
  int algorithm;             /* 0: none needed, 1: greedy by size, 2: sweep in issue order */
} sg__memplan;

/* What the planner reads: the schedule (its order always; its streams and
 * events when planned), the graph's successor lists (with inferred edges;
 * used when the streams are not planned), and the temporaries with their
 * uses. `reuse` 0 gives each temporary its own bytes (for comparison).
 * SG_ERR_OUT_OF_MEMORY (message "planner: out of memory ...") leaves *out
 * zeroed. */
sg_status sg__memplan_build(const sg__schedule *s, const uint32_t *succ_start,
                            const uint32_t *succ, const sg__access_table *t, int reuse,
                            sg__memplan *out);
void sg__memplan_free(sg__memplan *m);

/* Proves the packing safe with an independent method: happens-before by
 * search over the schedule's own edges (stream order and event waits, or
 * the graph's edges), then every pair of temporaries whose bytes overlap
 * must have every use of one reach every use of the other. SG_OK, or (a
 * planner bug) SG_ERR_INVALID_ARGUMENT with a message "planner: ..."
 * naming both temporaries and two unordered uses; SG_ERR_OUT_OF_MEMORY.
 * Quadratic: for tests and debug builds (a few thousand nodes). */
sg_status sg__memplan_check(const sg__schedule *s, const uint32_t *succ_start,
                            const uint32_t *succ, const sg__access_table *t,
                            const sg__memplan *m);

/* A lower bound on any packing's peak under the same happens-before: the
 * largest total size of temporaries that pairwise may be live at once
 * found by a greedy search (a clique of the conflict graph grown from each
 * node's live set); so arena_bytes / bound >= the true ratio. */
sg_status sg__memplan_lower_bound(const sg__schedule *s, const uint32_t *succ_start,
                                  const uint32_t *succ, const sg__access_table *t,
                                  size_t *bound);

#endif
