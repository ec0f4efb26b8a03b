/* The filter bank, its spectra and the CPU reference (see fir.h). */
#include "fir.h"

#include <math.h>
#include <stdlib.h>

#include "fft.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

size_t fir_hop(const fir_shape *s) { return s->block_len - (s->taps - 1); }
size_t fir_chunk(const fir_shape *s) { return s->blocks * fir_hop(s); }
size_t fir_chunk_out(const fir_shape *s) { return fir_chunk(s) / s->factor; }

const char *fir_shape_problem(const fir_shape *s) {
  if (s->block_len < 2 || (s->block_len & (s->block_len - 1)))
    return "block_len must be a power of two (the filter spectra use a radix-2 FFT)";
  if (s->taps < 2 || s->taps >= s->block_len) return "taps must be 2 .. block_len - 1";
  if (!s->blocks || !s->filters || !s->factor) return "blocks, filters and factor must be > 0";
  if (fir_hop(s) % s->factor) return "the decimation factor must divide block_len - taps + 1";
  if (fir_chunk(s) < s->taps - 1) return "a chunk must hold at least taps - 1 samples";
  if (s->block_len > ((size_t)1 << 30) || s->blocks > ((size_t)1 << 30) ||
      s->filters > 4096)
    return "sizes too large";
  return NULL;
}

double *fir_design(const fir_shape *s) {
  double *h = malloc(2 * s->filters * s->taps * sizeof(double)); /* (re, im) pairs */
  if (!h) return NULL;
  const double cutoff = 0.5 / (double)s->factor, mid = 0.5 * (double)(s->taps - 1);
  double sum = 0;
  for (size_t t = 0; t < s->taps; t++) {
    double x = (double)t - mid;
    double sinc = x == 0 ? 2 * cutoff : sin(2 * M_PI * cutoff * x) / (M_PI * x);
    double window = s->taps == 1 ? 1 : 0.42 - 0.5 * cos(2 * M_PI * t / (s->taps - 1)) +
                                           0.08 * cos(4 * M_PI * t / (s->taps - 1)); /* Blackman */
    h[2 * t] = sinc * window;
    sum += h[2 * t];
  }
  for (size_t t = 0; t < s->taps; t++) {
    h[2 * t] /= sum; /* unit gain in the passband */
    h[2 * t + 1] = 0;
  }
  for (size_t f = 1; f < s->filters; f++)
    for (size_t t = 0; t < s->taps; t++) {
      double phase = 2 * M_PI * (double)f * (double)t / (double)s->filters;
      h[2 * (f * s->taps + t)] = h[2 * t] * cos(phase);
      h[2 * (f * s->taps + t) + 1] = h[2 * t] * sin(phase);
    }
  return h;
}

sg_complex_f32 *fir_spectra(const fir_shape *s, const double *h) {
  size_t n = s->block_len;
  sg_complex_f32 *out = malloc(s->filters * n * sizeof *out);
  double *re = malloc(n * sizeof *re), *im = malloc(n * sizeof *im);
  if (!out || !re || !im) goto fail;
  for (size_t f = 0; f < s->filters; f++) {
    for (size_t j = 0; j < n; j++) re[j] = im[j] = 0;
    for (size_t t = 0; t < s->taps; t++) {
      re[t] = h[2 * (f * s->taps + t)];
      im[t] = h[2 * (f * s->taps + t) + 1];
    }
    if (fft_double(re, im, n, 0)) goto fail;
    for (size_t j = 0; j < n; j++)
      out[f * n + j] = (sg_complex_f32){(float)(re[j] / (double)n), (float)(im[j] / (double)n)};
  }
  free(re);
  free(im);
  return out;
fail:
  free(out);
  free(re);
  free(im);
  return NULL;
}

void fir_reference(const fir_shape *s, const double *h, const sg_complex_f32 *x, size_t n,
                   size_t f, size_t k, double *re, double *im) {
  size_t pos = k * s->factor;
  double ar = 0, ai = 0;
  for (size_t t = 0; t < s->taps && t <= pos; t++) {
    if (pos - t >= n) continue;
    double hr = h[2 * (f * s->taps + t)], hi = h[2 * (f * s->taps + t) + 1];
    double xr = x[pos - t].re, xi = x[pos - t].im;
    ar += hr * xr - hi * xi;
    ai += hr * xi + hi * xr;
  }
  *re = ar;
  *im = ai;
}

double fir_tolerance(const fir_shape *s, const double *h, size_t f, double signal_rms) {
  double energy = 0;
  for (size_t t = 0; t < s->taps; t++) {
    double hr = h[2 * (f * s->taps + t)], hi = h[2 * (f * s->taps + t) + 1];
    energy += hr * hr + hi * hi;
  }
  return FIR_REL_TOL * signal_rms * sqrt(energy);
}

static uint64_t splitmix64(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

void fir_random_signal(sg_complex_f32 *x, size_t n, uint64_t seed) {
  uint64_t state = seed;
  const float scale = 3.4641016f / 16777216.0f; /* uniform in [-sqrt 3, sqrt 3): variance 1 */
  for (size_t i = 0; i < n; i++) {
    uint64_t r = splitmix64(&state);
    x[i].re = (float)(r >> 40) * scale - 1.7320508f;
    x[i].im = (float)((r >> 8) & 0xffffff) * scale - 1.7320508f;
  }
}
