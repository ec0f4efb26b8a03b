/* Internal: what each stream knows has finished, for events.c.
 *
 * Knowledge is a position per stream: "stream s knows that stream a has run
 * up to (excluding) position p". A stream learns through its own order and
 * through each event it waits for, and what it learns from an event is all
 * the recording stream knew when it recorded it (knowledge is transitive).
 *
 * Two representations:
 *   dense (vector clocks): one clock of `streams` entries per stream, and a
 *     copy taken after each node that other streams may wait for. Exact.
 *   direct: a hash map (s, a) -> position, learning only the event's own
 *     position, not the recorder's knowledge. Sound (it never claims what is
 *     not known) but it may miss knowledge, so a wait may be redundant. Used
 *     when the dense clocks would cost more than limits->clock_work. */
#ifndef SG_PLAN_KNOWLEDGE_H
#define SG_PLAN_KNOWLEDGE_H

#include <stddef.h>
#include <stdint.h>

#include "streamgraph/status.h"

typedef struct sg__knowledge {
  int dense;
  uint32_t streams;
  /* dense */
  uint32_t *clock;    /* streams x streams: clock[s * streams + a] */
  uint32_t *saved;    /* one clock per node with a cross-stream successor */
  uint32_t *slot;     /* node -> its saved clock, or UINT32_MAX */
  /* direct */
  uint64_t *keys;     /* (s << 32) | a, or UINT64_MAX when empty */
  uint32_t *values;
  size_t mask;
} sg__knowledge;

/* `slot` is taken over (freed by sg__knowledge_free) in dense mode and must
 * be NULL in direct mode; `saved_count` clocks are kept; `capacity` bounds
 * the direct map's entries. */
sg_status sg__knowledge_init(sg__knowledge *k, int dense, uint32_t streams, uint32_t *slot,
                             size_t saved_count, size_t capacity);
void sg__knowledge_free(sg__knowledge *k);

/* Position of stream a known by stream s (0: nothing). */
uint32_t sg__knowledge_get(const sg__knowledge *k, uint32_t s, uint32_t a);
/* Stream s waits for the event after node u (stream a, position pos). */
void sg__knowledge_wait(sg__knowledge *k, uint32_t s, uint32_t u, uint32_t a, uint32_t pos);
/* Stream s has run node v (its position pos). */
void sg__knowledge_run(sg__knowledge *k, uint32_t s, uint32_t v, uint32_t pos);

#endif
