#define _POSIX_C_SOURCE 200809L /* nanosleep */
/* The registration cache (regcache.h): one per backend's memory table
 * (stage_mem.h; CUDA, and the host backend's emulation), each an unsorted
 * array of entries under one lock. Caches hold few entries, so linear scans
 * are fine. */
#include "staging/regcache.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/checked.h"
#include "core/error.h"
#include "core/sys.h"
#include "staging/policy.h"
#include "staging/stage_mem.h"
#include "streamgraph/staging.h"

#define PAGE ((uintptr_t)4096)
#define DEFAULT_LIMIT ((size_t)2 << 30)

typedef enum entry_state {
  PENDING,        /* being registered (lock released; maybe by the background thread) */
  REGISTERED,
  UNREGISTERING,  /* being unregistered (lock released) */
  EVICTED,        /* unregistered (or its background registration cancelled); kept while
                     binders still point at it */
  REFUSED         /* the driver refused it in the background; kept while binders point at it */
} entry_state;

typedef struct cache cache;
typedef struct entry entry;

struct entry {
  cache *owner;
  uintptr_t base;
  size_t len;
  entry_state state;
  unsigned holds;
  sg__reg_binding *bindings; /* list */
  uint64_t last_use;
  /* The entry is pinned in pieces of `piece` bytes from `base` (`len`: one
   * piece), one pin call each (sg__route_reg_piece); `done` bytes of it are
   * pinned so far. A copy through it is one DMA per piece it spans. */
  size_t piece, done;
  /* A registration in the background: its thread, joined once it is done
   * (before the entry can go), the device to pin for, and the message
   * prefix of its failure. `cancel`: nobody is bound any more; the thread
   * stops after the piece under way and lets go of the pieces made. */
  int cancel;
  int registrar_live;
  pthread_t registrar;
  int device;
  char where[128];
};

struct sg__reg_binding {
  entry *e;
  void *fence;        /* CUDA: an event recorded after each copy; NULL on the host */
  int enqueueing;     /* between use_begin and use_end */
  int held;
  sg__reg_binding *next;
};

/* Copies handed to the driver as pageable memory right now (sg__reg_direct_*):
 * a registration overlapping one waits until it is done. A few at a time
 * (one per launching thread): a fixed table, so that a launch allocates
 * nothing. */
#define MAX_DIRECT 64

typedef struct direct_range {
  uintptr_t lo, hi;
} direct_range;

struct cache {
  pthread_mutex_t lock;
  pthread_cond_t direct_done; /* a direct copy ended */
  pthread_cond_t settled;     /* a background registration ended */
  _Atomic(const sg__stage_mem *) mem; /* whose cache this is; NULL: a free slot */
  entry **entries;
  size_t count, cap;
  size_t registered_bytes, pending_bytes;
  uint64_t tick;
  sg_registration_stats stats;
  direct_range direct[MAX_DIRECT];
  unsigned direct_count;
  /* Copies being enqueued right now (sg__reg_enqueue_begin/end): a
   * background registration pins its next piece only when none is, so
   * that a launch's CUDA calls do not queue up behind cudaHostRegister. */
  atomic_uint enqueueing;
};

/* One slot per memory table; a slot is taken by the first table to ask and
 * kept for the life of the process (there is one table per backend). */
#define CACHES 4
#define CACHE_INIT \
  {.lock = PTHREAD_MUTEX_INITIALIZER, .direct_done = PTHREAD_COND_INITIALIZER, \
   .settled = PTHREAD_COND_INITIALIZER}
static cache caches[CACHES] = {CACHE_INIT, CACHE_INIT, CACHE_INIT, CACHE_INIT};

/* The cache of `mem`: found, or (`make`) taken from a free slot; NULL when
 * `mem` has none yet and `make` is 0. */
static cache *cache_of(const sg__stage_mem *mem, int make) {
  for (int i = 0; mem && i < CACHES; i++) {
    const sg__stage_mem *owner = atomic_load(&caches[i].mem);
    if (owner == mem) return &caches[i];
    if (owner == NULL && make) {
      const sg__stage_mem *expected = NULL;
      if (atomic_compare_exchange_strong(&caches[i].mem, &expected, mem) || expected == mem)
        return &caches[i];
    }
  }
  return NULL;
}

static const sg__stage_mem *mem_of(const cache *c) { return atomic_load(&c->mem); }

/* Unpins the first `done` bytes of `e`, piece by piece (lock released:
 * unpinning may wait for the device). */
