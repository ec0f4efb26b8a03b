/* Graph mode: conditional nodes as CUDA conditional nodes (the explicit
 * build adds them like any node; the capture build adds them by hand into
 * the graph being captured, as it does staged copies).
 *
 * Each condition that a conditional node reads gets a CUDA conditional
 * handle on the graph being built (default value and SG_COND_ASSIGN_DEFAULT
 * carried over as cudaGraphCondAssignDefault); kernels bound to a condition
 * get {handle, NULL} as their sg_cond_ref, so sg_cond_set calls
 * cudaGraphSetConditional. Bodies are filled node by node with their own
 * edges, on the conditional node's device. What CUDA does not allow in a
 * body (host work, events, NCCL, staged copies of pageable memory, stream
 * functions, another device) is refused when the executable is made, naming
 * the node and the rule. IF and WHILE need CUDA 12.4; IF/ELSE and SWITCH
 * need 12.8: both the runtime the library was built with and the driver are
 * checked.
 *
 * One conditional node at a time: within one graph (the top level or one
 * body) and one device, each conditional node is added after the
 * conditional node added before it, so two conditional nodes of a graph
 * never run at once on a device. A graph whose body lets several
 * conditional nodes run side by side, joined by a later node, can stall for
 * good in the driver (the join never runs, the GPU sits idle); ordered, the
 * random graphs of the tests never do (bench/RESULTS.md, run 25). The build
 * adds nodes in a topological order, so the added edge never closes a
 * cycle; what it costs is the overlap of sibling conditional nodes, which
 * are few in a graph. */
#include <stdio.h>
#include <string.h>

#include "core/conditional.h"
#include "core/memory_table.h"
#include "core/sys.h"
#include "cuda/cuda_call.h"
#include "cuda/cuda_exec.h"
#include "cuda/stage_mem.h"
#include "streamgraph/cond_device.h"

#define NEED_BASIC 12040  /* IF with one body, WHILE */
#define NEED_FULL 12080   /* IF/ELSE, SWITCH */

static int needed_version(const sg__cond_node *p) {
  return (p->kind == SG_COND_IF && p->body_count == 2) || p->kind == SG_COND_SWITCH ? NEED_FULL
                                                                                    : NEED_BASIC;
}

sg_status sg__cuda_conds_init(sg__cuda_state *b, const sg__backend_args *args) {
  b->cond_count = args->cond_count;
  if (!args->cond_count) return SG_OK;
  b->cond_info = sg__calloc(args->cond_count, sizeof *b->cond_info);
  b->cond_handles = sg__calloc(args->cond_count, sizeof *b->cond_handles);
  if (!b->cond_info || !b->cond_handles)
    return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory", args->fn);
  memcpy(b->cond_info, args->conds, args->cond_count * sizeof *b->cond_info);
  return b->mode == SG_MODE_STREAMS ? sg__cuda_cond_words_make(b, args->fn) : SG_OK;
}

void sg__cuda_conds_free(sg__cuda_state *b) {
  sg__cuda_cond_words_free(b);
  sg__free(b->cond_info);
  sg__free(b->cond_handles);
  b->cond_info = NULL;
  b->cond_handles = NULL;
}

/* 1 if a conditional node among `nodes` (bodies included) reads `id`. */
static int cond_read(const sg__node *nodes, uint32_t count, uint32_t id, unsigned depth) {
  for (uint32_t i = 0; i < count; i++) {
    if (nodes[i].kind != SG__NODE_COND) continue;
    const sg__cond_node *p = nodes[i].u.cond;
    if (p->cond_id == id) return 1;
    for (uint32_t k = 0; k < p->body_count && depth < SG_MAX_COND_DEPTH; k++)
      if (cond_read(p->bodies[k].nodes, p->bodies[k].node_count, id, depth + 1)) return 1;
  }
  return 0;
}

