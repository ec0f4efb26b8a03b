/* The GEMM through cuBLAS, from C (cublas_v2.h is a C header). */
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "gemm.h"

struct mlp_blas {
  cublasHandle_t handle;
  void *workspace;
  size_t workspace_bytes;
  atomic_uint refs;
};

int mlp_have_cublas(void) { return 1; }

int mlp_blas_create(size_t workspace_bytes, unsigned refs, mlp_blas **out) {
  *out = NULL;
  mlp_blas *b = calloc(1, sizeof *b);
  if (!b) return (int)CUBLAS_STATUS_ALLOC_FAILED;
  cublasStatus_t st = cublasCreate(&b->handle);
  if (st != CUBLAS_STATUS_SUCCESS) {
    free(b);
    return (int)st;
  }
  /* fp32 arithmetic (no TF32 down-conversion): results within float
   * rounding of the CPU reference. */
  st = cublasSetMathMode(b->handle, CUBLAS_DEFAULT_MATH);
  cudaError_t err = cudaMalloc(&b->workspace, workspace_bytes);
  if (st != CUBLAS_STATUS_SUCCESS || err != cudaSuccess) {
    if (b->workspace) cudaFree(b->workspace);
    cublasDestroy(b->handle);
    free(b);
    return st != CUBLAS_STATUS_SUCCESS ? (int)st : (int)err;
  }
  b->workspace_bytes = workspace_bytes;
  atomic_init(&b->refs, refs);
  *out = b;
  return 0;
}

void mlp_blas_unref(mlp_blas *b) {
  if (atomic_fetch_sub(&b->refs, 1) != 1) return;
  cublasDestroy(b->handle);
  cudaFree(b->workspace);
  free(b);
}

int mlp_gemm_cuda(void *stream, void *p) {
  const mlp_gemm *g = p;
  if (!g->x) return 0; /* the graph's placeholder: every pipeline instance sets its own */
  if (g->m > INT_MAX || g->n > INT_MAX || g->k > INT_MAX) return (int)CUBLAS_STATUS_INVALID_VALUE;
  cublasStatus_t st = cublasSetStream(g->blas->handle, (cudaStream_t)stream);
  if (st == CUBLAS_STATUS_SUCCESS)
    st = cublasSetWorkspace(g->blas->handle, g->blas->workspace, g->blas->workspace_bytes);
  if (st != CUBLAS_STATUS_SUCCESS) return (int)st;
  /* Row-major y = x w^T is column-major y^T = w^T(as stored: k x n, transposed) x^T:
   * m' = n, n' = m, k' = k. */
  const float one = 1.0f, zero = 0.0f;
  const int n = (int)g->n, m = (int)g->m, k = (int)g->k;
  st = cublasSgemm(g->blas->handle, CUBLAS_OP_T, CUBLAS_OP_N, n, m, k, &one, g->w, k, g->x, k,
                   &zero, g->y, n);
  return (int)st;
}

int mlp_gemm_warm_up(mlp_gemm *g) {
  cudaStream_t s;
  cudaError_t err = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  if (err != cudaSuccess) return (int)err;
  int rc = mlp_gemm_cuda(s, g);
  err = cudaStreamSynchronize(s);
  cudaStreamDestroy(s);
  return rc ? rc : (int)err;
}
