// The memop protocol on the CPU: the device's program (stage_program.h),
// carried out by an emulated device thread that blocks on the flags as a
// GPU stream does, against the pool's conductor and copy threads. Exact
// data over sizes, rings, thread counts and adversarial timing; graph-mode
// rings armed for launches queued one behind another; and each failure
// path of docs/staging.md ("When something fails"): a host copy that
// cannot be queued, an enqueue cut short, a device that stops, an
// executable destroyed with a copy armed - none may hang, leak or report
// bad data as good.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "sg_test_util.h"
#include "staging_internal.h"

extern "C" {
#include "staging/stage_conductor.h"
#include "staging/stage_program.h"
}

namespace {

using sgstaging::host_pool_options;
using sgstaging::random_bytes;

constexpr size_t KiB = 1024;

// A pool with copy threads and a running conductor.
struct Pool {
  sg_pinned_pool *p = nullptr;
  explicit Pool(size_t max, unsigned threads = 3) {
    sg_pinned_pool_options o = host_pool_options(max, 256 * KiB);
    EXPECT_EQ(sg_pinned_pool_create(&o, &p), SG_OK) << sg_last_error();
    EXPECT_EQ(sg__pool_attach(p, threads, "test"), SG_OK);
    EXPECT_EQ(sg__conductor_start(sg__pool_conductor(p), "test"), SG_OK);
  }
  ~Pool() {
    sg__pool_detach(p);
    EXPECT_EQ(sg_pinned_pool_destroy(p), SG_OK) << sg_last_error();
  }
};

// An emulated GPU stream: carries out queued operations in order on its
// own thread, a wait blocking it as cuStreamWaitValue32 blocks a stream.
// `jitter_us` > 0 sleeps a random while before each operation.
class Device {
 public:
  explicit Device(unsigned jitter_us = 0, uint32_t seed = 1) : jitter_(jitter_us), rng_(seed) {
    thread_ = std::thread([this] { loop(); });
  }
  ~Device() {
    {
      std::lock_guard<std::mutex> l(m_);
      stop_ = true;
      // A test that failed may leave the device stuck in a wait: end it,
      // so that the failure shows instead of a hang.
      if (busy_ && current_.kind == SG__OP_WAIT) sg__flag_raise(current_.flag, SG__FLAG_RELEASE);
    }
    cv_.notify_all();
    thread_.join();
  }
  void push(const sg__stage_run *run, const sg__stage_op &op) {
    std::lock_guard<std::mutex> l(m_);
    q_.push_back({run, op});
    cv_.notify_all();
  }
  // Holds the device before its next operation (or lets it go).
  void pause(bool on) {
    std::lock_guard<std::mutex> l(m_);
    paused_ = on;
    cv_.notify_all();
  }
  // Waits until every queued operation has been carried out; false after
  // `seconds` (the test then fails instead of hanging).
  bool idle(double seconds = 20) {
    std::unique_lock<std::mutex> l(m_);
    return cv_.wait_for(l, std::chrono::duration<double>(seconds),
                        [this] { return q_.empty() && !busy_; });
  }
  // The program of `run`, queued (all of it, or its first `limit` ops).
  size_t enqueue(const sg__stage_run *run, int resets, size_t limit = SIZE_MAX) {
    Emit e{this, run, limit, 0};
    sg__stage_program(run, resets, &Emit::emit, &e);
    return e.count;
  }