sg_status sg__cuda_cond_check_kernel(const sg__cuda_state *b, const sg__kernel *k,
                                     const char *where) {
  if (k->cond_id >= b->cond_count)
    return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s sets condition #%u, which the graph does not have",
                    where, k->cond_id);
  if (b->mode == SG_MODE_GRAPH && !cond_read(b->nodes, b->s->node_count, k->cond_id, 0))
    return sg__fail(SG_ERR_UNSUPPORTED,
                    "%s sets condition #%u, which no conditional node reads: in graph mode a "
                    "condition exists only for the conditional nodes that read it", where,
                    k->cond_id);
  return SG_OK;
}

static sg_status check_version(const sg__cond_node *p, const char *where) {
  const int need = needed_version(p);
  const char *what = need == NEED_FULL ? "IF/ELSE and SWITCH nodes" : "IF and WHILE nodes";
#if !defined(CUDART_VERSION) || CUDART_VERSION < NEED_BASIC
  (void)what;
  return sg__fail(SG_ERR_UNSUPPORTED,
                  "%s: the library was built with a CUDA runtime older than 12.4, which has no "
                  "conditional nodes; rebuild it with CUDA %d.%d or later", where, need / 1000,
                  need % 1000 / 10);
#else
  if (CUDART_VERSION < need)
    return sg__fail(SG_ERR_UNSUPPORTED,
                    "%s: %s need CUDA %d.%d or later; the library was built with CUDA %d.%d",
                    where, what, need / 1000, need % 1000 / 10, CUDART_VERSION / 1000,
                    CUDART_VERSION % 1000 / 10);
  int driver = 0;
  cudaError_t err = SG_CUDA(cudaDriverGetVersion(&driver));
  if (err != cudaSuccess) return sg__cuda_fail(err, "cudaDriverGetVersion", where);
  if (driver < need)
    return sg__fail(SG_ERR_UNSUPPORTED,
                    "%s: %s need a driver for CUDA %d.%d or later; this one supports CUDA %d.%d",
                    where, what, need / 1000, need % 1000 / 10, driver / 1000,
                    driver % 1000 / 10);
  return SG_OK;
#endif
}

