// The host backend takes the caller's CUDA stream as the CUDA backends do: a
// launch starts after the work already in the stream, and the stream's later
// work waits for the launch's end (a host function opens the launch's gate;
// the stream waits on the GPU for a flag the host raises).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "gpu_util.h"

namespace {

using namespace gputest;

// One round trip through the stream: the GPU copies the device counter to
// `in`; the host node reads it, records it and writes counter + 1 to `out`;
// the GPU copies `out` back into the counter. Any ordering mistake, either
// way, breaks the sequence of recorded values.
struct Relay {
  volatile uint32_t *in = nullptr;
  volatile uint32_t *out = nullptr;
  std::vector<uint32_t> seen;
  std::mt19937 rng{20261201};
};

int relay(void *p) {
  auto *r = static_cast<Relay *>(p);
  uint32_t v = *r->in;
  r->seen.push_back(v);
  // A little delay now and then widens any race with the stream's next copy.
  if (r->rng() % 4 == 0) std::this_thread::sleep_for(std::chrono::microseconds(r->rng() % 2000));
  *r->out = v + 1;
  return 0;
}

struct Case {
  const char *name;
  sg_exec_mode mode;
  bool legacy;  // SG_STREAM_LEGACY instead of a stream of the test's own
};
void PrintTo(const Case &c, std::ostream *os) { *os << c.name; }

class GpuHostStream : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override { SG_SKIP_WITHOUT_GPU(); }
};

TEST_P(GpuHostStream, LaunchesAreOrderedBothWaysWithTheStream) {
  const Case c = GetParam();
  const int rounds = 200;
  DevMem counter(4);
  PinnedMem in(4), out(4);
  CUDA_ASSERT(cudaMemset(counter.p, 0, 4));
  CUDA_ASSERT(cudaDeviceSynchronize());
  Relay r;
  r.in = in.as<volatile uint32_t>();
  r.out = out.as<volatile uint32_t>();
  sgtest::Graph g;
  sg_host_desc h = {relay, &r, "relay"};
  SG_ASSERT_OK(sg_graph_add_host(g, &h, nullptr, 0, nullptr));
  sg_exec_options o;
  sg_exec_options_init(&o);
  o.backend = SG_BACKEND_HOST;
  o.mode = c.mode;
  sgtest::Exec e;
  SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));

  cudaStream_t s = cudaStreamLegacy;
  if (!c.legacy) CUDA_ASSERT(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  void *stream = c.legacy ? SG_STREAM_LEGACY : static_cast<void *>(s);
  for (int i = 0; i < rounds; i++) {
    CUDA_ASSERT(cudaMemcpyAsync(in.p, counter.p, 4, cudaMemcpyDeviceToHost, s));
    SCOPED_TRACE(i);
    SG_ASSERT_OK(sg_exec_launch(e, stream));
    CUDA_ASSERT(cudaMemcpyAsync(counter.p, out.p, 4, cudaMemcpyHostToDevice, s));
  }
  uint32_t final_value = 0;
  CUDA_ASSERT(cudaMemcpyAsync(&final_value, counter.p, 4, cudaMemcpyDeviceToHost, s));
  CUDA_ASSERT(cudaStreamSynchronize(s));  // needs every launch's end: no sg_exec_wait first
  EXPECT_EQ(sg_exec_query(e), SG_OK) << "the stream finished before the launches";
  SG_ASSERT_OK(sg_exec_wait(e));
  EXPECT_EQ(final_value, static_cast<uint32_t>(rounds));
  ASSERT_EQ(r.seen.size(), static_cast<size_t>(rounds));
  for (int i = 0; i < rounds; i++) ASSERT_EQ(r.seen[i], static_cast<uint32_t>(i)) << "round " << i;
  sg_exec_stats stats;
  SG_ASSERT_OK(sg_exec_get_stats(e, &stats));
  EXPECT_EQ(stats.launches, static_cast<uint64_t>(rounds));
  if (!c.legacy) CUDA_ASSERT(cudaStreamDestroy(s));
}

INSTANTIATE_TEST_SUITE_P(
    Ways, GpuHostStream,
    ::testing::Values(Case{"streams", SG_MODE_STREAMS, false}, Case{"graph", SG_MODE_GRAPH, false},
                      Case{"legacy_stream", SG_MODE_STREAMS, true}),
    [](const ::testing::TestParamInfo<Case> &i) { return std::string(i.param.name); });

