// Pinned staging on the GPU (label `gpu`; every test skips without a
// device). Pageable copies through executables in streams mode and in graph
// mode built both ways, compared byte for byte: every launch writes fresh
// data into the pageable source (a host node before the copy), poisons the
// device buffers (memset nodes) and the destination, and a host node after
// the device->host copy checks the destination - so both ordering promises
// are checked too: the source is read after the nodes before the copy, the
// destination is complete for the nodes after it. Under every policy: the
// CUDA driver's memcpy node with a pageable side breaks both promises, which
// is why graph mode stages even under SG_STAGING_NONE (src/staging/policy.h).
#include <cuda_runtime_api.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "sg_test_util.h"
#include "streamgraph/testing.h"

extern "C" int sg__staging_cuda_memops_supported(int device); // src/cuda/staged_memops.c
extern "C" {
#include "cuda/stage_mem.h" // sg__cuda_stage_mem: the CUDA backend's registration cache
#include "staging/regcache.h"
}

namespace {

constexpr size_t KiB = 1024, MiB = 1024 * 1024;

#define SKIP_WITHOUT_GPU()                                             \
  do {                                                                 \
    if (sg_cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device"; \
  } while (0)

// Each way runs under the memop protocol (the default where the device has
// stream memory operations) and, for streams mode and the explicit graph
// build, under the callback protocol too (SG_STAGING_PROTOCOL, read when an
// executable is created).
struct Way {
  const char *name;
  sg_exec_mode mode;
  sg_graph_build build;
  bool callbacks = false;
};
const Way kWays[] = {{"streams", SG_MODE_STREAMS, SG_BUILD_EXPLICIT},
                     {"graph_explicit", SG_MODE_GRAPH, SG_BUILD_EXPLICIT},
                     {"graph_capture", SG_MODE_GRAPH, SG_BUILD_CAPTURE},
                     {"streams_callbacks", SG_MODE_STREAMS, SG_BUILD_EXPLICIT, true},
                     {"graph_explicit_callbacks", SG_MODE_GRAPH, SG_BUILD_EXPLICIT, true}};
void PrintTo(const Way &w, std::ostream *os) { *os << w.name; }

// Sets SG_STAGING_PROTOCOL for its lifetime.
struct Protocol {
  explicit Protocol(bool callbacks) {
    if (callbacks) setenv("SG_STAGING_PROTOCOL", "callbacks", 1);
    else unsetenv("SG_STAGING_PROTOCOL");
  }
  ~Protocol() { unsetenv("SG_STAGING_PROTOCOL"); }
};

// Fresh data for each launch: a cheap 64-bit generator seeded by the launch.
void fill(uint8_t *p, size_t n, uint64_t seed) {
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  for (size_t i = 0; i < n; i++) {
    if (i % 8 == 0) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
    }
    p[i] = static_cast<uint8_t>(x >> (8 * (i % 8)));
  }
}

struct DevBuf {
  void *p = nullptr;
  explicit DevBuf(size_t n) {
    EXPECT_EQ(sg_mem_alloc(SG_BACKEND_CUDA, SG_MEMORY_DEVICE, 0, n, &p), SG_OK);
  }
  ~DevBuf() { sg_mem_free(p); }
  uint8_t *at(size_t off) const { return static_cast<uint8_t *>(p) + off; }
};

// prepare -> (poison A, poison B) -> up (H2D, staged) -> A->B (D2D) ->
// down (D2H, staged) -> check. Offsets make every pointer unaligned.
struct Chain {
  size_t bytes, off;
  std::vector<uint8_t> src_buf, dst_buf, expect;
  DevBuf a, b;
  std::atomic<int> launch{0}, bad{0}, checked{0};
  sg_node prep{}, up{}, down{}, check{};

  // Host buffers with a spare page on each side: the pages around a buffer
  // (what a registration pins) then belong to it alone, whatever the heap
  // layout, so that registering the source never overlaps the destination.
  static constexpr size_t kPad = 3 * 4096 + 64;
  static uint8_t *inside(std::vector<uint8_t> &v) {
    uintptr_t p = (reinterpret_cast<uintptr_t>(v.data()) + 4096 + 4095) & ~uintptr_t(4095);
    return reinterpret_cast<uint8_t *>(p);
  }
  Chain(size_t n, size_t o = 0)
      : bytes(n), off(o), src_buf(n + kPad), dst_buf(n + kPad), expect(n), a(n + 64), b(n + 64) {}
  uint8_t *src() { return inside(src_buf) + off % 64; }
  uint8_t *dst() { return inside(dst_buf) + (off * 3) % 61; }

  static int prepare(void *p) {
    Chain *c = static_cast<Chain *>(p);
    int k = ++c->launch;
    fill(c->expect.data(), c->bytes, static_cast<uint64_t>(k) * 1000003u + c->bytes);
    std::memcpy(c->src(), c->expect.data(), c->bytes);
    std::memset(c->dst(), 0xDD, c->bytes);
    return 0;
  }
  static int verify(void *p) {
    Chain *c = static_cast<Chain *>(p);
    if (std::memcmp(c->dst(), c->expect.data(), c->bytes) != 0) c->bad++;
    c->checked++;
    return 0;
  }
  void add_to(sg_graph *g, const std::string &tag) {
    std::string un = "up-" + tag, dn = "down-" + tag;
    sg_host_desc h = {prepare, this, "prepare"};
    ASSERT_EQ(sg_graph_add_host(g, &h, nullptr, 0, &prep), SG_OK);
    sg_node pa{}, pb{}, mid{};
    sg_memset_desc ma = {a.p, 0xEE, 1, bytes + 64, "poison-a"};
    sg_memset_desc mb = {b.p, 0xCC, 1, bytes + 64, "poison-b"};
    ASSERT_EQ(sg_graph_add_memset(g, &ma, nullptr, 0, &pa), SG_OK);
    ASSERT_EQ(sg_graph_add_memset(g, &mb, nullptr, 0, &pb), SG_OK);
    sg_node up_deps[] = {prep, pa};
    sg_copy_desc u = {a.at(off % 7), src(), bytes, SG_COPY_HOST_TO_DEVICE, un.c_str()};
    ASSERT_EQ(sg_graph_add_copy(g, &u, up_deps, 2, &up), SG_OK) << sg_last_error();
    sg_node mid_deps[] = {up, pb};
    sg_copy_desc m = {b.at(off % 5), a.at(off % 7), bytes, SG_COPY_DEVICE_TO_DEVICE, "a-to-b"};
    ASSERT_EQ(sg_graph_add_copy(g, &m, mid_deps, 2, &mid), SG_OK) << sg_last_error();
    sg_copy_desc d = {dst(), b.at(off % 5), bytes, SG_COPY_DEVICE_TO_HOST, dn.c_str()};
    ASSERT_EQ(sg_graph_add_copy(g, &d, &mid, 1, &down), SG_OK) << sg_last_error();
    sg_host_desc v = {verify, this, "check"};
    ASSERT_EQ(sg_graph_add_host(g, &v, &down, 1, &check), SG_OK);
  }
};

struct Pool {
  sg_pinned_pool *p = nullptr;
  explicit Pool(size_t max, size_t slab = 0, sg_backend backend = SG_BACKEND_CUDA) {
    sg_pinned_pool_options o;
    sg_pinned_pool_options_init(&o);
    o.backend = backend;
    o.max_bytes = max;
    o.slab_bytes = slab;
    EXPECT_EQ(sg_pinned_pool_create(&o, &p), SG_OK) << sg_last_error();
  }
  ~Pool() {
    if (p) EXPECT_EQ(sg_pinned_pool_destroy(p), SG_OK) << sg_last_error();
  }
};

sg_exec_options options(const Way &w, sg_pinned_pool *pool,
                        sg_staging_policy policy = SG_STAGING_STAGE, size_t chunk = 0,
                        unsigned ring = 0) {
  sg_exec_options o;
  sg_exec_options_init(&o);
  o.backend = SG_BACKEND_CUDA;
  o.mode = w.mode;
  o.build = w.build;
  o.staging.policy = policy;
  o.staging.pool = pool;
  o.staging.chunk_bytes = chunk;
  o.staging.ring_depth = ring;
  return o;
}

sg_exec_stats stats_of(sg_exec *e) {
  sg_exec_stats s;
  EXPECT_EQ(sg_exec_get_stats(e, &s), SG_OK);
  return s;
}

class StagingGpu : public ::testing::TestWithParam<Way> {
 protected:
  void SetUp() override {
    SKIP_WITHOUT_GPU();
    if (GetParam().callbacks) setenv("SG_STAGING_PROTOCOL", "callbacks", 1);
    else unsetenv("SG_STAGING_PROTOCOL");
  }
  void TearDown() override { unsetenv("SG_STAGING_PROTOCOL"); }
};

TEST_P(StagingGpu, OddSizesAreExact) {
  Pool pool(64 * MiB);
  const size_t chunk = 256 * KiB;
  for (size_t bytes : {size_t(1), size_t(4095), chunk - 1, chunk, chunk + 1, 3 * chunk + 17,
                       13 * chunk + 4093}) {
    Chain c(bytes, bytes % 13);
    {
      sgtest::Graph g;
      c.add_to(g, "c");
      sg_exec_options o = options(GetParam(), pool.p, SG_STAGING_STAGE, chunk, 3);
      sgtest::Exec e;
      SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
      for (int i = 0; i < 3; i++) SG_ASSERT_OK(sg_exec_launch(e, nullptr));
      SG_ASSERT_OK(sg_exec_wait(e));
      EXPECT_EQ(stats_of(e).staged_copies, 6u) << bytes;
    }
    EXPECT_EQ(c.checked.load(), 3) << bytes;
    EXPECT_EQ(c.bad.load(), 0) << "bytes " << bytes;
  }
}

// Every ring depth, so that the protocol's lag (stage_run.h) is 1 (ring 1)
// and equal to the ring (ring 2) as well as shorter (rings 3, 4, 6); and
// two chains side by side, whose copies run on two streams (two helper
// streams in streams mode) at once.
TEST_P(StagingGpu, EveryRingDepthAndTwoCopiesAtOnce) {
  Pool pool(64 * MiB);
  const size_t chunk = 256 * KiB, bytes = 13 * chunk + 4093;
  for (unsigned ring : {1u, 2u, 3u, 4u, 6u}) {
    Chain x(bytes, ring), y(bytes - 77, ring + 1);
    {
      sgtest::Graph g;
      x.add_to(g, "x");
      y.add_to(g, "y");
      sg_exec_options o = options(GetParam(), pool.p, SG_STAGING_STAGE, chunk, ring);
      sgtest::Exec e;
      SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
      for (int i = 0; i < 3; i++) SG_ASSERT_OK(sg_exec_launch(e, nullptr));
      SG_ASSERT_OK(sg_exec_wait(e));
      EXPECT_EQ(stats_of(e).staged_copies, 12u) << "ring " << ring;
    }
    EXPECT_EQ(x.checked.load(), 3) << "ring " << ring;
    EXPECT_EQ(y.checked.load(), 3) << "ring " << ring;
    EXPECT_EQ(x.bad.load() + y.bad.load(), 0) << "ring " << ring;
  }
}

TEST_P(StagingGpu, LargeCopiesWithTheDefaults) {
  // Default chunk, ring and threads, the default pool.
  for (size_t bytes : {64 * MiB, 256 * MiB + 4093}) {
    Chain c(bytes, 5);
    {
      sgtest::Graph g;
      c.add_to(g, "big");
      sg_exec_options o = options(GetParam(), nullptr, SG_STAGING_STAGE);
      sgtest::Exec e;
      SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
      for (int i = 0; i < 2; i++) SG_ASSERT_OK(sg_exec_launch(e, nullptr));
      SG_ASSERT_OK(sg_exec_wait(e));
    }
    EXPECT_EQ(c.checked.load(), 2);
    EXPECT_EQ(c.bad.load(), 0) << bytes;
  }
}

// Every policy, a copy above auto_min_bytes and one below. In streams mode
// NONE and a small AUTO copy take the driver's path (which synchronises the
// stream before a pageable source); in graph mode nothing does: a pageable
// memcpy node would read the source before "prepare" wrote it.
TEST_P(StagingGpu, PoliciesAndTheirStatistics) {
  const bool graph = GetParam().mode == SG_MODE_GRAPH;
  Pool pool(64 * MiB);
  const sg_staging_policy policies[] = {SG_STAGING_STAGE, SG_STAGING_REGISTER, SG_STAGING_AUTO,
                                        SG_STAGING_NONE};
  for (size_t bytes : {8 * MiB + 3, 64 * KiB + 3}) {
    // auto_min_bytes is 1 MiB by default, by protocol and direction
    // (tuning.h): both sizes lie on the same side of it.
    const bool small = bytes < 1 * MiB;
    for (sg_staging_policy p : policies) {
      Chain c(bytes, 1);
      {
        sgtest::Graph g;
        c.add_to(g, "p");
        sg_exec_options o = options(GetParam(), pool.p, p);
        sgtest::Exec e;
        SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
        for (int i = 0; i < 5; i++) {
          SG_ASSERT_OK(sg_exec_launch(e, nullptr));
          SG_ASSERT_OK(sg_exec_wait(e));
          sg__reg_wait_pending(&sg__cuda_stage_mem); // AUTO's registration in the background is done
        }
        sg_exec_stats s = stats_of(e);
        uint64_t staged = 0, registered = 0;
        switch (p) {
          case SG_STAGING_STAGE: staged = 10; break;
          case SG_STAGING_REGISTER: registered = 10; break;
          case SG_STAGING_AUTO:
            // Streams mode: staged until the second launch in a row (the
            // first reuse), which starts the registration in the background
            // and stages once more; registered from the third on (the test
            // waits for the registration after each launch). A small copy
            // takes the driver's path. Graph mode is built once: staged.
            if (graph) staged = 10;
            else if (!small) staged = 4, registered = 6;
            break;
          default: // NONE: the driver's path, except in a graph
            if (graph) staged = 10;
            break;
        }
        EXPECT_EQ(s.staged_copies, staged) << "policy " << p << ", " << bytes << " bytes";
        EXPECT_EQ(s.registered_copies, registered) << "policy " << p << ", " << bytes << " bytes";
      }
      EXPECT_EQ(c.checked.load(), 5);
      EXPECT_EQ(c.bad.load(), 0) << "policy " << p << ", " << bytes << " bytes";
      sg_registration_stats r;
      SG_ASSERT_OK(sg_registration_get_stats(SG_BACKEND_CUDA, &r));
      EXPECT_EQ(r.buffers, 0u) << "registrations outlived their executable";
    }
  }
}

// Hardware finding: the driver does not run a CUDA graph's memcpy node with a
// pageable side in graph order (the source was read before the host node
// writing it had run). So a small pageable copy under NONE, which streams
// mode gives to the driver, is staged in a graph, and every launch's data
// arrives whole, however often the graph runs.
TEST_P(StagingGpu, HardwareFindingPageableMemcpyNodeInAGraph) {
  const bool graph = GetParam().mode == SG_MODE_GRAPH;
  Pool pool(64 * MiB);
  const int launches = 20;
  Chain c(64 * KiB + 3, 5);
  {
    sgtest::Graph g;
    c.add_to(g, "finding");
    sg_exec_options o = options(GetParam(), pool.p, SG_STAGING_NONE);
    sgtest::Exec e;
    SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
    for (int i = 0; i < launches; i++) SG_ASSERT_OK(sg_exec_launch(e, nullptr));
    SG_ASSERT_OK(sg_exec_wait(e));
    sg_exec_stats s = stats_of(e);
    EXPECT_EQ(s.staged_copies, graph ? 2u * launches : 0u)
        << "a pageable copy in a CUDA graph must be staged, never a memcpy node";
  }
  EXPECT_EQ(c.checked.load(), launches);
  EXPECT_EQ(c.bad.load(), 0) << "launches whose data arrived wrong";
}

// Pageable <-> managed memory is a candidate like pageable <-> device: in
// graph mode it is staged even under NONE, and the ordering promises hold.
TEST_P(StagingGpu, ManagedMemoryIsStagedInAGraph) {
  const bool graph = GetParam().mode == SG_MODE_GRAPH;
  Pool pool(64 * MiB);
  const size_t bytes = 3 * MiB + 11;
  Chain c(bytes, 2);
  void *managed = nullptr;
  ASSERT_EQ(cudaMallocManaged(&managed, bytes), cudaSuccess);
  {
    sgtest::Graph g;
    sg_host_desc h = {Chain::prepare, &c, "prepare"};
    SG_ASSERT_OK(sg_graph_add_host(g, &h, nullptr, 0, &c.prep));
    sg_copy_desc u = {managed, c.src(), bytes, SG_COPY_AUTO, "to-managed"};
    SG_ASSERT_OK(sg_graph_add_copy(g, &u, &c.prep, 1, &c.up));
    sg_copy_desc d = {c.dst(), managed, bytes, SG_COPY_AUTO, "from-managed"};
    SG_ASSERT_OK(sg_graph_add_copy(g, &d, &c.up, 1, &c.down));
    sg_host_desc v = {Chain::verify, &c, "check"};
    SG_ASSERT_OK(sg_graph_add_host(g, &v, &c.down, 1, &c.check));
    sg_exec_options o = options(GetParam(), pool.p, SG_STAGING_NONE);
    sgtest::Exec e;
    SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
    for (int i = 0; i < 3; i++) SG_ASSERT_OK(sg_exec_launch(e, nullptr));
    SG_ASSERT_OK(sg_exec_wait(e));
    EXPECT_EQ(stats_of(e).staged_copies, graph ? 6u : 0u);
  }
  EXPECT_EQ(c.checked.load(), 3);
  EXPECT_EQ(c.bad.load(), 0);
  cudaFree(managed);
}

TEST_P(StagingGpu, LaunchIntoACallersStream) {
  Pool pool(64 * MiB);
  Chain c(5 * MiB + 1, 3);
  sgtest::Graph g;
  c.add_to(g, "s");
  sg_exec_options o = options(GetParam(), pool.p, SG_STAGING_STAGE, 1 * MiB, 2);
  sgtest::Exec e;
  SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
  cudaStream_t s;
  ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  for (int i = 0; i < 3; i++) SG_ASSERT_OK(sg_exec_launch(e, s));
  ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
  EXPECT_EQ(c.checked.load(), 3);
  EXPECT_EQ(c.bad.load(), 0);
  SG_ASSERT_OK(sg_exec_wait(e));
  cudaStreamDestroy(s);
}

TEST_P(StagingGpu, SetCopyBetweenLaunches) {
  Pool pool(64 * MiB);
  Chain c(3 * MiB + 7, 2);
  sgtest::Graph g;
  c.add_to(g, "u");
  sg_exec_options o = options(GetParam(), pool.p, SG_STAGING_STAGE, 1 * MiB, 2);
  sgtest::Exec e;
  SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
  SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  SG_ASSERT_OK(sg_exec_wait(e));
  // The same chain moves to other host buffers of another size.
  c.bytes = 2 * MiB + 1;
  c.src_buf.assign(c.bytes + Chain::kPad, 0);
  c.dst_buf.assign(c.bytes + Chain::kPad, 0);
  c.expect.assign(c.bytes, 0);
  sg_copy_desc u = {c.a.at(c.off % 7), c.src(), c.bytes, SG_COPY_HOST_TO_DEVICE, nullptr};
  SG_ASSERT_OK(sg_exec_set_copy(e, c.up, &u));
  sg_copy_desc d = {c.dst(), c.b.at(c.off % 5), c.bytes, SG_COPY_DEVICE_TO_HOST, nullptr};
  SG_ASSERT_OK(sg_exec_set_copy(e, c.down, &d));
  for (int i = 0; i < 2; i++) SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  SG_ASSERT_OK(sg_exec_wait(e));
  EXPECT_EQ(c.checked.load(), 3);
  EXPECT_EQ(c.bad.load(), 0);
  EXPECT_EQ(stats_of(e).staged_copies, 6u);
}

INSTANTIATE_TEST_SUITE_P(Ways, StagingGpu, ::testing::ValuesIn(kWays),
                         [](const ::testing::TestParamInfo<Way> &i) {
                           return std::string(i.param.name);
                         });

// Eight executables launched from eight threads share a pool that holds two
// rings: launches wait for rings the others' callbacks give back; nothing
// deadlocks however the driver runs the callbacks.
// AUTO's registration in the background, in pieces (sg__route_reg_piece:
// 40-80 MiB buffers are pinned in 5-10 MiB pieces, one cudaHostRegister
// each, and a copy through them is one DMA per piece it spans): every
// launch is exact while the buffers are being pinned (staged meanwhile,
// with the pinning under way) and after, under both protocols, with random
// sizes and offsets (seed printed), and the route switches by itself.
TEST(StagingGpuBackground, RegisteredInPiecesIsExact) {
  SKIP_WITHOUT_GPU();
  const unsigned seed = std::random_device{}();
  std::printf("seed %u\n", seed);
  std::mt19937 rng(seed);
  Pool pool(256 * MiB);
  for (bool callbacks : {false, true}) {
    Protocol protocol(callbacks);
    sg_registration_stats rs0;
    SG_ASSERT_OK(sg_registration_get_stats(SG_BACKEND_CUDA, &rs0));
    const size_t bytes = 40 * MiB + rng() % (40 * MiB);
    Chain c(bytes, rng() % 4096);
    {
      sgtest::Graph g;
      c.add_to(g, "bg");
      sg_exec_options o = options(kWays[0], pool.p, SG_STAGING_AUTO);
      sgtest::Exec e;
      SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
      int launches = 0, switched = 0;
      // No waiting for the registration: launches back to back until the
      // route switches (it must, within a few seconds).
      auto t0 = std::chrono::steady_clock::now();
      while (!switched && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(30)) {
        SG_ASSERT_OK(sg_exec_launch(e, nullptr));
        SG_ASSERT_OK(sg_exec_wait(e));
        launches++;
        if (stats_of(e).registered_copies > 0) switched = launches;
      }
      ASSERT_GT(switched, 1) << "the route never switched (or switched at the first launch)";
      sg__reg_wait_pending(&sg__cuda_stage_mem);
      const sg_exec_stats before = stats_of(e);
      for (int i = 0; i < 3; i++) {
        SG_ASSERT_OK(sg_exec_launch(e, nullptr));
        SG_ASSERT_OK(sg_exec_wait(e));
        launches++;
      }
      const sg_exec_stats after = stats_of(e);
      EXPECT_EQ(after.registered_copies - before.registered_copies, 6u); // up and down
      EXPECT_EQ(after.staged_copies, before.staged_copies);
      // A caller's capture of a launch goes through the pieces too (a
      // memcpy node per piece), and its graph replays exactly.
      cudaStream_t cs;
      ASSERT_EQ(cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking), cudaSuccess);
      ASSERT_EQ(cudaStreamBeginCapture(cs, cudaStreamCaptureModeThreadLocal), cudaSuccess);
      sg_status captured = sg_exec_launch(e, cs);
      cudaGraph_t graph = nullptr;
      cudaError_t ended = cudaStreamEndCapture(cs, &graph);
      SG_EXPECT_OK(captured);
      EXPECT_EQ(ended, cudaSuccess);
      if (captured == SG_OK && ended == cudaSuccess) {
        cudaGraphExec_t ge = nullptr;
        ASSERT_EQ(cudaGraphInstantiate(&ge, graph, 0), cudaSuccess);
        for (int i = 0; i < 2; i++) {
          ASSERT_EQ(cudaGraphLaunch(ge, cs), cudaSuccess);
          launches++;
        }
        ASSERT_EQ(cudaStreamSynchronize(cs), cudaSuccess);
        cudaGraphExecDestroy(ge);
      }
      if (graph) cudaGraphDestroy(graph);
      cudaStreamDestroy(cs);
      EXPECT_EQ(c.checked.load(), launches);
      EXPECT_EQ(c.bad.load(), 0) << bytes << " bytes, " << (callbacks ? "callbacks" : "memops");
      std::printf("%s, %zu bytes: registered from launch %d\n",
                  callbacks ? "callbacks" : "memops", bytes, switched);
    }
    sg_registration_stats rs;
    SG_ASSERT_OK(sg_registration_get_stats(SG_BACKEND_CUDA, &rs));
    EXPECT_EQ(rs.pin_failures, rs0.pin_failures);
    EXPECT_EQ(rs.registrations, rs0.registrations + 2); // the source and the destination
    EXPECT_EQ(rs.buffers, rs0.buffers);                 // both let go with the executable
  }
}

TEST(StagingGpuShared, ManyExecutablesShareOneSmallPool) {
  SKIP_WITHOUT_GPU();
  const size_t chunk = 1 * MiB;
  const unsigned ring = 2;
  Pool pool(2 * ring * chunk, ring * chunk);
  const int n = 8;
  std::vector<std::unique_ptr<Chain>> chains;
  std::vector<sgtest::Graph> graphs(n);
  std::vector<sg_exec *> execs(n, nullptr);
  for (int i = 0; i < n; i++) {
    chains.emplace_back(new Chain(3 * MiB + static_cast<size_t>(i) * 4099, i));
    chains[i]->add_to(graphs[i], "x" + std::to_string(i));
    sg_exec_options o = options(kWays[0], pool.p, SG_STAGING_STAGE, chunk, ring);
    SG_ASSERT_OK(sg_exec_create(graphs[i], &o, &execs[i]));
  }
  std::vector<std::thread> threads;
  std::atomic<int> errors{0};
  for (int i = 0; i < n; i++)
    threads.emplace_back([&, i] {
      for (int k = 0; k < 6; k++)
        if (sg_exec_launch(execs[i], nullptr) != SG_OK) errors++;
      if (sg_exec_wait(execs[i]) != SG_OK) errors++;
    });
  for (auto &t : threads) t.join();
  EXPECT_EQ(errors.load(), 0);
  for (int i = 0; i < n; i++) {
    EXPECT_EQ(chains[i]->checked.load(), 6) << i;
    EXPECT_EQ(chains[i]->bad.load(), 0) << i;
    SG_EXPECT_OK(sg_exec_destroy(execs[i]));
  }
  sg_pinned_pool_stats ps;
  SG_ASSERT_OK(sg_pinned_pool_get_stats(pool.p, &ps));
  EXPECT_EQ(ps.in_use_bytes, 0u);
  EXPECT_LE(ps.peak_in_use_bytes, 2 * ring * chunk);
}

TEST(StagingGpuExhaustion, GraphModeCreationFailsClearly) {
  SKIP_WITHOUT_GPU();
  Pool pool(2 * MiB, 2 * MiB);
  Chain c(8 * MiB);
  sgtest::Graph g;
  c.add_to(g, "c");
  sg_exec_options o = options(kWays[1], pool.p, SG_STAGING_STAGE, 1 * MiB, 2);
  sg_exec *e = nullptr;
  EXPECT_EQ(sg_exec_create(g, &o, &e), SG_ERR_POOL_EXHAUSTED);
  EXPECT_NE(std::string(sg_last_error()).find("'down-c'"), std::string::npos) << sg_last_error();
  EXPECT_EQ(e, nullptr);
}

TEST(StagingGpuExhaustion, StreamsModeRingAboveTheCapIsRefusedAtCreation) {
  SKIP_WITHOUT_GPU();
  Pool pool(1 * MiB, 1 * MiB);
  Chain c(8 * MiB);
  sgtest::Graph g;
  c.add_to(g, "c");
  sg_exec_options o = options(kWays[0], pool.p, SG_STAGING_STAGE, 1 * MiB, 2);
  sg_exec *e = nullptr;
  EXPECT_EQ(sg_exec_create(g, &o, &e), SG_ERR_POOL_EXHAUSTED);
  EXPECT_NE(std::string(sg_last_error()).find("'up-c'"), std::string::npos) << sg_last_error();
  EXPECT_EQ(e, nullptr);
}

TEST(StagingGpuOptions, AHostMemoryPoolIsRefused) {
  SKIP_WITHOUT_GPU();
  Pool pool(1 * MiB, 0, SG_BACKEND_HOST);
  Chain c(2 * MiB);
  sgtest::Graph g;
  c.add_to(g, "c");
  sg_exec_options o = options(kWays[0], pool.p);
  sg_exec *e = nullptr;
  EXPECT_EQ(sg_exec_create(g, &o, &e), SG_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(sg_last_error()).find("pinned"), std::string::npos) << sg_last_error();
}

// Every CUDA call on the way fails in turn (and every allocation): the
// failure comes back as a status or is absorbed by a fallback (a refused
// registration stages instead), with nothing leaked and nothing hung.
void cuda_fault_sweep(sg_exec_mode mode, sg_staging_policy policy, bool callbacks = false,
                      unsigned kinds = SG_FAULT_CUDA | SG_FAULT_ALLOC) {
  Protocol protocol(callbacks);
  for (unsigned long nth = 1; nth < 4000; nth++) {
    Chain c(3 * MiB + 5, 1);
    // Taken with the chain's device buffers alive: while any sg_mem_alloc
    // allocation lives, the library's table of them (one allocation of its
    // own, freed with the last one) lives too.
    const long start = sg_live_allocations();
    sg_pinned_pool *pool = nullptr;
    sg_status st;
    {
      sgtest::Graph g;
      c.add_to(g, "f");
      sg_pinned_pool_options po;
      sg_pinned_pool_options_init(&po);
      po.max_bytes = 8 * MiB;
      po.slab_bytes = 4 * MiB;
      sg_fault_arm(kinds, nth);
      st = sg_pinned_pool_create(&po, &pool);
      sg_exec *e = nullptr;
      Way w = {"", mode, SG_BUILD_EXPLICIT};
      sg_exec_options o = options(w, pool, policy, 1 * MiB, 2);
      if (!st) st = sg_exec_create(g, &o, &e);
      for (int i = 0; i < 2 && !st; i++) st = sg_exec_launch(e, nullptr);
      if (!st) st = sg_exec_wait(e);
      if (e) sg_exec_destroy(e);
    }
    int fired = sg_fault_fired();
    sg_fault_arm(0, 0);
    if (pool) ASSERT_EQ(sg_pinned_pool_destroy(pool), SG_OK) << sg_last_error();
    ASSERT_EQ(sg_live_allocations(), start) << "leak with fault " << nth;
    if (st == SG_OK) EXPECT_EQ(c.bad.load(), 0) << "fault " << nth;
    if (!fired) {
      ASSERT_EQ(st, SG_OK) << sg_last_error();
      EXPECT_EQ(c.checked.load(), 2);
      return;
    }
    cudaGetLastError();
  }
  FAIL() << "the scenario never ran to completion";
}

// A caller captures a streams-mode launch into a CUDA graph of its own. A
// pageable copy can be part of it only through a buffer registered already
// (a per-launch ring cannot serve a graph that runs later, and CUDA does not
// run a pageable memcpy node in graph order): under REGISTER, after one
// launch outside the capture, the captured graph runs again and again with
// exact data, and the registrations stay while the executable exists.
TEST(StagingGpuCapture, ACallersCaptureUsesRegisteredBuffers) {
  SKIP_WITHOUT_GPU();
  Pool pool(64 * MiB);
  Chain c(2 * MiB + 5, 3);
  cudaStream_t s;
  ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  {
    sgtest::Graph g;
    c.add_to(g, "cap");
    sg_exec_options o = options(kWays[0], pool.p, SG_STAGING_REGISTER);
    sgtest::Exec e;
    SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
    SG_ASSERT_OK(sg_exec_launch(e, nullptr)); // registers both host buffers
    SG_ASSERT_OK(sg_exec_wait(e));
    ASSERT_EQ(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), cudaSuccess);
    sg_status st = sg_exec_launch(e, s);
    cudaGraph_t graph = nullptr;
    cudaError_t ended = cudaStreamEndCapture(s, &graph);
    SG_ASSERT_OK(st);
    ASSERT_EQ(ended, cudaSuccess);
    cudaGraphExec_t ge = nullptr;
    ASSERT_EQ(cudaGraphInstantiate(&ge, graph, 0), cudaSuccess);
    for (int i = 0; i < 3; i++) ASSERT_EQ(cudaGraphLaunch(ge, s), cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
    EXPECT_EQ(c.checked.load(), 4);
    EXPECT_EQ(c.bad.load(), 0);
    sg_exec_stats es = stats_of(e);
    EXPECT_EQ(es.registered_copies, 4u); // two launched, two captured
    EXPECT_EQ(es.staged_copies, 0u);
    sg_registration_stats r;
    SG_ASSERT_OK(sg_registration_get_stats(SG_BACKEND_CUDA, &r));
    EXPECT_EQ(r.buffers, 2u);
    cudaGraphExecDestroy(ge);
    cudaGraphDestroy(graph);
  }
  sg_registration_stats r;
  SG_ASSERT_OK(sg_registration_get_stats(SG_BACKEND_CUDA, &r));
  EXPECT_EQ(r.buffers, 0u) << "held registrations outlived their executable";
  cudaStreamDestroy(s);
}

// Without a registration the captured launch is refused, naming the node,
// rather than leaving a pageable memcpy node in the caller's graph.
TEST(StagingGpuCapture, ACallersCaptureRefusesAPageableCopy) {
  SKIP_WITHOUT_GPU();
  Pool pool(64 * MiB);
  Chain c(2 * MiB + 5, 3);
  for (sg_staging_policy p : {SG_STAGING_STAGE, SG_STAGING_NONE}) {
    cudaStream_t s; // one per capture: the failed one is left to itself
    ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
    {
      sgtest::Graph g;
      c.add_to(g, "cap");
      sg_exec_options o = options(kWays[0], pool.p, p);
      sgtest::Exec e;
      SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
      ASSERT_EQ(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), cudaSuccess);
      EXPECT_EQ(sg_exec_launch(e, s), SG_ERR_UNSUPPORTED) << "policy " << p;
      std::string message = sg_last_error();
      EXPECT_NE(message.find("'up-cap'"), std::string::npos) << message;
      EXPECT_NE(message.find("captured"), std::string::npos) << message;
      cudaGraph_t graph = nullptr;
      cudaStreamEndCapture(s, &graph); // may fail: the launch stopped half-way
      if (graph) cudaGraphDestroy(graph);
      cudaGetLastError();
    }
    cudaStreamDestroy(s);
    cudaGetLastError();
  }
  EXPECT_EQ(c.checked.load(), 0);
}

