/* One layer's GEMM as a stream-function node: y = x w^T, with x [m x k],
 * w [n x k] and y [m x n] row-major (m requests, k inputs, n outputs).
 *
 * On the CUDA backend the node's function calls cuBLAS on the stream it is
 * given; on the host backend its host twin multiplies in C. Each pipeline
 * instance has its own cuBLAS handle and workspace (mlp_blas), shared by
 * that instance's GEMM nodes, which run one after the other:
 *   - the handle is set to the node's stream at every call (cublasSetStream),
 *     so it follows the stream in streams mode and the capture stream in
 *     graph mode;
 *   - the workspace is set after it (cublasSetStream resets it), so cuBLAS
 *     allocates nothing while its work is captured, and two instances never
 *     share scratch memory;
 *   - the workspace lives as long as anything can replay the captured work:
 *     each node's `release` drops one reference to its mlp_blas, and the
 *     last frees the handle and the workspace. */
#ifndef SG_EXAMPLE_GEMM_H
#define SG_EXAMPLE_GEMM_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mlp_blas mlp_blas; /* a cuBLAS handle and its workspace */

/* A GEMM whose `x` is NULL does nothing: the graph's placeholder, which
 * every pipeline instance replaces with one on its own temporaries. */
typedef struct mlp_gemm {
  mlp_blas *blas;  /* NULL on the host backend */
  const float *w;  /* [n x k] */
  const float *x;  /* [m x k] */
  float *y;        /* [m x n] */
  size_t m, n, k;
} mlp_gemm;

/* The host twin (sg_host_fn): the product in C, summing in float in the
 * order a simple loop does. Returns 0. */
int mlp_gemm_host(void *gemm);

/* Frees a heap-allocated mlp_gemm and drops its reference to its mlp_blas
 * (the stream-function node's `release`). */
void mlp_gemm_release(void *gemm);

/* ---- CUDA (built when the toolkit is present) ----------------------------- */

/* Non-zero when this build can call cuBLAS. */
int mlp_have_cublas(void);

/* A handle and a workspace of workspace_bytes, held by `refs` GEMM nodes.
 * Returns 0, or a cuBLAS/CUDA status (non-zero) and *out NULL. */
int mlp_blas_create(size_t workspace_bytes, unsigned refs, mlp_blas **out);

/* The stream function (sg_stream_fn): cublasSgemm on `stream`. Returns 0 or
 * the failing call's cuBLAS status. */
int mlp_gemm_cuda(void *stream, void *gemm);

/* Runs the GEMM once on a stream of its own and waits: cuBLAS sets itself up
 * lazily (loads its kernels) on a shape's first call, which must happen
 * outside any stream capture. Returns 0 or a non-zero status. */
int mlp_gemm_warm_up(mlp_gemm *gemm);

#ifdef __cplusplus
}
#endif
#endif
