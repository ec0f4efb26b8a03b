/* The node times of a stamped launch (trace_stamps.h). */
#include "exec/trace_stamps.h"

/* A start no edge has raised yet: no stamp reads the timer's last value. */
#define NOT_WAITED UINT64_MAX

void sg__trace_stamps_times(const sg__schedule *s, int stream_order, uint64_t t0,
                            uint64_t roots, const uint64_t *stamp, uint64_t *start,
                            uint64_t *end) {
  const uint32_t n = s->node_count;
  const int streams = stream_order && s->streams_planned;
  if (roots < t0) roots = t0;
  for (uint32_t v = 0; v < n; v++) start[v] = NOT_WAITED;
  /* `order` is topological, and lists each stream's nodes in stream order
   * and every event's node before its waiters: all that v waited for is
   * final when v is reached. Stream and event waits are read from v;
   * reduced edges are pushed from their source once its end is final. */
  for (uint32_t k = 0; k < n; k++) {
    const uint32_t v = s->order[k];
    int waited = start[v] != NOT_WAITED;
    uint64_t at = waited ? start[v] : 0;
    if (streams) {
      if (s->position[v] > 0) {
        uint32_t prev = s->stream_nodes[s->stream_start[s->stream_of[v]] + s->position[v] - 1];
        if (end[prev] > at) at = end[prev];
        waited = 1;
      }
      for (uint32_t w = s->wait_start[v]; w < s->wait_start[v + 1]; w++) {
        uint32_t from = s->event_node[s->wait_event[w]];
        if (end[from] > at) at = end[from];
        waited = 1;
      }
    }
    if (!waited) at = roots <= stamp[v] ? roots : t0;
    start[v] = at;
    end[v] = stamp[v] > at ? stamp[v] : at;
    for (uint32_t e = s->red_start[v]; e < s->red_start[v + 1]; e++) {
      const uint32_t w = s->red_succ[e];
      if (start[w] == NOT_WAITED || end[v] > start[w]) start[w] = end[v];
    }
  }
}