TEST(StagingGpuFaults, StreamsModeStaged) {
  SKIP_WITHOUT_GPU();
  cuda_fault_sweep(SG_MODE_STREAMS, SG_STAGING_STAGE);
}
TEST(StagingGpuFaults, GraphModeStaged) {
  SKIP_WITHOUT_GPU();
  cuda_fault_sweep(SG_MODE_GRAPH, SG_STAGING_STAGE);
}
TEST(StagingGpuFaults, StreamsModeRegistered) {
  SKIP_WITHOUT_GPU();
  cuda_fault_sweep(SG_MODE_STREAMS, SG_STAGING_REGISTER);
}
TEST(StagingGpuFaults, StreamsModeStagedCallbacks) {
  SKIP_WITHOUT_GPU();
  cuda_fault_sweep(SG_MODE_STREAMS, SG_STAGING_STAGE, true);
}
TEST(StagingGpuFaults, GraphModeStagedCallbacks) {
  SKIP_WITHOUT_GPU();
  cuda_fault_sweep(SG_MODE_GRAPH, SG_STAGING_STAGE, true);
}
// The memop protocol's host side failing (SG_FAULT_SYSTEM: a host copy the
// conductor cannot queue, and every thread or lock creation on the way):
// the launch fails at its wait, the device is released, nothing hangs.
TEST(StagingGpuFaults, StreamsModeHostSide) {
  SKIP_WITHOUT_GPU();
  cuda_fault_sweep(SG_MODE_STREAMS, SG_STAGING_STAGE, false, SG_FAULT_SYSTEM);
}
TEST(StagingGpuFaults, GraphModeHostSide) {
  SKIP_WITHOUT_GPU();
  cuda_fault_sweep(SG_MODE_GRAPH, SG_STAGING_STAGE, false, SG_FAULT_SYSTEM);
}

