/* The filter bank as a streamgraph graph run by a pipeline: one chunk of
 * the signal per launch, several chunks in flight (see fir.h for the
 * filtering, fft.h for the FFT nodes).
 *
 *   upload_history (the taps - 1 samples before the chunk) --+
 *   upload_chunk (the chunk's samples) ----------------------+-> assemble
 *     -> fft_forward -> filter (spectrum x each filter) -> fft_inverse
 *     -> discard_decimate -> power_db -> download
 *
 * The filter history is the previous chunk's last taps - 1 samples (zeros
 * before the first chunk), uploaded with each chunk from host memory: so
 * no instance waits for another, and chunks overlap. Each node declares
 * what it reads and writes; the order above follows from those
 * declarations (no edge is wired by hand). The device buffers between the
 * upload and the download are the graph's planned temporaries: each
 * pipeline instance gets its own, in one arena where buffers that are
 * never live together share bytes. Each instance owns its cuFFT plans
 * (made in setup, on its temporaries); the filters' spectra are uploaded
 * once and shared. Output of a chunk: [filters x chunk / factor] powers in
 * dB. */
#ifndef SG_EXAMPLE_OLS_GRAPH_H
#define SG_EXAMPLE_OLS_GRAPH_H

#include "fft.h"
#include "fir.h"
#include "streamgraph/streamgraph.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ols_graph {
  sg_backend backend;
  fir_shape shape;
  const sg_complex_f32 *spectra;     /* device, [filters x block_len] */
  sg_graph *graph;
  sg_node up_history, up_chunk, assemble, fft_forward, filter, fft_inverse, discard, power,
      download;
  /* The temporaries: the history and the chunk on the device, the blocks
   * (transformed in place), the filtered bank (the blocks themselves for
   * one filter), the decimated samples, their powers. */
  sg_temp history, chunk, blocks, bank, decimated, powers;
  char message[256];                 /* why setup failed */
} ols_graph;

/* Builds the graph; `history`, `chunk` and `out` are any host buffers of
 * one chunk (chunks rebind them). Returns SG_OK or the failing status
 * (m->message says more). */
sg_status ols_graph_build(ols_graph *m, sg_backend backend, const fir_shape *s,
                          const sg_complex_f32 *spectra, const sg_complex_f32 *history,
                          const sg_complex_f32 *chunk, float *out);
void ols_graph_free(ols_graph *m);

/* Pipeline callbacks; user_data is the ols_graph. Setup makes the
 * instance's FFT calls on its temporaries (sg_exec_get_temp) and gives them
 * to its FFT nodes; the nodes own them from then on. */
int ols_pipeline_setup(sg_pipeline_instance *inst, void *user_data);
void ols_pipeline_teardown(sg_pipeline_instance *inst, void *user_data);

/* The three binds of one chunk: the taps - 1 samples before it, its
 * samples, and where its powers go. */
void ols_chunk_binds(const ols_graph *m, const sg_complex_f32 *history,
                     const sg_complex_f32 *chunk, float *out, sg_pipeline_bind binds[3]);

#ifdef __cplusplus
}
#endif
#endif