// Launches with and without a stream mix: they still run in launch order.
TEST(GpuHostStreamMixed, NullAndStreamLaunchesRunInOrder) {
  SG_SKIP_WITHOUT_GPU();
  DevMem spin(4096);
  std::vector<int> order;
  sgtest::Graph g;
  sg_host_desc h = {[](void *p) {
                      auto *v = static_cast<std::vector<int> *>(p);
                      v->push_back(static_cast<int>(v->size()));
                      return 0;
                    },
                    &order, "append"};
  SG_ASSERT_OK(sg_graph_add_host(g, &h, nullptr, 0, nullptr));
  sg_exec_options o;
  sg_exec_options_init(&o);
  o.backend = SG_BACKEND_HOST;
  sgtest::Exec e;
  SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
  cudaStream_t s;
  CUDA_ASSERT(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  // The stream is busy for 100 ms: the stream launch waits, and so does the
  // NULL launch made after it.
  CUDA_ASSERT(gt_launch_slow_fill(spin.u32(), 1, 1, 100u * 1000 * 1000, s));
  SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  SG_ASSERT_OK(sg_exec_launch(e, s));
  SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  EXPECT_EQ(sg_exec_query(e), SG_NOT_READY);
  SG_ASSERT_OK(sg_exec_wait(e));
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2}));
  CUDA_ASSERT(cudaStreamSynchronize(s));
  CUDA_ASSERT(cudaStreamDestroy(s));
}

// SG_BACKEND=host makes AUTO the host backend, which takes the stream.
TEST(GpuHostStreamMixed, ForcedHostBackendTakesTheStream) {
  SG_SKIP_WITHOUT_GPU();
  const char *saved = std::getenv("SG_BACKEND");
  std::string keep = saved ? saved : "";
  setenv("SG_BACKEND", "host", 1);
  int runs = 0;
  sgtest::Graph g;
  sg_host_desc h = {[](void *p) {
                      ++*static_cast<int *>(p);
                      return 0;
                    },
                    &runs, "count"};
  SG_ASSERT_OK(sg_graph_add_host(g, &h, nullptr, 0, nullptr));
  sg_exec_options o;
  sg_exec_options_init(&o);  // backend AUTO
  sgtest::Exec e;
  sg_status st = sg_exec_create(g, &o, &e.e);
  if (saved) setenv("SG_BACKEND", keep.c_str(), 1); else unsetenv("SG_BACKEND");
  SG_ASSERT_OK(st);
  sg_exec_info info;
  SG_ASSERT_OK(sg_exec_get_info(e, &info));
  EXPECT_EQ(info.backend, SG_BACKEND_HOST);
  cudaStream_t s;
  CUDA_ASSERT(cudaStreamCreate(&s));
  SG_ASSERT_OK(sg_exec_launch(e, s));
  CUDA_ASSERT(cudaStreamSynchronize(s));
  EXPECT_EQ(runs, 1);
  SG_ASSERT_OK(sg_exec_wait(e));
  CUDA_ASSERT(cudaStreamDestroy(s));
}

