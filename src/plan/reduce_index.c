/* Exact transitive reduction through a chain reachability index (Jagadish).
 *
 * With the chain cover at hand, first[u][c] = the earliest position on chain
 * c among u's strict descendants; everything after it on c is reachable too,
 * since a chain's next node is always a descendant. Computed backwards over
 * the issue order: first[u] = min over successors x of (first[x], and x's own
 * position on its chain). Edge u -> x is redundant iff another successor x'
 * reaches x: first[x'][chain(x)] <= pos(x) (x's own entry on its chain starts
 * after x, so x never covers itself).
 *
 * O((n + E) x chains) time; chains are processed in blocks so the index
 * never holds more than INDEX_CELLS entries, whatever the chain count. */
#include "core/sys.h"
#include "plan/reduce.h"

#define INDEX_CELLS ((size_t)1 << 22)

static void number_chains(const sg__work *w, uint32_t *of, uint32_t *pos) {
  uint32_t id = 0;
  for (uint32_t i = 0; i < w->n; i++) {
    uint32_t v = w->out->order[i];
    if (w->prev[v] != SG__NONE) continue;
    uint32_t p = 0;
    for (uint32_t x = v; x != SG__NONE; x = w->next[x]) {
      of[x] = id;
      pos[x] = p++;
    }
    id++;
  }
}

sg_status sg__reduce_index(sg__work *w, unsigned char *keep) {
  uint32_t n = w->n, total = w->chain_count;
  size_t block = INDEX_CELLS / n;
  if (block == 0) block = 1;
  if (block > total) block = total;
  uint32_t *first = sg__malloc((size_t)n * block * sizeof *first);
  uint32_t *own = sg__malloc(block * sizeof *own);
  uint32_t *of = sg__malloc((size_t)n * sizeof *of);
  uint32_t *pos = sg__malloc((size_t)n * sizeof *pos);
  if (!first || !own || !of || !pos) {
    sg__free(first);
    sg__free(own);
    sg__free(of);
    sg__free(pos);
    return sg__oom(w, "reachability index");
  }
  number_chains(w, of, pos);
  for (size_t k = 0; k < block; k++) own[k] = SG__NONE;
  const uint32_t *ss = w->succ_start, *succ = w->succ;
  for (uint32_t c0 = 0; c0 < total; c0 += (uint32_t)block) {
    size_t b = total - c0 < block ? total - c0 : block;
    for (uint32_t i = n; i-- > 0;) {
      uint32_t u = w->out->order[i];
      uint32_t *fu = first + (size_t)u * block;
      for (size_t k = 0; k < b; k++) fu[k] = SG__NONE;
      for (uint32_t e = ss[u]; e < ss[u + 1]; e++) {
        uint32_t x = succ[e];
        const uint32_t *fx = first + (size_t)x * block;
        for (size_t k = 0; k < b; k++)
          if (fx[k] < fu[k]) fu[k] = fx[k];
        uint32_t k = of[x] - c0;
        if (k < b && pos[x] < own[k]) own[k] = pos[x];
      }
      /* fu is the successors' strict reach here: test each edge against it */
      for (uint32_t e = ss[u]; e < ss[u + 1]; e++) {
        uint32_t x = succ[e], k = of[x] - c0;
        if (k < b && fu[k] <= pos[x]) keep[e] = 0;
      }
      for (uint32_t e = ss[u]; e < ss[u + 1]; e++) {
        uint32_t k = of[succ[e]] - c0;
        if (k >= b || own[k] == SG__NONE) continue;
        if (own[k] < fu[k]) fu[k] = own[k];
        own[k] = SG__NONE;
      }
    }
  }
  sg__free(first);
  sg__free(own);
  sg__free(of);
  sg__free(pos);
  return SG_OK;
}
