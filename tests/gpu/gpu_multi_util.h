// Helpers of the multi-GPU tests: skipping with a clear reason where fewer
// than two devices exist, memory on a given device, reading it back.
#ifndef SG_GPU_MULTI_UTIL_H
#define SG_GPU_MULTI_UTIL_H

#include <cstdlib>
#include <string>

#include "gpu_util.h"

// Every multi-device test starts with this. One GPU (or none, as in CI)
// skips: the tests need two devices, which the two-GPU machine has
// (tools/gpu-check-multi).
#define SG_SKIP_WITHOUT_TWO_GPUS()                                                          \
  do {                                                                                      \
    int sg_gpus_ = sg_cuda_device_count();                                                  \
    if (sg_gpus_ < 2)                                                                       \
      GTEST_SKIP() << "needs 2 CUDA devices, " << sg_gpus_                                  \
                   << " present (run on the two-GPU machine: tools/gpu-check-multi)";      \
  } while (0)

namespace multitest {

// Fills memory of `device` with 0xA5 bytes and waits for it (the memset on
// that device, so that its synchronisation covers it).
inline void poison_on(int device, void *p, size_t bytes) {
  int previous = 0;
  ASSERT_EQ(cudaGetDevice(&previous), cudaSuccess);
  ASSERT_EQ(cudaSetDevice(device), cudaSuccess);
  ASSERT_EQ(cudaMemset(p, 0xA5, bytes), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  ASSERT_EQ(cudaSetDevice(previous), cudaSuccess);
}

// Device memory of `device` from sg_mem_alloc, freed at the end of the scope.
struct DevOn {
  void *p = nullptr;
  size_t bytes = 0;
  int device = 0;
  DevOn(int dev, size_t n) : bytes(n), device(dev) {
    EXPECT_EQ(sg_mem_alloc(SG_BACKEND_CUDA, SG_MEMORY_DEVICE, dev, n, &p), SG_OK)
        << "device " << dev << ": " << sg_last_error();
  }
  ~DevOn() {
    if (p) sg_mem_free(p);
  }
  DevOn(const DevOn &) = delete;
  DevOn &operator=(const DevOn &) = delete;
  uint32_t *u32() const { return static_cast<uint32_t *>(p); }
  void poison() const { poison_on(device, p, bytes); }
};

// 1 when device a can access device b's memory and back.
inline bool peer_pair(int a, int b) {
  int ab = 0, ba = 0;
  cudaDeviceCanAccessPeer(&ab, a, b);
  cudaDeviceCanAccessPeer(&ba, b, a);
  return ab && ba;
}

// Sets SG_PEER_ACCESS for the length of a scope (the library reads it each
// time it decides how a copy between devices runs).
struct PeerAccessEnv {
  explicit PeerAccessEnv(const char *value) {
    if (value) setenv("SG_PEER_ACCESS", value, 1);
    else unsetenv("SG_PEER_ACCESS");
  }
  ~PeerAccessEnv() { unsetenv("SG_PEER_ACCESS"); }
};

inline sg_exec_options options_on(const gputest::ModeCase &m, int device, unsigned limit = 0) {
  sg_exec_options o = gputest::cuda_options(m, limit);
  o.device = device;
  return o;
}

}  // namespace multitest

#endif
