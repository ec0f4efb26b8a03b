/* Snapshots of graphs: the compressed successor lists, deep copies of the
 * nodes, cycle detection and topology comparison. */
#include "core/snapshot.h"

#include <stdio.h>
#include <string.h>

#include "core/conditional.h"
#include "core/error.h"
#include "core/graph_internal.h"
#include "core/sys.h"

sg_node sg__node_make(uint32_t serial, uint32_t index) {
  sg_node n = {((uint64_t)serial << 32) | index};
  return n;
}

uint32_t sg_node_index(sg_node node) { return (uint32_t)node.opaque; }

sg_status sg__node_resolve(sg_node node, uint32_t serial, uint32_t node_count, const char *fn,
                           const char *what, uint32_t *index) {
  uint32_t node_serial = (uint32_t)(node.opaque >> 32);
  uint32_t i = (uint32_t)node.opaque;
  if (node_serial == 0)
    return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: %s is not a node (zero handle)", fn, what);
  if (node_serial != serial)
    return sg__fail(SG_ERR_FOREIGN_NODE, "%s: %s (#%u) belongs to another graph", fn, what, i);
  if (i >= node_count)
    return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: %s (#%u) is out of range (%u nodes)", fn, what,
                    i, node_count);
  *index = i;
  return SG_OK;
}

/* Compressed successor lists, each ascending: edges are bucketed by target
 * first, then by source in that order (a two-pass counting sort). */
static sg_status build_csr(const sg__edge_set *edges, uint32_t n, sg__snapshot *out) {
  uint32_t m = edges->count;
  uint32_t *start = sg__calloc((size_t)n + 1, sizeof *start);
  uint32_t *succ = sg__malloc((size_t)m * sizeof *succ + 1);
  uint32_t *by_target = sg__malloc((size_t)m * sizeof *by_target + 1);
  uint32_t *cursor = sg__calloc((size_t)n + 1, sizeof *cursor);
  if (!start || !succ || !by_target || !cursor) {
    sg__free(start);
    sg__free(succ);
    sg__free(by_target);
    sg__free(cursor);
    return SG_ERR_OUT_OF_MEMORY;
  }
  for (uint32_t e = 0; e < m; e++) cursor[edges->to[e] + 1]++;
  for (uint32_t v = 0; v < n; v++) cursor[v + 1] += cursor[v];
  for (uint32_t e = 0; e < m; e++) by_target[cursor[edges->to[e]]++] = e;

  for (uint32_t e = 0; e < m; e++) start[edges->from[e] + 1]++;
  for (uint32_t v = 0; v < n; v++) start[v + 1] += start[v];
  memcpy(cursor, start, (size_t)n * sizeof *cursor);
  for (uint32_t k = 0; k < m; k++) {
    uint32_t e = by_target[k];
    succ[cursor[edges->from[e]]++] = edges->to[e];
  }
  sg__free(by_target);
  sg__free(cursor);
  out->succ_start = start;
  out->succ = succ;
  out->edge_count = m;
  return SG_OK;
}

sg_status sg__graph_snapshot_shallow(const sg_graph *graph, sg__snapshot *out) {
  memset(out, 0, sizeof *out);
  out->graph_serial = graph->serial;
  out->graph_name = graph->name;
  out->node_count = graph->node_count;
  out->nodes = graph->nodes;
  out->conds = graph->conds;
  out->cond_count = graph->cond_count;
  out->access = graph->access;
  if (graph->access.count < 2) return build_csr(&graph->edges, graph->node_count, out);
  /* Edges inferred from declared accesses join the explicit ones. */
  uint64_t *keys;
  size_t key_count;
  sg_status st = sg__access_infer(&graph->access, graph->node_count, &keys, &key_count);
  if (st) return st;
  st = sg__access_merge_csr(graph->edges.from, graph->edges.to, graph->edges.count, keys,
                            key_count, graph->node_count, &out->succ_start, &out->succ,
                            &out->succ_inferred, &out->edge_count);
  sg__free(keys);
  return st;
}

sg_status sg__graph_snapshot(const sg_graph *graph, sg__snapshot *out) {
  sg_status st = sg__graph_snapshot_shallow(graph, out);
  if (st) return st;
  out->nodes = NULL;
  out->owns_nodes = 1;
  out->node_count = 0; /* counts nodes copied so far, so a failure frees just those */
  out->graph_name = NULL;
  out->conds = NULL;
  out->cond_count = 0;
  memset(&out->access, 0, sizeof out->access);
  if (sg__access_table_clone(&graph->access, &out->access)) goto oom;
  if (graph->name && !(out->graph_name = sg__strdup(graph->name))) goto oom;
  if (graph->cond_count) {
    out->conds = sg__realloc_array(NULL, graph->cond_count, sizeof *out->conds);
    if (!out->conds) goto oom;
    memcpy(out->conds, graph->conds, graph->cond_count * sizeof *out->conds);
    out->cond_count = graph->cond_count;
  }
  out->nodes = sg__calloc(graph->node_count ? graph->node_count : 1, sizeof *out->nodes);
  if (!out->nodes) goto oom;
  for (uint32_t i = 0; i < graph->node_count; i++) {
    if (sg__node_clone(&graph->nodes[i], &out->nodes[i])) goto oom;
    out->node_count = i + 1;
  }
  return SG_OK;
oom:
  sg__snapshot_free(out);
  return SG_ERR_OUT_OF_MEMORY;
}

