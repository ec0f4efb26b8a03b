/* signal: a long complex signal in pageable host memory (as read from a file
 * or an ADC ring), filtered in chunks by overlap-save FIR with cuFFT,
 * decimated and turned into power in dB (fir.h, ols_graph.h).
 *
 * Each chunk is one launch of the graph; a pipeline keeps `depth` chunks in
 * flight. The filter history (the taps - 1 samples before a chunk) comes with
 * each chunk, so the output is the whole signal filtered at once: the
 * program checks it against a direct-form FIR of the whole signal in double
 * (amplitudes within 1e-4 of the output's RMS for white input). The FFTs
 * are cuFFT calls in stream-function nodes (plans and work area per
 * instance, made outside any capture), correct in streams mode and in graph
 * mode; the rest are the library's ready-made kernels. On the host backend
 * the same program runs with a radix-2 FFT written in C.
 *
 * As examples/inference does, it runs the chunks one at a time in streams
 * mode with traces (each stage's time), then pipelined (timed), and prints
 * samples/s, GB/s, latency per chunk (p50, p99) and the overlap achieved.
 *
 *   signal [--samples N] [--block-len B] [--taps T] [--blocks K] [--factor D]
 *          [--filters F] [--depth P] [--mode streams|graph] [--check C]
 *          [--require-gpu]
 *
 * Defaults on the GPU: 2^27 samples (1 GiB; rounded up to whole chunks of
 * 1024 blocks of 8192, 1025 taps), decimation 4, one filter, depth 3, streams
 * mode; in each chunk the outputs that depend on the history and 64 others
 * are checked. On the host backend: 1000 samples in chunks of 4 blocks of
 * 64, 17 taps, every output checked. --filters F with --factor F makes a
 * channelizer (F filters at the centre frequencies f / F). --require-gpu
 * exits with 77 when the host backend would run. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fir.h"
#include "ols_graph.h"
#include "streamgraph/streamgraph.h"

#define CHECK(call)                                                                         \
  do {                                                                                      \
    sg_status st_ = (call);                                                                 \
    if (st_ != SG_OK) {                                                                     \
      fprintf(stderr, "signal: %s failed: %s: %s\n", #call, sg_status_name(st_),            \
              sg_last_error());                                                             \
      exit(1);                                                                              \
    }                                                                                       \
  } while (0)

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

typedef struct options {
  fir_shape shape;
  size_t samples, check;
  unsigned depth;
  sg_exec_mode mode;
  int require_gpu;
} options;

static void usage(void) {
  fprintf(stderr, "usage: signal [--samples N] [--block-len B] [--taps T] [--blocks K] "
                  "[--factor D]\n              [--filters F] [--depth P] [--mode streams|graph] "
                  "[--check C] [--require-gpu]\n");
  exit(2);
}

static void parse(int argc, char **argv, sg_backend backend, options *o) {
  int gpu = backend == SG_BACKEND_CUDA;
  o->shape = gpu ? (fir_shape){8192, 1025, 1024, 4, 1} : (fir_shape){64, 17, 4, 4, 1};
  o->samples = gpu ? (size_t)1 << 27 : 1000;
  o->check = gpu ? 64 : 0; /* 0: every output */
  o->depth = 3;
  o->mode = SG_MODE_STREAMS;
  o->require_gpu = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--require-gpu")) {
      o->require_gpu = 1;
      continue;
    }
    if (i + 1 >= argc) usage();
    const char *v = argv[++i];
    size_t n = (size_t)strtoull(v, NULL, 10);
    if (!strcmp(a, "--mode")) {
      if (!strcmp(v, "graph")) o->mode = SG_MODE_GRAPH;
      else if (!strcmp(v, "streams")) o->mode = SG_MODE_STREAMS;
      else usage();
    } else if (!strcmp(a, "--samples")) o->samples = n;
    else if (!strcmp(a, "--block-len")) o->shape.block_len = n;
    else if (!strcmp(a, "--taps")) o->shape.taps = n;
    else if (!strcmp(a, "--blocks")) o->shape.blocks = n;
    else if (!strcmp(a, "--factor")) o->shape.factor = n;
    else if (!strcmp(a, "--filters")) o->shape.filters = n;
    else if (!strcmp(a, "--depth")) o->depth = (unsigned)n;
    else if (!strcmp(a, "--check")) o->check = n;
    else usage();
  }
  const char *problem = fir_shape_problem(&o->shape);
  if (problem) {
    fprintf(stderr, "signal: %s\n", problem);
    exit(2);
  }
  if (!o->samples || !o->depth || o->depth > SG_PIPELINE_MAX_DEPTH) usage();
}

/* ---- one run of all chunks through a pipeline ----------------------------- */

