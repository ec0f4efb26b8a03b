/*
 * streamgraph/nccl.h - NCCL collectives and point-to-point calls as nodes of
 * a graph.
 *
 * An NCCL node runs one or more NCCL calls as one group (ncclGroupStart, the
 * calls, ncclGroupEnd) when its dependencies are done; the nodes after it
 * start once the calls have completed on the GPU. It is an ordinary node:
 * it takes dependencies, runs in streams mode and in graph mode (where its
 * calls are captured once into a child graph that each launch replays, as
 * NCCL supports), and its buffers can be changed between launches with
 * sg_exec_set_nccl.
 *
 * Communicators are the application's: it creates them (ncclCommInitRank
 * with a unique id it passes between processes, ncclCommInitAll for several
 * GPUs of one process), hands them to the nodes as `comm` (an ncclComm_t),
 * keeps them alive while executables use them, and destroys them. The
 * library never bootstraps ranks itself. Every rank of a communicator must
 * run the matching calls in the same order, as with NCCL directly. NCCL
 * nodes that share a communicator run in the order they were created: the
 * planner orders two that no path of the graph orders by an implied edge
 * (shown in the plan's DOT as "nccl order"), so every rank that creates
 * its NCCL nodes in the same order issues them in one order. A graph whose
 * edges order such nodes against creation order is refused at
 * sg_exec_create / sg_plan_create with SG_ERR_CYCLE naming both nodes.
 *
 * Devices. A call runs on its communicator's device (ncclCommCuDevice). The
 * node sits on its own device in the plan (sg_graph_set_device; by default
 * the executable's): calls whose communicator is on another device run on a
 * stream of that device, forked from the node's stream and joined back, so
 * one node can drive the ranks of several GPUs of this process, which NCCL
 * requires to be one group. Give a node with one communicator that
 * communicator's device to spare the hop.
 *
 * Buffers must be memory of the communicator's device (cudaMalloc,
 * sg_mem_alloc on that device, or managed memory). Like kernel arguments,
 * they are not tracked: they must outlive the executables that use them.
 *
 * NCCL is optional when the library is built: CMake looks for nccl.h and
 * libnccl in the CUDA toolkit and in the system's directories. Without it
 * the calls below still exist and check their arguments, sg_nccl_version
 * answers SG_ERR_UNSUPPORTED, and making an executable of a graph with an
 * NCCL node answers SG_ERR_UNSUPPORTED naming the node. The host backend
 * cannot run NCCL nodes (SG_ERR_UNSUPPORTED as well).
 *
 * Errors NCCL reports come back as SG_ERR_CUDA, the message naming the node,
 * the NCCL call and NCCL's error string.
 */
#ifndef STREAMGRAPH_NCCL_H
#define STREAMGRAPH_NCCL_H

#include <stddef.h>

#include "exec.h"
#include "graph.h"
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* At most this many calls in one node (one NCCL group). */
#define SG_MAX_NCCL_CALLS 64u

typedef enum sg_nccl_op {
  SG_NCCL_ALL_REDUCE = 1, /* recv = the reduction over all ranks of their send (count
                             elements); recv == send reduces in place */
  SG_NCCL_ALL_GATHER,     /* recv = every rank's send (count elements each), in rank order:
                             recv holds count x ranks elements */
  SG_NCCL_SEND,           /* send count elements to rank `peer` */
  SG_NCCL_RECV            /* receive count elements from rank `peer` into recv */
} sg_nccl_op;

typedef enum sg_nccl_type {
  SG_NCCL_INT8 = 0,
  SG_NCCL_UINT8,
  SG_NCCL_INT32,
  SG_NCCL_UINT32,
  SG_NCCL_INT64,
  SG_NCCL_UINT64,
  SG_NCCL_FLOAT16,
  SG_NCCL_FLOAT32,
  SG_NCCL_FLOAT64,
  SG_NCCL_BFLOAT16
} sg_nccl_type;

typedef enum sg_nccl_reduce {
  SG_NCCL_SUM = 0,
  SG_NCCL_PROD,
  SG_NCCL_MAX,
  SG_NCCL_MIN,
  SG_NCCL_AVG
} sg_nccl_reduce;

/* One NCCL call. */
typedef struct sg_nccl_call {
  sg_nccl_op op;
  void *comm;             /* an ncclComm_t the application created */
  const void *send;       /* ALL_REDUCE, ALL_GATHER, SEND: the input (NULL for RECV) */
  void *recv;             /* ALL_REDUCE, ALL_GATHER, RECV: the output (NULL for SEND) */
  size_t count;           /* elements, > 0: per rank for ALL_GATHER */
  sg_nccl_type type;
  sg_nccl_reduce reduce;  /* ALL_REDUCE only */
  int peer;               /* SEND, RECV: the other rank (>= 0) */
} sg_nccl_call;

typedef struct sg_nccl_desc {
  const sg_nccl_call *calls; /* call_count calls, copied; issued in this order in one group */
  unsigned call_count;       /* 1 .. SG_MAX_NCCL_CALLS */
  const char *name;
} sg_nccl_desc;

/* Adds an NCCL node. The calls are checked for what needs no NCCL (ops,
 * types, counts, pointers that fit the op); communicators, ranks and
 * buffers' devices are checked when an executable is made. */
SG_API sg_status sg_graph_add_nccl(sg_graph *graph, const sg_nccl_desc *desc,
                                   const sg_node *deps, size_t dep_count, sg_node *out);

/* Replaces an NCCL node's calls in the graph (executables already made are
 * not affected; see sg_exec_update). */
SG_API sg_status sg_graph_set_nccl(sg_graph *graph, sg_node node, const sg_nccl_desc *desc);

/* Replaces an NCCL node's calls for the launches that follow, like the
 * other sg_exec_set_* calls. The same number of calls on the same
 * communicators with the same ops: then only buffers, counts, types,
 * reductions and peers change, in streams mode at once and in graph mode by
 * capturing the calls again and swapping the child graph in place
 * (stats.in_place_updates; a swap the driver refuses rebuilds, and
 * stats.rebuilds says so). Anything else is SG_ERR_INVALID_ARGUMENT: use
 * sg_exec_update with an edited graph. */
SG_API sg_status sg_exec_set_nccl(sg_exec *exec, sg_node node, const sg_nccl_desc *desc);

/* The NCCL version the library runs with (NCCL_VERSION_CODE: 22809 for
 * 2.28.9), from ncclGetVersion. SG_ERR_UNSUPPORTED when the library was
 * built without NCCL. */
SG_API sg_status sg_nccl_version(int *version);

#ifdef __cplusplus
}
#endif
#endif
