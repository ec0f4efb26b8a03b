// The randomized equivalence suite on the host backend (eq_model.h): random
// DAGs of kernels, host callbacks, copies and memsets, changed between rounds
// by every update path, in both modes and under every staging policy,
// compared bit for bit with a serial reference. Each failure names its seed.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "eq_model.h"
#include "sg_test_util.h"

namespace {

struct Case {
  const char *name;
  sg_exec_mode mode;
  sg_staging_policy policy;
};

void PrintTo(const Case &c, std::ostream *os) { *os << c.name; }

const Case kCases[] = {
    {"streams_auto", SG_MODE_STREAMS, SG_STAGING_AUTO},
    {"streams_stage", SG_MODE_STREAMS, SG_STAGING_STAGE},
    {"streams_register", SG_MODE_STREAMS, SG_STAGING_REGISTER},
    {"streams_none", SG_MODE_STREAMS, SG_STAGING_NONE},
    {"graph_auto", SG_MODE_GRAPH, SG_STAGING_AUTO},
    {"graph_stage", SG_MODE_GRAPH, SG_STAGING_STAGE},
    {"graph_register", SG_MODE_GRAPH, SG_STAGING_REGISTER},
    {"graph_none", SG_MODE_GRAPH, SG_STAGING_NONE},
};

// SG_EQ_SEEDS=n runs n seeds per case (default 150); SG_EQ_SEED=s runs seed s only.
uint32_t seed_count() {
  const char *n = std::getenv("SG_EQ_SEEDS");
  return n ? static_cast<uint32_t>(std::strtoul(n, nullptr, 10)) : 150;
}

class EquivalenceHost : public ::testing::TestWithParam<Case> {};

// A staging pool of the host backend's own for one test, so that the test
// leaves nothing behind.
struct HostPool {
  sg_pinned_pool *p = nullptr;
  HostPool() {
    sg_pinned_pool_options po;
    sg_pinned_pool_options_init(&po);
    po.backend = SG_BACKEND_HOST;
    po.max_bytes = 64u << 20;
    po.slab_bytes = 1u << 20;
    SG_EXPECT_OK(sg_pinned_pool_create(&po, &p));
  }
  ~HostPool() {
    if (p) SG_EXPECT_OK(sg_pinned_pool_destroy(p));
  }
};

TEST_P(EquivalenceHost, RandomDagsMatchTheSerialReference) {
  sgtest::LeakCheck leaks;
  HostPool pool;
  ASSERT_NE(pool.p, nullptr);

  const Case &c = GetParam();
  uint32_t first = 1, last = seed_count();
  if (const char *one = std::getenv("SG_EQ_SEED")) first = last = std::strtoul(one, nullptr, 10);
  sgeq::Stats stats;
  for (uint32_t seed = first; seed <= last; seed++) {
    sgeq::Config cfg;
    cfg.backend = SG_BACKEND_HOST;
    cfg.mode = c.mode;
    cfg.policy = c.policy;
    cfg.max_streams = seed % 4;  // 0: the default limit
    cfg.pool = pool.p;
    cfg.auto_min_bytes = 256;
    cfg.auto_register_after = 1 + seed % 3;
    sgeq::Limits lim;
    lim.max_nodes = 32;
    lim.max_words = 700;
    sgeq::SeededChooser choose(seed * 7919ull + static_cast<uint64_t>(c.mode) * 131 + c.policy);
    std::string error = sgeq::run_scenario(cfg, choose, lim, &stats);
    ASSERT_EQ(error, "") << "seed " << seed << " (rerun: SG_EQ_SEED=" << seed
                         << " --gtest_filter=*" << c.name << "*)";
  }
  std::printf("%llu scenarios: %llu nodes, %llu launches, %llu updates (%llu rebuilds), %llu words "
              "checked\n",
              (unsigned long long)stats.scenarios, (unsigned long long)stats.nodes,
              (unsigned long long)stats.launches, (unsigned long long)stats.updates,
              (unsigned long long)stats.rebuilds, (unsigned long long)stats.words_checked);
}

INSTANTIATE_TEST_SUITE_P(Ways, EquivalenceHost, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<Case> &i) {
                           return std::string(i.param.name);
                         });

}  // namespace
