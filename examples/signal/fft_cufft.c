/* The FFT through cuFFT, from C (cufft.h is a C header). */
#include <cuda_runtime_api.h>
#include <cufft.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "fft.h"

struct fft_plans {
  cufftHandle forward, inverse;
  void *work;
  atomic_uint refs;
};

int fft_have_cufft(void) { return 1; }

/* A plan for `count` contiguous transforms of `len` points, with no work
 * area of its own; *work_bytes gets the size it needs. */
static cufftResult make_plan(cufftHandle *plan, size_t len, size_t count, size_t *work_bytes) {
  cufftResult r = cufftCreate(plan);
  if (r != CUFFT_SUCCESS) return r;
  long long n = (long long)len;
  r = cufftSetAutoAllocation(*plan, 0);
  if (r == CUFFT_SUCCESS)
    r = cufftMakePlanMany64(*plan, 1, &n, NULL, 1, n, NULL, 1, n, CUFFT_C2C, (long long)count,
                            work_bytes);
  if (r != CUFFT_SUCCESS) cufftDestroy(*plan);
  return r;
}

int fft_plans_create(size_t len, size_t forward_count, size_t inverse_count, unsigned refs,
                     fft_plans **out) {
  *out = NULL;
  if (len > LLONG_MAX || forward_count > LLONG_MAX || inverse_count > LLONG_MAX)
    return (int)CUFFT_INVALID_SIZE;
  fft_plans *p = calloc(1, sizeof *p);
  if (!p) return (int)CUFFT_ALLOC_FAILED;
  size_t work_f = 0, work_i = 0;
  cufftResult r = make_plan(&p->forward, len, forward_count, &work_f);
  if (r != CUFFT_SUCCESS) {
    free(p);
    return (int)r;
  }
  r = make_plan(&p->inverse, len, inverse_count, &work_i);
  if (r != CUFFT_SUCCESS) {
    cufftDestroy(p->forward);
    free(p);
    return (int)r;
  }
  /* One work area for both: an instance runs its transforms one at a time. */
  size_t work = work_f > work_i ? work_f : work_i;
  cudaError_t err = cudaMalloc(&p->work, work ? work : 1);
  if (err == cudaSuccess) r = cufftSetWorkArea(p->forward, p->work);
  if (err == cudaSuccess && r == CUFFT_SUCCESS) r = cufftSetWorkArea(p->inverse, p->work);
  if (err != cudaSuccess || r != CUFFT_SUCCESS) {
    if (p->work) cudaFree(p->work);
    cufftDestroy(p->forward);
    cufftDestroy(p->inverse);
    free(p);
    return err != cudaSuccess ? (int)err : (int)r;
  }
  atomic_init(&p->refs, refs);
  *out = p;
  return 0;
}

void fft_plans_unref(fft_plans *p) {
  if (atomic_fetch_sub(&p->refs, 1) != 1) return;
  cufftDestroy(p->forward);
  cufftDestroy(p->inverse);
  cudaFree(p->work);
  free(p);
}

int fft_cuda(void *stream, void *call) {
  const fft_call *c = call;
  if (!c->in) return 0; /* the graph's placeholder: every pipeline instance sets its own */
  cufftHandle plan = c->inverse ? c->plans->inverse : c->plans->forward;
  cufftResult r = cufftSetStream(plan, (cudaStream_t)stream);
  if (r == CUFFT_SUCCESS)
    r = cufftExecC2C(plan, (cufftComplex *)c->in, (cufftComplex *)c->out,
                     c->inverse ? CUFFT_INVERSE : CUFFT_FORWARD);
  return (int)r;
}

int fft_warm_up(fft_call *c) {
  cudaStream_t s;
  cudaError_t err = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  if (err != cudaSuccess) return (int)err;
  int rc = fft_cuda(s, c);
  err = cudaStreamSynchronize(s);
  cudaStreamDestroy(s);
  return rc ? rc : (int)err;
}
