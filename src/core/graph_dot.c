/* A graph as Graphviz DOT (see sg_graph_to_dot in streamgraph/graph.h): one
 * box per node, shaped by kind and labelled with its name, kind, index and
 * the parameter that tells nodes apart (a copy's direction and size, a
 * kernel's launch shape); one arrow per distinct edge, as the graph was
 * built (dashed where declared accesses alone imply it) (sg_plan_to_dot draws what the plan made of it). Executables keep
 * a snapshot of their graph, which is drawn the same way. */
#include "core/error.h"
#include "core/graph_internal.h"
#include "core/handles.h"
#include "core/snapshot.h"
#include "core/text.h"

static const char *shape(sg__node_kind kind) {
  switch (kind) {
    case SG__NODE_COPY: return "cds";
    case SG__NODE_KERNEL: return "box";
    case SG__NODE_MEMSET: return "box3d";
    case SG__NODE_HOST: return "hexagon";
    case SG__NODE_STREAM_FN: return "component";
    case SG__NODE_NCCL: return "octagon";
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

static void put_node(sg__text *t, const sg__node *node, uint32_t i) {
  sg__text_printf(t, "  n%u [shape=%s, label=\"", i, shape(node->kind));
  if (node->name) sg__text_dot(t, node->name);
  else sg__text_printf(t, "#%u", i);
  sg__text_printf(t, "\\n%s #%u", sg__node_kind_name(node->kind), i);
  if (node->kind == SG__NODE_COPY) {
    sg__text_printf(t, "\\n%s ", copy_direction(node->u.copy.kind));
    put_size(t, node->u.copy.bytes);
  } else if (node->kind == SG__NODE_KERNEL) {
    const sg__kernel *k = &node->u.kernel;
    sg__text_printf(t, "\\ngrid %ux%ux%u block %ux%ux%u", k->grid.x, k->grid.y, k->grid.z,
                    k->block.x, k->block.y, k->block.z);
  } else if (node->kind == SG__NODE_MEMSET) {
    sg__text_printf(t, "\\n%zu x %u B", node->u.memset.count, node->u.memset.element_size);
  } else if (node->kind == SG__NODE_NCCL) {
    const sg__nccl *c = &node->u.nccl;
    sg__text_printf(t, "\\n%s", sg__nccl_op_name(c->calls[0].op));
    if (c->call_count > 1) sg__text_printf(t, " +%u", c->call_count - 1);
  }
  if (node->device != SG_DEVICE_DEFAULT) sg__text_printf(t, "\\ndevice %d", node->device);
  sg__text_printf(t, "\"];\n");
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
  for (uint32_t i = 0; i < snap->node_count; i++) put_node(&t, &snap->nodes[i], i);
  for (uint32_t u = 0; u < snap->node_count; u++)
    for (uint32_t e = snap->succ_start[u]; e < snap->succ_start[u + 1]; e++)
      sg__text_printf(&t, "  n%u -> n%u%s;\n", u, snap->succ[e],
                      snap->succ_inferred && snap->succ_inferred[e]
                          ? " [style=dashed, tooltip=\"inferred from declared access\"]"
                          : "");
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
