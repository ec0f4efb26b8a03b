// A batch that fails mid-stream (its host node "check" returns 5) stops the
// pipeline cleanly: earlier batches complete with the right outputs, the
// failing batch is reported with its index and node, later ones as stopped,
// later submits are refused, nothing hangs and nothing leaks.
#include <algorithm>
#include <memory>
#include <thread>
#include <tuple>

#include "pipeline_fixture.h"

namespace {

using pipetest::Batch;
using pipetest::Chain;
using pipetest::Ctx;

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

// depth, queue, failing batch, mode
using Param = std::tuple<unsigned, unsigned, unsigned, sg_exec_mode>;

class PipelineError : public ::testing::TestWithParam<Param> {};

TEST_P(PipelineError, StopsCleanlyAtTheFailingBatch) {
  sgtest::LeakCheck leaks;
  auto [depth, queue, k, mode] = GetParam();
  const unsigned count = 11;
  const size_t n = 97;
  Chain chain(SG_BACKEND_HOST, n, true);
  pipetest::Batches set(chain, count, [&](unsigned i) { return i % 2 == 0; });
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
    if (st == SG_ERR_STOPPED) {
      std::string msg = sg_last_error();
      EXPECT_TRUE(contains(msg, "batch " + std::to_string(k))) << msg;
      break;
    }
    ASSERT_EQ(st, SG_OK) << sg_last_error();
    accepted++;
  }
  // The failure is found at the latest when batch k's place on its instance
  // is needed again (queue batches per instance).
  EXPECT_GE(accepted, k + 1);
  EXPECT_LE(accepted, std::min(count, k + depth * queue));

  EXPECT_EQ(sg_pipeline_drain(p), SG_ERR_STOPPED);
  std::string msg = sg_last_error();
  EXPECT_TRUE(contains(msg, "batch " + std::to_string(k))) << msg;
  EXPECT_TRUE(contains(msg, "'check'")) << "the message must name the node: " << msg;

  ASSERT_EQ(ctx.rec.order.size(), accepted) << "every accepted batch is reported once";
  for (unsigned i = 0; i < accepted; i++) {
    EXPECT_EQ(ctx.rec.order[i], i);
    if (i < k) {
      EXPECT_EQ(ctx.rec.status[i], SG_OK) << ctx.rec.messages[i];
      EXPECT_EQ(ctx.rec.output_errors[i], "") << "batch " << i;
      EXPECT_EQ(batches[i]->mismatch(n), "") << "earlier batches complete";
    } else if (i == k) {
      EXPECT_EQ(ctx.rec.status[i], SG_ERR_CALLBACK);
      const std::string &m = ctx.rec.messages[i];
      EXPECT_TRUE(contains(m, "batch " + std::to_string(k))) << m;
      EXPECT_TRUE(contains(m, "'check'")) << m;
      EXPECT_TRUE(contains(m, "returned 5")) << m;
    } else {
      EXPECT_EQ(ctx.rec.status[i], SG_ERR_STOPPED) << "batch " << i;
      EXPECT_TRUE(contains(ctx.rec.messages[i], "stopped at batch " + std::to_string(k)))
          << ctx.rec.messages[i];
    }
  }

  sg_pipeline_stats s;
  SG_ASSERT_OK(sg_pipeline_get_stats(p, &s));
  EXPECT_EQ(s.stopped, 1);
  EXPECT_EQ(s.failed_batch, k);
  EXPECT_EQ(s.fail_status, SG_ERR_CALLBACK);
  EXPECT_EQ(s.submitted, accepted);
  EXPECT_EQ(s.reported, accepted);
  EXPECT_EQ(s.rebuilds, 0u);

  // Everything after the stop is refused and says why.
  sg_pipeline_batch b = batches[0]->desc();
  EXPECT_EQ(sg_pipeline_submit(p, &b, nullptr), SG_ERR_STOPPED);
  EXPECT_TRUE(contains(sg_last_error(), "batch " + std::to_string(k))) << sg_last_error();
  EXPECT_EQ(sg_pipeline_try_submit(p, &b, nullptr), SG_ERR_STOPPED);
  EXPECT_EQ(sg_pipeline_poll(p), SG_ERR_STOPPED);
  EXPECT_EQ(sg_pipeline_wait(p, k), SG_ERR_CALLBACK);
  EXPECT_TRUE(contains(sg_last_error(), "'check'")) << sg_last_error();
  if (k > 0) SG_EXPECT_OK(sg_pipeline_wait(p, k - 1));
  if (accepted > k + 1) EXPECT_EQ(sg_pipeline_wait(p, accepted - 1), SG_ERR_STOPPED);
  EXPECT_EQ(ctx.rec.order.size(), accepted) << "nothing is reported twice";

