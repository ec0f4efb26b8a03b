// Conditional nodes on the GPU (graph mode, both builds, and streams mode):
// the same graph runs on the host backend (host twins) and on the GPU, and
// the memory must match bit for bit after every launch; random graphs with
// nested bodies and data-dependent loops; refusals of what CUDA forbids in a
// body, which every CUDA mode applies.
#include <cuda_runtime_api.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "gpu_conditional_kernels.h"
#include "gpu_util.h"
#include "streamgraph/cond_device.h"

namespace {

int driver_version() {
  int v = 0;
  return cudaDriverGetVersion(&v) == cudaSuccess ? v : 0;
}

#define SG_SKIP_WITHOUT_CONDITIONALS(need)                                           \
  do {                                                                                \
    SG_SKIP_WITHOUT_GPU();                                                            \
    if (driver_version() < (need)) GTEST_SKIP() << "driver older than CUDA " << (need); \
  } while (0)

sg_exec_options graph_options() {
  return gputest::cuda_options({"graph_explicit", SG_MODE_GRAPH, SG_BUILD_EXPLICIT});
}

sg_exec_options capture_options() {
  return gputest::cuda_options({"graph_capture", SG_MODE_GRAPH, SG_BUILD_CAPTURE});
}

sg_exec_options streams_options(unsigned max_streams = 0) {
  return gputest::cuda_options({"streams", SG_MODE_STREAMS, SG_BUILD_EXPLICIT}, max_streams);
}

const char *way(const sg_exec_options &o) {
  return o.backend == SG_BACKEND_HOST    ? "host"
         : o.mode == SG_MODE_STREAMS      ? "streams"
         : o.build == SG_BUILD_CAPTURE    ? "graph (capture)"
                                          : "graph (explicit)";
}

struct Managed {
  uint32_t *p = nullptr;
  size_t n = 0;
  explicit Managed(size_t words) : n(words ? words : 1) {
    EXPECT_EQ(cudaMallocManaged(reinterpret_cast<void **>(&p), n * sizeof *p), cudaSuccess);
    if (p) std::memset(p, 0, n * sizeof *p);
  }
  ~Managed() {
    if (p) cudaFree(p);
  }
  std::vector<uint32_t> read() const {
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    return std::vector<uint32_t>(p, p + n);
  }
  void clear() {
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    std::memset(p, 0, n * sizeof *p);
  }
};

// Runs `g` `launches` times on `o`, reading `mem` after each launch.
std::vector<std::vector<uint32_t>> run(sg_graph *g, const sg_exec_options &o, Managed &mem,
                                       int launches) {
  std::vector<std::vector<uint32_t>> out;
  mem.clear();
  sg_exec *e = nullptr;
  sg_status st = sg_exec_create(g, &o, &e);
  EXPECT_EQ(st, SG_OK) << sg_last_error();
  if (st) return out;
  for (int i = 0; i < launches; i++) {
    EXPECT_EQ(sg_exec_launch(e, nullptr), SG_OK) << sg_last_error();
    EXPECT_TRUE(sgtest::poll_until([&] { return sg_exec_query(e) != SG_NOT_READY; }))
        << "launch " << i + 1 << " did not finish";
    EXPECT_EQ(sg_exec_wait(e), SG_OK) << sg_last_error();
    out.push_back(mem.read());
  }
  sg_exec_destroy(e);
  return out;
}

// ---- the simple loop --------------------------------------------------------

sg_status add_state_kernel(sg_graph *g, const void *func, sg_host_twin_fn twin, uint32_t *state,
                           sg_cond c, const char *name, const sg_node *deps, size_t nd,
                           sg_node *out) {
  sg_cond_ref ph = {0, nullptr};
  void *args[2] = {&state, &ph};
  size_t sizes[2] = {sizeof state, sizeof ph};
  sg_kernel_desc k = {};
  k.func = func;
  k.grid = {1, 1, 1};
  k.block = {32, 1, 1};
  k.args = args;
  k.arg_sizes = sizes;
  k.arg_count = 2;
  k.host_twin = twin;
  k.name = name;
  sg_status st = sg_graph_add_kernel(g, &k, deps, nd, out);
  return st ? st : sg_graph_kernel_bind_cond(g, *out, 1, c);
}

TEST(ConditionalGpu, WhileLoopOfKIterationsMatchesTheHost) {
  SG_SKIP_WITHOUT_CONDITIONALS(12040);
  Managed state(3);
  sgtest::Graph g;
  sg_cond c;
  SG_ASSERT_OK(sg_graph_cond_create(g, 0, SG_COND_ASSIGN_DEFAULT, &c));
  sg_node init, loop, step;
  SG_ASSERT_OK(add_state_kernel(g, gc_loop_init_kernel(), gc_loop_init_twin, state.p, c, "init",
                                nullptr, 0, &init));
  sg_cond_node_desc d = {SG_COND_WHILE, c, 1, "loop"};
  sg_graph *body;
  SG_ASSERT_OK(sg_graph_add_conditional(g, &d, &init, 1, &loop, &body));
  SG_ASSERT_OK(add_state_kernel(body, gc_loop_step_kernel(), gc_loop_step_twin, state.p, c,
                                "step", nullptr, 0, &step));
  std::mt19937 rng(static_cast<uint32_t>(std::random_device{}()));
  for (uint32_t k : {1000u, 0u, 1u, static_cast<uint32_t>(rng() % 300)}) {
    SCOPED_TRACE("K = " + std::to_string(k));
    for (const sg_exec_options &o :
         {sgtest::host_options(), graph_options(), capture_options(), streams_options()}) {
      state.clear();
      state.p[0] = k;
      sgtest::Exec e;
      SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
      SG_ASSERT_OK(sg_exec_launch(e, nullptr));
      ASSERT_TRUE(sgtest::poll_until([&] { return sg_exec_query(e) != SG_NOT_READY; }));
      SG_ASSERT_OK(sg_exec_wait(e));
      std::vector<uint32_t> s = state.read();
      EXPECT_EQ(s[0], 0u);
      EXPECT_EQ(s[2], k) << way(o);
    }
  }
}

// ---- random graphs ----------------------------------------------------------

struct GpuBuilder {
  std::mt19937 rng;
  sg_graph *root = nullptr;
  uint32_t *mem = nullptr;
  uint32_t slots = 0;
  unsigned cond_nodes = 0;
  bool full = false;  // IF/ELSE and SWITCH allowed (CUDA 12.8)
  explicit GpuBuilder(uint32_t seed) : rng(seed) {}

