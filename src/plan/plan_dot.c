/* A plan as Graphviz DOT (see sg_plan_to_dot in streamgraph/plan.h).
 *
 * One cluster per stream, filled with that stream's colour; reduced edges
 * solid; the edges an event carries dashed and labelled "e<event>"; stream
 * order between consecutive nodes that no reduced edge joins dotted grey:
 * implied by a longer path, or (only where chains were merged to fit the
 * stream limit) added by the merging. A reduced edge the planner implied to
 * give NCCL nodes sharing a communicator one order (collective_order.h),
 * not an edge of the graph, is purple and labelled "nccl order". */
#include "core/error.h"
#include "core/handles.h"
#include "core/sys.h"
#include "core/text.h"
#include "plan/plan.h"
#include "plan/plan_internal.h"

/* Border and fill colours of the streams, repeating after twelve (tab20). */
static const char *const border[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728",
                                     "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
                                     "#bcbd22", "#17becf", "#393b79", "#637939"};
static const char *const fill[] = {"#aec7e8", "#ffbb78", "#98df8a", "#ff9896",
                                   "#c5b0d5", "#c49c94", "#f7b6d2", "#c7c7c7",
                                   "#dbdb8d", "#9edae5", "#9c9ede", "#cedb9c"};
#define PALETTE (sizeof border / sizeof border[0])

static void put_streams(sg__text *t, const sg_plan *p) {
  const sg__schedule *s = &p->schedule;
  for (uint32_t k = 0; k < s->stream_count; k++) {
    int device = sg__plan_device(p, s->stream_device[k]);
    sg__text_printf(t, "  subgraph cluster_s%u {\n    label=\"stream %u", k, k);
    if (device != SG_DEVICE_DEFAULT) sg__text_printf(t, " (device %d)", device);
    sg__text_printf(t, "\"; color=\"%s\"; style=rounded;\n", border[k % PALETTE]);
    for (uint32_t at = s->stream_start[k]; at < s->stream_start[k + 1]; at++) {
      uint32_t v = s->stream_nodes[at];
      sg__text_printf(t, "    n%u [label=\"", v);
      if (p->name_at[v] != SG__UNNAMED) sg__text_dot(t, p->names + p->name_at[v]);
      else sg__text_printf(t, "#%u", v);
      sg__text_printf(t, "\\n%s #%u\", fillcolor=\"%s\"];\n", sg__node_kind_name(p->kinds[v]), v,
                      fill[k % PALETTE]);
    }
    sg__text_printf(t, "  }\n");
  }
}

/* The index of the reduced edge u -> v, or UINT32_MAX (successor lists are
 * ascending, so a binary search finds it). */
static uint32_t find_edge(const sg__schedule *s, uint32_t u, uint32_t v) {
  uint32_t lo = s->red_start[u], hi = s->red_start[u + 1];
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (s->red_succ[mid] < v) lo = mid + 1;
    else hi = mid;
  }
  return lo < s->red_start[u + 1] && s->red_succ[lo] == v ? lo : UINT32_MAX;
}

/* 1 if u -> v is one of the plan's implied NCCL-order edges (ascending pairs). */
static int implied_edge(const sg_plan *p, uint32_t u, uint32_t v) {
  uint32_t lo = 0, hi = p->implied_count;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    const uint32_t *e = &p->implied[2 * mid];
    if (e[0] < u || (e[0] == u && e[1] < v)) lo = mid + 1;
    else hi = mid;
  }
  return lo < p->implied_count && p->implied[2 * lo] == u && p->implied[2 * lo + 1] == v;
}

