// Defect 1 (GPU): copies re-pointed into pages that a registration pins.
//
// A registration pins whole pages, so it also pins the first bytes of the
// buffer that follows its own in memory (as two malloc'ed buffers often lie).
// Such a neighbour is "pinned" to the driver for its first bytes and
// pageable after them, and the driver refuses a copy over a range that is
// only partly registered (cudaErrorInvalidValue). The host buffers here are
// laid out so that this always happens: A (a registered upload source) and
// B (a download destination) share a page. Every update path - the same
// pointer again, a detour to another buffer and back, sg_exec_update with a
// new node into B - must leave the executable launchable and correct, in
// every mode and staging policy; and so must a small AUTO copy next to a
// registered buffer.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "sg_test_util.h"

namespace {

constexpr size_t kPage = 4096;
constexpr size_t kBytes = 1200 * 1000;  // not a multiple of the page size

struct Way {
  const char *name;
  sg_exec_mode mode;
  sg_graph_build build;
  sg_staging_policy policy;
};

void PrintTo(const Way &w, std::ostream *os) { *os << w.name; }

const Way kWays[] = {
    {"streams_register", SG_MODE_STREAMS, SG_BUILD_EXPLICIT, SG_STAGING_REGISTER},
    {"streams_auto", SG_MODE_STREAMS, SG_BUILD_EXPLICIT, SG_STAGING_AUTO},
    {"streams_stage", SG_MODE_STREAMS, SG_BUILD_EXPLICIT, SG_STAGING_STAGE},
    {"streams_none", SG_MODE_STREAMS, SG_BUILD_EXPLICIT, SG_STAGING_NONE},
    {"graph_explicit_register", SG_MODE_GRAPH, SG_BUILD_EXPLICIT, SG_STAGING_REGISTER},
    {"graph_explicit_auto", SG_MODE_GRAPH, SG_BUILD_EXPLICIT, SG_STAGING_AUTO},
    {"graph_capture_register", SG_MODE_GRAPH, SG_BUILD_CAPTURE, SG_STAGING_REGISTER},
    {"graph_capture_stage", SG_MODE_GRAPH, SG_BUILD_CAPTURE, SG_STAGING_STAGE},
};

// Pageable host memory laid out on purpose: one page-aligned block (plain
// aligned_alloc: never pinned by anyone but the library under test).
struct Layout {
  uint8_t *block = nullptr;
  uint8_t *a = nullptr;      // the upload's source, at an odd offset
  uint8_t *b = nullptr;      // the download's destination: starts in A's last page
  uint8_t *c = nullptr;      // a detour, pages away from both
  uint8_t *tail = nullptr;   // small AUTO copies: from A's last page into the next
  Layout() {
    size_t size = 8 * kBytes;
    block = static_cast<uint8_t *>(std::aligned_alloc(kPage, size));
    a = block + 64 + 7;
    b = a + kBytes + 16;
    c = block + 4 * kBytes + 3;
    tail = a + kBytes + 24;
    EXPECT_EQ((reinterpret_cast<uintptr_t>(a + kBytes - 1) & ~(kPage - 1)),
              (reinterpret_cast<uintptr_t>(b) & ~(kPage - 1)))
        << "A's last page must be B's first";
  }
  ~Layout() { std::free(block); }
};

struct Pool {
  sg_pinned_pool *p = nullptr;
  Pool() {
    sg_pinned_pool_options o;
    sg_pinned_pool_options_init(&o);
    o.backend = SG_BACKEND_CUDA;
    o.max_bytes = 128u << 20;
    SG_EXPECT_OK(sg_pinned_pool_create(&o, &p));
  }
  ~Pool() {
    if (p) SG_EXPECT_OK(sg_pinned_pool_destroy(p));
  }
};

std::string registrations() {
  sg_registration_stats r;
  if (sg_registration_get_stats(SG_BACKEND_CUDA, &r) != SG_OK) return "?";
  return "registration cache: " + std::to_string(r.buffers) + " buffers, " +
         std::to_string(r.registrations) + " registrations, " + std::to_string(r.refusals) +
         " refusals";
}

class Defect1 : public ::testing::TestWithParam<Way> {
 protected:
  void SetUp() override {
    if (sg_cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
    ASSERT_EQ(sg_mem_alloc(SG_BACKEND_CUDA, SG_MEMORY_DEVICE, 0, kBytes, &dev), SG_OK)
        << sg_last_error();
  }
  void TearDown() override {
    if (dev) sg_mem_free(dev);
  }

  sg_exec_options options(sg_pinned_pool *pool, unsigned max_streams = 0) const {
    sg_exec_options o;
    sg_exec_options_init(&o);
    o.backend = SG_BACKEND_CUDA;
    o.mode = GetParam().mode;
    o.build = GetParam().build;
    o.max_streams = max_streams;
    o.staging.policy = GetParam().policy;
    o.staging.pool = pool;
    o.staging.auto_register_after = 1;
    return o;
  }

  // Fresh data in A, poison in `out`; one launch; `out` must equal A.
  void launch_and_check(sg_exec *e, uint8_t *out, size_t bytes, const char *step) {
    std::mt19937 rng(++launches * 7919u);
    for (size_t i = 0; i < bytes; i++) layout.a[i] = static_cast<uint8_t>(rng());
    std::memset(out, 0xA5, bytes);
    sg_status st = sg_exec_launch(e, nullptr);
    ASSERT_EQ(st, SG_OK) << step << ": sg_exec_launch: " << sg_status_name(st) << ": "
                         << sg_last_error() << " (" << registrations() << ")";
    st = sg_exec_wait(e);
    ASSERT_EQ(st, SG_OK) << step << ": sg_exec_wait: " << sg_status_name(st) << ": "
                         << sg_last_error() << " (" << registrations() << ")";
    for (size_t i = 0; i < bytes; i++)
      ASSERT_EQ(out[i], layout.a[i]) << step << ": byte " << i << " of the destination";
  }

  Layout layout;
  void *dev = nullptr;
  unsigned launches = 0;
};

// up: A -> dev (registered under REGISTER, and under AUTO once seen again);
// down: dev -> B, B's first bytes in A's last page. Then B again (the same
// pointer), a detour to C and back to B, and sg_exec_update with a graph
// whose new node also downloads into B.
TEST_P(Defect1, RepointedCopiesIntoPagesARegistrationPins) {
  Pool pool;
  sgtest::Graph g;
  sg_node up{}, down{};
  sg_copy_desc u = {dev, layout.a, kBytes, SG_COPY_HOST_TO_DEVICE, "up"};
  SG_ASSERT_OK(sg_graph_add_copy(g, &u, nullptr, 0, &up));
  sg_copy_desc d = {layout.b, dev, kBytes, SG_COPY_DEVICE_TO_HOST, "down"};
  SG_ASSERT_OK(sg_graph_add_copy(g, &d, &up, 1, &down));
  sg_exec_options o = options(pool.p);
  sgtest::Exec e;
  SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
  for (int i = 0; i < 3; i++) launch_and_check(e, layout.b, kBytes, "first launches");
  if (HasFatalFailure()) return;

  sg_copy_desc same = {layout.b, dev, kBytes, SG_COPY_DEVICE_TO_HOST, "down alt"};
  SG_ASSERT_OK(sg_exec_set_copy(e, down, &same));
  launch_and_check(e, layout.b, kBytes, "the same pointer again");
  if (HasFatalFailure()) return;

  sg_copy_desc detour = {layout.c, dev, kBytes, SG_COPY_DEVICE_TO_HOST, "down alt"};
  SG_ASSERT_OK(sg_exec_set_copy(e, down, &detour));
  launch_and_check(e, layout.c, kBytes, "the detour");
  if (HasFatalFailure()) return;
  SG_ASSERT_OK(sg_exec_set_copy(e, down, &same));
  launch_and_check(e, layout.b, kBytes, "back after the detour");
  if (HasFatalFailure()) return;

  // The graph follows: `down` into C, and a new node into B.
  SG_ASSERT_OK(sg_graph_set_copy(g, down, &detour));
  sg_node late{};
  sg_copy_desc l = {layout.b, dev, kBytes, SG_COPY_DEVICE_TO_HOST, "down late"};
  SG_ASSERT_OK(sg_graph_add_copy(g, &l, &up, 1, &late));
  SG_ASSERT_OK(sg_exec_update(e, g));
  launch_and_check(e, layout.b, kBytes, "sg_exec_update with a new node into B");
  if (HasFatalFailure()) return;
  for (size_t i = 0; i < kBytes; i++)
    ASSERT_EQ(layout.c[i], layout.a[i]) << "the updated `down` (into C), byte " << i;
}

// AUTO with one stream: the upload from A registers after one launch; a
// small download into `tail`, which starts in A's last page and ends in the
// next one, takes the driver's path for small copies.
TEST_P(Defect1, SmallCopyAcrossARegisteredPageBoundary) {
  Pool pool;
  sgtest::Graph g;
  sg_node up{}, small{};
  sg_copy_desc u = {dev, layout.a, kBytes, SG_COPY_HOST_TO_DEVICE, "up"};
  SG_ASSERT_OK(sg_graph_add_copy(g, &u, nullptr, 0, &up));
  const size_t n = 2 * kPage;
  sg_copy_desc s = {layout.tail, dev, n, SG_COPY_DEVICE_TO_HOST, "small down"};
  SG_ASSERT_OK(sg_graph_add_copy(g, &s, &up, 1, &small));
  sg_exec_options o = options(pool.p, 1);
  sgtest::Exec e;
  SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
  for (int i = 0; i < 4; i++) {
    launch_and_check(e, layout.tail, n, "small copy next to a registered buffer");
    if (HasFatalFailure()) return;
  }
  SG_ASSERT_OK(sg_exec_set_copy(e, small, &s));
  launch_and_check(e, layout.tail, n, "small copy, set again");
}

INSTANTIATE_TEST_SUITE_P(Ways, Defect1, ::testing::ValuesIn(kWays),
                         [](const ::testing::TestParamInfo<Way> &i) {
                           return std::string(i.param.name);
                         });

}  // namespace
