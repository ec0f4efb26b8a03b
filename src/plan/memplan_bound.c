/* A lower bound on the peak of any packing of the temporaries (see
 * sg__memplan_lower_bound in plan/memplan.h).
 *
 * "Every use of A before every use of B" is a strict partial order on the
 * temporaries (transitive: uses of B sit between). Temporaries that may be
 * live at once are the incomparable pairs, so the largest total size live
 * at once is the maximum weight antichain of that order, which by
 * Dilworth's theorem (weighted) is the least number of chains covering
 * each temporary `size` times: total size minus the maximum flow through
 * the bipartite graph u -> v for u before v, with each side's capacity the
 * size. Exact, and quadratic in temporaries: used up to EXACT_MAX of them;
 * above, a clique grown greedily from each node's live set bounds it from
 * below (then the bench's ratio is pessimistic, never flattering). */
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/sys.h"
#include "plan/memplan.h"
#include "plan/memplan_internal.h"

#define NONE UINT32_MAX
#define EXACT_MAX 4096u

/* ---- maximum weight antichain by maximum flow (Dinic) ----------------------- */

typedef struct flow {
  uint32_t nodes;
  uint32_t *head, *next, *to, *level, *it;
  uint64_t *cap;
  size_t edges, cap_edges;
} flow;

static int add_arc(flow *f, uint32_t u, uint32_t v, uint64_t c) {
  if (f->edges + 2 > f->cap_edges) {
    size_t cap = f->cap_edges ? f->cap_edges * 2 : 1024;
    uint32_t *next = sg__realloc_array(f->next, cap, sizeof *next);
    if (next) f->next = next;
    uint32_t *to = sg__realloc_array(f->to, cap, sizeof *to);
    if (to) f->to = to;
    uint64_t *c2 = sg__realloc_array(f->cap, cap, sizeof *c2);
    if (c2) f->cap = c2;
    if (!next || !to || !c2) return -1;
    f->cap_edges = cap;
  }
  size_t e = f->edges;
  f->to[e] = v, f->cap[e] = c, f->next[e] = f->head[u], f->head[u] = (uint32_t)e;
  f->to[e + 1] = u, f->cap[e + 1] = 0, f->next[e + 1] = f->head[v], f->head[v] = (uint32_t)e + 1;
  f->edges += 2;
  return 0;
}

static int levels(flow *f, uint32_t *queue) {
  for (uint32_t v = 0; v < f->nodes; v++) f->level[v] = NONE;
  uint32_t qh = 0, qt = 0;
  f->level[0] = 0;
  queue[qt++] = 0;
  while (qh < qt) {
    uint32_t v = queue[qh++];
    for (uint32_t e = f->head[v]; e != NONE; e = f->next[e])
      if (f->cap[e] && f->level[f->to[e]] == NONE) {
        f->level[f->to[e]] = f->level[v] + 1;
        queue[qt++] = f->to[e];
      }
  }
  return f->level[1] != NONE;
}

static uint64_t push(flow *f, uint32_t v, uint64_t amount) {
  if (v == 1) return amount;
  for (; f->it[v] != NONE; f->it[v] = f->next[f->it[v]]) {
    uint32_t e = f->it[v], w = f->to[e];
    if (!f->cap[e] || f->level[w] != f->level[v] + 1) continue;
    uint64_t got = push(f, w, amount < f->cap[e] ? amount : f->cap[e]);
    if (got) {
      f->cap[e] -= got;
      f->cap[e ^ 1] += got;
      return got;
    }
  }
  return 0;
}

/* 0 and *bound set, 1 when there are too many temporaries, -1 when out of
 * memory. */
static int antichain_bound(const sg__mp_temps *x, size_t *bound) {
  uint32_t m;
  uint32_t *v = sg__mp_ordered(x, sg__mp_cmp_first, &m);
  if (!v) return -1;
  if (m > EXACT_MAX) {
    sg__free(v);
    return 1;
  }
  flow f = {0};
  f.nodes = 2 + 2 * m;
  f.head = sg__malloc((size_t)f.nodes * sizeof *f.head);
  f.level = sg__malloc((size_t)f.nodes * sizeof *f.level);
  f.it = sg__malloc((size_t)f.nodes * sizeof *f.it);
  uint32_t *queue = sg__malloc((size_t)f.nodes * sizeof *queue);
  int failed = !f.head || !f.level || !f.it || !queue;
  uint64_t total = 0, maxflow = 0;
  if (!failed) {
    for (uint32_t i = 0; i < f.nodes; i++) f.head[i] = NONE;
    for (uint32_t i = 0; i < m && !failed; i++) {
      uint64_t w = x->t[v[i]].size;
      total += w;
      failed = add_arc(&f, 0, 2 + i, w) || add_arc(&f, 2 + m + i, 1, w);
    }
    for (uint32_t i = 0; i < m && !failed; i++)
      for (uint32_t j = 0; j < m && !failed; j++)
        if (i != j && sg__mp_precedes(x, v[i], v[j]))
          failed = add_arc(&f, 2 + i, 2 + m + j, UINT64_MAX / 4);
  }
  while (!failed && levels(&f, queue)) {
    memcpy(f.it, f.head, (size_t)f.nodes * sizeof *f.it);
    uint64_t got;
    while ((got = push(&f, 0, UINT64_MAX / 4))) maxflow += got;
  }
  sg__free(f.head);
  sg__free(f.next);
  sg__free(f.to);
  sg__free(f.cap);
  sg__free(f.level);
  sg__free(f.it);
  sg__free(queue);
  sg__free(v);
  if (failed) return -1;
  *bound = (size_t)(total - maxflow);
  return 0;
}