static void unpin_pieces(const cache *c, const entry *e, size_t done) {
  for (size_t at = 0; at < done; at += e->piece) mem_of(c)->unpin((void *)(e->base + at));
}

/* Fences: a NULL fence stands for "nothing to wait for" (stage_mem.h). */
static int fence_busy(const cache *c, void *fence) {
  return fence ? mem_of(c)->fence_busy(fence) : 0;
}

static void fence_free(const cache *c, void *fence) {
  if (fence) mem_of(c)->fence_free(fence);
}

/* 1 if [lo, hi) shares a byte with an entry that is or may become
 * registered: anything but EVICTED or REFUSED (lock held). */
static int touches_entry(const cache *c, uintptr_t lo, uintptr_t hi) {
  for (size_t i = 0; i < c->count; i++) {
    const entry *e = c->entries[i];
    if (e->state != EVICTED && e->state != REFUSED && e->base < hi && lo < e->base + e->len)
      return 1;
  }
  return 0;
}

/* 1 if [lo, hi) overlaps a direct copy in progress (lock held). */
static int touches_direct(const cache *c, uintptr_t lo, uintptr_t hi) {
  for (unsigned i = 0; i < c->direct_count; i++)
    if (c->direct[i].lo < hi && lo < c->direct[i].hi) return 1;
  return 0;
}

/* Joins the background registration of `e` once it is over (lock held):
 * its thread touches the entry no more after setting its state, so the
 * join returns at once. */
static void reap(entry *e) {
  if (!e->registrar_live || e->state == PENDING) return;
  sg__thread_join(e->registrar);
  e->registrar_live = 0;
}

/* Waits until `e` is not being registered (lock held), and reaps it. */
static void settle(cache *c, entry *e) {
  while (e->state == PENDING) sg__cond_wait(&c->settled, &c->lock);
  reap(e);
}
static pthread_mutex_t limit_lock = PTHREAD_MUTEX_INITIALIZER;
static size_t limit_bytes = DEFAULT_LIMIT;

static size_t current_limit(void) {
  sg__mutex_lock(&limit_lock);
  size_t n = limit_bytes;
  sg__mutex_unlock(&limit_lock);
  return n;
}

/* Removes and frees `e` (lock held; not PENDING). */
static void entry_remove(cache *c, entry *e) {
  reap(e);
  for (size_t i = 0; i < c->count; i++) {
    if (c->entries[i] != e) continue;
    c->entries[i] = c->entries[--c->count];
    break;
  }
  if (c->count == 0) {
    sg__free(c->entries);
    c->entries = NULL;
    c->cap = 0;
  }
  sg__free(e);
}

/* 1 if a copy through `e` may be in flight or being enqueued (lock held). */
static int entry_busy(const entry *e) {
  for (const sg__reg_binding *b = e->bindings; b; b = b->next)
    if (b->enqueueing || fence_busy(e->owner, b->fence)) return 1;
  return 0;
}

/* The idle registered entry used least recently, or NULL (lock held). */
static entry *eviction_victim(cache *c) {
  entry *victim = NULL;
  for (size_t i = 0; i < c->count; i++) {
    entry *e = c->entries[i];
    if (e->state != REGISTERED || e->holds || (victim && e->last_use >= victim->last_use))
      continue;
    if (!entry_busy(e)) victim = e;
  }
  return victim;
}

/* Unregisters `e`, releasing the lock meanwhile (held on entry and on
 * return). `e` is idle: nothing can start using it, since use_begin wants
 * REGISTERED. Frees it when nobody is bound any more. */
static void unregister(cache *c, entry *e, int eviction) {
  reap(e);
  e->state = UNREGISTERING;
  c->registered_bytes -= e->len;
  sg__mutex_unlock(&c->lock);
  unpin_pieces(c, e, e->len);
  sg__mutex_lock(&c->lock);
  c->stats.unregistrations++;
  c->stats.evictions += eviction != 0;
  if (!e->bindings) entry_remove(c, e); else e->state = EVICTED;
}

/* 1 if [lo, hi) lies in a registered entry (takes the lock). */
static int covers_locked(cache *c, uintptr_t lo, uintptr_t hi) {
  int found = 0;
  sg__mutex_lock(&c->lock);
  for (size_t i = 0; i < c->count && !found; i++) {
    entry *e = c->entries[i];
    found = e->state == REGISTERED && e->base <= lo && hi <= e->base + e->len;
  }
  sg__mutex_unlock(&c->lock);
  return found;
}

