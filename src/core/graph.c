/* Graphs: creating, adding nodes and edges, editing parameters, queries. */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "core/grid_source.h"
#include "core/graph_internal.h"
#include "core/handles.h"
#include "core/snapshot.h"
#include "core/sys.h"

#define MAX_NODES (UINT32_MAX / 4)

static atomic_uint next_serial = 1;

sg_status sg_graph_create(sg_graph **out) {
  if (!out) return sg__fail(SG_ERR_INVALID_ARGUMENT, "sg_graph_create: out is NULL");
  *out = NULL;
  sg_graph *g = sg__calloc(1, sizeof *g);
  if (!g) return sg__fail(SG_ERR_OUT_OF_MEMORY, "sg_graph_create: out of memory");
  unsigned serial;
  do serial = atomic_fetch_add(&next_serial, 1); while (serial == 0); /* 0 means "no node" */
  g->serial = serial;
  g->root_serial = serial;
  sg_status st = sg__handle_register(g, SG__HANDLE_GRAPH, "sg_graph_create");
  if (st) {
    sg__free(g);
    return st;
  }
  *out = g;
  return SG_OK;
}

static const char graph_word[] = "graph";

sg_status sg__graph_read_begin(const sg_graph *graph, const char *fn) {
  return sg__handle_enter(graph, SG__HANDLE_GRAPH, graph ? &((sg_graph *)graph)->in_use : NULL, 1,
                          fn, graph_word, graph_word);
}

void sg__graph_read_end(const sg_graph *graph) {
  sg__in_use_leave_shared(&((sg_graph *)graph)->in_use);
}

/* The entry of a call that changes the graph: a live handle, not in use. */
static sg_status enter(sg_graph *graph, const char *fn) {
  return sg__handle_enter(graph, SG__HANDLE_GRAPH, graph ? &graph->in_use : NULL, 0, fn,
                          graph_word, graph_word);
}

static void leave(sg_graph *graph) { sg__in_use_leave(&graph->in_use); }

/* The entry of a call that only reads it. */
static sg_status enter_shared(const sg_graph *graph, const char *fn) {
  return sg__graph_read_begin(graph, fn);
}

/* Frees a graph out of the handle registry already. */
static void free_graph(sg_graph *graph) {
  for (uint32_t i = 0; i < graph->node_count; i++) sg__node_free(&graph->nodes[i]);
  sg__free(graph->nodes);
  sg__edge_set_free(&graph->edges);
  sg__access_table_free(&graph->access);
  sg__free(graph->name);
  sg__free(graph->conds);
  sg__free(graph);
}

void sg__graph_free(sg_graph *graph) {
  sg__handle_unregister(graph);
  free_graph(graph);
}

sg_status sg_graph_destroy(sg_graph *graph) {
  /* A body belongs to its conditional node (its parent never changes). */
  sg_status st = enter(graph, __func__);
  if (st) return st;
  const int body = graph->parent != NULL;
  leave(graph);
  if (body)
    return sg__fail(SG_ERR_INVALID_ARGUMENT,
                    "%s: the graph is a body of a conditional node, which owns it; destroy the "
                    "top-level graph instead", __func__);
  st = sg__handle_enter_last(graph, SG__HANDLE_GRAPH, &graph->in_use, __func__, graph_word,
                             graph_word);
  if (st) return st;
  free_graph(graph);
  return SG_OK;
}

sg_status sg__graph_enter(sg_graph *graph, const char *fn) { return enter(graph, fn); }

void sg__graph_leave(sg_graph *graph) { leave(graph); }

/* Checks every dependency handle; the error names the dependency's
 * position. Nothing is formatted unless a handle is wrong: graphs of a
 * million nodes pass here once per edge. */
static sg_status check_deps(const sg_graph *g, const sg_node *deps, size_t dep_count,
                            const char *fn) {
  if (dep_count && !deps)
    return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: dep_count is %zu but deps is NULL", fn,
                    dep_count);
  if (dep_count > MAX_NODES)
    return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: dep_count %zu is too large", fn, dep_count);
  for (size_t i = 0; i < dep_count; i++) {
    uint32_t serial = (uint32_t)(deps[i].opaque >> 32), index = (uint32_t)deps[i].opaque;
    if (serial == g->serial && serial != 0 && index < g->node_count) continue;
    char what[32];
    snprintf(what, sizeof what, "deps[%zu]", i);
    return sg__node_resolve(deps[i], g->serial, g->node_count, fn, what, &index);
  }
  return SG_OK;
}

