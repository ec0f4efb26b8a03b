// The chunk engine on the CPU: the copy threads, the chunk geometry, and
// whole staged copies with the DMA emulated by memcpy (exactly the protocol
// the CUDA callbacks run), byte-exact over odd sizes, unaligned pointers,
// ring depths and thread counts, alone and many at once on a small pool.
#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "sg_test_util.h"
#include "staging_internal.h"

namespace {

using sgstaging::host_pool_options;
using sgstaging::random_bytes;

constexpr size_t KiB = 1024, MiB = 1024 * 1024;

struct Workers {
  sg__workers w;
  explicit Workers(unsigned threads) {
    EXPECT_EQ(sg__workers_init(&w, 16, "test"), SG_OK);
    EXPECT_EQ(sg__workers_ensure(&w, threads, "test"), SG_OK);
  }
  ~Workers() { sg__workers_destroy(&w); }
};

TEST(StagingWorkers, SplitCopiesAreExact) {
  sgtest::LeakCheck leaks;
  Workers w(4);
  for (size_t bytes : {size_t(1), size_t(4095), size_t(64 * KiB), size_t(64 * KiB + 1),
                       size_t(1 * MiB + 12345)}) {
    for (unsigned parts : {1u, 2u, 3u, 8u}) {
      auto src = random_bytes(bytes + 3, static_cast<uint32_t>(bytes * 7 + parts));
      std::vector<uint8_t> dst(bytes + 6, 0xA5);
      sg__copy_job job = {};
      sg__copy_submit(&w.w, &job, dst.data() + 3, src.data() + 1, bytes, parts);
      sg__copy_wait(&w.w, &job);
      ASSERT_EQ(std::memcmp(dst.data() + 3, src.data() + 1, bytes), 0) << bytes << " " << parts;
      EXPECT_EQ(dst[2], 0xA5);
      EXPECT_EQ(dst[bytes + 3], 0xA5);
      EXPECT_LE(job.parts, parts);
    }
  }
}

// The plain memcpy path (non-temporal stores off) is as exact.
TEST(StagingWorkers, SplitCopiesAreExactWithoutStreamingStores) {
  sgtest::LeakCheck leaks;
  setenv("SG_STAGING_NONTEMPORAL", "0", 1);
  Workers w(2);
  unsetenv("SG_STAGING_NONTEMPORAL");
  EXPECT_EQ(w.w.streaming, 0);
  auto src = random_bytes(1 * MiB + 77, 9);
  std::vector<uint8_t> dst(src.size() + 1, 0);
  sg__copy_job job = {};
  sg__copy_submit(&w.w, &job, dst.data() + 1, src.data(), src.size(), 4);
  sg__copy_wait(&w.w, &job);
  EXPECT_EQ(std::memcmp(dst.data() + 1, src.data(), src.size()), 0);
}

// The non-temporal path (off by default, forced on) is as exact, at odd
// alignments and lengths on both sides.
TEST(StagingWorkers, SplitCopiesAreExactWithStreamingStores) {
  sgtest::LeakCheck leaks;
  setenv("SG_STAGING_NONTEMPORAL", "1", 1);
  Workers w(3);
  unsetenv("SG_STAGING_NONTEMPORAL");
#if defined(__x86_64__)
  EXPECT_EQ(w.w.streaming, 1);
#endif
  for (size_t skew : {0u, 1u, 7u, 15u}) {
    auto src = random_bytes(1 * MiB + 333, static_cast<uint32_t>(11 + skew));
    std::vector<uint8_t> dst(src.size() + 32, 0x5A);
    sg__copy_job job = {};
    job.nontemporal = static_cast<int>(skew & 1);
    size_t bytes = src.size() - skew;
    sg__copy_submit(&w.w, &job, dst.data() + skew, src.data() + skew, bytes, 5);
    sg__copy_wait(&w.w, &job);
    ASSERT_EQ(std::memcmp(dst.data() + skew, src.data() + skew, bytes), 0) << skew;
    EXPECT_EQ(dst[skew + bytes], 0x5A) << "wrote past the end";
  }
}

// With no copy thread at all a waiter copies every part itself: a wait
// never depends on a thread being there.
TEST(StagingWorkers, AWaiterFinishesTheJobAlone) {
  sgtest::LeakCheck leaks;
  Workers w(0);
  auto src = random_bytes(3 * MiB, 5);
  std::vector<uint8_t> dst(3 * MiB);
  sg__copy_job job = {};
  sg__copy_submit(&w.w, &job, dst.data(), src.data(), src.size(), 8);
  sg__copy_wait(&w.w, &job);
  EXPECT_EQ(dst, src);
}

TEST(StagingWorkers, ManySubmittersAtOnce) {
  sgtest::LeakCheck leaks;
  Workers w(3);
  std::vector<std::thread> threads;
  std::atomic<int> bad{0};
  for (int t = 0; t < 6; t++) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 30; i++) {
        size_t n = 1 + (static_cast<size_t>(t * 7919 + i * 104729) % (512 * KiB));
        auto src = random_bytes(n, static_cast<uint32_t>(t * 100 + i));
        std::vector<uint8_t> dst(n);
        sg__copy_job job = {};
        sg__copy_submit(&w.w, &job, dst.data(), src.data(), n, 1 + i % 5);
        sg__copy_wait(&w.w, &job);
        if (dst != src) bad++;
      }
    });
  }
  for (auto &th : threads) th.join();
  EXPECT_EQ(bad.load(), 0);
}

