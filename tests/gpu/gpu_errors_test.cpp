// Errors on the CUDA backend: failing host callbacks and stream functions,
// a bad device, memory the GPU cannot reach, kernels without a CUDA
// function, shared memory over the device's limit. Each comes back as a
// status with a message naming the node; nothing hangs. (The illegal-address
// kernel has its own programs: it poisons the CUDA context.)
#include <atomic>
#include <string>

#include "gpu_util.h"

namespace {

using gputest::DevMem;

bool contains(const char *text, const char *part) { return std::string(text).find(part) != std::string::npos; }

struct Counter {
  std::atomic<int> calls{0};
};

int fail_with_7(void *p) {
  static_cast<Counter *>(p)->calls.fetch_add(1);
  return 7;
}

int count(void *p) {
  static_cast<Counter *>(p)->calls.fetch_add(1);
  return 0;
}

class Errors : public gputest::ModeTest {};

TEST_P(Errors, FailingHostCallbackFailsTheLaunch) {
  DevMem a(4096);
  Counter failing, later;
  sgtest::Graph g;
  sg_node n_k, n_fail;
  gputest::AddCall add(a.u32(), 1, 1024);
  SG_ASSERT_OK(sg_graph_add_kernel(g, &add.desc, nullptr, 0, &n_k));
  sg_host_desc h = {fail_with_7, &failing, "checker"};
  SG_ASSERT_OK(sg_graph_add_host(g, &h, &n_k, 1, &n_fail));
  h = {count, &later, "after"};
  SG_ASSERT_OK(sg_graph_add_host(g, &h, &n_fail, 1, nullptr));
  sg_exec_options o = options();
  sgtest::Exec x;
  SG_ASSERT_OK(sg_exec_create(g, &o, &x.e));
  SG_ASSERT_OK(sg_exec_launch(x, nullptr));
  EXPECT_EQ(sg_exec_wait(x), SG_ERR_CALLBACK);
  EXPECT_TRUE(contains(sg_last_error(), "'checker'")) << sg_last_error();
  EXPECT_TRUE(contains(sg_last_error(), "returned 7")) << sg_last_error();
  EXPECT_EQ(sg_exec_query(x), SG_ERR_CALLBACK);
  EXPECT_EQ(sg_exec_launch(x, nullptr), SG_ERR_EXEC_FAILED);
  EXPECT_EQ(failing.calls.load(), 1);
  EXPECT_EQ(later.calls.load(), 0) << "host work after a failure is skipped";
  gputest::AddCall add2(a.u32(), 2, 1024);
  EXPECT_EQ(sg_exec_set_kernel(x, n_k, &add2.desc), SG_ERR_EXEC_FAILED);
  SG_EXPECT_OK(sg_exec_destroy(x.e));
  x.e = nullptr;
}

int stream_fn_fails(void *stream, void *p) {
  static_cast<Counter *>(p)->calls.fetch_add(1);
  return 3;
}

TEST_P(Errors, FailingStreamFunction) {
  Counter c;
  sgtest::Graph g;
  sg_stream_fn_desc sf = {stream_fn_fails, &c, nullptr, nullptr, "vendor-call"};
  SG_ASSERT_OK(sg_graph_add_stream_fn(g, &sf, nullptr, 0, nullptr));
  sg_exec_options o = options();
  sgtest::Exec x;
  if (graph_mode()) {
    // Called once, at creation, to capture its work.
    EXPECT_EQ(sg_exec_create(g, &o, &x.e), SG_ERR_CALLBACK);
    EXPECT_TRUE(contains(sg_last_error(), "'vendor-call'")) << sg_last_error();
    EXPECT_EQ(x.e, nullptr);
    return;
  }
  SG_ASSERT_OK(sg_exec_create(g, &o, &x.e));
  EXPECT_EQ(sg_exec_launch(x, nullptr), SG_ERR_CALLBACK);
  EXPECT_TRUE(contains(sg_last_error(), "'vendor-call'")) << sg_last_error();
  EXPECT_TRUE(contains(sg_last_error(), "returned 3")) << sg_last_error();
  EXPECT_EQ(sg_exec_wait(x), SG_ERR_CALLBACK);
  EXPECT_EQ(sg_exec_launch(x, nullptr), SG_ERR_EXEC_FAILED);
}

TEST_P(Errors, HostBackendDeviceMemoryIsRefused) {
  gputest::Mem fake(SG_BACKEND_HOST, SG_MEMORY_DEVICE, 4096);
  DevMem real(4096);
  for (int which = 0; which < 3; which++) {
    sgtest::Graph g;
    if (which == 0) {
      sg_copy_desc c = {real.p, fake.p, 4096, SG_COPY_AUTO, "from-fake"};
      SG_ASSERT_OK(sg_graph_add_copy(g, &c, nullptr, 0, nullptr));
    } else if (which == 1) {
      sg_copy_desc c = {fake.p, real.p, 4096, SG_COPY_AUTO, "to-fake"};
      SG_ASSERT_OK(sg_graph_add_copy(g, &c, nullptr, 0, nullptr));
    } else {
      sg_memset_desc m = {fake.p, 1, 1, 4096, "set-fake"};
      SG_ASSERT_OK(sg_graph_add_memset(g, &m, nullptr, 0, nullptr));
    }
    sg_exec_options o = options();
    sgtest::Exec x;
    sgtest::LeakCheck leaks;
    EXPECT_EQ(sg_exec_create(g, &o, &x.e), SG_ERR_INVALID_COPY) << which;
    EXPECT_TRUE(contains(sg_last_error(), "host-backend")) << sg_last_error();
    EXPECT_TRUE(contains(sg_last_error(), "-fake'")) << sg_last_error();
  }
}

TEST_P(Errors, KernelWithoutCudaFunction) {
  sgtest::Graph g;
  sg_kernel_call k;
  sg_kernels_empty(&k);
  k.desc.func = nullptr;  // only the host twin
  k.desc.name = "twin-only";
  SG_ASSERT_OK(sg_graph_add_kernel(g, &k.desc, nullptr, 0, nullptr));
  sg_exec_options o = options();
  sgtest::Exec x;
  EXPECT_EQ(sg_exec_create(g, &o, &x.e), SG_ERR_UNSUPPORTED);
  EXPECT_TRUE(contains(sg_last_error(), "'twin-only'")) << sg_last_error();
  EXPECT_TRUE(contains(sg_last_error(), "no CUDA function")) << sg_last_error();
}

TEST_P(Errors, SharedMemoryOverTheDeviceLimit) {
  int optin = 0;
  CUDA_ASSERT(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0));
  if (size_t(optin) >= 4096 + SG_MAX_SHARED_BYTES)
    GTEST_SKIP() << "this device gives a block more than the API lets a node ask for";
  DevMem out(4096);
  // 4 KiB static plus the largest dynamic amount the API accepts.
  gputest::KernelCall k(gt_kernel_static_shared(), 1, 256, SG_MAX_SHARED_BYTES, "too-much-shared");
  k.arg(out.u32());
  sgtest::Graph g;
  SG_ASSERT_OK(sg_graph_add_kernel(g, &k.desc, nullptr, 0, nullptr));
  sg_exec_options o = options();
  sgtest::Exec x;
  EXPECT_EQ(sg_exec_create(g, &o, &x.e), SG_ERR_INVALID_LAUNCH);
  EXPECT_TRUE(contains(sg_last_error(), "'too-much-shared'")) << sg_last_error();
}

