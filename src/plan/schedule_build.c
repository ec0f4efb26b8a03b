/* The planner's entry point: checks the input, runs the steps in order, and
 * on any failure frees everything taken so far. */
#include "plan/schedule_build.h"

#include <stdint.h>
#include <string.h>

#include "core/error.h"
#include "core/sys.h"
#include "plan/schedule_check.h"
#include "plan/work.h"

void sg__schedule_free(sg__schedule *s) {
  if (!s) return;
  sg__free(s->order);
  sg__free(s->stream_of);
  sg__free(s->position);
  sg__free(s->stream_start);
  sg__free(s->stream_nodes);
  sg__free(s->stream_device);
  sg__free(s->wait_start);
  sg__free(s->wait_event);
  sg__free(s->record_event);
  sg__free(s->event_node);
  sg__free(s->red_start);
  sg__free(s->red_succ);
  sg__free(s->programmatic);
  memset(s, 0, sizeof *s);
}

/* The contract of the successor lists, checked in one pass: a malformed list
 * would otherwise send the steps out of bounds. */
static sg_status check_input(uint32_t n, const uint32_t *start, const uint32_t *succ) {
  if (n == 0) return SG_OK;
  if (n > INT32_MAX) /* events are numbered in an int32_t */
    return sg__fail(SG_ERR_INVALID_ARGUMENT, "planner: %u nodes is too many", n);
  if (!start) return sg__fail(SG_ERR_INVALID_ARGUMENT, "planner: succ_start is NULL");
  if (start[0] != 0)
    return sg__fail(SG_ERR_INVALID_ARGUMENT, "planner: succ_start[0] is %u, not 0", start[0]);
  if (start[n] != 0 && !succ) return sg__fail(SG_ERR_INVALID_ARGUMENT, "planner: succ is NULL");
  for (uint32_t u = 0; u < n; u++) {
    if (start[u + 1] < start[u])
      return sg__fail(SG_ERR_INVALID_ARGUMENT, "planner: succ_start decreases at node %u", u);
    for (uint32_t e = start[u]; e < start[u + 1]; e++) {
      uint32_t v = succ[e];
      if (v >= n)
        return sg__fail(SG_ERR_INVALID_ARGUMENT,
                        "planner: node %u has successor %u, out of range (%u nodes)", u, v, n);
      if (v == u)
        return sg__fail(SG_ERR_INVALID_ARGUMENT, "planner: node %u has an edge to itself", u);
      if (e > start[u] && succ[e - 1] >= v)
        return sg__fail(SG_ERR_INVALID_ARGUMENT,
                        "planner: successors of node %u are not distinct and ascending", u);
    }
  }
  return SG_OK;
}

static sg_status check_devices(uint32_t n, const uint32_t *device_of, uint32_t device_count) {
  if (!device_of) return SG_OK;
  if (device_count == 0 || device_count > SG__PLAN_MAX_DEVICES)
    return sg__fail(SG_ERR_INVALID_ARGUMENT, "planner: %u devices (1 to %u are supported)",
                    device_count, SG__PLAN_MAX_DEVICES);
  for (uint32_t v = 0; v < n; v++)
    if (device_of[v] >= device_count)
      return sg__fail(SG_ERR_INVALID_ARGUMENT,
                      "planner: node %u is on device %u, out of range (%u devices)", v,
                      device_of[v], device_count);
  return SG_OK;
}

/* The arrays of a schedule with no node, so that backends may index
 * stream_start[0], wait_start[0] and red_start[0] as for any other. */
static sg_status empty_schedule(sg__work *w) {
  sg__schedule *s = w->out;
  s->stream_start = sg__calloc(1, sizeof *s->stream_start);
  s->stream_device = sg__calloc(1, sizeof *s->stream_device);
  s->wait_start = sg__calloc(1, sizeof *s->wait_start);
  s->red_start = sg__calloc(1, sizeof *s->red_start);
  if (!s->stream_start || !s->stream_device || !s->wait_start || !s->red_start)
    return sg__oom(w, "empty schedule");
  s->width_exact = 1;
  s->reduction_exact = 1;
  s->waits_exact = 1;
  return SG_OK;
}

/* Runs the steps; with `streams` 0, only those a graph built from the
 * reduced edges needs (issue order, cover, reduction). */
