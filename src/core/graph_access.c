/* Graphs: planned temporaries, declared accesses and temporaries bound to
 * kernel arguments (streamgraph/graph.h; inference in core/access.c). */
#include <stdio.h>
#include <string.h>

#include "core/access.h"
#include "core/checked.h"
#include "core/error.h"
#include "core/graph_internal.h"
#include "core/snapshot.h"
#include "core/sys.h"

#define MAX_TEMPS (SG__TEMP_TAG - 1u)
#define MAX_ACCESSES ((uint32_t)1 << 30)


sg_status sg__temp_resolve(sg_temp temp, uint32_t serial, uint32_t temp_count, const char *fn,
                           const char *what, uint32_t *index) {
  uint32_t temp_serial = (uint32_t)(temp.opaque >> 32), low = (uint32_t)temp.opaque;
  if (temp_serial == 0)
    return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: %s is not a temporary (zero handle)", fn, what);
  if (!(low & SG__TEMP_TAG))
    return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: %s is not a temporary (a node handle?)", fn,
                    what);
  low &= ~SG__TEMP_TAG;
  if (temp_serial != serial)
    return sg__fail(SG_ERR_FOREIGN_NODE, "%s: %s (t%u) belongs to another graph", fn, what, low);
  if (low >= temp_count)
    return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: %s (t%u) is out of range (%u temporaries)", fn,
                    what, low, temp_count);
  *index = low;
  return SG_OK;
}

sg_status sg_graph_add_temp(sg_graph *graph, const sg_temp_desc *desc, sg_temp *out) {
  sg_status st = sg__graph_enter(graph, __func__);
  if (st) return st;
  sg__access_table *t = &graph->access;
  size_t align = desc ? (desc->alignment ? desc->alignment : 256) : 0;
  if (!desc) st = sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: desc is NULL", __func__);
  else if (!desc->bytes) st = sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: bytes is 0", __func__);
  else if (desc->bytes > PTRDIFF_MAX / 2)
    st = sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: bytes %zu is too large", __func__, desc->bytes);
  else if (align > 4096 || (align & (align - 1)))
    st = sg__fail(SG_ERR_INVALID_ARGUMENT,
                  "%s: alignment %zu is not a power of two up to 4096 (0 means 256)", __func__,
                  desc->alignment);
  else if (desc->name && strlen(desc->name) > SG_MAX_NAME_BYTES)
    st = sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: name longer than %u bytes", __func__,
                  SG_MAX_NAME_BYTES);
  else if (t->temp_count >= MAX_TEMPS)
    st = sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: the graph already has %u temporaries", __func__,
                  t->temp_count);
  char *name = NULL;
  if (!st && desc->name && !(name = sg__strdup(desc->name)))
    st = sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory", __func__);
  if (!st && t->temp_count == t->temp_cap) {
    uint32_t cap = t->temp_cap ? t->temp_cap * 2 : 8;
    sg__temp *temps = sg__realloc_array(t->temps, cap, sizeof *temps);
    if (!temps) {
      sg__free(name);
      st = sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory", __func__);
    } else {
      t->temps = temps;
      t->temp_cap = cap;
    }
  }
  if (!st) {
    uint32_t index = t->temp_count++;
    t->temps[index] = (sg__temp){desc->bytes, align, name};
    if (out) out->opaque = (uint64_t)graph->serial << 32 | (index | SG__TEMP_TAG);
  }
  sg__graph_leave(graph);
  return st;
}

