// Changing parameters of an executable: per node, and by re-applying an
// edited graph; re-planning only when the topology changed.
#include <atomic>
#include <string>
#include <vector>

#include "sg_test_util.h"
#include "streamgraph/kernels.h"

namespace {

struct ExecUpdate : ::testing::Test {
  void SetUp() override {
    SG_ASSERT_OK(sg_mem_alloc(SG_BACKEND_HOST, SG_MEMORY_DEVICE, 0, 4 * kN * 4, &mem));
    dev = static_cast<uint32_t *>(mem);
  }
  void TearDown() override { sg_mem_free(mem); }
  static constexpr size_t kN = 100;
  void *mem = nullptr;
  uint32_t *dev = nullptr;
};

int add_to(void *p) {
  static_cast<std::atomic<int> *>(p)->fetch_add(1);
  return 0;
}

TEST_F(ExecUpdate, SetKernelCopyMemsetAndHost) {
  sgtest::Graph g;
  std::vector<uint32_t> in(kN), out(kN, 0);
  for (size_t i = 0; i < kN; i++) in[i] = static_cast<uint32_t>(i * 7 + 1);
  std::atomic<int> first{0}, second{0};
  sg_node up{}, mix{}, set{}, host{}, down{};
  sg_copy_desc c = {dev, in.data(), kN * 4, SG_COPY_HOST_TO_DEVICE, "up"};
  SG_ASSERT_OK(sg_graph_add_copy(g, &c, nullptr, 0, &up));
  sg_kernel_call k;
  sg_kernels_mix_u32(&k, dev + kN, dev, dev, 1, kN);
  SG_ASSERT_OK(sg_graph_add_kernel(g, &k.desc, &up, 1, &mix));
  sg_memset_desc m = {dev + 2 * kN, 0x11, 1, kN * 4, "set"};
  SG_ASSERT_OK(sg_graph_add_memset(g, &m, &mix, 1, &set));
  sg_host_desc h = {add_to, &first, "host"};
  SG_ASSERT_OK(sg_graph_add_host(g, &h, &set, 1, &host));
  sg_copy_desc d = {out.data(), dev + kN, kN * 4, SG_COPY_DEVICE_TO_HOST, "down"};
  SG_ASSERT_OK(sg_graph_add_copy(g, &d, &host, 1, &down));

  sg_exec_options o = sgtest::host_options();
  sgtest::Exec e;
  SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
  SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  SG_ASSERT_OK(sg_exec_wait(e));
  for (size_t i = 0; i < kN; i++) ASSERT_EQ(out[i], sg_kernels_mix(in[i], in[i], 1));

  // New salt, new output buffer, new memset value, new callback data.
  std::vector<uint32_t> out2(kN, 0);
  sg_kernels_mix_u32(&k, dev + 3 * kN, dev, dev, 2, kN);
  SG_ASSERT_OK(sg_exec_set_kernel(e, mix, &k.desc));
  d.src = dev + 3 * kN;
  d.dst = out2.data();
  SG_ASSERT_OK(sg_exec_set_copy(e, down, &d));
  m.value = 0x22;
  SG_ASSERT_OK(sg_exec_set_memset(e, set, &m));
  h.user_data = &second;
  SG_ASSERT_OK(sg_exec_set_host(e, host, &h));
  SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  SG_ASSERT_OK(sg_exec_wait(e));
  for (size_t i = 0; i < kN; i++) ASSERT_EQ(out2[i], sg_kernels_mix(in[i], in[i], 2));
  const uint8_t *bytes = reinterpret_cast<const uint8_t *>(dev + 2 * kN);
  for (size_t i = 0; i < kN * 4; i++) ASSERT_EQ(bytes[i], 0x22);
  EXPECT_EQ(first.load(), 1);
  EXPECT_EQ(second.load(), 1);

  sg_exec_stats s;
  SG_ASSERT_OK(sg_exec_get_stats(e, &s));
  EXPECT_EQ(s.param_updates, 4u);
  EXPECT_EQ(s.rebuilds, 0u);
  EXPECT_EQ(s.launches, 2u);
}

TEST_F(ExecUpdate, SetIsValidatedLikeAdd) {
  sgtest::Graph g;
  std::vector<uint32_t> host(kN);
  sg_node c{};
  sg_copy_desc desc = {dev, host.data(), kN * 4, SG_COPY_HOST_TO_DEVICE, "c"};
  SG_ASSERT_OK(sg_graph_add_copy(g, &desc, nullptr, 0, &c));
  sg_exec_options o = sgtest::host_options();
  sgtest::Exec e;
  SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
  sg_copy_desc bad = desc;
  bad.dst = host.data() + 1;  // host->device into host memory
  EXPECT_EQ(sg_exec_set_copy(e, c, &bad), SG_ERR_INVALID_COPY);
  EXPECT_NE(std::string(sg_last_error()).find("sg_exec_set_copy: node 'c' (#0)"), std::string::npos)
      << sg_last_error();
  bad = desc;
  bad.bytes = 0;
  EXPECT_EQ(sg_exec_set_copy(e, c, &bad), SG_ERR_INVALID_ARGUMENT);
  sg_memset_desc m = {dev, 0, 1, 1, nullptr};
  EXPECT_EQ(sg_exec_set_memset(e, c, &m), SG_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(sg_last_error()).find("is a copy node, not a memset node"), std::string::npos);
  sgtest::Graph other;
  sg_node theirs{};
  SG_ASSERT_OK(sg_graph_add_empty(other, nullptr, nullptr, 0, &theirs));
  EXPECT_EQ(sg_exec_set_copy(e, theirs, &desc), SG_ERR_FOREIGN_NODE);
  sg_exec_stats s;
  SG_ASSERT_OK(sg_exec_get_stats(e, &s));
  EXPECT_EQ(s.param_updates, 0u) << "refused changes change nothing";
}

TEST_F(ExecUpdate, UpdateWithSameTopologyChangesOnlyParameters) {
  std::atomic<int> a{0}, b{0};
  sgtest::Graph g;
  sg_host_desc h = {add_to, &a, "h"};
  sg_node n0{}, n1{};
  SG_ASSERT_OK(sg_graph_add_host(g, &h, nullptr, 0, &n0));
  SG_ASSERT_OK(sg_graph_add_host(g, &h, &n0, 1, &n1));
  sg_exec_options o = sgtest::host_options();
  sgtest::Exec e;
  SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
  h.user_data = &b;
  SG_ASSERT_OK(sg_graph_set_host(g, n1, &h));
  SG_ASSERT_OK(sg_exec_update(e, g));
  SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  SG_ASSERT_OK(sg_exec_wait(e));
  EXPECT_EQ(a.load(), 1);
  EXPECT_EQ(b.load(), 1);
  sg_exec_stats s;
  SG_ASSERT_OK(sg_exec_get_stats(e, &s));
  EXPECT_EQ(s.param_updates, 1u) << "only the changed node";
  EXPECT_EQ(s.rebuilds, 0u);
  SG_ASSERT_OK(sg_exec_update(e, g));  // nothing changed: nothing to do
  SG_ASSERT_OK(sg_exec_get_stats(e, &s));
  EXPECT_EQ(s.param_updates, 1u);
}

TEST_F(ExecUpdate, UpdateWithNewTopologyRebuilds) {
  std::atomic<int> count{0};
  sgtest::Graph g;
  sg_host_desc h = {add_to, &count, nullptr};
  sg_node n0{};
  SG_ASSERT_OK(sg_graph_add_host(g, &h, nullptr, 0, &n0));
  sg_exec_options o = sgtest::host_options();
  sgtest::Exec e;
  SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
  for (int i = 0; i < 5; i++) SG_ASSERT_OK(sg_graph_add_host(g, &h, &n0, 1, nullptr));
  SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  SG_ASSERT_OK(sg_exec_update(e, g));  // waits for the launch in flight, then rebuilds
  EXPECT_EQ(count.load(), 1);
  SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  SG_ASSERT_OK(sg_exec_wait(e));
  EXPECT_EQ(count.load(), 7);
  sg_exec_stats s;
  SG_ASSERT_OK(sg_exec_get_stats(e, &s));
  EXPECT_EQ(s.rebuilds, 1u);
  sg_exec_info info;
  SG_ASSERT_OK(sg_exec_get_info(e, &info));
  EXPECT_EQ(info.node_count, 6u);
  EXPECT_GT(info.stream_count, 1u);
  // Handles of the graph stay valid after the rebuild.
  sg_host_desc h2 = {add_to, &count, "renamed"};
  SG_ASSERT_OK(sg_exec_set_host(e, n0, &h2));
}

TEST_F(ExecUpdate, UpdateRefusesACycle) {
  sgtest::Graph g;
  sg_node a{}, b{};
  SG_ASSERT_OK(sg_graph_add_empty(g, "a", nullptr, 0, &a));
  SG_ASSERT_OK(sg_graph_add_empty(g, "b", &a, 1, &b));
  sg_exec_options o = sgtest::host_options();
  sgtest::Exec e;
  SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
  SG_ASSERT_OK(sg_graph_add_edge(g, b, a));
  EXPECT_EQ(sg_exec_update(e, g), SG_ERR_CYCLE);
  SG_ASSERT_OK(sg_exec_launch(e, nullptr));  // the executable is unchanged
  SG_ASSERT_OK(sg_exec_wait(e));
}

// A rebuild that fails part way through the backend's creation (an
// allocation, aimed at with a named fault point) leaves the executable as it
// was: every call works on the old topology, and nothing leaks.
TEST_F(ExecUpdate, RebuildFailingInTheBackendLeavesTheExecutableUsable) {
  sgtest::LeakCheck leaks;
  std::atomic<int> count{0};
  sgtest::Graph g;
  sg_host_desc h = {add_to, &count, nullptr};
  sg_node n0{};
  SG_ASSERT_OK(sg_graph_add_host(g, &h, nullptr, 0, &n0));
  sg_exec_options o = sgtest::host_options();
  o.trace = 1;
  sg_exec *e = nullptr;
  SG_ASSERT_OK(sg_exec_create(g, &o, &e));
  SG_ASSERT_OK(sg_graph_add_host(g, &h, &n0, 1, nullptr));
  sg_fault_arm_site(SG_FAULT_ALLOC, "host/host_exec.c:host_create", 1);
  EXPECT_EQ(sg_exec_update(e, g), SG_ERR_OUT_OF_MEMORY);
  ASSERT_TRUE(sg_fault_fired());
  EXPECT_STREQ(sg_fault_site(), "host/host_exec.c:host_create:sg__calloc");
  sg_fault_arm(0, 0);
  SG_EXPECT_OK(sg_exec_query(e));
  SG_EXPECT_OK(sg_exec_launch(e, nullptr));
  SG_EXPECT_OK(sg_exec_wait(e));
  EXPECT_EQ(count.load(), 1) << "the old one-node graph ran";
  sg_trace_record r[2];
  size_t n = 0;
  SG_EXPECT_OK(sg_exec_get_trace(e, r, 2, &n));
  EXPECT_EQ(n, 1u);
  SG_EXPECT_OK(sg_exec_destroy(e));
}

}  // namespace