// ---- the memop protocol ------------------------------------------------------

// The H200 (and any device of compute capability 7.0 or later with a CUDA
// 12 driver) has stream memory operations: the probe must pass there, or
// every staged copy silently takes the slower callback protocol.
TEST(StagingGpuMemops, TheDeviceSupportsThem) {
  SKIP_WITHOUT_GPU();
  int major = 0, driver = 0;
  ASSERT_EQ(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0), cudaSuccess);
  ASSERT_EQ(cudaDriverGetVersion(&driver), cudaSuccess);
  if (major < 7 || driver < 12000) GTEST_SKIP() << "sm " << major << ", driver " << driver;
  EXPECT_EQ(sg__staging_cuda_memops_supported(0), 1)
      << "the memop probe failed on device 0 (sm " << major << ", driver " << driver
      << "): staged copies fall back to host callbacks";
}

// Launches queued one behind another, never waited for in between: graph
// mode arms its rings once per launch and serves them in order; streams
// mode gives every launch its own ring. Exact every time.
TEST(StagingGpuMemops, LaunchesQueuedAhead) {
  SKIP_WITHOUT_GPU();
  Pool pool(64 * MiB);
  for (const Way &w : {kWays[0], kWays[1]}) {
    Chain c(6 * MiB + 3, 1);
    {
      sgtest::Graph g;
      c.add_to(g, "q");
      sg_exec_options o = options(w, pool.p, SG_STAGING_STAGE, 1 * MiB, 3);
      sgtest::Exec e;
      SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
      for (int i = 0; i < 12; i++) SG_ASSERT_OK(sg_exec_launch(e, nullptr));
      SG_ASSERT_OK(sg_exec_wait(e));
    }
    EXPECT_EQ(c.checked.load(), 12) << w.name;
    EXPECT_EQ(c.bad.load(), 0) << w.name;
  }
  sg_pinned_pool_stats ps;
  SG_ASSERT_OK(sg_pinned_pool_get_stats(pool.p, &ps));
  EXPECT_EQ(ps.in_use_bytes, 0u) << "a ring was not given back";
}

