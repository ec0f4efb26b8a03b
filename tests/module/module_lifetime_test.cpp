// A module's code lives as long as anything can launch its kernels: every
// kernel node naming a registered kernel holds its owner (core/kernel_owner.h).
// Checked on the host backend with a stand-in owner and stand-in kernel
// handles, in every order of destruction a program can choose.
#include <algorithm>
#include <mutex>
#include <vector>

#include "sg_test_util.h"

extern "C" {
#include "core/kernel_owner.h"
}

namespace {

struct FakeModule {
  sg__kernel_owner owner;
  int released = 0;
};

void release_fake(sg__kernel_owner *o) { reinterpret_cast<FakeModule *>(o)->released++; }

int kernel_a, kernel_b, kernel_unowned;  // addresses stand for cudaKernel_t handles
std::vector<int> twin_calls;
std::mutex twin_calls_lock;  // a pipeline's instances run their twins on pool threads at once

void twin(const sg_kernel_launch *, void *const *args) {
  std::lock_guard<std::mutex> hold(twin_calls_lock);
  twin_calls.push_back(*static_cast<const int *>(args[0]));
}

struct Node {
  int value;
  void *arg_ptrs[1];
  size_t arg_sizes[1] = {sizeof(int)};
  sg_kernel_desc desc;
  Node(const void *func, int v) : value(v) {
    arg_ptrs[0] = &value;
    desc = {func, SG_KERNEL_CUDA_KERNEL, {1, 1, 1}, {1, 1, 1}, 0, arg_ptrs, arg_sizes, 1, twin,
            "k", 0};
  }
};

class ModuleLifetime : public ::testing::Test {
 protected:
  FakeModule *m = nullptr;
  long start = 0;
  void SetUp() override {
    twin_calls.clear();
    start = sg_live_allocations();
    m = new FakeModule();
    sg__kernel_owner_init(&m->owner, release_fake);
    SG_ASSERT_OK(sg__kernel_owner_add(&m->owner, &kernel_a, "test"));
    SG_ASSERT_OK(sg__kernel_owner_add(&m->owner, &kernel_b, "test"));
    SG_ASSERT_OK(sg__kernel_owner_add(&m->owner, &kernel_a, "test"));  // again: no change
  }
  void TearDown() override {
    EXPECT_EQ(m->released, 1) << "released " << m->released << " times";
    EXPECT_EQ(sg__kernel_owner_retain_kernel(&kernel_a), nullptr) << "still registered";
    delete m;
    EXPECT_EQ(sg_live_allocations(), start) << "the registry leaked";
  }
  long refs() { return m->owner.refs; }
};

TEST_F(ModuleLifetime, AGraphAndAnExecutableHoldTheModule) {
  sg_graph *g;
  SG_ASSERT_OK(sg_graph_create(&g));
  Node n(&kernel_a, 7);
  sg_node k;
  SG_ASSERT_OK(sg_graph_add_kernel(g, &n.desc, nullptr, 0, &k));
  EXPECT_EQ(refs(), 2);
  sg_exec_options o = sgtest::host_options();
  sg_exec *e;
  SG_ASSERT_OK(sg_exec_create(g, &o, &e));
  EXPECT_GE(refs(), 3);
  sg__kernel_owner_release(&m->owner);  // sg_module_destroy: the handle goes
  SG_ASSERT_OK(sg_graph_destroy(g));
  EXPECT_EQ(m->released, 0) << "released while an executable names its kernel";
  SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  SG_ASSERT_OK(sg_exec_wait(e));
  EXPECT_EQ(twin_calls, std::vector<int>({7}));
  // Pointing the node at a kernel nobody owns lets the module go.
  Node other(&kernel_unowned, 8);
  SG_ASSERT_OK(sg_exec_set_kernel(e, k, &other.desc));
  EXPECT_EQ(m->released, 1);
  SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  SG_ASSERT_OK(sg_exec_wait(e));
  SG_ASSERT_OK(sg_exec_destroy(e));
  EXPECT_EQ(twin_calls, std::vector<int>({7, 8}));
}

TEST_F(ModuleLifetime, AnyOrderOfDestruction) {
  // Each permutation of (graph, executable, module handle) destroyed in turn.
  std::vector<int> order = {0, 1, 2};
  int round = 0;
  do {
    if (round++) {  // a fresh owner for every permutation after the first
      delete m;
      m = new FakeModule();
      sg__kernel_owner_init(&m->owner, release_fake);
      SG_ASSERT_OK(sg__kernel_owner_add(&m->owner, &kernel_a, "test"));
    }
    sg_graph *g;
    SG_ASSERT_OK(sg_graph_create(&g));
    Node n(&kernel_a, round);
    sg_node k;
    SG_ASSERT_OK(sg_graph_add_kernel(g, &n.desc, nullptr, 0, &k));
    SG_ASSERT_OK(sg_graph_add_kernel(g, &n.desc, &k, 1, nullptr));
    sg_exec_options o = sgtest::host_options();
    sg_exec *e;
    SG_ASSERT_OK(sg_exec_create(g, &o, &e));
    for (size_t i = 0; i < order.size(); i++) {
      EXPECT_EQ(m->released, 0) << "order " << order[0] << order[1] << order[2] << " step " << i;
      if (order[i] == 0) SG_ASSERT_OK(sg_graph_destroy(g));
      if (order[i] == 1) SG_ASSERT_OK(sg_exec_destroy(e));
      if (order[i] == 2) sg__kernel_owner_release(&m->owner);
    }
    EXPECT_EQ(m->released, 1) << "order " << order[0] << order[1] << order[2];
  } while (std::next_permutation(order.begin(), order.end()));
}

TEST_F(ModuleLifetime, UpdatesAndPipelinesHoldAndLetGo) {
  sg_graph *g;
  SG_ASSERT_OK(sg_graph_create(&g));
  Node a(&kernel_a, 1), b(&kernel_b, 2);
  sg_node k;
  SG_ASSERT_OK(sg_graph_add_kernel(g, &a.desc, nullptr, 0, &k));
  sg_pipeline_options po;
  sg_pipeline_options_init(&po);
  po.depth = 3;
  po.exec = sgtest::host_options();
  sg_pipeline *p;
  SG_ASSERT_OK(sg_pipeline_create(g, &po, &p));
  sg__kernel_owner_release(&m->owner);
  // The graph moves to kernel_b (same owner), then to an unowned kernel.
  SG_ASSERT_OK(sg_graph_set_kernel(g, k, &b.desc));
  sg_exec_options o = sgtest::host_options();
  sg_exec *e;
  SG_ASSERT_OK(sg_exec_create(g, &o, &e));
  Node none(&kernel_unowned, 3);
  SG_ASSERT_OK(sg_graph_set_kernel(g, k, &none.desc));
  SG_ASSERT_OK(sg_exec_update(e, g));
  SG_ASSERT_OK(sg_graph_destroy(g));
  EXPECT_EQ(m->released, 0) << "the pipeline's instances still name kernel_a";
  for (int i = 0; i < 3; i++) SG_ASSERT_OK(sg_pipeline_submit(p, nullptr, nullptr));
  SG_ASSERT_OK(sg_pipeline_drain(p));
  SG_ASSERT_OK(sg_pipeline_destroy(p));
  EXPECT_EQ(m->released, 1);
  SG_ASSERT_OK(sg_exec_destroy(e));
}

TEST_F(ModuleLifetime, FailedNodeCreationHoldsNothing) {
  sg_graph *g;
  SG_ASSERT_OK(sg_graph_create(&g));
  Node bad(&kernel_a, 1);
  bad.desc.block = {2048, 1, 1};
  EXPECT_EQ(sg_graph_add_kernel(g, &bad.desc, nullptr, 0, nullptr), SG_ERR_INVALID_LAUNCH);
  EXPECT_EQ(refs(), 1);
  Node ok(&kernel_a, 1);
  // Allocation failures while the node (and an executable's copy) are made.
  for (unsigned long nth = 1; nth < 100; nth++) {
    sg_fault_arm(SG_FAULT_ALLOC, nth);
    sg_exec *e = nullptr;
    sg_graph *g2 = nullptr;
    sg_status st = sg_graph_create(&g2);
    if (!st) st = sg_graph_add_kernel(g2, &ok.desc, nullptr, 0, nullptr);
    sg_exec_options o = sgtest::host_options();
    if (!st) st = sg_exec_create(g2, &o, &e);
    int fired = sg_fault_fired();
    sg_fault_arm(0, 0);
    if (e) sg_exec_destroy(e);
    if (g2) sg_graph_destroy(g2);
    EXPECT_EQ(refs(), 1) << "fault " << nth;
    if (!fired) break;
  }
  SG_ASSERT_OK(sg_graph_destroy(g));
  sg__kernel_owner_release(&m->owner);
}

TEST(KernelOwner, RegistrationFailureIsReported) {
  long start = sg_live_allocations();
  FakeModule m;
  sg__kernel_owner_init(&m.owner, release_fake);
  sg_fault_arm(SG_FAULT_ALLOC, 1);
  EXPECT_EQ(sg__kernel_owner_add(&m.owner, &kernel_a, "sg_module_get_kernel"),
            SG_ERR_OUT_OF_MEMORY);
  sg_fault_arm(0, 0);
  EXPECT_NE(std::string(sg_last_error()).find("sg_module_get_kernel"), std::string::npos);
  EXPECT_EQ(sg__kernel_owner_retain_kernel(&kernel_a), nullptr);
  sg__kernel_owner_release(&m.owner);
  EXPECT_EQ(m.released, 1);
  EXPECT_EQ(sg_live_allocations(), start);
}

}  // namespace
