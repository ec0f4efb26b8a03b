/* Internal: a graph's distinct edges, in insertion order.
 *
 * Most edges arrive with a new node (its dependencies): no edge into that
 * node exists yet, so only the dependency list itself can hold duplicates,
 * and no index is needed. A hash index, which finds any duplicate in O(1)
 * but costs a cache miss per edge, is built only when an edge is added
 * between two existing nodes (sg_graph_add_edge), and kept from then on. */
#ifndef SG_CORE_EDGE_SET_H
#define SG_CORE_EDGE_SET_H

#include <stdint.h>

#include "streamgraph/status.h"

/* The most edges a set holds: its index, twice as large and a power of two,
 * must fit a 32-bit capacity. */
#define SG__MAX_EDGES ((uint32_t)1 << 30)

typedef struct sg__edge_set {
  uint32_t *from;
  uint32_t *to;
  uint32_t count;
  uint32_t capacity;
  uint64_t *index;       /* open addressing; key (from+1)<<32 | to, 0 = empty; NULL until
                            the first sg__edge_set_add */
  uint32_t index_capacity;
} sg__edge_set;

/* Adds from -> to between existing nodes. SG_OK (added or already present;
 * *added says which) or SG_ERR_OUT_OF_MEMORY (without a message; the set is
 * unchanged). */
sg_status sg__edge_set_add(sg__edge_set *set, uint32_t from, uint32_t to, int *added);
/* Adds from[i] -> to for each i, where `to` is a node no edge leads into yet
 * (a node being added): duplicates in `from` are added once. All or nothing:
 * SG_ERR_OUT_OF_MEMORY (without a message) leaves the set unchanged. */
sg_status sg__edge_set_add_into_new(sg__edge_set *set, const uint32_t *from, uint32_t count,
                                    uint32_t to);
/* Makes room for `extra` more edges added by sg__edge_set_add (the index
 * included, built if it does not exist yet), so that they cannot fail.
 * SG_ERR_OUT_OF_MEMORY (without a message; also past 2^30 edges) leaves
 * the set usable. */
sg_status sg__edge_set_reserve(sg__edge_set *set, uint32_t extra);
void sg__edge_set_free(sg__edge_set *set);

#endif
