// The fault sweep of fault_sweep.h on the GPU: every CUDA call, allocation
// and thread creation fails in turn, in streams mode and graph mode (both
// builds), under every staging policy; afterwards the device must still be
// healthy. Prints the fault points swept and the distinct failure messages.
#include <cuda_runtime_api.h>

#include <cstdio>

#include "fault_sweep.h"

namespace {

struct Case {
  const char *name;
  sg_exec_mode mode;
  sg_graph_build build;
  sg_staging_policy policy;
};

void PrintTo(const Case &c, std::ostream *os) { *os << c.name; }

const Case kCases[] = {
    {"streams_auto", SG_MODE_STREAMS, SG_BUILD_EXPLICIT, SG_STAGING_AUTO},
    {"streams_stage", SG_MODE_STREAMS, SG_BUILD_EXPLICIT, SG_STAGING_STAGE},
    {"streams_register", SG_MODE_STREAMS, SG_BUILD_EXPLICIT, SG_STAGING_REGISTER},
    {"streams_none", SG_MODE_STREAMS, SG_BUILD_EXPLICIT, SG_STAGING_NONE},
    {"graph_explicit_stage", SG_MODE_GRAPH, SG_BUILD_EXPLICIT, SG_STAGING_STAGE},
    {"graph_explicit_register", SG_MODE_GRAPH, SG_BUILD_EXPLICIT, SG_STAGING_REGISTER},
    {"graph_capture_auto", SG_MODE_GRAPH, SG_BUILD_CAPTURE, SG_STAGING_AUTO},
    {"graph_capture_register", SG_MODE_GRAPH, SG_BUILD_CAPTURE, SG_STAGING_REGISTER},
};

class FaultSweepGpu : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    if (sg_cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
  }
};

TEST_P(FaultSweepGpu, EveryFaultComesBackCleanly) {
  const Case &c = GetParam();
  sg_pinned_pool_options po;
  sg_pinned_pool_options_init(&po);
  po.backend = SG_BACKEND_CUDA;
  po.max_bytes = 16u << 20;
  po.slab_bytes = 4u << 20;
  sg_pinned_pool *pool = nullptr;
  SG_ASSERT_OK(sg_pinned_pool_create(&po, &pool));
  sgsweep::Scenario s;
  s.backend = SG_BACKEND_CUDA;
  sg_exec_options_init(&s.options);
  s.options.backend = SG_BACKEND_CUDA;
  s.options.mode = c.mode;
  s.options.build = c.build;
  s.options.max_streams = 2;
  s.options.staging.policy = c.policy;
  s.options.staging.pool = pool;
  s.options.staging.chunk_bytes = 4096;
  s.options.staging.auto_min_bytes = 4096;
  s.options.staging.auto_register_after = 1;
  SG_ASSERT_OK(sg_mem_alloc(SG_BACKEND_CUDA, SG_MEMORY_DEVICE, 0, 2 * sgsweep::kBytes, &s.dev));
  sgsweep::Result r;
  sgsweep::sweep(
      s, SG_FAULT_ALL, c.name,
      [](const std::string &name, unsigned long nth) {
        cudaError_t err = cudaDeviceSynchronize();
        ASSERT_EQ(err, cudaSuccess) << name << ", fault " << nth << ": the device is broken: "
                                    << cudaGetErrorName(err);
      },
      [pool] {
        sg_pinned_pool_trim(pool);
        return sg_live_allocations();
      },
      &r);
  std::printf("%s: %lu fault points swept, %lu reported as a failure, %zu distinct messages\n",
              c.name, r.points, r.failures, r.calls.size());
  for (const std::string &m : r.calls) std::printf("  %s\n", m.c_str());
  sg_mem_free(s.dev);
  SG_EXPECT_OK(sg_pinned_pool_destroy(pool));
}

INSTANTIATE_TEST_SUITE_P(Ways, FaultSweepGpu, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<Case> &i) {
                           return std::string(i.param.name);
                         });

}  // namespace
