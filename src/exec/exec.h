/* Internal: what the executable front end offers the layers above it that
 * are not backends (the pipeline), and its own files. Backends include
 * exec/backend.h instead. */
#ifndef SG_EXEC_EXEC_H
#define SG_EXEC_EXEC_H

#include <stddef.h>
#include <stdint.h>

#include "streamgraph/exec.h"

struct sg__node;         /* core/node.h (not included: C++ tests include this header) */
struct sg__trace_source; /* exec/trace_json.h */

/* The stream limit an executable or plan gets when the caller gives none:
 * CUDA_DEVICE_MAX_CONNECTIONS when it is a plain positive decimal number
 * (digits only: anything else is ignored), else 8.
 * The device runs that many hardware queues at once, so more streams buy
 * nothing. */
unsigned sg__default_max_streams(void);

/* 1 if this thread is running user code of a launch of `exec` (a host
 * callback, a host twin: see sg__exec_callback_begin in exec/backend.h). */
int sg__exec_in_own_callback(const sg_exec *exec);

/* The entry and exit of the executable's public calls: a live handle, not
 * called from a callback of its own launch (for calls that wait or change
 * it), not in use by another call (core/in_use.h). `fn` names the call in
 * the message. Shared: calls that only read. */
sg_status sg__exec_enter(sg_exec *exec, const char *fn);
void sg__exec_leave(sg_exec *exec);
sg_status sg__exec_enter_shared(const sg_exec *exec, const char *fn);
void sg__exec_leave_shared(const sg_exec *exec);

/* The index of the node a handle names in `exec` (exec checked by the
 * caller): a handle of the graph the executable was made from, or of the
 * graph last given to sg_exec_update, as sg_exec_set_* accepts them.
 * SG_ERR_FOREIGN_NODE or SG_ERR_INVALID_ARGUMENT with a message naming `fn`. */
sg_status sg__exec_resolve(const sg_exec *exec, sg_node node, const char *fn, uint32_t *index);
/* Node `index` (< the node count) as the executable has it now: valid until
 * the next sg_exec_set_* or sg_exec_update. */
const struct sg__node *sg__exec_node(const sg_exec *exec, uint32_t index);
/* The sides of copy or memset node `index` that are planned temporaries
 * (SG__TEMP_DST, SG__TEMP_SRC; 0 for any other node): what sg_exec_set_copy
 * takes as NULL. Valid until the next sg_exec_update. */
unsigned sg__exec_temp_sides(const sg_exec *exec, uint32_t index);

/* ---- tracing (exec_trace.c, exec_dump.c) ---------------------------------- */

/* The name of the graph `exec` was made from (or last rebuilt from), or
 * NULL. */
const char *sg__exec_graph_name(const sg_exec *exec);
/* "'name'" or "graph #serial": how ranges and traces name the executable. */
const char *sg__exec_title(const sg_exec *exec, char *buf, size_t cap);
/* The next launch of `exec` is labelled `label` in its trace (a pipeline's
 * batch number). */
void sg__exec_label_next(sg_exec *exec, uint64_t label);
/* Waits for `exec`'s launches (without reporting them), then describes its
 * trace for the JSON writer under `title`. SG_ERR_INVALID_ARGUMENT when it
 * is not traced; messages name `fn`. */
sg_status sg__exec_trace_source(sg_exec *exec, const char *title, struct sg__trace_source *out,
                                const char *fn);
/* SG_TRACE_DIR: 1 if `exec` writes its files when destroyed; a pipeline
 * writes one trace of all its instances instead, and stops theirs. */
int sg__exec_dumps(const sg_exec *exec);
void sg__exec_stop_dump(sg_exec *exec);
/* Writes every kept launch of `exec` as Chrome trace JSON to `path`, after
 * waiting; no entry check (sg_exec_write_trace does it). */
sg_status sg__exec_write_trace(sg_exec *exec, const char *path, const char *fn);
/* The same as an SVG timeline (sg_exec_write_trace_svg). */
sg_status sg__exec_write_trace_svg(sg_exec *exec, const char *path, const char *fn);
/* Writes the files SG_TRACE_DIR asks for (exec_dump.c); errors are ignored
 * and the thread's message is kept. */
void sg__exec_dump(sg_exec *exec);
/* "<SG_TRACE_DIR>/<graph name made safe for a file name>-<n>", n unique in
 * the process; the length written, as snprintf. */
size_t sg__dump_stem(const char *graph_name, char *out, size_t cap);
/* Writes <stem>.graph.dot and <stem>.plan.dot of `exec`; errors ignored. */
void sg__exec_dump_graph(sg_exec *exec, const char *stem);
struct sg__snapshot;
/* The plan of an executable with options `o` (resolved) for `snap`:
 * deferred (plan/plan.h) where the backend needs only the issue order and
 * the reduced edges (CUDA, graph mode, explicit build). */
sg_status sg__exec_plan_build(const struct sg__snapshot *snap, const sg_exec_options *o,
                              sg_plan **out);

/* The number of the executable's latest launch (sg_exec_get_stats().launches,
 * without the statistics' lock): the one sg_exec_launch just made. */
uint64_t sg__exec_launch_count(const sg_exec *exec);

/* From now on, follow every launch one by one, so that sg_exec_wait_launch
 * and sg_exec_query_launch are exact (graph mode otherwise marks a launch
 * only once asked: streamgraph/exec.h). The pipeline asks at creation. */
void sg__exec_track_launches(sg_exec *exec);

#endif
