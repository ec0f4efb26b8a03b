// Fault injection through a whole pipeline's life: make each allocation and
// each thread/mutex/condition creation fail in turn (creation of every
// instance, setup's allocations, binds, handle registration...). Every
// failure must come back as a status with a message, with nothing leaked
// and nothing hung, and a run that reaches no fault must be right.
#include <cstdio>
#include <memory>

#include "pipeline_fixture.h"

namespace {

using pipetest::Batch;
using pipetest::Chain;
using pipetest::Ctx;

// The graph and the batches' buffers are made once, before any fault is
// armed: the faults are for the pipeline's life, not the test's fixtures.
struct World {
  static constexpr size_t n = 33;
  Chain chain{SG_BACKEND_HOST, n, true};
  std::vector<std::unique_ptr<Batch>> batches;
  World() {
    for (unsigned i = 0; i < 7; i++) batches.emplace_back(new Batch(chain, i % 2 == 1, i));
  }
};

// Creates a depth-3 pipeline, runs 7 batches (both submit flavours), drains,
// destroys. Returns the first failing status, having cleaned up.
sg_status scenario(World &w, bool *outputs_ok) {
  for (auto &b : w.batches)
    for (size_t j = 0; j < World::n; j++) b->out.p[j] = pipetest::kPoison;
  Ctx ctx;
  ctx.chain = &w.chain;
  sg_pipeline_options o = pipetest::chain_options(&ctx, 3, SG_MODE_GRAPH);
  o.on_complete = nullptr;
  sg_pipeline *p = nullptr;
  sg_status st = sg_pipeline_create(w.chain.g, &o, &p);
  for (unsigned i = 0; i < w.batches.size() && !st; i++) {
    sg_pipeline_batch b = w.batches[i]->desc();
    st = i % 2 ? sg_pipeline_submit(p, &b, nullptr) : SG_ERR_WOULD_BLOCK;
    while (st == SG_ERR_WOULD_BLOCK) st = sg_pipeline_try_submit(p, &b, nullptr);
  }
  if (!st) st = sg_pipeline_drain(p);
  if (p) {
    char message[512];
    snprintf(message, sizeof message, "%s", sg_last_error());
    if (sg_pipeline_destroy(p) != SG_OK) ADD_FAILURE() << "destroy failed: " << sg_last_error();
    EXPECT_STREQ(sg_last_error(), message) << "a successful destroy keeps the message";
  }
  if (ctx.counters.setups != ctx.counters.teardowns)
    ADD_FAILURE() << ctx.counters.setups << " setups but " << ctx.counters.teardowns << " teardowns";
  *outputs_ok = true;
  for (auto &b : w.batches) *outputs_ok = *outputs_ok && b->mismatch(World::n).empty();
  return st;
}

void run_all_faults(unsigned kinds) {
  World w;
  long start = sg_live_allocations();
  int failures = 0;
  for (unsigned long nth = 1; nth < 20000; nth++) {
    sg_fault_arm(kinds, nth);
    bool outputs_ok = false;
    sg_status st = scenario(w, &outputs_ok);
    int fired = sg_fault_fired();
    sg_fault_arm(0, 0);
    ASSERT_EQ(sg_live_allocations(), start) << "leak with fault " << nth;
    if (!fired) {
      ASSERT_EQ(st, SG_OK) << sg_last_error();
      EXPECT_TRUE(outputs_ok);
      EXPECT_GT(failures, 0) << "no fault point was reached";
      ::testing::Test::RecordProperty("fault_points", failures);
      return;
    }
    failures++;
    EXPECT_NE(st, SG_OK) << "fault " << nth << " was swallowed";
    EXPECT_STRNE(sg_last_error(), "") << "fault " << nth;
  }
  FAIL() << "the scenario never ran to completion";
}

TEST(PipelineFault, Allocations) { run_all_faults(SG_FAULT_ALLOC); }
TEST(PipelineFault, SystemCalls) { run_all_faults(SG_FAULT_SYSTEM); }
TEST(PipelineFault, AllKinds) { run_all_faults(SG_FAULT_ALL); }

}  // namespace
