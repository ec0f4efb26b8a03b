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

#ifdef __cplusplus
}
#endif
#endif