/* Adds the edges from `deps` (checked) into the node about to be appended
 * (index g->node_count). SG_ERR_OUT_OF_MEMORY leaves the graph unchanged. */
static sg_status edges_into_new(sg_graph *g, const sg_node *deps, size_t dep_count) {
  enum { STACK_DEPS = 64 };
  if (dep_count == 0) return SG_OK;
  uint32_t stack[STACK_DEPS];
  uint32_t *from = stack;
  if (dep_count > STACK_DEPS && !(from = sg__realloc_array(NULL, dep_count, sizeof *from)))
    return SG_ERR_OUT_OF_MEMORY;
  for (size_t i = 0; i < dep_count; i++) from[i] = sg_node_index(deps[i]);
  sg_status st = sg__edge_set_add_into_new(&g->edges, from, (uint32_t)dep_count, g->node_count);
  if (from != stack) sg__free(from);
  return st;
}

/* Appends a validated node and its dependency edges, all or nothing. */
static sg_status append_node(sg_graph *g, sg__node *node, const sg_node *deps, size_t dep_count,
                             sg_node *out, const char *fn) {
  if (g->node_count >= MAX_NODES) {
    if (node->kind == SG__NODE_STREAM_FN) node->u.stream_fn->release = NULL;
    sg__node_free(node);
    return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: the graph already has %u nodes", fn,
                    g->node_count);
  }
  if (g->node_count == g->node_capacity) {
    uint32_t cap = g->node_capacity ? g->node_capacity * 2 : 16;
    sg__node *nodes = sg__realloc_array(g->nodes, cap, sizeof *nodes);
    if (!nodes) goto oom;
    g->nodes = nodes;
    g->node_capacity = cap;
  }
  if (edges_into_new(g, deps, dep_count)) goto oom;
  uint32_t index = g->node_count++;
  g->nodes[index] = *node;
  if (out) *out = sg__node_make(g->serial, index);
  return SG_OK;
oom:
  /* The node never entered the graph: the caller still owns its user data. */
  if (node->kind == SG__NODE_STREAM_FN) node->u.stream_fn->release = NULL;
  sg__node_free(node);
  return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
}

sg_status sg__graph_add_node(sg_graph *graph, sg__node *node, const sg_node *deps,
                             size_t dep_count, sg_node *out, const char *fn) {
  sg_status st = check_deps(graph, deps, dep_count, fn);
  if (st) {
    sg__node_free(node);
    return st;
  }
  return append_node(graph, node, deps, dep_count, out, fn);
}

sg_status sg_graph_add_copy(sg_graph *graph, const sg_copy_desc *desc, const sg_node *deps,
                            size_t dep_count, sg_node *out) {
  sg_status st = enter(graph, __func__);
  if (st) return st;
  st = check_deps(graph, deps, dep_count, __func__);
  sg__where where = {__func__, "copy", desc ? desc->name : NULL, NULL, graph->node_count};
  sg__node node;
  if (!st) st = sg__node_from_copy(desc, &where, &node);
  if (!st) st = append_node(graph, &node, deps, dep_count, out, __func__);
  leave(graph);
  return st;
}

sg_status sg_graph_add_kernel(sg_graph *graph, const sg_kernel_desc *desc, const sg_node *deps,
                              size_t dep_count, sg_node *out) {
  sg_status st = enter(graph, __func__);
  if (st) return st;
  st = check_deps(graph, deps, dep_count, __func__);
  sg__where where = {__func__, "kernel", desc ? desc->name : NULL, NULL, graph->node_count};
  sg__node node;
  if (!st) st = sg__node_from_kernel(desc, &where, &node);
  if (!st) st = append_node(graph, &node, deps, dep_count, out, __func__);
  leave(graph);
  return st;
}

