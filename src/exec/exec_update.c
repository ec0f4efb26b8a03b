/* Executables: changing parameters after creation (per node, or by
 * re-applying an edited graph), re-planning only when the topology changed. */
#include <stdio.h>
#include <string.h>

#include "core/graph_internal.h"
#include "core/grid_source.h"
#include "core/handles.h"
#include "core/node_memory.h"
#include "core/nvtx.h"
#include "core/sys.h"
#include "exec/exec.h"
#include "exec/exec_body.h"
#include "exec/exec_internal.h"
#include "exec/exec_temps.h"
#include "exec/trace.h"
#include "plan/plan.h"

/* The node a handle names: a node of the top-level graph, or of a
 * conditional body at any depth (body.depth > 0). */
typedef struct target {
  uint32_t index;       /* the top-level node; in a body, the top-level conditional node */
  uint32_t inner;       /* in a body: the node's index there */
  const sg__node *node; /* the node as the executable has it now */
  sg__body_path body;   /* depth 0: top-level */
  const char *fn;       /* how messages start: the function, with the body's path */
  char text[SG__BODY_PATH_BYTES + 64];
} target;

/* Finds the node a handle names in the executable and checks its kind. A
 * handle of the graph the executable was made from, or of the graph last
 * given to sg_exec_update, is accepted, and so is one of a body graph of
 * the executable's conditional nodes. Nothing is formatted for a top-level
 * node unless a check fails: this is the path of every per-batch parameter
 * change. */
static sg_status exec_target(sg_exec *exec, sg_node node, sg__node_kind kind, const char *fn,
                             target *t) {
  const uint32_t serial = (uint32_t)(node.opaque >> 32);
  t->body.depth = 0;
  t->fn = fn;
  uint32_t index;
  if (serial && serial != exec->snap.graph_serial && serial != exec->update_serial &&
      sg__body_find(&exec->snap, serial, &t->body)) {
    char path[SG__BODY_PATH_BYTES];
    snprintf(t->text, sizeof t->text, "%s: %s", fn, sg__body_path_name(&t->body, path));
    t->fn = t->text;
    t->index = t->body.step[0].index;
    sg_status st = sg__node_resolve(node, serial, t->body.body->node_count, t->fn, "node",
                                    &t->inner);
    if (st) return st;
    index = t->inner;
    t->node = &t->body.body->nodes[index];
  } else {
    sg_status st = sg__exec_resolve(exec, node, fn, &t->index);
    if (st) return st;
    index = t->index;
    t->node = &exec->snap.nodes[index];
  }
  const sg__node *n = t->node;
  char label[SG__LABEL_BYTES];
  if (n->kind != kind)
    return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: node %s is a %s node, not a %s node", t->fn,
                    sg__node_label(n, index, label), sg__node_kind_name(n->kind),
                    sg__node_kind_name(kind));
  if (sg__exec_has_failed(exec))
    return sg__fail(SG_ERR_EXEC_FAILED, "%s: node %s: refused: an earlier launch failed", t->fn,
                    sg__node_label(n, index, label));
  return SG_OK;
}

/* Where a descriptor for the target is validated. */
static sg__where where_of(const target *t) {
  return (sg__where){t->fn, NULL, NULL, t->node, t->body.depth ? t->inner : t->index};
}

/* Hands `fresh` to the backend, then moves it into the snapshot (a kernel's
 * replaced argument block is kept as the spare for the next update). */
static sg_status apply(sg_exec *exec, uint32_t index, sg__node *fresh, const char *fn) {
  int in_place = 0;
  /* A descriptor has no field for a kernel's condition argument: the new
   * parameters keep the node's (the backend sees them whole). */
  const sg__node *old = &exec->snap.nodes[index];
  if (fresh->kind == SG__NODE_KERNEL && old->kind == SG__NODE_KERNEL && !fresh->u.kernel.cond_arg) {
    fresh->u.kernel.cond_arg = old->u.kernel.cond_arg;
    fresh->u.kernel.cond_id = old->u.kernel.cond_id;
  }
  sg_status st = fresh->kind == SG__NODE_KERNEL ? sg__grid_keep(&fresh->u.kernel, old, index, fn)
                                                : SG_OK;
  if (!st) st = sg__exec_temps_patch(exec->temps, index, fresh, fn);
  if (st || (st = sg__node_hold_memory(fresh, index, fn))) return st;
  if (sg__nvtx_active()) {
    char title[SG__LABEL_BYTES + 16], label[SG__LABEL_BYTES];
    sg__nvtx_push(SG__NVTX_UPDATE, "update %s node %s", sg__exec_title(exec, title, sizeof title),
                  sg__node_label(&exec->snap.nodes[index], index, label));
    st = exec->ops->update_node(exec->state, index, fresh, &in_place);
    sg__nvtx_pop();
  } else {
    st = exec->ops->update_node(exec->state, index, fresh, &in_place);
  }
  if (st) {
    sg__node_release_memory(fresh);
    return st;
  }
  sg__node_release_memory(&exec->snap.nodes[index]);
  sg__node_replace_keeping(&exec->snap.nodes[index], fresh, &exec->arg_spare);
  exec->param_updates++;
  exec->in_place_updates += in_place != 0;
  return SG_OK;
}