TEST(StagingGeometry, ChunksRingAndStride) {
  sg__stage_geometry g;
  sg__stage_geometry_make(1, 4 * MiB, 4, 8, &g);
  EXPECT_EQ(g.chunks, 1u);
  EXPECT_EQ(g.chunk, 1u);
  EXPECT_EQ(g.ring, 1u); // never more slots than chunks
  EXPECT_EQ(g.stride, 4096u);
  sg__stage_geometry_make(4 * MiB + 1, 4 * MiB, 4, 8, &g);
  EXPECT_EQ(g.chunks, 2u);
  EXPECT_EQ(g.ring, 2u);
  EXPECT_EQ(g.stride, 4 * MiB);
  sg__stage_geometry_make(64 * MiB, 4 * MiB, 4, 8, &g);
  EXPECT_EQ(g.chunks, 16u);
  EXPECT_EQ(g.ring, 4u);
  EXPECT_EQ(g.parts, 8u);
  // Huge copies get larger chunks rather than unbounded chunk counts.
  sg__stage_geometry_make(size_t(64) << 30, 4 * MiB, 4, 8, &g);
  EXPECT_EQ(g.chunks, SG__STAGE_MAX_CHUNKS);
  EXPECT_EQ(g.chunk, 64 * MiB);
  sg__stage_geometry_make(10000, 1000, 3, 1, &g);
  EXPECT_EQ(g.chunks, 10u);
  EXPECT_EQ(g.stride, 4096u);
}

struct Pool {
  sg_pinned_pool *p = nullptr;
  explicit Pool(size_t max, unsigned threads = 4) {
    sg_pinned_pool_options o = host_pool_options(max, 256 * KiB);
    EXPECT_EQ(sg_pinned_pool_create(&o, &p), SG_OK) << sg_last_error();
    EXPECT_EQ(sg__pool_attach(p, threads, "test"), SG_OK);
  }
  ~Pool() {
    sg__pool_detach(p);
    EXPECT_EQ(sg_pinned_pool_destroy(p), SG_OK) << sg_last_error();
  }
};

// One staged copy, host -> "device" or back, checked byte for byte, with
// guard bytes around the destination.
void staged_copy(sg_pinned_pool *pool, sg__stage_dir dir, size_t bytes, size_t chunk,
                 unsigned ring, unsigned parts, size_t src_off, size_t dst_off, int persistent,
                 uint32_t seed) {
  auto src = random_bytes(bytes + src_off, seed);
  std::vector<uint8_t> dst(bytes + dst_off + 64, 0x5C);
  sg__stage_geometry g;
  sg__stage_geometry_make(bytes, chunk, ring, parts, &g);
  void *host = dir == SG__STAGE_H2D ? static_cast<void *>(src.data() + src_off)
                                    : static_cast<void *>(dst.data() + dst_off);
  void *device = dir == SG__STAGE_H2D ? static_cast<void *>(dst.data() + dst_off)
                                      : static_cast<void *>(src.data() + src_off);
  sg__stage_run *run = nullptr;
  ASSERT_EQ(sg__stage_run_new(pool, dir, host, device, &g, persistent, nullptr, nullptr, "test",
                              &run),
            SG_OK)
      << sg_last_error();
  sg__stage_run_host(run);
  if (persistent) sg__stage_run_host(run); // a graph-mode ring runs launch after launch
  sg__stage_run_free(run);
  ASSERT_EQ(std::memcmp(dst.data() + dst_off, src.data() + src_off, bytes), 0)
      << "dir " << dir << " bytes " << bytes << " chunk " << chunk << " ring " << ring
      << " parts " << parts << " offsets " << src_off << "/" << dst_off;
  for (size_t i = 0; i < dst_off; i++) ASSERT_EQ(dst[i], 0x5C);
  for (size_t i = dst_off + bytes; i < dst.size(); i++) ASSERT_EQ(dst[i], 0x5C);
}

