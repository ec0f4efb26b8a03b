// CPU references of the ready-made layer and signal kernels, in double,
// written from the definitions in streamgraph/kernels.h (not from the host
// twins), and a comparison that names the first element out of tolerance.
#ifndef SG_KERNEL_REFS_H
#define SG_KERNEL_REFS_H

#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <string>
#include <vector>

#include "streamgraph/kernels.h"

namespace kt {

inline double activate_ref(double v, sg_activation act) {
  switch (act) {
    case SG_ACTIVATION_RELU:
      return v > 0 ? v : 0;
    case SG_ACTIVATION_GELU:
      return 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
    default:
      return v;
  }
}

inline std::vector<double> bias_act_ref(const std::vector<float> &x, const std::vector<float> *bias,
                                        size_t rows, size_t cols, sg_activation act) {
  std::vector<double> y(rows * cols);
  for (size_t r = 0; r < rows; r++)
    for (size_t c = 0; c < cols; c++) {
      // The sum is rounded to float first, as the kernel computes it.
      float v = x[r * cols + c] + (bias ? (*bias)[c] : 0.0f);
      y[r * cols + c] = activate_ref(v, act);
    }
  return y;
}

inline std::vector<double> softmax_ref(const std::vector<float> &x, size_t rows, size_t cols) {
  std::vector<double> y(rows * cols);
  for (size_t r = 0; r < rows; r++) {
    double m = -INFINITY, sum = 0;
    for (size_t c = 0; c < cols; c++) m = std::max(m, double(x[r * cols + c]));
    for (size_t c = 0; c < cols; c++) sum += std::exp(x[r * cols + c] - m);
    for (size_t c = 0; c < cols; c++) y[r * cols + c] = std::exp(x[r * cols + c] - m) / sum;
  }
  return y;
}

inline std::vector<double> layer_norm_ref(const std::vector<float> &x, const float *gamma,
                                          const float *beta, size_t rows, size_t cols, float eps) {
  std::vector<double> y(rows * cols);
  for (size_t r = 0; r < rows; r++) {
    double mean = 0, var = 0;
    for (size_t c = 0; c < cols; c++) mean += x[r * cols + c];
    mean /= double(cols);
    for (size_t c = 0; c < cols; c++) var += std::pow(x[r * cols + c] - mean, 2);
    var /= double(cols);
    for (size_t c = 0; c < cols; c++)
      y[r * cols + c] = (x[r * cols + c] - mean) / std::sqrt(var + eps) * (gamma ? gamma[c] : 1.0) +
                        (beta ? beta[c] : 0.0);
  }
  return y;
}

// out[f][r][j] = a[r][j] * b[f][j] * scale, as (re, im) pairs.
inline std::vector<double> cmul_ref(const std::vector<sg_complex_f32> &a,
                                    const std::vector<sg_complex_f32> &b, size_t len, size_t rows,
                                    size_t filters, float scale) {
  std::vector<double> out(2 * len * rows * filters);
  for (size_t f = 0; f < filters; f++)
    for (size_t r = 0; r < rows; r++)
      for (size_t j = 0; j < len; j++) {
        const sg_complex_f32 x = a[r * len + j], h = b[f * len + j];
        size_t o = 2 * ((f * rows + r) * len + j);
        out[o] = (double(x.re) * h.re - double(x.im) * h.im) * scale;
        out[o + 1] = (double(x.re) * h.im + double(x.im) * h.re) * scale;
      }
  return out;
}

inline double power_db_ref(sg_complex_f32 v) {
  double p = double(v.re) * v.re + double(v.im) * v.im;
  return 10.0 * std::log10(std::max(p, double(FLT_MIN)));
}

// Every got[i] within abs_tol + rel_tol * |want[i]| of want[i] (NaN never
// is); on failure names the first element outside, with both values.
inline ::testing::AssertionResult near_all(const std::vector<float> &got,
                                           const std::vector<double> &want, double rel_tol,
                                           double abs_tol) {
  if (got.size() != want.size())
    return ::testing::AssertionFailure() << "size " << got.size() << ", want " << want.size();
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < got.size(); i++) {
    double err = std::fabs(double(got[i]) - want[i]);
    if (!(err <= abs_tol + rel_tol * std::fabs(want[i])) && bad++ == 0) first = i;
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << bad << " of " << got.size() << " elements out of tolerance (rel " << rel_tol
         << ", abs " << abs_tol << "); first at " << first << ": got " << got[first]
         << ", want " << want[first];
}

// Exact equality of complex samples (copies: assembly, discard, decimation).
inline ::testing::AssertionResult equal_all(const std::vector<sg_complex_f32> &got,
                                            const std::vector<sg_complex_f32> &want) {
  if (got.size() != want.size())
    return ::testing::AssertionFailure() << "size " << got.size() << ", want " << want.size();
  for (size_t i = 0; i < got.size(); i++)
    if (std::memcmp(&got[i], &want[i], sizeof got[i]) != 0)
      return ::testing::AssertionFailure()
             << "element " << i << ": got (" << got[i].re << ", " << got[i].im << "), want ("
             << want[i].re << ", " << want[i].im << ")";
  return ::testing::AssertionSuccess();
}

}  // namespace kt

#endif
