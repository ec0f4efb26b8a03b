/* Runs a two-node graph through the installed library on the host backend. */
#include <stdio.h>

#include <streamgraph/kernels.h>
#include <streamgraph/streamgraph.h>

int main(void) {
  static uint32_t data[1000];
  sg_graph *g;
  sg_node fill;
  sg_kernel_call k;
  sg_kernels_fill_u32(&k, data, 7, 1000);
  if (sg_graph_create(&g) || sg_graph_add_kernel(g, &k.desc, NULL, 0, &fill)) return 1;
  sg_kernels_work_u32(&k, data, 1000, 3);
  if (sg_graph_add_kernel(g, &k.desc, &fill, 1, NULL)) return 1;
  sg_exec_options o;
  sg_exec_options_init(&o);
  o.backend = SG_BACKEND_HOST;
  sg_exec *e;
  if (sg_exec_create(g, &o, &e) || sg_exec_launch(e, NULL) || sg_exec_wait(e)) {
    fprintf(stderr, "%s\n", sg_last_error());
    return 1;
  }
  for (uint32_t i = 0; i < 1000; i++) {
    uint32_t v = 7;
    for (uint32_t r = 0; r < 3; r++) v = sg_kernels_mix(v, i, r);
    if (data[i] != v) return 2;
  }
  sg_exec_destroy(e);
  sg_graph_destroy(g);
  printf("consumer: ok\n");
  return 0;
}
