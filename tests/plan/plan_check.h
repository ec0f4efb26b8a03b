// Helpers for the planner tests: DAGs as edge lists, reference answers
// computed independently of the library (reachability by bitsets, width by
// branch and bound over antichains, Kuhn's matching on the closure), and a
// checker that replays a schedule and verifies every promise of
// src/plan/schedule.h.
#ifndef SG_PLAN_CHECK_H
#define SG_PLAN_CHECK_H

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

extern "C" {
#include "plan/schedule_build.h"
#include "plan/schedule_check.h"
}
#include "streamgraph/streamgraph.h"
#include "streamgraph/testing.h"

namespace plantest {

using Edges = std::vector<std::pair<uint32_t, uint32_t>>;

// A DAG in the planner's input form (successors ascending, distinct).
struct Dag {
  uint32_t n = 0;
  std::vector<uint32_t> start{0}, succ;
  Dag() = default;
  Dag(uint32_t nodes, Edges edges) : n(nodes) {
    std::sort(edges.begin(), edges.end());
    edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
    start.assign(n + 1, 0);
    for (auto &e : edges) start[e.first + 1]++;
    for (uint32_t v = 0; v < n; v++) start[v + 1] += start[v];
    for (auto &e : edges) succ.push_back(e.second);
  }
  size_t edge_count() const { return succ.size(); }
  Edges edges() const {
    Edges out;
    for (uint32_t u = 0; u < n; u++)
      for (uint32_t e = start[u]; e < start[u + 1]; e++) out.emplace_back(u, succ[e]);
    return out;
  }
};

// Owns a schedule.
struct Schedule {
  sg__schedule s{};
  Schedule() = default;
  ~Schedule() { sg__schedule_free(&s); }
  Schedule(const Schedule &) = delete;
  Schedule &operator=(const Schedule &) = delete;
  sg__schedule *operator->() { return &s; }
  const sg__schedule *operator->() const { return &s; }
};

inline sg_status build(const Dag &d, unsigned max_streams, Schedule &out,
                       const sg__plan_limits *limits = nullptr) {
  sg__plan_limits def;
  sg__plan_limits_default(&def);
  return sg__schedule_build_ex(d.n, d.start.data(), d.succ.data(), max_streams,
                               limits ? limits : &def, &out.s);
}

// Strict reachability as bitsets (any n; used for small graphs).
struct Reach {
  uint32_t n = 0, words = 0;
  std::vector<uint64_t> bits;
  explicit Reach(uint32_t nodes) : n(nodes), words((nodes + 63) / 64), bits((size_t)nodes * words) {}
  uint64_t *row(uint32_t u) { return &bits[(size_t)u * words]; }
  const uint64_t *row(uint32_t u) const { return &bits[(size_t)u * words]; }
  bool get(uint32_t u, uint32_t v) const { return (row(u)[v / 64] >> (v % 64)) & 1; }
  void set(uint32_t u, uint32_t v) { row(u)[v / 64] |= uint64_t{1} << (v % 64); }
  bool operator==(const Reach &o) const { return bits == o.bits; }
};

// Closure of a graph given as adjacency lists, which must be acyclic; nodes
// are processed by a DFS post-order computed here (no trust in the library).
inline Reach closure(uint32_t n, const std::vector<std::vector<uint32_t>> &adj) {
  Reach r(n);
  std::vector<int> state(n, 0);
  std::vector<uint32_t> post;
  for (uint32_t root = 0; root < n; root++) {
    if (state[root]) continue;
    std::vector<std::pair<uint32_t, size_t>> stack{{root, 0}};
    state[root] = 1;
    while (!stack.empty()) {
      auto &[u, i] = stack.back();
      if (i < adj[u].size()) {
        uint32_t v = adj[u][i++];
        if (!state[v]) {
          state[v] = 1;
          stack.emplace_back(v, 0);
        }
      } else {
        post.push_back(u);
        stack.pop_back();
      }
    }
  }
  for (uint32_t u : post)  // successors come first in post-order
    for (uint32_t v : adj[u]) {
      r.set(u, v);
      for (uint32_t k = 0; k < r.words; k++) r.row(u)[k] |= r.row(v)[k];
    }
  return r;
}

inline std::vector<std::vector<uint32_t>> adjacency(const Dag &d) {
  std::vector<std::vector<uint32_t>> adj(d.n);
  for (auto &e : d.edges()) adj[e.first].push_back(e.second);
  return adj;
}

// Width of the nodes in `subset` (their largest antichain in the DAG's
// order, paths through other nodes included), by branch and bound (n <= 64).
inline uint32_t brute_width_of(const Dag &d, uint64_t subset) {
  Reach r = closure(d.n, adjacency(d));
  std::vector<uint64_t> free_with(d.n, 0);  // nodes incomparable with v
  for (uint32_t u = 0; u < d.n; u++)
    for (uint32_t v = 0; v < d.n; v++)
      if (u != v && !r.get(u, v) && !r.get(v, u)) free_with[u] |= uint64_t{1} << v;
  uint32_t best = 0;
  std::vector<std::pair<uint64_t, uint32_t>> todo{{subset, 0}};
  while (!todo.empty()) {
    auto [cand, size] = todo.back();
    todo.pop_back();
    if (size + (uint32_t)__builtin_popcountll(cand) <= best) continue;
    if (!cand) {
      best = size;
      continue;
    }
    uint32_t v = (uint32_t)__builtin_ctzll(cand);
    uint64_t rest = cand & ~(1ull << v);
    todo.emplace_back(rest, size);
    todo.emplace_back(rest & free_with[v], size + 1);
  }
  return best;
}

// Width by branch and bound over antichains (n <= 64).
inline uint32_t brute_width(const Dag &d) {
  return brute_width_of(d, d.n == 64 ? ~0ull : (1ull << d.n) - 1);
}

// Width by Kuhn's augmenting paths on the closure (n up to a few hundred).
struct Kuhn {
  const Reach &r;
  std::vector<int64_t> mate;  // right v -> left u, or -1
  std::vector<char> seen;
  const std::vector<char> *in = nullptr;  // nodes taking part (all when null)
  explicit Kuhn(const Reach &reach) : r(reach), mate(reach.n, -1), seen(reach.n, 0) {}
  bool augment(uint32_t u) {
    for (uint32_t v = 0; v < r.n; v++) {
      if (!r.get(u, v) || seen[v] || (in && !(*in)[v])) continue;
      seen[v] = 1;
      if (mate[v] < 0 || augment((uint32_t)mate[v])) {
        mate[v] = u;
        return true;
      }
    }
    return false;
  }
};

inline uint32_t matching_width(const Dag &d) {
  Reach r = closure(d.n, adjacency(d));
  Kuhn k(r);
  uint32_t matched = 0;
  for (uint32_t u = 0; u < d.n; u++) {
    std::fill(k.seen.begin(), k.seen.end(), 0);
    matched += k.augment(u);
  }
  return d.n - matched;
}

// The same for the nodes with in[v] set (the closure still of the whole DAG).
inline uint32_t matching_width_of(const Dag &d, const std::vector<char> &in) {
  Reach r = closure(d.n, adjacency(d));
  Kuhn k(r);
  k.in = &in;
  uint32_t matched = 0, count = 0;
  for (uint32_t u = 0; u < d.n; u++) {
    if (!in[u]) continue;
    count++;
    std::fill(k.seen.begin(), k.seen.end(), 0);
    matched += k.augment(u);
  }
  return count - matched;
}

// Longest path in nodes.
inline size_t longest_path(const Dag &d) {
  std::vector<size_t> len(d.n, 1);
  // edges go from lower to higher in a topological order found by Kahn
  std::vector<uint32_t> indeg(d.n, 0), q;
  for (uint32_t v : d.succ) indeg[v]++;
  for (uint32_t v = 0; v < d.n; v++)
    if (!indeg[v]) q.push_back(v);
  size_t best = d.n ? 1 : 0;
  for (size_t h = 0; h < q.size(); h++) {
    uint32_t u = q[h];
    for (uint32_t e = d.start[u]; e < d.start[u + 1]; e++) {
      uint32_t v = d.succ[e];
      len[v] = std::max(len[v], len[u] + 1);
      best = std::max(best, len[v]);
      if (--indeg[v] == 0) q.push_back(v);
    }
  }
  return best;
}

struct CheckOptions {
  bool closures = true;    // compare reachability (n up to a few thousand)
  bool minimality = true;  // prove each wait necessary (one closure per wait: n small)
  // each node's device when the DAG was planned on several (else all on one)
  const std::vector<uint32_t> *devices = nullptr;
};

inline sg_status build_devices(const Dag &d, const std::vector<uint32_t> &devices,
                               uint32_t device_count, unsigned max_streams, Schedule &out,
                               const sg__plan_limits *limits = nullptr) {
  return sg__schedule_build_devices(d.n, d.start.data(), d.succ.data(), devices.data(),
                                    device_count, max_streams, limits, &out.s);
}

// Checks every promise of a schedule for DAG d planned under `limit`.
inline void check_schedule(const Dag &d, const sg__schedule &s, unsigned limit,
                           CheckOptions opt = {}) {
  const uint32_t n = d.n;
  ASSERT_EQ(s.node_count, n);
  ASSERT_EQ(s.max_streams, limit);
  if (n == 0) {
    EXPECT_EQ(s.stream_count, 0u);
    EXPECT_EQ(s.event_count, 0u);
    return;
  }
  ASSERT_GE(s.stream_count, 1u);
  ASSERT_LE(s.stream_count, s.chain_count);
  // the library's own check (plan/schedule_check.h) passes it, whenever the
  // schedule is within its limits
  int checked = 0;
  ASSERT_EQ(sg__schedule_check(&s, d.start.data(), d.succ.data(), &checked), SG_OK)
      << sg_last_error();
  const uint64_t cells = (uint64_t(s.stream_count) + s.event_count + 1) * s.stream_count;
  const uint64_t steps = (uint64_t(n) + s.wait_count) * s.stream_count;
  EXPECT_EQ(checked, cells <= SG__SCHEDULE_CHECK_CELLS && steps <= SG__SCHEDULE_CHECK_STEPS);
  // devices: every stream on one device, its nodes all there, the limit per device
  uint32_t devices = 1;
  if (opt.devices) {
    ASSERT_EQ(opt.devices->size(), n);
    for (uint32_t dev : *opt.devices) devices = std::max(devices, dev + 1);
  }
  ASSERT_GE(s.device_count, devices);
  std::vector<uint32_t> per_device(s.device_count, 0);
  for (uint32_t k = 0; k < s.stream_count; k++) {
    ASSERT_LT(s.stream_device[k], s.device_count);
    per_device[s.stream_device[k]]++;
    for (uint32_t at = s.stream_start[k]; at < s.stream_start[k + 1]; at++) {
      uint32_t dev = opt.devices ? (*opt.devices)[s.stream_nodes[at]] : 0;
      ASSERT_EQ(s.stream_device[k], dev) << "stream " << k << " crosses devices";
    }
  }
  for (uint32_t count : per_device) ASSERT_LE(count, limit) << "a device over the limit";
  // the limit binds exactly when chains were merged
  const bool merged = s.stream_count < s.chain_count;

  // order: a permutation, topological
  std::vector<uint32_t> rank(n, UINT32_MAX);
  for (uint32_t i = 0; i < n; i++) {
    ASSERT_LT(s.order[i], n);
    ASSERT_EQ(rank[s.order[i]], UINT32_MAX) << "node twice in order";
    rank[s.order[i]] = i;
  }
  for (auto &e : d.edges()) ASSERT_LT(rank[e.first], rank[e.second]) << "order not topological";

  // streams: layout consistent, each stream in issue order
  ASSERT_EQ(s.stream_start[0], 0u);
  ASSERT_EQ(s.stream_start[s.stream_count], n);
  for (uint32_t k = 0; k < s.stream_count; k++) {
    ASSERT_LT(s.stream_start[k], s.stream_start[k + 1]) << "empty stream " << k;
    for (uint32_t at = s.stream_start[k]; at < s.stream_start[k + 1]; at++) {
      uint32_t v = s.stream_nodes[at];
      ASSERT_LT(v, n);
      ASSERT_EQ(s.stream_of[v], k);
      ASSERT_EQ(s.position[v], at - s.stream_start[k]);
      if (at > s.stream_start[k]) {
        ASSERT_LT(rank[s.stream_nodes[at - 1]], rank[v]);
      }
    }
  }
  // streams numbered by their first node's issue rank
  for (uint32_t k = 1; k < s.stream_count; k++)
    ASSERT_LT(rank[s.stream_nodes[s.stream_start[k - 1]]], rank[s.stream_nodes[s.stream_start[k]]]);

  // events: each recorded by exactly one node, waited for at least once
  std::vector<int> recorded_by(s.event_count, -1), waits_on(s.event_count, 0);
  uint32_t recorders = 0;
  for (uint32_t v = 0; v < n; v++) {
    int32_t ev = s.record_event[v];
    if (ev < 0) continue;
    ASSERT_LT((uint32_t)ev, s.event_count);
    ASSERT_EQ(recorded_by[ev], -1);
    recorded_by[ev] = (int)v;
    ASSERT_EQ(s.event_node[ev], v);
    recorders++;
  }
  ASSERT_EQ(recorders, s.event_count);
  ASSERT_EQ(s.wait_start[0], 0u);
  ASSERT_EQ(s.wait_start[n], s.wait_count);
  for (uint32_t v = 0; v < n; v++) {
    ASSERT_LE(s.wait_start[v], s.wait_start[v + 1]);
    for (uint32_t k = s.wait_start[v]; k < s.wait_start[v + 1]; k++) {
      uint32_t ev = s.wait_event[k];
      ASSERT_LT(ev, s.event_count);
      uint32_t u = s.event_node[ev];
      ASSERT_LT(rank[u], rank[v]) << "a wait enqueued before its record";
      ASSERT_NE(s.stream_of[u], s.stream_of[v]) << "a wait on the node's own stream";
      waits_on[ev]++;
    }
  }
  for (uint32_t ev = 0; ev < s.event_count; ev++) ASSERT_GT(waits_on[ev], 0) << "unused event";

  // reduced edges: a subset of the edges, ascending
  ASSERT_EQ(s.red_start[0], 0u);
  ASSERT_EQ(s.red_start[n], s.reduced_edge_count);
  std::vector<std::vector<uint32_t>> red(n);
  for (uint32_t u = 0; u < n; u++)
    for (uint32_t e = s.red_start[u]; e < s.red_start[u + 1]; e++) {
      uint32_t v = s.red_succ[e];
      ASSERT_TRUE(std::binary_search(d.succ.begin() + d.start[u], d.succ.begin() + d.start[u + 1], v));
      if (e > s.red_start[u]) {
        ASSERT_LT(s.red_succ[e - 1], v);
      }
      red[u].push_back(v);
    }
  EXPECT_EQ(s.critical_path, longest_path(d));
  EXPECT_GE(s.plan_critical_path, s.critical_path);
  if (!merged) {
    EXPECT_EQ(s.plan_critical_path, s.critical_path);
  }
  if (!opt.closures) return;

  // the plan graph: stream order and waits
  std::vector<std::vector<uint32_t>> plan(n);
  for (uint32_t k = 0; k < s.stream_count; k++)
    for (uint32_t at = s.stream_start[k] + 1; at < s.stream_start[k + 1]; at++)
      plan[s.stream_nodes[at - 1]].push_back(s.stream_nodes[at]);
  for (uint32_t v = 0; v < n; v++)
    for (uint32_t k = s.wait_start[v]; k < s.wait_start[v + 1]; k++)
      plan[s.event_node[s.wait_event[k]]].push_back(v);
  Reach dag_reach = closure(n, adjacency(d));
  Reach plan_reach = closure(n, plan);
  for (auto &e : d.edges())
    ASSERT_TRUE(plan_reach.get(e.first, e.second))
        << "edge " << e.first << "->" << e.second << " not implied by the plan";
  if (!merged) {
    ASSERT_TRUE(plan_reach == dag_reach) << "the plan orders nodes the DAG leaves independent";
  }
  // the reduced graph keeps the reachability, and an exact reduction keeps no implied edge
  ASSERT_TRUE(closure(n, red) == dag_reach) << "the reduction changed reachability";
  if (s.reduction_exact) {
    for (uint32_t u = 0; u < n; u++)
      for (uint32_t v : red[u])
        for (uint32_t w : red[u])
          ASSERT_FALSE(w != v && dag_reach.get(w, v))
              << "reduced edge " << u << "->" << v << " is implied via " << w;
  }
  // no two independent nodes share a stream when the limit does not bind
  if (!merged) {
    for (uint32_t k = 0; k < s.stream_count; k++)
      for (uint32_t at = s.stream_start[k] + 1; at < s.stream_start[k + 1]; at++)
        ASSERT_TRUE(dag_reach.get(s.stream_nodes[at - 1], s.stream_nodes[at]));
  }
  // minimality: every wait is necessary (without it, its source no longer reaches its node)
  if (s.waits_exact && opt.minimality)
    for (uint32_t v = 0; v < n; v++)
      for (uint32_t k = s.wait_start[v]; k < s.wait_start[v + 1]; k++) {
        uint32_t u = s.event_node[s.wait_event[k]];
        auto without = plan;
        auto &list = without[u];
        list.erase(std::find(list.begin(), list.end(), v));
        ASSERT_FALSE(closure(n, without).get(u, v))
            << "wait of " << v << " on " << u << " is implied by the others";
      }
}

// Random DAG with edges from lower to higher index (then relabelled by a
// random permutation so index order is not topological).
inline Dag random_dag(std::mt19937 &rng, uint32_t n, double p, bool shuffle = true) {
  std::vector<uint32_t> label(n);
  for (uint32_t i = 0; i < n; i++) label[i] = i;
  if (shuffle) std::shuffle(label.begin(), label.end(), rng);
  std::uniform_real_distribution<double> coin(0.0, 1.0);
  Edges edges;
  for (uint32_t v = 1; v < n; v++)
    for (uint32_t u = 0; u < v; u++)
      if (coin(rng) < p) edges.emplace_back(label[u], label[v]);
  return Dag(n, edges);
}

}  // namespace plantest

#endif
