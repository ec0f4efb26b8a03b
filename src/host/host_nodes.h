/* Internal: running one node on the host backend, and checking that a node
 * can run there. */
#ifndef SG_HOST_HOST_NODES_H
#define SG_HOST_HOST_NODES_H

#include <stdint.h>

#include "core/node.h"

/* SG_OK if `node` can run on the host backend; otherwise the error (with
 * its message, prefixed by `fn`, naming the node). */
sg_status sg__host_check_node(const sg__node *node, uint32_t index, const char *fn);

/* Runs `node`. On failure returns the status and writes a message naming the
 * node into `message`. */
sg_status sg__host_run_node(const sg__node *node, uint32_t index, char *message, size_t cap);

/* The arena of an executable's planned temporaries (host_arena.c). */
sg_status sg__host_arena_alloc(int device, size_t bytes, const char *fn, void **arena);
void sg__host_arena_free(int device, void *arena);

#endif
