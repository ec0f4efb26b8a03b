/* The replay contract of a schedule, proved from the schedule alone
 * (schedule_check.h).
 *
 * Nodes are replayed in issue order with a vector clock per stream: entry a
 * of stream s's clock is how many nodes of stream a are known to have
 * finished once s's latest node has. A node starts knowing what its stream
 * knew and what each event it waits for carries (the clock of its recording
 * stream when it was recorded); an edge u -> v is implied exactly when v
 * starts knowing that u's stream has run past u. Nothing here uses the
 * planner's own bookkeeping (plan/knowledge.h), so a mistake there cannot
 * hide itself. */
#include "plan/schedule_check.h"

#include <string.h>

#include "core/error.h"
#include "core/sys.h"
#include "plan/work.h"

#define BROKEN SG_ERR_SYSTEM

/* The arrays' own shape, before anything is indexed through them. */
static sg_status check_layout(const sg__schedule *s) {
  const uint32_t n = s->node_count, streams = s->stream_count;
  if (streams == 0)
    return sg__fail(BROKEN, "planner: schedule check: %u nodes on no stream", n);
  if (s->stream_start[0] != 0 || s->stream_start[streams] != n)
    return sg__fail(BROKEN, "planner: schedule check: the streams hold %u of %u nodes",
                    s->stream_start[streams] - s->stream_start[0], n);
  for (uint32_t k = 0; k < streams; k++)
    if (s->stream_start[k] > s->stream_start[k + 1])
      return sg__fail(BROKEN, "planner: schedule check: stream %u ends before it starts", k);
  if (s->wait_start[0] != 0)
    return sg__fail(BROKEN, "planner: schedule check: node 0's waits start at %u",
                    s->wait_start[0]);
  for (uint32_t v = 0; v < n; v++)
    if (s->wait_start[v] > s->wait_start[v + 1])
      return sg__fail(BROKEN, "planner: schedule check: node %u's waits end before they start",
                      v);
  return SG_OK;
}

typedef struct checker {
  const sg__schedule *s;
  uint32_t *pred_start, *pred; /* the DAG's predecessor lists */
  uint32_t *rank;              /* node -> its place in `order`, UINT32_MAX before it */
  uint32_t *seen;              /* stream -> its nodes replayed so far */
  uint8_t *recorded;           /* event -> recorded already */
  uint32_t *clocks;            /* streams clocks, then events clocks, then the node's */
} checker;

static void checker_free(checker *c) {
  sg__free(c->pred_start);
  sg__free(c->pred);
  sg__free(c->rank);
  sg__free(c->seen);
  sg__free(c->recorded);
  sg__free(c->clocks);
}

