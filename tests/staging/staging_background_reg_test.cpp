// AUTO's registration in the background, on the host backend, whose
// emulated registration can be slowed down (sg__host_pin_slow) and made to
// fail (a fault point): a buffer is pinned in pieces by a thread of its
// own, launches never wait for it (they copy the other way meanwhile), the
// route switches at the first launch after it is done, a refusal falls
// back for good and says so in the statistics, and an executable destroyed
// or re-pointed meanwhile stops it after the piece under way. Every launch
// copies fresh random bytes (seed printed) and checks them.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "sg_test_util.h"
#include "auto_node_shim.h"
#include "staging_internal.h"
#include "streamgraph/testing.h"

namespace {

constexpr size_t KiB = 1024, MiB = 1024 * 1024, PAGE = 4096;

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

sg_registration_stats reg_stats() {
  sg_registration_stats s;
  EXPECT_EQ(sg_registration_get_stats(SG_BACKEND_HOST, &s), SG_OK);
  return s;
}

sg_exec_stats stats_of(sg_exec *e) {
  sg_exec_stats s;
  EXPECT_EQ(sg_exec_get_stats(e, &s), SG_OK);
  return s;
}

// Puts every emulated registration back to "at once" when a test ends.
struct SlowPins {
  explicit SlowPins(uint64_t ns_per_mib) { sg__host_pin_slow(ns_per_mib); }
  ~SlowPins() { sg__host_pin_slow(0); }
};

// A page-aligned pageable buffer of its own pages (so that its
// registration overlaps nothing else).
struct HostBuf {
  uint8_t *p;
  size_t n;
  explicit HostBuf(size_t bytes) : n(bytes) {
    p = static_cast<uint8_t *>(std::aligned_alloc(PAGE, (bytes + PAGE - 1) / PAGE * PAGE));
  }
  ~HostBuf() { std::free(p); }
};

TEST(RegPieces, SizesArePagesAndFewEnough) {
  EXPECT_EQ(sg__route_reg_piece(PAGE), PAGE);
  EXPECT_EQ(sg__route_reg_piece(8 * MiB), 8 * MiB); // small: one piece
  EXPECT_EQ(sg__route_reg_piece(16 * MiB), 4 * MiB);
  EXPECT_EQ(sg__route_reg_piece(64 * MiB), 8 * MiB);
  EXPECT_EQ(sg__route_reg_piece(1024 * MiB), 128 * MiB);
  EXPECT_EQ(sg__route_reg_piece(size_t(8) << 30), 128 * MiB); // capped
  std::mt19937_64 rng(std::random_device{}());
  for (int i = 0; i < 1000; i++) {
    size_t len = (rng() % (size_t(4) << 30) + PAGE) & ~(PAGE - 1);
    size_t piece = sg__route_reg_piece(len);
    EXPECT_EQ(piece % PAGE, 0u) << len;
    EXPECT_GT(piece, 0u);
    if (len <= size_t(1) << 30)
      EXPECT_LE((len + piece - 1) / piece, 9u) << len; // 8 pieces, and a short last one
    else
      EXPECT_EQ(piece, 128 * MiB) << len;
  }
}

TEST(RegPieces, ARegistrationUnderWayIsTheOnlyOneAsked) {
  sg__route_facts f = {SG_STAGING_AUTO, 1, 0, 64 * MiB, MiB, 5, 2, 0, 1};
  sg__route_choice c = sg__route_choose(&f);
  EXPECT_EQ(c.reg, SG__REG_SKIP);
  EXPECT_EQ(c.otherwise, SG__ROUTE_STAGE);
  f.reg_pending = 0;
  EXPECT_EQ(sg__route_choose(&f).reg, SG__REG_BACKGROUND);
  f.streak = 1; // the first launch: no reuse seen yet
  EXPECT_EQ(sg__route_choose(&f).reg, SG__REG_EXISTING);
}

// The cache alone: a registration in pieces is usable once every piece is
// pinned, names its pieces, and goes whole with its last binder.
TEST(RegBackground, InPiecesThenUsable) {
  sgtest::LeakCheck leaks;
  const size_t n = 20 * MiB + 5;
  HostBuf b(n + PAGE);
  const sg_registration_stats before = reg_stats();
  sg__reg_binding *x = nullptr;
  SG_ASSERT_OK(sg__reg_bind_background(&sg__host_stage_mem, 0, b.p + 3, n, "test", &x));
  ASSERT_NE(x, nullptr);
  uintptr_t base;
  size_t piece;
  sg__reg_binding_pieces(x, &base, &piece);
  EXPECT_EQ(base, reinterpret_cast<uintptr_t>(b.p));
  EXPECT_EQ(piece, 4 * MiB); // 20 MiB and a page: six pieces
  sg__reg_wait_pending(&sg__host_stage_mem);
  EXPECT_EQ(sg__reg_use_begin(x), 1);
  SG_EXPECT_OK(sg__reg_use_end(x, nullptr, "test"));
  // A graph's memcpy node (one DMA) cannot use it: it binds to nothing.
  sg__reg_binding *y = nullptr;
  SG_ASSERT_OK(sg__reg_bind(&sg__host_stage_mem, b.p + 3, n, 0, "test", &y));
  EXPECT_EQ(y, nullptr);
  // A per-launch copy can.
  SG_ASSERT_OK(sg__reg_bind_pieces(&sg__host_stage_mem, b.p + 8 * MiB, PAGE, 0, "test", &y));
  ASSERT_NE(y, nullptr);
  sg__reg_unbind(y);
  sg_registration_stats s = reg_stats();
  EXPECT_EQ(s.registrations, before.registrations + 1);
  EXPECT_EQ(s.registered_bytes, before.registered_bytes + 20 * MiB + PAGE);
  sg__reg_unbind(x);
  EXPECT_EQ(reg_stats().buffers, before.buffers);
  EXPECT_EQ(reg_stats().unregistrations, before.unregistrations + 1);
}

// No piece is pinned while a copy is being enqueued (up to the wait
// limit, 10 ms): the launch's calls never queue up behind a pin.
TEST(RegBackground, WaitsForTheEnqueueToEnd) {
  sgtest::LeakCheck leaks;
  HostBuf b(20 * MiB);
  sg__reg_enqueue_begin(&sg__host_stage_mem);
  sg__reg_binding *x = nullptr;
  SG_ASSERT_OK(sg__reg_bind_background(&sg__host_stage_mem, 0, b.p, b.n, "test", &x));
  ASSERT_NE(x, nullptr);
  std::this_thread::sleep_for(std::chrono::microseconds(500));
  EXPECT_EQ(sg__reg_pending(x), 1) << "a piece was pinned during an enqueue";
  sg__reg_enqueue_end(&sg__host_stage_mem);
  sg__reg_wait_pending(&sg__host_stage_mem);
  EXPECT_EQ(sg__reg_use_begin(x), 1);
  SG_EXPECT_OK(sg__reg_use_end(x, nullptr, "test"));
  sg__reg_unbind(x);
}

// A piece refused by the "driver": the pieces made are unpinned, the entry
// is refused, and the statistics say the driver refused it.
TEST(RegBackground, APieceRefusedUnpinsTheRest) {
  sgtest::LeakCheck leaks;
  HostBuf b(20 * MiB);
  for (unsigned nth = 1; nth <= 3; nth++) {
    const sg_registration_stats before = reg_stats();
    sg_fault_arm_site(SG_FAULT_SYSTEM, "host/host_stage_mem.c", nth);
    sg__reg_binding *x = nullptr;
    SG_ASSERT_OK(sg__reg_bind_background(&sg__host_stage_mem, 0, b.p, b.n, "test", &x));
    ASSERT_NE(x, nullptr);
    sg__reg_wait_pending(&sg__host_stage_mem);
    EXPECT_EQ(sg_fault_fired(), 1) << "piece " << nth;
    sg_fault_arm(0, 0);
    EXPECT_EQ(sg__reg_refused(x), 1);
    EXPECT_EQ(sg__reg_use_begin(x), 0);
    sg_registration_stats s = reg_stats();
    EXPECT_EQ(s.pin_failures, before.pin_failures + 1);
    EXPECT_EQ(s.refusals, before.refusals + 1);
    EXPECT_EQ(s.registered_bytes, before.registered_bytes);
    sg__reg_unbind(x);
    EXPECT_EQ(reg_stats().buffers, before.buffers);
  }
}

// The host backend's memory table as a backend with DMA presents it, so
// that AUTO's per-launch decisions run here as on CUDA (stage, register a
// reused buffer in the background, switch once it is done); its
// registration is the host backend's, slowed down by the test.
const sg__stage_mem *dma_table() {
  static const sg__stage_mem table = [] {
    sg__stage_mem t = sg__host_stage_mem;
    t.name = "host, as with DMA";
    t.dma = 1;
    return t;
  }();
  return &table;
}

// One copy node under AUTO, launched by hand (auto_node_shim.h): each
// launch asks staging for the route as a backend does and carries it out
// with a memcpy of fresh random bytes (the registered route's data on the
// GPU is the GPU test's part).
struct AutoNode {
  HostBuf host;
  std::vector<uint8_t> device;
  sg_pinned_pool *pool = nullptr;
  autonode *a = nullptr;
  std::mt19937_64 rng;

