/* Internal: the chains merge.c places on streams, shared with
 * merge_intervals.c. */
#ifndef SG_PLAN_MERGE_H
#define SG_PLAN_MERGE_H

#include "plan/work.h"

typedef struct sg__chain_list {
  uint32_t count;
  uint32_t *head;   /* chain -> its first node (chains numbered by the head's rank) */
  uint32_t *len;    /* chain -> node count */
  uint32_t *sorted; /* chains in the order they are placed */
} sg__chain_list;

/* Places the chains, in c->sorted order (by first level), on `limit`
 * streams numbered base .. base + limit - 1: w->out->stream_of of every node
 * of the chains. */
sg_status sg__merge_by_intervals(sg__work *w, const sg__chain_list *c, uint32_t base,
                                 uint32_t limit);

#endif
