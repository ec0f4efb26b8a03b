// Rebuilds that never stall launches (sg_exec_update_async) on the host
// backend: launches racing the build, bitwise per launch against the
// version its number says it ran; failed builds; destruction mid-build;
// every allocation and thread call of the path failing in turn.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <random>
#include <thread>

#include "rebuild_race.h"

#include "exec/rebuild_hook.h"

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

// ---- the launch path never waits for the background thread ---------------
//
// A latch the build thread (through the test hook) or a host node blocks on
// until the test opens it: what happens meanwhile cannot have waited for
// it. Bounded, so that a wrong library fails the test instead of hanging.
struct Latch {
  std::mutex m;
  std::condition_variable cv;
  bool open = false;
  std::atomic<int> waiting{0};
  std::atomic<bool> timed_out{false};
  void block() {
    std::unique_lock<std::mutex> l(m);
    waiting++;
    if (!cv.wait_for(l, std::chrono::seconds(60), [this] { return open; })) timed_out = true;
    waiting--;
  }
  void release() {
    {
      std::lock_guard<std::mutex> l(m);
      open = true;
    }
    cv.notify_all();
  }
  // Until something blocks on the latch (bounded).
  bool await_blocked() {
    for (int i = 0; i < 60000 && waiting.load() == 0; i++)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return waiting.load() > 0;
  }
};

Latch *hook_latch;
std::atomic<int> hook_where{0};

void latch_hook(int where) {
  if (where == hook_where.load() && hook_latch) hook_latch->block();
}

// Installs the hook for one test, blocking the build thread at `where`.
struct HookGuard {
  explicit HookGuard(Latch *latch, int where) {
    hook_latch = latch;
    hook_where = where;
    sg__exec_rebuild_set_hook(latch_hook);
  }
  ~HookGuard() {
    sg__exec_rebuild_set_hook(nullptr);
    hook_where = 0;
  }
};

// The build held on its thread for about 300 ms: launches (each waited for)
// go on meanwhile, every one quick, and the query says not ready all along.
// A launch that waited for the build (its lock, its work) could not return
// before the latch opens.
TEST(ExecRebuild, LaunchesNeverWaitForTheBuild) {
  const uint32_t seed = fresh_seed();
  std::printf("seed %u\n", seed);
  Versions vs;
  SG_ASSERT_OK(vs.add(seed, 6));
  SG_ASSERT_OK(vs.add(seed + 1, 40));
  for (sg_exec_mode mode : {SG_MODE_STREAMS, SG_MODE_GRAPH}) {
    {
      std::lock_guard<std::mutex> l(vs.log.m);
      vs.log.entries.clear();
    }
    Latch latch;
    HookGuard hook(&latch, SG__REBUILD_HOOK_BUILD);
    sg_exec_options o = sgtest::host_options(2);
    o.mode = mode;
    sgtest::Exec e;
    SG_ASSERT_OK(sg_exec_create(vs.graph(0), &o, &e.e));
    SG_ASSERT_OK(sg_exec_update_async(e, vs.graph(1)));
    ASSERT_TRUE(latch.await_blocked());
    const auto t0 = std::chrono::steady_clock::now();
    double longest_ms = 0;
    uint64_t launched = 0;
    while (std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(300)) {
      const auto a = std::chrono::steady_clock::now();
      SG_ASSERT_OK(sg_exec_launch(e, nullptr));
      launched++;
      SG_ASSERT_OK(sg_exec_wait_launch(e, launched));
      longest_ms = std::max(
          longest_ms,
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - a).count());
      ASSERT_EQ(sg_exec_update_query(e, nullptr), SG_NOT_READY);
    }
    EXPECT_EQ(latch.waiting.load(), 1) << "the build went on while held";
    std::printf("%s: %llu launches while the build was held; longest launch + wait %.3f ms\n",
                mode == SG_MODE_GRAPH ? "graph" : "streams",
                static_cast<unsigned long long>(launched), longest_ms);
    EXPECT_GE(launched, 3u);
    EXPECT_LT(longest_ms, 150.0);  // generous: the build was held for 300 ms
    latch.release();
    uint64_t first = 0;
    SG_ASSERT_OK(sg_exec_update_wait(e, &first));
    EXPECT_EQ(first, launched + 1);
    SG_ASSERT_OK(sg_exec_launch(e, nullptr));
    SG_ASSERT_OK(sg_exec_wait(e));
    EXPECT_FALSE(latch.timed_out.load());
    EXPECT_EQ(sgrebuild::check_log(vs.log, vs.v, {1, first}, launched + 1), "");
  }
}

// A version whose one host node blocks on a latch, then logs `id`.
struct Blocking {
  Latch *latch = nullptr;
  std::mutex *m = nullptr;
  std::vector<int> *log = nullptr;
  int id = 0;
  static int run(void *p) {
    auto *b = static_cast<Blocking *>(p);
    if (b->latch) b->latch->block();
    std::lock_guard<std::mutex> l(*b->m);
    b->log->push_back(b->id);
    return 0;
  }
};

