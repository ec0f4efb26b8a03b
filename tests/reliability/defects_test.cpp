// Regression tests named after the defects that independent checks, fuzzing
// and fault sweeps found (CPU side; defect 1 needs a GPU: defect1_gpu_test).
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <future>
#include <string>
#include <thread>
#include <vector>

extern "C" {
#include "core/edge_set.h"
}
#include "sg_test_util.h"
#include "streamgraph/kernels.h"

namespace {

#define EXPECT_MESSAGE_HAS(text)                                              \
  EXPECT_NE(std::string(sg_last_error()).find(text), std::string::npos)     \
      << "message: " << sg_last_error()

// Runs `fn` on a thread of its own and waits up to `seconds` for it: a call
// that should fail must not hang the suite instead. Returns false on a hang
// (the thread is then left behind).
template <typename Fn>
bool returns_within(double seconds, Fn fn) {
  auto task = std::make_shared<std::packaged_task<void()>>(fn);
  auto done = task->get_future();
  std::thread([task] { (*task)(); }).detach();
  return done.wait_for(std::chrono::duration<double>(seconds)) == std::future_status::ready;
}

void twin_fill(const sg_kernel_launch *, void *const *args) {
  uint32_t *out = *static_cast<uint32_t *const *>(args[0]);
  uint32_t value;
  std::memcpy(&value, args[1], sizeof value);
  out[0] = value;
}

// A kernel node writing `value` to out[0], with a host twin (or without one:
// then only a CUDA backend could run it).
sg_status add_fill(sg_graph *g, uint32_t **out, uint32_t *value, bool twin, const char *name,
                   const sg_node *deps, size_t dep_count, sg_node *node) {
  static int func_stand_in;
  void *args[2] = {out, value};
  size_t sizes[2] = {sizeof *out, sizeof *value};
  sg_kernel_desc k{};
  k.func = twin ? nullptr : &func_stand_in;
  k.grid = {1, 1, 1};
  k.block = {1, 1, 1};
  k.args = args;
  k.arg_sizes = sizes;
  k.arg_count = 2;
  k.host_twin = twin ? twin_fill : nullptr;
  k.name = name;
  return sg_graph_add_kernel(g, &k, deps, dep_count, node);
}

// ---- defect 3: a failed rebuild leaves the executable as it was ---------

struct Defect3 : ::testing::Test {
  void SetUp() override {
    SG_ASSERT_OK(sg_mem_alloc(SG_BACKEND_HOST, SG_MEMORY_DEVICE, 0, 64, &mem));
    out = static_cast<uint32_t *>(mem);
  }
  void TearDown() override { sg_mem_free(mem); }
  void *mem = nullptr;
  uint32_t *out = nullptr;
};

TEST_F(Defect3, FailedRebuildLeavesTheExecutableUsable) {
  sgtest::LeakCheck leaks;
  sgtest::Graph g;
  uint32_t value = 7;
  sg_node first{};
  SG_ASSERT_OK(add_fill(g, &out, &value, true, "fill", nullptr, 0, &first));
  sg_exec_options o = sgtest::host_options();
  o.trace = 1;
  sgtest::Exec e;
  SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));

  // The new topology has a kernel without a host twin: the rebuild fails.
  uint32_t other = 9;
  uint32_t *second_out = out + 1;
  SG_ASSERT_OK(add_fill(g, &second_out, &other, false, "gpu only", &first, 1, nullptr));
  EXPECT_EQ(sg_exec_update(e, g), SG_ERR_NO_HOST_TWIN);
  EXPECT_MESSAGE_HAS("sg_exec_update");
  EXPECT_MESSAGE_HAS("'gpu only'");

  // Every call still works, on the executable as it was.
  SG_EXPECT_OK(sg_exec_query(e));
  out[0] = 0;
  SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  SG_ASSERT_OK(sg_exec_wait(e));
  EXPECT_EQ(out[0], 7u);
  sg_exec_info info;
  SG_ASSERT_OK(sg_exec_get_info(e, &info));
  EXPECT_EQ(info.node_count, 1u);
  sg_trace_record rec[2];
  size_t count = 0;
  SG_EXPECT_OK(sg_exec_get_trace(e, rec, 2, &count));
  EXPECT_EQ(count, 1u);
  std::string path = ::testing::TempDir() + "sg_defect3_trace.json";
  SG_EXPECT_OK(sg_exec_write_trace(e, path.c_str()));
  std::remove(path.c_str());
  sg_exec_stats stats;
  SG_ASSERT_OK(sg_exec_get_stats(e, &stats));
  EXPECT_EQ(stats.rebuilds, 0u);
}

