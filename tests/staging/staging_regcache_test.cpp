// The registration cache, on the host backend's emulation (the same code as
// on CUDA, with registration as bookkeeping): hits, overlaps, the limit,
// least-recently-used eviction, and the rules that keep an entry pinned
// (a copy being enqueued, a graph-mode hold).
#include <atomic>
#include <cstdlib>
#include <thread>
#include <vector>

#include "sg_test_util.h"
#include "staging_internal.h"
#include "streamgraph/testing.h"

namespace {

constexpr size_t PAGE = 4096;

class RegCache : public ::testing::Test {
 protected:
  void SetUp() override {
    SG_ASSERT_OK(sg_registration_set_limit(size_t(2) << 30));
    before_ = stats();
    // Page-aligned buffers so that page rounding is predictable.
    for (auto &b : bufs_) b = static_cast<char *>(std::aligned_alloc(PAGE, 16 * PAGE));
  }
  void TearDown() override {
    for (auto &b : bufs_) std::free(b);
    SG_EXPECT_OK(sg_registration_set_limit(size_t(2) << 30));
    EXPECT_EQ(stats().buffers, 0u) << "a test left registrations behind";
  }
  static sg_registration_stats stats() {
    sg_registration_stats s;
    EXPECT_EQ(sg_registration_get_stats(SG_BACKEND_HOST, &s), SG_OK);
    return s;
  }
  sg__reg_binding *bind(const void *p, size_t n, int may = 1) {
    sg__reg_binding *b = nullptr;
    EXPECT_EQ(sg__reg_bind(&sg__host_stage_mem, p, n, may, "test", &b), SG_OK);
    return b;
  }
  sg_registration_stats before_;
  char *bufs_[4];
};

TEST_F(RegCache, RegisterHitAndUnregisterWithTheLastBinder) {
  sgtest::LeakCheck leaks;
  sg__reg_binding *a = bind(bufs_[0] + 10, 3 * PAGE);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(stats().registrations, before_.registrations + 1);
  EXPECT_EQ(stats().registered_bytes, 4 * PAGE); // whole pages around the buffer
  EXPECT_TRUE(sg__reg_covers(&sg__host_stage_mem, bufs_[0] + 10, 3 * PAGE));
  // Another backend's memory table (the CUDA one, say) has a cache of its own.
  static const sg__stage_mem other_backend = sg__host_stage_mem;
  EXPECT_FALSE(sg__reg_covers(&other_backend, bufs_[0] + 10, 3 * PAGE));
  sg__reg_binding *b = bind(bufs_[0] + PAGE, PAGE, 0); // inside: a hit, even without may_register
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(stats().registrations, before_.registrations + 1);
  EXPECT_EQ(sg__reg_use_begin(b), 1);
  SG_EXPECT_OK(sg__reg_use_end(b, nullptr, "test"));
  EXPECT_EQ(stats().hits, before_.hits + 1);
  sg__reg_unbind(a);
  EXPECT_EQ(stats().buffers, 1u); // still bound by b
  sg__reg_unbind(b);
  EXPECT_EQ(stats().buffers, 0u);
  EXPECT_EQ(stats().unregistrations, before_.unregistrations + 1);
  EXPECT_FALSE(sg__reg_covers(&sg__host_stage_mem, bufs_[0] + 10, 3 * PAGE));
}

TEST_F(RegCache, WithoutLeaveToRegisterNothingIsRegistered) {
  EXPECT_EQ(bind(bufs_[0], PAGE, 0), nullptr);
  EXPECT_EQ(stats().registrations, before_.registrations);
  EXPECT_EQ(stats().refusals, before_.refusals);
}

TEST_F(RegCache, PartialOverlapIsRefused) {
  sgtest::LeakCheck leaks;
  sg__reg_binding *a = bind(bufs_[0], 2 * PAGE);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(bind(bufs_[0] + PAGE, 2 * PAGE), nullptr); // CUDA would refuse the overlap
  EXPECT_EQ(stats().refusals, before_.refusals + 1);
  sg__reg_unbind(a);
}

TEST_F(RegCache, LeastRecentlyUsedIsEvictedUnderTheLimit) {
  sgtest::LeakCheck leaks;
  SG_ASSERT_OK(sg_registration_set_limit(3 * 4 * PAGE));
  sg__reg_binding *a = bind(bufs_[0], 4 * PAGE);
  sg__reg_binding *b = bind(bufs_[1], 4 * PAGE);
  sg__reg_binding *c = bind(bufs_[2], 4 * PAGE);
  ASSERT_TRUE(a && b && c);
  ASSERT_EQ(sg__reg_use_begin(a), 1); // a is now the most recent
  SG_ASSERT_OK(sg__reg_use_end(a, nullptr, "test"));
  sg__reg_binding *d = bind(bufs_[3], 4 * PAGE);
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(stats().evictions, before_.evictions + 1);
  EXPECT_EQ(sg__reg_use_begin(b), 0); // b was the least recently used
  EXPECT_EQ(sg__reg_use_begin(a), 1);
  SG_EXPECT_OK(sg__reg_use_end(a, nullptr, "test"));
  EXPECT_EQ(stats().buffers, 3u);
  EXPECT_EQ(stats().registered_bytes, 12 * PAGE);
  for (auto *x : {a, b, c, d}) sg__reg_unbind(x);
}

TEST_F(RegCache, BusyAndHeldEntriesAreNeverEvicted) {
  sgtest::LeakCheck leaks;
  SG_ASSERT_OK(sg_registration_set_limit(2 * 4 * PAGE));
  sg__reg_binding *a = bind(bufs_[0], 4 * PAGE);
  sg__reg_binding *b = bind(bufs_[1], 4 * PAGE);
  ASSERT_TRUE(a && b);
  ASSERT_EQ(sg__reg_use_begin(a), 1); // a copy is being enqueued through a
  sg__reg_hold(b);                    // a graph relies on b
  EXPECT_EQ(bind(bufs_[2], 4 * PAGE), nullptr);
  EXPECT_EQ(stats().evictions, before_.evictions);
  EXPECT_EQ(stats().refusals, before_.refusals + 1);
  SG_ASSERT_OK(sg__reg_use_end(a, nullptr, "test"));
  sg__reg_binding *c = bind(bufs_[2], 4 * PAGE); // now a is idle: evicted
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(sg__reg_use_begin(a), 0);
  EXPECT_EQ(sg__reg_use_begin(b), 1);
  SG_ASSERT_OK(sg__reg_use_end(b, nullptr, "test"));
  for (auto *x : {a, b, c}) sg__reg_unbind(x);
}

TEST_F(RegCache, LoweringTheLimitEvictsIdleEntries) {
  sgtest::LeakCheck leaks;
  sg__reg_binding *a = bind(bufs_[0], PAGE);
  ASSERT_NE(a, nullptr);
  SG_ASSERT_OK(sg_registration_set_limit(0));
  EXPECT_EQ(stats().buffers, 0u);
  EXPECT_EQ(bind(bufs_[1], PAGE), nullptr); // limit 0: registration is off
  sg__reg_unbind(a);
}

// Registration in the background (AUTO's, off the launch path): the binding
// comes back at once; once the registration is done it is used, and the
// last binder unregisters it.
TEST_F(RegCache, BackgroundRegistration) {
  sgtest::LeakCheck leaks;
  sg__reg_binding *a = nullptr, *b = nullptr;
  SG_ASSERT_OK(sg__reg_bind_background(&sg__host_stage_mem, 0, bufs_[0] + 5, 3 * PAGE, "test", &a));
  ASSERT_NE(a, nullptr);
  // A second binder of the same range joins it, registered or not yet.
  SG_ASSERT_OK(sg__reg_bind_background(&sg__host_stage_mem, 0, bufs_[0] + 5, 3 * PAGE, "test", &b));
  ASSERT_NE(b, nullptr);
  sg__reg_wait_pending(&sg__host_stage_mem);
  EXPECT_EQ(sg__reg_pending(a), 0);
  EXPECT_EQ(sg__reg_refused(a), 0);
  EXPECT_EQ(sg__reg_use_begin(b), 1);
  SG_EXPECT_OK(sg__reg_use_end(b, nullptr, "test"));
  EXPECT_EQ(stats().registrations, before_.registrations + 1);
  EXPECT_EQ(stats().registered_bytes, 4 * PAGE);
  // An overlapping range is refused, as for a registration made at once.
  sg__reg_binding *c = nullptr;
  SG_ASSERT_OK(sg__reg_bind_background(&sg__host_stage_mem, 0, bufs_[0] + 2 * PAGE, 4 * PAGE, "test", &c));
  EXPECT_EQ(c, nullptr);
  sg__reg_unbind(a);
  sg__reg_unbind(b);
  EXPECT_EQ(stats().buffers, 0u);
}

// Letting go right after asking (while the registration may still be under
// way) waits for it and unregisters: nothing left behind, from many threads
// at once.
TEST_F(RegCache, BackgroundRegistrationLetGoAtOnce) {
  sgtest::LeakCheck leaks;
  std::vector<std::thread> threads;
  std::atomic<int> bad{0};
  for (int t = 0; t < 4; t++)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; i++) {
        sg__reg_binding *x = nullptr;
        if (sg__reg_bind_background(&sg__host_stage_mem, 0, bufs_[t], 4 * PAGE, "test", &x) != SG_OK || !x) {
          bad++;
          continue;
        }
        if (i % 2) sg__reg_wait_pending(&sg__host_stage_mem);
        if (sg__reg_use_begin(x)) (void)sg__reg_use_end(x, nullptr, "test");
        sg__reg_unbind(x);
      }
    });
  for (auto &th : threads) th.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_EQ(stats().buffers, 0u);
}

// No thread to be had: the registration is made at once instead.
TEST_F(RegCache, BackgroundRegistrationWithoutAThread) {
  sgtest::LeakCheck leaks;
  sg__reg_binding *a = nullptr;
  sg_fault_arm(SG_FAULT_SYSTEM, 1);
  SG_ASSERT_OK(sg__reg_bind_background(&sg__host_stage_mem, 0, bufs_[1], 2 * PAGE, "test", &a));
  EXPECT_EQ(sg_fault_fired(), 1);
  sg_fault_arm(0, 0);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(sg__reg_pending(a), 0);
  EXPECT_EQ(sg__reg_use_begin(a), 1);
  SG_EXPECT_OK(sg__reg_use_end(a, nullptr, "test"));
  sg__reg_unbind(a);
}

TEST(RegCacheStats, ArgumentsAreChecked) {
  sg_registration_stats s;
  EXPECT_EQ(sg_registration_get_stats(SG_BACKEND_HOST, nullptr), SG_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(sg_registration_get_stats(SG_BACKEND_AUTO, &s), SG_ERR_INVALID_ARGUMENT);
  SG_EXPECT_OK(sg_registration_get_stats(SG_BACKEND_CUDA, &s));
}

}  // namespace