/* A node inside a body: the new parameters go into copies of the payloads
 * on the path (exec/exec_body.h), and the backend gets the new top-level
 * conditional node. Bodies hold no memory (their nodes' blocks are not
 * held) and no temporaries. */
static sg_status apply_in_body(sg_exec *exec, const target *t, sg__node *fresh, const char *fn) {
  if (fresh->kind == SG__NODE_KERNEL) {
    sg_status st = sg__grid_keep(&fresh->u.kernel, t->node, t->inner, t->fn);
    if (st) return st;
  }
  sg__node top;
  sg_status st = sg__body_wrap(&t->body, t->inner, fresh, t->fn, &top);
  if (st) return st;
  st = apply(exec, t->index, &top, fn);
  sg__node_free(&top); /* taken: empty; refused: the copied payloads go */
  return st;
}

static sg_status apply_target(sg_exec *exec, const target *t, sg__node *fresh, const char *fn) {
  return t->body.depth ? apply_in_body(exec, t, fresh, fn) : apply(exec, t->index, fresh, fn);
}

/* Gives a failed update's argument block back as the spare, or frees it. */
static void discard(sg_exec *exec, sg__node *fresh) {
  if (fresh->kind == SG__NODE_KERNEL && !exec->arg_spare.blob && fresh->u.kernel.arg_ptrs) {
    exec->arg_spare = (sg__arg_spare){fresh->u.kernel.arg_ptrs, fresh->u.kernel.arg_blob_bytes};
    fresh->u.kernel.arg_ptrs = NULL;
  }
  sg__node_free(fresh);
}

sg_status sg_exec_set_kernel(sg_exec *exec, sg_node node, const sg_kernel_desc *desc) {
  sg_status st = sg__exec_enter(exec, __func__);
  if (st) return st;
  target t;
  st = exec_target(exec, node, SG__NODE_KERNEL, __func__, &t);
  if (!st) {
    sg__where where = where_of(&t);
    sg__node fresh;
    /* The argument block of the update before is reused: a stream of
     * kernel updates allocates nothing. */
    if (!(st = sg__node_from_kernel_reusing(desc, &where, &exec->arg_spare, &fresh))) {
      if (fresh.u.kernel.programmatic != t.node->u.kernel.programmatic) {
        char label[SG__LABEL_BYTES];
        st = sg__fail(SG_ERR_INVALID_ARGUMENT,
                      "%s: node %s: SG_KERNEL_PROGRAMMATIC is part of the topology (it changes "
                      "the node's edges); edit the graph and call sg_exec_update",
                      t.fn, sg__node_label(t.node, where.index, label));
      } else {
        st = apply_target(exec, &t, &fresh, __func__);
      }
      discard(exec, &fresh);
    }
  }
  sg__exec_leave(exec);
  return st;
}

sg_status sg_exec_set_copy(sg_exec *exec, sg_node node, const sg_copy_desc *desc) {
  sg_status st = sg__exec_enter(exec, __func__);
  if (st) return st;
  target t;
  st = exec_target(exec, node, SG__NODE_COPY, __func__, &t);
  unsigned sides = 0; /* sides that are temporaries (core/access.h); none in a body */
  if (!st && exec->temps && !t.body.depth)
    st = sg__exec_temps_sides(exec->temps, t.index, desc ? desc->bytes : 0, 1, __func__, &sides);
  if (!st) {
    sg__where where = where_of(&t);
    sg__node fresh;
    if (!(st = sides ? sg__node_from_copy_temps(desc, &where, sides, &fresh)
                     : sg__node_from_copy(desc, &where, &fresh))) {
      st = apply_target(exec, &t, &fresh, __func__);
      discard(exec, &fresh);
    }
  }
  sg__exec_leave(exec);
  return st;
}

