/* Graph mode: applying a node's new parameters to the instantiated graph.
 *
 * First in place, with the exec set-params call of the node's type, on the
 * graph node the build recorded (explicit and capture builds alike). The
 * driver may refuse (a kernel on another device, a copy between different
 * kinds of memory, a memset of another element size than captured, a
 * child graph of another shape) and the route may change (a copy that now
 * has a pageable side); then the graph is rebuilt from the snapshot with
 * the new node and re-instantiated, after waiting for launches in flight,
 * and stats.rebuilds says so. A refusal is never an error; only a failing
 * rebuild is, and it leaves the executable as it was. */
#include "cuda/cuda_call.h"
#include "cuda/cuda_exec.h"

/* Tries the in-place update; cudaSuccess when done. `payload` is the new
 * host-work payload (route SG__ROUTE_HOST_WORK). */
static cudaError_t set_in_place(sg__cuda_state *b, uint32_t index, const sg__node *fresh,
                                sg__cuda_work *payload, const char *fn, sg_status *st) {
  cudaGraphExec_t exec = b->g.exec;
  cudaGraphNode_t node = b->g.nodes[index];
  const char *call = "";
  if (!node) return cudaErrorNotSupported;
  switch ((sg__cuda_route)b->route[index]) {
    case SG__ROUTE_KERNEL:
      return sg__cuda_graph_set_kernel(b, index, &fresh->u.kernel);
    case SG__ROUTE_COPY:
      return SG_CUDA(cudaGraphExecMemcpyNodeSetParams1D(exec, node, fresh->u.copy.dst,
                                                        fresh->u.copy.src, fresh->u.copy.bytes,
                                                        cudaMemcpyDefault));
    case SG__ROUTE_COPY_PAGEABLE:
      return sg__cuda_pageable_copy_set_node(b, &fresh->u.copy, exec, node, &call);
    case SG__ROUTE_MEMSET: {
      struct cudaMemsetParams p;
      sg__cuda_memset_params(&fresh->u.memset, &p);
      return SG_CUDA(cudaGraphExecMemsetNodeSetParams(exec, node, &p));
    }
    case SG__ROUTE_HOST_WORK: {
      struct cudaHostNodeParams p = {sg__cuda_work_run, payload};
      return SG_CUDA(cudaGraphExecHostNodeSetParams(exec, node, &p));
    }
    case SG__ROUTE_STREAM_FN: {
      cudaGraph_t child;
      if ((*st = sg__cuda_stream_fn_capture(b, index, fresh, fn, &child))) return cudaSuccess;
      cudaError_t err = SG_CUDA(cudaGraphExecChildGraphNodeSetParams(exec, node, child));
      cudaGraphDestroy(child);
      return err;
    }
    default:
      return cudaSuccess; /* nothing to change */
  }
}

/* Rebuilds with `fresh` standing in for node `index`. The snapshot keeps
 * the old node until the core moves `fresh` in after this returns, so the
 * builders see `fresh` through a shallow, temporary swap. */
static sg_status rebuild_with(sg__cuda_state *b, uint32_t index, const sg__node *fresh,
                              sg__cuda_route route, sg__cuda_work *payload, const char *fn) {
  sg_status st = sg__cuda_wait_idle(b, fn);
  if (st) return st;
  sg__node *slot = &b->exec->snap.nodes[index];
  sg__node saved = *slot;
  uint8_t saved_route = b->route[index];
  sg__cuda_work *saved_work = b->work[index];
  *slot = *fresh;
  if (!slot->name) slot->name = saved.name; /* keep the node's name in messages */
  b->route[index] = (uint8_t)route;
  b->work[index] = payload;
  st = sg__cuda_graph_rebuild(b, fn);
  *slot = saved;
  if (st) {
    b->route[index] = saved_route;
    b->work[index] = saved_work;
    return st;
  }
  sg__cuda_work_retire(b, saved_work);
  sg__exec_count_rebuild(b->exec);
  return SG_OK;
}

sg_status sg__cuda_graph_update_node(sg__cuda_state *b, uint32_t index, const sg__node *fresh,
                                     sg__cuda_route route, sg__cuda_work *payload,
                                     int *in_place) {
  static const char fn[] = "sg_exec_set";
  *in_place = 0;
  if (route == (sg__cuda_route)b->route[index]) {
    sg_status st = SG_OK;
    cudaError_t err = set_in_place(b, index, fresh, payload, fn, &st);
    if (st) return st;
    if (err == cudaSuccess) {
      if (payload) {
        sg__cuda_work_retire(b, b->work[index]);
        b->work[index] = payload;
      }
      *in_place = 1;
      return SG_OK;
    }
    cudaGetLastError(); /* a refused update is not sticky; do not let it surface later */
  }
  return rebuild_with(b, index, fresh, route, payload, fn);
}
