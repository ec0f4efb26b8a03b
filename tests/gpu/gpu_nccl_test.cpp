// NCCL nodes in one process driving two GPUs (ncclCommInitAll): all-reduce,
// all-gather and send/recv groups as nodes between kernels, in every mode,
// equal a CPU reference; buffers change in place (sg_exec_set_nccl); bad
// calls are refused at creation naming the node and call. The two-process
// case is examples/nccl_two_process.c (its own test). Skips, saying why,
// with fewer than two GPUs.
#include <nccl.h>

#include <cstdlib>

#include "gpu_multi_util.h"

namespace {

using gputest::ModeCase;
using multitest::DevOn;

class Nccl : public ::testing::TestWithParam<ModeCase> {
 protected:
  static ncclComm_t comms[2];
  static bool ready;
  static std::string why;

  static void SetUpTestSuite() {
    if (sg_cuda_device_count() < 2) return;
    setenv("NCCL_NVLS_ENABLE", "0", 1);  // NVLink multicast stays off
    // One process driving both GPUs' graphs: docs/multi-gpu.md says why.
    setenv("NCCL_GRAPH_MIXING_SUPPORT", "0", 1);
    int devices[2] = {0, 1};
    ncclResult_t r = ncclCommInitAll(comms, 2, devices);
    ready = r == ncclSuccess;
    if (!ready) why = std::string("ncclCommInitAll failed: ") + ncclGetErrorString(r);
  }
  static void TearDownTestSuite() {
    if (!ready) return;
    for (ncclComm_t c : comms) ncclCommDestroy(c);
    ready = false;
  }
  void SetUp() override {
    SG_SKIP_WITHOUT_TWO_GPUS();
    int version = 0;
    ASSERT_EQ(sg_nccl_version(&version), SG_OK) << sg_last_error();
    ASSERT_TRUE(ready) << why;
  }
  sg_exec_options options() const { return multitest::options_on(GetParam(), 0); }
  bool graph_mode() const { return GetParam().mode == SG_MODE_GRAPH; }
};

ncclComm_t Nccl::comms[2];
bool Nccl::ready = false;
std::string Nccl::why;

sg_nccl_call call(sg_nccl_op op, ncclComm_t comm, const void *send, void *recv, size_t count,
                  int peer = 0) {
  sg_nccl_call c{};
  c.op = op;
  c.comm = comm;
  c.send = send;
  c.recv = recv;
  c.count = count;
  c.type = SG_NCCL_UINT32;
  c.reduce = SG_NCCL_SUM;
  c.peer = peer;
  return c;
}

void launch_and_wait(sg_exec *x) {
  SG_ASSERT_OK(sg_exec_launch(x, nullptr));
  SG_ASSERT_OK(sg_exec_wait(x));
}

// add k_d on each device's send buffer -> all-reduce (one group, both ranks)
// -> add 1000 on each recv buffer.
TEST_P(Nccl, AllReduceBetweenKernelsOnTwoGpus) {
  const size_t n = (1 << 20) + 3;
  DevOn s0(0, n * 4), s1(1, n * 4), r0(0, n * 4), r1(1, n * 4);
  std::vector<uint32_t> a = gputest::random_u32(1, n), b = gputest::random_u32(2, n);
  sgtest::Graph g;
  gputest::AddCall k0(s0.u32(), 3, n, "k0"), k1(s1.u32(), 4, n, "k1");
  sg_node nk0{}, nk1{}, nar{}, na0{}, na1{};
  SG_ASSERT_OK(sg_graph_add_kernel(g, &k0.desc, nullptr, 0, &nk0));
  SG_ASSERT_OK(sg_graph_add_kernel(g, &k1.desc, nullptr, 0, &nk1));
  SG_ASSERT_OK(sg_graph_set_device(g, nk1, 1));
  sg_nccl_call calls[2] = {call(SG_NCCL_ALL_REDUCE, comms[0], s0.p, r0.p, n),
                           call(SG_NCCL_ALL_REDUCE, comms[1], s1.p, r1.p, n)};
  sg_nccl_desc d = {calls, 2, "all-reduce"};
  sg_node deps[] = {nk0, nk1};
  SG_ASSERT_OK(sg_graph_add_nccl(g, &d, deps, 2, &nar));
  gputest::AddCall a0(r0.u32(), 1000, n, "after0"), a1(r1.u32(), 1000, n, "after1");
  SG_ASSERT_OK(sg_graph_add_kernel(g, &a0.desc, &nar, 1, &na0));
  SG_ASSERT_OK(sg_graph_add_kernel(g, &a1.desc, &nar, 1, &na1));
  SG_ASSERT_OK(sg_graph_set_device(g, na1, 1));
  sg_exec_options o = options();
  sgtest::Exec x;
  SG_ASSERT_OK(sg_exec_create(g, &o, &x.e));
  for (int launch = 0; launch < 3; launch++) {
    gputest::write_u32(s0.p, a);
    gputest::write_u32(s1.p, b);
    r0.poison();
    r1.poison();
    launch_and_wait(x);
    std::vector<uint32_t> got0 = gputest::read_u32(r0.p, n), got1 = gputest::read_u32(r1.p, n);
    for (size_t i = 0; i < n; i++) {
      uint32_t want = a[i] + 3 + b[i] + 4 + 1000;
      ASSERT_EQ(got0[i], want) << GetParam().name << ", rank 0, element " << i << ", launch " << launch;
      ASSERT_EQ(got1[i], want) << GetParam().name << ", rank 1, element " << i << ", launch " << launch;
    }
  }
}

// Two all-reduces on the same communicators that no path orders, each
// after its own kernels, on several streams: the planner orders them as
// created (Issue25Item7), so neither streams nor a CUDA graph's branches can
// issue them in different orders on the two ranks; both give the sums.
TEST_P(Nccl, UnorderedAllReducesOnOneCommunicatorRunInCreationOrder) {
  const size_t n = 65537;
  DevOn s0(0, n * 4), s1(1, n * 4), r0(0, n * 4), r1(1, n * 4);
  DevOn t0(0, n * 4), t1(1, n * 4), q0(0, n * 4), q1(1, n * 4);
  std::vector<uint32_t> a = gputest::random_u32(5, n), b = gputest::random_u32(6, n);
  sgtest::Graph g;
  gputest::AddCall k0(s0.u32(), 1, n, "k0"), k1(s1.u32(), 2, n, "k1");
  gputest::AddCall m0(t0.u32(), 3, n, "m0"), m1(t1.u32(), 4, n, "m1");
  sg_node nk0{}, nk1{}, nm0{}, nm1{}, first{}, second{};
  SG_ASSERT_OK(sg_graph_add_kernel(g, &k0.desc, nullptr, 0, &nk0));
  SG_ASSERT_OK(sg_graph_add_kernel(g, &k1.desc, nullptr, 0, &nk1));
  SG_ASSERT_OK(sg_graph_set_device(g, nk1, 1));
  SG_ASSERT_OK(sg_graph_add_kernel(g, &m0.desc, nullptr, 0, &nm0));
  SG_ASSERT_OK(sg_graph_add_kernel(g, &m1.desc, nullptr, 0, &nm1));
  SG_ASSERT_OK(sg_graph_set_device(g, nm1, 1));
  sg_nccl_call c1[2] = {call(SG_NCCL_ALL_REDUCE, comms[0], s0.p, r0.p, n),
                        call(SG_NCCL_ALL_REDUCE, comms[1], s1.p, r1.p, n)};
  sg_nccl_call c2[2] = {call(SG_NCCL_ALL_REDUCE, comms[0], t0.p, q0.p, n),
                        call(SG_NCCL_ALL_REDUCE, comms[1], t1.p, q1.p, n)};
  sg_nccl_desc d1 = {c1, 2, "first"}, d2 = {c2, 2, "second"};
  sg_node deps1[] = {nk0, nk1}, deps2[] = {nm0, nm1};
  SG_ASSERT_OK(sg_graph_add_nccl(g, &d1, deps1, 2, &first));
  SG_ASSERT_OK(sg_graph_add_nccl(g, &d2, deps2, 2, &second));
  sg_exec_options o = options();
  o.max_streams = 4;
  sgtest::Exec x;
  SG_ASSERT_OK(sg_exec_create(g, &o, &x.e));
  const sg_plan *plan = nullptr;
  SG_ASSERT_OK(sg_exec_get_plan(x, &plan));
  char *dot = nullptr;
  SG_ASSERT_OK(sg_plan_to_dot(plan, &dot));
  EXPECT_NE(std::string(dot).find("nccl order"), std::string::npos) << dot;
  sg_free(dot);
  for (int launch = 0; launch < 5; launch++) {
    gputest::write_u32(s0.p, a);
    gputest::write_u32(s1.p, b);
    gputest::write_u32(t0.p, b);
    gputest::write_u32(t1.p, a);
    launch_and_wait(x);
    std::vector<uint32_t> g0 = gputest::read_u32(r0.p, n), g1 = gputest::read_u32(q1.p, n);
    for (size_t i = 0; i < n; i++) {
      ASSERT_EQ(g0[i], a[i] + 1 + b[i] + 2) << GetParam().name << ", element " << i;
      ASSERT_EQ(g1[i], b[i] + 3 + a[i] + 4) << GetParam().name << ", element " << i;
    }
  }
}

TEST_P(Nccl, AllGatherInRankOrder) {
  const size_t n = 100003;
  DevOn s0(0, n * 4), s1(1, n * 4), r0(0, 2 * n * 4), r1(1, 2 * n * 4);
  std::vector<uint32_t> a = gputest::random_u32(3, n), b = gputest::random_u32(4, n);
  gputest::write_u32(s0.p, a);
  gputest::write_u32(s1.p, b);
  sgtest::Graph g;
  sg_nccl_call calls[2] = {call(SG_NCCL_ALL_GATHER, comms[0], s0.p, r0.p, n),
                           call(SG_NCCL_ALL_GATHER, comms[1], s1.p, r1.p, n)};
  sg_nccl_desc d = {calls, 2, "all-gather"};
  sg_node nag{};
  SG_ASSERT_OK(sg_graph_add_nccl(g, &d, nullptr, 0, &nag));
  SG_ASSERT_OK(sg_graph_set_device(g, nag, 1));  // the node on device 1: rank 0's call hops
  sg_exec_options o = options();
  sgtest::Exec x;
  SG_ASSERT_OK(sg_exec_create(g, &o, &x.e));
  std::vector<uint32_t> want(a);
  want.insert(want.end(), b.begin(), b.end());
  for (int launch = 0; launch < 2; launch++) {
    r0.poison();
    r1.poison();
    launch_and_wait(x);
    ASSERT_EQ(gputest::read_u32(r0.p, 2 * n), want) << GetParam().name << ", rank 0";
    ASSERT_EQ(gputest::read_u32(r1.p, 2 * n), want) << GetParam().name << ", rank 1";
  }
}

// Stage 1 on GPU 0, the activation sent to GPU 1 by send/recv, stage 2 there;
// and the reply the other way in the same group.
TEST_P(Nccl, SendRecvBetweenStages) {
  const size_t n = 65537;
  DevOn x0(0, n * 4), y1(1, n * 4), z1(1, n * 4), w0(0, n * 4);
  std::vector<uint32_t> in = gputest::random_u32(5, n), back = gputest::random_u32(6, n);
  sgtest::Graph g;
  gputest::AddCall k0(x0.u32(), 7, n, "stage1");
  sg_node nk0{}, nx{}, nk1{};
  SG_ASSERT_OK(sg_graph_add_kernel(g, &k0.desc, nullptr, 0, &nk0));
  sg_nccl_call calls[4] = {call(SG_NCCL_SEND, comms[0], x0.p, nullptr, n, 1),
                           call(SG_NCCL_RECV, comms[1], nullptr, y1.p, n, 0),
                           call(SG_NCCL_SEND, comms[1], z1.p, nullptr, n, 0),
                           call(SG_NCCL_RECV, comms[0], nullptr, w0.p, n, 1)};
  sg_nccl_desc d = {calls, 4, "exchange"};
  SG_ASSERT_OK(sg_graph_add_nccl(g, &d, &nk0, 1, &nx));
  gputest::AddCall k1(y1.u32(), 9, n, "stage2");
  SG_ASSERT_OK(sg_graph_add_kernel(g, &k1.desc, &nx, 1, &nk1));
  SG_ASSERT_OK(sg_graph_set_device(g, nk1, 1));
  sg_exec_options o = options();
  sgtest::Exec x;
  SG_ASSERT_OK(sg_exec_create(g, &o, &x.e));
  for (int launch = 0; launch < 2; launch++) {
    gputest::write_u32(x0.p, in);
    gputest::write_u32(z1.p, back);
    y1.poison();
    w0.poison();
    launch_and_wait(x);
    std::vector<uint32_t> got = gputest::read_u32(y1.p, n);
    for (size_t i = 0; i < n; i++) ASSERT_EQ(got[i], in[i] + 7 + 9) << "element " << i;
    ASSERT_EQ(gputest::read_u32(w0.p, n), back) << GetParam().name;
  }
}

TEST_P(Nccl, BuffersChangeInPlace) {
  const size_t n = 4099;
  DevOn s0(0, n * 4), s1(1, n * 4), r0(0, n * 4), r1(1, n * 4), t0(0, n * 4), t1(1, n * 4);
  gputest::write_u32(s0.p, std::vector<uint32_t>(n, 1));
  gputest::write_u32(s1.p, std::vector<uint32_t>(n, 2));
  gputest::write_u32(t0.p, std::vector<uint32_t>(n, 10));
  gputest::write_u32(t1.p, std::vector<uint32_t>(n, 20));
  sgtest::Graph g;
  sg_nccl_call calls[2] = {call(SG_NCCL_ALL_REDUCE, comms[0], s0.p, r0.p, n),
                           call(SG_NCCL_ALL_REDUCE, comms[1], s1.p, r1.p, n)};
  sg_nccl_desc d = {calls, 2, "ar"};
  sg_node nar{};
  SG_ASSERT_OK(sg_graph_add_nccl(g, &d, nullptr, 0, &nar));
  sg_exec_options o = options();
  sgtest::Exec x;
  SG_ASSERT_OK(sg_exec_create(g, &o, &x.e));
  launch_and_wait(x);
  ASSERT_EQ(gputest::read_u32(r1.p, n), std::vector<uint32_t>(n, 3));
  sg_exec_stats before, after;
  SG_ASSERT_OK(sg_exec_get_stats(x, &before));
  // other send buffers, reduced in place into them, with MAX
  sg_nccl_call next[2] = {call(SG_NCCL_ALL_REDUCE, comms[0], t0.p, t0.p, n),
                          call(SG_NCCL_ALL_REDUCE, comms[1], t1.p, t1.p, n)};
  next[0].reduce = next[1].reduce = SG_NCCL_MAX;
  sg_nccl_desc nd = {next, 2, nullptr};
  SG_ASSERT_OK(sg_exec_set_nccl(x, nar, &nd));
  launch_and_wait(x);
  EXPECT_EQ(gputest::read_u32(t0.p, n), std::vector<uint32_t>(n, 20));
  EXPECT_EQ(gputest::read_u32(t1.p, n), std::vector<uint32_t>(n, 20));
  SG_ASSERT_OK(sg_exec_get_stats(x, &after));
  EXPECT_EQ(after.param_updates - before.param_updates, 1u);
  if (graph_mode())
    std::printf("%s: NCCL node update: %s\n", GetParam().name,
                after.rebuilds > before.rebuilds ? "rebuilt (child graph swap refused)"
                                                 : "child graph swapped in place");
  // a different shape is refused, and the executable still runs
  sg_nccl_desc one = {next, 1, nullptr};
  EXPECT_EQ(sg_exec_set_nccl(x, nar, &one), SG_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(sg_last_error()).find("sg_exec_update"), std::string::npos)
      << sg_last_error();
  launch_and_wait(x);
}

TEST_P(Nccl, BadCallsAreRefusedAtCreation) {
  const size_t n = 1024;
  DevOn s0(0, n * 4), s1(1, n * 4), r0(0, n * 4), r1(1, n * 4);
  struct Case {
    const char *what;
    sg_nccl_call calls[2];
    const char *message;
  } cases[] = {
      {"peer out of range",
       {call(SG_NCCL_SEND, comms[0], s0.p, nullptr, n, 2), call(SG_NCCL_RECV, comms[1], nullptr, r1.p, n, 0)},
       "peer 2"},
      {"buffer of another device",
       {call(SG_NCCL_ALL_REDUCE, comms[0], s1.p, r0.p, n), call(SG_NCCL_ALL_REDUCE, comms[1], s1.p, r1.p, n)},
       "device 1"},
      {"host buffer",
       {call(SG_NCCL_ALL_REDUCE, comms[0], &n, r0.p, 1), call(SG_NCCL_ALL_REDUCE, comms[1], s1.p, r1.p, 1)},
       "device memory"},
  };
  for (auto &c : cases) {
    sgtest::Graph g;
    sg_nccl_desc d = {c.calls, 2, "bad"};
    SG_ASSERT_OK(sg_graph_add_nccl(g, &d, nullptr, 0, nullptr));
    sg_exec_options o = options();
    sgtest::Exec x;
    EXPECT_EQ(sg_exec_create(g, &o, &x.e), SG_ERR_INVALID_ARGUMENT) << c.what;
    std::string msg = sg_last_error();
    EXPECT_NE(msg.find("'bad' (#0)"), std::string::npos) << c.what << ": " << msg;
    EXPECT_NE(msg.find("call 0"), std::string::npos) << c.what << ": " << msg;
    EXPECT_NE(msg.find(c.message), std::string::npos) << c.what << ": " << msg;
  }
}

INSTANTIATE_TEST_SUITE_P(Cuda, Nccl, ::testing::ValuesIn(gputest::all_modes()), gputest::mode_name);

}  // namespace
