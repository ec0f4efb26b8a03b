/* Implied edges between NCCL nodes sharing a communicator, in creation
 * order (collective_order.h). */
#include "plan/collective_order.h"

#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/node.h"
#include "core/sys.h"

typedef struct last_use {
  const void *comm;
  uint32_t node; /* the latest NCCL node so far that uses comm */
} last_use;

static int by_pair(const void *a, const void *b) {
  const uint32_t *x = a, *y = b;
  if (x[0] != y[0]) return x[0] < y[0] ? -1 : 1;
  return (x[1] > y[1]) - (x[1] < y[1]);
}

/* 1 if u -> v is an edge of the snapshot (successor lists ascending). */
static int has_edge(const sg__snapshot *s, uint32_t u, uint32_t v) {
  uint32_t lo = s->succ_start[u], hi = s->succ_start[u + 1];
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (s->succ[mid] < v) lo = mid + 1;
    else hi = mid;
  }
  return lo < s->succ_start[u + 1] && s->succ[lo] == v;
}

/* The implied pairs, ascending and distinct, into *out (owned). */
static sg_status collect(const sg__snapshot *snap, uint32_t **out, uint32_t *count) {
  *out = NULL;
  *count = 0;
  size_t comms = 0;
  for (uint32_t i = 0; i < snap->node_count; i++)
    if (snap->nodes[i].kind == SG__NODE_NCCL) comms += snap->nodes[i].u.nccl.call_count;
  if (comms < 2) return SG_OK;
  last_use *last = sg__calloc(comms, sizeof *last);
  uint32_t *pairs = sg__calloc(comms, 2 * sizeof *pairs);
  if (!last || !pairs) {
    sg__free(last);
    sg__free(pairs);
    return SG_ERR_OUT_OF_MEMORY;
  }
  size_t known = 0, made = 0;
  for (uint32_t i = 0; i < snap->node_count; i++) {
    const sg__node *n = &snap->nodes[i];
    if (n->kind != SG__NODE_NCCL) continue;
    for (unsigned c = 0; c < n->u.nccl.call_count; c++) {
      const void *comm = n->u.nccl.calls[c].comm;
      size_t k = 0;
      while (k < known && last[k].comm != comm) k++;
      if (k == known) {
        last[known++] = (last_use){comm, i};
        continue;
      }
      if (last[k].node != i) {
        pairs[2 * made] = last[k].node;
        pairs[2 * made + 1] = i;
        made++;
        last[k].node = i;
      }
    }
  }
  sg__free(last);
  if (made) qsort(pairs, made, 2 * sizeof *pairs, by_pair);
  size_t distinct = 0;
  for (size_t k = 0; k < made; k++)
    if (!distinct || by_pair(&pairs[2 * k], &pairs[2 * (distinct - 1)]) != 0) {
      pairs[2 * distinct] = pairs[2 * k];
      pairs[2 * distinct + 1] = pairs[2 * k + 1];
      distinct++;
    }
  if (!distinct) {
    sg__free(pairs);
    return SG_OK;
  }
  *out = pairs;
  *count = (uint32_t)distinct;
  return SG_OK;
}

/* Merges the implied pairs the graph lacks into new successor lists. */
static sg_status merge(const sg__snapshot *snap, const uint32_t *pairs, uint32_t count,
                       sg__snapshot *edges) {
  const uint32_t n = snap->node_count;
  uint32_t extra = 0;
  for (uint32_t k = 0; k < count; k++) extra += !has_edge(snap, pairs[2 * k], pairs[2 * k + 1]);
  uint32_t *start = sg__malloc(((size_t)n + 1) * sizeof *start);
  uint32_t *succ = sg__malloc(((size_t)snap->edge_count + extra + 1) * sizeof *succ);
  if (!start || !succ) {
    sg__free(start);
    sg__free(succ);
    return SG_ERR_OUT_OF_MEMORY;
  }
  uint32_t at = 0, k = 0;
  for (uint32_t u = 0; u < n; u++) {
    start[u] = at;
    uint32_t e = snap->succ_start[u], end = snap->succ_start[u + 1];
    while (k < count && pairs[2 * k] < u) k++;
    /* Both lists ascending: merge, dropping an implied edge the graph has. */
    while (e < end || (k < count && pairs[2 * k] == u)) {
      int take_implied = k < count && pairs[2 * k] == u &&
                         (e == end || pairs[2 * k + 1] < snap->succ[e]);
      if (take_implied) {
        succ[at++] = pairs[2 * k + 1];
        k++;
      } else {
        if (k < count && pairs[2 * k] == u && pairs[2 * k + 1] == snap->succ[e]) k++;
        succ[at++] = snap->succ[e++];
      }
    }
  }
  start[n] = at;
  *edges = *snap;
  edges->succ_start = start;
  edges->succ = succ;
  edges->edge_count = at;
  return SG_OK;
}

