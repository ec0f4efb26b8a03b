/* C side of staging_background_reg_test (auto_node_shim.h). */
#include "auto_node_shim.h"

#include <string.h>

#include "core/sys.h"
#include "staging/staging.h"

struct autonode {
  sg__staging *st;
  const sg__stage_mem *mem;
  sg__copy c;
};

static sg__copy h2d(void *device, void *host, size_t bytes) {
  sg__copy c;
  memset(&c, 0, sizeof c);
  c.bytes = bytes;
  c.dst = device;
  c.src = host;
  c.kind = SG_COPY_HOST_TO_DEVICE;
  c.dst_memory = SG_MEMORY_HOST_DEVICE;
  c.src_memory = SG_MEMORY_HOST_PAGEABLE;
  return c;
}

sg_status autonode_create(const sg__stage_mem *mem, sg_pinned_pool *pool, void *device,
                          void *host, size_t bytes, autonode **out) {
  *out = NULL;
  autonode *a = sg__calloc(1, sizeof *a);
  if (!a) return SG_ERR_OUT_OF_MEMORY;
  sg_staging_options o;
  memset(&o, 0, sizeof o);
  o.policy = SG_STAGING_AUTO;
  o.pool = pool;
  a->mem = mem;
  a->c = h2d(device, host, bytes);
  sg_status st = sg__staging_create(&o, mem, 0, 0, 1, NULL, "test", &a->st);
  if (!st)
    st = sg__staging_add(a->st, 0, "c", &a->c, sg__staging_classify(mem, &a->c), "test");
  if (st) {
    autonode_destroy(a);
    return st;
  }
  *out = a;
  return SG_OK;
}

void autonode_destroy(autonode *a) {
  if (!a) return;
  sg__staging_destroy(a->st);
  sg__free(a);
}

sg_status autonode_launch(autonode *a, int *route, uint64_t *decision_ns) {
  sg__copy_route r = SG__ROUTE_DIRECT;
  sg__staging_enqueue_begin(a->st);
  const uint64_t t0 = sg__now_ns();
  sg_status st = sg__staging_route(a->st, 0, &a->c, "test", &r);
  *decision_ns = sg__now_ns() - t0;
  if (!st) {
    memcpy(a->c.dst, a->c.src, a->c.bytes);
    if (r == SG__ROUTE_REGISTERED) st = sg__reg_use_end(a->st->nodes[0].reg, NULL, "test");
    if (r == SG__ROUTE_DIRECT) sg__staging_direct_end(a->st, 0, &a->c);
  }
  sg__staging_enqueue_end(a->st);
  *route = (int)r;
  return st;
}

sg_status autonode_repoint(autonode *a, void *host) {
  sg__copy c = h2d(a->c.dst, host, a->c.bytes);
  sg_status st = sg__staging_update(a->st, 0, NULL, &c, sg__staging_classify(a->mem, &c), 1,
                                    "test");
  if (!st) a->c = c;
  return st;
}

sg__reg_binding *autonode_binding(const autonode *a) { return a->st->nodes[0].reg; }
