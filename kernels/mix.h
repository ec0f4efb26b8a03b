/* The integer mixing function shared by the kernels and their host twins,
 * so both compute bitwise the same values. */
#ifndef SG_KERNELS_MIX_H
#define SG_KERNELS_MIX_H

#include <stdint.h>

#ifdef __CUDACC__
#define SG_HOST_DEVICE __host__ __device__
#else
#define SG_HOST_DEVICE
#endif

static inline SG_HOST_DEVICE uint32_t sg__mix(uint32_t a, uint32_t b, uint32_t salt) {
  uint32_t h = a * 0x9e3779b1u ^ (b + 0x7f4a7c15u + (a << 6) + (a >> 2)) ^ salt;
  h ^= h >> 16;
  h *= 0x85ebca6bu;
  h ^= h >> 13;
  h *= 0xc2b2ae35u;
  h ^= h >> 16;
  return h;
}

#endif
