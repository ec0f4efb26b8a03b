// Pipelines on the GPU (label gpu; skipped without a device): outputs of
// many batches at depths 1..4, in streams and graph mode, with pinned and
// pageable host buffers, equal the CPU reference; binding updates graphs in
// place and never re-plans; a host node failing on batch k stops the
// pipeline cleanly; back-pressure and destroy with batches in flight.
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <tuple>

#include "pipeline_fixture.h"

namespace {

using pipetest::Batch;
using pipetest::Chain;
using pipetest::Ctx;

#define SKIP_WITHOUT_GPU()                                               \
  do {                                                                   \
    if (sg_cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device"; \
  } while (0)

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

// depth, mode, pinned, queue
using Param = std::tuple<unsigned, sg_exec_mode, bool, unsigned>;

class PipelineGpu : public ::testing::TestWithParam<Param> {};

TEST_P(PipelineGpu, OutputsEqualReference) {
  SKIP_WITHOUT_GPU();
  sgtest::LeakCheck leaks;
  auto [depth, mode, pinned, queue] = GetParam();
  const size_t n = (1u << 18) + 3; // a little over 1 MiB: several blocks, odd tail
  const unsigned count = 13;
  Chain chain(SG_BACKEND_CUDA, n, false, pinned);
  pipetest::Batches set(chain, count, [&](unsigned i) { return pinned; });
  std::vector<Batch *> &batches = set.list;
  Ctx ctx;
  ctx.chain = &chain;
  ctx.rec.batches = &batches;
  sg_pipeline_options o = pipetest::chain_options(&ctx, depth, mode);
  o.queue = queue;
  // Pageable copies are staged through pinned chunks of a pool of this
  // test's own (the default pool lives as long as the process, which the
  // leak check would see).
  sg_pinned_pool *pool = nullptr;
  if (!pinned) {
    sg_pinned_pool_options po;
    sg_pinned_pool_options_init(&po);
    po.slab_bytes = 32u << 20;
    po.max_bytes = 256u << 20;
    SG_ASSERT_OK(sg_pinned_pool_create(&po, &pool));
    o.exec.staging.pool = pool;
    o.exec.staging.policy = SG_STAGING_STAGE;
  }
  sg_pipeline *p = nullptr;
  SG_ASSERT_OK(sg_pipeline_create(chain.g, &o, &p));
  for (int round = 0; round < 2; round++) { // twice: the second run reuses every instance
    ctx.rec = pipetest::Recorder();
    ctx.rec.batches = &batches;
    ctx.rec.first_batch = uint64_t(round) * count;
    for (auto *b : batches)
      for (size_t j = 0; j < n; j++) b->out.p[j] = pipetest::kPoison;
    for (unsigned i = 0; i < count; i++) {
      sg_pipeline_batch b = batches[i]->desc(batches[i]);
      SG_ASSERT_OK(sg_pipeline_submit(p, &b, nullptr));
    }
    SG_ASSERT_OK(sg_pipeline_drain(p));
    ASSERT_EQ(ctx.rec.order.size(), count);
    for (unsigned i = 0; i < count; i++) {
      EXPECT_EQ(ctx.rec.order[i], ctx.rec.first_batch + i);
      EXPECT_EQ(ctx.rec.status[i], SG_OK) << ctx.rec.messages[i];
      EXPECT_EQ(ctx.rec.output_errors[i], "") << "round " << round << " batch " << i;
    }
  }
  sg_pipeline_stats s;
  SG_ASSERT_OK(sg_pipeline_get_stats(p, &s));
  // Graph mode with pageable buffers is the exception: a staged copy bakes
  // its pinned ring and pointers into the CUDA graph, so a new pageable
  // pointer per batch re-instantiates (src/staging/cuda_staging.c;
  // docs/pipeline.md says to use pinned buffers with graph mode).
  if (mode == SG_MODE_STREAMS || pinned)
    EXPECT_EQ(s.rebuilds, 0u) << "binding must never re-plan or re-instantiate";
  ::testing::Test::RecordProperty("rebuilds", static_cast<int>(s.rebuilds));
  EXPECT_EQ(s.param_updates, 3u * depth + 2 * 3u * count);
  if (mode == SG_MODE_GRAPH) EXPECT_GT(s.in_place_updates, 0u) << "graph mode updates in place";
  SG_ASSERT_OK(sg_pipeline_destroy(p));
  EXPECT_EQ(ctx.counters.teardowns, static_cast<int>(depth));
  if (pool) SG_EXPECT_OK(sg_pinned_pool_destroy(pool));
}

INSTANTIATE_TEST_SUITE_P(
    DepthsModesMemory, PipelineGpu,
    ::testing::Combine(::testing::Values(1u, 2u, 3u, 4u),
                       ::testing::Values(SG_MODE_STREAMS, SG_MODE_GRAPH),
                       ::testing::Values(false, true), ::testing::Values(1u, 2u, 4u)),
    [](const ::testing::TestParamInfo<Param> &info) {
      return "depth" + std::to_string(std::get<0>(info.param)) +
             (std::get<1>(info.param) == SG_MODE_GRAPH ? "_graph" : "_streams") +
             (std::get<2>(info.param) ? "_pinned" : "_pageable") + "_queue" +
             std::to_string(std::get<3>(info.param));
    });

// Pageable batch buffers under the policies that take the driver's own path
// in streams mode: NONE, and AUTO for copies below its threshold. A
// CUDA graph gets no pageable memcpy node (the driver does not run one in
// graph order: src/staging/policy.h), so in graph mode these copies are
// staged all the same, and every output matches the reference either way.
using PolicyParam = std::tuple<sg_exec_mode, sg_staging_policy>;
class PipelineGpuPageable : public ::testing::TestWithParam<PolicyParam> {};

TEST_P(PipelineGpuPageable, SmallCopiesUnderNoneAndAuto) {
  SKIP_WITHOUT_GPU();
  sgtest::LeakCheck leaks;
  auto [mode, policy] = GetParam();
  // 64 KiB and a little: below AUTO's threshold under either protocol and
  // in either direction (auto_min_bytes: 1 MiB, tuning.h).
  const size_t n = (1u << 14) + 3;
  const unsigned count = 9, depth = 3;
  Chain chain(SG_BACKEND_CUDA, n, false, false);
  pipetest::Batches set(chain, count, [&](unsigned i) { return false; });
  std::vector<Batch *> &batches = set.list;
  Ctx ctx;
  ctx.chain = &chain;
  ctx.rec.batches = &batches;
  sg_pipeline_options o = pipetest::chain_options(&ctx, depth, mode);
  sg_pinned_pool *pool = nullptr; // the default pool would outlive the leak check
  sg_pinned_pool_options po;
  sg_pinned_pool_options_init(&po);
  po.slab_bytes = 8u << 20;
  po.max_bytes = 64u << 20;
  SG_ASSERT_OK(sg_pinned_pool_create(&po, &pool));
  o.exec.staging.pool = pool;
  o.exec.staging.policy = policy;
  sg_pipeline *p = nullptr;
  SG_ASSERT_OK(sg_pipeline_create(chain.g, &o, &p));
  for (unsigned i = 0; i < count; i++) {
    sg_pipeline_batch b = batches[i]->desc(batches[i]);
    SG_ASSERT_OK(sg_pipeline_submit(p, &b, nullptr));
  }
  SG_ASSERT_OK(sg_pipeline_drain(p));
  ASSERT_EQ(ctx.rec.order.size(), count);
  for (unsigned i = 0; i < count; i++) {
    EXPECT_EQ(ctx.rec.status[i], SG_OK) << ctx.rec.messages[i];
    EXPECT_EQ(ctx.rec.output_errors[i], "") << "batch " << i;
  }
  sg_pipeline_stats s;
  SG_ASSERT_OK(sg_pipeline_get_stats(p, &s));
  if (mode == SG_MODE_STREAMS) EXPECT_EQ(s.rebuilds, 0u);
  SG_ASSERT_OK(sg_pipeline_destroy(p));
  SG_EXPECT_OK(sg_pinned_pool_destroy(pool));
}

INSTANTIATE_TEST_SUITE_P(
    ModesPolicies, PipelineGpuPageable,
    ::testing::Combine(::testing::Values(SG_MODE_STREAMS, SG_MODE_GRAPH),
                       ::testing::Values(SG_STAGING_NONE, SG_STAGING_AUTO)),
    [](const ::testing::TestParamInfo<PolicyParam> &info) {
      return std::string(std::get<0>(info.param) == SG_MODE_GRAPH ? "graph" : "streams") +
             (std::get<1>(info.param) == SG_STAGING_NONE ? "_none" : "_auto");
    });

// mode, queue
using ErrorParam = std::tuple<sg_exec_mode, unsigned>;
class PipelineGpuError : public ::testing::TestWithParam<ErrorParam> {};

TEST_P(PipelineGpuError, HostNodeFailingOnBatchK) {
  SKIP_WITHOUT_GPU();
  sgtest::LeakCheck leaks;
  const size_t n = 1u << 16;
  const unsigned count = 12, k = 4, depth = 3;
  const auto [mode, queue] = GetParam();
  Chain chain(SG_BACKEND_CUDA, n, true, true);
  pipetest::Batches set(chain, count, [&](unsigned i) { return true; });
  std::vector<Batch *> &batches = set.list;
  batches[k]->check.fail = true;
  Ctx ctx;
  ctx.chain = &chain;
  ctx.rec.batches = &batches;
  sg_pipeline_options o = pipetest::chain_options(&ctx, depth, mode);
  o.queue = queue;
  sg_pipeline *p = nullptr;
  SG_ASSERT_OK(sg_pipeline_create(chain.g, &o, &p));
  unsigned accepted = 0;
  for (unsigned i = 0; i < count; i++) {
    sg_pipeline_batch b = batches[i]->desc(batches[i]);
    sg_status st = sg_pipeline_submit(p, &b, nullptr);
    if (st == SG_ERR_STOPPED) break;
    ASSERT_EQ(st, SG_OK) << sg_last_error();
    accepted++;
  }
  EXPECT_GE(accepted, k + 1);
  EXPECT_LE(accepted, k + depth * queue);
  EXPECT_EQ(sg_pipeline_drain(p), SG_ERR_STOPPED);
  EXPECT_TRUE(contains(sg_last_error(), "batch 4")) << sg_last_error();
  EXPECT_TRUE(contains(sg_last_error(), "'check'")) << sg_last_error();
  ASSERT_EQ(ctx.rec.order.size(), accepted);
  for (unsigned i = 0; i < accepted; i++) {
    EXPECT_EQ(ctx.rec.order[i], i);
    if (i < k) {
      EXPECT_EQ(ctx.rec.status[i], SG_OK) << ctx.rec.messages[i];
      EXPECT_EQ(ctx.rec.output_errors[i], "");
    } else if (i == k) {
      EXPECT_EQ(ctx.rec.status[i], SG_ERR_CALLBACK) << ctx.rec.messages[i];
      EXPECT_TRUE(contains(ctx.rec.messages[i], "'check'")) << ctx.rec.messages[i];
    } else {
      EXPECT_EQ(ctx.rec.status[i], SG_ERR_STOPPED);
    }
  }
  sg_pipeline_batch b = batches[0]->desc();
  EXPECT_EQ(sg_pipeline_submit(p, &b, nullptr), SG_ERR_STOPPED);
  SG_ASSERT_OK(sg_pipeline_destroy(p));
  EXPECT_EQ(ctx.counters.teardowns, static_cast<int>(depth));
}

INSTANTIATE_TEST_SUITE_P(ModesQueues, PipelineGpuError,
                         ::testing::Combine(::testing::Values(SG_MODE_STREAMS, SG_MODE_GRAPH),
                                            ::testing::Values(1u, 2u, 4u)),
                         [](const ::testing::TestParamInfo<ErrorParam> &info) {
                           return std::string(std::get<0>(info.param) == SG_MODE_GRAPH
                                                  ? "graph"
                                                  : "streams") +
                                  "_queue" + std::to_string(std::get<1>(info.param));
                         });

using pipetest::Gate;
using pipetest::gate_fn;

TEST(PipelineGpuFlow, BackPressureAndDestroyInFlight) {
  SKIP_WITHOUT_GPU();
  sgtest::LeakCheck leaks;
  sgtest::Graph g;
  Gate tmpl;
  tmpl.open = true;
  sg_host_desc h = {gate_fn, &tmpl, "gate"};
  sg_node gate;
  SG_ASSERT_OK(sg_graph_add_host(g, &h, nullptr, 0, &gate));
  sg_pipeline_options o;
  sg_pipeline_options_init(&o);
  o.depth = 2;
  o.queue = 1; // batch 2 waits for batch 0 (queue-ahead: PipelineGpuQueue)
  o.exec.backend = SG_BACKEND_CUDA;
  sg_pipeline *p = nullptr;
  SG_ASSERT_OK(sg_pipeline_create(g, &o, &p));
  Gate gates[4];
  sg_pipeline_bind binds[4];
  sg_pipeline_batch batches[4];
  for (int i = 0; i < 4; i++) {
    binds[i] = sg_bind_host_data(gate, &gates[i]);
    batches[i] = sg_pipeline_batch{&binds[i], 1, nullptr};
  }
  SG_ASSERT_OK(sg_pipeline_try_submit(p, &batches[0], nullptr));
  SG_ASSERT_OK(sg_pipeline_try_submit(p, &batches[1], nullptr));
  // Batch 2 needs instance 0, held by batch 0's closed gate.
  EXPECT_EQ(sg_pipeline_try_submit(p, &batches[2], nullptr), SG_ERR_WOULD_BLOCK) << sg_last_error();
  std::atomic<bool> released{false};
  std::thread opener([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    released = true;
    for (auto &gt : gates) gt.release();
  });
  SG_EXPECT_OK(sg_pipeline_submit(p, &batches[2], nullptr));
  EXPECT_TRUE(released) << "submit returned while its instance was still busy";
  SG_EXPECT_OK(sg_pipeline_submit(p, &batches[3], nullptr));
  SG_EXPECT_OK(sg_pipeline_destroy(p)); // batches 2 and 3 may still be in flight
  opener.join();
}

}  // namespace
