// sg_exec_set_stream_fn on the CUDA backend, in streams mode and in graph
// mode (explicit and captured): each pipeline instance's stream function
// enqueues its own work (a cudaMemsetAsync of its own value into its own
// buffer); in graph mode the new function is captured and swapped into the
// instantiated graph in place. Each batch's result must carry the value of
// the instance that ran it; every descriptor is released exactly once.
#include <cuda_runtime_api.h>

#include <atomic>
#include <cstring>
#include <vector>

#include "sg_test_util.h"

namespace {

constexpr size_t kWords = 1 << 16;

struct Fill {
  uint32_t *dev = nullptr;  // the instance's buffer
  unsigned char value = 0;
  std::atomic<int> calls{0}, released{0};
};

int fill(void *stream, void *p) {
  Fill *f = static_cast<Fill *>(p);
  f->calls.fetch_add(1);
  return cudaMemsetAsync(f->dev, f->value, kWords * 4, static_cast<cudaStream_t>(stream)) ==
                 cudaSuccess
             ? 0
             : 1;
}
void release_fill(void *p) { static_cast<Fill *>(p)->released.fetch_add(1); }

struct State {
  sg_node fn, down;
  std::vector<Fill *> fills;
  int setup_failures = 0;
};

int setup(sg_pipeline_instance *inst, void *user) {
  auto *s = static_cast<State *>(user);
  Fill *f = new Fill;
  s->fills[inst->index] = f;
  f->value = static_cast<unsigned char>(0x10 + inst->index);
  if (cudaMalloc(reinterpret_cast<void **>(&f->dev), kWords * 4) != cudaSuccess) return 1;
  sg_stream_fn_desc d = {fill, f, release_fill, nullptr, "fill"};
  if (sg_exec_set_stream_fn(inst->exec, s->fn, &d) != SG_OK) {
    ADD_FAILURE() << "instance " << inst->index << ": " << sg_last_error();
    return 2;
  }
  sg_pipeline_bind b = sg_bind_copy_src(s->down, f->dev);
  return sg_pipeline_instance_bind(inst, &b, 1) == SG_OK ? 0 : 3;
}

struct Mode {
  const char *name;
  sg_exec_mode mode;
  sg_graph_build build;
};

class GpuStreamFnSet : public ::testing::TestWithParam<Mode> {};

TEST_P(GpuStreamFnSet, EachInstanceRunsItsOwnWork) {
  if (sg_cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
  const unsigned depth = 3, batches = 10;
  State s;
  s.fills.assign(depth, nullptr);
  Fill tmpl;
  tmpl.value = 0x77;
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void **>(&tmpl.dev), kWords * 4), cudaSuccess);
  // Pinned results: a pageable destination would be a staged copy, which
  // graph mode rebuilds for each new pointer (and recaptures the function).
  uint32_t *pinned = nullptr;
  ASSERT_EQ(cudaHostAlloc(reinterpret_cast<void **>(&pinned), batches * kWords * 4, cudaHostAllocDefault), cudaSuccess);
  std::memset(pinned, 0, batches * kWords * 4);
  auto out = [&](unsigned b) { return pinned + size_t(b) * kWords; };

  sgtest::Graph g;
  sg_stream_fn_desc d = {fill, &tmpl, release_fill, nullptr, "fill"};
  SG_ASSERT_OK(sg_graph_add_stream_fn(g, &d, nullptr, 0, &s.fn));
  sg_copy_desc c = {out(0), tmpl.dev, kWords * 4, SG_COPY_DEVICE_TO_HOST, "download"};
  SG_ASSERT_OK(sg_graph_add_copy(g, &c, &s.fn, 1, &s.down));

  sg_pipeline_options o;
  sg_pipeline_options_init(&o);
  o.depth = depth;
  o.exec.backend = SG_BACKEND_CUDA;
  o.exec.mode = GetParam().mode;
  o.exec.build = GetParam().build;
  o.setup = setup;
  o.user_data = &s;
  sg_pipeline *p = nullptr;
  SG_ASSERT_OK(sg_pipeline_create(g, &o, &p));
  SG_ASSERT_OK(sg_graph_destroy(g.g));
  g.g = nullptr;
  EXPECT_EQ(tmpl.released.load(), 1) << "every instance replaced the template";
  sg_pipeline_stats before;
  SG_ASSERT_OK(sg_pipeline_get_stats(p, &before));
  if (GetParam().mode == SG_MODE_GRAPH)
    EXPECT_EQ(before.rebuilds, 0u) << "the new function's capture replaces the child graph "
                                      "in place";

  for (unsigned b = 0; b < batches; b++) {
    sg_pipeline_bind bind = sg_bind_copy_dst(s.down, out(b));
    sg_pipeline_batch batch = {&bind, 1, nullptr};
    SG_ASSERT_OK(sg_pipeline_submit(p, &batch, nullptr));
  }
  SG_ASSERT_OK(sg_pipeline_drain(p));
  sg_pipeline_stats after;
  SG_ASSERT_OK(sg_pipeline_get_stats(p, &after));
  EXPECT_EQ(after.rebuilds, before.rebuilds) << "binds update in place";
  for (unsigned b = 0; b < batches; b++) {
    uint32_t v = 0x10 + b % depth;
    uint32_t want = v | v << 8 | v << 16 | v << 24;
    for (size_t i = 0; i < kWords; i += 997)
      ASSERT_EQ(out(b)[i], want) << "batch " << b << " word " << i;
  }
  for (unsigned i = 0; i < depth; i++) {
    unsigned runs = (batches - i + depth - 1) / depth;
    if (GetParam().mode == SG_MODE_GRAPH)
      EXPECT_EQ(s.fills[i]->calls.load(), 1) << "captured once, replayed";
    else
      EXPECT_EQ(s.fills[i]->calls.load(), int(runs)) << "called at every launch";
  }
  SG_ASSERT_OK(sg_pipeline_destroy(p));
  for (Fill *f : s.fills) {
    EXPECT_EQ(f->released.load(), 1);
    cudaFree(f->dev);
    delete f;
  }
  cudaFree(tmpl.dev);
  cudaFreeHost(pinned);
}

INSTANTIATE_TEST_SUITE_P(
    Cuda, GpuStreamFnSet,
    ::testing::Values(Mode{"streams", SG_MODE_STREAMS, SG_BUILD_EXPLICIT},
                      Mode{"graph_explicit", SG_MODE_GRAPH, SG_BUILD_EXPLICIT},
                      Mode{"graph_capture", SG_MODE_GRAPH, SG_BUILD_CAPTURE}),
    [](const ::testing::TestParamInfo<Mode> &i) { return std::string(i.param.name); });

}  // namespace
