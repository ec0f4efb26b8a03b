/* The exported entry points of plan.h (core/abi.h): each takes the
 * caller's struct with the size its compiler gave it, brings it to this
 * library's layout, and calls the function of the plain name. */
#include "core/abi.h"
#include "streamgraph/plan.h"

sg_status sg_plan_get_summary_sized(const sg_plan *plan, sg_plan_summary *summary,
                                    size_t summary_size) {
  if (!summary || summary_size == sizeof *summary) return sg_plan_get_summary(plan, summary);
  sg_status st =
      sg__abi_out_check(summary_size, SG__ABI_FIRST(sg_plan_summary, plan_critical_path_nodes),
                        "sg_plan_get_summary", "summary");
  if (st) return st;
  sg_plan_summary local;
  st = sg_plan_get_summary(plan, &local);
  if (!st) sg__abi_out(summary, summary_size, &local, sizeof local);
  return st;
}

sg_status sg_plan_get_node_sized(const sg_plan *plan, sg_node node, sg_plan_node_info *info,
                                 size_t info_size) {
  if (!info || info_size == sizeof *info) return sg_plan_get_node(plan, node, info);
  sg_status st = sg__abi_out_check(info_size, SG__ABI_FIRST(sg_plan_node_info, event),
                                   "sg_plan_get_node", "info");
  if (st) return st;
  sg_plan_node_info local;
  st = sg_plan_get_node(plan, node, &local);
  if (!st) sg__abi_out(info, info_size, &local, sizeof local);
  return st;
}
