/* The fewest chains that follow edges (a minimum path cover, node-disjoint):
 * Hopcroft-Karp on the bipartite graph "u (left) -> v (right) for each edge",
 * starting from the greedy cover. O(E sqrt(n)) worst case, a few phases in
 * practice.
 *
 * Why a step before the closure (cover_augment.c): most chains of a real
 * DAG do follow edges, and matching on the edges is cheap and finds many
 * augmenting paths per phase, where the closure search finds few. In a
 * pipeline of wide stages, for instance, it restores the stage-to-stage
 * matchings a greedy pass breaks, and the closure search has little left to
 * do. Links that follow edges also keep dependencies on one stream, which
 * saves events. Its phases count against limits->cover_work as well. Edges
 * between devices are left out (a chain stays on one device). */
#include "core/sys.h"
#include "plan/work.h"

#define FAR UINT32_MAX

typedef struct hk {
  sg__work *w;
  uint32_t *dist;  /* left node -> BFS layer, FAR when not reached or dead */
  uint32_t *queue;
  uint32_t *edge;  /* left node -> the next edge its DFS will try */
  uint32_t *stack;
  uint32_t limit;  /* the layer at which a free right node was reached */
} hk;

/* Layers from all free left nodes; 1 if a free right node is reachable. */
static int bfs(hk *h, uint64_t *work) {
  sg__work *w = h->w;
  uint32_t head = 0, tail = 0;
  for (uint32_t u = 0; u < w->n; u++) {
    h->dist[u] = w->next[u] == SG__NONE ? 0 : FAR;
    if (!h->dist[u]) h->queue[tail++] = u;
    h->edge[u] = w->succ_start[u];
  }
  h->limit = FAR;
  while (head < tail) {
    uint32_t u = h->queue[head++];
    if (h->dist[u] >= h->limit) continue;
    *work += 1 + (w->succ_start[u + 1] - w->succ_start[u]);
    for (uint32_t e = w->succ_start[u]; e < w->succ_start[u + 1]; e++) {
      if (sg__device_of(w, u) != sg__device_of(w, w->succ[e])) continue;
      uint32_t mate = w->prev[w->succ[e]];
      if (mate == SG__NONE) {
        if (h->limit == FAR) h->limit = h->dist[u] + 1;
      } else if (h->dist[mate] == FAR) {
        h->dist[mate] = h->dist[u] + 1;
        h->queue[tail++] = mate;
      }
    }
  }
  return h->limit != FAR;
}

/* Depth-first along the layers from free left node `root`; on success the
 * path on the stack is flipped. 1 if it augmented. */
static int dfs(hk *h, uint32_t root, uint64_t *work) {
  sg__work *w = h->w;
  uint32_t sp = 0;
  h->stack[sp++] = root;
  while (sp) {
    uint32_t u = h->stack[sp - 1];
    if (h->edge[u] == w->succ_start[u + 1]) { /* dead end: never try u again */
      h->dist[u] = FAR;
      sp--;
      continue;
    }
    (*work)++;
    uint32_t v = w->succ[h->edge[u]], mate = w->prev[v];
    if (sg__device_of(w, u) != sg__device_of(w, v)) {
      h->edge[u]++;
    } else if (mate == SG__NONE) {
      if (h->dist[u] + 1 == h->limit) {
        for (uint32_t k = 0; k < sp; k++) {
          uint32_t x = h->stack[k], y = w->succ[h->edge[x]];
          w->next[x] = y;
          w->prev[y] = x;
          h->edge[x]++;
        }
        return 1;
      }
      h->edge[u]++;
    } else if (h->dist[mate] == h->dist[u] + 1) {
      h->stack[sp++] = mate; /* u's edge advances if mate turns out dead */
    } else {
      h->edge[u]++;
    }
  }
  return 0;
}

sg_status sg__cover_paths(sg__work *w) {
  uint64_t *work = &w->cover_spent;
  if (w->cover_exact) return SG_OK;
  uint32_t n = w->n;
  hk h = {w, sg__malloc((size_t)n * sizeof(uint32_t)), sg__malloc((size_t)n * sizeof(uint32_t)),
          sg__malloc((size_t)n * sizeof(uint32_t)), sg__malloc((size_t)n * sizeof(uint32_t)), 0};
  if (!h.dist || !h.queue || !h.edge || !h.stack) {
    sg__free(h.dist);
    sg__free(h.queue);
    sg__free(h.edge);
    sg__free(h.stack);
    return sg__oom(w, "path cover");
  }
  uint64_t per_phase = 2 * ((uint64_t)n + w->edges);
  while (*work + per_phase <= w->limits->cover_work && w->chain_count > w->width_bound &&
         bfs(&h, work)) {
    for (uint32_t u = 0; u < n; u++)
      if (w->next[u] == SG__NONE && h.dist[u] == 0 && dfs(&h, u, work)) w->chain_count--;
  }
  w->cover_exact = w->chain_count == w->width_bound;
  sg__free(h.dist);
  sg__free(h.queue);
  sg__free(h.edge);
  sg__free(h.stack);
  return SG_OK;
}
