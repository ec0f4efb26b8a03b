/* Pipelines: applying a batch's binds to its instance through the
 * parameter-update path (sg_exec_set_*), so that a batch never re-plans and
 * an instantiated CUDA graph is updated in place.
 *
 * A bind names one field; sg_exec_set_* takes a whole descriptor. The rest
 * of the descriptor is read back from the instance's executable (its
 * snapshot holds the node's current parameters), and every bind of one node
 * is folded into a single update, so that binding both pointers of a copy
 * is one update and never checks a half-changed copy. */
#include <inttypes.h>
#include <stdint.h>
#include <string.h>

#include "core/handles.h"
#include "core/node.h"
#include "core/sys.h"
#include "exec/exec.h"
#include "pipeline/pipeline_internal.h"

static const char *bind_kind_name(sg_pipeline_bind_kind kind) {
  switch (kind) {
    case SG_BIND_COPY_SRC: return "SG_BIND_COPY_SRC";
    case SG_BIND_COPY_DST: return "SG_BIND_COPY_DST";
    case SG_BIND_KERNEL_ARG: return "SG_BIND_KERNEL_ARG";
    case SG_BIND_HOST_DATA: return "SG_BIND_HOST_DATA";
  }
  return "?";
}

static sg__node_kind node_kind_of(sg_pipeline_bind_kind kind) {
  switch (kind) {
    case SG_BIND_COPY_SRC:
    case SG_BIND_COPY_DST: return SG__NODE_COPY;
    case SG_BIND_KERNEL_ARG: return SG__NODE_KERNEL;
    default: return SG__NODE_HOST;
  }
}

/* Checks everything that can be checked before any update is made, so a bad
 * bind leaves the instance untouched. */
static sg_status check_bind(const sg_exec *exec, const sg_pipeline_bind *b, const char *where,
                            uint32_t *index) {
  if (b->kind < SG_BIND_COPY_SRC || b->kind > SG_BIND_HOST_DATA)
    return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: kind %d is not an sg_pipeline_bind_kind",
                    where, (int)b->kind);
  sg_status st = sg__exec_resolve(exec, b->node, where, index);
  if (st) return st;
  const sg__node *n = sg__exec_node(exec, *index);
  char label[SG__LABEL_BYTES];
  sg__node_label(n, *index, label);
  if (n->kind != node_kind_of(b->kind))
    return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: %s needs a %s node; node %s is a %s node",
                    where, bind_kind_name(b->kind), sg__node_kind_name(node_kind_of(b->kind)),
                    label, sg__node_kind_name(n->kind));
  if (b->kind == SG_BIND_HOST_DATA) return SG_OK;
  if (!b->ptr)
    return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: %s of node %s: ptr is NULL", where,
                    bind_kind_name(b->kind), label);
  if (b->kind != SG_BIND_KERNEL_ARG) return SG_OK;
  const sg__kernel *k = &n->u.kernel;
  if (b->arg >= k->arg_count)
    return sg__fail(SG_ERR_INVALID_KERNEL_ARGS, "%s: kernel node %s has %u arguments; bind names "
                    "argument %u", where, label, k->arg_count, b->arg);
  if (b->bytes != k->arg_sizes[b->arg])
    return sg__fail(SG_ERR_INVALID_KERNEL_ARGS, "%s: argument %u of kernel node %s is %zu bytes; "
                    "the bind gives %zu", where, b->arg, label, k->arg_sizes[b->arg], b->bytes);
  return SG_OK;
}

/* One update for node `index`: its current parameters with every bind of
 * that node, from `first` on, folded in. */