void CUDART_CB sleep_100ms(void *) { std::this_thread::sleep_for(std::chrono::milliseconds(100)); }

// An executable destroyed right after its launches, with the device still
// held back by the caller's stream (a host function sleeping before them):
// destruction waits for the launches (the conductor, or the callbacks, keep
// serving them), then lets go of everything - no hang, no leak, rings back
// in the pool. Every way, both protocols. The pool is made per way and the
// count of live allocations taken before it: a pool keeps what its first
// use made (a slab and its block table, the slab list, the flag slab list,
// the copy threads' table: 5 allocations) until it is destroyed, which is
// no leak of the executable's (an earlier baseline taken after the pool was
// made but before its first use counted those as one).
TEST(StagingGpuMemops, DestroyedWithLaunchesInFlight) {
  SKIP_WITHOUT_GPU();
  cudaStream_t s;
  ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  for (const Way &w : kWays) {
    Protocol protocol(w.callbacks);
    Chain c(4 * MiB + 9, 2);
    const long start = sg_live_allocations();
    auto pool = std::make_unique<Pool>(64 * MiB);
    long warm = 0;
    for (int round = 0; round < 2; round++) {
      {
        sgtest::Graph g;
        c.add_to(g, "d");
        sg_exec_options o = options(w, pool->p, SG_STAGING_STAGE, 1 * MiB, 2);
        sg_exec *e = nullptr;
        SG_ASSERT_OK(sg_exec_create(g, &o, &e));
        ASSERT_EQ(cudaLaunchHostFunc(s, sleep_100ms, nullptr), cudaSuccess);
        for (int i = 0; i < 3; i++) SG_ASSERT_OK(sg_exec_launch(e, s));
        auto t0 = std::chrono::steady_clock::now();
        SG_ASSERT_OK(sg_exec_destroy(e));
        double waited =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        EXPECT_LT(waited, 30.0) << w.name;
      }
      ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
      sg_pinned_pool_stats ps;
      SG_ASSERT_OK(sg_pinned_pool_get_stats(pool->p, &ps));
      EXPECT_EQ(ps.in_use_bytes, 0u) << w.name << ": a ring was not given back";
      // The second round starts with the pool warm: the executable must
      // leave exactly what it found.
      if (round == 0) warm = sg_live_allocations();
      else EXPECT_EQ(sg_live_allocations(), warm) << w.name << ": the executable leaked";
    }
    pool.reset();
    EXPECT_EQ(c.checked.load(), 6) << w.name;
    EXPECT_EQ(c.bad.load(), 0) << w.name;
    EXPECT_EQ(sg_live_allocations(), start) << w.name;
  }
  cudaStreamDestroy(s);
}

