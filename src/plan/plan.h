/* Internal: the plan object as the executables use it.
 *
 * A plan holds a schedule (plan/schedule.h) plus what inspection and DOT need
 * (the graph's serial, node names and kinds), so it stays valid after the
 * graph changes or goes away. Every plan is a registered handle; one made
 * for an executable (owned_by_exec) is refused by sg_plan_destroy and freed
 * by its executable with sg__plan_free.
 *
 * Messages of failures start with "planner: "; callers may prefix their own
 * name (sg_plan_create does). */
#ifndef SG_PLAN_PLAN_H
#define SG_PLAN_PLAN_H

#include "core/snapshot.h"
#include "plan/schedule.h"
#include "streamgraph/plan.h"

/* Builds a plan from an acyclic snapshot (the snapshot is only read, and may
 * be freed afterwards). owned_by_exec != 0 makes sg_plan_destroy refuse it
 * (the executable frees it with sg__plan_free). max_streams 0: the planner's
 * default (SG__PLAN_DEFAULT_STREAMS); callers that know the device pass its
 * limit. */
sg_status sg__plan_build(const sg__snapshot *snap, unsigned max_streams, int owned_by_exec,
                         sg_plan **out);
/* The same for an executable on `default_device`: nodes left on
 * SG_DEVICE_DEFAULT run there, and each device in use gets its own streams
 * (sg__plan_build keeps SG_DEVICE_DEFAULT as a device of its own).
 * `deferred` as sg__plan_build_deferred. */
sg_status sg__plan_build_on(const sg__snapshot *snap, unsigned max_streams, int default_device,
                            int owned_by_exec, int deferred, sg_plan **out);
/* The device ordinal of schedule device `d` (schedule.stream_device). */
int sg__plan_device(const sg_plan *plan, uint32_t d);
/* The same, deferring the streams and events (sg__schedule_build_edges)
 * until something asks for them: the public accessors (sg_plan_get_*,
 * sg_plan_to_dot) and sg__plan_complete. For an executable whose backend
 * needs only the issue order and the reduced edges (a CUDA graph built node
 * by node), which makes creating it cost little more than the driver's
 * work. The plan keeps a copy of the edges meanwhile. */
sg_status sg__plan_build_deferred(const sg__snapshot *snap, unsigned max_streams,
                                  int owned_by_exec, sg_plan **out);
/* Plans the streams and events of a deferred plan; SG_OK at once for a
 * complete one. The order and reduced edges (and the arrays holding them)
 * stay as they are, so a schedule pointer held by a backend stays valid.
 * SG_ERR_OUT_OF_MEMORY (message prefixed "planner: ") leaves it deferred. */
sg_status sg__plan_complete(sg_plan *plan);

/* Re-reports the current failure with `fn` in front: "planner: x" becomes
 * "sg_exec_create: x", naming the call the user made. Returns `st`. */
sg_status sg__plan_prefix_failure(sg_status st, const char *fn);
/* Unregisters and frees; NULL is fine. */
void sg__plan_free(sg_plan *plan);
const sg__schedule *sg__plan_schedule(const sg_plan *plan);

#endif
