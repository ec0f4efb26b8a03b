/* Graph mode: applying a node's new parameters to the instantiated graph.
 *
 * First in place, with the exec set-params call of the node's type, on the
 * graph node the build recorded (explicit and capture builds alike). The
 * driver may refuse (a kernel on another device, a copy between different
 * kinds of memory, a memset of another element size than captured, a
 * child graph of another shape), a staged copy may need another ring, and
 * the op may change (a copy that now has a pageable side); then the graph
 * is rebuilt with the new node and re-instantiated, after waiting for
 * launches in flight, and stats.rebuilds says so. A refusal is never an
 * error; only a failing rebuild is, and it leaves the executable as it
 * was. The node's device is current during the set-params call: a graph
 * node keeps the context it was added in (and a kernel's function is looked
 * up in it). */
#include "cuda/cuda_call.h"
#include "cuda/cuda_exec.h"

/* Tries the in-place update: 1 when done, 0 when the graph must be rebuilt
 * instead (the driver refused, or nothing in the graph stands for the node
 * to set); *st is set, and 0 returned, on a failure that is not a refusal.
 * `payload` is the new host-work payload (op SG__OP_HOST_WORK). */
static int set_in_place(sg__cuda_state *b, sg__cuda_graph *g, uint32_t index,
                        const sg__node *fresh, sg__cuda_work *payload, const char *fn,
                        sg_status *st) {
  cudaGraphExec_t exec = g->exec;
  cudaGraphNode_t node = g->nodes[index];
  if (!node) return 0;
  cudaError_t err;
  switch ((sg__cuda_op)b->op[index]) {
    case SG__OP_KERNEL:
      /* A condition's handle is filled in when the graph is built. */
      if (fresh->u.kernel.cond_arg) return 0;
      err = sg__cuda_graph_set_kernel(b, g, index, &fresh->u.kernel);
      break;
    case SG__OP_COPY:
      err = SG_CUDA(cudaGraphExecMemcpyNodeSetParams1D(exec, node, fresh->u.copy.dst,
                                                       fresh->u.copy.src, fresh->u.copy.bytes,
                                                       cudaMemcpyDefault));
      break;
    case SG__OP_STAGED_COPY:
      /* Its pageable side is given per launch; the rest is staged_copy.c's. */
      return sg__cuda_staged_copy_set_in_place(b, index, &b->nodes[index].u.copy, &fresh->u.copy);
    case SG__OP_MEMSET: {
      struct cudaMemsetParams p;
      sg__cuda_memset_params(&fresh->u.memset, &p);
      err = SG_CUDA(cudaGraphExecMemsetNodeSetParams(exec, node, &p));
      break;
    }
    case SG__OP_HOST_WORK: {
      struct cudaHostNodeParams p = {sg__cuda_work_run, payload};
      err = SG_CUDA(cudaGraphExecHostNodeSetParams(exec, node, &p));
      break;
    }
    case SG__OP_COND:
      /* A change inside a body: in place through the body's graph nodes
       * (CUDA takes them as nodes of the instantiated graph); returning 0
       * here rebuilds instead. */
      return sg__cuda_cond_set_in_place(b, g, index, fresh);
    case SG__OP_STREAM_FN:
    case SG__OP_NCCL:
    case SG__OP_PEER_STAGED: {
      cudaGraph_t child;
      if ((*st = sg__cuda_child_graph(b, index, fresh, fn, &child))) return 0;
      err = SG_CUDA(cudaGraphExecChildGraphNodeSetParams(exec, node, child));
      cudaGraphDestroy(child);
      break;
    }
    default:
      return 1; /* nothing to change */
  }
  if (err == cudaSuccess) return 1;
  cudaGetLastError(); /* a refused update is not sticky; do not let it surface later */
  return 0;
}

/* Rebuilds with `fresh` standing in for node `index`: the executable's
 * nodes keep the old parameters until the front end moves `fresh` in after
 * this returns. */
static sg_status rebuild_with(sg__cuda_state *b, uint32_t index, const sg__node *fresh,
                              sg__cuda_op op, sg__cuda_work *payload, const char *fn) {
  sg_status st = sg__cuda_wait_idle(b, fn);
  if (st) return st;
  uint8_t saved_op = b->op[index];
  sg__cuda_work *saved_work = b->work[index];
  b->op[index] = (uint8_t)op;
  b->work[index] = payload;
  sg__cuda_swap swap = {index, fresh};
  st = sg__cuda_graph_rebuild(b, &swap, fn);
  if (st) {
    b->op[index] = saved_op;
    b->work[index] = saved_work;
    return st;
  }
  sg__cuda_work_retire(b, saved_work);
  sg__cuda_staged_copy_collect(b, index); /* rings the new graph does not use */
  sg__exec_count_rebuild(b->exec);
  return SG_OK;
}

sg_status sg__cuda_graph_update_node(sg__cuda_state *b, uint32_t index, const sg__node *fresh,
                                     sg__cuda_op op, sg__cuda_work *payload, int *in_place) {
  static const char fn[] = "sg_exec_set";
  *in_place = 0;
  if (op == (sg__cuda_op)b->op[index]) {
    sg_status st = SG_OK;
    int current = b->device, done = 0;
    cudaError_t err = sg__cuda_switch(&current, b->dev.node_device[index]);
    if (err != cudaSuccess) {
      char where[SG__LABEL_BYTES + 64];
      return sg__cuda_fail(err, "cudaSetDevice (the node's device)",
                           sg__cuda_where(b, fn, index, where));
    }
    done = set_in_place(b, &b->g, index, fresh, payload, fn, &st);
    /* A sampled trace's untraced graph takes the same change; where it
     * refuses, both are rebuilt (the traced one's new parameters are then
     * built in again, which is what it has). */
    if (done && !st && b->plain.exec)
      done = set_in_place(b, &b->plain, index, fresh, payload, fn, &st);
    if (current != b->device) cudaSetDevice(b->device); /* release: the caller's device next */
    if (st) return st;
    if (done) {
      if (payload) {
        sg__cuda_work_retire(b, b->work[index]);
        b->work[index] = payload;
      }
      *in_place = 1;
      return SG_OK;
    }
  }
  return rebuild_with(b, index, fresh, op, payload, fn);
}
