// Kernels of the GPU tests (see gpu_test_kernels.h).
#include "gpu_test_kernels.h"

namespace {

__global__ void add_u32(uint32_t *data, uint32_t k, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x)
    data[i] += k;
}

__global__ void shared_fill(uint32_t *out, size_t n, uint32_t words) {
  extern __shared__ uint32_t s[];
  for (uint32_t j = threadIdx.x; j < words; j += blockDim.x) s[j] = j;
  __syncthreads();
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x)
    out[i] = (uint32_t)i * 3u + s[i % words];
}

__global__ void static_shared(uint32_t *out) {
  __shared__ uint32_t table[1024];
  table[threadIdx.x % 1024] = threadIdx.x;
  __syncthreads();
  if (threadIdx.x == 0 && blockIdx.x == 0) out[0] = 1 + table[0];
}

__global__ void illegal_write() {
  *(volatile uint32_t *)(uintptr_t)0x10 = 1u;
}

__global__ void slow_fill(uint32_t *out, uint32_t value, size_t n, uint64_t spin_ns) {
  uint64_t start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < spin_ns);
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x)
    out[i] = value;
}

// Launched by one test only (NodeKinds.KernelFirstLaunchedBehindAWaitingHostNode),
// so that its first launch in a program is the one that test makes.
__global__ void first_use_fill(uint32_t *out, uint32_t value, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x)
    out[i] = value;
}

// The smallest step of the global timer seen over many reads: its
// granularity on this GPU (0 if it never moved).
__global__ void timer_granularity(uint64_t *out) {
  uint64_t last, now, step = ~0ull;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(last));
  for (int i = 0; i < 200000; i++) {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    if (now != last) {
      if (now - last < step) step = now - last;
      last = now;
    }
  }
  *out = step == ~0ull ? 0 : step;
}

}  // namespace

extern "C" {
const void *gt_kernel_slow_fill(void) { return (const void *)slow_fill; }

cudaError_t gt_launch_timer_granularity(uint64_t *out, cudaStream_t stream) {
  timer_granularity<<<1, 1, 0, stream>>>(out);
  return cudaGetLastError();
}

const void *gt_kernel_add_u32(void) { return (const void *)add_u32; }
const void *gt_kernel_shared_fill(void) { return (const void *)shared_fill; }
const void *gt_kernel_static_shared(void) { return (const void *)static_shared; }
const void *gt_kernel_illegal_write(void) { return (const void *)illegal_write; }
const void *gt_kernel_first_use_fill(void) { return (const void *)first_use_fill; }

cudaError_t gt_launch_slow_fill(uint32_t *out, uint32_t value, size_t n, uint64_t spin_ns,
                                cudaStream_t stream) {
  slow_fill<<<64, 256, 0, stream>>>(out, value, n, spin_ns);
  return cudaGetLastError();
}
}
