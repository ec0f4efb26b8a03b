/* Events: the fewest waits that make stream order plus events imply every
 * edge.
 *
 * Nodes are visited in issue order, tracking what each stream knows has
 * finished (knowledge.h). For node v on stream s, a reduced predecessor u on
 * another stream a needs nothing if s already knows a ran past u. The others
 * are candidates; a candidate is also covered if another candidate's event
 * carries the knowledge of u. Taking candidates latest first and learning
 * from each wait before looking at the next, a candidate is waited for only
 * if nothing taken so far (nor s's past) covers it; a later-issued candidate
 * can cover an earlier one but never the reverse, so the waits kept are
 * exactly the candidates no other covers: each is necessary, none implied by
 * the stream's past or by the node's other waits.
 *
 * A node gets an event recorded after it when someone waits for it; events
 * are numbered in issue order. O((n + E) x streams) with vector clocks, or
 * O((n + E) log) with direct knowledge (see knowledge.h for when). */
#include <stdlib.h>
#include <string.h>

#include "core/sys.h"
#include "plan/knowledge.h"
#include "plan/work.h"

static int later_first(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? 1 : x > y ? -1 : 0;
}

/* Candidates latest first. A node has a handful of them, for which an
 * insertion sort is far cheaper than qsort's call per comparison. */
static void sort_later_first(uint64_t *cand, size_t nc) {
  if (nc > 16) {
    qsort(cand, nc, sizeof *cand, later_first);
    return;
  }
  for (size_t i = 1; i < nc; i++) {
    uint64_t x = cand[i];
    size_t j = i;
    for (; j > 0 && cand[j - 1] < x; j--) cand[j] = cand[j - 1];
    cand[j] = x;
  }
}

typedef struct wait_list {
  uint32_t *src;   /* waits in issue order of their node: the node waited for */
  uint32_t *start; /* node -> first of its waits in src */
  uint32_t *count; /* node -> how many */
} wait_list;

/* Nodes with a reduced successor on another stream get a saved clock; *slot
 * maps node -> clock (taken by the knowledge) and *cross counts such edges. */
static sg_status count_cross(sg__work *w, uint32_t **slot, size_t *saved, size_t *cross) {
  const sg__schedule *s = w->out;
  *slot = sg__malloc((size_t)w->n * sizeof **slot);
  if (!*slot) return SG_ERR_OUT_OF_MEMORY;
  *saved = *cross = 0;
  for (uint32_t u = 0; u < w->n; u++) {
    size_t before = *cross;
    for (uint32_t e = s->red_start[u]; e < s->red_start[u + 1]; e++)
      *cross += s->stream_of[s->red_succ[e]] != s->stream_of[u];
    (*slot)[u] = *cross != before ? (uint32_t)(*saved)++ : SG__NONE;
  }
  return SG_OK;
}

static void find_waits(sg__work *w, sg__knowledge *k, wait_list *wl, uint64_t *cand) {
  const sg__schedule *s = w->out;
  uint32_t total = 0;
  for (uint32_t i = 0; i < w->n; i++) {
    uint32_t v = s->order[i], sv = s->stream_of[v];
    size_t nc = 0;
    for (uint32_t e = w->rpred_start[v]; e < w->rpred_start[v + 1]; e++) {
      uint32_t u = w->rpred[e], a = s->stream_of[u];
      if (a != sv && sg__knowledge_get(k, sv, a) < s->position[u] + 1)
        cand[nc++] = ((uint64_t)w->rank[u] << 32) | u;
    }
    sort_later_first(cand, nc);
    wl->start[v] = total;
    for (size_t c = 0; c < nc; c++) {
      uint32_t u = (uint32_t)cand[c], a = s->stream_of[u];
      if (sg__knowledge_get(k, sv, a) >= s->position[u] + 1) continue;
      wl->src[total++] = u;
      sg__knowledge_wait(k, sv, u, a, s->position[u]);
    }
    wl->count[v] = total - wl->start[v];
    sg__knowledge_run(k, sv, v, s->position[v]);
  }
}