  sg_status add(sg_graph *g, const gc_spec &s, sg_cond c, const std::vector<sg_node> &deps,
                sg_node *out) {
    sg_cond_ref ph = {0, nullptr};
    uint32_t *m = mem;
    void *args[3] = {&m, const_cast<gc_spec *>(&s), &ph};
    size_t sizes[3] = {sizeof m, sizeof s, sizeof ph};
    sg_kernel_desc k = {};
    k.func = gc_spec_kernel();
    k.grid = {1, 1, 1};
    k.block = {32, 1, 1};
    k.args = args;
    k.arg_sizes = sizes;
    k.arg_count = 3;
    k.host_twin = gc_spec_twin;
    sg_status st = sg_graph_add_kernel(g, &k, deps.data(), deps.size(), out);
    if (!st && s.op != GC_MIX) st = sg_graph_kernel_bind_cond(g, *out, 2, c);
    return st;
  }

  gc_spec spec(uint32_t op, const std::vector<uint32_t> &in) {
    gc_spec s = {};
    s.op = op;
    s.dst = slots++;
    s.n_in = 0;
    for (size_t i = in.size(); i-- > 0 && s.n_in < GC_MAX_IN;) s.in[s.n_in++] = in[i];
    s.salt = rng();
    return s;
  }

  std::vector<uint32_t> build(sg_graph *g, unsigned depth, const std::vector<uint32_t> &ctx,
                              const gc_spec *loop, sg_cond loop_cond) {
    const uint32_t n = 1 + rng() % (depth == 0 ? 8u : 3u);
    std::vector<sg_node> handles;
    std::vector<std::vector<uint32_t>> outs;
    std::vector<uint32_t> written;
    for (uint32_t v = 0; v < n; v++) {
      std::vector<uint32_t> inputs;
      std::vector<sg_node> deps;
      for (uint32_t u = 0; u < handles.size(); u++)
        if (rng() % 10 < 3) {
          inputs.insert(inputs.end(), outs[u].begin(), outs[u].end());
          deps.push_back(handles[u]);
        }
      if (deps.empty()) inputs = ctx;
      if (depth < 3 && rng() % 4 == 0) {
        sg_cond_kind kind = static_cast<sg_cond_kind>(rng() % 3);
        if (!full) kind = rng() % 2 ? SG_COND_IF : SG_COND_WHILE;
        const unsigned bodies = kind == SG_COND_WHILE ? 1 : !full ? 1 : kind == SG_COND_IF
                                                                             ? 1 + rng() % 2
                                                                             : 1 + rng() % 3;
        sg_cond c;
        EXPECT_EQ(sg_graph_cond_create(root, rng() % 3, rng() % 2 ? SG_COND_ASSIGN_DEFAULT : 0,
                                       &c),
                  SG_OK);
        gc_spec d = spec(GC_DECIDE, inputs);
        d.kind = kind;
        d.bodies = bodies;
        if (kind == SG_COND_WHILE) d.counter = slots++;
        sg_node dn, cn;
        EXPECT_EQ(add(g, d, c, deps, &dn), SG_OK) << sg_last_error();
        handles.push_back(dn);
        outs.push_back({d.dst});
        written.push_back(d.dst);
        sg_cond_node_desc cd = {kind, c, bodies, "cond"};
        std::vector<sg_graph *> bg(bodies);
        EXPECT_EQ(sg_graph_add_conditional(g, &cd, &dn, 1, &cn, bg.data()), SG_OK)
            << sg_last_error();
        std::vector<uint32_t> body_ctx = inputs, cond_out = {d.dst};
        body_ctx.push_back(d.dst);
        for (unsigned b = 0; b < bodies; b++) {
          auto w = build(bg[b], depth + 1, body_ctx, kind == SG_COND_WHILE ? &d : nullptr, c);
          cond_out.insert(cond_out.end(), w.begin(), w.end());
        }
        cond_nodes++;
        handles.push_back(cn);
        written.insert(written.end(), cond_out.begin(), cond_out.end());
        outs.push_back(cond_out);
      } else {
        gc_spec s = spec(GC_MIX, inputs);
        sg_node h;
        EXPECT_EQ(add(g, s, sg_cond{0}, deps, &h), SG_OK) << sg_last_error();
        handles.push_back(h);
        outs.push_back({s.dst});
        written.push_back(s.dst);
      }
    }
    if (loop) {
      std::vector<uint32_t> inputs;
      for (auto &o : outs) inputs.insert(inputs.end(), o.begin(), o.end());
      gc_spec s = spec(GC_STEP, inputs);
      s.counter = loop->counter;
      s.kind = SG_COND_WHILE;
      sg_node h;
      EXPECT_EQ(add(g, s, loop_cond, handles, &h), SG_OK) << sg_last_error();
      written.push_back(s.dst);
    }
    return written;
  }
};

// Builds the random graph of `seed` and runs it three times in every mode,
// bit for bit against the host backend; adds its conditional nodes to *conds.
void check_random_graph(uint32_t seed, bool full, unsigned *conds) {
  SCOPED_TRACE("seed " + std::to_string(seed));
  /* A seed runs in well under a second: a stuck one ends the program with
   * its seed and mode, where a hang would leave nothing to read. */
  std::atomic<const char *> mode{"building"};
  sgtest::Watchdog dog(
      [&] {
        if (!dog.fired()) return; /* a failed ASSERT left the scope */
        std::fprintf(stderr, "ConditionalGpu: seed %u hung in %s\n", seed, mode.load());
        std::fflush(stderr);
        std::abort();
      },
      30);
  Managed mem(1024);
  sgtest::Graph g;
  GpuBuilder b(seed);
  b.root = g;
  b.mem = mem.p;
  b.full = full;
  b.build(g, 0, {}, nullptr, sg_cond{0});
  ASSERT_LE(b.slots, 1024u);
  *conds += b.cond_nodes;
  mode = "the host backend";
  auto host = run(g, sgtest::host_options(), mem, 3);
  mode = "graph mode (explicit)";
  auto gpu = run(g, graph_options(), mem, 3);
  mode = "streams mode";
  auto streams = run(g, streams_options(1 + seed % 4), mem, 3);
  mode = "graph mode (capture)";
  auto capture = run(g, capture_options(), mem, 3);
  dog.disarm();
  ASSERT_EQ(host.size(), 3u);
  ASSERT_EQ(gpu.size(), 3u);
  ASSERT_EQ(streams.size(), 3u);
  ASSERT_EQ(capture.size(), 3u);
  for (int l = 0; l < 3; l++) {
    ASSERT_EQ(gpu[l], host[l]) << "graph mode (explicit), launch " << l + 1;
    ASSERT_EQ(capture[l], host[l]) << "graph mode (capture), launch " << l + 1;
    ASSERT_EQ(streams[l], host[l]) << "streams mode, launch " << l + 1;
  }
}

TEST(ConditionalGpu, RandomNestedGraphsMatchTheHostBitForBit) {
  SG_SKIP_WITHOUT_CONDITIONALS(12040);
  const bool full = driver_version() >= 12080;
  /* SG_TEST_SEED=<seed> replays one printed seed alone. */
  const char *replay = std::getenv("SG_TEST_SEED");
  const uint32_t base =
      replay ? static_cast<uint32_t>(std::strtoul(replay, nullptr, 10))
             : static_cast<uint32_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  const uint32_t seeds = replay ? 1 : 40;
  std::printf("ConditionalGpu random base seed %u (IF/ELSE and SWITCH: %s)\n", base,
              full ? "yes" : "no");
  unsigned conds = 0;
  for (uint32_t i = 0; i < seeds && !HasFatalFailure(); i++)
    check_random_graph(base + i, full, &conds);
  if (!replay) EXPECT_GT(conds, 10u);
}

// Seeds whose graphs let several conditional nodes of one WHILE body run side
// by side, joined by the loop's step. Run side by side on the GPU, the driver
// stalls on them (the join never runs) on most tries; graph mode runs each
// graph level's conditional nodes one after another (graph_conditional.c).
TEST(ConditionalGpu, SiblingConditionalNodesInALoopBodyFinish) {
  SG_SKIP_WITHOUT_CONDITIONALS(12080);
  unsigned conds = 0;
  for (uint32_t seed : {1500972257u, 3486664529u, 2900507532u}) {
    check_random_graph(seed, true, &conds);
    if (HasFatalFailure()) return;
  }
  EXPECT_GE(conds, 20u);
}

// ---- refusals ---------------------------------------------------------------

void expect_refused(sg_graph *g, const sg_exec_options &o, sg_status want,
                    const std::vector<std::string> &words) {
  sg_exec *e = nullptr;
  sg_status st = sg_exec_create(g, &o, &e);
  EXPECT_EQ(st, want) << sg_status_name(st) << ": " << sg_last_error();
  EXPECT_EQ(e, nullptr);
  if (e) sg_exec_destroy(e);
  std::string msg = sg_last_error();
  for (const std::string &w : words) EXPECT_NE(msg.find(w), std::string::npos) << msg;
}

int nothing(void *) { return 0; }

TEST(ConditionalGpu, WhatCudaForbidsInABodyIsRefusedByName) {
  SG_SKIP_WITHOUT_CONDITIONALS(12040);
  const sg_exec_options o = graph_options();
  {
    sgtest::Graph g;
    sg_cond c;
    SG_ASSERT_OK(sg_graph_cond_create(g, 1, 0, &c));
    sg_cond_node_desc d = {SG_COND_WHILE, c, 1, "loop"};
    sg_graph *body;
    SG_ASSERT_OK(sg_graph_add_conditional(g, &d, nullptr, 0, nullptr, &body));
    sg_host_desc h = {nothing, nullptr, "callback"};
    SG_ASSERT_OK(sg_graph_add_host(body, &h, nullptr, 0, nullptr));
    expect_refused(g, o, SG_ERR_UNSUPPORTED,
                   {"WHILE node 'loop' (#0): body 0: host node 'callback' (#0)",
                    "host node cannot be in a conditional body"});
    expect_refused(g, streams_options(), SG_ERR_UNSUPPORTED,
                   {"WHILE node 'loop' (#0): body 0: host node 'callback' (#0)"});
    expect_refused(g, capture_options(), SG_ERR_UNSUPPORTED,
                   {"WHILE node 'loop' (#0): body 0: host node 'callback' (#0)"});
  }
  {
    sgtest::Graph g;
    sg_cond c;
    SG_ASSERT_OK(sg_graph_cond_create(g, 1, 0, &c));
    sg_cond_node_desc d = {SG_COND_WHILE, c, 1, "loop"};
    sg_graph *body;
    SG_ASSERT_OK(sg_graph_add_conditional(g, &d, nullptr, 0, nullptr, &body));
    void *dev = nullptr;
    CUDA_ASSERT(cudaMalloc(&dev, 4096));
    std::vector<char> pageable(4096);
    sg_copy_desc cp = {dev, pageable.data(), 4096, SG_COPY_HOST_TO_DEVICE, "upload"};
    SG_ASSERT_OK(sg_graph_add_copy(body, &cp, nullptr, 0, nullptr));
    sg_exec_options staged = o;
    staged.staging.policy = SG_STAGING_AUTO;
    expect_refused(g, staged, SG_ERR_UNSUPPORTED, {"copy node 'upload' (#0)", "pageable"});
    cudaFree(dev);
  }
  {
    sgtest::Graph g;
    sg_cond c, unread;
    SG_ASSERT_OK(sg_graph_cond_create(g, 1, 0, &c));
    SG_ASSERT_OK(sg_graph_cond_create(g, 1, 0, &unread));
    Managed state(3);
    sg_node k;
    SG_ASSERT_OK(add_state_kernel(g, gc_loop_init_kernel(), gc_loop_init_twin, state.p, unread,
                                  "orphan", nullptr, 0, &k));
    sg_cond_node_desc d = {SG_COND_IF, c, 1, "if"};
    sg_graph *body;
    SG_ASSERT_OK(sg_graph_add_conditional(g, &d, &k, 1, nullptr, &body));
    expect_refused(g, o, SG_ERR_UNSUPPORTED, {"'orphan' (#0)", "no conditional node reads"});
  }
}

// A condition without SG_COND_ASSIGN_DEFAULT keeps the last launch's value
// in graph mode as on the host backend. It is set on the first launch only
// (CUDA promises no value before a kept condition is first set).
TEST(ConditionalGpu, KeptConditionMatchesTheHost) {
  SG_SKIP_WITHOUT_CONDITIONALS(12040);
  Managed state(4);
  for (unsigned flags : {0u, SG_COND_ASSIGN_DEFAULT}) {
    sgtest::Graph g;
    sg_cond c;
    SG_ASSERT_OK(sg_graph_cond_create(g, 1, flags, &c));
    sg_node once;
    SG_ASSERT_OK(add_state_kernel(g, gc_set_once_kernel(), gc_set_once_twin, state.p, c,
                                  "set once", nullptr, 0, &once));
    sg_cond_node_desc d = {SG_COND_IF, c, 1, "if"};
    sg_graph *body;
    SG_ASSERT_OK(sg_graph_add_conditional(g, &d, &once, 1, nullptr, &body));
    sg_node step;  // state[0] starts at 1: the step sets the condition to 0
    SG_ASSERT_OK(add_state_kernel(body, gc_loop_step_kernel(), gc_loop_step_twin, state.p, c,
                                  "clear", nullptr, 0, &step));
    for (const sg_exec_options &o :
         {sgtest::host_options(), graph_options(), capture_options(), streams_options()}) {
      state.clear();
      state.p[0] = 1;
      sgtest::Exec e;
      SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
      for (int i = 0; i < 3; i++) {
        SG_ASSERT_OK(sg_exec_launch(e, nullptr));
        SG_ASSERT_OK(sg_exec_wait(e));
      }
      EXPECT_EQ(state.read()[2], flags ? 3u : 1u)
          << way(o) << ", flags " << flags;
    }
  }
}

}  // namespace
