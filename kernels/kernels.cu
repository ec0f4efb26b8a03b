// The device side of the ready-made kernels. Each accessor returns the
// __global__ function's address, registered with the CUDA runtime this
// library and its users share.
#include <stdint.h>

#include "mix.h"
#include "pdl.cuh"

namespace {

__global__ void empty_kernel() { SG_PDL_BEGIN(); }

__global__ void fill_u32_kernel(uint32_t *out, uint32_t value, size_t n) {
  SG_PDL_BEGIN();
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x)
    out[i] = value;
}

__global__ void axpy_f32_kernel(float *y, const float *x, float a, size_t n) {
  SG_PDL_BEGIN();
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x)
    y[i] = a * x[i] + y[i];
}

__global__ void mix_u32_kernel(uint32_t *out, const uint32_t *a, const uint32_t *b, uint32_t salt,
                               size_t n) {
  SG_PDL_BEGIN();
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x)
    out[i] = sg__mix(a[i], b[i], salt);
}

__global__ void work_u32_kernel(uint32_t *data, size_t n, uint32_t rounds) {
  SG_PDL_BEGIN();
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x) {
    uint32_t v = data[i];
    for (uint32_t r = 0; r < rounds; r++) v = sg__mix(v, (uint32_t)i, r);
    data[i] = v;
  }
}

__global__ void spin_kernel(uint64_t ns) {
  SG_PDL_BEGIN();
  uint64_t start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < ns);
}

}  // namespace

extern "C" {
const void *sg__kernel_empty(void) { return (const void *)empty_kernel; }
const void *sg__kernel_fill_u32(void) { return (const void *)fill_u32_kernel; }
const void *sg__kernel_axpy_f32(void) { return (const void *)axpy_f32_kernel; }
const void *sg__kernel_mix_u32(void) { return (const void *)mix_u32_kernel; }
const void *sg__kernel_work_u32(void) { return (const void *)work_u32_kernel; }
const void *sg__kernel_spin(void) { return (const void *)spin_kernel; }
}
