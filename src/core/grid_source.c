/* Kernels whose grid comes from the device: sg_graph_kernel_bind_grid and
 * the helpers every backend uses to apply it (core/grid_source.h). */
#include "core/grid_source.h"

#include <stdalign.h>
#include <string.h>

#include "core/error.h"
#include "core/graph_internal.h"
#include "core/memory_table.h"
#include "core/snapshot.h"
#include "streamgraph/conditional.h"

void sg__grid_fill(sg__kernel *k) {
  if (!k->grid_arg || k->grid_arg > k->arg_count ||
      k->arg_sizes[k->grid_arg - 1] != sizeof(sg_grid_ref))
    return;
  const sg_grid_ref ref = {k->grid_words, k->grid.x, k->grid.y, k->grid.z, 0};
  memcpy(k->arg_ptrs[k->grid_arg - 1], &ref, sizeof ref);
}

/* Why argument `a` of `k` cannot take a grid source, or NULL. */
static const char *arg_refusal(const sg__kernel *k, unsigned a) {
  if (a >= k->arg_count) return "has no argument at that index";
  if (k->arg_sizes[a] != sizeof(sg_grid_ref))
    return "has an argument there whose size is not sizeof(sg_grid_ref) (24 bytes, "
           "streamgraph/grid_device.h)";
  return NULL;
}

sg_status sg__grid_keep(sg__kernel *fresh, const sg__node *old, uint32_t index, const char *fn) {
  if (old->kind != SG__NODE_KERNEL || !old->u.kernel.grid_arg || fresh->grid_arg) return SG_OK;
  const unsigned a = old->u.kernel.grid_arg - 1;
  const char *why = arg_refusal(fresh, a);
  if (why) {
    char label[SG__LABEL_BYTES];
    return sg__fail(SG_ERR_INVALID_KERNEL_ARGS,
                    "%s: kernel node %s takes its grid from the device through argument %u, "
                    "and the new parameters' kernel %s; keep an sg_grid_ref there",
                    fn, sg__node_label(old, index, label), a, why);
  }
  fresh->grid_arg = old->u.kernel.grid_arg;
  fresh->grid_words = old->u.kernel.grid_words;
  sg__grid_fill(fresh);
  return SG_OK;
}

int sg__grid_resolve(const sg__kernel *k, const unsigned words[3], sg_grid_ref *ref,
                     sg_dim3 *grid) {
  grid->x = words[0] < k->grid.x ? words[0] : k->grid.x;
  grid->y = words[1] < k->grid.y ? words[1] : k->grid.y;
  grid->z = words[2] < k->grid.z ? words[2] : k->grid.z;
  *ref = (sg_grid_ref){NULL, grid->x, grid->y, grid->z, 0};
  return grid->x && grid->y && grid->z;
}

void sg__grid_args(const sg__kernel *k, void **args, const sg_grid_ref *ref) {
  memcpy(args, k->arg_ptrs, k->arg_count * sizeof *args);
  if (k->grid_arg && k->grid_arg <= k->arg_count) args[k->grid_arg - 1] = (void *)ref;
}

sg_status sg_graph_kernel_bind_grid(sg_graph *graph, sg_node kernel, unsigned arg_index,
                                    const unsigned *words) {
  static const char fn[] = "sg_graph_kernel_bind_grid";
  sg_status st = sg__graph_enter(graph, fn);
  if (st) return st;
  uint32_t index = 0;
  st = sg__node_resolve(kernel, graph->serial, graph->node_count, fn, "kernel", &index);
  char label[SG__LABEL_BYTES];
  sg__node *n = st ? NULL : &graph->nodes[index];
  const char *why = NULL;
  if (!st && n->kind != SG__NODE_KERNEL)
    st = sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: node %s is a %s node, not a kernel node", fn,
                  sg__node_label(n, index, label), sg__node_kind_name(n->kind));
  if (!st && (why = arg_refusal(&n->u.kernel, arg_index)))
    st = sg__fail(SG_ERR_INVALID_KERNEL_ARGS, "%s: kernel %s (%u arguments) %s (index %u)", fn,
                  sg__node_label(n, index, label), n->u.kernel.arg_count, why, arg_index);
  if (!st && !words)
    st = sg__fail(SG_ERR_INVALID_ARGUMENT,
                  "%s: kernel %s: words is NULL; give the address of three unsigned values "
                  "(grid x, y, z) that an earlier node writes", fn, sg__node_label(n, index, label));
  if (!st && (uintptr_t)words % alignof(unsigned))
    st = sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: kernel %s: words %p is not aligned to %zu bytes",
                  fn, sg__node_label(n, index, label), (const void *)words,
                  (size_t)alignof(unsigned));
  if (!st) {
    sg__block block;
    sg__memory_find(words, &block);
    const uintptr_t at = (uintptr_t)words;
    if (block.base && (at < block.base || block.bytes < 3 * sizeof(unsigned) ||
                       at - block.base > block.bytes - 3 * sizeof(unsigned)))
      st = sg__fail(SG_ERR_INVALID_ARGUMENT,
                    "%s: kernel %s: the three words at %p run past the end of their block "
                    "(%zu bytes at %p)", fn, sg__node_label(n, index, label), (const void *)words,
                    block.bytes, (void *)block.base);
  }
  if (!st) {
    n->u.kernel.grid_arg = arg_index + 1;
    n->u.kernel.grid_words = words;
    sg__grid_fill(&n->u.kernel);
  }
  sg__graph_leave(graph);
  return st;
}
