/* FFT stream-function nodes of examples/signal: a batch of complex
 * transforms, in place or not, by cuFFT on the CUDA backend and by a small
 * radix-2 FFT in C on the host backend (its host twin).
 *
 * cuFFT inside a captured graph: each pipeline instance has its own plans
 * (a plan is bound to one stream at a time and owns scratch memory), made
 * outside any capture; the plans' work area is allocated by us and set with
 * cufftSetWorkArea (no allocation during capture, and it lives as long as
 * anything can replay the captured transforms: each node's `release` drops
 * one reference to the instance's fft_plans, the last frees them); the
 * stream is set at every call (cufftSetStream). */
#ifndef SG_EXAMPLE_FFT_H
#define SG_EXAMPLE_FFT_H

#include <stddef.h>

#include "streamgraph/kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct fft_plans fft_plans; /* a forward and an inverse cuFFT plan, one work area */

/* A call whose `in` is NULL does nothing: the graph's placeholder, which
 * every pipeline instance replaces with a call on its own temporaries. */
typedef struct fft_call {
  fft_plans *plans;          /* NULL on the host backend */
  int inverse;               /* 0: forward (e^-i), 1: inverse (e^+i, unnormalised) */
  const sg_complex_f32 *in;
  sg_complex_f32 *out;       /* may be in */
  size_t len, count;         /* `count` transforms of `len` points, contiguous */
} fft_call;

/* The host twin (sg_host_fn): radix-2, in double; len must be a power of
 * two. Returns 0, or 1 when len is not a power of two or memory ran out. */
int fft_host(void *call);

/* One transform in C, in double (also used to design the filters). */
int fft_double(double *re, double *im, size_t len, int inverse);

/* Frees a heap-allocated fft_call, dropping its reference to its plans. */
void fft_call_release(void *call);

/* ---- CUDA ------------------------------------------------------------------ */
int fft_have_cufft(void);

/* Plans for `forward_count` forward and `inverse_count` inverse transforms
 * of `len` points, one work area, held by `refs` nodes. Returns 0 or a
 * cuFFT/CUDA status. */
int fft_plans_create(size_t len, size_t forward_count, size_t inverse_count, unsigned refs,
                     fft_plans **out);

/* The stream function (sg_stream_fn): the transform on `stream`. */
int fft_cuda(void *stream, void *call);

/* Runs the call once on a stream of its own and waits: cuFFT's first
 * execution loads its kernels, which must not happen during a capture. */
int fft_warm_up(fft_call *call);

#ifdef __cplusplus
}
#endif
#endif
