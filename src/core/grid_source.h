/* Internal: kernels whose grid comes from the device
 * (sg_graph_kernel_bind_grid, streamgraph/grid_device.h).
 *
 * A bound kernel keeps the index of its sg_grid_ref argument and the
 * address of the three words it reads. Its argument block always holds the
 * graph-mode reference {words, bound}, so that graph building, capture and
 * in-place updates pass it on unchanged; streams mode and the host backend
 * read the words and substitute the resolved reference {NULL, live grid}. */
#ifndef SG_CORE_GRID_SOURCE_H
#define SG_CORE_GRID_SOURCE_H

#include <stdint.h>

#include "core/node.h"
#include "streamgraph/grid_device.h"

/* Writes {grid_words, grid} into the bound argument (nothing when unbound). */
void sg__grid_fill(sg__kernel *k);

/* New parameters `fresh` of kernel node `old` (index `index`) keep its grid
 * binding: SG_ERR_INVALID_KERNEL_ARGS (message prefixed by `fn`) when the
 * new arguments have no sg_grid_ref at the bound index. */
sg_status sg__grid_keep(sg__kernel *fresh, const sg__node *old, uint32_t index, const char *fn);

/* The live grid of bound kernel `k` from the three words read: each
 * dimension min(word, bound). Writes the resolved reference and grid, and
 * returns the number of blocks to run as 0 or 1 (whether any). */
int sg__grid_resolve(const sg__kernel *k, const unsigned words[3], sg_grid_ref *ref,
                     sg_dim3 *grid);

/* `args` (SG_MAX_KERNEL_ARGS slots) as k->arg_ptrs with the bound argument
 * pointing at `ref`. */
void sg__grid_args(const sg__kernel *k, void **args, const sg_grid_ref *ref);

#endif