/* What a body may hold, node by node, recursively. */
static sg_status check_body_node(const sg__cuda_state *b, const sg__node *n, uint32_t j,
                                 int device, const char *outer) {
  char where[1024], label[SG__LABEL_BYTES];
  snprintf(where, sizeof where, "%.600s: %s node %s", outer, sg__node_kind_name(n->kind),
           sg__node_label(n, j, label));
  if (n->device != SG_DEVICE_DEFAULT && n->device != device)
    return sg__fail(SG_ERR_UNSUPPORTED,
                    "%s runs on device %d, its conditional node on device %d: CUDA runs a "
                    "conditional body in one context", where, n->device, device);
  switch (n->kind) {
    case SG__NODE_EMPTY:
      return SG_OK;
    case SG__NODE_HOST:
      return sg__fail(SG_ERR_UNSUPPORTED,
                      "%s: a host node cannot be in a conditional body in graph mode (CUDA "
                      "allows only kernels, copies, memsets, empty and conditional nodes there); "
                      "set the condition from a kernel, or use the host backend", where);
    case SG__NODE_STREAM_FN:
      return sg__fail(SG_ERR_UNSUPPORTED,
                      "%s: a stream function cannot be in a conditional body in graph mode (its "
                      "captured work may hold what CUDA forbids there)", where);
    case SG__NODE_NCCL:
      return sg__fail(SG_ERR_UNSUPPORTED,
                      "%s: NCCL calls cannot be in a conditional body in graph mode (they span "
                      "devices and need host-side progress)", where);
    case SG__NODE_KERNEL:
      if (!n->u.kernel.func)
        return sg__fail(SG_ERR_UNSUPPORTED, "%s has no CUDA function (func is NULL)", where);
      if (n->u.kernel.shared_bytes > (size_t)b->max_shared_default)
        return sg__fail(SG_ERR_INVALID_LAUNCH,
                        "%s asks for %zu bytes of dynamic shared memory; inside a conditional "
                        "body at most %d (the device's default limit)", where,
                        n->u.kernel.shared_bytes, b->max_shared_default);
      if (n->u.kernel.grid_arg) {
        sg_status st = sg__cuda_grid_check(&n->u.kernel, where);
        if (st) return st;
      }
      return n->u.kernel.cond_arg ? sg__cuda_cond_check_kernel(b, &n->u.kernel, where) : SG_OK;
    case SG__NODE_MEMSET:
      if (n->u.memset.dst_memory != SG_MEMORY_DEVICE && n->u.memset.dst_memory != SG_MEMORY_MANAGED)
        return sg__fail(SG_ERR_UNSUPPORTED,
                        "%s sets host memory, which a host thread does: not possible inside a "
                        "conditional body in graph mode; set device memory", where);
      return SG_OK;
    case SG__NODE_COPY: {
      const sg__copy *c = &n->u.copy;
      if (c->src_memory == SG_MEMORY_HOST_DEVICE || c->dst_memory == SG_MEMORY_HOST_DEVICE)
        return sg__fail(SG_ERR_INVALID_COPY,
                        "%s uses host-backend \"device\" memory, which the CUDA backend cannot "
                        "reach", where);
      if (sg__memory_is_host(c->src_memory) && sg__memory_is_host(c->dst_memory))
        return sg__fail(SG_ERR_UNSUPPORTED,
                        "%s copies host memory to host memory, which a host thread does: not "
                        "possible inside a conditional body in graph mode", where);
      if (sg__staging_classify(&sg__cuda_stage_mem, c))
        return sg__fail(SG_ERR_UNSUPPORTED,
                        "%s has a pageable host side, which is staged through pinned buffers "
                        "by host threads: not possible inside a conditional body in graph "
                        "mode; use pinned memory (sg_mem_alloc)", where);
      return SG_OK;
    }
    case SG__NODE_COND:
      return sg__cuda_cond_check(b, n, j, device, outer);
    default:
      return sg__fail(SG_ERR_UNSUPPORTED, "%s cannot be in a conditional body", where);
  }
}

sg_status sg__cuda_cond_check(const sg__cuda_state *b, const sg__node *node, uint32_t index,
                              int device, const char *fn) {
  const sg__cond_node *p = node->u.cond;
  char where[1024], label[SG__LABEL_BYTES];
  snprintf(where, sizeof where, "%.600s: %s node %s", fn, sg__cond_kind_name(p),
           sg__node_label(node, index, label));
  /* Streams mode decides on the host and needs no CUDA conditional node;
   * it keeps to what a body may hold in graph mode, so that a graph runs
   * the same in both. */
  sg_status st = b->mode == SG_MODE_GRAPH ? check_version(p, where) : SG_OK;
  for (uint32_t k = 0; !st && k < p->body_count; k++) {
    char body[1100];
    snprintf(body, sizeof body, "%.1000s: body %u", where, k);
    const sg__snapshot *s = &p->bodies[k];
    for (uint32_t j = 0; !st && j < s->node_count; j++)
      st = check_body_node(b, &s->nodes[j], j, device, body);
  }
  return st;
}

sg_status sg__cuda_cond_handles(sg__cuda_state *b, cudaGraph_t graph, const char *fn) {
#if defined(CUDART_VERSION) && CUDART_VERSION >= NEED_BASIC
  for (uint32_t id = 0; id < b->cond_count; id++) {
    b->cond_handles[id] = 0;
    if (!cond_read(b->nodes, b->s->node_count, id, 0)) continue;
    cudaGraphConditionalHandle h;
    const sg__cond_info *c = &b->cond_info[id];
    cudaError_t err = SG_CUDA(cudaGraphConditionalHandleCreate(
        &h, graph, c->default_value,
        (c->flags & SG_COND_ASSIGN_DEFAULT) ? cudaGraphCondAssignDefault : 0));
    if (err != cudaSuccess) return sg__cuda_fail(err, "cudaGraphConditionalHandleCreate", fn);
    b->cond_handles[id] = (unsigned long long)h;
  }
  return SG_OK;
#else
  (void)b;
  (void)graph;
  (void)fn;
  return SG_OK;
#endif
}

