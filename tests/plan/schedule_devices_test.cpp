// The planner with nodes on several devices: a stream never crosses devices,
// the limit holds per device, and without a binding limit each device gets
// exactly as many streams as its nodes' width (checked against independent
// branch and bound and Kuhn's matching, paths through other devices
// included). Every plan is replayed by the checker of plan_check.h.
#include <climits>

#include "plan_check.h"

using plantest::Dag;
using plantest::Edges;
using plantest::Schedule;
using plantest::build_devices;
using plantest::check_schedule;

namespace {

constexpr unsigned kUnlimited = UINT_MAX;

std::vector<uint32_t> random_devices(std::mt19937 &rng, uint32_t n, uint32_t device_count) {
  std::vector<uint32_t> dev(n);
  // Sometimes contiguous blocks (stages of a pipeline), sometimes scattered.
  bool blocks = rng() % 2;
  for (uint32_t v = 0; v < n; v++)
    dev[v] = blocks ? (uint32_t)((uint64_t)v * device_count / std::max(n, 1u)) : rng() % device_count;
  return dev;
}

uint64_t mask_of(const std::vector<uint32_t> &dev, uint32_t d) {
  uint64_t m = 0;
  for (uint32_t v = 0; v < dev.size(); v++)
    if (dev[v] == d) m |= uint64_t{1} << v;
  return m;
}

std::vector<uint32_t> streams_per_device(const sg__schedule &s) {
  std::vector<uint32_t> count(s.device_count, 0);
  for (uint32_t k = 0; k < s.stream_count; k++) count[s.stream_device[k]]++;
  return count;
}

plantest::CheckOptions with_devices(const std::vector<uint32_t> &dev) {
  plantest::CheckOptions opt;
  opt.devices = &dev;
  return opt;
}

TEST(ScheduleDevices, UnlimitedStreamsEqualEachDevicesWidth) {
  for (uint32_t seed = 1; seed <= 2000; seed++) {
    std::mt19937 rng(seed * 31u);
    uint32_t n = 1 + rng() % 16, devices = 1 + rng() % 4;
    Dag d = plantest::random_dag(rng, n, std::uniform_real_distribution<double>(0, 0.6)(rng));
    std::vector<uint32_t> dev = random_devices(rng, n, devices);
    Schedule s;
    ASSERT_EQ(build_devices(d, dev, devices, kUnlimited, s), SG_OK) << sg_last_error();
    ASSERT_EQ(s->device_count, devices) << "seed " << seed;
    std::vector<uint32_t> per = streams_per_device(s.s);
    uint32_t total = 0;
    for (uint32_t k = 0; k < devices; k++) {
      uint32_t width = plantest::brute_width_of(d, mask_of(dev, k));
      ASSERT_EQ(per[k], width) << "seed " << seed << " device " << k;
      total += width;
    }
    ASSERT_EQ(s->width, total) << "seed " << seed;
    ASSERT_TRUE(s->width_exact) << "seed " << seed;
    ASSERT_TRUE(s->waits_exact) << "seed " << seed;
    if (seed % 2 == 0) {
      check_schedule(d, s.s, kUnlimited, with_devices(dev));
      if (HasFatalFailure()) FAIL() << "seed " << seed;
    }
  }
}

TEST(ScheduleDevices, RandomLimitsHoldPerDevice) {
  for (uint32_t seed = 1; seed <= 1000; seed++) {
    std::mt19937 rng(seed * 6007u);
    uint32_t n = 1 + rng() % 16, devices = 2 + rng() % 3;
    Dag d = plantest::random_dag(rng, n, std::uniform_real_distribution<double>(0, 0.5)(rng));
    std::vector<uint32_t> dev = random_devices(rng, n, devices);
    unsigned limit = 1 + rng() % 4;
    Schedule s;
    ASSERT_EQ(build_devices(d, dev, devices, limit, s), SG_OK) << sg_last_error();
    check_schedule(d, s.s, limit, with_devices(dev));
    if (HasFatalFailure()) FAIL() << "seed " << seed << " limit " << limit;
    std::vector<uint32_t> per = streams_per_device(s.s);
    for (uint32_t k = 0; k < devices; k++)
      ASSERT_EQ(per[k], std::min<uint32_t>(limit, plantest::brute_width_of(d, mask_of(dev, k))))
          << "seed " << seed << " device " << k;
  }
}

TEST(ScheduleDevices, MediumDagsMatchKuhnsMatchingPerDevice) {
  for (uint32_t seed = 1; seed <= 40; seed++) {
    std::mt19937 rng(seed * 104723u);
    uint32_t n = 40 + rng() % 120, devices = 2 + rng() % 3;
    Dag d = plantest::random_dag(rng, n, 2.5 / n + 0.05 * (rng() % 3));
    std::vector<uint32_t> dev = random_devices(rng, n, devices);
    Schedule s;
    ASSERT_EQ(build_devices(d, dev, devices, kUnlimited, s), SG_OK) << sg_last_error();
    std::vector<uint32_t> per = streams_per_device(s.s);
    for (uint32_t k = 0; k < devices; k++) {
      std::vector<char> in(n);
      for (uint32_t v = 0; v < n; v++) in[v] = dev[v] == k;
      ASSERT_EQ(per[k], plantest::matching_width_of(d, in)) << "seed " << seed << " device " << k;
    }
    ASSERT_TRUE(s->width_exact);
    plantest::CheckOptions opt = with_devices(dev);
    opt.minimality = n <= 80;
    check_schedule(d, s.s, kUnlimited, opt);
    if (HasFatalFailure()) FAIL() << "seed " << seed;
  }
}

TEST(ScheduleDevices, FallbacksStayValid) {
  // Zero budgets force every fallback: covers cut short, the reduction and
  // the waits by their cheap methods, merging by intervals.
  sg__plan_limits tiny{};
  for (uint32_t seed = 1; seed <= 300; seed++) {
    std::mt19937 rng(seed * 7u);
    uint32_t n = 2 + rng() % 30, devices = 2 + rng() % 3;
    Dag d = plantest::random_dag(rng, n, 0.3);
    std::vector<uint32_t> dev = random_devices(rng, n, devices);
    unsigned limit = seed % 2 ? kUnlimited : 1 + rng() % 3;
    Schedule s;
    ASSERT_EQ(build_devices(d, dev, devices, limit, s, &tiny), SG_OK) << sg_last_error();
    plantest::CheckOptions opt = with_devices(dev);
    opt.minimality = false;
    check_schedule(d, s.s, limit, opt);
    if (HasFatalFailure()) FAIL() << "seed " << seed;
  }
}

TEST(ScheduleDevices, OneDeviceGivesTheSingleDevicePlan) {
  for (uint32_t seed = 1; seed <= 200; seed++) {
    std::mt19937 rng(seed);
    uint32_t n = 1 + rng() % 40;
    Dag d = plantest::random_dag(rng, n, 0.2);
    std::vector<uint32_t> zero(n, 0);
    Schedule a, b, c;
    ASSERT_EQ(plantest::build(d, 4, a), SG_OK);
    ASSERT_EQ(build_devices(d, zero, 1, 4, b), SG_OK);
    // every node on device 2 of 3: one device in use, numbered as given
    std::vector<uint32_t> two(n, 2);
    ASSERT_EQ(build_devices(d, two, 3, 4, c), SG_OK);
    ASSERT_EQ(a->stream_count, b->stream_count);
    ASSERT_EQ(a->stream_count, c->stream_count);
    ASSERT_EQ(a->wait_count, c->wait_count);
    for (uint32_t v = 0; v < n; v++) {
      ASSERT_EQ(a->stream_of[v], b->stream_of[v]) << "seed " << seed;
      ASSERT_EQ(a->stream_of[v], c->stream_of[v]) << "seed " << seed;
    }
    for (uint32_t k = 0; k < c->stream_count; k++) ASSERT_EQ(c->stream_device[k], 2u);
    for (uint32_t k = 0; k < a->stream_count; k++) ASSERT_EQ(a->stream_device[k], 0u);
  }
}

TEST(ScheduleDevices, AlternatingChainNeedsAnEventPerHop) {
  // 0 -> 1 -> 2 -> 3 -> 4 -> 5 on devices 0,1,0,1,0,1: one stream per device,
  // and every edge crosses devices, so each needs its own wait.
  Edges e;
  for (uint32_t v = 0; v + 1 < 6; v++) e.emplace_back(v, v + 1);
  Dag d(6, e);
  std::vector<uint32_t> dev{0, 1, 0, 1, 0, 1};
  Schedule s;
  ASSERT_EQ(build_devices(d, dev, 2, kUnlimited, s), SG_OK) << sg_last_error();
  EXPECT_EQ(s->stream_count, 2u);
  EXPECT_EQ(s->event_count, 5u);
  EXPECT_EQ(s->wait_count, 5u);
  EXPECT_EQ(s->stream_device[0], 0u);
  EXPECT_EQ(s->stream_device[1], 1u);
  check_schedule(d, s.s, kUnlimited, with_devices(dev));
}

TEST(ScheduleDevices, TwoStagePipelineOverTwoDevices) {
  // Per batch b: upload_b -> stage1_b (device 0) -> move_b -> stage2_b ->
  // download_b (device 1), batches independent: a stream per batch on each
  // device, and the device-0 -> device-1 hop the only events.
  const uint32_t batches = 3;
  Edges e;
  std::vector<uint32_t> dev;
  for (uint32_t b = 0; b < batches; b++) {
    uint32_t base = b * 5;
    for (uint32_t k = 0; k + 1 < 5; k++) e.emplace_back(base + k, base + k + 1);
    dev.insert(dev.end(), {0, 0, 0, 1, 1});
  }
  Dag d(batches * 5, e);
  Schedule s;
  ASSERT_EQ(build_devices(d, dev, 2, kUnlimited, s), SG_OK) << sg_last_error();
  std::vector<uint32_t> per = streams_per_device(s.s);
  EXPECT_EQ(per[0], batches);
  EXPECT_EQ(per[1], batches);
  EXPECT_EQ(s->wait_count, batches);
  check_schedule(d, s.s, kUnlimited, with_devices(dev));
  // the limit holds on each device: 2 streams each
  Schedule lim;
  ASSERT_EQ(build_devices(d, dev, 2, 2, lim), SG_OK) << sg_last_error();
  per = streams_per_device(lim.s);
  EXPECT_EQ(per[0], 2u);
  EXPECT_EQ(per[1], 2u);
  check_schedule(d, lim.s, 2, with_devices(dev));
}

TEST(ScheduleDevices, ChainsJumpThroughOtherDevices) {
  // a (dev 0) -> x (dev 1) -> b (dev 0): a and b are ordered only through x,
  // so device 0 needs one stream, not two.
  Dag d(3, {{0, 1}, {1, 2}});
  std::vector<uint32_t> dev{0, 1, 0};
  Schedule s;
  ASSERT_EQ(build_devices(d, dev, 2, kUnlimited, s), SG_OK) << sg_last_error();
  EXPECT_EQ(s->stream_count, 2u);
  EXPECT_EQ(s->stream_of[0], s->stream_of[2]);
  check_schedule(d, s.s, kUnlimited, with_devices(dev));
}

TEST(ScheduleDevices, EdgesOnlyScheduleAgreesWithTheFullOne) {
  for (uint32_t seed = 1; seed <= 100; seed++) {
    std::mt19937 rng(seed * 13u);
    uint32_t n = 1 + rng() % 30, devices = 1 + rng() % 3;
    Dag d = plantest::random_dag(rng, n, 0.25);
    std::vector<uint32_t> dev = random_devices(rng, n, devices);
    Schedule full, edges;
    ASSERT_EQ(build_devices(d, dev, devices, 3, full), SG_OK);
    ASSERT_EQ(sg__schedule_build_edges_devices(d.n, d.start.data(), d.succ.data(), dev.data(),
                                               devices, 3, &edges.s),
              SG_OK);
    EXPECT_FALSE(edges->streams_planned);
    EXPECT_EQ(edges->width, full->width) << "seed " << seed;
    for (uint32_t i = 0; i < n; i++) ASSERT_EQ(edges->order[i], full->order[i]);
    ASSERT_EQ(edges->reduced_edge_count, full->reduced_edge_count);
  }
}

TEST(ScheduleDevices, BadDevicesAreRefused) {
  Dag d(3, {{0, 1}});
  std::vector<uint32_t> dev{0, 2, 1};
  Schedule s;
  EXPECT_EQ(build_devices(d, dev, 2, 4, s), SG_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(sg_last_error()).find("node 1 is on device 2"), std::string::npos)
      << sg_last_error();
  EXPECT_EQ(s->order, nullptr);
  Schedule z;
  EXPECT_EQ(build_devices(d, dev, 0, 4, z), SG_ERR_INVALID_ARGUMENT);
  Schedule big;
  EXPECT_EQ(build_devices(d, dev, SG__PLAN_MAX_DEVICES + 1, 4, big), SG_ERR_INVALID_ARGUMENT);
}

TEST(ScheduleDevices, EveryAllocationFailureIsReportedAndFreed) {
  std::mt19937 rng(99);
  Dag d = plantest::random_dag(rng, 40, 0.15);
  std::vector<uint32_t> dev = random_devices(rng, 40, 3);
  for (unsigned limit : {kUnlimited, 2u}) {
    Schedule reference;
    ASSERT_EQ(build_devices(d, dev, 3, limit, reference), SG_OK) << sg_last_error();
    long live = sg_live_allocations();
    for (unsigned long nth = 1;; nth++) {
      ASSERT_LT(nth, 10000u) << "the fault never stops firing";
      Schedule s;
      sg_fault_arm(SG_FAULT_ALLOC, nth);
      sg_status st = build_devices(d, dev, 3, limit, s);
      bool fired = sg_fault_fired();
      sg_fault_arm(SG_FAULT_ALL, 0);
      if (!fired) {
        ASSERT_EQ(st, SG_OK) << sg_last_error();
        EXPECT_EQ(s->stream_count, reference->stream_count);
        EXPECT_EQ(s->wait_count, reference->wait_count);
        break;
      }
      ASSERT_EQ(st, SG_ERR_OUT_OF_MEMORY) << "allocation " << nth;
      EXPECT_EQ(s->order, nullptr);
      ASSERT_EQ(sg_live_allocations(), live) << "leak after failing allocation " << nth;
    }
  }
}

}  // namespace
