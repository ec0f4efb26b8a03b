/* The node times of a stamped launch (trace_stamps.h). */
#include "exec/trace_stamps.h"

void sg__trace_stamps_times(const sg__schedule *s, int stream_order, uint64_t t0,
                            const uint64_t *stamp, uint64_t *start, uint64_t *end) {
  const uint32_t n = s->node_count;
  const int streams = stream_order && s->streams_planned;
  for (uint32_t v = 0; v < n; v++) start[v] = t0;
  /* `order` is topological, and lists each stream's nodes in stream order
   * and every event's node before its waiters: all that v waited for is
   * final when v is reached. Stream and event waits are read from v;
   * reduced edges are pushed from their source once its end is final. */
  for (uint32_t k = 0; k < n; k++) {
    const uint32_t v = s->order[k];
    uint64_t at = start[v];
    if (streams) {
      if (s->position[v] > 0) {
        uint32_t prev = s->stream_nodes[s->stream_start[s->stream_of[v]] + s->position[v] - 1];
        if (end[prev] > at) at = end[prev];
      }
      for (uint32_t w = s->wait_start[v]; w < s->wait_start[v + 1]; w++) {
        uint32_t from = s->event_node[s->wait_event[w]];
        if (end[from] > at) at = end[from];
      }
    }
    start[v] = at;
    end[v] = stamp[v] > at ? stamp[v] : at;
    for (uint32_t e = s->red_start[v]; e < s->red_start[v + 1]; e++)
      if (end[v] > start[s->red_succ[e]]) start[s->red_succ[e]] = end[v];
  }
}