sg_status sg__cuda_grid_check(const sg__kernel *k, const char *where) {
  const sg_memory_kind kind = sg__memory_classify(k->grid_words);
  if (kind == SG_MEMORY_DEVICE || kind == SG_MEMORY_MANAGED || kind == SG_MEMORY_HOST_PINNED)
    return SG_OK;
  return sg__fail(SG_ERR_INVALID_ARGUMENT,
                  "%s reads its grid from %s at %p, which the GPU cannot read; keep the words "
                  "in device or pinned memory (sg_mem_alloc)", where, sg__memory_kind_text(kind),
                  (const void *)k->grid_words);
}

void sg__cuda_cond_kernel_params(const sg__cuda_state *b, const sg__kernel *k,
                                 struct cudaKernelNodeParams *p, void **args,
                                 sg_cond_ref *ref) {
  sg__cuda_kernel_params(k, p);
  if (!k->cond_arg || k->cond_arg > k->arg_count || k->cond_id >= b->cond_count) return;
  memcpy(args, k->arg_ptrs, k->arg_count * sizeof *args);
  ref->handle = b->cond_handles[k->cond_id];
  ref->word = NULL;
  args[k->cond_arg - 1] = ref;
  p->kernelParams = args;
}

sg_status sg__cuda_cond_launch_kernel(sg__cuda_state *b, uint32_t index, const sg__node *node,
                                      cudaStream_t stream, const char *fn, char *msg,
                                      size_t cap) {
  struct cudaKernelNodeParams p;
  void *args[SG_MAX_KERNEL_ARGS];
  sg_cond_ref ref;
  sg__cuda_cond_kernel_params(b, &node->u.kernel, &p, args, &ref);
  cudaError_t err = SG_CUDA(cudaLaunchKernel(p.func, p.gridDim, p.blockDim, p.kernelParams,
                                             p.sharedMemBytes, stream));
  if (err == cudaSuccess) return SG_OK;
  char where[SG__LABEL_BYTES + 64];
  sg__cuda_format(msg, cap, err, "cudaLaunchKernel", sg__cuda_where(b, fn, index, where));
  return SG_ERR_CUDA;
}

#if defined(CUDART_VERSION) && CUDART_VERSION >= NEED_BASIC
static sg_status add_cond(sg__cuda_state *b, const sg__node *node, uint32_t index,
                          cudaGraph_t graph, const cudaGraphNode_t *deps, size_t nd,
                          cudaGraphNode_t *last_cond, cudaGraphNode_t *added,
                          const char *where, sg__cuda_cond_nodes **record);

/* Fills body graph `g` with the nodes of `s`, each after its predecessors
 * in the body; `record` keeps the graph nodes made (also on failure, for
 * the graph's free). */
