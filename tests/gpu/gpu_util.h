// Helpers of the GPU tests: skipping without a device, the three CUDA
// execution ways (streams mode, graph mode built explicitly or by capture),
// memory from sg_mem_alloc, test-kernel descriptors and CPU references.
#ifndef SG_GPU_UTIL_H
#define SG_GPU_UTIL_H

#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstring>
#include <ostream>
#include <string>
#include <vector>

#include "gpu_test_kernels.h"
#include "sg_test_util.h"
#include "streamgraph/kernels.h"

// Every GPU test starts with this: the suite stays green without a GPU.
#define SG_SKIP_WITHOUT_GPU()                                          \
  do {                                                                 \
    if (sg_cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device"; \
  } while (0)

#define CUDA_ASSERT(expr)                                                          \
  do {                                                                             \
    cudaError_t cuda_test_err_ = (expr);                                           \
    ASSERT_EQ(cuda_test_err_, cudaSuccess) << #expr << ": "                        \
                                           << cudaGetErrorName(cuda_test_err_);    \
  } while (0)

namespace gputest {

struct ModeCase {
  const char *name;
  sg_exec_mode mode;
  sg_graph_build build;
};

// How test names and failure messages show a case.
inline void PrintTo(const ModeCase &m, std::ostream *os) { *os << m.name; }

inline const std::vector<ModeCase> &all_modes() {
  static const std::vector<ModeCase> modes = {
      {"streams", SG_MODE_STREAMS, SG_BUILD_EXPLICIT},
      {"graph_explicit", SG_MODE_GRAPH, SG_BUILD_EXPLICIT},
      {"graph_capture", SG_MODE_GRAPH, SG_BUILD_CAPTURE},
  };
  return modes;
}

inline std::string mode_name(const ::testing::TestParamInfo<ModeCase> &info) {
  return info.param.name;
}

// The CUDA backend's own paths: pageable copies go to the driver
// (SG_STAGING_NONE), so that these tests do not depend on pinned staging,
// whose process-wide pool and registration cache keep memory between tests
// (tests/staging covers them; gpu_nodes_test runs one case with the
// default policy).
inline sg_exec_options cuda_options(const ModeCase &m, unsigned max_streams = 0) {
  sg_exec_options o;
  sg_exec_options_init(&o);
  o.staging.policy = SG_STAGING_NONE;
  o.backend = SG_BACKEND_CUDA;
  o.mode = m.mode;
  o.build = m.build;
  o.max_streams = max_streams;
  o.device = 0;
  return o;
}

// Base of the parameterised GPU tests: skips without a device.
class ModeTest : public ::testing::TestWithParam<ModeCase> {
 protected:
  void SetUp() override { SG_SKIP_WITHOUT_GPU(); }
  sg_exec_options options(unsigned max_streams = 0) const {
    return cuda_options(GetParam(), max_streams);
  }
  bool graph_mode() const { return GetParam().mode == SG_MODE_GRAPH; }
};

// Memory from sg_mem_alloc, freed at the end of the scope.
struct Mem {
  void *p = nullptr;
  size_t bytes = 0;
  Mem(sg_backend backend, sg_memory_kind kind, size_t n) : bytes(n) {
    sg_status st = sg_mem_alloc(backend, kind, 0, n, &p);
    EXPECT_EQ(st, SG_OK) << sg_last_error();
  }
  ~Mem() {
    if (p) sg_mem_free(p);
  }
  Mem(const Mem &) = delete;
  Mem &operator=(const Mem &) = delete;
  uint32_t *u32() const { return static_cast<uint32_t *>(p); }
  template <class T>
  T *as() const {
    return static_cast<T *>(p);
  }
};

struct DevMem : Mem {
  explicit DevMem(size_t n) : Mem(SG_BACKEND_CUDA, SG_MEMORY_DEVICE, n) {}
};
struct PinnedMem : Mem {
  explicit PinnedMem(size_t n) : Mem(SG_BACKEND_CUDA, SG_MEMORY_HOST_PINNED, n) {}
};

// A descriptor for one of the test's own kernels. Points into itself: fill
// it where it is used, do not copy it.
struct KernelCall {
  sg_kernel_desc desc{};
  void *ptrs[8]{};
  size_t sizes[8]{};
  uint64_t values[8]{};
  KernelCall(const void *func, unsigned grid, unsigned block, size_t shared = 0,
             const char *name = nullptr) {
    desc.func = func;
    desc.func_kind = SG_KERNEL_FUNCTION;
    desc.grid = {grid, 1, 1};
    desc.block = {block, 1, 1};
    desc.shared_bytes = shared;
    desc.args = ptrs;
    desc.arg_sizes = sizes;
    desc.name = name;
  }
  KernelCall(const KernelCall &) = delete;
  KernelCall &operator=(const KernelCall &) = delete;
  template <class T>
  KernelCall &arg(T v) {
    static_assert(sizeof(T) <= sizeof(uint64_t), "argument too large");
    unsigned i = desc.arg_count++;
    std::memcpy(&values[i], &v, sizeof v);
    ptrs[i] = &values[i];
    sizes[i] = sizeof v;
    return *this;
  }
};

// add_u32(data, k, n) as a node descriptor.
struct AddCall : KernelCall {
  AddCall(uint32_t *data, uint32_t k, size_t n, const char *name = nullptr)
      : KernelCall(gt_kernel_add_u32(), 64, 256, 0, name) {
    arg(data).arg(k).arg(n);
  }
};

inline void poison(void *dev, size_t bytes) {
  ASSERT_EQ(cudaMemset(dev, 0xA5, bytes), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

inline std::vector<uint32_t> read_u32(const void *dev, size_t n) {
  std::vector<uint32_t> out(n);
  EXPECT_EQ(cudaMemcpy(out.data(), dev, n * 4, cudaMemcpyDefault), cudaSuccess);
  return out;
}

inline void write_u32(void *dev, const std::vector<uint32_t> &v) {
  ASSERT_EQ(cudaMemcpy(dev, v.data(), v.size() * 4, cudaMemcpyDefault), cudaSuccess);
  // A pageable cudaMemcpy may return before its DMA lands; the executables'
  // non-blocking streams would not wait for it.
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

inline std::vector<uint32_t> random_u32(uint32_t seed, size_t n) {
  std::mt19937 rng(seed);
  std::vector<uint32_t> v(n);
  for (auto &x : v) x = rng();
  return v;
}

// CPU references of the ready-made kernels.
inline uint32_t work_ref(uint32_t v, size_t i, uint32_t rounds) {
  for (uint32_t r = 0; r < rounds; r++) v = sg_kernels_mix(v, static_cast<uint32_t>(i), r);
  return v;
}

}  // namespace gputest

#endif
