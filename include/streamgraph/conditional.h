/*
 * streamgraph/conditional.h - decisions taken while a launch runs: IF (with
 * an optional ELSE), WHILE and SWITCH nodes, and the conditions they read.
 *
 * A condition is a 32-bit unsigned value that belongs to a top-level graph
 * (sg_graph_cond_create). Each executable made from the graph has its own
 * copy of every condition. At the start of each launch a condition created
 * with SG_COND_ASSIGN_DEFAULT takes its default value; one created without
 * it keeps the value the previous launch left (before it is first set: the
 * default on the host backend and in CUDA streams mode, no value CUDA
 * promises in graph mode; set such a condition before its first read).
 *
 * A conditional node (sg_graph_add_conditional) is one node of its graph: it
 * starts when its dependencies are done, and its successors start when it is
 * done. It owns one or more body graphs, which the library creates and hands
 * back; they are filled with the same sg_graph_add_* calls as any graph.
 * Nodes in a body may depend on each other (not on nodes outside it: the
 * conditional node's own dependencies order the body). A body reads and
 * writes the same memory as the graph around it; a body may hold
 * conditional nodes of its own. What the node does when it runs:
 *
 *   SG_COND_IF      body 0 runs once if the condition is not zero; with two
 *                   bodies, body 1 (the ELSE) runs once if it is zero.
 *   SG_COND_WHILE   body 0 runs again and again while the condition is not
 *                   zero, which is checked before each run (zero at the
 *                   start: the body does not run). Something in the body
 *                   must set it to zero, or the loop never ends.
 *   SG_COND_SWITCH  body n runs once when the condition equals n; none when
 *                   it is body_count or more.
 *
 * Setting a condition:
 *   - a kernel, from device code: one of its arguments has the type
 *     sg_cond_ref (streamgraph/cond_device.h), tied to a condition with
 *     sg_graph_kernel_bind_cond; the kernel calls sg_cond_set(ref, value).
 *     The kernel's host twin gets a working sg_cond_ref as well, so the same
 *     sg_cond_set line serves both.
 *   - a host node, from its callback: sg_cond_set_host(cond, value).
 *
 * How each backend evaluates the condition (docs/conditional.md):
 *   - the host backend reads it on the host thread that runs the
 *     conditional node, after the node's dependencies (and so the
 *     condition's producer) have finished, and runs the chosen body there,
 *     its nodes one after another in an order that respects the body's
 *     edges. No synchronisation beyond the one the node's dependencies make.
 *   - CUDA streams mode synchronises the conditional node's stream once per
 *     evaluation (once per IF/SWITCH, once per WHILE iteration plus one),
 *     reads the condition on the host and enqueues the chosen body: such a
 *     launch returns once its last conditional node is decided.
 *   - CUDA graph mode (both builds) makes CUDA conditional nodes: the
 *     device decides, with no host round trip. IF and WHILE need CUDA 12.4,
 *     IF/ELSE and SWITCH 12.8 (runtime and driver; checked at
 *     sg_exec_create). Bodies may hold kernels, copies and memsets of
 *     device or pinned memory, empty and conditional nodes, all on the
 *     conditional node's device; anything else is refused at sg_exec_create
 *     naming the node and the rule (streams mode applies the same rules).
 *   - sg_cond_set_host works on the host backend only.
 *
 * A kernel, copy, memset or host node inside a body (any depth) is changed
 * with sg_exec_set_kernel, _copy, _memset or _host and its handle from the
 * body graph, without a re-plan: the executable's bodies are copied on
 * write, so launches in flight keep theirs; graph mode sets the node in
 * place, or rebuilds when the driver refuses (docs/conditional.md).
 *
 * Validation (sg_graph_validate, sg_plan_create, sg_exec_create) checks each
 * body like a graph (no cycle) and these rules, each refusal naming the
 * conditional node, the body and the rule: a conditional node reads a
 * condition of the top-level graph it belongs to; a SWITCH has at most
 * SG_MAX_SWITCH_BODIES bodies; bodies nest at most SG_MAX_COND_DEPTH deep.
 */
#ifndef STREAMGRAPH_CONDITIONAL_H
#define STREAMGRAPH_CONDITIONAL_H

#include <stddef.h>
#include <stdint.h>

#include "graph.h"
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A condition handle: a small value, valid for the graph that made it, its
 * bodies, and the executables made from it. Zero-initialised, it is "no
 * condition". */
typedef struct sg_cond {
  uint64_t opaque;
} sg_cond;

/* Flags of sg_graph_cond_create. */
#define SG_COND_ASSIGN_DEFAULT 1u /* the default value is set again at each launch */

#define SG_MAX_SWITCH_BODIES 4096u /* bodies of one SWITCH node */
#define SG_MAX_COND_DEPTH 16u      /* conditional nodes inside bodies inside ... */
#define SG_MAX_CONDS 65536u        /* conditions of one graph */

typedef enum sg_cond_kind {
  SG_COND_IF = 0,  /* 1 body, or 2: the second runs when the condition is zero */
  SG_COND_WHILE,   /* 1 body */
  SG_COND_SWITCH   /* 1 to SG_MAX_SWITCH_BODIES bodies */
} sg_cond_kind;

