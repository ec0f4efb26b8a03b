// Programmatic dependent launch on the GPU (SG_KERNEL_PROGRAMMATIC): random
// DAGs of the library's kernels, which opt in, mixed with kernels that do
// not and with device-to-device copies that break programmatic chains, in
// every execution way; each node's output compared bit for bit with a CPU
// reference. Large nodes make predecessors long, so that a dependent that
// read before its predecessors were done would be caught.
#include <cstring>
#include <random>
#include <vector>

#include "gpu_util.h"

namespace {

using gputest::ModeTest;

class Pdl : public ModeTest {};

void run_seed(const sg_exec_options &options, uint32_t seed) {
  std::mt19937 rng(seed);
  const uint32_t n = 2 + rng() % 60;
  const size_t big = size_t{1} << 18, small = 256;
  auto edges = sgtest::random_dag(rng, n, 0.05 + (rng() % 20) / 100.0);
  auto preds = sgtest::predecessors(n, edges);
  // Every node's buffer has the largest size; a node uses its first words.
  std::vector<size_t> words(n);
  std::vector<int> kind(n);  // 0: opted-in mix, 1: mix without the flag, 2: copy
  for (uint32_t v = 0; v < n; v++) {
    words[v] = rng() % 4 == 0 ? big : small;
    kind[v] = rng() % 10 < 8 ? 0 : (rng() % 2 ? 1 : 2);
    if (kind[v] == 2 && preds[v].empty()) kind[v] = 0;
  }
  gputest::DevMem input(big * 4), bufs(static_cast<size_t>(n) * big * 4);
  std::vector<uint32_t> in(big);
  for (auto &w : in) w = static_cast<uint32_t>(rng());
  uint32_t *d = bufs.u32();
  auto buf = [&](uint32_t v) { return d + static_cast<size_t>(v) * big; };
  // Words past what a node writes keep the poison of every launch, and a
  // larger successor reads them.
  std::vector<std::vector<uint32_t>> host(n, std::vector<uint32_t>(big, 0xA5A5A5A5u));

  sgtest::Graph g;
  sg_node up{};
  sg_copy_desc u = {input.p, in.data(), big * 4, SG_COPY_HOST_TO_DEVICE, "up"};
  SG_ASSERT_OK(sg_graph_add_copy(g, &u, nullptr, 0, &up));
  std::vector<sg_node> h(n);
  for (uint32_t v = 0; v < n; v++) {
    std::vector<sg_node> deps;
    for (uint32_t q : preds[v]) deps.push_back(h[q]);
    if (deps.empty()) deps.push_back(up);
    const uint32_t nd = static_cast<uint32_t>(deps.size());
    const uint32_t *a = preds[v].empty() ? input.u32() : buf(preds[v][0]);
    const uint32_t *b = preds[v].size() < 2 ? a : buf(preds[v].back());
    const std::vector<uint32_t> &ha = preds[v].empty() ? in : host[preds[v][0]];
    const std::vector<uint32_t> &hb = preds[v].size() < 2 ? ha : host[preds[v].back()];
    if (kind[v] == 2) {
      sg_copy_desc c = {buf(v), a, words[v] * 4, SG_COPY_DEVICE_TO_DEVICE, "copy"};
      SG_ASSERT_OK(sg_graph_add_copy(g, &c, deps.data(), nd, &h[v]));
      for (size_t i = 0; i < words[v]; i++) host[v][i] = ha[i];
    } else {
      const uint32_t salt = seed * 977u + v;
      sg_kernel_call k;
      sg_kernels_mix_u32(&k, buf(v), a, b, salt, words[v]);
      if (kind[v] == 1) k.desc.flags = 0;
      SG_ASSERT_OK(sg_graph_add_kernel(g, &k.desc, deps.data(), nd, &h[v]));
      for (size_t i = 0; i < words[v]; i++) host[v][i] = sg_kernels_mix(ha[i], hb[i], salt);
    }
  }
  sgtest::Exec e;
  SG_ASSERT_OK(sg_exec_create(g, &options, &e.e));
  const sg_plan *plan = nullptr;
  SG_ASSERT_OK(sg_exec_get_plan(e, &plan));
  sg_plan_summary s;
  SG_ASSERT_OK(sg_plan_get_summary(plan, &s));
  for (int launch = 0; launch < 3; launch++) {
    CUDA_ASSERT(cudaMemset(d, 0xA5, static_cast<size_t>(n) * big * 4));
    CUDA_ASSERT(cudaDeviceSynchronize());
    SG_ASSERT_OK(sg_exec_launch(e, nullptr));
    SG_ASSERT_OK(sg_exec_wait(e));
    std::vector<uint32_t> got(big);
    for (uint32_t v = 0; v < n; v++) {
      CUDA_ASSERT(cudaMemcpy(got.data(), buf(v), words[v] * 4, cudaMemcpyDeviceToHost));
      for (size_t i = 0; i < words[v]; i++)
        ASSERT_EQ(got[i], host[v][i]) << "seed " << seed << ", node " << v << " (kind " << kind[v]
                                      << "), word " << i << ", launch " << launch
                                      << ", programmatic edges " << s.programmatic_edge_count;
    }
  }
}

TEST_P(Pdl, RandomDagsOfOptedInKernelsAreBitwiseRight) {
  const uint32_t base = std::random_device{}();
  std::printf("seed %u\n", base);
  for (uint32_t r = 0; r < 40; r++) {
    run_seed(options(1 + r % 6), base + r);
    if (HasFatalFailure()) return;
  }
}

// A chain of opted-in kernels, each reading the one before: the longest
// programmatic path, relaunched many times.
TEST_P(Pdl, LongChainsRelaunched) {
  const size_t words = size_t{1} << 16;
  const uint32_t len = 200;
  gputest::DevMem a(words * 4), b(words * 4);
  std::vector<uint32_t> in(words), expect(words), got(words);
  std::mt19937 rng(std::random_device{}());
  for (auto &w : in) w = static_cast<uint32_t>(rng());
  expect = in;
  sgtest::Graph g;
  sg_node prev{};
  sg_copy_desc up = {a.p, in.data(), words * 4, SG_COPY_HOST_TO_DEVICE, "up"};
  SG_ASSERT_OK(sg_graph_add_copy(g, &up, nullptr, 0, &prev));
  for (uint32_t i = 0; i < len; i++) {
    uint32_t *src = i % 2 ? b.u32() : a.u32(), *dst = i % 2 ? a.u32() : b.u32();
    sg_kernel_call k;
    sg_kernels_mix_u32(&k, dst, src, src, i, words);
    SG_ASSERT_OK(sg_graph_add_kernel(g, &k.desc, &prev, 1, &prev));
    for (size_t w = 0; w < words; w++) expect[w] = sg_kernels_mix(expect[w], expect[w], i);
  }
  sg_copy_desc down = {got.data(), len % 2 ? b.p : a.p, words * 4, SG_COPY_DEVICE_TO_HOST, "down"};
  SG_ASSERT_OK(sg_graph_add_copy(g, &down, &prev, 1, nullptr));
  sgtest::Exec e;
  sg_exec_options o = options(1);
  SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
  const sg_plan *plan = nullptr;
  SG_ASSERT_OK(sg_exec_get_plan(e, &plan));
  sg_plan_summary s;
  SG_ASSERT_OK(sg_plan_get_summary(plan, &s));
  EXPECT_EQ(s.programmatic_edge_count, len - 1u);
  for (int r = 0; r < 20; r++) {
    std::fill(got.begin(), got.end(), 0u);
    SG_ASSERT_OK(sg_exec_launch(e, nullptr));
    SG_ASSERT_OK(sg_exec_wait(e));
    ASSERT_EQ(got, expect) << "relaunch " << r;
  }
}

INSTANTIATE_TEST_SUITE_P(Cuda, Pdl, ::testing::ValuesIn(gputest::all_modes()),
                         gputest::mode_name);

}  // namespace
