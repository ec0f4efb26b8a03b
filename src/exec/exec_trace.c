/* Traces of a launch: per-node records and Chrome trace JSON. */
#include <stdio.h>
#include <string.h>

#include "core/handles.h"
#include "core/sys.h"
#include "core/text.h"
#include "exec/backend.h"
#include "exec/exec.h"
#include "plan/schedule.h"

/* Waits, then reads the backend's per-node times (caller frees both). */
static sg_status read_times(sg_exec *exec, const char *fn, uint64_t **start, uint64_t **end) {
  sg_status st;
  if (!exec->options.trace)
    return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: the executable was created without `trace`", fn);
  if (!exec->ops->get_trace)
    return sg__fail(SG_ERR_UNSUPPORTED, "%s: the %s backend cannot trace in this mode", fn,
                    exec->ops->name);
  exec->ops->wait(exec);
  size_t n = exec->snap.node_count ? exec->snap.node_count : 1;
  *start = sg__calloc(n, sizeof **start);
  *end = sg__calloc(n, sizeof **end);
  if (!*start || !*end) {
    sg__free(*start);
    sg__free(*end);
    return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
  }
  st = exec->ops->get_trace(exec, *start, *end);
  if (st) {
    sg__free(*start);
    sg__free(*end);
  }
  return st;
}

static sg_status get_trace(sg_exec *exec, sg_trace_record *records, size_t capacity,
                           size_t *count) {
  static const char fn[] = "sg_exec_get_trace";
  if (!count || (capacity && !records))
    return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn,
                    count ? "records" : "count");
  uint64_t *start, *end;
  sg_status st = read_times(exec, fn, &start, &end);
  if (st) return st;
  const sg__schedule *s = sg__exec_schedule(exec);
  for (size_t k = 0; k < s->node_count && k < capacity; k++) {
    uint32_t n = s->order[k];
    records[k] = (sg_trace_record){sg__node_make(exec->snap.graph_serial, n), s->stream_of[n],
                                   start[n], end[n]};
  }
  *count = s->node_count;
  sg__free(start);
  sg__free(end);
  return SG_OK;
}

static sg_status write_trace(sg_exec *exec, const char *path) {
  static const char fn[] = "sg_exec_write_trace";
  if (!path) return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: path is NULL", fn);
  uint64_t *start, *end;
  sg_status st = read_times(exec, fn, &start, &end);
  if (st) return st;
  const sg__schedule *s = sg__exec_schedule(exec);
  sg__text t = {0};
  sg__text_printf(&t, "{\"traceEvents\":[\n");
  for (uint32_t k = 0; k < s->node_count; k++) {
    uint32_t n = s->order[k];
    const sg__node *node = &exec->snap.nodes[n];
    sg__text_printf(&t, "%s{\"name\":\"", k ? ",\n" : "");
    if (node->name) sg__text_json(&t, node->name); else sg__text_printf(&t, "#%u", n);
    sg__text_printf(&t, "\",\"cat\":\"%s\",\"ph\":\"X\",\"pid\":1,\"tid\":%u,\"ts\":%.3f,"
                        "\"dur\":%.3f,\"args\":{\"node\":%u}}",
                    sg__node_kind_name(node->kind), s->stream_of[n], start[n] / 1e3,
                    (end[n] - start[n]) / 1e3, n);
  }
  for (uint32_t i = 0; i < s->stream_count; i++)
    sg__text_printf(&t, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":%u,"
                        "\"args\":{\"name\":\"stream %u\"}}", i, i);
  sg__text_printf(&t, "\n]}\n");
  sg__free(start);
  sg__free(end);
  if (t.failed) return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
  FILE *f = fopen(path, "w");
  if (!f) {
    sg__text_free(&t);
    return sg__fail(SG_ERR_SYSTEM, "%s: cannot open '%s' for writing", fn, path);
  }
  int bad = fwrite(t.data, 1, t.len, f) != t.len;
  bad |= fclose(f) != 0;
  sg__text_free(&t);
  if (bad) return sg__fail(SG_ERR_SYSTEM, "%s: error writing '%s'", fn, path);
  return SG_OK;
}

sg_status sg_exec_get_trace(sg_exec *exec, sg_trace_record *records, size_t capacity,
                            size_t *count) {
  sg_status st = sg__exec_enter(exec, __func__);
  if (st) return st;
  st = get_trace(exec, records, capacity, count);
  sg__exec_leave(exec);
  return st;
}

sg_status sg_exec_write_trace(sg_exec *exec, const char *path) {
  sg_status st = sg__exec_enter(exec, __func__);
  if (st) return st;
  st = write_trace(exec, path);
  sg__exec_leave(exec);
  return st;
}
