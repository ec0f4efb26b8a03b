/* The filtering of examples/signal: a complex signal through a bank of
 * `filters` FIR filters of `taps` taps each, by overlap-save fast
 * convolution, each output decimated by `factor` and turned into power in
 * dB. Filter f is a windowed-sinc lowpass (cutoff 1 / (2 factor)) shifted
 * to the centre frequency f / filters: one filter is a decimating lowpass;
 * `filters` = `factor` is a channelizer. Shared by the example (signal.c)
 * and the benchmark (bench/signal_bench.cu). */
#ifndef SG_EXAMPLE_FIR_H
#define SG_EXAMPLE_FIR_H

#include <stddef.h>
#include <stdint.h>

#include "streamgraph/kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct fir_shape {
  size_t block_len;  /* FFT size of the overlap-save blocks, a power of two */
  size_t taps;       /* filter length, < block_len */
  size_t blocks;     /* blocks per chunk */
  size_t factor;     /* decimation, divides hop */
  size_t filters;    /* filters in the bank, >= 1 */
} fir_shape;

/* block_len - (taps - 1): new samples per block. */
size_t fir_hop(const fir_shape *s);
/* Samples per chunk: blocks * hop. */
size_t fir_chunk(const fir_shape *s);
/* Output values per chunk and filter: chunk / factor. */
size_t fir_chunk_out(const fir_shape *s);
/* NULL when the shape is usable, else what is wrong with it. */
const char *fir_shape_problem(const fir_shape *s);

/* The bank's taps, [filters x taps], in double (for the reference). */
double *fir_design(const fir_shape *s);

/* The bank's spectra for the device: [filters x block_len], each filter's
 * taps zero-padded to block_len and transformed, scaled by 1 / block_len
 * (the inverse FFT's normalisation). Returns NULL when out of memory. */
sg_complex_f32 *fir_spectra(const fir_shape *s, const double *taps);

/* Reference: output k of filter f, filtering the whole signal x[0..n) at
 * once (zeros before x[0]), decimated: sum_t h_f[t] x[k factor - t], in
 * double. */
void fir_reference(const fir_shape *s, const double *taps, const sg_complex_f32 *x, size_t n,
                   size_t f, size_t k, double *re, double *im);

/* The tolerance on output amplitudes: 1e-4 of the RMS that filter f's output
 * has for the signal's RMS (white input): 1e-4 * rms(x) * ||h_f||_2. fp32
 * FFT convolution errs by about 1e-6 of it. */
#define FIR_REL_TOL 1e-4
double fir_tolerance(const fir_shape *s, const double *taps, size_t f, double signal_rms);

/* Fills n complex samples with values of mean 0 and unit variance per
 * component, deterministic in seed (fast: gigabytes). */
void fir_random_signal(sg_complex_f32 *x, size_t n, uint64_t seed);

#ifdef __cplusplus
}
#endif
#endif