typedef struct run_state {
  const ols_graph *m;
  double *submitted, *completed; /* per chunk, seconds */
  unsigned failed;
  sg_exec *traced;               /* depth 1, streams mode: each stage's summed time */
  sg_trace_record *records;
  size_t record_capacity;
  double upload_s, compute_s, download_s;
  uint64_t rebuilds; /* instances rebuilt while the run's binds were applied */
} run_state;

static void on_complete(uint64_t chunk, sg_status status, void *chunk_data, void *user) {
  run_state *r = chunk_data;
  (void)user;
  r->completed[chunk] = now_s();
  if (status != SG_OK) {
    fprintf(stderr, "signal: chunk %llu: %s: %s\n", (unsigned long long)chunk,
            sg_status_name(status), sg_last_error());
    r->failed++;
    return;
  }
  if (!r->traced) return;
  size_t count = 0;
  if (sg_exec_get_trace(r->traced, r->records, r->record_capacity, &count) != SG_OK) {
    fprintf(stderr, "signal: trace of chunk %llu: %s\n", (unsigned long long)chunk,
            sg_last_error());
    r->failed++;
    return;
  }
  /* The two uploads may overlap each other: their span is the upload stage. */
  uint64_t up_start = UINT64_MAX, up_end = 0;
  for (size_t i = 0; i < count && i < r->record_capacity; i++) {
    const sg_trace_record *t = &r->records[i];
    uint32_t node = sg_node_index(t->node);
    double d = (double)(t->end_ns - t->start_ns) * 1e-9;
    if (node == sg_node_index(r->m->up_history) || node == sg_node_index(r->m->up_chunk)) {
      if (t->start_ns < up_start) up_start = t->start_ns;
      if (t->end_ns > up_end) up_end = t->end_ns;
    } else if (node == sg_node_index(r->m->download)) {
      r->download_s += d;
    } else {
      r->compute_s += d;
    }
  }
  if (up_end > up_start) r->upload_s += (double)(up_end - up_start) * 1e-9;
}

static double run_chunks(ols_graph *m, size_t chunks, unsigned depth,
                         sg_exec_mode mode, int traced, const sg_complex_f32 *signal,
                         const sg_complex_f32 *zeros, float *out, run_state *r) {
  const fir_shape *s = &m->shape;
  sg_pipeline_options po;
  sg_pipeline_options_init(&po);
  po.depth = depth;
  po.exec.backend = m->backend;
  po.exec.mode = mode;
  po.exec.trace = traced;
  po.setup = ols_pipeline_setup;
  po.teardown = ols_pipeline_teardown;
  po.on_complete = on_complete;
  po.user_data = m;
  /* Graph mode holds a pinned ring per staged copy and instance for as long
   * as the executable lives (docs/staging.md): a pool of its own, so that the
   * default pool's cap (512 MiB) does not limit the depth. */
  sg_pinned_pool *pool = NULL;
  if (mode == SG_MODE_GRAPH && m->backend == SG_BACKEND_CUDA) {
    sg_pinned_pool_options pp;
    sg_pinned_pool_options_init(&pp);
    pp.max_bytes = (size_t)4 << 30;
    CHECK(sg_pinned_pool_create(&pp, &pool));
    po.exec.staging.pool = pool;
  }
  sg_pipeline *p = NULL;
  m->message[0] = 0;
  sg_status st = sg_pipeline_create(m->graph, &po, &p);
  if (st) {
    fprintf(stderr, "signal: sg_pipeline_create: %s: %s%s%s\n", sg_status_name(st),
            sg_last_error(), m->message[0] ? "; setup said: " : "", m->message);
    exit(1);
  }
  if (traced) {
    sg_pipeline_instance inst;
    CHECK(sg_pipeline_get_instance(p, 0, &inst));
    r->traced = inst.exec;
  }
  sg_pipeline_stats before, after;
  CHECK(sg_pipeline_get_stats(p, &before));
  const size_t chunk = fir_chunk(s), outs = s->filters * fir_chunk_out(s);
  double t0 = now_s();
  for (size_t c = 0; c < chunks; c++) {
    sg_pipeline_bind binds[3];
    /* The history: the previous chunk's last taps - 1 samples. */
    const sg_complex_f32 *history = c ? signal + c * chunk - (s->taps - 1) : zeros;
    ols_chunk_binds(m, history, signal + c * chunk, out + c * outs, binds);
    sg_pipeline_batch batch = {binds, 3, r};
    r->submitted[c] = now_s();
    CHECK(sg_pipeline_submit(p, &batch, NULL));
  }
  st = sg_pipeline_drain(p);
  double elapsed = now_s() - t0;
  CHECK(sg_pipeline_get_stats(p, &after));
  CHECK(sg_pipeline_destroy(p));
  if (pool) CHECK(sg_pinned_pool_destroy(pool));
  if (st != SG_OK || r->failed) {
    fprintf(stderr, "signal: %u chunks failed\n", r->failed);
    exit(1);
  }
  r->rebuilds = after.rebuilds - before.rebuilds;
  r->traced = NULL;
  return elapsed;
}

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double quantile(double *v, size_t n, double q) {
  qsort(v, n, sizeof *v, by_value);
  size_t i = (size_t)ceil(q * (double)n);
  return v[i ? i - 1 : 0];
}

