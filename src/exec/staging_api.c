/* The public staging entry points that resolve a backend (staging_api.h):
 * they pick the backend's memory table and hand it to the staging layer. */
#include "exec/staging_api.h"

#include <pthread.h>
#include <string.h>

#include "core/error.h"
#include "core/handles.h"
#include "core/memory_table.h"
#include "core/sys.h"
#include "exec/backend.h"
#include "staging/pool.h"
#include "staging/regcache.h"

/* The memory table of `backend` (resolved: CUDA or HOST), or NULL when
 * this build has no such backend. */
static const sg__stage_mem *mem_of(sg_backend backend) {
  const sg__backend_ops *ops = sg__backend_for(backend);
  return ops ? ops->stage_mem : NULL;
}

/* A pool of `opts` (NULL: the defaults) for the backend they resolve to. */
static sg_status pool_create(const sg_pinned_pool_options *opts, const char *fn,
                             sg_pinned_pool **out) {
  sg_pinned_pool_options o;
  if (opts) o = *opts; else sg_pinned_pool_options_init(&o);
  if ((unsigned)o.backend > SG_BACKEND_HOST)
    return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: backend %d is not an sg_backend", fn,
                    (int)o.backend);
  sg_status st = sg__backend_resolve(o.backend, fn, &o.backend);
  if (st) return st;
  const sg__stage_mem *mem = mem_of(o.backend);
  if (!mem)
    return sg__fail(SG_ERR_BACKEND_UNAVAILABLE, "%s: this build has no %s backend", fn,
                    o.backend == SG_BACKEND_CUDA ? "CUDA" : "host");
  return sg__pool_new(&o, mem, fn, out);
}

sg_status sg_pinned_pool_create(const sg_pinned_pool_options *opts, sg_pinned_pool **out) {
  if (!out) return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: out is NULL", __func__);
  *out = NULL;
  return pool_create(opts, __func__, out);
}

static pthread_mutex_t default_lock = PTHREAD_MUTEX_INITIALIZER;
static sg_pinned_pool *default_pool;

sg_status sg__pinned_pool_default(sg_pinned_pool **out) {
  sg__mutex_lock(&default_lock);
  sg_status st = SG_OK;
  if (!default_pool) {
    st = pool_create(NULL, "sg_pinned_pool_get_default", &default_pool);
    if (!st) sg__pool_mark_default(default_pool);
  }
  *out = default_pool;
  sg__mutex_unlock(&default_lock);
  return st;
}

sg_status sg_pinned_pool_get_default(sg_pinned_pool **out) {
  if (!out) return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: out is NULL", __func__);
  return sg__pinned_pool_default(out);
}

/* `pool`, or the default pool when NULL (*out NULL if it was never made). */
static sg_status pool_or_default(const sg_pinned_pool *pool, const char *fn,
                                 sg_pinned_pool **out) {
  if (pool) {
    sg_status st = sg__handle_check(pool, SG__HANDLE_POOL, fn, "pool");
    if (st) return st;
    *out = (sg_pinned_pool *)pool; /* its lock is not logical state */
    return SG_OK;
  }
  sg__mutex_lock(&default_lock);
  *out = default_pool;
  sg__mutex_unlock(&default_lock);
  return SG_OK;
}

sg_status sg_pinned_pool_trim(sg_pinned_pool *pool) {
  sg_pinned_pool *p;
  sg_status st = pool_or_default(pool, __func__, &p);
  if (!st && p) sg__pool_trim(p);
  return st;
}

sg_status sg_pinned_pool_get_stats(const sg_pinned_pool *pool, sg_pinned_pool_stats *stats) {
  if (!stats) return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: stats is NULL", __func__);
  memset(stats, 0, sizeof *stats);
  sg_pinned_pool *p;
  sg_status st = pool_or_default(pool, __func__, &p);
  if (!st && p) sg__pool_stats(p, stats);
  return st;
}

sg_status sg_registration_get_stats(sg_backend backend, sg_registration_stats *stats) {
  if (!stats) return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: stats is NULL", __func__);
  if (backend != SG_BACKEND_CUDA && backend != SG_BACKEND_HOST)
    return sg__fail(SG_ERR_INVALID_ARGUMENT,
                    "%s: backend must be SG_BACKEND_CUDA or SG_BACKEND_HOST", __func__);
  sg__reg_stats(mem_of(backend), stats);
  return SG_OK;
}