/* Temporary k has a use at or before v, and one at or after it: all such
 * temporaries at one node are live together under any packing. */
static int open_at(const sg__mp_temps *x, const sg__mp_clocks *c, uint32_t k, uint32_t v) {
  const sg__mp_tinfo *T = &x->t[k];
  uint32_t rv = c->rank[v];
  if (!T->used || rv < T->first || rv > T->last) return 0;
  int before = 0, after = 0;
  const uint32_t *row = c->known + (size_t)v * c->width;
  for (uint32_t i = x->use_start[k]; i < x->use_start[k + 1] && !(before && after); i++) {
    uint32_t u = x->use[i];
    if (u == v) return 1;
    uint32_t cu = c->chain_of[u], cv = c->chain_of[v];
    if (!before && cu != NONE && row[cu] > c->pos[u]) before = 1;
    if (!after && cv != NONE && c->known[(size_t)u * c->width + cv] > c->pos[v]) after = 1;
  }
  return before && after;
}

sg_status sg__memplan_lower_bound(const sg__schedule *s, const uint32_t *succ_start,
                                  const uint32_t *succ, const sg__access_table *t,
                                  size_t *bound) {
  *bound = 0;
  if (!t->temp_count) return SG_OK;
  sg__mp_clocks c;
  sg__mp_temps x;
  memset(&x, 0, sizeof x);
  uint32_t T = t->temp_count, n = s->node_count;
  size_t *live = NULL;
  uint32_t *clique = NULL, *bysize = NULL;
  unsigned char *in = NULL;
  sg_status st = SG_OK;
  if (sg__mp_clocks_build(s, succ_start, succ, T, &c) || sg__mp_temps_build(t, &c, &x) ||
      sg__mp_temps_uses(t, c.n, &x) ||
      !(live = sg__calloc((size_t)n + 1, sizeof *live)) ||
      !(clique = sg__malloc(((size_t)T + 1) * sizeof *clique)) ||
      !(in = sg__calloc((size_t)T + 1, 1))) {
    st = sg__fail(SG_ERR_OUT_OF_MEMORY, "planner: out of memory bounding temporaries");
    goto done;
  }
  int exact = antichain_bound(&x, bound);
  if (exact < 0) {
    st = sg__fail(SG_ERR_OUT_OF_MEMORY, "planner: out of memory bounding temporaries");
    goto done;
  }
  if (exact == 0) goto done;
  uint32_t sorted_count;
  if (!(bysize = sg__mp_ordered(&x, sg__mp_cmp_size, &sorted_count))) {
    st = sg__fail(SG_ERR_OUT_OF_MEMORY, "planner: out of memory bounding temporaries");
    goto done;
  }
  for (uint32_t v = 0; v < n; v++)
    for (uint32_t k = 0; k < T; k++)
      if (open_at(&x, &c, k, v)) live[v] += x.t[k].size;
  /* Grow cliques from the nodes with the most live bytes. */
  enum { SEEDS = 16 };
  for (int seed = 0; seed < SEEDS; seed++) {
    uint32_t v = NONE;
    for (uint32_t u = 0; u < n; u++)
      if (live[u] && (v == NONE || live[u] > live[v])) v = u;
    if (v == NONE) break;
    live[v] = 0;
    uint32_t size = 0;
    size_t weight = 0;
    for (uint32_t k = 0; k < T; k++)
      if (open_at(&x, &c, k, v)) {
        clique[size++] = k;
        in[k] = 1;
        weight += x.t[k].size;
      }
    for (uint32_t i = 0; i < sorted_count; i++) {
      uint32_t k = bysize[i];
      if (in[k]) continue;
      int all = 1;
      for (uint32_t j = 0; j < size && all; j++) all = sg__mp_conflict(&x, clique[j], k);
      if (!all) continue;
      clique[size++] = k;
      in[k] = 1;
      weight += x.t[k].size;
    }
    for (uint32_t j = 0; j < size; j++) in[clique[j]] = 0;
    if (weight > *bound) *bound = weight;
  }
  /* A single temporary is a clique too. */
  for (uint32_t k = 0; k < T; k++)
    if (x.t[k].used && x.t[k].size > *bound) *bound = x.t[k].size;
done:
  sg__mp_clocks_free(&c);
  sg__mp_temps_free(&x);
  sg__free(live);
  sg__free(clique);
  sg__free(bysize);
  sg__free(in);
  return st;
}
