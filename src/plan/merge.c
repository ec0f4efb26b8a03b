/* Chains -> streams.
 *
 * When the chains fit under the stream limit, each chain is a stream: no two
 * independent nodes share a stream, and the plan orders nodes exactly as the
 * DAG does. Otherwise chains are merged onto the `limit` streams; every merge
 * orders some independent nodes, and the aim is to lose as little of the
 * concurrency that matters as possible. The model: nodes of one level
 * (topo.c) are what an as-soon-as-possible schedule runs at the same time, so
 * the cost of putting a chain on a stream is its number of collisions, the
 * nodes of that stream already at the same levels as the chain's nodes. A
 * chain whose levels fall in the gaps of a stream costs nothing: the stream
 * was idle then anyway, and the plan's critical path does not grow.
 *
 * Level table (streams <= merge_scan_streams, streams x levels small enough):
 * chains go longest first (long chains carry the critical path, and they
 * then get streams of their own), each to the stream with the fewest
 * collisions; ties go to an empty stream (concurrency the level model cannot
 * see, such as nodes of different durations, is kept), then to the stream
 * holding the most of the chain's neighbours in the reduced graph (fewer
 * events), then to the least loaded stream. O(n x streams + E).
 *
 * Intervals (otherwise, merge_intervals.c): each chain spans the levels from
 * its first node to its last; chains in order of their first level go to
 * the stream that fell free earliest. O(n + chains log streams).
 *
 * With several devices, each device's chains are placed on that device's own
 * streams, under the limit each (every device has its own hardware queues);
 * a stream id range per device keeps them apart until layout.c numbers them. */
#include <string.h>

#include "core/sys.h"
#include "plan/merge.h"

/* Chains by decreasing length, ties by id: a stable counting sort. */
static void sort_by_length(const sg__chain_list *c, uint32_t n, uint32_t *cursor) {
  memset(cursor, 0, ((size_t)n + 2) * sizeof *cursor);
  for (uint32_t k = 0; k < c->count; k++) cursor[n - c->len[k] + 1]++;
  for (uint32_t i = 1; i <= n + 1; i++) cursor[i] += cursor[i - 1];
  for (uint32_t k = 0; k < c->count; k++) c->sorted[cursor[n - c->len[k]]++] = k;
}

/* Chains by first level, ties by id. */
static void sort_by_start(const sg__work *w, const sg__chain_list *c, uint32_t *cursor) {
  uint32_t levels = w->level_count;
  memset(cursor, 0, ((size_t)levels + 1) * sizeof *cursor);
  for (uint32_t k = 0; k < c->count; k++) cursor[w->level[c->head[k]] + 1]++;
  for (uint32_t i = 1; i <= levels; i++) cursor[i] += cursor[i - 1];
  for (uint32_t k = 0; k < c->count; k++) c->sorted[cursor[w->level[c->head[k]]]++] = k;
}

/* Streams base .. base + limit - 1 (one device's); a neighbour on another
 * device's stream, or not placed yet, counts for none. */
