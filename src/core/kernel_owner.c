/* The registry of owned kernels: (kernel, owner) pairs sorted by kernel
 * handle, under one lock, which also guards every owner's count so that a
 * lookup never revives an owner whose last reference is being dropped. The
 * array is freed when it empties, so that a process with no module holds
 * nothing here (sg_live_allocations). */
#include "core/kernel_owner.h"

#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "core/error.h"
#include "core/sys.h"

typedef struct entry {
  uintptr_t kernel;
  sg__kernel_owner *owner;
} entry;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static entry *entries;
static size_t count, capacity;

/* First index whose kernel is >= k (lock held). */
static size_t lower_bound(uintptr_t k) {
  size_t lo = 0, hi = count;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (entries[mid].kernel < k) lo = mid + 1; else hi = mid;
  }
  return lo;
}

void sg__kernel_owner_init(sg__kernel_owner *owner, void (*release)(sg__kernel_owner *)) {
  owner->refs = 1;
  owner->release = release;
}

sg_status sg__kernel_owner_add(sg__kernel_owner *owner, const void *kernel, const char *fn) {
  uintptr_t k = (uintptr_t)kernel;
  sg__mutex_lock(&lock);
  size_t at = lower_bound(k);
  if (at < count && entries[at].kernel == k) {
    /* A handle is unique to its library while the library is loaded; an
     * entry of another owner is stale only if that owner is gone, and gone
     * owners leave the registry first. */
    entries[at].owner = owner;
    sg__mutex_unlock(&lock);
    return SG_OK;
  }
  if (count == capacity) {
    size_t cap = capacity ? capacity * 2 : 16;
    entry *e = sg__realloc_array(entries, cap, sizeof *e);
    if (!e) {
      sg__mutex_unlock(&lock);
      return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory registering a kernel", fn);
    }
    entries = e;
    capacity = cap;
  }
  memmove(&entries[at + 1], &entries[at], (count - at) * sizeof *entries);
  entries[at] = (entry){k, owner};
  count++;
  sg__mutex_unlock(&lock);
  return SG_OK;
}

sg__kernel_owner *sg__kernel_owner_retain_kernel(const void *kernel) {
  uintptr_t k = (uintptr_t)kernel;
  sg__kernel_owner *owner = NULL;
  sg__mutex_lock(&lock);
  size_t at = lower_bound(k);
  if (at < count && entries[at].kernel == k) {
    owner = entries[at].owner;
    owner->refs++;
  }
  sg__mutex_unlock(&lock);
  return owner;
}

void sg__kernel_owner_retain(sg__kernel_owner *owner) {
  sg__mutex_lock(&lock);
  owner->refs++;
  sg__mutex_unlock(&lock);
}

void sg__kernel_owner_release(sg__kernel_owner *owner) {
  sg__mutex_lock(&lock);
  int last = --owner->refs == 0;
  if (last) {
    size_t kept = 0;
    for (size_t i = 0; i < count; i++)
      if (entries[i].owner != owner) entries[kept++] = entries[i];
    count = kept;
    if (count == 0) {
      sg__free(entries);
      entries = NULL;
      capacity = 0;
    }
  }
  sg__mutex_unlock(&lock);
  if (last) owner->release(owner);
}
