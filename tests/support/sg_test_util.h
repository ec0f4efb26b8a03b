// Shared helpers for the streamgraph tests: random DAGs, a serial reference
// for "mixing" DAGs, and small RAII guards. Tests call the C API as users do.
#ifndef SG_TEST_UTIL_H
#define SG_TEST_UTIL_H

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
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