sg_status sg_graph_add_memset(sg_graph *graph, const sg_memset_desc *desc, const sg_node *deps,
                              size_t dep_count, sg_node *out) {
  sg_status st = enter(graph, __func__);
  if (st) return st;
  st = check_deps(graph, deps, dep_count, __func__);
  sg__where where = {__func__, "memset", desc ? desc->name : NULL, NULL, graph->node_count};
  sg__node node;
  if (!st) st = sg__node_from_memset(desc, &where, &node);
  if (!st) st = append_node(graph, &node, deps, dep_count, out, __func__);
  leave(graph);
  return st;
}

sg_status sg_graph_add_host(sg_graph *graph, const sg_host_desc *desc, const sg_node *deps,
                            size_t dep_count, sg_node *out) {
  sg_status st = enter(graph, __func__);
  if (st) return st;
  st = check_deps(graph, deps, dep_count, __func__);
  sg__where where = {__func__, "host", desc ? desc->name : NULL, NULL, graph->node_count};
  sg__node node;
  if (!st) st = sg__node_from_host(desc, &where, &node);
  if (!st) st = append_node(graph, &node, deps, dep_count, out, __func__);
  leave(graph);
  return st;
}

sg_status sg_graph_add_stream_fn(sg_graph *graph, const sg_stream_fn_desc *desc,
                                 const sg_node *deps, size_t dep_count, sg_node *out) {
  sg_status st = enter(graph, __func__);
  if (st) return st;
  st = check_deps(graph, deps, dep_count, __func__);
  sg__where where = {__func__, "stream-fn", desc ? desc->name : NULL, NULL, graph->node_count};
  sg__node node;
  if (!st) st = sg__node_from_stream_fn(desc, &where, &node);
  if (!st) st = append_node(graph, &node, deps, dep_count, out, __func__);
  leave(graph);
  return st;
}

sg_status sg_graph_add_empty(sg_graph *graph, const char *name, const sg_node *deps,
                             size_t dep_count, sg_node *out) {
  sg_status st = enter(graph, __func__);
  if (st) return st;
  st = check_deps(graph, deps, dep_count, __func__);
  sg__where where = {__func__, "empty", name, NULL, graph->node_count};
  sg__node node;
  if (!st) st = sg__node_empty(name, &where, &node);
  if (!st) st = append_node(graph, &node, deps, dep_count, out, __func__);
  leave(graph);
  return st;
}

static sg_status add_edge(sg_graph *graph, sg_node from, sg_node to, const char *fn) {
  uint32_t f = 0, t = 0;
  sg_status st = sg__node_resolve(from, graph->serial, graph->node_count, fn, "from", &f);
  if (!st) st = sg__node_resolve(to, graph->serial, graph->node_count, fn, "to", &t);
  if (st) return st;
  if (f == t) {
    char label[SG__LABEL_BYTES];
    return sg__fail(SG_ERR_SELF_EDGE, "%s: edge from node %s to itself", fn,
                    sg__node_label(&graph->nodes[f], f, label));
  }
  int added;
  if (sg__edge_set_add(&graph->edges, f, t, &added)) {
    if (graph->edges.count >= SG__MAX_EDGES)
      return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: the graph holds %u edges, the most a graph can",
                      fn, graph->edges.count);
    return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
  }
  return SG_OK;
}

sg_status sg_graph_add_edge(sg_graph *graph, sg_node from, sg_node to) {
  sg_status st = enter(graph, __func__);
  if (st) return st;
  st = add_edge(graph, from, to, __func__);
  leave(graph);
  return st;
}

/* Moves `fresh` into node `index` (it keeps its name when `fresh` has none). */
static void replace_node(sg_graph *graph, uint32_t index, sg__node *fresh) {
  sg__node_replace(&graph->nodes[index], fresh);
  sg__node_free(fresh);
}

/* Resolves `node` for an edit and checks it is of `kind`. */
static sg_status edit_target(sg_graph *graph, sg_node node, sg__node_kind kind, const char *fn,
                             uint32_t *index) {
  sg_status st = sg__node_resolve(node, graph->serial, graph->node_count, fn, "node", index);
  if (st) return st;
  const sg__node *n = &graph->nodes[*index];
  if (n->kind != kind) {
    char label[SG__LABEL_BYTES];
    return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: node %s is a %s node, not a %s node", fn,
                    sg__node_label(n, *index, label), sg__node_kind_name(n->kind),
                    sg__node_kind_name(kind));
  }
  return SG_OK;
}

