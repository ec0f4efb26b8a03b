/* Transitive reduction by searches pruned by level, each one bounded.
 *
 * Edge u -> x is redundant iff x is reachable from another successor of u.
 * Every path into x climbs strictly through levels (topo.c), so the search
 * from u's successors only needs to expand nodes below the highest level
 * among u's successors: in a pipeline of stages that is one level, and most
 * DAGs whose edges are short keep it to a few. The search is breadth-first,
 * so paths of two edges are found first, and it stops after `cap` edge
 * visits; a search cut short only misses redundant edges (never removes a
 * needed one), and the result is then marked inexact.
 *
 * Cost: the nodes below that level reachable from u's successors, per node,
 * at most budget / n edge visits (limits->reduce_search_work / n, 671 at
 * 100,000 nodes, or less when the chain index is affordable: reduce.c). */
#include "core/sys.h"
#include "plan/reduce.h"

sg_status sg__reduce_search(sg__work *w, unsigned char *keep, uint64_t budget, int *exact) {
  uint32_t n = w->n;
  uint32_t *is_succ = sg__malloc((size_t)n * sizeof *is_succ); /* == u: a successor of u */
  uint32_t *edge = sg__malloc((size_t)n * sizeof *edge);       /* successor -> the edge to it */
  uint32_t *seen = sg__malloc((size_t)n * sizeof *seen);       /* == u: met in u's search */
  uint32_t *queue = sg__malloc((size_t)n * sizeof *queue);
  if (!is_succ || !edge || !seen || !queue) {
    sg__free(is_succ);
    sg__free(edge);
    sg__free(seen);
    sg__free(queue);
    return sg__oom(w, "transitive reduction");
  }
  for (uint32_t v = 0; v < n; v++) is_succ[v] = seen[v] = SG__NONE;
  uint64_t cap = budget / n;
  const uint32_t *ss = w->succ_start, *succ = w->succ, *level = w->level;
  *exact = 1;
  for (uint32_t u = 0; u < n; u++) {
    if (ss[u + 1] - ss[u] < 2) continue; /* one successor: its edge is needed */
    uint32_t top = 0, head = 0, tail = 0;
    for (uint32_t e = ss[u]; e < ss[u + 1]; e++) {
      uint32_t x = succ[e];
      is_succ[x] = seen[x] = u;
      edge[x] = e;
      if (level[x] > top) top = level[x];
    }
    for (uint32_t e = ss[u]; e < ss[u + 1]; e++)
      if (level[succ[e]] < top) queue[tail++] = succ[e];
    uint64_t spent = 0;
    while (head < tail && spent < cap) {
      uint32_t y = queue[head++];
      spent += 1 + (ss[y + 1] - ss[y]);
      for (uint32_t f = ss[y]; f < ss[y + 1]; f++) {
        uint32_t z = succ[f];
        if (is_succ[z] == u) keep[edge[z]] = 0;
        if (seen[z] == u) continue;
        seen[z] = u;
        if (level[z] < top) queue[tail++] = z;
      }
    }
    if (head < tail) *exact = 0;
  }
  sg__free(is_succ);
  sg__free(edge);
  sg__free(seen);
  sg__free(queue);
  return SG_OK;
}
