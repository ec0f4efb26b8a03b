// Planned temporaries (plan/memplan.h) on random DAGs and schedules: every
// packing is proved safe by the library's checker and, independently, by a
// search written here; the checker itself is shown to catch unsafe
// packings; reuse follows stream order where the schedule has it and graph
// reachability where it does not; and the peak stays near the lower bound.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <cstring>

#include "plan_check.h"

extern "C" {
#include "plan/memplan.h"
#include "plan/memplan_internal.h"
}

using plantest::Dag;
using plantest::Schedule;

namespace {

// A set of temporaries with their uses, as the graph would hold them.
struct Temps {
  std::vector<sg__temp> temps;
  std::vector<sg__access> acc;
  sg__access_table table() {
    sg__access_table t{};
    t.temps = temps.data();
    t.temp_count = t.temp_cap = (uint32_t)temps.size();
    t.acc = acc.data();
    t.count = t.cap = (uint32_t)acc.size();
    return t;
  }
  uint32_t add(size_t bytes, size_t align = 256) {
    temps.push_back(sg__temp{bytes, align, nullptr});
    return (uint32_t)temps.size() - 1;
  }
  void use(uint32_t temp, uint32_t node) {
    acc.push_back(sg__access{node, temp, 0, temps[temp].bytes, SG_ACCESS_READ_WRITE, 0});
  }
};

struct Plan {
  sg__memplan m{};
  ~Plan() { sg__memplan_free(&m); }
};

// Random temporaries shaped like activations: each is written by one node
// and read by one to three of the nodes that follow it in index order (the
// DAG may or may not order them), sizes spread over three decades.
Temps random_temps(std::mt19937 &rng, uint32_t n, uint32_t count) {
  Temps t;
  for (uint32_t k = 0; k < count; k++) {
    double exp = std::uniform_real_distribution<double>(8, 20)(rng);
    uint32_t k_t = t.add((size_t)std::pow(2.0, exp), (size_t)1 << (rng() % 9));
    uint32_t writer = rng() % n;
    t.use(k_t, writer);
    uint32_t readers = 1 + rng() % 3;
    for (uint32_t r = 0; r < readers; r++) {
      uint32_t span = 1 + rng() % std::max<uint32_t>(1, n / 8);
      t.use(k_t, std::min<uint32_t>(n - 1, writer + 1 + (uint32_t)(rng() % span)));
    }
  }
  return t;
}

// Happens-before of a schedule by search over its own edges, written here
// apart from the library's: bit (a, b) is set when a finishes before b
// starts.
std::vector<std::vector<bool>> closure(const sg__schedule &s, const Dag &d) {
  uint32_t n = s.node_count;
  std::vector<std::vector<uint32_t>> next(n);
  if (!s.streams_planned) {
    for (uint32_t u = 0; u < n; u++)
      for (uint32_t e = d.start[u]; e < d.start[u + 1]; e++) next[u].push_back(d.succ[e]);
  } else {
    for (uint32_t st = 0; st < s.stream_count; st++)
      for (uint32_t i = s.stream_start[st]; i + 1 < s.stream_start[st + 1]; i++)
        next[s.stream_nodes[i]].push_back(s.stream_nodes[i + 1]);
    for (uint32_t v = 0; v < n; v++)
      for (uint32_t w = s.wait_start[v]; w < s.wait_start[v + 1]; w++)
        next[s.event_node[s.wait_event[w]]].push_back(v);
  }
  std::vector<std::vector<bool>> hb(n, std::vector<bool>(n, false));
  for (uint32_t a = 0; a < n; a++) {
    std::vector<uint32_t> stack{a};
    while (!stack.empty()) {
      uint32_t v = stack.back();
      stack.pop_back();
      for (uint32_t w : next[v])
        if (!hb[a][w]) {
          hb[a][w] = true;
          stack.push_back(w);
        }
    }
  }
  return hb;
}

// Every pair of temporaries given overlapping bytes is ordered.
void expect_safe(const sg__schedule &s, const Dag &d, Temps &t, const sg__memplan &m,
                 const std::string &what) {
  auto hb = closure(s, d);
  std::vector<std::vector<uint32_t>> uses(t.temps.size());
  for (auto &a : t.acc) uses[a.temp].push_back(a.node);
  for (uint32_t a = 0; a < t.temps.size(); a++)
    for (uint32_t b = a + 1; b < t.temps.size(); b++) {
      size_t a0 = m.offset[a], a1 = a0 + t.temps[a].bytes;
      size_t b0 = m.offset[b], b1 = b0 + t.temps[b].bytes;
      if (uses[a].empty() || uses[b].empty() || a1 <= b0 || b1 <= a0) continue;
      bool ab = true, ba = true;
      for (uint32_t x : uses[a])
        for (uint32_t y : uses[b]) {
          ab = ab && hb[x][y];
          ba = ba && hb[y][x];
        }
      ASSERT_TRUE(ab || ba) << what << ": t" << a << " and t" << b << " share bytes unordered";
    }
  for (uint32_t k = 0; k < t.temps.size(); k++) {
    ASSERT_EQ(m.offset[k] % t.temps[k].alignment, 0u) << what << ": t" << k << " misaligned";
    ASSERT_LE(m.offset[k] + t.temps[k].bytes, m.arena_bytes) << what;
  }
}

TEST(Memplan, RandomPackingsAreSafeUnderStreamsAndUnderEdges) {
  uint32_t base = std::random_device{}();
  std::printf("Memplan.RandomPackings: seeds from %u\n", base);
  for (uint32_t i = 0; i < 300; i++) {
    uint32_t seed = base + i;
    std::mt19937 rng(seed);
    uint32_t n = 2 + rng() % 60;
    Dag d = plantest::random_dag(rng, n, std::uniform_real_distribution<double>(0, 0.3)(rng));
    Schedule s;
    ASSERT_EQ(plantest::build(d, 1 + rng() % 8, s), SG_OK) << sg_last_error();
    Temps t = random_temps(rng, n, 1 + rng() % 40);
    sg__access_table table = t.table();
    for (int dag_order = 0; dag_order < 2; dag_order++) {
      sg__schedule view = s.s;
      view.streams_planned = !dag_order;
      std::string what = "seed " + std::to_string(seed) + (dag_order ? " (edges)" : " (streams)");
      Plan p;
      ASSERT_EQ(sg__memplan_build(&view, d.start.data(), d.succ.data(), &table, 1, &p.m), SG_OK)
          << sg_last_error();
      ASSERT_EQ(sg__memplan_check(&view, d.start.data(), d.succ.data(), &table, &p.m), SG_OK)
          << what << ": " << sg_last_error();
      expect_safe(view, d, t, p.m, what);
      if (HasFatalFailure()) return;
      size_t bound = 0;
      ASSERT_EQ(sg__memplan_lower_bound(&view, d.start.data(), d.succ.data(), &table, &bound),
                SG_OK);
      ASSERT_LE(bound, p.m.arena_bytes) << what;
      ASSERT_LE(p.m.arena_bytes, p.m.no_reuse_bytes + 4096) << what;
    }
  }
}

// Past the greedy's limit only the sweep in issue order runs: the same
// proofs on graphs with more temporaries than that.
TEST(Memplan, SweepPackingsAreSafe) {
  uint32_t base = std::random_device{}();
  std::printf("Memplan.SweepPackingsAreSafe: seeds from %u\n", base);
  for (uint32_t i = 0; i < 3; i++) {
    uint32_t seed = base + i;
    std::mt19937 rng(seed);
    uint32_t n = 1300;
    Dag d = plantest::random_dag(rng, n, 3.0 / n, false);
    Schedule s;
    ASSERT_EQ(plantest::build(d, 1 + rng() % 8, s), SG_OK) << sg_last_error();
    Temps t = random_temps(rng, n, 1100 + rng() % 400);
    sg__access_table table = t.table();
    for (int dag_order = 0; dag_order < 2; dag_order++) {
      sg__schedule view = s.s;
      view.streams_planned = !dag_order;
      std::string what = "seed " + std::to_string(seed) + (dag_order ? " (edges)" : " (streams)");
      Plan p;
      ASSERT_EQ(sg__memplan_build(&view, d.start.data(), d.succ.data(), &table, 1, &p.m), SG_OK);
      ASSERT_EQ(p.m.algorithm, 2) << what;
      ASSERT_EQ(sg__memplan_check(&view, d.start.data(), d.succ.data(), &table, &p.m), SG_OK)
          << what << ": " << sg_last_error();
      expect_safe(view, d, t, p.m, what);
      if (HasFatalFailure()) return;
      ASSERT_LE(p.m.arena_bytes, p.m.no_reuse_bytes + p.m.no_reuse_bytes / 100) << what;
    }
  }
}

// Clocks over the edges: with every chain of the path cover tracked they
// know exactly what reaches each node; allowed fewer chains than that, they keep
// the longest chains and never claim an order the edges do not give.
TEST(Memplan, EdgeClocksAreExactOrSoundWhenCapped) {
  uint32_t base = std::random_device{}();
  std::printf("Memplan.EdgeClocks: seeds from %u\n", base);
  for (uint32_t i = 0; i < 100; i++) {
    uint32_t seed = base + i;
    std::mt19937 rng(seed);
    uint32_t n = 2 + rng() % 80;
    Dag d = plantest::random_dag(rng, n, std::uniform_real_distribution<double>(0, 0.2)(rng));
    Schedule s;
    ASSERT_EQ(plantest::build(d, 1 + rng() % 8, s), SG_OK) << sg_last_error();
    sg__schedule view = s.s;
    view.streams_planned = 0;
    auto reach = closure(view, d);
    for (uint32_t most : {0u, 1u, 2u, 5u, UINT32_MAX}) {
      std::string what = "seed " + std::to_string(seed) + ", chains " + std::to_string(most);
      sg__mp_clocks c;
      ASSERT_EQ(sg__mp_clocks_build_edges(&view, d.start.data(), d.succ.data(), most, &c), 0);
      EXPECT_LE(c.chains, c.width) << what;
      EXPECT_LE(c.width, std::max(1u, most)) << what;
      for (uint32_t u = 0; u < n; u++)
        for (uint32_t v = 0; v < n; v++) {
          const uint32_t cu = c.chain_of[u];
          const bool known = cu != UINT32_MAX && c.known[static_cast<size_t>(v) * c.width + cu] > c.pos[u];
          if (known) EXPECT_TRUE(reach[u][v]) << what << ": n" << u << " before n" << v;
          if (most == UINT32_MAX && u != v)
            EXPECT_EQ(known, static_cast<bool>(reach[u][v])) << what << ": n" << u << ", n" << v;
        }
      if (most == UINT32_MAX)
        for (uint32_t v = 0; v < n; v++) EXPECT_NE(c.chain_of[v], UINT32_MAX) << what;
      sg__mp_clocks_free(&c);
      if (HasFailure()) return;
    }
  }
}

TEST(Memplan, NoReuseGivesEachItsOwnBytes) {
  std::mt19937 rng(7);
  Dag d = plantest::random_dag(rng, 20, 0.2);
  Schedule s;
  ASSERT_EQ(plantest::build(d, 4, s), SG_OK);
  Temps t = random_temps(rng, 20, 15);
  sg__access_table table = t.table();
  Plan p;
  ASSERT_EQ(sg__memplan_build(&s.s, d.start.data(), d.succ.data(), &table, 0, &p.m), SG_OK);
  EXPECT_EQ(p.m.arena_bytes, p.m.no_reuse_bytes);
  for (uint32_t a = 0; a < 15; a++)
    for (uint32_t b = a + 1; b < 15; b++)
      EXPECT_TRUE(p.m.offset[a] + t.temps[a].bytes <= p.m.offset[b] ||
                  p.m.offset[b] + t.temps[b].bytes <= p.m.offset[a]);
}

// The checker is only worth something if it fails: two temporaries one
// node uses together, put at one offset.
TEST(Memplan, CheckerCatchesSharedBytesInUse) {
  Dag d(3, {{0, 1}, {1, 2}});
  Schedule s;
  ASSERT_EQ(plantest::build(d, 1, s), SG_OK);
  Temps t;
  uint32_t a = t.add(1024), b = t.add(1024);
  t.use(a, 1);
  t.use(b, 1);
  t.use(b, 2);
  sg__access_table table = t.table();
  Plan p;
  ASSERT_EQ(sg__memplan_build(&s.s, d.start.data(), d.succ.data(), &table, 1, &p.m), SG_OK);
  ASSERT_EQ(sg__memplan_check(&s.s, d.start.data(), d.succ.data(), &table, &p.m), SG_OK);
  EXPECT_EQ(p.m.arena_bytes, 2048u);
  p.m.offset[b] = p.m.offset[a] + 512;
  EXPECT_EQ(sg__memplan_check(&s.s, d.start.data(), d.succ.data(), &table, &p.m),
            SG_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::strstr(sg_last_error(), "t0"), nullptr) << sg_last_error();
}

// Two independent nodes the plan puts on one stream run one after the
// other: their temporaries share bytes. A CUDA graph built from the edges
// alone may run them together: they do not.
TEST(Memplan, StreamOrderAllowsReuseThatEdgesDoNot) {
  Dag d(2, {});
  Schedule s;
  ASSERT_EQ(plantest::build(d, 1, s), SG_OK);
  ASSERT_EQ(s->stream_count, 1u);
  Temps t;
  t.use(t.add(4096), 0);
  t.use(t.add(4096), 1);
  sg__access_table table = t.table();
  Plan streams, edges;
  ASSERT_EQ(sg__memplan_build(&s.s, d.start.data(), d.succ.data(), &table, 1, &streams.m), SG_OK);
  EXPECT_EQ(streams.m.arena_bytes, 4096u);
  sg__schedule view = s.s;
  view.streams_planned = 0;
  ASSERT_EQ(sg__memplan_build(&view, d.start.data(), d.succ.data(), &table, 1, &edges.m), SG_OK);
  EXPECT_EQ(edges.m.arena_bytes, 8192u);
  EXPECT_EQ(edges.m.dag_order, 1);
}

// A chain reuses one slot over and over (ping-pong between two buffers).
TEST(Memplan, ChainNeedsTwoSlots) {
  const uint32_t n = 50;
  plantest::Edges e;
  for (uint32_t v = 0; v + 1 < n; v++) e.emplace_back(v, v + 1);
  Dag d(n, e);
  Schedule s;
  ASSERT_EQ(plantest::build(d, 8, s), SG_OK);
  Temps t;
  for (uint32_t v = 0; v + 1 < n; v++) {  // written by v, read by v + 1
    uint32_t k = t.add(1000, 8);
    t.use(k, v);
    t.use(k, v + 1);
  }
  sg__access_table table = t.table();
  Plan p;
  ASSERT_EQ(sg__memplan_build(&s.s, d.start.data(), d.succ.data(), &table, 1, &p.m), SG_OK);
  EXPECT_EQ(p.m.arena_bytes, 2000u);
  size_t bound = 0;
  ASSERT_EQ(sg__memplan_lower_bound(&s.s, d.start.data(), d.succ.data(), &table, &bound), SG_OK);
  EXPECT_EQ(bound, 2000u);
}

// Quality on larger random problems: the peak against the lower bound
// (docs/buffers.md and the bench report the figures; this guards against
// a regression far past them).
TEST(Memplan, PeakNearTheLowerBound) {
  uint32_t base = std::random_device{}();
  std::printf("Memplan.PeakNearTheLowerBound: seeds from %u\n", base);
  for (uint32_t temps : {10u, 100u, 1000u}) {
    std::mt19937 rng(base + temps);
    uint32_t n = temps;
    Dag d = plantest::random_dag(rng, n, 4.0 / n, false);
    Schedule s;
    ASSERT_EQ(plantest::build(d, 8, s), SG_OK);
    Temps t = random_temps(rng, n, temps);
    sg__access_table table = t.table();
    Plan p;
    ASSERT_EQ(sg__memplan_build(&s.s, d.start.data(), d.succ.data(), &table, 1, &p.m), SG_OK);
    size_t bound = 0;
    ASSERT_EQ(sg__memplan_lower_bound(&s.s, d.start.data(), d.succ.data(), &table, &bound),
              SG_OK);
    double ratio = (double)p.m.arena_bytes / (double)bound;
    std::printf("  %u temporaries: peak %zu, bound %zu (%.3fx), no reuse %zu, algorithm %d\n",
                temps, p.m.arena_bytes, bound, ratio, p.m.no_reuse_bytes, p.m.algorithm);
    EXPECT_LE(ratio, 1.25) << "seed " << base + temps;
  }
}

}  // namespace
