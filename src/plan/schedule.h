/* Internal: the schedule a plan holds, as the backends read it.
 *
 * Everything is indexed by node index (0..node_count-1) of the snapshot the
 * plan was made from. Arrays in compressed form: the items of i are
 * x[x_start[i] .. x_start[i+1]).
 *
 * Replaying it: walk `order`; for node n, wait for each event in its wait
 * list, run n on stream stream_of[n], then if record_event[n] >= 0 record
 * that event on the same stream. `order` is a topological order in which each
 * stream's nodes appear in their stream order, so every event is recorded
 * (enqueued) before any wait on it is enqueued. Together, stream order and
 * the events imply every edge of the graph.
 *
 * Nodes may run on several devices (device_count > 1): each stream belongs
 * to one device (stream_device) and holds only nodes of that device; the
 * stream limit applies to each device; events tie streams of any devices
 * together (recorded on the stream of the node before, waited for by a
 * stream of any device). */
#ifndef SG_PLAN_SCHEDULE_H
#define SG_PLAN_SCHEDULE_H

#include <stddef.h>
#include <stdint.h>

typedef struct sg__schedule {
  uint32_t node_count;
  uint32_t stream_count;     /* >= 1 when node_count > 0 */
  uint32_t event_count;
  uint32_t device_count;     /* devices the nodes run on: >= 1 (dense numbers 0..count-1) */
  uint32_t *order;           /* node_count: issue order */
  uint32_t *stream_of;       /* node -> stream */
  uint32_t *position;        /* node -> index within its stream */
  uint32_t *stream_start;    /* stream_count + 1 */
  uint32_t *stream_nodes;    /* node_count: each stream's nodes in order */
  uint32_t *stream_device;   /* stream -> its device (all 0 with one device) */
  uint32_t *wait_start;      /* node_count + 1 */
  uint32_t *wait_event;      /* events node waits on before it starts */
  int32_t *record_event;     /* node -> event recorded right after it, or -1 */
  uint32_t *event_node;      /* event -> the node it is recorded after */
  uint32_t *red_start;       /* node_count + 1: successors after transitive reduction */
  uint32_t *red_succ;        /* (ascending; when reduction_exact is 0, some redundant edges
                                remain: still the same reachability) */
  size_t reduced_edge_count;
  size_t width;              /* DAG width (exact or a lower bound); with several devices,
                                the sum of each device's width (its nodes' largest
                                antichain): the streams needed without a limit */
  int width_exact;
  size_t critical_path;      /* nodes on the longest chain */

  /* Added by the planner for inspection and benchmarks; the replay contract
   * above does not depend on them. */
  uint32_t max_streams;      /* the stream limit the schedule was made under (0 resolved),
                                per device */
  uint32_t chain_count;      /* chains of the cover before they were merged to fit the limit
                                (== stream_count when the limit did not bind) */
  size_t wait_count;         /* == wait_start[node_count] */
  size_t plan_critical_path; /* nodes on the longest path through edges and stream order:
                                == critical_path unless merging streams cost concurrency */
  int reduction_exact;       /* 1: red_succ is the exact transitive reduction */
  int waits_exact;           /* 1: every wait was proved necessary (vector clocks);
                                0: a cheaper check was used, a wait may be redundant */
  /* Programmatic dependent launch (plan/programmatic.c): node -> 1 when
   * every reduced edge into it is programmatic (it is a kernel that opted
   * in, all its reduced predecessors kernels of its device); NULL when no
   * node is. Kept when a deferred plan is completed. */
  uint8_t *programmatic;
  size_t programmatic_edge_count; /* reduced edges into programmatic nodes */
  int streams_planned;       /* 1: everything above is filled; 0: only order, the reduced
                                edges and the figures before them (sg__schedule_build_edges):
                                stream_count is 0 and the stream and event arrays NULL */
} sg__schedule;

#endif
