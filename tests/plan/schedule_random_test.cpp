// The planner on thousands of random DAGs: optimal stream counts against an
// independent brute-force width, validity of every plan under random limits,
// and the fallback methods (forced by tiny budgets) still valid.
#include <climits>

#include "plan_check.h"

using plantest::Dag;
using plantest::Schedule;
using plantest::build;
using plantest::check_schedule;

namespace {

constexpr unsigned kUnlimited = UINT_MAX;

// Small DAGs of varied size and density.
Dag small_dag(std::mt19937 &rng) {
  uint32_t n = 1 + rng() % 16;
  double p = std::uniform_real_distribution<double>(0.0, 0.6)(rng);
  return plantest::random_dag(rng, n, p);
}

TEST(ScheduleRandom, UnlimitedStreamsEqualTheWidth) {
  for (uint32_t seed = 1; seed <= 3000; seed++) {
    std::mt19937 rng(seed);
    Dag d = small_dag(rng);
    Schedule s;
    ASSERT_EQ(build(d, kUnlimited, s), SG_OK) << sg_last_error();
    uint32_t width = plantest::brute_width(d);
    ASSERT_EQ(s->stream_count, width) << "seed " << seed;
    ASSERT_EQ(s->width, width) << "seed " << seed;
    ASSERT_TRUE(s->width_exact) << "seed " << seed;
    ASSERT_TRUE(s->reduction_exact) << "seed " << seed;
    ASSERT_TRUE(s->waits_exact) << "seed " << seed;
    if (seed % 3 == 0) {  // the full replay check on a third of them keeps the suite fast
      check_schedule(d, s.s, kUnlimited);
      if (HasFatalFailure()) FAIL() << "seed " << seed;
    }
  }
}

TEST(ScheduleRandom, RandomLimitsGiveValidPlans) {
  for (uint32_t seed = 1; seed <= 1500; seed++) {
    std::mt19937 rng(seed * 7919u);
    Dag d = small_dag(rng);
    uint32_t width = plantest::brute_width(d);
    unsigned limit = 1 + rng() % (width + 1);
    Schedule s;
    ASSERT_EQ(build(d, limit, s), SG_OK) << sg_last_error();
    check_schedule(d, s.s, limit);
    if (HasFatalFailure()) FAIL() << "seed " << seed << " limit " << limit;
    ASSERT_EQ(s->stream_count, std::min<unsigned>(limit, width)) << "seed " << seed;
  }
}

TEST(ScheduleRandom, MediumDagsMatchKuhnsMatching) {
  // beyond brute force: the width against Kuhn's algorithm on the closure
  for (uint32_t seed = 1; seed <= 60; seed++) {
    std::mt19937 rng(seed * 104729u);
    uint32_t n = 40 + rng() % 160;
    double p = std::uniform_real_distribution<double>(0.005, 0.08)(rng);
    Dag d = plantest::random_dag(rng, n, p);
    Schedule s;
    ASSERT_EQ(build(d, kUnlimited, s), SG_OK) << sg_last_error();
    ASSERT_EQ(s->stream_count, plantest::matching_width(d)) << "seed " << seed;
    ASSERT_TRUE(s->width_exact);
    if (seed % 10 == 0) {
      check_schedule(d, s.s, kUnlimited);
      if (HasFatalFailure()) FAIL() << "seed " << seed;
    }
  }
}

// Budgets of zero force each fallback; the plans must stay valid.
struct Fallback {
  const char *name;
  void (*set)(sg__plan_limits *);
};

const Fallback kFallbacks[] = {
    {"greedy cover", [](sg__plan_limits *l) { l->cover_work = 0; }},
    {"index reduction", [](sg__plan_limits *l) { l->reduce_search_work = 0; }},
    {"partial reduction", [](sg__plan_limits *l) {
       l->reduce_search_work = 40;
       l->reduce_work = 0;
     }},
    {"no reduction", [](sg__plan_limits *l) {
       l->reduce_work = 0;
       l->reduce_search_work = 0;
     }},
    {"direct knowledge", [](sg__plan_limits *l) { l->clock_work = 0; }},
    {"interval merging", [](sg__plan_limits *l) { l->merge_scan_streams = 0; }},
    {"all fallbacks", [](sg__plan_limits *l) {
       l->cover_work = l->reduce_work = l->reduce_search_work = l->clock_work = 0;
       l->merge_scan_streams = 0;
     }},
};

TEST(ScheduleRandom, FallbacksGiveValidPlans) {
  for (const Fallback &f : kFallbacks) {
    sg__plan_limits limits;
    sg__plan_limits_default(&limits);
    f.set(&limits);
    for (uint32_t seed = 1; seed <= 300; seed++) {
      std::mt19937 rng(seed * 31337u);
      Dag d = small_dag(rng);
      uint32_t width = plantest::brute_width(d);
      unsigned limit = seed % 2 ? kUnlimited : 1 + rng() % (width + 1);
      Schedule s;
      ASSERT_EQ(build(d, limit, s, &limits), SG_OK) << sg_last_error();
      check_schedule(d, s.s, limit);
      if (HasFatalFailure()) FAIL() << f.name << ", seed " << seed << ", limit " << limit;
      // whatever the method, the width reported is exact or a lower bound,
      // and streams never fall below it without a binding limit
      if (s->width_exact) {
        ASSERT_EQ(s->width, width) << f.name << ", seed " << seed;
      } else {
        ASSERT_LE(s->width, width) << f.name << ", seed " << seed;
      }
      if (limit == kUnlimited) {
        ASSERT_GE(s->stream_count, width) << f.name;
      }
    }
  }
}

TEST(ScheduleRandom, DeterministicForTheSameInput) {
  std::mt19937 rng(99);
  Dag d = plantest::random_dag(rng, 300, 0.02);
  Schedule a, b;
  ASSERT_EQ(build(d, 6, a), SG_OK);
  ASSERT_EQ(build(d, 6, b), SG_OK);
  ASSERT_EQ(a->stream_count, b->stream_count);
  ASSERT_EQ(a->event_count, b->event_count);
  for (uint32_t v = 0; v < d.n; v++) {
    ASSERT_EQ(a->order[v], b->order[v]);
    ASSERT_EQ(a->stream_of[v], b->stream_of[v]);
  }
}

}  // namespace

