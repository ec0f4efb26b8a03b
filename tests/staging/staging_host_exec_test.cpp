// Staged copies through executables on the host backend, where the engine
// runs exactly as on the GPU with the DMA emulated: every launch writes a
// fresh pattern into a pageable source (a host node before the copy),
// copies it host -> "device" -> host through the pinned ring, and checks
// it in a host node after the copy. That checks the data byte for byte and
// the ordering promises: the source is read after the nodes before the
// copy, the destination is complete for the nodes after it.
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "sg_test_util.h"
#include "staging_internal.h"

namespace {

constexpr size_t KiB = 1024, MiB = 1024 * 1024;

uint8_t pattern(size_t j, int launch) {
  return static_cast<uint8_t>(j * 131u + static_cast<unsigned>(launch) * 7u + (j >> 9));
}

// One chain: prepare -> up (H2D) -> down (D2H) -> check.
struct Chain {
  size_t bytes, src_off, dst_off;
  std::vector<uint8_t> src_buf, dst_buf;
  void *dev = nullptr;
  std::atomic<int> launch{0}, bad{0}, checked{0};
  sg_node prep{}, up{}, down{}, check{};

  // Host buffers with a spare page on each side: the pages around a buffer
  // (what a registration pins) then belong to it alone, whatever the heap
  // layout, so that registering one never overlaps the other.
  static constexpr size_t kPad = 3 * 4096;
  static uint8_t *inside(std::vector<uint8_t> &v) {
    uintptr_t p = (reinterpret_cast<uintptr_t>(v.data()) + 4096 + 4095) & ~uintptr_t(4095);
    return reinterpret_cast<uint8_t *>(p);
  }
  Chain(size_t n, size_t so = 0, size_t dof = 0)
      : bytes(n), src_off(so), dst_off(dof), src_buf(n + so + kPad), dst_buf(n + dof + kPad) {
    EXPECT_EQ(sg_mem_alloc(SG_BACKEND_HOST, SG_MEMORY_DEVICE, 0, n + 64, &dev), SG_OK);
  }
  ~Chain() { sg_mem_free(dev); }
  uint8_t *src() { return inside(src_buf) + src_off; }
  uint8_t *dst() { return inside(dst_buf) + dst_off; }
  uint8_t *device() { return static_cast<uint8_t *>(dev) + 3; } // unaligned too

  static int prepare(void *p) {
    Chain *c = static_cast<Chain *>(p);
    int k = ++c->launch;
    for (size_t j = 0; j < c->bytes; j++) c->src()[j] = pattern(j, k);
    std::memset(c->device(), 0xEE, c->bytes); // stale data would show
    std::memset(c->dst(), 0xDD, c->bytes);
    return 0;
  }
  static int verify(void *p) {
    Chain *c = static_cast<Chain *>(p);
    int k = c->launch.load();
    for (size_t j = 0; j < c->bytes; j++)
      if (c->dst()[j] != pattern(j, k)) {
        c->bad++;
        break;
      }
    c->checked++;
    return 0;
  }

