// Fault injection: make each allocation and each thread/mutex/condition
// creation on the way fail in turn; every failure must come back as a
// status, with nothing leaked and nothing hung.
#include <string>

#include "sg_test_util.h"
#include "streamgraph/kernels.h"

namespace {

int released = 0;

int add_one(void *p) {
  ++*static_cast<int *>(p);
  return 0;
}

// Builds, plans, runs and tears down a small diamond with every node kind.
// Returns the first failing status (after cleaning up), or SG_OK.
sg_status scenario(int *counter, uint32_t *buffer) {
  sg_graph *g = nullptr;
  sg_exec *e = nullptr;
  sg_node a{}, b{}, c{}, d{};
  sg_host_desc h = {add_one, counter, "host"};
  sg_kernel_call fill;
  sg_kernels_fill_u32(&fill, buffer, 7, 64);
  fill.desc.name = "fill";
  sg_memset_desc m = {buffer + 64, 0xab, 1, 64, "memset"};
  sg_stream_fn_desc s = {};
  s.host_twin = add_one;
  s.user_data = counter;
  s.release = [](void *) { released++; };
  s.name = "sfn";
  sg_exec_options o = sgtest::host_options(4);
  o.trace = 1;
  sg_status st = sg_graph_create(&g);
  if (!st) st = sg_graph_add_host(g, &h, nullptr, 0, &a);
  if (!st) st = sg_graph_add_kernel(g, &fill.desc, &a, 1, &b);
  if (!st) st = sg_graph_add_memset(g, &m, &a, 1, &c);
  if (!st) st = sg_graph_add_stream_fn(g, &s, &a, 1, &d);
  if (!st) st = sg_graph_add_edge(g, b, d);
  if (!st) st = sg_graph_add_edge(g, c, d);
  if (!st) st = sg_graph_validate(g);
  if (!st) st = sg_exec_create(g, &o, &e);
  if (!st) st = sg_exec_launch(e, nullptr);
  if (!st) st = sg_exec_wait(e);
  if (!st) st = sg_exec_launch(e, nullptr);
  sg_trace_record records[4];
  size_t count = 0;
  if (!st) st = sg_exec_get_trace(e, records, 4, &count);
  if (e) sg_exec_destroy(e);
  if (g) sg_graph_destroy(g);
  return st;
}

void run_all_faults(unsigned kinds) {
  int counter = 0;
  uint32_t buffer[128];
  long start = sg_live_allocations();
  int failures = 0;
  for (unsigned long nth = 1; nth < 10000; nth++) {
    released = 0;
    sg_fault_arm(kinds, nth);
    sg_status st = scenario(&counter, buffer);
    int fired = sg_fault_fired();
    sg_fault_arm(0, 0);
    std::string site = sg_fault_site();
    ASSERT_EQ(sg_live_allocations(), start) << "leak with fault " << nth << " at " << site;
    if (!fired) {
      ASSERT_EQ(st, SG_OK) << sg_last_error();
      EXPECT_EQ(released, 1);
      EXPECT_GT(failures, 0) << "no fault point was reached";
      return;
    }
    failures++;
    EXPECT_NE(st, SG_OK) << "fault " << nth << " at " << site << " was swallowed";
    EXPECT_STRNE(sg_last_error(), "") << "fault " << nth << " at " << site;
    EXPECT_LE(released, 1) << "release ran twice with fault " << nth << " at " << site;
  }
  FAIL() << "the scenario never ran to completion";
}

TEST(FaultInjection, EveryAllocationFailureIsReported) { run_all_faults(SG_FAULT_ALLOC); }

TEST(FaultInjection, EveryThreadOrLockCreationFailureIsReported) {
  run_all_faults(SG_FAULT_SYSTEM);
}

TEST(FaultInjection, EachFaultNamesItsSite) {
  sg_graph *g = nullptr;
  sg_fault_arm(SG_FAULT_ALLOC, 1);
  EXPECT_STREQ(sg_fault_site(), "") << "nothing fired yet";
  EXPECT_EQ(sg_graph_create(&g), SG_ERR_OUT_OF_MEMORY);
  ASSERT_TRUE(sg_fault_fired());
  EXPECT_STREQ(sg_fault_site(), "core/graph.c:sg_graph_create:sg__calloc");
  sg_fault_arm(0, 0);
  EXPECT_STREQ(sg_fault_site(), "") << "arming again forgets the site";
}

TEST(FaultInjection, ArmingASiteFailsOnlyThere) {
  sgtest::LeakCheck leaks;
  sgtest::Graph g;
  sg_host_desc h = {add_one, nullptr, "h"};
  // The first allocation of append_node is the node array's growth; the
  // allocations before it (the name) are not counted.
  sg_fault_arm_site(SG_FAULT_ALLOC, "core/graph.c:append_node", 1);
  sg_node n;
  EXPECT_EQ(sg_graph_add_host(g, &h, nullptr, 0, &n), SG_ERR_OUT_OF_MEMORY);
  EXPECT_TRUE(sg_fault_fired());
  EXPECT_STREQ(sg_fault_site(), "core/graph.c:append_node:sg__realloc_array");
  // A site that is never reached never fires.
  sg_fault_arm_site(SG_FAULT_ALL, "no/such/file.c", 1);
  SG_EXPECT_OK(sg_graph_add_host(g, &h, nullptr, 0, &n));
  EXPECT_FALSE(sg_fault_fired());
  sg_fault_arm(0, 0);
}

TEST(FaultInjection, ArmingZeroDisarms) {
  sg_fault_arm(SG_FAULT_ALL, 0);
  sgtest::Graph g;
  EXPECT_FALSE(sg_fault_fired());
}

}  // namespace