static sg_status binding_new(cache *c, entry *e, const char *where, sg__reg_binding **out) {
  sg__reg_binding *b = sg__calloc(1, sizeof *b);
  if (!b) return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory", where);
  sg_status st = mem_of(c)->fence_new(where, &b->fence);
  if (st) {
    sg__free(b);
    return st;
  }
  b->e = e;
  *out = b;
  return SG_OK;
}

/* Links `b` to `e` (lock held). */
static void attach(cache *c, entry *e, sg__reg_binding *b) {
  b->e = e;
  b->next = e->bindings;
  e->bindings = b;
  e->last_use = ++c->tick;
}

/* How a bind may register a buffer not registered yet. */
typedef enum reg_mode {
  EXISTING = 0,  /* only bind to a registration that exists */
  NOW = 1,       /* register it now, on the calling thread */
  BACKGROUND = 2 /* register it on a thread of its own; the binding is PENDING until then */
} reg_mode;

/* Marks `e` registered, refused or (background, nobody bound any more)
 * cancelled (lock held). */
static void registered(cache *c, entry *e, sg_status st, int cancelled) {
  c->pending_bytes -= e->len;
  e->cancel = 0;
  if (cancelled) {
    c->stats.cancellations++;
    e->state = EVICTED; /* its pieces are unpinned; whoever joined meanwhile binds again */
  } else if (st) {
    /* The driver refused (memory it cannot pin, say): not an error of the
     * copy, which is staged instead. */
    c->stats.refusals++;
    c->stats.pin_failures++;
    e->state = REFUSED;
  } else {
    e->state = REGISTERED;
    c->registered_bytes += e->len;
    c->stats.registrations++;
  }
  sg__cond_broadcast(&c->settled);
}

/* How long a background registration waits for a moment when no copy is
 * being enqueued before it pins its next piece anyway (so that it is not
 * starved by launches back to back), and how often it looks. */
#define QUIET_WAIT_NS 10000000u
#define QUIET_POLL_NS 100000u

/* Waits, up to QUIET_WAIT_NS, until no copy of the cache is being enqueued
 * (lock held; released while it sleeps). */
static void wait_quiet(cache *c, const entry *e) {
  for (uint64_t waited = 0; atomic_load(&c->enqueueing) && !e->cancel && waited < QUIET_WAIT_NS;
       waited += QUIET_POLL_NS) {
    sg__mutex_unlock(&c->lock);
    struct timespec ts = {0, QUIET_POLL_NS};
    nanosleep(&ts, NULL);
    sg__mutex_lock(&c->lock);
  }
}

/* The background registration of `e`: piece by piece, each when no copy is
 * being enqueued. A piece refused, or nobody bound any more (cancel), ends
 * it: the pieces made are unpinned (none was ever used: a copy goes through
 * the entry only once it is REGISTERED). */
static void *registrar_main(void *arg) {
  entry *e = arg;
  cache *c = e->owner;
  sg_status st = SG_OK;
  sg__mutex_lock(&c->lock);
  while (e->done < e->len && !e->cancel) {
    wait_quiet(c, e);
    if (e->cancel) break;
    const uintptr_t at = e->base + e->done;
    const size_t n = e->len - e->done < e->piece ? e->len - e->done : e->piece;
    sg__mutex_unlock(&c->lock);
    st = mem_of(c)->pin(e->device, (void *)at, n, e->where);
    sg__mutex_lock(&c->lock);
    if (st) break;
    e->done += n;
  }
  const int cancelled = !st && e->done < e->len;
  if (e->done < e->len) {
    const size_t done = e->done;
    sg__mutex_unlock(&c->lock);
    unpin_pieces(c, e, done);
    sg__mutex_lock(&c->lock);
    e->done = 0;
  }
  registered(c, e, st, cancelled);
  sg__mutex_unlock(&c->lock);
  return NULL;
}

