/* C side of plan_api_test: the internal calls an executable makes, wrapped
 * for C++ (the core's headers use C11 atomics, which C++ cannot include). */
#include "plan_internal_shim.h"

#include "core/snapshot.h"
#include "plan/plan.h"

sg_status plantest_build_owned(const sg_graph *graph, sg_plan **out) {
  sg__snapshot snap;
  if (sg__graph_snapshot_shallow(graph, &snap)) return SG_ERR_OUT_OF_MEMORY;
  sg_status st = sg__plan_build(&snap, 0, 1, out);
  sg__snapshot_free(&snap);
  return st;
}

void plantest_free(sg_plan *plan) { sg__plan_free(plan); }

uint32_t plantest_schedule_nodes(const sg_plan *plan) {
  const sg__schedule *s = sg__plan_schedule(plan);
  return s ? s->node_count : UINT32_MAX;
}

sg_status plantest_build_deferred(const sg_graph *graph, unsigned max_streams, sg_plan **out) {
  sg__snapshot snap;
  if (sg__graph_snapshot_shallow(graph, &snap)) return SG_ERR_OUT_OF_MEMORY;
  sg_status st = sg__plan_build_deferred(&snap, max_streams, 1, out);
  sg__snapshot_free(&snap);
  return st;
}

int plantest_streams_planned(const sg_plan *plan) {
  return sg__plan_schedule(plan)->streams_planned;
}
