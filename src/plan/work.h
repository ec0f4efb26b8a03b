/* Internal: the planner's working state, shared by its steps.
 *
 * Each step reads what earlier steps left here and adds its own results;
 * the schedule being built (`out`) receives the arrays it keeps. A step
 * frees its own temporaries before returning, on success and on failure;
 * whatever it stored here is freed by sg__work_free. */
#ifndef SG_PLAN_WORK_H
#define SG_PLAN_WORK_H

#include <stddef.h>
#include <stdint.h>

#include "plan/schedule_build.h"

#define SG__NONE UINT32_MAX

typedef struct sg__work {
  const sg__plan_limits *limits;
  sg__schedule *out;

  /* the input DAG, and the same edges reversed */
  uint32_t n;
  size_t edges;
  const uint32_t *succ_start, *succ;
  uint32_t *pred_start, *pred;

  /* the device of each node (dense numbers below device_count), or NULL when
   * every node is on one device. A stream never crosses devices, so chains
   * link nodes of one device only, and the stream limit holds per device. */
  const uint32_t *device_of;
  uint32_t device_count;

  /* topo.c: out->order is sorted by (level, node index) */
  uint32_t *rank;         /* node -> its place in out->order */
  uint32_t *level;        /* node -> longest path from a source, in edges */
  uint32_t level_count;   /* == critical path in nodes */
  uint32_t width_bound;   /* largest antichain among two layerings: a lower bound on width
                             (with several devices, the sum of each device's bound) */
  uint32_t *device_bound; /* device -> its own bound; NULL with one device */

  /* cover_*.c: chains as links between consecutive nodes */
  uint32_t *next, *prev;  /* node -> the next / previous node of its chain, or SG__NONE */
  uint32_t chain_count;
  int cover_exact;        /* 1: the cover is minimum (chain_count == width) */
  uint64_t cover_spent;   /* work of the cover's phases so far, against limits->cover_work */

  /* reduce.c leaves out->red_start/red_succ; then the reduced edges reversed */
  uint32_t *rpred_start, *rpred;

  /* the stream limit (0 resolved); merge.c fills out->stream_of with stream
   * ids that layout.c then renumbers in place */
  uint32_t stream_limit;
  int merged;             /* merge.c: 1 if some device had more chains than the limit */
} sg__work;

/* The device of node v (0 when all nodes share one). */
static inline uint32_t sg__device_of(const sg__work *w, uint32_t v) {
  return w->device_of ? w->device_of[v] : 0;
}

void sg__work_free(sg__work *w);

/* Every step returns SG_OK or a status already reported with sg__fail. */
sg_status sg__oom(const sg__work *w, const char *what);

/* Reverses compressed adjacency lists (the result is ascending per node). */
sg_status sg__csr_reverse(uint32_t n, const uint32_t *start, const uint32_t *adj,
                          uint32_t **rstart, uint32_t **radj);

sg_status sg__topo(sg__work *w);
sg_status sg__cover_greedy(sg__work *w);
sg_status sg__cover_paths(sg__work *w);
sg_status sg__cover_augment(sg__work *w);
sg_status sg__reduce(sg__work *w);
sg_status sg__merge(sg__work *w);
sg_status sg__layout(sg__work *w);
sg_status sg__events(sg__work *w);

#endif
