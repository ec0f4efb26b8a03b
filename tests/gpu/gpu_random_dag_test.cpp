// Random DAGs of the ready-made kernels (fill, mix, work over per-node
// buffers) on the GPU, in streams mode and graph mode built both ways, and on
// the host backend: every result equals a serial CPU reference, so all four
// are bitwise equal to each other.
//
// Each DAG node v owns a buffer. A source fills it; a node with
// predecessors p1..pk folds their buffers into its own with a chain of mix
// kernels (every edge carries data), and every node ends with a work
// kernel, so a missing dependency shows up as a wrong value.
#include <random>

#include "gpu_util.h"

namespace {

constexpr size_t kN = 1031;
constexpr uint32_t kRounds = 64;

struct Dag {
  uint32_t n = 0;
  std::vector<std::pair<uint32_t, uint32_t>> edges;
  std::vector<std::vector<uint32_t>> preds;
};

Dag make_dag(uint32_t seed, uint32_t max_nodes) {
  std::mt19937 rng(seed);
  Dag d;
  d.n = 2 + rng() % (max_nodes - 1);
  double density = std::uniform_real_distribution<double>(0.02, 0.4)(rng);
  d.edges = sgtest::random_dag(rng, d.n, density);
  d.preds = sgtest::predecessors(d.n, d.edges);
  return d;
}

// Adds the DAG's kernels over `buf` (d.n * kN words) to `g`.
void build(sg_graph *g, const Dag &d, uint32_t *buf, uint32_t seed) {
  std::vector<sg_node> last(d.n);
  for (uint32_t v = 0; v < d.n; v++) {
    uint32_t *out = buf + v * kN;
    const auto &p = d.preds[v];
    sg_node prev{};
    sg_kernel_call call;
    if (p.empty()) {
      sg_kernels_fill_u32(&call, out, seed * 1000 + v, kN);
      SG_ASSERT_OK(sg_graph_add_kernel(g, &call.desc, nullptr, 0, &prev));
    } else {
      sg_kernels_mix_u32(&call, out, buf + p.front() * kN, buf + p.back() * kN, v, kN);
      sg_node deps[] = {last[p.front()], last[p.back()]};
      SG_ASSERT_OK(sg_graph_add_kernel(g, &call.desc, deps, p.size() > 1 ? 2 : 1, &prev));
      for (size_t j = 1; j + 1 < p.size(); j++) {
        sg_kernels_mix_u32(&call, out, out, buf + p[j] * kN, v + 7 * uint32_t(j), kN);
        sg_node more[] = {prev, last[p[j]]};
        SG_ASSERT_OK(sg_graph_add_kernel(g, &call.desc, more, 2, &prev));
      }
    }
    sg_kernels_work_u32(&call, out, kN, kRounds);
    SG_ASSERT_OK(sg_graph_add_kernel(g, &call.desc, &prev, 1, &last[v]));
  }
}

std::vector<uint32_t> reference(const Dag &d, uint32_t seed) {
  std::vector<uint32_t> r(d.n * kN);
  for (uint32_t v = 0; v < d.n; v++) {
    uint32_t *out = &r[v * kN];
    const auto &p = d.preds[v];
    for (size_t i = 0; i < kN; i++) {
      uint32_t x;
      if (p.empty()) {
        x = seed * 1000 + v;
      } else {
        x = sg_kernels_mix(r[p.front() * kN + i], r[p.back() * kN + i], v);
        for (size_t j = 1; j + 1 < p.size(); j++)
          x = sg_kernels_mix(x, r[p[j] * kN + i], v + 7 * uint32_t(j));
      }
      out[i] = gputest::work_ref(x, i, kRounds);
    }
  }
  return r;
}

void run_seed(uint32_t seed, uint32_t max_nodes) {
  Dag d = make_dag(seed, max_nodes);
  const size_t words = d.n * kN;
  std::vector<uint32_t> want = reference(d, seed);
  unsigned limit = 1 + seed % 8;

  // The host backend, on its own "device" memory.
  {
    gputest::Mem host(SG_BACKEND_HOST, SG_MEMORY_DEVICE, words * 4);
    std::fill(host.u32(), host.u32() + words, 0xA5A5A5A5u);
    sgtest::Graph g;
    build(g, d, host.u32(), seed);
    if (::testing::Test::HasFatalFailure()) return;
    sg_exec_options o = sgtest::host_options(limit);
    sgtest::Exec x;
    SG_ASSERT_OK(sg_exec_create(g, &o, &x.e));
    SG_ASSERT_OK(sg_exec_launch(x, nullptr));
    SG_ASSERT_OK(sg_exec_wait(x));
    ASSERT_EQ(std::vector<uint32_t>(host.u32(), host.u32() + words), want)
        << "host backend, seed " << seed;
  }

  gputest::DevMem dev(words * 4);
  sgtest::Graph g;
  build(g, d, dev.u32(), seed);
  if (::testing::Test::HasFatalFailure()) return;
  cudaStream_t user;
  ASSERT_EQ(cudaStreamCreateWithFlags(&user, cudaStreamNonBlocking), cudaSuccess);
  for (const auto &m : gputest::all_modes()) {
    sg_exec_options o = gputest::cuda_options(m, limit);
    sgtest::Exec x;
    SG_ASSERT_OK(sg_exec_create(g, &o, &x.e));
    for (int launch = 0; launch < 2; launch++) {
      gputest::poison(dev.p, words * 4);
      SG_ASSERT_OK(sg_exec_launch(x, launch ? static_cast<void *>(user) : nullptr));
      SG_ASSERT_OK(sg_exec_wait(x));
      ASSERT_EQ(gputest::read_u32(dev.p, words), want)
          << m.name << ", seed " << seed << ", " << d.n << " nodes, limit " << limit
          << ", launch " << launch;
    }
  }
  ASSERT_EQ(cudaStreamDestroy(user), cudaSuccess);
}

TEST(GpuRandomDag, EqualsReferenceInEveryModeAndOnTheHost) {
  SG_SKIP_WITHOUT_GPU();
  for (uint32_t seed = 1; seed <= 40; seed++) {
    run_seed(seed, 40);
    if (HasFatalFailure()) return;
  }
}

TEST(GpuRandomDag, LargeDags) {
  SG_SKIP_WITHOUT_GPU();
  for (uint32_t seed = 1001; seed <= 1003; seed++) {
    run_seed(seed, 300);
    if (HasFatalFailure()) return;
  }
}

}  // namespace
