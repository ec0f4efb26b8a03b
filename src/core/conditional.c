/* Conditional nodes and conditions: the builder calls of
 * streamgraph/conditional.h, the node's payload in its two forms (graph and
 * snapshot: core/conditional.h), and the checks of bodies. */
#include "core/conditional.h"

#include <stdio.h>
#include <string.h>

#include "core/access.h"
#include "core/error.h"
#include "core/graph_internal.h"
#include "core/handles.h"
#include "core/sys.h"
#include "streamgraph/cond_device.h"

/* ---- conditions ---------------------------------------------------------- */

static const sg_graph *root_of(const sg_graph *g) {
  while (g->parent) g = g->parent;
  return g;
}

sg_status sg__cond_resolve(sg_cond cond, uint32_t root_serial, uint32_t count, const char *fn,
                           uint32_t *id) {
  const uint32_t serial = (uint32_t)(cond.opaque >> 32), v = (uint32_t)cond.opaque;
  if (serial == 0 || v == 0)
    return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: cond is not a condition (zero handle)", fn);
  if (serial != root_serial)
    return sg__fail(SG_ERR_FOREIGN_NODE,
                    "%s: condition #%u belongs to another top-level graph (a condition serves "
                    "the graph it was created on and that graph's bodies)", fn, v - 1);
  if (v > count)
    return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: condition #%u is out of range (%u conditions)",
                    fn, v - 1, count);
  *id = v - 1;
  return SG_OK;
}

sg_status sg_graph_cond_create(sg_graph *graph, unsigned default_value, unsigned flags,
                               sg_cond *out) {
  static const char fn[] = "sg_graph_cond_create";
  if (!out) return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: out is NULL", fn);
  out->opaque = 0;
  sg_status st = sg__graph_enter(graph, fn);
  if (st) return st;
  if (graph->parent) {
    st = sg__fail(SG_ERR_INVALID_ARGUMENT,
                  "%s: the graph is a body of a conditional node; create conditions on the "
                  "top-level graph (its bodies use them)", fn);
  } else if (flags & ~SG_COND_ASSIGN_DEFAULT) {
    st = sg__fail(SG_ERR_INVALID_ARGUMENT,
                  "%s: flags 0x%x: only SG_COND_ASSIGN_DEFAULT (0x1) is defined", fn, flags);
  } else if (graph->cond_count >= SG_MAX_CONDS) {
    st = sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: the graph already has %u conditions, the most "
                  "it may (SG_MAX_CONDS)", fn, graph->cond_count);
  } else {
    sg__cond_info *conds =
        sg__realloc_array(graph->conds, (size_t)graph->cond_count + 1, sizeof *conds);
    if (!conds) {
      st = sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
    } else {
      graph->conds = conds;
      conds[graph->cond_count++] = (sg__cond_info){default_value, flags};
      out->opaque = ((uint64_t)graph->serial << 32) | graph->cond_count;
    }
  }
  sg__graph_leave(graph);
  return st;
}

sg_status sg_graph_cond_get(const sg_graph *graph, sg_cond cond, unsigned *default_value,
                            unsigned *flags) {
  static const char fn[] = "sg_graph_cond_get";
  sg_status st = sg__handle_check(graph, SG__HANDLE_GRAPH, fn, "graph");
  if (st) return st;
  st = sg__graph_read_begin(graph, fn);
  if (st) return st;
  const sg_graph *root = root_of(graph);
  uint32_t id = 0;
  st = sg__cond_resolve(cond, root->serial, root->cond_count, fn, &id);
  if (!st) {
    if (default_value) *default_value = root->conds[id].default_value;
    if (flags) *flags = root->conds[id].flags;
  }
  sg__graph_read_end(graph);
  return st;
}

/* ---- setting a condition from a host node -------------------------------- */

static _Thread_local const sg__cond_words *current_words;

const sg__cond_words *sg__cond_words_enter(const sg__cond_words *words) {
  const sg__cond_words *previous = current_words;
  current_words = words;
  return previous;
}

void sg__cond_words_leave(const sg__cond_words *previous) { current_words = previous; }

sg_status sg_cond_set_host(sg_cond cond, unsigned value) {
  static const char fn[] = "sg_cond_set_host";
  const sg__cond_words *w = current_words;
  if (!w)
    return sg__fail(SG_ERR_INVALID_ARGUMENT,
                    "%s: this thread runs no host node of a launch; only a host node's callback "
                    "may set a condition", fn);
  const uint32_t serial = (uint32_t)(cond.opaque >> 32), v = (uint32_t)cond.opaque;
  if (serial == 0 || v == 0)
    return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: cond is not a condition (zero handle)", fn);
  if (v > w->count)
    return sg__fail(SG_ERR_INVALID_ARGUMENT,
                    "%s: condition #%u is not one of the running executable's %u conditions", fn,
                    v - 1, w->count);
  w->words[v - 1] = value;
  return SG_OK;
}

