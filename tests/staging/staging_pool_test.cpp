// The pinned pool on plain memory (the host backend's backing): options,
// slabs, sub-allocation, reuse, the cap, statistics, and what a request
// does when the pool is exhausted (persistent: fails at once; transient:
// waits for transient blocks only, or fails when told to).
#include <atomic>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "sg_test_util.h"
#include "staging_internal.h"

namespace {

using sgstaging::host_pool_options;

constexpr size_t KiB = 1024, MiB = 1024 * 1024;

struct Pool {
  sg_pinned_pool *p = nullptr;
  explicit Pool(const sg_pinned_pool_options &o) {
    EXPECT_EQ(sg_pinned_pool_create(&o, &p), SG_OK) << sg_last_error();
  }
  ~Pool() {
    if (p) EXPECT_EQ(sg_pinned_pool_destroy(p), SG_OK) << sg_last_error();
  }
  operator sg_pinned_pool *() const { return p; }
};

sg_pinned_pool_stats stats_of(sg_pinned_pool *p) {
  sg_pinned_pool_stats s;
  EXPECT_EQ(sg_pinned_pool_get_stats(p, &s), SG_OK);
  return s;
}

// Waits (without a time limit: the test framework's timeout is the limit)
// until `cond` holds.
template <class F>
void eventually(F cond) {
  while (!cond()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

TEST(StagingPool, OptionsAreValidated) {
  sgtest::LeakCheck leaks;
  sg_pinned_pool *p = nullptr;
  sg_pinned_pool_options o = host_pool_options(0);
  EXPECT_EQ(sg_pinned_pool_create(&o, nullptr), SG_ERR_INVALID_ARGUMENT);
  o.backend = static_cast<sg_backend>(7);
  EXPECT_EQ(sg_pinned_pool_create(&o, &p), SG_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(sg_last_error()).find("backend"), std::string::npos);
  o = host_pool_options(0);
  o.on_exhausted = static_cast<sg_pool_exhausted>(9);
  EXPECT_EQ(sg_pinned_pool_create(&o, &p), SG_ERR_INVALID_ARGUMENT);
  o = host_pool_options(0);
  o.max_copy_threads = 65;
  EXPECT_EQ(sg_pinned_pool_create(&o, &p), SG_ERR_INVALID_ARGUMENT);
  o = host_pool_options(1 * MiB);
  o.prewarm_bytes = 2 * MiB;
  EXPECT_EQ(sg_pinned_pool_create(&o, &p), SG_ERR_INVALID_ARGUMENT);
  o = host_pool_options(0);
  o.device = -1;
  EXPECT_EQ(sg_pinned_pool_create(&o, &p), SG_ERR_INVALID_ARGUMENT);
  if (sg_cuda_device_count() == 0) {
    o = host_pool_options(0);
    o.backend = SG_BACKEND_CUDA;
    EXPECT_EQ(sg_pinned_pool_create(&o, &p), SG_ERR_BACKEND_UNAVAILABLE);
  }
  EXPECT_EQ(p, nullptr);
}

TEST(StagingPool, HandlesAreChecked) {
  sgtest::LeakCheck leaks;
  sg_pinned_pool_options o = host_pool_options(1 * MiB);
  sg_pinned_pool *p = nullptr;
  SG_ASSERT_OK(sg_pinned_pool_create(&o, &p));
  SG_ASSERT_OK(sg_pinned_pool_destroy(p));
  EXPECT_EQ(sg_pinned_pool_destroy(p), SG_ERR_INVALID_HANDLE);
  sg_pinned_pool_stats s;
  EXPECT_EQ(sg_pinned_pool_get_stats(p, &s), SG_ERR_INVALID_HANDLE);
  EXPECT_EQ(sg_pinned_pool_trim(p), SG_ERR_INVALID_HANDLE);
  EXPECT_EQ(sg_pinned_pool_destroy(nullptr), SG_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(sg_pinned_pool_get_stats(nullptr, nullptr), SG_ERR_INVALID_ARGUMENT);
}

TEST(StagingPool, PrewarmTakesWholeSlabsUpFront) {
  sgtest::LeakCheck leaks;
  sg_pinned_pool_options o = host_pool_options(8 * MiB, 1 * MiB);
  o.prewarm_bytes = 2 * MiB + 1;
  Pool pool(o);
  sg_pinned_pool_stats s = stats_of(pool);
  EXPECT_EQ(s.reserved_bytes, 3 * MiB);
  EXPECT_EQ(s.slab_count, 3u);
  EXPECT_EQ(s.slab_allocations, 3u);
  EXPECT_EQ(s.in_use_bytes, 0u);
  EXPECT_EQ(s.max_bytes, 8 * MiB);
  EXPECT_EQ(s.on_cuda, 0);
  // A request that fits is served from the prewarmed slabs: no allocation.
  sg__pool_block b;
  SG_ASSERT_OK(sg__pool_acquire(pool, 512 * KiB, 0, nullptr, nullptr, "test", &b));
  EXPECT_EQ(stats_of(pool).slab_allocations, 3u);
  sg__pool_release(pool, &b);
}

TEST(StagingPool, BlocksArePageAlignedDisjointAndReused) {
  sgtest::LeakCheck leaks;
  Pool pool(host_pool_options(4 * MiB, 1 * MiB));
  sg__pool_block a, b, c;
  SG_ASSERT_OK(sg__pool_acquire(pool, 1, 0, nullptr, nullptr, "test", &a));
  SG_ASSERT_OK(sg__pool_acquire(pool, 5000, 1, nullptr, nullptr, "test", &b));
  EXPECT_EQ(a.bytes, 4096u);
  EXPECT_EQ(b.bytes, 8192u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a.ptr) % 4096, 0u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(b.ptr) % 4096, 0u);
  char *pa = static_cast<char *>(a.ptr), *pb = static_cast<char *>(b.ptr);
  EXPECT_TRUE(pa + a.bytes <= pb || pb + b.bytes <= pa);
  sg_pinned_pool_stats s = stats_of(pool);
  EXPECT_EQ(s.in_use_bytes, 12288u);
  EXPECT_EQ(s.persistent_bytes, 8192u);
  EXPECT_EQ(s.slab_count, 1u);
  EXPECT_EQ(s.acquisitions, 2u);
  // The gap `a` leaves is taken again by the next request that fits it.
  sg__pool_release(pool, &a);
  SG_ASSERT_OK(sg__pool_acquire(pool, 4096, 0, nullptr, nullptr, "test", &c));
  EXPECT_EQ(c.ptr, a.ptr);
  sg__pool_release(pool, &c);
  sg__pool_release(pool, &b);
  s = stats_of(pool);
  EXPECT_EQ(s.in_use_bytes, 0u);
  EXPECT_EQ(s.persistent_bytes, 0u);
  EXPECT_EQ(s.peak_in_use_bytes, 12288u);
  EXPECT_EQ(s.reserved_bytes, 1 * MiB); // kept for reuse
  SG_ASSERT_OK(sg_pinned_pool_trim(pool));
  s = stats_of(pool);
  EXPECT_EQ(s.reserved_bytes, 0u);
  EXPECT_EQ(s.slab_frees, 1u);
}

// The memop protocol's flag records come from small slabs of their own; a
// trim gives those back too once no record is in use, so that a leak
// checker run after sg_pinned_pool_trim finds nothing of the pool (the
// default pool lives until the process ends). A record still in use keeps
// its slab.
TEST(StagingPool, TrimGivesFlagSlabsBackOnceNoRecordIsInUse) {
  sgtest::LeakCheck leaks;
  Pool pool(host_pool_options(8 * MiB, 1 * MiB));
  const long before = sg_live_allocations();
  void *a = nullptr, *b = nullptr;
  SG_ASSERT_OK(sg__pool_flags_take(pool, "test", &a));
  SG_ASSERT_OK(sg__pool_flags_take(pool, "test", &b));
  const long with_slab = sg_live_allocations();
  EXPECT_GT(with_slab, before);
  sg__pool_flags_give(pool, a);
  SG_ASSERT_OK(sg_pinned_pool_trim(pool));  // b is in use: the slab stays
  EXPECT_EQ(sg_live_allocations(), with_slab);
  static_cast<uint32_t *>(b)[1] = 7;         // still writable
  sg__pool_flags_give(pool, b);
  SG_ASSERT_OK(sg_pinned_pool_trim(pool));
  EXPECT_LT(sg_live_allocations(), with_slab);
  // And records come again after a trim.
  SG_ASSERT_OK(sg__pool_flags_take(pool, "test", &a));
  EXPECT_EQ(static_cast<uint32_t *>(a)[0], 0u);
  sg__pool_flags_give(pool, a);
}

TEST(StagingPool, LargeRequestsGetTheirOwnSlab) {
  sgtest::LeakCheck leaks;
  Pool pool(host_pool_options(8 * MiB, 1 * MiB));
  sg__pool_block a;
  SG_ASSERT_OK(sg__pool_acquire(pool, 3 * MiB + 1, 0, nullptr, nullptr, "test", &a));
  EXPECT_EQ(a.bytes, 3 * MiB + 4096);
  EXPECT_EQ(stats_of(pool).reserved_bytes, 3 * MiB + 4096);
  sg__pool_release(pool, &a);
}

TEST(StagingPool, EmptySlabsAreFreedToMakeRoomUnderTheCap) {
  sgtest::LeakCheck leaks;
  Pool pool(host_pool_options(2 * MiB, 1 * MiB));
  sg__pool_block a, b;
  SG_ASSERT_OK(sg__pool_acquire(pool, 1 * MiB, 0, nullptr, nullptr, "test", &a));
  sg__pool_release(pool, &a);
  SG_ASSERT_OK(sg__pool_acquire(pool, 2 * MiB, 0, nullptr, nullptr, "test", &b));
  sg_pinned_pool_stats s = stats_of(pool);
  EXPECT_EQ(s.slab_frees, 1u);
  EXPECT_EQ(s.reserved_bytes, 2 * MiB);
  sg__pool_release(pool, &b);
}

TEST(StagingPool, RequestAboveTheCapFailsAtOnce) {
  sgtest::LeakCheck leaks;
  Pool pool(host_pool_options(1 * MiB));
  sg__pool_block a;
  EXPECT_EQ(sg__pool_acquire(pool, 1 * MiB + 1, 0, nullptr, nullptr, "where", &a),
            SG_ERR_POOL_EXHAUSTED);
  std::string msg = sg_last_error();
  EXPECT_EQ(msg.rfind("where: ", 0), 0u) << msg;
  EXPECT_NE(msg.find("cap"), std::string::npos) << msg;
  EXPECT_EQ(stats_of(pool).exhausted, 1u);
}

TEST(StagingPool, PersistentRequestNeverWaits) {
  sgtest::LeakCheck leaks;
  Pool pool(host_pool_options(1 * MiB, 1 * MiB));
  sg__pool_block t, p;
  SG_ASSERT_OK(sg__pool_acquire(pool, 768 * KiB, 0, nullptr, nullptr, "test", &t));
  // Transient memory would come back, but a graph-mode executable's
  // creation does not wait for it.
  EXPECT_EQ(sg__pool_acquire(pool, 512 * KiB, 1, nullptr, nullptr, "create", &p),
            SG_ERR_POOL_EXHAUSTED);
  EXPECT_NE(std::string(sg_last_error()).find("graph-mode"), std::string::npos) << sg_last_error();
  sg__pool_release(pool, &t);
  SG_ASSERT_OK(sg__pool_acquire(pool, 512 * KiB, 1, nullptr, nullptr, "create", &p));
  // Memory held persistently is never waited for: a transient request
  // that only it could satisfy fails instead of hanging.
  EXPECT_EQ(sg__pool_acquire(pool, 768 * KiB, 0, nullptr, nullptr, "launch", &t),
            SG_ERR_POOL_EXHAUSTED);
  EXPECT_EQ(stats_of(pool).waits, 0u);
  sg__pool_release(pool, &p);
}

TEST(StagingPool, TransientRequestWaitsForTransientBlocks) {
  sgtest::LeakCheck leaks;
  Pool pool(host_pool_options(1 * MiB, 1 * MiB));
  sg__pool_block held, got;
  SG_ASSERT_OK(sg__pool_acquire(pool, 768 * KiB, 0, nullptr, nullptr, "test", &held));
  std::atomic<int> done{0};
  sg_status st = SG_ERR_STOPPED;
  std::thread waiter([&] {
    st = sg__pool_acquire(pool, 768 * KiB, 0, nullptr, nullptr, "test", &got);
    done = 1;
  });
  eventually([&] { return stats_of(pool).waits == 1; });
  EXPECT_EQ(done.load(), 0); // still waiting: the memory is held
  sg__pool_release(pool, &held);
  waiter.join();
  SG_EXPECT_OK(st);
  EXPECT_EQ(got.ptr, held.ptr);
  sg__pool_release(pool, &got);
}

int broken_calls = 0;
int always_broken(void *) {
  broken_calls++;
  return 1;
}

TEST(StagingPool, WaitEndsWhenTheDeviceIsBroken) {
  sgtest::LeakCheck leaks;
  Pool pool(host_pool_options(1 * MiB, 1 * MiB));
  sg__pool_block held, got;
  SG_ASSERT_OK(sg__pool_acquire(pool, 768 * KiB, 0, nullptr, nullptr, "test", &held));
  EXPECT_EQ(sg__pool_acquire(pool, 768 * KiB, 0, always_broken, nullptr, "launch", &got),
            SG_ERR_CUDA);
  EXPECT_NE(std::string(sg_last_error()).find("device reported an error"), std::string::npos);
  EXPECT_GE(broken_calls, 1);
  sg__pool_release(pool, &held);
}

TEST(StagingPool, FailModeDoesNotWait) {
  sgtest::LeakCheck leaks;
  sg_pinned_pool_options o = host_pool_options(1 * MiB, 1 * MiB);
  o.on_exhausted = SG_POOL_FAIL;
  Pool pool(o);
  sg__pool_block held, got;
  SG_ASSERT_OK(sg__pool_acquire(pool, 768 * KiB, 0, nullptr, nullptr, "test", &held));
  EXPECT_EQ(sg__pool_acquire(pool, 768 * KiB, 0, nullptr, nullptr, "test", &got),
            SG_ERR_POOL_EXHAUSTED);
  EXPECT_NE(std::string(sg_last_error()).find("fail rather than wait"), std::string::npos);
  sg__pool_release(pool, &held);
}

// Many threads share a pool much smaller than their total demand; each
// writes its own pattern over its whole block and checks it before giving
// it back, so two live blocks overlapping would be caught.
TEST(StagingPool, ManyThreadsShareASmallPool) {
  sgtest::LeakCheck leaks;
  Pool pool(host_pool_options(1 * MiB, 256 * KiB));
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 8; t++) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(1234 + t);
      for (int i = 0; i < 200; i++) {
        size_t want = 4096 * (1 + rng() % 96);
        sg__pool_block b;
        if (sg__pool_acquire(pool, want, 0, nullptr, nullptr, "t", &b) != SG_OK) {
          failures++;
          continue;
        }
        uint8_t tag = static_cast<uint8_t>(t * 31 + i);
        std::memset(b.ptr, tag, b.bytes);
        std::this_thread::yield();
        const uint8_t *q = static_cast<const uint8_t *>(b.ptr);
        for (size_t k = 0; k < b.bytes; k += 512)
          if (q[k] != tag) failures++;
        sg__pool_release(pool, &b);
      }
    });
  }
  for (auto &th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  sg_pinned_pool_stats s = stats_of(pool);
  EXPECT_EQ(s.in_use_bytes, 0u);
  EXPECT_LE(s.reserved_bytes, 1 * MiB);
  EXPECT_LE(s.peak_in_use_bytes, 1 * MiB);
  EXPECT_EQ(s.acquisitions, 1600u);
}

