/* c_app: what a C application that embeds streamgraph writes. Plain C11,
 * built by the C compiler against the installed package
 * (find_package(streamgraph)), using only the library and its ready-made
 * kernels: no nvcc, no C++.
 *
 * A receiver's level meter: frames of complex baseband samples arrive in
 * ordinary (pageable) memory; each is uploaded, decimated by 4, turned into
 * power in dB and downloaded, with two frames in flight (a pipeline). Every
 * frame is checked against the same computation on the CPU.
 *
 *   c_app [frames] [samples per frame]
 *
 * Runs on the GPU when there is one, else on the host backend
 * (SG_BACKEND=host forces it). Exit status 0 when every frame is right. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <streamgraph/kernels.h>
#include <streamgraph/streamgraph.h>

#define FACTOR 4

/* Every call returns a status; on error sg_last_error() says what and where. */
static int failed(sg_status st, const char *what) {
  if (st == SG_OK) return 0;
  fprintf(stderr, "c_app: %s: %s: %s\n", what, sg_status_name(st), sg_last_error());
  return 1;
}

typedef struct app {
  sg_backend backend;
  size_t n;                        /* samples per frame (a multiple of FACTOR) */
  sg_node upload, decimate, power, download;
  sg_complex_f32 **frames;         /* pageable input, one buffer per frame */
  float **levels;                  /* pageable output, n / FACTOR per frame */
  unsigned checked, wrong;
} app;

/* One pipeline instance's device buffers. */
typedef struct instance_buffers {
  sg_complex_f32 *in, *decimated;
  float *power;
} instance_buffers;

static int setup(sg_pipeline_instance *inst, void *user) {
  app *a = user;
  instance_buffers *b = calloc(1, sizeof *b);
  if (!b) return 1;
  void *in = NULL, *dec = NULL, *pow_db = NULL;
  size_t m = a->n / FACTOR;
  sg_status st = sg_mem_alloc(a->backend, SG_MEMORY_DEVICE, 0, a->n * sizeof(sg_complex_f32), &in);
  if (!st) st = sg_mem_alloc(a->backend, SG_MEMORY_DEVICE, 0, m * sizeof(sg_complex_f32), &dec);
  if (!st) st = sg_mem_alloc(a->backend, SG_MEMORY_DEVICE, 0, m * sizeof(float), &pow_db);
  b->in = in;
  b->decimated = dec;
  b->power = pow_db;
  if (!st) {
    /* Point this instance's nodes at its own buffers. */
    sg_pipeline_bind binds[] = {
        sg_bind_copy_dst(a->upload, b->in),
        sg_bind_kernel_arg(a->decimate, 0, &b->decimated, sizeof b->decimated),
        sg_bind_kernel_arg(a->decimate, 1, &b->in, sizeof b->in),
        sg_bind_kernel_arg(a->power, 0, &b->power, sizeof b->power),
        sg_bind_kernel_arg(a->power, 1, &b->decimated, sizeof b->decimated),
        sg_bind_copy_src(a->download, b->power),
    };
    st = sg_pipeline_instance_bind(inst, binds, sizeof binds / sizeof binds[0]);
  }
  if (st) {
    failed(st, "setting up an instance");
    sg_mem_free(in);
    sg_mem_free(dec);
    sg_mem_free(pow_db);
    free(b);
    return 2;
  }
  inst->data = b;
  return 0;
}

static void teardown(sg_pipeline_instance *inst, void *user) {
  instance_buffers *b = inst->data;
  (void)user;
  sg_mem_free(b->in);
  sg_mem_free(b->decimated);
  sg_mem_free(b->power);
  free(b);
}

/* Called in frame order, on this thread, once the frame's levels are home. */
static void on_complete(uint64_t frame, sg_status status, void *frame_data, void *user) {
  app *a = user;
  (void)frame_data;
  if (failed(status, "a frame")) {
    a->wrong++;
    return;
  }
  for (size_t k = 0; k < a->n / FACTOR; k++) {
    sg_complex_f32 v = a->frames[frame][k * FACTOR];
    float p = v.re * v.re + v.im * v.im;
    float want = 10.0f * log10f(p > FLT_MIN ? p : FLT_MIN);
    if (fabsf(a->levels[frame][k] - want) > 1e-4f * (1.0f + fabsf(want))) {
      fprintf(stderr, "c_app: frame %llu, level %zu: %g dB, the CPU says %g dB\n",
              (unsigned long long)frame, k, a->levels[frame][k], want);
      a->wrong++;
      return;
    }
  }
  a->checked++;
}