static sg_status fill_body(sg__cuda_state *b, cudaGraph_t g, const sg__snapshot *s,
                           const uint32_t *order, const char *outer,
                           sg__cuda_body_nodes *record) {
  const uint32_t n = s->node_count, m = s->edge_count;
  cudaGraphNode_t *made = sg__calloc(n ? n : 1, sizeof *made);
  record->nodes = made;
  record->inner = sg__calloc(n ? n : 1, sizeof *record->inner);
  if (made && record->inner) record->count = n;
  cudaGraphNode_t *deps = sg__calloc(n ? n : 1, sizeof *deps);
  /* Predecessors as a compressed list: pred[pred_start[v] .. pred_start[v+1]). */
  uint32_t *pred_start = sg__calloc((size_t)n + 1, sizeof *pred_start);
  uint32_t *pred = sg__calloc(m ? m : 1, sizeof *pred);
  uint32_t *fill = sg__calloc(n ? n : 1, sizeof *fill);
  if (!made || !record->inner || !deps || !pred_start || !pred || !fill || !order) {
    sg__free(deps);
    sg__free(pred_start);
    sg__free(pred);
    sg__free(fill);
    return sg__fail(order ? SG_ERR_OUT_OF_MEMORY : SG_ERR_CYCLE, "%s: %s", outer,
                    order ? "out of memory" : "the body has a cycle");
  }
  for (uint32_t e = 0; e < m; e++) pred_start[s->succ[e] + 1]++;
  for (uint32_t v = 0; v < n; v++) pred_start[v + 1] += pred_start[v];
  for (uint32_t u = 0; u < n; u++)
    for (uint32_t e = s->succ_start[u]; e < s->succ_start[u + 1]; e++) {
      const uint32_t v = s->succ[e];
      pred[pred_start[v] + fill[v]++] = u;
    }
  sg__free(fill);
  sg_status st = SG_OK;
  cudaGraphNode_t last_cond = NULL;
  for (uint32_t k = 0; k < n && !st; k++) {
    const uint32_t j = order[k];
    size_t nd = 0;
    for (uint32_t e = pred_start[j]; e < pred_start[j + 1]; e++) deps[nd++] = made[pred[e]];
    const sg__node *node = &s->nodes[j];
    char where[1100], label[SG__LABEL_BYTES];
    snprintf(where, sizeof where, "%.600s: %s node %s", outer, sg__node_kind_name(node->kind),
             sg__node_label(node, j, label));
    const char *call = "cudaGraphAddEmptyNode";
    cudaError_t err = cudaSuccess;
    switch (node->kind) {
      case SG__NODE_KERNEL: {
        struct cudaKernelNodeParams p;
        void *args[SG_MAX_KERNEL_ARGS];
        sg_cond_ref ref;
        sg__cuda_cond_kernel_params(b, &node->u.kernel, &p, args, &ref);
        call = "cudaGraphAddKernelNode";
        err = SG_CUDA(cudaGraphAddKernelNode(&made[j], g, deps, nd, &p));
        break;
      }
      case SG__NODE_COPY:
        call = "cudaGraphAddMemcpyNode1D";
        err = SG_CUDA(cudaGraphAddMemcpyNode1D(&made[j], g, deps, nd, node->u.copy.dst,
                                               node->u.copy.src, node->u.copy.bytes,
                                               cudaMemcpyDefault));
        break;
      case SG__NODE_MEMSET: {
        struct cudaMemsetParams p;
        sg__cuda_memset_params(&node->u.memset, &p);
        call = "cudaGraphAddMemsetNode";
        err = SG_CUDA(cudaGraphAddMemsetNode(&made[j], g, deps, nd, &p));
        break;
      }
      case SG__NODE_COND:
        st = add_cond(b, node, j, g, deps, nd, &last_cond, &made[j], outer, &record->inner[j]);
        break;
      default:
        err = SG_CUDA(cudaGraphAddEmptyNode(&made[j], g, deps, nd));
        break;
    }
    if (!st && err != cudaSuccess) st = sg__cuda_fail(err, call, where);
  }
  sg__free(deps);
  sg__free(pred_start);
  sg__free(pred);
  return st;
}

