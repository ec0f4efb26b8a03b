/* The __global__ functions of the ready-made kernels (NULL without CUDA). */
#ifndef SG_KERNELS_DEVICE_H
#define SG_KERNELS_DEVICE_H

const void *sg__kernel_empty(void);
const void *sg__kernel_fill_u32(void);
const void *sg__kernel_axpy_f32(void);
const void *sg__kernel_mix_u32(void);
const void *sg__kernel_work_u32(void);
const void *sg__kernel_spin(void);

const void *sg__kernel_bias_act_f32(void);
const void *sg__kernel_softmax_rows_f32(void);
const void *sg__kernel_layer_norm_f32(void);

const void *sg__kernel_cmul_c32(void);
const void *sg__kernel_ols_assemble_c32(void);
const void *sg__kernel_ols_discard_c32(void);
const void *sg__kernel_decimate_c32(void);
const void *sg__kernel_power_db_c32(void);

#endif