/* One public access checked into its stored form. */
static sg_status convert(const sg_graph *g, uint32_t node, const sg_access *a, size_t i,
                         const char *fn, sg__access *out) {
  char label[SG__LABEL_BYTES];
  const char *who = sg__node_label(&g->nodes[node], node, label);
  if (a->mode != SG_ACCESS_READ && a->mode != SG_ACCESS_WRITE && a->mode != SG_ACCESS_READ_WRITE)
    return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: node %s: accesses[%zu].mode %d is not an "
                    "sg_access_mode", fn, who, i, (int)a->mode);
  if (a->flags & ~SG_ACCESS_COMMUTATIVE)
    return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: node %s: accesses[%zu].flags %#x has unknown "
                    "bits", fn, who, i, a->flags);
  const int commutative = (a->flags & SG_ACCESS_COMMUTATIVE) != 0;
  if (commutative && a->mode == SG_ACCESS_READ)
    return sg__fail(SG_ERR_INVALID_ARGUMENT,
                    "%s: node %s: accesses[%zu] is a commutative read; only writes commute (a "
                    "read of memory others write at the same time sees a partial result)",
                    fn, who, i);
  out->node = node;
  out->mode = (uint8_t)a->mode;
  out->commutative = (uint8_t)commutative;
  if (a->temp.opaque) {
    uint32_t temp;
    if (a->ptr)
      return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: node %s: accesses[%zu] names both a "
                      "pointer and a temporary", fn, who, i);
    char what[40];
    snprintf(what, sizeof what, "accesses[%zu].temp", i);
    sg_status st = sg__temp_resolve(a->temp, g->serial, g->access.temp_count, fn, what, &temp);
    if (st) return st;
    size_t size = g->access.temps[temp].bytes, bytes, end = 0;
    int bad = a->offset >= size;
    if (!bad) {
      bytes = a->bytes ? a->bytes : size - a->offset;
      bad = sg__add_overflows(a->offset, bytes, &end) || end > size;
    }
    if (bad)
      return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: node %s: accesses[%zu]: bytes [%zu, +%zu) "
                      "lie outside temporary t%u of %zu bytes", fn, who, i, a->offset, a->bytes,
                      temp, size);
    out->temp = temp;
    out->start = a->offset;
    out->end = end;
    return SG_OK;
  }
  if (!a->ptr)
    return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: node %s: accesses[%zu] has neither a pointer "
                    "nor a temporary", fn, who, i);
  uintptr_t end;
  if (!a->bytes || a->bytes > PTRDIFF_MAX ||
      __builtin_add_overflow((uintptr_t)a->ptr, a->bytes, &end))
    return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: node %s: accesses[%zu]: %zu bytes at %p are "
                    "no range (zero, larger than PTRDIFF_MAX, or wrapping)", fn, who, i, a->bytes,
                    a->ptr);
  out->temp = SG__NO_TEMP;
  out->start = (uintptr_t)a->ptr;
  out->end = end;
  return SG_OK;
}

sg_status sg_graph_declare_access(sg_graph *graph, sg_node node, const sg_access *accesses,
                                  size_t count) {
  sg_status st = sg__graph_enter(graph, __func__);
  if (st) return st;
  uint32_t index;
  sg__access_table *t = &graph->access;
  st = sg__node_resolve(node, graph->serial, graph->node_count, __func__, "node", &index);
  if (!st && count && !accesses)
    st = sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: count is %zu but accesses is NULL", __func__,
                  count);
  if (!st && count > MAX_ACCESSES - t->count)
    st = sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: the graph would hold more than %u accesses",
                  __func__, MAX_ACCESSES);
  if (!st && t->count + count > t->cap) {
    size_t cap = t->cap ? t->cap : 16;
    while (cap < t->count + count) cap *= 2;
    sg__access *acc = sg__realloc_array(t->acc, cap, sizeof *acc);
    if (!acc) st = sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory", __func__);
    else {
      t->acc = acc;
      t->cap = (uint32_t)cap;
    }
  }
  /* Converted straight into the table's spare room; counted in only when
   * every one passed. */
  for (size_t i = 0; i < count && !st; i++)
    st = convert(graph, index, &accesses[i], i, __func__, &t->acc[t->count + i]);
  if (!st) t->count += (uint32_t)count;
  sg__graph_leave(graph);
  return st;
}

