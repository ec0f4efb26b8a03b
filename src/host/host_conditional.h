/* Internal: conditional nodes on the host backend. A conditional node runs
 * on the host thread that reaches it in its stream, after its dependencies
 * (the condition's producer among them) have finished: it reads the
 * condition there and runs the chosen body on that thread, the body's nodes
 * one after another in a topological order of the body. Kernels bound to a
 * condition get an sg_cond_ref pointing at the executable's word for it;
 * host nodes set it with sg_cond_set_host. Launches of one executable run
 * one after another, so one word per condition serves them all. */
#ifndef SG_HOST_HOST_CONDITIONAL_H
#define SG_HOST_HOST_CONDITIONAL_H

#include <stddef.h>
#include <stdint.h>

#include "core/conditional.h"
#include "core/node.h"
#include "exec/backend.h"

typedef struct sg__host_conds sg__host_conds;

/* The conditions' words of an executable (*out stays NULL when the graph
 * has none). Messages start with args->fn. */
sg_status sg__host_conds_create(const sg__backend_args *args, sg__host_conds **out);
void sg__host_conds_free(sg__host_conds *conds);
/* A launch starts: conditions with SG_COND_ASSIGN_DEFAULT take their
 * default value (nothing runs). */
void sg__host_conds_start(sg__host_conds *conds);

/* Checks that every node of every body of conditional node `node` (on
 * device `on`, in an executable on `exec_device`) can run here
 * (sg__host_check_node), recursively; a body's node runs on `on` unless it
 * names its own device. */
sg_status sg__host_cond_check(const sg__node *node, uint32_t index, int on, int exec_device,
                              const char *fn);

/* Runs `node` (index `index` in its graph) as sg__host_run_node does, and
 * also conditional nodes, kernels bound to a condition and host callbacks
 * that set one. A failure's text goes to `message`, naming the bodies it
 * lies in. */
sg_status sg__host_cond_run(const sg__host_conds *conds, sg_exec *exec, const sg__node *node,
                            uint32_t index, char *message, size_t cap);

#endif
