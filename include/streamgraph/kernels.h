/*
 * streamgraph/kernels.h - ready-made kernels, each with its host twin
 * (library streamgraph_kernels).
 *
 * Each function fills an sg_kernel_call whose `desc` is ready for
 * sg_graph_add_kernel or sg_exec_set_kernel: the __global__ function (NULL in
 * a build without CUDA), a launch shape, the arguments and the host twin.
 * `desc.args` points into the call itself: fill the call where it will be
 * used and do not copy it before use. Kernels use grid-stride loops, so any
 * grid gives the same result; integer kernels give bitwise the same result
 * on the GPU and on the host.
 */
#ifndef STREAMGRAPH_KERNELS_H
#define STREAMGRAPH_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include "graph.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SG_KERNEL_CALL_MAX_ARGS 8

typedef struct sg_kernel_call {
  sg_kernel_desc desc;
  void *arg_ptrs[SG_KERNEL_CALL_MAX_ARGS];
  size_t arg_sizes[SG_KERNEL_CALL_MAX_ARGS];
  uint64_t arg_values[SG_KERNEL_CALL_MAX_ARGS];
} sg_kernel_call;

/* Does nothing: one block of one thread (launch-overhead measurements). */
void sg_kernels_empty(sg_kernel_call *call);

/* out[i] = value, for i < n. */
void sg_kernels_fill_u32(sg_kernel_call *call, uint32_t *out, uint32_t value, size_t n);

/* y[i] = a * x[i] + y[i], for i < n (float: the GPU may fuse the multiply-add). */
void sg_kernels_axpy_f32(sg_kernel_call *call, float *y, const float *x, float a, size_t n);

/* out[i] = sg_kernels_mix(a[i], b[i], salt), for i < n; out may be a or b. */
void sg_kernels_mix_u32(sg_kernel_call *call, uint32_t *out, const uint32_t *a, const uint32_t *b,
                        uint32_t salt, size_t n);

/* data[i] = sg_kernels_mix applied `rounds` times to data[i]: a kernel whose
 * cost is a parameter (compute-bound with many rounds, memory-bound with 0). */
void sg_kernels_work_u32(sg_kernel_call *call, uint32_t *data, size_t n, uint32_t rounds);

/* One thread that busy-waits `ns` nanoseconds (the host twin sleeps). */
void sg_kernels_spin(sg_kernel_call *call, uint64_t ns);

/* The integer mixing function of mix_u32 and work_u32, for CPU references. */
uint32_t sg_kernels_mix(uint32_t a, uint32_t b, uint32_t salt);

/* ---- neural-network layers (fp32) ----------------------------------------
 * Matrices are row-major, `rows` x `cols`, rows contiguous (a batch of
 * `rows` vectors of `cols` features): what a column-major GEMM writes as
 * its `cols` x `rows` result with leading dimension `cols`. The GPU and the
 * host twin agree to within float rounding (a few ulp of the result, more
 * where a sum cancels); they are not bitwise equal. */

typedef enum sg_activation {
  SG_ACTIVATION_NONE = 0,  /* identity */
  SG_ACTIVATION_RELU,      /* max(v, 0) */
  SG_ACTIVATION_GELU       /* v * (1 + erf(v / sqrt 2)) / 2, the exact (erf) form */
} sg_activation;

/* y[r][c] = act(x[r][c] + bias[c]) for r < rows, c < cols. `bias` may be
 * NULL (no bias); y may be x. */
void sg_kernels_bias_act_f32(sg_kernel_call *call, float *y, const float *x, const float *bias,
                             size_t rows, size_t cols, sg_activation act);

/* Each row's softmax: y[r][c] = exp(x[r][c] - m) / sum_c' exp(x[r][c'] - m),
 * m the row's maximum (so no overflow). y may be x. One block per row. */
void sg_kernels_softmax_rows_f32(sg_kernel_call *call, float *y, const float *x, size_t rows,
                                 size_t cols);

/* Layer normalisation of each row: y[r][c] = (x[r][c] - mean_r) /
 * sqrt(var_r + eps) * gamma[c] + beta[c], with the row's mean and its
 * (biased, divided by cols) variance. `gamma` NULL means 1, `beta` NULL
 * means 0. y may be x. One block per row. */
void sg_kernels_layer_norm_f32(sg_kernel_call *call, float *y, const float *x, const float *gamma,
                               const float *beta, size_t rows, size_t cols, float eps);

/* ---- signal processing (complex fp32) -------------------------------------
 * Complex samples are pairs of floats, real part first: the layout of
 * cufftComplex, float2 and C99 float complex. Pointers need only float
 * alignment. */

typedef struct sg_complex_f32 {
  float re, im;
} sg_complex_f32;

/* A complex multiply that broadcasts a bank of filters over a batch of
 * spectra: out[f][r][j] = a[r][j] * b[f][j] * scale for f < filters,
 * r < rows, j < len. With rows = filters = 1 it is an elementwise product;
 * rows > 1 multiplies every block spectrum by one filter's spectrum (fast
 * convolution); filters > 1 applies a filter bank. out may be a when
 * filters = 1. `scale` folds in the inverse FFT's 1/n. */
void sg_kernels_cmul_c32(sg_kernel_call *call, sg_complex_f32 *out, const sg_complex_f32 *a,
                         const sg_complex_f32 *b, size_t len, size_t rows, size_t filters,
                         float scale);

/* Overlap-save block assembly. The stream s = history[0..history_len) followed
 * by chunk[0..) is cut into block_count overlapping blocks of block_len
 * samples, `hop` apart: blocks[b][j] = s[b * hop + j]. For a filter of `taps` taps,
 * history_len = taps - 1 (the previous chunk's last samples, or zeros at the
 * start of the signal), hop = block_len - history_len, and the chunk holds
 * block_count * hop samples; each block is then transformed, multiplied by the
 * filter's spectrum and transformed back (sg_kernels_cmul_c32, cuFFT). */
void sg_kernels_ols_assemble_c32(sg_kernel_call *call, sg_complex_f32 *blocks,
                                 const sg_complex_f32 *history, const sg_complex_f32 *chunk,
                                 size_t history_len, size_t block_len, size_t hop,
                                 size_t block_count);

/* Overlap-save discard, with decimation: drops the first `discard` samples of
 * each of block_count blocks of block_len samples (those wrapped around by
 * the circular convolution) and keeps every factor-th of the rest:
 * out[b][k] = blocks[b][discard + k * factor] for k < (block_len -
 * discard) / factor. (block_len - discard) must be a multiple of factor
 * (>= 1; 1 keeps every sample), so the phase carries from block to block and
 * out is the filtered, decimated stream, blocks after blocks. */
void sg_kernels_ols_discard_c32(sg_kernel_call *call, sg_complex_f32 *out,
                                const sg_complex_f32 *blocks, size_t block_len, size_t discard,
                                size_t block_count, size_t factor);

/* Decimation by an integer factor (>= 1): out[k] = in[k * factor] for k < n_out;
 * out and in must not overlap. (Filter first: sg_kernels_ols_discard_c32 filters and decimates in one pass.) */
void sg_kernels_decimate_c32(sg_kernel_call *call, sg_complex_f32 *out, const sg_complex_f32 *in,
                             size_t n_out, size_t factor);

/* Power in decibels: out[i] = 10 log10(max(re^2 + im^2, FLT_MIN)) for i < n
 * (a zero sample gives about -379 dB rather than -infinity). */
void sg_kernels_power_db_c32(sg_kernel_call *call, float *out, const sg_complex_f32 *in, size_t n);

#ifdef __cplusplus
}
#endif
#endif
