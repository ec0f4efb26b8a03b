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

typedef enum sg__handle_type {
  SG__HANDLE_GRAPH = 1,
  SG__HANDLE_EXEC,
  SG__HANDLE_PLAN,
  SG__HANDLE_POOL,
  SG__HANDLE_PIPELINE,
  SG__HANDLE_MODULE
} sg__handle_type;

/* SG_OK, or SG_ERR_OUT_OF_MEMORY with a message. */
sg_status sg__handle_register(const void *handle, sg__handle_type type);
void sg__handle_unregister(const void *handle);
/* 1 if `handle` is live and of `type`. */
int sg__handle_valid(const void *handle, sg__handle_type type);

/* The usual entry check: NULL is SG_ERR_INVALID_ARGUMENT, a dead or
 * wrong-type handle SG_ERR_INVALID_HANDLE; `fn` and `what` name the culprit. */
sg_status sg__handle_check(const void *handle, sg__handle_type type, const char *fn,
                           const char *what);

#endif
