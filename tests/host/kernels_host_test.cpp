// The ready-made kernels' host twins, run through the host backend, against
// plain C++ references.
#include <cstring>
#include <random>
#include <vector>

#include "sg_test_util.h"
#include "streamgraph/kernels.h"

namespace {

void run(const sg_kernel_desc &desc) {
  sgtest::Graph g;
  SG_ASSERT_OK(sg_graph_add_kernel(g, &desc, nullptr, 0, nullptr));
  sg_exec_options o = sgtest::host_options();
  sgtest::Exec e;
  SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
  SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  SG_ASSERT_OK(sg_exec_wait(e));
}

TEST(KernelsHost, FillAxpyMixWork) {
  std::mt19937 rng(1234);
  const size_t n = 1001;
  std::vector<uint32_t> a(n), b(n), out(n, 0xdeadbeef);
  for (size_t i = 0; i < n; i++) a[i] = rng(), b[i] = rng();
  sg_kernel_call call;

  sg_kernels_fill_u32(&call, out.data(), 42, n);
  run(call.desc);
  for (size_t i = 0; i < n; i++) ASSERT_EQ(out[i], 42u);

  sg_kernels_mix_u32(&call, out.data(), a.data(), b.data(), 9, n);
  run(call.desc);
  for (size_t i = 0; i < n; i++) ASSERT_EQ(out[i], sg_kernels_mix(a[i], b[i], 9));

  std::vector<uint32_t> w = a;
  sg_kernels_work_u32(&call, w.data(), n, 5);
  run(call.desc);
  for (size_t i = 0; i < n; i++) {
    uint32_t v = a[i];
    for (uint32_t r = 0; r < 5; r++) v = sg_kernels_mix(v, static_cast<uint32_t>(i), r);
    ASSERT_EQ(w[i], v);
  }

  std::vector<float> x(n), y(n), y0(n);
  for (size_t i = 0; i < n; i++) x[i] = float(rng() % 1000) / 7, y[i] = y0[i] = float(rng() % 100);
  sg_kernels_axpy_f32(&call, y.data(), x.data(), 2.5f, n);
  run(call.desc);
  for (size_t i = 0; i < n; i++) ASSERT_FLOAT_EQ(y[i], 2.5f * x[i] + y0[i]);

  sg_kernels_spin(&call, 1000);
  run(call.desc);
  sg_kernels_empty(&call);
  run(call.desc);
}

TEST(KernelsHost, LaunchShapeCoversTheElements) {
  sg_kernel_call call;
  uint32_t dummy = 0;
  sg_kernels_fill_u32(&call, &dummy, 0, 1000);
  EXPECT_EQ(call.desc.block.x, 256u);
  EXPECT_EQ(call.desc.grid.x, 4u);
  sg_kernels_fill_u32(&call, &dummy, 0, size_t(1) << 30);
  EXPECT_EQ(call.desc.grid.x, 4096u) << "capped: the kernels loop over the rest";
  EXPECT_EQ(call.desc.arg_count, 3u);
}

}  // namespace