static sg_status merge_by_levels(sg__work *w, const sg__chain_list *c, uint32_t base,
                                 uint32_t limit) {
  uint32_t *stream = w->out->stream_of;
  size_t levels = w->level_count;
  /* occ[level * limit + stream]: nodes of the stream at that level, saturating.
   * Level-major, so the scan over streams for one node reads one cache line. */
  uint16_t *occ = sg__calloc((size_t)limit * levels, sizeof *occ);
  uint32_t *load = sg__calloc(limit, sizeof *load);
  uint32_t *aff = sg__calloc(limit, sizeof *aff);
  uint64_t *coll = sg__calloc(limit, sizeof *coll);
  if (!occ || !load || !aff || !coll) {
    sg__free(occ);
    sg__free(load);
    sg__free(aff);
    sg__free(coll);
    return sg__oom(w, "merging chains");
  }
  const uint32_t *rs = w->out->red_start, *rsucc = w->out->red_succ;
  for (uint32_t k = 0; k < c->count; k++) {
    uint32_t ch = c->sorted[k];
    memset(aff, 0, (size_t)limit * sizeof *aff);
    memset(coll, 0, (size_t)limit * sizeof *coll);
    for (uint32_t x = c->head[ch]; x != SG__NONE; x = w->next[x]) {
      for (uint32_t e = w->rpred_start[x]; e < w->rpred_start[x + 1]; e++)
        if (stream[w->rpred[e]] - base < limit) aff[stream[w->rpred[e]] - base]++;
      for (uint32_t e = rs[x]; e < rs[x + 1]; e++)
        if (stream[rsucc[e]] - base < limit) aff[stream[rsucc[e]] - base]++;
      const uint16_t *row = occ + (size_t)w->level[x] * limit;
      for (uint32_t s = 0; s < limit; s++) coll[s] += row[s];
    }
    uint32_t best = 0;
    for (uint32_t s = 1; s < limit; s++) {
      if (coll[s] != coll[best]) {
        if (coll[s] < coll[best]) best = s;
      } else if ((load[s] == 0) != (load[best] == 0)) {
        if (load[s] == 0) best = s;
      } else if (aff[s] != aff[best]) {
        if (aff[s] > aff[best]) best = s;
      } else if (load[s] < load[best]) {
        best = s;
      }
    }
    for (uint32_t x = c->head[ch]; x != SG__NONE; x = w->next[x]) {
      stream[x] = base + best;
      uint16_t *cell = &occ[(size_t)w->level[x] * limit + best];
      if (*cell != UINT16_MAX) (*cell)++;
    }
    load[best] += c->len[ch];
  }
  sg__free(occ);
  sg__free(load);
  sg__free(aff);
  sg__free(coll);
  return SG_OK;
}

/* One device's chains (c, numbered by head rank) onto streams from `base`:
 * a stream each when they fit under the limit, else merged. Returns the
 * streams used through *used. */
static sg_status place(sg__work *w, sg__chain_list *c, uint32_t base, uint32_t *cursor,
                       uint32_t *used) {
  uint32_t limit = w->stream_limit;
  if (c->count <= limit) {
    for (uint32_t k = 0; k < c->count; k++)
      for (uint32_t x = c->head[k]; x != SG__NONE; x = w->next[x]) w->out->stream_of[x] = base + k;
    *used = c->count;
    return SG_OK;
  }
  w->merged = 1;
  *used = limit;
  if (limit <= w->limits->merge_scan_streams &&
      (uint64_t)limit * w->level_count <= w->limits->merge_scan_cells) {
    sort_by_length(c, w->n, cursor);
    return merge_by_levels(w, c, base, limit);
  }
  sort_by_start(w, c, cursor);
  return sg__merge_by_intervals(w, c, base, limit);
}

sg_status sg__merge(sg__work *w) {
  uint32_t n = w->n, count = w->chain_count;
  sg__schedule *s = w->out;
  s->chain_count = count;
  s->stream_of = sg__malloc((size_t)n * sizeof *s->stream_of);
  uint32_t *head = sg__malloc((size_t)count * sizeof *head);
  uint32_t *len = sg__malloc((size_t)count * sizeof *len);
  uint32_t *sorted = sg__malloc((size_t)count * sizeof *sorted);
  /* the sorts' cursor: n + 2 covers both (levels <= n) */
  uint32_t *cursor = sg__malloc(((size_t)n + 2) * sizeof *cursor);
  sg_status st = SG_OK;
  if (!s->stream_of || !head || !len || !sorted || !cursor) st = sg__oom(w, "stream assignment");
  else memset(s->stream_of, 0xff, (size_t)n * sizeof *s->stream_of); /* SG__NONE: not placed */
  /* Chains grouped by device, each group by the issue rank of its head. */
  uint32_t base = 0, at = 0;
  for (uint32_t d = 0; !st && d < w->device_count; d++) {
    sg__chain_list c = {0, head + at, len + at, sorted + at};
    for (uint32_t i = 0; i < n; i++) {
      uint32_t v = s->order[i];
      if (w->prev[v] != SG__NONE || sg__device_of(w, v) != d) continue;
      uint32_t length = 0;
      for (uint32_t x = v; x != SG__NONE; x = w->next[x]) length++;
      c.head[c.count] = v;
      c.len[c.count++] = length;
    }
    uint32_t used = 0;
    st = place(w, &c, base, cursor, &used);
    base += used;
    at += c.count;
  }
  sg__free(head);
  sg__free(len);
  sg__free(sorted);
  sg__free(cursor);
  return st;
}