TEST(StagingEngine, OddSizesUnalignedPointersEveryRingAndThreadCount) {
  sgtest::LeakCheck leaks;
  Pool pool(4 * MiB);
  const size_t chunk = 64 * KiB;
  const size_t sizes[] = {1, 2, 4095, 4096, 4097, chunk - 1, chunk, chunk + 1, 3 * chunk + 17,
                          10 * chunk};
  uint32_t seed = 1;
  for (int dir = SG__STAGE_H2D; dir <= SG__STAGE_D2H; dir++)
    for (size_t bytes : sizes)
      for (unsigned ring : {1u, 2u, 3u, 4u})
        for (unsigned parts : {1u, 3u})
          for (size_t off : {size_t(0), size_t(1), size_t(61)})
            staged_copy(pool.p, static_cast<sg__stage_dir>(dir), bytes, chunk, ring, parts, off,
                        (off * 7) % 64, (ring + parts) % 2, seed++);
}

// Callback protocol, a graph's ring (persistent): each launch copies from or
// to the pageable side it was queued with (sg__stage_launch_queue), taken
// by its first callback and let go by its last, so a new host buffer per
// launch changes no graph node. Several launches queued ahead run in order.
TEST(StagingEngine, AGraphRingTakesEachLaunchsOwnPageableSide) {
  sgtest::LeakCheck leaks;
  Pool pool(4 * MiB, 2);
  const size_t bytes = 5 * 64 * KiB + 33;
  sg__stage_geometry g;
  sg__stage_geometry_make(bytes, 64 * KiB, 3, 2, &g);
  for (int dir = SG__STAGE_H2D; dir <= SG__STAGE_D2H; dir++) {
    const bool h2d = dir == SG__STAGE_H2D;
    std::vector<uint8_t> device = random_bytes(bytes, 7), creation(bytes, 0x33);
    sg__stage_run *run = nullptr;
    ASSERT_EQ(sg__stage_run_new(pool.p, static_cast<sg__stage_dir>(dir), creation.data(),
                                device.data(), &g, 1, nullptr, nullptr, "test", &run),
              SG_OK)
        << sg_last_error();
    std::vector<std::vector<uint8_t>> hosts;
    for (uint32_t i = 0; i < 5; i++)
      hosts.push_back(h2d ? random_bytes(bytes, 50 + i) : std::vector<uint8_t>(bytes, 0));
    for (auto &h : hosts) { // all queued ahead, as graph launches are
      ASSERT_EQ(sg__stage_launch_reserve(run, "test"), SG_OK);
      sg__stage_launch_queue(run, h.data());
    }
    for (size_t i = 0; i < hosts.size(); i++) {
      sg__stage_run_host(run);
      if (h2d)
        ASSERT_EQ(std::memcmp(device.data(), hosts[i].data(), bytes), 0) << "launch " << i;
      else
        ASSERT_EQ(std::memcmp(hosts[i].data(), device.data(), bytes), 0) << "launch " << i;
    }
    EXPECT_EQ(run->launches.count, 0u);
    EXPECT_EQ(std::count(creation.begin(), creation.end(), 0x33), static_cast<long>(bytes));
    sg__stage_run_free(run);
  }
}

