/* The basic ready-made kernels (fill, axpy, mix, work, spin, empty): their
 * host twins, and filling a call's descriptor. */
#define _POSIX_C_SOURCE 200809L
#include <string.h>
#include <time.h>

#include "call.h"
#include "device.h"
#include "mix.h"
#include "streamgraph/kernels.h"

uint32_t sg_kernels_mix(uint32_t a, uint32_t b, uint32_t salt) { return sg__mix(a, b, salt); }

#define ARG(type, i) SG__ARG(type, args, i)

static void empty_host(const sg_kernel_launch *launch, void *const *args) {}

static void fill_u32_host(const sg_kernel_launch *launch, void *const *args) {
  uint32_t *out = ARG(uint32_t *, 0);
  uint32_t value = ARG(uint32_t, 1);
  size_t n = ARG(size_t, 2);
  for (size_t i = 0; i < n; i++) out[i] = value;
}

static void axpy_f32_host(const sg_kernel_launch *launch, void *const *args) {
  float *y = ARG(float *, 0);
  const float *x = ARG(const float *, 1);
  float a = ARG(float, 2);
  size_t n = ARG(size_t, 3);
  for (size_t i = 0; i < n; i++) y[i] = a * x[i] + y[i];
}

static void mix_u32_host(const sg_kernel_launch *launch, void *const *args) {
  uint32_t *out = ARG(uint32_t *, 0);
  const uint32_t *a = ARG(const uint32_t *, 1);
  const uint32_t *b = ARG(const uint32_t *, 2);
  uint32_t salt = ARG(uint32_t, 3);
  size_t n = ARG(size_t, 4);
  for (size_t i = 0; i < n; i++) out[i] = sg__mix(a[i], b[i], salt);
}

static void work_u32_host(const sg_kernel_launch *launch, void *const *args) {
  uint32_t *data = ARG(uint32_t *, 0);
  size_t n = ARG(size_t, 1);
  uint32_t rounds = ARG(uint32_t, 2);
  for (size_t i = 0; i < n; i++) {
    uint32_t v = data[i];
    for (uint32_t r = 0; r < rounds; r++) v = sg__mix(v, (uint32_t)i, r);
    data[i] = v;
  }
}

static void spin_host(const sg_kernel_launch *launch, void *const *args) {
  uint64_t ns = ARG(uint64_t, 0);
  struct timespec t = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
  while (nanosleep(&t, &t) != 0) {
  }
}

void sg_kernels_empty(sg_kernel_call *c) {
  sg__call_begin(c, sg__kernel_empty(), empty_host, 0);
}

void sg_kernels_fill_u32(sg_kernel_call *c, uint32_t *out, uint32_t value, size_t n) {
  sg__call_begin(c, sg__kernel_fill_u32(), fill_u32_host, n);
  sg__call_push(c, &out, sizeof out);
  sg__call_push(c, &value, sizeof value);
  sg__call_push(c, &n, sizeof n);
}

void sg_kernels_axpy_f32(sg_kernel_call *c, float *y, const float *x, float a, size_t n) {
  sg__call_begin(c, sg__kernel_axpy_f32(), axpy_f32_host, n);
  sg__call_push(c, &y, sizeof y);
  sg__call_push(c, &x, sizeof x);
  sg__call_push(c, &a, sizeof a);
  sg__call_push(c, &n, sizeof n);
}

void sg_kernels_mix_u32(sg_kernel_call *c, uint32_t *out, const uint32_t *a, const uint32_t *b,
                        uint32_t salt, size_t n) {
  sg__call_begin(c, sg__kernel_mix_u32(), mix_u32_host, n);
  sg__call_push(c, &out, sizeof out);
  sg__call_push(c, &a, sizeof a);
  sg__call_push(c, &b, sizeof b);
  sg__call_push(c, &salt, sizeof salt);
  sg__call_push(c, &n, sizeof n);
}

void sg_kernels_work_u32(sg_kernel_call *c, uint32_t *data, size_t n, uint32_t rounds) {
  sg__call_begin(c, sg__kernel_work_u32(), work_u32_host, n);
  sg__call_push(c, &data, sizeof data);
  sg__call_push(c, &n, sizeof n);
  sg__call_push(c, &rounds, sizeof rounds);
}

void sg_kernels_spin(sg_kernel_call *c, uint64_t ns) {
  sg__call_begin(c, sg__kernel_spin(), spin_host, 0);
  sg__call_push(c, &ns, sizeof ns);
}
