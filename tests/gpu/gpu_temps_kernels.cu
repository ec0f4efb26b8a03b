// The kernel of gpu_temps_test: dst[i] = mix(a[i], b[i], salt), the same
// function the test's CPU reference computes.
#include <cuda_runtime_api.h>
#include <stdint.h>

namespace {

__host__ __device__ uint32_t mix(uint32_t a, uint32_t b, uint32_t salt) {
  uint32_t x = a * 2654435761u ^ (b + salt);
  x ^= x >> 15;
  x *= 0x2c1b3c6du;
  return x ^ (x >> 12);
}

__global__ void mix_u32(uint32_t *dst, const uint32_t *a, const uint32_t *b, uint32_t n,
                        uint32_t salt) {
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    dst[i] = mix(a[i], b[i], salt);
}

}  // namespace

extern "C" const void *gtt_kernel_mix_u32(void) { return (const void *)mix_u32; }
extern "C" uint32_t gtt_mix(uint32_t a, uint32_t b, uint32_t salt) { return mix(a, b, salt); }
