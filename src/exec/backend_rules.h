/* Internal: refusals every backend makes alike.
 *
 * The host backend stands in for the GPU (streamgraph/memory.h): a graph
 * the CUDA backend refuses, the host backend refuses too, with the same
 * status and message, so that CI without a GPU catches it. Each rule that
 * does not depend on the hardware lives here once and both backends call
 * it; tests/reliability/issue25_test.cpp lists them. */
#ifndef SG_EXEC_BACKEND_RULES_H
#define SG_EXEC_BACKEND_RULES_H

#include <stddef.h>
#include <stdint.h>

#include "core/node.h"
#include "streamgraph/status.h"

/* Room for "fn: <kind> node <label>". */
#define SG__BACKEND_WHERE_BYTES (SG__LABEL_BYTES + 96)

/* "fn: <kind> node <label>": how a refusal names its node. */
const char *sg__backend_where(const char *fn, const sg__node *node, uint32_t index,
                              char buf[SG__BACKEND_WHERE_BYTES]);

/* The device node `node` runs on in an executable on `exec_device`. */
int sg__backend_node_device(const sg__node *node, int exec_device);

/* A copy with a pageable host side (a staged copy) runs on the executable's
 * device only: SG_ERR_UNSUPPORTED, else SG_OK. */
sg_status sg__backend_check_staged_device(const char *where, int node_device, int exec_device);

/* A memset on device `on` of memory on device `dst` that `on` cannot reach
 * (`reachable` 0: no peer access): SG_ERR_INVALID_ARGUMENT, else SG_OK. */
sg_status sg__backend_check_memset_reach(const char *where, int on, int dst, int reachable);

#endif