/* ---- conditional nodes --------------------------------------------------- */

static void free_graph_form(sg__cond_node *p) {
  for (uint32_t i = 0; p->graphs && i < p->body_count; i++)
    if (p->graphs[i]) sg__graph_free(p->graphs[i]);
  sg__free(p->graphs);
  sg__free(p);
}

static void free_snapshot_form(sg__cond_node *p) {
  for (uint32_t i = 0; p->bodies && i < p->body_count; i++) sg__snapshot_free(&p->bodies[i]);
  for (uint32_t i = 0; p->orders && i < p->body_count; i++) sg__free(p->orders[i]);
  sg__free(p->bodies);
  sg__free(p->orders);
  sg__free(p);
}

void sg__cond_payload_release(sg__cond_node *p) {
  if (!p) return;
  if (p->graphs) {
    free_graph_form(p);
    return;
  }
  if (atomic_fetch_sub(&p->refs, 1) == 1) free_snapshot_form(p);
}

/* The nodes of `s` in a topological order (Kahn), into *order; *order is
 * NULL when `s` has a cycle. SG_ERR_OUT_OF_MEMORY only. */
static sg_status topo_order(const sg__snapshot *s, uint32_t **order) {
  const uint32_t n = s->node_count;
  *order = NULL;
  uint32_t *indegree = sg__calloc(n ? n : 1, sizeof *indegree);
  uint32_t *queue = sg__malloc((n ? n : 1) * sizeof *queue);
  if (!indegree || !queue) {
    sg__free(indegree);
    sg__free(queue);
    return SG_ERR_OUT_OF_MEMORY;
  }
  for (uint32_t e = 0; e < s->edge_count; e++) indegree[s->succ[e]]++;
  uint32_t head = 0, tail = 0;
  for (uint32_t v = 0; v < n; v++)
    if (!indegree[v]) queue[tail++] = v;
  while (head < tail) {
    uint32_t v = queue[head++];
    for (uint32_t e = s->succ_start[v]; e < s->succ_start[v + 1]; e++)
      if (--indegree[s->succ[e]] == 0) queue[tail++] = s->succ[e];
  }
  sg__free(indegree);
  if (tail != n) {
    sg__free(queue);
    return SG_OK;
  }
  *order = queue;
  return SG_OK;
}

/* A snapshot-form payload with `src`'s kind, condition and body count, its
 * bodies and orders allocated and empty; NULL when out of memory. */
static sg__cond_node *payload_like(const sg__cond_node *src) {
  sg__cond_node *p = sg__calloc(1, sizeof *p);
  if (!p) return NULL;
  atomic_init(&p->refs, 1);
  p->kind = src->kind;
  p->cond_id = src->cond_id;
  p->body_count = src->body_count;
  p->bodies = sg__calloc(src->body_count, sizeof *p->bodies);
  p->orders = sg__calloc(src->body_count, sizeof *p->orders);
  if (p->bodies && p->orders) return p;
  free_snapshot_form(p);
  return NULL;
}

sg_status sg__cond_payload_clone(sg__cond_node *src, sg__cond_node **dst) {
  if (!src->graphs) { /* immutable: shared */
    atomic_fetch_add(&src->refs, 1);
    *dst = src;
    return SG_OK;
  }
  sg__cond_node *p = payload_like(src);
  if (!p) return SG_ERR_OUT_OF_MEMORY;
  for (uint32_t i = 0; i < src->body_count; i++) {
    if (sg__graph_snapshot(src->graphs[i], &p->bodies[i])) goto oom;
    if (topo_order(&p->bodies[i], &p->orders[i])) goto oom;
  }
  *dst = p;
  return SG_OK;
oom:
  free_snapshot_form(p);
  return SG_ERR_OUT_OF_MEMORY;
}

sg_status sg__cond_payload_replace(const sg__cond_node *src, uint32_t body, uint32_t index,
                                   sg__node *fresh, sg__cond_node **out) {
  *out = NULL;
  sg__cond_node *p = payload_like(src);
  if (!p) return SG_ERR_OUT_OF_MEMORY;
  for (uint32_t b = 0; b < src->body_count; b++) {
    if (sg__snapshot_copy(&src->bodies[b], &p->bodies[b])) goto oom;
    /* Only parameters change: the topological order stays. */
    if (src->orders[b]) {
      const size_t n = src->bodies[b].node_count;
      if (!(p->orders[b] = sg__malloc(n ? n * sizeof *p->orders[b] : 1))) goto oom;
      if (n) memcpy(p->orders[b], src->orders[b], n * sizeof *p->orders[b]);
    }
  }
  sg__node_replace(&p->bodies[body].nodes[index], fresh);
  *out = p;
  return SG_OK;
oom:
  free_snapshot_form(p);
  return SG_ERR_OUT_OF_MEMORY;
}

