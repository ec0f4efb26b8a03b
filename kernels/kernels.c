/* The ready-made kernels: their host twins, and filling a call's descriptor. */
#define _POSIX_C_SOURCE 200809L
#include <string.h>
#include <time.h>

#include "device.h"
#include "mix.h"
#include "streamgraph/kernels.h"

#define BLOCK 256u
#define MAX_GRID 4096u /* a few waves on a big GPU; grid-stride loops do the rest */

uint32_t sg_kernels_mix(uint32_t a, uint32_t b, uint32_t salt) { return sg__mix(a, b, salt); }

/* Arguments are passed in host twins exactly as to the device: one pointer
 * per argument value. */
#define ARG(type, i) (*(type const *)args[i])

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

/* Starts a call: no arguments yet, shape for n elements. */
static void begin(sg_kernel_call *c, const void *func, sg_host_twin_fn twin, size_t n) {
  memset(c, 0, sizeof *c);
  size_t blocks = (n + BLOCK - 1) / BLOCK;
  if (blocks == 0) blocks = 1;
  if (blocks > MAX_GRID) blocks = MAX_GRID;
  c->desc.func = func;
  c->desc.func_kind = SG_KERNEL_FUNCTION;
  c->desc.grid = (sg_dim3){(unsigned)blocks, 1, 1};
  c->desc.block = (sg_dim3){n ? BLOCK : 1, 1, 1};
  c->desc.args = c->arg_ptrs;
  c->desc.arg_sizes = c->arg_sizes;
  c->desc.host_twin = twin;
}

static void push(sg_kernel_call *c, const void *value, size_t size) {
  unsigned i = c->desc.arg_count++;
  memcpy(&c->arg_values[i], value, size);
  c->arg_ptrs[i] = &c->arg_values[i];
  c->arg_sizes[i] = size;
}

void sg_kernels_empty(sg_kernel_call *c) {
  begin(c, sg__kernel_empty(), empty_host, 0);
}

void sg_kernels_fill_u32(sg_kernel_call *c, uint32_t *out, uint32_t value, size_t n) {
  begin(c, sg__kernel_fill_u32(), fill_u32_host, n);
  push(c, &out, sizeof out);
  push(c, &value, sizeof value);
  push(c, &n, sizeof n);
}

void sg_kernels_axpy_f32(sg_kernel_call *c, float *y, const float *x, float a, size_t n) {
  begin(c, sg__kernel_axpy_f32(), axpy_f32_host, n);
  push(c, &y, sizeof y);
  push(c, &x, sizeof x);
  push(c, &a, sizeof a);
  push(c, &n, sizeof n);
}

void sg_kernels_mix_u32(sg_kernel_call *c, uint32_t *out, const uint32_t *a, const uint32_t *b,
                        uint32_t salt, size_t n) {
  begin(c, sg__kernel_mix_u32(), mix_u32_host, n);
  push(c, &out, sizeof out);
  push(c, &a, sizeof a);
  push(c, &b, sizeof b);
  push(c, &salt, sizeof salt);
  push(c, &n, sizeof n);
}

void sg_kernels_work_u32(sg_kernel_call *c, uint32_t *data, size_t n, uint32_t rounds) {
  begin(c, sg__kernel_work_u32(), work_u32_host, n);
  push(c, &data, sizeof data);
  push(c, &n, sizeof n);
  push(c, &rounds, sizeof rounds);
}

void sg_kernels_spin(sg_kernel_call *c, uint64_t ns) {
  begin(c, sg__kernel_spin(), spin_host, 0);
  push(c, &ns, sizeof ns);
}
