/* A program using the ready-made kernels, built with pkg-config only
 * (cc prog.c $(pkg-config --cflags --libs streamgraph-kernels)) and started
 * without LD_LIBRARY_PATH: the run path the .pc files give must find both
 * shared libraries. Runs one kernel on the host backend and checks it. */
#include <stdint.h>
#include <stdio.h>

#include <streamgraph/kernels.h>
#include <streamgraph/streamgraph.h>

int main(void) {
  enum { N = 1000 };
  void *dev = NULL;
  uint32_t host[N];
  for (uint32_t i = 0; i < N; i++) host[i] = i * 2654435761u;
  if (sg_mem_alloc(SG_BACKEND_HOST, SG_MEMORY_DEVICE, 0, sizeof host, &dev)) goto fail;
  if (sg_mem_copy(dev, host, sizeof host)) goto fail;
  sg_graph *g;
  if (sg_graph_create(&g)) goto fail;
  sg_kernel_call k;
  sg_kernels_work_u32(&k, dev, N, 3);
  if (sg_graph_add_kernel(g, &k.desc, NULL, 0, NULL)) goto fail;
  sg_exec_options o;
  sg_exec_options_init(&o);
  o.backend = SG_BACKEND_HOST;
  sg_exec *e;
  if (sg_exec_create(g, &o, &e) || sg_exec_launch(e, NULL) || sg_exec_wait(e)) goto fail;
  uint32_t got[N];
  if (sg_mem_copy(got, dev, sizeof got)) goto fail;
  for (uint32_t i = 0; i < N; i++) {
    uint32_t v = host[i];
    for (uint32_t r = 0; r < 3; r++) v = sg_kernels_mix(v, i, r);
    if (got[i] != v) {
      fprintf(stderr, "outside_kernels: element %u is %u, expected %u\n", i, got[i], v);
      return 1;
    }
  }
  sg_exec_destroy(e);
  sg_graph_destroy(g);
  sg_mem_free(dev);
  printf("outside_kernels: correct\n");
  return 0;
fail:
  fprintf(stderr, "outside_kernels: %s\n", sg_last_error());
  return 1;
}