static sg_status add_cond(sg__cuda_state *b, const sg__node *node, uint32_t index,
                          cudaGraph_t graph, const cudaGraphNode_t *deps, size_t nd,
                          cudaGraphNode_t *last_cond, cudaGraphNode_t *added,
                          const char *outer, sg__cuda_cond_nodes **record) {
  const sg__cond_node *p = node->u.cond;
  char where[1024], label[SG__LABEL_BYTES];
  snprintf(where, sizeof where, "%.600s: %s node %s", outer, sg__cond_kind_name(p),
           sg__node_label(node, index, label));
  sg__cuda_cond_nodes *r = sg__calloc(1, sizeof *r);
  if (r && !(r->bodies = sg__calloc(p->body_count, sizeof *r->bodies))) {
    sg__free(r);
    r = NULL;
  }
  if (!r) return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory", where);
  r->body_count = p->body_count;
  *record = r; /* freed with the graph, whole or not */
  struct cudaGraphNodeParams cp;
  memset(&cp, 0, sizeof cp);
  cp.type = cudaGraphNodeTypeConditional;
  cp.conditional.handle = (cudaGraphConditionalHandle)b->cond_handles[p->cond_id];
  cp.conditional.size = p->body_count;
  switch (p->kind) {
    case SG_COND_IF: cp.conditional.type = cudaGraphCondTypeIf; break;
    case SG_COND_WHILE: cp.conditional.type = cudaGraphCondTypeWhile; break;
    default:
#if CUDART_VERSION >= NEED_FULL
      cp.conditional.type = cudaGraphCondTypeSwitch;
      break;
#else
      return sg__fail(SG_ERR_UNSUPPORTED, "%s: SWITCH nodes need CUDA 12.8 or later", where);
#endif
  }
  /* After the conditional node added before this one (the file's head). */
  cudaGraphNode_t *chained = NULL;
  if (*last_cond) {
    int listed = 0;
    for (size_t i = 0; i < nd && !listed; i++) listed = deps[i] == *last_cond;
    if (!listed) {
      if (!(chained = sg__calloc(nd + 1, sizeof *chained)))
        return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory", where);
      if (nd) memcpy(chained, deps, nd * sizeof *deps);
      chained[nd++] = *last_cond;
      deps = chained;
    }
  }
#if CUDART_VERSION >= 13000
  cudaError_t err = SG_CUDA(cudaGraphAddNode(added, graph, deps, NULL, nd, &cp));
#else
  cudaError_t err = SG_CUDA(cudaGraphAddNode(added, graph, deps, nd, &cp));
#endif
  sg__free(chained);
  if (err != cudaSuccess) return sg__cuda_fail(err, "cudaGraphAddNode (conditional)", where);
  *last_cond = *added;
  sg_status st = SG_OK;
  for (uint32_t k = 0; k < p->body_count && !st; k++) {
    char body[1100];
    snprintf(body, sizeof body, "%.1000s: body %u", where, k);
    st = fill_body(b, cp.conditional.phGraph_out[k], &p->bodies[k], p->orders[k], body,
                   &r->bodies[k]);
  }
  return st;
}
#endif

sg_status sg__cuda_cond_add(sg__cuda_state *b, uint32_t index, const sg__node *node,
                            cudaGraph_t graph, const cudaGraphNode_t *deps, size_t nd,
                            cudaGraphNode_t *added, sg__cuda_graph *out, const char *fn) {
#if defined(CUDART_VERSION) && CUDART_VERSION >= NEED_BASIC
  const uint32_t count = b->s->node_count;
  if (!out->cond_nodes) {
    if (!(out->cond_nodes = sg__calloc(count ? count : 1, sizeof *out->cond_nodes)) ||
        !(out->last_cond = sg__calloc(b->dev.count ? b->dev.count : 1, sizeof *out->last_cond))) {
      sg__free(out->cond_nodes);
      out->cond_nodes = NULL;
      return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
    }
    out->cond_node_count = count;
  }
  /* Sibling conditional nodes on different devices keep their overlap. */
  uint32_t device = sg__cuda_device_index(&b->dev, b->dev.node_device[index]);
  if (device >= b->dev.count) device = 0;
  return add_cond(b, node, index, graph, deps, nd, &out->last_cond[device], added, fn,
                  &out->cond_nodes[index]);
#else
  (void)b, (void)index, (void)graph, (void)deps, (void)nd, (void)added, (void)out;
  return check_version(node->u.cond, fn);
#endif
}

