/* C side of staging_graph_state_test: graph mode's prepared states driven
 * as the CUDA backend drives them, wrapped for C++ (staging.h reaches the
 * core's headers, which use C11 atomics). */
#ifndef GRAPH_STATES_SHIM_H
#define GRAPH_STATES_SHIM_H

#include <stddef.h>
#include <stdint.h>

#include "streamgraph/staging.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gstest_staging gstest_staging;

/* Graph-mode staging on the host backend's memory over `pool`: policy,
 * 64 KiB chunks, rings of 3, `nodes` copy nodes. */
sg_status gstest_create(sg_staging_policy policy, sg_pinned_pool *pool, uint32_t nodes,
                        gstest_staging **out);
void gstest_destroy(gstest_staging *g);
/* Node `index` at creation: a copy host->device (`to_device`) or back
 * between pageable `host` and emulated device memory `device`. */
sg_status gstest_add(gstest_staging *g, uint32_t index, int to_device, void *device, void *host,
                     size_t bytes);
/* As sg_exec_set_copy in graph mode: prepares the new parameters; the graph
 * then uses the state that serves them (*rebuilt is set when that is not
 * the one it used: a rebuild), and every other state is collected. */
sg_status gstest_set(gstest_staging *g, uint32_t index, int to_device, void *device, void *host,
                     size_t bytes, int *rebuilt);
/* The state node `index`'s graph uses: 1 staged, 2 registered, 0 none;
 * for a registered one, the buffer it pinned. */
int gstest_route(const gstest_staging *g, uint32_t index, const void **registered);
/* How many states node `index` holds. */
unsigned gstest_states(const gstest_staging *g, uint32_t index);

#ifdef __cplusplus
}
#endif
#endif
