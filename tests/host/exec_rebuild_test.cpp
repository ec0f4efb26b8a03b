// Rebuilds that never stall launches (sg_exec_update_async) on the host
// backend: launches racing the build, bitwise per launch against the
// version its number says it ran; failed builds; destruction mid-build;
// every allocation and thread call of the path failing in turn.
#include <chrono>
#include <cstring>
#include <random>
#include <thread>

#include "rebuild_race.h"

namespace {

using sgrebuild::Log;
using sgrebuild::Version;

uint32_t fresh_seed() { return std::random_device{}(); }

struct Versions {
  Log log;
  std::vector<std::unique_ptr<Version>> v;
  // Version `id` from `seed` with `nodes` kernels.
  sg_status add(uint32_t seed, uint32_t nodes) {
    v.emplace_back(new Version);
    Version &x = *v.back();
    x.id = static_cast<int>(v.size() - 1);
    x.log = &log;
    return x.build(seed, nodes, 0.08);
  }
  sg_graph *graph(size_t i) const { return v[i]->graph; }
};

TEST(ExecRebuild, LaunchesRaceTheBuildInStreamsMode) {
  for (uint64_t ahead : {0u, 3u}) {
    sg_exec_options o = sgtest::host_options(1 + fresh_seed() % 4);
    sgrebuild::race(SG_BACKEND_HOST, o, fresh_seed(), 5, 6, 300, ahead);
    if (HasFatalFailure()) return;
  }
}

TEST(ExecRebuild, LaunchesRaceTheBuildInGraphMode) {
  for (uint64_t ahead : {0u, 3u}) {
    sg_exec_options o = sgtest::host_options(1 + fresh_seed() % 4);
    o.mode = SG_MODE_GRAPH;
    sgrebuild::race(SG_BACKEND_HOST, o, fresh_seed(), 5, 6, 300, ahead);
    if (HasFatalFailure()) return;
  }
}

TEST(ExecRebuild, TracedLaunchesRaceTheBuild) {
  sg_exec_options o = sgtest::host_options(2);
  o.trace = 1;
  sgrebuild::race(SG_BACKEND_HOST, o, fresh_seed(), 3, 5, 200, 2);
}

// A build that fails in the backend leaves the current version running and
// reports the error, named for sg_exec_update_async; a later update works.
TEST(ExecRebuild, FailedBuildKeepsTheCurrentVersion) {
  sgtest::LeakCheck leaks;
  const uint32_t seed = fresh_seed();
  std::printf("seed %u\n", seed);
  Versions vs;
  SG_ASSERT_OK(vs.add(seed, 5));
  SG_ASSERT_OK(vs.add(seed + 1, 40));
  sg_exec_options o = sgtest::host_options(2);
  sg_exec *e = nullptr;
  SG_ASSERT_OK(sg_exec_create(vs.graph(0), &o, &e));
  SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  sg_fault_arm_site(SG_FAULT_ALLOC, "host/host_exec.c:host_create", 1);
  SG_ASSERT_OK(sg_exec_update_async(e, vs.graph(1)));
  for (int i = 0; i < 3; i++) SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  uint64_t first = 77;
  EXPECT_EQ(sg_exec_update_wait(e, &first), SG_ERR_OUT_OF_MEMORY);
  EXPECT_NE(std::strstr(sg_last_error(), "sg_exec_update_async"), nullptr) << sg_last_error();
  EXPECT_EQ(first, 77u);
  EXPECT_TRUE(sg_fault_fired());
  sg_fault_arm(0, 0);
  EXPECT_EQ(sg_exec_update_query(e, &first), SG_ERR_OUT_OF_MEMORY);
  for (int i = 0; i < 2; i++) SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  // The same update again, now built: the next launch runs it.
  SG_ASSERT_OK(sg_exec_update_async(e, vs.graph(1)));
  SG_ASSERT_OK(sg_exec_update_wait(e, &first));
  EXPECT_EQ(first, 7u);
  SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  SG_ASSERT_OK(sg_exec_wait(e));
  sg_exec_stats s;
  SG_ASSERT_OK(sg_exec_get_stats(e, &s));
  EXPECT_EQ(s.rebuilds, 1u);
  SG_ASSERT_OK(sg_exec_destroy(e));
  EXPECT_EQ(sgrebuild::check_log(vs.log, vs.v, {1, 7}, 7), "");
}

// A build refused before it starts (a cycle) comes back from the call.
TEST(ExecRebuild, CycleIsRefusedAtOnce) {
  sgtest::Graph g;
  sg_node a{}, b{};
  SG_ASSERT_OK(sg_graph_add_empty(g, "a", nullptr, 0, &a));
  SG_ASSERT_OK(sg_graph_add_empty(g, "b", &a, 1, &b));
  sg_exec_options o = sgtest::host_options();
  sgtest::Exec e;
  SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
  SG_ASSERT_OK(sg_graph_add_edge(g, b, a));
  EXPECT_EQ(sg_exec_update_async(e, g), SG_ERR_CYCLE);
  EXPECT_EQ(sg_exec_update_query(e, nullptr), SG_ERR_INVALID_ARGUMENT);
  SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  SG_ASSERT_OK(sg_exec_wait(e));
}

TEST(ExecRebuild, QueryAndWaitWithoutAnUpdate) {
  sgtest::Graph g;
  SG_ASSERT_OK(sg_graph_add_empty(g, "a", nullptr, 0, nullptr));
  sg_exec_options o = sgtest::host_options();
  sgtest::Exec e;
  SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
  EXPECT_EQ(sg_exec_update_query(e, nullptr), SG_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::strstr(sg_last_error(), "sg_exec_update_query"), nullptr);
  EXPECT_EQ(sg_exec_update_wait(e, nullptr), SG_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(sg_exec_update_async(nullptr, g), SG_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(sg_exec_update_async(e, nullptr), SG_ERR_INVALID_ARGUMENT);
}

// The same topology builds nothing: the parameters change for the next
// launch, which the query reports at once.
TEST(ExecRebuild, SameTopologySwitchesAtTheNextLaunch) {
  const uint32_t seed = fresh_seed();
  std::printf("seed %u\n", seed);
  Versions vs;
  SG_ASSERT_OK(vs.add(seed, 12));
  SG_ASSERT_OK(vs.add(seed, 12));  // the same DAG; the last kernel's salt differs
  sg_exec_options o = sgtest::host_options(3);
  sgtest::Exec e;
  SG_ASSERT_OK(sg_exec_create(vs.graph(0), &o, &e.e));
  SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  SG_ASSERT_OK(sg_exec_update_async(e, vs.graph(1)));
  uint64_t first = 0;
  SG_ASSERT_OK(sg_exec_update_query(e, &first));
  EXPECT_EQ(first, 2u);
  SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  SG_ASSERT_OK(sg_exec_wait(e));
  sg_exec_stats s;
  SG_ASSERT_OK(sg_exec_get_stats(e, &s));
  EXPECT_EQ(s.rebuilds, 0u);
  EXPECT_GE(s.param_updates, 1u);
  EXPECT_EQ(sgrebuild::check_log(vs.log, vs.v, {1, 2}, 2), "");
}

// A synchronous update while a build is pending switches to it first; a
// second asynchronous update while one builds is refused or, the first
// built, switches to it and starts.
TEST(ExecRebuild, UpdatesWhileABuildIsPending) {
  const uint32_t seed = fresh_seed();
  std::printf("seed %u\n", seed);
  Versions vs;
  SG_ASSERT_OK(vs.add(seed, 4));
  SG_ASSERT_OK(vs.add(seed + 1, 300));
  SG_ASSERT_OK(vs.add(seed + 2, 9));
  SG_ASSERT_OK(vs.add(seed + 3, 200));
  sg_exec_options o = sgtest::host_options(2);
  sgtest::Exec e;
  SG_ASSERT_OK(sg_exec_create(vs.graph(0), &o, &e.e));
  SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  SG_ASSERT_OK(sg_exec_update_async(e, vs.graph(1)));
  SG_ASSERT_OK(sg_exec_update(e, vs.graph(2)));
  uint64_t first = 0;
  SG_ASSERT_OK(sg_exec_update_query(e, &first));
  EXPECT_EQ(first, 2u);  // version 1 would have run from launch 2, version 2 replaced it
  SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  sg_status st = sg_exec_update_async(e, vs.graph(3));
  SG_ASSERT_OK(st);
  st = sg_exec_update_async(e, vs.graph(1));
  if (st == SG_ERR_BUSY) {
    EXPECT_NE(std::strstr(sg_last_error(), "still being built"), nullptr) << sg_last_error();
    SG_ASSERT_OK(sg_exec_update_wait(e, &first));
    EXPECT_EQ(first, 3u);
    SG_ASSERT_OK(sg_exec_launch(e, nullptr));
    SG_ASSERT_OK(sg_exec_wait(e));
    sg_exec_stats s;
    SG_ASSERT_OK(sg_exec_get_stats(e, &s));
    EXPECT_EQ(s.rebuilds, 3u);
    std::lock_guard<std::mutex> l(vs.log.m);
    ASSERT_EQ(vs.log.entries.size(), 3u);
    EXPECT_EQ(vs.log.entries[2].first, 3);
    EXPECT_EQ(vs.log.entries[2].second, vs.v[3]->expect);
  } else {
    SG_ASSERT_OK(st);  // version 3 was built: switched to (no launch ran it), 1 builds
    SG_ASSERT_OK(sg_exec_update_wait(e, &first));
    EXPECT_EQ(first, 3u);
    SG_ASSERT_OK(sg_exec_launch(e, nullptr));
    SG_ASSERT_OK(sg_exec_wait(e));
    std::lock_guard<std::mutex> l(vs.log.m);
    ASSERT_EQ(vs.log.entries.size(), 3u);
    EXPECT_EQ(vs.log.entries[2].first, 1);
    EXPECT_EQ(vs.log.entries[2].second, vs.v[1]->expect);
  }
  std::lock_guard<std::mutex> l(vs.log.m);
  EXPECT_EQ(vs.log.entries[0].first, 0);
  EXPECT_EQ(vs.log.entries[1].first, 2);
  EXPECT_EQ(vs.log.entries[1].second, vs.v[2]->expect);
}

// Handles of the new graph name nodes only once the executable switched.
TEST(ExecRebuild, NewHandlesAfterTheSwitch) {
  std::atomic<int> count{0};
  auto add = [](void *p) {
    static_cast<std::atomic<int> *>(p)->fetch_add(1);
    return 0;
  };
  sgtest::Graph g1, g2;
  sg_host_desc h = {add, &count, nullptr};
  sg_node a{}, b{}, c{};
  SG_ASSERT_OK(sg_graph_add_host(g1, &h, nullptr, 0, &a));
  SG_ASSERT_OK(sg_graph_add_host(g2, &h, nullptr, 0, &b));
  SG_ASSERT_OK(sg_graph_add_host(g2, &h, &b, 1, &c));
  sg_exec_options o = sgtest::host_options();
  sgtest::Exec e;
  SG_ASSERT_OK(sg_exec_create(g1, &o, &e.e));
  SG_ASSERT_OK(sg_exec_update_async(e, g2));
  SG_ASSERT_OK(sg_exec_update_wait(e, nullptr));
  SG_ASSERT_OK(sg_exec_set_host(e, c, &h));
  SG_ASSERT_OK(sg_exec_set_host(e, a, &h));  // the first graph's handles stay valid
  SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  SG_ASSERT_OK(sg_exec_wait(e));
  EXPECT_EQ(count.load(), 2);
}

// Destroying the executable while its replacement builds (or is built and
// not yet switched to) waits for the build and frees it.
TEST(ExecRebuild, DestroyWhileABuildIsInFlight) {
  sgtest::LeakCheck leaks;
  const uint32_t seed = fresh_seed();
  std::printf("seed %u\n", seed);
  Versions vs;
  SG_ASSERT_OK(vs.add(seed, 5));
  SG_ASSERT_OK(vs.add(seed + 1, 300));
  std::mt19937 rng(seed);
  for (int round = 0; round < 24; round++) {
    sg_exec_options o = sgtest::host_options(1 + round % 3);
    o.mode = round % 2 ? SG_MODE_GRAPH : SG_MODE_STREAMS;
    o.trace = round % 4 == 3;
    sg_exec *e = nullptr;
    SG_ASSERT_OK(sg_exec_create(vs.graph(0), &o, &e));
    SG_ASSERT_OK(sg_exec_launch(e, nullptr));
    SG_ASSERT_OK(sg_exec_update_async(e, vs.graph(1)));
    std::this_thread::sleep_for(std::chrono::microseconds(rng() % 3000));
    if (round % 3 == 1) SG_ASSERT_OK(sg_exec_launch(e, nullptr));
    SG_ASSERT_OK(sg_exec_destroy(e));
  }
}

// The background path under fault injection: every allocation and every
// thread, mutex and condition creation of the scenario fails in turn. Each
// failure comes back as a status with a message (from the call or from
// sg_exec_update_wait), nothing leaks or hangs, and every launch that ran
// made the bytes of the version its number says.
TEST(ExecRebuild, EveryFaultOnTheBackgroundPathComesBackCleanly) {
  const uint32_t seed = fresh_seed();
  std::printf("seed %u\n", seed);
  Versions vs;
  SG_ASSERT_OK(vs.add(seed, 4));
  SG_ASSERT_OK(vs.add(seed + 1, 7));
  auto run = [&](uint64_t *launches, std::vector<uint64_t> *firsts) -> sg_status {
    {
      std::lock_guard<std::mutex> l(vs.log.m);
      vs.log.entries.clear();
    }
    *launches = 0;
    *firsts = {1};
    sg_exec_options o = sgtest::host_options(2);
    sg_exec *e = nullptr;
    sg_status st = sg_exec_create(vs.graph(0), &o, &e);
    auto launch = [&] {
      sg_status s = sg_exec_launch(e, nullptr);
      if (!s) ++*launches;
      return s;
    };
    if (!st) st = launch();
    if (!st) st = sg_exec_update_async(e, vs.graph(1));
    if (!st) st = launch();
    if (!st) st = launch();
    uint64_t first = 0;
    if (!st && !(st = sg_exec_update_wait(e, &first))) firsts->push_back(first);
    if (!st) st = launch();
    if (!st) st = sg_exec_wait(e);
    if (e) {
      sg_status w = sg_exec_wait(e);
      sg_status x = sg_exec_destroy(e);
      if (!st) st = w ? w : x;
    }
    return st;
  };
  uint64_t launches = 0;
  std::vector<uint64_t> firsts;
  SG_ASSERT_OK(run(&launches, &firsts));  // warm: the shared worker pool as it stays
  ASSERT_EQ(sgrebuild::check_log(vs.log, vs.v, firsts, launches), "");
  const long start = sg_live_allocations();
  unsigned long points = 0, failures = 0;
  for (unsigned long nth = 1; nth < 5000; nth++) {
    sgtest::Watchdog dog([nth] { std::fprintf(stderr, "fault %lu: hung\n", nth); }, 120);
    sg_fault_arm(SG_FAULT_ALLOC | SG_FAULT_SYSTEM, nth);
    sg_status st = run(&launches, &firsts);
    const int fired = sg_fault_fired();
    const std::string site = fired ? sg_fault_site() : "";
    sg_fault_arm(0, 0);
    dog.disarm();
    ASSERT_FALSE(dog.fired()) << "fault " << nth << " at " << site;
    ASSERT_EQ(sg_live_allocations(), start) << "leak with fault " << nth << " at " << site;
    if (!fired) {
      SG_ASSERT_OK(st);
      ASSERT_EQ(sgrebuild::check_log(vs.log, vs.v, firsts, launches), "");
      std::printf("%lu fault points, %lu reported as a failure\n", points, failures);
      ASSERT_GT(points, 10u);
      return;
    }
    points++;
    if (st) {
      failures++;
      ASSERT_STRNE(sg_last_error(), "") << "fault " << nth << " at " << site << ": no message";
    }
    // What ran, ran right: a failed launch logs nothing and stops the rest.
    std::lock_guard<std::mutex> l(vs.log.m);
    for (size_t i = 0; i < vs.log.entries.size(); i++) {
      const int want = sgrebuild::version_of(firsts, i + 1);
      ASSERT_EQ(vs.log.entries[i].first, want) << "fault " << nth << " at " << site;
      ASSERT_EQ(vs.log.entries[i].second, vs.v[want]->expect) << "fault " << nth << " at " << site;
    }
  }
  FAIL() << "the sweep never reached a run without a fault";
}

}  // namespace