static sg_status bind(const sg__stage_mem *mem, int device, const void *ptr, size_t bytes,
                      reg_mode mode, int pieces_ok, const char *where, sg__reg_binding **out) {
  *out = NULL;
  cache *c = cache_of(mem, 1);
  if (!c)
    return sg__fail(SG_ERR_UNSUPPORTED, "%s: no registration cache is left for the %s backend",
                    where, mem->name);
  uintptr_t lo = (uintptr_t)ptr & ~(PAGE - 1), end, hi;
  /* A range whose page-rounded end does not fit cannot be registered. */
  if (sg__range_end(ptr, bytes, &end) || __builtin_add_overflow(end, PAGE - 1, &hi)) return SG_OK;
  hi &= ~(PAGE - 1);
  size_t len = (size_t)(hi - lo);
  /* Most launches that may not register find nothing to bind to: say so
   * without making a binding (its fence is a CUDA event). */
  if (mode == EXISTING && !covers_locked(c, lo, hi)) return SG_OK;
  /* Made before taking the lock: creating an event is a CUDA call. */
  sg__reg_binding *b = NULL;
  sg_status st = binding_new(c, NULL, where, &b);
  if (st) return st;
  sg__mutex_lock(&c->lock);
  for (;;) {
    int conflict = 0;
    for (size_t i = 0; i < c->count; i++) {
      entry *e = c->entries[i];
      if (e->base >= hi || e->base + e->len <= lo || e->state == EVICTED || e->state == REFUSED)
        continue;
      /* A registration in pieces serves only binders that copy piece by
       * piece (per launch); a graph's memcpy node is one DMA. */
      if ((e->state == REGISTERED || (e->state == PENDING && mode == BACKGROUND)) &&
          e->base <= lo && hi <= e->base + e->len && (pieces_ok || e->piece == e->len)) {
        attach(c, e, b); /* a pending one: this binder stages until it is done */
        e->cancel = 0;   /* and it is needed again, should its last binder be letting go */
        sg__mutex_unlock(&c->lock);
        *out = b;
        return SG_OK;
      }
      conflict = 1; /* CUDA refuses to pin a range overlapping a pinned one */
    }
    if (mode == EXISTING || conflict || len > current_limit()) {
      c->stats.refusals += mode != EXISTING;
      goto refused;
    }
    /* The driver refuses a copy over a range that is partly registered:
     * let copies handed to it as pageable memory finish first (they are
     * short; none of them waits for this thread). Then look again. */
    if (touches_direct(c, lo, hi)) {
      sg__cond_wait(&c->direct_done, &c->lock);
      continue;
    }
    if (c->registered_bytes + c->pending_bytes + len <= current_limit()) break;
    entry *victim = eviction_victim(c);
    if (!victim) {
      c->stats.refusals++;
      goto refused;
    }
    unregister(c, victim, 1); /* then look again: the lock was released */
  }
  entry *e = sg__calloc(1, sizeof *e);
  if (e && c->count == c->cap) {
    size_t cap = c->cap ? c->cap * 2 : 16;
    entry **t = sg__realloc_array(c->entries, cap, sizeof *t);
    if (t) {
      c->entries = t;
      c->cap = cap;
    } else {
      sg__free(e);
      e = NULL;
    }
  }
  if (!e) {
    sg__mutex_unlock(&c->lock);
    fence_free(c, b->fence);
    sg__free(b);
    return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory", where);
  }
  e->owner = c;
  e->base = lo;
  e->len = len;
  e->state = PENDING;
  e->device = device;
  e->piece = mode == BACKGROUND ? sg__route_reg_piece(len) : len;
  snprintf(e->where, sizeof e->where, "%s", where);
  attach(c, e, b);
  c->entries[c->count++] = e;
  c->pending_bytes += len;
  if (mode == BACKGROUND && !sg__thread_create(&e->registrar, registrar_main, e)) {
    e->registrar_live = 1; /* it sets the state; the binder stages meanwhile */
    sg__mutex_unlock(&c->lock);
    *out = b;
    return SG_OK;
  }
  /* NOW, or no thread to be had: on this thread, in one piece. */
  e->piece = len;
  sg__mutex_unlock(&c->lock);
  st = mem->pin(mode == BACKGROUND ? device : -1, (void *)lo, len, where);
  sg__mutex_lock(&c->lock);
  if (!st) e->done = len;
  registered(c, e, st, 0);
  if (st) {
    /* Refused: this binder lets go (background binders that joined the
     * pending entry meanwhile keep it, refused, until they do). */
    sg__mutex_unlock(&c->lock);
    sg__reg_unbind(b);
    return SG_OK;
  }
  sg__mutex_unlock(&c->lock);
  *out = b;
  return SG_OK;

refused:
  sg__mutex_unlock(&c->lock);
  fence_free(c, b->fence);
  sg__free(b);
  return SG_OK;
}

