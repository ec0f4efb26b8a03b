/* Internal: conditional nodes and conditions (streamgraph/conditional.h).
 *
 * In a graph, a conditional node's payload holds the body graphs themselves
 * (live sg_graph objects the node owns, which the caller fills). A snapshot
 * of the node (sg__node_clone) holds deep snapshots of the bodies instead,
 * each with a topological order, and is immutable: its copies share it
 * through a count. */
#ifndef SG_CORE_CONDITIONAL_H
#define SG_CORE_CONDITIONAL_H

#include <stdatomic.h>
#include <stdint.h>

#include "core/snapshot.h"
#include "streamgraph/conditional.h"

typedef struct sg__cond_info {
  unsigned default_value;
  unsigned flags;          /* SG_COND_ASSIGN_DEFAULT or 0 */
} sg__cond_info;

typedef struct sg__cond_node {
  atomic_long refs;        /* copies sharing it (snapshot form only; 1 in graph form) */
  sg_cond_kind kind;
  uint32_t cond_id;        /* index into the top-level graph's conditions */
  uint32_t body_count;
  sg_graph **graphs;       /* graph form: the bodies, owned; NULL in snapshot form */
  sg__snapshot *bodies;    /* snapshot form: deep snapshots; NULL in graph form */
  uint32_t **orders;       /* snapshot form: each body's nodes in topological order,
                              NULL for a body with a cycle (validation refuses it) */
} sg__cond_node;

/* Clones a payload for sg__node_clone: graph form becomes snapshot form,
 * snapshot form is shared. SG_ERR_OUT_OF_MEMORY without a message. */
sg_status sg__cond_payload_clone(sg__cond_node *src, sg__cond_node **dst);
/* Copy on write of a snapshot-form payload: a new payload (*out, one
 * holder) equal to `payload` except that node `index` of body `body` is
 * `fresh`, moved in (sg__node_replace: it keeps the old node's name when
 * `fresh` has none, and its device). The other nodes are cloned, nested
 * payloads shared, so `payload` and whoever holds it (a plan, a launch in
 * flight, a background rebuild) keep what they had. On failure `fresh` is
 * untouched. SG_ERR_OUT_OF_MEMORY without a message. */
sg_status sg__cond_payload_replace(const sg__cond_node *payload, uint32_t body, uint32_t index,
                                   sg__node *fresh, sg__cond_node **out);
/* Drops one holder; the last frees the bodies (graph form: destroys them). */
void sg__cond_payload_release(sg__cond_node *payload);

/* Body `body` of a conditional node as a snapshot, in either form: *view is
 * the stored one, or `tmp` made shallow from the body graph (free it with
 * sg__snapshot_free when *made is 1). SG_ERR_OUT_OF_MEMORY without a message. */
sg_status sg__cond_body_view(const sg__cond_node *payload, uint32_t body, sg__snapshot *tmp,
                             const sg__snapshot **view, int *made);

/* Checks every body of every conditional node of `snap` (cycles, and the
 * rules of streamgraph/conditional.h), recursively; messages start with
 * `fn` and name the node and the body. */
sg_status sg__cond_check_bodies(const sg__snapshot *snap, const char *fn);

/* 1 when two snapshot-form payloads run the same shape: the same kind,
 * condition and number of bodies, each body of the same topology at every
 * depth (sg__snapshot_same_topology). What may differ is what
 * sg_exec_set_* changes inside a body: nodes' parameters. Graph form: 0. */
int sg__cond_same_shape(const sg__cond_node *a, const sg__cond_node *b);

/* "IF", "IF/ELSE", "WHILE", "SWITCH". */
const char *sg__cond_kind_name(const sg__cond_node *payload);

/* How messages name body `body` of conditional node `node` (#index):
 * "body 1 of IF/ELSE node 'name' (#3)", written into `buf`, returned. */
#define SG__COND_BODY_NAME_BYTES (SG__LABEL_BYTES + 48)
const char *sg__cond_body_name(const sg__node *node, uint32_t index, uint32_t body,
                               char buf[SG__COND_BODY_NAME_BYTES]);

/* The condition index a handle stands for in the top-level graph with
 * serial `root_serial` and `count` conditions (message naming `fn`). */
sg_status sg__cond_resolve(sg_cond cond, uint32_t root_serial, uint32_t count, const char *fn,
                           uint32_t *id);

/* Where sg_cond_set_host writes: the words of the executable whose host
 * node runs on this thread (a backend sets it around the callback, and
 * restores what was there). */
typedef struct sg__cond_words {
  unsigned *words;
  uint32_t count;
} sg__cond_words;
const sg__cond_words *sg__cond_words_enter(const sg__cond_words *words);
void sg__cond_words_leave(const sg__cond_words *previous);

#endif
