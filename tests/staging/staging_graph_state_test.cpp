// Graph mode's prepared states (staging.h, persistent regime), driven the
// way the CUDA backend drives them on sg_exec_set_copy: prepare the new
// parameters, keep the old state until the graph no longer uses it, then
// collect. A staged copy's ring serves every copy of its size and
// direction, whatever its addresses (the pageable side is handed over per
// launch), so a pipeline that feeds a fresh pageable buffer per batch, or
// binds other device buffers, keeps one ring per copy: no new ring, no
// rebuild, and the pool holds one ring per staged copy however many
// addresses pass through it. Only another size or direction, or another
// route (a registration), needs another state.
#include <cstring>
#include <string>
#include <vector>

#include "graph_states_shim.h"
#include "sg_test_util.h"
#include "staging_internal.h"

namespace {

using sgstaging::host_pool_options;

constexpr size_t KiB = 1024, MiB = 1024 * 1024;
constexpr int kH2D = 1, kD2H = 0;

struct Fixture {
  sg_pinned_pool *pool = nullptr;
  gstest_staging *g = nullptr;
  std::vector<void *> device;
  Fixture(sg_staging_policy policy, uint32_t nodes) {
    sg_pinned_pool_options po = host_pool_options(64 * MiB, 4 * MiB);
    EXPECT_EQ(sg_pinned_pool_create(&po, &pool), SG_OK) << sg_last_error();
    EXPECT_EQ(gstest_create(policy, pool, nodes, &g), SG_OK) << sg_last_error();
  }
  ~Fixture() {
    gstest_destroy(g);
    for (void *p : device) sg_mem_free(p);
    EXPECT_EQ(sg_pinned_pool_destroy(pool), SG_OK) << sg_last_error();
  }
  void *device_buffer(size_t bytes) {
    void *p = nullptr;
    EXPECT_EQ(sg_mem_alloc(SG_BACKEND_HOST, SG_MEMORY_DEVICE, 0, bytes, &p), SG_OK);
    device.push_back(p);
    return p;
  }
  sg_pinned_pool_stats stats() const {
    sg_pinned_pool_stats s;
    EXPECT_EQ(sg_pinned_pool_get_stats(pool, &s), SG_OK);
    return s;
  }
  // As sg_exec_set_copy; counts a rebuild in `rebuilds`.
  void set(uint32_t index, int to_device, void *dev, void *host, size_t bytes, int *rebuilds) {
    int rebuilt = 0;
    ASSERT_EQ(gstest_set(g, index, to_device, dev, host, bytes, &rebuilt), SG_OK)
        << sg_last_error();
    *rebuilds += rebuilt;
  }
};

// The regression test of defect 2 (graph mode rebuilt whenever a staged
// copy's host pointer changed) and defect 3 (each new pointer took another
// persistent ring, until the pool was exhausted): 200 batches, each with a
// fresh pageable buffer on both copies and, every tenth, other device
// buffers: the same two rings throughout, no rebuild, and the pool holds
// exactly those two rings.
TEST(StagingGraphStates, ANewAddressKeepsTheRing) {
  sgtest::LeakCheck leaks;
  const size_t bytes = 300 * KiB + 7;
  Fixture f(SG_STAGING_STAGE, 2);
  void *dev_in = f.device_buffer(bytes), *dev_out = f.device_buffer(bytes);
  std::vector<uint8_t> in0(bytes), out0(bytes);
  SG_ASSERT_OK(gstest_add(f.g, 0, kH2D, dev_in, in0.data(), bytes));
  SG_ASSERT_OK(gstest_add(f.g, 1, kD2H, dev_out, out0.data(), bytes));
  const void *reg = nullptr;
  ASSERT_EQ(gstest_route(f.g, 0, &reg), 1);
  ASSERT_EQ(gstest_route(f.g, 1, &reg), 1);
  const sg_pinned_pool_stats before = f.stats();
  EXPECT_EQ(before.acquisitions, 2u);
  int rebuilds = 0;
  for (int batch = 0; batch < 200; batch++) {
    std::vector<uint8_t> in(bytes), out(bytes); // a fresh pageable buffer per batch
    if (batch % 10 == 9) {
      dev_in = f.device_buffer(bytes);
      dev_out = f.device_buffer(bytes);
    }
    f.set(0, kH2D, dev_in, in.data(), bytes, &rebuilds);
    f.set(1, kD2H, dev_out, out.data(), bytes, &rebuilds);
  }
  EXPECT_EQ(rebuilds, 0) << "a new pageable or device address must not need another ring";
  EXPECT_EQ(gstest_states(f.g, 0), 1u);
  EXPECT_EQ(gstest_states(f.g, 1), 1u);
  const sg_pinned_pool_stats after = f.stats();
  EXPECT_EQ(after.acquisitions, before.acquisitions) << "a new address took another ring";
  EXPECT_EQ(after.in_use_bytes, before.in_use_bytes);
  EXPECT_EQ(after.persistent_bytes, before.in_use_bytes);
  EXPECT_EQ(after.exhausted, 0u);
}

// Another size takes another ring (a rebuild), and once the graph uses it
// the old ring goes back: the pool never holds more than the rings the
// live graph and one update need. Another direction is another state too.
TEST(StagingGraphStates, AnotherSizeTakesAnotherRingAndTheOldOneGoes) {
  sgtest::LeakCheck leaks;
  Fixture f(SG_STAGING_STAGE, 1);
  void *dev = f.device_buffer(1 * MiB);
  std::vector<uint8_t> host(1 * MiB);
  SG_ASSERT_OK(gstest_add(f.g, 0, kH2D, dev, host.data(), 200 * KiB));
  const size_t one_ring = f.stats().in_use_bytes;
  int rebuilds = 0;
  f.set(0, kH2D, dev, host.data(), 700 * KiB, &rebuilds);
  EXPECT_EQ(rebuilds, 1);
  EXPECT_EQ(f.stats().in_use_bytes, one_ring) << "the old ring (the same geometry here) must go";
  f.set(0, kH2D, dev, host.data() + 5, 700 * KiB, &rebuilds);
  EXPECT_EQ(rebuilds, 1) << "the same size again: the same ring";
  f.set(0, kD2H, dev, host.data(), 700 * KiB, &rebuilds);
  EXPECT_EQ(rebuilds, 2);
  EXPECT_EQ(gstest_states(f.g, 0), 1u);
  EXPECT_EQ(f.stats().in_use_bytes, one_ring);
}

// Under REGISTER a registered state serves its own buffer: the same buffer
// with another device side keeps it, another buffer is another
// registration (a route change: rebuilt).
TEST(StagingGraphStates, ARegisteredStateServesItsOwnBuffer) {
  sgtest::LeakCheck leaks;
  const size_t bytes = 64 * KiB;
  Fixture f(SG_STAGING_REGISTER, 1);
  void *dev_a = f.device_buffer(bytes), *dev_b = f.device_buffer(bytes);
  // A spare page on each side: the pages a registration pins are the buffer's alone.
  std::vector<uint8_t> a(bytes + 3 * 4096), b(bytes + 3 * 4096);
  uint8_t *pa = a.data() + 4096, *pb = b.data() + 4096;
  SG_ASSERT_OK(gstest_add(f.g, 0, kH2D, dev_a, pa, bytes));
  const void *reg = nullptr;
  ASSERT_EQ(gstest_route(f.g, 0, &reg), 2);
  EXPECT_EQ(reg, pa);
  int rebuilds = 0;
  f.set(0, kH2D, dev_b, pa, bytes, &rebuilds);
  EXPECT_EQ(rebuilds, 0) << "the same buffer, another device side";
  f.set(0, kH2D, dev_b, pb, bytes, &rebuilds);
  EXPECT_EQ(rebuilds, 1) << "another buffer, another registration";
  EXPECT_EQ(gstest_route(f.g, 0, &reg), 2);
  EXPECT_EQ(reg, pb);
  EXPECT_EQ(gstest_states(f.g, 0), 1u) << "the old registration goes with its state";
}

}  // namespace
