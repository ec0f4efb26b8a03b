/* Executables: planned temporaries (exec/exec_temps.h), and the public
 * queries of them (sg_exec_get_temp, sg_exec_get_memory). */
#include "exec/exec_temps.h"

#include <stdlib.h>
#include <string.h>

#include "core/checked.h"
#include "core/graph_internal.h"
#include "core/memory_table.h"
#include "core/sys.h"
#include "exec/exec.h"
#include "exec/exec_internal.h"

/* The checker is quadratic: debug builds run it on graphs up to this size. */
#define CHECK_NODES 4096u

void sg__exec_temps_free(sg__exec_temps *t) {
  if (!t) return;
  if (t->arena) t->ops->arena_free(t->device, t->arena);
  sg__memplan_free(&t->plan);
  sg__free(t->bind_start);
  sg__free(t->binds);
  sg__free(t->temp_bytes);
  sg__free(t);
}

static void *address_of(const sg__exec_temps *t, uint32_t temp, size_t offset) {
  /* A graph whose temporaries no node uses has no arena. */
  return t && t->arena ? (char *)t->arena + t->plan.offset[temp] + offset : NULL;
}

/* A copy's or memset's side placed in the arena: its pointer, and the
 * arena's memory kind (and a copy's kind, when it was SG_COPY_AUTO). */
static void patch_side(const sg__exec_temps *t, const sg__temp_bind *bind, sg__node *node) {
  void *address = address_of(t, bind->temp, bind->offset);
  sg_memory_kind kind = t->ops == sg__host_backend() ? SG_MEMORY_HOST_DEVICE : SG_MEMORY_DEVICE;
  if (node->kind == SG__NODE_MEMSET) {
    node->u.memset.dst = address;
    node->u.memset.dst_memory = kind;
    node->u.memset.dst_alloc = 0;
    return;
  }
  sg__copy *c = &node->u.copy;
  if (bind->arg == SG__BIND_COPY_DST) {
    c->dst = address;
    c->dst_memory = kind;
    c->dst_alloc = 0;
  } else {
    c->src = (const void *)address;
    c->src_memory = kind;
    c->src_alloc = 0;
  }
  if (bind->auto_kind) {
    int src_dev = sg__memory_is_device(c->src_memory), dst_dev = sg__memory_is_device(c->dst_memory);
    c->kind = src_dev ? (dst_dev ? SG_COPY_DEVICE_TO_DEVICE : SG_COPY_DEVICE_TO_HOST)
                      : (dst_dev ? SG_COPY_HOST_TO_DEVICE : SG_COPY_HOST_TO_HOST);
  }
}

sg_status sg__exec_temps_patch(const sg__exec_temps *t, uint32_t index, sg__node *node,
                               const char *fn) {
  if (!t || !t->bind_start) return SG_OK;
  for (uint32_t b = t->bind_start[index]; b < t->bind_start[index + 1]; b++) {
    const sg__temp_bind *bind = &t->binds[b];
    if (bind->arg >= SG__BIND_COPY_DST) {
      if (node->kind == SG__NODE_COPY || node->kind == SG__NODE_MEMSET) patch_side(t, bind, node);
      continue;
    }
    if (node->kind != SG__NODE_KERNEL) continue;
    if (bind->arg >= node->u.kernel.arg_count ||
        node->u.kernel.arg_sizes[bind->arg] != sizeof(void *)) {
      char label[SG__LABEL_BYTES];
      return sg__fail(SG_ERR_INVALID_ARGUMENT,
                      "%s: node %s: argument %u receives temporary t%u's address, but the new "
                      "parameters have no pointer-sized argument %u (%u arguments)",
                      fn, sg__node_label(node, index, label), bind->arg, bind->temp, bind->arg,
                      node->u.kernel.arg_count);
    }
    void *address = address_of(t, bind->temp, bind->offset);
    memcpy(node->u.kernel.arg_ptrs[bind->arg], &address, sizeof address);
  }
  return SG_OK;
}

static int by_node(const void *pa, const void *pb) {
  const sg__temp_bind *a = pa, *b = pb;
  if (a->node != b->node) return a->node < b->node ? -1 : 1;
  return a->arg < b->arg ? -1 : a->arg > b->arg;
}

