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
 *
 * Whether a host buffer is pageable is detected (sg_mem_kind), never declared.
 * A copy between pageable memory and device (or managed) memory is a
 * candidate. docs/staging.md gives the full semantics; in short:
 *
 *  - In graph mode (CUDA) every candidate is staged or registered, whatever
 *    the policy: the CUDA driver does not run a graph's memcpy node with a
 *    pageable side in graph order, so SG_STAGING_NONE and small AUTO copies
 *    are staged there too (through the pool: the default pool if none is
 *    given). A caller capturing a streams-mode launch into its own graph
 *    gets a candidate copy only through a buffer registered already
 *    (SG_STAGING_REGISTER, after a launch outside the capture); otherwise
 *    the launch fails with SG_ERR_UNSUPPORTED.
 *  - The source of a host->device copy may be written again once the copy
 *    node has finished: by a node that depends on it, or by the caller after
 *    the launch has completed (sg_exec_wait, or the caller's stream has passed
 *    the launch). That is the same rule as for pinned memory.
 *  - The destination of a device->host copy holds the data once the copy node
 *    has finished: for nodes that depend on it, and for the caller after the
 *    launch has completed. Before that its contents are unspecified.
 *  - Pool exhaustion: a launch that needs staging memory held by other
 *    launches in flight waits for them (they finish without the caller's
 *    help); memory that cannot be had that way (the cap is reached by memory
 *    graph-mode executables hold, or the request exceeds the cap) fails the
 *    call with SG_ERR_POOL_EXHAUSTED at once. A ring larger than the cap is
 *    refused when it is known: at sg_exec_create (or sg_exec_set_copy /
 *    sg_exec_update) for every copy staged from its first launch (graph
 *    mode; STAGE, and AUTO's large copies, in streams mode). Nothing waits
 *    on something only the caller could release, so there is no deadlock.
 *  - Registration (SG_STAGING_REGISTER, and SG_STAGING_AUTO for a buffer seen
 *    again and again) pins the user's buffer in place. While an executable
 *    whose copy node names a buffer exists, that buffer must stay allocated
 *    (do not free or unmap it), as CUDA requires of registered memory; point
 *    the node elsewhere (sg_exec_set_copy) or destroy the executable first.
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
  SG_STAGING_AUTO = 0,   /* CUDA streams mode: copies of at least auto_min_bytes are staged,
                            and a buffer the same node copies in auto_register_after launches
                            in a row is registered in the background (no launch waits for
                            it); smaller copies take the driver's path.
                            CUDA graph mode: staged (an existing registration is used). The
                            host backend (no DMA to overlap) copies directly. */
  SG_STAGING_STAGE,      /* always stage through the pool's pinned chunks (any size) */
  SG_STAGING_REGISTER,   /* pin the user's buffer in place (cached, LRU under a cap);
                            stages when the buffer cannot be registered */
  SG_STAGING_NONE        /* hand pageable memory to the driver as it is (streams mode; the
                            host backend copies directly); CUDA graph mode stages it, since
                            a graph cannot take it as it is */
} sg_staging_policy;

/* Part of sg_exec_options. Zero means "the default" for every number; the
 * defaults are in docs/staging.md. */
