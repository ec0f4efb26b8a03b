/* Internal: the graph object. */
#ifndef SG_CORE_GRAPH_INTERNAL_H
#define SG_CORE_GRAPH_INTERNAL_H

#include <stdint.h>

#include "core/edge_set.h"
#include "core/node.h"

struct sg_graph {
  uint32_t serial;       /* unique per graph in this process; tags node handles */
  char *name;            /* owned; NULL when unnamed (sg_graph_set_name) */
  sg__node *nodes;
  uint32_t node_count;
  uint32_t node_capacity;
  sg__edge_set edges;
};

#endif
