// Every allocation of the planner made to fail in turn: each failure must
// come back as SG_ERR_OUT_OF_MEMORY with the schedule zeroed and nothing
// left allocated, and the run without a fault must give the same plan.
#include <climits>

#include "plan_check.h"

using plantest::Dag;
using plantest::Schedule;
using plantest::build;

namespace {

void fail_each_allocation(const Dag &d, unsigned limit, const sg__plan_limits *limits,
                          const char *what) {
  Schedule reference;
  ASSERT_EQ(build(d, limit, reference, limits), SG_OK) << sg_last_error();
  long live = sg_live_allocations();
  for (unsigned long nth = 1;; nth++) {
    ASSERT_LT(nth, 10000u) << what << ": the fault never stops firing";
    Schedule s;
    sg_fault_arm(SG_FAULT_ALLOC, nth);
    sg_status st = build(d, limit, s, limits);
    bool fired = sg_fault_fired();
    sg_fault_arm(SG_FAULT_ALL, 0);
    if (!fired) {
      ASSERT_EQ(st, SG_OK) << what << ": " << sg_last_error();
      EXPECT_EQ(s->stream_count, reference->stream_count) << what;
      EXPECT_EQ(s->wait_count, reference->wait_count) << what;
      break;
    }
    ASSERT_EQ(st, SG_ERR_OUT_OF_MEMORY) << what << ", allocation " << nth;
    EXPECT_NE(std::string(sg_last_error()).find("out of memory"), std::string::npos);
    EXPECT_EQ(s->order, nullptr) << what << ", allocation " << nth;
    EXPECT_EQ(s->node_count, 0u);
    ASSERT_EQ(sg_live_allocations(), live) << what << ": leak after failing allocation " << nth;
  }
}

TEST(ScheduleFaults, EveryAllocationFailureIsReportedAndFreed) {
  std::mt19937 rng(5);
  Dag d = plantest::random_dag(rng, 60, 0.08);
  sg__plan_limits limits;
  sg__plan_limits_default(&limits);
  fail_each_allocation(d, UINT_MAX, &limits, "unlimited");
  fail_each_allocation(d, 3, &limits, "merged by levels");

  sg__plan_limits fallback = limits;
  fallback.cover_work = 0;
  fallback.reduce_search_work = 0;  // the chain index reduces
  fallback.clock_work = 0;
  fallback.merge_scan_streams = 0;
  fail_each_allocation(d, 3, &fallback, "fallbacks, merged by intervals");
  fallback.reduce_work = 0;  // no reduction at all
  fail_each_allocation(d, UINT_MAX, &fallback, "fallbacks, unlimited");

  fail_each_allocation(Dag(0, {}), 0, &limits, "empty graph");
}

}  // namespace
