/* Transitive reduction: an edge u -> v is redundant when another path leads
 * from u to v; redundant edges must create no events, and the reduced graph
 * is what the backends build CUDA graphs from.
 *
 * First the level-pruned searches (reduce_search.c): cheap wherever edges
 * are short, exact when none is cut short. If one was, the chain index
 * (reduce_index.c) finishes the job exactly when its cost, (n + E) x chains,
 * is within limits->reduce_work; the searches are then kept well below that
 * cost, so the two together stay within about 1.25 times the index. Otherwise the result keeps some redundant
 * edges; it still has the DAG's reachability, so plans stay correct, and
 * events.c drops the waits those edges would cause wherever dense vector
 * clocks fit. */
#include <string.h>

#include "core/sys.h"
#include "plan/reduce.h"

sg_status sg__reduce(sg__work *w) {
  uint32_t n = w->n;
  size_t m = w->edges;
  sg__schedule *s = w->out;
  unsigned char *keep = sg__malloc(m ? m : 1);
  if (!keep) return sg__oom(w, "transitive reduction");
  memset(keep, 1, m);
  /* When the index is affordable, the searches get no more than a quarter of
   * its cost: they are a cheaper try, not a second full price. */
  uint64_t index_cost = ((uint64_t)n + m) * w->chain_count;
  int index_ok = index_cost <= w->limits->reduce_work;
  uint64_t budget = w->limits->reduce_search_work;
  if (index_ok && index_cost / 4 < budget) budget = index_cost / 4;
  int exact = 1;
  sg_status st = sg__reduce_search(w, keep, budget, &exact);
  if (!st && !exact && index_ok) {
    st = sg__reduce_index(w, keep);
    exact = 1;
  }
  if (st) {
    sg__free(keep);
    return st;
  }
  s->reduction_exact = exact;

  size_t kept = 0;
  for (size_t e = 0; e < m; e++) kept += keep[e];
  s->red_start = sg__malloc(((size_t)n + 1) * sizeof *s->red_start);
  s->red_succ = sg__malloc((kept ? kept : 1) * sizeof *s->red_succ);
  if (!s->red_start || !s->red_succ) {
    sg__free(keep);
    return sg__oom(w, "reduced edges");
  }
  size_t k = 0;
  for (uint32_t u = 0; u < n; u++) {
    s->red_start[u] = (uint32_t)k;
    for (uint32_t e = w->succ_start[u]; e < w->succ_start[u + 1]; e++)
      if (keep[e]) s->red_succ[k++] = w->succ[e];
  }
  s->red_start[n] = (uint32_t)k;
  s->reduced_edge_count = kept;
  sg__free(keep);
  if (sg__csr_reverse(n, s->red_start, s->red_succ, &w->rpred_start, &w->rpred))
    return sg__oom(w, "reduced predecessor lists");
  return SG_OK;
}