sg_status sg__cond_body_view(const sg__cond_node *p, uint32_t body, sg__snapshot *tmp,
                             const sg__snapshot **view, int *made) {
  *made = 0;
  if (!p->graphs) {
    *view = &p->bodies[body];
    return SG_OK;
  }
  sg_status st = sg__graph_snapshot_shallow(p->graphs[body], tmp);
  if (st) return st;
  *made = 1;
  *view = tmp;
  return SG_OK;
}

int sg__cond_same_shape(const sg__cond_node *a, const sg__cond_node *b) {
  if (a == b) return 1;
  if (!a->bodies || !b->bodies || a->kind != b->kind || a->cond_id != b->cond_id ||
      a->body_count != b->body_count)
    return 0;
  for (uint32_t k = 0; k < a->body_count; k++)
    if (!sg__snapshot_same_topology(&a->bodies[k], &b->bodies[k])) return 0;
  return 1;
}

const char *sg__cond_kind_name(const sg__cond_node *p) {
  switch (p->kind) {
    case SG_COND_IF: return p->body_count == 2 ? "IF/ELSE" : "IF";
    case SG_COND_WHILE: return "WHILE";
    default: return "SWITCH";
  }
}

const char *sg__cond_body_name(const sg__node *node, uint32_t index, uint32_t body,
                               char buf[SG__COND_BODY_NAME_BYTES]) {
  char label[SG__LABEL_BYTES];
  snprintf(buf, SG__COND_BODY_NAME_BYTES, "body %u of %s node %s", body,
           sg__cond_kind_name(node->u.cond), sg__node_label(node, index, label));
  return buf;
}

sg_status sg__cond_check_bodies(const sg__snapshot *snap, const char *fn) {
  for (uint32_t i = 0; i < snap->node_count; i++) {
    const sg__node *node = &snap->nodes[i];
    if (node->kind != SG__NODE_COND) continue;
    const sg__cond_node *p = node->u.cond;
    for (uint32_t b = 0; b < p->body_count; b++) {
      char where[1024], body[SG__COND_BODY_NAME_BYTES];
      snprintf(where, sizeof where, "%.600s: %s", fn, sg__cond_body_name(node, i, b, body));
      sg__snapshot tmp;
      const sg__snapshot *view;
      int made;
      if (sg__cond_body_view(p, b, &tmp, &view, &made))
        return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory", where);
      /* Temporaries are placed by the top-level executable's plan, which
       * sees a conditional node as one node: a body cannot have its own. */
      sg_status st = view->access.temp_count
                         ? sg__fail(SG_ERR_UNSUPPORTED,
                                    "%s has %u temporaries (sg_graph_add_temp); a conditional "
                                    "body cannot have temporaries yet: use memory of your own",
                                    where, view->access.temp_count)
                         : sg__snapshot_check_acyclic(view, where);
      if (made) sg__snapshot_free(&tmp);
      if (st) return st;
    }
  }
  return SG_OK;
}

static sg_status check_desc(const sg_graph *graph, const sg_cond_node_desc *d, const char *fn) {
  if (d->kind != SG_COND_IF && d->kind != SG_COND_WHILE && d->kind != SG_COND_SWITCH)
    return sg__fail(SG_ERR_INVALID_ARGUMENT,
                    "%s: kind %d is not SG_COND_IF, SG_COND_WHILE or SG_COND_SWITCH", fn,
                    (int)d->kind);
  if (d->kind == SG_COND_IF && (d->body_count < 1 || d->body_count > 2))
    return sg__fail(SG_ERR_INVALID_ARGUMENT,
                    "%s: an IF node has 1 body (or 2: IF/ELSE), not %u", fn, d->body_count);
  if (d->kind == SG_COND_WHILE && d->body_count != 1)
    return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: a WHILE node has 1 body, not %u", fn,
                    d->body_count);
  if (d->kind == SG_COND_SWITCH && (d->body_count < 1 || d->body_count > SG_MAX_SWITCH_BODIES))
    return sg__fail(SG_ERR_INVALID_ARGUMENT,
                    "%s: a SWITCH node has 1 to %u bodies (SG_MAX_SWITCH_BODIES), not %u", fn,
                    SG_MAX_SWITCH_BODIES, d->body_count);
  if (graph->depth >= SG_MAX_COND_DEPTH)
    return sg__fail(SG_ERR_INVALID_ARGUMENT,
                    "%s: the graph is a body %u conditional nodes deep, the most there may be "
                    "(SG_MAX_COND_DEPTH)", fn, graph->depth);
  return SG_OK;
}

