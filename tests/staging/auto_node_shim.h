/* C side of staging_background_reg_test: one copy node of a streams-mode
 * executable under AUTO, its route decided per launch as a backend with
 * DMA decides it, wrapped for C++ (staging.h reaches the core's headers,
 * which use C11 atomics). */
#ifndef AUTO_NODE_SHIM_H
#define AUTO_NODE_SHIM_H

#include <stddef.h>
#include <stdint.h>

#include "streamgraph/staging.h"

#ifdef __cplusplus
extern "C" {
#endif

struct sg__stage_mem;
typedef struct sg__reg_binding sg__reg_binding;

typedef struct autonode autonode;

/* Routes, as policy.h numbers them. */
enum { AUTONODE_DIRECT = 0, AUTONODE_STAGE = 1, AUTONODE_REGISTERED = 2 };

/* Per-launch staging under AUTO over `mem` (a table with dma set) and
 * `pool` (made for `mem`), one node copying `bytes` from pageable `host`
 * to emulated device memory `device`. */
sg_status autonode_create(const struct sg__stage_mem *mem, sg_pinned_pool *pool, void *device,
                          void *host, size_t bytes, autonode **out);
/* Destroys the staging (what sg_exec_destroy does to it). */
void autonode_destroy(autonode *a);
/* One launch: the route decision, inside the enqueue window as a backend
 * makes it (*decision_ns: how long the decision took), then the copy by
 * memcpy, and the ends a backend calls. */
sg_status autonode_launch(autonode *a, int *route, uint64_t *decision_ns);
/* As sg_exec_set_copy: the node copies from `host` from now on. */
sg_status autonode_repoint(autonode *a, void *host);
/* The node's binding to a registration (NULL: none). */
sg__reg_binding *autonode_binding(const autonode *a);

#ifdef __cplusplus
}
#endif
#endif