// A stream being captured is refused, and the executable stays usable.
TEST(GpuHostStreamMixed, CaptureIsRefused) {
  SG_SKIP_WITHOUT_GPU();
  int runs = 0;
  sgtest::Graph g;
  sg_host_desc h = {[](void *p) {
                      ++*static_cast<int *>(p);
                      return 0;
                    },
                    &runs, "count"};
  SG_ASSERT_OK(sg_graph_add_host(g, &h, nullptr, 0, nullptr));
  sg_exec_options o;
  sg_exec_options_init(&o);
  o.backend = SG_BACKEND_HOST;
  sgtest::Exec e;
  SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
  cudaStream_t s;
  CUDA_ASSERT(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  CUDA_ASSERT(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  EXPECT_EQ(sg_exec_launch(e, s), SG_ERR_UNSUPPORTED);
  EXPECT_NE(std::string(sg_last_error()).find("captured"), std::string::npos) << sg_last_error();
  cudaGraph_t graph = nullptr;
  CUDA_ASSERT(cudaStreamEndCapture(s, &graph));
  if (graph) CUDA_ASSERT(cudaGraphDestroy(graph));
  SG_ASSERT_OK(sg_exec_launch(e, s));
  SG_ASSERT_OK(sg_exec_wait(e));
  EXPECT_EQ(runs, 1);
  CUDA_ASSERT(cudaStreamSynchronize(s));
  CUDA_ASSERT(cudaStreamDestroy(s));
}

// Many executables linked to streams at once, destroyed and made again:
// flag slots are reused without confusing a later executable.
TEST(GpuHostStreamMixed, ManyLinkedExecutablesComeAndGo) {
  SG_SKIP_WITHOUT_GPU();
  std::atomic<int> runs{0};
  sgtest::Graph g;
  sg_host_desc h = {[](void *p) {
                      static_cast<std::atomic<int> *>(p)->fetch_add(1);
                      return 0;
                    },
                    &runs, "count"};
  SG_ASSERT_OK(sg_graph_add_host(g, &h, nullptr, 0, nullptr));
  sg_exec_options o;
  sg_exec_options_init(&o);
  o.backend = SG_BACKEND_HOST;
  cudaStream_t s;
  CUDA_ASSERT(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  for (int generation = 0; generation < 3; generation++) {
    std::vector<sg_exec *> execs(40, nullptr);
    for (auto &e : execs) SG_ASSERT_OK(sg_exec_create(g, &o, &e));
    for (int k = 0; k < 5; k++)
      for (auto e : execs) SG_ASSERT_OK(sg_exec_launch(e, s));
    CUDA_ASSERT(cudaStreamSynchronize(s));
    for (auto e : execs) SG_ASSERT_OK(sg_exec_destroy(e));
  }
  EXPECT_EQ(runs.load(), 3 * 40 * 5);
  CUDA_ASSERT(cudaStreamDestroy(s));
}

}  // namespace

// A caller captures a streams-mode launch into a CUDA graph of its own, then
// replays it. The launch's end was marked under the capture, where an event
// marks nothing: the executable must neither wait on that mark (CUDA
// refuses, invalid argument) nor fail because of it. Waits, queries and
// destruction succeed, and the caller's graph does the launch's work each
// replay. A graph-mode launch into a capture is refused with the capture
// left valid (CUDA takes no graph launch there).
class GpuCapturedLaunch : public gputest::ModeTest {};

TEST_P(GpuCapturedLaunch, MarksRecordedUnderCaptureAreNotWaitedOn) {
  constexpr size_t kWords = 4096;
  gputest::DevMem dev(kWords * 4);
  std::vector<uint32_t> host(kWords);
  sgtest::Graph g;
  sg_memset_desc m = {dev.p, 0x5a5a5a5au, 4, kWords, "fill"};
  SG_ASSERT_OK(sg_graph_add_memset(g, &m, nullptr, 0, nullptr));
  sg_exec_options o = options();
  sg_exec *e = nullptr;
  SG_ASSERT_OK(sg_exec_create(g, &o, &e));
  // An uncaptured launch first, so that the mark ring holds a real mark.
  SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  SG_ASSERT_OK(sg_exec_wait(e));
  cudaStream_t s;
  CUDA_ASSERT(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  CUDA_ASSERT(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  if (graph_mode()) {
    // CUDA takes no graph launch into a capture: refused, the capture intact.
    EXPECT_EQ(sg_exec_launch(e, s), SG_ERR_UNSUPPORTED);
    EXPECT_NE(std::string(sg_last_error()).find("captured"), std::string::npos)
        << sg_last_error();
    CUDA_ASSERT(cudaMemsetAsync(dev.p, 0x5a, kWords * 4, s));  // the caller's own work
  } else {
    SG_ASSERT_OK(sg_exec_launch(e, s));
  }
  cudaGraph_t graph = nullptr;
  CUDA_ASSERT(cudaStreamEndCapture(s, &graph));
  ASSERT_NE(graph, nullptr);
  cudaGraphExec_t replay = nullptr;
  CUDA_ASSERT(cudaGraphInstantiate(&replay, graph, 0));
  for (int round = 0; round < 2; round++) {
    CUDA_ASSERT(cudaMemset(dev.p, 0, kWords * 4));
    CUDA_ASSERT(cudaDeviceSynchronize());  // s is non-blocking: it would not wait
    CUDA_ASSERT(cudaGraphLaunch(replay, s));
    CUDA_ASSERT(cudaStreamSynchronize(s));
    CUDA_ASSERT(cudaMemcpy(host.data(), dev.p, kWords * 4, cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < kWords; i++) ASSERT_EQ(host[i], 0x5a5a5a5au) << "word " << i;
  }
  if (!graph_mode()) {
    SG_EXPECT_OK(sg_exec_wait(e));
    SG_EXPECT_OK(sg_exec_query(e));
    // The executable still works after the capture.
    CUDA_ASSERT(cudaMemset(dev.p, 0, kWords * 4));
    CUDA_ASSERT(cudaDeviceSynchronize());
    SG_EXPECT_OK(sg_exec_launch(e, nullptr));
    SG_EXPECT_OK(sg_exec_wait(e));
    CUDA_ASSERT(cudaMemcpy(host.data(), dev.p, kWords * 4, cudaMemcpyDeviceToHost));
    EXPECT_EQ(host[kWords - 1], 0x5a5a5a5au);
  }
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  SG_EXPECT_OK(sg_exec_destroy(e));
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  CUDA_ASSERT(cudaGraphExecDestroy(replay));
  CUDA_ASSERT(cudaGraphDestroy(graph));
  CUDA_ASSERT(cudaStreamDestroy(s));
}

INSTANTIATE_TEST_SUITE_P(Modes, GpuCapturedLaunch, ::testing::ValuesIn(gputest::all_modes()),
                         gputest::mode_name);