sg_status sg__reg_bind(const sg__stage_mem *mem, const void *ptr, size_t bytes, int may_register,
                       const char *where, sg__reg_binding **out) {
  return bind(mem, -1, ptr, bytes, may_register ? NOW : EXISTING, 0, where, out);
}

sg_status sg__reg_bind_pieces(const sg__stage_mem *mem, const void *ptr, size_t bytes,
                              int may_register, const char *where, sg__reg_binding **out) {
  return bind(mem, -1, ptr, bytes, may_register ? NOW : EXISTING, 1, where, out);
}

sg_status sg__reg_bind_background(const sg__stage_mem *mem, int device, const void *ptr,
                                  size_t bytes, const char *where, sg__reg_binding **out) {
  return bind(mem, device, ptr, bytes, BACKGROUND, 1, where, out);
}

void sg__reg_binding_pieces(const sg__reg_binding *b, uintptr_t *base, size_t *piece) {
  /* base and piece never change once the entry is made */
  *base = b->e->base;
  *piece = b->e->piece;
}

void sg__reg_enqueue_begin(const sg__stage_mem *mem) {
  cache *c = cache_of(mem, 1);
  if (c) atomic_fetch_add(&c->enqueueing, 1);
}

void sg__reg_enqueue_end(const sg__stage_mem *mem) {
  cache *c = cache_of(mem, 1);
  if (c) atomic_fetch_sub(&c->enqueueing, 1);
}

int sg__reg_pending(sg__reg_binding *b) {
  cache *c = b->e->owner;
  sg__mutex_lock(&c->lock);
  int pending = b->e->state == PENDING;
  sg__mutex_unlock(&c->lock);
  return pending;
}

void sg__reg_wait_pending(const sg__stage_mem *mem) {
  cache *c = cache_of(mem, 0);
  if (!c) return;
  sg__mutex_lock(&c->lock);
  for (size_t i = 0; i < c->count; i++) {
    if (c->entries[i]->state != PENDING) continue;
    sg__cond_wait(&c->settled, &c->lock);
    i = (size_t)-1; /* the table may have changed: look again from the start */
  }
  sg__mutex_unlock(&c->lock);
}

int sg__reg_refused(sg__reg_binding *b) {
  cache *c = b->e->owner;
  sg__mutex_lock(&c->lock);
  int refused = b->e->state == REFUSED;
  sg__mutex_unlock(&c->lock);
  return refused;
}

void sg__reg_hold(sg__reg_binding *b) {
  cache *c = b->e->owner;
  sg__mutex_lock(&c->lock);
  if (!b->held) b->e->holds++; /* once per binding: unbind gives one back */
  b->held = 1;
  sg__mutex_unlock(&c->lock);
}

void sg__reg_unbind(sg__reg_binding *b) {
  /* While still linked, the pending fence keeps the entry from eviction;
   * waiting for it without the lock lets everyone else go on. */
  entry *e = b->e;
  cache *c = e->owner;
  if (b->fence) mem_of(c)->fence_wait(b->fence);
  sg__mutex_lock(&c->lock);
  for (sg__reg_binding **link = &e->bindings; *link; link = &(*link)->next) {
    if (*link != b) continue;
    *link = b->next;
    break;
  }
  if (b->held) e->holds--;
  if (!e->bindings && e->state == PENDING) {
    /* The last binder goes while the buffer is being registered: a
     * background registration stops after the piece under way (one made on
     * a binder's thread cannot be: that binder is still bound, so this is
     * never it). Its end is waited for, so that the buffer is left as it
     * was found before this returns. Someone may bind again meanwhile. */
    e->cancel = e->registrar_live;
    settle(c, e);
  }
  reap(e);
  if (!e->bindings) {
    if (e->state == REGISTERED) unregister(c, e, 0);
    else if (e->state == EVICTED || e->state == REFUSED) entry_remove(c, e);
    /* UNREGISTERING: the eviction under way frees it */
  }
  sg__mutex_unlock(&c->lock);
  fence_free(c, b->fence);
  sg__free(b);
}

int sg__reg_use_begin(sg__reg_binding *b) {
  cache *c = b->e->owner;
  sg__mutex_lock(&c->lock);
  int ok = b->e->state == REGISTERED;
  reap(b->e);
  if (ok) {
    b->enqueueing = 1;
    b->e->last_use = ++c->tick;
    c->stats.hits++;
  }
  sg__mutex_unlock(&c->lock);
  return ok;
}

