// Regression tests named after the defects that independent checks, fuzzing
// and fault sweeps found (CPU side; defect 1 needs a GPU: defect1_gpu_test).
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <random>
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
#include "host/host_stage_mem.h"
#include "staging/regcache.h"
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

// ---- defect 1 (CPU side): what the registration cache tells the copy paths

// A registration pins whole pages, and so the first or last bytes of a
// neighbouring buffer; the cache says which ranges it touches, and guards
// a range handed to the driver as pageable memory against a registration
// that would make it partly registered. (The host backend's cache keeps the
// same books without pinning; the GPU test defect1_gpu_test runs the copies.)
TEST(Defect1, RegistrationCacheTouchesAndGuardsNeighbours) {
  const uintptr_t page = 4096;
  std::vector<uint8_t> memory(8 * page);
  uint8_t *base = reinterpret_cast<uint8_t *>(
      (reinterpret_cast<uintptr_t>(memory.data()) + page - 1) & ~(page - 1));
  uint8_t *a = base + 100;        // pages 0 and 1 once registered
  uint8_t *b = base + 2 * page - 96;  // starts in A's last page, ends in the next
  sg__reg_binding *ra = nullptr;
  SG_ASSERT_OK(sg__reg_bind(&sg__host_stage_mem, a, 5000, 1, "test", &ra));
  ASSERT_NE(ra, nullptr);
  EXPECT_TRUE(sg__reg_covers(&sg__host_stage_mem, a, 5000));
  EXPECT_TRUE(sg__reg_touches(&sg__host_stage_mem, b, 500));
  EXPECT_FALSE(sg__reg_covers(&sg__host_stage_mem, b, 500));
  EXPECT_FALSE(sg__reg_touches(&sg__host_stage_mem, base + 2 * page + 10, 100));
  EXPECT_TRUE(sg__reg_binding_covers(ra, a + 1000, 3000));
  EXPECT_FALSE(sg__reg_binding_covers(ra, b, 500));

  // B cannot go to the driver as it is; a range clear of A can, and while it
  // is there, a registration overlapping it waits.
  EXPECT_FALSE(sg__reg_direct_begin(&sg__host_stage_mem, b, 500));
  uint8_t *c = base + 3 * page + 10;
  ASSERT_TRUE(sg__reg_direct_begin(&sg__host_stage_mem, c, 200));
  std::atomic<int> registered{0};
  sg__reg_binding *rd = nullptr;
  std::thread other([&] {
    EXPECT_EQ(sg__reg_bind(&sg__host_stage_mem, base + 3 * page + 500, 1000, 1, "test", &rd), SG_OK);
    registered = 1;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(registered.load(), 0) << "a registration was made under a copy handed to the driver";
  sg__reg_direct_end(&sg__host_stage_mem, c, 200);
  other.join();
  EXPECT_EQ(registered.load(), 1);
  ASSERT_NE(rd, nullptr);
  EXPECT_TRUE(sg__reg_touches(&sg__host_stage_mem, c, 200));
  sg__reg_unbind(rd);
  sg__reg_unbind(ra);
  EXPECT_FALSE(sg__reg_touches(&sg__host_stage_mem, a, 5000));
  EXPECT_FALSE(sg__reg_touches(&sg__host_stage_mem, b, 500));
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
  bool returned = returns_within(60.0, [&] { st = sg__edge_set_reserve(&set, 1); });
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

TEST(Defect7, NamedPoolIsHeldFromCreation) {
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

TEST(Defect7, StreamsModeRingAboveThePoolCapIsRefusedAtCreation) {
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

// ---- defect 8: forbidden concurrency is detected -----------------------

// A gate a host callback waits at until the test opens it.
struct Gate {
  std::mutex m;
  std::condition_variable cv;
  bool open = false, reached = false;
  static int wait_at(void *p) {
    Gate *g = static_cast<Gate *>(p);
    std::unique_lock<std::mutex> lock(g->m);
    g->reached = true;
    g->cv.notify_all();
    g->cv.wait(lock, [g] { return g->open; });
    return 0;
  }
  void wait_reached() {
    std::unique_lock<std::mutex> lock(m);
    cv.wait(lock, [this] { return reached; });
  }
  void release() {
    std::lock_guard<std::mutex> lock(m);
    open = true;
    cv.notify_all();
  }
};

// Waits until `probe` answers SG_ERR_BUSY: the other thread is inside its
// call. The probe must claim the object as a changing call does (two such
// claims exclude each other: one wins). A reading call (sg_exec_get_stats)
// is no such probe: a reader racing a changing call may make both back off,
// so its SG_ERR_BUSY can come from a claim that is then let go.
template <typename Probe>
bool becomes_busy(Probe probe) {
  return sgtest::poll_until([&] { return probe() == SG_ERR_BUSY; });
}

// Calls `call` until it is not refused as busy. The test's probe holds the
// object for the instant of its own call, so a try may lose to it.
template <typename Call>
sg_status call_until_not_busy(Call call) {
  sg_status st;
  while ((st = call()) == SG_ERR_BUSY) std::this_thread::sleep_for(std::chrono::microseconds(50));
  return st;
}

TEST(Defect8, ExecutableUsedFromTwoThreadsIsRefused) {
  sgtest::LeakCheck leaks;
  sgtest::Graph g;
  Gate gate;
  sg_host_desc h = {Gate::wait_at, &gate, "gate"};
  SG_ASSERT_OK(sg_graph_add_host(g, &h, nullptr, 0, nullptr));
  sg_exec_options o = sgtest::host_options();
  sgtest::Exec e;
  SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
  SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  gate.wait_reached();
  sg_status waited = SG_ERR_BUSY;
  std::thread waiter([&] { waited = call_until_not_busy([&] { return sg_exec_wait(e); }); });
  sg_exec_stats stats;
  // EXPECT, not ASSERT: the gate must still open and the waiter be joined.
  EXPECT_TRUE(becomes_busy([&] { return sg_exec_query(e); }));
  EXPECT_EQ(sg_exec_get_stats(e, &stats), SG_ERR_BUSY);  // readers too
  EXPECT_EQ(sg_exec_launch(e, nullptr), SG_ERR_BUSY);
  EXPECT_MESSAGE_HAS("sg_exec_launch");
  EXPECT_MESSAGE_HAS("another thread");
  EXPECT_EQ(sg_exec_destroy(e), SG_ERR_BUSY);
  EXPECT_EQ(sg_exec_update(e, g), SG_ERR_BUSY);
  EXPECT_EQ(sg_exec_set_host(e, sg_node{0}, &h), SG_ERR_BUSY);
  gate.release();
  waiter.join();
  SG_EXPECT_OK(waited);
  SG_EXPECT_OK(sg_exec_get_stats(e, &stats));  // free again
  EXPECT_EQ(stats.launches, 1u);
}

TEST(Defect8, PipelineSubmittedWhileAnotherThreadWaitsIsRefused) {
  sgtest::LeakCheck leaks;
  sgtest::Graph g;
  Gate gate;
  sg_host_desc h = {Gate::wait_at, &gate, "gate"};
  SG_ASSERT_OK(sg_graph_add_host(g, &h, nullptr, 0, nullptr));
  sg_pipeline_options o;
  sg_pipeline_options_init(&o);
  o.exec.backend = SG_BACKEND_HOST;
  o.depth = 2;
  sg_pipeline *p = nullptr;
  SG_ASSERT_OK(sg_pipeline_create(g, &o, &p));
  SG_ASSERT_OK(sg_pipeline_submit(p, nullptr, nullptr));
  gate.wait_reached();
  sg_status waited = SG_ERR_BUSY;
  std::thread waiter([&] { waited = call_until_not_busy([&] { return sg_pipeline_wait(p, 0); }); });
  sg_pipeline_stats stats;
  EXPECT_TRUE(becomes_busy([&] { return sg_pipeline_poll(p); }));
  EXPECT_EQ(sg_pipeline_get_stats(p, &stats), SG_ERR_BUSY);  // readers too
  EXPECT_EQ(sg_pipeline_submit(p, nullptr, nullptr), SG_ERR_BUSY);
  EXPECT_MESSAGE_HAS("sg_pipeline_submit");
  EXPECT_EQ(sg_pipeline_drain(p), SG_ERR_BUSY);
  EXPECT_EQ(sg_pipeline_destroy(p), SG_ERR_BUSY);
  gate.release();
  waiter.join();
  SG_EXPECT_OK(waited);
  SG_EXPECT_OK(sg_pipeline_get_stats(p, &stats));
  EXPECT_EQ(stats.submitted, 1u);
  SG_EXPECT_OK(sg_pipeline_destroy(p));
}

// Two threads edit one graph: every call either succeeds or answers
// SG_ERR_BUSY, and the graph holds exactly what succeeded.
TEST(Defect8, GraphEditedFromTwoThreadsStaysConsistent) {
  sgtest::LeakCheck leaks;
  sgtest::Graph g;
  sg_node first{};
  SG_ASSERT_OK(sg_graph_add_empty(g, "first", nullptr, 0, &first));
  std::atomic<int> added{1}, edges{0}, other{0}, busy{0};
  auto work = [&](int seed) {
    for (int i = 0; i < 20000; i++) {
      sg_node n{};
      sg_status st = sg_graph_add_empty(g, "n", &first, 1, &n);
      if (st == SG_OK) {
        added++;
        edges++;  // the dependency on `first`
        sg_status e = sg_graph_add_edge(g, n, first);  // a cycle, caught later
        if (e == SG_OK) edges++;
        else if (e == SG_ERR_BUSY) busy++;
        else other++;
      } else if (st == SG_ERR_BUSY) {
        busy++;
      } else {
        other++;
      }
      size_t count;
      st = sg_graph_node_count(g, &count);
      if (st != SG_OK && st != SG_ERR_BUSY) other++;
      (void)seed;
    }
  };
  std::thread t1(work, 1), t2(work, 2);
  t1.join();
  t2.join();
  EXPECT_EQ(other.load(), 0);
  size_t nodes = 0, edge_count = 0;
  SG_ASSERT_OK(sg_graph_node_count(g, &nodes));
  SG_ASSERT_OK(sg_graph_edge_count(g, &edge_count));
  EXPECT_EQ(nodes, static_cast<size_t>(added.load()));
  EXPECT_EQ(edge_count, static_cast<size_t>(edges.load()));
  std::printf("two threads: %d nodes added, %d calls answered SG_ERR_BUSY\n", added.load(),
              busy.load());
}

// ---- defect 9: the DOT legend, and a node's waits listed publicly -----

// a -> b -> c and a -> c, and a separate chain x -> y: no stream limit binds.
// a and c follow each other on one stream with no reduced edge between
// them (reduction removed a -> c): dotted, and implied by a path.
TEST(Defect9, PlanListsTheEventsANodeWaitsOn) {
  sgtest::Graph g;
  sg_node a{}, b{}, c{}, x{}, y{}, d{};
  SG_ASSERT_OK(sg_graph_add_empty(g, "a", nullptr, 0, &a));
  SG_ASSERT_OK(sg_graph_add_empty(g, "x", nullptr, 0, &x));
  SG_ASSERT_OK(sg_graph_add_empty(g, "b", &a, 1, &b));
  SG_ASSERT_OK(sg_graph_add_empty(g, "y", &x, 1, &y));
  sg_node cd[] = {a, b};
  SG_ASSERT_OK(sg_graph_add_empty(g, "c", cd, 2, &c));
  sg_node dd[] = {c, y};
  SG_ASSERT_OK(sg_graph_add_empty(g, "d", dd, 2, &d));
  sg_plan *p = nullptr;
  SG_ASSERT_OK(sg_plan_create(g, 0, &p));
  sg_plan_node_info di, yi;
  SG_ASSERT_OK(sg_plan_get_node(p, d, &di));
  SG_ASSERT_OK(sg_plan_get_node(p, y, &yi));
  ASSERT_NE(di.stream, yi.stream);  // d needs y's stream through an event
  size_t count = 0;
  SG_ASSERT_OK(sg_plan_get_waits(p, d, nullptr, 0, &count));
  ASSERT_EQ(count, di.wait_count);
  ASSERT_EQ(count, 1u);
  sg_plan_wait w{};
  SG_ASSERT_OK(sg_plan_get_waits(p, d, &w, 1, &count));
  EXPECT_EQ(sg_node_index(w.after), sg_node_index(y));
  EXPECT_EQ(w.stream, yi.stream);
  EXPECT_TRUE(yi.records_event);
  EXPECT_EQ(w.event, yi.event);
  EXPECT_EQ(sg_plan_get_waits(p, d, nullptr, 1, &count), SG_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(sg_plan_get_waits(p, d, &w, 1, nullptr), SG_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(sg_plan_get_waits(p, sg_node{0}, &w, 1, &count), SG_ERR_INVALID_ARGUMENT);

  SG_ASSERT_OK(sg_plan_destroy(p));
}

// Dotted stream order appears without any stream limit binding (two nodes
// one after the other on a stream, ordered by a path rather than by a
// reduced edge); the legend must not say it comes only from merging.
TEST(Defect9, DotLegendSaysWhereDottedOrderComesFrom) {
  std::mt19937 rng(17);
  bool found = false;
  for (int attempt = 0; attempt < 500 && !found; attempt++) {
    sgtest::Graph g;
    uint32_t n = 5 + rng() % 6;
    std::vector<sg_node> v(n);
    for (uint32_t i = 0; i < n; i++) {
      std::vector<sg_node> deps;
      for (uint32_t j = 0; j < i; j++)
        if (rng() % 3 == 0) deps.push_back(v[j]);
      SG_ASSERT_OK(sg_graph_add_empty(g, nullptr, deps.data(), deps.size(), &v[i]));
    }
    sg_plan *p = nullptr;
    SG_ASSERT_OK(sg_plan_create(g, 0, &p));
    sg_plan_summary s;
    SG_ASSERT_OK(sg_plan_get_summary(p, &s));
    char *dot = nullptr;
    SG_ASSERT_OK(sg_plan_to_dot(p, &dot));
    std::string text = dot;
    sg_free(dot);
    SG_ASSERT_OK(sg_plan_destroy(p));
    if (s.chain_count != s.stream_count || text.find("style=dotted") == std::string::npos)
      continue;
    found = true;
    EXPECT_EQ(text.find("only where chains were merged"), std::string::npos) << text;
    EXPECT_NE(text.find("implied by a longer path"), std::string::npos) << text;
    EXPECT_EQ(text.find("merged to fit"), std::string::npos) << "no limit binds:\n" << text;
  }
  ASSERT_TRUE(found) << "no plan with dotted order and no merging among the graphs tried";

  // With one stream, chains are merged: the legend says so.
  sgtest::Graph g;
  SG_ASSERT_OK(sg_graph_add_empty(g, "a", nullptr, 0, nullptr));
  SG_ASSERT_OK(sg_graph_add_empty(g, "b", nullptr, 0, nullptr));
  sg_plan *p = nullptr;
  SG_ASSERT_OK(sg_plan_create(g, 1, &p));
  char *dot = nullptr;
  SG_ASSERT_OK(sg_plan_to_dot(p, &dot));
  std::string text = dot;
  sg_free(dot);
  EXPECT_NE(text.find("merged to fit the stream limit"), std::string::npos) << text;
  SG_ASSERT_OK(sg_plan_destroy(p));
}

// ---- issue 12, item 4: a callback waiting on its own executable --------

// A host callback that calls back into its own executable (or pipeline):
// every call that would wait for the launch running it, or change it,
// answers SG_ERR_BUSY at once.
struct SelfCall {
  sg_exec *exec = nullptr;
  sg_pipeline *pipeline = nullptr;
  const sg_graph *graph = nullptr;
  std::vector<std::pair<std::string, sg_status>> got;
  std::string message;
};

int call_own_exec(void *p) {
  SelfCall *s = static_cast<SelfCall *>(p);
  if (!s->exec) return 0;
  s->got.emplace_back("sg_exec_wait", sg_exec_wait(s->exec));
  s->message = sg_last_error();
  s->got.emplace_back("sg_exec_destroy", sg_exec_destroy(s->exec));
  s->got.emplace_back("sg_exec_launch", sg_exec_launch(s->exec, nullptr));
  s->got.emplace_back("sg_exec_update", sg_exec_update(s->exec, s->graph));
  sg_trace_record r;
  size_t n;
  s->got.emplace_back("sg_exec_get_trace", sg_exec_get_trace(s->exec, &r, 1, &n));
  return 0;
}

TEST(Issue12Item4, CallbackWaitingOnItsOwnExecutableGetsAnError) {
  sgtest::LeakCheck leaks;
  sgtest::Graph g;
  SelfCall self;
  self.graph = g;
  sg_host_desc h = {call_own_exec, &self, "waits on itself"};
  SG_ASSERT_OK(sg_graph_add_host(g, &h, nullptr, 0, nullptr));
  for (sg_exec_mode mode : {SG_MODE_STREAMS, SG_MODE_GRAPH}) {
    sg_exec_options o = sgtest::host_options();
    o.mode = mode;
    sg_exec *e = nullptr;
    SG_ASSERT_OK(sg_exec_create(g, &o, &e));
    self.exec = e;
    self.got.clear();
    SG_ASSERT_OK(sg_exec_launch(e, nullptr));
    bool returned = returns_within(60.0, [e] { sg_exec_wait(e); });
    ASSERT_TRUE(returned) << "a call from the executable's own callback deadlocked";
    ASSERT_EQ(self.got.size(), 5u);
    for (auto &call : self.got) EXPECT_EQ(call.second, SG_ERR_BUSY) << call.first;
    EXPECT_NE(self.message.find("sg_exec_wait"), std::string::npos) << self.message;
    EXPECT_NE(self.message.find("own launch"), std::string::npos) << self.message;
    self.exec = nullptr;
    SG_EXPECT_OK(sg_exec_destroy(e));
  }
}

int call_own_pipeline(void *p) {
  SelfCall *s = static_cast<SelfCall *>(p);
  if (!s->pipeline) return 0;
  s->got.emplace_back("sg_pipeline_wait", sg_pipeline_wait(s->pipeline, 0));
  s->message = sg_last_error();
  s->got.emplace_back("sg_pipeline_drain", sg_pipeline_drain(s->pipeline));
  s->got.emplace_back("sg_pipeline_submit", sg_pipeline_submit(s->pipeline, nullptr, nullptr));
  s->got.emplace_back("sg_pipeline_destroy", sg_pipeline_destroy(s->pipeline));
  return 0;
}

TEST(Issue12Item4, CallbackWaitingOnItsOwnPipelineGetsAnError) {
  sgtest::LeakCheck leaks;
  sgtest::Graph g;
  SelfCall self;
  sg_host_desc h = {call_own_pipeline, &self, "waits on its pipeline"};
  SG_ASSERT_OK(sg_graph_add_host(g, &h, nullptr, 0, nullptr));
  sg_pipeline_options o;
  sg_pipeline_options_init(&o);
  o.exec.backend = SG_BACKEND_HOST;
  o.depth = 2;
  sg_pipeline *p = nullptr;
  SG_ASSERT_OK(sg_pipeline_create(g, &o, &p));
  self.pipeline = p;
  SG_ASSERT_OK(sg_pipeline_submit(p, nullptr, nullptr));
  bool returned = returns_within(60.0, [p] { sg_pipeline_drain(p); });
  ASSERT_TRUE(returned) << "a call from a batch's own callback deadlocked";
  ASSERT_EQ(self.got.size(), 4u);
  for (auto &call : self.got) EXPECT_EQ(call.second, SG_ERR_BUSY) << call.first;
  EXPECT_NE(self.message.find("sg_pipeline_wait"), std::string::npos) << self.message;
  self.pipeline = nullptr;
  SG_EXPECT_OK(sg_pipeline_destroy(p));
}

// ---- defect 10: a node rebound while a queued-ahead launch runs it --------

// A kernel twin that says it started, is held until released, then logs the
// value argument it was launched with.
struct HeldTwin {
  std::mutex m;
  std::condition_variable cv;
  bool started = false, open = false;
  std::vector<uint32_t> seen;
};

void twin_held(const sg_kernel_launch *, void *const *args) {
  HeldTwin *h = *static_cast<HeldTwin *const *>(args[0]);
  std::unique_lock<std::mutex> l(h->m);
  h->started = true;
  h->cv.notify_all();
  h->cv.wait(l, [h] { return h->open; });
  uint32_t value;
  std::memcpy(&value, args[1], sizeof value);
  h->seen.push_back(value);
}

sg_kernel_desc held_kernel(HeldTwin **held, uint32_t *value, void **args, size_t *sizes) {
  args[0] = held;
  args[1] = value;
  sizes[0] = sizeof *held;
  sizes[1] = sizeof *value;
  sg_kernel_desc k{};
  k.grid = {1, 1, 1};
  k.block = {1, 1, 1};
  k.args = args;
  k.arg_sizes = sizes;
  k.arg_count = 2;
  k.host_twin = twin_held;
  k.name = "held";
  return k;
}

// The host backend ran a node without parameter versions from the
// executable's snapshot, outside its lock; sg_exec_set_* on a launch queued
// behind it replaced the snapshot's node in place (and recycled its argument
// block), so the running twin read the next batch's arguments.
TEST(Defect10, KernelRunningWhileItsNodeIsReboundKeepsItsArguments) {
  for (sg_exec_mode mode : {SG_MODE_STREAMS, SG_MODE_GRAPH}) {
    SCOPED_TRACE(mode == SG_MODE_GRAPH ? "graph mode" : "streams mode");
    sgtest::LeakCheck leaks;
    HeldTwin held;
    HeldTwin *hp = &held;
    uint32_t value = 1;
    void *args[2];
    size_t sizes[2];
    sgtest::Graph g;
    sg_kernel_desc k = held_kernel(&hp, &value, args, sizes);
    sg_node node;
    SG_ASSERT_OK(sg_graph_add_kernel(g, &k, nullptr, 0, &node));
    sg_exec_options o = sgtest::host_options();
    o.mode = mode;
    sgtest::Exec e;
    // Opens the twin's gate however the test leaves this scope, before the
    // executable is destroyed: a failed ASSERT must not leave it waiting on
    // a launch held forever.
    struct OpenOnExit {
      HeldTwin *h;
      ~OpenOnExit() {
        std::lock_guard<std::mutex> l(h->m);
        h->open = true;
        h->cv.notify_all();
      }
    } open_on_exit{&held};
    SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
    SG_ASSERT_OK(sg_exec_launch(e, nullptr));
    {
      std::unique_lock<std::mutex> l(held.m);
      ASSERT_TRUE(held.cv.wait_for(l, std::chrono::seconds(30), [&] { return held.started; }))
          << "launch 1 never started";
    }
    // Launch 1 is inside its twin, with the arguments it was launched with.
    for (uint32_t v = 2; v <= 4; v++) {
      value = v;
      k = held_kernel(&hp, &value, args, sizes);
      SG_ASSERT_OK(sg_exec_set_kernel(e, node, &k));
      SG_ASSERT_OK(sg_exec_launch(e, nullptr));
    }
    {
      std::lock_guard<std::mutex> l(held.m);
      held.open = true;
      held.cv.notify_all();
    }
    SG_ASSERT_OK(sg_exec_wait(e));
    EXPECT_EQ(held.seen, (std::vector<uint32_t>{1, 2, 3, 4}))
        << "a launch ran with parameters set after it was made";
  }
}

// ---- defect 11: a submit refused for a failed batch it had not reported ----

struct Held {
  std::mutex m;
  std::condition_variable cv;
  bool started = false, open = false;
  void release() {
    std::lock_guard<std::mutex> l(m);
    open = true;
    cv.notify_all();
  }
};

int holder_fn(void *p) {
  auto *h = static_cast<Held *>(p);
  std::unique_lock<std::mutex> l(h->m);
  h->started = true;
  h->cv.notify_all();
  h->cv.wait(l, [h] { return h->open; });
  return 0;
}

// Returns `rc` once the holder of its launch runs (a node of a failed
// launch that has not started is skipped).
struct ProbeRun {
  Held *held;
  int rc;
};

int probe_fn(void *p) {
  auto *r = static_cast<ProbeRun *>(p);
  if (r->held) {
    std::unique_lock<std::mutex> l(r->held->m);
    r->held->cv.wait(l, [r] { return r->held->started; });
  }
  return r->rc;
}

struct Reported {
  std::vector<uint64_t> batches;
  std::vector<sg_status> status;
};

// Batch 0 fails on one stream while a second stream of its launch is held:
// its instance has failed, but the launch has not ended, so the submit of
// batch 1 does not report it at its start, and its bind is refused. The
// submit then waited for batch 0's launch and returned SG_ERR_STOPPED
// naming batch 0 without reporting it: on_complete came only at the next
// call (the Python test of a failing batch saw it missing, now and then).
// A refused submit reports, in order, whatever has ended, as back-pressure
// does.
TEST(Defect11, SubmitRefusedForAFailedBatchReportsItFirst) {
  sgtest::LeakCheck leaks;
  Held held;
  ProbeRun fail{&held, 7}, pass{nullptr, 0};
  sgtest::Graph g;
  sg_node probe, holder;
  sg_host_desc pd = {probe_fn, &pass, "probe"};
  sg_host_desc hd = {holder_fn, &held, "holder"};
  SG_ASSERT_OK(sg_graph_add_host(g, &pd, nullptr, 0, &probe));
  SG_ASSERT_OK(sg_graph_add_host(g, &hd, nullptr, 0, &holder));
  Reported reported;
  sg_pipeline_options o;
  sg_pipeline_options_init(&o);
  o.depth = 1;
  o.queue = 2;
  o.exec = sgtest::host_options(2);
  o.user_data = &reported;
  o.on_complete = [](uint64_t batch, sg_status st, void *, void *user) {
    auto *r = static_cast<Reported *>(user);
    r->batches.push_back(batch);
    r->status.push_back(st);
  };
  sg_pipeline *p = nullptr;
  SG_ASSERT_OK(sg_pipeline_create(g, &o, &p));
  sg_pipeline_instance inst;
  SG_ASSERT_OK(sg_pipeline_get_instance(p, 0, &inst));
  sg_pipeline_bind b0 = sg_bind_host_data(probe, &fail), b1 = sg_bind_host_data(probe, &pass);
  sg_pipeline_batch batch0 = {&b0, 1, nullptr}, batch1 = {&b1, 1, nullptr};
  SG_ASSERT_OK(sg_pipeline_submit(p, &batch0, nullptr));
  // Until the probe's failure is recorded, the instance takes new parameters
  // (the ones batch 1 binds: no harm done).
  sg_host_desc next = {probe_fn, &pass, nullptr};
  sg_status st = SG_OK;
  sgtest::poll_until([&] { return (st = sg_exec_set_host(inst.exec, probe, &next)) != SG_OK; });
  if (st != SG_ERR_EXEC_FAILED) {
    ADD_FAILURE() << "batch 0's probe never failed: " << sg_status_name(st) << ": "
                  << sg_last_error();
    held.release();  // the holder must not outlive the test
    sg_pipeline_destroy(p);
    return;
  }
  std::thread opener([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    held.release();
  });
  EXPECT_EQ(sg_pipeline_submit(p, &batch1, nullptr), SG_ERR_STOPPED);
  std::string msg = sg_last_error();
  opener.join();
  EXPECT_NE(msg.find("batch 0"), std::string::npos) << msg;
  EXPECT_EQ(reported.batches, (std::vector<uint64_t>{0}))
      << "the failed batch was not reported before the refusal naming it";
  EXPECT_EQ(sg_pipeline_drain(p), SG_ERR_STOPPED);
  EXPECT_EQ(reported.batches, (std::vector<uint64_t>{0})) << "batch 1 was refused: not reported";
  EXPECT_EQ(reported.status, (std::vector<sg_status>{SG_ERR_CALLBACK}));
  SG_ASSERT_OK(sg_pipeline_destroy(p));
}

}  // namespace
