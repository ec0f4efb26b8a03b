/* inference: an MLP served over a stream of request batches (mlp.h,
 * mlp_graph.h).
 *
 * Requests arrive in ordinary (pageable) host memory and results go back to
 * pageable memory, as in a server. The weights are uploaded once. Each batch
 * is one launch of the graph; a pipeline keeps `depth` batches in flight, so
 * one batch uploads while another computes and a third downloads. The GEMMs
 * are cuBLAS calls in stream-function nodes (each pipeline instance has its
 * own handle and workspace), correct in streams mode and in graph mode;
 * bias, GELU, layer norm and softmax are the library's ready-made kernels.
 * On the host backend the same program runs with a GEMM written in C.
 *
 * It runs the batches twice: one at a time in streams mode with traces (the
 * time of each stage: upload, compute, download), then pipelined (timed).
 * It prints requests/s, GB/s moved, latency per batch (submit to
 * completion, p50 and p99), and the overlap achieved: the share of the time
 * a pipeline can hide (one-at-a-time time minus the slowest stage) that it
 * did hide. Then it checks sampled requests against a CPU reference in
 * double (probabilities within a relative 1e-3).
 *
 *   inference [--batches N] [--batch B] [--in D] [--hidden H] [--out C]
 *             [--layers L] [--depth K] [--mode streams|graph] [--check R]
 *             [--require-gpu]
 *
 * Defaults: on the GPU 64 batches of 256 requests, 4096 -> 4096 -> 4096 ->
 * 4096 (3 layers), depth 3, streams mode, 1 request of each batch checked; on
 * the host backend (SG_BACKEND=host, or no GPU) 6 batches of 4 requests,
 * 32 -> 64 -> 64 -> 16, every request checked. --require-gpu exits with 77
 * when the host backend would run (a test's "skipped"). */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mlp.h"
#include "mlp_graph.h"
#include "streamgraph/streamgraph.h"