static sg_status build(uint32_t node_count, const uint32_t *succ_start, const uint32_t *succ,
                       const uint32_t *device_of, uint32_t device_count, unsigned max_streams,
                       const sg__plan_limits *limits, int streams, sg__schedule *out) {
  if (!out) return sg__fail(SG_ERR_INVALID_ARGUMENT, "planner: out is NULL");
  memset(out, 0, sizeof *out);
  if (!limits) return sg__fail(SG_ERR_INVALID_ARGUMENT, "planner: limits is NULL");
  sg_status st = check_input(node_count, succ_start, succ);
  if (!st) st = check_devices(node_count, device_of, device_count);
  if (st) return st;
  /* One device, however it was given, takes the single-device paths. */
  if (!device_of || device_count <= 1) {
    device_of = NULL;
    device_count = 1;
  }

  sg__work w;
  memset(&w, 0, sizeof w);
  w.limits = limits;
  w.out = out;
  w.n = node_count;
  w.edges = node_count ? succ_start[node_count] : 0;
  w.succ_start = succ_start;
  w.succ = succ;
  w.stream_limit = max_streams ? max_streams : SG__PLAN_DEFAULT_STREAMS;
  w.device_of = device_of;
  w.device_count = device_count;
  out->node_count = node_count;
  out->device_count = device_count;
  out->max_streams = w.stream_limit;

  if (node_count == 0) {
    st = empty_schedule(&w);
  } else {
    st = sg__csr_reverse(w.n, succ_start, succ, &w.pred_start, &w.pred);
    if (st) st = sg__oom(&w, "predecessor lists");
    if (!st) st = sg__topo(&w);
    if (!st) st = sg__cover_greedy(&w);
    if (!st) st = sg__cover_paths(&w);
    if (!st) st = sg__cover_augment(&w);
    if (!st) {
      out->width = w.cover_exact ? w.chain_count : w.width_bound;
      out->width_exact = w.cover_exact;
    }
    if (!st) st = sg__reduce(&w);
    if (!st && streams) st = sg__merge(&w);
    if (!st && streams) st = sg__layout(&w);
    if (!st && streams) st = sg__events(&w);
#ifndef NDEBUG
    /* Debug builds prove every plan before a backend trusts it. */
    if (!st && streams) {
      out->streams_planned = 1;
      st = sg__schedule_check(out, succ_start, succ, NULL);
    }
#endif
  }
  if (!st) out->streams_planned = streams;
  sg__work_free(&w);
  if (st) sg__schedule_free(out);
  return st;
}

sg_status sg__schedule_build_ex(uint32_t node_count, const uint32_t *succ_start,
                                const uint32_t *succ, unsigned max_streams,
                                const sg__plan_limits *limits, sg__schedule *out) {
  return build(node_count, succ_start, succ, NULL, 1, max_streams, limits, 1, out);
}

sg_status sg__schedule_build_devices(uint32_t node_count, const uint32_t *succ_start,
                                     const uint32_t *succ, const uint32_t *device_of,
                                     uint32_t device_count, unsigned max_streams,
                                     const sg__plan_limits *limits, sg__schedule *out) {
  sg__plan_limits defaults;
  if (!limits) {
    sg__plan_limits_default(&defaults);
    limits = &defaults;
  }
  return build(node_count, succ_start, succ, device_of, device_count, max_streams, limits, 1,
               out);
}

sg_status sg__schedule_build(uint32_t node_count, const uint32_t *succ_start, const uint32_t *succ,
                             unsigned max_streams, sg__schedule *out) {
  sg__plan_limits limits;
  sg__plan_limits_default(&limits);
  return build(node_count, succ_start, succ, NULL, 1, max_streams, &limits, 1, out);
}

sg_status sg__schedule_build_edges(uint32_t node_count, const uint32_t *succ_start,
                                   const uint32_t *succ, unsigned max_streams,
                                   sg__schedule *out) {
  sg__plan_limits limits;
  sg__plan_limits_default(&limits);
  return build(node_count, succ_start, succ, NULL, 1, max_streams, &limits, 0, out);
}

sg_status sg__schedule_build_edges_devices(uint32_t node_count, const uint32_t *succ_start,
                                           const uint32_t *succ, const uint32_t *device_of,
                                           uint32_t device_count, unsigned max_streams,
                                           sg__schedule *out) {
  sg__plan_limits limits;
  sg__plan_limits_default(&limits);
  return build(node_count, succ_start, succ, device_of, device_count, max_streams, &limits, 0,
               out);
}
