/* The activations, shared by the device kernels and their host twins so
 * both apply the same formula. */
#ifndef SG_KERNELS_NN_MATH_H
#define SG_KERNELS_NN_MATH_H

#include <math.h>

#ifdef __CUDACC__
#define SG_NN_HOST_DEVICE __host__ __device__
#else
#define SG_NN_HOST_DEVICE
#endif

static inline SG_NN_HOST_DEVICE float sg__activate(float v, unsigned act) {
  switch (act) {
    case 1: /* SG_ACTIVATION_RELU */
      return v > 0.0f ? v : 0.0f;
    case 2: /* SG_ACTIVATION_GELU: 1/sqrt(2) */
      return 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
    default:
      return v;
  }
}

#endif
