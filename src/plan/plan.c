/* The public plan object: creation from a snapshot, inspection,
 * destruction. The algorithms live in schedule_build.c and the steps it
 * calls; DOT in plan_dot.c; sg_plan_create, which resolves the device's
 * stream limit, in exec/plan_create.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/handles.h"
#include "core/sys.h"
#include "plan/collective_order.h"
#include "plan/plan.h"
#include "plan/plan_internal.h"
#include "plan/schedule_build.h"

/* Copies what inspection needs of the nodes: kinds, and names in one block. */
static sg_status copy_nodes(sg_plan *p, const sg__snapshot *snap) {
  uint32_t n = snap->node_count;
  size_t bytes = 0;
  for (uint32_t i = 0; i < n; i++)
    if (snap->nodes[i].name) bytes += strlen(snap->nodes[i].name) + 1;
  p->kinds = sg__malloc((n ? n : 1) * sizeof *p->kinds);
  p->name_at = sg__malloc((n ? n : 1) * sizeof *p->name_at);
  p->names = sg__malloc(bytes ? bytes : 1);
  p->rank = sg__malloc((n ? n : 1) * sizeof *p->rank);
  if (!p->kinds || !p->name_at || !p->names || !p->rank) return SG_ERR_OUT_OF_MEMORY;
  size_t at = 0;
  for (uint32_t i = 0; i < n; i++) {
    const char *name = snap->nodes[i].name;
    p->kinds[i] = snap->nodes[i].kind;
    p->name_at[i] = name ? (uint32_t)at : SG__UNNAMED;
    if (name) {
      size_t len = strlen(name) + 1;
      memcpy(p->names + at, name, len);
      at += len;
    }
  }
  for (uint32_t i = 0; i < n; i++) p->rank[p->schedule.order[i]] = i;
  return SG_OK;
}

static void free_plan(sg_plan *p) {
  sg__schedule_free(&p->schedule);
  sg__free(p->succ_start);
  sg__free(p->succ);
  sg__free(p->device_of);
  sg__free(p->devices);
  sg__free(p->rank);
  sg__free(p->kinds);
  sg__free(p->name_at);
  sg__free(p->names);
  sg__free(p->implied);
  sg__free(p);
}

/* Keeps the snapshot's edges for sg__plan_complete. */
static sg_status keep_edges(sg_plan *p, const sg__snapshot *snap) {
  size_t n = snap->node_count, m = snap->edge_count;
  p->succ_start = sg__malloc((n + 1) * sizeof *p->succ_start);
  p->succ = sg__malloc((m ? m : 1) * sizeof *p->succ);
  if (!p->succ_start || !p->succ) return SG_ERR_OUT_OF_MEMORY;
  memcpy(p->succ_start, snap->succ_start, (n + 1) * sizeof *p->succ_start);
  if (m) memcpy(p->succ, snap->succ, m * sizeof *p->succ);
  return SG_OK;
}

