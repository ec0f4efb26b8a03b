/* The registry of live handles: an open-addressing hash set keyed by address
 * (linear probing, backward-shift deletion), guarded by one mutex; and, in
 * front of it, each thread's last successful check for calls that only look
 * a handle up. A call that enters an object finds it and marks it in use
 * under the mutex (sg__handle_enter), and a destruction marks it and takes
 * it out under the mutex too (sg__handle_enter_last): an object is freed
 * only once it is out of the registry and no call is inside, so a call
 * racing the destruction either came first (and the destruction answers
 * SG_ERR_BUSY) or finds no handle. */
#include "core/handles.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "core/error.h"
#include "core/in_use.h"
#include "core/sys.h"

typedef struct slot {
  const void *handle; /* NULL: empty */
  sg__handle_type type;
} slot;

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static slot *slots;
static size_t capacity; /* a power of two, or 0 */
static size_t used;

/* Every call checks its handle, and a stream of sg_exec_set_* calls (one
 * per node, a few hundred nanoseconds each in the driver) paid a lock and
 * unlock of the registry for it: a measurable share of the update path.
 * So each thread remembers the last handle it found live, with the
 * registry's epoch at that moment. The epoch moves (under the lock) at
 * every unregistration, before the object can be freed; while it has not
 * moved, nothing was unregistered, so the remembered handle is still live
 * with its type (registration never changes an entry). A check racing a
 * destruction on another thread is the caller's race with or without the
 * lock. */
static atomic_ulong epoch;
static _Thread_local struct {
  const void *handle;
  sg__handle_type type;
  unsigned long epoch;
} last_live;

static size_t home_of(const void *handle, size_t cap) {
  uint64_t h = (uint64_t)(uintptr_t)handle;
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  return (size_t)h & (cap - 1);
}

static void insert(slot *table, size_t cap, const void *handle, sg__handle_type type) {
  size_t i = home_of(handle, cap);
  while (table[i].handle) i = (i + 1) & (cap - 1);
  table[i].handle = handle;
  table[i].type = type;
}

static int grow(void) {
  size_t new_cap = capacity ? capacity * 2 : 64;
  slot *table = sg__calloc(new_cap, sizeof *table);
  if (!table) return 0;
  for (size_t i = 0; i < capacity; i++)
    if (slots[i].handle) insert(table, new_cap, slots[i].handle, slots[i].type);
  sg__free(slots);
  slots = table;
  capacity = new_cap;
  return 1;
}

static long find(const void *handle) {
  if (!capacity) return -1;
  for (size_t i = home_of(handle, capacity);; i = (i + 1) & (capacity - 1)) {
    if (!slots[i].handle) return -1;
    if (slots[i].handle == handle) return (long)i;
  }
}

sg_status sg__handle_register(const void *handle, sg__handle_type type, const char *fn) {
  sg__mutex_lock(&registry_lock);
  if ((used + 1) * 2 > capacity && !grow()) {
    sg__mutex_unlock(&registry_lock);
    return sg__fail(SG_ERR_OUT_OF_MEMORY,
                    "%s: out of memory registering the new handle (the table of live handles "
                    "could not grow); free memory or objects and try again", fn);
  }
  insert(slots, capacity, handle, type);
  used++;
  sg__mutex_unlock(&registry_lock);
  return SG_OK;
}

/* Takes `handle` out of the registry (lock held). */
static void drop(const void *handle) {
  long at = find(handle);
  if (at >= 0) {
    /* Backward-shift deletion keeps every probe chain unbroken. */
    size_t hole = (size_t)at;
    for (size_t i = (hole + 1) & (capacity - 1); slots[i].handle; i = (i + 1) & (capacity - 1)) {
      size_t home = home_of(slots[i].handle, capacity);
      /* Move slot i into the hole unless its home lies cyclically in (hole, i]. */
      int home_between = hole <= i ? (home > hole && home <= i) : (home > hole || home <= i);
      if (!home_between) {
        slots[hole] = slots[i];
        hole = i;
      }
    }
    slots[hole].handle = NULL;
    used--;
    atomic_fetch_add_explicit(&epoch, 1, memory_order_release);
    if (used == 0) {
      sg__free(slots);
      slots = NULL;
      capacity = 0;
    }
  }
}

void sg__handle_unregister(const void *handle) {
  sg__mutex_lock(&registry_lock);
  drop(handle);
  sg__mutex_unlock(&registry_lock);
}

int sg__handle_hold(const void *handle, sg__handle_type type) {
  sg__mutex_lock(&registry_lock);
  long at = handle ? find(handle) : -1;
  return at >= 0 && slots[at].type == type;
}

void sg__handle_release(void) { sg__mutex_unlock(&registry_lock); }

void sg__handle_drop_held(const void *handle) { drop(handle); }

sg_status sg__handle_missing(const void *handle, const char *fn, const char *what) {
  if (!handle) return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn, what);
  return sg__fail(SG_ERR_INVALID_HANDLE, "%s: %s %p is not a live handle of that type "
                  "(destroyed, never created, another kind of object, or being destroyed by "
                  "another thread)", fn, what, handle);
}

sg_status sg__handle_enter(const void *handle, sg__handle_type type, sg__in_use *use, int shared,
                           const char *fn, const char *what, const char *word) {
  sg_status st;
  if (!sg__handle_hold(handle, type)) st = sg__handle_missing(handle, fn, what);
  else if (shared) st = sg__in_use_enter_shared(use, fn, word);
  else st = sg__in_use_enter(use, fn, word);
  sg__handle_release();
  return st;
}

sg_status sg__handle_enter_last(const void *handle, sg__handle_type type, sg__in_use *use,
                                const char *fn, const char *what, const char *word) {
  sg_status st;
  if (!sg__handle_hold(handle, type)) st = sg__handle_missing(handle, fn, what);
  else if (!(st = sg__in_use_enter(use, fn, word))) drop(handle);
  sg__handle_release();
  return st;
}

int sg__handle_valid(const void *handle, sg__handle_type type) {
  if (handle == last_live.handle && type == last_live.type &&
      atomic_load_explicit(&epoch, memory_order_acquire) == last_live.epoch)
    return 1;
  sg__mutex_lock(&registry_lock);
  long at = find(handle);
  int ok = at >= 0 && slots[at].type == type;
  if (ok) {
    last_live.handle = handle;
    last_live.type = type;
    last_live.epoch = atomic_load_explicit(&epoch, memory_order_relaxed);
  }
  sg__mutex_unlock(&registry_lock);
  return ok;
}

sg_status sg__handle_check(const void *handle, sg__handle_type type, const char *fn,
                           const char *what) {
  if (!handle || !sg__handle_valid(handle, type)) return sg__handle_missing(handle, fn, what);
  return SG_OK;
}
