/* The internal plan calls plan_api_test needs, callable from C++. */
#ifndef PLAN_INTERNAL_SHIM_H
#define PLAN_INTERNAL_SHIM_H

#include <stdint.h>

#include "streamgraph/graph.h"
#include "streamgraph/plan.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A plan built as sg_exec_create builds one (owned_by_exec = 1). */
sg_status plantest_build_owned(const sg_graph *graph, sg_plan **out);
/* The same, deferring streams and events (sg__plan_build_deferred), as a
 * graph-mode executable with the explicit build does. */
sg_status plantest_build_deferred(const sg_graph *graph, unsigned max_streams, sg_plan **out);
/* sg__plan_schedule(plan)->streams_planned. */
int plantest_streams_planned(const sg_plan *plan);
/* sg__plan_free. */
void plantest_free(sg_plan *plan);
/* sg__plan_schedule(plan)->node_count, or UINT32_MAX when it gives NULL. */
uint32_t plantest_schedule_nodes(const sg_plan *plan);

#ifdef __cplusplus
}
#endif
#endif