// Graph mode with a fresh pageable buffer per batch, as a pipeline feeding
// new NumPy arrays does: up (H2D, staged) -> a-to-b (D2D) -> down (D2H,
// staged), each batch's source and destination new host memory set with
// sg_exec_set_copy and launched at once, queued behind the batches before
// it (no wait in between). The pageable side of a staged copy is handed
// over per launch, so this is an in-place update: no rebuild, and every
// batch's destination holds exactly its own source. `swap_device` also
// moves the copies to other device buffers every third batch (the staged
// copy's child graph updated in place).
void fresh_buffers_every_batch(const Way &w, bool swap_device) {
  Protocol protocol(w.callbacks);
  Pool pool(64 * MiB);
  const size_t bytes = 3 * MiB + 5;
  const int batches = 12;
  DevBuf a0(bytes), b0(bytes), a1(bytes), b1(bytes);
  std::vector<std::unique_ptr<std::vector<uint8_t>>> srcs, dsts;
  auto fresh = [&](int i) {
    srcs.push_back(std::make_unique<std::vector<uint8_t>>(bytes));
    dsts.push_back(std::make_unique<std::vector<uint8_t>>(bytes, 0xDD));
    fill(srcs.back()->data(), bytes, 77 + static_cast<uint64_t>(i));
  };
  fresh(0);
  sgtest::Graph g;
  sg_node up{}, mid{}, down{};
  sg_copy_desc u = {a0.p, srcs[0]->data(), bytes, SG_COPY_HOST_TO_DEVICE, "up"};
  SG_ASSERT_OK(sg_graph_add_copy(g, &u, nullptr, 0, &up));
  sg_copy_desc m = {b0.p, a0.p, bytes, SG_COPY_DEVICE_TO_DEVICE, "a-to-b"};
  SG_ASSERT_OK(sg_graph_add_copy(g, &m, &up, 1, &mid));
  sg_copy_desc d = {dsts[0]->data(), b0.p, bytes, SG_COPY_DEVICE_TO_HOST, "down"};
  SG_ASSERT_OK(sg_graph_add_copy(g, &d, &mid, 1, &down));
  sg_exec_options o = options(w, pool.p, SG_STAGING_STAGE, 1 * MiB, 2);
  sgtest::Exec e;
  SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
  sg_pinned_pool_stats created;
  SG_ASSERT_OK(sg_pinned_pool_get_stats(pool.p, &created));
  SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  for (int i = 1; i < batches; i++) {
    fresh(i);
    const bool other = swap_device && (i / 3) % 2 == 1;
    void *a = other ? a1.p : a0.p, *b = other ? b1.p : b0.p;
    sg_copy_desc ui = {a, srcs[i]->data(), bytes, SG_COPY_HOST_TO_DEVICE, nullptr};
    sg_copy_desc mi = {b, a, bytes, SG_COPY_DEVICE_TO_DEVICE, nullptr};
    sg_copy_desc di = {dsts[i]->data(), b, bytes, SG_COPY_DEVICE_TO_HOST, nullptr};
    ASSERT_EQ(sg_exec_set_copy(e, up, &ui), SG_OK) << sg_last_error();
    if (swap_device) {
      ASSERT_EQ(sg_exec_set_copy(e, mid, &mi), SG_OK) << sg_last_error();
    }
    ASSERT_EQ(sg_exec_set_copy(e, down, &di), SG_OK) << sg_last_error();
    ASSERT_EQ(sg_exec_launch(e, nullptr), SG_OK) << sg_last_error();
  }
  ASSERT_EQ(sg_exec_wait(e), SG_OK) << sg_last_error();
  for (int i = 0; i < batches; i++)
    EXPECT_EQ(std::memcmp(dsts[i]->data(), srcs[i]->data(), bytes), 0)
        << w.name << ": batch " << i << " does not hold its own source";
  sg_exec_stats st = stats_of(e);
  EXPECT_EQ(st.rebuilds, 0u) << w.name << ": a new " << (swap_device ? "device" : "pageable")
                             << " buffer rebuilt the graph";
  EXPECT_EQ(st.in_place_updates, st.param_updates) << w.name;
  EXPECT_EQ(st.staged_copies, 2u * batches) << w.name;
  sg_pinned_pool_stats ps;
  SG_ASSERT_OK(sg_pinned_pool_get_stats(pool.p, &ps));
  EXPECT_EQ(ps.acquisitions, created.acquisitions) << w.name << ": an update took another ring";
  EXPECT_EQ(ps.persistent_bytes, created.persistent_bytes) << w.name;
}

