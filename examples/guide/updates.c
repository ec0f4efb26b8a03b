/* Changing what an executable does: parameters in place (no re-planning),
 * then an edited graph re-applied with sg_exec_update. */
#include <stdint.h>

#include <streamgraph/kernels.h>
#include "check.h"

enum { N = 4096 };

static uint32_t expected(uint32_t v, uint32_t i, uint32_t rounds) {
  for (uint32_t r = 0; r < rounds; r++) v = sg_kernels_mix(v, i, r);
  return v;
}

static int check_all(const uint32_t *in, const uint32_t *out, uint32_t rounds) {
  for (uint32_t i = 0; i < N; i++)
    if (out[i] != expected(in[i], i, rounds)) return 1;
  return 0;
}

int main(void) {
  static uint32_t in[N], out[N], other[N];
  for (uint32_t i = 0; i < N; i++) in[i] = 3 * i + 1;
  sg_backend backend = sg_backend_resolve(SG_BACKEND_AUTO);
  void *dev;
  CHECK(sg_mem_alloc(backend, SG_MEMORY_DEVICE, 0, sizeof in, &dev));

  sg_graph *g;
  CHECK(sg_graph_create(&g));
  sg_node up, work, down;
  sg_copy_desc c = {dev, in, sizeof in, SG_COPY_AUTO, "upload"};
  CHECK(sg_graph_add_copy(g, &c, NULL, 0, &up));
  sg_kernel_call k;
  sg_kernels_work_u32(&k, dev, N, 2);
  CHECK(sg_graph_add_kernel(g, &k.desc, &up, 1, &work));
  sg_copy_desc d = {out, dev, sizeof out, SG_COPY_AUTO, "download"};
  CHECK(sg_graph_add_copy(g, &d, &work, 1, &down));
  sg_exec_options o;
  sg_exec_options_init(&o);
  o.backend = backend;
  o.mode = SG_MODE_GRAPH;                 /* one CUDA graph, updated in place */
  sg_exec *e;
  CHECK(sg_exec_create(g, &o, &e));
  CHECK(sg_exec_launch(e, NULL));
  CHECK(sg_exec_wait(e));
  int bad = check_all(in, out, 2);

  /* 1. Parameters: 5 rounds, and the result into another buffer. Node
   *    handles of the graph name the executable's nodes. */
  sg_kernels_work_u32(&k, dev, N, 5);
  CHECK(sg_exec_set_kernel(e, work, &k.desc));
  d.dst = other;
  CHECK(sg_exec_set_copy(e, down, &d));
  CHECK(sg_exec_launch(e, NULL));
  CHECK(sg_exec_wait(e));
  bad |= check_all(in, other, 5);

  /* 2. An edited graph: the same topology is applied in place; a node more
   *    re-plans (and says so in the statistics). */
  sg_kernels_work_u32(&k, dev, N, 7);
  CHECK(sg_graph_set_kernel(g, work, &k.desc));
  CHECK(sg_exec_update(e, g));
  CHECK(sg_exec_launch(e, NULL));
  CHECK(sg_exec_wait(e));
  bad |= check_all(in, out, 7);
  sg_node done;
  CHECK(sg_graph_add_empty(g, "done", &down, 1, &done));
  CHECK(sg_exec_update(e, g));
  CHECK(sg_exec_launch(e, NULL));
  CHECK(sg_exec_wait(e));
  bad |= check_all(in, out, 7);

  sg_exec_stats s;
  CHECK(sg_exec_get_stats(e, &s));
  printf("updates: %llu parameter changes (%llu in place on a CUDA graph), %llu rebuild(s): %s\n",
         (unsigned long long)s.param_updates, (unsigned long long)s.in_place_updates,
         (unsigned long long)s.rebuilds, bad ? "WRONG" : "correct");
  CHECK(sg_exec_destroy(e));
  CHECK(sg_graph_destroy(g));
  CHECK(sg_mem_free(dev));
  return bad;
}
