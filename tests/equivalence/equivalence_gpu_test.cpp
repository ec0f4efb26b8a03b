// The randomized equivalence suite on the GPU (eq_model.h): random DAGs of
// kernels (eq_kernel.cu), host callbacks, copies between device memory and
// pageable or pinned host buffers at odd offsets (neighbours sharing pages),
// and memsets; changed between rounds by every update path; in streams mode
// and graph mode (both builds), under every staging policy, with and without
// a stream limit; compared bit for bit with a serial reference. Each failure
// names its seed and configuration.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "eq_kernel.h"
#include "eq_model.h"
#include "sg_test_util.h"

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
    {"graph_explicit_auto", SG_MODE_GRAPH, SG_BUILD_EXPLICIT, SG_STAGING_AUTO},
    {"graph_explicit_stage", SG_MODE_GRAPH, SG_BUILD_EXPLICIT, SG_STAGING_STAGE},
    {"graph_explicit_register", SG_MODE_GRAPH, SG_BUILD_EXPLICIT, SG_STAGING_REGISTER},
    {"graph_explicit_none", SG_MODE_GRAPH, SG_BUILD_EXPLICIT, SG_STAGING_NONE},
    {"graph_capture_auto", SG_MODE_GRAPH, SG_BUILD_CAPTURE, SG_STAGING_AUTO},
    {"graph_capture_stage", SG_MODE_GRAPH, SG_BUILD_CAPTURE, SG_STAGING_STAGE},
    {"graph_capture_register", SG_MODE_GRAPH, SG_BUILD_CAPTURE, SG_STAGING_REGISTER},
    {"graph_capture_none", SG_MODE_GRAPH, SG_BUILD_CAPTURE, SG_STAGING_NONE},
};

// SG_EQ_SEEDS=n runs n seeds per case (default 10); SG_EQ_SEED=s runs seed s only.
uint32_t seed_count() {
  const char *n = std::getenv("SG_EQ_SEEDS");
  return n ? static_cast<uint32_t>(std::strtoul(n, nullptr, 10)) : 10;
}

struct CudaPool {
  sg_pinned_pool *p = nullptr;
  CudaPool() {
    sg_pinned_pool_options po;
    sg_pinned_pool_options_init(&po);
    po.backend = SG_BACKEND_CUDA;
    po.max_bytes = 256u << 20;
    po.slab_bytes = 16u << 20;
    SG_EXPECT_OK(sg_pinned_pool_create(&po, &p));
  }
  ~CudaPool() {
    if (p) SG_EXPECT_OK(sg_pinned_pool_destroy(p));
  }
};

class EquivalenceGpu : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    if (sg_cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
  }
};

TEST_P(EquivalenceGpu, RandomDagsMatchTheSerialReference) {
  CudaPool pool;
  ASSERT_NE(pool.p, nullptr);
  const Case &c = GetParam();
  uint32_t first = 1, last = seed_count();
  if (const char *one = std::getenv("SG_EQ_SEED")) first = last = std::strtoul(one, nullptr, 10);
  sgeq::Stats stats;
  for (uint32_t seed = first; seed <= last; seed++) {
    sgeq::Config cfg;
    cfg.backend = SG_BACKEND_CUDA;
    cfg.mode = c.mode;
    cfg.build = c.build;
    cfg.policy = c.policy;
    static const unsigned limits[3] = {0, 1, 3};  // 0: the default limit
    cfg.max_streams = limits[seed % 3];
    cfg.pool = pool.p;
    cfg.kernel_func = sgeq_kernel_func();
    cfg.auto_min_bytes = 64u << 10;  // AUTO both stages and takes the driver's path
    cfg.auto_register_after = 1 + seed % 3;
    sgeq::Limits lim;
    lim.max_nodes = 32;
    lim.max_words = 320u << 10;  // up to 1.25 MiB per copy, log-uniform
    lim.rounds = 5;
    sgeq::SeededChooser choose(seed * 7919ull + static_cast<uint64_t>(c.mode) * 131 +
                               static_cast<uint64_t>(c.build) * 17 + c.policy);
    std::string error = sgeq::run_scenario(cfg, choose, lim, &stats);
    ASSERT_EQ(error, "") << "seed " << seed << " (rerun: SG_EQ_SEED=" << seed
                         << " --gtest_filter=*" << c.name << ")";
  }
  std::printf("%llu scenarios: %llu nodes, %llu launches, %llu updates (%llu rebuilds), %llu words "
              "checked\n",
              (unsigned long long)stats.scenarios, (unsigned long long)stats.nodes,
              (unsigned long long)stats.launches, (unsigned long long)stats.updates,
              (unsigned long long)stats.rebuilds, (unsigned long long)stats.words_checked);
}

INSTANTIATE_TEST_SUITE_P(Ways, EquivalenceGpu, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<Case> &i) {
                           return std::string(i.param.name);
                         });

}  // namespace
