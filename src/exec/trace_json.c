/* Traces as Chrome trace JSON (the "Trace Event Format" Perfetto and
 * chrome://tracing open): one process per executable (or pipeline
 * instance), one thread per planned stream plus one for the launches
 * themselves, one complete event ("ph":"X") per node run; the host-side
 * staging work of every source in one more process, one thread per host
 * thread. Times are microseconds from the earliest event written. */
#include <inttypes.h>
#include <stdio.h>

#include "core/sys.h"
#include "core/text.h"
#include "exec/trace_json.h"
#include "plan/schedule.h"

/* The earliest absolute time in any source (launch starts and spans). */
static uint64_t origin_of(const sg__trace_source *sources, unsigned count) {
  uint64_t origin = UINT64_MAX;
  for (unsigned i = 0; i < count; i++) {
    sg__trace *t = sources[i].trace;
    sg__mutex_lock(&t->lock);
    for (unsigned slot = 0; slot < t->keep; slot++)
      if (t->launch[slot] && t->start[slot] < origin) origin = t->start[slot];
    uint64_t spans = t->span_total < t->span_cap ? t->span_total : t->span_cap;
    for (uint64_t k = 0; k < spans; k++)
      if (t->spans[k].start_ns < origin) origin = t->spans[k].start_ns;
    sg__mutex_unlock(&t->lock);
  }
  return origin == UINT64_MAX ? 0 : origin;
}

static double us(uint64_t ns, uint64_t origin) {
  return ns >= origin ? (double)(ns - origin) / 1e3 : -(double)(origin - ns) / 1e3;
}

/* Starts an event: a separator unless it is the first. Every event is
 * written as ",\n{...}" after the first, so a writer only calls this. */
static void begin(sg__text *t) {
  int first = t->len > 0 && t->data[t->len - 1] == '[';
  sg__text_printf(t, "%s{", first ? "\n" : ",\n");
}

static void put_meta(sg__text *t, unsigned pid, const char *what, const char *key,
                     unsigned tid, const char *value_json, unsigned sort) {
  begin(t);
  sg__text_printf(t, "\"name\":\"%s\",\"ph\":\"M\",\"pid\":%u,\"tid\":%u,\"args\":{\"%s\":",
                  what, pid, tid, key);
  if (value_json) sg__text_printf(t, "\"%s\"}}", value_json);
  else sg__text_printf(t, "%u}}", sort);
}

/* One kept launch (`slot` of the trace) of source `pid`. */
static void put_launch(sg__text *t, const sg__trace_source *src, unsigned pid, unsigned slot,
                       uint64_t origin) {
  const sg__trace *tr = src->trace;
  const sg__schedule *s = src->schedule;
  const uint64_t *times = tr->times + (size_t)slot * 2 * (tr->node_count ? tr->node_count : 1);
  const uint64_t *start = times, *end = times + tr->node_count;
  uint64_t base = tr->start[slot], launch = tr->launch[slot], label = tr->label[slot];
  if (s->node_count == 0) return;
  uint64_t first = UINT64_MAX, last = 0;
  for (uint32_t n = 0; n < s->node_count; n++) {
    if (start[n] < first) first = start[n];
    if (end[n] > last) last = end[n];
  }
  /* The launch as a whole, on thread 0: what a pipeline labels "batch". */
  begin(t);
  if (label != SG__TRACE_NO_LABEL)
    sg__text_printf(t, "\"name\":\"batch %" PRIu64 "\",\"cat\":\"batch\"", label);
  else
    sg__text_printf(t, "\"name\":\"launch %" PRIu64 "\",\"cat\":\"launch\"", launch);
  sg__text_printf(t, ",\"ph\":\"X\",\"pid\":%u,\"tid\":0,\"ts\":%.3f,\"dur\":%.3f,"
                     "\"args\":{\"launch\":%" PRIu64, pid, us(base + first, origin),
                  (double)(last - first) / 1e3, launch);
  if (label != SG__TRACE_NO_LABEL) sg__text_printf(t, ",\"batch\":%" PRIu64, label);
  sg__text_printf(t, "}}");
  for (uint32_t k = 0; k < s->node_count; k++) {
    uint32_t n = s->order[k];
    const sg__node *node = &src->nodes[n];
    begin(t);
    sg__text_printf(t, "\"name\":\"");
    if (node->name) sg__text_json(t, node->name);
    else sg__text_printf(t, "#%u", n);
    sg__text_printf(t, "\",\"cat\":\"%s\",\"ph\":\"X\",\"pid\":%u,\"tid\":%u,\"ts\":%.3f,"
                       "\"dur\":%.3f,\"args\":{\"node\":%u,\"launch\":%" PRIu64,
                    sg__node_kind_name(node->kind), pid, s->stream_of[n] + 1,
                    us(base + start[n], origin),
                    end[n] > start[n] ? (double)(end[n] - start[n]) / 1e3 : 0.0, n, launch);
    if (label != SG__TRACE_NO_LABEL) sg__text_printf(t, ",\"batch\":%" PRIu64, label);
    sg__text_printf(t, "}}");
  }
}