// Every allocation and thread creation of a topology change, made to fail
// in turn: the update reports it, and the executable runs as before.
TEST_F(Defect3, FaultDuringRebuildLeavesTheExecutableUsable) {
  sgtest::LeakCheck leaks;
  uint32_t value = 5, other = 6;
  uint32_t *second_out = out + 1;
  for (unsigned long nth = 1;; nth++) {
    sgtest::Graph g;
    sg_node first{};
    SG_ASSERT_OK(add_fill(g, &out, &value, true, "fill", nullptr, 0, &first));
    sg_exec_options o = sgtest::host_options();
    sgtest::Exec e;
    SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
    SG_ASSERT_OK(add_fill(g, &second_out, &other, true, "second", nullptr, 0, nullptr));
    sg_fault_arm(SG_FAULT_ALLOC | SG_FAULT_SYSTEM, nth);
    sg_status st = sg_exec_update(e, g);
    int fired = sg_fault_fired();
    sg_fault_arm(0, 0);
    out[0] = out[1] = 0;
    sg_status launched = sg_exec_launch(e, nullptr);
    ASSERT_EQ(launched, SG_OK) << "after fault " << nth << ": " << sg_last_error();
    sg_status waited = sg_exec_wait(e);
    ASSERT_EQ(waited, SG_OK) << "after fault " << nth << ": " << sg_last_error();
    EXPECT_EQ(out[0], 5u) << "after fault " << nth;
    if (!fired) {
      SG_ASSERT_OK(st);
      EXPECT_EQ(out[1], 6u);
      break;
    }
    EXPECT_NE(st, SG_OK) << "fault " << nth << " fired but the update succeeded";
    EXPECT_MESSAGE_HAS("sg_exec_update");
    EXPECT_EQ(out[1], 0u) << "after fault " << nth << ": the failed update took effect";
    ASSERT_LT(nth, 1000u);
  }
}

// ---- defect 4: the edge index's capacity wraps past 2^30 edges ---------

TEST(Defect4, EdgeSetCapacityOverflowIsRefused) {
  // The state of a set holding 2^30 edges; nothing is allocated for it: a
  // reserve past the limit must answer before touching the arrays.
  sg__edge_set set{};
  set.count = 1u << 30;
  set.capacity = 1u << 30;
  set.index_capacity = 1u << 31;
  sg_status st = SG_OK;
  bool returned = returns_within(5.0, [&] { st = sg__edge_set_reserve(&set, 1); });
  ASSERT_TRUE(returned) << "sg__edge_set_reserve spun past 2^30 edges";
  EXPECT_EQ(st, SG_ERR_OUT_OF_MEMORY);
}

// ---- defect 5: CUDA_DEVICE_MAX_CONNECTIONS is parsed strictly ----------

unsigned default_limit_with(const char *value) {
  const char *name = "CUDA_DEVICE_MAX_CONNECTIONS";
  std::string saved = std::getenv(name) ? std::getenv(name) : "";
  bool had = std::getenv(name) != nullptr;
  if (value) setenv(name, value, 1); else unsetenv(name);
  sgtest::Graph g;
  EXPECT_EQ(sg_graph_add_empty(g, "a", nullptr, 0, nullptr), SG_OK);
  sg_plan *plan = nullptr;
  unsigned limit = 0;
  if (sg_plan_create(g, 0, &plan) == SG_OK) {
    sg_plan_summary s;
    if (sg_plan_get_summary(plan, &s) == SG_OK) limit = s.max_streams;
    sg_plan_destroy(plan);
  }
  if (had) setenv(name, saved.c_str(), 1); else unsetenv(name);
  return limit;
}

TEST(Defect5, StrictEnvironmentParsing) {
  EXPECT_EQ(default_limit_with(nullptr), 8u);
  EXPECT_EQ(default_limit_with("4"), 4u);
  EXPECT_EQ(default_limit_with("32"), 32u);
  const char *bad[] = {"",     " -1",  "-1",  " 4",   "4 ",   "+4",   "0",    "0x10", "4x",
                       "1e3",  "\t8",  " +2", "-0",   "4294967296", "99999999999999999999",
                       "-18446744073709551615", " -18446744073709551615", "\n3"};
  for (const char *value : bad)
    EXPECT_EQ(default_limit_with(value), 8u) << "CUDA_DEVICE_MAX_CONNECTIONS=\"" << value << "\"";
}

// ---- defect 7: pools are attached at creation; rings checked then ------

struct HostPool {
  sg_pinned_pool *p = nullptr;
  explicit HostPool(size_t max_bytes) {
    sg_pinned_pool_options o;
    sg_pinned_pool_options_init(&o);
    o.backend = SG_BACKEND_HOST;
    o.max_bytes = max_bytes;
    o.slab_bytes = max_bytes;
    SG_EXPECT_OK(sg_pinned_pool_create(&o, &p));
  }
  ~HostPool() {
    if (p) sg_pinned_pool_destroy(p);
  }
};

