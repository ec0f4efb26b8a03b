// The fuzz targets' staging pool (host backend, 8 MiB), and the allocation
// count every input must come back to.
#ifndef SG_FUZZ_POOL_H
#define SG_FUZZ_POOL_H

#include <cstdint>
#include <cstdlib>

#include "streamgraph/streamgraph.h"
#include "streamgraph/testing.h"

namespace sgfuzz {

inline sg_pinned_pool *pool() {
  static sg_pinned_pool *p = [] {
    sg_pinned_pool_options o;
    sg_pinned_pool_options_init(&o);
    o.backend = SG_BACKEND_HOST;
    o.max_bytes = 8u << 20;
    o.slab_bytes = 1u << 20;
    sg_pinned_pool *made = nullptr;
    if (sg_pinned_pool_create(&o, &made) != SG_OK) std::abort();
    return made;
  }();
  return p;
}

// Live allocations with the pool warm (an executable that stages has
// started its copy threads, which live as long as the pool) and trimmed:
// what every input must come back to once the pool is trimmed again.
inline long warm_baseline(sg_pinned_pool *p) {
  void *dev = nullptr;
  static uint8_t host[256];
  sg_graph *g = nullptr;
  sg_exec *e = nullptr;
  sg_exec_options o;
  sg_exec_options_init(&o);
  o.backend = SG_BACKEND_HOST;
  o.mode = SG_MODE_GRAPH;
  o.staging.policy = SG_STAGING_STAGE;
  o.staging.pool = p;
  if (sg_mem_alloc(SG_BACKEND_HOST, SG_MEMORY_DEVICE, 0, sizeof host, &dev) != SG_OK ||
      sg_graph_create(&g) != SG_OK)
    std::abort();
  sg_copy_desc c = {dev, host, sizeof host, SG_COPY_HOST_TO_DEVICE, "warm up"};
  if (sg_graph_add_copy(g, &c, nullptr, 0, nullptr) != SG_OK || sg_exec_create(g, &o, &e) != SG_OK ||
      sg_exec_launch(e, nullptr) != SG_OK || sg_exec_wait(e) != SG_OK)
    std::abort();
  sg_exec_destroy(e);
  sg_graph_destroy(g);
  sg_mem_free(dev);
  sg_pinned_pool_trim(p);
  return sg_live_allocations();
}

}  // namespace sgfuzz

#endif
