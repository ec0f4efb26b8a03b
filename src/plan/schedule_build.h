/* Internal: computing a schedule from a DAG given as compressed successor
 * lists. Pure C: no graph object, no CUDA, so it can be tested on any DAG.
 *
 * The steps (docs/plan.md explains each and its cost):
 *   topo.c          issue order (topological, by longest-path level), levels
 *   cover_greedy.c  a first chain cover along edges
 *   cover_augment.c minimum chain cover (Dilworth) by augmenting paths over
 *                   the transitive closure, explored implicitly
 *   reduce*.c       transitive reduction: level-pruned searches, else a chain
 *                   reachability index
 *   merge.c         chains -> streams, merging chains under a stream limit
 *   layout.c        stream numbering, positions, the plan's critical path
 *   events.c        the fewest event waits, by vector clocks over streams
 *
 * Exact methods run when their cost fits the budgets below (all in units of
 * simple operations or table cells, never O(n^2) memory); otherwise a
 * near-linear fallback is used and the schedule says so (width_exact,
 * reduction_exact, waits_exact). */
#ifndef SG_PLAN_SCHEDULE_BUILD_H
#define SG_PLAN_SCHEDULE_BUILD_H

#include <stdint.h>

#include "plan/schedule.h"
#include "streamgraph/status.h"

/* The stream limit of a caller that gives none. The planner knows no
 * device: the executable front end passes the device's limit (the number of
 * hardware queues, exec/exec.h), and this is only the planner's own answer
 * for a bare 0 (tests, benchmarks). */
#define SG__PLAN_DEFAULT_STREAMS 8u

typedef struct sg__plan_limits {
  /* Edge and node visits the augmenting phases of the chain cover may spend;
   * past it the cover found so far is kept and width is a lower bound. */
  uint64_t cover_work;
  /* Edge visits of the level-pruned searches of the transitive reduction, in
   * all; each node's search gets this / n and is exact unless cut short. */
  uint64_t reduce_search_work;
  /* (nodes + edges) x chains: the cost of the exact chain-index reduction,
   * run when a search was cut short. Above both, a few redundant edges may
   * remain (reduction_exact = 0). */
  uint64_t reduce_work;
  /* (nodes + edges + streams) x streams: the cost (and table cells) of
   * dense vector clocks. Above it, waits use direct knowledge only. */
  uint64_t clock_work;
  /* Merging chains onto a binding limit: a per-stream table of levels is
   * used when streams <= merge_scan_streams and streams x levels cells <=
   * merge_scan_cells; otherwise intervals of levels. */
  uint32_t merge_scan_streams;
  uint64_t merge_scan_cells;
} sg__plan_limits;

/* The budgets used by sg__schedule_build (chosen so that 100,000 nodes and
 * 300,000 edges plan well within a second and ~100 MB). */
void sg__plan_limits_default(sg__plan_limits *limits);

/* Plans a DAG of `node_count` nodes whose successors of i are
 * succ[succ_start[i] .. succ_start[i+1]) (distinct, ascending, no self-edge)
 * on at most `max_streams` streams (0: SG__PLAN_DEFAULT_STREAMS).
 * SG_ERR_INVALID_ARGUMENT for malformed input, SG_ERR_CYCLE for a cycle,
 * SG_ERR_OUT_OF_MEMORY; on failure *out is zeroed and nothing is left
 * allocated. Messages start with "planner: ". */
sg_status sg__schedule_build(uint32_t node_count, const uint32_t *succ_start, const uint32_t *succ,
                             unsigned max_streams, sg__schedule *out);

/* The same with explicit budgets (tests force the fallbacks with tiny ones). */
sg_status sg__schedule_build_ex(uint32_t node_count, const uint32_t *succ_start,
                                const uint32_t *succ, unsigned max_streams,
                                const sg__plan_limits *limits, sg__schedule *out);

/* The same for nodes on several devices: node i runs on device
 * device_of[i] (dense numbers below device_count, which is at most
 * SG__PLAN_MAX_DEVICES; device_of NULL means one device). Streams hold
 * nodes of one device (schedule.stream_device), `max_streams` limits each
 * device's streams, and without a binding limit each device gets as many
 * streams as its nodes' width (the largest set of them that the DAG leaves
 * mutually independent, paths through other devices included). `limits`
 * NULL: the defaults. */
#define SG__PLAN_MAX_DEVICES 1024u
sg_status sg__schedule_build_devices(uint32_t node_count, const uint32_t *succ_start,
                                     const uint32_t *succ, const uint32_t *device_of,
                                     uint32_t device_count, unsigned max_streams,
                                     const sg__plan_limits *limits, sg__schedule *out);

/* Only what a graph built from the reduced edges needs: the issue order,
 * the reduced edges, the levels' figures and the width. The stream and
 * event fields are left 0 / NULL and streams_planned is 0; the same input
 * given to sg__schedule_build gives the same order and reduced edges, plus
 * the rest. Streams and events are most of the planner's work on graphs
 * with many edges, and a CUDA graph built node by node uses neither. */
sg_status sg__schedule_build_edges(uint32_t node_count, const uint32_t *succ_start,
                                   const uint32_t *succ, unsigned max_streams,
                                   sg__schedule *out);
/* The same with devices (as for sg__schedule_build_devices): the width is
 * the sum of the devices' widths, as the full build reports it. */
sg_status sg__schedule_build_edges_devices(uint32_t node_count, const uint32_t *succ_start,
                                           const uint32_t *succ, const uint32_t *device_of,
                                           uint32_t device_count, unsigned max_streams,
                                           sg__schedule *out);
/* Frees what a schedule holds and zeroes it; a zeroed schedule is fine. */
void sg__schedule_free(sg__schedule *s);

#endif
