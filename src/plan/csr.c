/* Reversing compressed adjacency lists (successors -> predecessors). */
#include "core/sys.h"
#include "plan/work.h"

/* A counting sort by target; scanning sources in ascending order keeps each
 * reversed list ascending, as the planner's steps expect. */
sg_status sg__csr_reverse(uint32_t n, const uint32_t *start, const uint32_t *adj,
                          uint32_t **rstart, uint32_t **radj) {
  size_t m = start[n];
  uint32_t *rs = sg__calloc((size_t)n + 2, sizeof *rs);
  uint32_t *ra = sg__malloc((m ? m : 1) * sizeof *ra);
  if (!rs || !ra) {
    sg__free(rs);
    sg__free(ra);
    return SG_ERR_OUT_OF_MEMORY;
  }
  for (size_t e = 0; e < m; e++) rs[adj[e] + 2]++;
  for (uint32_t v = 0; v < n; v++) rs[v + 2] += rs[v + 1];
  /* rs[v + 1] is now the first slot of v; it advances as v's list fills, and
   * ends as the start of v + 1. */
  for (uint32_t u = 0; u < n; u++)
    for (uint32_t e = start[u]; e < start[u + 1]; e++) ra[rs[adj[e] + 1]++] = u;
  *rstart = rs;
  *radj = ra;
  return SG_OK;
}
