// The device side of the signal-processing kernels (see signal.c for the
// host twins, which index element for element the same way).
#include <float.h>
#include <math.h>
#include <stddef.h>
#include "pdl.cuh"

namespace {

// sg_complex_f32: two floats, float-aligned (no float2 loads, which would
// need 8-byte alignment).
struct cf32 {
  float re, im;
};

#define GRID_STRIDE(i, n)                                                     \
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < (n);   \
       i += (size_t)gridDim.x * blockDim.x)

__global__ void cmul_kernel(cf32 *out, const cf32 *a, const cf32 *b, size_t len, size_t rows,
                            size_t filters, float scale) {
  SG_PDL_BEGIN();
  const size_t per_filter = len * rows;
  GRID_STRIDE(i, per_filter * filters) {
    const size_t f = i / per_filter, ai = i - f * per_filter, j = ai % len;
    const cf32 x = a[ai], h = b[f * len + j];
    cf32 o;
    o.re = (x.re * h.re - x.im * h.im) * scale;
    o.im = (x.re * h.im + x.im * h.re) * scale;
    out[i] = o;
  }
}

__global__ void ols_assemble_kernel(cf32 *blocks, const cf32 *history, const cf32 *chunk,
                                    size_t history_len, size_t block_len, size_t hop,
                                    size_t block_count) {
  SG_PDL_BEGIN();
  GRID_STRIDE(i, block_len * block_count) {
    const size_t b = i / block_len, j = i - b * block_len, s = b * hop + j;
    blocks[i] = s < history_len ? history[s] : chunk[s - history_len];
  }
}

__global__ void ols_discard_kernel(cf32 *out, const cf32 *blocks, size_t block_len,
                                   size_t discard, size_t block_count, size_t factor) {
  SG_PDL_BEGIN();
  const size_t per_block = (block_len - discard) / factor;
  GRID_STRIDE(i, per_block * block_count) {
    const size_t b = i / per_block, k = i - b * per_block;
    out[i] = blocks[b * block_len + discard + k * factor];
  }
}

__global__ void decimate_kernel(cf32 *out, const cf32 *in, size_t n_out, size_t factor) {
  SG_PDL_BEGIN();
  GRID_STRIDE(k, n_out) out[k] = in[k * factor];
}

__global__ void power_db_kernel(float *out, const cf32 *in, size_t n) {
  SG_PDL_BEGIN();
  GRID_STRIDE(i, n) {
    const cf32 v = in[i];
    const float p = v.re * v.re + v.im * v.im;
    out[i] = 10.0f * log10f(fmaxf(p, FLT_MIN));
  }
}

}  // namespace

extern "C" {
const void *sg__kernel_cmul_c32(void) { return (const void *)cmul_kernel; }
const void *sg__kernel_ols_assemble_c32(void) { return (const void *)ols_assemble_kernel; }
const void *sg__kernel_ols_discard_c32(void) { return (const void *)ols_discard_kernel; }
const void *sg__kernel_decimate_c32(void) { return (const void *)decimate_kernel; }
const void *sg__kernel_power_db_c32(void) { return (const void *)power_db_kernel; }
}
