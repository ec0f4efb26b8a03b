// The graphs of the inference and signal examples (examples/inference,
// examples/signal) built twice, as the examples wire them by hand and from
// declared accesses alone: the same order, the same reduced DAG and the
// same plan width.
#include <cstdio>
#include <cstring>
#include <set>
#include <string>

#include "sg_test_util.h"

namespace {

struct Step {
  const char *name;
  std::vector<int> deps;                         // explicit wiring (step indices)
  std::vector<std::pair<int, sg_access_mode>> use;  // buffer index, mode
};

struct Built {
  sgtest::Graph g;
  sg_plan_summary sum{};
  std::set<std::pair<unsigned, unsigned>> closure;
};

// Reachability from the plan's waits and streams would be circular here:
// the DOT of the graph gives its edges, explicit and inferred alike.
std::set<std::pair<unsigned, unsigned>> closure_of(sg_graph *g, unsigned n) {
  char *dot = nullptr;
  EXPECT_EQ(sg_graph_to_dot(g, &dot), SG_OK);
  std::vector<std::vector<bool>> r(n, std::vector<bool>(n, false));
  for (const char *p = dot; p && *p;) {
    unsigned u, v;
    if (std::sscanf(p, " n%u -> n%u", &u, &v) == 2) r[u][v] = true;
    const char *nl = std::strchr(p, '\n');
    p = nl ? nl + 1 : nullptr;
  }
  sg_free(dot);
  for (unsigned k = 0; k < n; k++)
    for (unsigned i = 0; i < n; i++)
      if (r[i][k])
        for (unsigned j = 0; j < n; j++)
          if (r[k][j]) r[i][j] = true;
  std::set<std::pair<unsigned, unsigned>> out;
  for (unsigned i = 0; i < n; i++)
    for (unsigned j = 0; j < n; j++)
      if (r[i][j]) out.insert({i, j});
  return out;
}

void build(Built &b, const std::vector<Step> &steps, bool declared) {
  static char buffers[16][256];
  std::vector<sg_node> nodes;
  for (auto &s : steps) {
    std::vector<sg_node> deps;
    if (!declared)
      for (int d : s.deps) deps.push_back(nodes[d]);
    sg_node n{};
    SG_ASSERT_OK(sg_graph_add_empty(b.g, s.name, deps.data(), deps.size(), &n));
    if (declared) {
      std::vector<sg_access> acc;
      for (auto &u : s.use) {
        sg_access a{};
        a.ptr = buffers[u.first];
        a.bytes = sizeof buffers[u.first];
        a.mode = u.second;
        acc.push_back(a);
      }
      SG_ASSERT_OK(sg_graph_declare_access(b.g, n, acc.data(), acc.size()));
    }
    nodes.push_back(n);
  }
  sg_plan *plan = nullptr;
  SG_ASSERT_OK(sg_plan_create(b.g, 0, &plan));
  SG_ASSERT_OK(sg_plan_get_summary(plan, &b.sum));
  sg_plan_destroy(plan);
  b.closure = closure_of(b.g, (unsigned)steps.size());
}

void expect_same(const std::vector<Step> &steps) {
  Built wired, declared;
  build(wired, steps, false);
  build(declared, steps, true);
  if (::testing::Test::HasFatalFailure()) return;
  size_t explicit_edges = 1;
  SG_ASSERT_OK(sg_graph_edge_count(declared.g, &explicit_edges));
  EXPECT_EQ(explicit_edges, 0u);
  EXPECT_EQ(declared.closure, wired.closure);
  EXPECT_EQ(declared.sum.reduced_edge_count, wired.sum.reduced_edge_count);
  EXPECT_EQ(declared.sum.width, wired.sum.width);
  EXPECT_EQ(declared.sum.stream_count, wired.sum.stream_count);
  EXPECT_EQ(declared.sum.event_count, wired.sum.event_count);
}

constexpr sg_access_mode R = SG_ACCESS_READ, W = SG_ACCESS_WRITE, RW = SG_ACCESS_READ_WRITE;

// examples/inference/mlp_graph.c: upload -> layer_norm -> (gemm_l ->
// bias_act_l) x L -> softmax -> download, activations ping-ponging between
// two buffers (a, b), the GEMMs' outputs biased in place.
TEST(AccessExamples, InferenceMlpAsWiredByHand) {
  enum { REQUESTS, X, A, B, RESULTS, WEIGHTS };
  for (int layers = 1; layers <= 8; layers++) {
    std::vector<Step> s;
    s.push_back({"upload", {}, {{REQUESTS, R}, {X, W}}});
    s.push_back({"layer_norm", {0}, {{X, R}, {A, W}}});
    int prev = 1;
    for (int l = 0; l < layers; l++) {
      int in = l % 2 ? B : A, out = l % 2 ? A : B;
      s.push_back({"gemm", {prev}, {{in, R}, {WEIGHTS, R}, {out, W}}});
      s.push_back({"bias_act", {(int)s.size() - 1}, {{out, RW}, {WEIGHTS, R}}});
      prev = (int)s.size() - 1;
    }
    int last = (layers - 1) % 2 ? A : B;
    s.push_back({"softmax", {prev}, {{last, RW}}});
    s.push_back({"download", {(int)s.size() - 1}, {{last, R}, {RESULTS, W}}});
    expect_same(s);
    if (HasFailure()) FAIL() << layers << " layers";
  }
}

// examples/signal/ols_graph.c: two uploads -> assemble -> fft_forward ->
// filter -> fft_inverse -> discard_decimate -> power_db -> download.
TEST(AccessExamples, SignalOverlapSaveAsWiredByHand) {
  enum { HOST_HISTORY, HOST_CHUNK, HISTORY, CHUNK, BLOCKS, SPECTRA, BANK, DECIMATED, POWER, OUT };
  std::vector<Step> s = {
      {"upload_history", {}, {{HOST_HISTORY, R}, {HISTORY, W}}},
      {"upload_chunk", {}, {{HOST_CHUNK, R}, {CHUNK, W}}},
      {"assemble", {0, 1}, {{HISTORY, R}, {CHUNK, R}, {BLOCKS, W}}},
      {"fft_forward", {2}, {{BLOCKS, RW}}},
      {"filter", {3}, {{BLOCKS, R}, {SPECTRA, R}, {BANK, W}}},
      {"fft_inverse", {4}, {{BANK, RW}}},
      {"discard_decimate", {5}, {{BANK, R}, {DECIMATED, W}}},
      {"power_db", {6}, {{DECIMATED, R}, {POWER, W}}},
      {"download", {7}, {{POWER, R}, {OUT, W}}},
  };
  expect_same(s);
}

}  // namespace
