/* A graph as Graphviz DOT (see sg_graph_to_dot in streamgraph/graph.h): one
 * box per node, shaped by kind and labelled with its name, kind, index and
 * the parameter that tells nodes apart (a copy's direction and size, a
 * kernel's launch shape); one arrow per distinct edge, as the graph was
 * built (dashed where declared accesses alone imply it) (sg_plan_to_dot draws what the plan made of it). Executables keep
 * a snapshot of their graph, which is drawn the same way. */
#include "core/conditional.h"
#include "core/error.h"
#include "core/graph_internal.h"
#include "core/handles.h"
#include "core/snapshot.h"
#include "core/text.h"
#include "core/sys.h"

#include <stdio.h>

static const char *shape(sg__node_kind kind) {
  switch (kind) {
    case SG__NODE_COPY: return "cds";
    case SG__NODE_KERNEL: return "box";
    case SG__NODE_MEMSET: return "box3d";
    case SG__NODE_HOST: return "hexagon";
    case SG__NODE_STREAM_FN: return "component";
    case SG__NODE_NCCL: return "octagon";
    case SG__NODE_COND: return "diamond";
    default: return "ellipse";
  }
}

static const char *copy_direction(sg_copy_kind kind) {
  switch (kind) {
    case SG_COPY_HOST_TO_DEVICE: return "host->device";
    case SG_COPY_DEVICE_TO_HOST: return "device->host";
    case SG_COPY_DEVICE_TO_DEVICE: return "device->device";
    default: return "host->host";
  }
}

static void put_size(sg__text *t, size_t bytes) {
  if (bytes >= (1u << 20)) sg__text_printf(t, "%.1f MiB", (double)bytes / (1u << 20));
  else if (bytes >= 1024) sg__text_printf(t, "%.1f KiB", (double)bytes / 1024);
  else sg__text_printf(t, "%zu B", bytes);
}

/* `prefix` tells bodies' nodes apart: "" at the top, "n3b0_" in body 0 of
 * node 3, and so on down. */
static void put_node(sg__text *t, const sg__node *node, uint32_t i, const char *prefix) {
  sg__text_printf(t, "  %sn%u [shape=%s, label=\"", prefix, i, shape(node->kind));
  if (node->name) sg__text_dot(t, node->name);
  else sg__text_printf(t, "#%u", i);
  sg__text_printf(t, "\\n%s #%u", sg__node_kind_name(node->kind), i);
  if (node->kind == SG__NODE_COPY) {
    sg__text_printf(t, "\\n%s ", copy_direction(node->u.copy.kind));
    put_size(t, node->u.copy.bytes);
  } else if (node->kind == SG__NODE_KERNEL) {
    const sg__kernel *k = &node->u.kernel;
    sg__text_printf(t, "\\ngrid %s%ux%ux%u block %ux%ux%u", k->grid_arg ? "<= " : "", k->grid.x,
                    k->grid.y, k->grid.z, k->block.x, k->block.y, k->block.z);
    /* A grid from the device: the words it reads, and the argument told. */
    if (k->grid_arg)
      sg__text_printf(t, "\\ngrid from device words %p (arg %u)", (const void *)k->grid_words,
                      k->grid_arg - 1);
    if (k->cond_arg) sg__text_printf(t, "\\nsets condition #%u", k->cond_id);
  } else if (node->kind == SG__NODE_MEMSET) {
    sg__text_printf(t, "\\n%zu x %u B", node->u.memset.count, node->u.memset.element_size);
  } else if (node->kind == SG__NODE_NCCL) {
    const sg__nccl *c = &node->u.nccl;
    sg__text_printf(t, "\\n%s", sg__nccl_op_name(c->calls[0].op));
    if (c->call_count > 1) sg__text_printf(t, " +%u", c->call_count - 1);
  } else if (node->kind == SG__NODE_COND) {
    sg__text_printf(t, "\\n%s on condition #%u", sg__cond_kind_name(node->u.cond),
                    node->u.cond->cond_id);
  }
  if (node->device != SG_DEVICE_DEFAULT) sg__text_printf(t, "\\ndevice %d", node->device);
  sg__text_printf(t, "\"];\n");
}

static sg_status put_graph(sg__text *t, const sg__snapshot *snap, const char *prefix,
                           unsigned depth);

/* Each body of conditional node `i` as a cluster inside the drawing, with a
 * dashed arrow from the node to each of its body's nodes without
 * predecessors (where the body starts). */
