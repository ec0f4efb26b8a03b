/* Graph mode, explicit build: one graph node per schedule node, added in
 * issue order with the schedule's reduced edges (red_start/red_succ) as
 * dependencies. Streams and events play no part: the edges are the graph.
 * Empty nodes become empty graph nodes (they may join many edges); stream
 * functions, NCCL nodes and copies between GPUs through host memory become
 * child graphs (cuda_stream_fn.c). Each node is added with its device
 * current: a graph node runs in the context current when it was added, so
 * one graph holds nodes of every device. */
#include "core/sys.h"
#include "cuda/cuda_call.h"
#include "cuda/cuda_exec.h"
#include "streamgraph/cond_device.h"

/* Predecessors after reduction, as a compressed list: the schedule keeps
 * successors, and a node is added with its predecessors. */
typedef struct preds {
  uint32_t *start; /* node_count + 1 */
  uint32_t *list;
  uint32_t max;    /* the largest in-degree */
} preds;

static int make_preds(const sg__schedule *s, preds *p) {
  uint32_t n = s->node_count;
  size_t edges = s->red_start[n];
  p->start = sg__calloc((size_t)n + 1, sizeof *p->start);
  p->list = sg__calloc(edges ? edges : 1, sizeof *p->list);
  uint32_t *fill = sg__calloc(n ? n : 1, sizeof *fill);
  if (!p->start || !p->list || !fill) {
    sg__free(p->start);
    sg__free(p->list);
    sg__free(fill);
    return -1;
  }
  for (uint32_t u = 0; u < n; u++)
    for (uint32_t e = s->red_start[u]; e < s->red_start[u + 1]; e++) p->start[s->red_succ[e] + 1]++;
  p->max = 0;
  for (uint32_t v = 0; v < n; v++) {
    if (p->start[v + 1] > p->max) p->max = p->start[v + 1];
    p->start[v + 1] += p->start[v];
  }
  for (uint32_t u = 0; u < n; u++)
    for (uint32_t e = s->red_start[u]; e < s->red_start[u + 1]; e++) {
      uint32_t v = s->red_succ[e];
      p->list[p->start[v] + fill[v]++] = u;
    }
  sg__free(fill);
  return 0;
}

/* Adds node `v` (parameters `node`) with `deps`. A CUDA error of the call
 * that adds it comes back in *err, the call named in *call; anything else
 * (a stream function, a staged copy) as a status with its message. */
static sg_status add_node(sg__cuda_state *b, uint32_t v, const sg__node *node, cudaGraph_t graph,
                          const cudaGraphNode_t *deps, size_t nd, sg__cuda_graph *out,
                          const char *fn, const char **call, cudaError_t *err) {
  cudaGraphNode_t *added = &out->nodes[v];
  switch ((sg__cuda_op)b->op[v]) {
    case SG__OP_KERNEL: {
      struct cudaKernelNodeParams p;
      void *args[SG_MAX_KERNEL_ARGS];
      struct sg_cond_ref ref;
      sg__cuda_cond_kernel_params(b, &node->u.kernel, &p, args, &ref);
      if (b->pdl && b->pdl[v] && nd) { /* graph_pdl.c */
        *err = sg__cuda_graph_add_programmatic(added, graph, deps, nd, &p, call);
        return SG_OK;
      }
      *call = "cudaGraphAddKernelNode";
      *err = SG_CUDA(cudaGraphAddKernelNode(added, graph, deps, nd, &p));
      return SG_OK;
    }
    case SG__OP_COPY:
      *call = "cudaGraphAddMemcpyNode1D";
      *err = SG_CUDA(cudaGraphAddMemcpyNode1D(added, graph, deps, nd, node->u.copy.dst,
                                              node->u.copy.src, node->u.copy.bytes,
                                              cudaMemcpyDefault));
      return SG_OK;
    case SG__OP_COND:
      return sg__cuda_cond_add(b, v, node, graph, deps, nd, added, out, fn);
    case SG__OP_STAGED_COPY:
      return sg__cuda_staged_copy_add_node(b, v, &node->u.copy, graph, deps, nd, added, fn, out);
    case SG__OP_MEMSET: {
      struct cudaMemsetParams p;
      sg__cuda_memset_params(&node->u.memset, &p);
      *call = "cudaGraphAddMemsetNode";
      *err = SG_CUDA(cudaGraphAddMemsetNode(added, graph, deps, nd, &p));
      return SG_OK;
    }
    case SG__OP_HOST_WORK: {
      struct cudaHostNodeParams p = {sg__cuda_work_run, b->work[v]};
      *call = "cudaGraphAddHostNode";
      *err = SG_CUDA(cudaGraphAddHostNode(added, graph, deps, nd, &p));
      return SG_OK;
    }
    case SG__OP_STREAM_FN:
    case SG__OP_NCCL:
    case SG__OP_PEER_STAGED: {
      cudaGraph_t child;
      sg_status st = sg__cuda_child_graph(b, v, node, fn, &child);
      if (st) return st;
      *call = "cudaGraphAddChildGraphNode";
      *err = SG_CUDA(cudaGraphAddChildGraphNode(added, graph, deps, nd, child));
      cudaGraphDestroy(child); /* the node holds its own copy */
      return SG_OK;
    }
    default:
      *call = "cudaGraphAddEmptyNode";
      *err = SG_CUDA(cudaGraphAddEmptyNode(added, graph, deps, nd));
      return SG_OK;
  }
}

