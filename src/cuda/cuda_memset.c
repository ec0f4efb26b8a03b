/* Device memsets of 1-, 2- and 4-byte elements on a stream.
 *
 * The runtime API sets bytes only (cudaMemsetAsync). A 2- or 4-byte value
 * whose bytes are all equal is still a byte memset; any other goes to the
 * driver's cuMemsetD16Async / cuMemsetD32Async, reached through the
 * runtime's cudaGetDriverEntryPointByVersion so that the library links the
 * runtime only. Both capture into a memset graph node. Graph mode's explicit
 * build uses memset nodes directly (sg__cuda_memset_params). */
#include <pthread.h>
#include <string.h>

#include "cuda/cuda_call.h"
#include "cuda/cuda_exec.h"

/* The driver's signatures (cuda.h), with its handle types spelled as the
 * runtime's: a CUdeviceptr is an unsigned long long, a CUstream a
 * cudaStream_t, a CUresult an int whose values match cudaError_t's for the
 * errors a memset can give. */
typedef int (*memset_d16_fn)(unsigned long long dst, unsigned short value, size_t n,
                             cudaStream_t stream);
typedef int (*memset_d32_fn)(unsigned long long dst, unsigned int value, size_t n,
                             cudaStream_t stream);

static pthread_once_t lookup_once = PTHREAD_ONCE_INIT;
static memset_d16_fn memset_d16;
static memset_d32_fn memset_d32;
static cudaError_t lookup_error = cudaSuccess;

static void *entry_point(const char *symbol, cudaError_t *err) {
  void *p = NULL;
  enum cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  cudaError_t e = cudaGetDriverEntryPointByVersion(symbol, &p, 12000, cudaEnableDefault, &found);
  if (e == cudaSuccess && found != cudaDriverEntryPointSuccess) e = cudaErrorSymbolNotFound;
  if (e != cudaSuccess) *err = e;
  return e == cudaSuccess ? p : NULL;
}

/* Looked up once per process. Not a fault point: a fault here would stick
 * for the life of the process; the calls through the pointers are. */
static void lookup(void) {
  void *d16 = entry_point("cuMemsetD16Async", &lookup_error);
  void *d32 = entry_point("cuMemsetD32Async", &lookup_error);
  /* ISO C has no cast between object and function pointers; copy the bits. */
  memcpy(&memset_d16, &d16, sizeof memset_d16);
  memcpy(&memset_d32, &d32, sizeof memset_d32);
}

static int bytes_all_equal(unsigned value, unsigned element_size) {
  unsigned byte = value & 0xffu;
  for (unsigned i = 1; i < element_size; i++)
    if (((value >> (8 * i)) & 0xffu) != byte) return 0;
  return 1;
}

cudaError_t sg__cuda_memset_enqueue(const sg__memset *m, cudaStream_t stream, const char **call) {
  if (m->element_size == 1 || bytes_all_equal(m->value, m->element_size)) {
    *call = "cudaMemsetAsync";
    return SG_CUDA(cudaMemsetAsync(m->dst, (int)(m->value & 0xffu), m->count * m->element_size,
                                   stream));
  }
  pthread_once(&lookup_once, lookup);
  unsigned long long dst = (unsigned long long)(uintptr_t)m->dst;
  if (m->element_size == 2) {
    *call = "cuMemsetD16Async";
    if (!memset_d16) return lookup_error;
    return SG_CUDA((cudaError_t)memset_d16(dst, (unsigned short)m->value, m->count, stream));
  }
  *call = "cuMemsetD32Async";
  if (!memset_d32) return lookup_error;
  return SG_CUDA((cudaError_t)memset_d32(dst, m->value, m->count, stream));
}

void sg__cuda_memset_params(const sg__memset *m, struct cudaMemsetParams *p) {
  memset(p, 0, sizeof *p);
  p->dst = m->dst;
  p->value = m->value;
  p->elementSize = m->element_size;
  p->width = m->count;
  p->height = 1;
}
