// The defaults a staged copy gets (tuning.h) and the routes a policy allows
// (policy.h), as pure functions: the chunk size adapts to the copy (few
// chunks for small copies, large ones for large copies, never above the
// cap), copy threads follow the CPU count, and no copy built into a CUDA
// graph takes the driver's pageable path.
#include <vector>

#include "sg_test_util.h"
#include "staging_internal.h"

namespace {

constexpr size_t KiB = 1024, MiB = 1024 * 1024;

size_t chunks_of(size_t bytes, size_t chunk) { return (bytes + chunk - 1) / chunk; }

TEST(StagingTuning, ChunkSizesOfTheBenchmarkCases) {
  // The cases staging_bench measures, and what the rule of tuning.h gives.
  EXPECT_EQ(sg__stage_auto_chunk(1, 64 * MiB), 11186176u);  // 10.7 MiB, 6 chunks
  EXPECT_EQ(chunks_of(64 * MiB, sg__stage_auto_chunk(1, 64 * MiB)), 6u);
  EXPECT_EQ(sg__stage_auto_chunk(0, 64 * MiB), 16 * MiB);   // 4 chunks
  EXPECT_EQ(sg__stage_auto_chunk(1, 1024 * MiB), 16 * MiB);
  EXPECT_EQ(sg__stage_auto_chunk(0, 1024 * MiB), 16 * MiB);
}

// The memop protocol pays less per chunk than a callback: chunks no larger,
// so its pipeline fills and drains sooner; nothing goes below 1 MiB or
// above the long chunk of 4 MiB.
TEST(StagingTuning, MemopChunksAreSmaller) {
  for (int to_device : {0, 1})
    for (size_t bytes : {4 * MiB, 64 * MiB, 256 * MiB}) {
      size_t m = sg__stage_auto_chunk_memops(to_device, bytes);
      EXPECT_LE(m, sg__stage_auto_chunk(to_device, bytes)) << bytes;
      EXPECT_GE(m, SG__STAGE_MIN_AUTO_CHUNK) << bytes;
      EXPECT_LE(m, SG__STAGE_MEMOPS_LONG_CHUNK) << bytes;
    }
  EXPECT_EQ(chunks_of(4 * MiB, sg__stage_auto_chunk_memops(1, 4 * MiB)), 3u);
  EXPECT_EQ(chunks_of(4 * MiB, sg__stage_auto_chunk_memops(0, 4 * MiB)), 2u);
  EXPECT_EQ(sg__stage_auto_chunk_memops(1, 64 * MiB), 4 * MiB);
  EXPECT_EQ(sg__stage_auto_chunk_memops(0, 64 * MiB), 4 * MiB);
  EXPECT_EQ(sg__stage_auto_chunk_memops(1, 1024 * MiB), 4 * MiB);
  EXPECT_EQ(sg__stage_auto_chunk_memops(1, size_t(64) << 30), 4 * MiB);
  EXPECT_EQ(sg__stage_auto_chunk_memops(0, 1 * MiB), 1 * MiB);
}

// A memop copy is long exactly where its adaptive chunk reaches the 4 MiB
// cap: host->device from about 31 MiB, device->host from about 10 MiB.
TEST(StagingTuning, LongMemopCopiesAreWhereTheChunkIsCapped) {
  for (int to_device : {0, 1}) {
    size_t first = 0;
    for (size_t bytes = 1 * MiB; bytes <= 64 * MiB && !first; bytes += 64 * KiB)
      if (sg__stage_memops_long(to_device, bytes)) first = bytes;
    ASSERT_NE(first, 0u) << to_device;
    EXPECT_EQ(first, to_device ? 30 * MiB + 960 * KiB : 10 * MiB + 192 * KiB) << to_device;
    EXPECT_FALSE(sg__stage_memops_long(to_device, first - 64 * KiB));
    EXPECT_TRUE(sg__stage_memops_long(to_device, SIZE_MAX));
  }
  // Half the CPUs, at most 8, at least 1.
  EXPECT_EQ(sg__stage_memops_long_threads(1), 1u);
  EXPECT_EQ(sg__stage_memops_long_threads(2), 1u);
  EXPECT_EQ(sg__stage_memops_long_threads(6), 3u);
  EXPECT_EQ(sg__stage_memops_long_threads(16), 8u);
  EXPECT_EQ(sg__stage_memops_long_threads(128), 8u);
}

// AUTO's threshold before the protocol is known is the memop default of the
// direction (staging.c): it must not be above the callback default, or a
// copy the callbacks would stage could miss the pool.
TEST(StagingTuning, AutoThresholdsByProtocolAndDirection) {
  EXPECT_EQ(sg__stage_auto_min_bytes(0, 1), SG__STAGE_AUTO_MIN_CALLBACKS);
  EXPECT_EQ(sg__stage_auto_min_bytes(0, 0), SG__STAGE_AUTO_MIN_CALLBACKS);
  EXPECT_EQ(sg__stage_auto_min_bytes(1, 1), SG__STAGE_AUTO_MIN_MEMOPS_H2D);
  EXPECT_EQ(sg__stage_auto_min_bytes(1, 0), SG__STAGE_AUTO_MIN_MEMOPS_D2H);
  for (int to_device : {0, 1})
    EXPECT_LE(sg__stage_auto_min_bytes(1, to_device), sg__stage_auto_min_bytes(0, to_device));
}

TEST(StagingTuning, SmallCopiesAreFewChunks) {
  for (int to_device : {0, 1}) {
    EXPECT_EQ(sg__stage_auto_chunk(to_device, 1), 1u);
    EXPECT_EQ(sg__stage_auto_chunk(to_device, 4095), 4095u);
    EXPECT_EQ(sg__stage_auto_chunk(to_device, 1 * MiB), 1 * MiB);
    EXPECT_EQ(sg__stage_auto_chunk(to_device, 1 * MiB + 1), 1 * MiB + 1) << "one chunk";
  }
  EXPECT_EQ(chunks_of(8 * MiB, sg__stage_auto_chunk(1, 8 * MiB)), 2u);
  EXPECT_EQ(chunks_of(8 * MiB, sg__stage_auto_chunk(0, 8 * MiB)), 1u);
  EXPECT_EQ(chunks_of(32 * MiB, sg__stage_auto_chunk(1, 32 * MiB)), 4u);
  EXPECT_EQ(chunks_of(32 * MiB, sg__stage_auto_chunk(0, 32 * MiB)), 3u);
}

// Over sizes from a byte to 64 GiB: within the bounds, whole pages unless
// one chunk, never fewer chunks for a larger copy, the count growing like
// the square root of the size below the cap (4x the bytes, 2x the chunks),
// and device->host never cut finer than host->device (it pays more per
// chunk).
TEST(StagingTuning, ChunkSizeGrowsWithTheCopy) {
  std::vector<size_t> sizes;
  for (size_t b = 1; b <= (size_t(64) << 30); b = b * 5 / 4 + 4093) sizes.push_back(b);
  for (int to_device : {0, 1}) {
    size_t last_chunks = 0;
    for (size_t b : sizes) {
      size_t c = sg__stage_auto_chunk(to_device, b);
      ASSERT_GE(c, 1u) << b;
      ASSERT_LE(c, b) << b;
      ASSERT_LE(c, SG__STAGE_MAX_AUTO_CHUNK) << b;
      size_t n = chunks_of(b, c);
      if (n > 1) {
        EXPECT_EQ(c % 4096, 0u) << b;
        EXPECT_GE(c, SG__STAGE_MIN_AUTO_CHUNK / 2) << b;
      }
      EXPECT_GE(n, last_chunks) << b;
      last_chunks = n;
      EXPECT_GE(sg__stage_auto_chunk(0, b), sg__stage_auto_chunk(1, b)) << b;
    }
    for (size_t b = 4 * MiB; b <= 16 * MiB; b += MiB) {
      size_t n1 = chunks_of(b, sg__stage_auto_chunk(to_device, b));
      size_t n4 = chunks_of(4 * b, sg__stage_auto_chunk(to_device, 4 * b));
      EXPECT_LE(n4, 2 * n1 + 1) << b;
      EXPECT_GE(n4 + 1, 2 * n1) << b;
    }
  }
}

TEST(StagingTuning, EvenChunksWithoutATinyTail) {
  for (size_t b : {3 * MiB + 17, 13 * MiB + 4093, 100 * MiB + 1, 333 * MiB}) {
    for (int to_device : {0, 1}) {
      size_t c = sg__stage_auto_chunk(to_device, b);
      size_t n = chunks_of(b, c);
      size_t tail = b - (n - 1) * c;
      EXPECT_GE(tail + 4096 * n, c / 2) << b << " " << to_device;
    }
  }
}

TEST(StagingTuning, CopyThreadsFollowTheCpus) {
  const size_t small = 64 * MiB, large = SG__STAGE_ALL_THREADS_BYTES;
  for (int to_device : {0, 1}) {
    EXPECT_EQ(sg__stage_default_threads(to_device, small, 1), 1u);
    EXPECT_EQ(sg__stage_default_threads(to_device, small, 2), 1u);  // CI
    EXPECT_EQ(sg__stage_default_threads(to_device, small, 3), 2u);
    EXPECT_EQ(sg__stage_default_threads(to_device, small, 8), 6u);
    EXPECT_EQ(sg__stage_default_threads(to_device, small, 16), 12u); // the H200 host
    EXPECT_EQ(sg__stage_default_threads(to_device, small, 17), 12u);
    EXPECT_EQ(sg__stage_default_threads(to_device, small, 128), 12u);
    // Large copies take every CPU, at most 16.
    EXPECT_EQ(sg__stage_default_threads(to_device, large - 1, 16), 12u);
    EXPECT_EQ(sg__stage_default_threads(to_device, large, 1), 1u);
    EXPECT_EQ(sg__stage_default_threads(to_device, large, 2), 2u);
    EXPECT_EQ(sg__stage_default_threads(to_device, large, 16), 16u);
    EXPECT_EQ(sg__stage_default_threads(to_device, SIZE_MAX, 128), 16u);
  }
}

// Host->device copies up to 128 MiB write their slots with non-temporal
// stores; larger ones and every device->host copy use memcpy.
TEST(StagingTuning, NonTemporalStoresByDirectionAndSize) {
  EXPECT_EQ(sg__stage_nontemporal_default(1, 1), 1);
  EXPECT_EQ(sg__stage_nontemporal_default(1, 64 * MiB), 1);
  EXPECT_EQ(sg__stage_nontemporal_default(1, SG__STAGE_NONTEMPORAL_MAX_BYTES), 1);
  EXPECT_EQ(sg__stage_nontemporal_default(1, SG__STAGE_NONTEMPORAL_MAX_BYTES + 1), 0);
  EXPECT_EQ(sg__stage_nontemporal_default(1, 256 * MiB), 0);
  EXPECT_EQ(sg__stage_nontemporal_default(1, 1024 * MiB), 0);
  for (size_t bytes : {size_t(1), 64 * MiB, 1024 * MiB})
    EXPECT_EQ(sg__stage_nontemporal_default(0, bytes), 0) << bytes;
}

// The geometry a copy then gets: the ring holds min(ring depth, chunks)
// slots of whole pages.
TEST(StagingTuning, GeometryOfAnAdaptiveChunk) {
  sg__stage_geometry g;
  sg__stage_geometry_make(64 * MiB, sg__stage_auto_chunk(0, 64 * MiB), 4, 8, &g);
  EXPECT_EQ(g.chunk, 16 * MiB);
  EXPECT_EQ(g.chunks, 4u);
  EXPECT_EQ(g.ring, 4u);
  EXPECT_EQ(g.stride, 16 * MiB);
  sg__stage_geometry_make(8 * MiB, sg__stage_auto_chunk(0, 8 * MiB), 4, 8, &g);
  EXPECT_EQ(g.chunks, 1u);
  EXPECT_EQ(g.ring, 1u);
  sg__stage_geometry_make(5 * KiB, sg__stage_auto_chunk(1, 5 * KiB), 4, 8, &g);
  EXPECT_EQ(g.chunks, 1u);
  EXPECT_EQ(g.stride, 8 * KiB);
}

// ---- policy.h -------------------------------------------------------------

constexpr size_t kMin = 1 * MiB;

TEST(StagingPolicy, HardwareFindingNoPageableMemcpyNodeInAGraph) {
  for (sg_staging_policy p : {SG_STAGING_AUTO, SG_STAGING_STAGE, SG_STAGING_REGISTER,
                              SG_STAGING_NONE})
    for (size_t bytes : {size_t(1), kMin - 1, kMin, 64 * MiB})
      EXPECT_EQ(sg__staging_fallback(p, 1, 1, bytes, kMin), SG__ROUTE_STAGE)
          << "policy " << p << ", " << bytes << " bytes";
}

TEST(StagingPolicy, StreamsModeOnCuda) {
  EXPECT_EQ(sg__staging_fallback(SG_STAGING_NONE, 1, 0, 64 * MiB, kMin), SG__ROUTE_DIRECT);
  EXPECT_EQ(sg__staging_fallback(SG_STAGING_AUTO, 1, 0, kMin - 1, kMin), SG__ROUTE_DIRECT);
  EXPECT_EQ(sg__staging_fallback(SG_STAGING_AUTO, 1, 0, kMin, kMin), SG__ROUTE_STAGE);
  EXPECT_EQ(sg__staging_fallback(SG_STAGING_STAGE, 1, 0, 1, kMin), SG__ROUTE_STAGE);
  EXPECT_EQ(sg__staging_fallback(SG_STAGING_REGISTER, 1, 0, 1, kMin), SG__ROUTE_STAGE);
}

// The host backend's "DMA" is a memcpy in order: the graph rule is CUDA's.
TEST(StagingPolicy, HostBackendCopiesDirectlyUnlessAskedToStage) {
  for (int graph : {0, 1}) {
    EXPECT_EQ(sg__staging_fallback(SG_STAGING_NONE, 0, graph, 64 * MiB, kMin), SG__ROUTE_DIRECT);
    EXPECT_EQ(sg__staging_fallback(SG_STAGING_AUTO, 0, graph, 64 * MiB, kMin), SG__ROUTE_DIRECT);
    EXPECT_EQ(sg__staging_fallback(SG_STAGING_STAGE, 0, graph, 1, kMin), SG__ROUTE_STAGE);
    EXPECT_EQ(sg__staging_fallback(SG_STAGING_REGISTER, 0, graph, 1, kMin), SG__ROUTE_STAGE);
  }
}

TEST(StagingPolicy, WhoMayRegister) {
  EXPECT_TRUE(sg__staging_may_register(SG_STAGING_REGISTER, 1, kMin, 0, 3));
  EXPECT_FALSE(sg__staging_may_register(SG_STAGING_AUTO, 64 * MiB, kMin, 2, 3));
  EXPECT_TRUE(sg__staging_may_register(SG_STAGING_AUTO, 64 * MiB, kMin, 3, 3));
  EXPECT_FALSE(sg__staging_may_register(SG_STAGING_AUTO, kMin - 1, kMin, 9, 3)) << "small";
  EXPECT_FALSE(sg__staging_may_register(SG_STAGING_STAGE, 64 * MiB, kMin, 9, 3));
  EXPECT_FALSE(sg__staging_may_register(SG_STAGING_NONE, 64 * MiB, kMin, 9, 3));
}

// The one decision (sg__route_choose), over every combination of its facts:
// the route a copy takes without a registration is the policy's fallback;
// no pageable memcpy ever goes into a CUDA graph; STAGE and NONE never look
// for a registration; REGISTER pins unless the driver refused it; AUTO pins
// in the background only per launch, for a large copy seen register_after
// times in a row, and otherwise only uses a registration that exists.
TEST(StagingPolicy, TheOneDecisionOverEveryFact) {
  unsigned combos = 0;
  for (sg_staging_policy p :
       {SG_STAGING_AUTO, SG_STAGING_STAGE, SG_STAGING_REGISTER, SG_STAGING_NONE})
    for (int dma : {0, 1})
      for (int graph : {0, 1})
        for (size_t bytes : {size_t(1), kMin - 1, kMin, 64 * MiB})
          for (unsigned streak : {0u, 2u, 3u, 9u})
            for (int refused : {0, 1}) {
              const sg__route_facts f = {p, dma, graph, bytes, kMin, streak, 3, refused};
              const sg__route_choice c = sg__route_choose(&f);
              SCOPED_TRACE(::testing::Message() << "policy " << p << " dma " << dma << " graph "
                                                << graph << " bytes " << bytes << " streak "
                                                << streak << " refused " << refused);
              combos++;
              EXPECT_EQ(c.otherwise, sg__staging_fallback(p, dma, graph, bytes, kMin));
              if (dma && graph) EXPECT_EQ(c.otherwise, SG__ROUTE_STAGE);
              if (p == SG_STAGING_STAGE || p == SG_STAGING_NONE) EXPECT_EQ(c.reg, SG__REG_SKIP);
              if (p == SG_STAGING_REGISTER)
                EXPECT_EQ(c.reg, refused ? SG__REG_EXISTING : SG__REG_NOW);
              if (p == SG_STAGING_AUTO) {
                const bool pin = !graph && !refused && bytes >= kMin && streak >= 3;
                EXPECT_EQ(c.reg, pin ? SG__REG_BACKGROUND : SG__REG_EXISTING);
              }
            }
  EXPECT_EQ(combos, 4u * 2 * 2 * 4 * 4 * 2);
}

// Regression: the long copies' ring of 8 also applied to a chunk the
// caller chose, so 8 MiB chunks held 64 MiB per copy and a pipeline's
// instances exhausted the shared pinned pool. A chunk given for a long
// copy keeps the default ring.
TEST(StagingPolicy, ACallersChunkKeepsTheDefaultRing) {
  sg__stage_geometry g;
  sg__route_geometry(8 * MiB, 0, 0, 1, 1, 64 * MiB, 16, &g);
  EXPECT_EQ(g.chunk, 8 * MiB);
  EXPECT_EQ(g.ring, SG__STAGE_DEFAULT_RING);
  EXPECT_EQ(g.parts, 8u);
}

// A staged copy's geometry: the options win, zeros take tuning.h's
// defaults for the copy's size, direction and protocol.
TEST(StagingPolicy, GeometryFromOptionsOrDefaults) {
  sg__stage_geometry g;
  // A long memop copy: 4 MiB chunks, a ring of 8, half the CPUs.
  sg__route_geometry(0, 0, 0, 1, 1, 64 * MiB, 16, &g);
  EXPECT_EQ(g.chunk, 4 * MiB);
  EXPECT_EQ(g.chunks, 16u);
  EXPECT_EQ(g.ring, SG__STAGE_MEMOPS_LONG_RING);
  EXPECT_EQ(g.parts, 8u);
  // A short one: a ring of 4, three quarters of the CPUs.
  sg__route_geometry(0, 0, 0, 1, 0, 4 * MiB, 16, &g);
  EXPECT_EQ(g.chunk, sg__stage_auto_chunk_memops(0, 4 * MiB));
  EXPECT_EQ(g.ring, 2u); /* as many slots as chunks */
  EXPECT_EQ(g.parts, 12u);
  sg__route_geometry(0, 0, 0, 1, 1, 24 * MiB, 16, &g);
  EXPECT_EQ(g.ring, SG__STAGE_DEFAULT_RING);
  // The callback protocol has no long copies.
  sg__route_geometry(0, 0, 0, 0, 0, 64 * MiB, 16, &g);
  EXPECT_EQ(g.chunk, sg__stage_auto_chunk(0, 64 * MiB));
  EXPECT_EQ(g.ring, SG__STAGE_DEFAULT_RING);
  EXPECT_EQ(g.parts, sg__stage_default_threads(0, 64 * MiB, 16));
  // Each option given wins alone.
  sg__route_geometry(0, 3, 0, 1, 1, 64 * MiB, 16, &g);
  EXPECT_EQ(g.chunk, 4 * MiB);
  EXPECT_EQ(g.ring, 3u);
  EXPECT_EQ(g.parts, 8u);
  sg__route_geometry(1000, 2, 3, 1, 1, 100000, 16, &g);
  EXPECT_EQ(g.chunk, 1000u);
  EXPECT_EQ(g.chunks, 100u);
  EXPECT_EQ(g.ring, 2u);
  EXPECT_EQ(g.parts, 3u);
}

}  // namespace
