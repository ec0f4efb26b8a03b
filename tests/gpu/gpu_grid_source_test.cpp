// Geometry from the device on the GPU (sg_graph_kernel_bind_grid): a kernel
// writes a grid, a bound kernel runs it, at the top level and inside an IF
// body; graph mode (both builds), streams mode and the host backend must
// leave the memory bit for bit the same after every launch, with random
// grids (some past the bound, some with a 0 dimension).
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "gpu_grid_kernels.h"
#include "gpu_util.h"
#include "streamgraph/cond_device.h"
#include "streamgraph/grid_device.h"

namespace {

constexpr size_t kN = size_t{GG_BOUND_X} * GG_BOUND_Y * 2 * GG_BLOCK;

int driver_version() {
  int v = 0;
  return cudaDriverGetVersion(&v) == cudaSuccess ? v : 0;
}

// Managed memory: state[1], words[3] (padded), in[kN], out[kN], out2[kN].
struct Memory {
  uint32_t *p = nullptr;
  static constexpr size_t kWords = 4 + 4 + 3 * kN;
  Memory() {
    EXPECT_EQ(cudaMallocManaged(reinterpret_cast<void **>(&p), kWords * sizeof *p), cudaSuccess);
  }
  ~Memory() {
    if (p) cudaFree(p);
  }
  uint32_t *state() { return p; }
  unsigned *words() { return reinterpret_cast<unsigned *>(p + 4); }
  uint32_t *in() { return p + 8; }
  uint32_t *out() { return p + 8 + kN; }
  uint32_t *out2() { return p + 8 + 2 * kN; }
  void fill(uint32_t seed) {
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    std::mt19937 rng(seed);
    for (size_t i = 0; i < kWords; i++) p[i] = rng();
  }
  std::vector<uint32_t> read() {
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    return std::vector<uint32_t>(p, p + kWords);
  }
};

struct Built {
  sgtest::Graph g;
  uint32_t *state, *in, *out, *out2;
  unsigned *words;
  uint32_t salt = 0, salt2 = 0;
};

void add_consumer(sg_graph *g, Built &b, uint32_t *out, uint32_t *salt, const sg_node *deps,
                  size_t nd, const char *name) {
  sg_grid_ref ph = {nullptr, 0, 0, 0, 0};
  void *args[4] = {&b.in, &out, salt, &ph};
  size_t sizes[4] = {sizeof b.in, sizeof out, sizeof *salt, sizeof ph};
  sg_kernel_desc k = {};
  k.func = gg_consume_kernel();
  k.host_twin = gg_consume_twin;
  k.grid = {GG_BOUND_X, GG_BOUND_Y, 2};
  k.block = {GG_BLOCK, 1, 1};
  k.args = args;
  k.arg_sizes = sizes;
  k.arg_count = 4;
  k.name = name;
  sg_node n;
  SG_ASSERT_OK(sg_graph_add_kernel(g, &k, deps, nd, &n));
  SG_ASSERT_OK(sg_graph_kernel_bind_grid(g, n, 3, b.words));
}

// producer -> consumer (out) -> IF(producer's condition) { consumer (out2) }
void build(Built &b, Memory &m, uint32_t seed) {
  b.state = m.state();
  b.words = m.words();
  b.in = m.in();
  b.out = m.out();
  b.out2 = m.out2();
  b.salt = seed * 2654435761u;
  b.salt2 = b.salt ^ 0x5bd1e995u;
  sg_cond c;
  SG_ASSERT_OK(sg_graph_cond_create(b.g, 0, SG_COND_ASSIGN_DEFAULT, &c));
  sg_cond_ref cref = {0, nullptr};
  void *pargs[3] = {&b.state, &b.words, &cref};
  size_t psizes[3] = {sizeof b.state, sizeof b.words, sizeof cref};
  sg_kernel_desc p = {};
  p.func = gg_produce_kernel();
  p.host_twin = gg_produce_twin;
  p.grid = {1, 1, 1};
  p.block = {32, 1, 1};
  p.args = pargs;
  p.arg_sizes = psizes;
  p.arg_count = 3;
  p.name = "produce";
  sg_node prod, cons;
  SG_ASSERT_OK(sg_graph_add_kernel(b.g, &p, nullptr, 0, &prod));
  SG_ASSERT_OK(sg_graph_kernel_bind_cond(b.g, prod, 2, c));
  add_consumer(b.g, b, b.out, &b.salt, &prod, 1, "consume");
  SG_ASSERT_OK(sg_graph_add_empty(b.g, "after", &prod, 1, &cons));
  sg_cond_node_desc d = {SG_COND_IF, c, 1, "if"};
  sg_graph *body;
  sg_node ifn;
  SG_ASSERT_OK(sg_graph_add_conditional(b.g, &d, &cons, 1, &ifn, &body));
  add_consumer(body, b, b.out2, &b.salt2, nullptr, 0, "consume in body");
}

std::vector<std::vector<uint32_t>> run(Built &b, Memory &m, uint32_t seed,
                                       const sg_exec_options &o, int launches) {
  std::vector<std::vector<uint32_t>> out;
  m.fill(seed);
  sgtest::Exec e;
  sg_status st = sg_exec_create(b.g, &o, &e.e);
  EXPECT_EQ(st, SG_OK) << sg_last_error();
  if (st) return out;
  for (int i = 0; i < launches; i++) {
    EXPECT_EQ(sg_exec_launch(e, nullptr), SG_OK) << sg_last_error();
    EXPECT_TRUE(sgtest::poll_until([&] { return sg_exec_query(e) != SG_NOT_READY; }))
        << "launch " << i + 1 << " did not finish";
    EXPECT_EQ(sg_exec_wait(e), SG_OK) << sg_last_error();
    out.push_back(m.read());
  }
  return out;
}

TEST(GridSourceGpu, EveryModeMatchesTheHostBackend) {
  SG_SKIP_WITHOUT_GPU();
  if (driver_version() < 12040) GTEST_SKIP() << "driver older than CUDA 12.4 (IF nodes)";
  const uint32_t base = static_cast<uint32_t>(std::random_device{}());
  std::printf("GridSourceGpu base seed %u\n", base);
  for (uint32_t s = base; s < base + 3; s++) {
    SCOPED_TRACE("seed " + std::to_string(s));
    Memory m;
    Built b;
    build(b, m, s);
    if (HasFatalFailure()) return;
    const int launches = 12;
    const auto want = run(b, m, s, sgtest::host_options(), launches);
    ASSERT_EQ(want.size(), size_t(launches));
    unsigned zeros = 0;
    for (const auto &w : want) zeros += w[4] == 0;
    std::printf("seed %u: %u of %d launches with a 0 grid\n", s, zeros, launches);
    const gputest::ModeCase modes[] = {{"graph_explicit", SG_MODE_GRAPH, SG_BUILD_EXPLICIT},
                                       {"graph_capture", SG_MODE_GRAPH, SG_BUILD_CAPTURE},
                                       {"streams", SG_MODE_STREAMS, SG_BUILD_EXPLICIT}};
    for (const gputest::ModeCase &mc : modes) {
      SCOPED_TRACE(mc.name);
      const auto got = run(b, m, s, gputest::cuda_options(mc), launches);
      ASSERT_EQ(got.size(), want.size());
      for (int i = 0; i < launches; i++)
        ASSERT_TRUE(got[i] == want[i]) << "launch " << i << ": memory differs from the host "
                                       << "backend (grid " << want[i][4] << "x" << want[i][5]
                                       << "x" << want[i][6] << ")";
    }
  }
}

// sg_exec_set_kernel on a bound kernel (a smaller bound, a new salt) keeps
// the binding in every mode: in place in graph mode, where the argument
// block carries the words and the new bound.
std::vector<std::vector<uint32_t>> run_with_update(Memory &m, uint32_t seed,
                                                   const sg_exec_options &o) {
  std::vector<std::vector<uint32_t>> out;
  Built b;
  b.state = m.state();
  b.words = m.words();
  b.in = m.in();
  b.out = m.out();
  b.out2 = m.out2();
  b.salt = seed;
  // No condition: in graph mode one exists only for a conditional node
  // that reads it, and this graph has none.
  void *pargs[2] = {&b.state, &b.words};
  size_t psizes[2] = {sizeof b.state, sizeof b.words};
  sg_kernel_desc p = {};
  p.func = gg_produce_plain_kernel();
  p.host_twin = gg_produce_plain_twin;
  p.grid = {1, 1, 1};
  p.block = {32, 1, 1};
  p.args = pargs;
  p.arg_sizes = psizes;
  p.arg_count = 2;
  p.name = "produce";
  sg_node prod;
  EXPECT_EQ(sg_graph_add_kernel(b.g, &p, nullptr, 0, &prod), SG_OK) << sg_last_error();
  sg_grid_ref ph = {nullptr, 0, 0, 0, 0};
  void *args[4] = {&b.in, &b.out, &b.salt, &ph};
  size_t sizes[4] = {sizeof b.in, sizeof b.out, sizeof b.salt, sizeof ph};
  sg_kernel_desc k = {};
  k.func = gg_consume_kernel();
  k.host_twin = gg_consume_twin;
  k.grid = {GG_BOUND_X, GG_BOUND_Y, 2};
  k.block = {GG_BLOCK, 1, 1};
  k.args = args;
  k.arg_sizes = sizes;
  k.arg_count = 4;
  k.name = "consume";
  sg_node cons;
  EXPECT_EQ(sg_graph_add_kernel(b.g, &k, &prod, 1, &cons), SG_OK) << sg_last_error();
  EXPECT_EQ(sg_graph_kernel_bind_grid(b.g, cons, 3, b.words), SG_OK) << sg_last_error();
  m.fill(seed);
  sgtest::Exec e;
  if (sg_exec_create(b.g, &o, &e.e) != SG_OK) {
    ADD_FAILURE() << sg_last_error();
    return out;
  }
  for (int i = 0; i < 6; i++) {
    if (i == 3) {
      k.grid = {GG_BOUND_X / 3, 2, 1};
      b.salt = seed ^ 0x1234567u;
      EXPECT_EQ(sg_exec_set_kernel(e, cons, &k), SG_OK) << sg_last_error();
    }
    EXPECT_EQ(sg_exec_launch(e, nullptr), SG_OK) << sg_last_error();
    EXPECT_EQ(sg_exec_wait(e), SG_OK) << sg_last_error();
    out.push_back(m.read());
  }
  return out;
}

TEST(GridSourceGpu, SetKernelKeepsTheBindingInEveryMode) {
  SG_SKIP_WITHOUT_GPU();
  const uint32_t seed = static_cast<uint32_t>(std::random_device{}());
  std::printf("GridSourceGpu (updates) seed %u\n", seed);
  Memory m;
  const auto want = run_with_update(m, seed, sgtest::host_options());
  ASSERT_EQ(want.size(), 6u);
  const gputest::ModeCase modes[] = {{"graph_explicit", SG_MODE_GRAPH, SG_BUILD_EXPLICIT},
                                     {"graph_capture", SG_MODE_GRAPH, SG_BUILD_CAPTURE},
                                     {"streams", SG_MODE_STREAMS, SG_BUILD_EXPLICIT}};
  for (const gputest::ModeCase &mc : modes) {
    SCOPED_TRACE(mc.name);
    const auto got = run_with_update(m, seed, gputest::cuda_options(mc));
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < want.size(); i++)
      ASSERT_TRUE(got[i] == want[i]) << "launch " << i << " differs from the host backend";
  }
}

// Pageable words cannot be read by the GPU: refused when the executable is
// made, naming the node.
TEST(GridSourceGpu, PageableWordsAreRefused) {
  SG_SKIP_WITHOUT_GPU();
  Memory m;
  Built b;
  build(b, m, 1);
  static unsigned pageable[3] = {1, 1, 1};
  sgtest::Graph g;
  b.words = pageable;
  add_consumer(g, b, b.out, &b.salt, nullptr, 0, "pageable grid");
  for (const gputest::ModeCase &mc :
       {gputest::ModeCase{"graph", SG_MODE_GRAPH, SG_BUILD_EXPLICIT},
        gputest::ModeCase{"streams", SG_MODE_STREAMS, SG_BUILD_EXPLICIT}}) {
    sg_exec_options o = gputest::cuda_options(mc);
    sg_exec *e = nullptr;
    EXPECT_EQ(sg_exec_create(g, &o, &e), SG_ERR_INVALID_ARGUMENT) << mc.name;
    EXPECT_NE(std::string(sg_last_error()).find("'pageable grid'"), std::string::npos)
        << sg_last_error();
    if (e) sg_exec_destroy(e);
  }
}

}  // namespace
