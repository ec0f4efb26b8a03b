/* Internal: an immutable copy of a graph (nodes and distinct edges as a
 * compressed successor list), as executables and plans keep it. */
#ifndef SG_CORE_SNAPSHOT_H
#define SG_CORE_SNAPSHOT_H

#include <stdint.h>

#include "core/access.h"
#include "core/node.h"
#include "streamgraph/graph.h"

typedef struct sg__snapshot {
  uint32_t graph_serial;   /* identifies the graph whose node handles apply */
  char *graph_name;        /* the graph's name (owned by a deep snapshot), or NULL */
  uint32_t node_count;
  sg__node *nodes;
  uint32_t edge_count;     /* distinct edges */
  uint32_t *succ_start;    /* node_count + 1 offsets into succ */
  uint32_t *succ;          /* successors of node i: succ[succ_start[i] .. succ_start[i+1]), ascending */
  int owns_nodes;          /* 0 for a shallow snapshot that borrows the graph's nodes */
  /* The graph's conditions (core/conditional.h): owned by a deep snapshot,
   * borrowed by a shallow one; none in a body. */
  struct sg__cond_info *conds;
  uint32_t cond_count;
  /* Declared accesses (core/access.h): succ holds the edges they imply as
   * well, and succ_inferred (one byte per entry of succ, NULL when none)
   * marks those no explicit edge duplicates. `access` is borrowed from the
   * graph by a shallow snapshot, owned by a deep one. */
  uint8_t *succ_inferred;
  sg__access_table access;
} sg__snapshot;

/* Deep copy of `graph` (SG_ERR_OUT_OF_MEMORY leaves *out zeroed). */
sg_status sg__graph_snapshot(const sg_graph *graph, sg__snapshot *out);
/* The same, borrowing the graph's nodes instead of copying them: valid while
 * the graph is unchanged; enough to check or plan the graph. */
sg_status sg__graph_snapshot_shallow(const sg_graph *graph, sg__snapshot *out);
void sg__snapshot_free(sg__snapshot *snap);
/* Deep copy of a deep snapshot (a conditional node's payload is shared,
 * its count raised, as sg__node_clone does): the copy-on-write step of a
 * parameter change inside a body. SG_ERR_OUT_OF_MEMORY leaves *out zeroed. */
sg_status sg__snapshot_copy(const sg__snapshot *src, sg__snapshot *out);

/* SG_OK if acyclic; otherwise SG_ERR_CYCLE with a message, prefixed by `fn`,
 * listing the nodes of one cycle in order. */
sg_status sg__snapshot_check_acyclic(const sg__snapshot *snap, const char *fn);

/* The snapshot as Graphviz DOT (sg_graph_to_dot's format, graph_dot.c),
 * allocated; SG_ERR_OUT_OF_MEMORY without a message. */
sg_status sg__snapshot_to_dot(const sg__snapshot *snap, char **dot);

/* 1 if both have the same node count and edges, the same conditions
 * (defaults and flags), and their nodes the same shapes
 * (sg__node_same_shape: kinds, devices, NCCL calls' communicators,
 * conditional nodes' bodies at every depth; a device change re-plans, since
 * streams belong to devices). */
int sg__snapshot_same_topology(const sg__snapshot *a, const sg__snapshot *b);

/* The node index a handle stands for, checked against the snapshot's graph
 * (`serial`) and size: SG_ERR_FOREIGN_NODE or SG_ERR_INVALID_ARGUMENT. */
sg_status sg__node_resolve(sg_node node, uint32_t serial, uint32_t node_count, const char *fn,
                           const char *what, uint32_t *index);
sg_node sg__node_make(uint32_t serial, uint32_t index);

#endif
