// The host backend's threads are one process-wide pool (src/host/host_pool.h):
// a base sized to the machine, shared by every executable, grown while
// every thread is held by a node that waits (a host node) and work is
// queued, and shrunk again when idle. A stream waiting for another stream's
// event gives its thread back, so wide launches of many executables at once
// never starve.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "sg_test_util.h"
extern "C" {
#include "host/host_pool.h"
}

namespace {

// Threads of this process, as the kernel counts them.
int process_threads() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("Threads:", 0) == 0) return std::stoi(line.substr(8));
  return -1;
}

int cpus() { return std::max(1, static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN))); }

// Each party announces itself and waits (bounded) until all have arrived:
// this succeeds only if every party runs at the same time.
struct Rendezvous {
  int parties = 0;
  std::atomic<int> arrived{0};
  std::atomic<int> met{0};
};

int meet(void *p) {
  auto *r = static_cast<Rendezvous *>(p);
  r->arrived.fetch_add(1);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (r->arrived.load() < r->parties) {
    if (std::chrono::steady_clock::now() > deadline) return 0;  // counted as not met
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  r->met.fetch_add(1);
  return 0;
}

int count_up(void *p) {
  static_cast<std::atomic<int> *>(p)->fetch_add(1);
  return 0;
}

// root -> `width` branches -> join; the branches run on `width` streams and
// wait for the root's event (a cross-stream wait holding a thread).
void build_fan(sg_graph *g, int width, sg_host_fn branch, void *data, sg_host_fn ends,
               void *ends_data) {
  sg_node root, join;
  sg_host_desc h = {ends, ends_data, "root"};
  SG_ASSERT_OK(sg_graph_add_host(g, &h, nullptr, 0, &root));
  std::vector<sg_node> branches(width);
  h = {branch, data, "branch"};
  for (int i = 0; i < width; i++)
    SG_ASSERT_OK(sg_graph_add_host(g, &h, &root, 1, &branches[i]));
  h = {ends, ends_data, "join"};
  SG_ASSERT_OK(sg_graph_add_host(g, &h, branches.data(), branches.size(), &join));
}

TEST(HostPool, SixtyFourExecutablesOfAnEightWideGraphShareThePoolsThreads) {
  const int before = process_threads();
  ASSERT_GT(before, 0);
  std::atomic<int> branches{0}, ends{0};
  sgtest::Graph g;
  build_fan(g, 8, count_up, &branches, count_up, &ends);
  sg_exec_options o = sgtest::host_options(8);
  std::vector<sg_exec *> execs(64, nullptr);
  for (auto &e : execs) SG_ASSERT_OK(sg_exec_create(g, &o, &e));
  sg_exec_info info;
  SG_ASSERT_OK(sg_exec_get_info(execs[0], &info));
  ASSERT_EQ(info.stream_count, 8u);
  for (int round = 0; round < 3; round++)
    for (auto e : execs) SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  const int during = process_threads();
  for (auto e : execs) SG_ASSERT_OK(sg_exec_wait(e));
  const int after = process_threads();
  for (auto e : execs) SG_ASSERT_OK(sg_exec_destroy(e));
  EXPECT_EQ(branches.load(), 64 * 3 * 8);
  EXPECT_EQ(ends.load(), 64 * 3 * 2);
  // Nodes that return at once never hold every thread for long: the pool
  // stays near its base (it may grow by a few on a loaded machine, where a
  // thread can be descheduled for the stall time; never past its cap).
  // (+2: a sanitizer's runtime may start threads of its own meanwhile.)
  const int allowed = static_cast<int>(sg__host_pool_cap()) + 2;
  EXPECT_LE(during - before, allowed) << "threads before " << before << ", during " << during;
  EXPECT_LE(after - before, allowed) << "threads before " << before << ", after " << after;
  EXPECT_LT(after, 64 * 8) << "one thread per stream per executable";
  // The threads beyond the base end once idle.
  sg__host_pool_trim();
  EXPECT_TRUE(sgtest::poll_until(
      [] { return sg__host_pool_threads() <= static_cast<unsigned>(cpus()); }, 30))
      << sg__host_pool_threads() << " threads";
}

// Many launches as wide as the pool, in flight together, each needing all
// its branches at once, with every branch first waiting for the root's
// event: a pool that let threads block on tasks still queued behind them
// would make the branches miss each other (and a real program hang).
TEST(HostPool, WideLaunchesOfManyExecutablesAtOnceDoNotStarve) {
  const int width = 8;
  const int count = 24;
  std::atomic<int> ends{0};
  std::vector<std::unique_ptr<Rendezvous>> meets;
  std::vector<sgtest::Graph> graphs(count);
  std::vector<sg_exec *> execs(count, nullptr);
  sg_exec_options o = sgtest::host_options(width);
  for (int i = 0; i < count; i++) {
    meets.emplace_back(new Rendezvous);
    meets.back()->parties = width;
    build_fan(graphs[i], width, meet, meets.back().get(), count_up, &ends);
    SG_ASSERT_OK(sg_exec_create(graphs[i], &o, &execs[i]));
  }
  for (auto e : execs) SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  for (auto e : execs) SG_ASSERT_OK(sg_exec_wait(e));
  for (int i = 0; i < count; i++) {
    EXPECT_EQ(meets[i]->met.load(), width) << "executable " << i << ": branches did not meet";
    SG_EXPECT_OK(sg_exec_destroy(execs[i]));
  }
  EXPECT_EQ(ends.load(), count * 2);
}

// Branches that wait for each other (host nodes that hold their threads)
// grow the pool to the plan's width, and do run at the same time.
TEST(HostPool, APlanWiderThanTheMachineGrowsThePool) {
  const int width = std::max(cpus(), 8) + 24;
  const int before = process_threads();
  Rendezvous r;
  r.parties = width;
  std::atomic<int> ends{0};
  sgtest::Graph g;
  build_fan(g, width, meet, &r, count_up, &ends);
  sg_exec_options o = sgtest::host_options(static_cast<unsigned>(width));
  sgtest::Exec e;
  SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
  SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  SG_ASSERT_OK(sg_exec_wait(e));
  EXPECT_EQ(r.met.load(), width);
  EXPECT_LE(process_threads() - before, width + 2);  // +2: as above
}

}  // namespace
