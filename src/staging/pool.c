/* Pinned pools: slabs taken once and sub-allocated (pool.h, staging.h).
 *
 * Each slab keeps its blocks in an array sorted by offset; a request takes
 * the first gap large enough (first fit). Pools hold few slabs and few
 * blocks (one per staged copy in flight), so linear scans are cheap, and
 * giving a block back only removes an entry: it cannot fail, which a CUDA
 * host callback needs.
 *
 * No CUDA call is made with the pool's lock held: cudaFreeHost may wait for
 * the device, and the device may be running a callback that gives a block
 * back under that lock. Slabs are allocated and freed with the lock
 * released; `growing` counts what is being allocated against the cap. */
#include <string.h>

#include "core/device.h"
#include "core/error.h"
#include "core/handles.h"
#include "core/memory_table.h"
#include "core/sys.h"
#include "staging/pool.h"
#include "staging/stage_conductor.h"
#include "staging/stage_mem.h"

#define PAGE ((size_t)4096)
#define DEFAULT_SLAB_BYTES ((size_t)64 << 20)
#define DEFAULT_MAX_BYTES ((size_t)512 << 20)
#define DEFAULT_MAX_THREADS 16u
#define THREAD_LIMIT 64u

typedef struct block_rec {
  size_t off, len;
  int persistent;
} block_rec;

typedef struct slab {
  char *base;
  size_t bytes;
  block_rec *blocks;   /* sorted by offset */
  size_t count, cap;
} slab;

struct sg_pinned_pool {
  sg_pinned_pool_options o; /* resolved: every number set, backend CUDA or HOST */
  const sg__stage_mem *mem; /* the backend's memory: where slabs come from */
  int is_default;
  pthread_mutex_t lock;
  pthread_cond_t changed;   /* a block came back, a slab arrived, the queue moved */
  slab **slabs;
  size_t slab_count, slab_cap;
  size_t reserved;          /* bytes in slabs */
  size_t growing;           /* bytes being allocated (lock released) */
  size_t in_use, persistent_bytes, peak;
  size_t transient_blocks;  /* blocks that launches in flight will give back */
  uint64_t next_ticket, serving; /* first come, first served */
  uint64_t slab_allocs, slab_frees, acquisitions, waits, exhausted;
  unsigned users;
  sg__workers workers;
  sg__conductor conductor;
  void **flag_slabs;        /* pinned slabs of flag records */
  size_t flag_slab_count;
  void *free_flags;         /* free records, linked through their first word */
};

/* Flag records come in slabs of this many bytes. */
#define FLAG_SLAB_BYTES ((size_t)64 * 1024)

static size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

/* ---- slabs ------------------------------------------------------------- */

static void slab_free(const sg_pinned_pool *pool, slab *s) {
  if (!s) return;
  if (s->base) pool->mem->slab_free(s->base);
  sg__free(s->blocks);
  sg__free(s);
}

/* Allocates a slab of `bytes` (lock not held). */
static sg_status slab_new(const sg_pinned_pool *pool, size_t bytes, const char *where, slab **out) {
  slab *s = sg__calloc(1, sizeof *s);
  if (!s) return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory", where);
  s->bytes = bytes;
  s->cap = 4;
  s->blocks = sg__calloc(s->cap, sizeof *s->blocks);
  if (!s->blocks) {
    sg__free(s);
    return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory", where);
  }
  void *base = NULL;
  sg_status st = pool->mem->slab_alloc(pool->o.device, bytes, where, &base);
  if (st) {
    sg__free(s->blocks);
    sg__free(s);
    return st;
  }
  s->base = base;
  *out = s;
  return SG_OK;
}

/* Adds a slab (lock held). SG_ERR_OUT_OF_MEMORY leaves it to the caller. */
static sg_status slab_insert(sg_pinned_pool *pool, slab *s) {
  if (pool->slab_count == pool->slab_cap) {
    size_t cap = pool->slab_cap ? pool->slab_cap * 2 : 8;
    slab **t = sg__realloc_array(pool->slabs, cap, sizeof *t);
    if (!t) return SG_ERR_OUT_OF_MEMORY;
    pool->slabs = t;
    pool->slab_cap = cap;
  }
  pool->slabs[pool->slab_count++] = s;
  pool->reserved += s->bytes;
  pool->slab_allocs++;
  return SG_OK;
}

/* Allocates and adds a slab of `bytes`, releasing the lock meanwhile (held
 * on entry and on return). */
