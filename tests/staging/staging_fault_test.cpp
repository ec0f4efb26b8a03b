// Fault injection over the staging paths: every allocation and every
// thread/mutex/condition creation on the way (pool, slabs, copy threads,
// rings, registrations, the executable's staging state) fails in turn.
// Each failure must come back as a status, with nothing leaked and nothing
// hung; then the run that reaches no fault must succeed with exact data.
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "sg_test_util.h"
#include "streamgraph/testing.h"

namespace {

constexpr size_t KiB = 1024;

int fill_source(void *p) {
  auto *v = static_cast<std::vector<uint8_t> *>(p);
  for (size_t i = 0; i < v->size(); i++) (*v)[i] = static_cast<uint8_t>(i * 37 + 11);
  return 0;
}

// pool -> graph (prepare, up, down) -> exec -> two launches -> set_copy ->
// launch -> destroy everything. Returns the first failure.
sg_status scenario(sg_exec_mode mode, sg_staging_policy policy, std::vector<uint8_t> *src,
                   std::vector<uint8_t> *dst, std::vector<uint8_t> *dst2) {
  sg_pinned_pool *pool = nullptr;
  sg_graph *g = nullptr;
  sg_exec *e = nullptr;
  void *dev = nullptr;
  sg_node prep{}, up{}, down{};
  sg_pinned_pool_options po;
  sg_pinned_pool_options_init(&po);
  po.backend = SG_BACKEND_HOST;
  po.max_bytes = 256 * KiB;
  po.slab_bytes = 64 * KiB;
  po.prewarm_bytes = 64 * KiB;
  sg_exec_options o;
  sg_exec_options_init(&o);
  o.backend = SG_BACKEND_HOST;
  o.mode = mode;
  o.max_streams = 2;
  o.staging.policy = policy;
  o.staging.chunk_bytes = 8 * KiB;
  o.staging.ring_depth = 2;
  o.staging.copy_threads = 2;
  sg_host_desc h = {fill_source, src, "prepare"};
  sg_status st = sg_pinned_pool_create(&po, &pool);
  o.staging.pool = pool;
  if (!st) st = sg_mem_alloc(SG_BACKEND_HOST, SG_MEMORY_DEVICE, 0, src->size(), &dev);
  sg_copy_desc u = {dev, src->data(), src->size(), SG_COPY_HOST_TO_DEVICE, "up"};
  sg_copy_desc d = {dst->data(), dev, src->size(), SG_COPY_DEVICE_TO_HOST, "down"};
  if (!st) st = sg_graph_create(&g);
  if (!st) st = sg_graph_add_host(g, &h, nullptr, 0, &prep);
  if (!st) st = sg_graph_add_copy(g, &u, &prep, 1, &up);
  if (!st) st = sg_graph_add_copy(g, &d, &up, 1, &down);
  if (!st) st = sg_exec_create(g, &o, &e);
  if (!st) st = sg_exec_launch(e, nullptr);
  if (!st) st = sg_exec_launch(e, nullptr);
  if (!st) st = sg_exec_wait(e);
  sg_copy_desc d2 = {dst2->data(), dev, src->size() - 100, SG_COPY_DEVICE_TO_HOST, nullptr};
  if (!st) st = sg_exec_set_copy(e, down, &d2);
  if (!st) st = sg_exec_launch(e, nullptr);
  if (!st) st = sg_exec_wait(e);
  if (e) sg_exec_destroy(e);
  if (g) sg_graph_destroy(g);
  if (dev) sg_mem_free(dev);
  if (pool) {
    sg_status pst = sg_pinned_pool_destroy(pool);
    if (!st) st = pst;
  }
  return st;
}

void run_all_faults(unsigned kinds, sg_exec_mode mode, sg_staging_policy policy) {
  long start = sg_live_allocations();
  int failures = 0;
  for (unsigned long nth = 1; nth < 5000; nth++) {
    std::vector<uint8_t> src(50 * KiB + 3), dst(src.size(), 0), dst2(src.size(), 0);
    sg_fault_arm(kinds, nth);
    sg_status st = scenario(mode, policy, &src, &dst, &dst2);
    int fired = sg_fault_fired();
    // A registration the (emulated) driver refuses is no error: the copy
    // is staged instead, and exactly.
    const bool refused = fired && std::strstr(sg_fault_site(), "host_stage_mem.c") != nullptr;
    sg_fault_arm(0, 0);
    ASSERT_EQ(sg_live_allocations(), start) << "leak with fault " << nth;
    if (refused && st == SG_OK) {
      EXPECT_EQ(dst, src) << "fault " << nth;
      EXPECT_EQ(std::memcmp(dst2.data(), src.data(), src.size() - 100), 0) << "fault " << nth;
      failures++;
      continue;
    }
    if (!fired) {
      ASSERT_EQ(st, SG_OK) << sg_last_error();
      EXPECT_EQ(dst, src);
      EXPECT_EQ(std::memcmp(dst2.data(), src.data(), src.size() - 100), 0);
      EXPECT_GT(failures, 0) << "no fault point was reached";
      return;
    }
    failures++;
    EXPECT_NE(st, SG_OK) << "fault " << nth << " was swallowed";
    EXPECT_STRNE(sg_last_error(), "") << "fault " << nth;
  }
  FAIL() << "the scenario never ran to completion";
}

TEST(StagingFaults, AllocationsStreamsMode) {
  run_all_faults(SG_FAULT_ALLOC, SG_MODE_STREAMS, SG_STAGING_STAGE);
}
TEST(StagingFaults, AllocationsGraphMode) {
  run_all_faults(SG_FAULT_ALLOC, SG_MODE_GRAPH, SG_STAGING_STAGE);
}
TEST(StagingFaults, SystemCallsStreamsMode) {
  run_all_faults(SG_FAULT_SYSTEM, SG_MODE_STREAMS, SG_STAGING_STAGE);
}
TEST(StagingFaults, SystemCallsGraphMode) {
  run_all_faults(SG_FAULT_SYSTEM, SG_MODE_GRAPH, SG_STAGING_STAGE);
}
// The callback protocol, the fallback, under the same faults.
struct CallbackProtocol {
  CallbackProtocol() { setenv("SG_STAGING_PROTOCOL", "callbacks", 1); }
  ~CallbackProtocol() { unsetenv("SG_STAGING_PROTOCOL"); }
};
TEST(StagingFaults, SystemCallsStreamsModeCallbacks) {
  CallbackProtocol callbacks;
  run_all_faults(SG_FAULT_SYSTEM, SG_MODE_STREAMS, SG_STAGING_STAGE);
}
TEST(StagingFaults, SystemCallsGraphModeCallbacks) {
  CallbackProtocol callbacks;
  run_all_faults(SG_FAULT_SYSTEM, SG_MODE_GRAPH, SG_STAGING_STAGE);
}
TEST(StagingFaults, RegistrationStreamsMode) {
  run_all_faults(SG_FAULT_ALLOC | SG_FAULT_SYSTEM, SG_MODE_STREAMS, SG_STAGING_REGISTER);
}
TEST(StagingFaults, RegistrationGraphMode) {
  run_all_faults(SG_FAULT_ALLOC | SG_FAULT_SYSTEM, SG_MODE_GRAPH, SG_STAGING_REGISTER);
}

}  // namespace
