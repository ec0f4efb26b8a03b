/*
 * streamgraph/plan.h - the plan: which stream each node runs on, in which
 * order, and which events tie the streams together.
 *
 * A plan is computed once from a graph, in plain C, with no CUDA call. Every
 * backend replays the same plan. It can be inspected node by node and written
 * as Graphviz DOT.
 */
#ifndef STREAMGRAPH_PLAN_H
#define STREAMGRAPH_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "graph.h"
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sg_plan sg_plan;

/* Plans `graph` with at most `max_streams` streams (0: the default limit,
 * CUDA_DEVICE_MAX_CONNECTIONS when set, else 8). SG_ERR_CYCLE names the
 * nodes of one cycle. The plan is a snapshot: the graph may change after.
 *
 * Unless the limit binds, the plan puts two nodes on one stream only when one
 * depends on the other, and uses as many streams as the graph's width (the
 * fewest possible; exact up to very large graphs, see width_exact). When the
 * width exceeds the limit, chains of nodes are merged onto the limit's
 * streams, choosing merges that cost the least concurrency. Events carry
 * every cross-stream dependency that stream order and earlier events do not
 * already imply. With nodes on several devices, the limit holds per device
 * and width counts each device's nodes apart (sg_plan_get_stream_device).
 * docs/plan.md describes the algorithms. */
SG_API sg_status sg_plan_create(const sg_graph *graph, unsigned max_streams, sg_plan **out);
/* Frees a plan made by sg_plan_create. A plan obtained from an executable
 * (sg_exec_get_plan) belongs to it: SG_ERR_INVALID_ARGUMENT. */
SG_API sg_status sg_plan_destroy(sg_plan *plan);

typedef struct sg_plan_summary {
  size_t node_count;
  size_t edge_count;           /* distinct edges of the graph */
  size_t reduced_edge_count;   /* edges left after transitive reduction (exact up to a few
                                  thousand nodes; on very large, wide graphs only edges implied
                                  by two-edge paths are removed) */
  unsigned stream_count;       /* == min(width, max_streams) when the width is exact */
  unsigned event_count;        /* events recorded per launch; each is waited for by one or
                                  more other streams */
  unsigned max_streams;        /* the limit the plan was made under (0 resolved) */
  size_t width;                /* the DAG's width (largest set of mutually independent nodes);
                                  with nodes on several devices, each device's summed */
  int width_exact;             /* 1 if `width` is exact, 0 if it is a lower bound
                                  (large graphs use a near-linear method) */
  size_t critical_path_nodes;  /* nodes on the longest dependency chain */
  size_t wait_count;           /* cross-stream waits per launch; none is implied by the others
                                  and stream order (see docs/plan.md for the one exception) */
  unsigned chain_count;        /* streams the plan would use without a limit (the chain cover);
                                  more than stream_count when chains were merged */
  size_t plan_critical_path_nodes; /* longest path through edges and stream order: equal to
                                  critical_path_nodes unless merging chains cost concurrency */
  size_t programmatic_edge_count; /* reduced edges into kernels that may begin while their
                                  predecessors finish (SG_KERNEL_PROGRAMMATIC, graph.h) */
} sg_plan_summary;

SG_API sg_status sg_plan_get_summary_sized(const sg_plan *plan, sg_plan_summary *summary,
                                           size_t summary_size);
#ifndef SG_BUILDING_LIBRARY
static inline sg_status sg_plan_get_summary(const sg_plan *plan, sg_plan_summary *summary) {
  return sg_plan_get_summary_sized(plan, summary, sizeof *summary);
}
#else
sg_status sg_plan_get_summary(const sg_plan *plan, sg_plan_summary *summary);
#endif

typedef struct sg_plan_node_info {
  unsigned stream;             /* the stream it runs on, 0-based */
  size_t position;             /* its place in that stream's order, 0-based */
  size_t order;                /* its place in the plan's issue order (a topological order) */
  unsigned wait_count;         /* events it waits for before starting */
  int records_event;           /* 1 if other streams wait on an event recorded after it */
  unsigned event;              /* that event's number (0-based) when records_event is 1 */
  int programmatic;            /* 1 if every edge into it is programmatic: a kernel with
                                  SG_KERNEL_PROGRAMMATIC whose predecessors are all kernels of
                                  its device (graph.h) */
} sg_plan_node_info;

