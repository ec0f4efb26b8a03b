/* Internal: running a staged copy on the host backend. */
#ifndef SG_HOST_HOST_STAGING_H
#define SG_HOST_HOST_STAGING_H

#include <stddef.h>
#include <stdint.h>

#include "exec/backend.h"
#include "staging/staging.h"

/* Runs candidate `index` (its node `node`) on the calling thread and counts
 * it in `exec`'s statistics. On failure returns the status and writes a
 * message naming the node. */
sg_status sg__host_staged_run(sg__staging *st, uint32_t index, const sg__node *node,
                              sg_exec *exec, char *message, size_t cap);

#endif
