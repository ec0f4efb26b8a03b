/* Internal: the host backend's staged copies. */
#ifndef SG_HOST_HOST_STAGING_H
#define SG_HOST_HOST_STAGING_H

#include <stddef.h>
#include <stdint.h>

#include "staging/exec_staging.h"

/* Runs candidate `index` on the calling thread. On failure returns the
 * status and writes a message naming the node. */
sg_status sg__staging_host_run(sg__staging *st, uint32_t index, char *message, size_t cap);

#endif
