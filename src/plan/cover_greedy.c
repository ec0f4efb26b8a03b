/* A first chain cover, greedy, along edges.
 *
 * Nodes are taken in issue order; each one extends the chain of one of its
 * predecessors whose chain still ends at that predecessor, or starts a new
 * chain. Among such predecessors it takes the one with the fewest successors
 * still to come: a predecessor with none left would otherwise end its chain
 * for good, while one with others left may still be extended by them (the
 * usual min-degree rule for greedy matching). O(n + E).
 *
 * This cover is usually close to the width; cover_augment.c makes it minimum.
 * Chains here only follow edges, so every link of a chain is also an edge,
 * which keeps same-stream edges (free of events) as many as possible. A
 * chain never links nodes of two devices (a stream belongs to one device). */
#include "core/sys.h"
#include "plan/work.h"

sg_status sg__cover_greedy(sg__work *w) {
  uint32_t n = w->n;
  w->next = sg__malloc((size_t)n * sizeof *w->next);
  w->prev = sg__malloc((size_t)n * sizeof *w->prev);
  uint32_t *left = sg__malloc((size_t)n * sizeof *left); /* successors not yet issued */
  if (!w->next || !w->prev || !left) {
    sg__free(left);
    return sg__oom(w, "chain cover");
  }
  for (uint32_t v = 0; v < n; v++) {
    w->next[v] = w->prev[v] = SG__NONE;
    left[v] = w->succ_start[v + 1] - w->succ_start[v];
  }
  uint32_t chains = 0;
  for (uint32_t i = 0; i < n; i++) {
    uint32_t v = w->out->order[i];
    uint32_t best = SG__NONE;
    for (uint32_t e = w->pred_start[v]; e < w->pred_start[v + 1]; e++) left[w->pred[e]]--;
    for (uint32_t e = w->pred_start[v]; e < w->pred_start[v + 1]; e++) {
      uint32_t u = w->pred[e];
      if (w->next[u] != SG__NONE || sg__device_of(w, u) != sg__device_of(w, v)) continue;
      /* Ties go to the predecessor issued last: the closest in time. */
      if (best == SG__NONE || left[u] < left[best] ||
          (left[u] == left[best] && w->rank[u] > w->rank[best]))
        best = u;
    }
    if (best == SG__NONE) {
      chains++;
    } else {
      w->next[best] = v;
      w->prev[v] = best;
    }
  }
  sg__free(left);
  w->chain_count = chains;
  w->cover_exact = chains == w->width_bound;
  return SG_OK;
}