#define CHECK(call)                                                                         \
  do {                                                                                      \
    sg_status st_ = (call);                                                                 \
    if (st_ != SG_OK) {                                                                     \
      fprintf(stderr, "inference: %s failed: %s: %s\n", #call, sg_status_name(st_),         \
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
  mlp_shape shape;
  unsigned batches, depth, check;
  sg_exec_mode mode;
  int require_gpu;
} options;

static void usage(void) {
  fprintf(stderr, "usage: inference [--batches N] [--batch B] [--in D] [--hidden H] [--out C]\n"
                  "                 [--layers L] [--depth K] [--mode streams|graph] [--check R]\n"
                  "                 [--require-gpu]\n");
  exit(2);
}

static void parse(int argc, char **argv, sg_backend backend, options *o) {
  int gpu = backend == SG_BACKEND_CUDA;
  o->shape = gpu ? (mlp_shape){4096, 4096, 4096, 3, 256} : (mlp_shape){32, 64, 16, 3, 4};
  o->batches = gpu ? 64 : 6;
  o->depth = 3;
  o->check = gpu ? 1 : 0; /* 0: every request */
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
    unsigned long long n = strtoull(v, NULL, 10);
    if (!strcmp(a, "--mode")) {
      if (!strcmp(v, "graph")) o->mode = SG_MODE_GRAPH;
      else if (!strcmp(v, "streams")) o->mode = SG_MODE_STREAMS;
      else usage();
    } else if (!strcmp(a, "--batches")) o->batches = (unsigned)n;
    else if (!strcmp(a, "--batch")) o->shape.batch = n;
    else if (!strcmp(a, "--in")) o->shape.in = n;
    else if (!strcmp(a, "--hidden")) o->shape.hidden = n;
    else if (!strcmp(a, "--out")) o->shape.out = n;
    else if (!strcmp(a, "--layers")) o->shape.layers = (unsigned)n;
    else if (!strcmp(a, "--depth")) o->depth = (unsigned)n;
    else if (!strcmp(a, "--check")) o->check = (unsigned)n;
    else usage();
  }
  if (!o->batches || !o->depth || o->depth > SG_PIPELINE_MAX_DEPTH || !o->shape.batch ||
      !o->shape.in || !o->shape.hidden || !o->shape.out || !o->shape.layers ||
      o->shape.layers > MLP_MAX_LAYERS)
    usage();
}

/* ---- one run of all batches through a pipeline ---------------------------- */

typedef struct run_state {
  const mlp_graph *m;
  double *submitted, *completed; /* per batch, seconds */
  unsigned failed;
  /* A traced run (depth 1, streams mode): each stage's summed durations. */
  sg_exec *traced;
  sg_trace_record *records;
  size_t record_capacity;
  double upload_s, compute_s, download_s;
  uint64_t rebuilds; /* instances rebuilt while the run's binds were applied */
} run_state;

/* Every batch carries the run's state as its user data. */
static void on_complete(uint64_t batch, sg_status status, void *batch_data, void *user) {
  run_state *r = batch_data;
  (void)user;
  r->completed[batch] = now_s();
  if (status != SG_OK) {
    fprintf(stderr, "inference: batch %llu: %s: %s\n", (unsigned long long)batch,
            sg_status_name(status), sg_last_error());
    r->failed++;
    return;
  }
  if (!r->traced) return;
  /* Depth 1: the instance's last launch is this batch. */
  size_t count = 0;
  if (sg_exec_get_trace(r->traced, r->records, r->record_capacity, &count) != SG_OK) {
    fprintf(stderr, "inference: trace of batch %llu: %s\n", (unsigned long long)batch,
            sg_last_error());
    r->failed++;
    return;
  }
  for (size_t i = 0; i < count && i < r->record_capacity; i++) {
    const sg_trace_record *t = &r->records[i];
    double d = (double)(t->end_ns - t->start_ns) * 1e-9;
    uint32_t node = sg_node_index(t->node);
    if (node == sg_node_index(r->m->upload)) r->upload_s += d;
    else if (node == sg_node_index(r->m->download)) r->download_s += d;
    else r->compute_s += d; /* the compute nodes form a chain */
  }
}

/* Runs every batch through a new pipeline; returns the wall time from the
 * first submit to the last completion. */
static double run_batches(mlp_graph *m, const options *o, unsigned depth, sg_exec_mode mode,
                          int traced, const float *requests, float *results, run_state *r) {
  const mlp_shape *s = &m->shape;
  sg_pipeline_options po;
  sg_pipeline_options_init(&po);
  po.depth = depth;
  po.exec.backend = m->backend;
  po.exec.mode = mode;
  po.exec.trace = traced;
  po.setup = mlp_pipeline_setup;
  po.teardown = mlp_pipeline_teardown;
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
    fprintf(stderr, "inference: sg_pipeline_create: %s: %s%s%s\n", sg_status_name(st),
            sg_last_error(), m->message[0] ? "; setup said: " : "", m->message);
    exit(1);
  }
  if (traced) {
    sg_pipeline_instance inst;
    CHECK(sg_pipeline_get_instance(p, 0, &inst));
    r->traced = inst.exec;
  }
  sg_pipeline_stats before;
  CHECK(sg_pipeline_get_stats(p, &before));
  double t0 = now_s();
  for (unsigned b = 0; b < o->batches; b++) {
    sg_pipeline_bind binds[2];
    mlp_batch_binds(m, requests + (size_t)b * s->batch * s->in,
                    results + (size_t)b * s->batch * s->out, binds);
    sg_pipeline_batch batch = {binds, 2, r};
    r->submitted[b] = now_s();
    CHECK(sg_pipeline_submit(p, &batch, NULL)); /* waits while `depth` are in flight */
  }
  st = sg_pipeline_drain(p);
  double elapsed = now_s() - t0;
  sg_pipeline_stats ps;
  CHECK(sg_pipeline_get_stats(p, &ps));
  CHECK(sg_pipeline_destroy(p));
  if (pool) CHECK(sg_pinned_pool_destroy(pool));
  if (st != SG_OK || r->failed) {
    fprintf(stderr, "inference: %u batches failed\n", r->failed);
    exit(1);
  }
  r->rebuilds = ps.rebuilds - before.rebuilds;
  r->traced = NULL;
  return elapsed;
}

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* The q-quantile (0..1) of n values, nearest rank. */
static double quantile(double *v, size_t n, double q) {
  qsort(v, n, sizeof *v, by_value);
  size_t i = (size_t)ceil(q * (double)n);
  return v[i ? i - 1 : 0];
}