// The order-and-edges schedule (sg__schedule_build_edges) is the full
// schedule's order and reduced edges, without streams or events.
TEST(ScheduleRandom, EdgesOnlyScheduleIsThePrefixOfTheFullOne) {
  for (uint32_t seed = 1; seed <= 400; seed++) {
    std::mt19937 rng(seed * 31337u);
    Dag d = seed % 4 ? small_dag(rng) : plantest::random_dag(rng, 40 + rng() % 160, 0.05);
    unsigned limit = 1 + rng() % 9;
    Schedule full, edges;
    ASSERT_EQ(build(d, limit, full), SG_OK) << sg_last_error();
    ASSERT_EQ(sg__schedule_build_edges(d.n, d.start.data(), d.succ.data(), limit, &edges.s), SG_OK)
        << sg_last_error();
    ASSERT_EQ(edges->node_count, d.n);
    EXPECT_EQ(edges->streams_planned, 0);
    EXPECT_EQ(full->streams_planned, 1);
    EXPECT_EQ(edges->stream_count, 0u);
    EXPECT_EQ(edges->stream_of, nullptr);
    EXPECT_EQ(edges->wait_start, nullptr);
    EXPECT_EQ(edges->record_event, nullptr);
    for (uint32_t i = 0; i < d.n; i++) ASSERT_EQ(edges->order[i], full->order[i]) << "seed " << seed;
    for (uint32_t v = 0; v <= d.n; v++) ASSERT_EQ(edges->red_start[v], full->red_start[v]);
    for (uint32_t e = 0; e < full->red_start[d.n]; e++) ASSERT_EQ(edges->red_succ[e], full->red_succ[e]);
    EXPECT_EQ(edges->reduced_edge_count, full->reduced_edge_count);
    EXPECT_EQ(edges->width, full->width);
    EXPECT_EQ(edges->critical_path, full->critical_path);
    EXPECT_EQ(edges->reduction_exact, full->reduction_exact);
  }
}