TEST(Defect7, DISABLED_NamedPoolIsHeldFromCreation) {
  HostPool pool(1u << 20);
  void *a = nullptr, *b = nullptr;
  SG_ASSERT_OK(sg_mem_alloc(SG_BACKEND_HOST, SG_MEMORY_DEVICE, 0, 256, &a));
  SG_ASSERT_OK(sg_mem_alloc(SG_BACKEND_HOST, SG_MEMORY_DEVICE, 0, 256, &b));
  for (sg_staging_policy policy : {SG_STAGING_STAGE, SG_STAGING_REGISTER, SG_STAGING_AUTO}) {
    for (sg_exec_mode mode : {SG_MODE_STREAMS, SG_MODE_GRAPH}) {
      sgtest::Graph g;  // no copy that staging could carry out (yet)
      sg_copy_desc c = {b, a, 256, SG_COPY_DEVICE_TO_DEVICE, "d2d"};
      SG_ASSERT_OK(sg_graph_add_copy(g, &c, nullptr, 0, nullptr));
      sg_exec_options o = sgtest::host_options();
      o.mode = mode;
      o.staging.policy = policy;
      o.staging.pool = pool.p;
      sg_exec *e = nullptr;
      SG_ASSERT_OK(sg_exec_create(g, &o, &e));
      EXPECT_EQ(sg_pinned_pool_destroy(pool.p), SG_ERR_INVALID_ARGUMENT)
          << "policy " << policy << ", mode " << mode << ": the pool was destroyed under a live "
          << "executable that names it";
      SG_ASSERT_OK(sg_exec_destroy(e));
    }
  }
  SG_EXPECT_OK(sg_pinned_pool_destroy(pool.p));
  pool.p = nullptr;
  sg_mem_free(a);
  sg_mem_free(b);
}

TEST(Defect7, DISABLED_StreamsModeRingAboveThePoolCapIsRefusedAtCreation) {
  HostPool pool(64u << 10);
  void *dev = nullptr;
  SG_ASSERT_OK(sg_mem_alloc(SG_BACKEND_HOST, SG_MEMORY_DEVICE, 0, 1u << 20, &dev));
  std::vector<uint8_t> host(1u << 20);
  sgtest::Graph g;
  sg_copy_desc c = {dev, host.data(), host.size(), SG_COPY_HOST_TO_DEVICE, "big upload"};
  SG_ASSERT_OK(sg_graph_add_copy(g, &c, nullptr, 0, nullptr));
  sg_exec_options o = sgtest::host_options();
  o.staging.policy = SG_STAGING_STAGE;
  o.staging.pool = pool.p;
  o.staging.chunk_bytes = 256u << 10;
  sg_exec *e = nullptr;
  EXPECT_EQ(sg_exec_create(g, &o, &e), SG_ERR_POOL_EXHAUSTED);
  EXPECT_MESSAGE_HAS("'big upload'");
  EXPECT_EQ(e, nullptr);
  if (e) sg_exec_destroy(e);
  sg_mem_free(dev);
}

// ---- issue 12, item 4: a callback waiting on its own executable --------

struct SelfCall {
  sg_exec *exec = nullptr;
  std::atomic<int> status{-1};
  std::string message;
};

int wait_on_own_exec(void *p) {
  SelfCall *s = static_cast<SelfCall *>(p);
  sg_status st = sg_exec_wait(s->exec);
  s->message = sg_last_error();
  s->status = st;
  return 0;
}

TEST(Issue12Item4, DISABLED_CallbackWaitingOnItsOwnExecutableGetsAnError) {
  sgtest::Graph g;
  SelfCall self;
  sg_host_desc h = {wait_on_own_exec, &self, "waits on itself"};
  SG_ASSERT_OK(sg_graph_add_host(g, &h, nullptr, 0, nullptr));
  sg_exec_options o = sgtest::host_options();
  sg_exec *e = nullptr;
  SG_ASSERT_OK(sg_exec_create(g, &o, &e));
  self.exec = e;
  SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  bool returned = returns_within(10.0, [e] { sg_exec_wait(e); });
  ASSERT_TRUE(returned) << "sg_exec_wait from the executable's own callback deadlocked";
  EXPECT_NE(self.status.load(), SG_OK);
  EXPECT_NE(self.message.find("sg_exec_wait"), std::string::npos) << self.message;
  SG_EXPECT_OK(sg_exec_destroy(e));
}

}  // namespace