// A graph's launches allocate nothing: a persistent run makes room for a
// few queued launches when it is made, and grows only when more are queued
// at once.
TEST(StagingEngine, AGraphRingsLaunchesAllocateNothing) {
  sgtest::LeakCheck leaks;
  Pool pool(4 * MiB, 2);
  const size_t bytes = 3 * 64 * KiB + 5;
  sg__stage_geometry g;
  sg__stage_geometry_make(bytes, 64 * KiB, 3, 2, &g);
  std::vector<uint8_t> device(bytes, 0), creation(bytes, 0x33);
  sg__stage_run *run = nullptr;
  ASSERT_EQ(sg__stage_run_new(pool.p, SG__STAGE_H2D, creation.data(), device.data(), &g, 1,
                              nullptr, nullptr, "test", &run),
            SG_OK)
      << sg_last_error();
  const long made = sg_live_allocations();
  for (uint32_t i = 0; i < 6; i++) {
    std::vector<uint8_t> host = random_bytes(bytes, 90 + i);
    ASSERT_EQ(sg__stage_launch_reserve(run, "test"), SG_OK);
    sg__stage_launch_queue(run, host.data());
    const long queued = sg_live_allocations();
    sg__stage_run_host(run);
    ASSERT_EQ(std::memcmp(device.data(), host.data(), bytes), 0) << "launch " << i;
    EXPECT_EQ(queued, made) << "launch " << i << " allocated";
  }
  sg__stage_run_free(run);
}

TEST(StagingEngine, ChunkNotAPageMultiple) {
  sgtest::LeakCheck leaks;
  Pool pool(1 * MiB);
  for (int dir = SG__STAGE_H2D; dir <= SG__STAGE_D2H; dir++)
    for (size_t bytes : {size_t(999), size_t(1000), size_t(1001), size_t(12345)})
      staged_copy(pool.p, static_cast<sg__stage_dir>(dir), bytes, 1000, 3, 2, 5, 3, 0,
                  static_cast<uint32_t>(bytes + dir));
}

// The protocol's order at its loosest (stage_run.h): host->device gates as
// early as the lag allows and DMAs as late as they may run; device->host
// DMAs as early as allowed and posts as late. A fill or a DMA that reused a
// slot too soon would show in the bytes.
void loosest_order_copy(sg_pinned_pool *pool, sg__stage_dir dir, size_t bytes, size_t chunk,
                        unsigned ring, uint32_t seed) {
  auto src = random_bytes(bytes, seed);
  std::vector<uint8_t> dst(bytes, 0);
  sg__stage_geometry g;
  sg__stage_geometry_make(bytes, chunk, ring, 2, &g);
  ASSERT_EQ(g.lag, std::min(g.ring, SG__STAGE_LAG));
  const bool h2d = dir == SG__STAGE_H2D;
  sg__stage_run *run = nullptr;
  ASSERT_EQ(sg__stage_run_new(pool, dir, h2d ? src.data() : dst.data(),
                              h2d ? dst.data() : src.data(), &g, 0, nullptr, nullptr, "test",
                              &run),
            SG_OK);
  auto do_dma = [&](uint32_t k) {
    char *device = static_cast<char *>(h2d ? static_cast<void *>(dst.data())
                                           : static_cast<void *>(src.data())) +
                   sg__stage_offset(run, k);
    if (h2d) std::memcpy(device, sg__stage_slot(run, k), sg__stage_len(run, k));
    else std::memcpy(sg__stage_slot(run, k), device, sg__stage_len(run, k));
  };
  uint32_t dmas = 0, hosts = 0; // done so far
  const uint32_t n = g.chunks, lag = g.lag;
  while (dmas < n || hosts < n) {
    if (h2d) {
      if (hosts < n && (hosts < lag || hosts - lag < dmas)) sg__stage_h2d_gate(run, hosts++);
      else do_dma(dmas++);
    } else {
      if (dmas < n && (dmas < g.ring || dmas - lag < hosts)) do_dma(dmas++);
      else sg__stage_d2h_post(run, hosts++);
    }
  }
  sg__stage_run_free(run);
  EXPECT_EQ(dst, src) << "dir " << dir << " bytes " << bytes << " ring " << ring;
}

TEST(StagingEngine, LoosestOrderTheLagAllows) {
  sgtest::LeakCheck leaks;
  Pool pool(4 * MiB);
  uint32_t seed = 7;
  for (int dir = SG__STAGE_H2D; dir <= SG__STAGE_D2H; dir++)
    for (unsigned ring : {1u, 2u, 3u, 4u, 6u})
      for (size_t bytes : {size_t(1), size_t(4096), size_t(5 * 4096 + 3), size_t(40 * 4096)})
        loosest_order_copy(pool.p, static_cast<sg__stage_dir>(dir), bytes, 4096, ring, seed++);
}

