// NCCL nodes and node devices in the graph builder: what is checked without
// NCCL (ops, types, counts, pointers, peers), copies and edits, the DOT
// output, and what a build or backend without NCCL answers. Runs everywhere:
// the communicator is never used here, so any non-NULL pointer stands in.
#include <cstring>
#include <string>

#include "sg_test_util.h"

namespace {

float a_buf[16], b_buf[16];
int fake_comm_storage;
void *const kComm = &fake_comm_storage;

sg_nccl_call all_reduce() {
  sg_nccl_call c{};
  c.op = SG_NCCL_ALL_REDUCE;
  c.comm = kComm;
  c.send = a_buf;
  c.recv = b_buf;
  c.count = 16;
  c.type = SG_NCCL_FLOAT32;
  c.reduce = SG_NCCL_SUM;
  return c;
}

sg_status add(sg_graph *g, const sg_nccl_call *calls, unsigned n, sg_node *out = nullptr,
              const char *name = "ar") {
  sg_nccl_desc d = {calls, n, name};
  return sg_graph_add_nccl(g, &d, nullptr, 0, out);
}

std::string last() { return sg_last_error(); }

TEST(NcclNode, ValidCallsMakeANode) {
  sgtest::Graph g;
  sg_nccl_call calls[3] = {all_reduce(), all_reduce(), all_reduce()};
  calls[1].op = SG_NCCL_SEND;
  calls[1].recv = nullptr;
  calls[1].peer = 1;
  calls[2].op = SG_NCCL_RECV;
  calls[2].send = nullptr;
  calls[2].peer = 1;
  sg_node n{};
  SG_ASSERT_OK(add(g, calls, 3, &n));
  size_t count = 0;
  SG_ASSERT_OK(sg_graph_node_count(g, &count));
  EXPECT_EQ(count, 1u);
  // the calls were copied: changing ours changes nothing in the graph
  calls[0].count = 0;
  char *dot = nullptr;
  SG_ASSERT_OK(sg_graph_to_dot(g, &dot));
  std::string text = dot;
  sg_free(dot);
  EXPECT_NE(text.find("nccl #0"), std::string::npos) << text;
  EXPECT_NE(text.find("all-reduce +2"), std::string::npos) << text;
  EXPECT_NE(text.find("octagon"), std::string::npos) << text;
}

TEST(NcclNode, BadCallsAreRefusedNamingTheCall) {
  sgtest::Graph g;
  struct Case {
    const char *what;
    void (*edit)(sg_nccl_call &);
    const char *message;
  } cases[] = {
      {"op", [](sg_nccl_call &c) { c.op = (sg_nccl_op)9; }, "call 0: op 9 is not an sg_nccl_op"},
      {"comm", [](sg_nccl_call &c) { c.comm = nullptr; }, "call 0 (all-reduce): comm is NULL"},
      {"count", [](sg_nccl_call &c) { c.count = 0; }, "count is 0"},
      {"type", [](sg_nccl_call &c) { c.type = (sg_nccl_type)77; }, "type 77 is not"},
      {"huge", [](sg_nccl_call &c) { c.count = SIZE_MAX / 2; }, "larger than any buffer"},
      {"send", [](sg_nccl_call &c) { c.send = nullptr; }, "send is NULL"},
      {"recv", [](sg_nccl_call &c) { c.recv = nullptr; }, "recv is NULL"},
      {"reduce", [](sg_nccl_call &c) { c.reduce = (sg_nccl_reduce)-1; }, "reduce -1"},
      {"send-recv", [](sg_nccl_call &c) { c.op = SG_NCCL_SEND; c.peer = 0; }, "recv is set"},
      {"recv-send", [](sg_nccl_call &c) { c.op = SG_NCCL_RECV; c.peer = 0; }, "send is set"},
      {"peer", [](sg_nccl_call &c) { c.op = SG_NCCL_SEND; c.recv = nullptr; c.peer = -2; },
       "peer -2 is not a rank"},
  };
  for (auto &k : cases) {
    sg_nccl_call c = all_reduce();
    k.edit(c);
    EXPECT_EQ(add(g, &c, 1), SG_ERR_INVALID_ARGUMENT) << k.what;
    EXPECT_NE(last().find(k.message), std::string::npos) << k.what << ": " << last();
    EXPECT_NE(last().find("sg_graph_add_nccl: nccl 'ar'"), std::string::npos) << last();
  }
  sg_nccl_call ok = all_reduce();
  EXPECT_EQ(add(g, nullptr, 1), SG_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(add(g, &ok, 0), SG_ERR_INVALID_ARGUMENT);
  EXPECT_NE(last().find("0 calls; 1 to 64"), std::string::npos) << last();
  EXPECT_EQ(add(g, &ok, SG_MAX_NCCL_CALLS + 1), SG_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(sg_graph_add_nccl(g, nullptr, nullptr, 0, nullptr), SG_ERR_INVALID_ARGUMENT);
  size_t count = 1;
  SG_ASSERT_OK(sg_graph_node_count(g, &count));
  EXPECT_EQ(count, 0u) << "a refused node entered the graph";
}

TEST(NcclNode, SetReplacesTheCallsOfAnNcclNodeOnly) {
  sgtest::Graph g;
  sg_nccl_call c = all_reduce();
  sg_node n{}, h{};
  SG_ASSERT_OK(add(g, &c, 1, &n));
  sg_host_desc hd = {[](void *) { return 0; }, nullptr, "h"};
  SG_ASSERT_OK(sg_graph_add_host(g, &hd, &n, 1, &h));
  sg_nccl_call two[2] = {all_reduce(), all_reduce()};
  sg_nccl_desc d = {two, 2, nullptr};
  SG_ASSERT_OK(sg_graph_set_nccl(g, n, &d));
  const char *name = nullptr;
  SG_ASSERT_OK(sg_graph_node_name(g, n, &name));
  EXPECT_STREQ(name, "ar") << "an edit without a name keeps the node's";
  EXPECT_EQ(sg_graph_set_nccl(g, h, &d), SG_ERR_INVALID_ARGUMENT);
  EXPECT_NE(last().find("is a host node, not a nccl node"), std::string::npos) << last();
  two[1].count = 0;
  EXPECT_EQ(sg_graph_set_nccl(g, n, &d), SG_ERR_INVALID_ARGUMENT);
  EXPECT_NE(last().find("sg_graph_set_nccl: node 'ar' (#0): call 1"), std::string::npos) << last();
}

TEST(NcclNode, HostBackendRefusesNcclNodes) {
  sgtest::Graph g;
  sg_nccl_call c = all_reduce();
  SG_ASSERT_OK(add(g, &c, 1));
  sg_exec_options o = sgtest::host_options();
  sgtest::Exec e;
  EXPECT_EQ(sg_exec_create(g, &o, &e.e), SG_ERR_UNSUPPORTED);
  EXPECT_NE(last().find("NCCL node 'ar' (#0) runs on the CUDA backend only"), std::string::npos)
      << last();
  EXPECT_EQ(e.e, nullptr);
}

TEST(NcclNode, NcclNodesLeakNothing) {
  long live = sg_live_allocations();
  {
    sgtest::Graph g;
    sg_nccl_call calls[4] = {all_reduce(), all_reduce(), all_reduce(), all_reduce()};
    sg_nccl_desc d = {calls, 4, "four"};
    sg_node n{};
    SG_ASSERT_OK(sg_graph_add_nccl(g, &d, nullptr, 0, &n));
    SG_ASSERT_OK(sg_graph_set_nccl(g, n, &d));
    sg_plan *plan = nullptr;
    SG_ASSERT_OK(sg_plan_create(g, 0, &plan));  // the plan snapshots (copies) the node
    SG_ASSERT_OK(sg_plan_destroy(plan));
  }
  EXPECT_EQ(sg_live_allocations(), live);
}

TEST(NcclNode, EveryAllocationFailureIsReported) {
  sg_nccl_call calls[2] = {all_reduce(), all_reduce()};
  sg_nccl_desc d = {calls, 2, "named"};
  for (unsigned long nth = 1;; nth++) {
    ASSERT_LT(nth, 100u);
    sgtest::Graph g;
    long live = sg_live_allocations();
    sg_fault_arm(SG_FAULT_ALLOC, nth);
    sg_status st = sg_graph_add_nccl(g, &d, nullptr, 0, nullptr);
    bool fired = sg_fault_fired();
    sg_fault_arm(SG_FAULT_ALL, 0);
    if (!fired) {
      SG_ASSERT_OK(st);
      break;
    }
    EXPECT_EQ(st, SG_ERR_OUT_OF_MEMORY) << "allocation " << nth;
    size_t count = 1;
    SG_ASSERT_OK(sg_graph_node_count(g, &count));
    EXPECT_EQ(count, 0u);
    EXPECT_EQ(sg_live_allocations(), live) << "allocation " << nth;
  }
}

TEST(NcclNode, VersionSaysWhetherNcclIsBuiltIn) {
  int version = -1;
  sg_status st = sg_nccl_version(&version);
  if (st == SG_OK) {
    EXPECT_GE(version, 20900);
  } else {
    EXPECT_EQ(st, SG_ERR_UNSUPPORTED);
    EXPECT_EQ(version, 0);
    EXPECT_NE(last().find("built without NCCL"), std::string::npos) << last();
  }
}

TEST(NodeDevice, SetAndGetDevices) {
  sgtest::Graph g;
  sg_host_desc hd = {[](void *) { return 0; }, nullptr, "h"};
  sg_node a{}, b{};
  SG_ASSERT_OK(sg_graph_add_host(g, &hd, nullptr, 0, &a));
  SG_ASSERT_OK(sg_graph_add_host(g, &hd, &a, 1, &b));
  int dev = 7;
  SG_ASSERT_OK(sg_graph_get_device(g, a, &dev));
  EXPECT_EQ(dev, SG_DEVICE_DEFAULT);
  SG_ASSERT_OK(sg_graph_set_device(g, b, 3));
  SG_ASSERT_OK(sg_graph_get_device(g, b, &dev));
  EXPECT_EQ(dev, 3);
  // an edit of the node's parameters keeps its device
  SG_ASSERT_OK(sg_graph_set_host(g, b, &hd));
  SG_ASSERT_OK(sg_graph_get_device(g, b, &dev));
  EXPECT_EQ(dev, 3);
  char *dot = nullptr;
  SG_ASSERT_OK(sg_graph_to_dot(g, &dot));
  EXPECT_NE(std::string(dot).find("device 3"), std::string::npos) << dot;
  sg_free(dot);
  SG_ASSERT_OK(sg_graph_set_device(g, b, SG_DEVICE_DEFAULT));
  SG_ASSERT_OK(sg_graph_get_device(g, b, &dev));
  EXPECT_EQ(dev, SG_DEVICE_DEFAULT);
}

TEST(NodeDevice, BadDevicesAndNodesAreRefused) {
  sgtest::Graph g, other;
  sg_host_desc hd = {[](void *) { return 0; }, nullptr, "h"};
  sg_node a{}, foreign{};
  SG_ASSERT_OK(sg_graph_add_host(g, &hd, nullptr, 0, &a));
  SG_ASSERT_OK(sg_graph_add_host(other, &hd, nullptr, 0, &foreign));
  EXPECT_EQ(sg_graph_set_device(g, a, -2), SG_ERR_INVALID_ARGUMENT);
  EXPECT_NE(last().find("node 'h' (#0): device -2"), std::string::npos) << last();
  EXPECT_EQ(sg_graph_set_device(g, a, SG_MAX_DEVICES), SG_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(sg_graph_set_device(g, foreign, 0), SG_ERR_FOREIGN_NODE);
  EXPECT_EQ(sg_graph_set_device(nullptr, a, 0), SG_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(sg_graph_get_device(g, a, nullptr), SG_ERR_INVALID_ARGUMENT);
  int dev = 0;
  EXPECT_EQ(sg_graph_get_device(g, sg_node{}, &dev), SG_ERR_INVALID_ARGUMENT);
}

}  // namespace