typedef struct sg_staging_options {
  sg_staging_policy policy;
  sg_pinned_pool *pool;       /* NULL: the process-wide default pool */
  size_t chunk_bytes;         /* 0: adapted to each copy's size, direction and protocol.
                                 Memop protocol (the default where the device has it):
                                 1 to 4 MiB; 4 MiB chunks from about 31 MiB host->device
                                 and 10 MiB device->host. Callback protocol: 1 to 16 MiB;
                                 64 MiB in 10.7 MiB chunks host->device, 16 MiB
                                 device->host; 1 GiB in 16 MiB (docs/staging.md) */
  unsigned ring_depth;        /* pinned chunks in flight per staged copy; 0: 8 for the
                                 copies that get 4 MiB memop chunks, else 4 */
  unsigned copy_threads;      /* host threads splitting each chunk's copy; 0: half the CPUs,
                                 at most 8, for the copies that get 4 MiB memop chunks;
                                 else three quarters of the CPUs, at most 12 (every CPU,
                                 at most 16, from 128 MiB under callbacks) */
  size_t auto_min_bytes;      /* AUTO: smaller copies use the driver's path; 0: the
                                 measured default, 1 MiB in both directions and under both
                                 protocols */
  unsigned auto_register_after; /* AUTO, streams mode: launches in a row with the same buffer
                                   before it is registered; 0: 2 (the first reuse). The
                                   registration runs in the background, in pieces: no launch
                                   waits for it; copies stage until it is done and go through
                                   it from the next launch (docs/staging.md, Registration) */
} sg_staging_options;

/* ---- pinned pools ------------------------------------------------------ */

typedef enum sg_pool_exhausted {
  SG_POOL_WAIT = 0,          /* wait for memory that launches in flight will give back */
  SG_POOL_FAIL               /* fail with SG_ERR_POOL_EXHAUSTED instead of waiting */
} sg_pool_exhausted;

typedef struct sg_pinned_pool_options {
  sg_backend backend;        /* SG_BACKEND_AUTO: CUDA pinned memory (cudaHostAlloc, portable)
                                when a device is present, else plain aligned memory */
  int device;                /* current device while pinned memory is allocated */
  size_t slab_bytes;         /* memory is taken in slabs of this size; 0: 64 MiB */
  size_t max_bytes;          /* cap on the memory the pool holds; 0: 512 MiB */
  size_t prewarm_bytes;      /* allocated at creation (whole slabs); 0: none */
  sg_pool_exhausted on_exhausted;
  unsigned max_copy_threads; /* cap on the pool's copy threads; 0: 16 */
} sg_pinned_pool_options;

/* Fills `opts` with the defaults. Always start from this. */
SG_API void sg_pinned_pool_options_init_sized(sg_pinned_pool_options *opts, size_t opts_size);
#ifndef SG_BUILDING_LIBRARY
static inline void sg_pinned_pool_options_init(sg_pinned_pool_options *opts) {
  sg_pinned_pool_options_init_sized(opts, sizeof *opts);
}
#else
void sg_pinned_pool_options_init(sg_pinned_pool_options *opts);
#endif

/* Creates a pool (NULL options: the defaults). Prewarming allocates now, so
 * that no launch pays for pinned allocation. */
SG_API sg_status sg_pinned_pool_create_sized(const sg_pinned_pool_options *opts, size_t opts_size,
                                             sg_pinned_pool **out);
#ifndef SG_BUILDING_LIBRARY
static inline sg_status sg_pinned_pool_create(const sg_pinned_pool_options *opts,
                                              sg_pinned_pool **out) {
  return sg_pinned_pool_create_sized(opts, sizeof *opts, out);
}
#else
sg_status sg_pinned_pool_create(const sg_pinned_pool_options *opts, sg_pinned_pool **out);
#endif

/* Destroys a pool. SG_ERR_INVALID_ARGUMENT while executables still use it
 * (destroy them first): an executable whose options name the pool uses it
 * from its creation to its destruction, whatever its copies. The default
 * pool cannot be destroyed. */
SG_API sg_status sg_pinned_pool_destroy(sg_pinned_pool *pool);

/* The process-wide default pool, created with the defaults on first use.
 * It lives until the process ends; sg_pinned_pool_trim gives its idle
 * memory back. A program checked by a leak checker (compute-sanitizer
 * --leak-check full) calls sg_pinned_pool_trim(NULL) before it exits, once
 * its executables are destroyed, and nothing the library allocated is left. */
SG_API sg_status sg_pinned_pool_get_default(sg_pinned_pool **out);