  AutoNode(size_t n, unsigned seed) : host(n), device(n), rng(seed) {
    std::printf("seed %u\n", seed);
    sg_pinned_pool_options po = sgstaging::host_pool_options(64 * MiB, MiB);
    EXPECT_EQ(sg__pool_new(&po, dma_table(), "test", &pool), SG_OK) << sg_last_error();
    EXPECT_EQ(autonode_create(dma_table(), pool, device.data(), host.p, n, &a), SG_OK)
        << sg_last_error();
  }
  ~AutoNode() {
    destroy();
    if (pool) EXPECT_EQ(sg_pinned_pool_destroy(pool), SG_OK) << sg_last_error();
  }
  void destroy() {
    autonode_destroy(a);
    a = nullptr;
  }
  // One launch; *decision_ms: how long its route decision took (what a
  // launch could wait for).
  int launch(double *decision_ms) {
    // Fresh bytes, cheaply (a launch must take far less than a piece's
    // registration): a random start, then a xorshift per 8 bytes.
    uint64_t x = rng() | 1;
    for (size_t j = 0; j + 8 <= host.n; j += 8) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      std::memcpy(host.p + j, &x, 8);
    }
    for (size_t j = host.n & ~size_t(7); j < host.n; j++) host.p[j] = static_cast<uint8_t>(rng());
    int route = -1;
    uint64_t ns = 0;
    EXPECT_EQ(autonode_launch(a, &route, &ns), SG_OK) << sg_last_error();
    *decision_ms = ns / 1e6;
    EXPECT_EQ(std::memcmp(device.data(), host.p, host.n), 0);
    return route;
  }
};

