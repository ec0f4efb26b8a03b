/* A graph run over a stream of batches: while batch i computes, batch i+1
 * uploads and batch i-1 downloads, each on an instance of its own. */
#include <stdint.h>

#include <streamgraph/kernels.h>
#include "check.h"

enum { N = 8192, BATCHES = 12 };

typedef struct app {
  sg_backend backend;
  sg_node upload, work, download;
  uint32_t in[BATCHES][N], out[BATCHES][N];
  int wrong;
} app;

/* Once per instance: a device buffer of its own, bound into its nodes. */
static int setup(sg_pipeline_instance *inst, void *user) {
  app *a = user;
  void *dev;
  if (sg_mem_alloc(a->backend, SG_MEMORY_DEVICE, 0, N * 4, &dev) != SG_OK) return 1;
  sg_pipeline_bind b[] = {sg_bind_copy_dst(a->upload, dev),
                          sg_bind_kernel_arg(a->work, 0, &dev, sizeof dev),
                          sg_bind_copy_src(a->download, dev)};
  inst->data = dev;
  return sg_pipeline_instance_bind(inst, b, 3) != SG_OK;
}

static void teardown(sg_pipeline_instance *inst, void *user) {
  (void)user;
  sg_mem_free(inst->data);
}

/* In batch order, on the submitting thread, once the batch's output is home. */
static void complete(uint64_t batch, sg_status st, void *data, void *user) {
  app *a = user;
  (void)data;
  int ok = st == SG_OK;
  for (uint32_t i = 0; i < N && ok; i++) ok = a->out[batch][i] == sg_kernels_mix(a->in[batch][i], i, 0);
  a->wrong += !ok;
}

int main(void) {
  static app a;
  a.backend = sg_backend_resolve(SG_BACKEND_AUTO);
  for (int b = 0; b < BATCHES; b++)
    for (uint32_t i = 0; i < N; i++) a.in[b][i] = (uint32_t)(b * N) + i;

  /* The graph is a template: built with any valid buffers, rebound per
   * instance (setup) and per batch (binds). */
  void *any;
  CHECK(sg_mem_alloc(a.backend, SG_MEMORY_DEVICE, 0, N * 4, &any));
  sg_graph *g;
  CHECK(sg_graph_create(&g));
  sg_copy_desc up = {any, a.in[0], N * 4, SG_COPY_HOST_TO_DEVICE, "upload"};
  CHECK(sg_graph_add_copy(g, &up, NULL, 0, &a.upload));
  sg_kernel_call k;
  sg_kernels_work_u32(&k, any, N, 1);
  CHECK(sg_graph_add_kernel(g, &k.desc, &a.upload, 1, &a.work));
  sg_copy_desc down = {a.out[0], any, N * 4, SG_COPY_DEVICE_TO_HOST, "download"};
  CHECK(sg_graph_add_copy(g, &down, &a.work, 1, &a.download));

  sg_pipeline_options o;
  sg_pipeline_options_init(&o);           /* 3 instances, 2 batches queued on each */
  o.exec.backend = a.backend;
  o.setup = setup;
  o.teardown = teardown;
  o.on_complete = complete;
  o.user_data = &a;
  sg_pipeline *p;
  CHECK(sg_pipeline_create(g, &o, &p));
  CHECK(sg_graph_destroy(g));
  CHECK(sg_mem_free(any));

  for (int b = 0; b < BATCHES; b++) {
    sg_pipeline_bind binds[] = {sg_bind_copy_src(a.upload, a.in[b]),
                                sg_bind_copy_dst(a.download, a.out[b])};
    sg_pipeline_batch batch = {binds, 2, NULL};
    CHECK(sg_pipeline_submit(p, &batch, NULL));  /* waits while 6 are in flight */
  }
  CHECK(sg_pipeline_drain(p));
  printf("pipeline: %d batches, %d wrong\n", BATCHES, a.wrong);
  CHECK(sg_pipeline_destroy(p));
  return a.wrong != 0;
}
