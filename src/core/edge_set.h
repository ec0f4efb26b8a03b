/* Internal: a graph's distinct edges, in insertion order, with a hash index
 * so that a duplicate is found in O(1). */
#ifndef SG_CORE_EDGE_SET_H
#define SG_CORE_EDGE_SET_H

#include <stdint.h>

#include "streamgraph/status.h"

typedef struct sg__edge_set {
  uint32_t *from;
  uint32_t *to;
  uint32_t count;
  uint32_t capacity;
  uint64_t *index;       /* open addressing; key (from+1)<<32 | to, 0 = empty */
  uint32_t index_capacity;
} sg__edge_set;

/* SG_OK (added or already present; *added says which) or SG_ERR_OUT_OF_MEMORY
 * (without a message; the set is unchanged). */
sg_status sg__edge_set_add(sg__edge_set *set, uint32_t from, uint32_t to, int *added);
/* Makes room for `extra` more edges, so that the next `extra` adds cannot
 * fail. SG_ERR_OUT_OF_MEMORY (without a message) leaves the set usable. */
sg_status sg__edge_set_reserve(sg__edge_set *set, uint32_t extra);
void sg__edge_set_free(sg__edge_set *set);

#endif
