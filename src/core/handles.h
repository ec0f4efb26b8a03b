/* Internal: the registry of live handles.
 *
 * Public handles are pointers. Every live one is recorded here with its type,
 * so a call given a destroyed, never-created or wrong-type handle answers
 * SG_ERR_INVALID_HANDLE instead of touching freed memory. (A destroyed
 * handle's address can be reused by a later object of the same type; the
 * registry cannot tell those apart.) */
#ifndef SG_CORE_HANDLES_H
#define SG_CORE_HANDLES_H

#include "streamgraph/status.h"

typedef struct sg__in_use sg__in_use; /* core/in_use.h */

typedef enum sg__handle_type {
  SG__HANDLE_GRAPH = 1,
  SG__HANDLE_EXEC,
  SG__HANDLE_PLAN,
  SG__HANDLE_POOL,
  SG__HANDLE_PIPELINE,
  SG__HANDLE_MODULE
} sg__handle_type;

/* SG_OK, or SG_ERR_OUT_OF_MEMORY with a message naming `fn`. */
sg_status sg__handle_register(const void *handle, sg__handle_type type, const char *fn);
void sg__handle_unregister(const void *handle);
/* 1 if `handle` is live and of `type`. */
int sg__handle_valid(const void *handle, sg__handle_type type);

/* The usual check: NULL is SG_ERR_INVALID_ARGUMENT, a dead or wrong-type
 * handle SG_ERR_INVALID_HANDLE; `fn` and `what` name the culprit. A check
 * alone does not keep the object alive: a call that goes on to use it
 * enters it with sg__handle_enter. */
sg_status sg__handle_check(const void *handle, sg__handle_type type, const char *fn,
                           const char *what);
/* The failure sg__handle_check reports for `handle`. */
sg_status sg__handle_missing(const void *handle, const char *fn, const char *what);

/* Checks `handle` (as sg__handle_check) and marks its in-use word `use` (a
 * member of the object: its address is computed, not read) in one step
 * under the registry's lock, so that a destruction on another thread cannot
 * free the object in between. `shared`: a call that only reads
 * (core/in_use.h). `word` names the object in a busy message. */
sg_status sg__handle_enter(const void *handle, sg__handle_type type, sg__in_use *use, int shared,
                           const char *fn, const char *what, const char *word);
/* The same for the object's destruction: marks it in use and takes it out
 * of the registry in one step; every later call answers
 * SG_ERR_INVALID_HANDLE, and a call inside makes it SG_ERR_BUSY. */
sg_status sg__handle_enter_last(const void *handle, sg__handle_type type, sg__in_use *use,
                                const char *fn, const char *what, const char *word);

/* Lower level, for an entry that must read the object before marking it:
 * locks the registry and returns 1 if `handle` is live and of `type`; the
 * object cannot be freed until sg__handle_release (call it in both cases).
 * sg__handle_drop_held takes it out while held. Nothing else may be locked
 * inside. */
int sg__handle_hold(const void *handle, sg__handle_type type);
void sg__handle_release(void);
void sg__handle_drop_held(const void *handle);

#endif