/* Creates a condition on `graph`, which must be a top-level graph (not a
 * body: SG_ERR_INVALID_ARGUMENT). `flags` is 0 or SG_COND_ASSIGN_DEFAULT. */
SG_API sg_status sg_graph_cond_create(sg_graph *graph, unsigned default_value, unsigned flags,
                                      sg_cond *out);

typedef struct sg_cond_node_desc {
  sg_cond_kind kind;
  sg_cond cond;         /* a condition of the top-level graph the node goes into */
  unsigned body_count;  /* IF: 1 or 2; WHILE: 1; SWITCH: 1..SG_MAX_SWITCH_BODIES */
  const char *name;
} sg_cond_node_desc;

/* Adds a conditional node to `graph` (a top-level graph or a body) and
 * writes its body_count body graphs to bodies[0..body_count). The bodies
 * belong to the node: fill them with sg_graph_add_* calls; sg_graph_destroy
 * on a body is refused, and they go with the graph that holds the node.
 * Node handles of a body work with that body only. */
SG_API sg_status sg_graph_add_conditional_sized(sg_graph *graph, const sg_cond_node_desc *desc,
                                                size_t desc_size, const sg_node *deps,
                                                size_t dep_count, sg_node *out,
                                                sg_graph **bodies);
#ifndef SG_BUILDING_LIBRARY
static inline sg_status sg_graph_add_conditional(sg_graph *graph, const sg_cond_node_desc *desc,
                                                 const sg_node *deps, size_t dep_count,
                                                 sg_node *out, sg_graph **bodies) {
  return sg_graph_add_conditional_sized(graph, desc, sizeof *desc, deps, dep_count, out, bodies);
}
#else
sg_status sg_graph_add_conditional(sg_graph *graph, const sg_cond_node_desc *desc,
                                   const sg_node *deps, size_t dep_count, sg_node *out,
                                   sg_graph **bodies);
#endif

/* Argument `arg_index` of kernel node `kernel` (of `graph`, a top-level
 * graph or a body) is the sg_cond_ref of `cond`, a condition of the same
 * top-level graph: each executable puts its own reference there (whatever
 * value the argument had is replaced). The argument's size must be
 * sizeof(sg_cond_ref) (streamgraph/cond_device.h), 16 bytes. A later
 * sg_graph_set_kernel or sg_exec_set_kernel keeps the binding. One argument
 * per kernel: binding again moves it. */
SG_API sg_status sg_graph_kernel_bind_cond(sg_graph *graph, sg_node kernel, unsigned arg_index,
                                           sg_cond cond);

/* Geometry from the device: kernel node `kernel` (of `graph`, a top-level
 * graph or a body) runs the grid that an earlier node wrote to `words`,
 * three unsigned values (grid x, y, z) in memory the kernel's device reads
 * (device or pinned memory; host-backend memory on the host backend). The
 * kernel's declared grid is the bound: each dimension runs
 * min(words[d], grid[d]) blocks, none when a word is 0. Argument
 * `arg_index` has the type sg_grid_ref (streamgraph/grid_device.h, 24
 * bytes) and tells the kernel its live grid; the kernel skips the blocks
 * sg_grid_has_block refuses and uses sg_grid_live instead of gridDim.
 * Order the node after the words' writer with a dependency.
 *
 * Each mode applies it in its own way with the same result (bitwise, for a
 * kernel that follows the rule above):
 *   - CUDA graph mode (both builds) launches the bound, and the blocks past
 *     the live grid return at once: no host round trip, no rebuild.
 *   - CUDA streams mode synchronises the node's stream once per launch of
 *     the node (its waits cover its dependencies), reads the words and
 *     launches the live grid; the host backend reads them when the node
 *     runs. So a streams-mode launch with such a kernel returns only once
 *     the kernel's grid is known.
 * Refused: a node that is no kernel, an argument index past the kernel's
 * arguments, an argument whose size is not sizeof(sg_grid_ref), NULL or
 * misaligned words, words that run
 * past the end of their sg_mem_alloc block; at sg_exec_create, words the
 * backend cannot read (pageable memory on CUDA, CUDA memory on the host
 * backend). sg_graph_set_kernel and sg_exec_set_kernel keep the binding
 * (and refuse new arguments without an sg_grid_ref at its index). Binding
 * again moves it. */
SG_API sg_status sg_graph_kernel_bind_grid(sg_graph *graph, sg_node kernel, unsigned arg_index,
                                           const unsigned *words);

/* Sets `cond` from a host node's callback (on the thread running it), for
 * the launch that runs the callback. SG_ERR_INVALID_ARGUMENT when this
 * thread runs no host node of an executable that has the condition. */
SG_API sg_status sg_cond_set_host(sg_cond cond, unsigned value);

/* The condition's default value and flags, as created. */
SG_API sg_status sg_graph_cond_get(const sg_graph *graph, sg_cond cond, unsigned *default_value,
                                   unsigned *flags);

#ifdef __cplusplus
}
#endif
#endif
