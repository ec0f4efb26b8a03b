// One graph over two GPUs, in every mode: random multi-device DAGs equal the
// CPU reference (peer copies direct, and through pinned host memory with
// SG_PEER_ACCESS=off); peer copies both ways with the node on either device;
// each node kind runs on its own device; in-place updates of a multi-device
// CUDA graph; device changes re-plan; data-parallel pipelines over both
// GPUs; bad devices refused; every CUDA call failing in turn. Skips, saying
// why, where fewer than two GPUs exist.
#include <atomic>
#include <cstdio>

#include "gpu_multi_util.h"
#include "multi_device_dag.h"

namespace {

using gputest::ModeCase;
using multitest::DevOn;

class MultiDevice : public ::testing::TestWithParam<ModeCase> {
 protected:
  void SetUp() override { SG_SKIP_WITHOUT_TWO_GPUS(); }
  sg_exec_options options(int device, unsigned limit = 0) const {
    return multitest::options_on(GetParam(), device, limit);
  }
  bool graph_mode() const { return GetParam().mode == SG_MODE_GRAPH; }
};

// ---- random DAGs ------------------------------------------------------------

void run_dag(const ModeCase &m, uint32_t seed, uint32_t max_nodes, const char *peer_env) {
  multitest::PeerAccessEnv env(peer_env);
  multidag::Dag d = multidag::make(seed, max_nodes, 2);
  std::vector<std::vector<uint32_t>> want = multidag::reference(d, seed);
  DevOn b0(0, std::max<size_t>(multidag::words_on(d, 0), 1) * 4);
  DevOn b1(1, std::max<size_t>(multidag::words_on(d, 1), 1) * 4);
  std::vector<uint32_t *> base = {b0.u32(), b1.u32()};
  sgtest::Graph g;
  multidag::build(g, d, base, seed);
  if (::testing::Test::HasFatalFailure()) return;
  unsigned limit = 1 + seed % 4;
  sg_exec_options o = multitest::options_on(m, d.exec_device, limit);
  sgtest::Exec x;
  SG_ASSERT_OK(sg_exec_create(g, &o, &x.e));
  cudaStream_t user = nullptr;
  CUDA_ASSERT(cudaSetDevice(d.exec_device));
  CUDA_ASSERT(cudaStreamCreateWithFlags(&user, cudaStreamNonBlocking));
  for (int launch = 0; launch < 2; launch++) {
    b0.poison();
    b1.poison();
    SG_ASSERT_OK(sg_exec_launch(x, launch ? static_cast<void *>(user) : nullptr));
    if (launch) CUDA_ASSERT(cudaStreamSynchronize(user));  // the caller's stream waits for it
    SG_ASSERT_OK(sg_exec_wait(x));
    for (uint32_t v = 0; v < d.n; v++) {
      const uint32_t *got = base[d.dev[v]] + d.slot_of[v] * multidag::kN;
      ASSERT_EQ(gputest::read_u32(got, multidag::kN), want[v])
          << m.name << ", seed " << seed << ", node " << v << " on device " << d.dev[v]
          << ", executable on device " << d.exec_device << ", " << d.n << " nodes, limit "
          << limit << ", launch " << launch << (peer_env ? ", SG_PEER_ACCESS=off" : "");
    }
  }
  CUDA_ASSERT(cudaStreamDestroy(user));
}

TEST_P(MultiDevice, RandomDagsEqualTheReference) {
  for (uint32_t seed = 1; seed <= 24; seed++) {
    run_dag(GetParam(), seed, 24, nullptr);
    if (HasFatalFailure()) return;
  }
}

TEST_P(MultiDevice, RandomDagsThroughHostStagingEqualTheReference) {
  for (uint32_t seed = 51; seed <= 58; seed++) {
    run_dag(GetParam(), seed, 16, "off");
    if (HasFatalFailure()) return;
  }
}

// ---- peer copies --------------------------------------------------------------

// src on device `from` -> dst on device `to`, the copy node on `node_device`.
void peer_copy_case(const ModeCase &m, int from, int to, int node_device, size_t bytes,
                    const char *peer_env) {
  multitest::PeerAccessEnv env(peer_env);
  DevOn src(from, bytes), dst(to, bytes);
  std::vector<uint8_t> data(bytes);
  std::mt19937 rng(static_cast<uint32_t>(bytes * 31 + from * 7 + to));
  for (auto &c : data) c = static_cast<uint8_t>(rng());
  CUDA_ASSERT(cudaMemcpy(src.p, data.data(), bytes, cudaMemcpyDefault));
  CUDA_ASSERT(cudaDeviceSynchronize());  // the pageable copy's DMA may still be under way
  sgtest::Graph g;
  sg_copy_desc c = {dst.p, src.p, bytes, SG_COPY_AUTO, "peer"};
  sg_node n{};
  SG_ASSERT_OK(sg_graph_add_copy(g, &c, nullptr, 0, &n));
  SG_ASSERT_OK(sg_graph_set_device(g, n, node_device));
  sg_exec_options o = multitest::options_on(m, 0);
  sgtest::Exec x;
  SG_ASSERT_OK(sg_exec_create(g, &o, &x.e));
  for (int launch = 0; launch < 2; launch++) {
    dst.poison();
    SG_ASSERT_OK(sg_exec_launch(x, nullptr));
    SG_ASSERT_OK(sg_exec_wait(x));
    std::vector<uint8_t> got(bytes);
    CUDA_ASSERT(cudaMemcpy(got.data(), dst.p, bytes, cudaMemcpyDefault));
    size_t bad = 0;
    while (bad < bytes && got[bad] == data[bad]) bad++;
    ASSERT_EQ(bad, bytes) << m.name << ": " << bytes << " bytes " << from << " -> " << to
                          << " on device " << node_device << (peer_env ? " (host staged)" : "")
                          << ": first wrong byte " << bad;
  }
}

TEST_P(MultiDevice, PeerCopiesBothWaysFromEitherDevice) {
  for (size_t bytes : {size_t{4096}, size_t{(64u << 20) + 12}})
    for (int from : {0, 1})
      for (int node : {0, 1}) {
        peer_copy_case(GetParam(), from, 1 - from, node, bytes, nullptr);
        if (HasFatalFailure()) return;
      }
  // The library enabled peer access for the pair (cached, never disabled):
  // enabling it again says so.
  if (multitest::peer_pair(0, 1)) {
    CUDA_ASSERT(cudaSetDevice(0));
    cudaError_t again = cudaDeviceEnablePeerAccess(1, 0);
    cudaGetLastError();
    EXPECT_EQ(again, cudaErrorPeerAccessAlreadyEnabled)
        << "peer access 0 -> 1 was not enabled by the library: " << cudaGetErrorName(again);
  } else {
    std::printf("note: devices 0 and 1 have no peer access; copies went through host memory\n");
  }
}

TEST_P(MultiDevice, HostStagedPeerCopiesOfAwkwardSizes) {
  for (size_t bytes : {size_t{3}, size_t{1u << 20}, size_t{(37u << 20) + 5}})
    for (int from : {0, 1}) {
      peer_copy_case(GetParam(), from, 1 - from, from, bytes, "off");
      if (HasFatalFailure()) return;
    }
}

// ---- each node kind on its own device ---------------------------------------

struct SeenBy {
  std::atomic<int> device{-1}, stream_device{-1}, calls{0};
};

int stream_fn_on(void *stream, void *user) {
  auto *seen = static_cast<SeenBy *>(user);
  int d = -1, sd = -1;
  cudaGetDevice(&d);
  cudaStreamGetDevice(static_cast<cudaStream_t>(stream), &sd);
  seen->device = d;
  seen->stream_device = sd;
  seen->calls++;
  return 0;
}

int host_count(void *user) {
  static_cast<SeenBy *>(user)->calls++;
  return 0;
}

TEST_P(MultiDevice, EachKindRunsOnItsDevice) {
  // On device 1 (the executable on device 0): memset -> kernel (add 5) ->
  // stream function (sees device 1) -> copy to pinned host -> host node.
  const size_t n = 4096;
  DevOn buf(1, n * 4);
  gputest::PinnedMem out(n * 4);
  SeenBy seen, host;
  sgtest::Graph g;
  sg_memset_desc ms = {buf.p, 7, 4, n, "memset"};
  gputest::AddCall add(buf.u32(), 5, n, "add");
  sg_stream_fn_desc sf = {stream_fn_on, &seen, nullptr, nullptr, "stream-fn"};
  sg_copy_desc down = {out.p, buf.p, n * 4, SG_COPY_DEVICE_TO_HOST, "down"};
  sg_host_desc h = {host_count, &host, "host"};
  sg_node nodes[5];
  SG_ASSERT_OK(sg_graph_add_memset(g, &ms, nullptr, 0, &nodes[0]));
  SG_ASSERT_OK(sg_graph_add_kernel(g, &add.desc, &nodes[0], 1, &nodes[1]));
  SG_ASSERT_OK(sg_graph_add_stream_fn(g, &sf, &nodes[1], 1, &nodes[2]));
  SG_ASSERT_OK(sg_graph_add_copy(g, &down, &nodes[2], 1, &nodes[3]));
  SG_ASSERT_OK(sg_graph_add_host(g, &h, &nodes[3], 1, &nodes[4]));
  for (sg_node nd : nodes) SG_ASSERT_OK(sg_graph_set_device(g, nd, 1));
  sg_exec_options o = options(0);
  sgtest::Exec x;
  SG_ASSERT_OK(sg_exec_create(g, &o, &x.e));
  for (int launch = 0; launch < 3; launch++) {
    std::fill(out.u32(), out.u32() + n, 0u);
    SG_ASSERT_OK(sg_exec_launch(x, nullptr));
    SG_ASSERT_OK(sg_exec_wait(x));
    for (size_t i = 0; i < n; i++) ASSERT_EQ(out.u32()[i], 12u) << "element " << i;
  }
  EXPECT_EQ(host.calls, 3);
  EXPECT_GE(seen.calls, 1);
  EXPECT_EQ(seen.device, 1) << "the stream function ran with another device current";
  EXPECT_EQ(seen.stream_device, 1) << "the stream function got a stream of another device";
  const sg_plan *plan = nullptr;
  SG_ASSERT_OK(sg_exec_get_plan(x, &plan));
  int device = -1;
  SG_ASSERT_OK(sg_plan_get_stream_device(plan, 0, &device));
  EXPECT_EQ(device, 1);
}

// ---- in-place updates of a multi-device graph ------------------------------

TEST_P(MultiDevice, UpdatesApplyInPlaceAcrossDevices) {
  // k0 (device 0, a0 += 1) -> peer copy a0 -> b1 -> k1 (device 1, b1 += 10)
  // -> down (b1 -> pinned host).
  const size_t n = 1 << 16;
  DevOn a0(0, n * 4), b1(1, n * 4), c1(1, n * 4), a1(1, n * 4);
  gputest::PinnedMem out(n * 4);
  std::vector<uint32_t> init = gputest::random_u32(7, n);
  gputest::write_u32(a0.p, init);
  sgtest::Graph g;
  gputest::AddCall k0(a0.u32(), 1, n, "k0");
  sg_copy_desc peer = {b1.p, a0.p, n * 4, SG_COPY_DEVICE_TO_DEVICE, "peer"};
  gputest::AddCall k1(b1.u32(), 10, n, "k1");
  sg_copy_desc down = {out.p, b1.p, n * 4, SG_COPY_DEVICE_TO_HOST, "down"};
  sg_node nk0{}, np{}, nk1{}, nd{};
  SG_ASSERT_OK(sg_graph_add_kernel(g, &k0.desc, nullptr, 0, &nk0));
  SG_ASSERT_OK(sg_graph_add_copy(g, &peer, &nk0, 1, &np));
  SG_ASSERT_OK(sg_graph_add_kernel(g, &k1.desc, &np, 1, &nk1));
  SG_ASSERT_OK(sg_graph_add_copy(g, &down, &nk1, 1, &nd));
  SG_ASSERT_OK(sg_graph_set_device(g, nk1, 1));
  SG_ASSERT_OK(sg_graph_set_device(g, nd, 1));
  sg_exec_options o = options(0);
  sgtest::Exec x;
  SG_ASSERT_OK(sg_exec_create(g, &o, &x.e));
  uint32_t added = 0;  // what k0 has added to a0 so far
  auto check = [&](uint32_t k1_add, const char *what) {
    std::fill(out.u32(), out.u32() + n, 0u);
    SG_ASSERT_OK(sg_exec_launch(x, nullptr));
    SG_ASSERT_OK(sg_exec_wait(x));
    added += 1;
    for (size_t i = 0; i < n; i++)
      ASSERT_EQ(out.u32()[i], init[i] + added + k1_add) << what << ", element " << i;
  };
  check(10, "first launch");
  if (HasFatalFailure()) return;
  sg_exec_stats before, after;
  SG_ASSERT_OK(sg_exec_get_stats(x, &before));
  // kernel on device 1: new argument
  gputest::AddCall k1b(b1.u32(), 20, n, "k1");
  SG_ASSERT_OK(sg_exec_set_kernel(x, nk1, &k1b.desc));
  check(20, "after set_kernel on device 1");
  if (HasFatalFailure()) return;
  // peer copy and its readers to another buffer of the same devices
  sg_copy_desc peer2 = {c1.p, a0.p, n * 4, SG_COPY_DEVICE_TO_DEVICE, nullptr};
  gputest::AddCall k1c(c1.u32(), 30, n, "k1");
  sg_copy_desc down2 = {out.p, c1.p, n * 4, SG_COPY_DEVICE_TO_HOST, nullptr};
  SG_ASSERT_OK(sg_exec_set_copy(x, np, &peer2));
  SG_ASSERT_OK(sg_exec_set_kernel(x, nk1, &k1c.desc));
  SG_ASSERT_OK(sg_exec_set_copy(x, nd, &down2));
  check(30, "after set_copy between the same devices");
  if (HasFatalFailure()) return;
  SG_ASSERT_OK(sg_exec_get_stats(x, &after));
  if (graph_mode()) {
    EXPECT_EQ(after.in_place_updates - before.in_place_updates, 4u)
        << "kernel and memcpy nodes of a multi-device graph update in place";
    EXPECT_EQ(after.rebuilds, before.rebuilds);
  }
  // the peer copy now reads memory of device 1 too (a same-device copy
  // run on device 0's stream by default): whatever the driver allows, the
  // result is right, and a refusal rebuilds.
  gputest::write_u32(a1.p, init);
  sg_copy_desc peer3 = {c1.p, a1.p, n * 4, SG_COPY_DEVICE_TO_DEVICE, nullptr};
  SG_ASSERT_OK(sg_exec_set_copy(x, np, &peer3));
  std::fill(out.u32(), out.u32() + n, 0u);
  SG_ASSERT_OK(sg_exec_launch(x, nullptr));
  SG_ASSERT_OK(sg_exec_wait(x));
  for (size_t i = 0; i < n; i++) ASSERT_EQ(out.u32()[i], init[i] + 30) << "element " << i;
  sg_exec_stats last;
  SG_ASSERT_OK(sg_exec_get_stats(x, &last));
  std::printf("%s: memcpy node moved to other devices' memory: %s\n", GetParam().name,
              last.rebuilds > after.rebuilds ? "rebuilt (the driver refused in place)"
                                             : "updated in place");
}

TEST_P(MultiDevice, ChangingANodesDeviceReplans) {
  const size_t n = 1024;
  DevOn a(0, n * 4), b(1, n * 4);
  gputest::write_u32(a.p, std::vector<uint32_t>(n, 1));
  gputest::write_u32(b.p, std::vector<uint32_t>(n, 100));
  sgtest::Graph g;
  gputest::AddCall k(a.u32(), 2, n, "k");
  sg_node nk{};
  SG_ASSERT_OK(sg_graph_add_kernel(g, &k.desc, nullptr, 0, &nk));
  sg_exec_options o = options(0);
  sgtest::Exec x;
  SG_ASSERT_OK(sg_exec_create(g, &o, &x.e));
  SG_ASSERT_OK(sg_exec_launch(x, nullptr));
  SG_ASSERT_OK(sg_exec_wait(x));
  EXPECT_EQ(gputest::read_u32(a.p, n), std::vector<uint32_t>(n, 3));
  // the kernel moves to device 1, on device 1's memory
  gputest::AddCall k2(b.u32(), 2, n, "k");
  SG_ASSERT_OK(sg_graph_set_kernel(g, nk, &k2.desc));
  SG_ASSERT_OK(sg_graph_set_device(g, nk, 1));
  SG_ASSERT_OK(sg_exec_update(x, g));
  sg_exec_stats st;
  SG_ASSERT_OK(sg_exec_get_stats(x, &st));
  EXPECT_EQ(st.rebuilds, 1u);
  SG_ASSERT_OK(sg_exec_launch(x, nullptr));
  SG_ASSERT_OK(sg_exec_wait(x));
  EXPECT_EQ(gputest::read_u32(b.p, n), std::vector<uint32_t>(n, 102));
  EXPECT_EQ(gputest::read_u32(a.p, n), std::vector<uint32_t>(n, 3));
}

TEST_P(MultiDevice, ADeviceThatDoesNotExistIsRefused) {
  sgtest::Graph g;
  sg_host_desc h = {host_count, nullptr, "far"};
  sg_node n{};
  SG_ASSERT_OK(sg_graph_add_host(g, &h, nullptr, 0, &n));
  int count = sg_cuda_device_count();
  SG_ASSERT_OK(sg_graph_set_device(g, n, count));
  sg_exec_options o = options(0);
  sgtest::Exec x;
  EXPECT_EQ(sg_exec_create(g, &o, &x.e), SG_ERR_BACKEND_UNAVAILABLE);
  EXPECT_NE(std::string(sg_last_error()).find("'far' (#0)"), std::string::npos) << sg_last_error();
  EXPECT_EQ(x.e, nullptr);
}

INSTANTIATE_TEST_SUITE_P(Cuda, MultiDevice, ::testing::ValuesIn(gputest::all_modes()),
                         gputest::mode_name);

// ---- data-parallel pipelines --------------------------------------------------

struct DpInstance {
  void *dev = nullptr;
};

struct DpCtx {
  sg_node up{}, work{}, down{};
  size_t n = 0;
  std::vector<uint64_t> completed;
  std::vector<sg_status> status;
  std::atomic<int> wrong_device{0};
};

int dp_setup(sg_pipeline_instance *inst, void *user) {
  auto *ctx = static_cast<DpCtx *>(user);
  sg_exec_info info;
  if (sg_exec_get_info(inst->exec, &info) != SG_OK) return 1;
  if (info.device != static_cast<int>(inst->index % 2)) ctx->wrong_device++;
  auto *mine = new DpInstance;
  if (sg_mem_alloc(SG_BACKEND_CUDA, SG_MEMORY_DEVICE, info.device, ctx->n * 4, &mine->dev)) {
    delete mine;
    return 2;
  }
  sg_pipeline_bind binds[] = {
      sg_bind_copy_dst(ctx->up, mine->dev),
      sg_bind_kernel_arg(ctx->work, 0, &mine->dev, sizeof mine->dev),
      sg_bind_copy_src(ctx->down, mine->dev),
  };
  if (sg_pipeline_instance_bind(inst, binds, 3) != SG_OK) {
    sg_mem_free(mine->dev);
    delete mine;
    return 3;
  }
  inst->data = mine;
  return 0;
}

void dp_teardown(sg_pipeline_instance *inst, void *) {
  auto *mine = static_cast<DpInstance *>(inst->data);
  sg_mem_free(mine->dev);
  delete mine;
}

void dp_complete(uint64_t batch, sg_status st, void *, void *user) {
  auto *ctx = static_cast<DpCtx *>(user);
  ctx->completed.push_back(batch);
  ctx->status.push_back(st);
}

TEST(MultiDevicePipeline, DataParallelOverTwoGpusInBatchOrder) {
  SG_SKIP_WITHOUT_TWO_GPUS();
  const size_t n = 1 << 18;
  const unsigned batches = 24, rounds = 8;
  DpCtx ctx;
  ctx.n = n;
  void *tmpl = nullptr;
  SG_ASSERT_OK(sg_mem_alloc(SG_BACKEND_CUDA, SG_MEMORY_DEVICE, 0, n * 4, &tmpl));
  std::vector<std::unique_ptr<gputest::PinnedMem>> in, out;
  for (unsigned b = 0; b < batches; b++) {
    in.emplace_back(new gputest::PinnedMem(n * 4));
    out.emplace_back(new gputest::PinnedMem(n * 4));
    for (size_t i = 0; i < n; i++) in[b]->u32()[i] = static_cast<uint32_t>(i * 2654435761u + b);
    std::fill(out[b]->u32(), out[b]->u32() + n, 0xA5A5A5A5u);
  }
  sgtest::Graph g;
  sg_copy_desc up = {tmpl, in[0]->p, n * 4, SG_COPY_HOST_TO_DEVICE, "up"};
  SG_ASSERT_OK(sg_graph_add_copy(g, &up, nullptr, 0, &ctx.up));
  sg_kernel_call call;
  sg_kernels_work_u32(&call, static_cast<uint32_t *>(tmpl), n, rounds);
  SG_ASSERT_OK(sg_graph_add_kernel(g, &call.desc, &ctx.up, 1, &ctx.work));
  sg_copy_desc down = {out[0]->p, tmpl, n * 4, SG_COPY_DEVICE_TO_HOST, "down"};
  SG_ASSERT_OK(sg_graph_add_copy(g, &down, &ctx.work, 1, &ctx.down));
  for (const ModeCase &m : gputest::all_modes()) {
    ctx.completed.clear();
    ctx.status.clear();
    sg_pipeline_options o;
    sg_pipeline_options_init(&o);
    o.depth = 4;
    o.exec = gputest::cuda_options(m);
    const int devices[2] = {0, 1};
    o.devices = devices;
    o.device_count = 2;
    o.setup = dp_setup;
    o.teardown = dp_teardown;
    o.on_complete = dp_complete;
    o.user_data = &ctx;
    sg_pipeline *p = nullptr;
    SG_ASSERT_OK(sg_pipeline_create(g, &o, &p));
    for (unsigned b = 0; b < batches; b++) {
      std::fill(out[b]->u32(), out[b]->u32() + n, 0xA5A5A5A5u);
      sg_pipeline_bind binds[] = {sg_bind_copy_src(ctx.up, in[b]->p),
                                  sg_bind_copy_dst(ctx.down, out[b]->p)};
      sg_pipeline_batch batch = {binds, 2, nullptr};
      SG_ASSERT_OK(sg_pipeline_submit(p, &batch, nullptr));
    }
    SG_ASSERT_OK(sg_pipeline_drain(p));
    SG_ASSERT_OK(sg_pipeline_destroy(p));
    EXPECT_EQ(ctx.wrong_device, 0) << m.name;
    ASSERT_EQ(ctx.completed.size(), batches) << m.name;
    for (unsigned b = 0; b < batches; b++) {
      EXPECT_EQ(ctx.completed[b], b) << m.name << ": completions out of order";
      EXPECT_EQ(ctx.status[b], SG_OK) << m.name;
      for (size_t i = 0; i < n; i += 977)
        ASSERT_EQ(out[b]->u32()[i], gputest::work_ref(in[b]->u32()[i], i, rounds))
            << m.name << ", batch " << b << " (device " << b % 4 % 2 << "), element " << i;
    }
  }
  sg_mem_free(tmpl);
}

// ---- faults -------------------------------------------------------------------

// k0 (device 0, a += 1) -> copy a -> b (to device 1) -> k1 (device 1, b += 2):
// create, launch, wait, destroy. b ends 8 when a starts 5.
sg_status fault_scenario(sg_graph *g, const sg_exec_options &o) {
  sg_exec *x = nullptr;
  sg_status st = sg_exec_create(g, &o, &x);
  if (!st) st = sg_exec_launch(x, nullptr);
  if (!st) st = sg_exec_wait(x);
  if (x) {
    sg_status d = sg_exec_destroy(x);
    if (!st) st = d;
  }
  return st;
}

TEST(MultiDeviceFaults, EveryCudaCallFailingIsReportedAndFreed) {
  SG_SKIP_WITHOUT_TWO_GPUS();
  const size_t n = 4096;
  DevOn a(0, n * 4), b(1, n * 4);
  for (const ModeCase &m : gputest::all_modes()) {
    for (const char *env : {static_cast<const char *>(nullptr), "off"}) {
      multitest::PeerAccessEnv peer(env);
      const char *how = env ? "host-staged" : "peer";
      sgtest::Graph g;
      gputest::AddCall k0(a.u32(), 1, n, "k0");
      sg_copy_desc c = {b.p, a.p, n * 4, SG_COPY_DEVICE_TO_DEVICE, "copy"};
      gputest::AddCall k1(b.u32(), 2, n, "k1");
      sg_node n0{}, n1{}, n2{};
      SG_ASSERT_OK(sg_graph_add_kernel(g, &k0.desc, nullptr, 0, &n0));
      SG_ASSERT_OK(sg_graph_add_copy(g, &c, &n0, 1, &n1));
      SG_ASSERT_OK(sg_graph_add_kernel(g, &k1.desc, &n1, 1, &n2));
      SG_ASSERT_OK(sg_graph_set_device(g, n2, 1));
      sg_exec_options o = gputest::cuda_options(m);
      SG_ASSERT_OK(fault_scenario(g, o));  // an undisturbed run first: lazy process-wide state
      long live = sg_live_allocations();
      int failures = 0;
      for (unsigned long nth = 1;; nth++) {
        ASSERT_LT(nth, 3000u) << m.name << ", " << how << ": the fault never stops firing";
        gputest::write_u32(a.p, std::vector<uint32_t>(n, 5));
        b.poison();
        sg_fault_arm(SG_FAULT_CUDA, nth);
        sg_status st = fault_scenario(g, o);
        bool fired = sg_fault_fired();
        sg_fault_arm(SG_FAULT_ALL, 0);
        CUDA_ASSERT(cudaDeviceSynchronize());
        ASSERT_EQ(sg_live_allocations(), live) << m.name << ", " << how << ": leak at call " << nth;
        if (st) {
          failures++;
          EXPECT_STRNE(sg_last_error(), "") << m.name << ", " << how << ", call " << nth;
        } else {
          ASSERT_EQ(gputest::read_u32(b.p, n), std::vector<uint32_t>(n, 8))
              << m.name << ", " << how << ", call " << nth << " (undisturbed or absorbed)";
        }
        if (!fired) break;
      }
      EXPECT_GT(failures, 5) << m.name << ", " << how;
    }
  }
}

}  // namespace
