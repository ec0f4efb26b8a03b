/* C side of staging_graph_state_test (graph_states_shim.h). */
#include "graph_states_shim.h"

#include <string.h>

#include "core/sys.h"
#include "host/host_stage_mem.h"
#include "staging/staging.h"

struct gstest_staging {
  sg__staging *st;
  sg__pstate **live; /* by node: the state its graph uses */
};

static sg__copy copy_of(int to_device, void *device, void *host, size_t bytes) {
  sg__copy c;
  memset(&c, 0, sizeof c);
  c.bytes = bytes;
  if (to_device) {
    c.dst = device;
    c.src = host;
    c.kind = SG_COPY_HOST_TO_DEVICE;
    c.dst_memory = SG_MEMORY_HOST_DEVICE;
    c.src_memory = SG_MEMORY_HOST_PAGEABLE;
  } else {
    c.dst = host;
    c.src = device;
    c.kind = SG_COPY_DEVICE_TO_HOST;
    c.dst_memory = SG_MEMORY_HOST_PAGEABLE;
    c.src_memory = SG_MEMORY_HOST_DEVICE;
  }
  return c;
}

sg_status gstest_create(sg_staging_policy policy, sg_pinned_pool *pool, uint32_t nodes,
                        gstest_staging **out) {
  gstest_staging *g = sg__calloc(1, sizeof *g);
  if (!g) return SG_ERR_OUT_OF_MEMORY;
  g->live = sg__calloc(nodes ? nodes : 1, sizeof *g->live);
  sg_staging_options o;
  memset(&o, 0, sizeof o);
  o.policy = policy;
  o.pool = pool;
  o.chunk_bytes = 64 * 1024;
  o.ring_depth = 3;
  o.copy_threads = 1;
  sg_status st = g->live ? sg__staging_create(&o, &sg__host_stage_mem, 0, 1, nodes, NULL, "test",
                                              &g->st)
                         : SG_ERR_OUT_OF_MEMORY;
  if (st) {
    gstest_destroy(g);
    return st;
  }
  *out = g;
  return SG_OK;
}

void gstest_destroy(gstest_staging *g) {
  if (!g) return;
  sg__staging_destroy(g->st);
  sg__free(g->live);
  sg__free(g);
}

sg_status gstest_add(gstest_staging *g, uint32_t index, int to_device, void *device, void *host,
                     size_t bytes) {
  sg__copy c = copy_of(to_device, device, host, bytes);
  sg_status st = sg__staging_add(g->st, index, "c", &c, sg__staging_classify(g->st->mem, &c),
                                 "test");
  if (!st) g->live[index] = sg__staging_find(g->st, index, &c);
  return st;
}

sg_status gstest_set(gstest_staging *g, uint32_t index, int to_device, void *device, void *host,
                     size_t bytes, int *rebuilt) {
  sg__copy c = copy_of(to_device, device, host, bytes);
  sg_status st = sg__staging_update(g->st, index, "c", &c, sg__staging_classify(g->st->mem, &c),
                                    0, "test");
  if (st) return st;
  sg__pstate *next = sg__staging_find(g->st, index, &c);
  *rebuilt = next != g->live[index];
  g->live[index] = next;
  sg__staging_gc(g->st, index, next, NULL);
  return SG_OK;
}

int gstest_route(const gstest_staging *g, uint32_t index, const void **registered) {
  const sg__pstate *p = g->live[index];
  *registered = p && p->route == SG__ROUTE_REGISTERED ? p->host : NULL;
  if (!p) return 0;
  return p->route == SG__ROUTE_REGISTERED ? 2 : 1;
}

unsigned gstest_states(const gstest_staging *g, uint32_t index) {
  unsigned n = 0;
  for (const sg__pstate *p = g->st->nodes[index].states; p; p = p->next) n++;
  return n;
}
