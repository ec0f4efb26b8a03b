// Geometry from the device (sg_graph_kernel_bind_grid) on the host backend:
// a producer kernel writes a grid, a bound kernel runs it; random grids
// (some past the bound, some with a 0) against a CPU reference, at the top
// level and inside a SWITCH body; the graph-mode form of the reference (the
// bound launched, blocks past the live grid skipped) computes the same;
// parameter edits keep the binding; refusals one by one; DOT says so.
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "sg_test_util.h"
#include "streamgraph/cond_device.h"
#include "streamgraph/grid_device.h"
#include "streamgraph/kernels.h"

namespace {

constexpr unsigned kBoundX = 9, kBoundY = 3, kBlock = 4;
constexpr size_t kSlots = size_t{kBoundX} * kBoundY * kBlock;

// What the producer and the consumer share with the test.
struct State {
  uint32_t seed = 0;     // advanced by the producer at each launch
  unsigned words[3] = {0, 0, 0};
  unsigned choice = 0;   // the SWITCH's body, set through the condition
  std::vector<uint32_t> in, out;
  State() : in(kSlots), out(kSlots) {}
};

// Draws a grid (sometimes past the bound, sometimes 0) and a SWITCH choice.
void produce(State *s, unsigned *words, unsigned *choice) {
  s->seed = sg_kernels_mix(s->seed, 0x9e3779b9u, 7);
  const uint32_t v = s->seed;
  words[0] = v % (kBoundX + 3);               // 0 .. bound + 2
  words[1] = 1 + (v >> 8) % (kBoundY + 1);    // 1 .. bound + 1
  words[2] = 1 + (v >> 16) % 2;               // 1 or 2 (the bound is 1)
  *choice = (v >> 20) % 3;                    // body 0, 1, or none (2)
}

void producer_twin(const sg_kernel_launch *, void *const *args) {
  State *s = *static_cast<State *const *>(args[0]);
  const sg_cond_ref ref = *static_cast<const sg_cond_ref *>(args[1]);
  unsigned choice = 0;
  produce(s, s->words, &choice);
  sg_cond_set(ref, choice);
}

// The consumer as a kernel would be written: skip blocks sg_grid_has_block
// refuses, use sg_grid_live where gridDim would be used.
void consume_block(State *s, sg_grid_ref g, unsigned bx, unsigned by, unsigned bz,
                   unsigned block_x, uint32_t salt) {
  if (!sg_grid_has_block(g, bx, by, bz)) return;
  const sg_grid_dims live = sg_grid_live(g);
  for (unsigned t = 0; t < block_x; t++) {
    const size_t i = (size_t{by} * live.x + bx) * block_x + t;
    s->out[i] = sg_kernels_mix(s->in[i] ^ salt, live.x * 131u + live.y, live.z);
  }
}

void consumer_twin(const sg_kernel_launch *launch, void *const *args) {
  State *s = *static_cast<State *const *>(args[0]);
  const sg_grid_ref g = *static_cast<const sg_grid_ref *>(args[1]);
  const uint32_t salt = *static_cast<const uint32_t *>(args[2]);
  for (unsigned z = 0; z < launch->grid.z; z++)
    for (unsigned y = 0; y < launch->grid.y; y++)
      for (unsigned x = 0; x < launch->grid.x; x++)
        consume_block(s, g, x, y, z, launch->block.x, salt);
}

// The reference: the live grid computed here, every block of it run.
void reference(State *s, const unsigned bound[3], uint32_t salt) {
  const unsigned lx = std::min(s->words[0], bound[0]), ly = std::min(s->words[1], bound[1]),
                 lz = std::min(s->words[2], bound[2]);
  for (unsigned z = 0; z < lz; z++)
    for (unsigned y = 0; y < ly; y++)
      for (unsigned x = 0; x < lx; x++)
        for (unsigned t = 0; t < kBlock; t++) {
          const size_t i = (size_t{y} * lx + x) * kBlock + t;
          s->out[i] = sg_kernels_mix(s->in[i] ^ salt, lx * 131u + ly, lz);
        }
}

// What CUDA graph mode does with the same kernel: the bound launched, the
// reference carrying the words.
void graph_mode_form(State *s, const unsigned bound[3], uint32_t salt) {
  const sg_grid_ref g = {s->words, bound[0], bound[1], bound[2], 0};
  for (unsigned z = 0; z < bound[2]; z++)
    for (unsigned y = 0; y < bound[1]; y++)
      for (unsigned x = 0; x < bound[0]; x++) consume_block(s, g, x, y, z, kBlock, salt);
}

struct Built {
  sgtest::Graph g;
  sg_node producer{}, consumer{}, sw{};
  sg_graph *bodies[2] = {nullptr, nullptr};
  State *ptr = nullptr;
  uint32_t salt = 0;
  sg_cond_ref cref = {0, nullptr};
  sg_grid_ref gref = {nullptr, 0, 0, 0, 0};
  void *pargs[2] = {&ptr, &cref};
  size_t psizes[2] = {sizeof ptr, sizeof cref};
  void *cargs[3] = {&ptr, &gref, &salt};
  size_t csizes[3] = {sizeof ptr, sizeof gref, sizeof salt};
  sg_kernel_desc consumer_desc() {
    sg_kernel_desc k = {};
    k.grid = {kBoundX, kBoundY, 1};
    k.block = {kBlock, 1, 1};
    k.args = cargs;
    k.arg_sizes = csizes;
    k.arg_count = 3;
    k.host_twin = consumer_twin;
    k.name = "consume";
    return k;
  }
};

// Producer -> consumer at the top level, or producer -> SWITCH whose body
// `in_body` holds the consumer (the other body is empty).
void build(Built &b, State *s, uint32_t salt, bool in_switch) {
  b.ptr = s;
  b.salt = salt;
  sg_cond c;
  SG_ASSERT_OK(sg_graph_cond_create(b.g, 2, SG_COND_ASSIGN_DEFAULT, &c));
  sg_kernel_desc p = {};
  p.grid = p.block = {1, 1, 1};
  p.args = b.pargs;
  p.arg_sizes = b.psizes;
  p.arg_count = 2;
  p.host_twin = producer_twin;
  p.name = "produce";
  SG_ASSERT_OK(sg_graph_add_kernel(b.g, &p, nullptr, 0, &b.producer));
  SG_ASSERT_OK(sg_graph_kernel_bind_cond(b.g, b.producer, 1, c));
  sg_kernel_desc k = b.consumer_desc();
  sg_graph *where = b.g;
  const sg_node *deps = &b.producer;
  size_t dep_count = 1;
  if (in_switch) {
    sg_cond_node_desc d = {SG_COND_SWITCH, c, 2, "sw"};
    SG_ASSERT_OK(sg_graph_add_conditional(b.g, &d, &b.producer, 1, &b.sw, b.bodies));
    where = b.bodies[0];
    deps = nullptr;
    dep_count = 0;
  }
  SG_ASSERT_OK(sg_graph_add_kernel(where, &k, deps, dep_count, &b.consumer));
  SG_ASSERT_OK(sg_graph_kernel_bind_grid(where, b.consumer, 1, s->words));
}

void run_seed(uint32_t seed, bool in_switch) {
  sgtest::LeakCheck leaks;
  std::mt19937 rng(seed);
  State s, ref, graph_form;
  s.seed = rng();
  for (auto &v : s.in) v = rng();
  for (auto &v : s.out) v = rng();
  const uint32_t salt = rng();
  ref = s;
  graph_form = s;
  Built b;
  build(b, &s, salt, in_switch);
  sg_exec_options o = sgtest::host_options(seed % 3);
  sgtest::Exec e;
  SG_ASSERT_OK(sg_exec_create(b.g, &o, &e.e));
  const unsigned bound[3] = {kBoundX, kBoundY, 1};
  unsigned zeros = 0, clamped = 0;
  for (int launch = 0; launch < 40; launch++) {
    SG_ASSERT_OK(sg_exec_launch(e, nullptr));
    ASSERT_TRUE(sgtest::poll_until([&] { return sg_exec_query(e) != SG_NOT_READY; }))
        << "seed " << seed << ": launch " << launch << " did not finish";
    SG_ASSERT_OK(sg_exec_wait(e));
    for (State *r : {&ref, &graph_form}) {
      unsigned choice = 0;
      produce(r, r->words, &choice);
      if (in_switch && choice != 0) continue;
      if (r == &ref) reference(r, bound, salt);
      else graph_mode_form(r, bound, salt);
    }
    zeros += ref.words[0] == 0;
    clamped += ref.words[0] > kBoundX || ref.words[1] > kBoundY || ref.words[2] > 1;
    ASSERT_EQ(s.out, ref.out) << "seed " << seed << ", launch " << launch << ", grid "
                              << ref.words[0] << "x" << ref.words[1] << "x" << ref.words[2];
    ASSERT_EQ(graph_form.out, ref.out) << "the graph-mode form differs, seed " << seed;
  }
  std::printf("seed %u: %u launches with a 0 grid, %u past the bound\n", seed, zeros, clamped);
}

TEST(GridSource, RandomGridsMatchTheReference) {
  const uint32_t base = static_cast<uint32_t>(std::random_device{}());
  std::printf("GridSource base seed %u\n", base);
  for (uint32_t i = 0; i < 6; i++) {
    SCOPED_TRACE("seed " + std::to_string(base + i));
    run_seed(base + i, false);
    if (HasFatalFailure()) return;
  }
}

TEST(GridSource, InsideASwitchBody) {
  const uint32_t base = static_cast<uint32_t>(std::random_device{}());
  std::printf("GridSource (SWITCH body) base seed %u\n", base);
  for (uint32_t i = 0; i < 6; i++) {
    SCOPED_TRACE("seed " + std::to_string(base + i));
    run_seed(base + i, true);
    if (HasFatalFailure()) return;
  }
}

// sg_graph_set_kernel and sg_exec_set_kernel keep the binding; a new bound
// (the declared grid) applies; new arguments without an sg_grid_ref there
// are refused and change nothing.
TEST(GridSource, ParameterEditsKeepTheBinding) {
  sgtest::LeakCheck leaks;
  std::mt19937 rng(static_cast<uint32_t>(std::random_device{}()));
  State s;
  for (auto &v : s.in) v = rng();
  Built b;
  build(b, &s, 5, false);
  sg_kernel_desc k = b.consumer_desc();
  k.grid = {4, 2, 1};  // a smaller bound
  SG_ASSERT_OK(sg_graph_set_kernel(b.g, b.consumer, &k));
  sg_exec_options o = sgtest::host_options();
  sgtest::Exec e;
  SG_ASSERT_OK(sg_exec_create(b.g, &o, &e.e));
  for (int round = 0; round < 2; round++) {
    State ref = s;
    SG_ASSERT_OK(sg_exec_launch(e, nullptr));
    SG_ASSERT_OK(sg_exec_wait(e));
    unsigned choice = 0;
    produce(&ref, ref.words, &choice);
    const unsigned bound[3] = {k.grid.x, k.grid.y, 1};
    reference(&ref, bound, b.salt);
    ASSERT_EQ(s.out, ref.out) << "round " << round << ", bound " << k.grid.x << "x" << k.grid.y;
    k.grid = {kBoundX, 1, 1};
    b.salt = 77;  // a new argument value, read when the parameters are set
    SG_ASSERT_OK(sg_exec_set_kernel(e, b.consumer, &k));
  }
  // Arguments without a 24-byte argument at index 1: refused, the node keeps its own.
  uint32_t small = 0;
  void *bad_args[3] = {&b.ptr, &small, &b.salt};
  size_t bad_sizes[3] = {sizeof b.ptr, sizeof small, sizeof b.salt};
  sg_kernel_desc bad = b.consumer_desc();
  bad.args = bad_args;
  bad.arg_sizes = bad_sizes;
  for (sg_status st : {sg_graph_set_kernel(b.g, b.consumer, &bad),
                       sg_exec_set_kernel(e, b.consumer, &bad)}) {
    EXPECT_EQ(st, SG_ERR_INVALID_KERNEL_ARGS) << sg_last_error();
    EXPECT_NE(std::string(sg_last_error()).find("sg_grid_ref"), std::string::npos)
        << sg_last_error();
  }
  SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  SG_ASSERT_OK(sg_exec_wait(e));
}

void expect_refused(sg_status st, sg_status want, const std::vector<std::string> &words) {
  EXPECT_EQ(st, want) << sg_status_name(st) << ": " << sg_last_error();
  std::string msg = sg_last_error();
  for (const std::string &w : words) EXPECT_NE(msg.find(w), std::string::npos) << msg;
}

TEST(GridSourceRefusals, OneByOne) {
  sgtest::LeakCheck leaks;
  State s;
  Built b;
  build(b, &s, 1, false);
  sg_node en;
  SG_ASSERT_OK(sg_graph_add_empty(b.g, "e", nullptr, 0, &en));
  expect_refused(sg_graph_kernel_bind_grid(b.g, en, 0, s.words), SG_ERR_INVALID_ARGUMENT,
                 {"sg_graph_kernel_bind_grid", "'e'", "not a kernel"});
  expect_refused(sg_graph_kernel_bind_grid(b.g, b.consumer, 3, s.words),
                 SG_ERR_INVALID_KERNEL_ARGS, {"'consume'", "no argument", "index 3"});
  expect_refused(sg_graph_kernel_bind_grid(b.g, b.consumer, 2, s.words),
                 SG_ERR_INVALID_KERNEL_ARGS, {"sizeof(sg_grid_ref)"});
  expect_refused(sg_graph_kernel_bind_grid(b.g, b.consumer, 1, nullptr), SG_ERR_INVALID_ARGUMENT,
                 {"words is NULL"});
  expect_refused(sg_graph_kernel_bind_grid(b.g, b.consumer, 1,
                                           reinterpret_cast<const unsigned *>(
                                               reinterpret_cast<const char *>(s.words) + 1)),
                 SG_ERR_INVALID_ARGUMENT, {"not aligned"});
  // The three words must lie within their sg_mem_alloc block.
  void *block = nullptr;
  SG_ASSERT_OK(sg_mem_alloc(SG_BACKEND_HOST, SG_MEMORY_DEVICE, 0, 16, &block));
  expect_refused(sg_graph_kernel_bind_grid(b.g, b.consumer, 1,
                                           static_cast<const unsigned *>(block) + 2),
                 SG_ERR_INVALID_ARGUMENT, {"run past the end"});
  SG_EXPECT_OK(sg_graph_kernel_bind_grid(b.g, b.consumer, 1, static_cast<const unsigned *>(block) + 1));
  SG_EXPECT_OK(sg_graph_kernel_bind_grid(b.g, b.consumer, 1, s.words));
  SG_EXPECT_OK(sg_mem_free(block));
  // A condition argument (16 bytes) cannot be the grid source (24), nor the
  // other way round.
  sg_cond c;
  SG_ASSERT_OK(sg_graph_cond_create(b.g, 0, 0, &c));
  expect_refused(sg_graph_kernel_bind_cond(b.g, b.consumer, 1, c), SG_ERR_INVALID_KERNEL_ARGS,
                 {"sg_cond_ref"});
  expect_refused(sg_graph_kernel_bind_grid(b.g, b.producer, 1, s.words), SG_ERR_INVALID_KERNEL_ARGS,
                 {"'produce'"});
  SG_EXPECT_OK(sg_graph_validate(b.g));
}

TEST(GridSource, DotSaysWhereTheGridComesFrom) {
  sgtest::LeakCheck leaks;
  State s;
  Built b;
  build(b, &s, 1, true);
  char *dot = nullptr;
  SG_ASSERT_OK(sg_graph_to_dot(b.g, &dot));
  const std::string text = dot;
  sg_free(dot);
  EXPECT_NE(text.find("grid <= 9x3x1"), std::string::npos) << text;
  EXPECT_NE(text.find("grid from device words"), std::string::npos) << text;
  EXPECT_NE(text.find("sets condition #0"), std::string::npos) << text;
}

}  // namespace