  void add_to(sg_graph *g, const char *tag, const sg_node *after = nullptr) {
    std::string up_name = std::string("up-") + tag, down_name = std::string("down-") + tag;
    sg_host_desc h = {prepare, this, "prepare"};
    ASSERT_EQ(sg_graph_add_host(g, &h, after, after ? 1 : 0, &prep), SG_OK);
    sg_copy_desc u = {device(), src(), bytes, SG_COPY_HOST_TO_DEVICE, up_name.c_str()};
    ASSERT_EQ(sg_graph_add_copy(g, &u, &prep, 1, &up), SG_OK) << sg_last_error();
    sg_copy_desc d = {dst(), device(), bytes, SG_COPY_DEVICE_TO_HOST, down_name.c_str()};
    ASSERT_EQ(sg_graph_add_copy(g, &d, &up, 1, &down), SG_OK) << sg_last_error();
    sg_host_desc v = {verify, this, "check"};
    ASSERT_EQ(sg_graph_add_host(g, &v, &down, 1, &check), SG_OK);
  }
};

struct Pool {
  sg_pinned_pool *p = nullptr;
  explicit Pool(size_t max, sg_pool_exhausted mode = SG_POOL_WAIT) {
    sg_pinned_pool_options o = sgstaging::host_pool_options(max, 64 * KiB);
    o.on_exhausted = mode;
    EXPECT_EQ(sg_pinned_pool_create(&o, &p), SG_OK) << sg_last_error();
  }
  ~Pool() {
    if (p) EXPECT_EQ(sg_pinned_pool_destroy(p), SG_OK) << sg_last_error();
  }
};

sg_exec_options staged_options(sg_pinned_pool *pool, sg_exec_mode mode,
                               sg_staging_policy policy = SG_STAGING_STAGE,
                               size_t chunk = 8 * KiB, unsigned ring = 3, unsigned threads = 2) {
  sg_exec_options o = sgtest::host_options(4);
  o.mode = mode;
  o.staging.policy = policy;
  o.staging.pool = pool;
  o.staging.chunk_bytes = chunk;
  o.staging.ring_depth = ring;
  o.staging.copy_threads = threads;
  return o;
}

sg_exec_stats stats_of(sg_exec *e) {
  sg_exec_stats s;
  EXPECT_EQ(sg_exec_get_stats(e, &s), SG_OK);
  return s;
}

class StagingHostExec : public ::testing::TestWithParam<sg_exec_mode> {};

TEST_P(StagingHostExec, OddSizesAndUnalignedPointersAreExact) {
  sgtest::LeakCheck leaks;
  Pool pool(1 * MiB);
  const size_t chunk = 8 * KiB;
  for (size_t bytes : {size_t(1), chunk - 1, chunk, chunk + 1, 5 * chunk + 3, 40 * chunk}) {
    Chain a(bytes, 1, 3), b(bytes + 7, 0, 61);
    {
      sgtest::Graph g;
      a.add_to(g, "a");
      b.add_to(g, "b");
      sg_exec_options o = staged_options(pool.p, GetParam());
      sgtest::Exec e;
      SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
      for (int i = 0; i < 3; i++) SG_ASSERT_OK(sg_exec_launch(e, nullptr));
      SG_ASSERT_OK(sg_exec_wait(e));
      sg_exec_stats s = stats_of(e);
      EXPECT_EQ(s.staged_copies, 3u * 4u) << bytes;
      EXPECT_EQ(s.registered_copies, 0u);
    }
    EXPECT_EQ(a.checked.load(), 3);
    EXPECT_EQ(b.checked.load(), 3);
    EXPECT_EQ(a.bad.load() + b.bad.load(), 0) << "bytes " << bytes;
  }
  sg_pinned_pool_stats ps;
  SG_ASSERT_OK(sg_pinned_pool_get_stats(pool.p, &ps));
  EXPECT_EQ(ps.in_use_bytes, 0u);
  EXPECT_EQ(ps.users, 0u);
}

// Both protocols (SG_STAGING_PROTOCOL, read at creation), in one process:
// the memop protocol (the default; its emulated stream blocks on the flags)
// and the callbacks, each exact, in both modes.
TEST_P(StagingHostExec, BothProtocolsAreExact) {
  sgtest::LeakCheck leaks;
  Pool pool(1 * MiB);
  for (const char *protocol : {"callbacks", "memops", "callbacks"}) {
    setenv("SG_STAGING_PROTOCOL", protocol, 1);
    Chain a(5 * 8 * KiB + 3, 1, 7), b(3 * 8 * KiB, 0, 9);
    {
      sgtest::Graph g;
      a.add_to(g, "a");
      b.add_to(g, "b");
      sg_exec_options o = staged_options(pool.p, GetParam());
      sgtest::Exec e;
      SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
      for (int i = 0; i < 4; i++) SG_ASSERT_OK(sg_exec_launch(e, nullptr));
      SG_ASSERT_OK(sg_exec_wait(e));
      EXPECT_EQ(stats_of(e).staged_copies, 4u * 4u) << protocol;
    }
    EXPECT_EQ(a.checked.load() + b.checked.load(), 8) << protocol;
    EXPECT_EQ(a.bad.load() + b.bad.load(), 0) << protocol;
  }
  unsetenv("SG_STAGING_PROTOCOL");
  sg_pinned_pool_stats ps;
  SG_ASSERT_OK(sg_pinned_pool_get_stats(pool.p, &ps));
  EXPECT_EQ(ps.in_use_bytes, 0u);
}

TEST_P(StagingHostExec, RegistrationPolicyCopiesInPlaceAndLetsGo) {
  sgtest::LeakCheck leaks;
  Pool pool(1 * MiB);
  sg_registration_stats before;
  SG_ASSERT_OK(sg_registration_get_stats(SG_BACKEND_HOST, &before));
  Chain a(100 * KiB, 5, 9);
  {
    sgtest::Graph g;
    a.add_to(g, "a");
    sg_exec_options o = staged_options(pool.p, GetParam(), SG_STAGING_REGISTER);
    sgtest::Exec e;
    SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
    for (int i = 0; i < 4; i++) {
      SG_ASSERT_OK(sg_exec_launch(e, nullptr));
      SG_ASSERT_OK(sg_exec_wait(e));
    }
    sg_exec_stats s = stats_of(e);
    EXPECT_EQ(s.registered_copies, 8u);
    EXPECT_EQ(s.staged_copies, 0u);
    sg_registration_stats now;
    SG_ASSERT_OK(sg_registration_get_stats(SG_BACKEND_HOST, &now));
    EXPECT_EQ(now.registrations, before.registrations + 2);
    EXPECT_EQ(now.buffers, 2u);
  }
  sg_registration_stats after;
  SG_ASSERT_OK(sg_registration_get_stats(SG_BACKEND_HOST, &after));
  EXPECT_EQ(after.buffers, 0u); // the last binder unregistered them
  EXPECT_EQ(a.bad.load(), 0);
  EXPECT_EQ(a.checked.load(), 4);
}

// When the buffer cannot be registered (the limit is 0) REGISTER stages.
TEST_P(StagingHostExec, RegistrationFallsBackToStaging) {
  sgtest::LeakCheck leaks;
  Pool pool(1 * MiB);
  SG_ASSERT_OK(sg_registration_set_limit(0));
  Chain a(50 * KiB);
  {
    sgtest::Graph g;
    a.add_to(g, "a");
    sg_exec_options o = staged_options(pool.p, GetParam(), SG_STAGING_REGISTER);
    sgtest::Exec e;
    SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
    for (int i = 0; i < 2; i++) SG_ASSERT_OK(sg_exec_launch(e, nullptr));
    SG_ASSERT_OK(sg_exec_wait(e));
    sg_exec_stats s = stats_of(e);
    EXPECT_EQ(s.staged_copies, 4u);
    EXPECT_EQ(s.registered_copies, 0u);
  }
  SG_ASSERT_OK(sg_registration_set_limit(size_t(2) << 30));
  EXPECT_EQ(a.bad.load(), 0);
}

// AUTO and NONE on the host backend copy directly: there is no DMA to
// overlap, and nothing of the pool is touched. In graph mode too: the rule
// that stages every pageable copy of a CUDA graph (policy.h) is about the
// CUDA driver's memcpy nodes; the host backend's copies run in order.
TEST_P(StagingHostExec, AutoAndNoneCopyDirectly) {
  for (sg_staging_policy p : {SG_STAGING_AUTO, SG_STAGING_NONE}) {
    Chain a(300 * KiB);
    sgtest::Graph g;
    a.add_to(g, "a");
    sg_exec_options o = staged_options(nullptr, GetParam(), p);
    sgtest::Exec e;
    SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
    SG_ASSERT_OK(sg_exec_launch(e, nullptr));
    SG_ASSERT_OK(sg_exec_wait(e));
    sg_exec_stats s = stats_of(e);
    EXPECT_EQ(s.staged_copies + s.registered_copies, 0u);
    EXPECT_EQ(a.bad.load(), 0);
  }
}

// With chunk_bytes, ring_depth and copy_threads left at 0, the chunk adapts
// to the copy and the protocol (tuning.h): under the callbacks 32 MiB
// host->device goes in 4 chunks of 8 MiB, device->host in 3 of 10.7 MiB,
// in a ring of up to 4; under the memop protocol both are long copies, in
// 4 MiB chunks and a ring of 8. A ring holds one slot per chunk up to its
// depth: the pool's peak shows which.
TEST_P(StagingHostExec, ChunksAdaptToTheCopy) {
  const size_t bytes = 32 * MiB;
  for (int memops : {0, 1})
  for (bool to_device : {true, false}) {
    if (memops) unsetenv("SG_STAGING_PROTOCOL");
    else setenv("SG_STAGING_PROTOCOL", "callbacks", 1);
    const size_t chunk = memops ? sg__stage_auto_chunk_memops(to_device, bytes)
                                : sg__stage_auto_chunk(to_device, bytes);
    const size_t chunks = (bytes + chunk - 1) / chunk, slot = (chunk + 4095) / 4096 * 4096;
    if (!memops) EXPECT_EQ(chunks * slot, to_device ? 4 * 8 * MiB : 3 * size_t(11186176));
    if (memops) EXPECT_EQ(chunks * slot, 8 * 4 * MiB);
    const size_t ring = memops ? SG__STAGE_MEMOPS_LONG_RING : SG__STAGE_DEFAULT_RING;
    Pool pool(128 * MiB);
    std::vector<uint8_t> host(bytes + 3), want(bytes);
    for (size_t j = 0; j < bytes; j++) want[j] = pattern(j, to_device ? 1 : 2);
    void *dev = nullptr;
    SG_ASSERT_OK(sg_mem_alloc(SG_BACKEND_HOST, SG_MEMORY_DEVICE, 0, bytes, &dev));
    std::memcpy(to_device ? host.data() + 3 : dev, want.data(), bytes);
    {
      sgtest::Graph g;
      sg_copy_desc c = {to_device ? dev : static_cast<void *>(host.data() + 3),
                        to_device ? static_cast<const void *>(host.data() + 3) : dev, bytes,
                        SG_COPY_AUTO, "big"};
      SG_ASSERT_OK(sg_graph_add_copy(g, &c, nullptr, 0, nullptr));
      sg_exec_options o = staged_options(pool.p, GetParam(), SG_STAGING_STAGE, 0, 0, 0);
      sgtest::Exec e;
      SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
      SG_ASSERT_OK(sg_exec_launch(e, nullptr));
      SG_ASSERT_OK(sg_exec_wait(e));
      EXPECT_EQ(stats_of(e).staged_copies, 1u);
    }
    EXPECT_EQ(std::memcmp(to_device ? dev : host.data() + 3, want.data(), bytes), 0);
    sg_pinned_pool_stats ps;
    SG_ASSERT_OK(sg_pinned_pool_get_stats(pool.p, &ps));
    EXPECT_EQ(ps.peak_in_use_bytes, (chunks < ring ? chunks : ring) * slot)
        << (to_device ? "host->device" : "device->host") << (memops ? ", memops" : "");
    sg_mem_free(dev);
  }
  unsetenv("SG_STAGING_PROTOCOL");
}

// Pointers and sizes change between launches.
int hold_20ms(void *) {
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  return 0;
}

// Regression test of defect 1 (an executable destroyed with staged launches
// in flight seemed to leak 5 allocations: the pool's own first-use state,
// counted from a baseline taken before the pool was used). Launches held
// back by a slow node before the copies, then destroyed at once, under
// both protocols: destruction waits for them, the rings are back, and the
// executable leaves exactly the allocations it found, the pool warm; the
// pool's own go with the pool.
TEST_P(StagingHostExec, DestroyedWithLaunchesInFlight) {
  for (const char *protocol : {"memops", "callbacks"}) {
    setenv("SG_STAGING_PROTOCOL", protocol, 1);
    Chain c(100 * KiB + 3, 5, 9);
    const long start = sg_live_allocations();
    auto pool = std::make_unique<Pool>(1 * MiB);
    long warm = 0;
    for (int round = 0; round < 2; round++) {
      {
        sgtest::Graph g;
        sg_host_desc hd = {hold_20ms, nullptr, "hold"};
        sg_node hold{};
        ASSERT_EQ(sg_graph_add_host(g, &hd, nullptr, 0, &hold), SG_OK);
        c.add_to(g, "d", &hold);
        sg_exec_options o = staged_options(pool->p, GetParam());
        sg_exec *e = nullptr;
        ASSERT_EQ(sg_exec_create(g, &o, &e), SG_OK) << sg_last_error();
        for (int i = 0; i < 3; i++) ASSERT_EQ(sg_exec_launch(e, nullptr), SG_OK);
        ASSERT_EQ(sg_exec_destroy(e), SG_OK);
      }
      sg_pinned_pool_stats ps;
      ASSERT_EQ(sg_pinned_pool_get_stats(pool->p, &ps), SG_OK);
      EXPECT_EQ(ps.in_use_bytes, 0u) << protocol << ": a ring was not given back";
      if (round == 0) warm = sg_live_allocations();
      else EXPECT_EQ(sg_live_allocations(), warm) << protocol << ": the executable leaked";
    }
    pool.reset();
    EXPECT_EQ(c.checked.load(), 6) << protocol;
    EXPECT_EQ(c.bad.load(), 0) << protocol;
    EXPECT_EQ(sg_live_allocations(), start) << protocol;
  }
  unsetenv("SG_STAGING_PROTOCOL");
}

// A fresh pageable source and destination every launch (as a pipeline
// feeding new arrays does), set between launches without waiting: graph
// mode keeps one ring per copy (the pageable side is handed over per
// launch), every launch moves its own buffers, under both protocols.
TEST_P(StagingHostExec, NewPageableBuffersEveryLaunch) {
  for (const char *protocol : {"memops", "callbacks"}) {
    setenv("SG_STAGING_PROTOCOL", protocol, 1);
    const size_t bytes = 70 * KiB + 1;
    Pool pool(1 * MiB);
    void *dev = nullptr;
    ASSERT_EQ(sg_mem_alloc(SG_BACKEND_HOST, SG_MEMORY_DEVICE, 0, bytes, &dev), SG_OK);
    std::vector<std::unique_ptr<std::vector<uint8_t>>> srcs, dsts;
    auto fresh = [&](int i) {
      srcs.push_back(std::make_unique<std::vector<uint8_t>>(sgstaging::random_bytes(bytes, i)));
      dsts.push_back(std::make_unique<std::vector<uint8_t>>(bytes, 0xDD));
    };
    fresh(0);
    {
      sgtest::Graph g;
      sg_node up{}, down{};
      sg_copy_desc u = {dev, srcs[0]->data(), bytes, SG_COPY_HOST_TO_DEVICE, "up"};
      ASSERT_EQ(sg_graph_add_copy(g, &u, nullptr, 0, &up), SG_OK);
      sg_copy_desc d = {dsts[0]->data(), dev, bytes, SG_COPY_DEVICE_TO_HOST, "down"};
      ASSERT_EQ(sg_graph_add_copy(g, &d, &up, 1, &down), SG_OK);
      sg_exec_options o = staged_options(pool.p, GetParam());
      sgtest::Exec e;
      ASSERT_EQ(sg_exec_create(g, &o, &e.e), SG_OK) << sg_last_error();
      sg_pinned_pool_stats created;
      ASSERT_EQ(sg_pinned_pool_get_stats(pool.p, &created), SG_OK);
      ASSERT_EQ(sg_exec_launch(e, nullptr), SG_OK);
      for (int i = 1; i < 8; i++) {
        fresh(i);
        sg_copy_desc ui = {dev, srcs[i]->data(), bytes, SG_COPY_HOST_TO_DEVICE, nullptr};
        sg_copy_desc di = {dsts[i]->data(), dev, bytes, SG_COPY_DEVICE_TO_HOST, nullptr};
        ASSERT_EQ(sg_exec_set_copy(e, up, &ui), SG_OK) << sg_last_error();
        ASSERT_EQ(sg_exec_set_copy(e, down, &di), SG_OK) << sg_last_error();
        ASSERT_EQ(sg_exec_launch(e, nullptr), SG_OK);
      }
      ASSERT_EQ(sg_exec_wait(e), SG_OK) << sg_last_error();
      for (size_t i = 0; i < srcs.size(); i++)
        EXPECT_EQ(*dsts[i], *srcs[i]) << protocol << ": launch " << i;
      EXPECT_EQ(stats_of(e).staged_copies, 16u) << protocol;
      sg_pinned_pool_stats ps;
      ASSERT_EQ(sg_pinned_pool_get_stats(pool.p, &ps), SG_OK);
      if (GetParam() == SG_MODE_GRAPH) {
        EXPECT_EQ(ps.acquisitions, created.acquisitions) << protocol << ": another ring was taken";
        EXPECT_EQ(ps.persistent_bytes, created.persistent_bytes) << protocol;
      }
    }
    sg_mem_free(dev);
  }
  unsetenv("SG_STAGING_PROTOCOL");
}

TEST_P(StagingHostExec, SetCopyBetweenLaunches) {
  sgtest::LeakCheck leaks;
  Pool pool(1 * MiB);
  Chain a(20 * KiB + 5);
  sgtest::Graph g;
  a.add_to(g, "a");
  sg_exec_options o = staged_options(pool.p, GetParam());
  sgtest::Exec e;
  SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
  SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  SG_ASSERT_OK(sg_exec_wait(e));
  // Same chain, other buffers, other size: the verify callback reads the
  // chain's fields, so move the chain's view with the nodes.
  std::vector<uint8_t> src2(70 * KiB + 1 + Chain::kPad), dst2(70 * KiB + 1 + Chain::kPad);
  a.src_buf.swap(src2);
  a.dst_buf.swap(dst2);
  a.bytes = 70 * KiB + 1;
  a.src_off = a.dst_off = 0;
  sg_copy_desc u = {a.device(), a.src(), a.bytes, SG_COPY_HOST_TO_DEVICE, nullptr};
  void *dev2 = nullptr;
  SG_ASSERT_OK(sg_mem_alloc(SG_BACKEND_HOST, SG_MEMORY_DEVICE, 0, a.bytes + 64, &dev2));
  std::swap(a.dev, dev2);
  u.dst = a.device();
  SG_ASSERT_OK(sg_exec_set_copy(e, a.up, &u));
  sg_copy_desc d = {a.dst(), a.device(), a.bytes, SG_COPY_DEVICE_TO_HOST, nullptr};
  SG_ASSERT_OK(sg_exec_set_copy(e, a.down, &d));
  for (int i = 0; i < 2; i++) SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  SG_ASSERT_OK(sg_exec_wait(e));
  EXPECT_EQ(a.bad.load(), 0);
  EXPECT_EQ(a.checked.load(), 3);
  EXPECT_EQ(stats_of(e).staged_copies, 6u);
  sg_exec_destroy(e.e);
  e.e = nullptr;
  sg_mem_free(dev2);
}

INSTANTIATE_TEST_SUITE_P(Modes, StagingHostExec,
                         ::testing::Values(SG_MODE_STREAMS, SG_MODE_GRAPH),
                         [](const ::testing::TestParamInfo<sg_exec_mode> &i) {
                           return std::string(i.param == SG_MODE_STREAMS ? "Streams" : "Graph");
                         });

// Many executables, each launched from its own thread, share a pool that
// holds two rings: launches wait for rings others give back, nothing
// deadlocks, every byte arrives.
TEST(StagingHostShared, ManyExecutablesShareOneSmallPool) {
  sgtest::LeakCheck leaks;
  const size_t chunk = 16 * KiB;
  const unsigned ring = 3;
  Pool pool(2 * ring * chunk);
  const int n = 6;
  std::vector<std::unique_ptr<Chain>> chains;
  std::vector<sgtest::Graph> graphs(n);
  std::vector<sg_exec *> execs(n, nullptr);
  for (int i = 0; i < n; i++) {
    chains.emplace_back(new Chain(1 + static_cast<size_t>(i) * 9000 + 3 * chunk, i % 3, i % 5));
    chains[i]->add_to(graphs[i], "x");
    sg_exec_options o = staged_options(pool.p, SG_MODE_STREAMS, SG_STAGING_STAGE, chunk, ring, 2);
    SG_ASSERT_OK(sg_exec_create(graphs[i], &o, &execs[i]));
  }
  std::vector<std::thread> threads;
  std::atomic<int> errors{0};
  for (int i = 0; i < n; i++)
    threads.emplace_back([&, i] {
      for (int k = 0; k < 10; k++) {
        if (sg_exec_launch(execs[i], nullptr) != SG_OK) errors++;
        if (k % 3 == 2 && sg_exec_wait(execs[i]) != SG_OK) errors++;
      }
      if (sg_exec_wait(execs[i]) != SG_OK) errors++;
    });
  for (auto &t : threads) t.join();
  EXPECT_EQ(errors.load(), 0) << sg_last_error();
  for (int i = 0; i < n; i++) {
    EXPECT_EQ(chains[i]->bad.load(), 0) << i;
    EXPECT_EQ(chains[i]->checked.load(), 10);
    EXPECT_EQ(stats_of(execs[i]).staged_copies, 20u);
    SG_EXPECT_OK(sg_exec_destroy(execs[i]));
  }
  sg_pinned_pool_stats ps;
  SG_ASSERT_OK(sg_pinned_pool_get_stats(pool.p, &ps));
  EXPECT_EQ(ps.in_use_bytes, 0u);
  EXPECT_LE(ps.peak_in_use_bytes, 2 * ring * chunk);
}

// Graph mode takes its rings at creation and never waits: a pool too small
// for them fails the creation clearly, naming the node, with nothing kept.
TEST(StagingHostExhaustion, GraphModeCreationFailsClearly) {
  sgtest::LeakCheck leaks;
  const size_t chunk = 16 * KiB;
  Pool pool(3 * chunk); // one ring of three chunks; the chain needs two
  Chain a(10 * chunk);
  sgtest::Graph g;
  a.add_to(g, "a");
  sg_exec_options o = staged_options(pool.p, SG_MODE_GRAPH, SG_STAGING_STAGE, chunk, 3);
  sg_exec *e = nullptr;
  EXPECT_EQ(sg_exec_create(g, &o, &e), SG_ERR_POOL_EXHAUSTED);
  std::string msg = sg_last_error();
  EXPECT_NE(msg.find("sg_exec_create"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'down-a'"), std::string::npos) << msg;
  EXPECT_EQ(e, nullptr);
  sg_pinned_pool_stats ps;
  SG_ASSERT_OK(sg_pinned_pool_get_stats(pool.p, &ps));
  EXPECT_EQ(ps.in_use_bytes, 0u);
  EXPECT_EQ(ps.users, 0u);
  EXPECT_EQ(ps.exhausted, 1u);
}

// A ring larger than the cap can never be had: the executable is refused
// at creation, as in graph mode (not at a launch that would fail it for good).
TEST(StagingHostExhaustion, StreamsModeRingAboveTheCapIsRefusedAtCreation) {
  sgtest::LeakCheck leaks;
  const size_t chunk = 16 * KiB;
  Pool pool(2 * chunk);
  Chain a(10 * chunk);
  sgtest::Graph g;
  a.add_to(g, "a");
  sg_exec_options o = staged_options(pool.p, SG_MODE_STREAMS, SG_STAGING_STAGE, chunk, 3);
  sg_exec *e = nullptr;
  EXPECT_EQ(sg_exec_create(g, &o, &e), SG_ERR_POOL_EXHAUSTED);
  std::string msg = sg_last_error();
  EXPECT_NE(msg.find("'up-a'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("larger than the pinned pool's cap"), std::string::npos) << msg;
  EXPECT_EQ(e, nullptr);
  EXPECT_EQ(a.checked.load(), 0);
}

TEST(StagingHostOptions, AreValidatedAtCreation) {
  sgtest::LeakCheck leaks;
  Chain a(1000);
  sgtest::Graph g;
  a.add_to(g, "a");
  sg_exec *e = nullptr;
  sg_exec_options o = staged_options(nullptr, SG_MODE_STREAMS);
  o.staging.ring_depth = 65;
  EXPECT_EQ(sg_exec_create(g, &o, &e), SG_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(sg_last_error()).find("ring_depth"), std::string::npos);
  o = staged_options(nullptr, SG_MODE_STREAMS);
  o.staging.copy_threads = 65;
  EXPECT_EQ(sg_exec_create(g, &o, &e), SG_ERR_INVALID_ARGUMENT);
  sg_pinned_pool_options po = sgstaging::host_pool_options(1 * MiB);
  sg_pinned_pool *dead = nullptr;
  SG_ASSERT_OK(sg_pinned_pool_create(&po, &dead));
  SG_ASSERT_OK(sg_pinned_pool_destroy(dead));
  o = staged_options(dead, SG_MODE_STREAMS);
  EXPECT_EQ(sg_exec_create(g, &o, &e), SG_ERR_INVALID_HANDLE);
  EXPECT_NE(std::string(sg_last_error()).find("staging.pool"), std::string::npos);
  EXPECT_EQ(e, nullptr);
}

TEST(StagingHostPool, CannotBeDestroyedUnderAnExecutable) {
  sgtest::LeakCheck leaks;
  sg_pinned_pool_options po = sgstaging::host_pool_options(1 * MiB);
  sg_pinned_pool *pool = nullptr;
  SG_ASSERT_OK(sg_pinned_pool_create(&po, &pool));
  Chain a(1000);
  {
    sgtest::Graph g;
    a.add_to(g, "a");
    sg_exec_options o = staged_options(pool, SG_MODE_STREAMS);
    sgtest::Exec e;
    SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
    EXPECT_EQ(sg_pinned_pool_destroy(pool), SG_ERR_INVALID_ARGUMENT);
  }
  SG_ASSERT_OK(sg_pinned_pool_destroy(pool));
}

}  // namespace