sg_status sg_graph_bind_temp(sg_graph *graph, sg_node node, unsigned arg, sg_temp temp,
                             size_t offset) {
  sg_status st = sg__graph_enter(graph, __func__);
  if (st) return st;
  uint32_t index, t_index = 0;
  sg__access_table *t = &graph->access;
  st = sg__node_resolve(node, graph->serial, graph->node_count, __func__, "node", &index);
  if (!st) st = sg__temp_resolve(temp, graph->serial, t->temp_count, __func__, "temp", &t_index);
  if (!st) {
    const sg__node *n = &graph->nodes[index];
    char label[SG__LABEL_BYTES];
    if (n->kind != SG__NODE_KERNEL)
      st = sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: node %s is a %s node; only kernel arguments "
                    "take a temporary's address", __func__, sg__node_label(n, index, label),
                    sg__node_kind_name(n->kind));
    else if (arg >= n->u.kernel.arg_count || n->u.kernel.arg_sizes[arg] != sizeof(void *))
      st = sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: node %s: argument %u is not a pointer-sized "
                    "argument (the kernel has %u)", __func__, sg__node_label(n, index, label),
                    arg, n->u.kernel.arg_count);
    else if (offset >= t->temps[t_index].bytes)
      st = sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: offset %zu lies outside temporary t%u of %zu "
                    "bytes", __func__, offset, t_index, t->temps[t_index].bytes);
  }
  uint32_t at = t->bind_count;
  for (uint32_t b = 0; !st && b < t->bind_count; b++)
    if (t->binds[b].node == index && t->binds[b].arg == arg) at = b;
  if (!st && at == t->bind_count) {
    if (t->bind_count == t->bind_cap) {
      uint32_t cap = t->bind_cap ? t->bind_cap * 2 : 16;
      sg__temp_bind *binds = sg__realloc_array(t->binds, cap, sizeof *binds);
      if (!binds) st = sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory", __func__);
      else {
        t->binds = binds;
        t->bind_cap = cap;
      }
    }
    if (!st) t->bind_count++;
  }
  if (!st) t->binds[at] = (sg__temp_bind){index, arg, t_index, offset, 0};
  sg__graph_leave(graph);
  return st;
}

static size_t temp_count_of(const sg_graph *graph) { return graph->access.temp_count; }
static size_t access_count_of(const sg_graph *graph) { return graph->access.count; }

sg_status sg_graph_temp_count(const sg_graph *graph, size_t *count) {
  return sg__graph_read_count(graph, __func__, temp_count_of, count);
}

sg_status sg_graph_access_count(const sg_graph *graph, size_t *count) {
  return sg__graph_read_count(graph, __func__, access_count_of, count);
}

sg_status sg_graph_inferred_edge_count(const sg_graph *graph, size_t *count) {
  sg_status st = sg__graph_read_begin(graph, __func__);
  if (st) return st;
  if (!count) {
    st = sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: count is NULL", __func__);
  } else {
    sg__snapshot snap;
    if (sg__graph_snapshot_shallow(graph, &snap)) {
      st = sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory", __func__);
    } else {
      size_t n = 0;
      if (snap.succ_inferred)
        for (uint32_t e = 0; e < snap.edge_count; e++) n += snap.succ_inferred[e];
      *count = n;
      sg__snapshot_free(&snap);
    }
  }
  sg__graph_read_end(graph);
  return st;
}

/* ---- copies and memsets with temporaries -------------------------------------- */

/* Room for `n` more bindings, so that adding them after the node cannot fail. */
static sg_status reserve_binds(sg__access_table *t, uint32_t n, const char *fn) {
  if (t->bind_count + n <= t->bind_cap) return SG_OK;
  uint32_t cap = t->bind_cap ? t->bind_cap * 2 : 16;
  while (cap < t->bind_count + n) cap *= 2;
  sg__temp_bind *binds = sg__realloc_array(t->binds, cap, sizeof *binds);
  if (!binds) return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
  t->binds = binds;
  t->bind_cap = cap;
  return SG_OK;
}

/* One side: a temporary (non-zero handle) resolved, `bytes` from `offset`
 * inside it. *index is SG__NO_TEMP for a zero handle. */
static sg_status temp_side(const sg_graph *g, sg_temp temp, size_t offset, size_t bytes,
                           const char *fn, const char *what, uint32_t *index) {
  *index = SG__NO_TEMP;
  if (!temp.opaque) return SG_OK;
  sg_status st = sg__temp_resolve(temp, g->serial, g->access.temp_count, fn, what, index);
  if (st) return st;
  size_t end, size = g->access.temps[*index].bytes;
  if (sg__add_overflows(offset, bytes, &end) || end > size)
    return sg__fail(SG_ERR_INVALID_ARGUMENT,
                    "%s: %zu bytes from offset %zu run past the end of %s (t%u, %zu bytes)", fn,
                    bytes, offset, what, *index, size);
  return SG_OK;
}