static void free_record(sg__cuda_cond_nodes *r) {
  if (!r) return;
  for (uint32_t k = 0; r->bodies && k < r->body_count; k++) {
    sg__cuda_body_nodes *body = &r->bodies[k];
    for (uint32_t j = 0; body->inner && j < body->count; j++) free_record(body->inner[j]);
    sg__free(body->nodes);
    sg__free(body->inner);
  }
  sg__free(r->bodies);
  sg__free(r);
}

void sg__cuda_cond_nodes_free(sg__cuda_graph *g) {
  for (uint32_t i = 0; g->cond_nodes && i < g->cond_node_count; i++)
    free_record(g->cond_nodes[i]);
  sg__free(g->cond_nodes);
  sg__free(g->last_cond);
  g->cond_nodes = NULL;
  g->last_cond = NULL;
  g->cond_node_count = 0;
}

/* Sets what differs between `old` and `fresh` (payloads of one conditional
 * node, the same topology) through `r`: 1 when done, 0 to rebuild. */
static int set_bodies(sg__cuda_state *b, cudaGraphExec_t exec, const sg__cond_node *old,
                      const sg__cond_node *fresh, const sg__cuda_cond_nodes *r) {
  if (old == fresh) return 1; /* shared: nothing changed below */
  if (!r || r->body_count != fresh->body_count || old->body_count != fresh->body_count) return 0;
  for (uint32_t k = 0; k < fresh->body_count; k++) {
    const sg__snapshot *o = &old->bodies[k], *f = &fresh->bodies[k];
    const sg__cuda_body_nodes *made = &r->bodies[k];
    if (o->node_count != f->node_count || made->count != f->node_count) return 0;
    for (uint32_t j = 0; j < f->node_count; j++) {
      const sg__node *was = &o->nodes[j], *now = &f->nodes[j];
      if (was->kind != now->kind) return 0;
      if (now->kind == SG__NODE_COND) {
        if (!set_bodies(b, exec, was->u.cond, now->u.cond, made->inner[j])) return 0;
        continue;
      }
      if (sg__node_params_equal(was, now)) continue;
      cudaError_t err;
      switch (now->kind) {
        case SG__NODE_KERNEL: {
          /* A condition's handle is filled in when the graph is built. */
          if (now->u.kernel.cond_arg) return 0;
          struct cudaKernelNodeParams p;
          sg__cuda_kernel_params(&now->u.kernel, &p);
          err = SG_CUDA(cudaGraphExecKernelNodeSetParams(exec, made->nodes[j], &p));
          break;
        }
        case SG__NODE_COPY:
          err = SG_CUDA(cudaGraphExecMemcpyNodeSetParams1D(exec, made->nodes[j],
                                                           now->u.copy.dst, now->u.copy.src,
                                                           now->u.copy.bytes,
                                                           cudaMemcpyDefault));
          break;
        case SG__NODE_MEMSET: {
          struct cudaMemsetParams p;
          sg__cuda_memset_params(&now->u.memset, &p);
          err = SG_CUDA(cudaGraphExecMemsetNodeSetParams(exec, made->nodes[j], &p));
          break;
        }
        default:
          return 0;
      }
      if (err != cudaSuccess) {
        cudaGetLastError(); /* a refused update is not sticky */
        return 0;
      }
    }
  }
  return 1;
}

int sg__cuda_cond_set_in_place(sg__cuda_state *b, const sg__cuda_graph *g, uint32_t index,
                               const sg__node *fresh) {
  if (fresh->kind != SG__NODE_COND || !g->cond_nodes || index >= g->cond_node_count) return 0;
  return set_bodies(b, g->exec, b->nodes[index].u.cond, fresh->u.cond, g->cond_nodes[index]);
}
