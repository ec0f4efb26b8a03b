// The fault sweep of fault_sweep.h on the host backend, in both modes and
// under every staging policy.
#include <cstdio>

#include "fault_sweep.h"

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
    {"graph_stage", SG_MODE_GRAPH, SG_STAGING_STAGE},
    {"graph_register", SG_MODE_GRAPH, SG_STAGING_REGISTER},
};

class FaultSweepHost : public ::testing::TestWithParam<Case> {};

TEST_P(FaultSweepHost, EveryFaultComesBackCleanly) {
  const Case &c = GetParam();
  sg_pinned_pool_options po;
  sg_pinned_pool_options_init(&po);
  po.backend = SG_BACKEND_HOST;
  po.max_bytes = 4u << 20;
  po.slab_bytes = 1u << 20;
  sg_pinned_pool *pool = nullptr;
  SG_ASSERT_OK(sg_pinned_pool_create(&po, &pool));
  sgsweep::Scenario s;
  s.backend = SG_BACKEND_HOST;
  s.options = sgtest::host_options(2);
  s.options.mode = c.mode;
  s.options.staging.policy = c.policy;
  s.options.staging.pool = pool;
  s.options.staging.chunk_bytes = 4096;
  SG_ASSERT_OK(sg_mem_alloc(SG_BACKEND_HOST, SG_MEMORY_DEVICE, 0, 2 * sgsweep::kBytes, &s.dev));
  sgsweep::Result r;
  sgsweep::sweep(
      s, SG_FAULT_ALLOC | SG_FAULT_SYSTEM, c.name, [](const std::string &, unsigned long) {},
      [pool] {
        sg_pinned_pool_trim(pool);
        return sg_live_allocations();
      },
      &r);
  std::printf("%s: %lu fault points swept, %lu reported as a failure, %zu distinct messages\n",
              c.name, r.points, r.failures, r.calls.size());
  sg_mem_free(s.dev);
  SG_EXPECT_OK(sg_pinned_pool_destroy(pool));
}

INSTANTIATE_TEST_SUITE_P(Ways, FaultSweepHost, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<Case> &i) {
                           return std::string(i.param.name);
                         });

}  // namespace
