// Shared helpers for the streamgraph tests: random DAGs, a serial reference
// for "mixing" DAGs, and small RAII guards. Tests call the C API as users do.
#ifndef SG_TEST_UTIL_H
#define SG_TEST_UTIL_H

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <random>
#include <thread>
#include <utility>
#include <vector>

#include "streamgraph/streamgraph.h"
#include "streamgraph/testing.h"

// ASSERT/EXPECT that a call returned SG_OK, printing the error message if not.
#define SG_ASSERT_OK(expr)                                                               \
  do {                                                                                   \
    sg_status sg_test_st_ = (expr);                                                      \
    ASSERT_EQ(sg_test_st_, SG_OK) << sg_status_name(sg_test_st_) << ": " << sg_last_error(); \
  } while (0)
#define SG_EXPECT_OK(expr)                                                               \
  do {                                                                                   \
    sg_status sg_test_st_ = (expr);                                                      \
    EXPECT_EQ(sg_test_st_, SG_OK) << sg_status_name(sg_test_st_) << ": " << sg_last_error(); \
  } while (0)

namespace sgtest {

// Owns a graph for the length of a test.
struct Graph {
  sg_graph *g = nullptr;
  Graph() { EXPECT_EQ(sg_graph_create(&g), SG_OK); }
  ~Graph() {
    if (g) sg_graph_destroy(g);
  }
  Graph(const Graph &) = delete;
  Graph &operator=(const Graph &) = delete;
  operator sg_graph *() const { return g; }
};

// Owns an executable for the length of a test.
struct Exec {
  sg_exec *e = nullptr;
  Exec() = default;
  ~Exec() {
    if (e) sg_exec_destroy(e);
  }
  Exec(const Exec &) = delete;
  Exec &operator=(const Exec &) = delete;
  operator sg_exec *() const { return e; }
};

// Calls `cond` until it returns true or `seconds` have passed; returns
// whether it did. For waiting on another thread's progress: the limit is
// wall-clock time, not a number of tries, and far above what a sanitizer
// build on a loaded machine needs, so only a real hang reaches it (and
// fails the test instead of hanging it).
template <typename Cond>
bool poll_until(Cond cond, double seconds = 60) {
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (!cond()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  return true;
}

// Guards a stretch of a test in which a call under test could hang: if the
// stretch has not ended (disarm()) within `seconds`, `rescue` runs on the
// watchdog's thread (it opens whatever the hung call waits for), and
// fired() says so. Leaving the scope without disarm() (a failed ASSERT)
// rescues at once, so that nothing the test holds closed outlives it.
class Watchdog {
 public:
  explicit Watchdog(std::function<void()> rescue, double seconds = 60)
      : rescue_(std::move(rescue)), thread_([this, seconds] {
          std::unique_lock<std::mutex> l(m_);
          if (!cv_.wait_for(l, std::chrono::duration<double>(seconds), [this] { return ended_; }))
            rescue_once(true);
        }) {}
  ~Watchdog() { end(true); }
  Watchdog(const Watchdog &) = delete;
  Watchdog &operator=(const Watchdog &) = delete;
  void disarm() { end(false); }
  bool fired() const { return fired_; }

 private:
  void end(bool rescue) {
    {
      std::unique_lock<std::mutex> l(m_);
      if (!ended_ && rescue) rescue_once(false);
      ended_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }
  // Called with m_ held.
  void rescue_once(bool timed_out) {
    if (rescued_) return;
    rescued_ = true;
    fired_ = timed_out;
    rescue_();
  }
  std::function<void()> rescue_;
  std::mutex m_;
  std::condition_variable cv_;
  bool ended_ = false, rescued_ = false, fired_ = false;
  std::thread thread_;  // last: starts once the members above exist
};

// A gate a host node waits at (wait_fn, with the gate as user data) until
// the test opens it; set(false) closes it again for a later launch.
struct HostGate {
  std::mutex m;
  std::condition_variable cv;
  bool open = false;
  void set(bool value) {
    std::lock_guard<std::mutex> l(m);
    open = value;
    cv.notify_all();
  }
  void release() { set(true); }
  static int wait_fn(void *p) {
    auto *g = static_cast<HostGate *>(p);
    std::unique_lock<std::mutex> l(g->m);
    g->cv.wait(l, [g] { return g->open; });
    return 0;
  }
};

// Every test program gives the default pinned pool's idle slabs back when
// its tests are done, as a program should before it exits, so that a leak
// checker (compute-sanitizer --leak-check full, tools/gpu-check) finds
// nothing the library still holds.
class ReleaseAtExit : public ::testing::Environment {
 public:
  void TearDown() override { sg_pinned_pool_trim(nullptr); }
};
inline ::testing::Environment *const release_at_exit =
    ::testing::AddGlobalTestEnvironment(new ReleaseAtExit);

inline sg_exec_options host_options(unsigned max_streams = 0) {
  sg_exec_options o;
  sg_exec_options_init(&o);
  o.backend = SG_BACKEND_HOST;
  o.max_streams = max_streams;
  return o;
}

// A random DAG on n nodes whose edges go from lower to higher index, so
// index order is a topological order. Edges as (from, to) pairs.
inline std::vector<std::pair<uint32_t, uint32_t>> random_dag(std::mt19937 &rng, uint32_t n,
                                                             double edge_probability) {
  std::vector<std::pair<uint32_t, uint32_t>> edges;
  std::uniform_real_distribution<double> coin(0.0, 1.0);
  for (uint32_t v = 1; v < n; v++)
    for (uint32_t u = 0; u < v; u++)
      if (coin(rng) < edge_probability) edges.emplace_back(u, v);
  return edges;
}

// predecessors[v] from an edge list.
inline std::vector<std::vector<uint32_t>> predecessors(
    uint32_t n, const std::vector<std::pair<uint32_t, uint32_t>> &edges) {
  std::vector<std::vector<uint32_t>> preds(n);
  for (auto &e : edges) preds[e.second].push_back(e.first);
  return preds;
}

// Counts live library allocations at construction and checks at the end.
struct LeakCheck {
  long start = sg_live_allocations();
  ~LeakCheck() { EXPECT_EQ(sg_live_allocations(), start) << "library allocations leaked"; }
};

}  // namespace sgtest

#endif
