// The rule that turns a stamped launch's stamps into node times
// (exec/trace_stamps.h): the captured graph whose empty node stamps before
// its predecessor, then random DAGs and schedules with random stamps,
// out-of-order ones included, against the trace's invariants and a
// brute-force fixed point of the rule's definition.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "../plan/plan_check.h"

extern "C" {
#include "exec/trace_stamps.h"
}

using plantest::Dag;
using plantest::Edges;
using plantest::Schedule;

namespace {

struct Times {
  std::vector<uint64_t> start, end;
};

Times derive(const sg__schedule &s, bool stream_order, uint64_t t0,
             const std::vector<uint64_t> &stamp) {
  Times t{std::vector<uint64_t>(s.node_count, 0xA5A5A5A5A5A5A5A5ull),
          std::vector<uint64_t>(s.node_count, 0xA5A5A5A5A5A5A5A5ull)};
  sg__trace_stamps_times(&s, stream_order, t0, stamp.data(), t.start.data(), t.end.data());
  return t;
}

// What node v waited for, from the DAG itself (every edge, not only the
// reduced ones) and, with stream order, from the schedule's streams (every
// node before v in its stream) and event waits.
std::vector<std::vector<uint32_t>> waited_for(const Dag &d, const sg__schedule &s,
                                              bool stream_order) {
  std::vector<std::vector<uint32_t>> w(d.n);
  for (auto &e : d.edges()) w[e.second].push_back(e.first);
  if (stream_order && s.streams_planned)
    for (uint32_t v = 0; v < d.n; v++) {
      const uint32_t *nodes = s.stream_nodes + s.stream_start[s.stream_of[v]];
      for (uint32_t p = 0; p < s.position[v]; p++) w[v].push_back(nodes[p]);
      for (uint32_t k = s.wait_start[v]; k < s.wait_start[v + 1]; k++)
        w[v].push_back(s.event_node[s.wait_event[k]]);
    }
  return w;
}

// The definition, as a fixed point reached by sweeping every node in index
// order (not the issue order) until nothing changes.
Times brute_force(const std::vector<std::vector<uint32_t>> &w, uint64_t t0,
                  const std::vector<uint64_t> &stamp) {
  const size_t n = w.size();
  Times t{std::vector<uint64_t>(n, t0), std::vector<uint64_t>(n, 0)};
  for (size_t v = 0; v < n; v++) t.end[v] = std::max(stamp[v], t0);
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t v = 0; v < n; v++) {
      uint64_t start = t0;
      for (uint32_t u : w[v]) start = std::max(start, t.end[u]);
      uint64_t end = std::max(stamp[v], start);
      if (start != t.start[v] || end != t.end[v]) changed = true;
      t.start[v] = start;
      t.end[v] = end;
    }
  }
  return t;
}

// The Workload of gpu_trace_test after its rebuild: upload (0) -> four
// kernels (1-4); a memset (5); a host check (6) after 1-5; download (7);
// an empty join (8); a host node (9) after the join.
Dag rebuilt_workload() {
  return Dag(10, {{0, 1}, {0, 2}, {0, 3}, {0, 4}, {1, 6}, {2, 6}, {3, 6}, {4, 6}, {5, 6},
                  {6, 7}, {7, 8}, {8, 9}});
}

// A captured graph holds no node for an empty node, so the join's stamp
// waits only for the download itself, not for the download's stamp, and
// can read earlier than it (2464 ns earlier here). The join then ends when
// the download does, and the host node after it starts no earlier.
TEST(TraceStamps, EmptyNodeStampedBeforeItsPredecessor) {
  Dag d = rebuilt_workload();
  for (bool stream_order : {true, false}) {
    SCOPED_TRACE(stream_order ? "captured (stream order binds)" : "explicit");
    Schedule s;
    ASSERT_EQ(plantest::build(d, 0, s), SG_OK) << sg_last_error();
    const uint64_t t0 = 5000000000ull;
    std::vector<uint64_t> stamp = {t0 + 352000, t0 + 401000, t0 + 402500, t0 + 401700,
                                   t0 + 403900, t0 + 6100,   t0 + 456300, t0 + 811200,
                                   0,           0};
    stamp[8] = stamp[7] - 2464;
    stamp[9] = stamp[8] + 22000;
    Times t = derive(s.s, stream_order, t0, stamp);
    EXPECT_EQ(t.start[8], stamp[7]);
    EXPECT_EQ(t.end[8], stamp[7]) << "the join ends when its predecessor does";
    EXPECT_EQ(t.start[9], stamp[7]) << "the host node starts after the join's end";
    EXPECT_EQ(t.end[9], stamp[9]);
    EXPECT_GE(t.start[9], t.end[8]);
    for (uint32_t v = 0; v < 8; v++) EXPECT_EQ(t.end[v], stamp[v]) << "node " << v;
    EXPECT_EQ(t.start[0], t0);
    EXPECT_EQ(t.start[5], t0);
    EXPECT_EQ(t.start[6], stamp[4]) << "the latest of its predecessors' ends";
  }
}

