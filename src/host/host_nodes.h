/* Internal: running one node on the host backend, and checking that a node
 * can run there. */
#ifndef SG_HOST_HOST_NODES_H
#define SG_HOST_HOST_NODES_H

#include <stdint.h>

#include "core/node.h"

/* SG_OK if `node` can run on the host backend, on device `on`, in an
 * executable on `exec_device`; otherwise the error (with its message,
 * prefixed by `fn`, naming the node). What the CUDA backend refuses
 * whatever the hardware, this refuses too, with the same message
 * (exec/backend_rules.h); between its emulated devices there is no peer
 * access. */
sg_status sg__host_check_node(const sg__node *node, uint32_t index, int on, int exec_device,
                              const char *fn);

/* Runs `node`. On failure returns the status and writes a message naming the
 * node into `message`. */
sg_status sg__host_run_node(const sg__node *node, uint32_t index, char *message, size_t cap);

/* Runs kernel node `node`'s host twin. `cond`, when not NULL, replaces
 * its condition argument; a grid from the device (core/grid_source.h) is
 * read now, and no block runs when a dimension of it is 0. */
sg_status sg__host_run_kernel(const sg__node *node, uint32_t index, const void *cond,
                              char *message, size_t cap);

/* The arena of an executable's planned temporaries (host_arena.c). */
sg_status sg__host_arena_alloc(int device, size_t bytes, const char *fn, void **arena);
void sg__host_arena_free(int device, void *arena);

#endif