static void put_source(sg__text *t, const sg__trace_source *src, unsigned pid, uint64_t origin) {
  sg__trace *tr = src->trace;
  const sg__schedule *s = src->schedule;
  begin(t);
  sg__text_printf(t, "\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%u,\"tid\":0,"
                     "\"args\":{\"name\":\"", pid);
  sg__text_json(t, src->title);
  sg__text_printf(t, "\"}}");
  put_meta(t, pid, "process_sort_index", "sort_index", 0, NULL, pid);
  sg__mutex_lock(&tr->lock);
  int labelled = 0;
  for (unsigned slot = 0; slot < tr->keep; slot++)
    labelled |= tr->launch[slot] && tr->label[slot] != SG__TRACE_NO_LABEL;
  put_meta(t, pid, "thread_name", "name", 0, labelled ? "batches" : "launches", 0);
  for (uint32_t k = 0; k < s->stream_count; k++) {
    char name[32];
    snprintf(name, sizeof name, "stream %u", k);
    put_meta(t, pid, "thread_name", "name", k + 1, name, 0);
    put_meta(t, pid, "thread_sort_index", "sort_index", k + 1, NULL, k + 1);
  }
  /* Launches in order: the oldest kept first. */
  uint64_t oldest = sg__trace_oldest(tr);
  for (uint64_t launch = oldest; tr->last && launch <= tr->last; launch += tr->every) {
    unsigned slot = (unsigned)sg__trace_slot(tr, launch);
    if (tr->launch[slot] == launch) put_launch(t, src, pid, slot, origin);
  }
  sg__mutex_unlock(&tr->lock);
}

/* Names the lanes (host threads) spans ran on, once each. */
static int put_lanes(sg__text *t, const sg__trace_source *sources, unsigned count, unsigned pid) {
  uint32_t lanes = 0;
  for (unsigned i = 0; i < count; i++) {
    sg__trace *tr = sources[i].trace;
    sg__mutex_lock(&tr->lock);
    uint64_t n = tr->span_total < tr->span_cap ? tr->span_total : tr->span_cap;
    for (uint64_t k = 0; k < n; k++)
      if (tr->spans[k].lane + 1 > lanes) lanes = tr->spans[k].lane + 1;
    sg__mutex_unlock(&tr->lock);
  }
  if (lanes == 0) return 0;
  unsigned char *named = sg__calloc(lanes, 1); /* 1: a copy thread, 2: another thread */
  if (!named) return -1;
  for (unsigned i = 0; i < count; i++) {
    sg__trace *tr = sources[i].trace;
    sg__mutex_lock(&tr->lock);
    uint64_t n = tr->span_total < tr->span_cap ? tr->span_total : tr->span_cap;
    for (uint64_t k = 0; k < n; k++)
      named[tr->spans[k].lane] = tr->spans[k].copy_thread ? 1 : 2;
    sg__mutex_unlock(&tr->lock);
  }
  begin(t);
  sg__text_printf(t, "\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%u,\"tid\":0,"
                     "\"args\":{\"name\":\"host: staging copies\"}}", pid);
  put_meta(t, pid, "process_sort_index", "sort_index", 0, NULL, pid);
  for (uint32_t lane = 0; lane < lanes; lane++) {
    if (!named[lane]) continue;
    char name[48];
    snprintf(name, sizeof name, "%s %u", named[lane] == 1 ? "copy thread" : "waiting thread",
             lane);
    put_meta(t, pid, "thread_name", "name", lane, name, 0);
  }
  sg__free(named);
  return 0;
}

/* The spans of every source, in one process `pid`, one thread per lane. */
static void put_spans(sg__text *t, const sg__trace_source *sources, unsigned count, unsigned pid,
                      uint64_t origin) {
  if (put_lanes(t, sources, count, pid)) {
    t->failed = 1;
    return;
  }
  for (unsigned i = 0; i < count; i++) {
    sg__trace *tr = sources[i].trace;
    sg__mutex_lock(&tr->lock);
    uint64_t n = tr->span_total < tr->span_cap ? tr->span_total : tr->span_cap;
    for (uint64_t k = tr->span_total - n; k < tr->span_total; k++) {
      const sg__trace_span *sp = &tr->spans[k % tr->span_cap];
      const sg__node *node = &sources[i].nodes[sp->node];
      begin(t);
      sg__text_printf(t, "\"name\":\"%s ", sp->kind == SG__SPAN_FILL ? "fill" : "drain");
      if (node->name) sg__text_json(t, node->name);
      else sg__text_printf(t, "#%u", sp->node);
      sg__text_printf(t, " chunk %u\",\"cat\":\"staging\",\"ph\":\"X\",\"pid\":%u,\"tid\":%u,"
                         "\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"source\":\"",
                      sp->chunk, pid, sp->lane, us(sp->start_ns, origin),
                      sp->end_ns > sp->start_ns ? (double)(sp->end_ns - sp->start_ns) / 1e3 : 0.0);
      sg__text_json(t, sources[i].title);
      sg__text_printf(t, "\",\"node\":%u,\"chunk\":%u,\"bytes\":%" PRIu64 "}}", sp->node,
                      sp->chunk, sp->bytes);
    }
    sg__mutex_unlock(&tr->lock);
  }
}

sg_status sg__trace_write_json(const sg__trace_source *sources, unsigned count, const char *path,
                               const char *fn) {
  uint64_t origin = origin_of(sources, count);
  sg__text t = {0};
  sg__text_printf(&t, "{\"traceEvents\":[");
  for (unsigned i = 0; i < count; i++) put_source(&t, &sources[i], i + 1, origin);
  put_spans(&t, sources, count, count + 1, origin);
  /* Timestamps are microseconds from origin_ns on the host's steady clock. */
  sg__text_printf(&t, "\n],\n\"displayTimeUnit\":\"ns\",\"otherData\":{\"producer\":"
                      "\"streamgraph\",\"clock\":\"CLOCK_MONOTONIC\",\"origin_ns\":%" PRIu64
                      "}}\n", origin);
  if (t.failed) {
    sg__text_free(&t);
    return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory writing the trace", fn);
  }
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