sg_status sg_exec_set_memset(sg_exec *exec, sg_node node, const sg_memset_desc *desc) {
  sg_status st = sg__exec_enter(exec, __func__);
  if (st) return st;
  target t;
  st = exec_target(exec, node, SG__NODE_MEMSET, __func__, &t);
  unsigned sides = 0;
  if (!st && exec->temps && !t.body.depth) {
    size_t bytes = 0;
    if (desc && __builtin_mul_overflow(desc->count, (size_t)desc->element_size, &bytes))
      bytes = SIZE_MAX;
    st = sg__exec_temps_sides(exec->temps, t.index, bytes, desc ? desc->element_size : 1,
                              __func__, &sides);
  }
  if (!st) {
    sg__where where = where_of(&t);
    sg__node fresh;
    if (!(st = sides ? sg__node_from_memset_temp(desc, &where, &fresh)
                     : sg__node_from_memset(desc, &where, &fresh))) {
      st = apply_target(exec, &t, &fresh, __func__);
      discard(exec, &fresh);
    }
  }
  sg__exec_leave(exec);
  return st;
}

sg_status sg_exec_set_host(sg_exec *exec, sg_node node, const sg_host_desc *desc) {
  sg_status st = sg__exec_enter(exec, __func__);
  if (st) return st;
  target t;
  st = exec_target(exec, node, SG__NODE_HOST, __func__, &t);
  if (!st) {
    sg__where where = where_of(&t);
    sg__node fresh;
    if (!(st = sg__node_from_host(desc, &where, &fresh))) {
      st = apply_target(exec, &t, &fresh, __func__);
      discard(exec, &fresh);
    }
  }
  sg__exec_leave(exec);
  return st;
}

/* A refused descriptor must not be released: the caller still owns its
 * user data. A stream function is a top-level node (graph mode refuses one
 * in a body). */
sg_status sg_exec_set_stream_fn(sg_exec *exec, sg_node node, const sg_stream_fn_desc *desc) {
  sg_status st = sg__exec_enter(exec, __func__);
  if (st) return st;
  uint32_t index;
  st = sg__exec_resolve(exec, node, __func__, &index);
  target t;
  if (!st) st = exec_target(exec, node, SG__NODE_STREAM_FN, __func__, &t);
  if (!st) {
    sg__where where = where_of(&t);
    sg__node fresh;
    if (!(st = sg__node_from_stream_fn(desc, &where, &fresh))) {
      st = apply(exec, t.index, &fresh, __func__);
      /* Taken, `fresh` is left empty; refused, it still holds the descriptor. */
      if (fresh.kind == SG__NODE_STREAM_FN) fresh.u.stream_fn->release = NULL;
      discard(exec, &fresh);
    }
  }
  sg__exec_leave(exec);
  return st;
}

/* NCCL nodes are top-level nodes (no backend runs one in a body). */
sg_status sg_exec_set_nccl(sg_exec *exec, sg_node node, const sg_nccl_desc *desc) {
  sg_status st = sg__exec_enter(exec, __func__);
  if (st) return st;
  uint32_t index;
  st = sg__exec_resolve(exec, node, __func__, &index);
  target t;
  if (!st) st = exec_target(exec, node, SG__NODE_NCCL, __func__, &t);
  if (!st) {
    const sg__node *now = t.node;
    sg__where where = where_of(&t);
    sg__node fresh;
    if (!(st = sg__node_from_nccl(desc, &where, &fresh))) {
      fresh.device = now->device;
      if (!sg__node_same_shape(now, &fresh)) {
        char label[SG__LABEL_BYTES];
        st = sg__fail(SG_ERR_INVALID_ARGUMENT,
                      "%s: node %s: the calls differ in number, ops or communicators from the "
                      "node's (%u calls); only buffers, counts, types, reductions and peers "
                      "change here: edit the graph and call sg_exec_update",
                      __func__, sg__node_label(now, t.index, label), now->u.nccl.call_count);
      } else {
        st = apply(exec, t.index, &fresh, __func__);
      }
      discard(exec, &fresh);
    }
  }
  sg__exec_leave(exec);
  return st;
}

/* Same topology: push each changed node through the backend, in index
 * order. A node the backend refuses stops there: the nodes before it have
 * their new parameters, the rest keep theirs (each node is consistent, and
 * the executable stays usable). */
sg_status sg__exec_update_params(sg_exec *exec, sg__snapshot *fresh, const char *fn) {
  for (uint32_t i = 0; i < fresh->node_count; i++) {
    /* Bound arguments get their addresses first, so that they compare equal. */
    sg_status patched = sg__exec_temps_patch(exec->temps, i, &fresh->nodes[i], "sg_exec_update");
    if (patched) return patched;
    if (sg__node_params_equal(&exec->snap.nodes[i], &fresh->nodes[i])) continue;
    sg_status st = apply(exec, i, &fresh->nodes[i], fn);
    if (st) return st;
  }
  return SG_OK;
}