static void *dup_bytes(const void *src, size_t bytes) {
  void *p = sg__malloc(bytes ? bytes : 1);
  if (p && bytes) memcpy(p, src, bytes);
  return p;
}

sg_status sg__snapshot_copy(const sg__snapshot *src, sg__snapshot *out) {
  memset(out, 0, sizeof *out);
  out->graph_serial = src->graph_serial;
  out->owns_nodes = 1;
  out->edge_count = src->edge_count;
  /* Counts fit: the source holds arrays of these sizes. */
  const size_t starts = ((size_t)src->node_count + 1) * sizeof *src->succ_start;
  const size_t edges = (size_t)src->edge_count * sizeof *src->succ;
  if (!(out->succ_start = dup_bytes(src->succ_start, starts))) goto oom;
  if (!(out->succ = dup_bytes(src->succ, edges))) goto oom;
  if (src->succ_inferred && !(out->succ_inferred = dup_bytes(src->succ_inferred, src->edge_count)))
    goto oom;
  if (sg__access_table_clone(&src->access, &out->access)) goto oom;
  if (src->graph_name && !(out->graph_name = sg__strdup(src->graph_name))) goto oom;
  if (src->cond_count) {
    if (!(out->conds = dup_bytes(src->conds, src->cond_count * sizeof *src->conds))) goto oom;
    out->cond_count = src->cond_count;
  }
  out->nodes = sg__calloc(src->node_count ? src->node_count : 1, sizeof *out->nodes);
  if (!out->nodes) goto oom;
  for (uint32_t i = 0; i < src->node_count; i++) {
    if (sg__node_clone(&src->nodes[i], &out->nodes[i])) goto oom;
    out->node_count = i + 1;
  }
  return SG_OK;
oom:
  sg__snapshot_free(out);
  return SG_ERR_OUT_OF_MEMORY;
}

void sg__snapshot_free(sg__snapshot *snap) {
  if (snap->owns_nodes && snap->nodes) {
    for (uint32_t i = 0; i < snap->node_count; i++) sg__node_free(&snap->nodes[i]);
    sg__free(snap->nodes);
  }
  if (snap->owns_nodes) sg__free(snap->graph_name);
  if (snap->owns_nodes) sg__free(snap->conds);
  if (snap->owns_nodes) sg__access_table_free(&snap->access);
  sg__free(snap->succ_inferred);
  sg__free(snap->succ_start);
  sg__free(snap->succ);
  memset(snap, 0, sizeof *snap);
}

/* Appends "'name' (#i)" to the message being built, names cut short. */
static size_t append_node(char *buf, size_t cap, size_t len, const sg__snapshot *s, uint32_t v) {
  if (len >= cap) return len;
  const char *name = s->nodes[v].name;
  int n = name ? snprintf(buf + len, cap - len, "'%.32s' (#%u)", name, v)
               : snprintf(buf + len, cap - len, "#%u", v);
  return n < 0 ? len : len + (size_t)n;
}

/* 1 if the edge u -> v is there only because declared accesses imply it. */
static int edge_inferred(const sg__snapshot *s, uint32_t u, uint32_t v) {
  if (!s->succ_inferred) return 0;
  uint32_t lo = s->succ_start[u], hi = s->succ_start[u + 1];
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (s->succ[mid] < v) lo = mid + 1;
    else hi = mid;
  }
  return lo < s->succ_start[u + 1] && s->succ[lo] == v && s->succ_inferred[lo];
}

/* Appends, for the first edge of the cycle that declared accesses made,
 * which memory made it: the explicit edges run against creation order. */
static size_t explain_inferred(char *buf, size_t cap, size_t len, const sg__snapshot *s,
                               const uint32_t *cycle, uint32_t length, uint32_t back_to) {
  for (uint32_t k = 0; k < length && len < cap; k++) {
    uint32_t u = cycle[k], v = k + 1 < length ? cycle[k + 1] : back_to;
    if (!edge_inferred(s, u, v)) continue;
    char why[400];
    sg__access_explain(&s->access, u, v, why, sizeof why);
    int n = snprintf(buf + len, cap - len,
                     "; the edge #%u -> #%u comes from declared accesses (%s: the node created "
                     "first runs first), and explicit edges order them the other way",
                     u, v, why);
    return n < 0 ? len : len + (size_t)n;
  }
  return len;
}