static sg_status grow(sg_pinned_pool *pool, size_t bytes, const char *where) {
  pool->growing += bytes;
  sg__mutex_unlock(&pool->lock);
  slab *s = NULL;
  sg_status st = slab_new(pool, bytes, where, &s);
  sg__mutex_lock(&pool->lock);
  pool->growing -= bytes;
  if (!st && slab_insert(pool, s)) {
    sg__mutex_unlock(&pool->lock);
    slab_free(pool, s);
    sg__mutex_lock(&pool->lock);
    st = sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory", where);
  }
  sg__cond_broadcast(&pool->changed);
  return st;
}

/* Frees every slab with no block, releasing the lock meanwhile (held on
 * entry and on return). Returns the bytes freed. */
static size_t free_empty_slabs(sg_pinned_pool *pool) {
  size_t freed = 0, n = 0;
  slab *batch[16];
  for (;;) {
    n = 0;
    for (size_t i = 0; i < pool->slab_count && n < 16;) {
      slab *s = pool->slabs[i];
      if (s->count == 0) {
        batch[n++] = s;
        pool->slabs[i] = pool->slabs[--pool->slab_count];
        pool->reserved -= s->bytes;
        pool->slab_frees++;
        freed += s->bytes;
      } else {
        i++;
      }
    }
    if (n == 0) break;
    sg__mutex_unlock(&pool->lock);
    for (size_t i = 0; i < n; i++) slab_free(pool, batch[i]);
    sg__mutex_lock(&pool->lock);
  }
  return freed;
}

static size_t empty_slab_bytes(const sg_pinned_pool *pool) {
  size_t bytes = 0;
  for (size_t i = 0; i < pool->slab_count; i++)
    if (pool->slabs[i]->count == 0) bytes += pool->slabs[i]->bytes;
  return bytes;
}

/* ---- blocks ------------------------------------------------------------ */

/* First fit of `need` bytes in any slab (lock held): 1 and *out set when it
 * fits; 0 when nothing fits; -1 when the block table cannot grow. */
static int take(sg_pinned_pool *pool, size_t need, int persistent, sg__pool_block *out) {
  for (size_t i = 0; i < pool->slab_count; i++) {
    slab *s = pool->slabs[i];
    size_t at = 0, start = 0;
    for (;; at++) {
      size_t end = at < s->count ? s->blocks[at].off : s->bytes;
      if (end - start >= need) break;
      if (at == s->count) {
        at = SIZE_MAX;
        break;
      }
      start = s->blocks[at].off + s->blocks[at].len;
    }
    if (at == SIZE_MAX) continue;
    if (s->count == s->cap) {
      block_rec *t = sg__realloc_array(s->blocks, s->cap * 2, sizeof *t);
      if (!t) return -1;
      s->blocks = t;
      s->cap *= 2;
    }
    memmove(&s->blocks[at + 1], &s->blocks[at], (s->count - at) * sizeof *s->blocks);
    s->blocks[at] = (block_rec){start, need, persistent};
    s->count++;
    pool->in_use += need;
    if (pool->in_use > pool->peak) pool->peak = pool->in_use;
    if (persistent) pool->persistent_bytes += need; else pool->transient_blocks++;
    pool->acquisitions++;
    *out = (sg__pool_block){s->base + start, need, persistent};
    return 1;
  }
  return 0;
}

