/* Internal: the registration cache. A pageable buffer copied again and
 * again is pinned in place once (cudaHostRegister) instead of staged.
 *
 * Entries are page-aligned ranges. Executable nodes bind to an entry; a
 * binding keeps the entry's bookkeeping, not its registration: an idle
 * entry may be evicted, least recently used first, to stay under the limit,
 * and its binders then stage until they register again. An entry is never
 * unregistered while a copy through it may be in flight: each CUDA binding
 * records a fence (an event) after every copy it enqueues, and an entry
 * with a pending fence, a copy being enqueued, or a graph-mode executable
 * relying on it (a hold) is not evicted. When the last binder lets go the
 * buffer is unregistered at once (after its fence), so that a buffer the
 * user frees after destroying its executables is never left registered.
 *
 * Fences are queried, never waited on, with the cache's lock held (the
 * query does not block, and no callback takes this lock). Registering and
 * unregistering may wait for the device, so they are made with the lock
 * released, and only on a caller's thread, never in a callback. */
#ifndef SG_STAGING_REGCACHE_H
#define SG_STAGING_REGCACHE_H

#include <stddef.h>
#include <stdint.h>

#include "staging/stage_mem.h"
#include "streamgraph/staging.h"
#include "streamgraph/status.h"

typedef struct sg__reg_binding sg__reg_binding;

/* Binds to a registration covering [ptr, ptr + bytes) in the cache of the
 * backend whose memory table is `mem` (one cache per table): an existing
 * one, or (when `may_register`) a new one, evicting idle entries to stay
 * under the limit. *out is NULL when the buffer cannot be registered now
 * (overlaps another entry, limit reached, the driver refused); the caller
 * then stages. Errors only when out of memory or no fence can be made.
 * The registration is one piece: what a graph's memcpy node (one DMA)
 * needs; a registration in pieces (below) does not serve it. */
sg_status sg__reg_bind(const sg__stage_mem *mem, const void *ptr, size_t bytes, int may_register,
                       const char *where, sg__reg_binding **out);
/* As sg__reg_bind, for a binder that copies piece by piece (per launch,
 * sg__reg_binding_pieces): it may also bind to a registration in pieces. */
sg_status sg__reg_bind_pieces(const sg__stage_mem *mem, const void *ptr, size_t bytes,
                              int may_register, const char *where, sg__reg_binding **out);
/* As sg__reg_bind_pieces with may_register, but a new registration is made
 * by a thread of its own, off the caller's path (cudaHostRegister of 1 GiB
 * takes ~45-60 ms, and holds the driver meanwhile): the binding comes back
 * at once, pending (sg__reg_use_begin answers 0, sg__reg_pending 1), and
 * the caller stages until the registration is done. The thread pins the
 * buffer in pieces (sg__route_reg_piece), each when no copy of the cache
 * is being enqueued (sg__reg_enqueue_begin/end; it waits at most 10 ms for
 * that), so that a launch waits for one piece at most. The entry is usable
 * once every piece is pinned. A piece refused by the driver unpins the
 * pieces made and shows as sg__reg_refused (the binder stages from then
 * on; counted in pin_failures). The last binder letting go meanwhile stops
 * it after the piece under way (counted in cancellations). `device` is made
 * current for each pin. When no thread can be started, the registration is
 * made here, in one piece, as sg__reg_bind does. */
sg_status sg__reg_bind_background(const sg__stage_mem *mem, int device, const void *ptr,
                                  size_t bytes, const char *where, sg__reg_binding **out);
/* The pieces of the binding's registration: piece k is [base + k * piece,
 * base + (k + 1) * piece), the last one shorter. A copy through it makes
 * one DMA per piece it spans. */
void sg__reg_binding_pieces(const sg__reg_binding *b, uintptr_t *base, size_t *piece);
/* Around the enqueue of a copy (any route) on a launching thread: a
 * background registration of the cache of `mem` pins no piece meanwhile
 * (up to its wait limit). Cheap: an atomic count. */
void sg__reg_enqueue_begin(const sg__stage_mem *mem);
void sg__reg_enqueue_end(const sg__stage_mem *mem);
/* 1 while the binding's registration is being made in the background. */
int sg__reg_pending(sg__reg_binding *binding);
/* Returns once no registration of the cache of `mem` is under way
 * (tests: to make "registered from the next launch" deterministic). */
void sg__reg_wait_pending(const sg__stage_mem *mem);
/* 1 when the driver refused the binding's registration (in the background). */
int sg__reg_refused(sg__reg_binding *binding);
/* Drops a binding: waits for its fence, then, for the last binder,
 * unregisters the buffer; a background registration under way is stopped
 * after the piece being pinned, and its pieces unpinned, before this
 * returns (the buffer is left as it was found). Not in a callback. */
void sg__reg_unbind(sg__reg_binding *binding);
/* A graph relies on the entry until the binding goes (a graph-mode
 * executable's, or a caller's capture of a launch): never evicted. Holding
 * twice is holding once. */
void sg__reg_hold(sg__reg_binding *binding);

/* Starts enqueueing (or, on the host backend, running) a copy through the
 * binding: 1 while the entry is registered (it cannot be evicted until
 * sg__reg_use_end); 0 when it was evicted (the binder should unbind and
 * stage). */
int sg__reg_use_begin(sg__reg_binding *binding);
/* The copy is enqueued and, when `fence_stream` is not NULL, its fence is
 * recorded on that stream (a cudaStream_t) after it. SG_ERR_CUDA when the
 * record failed: the caller must then synchronise the stream. */
sg_status sg__reg_use_end(sg__reg_binding *binding, void *fence_stream, const char *where);

/* 1 if [ptr, ptr + bytes) lies in a registered entry of the cache. */
int sg__reg_covers(const sg__stage_mem *mem, const void *ptr, size_t bytes);

/* 1 if [ptr, ptr + bytes) shares a byte with an entry of the cache that is
 * registered, being registered or being unregistered. A registration pins
 * whole pages, so it may pin the first or last bytes of a neighbouring
 * buffer: such a buffer is pinned only in part, and the driver refuses a
 * copy over a range that is partly registered (cudaErrorInvalidValue). A
 * buffer the cache touches is pageable memory to the user: it takes a
 * route the cache controls (registered, when an entry covers it all;
 * staged otherwise), never the driver's path as it is. */
int sg__reg_touches(const sg__stage_mem *mem, const void *ptr, size_t bytes);

/* Before handing [ptr, ptr + bytes) to the driver as pageable memory: 1 if
 * no entry touches it, and then until sg__reg_direct_end no registration
 * overlapping it is made (one waits); 0 otherwise (the caller registers or
 * stages instead). Not in a callback. */
int sg__reg_direct_begin(const sg__stage_mem *mem, const void *ptr, size_t bytes);
void sg__reg_direct_end(const sg__stage_mem *mem, const void *ptr, size_t bytes);

/* 1 if `b`'s entry is registered and covers [ptr, ptr + bytes). */
int sg__reg_binding_covers(const sg__reg_binding *b, const void *ptr, size_t bytes);

/* The statistics of the cache of `mem`'s backend (sg_registration_get_stats;
 * all zero but the limit when that backend never registered anything). */
void sg__reg_stats(const sg__stage_mem *mem, sg_registration_stats *stats);

#endif