sg_status sg_graph_set_kernel(sg_graph *graph, sg_node node, const sg_kernel_desc *desc) {
  uint32_t index;
  sg_status st = enter(graph, __func__);
  if (st) return st;
  st = edit_target(graph, node, SG__NODE_KERNEL, __func__, &index);
  sg__node fresh;
  if (!st) {
    sg__where where = {__func__, NULL, NULL, &graph->nodes[index], index};
    st = sg__node_from_kernel(desc, &where, &fresh);
    if (!st && (st = sg__grid_keep(&fresh.u.kernel, &graph->nodes[index], index, __func__)))
      sg__node_free(&fresh);
  }
  if (!st) replace_node(graph, index, &fresh);
  leave(graph);
  return st;
}

sg_status sg_graph_set_copy(sg_graph *graph, sg_node node, const sg_copy_desc *desc) {
  uint32_t index;
  sg_status st = enter(graph, __func__);
  if (st) return st;
  st = edit_target(graph, node, SG__NODE_COPY, __func__, &index);
  sg__node fresh;
  unsigned sides = 0;
  if (!st) st = sg__access_temp_sides(&graph->access, index, desc, __func__, &sides);
  if (!st) {
    sg__where where = {__func__, NULL, NULL, &graph->nodes[index], index};
    st = sides ? sg__node_from_copy_temps(desc, &where, sides, &fresh)
               : sg__node_from_copy(desc, &where, &fresh);
  }
  if (!st) replace_node(graph, index, &fresh);
  leave(graph);
  return st;
}

sg_status sg_graph_set_memset(sg_graph *graph, sg_node node, const sg_memset_desc *desc) {
  uint32_t index;
  sg_status st = enter(graph, __func__);
  if (st) return st;
  st = edit_target(graph, node, SG__NODE_MEMSET, __func__, &index);
  sg__node fresh;
  unsigned sides = 0;
  if (!st) st = sg__access_memset_temp(&graph->access, index, desc, __func__, &sides);
  if (!st) {
    sg__where where = {__func__, NULL, NULL, &graph->nodes[index], index};
    st = sides ? sg__node_from_memset_temp(desc, &where, &fresh)
               : sg__node_from_memset(desc, &where, &fresh);
  }
  if (!st) replace_node(graph, index, &fresh);
  leave(graph);
  return st;
}

sg_status sg_graph_set_host(sg_graph *graph, sg_node node, const sg_host_desc *desc) {
  uint32_t index;
  sg_status st = enter(graph, __func__);
  if (st) return st;
  st = edit_target(graph, node, SG__NODE_HOST, __func__, &index);
  sg__node fresh;
  if (!st) {
    sg__where where = {__func__, NULL, NULL, &graph->nodes[index], index};
    st = sg__node_from_host(desc, &where, &fresh);
  }
  if (!st) replace_node(graph, index, &fresh);
  leave(graph);
  return st;
}

sg_status sg__graph_read_count(const sg_graph *graph, const char *fn,
                               size_t (*read)(const sg_graph *graph), size_t *count) {
  sg_status st = enter_shared(graph, fn);
  if (st) return st;
  if (count) *count = read(graph);
  else st = sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: count is NULL", fn);
  sg__graph_read_end(graph);
  return st;
}

static size_t node_count_of(const sg_graph *graph) { return graph->node_count; }
static size_t edge_count_of(const sg_graph *graph) { return graph->edges.count; }

sg_status sg_graph_node_count(const sg_graph *graph, size_t *count) {
  return sg__graph_read_count(graph, __func__, node_count_of, count);
}

sg_status sg_graph_edge_count(const sg_graph *graph, size_t *count) {
  return sg__graph_read_count(graph, __func__, edge_count_of, count);
}

sg_status sg_graph_node_name(const sg_graph *graph, sg_node node, const char **name) {
  uint32_t index;
  sg_status st = enter_shared(graph, __func__);
  if (st) return st;
  st = sg__node_resolve(node, graph->serial, graph->node_count, __func__, "node", &index);
  if (!st && !name) st = sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: name is NULL", __func__);
  if (!st) *name = graph->nodes[index].name;
  sg__graph_read_end(graph);
  return st;
}

