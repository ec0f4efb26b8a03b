// The equivalence suite's one kernel: out[i] = a fold of up to four inputs
// through an integer mixing function, so that every edge of a random DAG
// carries data and any missed dependency changes the result bit for bit.
// The same function runs on the GPU (eq_kernel.cu), in the host twin, and
// in the serial reference.
#ifndef SG_EQ_KERNEL_H
#define SG_EQ_KERNEL_H

#include <stddef.h>
#include <stdint.h>

#include "streamgraph/graph.h"

#ifdef __CUDACC__
#define SGEQ_HD __host__ __device__
#else
#define SGEQ_HD
#endif

#define SGEQ_MAX_INPUTS 4u

static inline SGEQ_HD uint32_t sgeq_mix(uint32_t x, uint32_t y, uint32_t salt) {
  uint32_t h = x ^ (y * 0x9E3779B1u) ^ salt;
  h ^= h >> 16;
  h *= 0x85EBCA6Bu;
  h ^= h >> 13;
  h *= 0xC2B2AE35u;
  h ^= h >> 16;
  return h;
}

// Word i of a node that folds `count` inputs (in[k][i]) under `salt`.
static inline SGEQ_HD uint32_t sgeq_word(uint32_t salt, uint32_t i, const uint32_t *inputs,
                                         uint32_t count) {
  uint32_t v = salt * 0x01000193u + i;
  for (uint32_t k = 0; k < count; k++) v = sgeq_mix(v, inputs[k], salt + k);
  return v;
}

#ifdef __cplusplus
extern "C" {
#endif

// The kernel's arguments, in order: uint32_t *out, const uint32_t *in0..in3,
// uint32_t count, uint32_t salt, uint32_t n.
#define SGEQ_KERNEL_ARGS 8u

// The __global__ function (eq_kernel.cu), or NULL in a program without CUDA.
const void *sgeq_kernel_func(void);

// The host twin of that kernel.
void sgeq_kernel_twin(const sg_kernel_launch *launch, void *const *args);

#ifdef __cplusplus
}
#endif
#endif
