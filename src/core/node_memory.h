/* Internal: executables hold the sg_mem_alloc blocks their copy and memset
 * nodes name, so that sg_mem_free of a block that work of a live executable
 * can still touch is deferred until nothing holds it (memory.h). The
 * executable front end holds a node's blocks before the node can run (at
 * creation, per parameter change, per rebuild) and lets go when the node
 * is replaced or the executable destroyed. Graphs and plans hold nothing:
 * they never run. */
#ifndef SG_CORE_NODE_MEMORY_H
#define SG_CORE_NODE_MEMORY_H

#include <stdint.h>

#include "core/node.h"
#include "core/snapshot.h"

/* Holds the blocks node `index` names. Fails, holding nothing, when a block
 * the node lay in when it was set has been freed since, or when the block
 * now at its address is too small for it (the message names `fn`, the node,
 * the pointer and what to do). Nodes of other kinds hold nothing. */
sg_status sg__node_hold_memory(sg__node *node, uint32_t index, const char *fn);
void sg__node_release_memory(sg__node *node);

/* Every node of `snap`, all or nothing. */
sg_status sg__snapshot_hold_memory(sg__snapshot *snap, const char *fn);
void sg__snapshot_release_memory(sg__snapshot *snap);

#endif
