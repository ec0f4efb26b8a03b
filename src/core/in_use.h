/* Internal: detecting forbidden concurrent use of an object.
 *
 * An executable, a pipeline and a graph are used from one thread at a time
 * (their headers say so). Breaking that rule used to mean data races,
 * use-after-free and double frees; now each public call marks its object in
 * use for its duration, and a call that finds the mark fails with
 * SG_ERR_BUSY and a message naming itself, instead of racing. The mark is
 * one atomic word per object (plus a reader count), so the check costs a
 * compare-and-swap per call.
 *
 * Calls that only read (queries, and the snapshot an executable or plan
 * takes of a graph) mark the object shared: any number may run together,
 * but not beside a call that changes it. The rule protects against misuse;
 * it does not make concurrent use of one object a supported pattern. A
 * call racing the object's destruction is detected too: entering and
 * destroying mark the object under the handle registry's lock
 * (core/handles.h), so the racing call either finds the object gone
 * (SG_ERR_INVALID_HANDLE) or makes the destruction SG_ERR_BUSY. */
#ifndef SG_CORE_IN_USE_H
#define SG_CORE_IN_USE_H

#include <stdatomic.h>
#include <stdint.h>

#include "streamgraph/status.h"

typedef struct sg__in_use {
  atomic_uintptr_t owner; /* the thread inside a changing call, or 0 */
  atomic_uint readers;    /* calls inside that only read */
} sg__in_use;

/* Marks `u` in use by a call that changes its object. SG_ERR_BUSY with a
 * message "fn: the <what> is in use by another call ..." when another call
 * holds it; the message says whether that call runs on another thread or
 * on this one (a callback calling back into its own object). */
sg_status sg__in_use_enter(sg__in_use *u, const char *fn, const char *what);
void sg__in_use_leave(sg__in_use *u);

/* The same for a call that only reads. Allowed beside a changing call of
 * this same thread (a callback inspecting the object it runs for). */
sg_status sg__in_use_enter_shared(sg__in_use *u, const char *fn, const char *what);
void sg__in_use_leave_shared(sg__in_use *u);

/* 1 if a changing call on this thread holds `u`. */
int sg__in_use_by_this_thread(const sg__in_use *u);

#endif
