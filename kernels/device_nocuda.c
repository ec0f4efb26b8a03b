/* A build without CUDA: the kernels have no device side. */
#include "device.h"

const void *sg__kernel_empty(void) { return 0; }
const void *sg__kernel_fill_u32(void) { return 0; }
const void *sg__kernel_axpy_f32(void) { return 0; }
const void *sg__kernel_mix_u32(void) { return 0; }
const void *sg__kernel_work_u32(void) { return 0; }
const void *sg__kernel_spin(void) { return 0; }
