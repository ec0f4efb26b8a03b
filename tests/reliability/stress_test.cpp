// Stress on the host backend: many threads, each launching its own
// executable over buffers that share pages, through one pinned pool and the
// registration cache (correct bytes every launch); and several threads
// misusing one executable at once (every call answers SG_OK or SG_ERR_BUSY,
// and the executable counts exactly the launches that were accepted).
#include <atomic>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

#include "sg_test_util.h"
#include "streamgraph/kernels.h"

namespace {

constexpr size_t kWords = 1500;
constexpr size_t kBytes = kWords * 4;

TEST(Stress, ThreadsLaunchingTheirOwnExecutablesThroughOnePool) {
  sgtest::LeakCheck leaks;
  sg_pinned_pool_options po;
  sg_pinned_pool_options_init(&po);
  po.backend = SG_BACKEND_HOST;
  po.max_bytes = 1u << 20;
  po.slab_bytes = 256u << 10;
  sg_pinned_pool *pool = nullptr;
  SG_ASSERT_OK(sg_pinned_pool_create(&po, &pool));
  constexpr int kThreads = 8, kLaunches = 150;
  // One pageable block; each thread's input and output are packed into it,
  // so that registrations of one thread's buffers pin its neighbours' pages.
  std::vector<uint8_t> block(kThreads * 2 * (kBytes + 24) + 4096);
  std::atomic<int> bad{0}, failed{0};
  auto work = [&](int t) {
    uint8_t *base = block.data() + 4 + t * 2 * (kBytes + 24);  // 4-aligned, not page-aligned
    uint32_t *in = reinterpret_cast<uint32_t *>(base);
    uint32_t *out = reinterpret_cast<uint32_t *>(base + kBytes + 12);
    void *dev = nullptr;
    if (sg_mem_alloc(SG_BACKEND_HOST, SG_MEMORY_DEVICE, 0, 2 * kBytes, &dev)) {
      failed++;
      return;
    }
    uint32_t *d = static_cast<uint32_t *>(dev);
    sg_graph *g = nullptr;
    sg_exec *e = nullptr;
    sg_node up{}, mix{};
    sg_copy_desc u = {d, in, kBytes, SG_COPY_HOST_TO_DEVICE, "up"};
    sg_kernel_call k;
    sg_kernels_mix_u32(&k, d + kWords, d, d, static_cast<uint32_t>(t), kWords);
    sg_copy_desc dn = {out, d + kWords, kBytes, SG_COPY_DEVICE_TO_HOST, "down"};
    sg_exec_options o = sgtest::host_options(2);
    o.mode = t % 2 ? SG_MODE_GRAPH : SG_MODE_STREAMS;
    o.staging.policy = t % 3 ? SG_STAGING_REGISTER : SG_STAGING_STAGE;
    o.staging.pool = pool;
    o.staging.chunk_bytes = 2048;
    if (sg_graph_create(&g) || sg_graph_add_copy(g, &u, nullptr, 0, &up) ||
        sg_graph_add_kernel(g, &k.desc, &up, 1, &mix) ||
        sg_graph_add_copy(g, &dn, &mix, 1, nullptr) || sg_exec_create(g, &o, &e)) {
      failed++;
    } else {
      for (int l = 0; l < kLaunches; l++) {
        for (size_t i = 0; i < kWords; i++) in[i] = static_cast<uint32_t>(l * 7919 + i + t);
        std::memset(out, 0xA5, kBytes);
        if (sg_exec_launch(e, nullptr) || sg_exec_wait(e)) {
          failed++;
          break;
        }
        for (size_t i = 0; i < kWords; i++)
          if (out[i] != sg_kernels_mix(in[i], in[i], static_cast<uint32_t>(t))) {
            bad++;
            break;
          }
      }
    }
    if (e) sg_exec_destroy(e);
    if (g) sg_graph_destroy(g);
    sg_mem_free(dev);
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; t++) threads.emplace_back(work, t);
  for (auto &t : threads) t.join();
  EXPECT_EQ(failed.load(), 0) << sg_last_error();
  EXPECT_EQ(bad.load(), 0);
  std::printf("%d threads x %d launches, each checked\n", kThreads, kLaunches);
  SG_EXPECT_OK(sg_pinned_pool_destroy(pool));
}

int nothing(void *) { return 0; }

TEST(Stress, ThreadsMisusingOneExecutable) {
  sgtest::LeakCheck leaks;
  sgtest::Graph g;
  sg_node h{};
  sg_host_desc hd = {nothing, nullptr, "h"};
  SG_ASSERT_OK(sg_graph_add_host(g, &hd, nullptr, 0, &h));
  SG_ASSERT_OK(sg_graph_add_empty(g, "e", &h, 1, nullptr));
  sg_exec_options o = sgtest::host_options(2);
  sgtest::Exec e;
  SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
  constexpr int kThreads = 4, kCalls = 3000;
  std::atomic<long> launched{0}, busy{0}, other{0};
  auto work = [&](int t) {
    for (int i = 0; i < kCalls; i++) {
      sg_status st;
      switch ((i + t) % 4) {
        case 0:
          st = sg_exec_launch(e, nullptr);
          if (st == SG_OK) launched++;
          break;
        case 1: st = sg_exec_wait(e); break;
        case 2: st = sg_exec_query(e); break;
        default: st = sg_exec_set_host(e, h, &hd); break;
      }
      if (st == SG_ERR_BUSY) busy++;
      else if (st != SG_OK && st != SG_NOT_READY) other++;
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; t++) threads.emplace_back(work, t);
  for (auto &t : threads) t.join();
  SG_ASSERT_OK(sg_exec_wait(e));
  EXPECT_EQ(other.load(), 0) << sg_last_error();
  sg_exec_stats stats;
  SG_ASSERT_OK(sg_exec_get_stats(e, &stats));
  EXPECT_EQ(stats.launches, static_cast<uint64_t>(launched.load()));
  std::printf("%d threads x %d calls on one executable: %ld launches accepted, %ld calls "
              "answered SG_ERR_BUSY\n",
              kThreads, kCalls, launched.load(), busy.load());
}

}  // namespace
