// Kernels compiled in the GPU test programs' own .cu file (gpu_test_kernels.cu),
// launched through the library as a user's kernels would be: each accessor
// returns the __global__ function's address, registered with the shared CUDA
// runtime the library uses too.
#ifndef SG_GPU_TEST_KERNELS_H
#define SG_GPU_TEST_KERNELS_H

#include <cuda_runtime_api.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// add_u32(uint32_t *data, uint32_t k, size_t n): data[i] += k.
const void *gt_kernel_add_u32(void);
// shared_fill(uint32_t *out, size_t n, uint32_t words): uses `words` 32-bit
// words of dynamic shared memory; out[i] = i * 3 + (i % words).
const void *gt_kernel_shared_fill(void);
// static_shared(uint32_t *out): 4 KiB of static shared memory (plus any
// dynamic shared memory it is given); out[0] = 1.
const void *gt_kernel_static_shared(void);
// illegal_write(): writes to an address that is not mapped.
const void *gt_kernel_illegal_write(void);
// first_use_fill(uint32_t *out, uint32_t value, size_t n): out[i] = value;
// launched by one test only (its first launch in a program is that test's).
const void *gt_kernel_first_use_fill(void);

// slow_fill(uint32_t *out, uint32_t value, size_t n, uint64_t spin_ns): spins
// `spin_ns` on the global timer, then out[i] = value for i < n.
const void *gt_kernel_slow_fill(void);
// On `stream`: *out = the smallest step of the global timer (%globaltimer)
// seen over many reads, in nanoseconds (0: it never moved).
cudaError_t gt_launch_timer_granularity(uint64_t *out, cudaStream_t stream);

// On `stream`, directly (the caller's own work): spin `spin_ns`, then
// out[i] = value for i < n.
cudaError_t gt_launch_slow_fill(uint32_t *out, uint32_t value, size_t n, uint64_t spin_ns,
                                cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif
