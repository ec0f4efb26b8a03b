// The host twin of the equivalence suite's kernel (see eq_kernel.h).
#include <cstring>

#include "eq_kernel.h"

extern "C" void sgeq_kernel_twin(const sg_kernel_launch *, void *const *args) {
  uint32_t *out = *static_cast<uint32_t *const *>(args[0]);
  const uint32_t *in[SGEQ_MAX_INPUTS];
  for (unsigned k = 0; k < SGEQ_MAX_INPUTS; k++)
    in[k] = *static_cast<const uint32_t *const *>(args[1 + k]);
  uint32_t count, salt, n;
  std::memcpy(&count, args[5], sizeof count);
  std::memcpy(&salt, args[6], sizeof salt);
  std::memcpy(&n, args[7], sizeof n);
  for (uint32_t i = 0; i < n; i++) {
    uint32_t words[SGEQ_MAX_INPUTS];
    for (uint32_t k = 0; k < count; k++) words[k] = in[k][i];
    out[i] = sgeq_word(salt, i, words, count);
  }
}

#ifndef SGEQ_WITH_CUDA_KERNEL
extern "C" const void *sgeq_kernel_func(void) { return nullptr; }
#endif
