// The equivalence suite's kernel on the GPU (see eq_kernel.h).
#include "eq_kernel.h"

namespace {

__global__ void eq_mix(uint32_t *out, const uint32_t *in0, const uint32_t *in1,
                       const uint32_t *in2, const uint32_t *in3, uint32_t count, uint32_t salt,
                       uint32_t n) {
  const uint32_t *in[SGEQ_MAX_INPUTS] = {in0, in1, in2, in3};
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    uint32_t words[SGEQ_MAX_INPUTS];
    for (uint32_t k = 0; k < count; k++) words[k] = in[k][i];
    out[i] = sgeq_word(salt, i, words, count);
  }
}

}  // namespace

extern "C" const void *sgeq_kernel_func(void) { return (const void *)eq_mix; }
