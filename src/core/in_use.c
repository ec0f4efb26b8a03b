/* Detecting forbidden concurrent use (in_use.h). Sequentially consistent
 * atomics throughout: a changing call publishes its mark, then looks for
 * readers; a reader publishes itself, then looks for a mark. One of two
 * such calls racing each other always sees the other (both may back off,
 * which is fine: neither was allowed). */
#include "core/in_use.h"

#include "core/error.h"

/* A token unique to the calling thread: the address of a thread-local. */
static uintptr_t this_thread(void) {
  static _Thread_local char token;
  return (uintptr_t)&token;
}

static sg_status busy(const char *fn, const char *what, int same_thread) {
  if (same_thread)
    return sg__fail(SG_ERR_BUSY,
                    "%s: the %s is in use by a call on this same thread that has not returned "
                    "(a callback calling back into the object it runs for); call it after "
                    "that call returns",
                    fn, what);
  return sg__fail(SG_ERR_BUSY,
                  "%s: the %s is in use by a call on another thread; a %s is used from one "
                  "thread at a time",
                  fn, what, what);
}

sg_status sg__in_use_enter(sg__in_use *u, const char *fn, const char *what) {
  uintptr_t me = this_thread(), expected = 0;
  if (!atomic_compare_exchange_strong(&u->owner, &expected, me))
    return busy(fn, what, expected == me);
  if (atomic_load(&u->readers) != 0) {
    atomic_store(&u->owner, 0);
    return busy(fn, what, 0);
  }
  return SG_OK;
}

void sg__in_use_leave(sg__in_use *u) { atomic_store(&u->owner, 0); }

sg_status sg__in_use_enter_shared(sg__in_use *u, const char *fn, const char *what) {
  atomic_fetch_add(&u->readers, 1);
  uintptr_t owner = atomic_load(&u->owner);
  /* A changing call on this thread is paused in a callback: reading the
   * object from that callback sees it consistent, as the caller left it. */
  if (owner != 0 && owner != this_thread()) {
    atomic_fetch_sub(&u->readers, 1);
    return busy(fn, what, 0);
  }
  return SG_OK;
}

void sg__in_use_leave_shared(sg__in_use *u) { atomic_fetch_sub(&u->readers, 1); }

int sg__in_use_by_this_thread(const sg__in_use *u) {
  return atomic_load(&((sg__in_use *)u)->owner) == this_thread();
}
