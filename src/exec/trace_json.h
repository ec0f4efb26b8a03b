/* Internal: writing traces as Chrome trace JSON (trace_json.c), for one
 * executable (sg_exec_write_trace) or several on one timeline (a
 * pipeline's instances). */
#ifndef SG_EXEC_TRACE_JSON_H
#define SG_EXEC_TRACE_JSON_H

#include "core/node.h"
#include "exec/trace.h"

struct sg__schedule; /* plan/schedule.h */

/* One traced executable: what its events are named after. */
typedef struct sg__trace_source {
  const char *title;             /* the process name shown ("instance 1 of 'graph'") */
  sg__trace *trace;
  const struct sg__schedule *schedule; /* streams and issue order */
  const sg__node *nodes;         /* names and kinds, indexed like the schedule */
} sg__trace_source;

/* Writes every launch the sources keep, and their host spans, to `path`.
 * The caller has waited for the sources' launches (so that each is
 * committed). Errors (SG_ERR_OUT_OF_MEMORY, SG_ERR_SYSTEM) name `fn`. */
sg_status sg__trace_write_json(const sg__trace_source *sources, unsigned count, const char *path,
                               const char *fn);

#endif