const Way kGraphWays[] = {kWays[1], kWays[2], kWays[4],
                          {"graph_capture_callbacks", SG_MODE_GRAPH, SG_BUILD_CAPTURE, true}};

// Regression test of defect 2 (a new pageable pointer on a staged copy
// rebuilt the whole graph: 36 rebuilds in 10 batches of a pipeline).
TEST(StagingGpuGraphUpdates, NewPageableBufferEveryBatchIsInPlace) {
  SKIP_WITHOUT_GPU();
  for (const Way &w : kGraphWays) fresh_buffers_every_batch(w, false);
}

// The device side of a staged copy moves too: its child graph is updated
// in place (the same shape, other addresses).
TEST(StagingGpuGraphUpdates, NewDeviceBufferIsInPlace) {
  SKIP_WITHOUT_GPU();
  for (const Way &w : kGraphWays) fresh_buffers_every_batch(w, true);
}

// Regression test of defect 3 (graph-mode instances of a pipeline took a
// new persistent ring for every new pair of pointers and exhausted the
// pool): a pipeline of depth 3, three staged 4 MiB copies per instance,
// fresh pageable buffers every batch, on a pool capped at exactly the nine
// rings the instances need.
TEST(StagingGpuGraphUpdates, PipelineRingsStayWithinTheirBound) {
  SKIP_WITHOUT_GPU();
  for (bool callbacks : {false, true}) {
    Protocol protocol(callbacks);
    const size_t bytes = 4 * MiB, chunk = 1 * MiB;
    const unsigned ring = 2, depth = 3, batches = 10;
    // 3 instances x 3 copies x ring x chunk, in 2 MiB slabs (no slack).
    Pool pool(9 * ring * chunk, 2 * MiB);
    std::vector<std::unique_ptr<DevBuf>> dev;
    for (int i = 0; i < 3; i++) dev.push_back(std::make_unique<DevBuf>(bytes));
    std::vector<std::vector<uint8_t>> first(3, std::vector<uint8_t>(bytes));
    sgtest::Graph g;
    sg_node up_x{}, up_y{}, down{};
    sg_copy_desc ux = {dev[0]->p, first[0].data(), bytes, SG_COPY_HOST_TO_DEVICE, "up-x"};
    SG_ASSERT_OK(sg_graph_add_copy(g, &ux, nullptr, 0, &up_x));
    sg_copy_desc uy = {dev[1]->p, first[1].data(), bytes, SG_COPY_HOST_TO_DEVICE, "up-y"};
    SG_ASSERT_OK(sg_graph_add_copy(g, &uy, nullptr, 0, &up_y));
    sg_node after[] = {up_x, up_y};
    sg_copy_desc dn = {first[2].data(), dev[0]->p, bytes, SG_COPY_DEVICE_TO_HOST, "down"};
    SG_ASSERT_OK(sg_graph_add_copy(g, &dn, after, 2, &down));
    std::vector<sgtest::Exec> inst(depth);
    for (auto &e : inst) {
      sg_exec_options o = options(kWays[1], pool.p, SG_STAGING_STAGE, chunk, ring);
      ASSERT_EQ(sg_exec_create(g, &o, &e.e), SG_OK) << sg_last_error();
    }
    std::vector<std::unique_ptr<std::vector<uint8_t>>> xs, outs;
    for (unsigned b = 0; b < batches; b++) {
      sgtest::Exec &e = inst[b % depth];
      if (b >= depth) SG_ASSERT_OK(sg_exec_wait(e));
      xs.push_back(std::make_unique<std::vector<uint8_t>>(bytes));
      outs.push_back(std::make_unique<std::vector<uint8_t>>(bytes, 0xDD));
      fill(xs.back()->data(), bytes, 500 + b);
      // Each instance's own device buffers (as a pipeline binds them).
      DevBuf &dx = *dev[0];
      sg_copy_desc xi = {dx.p, xs.back()->data(), bytes, SG_COPY_HOST_TO_DEVICE, nullptr};
      sg_copy_desc yi = {dev[1]->p, first[1].data(), bytes, SG_COPY_HOST_TO_DEVICE, nullptr};
      sg_copy_desc di = {outs.back()->data(), dx.p, bytes, SG_COPY_DEVICE_TO_HOST, nullptr};
      ASSERT_EQ(sg_exec_set_copy(e, up_x, &xi), SG_OK) << "batch " << b << ": "
                                                   << sg_last_error();
      ASSERT_EQ(sg_exec_set_copy(e, up_y, &yi), SG_OK) << "batch " << b << ": "
                                                   << sg_last_error();
      ASSERT_EQ(sg_exec_set_copy(e, down, &di), SG_OK) << "batch " << b << ": "
                                                   << sg_last_error();
      ASSERT_EQ(sg_exec_launch(e, nullptr), SG_OK) << "batch " << b << ": " << sg_last_error();
      SG_ASSERT_OK(sg_exec_wait(e)); // instances share the device buffers here: one at a time
    }
    for (unsigned b = 0; b < batches; b++)
      EXPECT_EQ(std::memcmp(outs[b]->data(), xs[b]->data(), bytes), 0) << "batch " << b;
    for (auto &e : inst) EXPECT_EQ(stats_of(e).rebuilds, 0u);
    sg_pinned_pool_stats ps;
    SG_ASSERT_OK(sg_pinned_pool_get_stats(pool.p, &ps));
    EXPECT_EQ(ps.exhausted, 0u);
    EXPECT_EQ(ps.acquisitions, 9u) << "one ring per staged copy of each instance";
    EXPECT_EQ(ps.persistent_bytes, 9 * ring * chunk);
  }
}