static int by_ordinal(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

/* The devices the nodes run on (p->devices, ascending) and, when there are
 * several, each node's dense device (p->device_of). */
static sg_status resolve_devices(sg_plan *p, const sg__snapshot *snap, int default_device) {
  uint32_t n = snap->node_count;
  int *ordinal = sg__malloc((n ? n : 1) * sizeof *ordinal);
  p->devices = sg__malloc((n ? n : 1) * sizeof *p->devices);
  if (!ordinal || !p->devices) {
    sg__free(ordinal);
    return SG_ERR_OUT_OF_MEMORY;
  }
  for (uint32_t i = 0; i < n; i++) {
    int d = snap->nodes[i].device;
    ordinal[i] = d == SG_DEVICE_DEFAULT ? default_device : d;
    p->devices[i] = ordinal[i];
  }
  uint32_t count = 0;
  if (n) {
    qsort(p->devices, n, sizeof *p->devices, by_ordinal);
    for (uint32_t i = 0; i < n; i++)
      if (i == 0 || p->devices[i] != p->devices[count - 1]) p->devices[count++] = p->devices[i];
  } else {
    p->devices[count++] = default_device;
  }
  p->device_count = count;
  if (count > 1) {
    p->device_of = sg__malloc(n * sizeof *p->device_of);
    if (!p->device_of) {
      sg__free(ordinal);
      return SG_ERR_OUT_OF_MEMORY;
    }
    /* Dense numbers by binary search in the ascending, distinct ordinals. */
    for (uint32_t i = 0; i < n; i++) {
      uint32_t lo = 0, hi = count;
      while (hi - lo > 1) {
        uint32_t mid = (lo + hi) / 2;
        if (p->devices[mid] <= ordinal[i]) lo = mid;
        else hi = mid;
      }
      p->device_of[i] = lo;
    }
  }
  sg__free(ordinal);
  return SG_OK;
}

static sg_status build_on(const sg__snapshot *snap, unsigned max_streams, int default_device,
                          int deferred, sg_plan *p);

static sg_status build_plan(const sg__snapshot *graph, unsigned max_streams, int default_device,
                            int owned_by_exec, int deferred, sg_plan **out) {
  if (!out) return sg__fail(SG_ERR_INVALID_ARGUMENT, "planner: out is NULL");
  *out = NULL;
  if (!graph) return sg__fail(SG_ERR_INVALID_ARGUMENT, "planner: snapshot is NULL");
  sg_plan *p = sg__calloc(1, sizeof *p);
  if (!p) return sg__fail(SG_ERR_OUT_OF_MEMORY, "planner: out of memory");
  p->graph_serial = graph->graph_serial;
  p->edge_count = graph->edge_count;
  p->owned_by_exec = owned_by_exec != 0;
  p->max_streams = max_streams;
  /* The graph's edges and the implied ones that order NCCL nodes. */
  sg__snapshot snap;
  int owned;
  sg_status st = sg__collective_order(graph, &snap, &owned, &p->implied, &p->implied_count);
  if (st) {
    free_plan(p);
    return st;
  }
  st = build_on(&snap, max_streams, default_device, deferred, p);
  if (owned) {
    sg__free(snap.succ_start);
    sg__free(snap.succ);
  }
  if (st) {
    free_plan(p);
    return st;
  }
  *out = p;
  return SG_OK;
}

/* Plans `snap` into `p` (freed by the caller on failure). */
static sg_status build_on(const sg__snapshot *snap, unsigned max_streams, int default_device,
                          int deferred, sg_plan *p) {
  if (resolve_devices(p, snap, default_device))
    return sg__fail(SG_ERR_OUT_OF_MEMORY, "planner: out of memory resolving devices");
  sg_status st =
      deferred ? sg__schedule_build_edges_devices(snap->node_count, snap->succ_start, snap->succ,
                                                  p->device_of, p->device_count, max_streams,
                                                  &p->schedule)
               : sg__schedule_build_devices(snap->node_count, snap->succ_start, snap->succ,
                                            p->device_of, p->device_count, max_streams, NULL,
                                            &p->schedule);
  if (!st) st = sg__plan_mark_programmatic(p, snap);
  if (!st && copy_nodes(p, snap))
    st = sg__fail(SG_ERR_OUT_OF_MEMORY, "planner: out of memory copying node names");
  if (!st && !p->schedule.streams_planned && keep_edges(p, snap))
    st = sg__fail(SG_ERR_OUT_OF_MEMORY, "planner: out of memory copying the edges");
  if (!st) st = sg__handle_register(p, SG__HANDLE_PLAN, "planner");
  return st;
}

sg_status sg__plan_build(const sg__snapshot *snap, unsigned max_streams, int owned_by_exec,
                         sg_plan **out) {
  return build_plan(snap, max_streams, SG_DEVICE_DEFAULT, owned_by_exec, 0, out);
}

sg_status sg__plan_build_deferred(const sg__snapshot *snap, unsigned max_streams,
                                  int owned_by_exec, sg_plan **out) {
  return build_plan(snap, max_streams, SG_DEVICE_DEFAULT, owned_by_exec, 1, out);
}

sg_status sg__plan_build_on(const sg__snapshot *snap, unsigned max_streams, int default_device,
                            int owned_by_exec, int deferred, sg_plan **out) {
  return build_plan(snap, max_streams, default_device, owned_by_exec, deferred, out);
}

int sg__plan_device(const sg_plan *plan, uint32_t d) {
  return d < plan->device_count ? plan->devices[d] : SG_DEVICE_DEFAULT;
}

sg_status sg__plan_complete(sg_plan *plan) {
  sg__schedule *s = &plan->schedule;
  if (s->streams_planned) return SG_OK;
  sg__schedule full;
  sg_status st = sg__schedule_build_devices(s->node_count, plan->succ_start, plan->succ,
                                            plan->device_of, plan->device_count,
                                            plan->max_streams, NULL, &full);
  if (st) return st;
  /* The planner is deterministic: `full` has the same order and reduced
   * edges. Keep ours (a backend may hold them) and take the rest. */
  uint32_t *order = s->order, *red_start = s->red_start, *red_succ = s->red_succ;
  s->order = full.order;
  s->red_start = full.red_start;
  s->red_succ = full.red_succ;
  full.order = order;
  full.red_start = red_start;
  full.red_succ = red_succ;
  full.programmatic = s->programmatic; /* from the same reduced edges */
  full.programmatic_edge_count = s->programmatic_edge_count;
  s->programmatic = NULL;
  sg__schedule swap = *s;
  *s = full;
  full = swap;
  sg__schedule_free(&full);
  sg__free(plan->succ_start);
  sg__free(plan->succ);
  plan->succ_start = plan->succ = NULL;
  return SG_OK;
}

/* For the public accessors: a deferred plan is planned in full first (the
 * plan is logically constant; only its lazily computed part changes). */
static sg_status ensure_complete(const sg_plan *plan, const char *fn) {
  sg_status st = sg__plan_complete((sg_plan *)plan);
  return st ? sg__plan_prefix_failure(st, fn) : SG_OK;
}

void sg__plan_free(sg_plan *plan) {
  if (!plan) return;
  sg__handle_unregister(plan);
  free_plan(plan);
}

const sg__schedule *sg__plan_schedule(const sg_plan *plan) {
  return plan ? &plan->schedule : NULL;
}

/* Re-reports the current failure with `fn` in front ("planner: x" becomes
 * "sg_plan_create: x"), so the message names the call the user made. */
sg_status sg__plan_prefix_failure(sg_status st, const char *fn) {
  char copy[SG_ERROR_MESSAGE_BYTES];
  const char *msg = sg_last_error();
  if (strncmp(msg, "planner: ", 9) == 0) msg += 9;
  snprintf(copy, sizeof copy, "%s", msg);
  return sg__fail(st, "%s: %s", fn, copy);
}

sg_status sg_plan_destroy(sg_plan *plan) {
  sg_status st = sg__handle_check(plan, SG__HANDLE_PLAN, __func__, "plan");
  if (st) return st;
  if (plan->owned_by_exec)
    return sg__fail(SG_ERR_INVALID_ARGUMENT,
                    "%s: the plan belongs to an executable (sg_exec_get_plan) and is freed with "
                    "it by sg_exec_destroy", __func__);
  sg__plan_free(plan);
  return SG_OK;
}

sg_status sg_plan_get_summary(const sg_plan *plan, sg_plan_summary *summary) {
  sg_status st = sg__handle_check(plan, SG__HANDLE_PLAN, __func__, "plan");
  if (st) return st;
  if ((st = ensure_complete(plan, __func__))) return st;
  if (!summary) return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: summary is NULL", __func__);
  const sg__schedule *s = &plan->schedule;
  memset(summary, 0, sizeof *summary);
  summary->node_count = s->node_count;
  summary->edge_count = plan->edge_count;
  summary->reduced_edge_count = s->reduced_edge_count;
  summary->stream_count = s->stream_count;
  summary->event_count = s->event_count;
  summary->max_streams = s->max_streams;
  summary->width = s->width;
  summary->width_exact = s->width_exact;
  summary->critical_path_nodes = s->critical_path;
  summary->wait_count = s->wait_count;
  summary->chain_count = s->chain_count;
  summary->plan_critical_path_nodes = s->plan_critical_path;
  summary->programmatic_edge_count = s->programmatic_edge_count;
  return SG_OK;
}

sg_status sg_plan_get_node(const sg_plan *plan, sg_node node, sg_plan_node_info *info) {
  sg_status st = sg__handle_check(plan, SG__HANDLE_PLAN, __func__, "plan");
  if (st) return st;
  if ((st = ensure_complete(plan, __func__))) return st;
  if (!info) return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: info is NULL", __func__);
  const sg__schedule *s = &plan->schedule;
  uint32_t i;
  st = sg__node_resolve(node, plan->graph_serial, s->node_count, __func__, "node", &i);
  if (st) return st;
  memset(info, 0, sizeof *info);
  info->stream = s->stream_of[i];
  info->position = s->position[i];
  info->order = plan->rank[i];
  info->wait_count = s->wait_start[i + 1] - s->wait_start[i];
  info->records_event = s->record_event[i] >= 0;
  info->event = s->record_event[i] >= 0 ? (unsigned)s->record_event[i] : 0;
  info->programmatic = s->programmatic && s->programmatic[i];
  return SG_OK;
}

sg_status sg_plan_get_waits(const sg_plan *plan, sg_node node, sg_plan_wait *waits,
                            size_t capacity, size_t *count) {
  sg_status st = sg__handle_check(plan, SG__HANDLE_PLAN, __func__, "plan");
  if (st) return st;
  if ((st = ensure_complete(plan, __func__))) return st;
  if (!count) return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: count is NULL", __func__);
  if (!waits && capacity)
    return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: waits is NULL but capacity is %zu", __func__,
                    capacity);
  const sg__schedule *s = &plan->schedule;
  uint32_t i;
  st = sg__node_resolve(node, plan->graph_serial, s->node_count, __func__, "node", &i);
  if (st) return st;
  size_t n = s->wait_start[i + 1] - s->wait_start[i];
  for (size_t k = 0; k < n && k < capacity; k++) {
    uint32_t event = s->wait_event[s->wait_start[i] + k];
    uint32_t after = s->event_node[event];
    waits[k] = (sg_plan_wait){event, sg__node_make(plan->graph_serial, after), s->stream_of[after]};
  }
  *count = n;
  return SG_OK;
}

