// The planner on graphs of a few thousand nodes, where the large-graph code
// paths run at default budgets (interval merging above 64 streams, direct
// knowledge when vector clocks would be too big, blocks of the chain index):
// plans must still imply every edge, and keep the DAG's concurrency when the
// limit does not bind. Widths are known by construction.
#include <climits>

#include "plan_check.h"

using plantest::Dag;
using plantest::Edges;
using plantest::Schedule;
using plantest::build;
using plantest::check_schedule;

namespace {

constexpr unsigned kUnlimited = UINT_MAX;
const plantest::CheckOptions kNoMinimality{true, false};

// `width` columns of nodes; node i of a layer follows node i of the layer
// before and two random nodes of it: width exactly `width`.
Dag pipeline(std::mt19937 &rng, uint32_t layers, uint32_t width) {
  Edges e;
  for (uint32_t l = 1; l < layers; l++)
    for (uint32_t i = 0; i < width; i++) {
      uint32_t v = l * width + i;
      e.emplace_back(v - width, v);
      for (int k = 0; k < 2; k++) e.emplace_back((l - 1) * width + rng() % width, v);
    }
  return Dag(layers * width, e);
}

// `width` columns; each round, random pairs of columns meet in a shared node:
// chains must jump over the meeting nodes to reach the width.
Dag crossings(std::mt19937 &rng, uint32_t rounds, uint32_t width) {
  Edges e;
  std::vector<uint32_t> tail(width), order(width);
  uint32_t next = 0;
  for (uint32_t c = 0; c < width; c++) tail[c] = next++;
  for (uint32_t r = 0; r < rounds; r++) {
    for (uint32_t i = 0; i < width; i++) order[i] = i;
    std::shuffle(order.begin(), order.end(), rng);
    uint32_t meet = next;
    for (uint32_t p = 0; p + 1 < width; p += 2) {
      e.emplace_back(tail[order[p]], next);
      e.emplace_back(tail[order[p + 1]], next);
      next++;
    }
    for (uint32_t p = 0; p < width; p++) {
      uint32_t v = next++;
      e.emplace_back(p + 1 < width || width % 2 == 0 ? meet + p / 2 : tail[order[p]], v);
      tail[order[p]] = v;
    }
  }
  return Dag(next, e);
}

// Random edges to the 40 nodes before, in a hidden order.
Dag local(std::mt19937 &rng, uint32_t n) {
  std::vector<uint32_t> label(n);
  for (uint32_t i = 0; i < n; i++) label[i] = i;
  std::shuffle(label.begin(), label.end(), rng);
  Edges e;
  for (uint32_t v = 1; v < n; v++)
    for (int k = 0; k < 3; k++) {
      uint32_t span = std::min<uint32_t>(v, 40);
      e.emplace_back(label[v - 1 - rng() % span], label[v]);
    }
  return Dag(n, e);
}

TEST(ScheduleScale, PipelineOfKnownWidth) {
  std::mt19937 rng(11);
  Dag d = pipeline(rng, 40, 75);
  for (unsigned limit : {8u, 32u, 100u, kUnlimited}) {
    Schedule s;
    ASSERT_EQ(build(d, limit, s), SG_OK) << sg_last_error();
    EXPECT_EQ(s->width, 75u);
    EXPECT_TRUE(s->width_exact);
    EXPECT_EQ(s->stream_count, std::min(limit, 75u));
    check_schedule(d, s.s, limit, kNoMinimality);
    if (HasFatalFailure()) FAIL() << "limit " << limit;
  }
}

TEST(ScheduleScale, CrossingsNeedJumpingChains) {
  std::mt19937 rng(12);
  Dag d = crossings(rng, 30, 64);
  Schedule s;
  ASSERT_EQ(build(d, kUnlimited, s), SG_OK) << sg_last_error();
  EXPECT_EQ(s->width, 64u);
  EXPECT_TRUE(s->width_exact);
  EXPECT_EQ(s->stream_count, 64u);
  check_schedule(d, s.s, kUnlimited, kNoMinimality);
}

TEST(ScheduleScale, LocalRandomDagUnderLimits) {
  std::mt19937 rng(13);
  Dag d = local(rng, 3000);
  uint32_t width = 0;
  for (unsigned limit : {kUnlimited, 8u, 100u}) {  // 100: interval merging (> 64 streams)
    Schedule s;
    ASSERT_EQ(build(d, limit, s), SG_OK) << sg_last_error();
    if (limit == kUnlimited) width = (uint32_t)s->width;
    ASSERT_TRUE(s->width_exact);
    EXPECT_EQ(s->stream_count, std::min(limit, width));
    check_schedule(d, s.s, limit, kNoMinimality);
    if (HasFatalFailure()) FAIL() << "limit " << limit;
  }
  EXPECT_GT(width, 100u) << "the case meant to bind a limit of 100 does not";
}

TEST(ScheduleScale, WideFanWithDirectKnowledge) {
  // Fork-join over 2,100 streams: dense vector clocks would cost more than the
  // default budget ((n + E + streams) x streams > 2^24), so streams learn only
  // from their own waits; without a binding limit that is still exact.
  Edges e;
  const uint32_t k = 2100;
  for (uint32_t v = 1; v <= k; v++) {
    e.emplace_back(0, v);
    e.emplace_back(v, k + 1);
  }
  Dag d(k + 2, e);
  Schedule s;
  ASSERT_EQ(build(d, kUnlimited, s), SG_OK) << sg_last_error();
  EXPECT_EQ(s->stream_count, k);
  EXPECT_EQ(s->wait_count, 2 * (k - 1));
  EXPECT_TRUE(s->waits_exact);
  // the replay check on a smaller fork-join through the same path
  Edges small;
  for (uint32_t v = 1; v <= 200; v++) {
    small.emplace_back(0, v);
    small.emplace_back(v, 201);
  }
  Dag f(202, small);
  sg__plan_limits limits;
  sg__plan_limits_default(&limits);
  limits.clock_work = 0;
  for (unsigned limit : {kUnlimited, 7u}) {
    Schedule t;
    ASSERT_EQ(build(f, limit, t, &limits), SG_OK) << sg_last_error();
    EXPECT_EQ(t->waits_exact, limit == kUnlimited);
    check_schedule(f, t.s, limit, kNoMinimality);
    if (HasFatalFailure()) FAIL() << "limit " << limit;
  }
}

TEST(ScheduleScale, TinyBudgetsAtScale) {
  std::mt19937 rng(14);
  Dag d = local(rng, 2000);
  sg__plan_limits limits;
  sg__plan_limits_default(&limits);
  limits.cover_work = 50000;
  limits.reduce_search_work = 2000;
  limits.reduce_work = 0;
  limits.clock_work = 0;
  for (unsigned limit : {kUnlimited, 16u, 90u}) {
    Schedule s;
    ASSERT_EQ(build(d, limit, s, &limits), SG_OK) << sg_last_error();
    check_schedule(d, s.s, limit, kNoMinimality);
    if (HasFatalFailure()) FAIL() << "limit " << limit;
  }
}

}  // namespace
