// The device side of the neural-network layer kernels (see nn.c for the
// host twins). Row kernels give each row to one block of 256 threads
// (call.c); blocks loop over the rows that remain.
#include <math.h>
#include <stddef.h>

#include "nn_math.h"
#include "pdl.cuh"

namespace {

constexpr unsigned kRowBlock = 256;  // blockDim.x of the row kernels (call.c)

__global__ void bias_act_kernel(float *y, const float *x, const float *bias, size_t rows,
                                size_t cols, unsigned act) {
  SG_PDL_BEGIN();
  const size_t n = rows * cols;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x)
    y[i] = sg__activate(x[i] + (bias ? bias[i % cols] : 0.0f), act);
}

// The block's sum or maximum of one value per thread, given to every thread.
// `scratch` holds one value per warp. Ends with a barrier, so the next
// reduction may reuse `scratch`.
template <bool kMax>
__device__ float block_reduce(float v, float *scratch) {
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  for (int o = 16; o > 0; o /= 2) {
    float other = __shfl_xor_sync(0xffffffffu, v, o);
    v = kMax ? fmaxf(v, other) : v + other;
  }
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  const unsigned warps = blockDim.x / 32;
  v = scratch[0];
  for (unsigned w = 1; w < warps; w++) v = kMax ? fmaxf(v, scratch[w]) : v + scratch[w];
  __syncthreads();
  return v;
}

__global__ void __launch_bounds__(kRowBlock)
    softmax_rows_kernel(float *y, const float *x, size_t rows, size_t cols) {
  SG_PDL_BEGIN();
  __shared__ float scratch[kRowBlock / 32];
  for (size_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const float *in = x + r * cols;
    float *out = y + r * cols;
    float m = -INFINITY;
    for (size_t c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, in[c]);
    m = block_reduce<true>(m, scratch);
    float sum = 0.0f;
    for (size_t c = threadIdx.x; c < cols; c += blockDim.x) sum += expf(in[c] - m);
    sum = block_reduce<false>(sum, scratch);
    const float inv = 1.0f / sum;
    for (size_t c = threadIdx.x; c < cols; c += blockDim.x) out[c] = expf(in[c] - m) * inv;
  }
}

__global__ void __launch_bounds__(kRowBlock)
    layer_norm_kernel(float *y, const float *x, const float *gamma, const float *beta,
                      size_t rows, size_t cols, float eps) {
  SG_PDL_BEGIN();
  __shared__ float scratch[kRowBlock / 32];
  for (size_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const float *in = x + r * cols;
    float *out = y + r * cols;
    float sum = 0.0f;
    for (size_t c = threadIdx.x; c < cols; c += blockDim.x) sum += in[c];
    const float mean = block_reduce<false>(sum, scratch) / (float)cols;
    // Two passes (the row is in cache by now): the deviations' squares do
    // not cancel, as sum(x^2) - n mean^2 would.
    float sq = 0.0f;
    for (size_t c = threadIdx.x; c < cols; c += blockDim.x) {
      float d = in[c] - mean;
      sq += d * d;
    }
    const float inv = rsqrtf(block_reduce<false>(sq, scratch) / (float)cols + eps);
    for (size_t c = threadIdx.x; c < cols; c += blockDim.x) {
      float v = (in[c] - mean) * inv;
      out[c] = v * (gamma ? gamma[c] : 1.0f) + (beta ? beta[c] : 0.0f);
    }
  }
}

}  // namespace

extern "C" {
const void *sg__kernel_bias_act_f32(void) { return (const void *)bias_act_kernel; }
const void *sg__kernel_softmax_rows_f32(void) { return (const void *)softmax_rows_kernel; }
const void *sg__kernel_layer_norm_f32(void) { return (const void *)layer_norm_kernel; }
}