/* Replays node v (the k-th of the order) against its stream and events. */
static sg_status replay_node(checker *c, uint32_t k, uint32_t v) {
  const sg__schedule *s = c->s;
  const uint32_t n = s->node_count, streams = s->stream_count;
  if (v >= n || c->rank[v] != UINT32_MAX)
    return sg__fail(BROKEN, "planner: schedule check: order[%u] = %u is no node or a repeat", k,
                    v);
  c->rank[v] = k;
  const uint32_t at = s->stream_of[v];
  if (at >= streams)
    return sg__fail(BROKEN, "planner: schedule check: node %u is on stream %u of %u", v, at,
                    streams);
  const uint32_t slot = s->stream_start[at] + c->seen[at];
  if (slot >= s->stream_start[at + 1] || s->stream_nodes[slot] != v ||
      s->position[v] != c->seen[at])
    return sg__fail(BROKEN,
                    "planner: schedule check: node %u is issued out of its stream's order "
                    "(stream %u, position %u, %u of its nodes issued before it)",
                    v, at, s->position[v], c->seen[at]);
  c->seen[at]++;

  uint32_t *const stream_clock = c->clocks + (size_t)at * streams;
  uint32_t *const now = c->clocks + (size_t)(streams + s->event_count) * streams;
  memcpy(now, stream_clock, streams * sizeof *now);
  for (uint32_t w = s->wait_start[v]; w < s->wait_start[v + 1]; w++) {
    const uint32_t ev = s->wait_event[w];
    if (ev >= s->event_count || !c->recorded[ev])
      return sg__fail(BROKEN,
                      "planner: schedule check: node %u waits for event %u, which is not "
                      "recorded before it is issued",
                      v, ev);
    const uint32_t *carried = c->clocks + (size_t)(streams + ev) * streams;
    for (uint32_t a = 0; a < streams; a++)
      if (carried[a] > now[a]) now[a] = carried[a];
  }
  if (now[at] != s->position[v])
    return sg__fail(BROKEN,
                    "planner: schedule check: node %u waits for work issued after it on its own "
                    "stream %u",
                    v, at);
  for (uint32_t e = c->pred_start[v]; e < c->pred_start[v + 1]; e++) {
    const uint32_t u = c->pred[e];
    if (c->rank[u] == UINT32_MAX)
      return sg__fail(BROKEN, "planner: schedule check: node %u is issued before its "
                              "predecessor %u",
                      v, u);
    if (now[s->stream_of[u]] <= s->position[u])
      return sg__fail(BROKEN,
                      "planner: schedule check: edge %u -> %u is not implied by stream order "
                      "and events (streams %u and %u)",
                      u, v, s->stream_of[u], at);
  }

  now[at] = s->position[v] + 1; /* v itself, once it has finished */
  memcpy(stream_clock, now, streams * sizeof *now);
  const int32_t ev = s->record_event[v];
  if (ev >= 0) {
    if ((uint32_t)ev >= s->event_count || s->event_node[ev] != v || c->recorded[ev])
      return sg__fail(BROKEN,
                      "planner: schedule check: node %u records event %d, which is not its "
                      "own or is recorded twice",
                      v, (int)ev);
    memcpy(c->clocks + (size_t)(streams + (uint32_t)ev) * streams, now, streams * sizeof *now);
    c->recorded[ev] = 1;
  }
  return SG_OK;
}

sg_status sg__schedule_check(const sg__schedule *s, const uint32_t *succ_start,
                             const uint32_t *succ, int *checked) {
  if (checked) *checked = 0;
  const uint32_t n = s->node_count, streams = s->stream_count;
  if (!s->streams_planned) return SG_OK;
  if (n == 0) {
    if (checked) *checked = 1;
    return SG_OK;
  }
  sg_status st = check_layout(s);
  if (st) return st;
  const uint64_t cells = ((uint64_t)streams + s->event_count + 1) * streams;
  const uint64_t steps = ((uint64_t)n + s->wait_start[n]) * streams;
  if (cells > SG__SCHEDULE_CHECK_CELLS || steps > SG__SCHEDULE_CHECK_STEPS) return SG_OK;

  checker c = {s, NULL, NULL, NULL, NULL, NULL, NULL};
  if (sg__csr_reverse(n, succ_start, succ, &c.pred_start, &c.pred)) {
    c.pred_start = c.pred = NULL; /* nothing was kept */
  } else {
    c.rank = sg__malloc((size_t)n * sizeof *c.rank);
    c.seen = sg__calloc(streams, sizeof *c.seen);
    c.recorded = sg__calloc(s->event_count ? s->event_count : 1, sizeof *c.recorded);
    c.clocks = sg__calloc((size_t)cells, sizeof *c.clocks);
  }
  if (!c.pred_start || !c.rank || !c.seen || !c.recorded || !c.clocks) {
    checker_free(&c);
    return sg__fail(SG_ERR_OUT_OF_MEMORY,
                    "planner: out of memory (schedule check; %u nodes, %u streams, %u events)",
                    n, streams, s->event_count);
  }
  memset(c.rank, 0xff, (size_t)n * sizeof *c.rank);
  for (uint32_t k = 0; k < n && !st; k++) st = replay_node(&c, k, s->order[k]);
  checker_free(&c);
  if (!st && checked) *checked = 1;
  return st;
}
