// Programmatic edges in the plan (SG_KERNEL_PROGRAMMATIC): a kernel that
// opted in is marked when every reduced edge into it comes from a kernel of
// its device. Random DAGs of every node kind and two devices against a
// brute-force reference (transitive reduction by reachability); the DOT;
// sg_exec_set_kernel refusing a change of the flag; the host backend running
// opted-in kernels exactly as others.
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "sg_test_util.h"
#include "streamgraph/kernels.h"

namespace {

void noop_twin(const sg_kernel_launch *, void *const *) {}

sg_kernel_desc kernel(bool programmatic) {
  sg_kernel_desc d;
  std::memset(&d, 0, sizeof d);
  d.grid = {1, 1, 1};
  d.block = {1, 1, 1};
  d.host_twin = noop_twin;
  d.flags = programmatic ? SG_KERNEL_PROGRAMMATIC : 0u;
  return d;
}

enum Kind { kKernelIn, kKernelOut, kEmpty, kHost };

int host_fn(void *) { return 0; }

TEST(PlanProgrammatic, RandomDagsMatchTheReference) {
  const uint32_t base = std::random_device{}();
  std::printf("seed %u\n", base);
  size_t marked = 0;
  for (uint32_t round = 0; round < 300; round++) {
    const uint32_t seed = base + round;
    std::mt19937 rng(seed);
    const uint32_t n = 1 + rng() % 24;
    const double p = (rng() % 100) / 250.0;
    auto edges = sgtest::random_dag(rng, n, p);
    std::vector<int> kind(n), device(n);
    sgtest::Graph g;
    std::vector<sg_node> h(n);
    auto preds = sgtest::predecessors(n, edges);
    for (uint32_t v = 0; v < n; v++) {
      kind[v] = rng() % 8 < 5 ? (rng() % 4 ? kKernelIn : kKernelOut) : (rng() % 2 ? kEmpty : kHost);
      device[v] = rng() % 5 == 0 ? 1 : 0;
      std::vector<sg_node> deps;
      for (uint32_t u : preds[v]) deps.push_back(h[u]);
      const uint32_t nd = static_cast<uint32_t>(deps.size());
      if (kind[v] == kKernelIn || kind[v] == kKernelOut) {
        sg_kernel_desc d = kernel(kind[v] == kKernelIn);
        SG_ASSERT_OK(sg_graph_add_kernel(g, &d, deps.data(), nd, &h[v]));
      } else if (kind[v] == kEmpty) {
        SG_ASSERT_OK(sg_graph_add_empty(g, nullptr, deps.data(), nd, &h[v]));
      } else {
        sg_host_desc d = {host_fn, nullptr, nullptr};
        SG_ASSERT_OK(sg_graph_add_host(g, &d, deps.data(), nd, &h[v]));
      }
      SG_ASSERT_OK(sg_graph_set_device(g, h[v], device[v]));
    }
    // Reference: reachability, then reduced edges (u -> v with no other path).
    std::vector<std::vector<char>> reach(n, std::vector<char>(n, 0));
    for (uint32_t v = 0; v < n; v++)
      for (uint32_t u : preds[v]) {
        reach[u][v] = 1;
        for (uint32_t w = 0; w < n; w++)
          if (reach[w][u]) reach[w][v] = 1;
      }
    size_t want_edges = 0;
    std::vector<int> want(n, 0);
    for (uint32_t v = 0; v < n; v++) {
      std::vector<uint32_t> reduced;
      for (uint32_t u : preds[v]) {
        bool implied = false;
        for (uint32_t w : preds[v])
          if (w != u && reach[u][w]) implied = true;
        if (!implied) reduced.push_back(u);
      }
      bool ok = kind[v] == kKernelIn && !reduced.empty();
      for (uint32_t u : reduced)
        if ((kind[u] != kKernelIn && kind[u] != kKernelOut) || device[u] != device[v]) ok = false;
      want[v] = ok;
      if (ok) want_edges += reduced.size();
      marked += ok;
    }
    sg_plan *plan = nullptr;
    SG_ASSERT_OK(sg_plan_create(g, 1 + rng() % 4, &plan));
    sg_plan_summary s;
    SG_ASSERT_OK(sg_plan_get_summary(plan, &s));
    EXPECT_EQ(s.programmatic_edge_count, want_edges) << "seed " << seed;
    for (uint32_t v = 0; v < n; v++) {
      sg_plan_node_info info;
      SG_ASSERT_OK(sg_plan_get_node(plan, h[v], &info));
      EXPECT_EQ(info.programmatic, want[v]) << "seed " << seed << ", node " << v;
    }
    char *dot = nullptr;
    SG_ASSERT_OK(sg_plan_to_dot(plan, &dot));
    EXPECT_EQ(std::strstr(dot, "label=\"pdl") != nullptr, want_edges > 0) << "seed " << seed;
    sg_free(dot);
    SG_ASSERT_OK(sg_plan_destroy(plan));
    if (HasFailure()) return;
  }
  EXPECT_GT(marked, 0u) << "no round had a programmatic node";
}

TEST(PlanProgrammatic, UnknownFlagsAreRefused) {
  sgtest::Graph g;
  sg_kernel_desc d = kernel(true);
  d.flags = 0x80;
  EXPECT_EQ(sg_graph_add_kernel(g, &d, nullptr, 0, nullptr), SG_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::strstr(sg_last_error(), "flags"), nullptr) << sg_last_error();
}

// The flag is topology: sg_exec_set_kernel refuses a change, sg_exec_update
// rebuilds for it.
TEST(PlanProgrammatic, TheFlagIsPartOfTheTopology) {
  sgtest::Graph g;
  sg_kernel_desc a = kernel(false), b = kernel(true);
  sg_node ka{}, kb{};
  SG_ASSERT_OK(sg_graph_add_kernel(g, &a, nullptr, 0, &ka));
  SG_ASSERT_OK(sg_graph_add_kernel(g, &b, &ka, 1, &kb));
  sg_exec_options o = sgtest::host_options();
  sgtest::Exec e;
  SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
  const sg_plan *plan = nullptr;
  SG_ASSERT_OK(sg_exec_get_plan(e, &plan));
  sg_plan_node_info info;
  SG_ASSERT_OK(sg_plan_get_node(plan, kb, &info));
  EXPECT_EQ(info.programmatic, 1);
  sg_kernel_desc off = kernel(false);
  EXPECT_EQ(sg_exec_set_kernel(e, kb, &off), SG_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::strstr(sg_last_error(), "SG_KERNEL_PROGRAMMATIC"), nullptr) << sg_last_error();
  SG_ASSERT_OK(sg_exec_set_kernel(e, kb, &b));  // same flag: a parameter update
  SG_ASSERT_OK(sg_graph_set_kernel(g, kb, &off));
  SG_ASSERT_OK(sg_exec_update(e, g));
  sg_exec_stats st;
  SG_ASSERT_OK(sg_exec_get_stats(e, &st));
  EXPECT_EQ(st.rebuilds, 1u);
  SG_ASSERT_OK(sg_exec_get_plan(e, &plan));
  SG_ASSERT_OK(sg_plan_get_node(plan, kb, &info));
  EXPECT_EQ(info.programmatic, 0);
  SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  SG_ASSERT_OK(sg_exec_wait(e));
}

// The library's kernels opt in; on the host backend they compute as ever.
TEST(PlanProgrammatic, LibraryKernelsOptInAndRunOnTheHost) {
  sg_kernel_call k;
  uint32_t a[4] = {1, 2, 3, 4}, out[4] = {0, 0, 0, 0};
  sg_kernels_mix_u32(&k, out, a, a, 9, 4);
  EXPECT_EQ(k.desc.flags, SG_KERNEL_PROGRAMMATIC);
  sgtest::Graph g;
  sg_node first{}, second{};
  SG_ASSERT_OK(sg_graph_add_kernel(g, &k.desc, nullptr, 0, &first));
  sg_kernel_call k2;
  sg_kernels_mix_u32(&k2, out, out, a, 10, 4);
  SG_ASSERT_OK(sg_graph_add_kernel(g, &k2.desc, &first, 1, &second));
  sg_exec_options o = sgtest::host_options();
  sgtest::Exec e;
  SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
  SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  SG_ASSERT_OK(sg_exec_wait(e));
  for (int i = 0; i < 4; i++)
    EXPECT_EQ(out[i], sg_kernels_mix(sg_kernels_mix(a[i], a[i], 9), a[i], 10));
}

}  // namespace
