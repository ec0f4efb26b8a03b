/* Internal: what the staging engine asks of a pinned pool.
 *
 * Memory is handed out as blocks (one block per staged copy: its ring of
 * chunks). A block is either transient (a streams-mode launch's: given back
 * by a host callback once the copy is done, so the device's progress alone
 * returns it) or persistent (a graph-mode executable's: held until the
 * executable is destroyed). A request waits only for transient blocks, never
 * for persistent ones, so it never waits for something only its caller could
 * give back. Requests are served first come, first served. */
#ifndef SG_STAGING_POOL_H
#define SG_STAGING_POOL_H

#include <stddef.h>

#include "staging/workers.h"
#include "streamgraph/staging.h"

typedef struct sg__pool_block {
  void *ptr;
  size_t bytes;
  int persistent;
} sg__pool_block;

struct sg__stage_mem;

/* A pool of `opts` (its backend resolved: CUDA or HOST) whose slabs come
 * from `mem`, that backend's memory. The public entry points that resolve
 * a backend and name its table live above staging (exec/staging_api.c):
 * staging is handed tables, it never looks a backend up. */
sg_status sg__pool_new(const sg_pinned_pool_options *opts, const struct sg__stage_mem *mem,
                       const char *fn, sg_pinned_pool **out);
/* Marks the process-wide default pool (sg_pinned_pool_destroy refuses it). */
void sg__pool_mark_default(sg_pinned_pool *pool);
/* The pool an executable asked for (NULL: the default pool, which `mem`,
 * the executable's backend table, makes on first use). */
sg_status sg__pool_resolve(sg_pinned_pool *requested, const struct sg__stage_mem *mem,
                           const char *where, sg_pinned_pool **out);
/* Frees the pool's empty slabs (sg_pinned_pool_trim). */
void sg__pool_trim(sg_pinned_pool *pool);
/* The pool's statistics (sg_pinned_pool_get_stats). */
void sg__pool_stats(sg_pinned_pool *pool, sg_pinned_pool_stats *stats);

/* An executable starts using the pool: counts it as a user and makes sure
 * `copy_threads` copy threads run. Undone by sg__pool_detach. */
sg_status sg__pool_attach(sg_pinned_pool *pool, unsigned copy_threads, const char *where);
void sg__pool_detach(sg_pinned_pool *pool);

/* Says whether the device is broken (its context reported an error), in
 * which case callbacks that would give blocks back never run. */
typedef int (*sg__pool_broken_fn)(void *ctx);

/* A block of `bytes` (page-aligned). A transient request may wait (see
 * above), checking `broken` (may be NULL) every 50 ms; fails with
 * SG_ERR_POOL_EXHAUSTED, SG_ERR_CUDA or SG_ERR_OUT_OF_MEMORY, message
 * prefixed by `where`. Must not be called from a CUDA host callback. */
sg_status sg__pool_acquire(sg_pinned_pool *pool, size_t bytes, int persistent,
                           sg__pool_broken_fn broken, void *broken_ctx, const char *where,
                           sg__pool_block *out);
/* Gives a block back. Never fails, never blocks for long, makes no CUDA
 * call: safe in a CUDA host callback. */
void sg__pool_release(sg_pinned_pool *pool, const sg__pool_block *block);

sg__workers *sg__pool_workers(sg_pinned_pool *pool);
/* The pool's conductor (stage_conductor.h): its thread starts on first
 * need, sg__conductor_start. */
struct sg__conductor *sg__pool_conductor(sg_pinned_pool *pool);

/* Memop protocol: a record of SG__POOL_FLAG_BYTES of pinned memory, zeroed,
 * for one staged copy's flags (stage_flags.h). Taken from small slabs of
 * their own (never from the rings' slabs, whose sizes they would upset),
 * kept until the pool is destroyed; not counted in the pool's statistics.
 * Not in a callback. */
#define SG__POOL_FLAG_BYTES ((size_t)512)
sg_status sg__pool_flags_take(sg_pinned_pool *pool, const char *where, void **out);
void sg__pool_flags_give(sg_pinned_pool *pool, void *flags);
/* The memory table the pool's slabs come from (its backend's). */
const struct sg__stage_mem *sg__pool_mem(const sg_pinned_pool *pool);
/* The cap on the memory the pool holds (its max_bytes, page-rounded). */
size_t sg__pool_cap(const sg_pinned_pool *pool);

#endif
