/* Transitive reduction: an edge u -> v is redundant when another path leads
 * from u to v; redundant edges must create no events.
 *
 * Exact method: a chain reachability index (Jagadish). With the chain cover
 * at hand, first[u][c] = the earliest position on chain c among u's strict
 * descendants; everything after it on c is reachable too. Computed backwards
 * over the issue order, first[u] = min over successors w of (first[w], and
 * w's own position on its chain). Edge u -> w is redundant iff another
 * successor reaches w: first[w'][chain(w)] <= pos(w) for some successor w'.
 * That costs
 * O((n + E) x chains) time; chains are processed in blocks so memory stays at
 * INDEX_CELLS entries whatever the chain count. Run when that cost is within
 * limits->reduce_work.
 *
 * Otherwise (many chains and many nodes): only edges implied by a path of
 * two edges are removed (u -> w' -> v), within limits->reduce_hop_work. The
 * result is between the exact reduction and the full edge set, with the same
 * reachability, so it is still correct; events.c removes the waits the
 * remaining redundant edges would cause wherever dense vector clocks fit. */
#include <string.h>

#include "core/sys.h"
#include "plan/work.h"

#define INDEX_CELLS ((size_t)1 << 22)

typedef struct chains {
  uint32_t *of;  /* node -> chain id (chains numbered by the issue rank of their head) */
  uint32_t *pos; /* node -> position on its chain */
} chains;

static void number_chains(const sg__work *w, chains *c) {
  uint32_t id = 0;
  for (uint32_t i = 0; i < w->n; i++) {
    uint32_t v = w->out->order[i];
    if (w->prev[v] != SG__NONE) continue;
    uint32_t p = 0;
    for (uint32_t x = v; x != SG__NONE; x = w->next[x]) {
      c->of[x] = id;
      c->pos[x] = p++;
    }
    id++;
  }
}

static sg_status reduce_exact(sg__work *w, const chains *c, unsigned char *keep) {
  uint32_t n = w->n, total = w->chain_count;
  size_t block = INDEX_CELLS / n;
  if (block == 0) block = 1;
  if (block > total) block = total;
  uint32_t *first = sg__malloc((size_t)n * block * sizeof *first);
  uint32_t *own = sg__malloc(block * sizeof *own);
  if (!first || !own) {
    sg__free(first);
    sg__free(own);
    return sg__oom(w, "reachability index");
  }
  for (size_t k = 0; k < block; k++) own[k] = SG__NONE;
  for (uint32_t c0 = 0; c0 < total; c0 += (uint32_t)block) {
    size_t b = total - c0 < block ? total - c0 : block;
    for (uint32_t i = n; i-- > 0;) {
      uint32_t u = w->out->order[i];
      uint32_t *fu = first + (size_t)u * block;
      for (size_t k = 0; k < b; k++) fu[k] = SG__NONE;
      for (uint32_t e = w->succ_start[u]; e < w->succ_start[u + 1]; e++) {
        uint32_t x = w->succ[e];
        const uint32_t *fx = first + (size_t)x * block;
        for (size_t k = 0; k < b; k++)
          if (fx[k] < fu[k]) fu[k] = fx[k];
        uint32_t k = c->of[x] - c0;
        if (k < b && c->pos[x] < own[k]) own[k] = c->pos[x];
      }
      /* fu is still the successors' strict reach. It covers a successor x
       * also when another successor sits earlier on x's chain: a chain's next
       * node is a descendant, so that one's reach on the chain is <= pos(x).
       * x's own reach on its chain starts after x, so x never covers itself. */
      for (uint32_t e = w->succ_start[u]; e < w->succ_start[u + 1]; e++) {
        uint32_t x = w->succ[e], k = c->of[x] - c0;
        if (k < b && fu[k] <= c->pos[x]) keep[e] = 0;
      }
      for (uint32_t e = w->succ_start[u]; e < w->succ_start[u + 1]; e++) {
        uint32_t k = c->of[w->succ[e]] - c0;
        if (k >= b || own[k] == SG__NONE) continue;
        if (own[k] < fu[k]) fu[k] = own[k];
        own[k] = SG__NONE;
      }
    }
  }
  sg__free(first);
  sg__free(own);
  return SG_OK;
}

static sg_status reduce_two_hops(sg__work *w, unsigned char *keep) {
  uint32_t n = w->n;
  uint32_t *mark = sg__malloc((size_t)n * sizeof *mark); /* node -> the u whose successor it is */
  uint32_t *edge = sg__malloc((size_t)n * sizeof *edge); /* node -> the edge u -> it */
  if (!mark || !edge) {
    sg__free(mark);
    sg__free(edge);
    return sg__oom(w, "transitive reduction");
  }
  for (uint32_t v = 0; v < n; v++) mark[v] = SG__NONE;
  const uint32_t *ss = w->succ_start, *succ = w->succ;
  uint64_t spent = 0;
  for (uint32_t u = 0; u < n; u++) {
    uint64_t cost = 0;
    for (uint32_t e = ss[u]; e < ss[u + 1]; e++) cost += ss[succ[e] + 1] - ss[succ[e]];
    if (cost == 0 || spent + cost > w->limits->reduce_hop_work) continue;
    spent += cost;
    for (uint32_t e = ss[u]; e < ss[u + 1]; e++) {
      mark[succ[e]] = u;
      edge[succ[e]] = e;
    }
    for (uint32_t e = ss[u]; e < ss[u + 1]; e++)
      for (uint32_t f = ss[succ[e]]; f < ss[succ[e] + 1]; f++)
        if (mark[succ[f]] == u) keep[edge[succ[f]]] = 0;
  }
  sg__free(mark);
  sg__free(edge);
  return SG_OK;
}

sg_status sg__reduce(sg__work *w) {
  uint32_t n = w->n;
  size_t m = w->edges;
  sg__schedule *s = w->out;
  unsigned char *keep = sg__malloc(m ? m : 1);
  chains c = {sg__malloc((size_t)n * sizeof(uint32_t)), sg__malloc((size_t)n * sizeof(uint32_t))};
  if (!keep || !c.of || !c.pos) {
    sg__free(keep);
    sg__free(c.of);
    sg__free(c.pos);
    return sg__oom(w, "transitive reduction");
  }
  memset(keep, 1, m);
  number_chains(w, &c);
  sg_status st;
  uint64_t cost = ((uint64_t)n + m) * w->chain_count;
  if (cost <= w->limits->reduce_work) {
    st = reduce_exact(w, &c, keep);
    s->reduction_exact = 1;
  } else {
    st = reduce_two_hops(w, keep);
    s->reduction_exact = m == 0;
  }
  sg__free(c.of);
  sg__free(c.pos);
  if (st) {
    sg__free(keep);
    return st;
  }

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
