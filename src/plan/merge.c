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
 * the stream that fell free earliest. O(n + chains log streams). */
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

static sg_status merge_by_levels(sg__work *w, const sg__chain_list *c, uint32_t limit) {
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
        if (stream[w->rpred[e]] != SG__NONE) aff[stream[w->rpred[e]]]++;
      for (uint32_t e = rs[x]; e < rs[x + 1]; e++)
        if (stream[rsucc[e]] != SG__NONE) aff[stream[rsucc[e]]]++;
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
      stream[x] = best;
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

sg_status sg__merge(sg__work *w) {
  uint32_t n = w->n, limit = w->stream_limit;
  sg__schedule *s = w->out;
  s->chain_count = w->chain_count;
  s->stream_of = sg__malloc((size_t)n * sizeof *s->stream_of);
  if (!s->stream_of) return sg__oom(w, "stream assignment");
  sg__chain_list c = {w->chain_count, NULL, NULL, NULL};
  int merging = w->chain_count > limit;
  c.head = sg__malloc((size_t)c.count * sizeof *c.head);
  c.len = sg__malloc((size_t)c.count * sizeof *c.len);
  if (merging) c.sorted = sg__malloc((size_t)c.count * sizeof *c.sorted);
  if (!c.head || !c.len || (merging && !c.sorted)) {
    sg__free(c.head);
    sg__free(c.len);
    sg__free(c.sorted);
    return sg__oom(w, "stream assignment");
  }
  uint32_t id = 0;
  for (uint32_t i = 0; i < n; i++) {
    uint32_t v = s->order[i];
    if (w->prev[v] != SG__NONE) continue;
    uint32_t len = 0;
    for (uint32_t x = v; x != SG__NONE; x = w->next[x]) {
      s->stream_of[x] = merging ? SG__NONE : id;
      len++;
    }
    c.head[id] = v;
    c.len[id++] = len;
  }

  sg_status st = SG_OK;
  if (merging) {
    /* the sorts' cursor: n + 2 covers both (levels <= n) */
    uint32_t *cursor = sg__malloc(((size_t)n + 2) * sizeof *cursor);
    if (!cursor) {
      st = sg__oom(w, "merging chains");
    } else if (limit <= w->limits->merge_scan_streams &&
               (uint64_t)limit * w->level_count <= w->limits->merge_scan_cells) {
      sort_by_length(&c, n, cursor);
      sg__free(cursor);
      st = merge_by_levels(w, &c, limit);
    } else {
      sort_by_start(w, &c, cursor);
      sg__free(cursor);
      st = sg__merge_by_intervals(w, &c, limit);
    }
  }
  sg__free(c.head);
  sg__free(c.len);
  sg__free(c.sorted);
  return st;
}
