/* The stamp kernel graph mode's traces are timed with (cuda_trace.h): one
 * thread that reads the GPU's global timer (%globaltimer, nanoseconds) and
 * stores it in a slot of the tracer's ring. The kernel is hand-written PTX
 * embedded here, so the library needs no CUDA compiler; it is loaded once
 * per process with the runtime's library API (a library is loaded into no
 * context of its own: its kernel runs on every device) and never unloaded,
 * since executables of any thread may use it until the process ends.
 *
 * Parameters: ring (u64 *), counter (u64 *, device memory), slot, stride,
 * mask, advance. The row a launch writes is counter's value (the launches
 * begun) masked with `mask`; the launch's first stamp (advance 1) bumps the
 * counter first and also writes the launch's number into the row's last
 * slot (stride - 1), which the host checks; every later stamp of the launch
 * reads the counter back (it runs after the first one, and before the next
 * launch of the same executable graph begins). The timer is read first, so
 * the stamp is the time the kernel started; but the launch's first stamp
 * reads it again after its counter's load and update, just before it
 * stores: its time is the launch's time zero and every root's start, and
 * the roots can start only once it ends, so its own work is kept out of
 * the roots' durations. */
#include <string.h>

#include "cuda/cuda_call.h"
#include "cuda/cuda_trace.h"

#if CUDART_VERSION >= 12050
#define HAVE_LIBRARY_API 1
#else
#define HAVE_LIBRARY_API 0
#endif

static const char stamp_ptx[] =
    ".version 7.0\n"
    ".target sm_70\n"
    ".address_size 64\n"
    ".visible .entry sg_trace_stamp(\n"
    "  .param .u64 ring, .param .u64 counter, .param .u32 slot, .param .u32 stride,\n"
    "  .param .u32 mask, .param .u32 advance)\n"
    "{\n"
    "  .reg .pred %p<2>;\n"
    "  .reg .b32 %r<5>;\n"
    "  .reg .b64 %rd<12>;\n"
    "  mov.u64 %rd1, %globaltimer;\n"
    "  ld.param.u64 %rd2, [ring];\n"
    "  ld.param.u64 %rd3, [counter];\n"
    "  ld.param.u32 %r1, [slot];\n"
    "  ld.param.u32 %r2, [stride];\n"
    "  ld.param.u32 %r3, [mask];\n"
    "  ld.param.u32 %r4, [advance];\n"
    "  cvta.to.global.u64 %rd3, %rd3;\n"
    "  ld.global.cg.u64 %rd4, [%rd3];\n"
    "  setp.ne.u32 %p1, %r4, 0;\n"
    "  @%p1 add.u64 %rd5, %rd4, 1;\n"
    "  @%p1 st.global.u64 [%rd3], %rd5;\n"
    "  @!%p1 sub.u64 %rd4, %rd4, 1;\n"
    "  cvt.u64.u32 %rd6, %r3;\n"
    "  and.b64 %rd6, %rd4, %rd6;\n"
    "  cvt.u64.u32 %rd7, %r2;\n"
    "  mul.lo.u64 %rd6, %rd6, %rd7;\n"
    "  shl.b64 %rd6, %rd6, 3;\n"
    "  add.u64 %rd8, %rd2, %rd6;\n"
    "  cvt.u64.u32 %rd9, %r1;\n"
    "  shl.b64 %rd9, %rd9, 3;\n"
    "  add.u64 %rd10, %rd8, %rd9;\n"
    "  @%p1 mov.u64 %rd1, %globaltimer;\n"
    "  st.u64 [%rd10], %rd1;\n"
    "  @!%p1 bra DONE;\n"
    "  sub.u64 %rd11, %rd7, 1;\n"
    "  shl.b64 %rd11, %rd11, 3;\n"
    "  add.u64 %rd11, %rd8, %rd11;\n"
    "  st.u64 [%rd11], %rd4;\n"
    "DONE:\n"
    "  ret;\n"
    "}\n";

static pthread_mutex_t stamp_lock = PTHREAD_MUTEX_INITIALIZER;
static const void *stamp_kernel;

const void *sg__cuda_stamp_kernel(const char **why) {
  *why = NULL;
#if HAVE_LIBRARY_API
  sg__mutex_lock(&stamp_lock);
  const void *k = stamp_kernel;
  if (!k) {
    cudaLibrary_t lib = NULL;
    cudaKernel_t kernel = NULL;
    cudaError_t err =
        SG_CUDA(cudaLibraryLoadData(&lib, stamp_ptx, NULL, NULL, 0, NULL, NULL, 0));
    if (err != cudaSuccess) {
      *why = "cudaLibraryLoadData failed (the driver cannot JIT the PTX)";
    } else if ((err = SG_CUDA(cudaLibraryGetKernel(&kernel, lib, "sg_trace_stamp"))) !=
               cudaSuccess) {
      *why = "cudaLibraryGetKernel failed";
      cudaLibraryUnload(lib);
    } else {
      stamp_kernel = k = (const void *)kernel;
    }
    /* Not loaded: the caller times with events; the error is not left
     * pending for an unrelated later call. */
    if (err != cudaSuccess && !sg__cuda_sticky(err)) cudaGetLastError();
  }
  sg__mutex_unlock(&stamp_lock);
  return k;
#else
  *why = "the library was built with a CUDA runtime older than 12.5 (no library API)";
  return NULL;
#endif
}

void sg__cuda_stamp_params(const sg__cuda_tracer *t, uint32_t slot, int advance,
                           sg__cuda_stamp_args *a, struct cudaKernelNodeParams *p) {
  a->ring = t->ring_dev;
  a->counter = t->counter;
  a->slot = slot;
  a->stride = t->stride;
  a->mask = SG__CUDA_TRACE_RING - 1u;
  a->advance = advance ? 1u : 0u;
  a->args[0] = &a->ring;
  a->args[1] = &a->counter;
  a->args[2] = &a->slot;
  a->args[3] = &a->stride;
  a->args[4] = &a->mask;
  a->args[5] = &a->advance;
  memset(p, 0, sizeof *p);
  p->func = (void *)t->stamp_kernel;
  p->gridDim = (dim3){1, 1, 1};
  p->blockDim = (dim3){1, 1, 1};
  p->sharedMemBytes = 0;
  p->kernelParams = a->args;
  p->extra = NULL;
}
