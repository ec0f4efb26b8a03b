/* Conditional nodes on the host backend (host/host_conditional.h). */
#include "host/host_conditional.h"

#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "core/sys.h"
#include "exec/backend_rules.h"
#include "host/host_nodes.h"
#include "streamgraph/cond_device.h"

struct sg__host_conds {
  sg__cond_words words;
  sg__cond_info *info;
};

sg_status sg__host_conds_create(const sg__backend_args *args, sg__host_conds **out) {
  *out = NULL;
  if (!args->cond_count) return SG_OK;
  sg__host_conds *c = sg__calloc(1, sizeof *c);
  if (c) c->words.words = sg__calloc(args->cond_count, sizeof *c->words.words);
  if (c) c->info = sg__calloc(args->cond_count, sizeof *c->info);
  if (!c || !c->words.words || !c->info) {
    sg__host_conds_free(c);
    return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory for %u conditions", args->fn,
                    args->cond_count);
  }
  c->words.count = args->cond_count;
  memcpy(c->info, args->conds, args->cond_count * sizeof *c->info);
  for (uint32_t i = 0; i < c->words.count; i++) c->words.words[i] = c->info[i].default_value;
  *out = c;
  return SG_OK;
}

void sg__host_conds_free(sg__host_conds *c) {
  if (!c) return;
  sg__free(c->words.words);
  sg__free(c->info);
  sg__free(c);
}

void sg__host_conds_start(sg__host_conds *c) {
  for (uint32_t i = 0; c && i < c->words.count; i++)
    if (c->info[i].flags & SG_COND_ASSIGN_DEFAULT) c->words.words[i] = c->info[i].default_value;
}

sg_status sg__host_cond_check(const sg__node *node, uint32_t index, int on, int exec_device,
                              const char *fn) {
  const sg__cond_node *p = node->u.cond;
  for (uint32_t b = 0; b < p->body_count; b++) {
    char where[1024], name[SG__COND_BODY_NAME_BYTES];
    snprintf(where, sizeof where, "%.600s: %s", fn, sg__cond_body_name(node, index, b, name));
    sg__snapshot tmp;
    const sg__snapshot *body;
    int made;
    if (sg__cond_body_view(p, b, &tmp, &body, &made))
      return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory", where);
    sg_status st = SG_OK;
    for (uint32_t j = 0; !st && j < body->node_count; j++)
      st = sg__host_check_node(&body->nodes[j], j, sg__backend_node_device(&body->nodes[j], on),
                               exec_device, where);
    if (made) sg__snapshot_free(&tmp);
    if (st) return st;
  }
  return SG_OK;
}

/* A kernel whose argument `cond_arg - 1` is the condition's reference. */
static sg_status run_bound_kernel(const sg__host_conds *c, const sg__node *node, uint32_t index,
                                  char *message, size_t cap) {
  const sg__kernel *k = &node->u.kernel;
  const uint32_t a = k->cond_arg - 1;
  char label[SG__LABEL_BYTES];
  if (a >= k->arg_count || k->arg_sizes[a] != sizeof(sg_cond_ref) || !c ||
      k->cond_id >= c->words.count) {
    sg__format(message, cap,
               "kernel node %s: argument %u, bound to condition #%u, is no sg_cond_ref any more "
               "(the kernel's parameters changed its arguments)",
               sg__node_label(node, index, label), a, k->cond_id);
    return SG_ERR_INVALID_KERNEL_ARGS;
  }
  sg_cond_ref ref = {0, &c->words.words[k->cond_id]};
  return sg__host_run_kernel(node, index, &ref, message, cap);
}

/* Runs body `b` of conditional node `node` once. */
static sg_status run_body(const sg__host_conds *c, sg_exec *exec, const sg__node *node,
                          uint32_t index, uint32_t b, char *message, size_t cap) {
  const sg__cond_node *p = node->u.cond;
  const sg__snapshot *body = &p->bodies[b];
  const uint32_t *order = p->orders[b];
  char name[SG__COND_BODY_NAME_BYTES];
  if (!order) { /* validation refuses a cycle before a backend sees it */
    sg__format(message, cap, "%s has a cycle", sg__cond_body_name(node, index, b, name));
    return SG_ERR_CYCLE;
  }
  for (uint32_t k = 0; k < body->node_count; k++) {
    if (sg__exec_has_failed(exec)) return SG_OK; /* another stream failed: drain */
    const uint32_t j = order[k];
    char inner[SG_ERROR_MESSAGE_BYTES];
    sg_status st = sg__host_cond_run(c, exec, &body->nodes[j], j, inner, sizeof inner);
    if (st) {
      sg__format(message, cap, "%s: %s", sg__cond_body_name(node, index, b, name), inner);
      return st;
    }
  }
  return SG_OK;
}

static sg_status run_cond(const sg__host_conds *c, sg_exec *exec, const sg__node *node,
                          uint32_t index, char *message, size_t cap) {
  const sg__cond_node *p = node->u.cond;
  char label[SG__LABEL_BYTES];
  if (!c || p->cond_id >= c->words.count) {
    sg__format(message, cap, "%s node %s reads condition #%u, which the graph does not have",
               sg__cond_kind_name(p), sg__node_label(node, index, label), p->cond_id);
    return SG_ERR_INVALID_ARGUMENT;
  }
  /* Read when the node runs: its dependencies, the condition's producer
   * among them, are done, and their writes are seen through the lock that
   * ordered this node after them. */
  const volatile unsigned *word = &c->words.words[p->cond_id];
  switch (p->kind) {
    case SG_COND_IF: {
      const unsigned v = *word;
      if (v) return run_body(c, exec, node, index, 0, message, cap);
      return p->body_count == 2 ? run_body(c, exec, node, index, 1, message, cap) : SG_OK;
    }
    case SG_COND_SWITCH: {
      const unsigned v = *word;
      return v < p->body_count ? run_body(c, exec, node, index, v, message, cap) : SG_OK;
    }
    default:
      while (*word && !sg__exec_has_failed(exec)) {
        sg_status st = run_body(c, exec, node, index, 0, message, cap);
        if (st) return st;
      }
      return SG_OK;
  }
}

sg_status sg__host_cond_run(const sg__host_conds *c, sg_exec *exec, const sg__node *node,
                            uint32_t index, char *message, size_t cap) {
  switch (node->kind) {
    case SG__NODE_COND:
      return run_cond(c, exec, node, index, message, cap);
    case SG__NODE_KERNEL:
      if (node->u.kernel.cond_arg) return run_bound_kernel(c, node, index, message, cap);
      break;
    case SG__NODE_HOST:
    case SG__NODE_STREAM_FN: {
      /* The callback may set a condition (sg_cond_set_host). */
      const sg__cond_words *previous = sg__cond_words_enter(c ? &c->words : NULL);
      sg_status st = sg__host_run_node(node, index, message, cap);
      sg__cond_words_leave(previous);
      return st;
    }
    default:
      break;
  }
  return sg__host_run_node(node, index, message, cap);
}