/* Checks `per_batch` requests of every batch (0: all) against the CPU
 * reference; prints the first failures. Returns the number that failed. */
static unsigned check_results(const mlp_shape *s, const mlp_weights *w, const options *o,
                              const float *requests, const float *results, unsigned *checked) {
  double *want = malloc(s->out * sizeof *want);
  if (!want) {
    fprintf(stderr, "inference: out of memory\n");
    exit(1);
  }
  unsigned bad = 0;
  *checked = 0;
  for (unsigned b = 0; b < o->batches; b++) {
    size_t count = o->check && o->check < s->batch ? o->check : s->batch;
    for (size_t j = 0; j < count; j++) {
      /* Rows spread over the batch, different in each batch. */
      size_t row = count == s->batch ? j : ((size_t)b * 7919u + j * 104729u) % s->batch;
      size_t req = (size_t)b * s->batch + row;
      if (mlp_reference(s, w, requests + req * s->in, want)) {
        fprintf(stderr, "inference: out of memory\n");
        exit(1);
      }
      size_t worst;
      double ratio = mlp_compare(results + req * s->out, want, s->out, &worst);
      ++*checked;
      if (ratio > 1.0 && bad++ < 5)
        fprintf(stderr, "inference: WRONG: batch %u request %zu: class %zu is %.9g, the CPU "
                "reference says %.9g (%.3g x the tolerance)\n", b, row, worst,
                results[req * s->out + worst], want[worst], ratio);
    }
  }
  free(want);
  return bad;
}

