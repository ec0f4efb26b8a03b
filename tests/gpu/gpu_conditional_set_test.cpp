// sg_exec_set_* on nodes inside conditional bodies on the GPU: random
// nested IF, IF/ELSE, WHILE and SWITCH graphs (tests/support/
// cond_set_model.h) whose body nodes change at random (kernel arguments,
// the kernels deciding the conditions, copies, memsets), applied alike to
// an executable of each CUDA mode (streams, graph capture, explicit graph)
// and of the host backend; after each change every one of them must match
// the CPU reference bit for bit. Graph mode sets a changed body node in
// place, or rebuilds when the driver refuses: the results must not tell.
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "cond_set_model.h"
#include "gpu_util.h"

extern "C" const void *gcs_kernel(void);

namespace {

using condset::Model;
using condset::Node;

int driver_version() {
  int v = 0;
  return cudaDriverGetVersion(&v) == cudaSuccess ? v : 0;
}

// IF/ELSE and SWITCH need CUDA 12.8 in the runtime built with and in the
// driver (docs/conditional.md).
#if defined(CUDART_VERSION) && CUDART_VERSION >= 12080
#define SG_SKIP_WITHOUT_FULL_CONDITIONALS()                                      \
  do {                                                                           \
    SG_SKIP_WITHOUT_GPU();                                                       \
    if (driver_version() < 12080) GTEST_SKIP() << "driver older than CUDA 12.8"; \
  } while (0)
#else
#define SG_SKIP_WITHOUT_FULL_CONDITIONALS() \
  GTEST_SKIP() << "built with a CUDA runtime older than 12.8"
#endif

struct Managed {
  uint32_t *p = nullptr;
  size_t n = 0;
  explicit Managed(size_t words) : n(words ? words : 1) {
    EXPECT_EQ(cudaMallocManaged(reinterpret_cast<void **>(&p), n * sizeof *p), cudaSuccess);
  }
  ~Managed() {
    if (p) cudaFree(p);
  }
  void write(const std::vector<uint32_t> &v) {
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    std::memcpy(p, v.data(), n * sizeof *p);
  }
  std::vector<uint32_t> read() const {
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    return std::vector<uint32_t>(p, p + n);
  }
};

struct Way {
  const char *name;
  sg_exec_options o;
};

std::vector<Way> ways() {
  return {{"host", sgtest::host_options()},
          {"streams", gputest::cuda_options({"streams", SG_MODE_STREAMS, SG_BUILD_EXPLICIT})},
          {"graph_capture",
           gputest::cuda_options({"graph_capture", SG_MODE_GRAPH, SG_BUILD_CAPTURE})},
          {"graph_explicit",
           gputest::cuda_options({"graph_explicit", SG_MODE_GRAPH, SG_BUILD_EXPLICIT})}};
}

// Random changes to the model's nodes, made with sg_exec_set_* on every
// executable, or (`by_update`) in the graph and given to every executable
// with sg_exec_update; after each, every executable matches the reference.
void random_changes(uint32_t seed, bool by_update) {
  SCOPED_TRACE("seed " + std::to_string(seed) + (by_update ? ", by sg_exec_update" : ""));
  // A hang on the GPU cannot be rescued from here: say which seed, and end.
  sgtest::Watchdog dog(
      [seed] {
        std::fprintf(stderr, "gpu_conditional_set_test: seed %u hung\n", seed);
        std::abort();
      },
      300);
  condset::Options opt;
  opt.host_nodes = false;  // CUDA refuses host nodes in bodies
  Model m(seed, opt);
  m.generate();
  Managed mem(m.words());
  sgtest::Graph g;
  SG_ASSERT_OK(m.build(g, mem.p, gcs_kernel(), nullptr));
  const std::vector<Way> all = ways();
  std::vector<sgtest::Exec> execs(all.size());
  std::vector<sg_exec *> handles;
  for (size_t w = 0; w < all.size(); w++) {
    sg_status st = sg_exec_create(g, &all[w].o, &execs[w].e);
    ASSERT_EQ(st, SG_OK) << all[w].name << ": " << sg_last_error();
    handles.push_back(execs[w].e);
  }
  std::mt19937 rng(seed);
  std::vector<uint32_t> state(m.words());
  for (uint32_t &x : state) x = rng();
  for (int step = 0; step <= 25; step++) {
    std::string what = "no change yet";
    if (step) {
      sg_status st;
      what = by_update ? m.random_edit(&st) : m.random_set(handles, &st);
      ASSERT_EQ(st, SG_OK) << "step " << step << ": " << what << ": " << sg_last_error();
      for (size_t w = 0; by_update && w < all.size(); w++)
        ASSERT_EQ(sg_exec_update(handles[w], g), SG_OK) << all[w].name << ": " << sg_last_error();
    }
    std::vector<uint32_t> want = state;
    m.reference(want);
    for (size_t w = 0; w < all.size(); w++) {
      ASSERT_NO_FATAL_FAILURE(mem.write(state));
      SG_ASSERT_OK(sg_exec_launch(handles[w], nullptr));
      SG_ASSERT_OK(sg_exec_wait(handles[w]));
      ASSERT_EQ(mem.read(), want) << all[w].name << ", step " << step << " after " << what;
    }
    state = want;
  }
  for (size_t w = 0; w < all.size(); w++) {
    sg_exec_stats s;
    SG_ASSERT_OK(sg_exec_get_stats(handles[w], &s));
    /* An edit of the same topology re-plans nothing; graph mode
     * re-instantiates where the driver refuses a change in place (a kernel
     * bound to a condition), which counts as a rebuild too. */
    if (by_update && w < 2) EXPECT_EQ(s.rebuilds, 0u) << all[w].name;
    if (w >= 2)
      std::printf("seed %u %s%s: %llu changes, %llu in place, %llu rebuilds\n", seed,
                  all[w].name, by_update ? " (sg_exec_update)" : "",
                  (unsigned long long)s.param_updates, (unsigned long long)s.in_place_updates,
                  (unsigned long long)s.rebuilds);
  }
  dog.disarm();
}

class ConditionalSetGpu : public ::testing::TestWithParam<uint32_t> {};

TEST_P(ConditionalSetGpu, RandomChangesInBodiesMatchTheReferenceInEveryMode) {
  SG_SKIP_WITHOUT_FULL_CONDITIONALS();
  random_changes(GetParam(), false);
}

TEST_P(ConditionalSetGpu, BodiesEditedInTheGraphUpdateAlikeInEveryMode) {
  SG_SKIP_WITHOUT_FULL_CONDITIONALS();
  random_changes(GetParam(), true);
}

INSTANTIATE_TEST_SUITE_P(Seeds, ConditionalSetGpu, ::testing::Range(1u, 13u));

// Graph mode sets a changed kernel, copy or memset inside a body in place
// (through the body graph's node, no rebuild); a kernel bound to a
// condition is rebuilt (its handle is filled in when the graph is built).
TEST(ConditionalSetGpuGraph, BodyNodesChangeInPlace) {
  SG_SKIP_WITHOUT_FULL_CONDITIONALS();
  for (uint32_t seed = 50; seed < 60; seed++) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    condset::Options opt;
    opt.host_nodes = false;
    Model m(seed, opt);
    m.generate();
    Managed mem(m.words());
    sgtest::Graph g;
    SG_ASSERT_OK(m.build(g, mem.p, gcs_kernel(), nullptr));
    for (sg_graph_build build : {SG_BUILD_EXPLICIT, SG_BUILD_CAPTURE}) {
      sg_exec_options o = gputest::cuda_options({"graph", SG_MODE_GRAPH, build});
      sgtest::Exec e;
      SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));
      for (Node::Kind kind : {Node::COPY, Node::MEMSET}) {
        Node *n = m.deepest(kind);
        if (!n) continue;
        m.rekey(*n);  // new parameters (the model follows)
        sg_exec_stats before, after;
        SG_ASSERT_OK(sg_exec_get_stats(e, &before));
        SG_ASSERT_OK(kind == Node::COPY ? m.set_copy(e, *n) : m.set_memset(e, *n));
        SG_ASSERT_OK(sg_exec_get_stats(e, &after));
        EXPECT_EQ(after.in_place_updates, before.in_place_updates + 1)
            << n->name << " (depth " << n->depth << ") was not set in place";
        EXPECT_EQ(after.rebuilds, before.rebuilds);
      }
      // What was set in place runs.
      std::vector<uint32_t> state(m.words(), 11u), want = state;
      m.reference(want);
      ASSERT_NO_FATAL_FAILURE(mem.write(state));
      SG_ASSERT_OK(sg_exec_launch(e, nullptr));
      SG_ASSERT_OK(sg_exec_wait(e));
      EXPECT_EQ(mem.read(), want);
    }
  }
}

}  // namespace