// Each fill or drain carries its copy's store kind to the copy threads.
TEST(StagingEngine, JobsCarryTheStoreKindOfTheirCopy) {
  sgtest::LeakCheck leaks;
  Pool pool(1 * MiB);
  std::vector<uint8_t> a(8 * 4096, 1), b(a.size(), 0);
  for (int dir = SG__STAGE_H2D; dir <= SG__STAGE_D2H; dir++) {
    sg__stage_geometry g;
    sg__stage_geometry_make(a.size(), 4096, 2, 1, &g);
    sg__stage_run *run = nullptr;
    ASSERT_EQ(sg__stage_run_new(pool.p, static_cast<sg__stage_dir>(dir), a.data(), b.data(), &g,
                                0, nullptr, nullptr, "test", &run),
              SG_OK);
    sg__stage_run_host(run);
    EXPECT_EQ(run->jobs[0].nontemporal, sg__stage_nontemporal_default(dir == SG__STAGE_H2D,
                                                                      a.size()))
        << "dir " << dir;
    sg__stage_run_free(run);
  }
}

// Only part of a copy was enqueued (an enqueue failed): quiescing waits for
// the fills already queued, after which the ring can be given back.
TEST(StagingEngine, QuiesceAfterAPartialRun) {
  sgtest::LeakCheck leaks;
  Pool pool(1 * MiB);
  auto src = random_bytes(10 * 4096, 3);
  std::vector<uint8_t> dst(src.size());
  sg__stage_geometry g;
  sg__stage_geometry_make(src.size(), 4096, 4, 2, &g);
  sg__stage_run *run = nullptr;
  ASSERT_EQ(sg__stage_run_new(pool.p, SG__STAGE_H2D, src.data(), dst.data(), &g, 0, nullptr,
                              nullptr, "test", &run),
            SG_OK);
  sg__stage_h2d_gate(run, 0); // queues four fills, waits for the first
  sg__stage_quiesce(run);
  EXPECT_EQ(std::memcmp(sg__stage_slot(run, 3), src.data() + 3 * 4096, 4096), 0);
  sg__stage_run_free(run);
}

// Many copies at once through a pool that holds two rings: the others wait
// for rings to come back, and every copy is still exact.
TEST(StagingEngine, ManyConcurrentCopiesShareASmallPool) {
  sgtest::LeakCheck leaks;
  const size_t chunk = 32 * KiB;
  const unsigned ring = 4;
  Pool pool(2 * ring * chunk, 2);
  std::vector<std::thread> threads;
  std::atomic<int> bad{0};
  for (int t = 0; t < 8; t++) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 12; i++) {
        size_t bytes = 1 + static_cast<size_t>((t * 50021 + i * 7919) % (9 * chunk));
        sg__stage_dir dir = (t + i) % 2 ? SG__STAGE_H2D : SG__STAGE_D2H;
        auto src = random_bytes(bytes, static_cast<uint32_t>(t * 1000 + i));
        std::vector<uint8_t> dst(bytes, 0);
        sg__stage_geometry g;
        sg__stage_geometry_make(bytes, chunk, ring, 2, &g);
        void *host = dir == SG__STAGE_H2D ? static_cast<void *>(src.data()) : dst.data();
        void *device = dir == SG__STAGE_H2D ? static_cast<void *>(dst.data()) : src.data();
        sg__stage_run *run = nullptr;
        if (sg__stage_run_new(pool.p, dir, host, device, &g, 0, nullptr, nullptr, "t", &run)) {
          bad++;
          continue;
        }
        sg__stage_run_host(run);
        sg__stage_run_free(run);
        if (dst != src) bad++;
      }
    });
  }
  for (auto &th : threads) th.join();
  EXPECT_EQ(bad.load(), 0);
  sg_pinned_pool_stats s;
  SG_ASSERT_OK(sg_pinned_pool_get_stats(pool.p, &s));
  EXPECT_EQ(s.in_use_bytes, 0u);
  EXPECT_LE(s.peak_in_use_bytes, 2 * ring * chunk);
}

}  // namespace