static sg_status apply_node(sg_exec *exec, const sg_pipeline_bind *binds, size_t count,
                            size_t first, const uint32_t *indices) {
  uint32_t index = indices[first];
  const sg__node *n = sg__exec_node(exec, index);
  sg_node node = binds[first].node;
  switch (n->kind) {
    case SG__NODE_COPY: {
      const sg__copy *c = &n->u.copy;
      sg_copy_desc d = {c->dst, c->src, c->bytes, c->kind, NULL};
      /* A side in the instance's planned temporaries is given as NULL (it
       * stays the temporary); a bind may still replace the other. */
      unsigned temps = sg__exec_temp_sides(exec, index);
      if (temps & SG__TEMP_DST) d.dst = NULL;
      if (temps & SG__TEMP_SRC) d.src = NULL;
      for (size_t j = first; j < count; j++) {
        if (indices[j] != index) continue;
        if (binds[j].kind == SG_BIND_COPY_SRC) d.src = binds[j].ptr;
        else d.dst = (void *)(uintptr_t)binds[j].ptr;
        if (binds[j].bytes) d.bytes = binds[j].bytes;
      }
      return sg_exec_set_copy(exec, node, &d);
    }
    case SG__NODE_KERNEL: {
      const sg__kernel *k = &n->u.kernel;
      void *args[SG_MAX_KERNEL_ARGS];
      memcpy(args, k->arg_ptrs, k->arg_count * sizeof *args);
      for (size_t j = first; j < count; j++)
        if (indices[j] == index) args[binds[j].arg] = (void *)(uintptr_t)binds[j].ptr;
      sg_kernel_desc d = {k->func, k->func_kind, k->grid, k->block, k->shared_bytes,
                          args, k->arg_sizes, k->arg_count, k->host_twin, NULL,
                          k->programmatic ? SG_KERNEL_PROGRAMMATIC : 0u};
      return sg_exec_set_kernel(exec, node, &d);
    }
    default: {
      sg_host_desc d = {n->u.host.fn, n->u.host.user_data, NULL};
      for (size_t j = first; j < count; j++)
        if (indices[j] == index) d.user_data = (void *)(uintptr_t)binds[j].ptr;
      return sg_exec_set_host(exec, node, &d);
    }
  }
}

/* Wraps the message of a failed update in the context and bind it was for. */
static sg_status wrap(sg_status st, const char *context, size_t bind) {
  char cause[SG_ERROR_MESSAGE_BYTES];
  sg__format(cause, sizeof cause, "%s", sg_last_error());
  return sg__fail(st, "%s, bind %zu: %s", context, bind, cause);
}

/* Small batches (the usual case) need no allocation. */
#define STACK_BINDS 32

sg_status sg__pipeline_apply_binds(sg_exec *exec, const sg_pipeline_bind *binds, size_t count,
                                   const char *context) {
  if (count == 0) return SG_OK;
  uint32_t stack_indices[STACK_BINDS];
  uint32_t *indices = stack_indices;
  if (count > STACK_BINDS) {
    indices = sg__realloc_array(NULL, count, sizeof *indices);
    if (!indices)
      return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory for %zu binds", context, count);
  }
  sg_status st = SG_OK;
  for (size_t i = 0; i < count && !st; i++) {
    char where[SG__LABEL_BYTES];
    sg__format(where, sizeof where, "%s, bind %zu", context, i);
    st = check_bind(exec, &binds[i], where, &indices[i]);
  }
  for (size_t i = 0; i < count && !st; i++) {
    int seen = 0; /* an earlier bind of this node already carried it */
    for (size_t j = 0; j < i && !seen; j++) seen = indices[j] == indices[i];
    if (seen) continue;
    st = apply_node(exec, binds, count, i, indices);
    if (st) st = wrap(st, context, i);
  }
  if (indices != stack_indices) sg__free(indices);
  return st;
}

sg_status sg_pipeline_instance_bind(sg_pipeline_instance *instance, const sg_pipeline_bind *binds,
                                    size_t count) {
  if (!instance) return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: instance is NULL", __func__);
  sg_status st = sg__handle_check(instance->exec, SG__HANDLE_EXEC, __func__, "instance->exec");
  if (st) return st;
  if (count && !binds)
    return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: count is %zu but binds is NULL", __func__,
                    count);
  char context[64];
  sg__format(context, sizeof context, "%s: instance %u", __func__, instance->index);
  return sg__pipeline_apply_binds(instance->exec, binds, count, context);
}
