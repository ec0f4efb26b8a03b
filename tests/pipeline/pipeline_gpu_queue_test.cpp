// Queue-ahead on the GPU (label gpu; skipped without a device): launches
// queued behind a held one keep the kernel arguments and copy pointers they
// were launched with, in streams and graph mode, into the executable's own
// stream and into the legacy stream; each launch is waited for alone; a
// host node failing in a queued launch is attributed to that launch and
// the launches behind it end without running host work; a pipeline queues
// a second batch per instance without blocking.
#include <chrono>
#include <thread>
#include <tuple>

#include "pipeline_fixture.h"

namespace {

using pipetest::Gate;

#define SKIP_WITHOUT_GPU()                                               \
  do {                                                                   \
    if (sg_cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device"; \
  } while (0)

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

struct Flag {
  std::atomic<int> runs{0};
  bool fail = false;
};

int flag_fn(void *p) {
  auto *f = static_cast<Flag *>(p);
  f->runs++;
  return f->fail ? 11 : 0;
}

// gate (host) -> fill(dev, value) -> copy dev -> host slot -> flag (host)
struct FillGraph {
  static constexpr size_t n = 1 << 16;
  sgtest::Graph g;
  sg_node gate{}, fill{}, copy{}, flag{};
  uint32_t *dev = nullptr;
  uint32_t *host = nullptr; // pinned, 4 slots of n
  Gate tmpl_gate;
  Flag tmpl_flag;
  FillGraph() {
    void *p = nullptr;
    EXPECT_EQ(sg_mem_alloc(SG_BACKEND_CUDA, SG_MEMORY_DEVICE, 0, n * 4, &p), SG_OK) << sg_last_error();
    dev = static_cast<uint32_t *>(p);
    EXPECT_EQ(sg_mem_alloc(SG_BACKEND_CUDA, SG_MEMORY_HOST_PINNED, 0, 4 * n * 4, &p), SG_OK)
        << sg_last_error();
    host = static_cast<uint32_t *>(p);
    for (size_t i = 0; i < 4 * n; i++) host[i] = pipetest::kPoison;
    tmpl_gate.open = true;
    sg_host_desc h = {pipetest::gate_fn, &tmpl_gate, "gate"};
    EXPECT_EQ(sg_graph_add_host(g, &h, nullptr, 0, &gate), SG_OK) << sg_last_error();
    sg_kernel_call call;
    sg_kernels_fill_u32(&call, dev, 0, n);
    call.desc.name = "fill";
    EXPECT_EQ(sg_graph_add_kernel(g, &call.desc, &gate, 1, &fill), SG_OK) << sg_last_error();
    sg_copy_desc c = {host, dev, n * 4, SG_COPY_DEVICE_TO_HOST, "copy"};
    EXPECT_EQ(sg_graph_add_copy(g, &c, &fill, 1, &copy), SG_OK) << sg_last_error();
    sg_host_desc f = {flag_fn, &tmpl_flag, "flag"};
    EXPECT_EQ(sg_graph_add_host(g, &f, &copy, 1, &flag), SG_OK) << sg_last_error();
  }
  ~FillGraph() {
    sg_mem_free(dev);
    sg_mem_free(host);
  }
  // Binds launch i (0-based): fill value 100 + i, into host slot i.
  void bind(sg_exec *e, unsigned i, Gate *g, Flag *f) {
    sg_host_desc h = {pipetest::gate_fn, g, nullptr};
    ASSERT_EQ(sg_exec_set_host(e, gate, &h), SG_OK) << sg_last_error();
    sg_kernel_call call;
    sg_kernels_fill_u32(&call, dev, 100 + i, n);
    ASSERT_EQ(sg_exec_set_kernel(e, fill, &call.desc), SG_OK) << sg_last_error();
    sg_copy_desc c = {host + i * n, dev, n * 4, SG_COPY_DEVICE_TO_HOST, nullptr};
    ASSERT_EQ(sg_exec_set_copy(e, copy, &c), SG_OK) << sg_last_error();
    sg_host_desc fl = {flag_fn, f, nullptr};
    ASSERT_EQ(sg_exec_set_host(e, flag, &fl), SG_OK) << sg_last_error();
  }
  std::string slot_mismatch(unsigned i) const {
    for (size_t j = 0; j < n; j++)
      if (host[i * n + j] != 100 + i)
        return "slot " + std::to_string(i) + " element " + std::to_string(j) + ": " +
               std::to_string(host[i * n + j]);
    return "";
  }
};

// mode, stream: 0 the executable's own, 1 the legacy default stream
using Param = std::tuple<sg_exec_mode, int>;
class ExecGpuQueue : public ::testing::TestWithParam<Param> {};

TEST_P(ExecGpuQueue, QueuedLaunchesKeepTheirParameters) {
  SKIP_WITHOUT_GPU();
  auto [mode, legacy] = GetParam();
  void *stream = legacy ? SG_STREAM_LEGACY : nullptr;
  FillGraph fg;
  sg_exec_options o;
  sg_exec_options_init(&o);
  o.backend = SG_BACKEND_CUDA;
  o.mode = mode;
  sgtest::Exec e;
  SG_ASSERT_OK(sg_exec_create(fg.g, &o, &e.e));
  Gate hold;
  Gate open[3];
  Flag flags[3];
  for (auto &g : open) g.open = true;
  for (unsigned i = 0; i < 3; i++) {
    fg.bind(e, i, i == 0 ? &hold : &open[i], &flags[i]);
    SG_ASSERT_OK(sg_exec_launch(e, stream));
  }
  EXPECT_EQ(sg_exec_query_launch(e, 1), SG_NOT_READY) << "launch 1 is held by its gate";
  EXPECT_EQ(sg_exec_query_launch(e, 3), SG_NOT_READY);
  hold.release();
  SG_ASSERT_OK(sg_exec_wait_launch(e, 1));
  EXPECT_EQ(fg.slot_mismatch(0), "");
  SG_ASSERT_OK(sg_exec_wait_launch(e, 3));
  for (unsigned i = 0; i < 3; i++) {
    EXPECT_EQ(fg.slot_mismatch(i), "") << "launch " << i + 1;
    EXPECT_EQ(flags[i].runs, 1) << "launch " << i + 1;
  }
  SG_EXPECT_OK(sg_exec_query_launch(e, 2));
  SG_EXPECT_OK(sg_exec_wait(e));
  sg_exec_stats st;
  SG_ASSERT_OK(sg_exec_get_stats(e, &st));
  EXPECT_EQ(st.launches, 3u);
  EXPECT_EQ(st.rebuilds, 0u) << "pinned and device pointers update in place";
}

TEST_P(ExecGpuQueue, FailureInAQueuedLaunch) {
  SKIP_WITHOUT_GPU();
  auto [mode, legacy] = GetParam();
  void *stream = legacy ? SG_STREAM_LEGACY : nullptr;
  FillGraph fg;
  sg_exec_options o;
  sg_exec_options_init(&o);
  o.backend = SG_BACKEND_CUDA;
  o.mode = mode;
  sgtest::Exec e;
  SG_ASSERT_OK(sg_exec_create(fg.g, &o, &e.e));
  Gate hold;
  Gate open[3];
  Flag flags[3];
  for (auto &g : open) g.open = true;
  flags[1].fail = true;
  for (unsigned i = 0; i < 3; i++) {
    fg.bind(e, i, i == 0 ? &hold : &open[i], &flags[i]);
    SG_ASSERT_OK(sg_exec_launch(e, stream));
  }
  hold.release();
  SG_EXPECT_OK(sg_exec_wait_launch(e, 1));
  EXPECT_EQ(sg_exec_wait_launch(e, 2), SG_ERR_CALLBACK);
  std::string msg = sg_last_error();
  EXPECT_TRUE(contains(msg, "launch 2")) << msg;
  EXPECT_TRUE(contains(msg, "'flag'")) << msg;
  EXPECT_EQ(sg_exec_wait_launch(e, 3), SG_ERR_EXEC_FAILED);
  EXPECT_TRUE(contains(sg_last_error(), "launch 2")) << sg_last_error();
  EXPECT_EQ(sg_exec_wait(e), SG_ERR_CALLBACK);
  EXPECT_EQ(flags[0].runs, 1);
  EXPECT_EQ(flags[1].runs, 1);
  EXPECT_EQ(flags[2].runs, 0) << "a launch queued behind the failure runs no host work";
  EXPECT_EQ(fg.slot_mismatch(0), "");
}

INSTANTIATE_TEST_SUITE_P(
    ModesStreams, ExecGpuQueue,
    ::testing::Combine(::testing::Values(SG_MODE_STREAMS, SG_MODE_GRAPH), ::testing::Values(0, 1)),
    [](const ::testing::TestParamInfo<Param> &info) {
      return std::string(std::get<0>(info.param) == SG_MODE_GRAPH ? "graph" : "streams") +
             (std::get<1>(info.param) ? "_legacy" : "_own");
    });

// Depth 1, queue 2: batch 1 is queued (try_submit succeeds) while batch 0
// is held; batch 2 would block; each batch gets its own output.
class PipelineGpuQueue : public ::testing::TestWithParam<sg_exec_mode> {};

TEST_P(PipelineGpuQueue, SecondBatchQueuedWhileTheFirstRuns) {
  SKIP_WITHOUT_GPU();
  sgtest::LeakCheck leaks;
  FillGraph fg;
  sg_pipeline_options o;
  sg_pipeline_options_init(&o);
  o.depth = 1;
  o.queue = 2;
  o.exec.backend = SG_BACKEND_CUDA;
  o.exec.mode = GetParam();
  sg_pipeline *p = nullptr;
  SG_ASSERT_OK(sg_pipeline_create(fg.g, &o, &p));
  Gate hold, open[3];
  Flag flags[3];
  for (auto &g : open) g.open = true;
  std::vector<uint32_t> values = {100, 101, 102};
  auto submit = [&](unsigned i, bool blocking) {
    sg_pipeline_bind binds[] = {
        sg_bind_host_data(fg.gate, i == 0 ? &hold : &open[i]),
        sg_bind_kernel_arg(fg.fill, 1, &values[i], sizeof values[i]),
        sg_bind_copy_dst(fg.copy, fg.host + i * FillGraph::n),
        sg_bind_host_data(fg.flag, &flags[i]),
    };
    sg_pipeline_batch b = {binds, 4, nullptr};
    return blocking ? sg_pipeline_submit(p, &b, nullptr) : sg_pipeline_try_submit(p, &b, nullptr);
  };
  SG_ASSERT_OK(submit(0, false));
  SG_ASSERT_OK(submit(1, false));
  EXPECT_EQ(submit(2, false), SG_ERR_WOULD_BLOCK) << sg_last_error();
  std::thread opener([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    hold.release();
  });
  SG_EXPECT_OK(submit(2, true));
  opener.join();
  SG_ASSERT_OK(sg_pipeline_drain(p));
  for (unsigned i = 0; i < 3; i++) EXPECT_EQ(fg.slot_mismatch(i), "") << "batch " << i;
  sg_pipeline_stats s;
  SG_ASSERT_OK(sg_pipeline_get_stats(p, &s));
  EXPECT_EQ(s.rebuilds, 0u);
  SG_ASSERT_OK(sg_pipeline_destroy(p));
}

INSTANTIATE_TEST_SUITE_P(Modes, PipelineGpuQueue, ::testing::Values(SG_MODE_STREAMS, SG_MODE_GRAPH),
                         [](const ::testing::TestParamInfo<sg_exec_mode> &info) {
                           return std::string(info.param == SG_MODE_GRAPH ? "graph" : "streams");
                         });

}  // namespace
