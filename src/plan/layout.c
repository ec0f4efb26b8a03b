/* Stream numbering and layout: streams are numbered in the order their first
 * node is issued (stream 0 starts the graph), each stream lists its nodes in
 * issue order, and every node learns its position on its stream.
 *
 * Also measures what merging cost: the plan's critical path, the longest
 * path through edges and stream order together (unit node durations). It
 * equals the DAG's critical path unless merged chains delay one another.
 * Longest paths never use a redundant edge, so the reduced edges suffice.
 * O(n + E). Each stream's device is its nodes' (merge.c never mixes them). */
#include "core/sys.h"
#include "plan/work.h"

sg_status sg__layout(sg__work *w) {
  uint32_t n = w->n;
  sg__schedule *s = w->out;
  uint32_t ids = w->chain_count; /* stream ids so far are < chains (and < limit when merged) */
  uint32_t *map = sg__malloc((size_t)ids * sizeof *map);
  uint32_t *path = sg__malloc((size_t)n * sizeof *path); /* longest path ending at a node */
  s->position = sg__malloc((size_t)n * sizeof *s->position);
  s->stream_nodes = sg__malloc((size_t)n * sizeof *s->stream_nodes);
  if (!map || !path || !s->position || !s->stream_nodes) {
    sg__free(map);
    sg__free(path);
    return sg__oom(w, "stream layout");
  }
  for (uint32_t k = 0; k < ids; k++) map[k] = SG__NONE;
  uint32_t streams = 0;
  for (uint32_t i = 0; i < n; i++) {
    uint32_t v = s->order[i], *id = &map[s->stream_of[v]];
    if (*id == SG__NONE) *id = streams++;
    s->stream_of[v] = *id;
  }
  s->stream_count = streams;
  s->stream_start = sg__calloc((size_t)streams + 1, sizeof *s->stream_start);
  s->stream_device = sg__calloc((size_t)streams + 1, sizeof *s->stream_device);
  if (!s->stream_start || !s->stream_device) {
    sg__free(map);
    sg__free(path);
    return sg__oom(w, "stream layout");
  }

  /* map now serves as each stream's last node so far */
  uint32_t *last = map;
  for (uint32_t k = 0; k < streams; k++) last[k] = SG__NONE;
  for (uint32_t v = 0; v < n; v++) s->stream_start[s->stream_of[v] + 1]++;
  for (uint32_t k = 0; k < streams; k++) s->stream_start[k + 1] += s->stream_start[k];
  size_t longest = 0;
  for (uint32_t i = 0; i < n; i++) {
    uint32_t v = s->order[i], k = s->stream_of[v];
    uint32_t before = last[k] == SG__NONE ? 0 : path[last[k]];
    s->position[v] = last[k] == SG__NONE ? 0 : s->position[last[k]] + 1;
    s->stream_nodes[s->stream_start[k] + s->position[v]] = v;
    s->stream_device[k] = sg__device_of(w, v);
    last[k] = v;
    for (uint32_t e = w->rpred_start[v]; e < w->rpred_start[v + 1]; e++)
      if (path[w->rpred[e]] > before) before = path[w->rpred[e]];
    path[v] = before + 1;
    if (path[v] > longest) longest = path[v];
  }
  s->plan_critical_path = longest;
  sg__free(map);
  sg__free(path);
  return SG_OK;
}
