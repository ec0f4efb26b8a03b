/* Streams mode: conditional nodes evaluated on the host.
 *
 * Each condition is a word of pinned, mapped host memory (one per
 * condition, portable to every device), which a kernel bound to it writes
 * through its sg_cond_ref. A launch first copies the defaults of the
 * conditions with SG_COND_ASSIGN_DEFAULT into their words, in stream order
 * on home, before anything else of the launch runs. When the launch reaches
 * a conditional node, it synchronises the node's stream (whose waits cover
 * the node's dependencies, the condition's producer among them) and reads
 * the word: one synchronisation per evaluation, that is once per IF or
 * SWITCH node and once per WHILE iteration plus one. The chosen body is then
 * enqueued on the same stream, its nodes one after another in a topological
 * order of the body. So a launch of a graph with conditional nodes returns
 * only once its last conditional node has been decided.
 *
 * A kernel whose grid comes from the device (core/grid_source.h) goes the
 * same way: its stream is synchronised once, after a copy of the grid's
 * words, and the live grid is launched. */
#include <stdio.h>
#include <string.h>

#include "core/conditional.h"
#include "core/grid_source.h"
#include "cuda/cuda_call.h"
#include "cuda/cuda_exec.h"
#include "streamgraph/cond_device.h"

sg_status sg__cuda_cond_words_make(sg__cuda_state *b, const char *fn) {
  if (!b->cond_count) return SG_OK;
  const size_t bytes = b->cond_count * sizeof(unsigned);
  void *words = NULL, *defaults = NULL;
  cudaError_t err = SG_CUDA(
      cudaHostAlloc(&words, bytes, cudaHostAllocPortable | cudaHostAllocMapped));
  if (err == cudaSuccess)
    err = SG_CUDA(cudaHostAlloc(&defaults, bytes, cudaHostAllocPortable));
  if (err != cudaSuccess) {
    if (words) cudaFreeHost(words);
    return sg__cuda_fail(err, "cudaHostAlloc (the conditions' words)", fn);
  }
  b->cond_words = words;
  b->cond_defaults = defaults;
  for (uint32_t i = 0; i < b->cond_count; i++)
    b->cond_words[i] = b->cond_defaults[i] = b->cond_info[i].default_value;
  return SG_OK;
}

void sg__cuda_cond_words_free(sg__cuda_state *b) {
  if (b->cond_words) cudaFreeHost(b->cond_words);
  if (b->cond_defaults) cudaFreeHost(b->cond_defaults);
  b->cond_words = NULL;
  b->cond_defaults = NULL;
}

cudaError_t sg__cuda_cond_reset(sg__cuda_state *b, cudaStream_t home, const char **call) {
  *call = "cudaMemcpyAsync (a condition's default)";
  for (uint32_t i = 0; b->cond_words && i < b->cond_count; i++) {
    if (!(b->cond_info[i].flags & SG_COND_ASSIGN_DEFAULT)) continue;
    cudaError_t err = SG_CUDA(cudaMemcpyAsync(&b->cond_words[i], &b->cond_defaults[i],
                                              sizeof(unsigned), cudaMemcpyDefault, home));
    if (err != cudaSuccess) return err;
  }
  return cudaSuccess;
}

static sg_status enqueue_node(sg__cuda_state *b, const sg__node *n, cudaStream_t stream,
                              const char *where, char *msg, size_t cap);

/* Synchronises `stream` and reads condition `id`. */
static sg_status read_cond(sg__cuda_state *b, uint32_t id, cudaStream_t stream,
                           const char *where, unsigned *value, char *msg, size_t cap) {
  cudaError_t err = SG_CUDA(cudaStreamSynchronize(stream));
  if (err != cudaSuccess) {
    sg__cuda_format(msg, cap, err, "cudaStreamSynchronize (reading the condition)", where);
    return SG_ERR_CUDA;
  }
  *value = ((volatile unsigned *)b->cond_words)[id];
  return SG_OK;
}

/* A kernel's grid from the device: the words copied to the host in the
 * stream's order, then one synchronisation of the stream (its waits cover
 * the kernel's dependencies, the words' writer among them). *any: whether
 * any block runs (no dimension is 0). */
static sg_status read_grid(const sg__kernel *k, cudaStream_t stream, const char *where,
                           sg_grid_ref *ref, sg_dim3 *grid, int *any, char *msg, size_t cap) {
  if (k->grid_arg > k->arg_count || k->arg_sizes[k->grid_arg - 1] != sizeof(sg_grid_ref)) {
    snprintf(msg, cap, "%.600s: argument %u, its grid source, is no sg_grid_ref", where,
             k->grid_arg - 1);
    return SG_ERR_INVALID_KERNEL_ARGS;
  }
  unsigned words[3] = {0, 0, 0};
  const char *call = "cudaMemcpyAsync (reading the grid)";
  cudaError_t err = SG_CUDA(cudaMemcpyAsync(words, k->grid_words, sizeof words,
                                            cudaMemcpyDefault, stream));
  if (err == cudaSuccess) {
    call = "cudaStreamSynchronize (reading the grid)";
    err = SG_CUDA(cudaStreamSynchronize(stream));
  }
  if (err != cudaSuccess) {
    sg__cuda_format(msg, cap, err, call, where);
    return SG_ERR_CUDA;
  }
  *any = sg__grid_resolve(k, words, ref, grid);
  return SG_OK;
}

