// The schedule's own check (plan/schedule_check.h): it passes what the
// planner makes (every planner test checks that through check_schedule), and
// it catches each way a schedule can break its replay contract. Each case
// breaks a correct schedule in one place and expects the message to name it.
#include <string>

#include "plan_check.h"

namespace {

using plantest::Dag;
using plantest::Schedule;

std::string check_message(const Schedule &s, const Dag &d) {
  int checked = -1;
  sg_status st = sg__schedule_check(&s.s, d.start.data(), d.succ.data(), &checked);
  EXPECT_EQ(st, SG_ERR_SYSTEM) << "a broken schedule passed";
  EXPECT_EQ(checked, 0);
  return sg_last_error();
}

// 0 -> 2 and 1 -> 2 on two streams: node 2 waits for the other stream's node.
Dag fan_in() { return Dag(3, {{0, 2}, {1, 2}}); }

TEST(ScheduleCheck, PassesWhatThePlannerMakes) {
  Dag d = fan_in();
  Schedule s;
  ASSERT_EQ(plantest::build(d, 8, s), SG_OK);
  ASSERT_EQ(s->stream_count, 2u);
  ASSERT_EQ(s->wait_count, 1u);
  int checked = 0;
  EXPECT_EQ(sg__schedule_check(&s.s, d.start.data(), d.succ.data(), &checked), SG_OK)
      << sg_last_error();
  EXPECT_EQ(checked, 1);
}

TEST(ScheduleCheck, AMissingWaitLeavesAnEdgeUnimplied) {
  Dag d = fan_in();
  Schedule s;
  ASSERT_EQ(plantest::build(d, 8, s), SG_OK);
  // Node 2's one wait is dropped (its list is made empty).
  for (uint32_t v = 0; v <= d.n; v++) s->wait_start[v] = 0;
  std::string m = check_message(s, d);
  EXPECT_NE(m.find("is not implied by stream order and events"), std::string::npos) << m;
  EXPECT_NE(m.find("-> 2"), std::string::npos) << m;
}

TEST(ScheduleCheck, AWaitBeforeItsRecordIsCaught) {
  Dag d = fan_in();
  Schedule s;
  ASSERT_EQ(plantest::build(d, 8, s), SG_OK);
  // The recording node is made to record nothing: the wait finds no record.
  const uint32_t u = s->event_node[0];
  s->record_event[u] = -1;
  std::string m = check_message(s, d);
  EXPECT_NE(m.find("which is not recorded before it is issued"), std::string::npos) << m;
}

TEST(ScheduleCheck, AnOrderThatIsNotTopologicalIsCaught) {
  Dag d(2, {{0, 1}});
  Schedule s;
  ASSERT_EQ(plantest::build(d, 8, s), SG_OK);
  ASSERT_EQ(s->stream_count, 1u);
  // Issue 1 before 0, with the stream reordered to match.
  s->order[0] = 1;
  s->order[1] = 0;
  s->stream_nodes[0] = 1;
  s->stream_nodes[1] = 0;
  s->position[1] = 0;
  s->position[0] = 1;
  std::string m = check_message(s, d);
  EXPECT_NE(m.find("node 1 is issued before its predecessor 0"), std::string::npos) << m;
}

TEST(ScheduleCheck, AStreamOutOfIssueOrderIsCaught) {
  Dag d(2, {{0, 1}});
  Schedule s;
  ASSERT_EQ(plantest::build(d, 8, s), SG_OK);
  s->position[0] = 1; // the stream says 0 comes second, the issue order first
  std::string m = check_message(s, d);
  EXPECT_NE(m.find("node 0 is issued out of its stream's order"), std::string::npos) << m;
}

TEST(ScheduleCheck, ARepeatedNodeIsCaught) {
  Dag d(3, {});
  Schedule s;
  ASSERT_EQ(plantest::build(d, 1, s), SG_OK);
  s->order[2] = s->order[0];
  std::string m = check_message(s, d);
  EXPECT_NE(m.find("is no node or a repeat"), std::string::npos) << m;
}

TEST(ScheduleCheck, EveryAllocationFailureIsReported) {
  Dag d = fan_in();
  Schedule s;
  ASSERT_EQ(plantest::build(d, 8, s), SG_OK);
  const long before = sg_live_allocations();
  for (unsigned n = 1;; n++) {
    sg_fault_arm(SG_FAULT_ALLOC, n);
    int checked = -1;
    sg_status st = sg__schedule_check(&s.s, d.start.data(), d.succ.data(), &checked);
    const bool fired = sg_fault_fired();
    const std::string site = sg_fault_site();
    sg_fault_arm(0, 0);
    ASSERT_EQ(sg_live_allocations(), before) << "allocation " << n;
    if (!fired) {
      EXPECT_EQ(st, SG_OK) << sg_last_error();
      EXPECT_EQ(checked, 1);
      break;
    }
    EXPECT_EQ(st, SG_ERR_OUT_OF_MEMORY) << "allocation " << n;
    EXPECT_EQ(checked, 0);
    EXPECT_NE(std::string(sg_last_error()).find("schedule check"), std::string::npos);
    EXPECT_EQ(site.rfind("plan/", 0), 0u) << "a fault point of the planner, not " << site;
  }
}

}  // namespace