// The old version's launch in flight is held in a host node: the switch
// (sg_exec_update_wait, or the launch that finds the build ended) and the
// new version's launches return all the same, the waits say not ready, and
// once released every old launch ran before every new one.
TEST(ExecRebuild, TheSwitchNeverWaitsForTheOldVersionsLaunches) {
  for (int at_launch = 0; at_launch < 2; at_launch++) {
    for (sg_exec_mode mode : {SG_MODE_STREAMS, SG_MODE_GRAPH}) {
      sgtest::LeakCheck leaks;
      sgtest::Watchdog dog([] { std::fprintf(stderr, "switch test: hung\n"); }, 120);
      Latch latch;
      std::mutex m;
      std::vector<int> log;
      Blocking old_node{&latch, &m, &log, 0}, new_node{nullptr, &m, &log, 1};
      sgtest::Graph g0, g1;
      sg_host_desc h0 = {Blocking::run, &old_node, "old"};
      sg_host_desc h1 = {Blocking::run, &new_node, "new"};
      sg_node a{}, b{};
      SG_ASSERT_OK(sg_graph_add_host(g0, &h0, nullptr, 0, &a));
      SG_ASSERT_OK(sg_graph_add_host(g1, &h1, nullptr, 0, &b));
      SG_ASSERT_OK(sg_graph_add_empty(g1, "after", &b, 1, nullptr));
      sg_exec_options o = sgtest::host_options(1);
      o.mode = mode;
      sgtest::Exec e;
      SG_ASSERT_OK(sg_exec_create(g0, &o, &e.e));
      SG_ASSERT_OK(sg_exec_launch(e, nullptr));  // held in its host node
      ASSERT_TRUE(latch.await_blocked());
      SG_ASSERT_OK(sg_exec_update_async(e, g1));
      uint64_t launched = 1, first = 0;
      if (at_launch) {
        sg_status q;
        while ((q = sg_exec_update_query(e, &first)) == SG_NOT_READY) {
          SG_ASSERT_OK(sg_exec_launch(e, nullptr));  // old launches queue behind the held one
          launched++;
          ASSERT_LT(launched, 100000u);
          std::this_thread::sleep_for(std::chrono::microseconds(200));
        }
        SG_ASSERT_OK(q);
        EXPECT_EQ(first, launched);
      } else {
        SG_ASSERT_OK(sg_exec_update_wait(e, &first));
        EXPECT_EQ(first, 2u);
      }
      for (int i = 0; i < 3; i++) {
        SG_ASSERT_OK(sg_exec_launch(e, nullptr));
        launched++;
      }
      EXPECT_EQ(latch.waiting.load(), 1) << "the old launch was not held";
      EXPECT_EQ(sg_exec_query(e), SG_NOT_READY);
      EXPECT_EQ(sg_exec_query_launch(e, 1), SG_NOT_READY);
      EXPECT_EQ(sg_exec_query_launch(e, launched), SG_NOT_READY);
      {
        std::lock_guard<std::mutex> l(m);
        EXPECT_TRUE(log.empty()) << "a launch ran before the held one";
      }
      latch.release();
      SG_ASSERT_OK(sg_exec_wait_launch(e, first - 1));
      SG_ASSERT_OK(sg_exec_wait(e));
      EXPECT_EQ(sg_exec_query(e), SG_OK);
      dog.disarm();
      EXPECT_FALSE(latch.timed_out.load());
      std::lock_guard<std::mutex> l(m);
      ASSERT_EQ(log.size(), launched);
      for (uint64_t i = 0; i < launched; i++)
        EXPECT_EQ(log[i], i + 1 < first ? 0 : 1) << "launch " << i + 1 << " (first " << first
                                                 << ", " << (at_launch ? "at a launch" : "wait")
                                                 << ")";
    }
  }
}

// Freeing the retired version held on the build thread: launches, waits
// and queries of the new version go on; a synchronous update or the
// destruction waits for it.
TEST(ExecRebuild, RetirementNeverHoldsALaunch) {
  const uint32_t seed = fresh_seed();
  std::printf("seed %u\n", seed);
  Versions vs;
  SG_ASSERT_OK(vs.add(seed, 6));
  SG_ASSERT_OK(vs.add(seed + 1, 20));
  Latch latch;
  HookGuard hook(&latch, SG__REBUILD_HOOK_RETIRE);
  sg_exec_options o = sgtest::host_options(2);
  sg_exec *e = nullptr;
  SG_ASSERT_OK(sg_exec_create(vs.graph(0), &o, &e));
  SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  SG_ASSERT_OK(sg_exec_update_async(e, vs.graph(1)));
  uint64_t first = 0, launched = 1;
  sg_status q;
  while ((q = sg_exec_update_query(e, &first)) == SG_NOT_READY) {
    SG_ASSERT_OK(sg_exec_launch(e, nullptr));
    launched++;
    SG_ASSERT_OK(sg_exec_wait_launch(e, launched));
  }
  SG_ASSERT_OK(q);
  ASSERT_TRUE(latch.await_blocked());
  for (int i = 0; i < 20; i++) {
    SG_ASSERT_OK(sg_exec_launch(e, nullptr));
    launched++;
    SG_ASSERT_OK(sg_exec_wait_launch(e, launched));
    SG_ASSERT_OK(sg_exec_query_launch(e, launched));
  }
  SG_ASSERT_OK(sg_exec_wait(e));
  SG_ASSERT_OK(sg_exec_query(e));
  EXPECT_EQ(latch.waiting.load(), 1);
  latch.release();
  SG_ASSERT_OK(sg_exec_destroy(e));
  EXPECT_FALSE(latch.timed_out.load());
  EXPECT_EQ(sgrebuild::check_log(vs.log, vs.v, {1, first}, launched), "");
}

}  // namespace