TEST_P(Errors, UpdateCheckedLikeCreation) {
  DevMem a(4096);
  gputest::Mem fake(SG_BACKEND_HOST, SG_MEMORY_DEVICE, 4096);
  sgtest::Graph g;
  sg_node n_c, n_k;
  sg_copy_desc c = {a.p, a.u32() + 512, 2048, SG_COPY_AUTO, "copy"};
  SG_ASSERT_OK(sg_graph_add_copy(g, &c, nullptr, 0, &n_c));
  gputest::AddCall add(a.u32(), 1, 1024, "add");
  SG_ASSERT_OK(sg_graph_add_kernel(g, &add.desc, &n_c, 1, &n_k));
  sg_exec_options o = options();
  sgtest::Exec x;
  SG_ASSERT_OK(sg_exec_create(g, &o, &x.e));
  c.src = fake.p;
  EXPECT_EQ(sg_exec_set_copy(x, n_c, &c), SG_ERR_INVALID_COPY);
  gputest::AddCall bad(a.u32(), 1, 1024, "add");
  bad.desc.func = nullptr;
  bad.desc.host_twin = [](const sg_kernel_launch *, void *const *) {};
  EXPECT_EQ(sg_exec_set_kernel(x, n_k, &bad.desc), SG_ERR_UNSUPPORTED);
  // Refused updates change nothing: the executable still runs.
  SG_ASSERT_OK(sg_exec_launch(x, nullptr));
  SG_ASSERT_OK(sg_exec_wait(x));
  sg_exec_stats s;
  SG_ASSERT_OK(sg_exec_get_stats(x, &s));
  EXPECT_EQ(s.param_updates, 0u);
}

INSTANTIATE_TEST_SUITE_P(Cuda, Errors, ::testing::ValuesIn(gputest::all_modes()),
                         gputest::mode_name);

TEST(DeviceErrors, BadDevice) {
  SG_SKIP_WITHOUT_GPU();
  sgtest::Graph g;
  SG_ASSERT_OK(sg_graph_add_empty(g, nullptr, nullptr, 0, nullptr));
  sg_exec_options o = gputest::cuda_options(gputest::all_modes()[0]);
  o.device = sg_cuda_device_count();
  sgtest::Exec x;
  EXPECT_EQ(sg_exec_create(g, &o, &x.e), SG_ERR_BACKEND_UNAVAILABLE);
  EXPECT_TRUE(contains(sg_last_error(), "device")) << sg_last_error();
  o.device = -1;
  EXPECT_EQ(sg_exec_create(g, &o, &x.e), SG_ERR_INVALID_ARGUMENT);
}

// The executable makes its device current for its own calls and gives the
// caller's current device back.
TEST(DeviceErrors, CallersDeviceIsRestored) {
  SG_SKIP_WITHOUT_GPU();
  int devices = sg_cuda_device_count();
  int target = devices - 1;
  int other = devices > 1 ? 0 : target;
  CUDA_ASSERT(cudaSetDevice(other));
  void *mem = nullptr;
  SG_ASSERT_OK(sg_mem_alloc(SG_BACKEND_CUDA, SG_MEMORY_DEVICE, target, 4096, &mem));
  sgtest::Graph g;
  gputest::AddCall add(static_cast<uint32_t *>(mem), 1, 1024);
  SG_ASSERT_OK(sg_graph_add_kernel(g, &add.desc, nullptr, 0, nullptr));
  for (const auto &m : gputest::all_modes()) {
    sg_exec_options o = gputest::cuda_options(m);
    o.device = target;
    sgtest::Exec x;
    SG_ASSERT_OK(sg_exec_create(g, &o, &x.e));
    SG_ASSERT_OK(sg_exec_launch(x, nullptr));
    SG_ASSERT_OK(sg_exec_wait(x));
    int now = -1;
    CUDA_ASSERT(cudaGetDevice(&now));
    EXPECT_EQ(now, other) << m.name;
  }
  SG_ASSERT_OK(sg_mem_free(mem));
}

}  // namespace