// A chain whose stamps all read backwards: every end is raised to the
// first node's, and so is every start after it.
TEST(TraceStamps, RaisedEndsCarryDownAChain) {
  const uint32_t n = 6;
  Edges edges;
  for (uint32_t v = 0; v + 1 < n; v++) edges.emplace_back(v, v + 1);
  Dag d(n, edges);
  Schedule s;
  ASSERT_EQ(plantest::build(d, 0, s), SG_OK) << sg_last_error();
  const uint64_t t0 = 1000;
  std::vector<uint64_t> stamp(n);
  for (uint32_t v = 0; v < n; v++) stamp[v] = t0 + 900 - 100 * v;
  Times t = derive(s.s, true, t0, stamp);
  EXPECT_EQ(t.start[0], t0);
  for (uint32_t v = 0; v < n; v++) {
    EXPECT_EQ(t.end[v], t0 + 900) << "node " << v;
    if (v) EXPECT_EQ(t.start[v], t0 + 900) << "node " << v;
  }
}

// No nodes: nothing is read or written.
TEST(TraceStamps, EmptySchedule) {
  sg__schedule s{};
  sg__trace_stamps_times(&s, 1, 7, nullptr, nullptr, nullptr);
}

// 400 random DAGs and schedules (full plans under random stream limits,
// plans on several devices, edge-only plans as the explicit build defers
// streams), each with random stamps: some in order, some anywhere in a
// window (most of them out of order), some below the first stamp.
TEST(TraceStamps, RandomSchedulesKeepEveryOrder) {
  size_t raised_ends_seen = 0;  // the inputs must exercise the case the rule is for
  for (uint32_t seed = 1; seed <= 400; seed++) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937 rng(seed * 2654435761u);
    const uint32_t n = 1 + rng() % 24;
    const double p = std::uniform_real_distribution<double>(0.0, 0.5)(rng);
    Dag d = plantest::random_dag(rng, n, p);
    Schedule s;
    const int kind = int(rng() % 4);
    const unsigned limit = 1 + rng() % 4;
    sg_status st;
    if (kind == 0) {
      st = sg__schedule_build_edges(d.n, d.start.data(), d.succ.data(), limit, &s.s);
    } else if (kind == 1) {
      std::vector<uint32_t> device(n);
      for (uint32_t &dv : device) dv = rng() % 2;
      bool both = false;
      for (uint32_t dv : device) both |= dv == 1;
      st = sg__schedule_build_devices(d.n, d.start.data(), d.succ.data(), device.data(),
                                      both ? 2 : 1, limit, nullptr, &s.s);
    } else {
      st = plantest::build(d, limit, s);
    }
    ASSERT_EQ(st, SG_OK) << sg_last_error();
    ASSERT_EQ(s->node_count, n);
    const bool stream_order = rng() % 2;

    const uint64_t t0 = 1000000 + rng() % 1000;
    std::vector<uint64_t> stamp(n);
    const int style = int(rng() % 3);
    std::uniform_int_distribution<uint64_t> window(0, 100000);
    if (style == 0) {
      // Roughly in issue order with a jitter that reorders neighbours.
      uint64_t at = t0;
      for (uint32_t k = 0; k < n; k++) {
        at += 1000 + rng() % 5000;
        stamp[s->order[k]] = at - rng() % 8000;
      }
    } else {
      for (uint64_t &x : stamp) x = t0 + window(rng);
      if (style == 2)
        for (uint64_t &x : stamp)
          if (rng() % 5 == 0) x = t0 - 1 - rng() % 500;
    }

    Times t = derive(s.s, stream_order, t0, stamp);
    // The same with the ends written over the stamps, as the CUDA reader
    // calls it.
    std::vector<uint64_t> in_place = stamp, start2(n);
    sg__trace_stamps_times(&s.s, stream_order, t0, in_place.data(), start2.data(),
                           in_place.data());
    EXPECT_EQ(start2, t.start);
    EXPECT_EQ(in_place, t.end);

    for (uint32_t v = 0; v < n; v++) {
      EXPECT_GE(t.start[v], t0) << "node " << v;
      EXPECT_GE(t.end[v], t.start[v]) << "node " << v;
      EXPECT_GE(t.end[v], stamp[v]) << "node " << v;
      raised_ends_seen += t.end[v] > stamp[v] && t.start[v] > t0;
    }
    for (auto &e : d.edges())
      EXPECT_GE(t.start[e.second], t.end[e.first])
          << "node " << e.second << " starts before its predecessor " << e.first << " ends";
    if (stream_order && s->streams_planned)
      for (uint32_t v = 0; v < n; v++)
        if (s->position[v] > 0) {
          uint32_t prev = s->stream_nodes[s->stream_start[s->stream_of[v]] + s->position[v] - 1];
          EXPECT_GE(t.start[v], t.end[prev]) << "node " << v << " after " << prev << " in stream";
        }
    Times want = brute_force(waited_for(d, s.s, stream_order), t0, stamp);
    EXPECT_EQ(t.start, want.start);
    EXPECT_EQ(t.end, want.end);
    if (HasFailure()) return;
  }
  EXPECT_GT(raised_ends_seen, 400u);
}

}  // namespace
