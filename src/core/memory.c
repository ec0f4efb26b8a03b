/* Memory the library allocates for a backend, and classifying pointers.
 *
 * Allocations are kept in an array sorted by address so that any pointer
 * inside one (not only its base) is classified in O(log n). */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/device.h"
#include "core/error.h"
#include "core/memory_table.h"
#include "core/sys.h"

typedef struct allocation {
  uintptr_t base;
  size_t bytes;
  sg_memory_kind kind;
  int on_cuda; /* 1: the CUDA runtime's memory; 0: host memory of the host backend */
  size_t holds; /* nodes of live executables naming the block (node_memory.h) */
  int freed;    /* sg_mem_free was called while held: freed when the last hold goes */
  int device;   /* the device asked for (the host backend's emulated devices) */
} allocation;

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static allocation *table;
static size_t table_count, table_capacity;

/* The bases of the blocks freed last (table_lock held), so that freeing one
 * again is reported as a double free rather than as an unknown pointer. A
 * fixed ring: it allocates nothing, and forgets the oldest. */
#define RECENTLY_FREED 64
static uintptr_t recently_freed[RECENTLY_FREED];
static unsigned recently_freed_next;

static void forget_freed(uintptr_t base) {
  for (unsigned i = 0; i < RECENTLY_FREED; i++)
    if (recently_freed[i] == base) recently_freed[i] = 0;
}

static int was_freed(uintptr_t base) {
  for (unsigned i = 0; i < RECENTLY_FREED; i++)
    if (base && recently_freed[i] == base) return 1;
  return 0;
}

/* Index of the allocation containing p, or -1 (table_lock held). */
static long find_containing(uintptr_t p) {
  size_t lo = 0, hi = table_count;
  while (lo < hi) { /* first allocation whose base is > p */
    size_t mid = (lo + hi) / 2;
    if (table[mid].base <= p) lo = mid + 1; else hi = mid;
  }
  if (lo == 0) return -1;
  const allocation *a = &table[lo - 1];
  return p - a->base < a->bytes ? (long)(lo - 1) : -1;
}

static sg_status table_insert(allocation a) {
  sg__mutex_lock(&table_lock);
  if (table_count == table_capacity) {
    size_t cap = table_capacity ? table_capacity * 2 : 32;
    allocation *t = sg__realloc_array(table, cap, sizeof *t);
    if (!t) {
      sg__mutex_unlock(&table_lock);
      return SG_ERR_OUT_OF_MEMORY;
    }
    table = t;
    table_capacity = cap;
  }
  size_t at = 0;
  while (at < table_count && table[at].base < a.base) at++;
  memmove(&table[at + 1], &table[at], (table_count - at) * sizeof *table);
  table[at] = a;
  forget_freed(a.base); /* the address is a live block again */
  table_count++;
  sg__mutex_unlock(&table_lock);
  return SG_OK;
}

/* Removes entry `at` from the table (table_lock held) and returns it. */
static allocation table_remove(long at) {
  allocation a = table[at];
  recently_freed[recently_freed_next++ % RECENTLY_FREED] = a.base;
  memmove(&table[at], &table[at + 1], (table_count - (size_t)at - 1) * sizeof *table);
  if (--table_count == 0) {
    sg__free(table);
    table = NULL;
    table_capacity = 0;
  }
  return a;
}

/* Gives a removed entry's memory back (table_lock not held: freeing device
 * memory may wait for the device). */
static sg_status release_memory(allocation a) {
  if (a.on_cuda) return sg__device_free(a.kind, (void *)a.base);
  sg__free((void *)a.base);
  return SG_OK;
}

sg_memory_kind sg__memory_classify(const void *ptr) {
  sg__mutex_lock(&table_lock);
  long at = find_containing((uintptr_t)ptr);
  int known = at >= 0;
  sg_memory_kind kind = known ? table[at].kind : SG_MEMORY_HOST_PAGEABLE;
  sg__mutex_unlock(&table_lock);
  if (known) return kind;
  return sg__device_count() > 0 ? sg__device_classify(ptr) : SG_MEMORY_HOST_PAGEABLE;
}

int sg__memory_device(const void *ptr) {
  sg__mutex_lock(&table_lock);
  long at = find_containing((uintptr_t)ptr);
  int device = at >= 0 && table[at].kind == SG_MEMORY_HOST_DEVICE ? table[at].device : -1;
  sg__mutex_unlock(&table_lock);
  return device;
}

