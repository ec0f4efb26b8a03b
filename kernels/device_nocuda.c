/* A build without CUDA: the kernels have no device side. */
#include "device.h"

const void *sg__kernel_empty(void) { return 0; }
const void *sg__kernel_fill_u32(void) { return 0; }
const void *sg__kernel_axpy_f32(void) { return 0; }
const void *sg__kernel_mix_u32(void) { return 0; }
const void *sg__kernel_work_u32(void) { return 0; }
const void *sg__kernel_spin(void) { return 0; }

const void *sg__kernel_bias_act_f32(void) { return 0; }
const void *sg__kernel_softmax_rows_f32(void) { return 0; }
const void *sg__kernel_layer_norm_f32(void) { return 0; }

const void *sg__kernel_cmul_c32(void) { return 0; }
const void *sg__kernel_ols_assemble_c32(void) { return 0; }
const void *sg__kernel_ols_discard_c32(void) { return 0; }
const void *sg__kernel_decimate_c32(void) { return 0; }
const void *sg__kernel_power_db_c32(void) { return 0; }
