/*
 * streamgraph/staging.h - pinned staging for copies whose host side is
 * ordinary (pageable) memory.
 *
 * Pinned allocation is slow (about half a second per GiB), so pinned memory is
 * taken once, in large slabs, by a pool that executables share and reuse.
 * A copy node whose host side is pageable is then carried out, by policy,
 * through a ring of pinned chunks (host-side copies on several threads
 * overlapping the DMA of the previous chunk), or by pinning the user's buffer
 * in place once (registration cache), or by the driver's own pageable path.
 */
#ifndef STREAMGRAPH_STAGING_H
#define STREAMGRAPH_STAGING_H

#include <stddef.h>
#include <stdint.h>

#include "memory.h"
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sg_pinned_pool sg_pinned_pool;

typedef enum sg_staging_policy {
  SG_STAGING_AUTO = 0,   /* register buffers seen again and again, stage the rest */
  SG_STAGING_STAGE,      /* always stage through the pool's pinned chunks */
  SG_STAGING_REGISTER,   /* pin the user's buffer in place (cached, LRU under a cap) */
  SG_STAGING_NONE        /* hand pageable memory to the driver as it is */
} sg_staging_policy;

typedef struct sg_staging_options {
  sg_staging_policy policy;
  sg_pinned_pool *pool;       /* NULL: the process-wide default pool */
  size_t chunk_bytes;         /* 0: default (see docs/staging.md) */
  unsigned ring_depth;        /* pinned chunks in flight per staged copy; 0: default */
  unsigned copy_threads;      /* host threads splitting each chunk's copy; 0: default */
} sg_staging_options;

#ifdef __cplusplus
}
#endif
#endif
