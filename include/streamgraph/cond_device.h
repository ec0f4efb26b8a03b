/*
 * streamgraph/cond_device.h - setting a condition from a kernel (and from
 * its host twin). Include it in the .cu file of a kernel that decides what a
 * conditional node does (streamgraph/conditional.h); it is plain C as well,
 * for host twins.
 *
 *   __global__ void step(float *x, sg_cond_ref more) {
 *     ...
 *     if (threadIdx.x == 0 && blockIdx.x == 0) sg_cond_set(more, residual > tol);
 *   }
 *
 * The argument is tied to a condition with sg_graph_kernel_bind_cond: each
 * executable fills in its own reference, so the value the graph was built
 * with does not matter. Like cudaGraphSetConditional, concurrent calls
 * setting one condition race: let one thread set it, and let the node that
 * reads it depend on the kernel that sets it.
 */
#ifndef STREAMGRAPH_COND_DEVICE_H
#define STREAMGRAPH_COND_DEVICE_H

#if defined(__CUDACC__)
/* nvcc includes cuda_runtime.h in every .cu file: cudaGraphSetConditional
 * and CUDART_VERSION are declared. */
#define SG_COND_FN_ static __inline__ __host__ __device__
#else
#define SG_COND_FN_ static inline
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* What a kernel gets for a condition: a CUDA conditional handle (graph
 * mode), or the address of a word that the library reads on the host once
 * the kernel is done (the host backend; streams mode). 16 bytes. */
typedef struct sg_cond_ref {
  unsigned long long handle;
  unsigned *word;
} sg_cond_ref;

/* Sets the condition for the launch running this code. */
SG_COND_FN_ void sg_cond_set(sg_cond_ref ref, unsigned value) {
  if (ref.word) {
    *(volatile unsigned *)ref.word = value;
    return;
  }
#if defined(__CUDA_ARCH__) && defined(CUDART_VERSION) && CUDART_VERSION >= 12040
  cudaGraphSetConditional((cudaGraphConditionalHandle)ref.handle, value);
#endif
}

#ifdef __cplusplus
}
#endif
#undef SG_COND_FN_
#endif