// A host copy the conductor cannot queue (an injected SG_FAULT_SYSTEM at
// the n-th chunk): the launch is reported failed by sg_exec_wait, naming
// the copy node, the device passes the released copy, and no launch of
// the failed executable reports the bad data as good.
TEST(StagingGpuMemops, AHostCopyThatFailsFailsTheLaunch) {
  SKIP_WITHOUT_GPU();
  if (!sg__staging_cuda_memops_supported(0)) GTEST_SKIP() << "no memop protocol here";
  Pool pool(64 * MiB);
  for (const Way &w : {kWays[0], kWays[1]}) {
    for (unsigned long nth = 1;; nth++) {
      ASSERT_LT(nth, 40u) << "never ran without the fault";
      Chain c(5 * MiB + 1, 3);
      sgtest::Graph g;
      c.add_to(g, "h");
      sg_exec_options o = options(w, pool.p, SG_STAGING_STAGE, 1 * MiB, 2);
      sgtest::Exec e;
      SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
      sg_fault_arm(SG_FAULT_SYSTEM, nth);
      sg_status launched = sg_exec_launch(e, nullptr);
      sg_status waited = sg_exec_wait(e);
      int fired = sg_fault_fired();
      sg_fault_arm(0, 0);
      SG_ASSERT_OK(launched);
      if (!fired) {
        SG_ASSERT_OK(waited);
        EXPECT_EQ(c.bad.load(), 0);
        break;
      }
      EXPECT_EQ(waited, SG_ERR_SYSTEM) << w.name << " fault " << nth;
      std::string m = sg_last_error();
      EXPECT_NE(m.find("staged copy failed"), std::string::npos) << m;
      EXPECT_NE(m.find("-h'"), std::string::npos) << "the message names the node: " << m;
      EXPECT_EQ(sg_exec_launch(e, nullptr), SG_ERR_EXEC_FAILED)
          << "a failed executable must not launch again";
    }
  }
  sg_pinned_pool_stats ps;
  SG_ASSERT_OK(sg_pinned_pool_get_stats(pool.p, &ps));
  EXPECT_EQ(ps.in_use_bytes, 0u);
}

