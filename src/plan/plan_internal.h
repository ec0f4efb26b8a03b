/* Internal: the plan object's layout, shared by plan.c and plan_dot.c. */
#ifndef SG_PLAN_PLAN_INTERNAL_H
#define SG_PLAN_PLAN_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "core/node.h"
#include "core/snapshot.h"
#include "plan/schedule.h"

#define SG__UNNAMED UINT32_MAX

struct sg_plan {
  sg__schedule schedule;
  uint32_t graph_serial;  /* node handles of this graph apply */
  size_t edge_count;      /* distinct edges of the graph */
  int owned_by_exec;
  uint32_t *rank;         /* node -> its place in schedule.order */
  sg__node_kind *kinds;   /* node -> kind, for DOT */
  uint32_t *name_at;      /* node -> offset of its name in names, or SG__UNNAMED */
  char *names;            /* the names, each NUL-terminated, one after another */
  /* A deferred plan (schedule.streams_planned 0) keeps the graph's edges
   * until its streams and events are planned (sg__plan_complete). */
  uint32_t *succ_start;
  uint32_t *succ;
  uint32_t *device_of;    /* ... and each node's dense device (NULL: one device) */
  unsigned max_streams;
  /* The devices the nodes run on: schedule device d is ordinal devices[d]
   * (SG_DEVICE_DEFAULT for nodes left on the default of a plan made
   * without an executable). */
  int *devices;
  uint32_t device_count;  /* == schedule.device_count */
  /* NCCL nodes sharing a communicator, ordered as created: the implied
   * edges (from, to), ascending, planned as edges (collective_order.h). */
  uint32_t *implied;
  uint32_t implied_count;
};

/* Marks the programmatic nodes of `p`'s schedule from the snapshot's
 * kernels (plan/programmatic.c). */
sg_status sg__plan_mark_programmatic(sg_plan *p, const sg__snapshot *snap);

#endif
