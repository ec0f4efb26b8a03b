/* Neural-network layer kernels (bias + activation, row softmax, layer
 * norm): host twins, and filling a call's descriptor. The twins sum in
 * double; the device sums in float, in another order: they agree to within
 * float rounding. */
#include <math.h>

#include "call.h"
#include "device.h"
#include "nn_math.h"
#include "streamgraph/kernels.h"

#define ARG(type, i) SG__ARG(type, args, i)

static void bias_act_host(const sg_kernel_launch *launch, void *const *args) {
  float *y = ARG(float *, 0);
  const float *x = ARG(const float *, 1);
  const float *bias = ARG(const float *, 2);
  size_t rows = ARG(size_t, 3), cols = ARG(size_t, 4);
  unsigned act = ARG(unsigned, 5);
  for (size_t r = 0; r < rows; r++)
    for (size_t c = 0; c < cols; c++) {
      size_t i = r * cols + c;
      y[i] = sg__activate(x[i] + (bias ? bias[c] : 0.0f), act);
    }
}

static void softmax_rows_host(const sg_kernel_launch *launch, void *const *args) {
  float *y = ARG(float *, 0);
  const float *x = ARG(const float *, 1);
  size_t rows = ARG(size_t, 2), cols = ARG(size_t, 3);
  for (size_t r = 0; r < rows; r++) {
    const float *in = x + r * cols;
    float *out = y + r * cols;
    float m = -INFINITY;
    for (size_t c = 0; c < cols; c++) m = in[c] > m ? in[c] : m;
    double sum = 0;
    for (size_t c = 0; c < cols; c++) sum += exp((double)in[c] - m);
    for (size_t c = 0; c < cols; c++) out[c] = (float)(exp((double)in[c] - m) / sum);
  }
}

static void layer_norm_host(const sg_kernel_launch *launch, void *const *args) {
  float *y = ARG(float *, 0);
  const float *x = ARG(const float *, 1);
  const float *gamma = ARG(const float *, 2);
  const float *beta = ARG(const float *, 3);
  size_t rows = ARG(size_t, 4), cols = ARG(size_t, 5);
  float eps = ARG(float, 6);
  for (size_t r = 0; r < rows; r++) {
    const float *in = x + r * cols;
    float *out = y + r * cols;
    double sum = 0, sq = 0;
    for (size_t c = 0; c < cols; c++) sum += in[c];
    double mean = cols ? sum / (double)cols : 0;
    for (size_t c = 0; c < cols; c++) sq += (in[c] - mean) * (in[c] - mean);
    double inv = 1.0 / sqrt((cols ? sq / (double)cols : 0) + eps);
    for (size_t c = 0; c < cols; c++) {
      double v = (in[c] - mean) * inv;
      out[c] = (float)(v * (gamma ? gamma[c] : 1.0f) + (beta ? beta[c] : 0.0f));
    }
  }
}

void sg_kernels_bias_act_f32(sg_kernel_call *c, float *y, const float *x, const float *bias,
                             size_t rows, size_t cols, sg_activation act) {
  unsigned a = (unsigned)act;
  sg__call_begin(c, sg__kernel_bias_act_f32(), bias_act_host, rows * cols);
  sg__call_push(c, &y, sizeof y);
  sg__call_push(c, &x, sizeof x);
  sg__call_push(c, &bias, sizeof bias);
  sg__call_push(c, &rows, sizeof rows);
  sg__call_push(c, &cols, sizeof cols);
  sg__call_push(c, &a, sizeof a);
}

void sg_kernels_softmax_rows_f32(sg_kernel_call *c, float *y, const float *x, size_t rows,
                                 size_t cols) {
  sg__call_begin_rows(c, sg__kernel_softmax_rows_f32(), softmax_rows_host, rows);
  sg__call_push(c, &y, sizeof y);
  sg__call_push(c, &x, sizeof x);
  sg__call_push(c, &rows, sizeof rows);
  sg__call_push(c, &cols, sizeof cols);
}

void sg_kernels_layer_norm_f32(sg_kernel_call *c, float *y, const float *x, const float *gamma,
                               const float *beta, size_t rows, size_t cols, float eps) {
  sg__call_begin_rows(c, sg__kernel_layer_norm_f32(), layer_norm_host, rows);
  sg__call_push(c, &y, sizeof y);
  sg__call_push(c, &x, sizeof x);
  sg__call_push(c, &gamma, sizeof gamma);
  sg__call_push(c, &beta, sizeof beta);
  sg__call_push(c, &rows, sizeof rows);
  sg__call_push(c, &cols, sizeof cols);
  sg__call_push(c, &eps, sizeof eps);
}
