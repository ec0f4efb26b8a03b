// Pipelines on the host backend: many batches at depths 1..4, in streams and
// graph mode, with pageable and pinned host buffers, give the serial
// reference's outputs; completions come in order, once each, only when the
// batch's output is in place; binding never re-plans.
#include <memory>
#include <thread>
#include <tuple>

#include "pipeline_fixture.h"

namespace {

using pipetest::Batch;
using pipetest::Chain;
using pipetest::Ctx;

// depth, batches, mode, pinned
using Param = std::tuple<unsigned, unsigned, sg_exec_mode, bool>;

class PipelineOutputs : public ::testing::TestWithParam<Param> {};

TEST_P(PipelineOutputs, EqualSerialReferenceInOrder) {
  sgtest::LeakCheck leaks;
  auto [depth, count, mode, pinned] = GetParam();
  const size_t n = 257; // odd, so nothing lines up by accident
  Chain chain(SG_BACKEND_HOST, n, false);
  pipetest::Batches set(chain, count, [&](unsigned i) { return pinned; });
  std::vector<Batch *> &batches = set.list;
  Ctx ctx;
  ctx.chain = &chain;
  ctx.rec.batches = &batches;
  sg_pipeline_options o = pipetest::chain_options(&ctx, depth, mode);
  sg_pipeline *p = nullptr;
  SG_ASSERT_OK(sg_pipeline_create(chain.g, &o, &p));
  EXPECT_EQ(ctx.counters.setups, static_cast<int>(depth));

  for (unsigned i = 0; i < count; i++) {
    sg_pipeline_batch b = batches[i]->desc(batches[i]);
    uint64_t index = ~0ull;
    SG_ASSERT_OK(sg_pipeline_submit(p, &b, &index));
    EXPECT_EQ(index, i);
    // Never more than depth x queue batches in flight.
    sg_pipeline_stats s;
    SG_ASSERT_OK(sg_pipeline_get_stats(p, &s));
    EXPECT_LE(s.submitted - s.reported, depth * s.queue);
  }
  SG_ASSERT_OK(sg_pipeline_drain(p));

  ASSERT_EQ(ctx.rec.order.size(), count);
  for (unsigned i = 0; i < count; i++) {
    EXPECT_EQ(ctx.rec.order[i], i) << "completions out of order";
    EXPECT_EQ(ctx.rec.status[i], SG_OK) << ctx.rec.messages[i];
    EXPECT_EQ(ctx.rec.output_errors[i], "") << "batch " << i << " reported before its output was right";
    EXPECT_EQ(batches[i]->mismatch(n), "") << "batch " << i;
  }
  sg_pipeline_stats s;
  SG_ASSERT_OK(sg_pipeline_get_stats(p, &s));
  EXPECT_EQ(s.depth, depth);
  EXPECT_EQ(s.submitted, count);
  EXPECT_EQ(s.reported, count);
  EXPECT_EQ(s.rebuilds, 0u) << "binding must never re-plan";
  // Setup binds 3 nodes per instance; each batch 3 more (one update per node).
  EXPECT_EQ(s.param_updates, 3u * depth + 3u * count);
  EXPECT_EQ(s.stopped, 0);
  EXPECT_EQ(s.queue, 2u) << "the default";
  EXPECT_LE(s.waits, count > depth * s.queue ? count - depth * s.queue : 0u);

  SG_ASSERT_OK(sg_pipeline_destroy(p));
  EXPECT_EQ(ctx.counters.teardowns, static_cast<int>(depth));
}

INSTANTIATE_TEST_SUITE_P(
    DepthsCountsModes, PipelineOutputs,
    ::testing::Combine(::testing::Values(1u, 2u, 3u, 4u), ::testing::Values(1u, 7u, 33u),
                       ::testing::Values(SG_MODE_STREAMS, SG_MODE_GRAPH),
                       ::testing::Values(false, true)),
    [](const ::testing::TestParamInfo<Param> &info) {
      return "depth" + std::to_string(std::get<0>(info.param)) + "_batches" +
             std::to_string(std::get<1>(info.param)) +
             (std::get<2>(info.param) == SG_MODE_GRAPH ? "_graph" : "_streams") +
             (std::get<3>(info.param) ? "_pinned" : "_pageable");
    });

// A diamond (two uploads -> mix -> download) runs each instance on several
// streams; instances must still not interfere.
TEST(Pipeline, DiamondOnSeveralStreamsPerInstance) {
  sgtest::LeakCheck leaks;
  const size_t n = 301;
  const unsigned depth = 3, count = 11;
  std::vector<uint32_t> ta(n), tb(n), tout(n);
  std::vector<void *> dev(3 * depth + 3);
  for (auto &d : dev) SG_ASSERT_OK(sg_mem_alloc(SG_BACKEND_HOST, SG_MEMORY_DEVICE, 0, n * 4, &d));
  sgtest::Graph g;
  sg_node ua, ub, mix, down;
  sg_copy_desc ca = {dev[0], ta.data(), n * 4, SG_COPY_HOST_TO_DEVICE, "up a"};
  sg_copy_desc cb = {dev[1], tb.data(), n * 4, SG_COPY_HOST_TO_DEVICE, "up b"};
  SG_ASSERT_OK(sg_graph_add_copy(g, &ca, nullptr, 0, &ua));
  SG_ASSERT_OK(sg_graph_add_copy(g, &cb, nullptr, 0, &ub));
  sg_kernel_call call;
  sg_kernels_mix_u32(&call, static_cast<uint32_t *>(dev[2]), static_cast<uint32_t *>(dev[0]),
                     static_cast<uint32_t *>(dev[1]), 0, n);
  sg_node both[] = {ua, ub};
  SG_ASSERT_OK(sg_graph_add_kernel(g, &call.desc, both, 2, &mix));
  sg_copy_desc cd = {tout.data(), dev[2], n * 4, SG_COPY_DEVICE_TO_HOST, "down"};
  SG_ASSERT_OK(sg_graph_add_copy(g, &cd, &mix, 1, &down));

  struct Setup {
    std::vector<void *> *dev;
    sg_node ua, ub, mix, down;
  } setup{&dev, ua, ub, mix, down};
  sg_pipeline_options o;
  sg_pipeline_options_init(&o);
  o.depth = depth;
  o.exec.backend = SG_BACKEND_HOST;
  o.exec.max_streams = 2;
  o.user_data = &setup;
  o.setup = [](sg_pipeline_instance *inst, void *user) -> int {
    auto *s = static_cast<Setup *>(user);
    void **d = &(*s->dev)[3 + 3 * inst->index];
    sg_pipeline_bind binds[] = {
        sg_bind_copy_dst(s->ua, d[0]),
        sg_bind_copy_dst(s->ub, d[1]),
        sg_bind_kernel_arg(s->mix, 0, &d[2], sizeof(void *)),
        sg_bind_kernel_arg(s->mix, 1, &d[0], sizeof(void *)),
        sg_bind_kernel_arg(s->mix, 2, &d[1], sizeof(void *)),
        sg_bind_copy_src(s->down, d[2]),
    };
    return sg_pipeline_instance_bind(inst, binds, 6) == SG_OK ? 0 : 1;
  };
  sg_pipeline *p = nullptr;
  SG_ASSERT_OK(sg_pipeline_create(g, &o, &p));
  sg_pipeline_instance inst;
  SG_ASSERT_OK(sg_pipeline_get_instance(p, 1, &inst));
  sg_exec_info info;
  SG_ASSERT_OK(sg_exec_get_info(inst.exec, &info));
  EXPECT_EQ(info.stream_count, 2u);

  std::vector<std::vector<uint32_t>> a(count, std::vector<uint32_t>(n)), b = a, out = a;
  std::vector<uint32_t> salts(count);
  for (unsigned i = 0; i < count; i++) {
    for (size_t j = 0; j < n; j++) {
      a[i][j] = sg_kernels_mix(i, j, 1);
      b[i][j] = sg_kernels_mix(i, j, 2);
      out[i][j] = pipetest::kPoison;
    }
    salts[i] = 1000 + i;
    sg_pipeline_bind binds[] = {
        sg_bind_copy_src(ua, a[i].data()),
        sg_bind_copy_src(ub, b[i].data()),
        sg_bind_kernel_arg(mix, 3, &salts[i], sizeof salts[i]),
        sg_bind_copy_dst(down, out[i].data()),
    };
    sg_pipeline_batch batch = {binds, 4, nullptr};
    SG_ASSERT_OK(sg_pipeline_submit(p, &batch, nullptr));
  }
  SG_ASSERT_OK(sg_pipeline_drain(p));
  for (unsigned i = 0; i < count; i++)
    for (size_t j = 0; j < n; j++)
      ASSERT_EQ(out[i][j], sg_kernels_mix(a[i][j], b[i][j], salts[i])) << "batch " << i << " element " << j;
  sg_pipeline_stats s;
  SG_ASSERT_OK(sg_pipeline_get_stats(p, &s));
  EXPECT_EQ(s.rebuilds, 0u);
  SG_ASSERT_OK(sg_pipeline_destroy(p));
  for (auto d : dev) sg_mem_free(d);
}

// wait(index) reports everything up to the index and no further than needed;
// poll reports what is done without blocking; a batch can be waited twice.
TEST(Pipeline, WaitOnIndexAndPoll) {
  sgtest::LeakCheck leaks;
  const size_t n = 64;
  const unsigned count = 9;
  Chain chain(SG_BACKEND_HOST, n, false);
  pipetest::Batches set(chain, count, [&](unsigned i) { return false; });
  std::vector<Batch *> &batches = set.list;
  Ctx ctx;
  ctx.chain = &chain;
  ctx.rec.batches = &batches;
  sg_pipeline_options o = pipetest::chain_options(&ctx, 4, SG_MODE_STREAMS);
  sg_pipeline *p = nullptr;
  SG_ASSERT_OK(sg_pipeline_create(chain.g, &o, &p));
  for (unsigned i = 0; i < 4; i++) {
    sg_pipeline_batch b = batches[i]->desc(batches[i]);
    SG_ASSERT_OK(sg_pipeline_submit(p, &b, nullptr));
  }
  SG_ASSERT_OK(sg_pipeline_wait(p, 2));
  ASSERT_GE(ctx.rec.order.size(), 3u);
  EXPECT_EQ(batches[2]->mismatch(n), "");
  SG_ASSERT_OK(sg_pipeline_wait(p, 1)); // already reported: still OK
  EXPECT_EQ(sg_pipeline_wait(p, 4), SG_ERR_INVALID_ARGUMENT) << "batch 4 is not submitted";
  EXPECT_NE(std::string(sg_last_error()).find("batch 4"), std::string::npos) << sg_last_error();
  for (unsigned i = 4; i < count; i++) {
    sg_pipeline_batch b = batches[i]->desc(batches[i]);
    SG_ASSERT_OK(sg_pipeline_submit(p, &b, nullptr));
  }
  // Poll until everything is reported (the host backend finishes on its own).
  sg_status polled = SG_OK;
  sgtest::poll_until([&] {
    polled = sg_pipeline_poll(p);
    return polled != SG_OK || ctx.rec.order.size() >= count;
  });
  SG_ASSERT_OK(polled);
  SG_ASSERT_OK(sg_pipeline_drain(p));
  ASSERT_EQ(ctx.rec.order.size(), count);
  for (unsigned i = 0; i < count; i++) {
    EXPECT_EQ(ctx.rec.order[i], i);
    EXPECT_EQ(ctx.rec.output_errors[i], "");
  }
  SG_ASSERT_OK(sg_pipeline_destroy(p));
}

// The graph is a template: destroying it after creation changes nothing,
// and a pipeline without setup runs on the graph's own buffers (depth 1).
TEST(Pipeline, GraphMayGoAwayAndSetupIsOptional) {
  sgtest::LeakCheck leaks;
  const size_t n = 100;
  auto chain = std::make_unique<Chain>(SG_BACKEND_HOST, n, false);
  sg_pipeline_options o;
  sg_pipeline_options_init(&o);
  o.depth = 1;
  o.exec.backend = SG_BACKEND_HOST;
  sg_pipeline *p = nullptr;
  SG_ASSERT_OK(sg_pipeline_create(chain->g, &o, &p));
  sg_graph_destroy(chain->g);
  chain->g = nullptr;
  std::vector<std::unique_ptr<Batch>> batches;
  for (unsigned i = 0; i < 5; i++) {
    batches.emplace_back(new Batch(*chain, false, i));
    sg_pipeline_batch b = batches.back()->desc();
    SG_ASSERT_OK(sg_pipeline_submit(p, &b, nullptr));
  }
  SG_ASSERT_OK(sg_pipeline_drain(p));
  for (auto &b : batches) EXPECT_EQ(b->mismatch(n), "");
  SG_ASSERT_OK(sg_pipeline_destroy(p));
}

// The bind callback runs after the binds, on an idle instance, and can make
// any parameter change; when it fails, the batch is refused and the pipeline
// goes on with the same index.
TEST(Pipeline, BindCallback) {
  sgtest::LeakCheck leaks;
  const size_t n = 50;
  Chain chain(SG_BACKEND_HOST, n, false);
  struct State {
    Chain *chain;
    std::vector<uint64_t> seen;
    bool fail_next = false;
    Ctx ctx; // for the fixture's setup and teardown
  } state{&chain, {}, false, {}};
  state.ctx.chain = &chain;
  sg_pipeline_options o;
  sg_pipeline_options_init(&o);
  o.depth = 2;
  o.exec.backend = SG_BACKEND_HOST;
  o.user_data = &state;
  // Each instance needs its own device buffer: two run at once.
  o.setup = [](sg_pipeline_instance *inst, void *user) {
    return pipetest::chain_setup(inst, &static_cast<State *>(user)->ctx);
  };
  o.teardown = [](sg_pipeline_instance *inst, void *user) {
    pipetest::chain_teardown(inst, &static_cast<State *>(user)->ctx);
  };
  // Binds the rounds (argument 2) itself: batch_data points at the value.
  o.bind = [](sg_pipeline_instance *inst, uint64_t batch, void *batch_data, void *user) -> int {
    auto *s = static_cast<State *>(user);
    if (s->fail_next) {
      s->fail_next = false;
      return 42;
    }
    s->seen.push_back(batch);
    sg_pipeline_bind b = sg_bind_kernel_arg(s->chain->k, 2, batch_data, sizeof(uint32_t));
    return sg_pipeline_instance_bind(inst, &b, 1) == SG_OK ? 0 : 1;
  };
  sg_pipeline *p = nullptr;
  SG_ASSERT_OK(sg_pipeline_create(chain.g, &o, &p));
  std::vector<std::unique_ptr<Batch>> batches;
  for (unsigned i = 0; i < 6; i++) {
    batches.emplace_back(new Batch(chain, false, i));
    Batch &bt = *batches.back();
    bt.binds.pop_back(); // the callback binds the rounds
    bt.rounds = 5 + i;
    sg_pipeline_batch b = bt.desc(&bt.rounds);
    if (i == 3) {
      state.fail_next = true;
      EXPECT_EQ(sg_pipeline_submit(p, &b, nullptr), SG_ERR_CALLBACK);
      EXPECT_NE(std::string(sg_last_error()).find("returned 42"), std::string::npos) << sg_last_error();
    }
    uint64_t index = 0;
    SG_ASSERT_OK(sg_pipeline_submit(p, &b, &index));
    EXPECT_EQ(index, i) << "a refused batch must not use up an index";
  }
  SG_ASSERT_OK(sg_pipeline_drain(p));
  for (auto &b : batches) EXPECT_EQ(b->mismatch(n), "");
  EXPECT_EQ(state.seen, (std::vector<uint64_t>{0, 1, 2, 3, 4, 5}));
  sg_pipeline_stats s;
  SG_ASSERT_OK(sg_pipeline_get_stats(p, &s));
  EXPECT_EQ(s.stopped, 0);
  EXPECT_EQ(s.rebuilds, 0u);
  SG_ASSERT_OK(sg_pipeline_destroy(p));
}

}  // namespace
