// Sampled traces on the host backend (both modes), options.trace_every = k:
// launches 1, 1 + k, 1 + 2k... are timed and kept, the others run but have
// no records and say they were not sampled; the ring keeps the last
// trace_launches traced launches; the latest trace is the latest traced
// launch; the trace file holds the traced launches only; 0 and 1 time every
// launch; trace_every without trace is refused; an options struct of the
// layout before trace_every traces every launch.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <climits>
#include <cstddef>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "json_check.h"
#include "sg_test_util.h"
#include "trace_check.h"

namespace {

using sgtest::TracedGraph;

int count_run(void *p) {
  static_cast<std::atomic<int> *>(p)->fetch_add(1);
  return 0;
}

// A diamond of four host nodes, each counting its runs into `runs`.
TracedGraph diamond(sg_graph *g, std::atomic<int> *runs) {
  TracedGraph t;
  auto add = [&](const char *name, std::vector<uint32_t> deps) {
    std::vector<sg_node> d;
    for (uint32_t i : deps) {
      d.push_back(t.nodes[i]);
      t.edges.emplace_back(i, uint32_t(t.nodes.size()));
    }
    sg_host_desc h = {count_run, runs, name};
    sg_node n{};
    EXPECT_EQ(sg_graph_add_host(g, &h, d.data(), d.size(), &n), SG_OK) << sg_last_error();
    t.nodes.push_back(n);
    t.timed.push_back(false);  // counting takes next to no time
  };
  add("top", {});
  add("left", {0});
  add("right", {0});
  add("bottom", {1, 2});
  return t;
}

class TraceSample : public ::testing::TestWithParam<sg_exec_mode> {
 protected:
  sg_exec_options options(unsigned every, unsigned keep = 0) const {
    sg_exec_options o = sgtest::host_options();
    o.mode = GetParam();
    o.trace = 1;
    o.trace_launches = keep;
    o.trace_every = every;
    return o;
  }
};

INSTANTIATE_TEST_SUITE_P(Modes, TraceSample, ::testing::Values(SG_MODE_STREAMS, SG_MODE_GRAPH),
                         [](const ::testing::TestParamInfo<sg_exec_mode> &i) {
                           return std::string(i.param == SG_MODE_GRAPH ? "graph" : "streams");
                         });

bool sampled(uint64_t launch, unsigned every) {
  return every <= 1 || (launch - 1) % every == 0;
}

std::string temp_path(const std::string &stem) {
  return std::string(::testing::TempDir()) + stem + "-" + std::to_string(getpid()) + ".json";
}

// Every launch runs; launches 1, 1 + k... have records, the others say they
// were not sampled; the latest trace is the latest traced launch.
TEST_P(TraceSample, EveryKthLaunchIsTraced) {
  sgtest::LeakCheck leaks;
  for (unsigned every : {2u, 3u, 4u}) {
    SCOPED_TRACE("trace_every " + std::to_string(every));
    std::atomic<int> runs{0};
    sgtest::Graph g;
    TracedGraph t = diamond(g, &runs);
    sg_exec_options o = options(every);
    sgtest::Exec e;
    SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
    const sg_plan *plan = nullptr;
    SG_ASSERT_OK(sg_exec_get_plan(e, &plan));
    const uint64_t launches = 10;
    for (uint64_t l = 0; l < launches; l++) SG_ASSERT_OK(sg_exec_launch(e, nullptr));
    SG_ASSERT_OK(sg_exec_wait(e));
    EXPECT_EQ(runs.load(), int(launches * t.nodes.size()));
    uint64_t latest_traced = 0;
    for (uint64_t l = 1; l <= launches; l++) {
      if (sampled(l, every)) {
        latest_traced = l;
        std::vector<sg_trace_record> rec = sgtest::records_of(e, l, t.nodes.size());
        sgtest::check_launch(plan, t, l, rec, 0, "launch " + std::to_string(l));
        continue;
      }
      std::vector<sg_trace_record> rec(t.nodes.size());
      size_t count = 0;
      EXPECT_EQ(sg_exec_get_launch_trace(e, l, rec.data(), rec.size(), &count),
                SG_ERR_INVALID_ARGUMENT)
          << "launch " << l;
      EXPECT_NE(std::string(sg_last_error()).find("not sampled"), std::string::npos)
          << sg_last_error();
      EXPECT_NE(std::string(sg_last_error()).find("trace_every"), std::string::npos)
          << sg_last_error();
    }
    std::vector<sg_trace_record> latest = sgtest::records_of(e, 0, t.nodes.size());
    ASSERT_FALSE(latest.empty());
    EXPECT_EQ(latest[0].launch, latest_traced);
    // A launch not made yet is still "not kept", not "not sampled".
    std::vector<sg_trace_record> rec(t.nodes.size());
    size_t count = 0;
    EXPECT_EQ(sg_exec_get_launch_trace(e, launches + 2, rec.data(), rec.size(), &count),
              SG_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(std::string(sg_last_error()).find("not sampled"), std::string::npos)
        << sg_last_error();
  }
}

// The ring keeps the last trace_launches traced launches, however far apart:
// with k = 3 and 2 kept, launches 1, 4, 7, 10 are traced and 7, 10 kept.
TEST_P(TraceSample, RingKeepsTracedLaunchesOnly) {
  sgtest::LeakCheck leaks;
  std::atomic<int> runs{0};
  sgtest::Graph g;
  TracedGraph t = diamond(g, &runs);
  sg_exec_options o = options(3, 2);
  sgtest::Exec e;
  SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
  for (int i = 0; i < 12; i++) SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  std::vector<sg_trace_record> rec(t.nodes.size());
  size_t count = 0;
  for (uint64_t l : {7u, 10u}) {
    SG_EXPECT_OK(sg_exec_get_launch_trace(e, l, rec.data(), rec.size(), &count));
    EXPECT_EQ(rec[0].launch, l);
  }
  for (uint64_t l : {1u, 4u}) {
    EXPECT_EQ(sg_exec_get_launch_trace(e, l, rec.data(), rec.size(), &count),
              SG_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(sg_last_error()).find("traced launches 7 to 10"), std::string::npos)
        << sg_last_error();
  }
  for (uint64_t l : {5u, 11u, 12u}) {
    EXPECT_EQ(sg_exec_get_launch_trace(e, l, rec.data(), rec.size(), &count),
              SG_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(sg_last_error()).find("launch " + std::to_string(l) +
                                                " was not sampled"),
              std::string::npos)
        << sg_last_error();
  }
  SG_EXPECT_OK(sg_exec_get_trace(e, rec.data(), rec.size(), &count));
  EXPECT_EQ(rec[0].launch, 10u);
}

// The trace file holds the traced launches, each with all its nodes.
TEST_P(TraceSample, ChromeJsonHoldsTracedLaunches) {
  sgtest::LeakCheck leaks;
  std::atomic<int> runs{0};
  sgtest::Graph g;
  TracedGraph t = diamond(g, &runs);
  sg_exec_options o = options(4);
  sgtest::Exec e;
  SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
  for (int i = 0; i < 10; i++) SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  std::string path = temp_path("sampled");
  SG_ASSERT_OK(sg_exec_write_trace(e, path.c_str()));
  sgtest::TraceFile f;
  std::string why;
  ASSERT_TRUE(sgtest::load_trace(path, &f, &why)) << why;
  std::remove(path.c_str());
  std::set<double> kept;
  for (const sgtest::Json *l : f.launches) kept.insert((*l)["args"]["launch"].num);
  EXPECT_EQ(kept, (std::set<double>{1, 5, 9}));
  EXPECT_EQ(f.nodes.size(), 3 * t.nodes.size());
  std::string svg = std::string(::testing::TempDir()) + "sampled-" +
                    std::to_string(getpid()) + ".svg";
  SG_EXPECT_OK(sg_exec_write_trace_svg(e, svg.c_str()));
  std::remove(svg.c_str());
}

// 0 and 1 both time every launch, as before sampling existed.
TEST_P(TraceSample, ZeroAndOneTraceEveryLaunch) {
  sgtest::LeakCheck leaks;
  for (unsigned every : {0u, 1u}) {
    SCOPED_TRACE("trace_every " + std::to_string(every));
    std::atomic<int> runs{0};
    sgtest::Graph g;
    TracedGraph t = diamond(g, &runs);
    sg_exec_options o = options(every);
    sgtest::Exec e;
    SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
    const sg_plan *plan = nullptr;
    SG_ASSERT_OK(sg_exec_get_plan(e, &plan));
    for (int i = 0; i < 5; i++) SG_ASSERT_OK(sg_exec_launch(e, nullptr));
    for (uint64_t l = 1; l <= 5; l++)
      sgtest::check_launch(plan, t, l, sgtest::records_of(e, l, t.nodes.size()), 0,
                           "launch " + std::to_string(l));
  }
}

// trace_every without trace is refused, naming both fields; with trace off,
// 0 and 1 (every launch, the default) are accepted. A k beyond any launch
// count traces launch 1 alone.
TEST_P(TraceSample, BadValues) {
  sgtest::LeakCheck leaks;
  std::atomic<int> runs{0};
  sgtest::Graph g;
  TracedGraph t = diamond(g, &runs);
  sg_exec_options o = options(8);
  o.trace = 0;
  sg_exec *bad = nullptr;
  EXPECT_EQ(sg_exec_create(g, &o, &bad), SG_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(bad, nullptr);
  EXPECT_NE(std::string(sg_last_error()).find("trace_every is 8 but trace is 0"),
            std::string::npos)
      << sg_last_error();
  for (unsigned every : {0u, 1u}) {
    o.trace_every = every;
    sgtest::Exec e;
    SG_EXPECT_OK(sg_exec_create(g, &o, &e.e));
  }
  o = options(UINT_MAX);
  sgtest::Exec e;
  SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
  for (int i = 0; i < 3; i++) SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  std::vector<sg_trace_record> rec = sgtest::records_of(e, 0, t.nodes.size());
  ASSERT_FALSE(rec.empty());
  EXPECT_EQ(rec[0].launch, 1u);
}

// Sampling counts the executable's launches across a change of topology
// (the trace starts again, the numbering does not).
TEST_P(TraceSample, UpdateKeepsTheCount) {
  sgtest::LeakCheck leaks;
  std::atomic<int> runs{0};
  sgtest::Graph g;
  TracedGraph t = diamond(g, &runs);
  sg_exec_options o = options(2);
  sgtest::Exec e;
  SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
  for (int i = 0; i < 3; i++) SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  sg_host_desc h = {count_run, &runs, "extra"};
  SG_ASSERT_OK(sg_graph_add_host(g, &h, &t.nodes.back(), 1, nullptr));
  SG_ASSERT_OK(sg_exec_update(e, g));
  for (int i = 0; i < 3; i++) SG_ASSERT_OK(sg_exec_launch(e, nullptr));  // 4, 5, 6
  std::vector<sg_trace_record> rec(t.nodes.size() + 1);
  size_t count = 0;
  SG_ASSERT_OK(sg_exec_get_launch_trace(e, 5, rec.data(), rec.size(), &count));
  EXPECT_EQ(count, t.nodes.size() + 1);
  EXPECT_EQ(rec[0].launch, 5u);
  EXPECT_EQ(sg_exec_get_launch_trace(e, 6, rec.data(), rec.size(), &count),
            SG_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(sg_last_error()).find("not sampled"), std::string::npos)
      << sg_last_error();
  SG_ASSERT_OK(sg_exec_get_trace(e, rec.data(), rec.size(), &count));
  EXPECT_EQ(rec[0].launch, 5u);
}

// A program compiled before trace_every passes the shorter struct: the
// library reads trace_every as 0, every launch traced.
TEST(TraceSampleAbi, OldLayoutTracesEveryLaunch) {
  sgtest::LeakCheck leaks;
  std::atomic<int> runs{0};
  sgtest::Graph g;
  TracedGraph t = diamond(g, &runs);
  const size_t old_size =
      (offsetof(sg_exec_options, trace_launches) + sizeof(unsigned) + alignof(sg_exec_options) -
       1) / alignof(sg_exec_options) * alignof(sg_exec_options);
  ASSERT_LT(old_size, sizeof(sg_exec_options));
  sg_exec_options o = sgtest::host_options();
  o.trace = 1;
  o.trace_every = 5;  // beyond the old layout: not passed
  sg_exec *e = nullptr;
  SG_ASSERT_OK(sg_exec_create_sized(g, &o, old_size, &e));
  for (int i = 0; i < 3; i++) SG_EXPECT_OK(sg_exec_launch(e, nullptr));
  for (uint64_t l = 1; l <= 3; l++) {
    std::vector<sg_trace_record> rec = sgtest::records_of(e, l, t.nodes.size());
    ASSERT_FALSE(rec.empty());
    EXPECT_EQ(rec[0].launch, l);
  }
  SG_EXPECT_OK(sg_exec_destroy(e));
}

}  // namespace
