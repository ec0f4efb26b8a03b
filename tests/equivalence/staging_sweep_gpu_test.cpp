// The staging geometry sweep on the GPU (staging_sweep.h): random DAGs of 65
// and 199 nodes whose host buffers are pageable (64-128 KiB, packed at odd
// offsets), staged under SG_STAGING_STAGE with every chunk size of the sweep,
// ring depths 1-5 and 1-3 copy threads, in graph mode (both builds) and in
// streams mode, compared bit for bit with a serial reference. Each scenario
// runs under a watchdog: a launch that never completes fails the test with
// the conductor's state instead of hanging it.
#include <cstdio>
#include <string>

#include "eq_kernel.h"
#include "sg_test_util.h"
#include "staging_sweep.h"

namespace {

struct Case {
  const char *name;
  sg_exec_mode mode;
  sg_graph_build build;
};

void PrintTo(const Case &c, std::ostream *os) { *os << c.name; }

const Case kCases[] = {
    {"graph_capture", SG_MODE_GRAPH, SG_BUILD_CAPTURE},
    {"graph_explicit", SG_MODE_GRAPH, SG_BUILD_EXPLICIT},
    {"streams", SG_MODE_STREAMS, SG_BUILD_EXPLICIT},
};

class StagingSweepGpu : public ::testing::TestWithParam<std::tuple<Case, size_t>> {
 protected:
  void SetUp() override {
    if (sg_cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
  }
};

TEST_P(StagingSweepGpu, EveryGeometryCompletesAndMatches) {
  const Case &c = std::get<0>(GetParam());
  const size_t chunk = std::get<1>(GetParam());
  sg_pinned_pool_options po;
  sg_pinned_pool_options_init(&po);
  po.backend = SG_BACKEND_CUDA;
  po.max_bytes = 256u << 20;
  po.slab_bytes = 16u << 20;
  sg_pinned_pool *pool = nullptr;
  SG_ASSERT_OK(sg_pinned_pool_create(&po, &pool));
  for (unsigned ring = 1; ring <= sgsweep::kMaxRing; ring++) {
    for (unsigned threads = 1; threads <= sgsweep::kMaxThreads; threads++) {
      sgeq::Config cfg;
      cfg.backend = SG_BACKEND_CUDA;
      cfg.mode = c.mode;
      cfg.build = c.build;
      cfg.policy = SG_STAGING_STAGE;
      cfg.pool = pool;
      cfg.kernel_func = sgeq_kernel_func();
      cfg.chunk_bytes = chunk;
      cfg.ring_depth = ring;
      cfg.copy_threads = threads;
      sgeq::Limits lim;
      lim.exact_nodes = true;
      lim.min_words = 16u << 10;  // 64-128 KiB per buffer
      lim.max_words = 32u << 10;
      lim.rounds = 2;
      lim.max_launches = 2;
      // The shapes of the reported hang: 65 and 199 nodes with the smallest
      // rings; 65 nodes elsewhere.
      const uint32_t sizes[2] = {65, 199};
      const unsigned shapes = ring <= 2 && threads >= 2 ? 2 : 1;
      for (unsigned shape = 0; shape < shapes; shape++) {
        lim.max_nodes = sizes[shape];
        const uint64_t seed = 1000003ull * chunk + 101ull * ring + 7ull * threads + shape;
        std::string error = sgsweep::run_watched(cfg, seed, lim, 30);
        EXPECT_EQ(error, "") << sgeq::describe(cfg) << " nodes " << lim.max_nodes << " seed "
                             << seed;
        if (!error.empty()) {
          SG_EXPECT_OK(sg_pinned_pool_destroy(pool));
          return;
        }
      }
    }
  }
  SG_EXPECT_OK(sg_pinned_pool_destroy(pool));
}

INSTANTIATE_TEST_SUITE_P(
    Geometries, StagingSweepGpu,
    ::testing::Combine(::testing::ValuesIn(kCases), ::testing::ValuesIn(sgsweep::kChunks)),
    [](const ::testing::TestParamInfo<std::tuple<Case, size_t>> &i) {
      return std::string(std::get<0>(i.param).name) + "_chunk" +
             std::to_string(std::get<1>(i.param));
    });

}  // namespace