sg_registration_stats dma_stats() {
  sg_registration_stats s;
  sg__reg_stats(dma_table(), &s);
  return s;
}

// A registration that takes 1 s delays no launch: the copies stage
// until it is done, and go through it from the first launch after.
TEST(RegBackground, SlowRegistrationDelaysNoLaunch) {
  SlowPins slow(50 * 1000 * 1000); // 50 ms per MiB: 1 s for 20 MiB, 200 ms a piece
  const sg_registration_stats before = dma_stats();
  {
    AutoNode node(20 * MiB, std::random_device{}());
    double ms, worst = 0;
    EXPECT_EQ(node.launch(&ms), AUTONODE_STAGE); // launch 1
    EXPECT_EQ(node.launch(&ms), AUTONODE_STAGE); // the first reuse: registration starts
    worst = std::max(worst, ms);
    ASSERT_NE(autonode_binding(node.a), nullptr);
    EXPECT_EQ(sg__reg_pending(autonode_binding(node.a)), 1);
    int staged = 0;
    auto t0 = std::chrono::steady_clock::now();
    int r;
    while ((r = node.launch(&ms)) == AUTONODE_STAGE && ms_since(t0) < 20000) {
      staged++;
      worst = std::max(worst, ms);
      std::this_thread::sleep_for(std::chrono::milliseconds(20)); // the rest of a launch
    }
    ASSERT_EQ(r, AUTONODE_REGISTERED) << "never switched to the registration";
    // (How many depends on the machine's speed: a launch here fills and
    // checks 20 MiB, slowly under a sanitizer.)
    EXPECT_GE(staged, 1) << "launches did not go on while it was registering";
    EXPECT_LT(worst, 150.0) << "a launch waited for the registration (200 ms a piece)";
    std::printf("%d launches staged while registering, the slowest decision %.2f ms\n", staged,
                worst);
    for (int i = 0; i < 3; i++) EXPECT_EQ(node.launch(&ms), AUTONODE_REGISTERED);
    sg_registration_stats s = dma_stats();
    EXPECT_EQ(s.registrations, before.registrations + 1);
    EXPECT_EQ(s.registered_bytes, before.registered_bytes + 20 * MiB);
  }
  EXPECT_EQ(dma_stats().buffers, before.buffers);
}

