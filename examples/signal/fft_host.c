/* The FFT's host twin: iterative radix-2 in double, and releasing an FFT
 * node's data. */
#include <math.h>
#include <stdlib.h>

#include "fft.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

/* Defined in fft_cufft.c or fft_nocuda.c. */
void fft_plans_unref(fft_plans *plans);

int fft_double(double *re, double *im, size_t n, int inverse) {
  if (n == 0 || (n & (n - 1))) return 1;
  for (size_t i = 1, j = 0; i < n; i++) { /* bit reversal */
    size_t bit = n >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j |= bit;
    if (i < j) {
      double t = re[i];
      re[i] = re[j];
      re[j] = t;
      t = im[i];
      im[i] = im[j];
      im[j] = t;
    }
  }
  for (size_t len = 2; len <= n; len <<= 1) {
    double angle = (inverse ? 2 : -2) * M_PI / (double)len;
    for (size_t i = 0; i < n; i += len)
      for (size_t k = 0; k < len / 2; k++) {
        double wr = cos(angle * (double)k), wi = sin(angle * (double)k);
        size_t a = i + k, b = i + k + len / 2;
        double xr = re[b] * wr - im[b] * wi, xi = re[b] * wi + im[b] * wr;
        re[b] = re[a] - xr;
        im[b] = im[a] - xi;
        re[a] += xr;
        im[a] += xi;
      }
  }
  return 0;
}

int fft_host(void *p) {
  const fft_call *c = p;
  if (!c->in) return 0; /* the graph's placeholder: every pipeline instance sets its own */
  double *re = malloc(c->len * sizeof *re), *im = malloc(c->len * sizeof *im);
  int rc = !re || !im;
  for (size_t t = 0; t < c->count && !rc; t++) {
    const sg_complex_f32 *in = c->in + t * c->len;
    sg_complex_f32 *out = c->out + t * c->len;
    for (size_t j = 0; j < c->len; j++) re[j] = in[j].re, im[j] = in[j].im;
    rc = fft_double(re, im, c->len, c->inverse);
    for (size_t j = 0; j < c->len && !rc; j++) out[j] = (sg_complex_f32){(float)re[j], (float)im[j]};
  }
  free(re);
  free(im);
  return rc;
}

void fft_call_release(void *p) {
  fft_call *c = p;
  if (c->plans) fft_plans_unref(c->plans);
  free(c);
}
