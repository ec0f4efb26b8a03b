/* Nodes inside conditional bodies: finding them by handle, naming the way
 * to them, and the copy-on-write change (exec/exec_body.h). */
#include "exec/exec_body.h"

#include <stdio.h>
#include <string.h>

#include "core/error.h"

static int find(const sg__snapshot *snap, uint32_t serial, uint32_t depth, sg__body_path *path) {
  if (depth >= SG_MAX_COND_DEPTH) return 0;
  for (uint32_t i = 0; i < snap->node_count; i++) {
    const sg__node *n = &snap->nodes[i];
    if (n->kind != SG__NODE_COND || !n->u.cond->bodies) continue;
    for (uint32_t b = 0; b < n->u.cond->body_count; b++) {
      path->step[depth].cond = n;
      path->step[depth].index = i;
      path->step[depth].body = b;
      const sg__snapshot *body = &n->u.cond->bodies[b];
      if (body->graph_serial == serial) {
        path->depth = depth + 1;
        path->body = body;
        return 1;
      }
      if (find(body, serial, depth + 1, path)) return 1;
    }
  }
  return 0;
}

int sg__body_find(const sg__snapshot *snap, uint32_t serial, sg__body_path *path) {
  memset(path, 0, sizeof *path);
  return serial != 0 && find(snap, serial, 0, path);
}

const char *sg__body_path_name(const sg__body_path *path, char buf[SG__BODY_PATH_BYTES]) {
  size_t len = 0;
  buf[0] = '\0';
  for (uint32_t d = 0; d < path->depth && len < SG__BODY_PATH_BYTES; d++) {
    char name[SG__COND_BODY_NAME_BYTES];
    int n = snprintf(buf + len, SG__BODY_PATH_BYTES - len, "%s%s", d ? ": " : "",
                     sg__cond_body_name(path->step[d].cond, path->step[d].index,
                                        path->step[d].body, name));
    if (n < 0) break;
    len += (size_t)n;
  }
  return buf;
}

/* A node like `cond` (a conditional node) holding `payload` instead of its
 * own: takes the caller's holder of `payload`, also on failure. */
static sg_status cond_with(const sg__node *cond, sg__cond_node *payload, sg__node *out) {
  if (sg__node_clone(cond, out)) {
    sg__cond_payload_release(payload);
    return SG_ERR_OUT_OF_MEMORY;
  }
  sg__cond_payload_release(out->u.cond); /* the clone's share of the old payload */
  out->u.cond = payload;
  return SG_OK;
}

sg_status sg__body_wrap(const sg__body_path *path, uint32_t index, sg__node *fresh,
                        const char *fn, sg__node *top) {
  memset(top, 0, sizeof *top);
  top->kind = SG__NODE_EMPTY;
  /* From the innermost body out: each level's payload gets the level
   * below's new conditional node. */
  uint32_t d = path->depth - 1;
  sg__cond_node *payload;
  if (sg__cond_payload_replace(path->step[d].cond->u.cond, path->step[d].body, index, fresh,
                               &payload))
    return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory copying the body", fn);
  sg__node made;
  sg_status st = cond_with(path->step[d].cond, payload, &made);
  while (!st && d-- > 0) {
    st = sg__cond_payload_replace(path->step[d].cond->u.cond, path->step[d].body,
                                  path->step[d + 1].index, &made, &payload);
    if (st) {
      sg__node_free(&made);
      break;
    }
    st = cond_with(path->step[d].cond, payload, &made);
  }
  if (st) return sg__fail(SG_ERR_OUT_OF_MEMORY, "%s: out of memory copying the body", fn);
  *top = made;
  return SG_OK;
}