sg_status sg__reg_use_end(sg__reg_binding *b, void *fence_stream, const char *where) {
  /* Recorded before the binding stops enqueueing, so that the entry is
   * never seen idle while the copy is in flight. */
  cache *c = b->e->owner;
  sg_status st = fence_stream && b->fence
                     ? mem_of(c)->fence_record(b->fence, fence_stream, where)
                     : SG_OK;
  sg__mutex_lock(&c->lock);
  b->enqueueing = 0;
  sg__mutex_unlock(&c->lock);
  return st;
}

int sg__reg_covers(const sg__stage_mem *mem, const void *ptr, size_t bytes) {
  cache *c = cache_of(mem, 0);
  uintptr_t end;
  if (!c || sg__range_end(ptr, bytes, &end)) return 0;
  return covers_locked(c, (uintptr_t)ptr, end);
}

int sg__reg_touches(const sg__stage_mem *mem, const void *ptr, size_t bytes) {
  cache *c = cache_of(mem, 0);
  if (!c) return 0;
  uintptr_t end;
  if (sg__range_end(ptr, bytes, &end)) end = UINTPTR_MAX;
  sg__mutex_lock(&c->lock);
  int found = touches_entry(c, (uintptr_t)ptr, end);
  sg__mutex_unlock(&c->lock);
  return found;
}

int sg__reg_direct_begin(const sg__stage_mem *mem, const void *ptr, size_t bytes) {
  cache *c = cache_of(mem, 1);
  uintptr_t end;
  if (!c || sg__range_end(ptr, bytes, &end)) return 0;
  sg__mutex_lock(&c->lock);
  int ok = c->direct_count < MAX_DIRECT && !touches_entry(c, (uintptr_t)ptr, end);
  if (ok) c->direct[c->direct_count++] = (direct_range){(uintptr_t)ptr, end};
  sg__mutex_unlock(&c->lock);
  return ok;
}

void sg__reg_direct_end(const sg__stage_mem *mem, const void *ptr, size_t bytes) {
  cache *c = cache_of(mem, 0);
  uintptr_t lo = (uintptr_t)ptr, end;
  if (!c || sg__range_end(ptr, bytes, &end)) return;
  sg__mutex_lock(&c->lock);
  for (unsigned i = 0; i < c->direct_count; i++) {
    if (c->direct[i].lo != lo || c->direct[i].hi != end) continue;
    c->direct[i] = c->direct[--c->direct_count];
    break;
  }
  sg__cond_broadcast(&c->direct_done);
  sg__mutex_unlock(&c->lock);
}

int sg__reg_binding_covers(const sg__reg_binding *b, const void *ptr, size_t bytes) {
  uintptr_t end;
  if (!b || sg__range_end(ptr, bytes, &end)) return 0;
  cache *c = b->e->owner;
  sg__mutex_lock(&c->lock);
  const entry *e = b->e;
  int ok = e->state == REGISTERED && e->base <= (uintptr_t)ptr && end <= e->base + e->len;
  sg__mutex_unlock(&c->lock);
  return ok;
}

/* ---- public API -------------------------------------------------------- */

void sg__reg_stats(const sg__stage_mem *mem, sg_registration_stats *stats) {
  cache *c = mem ? cache_of(mem, 0) : NULL;
  size_t limit = current_limit();
  if (!c) { /* nothing was ever registered for that backend */
    memset(stats, 0, sizeof *stats);
    stats->limit_bytes = limit;
    return;
  }
  sg__mutex_lock(&c->lock);
  *stats = c->stats;
  stats->limit_bytes = limit;
  stats->registered_bytes = c->registered_bytes;
  stats->buffers = 0;
  for (size_t i = 0; i < c->count; i++) stats->buffers += c->entries[i]->state == REGISTERED;
  sg__mutex_unlock(&c->lock);
}

sg_status sg_registration_set_limit(size_t max_bytes) {
  sg__mutex_lock(&limit_lock);
  limit_bytes = max_bytes;
  sg__mutex_unlock(&limit_lock);
  for (int i = 0; i < CACHES; i++) {
    cache *c = &caches[i];
    sg__mutex_lock(&c->lock);
    entry *victim;
    while (c->registered_bytes > max_bytes && (victim = eviction_victim(c)))
      unregister(c, victim, 1);
    sg__mutex_unlock(&c->lock);
  }
  return SG_OK;
}