sg_status sg__pool_acquire(sg_pinned_pool *pool, size_t bytes, int persistent,
                           sg__pool_broken_fn broken, void *broken_ctx, const char *where,
                           sg__pool_block *out) {
  size_t need = round_up(bytes ? bytes : 1, PAGE);
  sg__mutex_lock(&pool->lock);
  if (need > pool->o.max_bytes) {
    pool->exhausted++;
    sg__mutex_unlock(&pool->lock);
    return sg__fail(SG_ERR_POOL_EXHAUSTED,
                    "%s: a staging ring of %zu bytes is larger than the pinned pool's cap of %zu "
                    "bytes (lower chunk_bytes or ring_depth, or raise the pool's max_bytes)",
                    where, need, pool->o.max_bytes);
  }
  uint64_t ticket = pool->next_ticket++;
  int waited = 0;
  sg_status st = SG_OK;
  for (;;) {
    if (ticket != pool->serving) {
      sg__cond_wait(&pool->changed, &pool->lock);
      continue;
    }
    int got = take(pool, need, persistent, out);
    if (got > 0) break;
    if (got < 0) {
      st = sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory", where);
      break;
    }
    size_t room = pool->o.max_bytes - pool->reserved - pool->growing;
    if (need <= room) {
      size_t slab_bytes = pool->o.slab_bytes < room ? pool->o.slab_bytes : room;
      if ((st = grow(pool, need > slab_bytes ? need : slab_bytes, where))) break;
      continue;
    }
    /* Empty slabs too small for this request may make room for one that
     * is large enough. */
    if (need <= room + empty_slab_bytes(pool)) {
      free_empty_slabs(pool);
      continue;
    }
    /* Only memory that launches in flight hold will come back without the
     * caller doing anything: wait for that, fail for anything else. */
    if (!persistent && pool->transient_blocks > 0 && pool->o.on_exhausted == SG_POOL_WAIT) {
      if (!waited) pool->waits++;
      waited = 1;
      if (!broken) {
        sg__cond_wait(&pool->changed, &pool->lock);
        continue;
      }
      if (sg__cond_timedwait_ns(&pool->changed, &pool->lock, 50u * 1000u * 1000u) == 0) continue;
      sg__mutex_unlock(&pool->lock); /* the check is a CUDA call */
      int dead = broken(broken_ctx);
      sg__mutex_lock(&pool->lock);
      if (!dead) continue;
      st = sg__fail(SG_ERR_CUDA,
                    "%s: waiting for pinned staging memory: the device reported an error, so "
                    "the launches holding that memory will not give it back", where);
      break;
    }
    pool->exhausted++;
    st = sg__fail(SG_ERR_POOL_EXHAUSTED,
                  "%s: the pinned pool cannot provide %zu bytes: cap %zu bytes, %zu in use "
                  "(%zu held by graph-mode executables)%s",
                  where, need, pool->o.max_bytes, pool->in_use, pool->persistent_bytes,
                  !pool->transient_blocks ? ""
                  : persistent ? "; a graph-mode executable takes its rings at creation and "
                                 "does not wait for launches in flight"
                               : "; the pool is set to fail rather than wait");
    break;
  }
  pool->serving++;
  sg__cond_broadcast(&pool->changed);
  sg__mutex_unlock(&pool->lock);
  return st;
}

void sg__pool_release(sg_pinned_pool *pool, const sg__pool_block *block) {
  if (!block->ptr) return;
  const char *p = block->ptr;
  sg__mutex_lock(&pool->lock);
  for (size_t i = 0; i < pool->slab_count; i++) {
    slab *s = pool->slabs[i];
    if (p < s->base || p >= s->base + s->bytes) continue;
    size_t off = (size_t)(p - s->base);
    size_t lo = 0, hi = s->count;
    while (lo < hi) {
      size_t mid = (lo + hi) / 2;
      if (s->blocks[mid].off < off) lo = mid + 1; else hi = mid;
    }
    if (lo < s->count && s->blocks[lo].off == off) {
      block_rec b = s->blocks[lo];
      memmove(&s->blocks[lo], &s->blocks[lo + 1], (s->count - lo - 1) * sizeof *s->blocks);
      s->count--;
      pool->in_use -= b.len;
      if (b.persistent) pool->persistent_bytes -= b.len; else pool->transient_blocks--;
    }
    break;
  }
  sg__cond_broadcast(&pool->changed);
  sg__mutex_unlock(&pool->lock);
}

/* ---- users ------------------------------------------------------------- */

sg_status sg__pool_attach(sg_pinned_pool *pool, unsigned copy_threads, const char *where) {
  sg_status st = sg__workers_ensure(&pool->workers, copy_threads, where);
  if (st) return st;
  sg__mutex_lock(&pool->lock);
  pool->users++;
  sg__mutex_unlock(&pool->lock);
  return SG_OK;
}

void sg__pool_detach(sg_pinned_pool *pool) {
  sg__mutex_lock(&pool->lock);
  pool->users--;
  sg__mutex_unlock(&pool->lock);
}

sg__workers *sg__pool_workers(sg_pinned_pool *pool) { return &pool->workers; }

sg__conductor *sg__pool_conductor(sg_pinned_pool *pool) { return &pool->conductor; }

/* ---- flag records -------------------------------------------------------- */

