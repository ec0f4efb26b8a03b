// The staging geometry sweep on the host backend (staging_sweep.h), the twin
// of the GPU suite for CI: random DAGs of 65 nodes whose host buffers are
// pageable, staged under SG_STAGING_STAGE with every chunk size of the sweep,
// ring depths 1-5 and 1-3 copy threads, in graph and streams mode, through
// the memop protocol the host backend emulates (its stream blocks on the
// flags as the GPU does) and the callback protocol; bit for bit against a
// serial reference, each scenario under a watchdog.
#include <cstdlib>
#include <string>

#include "sg_test_util.h"
#include "staging_sweep.h"

namespace {

// 64-128 KiB per buffer, as on the GPU; a sixteenth of that under the
// sanitizers, which run every copy ten times slower (the geometry, not the
// size, is what the sweep is about: chunks of 1000 bytes still make
// dozens of chunks per copy).
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr uint32_t kMinWords = 1u << 10;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr uint32_t kMinWords = 1u << 10;
#else
constexpr uint32_t kMinWords = 16u << 10;
#endif
#else
constexpr uint32_t kMinWords = 16u << 10;
#endif

struct Case {
  const char *name;
  sg_exec_mode mode;
  const char *protocol;  // SG_STAGING_PROTOCOL
};

void PrintTo(const Case &c, std::ostream *os) { *os << c.name; }

const Case kCases[] = {
    {"graph_memops", SG_MODE_GRAPH, "memops"},
    {"streams_memops", SG_MODE_STREAMS, "memops"},
    {"graph_callbacks", SG_MODE_GRAPH, "callbacks"},
};

class StagingSweepHost : public ::testing::TestWithParam<std::tuple<Case, size_t>> {
 protected:
  void TearDown() override { unsetenv("SG_STAGING_PROTOCOL"); }
};

TEST_P(StagingSweepHost, EveryGeometryCompletesAndMatches) {
  sgtest::LeakCheck leaks;
  const Case &c = std::get<0>(GetParam());
  const size_t chunk = std::get<1>(GetParam());
  setenv("SG_STAGING_PROTOCOL", c.protocol, 1);
  sg_pinned_pool_options po;
  sg_pinned_pool_options_init(&po);
  po.backend = SG_BACKEND_HOST;
  po.max_bytes = 64u << 20;
  po.slab_bytes = 1u << 20;
  sg_pinned_pool *pool = nullptr;
  SG_ASSERT_OK(sg_pinned_pool_create(&po, &pool));
  for (unsigned ring = 1; ring <= sgsweep::kMaxRing; ring++) {
    for (unsigned threads = 1; threads <= sgsweep::kMaxThreads; threads++) {
      sgeq::Config cfg;
      cfg.mode = c.mode;
      cfg.policy = SG_STAGING_STAGE;
      cfg.pool = pool;
      cfg.chunk_bytes = chunk;
      cfg.ring_depth = ring;
      cfg.copy_threads = threads;
      sgeq::Limits lim;
      lim.exact_nodes = true;
      lim.max_nodes = 65;
      lim.min_words = kMinWords;
      lim.max_words = 2 * kMinWords;
      lim.rounds = 2;
      lim.max_launches = 2;
      const uint64_t seed = 1000003ull * chunk + 101ull * ring + 7ull * threads;
      std::string error = sgsweep::run_watched(cfg, seed, lim, 60);
      EXPECT_EQ(error, "") << sgeq::describe(cfg) << " seed " << seed;
      if (!error.empty()) {
        SG_EXPECT_OK(sg_pinned_pool_destroy(pool));
        return;
      }
    }
  }
  SG_EXPECT_OK(sg_pinned_pool_destroy(pool));
}

INSTANTIATE_TEST_SUITE_P(
    Geometries, StagingSweepHost,
    ::testing::Combine(::testing::ValuesIn(kCases), ::testing::ValuesIn(sgsweep::kChunks)),
    [](const ::testing::TestParamInfo<std::tuple<Case, size_t>> &i) {
      return std::string(std::get<0>(i.param).name) + "_chunk" +
             std::to_string(std::get<1>(i.param));
    });

}  // namespace