sg_status sg_graph_add_copy_temp(sg_graph *graph, const sg_copy_desc *desc, sg_temp dst_temp,
                                 size_t dst_offset, sg_temp src_temp, size_t src_offset,
                                 const sg_node *deps, size_t dep_count, sg_node *out) {
  sg_status st = sg__graph_enter(graph, __func__);
  if (st) return st;
  uint32_t dst = SG__NO_TEMP, src = SG__NO_TEMP;
  size_t bytes = desc ? desc->bytes : 0;
  st = sg__graph_check_deps(graph, deps, dep_count, __func__);
  if (!st) st = temp_side(graph, dst_temp, dst_offset, bytes, __func__, "dst_temp", &dst);
  if (!st) st = temp_side(graph, src_temp, src_offset, bytes, __func__, "src_temp", &src);
  if (!st && dst == SG__NO_TEMP && src == SG__NO_TEMP)
    st = sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: neither dst_temp nor src_temp names a "
                  "temporary (sg_graph_add_copy makes plain copies)", __func__);
  if (!st) st = reserve_binds(&graph->access, 2, __func__);
  sg__node node;
  if (!st) {
    sg__where where = {__func__, "copy", desc ? desc->name : NULL, NULL, graph->node_count};
    unsigned sides = (dst != SG__NO_TEMP ? SG__TEMP_DST : 0) | (src != SG__NO_TEMP ? SG__TEMP_SRC : 0);
    st = sg__node_from_copy_temps(desc, &where, sides, &node);
  }
  sg_node made;
  if (!st) st = sg__graph_append_node(graph, &node, deps, dep_count, &made, __func__);
  if (!st) {
    sg__access_table *t = &graph->access;
    uint8_t auto_kind = desc->kind == SG_COPY_AUTO;
    uint32_t index = sg_node_index(made);
    if (dst != SG__NO_TEMP)
      t->binds[t->bind_count++] = (sg__temp_bind){index, SG__BIND_COPY_DST, dst, dst_offset,
                                                  auto_kind};
    if (src != SG__NO_TEMP)
      t->binds[t->bind_count++] = (sg__temp_bind){index, SG__BIND_COPY_SRC, src, src_offset,
                                                  auto_kind};
    if (out) *out = made;
  }
  sg__graph_leave(graph);
  return st;
}

sg_status sg_graph_add_memset_temp(sg_graph *graph, const sg_memset_desc *desc, sg_temp dst_temp,
                                   size_t dst_offset, const sg_node *deps, size_t dep_count,
                                   sg_node *out) {
  sg_status st = sg__graph_enter(graph, __func__);
  if (st) return st;
  uint32_t dst = SG__NO_TEMP;
  size_t bytes = 0;
  if (desc && sg__mul_overflows(desc->count, desc->element_size, &bytes)) bytes = SIZE_MAX;
  st = sg__graph_check_deps(graph, deps, dep_count, __func__);
  if (!st) st = temp_side(graph, dst_temp, dst_offset, bytes, __func__, "dst_temp", &dst);
  if (!st && dst == SG__NO_TEMP)
    st = sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: dst_temp is not a temporary", __func__);
  if (!st && desc && desc->element_size &&
      (dst_offset % desc->element_size ||
       graph->access.temps[dst].alignment < desc->element_size))
    st = sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: offset %zu of temporary t%u (alignment %zu) is "
                  "not aligned to element_size %u", __func__, dst_offset, dst,
                  graph->access.temps[dst].alignment, desc->element_size);
  if (!st) st = reserve_binds(&graph->access, 1, __func__);
  sg__node node;
  if (!st) {
    sg__where where = {__func__, "memset", desc ? desc->name : NULL, NULL, graph->node_count};
    st = sg__node_from_memset_temp(desc, &where, &node);
  }
  sg_node made;
  if (!st) st = sg__graph_append_node(graph, &node, deps, dep_count, &made, __func__);
  if (!st) {
    sg__access_table *t = &graph->access;
    t->binds[t->bind_count++] =
        (sg__temp_bind){sg_node_index(made), SG__BIND_MEMSET_DST, dst, dst_offset, 0};
    if (out) *out = made;
  }
  sg__graph_leave(graph);
  return st;
}
