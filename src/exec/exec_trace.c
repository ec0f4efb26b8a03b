/* Traces of an executable: reading kept launches as records, writing them
 * as Chrome trace JSON or an SVG timeline, and what the pipeline needs to trace its instances
 * (exec/exec.h). The backends commit the times (exec/trace.h); this file
 * only reads them, after waiting so that every launch made is committed. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "core/sys.h"
#include "exec/exec.h"
#include "exec/exec_internal.h"
#include "exec/trace_json.h"
#include "exec/trace_svg.h"
#include "plan/plan.h"
#include "plan/schedule.h"

/* What every trace reader does first: a traced executable, waited for (so
 * that its launches are committed), its plan's streams planned (a deferred
 * plan has none until asked). */
static sg_status traced(sg_exec *exec, const char *fn) {
  if (!exec->trace)
    return sg__fail(SG_ERR_INVALID_ARGUMENT,
                    "%s: the executable was created without `trace` (sg_exec_options.trace)",
                    fn);
  exec->ops->wait(exec->state);
  sg_status st = sg__plan_complete(exec->plan);
  return st ? sg__plan_prefix_failure(st, fn) : SG_OK;
}

static sg_status read_records(sg_exec *exec, uint64_t launch, sg_trace_record *records,
                              size_t capacity, size_t *count, const char *fn) {
  if (!count || (capacity && !records))
    return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn, count ? "records" : "count");
  sg_status st = traced(exec, fn);
  if (st) return st;
  const sg__schedule *s = sg__plan_schedule(exec->plan);
  size_t n = s->node_count ? s->node_count : 1;
  uint64_t *start = sg__calloc(n, sizeof *start), *end = sg__calloc(n, sizeof *end);
  if (!start || !end) {
    sg__free(start);
    sg__free(end);
    return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
  }
  uint64_t found, label, base;
  if (sg__trace_read(exec->trace, launch, &found, &label, &base, start, end)) {
    sg__free(start);
    sg__free(end);
    const sg__trace *t = exec->trace;
    if (exec->launched == 0)
      return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: the executable has not been launched", fn);
    if (launch == 0)
      return sg__fail(SG_ERR_INVALID_ARGUMENT,
                      "%s: no launch has been timed (a failed launch has no times)", fn);
    if (launch <= exec->launched && !sg__trace_sampled(t, launch))
      return sg__fail(SG_ERR_INVALID_ARGUMENT,
                      "%s: launch %" PRIu64 " was not sampled: options.trace_every = %u times "
                      "launches 1, %" PRIu64 ", %" PRIu64 "... only",
                      fn, launch, t->every, (uint64_t)t->every + 1, 2 * (uint64_t)t->every + 1);
    if (t->every > 1) {
      /* The oldest traced launch the ring can still hold. */
      const uint64_t latest = (exec->launched - 1) / t->every; /* samples from 0 */
      const uint64_t oldest = latest >= t->keep ? (latest - t->keep + 1) * t->every + 1 : 1;
      return sg__fail(SG_ERR_INVALID_ARGUMENT,
                      "%s: launch %" PRIu64 " is not kept: traced launches %" PRIu64
                      " to %" PRIu64 " (every %u-th) are (options.trace_launches keeps the "
                      "last %u traced launches; a failed launch, or one before a change of "
                      "topology, has no times)",
                      fn, launch, oldest, latest * t->every + 1, t->every, t->keep);
    }
    uint64_t oldest = exec->launched > t->keep ? exec->launched - t->keep + 1 : 1;
    return sg__fail(SG_ERR_INVALID_ARGUMENT,
                    "%s: launch %" PRIu64 " is not kept: launches %" PRIu64 " to %" PRIu64
                    " are (options.trace_launches keeps the last %u; a failed launch, or one "
                    "before a change of topology, has no times)",
                    fn, launch, oldest, exec->launched, t->keep);
  }
  for (size_t k = 0; k < s->node_count && k < capacity; k++) {
    uint32_t v = s->order[k];
    records[k] = (sg_trace_record){sg__node_make(exec->snap.graph_serial, v), s->stream_of[v],
                                   start[v], end[v], found, base};
  }
  *count = s->node_count;
  sg__free(start);
  sg__free(end);
  return SG_OK;
}

sg_status sg_exec_get_trace(sg_exec *exec, sg_trace_record *records, size_t capacity,
                            size_t *count) {
  sg_status st = sg__exec_enter(exec, __func__);
  if (st) return st;
  st = read_records(exec, 0, records, capacity, count, __func__);
  sg__exec_leave(exec);
  return st;
}

sg_status sg_exec_get_launch_trace(sg_exec *exec, uint64_t launch, sg_trace_record *records,
                                   size_t capacity, size_t *count) {
  sg_status st = sg__exec_enter(exec, __func__);
  if (st) return st;
  st = launch ? read_records(exec, launch, records, capacity, count, __func__)
              : sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: launch 0 does not exist (the first is 1)",
                         __func__);
  sg__exec_leave(exec);
  return st;
}

const char *sg__exec_graph_name(const sg_exec *exec) { return exec->snap.graph_name; }

void sg__exec_label_next(sg_exec *exec, uint64_t label) { exec->next_label = label; }

int sg__exec_dumps(const sg_exec *exec) { return exec->dump; }

void sg__exec_stop_dump(sg_exec *exec) { exec->dump = 0; }

sg_status sg__exec_trace_source(sg_exec *exec, const char *title, sg__trace_source *out,
                                const char *fn) {
  sg_status st = traced(exec, fn);
  if (st) return st;
  *out = (sg__trace_source){title, exec->trace, sg__plan_schedule(exec->plan), exec->snap.nodes};
  return SG_OK;
}

/* Writes every kept launch of `exec` to `path` (no entry check: also used
 * while the executable is destroyed, for SG_TRACE_DIR). */
sg_status sg__exec_write_trace(sg_exec *exec, const char *path, const char *fn) {
  char title[SG__LABEL_BYTES + 16];
  sg__trace_source src;
  sg_status st = sg__exec_trace_source(exec, sg__exec_title(exec, title, sizeof title), &src, fn);
  return st ? st : sg__trace_write_json(&src, 1, path, fn);
}

sg_status sg_exec_write_trace(sg_exec *exec, const char *path) {
  sg_status st = sg__exec_enter(exec, __func__);
  if (st) return st;
  st = path ? sg__exec_write_trace(exec, path, __func__)
            : sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: path is NULL", __func__);
  sg__exec_leave(exec);
  return st;
}

sg_status sg__exec_write_trace_svg(sg_exec *exec, const char *path, const char *fn) {
  char title[SG__LABEL_BYTES + 16];
  sg__trace_source src;
  sg_status st = sg__exec_trace_source(exec, sg__exec_title(exec, title, sizeof title), &src, fn);
  return st ? st : sg__trace_write_svg(&src, 1, path, fn);
}

sg_status sg_exec_write_trace_svg(sg_exec *exec, const char *path) {
  sg_status st = sg__exec_enter(exec, __func__);
  if (st) return st;
  st = path ? sg__exec_write_trace_svg(exec, path, __func__)
            : sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: path is NULL", __func__);
  sg__exec_leave(exec);
  return st;
}
