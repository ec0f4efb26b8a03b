/* Internal: writing traces as an SVG timeline (trace_svg.c), for one
 * executable (sg_exec_write_trace_svg) or several on one timeline (a
 * pipeline's instances). The same sources as the JSON writer. */
#ifndef SG_EXEC_TRACE_SVG_H
#define SG_EXEC_TRACE_SVG_H

#include "exec/trace_json.h"

/* Writes every launch the sources keep, and their host spans, to `path` as
 * a self-contained SVG picture. The caller has waited for the sources'
 * launches. Errors (SG_ERR_OUT_OF_MEMORY, SG_ERR_SYSTEM) name `fn`. */
sg_status sg__trace_write_svg(const sg__trace_source *sources, unsigned count, const char *path,
                              const char *fn);

#endif
