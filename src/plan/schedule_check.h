/* Internal: the schedule's own check - the replay contract of
 * plan/schedule.h proved from the schedule alone.
 *
 * A backend trusts a schedule blindly: if stream order plus the events did
 * not imply an edge, two dependent nodes could run concurrently and the
 * result would be wrong only sometimes. So the promise is checked, in code
 * that shares nothing with the planner's steps: debug builds (NDEBUG not
 * defined, as the sanitizer builds of tools/test) check every schedule the
 * planner makes before returning it, and the planner's tests check every
 * schedule they make, in every build. */
#ifndef SG_PLAN_SCHEDULE_CHECK_H
#define SG_PLAN_SCHEDULE_CHECK_H

#include <stdint.h>

#include "plan/schedule.h"
#include "streamgraph/status.h"

/* Cells ((streams + events + 1) x streams) and steps ((nodes + waits) x
 * streams) of the vector clocks above which sg__schedule_check does not
 * check (debug builds must stay usable on huge, very wide plans). */
#define SG__SCHEDULE_CHECK_CELLS ((uint64_t)1 << 24)
#define SG__SCHEDULE_CHECK_STEPS ((uint64_t)1 << 26)

/* Checks that schedule `s` (streams planned) of the DAG whose successors of
 * i are succ[succ_start[i] .. succ_start[i+1]) keeps its replay contract:
 * `order` is a permutation in which each stream's nodes come in stream
 * order and every event is recorded before a wait on it; the stream, event
 * and wait arrays agree; and stream order plus the events imply every edge
 * (vector clocks over streams: a node knows how far each stream has run
 * when it starts; an edge u -> v holds when v knows u's stream ran past u).
 * *checked (may be NULL) is 1 when the check ran, 0 when the schedule was
 * over the limits above (SG_OK then). A broken promise is a bug of this
 * library: SG_ERR_SYSTEM with a message "planner: schedule check: ..." naming
 * what (the edge not implied, say). SG_ERR_OUT_OF_MEMORY when its working
 * memory cannot be had. */
sg_status sg__schedule_check(const sg__schedule *s, const uint32_t *succ_start,
                             const uint32_t *succ, int *checked);

#endif
