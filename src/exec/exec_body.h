/* Internal: nodes inside conditional bodies, as sg_exec_set_* finds and
 * changes them. A handle of a body node names the body graph (its serial)
 * and the node's index there; the executable finds the body among its
 * snapshot's conditional nodes, at any depth, and records the path to it.
 * A change is copy on write: the payloads along the path are copied (every
 * other body and nested payload shared), so that a plan, a launch in flight
 * or a background rebuild keeps the bodies it holds; the front end then
 * hands the backend a new top-level conditional node, as it hands it any
 * changed node. */
#ifndef SG_EXEC_EXEC_BODY_H
#define SG_EXEC_EXEC_BODY_H

#include <stddef.h>
#include <stdint.h>

#include "core/conditional.h"
#include "core/node.h"
#include "core/snapshot.h"

typedef struct sg__body_path {
  uint32_t depth; /* conditional nodes on the path, 1..SG_MAX_COND_DEPTH */
  struct {
    const sg__node *cond; /* the conditional node: in the top-level snapshot (step 0), or in
                             the body of the step before */
    uint32_t index;       /* its index there */
    uint32_t body;        /* which of its bodies the path goes into */
  } step[SG_MAX_COND_DEPTH];
  const sg__snapshot *body; /* the innermost body: the one the handle names */
} sg__body_path;

/* 1 and the path when one conditional node of `snap` (at any depth) has a
 * body whose graph had serial `serial`; 0 otherwise. */
int sg__body_find(const sg__snapshot *snap, uint32_t serial, sg__body_path *path);

/* "body 0 of WHILE node 'w' (#1): body 1 of IF/ELSE node 'x' (#0)", the
 * path from the top, into `buf`; returned. */
#define SG__BODY_PATH_BYTES 1024
const char *sg__body_path_name(const sg__body_path *path, char buf[SG__BODY_PATH_BYTES]);

/* The top-level conditional node of `path` with node `index` of the
 * innermost body replaced by `fresh` (moved in: left an empty node once
 * taken), every payload on the path copied: *top is a node of its own
 * (free it with sg__node_free), ready for the backend's update_node. The
 * snapshot the path was found in is not changed. SG_ERR_OUT_OF_MEMORY with
 * a message naming `fn`. */
sg_status sg__body_wrap(const sg__body_path *path, uint32_t index, sg__node *fresh,
                        const char *fn, sg__node *top);

#endif
