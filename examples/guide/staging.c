/* Copies from ordinary (pageable) memory: the library moves them through
 * pinned staging buffers from a pool; pinned memory of your own skips it. */
#include <stdint.h>
#include <string.h>

#include "check.h"

int main(void) {
  enum { BYTES = 8 << 20 };
  sg_backend backend = sg_backend_resolve(SG_BACKEND_AUTO);
  char *pageable = malloc(BYTES), *back = malloc(BYTES);
  if (!pageable || !back) return 1;
  for (size_t i = 0; i < BYTES; i++) pageable[i] = (char)(i * 131);
  void *dev, *pinned;
  CHECK(sg_mem_alloc(backend, SG_MEMORY_DEVICE, 0, BYTES, &dev));
  CHECK(sg_mem_alloc(backend, SG_MEMORY_HOST_PINNED, 0, BYTES, &pinned));

  /* A pool of our own, capped at 64 MiB, shared by the executables given it. */
  sg_pinned_pool_options po;
  sg_pinned_pool_options_init(&po);
  po.backend = backend;
  po.max_bytes = 64 << 20;
  po.slab_bytes = 16 << 20;
  sg_pinned_pool *pool;
  CHECK(sg_pinned_pool_create(&po, &pool));

  sg_graph *g;
  CHECK(sg_graph_create(&g));
  sg_node up, down, mirror;
  sg_copy_desc c = {dev, pageable, BYTES, SG_COPY_AUTO, "pageable up"};
  CHECK(sg_graph_add_copy(g, &c, NULL, 0, &up));
  c = (sg_copy_desc){back, dev, BYTES, SG_COPY_AUTO, "pageable down"};
  CHECK(sg_graph_add_copy(g, &c, &up, 1, &down));
  c = (sg_copy_desc){pinned, dev, BYTES, SG_COPY_AUTO, "pinned down (no staging)"};
  CHECK(sg_graph_add_copy(g, &c, &up, 1, &mirror));

  sg_exec_options o;
  sg_exec_options_init(&o);
  o.backend = backend;
  o.staging.policy = SG_STAGING_STAGE;  /* always stage (AUTO decides by size and reuse) */
  o.staging.pool = pool;
  o.staging.chunk_bytes = 1 << 20;      /* 1 MiB chunks, 4 in flight per copy */
  sg_exec *e;
  CHECK(sg_exec_create(g, &o, &e));
  CHECK(sg_exec_launch(e, NULL));
  CHECK(sg_exec_wait(e));               /* now `back` and `pinned` hold the data */

  sg_exec_stats s;
  sg_pinned_pool_stats ps;
  CHECK(sg_exec_get_stats(e, &s));
  CHECK(sg_pinned_pool_get_stats(pool, &ps));
  int bad = memcmp(back, pageable, BYTES) != 0 || memcmp(pinned, pageable, BYTES) != 0;
  printf("staging: %llu of 3 copies staged; the pool holds %zu MiB in %zu slab(s): %s\n",
         (unsigned long long)s.staged_copies, ps.reserved_bytes >> 20, ps.slab_count,
         bad ? "WRONG" : "correct");
  CHECK(sg_exec_destroy(e));            /* executables first, then their pool */
  CHECK(sg_pinned_pool_destroy(pool));
  CHECK(sg_graph_destroy(g));
  CHECK(sg_mem_free(dev));
  CHECK(sg_mem_free(pinned));
  free(pageable);
  free(back);
  return bad;
}