TEST(StagingPool, DestroyIsRefusedWhileExecutablesUseThePool) {
  sgtest::LeakCheck leaks;
  sg_pinned_pool_options o = host_pool_options(1 * MiB);
  sg_pinned_pool *p = nullptr;
  SG_ASSERT_OK(sg_pinned_pool_create(&o, &p));
  SG_ASSERT_OK(sg__pool_attach(p, 2, "test"));
  EXPECT_EQ(stats_of(p).users, 1u);
  EXPECT_EQ(stats_of(p).copy_threads, 2u);
  EXPECT_EQ(sg_pinned_pool_destroy(p), SG_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(sg_last_error()).find("1 executable"), std::string::npos);
  sg__pool_detach(p);
  SG_ASSERT_OK(sg_pinned_pool_destroy(p));
}

TEST(StagingPool, TheDefaultPoolIsSharedAndPermanent) {
  sg_pinned_pool *a = nullptr, *b = nullptr;
  SG_ASSERT_OK(sg_pinned_pool_get_default(&a));
  SG_ASSERT_OK(sg_pinned_pool_get_default(&b));
  EXPECT_EQ(a, b);
  EXPECT_EQ(sg_pinned_pool_destroy(a), SG_ERR_INVALID_ARGUMENT);
  sg_pinned_pool_stats s;
  SG_ASSERT_OK(sg_pinned_pool_get_stats(nullptr, &s));
  EXPECT_EQ(s.max_bytes, 512 * MiB);
  SG_ASSERT_OK(sg_pinned_pool_trim(nullptr));
}

}  // namespace