 private:
  struct Item {
    const sg__stage_run *run;
    sg__stage_op op;
  };
  struct Emit {
    Device *d;
    const sg__stage_run *run;
    size_t limit, count;
    static int emit(void *ctx, const sg__stage_op *op) {
      auto *e = static_cast<Emit *>(ctx);
      if (e->count == e->limit) return 1;
      e->d->push(e->run, *op);
      e->count++;
      return 0;
    }
  };
  void loop() {
    std::unique_lock<std::mutex> l(m_);
    for (;;) {
      cv_.wait(l, [this] { return stop_ || (!q_.empty() && !paused_); });
      if (stop_) return;
      Item it = q_.front();
      q_.pop_front();
      busy_ = true;
      current_ = it.op;
      unsigned sleep_us = jitter_ ? static_cast<unsigned>(rng_() % jitter_) : 0;
      l.unlock();
      if (sleep_us) std::this_thread::sleep_for(std::chrono::microseconds(sleep_us));
      sg__stage_op_run(it.run, &it.op);
      l.lock();
      busy_ = false;
      cv_.notify_all();
    }
  }
  unsigned jitter_;
  std::mt19937 rng_;
  std::mutex m_;
  std::condition_variable cv_;
  std::deque<Item> q_;
  bool stop_ = false, paused_ = false, busy_ = false;
  sg__stage_op current_{};
  std::thread thread_;
};

// What the conductor reported.
struct Report {
  std::mutex m;
  sg_status status = SG_OK;
  std::string message;
  static void fn(void *ctx, sg_status st, const char *msg) {
    auto *r = static_cast<Report *>(ctx);
    std::lock_guard<std::mutex> l(r->m);
    if (r->status == SG_OK) {
      r->status = st;
      r->message = msg;
    }
  }
  sg__stage_watch watch(sg__pool_broken_fn broken = nullptr, void *broken_ctx = nullptr) {
    return sg__stage_watch{&Report::fn, this, broken, broken_ctx};
  }
};

sg__stage_run *new_run(sg_pinned_pool *pool, sg__stage_dir dir, void *host, void *device,
                       size_t bytes, size_t chunk, unsigned ring, unsigned parts, int persistent) {
  sg__stage_geometry g;
  sg__stage_geometry_make(bytes, chunk, ring, parts, &g);
  sg__stage_run *run = nullptr;
  EXPECT_EQ(sg__stage_run_new(pool, dir, host, device, &g, persistent, nullptr, nullptr, "test",
                              &run),
            SG_OK)
      << sg_last_error();
  if (!run) return nullptr;
  EXPECT_EQ(sg__stage_run_use_memops(run, "test"), SG_OK) << sg_last_error();
  return run;
}

// ---- the program ------------------------------------------------------------

struct Recorded {
  std::vector<sg__stage_op> ops;
  static int emit(void *ctx, const sg__stage_op *op) {
    static_cast<Recorded *>(ctx)->ops.push_back(*op);
    return 0;
  }
};

std::string describe(const sg__stage_run *run, const std::vector<sg__stage_op> &ops) {
  const sg__stage_flags *f = run->flags;
  std::string out;
  for (const auto &op : ops) {
    std::string flag = op.flag == &f->go ? "go" : op.flag == &f->done ? "done" : "";
    if (op.flag && flag.empty()) flag = "r" + std::to_string(op.flag - f->ready);
    if (!out.empty()) out += " ";
    if (op.kind == SG__OP_WRITE) out += flag + "=" + std::to_string(op.value);
    if (op.kind == SG__OP_WAIT) out += flag + ">=" + std::to_string(op.value);
    if (op.kind == SG__OP_DMA) out += "D" + std::to_string(op.chunk);
  }
  return out;
}

TEST(StagingMemops, TheProgramOfEachDirection) {
  sgtest::LeakCheck leaks;
  Pool pool(1024 * KiB);
  std::vector<uint8_t> a(5 * 4096), b(5 * 4096);
  for (int dir : {SG__STAGE_H2D, SG__STAGE_D2H}) {
    for (int resets : {0, 1}) {
      sg__stage_run *run = new_run(pool.p, static_cast<sg__stage_dir>(dir), a.data(), b.data(),
                                   a.size(), 4096, 2, 1, resets);
      ASSERT_NE(run, nullptr);
      Recorded r;
      ASSERT_EQ(sg__stage_program(run, resets, &Recorded::emit, &r), 0);
      std::string want = resets ? "r0=0 r1=0 done=0 " : "";
      if (dir == SG__STAGE_H2D)
        want += "go=1 r0>=1 D0 done=1 r1>=2 D1 done=2 r0>=3 D2 done=3 r1>=4 D3 done=4 r0>=5 D4 "
                "done=5";
      else
        want += "go=1 D0 done=1 D1 done=2 r0>=1 D2 done=3 r1>=2 D3 done=4 r0>=3 D4 done=5 "
                "r0>=5 r1>=4 done=6";
      EXPECT_EQ(describe(run, r.ops), want) << dir << " " << resets;
      EXPECT_EQ(sg__stage_program_last(run), dir == SG__STAGE_H2D ? 5u : 6u);
      sg__stage_run_free(run);
    }
  }
}

// A host copy that finishes after its copy was released must not take the
// release back (a later wait would then never end).
TEST(StagingMemops, ARaisedFlagNeverGoesDown) {
  uint32_t flag = 0;
  sg__flag_raise(&flag, 3);
  EXPECT_EQ(flag, 3u);
  sg__flag_raise(&flag, SG__FLAG_RELEASE);
  sg__flag_raise(&flag, 7);
  EXPECT_EQ(flag, SG__FLAG_RELEASE);
  EXPECT_TRUE(sg__flag_geq(SG__FLAG_RELEASE, 1025));
  EXPECT_FALSE(sg__flag_geq(0, 1));
  EXPECT_TRUE(sg__flag_geq(SG__FLAG_ABANDONED, 1025));
}

// ---- copies ------------------------------------------------------------------

// One streams-mode (transient) copy through the emulated device; the ring
// is back in the pool once settled.
void transient_copy(sg_pinned_pool *pool, Device &dev, sg__stage_dir dir, size_t bytes,
                    size_t chunk, unsigned ring, unsigned parts, uint32_t seed) {
  auto src = random_bytes(bytes, seed);
  std::vector<uint8_t> dst(bytes + 8, 0xEE);
  const bool h2d = dir == SG__STAGE_H2D;
  sg__stage_run *run = new_run(pool, dir, h2d ? src.data() : dst.data(),
                               h2d ? static_cast<void *>(dst.data()) : src.data(), bytes, chunk,
                               ring, parts, 0);
  ASSERT_NE(run, nullptr);
  Report rep;
  sg__stage_watch w = rep.watch();
  sg__stage_arm(run, &w, "test copy");
  dev.enqueue(run, 0);
  ASSERT_TRUE(dev.idle()) << "the device hung: " << bytes << " " << chunk << " " << ring;
  sg__stage_settle(pool); // frees the run
  EXPECT_EQ(rep.status, SG_OK) << rep.message;
  ASSERT_EQ(std::memcmp(dst.data(), src.data(), bytes), 0)
      << "dir " << dir << " bytes " << bytes << " chunk " << chunk << " ring " << ring
      << " seed " << seed;
  EXPECT_EQ(dst[bytes], 0xEE) << "wrote past the end";
}

TEST(StagingMemops, ExactOverSizesRingsAndThreads) {
  sgtest::LeakCheck leaks;
  Pool pool(4096 * KiB, 4);
  Device dev;
  uint32_t seed = 100;
  for (int dir : {SG__STAGE_H2D, SG__STAGE_D2H})
    for (size_t bytes : {size_t(1), size_t(4095), size_t(64 * KiB + 3), size_t(777 * KiB)})
      for (size_t chunk : {size_t(4096), size_t(60 * KiB + 1)})
        for (unsigned ring : {1u, 2u, 4u})
          for (unsigned parts : {1u, 3u})
            transient_copy(pool.p, dev, static_cast<sg__stage_dir>(dir), bytes, chunk, ring, parts,
                           seed++);
  sg_pinned_pool_stats s;
  SG_ASSERT_OK(sg_pinned_pool_get_stats(pool.p, &s));
  EXPECT_EQ(s.in_use_bytes, 0u);
}

// The device dawdles at random before each operation: every order the
// flags allow between it and the host side still moves exact bytes.
TEST(StagingMemops, ExactUnderAdversarialTiming) {
  sgtest::LeakCheck leaks;
  Pool pool(2048 * KiB, 2);
  for (uint32_t seed = 1; seed <= 6; seed++) {
    Device dev(300, seed);
    for (int dir : {SG__STAGE_H2D, SG__STAGE_D2H})
      transient_copy(pool.p, dev, static_cast<sg__stage_dir>(dir), 200 * KiB + seed, 16 * KiB,
                     1 + seed % 4, 2, seed * 17);
  }
}

// The conductor's spin before it sleeps, set through the environment when
// the pool is made: none at all, and long: the bytes stay exact.
TEST(StagingMemops, ExactWhateverTheConductorsSpin) {
  sgtest::LeakCheck leaks;
  for (const char *us : {"0", "500"}) {
    setenv("SG_STAGING_CONDUCTOR_SPIN_US", us, 1);
    Pool pool(2048 * KiB, 2);
    unsetenv("SG_STAGING_CONDUCTOR_SPIN_US");
    EXPECT_EQ(sg__pool_conductor(pool.p)->spin_ns, std::strtoull(us, nullptr, 10) * 1000u);
    const uint32_t seed = std::random_device{}();
    Device dev(100, seed);
    for (int dir : {SG__STAGE_H2D, SG__STAGE_D2H})
      transient_copy(pool.p, dev, static_cast<sg__stage_dir>(dir), 300 * KiB + 5, 32 * KiB, 3, 2,
                     seed);
  }
}

// Several copies armed at once on one device stream and on several.
TEST(StagingMemops, ManyCopiesInFlight) {
  sgtest::LeakCheck leaks;
  Pool pool(4096 * KiB, 3);
  std::vector<std::thread> threads;
  std::atomic<int> bad{0};
  for (int t = 0; t < 4; t++) {
    threads.emplace_back([&, t] {
      Device dev(t % 2 ? 50 : 0, static_cast<uint32_t>(t));
      for (int i = 0; i < 10; i++) {
        size_t bytes = 1 + static_cast<size_t>((t * 50021 + i * 7919) % (300 * KiB));
        sg__stage_dir dir = (t + i) % 2 ? SG__STAGE_H2D : SG__STAGE_D2H;
        auto src = random_bytes(bytes, static_cast<uint32_t>(t * 1000 + i));
        std::vector<uint8_t> dst(bytes, 0);
        const bool h2d = dir == SG__STAGE_H2D;
        sg__stage_run *run = new_run(pool.p, dir, h2d ? src.data() : dst.data(),
                                     h2d ? static_cast<void *>(dst.data()) : src.data(), bytes,
                                     32 * KiB, 3, 2, 0);
        if (!run) {
          bad++;
          continue;
        }
        Report rep;
        sg__stage_watch w = rep.watch();
        sg__stage_arm(run, &w, "test copy");
        dev.enqueue(run, 0);
        if (!dev.idle()) {
          bad++;
          return;
        }
        sg__stage_settle(pool.p);
        if (dst != src || rep.status) bad++;
      }
    });
  }
  for (auto &th : threads) th.join();
  EXPECT_EQ(bad.load(), 0);
}

// A graph-mode ring: one run serves every launch, the program resetting
// its flags; launches are armed (and enqueued) several ahead of the
// device, as queued graph launches are.
TEST(StagingMemops, AGraphRingServesLaunchesQueuedAhead) {
  sgtest::LeakCheck leaks;
  Pool pool(1024 * KiB, 2);
  for (int dir : {SG__STAGE_H2D, SG__STAGE_D2H}) {
    const size_t bytes = 150 * KiB + 5;
    std::vector<uint8_t> host(bytes), device(bytes);
    const bool h2d = dir == SG__STAGE_H2D;
    sg__stage_run *run = new_run(pool.p, static_cast<sg__stage_dir>(dir), host.data(),
                                 device.data(), bytes, 16 * KiB, 3, 2, 1);
    ASSERT_NE(run, nullptr);
    Device dev(20, static_cast<uint32_t>(dir));
    Report rep;
    sg__stage_watch w = rep.watch();
    for (int round = 0; round < 4; round++) {
      // Each round: three launches queued at once; the source stays the
      // same within a round (a launch cannot rewrite it mid-flight).
      auto data = random_bytes(bytes, static_cast<uint32_t>(round * 7 + dir));
      std::memcpy(h2d ? host.data() : device.data(), data.data(), bytes);
      std::memset(h2d ? device.data() : host.data(), 0, bytes);
      dev.pause(true);
      for (int l = 0; l < 3; l++) {
        sg__stage_arm(run, &w, "graph copy");
        dev.enqueue(run, 1);
      }
      dev.pause(false);
      ASSERT_TRUE(dev.idle()) << "the device hung in round " << round;
      sg__stage_settle(pool.p);
      EXPECT_EQ(rep.status, SG_OK) << rep.message;
      ASSERT_EQ(std::memcmp(h2d ? device.data() : host.data(), data.data(), bytes), 0)
          << "round " << round << " dir " << dir;
    }
    sg__stage_run_free(run);
  }
}

// A graph's ring serves launches queued ahead, each with the pageable side
// it was launched with (sg__stage_launch_queue): the graph names no host
// address, so a pipeline's fresh buffer per batch changes no graph node.
// Device->host: each launch's own destination gets the data; host->device:
// launches run one by one with checks between them, then three queued at
// once end with the last one's source.
TEST(StagingMemops, AGraphRingTakesEachLaunchsOwnPageableSide) {
  sgtest::LeakCheck leaks;
  Pool pool(1024 * KiB, 2);
  const size_t bytes = 150 * KiB + 5;
  Report rep;
  sg__stage_watch w = rep.watch();
  {
    std::vector<uint8_t> device = random_bytes(bytes, 11), creation(bytes, 0);
    sg__stage_run *run = new_run(pool.p, SG__STAGE_D2H, creation.data(), device.data(), bytes,
                                 16 * KiB, 3, 2, 1);
    ASSERT_NE(run, nullptr);
    Device dev(20, 3);
    std::vector<std::vector<uint8_t>> outs(3, std::vector<uint8_t>(bytes, 0));
    dev.pause(true);
    for (auto &out : outs) {
      ASSERT_EQ(sg__stage_launch_reserve(run, "test"), SG_OK);
      sg__stage_launch_queue(run, out.data());
      sg__stage_arm(run, &w, "graph copy");
      dev.enqueue(run, 1);
    }
    dev.pause(false);
    ASSERT_TRUE(dev.idle()) << "the device hung";
    sg__stage_settle(pool.p);
    EXPECT_EQ(rep.status, SG_OK) << rep.message;
    for (size_t i = 0; i < outs.size(); i++)
      EXPECT_EQ(std::memcmp(outs[i].data(), device.data(), bytes), 0) << "launch " << i;
    EXPECT_EQ(std::count(creation.begin(), creation.end(), 0), static_cast<long>(bytes))
        << "the address the ring was made with is not the launches'";
    sg__stage_run_free(run);
  }
  {
    std::vector<uint8_t> device(bytes), creation(bytes, 0x77);
    sg__stage_run *run = new_run(pool.p, SG__STAGE_H2D, creation.data(), device.data(), bytes,
                                 16 * KiB, 3, 2, 1);
    ASSERT_NE(run, nullptr);
    Device dev(20, 4);
    std::vector<std::vector<uint8_t>> ins;
    for (uint32_t i = 0; i < 6; i++) ins.push_back(random_bytes(bytes, 100 + i));
    for (size_t i = 0; i < 3; i++) { // one at a time
      ASSERT_EQ(sg__stage_launch_reserve(run, "test"), SG_OK);
      sg__stage_launch_queue(run, ins[i].data());
      sg__stage_arm(run, &w, "graph copy");
      dev.enqueue(run, 1);
      ASSERT_TRUE(dev.idle()) << "the device hung";
      sg__stage_settle(pool.p);
      ASSERT_EQ(std::memcmp(device.data(), ins[i].data(), bytes), 0) << "launch " << i;
    }
    dev.pause(true);
    for (size_t i = 3; i < 6; i++) { // queued ahead; a launch that did not go in is taken back
      ASSERT_EQ(sg__stage_launch_reserve(run, "test"), SG_OK);
      sg__stage_launch_queue(run, creation.data());
      sg__stage_launch_unqueue(run);
      ASSERT_EQ(sg__stage_launch_reserve(run, "test"), SG_OK);
      sg__stage_launch_queue(run, ins[i].data());
      sg__stage_arm(run, &w, "graph copy");
      dev.enqueue(run, 1);
    }
    dev.pause(false);
    ASSERT_TRUE(dev.idle()) << "the device hung";
    sg__stage_settle(pool.p);
    EXPECT_EQ(rep.status, SG_OK) << rep.message;
    EXPECT_EQ(std::memcmp(device.data(), ins[5].data(), bytes), 0);
    EXPECT_EQ(run->launches.count, 0u) << "every launch's address is taken off when it ends";
    sg__stage_run_free(run);
  }
}

// ---- failures ------------------------------------------------------------------

// A host copy that cannot be queued (the n-th, for every n the copy
// reaches): the launch is reported failed, every wait of the device's
// program passes, the ring comes back, nothing leaks.
TEST(StagingMemops, AHostCopyThatCannotBeQueuedReleasesTheCopy) {
  sgtest::LeakCheck leaks;
  Pool pool(1024 * KiB, 2);
  for (int dir : {SG__STAGE_H2D, SG__STAGE_D2H}) {
    for (unsigned long nth = 1;; nth++) {
      ASSERT_LT(nth, 100u) << "the copy never ran without a fault";
      const size_t bytes = 100 * KiB;
      auto src = random_bytes(bytes, static_cast<uint32_t>(nth));
      std::vector<uint8_t> dst(bytes, 0);
      const bool h2d = dir == SG__STAGE_H2D;
      sg__stage_run *run = new_run(pool.p, static_cast<sg__stage_dir>(dir),
                                   h2d ? src.data() : dst.data(),
                                   h2d ? static_cast<void *>(dst.data()) : src.data(), bytes,
                                   16 * KiB, 2, 2, 0);
      ASSERT_NE(run, nullptr);
      Device dev;
      Report rep;
      sg__stage_watch w = rep.watch();
      sg_fault_arm(SG_FAULT_SYSTEM, nth);
      sg__stage_arm(run, &w, "copy node 'c' (#0)");
      dev.enqueue(run, 0);
      ASSERT_TRUE(dev.idle()) << "a released copy still held the device, fault " << nth;
      int fired = sg_fault_fired();
      sg_fault_arm(0, 0);
      sg__stage_settle(pool.p);
      if (!fired) {
        EXPECT_EQ(rep.status, SG_OK);
        EXPECT_EQ(dst, src);
        EXPECT_GT(nth, 1u);
        break;
      }
      EXPECT_EQ(rep.status, SG_ERR_SYSTEM) << "fault " << nth << " was not reported";
      EXPECT_NE(rep.message.find("copy node 'c' (#0): staged copy failed"), std::string::npos)
          << rep.message;
    }
  }
  sg_pinned_pool_stats s;
  SG_ASSERT_OK(sg_pinned_pool_get_stats(pool.p, &s));
  EXPECT_EQ(s.in_use_bytes, 0u);
}

// An enqueue cut short after any number of operations: the part that went
// in runs to its end (released), the abandoned mark lets the ring go.
TEST(StagingMemops, AnEnqueueCutShortReleasesWhatWentIn) {
  sgtest::LeakCheck leaks;
  Pool pool(1024 * KiB, 2);
  for (int dir : {SG__STAGE_H2D, SG__STAGE_D2H}) {
    const size_t bytes = 70 * KiB;
    std::vector<uint8_t> host(bytes, 1), device(bytes, 2);
    for (size_t cut = 0;; cut++) {
      sg__stage_run *run = new_run(pool.p, static_cast<sg__stage_dir>(dir), host.data(),
                                   device.data(), bytes, 16 * KiB, 2, 1, 0);
      ASSERT_NE(run, nullptr);
      Device dev;
      dev.pause(true); // the device has not reached the copy yet
      Report rep;
      sg__stage_watch w = rep.watch();
      sg__stage_arm(run, &w, "copy");
      size_t went_in = dev.enqueue(run, 0, cut);
      const bool whole = went_in < cut;
      if (!whole) {
        sg__stage_abandon(run);
        sg__stage_op mark = {SG__OP_WRITE, &run->flags->done, SG__FLAG_ABANDONED, 0};
        dev.push(run, mark);
        sg__stage_end_at(run, SG__END_ABANDONED);
      }
      dev.pause(false);
      ASSERT_TRUE(dev.idle()) << "a cut-short program hung, cut after " << cut;
      sg__stage_settle(pool.p);
      EXPECT_EQ(rep.status, SG_OK) << "an abandoned copy is reported by its launch";
      if (whole) break;
    }
  }
  sg_pinned_pool_stats s;
  SG_ASSERT_OK(sg_pinned_pool_get_stats(pool.p, &s));
  EXPECT_EQ(s.in_use_bytes, 0u);
}

// The same, when the backend cannot even enqueue the mark and synchronises
// instead (SG__END_NOW).
TEST(StagingMemops, AnEnqueueCutShortWithoutAMark) {
  sgtest::LeakCheck leaks;
  Pool pool(1024 * KiB, 2);
  std::vector<uint8_t> host(70 * KiB, 1), device(70 * KiB, 2);
  sg__stage_run *run = new_run(pool.p, SG__STAGE_H2D, host.data(), device.data(), host.size(),
                               16 * KiB, 2, 1, 0);
  ASSERT_NE(run, nullptr);
  Device dev;
  Report rep;
  sg__stage_watch w = rep.watch();
  sg__stage_arm(run, &w, "copy");
  dev.enqueue(run, 0, 4);
  sg__stage_abandon(run);
  ASSERT_TRUE(dev.idle()) << "released waits must pass";
  sg__stage_end_at(run, SG__END_NOW);
  sg__stage_settle(pool.p);
  sg_pinned_pool_stats s;
  SG_ASSERT_OK(sg_pinned_pool_get_stats(pool.p, &s));
  EXPECT_EQ(s.in_use_bytes, 0u);
}

int broken_yes(void *) { return 1; }

// A device that stops (a broken context) never writes `done`: after the
// quiet period the conductor asks, reports SG_ERR_CUDA, releases the copy
// and drops it without freeing its ring (the device state is unknown).
TEST(StagingMemops, ADeviceThatStopsIsDetected) {
  Pool pool(1024 * KiB, 2);
  std::vector<uint8_t> host(70 * KiB, 1), device(70 * KiB, 2);
  sg__stage_run *run = new_run(pool.p, SG__STAGE_H2D, host.data(), device.data(), host.size(),
                               16 * KiB, 2, 1, 0);
  ASSERT_NE(run, nullptr);
  Report rep;
  sg__stage_watch w = rep.watch(broken_yes, nullptr);
  sg__stage_arm(run, &w, "copy node 'c' (#2)");
  // The device took "go" and the first wait, then died.
  sg__flag_store(&run->flags->go, 1);
  sgtest::poll_until([&] { return sg__flag_load(&run->flags->ready[0]) == SG__FLAG_RELEASE; });
  {
    std::lock_guard<std::mutex> l(rep.m);
    EXPECT_EQ(rep.status, SG_ERR_CUDA);
    EXPECT_NE(rep.message.find("copy node 'c' (#2)"), std::string::npos) << rep.message;
  }
  EXPECT_EQ(sg__flag_load(&run->flags->ready[0]), SG__FLAG_RELEASE);
  sg__stage_settle(pool.p);
  // Dropped, not freed: the test, which knows the "device" is gone, frees it.
  EXPECT_FALSE(run->act.listed);
  sg__stage_run_free(run);
}

// An executable destroyed with copies armed that its device never reached
// (its launch failed before them): disowning releases them and takes them
// off the conductor; nothing reports to the executable afterwards.
TEST(StagingMemops, DisowningReleasesCopiesNeverReached) {
  Pool pool(1024 * KiB, 2);
  std::vector<uint8_t> host(70 * KiB, 1), device(70 * KiB, 2);
  sg__stage_run *graph_run = new_run(pool.p, SG__STAGE_D2H, host.data(), device.data(),
                                     host.size(), 16 * KiB, 2, 1, 1);
  sg__stage_run *stream_run = new_run(pool.p, SG__STAGE_H2D, host.data(), device.data(),
                                      host.size(), 16 * KiB, 2, 1, 0);
  ASSERT_NE(graph_run, nullptr);
  ASSERT_NE(stream_run, nullptr);
  Report rep;
  sg__stage_watch w = rep.watch();
  sg__stage_arm(graph_run, &w, "graph copy");
  sg__stage_arm(graph_run, &w, "graph copy");
  sg__stage_arm(stream_run, &w, "stream copy");
  sg__stage_disown(pool.p, &rep);
  EXPECT_FALSE(graph_run->act.listed);
  EXPECT_FALSE(stream_run->act.listed);
  EXPECT_EQ(sg__flag_load(&graph_run->flags->ready[1]), SG__FLAG_RELEASE);
  EXPECT_EQ(sg__flag_load(&stream_run->flags->ready[0]), SG__FLAG_RELEASE);
  // A device that got there after all passes every wait.
  Device dev;
  dev.enqueue(stream_run, 0);
  ASSERT_TRUE(dev.idle());
  EXPECT_EQ(rep.status, SG_OK);
  sg__stage_run_free(graph_run);
  sg__stage_run_free(stream_run);
}

// Freeing a graph ring armed for a launch that never ran (forget) releases
// it first.
TEST(StagingMemops, ForgettingAnArmedRingReleasesIt) {
  sgtest::LeakCheck leaks;
  Pool pool(1024 * KiB, 2);
  std::vector<uint8_t> host(40 * KiB, 1), device(40 * KiB, 2);
  sg__stage_run *run = new_run(pool.p, SG__STAGE_H2D, host.data(), device.data(), host.size(),
                               16 * KiB, 2, 1, 1);
  ASSERT_NE(run, nullptr);
  Report rep;
  sg__stage_watch w = rep.watch();
  sg__stage_arm(run, &w, "graph copy");
  sg__stage_forget(run);
  EXPECT_FALSE(run->act.listed);
  EXPECT_EQ(sg__flag_load(&run->flags->ready[0]), SG__FLAG_RELEASE);
  sg__stage_run_free(run);
}

}  // namespace
