/* A first graph: upload, a kernel, download; planned once, launched twice. */
#include <stdint.h>

#include <streamgraph/kernels.h>
#include "check.h"

int main(void) {
  enum { N = 1 << 16 };
  static uint32_t in[N], out[N];
  for (uint32_t i = 0; i < N; i++) in[i] = i;

  /* The CUDA backend when there is a GPU, else the host backend;
   * SG_BACKEND=host (or cuda) says which. */
  sg_backend backend = sg_backend_resolve(SG_BACKEND_AUTO);
  void *dev;
  CHECK(sg_mem_alloc(backend, SG_MEMORY_DEVICE, 0, sizeof in, &dev));

  sg_graph *g;
  CHECK(sg_graph_create(&g));
  sg_node up, work, down;
  sg_copy_desc c = {dev, in, sizeof in, SG_COPY_AUTO, "upload"};
  CHECK(sg_graph_add_copy(g, &c, NULL, 0, &up));
  sg_kernel_call k;                       /* a ready-made kernel with a host twin */
  sg_kernels_work_u32(&k, dev, N, 8);     /* 8 rounds of mixing, in place */
  CHECK(sg_graph_add_kernel(g, &k.desc, &up, 1, &work));
  c = (sg_copy_desc){out, dev, sizeof out, SG_COPY_AUTO, "download"};
  CHECK(sg_graph_add_copy(g, &c, &work, 1, &down));

  sg_exec_options o;
  sg_exec_options_init(&o);
  o.backend = backend;
  sg_exec *e;
  CHECK(sg_exec_create(g, &o, &e));       /* plans once: streams, events */
  CHECK(sg_graph_destroy(g));             /* the executable keeps its own copy */
  for (int i = 0; i < 2; i++) CHECK(sg_exec_launch(e, NULL));
  CHECK(sg_exec_wait(e));

  size_t wrong = 0;
  for (uint32_t i = 0; i < N; i++) {
    uint32_t v = in[i];
    for (uint32_t r = 0; r < 8; r++) v = sg_kernels_mix(v, i, r);
    wrong += out[i] != v;
  }
  printf("first graph on the %s backend: %s\n", backend == SG_BACKEND_CUDA ? "CUDA" : "host",
         wrong ? "WRONG" : "correct");
  CHECK(sg_exec_destroy(e));
  CHECK(sg_mem_free(dev));
  return wrong != 0;
}