sg_status sg__exec_temps_create(const sg__backend_ops *ops, int device, sg__snapshot *snap,
                                const sg_plan *plan, const char *fn, sg__exec_temps **out) {
  *out = NULL;
  const sg__access_table *acc = &snap->access;
  if (!acc->temp_count) return SG_OK;
  if (!ops->arena_alloc)
    return sg__fail(SG_ERR_UNSUPPORTED, "%s: the %s backend cannot hold planned temporaries", fn,
                    ops->name);
  sg__exec_temps *t = sg__calloc(1, sizeof *t);
  if (!t) return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
  t->ops = ops;
  t->device = device;
  const sg__schedule *s = sg__plan_schedule(plan);
  sg_status st = sg__memplan_build(s, snap->succ_start, snap->succ, acc, 1, &t->plan);
  if (st) goto fail_prefixed;
#ifndef NDEBUG
  if (snap->node_count <= CHECK_NODES &&
      (st = sg__memplan_check(s, snap->succ_start, snap->succ, acc, &t->plan)))
    goto fail_prefixed;
#endif
  if (t->plan.arena_bytes && (st = ops->arena_alloc(device, t->plan.arena_bytes, fn, &t->arena)))
    goto fail;
  if (acc->bind_count) {
    t->bind_start = sg__calloc((size_t)snap->node_count + 1, sizeof *t->bind_start);
    t->binds = sg__realloc_array(NULL, acc->bind_count, sizeof *t->binds);
    if (!t->bind_start || !t->binds) {
      st = sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
      goto fail;
    }
    memcpy(t->binds, acc->binds, acc->bind_count * sizeof *t->binds);
    if (!(t->temp_bytes = sg__realloc_array(NULL, acc->temp_count, sizeof *t->temp_bytes))) {
      st = sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
      goto fail;
    }
    for (uint32_t k = 0; k < acc->temp_count; k++) t->temp_bytes[k] = acc->temps[k].bytes;
    qsort(t->binds, acc->bind_count, sizeof *t->binds, by_node);
    for (uint32_t b = 0; b < acc->bind_count; b++) t->bind_start[t->binds[b].node + 1]++;
    for (uint32_t v = 0; v < snap->node_count; v++) t->bind_start[v + 1] += t->bind_start[v];
    for (uint32_t v = 0; v < snap->node_count; v++)
      if (t->bind_start[v] != t->bind_start[v + 1] &&
          (st = sg__exec_temps_patch(t, v, &snap->nodes[v], fn)))
        goto fail;
  }
  *out = t;
  return SG_OK;
fail_prefixed:
  sg__plan_prefix_failure(st, fn);
fail:
  sg__exec_temps_free(t);
  return st;
}

sg_status sg__exec_temps_sides(const sg__exec_temps *t, uint32_t index, size_t bytes,
                               unsigned align, const char *fn, unsigned *sides) {
  *sides = 0;
  if (!t || !t->bind_start) return SG_OK;
  for (uint32_t b = t->bind_start[index]; b < t->bind_start[index + 1]; b++) {
    const sg__temp_bind *bind = &t->binds[b];
    if (bind->arg < SG__BIND_COPY_DST) continue;
    *sides |= bind->arg == SG__BIND_COPY_SRC ? SG__TEMP_SRC : SG__TEMP_DST;
    size_t end;
    if (sg__add_overflows(bind->offset, bytes, &end) || end > t->temp_bytes[bind->temp])
      return sg__fail(SG_ERR_INVALID_ARGUMENT,
                      "%s: node #%u: %zu bytes from offset %zu run past the end of temporary "
                      "t%u (%zu bytes)",
                      fn, index, bytes, bind->offset, bind->temp, t->temp_bytes[bind->temp]);
    if (align > 1 && (uintptr_t)address_of(t, bind->temp, bind->offset) % align)
      return sg__fail(SG_ERR_INVALID_ARGUMENT,
                      "%s: node #%u: byte %zu of temporary t%u is not aligned to element_size %u",
                      fn, index, bind->offset, bind->temp, align);
  }
  return SG_OK;
}

/* ---- public queries ---------------------------------------------------------- */

sg_status sg_exec_get_temp(const sg_exec *exec, sg_temp temp, void **ptr) {
  sg_status st = sg__exec_enter_shared(exec, __func__);
  if (st) return st;
  uint32_t index = 0;
  if (!ptr) {
    st = sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: ptr is NULL", __func__);
  } else {
    uint32_t serial = (uint32_t)(temp.opaque >> 32);
    if (serial != exec->snap.graph_serial) serial = exec->update_serial;
    st = sg__temp_resolve(temp, serial, exec->snap.access.temp_count, __func__, "temp", &index);
  }
  if (!st) *ptr = address_of(exec->temps, index, 0);
  sg__exec_leave_shared(exec);
  return st;
}

sg_status sg_exec_get_memory(const sg_exec *exec, sg_exec_memory *memory) {
  sg_status st = sg__exec_enter_shared(exec, __func__);
  if (st) return st;
  if (!memory) {
    st = sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: memory is NULL", __func__);
  } else {
    memset(memory, 0, sizeof *memory);
    memory->temp_count = exec->snap.access.temp_count;
    if (exec->temps) {
      memory->arena_bytes = exec->temps->plan.arena_bytes;
      memory->no_reuse_bytes = exec->temps->plan.no_reuse_bytes;
      memory->dag_order = exec->temps->plan.dag_order;
    }
  }
  sg__exec_leave_shared(exec);
  return st;
}