/* Checks outputs against the whole-signal reference: in every chunk and
 * filter the outputs whose taps reach into the history (and the chunk's
 * first), then `check` spread over the chunk (0: every output). Returns the
 * number out of tolerance; prints the first few. */
static size_t check_outputs(const fir_shape *s, const double *taps, const sg_complex_f32 *x,
                            size_t n, size_t chunks, const float *out, size_t check,
                            size_t *checked) {
  const size_t per = fir_chunk_out(s);
  const size_t edge = (s->taps - 1) / s->factor + 1 < per ? (s->taps - 1) / s->factor + 1 : per;
  size_t bad = 0;
  *checked = 0;
  for (size_t c = 0; c < chunks; c++)
    for (size_t f = 0; f < s->filters; f++) {
      double tol = fir_tolerance(s, taps, f, sqrt(2.0)); /* |x| has RMS sqrt 2 */
      size_t count = check && edge + check < per ? edge + check : per;
      for (size_t j = 0; j < count; j++) {
        size_t k = count == per || j < edge ? j : edge + (j * 2654435761u + c * 40503u + f) % (per - edge);
        double re, im;
        fir_reference(s, taps, x, n, f, c * per + k, &re, &im);
        double want = sqrt(re * re + im * im);
        double db = out[(c * s->filters + f) * per + k];
        double got = pow(10.0, db / 20.0);
        ++*checked;
        if (!(fabs(got - want) <= tol) && bad++ < 5)
          fprintf(stderr, "signal: WRONG: chunk %zu filter %zu output %zu: amplitude %.9g "
                  "(%.4f dB), the CPU reference says %.9g (tolerance %.3g)\n", c, f, k, got, db,
                  want, tol);
      }
    }
  return bad;
}

