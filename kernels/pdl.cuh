// Programmatic dependent launch in the library's kernels (SG_KERNEL_PROGRAMMATIC,
// streamgraph/graph.h): the pattern an opted-in kernel follows.
//
// SG_PDL_BEGIN() opens every kernel of kernels/, before any memory access:
//  - cudaGridDependencySynchronize() returns once every kernel this one
//    depends on programmatically has completed and its writes are visible
//    (a no-op when the launch was an ordinary one), so what follows may read
//    and write the predecessors' buffers;
//  - cudaTriggerProgrammaticLaunchCompletion() then lets this kernel's own
//    dependents launch as soon as every block of this one has begun: their
//    launch and prologue overlap this kernel's body, and their own wait holds
//    them before they touch memory. Triggering after the wait (not before)
//    keeps a chain from launching ahead of kernels still held themselves.
// Before sm_90 both are absent and the kernel is an ordinary one.
#ifndef SG_KERNELS_PDL_CUH
#define SG_KERNELS_PDL_CUH

#include <cuda_runtime.h>

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define SG_PDL_BEGIN()                          \
  do {                                          \
    cudaGridDependencySynchronize();            \
    cudaTriggerProgrammaticLaunchCompletion();  \
  } while (0)
#else
#define SG_PDL_BEGIN() \
  do {                 \
  } while (0)
#endif

#endif