static sg_status enqueue_body(sg__cuda_state *b, const sg__cond_node *p, uint32_t k,
                              cudaStream_t stream, const char *where, char *msg, size_t cap) {
  const sg__snapshot *s = &p->bodies[k];
  if (!p->orders[k]) {
    snprintf(msg, cap, "%.400s: body %u has a cycle", where, k);
    return SG_ERR_CYCLE;
  }
  for (uint32_t i = 0; i < s->node_count; i++) {
    const uint32_t j = p->orders[k][i];
    const sg__node *n = &s->nodes[j];
    char inner[1100], label[SG__LABEL_BYTES];
    snprintf(inner, sizeof inner, "%.600s: body %u: %s node %s", where, k,
             sg__node_kind_name(n->kind), sg__node_label(n, j, label));
    sg_status st = enqueue_node(b, n, stream, inner, msg, cap);
    if (st) return st;
  }
  return SG_OK;
}

static sg_status run_cond(sg__cuda_state *b, const sg__node *n, cudaStream_t stream,
                          const char *where, char *msg, size_t cap) {
  const sg__cond_node *p = n->u.cond;
  unsigned v = 0;
  sg_status st = read_cond(b, p->cond_id, stream, where, &v, msg, cap);
  if (st) return st;
  switch (p->kind) {
    case SG_COND_IF:
      if (v) return enqueue_body(b, p, 0, stream, where, msg, cap);
      return p->body_count == 2 ? enqueue_body(b, p, 1, stream, where, msg, cap) : SG_OK;
    case SG_COND_SWITCH:
      return v < p->body_count ? enqueue_body(b, p, v, stream, where, msg, cap) : SG_OK;
    default:
      while (v) {
        if ((st = enqueue_body(b, p, 0, stream, where, msg, cap))) return st;
        if ((st = read_cond(b, p->cond_id, stream, where, &v, msg, cap))) return st;
      }
      return SG_OK;
  }
}

static sg_status enqueue_node(sg__cuda_state *b, const sg__node *n, cudaStream_t stream,
                              const char *where, char *msg, size_t cap) {
  const char *call = "";
  cudaError_t err = cudaSuccess;
  switch (n->kind) {
    case SG__NODE_COND:
      return run_cond(b, n, stream, where, msg, cap);
    case SG__NODE_KERNEL: {
      const sg__kernel *k = &n->u.kernel;
      void *args[SG_MAX_KERNEL_ARGS];
      void **use = k->arg_ptrs;
      sg_cond_ref ref = {0, NULL};
      sg_grid_ref grid_ref = {NULL, 0, 0, 0, 0};
      sg_dim3 live = k->grid;
      if (k->grid_arg) {
        int any = 0;
        sg_status st = read_grid(k, stream, where, &grid_ref, &live, &any, msg, cap);
        if (st) return st;
        if (!any) return SG_OK; /* no block to run */
        sg__grid_args(k, args, &grid_ref);
        use = args;
      }
      if (k->cond_arg && k->cond_arg <= k->arg_count && k->cond_id < b->cond_count) {
        if (use != args) memcpy(args, k->arg_ptrs, k->arg_count * sizeof *args);
        ref.word = &b->cond_words[k->cond_id];
        args[k->cond_arg - 1] = &ref;
        use = args;
      }
      dim3 grid = {live.x, live.y, live.z}, block = {k->block.x, k->block.y, k->block.z};
      call = "cudaLaunchKernel";
      err = SG_CUDA(cudaLaunchKernel(k->func, grid, block, use, k->shared_bytes, stream));
      break;
    }
    case SG__NODE_COPY:
      call = "cudaMemcpyAsync";
      err = SG_CUDA(cudaMemcpyAsync(n->u.copy.dst, n->u.copy.src, n->u.copy.bytes,
                                    cudaMemcpyDefault, stream));
      break;
    case SG__NODE_MEMSET:
      err = sg__cuda_memset_enqueue(&n->u.memset, stream, &call);
      break;
    default: /* empty; nothing else passes sg__cuda_cond_check */
      return SG_OK;
  }
  if (err == cudaSuccess) return SG_OK;
  sg__cuda_format(msg, cap, err, call, where);
  return SG_ERR_CUDA;
}

sg_status sg__cuda_cond_enqueue(sg__cuda_state *b, uint32_t index, const sg__node *node,
                                cudaStream_t stream, const char *fn, char *msg, size_t cap) {
  char where[SG__LABEL_BYTES + 64];
  sg__cuda_where(b, fn, index, where);
  if (node->kind == SG__NODE_COND) {
    char full[SG__LABEL_BYTES + 96], label[SG__LABEL_BYTES];
    snprintf(full, sizeof full, "%s: %s node %s", fn, sg__cond_kind_name(node->u.cond),
             sg__node_label(node, index, label));
    return enqueue_node(b, node, stream, full, msg, cap);
  }
  return enqueue_node(b, node, stream, where, msg, cap);
}