sg_memory_kind sg__memory_find(const void *ptr, sg__block *block) {
  *block = (sg__block){0, 0, 0, 0};
  sg__mutex_lock(&table_lock);
  long at = find_containing((uintptr_t)ptr);
  if (at >= 0) {
    *block = (sg__block){table[at].base, table[at].bytes, 0, table[at].freed};
    sg_memory_kind kind = table[at].kind;
    sg__mutex_unlock(&table_lock);
    return kind;
  }
  sg__mutex_unlock(&table_lock);
  if (sg__device_count() == 0) return SG_MEMORY_HOST_PAGEABLE;
  sg_memory_kind kind = sg__device_classify(ptr);
  uintptr_t base;
  size_t bytes;
  if ((kind == SG_MEMORY_DEVICE || kind == SG_MEMORY_MANAGED) &&
      sg__device_range(ptr, &base, &bytes) && bytes > 0)
    *block = (sg__block){base, bytes, 1, 0};
  return kind;
}

int sg__memory_hold(const void *ptr, size_t bytes, sg__block *block) {
  *block = (sg__block){0, 0, 0, 0};
  sg__mutex_lock(&table_lock);
  long at = find_containing((uintptr_t)ptr);
  int held = 0;
  if (at >= 0) {
    allocation *a = &table[at];
    *block = (sg__block){a->base, a->bytes, 0, a->freed};
    held = !a->freed && bytes <= a->bytes - ((uintptr_t)ptr - a->base) ? 1 : -1;
    if (held == 1) a->holds++;
  }
  sg__mutex_unlock(&table_lock);
  return held;
}

void sg__memory_release(const void *ptr) {
  sg__mutex_lock(&table_lock);
  long at = find_containing((uintptr_t)ptr);
  if (at < 0 || table[at].holds == 0) {
    sg__mutex_unlock(&table_lock);
    return;
  }
  if (--table[at].holds > 0 || !table[at].freed) {
    sg__mutex_unlock(&table_lock);
    return;
  }
  allocation a = table_remove(at); /* the deferred sg_mem_free */
  sg__mutex_unlock(&table_lock);
  release_memory(a); /* a failure has no caller left to report to */
}

const char *sg__memory_kind_text(sg_memory_kind kind) {
  switch (kind) {
    case SG_MEMORY_HOST_PAGEABLE: return "pageable host memory";
    case SG_MEMORY_HOST_PINNED: return "pinned host memory";
    case SG_MEMORY_DEVICE: return "device memory";
    case SG_MEMORY_MANAGED: return "managed memory";
    case SG_MEMORY_HOST_DEVICE: return "host-backend device memory";
  }
  return "unknown memory";
}

/* What SG_BACKEND asks for: SG_BACKEND_AUTO when unset, empty or "auto";
 * -1 for a value that names no backend. */
static int backend_from_environment(const char **text) {
  const char *v = getenv("SG_BACKEND");
  *text = v;
  if (!v || !*v || !strcmp(v, "auto")) return SG_BACKEND_AUTO;
  if (!strcmp(v, "host")) return SG_BACKEND_HOST;
  if (!strcmp(v, "cuda")) return SG_BACKEND_CUDA;
  return -1;
}

sg_backend sg_backend_resolve(sg_backend requested) {
  if (requested != SG_BACKEND_AUTO) return requested;
  /* A request the environment makes that cannot be honoured answers
   * SG_BACKEND_AUTO with the message set: a program that passes the answer
   * on is refused, with that message, by its next call that takes it,
   * instead of silently running on another backend. */
  sg_backend out;
  if (sg__backend_resolve(SG_BACKEND_AUTO, __func__, &out)) return SG_BACKEND_AUTO;
  return out;
}

sg_status sg__backend_resolve(sg_backend requested, const char *fn, sg_backend *out) {
  *out = requested;
  if (requested != SG_BACKEND_AUTO) return SG_OK;
  const char *text;
  int forced = backend_from_environment(&text);
  if (forced < 0)
    return sg__fail(SG_ERR_INVALID_ARGUMENT,
                    "%s: the environment variable SG_BACKEND is \"%.40s\", which names no "
                    "backend; set it to \"host\", \"cuda\" or \"auto\", or unset it",
                    fn, text);
  int devices = sg__device_count();
  if (forced == SG_BACKEND_CUDA && devices == 0)
    return sg__fail(SG_ERR_BACKEND_UNAVAILABLE,
                    "%s: SG_BACKEND=cuda asks for the CUDA backend, but no CUDA device is "
                    "usable here (none present, or a build without CUDA); unset it to fall "
                    "back to the host backend", fn);
  if (forced == SG_BACKEND_HOST) *out = SG_BACKEND_HOST;
  else *out = devices > 0 ? SG_BACKEND_CUDA : SG_BACKEND_HOST;
  return SG_OK;
}

