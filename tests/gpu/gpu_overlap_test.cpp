// Concurrency on the GPU: two independent long kernels run at the same time
// (measured with CUDA events in the caller's stream around the launch: the
// total is well under the sum of the two), and a streams-mode trace shows it.
#include <algorithm>

#include "gpu_util.h"

namespace {

constexpr uint64_t kSpinNs = 50ull * 1000 * 1000;  // 50 ms each

class Overlap : public gputest::ModeTest {};

TEST_P(Overlap, TwoIndependentKernelsRunConcurrently) {
  sgtest::Graph g;
  sg_kernel_call k1, k2;
  sg_kernels_spin(&k1, kSpinNs);
  sg_kernels_spin(&k2, kSpinNs);
  SG_ASSERT_OK(sg_graph_add_kernel(g, &k1.desc, nullptr, 0, nullptr));
  SG_ASSERT_OK(sg_graph_add_kernel(g, &k2.desc, nullptr, 0, nullptr));
  sg_exec_options o = options(2);
  sgtest::Exec x;
  SG_ASSERT_OK(sg_exec_create(g, &o, &x.e));
  sg_exec_info info;
  SG_ASSERT_OK(sg_exec_get_info(x, &info));
  EXPECT_EQ(info.stream_count, 2u);

  cudaStream_t s;
  cudaEvent_t before, after;
  CUDA_ASSERT(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  CUDA_ASSERT(cudaEventCreate(&before));
  CUDA_ASSERT(cudaEventCreate(&after));
  // A warm-up launch: first launches pay for module loading.
  SG_ASSERT_OK(sg_exec_launch(x, s));
  CUDA_ASSERT(cudaStreamSynchronize(s));
  float best = 1e9f;
  for (int i = 0; i < 3; i++) {
    CUDA_ASSERT(cudaEventRecord(before, s));
    SG_ASSERT_OK(sg_exec_launch(x, s));
    CUDA_ASSERT(cudaEventRecord(after, s));
    CUDA_ASSERT(cudaEventSynchronize(after));
    float ms = 0;
    CUDA_ASSERT(cudaEventElapsedTime(&ms, before, after));
    best = std::min(best, ms);
  }
  SG_ASSERT_OK(sg_exec_wait(x));
  const float one = kSpinNs / 1e6f, sum = 2 * one;
  // Each kernel takes at least 50 ms; run one after the other they take 100.
  EXPECT_GE(best, one * 0.99f);
  EXPECT_LT(best, sum * 0.75f) << "the two kernels did not overlap: " << best << " ms for two "
                               << one << " ms kernels";
  CUDA_ASSERT(cudaEventDestroy(before));
  CUDA_ASSERT(cudaEventDestroy(after));
  CUDA_ASSERT(cudaStreamDestroy(s));
}

INSTANTIATE_TEST_SUITE_P(Cuda, Overlap, ::testing::ValuesIn(gputest::all_modes()),
                         gputest::mode_name);

// The streams-mode trace: one record per node in issue order, each within
// the launch, a chain's nodes one after the other, two independent spins
// overlapping.
TEST(Trace, StreamsModeTimesEveryNode) {
  SG_SKIP_WITHOUT_GPU();
  sgtest::Graph g;
  sg_kernel_call a, b, c;
  sg_kernels_spin(&a, 5 * 1000 * 1000);
  sg_kernels_spin(&b, 5 * 1000 * 1000);
  sg_kernels_spin(&c, 5 * 1000 * 1000);
  a.desc.name = "a";
  b.desc.name = "b";
  c.desc.name = "after-a";
  sg_node na, nb, nc;
  SG_ASSERT_OK(sg_graph_add_kernel(g, &a.desc, nullptr, 0, &na));
  SG_ASSERT_OK(sg_graph_add_kernel(g, &b.desc, nullptr, 0, &nb));
  SG_ASSERT_OK(sg_graph_add_kernel(g, &c.desc, &na, 1, &nc));
  sg_exec_options o = gputest::cuda_options(gputest::all_modes()[0], 2);
  o.trace = 1;
  sgtest::Exec x;
  SG_ASSERT_OK(sg_exec_create(g, &o, &x.e));
  for (int i = 0; i < 2; i++) SG_ASSERT_OK(sg_exec_launch(x, nullptr));
  std::vector<sg_trace_record> r(3);
  size_t count = 0;
  SG_ASSERT_OK(sg_exec_get_trace(x, r.data(), r.size(), &count));
  ASSERT_EQ(count, 3u);
  sg_trace_record ra{}, rb{}, rc{};
  for (auto &t : r) {
    EXPECT_LE(t.start_ns, t.end_ns);
    EXPECT_GE(t.end_ns - t.start_ns, 4u * 1000 * 1000) << "a 5 ms spin timed shorter";
    if (t.node.opaque == na.opaque) ra = t;
    if (t.node.opaque == nb.opaque) rb = t;
    if (t.node.opaque == nc.opaque) rc = t;
  }
  EXPECT_GE(rc.start_ns, ra.end_ns) << "a dependency started before its predecessor ended";
  EXPECT_LT(rb.start_ns, ra.end_ns) << "independent kernels did not overlap";
  std::string path = ::testing::TempDir() + "sg_gpu_trace.json";
  SG_ASSERT_OK(sg_exec_write_trace(x, path.c_str()));
}

}  // namespace