sg_status sg__pool_flags_take(sg_pinned_pool *pool, const char *where, void **out) {
  sg__mutex_lock(&pool->lock);
  while (!pool->free_flags) {
    /* A new slab, allocated with the lock released (a CUDA call). */
    sg__mutex_unlock(&pool->lock);
    void *base = NULL;
    sg_status st = pool->mem->slab_alloc(pool->o.device, FLAG_SLAB_BYTES, where, &base);
    if (st) return st;
    sg__mutex_lock(&pool->lock);
    void **grown = sg__realloc_array(pool->flag_slabs, pool->flag_slab_count + 1, sizeof *grown);
    if (!grown) {
      sg__mutex_unlock(&pool->lock);
      pool->mem->slab_free(base);
      return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory", where);
    }
    pool->flag_slabs = grown;
    pool->flag_slabs[pool->flag_slab_count++] = base;
    for (size_t off = 0; off < FLAG_SLAB_BYTES; off += SG__POOL_FLAG_BYTES) {
      void **rec = (void **)(void *)((char *)base + off);
      *rec = pool->free_flags;
      pool->free_flags = rec;
    }
  }
  void **rec = pool->free_flags;
  pool->free_flags = *rec;
  sg__mutex_unlock(&pool->lock);
  memset(rec, 0, SG__POOL_FLAG_BYTES);
  *out = rec;
  return SG_OK;
}

void sg__pool_flags_give(sg_pinned_pool *pool, void *flags) {
  if (!flags) return;
  sg__mutex_lock(&pool->lock);
  *(void **)flags = pool->free_flags;
  pool->free_flags = flags;
  sg__mutex_unlock(&pool->lock);
}

const sg__stage_mem *sg__pool_mem(const sg_pinned_pool *pool) { return pool->mem; }

size_t sg__pool_cap(const sg_pinned_pool *pool) { return pool->o.max_bytes; }

/* ---- public API -------------------------------------------------------- */

void sg_pinned_pool_options_init(sg_pinned_pool_options *opts) {
  if (!opts) return;
  memset(opts, 0, sizeof *opts);
  opts->backend = SG_BACKEND_AUTO;
  opts->on_exhausted = SG_POOL_WAIT;
}

static sg_status resolve_options(const sg_pinned_pool_options *in, const char *fn,
                                 sg_pinned_pool_options *o) {
  if (in) *o = *in; else sg_pinned_pool_options_init(o);
  if ((unsigned)o->backend > SG_BACKEND_HOST)
    return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: backend %d is not an sg_backend", fn,
                    (int)o->backend);
  if ((unsigned)o->on_exhausted > SG_POOL_FAIL)
    return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: on_exhausted %d is not an sg_pool_exhausted",
                    fn, (int)o->on_exhausted);
  if (o->device < 0)
    return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: device %d is negative", fn, o->device);
  if (o->max_copy_threads > THREAD_LIMIT)
    return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: max_copy_threads %u is above the limit of %u",
                    fn, o->max_copy_threads, THREAD_LIMIT);
  if (o->backend == SG_BACKEND_AUTO)
    return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: the pool's backend is not resolved", fn);
  if (o->backend == SG_BACKEND_CUDA) {
    int devices = sg__device_count();
    if (devices == 0)
      return sg__fail(SG_ERR_BACKEND_UNAVAILABLE,
                      "%s: CUDA pinned memory was asked for, but no CUDA device is present", fn);
    if (o->device >= devices)
      return sg__fail(SG_ERR_BACKEND_UNAVAILABLE, "%s: device %d asked for; %d device(s) present",
                      fn, o->device, devices);
  }
  if (!o->slab_bytes) o->slab_bytes = DEFAULT_SLAB_BYTES;
  if (!o->max_bytes) o->max_bytes = DEFAULT_MAX_BYTES;
  if (!o->max_copy_threads) o->max_copy_threads = DEFAULT_MAX_THREADS;
  o->slab_bytes = round_up(o->slab_bytes, PAGE);
  o->max_bytes = round_up(o->max_bytes, PAGE);
  if (o->prewarm_bytes > o->max_bytes)
    return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: prewarm_bytes %zu is above max_bytes %zu", fn,
                    o->prewarm_bytes, o->max_bytes);
  return SG_OK;
}

static void pool_free(sg_pinned_pool *pool) {
  sg__conductor_destroy(&pool->conductor);
  for (size_t i = 0; i < pool->slab_count; i++) slab_free(pool, pool->slabs[i]);
  sg__free(pool->slabs);
  for (size_t i = 0; i < pool->flag_slab_count; i++)
    pool->mem->slab_free(pool->flag_slabs[i]);
  sg__free(pool->flag_slabs);
  sg__workers_destroy(&pool->workers);
  sg__cond_destroy(&pool->changed);
  sg__mutex_destroy(&pool->lock);
  sg__free(pool);
}