// A graph-mode launch into a stream a caller is capturing cannot carry a
// memop-protocol copy (the host serves it per launch): refused, naming it.
TEST(StagingGpuMemops, AGraphLaunchIntoACaptureIsRefused) {
  SKIP_WITHOUT_GPU();
  if (!sg__staging_cuda_memops_supported(0)) GTEST_SKIP() << "no memop protocol here";
  Pool pool(64 * MiB);
  Chain c(2 * MiB + 5, 3);
  cudaStream_t s;
  ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  {
    sgtest::Graph g;
    c.add_to(g, "cap");
    sg_exec_options o = options(kWays[1], pool.p, SG_STAGING_STAGE);
    sgtest::Exec e;
    SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
    ASSERT_EQ(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), cudaSuccess);
    EXPECT_EQ(sg_exec_launch(e, s), SG_ERR_UNSUPPORTED);
    std::string m = sg_last_error();
    EXPECT_NE(m.find("-cap'"), std::string::npos) << m;
    EXPECT_NE(m.find("SG_STAGING_PROTOCOL=callbacks"), std::string::npos) << m;
    cudaGraph_t graph = nullptr;
    cudaStreamEndCapture(s, &graph);
    if (graph) cudaGraphDestroy(graph);
    cudaGetLastError();
  }
  cudaStreamDestroy(s);
  EXPECT_EQ(c.checked.load(), 0);
}

}  // namespace
