/* Several GPUs: each node can run on a device of its own; the planner gives
 * each device its own streams and ties them with events. The host backend
 * emulates devices, so this runs anywhere. Host buffers are pinned: a copy
 * from pageable memory is staged on the executable's device only. */
#include <stdint.h>

#include <streamgraph/kernels.h>
#include "check.h"

enum { N = 4096, DEVICES = 2 };

int main(void) {
  sg_backend backend = sg_backend_resolve(SG_BACKEND_AUTO);
  if (backend == SG_BACKEND_CUDA && sg_cuda_device_count() < DEVICES) {
    printf("devices: %d GPU here; running on the host backend's emulated devices\n",
           sg_cuda_device_count());
    backend = SG_BACKEND_HOST;
  }
  uint32_t *in[DEVICES], *out[DEVICES];
  void *dev[DEVICES];
  const size_t bytes = N * sizeof(uint32_t);
  sg_graph *g;
  CHECK(sg_graph_create(&g));
  sg_node last[DEVICES];
  for (int d = 0; d < DEVICES; d++) {
    CHECK(sg_mem_alloc(backend, SG_MEMORY_HOST_PINNED, d, bytes, (void **)&in[d]));
    CHECK(sg_mem_alloc(backend, SG_MEMORY_HOST_PINNED, d, bytes, (void **)&out[d]));
    for (uint32_t i = 0; i < N; i++) in[d][i] = i + (uint32_t)d;
    CHECK(sg_mem_alloc(backend, SG_MEMORY_DEVICE, d, bytes, &dev[d]));
    sg_node up, work;
    sg_copy_desc c = {dev[d], in[d], bytes, SG_COPY_AUTO, d ? "upload 1" : "upload 0"};
    CHECK(sg_graph_add_copy(g, &c, NULL, 0, &up));
    sg_kernel_call k;
    sg_kernels_work_u32(&k, dev[d], N, 4);
    k.desc.name = d ? "work 1" : "work 0";
    CHECK(sg_graph_add_kernel(g, &k.desc, &up, 1, &work));
    c = (sg_copy_desc){out[d], dev[d], bytes, SG_COPY_AUTO, d ? "download 1" : "download 0"};
    CHECK(sg_graph_add_copy(g, &c, &work, 1, &last[d]));
    CHECK(sg_graph_set_device(g, up, d));    /* this branch runs on device d */
    CHECK(sg_graph_set_device(g, work, d));
    CHECK(sg_graph_set_device(g, last[d], d));
  }
  sg_node both;
  CHECK(sg_graph_add_empty(g, "both done", last, DEVICES, &both));

  sg_exec_options o;
  sg_exec_options_init(&o);
  o.backend = backend;
  sg_exec *e;
  CHECK(sg_exec_create(g, &o, &e));
  CHECK(sg_exec_launch(e, NULL));
  CHECK(sg_exec_wait(e));

  const sg_plan *plan;
  sg_exec_info info;
  CHECK(sg_exec_get_plan(e, &plan));
  CHECK(sg_exec_get_info(e, &info));
  printf("devices: %u streams:", info.stream_count);
  for (unsigned s = 0; s < info.stream_count; s++) {
    int device;
    CHECK(sg_plan_get_stream_device(plan, s, &device));
    printf(" stream %u on device %d%s", s, device, s + 1 < info.stream_count ? "," : "\n");
  }
  int wrong = 0;
  for (int d = 0; d < DEVICES; d++)
    for (uint32_t i = 0; i < N; i++) {
      uint32_t v = in[d][i];
      for (uint32_t r = 0; r < 4; r++) v = sg_kernels_mix(v, i, r);
      wrong += out[d][i] != v;
    }
  printf("devices: %s\n", wrong ? "WRONG" : "correct");
  CHECK(sg_exec_destroy(e));
  CHECK(sg_graph_destroy(g));
  for (int d = 0; d < DEVICES; d++) {
    CHECK(sg_mem_free(dev[d]));
    CHECK(sg_mem_free(in[d]));
    CHECK(sg_mem_free(out[d]));
  }
  return wrong != 0;
}