int main(int argc, char **argv) {
  unsigned frames = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 16;
  size_t n = argc > 2 ? (size_t)strtoull(argv[2], NULL, 10) : (size_t)1 << 16;
  if (frames == 0 || n < FACTOR || n % FACTOR || n > ((size_t)1 << 30)) {
    fprintf(stderr, "usage: c_app [frames > 0] [samples per frame, a multiple of %d]\n", FACTOR);
    return 2;
  }
  app a = {0};
  a.backend = sg_backend_resolve(SG_BACKEND_AUTO);
  a.n = n;
  a.frames = calloc(frames, sizeof *a.frames);
  a.levels = calloc(frames, sizeof *a.levels);
  if (!a.frames || !a.levels) return 1;
  for (unsigned f = 0; f < frames; f++) {
    a.frames[f] = malloc(n * sizeof(sg_complex_f32));
    a.levels[f] = malloc(n / FACTOR * sizeof(float));
    if (!a.frames[f] || !a.levels[f]) return 1;
    for (size_t i = 0; i < n; i++) /* a tone whose level changes from frame to frame */
      a.frames[f][i] = (sg_complex_f32){(float)(f + 1) * cosf(0.01f * (float)i),
                                        (float)(f + 1) * sinf(0.01f * (float)i) * 0.5f};
  }

  /* The graph, once: upload -> decimate -> power in dB -> download. It is a
   * template: each instance binds its own device buffers (setup), each frame
   * its own host buffers. A placeholder device buffer stands in until then. */
  void *placeholder = NULL;
  sg_graph *g = NULL;
  sg_kernel_call k;
  if (failed(sg_mem_alloc(a.backend, SG_MEMORY_DEVICE, 0, n * sizeof(sg_complex_f32),
                          &placeholder), "sg_mem_alloc") ||
      failed(sg_graph_create(&g), "sg_graph_create"))
    return 1;
  sg_complex_f32 *dev = placeholder;
  sg_copy_desc up = {dev, a.frames[0], n * sizeof(sg_complex_f32), SG_COPY_AUTO, "upload"};
  sg_status st = sg_graph_add_copy(g, &up, NULL, 0, &a.upload);
  if (!st) {
    sg_kernels_decimate_c32(&k, dev + n / 2, dev, n / FACTOR, FACTOR);
    k.desc.name = "decimate";
    st = sg_graph_add_kernel(g, &k.desc, &a.upload, 1, &a.decimate);
  }
  if (!st) {
    sg_kernels_power_db_c32(&k, (float *)dev, dev + n / 2, n / FACTOR);
    k.desc.name = "power_db";
    st = sg_graph_add_kernel(g, &k.desc, &a.decimate, 1, &a.power);
  }
  if (!st) {
    sg_copy_desc down = {a.levels[0], dev, n / FACTOR * sizeof(float), SG_COPY_AUTO, "download"};
    st = sg_graph_add_copy(g, &down, &a.power, 1, &a.download);
  }
  if (failed(st, "building the graph")) return 1;

  sg_pipeline_options o;
  sg_pipeline_options_init(&o);
  o.depth = 2;
  o.exec.backend = a.backend;
  o.setup = setup;
  o.teardown = teardown;
  o.on_complete = on_complete;
  o.user_data = &a;
  sg_pipeline *p = NULL;
  if (failed(sg_pipeline_create(g, &o, &p), "sg_pipeline_create")) return 1;
  sg_graph_destroy(g); /* the pipeline keeps what it needs */
  sg_mem_free(placeholder);

  for (unsigned f = 0; f < frames; f++) {
    sg_pipeline_bind binds[] = {sg_bind_copy_src(a.upload, a.frames[f]),
                                sg_bind_copy_dst(a.download, a.levels[f])};
    sg_pipeline_batch batch = {binds, 2, NULL};
    if (failed(sg_pipeline_submit(p, &batch, NULL), "sg_pipeline_submit")) break;
  }
  st = sg_pipeline_drain(p);
  failed(st, "sg_pipeline_drain");
  failed(sg_pipeline_destroy(p), "sg_pipeline_destroy");

  printf("c_app: %s backend: %u frames of %zu samples, decimated by %d, levels in dB: %u right, "
         "%u wrong\n", a.backend == SG_BACKEND_CUDA ? "CUDA" : "host", frames, n, FACTOR,
         a.checked, a.wrong);
  for (unsigned f = 0; f < frames; f++) {
    free(a.frames[f]);
    free(a.levels[f]);
  }
  free(a.frames);
  free(a.levels);
  /* The default pinned pool lives until the process ends; giving its idle
   * slabs back leaves a leak checker (compute-sanitizer --leak-check full)
   * nothing to report. */
  sg_pinned_pool_trim(NULL);
  return st == SG_OK && a.checked == frames && a.wrong == 0 ? 0 : 1;
}
