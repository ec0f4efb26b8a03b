/* What ran, where and when: a traced executable draws its launches as an
 * SVG timeline, and its plan as an SVG picture; open both in a browser. */
#include <streamgraph/kernels.h>
#include "check.h"

int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : ".";
  enum { N = 1 << 16 };
  static uint32_t a[N], b[N];
  sg_backend backend = sg_backend_resolve(SG_BACKEND_AUTO);
  void *da, *db;
  CHECK(sg_mem_alloc(backend, SG_MEMORY_DEVICE, 0, sizeof a, &da));
  CHECK(sg_mem_alloc(backend, SG_MEMORY_DEVICE, 0, sizeof b, &db));
  sg_graph *g;
  CHECK(sg_graph_create(&g));
  sg_node ua, ub, ka, kb, both;
  sg_copy_desc c = {da, a, sizeof a, SG_COPY_AUTO, "upload a"};
  CHECK(sg_graph_add_copy(g, &c, NULL, 0, &ua));
  c = (sg_copy_desc){db, b, sizeof b, SG_COPY_AUTO, "upload b"};
  CHECK(sg_graph_add_copy(g, &c, NULL, 0, &ub));
  sg_kernel_call k;
  sg_kernels_work_u32(&k, da, N, 32);
  k.desc.name = "work a";
  CHECK(sg_graph_add_kernel(g, &k.desc, &ua, 1, &ka));
  sg_kernels_work_u32(&k, db, N, 32);
  k.desc.name = "work b";
  CHECK(sg_graph_add_kernel(g, &k.desc, &ub, 1, &kb));
  sg_node pair[] = {ka, kb};
  CHECK(sg_graph_add_empty(g, "both", pair, 2, &both));

  sg_exec_options o;
  sg_exec_options_init(&o);
  o.backend = backend;
  o.trace = 1;                          /* time every node of every launch */
  sg_exec *e;
  CHECK(sg_exec_create(g, &o, &e));
  for (int i = 0; i < 3; i++) CHECK(sg_exec_launch(e, NULL));
  CHECK(sg_exec_wait(e));

  char timeline[4096], plan_svg[4096];
  snprintf(timeline, sizeof timeline, "%s/guide_timeline.svg", dir);
  snprintf(plan_svg, sizeof plan_svg, "%s/guide_plan.svg", dir);
  CHECK(sg_exec_write_trace_svg(e, timeline));   /* lanes per stream, hover for times */
  const sg_plan *plan;
  CHECK(sg_exec_get_plan(e, &plan));
  CHECK(sg_plan_write_svg(plan, plan_svg));      /* a column per stream, waits as arrows */
  printf("pictures: %s and %s\n", timeline, plan_svg);
  CHECK(sg_exec_destroy(e));
  CHECK(sg_graph_destroy(g));
  CHECK(sg_mem_free(da));
  CHECK(sg_mem_free(db));
  return 0;
}
