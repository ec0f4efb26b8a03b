// The planner on DAG families whose answers are known: chains, fans,
// diamonds, layered DAGs, transitive edges, binding stream limits, the
// default limit, and malformed input.
#include <climits>
#include <cstdlib>
#include <cstring>

#include "plan_check.h"

extern "C" {
#include "exec/exec.h"  // sg__default_max_streams: the device's limit, resolved above the planner
}

using plantest::Dag;
using plantest::Edges;
using plantest::Schedule;
using plantest::build;
using plantest::check_schedule;

namespace {

constexpr unsigned kUnlimited = UINT_MAX;

Dag chain(uint32_t n) {
  Edges e;
  for (uint32_t v = 1; v < n; v++) e.emplace_back(v - 1, v);
  return Dag(n, e);
}

// root 0 -> leaves 1..k
Dag fan_out(uint32_t k) {
  Edges e;
  for (uint32_t v = 1; v <= k; v++) e.emplace_back(0, v);
  return Dag(k + 1, e);
}

// sources 0..k-1 -> sink k
Dag fan_in(uint32_t k) {
  Edges e;
  for (uint32_t v = 0; v < k; v++) e.emplace_back(v, k);
  return Dag(k + 1, e);
}

// `layers` layers of `width` nodes; node i of a layer feeds nodes i and
// i+1 (mod width) of the next: width chains cover it, a layer is an antichain.
Dag layered(uint32_t layers, uint32_t width) {
  Edges e;
  for (uint32_t l = 0; l + 1 < layers; l++)
    for (uint32_t i = 0; i < width; i++) {
      e.emplace_back(l * width + i, (l + 1) * width + i);
      e.emplace_back(l * width + i, (l + 1) * width + (i + 1) % width);
    }
  return Dag(layers * width, e);
}

TEST(ScheduleFamilies, EmptyGraph) {
  Dag d(0, {});
  Schedule s;
  ASSERT_EQ(build(d, 0, s), SG_OK) << sg_last_error();
  EXPECT_EQ(s->stream_count, 0u);
  EXPECT_EQ(s->event_count, 0u);
  EXPECT_EQ(s->wait_count, 0u);
  ASSERT_NE(s->stream_start, nullptr);
  ASSERT_NE(s->wait_start, nullptr);
  ASSERT_NE(s->red_start, nullptr);
  EXPECT_EQ(s->stream_start[0], 0u);
  EXPECT_EQ(s->width, 0u);
  EXPECT_EQ(s->critical_path, 0u);
}

TEST(ScheduleFamilies, SingleNode) {
  Dag d(1, {});
  Schedule s;
  ASSERT_EQ(build(d, kUnlimited, s), SG_OK) << sg_last_error();
  check_schedule(d, s.s, kUnlimited);
  EXPECT_EQ(s->stream_count, 1u);
  EXPECT_EQ(s->width, 1u);
  EXPECT_EQ(s->record_event[0], -1);
}

TEST(ScheduleFamilies, ChainUsesOneStreamAndNoEvent) {
  for (uint32_t n : {2u, 10u, 1000u}) {
    Dag d = chain(n);
    Schedule s;
    ASSERT_EQ(build(d, kUnlimited, s), SG_OK) << sg_last_error();
    check_schedule(d, s.s, kUnlimited, {n <= 100});
    EXPECT_EQ(s->stream_count, 1u);
    EXPECT_EQ(s->event_count, 0u);
    EXPECT_EQ(s->wait_count, 0u);
    EXPECT_EQ(s->width, 1u);
    EXPECT_TRUE(s->width_exact);
    EXPECT_EQ(s->critical_path, n);
  }
}

TEST(ScheduleFamilies, FanOutOfKUsesKStreams) {
  for (uint32_t k : {2u, 5u, 17u, 300u}) {
    Dag d = fan_out(k);
    Schedule s;
    ASSERT_EQ(build(d, kUnlimited, s), SG_OK) << sg_last_error();
    check_schedule(d, s.s, kUnlimited, {k <= 100});
    EXPECT_EQ(s->stream_count, k);
    EXPECT_EQ(s->width, k);
    EXPECT_TRUE(s->width_exact);
    // the root's one event is waited for by every stream but its own
    EXPECT_EQ(s->event_count, 1u);
    EXPECT_EQ(s->wait_count, k - 1);
    EXPECT_EQ(s->critical_path, 2u);
  }
}

TEST(ScheduleFamilies, FanInWaitsOncePerOtherStream) {
  Dag d = fan_in(6);
  Schedule s;
  ASSERT_EQ(build(d, kUnlimited, s), SG_OK) << sg_last_error();
  check_schedule(d, s.s, kUnlimited);
  EXPECT_EQ(s->stream_count, 6u);
  EXPECT_EQ(s->event_count, 5u);
  EXPECT_EQ(s->wait_count, 5u);
  EXPECT_EQ(s->wait_start[7] - s->wait_start[6], 5u);  // all at the sink
}

TEST(ScheduleFamilies, Diamond) {
  // a -> b, a -> c, b -> d, c -> d
  Dag d(4, {{0, 1}, {0, 2}, {1, 3}, {2, 3}});
  Schedule s;
  ASSERT_EQ(build(d, kUnlimited, s), SG_OK) << sg_last_error();
  check_schedule(d, s.s, kUnlimited);
  EXPECT_EQ(s->stream_count, 2u);
  EXPECT_EQ(s->event_count, 2u);  // the fork and the join
  EXPECT_EQ(s->wait_count, 2u);
  EXPECT_EQ(s->critical_path, 3u);
}

TEST(ScheduleFamilies, DiamondsInSeries) {
  // k diamonds joined end to end: width 2, two events per diamond
  const uint32_t k = 8;
  Edges e;
  for (uint32_t i = 0; i < k; i++) {
    uint32_t a = 3 * i, b = a + 1, c = a + 2, next = a + 3;
    e.insert(e.end(), {{a, b}, {a, c}, {b, next}, {c, next}});
  }
  Dag d(3 * k + 1, e);
  Schedule s;
  ASSERT_EQ(build(d, kUnlimited, s), SG_OK) << sg_last_error();
  check_schedule(d, s.s, kUnlimited);
  EXPECT_EQ(s->stream_count, 2u);
  EXPECT_EQ(s->wait_count, 2 * k);
}

// Fans of 8 between join nodes (join -> 8 -> join -> ...), as launch_bench's
// "diamond" DAGs: chains along edges leave 7 single nodes per fan, and only
// chains that jump over the joins reach the width. Each search of the cover
// must find a free node next to it before diving deeper, or one search runs
// through the whole graph and each phase joins just two chains (thousands of
// phases). Regression: the cover is exact within a few phases' budget.
TEST(ScheduleFamilies, FansBetweenJoinsNeedFewCoverPhases) {
  const uint32_t width = 8, n = 9 * 1200 + 1;
  Edges e;
  for (uint32_t join = 0; join + width + 1 < n; join += width + 1)
    for (uint32_t k = 1; k <= width; k++) e.insert(e.end(), {{join, join + k}, {join + k, join + width + 1}});
  Dag d(n, e);
  sg__plan_limits tight;
  sg__plan_limits_default(&tight);
  tight.cover_work = 30 * (uint64_t)(n + d.edge_count()); // about 30 phases
  Schedule s;
  ASSERT_EQ(build(d, kUnlimited, s, &tight), SG_OK) << sg_last_error();
  EXPECT_TRUE(s->width_exact);
  EXPECT_EQ(s->width, width);
  EXPECT_EQ(s->stream_count, width);
}

TEST(ScheduleFamilies, LayeredDagOfKnownWidth) {
  for (uint32_t width : {1u, 3u, 8u, 20u}) {
    Dag d = layered(12, width);
    Schedule s;
    ASSERT_EQ(build(d, kUnlimited, s), SG_OK) << sg_last_error();
    check_schedule(d, s.s, kUnlimited, {width <= 8});
    EXPECT_EQ(s->width, width);
    EXPECT_TRUE(s->width_exact);
    EXPECT_EQ(s->stream_count, width);
    EXPECT_EQ(s->critical_path, 12u);
  }
}

TEST(ScheduleFamilies, TransitiveEdgesAddNoEvents) {
  // a chain with every transitive edge: still one stream, no event
  Edges e;
  for (uint32_t u = 0; u < 12; u++)
    for (uint32_t v = u + 1; v < 12; v++) e.emplace_back(u, v);
  Dag full(12, e);
  Schedule s;
  ASSERT_EQ(build(full, kUnlimited, s), SG_OK) << sg_last_error();
  check_schedule(full, s.s, kUnlimited);
  EXPECT_EQ(s->stream_count, 1u);
  EXPECT_EQ(s->event_count, 0u);
  EXPECT_EQ(s->reduced_edge_count, 11u);

  // a diamond with the shortcut a -> d: the same two events as without it
  Dag diamond(4, {{0, 1}, {0, 2}, {1, 3}, {2, 3}, {0, 3}});
  Schedule t;
  ASSERT_EQ(build(diamond, kUnlimited, t), SG_OK) << sg_last_error();
  check_schedule(diamond, t.s, kUnlimited);
  EXPECT_EQ(t->reduced_edge_count, 4u);
  EXPECT_EQ(t->event_count, 2u);
  EXPECT_EQ(t->wait_count, 2u);
}

TEST(ScheduleFamilies, ClosureOfARandomDagPlansLikeTheDag) {
  // Adding every transitive edge changes neither the reduction nor the
  // number of waits a minimum cover needs in these DAGs' reduced form.
  std::mt19937 rng(7);
  for (int round = 0; round < 50; round++) {
    Dag d = plantest::random_dag(rng, 14, 0.25);
    plantest::Reach r = plantest::closure(d.n, plantest::adjacency(d));
    Edges all;
    for (uint32_t u = 0; u < d.n; u++)
      for (uint32_t v = 0; v < d.n; v++)
        if (r.get(u, v)) all.emplace_back(u, v);
    Dag closed(d.n, all);
    Schedule a, b;
    ASSERT_EQ(build(d, kUnlimited, a), SG_OK) << sg_last_error();
    ASSERT_EQ(build(closed, kUnlimited, b), SG_OK) << sg_last_error();
    check_schedule(closed, b.s, kUnlimited);
    EXPECT_EQ(a->reduced_edge_count, b->reduced_edge_count);
    EXPECT_EQ(a->stream_count, b->stream_count);
    // every wait of the closed DAG's plan is for a reduced edge
    for (uint32_t v = 0; v < d.n; v++)
      for (uint32_t k = b->wait_start[v]; k < b->wait_start[v + 1]; k++) {
        uint32_t u = b->event_node[b->wait_event[k]];
        EXPECT_TRUE(std::binary_search(b->red_succ + b->red_start[u],
                                       b->red_succ + b->red_start[u + 1], v));
      }
  }
}

TEST(ScheduleFamilies, BindingLimitBalancesAFan) {
  // 20 leaves on 4 streams: five per stream, so the plan's critical path is
  // the root plus five leaves
  Dag d = fan_out(20);
  Schedule s;
  ASSERT_EQ(build(d, 4, s), SG_OK) << sg_last_error();
  check_schedule(d, s.s, 4);
  EXPECT_EQ(s->stream_count, 4u);
  EXPECT_EQ(s->chain_count, 20u);
  EXPECT_EQ(s->width, 20u);
  EXPECT_EQ(s->plan_critical_path, 6u);
  EXPECT_EQ(s->event_count, 1u);
  EXPECT_EQ(s->wait_count, 3u);
}

TEST(ScheduleFamilies, LimitOfOneSerialises) {
  // one stream: everything in issue order, no event, the critical path is n
  Dag d = layered(4, 3);
  Schedule s;
  ASSERT_EQ(build(d, 1, s), SG_OK) << sg_last_error();
  check_schedule(d, s.s, 1);
  EXPECT_EQ(s->stream_count, 1u);
  EXPECT_EQ(s->event_count, 0u);
  EXPECT_EQ(s->plan_critical_path, 12u);
}

TEST(ScheduleFamilies, MergeUsesIdleLevels) {
  // Two long chains (levels 0..5) and short chains at single levels: with
  // two streams, the short chains cannot avoid collisions, but with three the
  // short ones share the third stream without growing the critical path.
  Edges e;
  for (uint32_t v = 1; v < 6; v++) e.emplace_back(v - 1, v);            // A: 0..5
  for (uint32_t v = 7; v < 12; v++) e.emplace_back(v - 1, v);           // B: 6..11
  e.emplace_back(0, 12);  // C: 12 at level 1
  e.emplace_back(2, 13);  // D: 13 at level 3
  e.emplace_back(4, 14);  // E: 14 at level 5
  Dag d(15, e);
  Schedule s;
  ASSERT_EQ(build(d, 3, s), SG_OK) << sg_last_error();
  check_schedule(d, s.s, 3);
  EXPECT_EQ(s->stream_count, 3u);
  EXPECT_EQ(s->plan_critical_path, s->critical_path);
  EXPECT_EQ(s->stream_of[12], s->stream_of[13]);
  EXPECT_EQ(s->stream_of[13], s->stream_of[14]);
}

TEST(ScheduleFamilies, DefaultLimitIsEightOrTheEnvironment) {
  const char *saved = std::getenv("CUDA_DEVICE_MAX_CONNECTIONS");
  std::string keep = saved ? saved : "";
  Dag d = fan_out(12);

  unsetenv("CUDA_DEVICE_MAX_CONNECTIONS");
  EXPECT_EQ(sg__default_max_streams(), 8u);
  Schedule s;
  ASSERT_EQ(build(d, sg__default_max_streams(), s), SG_OK) << sg_last_error();
  EXPECT_EQ(s->max_streams, 8u);
  EXPECT_EQ(s->stream_count, 8u);

  setenv("CUDA_DEVICE_MAX_CONNECTIONS", "3", 1);
  EXPECT_EQ(sg__default_max_streams(), 3u);
  Schedule t;
  ASSERT_EQ(build(d, sg__default_max_streams(), t), SG_OK) << sg_last_error();
  EXPECT_EQ(t->stream_count, 3u);
  Schedule u;  // an explicit limit wins over the environment
  ASSERT_EQ(build(d, 5, u), SG_OK) << sg_last_error();
  EXPECT_EQ(u->stream_count, 5u);

  for (const char *bad : {"0", "-2", "abc", "", "4x", "99999999999999999999"}) {
    setenv("CUDA_DEVICE_MAX_CONNECTIONS", bad, 1);
    EXPECT_EQ(sg__default_max_streams(), 8u) << "'" << bad << "'";
  }
  if (saved) setenv("CUDA_DEVICE_MAX_CONNECTIONS", keep.c_str(), 1);
  else unsetenv("CUDA_DEVICE_MAX_CONNECTIONS");
}

TEST(ScheduleFamilies, MalformedInputIsRefused) {
  sg__schedule s;
  std::memset(&s, 0x5a, sizeof s);
  uint32_t start[] = {0, 1, 2, 2};
  uint32_t succ[] = {1, 2};
  EXPECT_EQ(sg__schedule_build(3, start, succ, 0, nullptr), SG_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(sg__schedule_build(3, nullptr, succ, 0, &s), SG_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(s.order, nullptr) << "a failure leaves the schedule zeroed";
  EXPECT_EQ(sg__schedule_build(3, start, nullptr, 0, &s), SG_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(std::string(sg_last_error()).substr(0, 9).c_str(), "planner: ");

  uint32_t bad_first[] = {1, 1, 2, 2};
  EXPECT_EQ(sg__schedule_build(3, bad_first, succ, 0, &s), SG_ERR_INVALID_ARGUMENT);
  uint32_t decreasing[] = {0, 2, 1, 2};
  EXPECT_EQ(sg__schedule_build(3, decreasing, succ, 0, &s), SG_ERR_INVALID_ARGUMENT);
  uint32_t out_of_range[] = {1, 3};
  EXPECT_EQ(sg__schedule_build(3, start, out_of_range, 0, &s), SG_ERR_INVALID_ARGUMENT);
  uint32_t self[] = {0, 2};
  EXPECT_EQ(sg__schedule_build(3, start, self, 0, &s), SG_ERR_INVALID_ARGUMENT);
  uint32_t two[] = {0, 2, 2, 2};
  uint32_t unsorted[] = {2, 1};
  EXPECT_EQ(sg__schedule_build(3, two, unsorted, 0, &s), SG_ERR_INVALID_ARGUMENT);
  uint32_t duplicate[] = {1, 1};
  EXPECT_EQ(sg__schedule_build(3, two, duplicate, 0, &s), SG_ERR_INVALID_ARGUMENT);
  sg__plan_limits limits;
  sg__plan_limits_default(&limits);
  EXPECT_EQ(sg__schedule_build_ex(3, start, succ, 0, nullptr, &s), SG_ERR_INVALID_ARGUMENT);
  sg__schedule_free(nullptr);  // fine
  sg__schedule_free(&s);       // a zeroed schedule is fine
}

TEST(ScheduleFamilies, CycleIsRefused) {
  long live = sg_live_allocations();
  // 0 -> 1 -> 2 -> 0, and 3 -> 0
  uint32_t start[] = {0, 1, 2, 3, 4};
  uint32_t succ[] = {1, 2, 0, 0};
  Schedule s;
  EXPECT_EQ(sg__schedule_build(4, start, succ, 0, &s.s), SG_ERR_CYCLE);
  EXPECT_NE(std::strstr(sg_last_error(), "cycle"), nullptr) << sg_last_error();
  EXPECT_EQ(s->order, nullptr);
  EXPECT_EQ(sg_live_allocations(), live);
}

}  // namespace