sg_status sg_graph_node_at(const sg_graph *graph, uint32_t index, sg_node *node) {
  sg_status st = enter_shared(graph, __func__);
  if (st) return st;
  if (!node)
    st = sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: node is NULL", __func__);
  else if (index >= graph->node_count)
    st = sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: index %u out of range (graph has %u nodes)",
                  __func__, index, graph->node_count);
  else
    *node = sg__node_make(graph->serial, index);
  sg__graph_read_end(graph);
  return st;
}

sg_status sg_graph_validate(const sg_graph *graph) {
  sg_status st = enter_shared(graph, __func__);
  if (st) return st;
  sg__snapshot snap;
  st = sg__graph_snapshot_shallow(graph, &snap);
  if (st) {
    st = sg__fail(st, "%s: out of memory", __func__);
  } else {
    st = sg__snapshot_check_acyclic(&snap, __func__);
    sg__snapshot_free(&snap);
  }
  sg__graph_read_end(graph);
  return st;
}

/* ---- NCCL nodes and devices ---------------------------------------------- */

sg_status sg_graph_add_nccl(sg_graph *graph, const sg_nccl_desc *desc, const sg_node *deps,
                            size_t dep_count, sg_node *out) {
  sg_status st = enter(graph, __func__);
  if (st) return st;
  st = check_deps(graph, deps, dep_count, __func__);
  sg__where where = {__func__, "nccl", desc ? desc->name : NULL, NULL, graph->node_count};
  sg__node node;
  if (!st) st = sg__node_from_nccl(desc, &where, &node);
  if (!st) st = append_node(graph, &node, deps, dep_count, out, __func__);
  leave(graph);
  return st;
}

sg_status sg_graph_set_nccl(sg_graph *graph, sg_node node, const sg_nccl_desc *desc) {
  uint32_t index;
  sg_status st = enter(graph, __func__);
  if (st) return st;
  st = edit_target(graph, node, SG__NODE_NCCL, __func__, &index);
  sg__node fresh;
  if (!st) {
    sg__where where = {__func__, NULL, NULL, &graph->nodes[index], index};
    st = sg__node_from_nccl(desc, &where, &fresh);
  }
  if (!st) {
    sg__node_replace(&graph->nodes[index], &fresh);
    sg__node_free(&fresh);
  }
  leave(graph);
  return st;
}

sg_status sg_graph_set_device(sg_graph *graph, sg_node node, int device) {
  uint32_t index;
  sg_status st = enter(graph, __func__);
  if (st) return st;
  st = sg__node_resolve(node, graph->serial, graph->node_count, __func__, "node", &index);
  if (!st && (device < SG_DEVICE_DEFAULT || device >= SG_MAX_DEVICES)) {
    char label[SG__LABEL_BYTES];
    st = sg__fail(SG_ERR_INVALID_ARGUMENT,
                  "%s: node %s: device %d is neither an ordinal below %d nor SG_DEVICE_DEFAULT",
                  __func__, sg__node_label(&graph->nodes[index], index, label), device,
                  SG_MAX_DEVICES);
  }
  if (!st) graph->nodes[index].device = device;
  leave(graph);
  return st;
}

sg_status sg_graph_get_device(const sg_graph *graph, sg_node node, int *device) {
  sg_status st = enter_shared(graph, __func__);
  if (st) return st;
  uint32_t index;
  if (!device) st = sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: device is NULL", __func__);
  if (!st) st = sg__node_resolve(node, graph->serial, graph->node_count, __func__, "node", &index);
  if (!st) *device = graph->nodes[index].device;
  sg__graph_read_end(graph);
  return st;
}

/* ---- for core/graph_access.c (nodes with temporaries) ---------------------- */

sg_status sg__graph_check_deps(const sg_graph *g, const sg_node *deps, size_t dep_count,
                               const char *fn) {
  return check_deps(g, deps, dep_count, fn);
}

sg_status sg__graph_append_node(sg_graph *g, sg__node *node, const sg_node *deps,
                                size_t dep_count, sg_node *out, const char *fn) {
  return append_node(g, node, deps, dep_count, out, fn);
}
