// Rebuilds that never stall launches (sg_exec_update_async) on the GPU, in
// every execution way: launches racing the build of a new topology (plan,
// graph, instantiation, upload on the build thread), each launch's bytes
// bitwise against the version its number says it ran; a build failing in
// a CUDA call leaves the current version running; every CUDA call of the
// background path failing in turn; destruction mid-build.
#include <chrono>
#include <cstring>
#include <mutex>
#include <random>
#include <thread>

#include "gpu_util.h"
#include "rebuild_race.h"

namespace {

using gputest::ModeTest;

uint32_t fresh_seed() { return std::random_device{}(); }

class Rebuild : public ModeTest {};

TEST_P(Rebuild, LaunchesRaceTheBuild) {
  for (uint64_t ahead : {0u, 4u}) {
    sgrebuild::race(SG_BACKEND_CUDA, options(1 + fresh_seed() % 8), fresh_seed(), 5, 8, 1000,
                    ahead);
    if (HasFatalFailure()) return;
  }
}

TEST_P(Rebuild, TracedLaunchesRaceTheBuild) {
  sg_exec_options o = options(4);
  o.trace = 1;
  sgrebuild::race(SG_BACKEND_CUDA, o, fresh_seed(), 3, 16, 256, 2);
}

// The longest sg_exec_launch while a 1000-node topology builds, against
// building it in place with sg_exec_update (printed; bench/launch_bench
// holds the target).
TEST_P(Rebuild, LaunchStallWhileA1000NodeTopologyBuilds) {
  const uint32_t seed = fresh_seed();
  std::printf("seed %u\n", seed);
  sgrebuild::Log log;
  sgrebuild::Version small, large;
  small.backend = large.backend = SG_BACKEND_CUDA;
  small.log = large.log = &log;
  large.id = 1;
  SG_ASSERT_OK(small.build(seed, 8, 0.1));
  SG_ASSERT_OK(large.build(seed + 1, 1000, 0.01));
  sg_exec_options o = options(4);
  sgtest::Exec e;
  SG_ASSERT_OK(sg_exec_create(small.graph, &o, &e.e));
  auto now = [] { return std::chrono::steady_clock::now(); };
  SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  SG_ASSERT_OK(sg_exec_wait(e));
  SG_ASSERT_OK(sg_exec_update_async(e, large.graph));
  double longest = 0;
  uint64_t first = 0, launches = 1;
  sg_status q;
  while ((q = sg_exec_update_query(e, &first)) == SG_NOT_READY) {
    auto t0 = now();
    SG_ASSERT_OK(sg_exec_launch(e, nullptr));
    longest = std::max(longest, std::chrono::duration<double, std::milli>(now() - t0).count());
    launches++;
    SG_ASSERT_OK(sg_exec_wait(e));
  }
  SG_ASSERT_OK(q);
  SG_ASSERT_OK(sg_exec_update(e, small.graph));  // back, in place: the stall it replaces
  auto t0 = now();
  SG_ASSERT_OK(sg_exec_update(e, large.graph));
  const double in_place = std::chrono::duration<double, std::milli>(now() - t0).count();
  std::printf("%s: longest launch while building 1000 nodes %.3f ms (%llu launches); "
              "sg_exec_update in place %.3f ms\n",
              GetParam().name, longest, static_cast<unsigned long long>(launches), in_place);
  SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  SG_ASSERT_OK(sg_exec_wait(e));
}

// The old version's launch in flight spins for 200 ms on the GPU: the switch
// (at a launch, or by sg_exec_update_wait) and the new version's first
// launch return long before it ends, since the new version is ordered after
// it on the GPU, not waited for; every old launch's host node runs before
// every new one's. The new version also goes into a caller's stream while
// the old one ran in its own (graph mode: the handover event).
TEST_P(Rebuild, SwitchDoesNotWaitForTheOldLaunches) {
  struct Rec {
    std::mutex *m;
    std::vector<int> *log;
    int id;
    static int run(void *p) {
      auto *r = static_cast<Rec *>(p);
      std::lock_guard<std::mutex> l(*r->m);
      r->log->push_back(r->id);
      return 0;
    }
  };
  using clock = std::chrono::steady_clock;
  auto ms_since = [](clock::time_point t) {
    return std::chrono::duration<double, std::milli>(clock::now() - t).count();
  };
  for (int caller = 0; caller < 2; caller++) {
    for (int at_launch = 0; at_launch < 2; at_launch++) {
      std::mutex m;
      std::vector<int> log;
      Rec r0{&m, &log, 0}, r1{&m, &log, 1};
      sgtest::Graph g0, g1;
      sg_kernel_call slow, quick;
      sg_kernels_spin(&slow, 200u * 1000 * 1000);
      sg_kernels_spin(&quick, 1000);
      sg_host_desc h0 = {Rec::run, &r0, "old"}, h1 = {Rec::run, &r1, "new"};
      sg_node a{}, b{}, c{};
      SG_ASSERT_OK(sg_graph_add_kernel(g0, &slow.desc, nullptr, 0, &a));
      SG_ASSERT_OK(sg_graph_add_host(g0, &h0, &a, 1, nullptr));
      SG_ASSERT_OK(sg_graph_add_kernel(g1, &quick.desc, nullptr, 0, &b));
      SG_ASSERT_OK(sg_graph_add_empty(g1, "between", &b, 1, &c));
      SG_ASSERT_OK(sg_graph_add_host(g1, &h1, &c, 1, nullptr));
      cudaStream_t stream = nullptr;
      if (caller) CUDA_ASSERT(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
      sg_exec_options o = options(2);
      sgtest::Exec e;
      SG_ASSERT_OK(sg_exec_create(g0, &o, &e.e));
      const auto started = clock::now();
      SG_ASSERT_OK(sg_exec_launch(e, nullptr));
      SG_ASSERT_OK(sg_exec_update_async(e, g1));
      uint64_t launched = 1, first = 0;
      double switch_ms = 0;
      if (at_launch) {
        sg_status q;
        while ((q = sg_exec_update_query(e, &first)) == SG_NOT_READY) {
          const auto t = clock::now();
          SG_ASSERT_OK(sg_exec_launch(e, stream));
          switch_ms = ms_since(t);
          launched++;
          ASSERT_LT(launched, 20u) << "the build outlasted 20 launches";
          std::this_thread::sleep_for(std::chrono::milliseconds(2));
        }
        SG_ASSERT_OK(q);
        EXPECT_EQ(first, launched);
      } else {
        SG_ASSERT_OK(sg_exec_update_wait(e, &first));
        EXPECT_EQ(first, 2u);
        const auto t = clock::now();
        SG_ASSERT_OK(sg_exec_launch(e, stream));
        switch_ms = ms_since(t);
        launched++;
      }
      const double since_start = ms_since(started);
      std::printf("%s%s: switch launch %.3f ms, %.1f ms after the 200 ms launch began\n",
                  at_launch ? "at a launch" : "sg_exec_update_wait", caller ? ", caller's stream" : "",
                  switch_ms, since_start);
      EXPECT_LT(switch_ms, 100.0) << "the switch waited for the old version's launch";
      if (since_start < 150.0) EXPECT_EQ(sg_exec_query(e), SG_NOT_READY);
      SG_ASSERT_OK(sg_exec_launch(e, stream));
      launched++;
      SG_ASSERT_OK(sg_exec_wait(e));
      if (stream) {
        CUDA_ASSERT(cudaStreamSynchronize(stream));
        CUDA_ASSERT(cudaStreamDestroy(stream));
      }
      std::lock_guard<std::mutex> l(m);
      ASSERT_EQ(log.size(), launched);
      for (uint64_t i = 0; i < launched; i++)
        EXPECT_EQ(log[i], i + 1 < first ? 0 : 1) << "launch " << i + 1 << ", first " << first;
    }
  }
}

// A build failing in a CUDA call (graph mode: the instantiation; streams
// mode: a stream's creation) leaves the current version running.
TEST_P(Rebuild, FailedBuildKeepsTheCurrentVersion) {
  const uint32_t seed = fresh_seed();
  std::printf("seed %u\n", seed);
  sgrebuild::Log log;
  std::vector<std::unique_ptr<sgrebuild::Version>> v;
  for (int i = 0; i < 2; i++) {
    v.emplace_back(new sgrebuild::Version);
    v[i]->id = i;
    v[i]->log = &log;
    v[i]->backend = SG_BACKEND_CUDA;
    SG_ASSERT_OK(v[i]->build(seed + i, i ? 60 : 6, 0.1));
  }
  sg_exec_options o = options(3);
  sg_exec *e = nullptr;
  SG_ASSERT_OK(sg_exec_create(v[0]->graph, &o, &e));
  SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  SG_ASSERT_OK(sg_exec_wait(e));
  sg_fault_arm_site(SG_FAULT_CUDA, graph_mode() ? "cuda/graph_mode.c:build_one"
                                                  : "cuda/cuda_streams.c:make_streams", 1);
  SG_ASSERT_OK(sg_exec_update_async(e, v[1]->graph));
  for (int i = 0; i < 3; i++) SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  sg_status st = sg_exec_update_wait(e, nullptr);
  const int fired = sg_fault_fired();
  const std::string site = sg_fault_site();
  sg_fault_arm(0, 0);
  if (!fired) { /* the executable goes before the graphs its build reads */
    sg_exec_destroy(e);
    FAIL() << "no CUDA call of the build at that site";
  }
  EXPECT_NE(st, SG_OK) << site;
  EXPECT_NE(std::strstr(sg_last_error(), "sg_exec_update_async"), nullptr) << sg_last_error();
  SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  SG_ASSERT_OK(sg_exec_update_async(e, v[1]->graph));
  uint64_t first = 0;
  SG_ASSERT_OK(sg_exec_update_wait(e, &first));
  EXPECT_EQ(first, 6u);
  SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  SG_ASSERT_OK(sg_exec_wait(e));
  SG_ASSERT_OK(sg_exec_destroy(e));
  EXPECT_EQ(sgrebuild::check_log(log, v, {1, 6}, 6), "");
}

// Every CUDA call, allocation and thread call of the scenario fails in
// turn: a status with a message, nothing hung, and every launch that ran
// made its version's bytes.
TEST_P(Rebuild, EveryFaultOnTheBackgroundPathComesBackCleanly) {
  const uint32_t seed = fresh_seed();
  std::printf("seed %u\n", seed);
  sgrebuild::Log log;
  std::vector<std::unique_ptr<sgrebuild::Version>> v;
  for (int i = 0; i < 2; i++) {
    v.emplace_back(new sgrebuild::Version);
    v[i]->id = i;
    v[i]->log = &log;
    v[i]->backend = SG_BACKEND_CUDA;
    SG_ASSERT_OK(v[i]->build(seed + i, i ? 7 : 4, 0.2));
  }
  const sg_exec_options o = options(2);
  uint64_t launches = 0;
  std::vector<uint64_t> firsts;
  auto run = [&]() -> sg_status {
    {
      std::lock_guard<std::mutex> l(log.m);
      log.entries.clear();
    }
    launches = 0;
    firsts = {1};
    sg_exec *e = nullptr;
    sg_status st = sg_exec_create(v[0]->graph, &o, &e);
    auto launch = [&] {
      sg_status s = sg_exec_launch(e, nullptr);
      if (!s) launches++;
      return s;
    };
    if (!st) st = launch();
    if (!st) st = sg_exec_update_async(e, v[1]->graph);
    if (!st) st = launch();
    uint64_t first = 0;
    if (!st && !(st = sg_exec_update_wait(e, &first))) firsts.push_back(first);
    if (!st) st = launch();
    if (!st) st = sg_exec_wait(e);
    if (e) {
      sg_status w = sg_exec_wait(e);
      sg_status x = sg_exec_destroy(e);
      if (!st) st = w ? w : x;
    }
    return st;
  };
  SG_ASSERT_OK(run());
  unsigned long points = 0;
  for (unsigned long nth = 1; nth < 5000; nth++) {
    sgtest::Watchdog dog([nth] { std::fprintf(stderr, "fault %lu: hung\n", nth); }, 120);
    sg_fault_arm(SG_FAULT_ALL, nth);
    sg_status st = run();
    const int fired = sg_fault_fired();
    const std::string site = fired ? sg_fault_site() : "";
    sg_fault_arm(0, 0);
    dog.disarm();
    ASSERT_FALSE(dog.fired()) << "fault " << nth << " at " << site;
    if (!fired) {
      SG_ASSERT_OK(st);
      ASSERT_EQ(sgrebuild::check_log(log, v, firsts, launches), "");
      std::printf("%lu fault points\n", points);
      return;
    }
    points++;
    if (st) ASSERT_STRNE(sg_last_error(), "") << "fault " << nth << " at " << site;
    std::lock_guard<std::mutex> l(log.m);
    for (size_t i = 0; i < log.entries.size(); i++) {
      const int want = sgrebuild::version_of(firsts, i + 1);
      ASSERT_EQ(log.entries[i].first, want) << "fault " << nth << " at " << site;
      ASSERT_EQ(log.entries[i].second, v[want]->expect) << "fault " << nth << " at " << site;
    }
  }
  FAIL() << "the sweep never reached a run without a fault";
}

TEST_P(Rebuild, DestroyWhileABuildIsInFlight) {
  const uint32_t seed = fresh_seed();
  std::printf("seed %u\n", seed);
  sgrebuild::Log log;
  sgrebuild::Version small, large;
  small.backend = large.backend = SG_BACKEND_CUDA;
  small.log = large.log = &log;
  SG_ASSERT_OK(small.build(seed, 6, 0.1));
  SG_ASSERT_OK(large.build(seed + 1, 500, 0.02));
  std::mt19937 rng(seed);
  for (int round = 0; round < 12; round++) {
    sg_exec_options o = options(1 + round % 4);
    sg_exec *e = nullptr;
    SG_ASSERT_OK(sg_exec_create(small.graph, &o, &e));
    SG_ASSERT_OK(sg_exec_launch(e, nullptr));
    SG_ASSERT_OK(sg_exec_update_async(e, large.graph));
    std::this_thread::sleep_for(std::chrono::microseconds(rng() % 20000));
    if (round % 3 == 1) SG_ASSERT_OK(sg_exec_launch(e, nullptr));
    SG_ASSERT_OK(sg_exec_destroy(e));
  }
}

INSTANTIATE_TEST_SUITE_P(Cuda, Rebuild, ::testing::ValuesIn(gputest::all_modes()),
                         gputest::mode_name);

}  // namespace
