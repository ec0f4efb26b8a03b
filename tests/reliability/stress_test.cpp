// Stress on the host backend: many threads, each launching its own
// executable over buffers that share pages, through one pinned pool and the
// registration cache (correct bytes every launch); and several threads
// misusing one executable at once (every call answers SG_OK or SG_ERR_BUSY,
// and the executable counts exactly the launches that were accepted); and
// pipelines rebinding queued batches while earlier ones run (every output
// checked).
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "sg_test_util.h"
#include "streamgraph/kernels.h"
#include "streamgraph/pipeline.h"

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

// out[j] = sg_kernels_mix(a[j], b[j], salt) for j < n, reading its
// arguments again for every element and yielding now and then: a launch
// whose arguments change while it runs writes a visibly wrong output.
void twin_slow_mix(const sg_kernel_launch *, void *const *args) {
  uint32_t n;
  std::memcpy(&n, args[4], sizeof n);
  for (uint32_t j = 0; j < n; j++) {
    if (j % 16 == 0) std::this_thread::yield();
    uint32_t *out, *a, *b, salt;
    std::memcpy(&out, args[0], sizeof out);
    std::memcpy(&a, args[1], sizeof a);
    std::memcpy(&b, args[2], sizeof b);
    std::memcpy(&salt, args[3], sizeof salt);
    out[j] = sg_kernels_mix(a[j], b[j], salt);
  }
}

// The pipeline's instance buffers and the template's nodes, for setup.
struct DiamondSetup {
  std::vector<void *> dev; // 3 per instance: a, b, out
  sg_node ua{}, ub{}, mix{}, down{};
};

int diamond_setup(sg_pipeline_instance *inst, void *user) {
  auto *s = static_cast<DiamondSetup *>(user);
  void **d = &s->dev[3 * inst->index];
  sg_pipeline_bind binds[] = {
      sg_bind_copy_dst(s->ua, d[0]),
      sg_bind_copy_dst(s->ub, d[1]),
      sg_bind_kernel_arg(s->mix, 0, &d[2], sizeof(void *)),
      sg_bind_kernel_arg(s->mix, 1, &d[0], sizeof(void *)),
      sg_bind_kernel_arg(s->mix, 2, &d[1], sizeof(void *)),
      sg_bind_copy_src(s->down, d[2]),
  };
  return sg_pipeline_instance_bind(inst, binds, 6) == SG_OK ? 0 : 1;
}

