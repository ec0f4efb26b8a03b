// The host backend: every node kind, chains, fans, diamonds, repeated
// launches, failures, traces, snapshots and destroy paths.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "sg_test_util.h"
#include "streamgraph/kernels.h"

namespace {

using sgtest::Exec;
using sgtest::Graph;

int add_one(void *p) {
  static_cast<std::atomic<int> *>(p)->fetch_add(1);
  return 0;
}

void run_once(sg_graph *g, unsigned max_streams = 0) {
  sg_exec_options o = sgtest::host_options(max_streams);
  Exec e;
  SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
  SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  SG_ASSERT_OK(sg_exec_wait(e));
}

TEST(HostExec, EveryNodeKindRuns) {
  Graph g;
  void *dev = nullptr;
  SG_ASSERT_OK(sg_mem_alloc(SG_BACKEND_HOST, SG_MEMORY_DEVICE, 0, 4096, &dev));
  uint32_t *d = static_cast<uint32_t *>(dev);
  std::vector<uint32_t> in(256), out(256, 0xdeadbeef);
  for (size_t i = 0; i < in.size(); i++) in[i] = static_cast<uint32_t>(i * 2654435761u);
  std::atomic<int> calls{0};

  sg_copy_desc up = {d, in.data(), 256 * 4, SG_COPY_HOST_TO_DEVICE, "upload"};
  sg_node n_up{}, n_mix{}, n_set{}, n_host{}, n_sfn{}, n_join{}, n_d2d{}, n_down{};
  SG_ASSERT_OK(sg_graph_add_copy(g, &up, nullptr, 0, &n_up));
  sg_kernel_call mix;
  sg_kernels_mix_u32(&mix, d, d, d, 5, 256);
  SG_ASSERT_OK(sg_graph_add_kernel(g, &mix.desc, &n_up, 1, &n_mix));
  sg_memset_desc set = {d + 256, 0x1234, 2, 512, "memset16"};
  SG_ASSERT_OK(sg_graph_add_memset(g, &set, nullptr, 0, &n_set));
  sg_host_desc h = {add_one, &calls, "host"};
  SG_ASSERT_OK(sg_graph_add_host(g, &h, &n_mix, 1, &n_host));
  sg_stream_fn_desc s = {};
  s.host_twin = add_one;
  s.user_data = &calls;
  s.name = "sfn";
  SG_ASSERT_OK(sg_graph_add_stream_fn(g, &s, &n_set, 1, &n_sfn));
  sg_node both[] = {n_host, n_sfn};
  SG_ASSERT_OK(sg_graph_add_empty(g, "join", both, 2, &n_join));
  sg_copy_desc d2d = {d + 512, d, 256 * 4, SG_COPY_DEVICE_TO_DEVICE, "d2d"};
  SG_ASSERT_OK(sg_graph_add_copy(g, &d2d, &n_join, 1, &n_d2d));
  sg_copy_desc down = {out.data(), d + 512, 256 * 4, SG_COPY_AUTO, "download"};
  SG_ASSERT_OK(sg_graph_add_copy(g, &down, &n_d2d, 1, &n_down));
  run_once(g);

  for (size_t i = 0; i < 256; i++) ASSERT_EQ(out[i], sg_kernels_mix(in[i], in[i], 5)) << i;
  const uint16_t *half = reinterpret_cast<const uint16_t *>(d + 256);
  for (int i = 0; i < 512; i++) ASSERT_EQ(half[i], 0x1234);
  EXPECT_EQ(calls.load(), 2);
  SG_ASSERT_OK(sg_mem_free(dev));
}

TEST(HostExec, MemsetElementSizes) {
  Graph g;
  uint8_t buf[64];
  std::memset(buf, 0, sizeof buf);
  sg_memset_desc m1 = {buf, 0xab, 1, 8, nullptr};
  sg_memset_desc m2 = {buf + 8, 0xbeef, 2, 8, nullptr};
  sg_memset_desc m4 = {buf + 24, 0xcafef00d, 4, 8, nullptr};
  SG_ASSERT_OK(sg_graph_add_memset(g, &m1, nullptr, 0, nullptr));
  SG_ASSERT_OK(sg_graph_add_memset(g, &m2, nullptr, 0, nullptr));
  SG_ASSERT_OK(sg_graph_add_memset(g, &m4, nullptr, 0, nullptr));
  run_once(g);
  for (int i = 0; i < 8; i++) EXPECT_EQ(buf[i], 0xab);
  uint16_t v16;
  uint32_t v32;
  for (int i = 0; i < 8; i++) {
    std::memcpy(&v16, buf + 8 + 2 * i, 2);
    std::memcpy(&v32, buf + 24 + 4 * i, 4);
    EXPECT_EQ(v16, 0xbeef);
    EXPECT_EQ(v32, 0xcafef00du);
  }
  for (int i = 56; i < 64; i++) EXPECT_EQ(buf[i], 0) << "memset wrote past its end";
}

// value = 2 * value + tag, so the order of a chain is visible in the result.
struct Step {
  uint64_t *value;
  uint64_t tag;
};
int step(void *p) {
  Step *s = static_cast<Step *>(p);
  *s->value = *s->value * 2 + s->tag;
  return 0;
}

TEST(HostExec, ChainRunsInOrderOnOneStream) {
  Graph g;
  uint64_t value = 0;
  std::vector<Step> steps(40);
  sg_node prev{};
  for (size_t i = 0; i < steps.size(); i++) {
    steps[i] = {&value, i % 2};
    sg_host_desc h = {step, &steps[i], nullptr};
    SG_ASSERT_OK(sg_graph_add_host(g, &h, i ? &prev : nullptr, i ? 1 : 0, &prev));
  }
  sg_exec_options o = sgtest::host_options();
  Exec e;
  SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
  sg_exec_info info;
  SG_ASSERT_OK(sg_exec_get_info(e, &info));
  EXPECT_EQ(info.backend, SG_BACKEND_HOST);
  EXPECT_EQ(info.stream_count, 1u);
  EXPECT_EQ(info.event_count, 0u);
  EXPECT_EQ(info.wait_count, 0u);
  EXPECT_EQ(info.node_count, 40u);
  SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  SG_ASSERT_OK(sg_exec_wait(e));
  uint64_t expect = 0;
  for (size_t i = 0; i < steps.size(); i++) expect = expect * 2 + i % 2;
  EXPECT_EQ(value, expect);
}

TEST(HostExec, FanAndDiamond) {
  Graph g;
  std::atomic<int> calls{0};
  sg_host_desc h = {add_one, &calls, nullptr};
  sg_node top{}, bottom{};
  SG_ASSERT_OK(sg_graph_add_host(g, &h, nullptr, 0, &top));
  std::vector<sg_node> middle(6);
  for (auto &m : middle) SG_ASSERT_OK(sg_graph_add_host(g, &h, &top, 1, &m));
  SG_ASSERT_OK(sg_graph_add_host(g, &h, middle.data(), middle.size(), &bottom));
  for (unsigned streams : {1u, 2u, 3u, 6u, 8u}) {
    calls = 0;
    sg_exec_options o = sgtest::host_options(streams);
    Exec e;
    SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
    sg_exec_info info;
    SG_ASSERT_OK(sg_exec_get_info(e, &info));
    EXPECT_LE(info.stream_count, streams);
    EXPECT_GE(info.wait_count, info.stream_count > 1 ? 2u * (info.stream_count - 1) : 0u)
        << "every other stream waits for the top and the bottom waits for every other stream";
    SG_ASSERT_OK(sg_exec_launch(e, nullptr));
    SG_ASSERT_OK(sg_exec_wait(e));
    EXPECT_EQ(calls.load(), 8);
  }
}

TEST(HostExec, RepeatedLaunchesRunEveryTime) {
  Graph g;
  std::atomic<int> calls{0};
  sg_host_desc h = {add_one, &calls, nullptr};
  sg_node a{}, b{}, c{};
  SG_ASSERT_OK(sg_graph_add_host(g, &h, nullptr, 0, &a));
  SG_ASSERT_OK(sg_graph_add_host(g, &h, &a, 1, &b));
  SG_ASSERT_OK(sg_graph_add_host(g, &h, &a, 1, &c));
  sg_exec_options o = sgtest::host_options();
  Exec e;
  SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
  for (int i = 0; i < 500; i++) SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  SG_ASSERT_OK(sg_exec_wait(e));
  EXPECT_EQ(calls.load(), 1500);
  sg_exec_stats stats;
  SG_ASSERT_OK(sg_exec_get_stats(e, &stats));
  EXPECT_EQ(stats.launches, 500u);
  EXPECT_EQ(sg_exec_query(e), SG_OK);
}

TEST(HostExec, EmptyGraphLaunchesAndWaits) {
  Graph g;
  run_once(g);
}

struct Gate {
  std::atomic<bool> open{false};
};
int wait_gate(void *p) {
  Gate *gate = static_cast<Gate *>(p);
  while (!gate->open.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return 0;
}

TEST(HostExec, QueryReportsWorkInFlight) {
  Graph g;
  Gate gate;
  sg_host_desc h = {wait_gate, &gate, "gate"};
  SG_ASSERT_OK(sg_graph_add_host(g, &h, nullptr, 0, nullptr));
  sg_exec_options o = sgtest::host_options();
  Exec e;
  SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
  SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  EXPECT_EQ(sg_exec_query(e), SG_NOT_READY);
  gate.open = true;
  SG_ASSERT_OK(sg_exec_wait(e));
  EXPECT_EQ(sg_exec_query(e), SG_OK);
}

TEST(HostExec, DestroyWaitsForLaunchesInFlight) {
  Graph g;
  std::atomic<int> calls{0};
  Gate gate;
  sg_host_desc slow = {wait_gate, &gate, nullptr};
  sg_host_desc count = {add_one, &calls, nullptr};
  sg_node a{};
  SG_ASSERT_OK(sg_graph_add_host(g, &slow, nullptr, 0, &a));
  SG_ASSERT_OK(sg_graph_add_host(g, &count, &a, 1, nullptr));
  sg_exec_options o = sgtest::host_options();
  sg_exec *e = nullptr;
  SG_ASSERT_OK(sg_exec_create(g, &o, &e));
  for (int i = 0; i < 3; i++) SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  std::thread opener([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    gate.open = true;
  });
  SG_EXPECT_OK(sg_exec_destroy(e));  // EXPECT: the opener must be joined
  opener.join();
  EXPECT_EQ(calls.load(), 3) << "destroy let every launched node run";
  EXPECT_EQ(sg_exec_launch(e, nullptr), SG_ERR_INVALID_HANDLE);
  EXPECT_EQ(sg_exec_wait(e), SG_ERR_INVALID_HANDLE);
  EXPECT_EQ(sg_exec_destroy(e), SG_ERR_INVALID_HANDLE);
}

int fail_with_7(void *) { return 7; }

TEST(HostExec, FailingCallbackFailsTheLaunchAndTheExecutable) {
  Graph g;
  std::atomic<int> calls{0};
  Gate gate;  // holds the first launch until the second is queued behind it
  sg_host_desc first = {wait_gate, &gate, "before"};
  sg_host_desc ok = {add_one, &calls, "after"};
  sg_host_desc bad = {fail_with_7, nullptr, "broken"};
  sg_node a{}, b{}, c{};
  SG_ASSERT_OK(sg_graph_add_host(g, &first, nullptr, 0, &a));
  SG_ASSERT_OK(sg_graph_add_host(g, &bad, &a, 1, &b));
  SG_ASSERT_OK(sg_graph_add_host(g, &ok, &b, 1, &c));
  ok.name = "independent";
  SG_ASSERT_OK(sg_graph_add_host(g, &ok, nullptr, 0, nullptr));
  sg_exec_options o = sgtest::host_options();
  Exec e;
  SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
  SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  SG_ASSERT_OK(sg_exec_launch(e, nullptr));  // queued behind the failing one
  gate.open = true;
  EXPECT_EQ(sg_exec_wait(e), SG_ERR_CALLBACK);
  std::string msg = sg_last_error();
  EXPECT_NE(msg.find("'broken' (#1) returned 7"), std::string::npos) << msg;
  EXPECT_NE(msg.find("launch 1"), std::string::npos) << msg;
  EXPECT_LE(calls.load(), 1) << "only 'independent' may run: 'after' follows 'broken', and "
                                "the queued launch runs nothing once the executable failed";
  EXPECT_EQ(sg_exec_query(e), SG_ERR_CALLBACK);
  EXPECT_EQ(sg_exec_launch(e, nullptr), SG_ERR_EXEC_FAILED);
  msg = sg_last_error();
  EXPECT_NE(msg.find("earlier launch failed"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'broken'"), std::string::npos) << msg;
  EXPECT_EQ(sg_exec_wait(e), SG_ERR_CALLBACK) << "waiting again returns at once";
}

TEST(HostExec, ExecutableOwnsItsSnapshot) {
  std::atomic<int> first{0}, second{0};
  sg_graph *g = nullptr;
  SG_ASSERT_OK(sg_graph_create(&g));
  sg_host_desc h = {add_one, &first, "count"};
  sg_node a{};
  SG_ASSERT_OK(sg_graph_add_host(g, &h, nullptr, 0, &a));
  sg_exec_options o = sgtest::host_options();
  Exec e;
  SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
  h.user_data = &second;
  SG_ASSERT_OK(sg_graph_set_host(g, a, &h));  // editing the graph...
  SG_ASSERT_OK(sg_graph_add_host(g, &h, &a, 1, nullptr));
  SG_ASSERT_OK(sg_graph_destroy(g));  // ...and destroying it
  SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  SG_ASSERT_OK(sg_exec_wait(e));
  EXPECT_EQ(first.load(), 1);
  EXPECT_EQ(second.load(), 0);
}

TEST(HostExec, TraceRecordsEveryNodeInDependencyOrder) {
  Graph g;
  std::atomic<int> calls{0};
  sg_host_desc h = {add_one, &calls, nullptr};
  std::vector<sg_node> nodes;
  const char *names[] = {"load", "left", "right", "store"};
  sg_node a{}, b{}, c{}, d{};
  h.name = names[0];
  SG_ASSERT_OK(sg_graph_add_host(g, &h, nullptr, 0, &a));
  h.name = names[1];
  SG_ASSERT_OK(sg_graph_add_host(g, &h, &a, 1, &b));
  h.name = names[2];
  SG_ASSERT_OK(sg_graph_add_host(g, &h, &a, 1, &c));
  sg_node bc[] = {b, c};
  h.name = names[3];
  SG_ASSERT_OK(sg_graph_add_host(g, &h, bc, 2, &d));
  sg_exec_options o = sgtest::host_options();
  o.trace = 1;
  Exec e;
  SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
  SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  sg_trace_record rec[4];
  size_t count = 0;
  SG_ASSERT_OK(sg_exec_get_trace(e, rec, 4, &count));
  ASSERT_EQ(count, 4u);
  uint64_t start[4], end[4];
  for (auto &r : rec) {
    uint32_t i = sg_node_index(r.node);
    ASSERT_LT(i, 4u);
    start[i] = r.start_ns;
    end[i] = r.end_ns;
    EXPECT_LE(r.start_ns, r.end_ns);
  }
  EXPECT_GE(start[1], end[0]);
  EXPECT_GE(start[2], end[0]);
  EXPECT_GE(start[3], end[1]);
  EXPECT_GE(start[3], end[2]);

  std::string path = ::testing::TempDir() + "sg_trace_test.json";
  SG_ASSERT_OK(sg_exec_write_trace(e, path.c_str()));
  std::ifstream f(path);
  std::stringstream text;
  text << f.rdbuf();
  std::string json = text.str();
  EXPECT_EQ(json.rfind("{\"traceEvents\":[", 0), 0u);
  for (const char *n : names) EXPECT_NE(json.find(std::string("\"name\":\"") + n + "\""), std::string::npos);
  EXPECT_NE(json.find("\"ph\":\"X\""), std::string::npos);
  std::remove(path.c_str());
}

TEST(HostExec, TraceNeedsTheOption) {
  Graph g;
  SG_ASSERT_OK(sg_graph_add_empty(g, nullptr, nullptr, 0, nullptr));
  sg_exec_options o = sgtest::host_options();
  Exec e;
  SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
  size_t count;
  EXPECT_EQ(sg_exec_get_trace(e, nullptr, 0, &count), SG_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(sg_last_error()).find("without `trace`"), std::string::npos);
  EXPECT_EQ(sg_exec_write_trace(e, nullptr), SG_ERR_INVALID_ARGUMENT);
}

}  // namespace
