/* The GEMM's host twin, and releasing a GEMM node's data. */
#include <stdlib.h>

#include "gemm.h"

/* Defined in gemm_cublas.c or gemm_nocuda.c. */
void mlp_blas_unref(mlp_blas *blas);

int mlp_gemm_host(void *p) {
  const mlp_gemm *g = p;
  if (!g->x) return 0; /* the graph's placeholder: every pipeline instance sets its own */
  for (size_t r = 0; r < g->m; r++) {
    const float *x = g->x + r * g->k;
    for (size_t o = 0; o < g->n; o++) {
      const float *w = g->w + o * g->k;
      float acc = 0.0f;
      for (size_t i = 0; i < g->k; i++) acc += x[i] * w[i];
      g->y[r * g->n + o] = acc;
    }
  }
  return 0;
}

void mlp_gemm_release(void *p) {
  mlp_gemm *g = p;
  if (g->blas) mlp_blas_unref(g->blas);
  free(g);
}