/* New topology: a new plan and backend state, built beside the old ones,
 * which go only once the new state is complete. A failure (a node this
 * backend cannot run, an allocation, a thread, a CUDA call) leaves the
 * executable exactly as it was, and usable. For that moment both states
 * exist: two sets of worker threads or streams, two sets of graph-mode
 * staging rings (a pool must hold both). */
static sg_status rebuild(sg_exec *exec, sg__snapshot *fresh, const char *fn) {
  sg_plan *plan;
  sg_status st = sg__exec_plan_build(fresh, &exec->options, &plan);
  if (st) return sg__plan_prefix_failure(st, fn);
  if ((st = sg__snapshot_hold_memory(fresh, fn))) {
    sg__plan_free(plan);
    return st;
  }
  /* Temporaries are planned again for the new schedule, in an arena of
   * their own: the old one stays until the old state is gone. */
  sg__exec_temps *temps = NULL;
  if ((st = sg__exec_temps_create(exec->ops, exec->options.device, fresh, plan, fn, &temps))) {
    sg__snapshot_release_memory(fresh);
    sg__plan_free(plan);
    return st;
  }
  /* The kept launches name the old nodes: a traced executable starts a new
   * trace with the new topology. */
  sg__trace *trace = NULL;
  if (exec->trace &&
      (st = sg__trace_new(fresh->node_count, exec->options.trace_launches,
                          exec->options.trace_every, fn, &trace))) {
    sg__exec_temps_free(temps);
    sg__snapshot_release_memory(fresh);
    sg__plan_free(plan);
    return st;
  }
  exec->ops->wait(exec->state); /* nothing of the old state runs while the new one is made */
  if (exec->dump) sg__exec_dump(exec); /* what the old topology ran */
  void *state = NULL;
  st = sg__exec_backend_create(exec, fresh, plan, trace, fn, &state);
  if (st) {
    sg__trace_free(trace);
    sg__exec_temps_free(temps);
    sg__snapshot_release_memory(fresh);
    sg__plan_free(plan); /* `fresh` stays the caller's */
    return st;
  }
  /* The old state goes with the snapshot and plan it was built for; the
   * new one keeps pointing at `fresh`'s nodes, moved into the executable,
   * and times its launches into the new trace. */
  exec->ops->destroy(exec->state);
  sg__exec_temps_free(exec->temps);
  exec->temps = temps;
  sg__trace_free(exec->trace);
  exec->trace = trace;
  sg__snapshot_release_memory(&exec->snap);
  sg__plan_free(exec->plan);
  sg__snapshot_free(&exec->snap);
  exec->snap = *fresh;
  memset(fresh, 0, sizeof *fresh);
  exec->plan = plan;
  exec->state = state;
  sg__mutex_lock(&exec->lock);
  exec->stats.rebuilds++;
  sg__mutex_unlock(&exec->lock);
  return SG_OK;
}

static sg_status update(sg_exec *exec, const sg_graph *graph, const char *fn) {
  sg_status st = sg__handle_check(graph, SG__HANDLE_GRAPH, fn, "graph");
  if (st) return st;
  if (exec->rebuild) sg__exec_rebuild_settle(exec); /* a pending asynchronous one first */
  if (sg__exec_has_failed(exec))
    return sg__fail(SG_ERR_EXEC_FAILED, "%s: refused: an earlier launch failed", fn);
  if ((st = sg__graph_read_begin(graph, fn))) return st;
  sg__snapshot fresh;
  int oom = sg__graph_snapshot(graph, &fresh) != SG_OK;
  const uint32_t serial = graph->serial; /* read while entered */
  sg__graph_read_end(graph);
  if (oom) return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory copying the graph", fn);
  st = sg__snapshot_check_acyclic(&fresh, fn);
  if (!st) {
    uint32_t original_serial = exec->snap.graph_serial;
    if (sg__snapshot_same_topology(&exec->snap, &fresh)) {
      st = sg__exec_update_params(exec, &fresh, fn);
    } else {
      st = rebuild(exec, &fresh, fn);
      /* Handles of the first graph stay valid for the executable. */
      exec->snap.graph_serial = original_serial;
    }
  }
  if (!st) exec->update_serial = serial;
  sg__snapshot_free(&fresh);
  return st;
}

sg_status sg_exec_update(sg_exec *exec, const sg_graph *graph) {
  sg_status st = sg__exec_enter(exec, __func__);
  if (st) return st;
  const int ranges = sg__nvtx_active();
  if (ranges) {
    char title[SG__LABEL_BYTES + 16];
    sg__nvtx_push(SG__NVTX_UPDATE, "sg_exec_update %s", sg__exec_title(exec, title, sizeof title));
  }
  st = update(exec, graph, __func__);
  if (ranges) sg__nvtx_pop();
  sg__exec_leave(exec);
  return st;
}
