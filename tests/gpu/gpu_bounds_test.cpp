// Bounds on the GPU: device memory the library did not allocate is bounded by
// the allocation the driver reports (CU_POINTER_ATTRIBUTE_RANGE_START_ADDR /
// RANGE_SIZE), sg_mem_alloc blocks by their own size; a copy or memset that
// runs past the end is refused when added or updated, in every mode, and the
// executable keeps running its old parameters.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gpu_util.h"

namespace {

using namespace gputest;

constexpr size_t MiB = size_t(1) << 20;
// 3 MiB: not a multiple of any allocation granularity, so a driver range
// that were rounded up would still end well before 3 MiB + 2 MiB + 1.
constexpr size_t kForeign = 3 * MiB;
constexpr size_t kOverrun = kForeign + 2 * MiB + 1;

// cudaMalloc'ed memory: "foreign" to the library.
struct CudaMem {
  void *p = nullptr;
  explicit CudaMem(size_t n, bool managed = false) {
    cudaError_t e = managed ? cudaMallocManaged(&p, n) : cudaMalloc(&p, n);
    EXPECT_EQ(e, cudaSuccess) << cudaGetErrorName(e);
  }
  ~CudaMem() {
    if (p) cudaFree(p);
  }
  char *at(size_t off) const { return static_cast<char *>(p) + off; }
};

std::string last() { return sg_last_error(); }

TEST(GpuBounds, ForeignDeviceMemoryIsBoundedByTheDriversRange) {
  SG_SKIP_WITHOUT_GPU();
  CudaMem dev(kForeign);
  std::vector<char> host(kOverrun);
  sgtest::Graph g;
  sg_copy_desc c = {dev.p, host.data(), kOverrun, SG_COPY_AUTO, "too long"};
  EXPECT_EQ(sg_graph_add_copy(g, &c, nullptr, 0, nullptr), SG_ERR_INVALID_ARGUMENT);
  std::string msg = last();
  std::printf("message: %s\n", msg.c_str());
  EXPECT_NE(msg.find("'too long'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("a CUDA allocation of"), std::string::npos) << msg;
  EXPECT_NE(msg.find(std::to_string(kOverrun) + " bytes"), std::string::npos) << msg;

  // Inside the allocation, at any offset, up to its end: accepted.
  c = {dev.p, host.data(), kForeign, SG_COPY_AUTO, "whole"};
  SG_EXPECT_OK(sg_graph_add_copy(g, &c, nullptr, 0, nullptr));
  c = {dev.at(MiB), host.data(), 2 * MiB, SG_COPY_AUTO, "tail"};
  SG_EXPECT_OK(sg_graph_add_copy(g, &c, nullptr, 0, nullptr));
  // The source side, from an offset.
  c = {host.data(), dev.at(MiB), kOverrun - MiB, SG_COPY_AUTO, "download"};
  EXPECT_EQ(sg_graph_add_copy(g, &c, nullptr, 0, nullptr), SG_ERR_INVALID_ARGUMENT) << last();
  // Memsets on foreign memory.
  sg_memset_desc m = {dev.p, 0, 4, kOverrun / 4, "clear"};
  EXPECT_EQ(sg_graph_add_memset(g, &m, nullptr, 0, nullptr), SG_ERR_INVALID_ARGUMENT);
  EXPECT_NE(last().find("'clear'"), std::string::npos) << last();
  m.count = kForeign / 4;
  SG_EXPECT_OK(sg_graph_add_memset(g, &m, nullptr, 0, nullptr));
}

TEST(GpuBounds, ManagedMemoryIsBoundedToo) {
  SG_SKIP_WITHOUT_GPU();
  CudaMem managed(kForeign, true);
  std::vector<char> host(kOverrun);
  sgtest::Graph g;
  sg_copy_desc c = {managed.p, host.data(), kOverrun, SG_COPY_AUTO, "managed"};
  EXPECT_EQ(sg_graph_add_copy(g, &c, nullptr, 0, nullptr), SG_ERR_INVALID_ARGUMENT) << last();
  c.bytes = kForeign;
  SG_EXPECT_OK(sg_graph_add_copy(g, &c, nullptr, 0, nullptr));
}

TEST(GpuBounds, SgMemAllocBlocksAreBoundedByTheirOwnSize) {
  SG_SKIP_WITHOUT_GPU();
  DevMem dev(4096);
  PinnedMem pinned(8192);
  sgtest::Graph g;
  sg_copy_desc c = {dev.p, pinned.p, 4097, SG_COPY_AUTO, "upload"};
  EXPECT_EQ(sg_graph_add_copy(g, &c, nullptr, 0, nullptr), SG_ERR_INVALID_ARGUMENT);
  EXPECT_NE(last().find("an sg_mem_alloc block of 4096 bytes"), std::string::npos) << last();
  c = {pinned.p, dev.p, 4096, SG_COPY_AUTO, "download"};
  SG_EXPECT_OK(sg_graph_add_copy(g, &c, nullptr, 0, nullptr));
  c = {static_cast<char *>(pinned.p) + 4096, dev.p, 4097, SG_COPY_DEVICE_TO_HOST, "pinned side"};
  EXPECT_EQ(sg_graph_add_copy(g, &c, nullptr, 0, nullptr), SG_ERR_INVALID_ARGUMENT);
  EXPECT_NE(last().find("8192 bytes"), std::string::npos) << last();
}

class GpuBoundsUpdate : public ModeTest {};

// Updates are checked like additions, and a refused update leaves the
// executable running what it ran before (compared with the expected data).
TEST_P(GpuBoundsUpdate, RefusedUpdatesKeepTheOldParameters) {
  const size_t n = kForeign / 4;
  CudaMem dev(kForeign);
  PinnedMem in(kOverrun), out(n * 4);
  std::vector<uint32_t> data = random_u32(12, n);
  std::memcpy(in.p, data.data(), n * 4);
  std::memset(out.p, 0xA5, n * 4);
  sgtest::Graph g;
  sg_node up, clear, down;
  sg_copy_desc c_up = {dev.p, in.p, n * 4, SG_COPY_AUTO, "upload"};
  SG_ASSERT_OK(sg_graph_add_copy(g, &c_up, nullptr, 0, &up));
  sg_memset_desc m = {dev.p, 0, 4, 16, "clear"};
  SG_ASSERT_OK(sg_graph_add_memset(g, &m, &up, 1, &clear));
  sg_copy_desc c_down = {out.p, dev.p, n * 4, SG_COPY_AUTO, "download"};
  SG_ASSERT_OK(sg_graph_add_copy(g, &c_down, &clear, 1, &down));
  sg_exec_options o = options();
  sgtest::Exec e;
  SG_ASSERT_OK(sg_exec_create(g, &o, &e.e));

  sg_copy_desc bad = c_up;
  bad.bytes = kOverrun;  // the pinned source has room, the foreign destination does not
  EXPECT_EQ(sg_exec_set_copy(e, up, &bad), SG_ERR_INVALID_ARGUMENT);
  EXPECT_NE(last().find("sg_exec_set_copy: node 'upload' (#0)"), std::string::npos) << last();
  EXPECT_NE(last().find("a CUDA allocation"), std::string::npos) << last();
  sg_memset_desc bad_m = m;
  bad_m.count = kOverrun / 4;
  EXPECT_EQ(sg_exec_set_memset(e, clear, &bad_m), SG_ERR_INVALID_ARGUMENT);
  EXPECT_NE(last().find("'clear' (#1)"), std::string::npos) << last();

  SG_ASSERT_OK(sg_exec_launch(e, nullptr));
  SG_ASSERT_OK(sg_exec_wait(e));
  const uint32_t *got = static_cast<const uint32_t *>(out.p);
  for (size_t i = 0; i < n; i++)
    ASSERT_EQ(got[i], i < 16 ? 0u : data[i]) << "element " << i;
}

INSTANTIATE_TEST_SUITE_P(Modes, GpuBoundsUpdate, ::testing::ValuesIn(all_modes()), mode_name);

}  // namespace

namespace {

using namespace gputest;

class GpuDeferredFree : public ModeTest {};

// sg_mem_free of a block a launch in flight uses is deferred: the launch
// (queued behind the caller's slow kernel) still reads and writes valid
// memory, and the block is given back when the executable is destroyed.
TEST_P(GpuDeferredFree, FreeDuringALaunchWaitsForTheExecutable) {
  const size_t n = 1 << 16;
  void *dev = nullptr;
  SG_ASSERT_OK(sg_mem_alloc(SG_BACKEND_CUDA, SG_MEMORY_DEVICE, 0, n * 4, &dev));
  PinnedMem in(n * 4), out(n * 4);
  DevMem spin(4096);
  std::vector<uint32_t> data = random_u32(99, n);
  std::memcpy(in.p, data.data(), n * 4);
  std::memset(out.p, 0xA5, n * 4);
  sgtest::Graph g;
  sg_node up;
  sg_copy_desc c = {dev, in.p, n * 4, SG_COPY_AUTO, "upload"};
  SG_ASSERT_OK(sg_graph_add_copy(g, &c, nullptr, 0, &up));
  c = {out.p, dev, n * 4, SG_COPY_AUTO, "download"};
  SG_ASSERT_OK(sg_graph_add_copy(g, &c, &up, 1, nullptr));
  sg_exec_options o = options();
  sg_exec *e = nullptr;
  SG_ASSERT_OK(sg_exec_create(g, &o, &e));
  cudaStream_t s;
  CUDA_ASSERT(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  CUDA_ASSERT(gt_launch_slow_fill(static_cast<uint32_t *>(spin.p), 1, 1, 50 * 1000 * 1000, s));
  SG_ASSERT_OK(sg_exec_launch(e, s));
  SG_ASSERT_OK(sg_mem_free(dev));  // deferred: the launch has not even started
  EXPECT_EQ(sg_mem_free(dev), SG_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(sg_last_error()).find("already freed"), std::string::npos)
      << sg_last_error();
  CUDA_ASSERT(cudaStreamSynchronize(s));
  SG_ASSERT_OK(sg_exec_wait(e));
  EXPECT_EQ(std::memcmp(out.p, data.data(), n * 4), 0) << "the launch saw freed memory";
  SG_ASSERT_OK(sg_exec_destroy(e));
  // Given back now: a third free is still a double free.
  EXPECT_EQ(sg_mem_free(dev), SG_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(sg_last_error()).find("already freed"),
            std::string::npos)
      << sg_last_error();
  CUDA_ASSERT(cudaStreamDestroy(s));
}

INSTANTIATE_TEST_SUITE_P(Modes, GpuDeferredFree, ::testing::ValuesIn(all_modes()), mode_name);

}  // namespace
