/* Internal: the graph object. */
#ifndef SG_CORE_GRAPH_INTERNAL_H
#define SG_CORE_GRAPH_INTERNAL_H

#include <stdint.h>

#include "core/access.h"
#include "core/edge_set.h"
#include "core/in_use.h"
#include "core/node.h"

struct sg_graph {
  uint32_t serial;       /* unique per graph in this process; tags node handles */
  char *name;            /* owned; NULL when unnamed (sg_graph_set_name) */
  sg__node *nodes;
  uint32_t node_count;
  uint32_t node_capacity;
  sg__edge_set edges;
  sg__in_use in_use;     /* calls inside (core/in_use.h) */
  /* Conditional nodes (core/conditional.h). A body graph has the node's
   * graph as `parent` and is destroyed with it; conditions live in the
   * top-level graph (`root_serial` is its serial, the graph's own when it
   * is top-level). */
  struct sg_graph *parent;
  uint32_t root_serial;
  uint32_t depth;                 /* conditional nodes around this graph */
  struct sg__cond_info *conds;    /* top-level graph only */
  uint32_t cond_count;
  sg__access_table access; /* temporaries, declared accesses, bindings (core/access.h) */
};

/* Marks `graph` read by `fn` (a snapshot for an executable or plan):
 * SG_ERR_BUSY while a call on another thread changes it. */
sg_status sg__graph_read_begin(const sg_graph *graph, const char *fn);
void sg__graph_read_end(const sg_graph *graph);

/* The body of a getter of one count: reads `graph` for `fn` and stores
 * what `read` returns in *count (SG_ERR_INVALID_ARGUMENT when count is
 * NULL). */
sg_status sg__graph_read_count(const sg_graph *graph, const char *fn,
                               size_t (*read)(const sg_graph *graph), size_t *count);

/* The entry and exit of a call that changes `graph` (a live handle, not in
 * use by another call), for builder calls outside graph.c. */
sg_status sg__graph_enter(sg_graph *graph, const char *fn);
void sg__graph_leave(sg_graph *graph);
/* Appends a validated node with edges from `deps` (checked here), all or
 * nothing: on failure the node is freed. Called between enter and leave. */
sg_status sg__graph_add_node(sg_graph *graph, sg__node *node, const sg_node *deps,
                             size_t dep_count, sg_node *out, const char *fn);
/* Frees a graph without the checks of sg_graph_destroy (bodies). */
void sg__graph_free(sg_graph *graph);
/* The temporary a handle stands for (core/graph_access.c), as
 * sg__node_resolve does for nodes. */
sg_status sg__temp_resolve(sg_temp temp, uint32_t serial, uint32_t temp_count, const char *fn,
                           const char *what, uint32_t *index);
/* graph.c's checks of dependency handles and its all-or-nothing append of
 * a validated node, for the calls of core/graph_access.c. */
sg_status sg__graph_check_deps(const sg_graph *g, const sg_node *deps, size_t dep_count,
                               const char *fn);
sg_status sg__graph_append_node(sg_graph *g, sg__node *node, const sg_node *deps,
                                size_t dep_count, sg_node *out, const char *fn);

#endif