/* Reports one cycle found by depth-first search over the nodes a topological
 * sort could not place (every cycle lies among them). */
static sg_status report_cycle(const sg__snapshot *s, const uint32_t *indegree, const char *fn) {
  uint32_t n = s->node_count;
  unsigned char *color = sg__calloc(n, 1); /* 0 white, 1 on the stack, 2 done */
  uint32_t *stack = sg__malloc((size_t)n * sizeof *stack);
  uint32_t *edge_at = sg__malloc((size_t)n * sizeof *edge_at);
  if (!color || !stack || !edge_at) {
    sg__free(color);
    sg__free(stack);
    sg__free(edge_at);
    return sg__fail(SG_ERR_CYCLE, "%s: the dependencies form a cycle (out of memory naming it)",
                    fn);
  }
  char msg[SG_ERROR_MESSAGE_BYTES];
  size_t len = 0;
  for (uint32_t root = 0; root < n && !len; root++) {
    if (indegree[root] == 0 || color[root]) continue;
    uint32_t depth = 0;
    stack[depth] = root;
    edge_at[depth] = s->succ_start[root];
    color[root] = 1;
    while (depth != UINT32_MAX && !len) {
      uint32_t v = stack[depth];
      if (edge_at[depth] == s->succ_start[v + 1]) {
        color[v] = 2;
        depth--;
        continue;
      }
      uint32_t w = s->succ[edge_at[depth]++];
      if (indegree[w] == 0 || color[w] == 2) continue;
      if (color[w] == 1) { /* back edge: the cycle is the stack from w up */
        uint32_t from = depth;
        while (stack[from] != w) from--;
        uint32_t length = depth - from + 1;
        len = (size_t)snprintf(msg, sizeof msg, "%s: the dependencies form a cycle of %u nodes: ",
                               fn, length);
        for (uint32_t k = from; k <= depth && len < sizeof msg; k++) {
          len = append_node(msg, sizeof msg, len, s, stack[k]);
          if (len < sizeof msg) len += (size_t)snprintf(msg + len, sizeof msg - len, " -> ");
        }
        len = append_node(msg, sizeof msg, len, s, w);
        len = explain_inferred(msg, sizeof msg, len, s, stack + from, length, w);
        break;
      }
      color[w] = 1;
      stack[++depth] = w;
      edge_at[depth] = s->succ_start[w];
    }
  }
  sg__free(color);
  sg__free(stack);
  sg__free(edge_at);
  return sg__fail(SG_ERR_CYCLE, "%s", len ? msg : "the dependencies form a cycle");
}

sg_status sg__snapshot_check_acyclic(const sg__snapshot *s, const char *fn) {
  uint32_t n = s->node_count;
  if (s->access.count || s->access.bind_count) {
    sg_status st = sg__access_check(&s->access, s->nodes, n, fn);
    if (st) return st;
  }
  uint32_t *indegree = sg__calloc(n ? n : 1, sizeof *indegree);
  uint32_t *queue = sg__malloc((n ? n : 1) * sizeof *queue);
  if (!indegree || !queue) {
    sg__free(indegree);
    sg__free(queue);
    return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory checking for cycles", fn);
  }
  for (uint32_t e = 0; e < s->edge_count; e++) indegree[s->succ[e]]++;
  uint32_t head = 0, tail = 0;
  for (uint32_t v = 0; v < n; v++)
    if (!indegree[v]) queue[tail++] = v;
  while (head < tail) {
    uint32_t v = queue[head++];
    for (uint32_t e = s->succ_start[v]; e < s->succ_start[v + 1]; e++)
      if (--indegree[s->succ[e]] == 0) queue[tail++] = s->succ[e];
  }
  sg_status st = tail == n ? SG_OK : report_cycle(s, indegree, fn);
  sg__free(indegree);
  sg__free(queue);
  /* Each body of a conditional node is a graph of its own: checked alike. */
  return st ? st : sg__cond_check_bodies(s, fn);
}

int sg__snapshot_same_topology(const sg__snapshot *a, const sg__snapshot *b) {
  if (a->node_count != b->node_count || a->edge_count != b->edge_count) return 0;
  /* A backend takes the conditions' defaults and flags when it is made. */
  if (a->cond_count != b->cond_count ||
      (a->cond_count && memcmp(a->conds, b->conds, a->cond_count * sizeof *a->conds)))
    return 0;
  for (uint32_t i = 0; i < a->node_count; i++)
    if (!sg__node_same_shape(&a->nodes[i], &b->nodes[i])) return 0;
  if (!sg__access_same_temps(&a->access, &b->access)) return 0;
  return !memcmp(a->succ_start, b->succ_start, ((size_t)a->node_count + 1) * sizeof(uint32_t)) &&
         !memcmp(a->succ, b->succ, (size_t)a->edge_count * sizeof(uint32_t));
}
