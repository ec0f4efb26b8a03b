// Graphs spread over devices on the host backend, which emulates devices:
// the executable's plan gives each device its own streams (up to the limit
// each), nodes left on the default run on the executable's device, and
// random multi-device DAGs (with copies between devices) give the serial
// reference's result under every limit, in both modes, launch after launch.
#include <set>

#include "multi_device_dag.h"

namespace {

// Checks the executable's plan against the nodes' devices.
void check_plan(sg_exec *x, const sg_graph *g, int exec_device, unsigned limit) {
  const sg_plan *plan = nullptr;
  SG_ASSERT_OK(sg_exec_get_plan(x, &plan));
  sg_plan_summary sum;
  SG_ASSERT_OK(sg_plan_get_summary(plan, &sum));
  std::map<int, unsigned> streams_on;
  for (unsigned k = 0; k < sum.stream_count; k++) {
    int device = -5;
    SG_ASSERT_OK(sg_plan_get_stream_device(plan, k, &device));
    ASSERT_GE(device, 0) << "an executable's plan names real devices";
    streams_on[device]++;
  }
  for (auto &[device, count] : streams_on) ASSERT_LE(count, limit) << "device " << device;
  size_t nodes = 0;
  SG_ASSERT_OK(sg_graph_node_count(g, &nodes));
  for (uint32_t i = 0; i < nodes; i++) {
    sg_node node;
    SG_ASSERT_OK(sg_graph_node_at(g, i, &node));
    int want = 0, got = -5;
    SG_ASSERT_OK(sg_graph_get_device(g, node, &want));
    if (want == SG_DEVICE_DEFAULT) want = exec_device;
    sg_plan_node_info info;
    SG_ASSERT_OK(sg_plan_get_node(plan, node, &info));
    SG_ASSERT_OK(sg_plan_get_stream_device(plan, info.stream, &got));
    ASSERT_EQ(got, want) << "node " << i;
  }
}

void run_seed(uint32_t seed, uint32_t max_nodes, int devices) {
  multidag::Dag d = multidag::make(seed, max_nodes, devices);
  std::vector<std::vector<uint32_t>> want = multidag::reference(d, seed);
  std::vector<void *> blocks(devices, nullptr);
  std::vector<uint32_t *> base(devices, nullptr);
  for (int k = 0; k < devices; k++) {
    size_t words = multidag::words_on(d, k);
    if (!words) continue;
    SG_ASSERT_OK(sg_mem_alloc(SG_BACKEND_HOST, SG_MEMORY_DEVICE, k, words * 4, &blocks[k]));
    base[k] = static_cast<uint32_t *>(blocks[k]);
  }
  sgtest::Graph g;
  multidag::build(g, d, base, seed);
  unsigned limit = 1 + seed % 4;
  for (sg_exec_mode mode : {SG_MODE_STREAMS, SG_MODE_GRAPH}) {
    if (::testing::Test::HasFatalFailure()) break;
    sg_exec_options o = sgtest::host_options(limit);
    o.mode = mode;
    o.device = d.exec_device;
    sgtest::Exec x;
    SG_ASSERT_OK(sg_exec_create(g, &o, &x.e));
    check_plan(x, g, d.exec_device, limit);
    for (int launch = 0; launch < 2 && !::testing::Test::HasFatalFailure(); launch++) {
      for (int k = 0; k < devices; k++)
        if (base[k]) std::fill(base[k], base[k] + multidag::words_on(d, k), 0xA5A5A5A5u);
      SG_ASSERT_OK(sg_exec_launch(x, nullptr));
      SG_ASSERT_OK(sg_exec_wait(x));
      for (uint32_t v = 0; v < d.n; v++) {
        const uint32_t *got = base[d.dev[v]] + d.slot_of[v] * multidag::kN;
        ASSERT_EQ(std::vector<uint32_t>(got, got + multidag::kN), want[v])
            << "seed " << seed << ", node " << v << " on device " << d.dev[v] << ", mode "
            << mode << ", limit " << limit << ", launch " << launch;
      }
    }
  }
  for (void *b : blocks) sg_mem_free(b);
}

TEST(HostDevices, RandomDagsOverTwoDevicesEqualTheReference) {
  for (uint32_t seed = 1; seed <= 16; seed++) {
    run_seed(seed, 24, 2);
    if (HasFatalFailure()) return;
  }
}

TEST(HostDevices, RandomDagsOverFourDevicesEqualTheReference) {
  for (uint32_t seed = 101; seed <= 108; seed++) {
    run_seed(seed, 32, 4);
    if (HasFatalFailure()) return;
  }
}

TEST(HostDevices, ChangingADeviceReplansOnUpdate) {
  sgtest::LeakCheck leaks;
  sgtest::Graph g;
  std::vector<int> order;
  sg_host_desc a = {[](void *p) { static_cast<std::vector<int> *>(p)->push_back(1); return 0; },
                    &order, "a"};
  sg_host_desc b = {[](void *p) { static_cast<std::vector<int> *>(p)->push_back(2); return 0; },
                    &order, "b"};
  sg_node na{}, nb{};
  SG_ASSERT_OK(sg_graph_add_host(g, &a, nullptr, 0, &na));
  SG_ASSERT_OK(sg_graph_add_host(g, &b, &na, 1, &nb));
  sg_exec_options o = sgtest::host_options();
  sgtest::Exec x;
  SG_ASSERT_OK(sg_exec_create(g, &o, &x.e));
  SG_ASSERT_OK(sg_graph_set_device(g, nb, 3));
  SG_ASSERT_OK(sg_exec_update(x, g));
  sg_exec_stats st;
  SG_ASSERT_OK(sg_exec_get_stats(x, &st));
  EXPECT_EQ(st.rebuilds, 1u) << "a device change re-plans";
  const sg_plan *plan = nullptr;
  SG_ASSERT_OK(sg_exec_get_plan(x, &plan));
  sg_plan_summary sum;
  SG_ASSERT_OK(sg_plan_get_summary(plan, &sum));
  EXPECT_EQ(sum.stream_count, 2u);
  EXPECT_EQ(sum.event_count, 1u);
  SG_ASSERT_OK(sg_exec_launch(x, nullptr));
  SG_ASSERT_OK(sg_exec_wait(x));
  EXPECT_EQ(order, (std::vector<int>{1, 2}));
  // an update that changes nothing re-plans nothing
  SG_ASSERT_OK(sg_exec_update(x, g));
  SG_ASSERT_OK(sg_exec_get_stats(x, &st));
  EXPECT_EQ(st.rebuilds, 1u);
}

}  // namespace
