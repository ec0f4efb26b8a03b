// Fault injection through a pipeline on the GPU (label gpu): every CUDA call
// and every allocation made while creating a pipeline, binding, launching,
// reporting and destroying fails in turn. Each failure comes back as a
// status (a launch that fails stops the pipeline at that batch) or is
// absorbed by design (a pointer query that fails makes a copy "pageable",
// which graph mode absorbs with a rebuild); nothing leaks, nothing hangs,
// the context stays healthy, and a run that succeeds is right.
#include <memory>

#include <cuda_runtime_api.h>

#include "pipeline_fixture.h"

namespace {

using pipetest::Batch;
using pipetest::Chain;

constexpr unsigned kDepth = 2;
constexpr unsigned kBatches = 5;
constexpr size_t kN = 4096 + 5;

// Made once, before any fault is armed: the faults are for the pipeline.
struct World {
  Chain chain{SG_BACKEND_CUDA, kN, false, true};
  std::vector<std::unique_ptr<Batch>> batches;
  void *dev[kDepth] = {};
  World() {
    for (unsigned i = 0; i < kBatches; i++) batches.emplace_back(new Batch(chain, true, i));
    for (auto &d : dev)
      EXPECT_EQ(sg_mem_alloc(SG_BACKEND_CUDA, SG_MEMORY_DEVICE, 0, kN * 4, &d), SG_OK);
  }
  ~World() {
    for (auto d : dev) sg_mem_free(d);
  }
};

// Binds the instance's pre-made device buffer (nothing to free in teardown).
int setup(sg_pipeline_instance *inst, void *user) {
  auto *w = static_cast<World *>(user);
  void *d = w->dev[inst->index];
  sg_pipeline_bind binds[] = {
      sg_bind_copy_dst(w->chain.h2d, d),
      sg_bind_kernel_arg(w->chain.k, 0, &d, sizeof d),
      sg_bind_copy_src(w->chain.d2h, d),
  };
  return sg_pipeline_instance_bind(inst, binds, 3) == SG_OK ? 0 : 1;
}

sg_status scenario(World &w, sg_exec_mode mode) {
  sg_pipeline_options o;
  sg_pipeline_options_init(&o);
  o.depth = kDepth;
  o.exec.backend = SG_BACKEND_CUDA;
  o.exec.mode = mode;
  o.setup = setup;
  o.user_data = &w;
  sg_pipeline *p = nullptr;
  sg_status st = sg_pipeline_create(w.chain.g, &o, &p);
  for (unsigned i = 0; i < kBatches && !st; i++) {
    sg_pipeline_batch b = w.batches[i]->desc();
    st = i % 2 ? sg_pipeline_submit(p, &b, nullptr) : sg_pipeline_try_submit(p, &b, nullptr);
    if (st == SG_ERR_WOULD_BLOCK) st = sg_pipeline_submit(p, &b, nullptr);
  }
  if (!st) st = sg_pipeline_drain(p);
  if (p && sg_pipeline_destroy(p) != SG_OK) ADD_FAILURE() << "destroy: " << sg_last_error();
  return st;
}

void run_faults(unsigned kinds, sg_exec_mode mode) {
  if (sg_cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
  World w;
  if (::testing::Test::HasFailure()) return;
  long start = sg_live_allocations();
  int failures = 0;
  for (unsigned long nth = 1; nth < 5000; nth++) {
    for (auto &b : w.batches)
      for (size_t j = 0; j < kN; j++) b->out.p[j] = pipetest::kPoison;
    sg_fault_arm(kinds, nth);
    sg_status st = scenario(w, mode);
    int fired = sg_fault_fired();
    sg_fault_arm(0, 0);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess) << "fault " << nth;
    ASSERT_EQ(sg_live_allocations(), start) << "leak with fault " << nth;
    if (st != SG_OK) {
      failures++;
      EXPECT_STRNE(sg_last_error(), "") << "fault " << nth;
    } else {
      for (auto &b : w.batches) ASSERT_EQ(b->mismatch(kN), "") << "fault " << nth;
    }
    if (!fired) {
      ASSERT_EQ(st, SG_OK) << sg_last_error();
      EXPECT_GT(failures, 0) << "no fault point was reached";
      ::testing::Test::RecordProperty("fault_points", static_cast<int>(nth - 1));
      return;
    }
  }
  FAIL() << "the scenario never ran to completion";
}

class PipelineGpuFault : public ::testing::TestWithParam<sg_exec_mode> {};

TEST_P(PipelineGpuFault, EveryCudaCallFailingInTurn) { run_faults(SG_FAULT_CUDA, GetParam()); }
TEST_P(PipelineGpuFault, EveryAllocationFailingInTurn) { run_faults(SG_FAULT_ALLOC, GetParam()); }
TEST_P(PipelineGpuFault, EverythingFailingInTurn) { run_faults(SG_FAULT_ALL, GetParam()); }

INSTANTIATE_TEST_SUITE_P(Modes, PipelineGpuFault,
                         ::testing::Values(SG_MODE_STREAMS, SG_MODE_GRAPH),
                         [](const ::testing::TestParamInfo<sg_exec_mode> &info) {
                           return std::string(info.param == SG_MODE_GRAPH ? "graph" : "streams");
                         });

}  // namespace