/* SG_OK if `edges` is acyclic; else SG_ERR_CYCLE naming an implied pair on
 * a cycle (the graph itself was checked acyclic before). */
static sg_status check_acyclic(const sg__snapshot *edges, const uint32_t *pairs, uint32_t count) {
  const uint32_t n = edges->node_count;
  uint32_t *indegree = sg__calloc(n ? n : 1, sizeof *indegree);
  uint32_t *ready = sg__malloc((n ? n : 1) * sizeof *ready);
  if (!indegree || !ready) {
    sg__free(indegree);
    sg__free(ready);
    return sg__fail(SG_ERR_OUT_OF_MEMORY, "planner: out of memory ordering NCCL nodes");
  }
  for (uint32_t e = 0; e < edges->edge_count; e++) indegree[edges->succ[e]]++;
  uint32_t head = 0, tail = 0;
  for (uint32_t v = 0; v < n; v++)
    if (!indegree[v]) ready[tail++] = v;
  while (head < tail) {
    uint32_t u = ready[head++];
    for (uint32_t e = edges->succ_start[u]; e < edges->succ_start[u + 1]; e++)
      if (--indegree[edges->succ[e]] == 0) ready[tail++] = edges->succ[e];
  }
  sg_status st = SG_OK;
  if (tail < n) {
    /* Nodes on a cycle keep an in-degree; an implied pair joins two. */
    uint32_t k = 0;
    while (k + 1 < count && !(indegree[pairs[2 * k]] && indegree[pairs[2 * k + 1]])) k++;
    char a[SG__LABEL_BYTES], b[SG__LABEL_BYTES];
    st = sg__fail(SG_ERR_CYCLE,
                  "planner: NCCL nodes %s and %s share a communicator, so they run in the order "
                  "they were created (every rank must issue collectives in one order), but the "
                  "graph's edges make %s wait for %s: create the NCCL nodes in the order they "
                  "run",
                  sg__node_label(&edges->nodes[pairs[2 * k]], pairs[2 * k], a),
                  sg__node_label(&edges->nodes[pairs[2 * k + 1]], pairs[2 * k + 1], b), a, b);
  }
  sg__free(indegree);
  sg__free(ready);
  return st;
}

sg_status sg__collective_order(const sg__snapshot *snap, sg__snapshot *edges, int *owned,
                               uint32_t **implied, uint32_t *implied_count) {
  *edges = *snap;
  *owned = 0;
  uint32_t *pairs, count;
  if (collect(snap, &pairs, &count))
    return sg__fail(SG_ERR_OUT_OF_MEMORY, "planner: out of memory ordering NCCL nodes");
  *implied = pairs;
  *implied_count = count;
  if (!count) return SG_OK;
  if (merge(snap, pairs, count, edges)) {
    sg__free(pairs);
    *implied = NULL;
    *implied_count = 0;
    return sg__fail(SG_ERR_OUT_OF_MEMORY, "planner: out of memory ordering NCCL nodes");
  }
  *owned = 1;
  sg_status st = check_acyclic(edges, pairs, count);
  if (st) {
    sg__free(edges->succ_start);
    sg__free(edges->succ);
    *edges = *snap;
    *owned = 0;
    sg__free(pairs);
    *implied = NULL;
    *implied_count = 0;
  }
  return st;
}