static sg_status put_bodies(sg__text *t, const sg__node *node, uint32_t i, const char *prefix,
                            unsigned depth) {
  const sg__cond_node *p = node->u.cond;
  for (uint32_t b = 0; b < p->body_count; b++) {
    char inner[512];
    snprintf(inner, sizeof inner, "%sn%ub%u_", prefix, i, b);
    sg__snapshot tmp;
    const sg__snapshot *body;
    int made;
    if (sg__cond_body_view(p, b, &tmp, &body, &made)) return SG_ERR_OUT_OF_MEMORY;
    const char *role = p->kind == SG_COND_IF ? (b == 0 ? "then" : "else")
                       : p->kind == SG_COND_WHILE ? "loop" : "case";
    sg__text_printf(t, "  subgraph cluster_%s {\n  label=\"%s", inner, role);
    if (p->kind == SG_COND_SWITCH) sg__text_printf(t, " %u", b);
    sg__text_printf(t, "\"; style=dashed;\n");
    sg_status st = put_graph(t, body, inner, depth + 1);
    sg__text_printf(t, "  }\n");
    for (uint32_t v = 0; !st && v < body->node_count; v++) {
      int has_pred = 0;
      for (uint32_t e = 0; e < body->edge_count && !has_pred; e++) has_pred = body->succ[e] == v;
      if (!has_pred) sg__text_printf(t, "  %sn%u -> %sn%u [style=dashed];\n", prefix, i, inner, v);
    }
    if (made) sg__snapshot_free(&tmp);
    if (st) return st;
  }
  return SG_OK;
}

static sg_status put_graph(sg__text *t, const sg__snapshot *snap, const char *prefix,
                           unsigned depth) {
  for (uint32_t i = 0; i < snap->node_count; i++) put_node(t, &snap->nodes[i], i, prefix);
  for (uint32_t u = 0; u < snap->node_count; u++)
    for (uint32_t e = snap->succ_start[u]; e < snap->succ_start[u + 1]; e++)
      sg__text_printf(t, "  %sn%u -> %sn%u%s;\n", prefix, u, prefix, snap->succ[e],
                      snap->succ_inferred && snap->succ_inferred[e]
                          ? " [style=dashed, tooltip=\"inferred from declared access\"]"
                          : "");
  for (uint32_t i = 0; i < snap->node_count && depth <= SG_MAX_COND_DEPTH; i++)
    if (snap->nodes[i].kind == SG__NODE_COND) {
      sg_status st = put_bodies(t, &snap->nodes[i], i, prefix, depth);
      if (st) return st;
    }
  return SG_OK;
}

sg_status sg__snapshot_to_dot(const sg__snapshot *snap, char **dot) {
  *dot = NULL;
  sg__text t = {0};
  sg__text_printf(&t, "digraph graph_%u {\n  /* %u nodes, %u edges */\n  label=\"",
                  snap->graph_serial, snap->node_count, snap->edge_count);
  if (snap->graph_name) sg__text_dot(&t, snap->graph_name);
  else sg__text_printf(&t, "graph %u", snap->graph_serial);
  sg__text_printf(&t, "\"; labelloc=t; fontname=\"Helvetica\";\n  node [style=rounded, "
                      "fontname=\"Helvetica\"];\n");
  if (put_graph(&t, snap, "", 0)) {
    sg__text_free(&t);
    return SG_ERR_OUT_OF_MEMORY;
  }
  sg__text_printf(&t, "}\n");
  *dot = sg__text_take(&t);
  return *dot ? SG_OK : SG_ERR_OUT_OF_MEMORY;
}

sg_status sg_graph_to_dot(const sg_graph *graph, char **dot) {
  if (!dot) return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: dot is NULL", __func__);
  *dot = NULL;
  /* Read while entered: no call changes or destroys the graph meanwhile. */
  sg_status st = sg__graph_read_begin(graph, __func__);
  if (st) return st;
  sg__snapshot snap;
  st = sg__graph_snapshot_shallow(graph, &snap);
  if (!st) st = sg__snapshot_to_dot(&snap, dot);
  sg__snapshot_free(&snap);
  const uint32_t nodes = graph->node_count;
  sg__graph_read_end(graph);
  if (st)
    return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory writing %u nodes", __func__, nodes);
  return SG_OK;
}