/* `node` is a handle of the graph the plan was made from. */
SG_API sg_status sg_plan_get_node_sized(const sg_plan *plan, sg_node node, sg_plan_node_info *info,
                                        size_t info_size);
#ifndef SG_BUILDING_LIBRARY
static inline sg_status sg_plan_get_node(const sg_plan *plan, sg_node node,
                                         sg_plan_node_info *info) {
  return sg_plan_get_node_sized(plan, node, info, sizeof *info);
}
#else
sg_status sg_plan_get_node(const sg_plan *plan, sg_node node, sg_plan_node_info *info);
#endif

/* One event a node waits for before it starts. */
typedef struct sg_plan_wait {
  unsigned event;              /* the event's number (0-based) */
  sg_node after;               /* the node it is recorded after (it then has records_event 1) */
  unsigned stream;             /* the stream that node runs on */
} sg_plan_wait;

/* The events `node` waits for before it starts, in the order the waits are
 * made: fills up to `capacity` entries of `waits` (which may be NULL when
 * capacity is 0) and sets *count to the node's wait_count. Together with
 * stream order, these waits imply every edge of the graph. */
SG_API sg_status sg_plan_get_waits(const sg_plan *plan, sg_node node, sg_plan_wait *waits,
                                   size_t capacity, size_t *count);

/* The nodes of `stream` in order: fills up to `capacity` entries of `nodes`
 * (which may be NULL when capacity is 0) and sets *count to the stream's
 * length. */
SG_API sg_status sg_plan_get_stream(const sg_plan *plan, unsigned stream, sg_node *nodes,
                                    size_t capacity, size_t *count);

/* The device `stream` runs on: a CUDA ordinal, or SG_DEVICE_DEFAULT for a
 * plan made by sg_plan_create whose nodes were left on the default device
 * (an executable's plan names its device). A stream never holds nodes of two
 * devices; with nodes on several devices (sg_graph_set_device) each device
 * gets its own streams, up to max_streams each. */
SG_API sg_status sg_plan_get_stream_device(const sg_plan *plan, unsigned stream, int *device);

/* The plan as Graphviz DOT: one cluster per stream, nodes coloured by stream
 * and labelled with name, kind and index; the reduced edges drawn solid,
 * except those carried by an event, dashed and labelled with the event;
 * stream order between consecutive nodes that no reduced edge joins dotted:
 * an order a longer path implies already (an edge transitive reduction
 * removed, or a path through other streams), or, where chains were merged
 * to fit the stream limit, an order the merging added. The DOT's comment
 * says which of these the plan can have (sg_plan_get_waits lists each
 * node's waits without parsing DOT). Names are escaped, and bytes that are
 * not UTF-8 are replaced by U+FFFD, so the output is always well-formed.
 * *dot is allocated by the library; free it with sg_free. */
SG_API sg_status sg_plan_to_dot(const sg_plan *plan, char **dot);

/* The plan as an SVG picture, drawn by the library (no Graphviz needed):
 * one column per stream (headed "stream K", with its device when the plan
 * has several), each node a box in its stream's column labelled with its
 * name (shortened past 24 characters), kind and index, filled with the
 * stream's colour. Nodes run top down: a node sits one row below the nodes
 * it must follow (its predecessor on its stream and the nodes its waits are
 * for), so nodes side by side may run together. Grey lines join consecutive
 * nodes of a stream; each wait is a red dashed arrow from the node an
 * event is recorded after to the node that waits for it. Hovering shows
 * each node's full name, kind, stream, position and waits, and each
 * arrow's event.
 *
 * For scripts: nodes are <g class="node" data-node data-stream data-kind
 * data-waits>, waits <path class="wait" data-event data-from data-to>
 * (node indices), stream order <line class="order" data-from data-to>; the
 * root element carries data-nodes, data-streams, data-events and
 * data-waits. Names are escaped for XML and UTF-8 repaired.
 * *svg is allocated by the library; free it with sg_free. */
SG_API sg_status sg_plan_to_svg(const sg_plan *plan, char **svg);

/* sg_plan_to_svg written to the file `path`. SG_ERR_SYSTEM when the file
 * cannot be written (the message names it). */
SG_API sg_status sg_plan_write_svg(const sg_plan *plan, const char *path);

/* Frees memory the library returned (sg_plan_to_dot and the like). */
SG_API void sg_free(void *ptr);

#ifdef __cplusplus
}
#endif
#endif