  SG_ASSERT_OK(sg_pipeline_destroy(p));
  EXPECT_EQ(ctx.counters.teardowns, static_cast<int>(depth));
}

INSTANTIATE_TEST_SUITE_P(
    DepthsAndPlaces, PipelineError,
    ::testing::Combine(::testing::Values(1u, 2u, 3u, 4u), ::testing::Values(1u, 2u, 3u),
                       ::testing::Values(0u, 5u, 10u),
                       ::testing::Values(SG_MODE_STREAMS, SG_MODE_GRAPH)),
    [](const ::testing::TestParamInfo<Param> &info) {
      return "depth" + std::to_string(std::get<0>(info.param)) + "_queue" +
             std::to_string(std::get<1>(info.param)) + "_fail" +
             std::to_string(std::get<2>(info.param)) +
             (std::get<3>(info.param) == SG_MODE_GRAPH ? "_graph" : "_streams");
    });

// Stopped with batches still in flight, then destroyed without a drain: no
// hang, no leak, no report after the destroy.
TEST(PipelineError, DestroyAfterStopWithoutDrain) {
  sgtest::LeakCheck leaks;
  const size_t n = 5000;
  Chain chain(SG_BACKEND_HOST, n, true);
  std::vector<std::unique_ptr<Batch>> batches;
  for (unsigned i = 0; i < 8; i++) batches.emplace_back(new Batch(chain, false, i));
  batches[1]->check.fail = true;
  Ctx ctx;
  ctx.chain = &chain;
  sg_pipeline_options o = pipetest::chain_options(&ctx, 3, SG_MODE_STREAMS);
  sg_pipeline *p = nullptr;
  SG_ASSERT_OK(sg_pipeline_create(chain.g, &o, &p));
  for (auto &bt : batches) {
    sg_pipeline_batch b = bt->desc(bt.get());
    if (sg_pipeline_submit(p, &b, nullptr) != SG_OK) break;
  }
  SG_ASSERT_OK(sg_pipeline_destroy(p));
  EXPECT_EQ(ctx.counters.teardowns, 3);
}

// A failure found by polling alone (no submit waits) is reported the same.
// Batch 2 may be refused if its try_submit already saw batch 1 fail.
TEST(PipelineError, FoundByPolling) {
  sgtest::LeakCheck leaks;
  const size_t n = 64;
  Chain chain(SG_BACKEND_HOST, n, true);
  pipetest::Batches set(chain, 3, [&](unsigned i) { return false; });
  std::vector<Batch *> &batches = set.list;
  batches[1]->check.fail = true;
  Ctx ctx;
  ctx.chain = &chain;
  ctx.rec.batches = &batches;
  sg_pipeline_options o = pipetest::chain_options(&ctx, 3, SG_MODE_GRAPH);
  sg_pipeline *p = nullptr;
  SG_ASSERT_OK(sg_pipeline_create(chain.g, &o, &p));
  size_t accepted = 0;
  for (auto *bt : batches) {
    sg_pipeline_batch b = bt->desc(bt);
    sg_status st = sg_pipeline_try_submit(p, &b, nullptr);
    if (st == SG_ERR_STOPPED && accepted == 2) break;
    EXPECT_EQ(st, SG_OK) << sg_last_error();
    accepted++;
  }
  sgtest::poll_until([&] {
    sg_pipeline_poll(p);
    return ctx.rec.order.size() >= accepted;
  });
  ASSERT_EQ(ctx.rec.order.size(), accepted);
  EXPECT_EQ(sg_pipeline_poll(p), SG_ERR_STOPPED);
  std::vector<sg_status> want = {SG_OK, SG_ERR_CALLBACK, SG_ERR_STOPPED};
  want.resize(accepted);
  EXPECT_EQ(ctx.rec.status, want);
  EXPECT_EQ(ctx.rec.output_errors[0], "");
  SG_EXPECT_OK(sg_pipeline_destroy(p));
}

}  // namespace