/* Frees the slabs nothing uses now (NULL: the default pool, if it exists). */
SG_API sg_status sg_pinned_pool_trim(sg_pinned_pool *pool);

typedef struct sg_pinned_pool_stats {
  size_t max_bytes;          /* the cap */
  size_t reserved_bytes;     /* memory held in slabs */
  size_t in_use_bytes;       /* of it, handed out now */
  size_t peak_in_use_bytes;
  size_t persistent_bytes;   /* of in_use, held for their lifetime by graph-mode executables */
  size_t slab_count;
  uint64_t slab_allocations; /* slabs allocated so far (pinned allocations) */
  uint64_t slab_frees;
  uint64_t acquisitions;     /* rings handed out */
  uint64_t waits;            /* acquisitions that had to wait for memory */
  uint64_t exhausted;        /* acquisitions refused with SG_ERR_POOL_EXHAUSTED */
  unsigned copy_threads;     /* copy threads running */
  unsigned users;            /* executables using the pool */
  int on_cuda;               /* 1: CUDA pinned memory; 0: plain host memory */
} sg_pinned_pool_stats;

/* NULL pool: the default pool (zeroed statistics if it does not exist yet). */
SG_API sg_status sg_pinned_pool_get_stats_sized(const sg_pinned_pool *pool,
                                                sg_pinned_pool_stats *stats, size_t stats_size);
#ifndef SG_BUILDING_LIBRARY
static inline sg_status sg_pinned_pool_get_stats(const sg_pinned_pool *pool,
                                                 sg_pinned_pool_stats *stats) {
  return sg_pinned_pool_get_stats_sized(pool, stats, sizeof *stats);
}
#else
sg_status sg_pinned_pool_get_stats(const sg_pinned_pool *pool, sg_pinned_pool_stats *stats);
#endif

/* ---- registration cache ------------------------------------------------ */
/* One cache per process and backend (CUDA registrations are process-wide).
 * An entry lives while an executable whose node names the buffer exists,
 * or until it is evicted, least recently used first, to stay under the
 * limit; an entry a copy in flight uses, or a graph-mode executable relies
 * on, is never evicted. */

typedef struct sg_registration_stats {
  size_t limit_bytes;
  size_t registered_bytes;   /* pinned in place now (whole pages) */
  size_t buffers;            /* entries */
  uint64_t registrations;    /* buffers registered (one made in the background in pieces
                                counts once) */
  uint64_t unregistrations;
  uint64_t evictions;        /* of those, made to stay under the limit */
  uint64_t hits;             /* copies through an existing registration */
  uint64_t refusals;         /* buffers that could not be registered (overlap, limit, error) */
  uint64_t pin_failures;     /* of the refusals, those the driver refused (cudaHostRegister
                                failed): the buffer is staged until its node is set again */
  uint64_t cancellations;    /* background registrations stopped part way because no node
                                needed the buffer any more (re-pointed, or executable destroyed) */
} sg_registration_stats;

/* Statistics of the cache of `backend` (SG_BACKEND_CUDA or SG_BACKEND_HOST,
 * whose cache only emulates pinning, for tests). */
SG_API sg_status sg_registration_get_stats_sized(sg_backend backend, sg_registration_stats *stats,
                                                 size_t stats_size);
#ifndef SG_BUILDING_LIBRARY
static inline sg_status sg_registration_get_stats(sg_backend backend,
                                                  sg_registration_stats *stats) {
  return sg_registration_get_stats_sized(backend, stats, sizeof *stats);
}
#else
sg_status sg_registration_get_stats(sg_backend backend, sg_registration_stats *stats);
#endif

/* Sets the limit on registered bytes of both caches (default 2 GiB; 0
 * disables registration: buffers are staged instead). Entries above a
 * lowered limit are evicted when nothing in flight uses them. */
SG_API sg_status sg_registration_set_limit(size_t max_bytes);

#ifdef __cplusplus
}
#endif
#endif
