/* A build without CUDA: the host twin only. */
#include "gemm.h"

int mlp_have_cublas(void) { return 0; }
int mlp_blas_create(size_t workspace_bytes, unsigned refs, mlp_blas **out) {
  (void)workspace_bytes;
  (void)refs;
  *out = NULL;
  return -1;
}
void mlp_blas_unref(mlp_blas *blas) { (void)blas; }
int mlp_gemm_cuda(void *stream, void *gemm) {
  (void)stream;
  (void)gemm;
  return -1;
}
int mlp_gemm_warm_up(mlp_gemm *gemm) {
  (void)gemm;
  return -1;
}
