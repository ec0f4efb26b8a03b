/* The proof that a memory plan is safe, by a method that shares nothing
 * with the planner's clocks: happens-before is searched for over the
 * schedule's own edges (the next node on each stream, and each event's
 * recording node to the nodes waiting for it; or the graph's edges when
 * the streams are not planned), and every pair of temporaries given
 * overlapping bytes must have all uses of one reach all uses of the
 * other. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/sys.h"
#include "plan/memplan.h"

typedef struct hb_graph {
  uint32_t n;
  uint32_t *start, *next;    /* successors in the happens-before graph */
} hb_graph;

static int build_edges(const sg__schedule *s, const uint32_t *succ_start, const uint32_t *succ,
                       hb_graph *g) {
  uint32_t n = s->node_count;
  g->n = n;
  g->start = sg__calloc((size_t)n + 2, sizeof *g->start);
  if (!g->start) return -1;
  if (!s->streams_planned) {
    uint32_t m = succ_start[n];
    g->next = sg__malloc(((size_t)m + 1) * sizeof *g->next);
    if (!g->next) return -1;
    memcpy(g->start, succ_start, ((size_t)n + 1) * sizeof *g->start);
    if (m) memcpy(g->next, succ, (size_t)m * sizeof *g->next);
    return 0;
  }
  /* Two passes over the same edges: count, then fill. */
  size_t m = s->wait_start[n] + n;
  g->next = sg__malloc((m + 1) * sizeof *g->next);
  if (!g->next) return -1;
  for (int pass = 0; pass < 2; pass++) {
    for (uint32_t v = 0; v < n; v++) {
      uint32_t st = s->stream_of[v], p = s->position[v];
      if (p + 1 < s->stream_start[st + 1] - s->stream_start[st]) {
        uint32_t after = s->stream_nodes[s->stream_start[st] + p + 1];
        if (pass == 0) g->start[v + 2]++;
        else g->next[g->start[v + 1]++] = after;
      }
      for (uint32_t i = s->wait_start[v]; i < s->wait_start[v + 1]; i++) {
        uint32_t x = s->event_node[s->wait_event[i]];
        if (pass == 0) g->start[x + 2]++;
        else g->next[g->start[x + 1]++] = v;
      }
    }
    if (pass == 0)
      for (uint32_t v = 0; v < n; v++) g->start[v + 2] += g->start[v + 1];
  }
  return 0;
}

/* Nodes reachable from `from` (excluding itself unless on a cycle) as a
 * bitset of n bits. */
static void reach(const hb_graph *g, uint32_t from, uint64_t *bits, uint32_t *stack) {
  size_t words = ((size_t)g->n + 63) / 64;
  memset(bits, 0, words * sizeof *bits);
  uint32_t top = 0;
  stack[top++] = from;
  while (top) {
    uint32_t v = stack[--top];
    for (uint32_t e = g->start[v]; e < g->start[v + 1]; e++) {
      uint32_t w = g->next[e];
      if (bits[w / 64] >> (w % 64) & 1) continue;
      bits[w / 64] |= (uint64_t)1 << (w % 64);
      stack[top++] = w;
    }
  }
}

sg_status sg__memplan_check(const sg__schedule *s, const uint32_t *succ_start,
                            const uint32_t *succ, const sg__access_table *t,
                            const sg__memplan *m) {
  uint32_t n = s->node_count, T = t->temp_count;
  if (!T || !m->offset) return SG_OK;
  hb_graph g = {0};
  size_t words = ((size_t)n + 63) / 64;
  uint64_t *bits = NULL;
  uint32_t *stack = NULL, *use_start = NULL, *use = NULL, *slot = NULL;
  sg_status st = SG_OK;
  /* Each node's reach set is computed once, for the nodes that use a
   * temporary (slot[v] is its row, or UINT32_MAX). */
  use_start = sg__calloc((size_t)T + 1, sizeof *use_start);
  use = sg__malloc(((size_t)t->count + 1) * sizeof *use);
  slot = sg__malloc(((size_t)n + 1) * sizeof *slot);
  stack = sg__malloc(((size_t)n + 1) * sizeof *stack);
  if (!use_start || !use || !slot || !stack || build_edges(s, succ_start, succ, &g)) goto oom;
  for (uint32_t i = 0; i < t->count; i++)
    if (t->acc[i].temp != SG__NO_TEMP) use_start[t->acc[i].temp + 1]++;
  for (uint32_t k = 0; k < T; k++) use_start[k + 1] += use_start[k];
  {
    uint32_t *fill = sg__malloc(((size_t)T + 1) * sizeof *fill);
    if (!fill) goto oom;
    memcpy(fill, use_start, (size_t)T * sizeof *fill);
    for (uint32_t i = 0; i < t->count; i++)
      if (t->acc[i].temp != SG__NO_TEMP) use[fill[t->acc[i].temp]++] = t->acc[i].node;
    sg__free(fill);
  }
  uint32_t rows = 0;
  for (uint32_t v = 0; v < n; v++) slot[v] = UINT32_MAX;
  for (uint32_t i = 0; i < use_start[T]; i++)
    if (slot[use[i]] == UINT32_MAX) slot[use[i]] = rows++;
  if (!(bits = sg__malloc(((size_t)rows * words + 1) * sizeof *bits))) goto oom;
  for (uint32_t v = 0; v < n; v++)
    if (slot[v] != UINT32_MAX) reach(&g, v, bits + (size_t)slot[v] * words, stack);

  for (uint32_t a = 0; a < T && !st; a++) {
    for (uint32_t b = a + 1; b < T && !st; b++) {
      if (use_start[a] == use_start[a + 1] || use_start[b] == use_start[b + 1]) continue;
      size_t a0 = m->offset[a], a1 = a0 + t->temps[a].bytes;
      size_t b0 = m->offset[b], b1 = b0 + t->temps[b].bytes;
      if (a1 <= b0 || b1 <= a0) continue;
      int ab = 1, ba = 1;
      uint32_t wa = 0, wb = 0;
      for (uint32_t i = use_start[a]; i < use_start[a + 1]; i++)
        for (uint32_t j = use_start[b]; j < use_start[b + 1]; j++) {
          uint32_t x = use[i], y = use[j];
          const uint64_t *rx = bits + (size_t)slot[x] * words, *ry = bits + (size_t)slot[y] * words;
          if (ab && !(rx[y / 64] >> (y % 64) & 1)) {
            ab = 0;
            wa = x;
            wb = y;
          }
          if (ba && !(ry[x / 64] >> (x % 64) & 1)) ba = 0;
        }
      if (!ab && !ba)
        st = sg__fail(SG_ERR_INVALID_ARGUMENT,
                      "planner: temporaries t%u [%zu, %zu) and t%u [%zu, %zu) share bytes, but "
                      "their uses #%u and #%u are not ordered by the schedule",
                      a, a0, a1, b, b0, b1, wa, wb);
    }
  }
  goto done;
oom:
  st = sg__fail(SG_ERR_OUT_OF_MEMORY, "planner: out of memory checking temporaries");
done:
  sg__free(g.start);
  sg__free(g.next);
  sg__free(bits);
  sg__free(stack);
  sg__free(use_start);
  sg__free(use);
  sg__free(slot);
  return st;
}
