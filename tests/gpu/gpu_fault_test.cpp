// Fault injection on the CUDA backend: every CUDA call and every allocation
// made while creating, launching, updating, waiting for and destroying an
// executable fails in turn. Each failure comes back as a status (or is
// absorbed by design: a refused in-place update becomes a rebuild), nothing
// leaks, nothing hangs, and a run the fault did not disturb gives the right
// result. Then the CUDA context is still healthy.
#include <atomic>

#include "gpu_util.h"

namespace {

using gputest::DevMem;
using gputest::PinnedMem;

constexpr size_t kN = 4096;
constexpr size_t kBytes = kN * 4;

struct Fixture {
  DevMem a{kBytes}, b{kBytes};
  PinnedMem out{kBytes};
  std::vector<uint32_t> pageable = std::vector<uint32_t>(kN);
  std::atomic<int> host_calls{0};
  cudaStream_t user = nullptr;
  sg_node n_add{};
};

int count(void *p) {
  static_cast<std::atomic<int> *>(p)->fetch_add(1);
  return 0;
}

int add_ten(void *stream, void *p) {
  uint32_t *data = static_cast<uint32_t *>(p);
  uint32_t k = 10;
  size_t n = kN;
  void *args[] = {&data, &k, &n};
  return cudaLaunchKernel(gt_kernel_add_u32(), dim3(16), dim3(256), args, 0,
                          static_cast<cudaStream_t>(stream)) != cudaSuccess;
}

// Every node kind, two independent branches (so two streams).
void build(sg_graph *g, Fixture &f) {
  sg_node n_set, n_sfn, n_join, n_pin, n_b;
  sg_memset_desc m = {f.a.p, 0x01020304u, 4, kN, "set"};
  SG_ASSERT_OK(sg_graph_add_memset(g, &m, nullptr, 0, &n_set));
  gputest::AddCall add(f.a.u32(), 1, kN, "add");
  SG_ASSERT_OK(sg_graph_add_kernel(g, &add.desc, &n_set, 1, &f.n_add));
  sg_stream_fn_desc sf = {add_ten, f.a.p, nullptr, nullptr, "add-ten"};
  SG_ASSERT_OK(sg_graph_add_stream_fn(g, &sf, &f.n_add, 1, &n_sfn));
  SG_ASSERT_OK(sg_graph_add_empty(g, "join", &n_sfn, 1, &n_join));
  sg_copy_desc c = {f.out.p, f.a.p, kBytes, SG_COPY_AUTO, "to-pinned"};
  SG_ASSERT_OK(sg_graph_add_copy(g, &c, &n_join, 1, &n_pin));
  c = {f.pageable.data(), f.a.p, kBytes, SG_COPY_AUTO, "to-pageable"};
  SG_ASSERT_OK(sg_graph_add_copy(g, &c, &n_join, 1, nullptr));
  sg_host_desc h = {count, &f.host_calls, "count"};
  SG_ASSERT_OK(sg_graph_add_host(g, &h, &n_pin, 1, nullptr));
  gputest::AddCall other(f.b.u32(), 1, kN, "other-branch");
  SG_ASSERT_OK(sg_graph_add_kernel(g, &other.desc, nullptr, 0, &n_b));
}

sg_status scenario(sg_graph *g, const sg_exec_options &o, Fixture &f) {
  sg_exec *x = nullptr;
  gputest::AddCall add2(f.a.u32(), 2, kN, "add");
  sg_status st = sg_exec_create(g, &o, &x);
  if (!st) st = sg_exec_launch(x, nullptr);
  if (!st) st = sg_exec_launch(x, f.user);
  if (!st) st = sg_exec_set_kernel(x, f.n_add, &add2.desc);
  if (!st) st = sg_exec_launch(x, nullptr);
  if (!st) st = sg_exec_wait(x);
  if (x) {
    sg_status d = sg_exec_destroy(x);
    if (!st) st = d;
  }
  return st;
}

void run_faults(unsigned kinds, const gputest::ModeCase &m) {
  Fixture f;
  ASSERT_EQ(cudaStreamCreateWithFlags(&f.user, cudaStreamNonBlocking), cudaSuccess);
  sgtest::Graph g;
  build(g, f);
  if (::testing::Test::HasFatalFailure()) return;
  sg_exec_options o = gputest::cuda_options(m);
  const uint32_t want = 0x01020304u + 2 + 10;
  // Graph mode stages the pageable copy even under SG_STAGING_NONE (a CUDA
  // graph has no pageable memcpy node: src/staging/policy.h), through the
  // process-wide default pinned pool, which keeps its slab and copy threads
  // once made. One undisturbed run first, so that the baseline has them.
  SG_ASSERT_OK(scenario(g, o, f));
  long start = sg_live_allocations();
  int failures = 0;
  for (unsigned long nth = 1; nth < 5000; nth++) {
    f.host_calls = 0;
    std::memset(f.out.p, 0, kBytes);
    std::fill(f.pageable.begin(), f.pageable.end(), 0u);
    sg_fault_arm(kinds, nth);
    sg_status st = scenario(g, o, f);
    int fired = sg_fault_fired();
    sg_fault_arm(0, 0);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess) << m.name << ", fault " << nth;
    ASSERT_EQ(sg_live_allocations(), start) << m.name << ": leak with fault " << nth;
    if (st != SG_OK) {
      failures++;
      EXPECT_STRNE(sg_last_error(), "") << m.name << ", fault " << nth;
    } else {
      // Undisturbed (or absorbed): the result is right.
      for (size_t i = 0; i < kN; i++) {
        ASSERT_EQ(f.out.u32()[i], want) << m.name << ", fault " << nth << ", i=" << i;
        ASSERT_EQ(f.pageable[i], want) << m.name << ", fault " << nth << ", i=" << i;
      }
      EXPECT_EQ(f.host_calls.load(), 3) << m.name << ", fault " << nth;
    }
    if (!fired) {
      ASSERT_EQ(st, SG_OK) << sg_last_error();
      EXPECT_GT(failures, 0) << "no fault point was reached";
      ASSERT_EQ(cudaStreamDestroy(f.user), cudaSuccess);
      return;
    }
  }
  FAIL() << m.name << ": the scenario never ran to completion";
}

class Faults : public gputest::ModeTest {};

TEST_P(Faults, EveryCudaCallFailingInTurn) { run_faults(SG_FAULT_CUDA, GetParam()); }

TEST_P(Faults, EveryAllocationFailingInTurn) { run_faults(SG_FAULT_ALLOC, GetParam()); }

TEST_P(Faults, EverythingFailingInTurn) { run_faults(SG_FAULT_ALL, GetParam()); }

INSTANTIATE_TEST_SUITE_P(Cuda, Faults, ::testing::ValuesIn(gputest::all_modes()),
                         gputest::mode_name);

}  // namespace