int main(int argc, char **argv) {
  sg_backend backend = sg_backend_resolve(SG_BACKEND_AUTO);
  options o;
  parse(argc, argv, backend, &o);
  if (o.require_gpu && backend != SG_BACKEND_CUDA) {
    printf("inference: no GPU (or SG_BACKEND=host): skipped\n");
    return 77;
  }
  const mlp_shape *s = &o.shape;
  size_t n_req = (size_t)o.batches * s->batch;
  if (n_req / s->batch != o.batches || n_req > SIZE_MAX / sizeof(float) / s->in ||
      n_req > SIZE_MAX / sizeof(float) / s->out) {
    fprintf(stderr, "inference: too many requests for this machine\n");
    return 2;
  }
  if (backend == SG_BACKEND_CUDA && !mlp_have_cublas()) {
    fprintf(stderr, "inference: this build has no cuBLAS\n");
    return 1;
  }

  /* Pageable memory, as a server receives requests into. */
  float *requests = malloc(n_req * s->in * sizeof(float));
  float *results = malloc(n_req * s->out * sizeof(float));
  mlp_weights w;
  if (!requests || !results || mlp_weights_init(&w, s, 42)) {
    fprintf(stderr, "inference: out of memory\n");
    return 1;
  }
  mlp_random_unit(requests, n_req * s->in, 7);
  mlp_device_weights dw;
  CHECK(mlp_device_weights_upload(backend, s, &w, &dw));
  mlp_graph m;
  sg_status st = mlp_graph_build(&m, backend, s, &dw, requests, results);
  if (st) {
    fprintf(stderr, "inference: building the graph: %s: %s\n", sg_status_name(st), m.message);
    return 1;
  }

  run_state r = {.m = &m};
  r.submitted = calloc(o.batches, sizeof(double));
  r.completed = calloc(o.batches, sizeof(double));
  size_t nodes = 0;
  CHECK(sg_graph_node_count(m.graph, &nodes));
  r.records = calloc(nodes, sizeof *r.records);
  r.record_capacity = nodes;
  double *latency = calloc(o.batches, sizeof(double));
  if (!r.submitted || !r.completed || !r.records || !latency) {
    fprintf(stderr, "inference: out of memory\n");
    return 1;
  }

  /* One at a time, traced: the stages' times (and a warm-up of the pinned
   * staging pool and cuBLAS). */
  double serial = run_batches(&m, &o, 1, SG_MODE_STREAMS, 1, requests, results, &r);
  double up = r.upload_s / o.batches, comp = r.compute_s / o.batches,
         down = r.download_s / o.batches;
  /* Then pipelined, timed; results poisoned (NaN) first. */
  memset(results, 0xff, n_req * s->out * sizeof(float));
  double elapsed = run_batches(&m, &o, o.depth, o.mode, 0, requests, results, &r);

  double per_batch = elapsed / o.batches, serial_per_batch = serial / o.batches;
  double slowest = up > comp ? (up > down ? up : down) : (comp > down ? comp : down);
  double hideable = serial_per_batch - slowest;
  double bytes = (double)n_req * (double)(s->in + s->out) * sizeof(float);
  for (unsigned b = 0; b < o.batches; b++) latency[b] = r.completed[b] - r.submitted[b];
  printf("inference: %s backend, %s mode, depth %u; %u batches of %zu requests; MLP %zu",
         backend == SG_BACKEND_CUDA ? "CUDA" : "host", o.mode == SG_MODE_GRAPH ? "graph" : "streams",
         o.depth, o.batches, s->batch, s->in);
  for (unsigned l = 1; l <= s->layers; l++) printf(" -> %zu", mlp_dim(s, l));
  printf(" (fp32)\n");
  double gflops = mlp_flops_per_request(s) * (double)s->batch / comp * 1e-9;
  printf("  stages of one batch, one at a time: upload %.3f ms, compute %.3f ms (%.1f %s), "
         "download %.3f ms; %.3f ms in all\n", up * 1e3, comp * 1e3,
         gflops >= 1000 ? gflops * 1e-3 : gflops, gflops >= 1000 ? "TFLOP/s" : "GFLOP/s",
         down * 1e3, serial_per_batch * 1e3);
  printf("  pipelined: %.3f ms per batch, %.0f requests/s, %.2f GB/s moved (requests in + "
         "results out)\n", per_batch * 1e3, (double)n_req / elapsed, bytes / elapsed * 1e-9);
  printf("  latency per batch (submit to completion): p50 %.3f ms, p99 %.3f ms\n",
         quantile(latency, o.batches, 0.50) * 1e3, quantile(latency, o.batches, 0.99) * 1e3);
  if (per_batch >= serial_per_batch)
    printf("  overlap: none (pipelined no faster than one at a time%s)\n",
           backend == SG_BACKEND_HOST ? ": on the host backend the stages share the CPU cores" : "");
  else if (hideable > 0)
    printf("  overlap: %.0f%% of the hideable time hidden (one at a time %.3f ms, slowest stage "
           "%.3f ms, pipelined %.3f ms per batch)\n",
           100.0 * (serial_per_batch - per_batch) / hideable, serial_per_batch * 1e3,
           slowest * 1e3, per_batch * 1e3);

  if (r.rebuilds)
    printf("  rebuilds: %llu (graph mode rebuilds an instance's graph when a staged copy's host "
           "pointer changes, here every batch: docs/staging.md; streams mode does not)\n",
           (unsigned long long)r.rebuilds);

  unsigned checked = 0;
  unsigned bad = check_results(s, &w, &o, requests, results, &checked);
  printf("  checked %u requests against the CPU reference (relative %.0e): %s\n", checked,
         MLP_REL_TOL, bad ? "WRONG" : "ok");

  mlp_graph_free(&m);
  mlp_device_weights_free(s, &dw);
  mlp_weights_free(&w, s);
  free(requests);
  free(results);
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
