// Random DAGs on the host backend (hundreds of seeds, several stream limits)
// against a serial reference, with every node checking, as it starts, that
// all its predecessors have finished.
#include <atomic>
#include <random>
#include <vector>

#include "sg_test_util.h"
#include "streamgraph/kernels.h"

namespace {

constexpr size_t kWords = 16;

struct MixNode {
  std::vector<const uint32_t *> inputs;
  uint32_t *out;
  uint32_t salt;
  std::vector<const std::atomic<int> *> pred_runs;
  std::atomic<int> runs{0};
  std::atomic<int> *violations;
};

// out = fold of the inputs through the mixing function (or a pattern from
// the salt for a source node), after checking the predecessors are done.
int run_mix(void *p) {
  MixNode *n = static_cast<MixNode *>(p);
  int mine = n->runs.load();
  for (const std::atomic<int> *pred : n->pred_runs)
    if (pred->load() != mine + 1) n->violations->fetch_add(1);
  for (size_t w = 0; w < kWords; w++) {
    uint32_t v = n->salt * 0x01000193u + static_cast<uint32_t>(w);
    for (const uint32_t *in : n->inputs) v = sg_kernels_mix(v, in[w], n->salt);
    n->out[w] = v;
  }
  n->runs.fetch_add(1);
  return 0;
}

void run_seed(uint32_t seed) {
  std::mt19937 rng(seed);
  uint32_t n = 2 + rng() % 40;
  double density = std::uniform_real_distribution<double>(0.02, 0.4)(rng);
  auto edges = sgtest::random_dag(rng, n, density);
  auto preds = sgtest::predecessors(n, edges);

  std::vector<uint32_t> buffers(n * kWords, 0xdeadbeefu);
  std::vector<MixNode> nodes(n);
  std::atomic<int> violations{0};
  sgtest::Graph g;
  std::vector<sg_node> handles(n);
  for (uint32_t v = 0; v < n; v++) {
    MixNode &m = nodes[v];
    m.out = &buffers[v * kWords];
    m.salt = seed * 31 + v;
    m.violations = &violations;
    for (uint32_t p : preds[v]) {
      m.inputs.push_back(&buffers[p * kWords]);
      m.pred_runs.push_back(&nodes[p].runs);
    }
    sg_host_desc h = {run_mix, &m, nullptr};
    SG_ASSERT_OK(sg_graph_add_host(g, &h, nullptr, 0, &handles[v]));
  }
  // Some edges given at creation would do too; separate edges test add_edge.
  for (auto &e : edges) SG_ASSERT_OK(sg_graph_add_edge(g, handles[e.first], handles[e.second]));

  // Serial reference in index order (a topological order by construction).
  std::vector<uint32_t> expect(n * kWords);
  for (uint32_t v = 0; v < n; v++)
    for (size_t w = 0; w < kWords; w++) {
      uint32_t x = nodes[v].salt * 0x01000193u + static_cast<uint32_t>(w);
      for (uint32_t p : preds[v]) x = sg_kernels_mix(x, expect[p * kWords + w], nodes[v].salt);
      expect[v * kWords + w] = x;
    }

  unsigned limit = seed % 9;  // 0 = default limit
  sg_exec_options o = sgtest::host_options(limit);
  sgtest::Exec e;
  SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
  const int launches = 3;
  for (int i = 0; i < launches; i++) SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  SG_ASSERT_OK(sg_exec_wait(e));
  ASSERT_EQ(violations.load(), 0) << "seed " << seed << ": a node started before a predecessor ended";
  for (auto &m : nodes) ASSERT_EQ(m.runs.load(), launches);
  ASSERT_EQ(buffers, expect) << "seed " << seed;
}

TEST(HostRandomDag, MatchesSerialReference) {
  for (uint32_t seed = 1; seed <= 300; seed++) {
    run_seed(seed);
    if (HasFatalFailure()) return;
  }
}

// Kernel nodes (host twins of the ready-made kernels) in random DAGs: each
// node mixes two predecessors' buffers into its own.
TEST(HostRandomDag, KernelNodesMatchSerialReference) {
  constexpr size_t kN = 257;  // not a multiple of anything
  for (uint32_t seed = 1; seed <= 60; seed++) {
    std::mt19937 rng(seed);
    uint32_t n = 2 + rng() % 24;
    auto edges = sgtest::random_dag(rng, n, 0.25);
    auto preds = sgtest::predecessors(n, edges);
    void *mem = nullptr;
    SG_ASSERT_OK(sg_mem_alloc(SG_BACKEND_HOST, SG_MEMORY_DEVICE, 0, n * kN * 4, &mem));
    uint32_t *buf = static_cast<uint32_t *>(mem);
    sgtest::Graph g;
    std::vector<sg_node> handles(n);
    std::vector<uint32_t> expect(n * kN);
    for (uint32_t v = 0; v < n; v++) {
      sg_kernel_call call;
      uint32_t *out = buf + v * kN;
      std::vector<sg_node> deps;
      for (uint32_t p : preds[v]) deps.push_back(handles[p]);
      if (preds[v].empty()) {
        sg_kernels_fill_u32(&call, out, seed * 1000 + v, kN);
        for (size_t i = 0; i < kN; i++) expect[v * kN + i] = seed * 1000 + v;
      } else {
        uint32_t a = preds[v].front(), b = preds[v].back();
        sg_kernels_mix_u32(&call, out, buf + a * kN, buf + b * kN, v, kN);
        for (size_t i = 0; i < kN; i++)
          expect[v * kN + i] = sg_kernels_mix(expect[a * kN + i], expect[b * kN + i], v);
      }
      SG_ASSERT_OK(sg_graph_add_kernel(g, &call.desc, deps.data(), deps.size(), &handles[v]));
    }
    sg_exec_options o = sgtest::host_options(1 + seed % 8);
    sgtest::Exec e;
    SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
    SG_ASSERT_OK(sg_exec_launch(e, nullptr));
    SG_ASSERT_OK(sg_exec_wait(e));
    std::vector<uint32_t> got(buf, buf + n * kN);
    ASSERT_EQ(got, expect) << "seed " << seed;
    SG_ASSERT_OK(sg_mem_free(mem));
  }
}

}  // namespace