sg_status sg_plan_get_stream(const sg_plan *plan, unsigned stream, sg_node *nodes,
                             size_t capacity, size_t *count) {
  sg_status st = sg__handle_check(plan, SG__HANDLE_PLAN, __func__, "plan");
  if (st) return st;
  if ((st = ensure_complete(plan, __func__))) return st;
  if (!count) return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: count is NULL", __func__);
  if (!nodes && capacity)
    return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: nodes is NULL but capacity is %zu", __func__,
                    capacity);
  const sg__schedule *s = &plan->schedule;
  if (stream >= s->stream_count)
    return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: stream %u is out of range (the plan has %u)",
                    __func__, stream, s->stream_count);
  size_t len = s->stream_start[stream + 1] - s->stream_start[stream];
  for (size_t k = 0; k < len && k < capacity; k++)
    nodes[k] = sg__node_make(plan->graph_serial, s->stream_nodes[s->stream_start[stream] + k]);
  *count = len;
  return SG_OK;
}

sg_status sg_plan_get_stream_device(const sg_plan *plan, unsigned stream, int *device) {
  sg_status st = sg__handle_check(plan, SG__HANDLE_PLAN, __func__, "plan");
  if (st) return st;
  if ((st = ensure_complete(plan, __func__))) return st;
  if (!device) return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: device is NULL", __func__);
  const sg__schedule *s = &plan->schedule;
  if (stream >= s->stream_count)
    return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: stream %u is out of range (the plan has %u)",
                    __func__, stream, s->stream_count);
  *device = plan->devices[s->stream_device[stream]];
  return SG_OK;
}

void sg_free(void *ptr) { sg__free(ptr); }
