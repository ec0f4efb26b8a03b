/* Internal: the public staging entry points that need a backend (exec/
 * staging_api.c). Staging itself is handed each backend's memory table
 * (staging/stage_mem.h) and never looks a backend up; what must resolve
 * one - a pool for SG_BACKEND_AUTO, the default pool, the statistics of a
 * backend's registration cache - is done here, above it. */
#ifndef SG_EXEC_STAGING_API_H
#define SG_EXEC_STAGING_API_H

#include "streamgraph/staging.h"

/* The process-wide default pool (for the backend SG_BACKEND_AUTO resolves
 * to), made on first use; every backend's memory table names this as its
 * default_pool. */
sg_status sg__pinned_pool_default(sg_pinned_pool **out);

#endif
