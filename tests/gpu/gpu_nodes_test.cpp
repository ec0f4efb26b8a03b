// Every node kind on the CUDA backend, in streams mode and in graph mode
// built both ways: copies in every direction and memory kind (device,
// pinned, pageable), memsets of 1-, 2- and 4-byte elements on device and
// host memory, kernels given as __global__ handles and as cudaKernel_t,
// host callbacks, stream functions, empty joins; kernels needing more than
// the default dynamic shared memory.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <numeric>
#include <random>
#include <thread>

#include "gpu_util.h"

namespace {

using gputest::DevMem;
using gputest::PinnedMem;

constexpr size_t kN = 40000;  // not a multiple of the block size
constexpr size_t kBytes = kN * 4;

struct HostCheck {
  const uint32_t *pinned;  // the D2H result, read when the callback runs
  uint64_t sum = 0;
  std::atomic<int> calls{0};
};

int sum_pinned(void *p) {
  HostCheck *h = static_cast<HostCheck *>(p);
  uint64_t s = 0;
  for (size_t i = 0; i < kN; i++) s += h->pinned[i];
  h->sum = s;
  h->calls.fetch_add(1);
  return 0;
}

// A stream function: copies `src` to `dst` and adds 5, on the stream given.
struct StreamWork {
  uint32_t *dst;
  const uint32_t *src;
  std::atomic<int> calls{0};
  std::atomic<int> released{0};
};

int stream_work(void *stream, void *p) {
  StreamWork *w = static_cast<StreamWork *>(p);
  w->calls.fetch_add(1);
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  if (cudaMemcpyAsync(w->dst, w->src, kBytes, cudaMemcpyDeviceToDevice, s) != cudaSuccess) return 1;
  uint32_t *dst = w->dst;
  uint32_t k = 5;
  size_t n = kN;
  void *args[] = {&dst, &k, &n};
  if (cudaLaunchKernel(gt_kernel_add_u32(), dim3(64), dim3(256), args, 0, s) != cudaSuccess)
    return 2;
  return 0;
}

void release_work(void *p) { static_cast<StreamWork *>(p)->released.fetch_add(1); }

class NodeKinds : public gputest::ModeTest {
 protected:
  void every_kind(sg_staging_policy policy, bool check_leaks);
};

TEST_P(NodeKinds, EveryKindGivesTheReferenceResult) { every_kind(SG_STAGING_NONE, true); }

// The same through the default staging policy (pageable copies may be
// staged or registered by src/staging): results only, since the staging
// pool and registration cache keep memory for the process.
TEST_P(NodeKinds, EveryKindWithDefaultStaging) { every_kind(SG_STAGING_AUTO, false); }

void NodeKinds::every_kind(sg_staging_policy policy, bool check_leaks) {
  const uint32_t salt = 0x5eed;
  const uint32_t rounds = 3;
  auto a_in = gputest::random_u32(1, kN), b_in = gputest::random_u32(2, kN);
  std::vector<uint32_t> pg_in = a_in;                      // pageable source
  PinnedMem pin_in(kBytes), pin_out(kBytes), pin16(kBytes), pin_f(kBytes);
  std::memcpy(pin_in.p, b_in.data(), kBytes);
  DevMem a(kBytes), b(kBytes), c(kBytes), d(kBytes), e(kBytes), f(kBytes);
  DevMem m8(kBytes), m16(kBytes), m32(kBytes), mu(kBytes);
  std::vector<uint32_t> pg_out(kN), pg_out2(kN), pg_e(kN), pg_m8(kN), pg_m16(kN), pg_m32(kN),
      pg_mu(kN), host_set(kN);

  sgtest::Graph g;
  sg_node n_a, n_b, n_mix, n_m8, n_m16, n_m32, n_mu, n_d2d, n_join, n_work, n_pin, n_pg, n_host,
      n_h2h, n_hset, n_pset, n_sfn, n_e, n_fset, n_kern, n_f, r8, r16, r32, ru;
  sg_copy_desc cp = {a.p, pg_in.data(), kBytes, SG_COPY_AUTO, "pageable->device"};
  SG_ASSERT_OK(sg_graph_add_copy(g, &cp, nullptr, 0, &n_a));
  cp = {b.p, pin_in.p, kBytes, SG_COPY_HOST_TO_DEVICE, "pinned->device"};
  SG_ASSERT_OK(sg_graph_add_copy(g, &cp, nullptr, 0, &n_b));
  sg_kernel_call mix;
  sg_kernels_mix_u32(&mix, c.u32(), a.u32(), b.u32(), salt, kN);
  mix.desc.name = "mix";
  sg_node ab[] = {n_a, n_b};
  SG_ASSERT_OK(sg_graph_add_kernel(g, &mix.desc, ab, 2, &n_mix));

  sg_memset_desc ms = {m8.p, 0x7f, 1, kBytes, "memset8"};
  SG_ASSERT_OK(sg_graph_add_memset(g, &ms, nullptr, 0, &n_m8));
  ms = {m16.p, 0x1234, 2, kN * 2, "memset16"};
  SG_ASSERT_OK(sg_graph_add_memset(g, &ms, nullptr, 0, &n_m16));
  ms = {m32.p, 0xdeadbeefu, 4, kN, "memset32"};
  SG_ASSERT_OK(sg_graph_add_memset(g, &ms, nullptr, 0, &n_m32));
  ms = {mu.p, 0x01010101u, 4, kN, "memset32-uniform"};
  SG_ASSERT_OK(sg_graph_add_memset(g, &ms, nullptr, 0, &n_mu));

  cp = {d.p, c.p, kBytes, SG_COPY_DEVICE_TO_DEVICE, "device->device"};
  SG_ASSERT_OK(sg_graph_add_copy(g, &cp, &n_mix, 1, &n_d2d));
  sg_node join_deps[] = {n_d2d, n_m8, n_m16, n_m32, n_mu};
  SG_ASSERT_OK(sg_graph_add_empty(g, "join", join_deps, 5, &n_join));
  sg_kernel_call work;
  sg_kernels_work_u32(&work, d.u32(), kN, rounds);
  SG_ASSERT_OK(sg_graph_add_kernel(g, &work.desc, &n_join, 1, &n_work));

  cp = {pin_out.p, d.p, kBytes, SG_COPY_DEVICE_TO_HOST, "device->pinned"};
  SG_ASSERT_OK(sg_graph_add_copy(g, &cp, &n_work, 1, &n_pin));
  cp = {pg_out.data(), d.p, kBytes, SG_COPY_AUTO, "device->pageable"};
  SG_ASSERT_OK(sg_graph_add_copy(g, &cp, &n_work, 1, &n_pg));
  HostCheck check;
  check.pinned = pin_out.u32();
  sg_host_desc hd = {sum_pinned, &check, "sum"};
  SG_ASSERT_OK(sg_graph_add_host(g, &hd, &n_pin, 1, &n_host));
  cp = {pg_out2.data(), pg_out.data(), kBytes, SG_COPY_HOST_TO_HOST, "pageable->pageable"};
  SG_ASSERT_OK(sg_graph_add_copy(g, &cp, &n_pg, 1, &n_h2h));
  ms = {host_set.data(), 0x55667788u, 4, kN, "memset-pageable"};
  SG_ASSERT_OK(sg_graph_add_memset(g, &ms, nullptr, 0, &n_hset));
  ms = {pin16.p, 0xbeef, 2, kN * 2, "memset-pinned"};
  SG_ASSERT_OK(sg_graph_add_memset(g, &ms, nullptr, 0, &n_pset));

  StreamWork sw;
  sw.dst = e.u32();
  sw.src = d.u32();
  sg_stream_fn_desc sf = {stream_work, &sw, release_work, nullptr, "stream-fn"};
  SG_ASSERT_OK(sg_graph_add_stream_fn(g, &sf, &n_work, 1, &n_sfn));
  cp = {pg_e.data(), e.p, kBytes, SG_COPY_AUTO, "e->pageable"};
  SG_ASSERT_OK(sg_graph_add_copy(g, &cp, &n_sfn, 1, &n_e));

  // A kernel given as a cudaKernel_t.
  ms = {f.p, 0, 1, kBytes, "zero-f"};
  SG_ASSERT_OK(sg_graph_add_memset(g, &ms, nullptr, 0, &n_fset));
  cudaKernel_t kernel;
  CUDA_ASSERT(cudaGetKernel(&kernel, gt_kernel_add_u32()));
  gputest::AddCall add(f.u32(), 9, kN, "cudaKernel_t");
  add.desc.func = reinterpret_cast<const void *>(kernel);
  add.desc.func_kind = SG_KERNEL_CUDA_KERNEL;
  SG_ASSERT_OK(sg_graph_add_kernel(g, &add.desc, &n_fset, 1, &n_kern));
  cp = {pin_f.p, f.p, kBytes, SG_COPY_AUTO, "f->pinned"};
  SG_ASSERT_OK(sg_graph_add_copy(g, &cp, &n_kern, 1, &n_f));

  cp = {pg_m8.data(), m8.p, kBytes, SG_COPY_AUTO, nullptr};
  SG_ASSERT_OK(sg_graph_add_copy(g, &cp, &n_join, 1, &r8));
  cp = {pg_m16.data(), m16.p, kBytes, SG_COPY_AUTO, nullptr};
  SG_ASSERT_OK(sg_graph_add_copy(g, &cp, &n_join, 1, &r16));
  cp = {pg_m32.data(), m32.p, kBytes, SG_COPY_AUTO, nullptr};
  SG_ASSERT_OK(sg_graph_add_copy(g, &cp, &n_join, 1, &r32));
  cp = {pg_mu.data(), mu.p, kBytes, SG_COPY_AUTO, nullptr};
  SG_ASSERT_OK(sg_graph_add_copy(g, &cp, &n_join, 1, &ru));

  // CPU reference.
  std::vector<uint32_t> want_d(kN), want_e(kN);
  uint64_t want_sum = 0;
  for (size_t i = 0; i < kN; i++) {
    want_d[i] = gputest::work_ref(sg_kernels_mix(a_in[i], b_in[i], salt), i, rounds);
    want_e[i] = want_d[i] + 5;
    want_sum += want_d[i];
  }

  sg_exec_options o = options();
  o.staging.policy = policy;
  {
    sgtest::Exec x;
    SG_ASSERT_OK(sg_exec_create(g, &o, &x.e));
    const long live = sg_live_allocations();
    for (int launch = 0; launch < 3; launch++) {
      for (DevMem *m : {&a, &b, &c, &d, &e, &f, &m8, &m16, &m32, &mu}) gputest::poison(m->p, kBytes);
      std::memset(pin_out.p, 0xA5, kBytes);
      std::memset(pin16.p, 0xA5, kBytes);
      std::memset(pin_f.p, 0xA5, kBytes);
      for (auto *v : {&pg_out, &pg_out2, &pg_e, &pg_m8, &pg_m16, &pg_m32, &pg_mu, &host_set})
        std::fill(v->begin(), v->end(), 0xA5A5A5A5u);
      SG_ASSERT_OK(sg_exec_launch(x, nullptr));
      SG_ASSERT_OK(sg_exec_wait(x));

      const uint32_t *pin = pin_out.u32();
      ASSERT_EQ(std::vector<uint32_t>(pin, pin + kN), want_d) << "device->pinned, launch " << launch;
      ASSERT_EQ(pg_out, want_d) << "device->pageable";
      ASSERT_EQ(pg_out2, want_d) << "pageable->pageable";
      ASSERT_EQ(check.sum, want_sum) << "the host callback ran before its copy finished";
      ASSERT_EQ(check.calls.load(), launch + 1);
      ASSERT_EQ(pg_e, want_e) << "stream function";
      const uint32_t *pf = pin_f.as<uint32_t>();
      for (size_t i = 0; i < kN; i++) ASSERT_EQ(pf[i], 9u) << "cudaKernel_t node, i=" << i;
      for (size_t i = 0; i < kN; i++) {
        ASSERT_EQ(pg_m8[i], 0x7f7f7f7fu) << i;
        ASSERT_EQ(pg_m16[i], 0x12341234u) << i;
        ASSERT_EQ(pg_m32[i], 0xdeadbeefu) << i;
        ASSERT_EQ(pg_mu[i], 0x01010101u) << i;
        ASSERT_EQ(host_set[i], 0x55667788u) << i;
        ASSERT_EQ(pin16.as<uint32_t>()[i], 0xbeefbeefu) << i;
      }
    }
    if (check_leaks) EXPECT_EQ(sg_live_allocations(), live) << "launches allocated";
    // Graph mode calls the stream function once, to capture it.
    EXPECT_EQ(sw.calls.load(), graph_mode() ? 1 : 3);
    sg_exec_stats st;
    SG_ASSERT_OK(sg_exec_get_stats(x, &st));
    EXPECT_EQ(st.launches, 3u);
    sg_exec_info info;
    SG_ASSERT_OK(sg_exec_get_info(x, &info));
    EXPECT_EQ(info.backend, SG_BACKEND_CUDA);
    EXPECT_EQ(info.mode, GetParam().mode);
    EXPECT_GE(info.stream_count, 1u);
  }
  // The graph still holds the stream function: released when it goes.
  EXPECT_EQ(sw.released.load(), 0);
  sg_graph_destroy(g.g);
  g.g = nullptr;
  EXPECT_EQ(sw.released.load(), 1);
}

// Launches ordered after the caller's earlier work and before its later
// work: the caller's slow kernel writes the input, the executable (a slow
// kernel first) turns it into the output, and the caller copies the output
// back in the same stream.
TEST_P(NodeKinds, ComposesWithTheCallersStream) {
  for (int which = 0; which < 2; which++) {
    DevMem in(kBytes), out(kBytes);
    PinnedMem back(kBytes);
    gputest::poison(in.p, kBytes);
    gputest::poison(out.p, kBytes);
    sgtest::Graph g;
    sg_kernel_call spin, mix;
    sg_kernels_spin(&spin, 20 * 1000 * 1000);
    sg_node n_spin, n_mix;
    SG_ASSERT_OK(sg_graph_add_kernel(g, &spin.desc, nullptr, 0, &n_spin));
    sg_kernels_mix_u32(&mix, out.u32(), in.u32(), in.u32(), 77, kN);
    SG_ASSERT_OK(sg_graph_add_kernel(g, &mix.desc, &n_spin, 1, &n_mix));
    sg_exec_options o = options();
    sgtest::Exec x;
    SG_ASSERT_OK(sg_exec_create(g, &o, &x.e));

    cudaStream_t user = nullptr;
    void *as_arg = SG_STREAM_LEGACY;
    if (which == 0) {
      CUDA_ASSERT(cudaStreamCreateWithFlags(&user, cudaStreamNonBlocking));
      as_arg = user;
    }
    cudaStream_t s = which == 0 ? user : cudaStreamLegacy;
    for (int round = 0; round < 2; round++) {
      std::memset(back.p, 0xA5, kBytes);
      const uint32_t value = 1000 + round;
      CUDA_ASSERT(gt_launch_slow_fill(in.u32(), value, kN, 20 * 1000 * 1000, s));
      SG_ASSERT_OK(sg_exec_launch(x, as_arg));
      CUDA_ASSERT(cudaMemcpyAsync(back.p, out.p, kBytes, cudaMemcpyDeviceToHost, s));
      CUDA_ASSERT(cudaStreamSynchronize(s));
      const uint32_t want = sg_kernels_mix(value, value, 77);
      for (size_t i = 0; i < kN; i++)
        ASSERT_EQ(back.as<uint32_t>()[i], want) << (which ? "legacy stream" : "user stream") << " i=" << i;
    }
    SG_ASSERT_OK(sg_exec_wait(x));
    if (user) CUDA_ASSERT(cudaStreamDestroy(user));
  }
}

// More dynamic shared memory than the default 48 KiB: the backend raises
// the function's limit (within the device's) at creation.
TEST_P(NodeKinds, LargeDynamicSharedMemory) {
  const uint32_t words = 100 * 1024 / 4;
  DevMem out(kBytes);
  gputest::poison(out.p, kBytes);
  gputest::KernelCall k(gt_kernel_shared_fill(), 8, 256, words * 4, "big-shared");
  k.arg(out.u32()).arg(kN).arg(words);
  sgtest::Graph g;
  SG_ASSERT_OK(sg_graph_add_kernel(g, &k.desc, nullptr, 0, nullptr));
  sg_exec_options o = options();
  sgtest::Exec x;
  SG_ASSERT_OK(sg_exec_create(g, &o, &x.e));
  SG_ASSERT_OK(sg_exec_launch(x, nullptr));
  SG_ASSERT_OK(sg_exec_wait(x));
  auto got = gputest::read_u32(out.p, kN);
  for (size_t i = 0; i < kN; i++) ASSERT_EQ(got[i], uint32_t(i * 3 + i % words)) << i;
}

// A graph without nodes launches, waits and updates like any other.
TEST_P(NodeKinds, EmptyGraph) {
  sgtest::Graph g;
  sg_exec_options o = options();
  sgtest::Exec x;
  SG_ASSERT_OK(sg_exec_create(g, &o, &x.e));
  for (int i = 0; i < 3; i++) SG_ASSERT_OK(sg_exec_launch(x, nullptr));
  SG_ASSERT_OK(sg_exec_wait(x));
  EXPECT_EQ(sg_exec_query(x), SG_OK);
}

// sg_mem_copy is synchronous: a pageable host->device copy has landed when
// it returns, so an executable launched right after (on its non-blocking
// streams) reads the new bytes. A large copy leaves its last chunks' DMA in
// flight when cudaMemcpy alone returns; the copy node reads the whole buffer.
TEST_P(NodeKinds, MemCopyHasLandedWhenItReturns) {
  const size_t words = size_t{64} << 18;  // 64 MiB
  DevMem src(words * 4), dst(words * 4);
  sgtest::Graph g;
  sg_copy_desc c = {dst.p, src.p, words * 4, SG_COPY_DEVICE_TO_DEVICE, "d2d"};
  SG_ASSERT_OK(sg_graph_add_copy(g, &c, nullptr, 0, nullptr));
  sg_exec_options o = options();
  sgtest::Exec x;
  SG_ASSERT_OK(sg_exec_create(g, &o, &x.e));
  const uint32_t base = std::random_device{}();
  std::vector<uint32_t> host(words), got(words);
  for (uint32_t round = 0; round < 6; round++) {
    const uint32_t seed = base + round;
    std::mt19937 rng(seed);
    for (auto &w : host) w = static_cast<uint32_t>(rng());
    SG_ASSERT_OK(sg_mem_copy(src.p, host.data(), words * 4));
    SG_ASSERT_OK(sg_exec_launch(x, nullptr));
    SG_ASSERT_OK(sg_exec_wait(x));
    SG_ASSERT_OK(sg_mem_copy(got.data(), dst.p, words * 4));
    for (size_t i = 0; i < words; i++)
      ASSERT_EQ(got[i], host[i]) << "word " << i << " of " << words << ", seed " << seed;
  }
}

// Regression (a launch hung behind its own host node): a kernel launched
// for the first time in the program, behind a host node that waits for a
// gate the caller opens only after sg_exec_launch returns (as a caller
// queuing launches behind a held one does). Under lazy module loading the
// kernel was loaded inside cudaLaunchKernel, which waited for the context,
// and so for the host node: sg_exec_launch never returned. The backend
// loads every kernel at creation. Should the launch block, a watchdog opens
// the gate after 20 s and the test fails instead of hanging.
TEST_P(NodeKinds, KernelFirstLaunchedBehindAWaitingHostNode) {
  DevMem out(kBytes);
  gputest::poison(out.p, kBytes);
  sgtest::HostGate gate;
  sgtest::Graph g;
  sg_host_desc h = {sgtest::HostGate::wait_fn, &gate, "gate"};
  sg_node held;
  SG_ASSERT_OK(sg_graph_add_host(g, &h, nullptr, 0, &held));
  gputest::KernelCall k(gt_kernel_first_use_fill(), 64, 256, 0, "first-use");
  k.arg(out.u32()).arg(uint32_t(0x5EED)).arg(kN);
  SG_ASSERT_OK(sg_graph_add_kernel(g, &k.desc, &held, 1, nullptr));
  sg_exec_options o = options();
  sgtest::Exec x;
  SG_ASSERT_OK(sg_exec_create(g, &o, &x.e));
  sgtest::Watchdog watchdog([&] { gate.release(); }, 20);
  sg_status st = sg_exec_launch(x, nullptr);
  watchdog.disarm();
  gate.release();
  EXPECT_FALSE(watchdog.fired())
      << "sg_exec_launch returned only once the watchdog opened the gate: the launch waited "
         "for its own host node (a kernel loaded at launch?)";
  SG_ASSERT_OK(st);
  SG_ASSERT_OK(sg_exec_wait(x));
  auto got = gputest::read_u32(out.p, kN);
  for (size_t i = 0; i < kN; i++) ASSERT_EQ(got[i], 0x5EEDu) << "element " << i;
}

INSTANTIATE_TEST_SUITE_P(Cuda, NodeKinds, ::testing::ValuesIn(gputest::all_modes()),
                         gputest::mode_name);

}  // namespace