sg_status sg__cuda_build_explicit(sg__cuda_state *b, const sg__cuda_swap *swap, const char *fn,
                                  sg__cuda_graph *out) {
  const sg__schedule *s = b->s;
  preds p;
  if (make_preds(s, &p)) return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
  cudaGraphNode_t *deps = sg__calloc(p.max ? p.max : 1, sizeof *deps);
  if (!deps) {
    sg__free(p.start);
    sg__free(p.list);
    return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
  }
  sg_status st = SG_OK;
  cudaError_t err = SG_CUDA(cudaGraphCreate(&out->graph, 0));
  if (err != cudaSuccess) {
    out->graph = NULL;
    st = sg__cuda_fail(err, "cudaGraphCreate", fn);
  }
  if (!st && b->cond_count) st = sg__cuda_cond_handles(b, out->graph, fn);
  /* Traced: every edge u -> v runs from u's "after" event node to v's
   * "before" event node, and a launch's start event node precedes every
   * root, so the events are recorded in the graph's own order. */
  cudaGraphNode_t *trace = out->trace_nodes;
  const sg__cuda_trace_set *set = trace ? &b->tracer.sets[0] : NULL;
  /* With stamps the graph's own edges stay as they are: the start stamp
   * precedes every root, and each node's stamp hangs off the node, off
   * the path to its successors, so tracing lengthens no chain but the
   * first. */
  const int stamps = trace && b->tracer.stamps;
  sg__cuda_stamp_args sa;
  struct cudaKernelNodeParams sp;
  if (!st && stamps) {
    sg__cuda_stamp_params(&b->tracer, 0, 1, &sa, &sp);
    err = SG_CUDA(cudaGraphAddKernelNode(&trace[0], out->graph, NULL, 0, &sp));
    if (err != cudaSuccess) st = sg__cuda_fail(err, "cudaGraphAddKernelNode (trace stamp)", fn);
  } else if (!st && trace) {
    err = SG_CUDA(cudaGraphAddEventRecordNode(&trace[0], out->graph, NULL, 0, set->start));
    if (err != cudaSuccess) st = sg__cuda_fail(err, "cudaGraphAddEventRecordNode (trace)", fn);
  }
  int current = -1, restore = -1;
  if (!st && (err = SG_CUDA(cudaGetDevice(&current))) != cudaSuccess)
    st = sg__cuda_fail(err, "cudaGetDevice", fn);
  restore = current;
  for (uint32_t k = 0; k < s->node_count && !st; k++) {
    uint32_t v = s->order[k];
    size_t nd = 0;
    for (uint32_t e = p.start[v]; e < p.start[v + 1]; e++)
      deps[nd++] = trace && !stamps ? trace[2 + 2 * p.list[e]] : out->nodes[p.list[e]];
    const char *call = "cudaGraphAddEventRecordNode (trace)";
    err = cudaSuccess;
    if (stamps && nd == 0) {
      deps[0] = trace[0];
      nd = 1;
    } else if (trace && !stamps) {
      err = SG_CUDA(cudaGraphAddEventRecordNode(&trace[1 + 2 * v], out->graph,
                                                nd ? deps : &trace[0], nd ? nd : 1,
                                                set->before[v]));
      deps[0] = trace[1 + 2 * v];
      nd = 1;
    }
    if (err == cudaSuccess) {
      call = "cudaSetDevice (the node's device)";
      err = sg__cuda_switch(&current, b->dev.node_device[v]);
    }
    if (err == cudaSuccess)
      st = add_node(b, v, sg__cuda_build_node(b, swap, v), out->graph, deps, nd, out, fn, &call,
                    &err);
    if (!st && err == cudaSuccess && stamps) {
      call = "cudaGraphAddKernelNode (trace stamp)";
      sg__cuda_stamp_params(&b->tracer, 1 + v, 0, &sa, &sp);
      err = SG_CUDA(cudaGraphAddKernelNode(&trace[2 + 2 * v], out->graph, &out->nodes[v], 1, &sp));
    } else if (!st && err == cudaSuccess && trace) {
      call = "cudaGraphAddEventRecordNode (trace)";
      err = SG_CUDA(cudaGraphAddEventRecordNode(&trace[2 + 2 * v], out->graph, &out->nodes[v], 1,
                                                set->after[v]));
    }
    if (!st && err != cudaSuccess) {
      char where[SG__LABEL_BYTES + 64];
      st = sg__cuda_fail(err, call, sg__cuda_where(b, fn, v, where));
    }
  }
  if (restore >= 0 && current != restore) cudaSetDevice(restore);
  sg__free(deps);
  sg__free(p.start);
  sg__free(p.list);
  return st;
}
