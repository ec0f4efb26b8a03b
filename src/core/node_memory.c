/* Holding the sg_mem_alloc blocks an executable's nodes name (node_memory.h). */
#include "core/node_memory.h"

#include "core/error.h"
#include "core/memory_table.h"

/* Holds one range, a node's destination or source: 1 into *held when a
 * block was held (only those are let go later). */
static sg_status hold_range(const sg__node *node, uint32_t index, const char *fn,
                            const char *side, const void *ptr, size_t bytes, int was_alloc,
                            int *held) {
  sg__block block;
  int found = sg__memory_hold(ptr, bytes, &block);
  *held = found == 1;
  if (found == 1 || (found == 0 && !was_alloc)) return SG_OK;
  char label[SG__LABEL_BYTES];
  if (found == 0 || block.freed)
    return sg__fail(SG_ERR_INVALID_ARGUMENT,
                    "%s: node %s: the %s %p lay in an sg_mem_alloc block when the node was set, "
                    "and that block has been freed since; set the node again with live memory",
                    fn, sg__node_label(node, index, label), side, ptr);
  return sg__fail(SG_ERR_INVALID_ARGUMENT,
                  "%s: node %s: %zu bytes at the %s %p run past the end of its block (an "
                  "sg_mem_alloc block of %zu bytes at %p, allocated after the node was set); "
                  "set the node again with memory that holds it",
                  fn, sg__node_label(node, index, label), bytes, side, ptr, block.bytes,
                  (void *)block.base);
}

sg_status sg__node_hold_memory(sg__node *node, uint32_t index, const char *fn) {
  int held;
  if (node->kind == SG__NODE_MEMSET) {
    sg__memset *m = &node->u.memset;
    /* count * element_size was checked when the node was set */
    sg_status st = hold_range(node, index, fn, "destination", m->dst,
                              m->count * m->element_size, m->dst_alloc, &held);
    m->held = (unsigned char)held;
    return st;
  }
  if (node->kind != SG__NODE_COPY) return SG_OK;
  sg__copy *c = &node->u.copy;
  sg_status st = hold_range(node, index, fn, "destination", c->dst, c->bytes, c->dst_alloc, &held);
  if (st) return st;
  c->held = (unsigned char)held;
  st = hold_range(node, index, fn, "source", c->src, c->bytes, c->src_alloc, &held);
  if (st) {
    sg__node_release_memory(node);
    return st;
  }
  c->held |= (unsigned char)(held << 1);
  return SG_OK;
}

void sg__node_release_memory(sg__node *node) {
  if (node->kind == SG__NODE_MEMSET) {
    if (node->u.memset.held) sg__memory_release(node->u.memset.dst);
    node->u.memset.held = 0;
  } else if (node->kind == SG__NODE_COPY) {
    if (node->u.copy.held & 1) sg__memory_release(node->u.copy.dst);
    if (node->u.copy.held & 2) sg__memory_release(node->u.copy.src);
    node->u.copy.held = 0;
  }
}

sg_status sg__snapshot_hold_memory(sg__snapshot *snap, const char *fn) {
  for (uint32_t i = 0; i < snap->node_count; i++) {
    sg_status st = sg__node_hold_memory(&snap->nodes[i], i, fn);
    if (st) {
      while (i-- > 0) sg__node_release_memory(&snap->nodes[i]);
      return st;
    }
  }
  return SG_OK;
}

void sg__snapshot_release_memory(sg__snapshot *snap) {
  for (uint32_t i = 0; i < snap->node_count; i++) sg__node_release_memory(&snap->nodes[i]);
}