static sg_status put_edges(sg__text *t, const sg_plan *p) {
  const sg__schedule *s = &p->schedule;
  /* Each wait of v is for the event of one reduced predecessor u (events.c
   * draws them from the reduced edges): mark that edge as carried. */
  unsigned char *carried = sg__calloc(s->reduced_edge_count ? s->reduced_edge_count : 1, 1);
  if (!carried) return SG_ERR_OUT_OF_MEMORY;
  for (uint32_t v = 0; v < s->node_count; v++)
    for (uint32_t k = s->wait_start[v]; k < s->wait_start[v + 1]; k++) {
      uint32_t e = find_edge(s, s->event_node[s->wait_event[k]], v);
      if (e != UINT32_MAX) carried[e] = 1;
    }
  for (uint32_t u = 0; u < s->node_count; u++)
    for (uint32_t e = s->red_start[u]; e < s->red_start[u + 1]; e++) {
      /* Programmatic (the dependent may begin while u finishes): bold
       * green, "pdl", over whatever else the edge is. */
      const int pdl = s->programmatic && s->programmatic[s->red_succ[e]];
      if (pdl && carried[e])
        sg__text_printf(t, "  n%u -> n%u [style=\"dashed,bold\", color=\"#2ca02c\", "
                           "label=\"pdl e%d\"];\n", u, s->red_succ[e], s->record_event[u]);
      else if (pdl)
        sg__text_printf(t, "  n%u -> n%u [style=bold, color=\"#2ca02c\", label=\"pdl\"];\n", u,
                        s->red_succ[e]);
      else if (implied_edge(p, u, s->red_succ[e]))
        sg__text_printf(t, "  n%u -> n%u [style=%s, color=\"#9467bd\", label=\"nccl order%s\"];\n",
                        u, s->red_succ[e], carried[e] ? "dashed" : "bold",
                        carried[e] ? " (event)" : "");
      else if (carried[e])
        sg__text_printf(t, "  n%u -> n%u [style=dashed, color=\"#d62728\", label=\"e%d\"];\n", u,
                        s->red_succ[e], s->record_event[u]);
      else
        sg__text_printf(t, "  n%u -> n%u;\n", u, s->red_succ[e]);
    }
  sg__free(carried);
  for (uint32_t k = 0; k < s->stream_count; k++)
    for (uint32_t at = s->stream_start[k] + 1; at < s->stream_start[k + 1]; at++) {
      uint32_t a = s->stream_nodes[at - 1], b = s->stream_nodes[at];
      if (find_edge(s, a, b) == UINT32_MAX)
        sg__text_printf(t, "  n%u -> n%u [style=dotted, color=\"#999999\", arrowhead=none];\n",
                        a, b);
    }
  return SG_OK;
}

sg_status sg_plan_to_dot(const sg_plan *plan, char **dot) {
  if (!dot) return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: dot is NULL", __func__);
  *dot = NULL;
  sg_status st = sg__handle_check(plan, SG__HANDLE_PLAN, __func__, "plan");
  if (st) return st;
  /* An executable's deferred plan is planned in full first (plan/plan.h). */
  if ((st = sg__plan_complete((sg_plan *)plan))) return sg__plan_prefix_failure(st, __func__);
  const sg__schedule *s = &plan->schedule;
  sg__text t = {0};
  sg__text_printf(&t,
                  "digraph plan {\n  /* %u nodes, %u streams, %u events, %zu waits; solid: "
                  "edges after transitive reduction; dashed: those carried by an event; "
                  "dotted: stream order no reduced edge gives, %s */\n",
                  s->node_count, s->stream_count, s->event_count, s->wait_count,
                  s->chain_count > s->stream_count
                      ? "implied by a longer path, or added where chains were merged to fit "
                        "the stream limit"
                      : "implied by a longer path (an edge transitive reduction removed, or a "
                        "path through other streams)");
  sg__text_printf(&t, "  graph [fontname=\"Helvetica\"];\n  node [shape=box, "
                      "style=\"rounded,filled\", fontname=\"Helvetica\"];\n"
                      "  edge [fontname=\"Helvetica\"];\n");
  if (s->programmatic)
    sg__text_printf(&t, "  /* bold green (pdl): programmatic edges, %zu: the kernel they enter may "
                        "begin while its predecessors finish */\n",
                    s->programmatic_edge_count);
  put_streams(&t, plan);
  if (put_edges(&t, plan)) t.failed = 1;
  sg__text_printf(&t, "}\n");
  *dot = sg__text_take(&t);
  if (!*dot)
    return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory writing %u nodes", __func__,
                    s->node_count);
  return SG_OK;
}
