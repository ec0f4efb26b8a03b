/* Issue order, levels and the critical path.
 *
 * Kahn's algorithm gives each node its level: the longest path from a source,
 * in edges. The issue order is the nodes sorted by (level, index): every edge
 * goes to a higher level, so it is topological, and nodes that could start
 * together in an as-soon-as-possible schedule are issued together. The number
 * of levels is the critical path in nodes.
 *
 * Nodes of one level are pairwise independent (an edge would separate their
 * levels), so the largest level is an antichain: a lower bound on the width.
 * Layering by the longest path to a sink gives a second antichain for free;
 * the larger of the two is kept. O(n + E).
 *
 * With several devices, the nodes of one device in one layer are an antichain
 * of that device's nodes: each device gets its own bound the same way, and
 * the sum bounds the streams needed (a stream holds one device's nodes).
 * O(n x devices) more. */
#include <string.h>

#include "core/error.h"
#include "core/sys.h"
#include "plan/work.h"

/* Largest number of nodes of `device` (any device when device_of is NULL)
 * sharing one value of layer[] (values < n). */
static uint32_t largest_layer(uint32_t n, const uint32_t *layer, const uint32_t *device_of,
                              uint32_t device, uint32_t *count) {
  memset(count, 0, (size_t)n * sizeof *count);
  uint32_t best = 0;
  for (uint32_t v = 0; v < n; v++)
    if ((!device_of || device_of[v] == device) && ++count[layer[v]] > best) best = count[layer[v]];
  return best;
}

/* Each device's bound (the larger of its two layerings), and their sum. */
static sg_status device_bounds(sg__work *w, const uint32_t *height, uint32_t *count) {
  w->device_bound = sg__calloc(w->device_count, sizeof *w->device_bound);
  if (!w->device_bound) return sg__oom(w, "device bounds");
  uint32_t sum = 0;
  for (uint32_t d = 0; d < w->device_count; d++) {
    uint32_t by_level = largest_layer(w->n, w->level, w->device_of, d, count);
    uint32_t by_height = largest_layer(w->n, height, w->device_of, d, count);
    w->device_bound[d] = by_level > by_height ? by_level : by_height;
    sum += w->device_bound[d];
  }
  w->width_bound = sum;
  return SG_OK;
}

sg_status sg__topo(sg__work *w) {
  uint32_t n = w->n;
  sg__schedule *s = w->out;
  uint32_t *indegree = sg__malloc((size_t)n * sizeof *indegree);
  uint32_t *queue = sg__malloc((size_t)n * sizeof *queue);
  w->level = sg__calloc(n, sizeof *w->level);
  w->rank = sg__malloc((size_t)n * sizeof *w->rank);
  s->order = sg__malloc((size_t)n * sizeof *s->order);
  if (!indegree || !queue || !w->level || !w->rank || !s->order) {
    sg__free(indegree);
    sg__free(queue);
    return sg__oom(w, "topological order");
  }

  for (uint32_t v = 0; v < n; v++) indegree[v] = w->pred_start[v + 1] - w->pred_start[v];
  uint32_t head = 0, tail = 0, depth = 0;
  for (uint32_t v = 0; v < n; v++)
    if (!indegree[v]) queue[tail++] = v;
  while (head < tail) {
    uint32_t u = queue[head++];
    uint32_t next_level = w->level[u] + 1;
    if (w->level[u] >= depth) depth = w->level[u] + 1;
    for (uint32_t e = w->succ_start[u]; e < w->succ_start[u + 1]; e++) {
      uint32_t v = w->succ[e];
      if (w->level[v] < next_level) w->level[v] = next_level;
      if (--indegree[v] == 0) queue[tail++] = v;
    }
  }
  if (tail != n) {
    sg__free(indegree);
    sg__free(queue);
    return sg__fail(SG_ERR_CYCLE, "planner: the dependencies form a cycle (%u of %u nodes lie "
                    "on or behind one)", n - tail, n);
  }
  w->level_count = depth;

  /* Counting sort by level, stable in node index. indegree is free again and
   * serves as the per-level cursor. */
  uint32_t *cursor = indegree;
  memset(cursor, 0, (size_t)n * sizeof *cursor);
  for (uint32_t v = 0; v < n; v++)
    if (w->level[v] + 1 < n) cursor[w->level[v] + 1]++;
  for (uint32_t l = 1; l < n; l++) cursor[l] += cursor[l - 1];
  for (uint32_t v = 0; v < n; v++) s->order[cursor[w->level[v]]++] = v;
  for (uint32_t i = 0; i < n; i++) w->rank[s->order[i]] = i;
  s->critical_path = depth;

  /* Longest path to a sink, over the issue order backwards; queue is free
   * again and holds it. */
  uint32_t *height = queue;
  for (uint32_t i = n; i-- > 0;) {
    uint32_t u = s->order[i], h = 0;
    for (uint32_t e = w->succ_start[u]; e < w->succ_start[u + 1]; e++)
      if (height[w->succ[e]] + 1 > h) h = height[w->succ[e]] + 1;
    height[u] = h;
  }
  sg_status st = SG_OK;
  if (w->device_of) {
    st = device_bounds(w, height, cursor);
  } else {
    uint32_t by_level = largest_layer(n, w->level, NULL, 0, cursor);
    uint32_t by_height = largest_layer(n, height, NULL, 0, cursor);
    w->width_bound = by_level > by_height ? by_level : by_height;
  }
  sg__free(indegree);
  sg__free(queue);
  return st;
}
