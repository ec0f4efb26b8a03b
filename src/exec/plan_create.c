/* sg_plan_create: the plan sg_exec_create would make for a graph. It lives
 * with the executables rather than in the planner because a limit of 0
 * means the device's (exec/stream_limit.c), and the planner knows no device. */
#include "core/error.h"
#include "core/graph_internal.h"
#include "core/handles.h"
#include "core/nvtx.h"
#include "core/snapshot.h"
#include "exec/exec.h"
#include "plan/plan.h"

sg_status sg_plan_create(const sg_graph *graph, unsigned max_streams, sg_plan **out) {
  if (!out) return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: out is NULL", __func__);
  *out = NULL;
  sg_status st = sg__handle_check(graph, SG__HANDLE_GRAPH, __func__, "graph");
  if (st) return st;
  /* A shallow snapshot borrows the graph's nodes: the plan copies the little
   * it keeps of them (names, kinds) itself. The graph stays entered (read)
   * until then, so that no call changes or destroys it meanwhile. */
  if ((st = sg__graph_read_begin(graph, __func__))) return st;
  sg__snapshot snap;
  if (sg__graph_snapshot_shallow(graph, &snap)) {
    sg__graph_read_end(graph);
    return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory copying the graph", __func__);
  }
  const int ranges = sg__nvtx_active();
  if (ranges) sg__nvtx_push(SG__NVTX_PLAN, "plan '%s'", snap.graph_name ? snap.graph_name : "");
  st = sg__snapshot_check_acyclic(&snap, __func__);
  if (!st) {
    st = sg__plan_build(&snap, max_streams ? max_streams : sg__default_max_streams(), 0, out);
    if (st) st = sg__plan_prefix_failure(st, __func__);
  }
  if (ranges) sg__nvtx_pop();
  sg__snapshot_free(&snap);
  sg__graph_read_end(graph);
  return st;
}
