/* The trace of an executable: launches' node times and host spans. */
#include <stdatomic.h>
#include <string.h>

#include "core/error.h"
#include "core/sys.h"
#include "exec/trace.h"

static void free_arrays(sg__trace *t) {
  sg__free(t->launch);
  sg__free(t->label);
  sg__free(t->start);
  sg__free(t->times);
  sg__free(t->pending_launch);
  sg__free(t->pending_label);
  sg__free(t->spans);
  sg__free(t);
}

sg_status sg__trace_new(uint32_t node_count, unsigned keep, unsigned every, const char *fn,
                        sg__trace **out) {
  *out = NULL;
  if (keep == 0) keep = SG__TRACE_DEFAULT_LAUNCHES;
  size_t pending = (size_t)keep + SG__TRACE_MAX_AHEAD;
  size_t nodes = node_count ? node_count : 1;
  sg__trace *t = sg__calloc(1, sizeof *t);
  if (!t) return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory for the trace", fn);
  t->node_count = node_count;
  t->keep = keep;
  t->every = every ? every : 1;
  t->span_cap = (size_t)keep * SG__TRACE_SPANS_PER_LAUNCH;
  t->launch = sg__calloc(keep, sizeof *t->launch);
  t->label = sg__calloc(keep, sizeof *t->label);
  t->start = sg__calloc(keep, sizeof *t->start);
  /* keep * 2 * nodes times, the product overflow-checked */
  t->times = sg__realloc_array(NULL, (size_t)keep * 2, nodes * sizeof *t->times);
  t->pending_launch = sg__calloc(pending, sizeof *t->pending_launch);
  t->pending_label = sg__calloc(pending, sizeof *t->pending_label);
  t->spans = sg__realloc_array(NULL, t->span_cap, sizeof *t->spans);
  if (!t->launch || !t->label || !t->start || !t->times || !t->pending_launch ||
      !t->pending_label || !t->spans) {
    free_arrays(t);
    return sg__fail(SG_ERR_OUT_OF_MEMORY,
                    "%s: out of memory for the trace (%u launches of %u nodes kept; "
                    "options.trace_launches sets how many)", fn, keep, node_count);
  }
  if (sg__mutex_init(&t->lock)) {
    free_arrays(t);
    return sg__fail(SG_ERR_SYSTEM, "%s: cannot create the trace's mutex", fn);
  }
  *out = t;
  return SG_OK;
}

void sg__trace_free(sg__trace *t) {
  if (!t) return;
  sg__mutex_destroy(&t->lock);
  free_arrays(t);
}

/* Where traced launch `launch`'s label waits for its commit. By traced
 * launch, as the slots: how far ahead of its commits a backend runs counts
 * traced launches (cuda_trace.h's ring of sets). */
static size_t pending_at(const sg__trace *t, uint64_t launch) {
  return (size_t)(((launch - 1) / t->every) % ((uint64_t)t->keep + SG__TRACE_MAX_AHEAD));
}

void sg__trace_label(sg__trace *t, uint64_t launch, uint64_t label) {
  if (!sg__trace_sampled(t, launch)) return;
  size_t at = pending_at(t, launch);
  sg__mutex_lock(&t->lock);
  t->pending_launch[at] = launch;
  t->pending_label[at] = label;
  sg__mutex_unlock(&t->lock);
}

void sg__trace_commit(sg__trace *t, uint64_t launch, uint64_t start_ns, const uint64_t *start_rel,
                      const uint64_t *end_rel) {
  if (!sg__trace_sampled(t, launch)) return;
  size_t slot = sg__trace_slot(t, launch);
  size_t at = pending_at(t, launch);
  uint64_t *times = t->times + slot * 2 * (t->node_count ? t->node_count : 1);
  sg__mutex_lock(&t->lock);
  t->launch[slot] = launch;
  t->label[slot] = t->pending_launch[at] == launch ? t->pending_label[at] : SG__TRACE_NO_LABEL;
  t->start[slot] = start_ns;
  if (t->node_count) {
    memcpy(times, start_rel, t->node_count * sizeof *times);
    memcpy(times + t->node_count, end_rel, t->node_count * sizeof *times);
  }
  if (launch > t->last) t->last = launch;
  sg__mutex_unlock(&t->lock);
}

static atomic_uint next_lane;
static _Thread_local uint32_t my_lane;      /* 0: not assigned yet */

uint32_t sg__trace_lane(void) {
  if (my_lane == 0) my_lane = atomic_fetch_add(&next_lane, 1) + 1;
  return my_lane;
}

void sg__trace_span_add(sg__trace *t, sg__span_kind kind, uint32_t node, uint32_t chunk,
                        uint64_t bytes, uint64_t start_ns, uint64_t end_ns, int copy_thread) {
  uint32_t lane = sg__trace_lane();
  sg__trace_span span = {start_ns, end_ns, bytes, node, chunk, lane, (uint8_t)kind,
                         (uint8_t)(copy_thread != 0)};
  sg__mutex_lock(&t->lock);
  t->spans[t->span_total % t->span_cap] = span;
  t->span_total++;
  sg__mutex_unlock(&t->lock);
}

int sg__trace_read(sg__trace *t, uint64_t launch, uint64_t *launch_out, uint64_t *label,
                   uint64_t *start_ns, uint64_t *start_rel, uint64_t *end_rel) {
  int found = 0;
  sg__mutex_lock(&t->lock);
  if (launch == 0) launch = t->last;
  size_t slot = launch ? sg__trace_slot(t, launch) : 0;
  if (launch != 0 && t->launch[slot] == launch) {
    const uint64_t *times = t->times + slot * 2 * (t->node_count ? t->node_count : 1);
    *launch_out = launch;
    *label = t->label[slot];
    *start_ns = t->start[slot];
    if (t->node_count) {
      memcpy(start_rel, times, t->node_count * sizeof *times);
      memcpy(end_rel, times + t->node_count, t->node_count * sizeof *times);
    }
    found = 1;
  }
  sg__mutex_unlock(&t->lock);
  return found ? 0 : -1;
}

static void copy_span(void *ctx, int drain, uint32_t node, uint32_t chunk, uint64_t bytes,
                      uint64_t start_ns, uint64_t end_ns, int copy_thread) {
  sg__trace_span_add(ctx, drain ? SG__SPAN_DRAIN : SG__SPAN_FILL, node, chunk, bytes, start_ns,
                     end_ns, copy_thread);
}

sg__copy_spans sg__trace_copy_spans(sg__trace *t) {
  sg__copy_spans spans = {t ? copy_span : NULL, t};
  return spans;
}