/* A payload in graph form with `count` empty bodies of `graph`. */
static sg_status new_bodies(sg_graph *graph, const sg_cond_node_desc *d, uint32_t cond_id,
                            const char *fn, sg__cond_node **out) {
  sg__cond_node *p = sg__calloc(1, sizeof *p);
  if (p) p->graphs = sg__calloc(d->body_count, sizeof *p->graphs);
  if (!p || !p->graphs) {
    sg__free(p);
    return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
  }
  atomic_init(&p->refs, 1);
  p->kind = d->kind;
  p->cond_id = cond_id;
  p->body_count = d->body_count;
  for (uint32_t i = 0; i < d->body_count; i++) {
    sg_graph *body;
    if (sg_graph_create(&body)) {
      free_graph_form(p);
      return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory creating body %u", fn, i);
    }
    body->parent = graph;
    body->root_serial = graph->root_serial;
    body->depth = graph->depth + 1;
    p->graphs[i] = body;
  }
  *out = p;
  return SG_OK;
}

sg_status sg_graph_add_conditional(sg_graph *graph, const sg_cond_node_desc *desc,
                                   const sg_node *deps, size_t dep_count, sg_node *out,
                                   sg_graph **bodies) {
  static const char fn[] = "sg_graph_add_conditional";
  if (!desc) return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: desc is NULL", fn);
  if (!bodies) return sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: bodies is NULL", fn);
  sg_status st = sg__graph_enter(graph, fn);
  if (st) return st;
  const sg_graph *root = root_of(graph);
  uint32_t cond_id = 0;
  st = check_desc(graph, desc, fn);
  if (!st) st = sg__cond_resolve(desc->cond, graph->root_serial, root->cond_count, fn, &cond_id);
  sg__where where = {fn, "conditional", desc->name, NULL, graph->node_count};
  sg__node node;
  if (!st) st = sg__node_empty(desc->name, &where, &node);
  sg__cond_node *p = NULL;
  if (!st) {
    st = new_bodies(graph, desc, cond_id, fn, &p);
    if (st) sg__node_free(&node);
  }
  if (!st) {
    node.kind = SG__NODE_COND;
    node.u.cond = p;
    st = sg__graph_add_node(graph, &node, deps, dep_count, out, fn); /* frees it on failure */
  }
  if (!st)
    for (uint32_t i = 0; i < desc->body_count; i++) bodies[i] = p->graphs[i];
  sg__graph_leave(graph);
  return st;
}

sg_status sg_graph_kernel_bind_cond(sg_graph *graph, sg_node kernel, unsigned arg_index,
                                    sg_cond cond) {
  static const char fn[] = "sg_graph_kernel_bind_cond";
  sg_status st = sg__graph_enter(graph, fn);
  if (st) return st;
  uint32_t index = 0, id = 0;
  st = sg__node_resolve(kernel, graph->serial, graph->node_count, fn, "kernel", &index);
  char label[SG__LABEL_BYTES];
  sg__node *n = st ? NULL : &graph->nodes[index];
  if (!st && n->kind != SG__NODE_KERNEL)
    st = sg__fail(SG_ERR_INVALID_ARGUMENT, "%s: node %s is a %s node, not a kernel node", fn,
                  sg__node_label(n, index, label), sg__node_kind_name(n->kind));
  if (!st && arg_index >= n->u.kernel.arg_count)
    st = sg__fail(SG_ERR_INVALID_KERNEL_ARGS, "%s: kernel %s has %u arguments, so none at index %u",
                  fn, sg__node_label(n, index, label), n->u.kernel.arg_count, arg_index);
  if (!st && n->u.kernel.arg_sizes[arg_index] != sizeof(sg_cond_ref))
    st = sg__fail(SG_ERR_INVALID_KERNEL_ARGS,
                  "%s: argument %u of kernel %s is %zu bytes; a condition argument is an "
                  "sg_cond_ref (streamgraph/cond_device.h), %zu bytes", fn, arg_index,
                  sg__node_label(n, index, label), n->u.kernel.arg_sizes[arg_index],
                  sizeof(sg_cond_ref));
  if (!st) {
    const sg_graph *root = root_of(graph);
    st = sg__cond_resolve(cond, graph->root_serial, root->cond_count, fn, &id);
  }
  if (!st) {
    n->u.kernel.cond_arg = arg_index + 1;
    n->u.kernel.cond_id = id;
  }
  sg__graph_leave(graph);
  return st;
}
