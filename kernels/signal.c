/* Signal-processing kernels (complex multiply with a filter bank,
 * overlap-save assembly and discard, decimation, power in dB): host twins,
 * and filling a call's descriptor. Indexing is the device's, element for
 * element; only the floating-point rounding of the products may differ. */
#include <float.h>
#include <math.h>

#include "call.h"
#include "device.h"
#include "streamgraph/kernels.h"

#define ARG(type, i) SG__ARG(type, args, i)

static void cmul_host(const sg_kernel_launch *launch, void *const *args) {
  sg_complex_f32 *out = ARG(sg_complex_f32 *, 0);
  const sg_complex_f32 *a = ARG(const sg_complex_f32 *, 1);
  const sg_complex_f32 *b = ARG(const sg_complex_f32 *, 2);
  size_t len = ARG(size_t, 3), rows = ARG(size_t, 4), filters = ARG(size_t, 5);
  float scale = ARG(float, 6);
  /* Filter-major, so that out may alias a when there is one filter. */
  for (size_t f = 0; f < filters; f++)
    for (size_t r = 0; r < rows; r++)
      for (size_t j = 0; j < len; j++) {
        sg_complex_f32 x = a[r * len + j], h = b[f * len + j];
        sg_complex_f32 *o = &out[(f * rows + r) * len + j];
        o->re = (x.re * h.re - x.im * h.im) * scale;
        o->im = (x.re * h.im + x.im * h.re) * scale;
      }
}

static void ols_assemble_host(const sg_kernel_launch *launch, void *const *args) {
  sg_complex_f32 *blocks = ARG(sg_complex_f32 *, 0);
  const sg_complex_f32 *history = ARG(const sg_complex_f32 *, 1);
  const sg_complex_f32 *chunk = ARG(const sg_complex_f32 *, 2);
  size_t history_len = ARG(size_t, 3), block_len = ARG(size_t, 4), hop = ARG(size_t, 5);
  size_t block_count = ARG(size_t, 6);
  for (size_t b = 0; b < block_count; b++)
    for (size_t j = 0; j < block_len; j++) {
      size_t s = b * hop + j;
      blocks[b * block_len + j] = s < history_len ? history[s] : chunk[s - history_len];
    }
}

static void ols_discard_host(const sg_kernel_launch *launch, void *const *args) {
  sg_complex_f32 *out = ARG(sg_complex_f32 *, 0);
  const sg_complex_f32 *blocks = ARG(const sg_complex_f32 *, 1);
  size_t block_len = ARG(size_t, 2), discard = ARG(size_t, 3), block_count = ARG(size_t, 4);
  size_t factor = ARG(size_t, 5);
  size_t per_block = (block_len - discard) / factor;
  for (size_t b = 0; b < block_count; b++)
    for (size_t k = 0; k < per_block; k++)
      out[b * per_block + k] = blocks[b * block_len + discard + k * factor];
}

static void decimate_host(const sg_kernel_launch *launch, void *const *args) {
  sg_complex_f32 *out = ARG(sg_complex_f32 *, 0);
  const sg_complex_f32 *in = ARG(const sg_complex_f32 *, 1);
  size_t n_out = ARG(size_t, 2), factor = ARG(size_t, 3);
  for (size_t k = 0; k < n_out; k++) out[k] = in[k * factor];
}

static void power_db_host(const sg_kernel_launch *launch, void *const *args) {
  float *out = ARG(float *, 0);
  const sg_complex_f32 *in = ARG(const sg_complex_f32 *, 1);
  size_t n = ARG(size_t, 2);
  for (size_t i = 0; i < n; i++) {
    float p = in[i].re * in[i].re + in[i].im * in[i].im;
    out[i] = 10.0f * log10f(p > FLT_MIN ? p : FLT_MIN);
  }
}

void sg_kernels_cmul_c32(sg_kernel_call *c, sg_complex_f32 *out, const sg_complex_f32 *a,
                         const sg_complex_f32 *b, size_t len, size_t rows, size_t filters,
                         float scale) {
  sg__call_begin(c, sg__kernel_cmul_c32(), cmul_host, len * rows * filters);
  sg__call_push(c, &out, sizeof out);
  sg__call_push(c, &a, sizeof a);
  sg__call_push(c, &b, sizeof b);
  sg__call_push(c, &len, sizeof len);
  sg__call_push(c, &rows, sizeof rows);
  sg__call_push(c, &filters, sizeof filters);
  sg__call_push(c, &scale, sizeof scale);
}

void sg_kernels_ols_assemble_c32(sg_kernel_call *c, sg_complex_f32 *blocks,
                                 const sg_complex_f32 *history, const sg_complex_f32 *chunk,
                                 size_t history_len, size_t block_len, size_t hop,
                                 size_t block_count) {
  sg__call_begin(c, sg__kernel_ols_assemble_c32(), ols_assemble_host, block_len * block_count);
  sg__call_push(c, &blocks, sizeof blocks);
  sg__call_push(c, &history, sizeof history);
  sg__call_push(c, &chunk, sizeof chunk);
  sg__call_push(c, &history_len, sizeof history_len);
  sg__call_push(c, &block_len, sizeof block_len);
  sg__call_push(c, &hop, sizeof hop);
  sg__call_push(c, &block_count, sizeof block_count);
}

void sg_kernels_ols_discard_c32(sg_kernel_call *c, sg_complex_f32 *out,
                                const sg_complex_f32 *blocks, size_t block_len, size_t discard,
                                size_t block_count, size_t factor) {
  if (factor == 0) factor = 1;
  size_t kept = discard < block_len ? (block_len - discard) / factor : 0;
  if (discard > block_len) discard = block_len;
  sg__call_begin(c, sg__kernel_ols_discard_c32(), ols_discard_host, kept * block_count);
  sg__call_push(c, &out, sizeof out);
  sg__call_push(c, &blocks, sizeof blocks);
  sg__call_push(c, &block_len, sizeof block_len);
  sg__call_push(c, &discard, sizeof discard);
  sg__call_push(c, &block_count, sizeof block_count);
  sg__call_push(c, &factor, sizeof factor);
}

void sg_kernels_decimate_c32(sg_kernel_call *c, sg_complex_f32 *out, const sg_complex_f32 *in,
                             size_t n_out, size_t factor) {
  if (factor == 0) factor = 1;
  sg__call_begin(c, sg__kernel_decimate_c32(), decimate_host, n_out);
  sg__call_push(c, &out, sizeof out);
  sg__call_push(c, &in, sizeof in);
  sg__call_push(c, &n_out, sizeof n_out);
  sg__call_push(c, &factor, sizeof factor);
}

void sg_kernels_power_db_c32(sg_kernel_call *c, float *out, const sg_complex_f32 *in, size_t n) {
  sg__call_begin(c, sg__kernel_power_db_c32(), power_db_host, n);
  sg__call_push(c, &out, sizeof out);
  sg__call_push(c, &in, sizeof in);
  sg__call_push(c, &n, sizeof n);
}
