/*
 * streamgraph.h - everything: include this one header.
 *
 * streamgraph schedules GPU work. Describe it once as a DAG of copy and kernel
 * nodes (graph.h); turn the graph into an executable (exec.h) that runs it on
 * several CUDA streams, as one CUDA Graph, or on host threads; inspect the
 * plan (plan.h); stage pageable copies through pinned memory (staging.h);
 * run it over a stream of batches (pipeline.h); compile kernels from source at
 * run time (module.h); run NCCL collectives as nodes (nccl.h). Nodes may sit
 * on several GPUs (sg_graph_set_device).
 */
#ifndef STREAMGRAPH_H
#define STREAMGRAPH_H

#include "streamgraph/version.h" /* generated: SG_VERSION, sg_version() */
#include "status.h"
#include "memory.h"
#include "graph.h"
#include "conditional.h"
#include "plan.h"
#include "staging.h"
#include "exec.h"
#include "pipeline.h"
#include "module.h"
#include "nccl.h"

#endif
