// The host backend really runs independent branches at the same time, keeps
// FIFO order on one stream, and runs launches of one executable in order.
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "sg_test_util.h"

namespace {

// Each party announces itself and waits (bounded) until all have arrived:
// this can only succeed if every party runs at the same time.
struct Rendezvous {
  int parties;
  std::atomic<int> arrived{0};
  std::atomic<int> met{0};
  std::chrono::milliseconds patience;
};

int meet(void *p) {
  Rendezvous *r = static_cast<Rendezvous *>(p);
  r->arrived.fetch_add(1);
  auto deadline = std::chrono::steady_clock::now() + r->patience;
  while (r->arrived.load() < r->parties) {
    if (std::chrono::steady_clock::now() > deadline) return 0;  // did not meet; not an error
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  r->met.fetch_add(1);
  return 0;
}

void build_fan(sg_graph *g, Rendezvous *r, int width) {
  sg_host_desc h = {meet, r, nullptr};
  for (int i = 0; i < width; i++) SG_ASSERT_OK(sg_graph_add_host(g, &h, nullptr, 0, nullptr));
}

TEST(HostConcurrency, IndependentBranchesOverlap) {
  for (int width : {2, 4, 8}) {
    Rendezvous r{width, {0}, {0}, std::chrono::seconds(20)};
    sgtest::Graph g;
    build_fan(g, &r, width);
    sg_exec_options o = sgtest::host_options(8);
    sgtest::Exec e;
    SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
    SG_ASSERT_OK(sg_exec_launch(e, nullptr));
    SG_ASSERT_OK(sg_exec_wait(e));
    EXPECT_EQ(r.met.load(), width) << "branches of a fan of " << width << " did not overlap";
  }
}

// Tracks how many nodes run at once.
struct Occupancy {
  std::atomic<int> running{0};
  std::atomic<int> most{0};
};
int occupy(void *p) {
  Occupancy *o = static_cast<Occupancy *>(p);
  int now = o->running.fetch_add(1) + 1;
  int most = o->most.load();
  while (now > most && !o->most.compare_exchange_weak(most, now)) {
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  o->running.fetch_sub(1);
  return 0;
}

TEST(HostConcurrency, OneStreamIsFifo) {
  Occupancy occ;
  sgtest::Graph g;
  sg_host_desc h = {occupy, &occ, nullptr};
  for (int i = 0; i < 4; i++) SG_ASSERT_OK(sg_graph_add_host(g, &h, nullptr, 0, nullptr));
  sg_exec_options o = sgtest::host_options(1);
  sgtest::Exec e;
  SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
  SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  SG_ASSERT_OK(sg_exec_wait(e));
  EXPECT_EQ(occ.most.load(), 1) << "two nodes of one stream ran at the same time";
}

// Launch k's nodes must all start after launch k-1's nodes have all ended.
struct Stamp {
  std::atomic<int> *clock;
  std::vector<int> starts, ends;
  int work(void) {
    starts.push_back(clock->fetch_add(1));
    std::this_thread::sleep_for(std::chrono::microseconds(300));
    ends.push_back(clock->fetch_add(1));
    return 0;
  }
};
int stamp(void *p) { return static_cast<Stamp *>(p)->work(); }

TEST(HostConcurrency, LaunchesOfOneExecutableDoNotOverlap) {
  std::atomic<int> clock{0};
  std::vector<Stamp> stamps(6, Stamp{&clock, {}, {}});
  sgtest::Graph g;
  for (auto &s : stamps) {
    sg_host_desc h = {stamp, &s, nullptr};
    SG_ASSERT_OK(sg_graph_add_host(g, &h, nullptr, 0, nullptr));
  }
  sg_exec_options o = sgtest::host_options(6);
  sgtest::Exec e;
  SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
  const int launches = 20;
  for (int i = 0; i < launches; i++) SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  SG_ASSERT_OK(sg_exec_wait(e));
  for (int k = 1; k < launches; k++) {
    int latest_end = 0, earliest_start = 1 << 30;
    for (auto &s : stamps) {
      latest_end = std::max(latest_end, s.ends[k - 1]);
      earliest_start = std::min(earliest_start, s.starts[k]);
    }
    EXPECT_GT(earliest_start, latest_end) << "launch " << k << " overlapped launch " << k - 1;
  }
}

TEST(HostConcurrency, SeveralExecutablesRunConcurrently) {
  Rendezvous r{2, {0}, {0}, std::chrono::seconds(20)};
  sgtest::Graph g;
  build_fan(g, &r, 1);
  sg_exec_options o = sgtest::host_options();
  sgtest::Exec a, b;
  SG_ASSERT_OK(sg_exec_create(g, &o, &a.e));
  SG_ASSERT_OK(sg_exec_create(g, &o, &b.e));
  SG_ASSERT_OK(sg_exec_launch(a, nullptr));
  SG_ASSERT_OK(sg_exec_launch(b, nullptr));
  SG_ASSERT_OK(sg_exec_wait(a));
  SG_ASSERT_OK(sg_exec_wait(b));
  EXPECT_EQ(r.met.load(), 2);
}

TEST(HostConcurrency, ManyThreadsLaunchTheirOwnExecutables) {
  std::atomic<int> count{0};
  sgtest::Graph g;
  sg_host_desc h = {[](void *p) {
                      static_cast<std::atomic<int> *>(p)->fetch_add(1);
                      return 0;
                    },
                    &count, nullptr};
  sg_node a{};
  SG_ASSERT_OK(sg_graph_add_host(g, &h, nullptr, 0, &a));
  SG_ASSERT_OK(sg_graph_add_host(g, &h, &a, 1, nullptr));
  SG_ASSERT_OK(sg_graph_add_host(g, &h, &a, 1, nullptr));
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; t++)
    threads.emplace_back([&] {
      sg_exec_options o = sgtest::host_options();
      sg_exec *e = nullptr;
      ASSERT_EQ(sg_exec_create(g, &o, &e), SG_OK);
      for (int i = 0; i < 50; i++) ASSERT_EQ(sg_exec_launch(e, nullptr), SG_OK);
      ASSERT_EQ(sg_exec_wait(e), SG_OK);
      ASSERT_EQ(sg_exec_destroy(e), SG_OK);
    });
  for (auto &t : threads) t.join();
  EXPECT_EQ(count.load(), 4 * 50 * 3);
}

}  // namespace
