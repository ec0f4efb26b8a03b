/* pipeline: a stream of frames through upload -> kernel -> download, with
 * three frames in flight (streamgraph/pipeline.h).
 *
 * Each frame has its own input and output buffers, ordinary malloc'ed
 * (pageable) memory as an application has it, and its own kernel argument
 * (the number of mixing rounds). On the GPU the copies of pageable memory go
 * through the library's pinned staging (streamgraph/staging.h); the host
 * backend copies directly. The graph is built once; each of
 * the three instances gets its own device buffer in `setup`; each frame binds
 * its host buffers and rounds when it is submitted; `on_complete` checks the
 * frame against a CPU computation, in frame order.
 *
 *   pipeline [frames] [elements per frame]
 *
 * Runs on the GPU when one is present, else on the host backend
 * (SG_BACKEND=host forces it). */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "streamgraph/kernels.h"
#include "streamgraph/streamgraph.h"

#define CHECK(call)                                                                  \
  do {                                                                               \
    sg_status st_ = (call);                                                          \
    if (st_ != SG_OK) {                                                              \
      fprintf(stderr, "%s failed: %s: %s\n", #call, sg_status_name(st_), sg_last_error()); \
      exit(1);                                                                       \
    }                                                                                \
  } while (0)

typedef struct app {
  sg_backend backend;
  size_t n;                  /* elements per frame */
  sg_node upload, work, download;
  uint32_t **in, **out;      /* per frame, pageable */
  uint32_t *rounds;          /* per frame */
  uint64_t checked, wrong;
} app;

/* Per instance: a device buffer of its own, bound into its copies and kernel. */
static int setup(sg_pipeline_instance *inst, void *user) {
  app *a = user;
  void *dev = NULL;
  if (sg_mem_alloc(a->backend, SG_MEMORY_DEVICE, 0, a->n * sizeof(uint32_t), &dev) != SG_OK)
    return 1;
  sg_pipeline_bind binds[] = {
      sg_bind_copy_dst(a->upload, dev),
      sg_bind_kernel_arg(a->work, 0, &dev, sizeof dev),
      sg_bind_copy_src(a->download, dev),
  };
  if (sg_pipeline_instance_bind(inst, binds, 3) != SG_OK) {
    sg_mem_free(dev);
    return 2;
  }
  inst->data = dev;
  return 0;
}

static void teardown(sg_pipeline_instance *inst, void *user) {
  (void)user;
  sg_mem_free(inst->data);
}

/* Called in frame order, on this thread, once the frame's output is home. */
static void on_complete(uint64_t frame, sg_status status, void *frame_data, void *user) {
  app *a = user;
  (void)frame_data;
  if (status != SG_OK) {
    fprintf(stderr, "frame %llu: %s: %s\n", (unsigned long long)frame, sg_status_name(status),
            sg_last_error());
    a->wrong++;
    return;
  }
  /* Spot-check: element j is mixed rounds times with j as the key. */
  for (size_t j = 0; j < a->n; j += 97) {
    uint32_t v = a->in[frame][j];
    for (uint32_t r = 0; r < a->rounds[frame]; r++) v = sg_kernels_mix(v, (uint32_t)j, r);
    if (a->out[frame][j] != v) {
      a->wrong++;
      return;
    }
  }
  a->checked++;
}

static double seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
  unsigned frames = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 24;
  size_t n = argc > 2 ? (size_t)strtoull(argv[2], NULL, 10) : (size_t)1 << 20;
  if (frames == 0 || n == 0) {
    fprintf(stderr, "usage: pipeline [frames > 0] [elements per frame > 0]\n");
    return 2;
  }
  app a = {0};
  a.backend = sg_backend_resolve(SG_BACKEND_AUTO);
  a.n = n;
  size_t bytes = n * sizeof(uint32_t);
  a.in = calloc(frames, sizeof *a.in);
  a.out = calloc(frames, sizeof *a.out);
  a.rounds = calloc(frames, sizeof *a.rounds);
  if (!a.in || !a.out || !a.rounds) return 1;
  for (unsigned f = 0; f < frames; f++) {
    a.in[f] = malloc(bytes);
    a.out[f] = malloc(bytes);
    if (!a.in[f] || !a.out[f]) return 1;
    for (size_t j = 0; j < n; j++) a.in[f][j] = sg_kernels_mix((uint32_t)j, f, 1);
    a.rounds[f] = 1 + f % 8;
  }

  /* The graph is a template: built with the first frame's host buffers and a
   * placeholder device buffer; instances and frames rebind them. */
  void *placeholder = NULL;
  CHECK(sg_mem_alloc(a.backend, SG_MEMORY_DEVICE, 0, bytes, &placeholder));
  sg_graph *g = NULL;
  CHECK(sg_graph_create(&g));
  sg_copy_desc up = {placeholder, a.in[0], bytes, SG_COPY_HOST_TO_DEVICE, "upload"};
  CHECK(sg_graph_add_copy(g, &up, NULL, 0, &a.upload));
  sg_kernel_call call;
  sg_kernels_work_u32(&call, placeholder, n, 1);
  call.desc.name = "work";
  CHECK(sg_graph_add_kernel(g, &call.desc, &a.upload, 1, &a.work));
  sg_copy_desc down = {a.out[0], placeholder, bytes, SG_COPY_DEVICE_TO_HOST, "download"};
  CHECK(sg_graph_add_copy(g, &down, &a.work, 1, &a.download));

  sg_pipeline_options o;
  sg_pipeline_options_init(&o); /* depth 3, queue 2 */
  o.exec.backend = a.backend;
  o.exec.mode = SG_MODE_GRAPH;
  o.setup = setup;
  o.teardown = teardown;
  o.on_complete = on_complete;
  o.user_data = &a;
  sg_pipeline *p = NULL;
  CHECK(sg_pipeline_create(g, &o, &p));
  CHECK(sg_graph_destroy(g)); /* the pipeline keeps what it needs */
  CHECK(sg_mem_free(placeholder));

  double t0 = seconds();
  for (unsigned f = 0; f < frames; f++) {
    sg_pipeline_bind binds[] = {
        sg_bind_copy_src(a.upload, a.in[f]),
        sg_bind_kernel_arg(a.work, 2, &a.rounds[f], sizeof a.rounds[f]),
        sg_bind_copy_dst(a.download, a.out[f]),
    };
    sg_pipeline_batch batch = {binds, 3, NULL};
    CHECK(sg_pipeline_submit(p, &batch, NULL)); /* waits when six are in flight (depth 3 x queue 2) */
  }
  CHECK(sg_pipeline_drain(p));
  double elapsed = seconds() - t0;

  sg_pipeline_stats s;
  CHECK(sg_pipeline_get_stats(p, &s));
  /* How the copies went: the instances' executables count them. */
  uint64_t staged = 0, registered = 0, launches = 0;
  for (unsigned i = 0; i < s.depth; i++) {
    sg_pipeline_instance inst;
    sg_exec_stats es;
    CHECK(sg_pipeline_get_instance(p, i, &inst));
    CHECK(sg_exec_get_stats(inst.exec, &es));
    staged += es.staged_copies;
    registered += es.registered_copies;
    launches += es.launches;
  }
  const double per_frame_ms = elapsed * 1e3 / frames;
  printf("%s backend, graph mode, %u frames in flight: %u frames of %zu KiB in %.1f ms: "
         "%.2f ms per frame, %.0f frames/s\n",
         a.backend == SG_BACKEND_CUDA ? "CUDA" : "host", s.depth, frames, bytes >> 10,
         elapsed * 1e3, per_frame_ms, frames / elapsed);
  if (a.backend == SG_BACKEND_CUDA)
    printf("  %.2f GB/s each way; of %llu copies from or to pageable memory, %llu went through "
           "pinned staging and %llu through registered (pinned in place) buffers\n",
           (double)frames * (double)bytes / elapsed * 1e-9, (unsigned long long)(2 * launches),
           (unsigned long long)staged, (unsigned long long)registered);
  else
    printf("  host backend: copies are memcpys and the kernel runs its host twin, on the "
           "CPU's cores (frames overlap there); these are CPU times, not GPU or PCIe rates\n");
  printf("  frames checked %llu, wrong %llu; submits that waited for a free instance %llu; "
         "parameter updates %llu (%llu in place), rebuilds %llu\n",
         (unsigned long long)a.checked, (unsigned long long)a.wrong,
         (unsigned long long)s.waits, (unsigned long long)s.param_updates,
         (unsigned long long)s.in_place_updates, (unsigned long long)s.rebuilds);
  CHECK(sg_pipeline_destroy(p));
  for (unsigned f = 0; f < frames; f++) {
    free(a.in[f]);
    free(a.out[f]);
  }
  free(a.in);
  free(a.out);
  free(a.rounds);
  /* The default pinned pool lives until the process ends; giving its idle
   * slabs back leaves a leak checker (compute-sanitizer --leak-check full)
   * nothing to report. */
  sg_pinned_pool_trim(NULL);
  return a.wrong == 0 && a.checked == frames ? 0 : 1;
}