sg_status sg__pool_new(const sg_pinned_pool_options *opts, const sg__stage_mem *mem,
                       const char *fn, sg_pinned_pool **out) {
  sg_pinned_pool_options o;
  sg_status st = resolve_options(opts, fn, &o);
  if (st) return st;
  sg_pinned_pool *pool = sg__calloc(1, sizeof *pool);
  if (!pool) return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
  pool->o = o;
  pool->mem = mem;
  if (sg__mutex_init(&pool->lock)) {
    sg__free(pool);
    return sg__fail(SG_ERR_SYSTEM, "%s: cannot create a mutex", fn);
  }
  if (sg__cond_init(&pool->changed)) {
    sg__mutex_destroy(&pool->lock);
    sg__free(pool);
    return sg__fail(SG_ERR_SYSTEM, "%s: cannot create a condition variable", fn);
  }
  if ((st = sg__workers_init(&pool->workers, o.max_copy_threads, fn))) {
    sg__cond_destroy(&pool->changed);
    sg__mutex_destroy(&pool->lock);
    sg__free(pool);
    return st;
  }
  if ((st = sg__conductor_init(&pool->conductor, fn))) {
    sg__workers_destroy(&pool->workers);
    sg__cond_destroy(&pool->changed);
    sg__mutex_destroy(&pool->lock);
    sg__free(pool);
    return st;
  }
  sg__mutex_lock(&pool->lock);
  while (!st && pool->reserved < o.prewarm_bytes) {
    size_t left = o.max_bytes - pool->reserved;
    st = grow(pool, o.slab_bytes < left ? o.slab_bytes : left, fn);
  }
  sg__mutex_unlock(&pool->lock);
  if (!st) st = sg__handle_register(pool, SG__HANDLE_POOL, fn);
  if (st) {
    pool_free(pool);
    return st;
  }
  *out = pool;
  return SG_OK;
}

sg_status sg_pinned_pool_destroy(sg_pinned_pool *pool) {
  sg_status st = sg__handle_check(pool, SG__HANDLE_POOL, __func__, "pool");
  if (st) return st;
  if (pool->is_default)
    return sg__fail(SG_ERR_INVALID_ARGUMENT,
                    "%s: the default pool lives as long as the process (sg_pinned_pool_trim gives "
                    "its memory back)", __func__);
  sg__mutex_lock(&pool->lock);
  unsigned users = pool->users;
  sg__mutex_unlock(&pool->lock);
  if (users)
    return sg__fail(SG_ERR_INVALID_ARGUMENT,
                    "%s: %u executable(s) still use the pool; destroy them first", __func__, users);
  sg__handle_unregister(pool);
  pool_free(pool);
  return SG_OK;
}

void sg__pool_mark_default(sg_pinned_pool *pool) { pool->is_default = 1; }

sg_status sg__pool_resolve(sg_pinned_pool *requested, const sg__stage_mem *mem, const char *where,
                           sg_pinned_pool **out) {
  if (!requested) {
    sg_status st = mem->default_pool(out);
    if (st) return sg__fail(st, "%s: creating the default pinned pool: %s", where, sg_last_error());
    return SG_OK;
  }
  sg_status st = sg__handle_check(requested, SG__HANDLE_POOL, where, "staging.pool");
  if (st) return st;
  *out = requested;
  return SG_OK;
}

void sg__pool_trim(sg_pinned_pool *pool) {
  sg__mutex_lock(&pool->lock);
  free_empty_slabs(pool);
  sg__mutex_unlock(&pool->lock);
}

void sg__pool_stats(sg_pinned_pool *p, sg_pinned_pool_stats *stats) {
  memset(stats, 0, sizeof *stats);
  sg__mutex_lock(&p->lock);
  stats->max_bytes = p->o.max_bytes;
  stats->reserved_bytes = p->reserved;
  stats->in_use_bytes = p->in_use;
  stats->peak_in_use_bytes = p->peak;
  stats->persistent_bytes = p->persistent_bytes;
  stats->slab_count = p->slab_count;
  stats->slab_allocations = p->slab_allocs;
  stats->slab_frees = p->slab_frees;
  stats->acquisitions = p->acquisitions;
  stats->waits = p->waits;
  stats->exhausted = p->exhausted;
  stats->users = p->users;
  stats->on_cuda = p->o.backend == SG_BACKEND_CUDA;
  sg__mutex_unlock(&p->lock);
  stats->copy_threads = sg__workers_count(&p->workers);
}