/* Numbers the events and lays the waits out by node index. */
static sg_status emit(sg__work *w, const wait_list *wl, size_t waits) {
  sg__schedule *s = w->out;
  uint32_t n = w->n;
  s->record_event = sg__malloc((size_t)n * sizeof *s->record_event);
  s->wait_start = sg__malloc(((size_t)n + 1) * sizeof *s->wait_start);
  s->wait_event = sg__malloc((waits ? waits : 1) * sizeof *s->wait_event);
  if (!s->record_event || !s->wait_start || !s->wait_event) return sg__oom(w, "events");
  for (uint32_t v = 0; v < n; v++) s->record_event[v] = -1;
  for (size_t k = 0; k < waits; k++) s->record_event[wl->src[k]] = 0;
  uint32_t events = 0;
  for (uint32_t i = 0; i < n; i++)
    if (s->record_event[s->order[i]] == 0) events++;
  s->event_node = sg__malloc((events ? events : 1) * sizeof *s->event_node);
  if (!s->event_node) return sg__oom(w, "events");
  events = 0;
  for (uint32_t i = 0; i < n; i++) {
    uint32_t u = s->order[i];
    if (s->record_event[u] != 0) continue;
    s->event_node[events] = u;
    s->record_event[u] = (int32_t)events++;
  }
  s->event_count = events;
  uint32_t at = 0;
  for (uint32_t v = 0; v < n; v++) {
    s->wait_start[v] = at;
    for (uint32_t k = 0; k < wl->count[v]; k++)
      s->wait_event[at++] = (uint32_t)s->record_event[wl->src[wl->start[v] + k]];
  }
  s->wait_start[n] = at;
  s->wait_count = waits;
  return SG_OK;
}

sg_status sg__events(sg__work *w) {
  sg__schedule *s = w->out;
  uint32_t n = w->n, streams = s->stream_count;
  uint32_t *slot = NULL;
  size_t saved = 0, cross = 0;
  if (count_cross(w, &slot, &saved, &cross)) return sg__oom(w, "events");
  uint64_t cost = ((uint64_t)n + s->reduced_edge_count + streams) * streams;
  int dense = cost <= w->limits->clock_work;
  if (!dense) {
    sg__free(slot);
    slot = NULL;
  }
  uint32_t max_in = 0;
  for (uint32_t v = 0; v < n; v++)
    if (w->rpred_start[v + 1] - w->rpred_start[v] > max_in)
      max_in = w->rpred_start[v + 1] - w->rpred_start[v];

  sg__knowledge k;
  wait_list wl = {sg__malloc((cross ? cross : 1) * sizeof(uint32_t)),
                  sg__malloc((size_t)n * sizeof(uint32_t)), sg__malloc((size_t)n * sizeof(uint32_t))};
  uint64_t *cand = sg__malloc((max_in ? max_in : 1) * sizeof *cand);
  sg_status st = sg__knowledge_init(&k, dense, streams, slot, saved, cross);
  if (st || !wl.src || !wl.start || !wl.count || !cand) {
    if (!st) sg__knowledge_free(&k);
    st = sg__oom(w, "events");
  } else {
    find_waits(w, &k, &wl, cand);
    sg__knowledge_free(&k);
    size_t waits = 0;
    for (uint32_t v = 0; v < n; v++) waits += wl.count[v];
    st = emit(w, &wl, waits);
    /* Direct knowledge is exact too when the limit did not bind and the
     * reduction is exact: the plan then orders nodes just as the DAG does, so
     * a wait for a reduced edge could only be implied by another path from u
     * to v, which would make the edge redundant (docs/plan.md). */
    s->waits_exact = dense || (s->reduction_exact && !w->merged);
  }
  sg__free(wl.src);
  sg__free(wl.start);
  sg__free(wl.count);
  sg__free(cand);
  return st;
}