// Queue-ahead under stress: two uploads, a slow kernel and a download per
// batch, on several streams per instance; every batch binds new host
// buffers and a new kernel argument while the batches queued before it on
// its instance still run (the submitting thread sometimes pauses, so that
// an instance is found idle as often as busy). Every output is checked
// against a CPU reference, in every mode, depth and queue length.
TEST(Stress, QueuedBatchesRebindWhileEarlierOnesRun) {
  sgtest::LeakCheck leaks;
  constexpr uint32_t kWords = 96;
  constexpr unsigned kBatches = 160;
  const unsigned seed = std::random_device{}();
  std::mt19937 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  unsigned checked = 0;
  for (sg_exec_mode mode : {SG_MODE_STREAMS, SG_MODE_GRAPH})
    for (unsigned depth : {1u, 3u})
      for (unsigned queue : {2u, 4u}) {
        SCOPED_TRACE(std::string(mode == SG_MODE_GRAPH ? "graph" : "streams") + " mode, depth " +
                     std::to_string(depth) + ", queue " + std::to_string(queue));
        DiamondSetup setup;
        setup.dev.resize(3 * depth + 3);
        for (auto &d : setup.dev)
          SG_ASSERT_OK(sg_mem_alloc(SG_BACKEND_HOST, SG_MEMORY_DEVICE, 0, kWords * 4, &d));
        void **tmpl = &setup.dev[3 * depth];
        std::vector<std::vector<uint32_t>> a(kBatches, std::vector<uint32_t>(kWords)), b = a,
                                           out = a;
        std::vector<uint32_t> salts(kBatches);
        sgtest::Graph g;
        sg_copy_desc ca = {tmpl[0], a[0].data(), kWords * 4, SG_COPY_HOST_TO_DEVICE, "up a"};
        sg_copy_desc cb = {tmpl[1], b[0].data(), kWords * 4, SG_COPY_HOST_TO_DEVICE, "up b"};
        SG_ASSERT_OK(sg_graph_add_copy(g, &ca, nullptr, 0, &setup.ua));
        SG_ASSERT_OK(sg_graph_add_copy(g, &cb, nullptr, 0, &setup.ub));
        uint32_t salt0 = 0, n = kWords;
        void *args[5] = {&tmpl[2], &tmpl[0], &tmpl[1], &salt0, &n};
        size_t sizes[5] = {sizeof(void *), sizeof(void *), sizeof(void *), 4, 4};
        sg_kernel_desc k{};
        k.grid = {1, 1, 1};
        k.block = {1, 1, 1};
        k.args = args;
        k.arg_sizes = sizes;
        k.arg_count = 5;
        k.host_twin = twin_slow_mix;
        k.name = "slow mix";
        sg_node both[] = {setup.ua, setup.ub};
        SG_ASSERT_OK(sg_graph_add_kernel(g, &k, both, 2, &setup.mix));
        sg_copy_desc cd = {out[0].data(), tmpl[2], kWords * 4, SG_COPY_DEVICE_TO_HOST, "down"};
        SG_ASSERT_OK(sg_graph_add_copy(g, &cd, &setup.mix, 1, &setup.down));

        sg_pipeline_options o;
        sg_pipeline_options_init(&o);
        o.depth = depth;
        o.queue = queue;
        o.exec = sgtest::host_options(2);
        o.exec.mode = mode;
        o.setup = diamond_setup;
        o.user_data = &setup;
        sg_pipeline *p = nullptr;
        SG_ASSERT_OK(sg_pipeline_create(g, &o, &p));
        for (unsigned i = 0; i < kBatches; i++) {
          for (uint32_t j = 0; j < kWords; j++) {
            a[i][j] = static_cast<uint32_t>(rng());
            b[i][j] = static_cast<uint32_t>(rng());
            out[i][j] = 0xdeadbeefu;
          }
          salts[i] = static_cast<uint32_t>(rng());
          sg_pipeline_bind binds[] = {
              sg_bind_copy_src(setup.ua, a[i].data()),
              sg_bind_copy_src(setup.ub, b[i].data()),
              sg_bind_kernel_arg(setup.mix, 3, &salts[i], sizeof salts[i]),
              sg_bind_copy_dst(setup.down, out[i].data()),
          };
          sg_pipeline_batch batch = {binds, 4, nullptr};
          SG_ASSERT_OK(sg_pipeline_submit(p, &batch, nullptr));
          if (rng() % 4 == 0) std::this_thread::sleep_for(std::chrono::microseconds(rng() % 200));
        }
        SG_ASSERT_OK(sg_pipeline_drain(p));
        sg_pipeline_stats st;
        SG_ASSERT_OK(sg_pipeline_get_stats(p, &st));
        SG_ASSERT_OK(sg_pipeline_destroy(p));
        for (auto d : setup.dev) sg_mem_free(d);
        EXPECT_EQ(st.rebuilds, 0u);
        for (unsigned i = 0; i < kBatches; i++)
          for (uint32_t j = 0; j < kWords; j++)
            ASSERT_EQ(out[i][j], sg_kernels_mix(a[i][j], b[i][j], salts[i]))
                << "batch " << i << " element " << j;
        checked += kBatches;
      }
  std::printf("%u queued-ahead batches rebound while earlier ones ran, each checked\n", checked);
}

}  // namespace