// Destroying the executable's staging (or pointing the node elsewhere)
// while its buffer is being registered stops the registration after the
// piece under way: it waits for one piece, not for the whole of it.
TEST(RegBackground, DestroyAndRepointStopIt) {
  SlowPins slow(75 * 1000 * 1000); // 1.5 s for 20 MiB, 300 ms a piece
  for (int repoint = 0; repoint < 2; repoint++) {
    const sg_registration_stats before = dma_stats();
    AutoNode node(20 * MiB, std::random_device{}());
    HostBuf other(20 * MiB);
    double ms;
    node.launch(&ms);
    node.launch(&ms); // the first reuse: the registration starts
    auto t0 = std::chrono::steady_clock::now();
    if (repoint) {
      SG_ASSERT_OK(autonode_repoint(node.a, other.p));
    } else {
      node.destroy();
    }
    const double took = ms_since(t0);
    EXPECT_LT(took, 1000.0) << "waited for the whole registration (1.5 s)";
    sg_registration_stats s = dma_stats();
    EXPECT_EQ(s.cancellations, before.cancellations + 1);
    EXPECT_EQ(s.buffers, before.buffers);
    EXPECT_EQ(s.registered_bytes, before.registered_bytes);
    std::printf("%s during the registration: %.0f ms\n", repoint ? "re-pointed" : "destroyed",
                took);
  }
}

// A node that may register warms the backend's registration at creation
// (the driver's first registration costs far more than its pinning, and
// no launch should meet that): once per node added, before any launch.
std::atomic<int> warm_calls{0};

TEST(RegBackground, CreationWarmsTheRegistration) {
  static const sg__stage_mem table = [] {
    sg__stage_mem t = *dma_table();
    t.warm_pin = [] { warm_calls++; };
    return t;
  }();
  HostBuf host(MiB);
  std::vector<uint8_t> device(MiB);
  sg_pinned_pool_options po = sgstaging::host_pool_options(16 * MiB, MiB);
  sg_pinned_pool *pool = nullptr;
  ASSERT_EQ(sg__pool_new(&po, &table, "test", &pool), SG_OK) << sg_last_error();
  const int before = warm_calls;
  autonode *a = nullptr;
  ASSERT_EQ(autonode_create(&table, pool, device.data(), host.p, MiB, &a), SG_OK)
      << sg_last_error();
  EXPECT_EQ(warm_calls, before + 1);
  autonode_destroy(a);
  EXPECT_EQ(sg_pinned_pool_destroy(pool), SG_OK) << sg_last_error();
}

// A registration the "driver" refuses part way: the node stages from then
// on and never asks again; the statistics say why.
TEST(RegBackground, ARefusalFallsBackForGood) {
  const sg_registration_stats before = dma_stats();
  AutoNode node(20 * MiB, std::random_device{}());
  double ms;
  sg_fault_arm_site(SG_FAULT_SYSTEM, "host/host_stage_mem.c", 2); // the second piece
  node.launch(&ms);
  node.launch(&ms);
  sg__reg_wait_pending(dma_table());
  EXPECT_EQ(sg_fault_fired(), 1);
  sg_fault_arm(0, 0);
  for (int i = 0; i < 5; i++) EXPECT_EQ(node.launch(&ms), AUTONODE_STAGE);
  sg_registration_stats s = dma_stats();
  EXPECT_EQ(s.pin_failures, before.pin_failures + 1);
  EXPECT_EQ(s.registrations, before.registrations);
  EXPECT_EQ(s.buffers, before.buffers);
}

// Faults at every wrapped system call of launches that register (the
// pin of each piece, the registration's thread, the pool's, ...): each
// decision fails cleanly or the copy is right; nothing is left behind.
TEST(RegBackground, FaultsAnywhere) {
  for (unsigned long nth = 1; nth < 500; nth++) {
    const sg_registration_stats before = dma_stats();
    bool fired;
    {
      AutoNode node(20 * MiB, static_cast<unsigned>(nth));
      sg_fault_arm(SG_FAULT_ALL, nth);
      for (int i = 0; i < 4; i++) {
        int route;
        uint64_t ns;
        if (autonode_launch(node.a, &route, &ns) != SG_OK) {
          EXPECT_NE(std::strlen(sg_last_error()), 0u);
          break;
        }
        EXPECT_EQ(std::memcmp(node.device.data(), node.host.p, node.host.n), 0);
        sg__reg_wait_pending(dma_table());
      }
      fired = sg_fault_fired();
      sg_fault_arm(0, 0);
    }
    sg_registration_stats s = dma_stats();
    EXPECT_EQ(s.buffers, before.buffers) << "fault " << nth;
    EXPECT_EQ(s.registered_bytes, before.registered_bytes) << "fault " << nth;
    if (!fired) break;
  }
}

} // namespace
