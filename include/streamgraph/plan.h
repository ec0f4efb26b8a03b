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
 * nodes of one cycle. The plan is a snapshot: the graph may change after. */
SG_API sg_status sg_plan_create(const sg_graph *graph, unsigned max_streams, sg_plan **out);
SG_API sg_status sg_plan_destroy(sg_plan *plan);

typedef struct sg_plan_summary {
  size_t node_count;
  size_t edge_count;           /* distinct edges of the graph */
  size_t reduced_edge_count;   /* edges left after transitive reduction */
  unsigned stream_count;
  unsigned event_count;        /* cross-stream record/wait pairs per launch */
  unsigned max_streams;        /* the limit the plan was made under */
  size_t width;                /* the DAG's width (largest set of mutually independent nodes) */
  int width_exact;             /* 1 if `width` is exact, 0 if it is a lower bound
                                  (large graphs use a near-linear method) */
  size_t critical_path_nodes;  /* nodes on the longest dependency chain */
} sg_plan_summary;

SG_API sg_status sg_plan_get_summary(const sg_plan *plan, sg_plan_summary *summary);

typedef struct sg_plan_node_info {
  unsigned stream;             /* the stream it runs on, 0-based */
  size_t position;             /* its place in that stream's order, 0-based */
  size_t order;                /* its place in the plan's issue order (a topological order) */
  unsigned wait_count;         /* events it waits for before starting */
  int records_event;           /* 1 if other streams wait on an event recorded after it */
} sg_plan_node_info;

SG_API sg_status sg_plan_get_node(const sg_plan *plan, sg_node node, sg_plan_node_info *info);

/* The nodes of `stream` in order: fills up to `capacity` entries of `nodes`
 * and sets *count to the stream's length. */
SG_API sg_status sg_plan_get_stream(const sg_plan *plan, unsigned stream, sg_node *nodes,
                                    size_t capacity, size_t *count);

/* The plan as Graphviz DOT: nodes grouped and coloured by stream, event edges
 * dashed. *dot is allocated by the library; free it with sg_free. */
SG_API sg_status sg_plan_to_dot(const sg_plan *plan, char **dot);

/* Frees memory the library returned (sg_plan_to_dot and the like). */
SG_API void sg_free(void *ptr);

#ifdef __cplusplus
}
#endif
#endif
