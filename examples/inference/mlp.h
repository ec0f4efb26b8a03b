/* The model served by examples/inference: a multi-layer perceptron in fp32.
 *
 *   x (in features) -> layer norm -> [GEMM + bias + GELU] x (layers - 1)
 *                   -> GEMM + bias -> softmax (out classes)
 *
 * Activations are row-major, one request per row; weights row-major
 * [out x in], as a framework's linear layer stores them. Shared by the
 * example (inference.c) and the benchmark (bench/inference_bench.cu). */
#ifndef SG_EXAMPLE_MLP_H
#define SG_EXAMPLE_MLP_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MLP_MAX_LAYERS 8

typedef struct mlp_shape {
  size_t in, hidden, out; /* features in, hidden width, classes out */
  unsigned layers;        /* GEMMs, 1..MLP_MAX_LAYERS */
  size_t batch;           /* requests per batch */
} mlp_shape;

/* Layer l maps dims[l] features to dims[l + 1]. */
size_t mlp_dim(const mlp_shape *s, unsigned l);
/* The widest activation (for buffer sizes). */
size_t mlp_widest(const mlp_shape *s);
/* Floating-point operations of one request (2 per multiply-add). */
double mlp_flops_per_request(const mlp_shape *s);

/* The weights, in host memory. */
typedef struct mlp_weights {
  float *w[MLP_MAX_LAYERS]; /* [dims[l+1] x dims[l]] */
  float *b[MLP_MAX_LAYERS]; /* [dims[l+1]] */
  float *gamma, *beta;      /* the input layer norm, [in] */
} mlp_weights;

/* Random weights scaled so activations stay near unit size (He-style for
 * GELU); deterministic in `seed`. Returns 0, or -1 when out of memory. */
int mlp_weights_init(mlp_weights *w, const mlp_shape *s, uint64_t seed);
void mlp_weights_free(mlp_weights *w, const mlp_shape *s);

/* Fills n floats with values of mean 0 and variance 1 (uniform in
 * [-sqrt 3, sqrt 3]; fast enough for gigabytes), deterministic in seed. */
void mlp_random_unit(float *out, size_t n, uint64_t seed);

#define MLP_LN_EPS 1e-5f

/* One request through the model, in double: the CPU reference. `out` gets
 * s->out probabilities. Returns 0, or -1 when out of memory. */
int mlp_reference(const mlp_shape *s, const mlp_weights *w, const float *x, double *out);

/* Compares one request's result with the reference: every probability
 * within MLP_REL_TOL of its reference value (plus MLP_ABS_TOL for those that
 * underflow). Returns the worst error relative to the tolerance (<= 1:
 * pass), and the index of that element in *worst. */
#define MLP_REL_TOL 1e-3
#define MLP_ABS_TOL 1e-12
double mlp_compare(const float *got, const double *want, size_t n, size_t *worst);

#ifdef __cplusplus
}
#endif
#endif
