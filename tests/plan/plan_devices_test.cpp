// The public plan of a graph spread over devices: streams per device, the
// device of each stream, the limit per device, DOT clusters naming devices.
#include <string>

#include "sg_test_util.h"

namespace {

int noop(void *) { return 0; }

// Four independent chains of two nodes: chains 0 and 1 on device 1, chain 2
// on device 0, chain 3 left on the default device.
struct FourChains {
  sgtest::Graph g;
  sg_node first[4]{}, second[4]{};
  FourChains() {
    sg_host_desc d = {noop, nullptr, "h"};
    const int device[4] = {1, 1, 0, SG_DEVICE_DEFAULT};
    for (int c = 0; c < 4; c++) {
      EXPECT_EQ(sg_graph_add_host(g, &d, nullptr, 0, &first[c]), SG_OK);
      EXPECT_EQ(sg_graph_add_host(g, &d, &first[c], 1, &second[c]), SG_OK);
      EXPECT_EQ(sg_graph_set_device(g, first[c], device[c]), SG_OK);
      EXPECT_EQ(sg_graph_set_device(g, second[c], device[c]), SG_OK);
    }
  }
};

TEST(PlanDevices, EachDeviceGetsItsOwnStreams) {
  FourChains f;
  sg_plan *plan = nullptr;
  SG_ASSERT_OK(sg_plan_create(f.g, 0, &plan));
  sg_plan_summary sum;
  SG_ASSERT_OK(sg_plan_get_summary(plan, &sum));
  EXPECT_EQ(sum.stream_count, 4u);
  EXPECT_EQ(sum.width, 4u);
  int count[3] = {0, 0, 0};  // default, 0, 1
  for (unsigned k = 0; k < sum.stream_count; k++) {
    int device = -5;
    SG_ASSERT_OK(sg_plan_get_stream_device(plan, k, &device));
    ASSERT_GE(device, SG_DEVICE_DEFAULT);
    ASSERT_LE(device, 1);
    count[device + 1]++;
  }
  EXPECT_EQ(count[0], 1);
  EXPECT_EQ(count[1], 1);
  EXPECT_EQ(count[2], 2);
  for (int c = 0; c < 4; c++) {
    sg_plan_node_info a, b;
    SG_ASSERT_OK(sg_plan_get_node(plan, f.first[c], &a));
    SG_ASSERT_OK(sg_plan_get_node(plan, f.second[c], &b));
    EXPECT_EQ(a.stream, b.stream) << "chain " << c;
  }
  char *dot = nullptr;
  SG_ASSERT_OK(sg_plan_to_dot(plan, &dot));
  std::string text = dot;
  sg_free(dot);
  EXPECT_NE(text.find("(device 1)"), std::string::npos) << text;
  EXPECT_NE(text.find("(device 0)"), std::string::npos) << text;
  int device = 0;
  EXPECT_EQ(sg_plan_get_stream_device(plan, 4, &device), SG_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(sg_plan_get_stream_device(plan, 0, nullptr), SG_ERR_INVALID_ARGUMENT);
  SG_ASSERT_OK(sg_plan_destroy(plan));
}

TEST(PlanDevices, TheLimitHoldsPerDevice) {
  FourChains f;
  sg_plan *plan = nullptr;
  SG_ASSERT_OK(sg_plan_create(f.g, 1, &plan));
  sg_plan_summary sum;
  SG_ASSERT_OK(sg_plan_get_summary(plan, &sum));
  EXPECT_EQ(sum.stream_count, 3u) << "one stream for each of three devices";
  EXPECT_EQ(sum.chain_count, 4u);
  SG_ASSERT_OK(sg_plan_destroy(plan));
}

TEST(PlanDevices, CrossDeviceEdgesBecomeEvents) {
  sgtest::Graph g;
  sg_host_desc d = {noop, nullptr, "h"};
  sg_node a{}, b{};
  SG_ASSERT_OK(sg_graph_add_host(g, &d, nullptr, 0, &a));
  SG_ASSERT_OK(sg_graph_add_host(g, &d, &a, 1, &b));
  SG_ASSERT_OK(sg_graph_set_device(g, b, 2));
  sg_plan *plan = nullptr;
  SG_ASSERT_OK(sg_plan_create(g, 0, &plan));
  sg_plan_summary sum;
  SG_ASSERT_OK(sg_plan_get_summary(plan, &sum));
  EXPECT_EQ(sum.stream_count, 2u);
  EXPECT_EQ(sum.event_count, 1u);
  sg_plan_node_info info;
  SG_ASSERT_OK(sg_plan_get_node(plan, b, &info));
  EXPECT_EQ(info.wait_count, 1u);
  int device = 0;
  SG_ASSERT_OK(sg_plan_get_stream_device(plan, info.stream, &device));
  EXPECT_EQ(device, 2);
  SG_ASSERT_OK(sg_plan_destroy(plan));
}

}  // namespace
