/* The host backend's node bodies: copies are memcpy, memsets fill, kernels
 * run their host twin, callbacks are called. */
#include "host/host_nodes.h"

#include <string.h>

#include "core/error.h"
#include "core/grid_source.h"
#include "core/memory_table.h"
#include "exec/backend_rules.h"
#include "host/host_conditional.h"
#include "host/host_stage_mem.h"
#include "staging/staging.h"

static int real_device_memory(sg_memory_kind kind) { return kind == SG_MEMORY_DEVICE; }

sg_status sg__host_check_node(const sg__node *node, uint32_t index, int on, int exec_device,
                              const char *fn) {
  char label[SG__LABEL_BYTES], where[SG__BACKEND_WHERE_BYTES];
  switch (node->kind) {
    case SG__NODE_KERNEL:
      if (!node->u.kernel.host_twin)
        return sg__fail(SG_ERR_NO_HOST_TWIN, "%s: kernel node %s has no host twin", fn,
                        sg__node_label(node, index, label));
      if (node->u.kernel.grid_arg &&
          real_device_memory(sg__memory_classify(node->u.kernel.grid_words)))
        return sg__fail(SG_ERR_INVALID_ARGUMENT,
                        "%s: kernel node %s reads its grid from CUDA device memory, which the "
                        "host backend cannot reach (allocate the words with "
                        "sg_mem_alloc(SG_BACKEND_HOST, ...))", fn,
                        sg__node_label(node, index, label));
      return SG_OK;
    case SG__NODE_STREAM_FN:
      if (!node->u.stream_fn->host_twin)
        return sg__fail(SG_ERR_NO_HOST_TWIN, "%s: stream-function node %s has no host twin", fn,
                        sg__node_label(node, index, label));
      return SG_OK;
    case SG__NODE_COPY:
      if (real_device_memory(node->u.copy.src_memory) || real_device_memory(node->u.copy.dst_memory))
        return sg__fail(SG_ERR_INVALID_COPY,
                        "%s: copy node %s uses CUDA device memory, which the host backend cannot "
                        "reach (allocate with sg_mem_alloc(SG_BACKEND_HOST, ...))",
                        fn, sg__node_label(node, index, label));
      /* A pageable side makes a staged copy, as on the GPU. */
      if (sg__staging_classify(&sg__host_stage_mem, &node->u.copy))
        return sg__backend_check_staged_device(sg__backend_where(fn, node, index, where), on,
                                               exec_device);
      return SG_OK;
    case SG__NODE_NCCL:
      return sg__fail(SG_ERR_UNSUPPORTED,
                      "%s: NCCL node %s runs on the CUDA backend only (the host backend has no "
                      "communicators)", fn, sg__node_label(node, index, label));
    case SG__NODE_COND:
      return sg__host_cond_check(node, index, on, exec_device, fn);
    case SG__NODE_MEMSET:
      if (real_device_memory(node->u.memset.dst_memory))
        return sg__fail(SG_ERR_INVALID_COPY,
                        "%s: memset node %s writes CUDA device memory, which the host backend "
                        "cannot reach", fn, sg__node_label(node, index, label));
      if (node->u.memset.dst_memory != SG_MEMORY_HOST_DEVICE) return SG_OK;
      return sg__backend_check_memset_reach(sg__backend_where(fn, node, index, where), on,
                                            sg__memory_device(node->u.memset.dst), 0);
    default:
      return SG_OK;
  }
}

sg_status sg__host_run_kernel(const sg__node *node, uint32_t index, const void *cond,
                              char *message, size_t cap) {
  const sg__kernel *k = &node->u.kernel;
  sg_kernel_launch launch = {k->grid, k->block, k->shared_bytes};
  if (!cond && !k->grid_arg) {
    k->host_twin(&launch, k->arg_ptrs);
    return SG_OK;
  }
  void *args[SG_MAX_KERNEL_ARGS];
  sg_grid_ref ref = {NULL, 0, 0, 0, 0};
  sg__grid_args(k, args, &ref);
  if (cond) args[k->cond_arg - 1] = (void *)cond;
  if (k->grid_arg) {
    char label[SG__LABEL_BYTES];
    if (k->grid_arg > k->arg_count || k->arg_sizes[k->grid_arg - 1] != sizeof(sg_grid_ref)) {
      sg__format(message, cap, "kernel node %s: argument %u, its grid source, is no sg_grid_ref",
                 sg__node_label(node, index, label), k->grid_arg - 1);
      return SG_ERR_INVALID_KERNEL_ARGS;
    }
    /* Read now: the node's dependencies, the words' writer among them, are
     * done, and their writes are seen through the lock that ordered this
     * node after them. */
    const volatile unsigned *w = k->grid_words;
    const unsigned words[3] = {w[0], w[1], w[2]};
    if (!sg__grid_resolve(k, words, &ref, &launch.grid)) return SG_OK;
  }
  k->host_twin(&launch, args);
  return SG_OK;
}

sg_status sg__host_run_node(const sg__node *node, uint32_t index, char *message, size_t cap) {
  char label[SG__LABEL_BYTES];
  int rc;
  switch (node->kind) {
    case SG__NODE_COPY:
      memcpy(node->u.copy.dst, node->u.copy.src, node->u.copy.bytes);
      return SG_OK;
    case SG__NODE_MEMSET:
      sg__memset_fill(&node->u.memset);
      return SG_OK;
    case SG__NODE_KERNEL:
      return sg__host_run_kernel(node, index, NULL, message, cap);
    case SG__NODE_HOST:
      rc = node->u.host.fn(node->u.host.user_data);
      break;
    case SG__NODE_STREAM_FN:
      rc = node->u.stream_fn->host_twin(node->u.stream_fn->user_data);
      break;
    default:
      return SG_OK;
  }
  if (rc == 0) return SG_OK;
  sg__format(message, cap, "%s node %s returned %d", sg__node_kind_name(node->kind),
             sg__node_label(node, index, label), rc);
  return SG_ERR_CALLBACK;
}