int sg_cuda_device_count(void) { return sg__device_count(); }

sg_status sg_mem_alloc(sg_backend backend, sg_memory_kind kind, int device, size_t bytes,
                       void **out) {
  if (!out) return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: out is NULL", __func__);
  *out = NULL;
  if (bytes == 0) return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: bytes is 0", __func__);
  if (kind != SG_MEMORY_DEVICE && kind != SG_MEMORY_HOST_PINNED)
    return sg__fail(SG_ERR_INVALID_ARGUMENT,
                    "%s: kind must be SG_MEMORY_DEVICE or SG_MEMORY_HOST_PINNED", __func__);
  if ((unsigned)backend > SG_BACKEND_HOST)
    return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: backend %d is not an sg_backend", __func__,
                    (int)backend);
  sg_status resolved = sg__backend_resolve(backend, __func__, &backend);
  if (resolved) return resolved;
  allocation a = {0, bytes, kind, backend == SG_BACKEND_CUDA, 0, 0, device};
  void *p = NULL;
  if (a.on_cuda) {
    sg_status st = sg__device_alloc(kind, device, bytes, &p);
    if (st) return st;
  } else {
    /* Host-backend memory: 256-byte aligned like cudaMalloc's, and tagged so
     * copy directions are checked as they would be on the GPU. */
    p = sg__aligned_alloc(256, bytes);
    if (!p) return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory for %zu bytes", __func__, bytes);
    if (kind == SG_MEMORY_DEVICE) a.kind = SG_MEMORY_HOST_DEVICE;
  }
  a.base = (uintptr_t)p;
  if (table_insert(a)) {
    if (a.on_cuda) sg__device_free(kind, p); else sg__free(p);
    return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory recording the allocation", __func__);
  }
  *out = p;
  return SG_OK;
}

sg_status sg_mem_free(void *ptr) {
  if (!ptr) return SG_OK;
  sg__mutex_lock(&table_lock);
  long at = find_containing((uintptr_t)ptr);
  if (at < 0 && was_freed((uintptr_t)ptr)) {
    sg__mutex_unlock(&table_lock);
    return sg__fail(SG_ERR_INVALID_ARGUMENT,
                    "%s: %p was already freed by sg_mem_free (each block is freed once)",
                    __func__, ptr);
  }
  if (at < 0 || table[at].base != (uintptr_t)ptr) {
    sg__mutex_unlock(&table_lock);
    return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: %p was not returned by sg_mem_alloc", __func__,
                    ptr);
  }
  if (table[at].freed) {
    sg__mutex_unlock(&table_lock);
    return sg__fail(SG_ERR_INVALID_ARGUMENT,
                    "%s: %p was already freed by sg_mem_free (its release waits for the "
                    "executables whose nodes name it)", __func__, ptr);
  }
  if (table[at].holds) {
    /* Deferred: nodes of live executables name the block, and a launch may
     * still touch it. The last of them to let go frees it. */
    table[at].freed = 1;
    sg__mutex_unlock(&table_lock);
    return SG_OK;
  }
  allocation a = table_remove(at);
  sg__mutex_unlock(&table_lock);
  return release_memory(a);
}

sg_status sg_mem_kind(const void *ptr, sg_memory_kind *kind) {
  if (!ptr || !kind)
    return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: %s is NULL", __func__, ptr ? "kind" : "ptr");
  *kind = sg__memory_classify(ptr);
  return SG_OK;
}

sg_status sg_mem_copy(void *dst, const void *src, size_t bytes) {
  if (!dst || !src)
    return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: %s is NULL", __func__, dst ? "src" : "dst");
  if (bytes == 0) return SG_OK;
  sg_memory_kind d = sg__memory_classify(dst), s = sg__memory_classify(src);
  if (d == SG_MEMORY_DEVICE || s == SG_MEMORY_DEVICE || d == SG_MEMORY_MANAGED ||
      s == SG_MEMORY_MANAGED)
    return sg__device_copy(dst, src, bytes);
  memmove(dst, src, bytes);
  return SG_OK;
}