int main(int argc, char **argv) {
  sg_backend backend = sg_backend_resolve(SG_BACKEND_AUTO);
  options o;
  parse(argc, argv, backend, &o);
  if (o.require_gpu && backend != SG_BACKEND_CUDA) {
    printf("signal: no GPU (or SG_BACKEND=host): skipped\n");
    return 77;
  }
  if (backend == SG_BACKEND_CUDA && !fft_have_cufft()) {
    fprintf(stderr, "signal: this build has no cuFFT\n");
    return 1;
  }
  const fir_shape *s = &o.shape;
  const size_t chunk = fir_chunk(s), chunks = (o.samples + chunk - 1) / chunk;
  const size_t n = chunks * chunk, outs = s->filters * fir_chunk_out(s);
  if (n / chunk != chunks || n > SIZE_MAX / sizeof(sg_complex_f32) ||
      chunks > SIZE_MAX / sizeof(float) / outs) {
    fprintf(stderr, "signal: too many samples for this machine\n");
    return 2;
  }
  /* Pageable memory: the signal as a file or an ADC ring delivers it. */
  sg_complex_f32 *signal = malloc(n * sizeof *signal);
  sg_complex_f32 *zeros = calloc(s->taps - 1, sizeof *zeros);
  float *out = malloc(chunks * outs * sizeof *out);
  double *taps = fir_design(s);
  sg_complex_f32 *spectra = taps ? fir_spectra(s, taps) : NULL;
  if (!signal || !zeros || !out || !spectra) {
    fprintf(stderr, "signal: out of memory\n");
    return 1;
  }
  fir_random_signal(signal, n, 11);
  void *dev_spectra = NULL;
  size_t spectra_bytes = s->filters * s->block_len * sizeof(sg_complex_f32);
  CHECK(sg_mem_alloc(backend, SG_MEMORY_DEVICE, 0, spectra_bytes, &dev_spectra));
  CHECK(sg_mem_copy(dev_spectra, spectra, spectra_bytes));

  ols_graph m;
  sg_status st = ols_graph_build(&m, backend, s, dev_spectra, zeros, signal, out);
  if (st) {
    fprintf(stderr, "signal: building the graph: %s: %s\n", sg_status_name(st), m.message);
    return 1;
  }
  run_state r = {.m = &m};
  r.submitted = calloc(chunks, sizeof(double));
  r.completed = calloc(chunks, sizeof(double));
  size_t nodes = 0;
  CHECK(sg_graph_node_count(m.graph, &nodes));
  r.records = calloc(nodes, sizeof *r.records);
  r.record_capacity = nodes;
  double *latency = calloc(chunks, sizeof(double));
  if (!r.submitted || !r.completed || !r.records || !latency) {
    fprintf(stderr, "signal: out of memory\n");
    return 1;
  }

  double serial = run_chunks(&m, chunks, 1, SG_MODE_STREAMS, 1, signal, zeros, out, &r);
  double up = r.upload_s / chunks, comp = r.compute_s / chunks, down = r.download_s / chunks;
  memset(out, 0xff, chunks * outs * sizeof *out); /* NaN: what was not written fails */
  double elapsed = run_chunks(&m, chunks, o.depth, o.mode, 0, signal, zeros, out, &r);

  double per_chunk = elapsed / chunks, serial_per_chunk = serial / chunks;
  double slowest = up > comp ? (up > down ? up : down) : (comp > down ? comp : down);
  for (size_t c = 0; c < chunks; c++) latency[c] = r.completed[c] - r.submitted[c];
  /* The signal's size in the unit that shows it (the host backend's
   * default run is small: its figure must not read "0.00 GiB"). */
  double bytes = (double)n * sizeof(sg_complex_f32);
  const char *unit = bytes >= (1u << 30) ? "GiB" : bytes >= (1u << 20) ? "MiB" : "KiB";
  double scaled = bytes / (bytes >= (1u << 30) ? (1u << 30) : bytes >= (1u << 20) ? (1u << 20)
                                                                                  : 1024.0);
  printf("signal: %s backend, %s mode, depth %u; %zu complex samples (%.2f %s)\n"
         "  in %zu chunks of %zu blocks of %zu; %zu taps, %zu filter%s, decimation %zu\n",
         backend == SG_BACKEND_CUDA ? "CUDA" : "host", o.mode == SG_MODE_GRAPH ? "graph" : "streams",
         o.depth, n, scaled, unit, chunks, s->blocks, s->block_len, s->taps, s->filters,
         s->filters == 1 ? "" : "s", s->factor);
  /* The stages are timed by the trace (node runs); a chunk from submit to
   * completion also pays for binding, launching and waiting, which on the
   * host backend with small chunks is most of it. Say both, and why. */
  double stages = up + comp + down;
  printf("  stages of one chunk, one at a time: upload %.3f ms, compute %.3f ms, download %.3f "
         "ms\n    (%.3f ms of work); one chunk at a time takes %.3f ms from submit to "
         "completion,\n    the rest (%.3f ms) being binds, the launch and the wait%s\n",
         up * 1e3, comp * 1e3, down * 1e3, stages * 1e3, serial_per_chunk * 1e3,
         (serial_per_chunk > stages ? serial_per_chunk - stages : 0.0) * 1e3,
         backend == SG_BACKEND_HOST ? " (host backend: small chunks)" : "");
  printf("  pipelined: %.3f ms per chunk, %.3g samples/s, %.2f GB/s in\n", per_chunk * 1e3,
         (double)n / elapsed, (double)n * sizeof(sg_complex_f32) / elapsed * 1e-9);
  printf("  latency per chunk (submit to completion): p50 %.3f ms, p99 %.3f ms\n",
         quantile(latency, chunks, 0.50) * 1e3, quantile(latency, chunks, 0.99) * 1e3);
  if (per_chunk >= serial_per_chunk)
    printf("  overlap: none (pipelined no faster than one at a time%s)\n",
           backend == SG_BACKEND_HOST ? ": on the host backend the stages share the CPU cores" : "");
  else if (serial_per_chunk > slowest)
    printf("  overlap: %.0f%% of the hideable time hidden (one at a time %.3f ms, slowest stage "
           "%.3f ms, pipelined %.3f ms per chunk)\n",
           100.0 * (serial_per_chunk - per_chunk) / (serial_per_chunk - slowest),
           serial_per_chunk * 1e3, slowest * 1e3, per_chunk * 1e3);

  if (r.rebuilds)
    printf("  rebuilds: %llu (graph mode rebuilds an instance's graph when a staged copy's host "
           "pointer changes, here every chunk: docs/staging.md; streams mode does not)\n",
           (unsigned long long)r.rebuilds);

  size_t checked = 0;
  size_t bad = check_outputs(s, taps, signal, n, chunks, out, o.check, &checked);
  printf("  checked %zu outputs against a direct FIR of the whole signal in double (amplitude "
         "within %.0e of the output RMS): %s\n", checked, FIR_REL_TOL, bad ? "WRONG" : "ok");

  ols_graph_free(&m);
  sg_mem_free(dev_spectra);
  free(signal);
  free(zeros);
  free(out);
  free(taps);
  free(spectra);
  free(r.submitted);
  free(r.completed);
  free(r.records);
  free(latency);
  /* The default pinned pool lives until the process ends; giving its idle
   * slabs back leaves a leak checker (compute-sanitizer --leak-check full)
   * nothing to report. */
  sg_pinned_pool_trim(NULL);
  return bad ? 1 : 0;
}
