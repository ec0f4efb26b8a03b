/* The model's weights and its CPU reference (see mlp.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mlp.h"

size_t mlp_dim(const mlp_shape *s, unsigned l) {
  if (l == 0) return s->in;
  return l == s->layers ? s->out : s->hidden;
}

size_t mlp_widest(const mlp_shape *s) {
  size_t w = 0;
  for (unsigned l = 0; l <= s->layers; l++)
    if (mlp_dim(s, l) > w) w = mlp_dim(s, l);
  return w;
}

double mlp_flops_per_request(const mlp_shape *s) {
  double f = 0;
  for (unsigned l = 0; l < s->layers; l++) f += 2.0 * (double)mlp_dim(s, l) * (double)mlp_dim(s, l + 1);
  return f;
}

static uint64_t splitmix64(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

void mlp_random_unit(float *out, size_t n, uint64_t seed) {
  uint64_t state = seed;
  const float scale = 3.4641016f / 16777216.0f; /* 2 sqrt(3) / 2^24 */
  for (size_t i = 0; i < n; i++) {
    uint64_t r = splitmix64(&state);
    out[i] = (float)(r >> 40) * scale - 1.7320508f;
  }
}

int mlp_weights_init(mlp_weights *w, const mlp_shape *s, uint64_t seed) {
  memset(w, 0, sizeof *w);
  w->gamma = malloc(s->in * sizeof(float));
  w->beta = malloc(s->in * sizeof(float));
  if (!w->gamma || !w->beta) goto oom;
  mlp_random_unit(w->gamma, s->in, seed ^ 0x6a6d);
  mlp_random_unit(w->beta, s->in, seed ^ 0x6265);
  for (size_t i = 0; i < s->in; i++) w->gamma[i] = 1.0f + 0.1f * w->gamma[i];
  for (size_t i = 0; i < s->in; i++) w->beta[i] *= 0.1f;
  for (unsigned l = 0; l < s->layers; l++) {
    size_t fan_in = mlp_dim(s, l), fan_out = mlp_dim(s, l + 1);
    w->w[l] = malloc(fan_in * fan_out * sizeof(float));
    w->b[l] = malloc(fan_out * sizeof(float));
    if (!w->w[l] || !w->b[l]) goto oom;
    mlp_random_unit(w->w[l], fan_in * fan_out, seed + 2 * l + 1);
    mlp_random_unit(w->b[l], fan_out, seed + 2 * l + 2);
    /* Variance 2 / fan_in keeps GELU activations near unit size. */
    float scale = sqrtf(2.0f / (float)fan_in);
    for (size_t i = 0; i < fan_in * fan_out; i++) w->w[l][i] *= scale;
    for (size_t i = 0; i < fan_out; i++) w->b[l][i] *= 0.1f;
  }
  return 0;
oom:
  mlp_weights_free(w, s);
  return -1;
}

void mlp_weights_free(mlp_weights *w, const mlp_shape *s) {
  for (unsigned l = 0; l < s->layers; l++) {
    free(w->w[l]);
    free(w->b[l]);
  }
  free(w->gamma);
  free(w->beta);
  memset(w, 0, sizeof *w);
}

int mlp_reference(const mlp_shape *s, const mlp_weights *w, const float *x, double *out) {
  size_t wide = mlp_widest(s);
  double *a = malloc(wide * sizeof(double)), *b = malloc(wide * sizeof(double));
  if (!a || !b) {
    free(a);
    free(b);
    return -1;
  }
  /* Layer norm of the input. */
  double mean = 0, var = 0;
  for (size_t i = 0; i < s->in; i++) mean += x[i];
  mean /= (double)s->in;
  for (size_t i = 0; i < s->in; i++) var += (x[i] - mean) * (x[i] - mean);
  var /= (double)s->in;
  for (size_t i = 0; i < s->in; i++)
    a[i] = (x[i] - mean) / sqrt(var + MLP_LN_EPS) * w->gamma[i] + w->beta[i];
  /* The layers: GELU after all but the last. */
  for (unsigned l = 0; l < s->layers; l++) {
    size_t n_in = mlp_dim(s, l), n_out = mlp_dim(s, l + 1);
    for (size_t o = 0; o < n_out; o++) {
      const float *row = w->w[l] + o * n_in;
      double acc = w->b[l][o];
      for (size_t i = 0; i < n_in; i++) acc += row[i] * a[i];
      b[o] = l + 1 < s->layers ? 0.5 * acc * (1.0 + erf(acc / sqrt(2.0))) : acc;
    }
    double *t = a;
    a = b;
    b = t;
  }
  /* Softmax over the classes. */
  double m = -INFINITY, sum = 0;
  for (size_t o = 0; o < s->out; o++) m = a[o] > m ? a[o] : m;
  for (size_t o = 0; o < s->out; o++) sum += exp(a[o] - m);
  for (size_t o = 0; o < s->out; o++) out[o] = exp(a[o] - m) / sum;
  free(a);
  free(b);
  return 0;
}

double mlp_compare(const float *got, const double *want, size_t n, size_t *worst) {
  double max_ratio = 0;
  *worst = 0;
  for (size_t i = 0; i < n; i++) {
    double ratio = fabs(got[i] - want[i]) / (MLP_REL_TOL * fabs(want[i]) + MLP_ABS_TOL);
    if (!(ratio <= max_ratio)) { /* NaN counts as the worst */
      max_ratio = ratio;
      *worst = i;
      if (isnan(ratio)) return INFINITY;
    }
  }
  return max_ratio;
}
